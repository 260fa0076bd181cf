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
 * "batch", "batch*10". Rotating buffer as dy_emit_dim. */
const char *dy_emit_product(dy_emit_ctx *ctx, int64_t k, int p);

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
const char *dy_ext_str(dy_emit_ctx *ctx, dy_ext e, char *buf, size_t n);

/* An index expression: terms "var * stride" joined by " + ". */
typedef struct {
  char s[1024];
  size_t n;
} dy_idxbuf;

void dy_idx_cat(dy_idxbuf *b, const char *t);
void dy_idx_add(dy_emit_ctx *ctx, dy_idxbuf *b, const char *var, dy_ext stride);
const char *dy_idx_str(const dy_idxbuf *b);       /* "0" when empty */
void dy_ptr_plus(dy_idxbuf *out, const char *base, const dy_idxbuf *idx);

const char *dy_ctype(dy_dtype t);                 /* "float", "int64_t", ... */
const char *dy_zero_of(dy_dtype t);               /* "0.0f" or "0"          */
/* An error naming the op and its types: "codegen: add: what (...)". */
dy_status dy_emit_type_error(dy_emit_ctx *ctx, dy_error *err, dy_status s,
                             const char *what);
extern char dy_loop_var[DY_MAX_DIMS][4];          /* "i0".."i7" */
extern char dy_bvars[DY_MAX_DIMS][4];             /* "b0".."b7" */
/* Open n nested loops over extents e with variables vars (indent rises). */
void dy_emit_open_loops(dy_emit_ctx *ctx, int n, const dy_ext *e,
                        char (*vars)[4]);
/* The elementwise loop nest for an op of 1 to 3 inputs broadcasting
 * numpy-style to out0: dims that broadcast alike are collapsed, then
 * out0[..] = fmt(in0[..], in1[..], in2[..]). fmt has one %s per input
 * ("%s + %s", "powf(%s, %s)", "%s ? %s : %s"). Dtype checks are the
 * caller's. */
dy_status dy_emit_broadcast(dy_emit_ctx *ctx, dy_error *err, const char *fmt);
/* The same loop nest, with a body that binds the inputs' elements to
 * v0, v1, v2 (f32) and stores expr, which may name each several times. */
dy_status dy_emit_broadcast_let(dy_emit_ctx *ctx, dy_error *err, const char *expr);

/* emit_ops.c: matmul with an optional epilogue c = act(c + in2[j]) (bias
 * along the last dim). act is NULL/"" or a name dy_emit_act_expr knows. */
dy_status dy_emit_matmul_epilogue(dy_emit_ctx *ctx, dy_error *err, bool bias,
                                  const char *act, double alpha);

/* emit_fused.c: the C expression of activation act ("", "relu", "relu6",
 * "sigmoid", "tanh", "leaky_relu", "gelu", "silu") applied to expression x
 * (which may appear several times: pass a variable). alpha is leaky_relu's
 * slope. False if act is unknown. */
bool dy_emit_act_expr(const char *act, double alpha, const char *x, char *buf,
                      size_t n);

#endif /* DY_CODEGEN_INTERNAL_H */
