/* infer_math.c - shape and dtype inference for the math family
 * (ops_math.def): activations, elementwise math, comparisons, where, cast.
 *
 * The plain elementwise ops (the DY_UNARY / DY_BINARY lines of
 * ops_math.def: silu, hard_swish, exp/log/..., abs, neg, pow, minimum,
 * maximum, equal, greater, less) are inferred in ir/infer/infer_core.c from their
 * line's dtype rule. This file has the rest: the ops with attributes, where
 * and cast. Every op is elementwise, so the output shape is the input's, or
 * the numpy broadcast of the inputs for where, with -1 (the batch) handled
 * by dy_broadcast_shapes. The dtype rules:
 *
 *   activations with attributes, scale       f32 -> f32
 *   where(cond, x, y)                        cond bool; x, y alike -> x's
 *   cast                                     any -> attr dtype
 *
 * Float attributes are stored as doubles but computed with as f32, so they
 * must be numbers that fit in f32 (clip's bounds may also be +-inf).
 * Attributes with a restricted range (gelu's approximate, clip's
 * min <= max, softplus' beta != 0, cast's dtype) are checked here, so the
 * tracer, the verifier and every eager call reject a bad one with the op's
 * source line.
 */
#include <float.h>
#include <math.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

#define M_F32 (1u << DY_F32)
#define M_I64 (1u << DY_I64)
#define M_BOOL (1u << DY_BOOL)

/* ---- checks ---- */

static const char *mask_str(unsigned mask) {
  switch (mask) {
  case M_F32: return "f32";
  case M_F32 | M_I64: return "f32 or i64";
  case M_BOOL: return "bool";
  default: return "f32, i64 or bool";
  }
}

/* Input i's dtype must be in mask. */
static dy_status need_dtype(const dy_op *op, const dy_type *in, int i,
                            unsigned mask, dy_error *err) {
  if ((mask >> in[i].dtype) & 1u)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                     "%s: input %d is %s, needs %s", OPNAME(op), i,
                     dy_dtype_name(in[i].dtype), mask_str(mask));
}

/* Inputs a and b must have one dtype. */
static dy_status same_dtype(const dy_op *op, const dy_type *in, int a, int b,
                            dy_error *err) {
  if (in[a].dtype == in[b].dtype)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                     "%s: dtypes %s and %s differ", OPNAME(op),
                     dy_dtype_name(in[a].dtype), dy_dtype_name(in[b].dtype));
}

/* A float attribute that is a number representable in f32 (+-inf too when
 * inf_ok). */
static dy_status attr_f32(const dy_op *op, const char *name, bool inf_ok, double v,
                          dy_error *err) {
  if (isnan(v) || (!inf_ok && isinf(v)) || (isfinite(v) && fabs(v) > FLT_MAX))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: attribute %s = %g is not %s", OPNAME(op), name, v,
                       inf_ok ? "an f32 number or +-inf" : "a finite f32 number");
  return DY_OK;
}

/* An int attribute that is 0 or 1. */
static dy_status attr_flag(const dy_op *op, const char *name, int64_t v,
                           dy_error *err) {
  if (v != 0 && v != 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: attribute %s is %lld, must be 0 or 1", OPNAME(op),
                       name, (long long)v);
  return DY_OK;
}

/* ---- shapes ---- */

static dy_status same_as_input(const dy_op *op, const dy_type *in,
                               unsigned mask, dy_type *out, dy_error *err) {
  dy_status s = need_dtype(op, in, 0, mask, err);
  if (s != DY_OK)
    return s;
  *out = in[0];
  return DY_OK;
}

/* ---- activations ---- */

dy_status dy_infer_gelu(const dy_op *op, const dy_type *in, int n,
                        dy_type *out, dy_error *err) {
  dy_gelu_attrs a;
  dy_status s;
  if ((s = dy_gelu_attrs_of(op, &a, err)) || (s = attr_flag(op, "approximate", a.approximate, err)))
    return s;
  return s ? s : same_as_input(op, in, M_F32, out, err);
}

dy_status dy_infer_hard_sigmoid(const dy_op *op, const dy_type *in, int n,
                                dy_type *out, dy_error *err) {
  dy_hard_sigmoid_attrs a;
  dy_status s;
  if ((s = dy_hard_sigmoid_attrs_of(op, &a, err)) ||
      (s = attr_f32(op, "slope", false, a.slope, err)) ||
      (s = attr_f32(op, "offset", false, a.offset, err)))
    return s;
  return same_as_input(op, in, M_F32, out, err);
}

dy_status dy_infer_leaky_relu(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  dy_leaky_relu_attrs a;
  dy_status s;
  if ((s = dy_leaky_relu_attrs_of(op, &a, err)) || (s = attr_f32(op, "alpha", false, a.alpha, err)))
    return s;
  return same_as_input(op, in, M_F32, out, err);
}

dy_status dy_infer_elu(const dy_op *op, const dy_type *in, int n, dy_type *out,
                       dy_error *err) {
  dy_elu_attrs a;
  dy_status s;
  if ((s = dy_elu_attrs_of(op, &a, err)) || (s = attr_f32(op, "alpha", false, a.alpha, err)))
    return s;
  return same_as_input(op, in, M_F32, out, err);
}

/* clip: min <= max (Paddle enforces it); either may be infinite. */
dy_status dy_infer_clip(const dy_op *op, const dy_type *in, int n,
                        dy_type *out, dy_error *err) {
  dy_clip_attrs a;
  dy_status s;
  if ((s = dy_clip_attrs_of(op, &a, err)) || (s = attr_f32(op, "min", true, a.min, err)) ||
      (s = attr_f32(op, "max", true, a.max, err)))
    return s;
  double lo = a.min, hi = a.max;
  if (lo > hi)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "clip: min %g is greater than max %g", lo, hi);
  return same_as_input(op, in, M_F32, out, err);
}

/* softplus divides by beta. */
dy_status dy_infer_softplus(const dy_op *op, const dy_type *in, int n,
                            dy_type *out, dy_error *err) {
  dy_softplus_attrs a;
  dy_status s;
  if ((s = dy_softplus_attrs_of(op, &a, err)) ||
      (s = attr_f32(op, "beta", false, a.beta, err)) ||
      (s = attr_f32(op, "threshold", false, a.threshold, err)))
    return s;
  if ((float)a.beta == 0.0f)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "softplus: beta must not be 0");
  return same_as_input(op, in, M_F32, out, err);
}

/* ---- elementwise math ---- */

dy_status dy_infer_scale(const dy_op *op, const dy_type *in, int n,
                         dy_type *out, dy_error *err) {
  dy_scale_attrs a;
  dy_status s;
  if ((s = dy_scale_attrs_of(op, &a, err)) || (s = attr_f32(op, "scale", false, a.scale, err)) ||
      (s = attr_f32(op, "bias", false, a.bias, err)) ||
      (s = attr_flag(op, "bias_after_scale", a.bias_after_scale, err)))
    return s;
  return same_as_input(op, in, M_F32, out, err);
}

/* ---- where, cast ---- */

/* where(cond, x, y): cond is bool, x and y share a dtype, all three
 * broadcast together. */
dy_status dy_infer_where(const dy_op *op, const dy_type *in, int n,
                         dy_type *out, dy_error *err) {
  dy_status s;
  if ((s = need_dtype(op, in, 0, M_BOOL, err)) ||
      (s = same_dtype(op, in, 1, 2, err)))
    return s;
  dy_type cx;
  if ((s = dy_broadcast_shapes(op, &in[0], &in[1], &cx, err)) ||
      (s = dy_broadcast_shapes(op, &cx, &in[2], out, err)))
    return s;
  out->dtype = in[1].dtype;
  return DY_OK;
}

dy_status dy_infer_cast(const dy_op *op, const dy_type *in, int n,
                        dy_type *out, dy_error *err) {
  dy_cast_attrs a;
  dy_status s = dy_cast_attrs_of(op, &a, err);
  if (s != DY_OK)
    return s;
  int64_t dt = a.dtype;
  if (dt < 0 || dt >= DY_DTYPE_COUNT)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "cast: unknown dtype %lld", (long long)dt);
  *out = in[0];
  out->dtype = (dy_dtype)dt;
  return DY_OK;
}
