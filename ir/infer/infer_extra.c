/* infer_extra.c - shape and dtype inference for the extra op family
 * (ops_extra.def). Semantics follow ONNX; each function's comment states
 * its rules. As everywhere, -1 is the batch B: an output dim may be -1
 * only where it is exactly B, and an extent a kernel must know (top_k's
 * axis, det's matrix, the k of an index tuple) must be static.
 *
 *   sin cos tan asin acos atan   f32 -> f32, elementwise (DY_UNARY lines:
 *                                inferred in ir/infer/infer_core.c from their rule)
 *   mod(a, b; fmod)              f32 or i64 (both alike), broadcasting
 *   reduce_prod(x; axes, keepdim)  as reduce_sum; the product of nothing is 1
 *   cumsum(x; axis, exclusive, reverse)  f32 or i64, x's type
 *   gather_elements(x, idx; axis)        idx i64 of x's rank -> idx's shape
 *   gather_nd(x, idx; batch_dims)        idx i64 [..., k] -> idx[:-1] + x[b+k:]
 *   scatter_elements(x, idx, upd; axis, reduction)  -> x's type
 *   scatter_nd(x, idx, upd; reduction)              -> x's type
 *   top_k(x; k, axis, largest)   f32 or i64 -> i64 indices, axis extent k
 *   det(x)                       f32 [..., n, n] -> [...]
 *   inverse(x)                   f32 [..., n, n] -> x's type
 *   grid_sample_grad(dy, grid, x), roi_align_grad(dy, rois, bi, x)
 *                                dy of the forward op's output type -> x's
 */
#include <string.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

#define M_F32 (1u << DY_F32)
#define M_I64 (1u << DY_I64)
#define M_ANY ((1u << DY_DTYPE_COUNT) - 1u)

/* The largest matrix det accepts (the generated kernel keeps one n x n
 * copy on the stack). */
#define DET_MAX_N 64

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static dy_status need_dtype(const dy_op *op, const dy_type *t, const char *what,
                            unsigned mask, dy_error *err) {
  if ((mask >> t->dtype) & 1u)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: %s is %s, needs %s",
                     OPNAME(op), what, dy_dtype_name(t->dtype),
                     mask == M_F32 ? "f32" : mask == M_I64 ? "i64" : "f32 or i64");
}

static dy_status need_flag(const dy_op *op, const char *name, int64_t v,
                           dy_error *err) {
  if (v != 0 && v != 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: attribute %s is %lld, must be 0 or 1", OPNAME(op), name,
                       (long long)v);
  return DY_OK;
}

/* A string attribute among a NULL-terminated list of choices. */
static dy_status need_choice(const dy_op *op, const char *name, const char *v,
                             const char *const *choices, dy_error *err) {
  for (int i = 0; v && choices[i]; i++)
    if (strcmp(v, choices[i]) == 0)
      return DY_OK;
  return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                     "%s: %s \"%s\" is not one of the supported values", OPNAME(op),
                     name, v ? v : "");
}

static const char *const reductions[] = {"none", "add", "mul", "max", "min", NULL};

static dy_status shape_error(const dy_op *op, const char *what, const dy_type *a,
                             const dy_type *b, dy_error *err) {
  char sa[128], sb[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: %s (%s vs %s)", OPNAME(op),
                     what, dy_type_str(a, sa, sizeof sa), dy_type_str(b, sb, sizeof sb));
}

/* ------------------------------------------------------------------ */
/* elementwise                                                         */
/* ------------------------------------------------------------------ */

/* mod(a, b; fmod): the remainder of a / b, broadcasting; f32 or i64, both
 * alike. fmod 1: a - trunc(a / b) b, the dividend's sign (C fmod, ONNX
 * fmod=1); fmod 0: a - floor(a / b) b, the divisor's sign (Python %). An
 * i64 remainder by 0 is 0 (the kernels define it rather than trap). */
dy_status dy_infer_mod(const dy_op *op, const dy_type *in, int n, dy_type *out,
                       dy_error *err) {
  dy_mod_attrs a;
  dy_status s;
  if ((s = dy_mod_attrs_of(op, &a, err)) || (s = need_flag(op, "fmod", a.fmod, err)) ||
      (s = need_dtype(op, &in[0], "input 0", M_F32 | M_I64, err)))
    return s;
  if (in[0].dtype != in[1].dtype)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "mod: dtypes %s and %s differ",
                       dy_dtype_name(in[0].dtype), dy_dtype_name(in[1].dtype));
  return dy_broadcast_shapes(op, &in[0], &in[1], out, err);
}

/* ------------------------------------------------------------------ */
/* reduce_prod, cumsum                                                 */
/* ------------------------------------------------------------------ */

/* reduce_prod(x; axes, keepdim): axes empty means all, a repeated axis is
 * an error; each reduced dim becomes 1 (keepdim) or goes. The product of an
 * empty axis is 1. i64 wraps. */
dy_status dy_infer_reduce_prod(const dy_op *op, const dy_type *in, int n,
                               dy_type *out, dy_error *err) {
  dy_reduce_prod_attrs a;
  dy_status s;
  if ((s = dy_reduce_prod_attrs_of(op, &a, err)) ||
      (s = need_flag(op, "keepdim", a.keepdim, err)) ||
      (s = need_dtype(op, &in[0], "input", M_F32 | M_I64, err)))
    return s;
  const dy_type *x = &in[0];
  const int64_t *axes = a.axes;
  int na = a.n_axes;
  unsigned mask = na ? 0 : (x->rank ? (1u << x->rank) - 1 : 0);
  for (int i = 0; i < na; i++) {
    int ax;
    if ((s = dy_normalize_axis(op, axes[i], x->rank, &ax, err)))
      return s;
    if (mask >> ax & 1u)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "reduce_prod: axis %lld repeats axis %d", (long long)axes[i], ax);
    mask |= 1u << ax;
  }
  out->dtype = x->dtype;
  out->rank = 0;
  for (int d = 0; d < x->rank; d++)
    if (!(mask >> d & 1u))
      out->shape[out->rank++] = x->shape[d];
    else if (a.keepdim)
      out->shape[out->rank++] = 1;
  return DY_OK;
}

/* cumsum(x; axis, exclusive, reverse): running sums along axis, x's type.
 * exclusive leaves each element out of its own sum (the first is 0);
 * reverse sums from the end. i64 wraps. */
dy_status dy_infer_cumsum(const dy_op *op, const dy_type *in, int n, dy_type *out,
                          dy_error *err) {
  dy_cumsum_attrs a;
  int ax;
  dy_status s;
  if ((s = dy_cumsum_attrs_of(op, &a, err)) ||
      (s = need_flag(op, "exclusive", a.exclusive, err)) ||
      (s = need_flag(op, "reverse", a.reverse, err)) ||
      (s = need_dtype(op, &in[0], "input", M_F32 | M_I64, err)))
    return s;
  if (in[0].rank == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "cumsum: x must have rank >= 1");
  if ((s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)))
    return s;
  *out = in[0];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gathers and scatters                                                */
/* ------------------------------------------------------------------ */

/* Element indexing: idx is i64 of x's rank; along every dim but axis its
 * extent is at most x's (equal when either is the batch). */
static dy_status elements_shapes(const dy_op *op, int64_t axis, const dy_type *x,
                                 const dy_type *idx, int *ax, dy_error *err) {
  dy_status s;
  if (x->rank == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: x must have rank >= 1",
                       OPNAME(op));
  if ((s = dy_normalize_axis(op, axis, x->rank, ax, err)) ||
      (s = need_dtype(op, idx, "the index", M_I64, err)))
    return s;
  if (idx->rank != x->rank)
    return shape_error(op, "the index must have the data's rank", idx, x, err);
  for (int d = 0; d < x->rank; d++) {
    if (d == *ax)
      continue;
    int64_t a = x->shape[d], b = idx->shape[d];
    if ((a < 0 || b < 0) ? a != b : b > a)
      return shape_error(op, "the index is larger than the data off the axis", idx, x, err);
  }
  return DY_OK;
}

/* gather_elements(x, idx; axis): out[i..] = x[i.. with idx[i..] on axis],
 * ONNX GatherElements. Negative indices count from the end. */
dy_status dy_infer_gather_elements(const dy_op *op, const dy_type *in, int n,
                                   dy_type *out, dy_error *err) {
  int ax;
  dy_gather_elements_attrs a;
  dy_status s;
  if ((s = dy_gather_elements_attrs_of(op, &a, err)) ||
      (s = elements_shapes(op, a.axis, &in[0], &in[1], &ax, err)))
    return s;
  *out = in[1];
  out->dtype = in[0].dtype;
  return DY_OK;
}

/* scatter_elements(x, idx, upd; axis, reduction): out = x, then for every
 * element of idx (in C order) out[i.. with idx[i..] on axis] = upd[i..]
 * (none: the last write wins) or combined with it (add, mul, max, min).
 * upd has idx's shape and x's dtype. ONNX ScatterElements. */
dy_status dy_infer_scatter_elements(const dy_op *op, const dy_type *in, int n,
                                    dy_type *out, dy_error *err) {
  int ax;
  dy_scatter_elements_attrs a;
  dy_status s;
  if ((s = dy_scatter_elements_attrs_of(op, &a, err)) ||
      (s = need_choice(op, "reduction", a.reduction, reductions, err)) ||
      (s = elements_shapes(op, a.axis, &in[0], &in[1], &ax, err)))
    return s;
  dy_type want = in[1];
  want.dtype = in[0].dtype;
  if (!dy_type_equal(&want, &in[2]))
    return shape_error(op, "the updates must have the index's shape and the data's dtype",
                       &in[2], &want, err);
  *out = in[0];
  return DY_OK;
}

/* Tuple indexing: idx is i64 [..., k] with k static, 1 <= k <= rank - b,
 * and its first b dims equal x's. */
static dy_status nd_shapes(const dy_op *op, const dy_type *x, const dy_type *idx,
                           int64_t b, int *k, dy_error *err) {
  *k = 0; /* defined on the error paths too */
  dy_status s = need_dtype(op, idx, "the index", M_I64, err);
  if (s)
    return s;
  int q = idx->rank;
  if (q < 1 || b < 0 || b >= q || b >= x->rank)
    return shape_error(op, "the index needs rank >= 1 and batch_dims below both ranks",
                       idx, x, err);
  int64_t kk = idx->shape[q - 1];
  if (kk < 1 || kk > x->rank - b)
    return shape_error(op, "the index's last dim must be static, in [1, rank - batch_dims]",
                       idx, x, err);
  for (int d = 0; d < b; d++)
    if (idx->shape[d] != x->shape[d])
      return shape_error(op, "the batch dims of the index and the data differ", idx, x, err);
  *k = (int)kk;
  return DY_OK;
}

/* gather_nd(x, idx; batch_dims): ONNX GatherND. Each k-tuple idx[i.., :]
 * picks x[b.., tuple, :] (negative entries count from the end); out is
 * idx.shape[:-1] + x.shape[b + k:]. */
dy_status dy_infer_gather_nd(const dy_op *op, const dy_type *in, int n, dy_type *out,
                             dy_error *err) {
  dy_gather_nd_attrs a;
  int k;
  dy_status s;
  if ((s = dy_gather_nd_attrs_of(op, &a, err)))
    return s;
  int64_t b = a.batch_dims;
  if ((s = nd_shapes(op, &in[0], &in[1], b, &k, err)))
    return s;
  const dy_type *x = &in[0], *idx = &in[1];
  int r = idx->rank - 1 + x->rank - (int)b - k;
  if (r > DY_MAX_DIMS)
    return shape_error(op, "the output rank is too large", idx, x, err);
  out->dtype = x->dtype;
  out->rank = 0;
  for (int d = 0; d < idx->rank - 1; d++)
    out->shape[out->rank++] = idx->shape[d];
  for (int d = (int)b + k; d < x->rank; d++)
    out->shape[out->rank++] = x->shape[d];
  return DY_OK;
}

/* scatter_nd(x, idx, upd; reduction): ONNX ScatterND (no batch dims).
 * out = x, then for every k-tuple of idx (in C order) the slice
 * out[tuple, :] is set to (or combined with) upd[i.., :]; upd is
 * idx.shape[:-1] + x.shape[k:] of x's dtype. */
dy_status dy_infer_scatter_nd(const dy_op *op, const dy_type *in, int n, dy_type *out,
                              dy_error *err) {
  int k;
  dy_scatter_nd_attrs a;
  dy_status s;
  if ((s = dy_scatter_nd_attrs_of(op, &a, err)) ||
      (s = need_choice(op, "reduction", a.reduction, reductions, err)) ||
      (s = nd_shapes(op, &in[0], &in[1], 0, &k, err)))
    return s;
  const dy_type *x = &in[0], *idx = &in[1];
  dy_type want = {.dtype = x->dtype, .rank = idx->rank - 1 + x->rank - k};
  if (want.rank > DY_MAX_DIMS)
    return shape_error(op, "the updates' rank is too large", idx, x, err);
  int r = 0;
  for (int d = 0; d < idx->rank - 1; d++)
    want.shape[r++] = idx->shape[d];
  for (int d = k; d < x->rank; d++)
    want.shape[r++] = x->shape[d];
  if (!dy_type_equal(&want, &in[2]))
    return shape_error(op, "the updates must be idx[:-1] + x[k:] of the data's dtype",
                       &in[2], &want, err);
  *out = *x;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* top_k, det                                                          */
/* ------------------------------------------------------------------ */

/* top_k(x; k, axis, largest): the indices (i64) of the k largest (largest
 * 1) or smallest (0) elements along axis, best first; ties go to the lower
 * index, NaN counts as larger than any number. The axis must be static,
 * 1 <= k <= its extent. The values are a gather_elements away. */
dy_status dy_infer_top_k(const dy_op *op, const dy_type *in, int n, dy_type *out,
                         dy_error *err) {
  dy_top_k_attrs a;
  int ax;
  dy_status s;
  if ((s = dy_top_k_attrs_of(op, &a, err)) ||
      (s = need_flag(op, "largest", a.largest, err)) ||
      (s = need_dtype(op, &in[0], "input", M_F32 | M_I64, err)))
    return s;
  if (in[0].rank == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "top_k: x must have rank >= 1");
  if ((s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)))
    return s;
  int64_t k = a.k, dim = in[0].shape[ax];
  if (dim < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "top_k: the axis is the dynamic batch; it must be static");
  if (k < 1 || k > dim)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "top_k: k is %lld, must be in [1, %lld]", (long long)k,
                       (long long)dim);
  *out = in[0];
  out->dtype = DY_I64;
  out->shape[ax] = k;
  return DY_OK;
}

/* nms(boxes f32 [B, N, 4], scores f32 [B, C, N]; size_sym) -> i64
 * [size_sym, 3]: the kept boxes' (batch, class, box) rows (ops_extra.def).
 * size_sym is a size symbol no input gives: the kernel's count sets it. */
dy_status dy_infer_nms(const dy_op *op, const dy_type *in, int n, dy_type *out, dy_error *err) {
  dy_nms_attrs a;
  dy_status s;
  (void)n;
  if ((s = dy_nms_attrs_of(op, &a, err)) ||
      (s = need_flag(op, "center_point_box", a.center_point_box, err)) ||
      (s = need_flag(op, "has_score_threshold", a.has_score_threshold, err)) ||
      (s = need_dtype(op, &in[0], "boxes", M_F32, err)) ||
      (s = need_dtype(op, &in[1], "scores", M_F32, err)))
    return s;
  const dy_type *b = &in[0], *sc = &in[1];
  if (b->rank != 3 || b->shape[2] != 4 || sc->rank != 3 || b->shape[0] != sc->shape[0] ||
      b->shape[1] != sc->shape[2])
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "nms: boxes must be [B, N, 4] and scores [B, C, N]");
  if (a.max_per_class < 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "nms: max_per_class is %lld, must be >= 0", (long long)a.max_per_class);
  int64_t d;
  if ((s = dy_size_sym_dim(op, a.size_sym, &d, err)))
    return s;
  *out = (dy_type){.dtype = DY_I64, .rank = 2, .shape = {d, 3}};
  return DY_OK;
}

/* f32 [..., n, n] with n static and at most DET_MAX_N (det, inverse). */
static dy_status square_matrices(const dy_op *op, const dy_type *x, dy_error *err) {
  dy_status s = need_dtype(op, x, "input", M_F32, err);
  if (s)
    return s;
  char ts[128];
  if (x->rank < 2 || x->shape[x->rank - 1] != x->shape[x->rank - 2] ||
      x->shape[x->rank - 1] < 1 || x->shape[x->rank - 1] > DET_MAX_N)
    return dy_error_at(err, op, x->rank >= 2 && x->shape[x->rank - 1] > DET_MAX_N
                                    ? DY_STATUS_UNSUPPORTED : DY_STATUS_SHAPE_MISMATCH,
                       "%s: needs [..., n, n] with static 1 <= n <= %d, got %s", OPNAME(op),
                       DET_MAX_N, dy_type_str(x, ts, sizeof ts));
  return DY_OK;
}

/* det(x): the determinant of each trailing n x n matrix (f32; LU with
 * partial pivoting, in double), n static and at most DET_MAX_N. */
dy_status dy_infer_det(const dy_op *op, const dy_type *in, int n, dy_type *out,
                       dy_error *err) {
  dy_status s = square_matrices(op, &in[0], err);
  if (s)
    return s;
  *out = in[0];
  out->rank -= 2;
  return DY_OK;
}

/* inverse(x): the inverse of each trailing n x n matrix (f32;
 * Gauss-Jordan with partial pivoting, in double), n as det's. A singular
 * matrix divides by its zero pivot: inf / NaN, as 1 / 0. */
dy_status dy_infer_inverse(const dy_op *op, const dy_type *in, int n, dy_type *out,
                           dy_error *err) {
  dy_status s = square_matrices(op, &in[0], err);
  if (s)
    return s;
  *out = in[0];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* grid_sample, roi_align                                              */
/* ------------------------------------------------------------------ */

/* grid_sample(x, grid; mode, padding_mode, align_corners): ONNX
 * GridSample (PyTorch's grid_sample), 2-D. x f32 [N, C, H, W], grid f32
 * [N, Ho, Wo, 2] of (x, y) in [-1, 1] -> [N, C, Ho, Wo]. mode bilinear,
 * nearest (half to even) or bicubic (A = -0.75); padding_mode zeros,
 * border or reflection. C, H, W static. */
dy_status dy_infer_grid_sample(const dy_op *op, const dy_type *in, int n, dy_type *out,
                               dy_error *err) {
  static const char *const modes[] = {"bilinear", "nearest", "bicubic", NULL};
  static const char *const pads[] = {"zeros", "border", "reflection", NULL};
  dy_grid_sample_attrs a;
  dy_status s;
  if ((s = dy_grid_sample_attrs_of(op, &a, err)) ||
      (s = need_choice(op, "mode", a.mode, modes, err)) ||
      (s = need_choice(op, "padding_mode", a.padding_mode, pads, err)) ||
      (s = need_flag(op, "align_corners", a.align_corners, err)) ||
      (s = need_dtype(op, &in[0], "x", M_F32, err)) ||
      (s = need_dtype(op, &in[1], "the grid", M_F32, err)))
    return s;
  const dy_type *x = &in[0], *g = &in[1];
  if (x->rank != 4 || g->rank != 4 || g->shape[3] != 2 || g->shape[0] != x->shape[0])
    return shape_error(op, "needs x [N, C, H, W] and grid [N, Ho, Wo, 2]", x, g, err);
  for (int d = 1; d < 4; d++)
    if (x->shape[d] < 1 || g->shape[d] < 1)
      return shape_error(op, "C, H, W, Ho, Wo must be static and non-empty", x, g, err);
  *out = (dy_type){.dtype = DY_F32, .rank = 4,
                   .shape = {x->shape[0], x->shape[1], g->shape[1], g->shape[2]}};
  return DY_OK;
}

/* roi_align(x, rois, batch_index; mode, output_height, output_width,
 * sampling_ratio, spatial_scale, half_pixel): ONNX RoiAlign. x f32
 * [N, C, H, W], rois f32 [R, 4] (x1, y1, x2, y2), batch_index i64 [R]
 * -> [R, C, output_height, output_width]. Each bin averages (mode avg) or
 * takes the largest weighted tap of (mode max, as onnxruntime does) a
 * grid of bilinear samples; sampling_ratio 0 sizes the grid from the
 * region. half_pixel shifts coordinates by -0.5 (else the region is at
 * least 1 x 1). A batch index outside [0, N) fails the run. */
dy_status dy_infer_roi_align(const dy_op *op, const dy_type *in, int n, dy_type *out,
                             dy_error *err) {
  static const char *const modes[] = {"avg", "max", NULL};
  dy_roi_align_attrs a;
  dy_status s;
  if ((s = dy_roi_align_attrs_of(op, &a, err)) ||
      (s = need_choice(op, "mode", a.mode, modes, err)) ||
      (s = need_flag(op, "half_pixel", a.half_pixel, err)) ||
      (s = need_dtype(op, &in[0], "x", M_F32, err)) ||
      (s = need_dtype(op, &in[1], "the rois", M_F32, err)) ||
      (s = need_dtype(op, &in[2], "the batch index", M_I64, err)))
    return s;
  int64_t oh = a.output_height, ow = a.output_width, sr = a.sampling_ratio;
  double scale = a.spatial_scale;
  if (oh < 1 || ow < 1 || oh > (1 << 20) || ow > (1 << 20) || sr < 0 || sr > (1 << 20) ||
      !(scale > 0 && scale < 1e30))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "roi_align: output size, sampling_ratio or spatial_scale out of range");
  const dy_type *x = &in[0], *r = &in[1], *b = &in[2];
  if (x->rank != 4 || r->rank != 2 || r->shape[1] != 4 || b->rank != 1 ||
      b->shape[0] != r->shape[0])
    return shape_error(op, "needs x [N, C, H, W], rois [R, 4] and batch_index [R]", x, r, err);
  for (int d = 1; d < 4; d++)
    if (x->shape[d] < 1)
      return shape_error(op, "C, H, W must be static and non-empty", x, r, err);
  *out = (dy_type){.dtype = DY_F32, .rank = 4, .shape = {r->shape[0], x->shape[1], oh, ow}};
  return DY_OK;
}

/* grid_sample_grad(dy, grid, x) and roi_align_grad(dy, rois, batch_index,
 * x): the forward op's rules over (x, grid) or (x, rois, batch_index), dy
 * its output's type; the gradient has x's. */
static dy_status sampling_grad(const dy_op *op, const dy_type *in, int n_fwd,
                               dy_infer_fn fwd, dy_type *out, dy_error *err) {
  dy_type fin[3], want;
  fin[0] = in[n_fwd];
  for (int i = 1; i < n_fwd; i++)
    fin[i] = in[i];
  dy_status s = fwd(op, fin, n_fwd, &want, err);
  if (s)
    return s;
  if (!dy_type_equal(&want, &in[0]))
    return shape_error(op, "the gradient must have the forward op's output type", &in[0],
                       &want, err);
  *out = in[n_fwd];
  return DY_OK;
}

dy_status dy_infer_grid_sample_grad(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                    dy_error *err) {
  (void)n;
  return sampling_grad(op, in, 2, dy_infer_grid_sample, out, err);
}

dy_status dy_infer_roi_align_grad(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                  dy_error *err) {
  (void)n;
  return sampling_grad(op, in, 3, dy_infer_roi_align, out, err);
}
