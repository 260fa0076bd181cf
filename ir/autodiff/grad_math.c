/* grad_math.c - gradient rules of the math family (ops_math.def); the
 * contract is in dy_grad.h.
 *
 * Conventions where the derivative is not defined (Paddle's, unless said):
 *   - kinks take the derivative of the side the kernel's condition picks:
 *     leaky_relu / elu x > 0, hard_swish (-3, 3) open with 1 at x >= 3,
 *     hard_sigmoid 0 < out < 1, abs sign(x) (0 at 0);
 *   - clip passes the gradient strictly inside (min, max) only: 0 at the
 *     bounds and outside (Paddle's clip_grad);
 *   - minimum / maximum route the gradient to the side the op selected;
 *     on a tie it is split half and half (PyTorch's rule, the one central
 *     differences agree with, and symmetric as the ops are commutative);
 *     a NaN result sends none to either side;
 *   - pow (PyTorch's): d/dx = e x^(e-1), 0 where e == 0; d/de = x^e log x,
 *     0 where x == 0 and e >= 0 (NaN for a negative base, as log's);
 *   - sqrt at 0 and rsqrt / log / reciprocal at 0 give inf, as the math;
 *   - cast: the identity f32 -> f32; any other cast has no gradient (its
 *     f32 side, if any, is an integer or boolean value).
 */
#include "grad_internal.h"

#define SQRT1_2 0.70710678118654752440    /* 1 / sqrt(2) */
#define TWO_SQRTPI 1.12837916709551257390 /* 2 / sqrt(pi) */

/* ---- activations ---- */

/* gelu, erf form: Phi(x) + x phi(x); tanh form:
 * 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(k (x + c x^3)),
 * with the kernel's constants k = sqrt(2 / pi), c = 0.044715 */
DY_GRAD(gelu) {
  (void)y;
  if (!need[0])
    return DY_OK;
  int xx = dy_gb_mul(b, x[0], x[0]), d;
  if (dy_gelu_attrs_get(op).approximate) {
    const double k = 0.797884561, c = 0.044715;
    int inner = dy_gb_mul(b, x[0], dy_gb_scale(b, xx, c, 1.0));
    int t = dy_gb_unary(b, DY_OP_TANH, dy_gb_scale(b, inner, k, 0.0));
    int sech2 = dy_gb_scale(b, dy_gb_mul(b, t, t), -1.0, 1.0);
    int dinner = dy_gb_scale(b, xx, 3.0 * c * k, k);
    int half_1pt = dy_gb_scale(b, t, 0.5, 0.5);
    int half_x = dy_gb_scale(b, x[0], 0.5, 0.0);
    d = dy_gb_add(b, half_1pt, dy_gb_mul(b, half_x, dy_gb_mul(b, sech2, dinner)));
  } else {
    int cdf =
        dy_gb_scale(b, dy_gb_unary(b, DY_OP_ERF, dy_gb_scale(b, x[0], SQRT1_2, 0.0)), 0.5, 0.5);
    int pdf = dy_gb_scale(b, dy_gb_unary(b, DY_OP_EXP, dy_gb_scale(b, xx, -0.5, 0.0)),
                          0.5 * TWO_SQRTPI * SQRT1_2, 0.0);
    d = dy_gb_add(b, cdf, dy_gb_mul(b, x[0], pdf));
  }
  return dy_gb_chain(b, need, dy, d, dx);
}

/* silu = x s(x): s (1 + x (1 - s)) */
DY_GRAD(silu) {
  (void)op;
  (void)y;
  if (!need[0])
    return DY_OK;
  int s = dy_gb_unary(b, DY_OP_SIGMOID, x[0]);
  int d =
      dy_gb_mul(b, s, dy_gb_scale(b, dy_gb_mul(b, x[0], dy_gb_scale(b, s, -1.0, 1.0)), 1.0, 1.0));
  return dy_gb_chain(b, need, dy, d, dx);
}

/* hard_swish = x min(max(x + 3, 0), 6) / 6: 0 for x <= -3, (2x + 3) / 6
 * inside, 1 for x >= 3 */
DY_GRAD(hard_swish) {
  (void)op;
  (void)y;
  if (!need[0])
    return DY_OK;
  int below3 = dy_gb_cmp_const(b, DY_OP_LESS, x[0], 3.0);
  int ramp = dy_gb_scale(b, x[0], 1.0 / 3.0, 0.5);
  int inside = dy_gb_where(b, below3, ramp, dy_gb_const(b, 1.0));
  int above_m3 = dy_gb_cmp_const(b, DY_OP_GREATER, x[0], -3.0);
  int d = dy_gb_where(b, above_m3, inside, dy_gb_const(b, 0.0));
  return dy_gb_chain(b, need, dy, d, dx);
}

/* softsign = x / (1 + |x|): 1 / (1 + |x|)^2 */
DY_GRAD(softsign) {
  (void)op;
  (void)y;
  if (!need[0])
    return DY_OK;
  int den = dy_gb_scale(b, dy_gb_unary(b, DY_OP_ABS, x[0]), 1.0, 1.0);
  return dy_gb_chain(b, need, dy, dy_gb_unary(b, DY_OP_RECIPROCAL, dy_gb_mul(b, den, den)), dx);
}

/* hard_sigmoid: slope where the output is strictly inside (0, 1) */
DY_GRAD(hard_sigmoid) {
  (void)x;
  if (!need[0])
    return DY_OK;
  double slope = dy_hard_sigmoid_attrs_get(op).slope;
  int above0 = dy_gb_ind_const(b, DY_OP_GREATER, y[0], 0.0);
  int in = dy_gb_mul(b, above0, dy_gb_ind_const(b, DY_OP_LESS, y[0], 1.0));
  return dy_gb_chain(b, need, dy, dy_gb_scale(b, in, slope, 0.0), dx);
}

/* leaky_relu: 1 for x > 0, else alpha */
DY_GRAD(leaky_relu) {
  (void)y;
  if (!need[0])
    return DY_OK;
  double alpha = dy_leaky_relu_attrs_get(op).alpha;
  return dy_gb_chain(
      b, need, dy, dy_gb_scale(b, dy_gb_ind_const(b, DY_OP_GREATER, x[0], 0.0), 1.0 - alpha, alpha),
      dx);
}

/* elu: 1 for x > 0, else alpha e^x = out + alpha */
DY_GRAD(elu) {
  if (!need[0])
    return DY_OK;
  double alpha = dy_elu_attrs_get(op).alpha;
  int pos = dy_gb_cmp_const(b, DY_OP_GREATER, x[0], 0.0);
  int one = dy_gb_const(b, 1.0);
  int d = dy_gb_where(b, pos, one, dy_gb_scale(b, y[0], 1.0, alpha));
  return dy_gb_chain(b, need, dy, d, dx);
}

/* clip: the gradient passes strictly inside (min, max) */
DY_GRAD(clip) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_clip_attrs a = dy_clip_attrs_get(op);
  int above_min = dy_gb_ind_const(b, DY_OP_GREATER, x[0], a.min);
  int in = dy_gb_mul(b, above_min, dy_gb_ind_const(b, DY_OP_LESS, x[0], a.max));
  return dy_gb_chain(b, need, dy, in, dx);
}

/* softplus: 1 where beta x > threshold (the kernel returns x), else
 * sigmoid(beta x) */
DY_GRAD(softplus) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_softplus_attrs a = dy_softplus_attrs_get(op);
  int bx = dy_gb_scale(b, x[0], a.beta, 0.0);
  int linear = dy_gb_cmp_const(b, DY_OP_GREATER, bx, a.threshold);
  int one = dy_gb_const(b, 1.0);
  int d = dy_gb_where(b, linear, one, dy_gb_unary(b, DY_OP_SIGMOID, bx));
  return dy_gb_chain(b, need, dy, d, dx);
}

/* ---- elementwise math ---- */

DY_GRAD(exp) {
  (void)op;
  (void)x;
  return dy_gb_chain(b, need, dy, y[0], dx);
}

DY_GRAD(log) {
  (void)op;
  (void)y;
  if (need[0])
    dx[0] = dy_gb_div(b, dy[0], x[0]);
  return dy_gb_status(b);
}

/* sqrt: 0.5 / y */
DY_GRAD(sqrt) {
  (void)op;
  (void)x;
  if (need[0])
    dx[0] = dy_gb_div(b, dy_gb_scale(b, dy[0], 0.5, 0.0), y[0]);
  return dy_gb_status(b);
}

/* rsqrt = x^(-1/2): -0.5 y^3 */
DY_GRAD(rsqrt) {
  (void)op;
  (void)x;
  if (!need[0])
    return DY_OK;
  int y3 = dy_gb_mul(b, dy_gb_mul(b, y[0], y[0]), y[0]);
  return dy_gb_chain(b, need, dy, dy_gb_scale(b, y3, -0.5, 0.0), dx);
}

/* abs: sign(x), 0 at 0 */
DY_GRAD(abs) {
  (void)op;
  (void)y;
  if (!need[0])
    return DY_OK;
  int pos = dy_gb_ind_const(b, DY_OP_GREATER, x[0], 0.0);
  int sign = dy_gb_sub(b, pos, dy_gb_ind_const(b, DY_OP_LESS, x[0], 0.0));
  return dy_gb_chain(b, need, dy, sign, dx);
}

DY_GRAD(neg) {
  (void)op;
  (void)x;
  (void)y;
  if (need[0])
    dx[0] = dy_gb_neg(b, dy[0]);
  return dy_gb_status(b);
}

/* erf: 2 / sqrt(pi) e^(-x^2) */
DY_GRAD(erf) {
  (void)op;
  (void)y;
  if (!need[0])
    return DY_OK;
  int e = dy_gb_unary(b, DY_OP_EXP, dy_gb_scale(b, dy_gb_mul(b, x[0], x[0]), -1.0, 0.0));
  return dy_gb_chain(b, need, dy, dy_gb_scale(b, e, TWO_SQRTPI, 0.0), dx);
}

/* reciprocal: -y^2 */
DY_GRAD(reciprocal) {
  (void)op;
  (void)x;
  if (!need[0])
    return DY_OK;
  return dy_gb_chain(b, need, dy, dy_gb_scale(b, dy_gb_mul(b, y[0], y[0]), -1.0, 0.0), dx);
}

/* scale: x s + t or (x + t) s, either way d = s */
DY_GRAD(scale) {
  (void)x;
  (void)y;
  if (need[0])
    dx[0] = dy_gb_scale(b, dy[0], dy_scale_attrs_get(op).scale, 0.0);
  return dy_gb_status(b);
}

/* ---- pow, minimum, maximum ---- */

/* out = x^e: dx = e x^(e-1) (0 where e == 0, so 0^-1 does not make a NaN),
 * de = out log x (0 where x == 0 and e >= 0), each summed back to its
 * operand's shape */
DY_GRAD(pow) {
  (void)op;
  int xb = x[0], e = x[1], zero = dy_gb_const(b, 0.0);
  if (need[0]) {
    int pw = dy_gb_op(b, DY_OP_POW, (const int[]){xb, dy_gb_scale(b, e, 1.0, -1.0)}, 2, NULL, 0);
    int e0 = dy_gb_cmp_const(b, DY_OP_EQUAL, e, 0.0);
    int d = dy_gb_where(b, e0, zero, dy_gb_mul(b, e, pw));
    dx[0] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], d), xb);
  }
  if (need[1]) {
    int ylog = dy_gb_mul(b, y[0], dy_gb_unary(b, DY_OP_LOG, xb));
    int at0 = dy_gb_where(b, dy_gb_cmp_const(b, DY_OP_LESS, e, 0.0), ylog, zero);
    int d = dy_gb_where(b, dy_gb_cmp_const(b, DY_OP_EQUAL, xb, 0.0), at0, ylog);
    dx[1] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], d), e);
  }
  return dy_gb_status(b);
}

/* minimum and maximum: input i gets dy where it is the result, half of it
 * where both are: dy * ([x_i == out] - 0.5 [x_0 == x_1]) */
static dy_status select_rule(dy_gb *b, const int *x, const int *y, const int *dy, const bool *need,
                             int *dx) {
  int half = -1;
  for (int i = 0; i < 2; i++) {
    if (!need[i])
      continue;
    if (half < 0)
      half =
          dy_gb_scale(b, dy_gb_cast(b, dy_gb_op(b, DY_OP_EQUAL, x, 2, NULL, 0), DY_F32), 0.5, 0.0);
    int mine =
        dy_gb_cast(b, dy_gb_op(b, DY_OP_EQUAL, (const int[]){x[i], y[0]}, 2, NULL, 0), DY_F32);
    dx[i] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], dy_gb_sub(b, mine, half)), x[i]);
  }
  return dy_gb_status(b);
}

DY_GRAD(minimum) {
  (void)op;
  return select_rule(b, x, y, dy, need, dx);
}

DY_GRAD(maximum) {
  (void)op;
  return select_rule(b, x, y, dy, need, dx);
}

/* ---- where, cast ---- */

/* where(c, t, f): t gets dy where c, f where not, each summed back to its
 * shape; the condition gets none */
DY_GRAD(where) {
  (void)op;
  (void)y;
  int zero = dy_gb_const(b, 0.0);
  if (need[1])
    dx[1] = dy_gb_sum_to(b, dy_gb_where(b, x[0], dy[0], zero), x[1]);
  if (need[2])
    dx[2] = dy_gb_sum_to(b, dy_gb_where(b, x[0], zero, dy[0]), x[2]);
  return dy_gb_status(b);
}

/* cast f32 -> f32 is the identity; from or to another dtype: no gradient */
DY_GRAD(cast) {
  (void)op;
  if (need[0] && b->type(b, x[0]).dtype == DY_F32 && b->type(b, y[0]).dtype == DY_F32)
    dx[0] = dy[0];
  return dy_gb_status(b);
}
