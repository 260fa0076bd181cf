/* kernels_lod.c - the kernels of the LoD sequence ops (ir/ops_lod.def):
 *
 *   sequence_pool   each sequence's rows pooled into one row
 *   lstm, gru       each sequence stepped row by row (reverse: from its
 *                   last), h (and c) from h0 (c0) or zeros
 *   sequence_pad    each sequence into padded_length rows; sequence_len
 *   crf_decoding    each sequence's Viterbi path
 *
 * Every kernel first checks its offsets against the values' rows
 * (dy_lod_bad_offset) and fails naming the entry. The generated kernels
 * (codegen/ops/emit_lod.c) compute the same sums in the same order; change
 * one, change the other.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_lod.h"
#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

/* The offsets in[k] against t rows: off[0] = 0, non-decreasing, last = t. */
static dy_status check_offsets(const dy_op *op, const dy_tensor *o, int64_t t, dy_error *err) {
  const int64_t *off = o->data;
  int64_t n = o->type.shape[0], bad = dy_lod_bad_offset(off, n, t);
  if (bad < 0)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                     "%s: LoD offset %lld is %lld: the offsets must start at 0, never "
                     "decrease and end at the values' %lld rows", op_name(op),
                     (long long)bad, (long long)off[bad], (long long)t);
}

dy_status dy_kernel_sequence_pool(const dy_op *op, dy_tensor *const *in, int n_in,
                                  dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 2, out, err);
  if (s || (s = check_offsets(op, in[1], in[0]->type.shape[0], err)))
    return s;
  dy_sequence_pool_attrs a = dy_sequence_pool_attrs_get(op);
  dy_seq_pool_kind k = dy_seq_pool_kind_of(a.pooltype);
  const float *x = in[0]->data;
  const int64_t *off = in[1]->data;
  float *y = out[0]->data;
  int64_t ns = out[0]->type.shape[0], d = 1; /* d: the elements of a row */
  for (int i = 1; i < out[0]->type.rank; i++)
    d *= out[0]->type.shape[i];
  for (int64_t q = 0; q < ns; q++) {
    int64_t b = off[q], e = off[q + 1], len = e - b;
    float *yr = y + q * d;
    for (int64_t j = 0; j < d; j++) {
      if (len == 0) {
        yr[j] = (float)a.pad_value;
        continue;
      }
      if (k == DY_POOL_LAST || k == DY_POOL_FIRST) {
        yr[j] = x[(k == DY_POOL_LAST ? e - 1 : b) * d + j];
        continue;
      }
      float acc = x[b * d + j];
      for (int64_t r = b + 1; r < e; r++) {
        float v = x[r * d + j];
        acc = k == DY_POOL_MAX ? (v > acc ? v : acc) : acc + v;
      }
      if (k == DY_POOL_AVERAGE)
        acc = acc / (float)len;
      else if (k == DY_POOL_SQRT)
        acc = acc / sqrtf((float)len);
      yr[j] = acc;
    }
  }
  return DY_OK;
}

static float act(dy_lod_act a, float v) {
  switch (a) {
  case DY_LOD_ACT_SIGMOID:
    return 1.0f / (1.0f + expf(-v));
  case DY_LOD_ACT_TANH:
    return tanhf(v);
  case DY_LOD_ACT_RELU:
    return v > 0.0f ? v : 0.0f;
  default:
    return v;
  }
}

/* One lstm step of row t: g = x[t] + bias + h W (the 4D gates, in
 * place), then the cell c and hidden h in place, h written to y[t]. */
static void lstm_step(const dy_lstm_attrs *a, int64_t dd, const float *xt, const float *w,
                      const float *bias, float *g, float *h, float *c, float *yt) {
  dy_lod_act ga = dy_lod_act_of(a->gate_activation), ca = dy_lod_act_of(a->cell_activation);
  dy_lod_act na = dy_lod_act_of(a->candidate_activation);
  const float *pi = bias + 4 * dd, *pf = bias + 5 * dd, *po = bias + 6 * dd;
  for (int64_t j = 0; j < 4 * dd; j++)
    g[j] = xt[j] + bias[j];
  for (int64_t k = 0; k < dd; k++)
    for (int64_t j = 0; j < 4 * dd; j++)
      g[j] += h[k] * w[k * 4 * dd + j];
  for (int64_t j = 0; j < dd; j++) {
    float cand = act(na, g[j]), cp = c[j];
    float ig = act(ga, g[dd + j] + (a->use_peepholes ? cp * pi[j] : 0.0f));
    float fg = act(ga, g[2 * dd + j] + (a->use_peepholes ? cp * pf[j] : 0.0f));
    float cn = cand * ig + cp * fg;
    float og = act(ga, g[3 * dd + j] + (a->use_peepholes ? cn * po[j] : 0.0f));
    c[j] = cn;
    h[j] = og * act(ca, cn);
    yt[j] = h[j];
  }
}

dy_status dy_kernel_lstm(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, n_in == 6 ? 6 : 4, out, err);
  if (s || (s = check_offsets(op, in[1], in[0]->type.shape[0], err)))
    return s;
  dy_lstm_attrs a = dy_lstm_attrs_get(op);
  int64_t dd = out[0]->type.shape[1], ns = in[1]->type.shape[0] - 1;
  const int64_t *off = in[1]->data;
  const float *x = in[0]->data, *w = in[2]->data, *bias = in[3]->data;
  float *y = out[0]->data, *g = malloc(sizeof(float) * (size_t)(6 * dd));
  if (!g)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", op_name(op));
  float *h = g + 4 * dd, *c = g + 5 * dd;
  for (int64_t q = 0; q < ns; q++) {
    for (int64_t j = 0; j < dd; j++) {
      h[j] = n_in == 6 ? ((const float *)in[4]->data)[q * dd + j] : 0.0f;
      c[j] = n_in == 6 ? ((const float *)in[5]->data)[q * dd + j] : 0.0f;
    }
    for (int64_t i = 0; i < off[q + 1] - off[q]; i++) {
      int64_t t = a.is_reverse ? off[q + 1] - 1 - i : off[q] + i;
      lstm_step(&a, dd, x + t * 4 * dd, w, bias, g, h, c, y + t * dd);
    }
  }
  free(g);
  return DY_OK;
}

dy_status dy_kernel_sequence_pad(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 3, out, err);
  if (s || (s = check_offsets(op, in[1], in[0]->type.shape[0], err)))
    return s;
  int64_t ns = out[0]->type.shape[0], len = out[0]->type.shape[1], d = 1;
  for (int i = 2; i < out[0]->type.rank; i++)
    d *= out[0]->type.shape[i];
  const int64_t *off = in[1]->data;
  const float *x = in[0]->data, pad = *(const float *)in[2]->data;
  float *y = out[0]->data;
  for (int64_t q = 0; q < ns; q++) {
    int64_t b = off[q], n = off[q + 1] - b;
    if (n > len)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: sequence %lld has %lld "
                         "rows, above padded_length %lld", op_name(op), (long long)q,
                         (long long)n, (long long)len);
    for (int64_t r = 0; r < len; r++)
      for (int64_t j = 0; j < d; j++)
        y[(q * len + r) * d + j] = r < n ? x[(b + r) * d + j] : pad;
  }
  return DY_OK;
}

dy_status dy_kernel_sequence_len(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 1, out, err);
  const int64_t *off = in[0]->data;
  if (s || (s = check_offsets(op, in[0], off[in[0]->type.shape[0] - 1], err)))
    return s;
  int64_t *y = out[0]->data;
  for (int64_t q = 0; q < out[0]->type.shape[0]; q++)
    y[q] = off[q + 1] - off[q];
  return DY_OK;
}

/* One gru step of row t (g: the 3D gates, h: the hidden in place). */
static void gru_step(const dy_gru_attrs *a, int64_t dd, const float *xt, const float *w,
                     const float *bias, float *g, float *h, float *yt) {
  dy_lod_act ga = dy_lod_act_of(a->gate_activation), ca = dy_lod_act_of(a->activation);
  const float *wc = w + 2 * dd * dd; /* the candidate's [D, D] */
  for (int64_t j = 0; j < 3 * dd; j++)
    g[j] = xt[j] + bias[j];
  for (int64_t k = 0; k < dd; k++)
    for (int64_t j = 0; j < 2 * dd; j++)
      g[j] += h[k] * w[k * 2 * dd + j];
  for (int64_t j = 0; j < 2 * dd; j++)
    g[j] = act(ga, g[j]);
  for (int64_t k = 0; k < dd; k++) /* the candidate on reset * h */
    for (int64_t j = 0; j < dd; j++)
      g[2 * dd + j] += g[dd + k] * h[k] * wc[k * dd + j];
  for (int64_t j = 0; j < dd; j++) {
    float u = g[j], cand = act(ca, g[2 * dd + j]);
    h[j] = a->origin_mode ? u * h[j] + (1.0f - u) * cand : h[j] - u * h[j] + u * cand;
    yt[j] = h[j];
  }
}

dy_status dy_kernel_gru(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, n_in == 5 ? 5 : 4, out, err);
  if (s || (s = check_offsets(op, in[1], in[0]->type.shape[0], err)))
    return s;
  dy_gru_attrs a = dy_gru_attrs_get(op);
  int64_t dd = out[0]->type.shape[1], ns = in[1]->type.shape[0] - 1;
  const int64_t *off = in[1]->data;
  float *g = malloc(sizeof(float) * (size_t)(4 * dd));
  if (!g)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", op_name(op));
  float *h = g + 3 * dd;
  for (int64_t q = 0; q < ns; q++) {
    for (int64_t j = 0; j < dd; j++)
      h[j] = n_in == 5 ? ((const float *)in[4]->data)[q * dd + j] : 0.0f;
    for (int64_t i = 0; i < off[q + 1] - off[q]; i++) {
      int64_t t = a.is_reverse ? off[q + 1] - 1 - i : off[q] + i;
      gru_step(&a, dd, (const float *)in[0]->data + t * 3 * dd, in[2]->data, in[3]->data, g, h,
               (float *)out[0]->data + t * dd);
    }
  }
  free(g);
  return DY_OK;
}

/* The Viterbi path of one sequence of n rows (x: its emission rows). */
static void viterbi(const float *x, int64_t n, int64_t k, const float *tr, float *alpha,
                    int64_t *track, int64_t *path) {
  const float *start = tr, *end = tr + k, *w = tr + 2 * k;
  for (int64_t j = 0; j < k; j++)
    alpha[j] = start[j] + x[j];
  for (int64_t t = 1; t < n; t++)
    for (int64_t j = 0; j < k; j++) {
      float best = alpha[(t - 1) * k] + w[j];
      int64_t arg = 0;
      for (int64_t i = 1; i < k; i++) {
        float v = alpha[(t - 1) * k + i] + w[i * k + j];
        if (v > best) {
          best = v;
          arg = i;
        }
      }
      alpha[t * k + j] = best + x[t * k + j];
      track[t * k + j] = arg;
    }
  float best = alpha[(n - 1) * k] + end[0];
  int64_t arg = 0;
  for (int64_t j = 1; j < k; j++)
    if (alpha[(n - 1) * k + j] + end[j] > best) {
      best = alpha[(n - 1) * k + j] + end[j];
      arg = j;
    }
  for (int64_t t = n - 1; t > 0; t--) {
    path[t] = arg;
    arg = track[t * k + arg];
  }
  path[0] = arg;
}

dy_status dy_kernel_crf_decoding(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 3, out, err);
  int64_t t = in[0]->type.shape[0], k = in[0]->type.shape[1], ns = in[1]->type.shape[0] - 1;
  if (s || (s = check_offsets(op, in[1], t, err)))
    return s;
  const int64_t *off = in[1]->data;
  float *alpha = malloc(sizeof(float) * (size_t)(t * k + 1));
  int64_t *track = malloc(sizeof(int64_t) * (size_t)(t * k + 1));
  if (!alpha || !track) {
    free(alpha);
    free(track);
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", op_name(op));
  }
  for (int64_t q = 0; q < ns; q++)
    if (off[q + 1] > off[q])
      viterbi((const float *)in[0]->data + off[q] * k, off[q + 1] - off[q], k, in[2]->data,
              alpha, track, (int64_t *)out[0]->data + off[q]);
  free(alpha);
  free(track);
  return DY_OK;
}
