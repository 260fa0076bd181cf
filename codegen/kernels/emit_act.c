/* emit_act.c - floor 1: the C expressions of ir/acts.def's formulas (a
 * fused activation, a fused_elementwise token), shared by the fused
 * emitters, the matmul and conv epilogues and the GEMM micro-kernel's
 * callers. Each formula is the table's EXPR stringized, with its operand
 * names (x, y, alpha) replaced by the given C expressions. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"

static const char *const act_exprs[DY_ACTIVATION_COUNT] = {
    "x",
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) #EXPR,
#include "acts.def"
#undef DY_ACT
};

static const char *const act_at[DY_ACTIVATION_COUNT] = {
    "",
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) #AT,
#include "acts.def"
#undef DY_ACT
};

static const char *const act_vec[DY_ACTIVATION_COUNT] = {
    "",
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) #VEC,
#include "acts.def"
#undef DY_ACT
};

static const char *const ew_exprs[DY_EWTOK_COUNT] = {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) #EXPR,
#include "acts.def"
#undef DY_EW
};

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Does e need no parentheses as an operand: a name or number, a call
 * f(...) or a parenthesised whole? */
static bool is_primary(const char *e) {
  size_t n = strlen(e), i = 0;
  if (n == 0)
    return false;
  if (isdigit((unsigned char)e[0])) { /* a number, exponent sign included */
    for (i = 0; i < n; i++)
      if (!ident_char(e[i]) && e[i] != '.' &&
          !((e[i] == '-' || e[i] == '+') && (e[i - 1] == 'e' || e[i - 1] == 'E')))
        return false;
    return true;
  }
  while (i < n && (ident_char(e[i]) || e[i] == '.'))
    i++;
  if (i == n)
    return true;
  if (e[i] != '(' || e[n - 1] != ')')
    return false;
  int depth = 0; /* the '(' at i must close at the end */
  for (size_t k = i; k < n; k++) {
    depth += e[k] == '(' ? 1 : e[k] == ')' ? -1 : 0;
    if (depth == 0 && k != n - 1)
      return false;
  }
  return true;
}

bool dy_cg_formula(const char *expr, const char *x, const char *y, const char *alpha,
                   char *buf, size_t n) {
  size_t o = 0;
  for (const char *s = expr; *s;) {
    int w;
    size_t room = o < n ? n - o : 0;
    if (ident_char(*s)) { /* a whole name or number */
      size_t len = 0;
      while (ident_char(s[len]))
        len++;
      const char *with = NULL;
      bool operand = true;
      if (len == 1 && *s == 'x')
        with = x;
      else if (len == 1 && *s == 'y')
        with = y;
      else if (len == 5 && strncmp(s, "alpha", 5) == 0)
        with = alpha;
      else
        operand = false;
      if (operand && !with)
        return false; /* an operand the caller did not give */
      if (operand)
        w = snprintf(buf + o, room, is_primary(with) ? "%s" : "(%s)", with);
      else
        w = snprintf(buf + o, room, "%.*s", (int)len, s);
      s += len;
    } else {
      w = snprintf(buf + o, room, "%c", *s++);
    }
    if (w < 0 || (size_t)w >= room)
      return false;
    o += (size_t)w;
  }
  if (o == 0 && n > 0)
    buf[0] = '\0';
  return n > 0;
}

bool dy_cg_act_expr(const char *act, double alpha, const char *x, char *buf, size_t n) {
  int a = dy_act_find(act);
  char lit[64] = "0.0f";
  if (a < 0 || (dy_cg_act_uses_alpha(act) && !dy_float_literal((float)alpha, lit, sizeof lit)))
    return false;
  return dy_cg_formula(act_exprs[a], x, NULL, lit, buf, n);
}

bool dy_cg_act_uses_alpha(const char *act) {
  int a = dy_act_find(act);
  if (a <= 0)
    return false;
  for (const char *s = act_exprs[a]; (s = strstr(s, "alpha")) != NULL; s += 5)
    if ((s == act_exprs[a] || !ident_char(s[-1])) && !ident_char(s[5]))
      return true;
  return false;
}

bool dy_cg_act_scalar_only(const char *act) {
  int a = dy_act_find(act);
  return a > 0 && strcmp(act_at[a], "NONE") == 0;
}

const char *dy_cg_act_tile_code(const char *act) {
  int a = dy_act_find(act);
  return a > 0 && strcmp(act_at[a], "TILE") == 0 ? act_vec[a] : NULL;
}

bool dy_cg_ew_expr(const char *token, const char *x, const char *y, char *buf, size_t n) {
  int t = dy_ew_token_find(token, strlen(token));
  if (t < 0 || !dy_cg_formula(ew_exprs[t], x, y, NULL, buf, n))
    return false;
  if (is_primary(buf))
    return true;
  size_t len = strlen(buf); /* parenthesise in place */
  if (len + 3 > n)
    return false;
  memmove(buf + 1, buf, len);
  buf[0] = '(';
  buf[len + 1] = ')';
  buf[len + 2] = '\0';
  return true;
}
