/* kernels_nn.c - reference kernels of the nn family (ir/ops_nn.def):
 * convolution, pooling, normalisation, dropout. NCHW throughout.
 *
 * Each kernel first re-runs inference (ir/infer/infer_nn.c) on its concrete input
 * types and checks the output's type against the result, so every rule on
 * attributes and shapes lives in one place; it then reads the attributes
 * knowing they are well formed.
 *
 *   conv2d            im2col + one cblas_sgemm per (image, group); a 1x1,
 *                     stride-1, unpadded conv multiplies the input as it
 *                     is; a depthwise conv (groups == channels) is a direct
 *                     loop.
 *   conv2d_transpose  per (image, group) col = W_g^T @ X_g by sgemm, then
 *                     col2im scatter-adds col into the output.
 *   pool2d            direct loops over the windows of pool_window().
 *   batch_norm, layer_norm, group_norm
 *                     statistics in double, two passes (mean, then the
 *                     biased variance), then y = (x - mean) * inv * scale +
 *                     bias in float with inv = 1 / sqrtf(var + eps). The
 *                     generated C (codegen/ops/emit_nn.c) uses the same order.
 *   dropout           Paddle's "upscale_in_train" with the mask below.
 *   conv2d_grad_filter
 *                     per (image, group) dw_g += dy_g @ im2col(x_g)^T by
 *                     sgemm.
 *   pool2d_grad       the forward's window walk, dy routed back.
 *
 * The dropout mask. Element i of x (its flat C-order index) is kept iff
 *
 *     (mix(seed ^ (i * 0x9E3779B97F4A7C15)) >> 40) >= T,  T = ceil(p * 2^24)
 *
 * i.e. a 24-bit uniform u / 2^24 >= p, where mix is splitmix64's output
 * function in wrapping uint64_t arithmetic:
 *
 *     z = v + 0x9E3779B97F4A7C15
 *     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
 *     z = (z ^ (z >> 27)) * 0x94D049BB133111EB
 *     mix(v) = z ^ (z >> 31)
 *
 * p is the attribute rounded to float (so p * 2^24 is exact in double),
 * the seed the int attribute's 64 bits. A kept element becomes x * scale
 * with scale = 1.0f / (1.0f - p) in float; the rest are 0, and p == 1 zeroes
 * everything. codegen/ops/emit_nn.c emits the same function with T and scale as
 * literals, so eager calls, the static executor and the generated C make
 * the same mask bit for bit.
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

/* Arity, tensor health, the output's type as inference gives it, and no
 * aliasing between the output and an input (kernels read while writing). */
static dy_status check_nn(const dy_op *op, dy_tensor *const *in, int n_in,
                          int want_in, dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, want_in, out, err);
  if (s != DY_OK)
    return s;
  dy_type types[8], want;
  for (int i = 0; i < n_in; i++)
    types[i] = in[i]->type;
  if ((s = dy_infer(op, types, n_in, &want, err)) != DY_OK)
    return s;
  if (!dy_type_equal(&want, &out[0]->type))
    return dy_kshape_error(op, "output", &out[0]->type, &want, err);
  for (int i = 0; i < n_in; i++)
    if (out[0]->nbytes > 0 && out[0]->data == in[i]->data)
      return dy_error_at(err, op, DY_STATUS_INTERNAL, "%s: output aliases input %d",
                         op_name(op), i);
  return DY_OK;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Product of dims [from, to) of a concrete type. */
static int64_t dims_product(const dy_type *t, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++)
    n *= t->shape[i];
  return n;
}

/* ------------------------------------------------------------------ */
/* conv2d, conv2d_transpose                                            */
/* ------------------------------------------------------------------ */

/* One convolution's geometry: ir/'s (dy_conv2d_geom), which inference has
 * checked. The bottom and right paddings only shape the output size. */
typedef dy_conv_geom conv_geom;

static conv_geom conv_geom_of(const dy_op *op, const dy_type *x, const dy_type *w) {
  if (op->kind == DY_OP_CONV2D_TRANSPOSE) {
    dy_conv2d_transpose_attrs a = dy_conv2d_transpose_attrs_get(op);
    return dy_conv2d_transpose_geom(x, w, &a);
  }
  if (op->kind == DY_OP_CONV2D_GRAD_FILTER) { /* w is the output gradient */
    dy_conv2d_grad_filter_attrs a = dy_conv2d_grad_filter_attrs_get(op);
    return dy_conv2d_grad_filter_geom(x, w, &a);
  }
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* conv2d, fused_conv2d */
  return dy_conv2d_geom(x, w, &a);
}

/* Checks a convolution's tensors (x, w; conv2d_grad_filter's x, dy) and
 * reads its geometry into *g. */
static dy_status conv_check(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, conv_geom *g, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 2, out, err);
  if (s == DY_OK)
    *g = conv_geom_of(op, &in[0]->type, &in[1]->type);
  return s;
}

/* col[(c*kh + i)*kw + j][oy*ow + ox] = x[c][oy*sh - pt + i*dh][ox*sw - pl + j*dw],
 * 0 where that falls in the padding; cg input channels. */
static void im2col(const float *x, const conv_geom *g, int64_t cg, float *col) {
  float *row = col;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t i = 0; i < g->kh; i++)
      for (int64_t j = 0; j < g->kw; j++)
        for (int64_t oy = 0; oy < g->oh; oy++) {
          int64_t iy = oy * g->sh - g->pt + i * g->dh;
          bool row_in = iy >= 0 && iy < g->h;
          for (int64_t ox = 0; ox < g->ow; ox++) {
            int64_t ix = ox * g->sw - g->pl + j * g->dw;
            *row++ = row_in && ix >= 0 && ix < g->w ? x[(c * g->h + iy) * g->w + ix]
                                                    : 0.0f;
          }
        }
}

/* Depthwise: one input channel per group, og = o / groups outputs each. */
static void conv_depthwise(const float *x, const float *w, float *y,
                           const conv_geom *g) {
  int64_t og = g->o / g->groups;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t oc = 0; oc < g->o; oc++) {
      const float *xc = x + (n * g->c + oc / og) * g->h * g->w;
      const float *wk = w + oc * g->kh * g->kw;
      float *yc = y + (n * g->o + oc) * g->oh * g->ow;
      for (int64_t oy = 0; oy < g->oh; oy++)
        for (int64_t ox = 0; ox < g->ow; ox++) {
          float acc = 0.0f;
          for (int64_t i = 0; i < g->kh; i++) {
            int64_t iy = oy * g->sh - g->pt + i * g->dh;
            if (iy < 0 || iy >= g->h)
              continue;
            for (int64_t j = 0; j < g->kw; j++) {
              int64_t ix = ox * g->sw - g->pl + j * g->dw;
              if (ix >= 0 && ix < g->w)
                acc += xc[iy * g->w + ix] * wk[i * g->kw + j];
            }
          }
          yc[oy * g->ow + ox] = acc;
        }
    }
}

dy_status dy_kernel_conv2d(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  conv_geom g;
  dy_status s = conv_check(op, in, n_in, out, &g, err);
  if (s != DY_OK)
    return s;
  const float *x = in[0]->data, *w = in[1]->data;
  float *y = out[0]->data;
  if (dy_tensor_numel(out[0]) == 0)
    return DY_OK;
  int64_t cg = g.c / g.groups, og = g.o / g.groups;
  if (g.groups > 1 && cg == 1) {
    conv_depthwise(x, w, y, &g);
    return DY_OK;
  }
  /* per (image, group): y_g [og, oh*ow] = w_g [og, k] @ col [k, oh*ow] */
  int64_t k = cg * g.kh * g.kw, plane = g.oh * g.ow;
  if (!fits_int(og) || !fits_int(k) || !fits_int(plane))
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "conv2d: matrix dims exceed the BLAS int range");
  /* a 1x1 stride-1 conv without padding reads the input as col */
  bool as_is = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 &&
               g.pl == 0 && g.oh == g.h && g.ow == g.w;
  float *col = as_is ? NULL : malloc(sizeof(float) * (size_t)(k * plane));
  if (!as_is && !col)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY,
                       "conv2d: out of memory for a %lld x %lld im2col buffer",
                       (long long)k, (long long)plane);
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t gi = 0; gi < g.groups; gi++) {
      const float *xg = x + (n * g.c + gi * cg) * g.h * g.w;
      if (!as_is)
        im2col(xg, &g, cg, col);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)og, (int)plane,
                  (int)k, 1.0f, w + gi * og * k, (int)k, as_is ? xg : col,
                  (int)plane, 0.0f, y + (n * g.o + gi * og) * plane, (int)plane);
    }
  free(col);
  return DY_OK;
}

dy_status dy_kernel_conv2d_transpose(const dy_op *op, dy_tensor *const *in,
                                     int n_in, dy_tensor *const *out,
                                     dy_error *err) {
  conv_geom g;
  dy_status s = conv_check(op, in, n_in, out, &g, err);
  if (s != DY_OK)
    return s;
  /* the taps scatter-add into y, which starts from zeros */
  float *y = out[0]->data;
  memset(y, 0, out[0]->nbytes);
  const float *x = in[0]->data, *w = in[1]->data;
  if (dy_tensor_numel(out[0]) == 0 || dy_tensor_numel(in[0]) == 0)
    return DY_OK;
  /* per (image, group): col [og*kh*kw, h*w] = w_g^T @ x_g, with w_g the
   * [cg, og*kh*kw] slice of the filter and x_g [cg, h*w] */
  int64_t cg = g.c / g.groups, og = g.o / g.groups;
  int64_t m = og * g.kh * g.kw, hw = g.h * g.w;
  if (!fits_int(m) || !fits_int(hw) || !fits_int(cg))
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "conv2d_transpose: matrix dims exceed the BLAS int range");
  float *col = malloc(sizeof(float) * (size_t)(m * hw));
  if (!col)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY,
                       "conv2d_transpose: out of memory for a %lld x %lld buffer",
                       (long long)m, (long long)hw);
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t gi = 0; gi < g.groups; gi++) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m, (int)hw, (int)cg,
                  1.0f, w + gi * cg * m, (int)m, x + (n * g.c + gi * cg) * hw, (int)hw,
                  0.0f, col, (int)hw);
      /* col2im: input pixel (iy, ix) through kernel tap (i, j) lands on
       * output (iy*sh - pt + i*dh, ix*sw - pl + j*dw) */
      float *yg = y + (n * g.o + gi * og) * g.oh * g.ow;
      const float *row = col;
      for (int64_t oc = 0; oc < og; oc++)
        for (int64_t i = 0; i < g.kh; i++)
          for (int64_t j = 0; j < g.kw; j++, row += hw)
            for (int64_t iy = 0; iy < g.h; iy++) {
              int64_t oy = iy * g.sh - g.pt + i * g.dh;
              if (oy < 0 || oy >= g.oh)
                continue;
              for (int64_t ix = 0; ix < g.w; ix++) {
                int64_t ox = ix * g.sw - g.pl + j * g.dw;
                if (ox >= 0 && ox < g.ow)
                  yg[(oc * g.oh + oy) * g.ow + ox] += row[iy * g.w + ix];
              }
            }
    }
  free(col);
  return DY_OK;
}

/* conv2d_grad_filter(x, dy): per (image, group), with col = im2col(x_g)
 * [cg*kh*kw, oh*ow] over dy's plane, dw_g [og, cg*kh*kw] += dy_g @ col^T. */
dy_status dy_kernel_conv2d_grad_filter(const dy_op *op, dy_tensor *const *in,
                                       int n_in, dy_tensor *const *out,
                                       dy_error *err) {
  conv_geom g;
  dy_status s = conv_check(op, in, n_in, out, &g, err);
  if (s != DY_OK)
    return s;
  float *dw = out[0]->data;
  memset(dw, 0, out[0]->nbytes);
  const float *x = in[0]->data, *dy = in[1]->data;
  if (dy_tensor_numel(out[0]) == 0 || dy_tensor_numel(in[1]) == 0)
    return DY_OK;
  int64_t cg = g.c / g.groups, og = g.o / g.groups;
  int64_t k = cg * g.kh * g.kw, plane = g.oh * g.ow;
  if (!fits_int(og) || !fits_int(k) || !fits_int(plane))
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "conv2d_grad_filter: matrix dims exceed the BLAS int range");
  float *col = malloc(sizeof(float) * (size_t)(k * plane));
  if (!col)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY,
                       "conv2d_grad_filter: out of memory for a %lld x %lld im2col "
                       "buffer", (long long)k, (long long)plane);
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t gi = 0; gi < g.groups; gi++) {
      im2col(x + (n * g.c + gi * cg) * g.h * g.w, &g, cg, col);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)og, (int)k, (int)plane,
                  1.0f, dy + (n * g.o + gi * og) * plane, (int)plane, col, (int)plane,
                  1.0f, dw + gi * og * k, (int)k);
    }
  free(col);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pool2d                                                              */
/* ------------------------------------------------------------------ */

/* The window of output index o along axis d (input size n, output size
 * out_n): the in-bounds range [*lo, *hi), and in *size the window's extent
 * clipped to the padded input (the divisor of avg with padding counted;
 * a ceil_mode window past the far padding is cut there, as in ONNX). */
static void pool_window(const dy_pool_geom *a, int d, int64_t o, int64_t n,
                        int64_t out_n, int64_t *lo, int64_t *hi, int64_t *size) {
  if (a->mode == DY_POOL_GLOBAL) {
    *lo = 0;
    *hi = *size = n;
    return;
  }
  if (a->mode == DY_POOL_ADAPTIVE) { /* [floor(o*n/out_n), ceil((o+1)*n/out_n)) */
    *lo = o * n / out_n;
    *hi = ((o + 1) * n + out_n - 1) / out_n;
    *size = *hi - *lo;
    return;
  }
  int64_t start = o * a->s[d] - a->lo[d], end = start + a->k[d];
  if (end > n + a->hi[d])
    end = n + a->hi[d];
  *size = end - start;
  *lo = start > 0 ? start : 0;
  *hi = end < n ? end : n;
}

/* pool2d of i8 / u8 (quantized values keep their scale and zero point):
 * max as is; avg an int32 sum divided by the same count as f32's, rounded
 * half away from zero (TFLite's reference AveragePool). */
static dy_status pool2d_int(const dy_pool_geom *a, const dy_tensor *xt, dy_tensor *yt,
                            int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  dy_dtype t = xt->type.dtype;
  for (int64_t p = 0; p < planes; p++)
    for (int64_t oy = 0; oy < oh; oy++) {
      int64_t h0, h1, hs;
      pool_window(a, 0, oy, h, oh, &h0, &h1, &hs);
      for (int64_t ox = 0; ox < ow; ox++) {
        int64_t w0, w1, ws;
        pool_window(a, 1, ox, w, ow, &w0, &w1, &ws);
        int32_t acc = a->max ? dy_quant_value(t, xt->data, p * h * w + h0 * w + w0) : 0;
        for (int64_t iy = h0; iy < h1; iy++)
          for (int64_t ix = w0; ix < w1; ix++) {
            int32_t v = dy_quant_value(t, xt->data, p * h * w + iy * w + ix);
            acc = a->max ? (v > acc ? v : acc) : acc + v;
          }
        if (!a->max) {
          int32_t n = (int32_t)(a->exclusive ? (h1 - h0) * (w1 - w0) : hs * ws);
          acc = acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
        }
        if (t == DY_I8)
          ((int8_t *)yt->data)[(p * oh + oy) * ow + ox] = (int8_t)acc;
        else
          ((uint8_t *)yt->data)[(p * oh + oy) * ow + ox] = (uint8_t)acc;
      }
    }
  return DY_OK;
}

dy_status dy_kernel_pool2d(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *tx = &in[0]->type, *ty = &out[0]->type;
  dy_pool2d_attrs pa = dy_pool2d_attrs_get(op);
  dy_pool_geom a = dy_pool2d_geom(tx, &pa);
  int64_t planes = tx->shape[0] * tx->shape[1];
  int64_t h = tx->shape[2], w = tx->shape[3], oh = ty->shape[2], ow = ty->shape[3];
  if (tx->dtype != DY_F32)
    return pool2d_int(&a, in[0], out[0], planes, h, w, oh, ow);
  const float *x = in[0]->data;
  float *y = out[0]->data;
  for (int64_t p = 0; p < planes; p++) {
    const float *xp = x + p * h * w;
    float *yp = y + p * oh * ow;
    for (int64_t oy = 0; oy < oh; oy++) {
      int64_t h0, h1, hs;
      pool_window(&a, 0, oy, h, oh, &h0, &h1, &hs);
      for (int64_t ox = 0; ox < ow; ox++) {
        int64_t w0, w1, ws;
        pool_window(&a, 1, ox, w, ow, &w0, &w1, &ws);
        float acc;
        if (a.max) {
          acc = xp[h0 * w + w0];
          for (int64_t iy = h0; iy < h1; iy++)
            for (int64_t ix = w0; ix < w1; ix++) {
              float v = xp[iy * w + ix];
              acc = v > acc ? v : acc;
            }
        } else {
          acc = 0.0f;
          for (int64_t iy = h0; iy < h1; iy++)
            for (int64_t ix = w0; ix < w1; ix++)
              acc += xp[iy * w + ix];
          acc /= (float)(a.exclusive ? (h1 - h0) * (w1 - w0) : hs * ws);
        }
        yp[oy * ow + ox] = acc;
      }
    }
  }
  return DY_OK;
}

/* pool2d_grad(x, y, dy): each window's dy goes back to its input
 * elements: max to the first maximum (the forward walk's), avg to every
 * element divided by the forward divisor. Overlapping windows add up. */
dy_status dy_kernel_pool2d_grad(const dy_op *op, dy_tensor *const *in, int n_in,
                                dy_tensor *const *out, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *tx = &in[0]->type, *ty = &in[1]->type;
  dy_pool2d_attrs pa = dy_pool2d_attrs_get(op);
  dy_pool_geom a = dy_pool2d_geom(tx, &pa);
  int64_t planes = tx->shape[0] * tx->shape[1];
  int64_t h = tx->shape[2], w = tx->shape[3], oh = ty->shape[2], ow = ty->shape[3];
  const float *x = in[0]->data, *dy = in[2]->data;
  float *dx = out[0]->data;
  memset(dx, 0, out[0]->nbytes);
  for (int64_t p = 0; p < planes; p++) {
    const float *xp = x + p * h * w, *gp = dy + p * oh * ow;
    float *dp = dx + p * h * w;
    for (int64_t oy = 0; oy < oh; oy++) {
      int64_t h0, h1, hs;
      pool_window(&a, 0, oy, h, oh, &h0, &h1, &hs);
      for (int64_t ox = 0; ox < ow; ox++) {
        int64_t w0, w1, ws;
        pool_window(&a, 1, ox, w, ow, &w0, &w1, &ws);
        float g = gp[oy * ow + ox];
        if (a.max) {
          int64_t at = h0 * w + w0;
          for (int64_t iy = h0; iy < h1; iy++)
            for (int64_t ix = w0; ix < w1; ix++)
              if (xp[iy * w + ix] > xp[at])
                at = iy * w + ix;
          dp[at] += g;
        } else {
          g /= (float)(a.exclusive ? (h1 - h0) * (w1 - w0) : hs * ws);
          for (int64_t iy = h0; iy < h1; iy++)
            for (int64_t ix = w0; ix < w1; ix++)
              dp[iy * w + ix] += g;
        }
      }
    }
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* batch_norm, layer_norm, group_norm                                  */
/* ------------------------------------------------------------------ */

/* Mean and 1/sqrt(biased variance + eps) of the n values x[i*stride + j]
 * for i < rows, j < n / rows (rows runs of a strided layout). */
static void moments(const float *x, int64_t rows, int64_t len, int64_t stride,
                    float eps, float *mean, float *inv) {
  double sum = 0.0, sq = 0.0, cnt = (double)(rows * len);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < len; j++)
      sum += x[r * stride + j];
  double mu = sum / cnt;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < len; j++) {
      double d = x[r * stride + j] - mu;
      sq += d * d;
    }
  *mean = (float)mu;
  *inv = 1.0f / sqrtf((float)(sq / cnt) + eps);
}

dy_status dy_kernel_batch_norm(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 5, out, err);
  if (s != DY_OK)
    return s;
  dy_batch_norm_attrs a = dy_batch_norm_attrs_get(op);
  double eps = a.epsilon;
  bool is_test = a.is_test != 0;
  const dy_type *t = &in[0]->type;
  int64_t n = t->shape[0], c = t->shape[1], sp = dims_product(t, 2, t->rank);
  const float *x = in[0]->data, *scale = in[1]->data, *bias = in[2]->data;
  const float *rmean = in[3]->data, *rvar = in[4]->data;
  float *y = out[0]->data;
  if (n * sp == 0)
    return DY_OK;
  for (int64_t ch = 0; ch < c; ch++) {
    float m, inv;
    if (is_test) {
      m = rmean[ch];
      inv = 1.0f / sqrtf(rvar[ch] + (float)eps);
    } else { /* this batch's statistics over n and the spatial dims */
      moments(x + ch * sp, n, sp, c * sp, (float)eps, &m, &inv);
    }
    for (int64_t i = 0; i < n; i++) {
      const float *xr = x + (i * c + ch) * sp;
      float *yr = y + (i * c + ch) * sp;
      for (int64_t j = 0; j < sp; j++)
        yr[j] = (xr[j] - m) * inv * scale[ch] + bias[ch];
    }
  }
  return DY_OK;
}

dy_status dy_kernel_layer_norm(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  dy_layer_norm_attrs a = dy_layer_norm_attrs_get(op);
  double eps = a.epsilon;
  const dy_type *t = &in[0]->type;
  int64_t axis = a.begin_norm_axis;
  int ax = (int)(axis < 0 ? axis + t->rank : axis);
  int64_t rows = dims_product(t, 0, ax), cols = dims_product(t, ax, t->rank);
  const float *x = in[0]->data, *scale = in[1]->data, *bias = in[2]->data;
  float *y = out[0]->data;
  if (cols == 0)
    return DY_OK;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m, inv;
    moments(xr, 1, cols, cols, (float)eps, &m, &inv);
    for (int64_t j = 0; j < cols; j++)
      yr[j] = (xr[j] - m) * inv * scale[j] + bias[j];
  }
  return DY_OK;
}

dy_status dy_kernel_group_norm(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  dy_group_norm_attrs a = dy_group_norm_attrs_get(op);
  double eps = a.epsilon;
  const dy_type *t = &in[0]->type;
  int64_t groups = a.groups;
  int64_t n = t->shape[0], c = t->shape[1], sp = dims_product(t, 2, t->rank);
  int64_t cg = c / groups, len = cg * sp;
  const float *x = in[0]->data, *scale = in[1]->data, *bias = in[2]->data;
  float *y = out[0]->data;
  if (len == 0)
    return DY_OK;
  for (int64_t i = 0; i < n; i++)
    for (int64_t gi = 0; gi < groups; gi++) {
      /* a group's channels are contiguous: cg * sp values */
      const float *xg = x + (i * c + gi * cg) * sp;
      float *yg = y + (i * c + gi * cg) * sp;
      float m, inv;
      moments(xg, 1, len, len, (float)eps, &m, &inv);
      for (int64_t cc = 0; cc < cg; cc++) {
        int64_t ch = gi * cg + cc;
        for (int64_t j = 0; j < sp; j++)
          yg[cc * sp + j] = (xg[cc * sp + j] - m) * inv * scale[ch] + bias[ch];
      }
    }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* dropout                                                             */
/* ------------------------------------------------------------------ */

#define GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64's output function (see the file comment). */
static uint64_t mix64(uint64_t v) {
  uint64_t z = v + GOLDEN;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

dy_status dy_kernel_dropout(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  dy_status s = check_nn(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  dy_dropout_attrs a = dy_dropout_attrs_get(op);
  float p = (float)a.p;
  bool is_test = a.is_test != 0;
  uint64_t seed = (uint64_t)a.seed;
  int64_t n = dy_tensor_numel(in[0]);
  const float *x = in[0]->data;
  float *y = out[0]->data;
  if (is_test || p == 0.0f) { /* identity */
    if (n)
      memcpy(y, x, sizeof(float) * (size_t)n);
    return DY_OK;
  }
  if (p >= 1.0f) {
    memset(y, 0, sizeof(float) * (size_t)n);
    return DY_OK;
  }
  uint64_t threshold = (uint64_t)ceil((double)p * 16777216.0);
  float scale = 1.0f / (1.0f - p);
  for (int64_t i = 0; i < n; i++)
    y[i] = mix64(seed ^ ((uint64_t)i * GOLDEN)) >> 40 >= threshold ? x[i] * scale
                                                                    : 0.0f;
  return DY_OK;
}
