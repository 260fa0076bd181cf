/* dy_extra.h - eager entry points of the extra op family. Included by
 * dy_runtime.h; see ir/ops_extra.def for the ops and
 * runtime/kernels/kernels_extra.c for their exact semantics.
 *
 *   dy_tensor *s = dy_sin(x);
 *   dy_tensor *r = dy_mod(a, b, true);                   (C fmod)
 *   dy_tensor *i = dy_top_k(scores, 5, -1, true);        (i64 indices)
 *   dy_tensor *v = dy_gather_elements(scores, i, -1);    (their values)
 *
 * Like every op, each returns a new tensor owned by the innermost open
 * scope (else by the caller), or NULL on error (dy_last_error names the
 * call's source line); a NULL input gives NULL. Each dy_<op>(...) macro is
 * dy_<op>_at(..., DY_HERE).
 */
#ifndef DY_EXTRA_H
#define DY_EXTRA_H

#include "dy_runtime.h"

/* ---- trigonometry (f32) ----
 *
 * dy_sin dy_cos dy_tan dy_asin dy_acos dy_atan (x), in radians: declared
 * in dy_runtime.h (macros in the generated dy_ew_api.h) from the DY_UNARY
 * lines of ir/ops_extra.def.
 */

/* ---- remainder, product, running sum (f32 or i64) ---- */

/* x mod y, broadcasting. c_fmod true: the dividend's sign (C fmod); false:
 * the divisor's (Python %). An i64 remainder by 0 is 0. */
dy_tensor *dy_mod_at(dy_tensor *x, dy_tensor *y, bool c_fmod, dy_srcloc loc);
/* Product over axes (n == 0: all); keepdim keeps them as 1. */
dy_tensor *dy_reduce_prod_at(dy_tensor *x, int n, const int64_t *axes, bool keepdim,
                             dy_srcloc loc);
/* Running sums along axis; exclusive leaves each element out of its own
 * sum, reverse sums from the end. */
dy_tensor *dy_cumsum_at(dy_tensor *x, int axis, bool exclusive, bool reverse,
                        dy_srcloc loc);

#define dy_mod(x, y, c_fmod) dy_mod_at((x), (y), (c_fmod), DY_HERE)
#define dy_reduce_prod(x, n, axes, keepdim) \
  dy_reduce_prod_at((x), (n), (axes), (keepdim), DY_HERE)
#define dy_cumsum(x, axis, exclusive, reverse) \
  dy_cumsum_at((x), (axis), (exclusive), (reverse), DY_HERE)

/* ---- indexing by i64 tensors; an index out of range is an error ---- */

/* out[i..] = x[i.. with index[i..] on axis]; index has x's rank. */
dy_tensor *dy_gather_elements_at(dy_tensor *x, dy_tensor *index, int axis,
                                  dy_srcloc loc);
/* x with updates written (reduction "none") or combined ("add", "mul",
 * "max", "min") at the positions index names along axis. */
dy_tensor *dy_scatter_elements_at(dy_tensor *x, dy_tensor *index, dy_tensor *updates,
                                  int axis, const char *reduction, dy_srcloc loc);
/* ONNX GatherND: index [..., k] picks slices x[b.., tuple, :]. */
dy_tensor *dy_gather_nd_at(dy_tensor *x, dy_tensor *index, int batch_dims,
                           dy_srcloc loc);
/* ONNX ScatterND. */
dy_tensor *dy_scatter_nd_at(dy_tensor *x, dy_tensor *index, dy_tensor *updates,
                            const char *reduction, dy_srcloc loc);

#define dy_gather_elements(x, index, axis) \
  dy_gather_elements_at((x), (index), (axis), DY_HERE)
#define dy_scatter_elements(x, index, updates, axis, reduction) \
  dy_scatter_elements_at((x), (index), (updates), (axis), (reduction), DY_HERE)
#define dy_gather_nd(x, index, batch_dims) dy_gather_nd_at((x), (index), (batch_dims), DY_HERE)
#define dy_scatter_nd(x, index, updates, reduction) \
  dy_scatter_nd_at((x), (index), (updates), (reduction), DY_HERE)

/* ---- top-k, determinant ---- */

/* The i64 indices of the k largest (or smallest) along axis, best first;
 * ties go to the lower index. The values: dy_gather_elements(x, i, axis). */
dy_tensor *dy_top_k_at(dy_tensor *x, int64_t k, int axis, bool largest, dy_srcloc loc);
/* Determinants of the trailing n x n matrices (f32, n <= 64). */
dy_tensor *dy_det_at(dy_tensor *x, dy_srcloc loc);
/* Inverses of the trailing n x n matrices (f32, n <= 64; a singular one
 * gives inf / NaN). */
dy_tensor *dy_inverse_at(dy_tensor *x, dy_srcloc loc);

#define dy_top_k(x, k, axis, largest) dy_top_k_at((x), (k), (axis), (largest), DY_HERE)
#define dy_det(x) dy_det_at((x), DY_HERE)
#define dy_inverse(x) dy_inverse_at((x), DY_HERE)

#endif
