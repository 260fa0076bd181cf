/* dy_shape.h - eager entry points (and layers) of the shape op family.
 * Included by dy_runtime.h; see ir/ops_shape.def for the ops and
 * ir/infer/infer_shape.c for their exact rules.
 *
 * Every op returns a new tensor owned like any op result (the innermost
 * open scope, else the caller), or NULL with the error in dy_last_error;
 * each is a macro adding the caller's source line: dy_concat(xs, 2, 1) is
 * dy_concat_at(xs, 2, 1, DY_HERE). Shapes and axis lists are borrowed.
 *
 *   dy_tensor *h = dy_concat((dy_tensor *const[]){a, b}, 2, -1);
 *   dy_tensor *first = dy_slice(h, 1, DY_SHAPE(1), DY_SHAPE(0), DY_SHAPE(4), NULL);
 *   dy_tensor *loss = dy_reduce_mean(dy_log_softmax(logits, -1), 0, NULL, false);
 *
 * The dynamic batch (-1 in static mode) follows the IR's rule: an op that
 * would make an output dim some other function of the batch (concat or
 * tile along it, a partial slice or a pad of it) is rejected while
 * tracing, naming the source line.
 */
#ifndef DY_SHAPE_H
#define DY_SHAPE_H

#include "dy_runtime.h"

/* ---- ops_shape.c: movement ---- */

/* Join n tensors (1..16, same dtype and rank, same dims but on axis)
 * along axis (negative counts from the end). */
dy_tensor *dy_concat_at(dy_tensor *const *xs, int n, int axis, dy_srcloc loc);
/* Stack n tensors of one shape along a new axis (in [-(r+1), r]):
 * unsqueeze each there, then concat. */
dy_tensor *dy_stack_at(dy_tensor *const *xs, int n, int axis, dy_srcloc loc);
/* ONNX Slice of n axes (Paddle's slice/strided_slice): x[starts:ends:steps]
 * along axes. axes NULL means 0..n-1, steps NULL means all 1. Negative
 * starts/ends count from the end and are clamped; INT64_MAX is "to the
 * end"; a step may be negative, never 0. */
dy_tensor *dy_slice_at(dy_tensor *x, int n, const int64_t *axes,
                       const int64_t *starts, const int64_t *ends,
                       const int64_t *steps, dy_srcloc loc);
/* Split x along axis into n parts: equal ones when sizes is NULL (the dim
 * must divide by n), else of sizes[0..n) (one may be -1: the rest). Made
 * of slice ops. out[0..n) receive the parts (owned like op results).
 * Returns false on error (recorded; every out[i] NULL). */
bool dy_split_at(dy_tensor *x, int n, const int64_t *sizes, int axis,
                 dy_tensor **out, dy_srcloc loc);
/* Remove the named dims (each must be 1), or every size-1 dim when n_axes
 * is 0. A view: shares x's data. */
dy_tensor *dy_squeeze_at(dy_tensor *x, int n_axes, const int64_t *axes,
                         dy_srcloc loc);
/* Insert dims of 1 at axes of the output (ONNX-13). A view. */
dy_tensor *dy_unsqueeze_at(dy_tensor *x, int n_axes, const int64_t *axes,
                           dy_srcloc loc);
/* Broadcast x to shape (ONNX Expand: a 1 on either side takes the other's
 * size; -1 in shape keeps x's dim, as Paddle). */
dy_tensor *dy_expand_at(dy_tensor *x, int rank, const int64_t *shape,
                        dy_srcloc loc);
/* Broadcast x to like's shape (Paddle's expand_as). */
dy_tensor *dy_expand_as_at(dy_tensor *x, dy_tensor *like, dy_srcloc loc);
/* Repeat x repeat_times[d] times along each dim (Paddle's tile; the
 * shorter of the two lists is padded with leading 1s). */
dy_tensor *dy_tile_at(dy_tensor *x, int n, const int64_t *repeat_times,
                      dy_srcloc loc);
/* ONNX Pad. paddings has 2*rank entries, [begin_0 .. begin_{r-1}, end_0 ..
 * end_{r-1}]; negative ones crop. mode is "constant" (fill with value),
 * "reflect" (mirror, edge not repeated; each pad < the dim) or "edge". */
dy_tensor *dy_pad_at(dy_tensor *x, int n, const int64_t *paddings,
                     const char *mode, double value, dy_srcloc loc);

/* ---- ops_shape.c: indexing ---- */

/* ONNX Gather: index (i64, any rank) picks along axis; the result is
 * x.shape[:axis] + index.shape + x.shape[axis+1:]. Negative indices count
 * from the end; one out of range is DY_STATUS_INVALID_ARGUMENT naming it
 * (the compiled model returns NAME_ERR_INDEX). */
/* The coordinates of x's nonzero elements (any dtype, rank >= 1), i64
 * [rank(x), n] in C order, n the count (ONNX NonZero). Traced, n is a size
 * symbol the run sets. */
dy_tensor *dy_nonzero_at(dy_tensor *x, dy_srcloc loc);
dy_tensor *dy_gather_at(dy_tensor *x, dy_tensor *index, int axis,
                        dy_srcloc loc);

/* ---- ops_shape.c: reductions ---- */

/* Reduce over axes (n_axes 0: all), keeping them as 1s when keepdim.
 * sum, max and min take f32 or i64, mean f32. max/min propagate NaN. */
dy_tensor *dy_reduce_sum_at(dy_tensor *x, int n_axes, const int64_t *axes,
                            bool keepdim, dy_srcloc loc);
dy_tensor *dy_reduce_mean_at(dy_tensor *x, int n_axes, const int64_t *axes,
                             bool keepdim, dy_srcloc loc);
dy_tensor *dy_reduce_max_at(dy_tensor *x, int n_axes, const int64_t *axes,
                            bool keepdim, dy_srcloc loc);
dy_tensor *dy_reduce_min_at(dy_tensor *x, int n_axes, const int64_t *axes,
                            bool keepdim, dy_srcloc loc);
/* Index (i64) of the first maximum along axis; a NaN counts as the
 * largest value (the first NaN wins, as numpy). */
dy_tensor *dy_argmax_at(dy_tensor *x, int axis, bool keepdim, dy_srcloc loc);
/* x - max - log(sum(exp(x - max))) along axis. */
dy_tensor *dy_log_softmax_at(dy_tensor *x, int axis, dy_srcloc loc);

/* dy_concat(xs, n, axis) and dy_stack(xs, n, axis) are variadic so that a
 * compound literal's commas pass through: dy_concat((dy_tensor *const[]){a,
 * b}, 2, 0). */
#define dy_concat(...) dy_concat_at(__VA_ARGS__, DY_HERE)
#define dy_stack(...) dy_stack_at(__VA_ARGS__, DY_HERE)
#define dy_slice(x, n, axes, starts, ends, steps) \
  dy_slice_at((x), (n), (axes), (starts), (ends), (steps), DY_HERE)
#define dy_split(x, n, sizes, axis, out) \
  dy_split_at((x), (n), (sizes), (axis), (out), DY_HERE)
#define dy_squeeze(x, n, axes) dy_squeeze_at((x), (n), (axes), DY_HERE)
#define dy_unsqueeze(x, n, axes) dy_unsqueeze_at((x), (n), (axes), DY_HERE)
#define dy_expand(x, rank, shape) dy_expand_at((x), (rank), (shape), DY_HERE)
#define dy_expand_as(x, like) dy_expand_as_at((x), (like), DY_HERE)
#define dy_tile(x, n, reps) dy_tile_at((x), (n), (reps), DY_HERE)
#define dy_pad(x, n, paddings, mode, value) \
  dy_pad_at((x), (n), (paddings), (mode), (value), DY_HERE)
#define dy_gather(x, index, axis) dy_gather_at((x), (index), (axis), DY_HERE)
#define dy_nonzero(x) dy_nonzero_at((x), DY_HERE)
#define dy_reduce_sum(x, n, axes, keepdim) \
  dy_reduce_sum_at((x), (n), (axes), (keepdim), DY_HERE)
#define dy_reduce_mean(x, n, axes, keepdim) \
  dy_reduce_mean_at((x), (n), (axes), (keepdim), DY_HERE)
#define dy_reduce_max(x, n, axes, keepdim) \
  dy_reduce_max_at((x), (n), (axes), (keepdim), DY_HERE)
#define dy_reduce_min(x, n, axes, keepdim) \
  dy_reduce_min_at((x), (n), (axes), (keepdim), DY_HERE)
#define dy_argmax(x, axis, keepdim) dy_argmax_at((x), (axis), (keepdim), DY_HERE)
#define dy_log_softmax(x, axis) dy_log_softmax_at((x), (axis), DY_HERE)

/* ---- layers_shape.c ---- */

/* Embedding: a table weight [num_embeddings, embedding_dim] drawn from
 * N(0, 1) by the seeded generator (dy_seed); forward(ids) is
 * gather(weight, ids, 0), ids i64 of any shape, giving ids.shape + [dim].
 * padding_idx in [0, num) zeroes that row (Paddle); -1 means none. */
dy_layer *dy_embedding_new(int64_t num_embeddings, int64_t embedding_dim,
                           int64_t padding_idx);

#endif
