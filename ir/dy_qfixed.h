/* dy_qfixed.h - the fixed-point arithmetic of the quantized ops
 * (ir/ops_quant.def), written once: the reference kernels
 * (runtime/kernels/kernels_quant.c) include this file, and the generated C carries
 * the text between the template markers verbatim (codegen/CMakeLists.txt
 * embeds it as dy_tpl_qfixed; emit_quant.c's kernels call it), so the two
 * agree bit for bit by construction. Freestanding C99: <stdint.h> only, no
 * floating point but dy_q_round_f32, no libm, no division by a run-time
 * value.
 *
 * The rules are TFLite's reference kernels' (tensorflow/lite/kernels/
 * internal/common.h) and gemmlowp's (fixedpoint/fixedpoint.h), operation
 * for operation:
 *
 *   dy_q_srdhm(a, b)       SaturatingRoundingDoublingHighMul: (a*b + 2^30)
 *                          / 2^31 with the nudge 1 - 2^30 for a negative
 *                          product, C's truncating division; INT32_MIN *
 *                          INT32_MIN saturates to INT32_MAX (ARM's
 *                          VQRDMULH)
 *   dy_q_rdivpot(x, e)     RoundingDivideByPOT: x / 2^e rounded to nearest,
 *                          ties away from zero, 0 <= e <= 31
 *   dy_q_shl_sat(x, s)     x * 2^s for 0 <= s <= 31, saturating to
 *                          INT32_MIN / INT32_MAX (gemmlowp's
 *                          SaturatingRoundingMultiplyByPOT for s > 0)
 *   dy_q_add_sat(a, b)     a + b saturating likewise (the zero point added
 *                          to a requantized value near INT32_MAX)
 *   dy_q_mul_by_qm(x, m, s)  MultiplyByQuantizedMultiplier: x * m / 2^31 *
 *                          2^s as rdivpot(srdhm(shl_sat(x, max(s, 0)), m),
 *                          max(-s, 0)) (TFLite's default "double rounding";
 *                          TFLite's x * (1 << s) overflows where this
 *                          saturates: a tiny output scale gives the largest
 *                          output, never a wrapped one)
 *   dy_q_softmax_row       TFLite's int8/uint8 SOFTMAX over one row, with
 *                          gemmlowp's exp_on_negative_values (Q5.26 in,
 *                          Q0.31 out), a Q12.19 sum and the reciprocal by
 *                          one_over_one_plus_x_for_x_in_0_1
 *   dy_q_dot_s8(a, b, n)   sum of n int8 products in int32 (dy_q_dot_u8s8:
 *                          uint8 times int8), with the SIMD
 *                          instruction the target has (below)
 *   dy_q_dot2_s8(a, b0, b1, n, s)  s[0] = dy_q_dot_s8(a, b0, n), s[1] =
 *                          dy_q_dot_s8(a, b1, n) (dy_q_dot2_u8s8 likewise);
 *                          the Cortex-M DSP path loads and widens each word
 *                          of a once for both sums
 *   dy_q_pair(lo, hi), dy_q_mac2(acc, a, b)  two 16-bit values as a word;
 *                          acc + the products of two such words' halves
 *                          (SMLAD on a Cortex-M DSP)
 *   dy_q_mul_by_qm_r(x, m, e)  dy_q_mul_by_qm(x, m, -e) for e >= 0, m != INT32_MIN
 *   dy_q_round_f32(r)      r rounded to the nearest integer, ties to even
 *                          (ONNX QuantizeLinear's rounding), clamped to
 *                          [-2^22, 2^22]; NaN gives 0
 *
 * Shifts of a negative value right are arithmetic (what every compiler
 * dy2stc supports does; gemmlowp assumes the same); a shift left goes
 * through uint32_t, so it wraps instead of being undefined.
 */
#ifndef DY_QFIXED_H
#define DY_QFIXED_H

#include <stdint.h>

/* dy2stc: template begin */
/* ---- fixed-point arithmetic of the quantized kernels (TFLite's and
 * gemmlowp's reference rules; dy2stc's ir/dy_qfixed.h) ---- */

/* a model calls some of these only (clang warns of an unused static
 * function in a .c file, inline or not) */
#if defined(__GNUC__)
#define DY_Q_INLINE static inline __attribute__((unused))
#else
#define DY_Q_INLINE static inline
#endif

/* (ab + nudge) / 2^31 truncated is floor((ab + 2^30) / 2^31) for either
 * sign of ab (for ab < 0: trunc(v / 2^31) = floor((v + 2^31 - 1) / 2^31),
 * and v + 2^31 - 1 = ab + 2^30), an arithmetic shift: one multiply-
 * accumulate and two shifts on a 32-bit core */
DY_Q_INLINE int32_t dy_q_srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN)
    return INT32_MAX;
  return (int32_t)(((int64_t)a * (int64_t)b + (1 << 30)) >> 31);
}

DY_Q_INLINE int32_t dy_q_rdivpot(int32_t x, int e) {
  int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

DY_Q_INLINE int32_t dy_q_shl(int32_t x, int s) {
  return (int32_t)((uint32_t)x << s);
}

DY_Q_INLINE int32_t dy_q_sat64(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

DY_Q_INLINE int32_t dy_q_shl_sat(int32_t x, int s) {
  return dy_q_sat64((int64_t)x * ((int64_t)1 << s)); /* |x| * 2^31 < 2^63 */
}

DY_Q_INLINE int32_t dy_q_add_sat(int32_t a, int32_t b) {
  return dy_q_sat64((int64_t)a + (int64_t)b);
}

DY_Q_INLINE int32_t dy_q_mul_by_qm(int32_t x, int32_t m, int32_t s) {
  int left = s > 0 ? (int)(s > 31 ? 31 : s) : 0, right = s > 0 ? 0 : (int)(s < -31 ? 31 : -s);
  return dy_q_rdivpot(dy_q_srdhm(dy_q_shl_sat(x, left), m), right);
}

/* dy_q_mul_by_qm(x, m, -e) for 0 <= e <= 31 and m != INT32_MIN (every
 * multiplier ir/core/quant.c makes): no left shift, no saturating
 * product; the requantization of a kernel whose shifts are all <= 0, the
 * shifts negated at compile time */
DY_Q_INLINE int32_t dy_q_mul_by_qm_r(int32_t x, int32_t m, int32_t e) {
  int32_t r = (int32_t)(((int64_t)x * (int64_t)m + (1 << 30)) >> 31);
  int32_t mask = (int32_t)((1u << e) - 1u);
  return (r >> e) + ((r & mask) > (mask >> 1) + (r < 0 ? 1 : 0) ? 1 : 0);
}

DY_Q_INLINE int32_t dy_q_clamp(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

DY_Q_INLINE int32_t dy_q_round_f32(float r) {
  if (r != r)
    return 0;
  r = r < -4194304.0f ? -4194304.0f : r > 4194304.0f ? 4194304.0f : r;
  /* adding and taking away 1.5 * 2^23 leaves r rounded to an integer in
   * the current (round-to-nearest-even) mode, exactly */
  {
    volatile float t = r + 12582912.0f;
    return (int32_t)(t - 12582912.0f);
  }
}

/* gemmlowp's RoundingHalfSum for int32. */
DY_Q_INLINE int32_t dy_q_half_sum(int32_t a, int32_t b) {
  int64_t sum = (int64_t)a + (int64_t)b;
  int64_t sign = sum >= 0 ? 1 : -1;
  return (int32_t)((sum + sign) / 2);
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT<e> for e > 0 (saturating
 * left shift) and e < 0 (rounding right shift). */
DY_Q_INLINE int32_t dy_q_mul_pot(int32_t x, int e) {
  if (e > 0) {
    int32_t threshold = (int32_t)((1 << (31 - e)) - 1);
    if (x > threshold)
      return INT32_MAX;
    if (x < -threshold)
      return INT32_MIN;
    return dy_q_shl(x, e);
  }
  return e < 0 ? dy_q_rdivpot(x, -e) : x;
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
DY_Q_INLINE int32_t dy_q_exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668;    /* exp(-1/8) */
  const int32_t constant_1_over_3 = 715827883;
  int32_t x = a + (1 << 28);                   /* a + 1/8 */
  int32_t x2 = dy_q_srdhm(x, x);
  int32_t x3 = dy_q_srdhm(x2, x);
  int32_t x4 = dy_q_srdhm(x2, x2);
  int32_t x4_over_4 = dy_q_mul_pot(x4, -2);
  int32_t poly = dy_q_mul_pot(dy_q_srdhm(x4_over_4 + x3, constant_1_over_3) + x2, -1);
  return constant_term + dy_q_srdhm(constant_term, x + poly);
}

/* exp(a) for a <= 0 in Q5.26 (5 integer bits), the result in Q0.31
 * (gemmlowp's exp_on_negative_values<int32_t, 5>). */
DY_Q_INLINE int32_t dy_q_exp_neg_q5(int32_t a) {
  static const int32_t mult[7] = {1672461947, 1302514674, 790015084, 290630308,
                                  39332535, 720401, 242}; /* exp(-2^k), k = -2..4 */
  const int frac = 26;
  const int32_t quarter = 1 << (frac - 2);
  int32_t a_mod = (a & (quarter - 1)) - quarter;
  int32_t result = dy_q_exp_quarter(dy_q_mul_pot(a_mod, 5)); /* Rescale<0> */
  int32_t remainder = a_mod - a;
  int k;
  for (k = 0; k < 7; k++)
    if (remainder & (1 << (frac - 2 + k)))
      result = dy_q_srdhm(result, mult[k]);
  return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (Newton-Raphson,
 * gemmlowp's one_over_one_plus_x_for_x_in_0_1). */
DY_Q_INLINE int32_t dy_q_one_over_one_plus_x(int32_t a) {
  int32_t half_denominator = dy_q_half_sum(a, INT32_MAX);
  const int32_t c48_17 = 1515870810, cneg32_17 = -1010580540; /* Q2.29 */
  int32_t x = c48_17 + dy_q_srdhm(half_denominator, cneg32_17);
  int i;
  for (i = 0; i < 3; i++) {
    int32_t hdx = dy_q_srdhm(half_denominator, x);          /* Q2.29 */
    int32_t one_minus = (1 << 29) - hdx;
    x = x + dy_q_mul_pot(dy_q_srdhm(x, one_minus), 2);      /* Rescale<2> of Q4 */
  }
  return dy_q_mul_pot(x, 1); /* Rescale<0>(ExactMulByPot<-1>(x)): Q1 -> Q0 */
}

/* TFLite's GetReciprocal: 1 / x for x > 0 in Q(int_digits) as a Q0.31
 * scale and a count of bits over the unit. */
DY_Q_INLINE int32_t dy_q_reciprocal(int32_t x, int int_digits, int *bits_over_unit) {
  uint32_t u = (uint32_t)x;
  int clz = 0;
  while (clz < 31 && !(u & (0x80000000u >> clz)))
    clz++; /* x > 0: a row's sum holds its maximum's exp(0) */
  *bits_over_unit = int_digits - clz;
  return dy_q_one_over_one_plus_x((int32_t)((u << clz) - 0x80000000u));
}

/* One row of TFLite's quantized SOFTMAX: n values at x[0], x[stride], ...
 * (int8 when is_u8 is 0, else uint8) into y likewise. mult and lshift are
 * the input multiplier (beta * scale * 2^26 as Q31 and a left shift),
 * diff_min the smallest difference from the row's maximum that counts. */
DY_Q_INLINE void dy_q_softmax_row(const void *xv, void *yv, int64_t n, int64_t stride,
                                  int is_u8, int32_t mult, int32_t lshift,
                                  int32_t diff_min) {
  const int8_t *xs = (const int8_t *)xv;
  const uint8_t *xu = (const uint8_t *)xv;
  int8_t *ys = (int8_t *)yv;
  uint8_t *yu = (uint8_t *)yv;
  int32_t qmin = is_u8 ? 0 : -128, qmax = is_u8 ? 255 : 127;
  int32_t max_in_row = qmin, sum = 0;
  int64_t c;
  int bits;
  int32_t scale;
  for (c = 0; c < n; c++) {
    int32_t v = is_u8 ? xu[c * stride] : xs[c * stride];
    max_in_row = v > max_in_row ? v : max_in_row;
  }
  for (c = 0; c < n; c++) {
    int32_t d = (is_u8 ? xu[c * stride] : xs[c * stride]) - max_in_row;
    if (d >= diff_min) /* Rescale<12> of the Q0.31 exp: a right shift by 12 */
      sum += dy_q_rdivpot(dy_q_exp_neg_q5(dy_q_srdhm(dy_q_shl(d, (int)lshift), mult)), 12);
  }
  scale = dy_q_reciprocal(sum, 12, &bits);
  for (c = 0; c < n; c++) {
    int32_t d = (is_u8 ? xu[c * stride] : xs[c * stride]) - max_in_row, out = qmin;
    if (d >= diff_min) {
      int32_t e = dy_q_exp_neg_q5(dy_q_srdhm(dy_q_shl(d, (int)lshift), mult));
      out = dy_q_clamp(dy_q_rdivpot(dy_q_srdhm(scale, e), bits + 31 - 8) + qmin, qmin, qmax);
    }
    if (is_u8)
      yu[c * stride] = (uint8_t)out;
    else
      ys[c * stride] = (int8_t)out;
  }
}
/* sum a[i] * b[i] over n int8 pairs (dy_q_dot_u8s8: a uint8, b int8: an
 * ONNX QDQ model's activations and weights), exactly (int32). The instruction set
 * is chosen by the compiler's predefined macros, as dy_simd.h's are; every
 * path is exact integer arithmetic, so all give the same sum:
 *   __AVX512VNNI__ + __AVX512BW__  _mm512_dpbusd_epi32 (u8 x s8; for s8 x s8
 *                                  on a + 128, minus 128 * sum b, a second
 *                                  dpbusd)
 *   __AVX2__                       sign-extend to 16 bits, _mm256_madd_epi16
 *   __ARM_FEATURE_DOTPROD          NEON sdot (vdotq_s32; u8 x s8: as below)
 *   __aarch64__ (NEON)             vmull_s8 + vpadalq_s16 (u8 x s8: widened
 *                                  to 16 bits, vmlal_s16)
 *   __ARM_FEATURE_DSP (Cortex-M4/M7)  __sxtb16 (__uxtb16 for u8; the odd bytes by
 *                                  SXTB16 ROR #8, inline asm) to 16-bit
 *                                  pairs, __smlad
 *                                  (two 16-bit MACs an instruction)
 *   otherwise, or -DDY_NO_SIMD     plain C */
#if defined(DY_NO_SIMD)
#define DY_Q_DOT_C 1
#elif defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
DY_Q_INLINE int32_t dy_q_dot_s8(const int8_t *a, const int8_t *b, int32_t n) {
  __m512i acc = _mm512_setzero_si512(), corr = _mm512_setzero_si512();
  const __m512i flip = _mm512_set1_epi8((char)0x80), ones = _mm512_set1_epi8(1);
  int32_t i = 0, sum;
  for (; i + 64 <= n; i += 64) {
    __m512i va = _mm512_loadu_si512((const void *)(a + i));
    __m512i vb = _mm512_loadu_si512((const void *)(b + i));
    acc = _mm512_dpbusd_epi32(acc, _mm512_xor_si512(va, flip), vb);
    corr = _mm512_dpbusd_epi32(corr, ones, vb);
  }
  sum = _mm512_reduce_add_epi32(acc) - 128 * _mm512_reduce_add_epi32(corr);
  for (; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
DY_Q_INLINE int32_t dy_q_dot_u8s8(const uint8_t *a, const int8_t *b, int32_t n) {
  __m512i acc = _mm512_setzero_si512();
  int32_t i = 0, sum;
  for (; i + 64 <= n; i += 64)
    acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512((const void *)(a + i)),
                              _mm512_loadu_si512((const void *)(b + i)));
  sum = _mm512_reduce_add_epi32(acc);
  for (; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
#elif defined(__AVX2__)
#include <immintrin.h>
/* 16 bytes at p widened to 16-bit lanes: signed, or unsigned (u8) */
DY_Q_INLINE __m256i dy_q_widen16(const void *p, int is_u8) {
  __m128i v = _mm_loadu_si128((const __m128i *)p);
  return is_u8 ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v);
}
/* sum over 16-bit products of a (u8 when a_u8) and b (s8), the tail in C */
DY_Q_INLINE int32_t dy_q_dot_avx2(const void *a, const int8_t *b, int32_t n, int a_u8) {
  __m256i acc = _mm256_setzero_si256();
  __m128i s;
  int32_t i = 0, sum;
  for (; i + 16 <= n; i += 16)
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(dy_q_widen16((const char *)a + i, a_u8),
                                                  dy_q_widen16(b + i, 0)));
  s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  sum = _mm_cvtsi128_si32(s);
  for (; i < n; i++)
    sum += (a_u8 ? (int32_t)((const uint8_t *)a)[i] : (int32_t)((const int8_t *)a)[i]) * b[i];
  return sum;
}
DY_Q_INLINE int32_t dy_q_dot_s8(const int8_t *a, const int8_t *b, int32_t n) {
  return dy_q_dot_avx2(a, b, n, 0);
}
DY_Q_INLINE int32_t dy_q_dot_u8s8(const uint8_t *a, const int8_t *b, int32_t n) {
  return dy_q_dot_avx2(a, b, n, 1);
}
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
DY_Q_INLINE int32_t dy_q_dot_s8(const int8_t *a, const int8_t *b, int32_t n) {
  int32x4_t acc = vdupq_n_s32(0);
  int32_t i = 0, sum;
  for (; i + 16 <= n; i += 16) {
    int8x16_t va = vld1q_s8(a + i), vb = vld1q_s8(b + i);
#if defined(__ARM_FEATURE_DOTPROD)
    acc = vdotq_s32(acc, va, vb);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(va), vget_low_s8(vb)));
    acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(va), vget_high_s8(vb)));
#endif
  }
  sum = vaddvq_s32(acc);
  for (; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
DY_Q_INLINE int32_t dy_q_dot_u8s8(const uint8_t *a, const int8_t *b, int32_t n) {
  int32x4_t acc = vdupq_n_s32(0);
  int32_t i = 0, sum;
  for (; i + 8 <= n; i += 8) { /* u8 and s8 widened to s16: exact products */
    int16x8_t va = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(a + i)));
    int16x8_t vb = vmovl_s8(vld1_s8(b + i));
    acc = vmlal_s16(acc, vget_low_s16(va), vget_low_s16(vb));
    acc = vmlal_s16(acc, vget_high_s16(va), vget_high_s16(vb));
  }
  sum = vaddvq_s32(acc);
  for (; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
#elif defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)
#include <arm_acle.h>
/* __sxtb16 / __uxtb16 of w rotated right by 8 (bytes 1 and 3): one
 * instruction (the rotation is the extend's operand; the compilers emit a
 * separate ror for __sxtb16(w >> 8 | w << 24)) */
DY_Q_INLINE int32_t dy_q_sxtb16_ror8(uint32_t w) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}
DY_Q_INLINE int32_t dy_q_uxtb16_ror8(uint32_t w) {
  int32_t r;
  __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}
DY_Q_INLINE int32_t dy_q_load4(const int8_t *p) { /* unaligned, little-endian */
  return (int32_t)((uint32_t)(uint8_t)p[0] | (uint32_t)(uint8_t)p[1] << 8 |
                   (uint32_t)(uint8_t)p[2] << 16 | (uint32_t)(uint8_t)p[3] << 24);
}
DY_Q_INLINE int32_t dy_q_dot_s8(const int8_t *a, const int8_t *b, int32_t n) {
  int32_t i = 0, sum = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t wa = (uint32_t)dy_q_load4(a + i), wb = (uint32_t)dy_q_load4(b + i);
    /* bytes 0 and 2, then 1 and 3, as two 16-bit lanes each */
    int32_t a02 = __sxtb16((int32_t)wa), b02 = __sxtb16((int32_t)wb);
    int32_t a13 = dy_q_sxtb16_ror8(wa);
    int32_t b13 = dy_q_sxtb16_ror8(wb);
    sum = __smlad(a02, b02, sum);
    sum = __smlad(a13, b13, sum);
  }
  for (; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
DY_Q_INLINE int32_t dy_q_dot_u8s8(const uint8_t *a, const int8_t *b, int32_t n) {
  int32_t i = 0, sum = 0;
  for (; i + 4 <= n; i += 4) { /* a zero-extends (__uxtb16), b sign-extends */
    uint32_t wa = (uint32_t)dy_q_load4((const int8_t *)(const void *)(a + i));
    uint32_t wb = (uint32_t)dy_q_load4(b + i);
    int32_t a02 = (int32_t)__uxtb16(wa), b02 = __sxtb16((int32_t)wb);
    int32_t a13 = dy_q_uxtb16_ror8(wa);
    int32_t b13 = dy_q_sxtb16_ror8(wb);
    sum = __smlad(a02, b02, sum);
    sum = __smlad(a13, b13, sum);
  }
  for (; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
#define DY_Q_DOT2_DSP 1
DY_Q_INLINE void dy_q_dot2_s8(const int8_t *a, const int8_t *b0, const int8_t *b1, int32_t n,
                              int32_t *s) {
  int32_t i = 0, s0 = 0, s1 = 0;
  for (; i + 4 <= n; i += 4) { /* a's word widened once, used twice */
    uint32_t wa = (uint32_t)dy_q_load4(a + i);
    uint32_t w0 = (uint32_t)dy_q_load4(b0 + i), w1 = (uint32_t)dy_q_load4(b1 + i);
    int32_t a02 = __sxtb16((int32_t)wa), a13 = dy_q_sxtb16_ror8(wa);
    s0 = __smlad(a02, __sxtb16((int32_t)w0), s0);
    s0 = __smlad(a13, dy_q_sxtb16_ror8(w0), s0);
    s1 = __smlad(a02, __sxtb16((int32_t)w1), s1);
    s1 = __smlad(a13, dy_q_sxtb16_ror8(w1), s1);
  }
  for (; i < n; i++) {
    s0 += (int32_t)a[i] * b0[i];
    s1 += (int32_t)a[i] * b1[i];
  }
  s[0] = s0;
  s[1] = s1;
}
#else
#define DY_Q_DOT_C 1
#endif
#ifdef DY_Q_DOT_C
DY_Q_INLINE int32_t dy_q_dot_s8(const int8_t *a, const int8_t *b, int32_t n) {
  int32_t i, sum = 0;
  for (i = 0; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
DY_Q_INLINE int32_t dy_q_dot_u8s8(const uint8_t *a, const int8_t *b, int32_t n) {
  int32_t i, sum = 0;
  for (i = 0; i < n; i++)
    sum += (int32_t)a[i] * b[i];
  return sum;
}
#undef DY_Q_DOT_C
#endif
#ifndef DY_Q_DOT2_DSP
DY_Q_INLINE void dy_q_dot2_s8(const int8_t *a, const int8_t *b0, const int8_t *b1, int32_t n,
                              int32_t *s) {
  s[0] = dy_q_dot_s8(a, b0, n);
  s[1] = dy_q_dot_s8(a, b1, n);
}
#else
#undef DY_Q_DOT2_DSP
#endif
DY_Q_INLINE void dy_q_dot2_u8s8(const uint8_t *a, const int8_t *b0, const int8_t *b1,
                                int32_t n, int32_t *s) {
  s[0] = dy_q_dot_u8s8(a, b0, n);
  s[1] = dy_q_dot_u8s8(a, b1, n);
}
/* Two taps at once (the depthwise qconv2d): the 16-bit pair (lo, hi) as
 * one word, and acc + lo(a) * lo(b) + hi(a) * hi(b) over such words, the
 * halves signed: one SMLAD on a Cortex-M DSP, plain C elsewhere. */
DY_Q_INLINE uint32_t dy_q_pair(int32_t lo, int32_t hi) {
  return (uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16;
}
#if !defined(DY_NO_SIMD) && defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && \
    !defined(__aarch64__)
#include <arm_acle.h>
DY_Q_INLINE int32_t dy_q_mac2(int32_t acc, uint32_t a, uint32_t b) {
  return __smlad(a, b, acc);
}
#else
DY_Q_INLINE int32_t dy_q_mac2(int32_t acc, uint32_t a, uint32_t b) {
  return acc + (int32_t)(int16_t)(uint16_t)a * (int16_t)(uint16_t)b +
         (int32_t)(int16_t)(uint16_t)(a >> 16) * (int16_t)(uint16_t)(b >> 16);
}
#endif
/* The 2 x 2 block of qconv2d's dot form: two output pixels times two
 * output channels, each word of activations and weights read once for two
 * sums. dy_q_pack2_s8(a, n, pw) (dy_q_pack2_u8 for u8 activations)
 * rewrites two pixels' patches p0 = a[0, n) and p1 = a[n, 2n) once as
 * 16-bit pairs in the order SXTB16 widens a word of int8 weights (lanes:
 * bytes 0 and 2, then, rotated by 8, bytes 1 and 3; CMSIS-NN's
 * read_and_pad_reordered): per four taps t .. t + 3 the words
 * (p0[t], p0[t+2]), (p0[t+1], p0[t+3]), (p1[t], p1[t+2]), (p1[t+1], p1[t+3]),
 * then one word (p0[t], p1[t]) per tap of the last n % 4; n words in all.
 * dy_q_dot2x2(pw, b, n, s) gives s[0] = p0.b0, s[1] = p0.b1,
 * s[2] = p1.b0, s[3] = p1.b1 for two channels' weight rows b0 = b[0, n),
 * b1 = b[n, 2n) as they are stored (one pointer: the second row at a
 * constant offset, which keeps the loop in registers), dy_q_dot1x2(pw,
 * b, n, s) s[0] = p0.b, s[2] = p1.b (an odd last channel): on a
 * Cortex-M DSP per four taps two weight loads, four SXTB16, four pair
 * loads and eight SMLAD, 16 MACs; the plain-C form computes the same
 * integers. DY_Q_BLOCK2X2 is 1 where this block is the
 * faster form (the Cortex-M DSP; -DDY_Q_BLOCK2X2=1 forces it, plain C,
 * elsewhere), and the generated qconv2d takes it under #if DY_Q_BLOCK2X2. */
#if !defined(DY_NO_SIMD) && defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && \
    !defined(__aarch64__)
#ifndef DY_Q_BLOCK2X2
#define DY_Q_BLOCK2X2 1
#endif
DY_Q_INLINE void dy_q_pack2_s8(const int8_t *a, int32_t n, uint32_t *pw) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4, pw += 4) {
    uint32_t u = (uint32_t)dy_q_load4(a + i), v = (uint32_t)dy_q_load4(a + n + i);
    pw[0] = (uint32_t)__sxtb16((int32_t)u);
    pw[1] = (uint32_t)dy_q_sxtb16_ror8(u);
    pw[2] = (uint32_t)__sxtb16((int32_t)v);
    pw[3] = (uint32_t)dy_q_sxtb16_ror8(v);
  }
  for (; i < n; i++)
    *pw++ = dy_q_pair(a[i], a[n + i]);
}
DY_Q_INLINE void dy_q_pack2_u8(const uint8_t *a, int32_t n, uint32_t *pw) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4, pw += 4) {
    uint32_t u = (uint32_t)dy_q_load4((const int8_t *)(const void *)(a + i));
    uint32_t v = (uint32_t)dy_q_load4((const int8_t *)(const void *)(a + n + i));
    pw[0] = __uxtb16(u);
    pw[1] = (uint32_t)dy_q_uxtb16_ror8(u);
    pw[2] = __uxtb16(v);
    pw[3] = (uint32_t)dy_q_uxtb16_ror8(v);
  }
  for (; i < n; i++)
    *pw++ = dy_q_pair(a[i], a[n + i]);
}
/* four taps of the 2 x 2 block: the pair words x of both pixels, the
 * weight words of both channels at b and b + n (unrolled twice, gcc 12
 * spills and the loop costs more) */
#define DY_Q_DOT2X2_STEP(s00, s01, s10, s11, x, b, n)                           \
  do {                                                                          \
    const int32_t x0 = (int32_t)(x)[0], x1 = (int32_t)(x)[1];                   \
    const int32_t y0 = (int32_t)(x)[2], y1 = (int32_t)(x)[3];                   \
    uint32_t w = (uint32_t)dy_q_load4(b);                                       \
    int32_t w02 = __sxtb16((int32_t)w), w13 = dy_q_sxtb16_ror8(w);              \
    s00 = __smlad(x0, w02, s00);                                                \
    s00 = __smlad(x1, w13, s00);                                                \
    s10 = __smlad(y0, w02, s10);                                                \
    s10 = __smlad(y1, w13, s10);                                                \
    w = (uint32_t)dy_q_load4((b) + (n));                                        \
    w02 = __sxtb16((int32_t)w);                                                 \
    w13 = dy_q_sxtb16_ror8(w);                                                  \
    s01 = __smlad(x0, w02, s01);                                                \
    s01 = __smlad(x1, w13, s01);                                                \
    s11 = __smlad(y0, w02, s11);                                                \
    s11 = __smlad(y1, w13, s11);                                                \
  } while (0)
DY_Q_INLINE void dy_q_dot2x2(const uint32_t *pw, const int8_t *b, int32_t n, int32_t *s) {
  int32_t i = 0, s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  for (; i + 4 <= n; i += 4, pw += 4)
    DY_Q_DOT2X2_STEP(s00, s01, s10, s11, pw, b + i, n);
#undef DY_Q_DOT2X2_STEP
  for (; i < n; i++, pw++) {
    const int32_t x = (int16_t)(uint16_t)*pw, y = (int16_t)(uint16_t)(*pw >> 16);
    s00 += x * b[i];
    s01 += x * b[n + i];
    s10 += y * b[i];
    s11 += y * b[n + i];
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}
DY_Q_INLINE void dy_q_dot1x2(const uint32_t *pw, const int8_t *b, int32_t n, int32_t *s) {
  int32_t i = 0, s00 = 0, s10 = 0;
  for (; i + 4 <= n; i += 4, pw += 4) {
    const uint32_t w = (uint32_t)dy_q_load4(b + i);
    const int32_t w02 = __sxtb16((int32_t)w), w13 = dy_q_sxtb16_ror8(w);
    s00 = __smlad((int32_t)pw[0], w02, s00);
    s00 = __smlad((int32_t)pw[1], w13, s00);
    s10 = __smlad((int32_t)pw[2], w02, s10);
    s10 = __smlad((int32_t)pw[3], w13, s10);
  }
  for (; i < n; i++, pw++) {
    s00 += (int16_t)(uint16_t)*pw * b[i];
    s10 += (int16_t)(uint16_t)(*pw >> 16) * b[i];
  }
  s[0] = s00;
  s[2] = s10;
}
#else
#ifndef DY_Q_BLOCK2X2
#define DY_Q_BLOCK2X2 0
#endif
/* the same words and sums in plain C (a and p0 / p1 as above) */
#define DY_Q_PACK2_C(a, n, pw)                                                   \
  do {                                                                           \
    int32_t i_ = 0;                                                              \
    for (; i_ + 4 <= (n); i_ += 4, (pw) += 4) {                                  \
      (pw)[0] = dy_q_pair((a)[i_], (a)[i_ + 2]);                                 \
      (pw)[1] = dy_q_pair((a)[i_ + 1], (a)[i_ + 3]);                             \
      (pw)[2] = dy_q_pair((a)[(n) + i_], (a)[(n) + i_ + 2]);                     \
      (pw)[3] = dy_q_pair((a)[(n) + i_ + 1], (a)[(n) + i_ + 3]);                 \
    }                                                                            \
    for (; i_ < (n); i_++)                                                       \
      *(pw)++ = dy_q_pair((a)[i_], (a)[(n) + i_]);                               \
  } while (0)
DY_Q_INLINE void dy_q_pack2_s8(const int8_t *a, int32_t n, uint32_t *pw) {
  DY_Q_PACK2_C(a, n, pw);
}
DY_Q_INLINE void dy_q_pack2_u8(const uint8_t *a, int32_t n, uint32_t *pw) {
  DY_Q_PACK2_C(a, n, pw);
}
#undef DY_Q_PACK2_C
/* the weights' (b[i], b[i + 2]) and (b[i + 1], b[i + 3]) pairs against
 * the words of one pixel (x = pw[0], pw[1]) */
DY_Q_INLINE int32_t dy_q_mac4(int32_t acc, const uint32_t *x, const int8_t *b) {
  return dy_q_mac2(dy_q_mac2(acc, x[0], dy_q_pair(b[0], b[2])), x[1], dy_q_pair(b[1], b[3]));
}
DY_Q_INLINE void dy_q_dot1x2(const uint32_t *pw, const int8_t *b, int32_t n, int32_t *s) {
  int32_t i = 0, s00 = 0, s10 = 0;
  for (; i + 4 <= n; i += 4, pw += 4) {
    s00 = dy_q_mac4(s00, pw, b + i);
    s10 = dy_q_mac4(s10, pw + 2, b + i);
  }
  for (; i < n; i++, pw++) {
    s00 += (int16_t)(uint16_t)*pw * b[i];
    s10 += (int16_t)(uint16_t)(*pw >> 16) * b[i];
  }
  s[0] = s00;
  s[2] = s10;
}
DY_Q_INLINE void dy_q_dot2x2(const uint32_t *pw, const int8_t *b, int32_t n, int32_t *s) {
  int32_t d[4];
  dy_q_dot1x2(pw, b, n, d);
  dy_q_dot1x2(pw, b + n, n, d + 1);
  s[0] = d[0];
  s[1] = d[1];
  s[2] = d[2];
  s[3] = d[3];
}
#endif
/* ---- 16-pixel panels: qconv2d as a small GEMM (DY_Q_PANEL16) ----
 * The dot form's gather writes 16 output pixels' patches, row j at
 * patch + j * k4 (k4: the k taps rounded up to 4, the last ones 0);
 * dy_q_panel16(patch, k4, is_s8, panel) rewrites them once as k4 / 4
 * quads of [16 pixels][4 taps] of u8 (s8 activations plus 128: the caller
 * takes 128 * sum(w row) away with the zero point's correction), so that
 * dy_q_panel16_dot(panel, w, k, nc, acc) gives acc[c * 16 + j] =
 * sum_t panel(j, t) * w[c * k + t] for nc <= 8 output channels whose rows
 * of k int8 weights follow each other: on AVX-512 VNNI one vpdpbusd per
 * 4 taps x 16 pixels x 1 channel (the 4 weights broadcast), 8 channels'
 * sums held in registers; the plain-C form computes the same integers.
 * dy_q_requant16_r(acc, b, m, e, lo, hi, zp, y, nv, is_u8) stores
 * clamp(dy_q_mul_by_qm_r(acc[j] + b, m, e), lo, hi) + zp for j < nv as
 * 8-bit, 16 lanes at once on AVX-512 (the same rounding, bit for bit).
 * dy_q_panel16_1x1(x, hw, p0, nv, k, k4, is_s8, panel) makes the panel of
 * a 1 x 1 convolution of stride 1 without padding straight from the
 * input (channel rows of hw pixels: pixels p0 .. p0 + nv, the lanes past
 * nv and the channels past k as 0; four 16-byte rows interleaved a quad).
 * dy_q_dw16_sum(p, off, w, taps, acc): acc[j] = sum_t w[t] * p[off[t] + j]
 * for 16 lanes in f32, converted to int32: the depthwise form of
 * codegen/kernels/emit_qconv.c, whose sums are integers below 2^24, so
 * exact in any order and with or without FMA.
 * DY_Q_PANEL16 is 1 on AVX-512 VNNI (with BW and VL), where the generated
 * qconv2d takes this form under #if DY_Q_PANEL16; -DDY_Q_PANEL16=1 forces
 * it in plain C elsewhere (the tests). */
#if !defined(DY_NO_SIMD) && defined(__AVX512VNNI__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__)
#define DY_Q_PANEL16_VNNI 1
#include <immintrin.h>
#ifndef DY_Q_PANEL16
#define DY_Q_PANEL16 1
#endif
#else
#ifndef DY_Q_PANEL16
#define DY_Q_PANEL16 0
#endif
#endif
#if DY_Q_PANEL16
/* 4 bytes at p as a little-endian word (one load where the compiler
 * sees it) */
DY_Q_INLINE uint32_t dy_q_word(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
DY_Q_INLINE void dy_q_panel16(const void *patch, int32_t k4, int is_s8, uint8_t *panel) {
  const uint8_t *pp = (const uint8_t *)patch;
  const uint32_t flip = is_s8 ? 0x80808080u : 0u;
  for (int32_t q = 0; q < k4 / 4; q++)
    for (int j = 0; j < 16; j++) {
      uint32_t v = dy_q_word(pp + j * k4 + 4 * q) ^ flip;
      uint8_t *d = panel + (q * 16 + j) * 4;
      d[0] = (uint8_t)v;
      d[1] = (uint8_t)(v >> 8);
      d[2] = (uint8_t)(v >> 16);
      d[3] = (uint8_t)(v >> 24);
    }
}
/* channel c's weights t .. t + 3 as a word, the ones at or past k as 0 */
DY_Q_INLINE uint32_t dy_q_wquad(const int8_t *w, int32_t t, int32_t k) {
  if (t + 4 <= k)
    return dy_q_word((const uint8_t *)(const void *)(w + t));
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) /* a fixed count: the shifts stay below 32 */
    if (t + i < k)
      v |= (uint32_t)(uint8_t)w[t + i] << (8 * i);
  return v;
}
#ifdef DY_Q_PANEL16_VNNI
DY_Q_INLINE void dy_q_panel16_dot(const uint8_t *panel, const int8_t *w, int32_t k, int nc,
                                  int32_t *acc) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0;
  for (int32_t t = 0; t < k; t += 4, panel += 64) {
    const __m512i p = _mm512_loadu_si512((const void *)panel);
#define DY_Q_P16(c, a)                                                                      \
  if (nc > (c))                                                                            \
  a = _mm512_dpbusd_epi32(a, p, _mm512_set1_epi32((int)dy_q_wquad(w + (c) * k, t, k)))
    DY_Q_P16(0, a0);
    DY_Q_P16(1, a1);
    DY_Q_P16(2, a2);
    DY_Q_P16(3, a3);
    DY_Q_P16(4, a4);
    DY_Q_P16(5, a5);
    DY_Q_P16(6, a6);
    DY_Q_P16(7, a7);
#undef DY_Q_P16
  }
  _mm512_storeu_si512((void *)acc, a0);
  _mm512_storeu_si512((void *)(acc + 16), a1);
  _mm512_storeu_si512((void *)(acc + 32), a2);
  _mm512_storeu_si512((void *)(acc + 48), a3);
  _mm512_storeu_si512((void *)(acc + 64), a4);
  _mm512_storeu_si512((void *)(acc + 80), a5);
  _mm512_storeu_si512((void *)(acc + 96), a6);
  _mm512_storeu_si512((void *)(acc + 112), a7);
}
DY_Q_INLINE void dy_q_requant16_r(const int32_t *acc, int32_t b, int32_t m, int32_t e,
                                  int32_t lo, int32_t hi, int32_t zp, void *y, int nv,
                                  int is_u8) {
  const __m512i x = _mm512_add_epi32(_mm512_loadu_si512((const void *)acc), _mm512_set1_epi32(b));
  const __m512i mv = _mm512_set1_epi32(m), half = _mm512_set1_epi64((int64_t)1 << 30);
  /* (x * m + 2^30) >> 31 in 64 bits: the even lanes, then the odd ones */
  __m512i ev = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, mv), half), 31);
  __m512i od = _mm512_srai_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), mv), half), 31);
  __m512i r = _mm512_mask_blend_epi32((__mmask16)0xAAAA, ev, _mm512_slli_epi64(od, 32));
  /* the rounding divide by 2^e */
  const __m512i mask = _mm512_set1_epi32((int32_t)((1u << e) - 1u));
  __m512i thr = _mm512_add_epi32(_mm512_srai_epi32(mask, 1), _mm512_srli_epi32(r, 31));
  __mmask16 up = _mm512_cmpgt_epi32_mask(_mm512_and_si512(r, mask), thr);
  r = _mm512_sra_epi32(r, _mm_cvtsi32_si128(e));
  r = _mm512_mask_add_epi32(r, up, r, _mm512_set1_epi32(1));
  r = _mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(lo)), _mm512_set1_epi32(hi));
  r = _mm512_add_epi32(r, _mm512_set1_epi32(zp));
  const __mmask16 k = (__mmask16)((1u << nv) - 1u);
  (void)is_u8; /* the 8 low bits are the value for either dtype */
  _mm_mask_storeu_epi8(y, k, _mm512_cvtepi32_epi8(r));
}
DY_Q_INLINE void dy_q_panel16_1x1(const void *x, int32_t hw, int32_t p0, int nv, int32_t k,
                                  int32_t k4, int is_s8, uint8_t *panel) {
  const uint8_t *xb = (const uint8_t *)x + p0;
  const __m128i flip = _mm_set1_epi8(is_s8 ? (char)0x80 : 0);
  const __mmask16 m = (__mmask16)((1u << nv) - 1u);
  for (int32_t c = 0; c < k4; c += 4, panel += 64) {
    __m128i r[4];
    for (int b = 0; b < 4; b++)
      r[b] = c + b < k ? _mm_xor_si128(_mm_maskz_loadu_epi8(m, xb + (c + b) * hw), flip)
                       : _mm_setzero_si128();
    __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), hi01 = _mm_unpackhi_epi8(r[0], r[1]);
    __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
    _mm_storeu_si128((__m128i *)(void *)panel, _mm_unpacklo_epi16(lo01, lo23));
    _mm_storeu_si128((__m128i *)(void *)(panel + 16), _mm_unpackhi_epi16(lo01, lo23));
    _mm_storeu_si128((__m128i *)(void *)(panel + 32), _mm_unpacklo_epi16(hi01, hi23));
    _mm_storeu_si128((__m128i *)(void *)(panel + 48), _mm_unpackhi_epi16(hi01, hi23));
  }
}
DY_Q_INLINE void dy_q_dw16_sum(const float *p, const int32_t *off, const float *w, int taps,
                               int32_t *acc) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0;
  int t = 0;
  for (; t + 2 <= taps; t += 2) {
    s0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_loadu_ps(p + off[t]), s0);
    s1 = _mm512_fmadd_ps(_mm512_set1_ps(w[t + 1]), _mm512_loadu_ps(p + off[t + 1]), s1);
  }
  if (t < taps)
    s0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_loadu_ps(p + off[t]), s0);
  _mm512_storeu_si512((void *)acc, _mm512_cvttps_epi32(_mm512_add_ps(s0, s1)));
}
#else
DY_Q_INLINE void dy_q_panel16_dot(const uint8_t *panel, const int8_t *w, int32_t k, int nc,
                                  int32_t *acc) {
  for (int c = 0; c < nc; c++)
    for (int j = 0; j < 16; j++) {
      int32_t s = 0;
      for (int32_t t = 0; t < k; t++)
        s += (int32_t)panel[(t / 4 * 16 + j) * 4 + t % 4] * w[c * k + t];
      acc[c * 16 + j] = s;
    }
}
DY_Q_INLINE void dy_q_requant16_r(const int32_t *acc, int32_t b, int32_t m, int32_t e,
                                  int32_t lo, int32_t hi, int32_t zp, void *y, int nv,
                                  int is_u8) {
  for (int j = 0; j < nv; j++) {
    int32_t v = dy_q_clamp(dy_q_mul_by_qm_r(acc[j] + b, m, e), lo, hi) + zp;
    if (is_u8)
      ((uint8_t *)y)[j] = (uint8_t)v;
    else
      ((int8_t *)y)[j] = (int8_t)v;
  }
}
DY_Q_INLINE void dy_q_panel16_1x1(const void *x, int32_t hw, int32_t p0, int nv, int32_t k,
                                  int32_t k4, int is_s8, uint8_t *panel) {
  const uint8_t *xb = (const uint8_t *)x + p0;
  for (int32_t q = 0; q < k4 / 4; q++)
    for (int j = 0; j < 16; j++)
      for (int b = 0; b < 4; b++) {
        int32_t c = 4 * q + b;
        panel[(q * 16 + j) * 4 + b] =
            c < k && j < nv ? (uint8_t)(xb[c * hw + j] ^ (is_s8 ? 0x80u : 0u)) : 0;
      }
}
DY_Q_INLINE void dy_q_dw16_sum(const float *p, const int32_t *off, const float *w, int taps,
                               int32_t *acc) {
  for (int j = 0; j < 16; j++) {
    float s = 0.0f;
    for (int t = 0; t < taps; t++)
      s += w[t] * p[off[t] + j];
    acc[j] = (int32_t)s;
  }
}
#endif
#endif
/* dy2stc: template end */

#endif /* DY_QFIXED_H */
