/* dims.c - symbolic dims: named size symbols and dim expressions.
 *
 * A dim of a dy_type is an int64_t. A dim >= 0 is a static size. A negative
 * dim is the id of an interned dim expression over named size symbols:
 *
 *     c + k1 * s11*s12*... + k2 * s21*... + ...     (k_i > 0)
 *
 * at most DY_DIM_MAX_TERMS terms of at most DY_DIM_MAX_FACTORS symbols each.
 * -1 is the expression `batch` (the symbol "batch" alone), so every -1 of
 * the older IR and files keeps its meaning. Expressions are kept in a normal
 * form (each term's symbols sorted by name, terms sorted and merged, zero
 * terms dropped, a term-less expression is its constant), so two dims are
 * equal exactly when their ids are. The table is process-wide (inference
 * runs on types alone, without a Program) and guarded by a spin lock; it
 * only grows, so an id stays valid for the life of the process.
 *
 * Term coefficients are positive: an expression then grows with every
 * symbol, so its largest value within the symbols' upper bounds is its value
 * at the bounds (the memory plan's arena size). A result that would need a
 * negative coefficient, too many terms or factors, overflow, or an inexact
 * division is not expressible: the operation returns false and the caller
 * reports the op and its line.
 *
 * Symbols are interned by name ("batch" is symbol 0). A Program declares the
 * symbols it uses with an upper bound (and optionally a pinned value):
 * program.c, dy_program_declare_sym.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_checked.h"
#include "dy_ir.h"

/* ---- the process-wide tables ---- */

static atomic_flag lock = ATOMIC_FLAG_INIT;
static void table_lock(void) {
  while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire)) {
  }
}
static void table_unlock(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }

static char sym_names[DY_MAX_SYMS][DY_SYM_NAME_MAX];
static int n_syms_global;

static dy_dim_expr *exprs; /* exprs[i] is dim -(i+1) */
static int n_exprs, cap_exprs;

static bool valid_name(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= DY_SYM_NAME_MAX)
    return false;
  if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_'))
    return false;
  for (size_t i = 1; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

/* With the lock held. */
static int sym_intern_locked(const char *name) {
  if (n_syms_global == 0) {
    strcpy(sym_names[0], "batch");
    n_syms_global = 1;
  }
  for (int i = 0; i < n_syms_global; i++)
    if (strcmp(sym_names[i], name) == 0)
      return i;
  if (n_syms_global == DY_MAX_SYMS)
    return -1;
  strcpy(sym_names[n_syms_global], name);
  return n_syms_global++;
}

int dy_sym_id(const char *name) {
  if (!name || !valid_name(name))
    return -1;
  table_lock();
  int id = sym_intern_locked(name);
  table_unlock();
  return id;
}

const char *dy_sym_name(int sym) {
  if (sym == 0)
    return "batch";
  table_lock();
  const char *s = sym >= 0 && sym < n_syms_global ? sym_names[sym] : "?";
  table_unlock();
  return s;
}

int dy_sym_count(void) {
  table_lock();
  int n = n_syms_global ? n_syms_global : 1;
  table_unlock();
  return n;
}

/* ---- normal form ---- */

static int cmp_sym(int a, int b) { return strcmp(dy_sym_name(a), dy_sym_name(b)); }

static int cmp_term(const dy_dim_term *a, const dy_dim_term *b) {
  if (a->n != b->n)
    return a->n < b->n ? -1 : 1;
  for (int i = 0; i < a->n; i++) {
    int c = cmp_sym(a->sym[i], b->sym[i]);
    if (c)
      return c;
  }
  return 0;
}

static bool same_factors(const dy_dim_term *a, const dy_dim_term *b) {
  if (a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (a->sym[i] != b->sym[i])
      return false;
  return true;
}

/* Sort factors and terms, merge equal terms, drop zero ones. false when a
 * coefficient turns negative or a sum overflows. Works on up to 2x the
 * term limit (a product or sum before normalisation). */
typedef struct {
  int64_t c;
  int n_terms;
  dy_dim_term t[DY_DIM_MAX_TERMS * DY_DIM_MAX_TERMS + 2 * DY_DIM_MAX_TERMS];
} wide_expr;

static bool normalise(wide_expr *w, dy_dim_expr *out) {
  for (int i = 0; i < w->n_terms; i++) /* a term without factors is constant */
    if (w->t[i].n == 0) {
      if (!dy_ck_add(w->c, w->t[i].coef, &w->c))
        return false;
      w->t[i--] = w->t[--w->n_terms];
    }
  for (int i = 0; i < w->n_terms; i++) {
    dy_dim_term *t = &w->t[i];
    for (int a = 1; a < t->n; a++) /* insertion sort of the factors */
      for (int b = a; b > 0 && cmp_sym(t->sym[b - 1], t->sym[b]) > 0; b--) {
        int x = t->sym[b];
        t->sym[b] = t->sym[b - 1];
        t->sym[b - 1] = x;
      }
  }
  for (int a = 1; a < w->n_terms; a++)
    for (int b = a; b > 0 && cmp_term(&w->t[b - 1], &w->t[b]) > 0; b--) {
      dy_dim_term x = w->t[b];
      w->t[b] = w->t[b - 1];
      w->t[b - 1] = x;
    }
  memset(out, 0, sizeof *out);
  out->c = w->c;
  for (int i = 0; i < w->n_terms; i++) {
    dy_dim_term t = w->t[i];
    while (i + 1 < w->n_terms && same_factors(&w->t[i + 1], &t)) {
      if (!dy_ck_add(t.coef, w->t[i + 1].coef, &t.coef))
        return false;
      i++;
    }
    if (t.coef == 0)
      continue;
    if (t.coef < 0 || out->n_terms == DY_DIM_MAX_TERMS)
      return false;
    out->t[out->n_terms++] = t;
  }
  return true;
}

static bool expr_equal(const dy_dim_expr *a, const dy_dim_expr *b) {
  if (a->c != b->c || a->n_terms != b->n_terms)
    return false;
  for (int i = 0; i < a->n_terms; i++)
    if (a->t[i].coef != b->t[i].coef || !same_factors(&a->t[i], &b->t[i]))
      return false;
  return true;
}

/* The dim of a normalised expression: its constant when it has no terms
 * (false when negative), else its interned id. */
static bool intern(const dy_dim_expr *e, int64_t *out) {
  if (e->n_terms == 0) {
    if (e->c < 0)
      return false;
    *out = e->c;
    return true;
  }
  table_lock();
  if (n_exprs == 0) { /* -1 is batch */
    exprs = malloc(16 * sizeof *exprs);
    if (!exprs) {
      table_unlock();
      return false;
    }
    cap_exprs = 16;
    sym_intern_locked("batch");
    memset(&exprs[0], 0, sizeof exprs[0]);
    exprs[0].n_terms = 1;
    exprs[0].t[0] = (dy_dim_term){.coef = 1, .n = 1, .sym = {0}};
    n_exprs = 1;
  }
  for (int i = 0; i < n_exprs; i++)
    if (expr_equal(&exprs[i], e)) {
      table_unlock();
      *out = -(int64_t)(i + 1);
      return true;
    }
  if (n_exprs == cap_exprs) {
    dy_dim_expr *x = realloc(exprs, (size_t)cap_exprs * 2 * sizeof *exprs);
    if (!x) {
      table_unlock();
      return false;
    }
    exprs = x;
    cap_exprs *= 2;
  }
  exprs[n_exprs] = *e;
  *out = -(int64_t)(++n_exprs);
  table_unlock();
  return true;
}

bool dy_dim_expr_of(int64_t d, dy_dim_expr *e) {
  memset(e, 0, sizeof *e);
  if (d >= 0) {
    e->c = d;
    return true;
  }
  if (d == -1) {
    e->n_terms = 1;
    e->t[0] = (dy_dim_term){.coef = 1, .n = 1, .sym = {0}};
    return true;
  }
  table_lock();
  bool ok = -(d + 1) < n_exprs;
  if (ok)
    *e = exprs[-(d + 1)];
  table_unlock();
  return ok;
}

bool dy_dim_from_expr(const dy_dim_expr *e, int64_t *out) {
  wide_expr w = {.c = e->c, .n_terms = e->n_terms};
  if (e->n_terms > DY_DIM_MAX_TERMS)
    return false;
  for (int i = 0; i < e->n_terms; i++) {
    if (e->t[i].n < 0 || e->t[i].n > DY_DIM_MAX_FACTORS)
      return false;
    w.t[i] = e->t[i];
  }
  dy_dim_expr n;
  return normalise(&w, &n) && intern(&n, out);
}

int64_t dy_dim_sym(const char *name) {
  int s = dy_sym_id(name);
  if (s < 0)
    return DY_DIM_NONE;
  dy_dim_expr e = {.n_terms = 1, .t = {{.coef = 1, .n = 1, .sym = {s}}}};
  int64_t d;
  return dy_dim_from_expr(&e, &d) ? d : DY_DIM_NONE;
}

int dy_dim_single_sym(int64_t d) {
  dy_dim_expr e;
  if (d >= 0 || !dy_dim_expr_of(d, &e))
    return -1;
  return e.c == 0 && e.n_terms == 1 && e.t[0].coef == 1 && e.t[0].n == 1 ? e.t[0].sym[0] : -1;
}

/* ---- arithmetic ---- */

/* a + sign * b, sign +1 or -1, through the wide form. */
static bool combine(int64_t a, int64_t b, int sign, int64_t *out) {
  dy_dim_expr x, y;
  if (!dy_dim_expr_of(a, &x) || !dy_dim_expr_of(b, &y))
    return false;
  wide_expr w = {.n_terms = 0};
  if (sign > 0 ? !dy_ck_add(x.c, y.c, &w.c) : !dy_ck_sub(x.c, y.c, &w.c))
    return false;
  for (int i = 0; i < x.n_terms; i++)
    w.t[w.n_terms++] = x.t[i];
  for (int i = 0; i < y.n_terms; i++) {
    w.t[w.n_terms] = y.t[i];
    w.t[w.n_terms++].coef = sign * y.t[i].coef;
  }
  dy_dim_expr n;
  return normalise(&w, &n) && intern(&n, out);
}

bool dy_dim_add(int64_t a, int64_t b, int64_t *out) {
  if (a >= 0 && b >= 0)
    return dy_ck_add(a, b, out);
  return combine(a, b, 1, out);
}

bool dy_dim_add_const(int64_t a, int64_t k, int64_t *out) {
  if (a >= 0)
    return dy_ck_add(a, k, out) && *out >= 0;
  dy_dim_expr x;
  if (!dy_dim_expr_of(a, &x) || !dy_ck_add(x.c, k, &x.c))
    return false;
  return intern(&x, out);
}

bool dy_dim_sub(int64_t a, int64_t b, int64_t *out) {
  if (b >= 0)
    return dy_dim_add_const(a, -b, out);
  if (a == b) {
    *out = 0;
    return true;
  }
  return combine(a, b, -1, out);
}

bool dy_dim_mul(int64_t a, int64_t b, int64_t *out) {
  if (a >= 0 && b >= 0)
    return dy_ck_mul(a, b, out);
  if (a == 0 || b == 0) {
    *out = 0;
    return true;
  }
  dy_dim_expr x, y;
  if (!dy_dim_expr_of(a, &x) || !dy_dim_expr_of(b, &y))
    return false;
  /* (cx + Σ tx)(cy + Σ ty) */
  wide_expr w = {.n_terms = 0};
  if (!dy_ck_mul(x.c, y.c, &w.c))
    return false;
  for (int i = 0; i < x.n_terms; i++) {
    if (y.c != 0) {
      w.t[w.n_terms] = x.t[i];
      if (!dy_ck_mul(x.t[i].coef, y.c, &w.t[w.n_terms++].coef))
        return false;
    }
    for (int j = 0; j < y.n_terms; j++) {
      dy_dim_term t = {.n = x.t[i].n + y.t[j].n};
      if (t.n > DY_DIM_MAX_FACTORS || !dy_ck_mul(x.t[i].coef, y.t[j].coef, &t.coef))
        return false;
      memcpy(t.sym, x.t[i].sym, sizeof(int) * (size_t)x.t[i].n);
      memcpy(t.sym + x.t[i].n, y.t[j].sym, sizeof(int) * (size_t)y.t[j].n);
      w.t[w.n_terms++] = t;
    }
  }
  for (int j = 0; j < y.n_terms && x.c != 0; j++) {
    w.t[w.n_terms] = y.t[j];
    if (!dy_ck_mul(y.t[j].coef, x.c, &w.t[w.n_terms++].coef))
      return false;
  }
  dy_dim_expr n;
  return normalise(&w, &n) && intern(&n, out);
}

/* Remove the factors of m from t (a multiset difference); false when t
 * lacks one. */
static bool divide_factors(dy_dim_term *t, const dy_dim_term *m) {
  for (int j = 0; j < m->n; j++) {
    int k = 0;
    while (k < t->n && t->sym[k] != m->sym[j])
      k++;
    if (k == t->n)
      return false;
    memmove(t->sym + k, t->sym + k + 1, sizeof(int) * (size_t)(t->n - k - 1));
    t->n--;
  }
  return true;
}

bool dy_dim_div(int64_t a, int64_t b, int64_t *out) {
  if (b == 0)
    return false;
  if (a >= 0 && b > 0) {
    if (a % b)
      return false;
    *out = a / b;
    return true;
  }
  if (a == b) {
    *out = 1;
    return true;
  }
  dy_dim_expr x, y;
  if (!dy_dim_expr_of(a, &x) || !dy_dim_expr_of(b, &y))
    return false;
  if (y.n_terms == 0 || (y.n_terms == 1 && y.c == 0)) {
    /* by a monomial k * s...: every term and the constant divide */
    int64_t k = y.n_terms ? y.t[0].coef : y.c;
    dy_dim_term m = y.n_terms ? y.t[0] : (dy_dim_term){.coef = 1, .n = 0};
    if (x.c % k || (m.n > 0 && x.c != 0))
      return false;
    dy_dim_expr q = {.c = x.c / k, .n_terms = x.n_terms};
    for (int i = 0; i < x.n_terms; i++) {
      q.t[i] = x.t[i];
      if (x.t[i].coef % k || !divide_factors(&q.t[i], &m))
        return false;
      q.t[i].coef = x.t[i].coef / k;
    }
    return dy_dim_from_expr(&q, out);
  }
  /* by a sum: only a constant multiple of it */
  int64_t k = x.t[0].coef / y.t[0].coef, prod;
  if (k <= 0 || !dy_dim_mul(b, k, &prod) || prod != a)
    return false;
  *out = k;
  return true;
}

/* ---- values ---- */

bool dy_dim_eval(int64_t d, const int64_t *vals, int64_t *out) {
  dy_dim_expr e;
  if (!dy_dim_expr_of(d, &e))
    return false;
  int64_t v = e.c;
  for (int i = 0; i < e.n_terms; i++) {
    int64_t t = e.t[i].coef;
    for (int j = 0; j < e.t[i].n; j++) {
      int s = e.t[i].sym[j];
      if (s >= DY_MAX_SYMS || vals[s] < 0 || !dy_ck_mul(t, vals[s], &t))
        return false;
    }
    if (!dy_ck_add(v, t, &v))
      return false;
  }
  *out = v;
  return true;
}

bool dy_dim_has_sym(int64_t d, int sym) {
  dy_dim_expr e;
  if (d >= 0 || !dy_dim_expr_of(d, &e))
    return false;
  for (int i = 0; i < e.n_terms; i++)
    for (int j = 0; j < e.t[i].n; j++)
      if (e.t[i].sym[j] == sym)
        return true;
  return false;
}

bool dy_dim_substitute(int64_t d, int sym, int64_t value, int64_t *out) {
  dy_dim_expr e;
  if (!dy_dim_has_sym(d, sym)) {
    *out = d;
    return true;
  }
  if (!dy_dim_expr_of(d, &e))
    return false;
  for (int i = 0; i < e.n_terms; i++)
    for (int j = 0; j < e.t[i].n; j++)
      if (e.t[i].sym[j] == sym) {
        if (!dy_ck_mul(e.t[i].coef, value, &e.t[i].coef))
          return false;
        memmove(e.t[i].sym + j, e.t[i].sym + j + 1, sizeof(int) * (size_t)(e.t[i].n - j - 1));
        e.t[i].n--;
        j--;
      }
  return dy_dim_from_expr(&e, out);
}

/* ---- text ---- */

/* "2*batch*seq+seq-1" (symbols by name, `*` between factors). */
static size_t expr_text(const dy_dim_expr *e, const char *mul, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, __VA_ARGS__))
  for (int i = 0; i < e->n_terms; i++) {
    if (i)
      PUT("+");
    if (e->t[i].coef != 1)
      PUT("%lld%s", (long long)e->t[i].coef, mul);
    for (int j = 0; j < e->t[i].n; j++)
      PUT("%s%s", j ? mul : "", dy_sym_name(e->t[i].sym[j]));
  }
  if (e->c > 0)
    PUT("+%lld", (long long)e->c);
  else if (e->c < 0)
    PUT("%lld", (long long)e->c);
#undef PUT
  return k;
}

char *dy_dim_str(int64_t d, char *buf, size_t n) {
  dy_dim_expr e;
  if (d >= -1)
    snprintf(buf, n, "%lld", (long long)d);
  else if (!dy_dim_expr_of(d, &e))
    snprintf(buf, n, "?%lld", (long long)d);
  else
    expr_text(&e, "*", buf, n);
  return buf;
}

char *dy_dim_name(int64_t d, char *buf, size_t n) {
  dy_dim_expr e;
  if (d >= 0 || !dy_dim_expr_of(d, &e))
    return dy_dim_str(d, buf, n);
  expr_text(&e, "*", buf, n);
  return buf;
}

/* Parse "[k*]s[*s...]" terms joined by + and constants with + or -. */
bool dy_dim_parse(const char *s, size_t len, int64_t *out) {
  char tmp[160];
  if (len == 0 || len >= sizeof tmp)
    return false;
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  if (strcmp(tmp, "-1") == 0) {
    *out = -1;
    return true;
  }
  int64_t acc = 0;
  const char *q = tmp;
  int sign = 1;
  if (*q == '-' || *q == '+') { /* a leading sign: only for constants */
    sign = *q == '-' ? -1 : 1;
    q++;
  }
  for (;;) {
    int64_t term = 1;
    bool any = false, has_sym = false;
    for (;;) { /* factors joined by '*' */
      if (*q >= '0' && *q <= '9') {
        char *end;
        long long v = strtoll(q, &end, 10);
        if (!dy_dim_mul(term, v, &term))
          return false;
        q = end;
      } else {
        const char *st = q;
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' ||
               (q > st && *q >= '0' && *q <= '9'))
          q++;
        if (q == st || q - st >= DY_SYM_NAME_MAX)
          return false;
        char name[DY_SYM_NAME_MAX];
        memcpy(name, st, (size_t)(q - st));
        name[q - st] = '\0';
        int64_t sd = dy_dim_sym(name);
        if (sd == DY_DIM_NONE || !dy_dim_mul(term, sd, &term))
          return false;
        has_sym = true;
      }
      any = true;
      if (*q != '*')
        break;
      q++;
    }
    if (!any)
      return false;
    if (sign < 0) {
      if (has_sym || !dy_dim_add_const(acc, -term, &acc))
        return false;
    } else if (!dy_dim_add(acc, term, &acc)) {
      return false;
    }
    if (*q == '\0')
      break;
    if (*q != '+' && *q != '-')
      return false;
    sign = *q == '-' ? -1 : 1;
    q++;
  }
  *out = acc;
  return true;
}

/* ---- types ---- */

bool dy_type_numel_eval(const dy_type *t, const int64_t *vals, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    int64_t d;
    if (!dy_dim_eval(t->shape[i], vals, &d) || !dy_ck_mul(n, d, &n))
      return false;
  }
  *out = n;
  return true;
}

bool dy_type_numel_dim(const dy_type *t, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    if (!dy_dim_mul(n, t->shape[i], &n))
      return false;
  *out = n;
  return true;
}

uint64_t dy_type_sym_mask(const dy_type *t) {
  uint64_t m = 0;
  for (int i = 0; i < t->rank; i++) {
    dy_dim_expr e;
    if (t->shape[i] >= 0 || !dy_dim_expr_of(t->shape[i], &e))
      continue;
    for (int k = 0; k < e.n_terms; k++)
      for (int j = 0; j < e.t[k].n; j++)
        m |= (uint64_t)1 << e.t[k].sym[j];
  }
  return m;
}
