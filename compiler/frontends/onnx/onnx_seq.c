/* onnx_seq.c - ONNX's recurrent and spectral ops onto the op table: RNN,
 * GRU, LSTM, DFT, STFT.
 *
 *   RNN, GRU, LSTM  unrolled over the (static) sequence: the input
 *                   projection X W^T + Wb + Rb is one matmul for all steps;
 *                   each step slices its row, adds h R^T and applies the
 *                   gates' activations, and the steps' outputs are
 *                   concatenated. Directions forward, reverse and
 *                   bidirectional, layout 0 and 1, clip, the activations
 *                   ONNX lists (with their alpha/beta), initial states,
 *                   peepholes. A zero initial state is [1, hidden] and
 *                   broadcasts, so the batch may be the dynamic dim.
 *   DFT, STFT       a matmul by constant cosine and sine matrices (the
 *                   real-input and one-sided forms included); STFT frames
 *                   the signal with a constant gather first.
 * Attribute lists with defaults are quoted above each mapper.
 */
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static ox_value *slice1(ox_ctx *c, ox_value *x, int64_t axis, int64_t start, int64_t end) {
  return ox_slice(c, x, 1, &start, &end, &axis, NULL);
}

/* x [.., n] @ w^T, w [m, n] -> [.., m] */
static ox_value *matmul_t(ox_ctx *c, ox_value *x, ox_value *w) {
  if (!x || !w)
    return NULL;
  ox_value *in[2] = {x, w};
  dy_attr a[DY_MATMUL_NATTRS];
  int n_a = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_x = 0, .transpose_y = 1}, a);
  return ox_op(c, "matmul", in, 2, a, n_a);
}

/* An activation ONNX's recurrent ops name, with its alpha and beta (NAN:
 * the default). */
static ox_value *activation(ox_ctx *c, const char *name, float alpha, float beta,
                            ox_value *x) {
  if (!x)
    return NULL;
  if (strcmp(name, "Sigmoid") == 0)
    return ox_unary(c, "sigmoid", x);
  if (strcmp(name, "Tanh") == 0)
    return ox_unary(c, "tanh", x);
  if (strcmp(name, "Relu") == 0)
    return ox_unary(c, "relu", x);
  if (strcmp(name, "LeakyRelu") == 0) {
    dy_attr a[DY_LEAKY_RELU_NATTRS];
    int n_a = dy_leaky_relu_attrs_put(&(dy_leaky_relu_attrs){
        .given = DY_GIVEN_ALL, .alpha = isnan(alpha) ? 0.01f : alpha}, a);
    return ox_op(c, "leaky_relu", &x, 1, a, n_a);
  }
  if (strcmp(name, "HardSigmoid") == 0) {
    dy_attr a[DY_HARD_SIGMOID_NATTRS];
    int n_a = dy_hard_sigmoid_attrs_put(&(dy_hard_sigmoid_attrs){
        .given = DY_GIVEN_ALL, .slope = isnan(alpha) ? 0.2f : alpha,
        .offset = isnan(beta) ? 0.5f : beta}, a);
    return ox_op(c, "hard_sigmoid", &x, 1, a, n_a);
  }
  if (strcmp(name, "Elu") == 0) {
    dy_attr a[DY_ELU_NATTRS];
    int n_a = dy_elu_attrs_put(&(dy_elu_attrs){
        .given = DY_GIVEN_ALL, .alpha = isnan(alpha) ? 1.0f : alpha}, a);
    return ox_op(c, "elu", &x, 1, a, n_a);
  }
  if (strcmp(name, "Affine") == 0)
    return ox_scale(c, x, isnan(alpha) ? 1.0f : alpha, isnan(beta) ? 0.0f : beta);
  if (strcmp(name, "ScaledTanh") == 0)
    return ox_scale(c, ox_unary(c, "tanh", ox_scale(c, x, isnan(beta) ? 1.0f : beta, 0.0f)),
                    isnan(alpha) ? 1.0f : alpha, 0.0f);
  if (strcmp(name, "Softsign") == 0)
    return ox_binary(c, "div", x, ox_scale(c, ox_unary(c, "abs", x), 1.0f, 1.0f));
  if (strcmp(name, "Softplus") == 0) {
    dy_attr a[DY_SOFTPLUS_NATTRS];
    int n_a = dy_softplus_attrs_put(&(dy_softplus_attrs){
        .given = DY_GIVEN_ALL, .beta = 1.0, .threshold = 20.0}, a);
    return ox_op(c, "softplus", &x, 1, a, n_a);
  }
  if (strcmp(name, "ThresholdedRelu") == 0) {
    ox_value *m = ox_binary(c, "greater", x, ox_const_f32(c, isnan(alpha) ? 1.0f : alpha));
    return ox_where(c, m, x, ox_const_f32(c, 0.0f));
  }
  ox_fail(c, DY_STATUS_UNSUPPORTED, "activation '%s'", name);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* RNN, GRU, LSTM                                                      */
/* ------------------------------------------------------------------ */

enum { CELL_RNN, CELL_GRU, CELL_LSTM };

typedef struct {
  int cell, gates, n_dir;
  int64_t H;                 /* hidden_size                                */
  bool reverse, linear_before_reset;
  float clip;                /* <= 0: none                                 */
  char act[6][32];           /* per direction: f, g, h (as the cell uses)  */
  float alpha[6], beta[6];
} rnn_cfg;

/* The pre-activation, clipped when clip is set. */
static ox_value *clipped(ox_ctx *c, const rnn_cfg *k, ox_value *x) {
  if (!x || k->clip <= 0)
    return x;
  dy_attr a[DY_CLIP_NATTRS];
  int n_a = dy_clip_attrs_put(&(dy_clip_attrs){
      .given = DY_GIVEN_ALL, .min = -k->clip, .max = k->clip}, a);
  return ox_op(c, "clip", &x, 1, a, n_a);
}

static ox_value *act_n(ox_ctx *c, const rnn_cfg *k, int d, int i, ox_value *x) {
  int n = k->cell == CELL_RNN ? 1 : k->cell == CELL_GRU ? 2 : 3;
  int j = d * n + i;
  return activation(c, k->act[j], k->alpha[j], k->beta[j], clipped(c, k, x));
}

/* One direction over the sequence: xw [T, B, G*H] (input projection plus
 * both biases), r [G*H, H], h0 and c0 [B or 1, H], p (LSTM peepholes [3H])
 * or NULL. Y gets the T step outputs [B, H] in time order. */
static dy_status run_direction(ox_ctx *c, const rnn_cfg *k, int d, ox_value *xw,
                               ox_value *r, ox_value *rb_h, ox_value *h, ox_value *cs,
                               ox_value *p, int64_t T, bool rev, ox_value **ys,
                               ox_value **h_out, ox_value **c_out) {
  int64_t H = k->H;
  /* the gate blocks of R */
  ox_value *rg[4];
  for (int g = 0; g < k->gates; g++)
    rg[g] = slice1(c, r, 0, g * H, (g + 1) * H);
  ox_value *pi = NULL, *po = NULL, *pf = NULL;
  if (p) {
    pi = slice1(c, p, 0, 0, H);
    po = slice1(c, p, 0, H, 2 * H);
    pf = slice1(c, p, 0, 2 * H, 3 * H);
  }
  for (int64_t q = 0; q < T; q++) {
    int64_t t = rev ? T - 1 - q : q;
    ox_value *xt = ox_squeeze(c, slice1(c, xw, 0, t, t + 1), 1, (int64_t[]){0});
    ox_value *xg[4];
    for (int g = 0; g < k->gates; g++)
      xg[g] = slice1(c, xt, 1, g * H, (g + 1) * H);
    if (k->cell == CELL_RNN) {
      h = act_n(c, k, d, 0, ox_binary(c, "add", xg[0], matmul_t(c, h, rg[0])));
    } else if (k->cell == CELL_GRU) {
      /* W order z, r, h */
      ox_value *z = act_n(c, k, d, 0, ox_binary(c, "add", xg[0], matmul_t(c, h, rg[0])));
      ox_value *rr = act_n(c, k, d, 0, ox_binary(c, "add", xg[1], matmul_t(c, h, rg[1])));
      ox_value *hh;
      if (k->linear_before_reset) /* rb_h is added inside, so xg[2] lacks it */
        hh = ox_binary(c, "add", xg[2],
                       ox_binary(c, "mul", rr, ox_binary(c, "add", matmul_t(c, h, rg[2]), rb_h)));
      else
        hh = ox_binary(c, "add", xg[2], matmul_t(c, ox_binary(c, "mul", rr, h), rg[2]));
      hh = act_n(c, k, d, 1, hh);
      /* h = (1 - z) hh + z h = hh + z (h - hh) */
      h = ox_binary(c, "add", hh, ox_binary(c, "mul", z, ox_binary(c, "sub", h, hh)));
    } else {
      /* W order i, o, f, c */
      ox_value *gi = ox_binary(c, "add", xg[0], matmul_t(c, h, rg[0]));
      ox_value *go = ox_binary(c, "add", xg[1], matmul_t(c, h, rg[1]));
      ox_value *gf = ox_binary(c, "add", xg[2], matmul_t(c, h, rg[2]));
      ox_value *gc = ox_binary(c, "add", xg[3], matmul_t(c, h, rg[3]));
      if (p) {
        gi = ox_binary(c, "add", gi, ox_binary(c, "mul", pi, cs));
        gf = ox_binary(c, "add", gf, ox_binary(c, "mul", pf, cs));
      }
      ox_value *it = act_n(c, k, d, 0, gi), *ft = act_n(c, k, d, 0, gf);
      ox_value *ct = act_n(c, k, d, 1, gc);
      cs = ox_binary(c, "add", ox_binary(c, "mul", ft, cs), ox_binary(c, "mul", it, ct));
      if (p)
        go = ox_binary(c, "add", go, ox_binary(c, "mul", po, cs));
      ox_value *ot = act_n(c, k, d, 0, go);
      h = ox_binary(c, "mul", ot, act_n(c, k, d, 2, cs));
    }
    if (!h)
      return c->err->status ? c->err->status : DY_STATUS_INTERNAL;
    ys[t] = h;
  }
  *h_out = h;
  *c_out = cs;
  return DY_OK;
}

/* RNN / GRU / LSTM(X, W, R, B, sequence_lens, initial_h[, initial_c, P])
 * -> Y, Y_h[, Y_c]; attributes: activation_alpha, activation_beta,
 * activations, clip, direction ("forward"), hidden_size, layout (0),
 * linear_before_reset (GRU, 0), input_forget (LSTM, 0). sequence_lens is
 * supported when every length is the full sequence. */
static dy_status recurrent(ox_ctx *c, int cell) {
  TRY(ox_check_attrs(c, cell == CELL_GRU ? "activation_alpha activation_beta activations clip "
                                           "direction hidden_size layout linear_before_reset"
                        : cell == CELL_LSTM ? "activation_alpha activation_beta activations "
                                              "clip direction hidden_size layout input_forget"
                                            : "activation_alpha activation_beta activations clip "
                                              "direction hidden_size layout"));
  ox_value *x, *w, *r, *b = ox_in(c, 3), *lens = ox_in(c, 4), *h0 = ox_in(c, 5);
  ox_value *c0 = cell == CELL_LSTM ? ox_in(c, 6) : NULL;
  ox_value *p = cell == CELL_LSTM ? ox_in(c, 7) : NULL;
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &w));
  TRY(ox_need_in(c, 2, &r));
  TRY(ox_need_f32(c, x));
  rnn_cfg k = {.cell = cell, .gates = cell == CELL_RNN ? 1 : cell == CELL_GRU ? 3 : 4};
  k.H = ox_attr_i(c, "hidden_size", -1);
  k.clip = ox_attr_f(c, "clip", 0.0f);
  k.linear_before_reset = ox_attr_i(c, "linear_before_reset", 0) != 0;
  if (ox_attr_i(c, "input_forget", 0))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "input_forget");
  char dir[32];
  ox_attr_s(c, "direction", "forward", dir, sizeof dir);
  bool bidi = strcmp(dir, "bidirectional") == 0;
  k.reverse = strcmp(dir, "reverse") == 0;
  if (!bidi && !k.reverse && strcmp(dir, "forward"))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "direction '%s'", dir);
  k.n_dir = bidi ? 2 : 1;
  bool layout = ox_attr_i(c, "layout", 0) != 0;
  if (x->type.rank != 3 || w->type.rank != 3 || r->type.rank != 3 || k.H < 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "X, W, R must be 3-D and hidden_size set");
  if (layout)
    x = ox_transpose(c, x, 3, (int64_t[]){1, 0, 2});
  if (!x)
    return c->err->status;
  int64_t T = x->type.shape[0], G = k.gates * k.H;
  if (T < 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic or empty sequence");
  if (w->type.shape[0] != k.n_dir || w->type.shape[1] != G || r->type.shape[1] != G ||
      r->type.shape[2] != k.H)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "W or R do not match hidden_size and "
                   "direction");
  if (lens) {
    if (!ox_is_const(lens) || lens->type.dtype != DY_I64)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "sequence_lens must be an int64 constant");
    for (int64_t i = 0; i < dy_type_numel(&lens->type); i++)
      if (((int64_t *)lens->c->data)[i] != T)
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "sequence_lens shorter than the sequence");
  }
  /* activations: defaults per cell, repeated per direction */
  static const char *const defaults[3][3] = {
      {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  int n_act = cell == CELL_RNN ? 1 : cell == CELL_GRU ? 2 : 3;
  const Onnx__AttributeProto *aa = ox_attr(c, "activations");
  int na, nb;
  const float *al = ox_attr_floats(c, "activation_alpha", &na);
  const float *be = ox_attr_floats(c, "activation_beta", &nb);
  for (int j = 0; j < n_act * k.n_dir; j++) {
    if (aa && aa->n_strings) {
      if (aa->n_strings != (size_t)(n_act * k.n_dir))
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%zu activations", aa->n_strings);
      snprintf(k.act[j], sizeof k.act[j], "%.*s", (int)aa->strings[j].len,
               (const char *)aa->strings[j].data);
    } else {
      snprintf(k.act[j], sizeof k.act[j], "%s", defaults[cell][j % n_act]);
    }
    k.alpha[j] = al && j < na ? al[j] : NAN;
    k.beta[j] = be && j < nb ? be[j] : NAN;
  }
  if (layout) {
    if (h0)
      h0 = ox_transpose(c, h0, 3, (int64_t[]){1, 0, 2});
    if (c0)
      c0 = ox_transpose(c, c0, 3, (int64_t[]){1, 0, 2});
  }
  ox_value *ys[2][1024], *hs[2], *cs[2];
  if (T > 1024)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a sequence of %lld steps", (long long)T);
  for (int d = 0; d < k.n_dir; d++) {
    ox_value *wd = ox_squeeze(c, slice1(c, w, 0, d, d + 1), 1, (int64_t[]){0});
    ox_value *rd = ox_squeeze(c, slice1(c, r, 0, d, d + 1), 1, (int64_t[]){0});
    ox_value *xw = matmul_t(c, x, wd), *rb_h = NULL;
    if (b) {
      ox_value *bd = ox_squeeze(c, slice1(c, b, 0, d, d + 1), 1, (int64_t[]){0});
      ox_value *wb = slice1(c, bd, 0, 0, G), *rb = slice1(c, bd, 0, G, 2 * G);
      if (cell == CELL_GRU && k.linear_before_reset) {
        /* Rbh stays inside r (.) (h Rh^T + Rbh) */
        rb_h = slice1(c, rb, 0, 2 * k.H, 3 * k.H);
        rb = ox_concat(c, (ox_value *[]){slice1(c, rb, 0, 0, 2 * k.H),
                                         ox_new_const(c, DY_F32, 1, &k.H, NULL)}, 2, 0);
      }
      xw = ox_binary(c, "add", xw, ox_binary(c, "add", wb, rb));
    } else if (cell == CELL_GRU && k.linear_before_reset) {
      rb_h = ox_const_f32(c, 0.0f);
    }
    int64_t one_h[2] = {1, k.H};
    ox_value *h = h0 ? ox_squeeze(c, slice1(c, h0, 0, d, d + 1), 1, (int64_t[]){0})
                     : ox_new_const(c, DY_F32, 2, one_h, NULL);
    ox_value *cc = cell != CELL_LSTM ? NULL
                   : c0 ? ox_squeeze(c, slice1(c, c0, 0, d, d + 1), 1, (int64_t[]){0})
                        : ox_new_const(c, DY_F32, 2, one_h, NULL);
    ox_value *pd = p ? ox_squeeze(c, slice1(c, p, 0, d, d + 1), 1, (int64_t[]){0}) : NULL;
    if (!xw || !h || (cell == CELL_LSTM && !cc))
      return c->err->status ? c->err->status : DY_STATUS_INTERNAL;
    TRY(run_direction(c, &k, d, xw, rd, rb_h, h, cc, pd, T, d == 1 || k.reverse, ys[d],
                      &hs[d], &cs[d]));
  }
  /* Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h and Y_c [D, B, H] ([B, D, H]) */
  if (ox_out_wanted(c, 0)) {
    ox_value *steps[1024];
    for (int64_t t = 0; t < T; t++) {
      ox_value *dirs[2];
      for (int d = 0; d < k.n_dir; d++)
        dirs[d] = ox_unsqueeze(c, ys[d][t], 2, (int64_t[]){0, 1});
      steps[t] = ox_concat(c, dirs, k.n_dir, 1);
    }
    ox_value *y = ox_concat_many(c, steps, (int)T, 0);
    if (layout)
      y = ox_transpose(c, y, 4, (int64_t[]){2, 0, 1, 3});
    TRY(ox_set_or_fail(c, 0, y));
  }
  for (int o = 1; o <= (cell == CELL_LSTM ? 2 : 1); o++) {
    if (!ox_out_wanted(c, o))
      continue;
    ox_value *dirs[2];
    for (int d = 0; d < k.n_dir; d++)
      dirs[d] = ox_unsqueeze(c, o == 1 ? hs[d] : cs[d], 1, (int64_t[]){0});
    ox_value *v = ox_concat(c, dirs, k.n_dir, 0);
    if (layout)
      v = ox_transpose(c, v, 3, (int64_t[]){1, 0, 2});
    TRY(ox_set_or_fail(c, o, v));
  }
  return DY_OK;
}

static dy_status map_rnn(ox_ctx *c) { return recurrent(c, CELL_RNN); }
static dy_status map_gru(ox_ctx *c) { return recurrent(c, CELL_GRU); }
static dy_status map_lstm(ox_ctx *c) { return recurrent(c, CELL_LSTM); }

/* ------------------------------------------------------------------ */
/* DFT, STFT                                                           */
/* ------------------------------------------------------------------ */

/* The DFT of x [.., n at axis, .., 1 or 2] (real, or real and imaginary
 * parts) of length n, giving k bins [.., k, .., 2]: with C = cos(2 pi j m
 * / n), S = sin(...), forward re = a C + b S, im = b C - a S; inverse
 * re = (a C - b S) / n, im = (b C + a S) / n. */
static ox_value *dft(ox_ctx *c, ox_value *x, int axis, int64_t n, int64_t k, bool inverse) {
  if (!x)
    return NULL;
  int r = x->type.rank;
  bool cplx = x->type.shape[r - 1] == 2;
  int64_t shape[2] = {n, k};
  ox_value *cm = ox_new_const(c, DY_F32, 2, shape, NULL);
  ox_value *sm = ox_new_const(c, DY_F32, 2, shape, NULL);
  if (!cm || !sm)
    return NULL;
  double scale = inverse ? 1.0 / (double)n : 1.0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t m = 0; m < k; m++) {
      double th = 6.283185307179586476925 * (double)((j * m) % n) / (double)n;
      ((float *)cm->c->data)[j * k + m] = (float)(cos(th) * scale);
      ((float *)sm->c->data)[j * k + m] = (float)(sin(th) * scale);
    }
  /* parts [.., n, ..] with the axis moved last */
  int64_t perm[DY_MAX_DIMS], inv[DY_MAX_DIMS];
  int q = 0;
  for (int i = 0; i < r - 1; i++)
    if (i != axis)
      perm[q++] = i;
  perm[q++] = axis;
  for (int i = 0; i < r - 1; i++)
    inv[perm[i]] = i;
  ox_value *a = ox_transpose(c, ox_squeeze(c, slice1(c, x, r - 1, 0, 1), 1,
                                           (int64_t[]){r - 1}), r - 1, perm);
  ox_value *bb = cplx ? ox_transpose(c, ox_squeeze(c, slice1(c, x, r - 1, 1, 2), 1,
                                                   (int64_t[]){r - 1}), r - 1, perm)
                      : NULL;
  dy_attr at[DY_MATMUL_NATTRS];
  int n_at = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_x = 0, .transpose_y = 0}, at);
#define MM(u, v) ((u) && (v) ? ox_op(c, "matmul", (ox_value *[]){(u), (v)}, 2, at, n_at) : NULL)
  ox_value *re = MM(a, cm), *im = ox_unary(c, "neg", MM(a, sm));
  if (inverse)
    im = ox_unary(c, "neg", im);
  if (bb) {
    ox_value *bs = MM(bb, sm);
    re = ox_binary(c, inverse ? "sub" : "add", re, bs);
    im = ox_binary(c, "add", im, MM(bb, cm));
  }
#undef MM
  ox_value *parts[2] = {ox_unsqueeze(c, ox_transpose(c, re, r - 1, inv), 1, (int64_t[]){r - 1}),
                        ox_unsqueeze(c, ox_transpose(c, im, r - 1, inv), 1, (int64_t[]){r - 1})};
  return ox_concat(c, parts, 2, r - 1);
}

/* DFT(input, dft_length) attributes: axis (1), inverse (0), onesided (0).
 * dft_length must be a constant (it is the output's extent); the signal is
 * cut or zero-padded to it. */
static dy_status map_dft(ox_ctx *c) {
  ox_value *x, *lv = ox_in(c, 1);
  TRY(ox_check_attrs(c, "axis inverse onesided"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_f32(c, x));
  int r = x->type.rank, axis;
  if (r < 2 || (x->type.shape[r - 1] != 1 && x->type.shape[r - 1] != 2))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "input must be [.., 1 or 2]");
  TRY(ox_axis(c, ox_attr_i(c, "axis", 1), r - 1, &axis));
  int64_t n = x->type.shape[axis];
  if (n < 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic signal axis");
  if (lv) {
    const int64_t *l;
    int64_t nl;
    TRY(ox_get_ints(c, lv, "DFT's dft_length", false, &l, &nl));
    if (nl != 1 || l[0] < 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "dft_length");
    if (l[0] < n)
      x = slice1(c, x, axis, 0, l[0]);
    else if (l[0] > n) {
      int64_t pads[2 * DY_MAX_DIMS] = {0};
      pads[r + axis] = l[0] - n;
      x = ox_pad(c, x, pads, "constant", 0.0f);
    }
    n = l[0];
  }
  bool inverse = ox_attr_i(c, "inverse", 0) != 0, onesided = ox_attr_i(c, "onesided", 0) != 0;
  if (onesided && inverse)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a one-sided inverse DFT");
  OUT(0, dft(c, x, axis, n, onesided ? n / 2 + 1 : n, inverse));
}

/* STFT(signal, frame_step, window, frame_length) attributes: onesided (1).
 * signal [B, L, 1 or 2]; frame_step and frame_length must be constants.
 * Frame f covers [f step, f step + length), times the window, and its DFT
 * is row f of the output [B, frames, bins, 2]. */
static dy_status map_stft(ox_ctx *c) {
  ox_value *x, *sv, *win = ox_in(c, 2), *lv = ox_in(c, 3);
  TRY(ox_check_attrs(c, "onesided"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &sv));
  TRY(ox_need_f32(c, x));
  const int64_t *sp, *lp;
  int64_t ns, nl, len = -1;
  TRY(ox_get_ints(c, sv, "STFT's frame_step", false, &sp, &ns));
  if (lv) {
    TRY(ox_get_ints(c, lv, "STFT's frame_length", false, &lp, &nl));
    len = nl == 1 ? lp[0] : -1;
  } else if (win && win->type.rank == 1) {
    len = win->type.shape[0];
  }
  int64_t L = x->type.rank == 3 ? x->type.shape[1] : -1;
  if (ns != 1 || sp[0] < 1 || len < 1 || L < len)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs [B, L, 1 or 2], a positive step and "
                   "a frame length up to L");
  int64_t frames = (L - len) / sp[0] + 1, shape[2] = {frames, len};
  ox_value *gi = ox_new_const(c, DY_I64, 2, shape, NULL);
  if (!gi)
    return c->err->status;
  for (int64_t f = 0; f < frames; f++)
    for (int64_t j = 0; j < len; j++)
      ((int64_t *)gi->c->data)[f * len + j] = f * sp[0] + j;
  dy_attr g[DY_GATHER_NATTRS];
  int n_g = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = 1}, g);
  ox_value *fr = ox_op(c, "gather", (ox_value *[]){x, gi}, 2, g, n_g); /* [B, F, len, c] */
  if (win)
    fr = ox_binary(c, "mul", fr, ox_reshape(c, win, 2, (int64_t[]){len, 1}));
  bool onesided = ox_attr_i(c, "onesided", 1) != 0;
  OUT(0, dft(c, fr, 2, len, onesided ? len / 2 + 1 : len, false));
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_seq[] = {
    {"RNN", map_rnn},
    {"GRU", map_gru},
    {"LSTM", map_lstm},
    {"DFT", map_dft},
    {"STFT", map_stft},
    {NULL, NULL},
};
