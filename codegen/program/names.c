/* names.c - floor 3: the C names of what the generated code declares. A
 * Program's var names are arbitrary strings; each becomes a C identifier
 * (non-alphanumerics to '_', a '_' before a leading digit), with a prefix
 * where it could clash with a keyword, a macro of the headers NAME.c
 * includes, a name of NAME_run's own or another file-scope name of the
 * model (v_<name>), made unique by _2, _3, ...: NAME_run's parameters (the
 * feeds and fetches) and the weights' arrays (w_<name>). cg_sanitize and
 * cg_dedup serve the other names (plan.c: packed weights, arena and state
 * offsets). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_alnum(char c) { return is_alpha(c) || (c >= '0' && c <= '9'); }

/* Is s a C identifier (the model name must be one)? */
bool cg_is_identifier(const char *s) {
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
char *cg_sanitize(const char *name, const char *prefix) {
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
void cg_dedup(char *s, char *const *taken, int n) {
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

dy_status cg_make_names(cg_gen *g) {
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
    char *s = cg_sanitize(name, "");
    if (s && risky_param(s, g->upper, g->lower)) {
      char *t = cg_sanitize(name, "v_");
      free(s);
      s = t;
    }
    if (!s) {
      free(taken);
      return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    cg_dedup(s, taken, nt);
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
    char *s = cg_sanitize(p->vars[i]->name, "w_");
    if (!s) {
      free(wt);
      return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    cg_dedup(s, wt, nw);
    wt[nw++] = s;
    g->weight[i] = s;
  }
  free(wt);
  return DY_OK;
}
