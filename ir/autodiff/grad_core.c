/* grad_core.c - gradient rules of the core ops (ops.def); the contract is
 * in dy_grad.h. */
#include "grad_internal.h"

/* ---- binary elementwise: the gradient summed back to each input's shape ---- */

DY_GRAD(add) {
  (void)y;
  for (int i = 0; i < 2; i++)
    if (need[i])
      dx[i] = dy_gb_sum_to(b, dy[0], x[i]);
  (void)op;
  return dy_gb_status(b);
}

DY_GRAD(sub) {
  (void)y;
  (void)op;
  if (need[0])
    dx[0] = dy_gb_sum_to(b, dy[0], x[0]);
  if (need[1])
    dx[1] = dy_gb_sum_to(b, dy_gb_neg(b, dy[0]), x[1]);
  return dy_gb_status(b);
}

DY_GRAD(mul) {
  (void)y;
  (void)op;
  if (need[0])
    dx[0] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], x[1]), x[0]);
  if (need[1])
    dx[1] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], x[0]), x[1]);
  return dy_gb_status(b);
}

/* y = a / b: da = dy / b, db = -dy * y / b */
DY_GRAD(div) {
  (void)op;
  if (need[0])
    dx[0] = dy_gb_sum_to(b, dy_gb_div(b, dy[0], x[1]), x[0]);
  if (need[1])
    dx[1] = dy_gb_sum_to(b, dy_gb_neg(b, dy_gb_div(b, dy_gb_mul(b, dy[0], y[0]), x[1])),
                         x[1]);
  return dy_gb_status(b);
}

/* ---- activations ---- */

/* relu: dy where x > 0 (0 at x == 0, as Paddle) */
DY_GRAD(relu) {
  (void)op;
  (void)x;
  if (need[0])
    dx[0] = dy_gb_mask(b, dy[0], dy_gb_op(b, DY_OP_GREATER,
                                           (const int[]){y[0], dy_gb_const(b, 0.0)}, 2,
                                           NULL, 0));
  return dy_gb_status(b);
}

/* sigmoid: dy * y * (1 - y) */
DY_GRAD(sigmoid) {
  (void)op;
  (void)x;
  if (need[0]) {
    int dyy = dy_gb_mul(b, dy[0], y[0]);
    dx[0] = dy_gb_mul(b, dyy, dy_gb_scale(b, y[0], -1.0, 1.0));
  }
  return dy_gb_status(b);
}

/* tanh: dy * (1 - y^2) */
DY_GRAD(tanh) {
  (void)op;
  (void)x;
  if (need[0])
    dx[0] = dy_gb_mul(b, dy[0], dy_gb_scale(b, dy_gb_mul(b, y[0], y[0]), -1.0, 1.0));
  return dy_gb_status(b);
}

/* ---- matmul ---- */

static int unsqueeze_at(dy_gb *b, int g, int64_t axis) {
  dy_attr a[DY_UNSQUEEZE_NATTRS];
  int n_a = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = &axis, .n_axes = 1}, a);
  return dy_gb_op1(b, DY_OP_UNSQUEEZE, g, a, n_a);
}

/* y = op(a) @ op(b), batched with broadcasting over the leading dims. With
 * A = op(a), B = op(b): dA = dy @ B^T, dB = A^T @ dy, then op() undone and
 * the broadcast summed away. A 1-D operand (a row vector on the left, a
 * column on the right, its transpose flag ignored, as numpy and Paddle)
 * is lifted to a matrix first and the gradient reshaped back. */
DY_GRAD(matmul) {
  (void)y;
  dy_matmul_attrs a = dy_matmul_attrs_get(op);
  bool ta = a.transpose_x != 0, tb = a.transpose_y != 0;
  dy_type t0 = b->type(b, x[0]), t1 = b->type(b, x[1]);
  int xa = x[0], xb = x[1], g = dy[0];
  if (t1.rank == 1) {
    int64_t s[2] = {t1.shape[0], 1};
    dy_attr a_reshape[DY_RESHAPE_NATTRS];
    int n_a_reshape = dy_reshape_attrs_put(&(dy_reshape_attrs){
        .given = DY_GIVEN_ALL, .shape = s, .n_shape = 2}, a_reshape);
    xb = dy_gb_op1(b, DY_OP_RESHAPE, xb, a_reshape, n_a_reshape);
    tb = false;
    g = unsqueeze_at(b, g, b->type(b, dy[0]).rank);
  }
  if (t0.rank == 1) {
    int64_t s[2] = {1, t0.shape[0]};
    dy_attr a_reshape[DY_RESHAPE_NATTRS];
    int n_a_reshape = dy_reshape_attrs_put(&(dy_reshape_attrs){
        .given = DY_GIVEN_ALL, .shape = s, .n_shape = 2}, a_reshape);
    xa = dy_gb_op1(b, DY_OP_RESHAPE, xa, a_reshape, n_a_reshape);
    ta = false;
    g = g < 0 ? -1 : unsqueeze_at(b, g, b->type(b, g).rank - 1);
  }
  if (need[0]) {
    /* da = dy @ B^T, or (dy @ B^T)^T = B @ dy^T when a is transposed */
    int d = ta ? dy_gb_matmul(b, xb, g, tb, true) : dy_gb_matmul(b, g, xb, false, !tb);
    dx[0] = dy_gb_reshape_as(b, dy_gb_sum_to(b, d, xa), x[0]);
  }
  if (need[1]) {
    /* db = A^T @ dy, or dy^T @ A when b is transposed */
    int d = tb ? dy_gb_matmul(b, g, xa, true, ta) : dy_gb_matmul(b, xa, g, !ta, false);
    dx[1] = dy_gb_reshape_as(b, dy_gb_sum_to(b, d, xb), x[1]);
  }
  return dy_gb_status(b);
}

/* softmax: dx = y * (dy - sum(dy * y, axis, keepdim)) */
DY_GRAD(softmax) {
  (void)x;
  if (!need[0])
    return DY_OK;
  dy_softmax_attrs a = dy_softmax_attrs_get(op);
  int64_t axis = a.axis;
  int s = dy_gb_reduce_sum(b, dy_gb_mul(b, dy[0], y[0]), &axis, 1, true);
  dx[0] = dy_gb_mul(b, y[0], dy_gb_sub(b, dy[0], s));
  return dy_gb_status(b);
}

/* ---- views and movement ---- */

DY_GRAD(reshape) {
  (void)op;
  (void)y;
  if (need[0])
    dx[0] = dy_gb_reshape_as(b, dy[0], x[0]);
  return dy_gb_status(b);
}

DY_GRAD(flatten) {
  (void)op;
  (void)y;
  if (need[0])
    dx[0] = dy_gb_reshape_as(b, dy[0], x[0]);
  return dy_gb_status(b);
}

/* transpose by perm: the gradient goes back by its inverse */
DY_GRAD(transpose) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_transpose_attrs a = dy_transpose_attrs_get(op);
  int64_t inv[DY_MAX_DIMS];
  int r = a.n_perm;
  for (int i = 0; i < r; i++) {
    int64_t pi = a.perm[i] < 0 ? a.perm[i] + r : a.perm[i];
    inv[pi] = i;
  }
  dx[0] = dy_gb_transpose(b, dy[0], inv, r);
  return dy_gb_status(b);
}
