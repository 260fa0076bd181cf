/* onnx_nn.c - ONNX's convolution, pooling and normalisation onto the op
 * table.
 *
 * 1-D and 2-D windows map onto the nn family's native ops (a 1-D operand
 * is unsqueezed to [N, C, 1, L] and back), which the passes then fuse
 * (conv + bias + batch norm + activation -> one fused_conv2d):
 *   Conv           conv2d, the bias an add
 *   ConvTranspose  conv2d_transpose (output_shape / SAME pads resolved here
 *                  as the ONNX reference does)
 *   MaxPool, AveragePool   pool2d, when it computes the same thing
 *   BatchNormalization     batch_norm (inference)
 * Everything else is composed from the primitive ops, with N spatial dims:
 *   Conv           im2col by strided slices of the padded input (one per
 *                  kernel offset), then one matmul per group
 *   ConvTranspose  that convolution of the zero-upsampled, padded input
 *                  with the flipped, transposed kernel
 *   MaxPool        maximum over strided slices of the padded input
 *                  (padding -FLT_MAX), one spatial dim at a time (the
 *                  window is separable); its Indices output an argmax over
 *                  the stacked slices of every window offset
 *   AveragePool    sum over the slices (separable too) divided by a constant
 *                  count tensor
 *                  (computed here, so count_include_pad and ceil_mode are
 *                  exact at the borders)
 *   MaxUnpool      a scatter into the flattened output
 *   BatchNorm      x * a + b with a = scale / sqrt(var + eps), b = B - mean a
 *                  (constants fold to two per-channel vectors); training
 *                  mode from the batch's statistics
 *   Instance/Layer/MeanVariance normalisation, LRN
 * Attribute lists with defaults are quoted above each mapper.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* v (rank 1, length C) reshaped to [C, 1, ..., 1] for broadcasting against
 * [N, C, spatial...] of rank r. */
static ox_value *per_channel(ox_ctx *c, ox_value *v, int r) {
  if (!v)
    return NULL;
  int64_t shape[DY_MAX_DIMS];
  shape[0] = v->type.rank == 1 ? v->type.shape[0] : -1;
  for (int i = 1; i < r - 1; i++)
    shape[i] = 1;
  return ox_reshape(c, v, r - 1, shape);
}

/* ------------------------------------------------------------------ */
/* window geometry shared by Conv and the pools                        */
/* ------------------------------------------------------------------ */

typedef struct {
  int n;                          /* spatial dims                       */
  int64_t in[DY_MAX_DIMS];        /* input extents                      */
  int64_t k[DY_MAX_DIMS];         /* kernel                             */
  int64_t s[DY_MAX_DIMS];         /* strides                            */
  int64_t d[DY_MAX_DIMS];         /* dilations                          */
  int64_t pb[DY_MAX_DIMS];        /* pads at the beginning              */
  int64_t pe[DY_MAX_DIMS];        /* pads at the end (incl. ceil extra) */
  int64_t pe_decl[DY_MAX_DIMS];   /* the declared end pads              */
  int64_t out[DY_MAX_DIMS];       /* output extents                     */
} window;

/* Read kernel_shape (or kernel dims from W), strides, dilations, pads,
 * auto_pad, ceil_mode; compute the output extents. */
static dy_status window_setup(ox_ctx *c, const dy_type *x, const int64_t *kernel,
                              bool ceil_mode, window *w) {
  w->n = x->rank - 2;
  if (w->n < 1 || w->n > DY_MAX_DIMS - 3)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "input rank %d", x->rank);
  int nk, ns, nd, np;
  const int64_t *ks = ox_attr_ints(c, "kernel_shape", &nk);
  const int64_t *st = ox_attr_ints(c, "strides", &ns);
  const int64_t *dl = ox_attr_ints(c, "dilations", &nd);
  const int64_t *pd = ox_attr_ints(c, "pads", &np);
  if ((ks && nk != w->n) || (st && ns != w->n) || (dl && nd != w->n) ||
      (pd && np != 2 * w->n))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "kernel_shape/strides/dilations/pads "
                   "do not match %d spatial dims", w->n);
  if (!ks && !kernel)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "no kernel_shape");
  char autopad[32];
  ox_attr_s(c, "auto_pad", "NOTSET", autopad, sizeof autopad);
  for (int i = 0; i < w->n; i++) {
    w->in[i] = x->shape[2 + i];
    if (w->in[i] < 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic spatial dim");
    w->k[i] = ks ? ks[i] : kernel[i];
    w->s[i] = st ? st[i] : 1;
    w->d[i] = dl ? dl[i] : 1;
    w->pb[i] = pd ? pd[i] : 0;
    w->pe[i] = pd ? pd[w->n + i] : 0;
    if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->pb[i] < 0 || w->pe[i] < 0)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "bad kernel, stride, dilation or pad");
    int64_t span = (w->k[i] - 1) * w->d[i] + 1;
    if (strcmp(autopad, "SAME_UPPER") == 0 || strcmp(autopad, "SAME_LOWER") == 0) {
      int64_t o = (w->in[i] + w->s[i] - 1) / w->s[i];
      int64_t total = (o - 1) * w->s[i] + span - w->in[i];
      if (total < 0)
        total = 0;
      w->pb[i] = autopad[5] == 'U' ? total / 2 : total - total / 2;
      w->pe[i] = total - w->pb[i];
    } else if (strcmp(autopad, "VALID") == 0) {
      w->pb[i] = w->pe[i] = 0;
    } else if (strcmp(autopad, "NOTSET") != 0) {
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "auto_pad '%s'", autopad);
    }
    int64_t avail = w->in[i] + w->pb[i] + w->pe[i] - span;
    if (avail < 0)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the kernel is larger than the input");
    w->out[i] = (ceil_mode ? (avail + w->s[i] - 1) / w->s[i] : avail / w->s[i]) + 1;
    /* ceil mode: the last window must start inside the input or its
     * leading pad */
    if (ceil_mode && (w->out[i] - 1) * w->s[i] >= w->in[i] + w->pb[i])
      w->out[i]--;
    w->pe_decl[i] = w->pe[i];
    int64_t need = (w->out[i] - 1) * w->s[i] + span - (w->in[i] + w->pb[i]);
    if (need > w->pe[i])
      w->pe[i] = need;
  }
  return DY_OK;
}

/* The strided slices of padded xp, one per kernel offset (row-major over
 * the kernel): each [N, C, out...]. Returns the count, 0 on error. */
static int window_slices(ox_ctx *c, ox_value *xp, const window *w, ox_value **sl,
                         int cap) {
  int64_t total = 1;
  for (int i = 0; i < w->n; i++)
    total *= w->k[i];
  if (total > cap) {
    ox_fail(c, DY_STATUS_UNSUPPORTED, "a kernel of %lld elements (at most %d)",
            (long long)total, cap);
    return 0;
  }
  for (int64_t t = 0; t < total; t++) {
    int64_t st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], sp[DY_MAX_DIMS];
    int64_t rem = t;
    for (int i = w->n - 1; i >= 0; i--) {
      int64_t ki = rem % w->k[i];
      rem /= w->k[i];
      st[i] = ki * w->d[i];
      en[i] = st[i] + (w->out[i] - 1) * w->s[i] + 1;
      ax[i] = 2 + i;
      sp[i] = w->s[i];
    }
    sl[t] = ox_slice(c, xp, w->n, st, en, ax, sp);
    if (!sl[t])
      return 0;
  }
  return (int)total;
}

static ox_value *pad_spatial(ox_ctx *c, ox_value *x, const window *w, float value) {
  int64_t pads[2 * DY_MAX_DIMS] = {0};
  int r = x->type.rank;
  for (int i = 0; i < w->n; i++) {
    pads[2 + i] = w->pb[i];
    pads[r + 2 + i] = w->pe[i];
  }
  return ox_pad(c, x, pads, "constant", value);
}

#define MAX_KERNEL 512

/* ------------------------------------------------------------------ */
/* Conv, ConvTranspose                                                 */
/* ------------------------------------------------------------------ */

/* The composite convolution of x by wt (no bias) over the window w: im2col
 * by strided slices of the padded input, one matmul per group. */
static ox_value *conv_composite(ox_ctx *c, ox_value *x, ox_value *wt, const window *w,
                                int64_t g) {
  if (!x || !wt)
    return NULL;
  int r = x->type.rank;
  int64_t C = x->type.shape[1], M = wt->type.shape[0];
  ox_value *sl[MAX_KERNEL];
  ox_value *xp = pad_spatial(c, x, w, 0.0f);
  int kk = xp ? window_slices(c, xp, w, sl, MAX_KERNEL) : 0;
  if (!kk)
    return NULL;
  /* cols [N, C*kk, P]: stack the slices after the channel axis */
  int64_t P = 1;
  for (int i = 0; i < w->n; i++)
    P *= w->out[i];
  for (int t = 0; t < kk; t++)
    sl[t] = ox_unsqueeze(c, sl[t], 1, (int64_t[]){2});
  ox_value *cols = ox_concat_many(c, sl, kk, 2);
  cols = ox_reshape(c, cols, 3, (int64_t[]){0, C * kk, P});
  ox_value *wm = ox_reshape(c, wt, 2, (int64_t[]){M, C / g * kk});
  ox_value *parts[64];
  if (g > 64) {
    ox_fail(c, DY_STATUS_UNSUPPORTED, "more than 64 groups");
    return NULL;
  }
  for (int64_t gi = 0; gi < g; gi++) {
    ox_value *cg = cols, *wg = wm;
    if (g > 1) {
      int64_t s0 = gi * (C / g) * kk, e0 = s0 + (C / g) * kk, a1 = 1;
      int64_t s1 = gi * (M / g), e1 = s1 + M / g, a0 = 0;
      cg = ox_slice(c, cols, 1, &s0, &e0, &a1, NULL);
      wg = ox_slice(c, wm, 1, &s1, &e1, &a0, NULL);
    }
    ox_value *in[2] = {wg, cg};
    dy_attr at[DY_MATMUL_NATTRS];
    int n_at = dy_matmul_attrs_put(&(dy_matmul_attrs){
        .given = DY_GIVEN_ALL, .transpose_x = 0, .transpose_y = 0}, at);
    parts[gi] = wg && cg ? ox_op(c, "matmul", in, 2, at, n_at) : NULL;
  }
  ox_value *y = ox_concat_many(c, parts, (int)g, 1);
  int64_t shape[DY_MAX_DIMS] = {0, M};
  for (int i = 0; i < w->n; i++)
    shape[2 + i] = w->out[i];
  return ox_reshape(c, y, r, shape);
}

/* A 1-D operand [N, C, L] as the 2-D [N, C, 1, L] of the native ops. */
static ox_value *as_2d(ox_ctx *c, ox_value *v) {
  return ox_unsqueeze(c, v, 1, (int64_t[]){2});
}

/* The native 2-D attribute pairs of window w (1-D: the height is 1). */
static void pairs_2d(const window *w, int64_t k[2], int64_t s[2], int64_t d[2],
                     int64_t pads[4]) {
  int o = w->n == 1 ? 1 : 0; /* 1-D: the one dim is the width */
  k[0] = s[0] = d[0] = 1;
  pads[0] = pads[2] = 0;
  for (int i = 0; i < w->n; i++) {
    k[o + i] = w->k[i];
    s[o + i] = w->s[i];
    d[o + i] = w->d[i];
    pads[o + i] = w->pb[i];
    pads[2 + o + i] = w->pe[i];
  }
}

/* Conv(X, W, B) attributes: auto_pad ("NOTSET"), dilations (1s), group
 * (1), kernel_shape (from W), pads (0s), strides (1s). 1-D and 2-D map
 * onto conv2d (the bias an add the fusion pass folds in); 3-D and wider
 * are the composite. */
/* Conv's geometry (and ConvInteger's, QLinearConv's): x [N, C, ...] and
 * W [M, C/group, k...] of one rank, the window and the group. */
static dy_status conv_window(ox_ctx *c, ox_value *x, ox_value *wt, window *w, int64_t *group) {
  int r = x->type.rank;
  if (wt->type.rank != r || !dy_type_is_static(&wt->type))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "W must have the input's rank");
  TRY(window_setup(c, &x->type, wt->type.shape + 2, false, w));
  int64_t g = ox_attr_i(c, "group", 1), C = x->type.shape[1], M = wt->type.shape[0];
  if (g < 1 || C < 0 || C % g || M % g || wt->type.shape[1] != C / g)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "channels %lld, group %lld and W %lld x %lld "
                   "do not agree", (long long)C, (long long)g, (long long)M,
                   (long long)wt->type.shape[1]);
  for (int i = 0; i < w->n; i++)
    if (wt->type.shape[2 + i] != w->k[i])
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "kernel_shape disagrees with W");
  *group = g;
  return DY_OK;
}

static dy_status map_conv(ox_ctx *c) {
  ox_value *x, *wt, *b = ox_in(c, 2);
  TRY(ox_check_attrs(c, "auto_pad dilations group kernel_shape pads strides"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &wt));
  TRY(ox_need_f32(c, x));
  int r = x->type.rank;
  window w;
  int64_t g = 1; /* set by conv_window */
  TRY(conv_window(c, x, wt, &w, &g));
  ox_value *y;
  if (w.n <= 2) {
    int64_t k[2], s[2], d[2], pads[4];
    pairs_2d(&w, k, s, d, pads);
    ox_value *in[2] = {w.n == 1 ? as_2d(c, x) : x, w.n == 1 ? as_2d(c, wt) : wt};
    dy_attr a[DY_CONV2D_NATTRS];
    int n_a = dy_conv2d_attrs_put(&(dy_conv2d_attrs){
        .given = DY_GIVEN_ALL, .strides = s, .n_strides = 2, .paddings = pads, .n_paddings = 4,
        .dilations = d, .n_dilations = 2, .groups = g}, a);
    y = in[0] && in[1] ? ox_op(c, "conv2d", in, 2, a, n_a) : NULL;
    if (b)
      y = ox_binary(c, "add", y, per_channel(c, b, 4));
    if (w.n == 1)
      y = ox_squeeze(c, y, 1, (int64_t[]){2});
  } else {
    y = conv_composite(c, x, wt, &w, g);
    if (b)
      y = ox_binary(c, "add", y, per_channel(c, b, r));
  }
  OUT(0, y);
}

/* Python's floor division, for the ConvTranspose pad split. */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ConvTranspose(X, W, B) attributes: auto_pad ("NOTSET"), dilations,
 * group (1), kernel_shape (from W), output_padding (0s), output_shape,
 * pads (0s), strides (1s). W is [C, M/group, k...]. output_shape or
 * SAME auto_pad fix the pads as the ONNX reference does (a negative end
 * pad grows the output: output_padding). 1-D and 2-D map onto
 * conv2d_transpose; wider ones are a convolution of the zero-upsampled,
 * padded input with the flipped, transposed kernel. */
static dy_status map_conv_transpose(ox_ctx *c) {
  ox_value *x, *wt, *b = ox_in(c, 2);
  TRY(ox_check_attrs(c, "auto_pad dilations group kernel_shape output_padding "
                        "output_shape pads strides"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &wt));
  TRY(ox_need_f32(c, x));
  int r = x->type.rank, n = r - 2;
  if (n < 1 || n > DY_MAX_DIMS - 3 || wt->type.rank != r || !dy_type_is_static(&wt->type))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "X and W must be [N, C, spatial...] alike");
  int64_t g = ox_attr_i(c, "group", 1), C = x->type.shape[1], M = wt->type.shape[1] * g;
  if (g < 1 || C < 0 || C % g || wt->type.shape[0] != C)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "channels %lld, group %lld and W do not "
                   "agree", (long long)C, (long long)g);
  int nk, ns, nd, np, nop, nos;
  const int64_t *ks = ox_attr_ints(c, "kernel_shape", &nk);
  const int64_t *st = ox_attr_ints(c, "strides", &ns);
  const int64_t *dl = ox_attr_ints(c, "dilations", &nd);
  const int64_t *pd = ox_attr_ints(c, "pads", &np);
  const int64_t *op = ox_attr_ints(c, "output_padding", &nop);
  const int64_t *os = ox_attr_ints(c, "output_shape", &nos);
  if ((ks && nk != n) || (st && ns != n) || (dl && nd != n) || (pd && np != 2 * n) ||
      (op && nop != n) || (os && nos != n))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "attribute lengths do not match %d "
                   "spatial dims", n);
  char autopad[32];
  ox_attr_s(c, "auto_pad", "NOTSET", autopad, sizeof autopad);
  bool same = strcmp(autopad, "SAME_UPPER") == 0 || strcmp(autopad, "SAME_LOWER") == 0;
  if (!same && strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "auto_pad '%s'", autopad);
  int64_t k[DY_MAX_DIMS], s[DY_MAX_DIMS], d[DY_MAX_DIMS], pb[DY_MAX_DIMS], pe[DY_MAX_DIMS];
  int64_t opad[DY_MAX_DIMS], in[DY_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    in[i] = x->type.shape[2 + i];
    k[i] = wt->type.shape[2 + i];
    s[i] = st ? st[i] : 1;
    d[i] = dl ? dl[i] : 1;
    opad[i] = op ? op[i] : 0;
    pb[i] = pd && strcmp(autopad, "VALID") ? pd[i] : 0;
    pe[i] = pd && strcmp(autopad, "VALID") ? pd[n + i] : 0;
    if (in[i] < 1 || (ks && ks[i] != k[i]) || s[i] < 1 || d[i] < 1 || opad[i] < 0)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "bad extent, kernel, stride, dilation "
                     "or output_padding");
    if (os || same) {
      int64_t out = os ? os[i] : in[i] * s[i];
      int64_t total = s[i] * (in[i] - 1) + opad[i] + (k[i] - 1) * d[i] + 1 - out;
      bool upper = strcmp(autopad, "SAME_UPPER") == 0;
      pb[i] = upper ? floor_div(total, 2) : total - floor_div(total, 2);
      pe[i] = upper ? total - floor_div(total, 2) : floor_div(total, 2);
    }
    if (pe[i] < 0) { /* the output extends past the last tap: zeros */
      opad[i] -= pe[i];
      pe[i] = 0;
    }
    if (pb[i] < 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "a negative begin pad");
  }
  ox_value *y;
  if (n <= 2) {
    int64_t s2[2] = {1, 1}, d2[2] = {1, 1}, p4[4] = {0, 0, 0, 0}, o2[2] = {0, 0};
    int o = n == 1 ? 1 : 0;
    for (int i = 0; i < n; i++) {
      s2[o + i] = s[i];
      d2[o + i] = d[i];
      p4[o + i] = pb[i];
      p4[2 + o + i] = pe[i];
      o2[o + i] = opad[i];
    }
    ox_value *in2[2] = {n == 1 ? as_2d(c, x) : x, n == 1 ? as_2d(c, wt) : wt};
    dy_attr a[DY_CONV2D_TRANSPOSE_NATTRS];
    int n_a = dy_conv2d_transpose_attrs_put(&(dy_conv2d_transpose_attrs){
        .given = DY_GIVEN_ALL, .strides = s2, .n_strides = 2, .paddings = p4, .n_paddings = 4,
        .dilations = d2, .n_dilations = 2, .groups = g,
        .output_padding = o2, .n_output_padding = 2}, a);
    y = in2[0] && in2[1] ? ox_op(c, "conv2d_transpose", in2, 2, a, n_a) : NULL;
    if (b)
      y = ox_binary(c, "add", y, per_channel(c, b, 4));
    if (n == 1)
      y = ox_squeeze(c, y, 1, (int64_t[]){2});
    OUT(0, y);
  }
  /* zero-upsample each spatial axis by its stride */
  ox_value *v = x;
  for (int i = 0; i < n && v; i++) {
    if (s[i] == 1)
      continue;
    int ax = 2 + i, vr = v->type.rank;
    int64_t pads[2 * DY_MAX_DIMS] = {0}, shape[DY_MAX_DIMS];
    /* [.., in, ..] -> [.., in, 1, ..] -> [.., in, s, ..] -> [.., in * s, ..] */
    v = ox_unsqueeze(c, v, 1, (int64_t[]){ax + 1});
    pads[(vr + 1) + ax + 1] = s[i] - 1;
    v = ox_pad(c, v, pads, "constant", 0.0f);
    for (int j = 0; j < vr && v; j++)
      shape[j] = j == 0 ? 0 : j < ax ? v->type.shape[j] : j == ax ? in[i] * s[i]
                                                       : v->type.shape[j + 1];
    v = ox_reshape(c, v, vr, shape);
    int64_t z = 0, e = (in[i] - 1) * s[i] + 1, a64 = ax;
    v = ox_slice(c, v, 1, &z, &e, &a64, NULL);
  }
  /* the kernel: [C, M/g, k...] -> [M, C/g, k...], flipped */
  int64_t sh[DY_MAX_DIMS + 1], perm[DY_MAX_DIMS + 1];
  sh[0] = g, sh[1] = C / g, sh[2] = M / g;
  perm[0] = 0, perm[1] = 2, perm[2] = 1;
  for (int i = 0; i < n; i++) {
    sh[3 + i] = k[i];
    perm[3 + i] = 3 + i;
  }
  ox_value *wk = ox_transpose(c, ox_reshape(c, wt, r + 1, sh), r + 1, perm);
  int64_t sh2[DY_MAX_DIMS] = {M, C / g};
  for (int i = 0; i < n; i++)
    sh2[2 + i] = k[i];
  wk = ox_reshape(c, wk, r, sh2);
  int64_t fs[DY_MAX_DIMS], fe[DY_MAX_DIMS], fa[DY_MAX_DIMS], fp[DY_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    fs[i] = -1, fe[i] = INT64_MIN, fa[i] = 2 + i, fp[i] = -1;
  }
  wk = ox_slice(c, wk, n, fs, fe, fa, fp);
  /* a stride-1 convolution with pads (k-1)d - pb before, (k-1)d - pe + opad after */
  window w = {.n = n};
  for (int i = 0; i < n; i++) {
    w.in[i] = (in[i] - 1) * s[i] + 1;
    w.k[i] = k[i];
    w.s[i] = 1;
    w.d[i] = d[i];
    w.pb[i] = (k[i] - 1) * d[i] - pb[i];
    w.pe[i] = w.pe_decl[i] = (k[i] - 1) * d[i] - pe[i] + opad[i];
    if (w.pb[i] < 0 || w.pe[i] < 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "pads larger than the dilated kernel");
    w.out[i] = w.in[i] + w.pb[i] + w.pe[i] - (k[i] - 1) * d[i];
  }
  y = conv_composite(c, v, wk, &w, g);
  if (b)
    y = ox_binary(c, "add", y, per_channel(c, b, r));
  OUT(0, y);
}

/* ------------------------------------------------------------------ */
/* pooling                                                             */
/* ------------------------------------------------------------------ */

/* The maximum (or sum) over the windows w of padded xp, one spatial dim at
 * a time: both are separable, so a k1 x k2 window costs k1 + k2 strided
 * slices, not k1 * k2 (a 60 x 80 dilated MaxPool: 140 slices, where the
 * window's 4,800 offsets would each be one), and no dim's kernel is
 * capped (the op budget bounds them all). */
static ox_value *pool_separable(ox_ctx *c, ox_value *xp, const window *w, bool max) {
  ox_value *v = xp;
  for (int i = 0; i < w->n && v; i++) {
    ox_value *acc = NULL;
    for (int64_t ki = 0; ki < w->k[i] && v; ki++) {
      int64_t st = ki * w->d[i], en = st + (w->out[i] - 1) * w->s[i] + 1, ax = 2 + i;
      ox_value *sl = ox_slice(c, v, 1, &st, &en, &ax, &w->s[i]);
      acc = !sl ? NULL : acc ? ox_binary(c, max ? "maximum" : "add", acc, sl) : sl;
      if (!acc)
        return NULL;
    }
    v = acc;
  }
  return v;
}

/* MaxPool's Indices: the flat index (C order over N, C and the spatial
 * dims; storage_order 1 makes the spatial part column-major) of each
 * window's first maximum. The windows are stacked on a new last axis,
 * argmax picks the kernel offset t, and constant tables turn (output
 * position, t) into the input position. */
static ox_value *pool_indices(ox_ctx *c, ox_value *x, ox_value **sl, int kk,
                              const window *w, bool col_major) {
  int r = x->type.rank;
  if (x->type.shape[0] < 0 || r + 1 > DY_MAX_DIMS) {
    ox_fail(c, DY_STATUS_UNSUPPORTED, "the Indices output needs a static batch");
    return NULL;
  }
  ox_value *st[MAX_KERNEL];
  for (int t = 0; t < kk; t++)
    st[t] = ox_unsqueeze(c, sl[t], 1, (int64_t[]){r});
  ox_value *stack = ox_concat_many(c, st, kk, r);
  dy_attr a[DY_ARGMAX_NATTRS];
  int n_a = dy_argmax_attrs_put(&(dy_argmax_attrs){
      .given = DY_GIVEN_ALL, .axis = r, .keepdim = 0}, a);
  ox_value *t = stack ? ox_op(c, "argmax", &stack, 1, a, n_a) : NULL;
  /* position of (output p, offset t) along spatial axis i: p*s - pb + ki*d;
   * one table per axis [K] (ki of t) and the output coordinate as iota */
  int64_t K = kk, strides[DY_MAX_DIMS], acc = 1;
  for (int i = w->n - 1; i >= 0; i--) {
    strides[i] = acc;
    acc *= w->in[i];
  }
  if (col_major) {
    acc = 1;
    for (int i = 0; i < w->n; i++) {
      strides[i] = acc;
      acc *= w->in[i];
    }
  }
  ox_value *idx = NULL;
  for (int i = 0; i < w->n; i++) {
    ox_value *tab = ox_new_const(c, DY_I64, 1, &K, NULL);
    if (!tab)
      return NULL;
    for (int64_t q = 0; q < K; q++) {
      int64_t rem = q, ki = 0;
      for (int j = w->n - 1; j >= 0; j--) {
        if (j == i)
          ki = rem % w->k[j];
        rem /= w->k[j];
      }
      ((int64_t *)tab->c->data)[q] = ki * w->d[i];
    }
    dy_attr g[DY_GATHER_NATTRS];
    int n_g = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = 0}, g);
    ox_value *gin[2] = {tab, t};
    ox_value *off = t ? ox_op(c, "gather", gin, 2, g, n_g) : NULL;
    ox_value *o = ox_iota(c, w->out[i], r, 2 + i);
    ox_value *pos = ox_binary(c, "add", off, ox_binary(c, "sub", ox_binary(c, "mul", o,
                              ox_const_i64(c, w->s[i])), ox_const_i64(c, w->pb[i])));
    pos = ox_binary(c, "mul", pos, ox_const_i64(c, strides[i]));
    idx = idx ? ox_binary(c, "add", idx, pos) : pos;
  }
  /* plus (n * C + c) * plane */
  int64_t NC = x->type.shape[0] * x->type.shape[1];
  int64_t shape[DY_MAX_DIMS];
  for (int i = 0; i < r; i++)
    shape[i] = i < 2 ? x->type.shape[i] : 1;
  ox_value *base = ox_new_const(c, DY_I64, r, shape, NULL);
  if (!base)
    return NULL;
  for (int64_t q = 0; q < NC; q++)
    ((int64_t *)base->c->data)[q] = q * acc;
  return ox_binary(c, "add", idx, base);
}

/* MaxPool(X) -> Y, Indices; attributes: auto_pad, ceil_mode (0),
 * dilations, kernel_shape, pads, storage_order (0), strides.
 * AveragePool(X): auto_pad, ceil_mode (0), count_include_pad (0),
 * kernel_shape, pads, strides. 1-D and 2-D windows map onto pool2d when it
 * computes the same thing (no dilations, pads below the kernel, no
 * Indices); otherwise the composite: a maximum (or a sum divided by a
 * constant count tensor, so count_include_pad and ceil_mode are exact at
 * the borders) over the strided slices of the padded input. */
static dy_status pool(ox_ctx *c, bool max) {
  ox_value *x;
  TRY(ox_check_attrs(c, max ? "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"
                            : "auto_pad ceil_mode count_include_pad kernel_shape pads strides"));
  TRY(ox_need_in(c, 0, &x));
  bool q8 = x->type.dtype == DY_I8 || x->type.dtype == DY_U8; /* native pool2d only */
  if (!q8)
    TRY(ox_need_f32(c, x));
  bool want_idx = max && ox_out_wanted(c, 1);
  bool ceil_mode = ox_attr_i(c, "ceil_mode", 0) != 0;
  bool include_pad = ox_attr_i(c, "count_include_pad", 0) != 0;
  window w;
  TRY(window_setup(c, &x->type, NULL, ceil_mode, &w));
  bool native = w.n <= 2 && !want_idx;
  for (int i = 0; i < w.n; i++)
    native &= w.d[i] == 1 && w.pb[i] < w.k[i] && w.pe_decl[i] < w.k[i];
  if (native) {
    int64_t k[2], s[2], d[2], pads[4];
    window decl = w;
    for (int i = 0; i < w.n; i++)
      decl.pe[i] = w.pe_decl[i];
    pairs_2d(&decl, k, s, d, pads);
    ox_value *v = w.n == 1 ? as_2d(c, x) : x;
    dy_attr a[DY_POOL2D_NATTRS];
    int n_a = dy_pool2d_attrs_put(&(dy_pool2d_attrs){
        .given = DY_GIVEN_ALL, .pooling_type = max ? "max" : "avg", .ksize = k, .n_ksize = 2,
        .strides = s, .n_strides = 2, .paddings = pads, .n_paddings = 4, .ceil_mode = ceil_mode,
        .exclusive = !include_pad, .global_pooling = 0, .adaptive = 0}, a);
    ox_value *y = v ? ox_op(c, "pool2d", &v, 1, a, n_a) : NULL;
    OUT(0, w.n == 1 ? ox_squeeze(c, y, 1, (int64_t[]){2}) : y);
  }
  if (q8)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s pooling of %s with this window needs float32",
                   max ? "max" : "average", dy_dtype_name(x->type.dtype));
  ox_value *sl[MAX_KERNEL];
  ox_value *xp = pad_spatial(c, x, &w, max ? -FLT_MAX : 0.0f);
  int64_t window_size = 1;
  for (int i = 0; i < w.n; i++)
    window_size *= w.k[i];
  int kk = 1;
  ox_value *acc = NULL;
  if (!want_idx && window_size > 1) {
    if (!(acc = xp ? pool_separable(c, xp, &w, max) : NULL))
      return c->err->status;
  } else {
    /* the Indices need every window offset as a slice of its own */
    if (!(kk = xp ? window_slices(c, xp, &w, sl, MAX_KERNEL) : 0))
      return c->err->status;
    acc = sl[0];
    for (int t = 1; t < kk; t++)
      acc = ox_binary(c, max ? "maximum" : "add", acc, sl[t]);
  }
  if (kk == 1 && window_size == 1 && acc) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    acc = ox_reshape(c, acc, acc->type.rank, zeros);
  }
  if (!max) {
    /* divide by the number of counted elements of each window */
    int64_t shape[DY_MAX_DIMS] = {1, 1}, P = 1;
    for (int i = 0; i < w.n; i++)
      P *= shape[2 + i] = w.out[i];
    ox_value *cnt = ox_new_const(c, DY_F32, 2 + w.n, shape, NULL);
    if (!cnt)
      return c->err->status;
    for (int64_t p = 0; p < P; p++) {
      int64_t rem = p, n = 1;
      for (int i = w.n - 1; i >= 0; i--) {
        int64_t o = rem % w.out[i];
        rem /= w.out[i];
        int64_t lo = include_pad ? -w.pb[i] : 0;
        int64_t hi = include_pad ? w.in[i] + w.pe_decl[i] : w.in[i];
        int64_t k = 0;
        for (int64_t j = 0; j < w.k[i]; j++) {
          int64_t pos = o * w.s[i] - w.pb[i] + j;
          k += pos >= lo && pos < hi;
        }
        n *= k;
      }
      ((float *)cnt->c->data)[p] = n > 0 ? 1.0f / (float)n : 0.0f;
    }
    acc = ox_binary(c, "mul", acc, cnt);
  }
  TRY(ox_set_or_fail(c, 0, acc));
  if (want_idx)
    OUT(1, pool_indices(c, x, sl, kk, &w, ox_attr_i(c, "storage_order", 0) != 0));
  return DY_OK;
}
static dy_status map_max_pool(ox_ctx *c) { return pool(c, true); }
static dy_status map_average_pool(ox_ctx *c) { return pool(c, false); }

/* MaxUnpool(X, I, output_shape) attributes: kernel_shape, pads (0s),
 * strides (1s). Each X value goes to the flat position I holds in a zero
 * tensor of the default shape ((in - 1) * stride + kernel - pads): a
 * scatter into the flattened tensor. A larger output_shape (a constant)
 * pads that at the end of each dim, as the ONNX reference places it. */
static dy_status map_max_unpool(ox_ctx *c) {
  ox_value *x, *ix, *osv = ox_in(c, 2);
  TRY(ox_check_attrs(c, "kernel_shape pads strides"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &ix));
  int r = x->type.rank, n = r - 2, nk, ns, np;
  const int64_t *ks = ox_attr_ints(c, "kernel_shape", &nk);
  const int64_t *st = ox_attr_ints(c, "strides", &ns);
  const int64_t *pd = ox_attr_ints(c, "pads", &np);
  if (n < 1 || !ks || nk != n || (st && ns != n) || (pd && np != 2 * n) ||
      !dy_type_is_static(&x->type) || ix->type.dtype != DY_I64 || ix->type.rank != r)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs static X, int64 I of its rank and "
                   "a kernel_shape per spatial dim");
  int64_t shape[DY_MAX_DIMS], pads[2 * DY_MAX_DIMS] = {0};
  shape[0] = x->type.shape[0];
  shape[1] = x->type.shape[1];
  for (int i = 0; i < n; i++)
    shape[2 + i] = (x->type.shape[2 + i] - 1) * (st ? st[i] : 1) + ks[i] -
                   (pd ? pd[i] + pd[n + i] : 0);
  if (osv) {
    const int64_t *o;
    int64_t no;
    TRY(ox_get_ints(c, osv, "MaxUnpool's output_shape", false, &o, &no));
    if (no != r)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "output_shape has %lld entries",
                     (long long)no);
    for (int i = 0; i < r; i++) {
      if (o[i] < shape[i])
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "an output_shape below the default");
      pads[r + i] = o[i] - shape[i];
    }
  }
  int64_t total = 1, nx = dy_type_numel(&x->type);
  for (int i = 0; i < r; i++)
    total *= shape[i];
  if (total < 1 || total > (INT64_C(1) << 28))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "an output of %lld elements", (long long)total);
  ox_value *zeros = ox_new_const(c, DY_F32, 1, &total, NULL);
  ox_value *in[3] = {zeros, ox_reshape(c, ix, 1, &nx), ox_reshape(c, x, 1, &nx)};
  dy_attr a[DY_SCATTER_ELEMENTS_NATTRS];
  int n_a = dy_scatter_elements_attrs_put(&(dy_scatter_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = 0, .reduction = "none"}, a);
  ox_value *y = zeros && in[1] && in[2] ? ox_op(c, "scatter_elements", in, 3, a, n_a) : NULL;
  OUT(0, ox_pad(c, ox_reshape(c, y, r, shape), pads, "constant", 0.0f));
}

/* GlobalAveragePool(X), GlobalMaxPool(X): reduce the spatial dims. */
static dy_status global_pool(ox_ctx *c, const char *op) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  int64_t axes[DY_MAX_DIMS];
  int n = 0;
  for (int i = 2; i < x->type.rank; i++)
    axes[n++] = i;
  if (!n)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "no spatial dims");
  OUT(0, ox_reduce(c, op, x, n, axes, true));
}
static dy_status map_global_average_pool(ox_ctx *c) { return global_pool(c, "reduce_mean"); }
static dy_status map_global_max_pool(ox_ctx *c) { return global_pool(c, "reduce_max"); }

/* ------------------------------------------------------------------ */
/* normalisation                                                       */
/* ------------------------------------------------------------------ */

/* BatchNormalization(X, scale, B, input_mean, input_var) -> Y,
 * running_mean, running_var; attributes: epsilon (1e-5), momentum (0.9),
 * training_mode (0, opset 14), spatial (1, before 9); before opset 7
 * is_test (0: training mode, outputs Y, mean, var, saved_mean, saved_var)
 * and, before 6, consumed_inputs (ignored). Inference maps onto
 * batch_norm (which the fuse-bn pass folds into a preceding conv);
 * training mode normalises with the batch's statistics (population
 * variance) and updates the running ones: r * momentum + batch * (1 -
 * momentum). */
static dy_status map_batch_norm(ox_ctx *c) {
  ox_value *x, *scale, *b, *mean, *var;
  bool legacy = c->opset < 7;
  TRY(ox_check_attrs(c, legacy ? "consumed_inputs epsilon is_test momentum spatial"
                               : "epsilon momentum training_mode spatial"));
  if (ox_attr_i(c, "spatial", 1) != 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "spatial=0 is not supported");
  bool training = legacy ? ox_attr_i(c, "is_test", 0) == 0
                         : ox_attr_i(c, "training_mode", 0) != 0;
  for (int i = 3; i < ox_n_out(c) && training; i++)
    if (ox_out_wanted(c, i))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the saved_mean and saved_var outputs");
  for (int i = 1; i < ox_n_out(c) && !training; i++)
    if (ox_out_wanted(c, i))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the running statistics outputs outside "
                     "training mode");
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &scale));
  TRY(ox_need_in(c, 2, &b));
  TRY(ox_need_in(c, 3, &mean));
  TRY(ox_need_in(c, 4, &var));
  TRY(ox_need_f32(c, x));
  int r = x->type.rank;
  if (r < 2)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "rank %d < 2", r);
  float eps = ox_attr_f(c, "epsilon", 1e-5f), mom = ox_attr_f(c, "momentum", 0.9f);
  if (training) {
    int64_t axes[DY_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < r; i++)
      if (i != 1)
        axes[n++] = i;
    ox_value *bm = ox_reduce(c, "reduce_mean", x, n, axes, true);
    ox_value *dv = ox_binary(c, "sub", x, bm);
    ox_value *bv = ox_reduce(c, "reduce_mean", ox_binary(c, "mul", dv, dv), n, axes, true);
    ox_value *y = ox_binary(c, "mul", dv, ox_unary(c, "rsqrt", ox_scale(c, bv, 1.0f, eps)));
    y = ox_binary(c, "add", ox_binary(c, "mul", y, per_channel(c, scale, r)),
                  per_channel(c, b, r));
    TRY(ox_set_or_fail(c, 0, y));
    int64_t C = x->type.shape[1];
    if (ox_out_wanted(c, 1))
      TRY(ox_set_or_fail(c, 1, ox_binary(c, "add", ox_scale(c, mean, mom, 0.0f),
                                         ox_scale(c, ox_reshape(c, bm, 1, &C), 1.0f - mom, 0.0f))));
    if (ox_out_wanted(c, 2))
      TRY(ox_set_or_fail(c, 2, ox_binary(c, "add", ox_scale(c, var, mom, 0.0f),
                                         ox_scale(c, ox_reshape(c, bv, 1, &C), 1.0f - mom, 0.0f))));
    return DY_OK;
  }
  int64_t C = x->type.shape[1];
  bool native = C > 0;
  ox_value *p[4] = {scale, b, mean, var};
  for (int i = 0; i < 4; i++)
    native &= p[i]->type.dtype == DY_F32 && p[i]->type.rank == 1 && p[i]->type.shape[0] == C;
  for (int i = 2; i < r; i++)
    native &= x->type.shape[i] >= 0;
  if (native) {
    ox_value *in[5] = {x, scale, b, mean, var};
    dy_attr a[DY_BATCH_NORM_NATTRS];
    int n_a = dy_batch_norm_attrs_put(&(dy_batch_norm_attrs){
        .given = DY_GIVEN_ALL, .epsilon = eps, .momentum = mom, .is_test = 1}, a);
    OUT(0, ox_op(c, "batch_norm", in, 5, a, n_a));
  }
  /* a = scale / sqrt(var + eps), shift = B - mean * a (fold for constants) */
  ox_value *a = ox_binary(c, "mul", scale, ox_unary(c, "rsqrt", ox_scale(c, var, 1.0f, eps)));
  ox_value *shift = ox_binary(c, "sub", b, ox_binary(c, "mul", mean, a));
  ox_value *y = ox_binary(c, "mul", x, per_channel(c, a, r));
  OUT(0, ox_binary(c, "add", y, per_channel(c, shift, r)));
}

/* (x - mean) / sqrt(var + eps) over axes, with the mean and 1/std kept. */
static ox_value *normalize(ox_ctx *c, ox_value *x, int n, const int64_t *axes,
                           float eps, ox_value **mean_out, ox_value **inv_out) {
  ox_value *mean = ox_reduce(c, "reduce_mean", x, n, axes, true);
  ox_value *d = ox_binary(c, "sub", x, mean);
  ox_value *var = ox_reduce(c, "reduce_mean", ox_binary(c, "mul", d, d), n, axes, true);
  ox_value *inv = ox_unary(c, "rsqrt", ox_scale(c, var, 1.0f, eps));
  if (mean_out)
    *mean_out = mean;
  if (inv_out)
    *inv_out = inv;
  return ox_binary(c, "mul", d, inv);
}

/* InstanceNormalization(input, scale, B) attributes: epsilon (1e-5). */
static dy_status map_instance_norm(ox_ctx *c) {
  ox_value *x, *scale, *b;
  TRY(ox_check_attrs(c, "epsilon"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &scale));
  TRY(ox_need_in(c, 2, &b));
  TRY(ox_need_f32(c, x));
  int r = x->type.rank;
  int64_t axes[DY_MAX_DIMS];
  int n = 0;
  for (int i = 2; i < r; i++)
    axes[n++] = i;
  ox_value *y = normalize(c, x, n, axes, ox_attr_f(c, "epsilon", 1e-5f), NULL, NULL);
  y = ox_binary(c, "mul", y, per_channel(c, scale, r));
  OUT(0, ox_binary(c, "add", y, per_channel(c, b, r)));
}

/* LayerNormalization(X, Scale, B) -> Y, Mean, InvStdDev; attributes: axis
 * (-1), epsilon (1e-5), stash_type (1: float32). */
static dy_status map_layer_norm(ox_ctx *c) {
  ox_value *x, *scale, *b = ox_in(c, 2);
  TRY(ox_check_attrs(c, "axis epsilon stash_type"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &scale));
  TRY(ox_need_f32(c, x));
  if (ox_attr_i(c, "stash_type", 1) != 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "stash_type %lld",
                   (long long)ox_attr_i(c, "stash_type", 1));
  int r = x->type.rank, axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", -1), r, &axis));
  int64_t axes[DY_MAX_DIMS];
  int n = 0;
  for (int i = axis; i < r; i++)
    axes[n++] = i;
  ox_value *mean, *inv;
  ox_value *y = normalize(c, x, n, axes, ox_attr_f(c, "epsilon", 1e-5f), &mean, &inv);
  y = ox_binary(c, "mul", y, scale);
  if (b)
    y = ox_binary(c, "add", y, b);
  TRY(ox_set_or_fail(c, 0, y));
  if (ox_out_wanted(c, 1))
    TRY(ox_set_or_fail(c, 1, mean));
  if (ox_out_wanted(c, 2))
    TRY(ox_set_or_fail(c, 2, inv));
  return DY_OK;
}

/* MeanVarianceNormalization(X) attributes: axes ([0, 2, 3]). */
static dy_status map_mvn(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axes"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_f32(c, x));
  int n;
  const int64_t *a = ox_attr_ints(c, "axes", &n);
  int64_t axes[DY_MAX_DIMS] = {0, 2, 3};
  if (n < 0)
    n = 3;
  else if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%d axes", n);
  else
    for (int i = 0; i < n; i++)
      axes[i] = a[i];
  OUT(0, normalize(c, x, n, axes, 1e-9f, NULL, NULL));
}

/* LRN(X) attributes: alpha (1e-4), beta (0.75), bias (1.0), size:
 * x / (bias + alpha / size * sum of x^2 over a channel window)^beta. The
 * window [c - (size-1)/2, c + size-1 - (size-1)/2] only ever meets the C
 * channels, so it is padded and unrolled at most C - 1 each side: 2C - 1
 * slices however large size is. */
static dy_status map_lrn(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "alpha beta bias size"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_f32(c, x));
  int64_t size = ox_attr_i(c, "size", 0), C = x->type.shape[1];
  int r = x->type.rank;
  if (size < 1 || r < 3 || C < 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "size %lld", (long long)size);
  float alpha = ox_attr_f(c, "alpha", 1e-4f), beta = ox_attr_f(c, "beta", 0.75f);
  float bias = ox_attr_f(c, "bias", 1.0f);
  int64_t pads[2 * DY_MAX_DIMS] = {0}, reach = C > 0 ? C - 1 : 0;
  pads[1] = (size - 1) / 2;
  pads[r + 1] = size - 1 - (size - 1) / 2;
  pads[1] = pads[1] < reach ? pads[1] : reach;
  pads[r + 1] = pads[r + 1] < reach ? pads[r + 1] : reach;
  ox_value *sq = ox_pad(c, ox_binary(c, "mul", x, x), pads, "constant", 0.0f);
  ox_value *sum = NULL;
  for (int64_t i = 0; i < pads[1] + pads[r + 1] + 1 && sq && (i == 0 || sum); i++) {
    int64_t st = i, en = i + C, ax = 1;
    ox_value *s = ox_slice(c, sq, 1, &st, &en, &ax, NULL);
    sum = sum ? ox_binary(c, "add", sum, s) : s;
  }
  ox_value *den = ox_binary(c, "pow", ox_scale(c, sum, alpha / (float)size, bias),
                            ox_const_f32(c, beta));
  OUT(0, ox_binary(c, "div", x, den));
}


/* ------------------------------------------------------------------ */
/* quantized convolutions (ops_quant.def)                              */
/* ------------------------------------------------------------------ */

/* A quantized conv's 2-D attributes: conv2d's four (and, for qconv2d, no
 * activation clamp: conv_integer's are the first four). 1-D and 3-D
 * quantized convs are not supported. */
static dy_status qconv_attrs(ox_ctx *c, ox_value *x, ox_value *wt,
                             dy_attr a[DY_QCONV2D_NATTRS],
                             int64_t k[2], int64_t s[2], int64_t d[2], int64_t pads[4]) {
  window w;
  int64_t g = 1; /* set by conv_window */
  TRY(conv_window(c, x, wt, &w, &g));
  if (w.n != 2)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D quantized convolutions are supported");
  pairs_2d(&w, k, s, d, pads);
  dy_qconv2d_attrs_put(&(dy_qconv2d_attrs){
      .given = DY_GIVEN_ALL, .strides = s, .n_strides = 2, .paddings = pads, .n_paddings = 4,
      .dilations = d, .n_dilations = 2, .groups = g, .act_min = INT32_MIN,
      .act_max = INT32_MAX}, a);
  return DY_OK;
}

/* QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, B): qconv2d, B (int32) zeros when absent. */
static dy_status map_qlinear_conv(ox_ctx *c) {
  ox_value *in[9];
  TRY(ox_check_attrs(c, "auto_pad dilations group kernel_shape pads strides"));
  for (int i = 0; i < 8; i++)
    TRY(ox_need_in(c, i, &in[i]));
  TRY(ox_need_const_scales(c, in, (const int[]){1, 4, 6}, 3));
  in[8] = ox_in(c, 8);
  dy_attr a[DY_QCONV2D_NATTRS];
  int64_t k[2], s[2], d[2], pads[4];
  TRY(qconv_attrs(c, in[0], in[3], a, k, s, d, pads));
  if (!in[8])
    in[8] = ox_new_const(c, DY_I32, 1, (int64_t[]){in[3]->type.shape[0]}, NULL);
  OUT(0, in[8] ? ox_op(c, "qconv2d", in, 9, a, DY_QCONV2D_NATTRS) : NULL);
}

/* ConvInteger(x, w, x_zero_point, w_zero_point) -> int32; absent zero
 * points are 0 of their tensor's dtype. */
static dy_status map_conv_integer(ox_ctx *c) {
  ox_value *in[4];
  TRY(ox_check_attrs(c, "auto_pad dilations group kernel_shape pads strides"));
  TRY(ox_integer_inputs(c, in));
  dy_attr a[DY_QCONV2D_NATTRS];
  int64_t k[2], s[2], d[2], pads[4];
  TRY(qconv_attrs(c, in[0], in[1], a, k, s, d, pads));
  OUT(0, ox_op(c, "conv_integer", in, 4, a, DY_CONV_INTEGER_NATTRS));
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_nn[] = {
    {"Conv", map_conv},
    {"QLinearConv", map_qlinear_conv},
    {"ConvInteger", map_conv_integer},
    {"ConvTranspose", map_conv_transpose},
    {"MaxUnpool", map_max_unpool},
    {"MaxPool", map_max_pool},
    {"AveragePool", map_average_pool},
    {"GlobalAveragePool", map_global_average_pool},
    {"GlobalMaxPool", map_global_max_pool},
    {"BatchNormalization", map_batch_norm},
    {"InstanceNormalization", map_instance_norm},
    {"LayerNormalization", map_layer_norm},
    {"MeanVarianceNormalization", map_mvn},
    {"LRN", map_lrn},
    {NULL, NULL},
};
