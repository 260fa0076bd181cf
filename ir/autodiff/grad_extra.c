/* grad_extra.c - gradient rules of the extra family (ops_extra.def); the
 * contract is in dy_grad.h.
 *
 *   sin .. atan   the textbook derivatives (asin / acos: inf at +-1, NaN
 *                 outside, as the math)
 *   mod           a - q b with q = trunc(a / b) (fmod 1) or floor (fmod 0):
 *                 da = dy, db = -q dy, q recovered as (a - out) / b
 *   reduce_prod   the product of the other elements, exact with zeros (as
 *                 PyTorch): none in the group -> out / x; one -> the
 *                 product of the non-zeros at the zero, 0 elsewhere; more
 *                 -> 0
 *   cumsum        the cumsum of dy the other way round (same exclusive)
 *   gather_elements / gather_nd   dy scatter-added into zeros of x's shape
 *                 (gather_nd's batch dims become leading tuple entries)
 *   scatter_elements / scatter_nd (x, idx, upd), by reduction:
 *     none  x gets dy but where written; an update gets dy at its target
 *           only if it is the write that won (the last in C order)
 *     add   x gets dy, an update dy at its target
 *     mul   x gets dy times the product of its updates; an update dy times
 *           x and the other updates at its target (exact with zeros)
 *     max, min  dy goes to whatever equals the result (x and / or
 *           updates), split evenly on ties (PyTorch's scatter_reduce)
 *   top_k         no gradient (i64 indices: DY_OPF_NODIFF)
 *   det           det(A) inv(A)^T (the inverse op; inf / NaN at a
 *                 singular A)
 *   inverse       -Y^T dY Y^T
 *   grid_sample, roi_align   the feature map's gradient only (the grid and
 *                 the rois are coordinates: dy_grad_input_is_differentiable
 *                 says no), by grid_sample_grad / roi_align_grad: dy added
 *                 to the taps each output read, times their weights (max
 *                 roi_align: to the one weighted tap that won)
 */
#include <string.h>

#include "grad_internal.h"

/* ---- small emitters ---- */

static int const_i64(dy_gb *b, int64_t v) {
  return dy_gb_status(b) ? -1 : b->constant(b, DY_I64, (double)v);
}

/* v == 0 as a bool value */
static int is_zero(dy_gb *b, int v) { return dy_gb_cmp_const(b, DY_OP_EQUAL, v, 0.0); }

/* The product of a group's other elements at each element v, from the
 * group's product of its non-zero elements p and its count of zeros z
 * (both broadcast to v): p / v when z == 0; p at the zero when z == 1;
 * else 0. */
static int prod_of_others(dy_gb *b, int v, int p, int z) {
  int zero = is_zero(b, v);
  int nz = dy_gb_where(b, zero, dy_gb_const(b, 1.0), v);
  int at_zero = dy_gb_mul(b, p, dy_gb_ind_const(b, DY_OP_EQUAL, z, 1.0));
  int p_nz = dy_gb_div(b, p, nz);
  int elsewhere = dy_gb_mul(b, p_nz, dy_gb_ind_const(b, DY_OP_EQUAL, z, 0.0));
  return dy_gb_where(b, zero, at_zero, elsewhere);
}

/* ---- trigonometry ---- */

DY_GRAD(sin) {
  (void)op;
  (void)y;
  return dy_gb_chain(b, need, dy, need[0] ? dy_gb_unary(b, DY_OP_COS, x[0]) : -1, dx);
}

DY_GRAD(cos) {
  (void)op;
  (void)y;
  return dy_gb_chain(b, need, dy, need[0] ? dy_gb_neg(b, dy_gb_unary(b, DY_OP_SIN, x[0])) : -1, dx);
}

/* tan: 1 + y^2 */
DY_GRAD(tan) {
  (void)op;
  (void)x;
  return dy_gb_chain(b, need, dy, need[0] ? dy_gb_scale(b, dy_gb_mul(b, y[0], y[0]), 1.0, 1.0) : -1,
                     dx);
}

/* 1 / sqrt(1 - x^2) */
static int asin_d(dy_gb *b, int x) {
  return dy_gb_unary(b, DY_OP_RSQRT, dy_gb_scale(b, dy_gb_mul(b, x, x), -1.0, 1.0));
}

DY_GRAD(asin) {
  (void)op;
  (void)y;
  return dy_gb_chain(b, need, dy, need[0] ? asin_d(b, x[0]) : -1, dx);
}

DY_GRAD(acos) {
  (void)op;
  (void)y;
  return dy_gb_chain(b, need, dy, need[0] ? dy_gb_neg(b, asin_d(b, x[0])) : -1, dx);
}

/* atan: 1 / (1 + x^2) */
DY_GRAD(atan) {
  (void)op;
  (void)y;
  return dy_gb_chain(
      b, need, dy,
      need[0] ? dy_gb_unary(b, DY_OP_RECIPROCAL, dy_gb_scale(b, dy_gb_mul(b, x[0], x[0]), 1.0, 1.0))
              : -1,
      dx);
}

/* ---- mod ---- */

/* out = a - q b (q the truncated or floored quotient, locally constant):
 * da = dy, db = -q dy with q = (a - out) / b */
DY_GRAD(mod) {
  (void)op;
  if (need[0])
    dx[0] = dy_gb_sum_to(b, dy[0], x[0]);
  if (need[1]) {
    int q = dy_gb_div(b, dy_gb_sub(b, x[0], y[0]), x[1]);
    dx[1] = dy_gb_sum_to(b, dy_gb_neg(b, dy_gb_mul(b, dy[0], q)), x[1]);
  }
  return dy_gb_status(b);
}

/* ---- reduce_prod, cumsum ---- */

/* g (reduced over axes of x, keepdim or not) with the reduced dims put
 * back as 1s, so that it broadcasts against x. */
static int keep_reduced(dy_gb *b, int g, int x, const int64_t *axes, int na, bool keepdim) {
  int rank = b->type(b, x).rank;
  if (keepdim || na == 0 || na == rank || g < 0)
    return g; /* kept, or a scalar: broadcasts as it is */
  bool on[DY_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++)
    on[axes[i] < 0 ? axes[i] + rank : axes[i]] = true;
  int64_t ax[DY_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (on[d])
      ax[n++] = d;
  dy_attr a[DY_UNSQUEEZE_NATTRS];
  int n_a = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = ax, .n_axes = n}, a);
  return dy_gb_op1(b, DY_OP_UNSQUEEZE, g, a, n_a);
}

DY_GRAD(reduce_prod) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_reduce_prod_attrs a = dy_reduce_prod_attrs_get(op);
  /* the reduce ops share one schema: reduce_prod's attributes serve reduce_sum */
  dy_attr keep[DY_REDUCE_PROD_NATTRS];
  int n_keep = dy_reduce_prod_attrs_put(&(dy_reduce_prod_attrs){
      .given = DY_GIVEN_ALL, .axes = a.axes, .n_axes = a.n_axes, .keepdim = 1}, keep);
  int zero = is_zero(b, x[0]);
  int nz = dy_gb_where(b, zero, dy_gb_const(b, 1.0), x[0]);
  int p = dy_gb_op1(b, DY_OP_REDUCE_PROD, nz, keep, n_keep);
  int z = dy_gb_op1(b, DY_OP_REDUCE_SUM, dy_gb_cast(b, zero, DY_F32), keep, n_keep);
  int g = keep_reduced(b, dy[0], x[0], a.axes, a.n_axes, a.keepdim != 0);
  dx[0] = dy_gb_expand_as(b, dy_gb_mul(b, g, prod_of_others(b, x[0], p, z)), x[0]);
  return dy_gb_status(b);
}

/* y_i = sum over j <= i (exclusive: j < i) of x_j, so dx_j is the sum of
 * dy_i over i >= j (i > j): the same scan run the other way */
DY_GRAD(cumsum) {
  (void)x;
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_cumsum_attrs a = dy_cumsum_attrs_get(op);
  dy_attr at[DY_CUMSUM_NATTRS];
  int n_at = dy_cumsum_attrs_put(&(dy_cumsum_attrs){
      .given = DY_GIVEN_ALL, .axis = a.axis, .exclusive = a.exclusive, .reverse = !a.reverse}, at);
  dx[0] = dy_gb_op1(b, DY_OP_CUMSUM, dy[0], at, n_at);
  return dy_gb_status(b);
}

/* ---- gathers and scatters ---- */

/* zeros (f32) of v's shape */
static int zeros_like(dy_gb *b, int v) { return dy_gb_expand_as(b, dy_gb_const(b, 0.0), v); }

/* An i64 label per element of v's shape, distinct, in C order:
 * ((c0 n1 + c1) n2 + c2) ..., each coordinate c_d an exclusive cumsum of
 * ones along d and each extent n_d a sum of ones (run-time values, so a
 * batch dim is no different). */
static int labels(dy_gb *b, int v) {
  int r = b->type(b, v).rank;
  if (r == 0)
    return const_i64(b, 0);
  int ones = dy_gb_expand_as(b, const_i64(b, 1), v), lab = -1;
  for (int64_t d = 0; d < r; d++) {
    dy_attr cs[DY_CUMSUM_NATTRS];
    int n_cs = dy_cumsum_attrs_put(&(dy_cumsum_attrs){
        .given = DY_GIVEN_ALL, .axis = d, .exclusive = 1, .reverse = 0}, cs);
    int c = dy_gb_op1(b, DY_OP_CUMSUM, ones, cs, n_cs);
    lab = d == 0 ? c : dy_gb_add(b, dy_gb_mul(b, lab, dy_gb_reduce_sum(b, ones, &d, 1, true)), c);
  }
  return lab;
}

/* The scatter of op's kind (with op's axis) of upd into base at idx, with
 * reduction red; and its gather (upd-shaped) of src at idx. */
static int scatter(dy_gb *b, const dy_op *op, int base, int idx, int upd, const char *red) {
  const int in[] = {base, idx, upd};
  dy_attr a_scatter_nd[DY_SCATTER_ND_NATTRS];
  int n_a_scatter_nd = dy_scatter_nd_attrs_put(&(dy_scatter_nd_attrs){
      .given = DY_GIVEN_ALL, .reduction = red}, a_scatter_nd);
  if (op->kind == DY_OP_SCATTER_ND)
    return dy_gb_op(b, DY_OP_SCATTER_ND, in, 3, a_scatter_nd, n_a_scatter_nd);
  int64_t axis = op->kind == DY_OP_SCATTER_ELEMENTS ? dy_scatter_elements_attrs_get(op).axis
                                                    : dy_gather_elements_attrs_get(op).axis;
  dy_attr a[DY_SCATTER_ELEMENTS_NATTRS];
  int n_a = dy_scatter_elements_attrs_put(&(dy_scatter_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = axis, .reduction = red}, a);
  return dy_gb_op(b, DY_OP_SCATTER_ELEMENTS, in, 3, a, n_a);
}

static int gather(dy_gb *b, const dy_op *op, int src, int idx) {
  dy_attr a_gather_nd[DY_GATHER_ND_NATTRS];
  int n_a_gather_nd = dy_gather_nd_attrs_put(&(dy_gather_nd_attrs){
      .given = DY_GIVEN_ALL, .batch_dims = 0}, a_gather_nd);
  if (op->kind == DY_OP_SCATTER_ND)
    return dy_gb_op(b, DY_OP_GATHER_ND, (const int[]){src, idx}, 2,
                    a_gather_nd, n_a_gather_nd);
  dy_attr a[DY_GATHER_ELEMENTS_NATTRS];
  int n_a = dy_gather_elements_attrs_put(&(dy_gather_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = dy_scatter_elements_attrs_get(op).axis}, a);
  return dy_gb_op(b, DY_OP_GATHER_ELEMENTS, (const int[]){src, idx}, 2, a, n_a);
}

/* out = gather_elements(x, idx): dx = scatter-add of dy into zeros */
DY_GRAD(gather_elements) {
  (void)y;
  if (need[0])
    dx[0] = scatter(b, op, zeros_like(b, x[0]), x[1], dy[0], "add");
  return dy_gb_status(b);
}

/* out = gather_nd(x, idx; batch_dims nb): dx = scatter_nd add of dy into
 * zeros, the tuples first prefixed by their batch coordinates (scatter_nd
 * has no batch dims) */
DY_GRAD(gather_nd) {
  (void)y;
  if (!need[0])
    return DY_OK;
  int64_t nb = dy_gather_nd_attrs_get(op).batch_dims, last = -1;
  int idx = x[1];
  if (nb > 0) {
    int parts[DY_MAX_DIMS + 1];
    /* ones of idx[..., :1]'s shape */
    int one = const_i64(b, 1);
    int col = dy_gb_expand_as(b, one, dy_gb_reduce_sum(b, idx, &last, 1, true));
    for (int64_t d = 0; d < nb; d++) {
      dy_attr cs[DY_CUMSUM_NATTRS];
      int n_cs = dy_cumsum_attrs_put(&(dy_cumsum_attrs){
          .given = DY_GIVEN_ALL, .axis = d, .exclusive = 1, .reverse = 0}, cs);
      parts[d] = dy_gb_op1(b, DY_OP_CUMSUM, col, cs, n_cs);
    }
    parts[nb] = idx;
    dy_attr ax[DY_CONCAT_NATTRS];
    int n_ax = dy_concat_attrs_put(&(dy_concat_attrs){.given = DY_GIVEN_ALL, .axis = -1}, ax);
    idx = dy_gb_op(b, DY_OP_CONCAT, parts, (int)nb + 1, ax, n_ax);
  }
  dy_attr a_scatter_nd[DY_SCATTER_ND_NATTRS];
  int n_a_scatter_nd = dy_scatter_nd_attrs_put(&(dy_scatter_nd_attrs){
      .given = DY_GIVEN_ALL, .reduction = "add"}, a_scatter_nd);
  dx[0] = dy_gb_op(b, DY_OP_SCATTER_ND, (const int[]){zeros_like(b, x[0]), idx, dy[0]}, 3,
                   a_scatter_nd, n_a_scatter_nd);
  return dy_gb_status(b);
}

/* scatter_elements / scatter_nd (x, idx, upd): see the header */
static dy_status scatter_rule(dy_gb *b, const dy_op *op, const int *x, const int *y, const int *dy,
                              const bool *need, int *dx, const char *red) {
  int xs = x[0], idx = x[1], upd = x[2], g = dy[0];
  if (!strcmp(red, "add")) {
    if (need[0])
      dx[0] = g;
    if (need[2])
      dx[2] = gather(b, op, g, idx);
  } else if (!strcmp(red, "none")) {
    if (need[0])
      dx[0] = scatter(b, op, g, idx, zeros_like(b, upd), "none");
    if (need[2]) {
      int lab = labels(b, upd);
      int won = scatter(b, op, dy_gb_expand_as(b, const_i64(b, -1), xs), idx, lab, "none");
      int kept = dy_gb_binary(b, DY_OP_EQUAL, gather(b, op, won, idx), lab);
      int g_at = gather(b, op, g, idx);
      dx[2] = dy_gb_where(b, kept, g_at, dy_gb_const(b, 0.0));
    }
  } else if (!strcmp(red, "mul")) {
    if (need[0])
      dx[0] = scatter(b, op, g, idx, upd, "mul");
    if (need[2]) {
      int zero = is_zero(b, upd);
      int zeros = zeros_like(b, xs);
      int z = scatter(b, op, zeros, idx, dy_gb_cast(b, zero, DY_F32), "add");
      int p = scatter(b, op, xs, idx, dy_gb_where(b, zero, dy_gb_const(b, 1.0), upd), "mul");
      int p_at = gather(b, op, p, idx);
      int others = prod_of_others(b, upd, p_at, gather(b, op, z, idx));
      dx[2] = dy_gb_mul(b, gather(b, op, g, idx), others);
    }
  } else if (!strcmp(red, "max") || !strcmp(red, "min")) {
    int sel_x = dy_gb_cast(b, dy_gb_binary(b, DY_OP_EQUAL, xs, y[0]), DY_F32);
    int sel_u = dy_gb_cast(b, dy_gb_binary(b, DY_OP_EQUAL, upd, gather(b, op, y[0], idx)), DY_F32);
    int cnt = dy_gb_add(b, sel_x, scatter(b, op, zeros_like(b, xs), idx, sel_u, "add"));
    /* a NaN result equals nothing: count 1 there, and nothing gets it */
    int share = dy_gb_div(b, g, dy_gb_binary(b, DY_OP_MAXIMUM, cnt, dy_gb_const(b, 1.0)));
    if (need[0])
      dx[0] = dy_gb_mul(b, share, sel_x);
    if (need[2])
      dx[2] = dy_gb_mul(b, gather(b, op, share, idx), sel_u);
  } else {
    dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "no gradient for reduction \"%s\"", red);
  }
  return dy_gb_status(b);
}

DY_GRAD(scatter_elements) {
  return scatter_rule(b, op, x, y, dy, need, dx, dy_scatter_elements_attrs_get(op).reduction);
}

DY_GRAD(scatter_nd) {
  return scatter_rule(b, op, x, y, dy, need, dx, dy_scatter_nd_attrs_get(op).reduction);
}

/* ---- det, inverse ---- */

/* The trailing two dims of v swapped. */
static int transpose_last2(dy_gb *b, int v) {
  int r = b->type(b, v).rank;
  int64_t perm[DY_MAX_DIMS];
  for (int d = 0; d < r; d++)
    perm[d] = d;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return dy_gb_transpose(b, v, perm, r);
}

/* d det(A) / dA = det(A) inv(A)^T (Jacobi's formula); at a singular A the
 * inverse is inf / NaN, and so is this gradient */
DY_GRAD(det) {
  (void)op;
  if (!need[0])
    return DY_OK;
  int64_t r = b->type(b, y[0]).rank, ax[2] = {r, r + 1};
  dy_attr a_unsqueeze[DY_UNSQUEEZE_NATTRS];
  int n_a_unsqueeze = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = ax, .n_axes = 2}, a_unsqueeze);
  int g = dy_gb_op1(b, DY_OP_UNSQUEEZE, dy_gb_mul(b, dy[0], y[0]),
                    a_unsqueeze, n_a_unsqueeze);
  dx[0] = dy_gb_mul(b, g, transpose_last2(b, dy_gb_unary(b, DY_OP_INVERSE, x[0])));
  return dy_gb_status(b);
}

/* Y = inv(A): dA = -Y^T dY Y^T */
DY_GRAD(inverse) {
  (void)op;
  (void)x;
  if (need[0])
    dx[0] =
        dy_gb_neg(b, dy_gb_matmul(b, dy_gb_matmul(b, y[0], dy[0], true, false), y[0], false, true));
  return dy_gb_status(b);
}

/* ---- grid_sample, roi_align: the feature map's gradient ---- */

/* Only x gets one (dy_grad_input_is_differentiable: the grid and the rois
 * are coordinates): dy added back to the taps each output read, times
 * their weights, by the *_grad op (the forward's attributes). */
DY_GRAD(grid_sample) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_grid_sample_attrs a = dy_grid_sample_attrs_get(op);
  dy_attr at[DY_GRID_SAMPLE_GRAD_NATTRS];
  int n_at = dy_grid_sample_grad_attrs_put(&(dy_grid_sample_grad_attrs){
      .given = DY_GIVEN_ALL, .mode = a.mode, .padding_mode = a.padding_mode,
      .align_corners = a.align_corners}, at);
  dx[0] = dy_gb_op(b, DY_OP_GRID_SAMPLE_GRAD, (const int[]){dy[0], x[1], x[0]}, 3, at, n_at);
  return dy_gb_status(b);
}

DY_GRAD(roi_align) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_roi_align_attrs a = dy_roi_align_attrs_get(op);
  dy_attr at[DY_ROI_ALIGN_GRAD_NATTRS];
  int n_at = dy_roi_align_grad_attrs_put(&(dy_roi_align_grad_attrs){
      .given = DY_GIVEN_ALL, .mode = a.mode, .output_height = a.output_height,
      .output_width = a.output_width, .sampling_ratio = a.sampling_ratio,
      .spatial_scale = a.spatial_scale, .half_pixel = a.half_pixel}, at);
  dx[0] = dy_gb_op(b, DY_OP_ROI_ALIGN_GRAD, (const int[]){dy[0], x[1], x[2], x[0]}, 4, at, n_at);
  return dy_gb_status(b);
}
