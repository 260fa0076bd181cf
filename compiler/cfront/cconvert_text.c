/* cconvert_text.c - the bottom of the source converter
 * (cconvert_internal.h): a growable text, and one pass's view of the text
 * it parsed: tokens, offsets, statement ranges, positions in the user's
 * file (through the #line directives earlier passes wrote), copying pieces
 * with their #line, and refusals printed with a caret.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cconvert_internal.h"

/* ---- a growable text ---- */

void cv_put_n(text *t, const char *s, size_t n) {
  if (t->oom)
    return;
  if (t->n + n + 1 > t->cap) {
    size_t cap = (t->n + n + 1) * 2;
    char *p = realloc(t->s, cap);
    if (!p) {
      t->oom = true;
      return;
    }
    t->s = p;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = 0;
}

void cv_put(text *t, const char *s) { cv_put_n(t, s, strlen(s)); }

void cv_putf(text *t, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof buf) {
    t->oom = true;   /* no generated line is that long */
    return;
  }
  cv_put_n(t, buf, (size_t)n);
}

void cv_put_comment_text(text *t, const char *s) {
  for (; *s; s++) {
    if (*s == '\n')
      cv_put(t, "\\n");
    else if (*s == '*' && s[1] == '/')
      cv_put(t, "* "); /* the '/' follows: "* /" cannot end the comment */
    else
      cv_put_n(t, s, 1);
  }
}

/* ---- one pass: the current text, parsed ---- */

unsigned cv_offset_of(CXSourceLocation l) {
  unsigned off;
  clang_getFileLocation(l, NULL, NULL, NULL, &off);
  return off;
}

bool cv_in_main_file(CXSourceLocation l) {
  return clang_Location_isFromMainFile(l) != 0;
}

/* Where offset `off` of the current text is in the user's file: read off
 * the text and its #line directives (libclang's location for an offset
 * inside a macro's argument would be the macro's). */
void cv_user_pos(const pass *p, unsigned off, char *file, size_t n, unsigned *line,
                 unsigned *col) {
  snprintf(file, n, "%s", p->file);
  unsigned ln = 1, bol = 0;
  for (unsigned i = 0; i < off && i < p->len; i++) {
    if (p->src[i] != '\n')
      continue;
    ln++;
    bol = i + 1;
    unsigned long directive;
    int used = 0;
    if (sscanf(p->src + bol, "#line %lu \"%n", &directive, &used) == 1 && used > 0) {
      /* the line after it is line `directive` of the file it names, as
       * cv_put_line_at escaped it: \\, \" and \n undone */
      const char *q = p->src + bol + used;
      size_t k = 0;
      for (; *q && *q != '"' && *q != '\n' && k + 1 < n; q++) {
        char c = *q;
        if (c == '\\' && q[1] && q[1] != '\n')
          c = *++q == 'n' ? '\n' : *q;
        file[k++] = c;
      }
      if (n)
        file[k] = 0;
      ln = (unsigned)directive - 1;
    }
  }
  *line = ln;
  *col = off - bol + 1;
}

/* A refusal at offset off: printed with its caret, *shown set. */
dy_status cv_refuse(const pass *p, unsigned off, const char *fmt, ...) {
  char msg[1024], file[4096];
  unsigned line, col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cv_user_pos(p, off, file, sizeof file, &line, &col);
  return dy_cfront_source_error(file, line, col, p->shown, p->err, msg);
}

/* The index of the first token starting at or after off (n_toks if none). */
unsigned cv_tok_at(const pass *p, unsigned off) {
  unsigned lo = 0, hi = p->n_toks;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (p->tok_off[mid] < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

bool cv_tok_is(const pass *p, unsigned i, const char *s) {
  if (i >= p->n_toks)
    return false;
  CXString t = clang_getTokenSpelling(p->tu, p->toks[i]);
  bool eq = strcmp(clang_getCString(t), s) == 0;
  clang_disposeString(t);
  return eq;
}

unsigned cv_tok_end(const pass *p, unsigned i) {
  return cv_offset_of(clang_getRangeEnd(clang_getTokenExtent(p->tu, p->toks[i])));
}

/* The token closing the bracket at token i (n_toks if unbalanced). */
unsigned cv_matching(const pass *p, unsigned i) {
  int depth = 0;
  for (unsigned k = i; k < p->n_toks; k++) {
    if (cv_tok_is(p, k, "(") || cv_tok_is(p, k, "{") || cv_tok_is(p, k, "["))
      depth++;
    else if (cv_tok_is(p, k, ")") || cv_tok_is(p, k, "}") || cv_tok_is(p, k, "]"))
      if (--depth == 0)
        return k;
  }
  return p->n_toks;
}

/* A cursor's source range as offsets of the current text: [*b, *e), the
 * statement's own `;` included when one follows it. */
void cv_stmt_range(const pass *p, CXCursor c, unsigned *b, unsigned *e) {
  CXSourceRange r = clang_getCursorExtent(c);
  *b = cv_offset_of(clang_getRangeStart(r));
  unsigned end = cv_offset_of(clang_getRangeEnd(r));
  unsigned last = cv_tok_at(p, end);   /* the first token at/after the end */
  if (last > 0 && (last == p->n_toks || p->tok_off[last] >= end))
    last--;
  if (last < p->n_toks && p->tok_off[last] < *b)
    last = cv_tok_at(p, *b);
  *e = last < p->n_toks ? cv_tok_end(p, last) : (unsigned)p->len;
  if (last + 1 < p->n_toks && cv_tok_is(p, last + 1, ";") &&
      clang_getCursorKind(c) != CXCursor_CompoundStmt && !cv_tok_is(p, last, ";") &&
      !cv_tok_is(p, last, "}"))
    *e = cv_tok_end(p, last + 1);
}

void cv_put_src(text *t, const pass *p, unsigned b, unsigned e) {
  cv_put_n(t, p->src + b, e - b);
}

/* `#line` for offset off, then spaces up to its column, so that what
 * follows is where the user wrote it (without directives: a newline and
 * the indentation). */
void cv_put_line_at(text *t, const pass *p, const style *st, unsigned off, bool pad) {
  char file[4096];
  unsigned line, col;
  cv_user_pos(p, off, file, sizeof file, &line, &col);
  if (t->n && t->s[t->n - 1] != '\n')
    cv_put(t, "\n");
  cv_putf(t, "#line %u \"", line);
  for (const char *c = file; *c; c++) { /* a string literal: cv_user_pos reads it back */
    if (*c == '"' || *c == '\\')
      cv_put(t, "\\");
    if (*c == '\n')
      cv_put(t, "\\n");
    else
      cv_put_n(t, c, 1);
  }
  cv_put(t, "\"");
  (void)st;
  if (pad) {
    /* the indentation of the line it was on, for strip_lines */
    unsigned bol = off, ind = 0;
    while (bol > 0 && p->src[bol - 1] != '\n')
      bol--;
    while (bol + ind < off && (p->src[bol + ind] == ' ' || p->src[bol + ind] == '\t'))
      ind++;
    cv_putf(t, " /* column %u, indent %u */", col, ind);
  }
  cv_put(t, "\n");
  for (unsigned i = 1; pad && i < col; i++)
    cv_put(t, " ");
}
