/* infer_quant.c - shape and dtype inference for the quant op family
 * (ops_quant.def, whose header states each op's semantics).
 *
 * Quantized tensors are i8 or u8; a scale is f32 and a zero point has its
 * tensor's dtype, both of rank 0 or 1 with one element, or one per channel
 * where the op allows it (the channel count must then be static). The
 * shape rules are conv2d's and matmul's (checked by running their
 * inference on f32 stand-ins of the same shapes) and numpy broadcasting;
 * the output dtype is the output zero point's (i32 for the _integer ops).
 */
#include <stdio.h>
#include <string.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

static bool is_q8(dy_dtype t) { return t == DY_I8 || t == DY_U8; }

static dy_status need_q8(const dy_op *op, const dy_type *in, int i, const char *what,
                         dy_error *err) {
  if (!is_q8(in[i].dtype))
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: %s (input %d) is %s, needs i8 or u8",
                       OPNAME(op), what, i, dy_dtype_name(in[i].dtype));
  return DY_OK;
}

/* Input i is a scale (zp: a zero point of dtype want) with one element or,
 * when channels > 0, channels elements. */
static dy_status need_qparam(const dy_op *op, const dy_type *in, int i, bool zp, dy_dtype want,
                             int64_t channels, const char *what, dy_error *err) {
  const dy_type *t = &in[i];
  dy_dtype dt = zp ? want : DY_F32;
  if (t->dtype != dt)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: %s (input %d) is %s, needs %s",
                       OPNAME(op), what, i, dy_dtype_name(t->dtype), dy_dtype_name(dt));
  int64_t n = dy_type_numel(t);
  if (t->rank > 1 || n < 0 || (n != 1 && (channels <= 0 || n != channels))) {
    char ts[128];
    if (channels > 0)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "%s: %s (input %d) is %s, needs one value or %lld (one per channel)",
                         OPNAME(op), what, i, dy_type_str(t, ts, sizeof ts), (long long)channels);
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: %s (input %d) is %s, needs one value (per tensor)", OPNAME(op), what,
                       i, dy_type_str(t, ts, sizeof ts));
  }
  return DY_OK;
}

/* Inputs s and s+1: a scale and a zero point of in[q]'s dtype. */
static dy_status need_pair(const dy_op *op, const dy_type *in, int s, int q, int64_t channels,
                           const char *name, dy_error *err) {
  char w1[64], w2[64];
  snprintf(w1, sizeof w1, "%s_scale", name);
  snprintf(w2, sizeof w2, "%s_zero_point", name);
  dy_status st = need_qparam(op, in, s, false, DY_F32, channels, w1, err);
  return st ? st : need_qparam(op, in, s + 1, true, in[q].dtype, channels, w2, err);
}

static dy_type as_f32(const dy_type *t) {
  dy_type r = *t;
  r.dtype = DY_F32;
  return r;
}

/* y_zero_point (input zp) of i8 or u8 gives y's dtype. */
static dy_status need_out_pair(const dy_op *op, const dy_type *in, int s, dy_error *err) {
  dy_status st = need_qparam(op, in, s, false, DY_F32, 0, "y_scale", err);
  if (st)
    return st;
  if (!is_q8(in[s + 1].dtype))
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "%s: y_zero_point (input %d) is %s, needs i8 or u8", OPNAME(op), s + 1,
                       dy_dtype_name(in[s + 1].dtype));
  return need_qparam(op, in, s + 1, true, in[s + 1].dtype, 0, "y_zero_point", err);
}

/* The channel count along axis of x for a per-channel parameter (0 when
 * the axis is the batch: per tensor only). */
static int64_t channels_at(const dy_type *x, int axis) {
  return axis >= 0 && axis < x->rank && x->shape[axis] > 0 ? x->shape[axis] : 0;
}

dy_status dy_infer_quantize_linear(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                   dy_error *err) {
  (void)n;
  dy_quantize_linear_attrs a;
  int ax = 0;
  dy_status s;
  if ((s = dy_quantize_linear_attrs_of(op, &a, err)))
    return s;
  if (in[0].dtype != DY_F32)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "quantize_linear: x is %s, needs f32",
                       dy_dtype_name(in[0].dtype));
  if (in[0].rank > 0 && (s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)))
    return s;
  if (!is_q8(in[2].dtype))
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "quantize_linear: zero_point is %s, needs i8 or u8 (the output's dtype)",
                       dy_dtype_name(in[2].dtype));
  int64_t c = in[0].rank > 0 ? channels_at(&in[0], ax) : 0;
  if ((s = need_qparam(op, in, 1, false, DY_F32, c, "scale", err)) ||
      (s = need_qparam(op, in, 2, true, in[2].dtype, c, "zero_point", err)))
    return s;
  if (dy_type_numel(&in[1]) != dy_type_numel(&in[2]))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "quantize_linear: scale and zero_point differ in length");
  *out = in[0];
  out->dtype = in[2].dtype;
  return DY_OK;
}

dy_status dy_infer_dequantize_linear(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                     dy_error *err) {
  (void)n;
  dy_dequantize_linear_attrs a;
  int ax = 0;
  dy_status s;
  if ((s = dy_dequantize_linear_attrs_of(op, &a, err)))
    return s;
  if (!is_q8(in[0].dtype) && in[0].dtype != DY_I32)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "dequantize_linear: x is %s, needs i8, u8 or i32",
                       dy_dtype_name(in[0].dtype));
  if (in[0].rank > 0 && (s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)))
    return s;
  int64_t c = in[0].rank > 0 ? channels_at(&in[0], ax) : 0;
  if ((s = need_qparam(op, in, 1, false, DY_F32, c, "scale", err)) ||
      (s = need_qparam(op, in, 2, true, in[0].dtype, c, "zero_point", err)))
    return s;
  if (dy_type_numel(&in[1]) != dy_type_numel(&in[2]))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "dequantize_linear: scale and zero_point differ in length");
  *out = in[0];
  out->dtype = DY_F32;
  return DY_OK;
}

/* conv2d's shape rule on f32 stand-ins of x and w. */
static dy_status conv_shape(const dy_op *op, const dy_type *x, const dy_type *w, dy_type *out,
                            dy_error *err) {
  dy_type t[2] = {as_f32(x), as_f32(w)};
  return dy_infer_conv2d(op, t, 2, out, err);
}

dy_status dy_infer_qconv2d(const dy_op *op, const dy_type *in, int n, dy_type *out,
                           dy_error *err) {
  (void)n;
  dy_status s;
  if ((s = need_q8(op, in, 0, "x", err)) || (s = need_q8(op, in, 3, "w", err)) ||
      (s = conv_shape(op, &in[0], &in[3], out, err)))
    return s;
  int64_t o = in[3].shape[0];
  if ((s = need_pair(op, in, 1, 0, 0, "x", err)) || (s = need_pair(op, in, 4, 3, o, "w", err)) ||
      (s = need_out_pair(op, in, 6, err)))
    return s;
  if (in[8].dtype != DY_I32 || in[8].rank != 1 || in[8].shape[0] != o) {
    char ts[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "qconv2d: bias is %s, needs i32[%lld]",
                       dy_type_str(&in[8], ts, sizeof ts), (long long)o);
  }
  out->dtype = in[7].dtype;
  return DY_OK;
}

/* matmul's shape rule on f32 stand-ins; b is [K, N] or as batched as a. */
static dy_status matmul_shape(const dy_op *op, const dy_type *a, const dy_type *b, dy_type *out,
                              dy_error *err) {
  if (a->rank < 2 || b->rank < 2 || (b->rank > 2 && b->rank != a->rank)) {
    char ta[128], tb[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: a %s and b %s: needs a of rank >= 2 and b [K, N] or of a's rank",
                       OPNAME(op), dy_type_str(a, ta, sizeof ta), dy_type_str(b, tb, sizeof tb));
  }
  for (int i = 0; b->rank > 2 && i < a->rank - 2; i++)
    if (a->shape[i] != b->shape[i]) {
      char ta[128], tb[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "%s: a %s and b %s differ in batch dim %d (no broadcasting)",
                         OPNAME(op), dy_type_str(a, ta, sizeof ta),
                         dy_type_str(b, tb, sizeof tb), i);
    }
  if (b->shape[b->rank - 1] < 0 || b->shape[b->rank - 2] < 0 || a->shape[a->rank - 1] < 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: b's last two dims must be static",
                       OPNAME(op));
  dy_type t[2] = {as_f32(a), as_f32(b)};
  return dy_infer_matmul(op, t, 2, out, err);
}

dy_status dy_infer_qmatmul(const dy_op *op, const dy_type *in, int n, dy_type *out,
                           dy_error *err) {
  (void)n;
  dy_status s;
  if ((s = need_q8(op, in, 0, "a", err)) || (s = need_q8(op, in, 3, "b", err)) ||
      (s = matmul_shape(op, &in[0], &in[3], out, err)))
    return s;
  int64_t nn = out->shape[out->rank - 1];
  if ((s = need_pair(op, in, 1, 0, 0, "a", err)) ||
      (s = need_pair(op, in, 4, 3, in[3].rank == 2 ? nn : 0, "b", err)) ||
      (s = need_out_pair(op, in, 6, err)))
    return s;
  if (in[8].dtype != DY_I32 || in[8].rank != 1 || in[8].shape[0] != nn) {
    char ts[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "qmatmul: bias is %s, needs i32[%lld]",
                       dy_type_str(&in[8], ts, sizeof ts), (long long)nn);
  }
  out->dtype = in[7].dtype;
  return DY_OK;
}

/* qadd, qmul: a, b and y of one dtype, per-tensor parameters, broadcast. */
static dy_status qbinary(const dy_op *op, const dy_type *in, dy_type *out, dy_error *err) {
  dy_status s;
  if ((s = need_q8(op, in, 0, "a", err)) || (s = need_pair(op, in, 1, 0, 0, "a", err)) ||
      (s = need_pair(op, in, 4, 3, 0, "b", err)) || (s = need_out_pair(op, in, 6, err)))
    return s;
  if (in[3].dtype != in[0].dtype || in[7].dtype != in[0].dtype)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: a, b and y are %s, %s and %s, "
                       "need one dtype", OPNAME(op), dy_dtype_name(in[0].dtype),
                       dy_dtype_name(in[3].dtype), dy_dtype_name(in[7].dtype));
  if ((s = dy_broadcast_shapes(op, &in[0], &in[3], out, err)))
    return s;
  out->dtype = in[0].dtype;
  return DY_OK;
}

dy_status dy_infer_qadd(const dy_op *op, const dy_type *in, int n, dy_type *out,
                        dy_error *err) {
  (void)n;
  return qbinary(op, in, out, err);
}

dy_status dy_infer_qmul(const dy_op *op, const dy_type *in, int n, dy_type *out,
                        dy_error *err) {
  (void)n;
  return qbinary(op, in, out, err);
}

dy_status dy_infer_qsoftmax(const dy_op *op, const dy_type *in, int n, dy_type *out,
                            dy_error *err) {
  (void)n;
  dy_qsoftmax_attrs a;
  int ax;
  dy_status s;
  if ((s = dy_qsoftmax_attrs_of(op, &a, err)) || (s = need_q8(op, in, 0, "x", err)))
    return s;
  if (in[0].rank == 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "qsoftmax: needs rank >= 1");
  if ((s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)) ||
      (s = need_pair(op, in, 1, 0, 0, "x", err)) || (s = need_out_pair(op, in, 3, err)))
    return s;
  if (in[4].dtype != in[0].dtype)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "qsoftmax: x is %s and y_zero_point %s, need one dtype",
                       dy_dtype_name(in[0].dtype), dy_dtype_name(in[4].dtype));
  *out = in[0];
  return DY_OK;
}

dy_status dy_infer_matmul_integer(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                  dy_error *err) {
  (void)n;
  dy_status s;
  if ((s = need_q8(op, in, 0, "a", err)) || (s = need_q8(op, in, 1, "b", err)) ||
      (s = matmul_shape(op, &in[0], &in[1], out, err)))
    return s;
  int64_t nn = in[1].shape[in[1].rank - 1];
  if ((s = need_qparam(op, in, 2, true, in[0].dtype, 0, "a_zero_point", err)) ||
      (s = need_qparam(op, in, 3, true, in[1].dtype, in[1].rank == 2 ? nn : 0, "b_zero_point",
                       err)))
    return s;
  out->dtype = DY_I32;
  return DY_OK;
}

dy_status dy_infer_conv_integer(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                dy_error *err) {
  (void)n;
  dy_status s;
  if ((s = need_q8(op, in, 0, "x", err)) || (s = need_q8(op, in, 1, "w", err)) ||
      (s = conv_shape(op, &in[0], &in[1], out, err)))
    return s;
  if ((s = need_qparam(op, in, 2, true, in[0].dtype, 0, "x_zero_point", err)) ||
      (s = need_qparam(op, in, 3, true, in[1].dtype, in[1].shape[0], "w_zero_point", err)))
    return s;
  out->dtype = DY_I32;
  return DY_OK;
}
