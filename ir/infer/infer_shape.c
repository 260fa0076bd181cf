/* infer_shape.c - shape and dtype inference for the shape op family
 * (ops_shape.def): concat, slice, squeeze, unsqueeze, reshape_dims, expand,
 * tile, pad, gather, the reductions, argmax and log_softmax; nonzero, whose
 * output size the kernel sets (dy_op_size_sym, dy_op_size_bound).
 *
 * Semantics follow ONNX (and Paddle where ONNX is silent); each function's
 * comment states the rules. Symbolic dims (size expressions, ir/core/dims.c;
 * -1 the batch B) follow infer.c: concat adds them (seq + 2, 2*B); a
 * partial slice of one, tiling or padding it is DY_STATUS_UNSUPPORTED (its
 * whole range only), and a static dim that would have to equal a symbolic
 * one is a shape error. Reducing over one is fine: the result dim is 1
 * (keepdim) or gone.
 *
 * Attributes are all required by the verifier (ops.def schema), but a list
 * may be empty where the op gives it a meaning (slice axes/steps, squeeze
 * and reduce axes).
 */
#include <stdint.h>
#include <string.h>

#include "dy_checked.h"
#include "dy_det.h"
#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static dy_status need_dtypes(const dy_op *op, const dy_type *t, unsigned mask,
                             const char *what, dy_error *err) {
  if ((mask >> t->dtype) & 1u)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: needs %s, got %s",
                     OPNAME(op), what, dy_dtype_name(t->dtype));
}

#define F32_ONLY (1u << DY_F32)
#define F32_I64 (1u << DY_F32 | 1u << DY_I64)

/* Normalise a list of axes against rank into mask (bit per axis); a
 * repeated axis is an error. */
static dy_status axes_mask(const dy_op *op, const int64_t *axes, int n,
                           int rank, unsigned *mask, dy_error *err) {
  *mask = 0;
  for (int i = 0; i < n; i++) {
    int ax;
    dy_status s = dy_normalize_axis(op, axes[i], rank, &ax, err);
    if (s)
      return s;
    if (*mask >> ax & 1u)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: axis %lld repeats axis %d", OPNAME(op),
                         (long long)axes[i], ax);
    *mask |= 1u << ax;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* concat                                                              */
/* ------------------------------------------------------------------ */

/* concat(x0, x1, ...; axis): every input has the same dtype and rank and
 * the same dims except along axis, where they add up (a size expression:
 * seq + 2, 2*batch). */
dy_status dy_infer_concat(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  dy_concat_attrs a;
  int ax;
  dy_status s = dy_concat_attrs_of(op, &a, err);
  if (s)
    return s;
  int64_t axis = a.axis;
  int r = in[0].rank;
  if (r == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "concat: inputs must have rank >= 1 (input 0 is a scalar)");
  if ((s = dy_normalize_axis(op, axis, r, &ax, err)))
    return s;
  *out = in[0];
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    char a[128], b[128];
    if (in[i].dtype != in[0].dtype)
      return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                         "concat: input %d is %s, input 0 is %s", i,
                         dy_dtype_name(in[i].dtype), dy_dtype_name(in[0].dtype));
    if (in[i].rank != r)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "concat: input %d %s has rank %d, input 0 %s has %d", i,
                         dy_type_str(&in[i], a, sizeof a), in[i].rank,
                         dy_type_str(&in[0], b, sizeof b), r);
    for (int d = 0; d < r; d++)
      if (d != ax && in[i].shape[d] != in[0].shape[d])
        return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                           "concat: input %d %s differs from input 0 %s in dim "
                           "%d (only axis %d may differ)", i,
                           dy_type_str(&in[i], a, sizeof a),
                           dy_type_str(&in[0], b, sizeof b), d, ax);
    if (!dy_dim_add(sum, in[i].shape[ax], &sum))
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "concat: the sizes along axis %d do not add up to a size "
                         "expression", ax);
  }
  out->shape[ax] = sum;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* slice                                                               */
/* ------------------------------------------------------------------ */

/* ONNX Slice on one axis of size dim: negative start/end count from the
 * end, then both are clamped ([0, dim] for step > 0, [0, dim-1] and
 * [-1, dim-1] for step < 0). Gives the first index and the length. */
void dy_slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step,
                       int64_t *first, int64_t *len) {
  *first = 0;
  *len = 0;
  if (dim <= 0)
    return;
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = start < 0 ? 0 : start > dim ? dim : start;
    end = end < 0 ? 0 : end > dim ? dim : end;
    if (end > start)
      *len = (end - start - 1) / step + 1;
  } else {
    int64_t st = step == INT64_MIN ? INT64_MAX : -step;
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    if (start > end)
      *len = (start - end - 1) / st + 1;
  }
  if (*len > 0)
    *first = start;
}

/* slice(x; starts, ends, axes, steps): ONNX Slice. axes empty means
 * 0..n-1, steps empty means all 1; a step of 0 is an error, an axis may
 * not repeat. On the batch axis only the whole range is allowed (start 0,
 * end >= INT32_MAX, step 1): anything else would fix the batch. */
dy_status dy_infer_slice(const dy_op *op, const dy_type *in, int n_,
                         dy_type *out, dy_error *err) {
  dy_slice_attrs a;
  dy_status s = dy_slice_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *starts = a.starts, *ends = a.ends, *axes = a.axes, *steps = a.steps;
  int ns = a.n_starts, ne = a.n_ends, na = a.n_axes, nst = a.n_steps;
  int r = in[0].rank;
  if (ne != ns || (na != 0 && na != ns) || (nst != 0 && nst != ns))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "slice: starts, ends, axes and steps have %d, %d, %d and "
                       "%d entries (axes and steps may be empty)", ns, ne, na, nst);
  if (ns > r)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "slice: %d axes for an input of rank %d", ns, r);
  *out = in[0];
  unsigned seen = 0;
  for (int i = 0; i < ns; i++) {
    int ax;
    if ((s = dy_normalize_axis(op, na ? axes[i] : i, r, &ax, err)))
      return s;
    if (r == 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "slice: a scalar has no axis to slice");
    if (seen >> ax & 1u)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "slice: axis %d is sliced twice", ax);
    seen |= 1u << ax;
    int64_t step = nst ? steps[i] : 1;
    if (step == 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "slice: step 0 on axis %d", ax);
    int64_t dim = in[0].shape[ax];
    if (dim < 0) {
      if (starts[i] != 0 || ends[i] < INT32_MAX || step != 1)
        return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                           "slice: axis %d is the dynamic batch dim; only its "
                           "whole range (start 0, end >= INT32_MAX, step 1) can "
                           "be taken, not [%lld:%lld:%lld]", ax,
                           (long long)starts[i], (long long)ends[i], (long long)step);
      continue;
    }
    int64_t first, len;
    dy_slice_axis(dim, starts[i], ends[i], step, &first, &len);
    out->shape[ax] = len;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* squeeze, unsqueeze (views)                                          */
/* ------------------------------------------------------------------ */

/* squeeze(x; axes): removes the named dims, each of which must be 1; with
 * no axes, every dim of size 1. The batch dim is never known to be 1, so
 * naming it is unsupported, and so is an empty axes list on an input that
 * has it: whether a batch of 1 is squeezed would depend on the run. */
dy_status dy_infer_squeeze(const dy_op *op, const dy_type *in, int n_,
                           dy_type *out, dy_error *err) {
  dy_squeeze_attrs at;
  unsigned mask = 0;
  dy_status s = dy_squeeze_attrs_of(op, &at, err);
  if (s)
    return s;
  const int64_t *axes = at.axes;
  int na = at.n_axes;
  const dy_type *x = &in[0];
  char a[128];
  if (na == 0) {
    for (int d = 0; d < x->rank; d++) {
      if (x->shape[d] < 0)
        return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                           "squeeze: no axes given for %s, which has the dynamic "
                           "batch dim (squeezed or not depending on the batch); "
                           "name the axes to squeeze",
                           dy_type_str(x, a, sizeof a));
      if (x->shape[d] == 1)
        mask |= 1u << d;
    }
  } else {
    if (x->rank == 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "squeeze: a scalar has no axis to squeeze");
    if ((s = axes_mask(op, axes, na, x->rank, &mask, err)))
      return s;
    for (int d = 0; d < x->rank; d++) {
      if (!(mask >> d & 1u))
        continue;
      if (x->shape[d] < 0)
        return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                           "squeeze: axis %d of %s is the dynamic batch dim, "
                           "which is not known to be 1", d,
                           dy_type_str(x, a, sizeof a));
      if (x->shape[d] != 1)
        return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                           "squeeze: axis %d of %s has size %lld, not 1", d,
                           dy_type_str(x, a, sizeof a), (long long)x->shape[d]);
    }
  }
  out->dtype = x->dtype;
  out->rank = 0;
  for (int d = 0; d < x->rank; d++)
    if (!(mask >> d & 1u))
      out->shape[out->rank++] = x->shape[d];
  return DY_OK;
}

/* unsqueeze(x; axes): ONNX-13. The output has rank r + len(axes); each
 * axis (negative counts from the end of the output) becomes a dim of 1,
 * the input's dims fill the rest in order. */
dy_status dy_infer_unsqueeze(const dy_op *op, const dy_type *in, int n_,
                             dy_type *out, dy_error *err) {
  dy_unsqueeze_attrs a;
  unsigned mask;
  dy_status s = dy_unsqueeze_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *axes = a.axes;
  int na = a.n_axes;
  if (na == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "unsqueeze: axes is empty");
  int r = in[0].rank + na;
  if (r > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "unsqueeze: output rank %d exceeds %d", r, DY_MAX_DIMS);
  if ((s = axes_mask(op, axes, na, r, &mask, err)))
    return s;
  out->dtype = in[0].dtype;
  out->rank = r;
  for (int d = 0, k = 0; d < r; d++)
    out->shape[d] = mask >> d & 1u ? 1 : in[0].shape[k++];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* expand, tile                                                        */
/* ------------------------------------------------------------------ */

/* reshape_dims(x; dims): the target's sizes as dim expressions separated
 * by ',' (rank = their count); they must multiply to the input's. On
 * concrete shapes (the executor) a symbolic one cannot be evaluated here:
 * the executor sizes such a reshape from its var's type at the symbols'
 * values (runtime/executor_op.c). */
dy_status dy_infer_reshape_dims(const dy_op *op, const dy_type *in, int n_in, dy_type *out,
                                dy_error *err) {
  (void)n_in;
  dy_reshape_dims_attrs at;
  dy_status s = dy_reshape_dims_attrs_of(op, &at, err);
  if (s)
    return s;
  const dy_reshape_dims_attrs *a = &at;
  const char *q = a->dims;
  int64_t total, known = 1;
  out->dtype = in[0].dtype;
  out->rank = 0;
  while (*q) {
    size_t n = strcspn(q, ",");
    if (out->rank == DY_MAX_DIMS)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "reshape_dims: dims '%.80s' has more than %d entries", a->dims,
                         DY_MAX_DIMS);
    int64_t *d = &out->shape[out->rank];
    if (!dy_dim_parse(q, n, d) || !dy_dim_mul(known, *d, &known))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "reshape_dims: dims '%.80s': entry %d is not a size expression",
                         a->dims, out->rank);
    out->rank++;
    q += n;
    if (*q && !*++q)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "reshape_dims: dims '%.80s' ends with ','", a->dims);
  }
  char ts[160];
  bool ok = dy_type_numel_dim(&in[0], &total);
  if (ok && known < 0 && total >= 0)
    return dy_error_at(err, op, DY_STATUS_SYMBOLIC,
                       "reshape_dims: dims '%.80s' needs the size symbols' values", a->dims);
  if (!ok || total != known)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "reshape_dims: cannot reshape %s to dims '%.80s'",
                       dy_type_str(&in[0], ts, sizeof ts), a->dims);
  return DY_OK;
}

/* expand(x; shape): broadcast x and shape against each other (ONNX
 * Expand; a 1 on either side takes the other's size), aligned on the
 * right; a -1 in shape keeps x's dim there (Paddle). Expanding the batch
 * dim to a literal size would fix the batch: a shape error. */
dy_status dy_infer_expand(const dy_op *op, const dy_type *in, int n_,
                          dy_type *out, dy_error *err) {
  dy_expand_attrs at;
  dy_status s = dy_expand_attrs_of(op, &at, err);
  if (s)
    return s;
  const int64_t *shape = at.shape;
  int m = at.n_shape;
  const dy_type *x = &in[0];
  int r = x->rank > m ? x->rank : m;
  if (r > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "expand: target rank %d exceeds %d", m, DY_MAX_DIMS);
  out->dtype = x->dtype;
  out->rank = r;
  char a[128];
  for (int d = 0; d < r; d++) {
    int xi = d - (r - x->rank), si = d - (r - m);
    int64_t xd = xi >= 0 ? x->shape[xi] : 1, sd = si >= 0 ? shape[si] : 1;
    if (sd == -1) {
      if (xi < 0)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "expand: shape[%d] is -1 (keep) where %s has no dim",
                           si, dy_type_str(x, a, sizeof a));
      out->shape[d] = xd;
    } else if (sd < 0) {
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "expand: shape[%d] is %lld", si, (long long)sd);
    } else if (xd == sd || sd == 1) {
      out->shape[d] = xd;
    } else if (xd == 1) {
      out->shape[d] = sd;
    } else {
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "expand: cannot expand %s to shape[%d] = %lld (dim %d "
                         "is %s)", dy_type_str(x, a, sizeof a), si, (long long)sd,
                         xi, xd < 0 ? "the dynamic batch" : "neither 1 nor equal");
    }
  }
  return DY_OK;
}

/* expand_as(x, like): broadcast x to like's shape (Paddle's expand_as;
 * like is read for its shape only). x aligns on the right; each of its dims
 * is 1 or like's (the batch only against the batch or 1). The gradient of a
 * broadcast or a reduction uses it, so the dynamic batch expands without
 * being a literal. */
dy_status dy_infer_expand_as(const dy_op *op, const dy_type *in, int n_,
                             dy_type *out, dy_error *err) {
  (void)n_;
  const dy_type *x = &in[0], *like = &in[1];
  char a[128], b[128];
  if (x->rank > like->rank)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "expand_as: %s has more dims than %s",
                       dy_type_str(x, a, sizeof a), dy_type_str(like, b, sizeof b));
  *out = *like;
  out->dtype = x->dtype;
  for (int d = 0; d < x->rank; d++) {
    int64_t xd = x->shape[d], ld = like->shape[d + like->rank - x->rank];
    if (xd != 1 && xd != ld)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "expand_as: cannot expand %s to %s (dim %d)",
                         dy_type_str(x, a, sizeof a), dy_type_str(like, b, sizeof b), d);
  }
  return DY_OK;
}

/* tile(x; repeat_times): Paddle's tile. The shorter of x's shape and
 * repeat_times is padded with leading 1s; each dim is multiplied by its
 * repeat (>= 1). A repeat on the batch dim must be 1. */
dy_status dy_infer_tile(const dy_op *op, const dy_type *in, int n_,
                        dy_type *out, dy_error *err) {
  dy_tile_attrs a;
  dy_status s = dy_tile_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *reps = a.repeat_times;
  int m = a.n_repeat_times;
  const dy_type *x = &in[0];
  int r = x->rank > m ? x->rank : m;
  if (r > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "tile: %d repeats exceed rank %d", m, DY_MAX_DIMS);
  out->dtype = x->dtype;
  out->rank = r;
  for (int d = 0; d < r; d++) {
    int xi = d - (r - x->rank), ri = d - (r - m);
    int64_t xd = xi >= 0 ? x->shape[xi] : 1, rep = ri >= 0 ? reps[ri] : 1;
    if (rep < 1)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "tile: repeat_times[%d] is %lld, must be >= 1", ri,
                         (long long)rep);
    if (xd < 0 && rep != 1)
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "tile: repeating the dynamic batch dim %lld times "
                         "would give a multiple of the batch", (long long)rep);
    if (xd > 0 && rep > INT64_MAX / xd)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "tile: dim %d overflows", d);
    out->shape[d] = xd < 0 ? -1 : xd * rep;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pad                                                                 */
/* ------------------------------------------------------------------ */

/* pad(x; paddings, mode, value): ONNX Pad. paddings is
 * [begin_0 .. begin_{r-1}, end_0 .. end_{r-1}]; mode "constant" fills with
 * value, "reflect" mirrors without repeating the edge (numpy "reflect"),
 * "edge" repeats it. A negative pad crops, as if applied first; reflect
 * needs every pad < the (cropped) dim and edge a non-empty one. The batch
 * dim cannot be padded. */
dy_status dy_infer_pad(const dy_op *op, const dy_type *in, int n_,
                       dy_type *out, dy_error *err) {
  dy_pad_attrs a;
  dy_status s = dy_pad_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *pads = a.paddings;
  int np = a.n_paddings;
  bool reflect = strcmp(a.mode, "reflect") == 0, edge = strcmp(a.mode, "edge") == 0;
  if (!reflect && !edge && strcmp(a.mode, "constant") != 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "pad: mode '%.40s' is not constant, reflect or edge", a.mode);
  const dy_type *x = &in[0];
  int r = x->rank;
  if (np != 2 * r)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "pad: %d paddings for rank %d (needs 2 per dim: all "
                       "begins, then all ends)", np, r);
  if (x->dtype == DY_I64 && !(a.value >= -9223372036854775808.0 && a.value < 9223372036854775808.0))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "pad: value %g does not fit in i64", a.value);
  *out = *x;
  for (int d = 0; d < r; d++) {
    int64_t b = pads[d], e = pads[r + d], dim = x->shape[d];
    if (dim < 0) {
      if (b != 0 || e != 0)
        return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                           "pad: dim %d is the dynamic batch dim; padding it "
                           "(%lld, %lld) would fix the batch", d, (long long)b,
                           (long long)e);
      continue;
    }
    int64_t padded;
    if (!dy_ck_add(dim, b, &padded) || !dy_ck_add(padded, e, &padded) ||
        padded > DY_MAX_NUMEL)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "pad: paddings (%lld, %lld) of dim %d make it larger than the "
                         "maximum tensor size", (long long)b, (long long)e, d);
    if (b < -dim || e < -dim || padded < 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "pad: paddings (%lld, %lld) crop dim %d of size %lld "
                         "below 0", (long long)b, (long long)e, d, (long long)dim);
    int64_t kept = dim + (b < 0 ? b : 0) + (e < 0 ? e : 0);
    if (reflect && (b >= kept || e >= kept) && (b > 0 || e > 0))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "pad: reflect padding (%lld, %lld) of dim %d needs each "
                         "pad < %lld, the dim's size", (long long)b, (long long)e,
                         d, (long long)kept);
    if (edge && kept == 0 && (b > 0 || e > 0))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "pad: edge padding of the empty dim %d", d);
    out->shape[d] = padded;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gather                                                              */
/* ------------------------------------------------------------------ */

/* gather(x, index; axis): ONNX Gather. index is i64 of any rank; the
 * output is x.shape[:axis] + index.shape + x.shape[axis+1:]. Negative
 * indices count from the end; an index out of range is a run-time error
 * (the kernels check every index). */
dy_status dy_infer_gather(const dy_op *op, const dy_type *in, int n_,
                          dy_type *out, dy_error *err) {
  dy_gather_attrs a;
  int ax;
  dy_status s = dy_gather_attrs_of(op, &a, err);
  if (s)
    return s;
  int64_t axis = a.axis;
  const dy_type *x = &in[0], *idx = &in[1];
  if (x->rank == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "gather: x must have rank >= 1");
  if ((s = dy_normalize_axis(op, axis, x->rank, &ax, err)))
    return s;
  if (idx->dtype != DY_I64)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "gather: index must be i64, got %s", dy_dtype_name(idx->dtype));
  int r = x->rank - 1 + idx->rank;
  if (r > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "gather: output rank %d exceeds %d", r, DY_MAX_DIMS);
  out->dtype = x->dtype;
  out->rank = 0;
  for (int d = 0; d < ax; d++)
    out->shape[out->rank++] = x->shape[d];
  for (int d = 0; d < idx->rank; d++)
    out->shape[out->rank++] = idx->shape[d];
  for (int d = ax + 1; d < x->rank; d++)
    out->shape[out->rank++] = x->shape[d];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reductions                                                          */
/* ------------------------------------------------------------------ */

/* reduce_*(x; axes, keepdim): axes empty means all; each reduced dim
 * becomes 1 (keepdim) or goes. Reducing over the batch is fine. max and
 * min of an empty set are errors; mean of one is NaN (0/0, as numpy). */
static dy_status reduce(const dy_op *op, const dy_type *in, dy_type *out,
                        unsigned dtypes, const char *what, bool empty_ok,
                        dy_error *err) {
  /* the four reductions share reduce_sum's schema (axes, keepdim) */
  dy_reduce_sum_attrs a;
  unsigned mask;
  dy_status s;
  if ((s = dy_reduce_sum_attrs_of(op, &a, err)) ||
      (s = need_dtypes(op, &in[0], dtypes, what, err)))
    return s;
  const int64_t *axes = a.axes;
  int na = a.n_axes;
  int64_t keep = a.keepdim;
  const dy_type *x = &in[0];
  if (na == 0)
    mask = x->rank ? (1u << x->rank) - 1 : 0;
  else if ((s = axes_mask(op, axes, na, x->rank, &mask, err)))
    return s;
  out->dtype = x->dtype;
  out->rank = 0;
  for (int d = 0; d < x->rank; d++) {
    if (!(mask >> d & 1u))
      out->shape[out->rank++] = x->shape[d];
    else if (x->shape[d] == 0 && !empty_ok)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: axis %d is empty; the result is undefined",
                         OPNAME(op), d);
    else if (keep)
      out->shape[out->rank++] = 1;
  }
  return DY_OK;
}

dy_status dy_infer_reduce_sum(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  return reduce(op, in, out, F32_I64, "f32 or i64", true, err);
}
dy_status dy_infer_reduce_mean(const dy_op *op, const dy_type *in, int n,
                               dy_type *out, dy_error *err) {
  return reduce(op, in, out, F32_ONLY, "f32", true, err);
}
dy_status dy_infer_reduce_max(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  return reduce(op, in, out, F32_I64, "f32 or i64", false, err);
}
dy_status dy_infer_reduce_min(const dy_op *op, const dy_type *in, int n,
                              dy_type *out, dy_error *err) {
  return reduce(op, in, out, F32_I64, "f32 or i64", false, err);
}

/* argmax(x; axis, keepdim) -> i64: the index of the first maximum along
 * axis (a NaN counts as larger than anything, so the first NaN wins, as
 * numpy). A scalar gives 0. */
dy_status dy_infer_argmax(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  dy_argmax_attrs a;
  int ax;
  dy_status s;
  if ((s = dy_argmax_attrs_of(op, &a, err)) ||
      (s = need_dtypes(op, &in[0], F32_I64, "f32 or i64", err)) ||
      (s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)))
    return s;
  int64_t keep = a.keepdim;
  const dy_type *x = &in[0];
  out->dtype = DY_I64;
  out->rank = 0;
  for (int d = 0; d < x->rank; d++) {
    if (d != ax)
      out->shape[out->rank++] = x->shape[d];
    else if (x->shape[d] == 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "argmax: axis %d is empty", d);
    else if (keep)
      out->shape[out->rank++] = 1;
  }
  return DY_OK;
}

/* log_softmax(x; axis) = x - max - log(sum(exp(x - max))) along axis. */
dy_status dy_infer_log_softmax(const dy_op *op, const dy_type *in, int n,
                               dy_type *out, dy_error *err) {
  dy_log_softmax_attrs a;
  int ax;
  dy_status s;
  if ((s = dy_log_softmax_attrs_of(op, &a, err)) ||
      (s = need_dtypes(op, &in[0], F32_ONLY, "f32", err)))
    return s;
  int64_t axis = a.axis;
  if (in[0].rank == 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "log_softmax: needs rank >= 1");
  if ((s = dy_normalize_axis(op, axis, in[0].rank, &ax, err)))
    return s;
  *out = in[0];
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* sizes known only at run time (DY_OPF_SETS_SIZE)                     */
/* ------------------------------------------------------------------ */

/* nonzero(x; size_sym) -> i64 [rank(x), size_sym]: the coordinates of the
 * nonzero elements of x (any dtype, rank >= 1), in C order. size_sym is a
 * size symbol no input gives: the kernel's count sets it. */
dy_status dy_infer_nonzero(const dy_op *op, const dy_type *in, int n, dy_type *out,
                           dy_error *err) {
  dy_nonzero_attrs a;
  dy_status s = dy_nonzero_attrs_of(op, &a, err);
  if (s)
    return s;
  (void)n;
  if (in[0].rank < 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "nonzero: x must have rank >= 1");
  int64_t d;
  if ((s = dy_size_sym_dim(op, a.size_sym, &d, err)))
    return s;
  *out = (dy_type){.dtype = DY_I64, .rank = 2, .shape = {in[0].rank, d}};
  return DY_OK;
}

int dy_op_size_sym(const dy_op *op, int *dim) {
  if (!dy_op_has(op, DY_OPF_SETS_SIZE))
    return -1;
  const char *name = NULL;
  for (int i = 0; i < op->n_attrs; i++)
    if (strcmp(op->attrs[i].name, "size_sym") == 0 && op->attrs[i].kind == DY_ATTR_STRING)
      name = op->attrs[i].s;
  int s = name ? dy_sym_id(name) : -1;
  if (dim)
    *dim = op->kind == DY_OP_NONZERO ? 1 : 0; /* nonzero: [rank, n]; nms: [n, 3]; ... */
  return s > 0 ? s : -1;
}

/* multiclass_nms: B times the per-batch bound (dy_det.h) of scores [B, C, M] */
static dy_status multiclass_nms_bound(const dy_op *op, const dy_type *in, int n_in,
                                      const int64_t *vals, int64_t *bound, dy_error *err) {
  int64_t d[3];
  bool ok = n_in >= 2 && in[1].rank == 3;
  for (int i = 0; i < 3 && ok; i++)
    ok = ((d[i] = in[1].shape[i]) >= 0 || (vals && dy_dim_eval(d[i], vals, &d[i]))) &&
         d[i] <= DY_MAX_NUMEL;
  int64_t per = ok ? dy_multiclass_nms_per_batch(op, d[1], d[2]) : 0;
  if (!ok || (per > 0 && d[0] > DY_MAX_NUMEL / per)) {
    const char *sym = dy_sym_name(dy_op_size_sym(op, NULL));
    return dy_error_at(err, op, DY_STATUS_LIMIT,
                       "multiclass_nms: no bound for the size symbol '%s' (B * keep_top_k has "
                       "none within %lld; give one with --max-dim %s=N)", sym,
                       (long long)DY_MAX_NUMEL, sym);
  }
  *bound = d[0] * per > 0 ? d[0] * per : 1; /* a symbol's bound is at least 1 */
  return DY_OK;
}

dy_status dy_op_size_bound(const dy_op *op, const dy_type *in, int n_in, const int64_t *vals,
                           int64_t *bound, dy_error *err) {
  int sym = dy_op_size_sym(op, NULL);
  if (sym < 0 || n_in < 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_IR, "%s sets no size symbol", OPNAME(op));
  if (op->kind == DY_OP_MULTICLASS_NMS)
    return multiclass_nms_bound(op, in, n_in, vals, bound, err);
  /* nonzero: x's size; nms: B * C * min(max_per_class, N) of scores [B, C, N] */
  int64_t numel = 1, per_class = -1;
  bool nms = op->kind == DY_OP_NMS;
  if (nms) {
    if (n_in < 2 || in[1].rank != 3)
      return dy_error_at(err, op, DY_STATUS_INVALID_IR, "nms: scores must be [B, C, N]");
    per_class = dy_nms_attrs_get(op).max_per_class;
  }
  const dy_type *x = nms ? &in[1] : &in[0];
  bool ok = true;
  for (int d = 0; d < x->rank && ok; d++) {
    int64_t v = x->shape[d];
    ok = (v >= 0 || (vals && dy_dim_eval(v, vals, &v))) && v <= DY_MAX_NUMEL;
    if (nms && d == 2 && per_class >= 0 && per_class < v)
      v = per_class;
    ok = ok && (numel *= v) <= DY_MAX_NUMEL;
  }
  if (!ok)
    return dy_error_at(err, op, DY_STATUS_LIMIT,
                       "%s: no bound for the size symbol '%s' (%s has none within "
                       "%lld; give one with --max-dim %s=N)",
                       OPNAME(op), dy_sym_name(sym), nms ? "B * C * max_per_class" : "x's size",
                       (long long)DY_MAX_NUMEL, dy_sym_name(sym));
  *bound = numel > 0 ? numel : 1; /* a symbol's bound is at least 1 */
  return DY_OK;
}
