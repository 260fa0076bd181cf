/* kernels_shape.c - reference kernels of the shape op family
 * (ir/ops_shape.def): movement (concat, slice, squeeze, unsqueeze, expand,
 * tile, pad), indexing (gather) and reductions (reduce_sum/mean/max/min,
 * argmax, log_softmax).
 *
 * Like every reference kernel (kernels.c) these favour being obviously
 * right over being fast. Every kernel first re-runs the op's inference
 * (ir/infer/infer_shape.c) on its input types and checks the output against it,
 * so the attribute rules live in one place; then it computes.
 *
 * Most movement ops are one "walk": visit the output in C order and read,
 * for each output dim, the input coordinate start + step * i (slice,
 * expand with step 0 on broadcast dims) or i % n (tile). pad maps i to
 * i - begin and then fills, mirrors or clamps what falls outside.
 *
 * Reductions visit the input in C order and accumulate into the output
 * element it belongs to, in f32 (the generated C does the same, in the
 * same order, so the two agree closely). max and min propagate NaN (as
 * numpy's max); argmax returns the first maximum, a NaN counting as
 * larger than everything (the first NaN wins, as numpy's argmax). i64 sums
 * wrap. gather checks every index before writing anything and names the
 * first one out of range.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

enum { MAX_IN = DY_MAX_OP_INPUTS };

/* Arity (want_in < 0: variadic), the health of every tensor, and the
 * output's type against inference. Unless alias_ok, the output must not
 * share memory with an input. */
static dy_status kcheck(const dy_op *op, dy_tensor *const *in, int n_in,
                        int want_in, dy_tensor *const *out, bool alias_ok,
                        dy_error *err) {
  if (want_in < 0) {
    if (n_in < 1 || n_in > MAX_IN)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: takes 1 to %d inputs, got %d", op_name(op),
                         MAX_IN, n_in);
    want_in = n_in;
  }
  dy_status s = dy_kcheck_io(op, in, n_in, want_in, out, err);
  if (s != DY_OK)
    return s;
  return dy_kcheck_inferred(op, in, n_in, out, alias_ok, err);
}

/* ------------------------------------------------------------------ */
/* The walk: output in C order, an input coordinate per output dim     */
/* ------------------------------------------------------------------ */

typedef struct {
  int rank;
  int64_t shape[DY_MAX_DIMS];    /* output dims                         */
  int64_t istride[DY_MAX_DIMS];  /* input stride of the coordinate      */
  int64_t start[DY_MAX_DIMS];    /* coordinate start + step * i ...     */
  int64_t step[DY_MAX_DIMS];
  int64_t mod[DY_MAX_DIMS];      /* ... or i % mod when mod > 0          */
} walk;

static void walk_init(walk *w, const dy_type *o) {
  memset(w, 0, sizeof *w);
  w->rank = o->rank;
  for (int d = 0; d < o->rank; d++) {
    w->shape[d] = o->shape[d];
    w->step[d] = 1;
  }
}

static void walk_copy(const walk *w, size_t es, const char *src, char *dst) {
  int64_t n = 1, c[DY_MAX_DIMS] = {0};
  for (int d = 0; d < w->rank; d++)
    n *= w->shape[d];
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < w->rank; d++) {
      int64_t j = w->mod[d] > 0 ? c[d] % w->mod[d] : w->start[d] + c[d] * w->step[d];
      off += j * w->istride[d];
    }
    memcpy(dst + (size_t)k * es, src + (size_t)off * es, es);
    for (int d = w->rank - 1; d >= 0 && ++c[d] == w->shape[d]; d--)
      c[d] = 0;
  }
}

/* ------------------------------------------------------------------ */
/* concat                                                              */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_concat(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, -1, out, false, err);
  if (s != DY_OK)
    return s;
  const dy_type *to = &out[0]->type;
  int ax = (int)dy_concat_attrs_get(op).axis;
  if (ax < 0)
    ax += to->rank;
  /* [outer, dim, inner] around the axis: each input's rows of dim_k * inner
   * elements go side by side into rows of dim * inner */
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++)
    outer *= to->shape[d];
  for (int d = ax + 1; d < to->rank; d++)
    inner *= to->shape[d];
  size_t es = dy_dtype_size(to->dtype);
  size_t orow = (size_t)(to->shape[ax] * inner) * es, off = 0;
  char *dst = out[0]->data;
  for (int i = 0; i < n_in; i++) {
    size_t row = (size_t)(in[i]->type.shape[ax] * inner) * es;
    const char *src = in[i]->data;
    for (int64_t o = 0; o < outer && row > 0; o++)
      memcpy(dst + (size_t)o * orow + off, src + (size_t)o * row, row);
    off += row;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* slice                                                               */
/* ------------------------------------------------------------------ */


dy_status dy_kernel_slice(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 1, out, false, err);
  if (s != DY_OK)
    return s;
  dy_slice_attrs a;
  if ((s = dy_slice_attrs_of(op, &a, err)))
    return s;
  const int64_t *starts = a.starts, *ends = a.ends, *axes = a.axes, *steps = a.steps;
  int ns = a.n_starts, na = a.n_axes, nst = a.n_steps;
  const dy_type *ti = &in[0]->type;
  walk w;
  walk_init(&w, &out[0]->type);
  dy_contiguous_strides(ti->rank, ti->shape, w.istride);
  for (int i = 0; i < ns; i++) {
    int64_t a = na ? axes[i] : i;
    int ax = (int)(a < 0 ? a + ti->rank : a);
    int64_t len;
    w.step[ax] = nst ? steps[i] : 1;
    dy_slice_axis(ti->shape[ax], starts[i], ends[i], w.step[ax], &w.start[ax], &len);
  }
  walk_copy(&w, dy_dtype_size(ti->dtype), in[0]->data, out[0]->data);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* squeeze, unsqueeze: views eagerly; the executor copies              */
/* ------------------------------------------------------------------ */

static dy_status copy_view(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 1, out, true, err);
  if (s != DY_OK)
    return s;
  size_t n = (size_t)dy_tensor_numel(in[0]) * dy_dtype_size(in[0]->type.dtype);
  if (n && out[0]->data != in[0]->data)
    memmove(out[0]->data, in[0]->data, n);
  return DY_OK;
}

dy_status dy_kernel_squeeze(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  return copy_view(op, in, n_in, out, err);
}

dy_status dy_kernel_unsqueeze(const dy_op *op, dy_tensor *const *in, int n_in,
                              dy_tensor *const *out, dy_error *err) {
  return copy_view(op, in, n_in, out, err);
}

/* Its output type comes from the caller (the executor evaluates the
 * var's symbolic sizes; inference on concrete shapes cannot split the
 * count), so only the element counts are checked here. */
dy_status dy_kernel_reshape_dims(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  if (dy_tensor_numel(in[0]) != dy_tensor_numel(out[0]) ||
      in[0]->type.dtype != out[0]->type.dtype)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "reshape_dims: %lld elements into %lld", (long long)dy_tensor_numel(in[0]),
                       (long long)dy_tensor_numel(out[0]));
  size_t n = (size_t)dy_tensor_numel(in[0]) * dy_dtype_size(in[0]->type.dtype);
  if (n && out[0]->data != in[0]->data)
    memmove(out[0]->data, in[0]->data, n);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* expand, tile                                                        */
/* ------------------------------------------------------------------ */

/* x's dims align with the output's on the right; a missing or size-1 dim
 * of x is read at coordinate 0 (stride 0). tile reads i % dim instead. */
static dy_status expand_or_tile(const dy_op *op, dy_tensor *const *in,
                                int n_in, dy_tensor *const *out, bool tile,
                                dy_error *err) {
  /* expand_as reads its second input for its shape only */
  dy_status s = kcheck(op, in, n_in, op->kind == DY_OP_EXPAND_AS ? 2 : 1, out,
                       false, err);
  if (s != DY_OK)
    return s;
  const dy_type *ti = &in[0]->type, *to = &out[0]->type;
  int64_t xs[DY_MAX_DIMS];
  dy_contiguous_strides(ti->rank, ti->shape, xs);
  walk w;
  walk_init(&w, to);
  for (int d = 0; d < to->rank; d++) {
    int xi = d - (to->rank - ti->rank);
    if (xi < 0 || ti->shape[xi] == 1)
      continue; /* stride 0 */
    w.istride[d] = xs[xi];
    if (tile)
      w.mod[d] = ti->shape[xi];
  }
  walk_copy(&w, dy_dtype_size(ti->dtype), in[0]->data, out[0]->data);
  return DY_OK;
}

dy_status dy_kernel_expand(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  return expand_or_tile(op, in, n_in, out, false, err);
}

dy_status dy_kernel_expand_as(const dy_op *op, dy_tensor *const *in, int n_in,
                              dy_tensor *const *out, dy_error *err) {
  return expand_or_tile(op, in, n_in, out, false, err);
}

dy_status dy_kernel_tile(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  return expand_or_tile(op, in, n_in, out, true, err);
}

/* ------------------------------------------------------------------ */
/* pad                                                                 */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_pad(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 1, out, false, err);
  if (s != DY_OK)
    return s;
  dy_pad_attrs a;
  if ((s = dy_pad_attrs_of(op, &a, err)))
    return s;
  const int64_t *pads = a.paddings;
  double value = a.value;
  const char *mode = a.mode; /* checked by kcheck */
  int m = strcmp(mode, "reflect") == 0 ? 1 : strcmp(mode, "edge") == 0 ? 2 : 0;
  const dy_type *ti = &in[0]->type, *to = &out[0]->type;
  size_t es = dy_dtype_size(ti->dtype);
  /* the fill value's bytes */
  unsigned char fill[8] = {0};
  if (ti->dtype == DY_F32) {
    /* out-of-range doubles become +-inf rather than an undefined
     * conversion (as full does) */
    float f = isfinite(value) && fabs(value) > FLT_MAX
                  ? (value > 0 ? INFINITY : -INFINITY) : (float)value;
    memcpy(fill, &f, 4);
  } else if (ti->dtype == DY_I64) {
    int64_t v = (int64_t)value;
    memcpy(fill, &v, 8);
  } else {
    fill[0] = value != 0.0;
  }
  int64_t xs[DY_MAX_DIMS], c[DY_MAX_DIMS] = {0};
  dy_contiguous_strides(ti->rank, ti->shape, xs);
  int64_t n = dy_type_numel(to);
  const char *src = in[0]->data;
  char *dst = out[0]->data;
  int r = ti->rank;
  for (int64_t k = 0; k < n; k++) {
    /* the input coordinate of each dim: i - begin, then by mode */
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d < r; d++) {
      int64_t dim = ti->shape[d], j = c[d] - pads[d];
      if (j < 0 || j >= dim) {
        if (m == 0)
          inside = false;
        else if (m == 1)
          j = j < 0 ? -j : 2 * (dim - 1) - j;
        else
          j = j < 0 ? 0 : dim - 1;
      }
      off += j * xs[d];
    }
    memcpy(dst + (size_t)k * es, inside ? src + (size_t)off * es : (const char *)fill, es);
    for (int d = r - 1; d >= 0 && ++c[d] == to->shape[d]; d--)
      c[d] = 0;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gather                                                              */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_gather(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 2, out, false, err);
  if (s != DY_OK)
    return s;
  const dy_type *tx = &in[0]->type;
  int64_t axis = dy_gather_attrs_get(op).axis;
  int ax = (int)(axis < 0 ? axis + tx->rank : axis);
  int64_t outer = 1, inner = 1, dim = tx->shape[ax];
  for (int d = 0; d < ax; d++)
    outer *= tx->shape[d];
  for (int d = ax + 1; d < tx->rank; d++)
    inner *= tx->shape[d];
  const int64_t *idx = in[1]->data;
  int64_t n = dy_tensor_numel(in[1]);
  /* every index first: nothing is written when one is out of range */
  for (int64_t j = 0; j < n; j++)
    if (idx[j] < -dim || idx[j] >= dim)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "gather: index %lld (element %lld of the index) is out "
                         "of range for axis %d of size %lld", (long long)idx[j],
                         (long long)j, ax, (long long)dim);
  size_t es = dy_dtype_size(tx->dtype), row = (size_t)inner * es;
  const char *src = in[0]->data;
  char *dst = out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < n && row > 0; j++) {
      int64_t k = idx[j] < 0 ? idx[j] + dim : idx[j];
      memcpy(dst + (size_t)(o * n + j) * row, src + (size_t)(o * dim + k) * row, row);
    }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reductions                                                          */
/* ------------------------------------------------------------------ */

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN } reduce_kind;

static dy_status reduce(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, reduce_kind rk, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 1, out, false, err);
  if (s != DY_OK)
    return s;
  const dy_type *ti = &in[0]->type;
  /* the four reductions: read through reduce_sum's schema (axes, keepdim) */
  dy_reduce_sum_attrs a;
  if ((s = dy_reduce_sum_attrs_of(op, &a, err)))
    return s;
  int64_t ostr[DY_MAX_DIMS];
  dy_reduce_strides(ti, a.axes, a.n_axes, ostr);
  int64_t n = dy_tensor_numel(in[0]), no = dy_tensor_numel(out[0]);
  int64_t c[DY_MAX_DIMS] = {0}, o = 0;
  if (ti->dtype == DY_F32) {
    const float *x = in[0]->data;
    float *y = out[0]->data;
    float init = rk == R_MAX ? -INFINITY : rk == R_MIN ? INFINITY : 0.0f;
    for (int64_t i = 0; i < no; i++)
      y[i] = init;
    for (int64_t k = 0; k < n; k++) {
      float v = x[k];
      switch (rk) {
      case R_SUM:
      case R_MEAN: y[o] += v; break;
      case R_MAX: if (v > y[o] || v != v) y[o] = v; break;
      case R_MIN: if (v < y[o] || v != v) y[o] = v; break;
      }
      dy_odometer_next(ti->rank, ti->shape, ostr, c, &o);
    }
    if (rk == R_MEAN && no > 0) {
      float count = (float)(n / no);
      for (int64_t i = 0; i < no; i++)
        y[i] /= count;
    }
    return DY_OK;
  }
  if (ti->dtype != DY_I64 || rk == R_MEAN)
    return dy_kunsupported_dtype(op, ti->dtype, err);
  const int64_t *x = in[0]->data;
  int64_t *y = out[0]->data;
  int64_t init = rk == R_MAX ? INT64_MIN : rk == R_MIN ? INT64_MAX : 0;
  for (int64_t i = 0; i < no; i++)
    y[i] = init;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = x[k];
    if (rk == R_SUM)
      y[o] = (int64_t)((uint64_t)y[o] + (uint64_t)v);
    else if (rk == R_MAX ? v > y[o] : v < y[o])
      y[o] = v;
    dy_odometer_next(ti->rank, ti->shape, ostr, c, &o);
  }
  return DY_OK;
}

dy_status dy_kernel_reduce_sum(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  return reduce(op, in, n_in, out, R_SUM, err);
}
dy_status dy_kernel_reduce_mean(const dy_op *op, dy_tensor *const *in, int n_in,
                                dy_tensor *const *out, dy_error *err) {
  return reduce(op, in, n_in, out, R_MEAN, err);
}
dy_status dy_kernel_reduce_max(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  return reduce(op, in, n_in, out, R_MAX, err);
}
dy_status dy_kernel_reduce_min(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  return reduce(op, in, n_in, out, R_MIN, err);
}

/* [outer, n, inner] around axis (a scalar is [1, 1, 1]). */
static void around_axis(const dy_type *t, int64_t axis, int64_t *outer,
                        int64_t *n, int64_t *inner) {
  int ax = (int)(axis < 0 ? axis + t->rank : axis);
  *outer = *inner = 1;
  *n = t->rank ? t->shape[ax] : 1;
  for (int d = 0; d < ax && d < t->rank; d++)
    *outer *= t->shape[d];
  for (int d = ax + 1; d < t->rank; d++)
    *inner *= t->shape[d];
}

dy_status dy_kernel_argmax(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 1, out, false, err);
  if (s != DY_OK)
    return s;
  int64_t outer, n, inner;
  around_axis(&in[0]->type, dy_argmax_attrs_get(op).axis, &outer, &n, &inner);
  int64_t *y = out[0]->data;
  bool f32 = in[0]->type.dtype == DY_F32;
  if (n == 0) /* rejected by inference; nothing to scan */
    return DY_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t base = o * n * inner + j, best = 0;
      if (f32) {
        const float *x = (const float *)in[0]->data + base;
        float m = x[0];
        for (int64_t k = 1; k < n; k++) {
          float v = x[k * inner];
          if (v > m || (v != v && m == m)) {
            m = v;
            best = k;
          }
        }
      } else {
        const int64_t *x = (const int64_t *)in[0]->data + base;
        int64_t m = x[0];
        for (int64_t k = 1; k < n; k++)
          if (x[k * inner] > m) {
            m = x[k * inner];
            best = k;
          }
      }
      y[o * inner + j] = best;
    }
  return DY_OK;
}

dy_status dy_kernel_log_softmax(const dy_op *op, dy_tensor *const *in, int n_in,
                                dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 1, out, false, err);
  if (s != DY_OK)
    return s;
  int64_t outer, n, inner;
  around_axis(&in[0]->type, dy_log_softmax_attrs_get(op).axis, &outer, &n, &inner);
  const float *x = in[0]->data;
  float *y = out[0]->data;
  if (n == 0) /* no elements */
    return DY_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const float *xr = x + o * n * inner + j;
      float *yr = y + o * n * inner + j;
      float mx = xr[0];
      for (int64_t k = 1; k < n; k++)
        if (xr[k * inner] > mx)
          mx = xr[k * inner];
      float sum = 0.0f;
      for (int64_t k = 0; k < n; k++)
        sum += expf(xr[k * inner] - mx);
      float lse = logf(sum);
      for (int64_t k = 0; k < n; k++)
        yr[k * inner] = xr[k * inner] - mx - lse;
    }
  return DY_OK;
}

/* nonzero: a DY_OPF_SETS_SIZE op. The caller allocates out[0] at its
 * capacity, [rank(x), cap] with cap >= x's size (dy_op_size_bound); the
 * kernel writes the [rank, n] coordinates (C order) into its first
 * rank * n elements and sets the shape's size dim to n (nbytes to match). */
dy_status dy_kernel_nonzero(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *x = &in[0]->type;
  int r = x->rank;
  int64_t numel = dy_type_numel(x), cap = out[0]->type.shape[1], n = 0;
  if (out[0]->type.dtype != DY_I64 || out[0]->type.rank != 2 || out[0]->type.shape[0] != r ||
      cap < numel)
    return dy_error_at(err, op, DY_STATUS_INTERNAL,
                       "nonzero: the output's capacity %lld is below x's %lld elements",
                       (long long)cap, (long long)numel);
  dy_dtype dt = x->dtype;
  for (int64_t i = 0; i < numel; i++)
    n += dy_dtype_get_f64(dt, in[0]->data, i) != 0.0;
  int64_t *y = out[0]->data, idx[DY_MAX_DIMS] = {0}, k = 0;
  for (int64_t i = 0; i < numel; i++) {
    if (dy_dtype_get_f64(dt, in[0]->data, i) != 0.0) {
      for (int d = 0; d < r; d++)
        y[d * n + k] = idx[d];
      k++;
    }
    for (int d = r - 1; d >= 0 && ++idx[d] == x->shape[d]; d--)
      idx[d] = 0;
  }
  out[0]->type.shape[1] = n;
  out[0]->nbytes = (size_t)(r * n) * sizeof(int64_t);
  return DY_OK;
}
