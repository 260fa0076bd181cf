/* cg_text.h - codegen floor 0 (codegen/text/): text buffers and literals
 * (buf.c), the emitter-context helpers (emit_util.c: sizes, index
 * expressions, loop nests, the n-ary broadcast loop), the lines and loops
 * of kernel text (lines.c) and, in templates.h,
 * the runtime pieces of the generated C (templates.c, rt/). Depends on
 * nothing of codegen/ but the public dy_codegen.h; every floor above
 * includes it. The floors are described in codegen/README.md. */
#ifndef DY_CODEGEN_CG_TEXT_H
#define DY_CODEGEN_CG_TEXT_H

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

/* Hand the text over (caller frees); NULL if the buffer ran out of memory,
 * in which case the buffer is freed. Leaves b empty. */
char *dy_buf_take(dy_buf *b);

/* ---- emit_util.c: helpers for emitters ---- */

/* A size k * E: a constant k times a symbolic factor E, the dim expression
 * e (ir/core/dims.c; e >= 0: no symbolic factor, E = 1). p counts the symbolic
 * dims multiplied in (0: static). With the batch alone, E = B^p. */
typedef struct {
  int64_t k;
  int p;
  int64_t e;
} dy_ext;
/* The C name of size symbol sym in generated code: "batch", "dim_seq". */
const char *dy_cg_sym_cname(int sym, char *buf, size_t n);
/* A dim expression as C text ("batch*dim_seq*8", "(dim_seq + 1)"). */
const char *dy_cg_dim_expr(int64_t d, char *buf, size_t n);

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
/* Open n nested (braceless) loops over extents e with variables vars;
 * dy_cg_close_loops closes the n innermost loops. */
void dy_cg_open_loops(dy_cg_ctx *ctx, int n, const dy_ext *e, char (*vars)[4]);
void dy_cg_close_loops(dy_cg_ctx *ctx, int n);
/* The elementwise loop nest for an op of 1 to 3 inputs broadcasting
 * numpy-style to the output: dims that broadcast alike are collapsed, then
 * y[..] = fmt(a[..], b[..], c[..]). fmt has one %s per input
 * ("%s + %s", "dy_powf(%s, %s)", "%s ? %s : %s"). Dtype checks are the
 * caller's. */
dy_status dy_cg_broadcast(dy_cg_ctx *ctx, dy_error *err, const char *fmt);
/* The same loop nest, with a body that binds the inputs' elements to
 * v0, v1, v2 (f32) and stores expr, which may name each several times. */
dy_status dy_cg_broadcast_let(dy_cg_ctx *ctx, dy_error *err, const char *expr);
/* The output as a flat copy of the input (a view op whose output is not
 * aliased to its input): one loop over the elements, none when it is empty. Fails
 * if the dtypes or the sizes differ. */
dy_status dy_cg_flat_copy(dy_cg_ctx *ctx, dy_error *err);

/* "v * m + a" for an index, simplified: "oy", "oy * 2 - 1", "i * 2". */
const char *dy_cg_affine(char *buf, size_t n, const char *v, long long m, long long a);
/* The sum of two affine terms "t1 + t2" where t2 may vanish. */
const char *dy_cg_sum2(char *buf, size_t n, const char *t1, const char *v, long long m);
/* "if (v < 0 || v >= n) continue;" with only the halves that can happen. */
void dy_cg_bounds(dy_cg_ctx *ctx, const char *v, bool lo, bool hi, long long n);

/* ---- lines.c: lines and loops of kernel text (dy_cg_line, dy_cg_for,
 * dy_cg_end: dy_codegen.h) ---- */

/* Does identifier id occur as a whole token in text[0, len)? */
bool dy_cg_mentions_n(const char *text, size_t len, const char *id);
/* Close every loop still open (after an emitter failed: their text is
 * dropped); false when there was one. */
bool dy_cg_loops_close_all(dy_cg_ctx *ctx);

/* What the kernels of a file use (dy_cg_ctx.uses), so the file carries
 * only the helpers it needs. */
enum {
  DY_USES_SIMD = 1,      /* the helpers of emit_simd.c */
  DY_USES_GEMM = 2,      /* the micro-kernels of emit_gemm.c */
  DY_USES_THREADS = 4,   /* dy_parallel (emit_gemm.c; --threads) */
  DY_USES_QFIXED = 8,    /* the fixed-point helpers of ir/dy_qfixed.h (emit_quant.c) */
  DY_USES_PACK_A = 16,   /* dy_gemm_pack_a (emit_gemm.c: matmul's A packed at run time) */
  DY_USES_GEMM_ROWS = 0xFFFu << 8, /* bit 7 + mr: dy_gemm_tile gets tiles of mr rows
                                    * (1..12, DY_USES_GEMM_ROW; dy_cg_gemm_rows) */
  DY_USES_GEMM_TILE_ACT = 1u << 20, /* a GEMM's flags name DY_GEMM_ACT: the micro-kernels
                                     * call dy_act_tile (source.c finds it in the text) */
};
#define DY_USES_GEMM_ROW(mr) (1u << (7 + (mr)))

#endif /* DY_CODEGEN_CG_TEXT_H */
