/* grad_nn.c - gradient rules of the nn family (ops_nn.def); the
 * contract is in dy_grad.h.
 *
 *   conv2d            dx = conv2d_transpose(dy, w) with conv2d's geometry
 *                     and the output_padding that gives back x's size;
 *                     dw = conv2d_grad_filter(x, dy)
 *   conv2d_transpose  dx = conv2d(dy, w); dw = conv2d_grad_filter(dy, x)
 *                     (the transposed convolution's input plays conv2d's
 *                     output gradient)
 *   pool2d            pool2d_grad(x, y, dy) with pool2d's attributes
 *   batch_norm, layer_norm, group_norm
 *                     composite: the statistics recomputed by reduce_mean
 *                     (which counts the dynamic batch at run time), then
 *                     dx = inv * (g - mean(g) - xhat * mean(g * xhat)) with
 *                     g = dy * scale; dscale = sum(dy * xhat), dbias =
 *                     sum(dy). batch_norm at inference (is_test) is a
 *                     per-channel affine map of x, mean and variance, and
 *                     differentiates into all five; in training the
 *                     running mean and variance do not reach y (no
 *                     gradient).
 *   dropout           dx = dropout(dy) with the same attributes: the mask is
 *                     a function of the seed and the element index only, so
 *                     it is the forward's; at inference dx = dy.
 */
#include "grad_internal.h"

/* ---- convolutions ---- */

static int conv_op(dy_gb *b, dy_op_kind kind, int in0, int in1, const int64_t *strides,
                   const int64_t pads[4], const int64_t *dilations, int64_t groups,
                   const int64_t last_v[2]) {
  /* conv2d_transpose's and conv2d_grad_filter's first four attributes are
   * conv2d's; the fifth (last_v) is output_padding or ksize */
#define CONV_FIELDS                                                                   \
  .given = DY_GIVEN_ALL, .strides = strides, .n_strides = 2, .paddings = pads,        \
  .n_paddings = 4, .dilations = dilations, .n_dilations = 2, .groups = groups
  dy_attr a[DY_CONV2D_TRANSPOSE_NATTRS];
  int n;
  if (kind == DY_OP_CONV2D_TRANSPOSE)
    n = dy_conv2d_transpose_attrs_put(&(dy_conv2d_transpose_attrs){
        CONV_FIELDS, .output_padding = last_v, .n_output_padding = 2}, a);
  else if (kind == DY_OP_CONV2D_GRAD_FILTER)
    n = dy_conv2d_grad_filter_attrs_put(&(dy_conv2d_grad_filter_attrs){
        CONV_FIELDS, .ksize = last_v, .n_ksize = 2}, a);
  else
    n = dy_conv2d_attrs_put(&(dy_conv2d_attrs){CONV_FIELDS}, a);
#undef CONV_FIELDS
  return dy_gb_op(b, kind, (const int[]){in0, in1}, 2, a, n);
}

/* y = conv2d(x, w). dx: the transposed convolution of dy maps back onto
 * (oh-1)*sh - pt - pb + span + 1 rows; the rows that floor division left
 * over at the bottom (and columns at the right) are its output_padding,
 * always below the stride. Also fused_conv2d's rule (its conv2d view). */
DY_GRAD(conv2d) {
  (void)y;
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op);
  dy_type tx = b->type(b, x[0]), tw = b->type(b, x[1]);
  dy_conv_geom g = dy_conv2d_geom(&tx, &tw, &a);
  const int64_t st[2] = {g.sh, g.sw}, dil[2] = {g.dh, g.dw};
  const int64_t pads[4] = {g.pt, g.pl, g.pb, g.pr};
  if (need[0]) {
    const int64_t opad[2] = {
        g.h + g.pt + g.pb - (g.dh * (g.kh - 1) + 1) - (g.oh - 1) * g.sh,
        g.w + g.pl + g.pr - (g.dw * (g.kw - 1) + 1) - (g.ow - 1) * g.sw};
    dx[0] = conv_op(b, DY_OP_CONV2D_TRANSPOSE, dy[0], x[1], st, pads, dil, g.groups,
                    opad);
  }
  if (need[1]) {
    const int64_t ks[2] = {g.kh, g.kw};
    dx[1] = conv_op(b, DY_OP_CONV2D_GRAD_FILTER, x[0], dy[0], st, pads, dil, g.groups,
                    ks);
  }
  return dy_gb_status(b);
}

/* y = conv2d_transpose(x, w). dx = conv2d(dy, w): conv2d maps dy's
 * (h-1)*sh + oph + ... rows back onto h + floor(oph / sh) rows, so an
 * output_padding of a stride or more (allowed below the dilation) is taken
 * off the bottom padding, and what the padding cannot absorb is sliced
 * off. dw[ic][oc] pairs x's channel ic with dy's channel oc exactly as
 * conv2d_grad_filter pairs its output gradient's channel with its input's,
 * so dw = conv2d_grad_filter(dy, x). */
DY_GRAD(conv2d_transpose) {
  (void)y;
  dy_conv2d_transpose_attrs a = dy_conv2d_transpose_attrs_get(op);
  dy_type tx = b->type(b, x[0]), tw = b->type(b, x[1]);
  dy_conv_geom g = dy_conv2d_transpose_geom(&tx, &tw, &a);
  const int64_t st[2] = {g.sh, g.sw}, dil[2] = {g.dh, g.dw};
  const int64_t pads[4] = {g.pt, g.pl, g.pb, g.pr};
  if (need[0]) {
    int64_t pb = g.pb - g.oph / g.sh * g.sh, pr = g.pr - g.opw / g.sw * g.sw;
    const int64_t p2[4] = {g.pt, g.pl, pb > 0 ? pb : 0, pr > 0 ? pr : 0};
    int d = conv_op(b, DY_OP_CONV2D, dy[0], x[1], st, p2, dil, g.groups, NULL);
    if (pb < 0 || pr < 0) { /* the rows and columns past x's */
      const int64_t axes[2] = {2, 3}, starts[2] = {0, 0}, ends[2] = {g.h, g.w},
                    steps[2] = {1, 1};
      dy_attr sa[DY_SLICE_NATTRS];
      int n_sa = dy_slice_attrs_put(&(dy_slice_attrs){
          .given = DY_GIVEN_ALL, .starts = starts, .n_starts = 2, .ends = ends, .n_ends = 2,
          .axes = axes, .n_axes = 2, .steps = steps, .n_steps = 2}, sa);
      d = dy_gb_op1(b, DY_OP_SLICE, d, sa, n_sa);
    }
    dx[0] = d;
  }
  if (need[1]) {
    const int64_t ks[2] = {g.kh, g.kw};
    dx[1] = conv_op(b, DY_OP_CONV2D_GRAD_FILTER, dy[0], x[0], st, pads, dil, g.groups,
                    ks);
  }
  return dy_gb_status(b);
}

/* ---- pooling, dropout: a gradient op with the forward's attributes ---- */

DY_GRAD(pool2d) {
  if (need[0])
    dx[0] = dy_gb_op(b, DY_OP_POOL2D_GRAD, (const int[]){x[0], y[0], dy[0]}, 3, op->attrs,
                     op->n_attrs);
  return dy_gb_status(b);
}

DY_GRAD(dropout) {
  (void)x;
  (void)y;
  if (need[0])
    dx[0] = dy_dropout_attrs_get(op).is_test
                ? dy[0]
                : dy_gb_op1(b, DY_OP_DROPOUT, dy[0], op->attrs, op->n_attrs);
  return dy_gb_status(b);
}

/* ---- normalisations ---- */

static int reshape(dy_gb *b, int v, const int64_t *shape, int rank) {
  dy_attr a[DY_RESHAPE_NATTRS];
  int n_a = dy_reshape_attrs_put(&(dy_reshape_attrs){
      .given = DY_GIVEN_ALL, .shape = shape, .n_shape = rank}, a);
  return dy_gb_op1(b, DY_OP_RESHAPE, v, a, n_a);
}

/* The mean over axes, kept as 1s. */
static int mean_keep(dy_gb *b, int v, const int64_t *axes, int n) {
  dy_attr a[DY_REDUCE_MEAN_NATTRS];
  int n_a = dy_reduce_mean_attrs_put(&(dy_reduce_mean_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n, .keepdim = 1}, a);
  return dy_gb_op1(b, DY_OP_REDUCE_MEAN, v, a, n_a);
}

/* The forward's normalisation over axes: *inv = 1 / sqrt(biased variance
 * + eps), *xhat = (x - mean) * inv. */
static void normalize(dy_gb *b, int v, const int64_t *axes, int n, double eps, int *xhat,
                      int *inv) {
  int xc = dy_gb_sub(b, v, mean_keep(b, v, axes, n));
  int var = mean_keep(b, dy_gb_mul(b, xc, xc), axes, n);
  *inv = dy_gb_op1(b, DY_OP_RSQRT, dy_gb_scale(b, var, 1.0, eps), NULL, 0);
  *xhat = dy_gb_mul(b, xc, *inv);
}

/* The gradient through xhat = (x - mean) * inv with g = dL/dxhat:
 * inv * (g - mean(g) - xhat * mean(g * xhat)). */
static int normalize_dx(dy_gb *b, int g, int xhat, int inv, const int64_t *axes, int n) {
  int centered = dy_gb_sub(b, g, mean_keep(b, g, axes, n));
  int proj = dy_gb_mul(b, xhat, mean_keep(b, dy_gb_mul(b, g, xhat), axes, n));
  int t = dy_gb_sub(b, centered, proj);
  return dy_gb_mul(b, inv, t);
}

/* Axes 0 and 2.. of a rank r tensor (everything but the channels) into
 * axes, and the shape [1, c, 1, ...] of a per-channel vector into cshape;
 * returns the number of axes. */
static int channel_axes(int r, int64_t c, int64_t *axes, int64_t *cshape) {
  int n = 0;
  for (int d = 0; d < r; d++) {
    cshape[d] = d == 1 ? c : 1;
    if (d != 1)
      axes[n++] = d;
  }
  return n;
}

DY_GRAD(batch_norm) {
  (void)y;
  dy_batch_norm_attrs a = dy_batch_norm_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int64_t axes[DY_MAX_DIMS], cs[DY_MAX_DIMS];
  int n = channel_axes(tx.rank, tx.shape[1], axes, cs);
  int scale_b = reshape(b, x[1], cs, tx.rank);
  int sum_dy = need[2] || (a.is_test && need[3]) ? dy_gb_reduce_sum(b, dy[0], axes, n, false)
                                                : -1;
  if (need[2])
    dx[2] = sum_dy;
  if (a.is_test) {
    /* y = (x - mean) * inv * scale + bias, inv = 1 / sqrt(var + eps) */
    int inv = dy_gb_op1(b, DY_OP_RSQRT, dy_gb_scale(b, x[4], 1.0, a.epsilon), NULL, 0);
    if (need[0])
      dx[0] = dy_gb_mul(b, dy[0], reshape(b, dy_gb_mul(b, x[1], inv), cs, tx.rank));
    int s2 = need[1] || need[4]
                 ? dy_gb_reduce_sum(
                       b, dy_gb_mul(b, dy[0], dy_gb_sub(b, x[0], reshape(b, x[3], cs, tx.rank))),
                       axes, n, false)
                 : -1;
    if (need[1])
      dx[1] = dy_gb_mul(b, s2, inv);
    if (need[3])
      dx[3] = dy_gb_neg(b, dy_gb_mul(b, sum_dy, dy_gb_mul(b, x[1], inv)));
    if (need[4]) { /* d inv / d var = -inv^3 / 2 */
      int minus_half_s2x = dy_gb_scale(b, dy_gb_mul(b, s2, x[1]), -0.5, 0.0);
      dx[4] = dy_gb_mul(b, minus_half_s2x, dy_gb_mul(b, inv, dy_gb_mul(b, inv, inv)));
    }
    return dy_gb_status(b);
  }
  int xhat, inv;
  normalize(b, x[0], axes, n, a.epsilon, &xhat, &inv);
  if (need[0])
    dx[0] = normalize_dx(b, dy_gb_mul(b, dy[0], scale_b), xhat, inv, axes, n);
  if (need[1])
    dx[1] = dy_gb_reduce_sum(b, dy_gb_mul(b, dy[0], xhat), axes, n, false);
  return dy_gb_status(b); /* the running mean and variance: no gradient */
}

DY_GRAD(layer_norm) {
  (void)y;
  dy_layer_norm_attrs a = dy_layer_norm_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int ax = (int)(a.begin_norm_axis < 0 ? a.begin_norm_axis + tx.rank : a.begin_norm_axis);
  int64_t axes[DY_MAX_DIMS], rows[DY_MAX_DIMS];
  int n = 0, nr = 0;
  for (int d = 0; d < tx.rank; d++) {
    if (d >= ax)
      axes[n++] = d;
    else
      rows[nr++] = d;
  }
  /* scale and bias in the normalised dims' shape broadcast over the rows */
  int scale_b = reshape(b, x[1], tx.shape + ax, tx.rank - ax);
  int xhat, inv;
  normalize(b, x[0], axes, n, a.epsilon, &xhat, &inv);
  if (need[0])
    dx[0] = normalize_dx(b, dy_gb_mul(b, dy[0], scale_b), xhat, inv, axes, n);
  for (int i = 1; i < 3; i++)
    if (need[i]) {
      int g = i == 1 ? dy_gb_mul(b, dy[0], xhat) : dy[0];
      dx[i] = dy_gb_reshape_as(b, nr ? dy_gb_reduce_sum(b, g, rows, nr, false) : g, x[i]);
    }
  return dy_gb_status(b);
}

/* group_norm normalises x viewed as [N, groups, C/groups * spatial]. */
DY_GRAD(group_norm) {
  (void)y;
  dy_group_norm_attrs a = dy_group_norm_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int64_t axes[DY_MAX_DIMS], cs[DY_MAX_DIMS];
  int n = channel_axes(tx.rank, tx.shape[1], axes, cs);
  int64_t len = 1;
  for (int d = 1; d < tx.rank; d++)
    len *= tx.shape[d];
  const int64_t grouped[3] = {0, a.groups, len / a.groups}, last = 2;
  int xhat, inv;
  normalize(b, reshape(b, x[0], grouped, 3), &last, 1, a.epsilon, &xhat, &inv);
  if (need[0]) {
    int g = reshape(b, dy_gb_mul(b, dy[0], reshape(b, x[1], cs, tx.rank)), grouped, 3);
    dx[0] = dy_gb_reshape_as(b, normalize_dx(b, g, xhat, inv, &last, 1), x[0]);
  }
  if (need[1])
    dx[1] = dy_gb_reduce_sum(b, dy_gb_mul(b, dy[0], dy_gb_reshape_as(b, xhat, x[0])), axes,
                             n, false);
  if (need[2])
    dx[2] = dy_gb_reduce_sum(b, dy[0], axes, n, false);
  return dy_gb_status(b);
}
