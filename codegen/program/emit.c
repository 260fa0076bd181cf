/* emit.c - dy_codegen: a memory-planned Program to NAME.h, NAME.c, main.c.
 *
 * The generated NAME.c reads top to bottom like the Program:
 *
 *   header comment      dy2stc version, command line, model, sizes
 *   includes            NAME.h, <stddef.h>, <stdint.h>: nothing else
 *                       (a --localize build, dy_codegen_options.debug_dump,
 *                       then declares NAME_debug_dump, which the caller
 *                       defines)
 *   math                the dy_expf, dy_tanhf, ... the kernels call, as
 *                       static inline functions (emit_mathlib.c; no libm)
 *   weights             static const arrays, one per persistable var read
 *                       as it is, and the packed copies GEMM and conv
 *                       kernels read instead (w_<name>_p16, _p12; the
 *                       layouts are emit_gemm.c's): a weight only read
 *                       packed is emitted only packed. With
 *                       separate_weights (the CLI's way) all of them, of
 *                       every dtype, are in `extern const union
 *                       NAME_weights_data NAME_weights`, a type complete
 *                       only in NAME_weights.c (emit_weights.c), and each
 *                       w_<name> a macro naming its place there
 *   SIMD helpers        when a kernel uses them: emit_simd.c's dy_vf /
 *                       dy_f16 helpers, emit_gemm.c's micro-kernels, and
 *                       with --threads, dy_parallel
 *   kernels             one static function per op, in op order, each under
 *                       a comment naming the op, its source line and types;
 *                       bodies come from the emitters (emit_ops.c); a kernel
 *                       that needs scratch (dy_codegen_scratch_bytes) takes
 *                       `float *restrict scratch`, placed by the plan
 *                       (dy_codegen_options.scratch_offsets) or, without
 *                       one, after the plan's arena
 *   NAME_run            argument checks, the arena layout as a comment, one
 *                       call per kernel (a cond op as C if/else, a while as
 *                       a guarded for (;;) around its blocks' calls: see
 *                       "control flow" below), copies for odd outputs; in a
 *                       --localize build a NAME_debug_dump call after each
 *                       op of block 0 with each of its results
 *   NAME_run_v          the same behind arrays of pointers
 *   NAME_state_init ... with state: its initial values into the caller's
 *                       block, NAME_state_tensor, NAME_train_step and
 *                       NAME_dropout_seeds (a training step's dropout
 *                       seeds: u64s after the state tensors, at
 *                       NAME_SEEDS_OFF, which its dropout kernels take as
 *                       `uint64_t seed`; see seed_slots)
 *   NAME_inputs/outputs descriptor tables
 *
 * Where a var lives ("storage"), decided once per var:
 *   feed         the const input pointer argument of NAME_run
 *   persistable  its w_<name> array (one holding an infinity or a NaN: a
 *                union of its bit patterns, read as w_<name>.f)
 *   state        a persistable var an in-place op (DY_OPF_INPLACE: an
 *                optimizer's update) writes: (T *)(st + NAME_SOFF_<name>),
 *                st being the caller's state block; w_<name> then holds
 *                only its initial value, which NAME_state_init copies
 *   fetch        the output pointer argument (a fetch that is also a feed or
 *                a weight is copied into it at the end of NAME_run)
 *   alias_of     the storage of the var it aliases (followed to the end)
 *   otherwise    (T *)(mem + mem_offset), mem being the caller's arena
 * A view op (reshape, flatten) whose output aliases its input emits no
 * kernel; one whose output is a fetch always copies into the output pointer,
 * so a fetch never depends on how long the arena keeps its source.
 *
 * Kernels that can fail (ops flagged DY_OPF_CAN_FAIL, such as gather on an
 * index out of range) return int: 0, or nonzero to stop NAME_run, which
 * then returns NAME_ERR_INDEX (outputs undefined). Their emitters may write
 * `return 1;`; the final `return 0;` is added here.
 *
 * Control flow: kernels of ops in sub-blocks are ordinary kernels, emitted
 * in execution order (a control op's blocks follow it). In NAME_run a cond
 * is `if (pred[0]) { then calls; outputs = results } else { ... }`; a while
 * copies its initial values into its outputs (the carried values), then
 * loops: params = carried, condition calls, `break` on false, `if
 * (++kN_trips > bound) return NAME_ERR_LOOP;` (the op's max_iterations, or
 * NAME_MAX_ITERATIONS from dy_codegen_options.max_iterations), params =
 * carried, body calls, carried = results. A copy between buffers the plan
 * put on the same bytes is left out (memplan.c shares them where safe).
 *
 * Kernels take `restrict` pointers, so an op's output must not share memory
 * with its inputs: the plan is checked for that, and for offsets that fall
 * outside the arena or are misaligned for the dtype.
 *
 * Nothing printed depends on pointers, time or hash order, so the same
 * Program and options give the same bytes.
 *
 * This file is floor 3 of codegen/ (README.md): it calls the family
 * emitters (floor 2) through dy_cg_table and the kernel builders and
 * helpers below them; nothing below calls it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
#include "dy_codegen.h"

const dy_cg_fn dy_cg_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = dy_emit_##name,
#include "ops.def"
#undef DY_OP
};

int64_t dy_codegen_scratch_bytes(const dy_program *p, const dy_op *op, int64_t max_batch,
                                 int threads) {
  /* every kernel's scratch serves one matrix or image (or head) at a time */
  switch (op->kind) {
  case DY_OP_MATMUL:
  case DY_OP_FUSED_MATMUL:
    return dy_gemm_matmul_scratch(p, op, threads, max_batch); /* B packed once; A per block */
  case DY_OP_CONV2D:
  case DY_OP_FUSED_CONV2D:
  case DY_OP_FUSED_CONV2D_POOL:
    return dy_cg_conv_scratch(p, op, threads);
  case DY_OP_FUSED_ATTENTION:
    return dy_cg_attention_scratch(p, op, max_batch); /* v panels, q^T, a block of scores */
  case DY_OP_FUSED_DWPW:
    return dy_cg_dwpw_scratch(p, op, threads);
  case DY_OP_FUSED_IRB:
    return dy_cg_irb_scratch(p, op, threads);
  default:
    return 0;
  }
}

void dy_codegen_output_free(dy_codegen_output *out) {
  if (!out)
    return;
  free(out->header);
  free(out->source);
  free(out->main_c);
  free(out->weights);
  free(out->name);
  *out = (dy_codegen_output){0};
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_alnum(char c) { return is_alpha(c) || (c >= '0' && c <= '9'); }

static bool is_identifier(const char *s) {
  if (!s || !is_alpha(*s))
    return false;
  for (; *s; s++)
    if (!is_alnum(*s))
      return false;
  return true;
}

/* Keywords of C99/C11, and the identifiers NAME_run declares itself. */
static const char *const reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "asm", "typeof",
    /* NAME_run's own names and the object-like macros of the headers
     * model.c includes (and of <math.h>, which it once did) */
    "arena", "batch", "mem", "i", "state", "st", "learning_rate_value", "NULL", "NAN", "INFINITY", "EOF",
    "math_errhandling",
};

/* Upper-case prefixes of macros from <stdint.h>, <stddef.h>, <math.h>
 * (INT8_MAX, SIZE_MAX, FP_NAN, HUGE_VALF, M_PI, ...) and of the math
 * prelude (DY_INFINITY, DY_NAN: emit_mathlib.c). */
static const char *const macro_prefixes[] = {
    "INT", "UINT", "PTRDIFF_", "SIZE_", "SIG_ATOMIC_", "WCHAR_", "WINT_",
    "FP_", "HUGE_VAL", "MATH_", "M_", "DY_",
};

static bool has_prefix(const char *s, const char *pre) {
  return strncmp(s, pre, strlen(pre)) == 0;
}

/* Could the identifier s, used as a parameter of NAME_run, clash with a
 * keyword, a macro, a file-scope name of model.c or a local? */
static bool risky_param(const char *s, const char *upper, const char *lower) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strcmp(s, reserved[i]) == 0)
      return true;
  if ((s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'))) ||
      has_prefix(s, "w_") ||
      (s[0] == 'k' && s[1] >= '0' && s[1] <= '9'))
    return true;
  size_t nu = strlen(upper);
  if ((strncmp(s, upper, nu) == 0 || strncmp(s, lower, nu) == 0) && s[nu] == '_')
    return true;
  bool all_upper = true;
  for (const char *c = s; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      all_upper = false;
  if (all_upper)
    for (size_t i = 0; i < sizeof macro_prefixes / sizeof *macro_prefixes; i++)
      if (has_prefix(s, macro_prefixes[i]))
        return true;
  return false;
}

/* name as a C identifier: non-alnum -> '_', '_' first if it starts with a
 * digit. Malloc'd, with room for a prefix of up to 2 chars and a suffix. */
static char *sanitize(const char *name, const char *prefix) {
  size_t n = strlen(name), np = strlen(prefix);
  char *s = malloc(np + n + 2 + 24);
  if (!s)
    return NULL;
  memcpy(s, prefix, np);
  char *d = s + np;
  if (!np && (n == 0 || (name[0] >= '0' && name[0] <= '9')))
    *d++ = '_';
  for (size_t i = 0; i < n; i++)
    *d++ = is_alnum(name[i]) ? name[i] : '_';
  *d = '\0';
  return s;
}

/* Make s unique among taken[0..n): append _2, _3, ... */
static void dedup(char *s, char *const *taken, int n) {
  size_t len = strlen(s);
  for (int k = 1;; k++) {
    if (k > 1)
      snprintf(s + len, 24, "_%d", k);
    bool clash = false;
    for (int i = 0; i < n && !clash; i++)
      clash = taken[i] && strcmp(taken[i], s) == 0;
    if (!clash)
      return;
  }
}

/* ------------------------------------------------------------------ */
/* The generator                                                       */
/* ------------------------------------------------------------------ */

typedef enum { ST_NONE, ST_FEED, ST_WEIGHT, ST_FETCH, ST_ARENA, ST_STATE } storage_kind;

typedef struct {
  storage_kind kind;
  int root;          /* the var that owns the storage */
} storage;

/* A constant operand packed at compile time for one or more kernels. */
typedef struct {
  int var;               /* the weight */
  dy_pack pack;
  char *name;            /* its array: w_<name>_p16, w_<name>_p12 */
} packed_weight;

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
  char *lower, *upper;   /* opt->name and its upper case */
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
  storage *st;           /* per var, for used vars */
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
  bool uses_arena;       /* some storage is ST_ARENA */
  bool has_loop;         /* some op is a while: NAME_ERR_LOOP, NAME_MAX_ITERATIONS */
  int64_t max_iterations; /* NAME_MAX_ITERATIONS */
  int64_t weight_bytes;
  uint32_t *blob;        /* separate_weights: NAME_weights' words */
  int64_t n_blob, cap_blob;
  packed_weight *packs;  /* n_packs of them, in order of first use */
  int n_packs;
  bool *unpacked_use;    /* per var: read as is by some kernel or copied out */
  int64_t *scratch;      /* per op index: scratch bytes (0: none) */
  int64_t *scratch_off;  /* per op index: its arena offset */
  int64_t arena_bytes;   /* NAME_ARENA_BYTES: the plan's, plus appended scratch */
  unsigned uses;         /* DY_USES_* of all kernels */
  dy_buf run_pool;       /* with threads: NAME_run around NAME_run_body */
} gen;

static const char *ctype_of(dy_dtype t) {
  switch (t) {
  case DY_F32: return "float";
  case DY_I64: return "int64_t";
  case DY_BOOL: return "uint8_t";
  case DY_I8: return "int8_t";
  case DY_U8: return "uint8_t";
  case DY_I32: return "int32_t";
  default: return "void";
  }
}

static bool type_dynamic(const dy_type *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] < 0)
      return true;
  return false;
}

/* Bytes of a var at the size bounds (max batch; every other symbol's
 * bound), as the memory plan sized it; -1 if that overflows. */
static int64_t var_bytes(const gen *g, const dy_var *v) {
  int64_t n;
  if (!dy_type_numel_eval(&v->type, g->bounds, &n))
    return -1;
  return n * (int64_t)dy_dtype_size(v->type.dtype);
}

/* "SEQ" for symbol seq: its macros are NAME_MAX_DIM_SEQ. */
static const char *sym_upper(int sym, char *buf, size_t n) {
  snprintf(buf, n, "%s", dy_sym_name(sym));
  for (char *c = buf; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  return buf;
}

/* ", seq 128" (sep " ") or ", seq = 128" for each symbol but the batch. */
static void put_named_bounds(const gen *g, dy_buf *out, const char *sep) {
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, ", %s%s%lld", dy_sym_name(g->named[k]), sep,
                  (long long)g->bounds[g->named[k]]);
}

/* The symbols other than the batch that g's vars use, ordered by name. */
static void find_named(gen *g) {
  g->n_named = 0;
  for (int s = 1; s < DY_MAX_SYMS; s++)
    if (g->sym_mask >> s & 1) {
      int k = g->n_named++;
      g->named[k] = s;
      for (; k > 0 && strcmp(dy_sym_name(g->named[k - 1]), dy_sym_name(s)) > 0; k--) {
        g->named[k] = g->named[k - 1];
        g->named[k - 1] = s;
      }
    }
}


/* Shape for a kernel name: "4x256", "Bx10" (B the batch), "BxSx8" (S a
 * size symbol's initial, seq), "Ex8" (E an expression), "scalar". */
static void shape_tag(const dy_type *t, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  if (t->rank == 0) {
    snprintf(buf, n, "scalar");
    return;
  }
  for (int i = 0; i < t->rank && k < n; i++) {
    int sym = dy_dim_single_sym(t->shape[i]);
    if (t->shape[i] == -1)
      k += (size_t)snprintf(buf + k, n - k, "%sB", i ? "x" : "");
    else if (sym > 0) /* "S" for seq: the symbol's initial, upper case */
      k += (size_t)snprintf(buf + k, n - k, "%s%c", i ? "x" : "",
                            (char)(dy_sym_name(sym)[0] >= 'a' && dy_sym_name(sym)[0] <= 'z'
                                       ? dy_sym_name(sym)[0] - 'a' + 'A'
                                       : dy_sym_name(sym)[0]));
    else if (t->shape[i] < 0) /* an expression of symbols */
      k += (size_t)snprintf(buf + k, n - k, "%sE", i ? "x" : "");
    else
      k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "",
                            (long long)t->shape[i]);
  }
}

static void kernel_name(const dy_program *p, const dy_op *op, char *buf,
                        size_t n) {
  char tag[160] = "scalar";
  if (op->n_outputs > 0)
    shape_tag(&p->vars[op->outputs[0]]->type, tag, sizeof tag);
  snprintf(buf, n, "k%d_%s_%s", op->id, dy_op_name(op->kind), tag);
}

/* Decide where var v lives. */
static dy_status resolve(gen *g, int v, storage *out) {
  const dy_program *p = g->p;
  int cur = v;
  for (int steps = 0; steps <= p->n_vars; steps++) {
    const dy_var *x = p->vars[cur];
    if (x->feed_index >= 0) {
      *out = (storage){ST_FEED, cur};
    } else if (x->persistable) {
      *out = (storage){g->state[cur] ? ST_STATE : ST_WEIGHT, cur};
    } else if (x->fetch_index >= 0) {
      *out = (storage){ST_FETCH, cur};
    } else if (x->alias_of >= 0) {
      if (x->alias_of >= p->n_vars)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s': alias_of %d is not a var", x->name,
                            x->alias_of);
      if (p->vars[x->alias_of]->type.dtype != x->type.dtype)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' (%s) aliases '%s' of dtype %s", x->name,
                            dy_dtype_name(x->type.dtype),
                            p->vars[x->alias_of]->name,
                            dy_dtype_name(p->vars[x->alias_of]->type.dtype));
      cur = x->alias_of;
      continue;
    } else if (x->mem_offset >= 0) {
      *out = (storage){ST_ARENA, cur};
    } else {
      return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                          "var '%s' has no storage: the memory plan set "
                          "neither mem_offset nor alias_of%s%s",
                          p->vars[v]->name, cur != v ? " for its alias '" : "",
                          cur != v ? p->vars[cur]->name : "");
    }
    if (out->kind == ST_ARENA) {
      /* x is the root; the alias chain shares its bytes. */
      int64_t need = var_bytes(g, p->vars[v]), have = var_bytes(g, x);
      size_t align = dy_dtype_size(x->type.dtype);
      if (need > have)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' needs %lld bytes but aliases '%s' of "
                            "%lld bytes", p->vars[v]->name, (long long)need,
                            x->name, (long long)have);
      if (x->mem_offset + have > g->opt->arena_bytes)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' at arena offset %lld (%lld bytes) "
                            "overruns the arena of %lld bytes",
                            x->name, (long long)x->mem_offset, (long long)have,
                            (long long)g->opt->arena_bytes);
      if (align && x->mem_offset % (int64_t)align != 0)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' at arena offset %lld is not aligned "
                            "for %s", x->name, (long long)x->mem_offset,
                            dy_dtype_name(x->type.dtype));
    }
    return DY_OK;
  }
  return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                      "var '%s': alias_of chain has a cycle", p->vars[v]->name);
}

/* C expression for var v's buffer: "x", "w_fc_w", "(float *)(mem + 64)". */
static void buffer_expr(gen *g, int v, bool as_const, char *buf, size_t n) {
  const storage *s = &g->st[v];
  const dy_var *x = g->p->vars[v];
  switch (s->kind) {
  case ST_FEED:
  case ST_FETCH:
    snprintf(buf, n, "%s", g->param[s->root]);
    break;
  case ST_WEIGHT:
    snprintf(buf, n, "%s%s", g->weight[s->root], g->bits[s->root] ? ".f" : "");
    break;
  case ST_STATE:
    snprintf(buf, n, "(%s%s *)(st + %s)", as_const ? "const " : "",
             ctype_of(x->type.dtype), g->soff[s->root]);
    break;
  case ST_ARENA:
    snprintf(buf, n, "(%s%s *)(mem + %s)", as_const ? "const " : "",
             ctype_of(x->type.dtype), g->off[s->root]);
    break;
  case ST_NONE:
    snprintf(buf, n, "0");
    break;
  }
}

/* Do the storages of vars a and b share bytes? */
static bool overlap(const gen *g, int a, int b) {
  const storage *sa = &g->st[a], *sb = &g->st[b];
  if (sa->root == sb->root)
    return true;
  if (sa->kind != ST_ARENA || sb->kind != ST_ARENA)
    return false; /* distinct state vars never share bytes */
  const dy_var *ra = g->p->vars[sa->root], *rb = g->p->vars[sb->root];
  /* an empty buffer counts as one byte: two at one address are the same
   * pointer to the compiler (restrict), whatever they hold */
  int64_t na = var_bytes(g, ra), nb = var_bytes(g, rb);
  int64_t a0 = ra->mem_offset, a1 = a0 + (na > 0 ? na : 1);
  int64_t b0 = rb->mem_offset, b1 = b0 + (nb > 0 ? nb : 1);
  return a0 < b1 && b0 < a1;
}

/* Append a C call or declaration "head(arg, arg, ...)tail", wrapping the
 * arguments at 80 columns under the open parenthesis. */
static void put_wrapped(dy_buf *out, const char *indent, const char *head,
                        char **args, int n, const char *tail) {
  size_t col = strlen(indent) + strlen(head) + 1;
  size_t open_col = col;
  dy_buf_printf(out, "%s%s(", indent, head);
  for (int i = 0; i < n; i++) {
    size_t w = strlen(args[i]) + (i + 1 < n ? 1 : strlen(tail) + 1);
    if (i > 0) {
      if (col + 1 + w > 80) {
        dy_buf_printf(out, "\n%*s", (int)open_col, "");
        col = open_col;
      } else {
        dy_buf_putc(out, ' ');
        col++;
      }
    }
    dy_buf_puts(out, args[i]);
    col += strlen(args[i]);
    if (i + 1 < n) {
      dy_buf_putc(out, ',');
      col++;
    }
  }
  dy_buf_printf(out, ")%s", tail);
}

static void free_args(char **args, int n) {
  for (int i = 0; i < n; i++)
    free(args[i]);
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* Append the size arguments a kernel of these symbols takes: "batch",
 * "dim_seq", ... (decl: with "int64_t "). */
static int sym_args(const gen *g, uint64_t mask, bool decl, char **args, int n) {
  if (mask & 1)
    args[n++] = xstrdup(decl ? "int64_t batch" : "batch");
  for (int k = 0; k < g->n_named; k++)
    if (mask >> g->named[k] & 1)
      args[n++] = xprintf("%sdim_%s", decl ? "int64_t " : "", dy_sym_name(g->named[k]));
  return n;
}

static const char *basename_of(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Does identifier id occur as a whole token in text? */
static bool mentions(const char *text, const char *id) {
  return dy_cg_mentions_n(text, strlen(text), id);
}

/* ---- analysis ---- */

/* cond and while: ops with sub-blocks, written as C if / while. */
static bool is_control(const dy_op *op) {
  int sub[2];
  return dy_op_sub_blocks(op, sub) > 0;
}

/* g->ops in execution order: block b's ops, each control op followed by its
 * blocks' ops. Every op of the Program must be reached once. */
static dy_status order_ops(gen *g, int b, int depth) {
  const dy_program *p = g->p;
  if (depth > p->n_blocks)
    return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                        "block %d: the block tree has a cycle", b);
  const dy_block *blk = p->blocks[b];
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    int slot = dy_codegen_op_slot(p, b, k);
    if (g->oi_of_slot[slot] >= 0)
      return dy_error_at(g->err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d: its block %d is owned by two ops", op->id, b);
    g->oi_of_slot[slot] = g->n_ops;
    g->slot[g->n_ops] = slot;
    g->ops[g->n_ops++] = op;
    int sub[2], n_sub = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < n_sub; j++) {
      if (sub[j] <= 0 || sub[j] >= p->n_blocks || p->blocks[sub[j]]->parent != b)
        return dy_error_at(g->err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): block %d is not a sub-block of block %d",
                           op->id, dy_op_name(op->kind), sub[j], b);
      dy_status s = order_ops(g, sub[j], depth + 1);
      if (s != DY_OK)
        return s;
    }
  }
  return DY_OK;
}

int dy_codegen_op_slot(const dy_program *p, int b, int index) {
  int slot = index;
  for (int i = 0; i < b && i < p->n_blocks; i++)
    slot += p->blocks[i]->n_ops;
  return slot;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static dy_status analyse(gen *g) {
  dy_program_sym_bounds(g->p, g->opt->max_batch, g->opt->max_batch, g->bounds);
  const dy_program *p = g->p;
  dy_error *err = g->err;
  for (int i = 0; i < p->n_vars; i++)
    g->def[i] = -1;
  /* op ids name the kernels, so they must be unique */
  int *ids = malloc(sizeof *ids * ((size_t)g->n_ops + 1));
  if (!ids)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int oi = 0; oi < g->n_ops; oi++) {
    ids[oi] = g->ops[oi]->id;
    if (ids[oi] < 0) {
      free(ids);
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "op %d has a negative id", oi);
    }
  }
  qsort(ids, (size_t)g->n_ops, sizeof *ids, cmp_int);
  for (int oi = 1; oi < g->n_ops; oi++)
    if (ids[oi] == ids[oi - 1]) {
      int dup = ids[oi];
      free(ids);
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "two ops have id %d", dup);
    }
  free(ids);

  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    if ((unsigned)op->kind >= DY_OP_COUNT)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d has unknown kind %d", op->id, (int)op->kind);
    const dy_op_info *info = dy_op_info_of(op->kind);
    if ((info->n_in >= 0 && op->n_inputs != info->n_in) ||
        (info->n_in < 0 && op->n_inputs < 1) ||
        (info->n_out >= 0 && op->n_outputs != info->n_out) ||
        (info->n_out < 0 && op->n_outputs < 1))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s) has %d inputs and %d outputs, expected "
                         "%d and %d", op->id, info->name, op->n_inputs,
                         op->n_outputs, info->n_in, info->n_out);
    for (int k = 0; k < op->n_inputs + op->n_outputs; k++) {
      int v = k < op->n_inputs ? op->inputs[k] : op->outputs[k - op->n_inputs];
      if (v < 0 || v >= p->n_vars)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): operand %d is not a var", op->id,
                           info->name, v);
      const dy_type *t = &p->vars[v]->type;
      if (t->rank < 0 || t->rank > DY_MAX_DIMS || (unsigned)t->dtype >= DY_DTYPE_COUNT)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): var '%s' has a bad type", op->id,
                           info->name, p->vars[v]->name);
      g->used[v] = true;
    }
    bool inplace = dy_op_has(op, DY_OPF_INPLACE);
    for (int k = 0; k < op->n_outputs; k++) {
      const dy_var *v = p->vars[op->outputs[k]];
      if (inplace) {
        /* an update of state: output k is input k, a persistable var */
        if (op->outputs[k] != op->inputs[k] || !v->persistable)
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "op %d (%s): in-place output %d '%s' is not its input %d, "
                             "a persistable var", op->id, info->name, k, v->name, k);
        continue;
      }
      if (v->feed_index >= 0 || v->persistable)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s) writes %s '%s'", op->id, info->name,
                           v->feed_index >= 0 ? "the input" : "the weight",
                           v->name);
      if (g->def[v->id] >= 0)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "var '%s' is written by two ops", v->name);
      g->def[v->id] = oi;
    }
    /* a control op's blocks: their params are written by the op (copies
     * in), their results read by it (copies out) */
    int sub[2], n_sub = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < n_sub; j++) {
      const dy_block *sb = p->blocks[sub[j]];
      for (int i = 0; i < sb->n_params + sb->n_results; i++) {
        bool param = i < sb->n_params;
        int v = param ? sb->params[i] : sb->results[i - sb->n_params];
        if (v < 0 || v >= p->n_vars)
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "op %d (%s): block %d's %s %d is not a var", op->id,
                             info->name, sub[j], param ? "param" : "result", v);
        g->used[v] = true;
        if (!param)
          continue;
        if (g->def[v] >= 0 && g->def[v] != oi)
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "var '%s' is written by two ops", p->vars[v]->name);
        g->def[v] = oi;
      }
    }
  }
  for (int i = 0; i < p->n_feeds; i++) {
    if (p->feeds[i] < 0 || p->feeds[i] >= p->n_vars)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "feed %d is not a var", i);
    const dy_var *v = p->vars[p->feeds[i]];
    if (v->persistable)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is persistable", v->name);
    g->used[v->id] = true;
  }
  for (int i = 0; i < p->n_fetches; i++) {
    if (p->fetches[i] < 0 || p->fetches[i] >= p->n_vars)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "fetch %d is not a var", i);
    const dy_var *v = p->vars[p->fetches[i]];
    if (v->feed_index < 0 && !v->persistable && g->def[v->id] < 0)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "output '%s' is never computed", v->name);
    g->used[v->id] = true;
  }

  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!g->used[i])
      continue;
    if (v->type.rank < 0 || v->type.rank > DY_MAX_DIMS ||
        (unsigned)v->type.dtype >= DY_DTYPE_COUNT)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "var '%s' has a bad type", v->name);
    for (int d = 0; d < v->type.rank; d++) {
      dy_dim_expr e;
      if (v->type.shape[d] < -1 && !dy_dim_expr_of(v->type.shape[d], &e))
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' has dim %lld", v->name,
                            (long long)v->type.shape[d]);
    }
    g->sym_mask |= dy_type_sym_mask(&v->type);
    if (g->sym_mask & 1)
      g->dynamic = true;
    if (v->persistable) {
      if (type_dynamic(&v->type) || !v->data)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "weight '%s' has %s", v->name,
                            v->data ? "a dynamic shape" : "no data");
    } else if (g->def[i] < 0 && v->feed_index < 0) {
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "var '%s' is read but never written", v->name);
    }
    dy_status s = resolve(g, i, &g->st[i]);
    if (s != DY_OK)
      return s;
    if (g->st[i].kind == ST_ARENA)
      g->uses_arena = true;
  }
  find_named(g);

  /* Which ops emit a kernel; storage checks per op. */
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    g->kernel[oi] = true;
    g->has_loop |= op->kind == DY_OP_WHILE;
    if (is_control(op)) {
      /* no kernel: C if / while around its blocks' kernels (emit_block) */
      g->kernel[oi] = false;
      for (int k = 0; k < op->n_outputs; k++)
        if (p->vars[op->outputs[k]]->alias_of >= 0 && p->vars[op->outputs[k]]->fetch_index < 0)
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "op %d (%s): output '%s' has alias_of set", op->id,
                             dy_op_name(op->kind), p->vars[op->outputs[k]]->name);
      continue;
    }
    if (dy_op_has(op, DY_OPF_VIEW)) {
      const dy_var *o = p->vars[op->outputs[0]];
      if (o->alias_of >= 0 && o->fetch_index < 0) {
        if (g->st[o->id].root != g->st[op->inputs[0]].root ||
            g->st[o->id].kind != g->st[op->inputs[0]].kind)
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "op %d (%s): output '%s' aliases '%s', which does "
                             "not hold its input '%s'", op->id,
                             dy_op_name(op->kind), o->name,
                             p->vars[o->alias_of]->name,
                             p->vars[op->inputs[0]]->name);
        const dy_type *ti = &p->vars[op->inputs[0]]->type, *to = &o->type;
        if (dy_type_numel_at(ti, 1) != dy_type_numel_at(to, 1) ||
            dy_type_numel_at(ti, 2) != dy_type_numel_at(to, 2) ||
            ti->dtype != to->dtype)
          return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                             "op %d (%s): view output '%s' does not have the "
                             "size of its input '%s'", op->id,
                             dy_op_name(op->kind), o->name,
                             p->vars[op->inputs[0]]->name);
        g->kernel[oi] = false;
        continue;
      }
    }
    if (dy_op_has(op, DY_OPF_INPLACE)) {
      /* its outputs are its first inputs (checked above); any other
       * input must not be state it writes */
      g->in_place[oi] = true;
      for (int k = 0; k < op->n_outputs; k++)
        for (int j = op->n_outputs; j < op->n_inputs; j++)
          if (overlap(g, op->outputs[k], op->inputs[j]))
            return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                               "op %d (%s): in-place output '%s' is also its input %d",
                               op->id, dy_op_name(op->kind), p->vars[op->outputs[k]]->name, j);
      continue;
    }
    for (int k = 0; k < op->n_outputs; k++) {
      int o = op->outputs[k];
      if (p->vars[o]->alias_of >= 0 && p->vars[o]->fetch_index < 0)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): output '%s' has alias_of set but %s "
                           "is not a view", op->id, dy_op_name(op->kind),
                           p->vars[o]->name, dy_op_name(op->kind));
      for (int j = 0; j < op->n_inputs; j++) {
        if (!overlap(g, o, op->inputs[j]))
          continue;
        /* in place: an elementwise op may write over an input of exactly
         * its output's type at exactly its address (the input itself, or
         * a view of what is there: flatten(x) + x over x); its kernel then
         * takes plain pointers instead of restrict ones */
        const dy_var *vi = p->vars[op->inputs[j]], *vo = p->vars[o];
        const dy_var *ri = p->vars[g->st[op->inputs[j]].root];
        if (dy_op_has(op, DY_OPF_ELEMENTWISE) && g->st[o].kind == ST_ARENA &&
            g->st[op->inputs[j]].kind == ST_ARENA && dy_type_equal(&vi->type, &vo->type) &&
            ri->alias_of < 0 && vo->alias_of < 0 && ri->mem_offset == vo->mem_offset) {
          g->in_place[oi] = true;
          continue;
        }
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): output '%s' shares memory with "
                           "input '%s' (kernels take restrict pointers)",
                           op->id, dy_op_name(op->kind), p->vars[o]->name,
                           p->vars[op->inputs[j]]->name);
      }
      for (int j = 0; j < k; j++)
        if (overlap(g, o, op->outputs[j]))
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "op %d (%s): outputs '%s' and '%s' share memory",
                             op->id, dy_op_name(op->kind), p->vars[o]->name,
                             p->vars[op->outputs[j]]->name);
    }
  }
  return DY_OK;
}

static dy_status make_names(gen *g) {
  const dy_program *p = g->p;
  int n = p->n_feeds + p->n_fetches;
  char **taken = calloc((size_t)n + 1, sizeof *taken);
  if (!taken)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int nt = 0;
  for (int i = 0; i < n; i++) {
    bool in = i < p->n_feeds;
    int v = in ? p->feeds[i] : p->fetches[i - p->n_feeds];
    const char *name = p->vars[v]->name;
    char *s = sanitize(name, "");
    if (s && risky_param(s, g->upper, g->lower)) {
      char *t = sanitize(name, "v_");
      free(s);
      s = t;
    }
    if (!s) {
      free(taken);
      return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    dedup(s, taken, nt);
    taken[nt++] = s;
    if (in) {
      g->param_in[i] = s;
      g->param[v] = s;
    } else {
      g->param_out[i - p->n_feeds] = s;
      if (p->vars[v]->feed_index < 0)
        g->param[v] = s;
    }
  }
  free(taken);

  /* weights: w_<name>, unique among themselves */
  int nw = 0;
  char **wt = calloc((size_t)p->n_vars + 1, sizeof *wt);
  if (!wt)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->used[i] || (g->st[i].kind != ST_WEIGHT && g->st[i].kind != ST_STATE) ||
        g->st[i].root != i)
      continue;
    char *s = sanitize(p->vars[i]->name, "w_");
    if (!s) {
      free(wt);
      return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    dedup(s, wt, nw);
    wt[nw++] = s;
    g->weight[i] = s;
  }
  free(wt);
  return DY_OK;
}

/* Which constant operands are packed for their kernels (emit_gemm.c
 * decides), which weights are still read as they are, and where each
 * kernel's scratch lives. */
static packed_weight *find_pack(const gen *g, int var, const dy_pack *k) {
  for (int i = 0; i < g->n_packs; i++) {
    const dy_pack *q = &g->packs[i].pack;
    if (g->packs[i].var == var && q->kind == k->kind && q->trans == k->trans &&
        q->mats == k->mats && q->rows == k->rows && q->cols == k->cols)
      return &g->packs[i];
  }
  return NULL;
}

static dy_status plan_packs_and_scratch(gen *g) {
  const dy_program *p = g->p;
  dy_error *err = g->err;
  /* packed operands; every other read of a weight is "as is" */
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    /* a control op reads as they are only its predicate (cond) or its
     * initial carried values (while); its captures are read by its blocks */
    int n_read = op->n_inputs;
    if (op->kind == DY_OP_COND)
      n_read = 1;
    else if (op->kind == DY_OP_WHILE)
      n_read = (int)dy_while_attrs_get(op).n_carried;
    for (int i = 0; i < op->n_inputs && i < n_read; i++) {
      int v = op->inputs[i];
      dy_pack k = g->kernel[oi] ? dy_gemm_pack_of(p, op, i) : (dy_pack){.kind = DY_PACK_NONE};
      if (k.kind == DY_PACK_NONE) {
        g->unpacked_use[g->st[v].root] = true;
        continue;
      }
      if (find_pack(g, v, &k))
        continue;
      packed_weight *np = realloc(g->packs, sizeof *np * (size_t)(g->n_packs + 1));
      if (!np)
        return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      g->packs = np;
      np[g->n_packs++] = (packed_weight){.var = v, .pack = k};
    }
  }
  for (int i = 0; i < p->n_fetches; i++)
    g->unpacked_use[g->st[p->fetches[i]].root] = true;
  /* blocks' results are copied out as they are */
  for (int oi = 0; oi < g->n_ops; oi++) {
    int sub[2], n_sub = dy_op_sub_blocks(g->ops[oi], sub);
    for (int j = 0; j < n_sub; j++)
      for (int i = 0; i < p->blocks[sub[j]]->n_results; i++)
        g->unpacked_use[g->st[p->blocks[sub[j]]->results[i]].root] = true;
  }
  /* weights no kernel reads as they are: only their packed copies remain */
  for (int i = 0; i < p->n_vars; i++)
    if (g->weight[i] && !g->unpacked_use[i] && !g->state[i]) {
      free(g->weight[i]);
      g->weight[i] = NULL;
    }
  /* names w_<name><suffix>, unique among all weight arrays */
  int n = 0;
  char **taken = calloc((size_t)(p->n_vars + g->n_packs) + 1, sizeof *taken);
  if (!taken)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->n_vars; i++)
    if (g->weight[i])
      taken[n++] = g->weight[i];
  for (int i = 0; i < g->n_packs; i++) {
    const char *suffix = dy_pack_suffix(&g->packs[i].pack);
    char *s = sanitize(p->vars[g->packs[i].var]->name, "w_");
    if (!s) {
      free(taken);
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    strcat(s, suffix); /* sanitize leaves room for 24 more */
    dedup(s, taken, n);
    taken[n++] = g->packs[i].name = s;
  }
  free(taken);

  /* scratch: where the plan put it, or after the plan's arena */
  g->arena_bytes = g->opt->arena_bytes;
  int64_t base = (g->opt->arena_bytes + 63) / 64 * 64, most = 0;
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    g->scratch[oi] =
        g->kernel[oi] ? dy_codegen_scratch_bytes(p, op, g->opt->max_batch, g->opt->threads) : 0;
    if (g->scratch[oi] <= 0)
      continue;
    g->uses_arena = true;
    if (!g->opt->scratch_offsets) {
      g->scratch_off[oi] = base;
      most = g->scratch[oi] > most ? g->scratch[oi] : most;
      continue;
    }
    int64_t off = g->opt->scratch_offsets[g->slot[oi]];
    if (off < 0 || off % 64 != 0 || off + g->scratch[oi] > g->opt->arena_bytes)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s): its %lld bytes of scratch at arena offset %lld "
                         "do not fit the arena of %lld bytes (or are not 64-aligned)",
                         op->id, dy_op_name(op->kind), (long long)g->scratch[oi],
                         (long long)off, (long long)g->opt->arena_bytes);
    g->scratch_off[oi] = off;
  }
  if (most > 0)
    g->arena_bytes = base + most;
  return DY_OK;
}

/* The names of the arena offsets NAME_run passes (#defined before it):
 * NAME_OFF_<var> per buffer that owns arena bytes, NAME_OFF_scratch_k<id>
 * per kernel scratch; unique, in var then op order. */
static int train_lr_feed(const gen *g);

static bool training_dropout(const dy_op *op) {
  return op->kind == DY_OP_DROPOUT && !dy_dropout_attrs_get(op).is_test;
}

int dy_codegen_dropout_seeds(const dy_program *p, int64_t *seeds, int cap) {
  const dy_block *b = p->blocks[0];
  int n = 0;
  for (int i = 0; i < b->n_ops; i++) {
    if (!training_dropout(b->ops[i]))
      continue;
    int64_t v = dy_dropout_attrs_get(b->ops[i]).seed;
    bool seen = false; /* an earlier training dropout with this seed */
    for (int j = 0; j < i && !seen; j++)
      seen = training_dropout(b->ops[j]) && dy_dropout_attrs_get(b->ops[j]).seed == v;
    if (seen)
      continue;
    if (seeds && n < cap)
      seeds[n] = v;
    n++;
  }
  return n;
}

/* A training step's dropout seeds (NAME_N_DROPOUT_SEEDS u64s after the
 * state tensors, at NAME_SEEDS_OFF): opt->dropout_seeds or the Program's
 * own, the seeds dy_program_reseed_dropout draws; block 0's training-mode
 * dropout ops (a forward one and its gradient share an attribute) take
 * the seed their attribute names. */
static dy_status seed_slots(gen *g) {
  const dy_program *p = g->p;
  int n = g->opt->dropout_seeds ? g->opt->n_dropout_seeds : dy_codegen_dropout_seeds(p, NULL, 0);
  g->seed_init = calloc((size_t)n + 1, sizeof *g->seed_init);
  if (!g->seed_init)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (g->opt->dropout_seeds)
    memcpy(g->seed_init, g->opt->dropout_seeds, sizeof *g->seed_init * (size_t)n);
  else
    dy_codegen_dropout_seeds(p, g->seed_init, n);
  g->n_seeds = n;
  const dy_block *b = p->blocks[0];
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    bool top = false;
    for (int i = 0; i < b->n_ops && !top; i++)
      top = b->ops[i] == op;
    if (!top || !training_dropout(op))
      continue;
    int64_t v = dy_dropout_attrs_get(op).seed;
    int k = 0;
    while (k < n && g->seed_init[k] != v)
      k++;
    if (k == n)
      return dy_error_at(g->err, op, DY_STATUS_INVALID_ARGUMENT,
                         "dropout: seed %lld is none of the training step's %d dropout "
                         "seeds", (long long)v, n);
    g->seed_slot[oi] = k;
  }
  if (n > 0) {
    g->seeds_off = g->state_bytes;
    g->state_bytes += (8 * (int64_t)n + 63) / 64 * 64;
  }
  return DY_OK;
}

static dy_status make_offset_names(gen *g) {
  const dy_program *p = g->p;
  int n = 0;
  char **taken = calloc(2 * (size_t)p->n_vars + (size_t)g->n_ops + 1, sizeof *taken);
  if (!taken)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s_OFF_", g->upper);
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->used[i] || g->st[i].kind != ST_ARENA || g->st[i].root != i)
      continue;
    char *s = sanitize(p->vars[i]->name, prefix);
    if (!s)
      break;
    dedup(s, taken, n);
    taken[n++] = g->off[i] = s;
  }
  for (int oi = 0; oi < g->n_ops; oi++) {
    if (g->scratch[oi] <= 0)
      continue;
    char id[64];
    snprintf(id, sizeof id, "scratch_k%d", g->ops[oi]->id);
    char *s = sanitize(id, prefix);
    if (!s)
      break;
    dedup(s, taken, n);
    taken[n++] = g->scratch_name[oi] = s;
  }
  /* the state: NAME_SOFF_<var>, 64-aligned, in var order */
  snprintf(prefix, sizeof prefix, "%s_SOFF_", g->upper);
  int ns = n;
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->used[i] || g->st[i].kind != ST_STATE || g->st[i].root != i)
      continue;
    char *s = sanitize(p->vars[i]->name, prefix);
    if (!s)
      break;
    dedup(s, taken + ns, n - ns);
    taken[n++] = g->soff[i] = s;
    g->state_off[i] = g->state_bytes;
    g->state_bytes += (var_bytes(g, p->vars[i]) + 63) / 64 * 64;
  }
  dy_status ss = train_lr_feed(g) >= 0 ? seed_slots(g) : DY_OK;
  if (ss) {
    free(taken);
    return ss;
  }
  bool oom = false;
  for (int i = 0; i < p->n_vars; i++)
    oom |= g->used[i] && g->st[i].root == i &&
           ((g->st[i].kind == ST_ARENA && !g->off[i]) || (g->st[i].kind == ST_STATE && !g->soff[i]));
  for (int oi = 0; oi < g->n_ops; oi++)
    oom |= g->scratch[oi] > 0 && !g->scratch_name[oi];
  free(taken);
  return oom ? dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

/* ---- text ---- */

static void put_banner(gen *g, dy_buf *out, const char *what) {
  const dy_codegen_options *opt = g->opt;
  dy_buf_printf(out, "/* %s.%s - generated by dy2stc " DY_VERSION_STRING
                ". Do not edit.\n", g->lower, what);
  dy_buf_puts(out, " *\n * command: ");
  dy_buf_put_comment(out, opt->command_line ? opt->command_line : "(not given)");
  dy_buf_puts(out, "\n * model:   ");
  dy_buf_put_comment(out, opt->source ? opt->source : "(not given)");
  dy_buf_putc(out, '\n');
}

/* {2, -1, 8}: -1 for every dynamic dim (the batch or a size expression). */
static void put_shape_list(dy_buf *out, const dy_type *t) {
  dy_buf_putc(out, '{');
  for (int d = 0; d < t->rank; d++)
    dy_buf_printf(out, "%s%lld", d ? ", " : "", (long long)(t->shape[d] < 0 ? -1 : t->shape[d]));
  if (t->rank == 0)
    dy_buf_putc(out, '0');
  dy_buf_putc(out, '}');
}

/* "float", "const int64_t" ... and the parameter list of NAME_run. */
static int run_params(gen *g, char **args) {
  const dy_program *p = g->p;
  int n = 0;
  if (g->state_bytes > 0)
    args[n++] = xstrdup("void *state");
  args[n++] = xstrdup("void *arena");
  args[n++] = xstrdup("int64_t batch");
  n = sym_args(g, g->sym_mask & ~(uint64_t)1, true, args, n);
  for (int i = 0; i < p->n_feeds; i++)
    args[n++] = xprintf("const %s *%s", ctype_of(p->vars[p->feeds[i]]->type.dtype),
                        g->param_in[i]);
  for (int i = 0; i < p->n_fetches; i++)
    args[n++] = xprintf("%s *%s", ctype_of(p->vars[p->fetches[i]]->type.dtype),
                        g->param_out[i]);
  return n;
}

static bool args_ok(char **args, int n) {
  for (int i = 0; i < n; i++)
    if (!args[i])
      return false;
  return true;
}

/* "batch*10" as used in the header's NUMEL macros: "((int64_t)(batch) * 10)". */
static void put_numel_macro(dy_buf *out, const dy_type *t) {
  dy_ext n = dy_ext_range(t, 0, t->rank);
  int64_t k = n.k;
  int pw = n.p;
  if (pw == 0) {
    dy_buf_printf(out, "((int64_t)%lld)", (long long)k);
    return;
  }
  dy_buf_puts(out, "((int64_t)(batch)");
  for (int i = 1; i < pw; i++)
    dy_buf_puts(out, " * (int64_t)(batch)");
  if (k != 1)
    dy_buf_printf(out, " * %lld", (long long)k);
  dy_buf_putc(out, ')');
}

static void put_io_macros(gen *g, dy_buf *out, const char *kind, int i,
                          const dy_var *v) {
  const char *U = g->upper;
  char ts[256];
  dy_buf_printf(out, "/* %s %d: ", kind[0] == 'I' ? "input" : "output", i);
  dy_buf_put_comment(out, v->name);
  dy_buf_printf(out, "  %s */\n", dy_type_str(&v->type, ts, sizeof ts));
  dy_buf_printf(out, "#define %s_%s_%d_NAME ", U, kind, i);
  dy_buf_put_cstring(out, v->name);
  dy_buf_printf(out, "\n#define %s_%s_%d_RANK %d\n", U, kind, i, v->type.rank);
  dy_buf_printf(out, "#define %s_%s_%d_SHAPE ", U, kind, i);
  put_shape_list(out, &v->type);
  dy_buf_printf(out, "\n#define %s_%s_%d_DTYPE \"%s\"\n", U, kind, i,
                dy_dtype_name(v->type.dtype));
  if (g->n_named) {
    /* NUMEL(batch, dim_seq, ...): every size symbol a parameter */
    char nm[DY_SYM_NAME_MAX + 8];
    dy_cg_ctx ctx = {.p = g->p};
    dy_buf_printf(out, "#define %s_%s_%d_NUMEL(batch", U, kind, i);
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, ", %s", dy_cg_sym_cname(g->named[k], nm, sizeof nm));
    dy_buf_printf(out, ") ((int64_t)(%s))",
                  dy_cg_extent(&ctx, &v->type, 0, v->type.rank));
  } else {
    dy_buf_printf(out, "#define %s_%s_%d_NUMEL(batch) ", U, kind, i);
    put_numel_macro(out, &v->type);
  }
  dy_buf_puts(out, "\n");
}

/* ---- state (a training Program: parameters and optimizer state) ---- */

/* The feed index of a training Program's rank-0 f32 "learning_rate",
 * when its only fetch is a rank-0 f32 loss (dy_train.h); else -1. Such a
 * Program also gets NAME_train_step, the rate passed by value. */
static int train_lr_feed(const gen *g) {
  const dy_program *p = g->p;
  if (g->state_bytes <= 0 || p->n_fetches != 1)
    return -1;
  const dy_var *loss = p->vars[p->fetches[0]];
  if (loss->type.rank != 0 || loss->type.dtype != DY_F32)
    return -1;
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    if (strcmp(v->name, "learning_rate") == 0 && v->type.rank == 0 && v->type.dtype == DY_F32)
      return i;
  }
  return -1;
}

/* The parameters of NAME_train_step: NAME_run's, the rate by value. */
static int train_step_params(gen *g, char **args, int lr) {
  int n = run_params(g, args);
  int k = 3 + lr; /* state, arena, batch, then the feeds */
  free(args[k]);
  args[k] = xprintf("float %s", g->param_in[lr]);
  return n;
}

static int num_state(const gen *g) {
  int n = 0;
  for (int i = 0; i < g->p->n_vars; i++)
    n += g->soff[i] != NULL;
  return n;
}

static void emit_state_decls(gen *g, dy_buf *out) {
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out,
                "/* The state: every var the Program updates in place (parameters,\n"
                " * optimizer moments, running statistics), %s_NUM_STATE tensors in\n"
                " * %s_STATE_BYTES bytes of the caller's RAM, aligned to %s_STATE_ALIGN;\n"
                " * kept between calls. %s_state[i] describes tensor i. */\n"
                "extern const %s_tensor_info %s_state[]; /* %s_NUM_STATE */\n\n",
                U, U, U, L, L, L, U);
  dy_buf_printf(out,
                "/* Copies the initial values (const data in %s.c) into state.\n"
                " * Returns %s_OK or %s_ERR_ARG (NULL). */\n"
                "int %s_state_init(void *state);\n\n",
                L, U, U, L);
  dy_buf_printf(out,
                "/* State tensor i (0..%s_NUM_STATE-1) inside state, C order; NULL for\n"
                " * another i. Its dtype is %s_state[i].dtype (0: float). */\n"
                "void *%s_state_tensor(void *state, int i);\n\n",
                U, L, L);
  int lr = train_lr_feed(g);
  if (lr < 0)
    return;
  dy_buf_printf(out,
                "/* The training-mode dropout ops' seeds inside state (%s_N_DROPOUT_SEEDS\n"
                " * of them; NULL when there are none). %s_state_init sets the\n"
                " * compiled seeds, so every step drops the same elements until the\n"
                " * caller sets new ones: to train as `dy2stc train` does, set\n"
                " * seeds[k] = the next u64 of its generator (after the epoch's\n"
                " * shuffle), k = 0, 1, ..., before every step (the generated\n"
                " * trainer's main.c does). A forward dropout and its gradient\n"
                " * share a seed. */\n"
                "uint64_t *%s_dropout_seeds(void *state);\n\n",
                U, L, L);
  dy_buf_printf(out,
                "/* One training step: forward, loss, backward and the optimizer's\n"
                " * update of the state, as %s_run with the learning rate passed by\n"
                " * value; *%s gets the loss before the update. Returns %s_OK,\n"
                " * %s_ERR_BATCH, %s_ERR_ARG or %s_ERR_INDEX (a label out of range:\n"
                " * the state is then partly updated or not at all). */\n",
                L, g->param_out[0], U, U, U, U);
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = train_step_params(g, args, lr);
  char *head = xprintf("int %s_train_step", L);
  if (!args_ok(args, n) || !head)
    out->oom = true;
  else
    put_wrapped(out, "", head, args, n, ";\n\n");
  free(head);
  free_args(args, n);
}

/* state_init, the state table's accessor and NAME_train_step. */
static void emit_state_defs(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out, "int %s_state_init(void *state) {\n", L);
  dy_buf_printf(out, "  unsigned char *st = (unsigned char *)state;\n"
                     "  if (!state)\n    return %s_ERR_ARG;\n", U);
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->soff[i])
      continue;
    const dy_var *v = p->vars[i];
    dy_buf_printf(out, "  for (int64_t i = 0; i < %lld; i++)\n    ((%s *)(st + %s))[i] = %s%s[i];\n",
                  (long long)dy_type_numel(&v->type), ctype_of(v->type.dtype), g->soff[i],
                  g->weight[i], g->bits[i] ? ".f" : "");
  }
  for (int k = 0; k < g->n_seeds; k++)
    dy_buf_printf(out, "  ((uint64_t *)(st + %s_SEEDS_OFF))[%d] = %lluull;\n", U, k,
                  (unsigned long long)g->seed_init[k]);
  dy_buf_printf(out, "  return %s_OK;\n}\n\n", U);
  dy_buf_printf(out, "void *%s_state_tensor(void *state, int i) {\n", L);
  dy_buf_printf(out, "  static const int64_t offset[%s_NUM_STATE] = {", U);
  int k = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->soff[i])
      dy_buf_printf(out, "%s%s", k++ ? ", " : "", g->soff[i]);
  dy_buf_printf(out, "};\n"
                     "  if (!state || i < 0 || i >= %s_NUM_STATE)\n    return NULL;\n"
                     "  return (unsigned char *)state + offset[i];\n}\n\n", U);
  int lr = train_lr_feed(g);
  if (lr < 0)
    return;
  if (g->n_seeds > 0)
    dy_buf_printf(out,
                  "uint64_t *%s_dropout_seeds(void *state) {\n"
                  "  return state ? (uint64_t *)((unsigned char *)state + %s_SEEDS_OFF) : NULL;\n"
                  "}\n\n", L, U);
  else
    dy_buf_printf(out,
                  "uint64_t *%s_dropout_seeds(void *state) {\n"
                  "  (void)state;\n  return NULL; /* no training-mode dropout */\n}\n\n", L);
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS], *cargs[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = train_step_params(g, args, lr), nc = 0;
  cargs[nc++] = xstrdup("state");
  cargs[nc++] = xstrdup("arena");
  cargs[nc++] = xstrdup("batch");
  for (int i = 0; i < p->n_feeds; i++)
    cargs[nc++] = i == lr ? xprintf("&%s", g->param_in[i]) : xstrdup(g->param_in[i]);
  for (int i = 0; i < p->n_fetches; i++)
    cargs[nc++] = xstrdup(g->param_out[i]);
  char *head = xprintf("int %s_train_step", L), *call = xprintf("return %s_run", L);
  if (!args_ok(args, n) || !args_ok(cargs, nc) || !head || !call) {
    out->oom = true;
  } else {
    put_wrapped(out, "", head, args, n, " {\n");
    put_wrapped(out, "  ", call, cargs, nc, ";\n}\n\n");
  }
  free(head);
  free(call);
  free_args(args, n);
  free_args(cargs, nc);
}

/* The state layout before NAME_run: NAME_SOFF_<var>, bytes into state. */
static void emit_state_layout(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  int w = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->soff[i] && (int)strlen(g->soff[i]) > w)
      w = (int)strlen(g->soff[i]);
  dy_buf_printf(out, "/* state layout: byte offset of each tensor (%lld bytes in all) */\n",
                (long long)g->state_bytes);
  char ts[256];
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->soff[i])
      continue;
    dy_buf_printf(out, "#define %-*s %8lld /* %8lld  ", w, g->soff[i],
                  (long long)g->state_off[i], (long long)var_bytes(g, p->vars[i]));
    dy_buf_put_comment(out, p->vars[i]->name);
    dy_buf_printf(out, " %s */\n", dy_type_str(&p->vars[i]->type, ts, sizeof ts));
  }
  if (g->n_seeds > 0)
    dy_buf_printf(out, "#define %s_SEEDS_OFF %lld /* the %d dropout seeds, u64 */\n", g->upper,
                  (long long)g->seeds_off, g->n_seeds);
  dy_buf_putc(out, '\n');
}

static void emit_header(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  put_banner(g, out, "h");
  dy_buf_puts(out,
              " *\n"
              " * The API of the model: NAME_run() runs it on caller-provided "
              "buffers; the\n"
              " * macros give the arena size and each input's and output's "
              "shape (-1 marks\n"
              " * the batch, a run-time argument bounded by MAX_BATCH).\n"
              " */\n");
  dy_buf_printf(out, "#ifndef %s_H\n#define %s_H\n\n", U, U);
  dy_buf_puts(out, "#include <stddef.h>\n#include <stdint.h>\n\n");
  dy_buf_puts(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  dy_buf_printf(out, "#define %s_ARENA_BYTES %lld /* scratch bytes at max batch */\n",
                U, (long long)g->arena_bytes);
  dy_buf_printf(out, "#define %s_ARENA_ALIGN 64\n", U);
  dy_buf_printf(out, "#define %s_MAX_BATCH %lld\n", U, (long long)g->opt->max_batch);
  if (g->n_named) {
    char up[DY_SYM_NAME_MAX + 8];
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, "#define %s_MAX_DIM_%s %lld /* bound of size symbol %s (--max-dim) */\n",
                    U, sym_upper(g->named[k], up, sizeof up), (long long)g->bounds[g->named[k]],
                    dy_sym_name(g->named[k]));
    dy_buf_printf(out, "#define %s_NUM_DIMS %d /* batch and the size symbols */\n", U,
                  1 + g->n_named);
    dy_buf_printf(out, "#define %s_DIM_NAMES {\"batch\"", U);
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, ", \"%s\"", dy_sym_name(g->named[k]));
    dy_buf_printf(out, "}\n#define %s_DIM_MAXES {%s_MAX_BATCH", U, U);
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, ", %s_MAX_DIM_%s", U, sym_upper(g->named[k], up, sizeof up));
    dy_buf_puts(out, "}\n");
  }
  if (g->has_loop)
    dy_buf_printf(out, "#define %s_MAX_ITERATIONS %lld /* trips of a while loop "
                  "(--max-iterations) */\n", U, (long long)g->max_iterations);
  dy_buf_printf(out, "#define %s_WEIGHT_BYTES %lld /* const data in %s.c */\n",
                U, (long long)g->weight_bytes, L);
  dy_buf_printf(out,
                "/* for a firmware budget: RAM is the arena the caller provides (the\n"
                " * kernels' stack use is small and fixed), flash the weights (code and\n"
                " * the small tables below come on top: see arm-none-eabi-size) */\n"
                "#define %s_RAM_BYTES %s_ARENA_BYTES\n"
                "#define %s_FLASH_BYTES %s_WEIGHT_BYTES\n",
                U, U, U, U);
  if (g->state_bytes > 0)
    dy_buf_printf(out,
                  "#define %s_STATE_BYTES %lld /* parameters and optimizer state, kept */\n"
                  "#define %s_STATE_ALIGN 64\n"
                  "#define %s_NUM_STATE %d\n",
                  U, (long long)g->state_bytes, U, U, num_state(g));
  if (train_lr_feed(g) >= 0)
    dy_buf_printf(out, "#define %s_N_DROPOUT_SEEDS %d\n", U, g->n_seeds);
  dy_buf_printf(out, "#define %s_NUM_INPUTS %d\n", U, p->n_feeds);
  dy_buf_printf(out, "#define %s_NUM_OUTPUTS %d\n\n", U, p->n_fetches);
  for (int i = 0; i < p->n_feeds; i++) {
    put_io_macros(g, out, "INPUT", i, p->vars[p->feeds[i]]);
    dy_buf_putc(out, '\n');
  }
  for (int i = 0; i < p->n_fetches; i++) {
    put_io_macros(g, out, "OUTPUT", i, p->vars[p->fetches[i]]);
    dy_buf_putc(out, '\n');
  }
  dy_buf_printf(out,
                "typedef enum {\n"
                "  %s_OK = 0,\n"
                "  %s_ERR_BATCH = 1, /* batch < 1 or > %s_MAX_BATCH */\n"
                "  %s_ERR_ARG = 2,   /* a NULL buffer */\n"
                "  %s_ERR_INDEX = 3%s /* an index input out of range (gather) */\n",
                U, U, U, U, U, g->has_loop || g->n_named ? "," : " ");
  if (g->has_loop)
    dy_buf_printf(out, "  %s_ERR_LOOP = 4%s  /* a while loop would run more than its bound "
                  "of trips\n                     (%s_MAX_ITERATIONS unless the loop has "
                  "its own) */\n", U, g->n_named ? "," : " ", U);
  if (g->n_named)
    dy_buf_printf(out, "  %s_ERR_SHAPE = 5  /* a size symbol < 1 or above its bound, or an "
                  "input's\n                     dims not as the model's (%s_bind) */\n", U, U);
  dy_buf_printf(out, "} %s_status;\n\n", L);
  dy_buf_printf(out,
                "typedef struct {\n"
                "  const char *name;\n"
                "  int dtype; /* 0 f32, 1 i64, 2 bool, 3 i8, 4 u8, 5 i32 */\n"
                "  int rank;\n"
                "  int64_t shape[8]; /* -1 marks %s */\n"
                "} %s_tensor_info;\n\n",
                g->n_named ? "a dynamic dim, the batch or a size symbol (see _bind)"
                           : "the batch",
                L);
  dy_buf_printf(out, "extern const %s_tensor_info %s_inputs[];  /* %s_NUM_INPUTS */\n",
                L, L, U);
  dy_buf_printf(out, "extern const %s_tensor_info %s_outputs[]; /* %s_NUM_OUTPUTS */\n\n",
                L, L, U);

  dy_buf_printf(out, "/* Runs the model.\n");
  if (g->state_bytes > 0)
    dy_buf_printf(out,
                  " *   state  %s_STATE_BYTES bytes aligned to %s_STATE_ALIGN, set up by\n"
                  " *          %s_state_init; read and updated in place\n",
                  U, U, L);
  dy_buf_printf(out,
                " *   arena  %s_ARENA_BYTES bytes aligned to %s_ARENA_ALIGN; "
                "scratch only,\n"
                " *          nothing is kept in it between calls\n"
                " *   batch  ",
                U, U);
  if (g->dynamic)
    dy_buf_printf(out, "1..%s_MAX_BATCH, the size of every -1 dim\n", U);
  else
    dy_buf_puts(out, "ignored (no dim is dynamic)\n");
  for (int k = 0; k < g->n_named; k++) {
    char nm[DY_SYM_NAME_MAX + 8], up[DY_SYM_NAME_MAX + 8];
    dy_buf_printf(out, " *   %-6s 1..%s_MAX_DIM_%s, size symbol %s (%s_ERR_SHAPE otherwise)\n",
                  dy_cg_sym_cname(g->named[k], nm, sizeof nm), U,
                  sym_upper(g->named[k], up, sizeof up), dy_sym_name(g->named[k]), U);
  }
  dy_buf_puts(out, " * then one buffer per input (read) and per output "
                   "(written), C order,\n * not overlapping:\n");
  char ts[256];
  for (int i = 0; i < p->n_feeds + p->n_fetches; i++) {
    bool in = i < p->n_feeds;
    int v = in ? p->feeds[i] : p->fetches[i - p->n_feeds];
    dy_buf_printf(out, " *   %-12s %s %d  %s\n",
                  in ? g->param_in[i] : g->param_out[i - p->n_feeds],
                  in ? "input " : "output", in ? i : i - p->n_feeds,
                  dy_type_str(&p->vars[v]->type, ts, sizeof ts));
  }
  if (g->n_named)
    dy_buf_printf(out, " * Returns %s_OK, %s_ERR_BATCH, %s_ERR_ARG, %s_ERR_INDEX, %s_ERR_SHAPE%s\n"
                  " * (outputs then undefined). */\n", U, U, U, U, U,
                  g->has_loop ? " or _ERR_LOOP" : "");
  else if (g->has_loop)
    dy_buf_printf(out, " * Returns %s_OK, %s_ERR_BATCH, %s_ERR_ARG, %s_ERR_INDEX or %s_ERR_LOOP\n"
                  " * (outputs then undefined). */\n", U, U, U, U, U);
  else
    dy_buf_printf(out, " * Returns %s_OK, %s_ERR_BATCH, %s_ERR_ARG or %s_ERR_INDEX (outputs\n"
                  " * then undefined). */\n", U, U, U, U);
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = run_params(g, args);
  if (!args_ok(args, n))
    out->oom = true;
  else {
    char *head = xprintf("int %s_run", L);
    if (!head)
      out->oom = true;
    else
      put_wrapped(out, "", head, args, n, ";\n\n");
    free(head);
  }
  free_args(args, n);
  if (g->n_named) {
    dy_buf_printf(out,
                  "/* The same with dims[] = {batch, ...} (%s_NUM_DIMS, as %s_bind gives\n"
                  " * them) and inputs[i] / outputs[i] pointing at input / output i. */\n"
                  "int %s_run_v(%svoid *arena, const int64_t *dims, const void *const "
                  "*inputs,\n"
                  "%*svoid *const *outputs);\n\n",
                  U, L, L, g->state_bytes > 0 ? "void *state, " : "", (int)(strlen(L) + 11), "");
    dy_buf_printf(out,
                  "/* The size symbols' values from the inputs' shapes: shapes[i] points at\n"
                  " * input i's dims (its RANK of them). dims[0] gets the batch, dims[1..] the\n"
                  " * symbols in the order of %s_DIM_NAMES. Each input dim must equal its\n"
                  " * size at those values and each symbol be within its bound: %s_OK,\n"
                  " * else %s_ERR_BATCH, %s_ERR_SHAPE or %s_ERR_ARG (a NULL pointer). */\n"
                  "int %s_bind(const int64_t *const shapes[], int64_t *dims);\n"
                  "/* Output i's shape at dims[] (%s_OUTPUT_<i>_RANK dims into shape). */\n"
                  "void %s_output_shape(int i, const int64_t *dims, int64_t *shape);\n\n",
                  U, U, U, U, U, L, U, L);
  } else {
    dy_buf_printf(out,
                  "/* The same with inputs[i] / outputs[i] pointing at input / "
                  "output i. */\n"
                  "int %s_run_v(%svoid *arena, int64_t batch, const void *const "
                  "*inputs,\n"
                  "%*svoid *const *outputs);\n\n",
                  L, g->state_bytes > 0 ? "void *state, " : "", (int)(strlen(L) + 11), "");
  }
  if (g->state_bytes > 0)
    emit_state_decls(g, out);
  dy_buf_printf(out, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_H */\n", U);
}

/* Weight i as a static const array of literals (a union of bit patterns
 * for an f32 one holding an infinity or a NaN). */
static dy_status emit_inline_weight(gen *g, int i, dy_buf *out) {
  const dy_var *v = g->p->vars[i];
  int64_t n = dy_type_numel(&v->type);
  char ts[256];
  dy_buf_puts(out, "/* ");
  dy_buf_put_comment(out, v->name);
  dy_buf_printf(out, "  %s%s */\n", dy_type_str(&v->type, ts, sizeof ts),
                g->state[i] ? ", the initial value of its state" : "");
  if (g->bits[i]) /* an infinity or a NaN has no literal without libm */
    dy_buf_printf(out, "static const union {\n  uint32_t u[%lld];\n  float f[%lld];\n} %s = {{",
                  (long long)n, (long long)n, g->weight[i]);
  else
    dy_buf_printf(out, "static const %s %s[%lld] = {", ctype_of(v->type.dtype),
                  g->weight[i], (long long)(n > 0 ? n : 1));
  if (n == 0)
    dy_buf_puts(out, "0"); /* C has no empty arrays; never read */
  for (int64_t j = 0; j < n; j++) {
    char lit[64];
    if (g->bits[i]) {
      uint32_t u;
      memcpy(&u, (const char *)v->data + 4 * j, 4);
      snprintf(lit, sizeof lit, "0x%08lxu", (unsigned long)u);
    } else if (v->type.dtype == DY_F32) {
      float x;
      memcpy(&x, (const char *)v->data + 4 * j, 4);
      if (!dy_float_literal(x, lit, sizeof lit))
        return dy_error_set(g->err, DY_STATUS_INTERNAL,
                            "weight '%s' element %lld has no literal", v->name,
                            (long long)j);
    } else if (v->type.dtype == DY_I64) {
      int64_t x;
      memcpy(&x, (const char *)v->data + 8 * j, 8);
      dy_int64_literal(x, lit, sizeof lit);
    } else if (v->type.dtype == DY_I32) {
      int32_t x;
      memcpy(&x, (const char *)v->data + 4 * j, 4);
      if (x == INT32_MIN)
        snprintf(lit, sizeof lit, "INT32_MIN");
      else
        snprintf(lit, sizeof lit, "%ld", (long)x);
    } else if (v->type.dtype == DY_I8) {
      snprintf(lit, sizeof lit, "%d", ((const signed char *)v->data)[j]);
    } else {
      snprintf(lit, sizeof lit, "%u", ((const unsigned char *)v->data)[j]);
    }
    dy_buf_printf(out, "%s%s", j % 8 == 0 ? "\n  " : " ", lit);
    if (j + 1 < n)
      dy_buf_putc(out, ',');
  }
  dy_buf_puts(out, g->bits[i] ? "\n}};\n\n" : n > 0 ? "\n};\n\n" : "};\n\n");
  return DY_OK;
}

/* Append nbytes bytes to NAME_weights at the next boundary of align words
 * (the last word zero-filled); its word offset in *at. */
static bool blob_add(gen *g, const void *d, int64_t nbytes, int64_t align, int64_t *at) {
  int64_t start = (g->n_blob + align - 1) / align * align, n = (nbytes + 3) / 4;
  if (start + n > g->cap_blob) {
    int64_t cap = (start + n) * 2 + 16;
    uint32_t *nb = realloc(g->blob, sizeof *nb * (size_t)cap);
    if (!nb)
      return false;
    g->blob = nb;
    g->cap_blob = cap;
  }
  if (start + n > g->n_blob) /* (g->blob is still NULL before the first bytes) */
    memset(g->blob + g->n_blob, 0, sizeof *g->blob * (size_t)(start + n - g->n_blob));
  if (nbytes > 0)
    memcpy(g->blob + start, d, (size_t)nbytes);
  g->n_blob = start + n;
  *at = start;
  return true;
}

/* Where a weight of nbytes starts in NAME_weights, in words: f32 ones
 * (the SIMD kernels' loads) and any of 64 bytes or more at a 64-byte
 * boundary; small integer ones (zero points, biases of a few channels) at
 * 8 bytes, so that they do not cost a cache line of flash each. */
static int64_t blob_align(dy_dtype t, int64_t nbytes) {
  return t == DY_F32 || nbytes >= 64 ? 16 : 2;
}

/* A weight of NAME_weights: the macro naming its elements (dtype t). */
static void put_blob_define(gen *g, dy_buf *out, const char *name, dy_dtype t, int64_t at) {
  if (t == DY_F32)
    dy_buf_printf(out, "#define %s (%s_WEIGHTS + %lld)\n\n", name, g->upper, (long long)at);
  else
    dy_buf_printf(out, "#define %s ((const %s *)(const void *)(%s_WEIGHTS + %lld))\n\n", name,
                  ctype_of(t), g->upper, (long long)at);
}

/* The weights: static const arrays in NAME.c, or with separate_weights
 * macros naming their place in NAME_weights (the bytes go to g->blob),
 * every dtype (an i64 one makes the blob an even number of words, as
 * NAME_weights.c's int64_t member needs). Packed copies are in the layout
 * of the GEMM micro-kernel (emit_gemm.c). */
static dy_status emit_weights(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const bool sep = g->opt->separate_weights;
  dy_buf body = {0};
  dy_status s = DY_OK;
  for (int i = 0; i < p->n_vars && !s; i++) {
    if (!g->weight[i])
      continue;
    const dy_var *v = p->vars[i];
    if (!sep) {
      s = emit_inline_weight(g, i, &body);
      continue;
    }
    char ts[256];
    int64_t at, end, nbytes = var_bytes(g, v);
    if (!blob_add(g, v->data, nbytes, blob_align(v->type.dtype, nbytes), &at) ||
        (v->type.dtype == DY_I64 && !blob_add(g, NULL, 0, 2, &end))) { /* an even count */
      s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    dy_buf_puts(&body, "/* ");
    dy_buf_put_comment(&body, v->name);
    dy_buf_printf(&body, "  %s%s */\n", dy_type_str(&v->type, ts, sizeof ts),
                  g->state[i] ? ", the initial value of its state" : "");
    put_blob_define(g, &body, g->weight[i], v->type.dtype, at);
  }
  for (int k = 0; k < g->n_packs && !s; k++) {
    const packed_weight *pw = &g->packs[k];
    const dy_var *v = p->vars[pw->var];
    int64_t n = dy_pack_numel(&pw->pack);
    float *d = malloc(sizeof *d * (size_t)(n > 0 ? n : 1));
    if (!d) {
      s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    dy_gemm_pack_data(&pw->pack, v->data, d);
    char ts[256], how[256];
    dy_pack_describe(&pw->pack, how, sizeof how);
    dy_buf_puts(&body, "/* ");
    dy_buf_put_comment(&body, v->name);
    dy_buf_printf(&body, "  %s packed for the GEMM micro-kernel:\n * %s */\n",
                  dy_type_str(&v->type, ts, sizeof ts), how);
    if (sep) {
      int64_t at;
      if (!blob_add(g, d, n * 4, 16, &at))
        s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      else
        put_blob_define(g, &body, pw->name, DY_F32, at);
      free(d);
      continue;
    }
    dy_buf_printf(&body, "static const float %s[%lld] = {", pw->name, (long long)n);
    for (int64_t j = 0; j < n && !s; j++) {
      char lit[64];
      if (!dy_float_literal(d[j], lit, sizeof lit)) {
        s = dy_error_set(g->err, DY_STATUS_UNSUPPORTED,
                         "weight '%s' holds %s; the generated C would not reproduce it",
                         v->name, d[j] != d[j] ? "NaN" : "an infinity");
        break;
      }
      dy_buf_printf(&body, "%s%s", j % 8 == 0 ? "\n  " : " ", lit);
      if (j + 1 < n)
        dy_buf_putc(&body, ',');
    }
    dy_buf_puts(&body, "\n};\n\n");
    free(d);
  }
  if (!s && (body.len > 0 || sep))
    dy_buf_puts(out, "/* ---- weights ---- */\n\n");
  if (!s && sep) {
    dy_buf_printf(out,
                  "/* The weights are %lld 32-bit words at %s_weights, defined in\n"
                  " * %s_weights.c (an executable links them as a binary blob) and\n"
                  " * complete only there; each array starts at a 64-byte boundary. */\n"
                  "union %s_weights_data;\n"
                  "extern const union %s_weights_data %s_weights;\n"
                  "#define %s_WEIGHTS ((const float *)(const void *)&%s_weights)\n\n",
                  (long long)g->n_blob, g->lower, g->lower, g->lower, g->lower, g->lower,
                  g->upper, g->lower);
  }
  if (!s && body.s)
    dy_buf_putn(out, body.s, body.len);
  dy_buf_free(&body);
  return s;
}

static const char *op_symbol(dy_op_kind k) {
  switch (k) {
  case DY_OP_ADD: return " + ";
  case DY_OP_SUB: return " - ";
  case DY_OP_MUL: return " * ";
  case DY_OP_DIV: return " / ";
  case DY_OP_MATMUL: return " @ ";
  default: return ", ";
  }
}

/* The one type check of a kernel, done here so that no emitter re-runs
 * inference: the op's output types must be what inference gives for its
 * input types (so attributes are well formed and shapes agree by the rules
 * of ir/infer*.c). Emitters then check only what they add (the dtypes
 * their kernels are written for). */
static dy_status check_kernel_types(gen *g, const dy_op *op) {
  const dy_program *p = g->p;
  enum { MAX_IN = DY_MAX_FEEDS, MAX_OUT = 8 };
  dy_type in[MAX_IN], want[MAX_OUT];
  if (op->n_inputs > MAX_IN || op->n_outputs > MAX_OUT)
    return dy_error_at(g->err, op, DY_STATUS_UNSUPPORTED,
                       "codegen: %s: %d inputs and %d outputs are too many",
                       dy_op_name(op->kind), op->n_inputs, op->n_outputs);
  for (int i = 0; i < op->n_inputs; i++)
    in[i] = p->vars[op->inputs[i]]->type;
  dy_status s = dy_infer(op, in, op->n_inputs, want, g->err);
  if (s != DY_OK)
    return dy_error_prefix(g->err, "codegen");
  for (int i = 0; i < op->n_outputs; i++)
    if (!dy_type_equal(&want[i], &p->vars[op->outputs[i]]->type)) {
      char a[160], b[160];
      return dy_error_at(g->err, op, DY_STATUS_SHAPE_MISMATCH,
                         "codegen: %s: output %d is %s, not %s as inference gives",
                         dy_op_name(op->kind), i,
                         dy_type_str(&p->vars[op->outputs[i]]->type, a, sizeof a),
                         dy_type_str(&want[i], b, sizeof b));
    }
  return DY_OK;
}

/* The name of input i (or of the output, out) of op's kernel by its role:
 * x for the data, w and bias for a weight and bias, a and b for the operands
 * of a binary op, and so on; NULL for the generic in<i>. */
static const char *operand_role(const dy_op *op, bool out, int i, char *buf, size_t n) {
  static const char *const bn[] = {"x", "scale", "bias", "mean", "variance"};
  if (out)
    return "y";
  switch (op->kind) {
  case DY_OP_MATMUL:
  case DY_OP_FUSED_MATMUL:
  case DY_OP_CONV2D:
  case DY_OP_CONV2D_TRANSPOSE:
  case DY_OP_FUSED_CONV2D:
  case DY_OP_FUSED_CONV2D_POOL:
    return i < 4 ? (const char *[]){"x", "w", "bias", "res"}[i] : NULL;
  case DY_OP_FUSED_ATTENTION:
    return i < 4 ? (const char *[]){"query", "key", "value", "mask"}[i] : NULL;
  case DY_OP_FUSED_DWPW:
    return i < 6 ? (const char *[]){"x", "w_dw", "bias_dw", "w_pw", "bias_pw", "res"}[i] : NULL;
  case DY_OP_FUSED_IRB:
    return i < 8 ? (const char *[]){"x", "w_ex", "bias_ex", "w_dw", "bias_dw", "w_pw", "bias_pw",
                                    "res"}[i]
                 : NULL;
  case DY_OP_WHERE:
    return (const char *[]){"cond", "a", "b"}[i];
  case DY_OP_BATCH_NORM:
  case DY_OP_LAYER_NORM:
  case DY_OP_GROUP_NORM:
    return bn[i];
  case DY_OP_GATHER:
  case DY_OP_GATHER_ELEMENTS:
  case DY_OP_GATHER_ND:
  case DY_OP_SCATTER_ELEMENTS:
  case DY_OP_SCATTER_ND:
    return (const char *[]){"x", "index", "updates"}[i];
  case DY_OP_GRID_SAMPLE:
    return (const char *[]){"x", "grid"}[i];
  case DY_OP_ROI_ALIGN:
    return (const char *[]){"x", "rois", "batch_index"}[i];
  case DY_OP_CONCAT:
  case DY_OP_FUSED_ELEMENTWISE:
    snprintf(buf, n, "x%d", i);
    return buf;
  case DY_OP_QUANTIZE_LINEAR:
  case DY_OP_DEQUANTIZE_LINEAR:
    return (const char *[]){"x", "scale", "zero_point"}[i];
  case DY_OP_QCONV2D:
    return (const char *[]){"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                            "y_scale", "y_zero_point", "bias"}[i];
  case DY_OP_QMATMUL:
  case DY_OP_QADD:
  case DY_OP_QMUL:
    return (const char *[]){"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
                            "y_scale", "y_zero_point", "bias"}[i];
  case DY_OP_QSOFTMAX:
    return (const char *[]){"x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"}[i];
  case DY_OP_MATMUL_INTEGER:
    return (const char *[]){"a", "b", "a_zero_point", "b_zero_point"}[i];
  case DY_OP_CONV_INTEGER:
    return (const char *[]){"x", "w", "x_zero_point", "w_zero_point"}[i];
  default:
    break;
  }
  if (op->n_inputs == 1)
    return "x";
  if (op->n_inputs == 2 && dy_op_has(op, DY_OPF_ELEMENTWISE))
    return i == 0 ? "a" : "b";
  return NULL;
}

/* a b c into d (n bytes), cut to fit. */
static void join(char *d, size_t n, const char *a, const char *b, const char *c) {
  size_t k = 0;
  for (const char *p[] = {a, b, c}, **q = p; q < p + 3; q++)
    for (const char *t = *q; *t && k + 1 < n; t++)
      d[k++] = *t;
  d[k] = '\0';
}

/* The parameter names of op's kernel: inputs then outputs, by role
 * (operand_role) where that name is free in the kernel's code (which
 * names the parameters in0.., out0..), else the role with _in / _out,
 * else in<i> / out<i>. */
static void param_names(const dy_op *op, const char *code, char (*name)[32]) {
  int n = op->n_inputs + op->n_outputs;
  for (int k = 0; k < n; k++) {
    bool out = k >= op->n_inputs;
    int i = out ? k - op->n_inputs : k;
    char buf[32], cand[2][32];
    const char *role = operand_role(op, out, i, buf, sizeof buf);
    snprintf(name[k], 32, "%s%d", out ? "out" : "in", i);
    if (!role)
      continue;
    join(cand[0], 32, role, "", "");
    join(cand[1], 32, role, "_", out ? "out" : "in");
    for (int c = 0; c < 2; c++) {
      bool taken = dy_cg_mentions_n(code, strlen(code), cand[c]) ||
                   strcmp(cand[c], "batch") == 0 || strcmp(cand[c], "scratch") == 0;
      for (int j = 0; j < k && !taken; j++)
        taken = strcmp(name[j], cand[c]) == 0;
      if (!taken) {
        join(name[k], 32, cand[c], "", "");
        break;
      }
    }
  }
}

/* Text with its comments blanked (the names a comment uses are free). */
static char *code_only(const char *a, const char *b) {
  char *t = xprintf("%s\n%s", a ? a : "", b ? b : "");
  if (!t)
    return NULL;
  for (char *c = t; (c = strstr(c, "/*")) != NULL;) {
    char *e = strstr(c + 2, "*/");
    char *end = e ? e + 2 : c + strlen(c);
    memset(c, ' ', (size_t)(end - c));
    c = end;
  }
  return t;
}

/* b's text becomes t (taken; NULL: out of memory). */
static dy_status replace_text(dy_buf *b, char *t) {
  if (!t)
    return DY_STATUS_OUT_OF_MEMORY;
  dy_buf_free(b);
  size_t n = strlen(t);
  *b = (dy_buf){.s = t, .len = n, .cap = n + 1};
  if (n == 0) {
    free(t);
    *b = (dy_buf){0};
  }
  return DY_OK;
}

static dy_status emit_kernel(gen *g, int oi, dy_buf *final_out) {
  const dy_program *p = g->p;
  const dy_op *op = g->ops[oi];
  bool in_place = g->in_place[oi];
  char ts[256];
  /* the comment is written aside: a threaded kernel's worker function
   * (ctx.before) goes in front of it */
  dy_buf cmt = {0}, *out = &cmt;
  /* comment: op id, name, location, types */
  dy_buf_printf(out, "/* op %d: %s", op->id, dy_op_name(op->kind));
  if (op->n_srcs) {
    /* a fused op: every op it was made from */
    char loc[300];
    for (int i = 0; i < op->n_srcs; i++) {
      const dy_op_src *src = &op->srcs[i];
      snprintf(loc, sizeof loc, "%s%s:%d %s", i ? ", " : "   ",
               src->loc.file ? basename_of(src->loc.file) : "?", src->loc.line,
               dy_op_name(src->kind));
      dy_buf_put_comment(out, loc);
    }
  } else if (op->loc.file) {
    char loc[300];
    snprintf(loc, sizeof loc, "   %s:%d", basename_of(op->loc.file), op->loc.line);
    dy_buf_put_comment(out, loc);
  }
  dy_buf_puts(out, "   ");
  for (int i = 0; i < op->n_inputs; i++)
    dy_buf_printf(out, "%s%s", i ? op_symbol(op->kind) : "",
                  dy_type_str(&p->vars[op->inputs[i]]->type, ts, sizeof ts));
  dy_buf_puts(out, op->n_inputs ? " -> " : "-> ");
  for (int i = 0; i < op->n_outputs; i++)
    dy_buf_printf(out, "%s%s", i ? ", " : "",
                  dy_type_str(&p->vars[op->outputs[i]]->type, ts, sizeof ts));
  if (dy_op_has(op, DY_OPF_VIEW))
    dy_buf_puts(out, " (copy)");
  if (in_place)
    dy_buf_puts(out, " (in place)");
  dy_buf_puts(out, " */\n");

  /* body */
  dy_buf body = {0}, before = {0};
  dy_cg_ctx ctx = {.p = p, .op = op, .body = &body, .indent = 1, .uses = &g->uses,
                     .scratch = g->scratch[oi] > 0, .threads = g->opt->threads,
                     .plain_kernels = g->opt->plain_kernels,
                     .no_pack_a = g->opt->no_pack_a, .max_batch = g->opt->max_batch,
                     .before = &before, .seed = g->seed_slot[oi] >= 0};
  dy_status s = check_kernel_types(g, op);
  if (s == DY_OK)
    s = dy_cg_table[op->kind](&ctx, g->err);
  if (s == DY_OK && (body.oom || before.oom || cmt.oom))
    s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (s != DY_OK) {
    dy_buf_free(&body);
    dy_buf_free(&before);
    dy_buf_free(&cmt);
    if (g->err && g->err->op_id < 0)
      g->err->op_id = op->id;
    return s;
  }
  /* the kernel as a reader should see it: no loop of one trip */
  s = replace_text(&body, dy_cg_tidy_loops(body.s));
  if (s == DY_OK)
    s = replace_text(&before, dy_cg_tidy_loops(before.s));
  /* parameters named by their role: x, w, b, y, ... (emitters write in0,
   * out0, ...) */
  enum { MAXP = 2 * DY_MAX_FEEDS + 2 };
  char pname[MAXP][32];
  const char *from[MAXP], *to[MAXP];
  char generic[MAXP][16];
  int np = op->n_inputs + op->n_outputs < MAXP ? op->n_inputs + op->n_outputs : MAXP;
  char *code = s == DY_OK ? code_only(body.s, before.s) : NULL;
  if (s == DY_OK && !code)
    s = DY_STATUS_OUT_OF_MEMORY;
  if (s == DY_OK) {
    param_names(op, code, pname);
    for (int k = 0; k < np; k++) {
      bool o = k >= op->n_inputs;
      snprintf(generic[k], sizeof generic[k], "%s%d", o ? "out" : "in", o ? k - op->n_inputs : k);
      from[k] = generic[k];
      to[k] = pname[k];
    }
    s = replace_text(&body, dy_cg_rename(body.s, from, to, np));
    if (s == DY_OK && before.s)
      s = replace_text(&before, dy_cg_rename(before.s, from, to, np));
  }
  free(code);
  if (s != DY_OK) {
    dy_buf_free(&body);
    dy_buf_free(&before);
    dy_buf_free(&cmt);
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  out = final_out;
  if (before.s)
    dy_buf_puts(out, before.s);
  if (cmt.s)
    dy_buf_puts(out, cmt.s);
  dy_buf_free(&before);
  dy_buf_free(&cmt);

  /* signature */
  char *args[2 * DY_MAX_FEEDS + 2 + DY_MAX_SYMS];
  char *names[2 * DY_MAX_FEEDS + 2 + DY_MAX_SYMS];
  int n = 0;
  uint64_t syms = 0;
  for (int i = 0; i < op->n_inputs && n < 2 * DY_MAX_FEEDS; i++) {
    const dy_type *t = &p->vars[op->inputs[i]]->type;
    syms |= dy_type_sym_mask(t);
    names[n] = xstrdup(pname[n]);
    args[n] = xprintf("const %s *%s%s", ctype_of(t->dtype), in_place ? "" : "restrict ",
                      pname[n]);
    n++;
  }
  for (int i = 0; i < op->n_outputs && n < 2 * DY_MAX_FEEDS; i++) {
    const dy_type *t = &p->vars[op->outputs[i]]->type;
    syms |= dy_type_sym_mask(t);
    names[n] = xstrdup(pname[n]);
    args[n] = xprintf("%s *%s%s", ctype_of(t->dtype), in_place ? "" : "restrict ", pname[n]);
    n++;
  }
  if (g->scratch[oi] > 0) {
    names[n] = xstrdup("scratch");
    args[n++] = xstrdup("float *restrict scratch");
  }
  if (g->seed_slot[oi] >= 0) {
    names[n] = xstrdup("seed");
    args[n++] = xstrdup("uint64_t seed");
  }
  {
    int n0 = n;
    n = sym_args(g, syms, true, args, n);
    sym_args(g, syms, false, names, n0);
  }
  char kname[256], head[300];
  kernel_name(p, op, kname, sizeof kname);
  bool can_fail = dy_op_has(op, DY_OPF_CAN_FAIL);
  snprintf(head, sizeof head, "static %s %s", can_fail ? "int" : "void", kname);
  if (!args_ok(args, n) || !args_ok(names, n)) {
    free_args(args, n);
    free_args(names, n);
    dy_buf_free(&body);
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  /* a qconv2d kernel stays a function of its own: gcc inlines a static
   * function called once, and inside NAME_run its loops share the
   * registers of every other kernel there and spill (on a Cortex-M4 that
   * cost the MLPerf Tiny int8 conv nets 5-13% of their instructions,
   * bench/RESULTS.md) */
  if (op->kind == DY_OP_QCONV2D)
    dy_buf_puts(out, "#if defined(__GNUC__)\n__attribute__((noinline))\n#endif\n");
  if (n == 0)
    dy_buf_printf(out, "%s(void) {\n", head);
  else
    put_wrapped(out, "", head, args, n, " {\n");
  /* a parameter the body does not read (an extent of 0, say; a comment
   * naming it is no read) */
  char *read = code_only(body.s, NULL);
  if (!read)
    out->oom = true;
  for (int i = 0; i < n && read; i++)
    if (!mentions(read, names[i]))
      dy_buf_printf(out, "  (void)%s;\n", names[i]);
  free(read);
  if (body.s)
    dy_buf_puts(out, body.s);
  if (can_fail)
    dy_buf_puts(out, "  return 0;\n");
  dy_buf_puts(out, "}\n\n");
  free_args(args, n);
  free_args(names, n);
  dy_buf_free(&body);
  return DY_OK;
}

static void emit_call(gen *g, int oi, const char *indent, dy_buf *out) {
  const dy_program *p = g->p;
  const dy_op *op = g->ops[oi];
  char *args[2 * DY_MAX_FEEDS + 2 + DY_MAX_SYMS];
  int n = 0;
  uint64_t syms = 0;
  char buf[300];
  for (int i = 0; i < op->n_inputs; i++) {
    dy_pack k = dy_gemm_pack_of(p, op, i);
    const packed_weight *pw = k.kind != DY_PACK_NONE ? find_pack(g, op->inputs[i], &k) : NULL;
    if (pw)
      snprintf(buf, sizeof buf, "%s", pw->name);
    else
      buffer_expr(g, op->inputs[i], true, buf, sizeof buf);
    syms |= dy_type_sym_mask(&p->vars[op->inputs[i]]->type);
    args[n++] = xstrdup(buf);
  }
  for (int i = 0; i < op->n_outputs; i++) {
    buffer_expr(g, op->outputs[i], false, buf, sizeof buf);
    syms |= dy_type_sym_mask(&p->vars[op->outputs[i]]->type);
    args[n++] = xstrdup(buf);
  }
  if (g->scratch[oi] > 0)
    args[n++] = xprintf("(float *)(mem + %s)", g->scratch_name[oi]);
  if (g->seed_slot[oi] >= 0)
    args[n++] = xprintf("((const uint64_t *)(st + %s_SEEDS_OFF))[%d]", g->upper,
                        g->seed_slot[oi]);
  n = sym_args(g, syms, false, args, n);
  kernel_name(p, op, buf, sizeof buf);
  /* a kernel that can fail stops the run */
  char head[320], tail[160];
  bool can_fail = dy_op_has(op, DY_OPF_CAN_FAIL);
  snprintf(head, sizeof head, "%s%s", can_fail ? "if (" : "", buf);
  if (can_fail)
    snprintf(tail, sizeof tail, ")\n%s  return %s_ERR_INDEX;\n", indent, g->upper);
  else
    snprintf(tail, sizeof tail, ";\n");
  if (!args_ok(args, n))
    out->oom = true;
  else if (n == 0)
    dy_buf_printf(out, "%s%s()%s", indent, head, tail);
  else
    put_wrapped(out, indent, head, args, n, tail);
  free_args(args, n);
}

/* ---- control flow: C if / while around the blocks' kernels ---- */

/* dst = src, element by element (nothing when both are the same bytes). */
static void emit_copy(gen *g, int dst, int src, const char *indent, dy_buf *out) {
  const storage *d0 = &g->st[dst], *s0 = &g->st[src];
  if (d0->kind == s0->kind &&
      (d0->root == s0->root ||
       (d0->kind == ST_ARENA &&
        g->p->vars[d0->root]->mem_offset == g->p->vars[s0->root]->mem_offset)))
    return; /* the plan put both on the same bytes */
  const dy_type *t = &g->p->vars[dst]->type;
  dy_cg_ctx ctx = {.p = g->p};
  char d[300], s[300];
  buffer_expr(g, dst, false, d, sizeof d);
  buffer_expr(g, src, true, s, sizeof s);
  dy_buf_printf(out, "%s/* ", indent);
  dy_buf_put_comment(out, g->p->vars[dst]->name);
  dy_buf_puts(out, " = ");
  dy_buf_put_comment(out, g->p->vars[src]->name);
  dy_buf_puts(out, " */\n");
  /* an arena buffer is a cast: index it in parentheses */
  const char *dl = d[0] == '(' ? "(" : "", *dr = d[0] == '(' ? ")" : "";
  const char *sl = s[0] == '(' ? "(" : "", *sr = s[0] == '(' ? ")" : "";
  if (dy_type_numel_at(t, 1) == 1 && !type_dynamic(t))
    dy_buf_printf(out, "%s%s%s%s[0] = %s%s%s[0];\n", indent, dl, d, dr, sl, s, sr);
  else
    dy_buf_printf(out, "%sfor (int64_t i = 0; i < %s; i++)\n%s  %s%s%s[i] = %s%s%s[i];\n",
                  indent, dy_cg_extent(&ctx, t, 0, t->rank), indent, dl, d, dr, sl, s, sr);
}

/* Copy n values: dst[i] = src[i]. */
static void emit_copies(gen *g, const int *dst, const int *src, int n, const char *indent,
                        dy_buf *out) {
  for (int i = 0; i < n; i++)
    emit_copy(g, dst[i], src[i], indent, out);
}

static void emit_block(gen *g, int b, int depth, dy_buf *out);

/* The op's comment line in NAME_run: "op 7: while   f.c:12". */
static void put_op_comment(gen *g, const dy_op *op, const char *indent, const char *what,
                           dy_buf *out) {
  dy_buf_printf(out, "%s/* op %d: %s", indent, op->id, dy_op_name(op->kind));
  if (op->loc.file) {
    char loc[300];
    snprintf(loc, sizeof loc, "   %s:%d", basename_of(op->loc.file), op->loc.line);
    dy_buf_put_comment(out, loc);
  }
  dy_buf_printf(out, "%s%s */\n", what[0] ? "   " : "", what);
  (void)g;
}

static void put_block_comment(gen *g, int b, const char *indent, const char *what, dy_buf *out) {
  dy_buf_printf(out, "%s/* %s (block %d) */\n", indent, what, b);
  (void)g;
}

/* cond: if (pred) { then block; outputs = its results } else { ... } */
static void emit_cond(gen *g, const dy_op *op, int depth, const char *ind, dy_buf *out) {
  dy_cond_attrs a = dy_cond_attrs_get(op);
  char pred[300];
  buffer_expr(g, op->inputs[0], true, pred, sizeof pred);
  put_op_comment(g, op, ind, "", out);
  dy_buf_printf(out, pred[0] == '(' ? "%sif ((%s)[0]) {\n" : "%sif (%s[0]) {\n", ind, pred);
  for (int br = 0; br < 2; br++) {
    int b = (int)(br ? a.else_block : a.then_block);
    const dy_block *blk = g->p->blocks[b];
    if (br)
      dy_buf_printf(out, "%s} else {\n", ind);
    char in2[80];
    snprintf(in2, sizeof in2, "%s  ", ind);
    put_block_comment(g, b, in2, br ? "else" : "then", out);
    emit_block(g, b, depth + 1, out);
    emit_copies(g, op->outputs, blk->results,
                blk->n_results < op->n_outputs ? blk->n_results : op->n_outputs, in2, out);
  }
  dy_buf_printf(out, "%s}\n", ind);
}

/* while: the outputs hold the carried values; each trip copies them into
 * the condition block's params, runs it, stops on false, counts the trip
 * against the bound, runs the body and copies its results back. */
static void emit_while(gen *g, const dy_op *op, int depth, const char *ind, dy_buf *out) {
  dy_while_attrs a = dy_while_attrs_get(op);
  const dy_block *cb = g->p->blocks[a.cond_block], *bb = g->p->blocks[a.body_block];
  int n = (int)a.n_carried;
  if (n > op->n_outputs)
    n = op->n_outputs;
  char what[128], bound[128], in2[80], in3[80], cres[300];
  snprintf(what, sizeof what, "%d carried value%s", n, n == 1 ? "" : "s");
  if (a.max_iterations > 0)
    snprintf(bound, sizeof bound, "%lld", (long long)a.max_iterations);
  else
    snprintf(bound, sizeof bound, "%s_MAX_ITERATIONS", g->upper);
  snprintf(in2, sizeof in2, "%s  ", ind);
  snprintf(in3, sizeof in3, "%s    ", ind);
  put_op_comment(g, op, ind, what, out);
  emit_copies(g, op->outputs, op->inputs, n, ind, out);
  dy_buf_printf(out, "%s{\n%sint64_t k%d_trips = 0;\n%sfor (;;) {\n", ind, in2, op->id, in2);
  put_block_comment(g, (int)a.cond_block, in3, "condition", out);
  emit_copies(g, cb->params, op->outputs, cb->n_params < n ? cb->n_params : n, in3, out);
  emit_block(g, (int)a.cond_block, depth + 2, out);
  if (cb->n_results > 0)
    buffer_expr(g, cb->results[0], true, cres, sizeof cres);
  else
    snprintf(cres, sizeof cres, "0");
  dy_buf_printf(out, cres[0] == '(' ? "%sif (!(%s)[0])\n%s  break;\n"
                                     : "%sif (!%s[0])\n%s  break;\n", in3, cres, in3);
  dy_buf_printf(out, "%sif (++k%d_trips > %s)\n%s  return %s_ERR_LOOP;\n", in3, op->id,
                bound, in3, g->upper);
  put_block_comment(g, (int)a.body_block, in3, "body", out);
  emit_copies(g, bb->params, op->outputs, bb->n_params < n ? bb->n_params : n, in3, out);
  emit_block(g, (int)a.body_block, depth + 2, out);
  emit_copies(g, op->outputs, bb->results, bb->n_results < n ? bb->n_results : n, in3, out);
  dy_buf_printf(out, "%s}\n%s}\n", in2, ind);
}

/* A --localize build (dy_codegen_options.debug_dump): after an op of
 * block 0, each of its results goes to NAME_debug_dump, which the caller
 * defines (compiler/localize.c) - the op's id, the var's name, its data
 * and element count, its dtype (dy_dtype: 0 f32, 1 i64, 2 bool, 3 i8, 4 u8,
 * 5 i32). */
static void emit_dump(gen *g, const dy_op *op, const char *ind, dy_buf *out) {
  for (int i = 0; i < op->n_outputs; i++) {
    int v = op->outputs[i];
    const dy_type *t = &g->p->vars[v]->type;
    dy_cg_ctx ctx = {.p = g->p};
    char buf[300];
    buffer_expr(g, v, true, buf, sizeof buf);
    dy_buf_printf(out, "%s%s_debug_dump(%d, ", ind, g->lower, op->id);
    dy_buf_put_cstring(out, g->p->vars[v]->name);
    dy_buf_printf(out, ", (const void *)%s, %s, %d);\n", buf,
                  dy_cg_extent(&ctx, t, 0, t->rank), (int)t->dtype);
  }
}

/* The calls of block b's ops at nesting depth (indent 2 + 2 * depth). */
static void emit_block(gen *g, int b, int depth, dy_buf *out) {
  const dy_program *p = g->p;
  const dy_block *blk = p->blocks[b];
  char ind[64];
  int w = 2 + 2 * depth < (int)sizeof ind - 1 ? 2 + 2 * depth : (int)sizeof ind - 1;
  memset(ind, ' ', (size_t)w);
  ind[w] = '\0';
  for (int k = 0; k < blk->n_ops; k++) {
    int oi = g->oi_of_slot[dy_codegen_op_slot(p, b, k)];
    const dy_op *op = g->ops[oi];
    if (op->kind == DY_OP_COND) {
      emit_cond(g, op, depth, ind, out);
    } else if (op->kind == DY_OP_WHILE) {
      emit_while(g, op, depth, ind, out);
    } else if (g->kernel[oi]) {
      emit_call(g, oi, ind, out);
    } else {
      dy_buf_printf(out, "%s/* op %d: %s ", ind, op->id, dy_op_name(op->kind));
      dy_buf_put_comment(out, p->vars[op->outputs[0]]->name);
      dy_buf_puts(out, " is a view of ");
      dy_buf_put_comment(out, p->vars[op->inputs[0]]->name);
      dy_buf_puts(out, ", no code */\n");
    }
    if (b == 0 && g->opt->debug_dump)
      emit_dump(g, op, ind, out);
  }
}

/* The arena layout before NAME_run: one #define per buffer the calls pass
 * (NAME_OFF_<var>, its byte offset) with its size at max batch and type,
 * the views that share a buffer, and each kernel's scratch. */
static void emit_layout(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  if (!g->uses_arena)
    return;
  int w = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->off[i] && (int)strlen(g->off[i]) > w)
      w = (int)strlen(g->off[i]);
  for (int oi = 0; oi < g->n_ops; oi++)
    if (g->scratch_name[oi] && (int)strlen(g->scratch_name[oi]) > w)
      w = (int)strlen(g->scratch_name[oi]);
  dy_buf_printf(out, "/* arena layout: byte offset of each buffer (bytes at batch = %lld",
                (long long)g->opt->max_batch);
  put_named_bounds(g, out, " = ");
  dy_buf_puts(out, ") */\n");
  char ts[256];
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!g->used[i] || g->st[i].kind != ST_ARENA)
      continue;
    if (g->st[i].root == i) {
      dy_buf_printf(out, "#define %-*s %8lld /* %8lld  ", w, g->off[i],
                    (long long)v->mem_offset, (long long)var_bytes(g, v));
      dy_buf_put_comment(out, v->name);
      dy_buf_printf(out, " %s */\n", dy_type_str(&v->type, ts, sizeof ts));
    } else {
      dy_buf_puts(out, "/* ");
      dy_buf_put_comment(out, v->name);
      dy_buf_printf(out, " %s is a view of ", dy_type_str(&v->type, ts, sizeof ts));
      dy_buf_put_comment(out, p->vars[g->st[i].root]->name);
      dy_buf_puts(out, " */\n");
    }
  }
  for (int oi = 0; oi < g->n_ops; oi++)
    if (g->scratch[oi] > 0)
      dy_buf_printf(out, "#define %-*s %8lld /* %8lld  scratch of op %d (%s), during that op only */\n",
                    w, g->scratch_name[oi], (long long)g->scratch_off[oi],
                    (long long)g->scratch[oi], g->ops[oi]->id,
                    dy_op_name(g->ops[oi]->kind));
  dy_buf_putc(out, '\n');
}

/* NAME_run of a file with threads, into g->run_pool (emit_run puts it
 * after NAME_run_body): a pool for the call around the body. */
static void emit_run_pool(gen *g, dy_buf *out, char **params, int n) {
  dy_buf *b = &g->run_pool;
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  for (int i = 0; i < n; i++) { /* "const float *x" -> "x" */
    const char *s = params[i], *e = s + strlen(s);
    while (e > s && e[-1] != ' ' && e[-1] != '*')
      e--;
    args[i] = xstrdup(e);
  }
  char *head = xprintf("int %s_run", g->lower), *call = xprintf("rc = %s_run_body", g->lower);
  if (!args_ok(args, n) || !head || !call) {
    out->oom = true;
  } else {
    dy_buf_printf(b, "/* %s_run_body in a pool of %d threads for this call (workers\n"
                     " * started by its first split kernel, joined before it returns) */\n",
                  g->lower, g->opt->threads);
    put_wrapped(b, "", head, params, n, " {\n");
    dy_buf_puts(b, "  dy_pool pool;\n  int rc;\n  dy_pool_begin(&pool);\n");
    put_wrapped(b, "  ", call, args, n, ";\n");
    dy_buf_puts(b, "  dy_pool_end(&pool);\n  return rc;\n}\n\n");
    if (b->oom)
      out->oom = true;
  }
  free(head);
  free(call);
  free_args(args, n);
}

static void emit_run(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = run_params(g, args);
  /* with threads the body is NAME_run_body, which NAME_run calls inside
   * a pool of workers for the call (rt/dy_thread.h) */
  bool pool = g->uses & DY_USES_THREADS;
  char *head = xprintf(pool ? "static int %s_run_body" : "int %s_run", L);
  if (!args_ok(args, n) || !head) {
    out->oom = true;
    free(head);
    free_args(args, n);
    return;
  }
  if (g->state_bytes > 0)
    emit_state_layout(g, out);
  emit_layout(g, out);
  put_wrapped(out, "", head, args, n, " {\n");
  free(head);
  if (pool)
    emit_run_pool(g, out, args, n);
  free_args(args, n);

  /* argument checks */
  const char *checks[2 + 2 * DY_MAX_FEEDS];
  int nc = 0;
  if (g->state_bytes > 0)
    checks[nc++] = "state";
  if (g->arena_bytes > 0)
    checks[nc++] = "arena";
  for (int i = 0; i < p->n_feeds; i++)
    checks[nc++] = g->param_in[i];
  for (int i = 0; i < p->n_fetches; i++)
    checks[nc++] = g->param_out[i];
  size_t col = 6;
  for (int i = 0; i < nc; i++) {
    size_t w = strlen(checks[i]) + 1;
    if (i == 0) {
      dy_buf_puts(out, "  if (");
    } else if (col + 4 + w > 78) {
      dy_buf_puts(out, " ||\n      ");
      col = 6;
    } else {
      dy_buf_puts(out, " || ");
      col += 4;
    }
    dy_buf_printf(out, "!%s", checks[i]);
    col += w;
  }
  if (nc)
    dy_buf_printf(out, ")\n    return %s_ERR_ARG;\n", U);
  if (g->dynamic)
    dy_buf_printf(out, "  if (batch < 1 || batch > %s_MAX_BATCH)\n    return %s_ERR_BATCH;\n",
                  U, U);
  else
    dy_buf_puts(out, "  (void)batch; /* no dynamic dim */\n");
  for (int k = 0; k < g->n_named; k++) {
    char nm[DY_SYM_NAME_MAX + 8], up[DY_SYM_NAME_MAX + 8];
    dy_buf_printf(out, "  if (%s < 1 || %s > %s_MAX_DIM_%s)\n    return %s_ERR_SHAPE;\n",
                  dy_cg_sym_cname(g->named[k], nm, sizeof nm), nm, U,
                  sym_upper(g->named[k], up, sizeof up), U);
  }
  if (g->arena_bytes <= 0 && !g->uses_arena)
    dy_buf_puts(out, "  (void)arena;\n");

  if (g->uses_arena)
    dy_buf_puts(out, "  unsigned char *mem = (unsigned char *)arena;\n");
  if (g->state_bytes > 0)
    dy_buf_puts(out, "  unsigned char *st = (unsigned char *)state;\n");
  dy_buf_putc(out, '\n');

  emit_block(g, 0, 0, out);
  /* outputs that no kernel writes: copy them from where they live */
  for (int i = 0; i < p->n_fetches; i++) {
    int v = p->fetches[i];
    const dy_var *x = p->vars[v];
    if (g->st[v].kind == ST_FETCH)
      continue;
    dy_cg_ctx ctx = {.p = p};
    char src[300];
    buffer_expr(g, v, true, src, sizeof src);
    dy_buf_printf(out, "  /* output %d is %s %s */\n", i,
                  g->st[v].kind == ST_FEED    ? "input"
                  : g->st[v].kind == ST_STATE ? "state"
                                              : "weight",
                  src);
    bool cast = g->st[v].kind == ST_STATE; /* a cast expression: parenthesised */
    dy_buf_printf(out, "  for (int64_t i = 0; i < %s; i++)\n    %s[i] = %s%s%s[i];\n",
                  dy_cg_extent(&ctx, &x->type, 0, x->type.rank), g->param_out[i],
                  cast ? "(" : "", src, cast ? ")" : "");
  }
  dy_buf_printf(out, "  return %s_OK;\n}\n\n", U);
  if (pool && g->run_pool.s)
    dy_buf_puts(out, g->run_pool.s);
  dy_buf_free(&g->run_pool);

  /* NAME_run_v */
  dy_buf_printf(out,
                "int %s_run_v(%svoid *arena, %s, const void *const "
                "*inputs,\n"
                "%*svoid *const *outputs) {\n",
                L, g->state_bytes > 0 ? "void *state, " : "",
                g->n_named ? "const int64_t *dims" : "int64_t batch", (int)(strlen(L) + 11), "");
  if (g->n_named)
    dy_buf_printf(out, "  if (!dims)\n    return %s_ERR_ARG;\n", U);
  if (p->n_feeds && p->n_fetches)
    dy_buf_puts(out, "  if (!inputs || !outputs)\n");
  else if (p->n_feeds)
    dy_buf_puts(out, "  (void)outputs;\n  if (!inputs)\n");
  else if (p->n_fetches)
    dy_buf_puts(out, "  (void)inputs;\n  if (!outputs)\n");
  else
    dy_buf_puts(out, "  (void)inputs;\n  (void)outputs;\n");
  if (p->n_feeds || p->n_fetches)
    dy_buf_printf(out, "    return %s_ERR_ARG;\n", U);
  char *cargs[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  n = 0;
  if (g->state_bytes > 0)
    cargs[n++] = xstrdup("state");
  cargs[n++] = xstrdup("arena");
  cargs[n++] = xstrdup(g->n_named ? "dims[0]" : "batch");
  for (int k = 0; k < g->n_named; k++)
    cargs[n++] = xprintf("dims[%d]", k + 1);
  for (int i = 0; i < p->n_feeds; i++)
    cargs[n++] = xprintf("(const %s *)inputs[%d]",
                         ctype_of(p->vars[p->feeds[i]]->type.dtype), i);
  for (int i = 0; i < p->n_fetches; i++)
    cargs[n++] = xprintf("(%s *)outputs[%d]",
                         ctype_of(p->vars[p->fetches[i]]->type.dtype), i);
  head = xprintf("return %s_run", L);
  if (!args_ok(cargs, n) || !head)
    out->oom = true;
  else
    put_wrapped(out, "  ", head, cargs, n, ";\n}\n\n");
  free(head);
  free_args(cargs, n);
}

static void put_info(dy_buf *out, const dy_var *v) {
  dy_buf_puts(out, "  {");
  dy_buf_put_cstring(out, v->name);
  dy_buf_printf(out, ", %d, %d, ", (int)v->type.dtype, v->type.rank);
  put_shape_list(out, &v->type);
  dy_buf_puts(out, "},\n");
}


/* A Program with size symbols other than the batch: NAME_bind derives
 * every symbol's value from the inputs' shapes (the first input dim that is
 * the symbol alone), then checks each input dim against its expression and
 * each symbol against its bound; NAME_output_shape gives an output's shape
 * at those values; NAME_run_v takes them as dims[]. */
static dy_status emit_bind(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  char nm[DY_SYM_NAME_MAX + 8], up[DY_SYM_NAME_MAX + 8], ex[256];
  dy_buf_printf(out, "int %s_bind(const int64_t *const shapes[], int64_t *dims) {\n", L);
  dy_buf_puts(out, "  int64_t batch = -1");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, ", %s = -1", dy_cg_sym_cname(g->named[k], nm, sizeof nm));
  dy_buf_puts(out, ";\n");
  dy_buf_printf(out, "  if (!shapes || !dims)\n    return %s_ERR_ARG;\n", U);
  for (int i = 0; i < p->n_feeds; i++)
    dy_buf_printf(out, "  if (!shapes[%d])\n    return %s_ERR_ARG;\n", i, U);
  dy_buf_puts(out, "  /* each symbol from the first input dim that is the symbol alone */\n");
  uint64_t bound = 0;
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_type *t = &p->vars[p->feeds[i]]->type;
    for (int d = 0; d < t->rank; d++) {
      int sy = dy_dim_single_sym(t->shape[d]);
      if (sy < 0 || (bound >> sy & 1))
        continue;
      bound |= (uint64_t)1 << sy;
      dy_buf_printf(out, "  %s = shapes[%d][%d];\n", dy_cg_sym_cname(sy, nm, sizeof nm), i, d);
    }
  }
  uint64_t need = g->sym_mask;
  if ((need & ~bound) >> 1) {
    for (int k = 0; k < g->n_named; k++)
      if (!(bound >> g->named[k] & 1))
        return dy_error_set(g->err, DY_STATUS_UNSUPPORTED,
                            "codegen: size symbol '%s' is no input's dim alone, so the "
                            "generated code cannot find its value (pin it with --dim %s=N)",
                            dy_sym_name(g->named[k]), dy_sym_name(g->named[k]));
  }
  if (!(bound & 1))
    dy_buf_puts(out, "  batch = 1; /* no input dim is the batch */\n");
  dy_buf_printf(out, "  if (batch < 1 || batch > %s_MAX_BATCH)\n    return %s_ERR_BATCH;\n", U, U);
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, "  if (%s < 1 || %s > %s_MAX_DIM_%s)\n    return %s_ERR_SHAPE;\n",
                  dy_cg_sym_cname(g->named[k], nm, sizeof nm), nm, U,
                  sym_upper(g->named[k], up, sizeof up), U);
  dy_buf_puts(out, "  /* every input dim equals its size */\n");
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_type *t = &p->vars[p->feeds[i]]->type;
    for (int d = 0; d < t->rank; d++)
      if (dy_dim_single_sym(t->shape[d]) < 0 || t->shape[d] >= 0)
        dy_buf_printf(out, "  if (shapes[%d][%d] != %s)\n    return %s_ERR_SHAPE;\n", i, d,
                      dy_cg_dim_expr(t->shape[d], ex, sizeof ex), U);
      else
        dy_buf_printf(out, "  if (shapes[%d][%d] != %s)\n    return %s_ERR_SHAPE;\n", i, d,
                      dy_cg_sym_cname(dy_dim_single_sym(t->shape[d]), ex, sizeof ex), U);
  }
  dy_buf_puts(out, "  dims[0] = batch;\n");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, "  dims[%d] = %s;\n", k + 1, dy_cg_sym_cname(g->named[k], nm, sizeof nm));
  dy_buf_printf(out, "  return %s_OK;\n}\n\n", U);

  /* NAME_output_shape */
  dy_buf_printf(out, "void %s_output_shape(int i, const int64_t *dims, int64_t *shape) {\n", L);
  dy_buf_puts(out, "  const int64_t batch = dims[0]");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, ", %s = dims[%d]", dy_cg_sym_cname(g->named[k], nm, sizeof nm), k + 1);
  dy_buf_puts(out, ";\n  (void)batch;\n");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, "  (void)%s;\n", dy_cg_sym_cname(g->named[k], nm, sizeof nm));
  dy_buf_puts(out, "  switch (i) {\n");
  for (int i = 0; i < p->n_fetches; i++) {
    const dy_type *t = &p->vars[p->fetches[i]]->type;
    dy_buf_printf(out, "  case %d:\n", i);
    for (int d = 0; d < t->rank; d++)
      dy_buf_printf(out, "    shape[%d] = %s;\n", d, dy_cg_dim_expr(t->shape[d], ex, sizeof ex));
    dy_buf_puts(out, "    break;\n");
  }
  dy_buf_puts(out, "  default:\n    break;\n  }\n}\n\n");
  return DY_OK;
}

static void emit_tables(gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  if (g->state_bytes > 0) {
    dy_buf_printf(out, "const %s_tensor_info %s_state[%s_NUM_STATE] = {\n", g->lower, g->lower,
                  g->upper);
    for (int i = 0; i < p->n_vars; i++)
      if (g->soff[i])
        put_info(out, p->vars[i]);
    dy_buf_puts(out, "};\n");
  }
  for (int t = 0; t < 2; t++) {
    int n = t ? p->n_fetches : p->n_feeds;
    const int *ids = t ? p->fetches : p->feeds;
    dy_buf_printf(out, "const %s_tensor_info %s_%s[%d] = {\n", g->lower, g->lower,
                  t ? "outputs" : "inputs", n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
      put_info(out, p->vars[ids[i]]);
    if (n == 0)
      dy_buf_puts(out, "  {NULL, 0, 0, {0}}, /* none; C has no empty arrays */\n");
    dy_buf_puts(out, "};\n");
  }
}

/* NAME.c after its includes: weights, kernels, entry points, tables. */
static dy_status emit_source_rest(gen *g, dy_buf *out) {
  dy_status s = emit_weights(g, out);
  if (s != DY_OK)
    return s;
  /* the kernels first, to learn which helpers they use */
  dy_buf kernels = {0};
  for (int oi = 0; oi < g->n_ops && s == DY_OK; oi++)
    if (g->kernel[oi])
      s = emit_kernel(g, oi, &kernels);
  if (s != DY_OK || kernels.oom) {
    dy_buf_free(&kernels);
    return s != DY_OK ? s : dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  if (g->uses & (DY_USES_SIMD | DY_USES_GEMM))
    dy_cg_simd_prelude(out);
  if (g->uses & DY_USES_GEMM)
    dy_cg_gemm_prelude(out, g->opt->plain_kernels, (g->uses & DY_USES_PACK_A) != 0);
  if (g->uses & DY_USES_THREADS)
    dy_cg_thread_prelude(out, g->opt->threads);
  if (g->uses & DY_USES_QFIXED)
    dy_cg_qfixed_prelude(out);
  if (g->n_ops)
    dy_buf_puts(out, "/* ---- kernels, in execution order ---- */\n\n");
  if (kernels.s)
    dy_buf_puts(out, kernels.s);
  dy_buf_free(&kernels);
  dy_buf_puts(out, "/* ---- entry points ---- */\n\n");
  emit_run(g, out);
  if (g->n_named && (s = emit_bind(g, out)))
    return s;
  if (g->state_bytes > 0)
    emit_state_defs(g, out);
  emit_tables(g, out);
  return DY_OK;
}

static dy_status emit_source(gen *g, dy_buf *out) {
  put_banner(g, out, "c");
  if (g->opt->ops_before > 0)
    dy_buf_printf(out, " * ops:     %d (%d before passes)\n", g->n_ops,
                  g->opt->ops_before);
  else
    dy_buf_printf(out, " * ops:     %d\n", g->n_ops);
  dy_buf_printf(out, " * arena:   %lld bytes at max batch %lld", (long long)g->arena_bytes,
                (long long)g->opt->max_batch);
  put_named_bounds(g, out, " ");
  if (g->opt->arena_lower_bound > 0)
    dy_buf_printf(out, " (lower bound %lld)", (long long)g->opt->arena_lower_bound);
  dy_buf_printf(out,
                "\n"
                " * weights: %lld bytes\n"
                " */\n",
                (long long)g->weight_bytes);
  dy_buf_printf(out, "#include \"%s.h\"\n\n", g->lower);
  dy_buf_puts(out, "#include <stddef.h>\n#include <stdint.h>\n\n");
  if (g->opt->debug_dump)
    dy_buf_printf(out,
                  "/* a --localize build: NAME_run hands every op's result to this */\n"
                  "void %s_debug_dump(int op, const char *var, const void *data, int64_t n,\n"
                  "%*sint dtype);\n\n",
                  g->lower, (int)strlen(g->lower) + 16, "");
  /* The rest is written aside first: the math functions it names
   * (emit_mathlib.c) go in front of it. */
  dy_buf rest = {0};
  dy_status s = emit_source_rest(g, &rest);
  if (s == DY_OK && rest.oom)
    s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (s == DY_OK) {
    dy_mathlib_emit(out, rest.s);
    if (rest.s)
      dy_buf_putn(out, rest.s, rest.len);
  }
  dy_buf_free(&rest);
  return s;
}

static void gen_free(gen *g) {
  free(g->blob);
  if (g->param_in)
    for (int i = 0; i < g->p->n_feeds; i++)
      free(g->param_in[i]);
  if (g->param_out)
    for (int i = 0; i < g->p->n_fetches; i++)
      free(g->param_out[i]);
  if (g->weight)
    for (int i = 0; i < g->p->n_vars; i++)
      free(g->weight[i]);
  free(g->param_in);
  free(g->param_out);
  free(g->param);
  free(g->weight);
  if (g->off)
    for (int i = 0; i < g->p->n_vars; i++)
      free(g->off[i]);
  if (g->scratch_name)
    for (int oi = 0; oi < g->n_ops; oi++)
      free(g->scratch_name[oi]);
  if (g->soff)
    for (int i = 0; i < g->p->n_vars; i++)
      free(g->soff[i]);
  free(g->soff);
  free(g->state_off);
  free(g->seed_slot);
  free(g->seed_init);
  free(g->state);
  free(g->bits);
  free(g->off);
  free(g->scratch_name);
  free(g->used);
  free(g->def);
  free(g->st);
  free(g->kernel);
  free(g->in_place);
  for (int i = 0; i < g->n_packs; i++)
    free(g->packs[i].name);
  free(g->packs);
  free(g->unpacked_use);
  free(g->scratch);
  free(g->scratch_off);
  free(g->lower);
  free(g->upper);
  free(g->ops);
  free(g->slot);
  free(g->oi_of_slot);
}

dy_status dy_codegen(const dy_program *p, const dy_codegen_options *opt,
                     dy_codegen_output *out, dy_error *err) {
  if (!p || !opt || !out)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "dy_codegen: NULL argument");
  *out = (dy_codegen_output){0};
  if (!is_identifier(opt->name))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "model name '%s' is not a C identifier",
                        opt->name ? opt->name : "(null)");
  if (opt->max_batch < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "max batch %lld is less than 1", (long long)opt->max_batch);
  if (opt->arena_bytes < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "arena size %lld is negative", (long long)opt->arena_bytes);
  if (opt->max_iterations < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "max iterations %lld is negative", (long long)opt->max_iterations);
  if (p->n_blocks < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "program has no block");
  gen g = {.p = p, .opt = opt, .err = err,
           .max_iterations = opt->max_iterations > 0 ? opt->max_iterations
                                                     : DY_WHILE_MAX_ITERATIONS};
  int total = dy_program_count_ops(p);
  size_t nv = (size_t)p->n_vars + 1, no = (size_t)total + 1;
  g.ops = calloc(no, sizeof *g.ops);
  g.slot = calloc(no, sizeof *g.slot);
  g.oi_of_slot = calloc(no, sizeof *g.oi_of_slot);
  g.lower = xstrdup(opt->name);
  g.upper = xstrdup(opt->name);
  g.param = calloc(nv, sizeof *g.param);
  g.param_in = calloc((size_t)p->n_feeds + 1, sizeof *g.param_in);
  g.param_out = calloc((size_t)p->n_fetches + 1, sizeof *g.param_out);
  g.weight = calloc(nv, sizeof *g.weight);
  g.off = calloc(nv, sizeof *g.off);
  g.soff = calloc(nv, sizeof *g.soff);
  g.state_off = calloc(nv, sizeof *g.state_off);
  g.seed_slot = calloc(no, sizeof *g.seed_slot);
  g.state = calloc(nv, sizeof *g.state);
  g.bits = calloc(nv, sizeof *g.bits);
  g.scratch_name = calloc(no, sizeof *g.scratch_name);
  g.used = calloc(nv, sizeof *g.used);
  g.def = calloc(nv, sizeof *g.def);
  g.st = calloc(nv, sizeof *g.st);
  g.kernel = calloc(no, sizeof *g.kernel);
  g.in_place = calloc(no, sizeof *g.in_place);
  g.unpacked_use = calloc(nv, sizeof *g.unpacked_use);
  g.scratch = calloc(no, sizeof *g.scratch);
  g.scratch_off = calloc(no, sizeof *g.scratch_off);
  dy_status s = DY_OK;
  if (!g.ops || !g.slot || !g.oi_of_slot || !g.lower || !g.upper || !g.param || !g.param_in || !g.param_out ||
      !g.weight || !g.off || !g.scratch_name || !g.used || !g.def || !g.st || !g.kernel || !g.in_place ||
      !g.unpacked_use || !g.scratch || !g.scratch_off || !g.soff || !g.state_off || !g.seed_slot || !g.state || !g.bits) {
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (char *c = g.upper; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    g.state[i] = v->persistable && dy_program_in_place_writer(p, i) != NULL;
    for (int64_t j = 0; !opt->separate_weights && v->persistable && v->data && v->type.dtype == DY_F32 &&
                        j < dy_type_numel(&v->type) && !g.bits[i]; j++) {
      float x;
      memcpy(&x, (const char *)v->data + 4 * j, 4);
      g.bits[i] = !(x - x == 0.0f); /* an infinity or a NaN */
    }
  }
  for (int i = 0; i < total; i++)
    g.oi_of_slot[i] = g.seed_slot[i] = -1;
  if ((s = order_ops(&g, 0, 0)) != DY_OK)
    goto done;
  if (g.n_ops != total) {
    s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                     "%d of the Program's %d ops are in blocks no control op owns",
                     total - g.n_ops, total);
    goto done;
  }

  if ((s = analyse(&g)) != DY_OK || (s = make_names(&g)) != DY_OK ||
      (s = plan_packs_and_scratch(&g)) != DY_OK || (s = make_offset_names(&g)) != DY_OK)
    goto done;
  /* with separate_weights, the arrays of NAME_weights each start at a
   * boundary of blob_align words (emit_weights): counted to the next one */
  for (int i = 0; i < p->n_vars; i++)
    if (g.weight[i]) {
      int64_t b = var_bytes(&g, p->vars[i]), a = 4 * blob_align(p->vars[i]->type.dtype, b);
      g.weight_bytes += opt->separate_weights ? (b + a - 1) / a * a : b;
    }
  for (int i = 0; i < g.n_packs; i++)
    g.weight_bytes += opt->separate_weights ? (dy_pack_numel(&g.packs[i].pack) * 4 + 63) / 64 * 64
                                            : dy_pack_numel(&g.packs[i].pack) * 4;

  dy_buf h = {0}, c = {0}, m = {0};
  emit_header(&g, &h);
  s = emit_source(&g, &c);
  if (s == DY_OK && opt->emit_main)
    s = dy_codegen_main_c(p, opt, &m, err);
  if (s == DY_OK) {
    bool want_main = opt->emit_main;
    out->header = dy_buf_take(&h);
    out->source = dy_buf_take(&c);
    out->main_c = want_main ? dy_buf_take(&m) : NULL;
    out->weight_bytes = g.weight_bytes;
    out->arena_bytes = g.arena_bytes;
    out->state_bytes = g.state_bytes;
    if (opt->separate_weights) {
      out->weights = g.blob ? g.blob : calloc(1, sizeof *out->weights);
      out->n_weight_words = g.n_blob > 0 ? g.n_blob : 1;
      out->name = xstrdup(opt->name);
      g.blob = NULL;
    }
    if (!out->header || !out->source || (want_main && !out->main_c) ||
        (opt->separate_weights && (!out->weights || !out->name))) {
      dy_codegen_output_free(out);
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
  }
  dy_buf_free(&h);
  dy_buf_free(&c);
  dy_buf_free(&m);
done:
  gen_free(&g);
  return s;
}
