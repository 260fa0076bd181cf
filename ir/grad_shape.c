/* grad_shape.c - gradient rules of the shape family (ops_shape.def); the
 * contract is in dy_grad.h. */
#include "grad_internal.h"

DY_GRAD_TODO(concat)
DY_GRAD_TODO(slice)
DY_GRAD_TODO(squeeze)
DY_GRAD_TODO(unsqueeze)
DY_GRAD_TODO(expand)
DY_GRAD_TODO(expand_as)
DY_GRAD_TODO(tile)
DY_GRAD_TODO(pad)
DY_GRAD_TODO(gather)
DY_GRAD_TODO(reduce_max)
DY_GRAD_TODO(reduce_min)
DY_GRAD_TODO(log_softmax)

/* ---- reductions ---- */

/* The reduced axes of x (every axis when the list is empty), normalised
 * and ascending; returns their number. */
static int reduced_axes(const int64_t *axes, int na, int rank, int64_t *out) {
  bool on[DY_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++)
    on[axes[i] < 0 ? axes[i] + rank : axes[i]] = true;
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (na == 0 || on[d])
      out[n++] = d;
  return n;
}

/* dy broadcast back over the reduced axes of x: dy with the reduced dims
 * put back as 1s (when the op dropped them), expanded to x's shape. */
static int unreduce(dy_gb *b, int g, int x, const int64_t *axes, int na,
                    bool keepdim) {
  dy_type tx = b->type(b, x);
  int64_t ax[DY_MAX_DIMS];
  int n = reduced_axes(axes, na, tx.rank, ax);
  if (!keepdim && n > 0 && n < tx.rank) {
    dy_attr a = DY_ATTR_IS("axes", ax, n);
    g = dy_gb_op1(b, DY_OP_UNSQUEEZE, g, &a, 1);
  }
  return dy_gb_expand_as(b, g, x);
}

DY_GRAD(reduce_sum) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_reduce_sum_attrs a = dy_reduce_sum_attrs_get(op);
  dx[0] = unreduce(b, dy[0], x[0], a.axes, a.n_axes, a.keepdim != 0);
  return dy_gb_status(b);
}

/* reduce_mean: the sum's gradient over the count of reduced elements; a
 * count that includes the dynamic batch is computed at run time (the sum
 * of ones over the same axes). */
DY_GRAD(reduce_mean) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_reduce_mean_attrs a = dy_reduce_mean_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int64_t ax[DY_MAX_DIMS];
  int n = reduced_axes(a.axes, a.n_axes, tx.rank, ax);
  int64_t count = 1;
  bool dynamic = false;
  for (int i = 0; i < n; i++) {
    dynamic |= tx.shape[ax[i]] < 0;
    count *= tx.shape[ax[i]] < 0 ? 1 : tx.shape[ax[i]];
  }
  int g = unreduce(b, dy[0], x[0], a.axes, a.n_axes, a.keepdim != 0);
  if (!dynamic) {
    dx[0] = count ? dy_gb_scale(b, g, 1.0 / (double)count, 0.0) : g;
  } else {
    int ones = dy_gb_expand_as(b, dy_gb_const(b, 1.0), x[0]);
    dx[0] = dy_gb_div(b, g, dy_gb_reduce_sum(b, ones, ax, n, true));
  }
  return dy_gb_status(b);
}
