/* grad_shape.c - gradient rules of the shape family (ops_shape.def); the
 * contract is in dy_grad.h.
 *
 * Every rule is written with ops of the table (slice, pad, reshape,
 * transpose, reduce_sum, scatter_nd, ...), so the generated C of a
 * backward pass needs no op of its own. The batch dim (-1 in a Program's
 * types) is never sliced, padded, tiled or concatenated with another
 * input (inference rejects it), so every offset a rule computes is static;
 * what involves the batch's size at run time is computed by ops
 * (expand_as a zero to x's shape, the run-time count of reduce_mean).
 */
#include <stdint.h>
#include <string.h>

#include "grad_internal.h"

/* ---- helpers ---- */

/* x sliced on one axis: [start:end:step] */
static int slice_axis(dy_gb *b, int x, int64_t axis, int64_t start, int64_t end,
                      int64_t step) {
  dy_attr a[DY_SLICE_NATTRS];
  int n_a = dy_slice_attrs_put(&(dy_slice_attrs){
      .given = DY_GIVEN_ALL, .starts = &start, .n_starts = 1, .ends = &end, .n_ends = 1,
      .axes = &axis, .n_axes = 1, .steps = &step, .n_steps = 1}, a);
  return dy_gb_op1(b, DY_OP_SLICE, x, a, n_a);
}

/* x padded with zeros (a negative pad crops): begin[d], end[d] per dim;
 * no op when every pad is 0. */
static int pad_zeros(dy_gb *b, int x, const int64_t *begin, const int64_t *end,
                     int rank) {
  if (x < 0)
    return -1;
  int64_t pads[2 * DY_MAX_DIMS];
  bool any = false;
  for (int d = 0; d < rank; d++) {
    pads[d] = begin[d];
    pads[rank + d] = end[d];
    any |= begin[d] != 0 || end[d] != 0;
  }
  if (!any)
    return x;
  dy_attr a[DY_PAD_NATTRS];
  int n_a = dy_pad_attrs_put(&(dy_pad_attrs){
      .given = DY_GIVEN_ALL, .paddings = pads, .n_paddings = 2 * rank, .mode = "constant",
      .value = 0.0}, a);
  return dy_gb_op1(b, DY_OP_PAD, x, a, n_a);
}

/* x padded with zeros on one axis only. */
static int pad_axis(dy_gb *b, int x, int axis, int64_t before, int64_t after) {
  if (x < 0)
    return -1;
  int64_t begin[DY_MAX_DIMS] = {0}, end[DY_MAX_DIMS] = {0};
  begin[axis] = before;
  end[axis] = after;
  return pad_zeros(b, x, begin, end, b->type(b, x).rank);
}

/* Zeros of like's type (the batch included). */
static int zeros_like(dy_gb *b, int like) {
  return dy_gb_expand_as(b, dy_gb_const(b, 0.0), like);
}

/* The axes an op names (negative ones counted from rank) as a mask. */
static unsigned axes_mask(const int64_t *axes, int na, int rank) {
  unsigned m = 0;
  for (int i = 0; i < na; i++)
    m |= 1u << (axes[i] < 0 ? axes[i] + rank : axes[i]);
  return m;
}

/* The set bits of mask below rank, ascending; returns their number. */
static int mask_axes(unsigned mask, int rank, int64_t *out) {
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (mask >> d & 1u)
      out[n++] = d;
  return n;
}

/* ---- concat, slice ---- */

/* concat: each input's gradient is its slice of dy along the axis. The
 * offsets must be static: a concat along a symbolic axis (seq + 2, 2*batch)
 * has no gradient yet (an error naming the op), one input's is dy. */
DY_GRAD(concat) {
  (void)y;
  int n = op->n_inputs;
  if (n == 1) {
    if (need[0])
      dx[0] = dy[0];
    return dy_gb_status(b);
  }
  dy_concat_attrs a = dy_concat_attrs_get(op);
  int rank = b->type(b, x[0]).rank;
  int64_t axis = a.axis < 0 ? a.axis + rank : a.axis, at = 0;
  for (int i = 0; i < n; i++) {
    int64_t len = b->type(b, x[i]).shape[axis];
    if (len < 0)
      return dy_error_at(b->err, op, DY_STATUS_UNSUPPORTED,
                         "gradient of concat: input %d has a dynamic size along "
                         "the concatenated axis %lld", i, (long long)axis);
    if (need[i])
      dx[i] = slice_axis(b, dy[0], axis, at, at + len, 1);
    at += len;
  }
  return dy_gb_status(b);
}

/* g (len along axis) spread to len * k with its elements at 0, k, 2k...
 * and zeros between: unsqueeze after the axis, pad that new axis to k,
 * merge the two. */
static int spread(dy_gb *b, int g, int axis, int64_t k) {
  if (g < 0)
    return -1;
  dy_type t = b->type(b, g);
  int64_t at = axis + 1;
  dy_attr ua[DY_UNSQUEEZE_NATTRS];
  int n_ua = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = &at, .n_axes = 1}, ua);
  int u = pad_axis(b, dy_gb_op1(b, DY_OP_UNSQUEEZE, g, ua, n_ua), axis + 1, 0, k - 1);
  t.shape[axis] *= k;
  return dy_gb_reshape(b, u, t.shape, t.rank);
}

/* slice: dy put back where the slice took it, zeros elsewhere. Per sliced
 * axis: a negative step is undone by reversing dy (a slice with step -1),
 * a step k > 1 by spreading dy with k - 1 zeros after each element; then
 * one pad with zeros places it (a negative end pad crops the zeros spread
 * past x's end). The batch axis is only ever taken whole. An empty slice
 * has a zero gradient. */
DY_GRAD(slice) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_slice_attrs a = dy_slice_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int r = tx.rank;
  int64_t begin[DY_MAX_DIMS] = {0}, end[DY_MAX_DIMS] = {0};
  int g = dy[0];
  for (int i = 0; i < a.n_starts; i++) {
    int64_t ax = a.n_axes ? a.axes[i] : i;
    int axis = (int)(ax < 0 ? ax + r : ax);
    int64_t step = a.n_steps ? a.steps[i] : 1, dim = tx.shape[axis];
    if (dim < 0)
      continue; /* the batch, whole */
    int64_t first, len;
    dy_slice_axis(dim, a.starts[i], a.ends[i], step, &first, &len);
    if (len == 0) {
      dx[0] = zeros_like(b, x[0]);
      return dy_gb_status(b);
    }
    int64_t lo = first; /* the lowest index taken */
    if (step < 0) {
      lo = first + (len - 1) * step;
      if (len > 1)
        g = slice_axis(b, g, axis, -1, INT64_MIN, -1);
    }
    int64_t k = step < 0 ? -step : step;
    if (k > 1 && len > 1) {
      g = spread(b, g, axis, k);
      len *= k;
    }
    begin[axis] = lo;
    end[axis] = dim - lo - len;
  }
  dx[0] = pad_zeros(b, g, begin, end, r);
  return dy_gb_status(b);
}

/* ---- views: squeeze, unsqueeze ---- */

/* squeeze: dy with the squeezed dims put back (unsqueeze). With no axes,
 * the squeezed dims are x's static 1s (inference refuses the batch). */
DY_GRAD(squeeze) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_squeeze_attrs a = dy_squeeze_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  unsigned m = 0;
  if (a.n_axes)
    m = axes_mask(a.axes, a.n_axes, tx.rank);
  else
    for (int d = 0; d < tx.rank; d++)
      m |= (unsigned)(tx.shape[d] == 1) << d;
  int64_t ax[DY_MAX_DIMS];
  int n = mask_axes(m, tx.rank, ax);
  dy_attr ua[DY_UNSQUEEZE_NATTRS];
  int n_ua = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = ax, .n_axes = n}, ua);
  dx[0] = n ? dy_gb_op1(b, DY_OP_UNSQUEEZE, dy[0], ua, n_ua) : dy[0];
  return dy_gb_status(b);
}

/* unsqueeze: dy with the inserted dims squeezed away. */
DY_GRAD(unsqueeze) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_unsqueeze_attrs a = dy_unsqueeze_attrs_get(op);
  int64_t ax[DY_MAX_DIMS];
  int rank = b->type(b, x[0]).rank + a.n_axes;
  int n = mask_axes(axes_mask(a.axes, a.n_axes, rank), rank, ax);
  dy_attr sa[DY_SQUEEZE_NATTRS];
  int n_sa = dy_squeeze_attrs_put(&(dy_squeeze_attrs){
      .given = DY_GIVEN_ALL, .axes = ax, .n_axes = n}, sa);
  dx[0] = dy_gb_op1(b, DY_OP_SQUEEZE, dy[0], sa, n_sa);
  return dy_gb_status(b);
}

/* ---- broadcasts: expand, expand_as, tile ---- */

DY_GRAD(expand) {
  (void)y;
  (void)op;
  if (need[0])
    dx[0] = dy_gb_sum_to(b, dy[0], x[0]);
  return dy_gb_status(b);
}

/* expand_as: like is read for its shape only, so it gets no gradient. */
DY_GRAD(expand_as) {
  (void)y;
  (void)op;
  if (need[0])
    dx[0] = dy_gb_sum_to(b, dy[0], x[0]);
  return dy_gb_status(b);
}

/* tile: dy seen as [.., rep_d, x_d, ..] (a repeat of 1 adds no dim, nor
 * does a leading dim x lacks) and summed over the repeat dims, which
 * leaves x's shape. The batch dim is never repeated. */
DY_GRAD(tile) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_tile_attrs a = dy_tile_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int m = a.n_repeat_times, r = tx.rank > m ? tx.rank : m;
  int64_t shape[2 * DY_MAX_DIMS], axes[DY_MAX_DIMS];
  int ns = 0, na = 0;
  for (int d = 0; d < r; d++) {
    int xi = d - (r - tx.rank), ri = d - (r - m);
    int64_t rep = ri >= 0 ? a.repeat_times[ri] : 1;
    if (rep > 1) {
      axes[na++] = ns;
      shape[ns++] = rep;
    }
    if (xi >= 0)
      shape[ns++] = tx.shape[xi];
  }
  if (ns > DY_MAX_DIMS)
    return dy_error_at(b->err, op, DY_STATUS_UNSUPPORTED,
                       "gradient of tile: %d repeated dims of a rank-%d input "
                       "need rank %d (at most %d)", na, tx.rank, ns, DY_MAX_DIMS);
  int g = dy_gb_reshape(b, dy[0], shape, ns);
  dx[0] = na ? dy_gb_reduce_sum(b, g, axes, na, false) : g;
  return dy_gb_status(b);
}

/* ---- pad ---- */

/* The gradient of reflect or edge padding (pb, pe >= 0) along one axis
 * whose size before padding is m: the middle of g, plus what each padded
 * element copied, added back where it came from. reflect: out[pb - 1 - t]
 * = x[1 + t] and out[pb + m + t] = x[m - 2 - t], so each end of g,
 * reversed, lands one in from the edge; edge: each end's sum lands on the
 * edge element. */
static int unpad_axis(dy_gb *b, int g, int axis, int64_t m, int64_t pb, int64_t pe,
                      bool reflect) {
  int c = slice_axis(b, g, axis, pb, pb + m, 1);
  if (pb > 0) {
    int e = reflect ? slice_axis(b, g, axis, pb - 1, INT64_MIN, -1)
                    : dy_gb_reduce_sum(b, slice_axis(b, g, axis, 0, pb, 1),
                                       (const int64_t[]){axis}, 1, true);
    c = dy_gb_add(b, c, reflect ? pad_axis(b, e, axis, 1, m - 1 - pb)
                                : pad_axis(b, e, axis, 0, m - 1));
  }
  if (pe > 0) {
    int e = reflect ? slice_axis(b, g, axis, pb + m + pe - 1, pb + m - 1, -1)
                    : dy_gb_reduce_sum(b, slice_axis(b, g, axis, pb + m, INT64_MAX, 1),
                                       (const int64_t[]){axis}, 1, true);
    c = dy_gb_add(b, c, reflect ? pad_axis(b, e, axis, m - 1 - pe, 1)
                                : pad_axis(b, e, axis, m - 1, 0));
  }
  return c;
}

/* pad: a negative pad crops first, then the positive ones pad (infer_pad).
 * constant: dy with the pads cropped and the crops padded with zeros (one
 * pad op with the paddings negated). reflect, edge: each padded axis's
 * copies are added back (unpad_axis), then the crops padded with zeros. */
DY_GRAD(pad) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_pad_attrs a = dy_pad_attrs_get(op);
  dy_type tx = b->type(b, x[0]);
  int r = tx.rank;
  bool constant = strcmp(a.mode, "constant") == 0, reflect = strcmp(a.mode, "reflect") == 0;
  int64_t begin[DY_MAX_DIMS], end[DY_MAX_DIMS];
  int g = dy[0];
  for (int d = 0; d < r; d++) {
    int64_t pb = a.paddings[d], pe = a.paddings[r + d];
    if (constant) {
      begin[d] = -pb;
      end[d] = -pe;
      continue;
    }
    begin[d] = pb < 0 ? -pb : 0;
    end[d] = pe < 0 ? -pe : 0;
    if (pb > 0 || pe > 0) {
      int64_t kept = tx.shape[d] - begin[d] - end[d];
      g = unpad_axis(b, g, d, kept, pb > 0 ? pb : 0, pe > 0 ? pe : 0, reflect);
    }
  }
  dx[0] = pad_zeros(b, g, begin, end, r);
  return dy_gb_status(b);
}

/* ---- gather ---- */

/* gather(x, index; axis): dy added into zeros of x's shape at the
 * gathered rows (a row gathered twice gets both), with scatter_nd's "add"
 * on x seen axis-first: dy is x[:axis] + index + x[axis+1:], so it is
 * transposed to index + x[:axis] + x[axis+1:], scattered with the index as
 * 1-tuples into zeros of [x_axis] + x[:axis] + x[axis+1:], and transposed
 * back. scatter_nd checks every index (an index out of range is a
 * run-time error, as it is for gather itself); negatives count from the
 * end, as gather's. The index gets no gradient. */
DY_GRAD(gather) {
  (void)y;
  if (!need[0])
    return DY_OK;
  dy_gather_attrs a = dy_gather_attrs_get(op);
  dy_type tx = b->type(b, x[0]), ti = b->type(b, x[1]);
  int rx = tx.rank, q = ti.rank, ax = (int)(a.axis < 0 ? a.axis + rx : a.axis);
  int64_t xperm[DY_MAX_DIMS], xinv[DY_MAX_DIMS], gperm[DY_MAX_DIMS];
  int n = 0;
  xperm[n++] = ax;
  for (int d = 0; d < rx; d++)
    if (d != ax)
      xperm[n++] = d;
  for (int d = 0; d < rx; d++)
    xinv[xperm[d]] = d;
  n = 0;
  for (int d = 0; d < q; d++)
    gperm[n++] = ax + d;
  for (int d = 0; d < ax; d++)
    gperm[n++] = d;
  for (int d = ax + q; d < rx - 1 + q; d++)
    gperm[n++] = d;
  int zeros = zeros_like(b, x[0]), upd = dy[0];
  if (ax > 0) {
    zeros = dy_gb_transpose(b, zeros, xperm, rx);
    upd = dy_gb_transpose(b, upd, gperm, rx - 1 + q);
  }
  int64_t last = q;
  dy_attr ua[DY_UNSQUEEZE_NATTRS], ra[DY_SCATTER_ND_NATTRS];
  int n_ua = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = &last, .n_axes = 1}, ua);
  int n_ra = dy_scatter_nd_attrs_put(&(dy_scatter_nd_attrs){
      .given = DY_GIVEN_ALL, .reduction = "add"}, ra);
  int idx = dy_gb_op1(b, DY_OP_UNSQUEEZE, x[1], ua, n_ua);
  int s = dy_gb_op(b, DY_OP_SCATTER_ND, (const int[]){zeros, idx, upd}, 3, ra, n_ra);
  dx[0] = ax > 0 ? dy_gb_transpose(b, s, xinv, rx) : s;
  return dy_gb_status(b);
}

/* ---- log_softmax ---- */

/* log_softmax: dx = dy - exp(y) * sum(dy, axis, keepdim) */
DY_GRAD(log_softmax) {
  (void)x;
  if (!need[0])
    return DY_OK;
  int64_t axis = dy_log_softmax_attrs_get(op).axis;
  int s = dy_gb_reduce_sum(b, dy[0], &axis, 1, true);
  int e = dy_gb_op1(b, DY_OP_EXP, y[0], NULL, 0);
  dx[0] = dy_gb_sub(b, dy[0], dy_gb_mul(b, e, s));
  return dy_gb_status(b);
}

/* ---- reductions ---- */

/* The reduced axes of x (every axis when the list is empty), normalised
 * and ascending; returns their number. */
static int reduced_axes(const int64_t *axes, int na, int rank, int64_t *out) {
  unsigned all = rank ? (1u << rank) - 1u : 0u;
  return mask_axes(na ? axes_mask(axes, na, rank) : all, rank, out);
}

/* dy broadcast back over the reduced axes of x: dy with the reduced dims
 * put back as 1s (when the op dropped them), expanded to x's shape. */
static int unreduce(dy_gb *b, int g, int x, const int64_t *axes, int na,
                    bool keepdim) {
  dy_type tx = b->type(b, x);
  int64_t ax[DY_MAX_DIMS];
  int n = reduced_axes(axes, na, tx.rank, ax);
  if (!keepdim && n > 0 && n < tx.rank) {
    dy_attr a[DY_UNSQUEEZE_NATTRS];
    int n_a = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
        .given = DY_GIVEN_ALL, .axes = ax, .n_axes = n}, a);
    g = dy_gb_op1(b, DY_OP_UNSQUEEZE, g, a, n_a);
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

/* reduce_max, reduce_min: the gradient goes to the element(s) equal to
 * the result, split evenly among ties, as PyTorch's amax / amin (Paddle
 * gives every tie the whole gradient, so its gradients can sum to more
 * than dy; the even split is a subgradient). A NaN result has no equal
 * element: its gradient is NaN, as PyTorch's. */
static dy_status extremum_grad(dy_gb *b, const int64_t *axes, int na,
                               bool keepdim, int x, int y, int dy, int *dx) {
  dy_type tx = b->type(b, x);
  int64_t ax[DY_MAX_DIMS];
  int n = reduced_axes(axes, na, tx.rank, ax);
  int hit = dy_gb_op(b, DY_OP_EQUAL, (const int[]){x, unreduce(b, y, x, axes, na, keepdim)},
                     2, NULL, 0);
  int mask = dy_gb_cast(b, hit, DY_F32);
  int count = dy_gb_reduce_sum(b, mask, ax, n, true);
  int g = unreduce(b, dy, x, axes, na, keepdim);
  *dx = dy_gb_div(b, dy_gb_mul(b, g, mask), count);
  return dy_gb_status(b);
}

DY_GRAD(reduce_max) {
  if (!need[0])
    return DY_OK;
  dy_reduce_max_attrs a = dy_reduce_max_attrs_get(op);
  return extremum_grad(b, a.axes, a.n_axes, a.keepdim != 0, x[0], y[0], dy[0], &dx[0]);
}

DY_GRAD(reduce_min) {
  if (!need[0])
    return DY_OK;
  dy_reduce_min_attrs a = dy_reduce_min_attrs_get(op);
  return extremum_grad(b, a.axes, a.n_axes, a.keepdim != 0, x[0], y[0], dy[0], &dx[0]);
}
