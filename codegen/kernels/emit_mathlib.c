/* emit_mathlib.c - floor 1: the math functions generated C calls instead
 * of libm's.
 *
 * NAME.c includes no <math.h> and links no libm: firmware toolchains may
 * have none, or one the project did not choose. The emitters write
 * dy_expf(x), dy_tanhf(x), DY_INFINITY, ... and dy_mathlib_emit() puts in
 * front of the kernels the definitions of those (and of what they call),
 * nothing else, as `static inline` functions: internal to NAME.c, so two
 * models in one image do not clash.
 *
 * Every function is branch-free. A select is a bit blend (dy_select) of two
 * sides that are both computed, and clamps of integers are min/max, so gcc
 * and clang keep a loop over them straight-line and vectorise it (SSE2,
 * AVX2, NEON); on a Cortex-M they are plain single-precision code. Written
 * for IEEE single precision with round to nearest: under -ffast-math the
 * results of normal arguments hold, special values (inf, NaN) may not.
 *
 * Accuracy, measured against double-precision libm: every 13th float of
 * each range (every 2nd in the cores of tanhf, erff and sigmoidf), 3 million
 * random pairs for powf. tests/test_mathlib.c checks these bounds with a
 * sparser sweep on the host (gcc, clang) and on AArch64 under qemu with
 * FMA contraction:
 *
 *   function     range                      max error
 *   dy_expf      [-103.9, 88.7]             0.98 ulp; inf above, 0 below
 *   dy_logf      (0, inf)                   0.82 ulp
 *   dy_log1pf    (-1, inf)                  2.4 ulp
 *   dy_expm1f    [-100, 88.7]               2.4 ulp
 *   dy_sqrtf     [0, inf)                   0.75 ulp
 *   dy_tanhf     all                        1.33 ulp
 *   dy_sigmoidf  [-87.3, inf)               2.48 ulp (0 below -88.7, as eager)
 *   dy_erff      all                        1.42 ulp
 *   dy_powf      results within e^+-8 of 1  1.56 ulp
 *                within e^+-32              2.9 ulp
 *                normal results             10.7 ulp (relative 6.4e-7)
 *   dy_truncf, dy_floorf, dy_ceilf, dy_roundf, dy_fabsf, dy_copysignf,
 *   dy_fminf, dy_fmaxf                      exact
 *
 * and C99's results for 0, inf and NaN arguments (log 0 = -inf, exp(-inf)
 * = 0, pow(x, 0) = 1, sqrt(-1) = NaN, fmaxf(NaN, y) = y, ...). Polynomials
 * are Cephes' (expf, logf, tanhf) or fitted for dy2stc (erff, the powf
 * logarithm: weighted least squares iterated to minimax, Lawson's method,
 * in long double).
 *
 * The functions are the template rt/dy_mathlib.h, a C header that compiles
 * on its own, one section per function (or macro) in dependency order. A
 * function's dependencies are the other sections its text names: so they
 * cannot be listed wrong, and the order of the file, which compiling it
 * alone checks, is an order of emission in which each comes after what it
 * uses.
 */
#include <string.h>

#include "cg_kernels.h"
#include "templates.h"

/* The sections of dy_tpl_mathlib, one per function, then {NULL, lines}. */
#define FNS dy_tpl_mathlib_sections
enum { MAX_FNS = 64 };

static int n_fns(void) {
  int n = 0;
  while (FNS[n].name)
    n++;
  return n < MAX_FNS ? n : MAX_FNS;
}

static bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

/* Does identifier id occur in text as a whole token? */
static bool names(const char *text, const char *id) {
  size_t n = strlen(id);
  for (const char *s = strstr(text, id); s; s = strstr(s + 1, id))
    if ((s == text || !is_ident_char(s[-1])) && !is_ident_char(s[n]))
      return true;
  return false;
}

/* Does the text of function i name function j? */
static bool fn_names(int i, int j) {
  for (int l = FNS[i].line; l < FNS[i + 1].line; l++)
    if (names(dy_tpl_mathlib[l], FNS[j].name))
      return true;
  return false;
}

void dy_mathlib_emit(dy_buf *out, const char *code) {
  const int n = n_fns();
  bool used[MAX_FNS] = {false};
  bool any = false;
  for (int i = 0; i < n; i++)
    any |= used[i] = names(code ? code : "", FNS[i].name);
  if (!any)
    return;
  /* and what the used ones name, until nothing is added */
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < n; i++)
      for (int j = 0; used[i] && j < n; j++)
        if (j != i && !used[j] && fn_names(i, j))
          used[j] = more = true;
  }
  dy_tpl_put(out, dy_tpl_mathlib, 0, FNS[0].line, NULL, 0); /* the banner */
  for (int i = 0; i < n; i++)
    if (used[i])
      dy_tpl_put(out, dy_tpl_mathlib, FNS[i].line, FNS[i + 1].line, NULL, 0);
}

int dy_mathlib_count(void) { return n_fns(); }

const char *dy_mathlib_name(int i) {
  return i >= 0 && i < n_fns() ? FNS[i].name : NULL;
}
