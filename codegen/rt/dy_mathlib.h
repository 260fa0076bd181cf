/* dy_mathlib.h - template: the math functions generated C calls instead of
 * libm's (emitted by codegen/kernels/emit_mathlib.c, which documents them).
 *
 * Template mechanism (codegen/text/templates.h): the text between the "template
 * begin" and "template end" lines is turned into C strings at build time
 * by rt/embed.cmake. Each "dy2stc: section NAME" line starts the
 * definition of NAME; the text before the first one is the banner.
 * dy_mathlib_emit() writes the banner and, in the order of this file, the
 * sections whose names the kernels use as whole identifiers, plus those
 * their text names in turn: so a section may use only what comes before
 * it (compiling this file on its own checks that), and its name must be
 * what it defines. No placeholders.
 *
 * On its own (tests/test_templates.c compiles it, hosted and
 * freestanding) it needs only <stdint.h>, which NAME.c includes before it.
 */
#ifndef DY_RT_MATHLIB_H
#define DY_RT_MATHLIB_H
#include <stdint.h>
/* dy2stc: template begin */
/* ---- math: dy2stc's own (no libm); branch-free, so loops over them
 * vectorise. Max errors against libm, in ulp: expf 0.98, logf 0.82,
 * log1pf 2.4, expm1f 2.4, sqrtf 0.75, tanhf 1.33, sigmoidf 2.48, erff 1.42,
 * powf 1.56 (10.7 near overflow); IEEE single precision, round to
 * nearest, not -ffast-math. ---- */

/* dy2stc: section dy_asuint */
/* the bits of a float, and the float of given bits (C11 union punning) */
static inline uint32_t dy_asuint(float x) {
  union { float f; uint32_t u; } v;
  v.f = x;
  return v.u;
}

/* dy2stc: section dy_asfloat */
static inline float dy_asfloat(uint32_t u) {
  union { float f; uint32_t u; } v;
  v.u = u;
  return v.f;
}

/* dy2stc: section dy_select */
/* c ? a : b as a bit blend: both sides are computed and the code stays
 * straight-line, so loops over the functions below vectorise */
static inline float dy_select(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)(c != 0);
  return dy_asfloat((dy_asuint(a) & m) | (dy_asuint(b) & ~m));
}

/* dy2stc: section DY_INFINITY */
#define DY_INFINITY dy_asfloat(0x7f800000u)

/* dy2stc: section DY_NAN */
#define DY_NAN dy_asfloat(0x7fc00000u)

/* dy2stc: section dy_isnanf */
static inline int dy_isnanf(float x) {
  return (dy_asuint(x) & 0x7fffffffu) > 0x7f800000u;
}

/* dy2stc: section dy_fabsf */
static inline float dy_fabsf(float x) {
  return dy_asfloat(dy_asuint(x) & 0x7fffffffu);
}

/* dy2stc: section dy_copysignf */
static inline float dy_copysignf(float x, float s) {
  return dy_asfloat((dy_asuint(x) & 0x7fffffffu) | (dy_asuint(s) & 0x80000000u));
}

/* dy2stc: section dy_fmaxf */
/* C99 fmaxf/fminf: a NaN operand gives the other operand */
static inline float dy_fmaxf(float a, float b) {
  return dy_select((a > b) | dy_isnanf(b), a, b);
}

/* dy2stc: section dy_fminf */
static inline float dy_fminf(float a, float b) {
  return dy_select((a < b) | dy_isnanf(b), a, b);
}

/* dy2stc: section dy_truncf */
/* trunc, floor, ceil, round (halfway away from zero): exact. From 2^23 on
 * every float is an integer (or inf or NaN) and is returned as is. */
static inline float dy_truncf(float x) {
  int big = !(dy_fabsf(x) < 8388608.0f);
  float t = (float)(int32_t)dy_select(big, 0.0f, x);
  return dy_select(big, x, dy_copysignf(t, x));
}

/* dy2stc: section dy_floorf */
static inline float dy_floorf(float x) {
  float t = dy_truncf(x);
  return dy_select(t > x, t - 1.0f, t);
}

/* dy2stc: section dy_ceilf */
static inline float dy_ceilf(float x) {
  float t = dy_truncf(x);
  return dy_select(t < x, t + 1.0f, t); /* ceil(-0.5) = -0 */
}

/* dy2stc: section dy_roundf */
static inline float dy_roundf(float x) {
  float t = dy_truncf(x);
  return t + dy_copysignf(dy_select(dy_fabsf(x - t) >= 0.5f, 1.0f, 0.0f), x);
}

/* dy2stc: section dy_expf */
/* e^x: x = n ln2 + r, |r| <= ln2/2 (Cody-Waite), e^r by Cephes' degree-7
 * polynomial, 2^n applied in two steps so that subnormal results round
 * once. Overflows to inf above 88.72, underflows to 0 below -103.97.
 * Max error 0.98 ulp. */
static inline float dy_expf(float x) {
  /* n = round(x / ln2): adding 1.5 * 2^23 leaves it in the low bits */
  int32_t n = (int32_t)(dy_asuint(x * 1.44269504f + 12582912.0f) - 0x4b400000u);
  n = n < -151 ? -151 : n;
  n = n > 129 ? 129 : n;
  float fn = (float)n;
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float z = r * r;
  float p = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
              4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r + 1.0f;
  int32_t n1 = n / 2, n2 = n - n1;
  float y = p * dy_asfloat((uint32_t)(n1 + 127) << 23) * dy_asfloat((uint32_t)(n2 + 127) << 23);
  y = dy_select(x < -104.0f, 0.0f, y);
  y = dy_select(x > 89.0f, DY_INFINITY, y);
  return dy_select(dy_isnanf(x), x, y);
}

/* dy2stc: section dy_logf */
/* ln x: x = 2^e m, sqrt(1/2) <= m < sqrt(2), ln m = f - f^2/2 + f^3 P(f)
 * with f = m - 1 (Cephes' polynomial); subnormal x scaled by 2^25 first.
 * ln 0 = -inf, ln(x < 0) = NaN. Max error 0.82 ulp. */
static inline float dy_logf(float x) {
  int sub = x < 1.17549435e-38f;
  uint32_t u = dy_asuint(x * dy_select(sub, 33554432.0f, 1.0f));
  int32_t e = (int32_t)((u >> 23) & 0xffu) - 126 - 25 * sub;
  float m = dy_asfloat((u & 0x007fffffu) | 0x3f000000u); /* [0.5, 1) */
  int small = m < 0.707106781f;
  e = e - small;
  float f = dy_select(small, m + m, m) - 1.0f;
  float z = f * f;
  float y = ((((((((7.0376836292e-2f * f - 1.1514610310e-1f) * f + 1.1676998740e-1f) * f -
                 1.2420140846e-1f) * f + 1.4249322787e-1f) * f - 1.6668057665e-1f) * f +
              2.0000714765e-1f) * f - 2.4999993993e-1f) * f + 3.3333331174e-1f) * f * z;
  float fe = (float)e;
  y = y + -2.12194440e-4f * fe;
  y = y + -0.5f * z;
  float r = f + y;
  r = r + 0.693359375f * fe;
  r = dy_select(x < 0.0f, DY_NAN, r);
  r = dy_select(x == 0.0f, -DY_INFINITY, r);
  return dy_select((x == DY_INFINITY) | dy_isnanf(x), x, r);
}

/* dy2stc: section dy_log1pf */
/* ln(1 + x) = ln(u) * x / (u - 1), u = 1 + x rounded (Goldberg), which
 * cancels u's rounding error. Max error 2.4 ulp. */
static inline float dy_log1pf(float x) {
  float u = 1.0f + x;
  float r = dy_logf(u) * (x / (u - 1.0f));
  return dy_select((u == 1.0f) | (x == DY_INFINITY), x, r);
}

/* dy2stc: section dy_expm1f */
/* e^x - 1 = (u - 1) * x / ln(u), u = e^x (Kahan). Max error 2.4 ulp. */
static inline float dy_expm1f(float x) {
  float u = dy_expf(x), um1 = u - 1.0f;
  float r = um1 * (x / dy_logf(u));
  r = dy_select(u == DY_INFINITY, u, r);
  r = dy_select(um1 == -1.0f, -1.0f, r);
  return dy_select(u == 1.0f, x, r);
}

/* dy2stc: section dy_sqrtf */
/* square root: a bit-shift estimate (within 3.5%), then three Newton steps
 * (the last one leaves rounding error only); x < 1e-30 is scaled by 2^64
 * first. Max error 0.75 ulp (libm's is correctly rounded, 0.5). */
static inline float dy_sqrtf(float x) {
  int tiny = x < 1.0e-30f;
  float xs = x * dy_select(tiny, 18446744073709551616.0f, 1.0f);
  float y = dy_asfloat((dy_asuint(xs) >> 1) + 0x1fbd1df5u);
  y = 0.5f * (y + xs / y);
  y = 0.5f * (y + xs / y);
  y = 0.5f * (y + xs / y);
  y = y * dy_select(tiny, 2.3283064365386963e-10f, 1.0f);
  y = dy_select(x < 0.0f, DY_NAN, y);
  return dy_select((x == 0.0f) | (x == DY_INFINITY) | dy_isnanf(x), x, y);
}

/* dy2stc: section dy_tanhf */
/* tanh: |x| < 0.625 an odd polynomial (Cephes), else 1 - 2 / (e^2|x| + 1)
 * with x's sign; |x| >= 10 gives +-1. Max error 1.33 ulp. */
static inline float dy_tanhf(float x) {
  float a = dy_fabsf(x), s = x * x;
  float ps = ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s +
               1.33314422036e-1f) * s - 3.33332819422e-1f) * s * x + x;
  float e = dy_expf(2.0f * dy_select(a < 10.0f, a, 10.0f));
  float pl = dy_copysignf(1.0f - 2.0f / (e + 1.0f), x);
  return dy_select(a >= 0.625f, pl, ps);
}

/* dy2stc: section dy_sigmoidf */
/* 1 / (1 + e^-x): the formula of the eager kernel, so the two agree (0 for
 * x below -88.7, where e^-x overflows). Max error 2.48 ulp where the result
 * is normal (x > -87.3). */
static inline float dy_sigmoidf(float x) {
  return 1.0f / (1.0f + dy_expf(-x));
}

/* dy2stc: section dy_erff */
/* erf: |x| < 0.92 x + x P(x^2); else 1 - e^(Q(|x|) - x^2) with x's sign,
 * Q ~ ln erfc(t) + t^2 on [0.92, 4], |x| clamped to 4 (erf = +-1 in float
 * from 3.92). P and Q are minimax fits (Lawson) made for dy2stc.
 * Max error 1.42 ulp. */
static inline float dy_erff(float x) {
  float a = dy_fabsf(x), s = x * x;
  float ps = ((((((8.382387750e-05f * s - 8.145596948e-04f) * s + 5.201286171e-03f) * s -
                2.685949951e-02f) * s + 1.128369719e-01f) * s - 3.761263490e-01f) * s +
              1.283791661e-01f) * x + x;
  float t = dy_select(a < 4.0f, a, 4.0f);
  float q = ((((((-2.116202995e-05f * t + 4.352202232e-04f) * t - 4.174649250e-03f) * t +
                2.512864023e-02f) * t - 1.082939655e-01f) * t + 3.666653633e-01f) * t -
             1.129520774e+00f) * t + 1.758763246e-04f;
  float pl = dy_copysignf(1.0f - dy_expf(q - t * t), x);
  return dy_select(a >= 0.92f, pl, ps);
}

/* dy2stc: section dy_powf */
/* x^y = e^(y ln|x|) with ln|x| and the product carried as hi + lo pairs
 * (TwoSum, Dekker's split; an FMA-contracting compiler only loses the
 * extra bits), the sign from y's parity, and C99's special cases (x^0 = 1,
 * 1^y = 1, 0^-y = inf, (-8)^(1/3) = NaN, ...). Max error 1.56 ulp where
 * the result is within e^+-8 of 1, 2.9 within e^+-32, 10.7 over the normal
 * range (ln|x| carries ~26 bits: |y ln x| near 88 magnifies it). */
static inline float dy_powf(float x, float y) {
  float ax = dy_fabsf(x);
  /* ln|x| = hi + lo, the logf scheme with a longer polynomial */
  int sub = ax < 1.17549435e-38f;
  uint32_t u = dy_asuint(ax * dy_select(sub, 33554432.0f, 1.0f));
  int32_t e = (int32_t)((u >> 23) & 0xffu) - 126 - 25 * sub;
  float m = dy_asfloat((u & 0x007fffffu) | 0x3f000000u);
  int small = m < 0.707106781f;
  e = e - small;
  float f = dy_select(small, m + m, m) - 1.0f;
  float z = f * f;
  float p = (((((((((-5.959855393e-02f * f + 1.071004197e-01f) * f - 1.087937504e-01f) * f +
                  1.102807000e-01f) * f - 1.241317466e-01f) * f + 1.428491622e-01f) * f -
               1.667010486e-01f) * f + 2.000012547e-01f) * f - 2.499995232e-01f) * f +
            3.333333135e-01f) * f * z;
  float fe = (float)e;
  p = p + -2.12194440e-4f * fe;
  float hz = -0.5f * z, a = 0.693359375f * fe;
  float s1 = a + f, bb = s1 - a, e1 = (a - (s1 - bb)) + (f - bb);
  float s2 = s1 + hz;
  bb = s2 - s1;
  float e2 = (s1 - (s2 - bb)) + (hz - bb);
  float c = 4097.0f * f, fh = c - (c - f), fl = f - fh;
  float ez = ((fh * fh - z) + 2.0f * fh * fl) + fl * fl; /* f*f - z */
  float l = e1 + e2 + p - 0.5f * ez;
  float hi = s2 + l, lo = l - (hi - s2);
  /* y ln|x| = th + tl */
  float th = y * hi;
  c = 4097.0f * y;
  float yh = c - (c - y), yl = y - yh;
  c = 4097.0f * hi;
  float hh = c - (c - hi), hl = hi - hh;
  float tl = (((yh * hh - th) + yh * hl) + yl * hh) + yl * hl + y * lo;
  float r = dy_expf(th);
  r = dy_select(r < DY_INFINITY, r + r * tl, r);
  /* signs and special cases */
  float ay = dy_fabsf(y);
  int ybig = !(ay < 16777216.0f); /* an even integer, inf or NaN */
  int yint = ybig | (dy_floorf(y) == y);
  uint32_t yodd = ((uint32_t)(int32_t)dy_select(ybig, 0.0f, y) << 31) & (0u - (uint32_t)yint);
  r = dy_select(ax == 0.0f, dy_select(y < 0.0f, DY_INFINITY, 0.0f), r);
  r = dy_select(ax == DY_INFINITY, dy_select(y < 0.0f, 0.0f, DY_INFINITY), r);
  r = dy_asfloat(dy_asuint(r) ^ (yodd & dy_asuint(x) & 0x80000000u));
  r = dy_select((x < 0.0f) & (yint ^ 1) & (ay != DY_INFINITY) & (ax != DY_INFINITY), DY_NAN, r);
  r = dy_select(ay == DY_INFINITY,
                dy_select(ax == 1.0f, 1.0f, dy_select((ax < 1.0f) == (y < 0.0f), DY_INFINITY, 0.0f)),
                r);
  r = dy_select(dy_isnanf(x) | dy_isnanf(y), x + y, r);
  return dy_select((y == 0.0f) | (x == 1.0f), 1.0f, r);
}

/* dy2stc: template end */
/* Compiled as a file of its own: a use of each, or clang warns of unused
 * static inline functions (NAME.c holds only those its kernels use). */
float dy_mathlib_check(float x, float y);
float dy_mathlib_check(float x, float y) {
  return dy_expf(x) + dy_logf(x) + dy_log1pf(x) + dy_expm1f(x) + dy_sqrtf(x) +
         dy_tanhf(x) + dy_sigmoidf(x) + dy_erff(x) + dy_powf(x, y) + dy_fabsf(x) +
         dy_copysignf(x, y) + dy_fminf(x, y) + dy_fmaxf(x, y) + dy_floorf(x) +
         dy_ceilf(x) + dy_roundf(x) + (float)dy_isnanf(x) + DY_NAN * 0.0f +
         DY_INFINITY * 0.0f;
}
#endif /* DY_RT_MATHLIB_H */
