/* paddle_ops.c - Paddle op types onto the op table, with Paddle's
 * semantics (the reference is Paddle's operator definitions, version 1.x
 * to 2.x, in inference mode):
 *
 *   elementwise_*      Y aligned to X at `axis` (-1: trailing), trailing
 *                      1-dims of Y trimmed when they would overhang: Y is
 *                      unsqueezed to X's rank, then numpy broadcasting
 *   mul                X flattened at x_num_col_dims, Y at y_num_col_dims,
 *                      a matmul, the result shaped X[:xn] + Y[yn:]
 *   matmul (v1)        transpose_X/Y, alpha; a 1-D X is a row, a 1-D Y a
 *                      column, the added dim dropped again
 *   conv2d (+ depthwise, transpose)
 *                      paddings [h, w] or [top, bottom, left, right];
 *                      padding_algorithm SAME (dilation 1, pads from the
 *                      input size) / VALID / EXPLICIT; data_format NHWC
 *                      is a transpose around an NCHW conv (the filter is
 *                      OIHW either way); conv2d_transpose's output_size
 *                      becomes output_padding
 *   pool2d             global / adaptive / windows, exclusive, ceil_mode
 *   dropout            downgrade_in_infer: x * (1 - p); upscale_in_train:
 *                      dropout in eval mode (the identity)
 *   fill_constant      full (an integer dtype truncates the value)
 *   *_interp(_v2)      nearest / bilinear as gathers of constant source
 *                      indices with constant weights per axis (Paddle's
 *                      ratio, align_corners, align_mode); static H, W
 *   pixel_shuffle      reshape, transpose, reshape
 *   prior_box          constants (they depend on shapes only)
 *   box_coder          decode_center_size as elementwise ops on columns
 *
 * Ops with a known reason not to import (LoD sequences, NMS, custom and
 * quantization ops) are named by pd_unsupported_reason, checked before any
 * op is imported.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* small builders                                                      */
/* ------------------------------------------------------------------ */

static const char *out_name(pd_ctx *c, const char *slot) { return pd_arg(c, true, slot, 0); }

static dy_status unary(pd_ctx *c, const char *op, int x, const char *name, int *out) {
  return pd_op(c, op, &x, 1, NULL, 0, name, out);
}

static dy_status binary(pd_ctx *c, const char *op, int a, int b, const char *name, int *out) {
  return pd_op(c, op, (int[]){a, b}, 2, NULL, 0, name, out);
}

/* An op with one ints attribute. */
static dy_status ints_op(pd_ctx *c, const char *op, const char *attr, int x, int n,
                         const int64_t *v, const char *name, int *out) {
  dy_attr a = DY_ATTR_IS(attr, v, n);
  return pd_op(c, op, &x, 1, &a, 1, name, out);
}

static dy_status reshape(pd_ctx *c, int x, int rank, const int64_t *shape, const char *name,
                         int *out) {
  return ints_op(c, "reshape", "shape", x, rank, shape, name, out);
}

static dy_status transpose(pd_ctx *c, int x, int rank, const int64_t *perm, const char *name,
                           int *out) {
  return ints_op(c, "transpose", "perm", x, rank, perm, name, out);
}

static dy_status unsqueeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                           int *out) {
  return ints_op(c, "unsqueeze", "axes", x, n, axes, name, out);
}

static dy_status squeeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                         int *out) {
  return ints_op(c, "squeeze", "axes", x, n, axes, name, out);
}

static dy_status flatten(pd_ctx *c, int x, int start, int stop, const char *name, int *out) {
  dy_attr a[2] = {DY_ATTR_I("start_axis", start), DY_ATTR_I("stop_axis", stop)};
  return pd_op(c, "flatten", &x, 1, a, 2, name, out);
}

static dy_status scale(pd_ctx *c, int x, double s, double b, const char *name, int *out) {
  dy_attr a[2] = {DY_ATTR_F("scale", s), DY_ATTR_F("bias", b)};
  return pd_op(c, "scale", &x, 1, a, 2, name, out);
}

/* The product of shape[0..n) within DY_MAX_NUMEL (a hostile attribute
 * must not overflow), or fail naming what. */
static dy_status checked_numel(pd_ctx *c, const int64_t *shape, int n, const char *what,
                               int64_t *out) {
  int64_t k = 1;
  for (int i = 0; i < n; i++)
    if (shape[i] < 0 || !dy_ck_mul(k, shape[i], &k) || k > DY_MAX_NUMEL)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s: a dim %lld, or more than %lld elements",
                     what, (long long)shape[i], (long long)DY_MAX_NUMEL);
  *out = k;
  return DY_OK;
}

/* A float attribute's value as float32 (out of range: +-inf, as a float
 * cast would give in Paddle, without C's undefined conversion). */
static double as_f32(double v) {
  if (v > FLT_MAX)
    return INFINITY;
  if (v < -FLT_MAX)
    return -INFINITY;
  return (float)v;
}

/* An output that is its input unchanged. */
static dy_status identity(pd_ctx *c, int x, const char *slot) { return pd_set_out(c, slot, x); }

/* The input slot must be absent (a tensor form of an attribute). */
static dy_status no_input(pd_ctx *c, const char *slot, const char *what) {
  if (pd_arg(c, false, slot, 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s from a tensor input (%s) is not supported; "
                   "only the attribute form", what, slot);
  return DY_OK;
}

static dy_status need_static_dim(pd_ctx *c, int var, int d, const char *what) {
  if (pd_type(c, var)->shape[d] < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s needs dim %d of its input to be static", what,
                   d);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* elementwise                                                         */
/* ------------------------------------------------------------------ */

/* Paddle's axis rule: the lower-rank operand's dims sit at `axis` of the
 * other's. Returns it unsqueezed to the full rank (or as it is when numpy
 * broadcasting already lines it up). */
static dy_status align(pd_ctx *c, int small, int big_rank, int64_t axis, int *out) {
  const dy_type *t = pd_type(c, small);
  int sr = t->rank;
  *out = small;
  if (axis < 0)
    axis = big_rank - sr;
  /* trailing 1s that would overhang are dropped */
  int64_t drop[DY_MAX_DIMS];
  int nd = 0;
  while (sr > 0 && axis + sr > big_rank && t->shape[sr - 1] == 1)
    drop[nd++] = --sr;
  if (axis < 0 || axis + sr > big_rank)
    return pd_fail(c, DY_STATUS_SHAPE_MISMATCH, "axis %lld does not fit ranks %d and %d",
                   (long long)axis, big_rank, t->rank);
  if (nd)
    PD_TRY(squeeze(c, small, nd, drop, NULL, out));
  if (axis + sr == big_rank)
    return DY_OK;
  /* trailing 1s; numpy broadcasting adds the leading ones */
  int64_t axes[DY_MAX_DIMS];
  int na = 0;
  for (int64_t d = axis + sr; d < big_rank; d++, na++)
    axes[na] = sr + na;
  return unsqueeze(c, *out, na, axes, NULL, out);
}

static dy_status map_ew(pd_ctx *c, const char *op) {
  int x, y, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  int64_t axis = pd_attr_i(c, "axis", -1);
  int rx = pd_type(c, x)->rank, ry = pd_type(c, y)->rank;
  if (axis != -1 && rx != ry) {
    if (ry < rx)
      PD_TRY(align(c, y, rx, axis, &y));
    else
      PD_TRY(align(c, x, ry, axis, &x));
  }
  return binary(c, op, x, y, out_name(c, "Out"), &o);
}

static dy_status map_elementwise_add(pd_ctx *c) { return map_ew(c, "add"); }
static dy_status map_elementwise_sub(pd_ctx *c) { return map_ew(c, "sub"); }
static dy_status map_elementwise_mul(pd_ctx *c) { return map_ew(c, "mul"); }
static dy_status map_elementwise_div(pd_ctx *c) { return map_ew(c, "div"); }
static dy_status map_elementwise_pow(pd_ctx *c) { return map_ew(c, "pow"); }
static dy_status map_elementwise_max(pd_ctx *c) { return map_ew(c, "maximum"); }
static dy_status map_elementwise_min(pd_ctx *c) { return map_ew(c, "minimum"); }

/* ------------------------------------------------------------------ */
/* matrix products                                                     */
/* ------------------------------------------------------------------ */

/* Flatten t to 2-D at col: [prod(dims[:col]), prod(dims[col:])]. */
static dy_status to_matrix(pd_ctx *c, int v, int col, int *out) {
  int r = pd_type(c, v)->rank;
  *out = v;
  if (col < 1 || col >= r)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "num_col_dims %d for a rank-%d input", col, r);
  if (r - col > 1)
    PD_TRY(flatten(c, *out, col, r - 1, NULL, out));
  if (col > 1)
    PD_TRY(flatten(c, *out, 0, col - 1, NULL, out));
  return DY_OK;
}

static dy_status map_mul(pd_ctx *c) {
  int x, y, x2, y2, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  int xn = (int)pd_attr_i(c, "x_num_col_dims", 1), yn = (int)pd_attr_i(c, "y_num_col_dims", 1);
  dy_type tx = *pd_type(c, x), ty = *pd_type(c, y);
  PD_TRY(to_matrix(c, x, xn, &x2));
  PD_TRY(to_matrix(c, y, yn, &y2));
  int rank = xn + ty.rank - yn;
  if (rank == 2)
    return binary(c, "matmul", x2, y2, out_name(c, "Out"), &o);
  int64_t shape[DY_MAX_DIMS];
  if (rank > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "result rank %d", rank);
  for (int i = 0; i < xn; i++)
    shape[i] = tx.shape[i] < 0 ? 0 : tx.shape[i];
  for (int i = yn; i < ty.rank; i++)
    shape[xn + i - yn] = ty.shape[i];
  PD_TRY(binary(c, "matmul", x2, y2, NULL, &o));
  return reshape(c, o, rank, shape, out_name(c, "Out"), &o);
}

static dy_status matmul_common(pd_ctx *c, bool tx, bool ty, double alpha) {
  int x, y, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  bool x1 = pd_type(c, x)->rank == 1, y1 = pd_type(c, y)->rank == 1;
  if (x1)
    PD_TRY(unsqueeze(c, x, 1, (int64_t[]){0}, NULL, &x));
  if (y1)
    PD_TRY(unsqueeze(c, y, 1, (int64_t[]){1}, NULL, &y));
  if (x1 && tx)
    tx = false; /* a vector is the same row either way */
  if (y1 && ty)
    ty = false;
  dy_attr a[2] = {DY_ATTR_I("transpose_x", tx), DY_ATTR_I("transpose_y", ty)};
  bool more = x1 || y1 || alpha != 1.0;
  PD_TRY(pd_op(c, "matmul", (int[]){x, y}, 2, a, 2, more ? NULL : out_name(c, "Out"), &o));
  if (x1 || y1) {
    int r = pd_type(c, o)->rank;
    int64_t ax[2];
    int n = 0;
    if (x1)
      ax[n++] = r - 2;
    if (y1)
      ax[n++] = r - 1;
    PD_TRY(squeeze(c, o, n, ax, alpha != 1.0 ? NULL : out_name(c, "Out"), &o));
  }
  if (alpha != 1.0)
    PD_TRY(scale(c, o, alpha, 0, out_name(c, "Out"), &o));
  return DY_OK;
}

static dy_status map_matmul(pd_ctx *c) {
  return matmul_common(c, pd_attr_b(c, "transpose_X", false), pd_attr_b(c, "transpose_Y", false),
                       pd_attr_f(c, "alpha", 1.0));
}

static dy_status map_matmul_v2(pd_ctx *c) {
  return matmul_common(c, pd_attr_b(c, "trans_x", false), pd_attr_b(c, "trans_y", false), 1.0);
}

/* ------------------------------------------------------------------ */
/* convolution, pooling, normalisation                                 */
/* ------------------------------------------------------------------ */

static bool is_nhwc(pd_ctx *c, const char *attr) {
  char buf[32];
  pd_attr_s(c, attr, "NCHW", buf, sizeof buf);
  return strcmp(buf, "NHWC") == 0;
}

/* Paddle's paddings (2: [h, w]; 4: [top, bottom, left, right]) with
 * padding_algorithm, into dy's [top, left, bottom, right]. For SAME the
 * input's plane and the kernel give the pads (and dilation becomes 1). */
static dy_status conv_pads(pd_ctx *c, const dy_type *x, const int64_t *k, const int64_t *s,
                           int64_t *dil, int64_t pads[4]) {
  int64_t p[4] = {0, 0, 0, 0};
  int n = pd_attr_ints(c, "paddings", p, 4);
  char alg[16];
  pd_attr_s(c, "padding_algorithm", "EXPLICIT", alg, sizeof alg);
  if (strcmp(alg, "VALID") == 0) {
    memset(pads, 0, 4 * sizeof *pads);
    return DY_OK;
  }
  if (strcmp(alg, "SAME") == 0) {
    for (int d = 0; d < 2; d++) {
      if (x->shape[2 + d] < 0)
        return pd_fail(c, DY_STATUS_UNSUPPORTED, "padding_algorithm SAME needs a static plane");
      int64_t in = x->shape[2 + d], out = (in + s[d] - 1) / s[d];
      int64_t total = (out - 1) * s[d] + k[d] - in;
      if (total < 0)
        total = 0;
      pads[d] = total / 2;
      pads[2 + d] = total - total / 2;
      dil[d] = 1;
    }
    return DY_OK;
  }
  if (strcmp(alg, "EXPLICIT"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "padding_algorithm '%s'", alg);
  if (n == 2 || n < 0) {
    pads[0] = pads[2] = n < 0 ? 0 : p[0];
    pads[1] = pads[3] = n < 0 ? 0 : p[1];
  } else if (n == 4) {
    pads[0] = p[0];
    pads[2] = p[1];
    pads[1] = p[2];
    pads[3] = p[3];
  } else {
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "paddings of length %d", n);
  }
  return DY_OK;
}

/* dy's paddings in their short form [h, w] when top = bottom and left =
 * right: the count (2 or 4). */
static int canon_pads(int64_t pads[4]) {
  if (pads[0] != pads[2] || pads[1] != pads[3])
    return 4;
  return 2;
}

static dy_status map_conv_any(pd_ctx *c, bool transposed) {
  int x, w, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  PD_TRY(pd_in(c, "Filter", 0, &w));
  if (pd_arg(c, false, "Bias", 0) || pd_arg(c, false, "ResidualData", 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "a fused Bias / ResidualData input");
  const char *on = out_name(c, "Output");
  bool nhwc = is_nhwc(c, "data_format");
  if (pd_type(c, x)->rank != 4 || pd_type(c, w)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D convolution of rank-4 tensors");
  if (nhwc)
    PD_TRY(transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
  int64_t s[2] = {1, 1}, d[2] = {1, 1}, pads[4];
  pd_attr_ints(c, "strides", s, 2);
  pd_attr_ints(c, "dilations", d, 2);
  int64_t groups = pd_attr_i(c, "groups", 1);
  const dy_type *wt = pd_type(c, w);
  int64_t k[2] = {d[0] * (wt->shape[2] - 1) + 1, d[1] * (wt->shape[3] - 1) + 1};
  PD_TRY(conv_pads(c, pd_type(c, x), k, s, d, pads));
  dy_attr a[5] = {DY_ATTR_IS("strides", s, 2), DY_ATTR_IS("paddings", pads, canon_pads(pads)),
                  DY_ATTR_IS("dilations", d, 2), DY_ATTR_I("groups", groups)};
  int na = 4;
  int64_t op[2] = {0, 0};
  if (transposed) {
    int64_t os[2];
    int n = pd_attr_ints(c, "output_padding", op, 2);
    int m = pd_attr_ints(c, "output_size", os, 2);
    if (m == 2) {
      const dy_type *xt = pd_type(c, x);
      for (int i = 0; i < 2; i++) {
        if (xt->shape[2 + i] < 0)
          return pd_fail(c, DY_STATUS_UNSUPPORTED, "output_size needs a static plane");
        int64_t natural = (xt->shape[2 + i] - 1) * s[i] - pads[i] - pads[2 + i] +
                          d[i] * (wt->shape[2 + i] - 1) + 1;
        op[i] = os[i] - natural;
        if (op[i] < 0 || op[i] >= (s[i] > d[i] ? s[i] : d[i]))
          return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "output_size %lld does not fit "
                         "(natural size %lld)", (long long)os[i], (long long)natural);
      }
      n = 2;
    }
    if (n == 2)
      a[na++] = DY_ATTR_IS("output_padding", op, 2);
  }
  PD_TRY(pd_op(c, transposed ? "conv2d_transpose" : "conv2d", (int[]){x, w}, 2, a, na,
               nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

static dy_status map_conv2d(pd_ctx *c) { return map_conv_any(c, false); }
static dy_status map_conv2d_transpose(pd_ctx *c) { return map_conv_any(c, true); }

static dy_status map_pool2d(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  const char *on = out_name(c, "Out");
  bool nhwc = is_nhwc(c, "data_format");
  if (pd_type(c, x)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D pooling of rank-4 tensors");
  if (nhwc)
    PD_TRY(transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
  char type[16];
  pd_attr_s(c, "pooling_type", "max", type, sizeof type);
  if (strcmp(type, "max") && strcmp(type, "avg"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "pooling_type '%s'", type);
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, dil[2] = {1, 1}, pads[4];
  pd_attr_ints(c, "ksize", k, 2);
  pd_attr_ints(c, "strides", s, 2);
  bool global = pd_attr_b(c, "global_pooling", false), adaptive = pd_attr_b(c, "adaptive", false);
  PD_TRY(conv_pads(c, pd_type(c, x), k, s, dil, pads));
  if (global)
    memset(pads, 0, sizeof pads);
  dy_attr a[8] = {DY_ATTR_S("pooling_type", type), DY_ATTR_IS("ksize", k, 2),
                  DY_ATTR_IS("strides", s, 2), DY_ATTR_IS("paddings", pads, canon_pads(pads)),
                  DY_ATTR_I("ceil_mode", pd_attr_b(c, "ceil_mode", false)),
                  DY_ATTR_I("exclusive", pd_attr_b(c, "exclusive", true)),
                  DY_ATTR_I("global_pooling", global), DY_ATTR_I("adaptive", adaptive)};
  PD_TRY(pd_op(c, "pool2d", &x, 1, a, 8, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

static dy_status map_batch_norm(pd_ctx *c) {
  int in[5], o;
  static const char *const slots[5] = {"X", "Scale", "Bias", "Mean", "Variance"};
  for (int i = 0; i < 5; i++)
    PD_TRY(pd_in(c, slots[i], 0, &in[i]));
  bool nhwc = is_nhwc(c, "data_layout");
  int r = pd_type(c, in[0])->rank;
  const char *on = out_name(c, "Y");
  if (nhwc && r != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_layout NHWC of rank %d", r);
  if (nhwc)
    PD_TRY(transpose(c, in[0], 4, (int64_t[]){0, 3, 1, 2}, NULL, &in[0]));
  dy_attr a[2] = {DY_ATTR_F("epsilon", pd_attr_f(c, "epsilon", 1e-5)), DY_ATTR_I("is_test", 1)};
  PD_TRY(pd_op(c, "batch_norm", in, 5, a, 2, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

static dy_status map_layer_norm(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "X", 0, &in[0]));
  PD_TRY(pd_in_opt(c, "Scale", 0, &in[1]));
  PD_TRY(pd_in_opt(c, "Bias", 0, &in[2]));
  const dy_type *t = pd_type(c, in[0]);
  int64_t ax = pd_attr_i(c, "begin_norm_axis", 1), cols = 1;
  if (ax < 0 || ax >= t->rank)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "begin_norm_axis %lld", (long long)ax);
  for (int i = (int)ax; i < t->rank; i++)
    cols *= t->shape[i];
  if (cols <= 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "the normalised dims must be static");
  for (int i = 1; i < 3; i++)
    if (in[i] < 0) {
      float *v = malloc((size_t)cols * sizeof *v);
      if (!v)
        return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      for (int64_t j = 0; j < cols; j++)
        v[j] = i == 1 ? 1.0f : 0.0f;
      dy_status s = pd_const(c, DY_F32, 1, &cols, v, NULL, &in[i]);
      free(v);
      PD_TRY(s);
    }
  dy_attr a[2] = {DY_ATTR_I("begin_norm_axis", ax),
                  DY_ATTR_F("epsilon", pd_attr_f(c, "epsilon", 1e-5))};
  return pd_op(c, "layer_norm", in, 3, a, 2, out_name(c, "Y"), &o);
}

static dy_status map_dropout(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  char impl[32];
  pd_attr_s(c, "dropout_implementation", "downgrade_in_infer", impl, sizeof impl);
  double p = pd_attr_f(c, "dropout_prob", 0.5);
  if (strcmp(impl, "upscale_in_train") == 0) { /* the identity at inference */
    dy_attr a[2] = {DY_ATTR_F("p", p), DY_ATTR_I("is_test", 1)};
    return pd_op(c, "dropout", &x, 1, a, 2, out_name(c, "Out"), &o);
  }
  if (strcmp(impl, "downgrade_in_infer"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "dropout_implementation '%s'", impl);
  /* Paddle computes x * (1 - p) in float */
  return scale(c, x, (double)(float)(1.0 - (double)(float)p), 0, out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* activations and other unary ops                                     */
/* ------------------------------------------------------------------ */

#define UNARY_MAP(pname, dyname)                      \
  static dy_status map_##pname(pd_ctx *c) {           \
    int x, o;                                         \
    PD_TRY(pd_in(c, "X", 0, &x));                     \
    return unary(c, dyname, x, out_name(c, "Out"), &o); \
  }
UNARY_MAP(relu, "relu")
UNARY_MAP(sigmoid, "sigmoid")
UNARY_MAP(tanh, "tanh")
UNARY_MAP(exp, "exp")
UNARY_MAP(sqrt, "sqrt")
UNARY_MAP(rsqrt, "rsqrt")
UNARY_MAP(reciprocal, "reciprocal")
UNARY_MAP(abs, "abs")
UNARY_MAP(log, "log")
UNARY_MAP(silu, "silu")
UNARY_MAP(erf, "erf")
UNARY_MAP(sin, "sin")
UNARY_MAP(cos, "cos")
UNARY_MAP(softsign, "softsign")
#undef UNARY_MAP

static dy_status map_relu6(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a[2] = {DY_ATTR_F("min", 0.0), DY_ATTR_F("max", pd_attr_f(c, "threshold", 6.0))};
  return pd_op(c, "clip", &x, 1, a, 2, out_name(c, "Out"), &o);
}

static dy_status map_clip(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(no_input(c, "Min", "min"));
  PD_TRY(no_input(c, "Max", "max"));
  dy_attr a[2] = {DY_ATTR_F("min", pd_attr_f(c, "min", 0)), DY_ATTR_F("max", pd_attr_f(c, "max", 0))};
  return pd_op(c, "clip", &x, 1, a, 2, out_name(c, "Out"), &o);
}

static dy_status map_hard_swish(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  double t = pd_attr_f(c, "threshold", 6), s = pd_attr_f(c, "scale", 6), f = pd_attr_f(c, "offset", 3);
  if (t != 6 || s != 6 || f != 3)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "hard_swish with threshold %g, scale %g, offset "
                   "%g (only 6, 6, 3)", t, s, f);
  return unary(c, "hard_swish", x, out_name(c, "Out"), &o);
}

static dy_status map_hard_sigmoid(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a[2] = {DY_ATTR_F("slope", pd_attr_f(c, "slope", 0.2)),
                  DY_ATTR_F("offset", pd_attr_f(c, "offset", 0.5))};
  return pd_op(c, "hard_sigmoid", &x, 1, a, 2, out_name(c, "Out"), &o);
}

static dy_status map_leaky_relu(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_F("alpha", pd_attr_f(c, "alpha", 0.02));
  return pd_op(c, "leaky_relu", &x, 1, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_gelu(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_I("approximate", pd_attr_b(c, "approximate", false));
  return pd_op(c, "gelu", &x, 1, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_swish(pd_ctx *c) {
  int x, o, t;
  PD_TRY(pd_in(c, "X", 0, &x));
  double beta = pd_attr_f(c, "beta", 1.0);
  if (beta == 1.0)
    return unary(c, "silu", x, out_name(c, "Out"), &o);
  PD_TRY(scale(c, x, beta, 0, NULL, &t));
  PD_TRY(unary(c, "sigmoid", t, NULL, &t));
  return binary(c, "mul", x, t, out_name(c, "Out"), &o);
}

static dy_status map_pow(pd_ctx *c) {
  int x, f, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(no_input(c, "FactorTensor", "factor"));
  PD_TRY(pd_const_f32(c, (float)pd_attr_f(c, "factor", 1.0), &f));
  return binary(c, "pow", x, f, out_name(c, "Out"), &o);
}

static dy_status map_scale(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(no_input(c, "ScaleTensor", "scale"));
  dy_attr a[3] = {DY_ATTR_F("scale", pd_attr_f(c, "scale", 1.0)),
                  DY_ATTR_F("bias", pd_attr_f(c, "bias", 0.0)),
                  DY_ATTR_I("bias_after_scale", pd_attr_b(c, "bias_after_scale", true))};
  return pd_op(c, "scale", &x, 1, a, 3, out_name(c, "Out"), &o);
}

static dy_status map_softmax(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", -1));
  return pd_op(c, "softmax", &x, 1, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_cast(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int t = (int)pd_attr_i(c, "out_dtype", PD_FP32);
  dy_dtype dt;
  if (!pd_dtype_to_dy(t, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "cast to %s", pd_dtype_name(t));
  dy_attr a = DY_ATTR_I("dtype", dt);
  return pd_op(c, "cast", &x, 1, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_where(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "Condition", 0, &in[0]));
  PD_TRY(pd_in(c, "X", 0, &in[1]));
  PD_TRY(pd_in(c, "Y", 0, &in[2]));
  return pd_op(c, "where", in, 3, NULL, 0, out_name(c, "Out"), &o);
}

static dy_status map_equal(pd_ctx *c) { return map_ew(c, "equal"); }
static dy_status map_greater_than(pd_ctx *c) { return map_ew(c, "greater"); }
static dy_status map_less_than(pd_ctx *c) { return map_ew(c, "less"); }

static dy_status map_arg_max(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (pd_attr_b(c, "flatten", false))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "arg_max with flatten");
  dy_attr a[2] = {DY_ATTR_I("axis", pd_attr_i(c, "axis", -1)),
                  DY_ATTR_I("keepdim", pd_attr_b(c, "keepdims", false))};
  return pd_op(c, "argmax", &x, 1, a, 2, out_name(c, "Out"), &o);
}

static dy_status map_tile(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(no_input(c, "RepeatTimes", "repeat_times"));
  PD_TRY(no_input(c, "repeat_times_tensor", "repeat_times"));
  int64_t r[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "repeat_times", r, DY_MAX_DIMS);
  dy_attr a = DY_ATTR_IS("repeat_times", r, n < 0 ? 0 : n);
  return pd_op(c, "tile", &x, 1, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_log_softmax(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", -1));
  return pd_op(c, "log_softmax", &x, 1, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_group_norm(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "X", 0, &in[0]));
  PD_TRY(pd_in(c, "Scale", 0, &in[1]));
  PD_TRY(pd_in(c, "Bias", 0, &in[2]));
  if (is_nhwc(c, "data_layout"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_layout NHWC");
  dy_attr a[2] = {DY_ATTR_I("groups", pd_attr_i(c, "groups", 1)),
                  DY_ATTR_F("epsilon", pd_attr_f(c, "epsilon", 1e-5))};
  return pd_op(c, "group_norm", in, 3, a, 2, out_name(c, "Y"), &o);
}

static dy_status map_assign(pd_ctx *c) {
  int x;
  PD_TRY(pd_in(c, "X", 0, &x));
  return identity(c, x, "Out");
}

/* ------------------------------------------------------------------ */
/* shapes                                                              */
/* ------------------------------------------------------------------ */

/* X -> Out through the op with one ints attribute, read from the Paddle
 * attribute pd_name. */
static dy_status map_ints(pd_ctx *c, const char *pd_name, const char *op, const char *attr) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int64_t v[DY_MAX_DIMS];
  int n = pd_attr_ints(c, pd_name, v, DY_MAX_DIMS);
  if (n < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "no %s attribute", pd_name);
  return ints_op(c, op, attr, x, n, v, out_name(c, "Out"), &o);
}

static dy_status map_reshape(pd_ctx *c) {
  PD_TRY(no_input(c, "Shape", "the shape"));
  PD_TRY(no_input(c, "ShapeTensor", "the shape"));
  return map_ints(c, "shape", "reshape", "shape");
}

static dy_status map_transpose(pd_ctx *c) { return map_ints(c, "axis", "transpose", "perm"); }

static dy_status map_flatten_contiguous_range(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  return flatten(c, x, (int)pd_attr_i(c, "start_axis", 1), (int)pd_attr_i(c, "stop_axis", -1),
                 out_name(c, "Out"), &o);
}

/* flatten / flatten2: to 2-D at axis. */
static dy_status map_flatten(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int axis = (int)pd_attr_i(c, "axis", 1), r = pd_type(c, x)->rank;
  if (axis < 0 || axis > r)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "axis %d for rank %d", axis, r);
  if (axis == 0)
    return reshape(c, x, 2, (int64_t[]){1, -1}, out_name(c, "Out"), &o);
  if (axis == r)
    return reshape(c, x, 2, (int64_t[]){-1, 1}, out_name(c, "Out"), &o);
  if (axis > 1)
    PD_TRY(flatten(c, x, 0, axis - 1, NULL, &x));
  return flatten(c, x, 1, -1, out_name(c, "Out"), &o);
}

static dy_status map_squeeze(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int64_t axes[DY_MAX_DIMS], keep[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS), k = 0;
  const dy_type *t = pd_type(c, x);
  if (n <= 0 && dy_type_is_static(t)) {
    return squeeze(c, x, 0, keep, out_name(c, "Out"), &o);
  } else if (n <= 0) {
    for (int d = 0; d < t->rank; d++)
      if (t->shape[d] == 1)
        keep[k++] = d;
  } else {
    /* Paddle leaves an axis whose dim is not 1 alone */
    for (int i = 0; i < n; i++) {
      int64_t a = axes[i] < 0 ? axes[i] + t->rank : axes[i];
      if (a >= 0 && a < t->rank && t->shape[a] == 1)
        keep[k++] = a;
    }
  }
  if (k == 0)
    return identity(c, x, "Out");
  return squeeze(c, x, k, keep, out_name(c, "Out"), &o);
}

static dy_status map_unsqueeze(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(no_input(c, "AxesTensor", "axes"));
  PD_TRY(no_input(c, "AxesTensorList", "axes"));
  int64_t axes[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS);
  int r = pd_type(c, x)->rank;
  /* Paddle inserts one axis at a time: a negative one counts from the
   * rank reached so far */
  for (int i = 0; i < n; i++)
    if (axes[i] < 0)
      axes[i] += r + i + 1;
  return unsqueeze(c, x, n, axes, out_name(c, "Out"), &o);
}

static dy_status map_concat(pd_ctx *c) {
  int n = pd_n_args(c, false, "X"), o;
  int in[64];
  PD_TRY(no_input(c, "AxisTensor", "axis"));
  if (n < 1 || n > 64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%d inputs", n);
  for (int i = 0; i < n; i++)
    PD_TRY(pd_in(c, "X", i, &in[i]));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", 0));
  if (n == 1)
    return identity(c, in[0], "Out");
  return pd_op(c, "concat", in, n, &a, 1, out_name(c, "Out"), &o);
}

static dy_status map_stack(pd_ctx *c) {
  int n = pd_n_args(c, false, "X"), o;
  int in[64];
  if (n < 1 || n > 64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%d inputs", n);
  int64_t axis = pd_attr_i(c, "axis", 0);
  for (int i = 0; i < n; i++) {
    PD_TRY(pd_in(c, "X", i, &in[i]));
    int64_t a = axis < 0 ? axis + pd_type(c, in[i])->rank + 1 : axis;
    PD_TRY(unsqueeze(c, in[i], 1, &a, n == 1 ? out_name(c, "Y") : NULL, &in[i]));
    axis = a;
  }
  if (n == 1)
    return DY_OK;
  dy_attr a = DY_ATTR_I("axis", axis);
  return pd_op(c, "concat", in, n, &a, 1, out_name(c, "Y"), &o);
}

static dy_status map_slice(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  static const char *const tensors[] = {"StartsTensor", "EndsTensor", "StartsTensorList",
                                        "EndsTensorList"};
  for (int i = 0; i < 4; i++)
    PD_TRY(no_input(c, tensors[i], "starts / ends"));
  int64_t axes[DY_MAX_DIMS], st[DY_MAX_DIMS], en[DY_MAX_DIMS], steps[DY_MAX_DIMS], dec[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS);
  if (n < 1 || pd_attr_ints(c, "starts", st, DY_MAX_DIMS) != n ||
      pd_attr_ints(c, "ends", en, DY_MAX_DIMS) != n)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "axes, starts and ends of different lengths");
  for (int i = 0; i < n; i++)
    steps[i] = 1;
  int nd = pd_attr_ints(c, "decrease_axis", dec, DY_MAX_DIMS);
  dy_attr a[4] = {DY_ATTR_IS("starts", st, n), DY_ATTR_IS("ends", en, n),
                  DY_ATTR_IS("axes", axes, n), DY_ATTR_IS("steps", steps, n)};
  PD_TRY(pd_op(c, "slice", &x, 1, a, 4, nd > 0 ? NULL : out_name(c, "Out"), &o));
  if (nd > 0) {
    if (nd == pd_type(c, o)->rank) /* every dim decreased: Paddle keeps [1] */
      return reshape(c, o, 1, (int64_t[]){1}, out_name(c, "Out"), &o);
    PD_TRY(squeeze(c, o, nd, dec, out_name(c, "Out"), &o));
  }
  return DY_OK;
}

static dy_status map_reduce(pd_ctx *c, const char *op) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int r = pd_type(c, x)->rank;
  int64_t axes[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "dim", axes, DY_MAX_DIMS);
  if (pd_attr_b(c, "reduce_all", false) || n <= 0) {
    n = r;
    for (int i = 0; i < r; i++)
      axes[i] = i;
  }
  bool keep = pd_attr_b(c, "keep_dim", false);
  dy_attr a[2] = {DY_ATTR_IS("axes", axes, n), DY_ATTR_I("keepdim", keep)};
  return pd_op(c, op, &x, 1, a, 2, out_name(c, "Out"), &o);
}

static dy_status map_reduce_mean(pd_ctx *c) { return map_reduce(c, "reduce_mean"); }
static dy_status map_reduce_sum(pd_ctx *c) { return map_reduce(c, "reduce_sum"); }
static dy_status map_reduce_max(pd_ctx *c) { return map_reduce(c, "reduce_max"); }
static dy_status map_reduce_min(pd_ctx *c) { return map_reduce(c, "reduce_min"); }

/* ------------------------------------------------------------------ */
/* constants, gathers                                                  */
/* ------------------------------------------------------------------ */

static dy_status map_fill_constant(pd_ctx *c) {
  PD_TRY(no_input(c, "ValueTensor", "the value"));
  PD_TRY(no_input(c, "ShapeTensor", "the shape"));
  PD_TRY(no_input(c, "ShapeTensorList", "the shape"));
  int64_t shape[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS);
  int pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  dy_dtype dt;
  if (n < 0 || !pd_dtype_to_dy(pdt, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "fill_constant of %s", pd_dtype_name(pdt));
  double v = pd_attr_f(c, "value", 0.0);
  char sv[64];
  pd_attr_s(c, "str_value", "", sv, sizeof sv);
  if (*sv)
    v = strtod(sv, NULL);
  int64_t numel = 0;
  PD_TRY(checked_numel(c, shape, n, "fill_constant's shape", &numel));
  (void)numel; /* the check is the point: full makes the tensor */
  if (dt == DY_I64 && !(fabs(v) < 9e18))
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "value %g does not fit int64", v);
  if (dt == DY_I64)
    v = trunc(v); /* Paddle casts the value: toward zero */
  else if (dt == DY_BOOL)
    v = v != 0;
  else
    v = as_f32(v);
  int o;
  dy_attr a[3] = {DY_ATTR_IS("shape", shape, n), DY_ATTR_F("value", v), DY_ATTR_I("dtype", dt)};
  return pd_op(c, "full", NULL, 0, a, 3, out_name(c, "Out"), &o);
}

static dy_status map_gather(pd_ctx *c) {
  int x, idx, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Index", 0, &idx));
  PD_TRY(no_input(c, "Axis", "the axis"));
  const dy_type *it = pd_type(c, idx);
  if (it->rank == 2 && it->shape[1] == 1)
    PD_TRY(squeeze(c, idx, 1, (int64_t[]){1}, NULL, &idx));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", 0));
  return pd_op(c, "gather", (int[]){x, idx}, 2, &a, 1, out_name(c, "Out"), &o);
}

/* lookup_table (ids [.., 1]) and lookup_table_v2: rows of W, a padding_idx
 * row read as zeros. */
static dy_status lookup(pd_ctx *c, bool v1) {
  int w, ids, o;
  PD_TRY(pd_in(c, "W", 0, &w));
  PD_TRY(pd_in(c, "Ids", 0, &ids));
  const dy_type *it = pd_type(c, ids);
  if (v1 && it->rank >= 2 && it->shape[it->rank - 1] == 1)
    PD_TRY(squeeze(c, ids, 1, (int64_t[]){it->rank - 1}, NULL, &ids));
  int64_t pad = pd_attr_i(c, "padding_idx", -1);
  if (pad < 0 && pad != -1)
    pad += pd_type(c, w)->shape[0];
  dy_attr a = DY_ATTR_I("axis", 0);
  if (pad == -1)
    return pd_op(c, "gather", (int[]){w, ids}, 2, &a, 1, out_name(c, "Out"), &o);
  int k, m, r;
  int64_t pv = pad;
  PD_TRY(pd_op(c, "gather", (int[]){w, ids}, 2, &a, 1, NULL, &o));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &pv, NULL, &k));
  PD_TRY(binary(c, "equal", ids, k, NULL, &m));
  dy_attr ct = DY_ATTR_I("dtype", DY_F32);
  PD_TRY(pd_op(c, "cast", &m, 1, &ct, 1, NULL, &m));
  PD_TRY(scale(c, m, -1.0, 1.0, NULL, &m));
  r = pd_type(c, m)->rank;
  PD_TRY(unsqueeze(c, m, 1, (int64_t[]){r}, NULL, &m));
  return binary(c, "mul", o, m, out_name(c, "Out"), &o);
}

static dy_status map_lookup_table(pd_ctx *c) { return lookup(c, true); }
static dy_status map_lookup_table_v2(pd_ctx *c) { return lookup(c, false); }

/* fill_constant_batch_size_like: shape with shape[output_dim_idx] taken
 * from Input's dim input_dim_idx. The batch: the value expanded to Input's
 * shape (expand_as: no data read), sliced to [B, 1, ...], placed at
 * output_dim_idx and broadcast against a constant of the other dims. */
static dy_status map_fill_constant_batch_size_like(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  int64_t shape[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS);
  int64_t in_idx = pd_attr_i(c, "input_dim_idx", 0), out_idx = pd_attr_i(c, "output_dim_idx", 0);
  int pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  const dy_type *xt = pd_type(c, x);
  if (n < 1 || in_idx < 0 || in_idx >= xt->rank || out_idx < 0 || out_idx >= n)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "shape, input_dim_idx or output_dim_idx "
                   "out of range");
  if (pdt != PD_FP32)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "dtype %s (only float32)", pd_dtype_name(pdt));
  double v = pd_attr_f(c, "value", 0.0);
  char sv[64];
  pd_attr_s(c, "str_value", "", sv, sizeof sv);
  if (*sv)
    v = strtod(sv, NULL);
  int64_t b = xt->shape[in_idx], numel = 0, all = 0;
  shape[out_idx] = 1;
  PD_TRY(checked_numel(c, shape, n, "shape", &numel));
  if (b >= 0 && (!dy_ck_mul(numel, b, &all) || all > DY_MAX_NUMEL))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "more than %lld elements", (long long)DY_MAX_NUMEL);
  v = as_f32(v);
  float *buf = malloc((size_t)(numel ? numel : 1) * sizeof *buf);
  if (!buf)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < numel; i++)
    buf[i] = (float)v;
  int k;
  if (b >= 0) { /* a static dim: a plain constant */
    shape[out_idx] = b;
    float *big = realloc(buf, (size_t)(all > 0 ? all : 1) * sizeof *buf);
    if (!big) {
      free(buf);
      return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < all; i++)
      big[i] = (float)v;
    dy_status s = pd_const(c, DY_F32, n, shape, big, out_name(c, "Out"), &k);
    free(big);
    return s;
  }
  if (in_idx != 0) {
    free(buf);
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic input_dim_idx other than the batch");
  }
  dy_status s = pd_const(c, DY_F32, n, shape, buf, NULL, &k);
  free(buf);
  PD_TRY(s);
  /* the batch as a [B] vector of zeros: expand_as a zero to Input, slice */
  int64_t ones[DY_MAX_DIMS], st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], sp[DY_MAX_DIMS];
  for (int i = 0; i < xt->rank; i++)
    ones[i] = 1;
  float zero = 0;
  int z, e;
  PD_TRY(pd_const(c, DY_F32, xt->rank, ones, &zero, NULL, &z));
  PD_TRY(binary(c, "expand_as", z, x, NULL, &e));
  int na = 0;
  for (int i = 1; i < xt->rank; i++, na++)
    st[na] = 0, en[na] = 1, ax[na] = i, sp[na] = 1;
  if (na) {
    dy_attr a[4] = {DY_ATTR_IS("starts", st, na), DY_ATTR_IS("ends", en, na),
                    DY_ATTR_IS("axes", ax, na), DY_ATTR_IS("steps", sp, na)};
    PD_TRY(pd_op(c, "slice", &e, 1, a, 4, NULL, &e));
    PD_TRY(squeeze(c, e, na, ax, NULL, &e));
  }
  /* [B] -> rank n with B at out_idx */
  int64_t axes[DY_MAX_DIMS];
  int nu = 0;
  for (int i = 0; i < n; i++)
    if (i != out_idx)
      axes[nu++] = i;
  if (nu)
    PD_TRY(unsqueeze(c, e, nu, axes, NULL, &e));
  return binary(c, "add", e, k, out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* the rnn op (GRU) as a while loop                                    */
/* ------------------------------------------------------------------ */

/* Gate g (0..2) of a [N, 3H] tensor. */
static dy_status gate(pd_ctx *c, int v, int g, int64_t h, int *out) {
  int64_t st = g * h, en = (g + 1) * h, ax = 1, sp = 1;
  dy_attr a[4] = {DY_ATTR_IS("starts", &st, 1), DY_ATTR_IS("ends", &en, 1),
                  DY_ATTR_IS("axes", &ax, 1), DY_ATTR_IS("steps", &sp, 1)};
  return pd_op(c, "slice", &v, 1, a, 4, NULL, out);
}

/* rnn, mode GRU, one layer, one direction, time-major Input [T, N, I],
 * PreState [1, N, H], WeightList (w_ih [3H, I], w_hh [3H, H], b_ih, b_hh),
 * gates in the order r, z, n as cuDNN:
 *   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
 *   z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
 *   n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
 *   h' = n + z * (h - n)
 * The input projection of every step is one matmul before the loop; the
 * loop (a while op over t < T) carries t and h. State = the last h; Out
 * (every step's h) is not built: an op reading it is an error. */
static dy_status map_rnn(pd_ctx *c) {
  char mode[16];
  pd_attr_s(c, "mode", "LSTM", mode, sizeof mode);
  if (strcmp(mode, "GRU"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn mode %s (only GRU)", mode);
  if (pd_attr_i(c, "num_layers", 1) != 1 || pd_attr_b(c, "is_bidirec", false))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn with several layers or both directions");
  if (pd_arg(c, false, "SequenceLength", 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn with SequenceLength (variable lengths)");
  const char *outn = pd_arg(c, true, "Out", 0);
  if (outn && pd_read_later(c, outn))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn: the per-step output '%s' is read; only "
                   "the final State is supported", outn);
  int x, h0, w[4];
  PD_TRY(pd_in(c, "Input", 0, &x));
  PD_TRY(pd_in(c, "PreState", 0, &h0));
  if (pd_n_args(c, false, "WeightList") != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn WeightList of %d tensors (want 4)",
                   pd_n_args(c, false, "WeightList"));
  for (int i = 0; i < 4; i++)
    PD_TRY(pd_in(c, "WeightList", i, &w[i]));
  const dy_type *xt = pd_type(c, x);
  int64_t T = xt->shape[0], H = pd_attr_i(c, "hidden_size", 0);
  if (xt->rank != 3 || T < 1 || H < 1 || pd_type(c, h0)->rank != 3)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn needs Input [T, N, I] with a static T and "
                   "PreState [1, N, H]");
  /* before the loop: x W_ih^T + b_ih for every step, h0, the constants */
  int xp, h, t0, tn, one;
  dy_attr ty = DY_ATTR_I("transpose_y", 1);
  PD_TRY(pd_op(c, "matmul", (int[]){x, w[0]}, 2, &ty, 1, NULL, &xp));
  PD_TRY(binary(c, "add", xp, w[2], NULL, &xp));
  PD_TRY(squeeze(c, h0, 1, (int64_t[]){0}, NULL, &h));
  int64_t zero = 0, one_v = 1;
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &zero, NULL, &t0));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &T, NULL, &tn));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &one_v, NULL, &one));
  dy_type types[2] = {*pd_type(c, t0), *pd_type(c, h)};
  int saved = c->block, blocks[2], par[2], res[2];
  /* condition: t < T */
  blocks[0] = dy_program_add_block(c->p, saved);
  for (int i = 0; i < 2; i++)
    par[i] = pd_new_var(c, "rnn_param", &types[i]);
  if (blocks[0] < 0 || par[0] < 0 || par[1] < 0 || !dy_block_set_params(c->p, blocks[0], par, 2))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  c->block = blocks[0];
  dy_status s = binary(c, "less", par[0], tn, NULL, &res[0]);
  c->block = saved;
  PD_TRY(s);
  if (!dy_block_set_results(c->p, blocks[0], res, 1))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* body: one step */
  blocks[1] = dy_program_add_block(c->p, saved);
  for (int i = 0; i < 2; i++)
    par[i] = pd_new_var(c, "rnn_param", &types[i]);
  if (blocks[1] < 0 || par[0] < 0 || par[1] < 0 || !dy_block_set_params(c->p, blocks[1], par, 2))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  c->block = blocks[1];
  int xs, hs, xg[3], hg[3], r, z, n, d;
  dy_attr ga = DY_ATTR_I("axis", 0);
  s = pd_op(c, "gather", (int[]){xp, par[0]}, 2, &ga, 1, NULL, &xs);
  if (!s)
    s = squeeze(c, xs, 1, (int64_t[]){0}, NULL, &xs);
  if (!s)
    s = pd_op(c, "matmul", (int[]){par[1], w[1]}, 2, &ty, 1, NULL, &hs);
  if (!s)
    s = binary(c, "add", hs, w[3], NULL, &hs);
  for (int g = 0; g < 3 && !s; g++)
    if (!(s = gate(c, xs, g, H, &xg[g])))
      s = gate(c, hs, g, H, &hg[g]);
  if (!s && !(s = binary(c, "add", xg[0], hg[0], NULL, &r)))
    s = unary(c, "sigmoid", r, NULL, &r);
  if (!s && !(s = binary(c, "add", xg[1], hg[1], NULL, &z)))
    s = unary(c, "sigmoid", z, NULL, &z);
  if (!s && !(s = binary(c, "mul", r, hg[2], NULL, &n)) && !(s = binary(c, "add", xg[2], n, NULL, &n)))
    s = unary(c, "tanh", n, NULL, &n);
  if (!s && !(s = binary(c, "sub", par[1], n, NULL, &d)) && !(s = binary(c, "mul", z, d, NULL, &d)))
    s = binary(c, "add", n, d, NULL, &res[1]);
  if (!s)
    s = binary(c, "add", par[0], one, NULL, &res[0]);
  c->block = saved;
  PD_TRY(s);
  if (!dy_block_set_results(c->p, blocks[1], res, 2))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* the while op: carried (t, h), then the blocks' captures */
  int cap = c->p->n_vars + 3, n_in = 2, k;
  int *in = malloc(sizeof *in * (size_t)cap), *caps = malloc(sizeof *caps * (size_t)cap);
  int outs[2];
  s = in && caps ? DY_OK : pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s) {
    in[0] = t0;
    in[1] = h;
  }
  for (int j = 0; j < 2 && !s; j++) {
    k = dy_block_captures(c->p, blocks[j], caps, cap);
    for (int i = 0; i < k && n_in < cap; i++) {
      bool seen = false;
      for (int q = 2; q < n_in && !seen; q++)
        seen = in[q] == caps[i];
      if (!seen)
        in[n_in++] = caps[i];
    }
  }
  for (int i = 0; i < 2 && !s; i++)
    if ((outs[i] = pd_new_var(c, i ? "rnn_h" : "rnn_t", &types[i])) < 0)
      s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_attr wa[4] = {DY_ATTR_I("n_carried", 2), DY_ATTR_I("cond_block", blocks[0]),
                   DY_ATTR_I("body_block", blocks[1]), DY_ATTR_I("max_iterations", 0)};
  if (!s && !dy_program_append_op(c->p, c->block, DY_OP_WHILE, in, n_in, outs, 2, wa, 4, c->loc))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  free(in);
  free(caps);
  PD_TRY(s);
  int o;
  return unsqueeze(c, outs[1], 1, (int64_t[]){0}, pd_arg(c, true, "State", 0), &o);
}

/* ------------------------------------------------------------------ */
/* detection: prior_box, box_coder                                     */
/* ------------------------------------------------------------------ */

/* prior_box: Boxes and Variances [H, W, P, 4] depend only on the shapes of
 * Input (the feature map, [N, C, H, W]) and Image: constants, computed
 * here as Paddle does (in float). Priors per cell: for each min size, one
 * box per aspect ratio (1 first, then the others, with 1/ar when flip;
 * min_max_aspect_ratios_order puts the min and max squares first), then
 * the sqrt(min * max) square when max_sizes are given; clip clamps to
 * [0, 1]. */
static dy_status map_prior_box(pd_ctx *c) {
  int in, img;
  PD_TRY(pd_in(c, "Input", 0, &in));
  PD_TRY(pd_in(c, "Image", 0, &img));
  const dy_type *ft = pd_type(c, in), *it = pd_type(c, img);
  if (ft->rank != 4 || it->rank != 4 || ft->shape[2] < 0 || ft->shape[3] < 0 ||
      it->shape[2] < 0 || it->shape[3] < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "prior_box needs the static planes of Input and "
                   "Image (give the image's size)");
  float mins[64], maxs[64], ars_in[32], var[4] = {0.1f, 0.1f, 0.2f, 0.2f}, ars[64];
  int n_min = pd_attr_floats(c, "min_sizes", mins, 64), n_max = pd_attr_floats(c, "max_sizes", maxs, 64);
  int n_ar_in = pd_attr_floats(c, "aspect_ratios", ars_in, 32);
  pd_attr_floats(c, "variances", var, 4);
  bool flip = pd_attr_b(c, "flip", false), clip = pd_attr_b(c, "clip", false);
  bool mm_order = pd_attr_b(c, "min_max_aspect_ratios_order", false);
  float offset = (float)pd_attr_f(c, "offset", 0.5);
  if (n_min < 1 || (n_max > 0 && n_max != n_min))
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "min_sizes / max_sizes");
  if (n_max < 0)
    n_max = 0;
  int n_ar = 0;
  ars[n_ar++] = 1.0f;
  for (int i = 0; i < n_ar_in; i++) {
    bool seen = false;
    for (int j = 0; j < n_ar; j++)
      seen |= fabsf(ars_in[i] - ars[j]) < 1e-6f;
    if (seen)
      continue;
    ars[n_ar++] = ars_in[i];
    if (flip && n_ar < 64)
      ars[n_ar++] = 1.0f / ars_in[i];
  }
  int64_t H = ft->shape[2], W = ft->shape[3], P = (int64_t)n_ar * n_min + n_max;
  float img_h = (float)it->shape[2], img_w = (float)it->shape[3];
  float sw = (float)pd_attr_f(c, "step_w", 0), sh = (float)pd_attr_f(c, "step_h", 0);
  if (sw == 0 || sh == 0)
    sw = img_w / (float)W, sh = img_h / (float)H;
  int64_t n = 0;
  PD_TRY(checked_numel(c, (int64_t[]){H, W, P, 4}, 4, "prior_box's output", &n));
  float *box = malloc((size_t)n * sizeof *box), *vb = malloc((size_t)n * sizeof *vb);
  if (!box || !vb) {
    free(box);
    free(vb);
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  float *b = box;
#define PUT(bw, bh)                                                   \
  do {                                                                \
    b[0] = (cx - (bw)) / img_w, b[1] = (cy - (bh)) / img_h;           \
    b[2] = (cx + (bw)) / img_w, b[3] = (cy + (bh)) / img_h;           \
    b += 4;                                                           \
  } while (0)
  for (int64_t h = 0; h < H; h++)
    for (int64_t w = 0; w < W; w++) {
      float cx = ((float)w + offset) * sw, cy = ((float)h + offset) * sh;
      for (int s = 0; s < n_min; s++) {
        float m = mins[s];
        if (mm_order) {
          PUT(m / 2.0f, m / 2.0f);
          if (n_max) {
            float sk = sqrtf(m * maxs[s]) / 2.0f;
            PUT(sk, sk);
          }
          for (int r = 0; r < n_ar; r++)
            if (fabsf(ars[r] - 1.0f) >= 1e-6f)
              PUT(m * sqrtf(ars[r]) / 2.0f, m / sqrtf(ars[r]) / 2.0f);
        } else {
          for (int r = 0; r < n_ar; r++)
            PUT(m * sqrtf(ars[r]) / 2.0f, m / sqrtf(ars[r]) / 2.0f);
          if (n_max) {
            float sk = sqrtf(m * maxs[s]) / 2.0f;
            PUT(sk, sk);
          }
        }
      }
    }
#undef PUT
  for (int64_t i = 0; i < n; i++) {
    if (clip)
      box[i] = box[i] < 0 ? 0 : box[i] > 1 ? 1 : box[i];
    vb[i] = var[i % 4];
  }
  int64_t shape[4] = {H, W, P, 4};
  int k;
  dy_status s = pd_const(c, DY_F32, 4, shape, box, pd_arg(c, true, "Boxes", 0), &k);
  if (!s && pd_arg(c, true, "Variances", 0))
    s = pd_const(c, DY_F32, 4, shape, vb, pd_arg(c, true, "Variances", 0), &k);
  free(box);
  free(vb);
  return s;
}

/* Column k of a [..., 4] tensor, keeping the dim. */
static dy_status column(pd_ctx *c, int v, int k, int *out) {
  int64_t st = k, en = k + 1, ax = pd_type(c, v)->rank - 1, sp = 1;
  dy_attr a[4] = {DY_ATTR_IS("starts", &st, 1), DY_ATTR_IS("ends", &en, 1),
                  DY_ATTR_IS("axes", &ax, 1), DY_ATTR_IS("steps", &sp, 1)};
  return pd_op(c, "slice", &v, 1, a, 4, NULL, out);
}

/* box_coder, decode_center_size, axis 0: TargetBox [N, M, 4] (deltas)
 * against PriorBox [M, 4] (xmin, ymin, xmax, ymax) and PriorBoxVar [M, 4]
 * (or the variance attribute):
 *   pw = x2 - x1 (+1 unless box_normalized), pcx = x1 + pw / 2 (same for y)
 *   cx = v0 t0 pw + pcx, w = exp(v2 t2) pw   (same for y)
 *   out = [cx - w/2, cy - h/2, cx + w/2, cy + h/2] (-1 on the max side unless
 *   box_normalized). */
static dy_status map_box_coder(pd_ctx *c) {
  char code[32];
  pd_attr_s(c, "code_type", "encode_center_size", code, sizeof code);
  if (strcmp(code, "decode_center_size") || pd_attr_i(c, "axis", 0) != 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "box_coder %s with axis %lld (only "
                   "decode_center_size, axis 0)", code, (long long)pd_attr_i(c, "axis", 0));
  int pb, pv, tb;
  PD_TRY(pd_in(c, "PriorBox", 0, &pb));
  PD_TRY(pd_in_opt(c, "PriorBoxVar", 0, &pv));
  PD_TRY(pd_in(c, "TargetBox", 0, &tb));
  bool norm = pd_attr_b(c, "box_normalized", true);
  if (pv < 0) {
    float var[4] = {1, 1, 1, 1};
    int n = pd_attr_floats(c, "variance", var, 4);
    if (n != 4 && n > 0)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "variance of %d values", n);
    PD_TRY(pd_const(c, DY_F32, 2, (int64_t[]){1, 4}, var, NULL, &pv));
  }
  if (pd_type(c, tb)->rank != 3 || pd_type(c, pb)->rank != 2)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "box_coder needs TargetBox [N, M, 4] and "
                   "PriorBox [M, 4]");
  int p[4], v[4], t[4], one, half;
  for (int k = 0; k < 4; k++) {
    PD_TRY(column(c, pb, k, &p[k]));
    PD_TRY(column(c, pv, k, &v[k]));
    PD_TRY(column(c, tb, k, &t[k]));
  }
  PD_TRY(pd_const_f32(c, norm ? 0.0f : 1.0f, &one));
  PD_TRY(pd_const_f32(c, 0.5f, &half));
  int res[4];
  for (int d = 0; d < 2; d++) { /* d = 0: x, 1: y */
    int pw, pc, cc, sz, hs, tmp;
    PD_TRY(binary(c, "sub", p[2 + d], p[d], NULL, &pw));
    PD_TRY(binary(c, "add", pw, one, NULL, &pw));
    PD_TRY(binary(c, "mul", pw, half, NULL, &tmp));
    PD_TRY(binary(c, "add", p[d], tmp, NULL, &pc));
    PD_TRY(binary(c, "mul", v[d], t[d], NULL, &cc));
    PD_TRY(binary(c, "mul", cc, pw, NULL, &cc));
    PD_TRY(binary(c, "add", cc, pc, NULL, &cc));
    PD_TRY(binary(c, "mul", v[2 + d], t[2 + d], NULL, &sz));
    PD_TRY(unary(c, "exp", sz, NULL, &sz));
    PD_TRY(binary(c, "mul", sz, pw, NULL, &sz));
    PD_TRY(binary(c, "mul", sz, half, NULL, &hs));
    PD_TRY(binary(c, "sub", cc, hs, NULL, &res[d]));
    PD_TRY(binary(c, "add", cc, hs, NULL, &tmp));
    PD_TRY(binary(c, "sub", tmp, one, NULL, &res[2 + d]));
  }
  int o;
  dy_attr a = DY_ATTR_I("axis", 2);
  return pd_op(c, "concat", res, 4, &a, 1, out_name(c, "OutputBox"), &o);
}

/* ------------------------------------------------------------------ */
/* interpolation, pixel_shuffle                                        */
/* ------------------------------------------------------------------ */

/* Resample axis `ax` of x (size in) to size out: nearest, or linear with
 * Paddle's source coordinates. */
static dy_status resample(pd_ctx *c, int x, int ax, int64_t in, int64_t out, float scale_attr,
                          bool linear, bool align_corners, int align_mode, const char *name,
                          int *res) {
  float ratio;
  if (out > 1 && align_corners)
    ratio = (float)(in - 1) / (float)(out - 1);
  else if (scale_attr > 0 && !align_corners)
    ratio = 1.0f / scale_attr;
  else
    ratio = out > 0 ? (float)in / (float)out : 0.0f;
  int64_t *i0 = malloc((size_t)out * sizeof *i0), *i1 = malloc((size_t)out * sizeof *i1);
  float *w0 = malloc((size_t)out * sizeof *w0), *w1 = malloc((size_t)out * sizeof *w1);
  dy_status s = DY_OK;
  if (!i0 || !i1 || !w0 || !w1) {
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (int64_t k = 0; k < out; k++) {
    if (!linear) {
      int64_t src = align_corners ? (int64_t)(ratio * (float)k + 0.5f) : (int64_t)(ratio * (float)k);
      i0[k] = src < in ? src : in - 1;
      continue;
    }
    bool half = align_mode == 0 && !align_corners;
    float src = half ? ratio * ((float)k + 0.5f) - 0.5f : ratio * (float)k;
    if (src < 0)
      src = 0;
    int64_t lo = (int64_t)src;
    if (lo > in - 1)
      lo = in - 1;
    i0[k] = lo;
    i1[k] = lo + (lo < in - 1 ? 1 : 0);
    w1[k] = src - (float)lo;
    w0[k] = 1.0f - w1[k];
  }
  int r = pd_type(c, x)->rank, k0, g0;
  dy_attr ga = DY_ATTR_I("axis", ax);
  if ((s = pd_const(c, DY_I64, 1, &out, i0, NULL, &k0)) ||
      (s = pd_op(c, "gather", (int[]){x, k0}, 2, &ga, 1, linear ? NULL : name, &g0)))
    goto done;
  *res = g0;
  if (linear) {
    int64_t wshape[DY_MAX_DIMS];
    int wr = r - ax;
    wshape[0] = out;
    for (int i = 1; i < wr; i++)
      wshape[i] = 1;
    int k1, g1, c0, c1, m0, m1;
    if ((s = pd_const(c, DY_I64, 1, &out, i1, NULL, &k1)) ||
        (s = pd_op(c, "gather", (int[]){x, k1}, 2, &ga, 1, NULL, &g1)) ||
        (s = pd_const(c, DY_F32, wr, wshape, w0, NULL, &c0)) ||
        (s = pd_const(c, DY_F32, wr, wshape, w1, NULL, &c1)) ||
        (s = binary(c, "mul", g0, c0, NULL, &m0)) || (s = binary(c, "mul", g1, c1, NULL, &m1)) ||
        (s = binary(c, "add", m0, m1, name, res)))
      goto done;
  }
done:
  free(i0);
  free(i1);
  free(w0);
  free(w1);
  return s;
}

static dy_status map_interp(pd_ctx *c, bool linear, bool v2) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  static const char *const tensors[] = {"OutSize", "SizeTensor", "Scale"};
  for (int i = 0; i < 3; i++)
    PD_TRY(no_input(c, tensors[i], "the output size"));
  bool nhwc = is_nhwc(c, "data_layout");
  const char *on = out_name(c, "Out");
  if (pd_type(c, x)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D interpolation (rank-4 input)");
  if (nhwc)
    PD_TRY(transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
  PD_TRY(need_static_dim(c, x, 2, "interpolation"));
  PD_TRY(need_static_dim(c, x, 3, "interpolation"));
  int64_t in[2] = {pd_type(c, x)->shape[2], pd_type(c, x)->shape[3]};
  int64_t out[2] = {pd_attr_i(c, "out_h", -1), pd_attr_i(c, "out_w", -1)};
  float sc[2] = {0, 0};
  if (v2) {
    float s[2];
    int n = pd_attr_floats(c, "scale", s, 2);
    if (n == 1)
      sc[0] = sc[1] = s[0];
    else if (n == 2)
      sc[0] = s[0], sc[1] = s[1];
  } else {
    sc[0] = sc[1] = (float)pd_attr_f(c, "scale", 0.0);
  }
  bool by_scale = !(out[0] > 0 && out[1] > 0);
  for (int d = 0; d < 2; d++) {
    if (by_scale) {
      if (!(sc[d] > 0))
        return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "neither out_h/out_w nor scale given");
      double o = (double)((float)in[d] * sc[d]);
      if (!(o >= 1 && o <= 1 << 24))
        return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "scale %g gives an output size %g", sc[d], o);
      out[d] = (int64_t)o;
    } else {
      sc[d] = 0; /* the ratio comes from the sizes */
    }
  }
  for (int d = 0; d < 2; d++)
    if (out[d] < 1 || out[d] > 1 << 24)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "output size %lld", (long long)out[d]);
  bool ac = pd_attr_b(c, "align_corners", true);
  int mode = (int)pd_attr_i(c, "align_mode", 1);
  PD_TRY(resample(c, x, 2, in[0], out[0], sc[0], linear, ac, mode, NULL, &x));
  PD_TRY(resample(c, x, 3, in[1], out[1], sc[1], linear, ac, mode, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

static dy_status map_nearest_interp(pd_ctx *c) { return map_interp(c, false, false); }
static dy_status map_nearest_interp_v2(pd_ctx *c) { return map_interp(c, false, true); }
static dy_status map_bilinear_interp(pd_ctx *c) { return map_interp(c, true, false); }
static dy_status map_bilinear_interp_v2(pd_ctx *c) { return map_interp(c, true, true); }

static dy_status map_pixel_shuffle(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (is_nhwc(c, "data_format"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_format NHWC");
  int64_t r = pd_attr_i(c, "upscale_factor", 1);
  const dy_type *t = pd_type(c, x);
  if (t->rank != 4 || r < 1 || t->shape[1] < 0 || t->shape[1] % (r * r) || t->shape[2] < 0 ||
      t->shape[3] < 0)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs a static [N, C*r*r, H, W] input");
  int64_t C = t->shape[1] / (r * r), H = t->shape[2], W = t->shape[3];
  int64_t n0 = t->shape[0] < 0 ? 0 : t->shape[0];
  PD_TRY(reshape(c, x, 6, (int64_t[]){n0, C, r, r, H, W}, NULL, &x));
  PD_TRY(transpose(c, x, 6, (int64_t[]){0, 1, 4, 2, 5, 3}, NULL, &x));
  return reshape(c, x, 4, (int64_t[]){n0, C, H * r, W * r}, out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* the tables                                                          */
/* ------------------------------------------------------------------ */

typedef struct {
  const char *type;
  pd_map_fn map;
} pd_mapper;

static const pd_mapper mappers[] = {
    {"elementwise_add", map_elementwise_add},
    {"elementwise_sub", map_elementwise_sub},
    {"elementwise_mul", map_elementwise_mul},
    {"elementwise_div", map_elementwise_div},
    {"elementwise_pow", map_elementwise_pow},
    {"elementwise_max", map_elementwise_max},
    {"elementwise_min", map_elementwise_min},
    {"mul", map_mul},
    {"matmul", map_matmul},
    {"matmul_v2", map_matmul_v2},
    {"conv2d", map_conv2d},
    {"depthwise_conv2d", map_conv2d},
    {"conv2d_transpose", map_conv2d_transpose},
    {"depthwise_conv2d_transpose", map_conv2d_transpose},
    {"pool2d", map_pool2d},
    {"batch_norm", map_batch_norm},
    {"layer_norm", map_layer_norm},
    {"dropout", map_dropout},
    {"relu", map_relu},
    {"relu6", map_relu6},
    {"sigmoid", map_sigmoid},
    {"tanh", map_tanh},
    {"exp", map_exp},
    {"sqrt", map_sqrt},
    {"rsqrt", map_rsqrt},
    {"reciprocal", map_reciprocal},
    {"abs", map_abs},
    {"log", map_log},
    {"silu", map_silu},
    {"erf", map_erf},
    {"sin", map_sin},
    {"cos", map_cos},
    {"softsign", map_softsign},
    {"clip", map_clip},
    {"hard_swish", map_hard_swish},
    {"hard_sigmoid", map_hard_sigmoid},
    {"leaky_relu", map_leaky_relu},
    {"gelu", map_gelu},
    {"swish", map_swish},
    {"pow", map_pow},
    {"scale", map_scale},
    {"softmax", map_softmax},
    {"assign", map_assign},
    {"cast", map_cast},
    {"where", map_where},
    {"equal", map_equal},
    {"greater_than", map_greater_than},
    {"less_than", map_less_than},
    {"arg_max", map_arg_max},
    {"tile", map_tile},
    {"log_softmax", map_log_softmax},
    {"group_norm", map_group_norm},
    {"reshape", map_reshape},
    {"reshape2", map_reshape},
    {"transpose", map_transpose},
    {"transpose2", map_transpose},
    {"flatten_contiguous_range", map_flatten_contiguous_range},
    {"flatten", map_flatten},
    {"flatten2", map_flatten},
    {"squeeze", map_squeeze},
    {"squeeze2", map_squeeze},
    {"unsqueeze", map_unsqueeze},
    {"unsqueeze2", map_unsqueeze},
    {"concat", map_concat},
    {"stack", map_stack},
    {"slice", map_slice},
    {"reduce_mean", map_reduce_mean},
    {"reduce_sum", map_reduce_sum},
    {"reduce_max", map_reduce_max},
    {"reduce_min", map_reduce_min},
    {"fill_constant", map_fill_constant},
    {"fill_constant_batch_size_like", map_fill_constant_batch_size_like},
    {"rnn", map_rnn},
    {"gather", map_gather},
    {"lookup_table", map_lookup_table},
    {"lookup_table_v2", map_lookup_table_v2},
    {"nearest_interp", map_nearest_interp},
    {"nearest_interp_v2", map_nearest_interp_v2},
    {"bilinear_interp", map_bilinear_interp},
    {"bilinear_interp_v2", map_bilinear_interp_v2},
    {"pixel_shuffle", map_pixel_shuffle},
    {"prior_box", map_prior_box},
    {"box_coder", map_box_coder},
};

pd_map_fn pd_find_mapper(const char *type) {
  for (size_t i = 0; i < sizeof mappers / sizeof *mappers; i++)
    if (strcmp(mappers[i].type, type) == 0)
      return mappers[i].map;
  return NULL;
}

const char *pd_unsupported_reason(const char *type) {
  static const struct {
    const char *prefix;
    const char *why;
  } known[] = {
      {"sequence_", "LoD sequence ops are not supported (they read a LoD tensor's sequence "
                    "offsets; dy2stc's tensors are dense)"},
      {"lstm", "the LoD lstm op is not supported (it steps over a LoD tensor's sequences; "
               "dy2stc's tensors are dense)"},
      {"gru", "the LoD gru op is not supported (it steps over a LoD tensor's sequences; "
              "dy2stc's tensors are dense)"},
      {"crf_decoding", "crf_decoding is not supported (LoD sequences)"},
      {"multiclass_nms", "multiclass_nms is not supported: its output's length depends on the "
                         "data (a LoD list of boxes), dy2stc's outputs have static shapes"},
      {"gap", "the custom op 'gap' is not supported: it is a plugin (PD_BUILD_OP), not a "
              "Paddle op, and dy2stc has no kernel for it"},
      {"fake_", "quantization ops (fake_quantize / fake_dequantize) are not supported"},
  };
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    size_t n = strlen(known[i].prefix);
    bool exact = strcmp(known[i].prefix, "gap") == 0; /* not "gather" */
    if (exact ? strcmp(type, known[i].prefix) == 0 : strncmp(type, known[i].prefix, n) == 0)
      return known[i].why;
  }
  return NULL;
}
