/* onnx_quant.c - ONNX's quantization operators onto the quant op family
 * (ir/ops_quant.def): QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearMatMul, MatMulInteger (QLinearConv and ConvInteger are with the convolutions in
 * onnx_nn.c). A QDQ graph compiles as it is: its Q and DQ nodes become
 * quantize_linear / dequantize_linear ops (constant ones fold).
 *
 * Absent zero points are 0 of the tensor's dtype (QuantizeLinear: uint8,
 * as ONNX says); a per-tensor scale ignores axis. QLinearMatMul with a
 * constant 2-D int8 b stores b transposed ([N, K], transpose_y = 1), the
 * layout the generated dot-product kernel reads, and a zero int32 bias.
 * The requantization is TFLite's fixed-point rule (ops_quant.def), which
 * can differ by one from ONNX's float rounding where the real value is
 * within rounding error of a tie.
 */
#include <string.h>

#include "onnx_internal.h"

/* The axis attribute for a per-channel scale of numel n on x (0 for one
 * value: ONNX ignores axis then). */
static dy_status quant_axis(ox_ctx *c, const ox_value *x, const ox_value *scale,
                            int *ax) {
  *ax = 0;
  if (dy_type_numel(&scale->type) != 1)
    TRY(ox_axis(c, ox_attr_i(c, "axis", 1), x->type.rank, ax));
  return DY_OK;
}

/* QuantizeLinear(x, y_scale, y_zero_point) attributes axis (1),
 * saturate (1). */
static dy_status map_quantize_linear(ox_ctx *c) {
  ox_value *in[3];
  TRY(ox_check_attrs(c, "axis saturate"));
  TRY(ox_need_in(c, 0, &in[0]));
  TRY(ox_need_in(c, 1, &in[1]));
  TRY(ox_need_f32(c, in[0]));
  in[2] = ox_in(c, 2);
  if (!in[2])
    in[2] = ox_new_const(c, DY_U8, in[1]->type.rank, in[1]->type.shape, NULL);
  int ax;
  TRY(quant_axis(c, in[0], in[1], &ax));
  dy_attr a[DY_QUANTIZE_LINEAR_NATTRS];
  int na = dy_quantize_linear_attrs_put(&(dy_quantize_linear_attrs){
      .given = DY_GIVEN_ALL, .axis = ax}, a);
  OUT(0, in[2] ? ox_op(c, "quantize_linear", in, 3, a, na) : NULL);
}

/* DequantizeLinear(x, x_scale, x_zero_point) attribute axis (1). */
static dy_status map_dequantize_linear(ox_ctx *c) {
  ox_value *in[3];
  TRY(ox_check_attrs(c, "axis"));
  TRY(ox_need_in(c, 0, &in[0]));
  TRY(ox_need_in(c, 1, &in[1]));
  in[2] = ox_in(c, 2);
  if (!in[2])
    in[2] = ox_new_const(c, in[0]->type.dtype, in[1]->type.rank, in[1]->type.shape, NULL);
  int ax;
  TRY(quant_axis(c, in[0], in[1], &ax));
  dy_attr a[DY_DEQUANTIZE_LINEAR_NATTRS];
  int na = dy_dequantize_linear_attrs_put(&(dy_dequantize_linear_attrs){
      .given = DY_GIVEN_ALL, .axis = ax}, a);
  OUT(0, in[2] ? ox_op(c, "dequantize_linear", in, 3, a, na) : NULL);
}

/* b [K, N] as a new constant [N, K]. */
static ox_value *transposed(ox_ctx *c, const ox_value *b) {
  int64_t k = b->type.shape[0], n = b->type.shape[1];
  ox_value *t = ox_new_const(c, b->type.dtype, 2, (int64_t[]){n, k}, NULL);
  if (!t)
    return NULL;
  const uint8_t *src = b->c->data;
  uint8_t *dst = t->c->data;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = 0; j < n; j++)
      dst[j * k + i] = src[i * n + j];
  return t;
}

/* QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point). */
static dy_status map_qlinear_matmul(ox_ctx *c) {
  ox_value *in[9];
  TRY(ox_check_attrs(c, ""));
  for (int i = 0; i < 8; i++)
    TRY(ox_need_in(c, i, &in[i]));
  TRY(ox_need_const_scales(c, in, (const int[]){1, 4, 6}, 3));
  ox_value *b = in[3];
  if (b->type.rank < 2 || b->type.shape[b->type.rank - 1] < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "b must have rank >= 2 and a static last dim");
  int64_t n = b->type.shape[b->type.rank - 1];
  bool trans = ox_is_const(b) && b->type.rank == 2 && b->type.dtype == DY_I8;
  if (trans && !(in[3] = transposed(c, b)))
    return DY_STATUS_OUT_OF_MEMORY;
  in[8] = ox_new_const(c, DY_I32, 1, &n, NULL);
  dy_attr a[DY_QMATMUL_NATTRS];
  int n_a = dy_qmatmul_attrs_put(&(dy_qmatmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_y = trans, .act_min = INT32_MIN, .act_max = INT32_MAX}, a);
  OUT(0, in[8] ? ox_op(c, "qmatmul", in, 9, a, n_a) : NULL);
}

/* MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32; a's zero
 * point must be one value (not per row). */
static dy_status map_matmul_integer(ox_ctx *c) {
  ox_value *in[4];
  TRY(ox_check_attrs(c, ""));
  TRY(ox_integer_inputs(c, in));
  if (dy_type_numel(&in[2]->type) != 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a_zero_point per row is not supported");
  OUT(0, ox_op(c, "matmul_integer", in, 4, NULL, 0));
}

/* DynamicQuantizeLinear(x f32) -> y u8, y_scale f32 [], y_zero_point u8 []
 * (opset 11), as the ONNX reference computes it, in the graph's ops:
 *   lo = min(0, min(x)), hi = max(0, max(x))
 *   y_scale = (hi == lo ? 1 : hi - lo) / 255
 *   y_zero_point = saturate(rint(-lo / y_scale))   (clip then rint = rint
 *                  then clamp: the bounds are integers)
 *   y = saturate(rint(x / y_scale) + y_zero_point)
 * The last two are quantize_linear with a run-time scale (its kernels and
 * emitter read any scale; a positive one here by construction). */
static dy_status map_dynamic_quantize_linear(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_f32(c, x));
  ox_value *zero = ox_const_f32(c, 0.0f);
  ox_value *lo = ox_binary(c, "minimum", ox_reduce(c, "reduce_min", x, 0, NULL, false), zero);
  ox_value *hi = ox_binary(c, "maximum", ox_reduce(c, "reduce_max", x, 0, NULL, false), zero);
  ox_value *range = ox_binary(c, "sub", hi, lo);
  range = ox_where(c, ox_binary(c, "equal", range, zero), ox_const_f32(c, 1.0f), range);
  ox_value *scale = ox_binary(c, "div", range, ox_const_f32(c, 255.0f));
  dy_attr a[DY_QUANTIZE_LINEAR_NATTRS];
  int na = dy_quantize_linear_attrs_put(&(dy_quantize_linear_attrs){
      .given = DY_GIVEN_ALL, .axis = 0}, a);
  ox_value *zin[3] = {ox_scale(c, lo, -1.0f, 0.0f), scale, ox_new_const(c, DY_U8, 0, NULL, NULL)};
  ox_value *zp = ox_op(c, "quantize_linear", zin, 3, a, na);
  ox_value *yin[3] = {x, scale, zp};
  TRY(ox_set_or_fail(c, 0, ox_op(c, "quantize_linear", yin, 3, a, na)));
  if (ox_out_wanted(c, 1))
    TRY(ox_set_or_fail(c, 1, scale));
  if (ox_out_wanted(c, 2))
    TRY(ox_set_or_fail(c, 2, zp));
  return DY_OK;
}

const ox_mapper ox_mappers_quant[] = {
    {"QuantizeLinear", map_quantize_linear},
    {"DequantizeLinear", map_dequantize_linear},
    {"QLinearMatMul", map_qlinear_matmul},
    {"MatMulInteger", map_matmul_integer},
    {"DynamicQuantizeLinear", map_dynamic_quantize_linear},
    {NULL, NULL},
};
