/* kernels_extra.c - reference kernels of the extra family
 * (ir/ops_extra.def). Shape and attribute rules are ir/infer/infer_extra.c's;
 * every kernel re-runs inference on its inputs first, so what follows may
 * trust the attributes.
 *
 * Each formula here is written in exactly the words codegen/ops/emit_extra.c
 * prints into the generated C (same libm calls, same order of operations,
 * the same iteration order for scatters, where the order decides which
 * write wins), so eager and compiled results agree. Change one, change the
 * other.
 *
 *   sin .. atan      libm's sinf, cosf, tanf, asinf, acosf, atanf (the
 *                    generated C has no libm: its own polynomials, a few
 *                    ulp away; see emit_extra.c)
 *   mod              fmod 1: fmodf / C's %; fmod 0: the same, then the
 *                    divisor added when the signs differ (Python %). i64:
 *                    a remainder by 0 or -1 is 0 (no trap, no overflow).
 *   reduce_prod      products in the input's C order; i64 wraps
 *   cumsum           running sums along the axis in float / wrapping i64
 *   gather_elements, gather_nd, scatter_elements, scatter_nd
 *                    every index is checked before anything is written; an
 *                    index out of [-n, n) is DY_STATUS_INVALID_ARGUMENT.
 *                    Scatters walk the updates in C order.
 *   top_k            k passes of a selection: pass j picks the best element
 *                    that ranks after pass j-1's pick, in the order
 *                    (value, then lower index first), NaN above any number
 *   det              LU with partial pivoting in double
 *   inverse          Gauss-Jordan with partial pivoting in double: for
 *                    each column the largest pivot (the first on ties)
 *                    swapped up, its row divided by it, the column
 *                    eliminated from every other row (a zero pivot: the
 *                    division makes inf / NaN)
 *   grid_sample_grad, roi_align_grad
 *                    the forward's sampling, each output's gradient added
 *                    to the taps it read times their weights
 */
#include <math.h>
#include <string.h>

#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

/* [outer, n, inner] around axis of t. */
static void around_axis(const dy_type *t, int ax, int64_t *outer, int64_t *n,
                        int64_t *inner) {
  *outer = *inner = 1;
  for (int d = 0; d < ax; d++)
    *outer *= t->shape[d];
  *n = t->shape[ax];
  for (int d = ax + 1; d < t->rank; d++)
    *inner *= t->shape[d];
}

static int norm_axis(int64_t axis, int rank) {
  return (int)(axis < 0 ? axis + rank : axis);
}

/* ------------------------------------------------------------------ */
/* trigonometry                                                        */
/* ------------------------------------------------------------------ */

#define TRIG(name)                                                              \
  dy_status dy_kernel_##name(const dy_op *op, dy_tensor *const *in, int n_in,   \
                             dy_tensor *const *out, dy_error *err) {            \
    return dy_kmap_f32(op, in, n_in, out, name##f, err);                            \
  }
TRIG(sin)
TRIG(cos)
TRIG(tan)
TRIG(asin)
TRIG(acos)
TRIG(atan)

/* ------------------------------------------------------------------ */
/* mod                                                                 */
/* ------------------------------------------------------------------ */

/* Keep each EXPR identical to its string in codegen/ops/emit_extra.c. */
DEFINE_BINARY_LOOP(fmod_f32, float, fmodf(x, y))
DEFINE_BINARY_LOOP(pymod_f32, float,
                   fmodf(x, y) != 0.0f && (fmodf(x, y) < 0.0f) != (y < 0.0f)
                       ? fmodf(x, y) + y
                       : fmodf(x, y))
DEFINE_BINARY_LOOP(fmod_i64, int64_t, y == 0 || y == -1 ? 0 : x % y)
DEFINE_BINARY_LOOP(pymod_i64, int64_t,
                   y == 0 || y == -1 ? 0
                   : x % y != 0 && (x % y < 0) != (y < 0) ? x % y + y
                                                          : x % y)

dy_status dy_kernel_mod(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  dy_type t[2] = {in && n_in == 2 && in[0] ? in[0]->type : (dy_type){0},
                  in && n_in == 2 && in[1] ? in[1]->type : (dy_type){0}};
  dy_type want;
  dy_status s = dy_infer(op, t, 2, &want, err);
  if (s != DY_OK)
    return s;
  bool c = dy_mod_attrs_get(op).fmod != 0;
  return dy_kbinary(op, in, n_in, out, c ? fmod_f32 : pymod_f32, c ? fmod_i64 : pymod_i64,
                    err);
}

/* ------------------------------------------------------------------ */
/* reduce_prod, cumsum                                                 */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_reduce_prod(const dy_op *op, dy_tensor *const *in, int n_in,
                                dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *ti = &in[0]->type;
  dy_reduce_prod_attrs a = dy_reduce_prod_attrs_get(op);
  int64_t ostr[DY_MAX_DIMS];
  dy_reduce_strides(ti, a.axes, a.n_axes, ostr);
  int64_t n = dy_tensor_numel(in[0]), no = dy_tensor_numel(out[0]);
  int64_t c[DY_MAX_DIMS] = {0}, o = 0;
  bool f32 = ti->dtype == DY_F32;
  float *yf = out[0]->data;
  int64_t *yi = out[0]->data;
  for (int64_t i = 0; i < no; i++) {
    if (f32)
      yf[i] = 1.0f;
    else
      yi[i] = 1;
  }
  for (int64_t k = 0; k < n; k++) {
    if (f32)
      yf[o] *= ((const float *)in[0]->data)[k];
    else
      yi[o] = (int64_t)((uint64_t)yi[o] * (uint64_t)((const int64_t *)in[0]->data)[k]);
    dy_odometer_next(ti->rank, ti->shape, ostr, c, &o);
  }
  return DY_OK;
}

dy_status dy_kernel_cumsum(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *t = &in[0]->type;
  int64_t outer, n, inner;
  dy_cumsum_attrs a = dy_cumsum_attrs_get(op);
  around_axis(t, norm_axis(a.axis, t->rank), &outer, &n, &inner);
  bool ex = a.exclusive, rev = a.reverse;
  bool f32 = t->dtype == DY_F32;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      float af = 0.0f;
      int64_t ai = 0;
      for (int64_t q = 0; q < n; q++) {
        int64_t k = rev ? n - 1 - q : q, at = (o * n + k) * inner + j;
        if (f32) {
          const float v = ((const float *)in[0]->data)[at];
          if (ex) {
            ((float *)out[0]->data)[at] = af;
            af += v;
          } else {
            af += v;
            ((float *)out[0]->data)[at] = af;
          }
        } else {
          const int64_t v = ((const int64_t *)in[0]->data)[at];
          if (ex) {
            ((int64_t *)out[0]->data)[at] = ai;
            ai = (int64_t)((uint64_t)ai + (uint64_t)v);
          } else {
            ai = (int64_t)((uint64_t)ai + (uint64_t)v);
            ((int64_t *)out[0]->data)[at] = ai;
          }
        }
      }
    }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gather_elements, scatter_elements                                   */
/* ------------------------------------------------------------------ */

/* Check every index of idx against n; report the first bad one. */
static dy_status check_indices(const dy_op *op, const int64_t *idx, int64_t count,
                               int64_t n, int64_t every, const int64_t *dims,
                               dy_error *err) {
  for (int64_t j = 0; j < count; j++) {
    int64_t lim = dims ? dims[j % every] : n;
    if (idx[j] < -lim || idx[j] >= lim)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: index %lld (element %lld of the index) is out of range "
                         "for an extent of %lld", op_name(op), (long long)idx[j],
                         (long long)j, (long long)lim);
  }
  return DY_OK;
}

/* The data offset of each index element: walk idx in C order keeping the
 * offset of its position in x (the axis term comes from the index). */
typedef struct {
  int rank, ax;
  int64_t ishape[DY_MAX_DIMS], xstr[DY_MAX_DIMS];
  int64_t c[DY_MAX_DIMS], base; /* position in idx; x offset without the axis */
} elem_walk;

static void elem_walk_init(elem_walk *w, const dy_type *x, const dy_type *idx, int ax) {
  memset(w, 0, sizeof *w);
  w->rank = x->rank;
  w->ax = ax;
  dy_contiguous_strides(x->rank, x->shape, w->xstr);
  for (int d = 0; d < x->rank; d++)
    w->ishape[d] = idx->shape[d];
}

static void elem_walk_next(elem_walk *w) {
  for (int d = w->rank - 1; d >= 0; d--) {
    if (d != w->ax)
      w->base += w->xstr[d];
    if (++w->c[d] < w->ishape[d])
      return;
    if (d != w->ax)
      w->base -= w->xstr[d] * w->ishape[d];
    w->c[d] = 0;
  }
}

dy_status dy_kernel_gather_elements(const dy_op *op, dy_tensor *const *in, int n_in,
                                    dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *x = &in[0]->type, *ti = &in[1]->type;
  int ax = norm_axis(dy_gather_elements_attrs_get(op).axis, x->rank);
  int64_t dim = x->shape[ax], n = dy_type_numel(ti);
  const int64_t *idx = in[1]->data;
  if ((s = check_indices(op, idx, n, dim, 1, NULL, err)))
    return s;
  elem_walk w;
  elem_walk_init(&w, x, ti, ax);
  size_t es = dy_dtype_size(x->dtype);
  for (int64_t j = 0; j < n; j++, elem_walk_next(&w)) {
    int64_t k = idx[j] < 0 ? idx[j] + dim : idx[j];
    memcpy((char *)out[0]->data + (size_t)j * es,
           (const char *)in[0]->data + (size_t)(w.base + k * w.xstr[ax]) * es, es);
  }
  return DY_OK;
}

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red_kind;

static red_kind reduction_of(const dy_op *op) {
  /* scatter_elements and scatter_nd: read through scatter_nd's schema */
  const char *r = dy_scatter_nd_attrs_get(op).reduction;
  return strcmp(r, "add") == 0   ? RED_ADD
         : strcmp(r, "mul") == 0 ? RED_MUL
         : strcmp(r, "max") == 0 ? RED_MAX
         : strcmp(r, "min") == 0 ? RED_MIN
                                 : RED_NONE;
}

/* dst[0] = combine(dst[0], src[0]) for one element of dtype t. The
 * expressions are emit_extra.c's COMBINE strings. */
static void combine(red_kind r, dy_dtype t, void *dst, const void *src) {
  if (t == DY_F32) {
    float *d = dst, v = *(const float *)src;
    switch (r) {
    case RED_NONE: *d = v; break;
    case RED_ADD: *d = *d + v; break;
    case RED_MUL: *d = *d * v; break;
    case RED_MAX: *d = v > *d || v != v ? v : *d; break;
    case RED_MIN: *d = v < *d || v != v ? v : *d; break;
    }
  } else if (t == DY_I64) {
    int64_t *d = dst, v = *(const int64_t *)src;
    switch (r) {
    case RED_NONE: *d = v; break;
    case RED_ADD: *d = (int64_t)((uint64_t)*d + (uint64_t)v); break;
    case RED_MUL: *d = (int64_t)((uint64_t)*d * (uint64_t)v); break;
    case RED_MAX: *d = v > *d ? v : *d; break;
    case RED_MIN: *d = v < *d ? v : *d; break;
    }
  } else {
    uint8_t *d = dst, v = *(const uint8_t *)src;
    switch (r) {
    case RED_NONE: *d = v; break;
    case RED_ADD: case RED_MAX: *d = *d || v; break;
    case RED_MUL: case RED_MIN: *d = *d && v; break;
    }
  }
}

dy_status dy_kernel_scatter_elements(const dy_op *op, dy_tensor *const *in, int n_in,
                                     dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *x = &in[0]->type, *ti = &in[1]->type;
  int ax = norm_axis(dy_scatter_elements_attrs_get(op).axis, x->rank);
  int64_t dim = x->shape[ax], n = dy_type_numel(ti);
  const int64_t *idx = in[1]->data;
  if ((s = check_indices(op, idx, n, dim, 1, NULL, err)))
    return s;
  size_t es = dy_dtype_size(x->dtype);
  memcpy(out[0]->data, in[0]->data, (size_t)dy_type_numel(x) * es);
  red_kind r = reduction_of(op);
  elem_walk w;
  elem_walk_init(&w, x, ti, ax);
  for (int64_t j = 0; j < n; j++, elem_walk_next(&w)) {
    int64_t k = idx[j] < 0 ? idx[j] + dim : idx[j];
    combine(r, x->dtype, (char *)out[0]->data + (size_t)(w.base + k * w.xstr[ax]) * es,
            (const char *)in[2]->data + (size_t)j * es);
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gather_nd, scatter_nd                                               */
/* ------------------------------------------------------------------ */

/* The geometry of tuple indexing: batch count nb, tuples per batch m, k
 * entries per tuple, slice size sl; x's batch stride and the stride of
 * each tuple entry; the extent each entry indexes. */
typedef struct {
  int64_t nb, m, k, sl, xbatch;
  int64_t tstr[DY_MAX_DIMS], tdim[DY_MAX_DIMS];
} nd_geom;

static void nd_geom_of(const dy_type *x, const dy_type *idx, int b, nd_geom *g) {
  int q = idx->rank;
  g->k = idx->shape[q - 1];
  g->nb = g->m = g->sl = g->xbatch = 1;
  for (int d = 0; d < b; d++)
    g->nb *= idx->shape[d];
  for (int d = b; d < q - 1; d++)
    g->m *= idx->shape[d];
  for (int d = b + (int)g->k; d < x->rank; d++)
    g->sl *= x->shape[d];
  for (int d = b; d < x->rank; d++)
    g->xbatch *= x->shape[d];
  int64_t st = g->sl;
  for (int j = (int)g->k - 1; j >= 0; j--) {
    g->tstr[j] = st;
    g->tdim[j] = x->shape[b + j];
    st *= x->shape[b + j];
  }
}

/* The x offset of tuple t (k entries, negatives counted from the end). */
static int64_t nd_offset(const nd_geom *g, const int64_t *t) {
  int64_t off = 0;
  for (int j = 0; j < g->k; j++)
    off += (t[j] < 0 ? t[j] + g->tdim[j] : t[j]) * g->tstr[j];
  return off;
}

dy_status dy_kernel_gather_nd(const dy_op *op, dy_tensor *const *in, int n_in,
                              dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *x = &in[0]->type;
  nd_geom g;
  nd_geom_of(x, &in[1]->type, (int)dy_gather_nd_attrs_get(op).batch_dims, &g);
  const int64_t *idx = in[1]->data;
  if ((s = check_indices(op, idx, g.nb * g.m * g.k, 0, g.k, g.tdim, err)))
    return s;
  size_t es = dy_dtype_size(x->dtype), row = (size_t)g.sl * es;
  for (int64_t bi = 0; bi < g.nb; bi++)
    for (int64_t mi = 0; mi < g.m; mi++) {
      int64_t t = bi * g.m + mi;
      memcpy((char *)out[0]->data + (size_t)t * row,
             (const char *)in[0]->data +
                 (size_t)(bi * g.xbatch + nd_offset(&g, idx + t * g.k)) * es,
             row);
    }
  return DY_OK;
}

dy_status dy_kernel_scatter_nd(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *x = &in[0]->type;
  nd_geom g;
  nd_geom_of(x, &in[1]->type, 0, &g);
  const int64_t *idx = in[1]->data;
  if ((s = check_indices(op, idx, g.m * g.k, 0, g.k, g.tdim, err)))
    return s;
  size_t es = dy_dtype_size(x->dtype);
  memcpy(out[0]->data, in[0]->data, (size_t)dy_type_numel(x) * es);
  red_kind r = reduction_of(op);
  for (int64_t mi = 0; mi < g.m; mi++) {
    int64_t off = nd_offset(&g, idx + mi * g.k);
    for (int64_t i = 0; i < g.sl; i++)
      combine(r, x->dtype, (char *)out[0]->data + (size_t)(off + i) * es,
              (const char *)in[2]->data + (size_t)(mi * g.sl + i) * es);
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* top_k                                                               */
/* ------------------------------------------------------------------ */

/* Does (a, ia) rank before (b, ib)? Values first (NaN above any number),
 * then the lower index. The words of emit_extra.c's DY_TOPK_BEFORE. */
#define BEFORE_LARGEST(a, ia, b, ib)                                         \
  ((a) != (a) || (b) != (b) ? ((a) != (a) && (b) != (b) ? (ia) < (ib) : (a) != (a)) \
   : (a) != (b)             ? (a) > (b)                                      \
                            : (ia) < (ib))
#define BEFORE_SMALLEST(a, ia, b, ib)                                        \
  ((a) != (a) || (b) != (b) ? ((a) != (a) && (b) != (b) ? (ia) < (ib) : (b) != (b)) \
   : (a) != (b)             ? (a) < (b)                                      \
                            : (ia) < (ib))

/* i64: no NaN. */
#define BEFORE_LARGEST_I(a, ia, b, ib) ((a) != (b) ? (a) > (b) : (ia) < (ib))
#define BEFORE_SMALLEST_I(a, ia, b, ib) ((a) != (b) ? (a) < (b) : (ia) < (ib))

/* One row x[i * inner], i < n: the k best indices into y[q * inner]. */
#define TOPK_ROW(T, BEFORE)                                                  \
  do {                                                                       \
    const T *x = (const T *)in[0]->data + o * n * inner + j;                 \
    int64_t prev = -1;                                                       \
    for (int64_t q = 0; q < k; q++) {                                        \
      int64_t best = -1;                                                     \
      for (int64_t i = 0; i < n; i++) {                                      \
        if (prev >= 0 && !BEFORE(x[prev * inner], prev, x[i * inner], i))    \
          continue;                                                          \
        if (best < 0 || BEFORE(x[i * inner], i, x[best * inner], best))      \
          best = i;                                                          \
      }                                                                      \
      y[(o * k + q) * inner + j] = best;                                     \
      prev = best;                                                           \
    }                                                                        \
  } while (0)

/* nms's min and max as the generated C writes them (no libm there) */
static float nms_min(float a, float b) { return a < b ? a : b; }
static float nms_max(float a, float b) { return a > b ? a : b; }

/* nms's test: is the IoU of boxes a and b (4 floats each, the op's
 * center_point_box format) above thr? ONNX's reference, in f32. */
static bool nms_suppress(const float *a, const float *b, bool center, float thr) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (center) {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  } else {
    ax0 = nms_min(a[1], a[3]), ax1 = nms_max(a[1], a[3]);
    ay0 = nms_min(a[0], a[2]), ay1 = nms_max(a[0], a[2]);
    bx0 = nms_min(b[1], b[3]), bx1 = nms_max(b[1], b[3]);
    by0 = nms_min(b[0], b[2]), by1 = nms_max(b[0], b[2]);
  }
  float ix0 = nms_max(ax0, bx0), ix1 = nms_min(ax1, bx1);
  float iy0 = nms_max(ay0, by0), iy1 = nms_min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  float uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0)
    return false;
  return inter / uni > thr;
}

/* nms: a DY_OPF_SETS_SIZE op; out[0] is allocated at its capacity [cap, 3],
 * cap >= B * C * min(max_per_class, N) (dy_op_size_bound). Per batch and
 * class: the next box is the best one (score, then lower index) below the
 * last one taken; the boxes kept so far are this class's rows of y. */
dy_status dy_kernel_nms(const dy_op *op, dy_tensor *const *in, int n_in, dy_tensor *const *out,
                        dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  dy_nms_attrs a = dy_nms_attrs_get(op);
  const float *box = in[0]->data, *score = in[1]->data;
  int64_t nb = in[1]->type.shape[0], nc = in[1]->type.shape[1], n = in[1]->type.shape[2];
  int64_t per = a.max_per_class < n ? a.max_per_class : n, cap = out[0]->type.shape[0];
  if (out[0]->type.rank != 2 || cap < nb * nc * per)
    return dy_error_at(err, op, DY_STATUS_INTERNAL, "nms: the output's capacity %lld is below "
                       "%lld rows", (long long)cap, (long long)(nb * nc * per));
  int64_t *y = out[0]->data, rows = 0;
  bool center = a.center_point_box != 0, thr = a.has_score_threshold != 0;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t c = 0; c < nc; c++) {
      const float *sc = score + (b * nc + c) * n, *bx = box + b * n * 4;
      int64_t first = rows, last = -1;
      for (int64_t t = 0; t < n && rows - first < per; t++) { /* at most n candidates */
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++) {
          float v = sc[i];
          if (v != v || (thr && !(v > a.score_threshold)))
            continue;
          bool below = last < 0 || v < sc[last] || (v == sc[last] && i > last);
          if (below && (best < 0 || v > sc[best]))
            best = i;
        }
        if (best < 0)
          break;
        last = best;
        bool keep = true;
        for (int64_t r = first; r < rows && keep; r++)
          keep = !nms_suppress(bx + best * 4, bx + y[r * 3 + 2] * 4, center, a.iou_threshold);
        if (keep) {
          y[rows * 3] = b, y[rows * 3 + 1] = c, y[rows * 3 + 2] = best;
          rows++;
        }
      }
    }
  out[0]->type.shape[0] = rows;
  out[0]->nbytes = (size_t)(rows * 3) * sizeof(int64_t);
  return DY_OK;
}

dy_status dy_kernel_top_k(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *t = &in[0]->type;
  dy_top_k_attrs a = dy_top_k_attrs_get(op);
  int64_t outer, n, inner, k = a.k;
  around_axis(t, norm_axis(a.axis, t->rank), &outer, &n, &inner);
  bool largest = a.largest != 0, f32 = t->dtype == DY_F32;
  int64_t *y = out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      if (f32 && largest)
        TOPK_ROW(float, BEFORE_LARGEST);
      else if (f32)
        TOPK_ROW(float, BEFORE_SMALLEST);
      else if (largest)
        TOPK_ROW(int64_t, BEFORE_LARGEST_I);
      else
        TOPK_ROW(int64_t, BEFORE_SMALLEST_I);
    }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* det                                                                 */
/* ------------------------------------------------------------------ */

/* The row at or below c with the largest |a[r][c]| (the first on ties). */
static int64_t pivot_row(const double *a, int64_t n, int64_t c) {
  int64_t p = c;
  for (int64_t r = c + 1; r < n; r++)
    if ((a[r * n + c] < 0.0 ? -a[r * n + c] : a[r * n + c]) >
        (a[p * n + c] < 0.0 ? -a[p * n + c] : a[p * n + c]))
      p = r;
  return p;
}

dy_status dy_kernel_det(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *t = &in[0]->type;
  int64_t n = t->shape[t->rank - 1], count = dy_tensor_numel(out[0]);
  double a[64 * 64];
  for (int64_t m = 0; m < count; m++) {
    const float *x = (const float *)in[0]->data + m * n * n;
    for (int64_t i = 0; i < n * n; i++)
      a[i] = x[i];
    double det = 1.0;
    for (int64_t c = 0; c < n; c++) {
      int64_t p = pivot_row(a, n, c);
      if (a[p * n + c] == 0.0) {
        det = 0.0;
        break;
      }
      if (p != c) {
        for (int64_t j = 0; j < n; j++) {
          double v = a[c * n + j];
          a[c * n + j] = a[p * n + j];
          a[p * n + j] = v;
        }
        det = -det;
      }
      det *= a[c * n + c];
      for (int64_t r = c + 1; r < n; r++) {
        double f = a[r * n + c] / a[c * n + c];
        for (int64_t j = c + 1; j < n; j++)
          a[r * n + j] -= f * a[c * n + j];
      }
    }
    ((float *)out[0]->data)[m] = (float)det;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* inverse                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_inverse(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *t = &in[0]->type;
  int64_t n = t->shape[t->rank - 1], count = dy_tensor_numel(out[0]) / (n * n);
  double a[64 * 64], v[64 * 64];
  for (int64_t m = 0; m < count; m++) {
    const float *x = (const float *)in[0]->data + m * n * n;
    for (int64_t i = 0; i < n * n; i++) {
      a[i] = x[i];
      v[i] = i / n == i % n ? 1.0 : 0.0;
    }
    for (int64_t c = 0; c < n; c++) {
      int64_t p = pivot_row(a, n, c);
      for (int64_t j = 0; j < n; j++) {
        double w = a[c * n + j];
        a[c * n + j] = a[p * n + j];
        a[p * n + j] = w;
        w = v[c * n + j];
        v[c * n + j] = v[p * n + j];
        v[p * n + j] = w;
      }
      double d = a[c * n + c];
      for (int64_t j = 0; j < n; j++) {
        a[c * n + j] /= d;
        v[c * n + j] /= d;
      }
      for (int64_t r = 0; r < n; r++) {
        double f = a[r * n + c];
        if (r == c || f == 0.0)
          continue;
        for (int64_t j = 0; j < n; j++) {
          a[r * n + j] -= f * a[c * n + j];
          v[r * n + j] -= f * v[c * n + j];
        }
      }
    }
    float *y = (float *)out[0]->data + m * n * n;
    for (int64_t i = 0; i < n * n; i++)
      y[i] = (float)v[i];
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* grid_sample                                                         */
/* ------------------------------------------------------------------ */

/* The formulas of emit_extra.c's grid_sample, function by function. */
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* A coordinate safe to convert to int64_t: within +-1e7, NaN to -1e7. */
static float gs_safe(float v) { return v > -1e7f ? (v < 1e7f ? v : 1e7f) : -1e7f; }

/* Normalised g in [-1, 1] to a pixel coordinate along an extent of n. */
static float gs_unnormalize(float g, int64_t n, bool ac) {
  return ac ? (g + 1.0f) * 0.5f * (float)(n - 1) : ((g + 1.0f) * (float)n - 1.0f) * 0.5f;
}

/* v reflected into [lo2 / 2, hi2 / 2] (PyTorch's reflect_coordinates). */
static float gs_reflect(float v, float lo2, float hi2) {
  if (lo2 == hi2)
    return 0.0f;
  const float mn = lo2 * 0.5f, span = (hi2 - lo2) * 0.5f;
  const float a = v - mn < 0.0f ? mn - v : v - mn;
  const float flips = floorf(a / span);
  const float extra = a - flips * span;
  return flips - 2.0f * floorf(flips * 0.5f) == 0.0f ? extra + mn : span - extra + mn;
}

/* The padding mode's transform of a coordinate along an extent of n. */
static float gs_pad(float v, int64_t n, int pad, bool ac) {
  if (pad == GS_REFLECTION)
    v = ac ? gs_reflect(v, 0.0f, (float)(2 * (n - 1))) : gs_reflect(v, -1.0f, (float)(2 * n - 1));
  if (pad != GS_ZEROS)
    v = v < 0.0f ? 0.0f : v > (float)(n - 1) ? (float)(n - 1) : v;
  return gs_safe(v);
}

/* x[yy][xx] of an h x w plane, 0 outside. */
static float gs_at(const float *x, int64_t h, int64_t w, int64_t yy, int64_t xx) {
  return xx >= 0 && xx < w && yy >= 0 && yy < h ? x[yy * w + xx] : 0.0f;
}

/* Cubic convolution weights (A = -0.75) of the taps at t + 1, t, 1 - t,
 * 2 - t. */
static void gs_cubic(float t, float w[4]) {
  const float A = -0.75f;
  float d[4] = {t + 1.0f, t, 1.0f - t, 2.0f - t};
  for (int i = 0; i < 4; i++)
    w[i] = i == 0 || i == 3 ? ((A * d[i] - 5.0f * A) * d[i] + 8.0f * A) * d[i] - 4.0f * A
                            : ((A + 2.0f) * d[i] - (A + 3.0f)) * d[i] * d[i] + 1.0f;
}

static float gs_round_even(float v) {
  float r = floorf(v + 0.5f);
  return r - v == 0.5f ? 2.0f * floorf(r * 0.5f) : r;
}

/* x[yy][xx] += v on an h x w plane, nothing outside (grid_sample_grad). */
static void gs_add(float *x, int64_t h, int64_t w, int64_t yy, int64_t xx, float v) {
  if (xx >= 0 && xx < w && yy >= 0 && yy < h)
    x[yy * w + xx] += v;
}

/* grid_sample of x ([N,C,H,W] of type xt) at grid into y; or, with dyd
 * and dx (zeroed) instead of x and y, its gradient with respect to x:
 * each output's gradient added to the taps it read, times their weights
 * (grid_sample_grad). */
static void grid_sample_run(const dy_op *op, const dy_type *xt, const float *grid,
                            int64_t P, const float *xd, float *y, const float *dyd,
                            float *dx) {
  dy_grid_sample_attrs a = dy_grid_sample_attrs_get(op);
  int mode = strcmp(a.mode, "nearest") == 0 ? 1 : strcmp(a.mode, "bicubic") == 0 ? 2 : 0;
  int pad = strcmp(a.padding_mode, "border") == 0       ? GS_BORDER
            : strcmp(a.padding_mode, "reflection") == 0 ? GS_REFLECTION
                                                        : GS_ZEROS;
  bool ac = a.align_corners != 0;
  const int64_t *xs = xt->shape;
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  for (int64_t b = 0; b < N; b++)
    for (int64_t p = 0; p < P; p++) {
      const float gx = grid[(b * P + p) * 2], gy = grid[(b * P + p) * 2 + 1];
      float ix = gs_unnormalize(gx, W, ac), iy = gs_unnormalize(gy, H, ac);
      if (mode == 2) {
        ix = gs_safe(ix);
        iy = gs_safe(iy);
      } else {
        ix = gs_pad(ix, W, pad, ac);
        iy = gs_pad(iy, H, pad, ac);
      }
      for (int64_t ch = 0; ch < C; ch++) {
        const float *x = xd ? xd + (b * C + ch) * H * W : NULL;
        float *gxd = dx ? dx + (b * C + ch) * H * W : NULL;
        const float g = dyd ? dyd[(b * C + ch) * P + p] : 0.0f;
        float v = 0.0f;
        if (mode == 0) {
          const float fx = floorf(ix), fy = floorf(iy);
          const int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
          const float tx = ix - fx, ty = iy - fy;
          if (gxd) {
            gs_add(gxd, H, W, y0, x0, (1.0f - tx) * (1.0f - ty) * g);
            gs_add(gxd, H, W, y0, x0 + 1, tx * (1.0f - ty) * g);
            gs_add(gxd, H, W, y0 + 1, x0, (1.0f - tx) * ty * g);
            gs_add(gxd, H, W, y0 + 1, x0 + 1, tx * ty * g);
          } else {
            v = gs_at(x, H, W, y0, x0) * (1.0f - tx) * (1.0f - ty) +
                gs_at(x, H, W, y0, x0 + 1) * tx * (1.0f - ty) +
                gs_at(x, H, W, y0 + 1, x0) * (1.0f - tx) * ty +
                gs_at(x, H, W, y0 + 1, x0 + 1) * tx * ty;
          }
        } else if (mode == 1) {
          const int64_t yy = (int64_t)gs_round_even(iy), xx = (int64_t)gs_round_even(ix);
          if (gxd)
            gs_add(gxd, H, W, yy, xx, g);
          else
            v = gs_at(x, H, W, yy, xx);
        } else {
          const float fx = floorf(ix), fy = floorf(iy);
          float wx[4], wy[4];
          gs_cubic(ix - fx, wx);
          gs_cubic(iy - fy, wy);
          for (int j = 0; j < 4; j++) {
            const int64_t yy = (int64_t)gs_pad(fy - 1.0f + (float)j, H, pad, ac);
            float row = 0.0f;
            for (int i = 0; i < 4; i++) {
              const int64_t xx = (int64_t)gs_pad(fx - 1.0f + (float)i, W, pad, ac);
              if (gxd)
                gs_add(gxd, H, W, yy, xx, wy[j] * wx[i] * g);
              else
                row += wx[i] * gs_at(x, H, W, yy, xx);
            }
            v += wy[j] * row;
          }
        }
        if (y)
          y[(b * C + ch) * P + p] = v;
      }
    }
}

dy_status dy_kernel_grid_sample(const dy_op *op, dy_tensor *const *in, int n_in,
                                dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  const int64_t *gsh = in[1]->type.shape;
  grid_sample_run(op, &in[0]->type, in[1]->data, gsh[1] * gsh[2], in[0]->data,
                  out[0]->data, NULL, NULL);
  return DY_OK;
}

/* grid_sample_grad(dy, grid, x): x is read for its shape only */
dy_status dy_kernel_grid_sample_grad(const dy_op *op, dy_tensor *const *in, int n_in,
                                     dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  const int64_t *gsh = in[1]->type.shape;
  memset(out[0]->data, 0, out[0]->nbytes);
  grid_sample_run(op, &in[2]->type, in[1]->data, gsh[1] * gsh[2], NULL, NULL, in[0]->data,
                  out[0]->data);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* roi_align                                                           */
/* ------------------------------------------------------------------ */

/* onnxruntime's RoiAlign, in float, as emit_extra.c writes it: into y;
 * or (dy and dx given, dx zeroed) its gradient with respect to x: each
 * output's gradient added to the taps of its samples times their weights
 * (avg: over the count; max: to the one weighted tap that won). x is read
 * by the forward and by max's gradient. */
static void roi_align_run(const dy_op *op, const dy_type *xt, const float *rois,
                          const int64_t *bi, int64_t R, const float *xd, float *y,
                          const float *dyd, float *dx) {
  const int64_t *xs = xt->shape;
  int64_t C = xs[1], H = xs[2], W = xs[3];
  dy_roi_align_attrs a = dy_roi_align_attrs_get(op);
  int64_t oh = a.output_height, ow = a.output_width, sr = a.sampling_ratio;
  bool half = a.half_pixel != 0;
  bool avg = strcmp(a.mode, "avg") == 0;
  const float scale = (float)a.spatial_scale;
  const float off = half ? 0.5f : 0.0f;
  for (int64_t r = 0; r < R; r++) {
    const float *q = rois + r * 4;
    const float sw = q[0] * scale - off, sh = q[1] * scale - off;
    float rw = q[2] * scale - off - sw, rh = q[3] * scale - off - sh;
    if (!half) {
      rw = rw > 1.0f ? rw : 1.0f;
      rh = rh > 1.0f ? rh : 1.0f;
    }
    const float bh = rh / (float)oh, bw = rw / (float)ow;
    const int64_t gh = sr > 0 ? sr : (int64_t)ceilf(rh / (float)oh);
    const int64_t gw = sr > 0 ? sr : (int64_t)ceilf(rw / (float)ow);
    const float count = (float)(gh * gw > 1 ? gh * gw : 1);
    for (int64_t ch = 0; ch < C; ch++) {
      const int64_t plane = (bi[r] * C + ch) * H * W;
      const float *x = xd ? xd + plane : NULL;
      float *gx = dx ? dx + plane : NULL;
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++) {
          const int64_t o = ((r * C + ch) * oh + ph) * ow + pw;
          const float g = dyd ? dyd[o] : 0.0f;
          float acc = 0.0f, win_w = 0.0f;
          int64_t win = -1; /* max's gradient: the winning tap */
          bool first = true;
          for (int64_t iy = 0; iy < gh; iy++) {
            const float yy0 = sh + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              const float xx0 = sw + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw;
              float t = 0.0f, tw = 0.0f;
              int64_t tk = -1;
              if (!(yy0 < -1.0f || yy0 > (float)H || xx0 < -1.0f || xx0 > (float)W)) {
                float yy = yy0 <= 0.0f ? 0.0f : yy0, xx = xx0 <= 0.0f ? 0.0f : xx0;
                int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
                if (yl >= H - 1) {
                  yh = yl = H - 1;
                  yy = (float)yl;
                } else {
                  yh = yl + 1;
                }
                if (xl >= W - 1) {
                  xh = xl = W - 1;
                  xx = (float)xl;
                } else {
                  xh = xl + 1;
                }
                const float ly = yy - (float)yl, lx = xx - (float)xl;
                const float hy = 1.0f - ly, hx = 1.0f - lx;
                const int64_t k[4] = {yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh};
                const float w[4] = {hy * hx, hy * lx, ly * hx, ly * lx};
                if (avg && gx) {
                  for (int j = 0; j < 4; j++)
                    gx[k[j]] += w[j] * g / count;
                } else if (avg) {
                  t = w[0] * x[k[0]] + w[1] * x[k[1]] + w[2] * x[k[2]] + w[3] * x[k[3]];
                } else {
                  /* t = t > v ? t : v over the taps, as the forward */
                  t = w[0] * x[k[0]], tk = k[0], tw = w[0];
                  for (int j = 1; j < 4; j++)
                    if (!(t > w[j] * x[k[j]]))
                      t = w[j] * x[k[j]], tk = k[j], tw = w[j];
                }
              }
              if (avg) {
                acc += t;
              } else if (first || t > acc) {
                acc = t;
                win = tk;
                win_w = tw;
              }
              first = false;
            }
          }
          if (y)
            y[o] = avg ? acc / count : acc;
          else if (!avg && win >= 0)
            gx[win] += win_w * g;
        }
    }
  }
}

/* Every batch index in [0, N). */
static dy_status roi_check(const dy_op *op, const dy_tensor *bt, int64_t N, dy_error *err) {
  const int64_t *bi = bt->data;
  for (int64_t r = 0; r < bt->type.shape[0]; r++)
    if (bi[r] < 0 || bi[r] >= N)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: batch index %lld (roi %lld) is out of range for %lld "
                         "images", op_name(op), (long long)bi[r], (long long)r, (long long)N);
  return DY_OK;
}

dy_status dy_kernel_roi_align(const dy_op *op, dy_tensor *const *in, int n_in,
                              dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 3, out, err);
  if (s != DY_OK || (s = roi_check(op, in[2], in[0]->type.shape[0], err)))
    return s;
  roi_align_run(op, &in[0]->type, in[1]->data, in[2]->data, in[1]->type.shape[0],
                in[0]->data, out[0]->data, NULL, NULL);
  return DY_OK;
}

/* roi_align_grad(dy, rois, batch_index, x) */
dy_status dy_kernel_roi_align_grad(const dy_op *op, dy_tensor *const *in, int n_in,
                                   dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck(op, in, n_in, 4, out, err);
  if (s != DY_OK || (s = roi_check(op, in[2], in[3]->type.shape[0], err)))
    return s;
  memset(out[0]->data, 0, out[0]->nbytes);
  roi_align_run(op, &in[3]->type, in[1]->data, in[2]->data, in[1]->type.shape[0],
                in[3]->data, NULL, in[0]->data, out[0]->data);
  return DY_OK;
}
