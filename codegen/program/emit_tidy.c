/* emit_tidy.c - floor 3: text passes the driver runs over each kernel the
 * emitters wrote, before it goes into NAME.c.
 *
 *   dy_cg_tidy_loops   a loop with one trip becomes its body with the
 *                      index fixed: "for (int64_t jp = 0; jp < 1; jp++) {"
 *                      turns into "{" and "const int64_t jp = 0;" (left out
 *                      when the body does not name jp); a braceless one
 *                      becomes its statement. Loops whose body has a
 *                      `continue` or `break` are kept (they would change
 *                      meaning).
 *   dy_cg_rename       whole identifiers renamed (the driver's in0, out0 ->
 *                      x, y, ...)
 *
 * Both work on the text the emitters print through dy_cg_line: one
 * statement or brace per line, two spaces of indent per level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"

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

typedef struct {
  const char *s;
  size_t n;      /* without the newline */
  int indent;
} line;

static int indent_of(const char *s, size_t n) {
  int k = 0;
  while ((size_t)k < n && s[k] == ' ')
    k++;
  return k;
}

/* Parse "for (int64_t V = A; V < B; V++)" or "... V += S)" and an optional
 * " {" (at the line's start after its indent). True with the variable, its
 * first value and whether a brace opens a block, when the loop runs exactly
 * once. */
static bool one_trip(const line *l, char *var, size_t vn, long long *first, bool *brace) {
  char buf[256];
  size_t len = l->n - (size_t)l->indent;
  if (len >= sizeof buf)
    return false;
  memcpy(buf, l->s + l->indent, len);
  buf[len] = '\0';
  char v1[64], v2[64], v3[64], tail[64];
  long long a, b, step = 1;
  int used = 0;
  if (sscanf(buf, "for (int64_t %63[A-Za-z0-9_] = %lld; %63[A-Za-z0-9_] < %lld; %n", v1, &a,
             v2, &b, &used) != 4 || used <= 0)
    return false;
  const char *rest = buf + used;
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

static bool starts_with(const line *l, const char *w) {
  size_t n = strlen(w);
  return l->n - (size_t)l->indent >= n && memcmp(l->s + l->indent, w, n) == 0;
}

/* Would a continue or break in lines (i, end] leave loop i (rather than a
 * loop or switch nested in it)? The statement a line belongs to is read
 * from the indentation. */
static bool jumps_out(const line *ls, int i, int end) {
  for (int j = i + 1; j <= end; j++) {
    bool cont = dy_cg_mentions_n(ls[j].s, ls[j].n, "continue");
    bool brk = dy_cg_mentions_n(ls[j].s, ls[j].n, "break");
    if (!cont && !brk)
      continue;
    bool nested = starts_with(&ls[j], "for ") || starts_with(&ls[j], "while ") ||
                  starts_with(&ls[j], "do ") || (brk && starts_with(&ls[j], "switch "));
    int ind = ls[j].indent;
    for (int k = j - 1; k > i && !nested; k--) {
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

static char *tidy_once(const char *text) {
  if (!text)
    text = "";
  int nl = 0;
  for (const char *c = text; *c; c++)
    nl += *c == '\n';
  line *ls = malloc(sizeof *ls * (size_t)(nl + 1));
  if (!ls)
    return NULL;
  int n = 0;
  for (const char *c = text; *c;) {
    const char *e = strchr(c, '\n');
    size_t len = e ? (size_t)(e - c) : strlen(c);
    ls[n] = (line){c, len, indent_of(c, len)};
    n++;
    c += len + (e ? 1 : 0);
  }
  /* per line: -1 keep, else replaced by "{" (brace loops) or dropped */
  dy_buf out = {0};
  for (int i = 0; i < n; i++) {
    const line *l = &ls[i];
    char var[64];
    long long first;
    bool brace;
    int end = -1; /* the closing "}" of a brace loop, or the statement */
    if (one_trip(l, var, sizeof var, &first, &brace)) {
      if (brace) {
        int depth = 0;
        for (int j = i + 1; j < n; j++) {
          const line *m = &ls[j];
          if (m->indent == l->indent && m->n == (size_t)l->indent + 1 &&
              m->s[l->indent] == '}') {
            end = depth == 0 ? j : -1;
            break;
          }
          if (m->n > (size_t)m->indent && m->indent <= l->indent) {
            end = -1;
            break;
          }
          for (size_t k = 0; k < m->n; k++)
            depth += m->s[k] == '{' ? 1 : m->s[k] == '}' ? -1 : 0;
        }
      } else if (i + 1 < n && ls[i + 1].indent == l->indent + 2 &&
                 !starts_with(&ls[i + 1], "#")) {
        /* a braceless body: one statement, the lines indented deeper */
        end = i + 1;
        while (end + 1 < n && ls[end + 1].indent > l->indent)
          end++;
        if (ls[end].n == 0 || (ls[end].s[ls[end].n - 1] != ';' && ls[end].s[ls[end].n - 1] != '}'))
          end = -1;
      }
    }
    if (end > i && jumps_out(ls, i, end))
      end = -1;
    if (end <= i) {
      dy_buf_putn(&out, l->s, l->n);
      dy_buf_putc(&out, '\n');
      continue;
    }
    size_t from = (size_t)(ls[i + 1].s - text);
    size_t to = (size_t)(ls[end].s - text) + (brace ? 0 : ls[end].n);
    bool named = dy_cg_mentions_n(text + from, to - from, var);
    if (brace) {
      dy_buf_printf(&out, "%*s{\n", l->indent, "");
      if (named)
        dy_buf_printf(&out, "%*sconst int64_t %s = %lld;\n", l->indent + 2, "", var, first);
    } else {
      /* the statement, in a block that fixes the index or dedented */
      if (named)
        dy_buf_printf(&out, "%*s{\n%*sconst int64_t %s = %lld;\n", l->indent, "",
                      l->indent + 2, "", var, first);
      for (int j = i + 1; j <= end; j++) {
        const line *m = &ls[j];
        if (named)
          dy_buf_putn(&out, m->s, m->n);
        else
          dy_buf_putn(&out, m->s + (m->indent >= 2 ? 2 : 0), m->n - (m->indent >= 2 ? 2 : 0));
        dy_buf_putc(&out, '\n');
      }
      if (named)
        dy_buf_printf(&out, "%*s}\n", l->indent, "");
      i = end;
    }
  }
  free(ls);
  return dy_buf_take(&out);
}

char *dy_cg_tidy_loops(const char *text) {
  char *t = tidy_once(text);
  /* a pass keeps the statement of a braceless loop as it is: again until
   * nothing changes (each pass removes a loop, so this ends) */
  for (int pass = 0; t && pass < 64; pass++) {
    char *u = tidy_once(t);
    bool same = u && strcmp(u, t) == 0;
    free(t);
    t = u;
    if (same)
      break;
  }
  return t;
}

char *dy_cg_rename(const char *text, const char *const *from, const char *const *to, int n) {
  dy_buf out = {0};
  if (!text)
    text = "";
  for (const char *c = text; *c;) {
    if (ident_char(*c) && (c == text || !ident_char(c[-1]))) {
      const char *e = c;
      while (ident_char(*e))
        e++;
      size_t len = (size_t)(e - c);
      int k = 0;
      while (k < n && !(strlen(from[k]) == len && memcmp(from[k], c, len) == 0))
        k++;
      if (k < n)
        dy_buf_puts(&out, to[k]);
      else
        dy_buf_putn(&out, c, len);
      c = e;
    } else {
      dy_buf_putc(&out, *c++);
    }
  }
  return dy_buf_take(&out);
}
