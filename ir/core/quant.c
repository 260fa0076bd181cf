/* quant.c - the requantization parameters of the quantized ops
 * (ops_quant.def): real multipliers made Q31 multipliers and shifts the
 * way TFLite's reference kernels make them (kernels/internal/
 * quantization_util.cc, kernels/add.cc, mul.cc, softmax.cc), computed once
 * here for the reference kernels (runtime/kernels/kernels_quant.c) and for the
 * constants the emitters write (codegen/ops/emit_quant.c). */
#include <math.h>

#include "dy_ir.h"

/* TFLite's QuantizeMultiplier: real = m / 2^31 * 2^shift, m in [2^30,
 * 2^31) (0 for 0), the fraction rounded half away from zero; a shift
 * below -31 gives 0, one above 30 the largest multiplier. */
void dy_quant_multiplier(double real, int32_t *mult, int32_t *shift) {
  if (!(real > 0.0) || !isfinite(real)) {
    *mult = 0;
    *shift = 0;
    return;
  }
  int e;
  double q = frexp(real, &e);
  int64_t q_fixed = (int64_t)round(q * (double)(1LL << 31));
  if (q_fixed == (1LL << 31)) {
    q_fixed /= 2;
    ++e;
  }
  if (e < -31) {
    e = 0;
    q_fixed = 0;
  }
  if (e > 30) {
    e = 30;
    q_fixed = (1LL << 31) - 1;
  }
  *mult = (int32_t)q_fixed;
  *shift = e;
}

void dy_quant_add_params(float a_scale, float b_scale, float y_scale, int32_t mult[3],
                         int32_t shift[3]) {
  /* kernels/add.cc: left shift 20, both inputs rescaled to twice the
   * larger scale (float, as TFLite's std::max of the floats) */
  double twice_max = (double)(2 * (a_scale > b_scale ? a_scale : b_scale));
  dy_quant_multiplier((double)a_scale / twice_max, &mult[0], &shift[0]);
  dy_quant_multiplier((double)b_scale / twice_max, &mult[1], &shift[1]);
  dy_quant_multiplier(twice_max / ((double)(1 << DY_QADD_LEFT_SHIFT) * (double)y_scale),
                      &mult[2], &shift[2]);
}

void dy_quant_softmax_params(float x_scale, int32_t *mult, int32_t *lshift,
                             int32_t *diff_min) {
  /* PreprocessSoftmaxScaling (beta 1, 5 integer bits) and
   * CalculateInputRadius */
  double real = (double)x_scale * (double)(1 << (31 - 5));
  if (real > (double)((1LL << 31) - 1))
    real = (double)((1LL << 31) - 1);
  dy_quant_multiplier(real, mult, lshift);
  if (*lshift < 0) { /* a scale below 2^-26: every difference rounds to 0 */
    *mult = 0;
    *lshift = 0;
  }
  double radius = 1.0 * ((1 << 5) - 1) * (double)(1LL << (31 - 5)) / (double)(1LL << *lshift);
  *diff_min = -(int32_t)floor(radius);
}

int32_t dy_quant_value(dy_dtype t, const void *data, int64_t i) {
  switch (t) {
  case DY_I8: return ((const int8_t *)data)[i];
  case DY_U8: return ((const uint8_t *)data)[i];
  case DY_I32: return ((const int32_t *)data)[i];
  default: return 0;
  }
}

void dy_quant_range(dy_dtype t, int32_t *lo, int32_t *hi) {
  *lo = t == DY_U8 ? 0 : t == DY_I8 ? -128 : INT32_MIN;
  *hi = t == DY_U8 ? 255 : t == DY_I8 ? 127 : INT32_MAX;
}

void dy_quant_act_range(dy_dtype t, int64_t act_min, int64_t act_max, int32_t *lo,
                        int32_t *hi) {
  dy_quant_range(t, lo, hi);
  if (act_min > *lo)
    *lo = act_min > *hi ? *hi : (int32_t)act_min;
  if (act_max < *hi)
    *hi = act_max < *lo ? *lo : (int32_t)act_max;
}
