/* buf.c - the growable text buffer the emitters write into.
 *
 * A dy_buf starts zeroed ({0}). Appending never fails loudly: on allocation
 * failure the buffer sets `oom` and ignores further text, and dy_codegen
 * reports DY_STATUS_OUT_OF_MEMORY once at the end, so emitters need not
 * check every call.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_codegen.h"
#include "cg_text.h"

/* Make room for n more bytes plus the terminating NUL. */
static bool reserve(dy_buf *b, size_t n) {
  if (b->oom)
    return false;
  if (b->len + n + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1) {
    if (cap > SIZE_MAX / 2) {
      b->oom = true;
      return false;
    }
    cap *= 2;
  }
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void dy_buf_vprintf(dy_buf *b, const char *fmt, va_list ap) {
  char small[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    b->oom = true;
  } else if (reserve(b, (size_t)n)) {
    if ((size_t)n < sizeof small)
      memcpy(b->s + b->len, small, (size_t)n + 1);
    else
      vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  }
  va_end(ap2);
}

void dy_buf_printf(dy_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dy_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void dy_buf_puts(dy_buf *b, const char *s) { dy_buf_putn(b, s, strlen(s)); }

void dy_buf_putn(dy_buf *b, const char *s, size_t n) {
  if (!reserve(b, n))
    return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void dy_buf_putc(dy_buf *b, char c) { dy_buf_putn(b, &c, 1); }

char *dy_buf_take(dy_buf *b) {
  if (b->oom) {
    dy_buf_free(b);
    return NULL;
  }
  if (!b->s && !reserve(b, 0))
    return NULL;
  if (b->len == 0)
    b->s[0] = '\0';
  char *s = b->s;
  *b = (dy_buf){0};
  return s;
}

void dy_buf_free(dy_buf *b) {
  free(b->s);
  *b = (dy_buf){0};
}

void dy_buf_put_comment(dy_buf *b, const char *s) {
  char prev = 0;
  for (; *s; s++) {
    char c = *s;
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
      c = '?';
    /* Break up the pairs that would end or nest a comment or start a
     * trigraph. */
    if ((prev == '*' && c == '/') || (prev == '/' && c == '*') ||
        (prev == '?' && c == '?'))
      dy_buf_putc(b, ' ');
    dy_buf_putc(b, c);
    prev = c;
  }
}

void dy_buf_put_cstring(dy_buf *b, const char *s) {
  dy_buf_putc(b, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\' || c == '?')
      dy_buf_printf(b, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      dy_buf_printf(b, "\\%03o", c);
    else
      dy_buf_putc(b, (char)c);
  }
  dy_buf_putc(b, '"');
}

bool dy_float_literal(float v, char *buf, size_t n) {
  if (isnan(v) || isinf(v))
    return false;
  /* 9 significant digits round-trip every float (FLT_DECIMAL_DIG). */
  char t[48];
  snprintf(t, sizeof t, "%.9g", (double)v);
  /* Whatever the locale's decimal point, C wants '.'. */
  for (char *c = t; *c; c++)
    if (!((*c >= '0' && *c <= '9') || *c == '-' || *c == '+' || *c == 'e'))
      *c = '.';
  const char *suffix = strpbrk(t, ".e") ? "f" : ".0f";
  snprintf(buf, n, "%s%s", t, suffix);
  return true;
}

void dy_int64_literal(int64_t v, char *buf, size_t n) {
  /* -9223372036854775808 is not a constant in C: minus applied to a value
   * too big for any type. */
  if (v == INT64_MIN)
    snprintf(buf, n, "INT64_MIN");
  else
    snprintf(buf, n, "%lld", (long long)v);
}
