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
 *   conv2d_grad_filter, pool2d_grad
 *                     the gradient ops of conv2d / conv2d_transpose and
 *                     pool2d (ir/autodiff/grad_nn.c emits them)
 *
 * Paddings are [top, left, bottom, right] (ONNX's begin/end order); two
 * values [h, w] are accepted as symmetric padding. Only the batch dim N may
 * be dynamic (-1): channels and spatial dims must be static, because the
 * kernels and the generated loops are specialised for them. Every check on
 * attributes lives here; the kernels (runtime/kernels/kernels_nn.c) and emitters
 * (codegen/ops/emit_nn.c) call dy_infer first and then read the attributes
 * (dy_<op>_attrs_get) knowing they are well formed, and take their
 * geometry from the end of this file (dy_conv2d_geom, dy_pool2d_geom).
 */
#include <stdint.h>
#include <string.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

/* Bound on sizes, strides, paddings, dilations and groups, so that the
 * size arithmetic below (and in the kernels) cannot overflow int64_t. */
#define NN_MAX DY_MAX_NUMEL /* dy_checked.h: 2^31 - 1 */

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
static dy_status check_pair(const dy_op *op, const char *name, const int64_t *v, int n,
                            int64_t min, dy_error *err) {
  if (n != 2)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: %s needs 2 values [h, w], got %d", OPNAME(op), name, n);
  for (int i = 0; i < 2; i++)
    if (v[i] < min || v[i] > NN_MAX)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: %s[%d] is %lld, must be in [%lld, %lld]", OPNAME(op), name,
                         i, (long long)v[i], (long long)min, (long long)NN_MAX);
  return DY_OK;
}

/* paddings: [top, left, bottom, right], or [h, w] for both sides. */
static dy_status check_pads(const dy_op *op, const int64_t *v, int n, dy_error *err) {
  if (n != 2 && n != 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: paddings needs 4 values [top, left, bottom, right] "
                       "(or 2: [h, w]), got %d", OPNAME(op), n);
  int64_t pad[4];
  dy_pads4(v, n, pad);
  for (int i = 0; i < 4; i++)
    if (pad[i] < 0 || pad[i] > NN_MAX)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: padding %lld is negative or too large", OPNAME(op),
                         (long long)pad[i]);
  return DY_OK;
}

static dy_status check_eps(const dy_op *op, double eps, dy_error *err) {
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

/* The attributes both convolutions share (conv2d's, which fused_conv2d
 * and conv2d_transpose extend), read and checked. */
static dy_status conv_attrs(const dy_op *op, dy_conv2d_attrs *a, dy_error *err) {
  dy_status s;
  if ((s = dy_conv2d_attrs_of(op, a, err)) ||
      (s = check_pair(op, "strides", a->strides, a->n_strides, 1, err)) ||
      (s = check_pads(op, a->paddings, a->n_paddings, err)) ||
      (s = check_pair(op, "dilations", a->dilations, a->n_dilations, 1, err)))
    return s;
  if (a->groups < 1 || a->groups > NN_MAX)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: groups is %lld, must be >= 1", OPNAME(op), (long long)a->groups);
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

/* A convolution's output type: x's, with the geometry's output channels
 * and spatial dims. */
static void conv_out_type(const dy_type *x, const dy_conv_geom *cg, dy_type *out) {
  *out = *x;
  out->shape[1] = cg->o;
  out->shape[2] = cg->oh;
  out->shape[3] = cg->ow;
}

dy_status dy_infer_conv2d(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  dy_conv2d_attrs a;
  dy_status s;
  if ((s = conv_types(op, in, err)) || (s = conv_attrs(op, &a, err)))
    return s;
  const dy_type *x = &in[0], *w = &in[1];
  int64_t c = x->shape[1], o = w->shape[0], g = a.groups;
  if (c % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d: input channels %lld do not divide by groups %lld",
                       (long long)c, (long long)g);
  if (o % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d: output channels %lld (filter dim 0) do not divide "
                       "by groups %lld", (long long)o, (long long)g);
  if (w->shape[1] != c / g) {
    char ta[128], tb[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d: filter %s has %lld input channels per group; input "
                       "%s with groups %lld needs %lld", dy_type_str(w, ta, sizeof ta),
                       (long long)w->shape[1], dy_type_str(x, tb, sizeof tb),
                       (long long)g, (long long)(c / g));
  }
  dy_conv_geom cg = dy_conv2d_geom(x, w, &a);
  for (int d = 0; d < 2; d++) {
    int64_t padded = d ? cg.w + cg.pl + cg.pr : cg.h + cg.pt + cg.pb;
    int64_t span = d ? cg.dw * (cg.kw - 1) + 1 : cg.dh * (cg.kh - 1) + 1; /* dilated kernel */
    if (span > padded)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "conv2d: the %s kernel spans %lld, more than the padded "
                         "input's %lld", d ? "width" : "height", (long long)span,
                         (long long)padded);
  }
  conv_out_type(x, &cg, out);
  return DY_OK;
}

dy_status dy_infer_conv2d_transpose(const dy_op *op, const dy_type *in, int n,
                                    dy_type *out, dy_error *err) {
  dy_conv2d_attrs ca;
  dy_conv2d_transpose_attrs a;
  dy_status s;
  if ((s = conv_types(op, in, err)) || (s = conv_attrs(op, &ca, err)) ||
      (s = dy_conv2d_transpose_attrs_of(op, &a, err)))
    return s;
  if (a.n_output_padding == 2)
    s = check_pair(op, "output_padding", a.output_padding, 2, 0, err);
  else if (a.n_output_padding != 0)
    s = dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                    "conv2d_transpose: output_padding needs 2 values [h, w] (or "
                    "none), got %d", a.n_output_padding);
  if (s)
    return s;
  const dy_type *x = &in[0], *w = &in[1];
  int64_t c = x->shape[1], g = a.groups;
  if (c % g != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d_transpose: input channels %lld do not divide by "
                       "groups %lld", (long long)c, (long long)g);
  if (w->shape[0] != c) {
    char ta[128], tb[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d_transpose: filter %s must have the input's %lld "
                       "channels in dim 0 (input %s)", dy_type_str(w, ta, sizeof ta),
                       (long long)c, dy_type_str(x, tb, sizeof tb));
  }
  dy_conv_geom cg = dy_conv2d_transpose_geom(x, w, &a);
  for (int d = 0; d < 2; d++) {
    int64_t opad = d ? cg.opw : cg.oph, st = d ? cg.sw : cg.sh, dil = d ? cg.dw : cg.dh;
    int64_t o = d ? cg.ow : cg.oh;
    /* output_padding picks one of the sizes a strided conv2d maps back to
     * H; it must be smaller than the stride or the dilation (PyTorch) */
    if (opad >= st && opad >= dil)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "conv2d_transpose: output_padding %lld must be smaller "
                         "than the stride %lld or the dilation %lld",
                         (long long)opad, (long long)st, (long long)dil);
    if (x->shape[2 + d] < 1 || o < 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "conv2d_transpose: the output %s would be %lld",
                         d ? "width" : "height", (long long)o);
  }
  conv_out_type(x, &cg, out);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pool2d                                                              */
/* ------------------------------------------------------------------ */

dy_status dy_infer_pool2d(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  dy_pool2d_attrs a;
  dy_status s;
  /* f32, or quantized i8 / u8 (pool2d_grad: f32 only, checked there) */
  if (in[0].dtype != DY_I8 && in[0].dtype != DY_U8 && (s = need_f32(op, in, 1, err)))
    return s;
  if ((s = need_rank(op, &in[0], "input", 4, 4, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)) || (s = dy_pool2d_attrs_of(op, &a, err)))
    return s;
  if (strcmp(a.pooling_type, "max") != 0 && strcmp(a.pooling_type, "avg") != 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "pool2d: pooling_type must be the string \"max\" or \"avg\"");
  const dy_type *x = &in[0];
  *out = *x;
  if (a.global_pooling) { /* the whole plane; ksize, strides and paddings are unused */
    out->shape[2] = out->shape[3] = 1;
    if (x->shape[2] < 1 || x->shape[3] < 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d: global pooling of an empty plane");
    return DY_OK;
  }
  if ((s = check_pair(op, "ksize", a.ksize, a.n_ksize, 1, err)))
    return s;
  if (a.adaptive) { /* ksize is the output size */
    if (x->shape[2] < 1 || x->shape[3] < 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d: adaptive pooling of an empty plane");
    out->shape[2] = a.ksize[0];
    out->shape[3] = a.ksize[1];
    return DY_OK;
  }
  if ((s = check_pair(op, "strides", a.strides, a.n_strides, 1, err)) ||
      (s = check_pads(op, a.paddings, a.n_paddings, err)))
    return s;
  dy_pool_geom g = dy_pool2d_geom(x, &a);
  for (int d = 0; d < 2; d++) {
    int64_t size = x->shape[2 + d], lo = g.lo[d], hi = g.hi[d], k = g.k[d];
    /* a window always holds at least one input element (max needs one) */
    if (lo >= k || hi >= k)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "pool2d: padding %lld is not smaller than the %s window %lld",
                         (long long)(lo > hi ? lo : hi), d ? "width" : "height",
                         (long long)k);
    int64_t padded = size + lo + hi;
    if (size < 1 || k > padded)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d: the %s window %lld is larger than the padded "
                         "input's %lld", d ? "width" : "height", (long long)k,
                         (long long)padded);
  }
  out->shape[2] = g.oh;
  out->shape[3] = g.ow;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* batch_norm, layer_norm, group_norm                                  */
/* ------------------------------------------------------------------ */

dy_status dy_infer_batch_norm(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  static const char *const what[] = {"x", "scale", "bias", "mean", "variance"};
  dy_status s;
  dy_batch_norm_attrs a;
  if ((s = need_f32(op, in, 5, err)) || (s = need_rank(op, &in[0], "input", 2, DY_MAX_DIMS, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)) || (s = dy_batch_norm_attrs_of(op, &a, err)) ||
      (s = check_eps(op, a.epsilon, err)))
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
  dy_layer_norm_attrs a;
  int ax;
  const dy_type *x = &in[0];
  if ((s = need_f32(op, in, 3, err)) || (s = need_rank(op, x, "input", 1, DY_MAX_DIMS, err)) ||
      (s = dy_layer_norm_attrs_of(op, &a, err)) || (s = check_eps(op, a.epsilon, err)) ||
      (s = dy_normalize_axis(op, a.begin_norm_axis, x->rank, &ax, err)) ||
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
  dy_group_norm_attrs a;
  if ((s = need_f32(op, in, 3, err)) || (s = need_rank(op, &in[0], "input", 2, DY_MAX_DIMS, err)) ||
      (s = need_static(op, &in[0], 1, "input", err)) || (s = dy_group_norm_attrs_of(op, &a, err)) ||
      (s = check_eps(op, a.epsilon, err)))
    return s;
  int64_t c = in[0].shape[1], g = a.groups;
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
  dy_dropout_attrs a;
  if ((s = need_f32(op, in, 1, err)) || (s = dy_dropout_attrs_of(op, &a, err)))
    return s;
  double p = a.p;
  if (!(p >= 0 && p <= 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "dropout: p is %g, must be in [0, 1]", p);
  *out = in[0];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gradient ops: conv2d_grad_filter, pool2d_grad                       */
/* ------------------------------------------------------------------ */

/* The two values of a type's dim d agree: equal, or both the batch. */
static dy_status same_dim(const dy_op *op, const dy_type *a, const dy_type *b, int d,
                          const char *what, dy_error *err) {
  if (a->shape[d] == b->shape[d])
    return DY_OK;
  char ta[128], tb[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: %s differ: %s and %s",
                     OPNAME(op), what, dy_type_str(a, ta, sizeof ta),
                     dy_type_str(b, tb, sizeof tb));
}

/* conv2d_grad_filter(x, dy): x [N,C,H,W] as conv2d's input, dy [N,O,Ho,Wo]
 * the gradient of its output -> dw [O, C/groups, kh, kw], kh, kw = ksize.
 * dy's plane may be smaller than conv2d's output (conv2d_transpose's filter
 * gradient reads its input as dy): taps past dy contribute nothing. */
dy_status dy_infer_conv2d_grad_filter(const dy_op *op, const dy_type *in, int n,
                                      dy_type *out, dy_error *err) {
  dy_conv2d_attrs ca;
  dy_conv2d_grad_filter_attrs a;
  dy_status s;
  const dy_type *x = &in[0], *g = &in[1];
  if ((s = need_f32(op, in, 2, err)) || (s = need_rank(op, x, "input", 4, 4, err)) ||
      (s = need_rank(op, g, "output gradient", 4, 4, err)) ||
      (s = need_static(op, x, 1, "input", err)) ||
      (s = need_static(op, g, 1, "output gradient", err)) ||
      (s = same_dim(op, x, g, 0, "the batches of the input and the output gradient", err)) ||
      (s = conv_attrs(op, &ca, err)) || (s = dy_conv2d_grad_filter_attrs_of(op, &a, err)) ||
      (s = check_pair(op, "ksize", a.ksize, a.n_ksize, 1, err)))
    return s;
  int64_t c = x->shape[1], o = g->shape[1], gr = ca.groups;
  if (c % gr != 0 || o % gr != 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "conv2d_grad_filter: channels %lld (input) and %lld (output "
                       "gradient) must both divide by groups %lld", (long long)c,
                       (long long)o, (long long)gr);
  dy_conv_geom cg = dy_conv2d_grad_filter_geom(x, g, &a);
  for (int d = 0; d < 2; d++) {
    int64_t padded = d ? cg.w + cg.pl + cg.pr : cg.h + cg.pt + cg.pb;
    int64_t span = d ? cg.dw * (cg.kw - 1) + 1 : cg.dh * (cg.kh - 1) + 1;
    int64_t st = d ? cg.sw : cg.sh, og = d ? cg.ow : cg.oh;
    if (span > padded || og < 1 || og > (padded - span) / st + 1)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "conv2d_grad_filter: an output gradient %s of %lld does not "
                         "fit a %lld kernel over the padded input's %lld",
                         d ? "width" : "height", (long long)og, (long long)span,
                         (long long)padded);
  }
  *out = (dy_type){.dtype = DY_F32, .rank = 4, .shape = {o, c / gr, cg.kh, cg.kw}};
  return DY_OK;
}

/* pool2d_grad(x, y, dy): x and y = pool2d(x) with the same attributes, dy
 * of y's type -> dx of x's type. */
dy_status dy_infer_pool2d_grad(const dy_op *op, const dy_type *in, int n,
                               dy_type *out, dy_error *err) {
  dy_type want;
  dy_status s;
  if ((s = need_f32(op, in, 3, err)) || (s = dy_infer_pool2d(op, in, 1, &want, err)))
    return s;
  for (int i = 1; i < 3; i++)
    if (!dy_type_equal(&in[i], &want)) {
      char ta[128], tb[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "pool2d_grad: %s is %s, the pooling of the input gives %s",
                         i == 1 ? "the output" : "the output gradient",
                         dy_type_str(&in[i], ta, sizeof ta),
                         dy_type_str(&want, tb, sizeof tb));
    }
  *out = in[0];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* geometry, shared with the kernels and the emitters                  */
/* ------------------------------------------------------------------ */

void dy_pads4(const int64_t *v, int n, int64_t out[4]) {
  for (int i = 0; i < 4; i++)
    out[i] = n == 4 ? v[i] : n == 2 ? v[i % 2] : 0;
}

/* Entry i of a [h, w] pair, or dflt when the list is not a pair (an op
 * that inference rejects; the geometry stays defined). */
static int64_t pair_at(const int64_t *v, int n, int i, int64_t dflt) {
  return n == 2 && v[i] >= 1 ? v[i] : dflt;
}

/* The fields conv2d and conv2d_transpose share. */
static dy_conv_geom conv_geom(const dy_type *x, const dy_type *w, const int64_t *st,
                              int n_st, const int64_t *pad, int n_pad,
                              const int64_t *dil, int n_dil, int64_t groups) {
  int64_t p[4];
  dy_pads4(pad, n_pad, p);
  return (dy_conv_geom){
      .n = x->shape[0], .c = x->shape[1], .h = x->shape[2], .w = x->shape[3],
      .kh = w->shape[2], .kw = w->shape[3],
      .sh = pair_at(st, n_st, 0, 1), .sw = pair_at(st, n_st, 1, 1),
      .dh = pair_at(dil, n_dil, 0, 1), .dw = pair_at(dil, n_dil, 1, 1),
      .pt = p[0], .pl = p[1], .pb = p[2], .pr = p[3],
      .groups = groups >= 1 ? groups : 1};
}

dy_conv_geom dy_conv2d_geom(const dy_type *x, const dy_type *w,
                            const dy_conv2d_attrs *a) {
  dy_conv_geom g = conv_geom(x, w, a->strides, a->n_strides, a->paddings, a->n_paddings,
                             a->dilations, a->n_dilations, a->groups);
  g.o = w->shape[0];
  g.oh = (g.h + g.pt + g.pb - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  g.ow = (g.w + g.pl + g.pr - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  return g;
}

dy_conv_geom dy_conv2d_transpose_geom(const dy_type *x, const dy_type *w,
                                      const dy_conv2d_transpose_attrs *a) {
  dy_conv_geom g = conv_geom(x, w, a->strides, a->n_strides, a->paddings, a->n_paddings,
                             a->dilations, a->n_dilations, a->groups);
  g.oph = a->n_output_padding == 2 ? a->output_padding[0] : 0;
  g.opw = a->n_output_padding == 2 ? a->output_padding[1] : 0;
  g.o = w->shape[1] * g.groups;
  g.oh = (g.h - 1) * g.sh - g.pt - g.pb + g.dh * (g.kh - 1) + g.oph + 1;
  g.ow = (g.w - 1) * g.sw - g.pl - g.pr + g.dw * (g.kw - 1) + g.opw + 1;
  return g;
}

dy_conv_geom dy_conv2d_grad_filter_geom(const dy_type *x, const dy_type *dy,
                                        const dy_conv2d_grad_filter_attrs *a) {
  dy_type w = {.dtype = DY_F32, .rank = 4,
               .shape = {dy->shape[1], 1, pair_at(a->ksize, a->n_ksize, 0, 1),
                         pair_at(a->ksize, a->n_ksize, 1, 1)}};
  dy_conv_geom g = conv_geom(x, &w, a->strides, a->n_strides, a->paddings, a->n_paddings,
                             a->dilations, a->n_dilations, a->groups);
  g.o = dy->shape[1];
  g.oh = dy->shape[2];
  g.ow = dy->shape[3];
  return g;
}

dy_pool_geom dy_pool2d_geom(const dy_type *x, const dy_pool2d_attrs *a) {
  dy_pool_geom g = {.mode = a->global_pooling ? DY_POOL_GLOBAL
                            : a->adaptive     ? DY_POOL_ADAPTIVE
                                              : DY_POOL_WINDOWS,
                    .max = a->pooling_type && strcmp(a->pooling_type, "max") == 0,
                    .exclusive = a->exclusive != 0,
                    .h = x->shape[2], .w = x->shape[3],
                    .oh = 1, .ow = 1, .s = {1, 1}};
  if (g.mode == DY_POOL_GLOBAL)
    return g;
  g.k[0] = pair_at(a->ksize, a->n_ksize, 0, 1);
  g.k[1] = pair_at(a->ksize, a->n_ksize, 1, 1);
  if (g.mode == DY_POOL_ADAPTIVE) { /* ksize is the output size */
    g.oh = g.k[0];
    g.ow = g.k[1];
    return g;
  }
  int64_t p[4];
  dy_pads4(a->paddings, a->n_paddings, p);
  for (int d = 0; d < 2; d++) {
    g.s[d] = pair_at(a->strides, a->n_strides, d, 1);
    g.lo[d] = p[d];
    g.hi[d] = p[d + 2];
    int64_t size = d ? g.w : g.h, padded = size + g.lo[d] + g.hi[d], o;
    if (a->ceil_mode) {
      o = (padded - g.k[d] + g.s[d] - 1) / g.s[d] + 1;
      /* the last window must start inside the input or its left padding */
      if ((o - 1) * g.s[d] >= size + g.lo[d])
        o--;
    } else {
      o = (padded - g.k[d]) / g.s[d] + 1;
    }
    *(d ? &g.ow : &g.oh) = o;
  }
  return g;
}
