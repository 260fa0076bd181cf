/* kernels_core.c - reference kernels of the core ops (ir/ops.def's own
 * lines): add, sub, mul, div, relu, sigmoid, tanh, matmul, softmax,
 * reshape, flatten, transpose, full. The contract every kernel keeps is in
 * kernels.c; the helpers used here (checks, the broadcast iterator,
 * dy_kbinary, dy_kmap_f32) are kernels_util.c's.
 *
 * Semantics are numpy's / Paddle's:
 *   - add/sub/mul/div broadcast numpy-style from either side, any rank up
 *     to DY_MAX_DIMS, for f32 and i64 (and, through dy_kbinary, i32, i8
 *     and u8), on kernels_util.c's broadcast iterator. i64 add/sub/mul wrap
 *     on overflow; i64 div truncates toward zero (C and Paddle) and a zero
 *     divisor is an error.
 *   - relu/sigmoid/tanh on f32. relu is x > 0 ? x : 0 (NaN gives 0, as a
 *     SIMD max(x, 0) does); sigmoid never evaluates exp of a large positive
 *     number, so sigmoid(-100) is a tiny finite value, not NaN.
 *   - matmul follows numpy.matmul: the last two dims are the matrix, the
 *     leading dims broadcast; a 1-D x is [1,K] and a 1-D y is [K,1], the
 *     added 1 dropped from the result; transpose_x/transpose_y swap the last
 *     two dims of a >= 2-D operand (ignored for 1-D, as Paddle does). Each
 *     matrix product is one cblas_sgemm.
 *   - softmax over any axis (negative counts from the end), subtracting the
 *     max first so large inputs do not overflow.
 *   - reshape and flatten copy the data (the eager path aliases instead;
 *     the executor calls these).
 *   - transpose is a generic N-d permutation copy, any dtype.
 *   - full fills its output with attr value converted to the output dtype.
 */
#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

/* ------------------------------------------------------------------ */
/* add, sub, mul, div: the f32 and i64 loops (dy_kbinary runs them)    */
/* ------------------------------------------------------------------ */

/* i64 arithmetic wraps (two's complement) instead of being undefined. */
#define WRAP(expr) ((int64_t)(expr))
DEFINE_BINARY_LOOP(add_f32, float, x + y)
DEFINE_BINARY_LOOP(sub_f32, float, x - y)
DEFINE_BINARY_LOOP(mul_f32, float, x * y)
DEFINE_BINARY_LOOP(div_f32, float, x / y)
DEFINE_BINARY_LOOP(add_i64, int64_t, WRAP((uint64_t)x + (uint64_t)y))
DEFINE_BINARY_LOOP(sub_i64, int64_t, WRAP((uint64_t)x - (uint64_t)y))
DEFINE_BINARY_LOOP(mul_i64, int64_t, WRAP((uint64_t)x * (uint64_t)y))

/* Truncating integer division; a zero divisor fails the whole op, and
 * INT64_MIN / -1 wraps to INT64_MIN. */
static int div_i64(const void *pa, int64_t sa, const void *pb, int64_t sb,
                   void *po, int64_t n) {
  const int64_t *a = pa, *b = pb;
  int64_t *o = po;
  for (int64_t i = 0; i < n; i++) {
    int64_t x = a[i * sa], y = b[i * sb];
    if (y == 0)
      return 1;
    o[i] = y == -1 ? WRAP(0 - (uint64_t)x) : x / y;
  }
  return 0;
}

dy_status dy_kernel_add(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, add_f32, add_i64, err);
}

dy_status dy_kernel_sub(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, sub_f32, sub_i64, err);
}

dy_status dy_kernel_mul(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, mul_f32, mul_i64, err);
}

dy_status dy_kernel_div(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  return dy_kbinary(op, in, n_in, out, div_f32, div_i64, err);
}

/* ------------------------------------------------------------------ */
/* relu, sigmoid, tanh (f32)                                           */
/* ------------------------------------------------------------------ */

static float relu1(float x) { return x > 0.0f ? x : 0.0f; }

dy_status dy_kernel_relu(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  return dy_kmap_f32(op, in, n_in, out, relu1, err);
}

/* 1 / (1 + e^-x), written so that exp only sees non-positive arguments. */
static float sigmoid1(float x) {
  if (x >= 0.0f)
    return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

dy_status dy_kernel_sigmoid(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  return dy_kmap_f32(op, in, n_in, out, sigmoid1, err);
}

dy_status dy_kernel_tanh(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  return dy_kmap_f32(op, in, n_in, out, tanhf, err);
}

/* ------------------------------------------------------------------ */
/* matmul                                                              */
/* ------------------------------------------------------------------ */

/* One operand as sgemm sees it: the matrix dims and how it is stored. */
typedef struct {
  int64_t rows, cols;  /* of the matrix as used (after any transpose) */
  bool trans;          /* stored transposed */
  int64_t ld;          /* row length in memory */
  int64_t size;        /* elements per matrix */
  int nbatch;          /* number of leading (batch) dims */
} mm_operand;

/* x: [..., M, K] (or [..., K, M] transposed; [K] is [1, K]).
 * y: [..., K, N] (or [..., N, K] transposed; [K] is [K, 1]). */
static void mm_operand_of(const dy_type *t, bool trans, bool is_y,
                          mm_operand *m) {
  if (t->rank == 1) {
    int64_t k = t->shape[0];
    m->rows = is_y ? k : 1;
    m->cols = is_y ? 1 : k;
    m->trans = false;
    m->ld = is_y ? 1 : k;
    m->size = k;
    m->nbatch = 0;
    return;
  }
  int64_t r0 = t->shape[t->rank - 2], r1 = t->shape[t->rank - 1];
  m->rows = trans ? r1 : r0;
  m->cols = trans ? r0 : r1;
  m->trans = trans;
  m->ld = r1;
  m->size = r0 * r1;
  m->nbatch = t->rank - 2;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

dy_status dy_kernel_matmul(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *tx = &in[0]->type, *ty = &in[1]->type, *to = &out[0]->type;
  if (tx->dtype != DY_F32 || ty->dtype != DY_F32 || to->dtype != DY_F32) {
    dy_dtype bad = tx->dtype != DY_F32 ? tx->dtype
                   : ty->dtype != DY_F32 ? ty->dtype : to->dtype;
    return dy_kunsupported_dtype(op, bad, err);
  }
  if (tx->rank < 1 || ty->rank < 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: operands must have rank >= 1 (got %d and %d)",
                       op_name(op), tx->rank, ty->rank);
  dy_matmul_attrs a = dy_matmul_attrs_get(op); /* fused_matmul too */
  bool trans_x = a.transpose_x != 0;
  bool trans_y = a.transpose_y != 0;
  mm_operand x, y;
  mm_operand_of(tx, trans_x, false, &x);
  mm_operand_of(ty, trans_y, true, &y);
  int64_t M = x.rows, K = x.cols, N = y.cols;
  if (y.rows != K) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: inner dims %lld vs %lld (%s @ %s, transpose %d/%d)",
                       op_name(op), (long long)K, (long long)y.rows,
                       dy_type_str(tx, a, sizeof a), dy_type_str(ty, b, sizeof b),
                       trans_x, trans_y);
  }

  /* Broadcast the batch dims (right-aligned), walking from the innermost
   * so each operand's batch stride (in elements, 0 where broadcast) is its
   * matrix size times the batch dims after it. */
  int nb = x.nbatch > y.nbatch ? x.nbatch : y.nbatch;
  int64_t bshape[DY_MAX_DIMS], bsx[DY_MAX_DIMS], bsy[DY_MAX_DIMS];
  int64_t px = x.size, py = y.size;
  for (int i = nb - 1; i >= 0; i--) {
    int ix = i - (nb - x.nbatch), iy = i - (nb - y.nbatch);
    int64_t dx = ix >= 0 ? tx->shape[ix] : 1;
    int64_t dyy = iy >= 0 ? ty->shape[iy] : 1;
    if (dx != dyy && dx != 1 && dyy != 1) {
      char a[128], b[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "%s: batch dims do not broadcast (%s @ %s)",
                         op_name(op), dy_type_str(tx, a, sizeof a),
                         dy_type_str(ty, b, sizeof b));
    }
    bshape[i] = dx == 1 ? dyy : dx;
    bsx[i] = dx == 1 ? 0 : px;
    bsy[i] = dyy == 1 ? 0 : py;
    px *= dx;
    py *= dyy;
  }

  /* expected output: batch..., M unless x is 1-D, N unless y is 1-D */
  dy_type want = {.dtype = DY_F32, .rank = nb};
  for (int i = 0; i < nb; i++)
    want.shape[i] = bshape[i];
  if (tx->rank > 1)
    want.shape[want.rank++] = M;
  if (ty->rank > 1)
    want.shape[want.rank++] = N;
  if (!dy_type_equal(&want, to))
    return dy_kshape_error(op, "output", to, &want, err);

  float *o = out[0]->data;
  const float *xd = in[0]->data, *yd = in[1]->data;
  if (dy_type_numel(to) > 0 && ((void *)o == xd || (void *)o == yd))
    return dy_error_at(err, op, DY_STATUS_INTERNAL,
                       "%s: output aliases an input", op_name(op));
  int64_t nbatch = 1;
  for (int i = 0; i < nb; i++)
    nbatch *= bshape[i];
  if (dy_type_numel(to) == 0)
    return DY_OK;
  if (K == 0) { /* empty sum: zeros (and sgemm rejects lda = 0) */
    memset(o, 0, sizeof(float) * (size_t)dy_type_numel(to));
    return DY_OK;
  }

  /* y without batch dims and x not transposed: the batch folds into M,
   * one sgemm for everything ([B*M, K] @ [K, N]). */
  if (y.nbatch == 0 && !x.trans && nbatch > 1) {
    M *= nbatch;
    nbatch = 1;
    nb = 0;
  }
  if (!fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(x.ld) ||
      !fits_int(y.ld))
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "%s: matrix dims exceed the BLAS int range", op_name(op));
  int lda = x.ld > 0 ? (int)x.ld : 1, ldb = y.ld > 0 ? (int)y.ld : 1;

  int64_t idx[DY_MAX_DIMS] = {0};
  int64_t ox = 0, oy = 0;
  for (int64_t b = 0; b < nbatch; b++) {
    cblas_sgemm(CblasRowMajor, x.trans ? CblasTrans : CblasNoTrans,
                y.trans ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                1.0f, xd + ox, lda, yd + oy, ldb, 0.0f, o + b * M * N,
                N > 0 ? (int)N : 1);
    for (int d = nb - 1; d >= 0; d--) {
      ox += bsx[d];
      oy += bsy[d];
      if (++idx[d] < bshape[d])
        break;
      ox -= bsx[d] * bshape[d];
      oy -= bsy[d] * bshape[d];
      idx[d] = 0;
    }
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* softmax                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_softmax(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kunary_check(op, in, n_in, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *t = &in[0]->type;
  int64_t axis = dy_softmax_attrs_get(op).axis;
  int rank = t->rank > 0 ? t->rank : 1; /* a scalar is a 1-element vector */
  if (axis < -rank || axis >= rank)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: axis %lld out of range for rank %d", op_name(op),
                       (long long)axis, t->rank);
  if (axis < 0)
    axis += rank;

  /* [outer, n, inner] around the axis */
  int64_t outer = 1, n = t->rank > 0 ? t->shape[axis] : 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= t->shape[i];
  for (int i = (int)axis + 1; i < t->rank; i++)
    inner *= t->shape[i];

  const float *x = in[0]->data;
  float *y = out[0]->data;
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t j = 0; j < inner; j++) {
      const float *xr = x + o * n * inner + j;
      float *yr = y + o * n * inner + j;
      float mx = -INFINITY;
      for (int64_t i = 0; i < n; i++)
        if (xr[i * inner] > mx)
          mx = xr[i * inner];
      float sum = 0.0f;
      for (int64_t i = 0; i < n; i++) {
        float e = expf(xr[i * inner] - mx);
        yr[i * inner] = e;
        sum += e;
      }
      float inv = 1.0f / sum;
      for (int64_t i = 0; i < n; i++)
        yr[i * inner] *= inv;
    }
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reshape, flatten: copy                                              */
/* ------------------------------------------------------------------ */

static dy_status copy_same_numel(const dy_op *op, dy_tensor *const *in,
                                 int n_in, dy_tensor *const *out,
                                 dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *ti = &in[0]->type, *to = &out[0]->type;
  if (ti->dtype != to->dtype)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "%s: input is %s, output %s", op_name(op),
                       dy_dtype_name(ti->dtype), dy_dtype_name(to->dtype));
  if (dy_type_numel(ti) != dy_type_numel(to)) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: %s and %s differ in element count", op_name(op),
                       dy_type_str(ti, a, sizeof a), dy_type_str(to, b, sizeof b));
  }
  size_t nbytes = (size_t)dy_type_numel(ti) * dy_dtype_size(ti->dtype);
  if (nbytes && out[0]->data != in[0]->data)
    memmove(out[0]->data, in[0]->data, nbytes);
  return DY_OK;
}

dy_status dy_kernel_reshape(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  return copy_same_numel(op, in, n_in, out, err);
}

dy_status dy_kernel_flatten(const dy_op *op, dy_tensor *const *in, int n_in,
                            dy_tensor *const *out, dy_error *err) {
  return copy_same_numel(op, in, n_in, out, err);
}

/* ------------------------------------------------------------------ */
/* transpose                                                           */
/* ------------------------------------------------------------------ */

/* o[i] = s[i * ss] for i < n, for elements of one size. */
#define DEFINE_GATHER_LOOP(fname, T)                                    \
  static void fname(const void *ps, int64_t ss, void *po, int64_t n) { \
    const T *src = ps;                                                 \
    T *o = po;                                                         \
    if (ss == 1)                                                       \
      memcpy(o, src, sizeof(T) * (size_t)n);                           \
    else                                                               \
      for (int64_t i = 0; i < n; i++)                                  \
        o[i] = src[i * ss];                                            \
  }
DEFINE_GATHER_LOOP(gather_1, uint8_t)
DEFINE_GATHER_LOOP(gather_4, uint32_t)
DEFINE_GATHER_LOOP(gather_8, uint64_t)

dy_status dy_kernel_transpose(const dy_op *op, dy_tensor *const *in, int n_in,
                              dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *ti = &in[0]->type, *to = &out[0]->type;
  dy_transpose_attrs a;
  if ((s = dy_transpose_attrs_of(op, &a, err)) != DY_OK)
    return s;
  const int64_t *perm = a.perm;
  int np = a.n_perm;
  if (np != ti->rank)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: perm has %d entries for rank %d", op_name(op), np,
                       ti->rank);
  int p[DY_MAX_DIMS];
  bool seen[DY_MAX_DIMS] = {false};
  for (int i = 0; i < np; i++) {
    int64_t a = perm[i] < 0 ? perm[i] + np : perm[i];
    if (a < 0 || a >= np || seen[a])
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: perm is not a permutation of 0..%d (entry %d is %lld)",
                         op_name(op), np - 1, i, (long long)perm[i]);
    seen[a] = true;
    p[i] = (int)a;
  }
  dy_type want = {.dtype = ti->dtype, .rank = ti->rank};
  for (int i = 0; i < np; i++)
    want.shape[i] = ti->shape[p[i]];
  if (!dy_type_equal(&want, to))
    return dy_kshape_error(op, "output", to, &want, err);
  if (dy_type_numel(to) == 0)
    return DY_OK;

  /* Walk the output contiguously; the source stride of output dim i is the
   * input's stride of dim p[i]. Size-1 dims go, and runs contiguous in the
   * source merge, so an identity perm is one memcpy. */
  int64_t istr[DY_MAX_DIMS], shape[DY_MAX_DIMS], ss[DY_MAX_DIMS];
  dy_contiguous_strides(ti->rank, ti->shape, istr);
  int r = 0;
  for (int i = 0; i < np; i++) {
    int64_t n = want.shape[i], st = istr[p[i]];
    if (n == 1)
      continue;
    if (r > 0 && ss[r - 1] == st * n) {
      shape[r - 1] *= n;
      ss[r - 1] = st;
      continue;
    }
    shape[r] = n;
    ss[r] = st;
    r++;
  }
  if (r == 0) {
    shape[0] = 1;
    ss[0] = 1;
    r = 1;
  }

  size_t es = dy_dtype_size(ti->dtype);
  void (*gather)(const void *, int64_t, void *, int64_t) =
      es == 1 ? gather_1 : es == 4 ? gather_4 : es == 8 ? gather_8 : NULL;
  if (!gather)
    return dy_kunsupported_dtype(op, ti->dtype, err);
  const char *src = in[0]->data;
  char *dst = out[0]->data;
  if (src == dst)
    return dy_error_at(err, op, DY_STATUS_INTERNAL,
                       "%s: output aliases the input", op_name(op));
  int inner = r - 1;
  int64_t n = shape[inner], outer = 1, idx[DY_MAX_DIMS] = {0}, off = 0;
  for (int d = 0; d < inner; d++)
    outer *= shape[d];
  for (int64_t k = 0; k < outer; k++) {
    gather(src + (size_t)off * es, ss[inner], dst + (size_t)(k * n) * es, n);
    dy_odometer_next(inner, shape, ss, idx, &off);
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* full                                                                */
/* ------------------------------------------------------------------ */

dy_status dy_kernel_full(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 0, out, err);
  if (s != DY_OK)
    return s;
  dy_full_attrs a;
  if ((s = dy_full_attrs_of(op, &a, err)) != DY_OK)
    return s;
  double v = a.value;
  int64_t n = dy_tensor_numel(out[0]);
  switch (out[0]->type.dtype) {
  case DY_F32: {
    /* out-of-range doubles become +-inf (numpy's float32(1e39)) rather
     * than an undefined conversion */
    float f = isfinite(v) && fabs(v) > FLT_MAX ? (v > 0 ? INFINITY : -INFINITY)
                                               : (float)v;
    float *o = out[0]->data;
    for (int64_t i = 0; i < n; i++)
      o[i] = f;
    return DY_OK;
  }
  case DY_I64: {
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: value %g does not fit in i64", op_name(op), v);
    int64_t x = (int64_t)v;
    int64_t *o = out[0]->data;
    for (int64_t i = 0; i < n; i++)
      o[i] = x;
    return DY_OK;
  }
  case DY_BOOL:
    if (n > 0)
      memset(out[0]->data, v != 0.0 ? 1 : 0, (size_t)n);
    return DY_OK;
  default:
    return dy_kunsupported_dtype(op, out[0]->type.dtype, err);
  }
}
