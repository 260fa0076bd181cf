/* codegen_internal.h - helpers shared by the files of codegen/ only.
 * Not part of the public API (dy_codegen.h). */
#ifndef DY_CODEGEN_INTERNAL_H
#define DY_CODEGEN_INTERNAL_H

#include <stdarg.h>

#include "dy_codegen.h"

/* buf.c: more ways to append. */
void dy_buf_puts(dy_buf *b, const char *s);
void dy_buf_putn(dy_buf *b, const char *s, size_t n);
void dy_buf_putc(dy_buf *b, char c);
/* Text that may come from users (names, paths, command lines) made safe
 * inside a block comment: no comment open or close, no trigraph, printable
 * ASCII only. */
void dy_buf_put_comment(dy_buf *b, const char *s);
/* s as a C string literal, quotes included; escapes quotes, backslashes,
 * '?' (trigraphs) and non-printable bytes (as 3-digit octal). */
void dy_buf_put_cstring(dy_buf *b, const char *s);
/* Like dy_buf_printf with a va_list. */
void dy_buf_vprintf(dy_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* v as a C float literal that reads back as exactly v ("1.0f", "-0.0f",
 * "1e-05f", "0.100000001f"). False (buf untouched) if v is NaN or Inf. */
bool dy_float_literal(float v, char *buf, size_t n);
/* v as a C int64_t constant ("-3", "INT64_MIN"). */
void dy_int64_literal(int64_t v, char *buf, size_t n);

/* emit.c: a product B^p * k (B the batch) as a C expression: "30",
 * "batch", "batch*10". Rotating buffer as dy_cg_dim. */
const char *dy_cg_product(dy_cg_ctx *ctx, int64_t k, int p);

/* Hand the text over (caller frees); NULL if the buffer ran out of memory,
 * in which case the buffer is freed. Leaves b empty. */
char *dy_buf_take(dy_buf *b);

/* emit_main.c: the command-line driver main.c for model opt->name. */
dy_status dy_codegen_main_c(const dy_program *p, const dy_codegen_options *opt,
                            dy_buf *out, dy_error *err);

/* ---- emit_util.c: helpers for emitters ---- */

/* A size B^p * k (B the batch). */
typedef struct {
  int64_t k;
  int p;
} dy_ext;

dy_ext dy_ext_one(void);
dy_ext dy_ext_dim(int64_t d);            /* -1 -> B */
dy_ext dy_ext_mul(dy_ext a, dy_ext b);
bool dy_ext_eq(dy_ext a, dy_ext b);
bool dy_ext_is_one(dy_ext a);
/* Product of t's dims [from, to). */
dy_ext dy_ext_range(const dy_type *t, int from, int to);
/* e as a C expression, copied into buf. */
const char *dy_ext_str(dy_cg_ctx *ctx, dy_ext e, char *buf, size_t n);

/* An index expression: terms "var * stride" joined by " + ". */
typedef struct {
  char s[1024];
  size_t n;
} dy_idxbuf;

void dy_idx_cat(dy_idxbuf *b, const char *t);
void dy_idx_add(dy_cg_ctx *ctx, dy_idxbuf *b, const char *var, dy_ext stride);
const char *dy_idx_str(const dy_idxbuf *b);       /* "0" when empty */
void dy_ptr_plus(dy_idxbuf *out, const char *base, const dy_idxbuf *idx);

const char *dy_ctype(dy_dtype t);                 /* "float", "int64_t", ... */
const char *dy_zero_of(dy_dtype t);               /* "0.0f" or "0"          */
/* An error naming the op and its types: "codegen: add: what (...)". */
dy_status dy_cg_type_error(dy_cg_ctx *ctx, dy_error *err, dy_status s,
                             const char *what);
extern char dy_loop_var[DY_MAX_DIMS][4];          /* "i0".."i7" */
extern char dy_bvars[DY_MAX_DIMS][4];             /* "b0".."b7" */
/* Open n nested loops over extents e with variables vars (indent rises). */
void dy_cg_open_loops(dy_cg_ctx *ctx, int n, const dy_ext *e,
                        char (*vars)[4]);
/* The elementwise loop nest for an op of 1 to 3 inputs broadcasting
 * numpy-style to out0: dims that broadcast alike are collapsed, then
 * out0[..] = fmt(in0[..], in1[..], in2[..]). fmt has one %s per input
 * ("%s + %s", "dy_powf(%s, %s)", "%s ? %s : %s"). Dtype checks are the
 * caller's. */
dy_status dy_cg_broadcast(dy_cg_ctx *ctx, dy_error *err, const char *fmt);
/* The same loop nest, with a body that binds the inputs' elements to
 * v0, v1, v2 (f32) and stores expr, which may name each several times. */
dy_status dy_cg_broadcast_let(dy_cg_ctx *ctx, dy_error *err, const char *expr);

/* "v * m + a" for an index, simplified: "oy", "oy * 2 - 1", "i * 2". */
const char *dy_cg_affine(char *buf, size_t n, const char *v, long long m, long long a);
/* The sum of two affine terms "t1 + t2" where t2 may vanish. */
const char *dy_cg_sum2(char *buf, size_t n, const char *t1, const char *v, long long m);
/* "if (v < 0 || v >= n) continue;" with only the halves that can happen. */
void dy_cg_bounds(dy_cg_ctx *ctx, const char *v, bool lo, bool hi, long long n);

/* emit_ops.c: matmul with an optional epilogue c = act(c + in2[j]) (bias
 * along the last dim). act is NULL/"" or a name dy_cg_act_expr knows. */
dy_status dy_cg_matmul_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias,
                                  const char *act, double alpha);

/* emit_nn.c: conv2d with an optional epilogue act(conv + in2[channel]); act
 * as for dy_cg_act_expr. The scratch its GEMM form needs. */
dy_status dy_cg_conv2d_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias, const char *act,
                                  double alpha);
int64_t dy_cg_conv_scratch(const dy_program *p, const dy_op *op, int threads);
/* The geometry of a conv2d / conv2d_transpose op. */
typedef struct {
  long long c, h, w;            /* input [N, c, h, w]      */
  long long o, oh, ow;          /* output [N, o, oh, ow]   */
  long long kh, kw;
  long long sh, sw, dh, dw;     /* strides, dilations      */
  long long pt, pl;             /* top and left padding    */
  long long groups;
} dy_cg_conv_geom;
dy_cg_conv_geom dy_cg_conv_geom_of(const dy_program *p, const dy_op *op);

/* emit_fused.c: the C expression of activation act ("", "relu", "relu6",
 * "sigmoid", "tanh", "leaky_relu", "gelu", "silu") applied to expression x
 * (which may appear several times: pass a variable). alpha is leaky_relu's
 * slope. False if act is unknown. */
bool dy_cg_act_expr(const char *act, double alpha, const char *x, char *buf,
                      size_t n);

/* emit_mathlib.c: the math functions of the generated C (no libm):
 * dy_expf, dy_logf, dy_log1pf, dy_expm1f, dy_sqrtf, dy_tanhf, dy_sigmoidf,
 * dy_erff, dy_powf, dy_fabsf, dy_copysignf, dy_fminf, dy_fmaxf, dy_truncf,
 * dy_floorf, dy_ceilf, dy_roundf, dy_isnanf (int), dy_select(c, a, b), and
 * the macros DY_INFINITY and DY_NAN. Emitters write these names in kernel
 * text; dy_mathlib_emit appends to out the definitions of every one that
 * code names (as a whole identifier) and of those they call, in
 * dependency order, or nothing when it names none. Errors: see the file. */
void dy_mathlib_emit(dy_buf *out, const char *code);
/* The table's names, 0 <= i < dy_mathlib_count() (for tests). */
int dy_mathlib_count(void);
const char *dy_mathlib_name(int i);

/* ---- emit_simd.c: the SIMD helpers (dy_vf, dy_f16) every vector kernel
 * uses; written once per file, before the kernels, when one uses them ---- */
void dy_cg_simd_prelude(dy_buf *out);

/* What the kernels of a file use (dy_cg_ctx.uses), so the file carries
 * only the helpers it needs. */
enum {
  DY_USES_SIMD = 1,      /* the helpers of emit_simd.c */
  DY_USES_GEMM = 2,      /* the micro-kernels of emit_gemm.c */
  DY_USES_THREADS = 4,   /* dy_parallel (emit_gemm.c; --threads) */
};

/* ---- emit_gemm.c: the GEMM micro-kernel, weight packing, loop nest ---- */

/* How a constant operand reaches its kernel: as is, or packed at compile
 * time into the layout the micro-kernel reads. */
typedef enum {
  DY_PACK_NONE,
  DY_PACK_B16,   /* matmul's B [.., K, N] (or [.., N, K] with trans): per
                  * matrix, ceil(N/16) panels of K x 16, zero-padded */
  DY_PACK_A6,    /* conv's weight [O, C/g, kh, kw]: per group, ceil(O/g/6)
                  * micro-panels of (C/g*kh*kw) x 6, zero-padded */
} dy_pack_kind;

typedef struct {
  dy_pack_kind kind;
  int64_t mats;          /* matrices (B16) or groups (A6), one after another */
  int64_t rows, cols;    /* per matrix: K x N (B16), or O/g x C/g*kh*kw (A6) */
  bool trans;            /* B16 from a [N, K] weight (transpose_y) */
} dy_pack;

/* How input i of op is passed (the kernel and NAME_run agree through this). */
dy_pack dy_gemm_pack_of(const dy_program *p, const dy_op *op, int i);
int64_t dy_pack_numel(const dy_pack *k);
/* The packed copy of src (rows x cols per matrix, f32) into dst. */
void dy_gemm_pack_data(const dy_pack *k, const float *src, float *dst);
const char *dy_pack_suffix(const dy_pack *k);          /* "_p16", "_p6" */
void dy_pack_describe(const dy_pack *k, char *buf, size_t n);
/* The flag constants, dy_gemm_out, dy_gemm_ukr1..6 and dy_gemm_tile. */
void dy_cg_gemm_prelude(dy_buf *out);
/* <pthread.h> and dy_parallel(n, fn, arg), which runs fn over [0, n) in
 * `threads` slices (only in files of kernels compiled with --threads). */
void dy_cg_thread_prelude(dy_buf *out, int threads);
/* Kernels split work over threads when the work (multiply-adds) of one
 * call reaches this; smaller calls stay on the caller's thread. */
#define DY_THREAD_MIN_WORK (1 << 23)
/* Arena scratch of a matmul whose B is packed at run time (0 if none). */
int64_t dy_gemm_matmul_scratch(const dy_program *p, const dy_op *op);
/* Panels of a run-time B of depth k and n columns packed at a time. */
int64_t dy_gemm_runtime_panels(int64_t k, int64_t n);
/* The DY_GEMM_* flag of activation act ("" for none, NULL if unknown), and
 * the epilogue flags of the last block of k ("DY_GEMM_BIAS_COL |
 * DY_GEMM_RELU", "0"); bias_flag may be NULL. */
const char *dy_gemm_act_flag(const char *act);
void dy_gemm_epilogue_flags(char *buf, size_t n, const char *bias_flag, const char *act);

/* One GEMM, C = act(A B + bias): C expressions for the operands, literal
 * n and k. A(i, kk) = a[i*rsa + kk*csa], B in panels at b (panel p at
 * b + p*k*16), C(i, j) = c[i*ldc + j], bias[j] (NULL: none). */
typedef struct {
  const char *m;
  int64_t n, k;
  const char *a, *rsa, *csa;
  const char *b;
  const char *c, *ldc;
  const char *bias;
  const char *act;
  double alpha;
} dy_gemm_call;
dy_status dy_cg_gemm_loops(dy_cg_ctx *ctx, dy_error *err, const dy_gemm_call *g);
/* Code packing columns [j0, j0+w) of a run-time B (k x n row-major, or
 * n x k when trans) into panels at dst. */
void dy_cg_gemm_pack_b(dy_cg_ctx *ctx, const char *src, const char *dst, int64_t k,
                         int64_t n, bool trans, const char *j0, int64_t w);

#endif /* DY_CODEGEN_INTERNAL_H */
