/* kernels_quant.c - reference kernels of the quant family
 * (ir/ops_quant.def, whose header states the semantics; shapes and dtypes:
 * ir/infer/infer_quant.c).
 *
 * Straightforward loops, one output element at a time, over the
 * fixed-point functions of ir/dy_qfixed.h (the very text the generated C
 * carries) and the multipliers of ir/core/quant.c, so the executor and the
 * compiled code agree bit for bit:
 *
 *   quantize_linear    clamp(dy_q_round_f32(x / scale) + zp) (ties to even)
 *   dequantize_linear  (float)(x - zp) * scale
 *   qconv2d, qmatmul   acc = bias + sum (x - x_zp)(w - w_zp) in int32, then
 *                      clamp(dy_q_add_sat(dy_q_mul_by_qm(acc, m[c], s[c]),
 *                      y_zp), act range), m and s from x_scale * w_scale[c] / y_scale
 *   qadd               TFLite ADD: (a - a_zp) << 20 and (b - b_zp) << 20
 *                      each times its multiplier, summed, times the
 *                      output multiplier, + y_zp
 *   qmul               TFLite MUL: (a - a_zp)(b - b_zp) times a_scale *
 *                      b_scale / y_scale, + y_zp
 *   qsoftmax           dy_q_softmax_row along the axis
 *   matmul_integer, conv_integer  the int32 sums alone
 *
 * Accumulation is int32 as in TFLite (a product of two 8-bit values minus
 * their zero points is below 2^16, so 2^15 of them fit).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_qfixed.h"
#include "kernels_internal.h"

#define OPNAME(op) dy_op_name((op)->kind)

/* Element i of a quantized tensor (i8, u8 or i32) as int32. */
static int32_t qv(const dy_tensor *t, int64_t i) {
  return dy_quant_value(t->type.dtype, t->data, i);
}

static float fv(const dy_tensor *t, int64_t i) { return ((const float *)t->data)[i]; }

/* Element i of a per-tensor or per-channel parameter. */
static int64_t pick(const dy_tensor *t, int64_t c) { return dy_tensor_numel(t) == 1 ? 0 : c; }

static void store_q(dy_tensor *t, int64_t i, int32_t v) {
  switch (t->type.dtype) {
  case DY_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
  case DY_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
  default: ((int32_t *)t->data)[i] = v; break;
  }
}

static dy_status check(const dy_op *op, dy_tensor *const *in, int n_in, int want,
                       dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, want, out, err);
  return s ? s : dy_kcheck_inferred(op, in, n_in, out, false, err);
}

/* A scale must be positive and finite. */
static dy_status check_scales(const dy_op *op, dy_tensor *const *in, const int *idx, int n,
                              dy_error *err) {
  for (int k = 0; k < n; k++)
    for (int64_t i = 0; i < dy_tensor_numel(in[idx[k]]); i++) {
      float v = fv(in[idx[k]], i);
      if (!(v > 0.0f) || v > 3.0e38f)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "%s: scale (input %d) element %lld is %g, must be positive "
                           "and finite", OPNAME(op), idx[k], (long long)i, (double)v);
    }
  return DY_OK;
}

/* The channel axis and its extent for quantize/dequantize; inner is the
 * product of the dims after it. */
static void axis_split(const dy_type *t, int64_t axis, int64_t *c, int64_t *inner) {
  int ax = t->rank == 0 ? 0 : (int)(axis < 0 ? axis + t->rank : axis);
  *c = t->rank == 0 ? 1 : t->shape[ax];
  *inner = 1;
  for (int d = ax + 1; d < t->rank; d++)
    *inner *= t->shape[d];
}

dy_status dy_kernel_quantize_linear(const dy_op *op, dy_tensor *const *in, int n_in,
                                    dy_tensor *const *out, dy_error *err) {
  static const int scales[] = {1};
  dy_status s = check(op, in, n_in, 3, out, err);
  if (s || (s = check_scales(op, in, scales, 1, err)))
    return s;
  int64_t c, inner, n = dy_tensor_numel(in[0]);
  axis_split(&in[0]->type, dy_quantize_linear_attrs_get(op).axis, &c, &inner);
  int32_t lo, hi;
  dy_quant_range(out[0]->type.dtype, &lo, &hi);
  for (int64_t i = 0; i < n; i++) {
    int64_t ch = pick(in[1], (i / inner) % c);
    int32_t q = dy_q_round_f32(fv(in[0], i) / fv(in[1], ch)) + qv(in[2], ch);
    store_q(out[0], i, dy_q_clamp(q, lo, hi));
  }
  return DY_OK;
}

dy_status dy_kernel_dequantize_linear(const dy_op *op, dy_tensor *const *in, int n_in,
                                      dy_tensor *const *out, dy_error *err) {
  dy_status s = check(op, in, n_in, 3, out, err);
  if (s)
    return s;
  int64_t c, inner, n = dy_tensor_numel(in[0]);
  axis_split(&in[0]->type, dy_dequantize_linear_attrs_get(op).axis, &c, &inner);
  float *y = out[0]->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t ch = pick(in[1], (i / inner) % c);
    y[i] = (float)(qv(in[0], i) - qv(in[2], ch)) * fv(in[1], ch);
  }
  return DY_OK;
}

/* ---- convolution and matmul: int32 sums, then requantization ---- */

/* acc[n, o, oy, ox] = sum (x - x_zp)(w - w_zp[o]) for conv2d's geometry;
 * writes the sums through put(ctx, index, channel, acc). */
typedef void (*put_fn)(void *ctx, int64_t i, int64_t ch, int32_t acc);

static void conv_sums(const dy_op *op, const dy_tensor *x, const dy_tensor *w, int32_t x_zp,
                      const dy_tensor *w_zp, put_fn put, void *ctx) {
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op);
  dy_conv_geom g = dy_conv2d_geom(&x->type, &w->type, &a);
  int64_t cg = g.c / g.groups, og = g.o / g.groups;
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t o = 0; o < g.o; o++) {
      int64_t gi = o / og;
      int32_t wz = qv(w_zp, pick(w_zp, o));
      for (int64_t oy = 0; oy < g.oh; oy++)
        for (int64_t ox = 0; ox < g.ow; ox++) {
          int32_t acc = 0;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t ky = 0; ky < g.kh; ky++) {
              int64_t iy = oy * g.sh - g.pt + ky * g.dh;
              if (iy < 0 || iy >= g.h)
                continue;
              for (int64_t kx = 0; kx < g.kw; kx++) {
                int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                if (ix < 0 || ix >= g.w)
                  continue;
                int32_t xv = qv(x, ((n * g.c + gi * cg + ci) * g.h + iy) * g.w + ix);
                int32_t wv = qv(w, ((o * cg + ci) * g.kh + ky) * g.kw + kx);
                acc += (xv - x_zp) * (wv - wz);
              }
            }
          put(ctx, ((n * g.o + o) * g.oh + oy) * g.ow + ox, o, acc);
        }
    }
}

/* acc[.., m, j] = sum_k (a - a_zp)(b - b_zp[j]); b [K, N] (trans: [N, K])
 * shared or one per batch. */
static void matmul_sums(const dy_tensor *a, const dy_tensor *b, bool trans, int32_t a_zp,
                        const dy_tensor *b_zp, put_fn put, void *ctx) {
  const dy_type *ta = &a->type, *tb = &b->type;
  int64_t m = ta->shape[ta->rank - 2], k = ta->shape[ta->rank - 1];
  int64_t nn = tb->shape[tb->rank - (trans ? 2 : 1)];
  int64_t batches = dy_tensor_numel(a) / (m * k > 0 ? m * k : 1);
  if (m * k == 0)
    batches = 1;
  for (int64_t bi = 0; bi < batches; bi++) {
    int64_t boff = tb->rank > 2 ? bi * k * nn : 0;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < nn; j++) {
        int32_t bz = qv(b_zp, pick(b_zp, j)), acc = 0;
        for (int64_t kk = 0; kk < k; kk++)
          acc += (qv(a, (bi * m + i) * k + kk) - a_zp) *
                 (qv(b, boff + (trans ? j * k + kk : kk * nn + j)) - bz);
        put(ctx, (bi * m + i) * nn + j, j, acc);
      }
  }
}

static void put_i32(void *ctx, int64_t i, int64_t ch, int32_t acc) {
  (void)ch;
  ((int32_t *)ctx)[i] = acc;
}

/* Requantization of a qconv2d / qmatmul output. */
typedef struct {
  dy_tensor *y;
  const int32_t *bias;
  int32_t *mult, *shift;  /* per channel (or one) */
  bool per_channel;
  int32_t y_zp, lo, hi;
} requant;

static void put_requant(void *ctx, int64_t i, int64_t ch, int32_t acc) {
  requant *r = ctx;
  int64_t c = r->per_channel ? ch : 0;
  int32_t v = dy_q_add_sat(dy_q_mul_by_qm(acc + r->bias[ch], r->mult[c], r->shift[c]), r->y_zp);
  store_q(r->y, i, dy_q_clamp(v, r->lo, r->hi));
}

/* The multipliers x_scale * w_scale[c] / y_scale of inputs 1, 4, 6. */
static dy_status requant_make(const dy_op *op, dy_tensor *const *in, dy_tensor *y,
                              int64_t act_min, int64_t act_max, requant *r, dy_error *err) {
  static const int scales[] = {1, 4, 6};
  dy_status s = check_scales(op, in, scales, 3, err);
  if (s)
    return s;
  int64_t nc = dy_tensor_numel(in[4]);
  r->y = y;
  r->bias = in[8]->data;
  r->per_channel = nc > 1;
  r->mult = malloc(sizeof(int32_t) * 2 * (size_t)nc);
  if (!r->mult)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", OPNAME(op));
  r->shift = r->mult + nc;
  for (int64_t c = 0; c < nc; c++)
    dy_quant_multiplier((double)fv(in[1], 0) * (double)fv(in[4], c) / (double)fv(in[6], 0),
                        &r->mult[c], &r->shift[c]);
  r->y_zp = qv(in[7], 0);
  dy_quant_act_range(y->type.dtype, act_min, act_max, &r->lo, &r->hi);
  return DY_OK;
}

dy_status dy_kernel_qconv2d(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  dy_status s = check(op, in, n_in, 9, out, err);
  requant r;
  dy_qconv2d_attrs a = dy_qconv2d_attrs_get(op);
  if (s || (s = requant_make(op, in, out[0], a.act_min, a.act_max, &r, err)))
    return s;
  conv_sums(op, in[0], in[3], qv(in[2], 0), in[5], put_requant, &r);
  free(r.mult);
  return DY_OK;
}

dy_status dy_kernel_qmatmul(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  dy_status s = check(op, in, n_in, 9, out, err);
  requant r;
  dy_qmatmul_attrs a = dy_qmatmul_attrs_get(op);
  if (s || (s = requant_make(op, in, out[0], a.act_min, a.act_max, &r, err)))
    return s;
  matmul_sums(in[0], in[3], a.transpose_y != 0, qv(in[2], 0), in[5], put_requant, &r);
  free(r.mult);
  return DY_OK;
}

dy_status dy_kernel_matmul_integer(const dy_op *op, dy_tensor *const *in, int n_in,
                                   dy_tensor *const *out, dy_error *err) {
  dy_status s = check(op, in, n_in, 4, out, err);
  if (s)
    return s;
  matmul_sums(in[0], in[1], false, qv(in[2], 0), in[3], put_i32, out[0]->data);
  return DY_OK;
}

dy_status dy_kernel_conv_integer(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  dy_status s = check(op, in, n_in, 4, out, err);
  if (s)
    return s;
  conv_sums(op, in[0], in[1], qv(in[2], 0), in[3], put_i32, out[0]->data);
  return DY_OK;
}

/* ---- qadd, qmul: broadcasting over an odometer ---- */

/* For output element i, the offsets into a and b (numpy broadcasting). */
typedef struct {
  int rank;
  int64_t shape[DY_MAX_DIMS], sa[DY_MAX_DIMS], sb[DY_MAX_DIMS];
} bcast;

static void bcast_make(const dy_type *a, const dy_type *b, const dy_type *y, bcast *p) {
  p->rank = y->rank;
  int64_t stra = 1, strb = 1;
  for (int d = y->rank - 1; d >= 0; d--) {
    int da = d - (y->rank - a->rank), db = d - (y->rank - b->rank);
    p->shape[d] = y->shape[d];
    p->sa[d] = da >= 0 && a->shape[da] != 1 ? stra : 0;
    p->sb[d] = db >= 0 && b->shape[db] != 1 ? strb : 0;
    if (da >= 0)
      stra *= a->shape[da];
    if (db >= 0)
      strb *= b->shape[db];
  }
}

static dy_status qbinary(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, bool add, dy_error *err) {
  static const int scales[] = {1, 4, 6};
  dy_status s = check(op, in, n_in, 8, out, err);
  if (s || (s = check_scales(op, in, scales, 3, err)))
    return s;
  dy_qadd_attrs at = dy_qadd_attrs_get(op); /* qmul's are the same */
  int32_t lo, hi, mult[3], shift[3];
  dy_quant_act_range(out[0]->type.dtype, at.act_min, at.act_max, &lo, &hi);
  if (add)
    dy_quant_add_params(fv(in[1], 0), fv(in[4], 0), fv(in[6], 0), mult, shift);
  else
    dy_quant_multiplier((double)fv(in[1], 0) * (double)fv(in[4], 0) / (double)fv(in[6], 0),
                        &mult[2], &shift[2]);
  int32_t a_zp = qv(in[2], 0), b_zp = qv(in[5], 0), y_zp = qv(in[7], 0);
  bcast p;
  bcast_make(&in[0]->type, &in[3]->type, &out[0]->type, &p);
  int64_t idx[DY_MAX_DIMS] = {0}, n = dy_tensor_numel(out[0]);
  for (int64_t i = 0; i < n; i++) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < p.rank; d++)
      oa += idx[d] * p.sa[d], ob += idx[d] * p.sb[d];
    int32_t va = qv(in[0], oa) - a_zp, vb = qv(in[3], ob) - b_zp, v;
    if (add) {
      int32_t sa = dy_q_mul_by_qm(va * (1 << DY_QADD_LEFT_SHIFT), mult[0], shift[0]);
      int32_t sb = dy_q_mul_by_qm(vb * (1 << DY_QADD_LEFT_SHIFT), mult[1], shift[1]);
      v = dy_q_add_sat(dy_q_mul_by_qm(sa + sb, mult[2], shift[2]), y_zp);
    } else {
      v = dy_q_add_sat(dy_q_mul_by_qm(va * vb, mult[2], shift[2]), y_zp);
    }
    store_q(out[0], i, dy_q_clamp(v, lo, hi));
    for (int d = p.rank - 1; d >= 0 && ++idx[d] == p.shape[d]; d--)
      idx[d] = 0;
  }
  return DY_OK;
}

dy_status dy_kernel_qadd(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  return qbinary(op, in, n_in, out, true, err);
}

dy_status dy_kernel_qmul(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  return qbinary(op, in, n_in, out, false, err);
}

/* ---- qsoftmax ---- */

/* y's parameters must be TFLite's: scale 1/256, zero point the dtype's
 * minimum. */
static dy_status check_softmax_out(const dy_op *op, float y_scale, int32_t y_zp, dy_dtype t,
                                   dy_error *err) {
  int32_t want = t == DY_U8 ? 0 : -128;
  if (y_scale != 1.0f / 256.0f || y_zp != want)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "qsoftmax: y_scale %g and y_zero_point %d; the output must be scale "
                       "1/256 with zero point %d", (double)y_scale, (int)y_zp, (int)want);
  return DY_OK;
}

dy_status dy_kernel_qsoftmax(const dy_op *op, dy_tensor *const *in, int n_in,
                             dy_tensor *const *out, dy_error *err) {
  static const int scales[] = {1, 3};
  dy_status s = check(op, in, n_in, 5, out, err);
  if (s || (s = check_scales(op, in, scales, 2, err)) ||
      (s = check_softmax_out(op, fv(in[3], 0), qv(in[4], 0), out[0]->type.dtype, err)))
    return s;
  const dy_type *t = &in[0]->type;
  int64_t axis = dy_qsoftmax_attrs_get(op).axis;
  int ax = (int)(axis < 0 ? axis + t->rank : axis);
  int64_t outer = 1, inner = 1, n = t->shape[ax];
  for (int d = 0; d < ax; d++)
    outer *= t->shape[d];
  for (int d = ax + 1; d < t->rank; d++)
    inner *= t->shape[d];
  int32_t mult, lshift, diff_min;
  dy_quant_softmax_params(fv(in[1], 0), &mult, &lshift, &diff_min);
  bool u8 = t->dtype == DY_U8;
  const uint8_t *x = in[0]->data;
  uint8_t *y = out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      dy_q_softmax_row(x + o * n * inner + i, y + o * n * inner + i, n, inner, u8, mult,
                       lshift, diff_min);
  return DY_OK;
}
