/* mathlib_sweep.c - measures the generated C's math functions against libm.
 *
 * Not built by CMake: tests/test_mathlib.c writes every function of
 * codegen/kernels/emit_mathlib.c into mathlib.h (what NAME.c would hold), then
 * compiles this file with it, for the host and (under qemu) for AArch64,
 * and runs it:
 *
 *   mathlib_sweep STRIDE
 *
 * For each function it walks the floats of a range in order, every
 * STRIDE-th one (STRIDE 1: all of them) plus the range's edges and special
 * values, computes the reference in double precision with libm, and
 * measures the error in ulp of the float result (the float spacing at the
 * reference's magnitude; 2^-149 for subnormals). Results the reference
 * puts beyond the float range must be inf, and NaN must meet NaN. powf
 * takes pseudo-random pairs instead. It prints one line per function,
 *
 *   dy_expf      max 0.951 ulp (bound 1.00) at -0x1.76919ep+2  ok
 *
 * and exits with the number of functions over their bound or with a
 * wrong special value. The bounds are those stated in emit_mathlib.c.
 *
 * Built with -DDY_SWEEP_VECTOR (and vmath.h: mathlib.h plus the SIMD
 * helpers of codegen/kernels/emit_simd.c) it measures instead the vector math the
 * kernels call, dy_vexp, dy_vexp_neg, dy_verf and dy_vact's sigmoid, tanh,
 * gelu and silu, on the SIMD path the compiler's flags select, against the
 * bounds stated in emit_simd.c. gelu is the erf form 0.5 x (1 + erf(x / sqrt 2)), as in the
 * eager kernel: for x < 0 the sum cancels, so its error is measured in ulp
 * of max(|gelu(x)|, |x| / 2).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DY_SWEEP_VECTOR
#include "vmath.h" /* mathlib.h and the SIMD helpers (emit_simd.c) */
#else
#include "mathlib.h"
#endif

static int failures;

static double ulp_at(double r) {
  r = fabs(r);
  if (r < 0x1p-126)
    return 0x1p-149;
  int e;
  frexp(r, &e);
  return ldexp(1.0, e - 24);
}

/* The float after / before x in the order of values (x finite). */
static float step_up(float x, uint32_t n) {
  uint32_t u = dy_asuint(x);
  if (u & 0x80000000u) { /* negative: the magnitude shrinks */
    uint32_t m = u & 0x7fffffffu;
    if (m >= n)
      return dy_asfloat((m - n) | 0x80000000u);
    return dy_asfloat(n - m); /* crossed zero */
  }
  return dy_asfloat(u + n);
}

typedef struct {
  const char *name;
  double bound;     /* ulp */
  double xscale;    /* if set: ulp of max(|ref|, xscale |x|) */
  double max;       /* measured */
  float worst;
  long bad;         /* wrong special results */
  long n;
} stat;

static void check_one(stat *s, float x, float got, double ref) {
  s->n++;
  if (isnan(ref)) {
    if (!isnan(got) && s->bad++ < 5)
      printf("  %s(%a) = %a, want NaN\n", s->name, (double)x, (double)got);
    return;
  }
  if (fabs(ref) >= 0x1.ffffffp127) { /* beyond FLT_MAX: rounds to inf */
    if (!(isinf(got) && (got > 0) == (ref > 0)) && s->bad++ < 5)
      printf("  %s(%a) = %a, want %sinf\n", s->name, (double)x, (double)got, ref > 0 ? "" : "-");
    return;
  }
  double mag = fmax(fabs(ref), s->xscale * fabs((double)x));
  double e = fabs((double)got - ref) / ulp_at(mag);
  if (!(e <= s->max)) {
    s->max = isnan(e) ? INFINITY : e;
    s->worst = x;
  }
}

static void report(stat *s) {
  bool ok = s->max <= s->bound && s->bad == 0;
  printf("%-12s max %.3f ulp (bound %.2f) at %a over %ld values%s%s\n", s->name, s->max,
         s->bound, (double)s->worst, s->n, s->bad ? ", wrong special values" : "",
         ok ? "  ok" : "  FAILED");
  failures += !ok;
}

typedef float (*f1)(float);
typedef double (*d1)(double);

/* f over [lo, hi] every stride-th float, plus extra points; the error in
 * ulp of max(|ref|, xscale |x|). */
static void sweep_scaled(const char *name, double bound, double xscale, f1 f, d1 ref, float lo,
                         float hi, uint32_t stride, const float *extra, int n_extra) {
  stat s = {.name = name, .bound = bound, .xscale = xscale};
  for (float x = lo; x <= hi; x = step_up(x, stride)) {
    check_one(&s, x, f(x), ref((double)x));
    if (step_up(x, stride) <= x)
      break;
  }
  check_one(&s, hi, f(hi), ref((double)hi));
  for (int i = 0; i < n_extra; i++)
    check_one(&s, extra[i], f(extra[i]), ref((double)extra[i]));
  report(&s);
}

static void sweep(const char *name, double bound, f1 f, d1 ref, float lo, float hi,
                  uint32_t stride, const float *extra, int n_extra) {
  sweep_scaled(name, bound, 0, f, ref, lo, hi, stride, extra, n_extra);
}

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#ifndef DY_SWEEP_VECTOR
/* Exactly libm's float function (rounding functions, fabs, ...), over
 * every stride-th bit pattern and the halfway cases. */
static void exact(const char *name, f1 f, f1 libm, uint32_t stride) {
  stat s = {.name = name, .bound = 0};
  const float halves[] = {0.5f, 1.5f, 2.5f, 0.49999997f, 0.99999994f, 8388607.5f, 8388608.0f,
                          4194304.5f, 1e-45f, 0.0f};
  int nh = (int)(sizeof halves / sizeof *halves);
  for (uint64_t u = 0; u < 0x100000000ull + 2 * (uint64_t)nh; u += u < 0x100000000ull ? stride : 1) {
    if (u >= 0x100000000ull && u < 0x100000000ull + stride)
      u = 0x100000000ull; /* then the halfway cases, both signs */
    uint64_t k = u - 0x100000000ull;
    float x = u < 0x100000000ull ? dy_asfloat((uint32_t)u) : (k & 1 ? -1 : 1) * halves[k / 2];
    float a = f(x), b = libm(x);
    s.n++;
    bool same = isnan(a) ? isnan(b) : dy_asuint(a) == dy_asuint(b);
    if (!same && s.bad++ < 5)
      printf("  %s(%a) = %a, libm %a\n", name, (double)x, (double)a, (double)b);
  }
  report(&s);
}

static float f_sigmoid(float x) { return dy_sigmoidf(x); }

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static float uniform(float lo, float hi) {
  return (float)(lo + (hi - lo) * ((double)(next_u64() >> 11) / 9007199254740992.0));
}

/* powf on pseudo-random pairs, with error bounds by the size of the
 * result (|ln r| < 8, < 32, any normal), and C99's special cases. */
static void sweep_pow(long n) {
  stat s[3] = {{.name = "dy_powf<e8", .bound = 1.6},
               {.name = "dy_powf<e32", .bound = 3.0},
               {.name = "dy_powf", .bound = 11.0}};
  for (long i = 0; i < n; i++) {
    float x, y;
    switch (i % 3) {
    case 0: /* any positive x, moderate y */
      x = dy_asfloat((uint32_t)(next_u64() & 0x7fffffffu));
      y = uniform(-20, 20);
      break;
    case 1:
      x = uniform(0, 10);
      y = uniform(-40, 40);
      break;
    default: /* results across the whole range */
      x = dy_asfloat((uint32_t)(next_u64() & 0x7fffffffu));
      y = (float)(88.0 / log((double)x)) * uniform(-1, 1);
      break;
    }
    if (next_u64() & 1) { /* negative bases with integer exponents */
      x = -x;
      y = (float)(int)y;
    }
    if (!isfinite(x) || !isfinite(y))
      continue;
    double r = pow((double)x, (double)y);
    float g = dy_powf(x, y);
    if (fabs(r) < 0x1p-126 || fabs(r) >= 0x1.ffffffp127 || isnan(r)) {
      /* subnormal, overflowing or NaN results: as libm's powf, within a
       * few subnormal steps */
      float l = powf(x, y);
      bool same = isnan(l) ? isnan(g) : (g == l || fabs((double)g - l) <= 4 * 0x1p-149);
      s[2].n++;
      if (!same && s[2].bad++ < 5)
        printf("  dy_powf(%a, %a) = %a, libm %a\n", (double)x, (double)y, (double)g, (double)l);
      continue;
    }
    double lr = fabs(log(fabs(r)));
    for (int k = lr < 8 ? 0 : lr < 32 ? 1 : 2; k < 3; k++)
      check_one(&s[k], x, g, r);
  }
  /* every pair of special values: what C99 F.9.4.4 says (glibc's powf) */
  const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f, 2.5f,
                      -2.5f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 16777216.0f,
                      -16777217.0f, 1e30f};
  int ns = (int)(sizeof sp / sizeof *sp);
  for (int i = 0; i < ns; i++)
    for (int j = 0; j < ns; j++) {
      float a = dy_powf(sp[i], sp[j]), b = powf(sp[i], sp[j]);
      bool same = isnan(b) ? isnan(a)
                           : (a == b && signbit(a) == signbit(b)) ||
                                 fabs((double)a - b) <= 2e-7 * fabs((double)b);
      s[2].n++;
      if (!same && s[2].bad++ < 5)
        printf("  dy_powf(%g, %g) = %g, libm %g\n", (double)sp[i], (double)sp[j], (double)a,
               (double)b);
    }
  for (int k = 0; k < 3; k++)
    report(&s[k]);
}

/* fminf / fmaxf: NaN gives the other operand, as C99 says. */
static void check_minmax(void) {
  stat s = {.name = "dy_fminf/fmaxf", .bound = 0};
  const float v[] = {0.0f, -1.5f, 2.0f, INFINITY, -INFINITY, NAN, 1e-40f};
  int n = (int)(sizeof v / sizeof *v);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float a = dy_fminf(v[i], v[j]), b = fminf(v[i], v[j]);
      float c = dy_fmaxf(v[i], v[j]), d = fmaxf(v[i], v[j]);
      s.n += 2;
      if (!(isnan(b) ? isnan(a) : a == b) || !(isnan(d) ? isnan(c) : c == d)) {
        if (s.bad++ < 5)
          printf("  min/max(%g, %g) = %g, %g; libm %g, %g\n", (double)v[i], (double)v[j],
                 (double)a, (double)c, (double)b, (double)d);
      }
    }
  report(&s);
}

#endif

#ifdef DY_SWEEP_VECTOR
/* Each vector function on x in every lane; lane DY_VW - 1 is returned
 * after checking that every lane agrees. */
static float lane(dy_vf v) {
  float t[DY_VW];
  dy_vstore(t, v);
  for (int i = 0; i < DY_VW - 1; i++)
    if (dy_asuint(t[i]) != dy_asuint(t[DY_VW - 1]))
      return DY_NAN; /* lanes disagree: counted as an error */
  return t[DY_VW - 1];
}
static float v_exp(float x) { return lane(dy_vexp(dy_vset(x))); }
static float v_exp_neg(float x) { return lane(dy_vexp_neg(dy_vset(x))); }
static float v_sigmoid(float x) { return lane(dy_vact(dy_vset(x), DY_ACT_SIGMOID)); }
static float v_tanh(float x) { return lane(dy_vact(dy_vset(x), DY_ACT_TANH)); }
static float v_gelu(float x) { return lane(dy_vact(dy_vset(x), DY_ACT_GELU)); }
static float v_silu(float x) { return lane(dy_vact(dy_vset(x), DY_ACT_SILU)); }
#if DY_VW > 1
static float v_erf(float x) { return lane(dy_verf(dy_vset(x))); }
#else
static float v_erf(float x) { return dy_erff(x); }
#endif
static double ref_gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double ref_silu(double x) { return x / (1.0 + exp(-x)); }

int main(int argc, char **argv) {
  uint32_t st = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 61;
  if (st < 1)
    st = 1;
  printf("SIMD path %s, %d lanes\n", DY_SIMD_PATH, DY_VW);
  const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f};
  /* e^x: inf above 88.72; within the bound down to -87.3365; 0 below,
   * never a subnormal */
  const float ex[] = {88.7228317f, 88.7228394f, 89.0f, -87.3365f, 1e-10f, -1e-10f, INFINITY,
                      NAN};
  sweep("dy_vexp", 1.3, v_exp, exp, -87.3365f, 100.0f, st, ex, 8);
  sweep("dy_vexp_neg", 1.3, v_exp_neg, exp, -87.3365f, 0.0f, st, ex + 3, 2);
  stat z = {.name = "(vexp < -87.3365)", .bound = 0};
  const float zs[] = {-87.3365097f, -87.3365479f, -100.0f, -104.0f, -1e30f, -INFINITY};
  for (int i = 0; i < 6; i++, z.n += 2)
    if ((v_exp(zs[i]) != 0.0f || v_exp_neg(zs[i]) != 0.0f) && z.bad++ < 5)
      printf("  dy_vexp(%a) = %a, dy_vexp_neg %a, want 0\n", (double)zs[i],
             (double)v_exp(zs[i]), (double)v_exp_neg(zs[i]));
  report(&z);
  sweep("dy_vsigmoid", 3.2, v_sigmoid, ref_sigmoid, -87.3f, 100.0f, st, sp, 7);
  sweep("dy_vtanh", 1.4, v_tanh, tanh, -3.4e38f, 3.4e38f, st, sp, 7);
  sweep("(vtanh core)", 1.4, v_tanh, tanh, -12.0f, 12.0f, 1 + st / 8, NULL, 0);
  sweep("dy_verf", 1.4, v_erf, erf, -3.4e38f, 3.4e38f, st, sp, 7);
  sweep("(verf core)", 1.4, v_erf, erf, -5.0f, 5.0f, 1 + st / 8, NULL, 0);
  sweep_scaled("dy_vgelu", 1.75, 0.5, v_gelu, ref_gelu, -3.4e38f, 3.4e38f, st, sp, 7);
  sweep_scaled("(vgelu core)", 1.75, 0.5, v_gelu, ref_gelu, -10.0f, 10.0f, 1 + st / 8, NULL, 0);
  sweep("dy_vsilu", 3.1, v_silu, ref_silu, -87.3f, 3.4e38f, st, sp, 7);
  printf("%d function(s) over their bounds\n", failures);
  return failures;
}
#else
static float l_fabs(float x) { return fabsf(x); }
static float l_trunc(float x) { return truncf(x); }
static float l_floor(float x) { return floorf(x); }
static float l_ceil(float x) { return ceilf(x); }
static float l_round(float x) { return roundf(x); }
static float m_fabs(float x) { return dy_fabsf(x); }
static float m_trunc(float x) { return dy_truncf(x); }
static float m_floor(float x) { return dy_floorf(x); }
static float m_ceil(float x) { return dy_ceilf(x); }
static float m_round(float x) { return dy_roundf(x); }
static float m_exp(float x) { return dy_expf(x); }
static float m_log(float x) { return dy_logf(x); }
static float m_log1p(float x) { return dy_log1pf(x); }
static float m_expm1(float x) { return dy_expm1f(x); }
static float m_sqrt(float x) { return dy_sqrtf(x); }
static float m_tanh(float x) { return dy_tanhf(x); }
static float m_erf(float x) { return dy_erff(x); }

int main(int argc, char **argv) {
  uint32_t st = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 61;
  if (st < 1)
    st = 1;
  const float big[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 1e-38f,
                       3.4e38f, -3.4e38f};
  int nb = (int)(sizeof big / sizeof *big);
  /* exp: overflow beyond 88.72, underflow through the subnormals */
  const float ex[] = {88.7228317f, 88.7228394f, -87.3365479f, -103.972084f, -103.972076f,
                      -104.0f, 89.0f, 1e-10f, -1e-10f};
  sweep("dy_expf", 1.0, m_exp, exp, -110.0f, 100.0f, st, big, nb);
  sweep("(exp edges)", 1.0, m_exp, exp, -1.0f, 1.0f, st, ex, 9);
  sweep("dy_logf", 0.85, m_log, log, 0.0f, 3.4e38f, st, big, nb);
  sweep("dy_logf<0", 0, m_log, log, -3.4e38f, -1e-45f, st * 64, NULL, 0);
  sweep("dy_log1pf", 2.5, m_log1p, log1p, -1.0f, 3.4e38f, st, big, nb);
  sweep("dy_expm1f", 2.5, m_expm1, expm1, -110.0f, 100.0f, st, big, nb);
  sweep("dy_sqrtf", 0.75, m_sqrt, sqrt, 0.0f, 3.4e38f, st, big, nb);
  sweep("dy_sqrtf<0", 0, m_sqrt, sqrt, -3.4e38f, -1e-45f, st * 64, NULL, 0);
  sweep("dy_tanhf", 1.35, m_tanh, tanh, -3.4e38f, 3.4e38f, st, big, nb);
  sweep("(tanh core)", 1.35, m_tanh, tanh, -12.0f, 12.0f, 1 + st / 8, NULL, 0);
  sweep("dy_erff", 1.45, m_erf, erf, -3.4e38f, 3.4e38f, st, big, nb);
  sweep("(erf core)", 1.45, m_erf, erf, -5.0f, 5.0f, 1 + st / 8, NULL, 0);
  const float sg[] = {100.0f, INFINITY, -INFINITY, NAN, 0.0f};
  sweep("dy_sigmoidf", 2.5, f_sigmoid, ref_sigmoid, -87.3f, 100.0f, 1 + st / 8, sg, 5);
  exact("dy_fabsf", m_fabs, l_fabs, st * 16 + 1);
  exact("dy_truncf", m_trunc, l_trunc, st * 16 + 1);
  exact("dy_floorf", m_floor, l_floor, st * 16 + 1);
  exact("dy_ceilf", m_ceil, l_ceil, st * 16 + 1);
  exact("dy_roundf", m_round, l_round, st * 16 + 1);
  check_minmax();
  sweep_pow(3000000 / (long)(1 + st / 64));
  printf("%d function(s) over their bounds\n", failures);
  return failures;
}
#endif
