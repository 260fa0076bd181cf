/* kernels_math.c - reference kernels of the math family (ir/ops_math.def).
 *
 * Unary ops are one map (map_unary) over a per-element function
 * `float f(float x, const float *p)`, p holding the op's float attributes
 * in schema order. Each function's body is the op's formula, written in
 * exactly the words codegen/ops/emit_math.c prints into the generated C (same
 * libm calls, same f32 constants, same order of operations), so eager and
 * compiled results agree to the last bit or close to it. Change one, change
 * the other.
 *
 * Semantics (Paddle / ONNX / numpy; f32 unless stated):
 *   gelu         approximate 0: 0.5 x (1 + erf(x / sqrt 2));
 *                approximate 1: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *   silu         x * sigmoid(x), as x / (1 + e^-x): no overflow either way
 *   hard_swish   x * min(max(x + 3, 0), 6) / 6 (Paddle's fixed constants)
 *   hard_sigmoid max(0, min(1, slope x + offset)); NaN stays NaN
 *   leaky_relu   x > 0 ? x : alpha x           elu  x > 0 ? x : alpha (e^x - 1)
 *   clip         min <= x <= max; NaN stays NaN
 *   softplus     beta x > threshold ? x : log1p(e^(beta x)) / beta
 *   exp log sqrt rsqrt erf reciprocal: libm (rsqrt is 1 / sqrtf)
 *   abs, neg     f32 and i64; i64 wraps (abs and neg of INT64_MIN are
 *                INT64_MIN, as in two's complement hardware)
 *   scale        bias_after_scale ? scale x + bias : scale (x + bias)
 *   pow          powf, broadcasting
 *   minimum, maximum  f32 and i64, broadcasting. NaN propagates (numpy's
 *                minimum/maximum, not C's fminf/fmaxf): if either operand
 *                is NaN the result is NaN.
 *   equal, greater, less  f32, i64, i32, i8, u8 or bool operands, broadcasting, bool
 *                (0/1) result; any comparison with NaN is false
 *   where        cond ? x : y, three-way broadcasting, cond nonzero = true
 *   cast         f32 -> an integer dtype truncates toward zero (C); NaN
 *                gives 0 and values outside the dtype's range saturate
 *                (the conversion C leaves undefined is never executed).
 *                Integer -> narrower integer wraps (two's complement, as
 *                numpy and ONNX). -> bool is x != 0 (so NaN -> 1). bool ->
 *                number is 0 or 1. Integer -> f32 rounds to nearest.
 *
 * The binary ops with an output of their inputs' dtype go through
 * dy_kbinary (kernels_util.c); comparisons and where, whose output or
 * operands differ in element size, walk a small n-ary broadcast plan of
 * their own.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

/* ------------------------------------------------------------------ */
/* Attributes                                                          */
/* ------------------------------------------------------------------ */

/* A double attribute as the f32 the op computes with; out-of-range values
 * become +-inf rather than an undefined conversion (inference rejects
 * them anyway). codegen/ops/emit_math.c converts the same way. */
static float to_f32(double v) {
  if (v > FLT_MAX)
    return INFINITY;
  if (v < -FLT_MAX)
    return -INFINITY;
  return (float)v;
}

/* ------------------------------------------------------------------ */
/* Unary ops: one map over a per-element function                      */
/* ------------------------------------------------------------------ */

typedef float (*f32_fn)(float x, const float *p);
typedef int64_t (*i64_fn)(int64_t x);

/* out = f(in) elementwise; i64 inputs use g (NULL: f32 only). */
static dy_status map_unary(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, f32_fn f, const float *p,
                           i64_fn g, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *ti = &in[0]->type, *to = &out[0]->type;
  if (!dy_type_equal(ti, to))
    return dy_kshape_error(op, "output", to, ti, err);
  int64_t n = dy_type_numel(ti);
  if (ti->dtype == DY_F32) {
    const float *x = in[0]->data;
    float *y = out[0]->data;
    for (int64_t i = 0; i < n; i++)
      y[i] = f(x[i], p);
    return DY_OK;
  }
  if (ti->dtype == DY_I64 && g) {
    const int64_t *x = in[0]->data;
    int64_t *y = out[0]->data;
    for (int64_t i = 0; i < n; i++)
      y[i] = g(x[i]);
    return DY_OK;
  }
  return dy_kunsupported_dtype(op, ti->dtype, err);
}

/* The formulas. Keep each return expression identical to its string in
 * codegen/ops/emit_math.c. */
static float gelu_erf1(float x, const float *p) {
  (void)p;
  return 0.5f * x * (1.0f + erff(x * 0.707106781f));
}
static float gelu_tanh1(float x, const float *p) {
  (void)p;
  return 0.5f * x * (1.0f + tanhf(0.797884561f * (x + 0.044715f * x * x * x)));
}
static float silu1(float x, const float *p) {
  (void)p;
  return x / (1.0f + expf(-x));
}
static float hard_swish1(float x, const float *p) {
  (void)p;
  return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
}
static float hard_sigmoid1(float x, const float *p) {
  const float slope = p[0], offset = p[1];
  return isnan(x) ? x : fmaxf(0.0f, fminf(1.0f, slope * x + offset));
}
static float leaky_relu1(float x, const float *p) {
  const float alpha = p[0];
  return x > 0.0f ? x : alpha * x;
}
static float elu1(float x, const float *p) {
  const float alpha = p[0];
  return x > 0.0f ? x : alpha * expm1f(x);
}
static float clip1(float x, const float *p) {
  const float lo = p[0], hi = p[1];
  return x < lo ? lo : x > hi ? hi : x;
}
static float softplus1(float x, const float *p) {
  const float beta = p[0], threshold = p[1];
  return beta * x > threshold ? x : log1pf(expf(beta * x)) / beta;
}
static float softsign1(float x, const float *p) { (void)p; return x / (1.0f + fabsf(x)); }
static float exp1(float x, const float *p) { (void)p; return expf(x); }
static float log1(float x, const float *p) { (void)p; return logf(x); }
static float sqrt1(float x, const float *p) { (void)p; return sqrtf(x); }
static float rsqrt1(float x, const float *p) { (void)p; return 1.0f / sqrtf(x); }
static float abs1(float x, const float *p) { (void)p; return fabsf(x); }
static float neg1(float x, const float *p) { (void)p; return -x; }
static float erf1(float x, const float *p) { (void)p; return erff(x); }
static float reciprocal1(float x, const float *p) { (void)p; return 1.0f / x; }
static float scale_after1(float x, const float *p) {
  const float scale = p[0], bias = p[1];
  return scale * x + bias;
}
static float scale_before1(float x, const float *p) {
  const float scale = p[0], bias = p[1];
  return scale * (x + bias);
}

/* i64 negation wraps instead of overflowing. */
static int64_t abs_i64(int64_t x) { return x < 0 ? (int64_t)(0u - (uint64_t)x) : x; }
static int64_t neg_i64(int64_t x) { return (int64_t)(0u - (uint64_t)x); }

/* dy_kernel_NAME for a unary op with float attributes a, b (or NULL). */
#define UNARY_KERNEL(name, f, g)                                               \
  dy_status dy_kernel_##name(const dy_op *op, dy_tensor *const *in, int n_in, \
                             dy_tensor *const *out, dy_error *err) {          \
    float p[2] = {0.0f, 0.0f};                                                \
    return map_unary(op, in, n_in, out, f, p, g, err);                        \
  }
/* An f32 op with up to two float attributes p0, p1 of its dy_<name>_attrs a. */
#define UNARY_KERNEL_P(name, f, p0, p1)                                        \
  dy_status dy_kernel_##name(const dy_op *op, dy_tensor *const *in, int n_in, \
                             dy_tensor *const *out, dy_error *err) {          \
    dy_##name##_attrs a;                                                      \
    dy_status s = dy_##name##_attrs_of(op, &a, err);                          \
    float p[2] = {to_f32(p0), to_f32(p1)};                                    \
    return s ? s : map_unary(op, in, n_in, out, f, p, NULL, err);             \
  }

UNARY_KERNEL(silu, silu1, NULL)
UNARY_KERNEL(hard_swish, hard_swish1, NULL)
UNARY_KERNEL(softsign, softsign1, NULL)
UNARY_KERNEL_P(hard_sigmoid, hard_sigmoid1, a.slope, a.offset)
UNARY_KERNEL_P(leaky_relu, leaky_relu1, a.alpha, 0.0)
UNARY_KERNEL_P(elu, elu1, a.alpha, 0.0)
UNARY_KERNEL_P(clip, clip1, a.min, a.max)
UNARY_KERNEL_P(softplus, softplus1, a.beta, a.threshold)
UNARY_KERNEL(exp, exp1, NULL)
UNARY_KERNEL(log, log1, NULL)
UNARY_KERNEL(sqrt, sqrt1, NULL)
UNARY_KERNEL(rsqrt, rsqrt1, NULL)
UNARY_KERNEL(abs, abs1, abs_i64)
UNARY_KERNEL(neg, neg1, neg_i64)
UNARY_KERNEL(erf, erf1, NULL)
UNARY_KERNEL(reciprocal, reciprocal1, NULL)

dy_status dy_kernel_gelu(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  dy_gelu_attrs a;
  dy_status s = dy_gelu_attrs_of(op, &a, err);
  if (s != DY_OK)
    return s;
  return map_unary(op, in, n_in, out, a.approximate ? gelu_tanh1 : gelu_erf1,
                   NULL, NULL, err);
}

dy_status dy_kernel_scale(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  dy_scale_attrs a;
  dy_status s = dy_scale_attrs_of(op, &a, err);
  if (s)
    return s;
  float p[2] = {to_f32(a.scale), to_f32(a.bias)};
  return map_unary(op, in, n_in, out, a.bias_after_scale ? scale_after1 : scale_before1, p,
                   NULL, err);
}

/* ------------------------------------------------------------------ */
/* pow, minimum, maximum: dy_kbinary                                   */
/* ------------------------------------------------------------------ */

DEFINE_BINARY_LOOP(pow_f32, float, powf(x, y))
DEFINE_BINARY_LOOP(minimum_f32, float, isnan(x) || x < y ? x : y)
DEFINE_BINARY_LOOP(maximum_f32, float, isnan(x) || x > y ? x : y)
DEFINE_BINARY_LOOP(minimum_i64, int64_t, x < y ? x : y)
DEFINE_BINARY_LOOP(maximum_i64, int64_t, x > y ? x : y)

dy_status dy_kernel_pow(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, pow_f32, NULL, err);
}

dy_status dy_kernel_minimum(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, minimum_f32, minimum_i64, err);
}

dy_status dy_kernel_maximum(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, maximum_f32, maximum_i64, err);
}

/* ------------------------------------------------------------------ */
/* The n-ary broadcast walk (comparisons, where)                       */
/* ------------------------------------------------------------------ */

enum { MAXN = 3 };

/* Like dy_bcast_plan, for up to three inputs; each operand keeps its own
 * element size, so the output may be bool while the inputs are f32. */
typedef struct {
  int n, rank;                     /* inputs; dims after collapsing (>= 1) */
  int64_t shape[DY_MAX_DIMS];
  int64_t st[MAXN][DY_MAX_DIMS];   /* element strides, 0 where broadcast  */
} nplan;

/* One innermost row: o[i] = f(in[k][i * st[k]] ...) for i < n. */
typedef void (*nrow_fn)(const void *const *in, const int64_t *st, void *o,
                        int64_t n);

/* Check that out is the broadcast of the inputs' shapes (with dtype
 * out_dtype) and build the walk. */
static dy_status nplan_make(const dy_op *op, dy_tensor *const *in, int n,
                            const dy_type *out, dy_dtype out_dtype, nplan *pl,
                            dy_error *err) {
  dy_type want = {.dtype = out_dtype, .rank = 0};
  pl->n = n;
  pl->rank = 1;
  for (int k = 0; k < n; k++)
    if (in[k]->type.rank > want.rank)
      want.rank = in[k]->type.rank;
  int64_t st[MAXN][DY_MAX_DIMS];
  for (int d = 0; d < want.rank; d++) {
    int64_t dim = 1;
    for (int k = 0; k < n; k++) {
      const dy_type *t = &in[k]->type;
      int i = d - (want.rank - t->rank);
      int64_t di = i >= 0 ? t->shape[i] : 1;
      if (di != 1 && dim != 1 && di != dim) {
        char a[128];
        return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                           "%s: input %d %s does not broadcast (dim %d: %lld vs %lld)",
                           op_name(op), k, dy_type_str(t, a, sizeof a), d,
                           (long long)di, (long long)dim);
      }
      if (di != 1)
        dim = di;
    }
    want.shape[d] = dim;
  }
  if (!dy_type_equal(&want, out))
    return dy_kshape_error(op, "output", out, &want, err);
  for (int k = 0; k < n; k++) {
    const dy_type *t = &in[k]->type;
    int64_t cs[DY_MAX_DIMS];
    dy_contiguous_strides(t->rank, t->shape, cs);
    for (int d = 0; d < want.rank; d++) {
      int i = d - (want.rank - t->rank);
      st[k][d] = i >= 0 && t->shape[i] != 1 ? cs[i] : 0;
    }
  }
  /* drop size-1 dims; merge a dim into the previous one when the pair is
   * contiguous in every input (the output is contiguous) */
  int r = 0;
  for (int d = 0; d < want.rank; d++) {
    int64_t len = want.shape[d];
    if (len == 1)
      continue;
    bool merge = r > 0;
    for (int k = 0; k < n && merge; k++)
      merge = pl->st[k][r - 1] == st[k][d] * len;
    if (merge) {
      pl->shape[r - 1] *= len;
      for (int k = 0; k < n; k++)
        pl->st[k][r - 1] = st[k][d];
      continue;
    }
    pl->shape[r] = len;
    for (int k = 0; k < n; k++)
      pl->st[k][r] = st[k][d];
    r++;
  }
  if (r == 0) { /* a single element */
    pl->shape[0] = 1;
    for (int k = 0; k < n; k++)
      pl->st[k][0] = 0;
    r = 1;
  }
  pl->rank = r;
  return DY_OK;
}

/* Walk the plan: one row call per innermost run. */
static void nplan_run(const nplan *pl, nrow_fn row, dy_tensor *const *in,
                      dy_tensor *out) {
  int inner = pl->rank - 1;
  int64_t len = pl->shape[inner], outer = 1;
  for (int d = 0; d < inner; d++)
    outer *= pl->shape[d];
  size_t es[MAXN], oes = dy_dtype_size(out->type.dtype);
  int64_t off[MAXN] = {0}, idx[DY_MAX_DIMS] = {0}, st_in[MAXN];
  for (int k = 0; k < pl->n; k++) {
    es[k] = dy_dtype_size(in[k]->type.dtype);
    st_in[k] = pl->st[k][inner];
  }
  char *o = out->data;
  for (int64_t j = 0; j < outer; j++) {
    const void *ptr[MAXN];
    for (int k = 0; k < pl->n; k++)
      ptr[k] = (const char *)in[k]->data + (size_t)off[k] * es[k];
    row(ptr, st_in, o + (size_t)(j * len) * oes, len);
    /* advance the odometer over the outer dims */
    for (int d = inner - 1; d >= 0; d--) {
      for (int k = 0; k < pl->n; k++)
        off[k] += pl->st[k][d];
      if (++idx[d] < pl->shape[d])
        break;
      for (int k = 0; k < pl->n; k++)
        off[k] -= pl->st[k][d] * pl->shape[d];
      idx[d] = 0;
    }
  }
}

/* Checks, plan and walk for an op of n inputs with row function row. The
 * output may alias an input only when they have the same type (each row
 * reads element i before writing it). */
static dy_status nary(const dy_op *op, dy_tensor *const *in, int n_in, int n,
                      dy_tensor *const *out, dy_dtype out_dtype, nrow_fn row,
                      dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, n, out, err);
  if (s != DY_OK)
    return s;
  nplan pl;
  if ((s = nplan_make(op, in, n, &out[0]->type, out_dtype, &pl, err)))
    return s;
  if (!row)
    return dy_kunsupported_dtype(op, in[n - 1]->type.dtype, err);
  if (dy_type_numel(&out[0]->type) == 0)
    return DY_OK;
  for (int k = 0; k < n; k++)
    if (in[k]->data == out[0]->data && !dy_type_equal(&in[k]->type, &out[0]->type))
      return dy_error_at(err, op, DY_STATUS_INTERNAL,
                         "%s: output aliases input %d of another type",
                         op_name(op), k);
  nplan_run(&pl, row, in, out[0]);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* equal, greater, less                                                */
/* ------------------------------------------------------------------ */

#define DEFINE_COMPARE_ROW(fname, T, OP)                                    \
  static void fname(const void *const *in, const int64_t *st, void *po,    \
                    int64_t n) {                                           \
    const T *a = in[0], *b = in[1];                                        \
    uint8_t *o = po;                                                       \
    for (int64_t i = 0; i < n; i++)                                        \
      o[i] = (uint8_t)(a[i * st[0]] OP b[i * st[1]]);                       \
  }

DEFINE_COMPARE_ROW(equal_f32, float, ==)
DEFINE_COMPARE_ROW(equal_i64, int64_t, ==)
DEFINE_COMPARE_ROW(equal_bool, uint8_t, ==)
DEFINE_COMPARE_ROW(greater_f32, float, >)
DEFINE_COMPARE_ROW(greater_i64, int64_t, >)
DEFINE_COMPARE_ROW(greater_bool, uint8_t, >)
DEFINE_COMPARE_ROW(less_f32, float, <)
DEFINE_COMPARE_ROW(less_i64, int64_t, <)
DEFINE_COMPARE_ROW(less_bool, uint8_t, <)
DEFINE_COMPARE_ROW(equal_i8, int8_t, ==)
DEFINE_COMPARE_ROW(equal_i32, int32_t, ==)
DEFINE_COMPARE_ROW(greater_i8, int8_t, >)
DEFINE_COMPARE_ROW(greater_i32, int32_t, >)
DEFINE_COMPARE_ROW(less_i8, int8_t, <)
DEFINE_COMPARE_ROW(less_i32, int32_t, <)

/* rows[dtype] */
static dy_status compare(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, const nrow_fn rows[DY_DTYPE_COUNT],
                         dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  dy_dtype ta = in[0]->type.dtype, tb = in[1]->type.dtype;
  if (ta != tb || out[0]->type.dtype != DY_BOOL)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "%s: dtypes %s and %s -> %s, expected equal dtypes -> bool",
                       op_name(op), dy_dtype_name(ta), dy_dtype_name(tb),
                       dy_dtype_name(out[0]->type.dtype));
  return nary(op, in, n_in, 2, out, DY_BOOL, rows[ta], err);
}

dy_status dy_kernel_equal(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  static const nrow_fn rows[DY_DTYPE_COUNT] = {
      [DY_F32] = equal_f32, [DY_I64] = equal_i64, [DY_BOOL] = equal_bool,
      [DY_I8] = equal_i8,   [DY_U8] = equal_bool,  [DY_I32] = equal_i32};
  return compare(op, in, n_in, out, rows, err);
}

dy_status dy_kernel_greater(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  static const nrow_fn rows[DY_DTYPE_COUNT] = {
      [DY_F32] = greater_f32, [DY_I64] = greater_i64, [DY_BOOL] = greater_bool,
      [DY_I8] = greater_i8,   [DY_U8] = greater_bool,  [DY_I32] = greater_i32};
  return compare(op, in, n_in, out, rows, err);
}

dy_status dy_kernel_less(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  static const nrow_fn rows[DY_DTYPE_COUNT] = {
      [DY_F32] = less_f32, [DY_I64] = less_i64, [DY_BOOL] = less_bool,
      [DY_I8] = less_i8,   [DY_U8] = less_bool,  [DY_I32] = less_i32};
  return compare(op, in, n_in, out, rows, err);
}

/* ------------------------------------------------------------------ */
/* where                                                               */
/* ------------------------------------------------------------------ */

#define DEFINE_WHERE_ROW(fname, T)                                          \
  static void fname(const void *const *in, const int64_t *st, void *po,    \
                    int64_t n) {                                           \
    const uint8_t *c = in[0];                                              \
    const T *x = in[1], *y = in[2];                                        \
    T *o = po;                                                             \
    for (int64_t i = 0; i < n; i++)                                        \
      o[i] = c[i * st[0]] ? x[i * st[1]] : y[i * st[2]];                   \
  }

DEFINE_WHERE_ROW(where_f32, float)
DEFINE_WHERE_ROW(where_i64, int64_t)
DEFINE_WHERE_ROW(where_bool, uint8_t)
DEFINE_WHERE_ROW(where_i32, int32_t)

dy_status dy_kernel_where(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  static const nrow_fn rows[DY_DTYPE_COUNT] = {
      [DY_F32] = where_f32, [DY_I64] = where_i64, [DY_BOOL] = where_bool,
      [DY_I8] = where_bool, [DY_U8] = where_bool, [DY_I32] = where_i32}; /* by size */
  dy_status s = dy_kcheck_io(op, in, n_in, 3, out, err);
  if (s != DY_OK)
    return s;
  dy_dtype tc = in[0]->type.dtype, tx = in[1]->type.dtype;
  if (tc != DY_BOOL || in[2]->type.dtype != tx || out[0]->type.dtype != tx)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "where: dtypes %s, %s, %s -> %s, expected bool, T, T -> T",
                       dy_dtype_name(tc), dy_dtype_name(tx),
                       dy_dtype_name(in[2]->type.dtype),
                       dy_dtype_name(out[0]->type.dtype));
  return nary(op, in, n_in, 3, out, tx, rows[tx], err);
}

/* ------------------------------------------------------------------ */
/* cast                                                                */
/* ------------------------------------------------------------------ */

/* f32 -> an integer dtype: truncate toward zero; NaN -> 0; saturate to
 * [lo, hi] (2^63 is exactly representable in f32; the other bounds are
 * compared as floats, exactly). Same expressions as emit_math.c. */
static int64_t f32_to_int(float x, dy_dtype t) {
  switch (t) {
  case DY_I64:
    return isnan(x) ? 0
           : x >= 9223372036854775808.0f ? INT64_MAX
           : x < -9223372036854775808.0f ? INT64_MIN
                                          : (int64_t)x;
  case DY_I32:
    return isnan(x) ? 0 : x >= 2147483647.0f ? INT32_MAX : x <= -2147483648.0f ? INT32_MIN
                                                                               : (int32_t)x;
  case DY_I8: return isnan(x) ? 0 : x >= 127.0f ? 127 : x <= -128.0f ? -128 : (int8_t)x;
  default: return isnan(x) ? 0 : x >= 255.0f ? 255 : x <= 0.0f ? 0 : (uint8_t)x; /* u8 */
  }
}

/* Element i of an integer or bool array as int64. */
static int64_t int_at(dy_dtype t, const void *p, int64_t i) {
  return t == DY_I64 ? ((const int64_t *)p)[i] : t == DY_BOOL ? ((const uint8_t *)p)[i]
                                                               : dy_quant_value(t, p, i);
}

/* v into an integer dtype, wrapping (two's complement) as numpy and ONNX
 * do; bool is v != 0. */
static void int_store(dy_dtype t, void *p, int64_t i, int64_t v) {
  switch (t) {
  case DY_I64: ((int64_t *)p)[i] = v; break;
  case DY_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
  case DY_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
  case DY_U8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
  default: ((uint8_t *)p)[i] = v != 0; break; /* bool */
  }
}

dy_status dy_kernel_cast(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  dy_cast_attrs a;
  if ((s = dy_cast_attrs_of(op, &a, err)))
    return s;
  int64_t dt = a.dtype;
  const dy_type *ti = &in[0]->type, *to = &out[0]->type;
  dy_type want = *ti;
  want.dtype = (dy_dtype)dt;
  if (dt < 0 || dt >= DY_DTYPE_COUNT || !dy_type_equal(&want, to))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "cast: output is %s, attribute dtype %lld",
                       dy_dtype_name(to->dtype), (long long)dt);
  int64_t n = dy_type_numel(ti);
  if (ti->dtype == to->dtype) {
    if (n > 0 && in[0]->data != out[0]->data)
      memmove(out[0]->data, in[0]->data, (size_t)n * dy_dtype_size(ti->dtype));
    return DY_OK;
  }
  if (n > 0 && in[0]->data == out[0]->data)
    return dy_error_at(err, op, DY_STATUS_INTERNAL,
                       "cast: output aliases the input");
  const void *x = in[0]->data;
  void *y = out[0]->data;
  for (int64_t i = 0; i < n; i++) {
    if (ti->dtype == DY_F32) {
      float v = ((const float *)x)[i];
      if (to->dtype == DY_BOOL)
        ((uint8_t *)y)[i] = (uint8_t)(v != 0.0f);
      else
        int_store(to->dtype, y, i, f32_to_int(v, to->dtype));
    } else if (to->dtype == DY_F32) {
      ((float *)y)[i] = ti->dtype == DY_BOOL ? (((const uint8_t *)x)[i] ? 1.0f : 0.0f)
                                             : (float)int_at(ti->dtype, x, i);
    } else {
      int_store(to->dtype, y, i, int_at(ti->dtype, x, i));
    }
  }
  return DY_OK;
}
