/* dy_ir.h - the intermediate representation of dy2stc.
 *
 * A Program is what PaddlePaddle calls a Program: a list of blocks of ops
 * (block 0 the global one; sub-blocks hold cond branches and while bodies:
 * program/blocks.c below) and a program-wide table of vars. A var has a
 * name, a dtype, a shape (-1 marks the dynamic dim, see below), and may be
 * persistable (a parameter or constant that carries its data). Feeds and
 * fetches name the program's inputs and outputs in order.
 *
 *   dy_program *p = dy_program_new();
 *   int x = dy_program_add_var(p, "x", DY_F32, 2, (int64_t[]){-1, 10});
 *   dy_program_add_feed(p, x);
 *   ...
 *   dy_op *op = dy_program_append_op(p, 0, DY_OP_RELU, loc);
 *   dy_op_set_inputs(p, op, 1, (int[]){x});  dy_op_set_outputs(...);
 *   dy_program_free(p);
 *
 * Dynamic dims. A negative dim is a symbolic size, an expression over named
 * size symbols (core/dims.c below): -1 is "the batch", a run-time size that
 * every -1 in the Program shares (Paddle's InputSpec None on dim 0); others
 * are "seq", "4*batch*seq", "2*seq+1". Shape inference keeps them exact and
 * rejects a size it cannot express with a clear error. The code generator
 * turns each symbol into a run-time argument (`batch`, `dim_seq`), bounded
 * by --max-batch and --max-dim.
 *
 * Ownership. A dy_program owns all it reaches (blocks, vars, ops, attributes,
 * names, parameter data) in one arena, released by dy_program_free (no IR
 * node is freed alone); accessors' pointers are borrowed, valid until then.
 *
 * Errors. Fallible functions return dy_status and fill a caller-owned
 * dy_error (message, op id, source location); nothing exits or aborts.
 *
 * Sections below name the file that defines them, as chibicc.h does. The
 * files sit in floors, each calling only those below it (ir/README.md):
 * core/ (status, files, dims, the op table, types), infer/ (shape and
 * dtype inference), program/ (the Program, blocks, verifier, text, files),
 * autodiff/ (dy_grad.h) and train/ (dy_train.h).
 */
#ifndef DY_IR_H
#define DY_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dy_checked.h"

#define DY_MAX_DIMS 8
#define DY_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------ */
/* core/status.c: status codes and errors                             */
/* ------------------------------------------------------------------ */

typedef enum {
  DY_OK = 0,
  DY_STATUS_INVALID_ARGUMENT,  /* bad attribute, axis out of range, ...     */
  DY_STATUS_SHAPE_MISMATCH,    /* shapes do not agree                        */
  DY_STATUS_DTYPE_MISMATCH,
  DY_STATUS_UNSUPPORTED,       /* valid request we do not implement          */
  DY_STATUS_INVALID_IR,        /* the verifier found a broken invariant      */
  DY_STATUS_IO,                /* a file could not be read or written        */
  DY_STATUS_FORMAT,            /* a file is malformed, truncated, corrupted  */
  DY_STATUS_VERSION,           /* a file is from a newer, unknown version    */
  DY_STATUS_OUT_OF_MEMORY,
  DY_STATUS_SYMBOLIC,          /* a symbolic tensor's value was read         */
  DY_STATUS_LIMIT,             /* a size bound (--max-batch, --max-ram)      */
  DY_STATUS_INTERNAL,
} dy_status;

/* Where an op came from: the file:line of the eager call that recorded it.
 * file is borrowed (a string literal from __FILE__ or program-owned). */
typedef struct {
  const char *file;
  int line;
} dy_srcloc;

#define DY_HERE ((dy_srcloc){__FILE__, __LINE__})

/* A caller-owned error report. Zero-initialise it (dy_error err = {0}). */
typedef struct {
  dy_status status;
  int op_id;            /* id of the op at fault, or -1 */
  dy_srcloc loc;        /* its source location, file NULL if unknown */
  char file_buf[256];   /* loc.file points here once the error is set */
  char msg[512];
} dy_error;

/* Fill err (if non-NULL) and return status. */
dy_status dy_error_set(dy_error *err, dy_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, recording the op and its source location (op may be NULL). */
struct dy_op;
dy_status dy_error_at(dy_error *err, const struct dy_op *op, dy_status status,
                      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prefix an existing message: "what: <old message>". */
dy_status dy_error_prefix(dy_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One line: "file:line: message" when a location is known, else message. */
void dy_error_format(const dy_error *err, char *buf, size_t n);
const char *dy_status_name(dy_status s);

/* Progress of long work, for a caller that shows it (the CLI's line on a
 * terminal, the Python package's callback); library code never prints.
 * phase names the step ("import", "pass:fold", "plan", "codegen", "cc",
 * "calibrate", "epoch 2/5"); done of total units of it (total 0: one
 * step, now starting). Options structs carry one with its ctx (NULL:
 * nobody listens). */
typedef void (*dy_progress_fn)(void *ctx, const char *phase, int64_t done, int64_t total);

/* ------------------------------------------------------------------ */
/* core/dtypes.c: the dtype table (dtypes.def)                        */
/* ------------------------------------------------------------------ */

/* DY_F32, DY_I64, DY_BOOL, DY_I8, DY_U8, DY_I32: one line of dtypes.def
 * each, in its order (the values 0..5 files and attributes store). */
typedef enum {
#define DY_DTYPE(NAME, name, ctype, kind, npy, lo, hi) DY_##NAME,
#include "dtypes.def"
#undef DY_DTYPE
  DY_DTYPE_COUNT
} dy_dtype;

/* For an unknown t: "?", 0, "void", NULL. */
const char *dy_dtype_name(dy_dtype t);       /* "f32", "i64", "bool", "i8", "u8", "i32" */
size_t dy_dtype_size(dy_dtype t);            /* bytes per element    */
bool dy_dtype_from_name(const char *s, dy_dtype *out);
const char *dy_dtype_ctype(dy_dtype t);      /* "float", "int64_t", "uint8_t" (bool), ... */
const char *dy_dtype_npy(dy_dtype t);        /* the .npy descr: "<f4", "|b1", "<i4", ... */
bool dy_dtype_from_npy(const char *descr, dy_dtype *out);
/* An integer dtype's range (i64, i32, i8, u8); false for f32 and bool. */
bool dy_dtype_int_range(dy_dtype t, int64_t *lo, int64_t *hi);

/* Element i of an array of dtype t (data holds at least i + 1 elements),
 * read or written as a double or an int64, or printed. Reading a float as
 * an int64 and writing a double into an integer truncate toward zero and
 * saturate to the range, NaN giving 0 (as the cast op); writing an int64
 * into a narrower integer wraps (two's complement, as the cast op); a bool
 * reads as its byte and is written as v != 0; a double beyond f32's range
 * is written as an infinity. An unknown t reads as 0 and writes nothing. */
double dy_dtype_get_f64(dy_dtype t, const void *data, int64_t i);
int64_t dy_dtype_get_i64(dy_dtype t, const void *data, int64_t i);
void dy_dtype_set_f64(dy_dtype t, void *data, int64_t i, double v);
void dy_dtype_set_i64(dy_dtype t, void *data, int64_t i, int64_t v);
/* Element i as text into buf (n bytes; 32 hold any); returns buf. An
 * integer or bool in decimal (signed by its dtype); an f32 as "%.*g" with
 * digits, or with digits 0 in dy_float_str's exact form (the text IR's). */
char *dy_dtype_format(char *buf, size_t n, dy_dtype t, const void *data, int64_t i,
                      int digits);
/* The shortest "%g" form of f that reads back (strtod) as exactly f, with
 * ".0" added when it would read as an integer (so it always holds a '.',
 * an 'e', "inf" or "nan"); returns buf (32 bytes hold any). */
char *dy_float_str(double f, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* core/types.c: value types (a dtype and a shape)                    */
/* ------------------------------------------------------------------ */

/* A value type: dtype and shape. shape[i] >= 0 is a static size; a
 * negative dim is a symbolic dim expression (core/dims.c below): -1 is the
 * dynamic batch. */
typedef struct {
  dy_dtype dtype;
  int rank;
  int64_t shape[DY_MAX_DIMS];
} dy_type;

/* Number of elements, or -1 if any dim is dynamic. Sizes are checked where
 * types are made (dy_type_check: inference, loaders, the parser); on a
 * type that was not, a count over DY_MAX_NUMEL (dy_checked.h) saturates at
 * DY_MAX_NUMEL + 1, which every size check rejects, and never wraps. */
int64_t dy_type_numel(const dy_type *t);
/* Number of elements with every dynamic dim set to batch (saturating as
 * dy_type_numel). */
int64_t dy_type_numel_at(const dy_type *t, int64_t batch);
/* Bytes of t with every dynamic dim set to batch (>= 1): false when a dim
 * is below -1 or the size exceeds DY_MAX_TENSOR_BYTES. */
bool dy_type_bytes_at(const dy_type *t, int64_t batch, int64_t *out);
/* DY_OK when t is well formed (rank in [0, DY_MAX_DIMS], dims >= -1, a
 * known dtype) and its static part (the batch counted as 1) fits in
 * DY_MAX_TENSOR_BYTES; else an error "<op>: <what> f32[...] ..." at op's
 * line (op may be NULL: then what alone names the tensor). */
dy_status dy_type_check(const dy_type *t, const struct dy_op *op, const char *what,
                        dy_error *err);
bool dy_type_is_static(const dy_type *t);
bool dy_type_equal(const dy_type *a, const dy_type *b);
/* "f32[-1,10]" into buf; returns buf. */
char *dy_type_str(const dy_type *t, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* core/dims.c: size symbols and symbolic dim expressions             */
/* ------------------------------------------------------------------ */

/* A negative dim is the id of an interned expression over named size
 * symbols: c + k1*s11*s12*... + k2*s21*... (coefficients k > 0, at most
 * DY_DIM_MAX_TERMS terms of DY_DIM_MAX_FACTORS symbols). -1 is `batch`.
 * Expressions are in normal form, so two dims are equal iff their ids are.
 * The table is process-wide and only grows (ids stay valid). Symbols are
 * interned by name; "batch" is symbol 0. The operations return false when
 * the result is not expressible (negative coefficient, too many terms,
 * overflow, inexact division); callers report the op and its line. */
#define DY_DIM_BATCH ((int64_t)-1)
#define DY_DIM_NONE INT64_MIN       /* "no dim": a failed dy_dim_sym    */
#define DY_DIM_MAX_TERMS 4
#define DY_DIM_MAX_FACTORS 4
#define DY_MAX_SYMS 64              /* distinct symbol names per process */
#define DY_SYM_NAME_MAX 32

typedef struct {
  int64_t coef;                     /* > 0                              */
  int n;                            /* number of factors, 0..MAX_FACTORS */
  int sym[DY_DIM_MAX_FACTORS];      /* symbol ids, sorted by name       */
} dy_dim_term;

typedef struct {
  int64_t c;                        /* the constant                     */
  int n_terms;
  dy_dim_term t[DY_DIM_MAX_TERMS];
} dy_dim_expr;

/* The symbol named name (interned; [A-Za-z_][A-Za-z0-9_]*, < 32 chars),
 * or -1 for a bad name or a full table. */
int dy_sym_id(const char *name);
/* Its name (borrowed, valid for the process), "?" if unknown. */
const char *dy_sym_name(int sym);
/* Number of symbols interned so far (at least 1: batch). */
int dy_sym_count(void);
/* The dim that is symbol name alone (-1 for "batch"), or DY_DIM_NONE. */
int64_t dy_dim_sym(const char *name);
/* The symbol a dim is exactly (coefficient 1, no constant), or -1. */
int dy_dim_single_sym(int64_t d);
/* A dim's expression (a static dim is a constant); false for an unknown id. */
bool dy_dim_expr_of(int64_t d, dy_dim_expr *e);
/* Normalise and intern e (a constant expression gives its value). */
bool dy_dim_from_expr(const dy_dim_expr *e, int64_t *out);
bool dy_dim_add(int64_t a, int64_t b, int64_t *out);
bool dy_dim_sub(int64_t a, int64_t b, int64_t *out);
/* a + k for a constant k (negative allowed while the result stays >= 0
 * for a static a). */
bool dy_dim_add_const(int64_t a, int64_t k, int64_t *out);
bool dy_dim_mul(int64_t a, int64_t b, int64_t *out);
/* a / b when exact: by a constant or monomial dividing every term, or a
 * sum that a is a constant multiple of. */
bool dy_dim_div(int64_t a, int64_t b, int64_t *out);
/* The dim's value with symbol s at vals[s] (DY_MAX_SYMS entries, -1 =
 * unknown: false); false on overflow. */
bool dy_dim_eval(int64_t d, const int64_t *vals, int64_t *out);
bool dy_dim_has_sym(int64_t d, int sym);
/* d with symbol sym replaced by the constant value. */
bool dy_dim_substitute(int64_t d, int sym, int64_t value, int64_t *out);
/* Text: "10", "-1" (the batch), "2*batch*seq+1"; dy_dim_name spells the
 * batch "batch" too. Both return buf. */
char *dy_dim_str(int64_t d, char *buf, size_t n);
char *dy_dim_name(int64_t d, char *buf, size_t n);
/* Parse dy_dim_str's form (s[0..len)); false on bad text. */
bool dy_dim_parse(const char *s, size_t len, int64_t *out);
/* The element count at symbol values vals; false on overflow/unknown. */
bool dy_type_numel_eval(const dy_type *t, const int64_t *vals, int64_t *out);
/* The element count as a dim expression (product of the dims). */
bool dy_type_numel_dim(const dy_type *t, int64_t *out);

/* ------------------------------------------------------------------ */
/* core/ops.c: the op table (built from ops.def)                      */
/* ------------------------------------------------------------------ */

enum {
  DY_OPF_ELEMENTWISE = 1 << 0,  /* output[i] depends on inputs[i] only   */
  DY_OPF_UNARY       = 1 << 1,
  DY_OPF_BINARY      = 1 << 2,  /* two inputs, numpy broadcasting        */
  DY_OPF_COMMUTATIVE = 1 << 3,
  DY_OPF_BLAS        = 1 << 4,  /* GEMM-shaped                           */
  DY_OPF_VIEW        = 1 << 5,  /* output is the input's data reshaped   */
  DY_OPF_CREATE      = 1 << 6,  /* no inputs; makes a tensor from attrs  */
  DY_OPF_CAN_FAIL    = 1 << 7,  /* may fail on bad data (an index); C kernel returns int */
  DY_OPF_FUSED       = 1 << 8,  /* made by a fusion pass, not by users   */
  DY_OPF_NODIFF      = 1 << 9,  /* no gradient (integer/bool results,
                                   comparisons, creation): dy_grad.h     */
  DY_OPF_INPLACE     = 1 << 10, /* updates state in place: its outputs are
                                   its first n_out inputs, persistable vars
                                   (optimizer steps, running statistics);
                                   an op with effects, never removed     */
  DY_OPF_SETS_SIZE   = 1 << 11, /* the kernel sets output 0's size symbol
                                   (attribute size_sym; nonzero, nms)    */
};

typedef enum {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) DY_OP_##NAME,
#include "ops.def"
#undef DY_OP
  DY_OP_COUNT
} dy_op_kind;

struct dy_attr_schema;

typedef struct {
  const char *name;
  int n_in;            /* -1: variadic */
  int n_out;
  unsigned flags;
  const struct dy_attr_schema *attrs;  /* the attribute schema, see below */
  int n_attrs;
} dy_op_info;

/* k must be a valid kind (< DY_OP_COUNT). */
const dy_op_info *dy_op_info_of(dy_op_kind k);
const char *dy_op_name(dy_op_kind k);
/* Look an op up by name; false if unknown. */
bool dy_op_kind_from_name(const char *name, dy_op_kind *out);

/* ------------------------------------------------------------------ */
/* program/program.c: Program, Block, Var, Op, attributes             */
/* ------------------------------------------------------------------ */

typedef enum {
  DY_ATTR_INT = 0,
  DY_ATTR_FLOAT = 1,
  DY_ATTR_INTS = 2,
  DY_ATTR_FLOATS = 3,
  DY_ATTR_STRING = 4,
} dy_attr_kind;

typedef struct {
  const char *name;
  dy_attr_kind kind;
  int64_t i;
  double f;
  int n;                /* length of ints / floats */
  const int64_t *ints;
  const float *floats;
  const char *s;
} dy_attr;

/* Stack-friendly attribute literals, for eager calls and tests. */
#define DY_ATTR_I(nm, v) ((dy_attr){.name = (nm), .kind = DY_ATTR_INT, .i = (v)})
#define DY_ATTR_F(nm, v) ((dy_attr){.name = (nm), .kind = DY_ATTR_FLOAT, .f = (v)})
#define DY_ATTR_IS(nm, arr, len) \
  ((dy_attr){.name = (nm), .kind = DY_ATTR_INTS, .n = (len), .ints = (arr)})
#define DY_ATTR_FS(nm, arr, len) \
  ((dy_attr){.name = (nm), .kind = DY_ATTR_FLOATS, .n = (len), .floats = (arr)})
#define DY_ATTR_S(nm, str) ((dy_attr){.name = (nm), .kind = DY_ATTR_STRING, .s = (str)})

/* One op a fused (or merged) op was made from: its kind and location. */
typedef struct {
  dy_op_kind kind;
  dy_srcloc loc;
} dy_op_src;

/* An op. Inside a Program, inputs/outputs are var ids; an eager call builds
 * a dy_op on the stack (ids unused) so that inference and kernels read
 * attributes the same way in both worlds. */
typedef struct dy_op {
  int id;               /* unique within the program, in creation order */
  dy_op_kind kind;
  int block;
  int n_inputs, n_outputs;
  int *inputs;          /* var ids */
  int *outputs;         /* var ids */
  int n_attrs;
  dy_attr *attrs;
  dy_srcloc loc;
  /* An op made from others (fusion, CSE) lists every op it stands for, in
   * program order; loc stays the one a message names. n_srcs is 0 for an op
   * made from nothing else (its sources are just itself). */
  int n_srcs;
  dy_op_src *srcs;      /* arena-owned */
} dy_op;

typedef struct {
  int id;               /* index in dy_program.vars */
  const char *name;
  dy_type type;
  bool persistable;     /* a parameter or constant: carries data */
  bool trainable;       /* a parameter training updates (persistable f32;
                           dy_program_append_backward differentiates it) */
  void *data;           /* persistable only; dy_type_numel * dtype size bytes */
  int block;            /* block that declares it */
  int feed_index;       /* position among feeds, or -1 */
  int fetch_index;      /* position among fetches, or -1 */
  int64_t mem_offset;   /* arena offset set by the memory plan, -1 if none */
  int alias_of;         /* var whose storage this one shares, or -1 */
} dy_var;

typedef struct {
  int idx;
  int parent;           /* -1 for the global block, else a lower index */
  int n_ops, cap_ops;
  dy_op **ops;          /* in execution order */
  /* A sub-block's signature (MLIR block arguments / yield; block 0 has
   * neither): params are vars declared in the block and bound on entry
   * (a while's carried values), results the vars it yields. */
  int n_params, n_results;
  int *params, *results; /* var ids, arena-owned */
} dy_block;

typedef struct dy_arena dy_arena;

/* A size symbol a Program declares (program/program.c): a named dynamic dim with an
 * upper bound (what the memory plan sizes for and the generated code
 * checks) and optionally a value pinned at compile time. */
typedef struct {
  int sym;              /* dy_sym_id of name                             */
  const char *name;     /* borrowed from the symbol table                */
  int64_t max;          /* upper bound; 0: not given (the compiler's default) */
  int64_t value;        /* pinned value, or -1                           */
} dy_sym_decl;

#define DY_MAX_FEEDS 64

/* The most inputs of one op (concat): the operand arrays' length. A longer
 * ONNX Concat becomes a tree of concats (ox_concat_many). */
#define DY_MAX_OP_INPUTS 64

typedef struct {
  dy_arena *arena;
  int n_vars, cap_vars;
  dy_var **vars;
  int n_blocks, cap_blocks;
  dy_block **blocks;
  int n_feeds, n_fetches;
  int feeds[DY_MAX_FEEDS];     /* var ids, in input order */
  int fetches[DY_MAX_FEEDS];   /* var ids, in output order */
  int next_op_id;
  int n_syms;                  /* size symbols, in declaration order */
  dy_sym_decl syms[DY_MAX_SYMS];
} dy_program;

/* Returns a new empty program with block 0; caller frees with
 * dy_program_free. NULL only when out of memory. */
dy_program *dy_program_new(void);
void dy_program_free(dy_program *p);

/* Allocate from the program's arena (zeroed; never NULL unless OOM). */
void *dy_program_alloc(dy_program *p, size_t n);
char *dy_program_strdup(dy_program *p, const char *s);

/* Adds a block under parent; returns its index, or -1 on OOM. */
int dy_program_add_block(dy_program *p, int parent);
/* Adds a var; returns its id, or -1 if the name exists or memory ran out.
 * The name is copied. */
int dy_program_add_var(dy_program *p, const char *name, const dy_type *type);
/* Var lookup by name: id or -1. */
int dy_program_find_var(const dy_program *p, const char *name);
/* A name not yet used: "<stem>_<n>" with the smallest free n. Arena-owned. */
const char *dy_program_fresh_name(dy_program *p, const char *stem);
/* Copy nbytes of data into a persistable var (marks it persistable). */
dy_status dy_program_set_data(dy_program *p, int var, const void *data,
                              size_t nbytes, dy_error *err);
dy_status dy_program_add_feed(dy_program *p, int var, dy_error *err);
dy_status dy_program_add_fetch(dy_program *p, int var, dy_error *err);

/* ---- size symbols (see core/dims.c for dim expressions) ----
 * Declare symbol name with upper bound max (> 0), or without one (max 0:
 * the compiler's --max-dim / default applies). Declaring again keeps the
 * entry and sets the bound when max > 0. A Program need not declare batch. */
dy_status dy_program_declare_sym(dy_program *p, const char *name, int64_t max,
                                 dy_error *err);
/* The declaration of symbol sym (a dy_sym_id), or NULL. */
const dy_sym_decl *dy_program_sym(const dy_program *p, int sym);
/* Declare (without a bound) every symbol but the batch that a var's type
 * uses, in first-use order (the batch need not be declared: its bound is
 * DY_DEFAULT_MAX_BATCH until dy_program_bound_sym sets one). */
dy_status dy_program_declare_used_syms(dy_program *p, dy_error *err);
/* Pin feed `input` to the static shape dims[0..rank): each of its dims
 * that is one symbol pins that symbol (dy_program_pin_sym); a static dim
 * must equal its value; any other expression is an error. */
dy_status dy_program_pin_input(dy_program *p, const char *input, const int64_t *dims,
                               int rank, dy_error *err);
/* The bound of the batch when a Program declares none (what the memory
 * plan sizes for and NAME_MAX_BATCH says). */
#define DY_DEFAULT_MAX_BATCH 64
/* Symbol sym's largest value in p: its pinned value, else its declared
 * bound, else the batch's bound; the batch's is its declared bound, else
 * DY_DEFAULT_MAX_BATCH. The one source of every bound the memory plan and
 * the generated code use. (A pinned batch keeps its bound: the
 * NAME_MAX_BATCH of the generated header.) */
int64_t dy_program_sym_bound(const dy_program *p, int sym);
/* Each size symbol's dy_program_sym_bound, into vals[DY_MAX_SYMS]. (Dims
 * grow with every symbol, so a type's size at these values is its
 * largest.) */
void dy_program_sym_bounds(const dy_program *p, int64_t *vals);
/* The largest value of dim d (static, or an expression) in p, its symbols
 * at their bounds; -1 when that overflows. */
int64_t dy_program_dim_bound(const dy_program *p, int64_t d);
/* Bound symbol name (the batch included) by max (>= 1): the --max-batch
 * and --max-dim of the driver and the CLI, before the passes run. An
 * error when the Program has no such symbol (the batch it always has) or
 * pins it above max. */
dy_status dy_program_bound_sym(dy_program *p, const char *name, int64_t max, dy_error *err);
/* A declaration as a model file or the text IR spells it: symbol name
 * with bound max (0: none) and pinned value (-1: none). An error when the
 * value is below 1 or above the bound. */
dy_status dy_program_load_sym(dy_program *p, const char *name, int64_t max, int64_t value,
                              dy_error *err);
/* Bit s set for each symbol s a type's dims use (DY_MAX_SYMS <= 64). */
uint64_t dy_type_sym_mask(const dy_type *t);
/* Pin symbol name to value (> 0): every var type has it replaced by the
 * constant, so the Program is static in it; the declaration keeps it as
 * its value. An error when a type then becomes inexpressible. */
dy_status dy_program_pin_sym(dy_program *p, const char *name, int64_t value,
                             dy_error *err);

/* Appends an op to a block. Inputs, outputs and attributes are copied. */
dy_op *dy_program_append_op(dy_program *p, int block, dy_op_kind kind,
                            const int *inputs, int n_inputs,
                            const int *outputs, int n_outputs,
                            const dy_attr *attrs, int n_attrs, dy_srcloc loc);
/* Replace op's attributes by attrs[0 .. n), copied into p's arena (they may
 * point into the op's own, e.g. a dy_<name>_attrs_get changed and written
 * back with dy_<name>_attrs_put). false only on OOM. */
bool dy_op_set_attrs(dy_program *p, dy_op *op, const dy_attr *attrs, int n);
/* Record that op `to` stands for the ops in `from` (a fusion, or CSE
 * merging equal ops): to->srcs becomes their sources (each one's srcs, or
 * its own kind and loc), in op-id order, without repeats. `to` may be one
 * of `from` (at most 64 ops); from's ops may be removed afterwards. false
 * only on OOM. */
bool dy_op_set_srcs(dy_program *p, dy_op *to, const dy_op *const *from, int n);
/* Remove op at index i of a block (passes). The op's memory stays in the
 * arena. */
void dy_block_remove_op(dy_block *b, int i);
/* Insert an op (made by dy_program_append_op, which put it last) at index
 * i of its block instead. */
void dy_block_move_last_to(dy_block *b, int i);

/* ---- use/def queries and rewrites, for passes ---- */

/* The op writing var (and its block and index there), or NULL. */
dy_op *dy_program_def(const dy_program *p, int var, int *block, int *index);
/* The one op reading var when var has exactly one reader and is neither
 * fetched nor yielded by a block (a fusion candidate), else NULL. A var
 * read inside a sub-block is also its control op's input (a capture), so
 * it never has a sole user across a block boundary. */
dy_op *dy_program_sole_user(const dy_program *p, int var);
/* Make every op that reads `from` read `to` instead. */
void dy_program_replace_uses(dy_program *p, int from, int to);
/* Let `to` stand for `from` everywhere `from` is read, including as a
 * fetch. A fetched `from` keeps its name (outputs are named): `to` takes
 * it over, which needs `to` to be an op's output that is not itself a feed,
 * persistable or fetched; otherwise nothing changes and false is returned. */
bool dy_program_forward_var(dy_program *p, int from, int to);
/* Drop vars that no op, feed, fetch or block signature refers to, and
 * renumber the rest (ids stay in declaration order); drop sub-blocks no op
 * owns any more (their ops with them) and renumber the rest, rewriting the
 * control ops' block attributes. */
void dy_program_compact(dy_program *p);

static inline bool dy_op_has(const dy_op *op, unsigned flag) {
  return (dy_op_info_of(op->kind)->flags & flag) != 0;
}
/* Total number of ops in all blocks. */
int dy_program_count_ops(const dy_program *p);
/* A training Program: one with an in-place op (DY_OPF_INPLACE: optimizer
 * updates, running statistics). Its persistable vars change from run to
 * run, so passes must not treat its parameters as constants. */
bool dy_program_is_training(const dy_program *p);
/* The in-place op that updates var, or NULL (a var updated in
 * place is state, not a constant, in a training Program). */
const dy_op *dy_program_in_place_writer(const dy_program *p, int var);

/* ---- the block tree (sub-blocks: program/blocks.c below) ---- */
/* The sub-blocks an op owns, in attribute order (cond: then, else; while:
 * cond, body) into out[2]; returns how many (0 for other ops). */
int dy_op_sub_blocks(const dy_op *op, int out[2]);
/* The op owning block b (b > 0), or NULL; its block and index. */
dy_op *dy_block_owner(const dy_program *p, int b, int *block, int *index);
/* True if block b is a or lies inside a. */
bool dy_block_within(const dy_program *p, int b, int a);

/* ------------------------------------------------------------------ */
/* core/ops.c: attributes by name and typed, from the op table        */
/* ------------------------------------------------------------------ */

/* Generic attribute lookup by name, for code that walks attributes (the
 * printer, the serializer, CSE) or names them at run time (the emitters'
 * float parameters); everything else reads the typed accessors below.
 * dy_op_find_attr gives the op's own attribute or NULL. dy_op_attr_float
 * falls back on the op table's default and fills err naming the op and
 * attribute when it is missing (and required) or not a float. */
const dy_attr *dy_op_find_attr(const dy_op *op, const char *name);
dy_status dy_op_attr_float(const dy_op *op, const char *name, double *out,
                           dy_error *err);

/* Each op's attribute list in ops.def (DY_A(name, kind, default) and
 * DY_R(name, kind) entries) generates three things, so a schema, its
 * defaults and its C types are written once:
 *
 *  - the schema, pre-parsed: dy_op_info_of(k)->attrs[0 .. n_attrs), read by
 *    the verifier (invariant 4), the text parser and the ONNX frontend;
 *  - a typed struct per op, dy_<name>_attrs: for each attribute in schema
 *    order a field of its name, int64_t (i), double (f), const char * (s),
 *    or for lists a pointer and a count `n_<name>` (is: const int64_t *,
 *    fs: const float *); plus `given`, bit i set when the op carries schema
 *    attribute i (else the default was used). Ops without attributes get
 *    a struct holding only `given`;
 *  - two accessors per op:
 *
 *      dy_status dy_conv2d_attrs_of(const dy_op *op, dy_conv2d_attrs *out,
 *                                   dy_error *err);
 *      dy_conv2d_attrs dy_conv2d_attrs_get(const dy_op *op);
 *
 * The checked form (_of) fills every field: an absent attribute takes the
 * table's default; an absent required one (DY_R), or one of the wrong kind,
 * is an error naming op and attribute (the field is then zero or the
 * default). Inference uses it, so every op that passed dy_infer (which
 * the verifier, eager calls, the tracer and the executor all run) has
 * well-kinded attributes. The returning form (_get) is for code that only
 * sees such ops (kernels, emitters, passes on verified programs): it cannot
 * fail there, and where it would it gives the defaults. Arrays are
 * borrowed from the op (or the table's static defaults).
 *
 * An accessor reads by name with its own op's schema, so it also reads an
 * op that extends that schema: dy_conv2d_attrs_of works on fused_conv2d and
 * conv2d_transpose ops (their first four attributes are conv2d's). */
typedef struct dy_attr_schema {
  const char *name;
  dy_attr_kind kind;
  bool required;       /* DY_R: no default                              */
  dy_attr dflt;        /* DY_A: the default (name, kind and value)      */
} dy_attr_schema;

/* The schema entry of attribute name of op kind k, or NULL. */
const dy_attr_schema *dy_attr_schema_find(dy_op_kind k, const char *name);
/* "int", "float", "ints", "floats", "string". */
const char *dy_attr_kind_name(dy_attr_kind kind);

#define DY_ATTR_FIELD_I(nm) int64_t nm;
#define DY_ATTR_FIELD_F(nm) double nm;
#define DY_ATTR_FIELD_S(nm) const char *nm;
#define DY_ATTR_FIELD_IS(nm) const int64_t *nm; int n_##nm;
#define DY_ATTR_FIELD_FS(nm) const float *nm; int n_##nm;
#define DY_A(nm, kind, dflt) DY_ATTR_FIELD_##kind(nm)
#define DY_R(nm, kind) DY_ATTR_FIELD_##kind(nm)
#define DY_OP(NAME, name, n_in, n_out, flags, attrs)                         \
  typedef struct {                                                          \
    unsigned given;                                                         \
    attrs                                                                   \
  } dy_##name##_attrs;                                                      \
  dy_status dy_##name##_attrs_of(const dy_op *op, dy_##name##_attrs *out,  \
                                 dy_error *err);                            \
  dy_##name##_attrs dy_##name##_attrs_get(const dy_op *op);
#include "ops.def"
#undef DY_OP
#undef DY_A
#undef DY_R

/* Writers, from the same lists: the typed struct back to attributes, so no
 * attribute name is spelled outside this table.
 *
 *      int dy_conv2d_attrs_put(const dy_conv2d_attrs *a, dy_attr *out);
 *
 * writes into out[0 .. DY_CONV2D_NATTRS) the attributes whose bit is set in
 * a->given, in schema order, and returns how many. Lists and strings are
 * borrowed from *a (dy_program_append_op copies them). The given mask,
 * not "every field", decides what is written, so that
 *  - a read, changed, written back op (a pass: a = dy_conv2d_attrs_get(op))
 *    keeps exactly the attributes it had: a Program, its text and its
 *    .dymodel stay as they were;
 *  - a new op carries what its builder chose to write, nothing implied:
 *    DY_GIVEN_ALL for every attribute (then every field must be set: a
 *    field left out of a literal is zero, not the default), or
 *    DY_GIVEN(conv2d, strides) | ... for some (the rest read as defaults).
 * A field's C type checks its kind at compile time, DY_GIVEN its name.
 * Ops without attributes have DY_<NAME>_NATTRS 0 and a writer that writes
 * nothing. */
#define DY_GIVEN_ALL (~0u)
#define DY_GIVEN(name, field) (1u << offsetof(dy_##name##_attr_index, field))
#define DY_A(nm, kind, dflt) char nm;
#define DY_R(nm, kind) char nm;
/* dy_<name>_attr_index: one char per attribute in schema order, so that a
 * field's offset is its schema index (DY_GIVEN); end_ keeps it non-empty */
#define DY_OP(NAME, name, n_in, n_out, flags, attrs)                 \
  typedef struct {                                                  \
    attrs char end_;                                                \
  } dy_##name##_attr_index;                                         \
  enum { DY_##NAME##_NATTRS = offsetof(dy_##name##_attr_index, end_) }; \
  int dy_##name##_attrs_put(const dy_##name##_attrs *a, dy_attr *out);
#include "ops.def"
#undef DY_OP
#undef DY_A
#undef DY_R

/* The output tile size m of a fused_conv2d's algo, Winograd F(m x m, 3 x 3):
 * "winograd2" 2, "winograd4" (or "winograd") 4, "winograd6" 6; 0 for ""
 * and anything else. */
int dy_winograd_tile(const char *algo);

/* The checked accessor of every op kind, type-erased (out points to the
 * kind's dy_<name>_attrs), with the struct's size: for generic code and
 * tests that walk the table. */
typedef dy_status (*dy_attrs_fn)(const dy_op *op, void *out, dy_error *err);
extern const dy_attrs_fn dy_attrs_table[DY_OP_COUNT];
extern const size_t dy_attrs_size[DY_OP_COUNT];
/* The writer of every op kind, type-erased (a points to the kind's
 * dy_<name>_attrs). */
typedef int (*dy_attrs_put_fn)(const void *a, dy_attr *out);
extern const dy_attrs_put_fn dy_attrs_put_table[DY_OP_COUNT];

/* ---- the fused ops' activations and elementwise tokens (acts.def;
 * infer/infer_fused.c) ---- */
typedef enum {
  DY_ACTIVATION_NONE, /* act "" */
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) DY_ACTIVATION_##NAME,
#include "acts.def"
#undef DY_ACT
  DY_ACTIVATION_COUNT
} dy_activation;
/* The activation named s (NULL and "" are DY_ACTIVATION_NONE), or -1. */
int dy_act_find(const char *s);
/* Its name ("" for none). */
const char *dy_act_name(dy_activation a);

typedef enum {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) DY_EWTOK_##NAME,
#include "acts.def"
#undef DY_EW
  DY_EWTOK_COUNT
} dy_ew_token;
/* The token of fused_elementwise spelled s[0..len), or -1; its arity. */
int dy_ew_token_find(const char *s, size_t len);
int dy_ew_token_arity(dy_ew_token t);
const char *dy_ew_token_name(dy_ew_token t);

/* fused_conv2d_pool's two parts as ops of their own, for the eager kernel
 * and the gradient to run the parts' kernels and rules: *conv a
 * fused_conv2d (its attributes but the pool's, algo ""; the op's inputs
 * and loc), *pool a pool2d ("max", ksize and strides from pool_ksize and
 * pool_strides, no padding, floor; all eight attributes). The parts' attributes live in conv_attrs and pool_attrs
 * (infer/infer_fused.c). */
void dy_fused_conv2d_pool_parts(const dy_op *op, dy_attr conv_attrs[7], dy_op *conv,
                                dy_attr pool_attrs[8], dy_op *pool);

/* ---- geometry shared by inference, kernels and emitters (infer/infer_nn.c) ---- */

/* paddings [top, left, bottom, right], or [h, w] for both sides (or none:
 * zero), as [top, left, bottom, right]. */
void dy_pads4(const int64_t *v, int n, int64_t out[4]);

/* One convolution, NCHW. Assumes the op passed inference (attributes of
 * the right lengths); the output size is computed here, and inference
 * checks it. */
typedef struct {
  int64_t n, c, h, w;          /* input  [n, c, h, w]                  */
  int64_t o, oh, ow;           /* output [n, o, oh, ow]                */
  int64_t kh, kw;              /* kernel                               */
  int64_t sh, sw, dh, dw;      /* strides, dilations                   */
  int64_t pt, pl, pb, pr;      /* paddings: top, left, bottom, right   */
  int64_t oph, opw;            /* transpose: output_padding            */
  int64_t groups;
} dy_conv_geom;

/* conv2d (and fused_conv2d through the conv2d view of its attributes):
 * x [N,C,H,W], w [O, C/groups, kh, kw];
 * oh = (h + pt + pb - (dh*(kh-1) + 1)) / sh + 1. */
dy_conv_geom dy_conv2d_geom(const dy_type *x, const dy_type *w,
                            const dy_conv2d_attrs *a);
/* conv2d_transpose: x [N,C,H,W], w [C, O/groups, kh, kw];
 * oh = (h-1)*sh - pt - pb + dh*(kh-1) + oph + 1. */
dy_conv_geom dy_conv2d_transpose_geom(const dy_type *x, const dy_type *w,
                                      const dy_conv2d_transpose_attrs *a);

/* conv2d_grad_filter: x [N,C,H,W] and dy [N,O,oh,ow] (oh, ow: dy's
 * plane), kh, kw from ksize; o = O. */
dy_conv_geom dy_conv2d_grad_filter_geom(const dy_type *x, const dy_type *dy,
                                        const dy_conv2d_grad_filter_attrs *a);

typedef enum { DY_POOL_WINDOWS, DY_POOL_ADAPTIVE, DY_POOL_GLOBAL } dy_pool_mode;

/* One pooling, NCHW. Windows mode: kernel k, stride s, padding lo (top,
 * left) and hi (bottom, right); adaptive reads ksize as the output size;
 * global pools the whole plane. oh/ow is the output size (ceil_mode: a
 * last window must start inside the input or its near padding). */
typedef struct {
  dy_pool_mode mode;
  bool max;                    /* else avg                             */
  bool exclusive;              /* avg: divide by the in-bounds count   */
  int64_t h, w, oh, ow;
  int64_t k[2], s[2], lo[2], hi[2];
} dy_pool_geom;

dy_pool_geom dy_pool2d_geom(const dy_type *x, const dy_pool2d_attrs *a);

/* ------------------------------------------------------------------ */
/* core/quant.c: requantization parameters of the quantized ops       */
/* ------------------------------------------------------------------ */

/* The quantized ops' fixed-point arithmetic itself is ir/dy_qfixed.h. */

/* TFLite's QuantizeMultiplier: real ~ mult / 2^31 * 2^shift with mult in
 * [2^30, 2^31); 0 and 0 for real <= 0 or not finite. */
void dy_quant_multiplier(double real, int32_t *mult, int32_t *shift);
/* qadd's (TFLite ADD's) three multipliers: a's, b's (each input rescaled to
 * twice the larger input scale, after a left shift of
 * DY_QADD_LEFT_SHIFT) and the output's. */
#define DY_QADD_LEFT_SHIFT 20
void dy_quant_add_params(float a_scale, float b_scale, float y_scale, int32_t mult[3],
                         int32_t shift[3]);
/* qsoftmax's (TFLite SOFTMAX's, beta 1) input multiplier, left shift and
 * smallest counted difference from the row's maximum. */
void dy_quant_softmax_params(float x_scale, int32_t *mult, int32_t *lshift,
                             int32_t *diff_min);
/* Element i of an i8, u8 or i32 array as int32 (0 for other dtypes). */
int32_t dy_quant_value(dy_dtype t, const void *data, int64_t i);
/* The value range of t (i8, u8; i32 and others: the int32 range), and
 * that range intersected with [act_min, act_max]. */
void dy_quant_range(dy_dtype t, int32_t *lo, int32_t *hi);
void dy_quant_act_range(dy_dtype t, int64_t act_min, int64_t act_max, int32_t *lo,
                        int32_t *hi);

/* ------------------------------------------------------------------ */
/* infer/infer.c: shape and dtype inference, one function per op      */
/* ------------------------------------------------------------------ */

/* Infer the output types of op from its input types. Used by the tracer
 * (to type what it records), by eager calls and the static executor (to
 * size outputs; then all dims are concrete) and by the verifier. Errors name
 * the op and its source line. dy_infer_<name> is in infer/infer_<family>.c
 * (the core ops' and the plain elementwise ones' in infer/infer_core.c). */
#define DY_OP(NAME, name, n_in, n_out, flags, attrs)                        \
  dy_status dy_infer_##name(const dy_op *op, const dy_type *in, int n_in_, \
                            dy_type *out, dy_error *err);
#include "ops.def"
#undef DY_OP

typedef dy_status (*dy_infer_fn)(const dy_op *op, const dy_type *in, int n_in,
                                 dy_type *out, dy_error *err);
extern const dy_infer_fn dy_infer_table[DY_OP_COUNT];

/* Dispatch through the table; also checks arity. */
dy_status dy_infer(const dy_op *op, const dy_type *in, int n_in, dy_type *out,
                   dy_error *err);

/* DY_OPF_SETS_SIZE ops (infer/infer_shape.c): the symbol the op's result
 * sets (-1: none) and the dim of output 0 it is (*dim); dy_size_sym_dim: the
 * dim of its size_sym name (a size symbol, not the batch, or an error naming
 * the op); its largest value for inputs in, their symbols at vals (NULL:
 * concrete types), or an error naming it (nonzero: at most x's size). */
int dy_op_size_sym(const dy_op *op, int *dim);
dy_status dy_size_sym_dim(const dy_op *op, const char *name, int64_t *d, dy_error *err);
dy_status dy_op_size_bound(const dy_op *op, const dy_type *in, int n_in, const int64_t *vals,
                           int64_t *bound, dy_error *err);

/* Numpy broadcast of two shapes (-1 aware; infer/infer_util.c); used by
 * the binary ops and by kernels. */
dy_status dy_broadcast_shapes(const dy_op *op, const dy_type *a,
                              const dy_type *b, dy_type *out, dy_error *err);
/* ONNX Slice on one axis of size dim (infer/infer_shape.c): negative start/end
 * count from the end, both are clamped, and the result is the first index
 * and the number of elements. Shared by slice's inference, kernel and
 * emitter so the three agree. */
void dy_slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step,
                   int64_t *first, int64_t *len);
/* Normalise axis (may be negative) against rank; error if out of range
 * (*out is then 0). infer/infer_util.c. */
dy_status dy_normalize_axis(const dy_op *op, int64_t axis, int rank,
                            int *out, dy_error *err);

/* ------------------------------------------------------------------ */
/* program/blocks.c: sub-blocks and control-flow ops (ops_control.def) */
/* ------------------------------------------------------------------ */

/* A cond op's outputs are its branches' results; a while op's are its
 * carried values after the last trip. A sub-block reads outer vars only
 * through the owning op's inputs (its captures). */

/* The trip bound of a while whose max_iterations attribute is 0 (the
 * static executor and eager dy_while stop with an error beyond it). */
#define DY_WHILE_MAX_ITERATIONS 1000000

/* Set a block's params / results (copied into the arena). false on OOM. */
bool dy_block_set_params(dy_program *p, int block, const int *vars, int n);
bool dy_block_set_results(dy_program *p, int block, const int *vars, int n);
/* The vars read inside block b (by its ops or as results, nested blocks
 * included) that are defined outside it, in first-use order, without
 * repeats: the captures its owner must list. Writes up to cap ids; returns
 * the count (which may exceed cap), or -1 on OOM. */
int dy_block_captures(const dy_program *p, int b, int *out, int cap);
/* Inference inside a Program: dy_infer, but for cond and while the types
 * their blocks give (cond: the branches' equal results; while: carried). */
dy_status dy_infer_in(const dy_program *p, const dy_op *op, const dy_type *in,
                      int n_in, dy_type *out, dy_error *err);
/* decl[v] = the block declaring var v (its writer's or whose params hold
 * it), dflt for the rest (feeds, persistables). */
void dy_program_declaring_blocks(const dy_program *p, int *decl, int dflt);
/* Each control op's captures made what its blocks read from outside
 * (first-use order after the pred / carried inputs) once a pass changed
 * reads inside, inner blocks first (a new capture propagates outwards);
 * dy_op_sync_captures: one op (its blocks' control ops as they are).
 * false on OOM. */
bool dy_program_sync_captures(dy_program *p);
bool dy_op_sync_captures(dy_program *p, dy_op *op);

/* splice: every op of block b (no params) to dst from index at, with what
 * b declares; b is left ownerless (dy_program_compact drops it): a branch
 * inlined. move_op: op k of b to index at of dst (which must see its inputs;
 * then dy_program_sync_captures), its outputs declared there. false on OOM. */
bool dy_block_splice(dy_program *p, int b, int dst, int at);
bool dy_block_move_op(dy_program *p, int b, int k, int dst, int at);

/* ------------------------------------------------------------------ */
/* program/verify.c: the verifier (invariants numbered in verify.c)   */
/* ------------------------------------------------------------------ */

/* Checks every invariant; the first broken one is reported as
 * "invariant N (name): detail". */
dy_status dy_verify(const dy_program *p, dy_error *err);

/* ------------------------------------------------------------------ */
/* program/print.c: text and Graphviz                                 */
/* ------------------------------------------------------------------ */

void dy_program_print(const dy_program *p, FILE *out);
void dy_program_print_dot(const dy_program *p, FILE *out);
/* The printed form as a malloc'd string (caller frees); NULL on OOM. */
char *dy_program_to_text(const dy_program *p);

/* ------------------------------------------------------------------ */
/* program/parse.c: the text form read back                           */
/* ------------------------------------------------------------------ */

/* Parse text in dy_program_print's form. *out is new (caller frees with
 * dy_program_free). Errors name the line. Not verified. */
dy_status dy_program_parse(const char *text, dy_program **out, dy_error *err);

/* Files: .dymodel, .dyparams, atomic writers. Gradient rules and Program
 * autodiff; losses, optimizers, training. */
#include "dy_files.h"
#include "dy_grad.h"
#include "dy_train.h"

#endif /* DY_IR_H */
