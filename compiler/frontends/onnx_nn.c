/* onnx_nn.c - ONNX's neural-network ops onto the op table: convolution,
 * pooling, normalisation, losses, resizing, depth/space rearrangement.
 *
 * These are composed from the primitive ops, with N spatial dims (1-D, 2-D
 * and 3-D alike):
 *   Conv          im2col by strided slices of the padded input (one per
 *                 kernel offset), then one matmul per group
 *   MaxPool       maximum over the same strided slices (padding -FLT_MAX)
 *   AveragePool   sum over the slices divided by a constant count tensor
 *                 (computed here, so count_include_pad and ceil_mode are
 *                 exact at the borders)
 *   BatchNorm     x * a + b with a = scale / sqrt(var + eps), b = B - mean a
 *                 (constants fold to two per-channel vectors)
 *   Resize        per axis, a gather of constant source indices (nearest),
 *                 or of 2 / 4 neighbours with constant weights (linear /
 *                 cubic), the coordinate transform evaluated here
 *   NLL / SCE     a one-hot select along the class axis
 * Attribute lists with defaults are quoted above each mapper.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

#define TRY(x)          \
  do {                  \
    dy_status s_ = (x); \
    if (s_)             \
      return s_;        \
  } while (0)
#define OUT(i, v) return set_or_fail(c, (i), (v))

static dy_status set_or_fail(ox_ctx *c, int i, ox_value *v) {
  if (!v)
    return c->err->status ? c->err->status : DY_STATUS_INTERNAL;
  return ox_set_out(c, i, v);
}

static dy_status need_in(ox_ctx *c, int i, ox_value **v) {
  *v = ox_in(c, i);
  if (!*v)
    return ox_fail(c, DY_STATUS_FORMAT, "input %d is missing", i);
  return DY_OK;
}

static dy_status need_f32(ox_ctx *c, ox_value *v) {
  if (v->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs float32, got %s",
                   dy_dtype_name(v->type.dtype));
  return DY_OK;
}

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
/* Conv                                                                */
/* ------------------------------------------------------------------ */

/* Conv(X, W, B) attributes: auto_pad ("NOTSET"), dilations (1s), group
 * (1), kernel_shape (from W), pads (0s), strides (1s). */
static dy_status map_conv(ox_ctx *c) {
  ox_value *x, *wt, *b = ox_in(c, 2);
  TRY(ox_check_attrs(c, "auto_pad dilations group kernel_shape pads strides"));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &wt));
  TRY(need_f32(c, x));
  int r = x->type.rank;
  if (wt->type.rank != r || !dy_type_is_static(&wt->type))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "W must have the input's rank");
  window w;
  TRY(window_setup(c, &x->type, wt->type.shape + 2, false, &w));
  int64_t g = ox_attr_i(c, "group", 1), C = x->type.shape[1], M = wt->type.shape[0];
  if (g < 1 || C < 0 || C % g || M % g || wt->type.shape[1] != C / g)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "channels %lld, group %lld and W %lld x %lld "
                   "do not agree", (long long)C, (long long)g, (long long)M,
                   (long long)wt->type.shape[1]);
  for (int i = 0; i < w.n; i++)
    if (wt->type.shape[2 + i] != w.k[i])
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "kernel_shape disagrees with W");
  ox_value *sl[MAX_KERNEL];
  ox_value *xp = pad_spatial(c, x, &w, 0.0f);
  int kk = xp ? window_slices(c, xp, &w, sl, MAX_KERNEL) : 0;
  if (!kk)
    return c->err->status;
  /* cols [N, C*kk, P]: stack the slices after the channel axis */
  int64_t P = 1;
  for (int i = 0; i < w.n; i++)
    P *= w.out[i];
  for (int t = 0; t < kk; t++)
    sl[t] = ox_unsqueeze(c, sl[t], 1, (int64_t[]){2});
  ox_value *cols = ox_concat_many(c, sl, kk, 2);
  cols = ox_reshape(c, cols, 3, (int64_t[]){0, C * kk, P});
  ox_value *wm = ox_reshape(c, wt, 2, (int64_t[]){M, C / g * kk});
  ox_value *parts[64];
  if (g > 64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than 64 groups");
  for (int64_t gi = 0; gi < g; gi++) {
    ox_value *cg = cols, *wg = wm;
    if (g > 1) {
      int64_t s0 = gi * (C / g) * kk, e0 = s0 + (C / g) * kk, a1 = 1;
      int64_t s1 = gi * (M / g), e1 = s1 + M / g, a0 = 0;
      cg = ox_slice(c, cols, 1, &s0, &e0, &a1, NULL);
      wg = ox_slice(c, wm, 1, &s1, &e1, &a0, NULL);
    }
    ox_value *in[2] = {wg, cg};
    dy_attr at[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
    parts[gi] = wg && cg ? ox_op(c, "matmul", in, 2, at, 2) : NULL;
  }
  ox_value *y = ox_concat_many(c, parts, (int)g, 1);
  int64_t shape[DY_MAX_DIMS] = {0, M};
  for (int i = 0; i < w.n; i++)
    shape[2 + i] = w.out[i];
  y = ox_reshape(c, y, r, shape);
  if (b)
    y = ox_binary(c, "add", y, per_channel(c, b, r));
  OUT(0, y);
}

/* ------------------------------------------------------------------ */
/* pooling                                                             */
/* ------------------------------------------------------------------ */

/* MaxPool(X) attributes: auto_pad, ceil_mode (0), dilations, kernel_shape,
 * pads, storage_order (0), strides. The Indices output is not supported.
 * AveragePool(X): auto_pad, ceil_mode (0), count_include_pad (0),
 * kernel_shape, pads, strides. */
static dy_status pool(ox_ctx *c, bool max) {
  ox_value *x;
  TRY(ox_check_attrs(c, max ? "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"
                            : "auto_pad ceil_mode count_include_pad kernel_shape pads strides"));
  TRY(need_in(c, 0, &x));
  TRY(need_f32(c, x));
  if (ox_out_wanted(c, 1))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "the Indices output is not supported");
  window w;
  TRY(window_setup(c, &x->type, NULL, ox_attr_i(c, "ceil_mode", 0) != 0, &w));
  ox_value *sl[MAX_KERNEL];
  ox_value *xp = pad_spatial(c, x, &w, max ? -FLT_MAX : 0.0f);
  int kk = xp ? window_slices(c, xp, &w, sl, MAX_KERNEL) : 0;
  if (!kk)
    return c->err->status;
  ox_value *acc = sl[0];
  for (int t = 1; t < kk; t++)
    acc = ox_binary(c, max ? "maximum" : "add", acc, sl[t]);
  if (kk == 1 && acc) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    acc = ox_reshape(c, acc, acc->type.rank, zeros);
  }
  if (!max) {
    /* divide by the number of counted elements of each window */
    bool include_pad = ox_attr_i(c, "count_include_pad", 0) != 0;
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
  OUT(0, acc);
}
static dy_status map_max_pool(ox_ctx *c) { return pool(c, true); }
static dy_status map_average_pool(ox_ctx *c) { return pool(c, false); }

/* GlobalAveragePool(X), GlobalMaxPool(X): reduce the spatial dims. */
static dy_status global_pool(ox_ctx *c, const char *op) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &x));
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

/* BatchNormalization(X, scale, B, input_mean, input_var) attributes:
 * epsilon (1e-5), momentum (0.9), training_mode (0, opset 14), spatial
 * (1, before 9). Inference only: the running statistics. */
static dy_status map_batch_norm(ox_ctx *c) {
  ox_value *x, *scale, *b, *mean, *var;
  TRY(ox_check_attrs(c, "epsilon momentum training_mode spatial"));
  if (ox_attr_i(c, "training_mode", 0) || ox_attr_i(c, "spatial", 1) != 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "training mode (or spatial=0) is not supported");
  for (int i = 1; i < ox_n_out(c); i++)
    if (ox_out_wanted(c, i))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the training outputs are not supported");
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &scale));
  TRY(need_in(c, 2, &b));
  TRY(need_in(c, 3, &mean));
  TRY(need_in(c, 4, &var));
  TRY(need_f32(c, x));
  int r = x->type.rank;
  if (r < 2)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "rank %d < 2", r);
  float eps = ox_attr_f(c, "epsilon", 1e-5f);
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
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &scale));
  TRY(need_in(c, 2, &b));
  TRY(need_f32(c, x));
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
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &scale));
  TRY(need_f32(c, x));
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
  TRY(set_or_fail(c, 0, y));
  if (ox_out_wanted(c, 1))
    TRY(set_or_fail(c, 1, mean));
  if (ox_out_wanted(c, 2))
    TRY(set_or_fail(c, 2, inv));
  return DY_OK;
}

/* MeanVarianceNormalization(X) attributes: axes ([0, 2, 3]). */
static dy_status map_mvn(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axes"));
  TRY(need_in(c, 0, &x));
  TRY(need_f32(c, x));
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
 * x / (bias + alpha / size * sum of x^2 over a channel window)^beta. */
static dy_status map_lrn(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "alpha beta bias size"));
  TRY(need_in(c, 0, &x));
  TRY(need_f32(c, x));
  int64_t size = ox_attr_i(c, "size", 0), C = x->type.shape[1];
  int r = x->type.rank;
  if (size < 1 || r < 3 || C < 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "size %lld", (long long)size);
  float alpha = ox_attr_f(c, "alpha", 1e-4f), beta = ox_attr_f(c, "beta", 0.75f);
  float bias = ox_attr_f(c, "bias", 1.0f);
  int64_t pads[2 * DY_MAX_DIMS] = {0};
  pads[1] = (size - 1) / 2;
  pads[r + 1] = size - 1 - (size - 1) / 2;
  ox_value *sq = ox_pad(c, ox_binary(c, "mul", x, x), pads, "constant", 0.0f);
  ox_value *sum = NULL;
  for (int64_t i = 0; i < size; i++) {
    int64_t st = i, en = i + C, ax = 1;
    ox_value *s = ox_slice(c, sq, 1, &st, &en, &ax, NULL);
    sum = sum ? ox_binary(c, "add", sum, s) : s;
  }
  ox_value *den = ox_binary(c, "pow", ox_scale(c, sum, alpha / (float)size, bias),
                            ox_const_f32(c, beta));
  OUT(0, ox_binary(c, "div", x, den));
}

/* ------------------------------------------------------------------ */
/* losses                                                              */
/* ------------------------------------------------------------------ */

/* The NLL loss of log-probabilities lp [N, C, d...] at targets t [N, d...]
 * with optional class weights w [C], ignore_index and reduction. */
static ox_value *nll(ox_ctx *c, ox_value *lp, ox_value *t, ox_value *w, bool has_ii,
                     int64_t ii, const char *reduction) {
  if (!lp || !t)
    return NULL;
  int r = lp->type.rank;
  int64_t C = lp->type.shape[1];
  ox_value *oh = ox_binary(c, "equal", ox_unsqueeze(c, t, 1, (int64_t[]){1}),
                           ox_iota(c, C, r, 1));
  ox_value *picked = ox_reduce(c, "reduce_sum", ox_where(c, oh, lp, ox_const_f32(c, 0)), 1,
                               (int64_t[]){1}, false);
  ox_value *wt = NULL;
  if (w) {
    int64_t shape[DY_MAX_DIMS];
    for (int i = 0; i < r; i++)
      shape[i] = i == 1 ? C : 1;
    wt = ox_reduce(c, "reduce_sum",
                   ox_where(c, oh, ox_reshape(c, w, r, shape), ox_const_f32(c, 0)), 1,
                   (int64_t[]){1}, false);
  }
  if (has_ii) {
    ox_value *keep = ox_not(c, ox_binary(c, "equal", t, ox_const_i64(c, ii)));
    wt = wt ? ox_where(c, keep, wt, ox_const_f32(c, 0)) : ox_cast(c, keep, DY_F32);
  }
  ox_value *loss = ox_unary(c, "neg", wt ? ox_binary(c, "mul", picked, wt) : picked);
  if (strcmp(reduction, "none") == 0)
    return loss;
  ox_value *sum = ox_reduce(c, "reduce_sum", loss, 0, NULL, false);
  if (strcmp(reduction, "sum") == 0)
    return sum;
  if (wt)
    return ox_binary(c, "div", sum, ox_reduce(c, "reduce_sum", wt, 0, NULL, false));
  return ox_reduce(c, "reduce_mean", loss, 0, NULL, false);
}

static dy_status loss_common(ox_ctx *c, bool softmax) {
  ox_value *x, *t, *w = ox_in(c, 2);
  TRY(ox_check_attrs(c, "ignore_index reduction"));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &t));
  TRY(need_f32(c, x));
  if (t->type.dtype != DY_I64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "targets must be int64");
  if (x->type.rank < 2 || x->type.shape[1] < 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "input must be [N, C, ...]");
  char red[16];
  ox_attr_s(c, "reduction", "mean", red, sizeof red);
  if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "reduction '%s'", red);
  bool has_ii = ox_attr(c, "ignore_index") != NULL;
  int64_t ii = ox_attr_i(c, "ignore_index", 0);
  ox_value *lp = x;
  if (softmax) {
    dy_attr a[] = {DY_ATTR_I("axis", 1)};
    lp = ox_op(c, "log_softmax", &x, 1, a, 1);
  }
  TRY(set_or_fail(c, 0, nll(c, lp, t, w, has_ii, ii, red)));
  if (softmax && ox_out_wanted(c, 1))
    TRY(set_or_fail(c, 1, lp));
  return DY_OK;
}

/* NegativeLogLikelihoodLoss(input, target, weight) attributes:
 * ignore_index (none), reduction ("mean"). */
static dy_status map_nll_loss(ox_ctx *c) { return loss_common(c, false); }
/* SoftmaxCrossEntropyLoss(scores, labels, weights) -> output, log_prob;
 * attributes: ignore_index, reduction ("mean"). */
static dy_status map_sce_loss(ox_ctx *c) { return loss_common(c, true); }

/* ------------------------------------------------------------------ */
/* DepthToSpace, SpaceToDepth                                          */
/* ------------------------------------------------------------------ */

/* DepthToSpace(input) attributes: blocksize, mode ("DCR"). */
static dy_status map_depth_to_space(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "blocksize mode"));
  TRY(need_in(c, 0, &x));
  char mode[8];
  ox_attr_s(c, "mode", "DCR", mode, sizeof mode);
  int64_t b = ox_attr_i(c, "blocksize", 0);
  const int64_t *s = x->type.shape;
  if (x->type.rank != 4 || b < 1 || s[1] < 0 || s[1] % (b * b))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs [N, C, H, W] with C divisible by "
                   "blocksize^2");
  int64_t C = s[1] / (b * b);
  bool dcr = strcmp(mode, "DCR") == 0;
  if (!dcr && strcmp(mode, "CRD"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "mode '%s'", mode);
  ox_value *v = dcr ? ox_reshape(c, x, 6, (int64_t[]){0, b, b, C, s[2], s[3]})
                    : ox_reshape(c, x, 6, (int64_t[]){0, C, b, b, s[2], s[3]});
  v = dcr ? ox_transpose(c, v, 6, (int64_t[]){0, 3, 4, 1, 5, 2})
          : ox_transpose(c, v, 6, (int64_t[]){0, 1, 4, 2, 5, 3});
  OUT(0, ox_reshape(c, v, 4, (int64_t[]){0, C, s[2] * b, s[3] * b}));
}

/* SpaceToDepth(input) attributes: blocksize. */
static dy_status map_space_to_depth(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "blocksize"));
  TRY(need_in(c, 0, &x));
  int64_t b = ox_attr_i(c, "blocksize", 0);
  const int64_t *s = x->type.shape;
  if (x->type.rank != 4 || b < 1 || s[2] < 0 || s[3] < 0 || s[2] % b || s[3] % b)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs [N, C, H, W] with H, W divisible by "
                   "blocksize");
  ox_value *v = ox_reshape(c, x, 6, (int64_t[]){0, s[1], s[2] / b, b, s[3] / b, b});
  v = ox_transpose(c, v, 6, (int64_t[]){0, 3, 5, 1, 2, 4});
  OUT(0, ox_reshape(c, v, 4, (int64_t[]){0, s[1] * b * b, s[2] / b, s[3] / b}));
}

/* ------------------------------------------------------------------ */
/* Resize, Upsample                                                    */
/* ------------------------------------------------------------------ */

typedef struct {
  char coord[32], mode[16], nearest[32];
  float cubic_a;
  bool exclude_outside;
} resize_opts;

/* The source coordinate of output index o along an axis. The output
 * length is in * scale unrounded, as the ONNX reference computes it. */
static double src_coord(const resize_opts *ro, int64_t o, int64_t in, double scale) {
  const char *m = ro->coord;
  double out = (double)in * scale;
  if (strcmp(m, "align_corners") == 0)
    return out == 1 ? 0.0 : (double)o * (double)(in - 1) / (out - 1);
  if (strcmp(m, "asymmetric") == 0)
    return (double)o / scale;
  if (strcmp(m, "tf_half_pixel_for_nn") == 0)
    return ((double)o + 0.5) / scale;
  if (strcmp(m, "pytorch_half_pixel") == 0)
    return out > 1 ? ((double)o + 0.5) / scale - 0.5 : 0.0;
  return ((double)o + 0.5) / scale - 0.5; /* half_pixel */
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static int64_t nearest_index(const resize_opts *ro, double x) {
  const char *m = ro->nearest;
  double f = floor(x);
  if (strcmp(m, "floor") == 0)
    return (int64_t)f;
  if (strcmp(m, "ceil") == 0)
    return (int64_t)ceil(x);
  if (x - f == 0.5)
    return (int64_t)(strcmp(m, "round_prefer_ceil") == 0 ? f + 1 : f);
  return (int64_t)floor(x + 0.5);
}

/* Cubic convolution weights for the 4 neighbours floor(x)-1 .. floor(x)+2. */
static void cubic_weights(double t, double a, double w[4]) {
  double x[4] = {t + 1, t, 1 - t, 2 - t};
  for (int i = 0; i < 4; i++) {
    double d = x[i];
    w[i] = d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1
                  : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  }
}

/* Resample v along axis from `in` to `out` elements. */
static ox_value *resize_axis(ox_ctx *c, ox_value *v, int axis, int64_t in, int64_t out,
                             double scale, const resize_opts *ro) {
  if (!v)
    return NULL;
  int r = v->type.rank;
  bool nearest = strcmp(ro->mode, "nearest") == 0;
  int taps = nearest ? 1 : strcmp(ro->mode, "linear") == 0 ? 2 : 4;
  ox_value *idx[4], *wt[4];
  int64_t wshape[DY_MAX_DIMS];
  for (int i = 0; i < r; i++)
    wshape[i] = i == axis ? out : 1;
  for (int k = 0; k < taps; k++) {
    idx[k] = ox_new_const(c, DY_I64, 1, &out, NULL);
    wt[k] = ox_new_const(c, DY_F32, r, wshape, NULL);
    if (!idx[k] || !wt[k])
      return NULL;
  }
  for (int64_t o = 0; o < out; o++) {
    double x = src_coord(ro, o, in, scale);
    if (nearest) {
      ((int64_t *)idx[0]->c->data)[o] = clamp64(nearest_index(ro, x), 0, in - 1);
      ((float *)wt[0]->c->data)[o] = 1;
      continue;
    }
    if (taps == 2) {
      if (x < 0)
        x = 0;
      if (x > (double)(in - 1))
        x = (double)(in - 1);
    }
    double f = floor(x), t = x - f, w[4];
    if (taps == 2) {
      w[0] = 1 - t;
      w[1] = t;
    } else {
      cubic_weights(t, ro->cubic_a, w);
    }
    double sum = 0;
    for (int k = 0; k < taps; k++) {
      int64_t j = (int64_t)f + k - (taps == 4 ? 1 : 0);
      if (ro->exclude_outside && (j < 0 || j >= in))
        w[k] = 0;
      sum += w[k];
      ((int64_t *)idx[k]->c->data)[o] = clamp64(j, 0, in - 1);
    }
    for (int k = 0; k < taps; k++)
      ((float *)wt[k]->c->data)[o] = (float)(ro->exclude_outside && sum != 0 ? w[k] / sum : w[k]);
  }
  ox_value *acc = NULL;
  for (int k = 0; k < taps; k++) {
    dy_attr a[] = {DY_ATTR_I("axis", axis)};
    ox_value *in2[2] = {v, idx[k]};
    ox_value *g = ox_op(c, "gather", in2, 2, a, 1);
    if (!nearest)
      g = ox_binary(c, "mul", g, wt[k]);
    acc = acc ? ox_binary(c, "add", acc, g) : g;
  }
  return acc;
}

static dy_status resize_common(ox_ctx *c, ox_value *x, const float *scales,
                               const int64_t *sizes, const resize_opts *ro) {
  int r = x->type.rank;
  if (strcmp(ro->mode, "nearest") && strcmp(ro->mode, "linear") && strcmp(ro->mode, "cubic"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "mode '%s'", ro->mode);
  if (strcmp(ro->coord, "tf_crop_and_resize") == 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "coordinate_transformation_mode tf_crop_and_resize");
  if (strcmp(ro->mode, "nearest") && x->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "linear/cubic resize of a non-float tensor");
  ox_value *v = x;
  for (int i = 0; i < r; i++) {
    int64_t in = x->type.shape[i];
    int64_t out = sizes ? sizes[i] : (int64_t)floor((double)in * scales[i]);
    double scale = sizes ? (double)out / (double)in : scales[i];
    if (in < 0) {
      if (out != in && !(scales && scales[i] == 1.0f))
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "resizing the dynamic batch dim");
      continue;
    }
    if (out < 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "output extent %lld", (long long)out);
    if (out == in && scale == 1.0)
      continue;
    v = resize_axis(c, v, i, in, out, scale, ro);
  }
  if (v == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    v = ox_reshape(c, x, r, zeros);
  }
  OUT(0, v);
}

/* Resize(X, roi, scales, sizes) attributes: coordinate_transformation_mode
 * ("half_pixel"; opset 10: asymmetric), cubic_coeff_a (-0.75),
 * exclude_outside (0), extrapolation_value (0), mode ("nearest"),
 * nearest_mode ("round_prefer_floor"). Opset 10: Resize(X, scales). */
static dy_status map_resize(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "coordinate_transformation_mode cubic_coeff_a exclude_outside "
                        "extrapolation_value mode nearest_mode"));
  TRY(need_in(c, 0, &x));
  resize_opts ro;
  ox_attr_s(c, "coordinate_transformation_mode", c->opset < 11 ? "asymmetric" : "half_pixel",
            ro.coord, sizeof ro.coord);
  ox_attr_s(c, "mode", "nearest", ro.mode, sizeof ro.mode);
  ox_attr_s(c, "nearest_mode", c->opset < 11 ? "floor" : "round_prefer_floor", ro.nearest,
            sizeof ro.nearest);
  if (c->opset < 11)
    snprintf(ro.nearest, sizeof ro.nearest, "floor");
  ro.cubic_a = ox_attr_f(c, "cubic_coeff_a", -0.75f);
  ro.exclude_outside = ox_attr_i(c, "exclude_outside", 0) != 0;
  int r = x->type.rank;
  ox_value *sv = ox_in(c, c->opset < 11 ? 1 : 2), *zv = c->opset < 11 ? NULL : ox_in(c, 3);
  const float *scales = NULL;
  const int64_t *sizes = NULL;
  int64_t n = 0;
  if (sv && dy_type_numel(&sv->type) > 0) {
    TRY(ox_get_floats(c, sv, "Resize's scales", &scales, &n));
  } else if (zv) {
    TRY(ox_get_ints(c, zv, "Resize's sizes", false, &sizes, &n));
  } else {
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "neither scales nor sizes");
  }
  if (n != r)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%lld scales/sizes for rank %d",
                   (long long)n, r);
  return resize_common(c, x, scales, sizes, &ro);
}

/* Upsample(X, scales) (opset 7..9; scales an attribute before 9)
 * attributes: mode ("nearest"). Coordinates are "asymmetric", nearest
 * rounds down. */
static dy_status map_upsample(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 9 ? "mode scales" : "mode"));
  TRY(need_in(c, 0, &x));
  resize_opts ro = {.coord = "asymmetric", .nearest = "floor"};
  ox_attr_s(c, "mode", "nearest", ro.mode, sizeof ro.mode);
  const float *scales;
  int64_t n;
  if (c->opset < 9) {
    int k;
    scales = ox_attr_floats(c, "scales", &k);
    n = k;
  } else {
    ox_value *sv;
    TRY(need_in(c, 1, &sv));
    TRY(ox_get_floats(c, sv, "Upsample's scales", &scales, &n));
  }
  if (!scales || n != x->type.rank)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "scales must have one entry per dim");
  return resize_common(c, x, scales, NULL, &ro);
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

static const ox_mapper mappers[] = {
    {"Conv", map_conv},
    {"MaxPool", map_max_pool},
    {"AveragePool", map_average_pool},
    {"GlobalAveragePool", map_global_average_pool},
    {"GlobalMaxPool", map_global_max_pool},
    {"BatchNormalization", map_batch_norm},
    {"InstanceNormalization", map_instance_norm},
    {"LayerNormalization", map_layer_norm},
    {"MeanVarianceNormalization", map_mvn},
    {"LRN", map_lrn},
    {"NegativeLogLikelihoodLoss", map_nll_loss},
    {"SoftmaxCrossEntropyLoss", map_sce_loss},
    {"DepthToSpace", map_depth_to_space},
    {"SpaceToDepth", map_space_to_depth},
    {"Resize", map_resize},
    {"Upsample", map_upsample},
};

ox_map_fn ox_find_mapper_nn(const char *op_type) {
  for (size_t i = 0; i < sizeof mappers / sizeof *mappers; i++)
    if (strcmp(mappers[i].op_type, op_type) == 0)
      return mappers[i].map;
  return NULL;
}
