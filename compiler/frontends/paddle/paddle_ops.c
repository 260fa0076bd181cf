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
 *
 * The ops that take more than a line or two of lowering (rnn, detection,
 * interpolation, fill_constant_batch_size_like) are paddle_ops_ext.c; the
 * builders here (pd_unary, pd_reshape, ...) serve both.
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

const char *pd_out_name(pd_ctx *c, const char *slot) { return pd_arg(c, true, slot, 0); }

dy_status pd_unary(pd_ctx *c, const char *op, int x, const char *name, int *out) {
  return pd_op(c, op, &x, 1, NULL, 0, name, out);
}

dy_status pd_binary(pd_ctx *c, const char *op, int a, int b, const char *name, int *out) {
  return pd_op(c, op, (int[]){a, b}, 2, NULL, 0, name, out);
}

/* An op with one ints attribute. */
dy_status pd_ints_op(pd_ctx *c, const char *op, const char *attr, int x, int n,
                         const int64_t *v, const char *name, int *out) {
  dy_attr a = DY_ATTR_IS(attr, v, n);
  return pd_op(c, op, &x, 1, &a, 1, name, out);
}

dy_status pd_reshape(pd_ctx *c, int x, int rank, const int64_t *shape, const char *name,
                         int *out) {
  return pd_ints_op(c, "reshape", "shape", x, rank, shape, name, out);
}

dy_status pd_transpose(pd_ctx *c, int x, int rank, const int64_t *perm, const char *name,
                           int *out) {
  return pd_ints_op(c, "transpose", "perm", x, rank, perm, name, out);
}

dy_status pd_unsqueeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                           int *out) {
  return pd_ints_op(c, "unsqueeze", "axes", x, n, axes, name, out);
}

dy_status pd_squeeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                         int *out) {
  return pd_ints_op(c, "squeeze", "axes", x, n, axes, name, out);
}

dy_status pd_slice1(pd_ctx *c, int x, int64_t axis, int64_t start, int64_t end, int *out) {
  int64_t sp = 1;
  dy_attr a[4] = {DY_ATTR_IS("starts", &start, 1), DY_ATTR_IS("ends", &end, 1),
                  DY_ATTR_IS("axes", &axis, 1), DY_ATTR_IS("steps", &sp, 1)};
  return pd_op(c, "slice", &x, 1, a, 4, NULL, out);
}

dy_status pd_flatten(pd_ctx *c, int x, int start, int stop, const char *name, int *out) {
  dy_attr a[2] = {DY_ATTR_I("start_axis", start), DY_ATTR_I("stop_axis", stop)};
  return pd_op(c, "flatten", &x, 1, a, 2, name, out);
}

dy_status pd_scale(pd_ctx *c, int x, double s, double b, const char *name, int *out) {
  dy_attr a[2] = {DY_ATTR_F("scale", s), DY_ATTR_F("bias", b)};
  return pd_op(c, "scale", &x, 1, a, 2, name, out);
}

/* The product of shape[0..n) within DY_MAX_NUMEL (a hostile attribute
 * must not overflow), or fail naming what. */
dy_status pd_checked_numel(pd_ctx *c, const int64_t *shape, int n, const char *what,
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
double pd_as_f32(double v) {
  if (v > FLT_MAX)
    return INFINITY;
  if (v < -FLT_MAX)
    return -INFINITY;
  return (float)v;
}

/* An output that is its input unchanged. */
dy_status pd_identity(pd_ctx *c, int x, const char *slot) { return pd_set_out(c, slot, x); }

/* The input slot must be absent (a tensor form of an attribute). */
dy_status pd_no_input(pd_ctx *c, const char *slot, const char *what) {
  if (pd_arg(c, false, slot, 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s from a tensor input (%s) is not supported; "
                   "only the attribute form", what, slot);
  return DY_OK;
}

dy_status pd_need_static_dim(pd_ctx *c, int var, int d, const char *what) {
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
    PD_TRY(pd_squeeze(c, small, nd, drop, NULL, out));
  if (axis + sr == big_rank)
    return DY_OK;
  /* trailing 1s; numpy broadcasting adds the leading ones */
  int64_t axes[DY_MAX_DIMS];
  int na = 0;
  for (int64_t d = axis + sr; d < big_rank; d++, na++)
    axes[na] = sr + na;
  return pd_unsqueeze(c, *out, na, axes, NULL, out);
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
  return pd_binary(c, op, x, y, pd_out_name(c, "Out"), &o);
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
    PD_TRY(pd_flatten(c, *out, col, r - 1, NULL, out));
  if (col > 1)
    PD_TRY(pd_flatten(c, *out, 0, col - 1, NULL, out));
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
    return pd_binary(c, "matmul", x2, y2, pd_out_name(c, "Out"), &o);
  int64_t shape[DY_MAX_DIMS];
  if (rank > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "result rank %d", rank);
  for (int i = 0; i < xn; i++)
    shape[i] = tx.shape[i] < 0 ? 0 : tx.shape[i];
  for (int i = yn; i < ty.rank; i++)
    shape[xn + i - yn] = ty.shape[i];
  PD_TRY(pd_binary(c, "matmul", x2, y2, NULL, &o));
  return pd_reshape(c, o, rank, shape, pd_out_name(c, "Out"), &o);
}

static dy_status matmul_common(pd_ctx *c, bool tx, bool ty, double alpha) {
  int x, y, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  bool x1 = pd_type(c, x)->rank == 1, y1 = pd_type(c, y)->rank == 1;
  if (x1)
    PD_TRY(pd_unsqueeze(c, x, 1, (int64_t[]){0}, NULL, &x));
  if (y1)
    PD_TRY(pd_unsqueeze(c, y, 1, (int64_t[]){1}, NULL, &y));
  if (x1 && tx)
    tx = false; /* a vector is the same row either way */
  if (y1 && ty)
    ty = false;
  dy_attr a[2] = {DY_ATTR_I("transpose_x", tx), DY_ATTR_I("transpose_y", ty)};
  bool more = x1 || y1 || alpha != 1.0;
  PD_TRY(pd_op(c, "matmul", (int[]){x, y}, 2, a, 2, more ? NULL : pd_out_name(c, "Out"), &o));
  if (x1 || y1) {
    int r = pd_type(c, o)->rank;
    int64_t ax[2];
    int n = 0;
    if (x1)
      ax[n++] = r - 2;
    if (y1)
      ax[n++] = r - 1;
    PD_TRY(pd_squeeze(c, o, n, ax, alpha != 1.0 ? NULL : pd_out_name(c, "Out"), &o));
  }
  if (alpha != 1.0)
    PD_TRY(pd_scale(c, o, alpha, 0, pd_out_name(c, "Out"), &o));
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

bool pd_is_nhwc(pd_ctx *c, const char *attr) {
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
  const char *on = pd_out_name(c, "Output");
  bool nhwc = pd_is_nhwc(c, "data_format");
  if (pd_type(c, x)->rank != 4 || pd_type(c, w)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D convolution of rank-4 tensors");
  if (nhwc)
    PD_TRY(pd_transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
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
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

static dy_status map_conv2d(pd_ctx *c) { return map_conv_any(c, false); }
static dy_status map_conv2d_transpose(pd_ctx *c) { return map_conv_any(c, true); }

static dy_status map_pool2d(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  const char *on = pd_out_name(c, "Out");
  bool nhwc = pd_is_nhwc(c, "data_format");
  if (pd_type(c, x)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D pooling of rank-4 tensors");
  if (nhwc)
    PD_TRY(pd_transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
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
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

static dy_status map_batch_norm(pd_ctx *c) {
  int in[5], o;
  static const char *const slots[5] = {"X", "Scale", "Bias", "Mean", "Variance"};
  for (int i = 0; i < 5; i++)
    PD_TRY(pd_in(c, slots[i], 0, &in[i]));
  bool nhwc = pd_is_nhwc(c, "data_layout");
  int r = pd_type(c, in[0])->rank;
  const char *on = pd_out_name(c, "Y");
  if (nhwc && r != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_layout NHWC of rank %d", r);
  if (nhwc)
    PD_TRY(pd_transpose(c, in[0], 4, (int64_t[]){0, 3, 1, 2}, NULL, &in[0]));
  dy_attr a[2] = {DY_ATTR_F("epsilon", pd_attr_f(c, "epsilon", 1e-5)), DY_ATTR_I("is_test", 1)};
  PD_TRY(pd_op(c, "batch_norm", in, 5, a, 2, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
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
  return pd_op(c, "layer_norm", in, 3, a, 2, pd_out_name(c, "Y"), &o);
}

static dy_status map_dropout(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  char impl[32];
  pd_attr_s(c, "dropout_implementation", "downgrade_in_infer", impl, sizeof impl);
  double p = pd_attr_f(c, "dropout_prob", 0.5);
  if (strcmp(impl, "upscale_in_train") == 0) { /* the identity at inference */
    dy_attr a[2] = {DY_ATTR_F("p", p), DY_ATTR_I("is_test", 1)};
    return pd_op(c, "dropout", &x, 1, a, 2, pd_out_name(c, "Out"), &o);
  }
  if (strcmp(impl, "downgrade_in_infer"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "dropout_implementation '%s'", impl);
  /* Paddle computes x * (1 - p) in float */
  return pd_scale(c, x, (double)(float)(1.0 - (double)(float)p), 0, pd_out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* activations and other unary ops                                     */
/* ------------------------------------------------------------------ */

#define UNARY_MAP(pname, dyname)                      \
  static dy_status map_##pname(pd_ctx *c) {           \
    int x, o;                                         \
    PD_TRY(pd_in(c, "X", 0, &x));                     \
    return pd_unary(c, dyname, x, pd_out_name(c, "Out"), &o); \
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
  return pd_op(c, "clip", &x, 1, a, 2, pd_out_name(c, "Out"), &o);
}

static dy_status map_clip(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "Min", "min"));
  PD_TRY(pd_no_input(c, "Max", "max"));
  dy_attr a[2] = {DY_ATTR_F("min", pd_attr_f(c, "min", 0)), DY_ATTR_F("max", pd_attr_f(c, "max", 0))};
  return pd_op(c, "clip", &x, 1, a, 2, pd_out_name(c, "Out"), &o);
}

static dy_status map_hard_swish(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  double t = pd_attr_f(c, "threshold", 6), s = pd_attr_f(c, "scale", 6), f = pd_attr_f(c, "offset", 3);
  if (t != 6 || s != 6 || f != 3)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "hard_swish with threshold %g, scale %g, offset "
                   "%g (only 6, 6, 3)", t, s, f);
  return pd_unary(c, "hard_swish", x, pd_out_name(c, "Out"), &o);
}

static dy_status map_hard_sigmoid(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a[2] = {DY_ATTR_F("slope", pd_attr_f(c, "slope", 0.2)),
                  DY_ATTR_F("offset", pd_attr_f(c, "offset", 0.5))};
  return pd_op(c, "hard_sigmoid", &x, 1, a, 2, pd_out_name(c, "Out"), &o);
}

static dy_status map_leaky_relu(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_F("alpha", pd_attr_f(c, "alpha", 0.02));
  return pd_op(c, "leaky_relu", &x, 1, &a, 1, pd_out_name(c, "Out"), &o);
}

static dy_status map_gelu(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_I("approximate", pd_attr_b(c, "approximate", false));
  return pd_op(c, "gelu", &x, 1, &a, 1, pd_out_name(c, "Out"), &o);
}

static dy_status map_swish(pd_ctx *c) {
  int x, o, t;
  PD_TRY(pd_in(c, "X", 0, &x));
  double beta = pd_attr_f(c, "beta", 1.0);
  if (beta == 1.0)
    return pd_unary(c, "silu", x, pd_out_name(c, "Out"), &o);
  PD_TRY(pd_scale(c, x, beta, 0, NULL, &t));
  PD_TRY(pd_unary(c, "sigmoid", t, NULL, &t));
  return pd_binary(c, "mul", x, t, pd_out_name(c, "Out"), &o);
}

static dy_status map_pow(pd_ctx *c) {
  int x, f, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "FactorTensor", "factor"));
  PD_TRY(pd_const_f32(c, (float)pd_attr_f(c, "factor", 1.0), &f));
  return pd_binary(c, "pow", x, f, pd_out_name(c, "Out"), &o);
}

static dy_status map_scale(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "ScaleTensor", "scale"));
  dy_attr a[3] = {DY_ATTR_F("scale", pd_attr_f(c, "scale", 1.0)),
                  DY_ATTR_F("bias", pd_attr_f(c, "bias", 0.0)),
                  DY_ATTR_I("bias_after_scale", pd_attr_b(c, "bias_after_scale", true))};
  return pd_op(c, "scale", &x, 1, a, 3, pd_out_name(c, "Out"), &o);
}

static dy_status map_softmax(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", -1));
  return pd_op(c, "softmax", &x, 1, &a, 1, pd_out_name(c, "Out"), &o);
}

static dy_status map_cast(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int t = (int)pd_attr_i(c, "out_dtype", PD_FP32);
  dy_dtype dt;
  if (!pd_dtype_to_dy(t, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "cast to %s", pd_dtype_name(t));
  dy_attr a = DY_ATTR_I("dtype", dt);
  return pd_op(c, "cast", &x, 1, &a, 1, pd_out_name(c, "Out"), &o);
}

static dy_status map_where(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "Condition", 0, &in[0]));
  PD_TRY(pd_in(c, "X", 0, &in[1]));
  PD_TRY(pd_in(c, "Y", 0, &in[2]));
  return pd_op(c, "where", in, 3, NULL, 0, pd_out_name(c, "Out"), &o);
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
  return pd_op(c, "argmax", &x, 1, a, 2, pd_out_name(c, "Out"), &o);
}

static dy_status map_tile(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "RepeatTimes", "repeat_times"));
  PD_TRY(pd_no_input(c, "repeat_times_tensor", "repeat_times"));
  int64_t r[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "repeat_times", r, DY_MAX_DIMS);
  dy_attr a = DY_ATTR_IS("repeat_times", r, n < 0 ? 0 : n);
  return pd_op(c, "tile", &x, 1, &a, 1, pd_out_name(c, "Out"), &o);
}

static dy_status map_log_softmax(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", -1));
  return pd_op(c, "log_softmax", &x, 1, &a, 1, pd_out_name(c, "Out"), &o);
}

static dy_status map_group_norm(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "X", 0, &in[0]));
  PD_TRY(pd_in(c, "Scale", 0, &in[1]));
  PD_TRY(pd_in(c, "Bias", 0, &in[2]));
  if (pd_is_nhwc(c, "data_layout"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_layout NHWC");
  dy_attr a[2] = {DY_ATTR_I("groups", pd_attr_i(c, "groups", 1)),
                  DY_ATTR_F("epsilon", pd_attr_f(c, "epsilon", 1e-5))};
  return pd_op(c, "group_norm", in, 3, a, 2, pd_out_name(c, "Y"), &o);
}

static dy_status map_assign(pd_ctx *c) {
  int x;
  PD_TRY(pd_in(c, "X", 0, &x));
  return pd_identity(c, x, "Out");
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
  return pd_ints_op(c, op, attr, x, n, v, pd_out_name(c, "Out"), &o);
}

static dy_status map_reshape(pd_ctx *c) {
  PD_TRY(pd_no_input(c, "Shape", "the shape"));
  PD_TRY(pd_no_input(c, "ShapeTensor", "the shape"));
  return map_ints(c, "shape", "reshape", "shape");
}

static dy_status map_transpose(pd_ctx *c) { return map_ints(c, "axis", "transpose", "perm"); }

static dy_status map_flatten_contiguous_range(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  return pd_flatten(c, x, (int)pd_attr_i(c, "start_axis", 1), (int)pd_attr_i(c, "stop_axis", -1),
                 pd_out_name(c, "Out"), &o);
}

/* flatten / flatten2: to 2-D at axis. */
static dy_status map_flatten(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int axis = (int)pd_attr_i(c, "axis", 1), r = pd_type(c, x)->rank;
  if (axis < 0 || axis > r)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "axis %d for rank %d", axis, r);
  if (axis == 0)
    return pd_reshape(c, x, 2, (int64_t[]){1, -1}, pd_out_name(c, "Out"), &o);
  if (axis == r)
    return pd_reshape(c, x, 2, (int64_t[]){-1, 1}, pd_out_name(c, "Out"), &o);
  if (axis > 1)
    PD_TRY(pd_flatten(c, x, 0, axis - 1, NULL, &x));
  return pd_flatten(c, x, 1, -1, pd_out_name(c, "Out"), &o);
}

static dy_status map_squeeze(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int64_t axes[DY_MAX_DIMS], keep[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS), k = 0;
  const dy_type *t = pd_type(c, x);
  if (n <= 0 && dy_type_is_static(t)) {
    return pd_squeeze(c, x, 0, keep, pd_out_name(c, "Out"), &o);
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
    return pd_identity(c, x, "Out");
  return pd_squeeze(c, x, k, keep, pd_out_name(c, "Out"), &o);
}

static dy_status map_unsqueeze(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "AxesTensor", "axes"));
  PD_TRY(pd_no_input(c, "AxesTensorList", "axes"));
  int64_t axes[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS);
  int r = pd_type(c, x)->rank;
  /* Paddle inserts one axis at a time: a negative one counts from the
   * rank reached so far */
  for (int i = 0; i < n; i++)
    if (axes[i] < 0)
      axes[i] += r + i + 1;
  return pd_unsqueeze(c, x, n, axes, pd_out_name(c, "Out"), &o);
}

static dy_status map_concat(pd_ctx *c) {
  int n = pd_n_args(c, false, "X"), o;
  int in[64];
  PD_TRY(pd_no_input(c, "AxisTensor", "axis"));
  if (n < 1 || n > 64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%d inputs", n);
  for (int i = 0; i < n; i++)
    PD_TRY(pd_in(c, "X", i, &in[i]));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", 0));
  if (n == 1)
    return pd_identity(c, in[0], "Out");
  return pd_op(c, "concat", in, n, &a, 1, pd_out_name(c, "Out"), &o);
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
    PD_TRY(pd_unsqueeze(c, in[i], 1, &a, n == 1 ? pd_out_name(c, "Y") : NULL, &in[i]));
    axis = a;
  }
  if (n == 1)
    return DY_OK;
  dy_attr a = DY_ATTR_I("axis", axis);
  return pd_op(c, "concat", in, n, &a, 1, pd_out_name(c, "Y"), &o);
}

static dy_status map_slice(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  static const char *const tensors[] = {"StartsTensor", "EndsTensor", "StartsTensorList",
                                        "EndsTensorList"};
  for (int i = 0; i < 4; i++)
    PD_TRY(pd_no_input(c, tensors[i], "starts / ends"));
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
  PD_TRY(pd_op(c, "slice", &x, 1, a, 4, nd > 0 ? NULL : pd_out_name(c, "Out"), &o));
  if (nd > 0) {
    if (nd == pd_type(c, o)->rank) /* every dim decreased: Paddle keeps [1] */
      return pd_reshape(c, o, 1, (int64_t[]){1}, pd_out_name(c, "Out"), &o);
    PD_TRY(pd_squeeze(c, o, nd, dec, pd_out_name(c, "Out"), &o));
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
  return pd_op(c, op, &x, 1, a, 2, pd_out_name(c, "Out"), &o);
}

static dy_status map_reduce_mean(pd_ctx *c) { return map_reduce(c, "reduce_mean"); }
static dy_status map_reduce_sum(pd_ctx *c) { return map_reduce(c, "reduce_sum"); }
static dy_status map_reduce_max(pd_ctx *c) { return map_reduce(c, "reduce_max"); }
static dy_status map_reduce_min(pd_ctx *c) { return map_reduce(c, "reduce_min"); }

/* ------------------------------------------------------------------ */
/* constants, gathers                                                  */
/* ------------------------------------------------------------------ */

double pd_fill_value(pd_ctx *c) {
  char sv[64];
  pd_attr_s(c, "str_value", "", sv, sizeof sv);
  return *sv ? strtod(sv, NULL) : pd_attr_f(c, "value", 0.0);
}

static dy_status map_fill_constant(pd_ctx *c) {
  PD_TRY(pd_no_input(c, "ValueTensor", "the value"));
  PD_TRY(pd_no_input(c, "ShapeTensor", "the shape"));
  PD_TRY(pd_no_input(c, "ShapeTensorList", "the shape"));
  int64_t shape[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS);
  int pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  dy_dtype dt;
  if (n < 0 || !pd_dtype_to_dy(pdt, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "fill_constant of %s", pd_dtype_name(pdt));
  double v = pd_fill_value(c);
  int64_t numel = 0;
  PD_TRY(pd_checked_numel(c, shape, n, "fill_constant's shape", &numel));
  (void)numel; /* the check is the point: full makes the tensor */
  if (dt == DY_I64 && !(fabs(v) < 9e18))
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "value %g does not fit int64", v);
  if (dt == DY_I64)
    v = trunc(v); /* Paddle casts the value: toward zero */
  else if (dt == DY_BOOL)
    v = v != 0;
  else
    v = pd_as_f32(v);
  int o;
  dy_attr a[3] = {DY_ATTR_IS("shape", shape, n), DY_ATTR_F("value", v), DY_ATTR_I("dtype", dt)};
  return pd_op(c, "full", NULL, 0, a, 3, pd_out_name(c, "Out"), &o);
}

static dy_status map_gather(pd_ctx *c) {
  int x, idx, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Index", 0, &idx));
  PD_TRY(pd_no_input(c, "Axis", "the axis"));
  const dy_type *it = pd_type(c, idx);
  if (it->rank == 2 && it->shape[1] == 1)
    PD_TRY(pd_squeeze(c, idx, 1, (int64_t[]){1}, NULL, &idx));
  dy_attr a = DY_ATTR_I("axis", pd_attr_i(c, "axis", 0));
  return pd_op(c, "gather", (int[]){x, idx}, 2, &a, 1, pd_out_name(c, "Out"), &o);
}

/* lookup_table (ids [.., 1]) and lookup_table_v2: rows of W, a padding_idx
 * row read as zeros. */
static dy_status lookup(pd_ctx *c, bool v1) {
  int w, ids, o;
  PD_TRY(pd_in(c, "W", 0, &w));
  PD_TRY(pd_in(c, "Ids", 0, &ids));
  const dy_type *it = pd_type(c, ids);
  if (v1 && it->rank >= 2 && it->shape[it->rank - 1] == 1)
    PD_TRY(pd_squeeze(c, ids, 1, (int64_t[]){it->rank - 1}, NULL, &ids));
  int64_t pad = pd_attr_i(c, "padding_idx", -1);
  if (pad < 0 && pad != -1)
    pad += pd_type(c, w)->shape[0];
  dy_attr a = DY_ATTR_I("axis", 0);
  if (pad == -1)
    return pd_op(c, "gather", (int[]){w, ids}, 2, &a, 1, pd_out_name(c, "Out"), &o);
  int k, m, r;
  int64_t pv = pad;
  PD_TRY(pd_op(c, "gather", (int[]){w, ids}, 2, &a, 1, NULL, &o));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &pv, NULL, &k));
  PD_TRY(pd_binary(c, "equal", ids, k, NULL, &m));
  dy_attr ct = DY_ATTR_I("dtype", DY_F32);
  PD_TRY(pd_op(c, "cast", &m, 1, &ct, 1, NULL, &m));
  PD_TRY(pd_scale(c, m, -1.0, 1.0, NULL, &m));
  r = pd_type(c, m)->rank;
  PD_TRY(pd_unsqueeze(c, m, 1, (int64_t[]){r}, NULL, &m));
  return pd_binary(c, "mul", o, m, pd_out_name(c, "Out"), &o);
}

static dy_status map_lookup_table(pd_ctx *c) { return lookup(c, true); }
static dy_status map_lookup_table_v2(pd_ctx *c) { return lookup(c, false); }

/* ------------------------------------------------------------------ */
/* the tables                                                          */
/* ------------------------------------------------------------------ */

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
    {"gather", map_gather},
    {"lookup_table", map_lookup_table},
    {"lookup_table_v2", map_lookup_table_v2},
};

pd_map_fn pd_find_mapper(const char *type) {
  for (size_t i = 0; i < sizeof mappers / sizeof *mappers; i++)
    if (strcmp(mappers[i].type, type) == 0)
      return mappers[i].map;
  for (const pd_mapper *m = pd_mappers_ext; m->type; m++)
    if (strcmp(m->type, type) == 0)
      return m->map;
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
