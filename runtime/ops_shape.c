/* ops_shape.c - the eager / tracing entry points of the shape op family.
 *
 * Each op is a thin wrapper over dy_apply (ops.c): it packs its arguments
 * into the op's attributes (the schema of ir/ops_shape.def) and lets the
 * one driver infer, allocate (a zero-copy view for squeeze/unsqueeze), run
 * the kernel and record. dy_split and dy_stack are not ops: they are made
 * of slices, and of unsqueezes plus a concat, so a traced Program holds
 * only those.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

static dy_tensor *apply1(dy_op_kind kind, dy_tensor *x, const dy_attr *attrs,
                         int n_attrs, dy_srcloc loc) {
  return dy_apply(kind, (dy_tensor *const[]){x}, 1, attrs, n_attrs, loc);
}

/* A list argument: n >= 0 entries, and a pointer unless empty. */
static bool list_ok(const char *op, const char *what, int n, const void *p,
                    dy_srcloc loc) {
  if (n < 0 || (n > 0 && !p)) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "%s: %s has %d entries%s", op,
            what, n, n > 0 ? " but is NULL" : "");
    return false;
  }
  return true;
}

/* ---- movement ---- */

dy_tensor *dy_concat_at(dy_tensor *const *xs, int n, int axis, dy_srcloc loc) {
  if (n < 1 || !xs)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "concat: needs at least one input");
  dy_attr attrs[DY_CONCAT_NATTRS];
  int n_attrs = dy_concat_attrs_put(&(dy_concat_attrs){.given = DY_GIVEN_ALL, .axis = axis}, attrs);
  return dy_apply(DY_OP_CONCAT, xs, n, attrs, n_attrs, loc);
}

dy_tensor *dy_slice_at(dy_tensor *x, int n, const int64_t *axes,
                       const int64_t *starts, const int64_t *ends,
                       const int64_t *steps, dy_srcloc loc) {
  if (!list_ok("slice", "starts", n, starts, loc) ||
      !list_ok("slice", "ends", n, ends, loc))
    return NULL;
  dy_attr attrs[DY_SLICE_NATTRS];
  int n_attrs = dy_slice_attrs_put(&(dy_slice_attrs){
      .given = DY_GIVEN_ALL, .starts = starts, .n_starts = n, .ends = ends, .n_ends = n,
      .axes = axes, .n_axes = axes ? n : 0, .steps = steps, .n_steps = steps ? n : 0}, attrs);
  return apply1(DY_OP_SLICE, x, attrs, n_attrs, loc);
}

/* An op of x with one int-list attribute, at (the list, argument `what`
 * of fn, checked first). */
static dy_tensor *apply_list(dy_op_kind k, const char *fn, const char *what, dy_tensor *x,
                             int n, const int64_t *list, const dy_attr *at, dy_srcloc loc) {
  if (!list_ok(fn, what, n, list, loc))
    return NULL;
  return apply1(k, x, at, 1, loc);
}

dy_tensor *dy_squeeze_at(dy_tensor *x, int n_axes, const int64_t *axes,
                         dy_srcloc loc) {
  dy_attr a[DY_SQUEEZE_NATTRS];
  dy_squeeze_attrs_put(&(dy_squeeze_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n_axes}, a);
  return apply_list(DY_OP_SQUEEZE, "squeeze", "axes", x, n_axes, axes, a, loc);
}

dy_tensor *dy_unsqueeze_at(dy_tensor *x, int n_axes, const int64_t *axes,
                           dy_srcloc loc) {
  dy_attr a[DY_UNSQUEEZE_NATTRS];
  dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n_axes}, a);
  return apply_list(DY_OP_UNSQUEEZE, "unsqueeze", "axes", x, n_axes, axes, a, loc);
}

dy_tensor *dy_expand_at(dy_tensor *x, int rank, const int64_t *shape,
                        dy_srcloc loc) {
  dy_attr a[DY_EXPAND_NATTRS];
  dy_expand_attrs_put(&(dy_expand_attrs){
      .given = DY_GIVEN_ALL, .shape = shape, .n_shape = rank}, a);
  return apply_list(DY_OP_EXPAND, "expand", "shape", x, rank, shape, a, loc);
}

dy_tensor *dy_expand_as_at(dy_tensor *x, dy_tensor *like, dy_srcloc loc) {
  return dy_apply(DY_OP_EXPAND_AS, (dy_tensor *const[]){x, like}, 2, NULL, 0, loc);
}

dy_tensor *dy_tile_at(dy_tensor *x, int n, const int64_t *repeat_times,
                      dy_srcloc loc) {
  dy_attr a[DY_TILE_NATTRS];
  dy_tile_attrs_put(&(dy_tile_attrs){
      .given = DY_GIVEN_ALL, .repeat_times = repeat_times, .n_repeat_times = n}, a);
  return apply_list(DY_OP_TILE, "tile", "repeat_times", x, n, repeat_times, a, loc);
}

dy_tensor *dy_pad_at(dy_tensor *x, int n, const int64_t *paddings,
                     const char *mode, double value, dy_srcloc loc) {
  if (!list_ok("pad", "paddings", n, paddings, loc))
    return NULL;
  dy_attr attrs[DY_PAD_NATTRS];
  int n_attrs = dy_pad_attrs_put(&(dy_pad_attrs){
      .given = DY_GIVEN_ALL, .paddings = paddings, .n_paddings = n,
      .mode = mode ? mode : "constant", .value = value}, attrs);
  return apply1(DY_OP_PAD, x, attrs, n_attrs, loc);
}

/* ---- split and stack: composites ---- */

bool dy_split_at(dy_tensor *x, int n, const int64_t *sizes, int axis,
                 dy_tensor **out, dy_srcloc loc) {
  if (!out || n < 1 || n > 4096) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "split: bad part count %d", n);
    return false;
  }
  for (int i = 0; i < n; i++)
    out[i] = NULL;
  if (!x) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "split: input is NULL");
    return false;
  }
  int r = x->type.rank;
  if (r == 0 || axis < -r || axis >= r) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "split: axis %d out of range for rank %d",
            axis, r);
    return false;
  }
  int64_t ax = axis < 0 ? axis + r : axis, dim = x->type.shape[ax];
  if (dim < 0 && n > 1) {
    dy_fail(DY_STATUS_UNSUPPORTED, loc,
            "split: axis %lld is the dynamic batch dim; splitting it in %d parts "
            "would fix the batch", (long long)ax, n);
    return false;
  }
  /* the part sizes */
  int64_t *len = calloc((size_t)n, sizeof *len);
  if (!len) {
    dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "split: out of memory");
    return false;
  }
  int64_t known = 0;
  int infer_at = -1;
  bool ok = true;
  if (dim < 0) { /* one part (checked above): the whole batch */
    len[0] = -1;
    ok = !sizes || sizes[0] == -1;
  }
  for (int i = 0; i < n && ok && dim >= 0; i++) {
    if (!sizes) {
      len[i] = dim / n;
    } else if (sizes[i] == -1 && infer_at < 0) {
      infer_at = i;
    } else if (sizes[i] < 0 || sizes[i] > dim - known) {
      ok = false;
    } else {
      len[i] = sizes[i];
      known += sizes[i];
    }
  }
  if (ok && dim >= 0) {
    if (!sizes)
      ok = dim % n == 0;
    else if (infer_at >= 0 && known <= dim)
      len[infer_at] = dim - known;
    else
      ok = infer_at < 0 && known == dim;
  }
  if (!ok) {
    free(len);
    dy_fail(DY_STATUS_SHAPE_MISMATCH, loc,
            "split: cannot split dim %lld of size %lld into %d %s", (long long)ax,
            (long long)dim, n, sizes ? "parts of the given sizes" : "equal parts");
    return false;
  }
  /* The slices are made in a scope of their own, so on failure nothing is
   * left behind; the parts then go to the caller's scope like op results. */
  dy_scope_begin();
  int64_t start = 0;
  for (int i = 0; i < n && ok; i++) {
    int64_t end = len[i] < 0 ? INT64_MAX : start + len[i];
    out[i] = dy_keep(dy_slice_at(x, 1, &ax, &start, &end, NULL, loc));
    ok = out[i] != NULL;
    start = end;
  }
  dy_scope_end();
  free(len);
  for (int i = 0; i < n; i++) {
    if (!ok) {
      dy_tensor_free(out[i]);
      out[i] = NULL;
    } else {
      out[i] = dy_tensor_adopt(out[i]);
    }
  }
  return ok;
}

dy_tensor *dy_stack_at(dy_tensor *const *xs, int n, int axis, dy_srcloc loc) {
  enum { MAX = 16 };
  if (n < 1 || n > MAX || !xs)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "stack: takes 1 to %d tensors, got %d",
                   MAX, n);
  /* intermediates die in this scope; only the result is kept */
  dy_scope_begin();
  dy_tensor *u[MAX];
  int64_t a = axis;
  for (int i = 0; i < n; i++)
    u[i] = dy_unsqueeze_at(xs[i], 1, &a, loc);
  dy_tensor *y = dy_keep(dy_concat_at(u, n, axis, loc));
  dy_scope_end();
  return dy_tensor_adopt(y);
}

/* ---- indexing ---- */

dy_tensor *dy_gather_at(dy_tensor *x, dy_tensor *index, int axis,
                        dy_srcloc loc) {
  dy_attr attrs[DY_GATHER_NATTRS];
  int n_attrs = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = axis}, attrs);
  return dy_apply(DY_OP_GATHER, (dy_tensor *const[]){x, index}, 2, attrs, n_attrs, loc);
}

/* The coordinates of x's nonzero elements, i64 [rank(x), n]. */
dy_tensor *dy_nonzero_at(dy_tensor *x, dy_srcloc loc) {
  dy_attr attrs[DY_NONZERO_NATTRS];
  int n_attrs = dy_nonzero_attrs_put(&(dy_nonzero_attrs){.given = DY_GIVEN_ALL,
                                                         .size_sym = "nonzero"}, attrs);
  return dy_apply(DY_OP_NONZERO, (dy_tensor *const[]){x}, 1, attrs, n_attrs, loc);
}

/* ---- reductions ---- */

static dy_tensor *reduce(dy_op_kind kind, dy_tensor *x, int n_axes,
                         const int64_t *axes, bool keepdim, dy_srcloc loc) {
  if (!list_ok(dy_op_name(kind), "axes", n_axes, axes, loc))
    return NULL;
  /* the reduce ops share one schema */
  dy_attr attrs[DY_REDUCE_SUM_NATTRS];
  int n = dy_reduce_sum_attrs_put(&(dy_reduce_sum_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n_axes, .keepdim = keepdim}, attrs);
  return apply1(kind, x, attrs, n, loc);
}

dy_tensor *dy_reduce_sum_at(dy_tensor *x, int n_axes, const int64_t *axes,
                            bool keepdim, dy_srcloc loc) {
  return reduce(DY_OP_REDUCE_SUM, x, n_axes, axes, keepdim, loc);
}
dy_tensor *dy_reduce_mean_at(dy_tensor *x, int n_axes, const int64_t *axes,
                             bool keepdim, dy_srcloc loc) {
  return reduce(DY_OP_REDUCE_MEAN, x, n_axes, axes, keepdim, loc);
}
dy_tensor *dy_reduce_max_at(dy_tensor *x, int n_axes, const int64_t *axes,
                            bool keepdim, dy_srcloc loc) {
  return reduce(DY_OP_REDUCE_MAX, x, n_axes, axes, keepdim, loc);
}
dy_tensor *dy_reduce_min_at(dy_tensor *x, int n_axes, const int64_t *axes,
                            bool keepdim, dy_srcloc loc) {
  return reduce(DY_OP_REDUCE_MIN, x, n_axes, axes, keepdim, loc);
}

dy_tensor *dy_argmax_at(dy_tensor *x, int axis, bool keepdim, dy_srcloc loc) {
  dy_attr attrs[DY_ARGMAX_NATTRS];
  int n_attrs = dy_argmax_attrs_put(&(dy_argmax_attrs){
      .given = DY_GIVEN_ALL, .axis = axis, .keepdim = keepdim}, attrs);
  return apply1(DY_OP_ARGMAX, x, attrs, n_attrs, loc);
}

dy_tensor *dy_log_softmax_at(dy_tensor *x, int axis, dy_srcloc loc) {
  dy_attr attrs[DY_LOG_SOFTMAX_NATTRS];
  int n_attrs = dy_log_softmax_attrs_put(&(dy_log_softmax_attrs){
      .given = DY_GIVEN_ALL, .axis = axis}, attrs);
  return apply1(DY_OP_LOG_SOFTMAX, x, attrs, n_attrs, loc);
}
