/* difftest_quant.c - the differential tester's quant-family recipe
 * (ir/ops_quant.def; difftest.c draws dt_recipe_quant, difftest_gen.h):
 * i8 / u8 values made by quantize_linear (per tensor or per channel) of
 * an f32 value, or feeds over the whole range, then qconv2d (dot form,
 * depthwise, grouped), qmatmul, qadd / qmul, qsoftmax, matmul_integer /
 * conv_integer, pool2d, transpose, reshape_dims, a clamp or concat on
 * quantized values; the result dequantized (i32 always) so that f32
 * chains go on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest_gen.h"

/* A constant [n] (rank 0 when n is 0) of dtype dt, random_tensor's data
 * in [lo, hi). */
static int const_vec(dt_prog *g, dy_dtype dt, int64_t n, double lo, double hi) {
  dy_type t = {.dtype = dt, .rank = n > 0, .shape = {n}};
  return dt_add_val(g, DT_CONST, &t, dt_random_tensor(&t, 1, rnd(g), lo, hi));
}

/* A per-tensor parameter: [1] or rank 0. */
static int64_t one(dt_prog *g) { return coin(g, 0.7) ? 1 : 0; }

/* A zero point of dtype dt ([n], or per tensor when n is 0): near the
 * middle of the range (i8 [-20, 20), u8 [108, 148), i32 [-50, 50)), or 0
 * when zero. */
static int zero_point(dt_prog *g, dy_dtype dt, int64_t n, bool zero) {
  if (n == 0)
    n = one(g);
  if (zero)
    return const_vec(g, dt, n, 0, 1);
  double lo = dt == DY_U8 ? 108 : dt == DY_I8 ? -20 : -50;
  return const_vec(g, dt, n, lo, lo + (dt == DY_I32 ? 100 : 40));
}

/* The whole range of dtype dt (a weight's or a feed's values). */
static double q_lo(dy_dtype dt) { return dt == DY_U8 ? 0 : -128; }
static double q_hi(dy_dtype dt) { return dt == DY_U8 ? 256 : 128; }

static float fval(const dt_prog *g, int v, int64_t k) {
  const dy_tensor *t = g->v[v].t;
  return ((const float *)t->data)[dy_tensor_numel(t) == 1 ? 0 : k];
}
static float fmean(const dt_prog *g, int v) {
  double s = 0;
  int64_t n = dy_tensor_numel(g->v[v].t);
  for (int64_t k = 0; k < n; k++)
    s += fval(g, v, k);
  return (float)(s / (double)n);
}

/* A quantized value of dtype dt (i8 / u8) and rank >= min_rank: one made
 * already, quantize_linear of an f32 value (per tensor or per channel), or
 * a new feed over the whole range. */
static int q_source(dt_prog *g, dy_dtype dt, int min_rank) {
  int x = dt_pick_val(g, dt, min_rank);
  if (x >= 0 && coin(g, 0.5))
    return x;
  int f = dt_pick_val(g, DY_F32, min_rank);
  if (f >= 0 && coin(g, 0.7)) {
    const dy_type *t = &g->v[f].type;
    double m = dt_max_abs(g->v[f].t) + 1e-3;
    int a = dt_static_axis(g, f);
    bool per_channel = a >= 0 && t->shape[a] <= 32 && coin(g, 0.3);
    int64_t n = per_channel ? t->shape[a] : 0;
    dt_op o = {.kind = DY_OP_QUANTIZE_LINEAR, .n_in = 3,
               .in = {f, const_vec(g, DY_F32, n ? n : one(g), m / 140, m / 40),
                      zero_point(g, dt, n, coin(g, 0.2))}};
    dt_set_i(&o, "axis", per_channel ? a : t->rank > 1);
    int y = dt_try_op(g, o);
    if (y >= 0)
      return y;
  }
  dy_type t = {.dtype = dt, .rank = min_rank > 2 ? 4 : 2 + (int)pick(g, 2), .shape = {-1}};
  if (t.rank == 4) {
    t.shape[1] = 1 + pick(g, 6);
    t.shape[2] = 3 + pick(g, 7);
    t.shape[3] = 3 + pick(g, 7);
  } else {
    for (int d = 1; d < t.rank; d++)
      t.shape[d] = 2 + pick(g, t.rank == 2 ? 40 : 8);
  }
  return dt_add_feed_in(g, &t, q_lo(dt), q_hi(dt));
}

/* The activation clamp of qconv2d / qmatmul / qadd / qmul: none, relu
 * (act_min = the y zero point) or a relu6-like upper bound too. */
static void q_act(dt_prog *g, dt_op *o, int y_zp) {
  int64_t zp = (int64_t)dt_value_at(g->v[y_zp].t, 0);
  double r = unif(g);
  if (r < 0.3)
    dt_set_i(o, "act_min", zp);
  if (r < 0.1)
    dt_set_i(o, "act_max", zp + 1 + pick(g, 100));
}

/* conv2d's attributes: strides, paddings (2 or 4), dilations, groups */
static void conv_attrs(dt_prog *g, dt_op *o, int64_t groups) {
  int64_t st[2] = {1 + pick(g, 2), 1 + pick(g, 2)};
  int64_t dl[2] = {coin(g, 0.2) ? 2 : 1, coin(g, 0.1) ? 2 : 1};
  int64_t pd[4] = {pick(g, 2), pick(g, 2), pick(g, 2), pick(g, 2)};
  dt_set_is(o, "strides", st, 2);
  dt_set_is(o, "dilations", dl, 2);
  dt_set_is(o, "paddings", pd, coin(g, 0.5) ? 2 : 4);
  dt_set_i(o, "groups", groups);
}

/* The inputs of a convolution [O, C/groups, kh, kw] of x (rank 4, C
 * channels): groups 1, 2 or C (depthwise, one or two outputs a channel);
 * *w gets a constant filter of dtype wdt over the whole range. */
static int64_t q_filter(dt_prog *g, int x, dy_dtype wdt, int *w, int64_t *groups, int64_t *taps) {
  int64_t c = g->v[x].type.shape[1];
  double r = unif(g);
  *groups = r < 0.35 ? c : (c % 2 == 0 && r < 0.5 ? 2 : 1);
  int64_t o = *groups == c && c > 1 ? c * (coin(g, 0.8) ? 1 : 2) : *groups * (1 + pick(g, 4));
  int64_t kh = 1 + pick(g, 3), kw = 1 + pick(g, 3);
  dy_type t = {.dtype = wdt, .rank = 4, .shape = {o, c / *groups, kh, kw}};
  *w = dt_add_val(g, DT_CONST, &t, dt_random_tensor(&t, 1, rnd(g), q_lo(wdt), q_hi(wdt)));
  *taps = c / *groups * kh * kw;
  return o;
}

/* qconv2d or qmatmul: x (i8 / u8), a constant weight (i8 mostly, with zero
 * zero points mostly: the dot-product forms), scales per channel or per
 * tensor, a y scale that keeps most outputs in range, an i32 bias. */
static int r_qlinear(dt_prog *g, dy_dtype dt, bool conv) {
  int x = q_source(g, dt, conv ? 4 : 2);
  if (x < 0)
    return -1;
  const dy_type *xt = &g->v[x].type;
  dy_dtype wdt = coin(g, 0.85) ? DY_I8 : DY_U8;
  int w;
  int64_t n, groups = 1, taps;
  bool ty = false;
  if (conv) {
    n = q_filter(g, x, wdt, &w, &groups, &taps);
  } else {
    taps = xt->shape[xt->rank - 1];
    if (taps < 1 || taps > 128)
      return -1;
    n = 1 + pick(g, 24);
    ty = coin(g, 0.6);
    dy_type t = {.dtype = wdt, .rank = 2, .shape = {ty ? n : taps, ty ? taps : n}};
    w = dt_add_val(g, DT_CONST, &t, dt_random_tensor(&t, 1, rnd(g), q_lo(wdt), q_hi(wdt)));
  }
  int64_t nw = coin(g, 0.6) ? n : 0;
  int xs = const_vec(g, DY_F32, one(g), 0.01, 0.1), ws = const_vec(g, DY_F32, nw ? nw : one(g), 0.002, 0.02);
  dy_dtype ydt = coin(g, 0.8) ? dt : (dt == DY_I8 ? DY_U8 : DY_I8);
  /* |acc| is about 60 * 70 * sqrt(taps): y in about +-60 */
  double ys = fval(g, xs, 0) * fmean(g, ws) * 70 * sqrt((double)taps) * (0.5 + 1.5 * unif(g));
  int yzp = zero_point(g, ydt, 0, coin(g, 0.2));
  dt_op o = {.kind = conv ? DY_OP_QCONV2D : DY_OP_QMATMUL, .n_in = 9,
             .in = {x, xs, zero_point(g, dt, 0, coin(g, 0.2)), w, ws,
                    zero_point(g, wdt, nw, wdt == DY_I8 && coin(g, 0.75)),
                    const_vec(g, DY_F32, one(g), ys, ys * 1.01), yzp,
                    const_vec(g, DY_I32, n, -2000, 2000)}};
  if (conv)
    conv_attrs(g, &o, groups);
  else
    dt_set_i(&o, "transpose_y", ty);
  q_act(g, &o, yzp);
  return dt_try_op(g, o);
}

/* qadd / qmul of x and another value, x itself or a broadcast constant,
 * all per tensor */
static int r_qbinary(dt_prog *g, dy_dtype dt) {
  int a = q_source(g, dt, 1);
  if (a < 0)
    return -1;
  bool mul = coin(g, 0.4);
  int b = a;
  double r = unif(g);
  if (r < 0.3)
    b = dt_pick_val(g, dt, 0);
  else if (r < 0.8)
    b = dt_broadcast_const(g, &g->v[a].type, q_lo(dt), q_hi(dt));
  if (b < 0)
    return -1;
  int as = const_vec(g, DY_F32, one(g), 0.01, 0.1), bs = const_vec(g, DY_F32, one(g), 0.01, 0.1);
  double ys = mul ? fval(g, as, 0) * fval(g, bs, 0) * 60 : (fval(g, as, 0) + fval(g, bs, 0)) * 0.8;
  ys *= 0.5 + unif(g);
  int yzp = zero_point(g, dt, 0, coin(g, 0.2));
  dt_op o = {.kind = mul ? DY_OP_QMUL : DY_OP_QADD, .n_in = 8,
             .in = {a, as, zero_point(g, dt, 0, false), b, bs, zero_point(g, dt, 0, false),
                    const_vec(g, DY_F32, one(g), ys, ys * 1.01), yzp}};
  if (coin(g, 0.3))
    o.in[0] = b, o.in[3] = a;
  q_act(g, &o, yzp);
  return dt_try_op(g, o);
}

/* matmul_integer / conv_integer against a constant: i32 results */
static int r_qinteger(dt_prog *g, dy_dtype dt, bool conv) {
  int x = q_source(g, dt, conv ? 4 : 2);
  if (x < 0)
    return -1;
  dy_dtype wdt = coin(g, 0.5) ? DY_I8 : DY_U8;
  int w;
  int64_t n, groups, taps;
  if (conv) {
    n = q_filter(g, x, wdt, &w, &groups, &taps);
  } else {
    const dy_type *xt = &g->v[x].type;
    int64_t k = xt->shape[xt->rank - 1];
    if (k < 1 || k > 128)
      return -1;
    n = 1 + pick(g, 16);
    dy_type t = {.dtype = wdt, .rank = 2, .shape = {k, n}};
    w = dt_add_val(g, DT_CONST, &t, dt_random_tensor(&t, 1, rnd(g), q_lo(wdt), q_hi(wdt)));
  }
  dt_op o = {.kind = conv ? DY_OP_CONV_INTEGER : DY_OP_MATMUL_INTEGER, .n_in = 4,
             .in = {x, w, zero_point(g, dt, 0, coin(g, 0.2)),
                    zero_point(g, wdt, coin(g, 0.5) ? n : 0, coin(g, 0.3))}};
  if (conv)
    conv_attrs(g, &o, groups);
  return dt_try_op(g, o);
}

/* qsoftmax: y in scale 1/256 with zero point -128 (i8) or 0 (u8) */
static int r_qsoftmax(dt_prog *g, dy_dtype dt) {
  int x = q_source(g, dt, 1);
  if (x < 0)
    return -1;
  dy_dtype ydt = dt; /* y's dtype is x's */
  int ys = const_vec(g, DY_F32, one(g), 1.0 / 256, 1.0 / 256);
  int yzp = const_vec(g, ydt, one(g), ydt == DY_I8 ? -128 : 0, ydt == DY_I8 ? -127 : 1);
  dt_op o = {.kind = DY_OP_QSOFTMAX, .n_in = 5,
             .in = {x, const_vec(g, DY_F32, one(g), 0.01, 0.3), zero_point(g, dt, 0, false), ys,
                    yzp}};
  int r = g->v[x].type.rank;
  dt_set_i(&o, "axis", pick(g, 2 * r) - r);
  return dt_try_op(g, o);
}

/* The dtype-generic ops on a quantized value: pool2d, transpose,
 * reshape_dims, a clamp (maximum / minimum with a constant), concat. */
static int r_qmove(dt_prog *g, dy_dtype dt) {
  int x = q_source(g, dt, 1);
  if (x < 0)
    return -1;
  const dy_type *t = &g->v[x].type;
  int r = t->rank;
  dt_op o = op1(DY_OP_TRANSPOSE, x);
  switch (pick(g, 5)) {
  case 0:
    if (r != 4)
      return -1;
    o.kind = DY_OP_POOL2D;
    dt_set_s(&o, "pooling_type", coin(g, 0.5) ? "max" : "avg");
    dt_set_is(&o, "ksize", (int64_t[]){1 + pick(g, 3), 1 + pick(g, 3)}, 2);
    dt_set_is(&o, "strides", (int64_t[]){1 + pick(g, 2), 1 + pick(g, 2)}, 2);
    dt_set_i(&o, "global_pooling", coin(g, 0.2));
    break;
  case 1: {
    int64_t perm[DY_MAX_DIMS];
    for (int d = 0; d < r; d++)
      perm[d] = d;
    if (r < 2)
      return -1;
    int64_t a = 1 + pick(g, r - 1), b = pick(g, r), s = perm[a];
    perm[a] = perm[b];
    perm[b] = s;
    dt_set_is(&o, "perm", perm, r);
    break;
  }
  case 2:
    return dt_reshape_dims(g, x);
  case 3:
    o = op2(coin(g, 0.5) ? DY_OP_MAXIMUM : DY_OP_MINIMUM, x,
            dt_broadcast_const(g, t, q_lo(dt) / 2, q_hi(dt) / 2));
    break;
  default: {
    int a = dt_static_axis(g, x);
    if (a < 0)
      return -1;
    o = op2(DY_OP_CONCAT, x, x);
    dt_set_i(&o, "axis", a);
  }
  }
  return dt_try_op(g, o);
}

/* dequantize_linear of x (i8 / u8 / i32), per tensor or per channel */
static int dequantize(dt_prog *g, int x) {
  const dy_type *t = &g->v[x].type;
  dy_dtype dt = t->dtype;
  int a = dt_static_axis(g, x);
  bool per_channel = a >= 0 && t->shape[a] <= 32 && coin(g, 0.3);
  int64_t n = per_channel ? t->shape[a] : 0;
  double lo = dt == DY_I32 ? 1e-4 : 0.005;
  dt_op o = {.kind = DY_OP_DEQUANTIZE_LINEAR, .n_in = 3,
             .in = {x, const_vec(g, DY_F32, n ? n : one(g), lo, lo * 10),
                    zero_point(g, dt, n, coin(g, 0.2))}};
  dt_set_i(&o, "axis", per_channel ? a : t->rank > 1);
  return dt_try_op(g, o);
}

/* One quant op (i8 or u8 in), its result dequantized mostly (so that f32
 * chains go on; the quantized value stays for the next quant recipe). */
void dt_recipe_quant(dt_prog *g) {
  dy_dtype dt = coin(g, 0.6) ? DY_I8 : DY_U8;
  int y;
  switch (pick(g, 9)) {
  case 0: case 1: y = r_qlinear(g, dt, true); break;
  case 2: y = r_qlinear(g, dt, false); break;
  case 3: y = r_qbinary(g, dt); break;
  case 4: y = r_qsoftmax(g, dt); break;
  case 5: y = r_qinteger(g, dt, false); break;
  case 6: y = r_qinteger(g, dt, true); break;
  case 7: y = r_qmove(g, dt); break;
  default: y = q_source(g, dt, 1); /* quantize_linear, dequantized */
  }
  if (y >= 0 && g->v[y].type.dtype != DY_F32 && (g->v[y].type.dtype == DY_I32 || coin(g, 0.7)))
    dequantize(g, y);
}
