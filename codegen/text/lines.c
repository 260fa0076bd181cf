/* lines.c - floor 0: the lines and loops of kernel text. dy_cg_line
 * appends a line at the context's indent. An emitter opens a loop with
 * dy_cg_for, giving its header as it would print it,
 *
 *   for (int64_t V = A; V < B; V++)        or   ... V += S)
 *
 * optionally ending in " {" (a block, closed by dy_cg_end's "}"), else a
 * braceless loop whose body is the one statement written before its
 * dy_cg_end. A loop of one trip (A and B integer literals, B - A in
 * (0, S]) is not printed as a loop: its body is written aside, and
 * dy_cg_end puts it in place with the index fixed,
 *
 *   {                                  the block of a loop with a brace, or
 *     const int64_t V = A;             of a braceless one whose body names
 *     ...body...                       V (the line only when it does);
 *   }
 *   ...statement...                    a braceless one's statement alone, a
 *                                      level up, when it does not name V.
 *
 * A body that may `continue` or `break` out of the loop (not out of a loop
 * or switch inside it) keeps its loop, as does a braceless one whose body
 * is not one statement a level deeper. Loops nest; each dy_cg_end closes
 * the innermost open one. The text each line of a body is written with is
 * final: nothing rewrites a kernel afterwards. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_text.h"

void dy_cg_line(dy_cg_ctx *ctx, const char *fmt, ...) {
  for (int i = 0; i < ctx->indent; i++)
    dy_buf_puts(ctx->body, "  ");
  va_list ap;
  va_start(ap, fmt);
  dy_buf_vprintf(ctx->body, fmt, ap);
  va_end(ap);
  dy_buf_putc(ctx->body, '\n');
}

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

bool dy_cg_mentions_n(const char *text, size_t len, const char *id) {
  size_t n = strlen(id);
  if (!n || len < n)
    return false;
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(text + i, id, n) == 0 && (i == 0 || !ident_char(text[i - 1])) &&
        (i + n == len || !ident_char(text[i + n])))
      return true;
  return false;
}

/* Is head "for (int64_t V = A; V < B; V++)" or "... V += S)", then " {" or
 * nothing, and of one trip? Its variable, first value and brace. */
static bool one_trip(const char *head, char *var, size_t vn, long long *first, bool *brace) {
  char v1[64], v2[64], v3[64], tail[64];
  long long a, b, step = 1;
  int used = 0;
  if (sscanf(head, "for (int64_t %63[A-Za-z0-9_] = %lld; %63[A-Za-z0-9_] < %lld; %n", v1, &a,
             v2, &b, &used) != 4 || used <= 0)
    return false;
  const char *rest = head + used;
  int used2 = 0;
  if (sscanf(rest, "%63[A-Za-z0-9_]++)%n", v3, &used2) == 1 && used2 > 0) {
    step = 1;
  } else if (sscanf(rest, "%63[A-Za-z0-9_] += %lld)%n", v3, &step, &used2) == 2 && used2 > 0) {
    if (step < 1)
      return false;
  } else {
    return false;
  }
  if (strcmp(v1, v2) != 0 || strcmp(v1, v3) != 0 || strlen(v1) + 1 > vn)
    return false;
  snprintf(tail, sizeof tail, "%s", rest + used2);
  if (strcmp(tail, " {") == 0)
    *brace = true;
  else if (tail[0] == '\0')
    *brace = false;
  else
    return false;
  if (!(b > a && b - a <= step))
    return false;
  snprintf(var, vn, "%s", v1);
  *first = a;
  return true;
}

void dy_cg_for(dy_cg_ctx *ctx, const char *fmt, ...) {
  char head[sizeof ctx->loop[0].head];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  if (ctx->n_loops >= DY_CG_MAX_LOOPS || len < 0 || (size_t)len >= sizeof head) {
    ctx->body->oom = true; /* an emitter's bug: nested too deep, a header too long */
    return;
  }
  dy_cg_loop *l = &ctx->loop[ctx->n_loops++];
  *l = (dy_cg_loop){.parent = ctx->body, .indent = 2 * ctx->indent};
  memcpy(l->head, head, (size_t)len + 1);
  size_t hl = (size_t)len;
  l->brace = hl >= 2 && strcmp(head + hl - 2, " {") == 0;
  l->one = one_trip(head, l->var, sizeof l->var, &l->first, &l->brace);
  if (l->one)
    ctx->body = &l->body; /* the body goes aside until dy_cg_end */
  else
    dy_cg_line(ctx, "%s", head);
  ctx->indent++;
}

typedef struct {
  const char *s;
  size_t n;      /* without the newline */
  int indent;
} line;

static bool starts_with(const line *l, const char *w) {
  size_t n = strlen(w);
  return l->n - (size_t)l->indent >= n && memcmp(l->s + l->indent, w, n) == 0;
}

/* Would a continue or break in ls[0..n) leave the loop around them (rather
 * than a loop or switch nested in it)? Which statement a line belongs to is
 * read from the indentation. */
static bool jumps_out(const line *ls, int n) {
  for (int j = 0; j < n; j++) {
    bool cont = dy_cg_mentions_n(ls[j].s, ls[j].n, "continue");
    bool brk = dy_cg_mentions_n(ls[j].s, ls[j].n, "break");
    if (!cont && !brk)
      continue;
    bool nested = starts_with(&ls[j], "for ") || starts_with(&ls[j], "while ") ||
                  starts_with(&ls[j], "do ") || (brk && starts_with(&ls[j], "switch "));
    int ind = ls[j].indent;
    for (int k = j - 1; k >= 0 && !nested; k--) {
      if (ls[k].n == (size_t)ls[k].indent || ls[k].indent >= ind)
        continue;
      ind = ls[k].indent;
      nested = starts_with(&ls[k], "for ") || starts_with(&ls[k], "while ") ||
               starts_with(&ls[k], "do ") || (brk && starts_with(&ls[k], "switch "));
    }
    if (!nested)
      return true;
  }
  return false;
}

/* The lines of text (NULL when out of memory); *n their number. */
static line *lines_of(const char *text, int *n) {
  int nl = 0;
  for (const char *c = text; *c; c++)
    nl += *c == '\n';
  line *ls = malloc(sizeof *ls * (size_t)(nl + 1));
  if (!ls)
    return NULL;
  int k = 0;
  for (const char *c = text; *c;) {
    const char *e = strchr(c, '\n');
    size_t len = e ? (size_t)(e - c) : strlen(c);
    int ind = 0;
    while ((size_t)ind < len && c[ind] == ' ')
      ind++;
    ls[k++] = (line){c, len, ind};
    c += len + (e ? 1 : 0);
  }
  *n = k;
  return ls;
}

/* Does the loop of one trip l stay a loop? When its body may jump out of
 * it, is not a level deeper than the loop (a line of it at the loop's
 * indent or less: a preprocessor line, say) or has unbalanced braces, or
 * (braceless) is not one statement. */
static bool keeps_loop(const dy_cg_loop *l, const line *ls, int n) {
  if (l->brace) {
    int depth = 0;
    for (int i = 0; i < n; i++) {
      if (ls[i].n > (size_t)ls[i].indent && ls[i].indent <= l->indent)
        return true;
      for (size_t k = 0; k < ls[i].n; k++)
        depth += ls[i].s[k] == '{' ? 1 : ls[i].s[k] == '}' ? -1 : 0;
    }
    if (depth != 0)
      return true;
  } else {
    if (n == 0 || ls[0].indent != l->indent + 2 || starts_with(&ls[0], "#"))
      return true;
    for (int i = 1; i < n; i++)
      if (ls[i].indent <= l->indent)
        return true;
    const line *last = &ls[n - 1];
    if (last->n == 0 || (last->s[last->n - 1] != ';' && last->s[last->n - 1] != '}'))
      return true;
  }
  return jumps_out(ls, n);
}

void dy_cg_end(dy_cg_ctx *ctx) {
  if (ctx->n_loops <= 0) {
    ctx->body->oom = true; /* an emitter's bug: no loop to close */
    return;
  }
  dy_cg_loop *l = &ctx->loop[--ctx->n_loops];
  ctx->indent--;
  if (!l->one) {
    if (l->brace)
      dy_cg_line(ctx, "}");
    return;
  }
  dy_buf *out = l->parent;
  ctx->body = out;
  const char *text = l->body.s ? l->body.s : "";
  int n = 0;
  line *ls = lines_of(text, &n);
  if (!ls || l->body.oom) {
    out->oom = true;
  } else if (keeps_loop(l, ls, n)) {
    dy_buf_printf(out, "%*s%s\n", l->indent, "", l->head);
    dy_buf_puts(out, text);
    if (l->brace)
      dy_buf_printf(out, "%*s}\n", l->indent, "");
  } else if (l->brace || dy_cg_mentions_n(text, strlen(text), l->var)) {
    /* a block that fixes the index (when its body names it) */
    dy_buf_printf(out, "%*s{\n", l->indent, "");
    if (dy_cg_mentions_n(text, strlen(text), l->var))
      dy_buf_printf(out, "%*sconst int64_t %s = %lld;\n", l->indent + 2, "", l->var, l->first);
    dy_buf_puts(out, text);
    dy_buf_printf(out, "%*s}\n", l->indent, "");
  } else {
    /* a braceless loop's statement alone, a level up */
    for (int i = 0; i < n; i++) {
      size_t cut = ls[i].indent >= 2 ? 2 : 0;
      dy_buf_putn(out, ls[i].s + cut, ls[i].n - cut);
      dy_buf_putc(out, '\n');
    }
  }
  free(ls);
  dy_buf_free(&l->body);
}

bool dy_cg_loops_close_all(dy_cg_ctx *ctx) {
  bool balanced = ctx->n_loops == 0;
  while (ctx->n_loops > 0) {
    dy_cg_loop *l = &ctx->loop[--ctx->n_loops];
    if (l->one)
      dy_buf_free(&l->body);
    ctx->body = l->parent;
  }
  return balanced;
}
