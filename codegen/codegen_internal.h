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

#endif /* DY_CODEGEN_INTERNAL_H */
