/* onnx_unique.c - ONNX Unique, composed of ops the table has, so the
 * executor and the generated C run it alike: the number of unique
 * elements (or slices along axis) is a size set at run time by nonzero.
 *
 * x (static shape) is seen as n slices of m elements: X [n, m] (the
 * flattened x and m = 1 without axis; else axis moved to the front). Over
 * every pair of slices (O(n^2 m) work: meant for the small tensors Unique
 * sees in models):
 *   E[i][j]  slice i equals slice j (every element equal)
 *   LT[i][j] slice i is lexicographically below slice j
 *   f[i]     i is a first occurrence (no equal slice before it)
 * The first occurrences P = nonzero(f), ascending, are the unique slices
 * in order of appearance (sorted = 0). A slice's rank R[i] is, sorted,
 * the number of unique slices below it (sum_j f[j] LT[j][i]), unsorted,
 * the rank of its first occurrence among P (sum_j E[i][j] f[j] c[j], c
 * the exclusive running count of f): inverse_indices is R. The outputs
 * are gathered at P (Y, indices, counts = sum_j E[i][j]); sorted, they
 * are then reordered by the inverse permutation of R at P (q[R[P[k]]] = k,
 * a scatter_elements), a gather again. The counts and ranks are summed in
 * f32, exact for the sizes allowed: n^2 m at most 2^24 elements (else
 * refused naming the sizes). */
#include <string.h>

#include "onnx_internal.h"

static ox_value *gather_at(ox_ctx *c, ox_value *x, ox_value *idx, int axis) {
  if (!x || !idx)
    return NULL;
  dy_attr a[DY_GATHER_NATTRS];
  int n_a = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = axis}, a);
  return ox_op(c, "gather", (ox_value *[]){x, idx}, 2, a, n_a);
}

/* 0/1 in f32 of a bool. */
static ox_value *as_f32(ox_ctx *c, ox_value *b) { return ox_cast(c, b, DY_F32); }

/* E and LT ([n, n] f32 0/1) of X [n, m]. */
static void compare_slices(ox_ctx *c, ox_value *xs, ox_value **eq, ox_value **lt) {
  ox_value *a = ox_unsqueeze(c, xs, 1, (int64_t[]){1}); /* [n, 1, m] */
  ox_value *b = ox_unsqueeze(c, xs, 1, (int64_t[]){0}); /* [1, n, m] */
  ox_value *e = as_f32(c, ox_binary(c, "equal", a, b));
  *eq = ox_reduce(c, "reduce_min", e, 1, (int64_t[]){2}, false);
  /* element k decides when every element before it is equal */
  dy_attr at[DY_CUMSUM_NATTRS];
  int n_at = dy_cumsum_attrs_put(
      &(dy_cumsum_attrs){.given = DY_GIVEN_ALL, .axis = 2, .exclusive = true}, at);
  ox_value *ne_before = ox_op(c, "cumsum", (ox_value *[]){ox_scale(c, e, -1.0f, 1.0f)}, 1, at,
                              n_at);
  ox_value *decides = as_f32(c, ox_binary(c, "equal", ne_before, ox_const_f32(c, 0.0f)));
  ox_value *below = as_f32(c, ox_binary(c, "less", a, b));
  *lt = ox_reduce(c, "reduce_max", ox_binary(c, "mul", below, decides), 1, (int64_t[]){2},
                  false);
}

/* Unique(X) -> Y, indices, inverse_indices, counts; attributes: axis
 * (none: flattened), sorted (1). */
static dy_status map_unique(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis sorted"));
  TRY(ox_need_in(c, 0, &x));
  if (dy_type_numel(&x->type) < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "Unique of a tensor of dynamic size");
  if (dy_type_numel(&x->type) == 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "Unique of an empty tensor");
  bool sorted = ox_attr_i(c, "sorted", 1) != 0;
  int axis = 0, r = x->type.rank;
  ox_value *v = x; /* what Y gathers from, along axis */
  int64_t n, m = 1;
  if (ox_attr(c, "axis")) {
    TRY(ox_axis(c, ox_attr_i(c, "axis", 0), r, &axis));
    n = x->type.shape[axis];
  } else {
    n = dy_type_numel(&x->type);
    v = ox_reshape(c, x, 1, &n);
  }
  m = dy_type_numel(&x->type) / n;
  if (n > 4096 || m > (1 << 24) / (n * n))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "Unique of %lld slices of %lld elements: the pairwise comparison dy2stc "
                   "builds (n^2 m elements) is limited to 2^24", (long long)n, (long long)m);
  int64_t perm[DY_MAX_DIMS];
  perm[0] = axis;
  for (int d = 0, k = 1; d < r; d++)
    if (d != axis)
      perm[k++] = d;
  ox_value *xs = ox_reshape(c, r > 1 ? ox_transpose(c, x, r, perm) : x, 2,
                            (int64_t[]){n, m});
  ox_value *eq, *lt;
  compare_slices(c, xs, &eq, &lt);
  /* f: no equal slice before i (the strictly lower triangle, j < i) */
  ox_value *lower = as_f32(c, ox_binary(c, "less", ox_iota(c, n, 2, 1),
                                        ox_iota(c, n, 2, 0)));
  ox_value *dup = ox_reduce(c, "reduce_max", ox_binary(c, "mul", eq, lower), 1,
                            (int64_t[]){1}, false);
  ox_value *f = ox_scale(c, dup, -1.0f, 1.0f); /* [n] */
  ox_value *first = ox_squeeze(c, ox_nonzero(c, ox_binary(c, "greater", f, ox_const_f32(c, 0.5f))),
                               1, (int64_t[]){0}); /* P, [count] */
  ox_value *rank;
  if (sorted) {
    ox_value *lt_t = ox_transpose(c, lt, 2, (int64_t[]){1, 0});
    rank = ox_reduce(c, "reduce_sum", ox_binary(c, "mul", lt_t, f), 1, (int64_t[]){1}, false);
  } else {
    dy_attr at[DY_CUMSUM_NATTRS];
    int n_at = dy_cumsum_attrs_put(
        &(dy_cumsum_attrs){.given = DY_GIVEN_ALL, .axis = 0, .exclusive = true}, at);
    ox_value *cnt = ox_op(c, "cumsum", &f, 1, at, n_at);
    rank = ox_reduce(c, "reduce_sum", ox_binary(c, "mul", eq, ox_binary(c, "mul", f, cnt)), 1,
                     (int64_t[]){1}, false);
  }
  rank = ox_cast(c, rank, DY_I64);
  ox_value *counts = ox_cast(c, ox_reduce(c, "reduce_sum", eq, 1, (int64_t[]){1}, false), DY_I64);
  ox_value *y = gather_at(c, v, first, axis), *idx = first;
  counts = gather_at(c, counts, first, 0);
  if (sorted) {
    /* q[R[P[k]]] = k: the unique slices in rank order */
    ox_value *rk = gather_at(c, rank, first, 0);
    dy_attr at[DY_CUMSUM_NATTRS];
    int n_at = dy_cumsum_attrs_put(
        &(dy_cumsum_attrs){.given = DY_GIVEN_ALL, .axis = 0, .exclusive = true}, at);
    ox_value *ones = ox_scale(c, ox_cast(c, first, DY_F32), 0.0f, 1.0f);
    ox_value *k = ox_cast(c, ox_op(c, "cumsum", &ones, 1, at, n_at), DY_I64);
    dy_attr sa[DY_SCATTER_ELEMENTS_NATTRS];
    int n_sa = dy_scatter_elements_attrs_put(
        &(dy_scatter_elements_attrs){.given = DY_GIVEN_ALL, .axis = 0, .reduction = "none"}, sa);
    ox_value *q = rk && k ? ox_op(c, "scatter_elements", (ox_value *[]){rk, rk, k}, 3, sa, n_sa)
                          : NULL;
    y = gather_at(c, y, q, axis);
    idx = gather_at(c, idx, q, 0);
    counts = gather_at(c, counts, q, 0);
  }
  TRY(ox_set_or_fail(c, 0, y));
  if (ox_out_wanted(c, 1))
    TRY(ox_set_or_fail(c, 1, idx));
  if (ox_out_wanted(c, 2))
    TRY(ox_set_or_fail(c, 2, rank));
  if (ox_out_wanted(c, 3))
    TRY(ox_set_or_fail(c, 3, counts));
  return DY_OK;
}

const ox_mapper ox_mappers_unique[] = {
    {"Unique", map_unique},
    {NULL, NULL},
};
