/* infer_nn.c - shape and dtype inference for the nn op family
 * (ops_nn.def): conv2d, conv2d_transpose, pool2d, batch_norm, layer_norm,
 * group_norm, dropout.
 *
 * Semantics follow Paddle / ONNX, in NCHW layout:
 *
 *   conv2d            x [N,C,H,W], w [O, C/groups, kh, kw] -> [N,O,Ho,Wo],
 *                     Ho = (H + top + bottom - dil_h*(kh-1) - 1)/stride_h + 1
 *   conv2d_transpose  x [N,C,H,W], w [C, O/groups, kh, kw] -> [N,O,Ho,Wo],
 *                     Ho = (H-1)*stride_h - top - bottom + dil_h*(kh-1)
 *                          + output_padding_h + 1
 *   pool2d            max/avg over windows; global_pooling takes the whole
 *                     HxW, adaptive reads ksize as the output size
 *   batch_norm        x [N,C,...] with scale/bias/mean/variance [C]
 *   layer_norm        over dims [begin_norm_axis, rank)
 *   group_norm        x [N,C,...], groups dividing C, scale/bias [C]
 *   dropout           any f32 tensor, p in [0, 1]
 *
 * Paddings are [top, left, bottom, right] (ONNX's begin/end order); two
 * values [h, w] are accepted as symmetric padding. Only the batch dim N may
 * be dynamic (-1): channels and spatial dims must be static, because the
 * kernels and the generated loops are specialised for them. Every check on
 * attributes lives here; the kernels (runtime/kernels_nn.c) and emitters
 * (codegen/emit_nn.c) call dy_infer first and then read the attributes
 * knowing they are well formed.
 */
#include <stdint.h>
#include <string.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

/* Bound on sizes, strides, paddings, dilations and groups, so that the
 * size arithmetic below (and in the kernels) cannot overflow int64_t. */
#define NN_MAX INT32_MAX

/* ---- small checks ---- */

static dy_status need_f32(const dy_op *op, const dy_type *in, int n,
                          dy_error *err) {
  for (int i = 0; i < n; i++)
    if (in[i].dtype != DY_F32)
      return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                         "%s: input %d is %s, needs f32", OPNAME(op), i,
                         dy_dtype_name(in[i].dtype));
  return DY_OK;
}

static dy_status need_rank(const dy_op *op, const dy_type *t, const char *what,
                           int min_rank, int max_rank, dy_error *err) {
  if (t->rank >= min_rank && t->rank <= max_rank)
    return DY_OK;
  char ts[128];
  if (min_rank == max_rank)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: %s must have rank %d, got %s", OPNAME(op), what,
                       min_rank, dy_type_str(t, ts, sizeof ts));
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                     "%s: %s must have rank >= %d, got %s", OPNAME(op), what,
                     min_rank, dy_type_str(t, ts, sizeof ts));
}

/* Dims [from, rank) of t must be static (only the batch may be -1). */
static dy_status need_static(const dy_op *op, const dy_type *t, int from,
                             const char *what, dy_error *err) {
  char ts[128];
  for (int i = from; i < t->rank; i++) {
    if (t->shape[i] < 0)
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "%s: dim %d of %s %s is dynamic; only the batch (dim 0) "
                         "may be", OPNAME(op), i, what, dy_type_str(t, ts, sizeof ts));
    if (t->shape[i] > NN_MAX)
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "%s: dim %d of %s %s is too large",
                         OPNAME(op), i, what, dy_type_str(t, ts, sizeof ts));
  }
  return DY_OK;
}

/* An ints attribute of exactly two values, each >= min. */
static dy_status get_pair(const dy_op *op, const char *name, int64_t min,
                          int64_t out[2], dy_error *err) {
  const int64_t *v;
  int n;
  dy_status s = dy_op_attr_ints(op, name, &v, &n, err);
  if (s)
    return s;
  if (n != 2)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: %s needs 2 values [h, w], got %d", OPNAME(op), name, n);
  for (int i = 0; i < 2; i++) {
    if (v[i] < min || v[i] > NN_MAX)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: %s[%d] is %lld, must be in [%lld, %lld]", OPNAME(op), name,
                         i, (long long)v[i], (long long)min, (long long)NN_MAX);
    out[i] = v[i];
  }
  return DY_OK;
}

/* paddings: [top, left, bottom, right], or [h, w] for both sides. */
static dy_status get_pads(const dy_op *op, int64_t pad[4], dy_error *err) {
  const int64_t *v;
  int n;
  dy_status s = dy_op_attr_ints(op, "paddings", &v, &n, err);
  if (s)
    return s;
  if (n != 2 && n != 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: paddings needs 4 values [top, left, bottom, right] "
                       "(or 2: [h, w]), got %d", OPNAME(op), n);
  for (int i = 0; i < 4; i++) {
    pad[i] = n == 4 ? v[i] : v[i % 2];
    if (pad[i] < 0 || pad[i] > NN_MAX)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: padding %lld is negative or too large", OPNAME(op),
                         (long long)pad[i]);
  }
  return DY_OK;
}

static dy_status get_eps(const dy_op *op, dy_error *err) {
  double eps;
  dy_status s = dy_op_attr_float(op, "epsilon", &eps, err);
  if (s)
    return s;
  if (!(eps >= 0 && eps <= 1e30)) /* finite as a float too */
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: epsilon %g must be >= 0 and finite", OPNAME(op), eps);
  return DY_OK;
}

/* A per-channel parameter: f32 [c]. */
static dy_status need_vector(const dy_op *op, const dy_type *t, const char *what,
                             int64_t c, dy_error *err) {
  if (t->rank == 1 && t->shape[0] == c)
    return DY_OK;
  char ts[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                     "%s: %s is %s, expected f32[%lld]", OPNAME(op), what,
                     dy_type_str(t, ts, sizeof ts), (long long)c);
}

/* ------------------------------------------------------------------ */
/* conv2d, conv2d_transpose                                            */
/* ------------------------------------------------------------------ */

/* The attributes both convolutions share, checked. */
static dy_status conv_attrs(const dy_op *op, int64_t st[2], int64_t pad[4],
                            int64_t dil[2], int64_t *groups, dy_error *err) {
  dy_status s;
  if ((s = get_pair(op, "strides", 1, st, err)) || (s = get_pads(op, pad, err)) ||
      (s = get_pair(op, "dilations", 1, dil, err)) ||
      (s = dy_op_attr_int(op, "groups", groups, err)))
    return s;
  if (*groups < 1 || *groups > NN_MAX)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: groups is %lld, must be >= 1", OPNAME(op), (long long)*groups);
  return DY_OK;
}

/* Types common to both: f32 x [N,C,H,W] (C, H, W static), static 4-D w. */
static dy_status conv_types(const dy_op *op, const dy_type *in, dy_error *err) {
  dy_status s;
  if ((s = need_f32(op, in, 2, err)) || (s = need_rank(op, &in[0], "input", 4, 4, err)) ||
      (s = need_rank(op, &in[1], "filter", 4, 4, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)) ||
      (s = need_static(op, &in[1], 0, "filter", err)))
    return s;
  for (int i = 0; i < 4; i++)
    if (in[1].shape[i] < 1) {
      char ts[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: empty filter %s",
                         OPNAME(op), dy_type_str(&in[1], ts, sizeof ts));
    }
  return DY_OK;
}

dy_status dy_infer_conv2d(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  int64_t st[2], pad[4], dil[2], g;
  dy_status s;
  if ((s = conv_types(op, in, err)) || (s = conv_attrs(op, st, pad, dil, &g, err)))
    return s;
  const dy_type *x = &in[0], *w = &in[1];
  int64_t c = x->shape[1], o = w->shape[0];
  if (c % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d: input channels %lld do not divide by groups %lld",
                       (long long)c, (long long)g);
  if (o % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d: output channels %lld (filter dim 0) do not divide "
                       "by groups %lld", (long long)o, (long long)g);
  if (w->shape[1] != c / g) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d: filter %s has %lld input channels per group; input "
                       "%s with groups %lld needs %lld", dy_type_str(w, a, sizeof a),
                       (long long)w->shape[1], dy_type_str(x, b, sizeof b),
                       (long long)g, (long long)(c / g));
  }
  *out = *x;
  out->shape[1] = o;
  for (int d = 0; d < 2; d++) {
    int64_t padded = x->shape[2 + d] + pad[d] + pad[d + 2];
    int64_t span = dil[d] * (w->shape[2 + d] - 1) + 1;  /* the dilated kernel */
    if (span > padded)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "conv2d: the %s kernel spans %lld, more than the padded "
                         "input's %lld", d ? "width" : "height", (long long)span,
                         (long long)padded);
    out->shape[2 + d] = (padded - span) / st[d] + 1;
  }
  return DY_OK;
}

dy_status dy_infer_conv2d_transpose(const dy_op *op, const dy_type *in, int n,
                                    dy_type *out, dy_error *err) {
  int64_t st[2], pad[4], dil[2], g, opad[2] = {0, 0};
  dy_status s;
  if ((s = conv_types(op, in, err)) || (s = conv_attrs(op, st, pad, dil, &g, err)))
    return s;
  const int64_t *v;
  int nv;
  if ((s = dy_op_attr_ints(op, "output_padding", &v, &nv, err)))
    return s;
  if (nv == 2)
    s = get_pair(op, "output_padding", 0, opad, err);
  else if (nv != 0)
    s = dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                    "conv2d_transpose: output_padding needs 2 values [h, w] (or "
                    "none), got %d", nv);
  if (s)
    return s;
  const dy_type *x = &in[0], *w = &in[1];
  int64_t c = x->shape[1];
  if (c % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d_transpose: input channels %lld do not divide by "
                       "groups %lld", (long long)c, (long long)g);
  if (w->shape[0] != c) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d_transpose: filter %s must have the input's %lld "
                       "channels in dim 0 (input %s)", dy_type_str(w, a, sizeof a),
                       (long long)c, dy_type_str(x, b, sizeof b));
  }
  *out = *x;
  out->shape[1] = w->shape[1] * g;
  for (int d = 0; d < 2; d++) {
    /* output_padding picks one of the sizes a strided conv2d maps back to
     * H; it must be smaller than the stride or the dilation (PyTorch) */
    if (opad[d] >= st[d] && opad[d] >= dil[d])
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "conv2d_transpose: output_padding %lld must be smaller "
                         "than the stride %lld or the dilation %lld",
                         (long long)opad[d], (long long)st[d], (long long)dil[d]);
    int64_t o = (x->shape[2 + d] - 1) * st[d] - pad[d] - pad[d + 2] +
                dil[d] * (w->shape[2 + d] - 1) + opad[d] + 1;
    if (x->shape[2 + d] < 1 || o < 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "conv2d_transpose: the output %s would be %lld",
                         d ? "width" : "height", (long long)o);
    out->shape[2 + d] = o;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pool2d                                                              */
/* ------------------------------------------------------------------ */

dy_status dy_infer_pool2d(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  dy_status s;
  if ((s = need_f32(op, in, 1, err)) || (s = need_rank(op, &in[0], "input", 4, 4, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)))
    return s;
  const dy_attr *type = dy_op_find_attr(op, "pooling_type");
  if (!type || type->kind != DY_ATTR_STRING || !type->s ||
      (strcmp(type->s, "max") != 0 && strcmp(type->s, "avg") != 0))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "pool2d: pooling_type must be the string \"max\" or \"avg\"");
  int64_t k[2], st[2], pad[4], ceil_mode, exclusive, global, adaptive;
  if ((s = dy_op_attr_int(op, "ceil_mode", &ceil_mode, err)) ||
      (s = dy_op_attr_int(op, "exclusive", &exclusive, err)) ||
      (s = dy_op_attr_int(op, "global_pooling", &global, err)) ||
      (s = dy_op_attr_int(op, "adaptive", &adaptive, err)))
    return s;
  const dy_type *x = &in[0];
  *out = *x;
  if (global) { /* the whole plane; ksize, strides and paddings are unused */
    out->shape[2] = out->shape[3] = 1;
    if (x->shape[2] < 1 || x->shape[3] < 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d: global pooling of an empty plane");
    return DY_OK;
  }
  if ((s = get_pair(op, "ksize", 1, k, err)))
    return s;
  if (adaptive) { /* ksize is the output size */
    if (x->shape[2] < 1 || x->shape[3] < 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d: adaptive pooling of an empty plane");
    out->shape[2] = k[0];
    out->shape[3] = k[1];
    return DY_OK;
  }
  if ((s = get_pair(op, "strides", 1, st, err)) || (s = get_pads(op, pad, err)))
    return s;
  for (int d = 0; d < 2; d++) {
    int64_t size = x->shape[2 + d], lo = pad[d], hi = pad[d + 2];
    /* a window always holds at least one input element (max needs one) */
    if (lo >= k[d] || hi >= k[d])
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "pool2d: padding %lld is not smaller than the %s window %lld",
                         (long long)(lo > hi ? lo : hi), d ? "width" : "height",
                         (long long)k[d]);
    int64_t padded = size + lo + hi;
    if (size < 1 || k[d] > padded)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d: the %s window %lld is larger than the padded "
                         "input's %lld", d ? "width" : "height", (long long)k[d],
                         (long long)padded);
    int64_t o;
    if (ceil_mode) {
      o = (padded - k[d] + st[d] - 1) / st[d] + 1;
      /* the last window must start inside the input or its left padding */
      if ((o - 1) * st[d] >= size + lo)
        o--;
    } else {
      o = (padded - k[d]) / st[d] + 1;
    }
    out->shape[2 + d] = o;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* batch_norm, layer_norm, group_norm                                  */
/* ------------------------------------------------------------------ */

dy_status dy_infer_batch_norm(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  static const char *const what[] = {"x", "scale", "bias", "mean", "variance"};
  dy_status s;
  double momentum;
  int64_t is_test;
  if ((s = need_f32(op, in, 5, err)) || (s = need_rank(op, &in[0], "input", 2, DY_MAX_DIMS, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)) || (s = get_eps(op, err)) ||
      (s = dy_op_attr_float(op, "momentum", &momentum, err)) ||
      (s = dy_op_attr_int(op, "is_test", &is_test, err)))
    return s;
  for (int i = 1; i < 5; i++)
    if ((s = need_vector(op, &in[i], what[i], in[0].shape[1], err)))
      return s;
  *out = in[0];
  return DY_OK;
}

dy_status dy_infer_layer_norm(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  dy_status s;
  int64_t axis;
  int ax;
  const dy_type *x = &in[0];
  if ((s = need_f32(op, in, 3, err)) || (s = need_rank(op, x, "input", 1, DY_MAX_DIMS, err)) ||
      (s = get_eps(op, err)) || (s = dy_op_attr_int(op, "begin_norm_axis", &axis, err)) ||
      (s = dy_normalize_axis(op, axis, x->rank, &ax, err)) ||
      (s = need_static(op, x, ax, "input (normalised dims)", err)))
    return s;
  int64_t cols = 1;
  for (int i = ax; i < x->rank; i++)
    cols *= x->shape[i];
  /* scale and bias: 1-D of the row size, or the normalised dims' shape */
  for (int i = 1; i < 3; i++) {
    const dy_type *t = &in[i];
    bool ok = t->rank == 1 && t->shape[0] == cols;
    if (!ok && t->rank == x->rank - ax) {
      ok = true;
      for (int d = 0; d < t->rank; d++)
        ok &= t->shape[d] == x->shape[ax + d];
    }
    if (!ok) {
      char a[128], b[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "layer_norm: %s is %s; normalising %s from axis %d needs "
                         "f32[%lld] or the trailing shape", i == 1 ? "scale" : "bias",
                         dy_type_str(t, a, sizeof a), dy_type_str(x, b, sizeof b), ax,
                         (long long)cols);
    }
  }
  *out = *x;
  return DY_OK;
}

dy_status dy_infer_group_norm(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  dy_status s;
  int64_t g;
  if ((s = need_f32(op, in, 3, err)) || (s = need_rank(op, &in[0], "input", 2, DY_MAX_DIMS, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)) || (s = get_eps(op, err)) ||
      (s = dy_op_attr_int(op, "groups", &g, err)))
    return s;
  int64_t c = in[0].shape[1];
  if (g < 1 || g > NN_MAX)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "group_norm: groups is %lld, must be >= 1", (long long)g);
  if (c % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "group_norm: channels %lld do not divide by groups %lld",
                       (long long)c, (long long)g);
  if ((s = need_vector(op, &in[1], "scale", c, err)) ||
      (s = need_vector(op, &in[2], "bias", c, err)))
    return s;
  *out = in[0];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* dropout                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_infer_dropout(const dy_op *op, const dy_type *in, int n,
                           dy_type *out, dy_error *err) {
  dy_status s;
  double p;
  int64_t is_test, seed;
  if ((s = need_f32(op, in, 1, err)) || (s = dy_op_attr_float(op, "p", &p, err)) ||
      (s = dy_op_attr_int(op, "is_test", &is_test, err)) ||
      (s = dy_op_attr_int(op, "seed", &seed, err)))
    return s;
  if (!(p >= 0 && p <= 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "dropout: p is %g, must be in [0, 1]", p);
  *out = in[0];
  return DY_OK;
}
