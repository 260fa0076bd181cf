/* dy_simd.h - template: the SIMD helpers at the top of every generated
 * NAME.c whose kernels use them (emitted by codegen/kernels/emit_simd.c, which
 * documents them).
 *
 * Template mechanism (codegen/text/templates.h): the text between the "template
 * begin" and "template end" lines is turned into C strings at build time
 * by rt/embed.cmake and emitted as it is. No placeholders.
 *
 * On its own (tests/test_templates.c compiles it on every path the compiler
 * can target: plain C, SSE2, AVX2, AVX-512) it needs what NAME.c has in
 * front of it: <stdint.h> and the math functions (dy_expf, dy_tanhf,
 * dy_erff) of dy_mathlib.h.
 */
#ifndef DY_RT_SIMD_H
#define DY_RT_SIMD_H
#include <stdint.h>

#include "dy_mathlib.h"
/* dy2stc: template begin */
/* ---- SIMD helpers ----
 * One path per instruction set, picked by the C compiler's predefined
 * macros, so this file builds for any target: AVX-512 (__AVX512F__), AVX2
 * with FMA (__AVX2__ and __FMA__), SSE2 (__SSE2__), NEON (__ARM_NEON on
 * AArch64) or plain C (anything else, or -DDY_NO_SIMD). Every path computes
 * the same values up to rounding (the SSE2 path, and the scalar one on an
 * FPU without a fused multiply-add, round a*b+c twice, the others once).
 *
 *   dy_vf          DY_VW floats                   dy_vload/dy_vstore (unaligned)
 *   dy_vset(x)     x in every lane                dy_vadd dy_vsub dy_vmul dy_vmax dy_vmin
 *   dy_vfma(a,b,c) a*b + c                        dy_vsum, dy_vhmax: across the lanes
 *   dy_vrelu(x)    x > 0 ? x : 0 (NaN -> 0)      dy_vrelu6, dy_vleaky: as the scalar forms
 *   dy_vselect_lt(a, b, x, y)  a < b ? x : y      dy_vdeint: even and odd elements of a, b
 *   dy_vexp, dy_vexp_neg (x <= 0), dy_vact (sigmoid, tanh, gelu, silu),
 *   dy_copy, dy_act: below
 *   dy_f16         16 floats (a packed weight panel's width) in 16/DY_VW vectors,
 *                  with the same operations as dy_f16_*
 */
/* helpers a file may not call: no "unused function" warning for them */
#if defined(__GNUC__)
#define DY_HELPER static inline __attribute__((always_inline, unused))
#else
#define DY_HELPER static inline
#endif
#if defined(__AVX512F__) && !defined(DY_NO_SIMD)
#include <immintrin.h>
#define DY_SIMD_PATH "avx512"
#define DY_VW 16
#define DY_SIMD_AVX512_MASKS 1
typedef __m512 dy_vf;
DY_HELPER dy_vf dy_vload(const float *p) { return _mm512_loadu_ps(p); }
DY_HELPER void dy_vstore(float *p, dy_vf x) { _mm512_storeu_ps(p, x); }
DY_HELPER dy_vf dy_vset(float x) { return _mm512_set1_ps(x); }
DY_HELPER dy_vf dy_vadd(dy_vf a, dy_vf b) { return _mm512_add_ps(a, b); }
DY_HELPER dy_vf dy_vsub(dy_vf a, dy_vf b) { return _mm512_sub_ps(a, b); }
DY_HELPER dy_vf dy_vmul(dy_vf a, dy_vf b) { return _mm512_mul_ps(a, b); }
DY_HELPER dy_vf dy_vmax(dy_vf a, dy_vf b) { return _mm512_max_ps(a, b); }
DY_HELPER dy_vf dy_vmin(dy_vf a, dy_vf b) { return _mm512_min_ps(a, b); }
DY_HELPER dy_vf dy_vfma(dy_vf a, dy_vf b, dy_vf c) { return _mm512_fmadd_ps(a, b, c); }
DY_HELPER float dy_vsum(dy_vf x) { return _mm512_reduce_add_ps(x); }
DY_HELPER float dy_vhmax(dy_vf x) { return _mm512_reduce_max_ps(x); }
/* max/min return their second operand when either is NaN: the constant goes
 * first where a NaN must survive */
DY_HELPER dy_vf dy_vrelu(dy_vf x) { return _mm512_max_ps(x, _mm512_setzero_ps()); }
DY_HELPER dy_vf dy_vrelu6(dy_vf x) {
  return _mm512_max_ps(_mm512_setzero_ps(), _mm512_min_ps(_mm512_set1_ps(6.0f), x));
}
DY_HELPER dy_vf dy_vleaky(dy_vf x, float a) {
  __mmask16 m = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mask_blend_ps(m, _mm512_mul_ps(x, _mm512_set1_ps(a)), x);
}
DY_HELPER dy_vf dy_vdiv(dy_vf a, dy_vf b) { return _mm512_div_ps(a, b); }
DY_HELPER dy_vf dy_vround(dy_vf x) {
  return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* 2^n for n integral in [-126, 128] (128: +inf) */
DY_HELPER dy_vf dy_vpow2i(dy_vf n) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
/* a < b ? x : y */
DY_HELPER dy_vf dy_vselect_lt(dy_vf a, dy_vf b, dy_vf x, dy_vf y) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x);
}
DY_HELPER dy_vf dy_vabs(dy_vf x) {
  return _mm512_castsi512_ps(
      _mm512_and_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
}
/* |m| with the sign of s */
DY_HELPER dy_vf dy_vcopysign(dy_vf m, dy_vf s) {
  const __m512i b = _mm512_set1_epi32(0x7fffffff);
  return _mm512_castsi512_ps(_mm512_or_epi32(_mm512_and_epi32(b, _mm512_castps_si512(m)),
                                             _mm512_andnot_epi32(b, _mm512_castps_si512(s))));
}
/* the even and the odd elements of a then b (a stride-2 load of 2*DY_VW) */
DY_HELPER void dy_vdeint(dy_vf a, dy_vf b, dy_vf *even, dy_vf *odd) {
  const __m512i e = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i o = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  *even = _mm512_permutex2var_ps(a, e, b);
  *odd = _mm512_permutex2var_ps(a, o, b);
}
#elif defined(__AVX2__) && defined(__FMA__) && !defined(DY_NO_SIMD)
#include <immintrin.h>
#define DY_SIMD_PATH "avx2"
#define DY_VW 8
typedef __m256 dy_vf;
DY_HELPER dy_vf dy_vload(const float *p) { return _mm256_loadu_ps(p); }
DY_HELPER void dy_vstore(float *p, dy_vf x) { _mm256_storeu_ps(p, x); }
DY_HELPER dy_vf dy_vset(float x) { return _mm256_set1_ps(x); }
DY_HELPER dy_vf dy_vadd(dy_vf a, dy_vf b) { return _mm256_add_ps(a, b); }
DY_HELPER dy_vf dy_vsub(dy_vf a, dy_vf b) { return _mm256_sub_ps(a, b); }
DY_HELPER dy_vf dy_vmul(dy_vf a, dy_vf b) { return _mm256_mul_ps(a, b); }
DY_HELPER dy_vf dy_vmax(dy_vf a, dy_vf b) { return _mm256_max_ps(a, b); }
DY_HELPER dy_vf dy_vmin(dy_vf a, dy_vf b) { return _mm256_min_ps(a, b); }
DY_HELPER dy_vf dy_vfma(dy_vf a, dy_vf b, dy_vf c) { return _mm256_fmadd_ps(a, b, c); }
DY_HELPER float dy_vsum(dy_vf x) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}
DY_HELPER float dy_vhmax(dy_vf x) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_shuffle_ps(s, s, 1)));
}
DY_HELPER dy_vf dy_vrelu(dy_vf x) { return _mm256_max_ps(x, _mm256_setzero_ps()); }
DY_HELPER dy_vf dy_vrelu6(dy_vf x) {
  return _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(_mm256_set1_ps(6.0f), x));
}
DY_HELPER dy_vf dy_vleaky(dy_vf x, float a) {
  __m256 m = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ);
  return _mm256_blendv_ps(_mm256_mul_ps(x, _mm256_set1_ps(a)), x, m);
}
DY_HELPER dy_vf dy_vdiv(dy_vf a, dy_vf b) { return _mm256_div_ps(a, b); }
DY_HELPER dy_vf dy_vround(dy_vf x) {
  return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
DY_HELPER dy_vf dy_vpow2i(dy_vf n) {
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
DY_HELPER dy_vf dy_vselect_lt(dy_vf a, dy_vf b, dy_vf x, dy_vf y) {
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}
DY_HELPER dy_vf dy_vabs(dy_vf x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
DY_HELPER dy_vf dy_vcopysign(dy_vf m, dy_vf s) {
  const __m256 b = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(b, m), _mm256_and_ps(b, s));
}
DY_HELPER void dy_vdeint(dy_vf a, dy_vf b, dy_vf *even, dy_vf *odd) {
  /* within 128-bit lanes, then the 64-bit quarters back in order */
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}
#elif defined(__SSE2__) && !defined(DY_NO_SIMD)
#include <emmintrin.h> /* SSE2 only: much cheaper to compile than <immintrin.h> */
#define DY_SIMD_PATH "sse2"
#define DY_VW 4
typedef __m128 dy_vf;
DY_HELPER dy_vf dy_vload(const float *p) { return _mm_loadu_ps(p); }
DY_HELPER void dy_vstore(float *p, dy_vf x) { _mm_storeu_ps(p, x); }
DY_HELPER dy_vf dy_vset(float x) { return _mm_set1_ps(x); }
DY_HELPER dy_vf dy_vadd(dy_vf a, dy_vf b) { return _mm_add_ps(a, b); }
DY_HELPER dy_vf dy_vsub(dy_vf a, dy_vf b) { return _mm_sub_ps(a, b); }
DY_HELPER dy_vf dy_vmul(dy_vf a, dy_vf b) { return _mm_mul_ps(a, b); }
DY_HELPER dy_vf dy_vmax(dy_vf a, dy_vf b) { return _mm_max_ps(a, b); }
DY_HELPER dy_vf dy_vmin(dy_vf a, dy_vf b) { return _mm_min_ps(a, b); }
DY_HELPER dy_vf dy_vfma(dy_vf a, dy_vf b, dy_vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
DY_HELPER float dy_vsum(dy_vf x) {
  __m128 s = _mm_add_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}
DY_HELPER float dy_vhmax(dy_vf x) {
  __m128 s = _mm_max_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_shuffle_ps(s, s, 1)));
}
DY_HELPER dy_vf dy_vrelu(dy_vf x) { return _mm_max_ps(x, _mm_setzero_ps()); }
DY_HELPER dy_vf dy_vrelu6(dy_vf x) {
  return _mm_max_ps(_mm_setzero_ps(), _mm_min_ps(_mm_set1_ps(6.0f), x));
}
DY_HELPER dy_vf dy_vleaky(dy_vf x, float a) {
  __m128 m = _mm_cmpgt_ps(x, _mm_setzero_ps());
  return _mm_or_ps(_mm_and_ps(m, x), _mm_andnot_ps(m, _mm_mul_ps(x, _mm_set1_ps(a))));
}
DY_HELPER dy_vf dy_vdiv(dy_vf a, dy_vf b) { return _mm_div_ps(a, b); }
/* nearest (the default rounding mode); |x| < 2^31 */
DY_HELPER dy_vf dy_vround(dy_vf x) { return _mm_cvtepi32_ps(_mm_cvtps_epi32(x)); }
DY_HELPER dy_vf dy_vpow2i(dy_vf n) {
  return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(_mm_cvtps_epi32(n), _mm_set1_epi32(127)), 23));
}
DY_HELPER dy_vf dy_vselect_lt(dy_vf a, dy_vf b, dy_vf x, dy_vf y) {
  __m128 m = _mm_cmplt_ps(a, b);
  return _mm_or_ps(_mm_and_ps(m, x), _mm_andnot_ps(m, y));
}
DY_HELPER dy_vf dy_vabs(dy_vf x) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), x); }
DY_HELPER dy_vf dy_vcopysign(dy_vf m, dy_vf s) {
  const __m128 b = _mm_set1_ps(-0.0f);
  return _mm_or_ps(_mm_andnot_ps(b, m), _mm_and_ps(b, s));
}
DY_HELPER void dy_vdeint(dy_vf a, dy_vf b, dy_vf *even, dy_vf *odd) {
  *even = _mm_shuffle_ps(a, b, 0x88);
  *odd = _mm_shuffle_ps(a, b, 0xDD);
}
#elif defined(__ARM_NEON) && defined(__aarch64__) && !defined(DY_NO_SIMD)
#include <arm_neon.h>
#define DY_SIMD_PATH "neon"
#define DY_VW 4
typedef float32x4_t dy_vf;
DY_HELPER dy_vf dy_vload(const float *p) { return vld1q_f32(p); }
DY_HELPER void dy_vstore(float *p, dy_vf x) { vst1q_f32(p, x); }
DY_HELPER dy_vf dy_vset(float x) { return vdupq_n_f32(x); }
DY_HELPER dy_vf dy_vadd(dy_vf a, dy_vf b) { return vaddq_f32(a, b); }
DY_HELPER dy_vf dy_vsub(dy_vf a, dy_vf b) { return vsubq_f32(a, b); }
DY_HELPER dy_vf dy_vmul(dy_vf a, dy_vf b) { return vmulq_f32(a, b); }
DY_HELPER dy_vf dy_vmax(dy_vf a, dy_vf b) { return vmaxq_f32(a, b); }
DY_HELPER dy_vf dy_vmin(dy_vf a, dy_vf b) { return vminq_f32(a, b); }
DY_HELPER dy_vf dy_vfma(dy_vf a, dy_vf b, dy_vf c) { return vfmaq_f32(c, a, b); }
DY_HELPER float dy_vsum(dy_vf x) { return vaddvq_f32(x); }
DY_HELPER float dy_vhmax(dy_vf x) { return vmaxvq_f32(x); }
DY_HELPER dy_vf dy_vrelu(dy_vf x) {
  return vbslq_f32(vcgtq_f32(x, vdupq_n_f32(0.0f)), x, vdupq_n_f32(0.0f));
}
DY_HELPER dy_vf dy_vrelu6(dy_vf x) {
  dy_vf t = vbslq_f32(vcgtq_f32(x, vdupq_n_f32(6.0f)), vdupq_n_f32(6.0f), x);
  return vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), vdupq_n_f32(0.0f), t);
}
DY_HELPER dy_vf dy_vleaky(dy_vf x, float a) {
  return vbslq_f32(vcgtq_f32(x, vdupq_n_f32(0.0f)), x, vmulq_f32(x, vdupq_n_f32(a)));
}
DY_HELPER dy_vf dy_vdiv(dy_vf a, dy_vf b) { return vdivq_f32(a, b); }
DY_HELPER dy_vf dy_vround(dy_vf x) { return vrndnq_f32(x); }
DY_HELPER dy_vf dy_vpow2i(dy_vf n) {
  return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23));
}
DY_HELPER dy_vf dy_vselect_lt(dy_vf a, dy_vf b, dy_vf x, dy_vf y) {
  return vbslq_f32(vcltq_f32(a, b), x, y);
}
DY_HELPER dy_vf dy_vabs(dy_vf x) { return vabsq_f32(x); }
DY_HELPER dy_vf dy_vcopysign(dy_vf m, dy_vf s) {
  return vbslq_f32(vdupq_n_u32(0x80000000u), s, m);
}
DY_HELPER void dy_vdeint(dy_vf a, dy_vf b, dy_vf *even, dy_vf *odd) {
  *even = vuzp1q_f32(a, b);
  *odd = vuzp2q_f32(a, b);
}
#else
#define DY_SIMD_PATH "scalar"
#define DY_VW 1
typedef float dy_vf;
DY_HELPER dy_vf dy_vload(const float *p) { return *p; }
DY_HELPER void dy_vstore(float *p, dy_vf x) { *p = x; }
DY_HELPER dy_vf dy_vset(float x) { return x; }
DY_HELPER dy_vf dy_vadd(dy_vf a, dy_vf b) { return a + b; }
DY_HELPER dy_vf dy_vsub(dy_vf a, dy_vf b) { return a - b; }
DY_HELPER dy_vf dy_vmul(dy_vf a, dy_vf b) { return a * b; }
DY_HELPER dy_vf dy_vmax(dy_vf a, dy_vf b) { return a > b ? a : b; }
DY_HELPER dy_vf dy_vmin(dy_vf a, dy_vf b) { return a < b ? a : b; }
/* one rounding where the FPU has a fused multiply-add (Cortex-M4F/M7/M33,
 * RISC-V F: the compiler says so by __FP_FAST_FMAF), else a * b + c, which
 * -std=c11 does not contract (two instructions, two roundings) */
#if defined(__FP_FAST_FMAF) && defined(__GNUC__)
DY_HELPER dy_vf dy_vfma(dy_vf a, dy_vf b, dy_vf c) { return __builtin_fmaf(a, b, c); }
#else
DY_HELPER dy_vf dy_vfma(dy_vf a, dy_vf b, dy_vf c) { return a * b + c; }
#endif
DY_HELPER float dy_vsum(dy_vf x) { return x; }
DY_HELPER float dy_vhmax(dy_vf x) { return x; }
DY_HELPER dy_vf dy_vrelu(dy_vf x) { return x > 0.0f ? x : 0.0f; }
DY_HELPER dy_vf dy_vrelu6(dy_vf x) { return x < 0.0f ? 0.0f : x > 6.0f ? 6.0f : x; }
DY_HELPER dy_vf dy_vleaky(dy_vf x, float a) { return x > 0.0f ? x : a * x; }
DY_HELPER dy_vf dy_vdiv(dy_vf a, dy_vf b) { return a / b; }
DY_HELPER dy_vf dy_vselect_lt(dy_vf a, dy_vf b, dy_vf x, dy_vf y) { return a < b ? x : y; }
DY_HELPER void dy_vdeint(dy_vf a, dy_vf b, dy_vf *even, dy_vf *odd) {
  *even = a;
  *odd = b;
}
#endif

/* Vector math for the kernels' activations and softmax, lane by lane the
 * algorithms of emit_mathlib.c: e^x by Cody-Waite reduction and Cephes'
 * polynomial (inf above 88.72, 0 below -87.3365: no subnormal results),
 * tanh by Cephes' odd polynomial below 0.625 and 1 - 2/(e^2x + 1)
 * above, erf by dy_erff's fitted polynomials; sigmoid 1/(1 + e^-x), silu
 * x/(1 + e^-x), gelu 0.5 x (1 + erf(x/sqrt 2)) as the eager kernels write
 * them. NaN stays NaN. Max error against libm over every 13th float, the
 * larger of the SSE2 and AVX2 paths (tests/mathlib_sweep.c built with
 * -DDY_SWEEP_VECTOR; tests/test_mathlib.c holds every path it can run,
 * NEON under qemu included, to these bounds with a sparser sweep):
 *   e^x 1.27 ulp (both forms), sigmoid 3.19 and silu 3.06 (x > -87.3),
 *   tanh 1.36, erf 1.37, gelu 1.71 ulp of max(|gelu(x)|, |x|/2) (1 + erf
 *   cancels for x < 0).
 * With one lane they are emit_mathlib.c's scalar functions. dy_vact(x, a)
 * applies activation a: DY_ACT_SIGMOID, _TANH, _GELU (erf form), _SILU, _HARD_SWISH
 * (the acts of ir/acts.def whose AT is TILE; tests/test_acts.c checks
 * each has its code and a case in dy_sact, dy_vact and DY_ACT_SWITCH). */
#define DY_ACT_SIGMOID 1
#define DY_ACT_TANH 2
#define DY_ACT_GELU 3
#define DY_ACT_SILU 4
#define DY_ACT_HARD_SWISH 5
/* one value: emit_mathlib.c's forms (the formulas of ir/acts.def) */
DY_HELPER float dy_sact(float x, int act) {
  switch (act) {
  case DY_ACT_SIGMOID: return 1.0f / (1.0f + dy_expf(-x));
  case DY_ACT_TANH: return dy_tanhf(x);
  case DY_ACT_GELU: return 0.5f * x * (1.0f + dy_erff(x * 0.707106781f));
  case DY_ACT_HARD_SWISH: { /* x * relu6(x + 3) / 6; NaN stays NaN */
    const float t = x + 3.0f;
    return x * (t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t) / 6.0f;
  }
  case DY_ACT_SILU:
  default: return x / (1.0f + dy_expf(-x));
  }
}
#if DY_VW > 1
/* e^r for t = n ln2 + r (Cody-Waite), |r| <= ln2/2, by Cephes' polynomial;
 * n in *n */
DY_HELPER dy_vf dy_vexp_r(dy_vf t, dy_vf *n) {
  dy_vf r, p;
  *n = dy_vround(dy_vmul(t, dy_vset(1.44269504f)));
  r = dy_vfma(*n, dy_vset(-0.693359375f), t);
  r = dy_vfma(*n, dy_vset(2.12194440e-4f), r);
  p = dy_vfma(dy_vset(1.9875691500e-4f), r, dy_vset(1.3981999507e-3f));
  p = dy_vfma(p, r, dy_vset(8.3334519073e-3f));
  p = dy_vfma(p, r, dy_vset(4.1665795894e-2f));
  p = dy_vfma(p, r, dy_vset(1.6666665459e-1f));
  p = dy_vfma(p, r, dy_vset(5.0000001201e-1f));
  return dy_vfma(p, dy_vmul(r, r), dy_vadd(r, dy_vset(1.0f)));
}
DY_HELPER dy_vf dy_vexp(dy_vf x) {
  const dy_vf lo = dy_vset(-87.3365f); /* e^lo just above FLT_MIN */
  dy_vf n, n1, p = dy_vexp_r(dy_vmin(dy_vset(88.7228394f), dy_vmax(lo, x)), &n);
  /* 2^n, n in [-126, 128], as two normal factors (2^128 overflows to inf
   * at the top clamp); a NaN passes through the clamps */
  n1 = dy_vround(dy_vmul(n, dy_vset(0.5f)));
  p = dy_vmul(dy_vmul(p, dy_vpow2i(n1)), dy_vpow2i(dy_vsub(n, n1)));
  /* below the normal range: 0, no subnormals (they are slow to compute
   * with, and softmax's exp(x - max) reaches them often) */
  return dy_vselect_lt(x, lo, dy_vset(0.0f), p);
}
/* the same for x <= 0 (softmax's x - max, erf's tail): one factor 2^n */
DY_HELPER dy_vf dy_vexp_neg(dy_vf x) {
  const dy_vf lo = dy_vset(-87.3365f);
  dy_vf n, p = dy_vexp_r(dy_vmax(lo, x), &n);
  return dy_vselect_lt(x, lo, dy_vset(0.0f), dy_vmul(p, dy_vpow2i(n)));
}
/* e^-x for sigmoid and silu: one factor 2^n (inf from x < -88.38 on,
 * where 1/(1 + e^-x) is below FLT_MIN), no select for the underflow (x
 * above 87.34 gives e^-x = 2^-126 and the same 1 + e^-x as 0 would): the
 * values of dy_vexp wherever the activations' results are normal, in 9
 * fewer operations */
DY_HELPER dy_vf dy_vexp_minus(dy_vf x) {
  dy_vf n, p = dy_vexp_r(dy_vmin(dy_vset(88.7228394f), dy_vmax(dy_vset(-87.3365f),
                                                             dy_vsub(dy_vset(0.0f), x))), &n);
  return dy_vmul(p, dy_vpow2i(n));
}
DY_HELPER dy_vf dy_vsigmoid(dy_vf x) {
  return dy_vdiv(dy_vset(1.0f), dy_vadd(dy_vset(1.0f), dy_vexp_minus(x)));
}
DY_HELPER dy_vf dy_vtanh(dy_vf x) {
  const dy_vf a = dy_vabs(x), z = dy_vmul(x, x);
  dy_vf p = dy_vfma(dy_vset(-5.70498872745e-3f), z, dy_vset(2.06390887954e-2f));
  p = dy_vfma(p, z, dy_vset(-5.37397155531e-2f));
  p = dy_vfma(p, z, dy_vset(1.33314422036e-1f));
  p = dy_vfma(p, z, dy_vset(-3.33332819422e-1f));
  const dy_vf small = dy_vfma(dy_vmul(p, z), x, x);
  const dy_vf e = dy_vexp(dy_vadd(a, a));
  const dy_vf big = dy_vsub(dy_vset(1.0f), dy_vdiv(dy_vset(2.0f), dy_vadd(e, dy_vset(1.0f))));
  return dy_vselect_lt(a, dy_vset(0.625f), small, dy_vcopysign(big, x));
}
/* emit_mathlib.c's dy_erff, lane by lane: x + x P(x^2) below 0.92, else
 * 1 - e^(Q(t) - t^2), t = min(|x|, 4), with x's sign */
DY_HELPER dy_vf dy_verf(dy_vf x) {
  const dy_vf a = dy_vabs(x), s = dy_vmul(x, x);
  dy_vf p = dy_vfma(dy_vset(8.382387750e-05f), s, dy_vset(-8.145596948e-04f));
  p = dy_vfma(p, s, dy_vset(5.201286171e-03f));
  p = dy_vfma(p, s, dy_vset(-2.685949951e-02f));
  p = dy_vfma(p, s, dy_vset(1.128369719e-01f));
  p = dy_vfma(p, s, dy_vset(-3.761263490e-01f));
  p = dy_vfma(p, s, dy_vset(1.283791661e-01f));
  const dy_vf small = dy_vfma(p, x, x);
  const dy_vf t = dy_vmin(dy_vset(4.0f), a); /* NaN stays NaN */
  dy_vf q = dy_vfma(dy_vset(-2.116202995e-05f), t, dy_vset(4.352202232e-04f));
  q = dy_vfma(q, t, dy_vset(-4.174649250e-03f));
  q = dy_vfma(q, t, dy_vset(2.512864023e-02f));
  q = dy_vfma(q, t, dy_vset(-1.082939655e-01f));
  q = dy_vfma(q, t, dy_vset(3.666653633e-01f));
  q = dy_vfma(q, t, dy_vset(-1.129520774e+00f));
  q = dy_vfma(q, t, dy_vset(1.758763246e-04f));
  const dy_vf e = dy_vexp_neg(dy_vfma(dy_vsub(dy_vset(0.0f), t), t, q));
  const dy_vf big = dy_vcopysign(dy_vsub(dy_vset(1.0f), e), x);
  return dy_vselect_lt(a, dy_vset(0.92f), small, big);
}
DY_HELPER dy_vf dy_vgelu(dy_vf x) {
  const dy_vf e = dy_verf(dy_vmul(x, dy_vset(0.707106781f)));
  return dy_vmul(dy_vmul(dy_vset(0.5f), x), dy_vadd(dy_vset(1.0f), e));
}
DY_HELPER dy_vf dy_vsilu(dy_vf x) {
  return dy_vdiv(x, dy_vadd(dy_vset(1.0f), dy_vexp_minus(x)));
}
/* x * relu6(x + 3) / 6, the scalar form's order of operations (a NaN x
 * gives NaN: the clamp's value is multiplied by it) */
DY_HELPER dy_vf dy_vhswish(dy_vf x) {
  const dy_vf t = dy_vrelu6(dy_vadd(x, dy_vset(3.0f)));
  return dy_vdiv(dy_vmul(x, t), dy_vset(6.0f));
}
DY_HELPER dy_vf dy_vact(dy_vf x, int act) {
  switch (act) {
  case DY_ACT_SIGMOID: return dy_vsigmoid(x);
  case DY_ACT_TANH: return dy_vtanh(x);
  case DY_ACT_GELU: return dy_vgelu(x);
  case DY_ACT_HARD_SWISH: return dy_vhswish(x);
  case DY_ACT_SILU:
  default: return dy_vsilu(x);
  }
}
#else
DY_HELPER dy_vf dy_vexp(dy_vf x) { return dy_expf(x); }
DY_HELPER dy_vf dy_vexp_neg(dy_vf x) { return dy_expf(x); }
DY_HELPER dy_vf dy_vact(dy_vf x, int act) { return dy_sact(x, act); }
#endif

/* dy_f16: 16 floats as 16/DY_VW vectors named v0, v1, ...; DY_F16_EACH(X)
 * expands X(field, offset of its first float) for each. */
#if DY_VW == 16
#define DY_F16_EACH(X) X(v0, 0)
#elif DY_VW == 8
#define DY_F16_EACH(X) X(v0, 0) X(v1, 8)
#elif DY_VW == 4
#define DY_F16_EACH(X) X(v0, 0) X(v1, 4) X(v2, 8) X(v3, 12)
#else
#define DY_F16_EACH(X) X(v0, 0) X(v1, 1) X(v2, 2) X(v3, 3) X(v4, 4) X(v5, 5) \
  X(v6, 6) X(v7, 7) X(v8, 8) X(v9, 9) X(v10, 10) X(v11, 11) X(v12, 12) \
  X(v13, 13) X(v14, 14) X(v15, 15)
#endif
#define DY_F16_FIELD(f, o) dy_vf f;
typedef struct { DY_F16_EACH(DY_F16_FIELD) } dy_f16;
#undef DY_F16_FIELD

DY_HELPER dy_f16 dy_f16_set(float x) {
  dy_f16 r;
#define DY_X(f, o) r.f = dy_vset(x);
  DY_F16_EACH(DY_X)
#undef DY_X
  return r;
}
DY_HELPER dy_f16 dy_f16_load(const float *p) {
  dy_f16 r;
#define DY_X(f, o) r.f = dy_vload(p + o);
  DY_F16_EACH(DY_X)
#undef DY_X
  return r;
}
DY_HELPER void dy_f16_store(float *p, dy_f16 x) {
#define DY_X(f, o) dy_vstore(p + o, x.f);
  DY_F16_EACH(DY_X)
#undef DY_X
}
/* acc + a * b */
DY_HELPER dy_f16 dy_f16_fma(dy_f16 acc, float a, dy_f16 b) {
  const dy_vf va = dy_vset(a);
#define DY_X(f, o) acc.f = dy_vfma(va, b.f, acc.f);
  DY_F16_EACH(DY_X)
#undef DY_X
  return acc;
}
DY_HELPER dy_f16 dy_f16_add(dy_f16 x, dy_f16 y) {
#define DY_X(f, o) x.f = dy_vadd(x.f, y.f);
  DY_F16_EACH(DY_X)
#undef DY_X
  return x;
}
DY_HELPER dy_f16 dy_f16_relu(dy_f16 x) {
#define DY_X(f, o) x.f = dy_vrelu(x.f);
  DY_F16_EACH(DY_X)
#undef DY_X
  return x;
}
DY_HELPER dy_f16 dy_f16_relu6(dy_f16 x) {
#define DY_X(f, o) x.f = dy_vrelu6(x.f);
  DY_F16_EACH(DY_X)
#undef DY_X
  return x;
}
DY_HELPER dy_f16 dy_f16_leaky(dy_f16 x, float a) {
#define DY_X(f, o) x.f = dy_vleaky(x.f, a);
  DY_F16_EACH(DY_X)
#undef DY_X
  return x;
}
/* The first n (<= 16) floats at p; the rest 0. (AVX-512: one masked
 * load, which touches nothing past p + n; the GEMM's tile tails and
 * im2col's short runs.) */
DY_HELPER dy_f16 dy_f16_loadn(const float *p, int n) {
#if DY_VW == 16 && defined(DY_SIMD_AVX512_MASKS)
  dy_f16 r;
  r.v0 = _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
  return r;
#else
  float t[16] = {0};
  int j;
  if (n == 16)
    return dy_f16_load(p);
  for (j = 0; j < n; j++)
    t[j] = p[j];
  return dy_f16_load(t);
#endif
}
/* Store the first n (<= 16) floats of x at p. */
DY_HELPER void dy_f16_storen(float *p, dy_f16 x, int n) {
#if DY_VW == 16 && defined(DY_SIMD_AVX512_MASKS)
  _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), x.v0);
#else
  float t[16];
  int j;
  if (n == 16) {
    dy_f16_store(p, x);
    return;
  }
  dy_f16_store(t, x);
  for (j = 0; j < n; j++)
    p[j] = t[j];
#endif
}
/* d[0..n) = s[0..n), the buffers apart. Kept out of line: inlined into
 * NAME_run, where both pointers come from the arena, gcc would turn the
 * loop into a call of memmove. */
#if defined(__GNUC__)
static __attribute__((noinline, unused))
#else
static
#endif
void dy_copy(float *restrict d, const float *restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + DY_VW <= n; i += DY_VW)
    dy_vstore(d + i, dy_vload(s + i));
  if (i < n)
    dy_f16_storen(d + i, dy_f16_loadn(s + i, (int)(n - i)), (int)(n - i));
}
/* d[0..n) = act(s[0..n)) for act DY_ACT_*; d may be s. Out of line: one
 * copy of the vector math per file; the choice of activation is made once,
 * outside the loop. */
#define DY_ACT_LOOP(f)                                           \
  for (; i + DY_VW <= n; i += DY_VW)                             \
    dy_vstore(d + i, f(dy_vload(s + i)));                        \
  if (i < n) {                                                   \
    float t_[DY_VW];                                             \
    int64_t j_;                                                  \
    for (j_ = 0; j_ < DY_VW; j_++)                               \
      t_[j_] = i + j_ < n ? s[i + j_] : 0.0f;                    \
    dy_vstore(t_, f(dy_vload(t_)));                              \
    for (j_ = 0; i + j_ < n; j_++)                               \
      d[i + j_] = t_[j_];                                        \
  }
#if DY_VW > 1
#define DY_ACT_SWITCH(act)                                       \
  switch (act) {                                                 \
  case DY_ACT_SIGMOID: DY_ACT_LOOP(dy_vsigmoid) break;            \
  case DY_ACT_TANH: DY_ACT_LOOP(dy_vtanh) break;                  \
  case DY_ACT_GELU: DY_ACT_LOOP(dy_vgelu) break;                  \
  case DY_ACT_HARD_SWISH: DY_ACT_LOOP(dy_vhswish) break;          \
  case DY_ACT_SILU:                                              \
  default: DY_ACT_LOOP(dy_vsilu) break;                           \
  }
#else
#define DY_ACT_SWITCH(act) for (; i < n; i++) d[i] = dy_sact(s[i], act);
#endif
#if defined(__GNUC__)
static __attribute__((noinline, unused))
#else
static
#endif
void dy_act(float *d, const float *s, int64_t n, int act) {
  int64_t i = 0;
  DY_ACT_SWITCH(act)
}
/* the same on rows r < m of a tile, c[r * ldc + 0..n) in place */
#if defined(__GNUC__)
static __attribute__((noinline, unused))
#else
static
#endif
void dy_act_tile(float *c, int64_t ldc, int64_t m, int64_t n, int act) {
  int64_t r;
  for (r = 0; r < m; r++) {
    float *d = c + r * ldc;
    const float *s = d;
    int64_t i = 0;
    DY_ACT_SWITCH(act)
  }
}
/* dy2stc: template end */
#endif /* DY_RT_SIMD_H */
