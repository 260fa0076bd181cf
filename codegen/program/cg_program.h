/* cg_program.h - codegen floor 3 (codegen/program/), the driver's header:
 * everything below (floors 0-2), plus the generator's state (cg_gen) and
 * the functions of program/ that its files share, one section a file, the
 * bottom ones first. Not part of the public API (dy_codegen.h). See
 * codegen/README.md. */
#ifndef DY_CODEGEN_CG_PROGRAM_H
#define DY_CODEGEN_CG_PROGRAM_H

#include "cg_ops.h"

/* Where a var lives (storage.c). */
typedef enum { ST_NONE, ST_FEED, ST_WEIGHT, ST_FETCH, ST_ARENA, ST_STATE } cg_storage_kind;

typedef struct {
  cg_storage_kind kind;
  int root;          /* the var that owns the storage */
} cg_storage;

/* A constant operand packed at compile time for one or more kernels. */
typedef struct {
  int var;               /* the weight */
  dy_pack pack;
  char *name;            /* its array: w_<name>_p16, w_<name>_p12 */
} cg_packed_weight;

/* The generator: what the driver knows of the Program it writes. */
typedef struct {
  const dy_program *p;
  const dy_codegen_options *opt;
  /* every op of every block in execution order: a control op, then its
   * blocks' ops (depth first); per-op arrays below are indexed so (oi) */
  const dy_op **ops;
  int n_ops;
  int *slot;             /* per oi: dy_codegen_op_slot (scratch_offsets) */
  int *oi_of_slot;       /* per slot: its oi */
  dy_error *err;
  char *lower, *upper;   /* opt->name and its macro prefix (cg_macro_prefix) */
  char **param;          /* per var: NAME_run parameter (feeds, fetches) */
  char **param_in;       /* per feed index: parameter name */
  char **param_out;      /* per fetch index: parameter name */
  char **weight;         /* per var: w_ array name if emitted (for state:
                            its initial value) */
  char **soff;           /* per state var: NAME_STATE_<name>, its offset */
  int64_t *state_off;    /* per state var: byte offset in the state */
  int64_t state_bytes;   /* NAME_STATE_BYTES; 0: no state */
  /* a training step's dropout seeds (run-time values in the state, drawn by
   * the caller before each step as dy_program_reseed_dropout draws them) */
  int *seed_slot;        /* per oi: index of its seed, -1: the attribute */
  int64_t *seed_init;    /* per seed: its initial value (the attribute) */
  int n_seeds;           /* NAME_N_DROPOUT_SEEDS */
  int64_t seeds_off;     /* NAME_SEEDS_OFF: byte offset in the state */
  char **off;            /* per arena root var: NAME_OFF_<name>, its offset */
  char **scratch_name;   /* per op index with scratch: NAME_OFF_scratch_k<id> */
  bool *used;            /* per var: read or written by an op, or fetched */
  int *def;              /* per var: oi of the op writing it (a block
                          * param: its control op's) */
  cg_storage *st;           /* per var, for used vars */
  bool *kernel;          /* per op index: emits a kernel */
  bool *in_place;        /* per op index: writes over an input (no restrict) */
  bool *bits;            /* per var: an f32 weight with an infinity or NaN,
                            emitted as a union of its bit patterns (.u) read
                            as floats (.f) */
  bool *state;           /* per var: persistable and written in place by an
                            op (DY_OPF_INPLACE): lives in the caller's state */
  bool dynamic;          /* some used var's dims use the batch */
  uint64_t sym_mask;     /* the size symbols used vars' dims use (bit 0: batch) */
  int n_named;           /* the symbols other than the batch, by name: */
  int named[DY_MAX_SYMS]; /* their ids; NAME_run takes int64_t dim_<name> each */
  int64_t bounds[DY_MAX_SYMS]; /* each symbol's bound (dy_program_sym_bounds) */
  uint64_t rt_mask;      /* the named symbols a kernel sets at run time
                            (DY_OPF_SETS_SIZE: nonzero's count): not NAME_run
                            values but int64_t *dim_<name>_out it writes */
  bool uses_arena;       /* some storage is ST_ARENA */
  bool has_loop;         /* some op is a while: NAME_ERR_LOOP, NAME_MAX_ITERATIONS */
  int64_t max_iterations; /* NAME_MAX_ITERATIONS */
  int64_t weight_bytes;
  uint32_t *blob;        /* separate_weights: NAME_weights' words */
  int64_t n_blob, cap_blob;
  cg_packed_weight *packs;  /* n_packs of them, in order of first use */
  int n_packs;
  bool *unpacked_use;    /* per var: read as is by some kernel or copied out */
  int64_t *scratch;      /* per op index: scratch bytes (0: none) */
  int64_t *scratch_off;  /* per op index: its arena offset */
  int64_t arena_bytes;   /* NAME_ARENA_BYTES: the plan's, plus appended scratch */
  unsigned uses;         /* DY_USES_* of all kernels */
  dy_buf run_pool;       /* with threads: NAME_run around NAME_run_body */
} cg_gen;

/* ---- util.c ---- */

/* Has t a dynamic dim? Bytes of v at the size bounds (-1: overflow). */
bool cg_type_dynamic(const dy_type *t);
int64_t cg_var_bytes(const cg_gen *g, const dy_var *v);
/* Is sym set by a kernel at run time (g->rt_mask)? */
bool cg_sym_rt(const cg_gen *g, int sym);
/* "SEQ" for symbol seq (NAME_MAX_DIM_SEQ); ", seq 128" for each symbol. */
const char *cg_sym_upper(int sym, char *buf, size_t n);
/* The model's macro prefix: its name in upper case, DY_M_ before it where
 * that could collide with a C or POSIX header's name (R_OK for model r). */
const char *cg_macro_prefix(const char *name, char *buf, size_t n);
void cg_put_named_bounds(const cg_gen *g, dy_buf *out, const char *sep);
/* The name of op's kernel: k<id>_<op>_<shape> ("k7_add_Bx256"). */
void cg_kernel_name(const dy_program *p, const dy_op *op, char *buf, size_t n);
/* "head(arg, arg, ...)tail", the arguments wrapped at 80 columns under the
 * open parenthesis; the malloc'd argument lists these take. */
void cg_put_wrapped(dy_buf *out, const char *indent, const char *head, char **args, int n,
                    const char *tail);
void cg_free_args(char **args, int n);
bool cg_args_ok(char **args, int n);
char *cg_xstrdup(const char *s);
char *cg_xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The size arguments of these symbols: "batch", "dim_seq" (decl: typed),
 * appended to args[n..]; returns the new count. */
int cg_sym_args(const cg_gen *g, uint64_t mask, bool decl, char **args, int n);
const char *cg_basename_of(const char *path);
/* The opening of a generated file's comment: "NAME.<what> - generated by ..." */
void cg_put_banner(cg_gen *g, dy_buf *out, const char *what);
/* {2, -1, 8}: a shape, -1 for every dynamic dim. */
void cg_put_shape_list(dy_buf *out, const dy_type *t);
/* NAME_run's parameters into args; returns their number. */
int cg_run_params(cg_gen *g, char **args);

/* ---- names.c ---- */

bool cg_is_identifier(const char *s);
/* name as a C identifier after prefix (malloc'd, room for a suffix of up to
 * 24 chars), and made unique among taken[0..n) by _2, _3, ... */
char *cg_sanitize(const char *name, const char *prefix);
void cg_dedup(char *s, char *const *taken, int n);
/* NAME_run's parameters (feeds, fetches) and the weights' arrays. */
dy_status cg_make_names(cg_gen *g);

/* ---- storage.c ---- */

/* Where var v lives (checked against the arena); the C expression of its
 * buffer ("x", "w_fc_w", "(float *)(mem + NAME_OFF_h)"); do the storages
 * of a and b share bytes? */
dy_status cg_resolve(cg_gen *g, int v, cg_storage *out);
void cg_buffer_expr(cg_gen *g, int v, bool as_const, char *buf, size_t n);
bool cg_overlap(const cg_gen *g, int a, int b);

/* ---- analyse.c ---- */

/* g->ops in execution order from block b (each control op followed by its
 * blocks' ops); the checks and facts of the analysis. */
dy_status cg_order_ops(cg_gen *g, int b, int depth);
dy_status cg_analyse(cg_gen *g);

/* ---- plan.c ---- */

cg_packed_weight *cg_find_pack(const cg_gen *g, int var, const dy_pack *k);
dy_status cg_plan_packs_and_scratch(cg_gen *g);
dy_status cg_make_offset_names(cg_gen *g);

/* ---- state.c ---- */

/* The feed index of a training step's learning rate (-1: not one). */
int cg_train_lr_feed(const cg_gen *g);
int cg_num_state(const cg_gen *g);
void cg_emit_state_decls(cg_gen *g, dy_buf *out);
void cg_emit_state_defs(cg_gen *g, dy_buf *out);
void cg_emit_state_layout(cg_gen *g, dy_buf *out);

/* ---- table.c ---- */

/* The name of input i (or of output i, out) of op's kernel by its role
 * (dy_cg_op.roles): "x", "w", "bias", ...; "y" for an output; NULL for
 * the generic in<i>. buf holds a name made from role_prefix. */
const char *cg_operand_role(const dy_op *op, bool out, int i, char *buf, size_t n);

/* ---- header.c, weights.c, kernel.c, blocks.c, run.c, bind.c ---- */

void cg_emit_header(cg_gen *g, dy_buf *out);
dy_status cg_emit_weights(cg_gen *g, dy_buf *out);
int64_t cg_weight_bytes(const cg_gen *g);
dy_status cg_emit_kernel(cg_gen *g, int oi, dy_buf *out);
/* The calls of block b's ops at nesting depth (indent 2 + 2 * depth). */
void cg_emit_block(cg_gen *g, int b, int depth, dy_buf *out);
void cg_emit_run(cg_gen *g, dy_buf *out);
dy_status cg_emit_bind(cg_gen *g, dy_buf *out);
void cg_emit_tables(cg_gen *g, dy_buf *out);

/* ---- main_c.c ---- */

/* main.c for model opt->name: the command-line driver or the trainer. */
dy_status dy_codegen_main_c(const dy_program *p, const dy_codegen_options *opt,
                            dy_buf *out, dy_error *err);


#endif /* DY_CODEGEN_CG_PROGRAM_H */
