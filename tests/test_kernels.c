/* test_kernels.c - the reference kernels, the random generator and .npy.
 *
 * Each kernel is called directly through dy_kernel_table on a stack op,
 * with outputs allocated at the shape the op should produce, and checked
 * against values worked out by hand (the comments show the arithmetic).
 * The broadcast and batched-matmul iterators are also compared element by
 * element with naive index arithmetic over many shape pairs. Every error
 * path must return a status, never crash; the suite runs under ASan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime.h"
#include "dy_test.h"

#ifndef DY_BUILD_DIR
#define DY_BUILD_DIR "."
#endif

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static dy_tensor *f32_tensor(int rank, const int64_t *shape, const float *v) {
  return dy_tensor_from_data(DY_F32, rank, shape, v);
}

static dy_tensor *i64_tensor(int rank, const int64_t *shape,
                             const int64_t *v) {
  return dy_tensor_from_data(DY_I64, rank, shape, v);
}

/* Run one kernel on a stack op. */
static dy_status run_op(dy_op_kind kind, dy_attr *attrs, int n_attrs,
                        dy_tensor *const *in, int n_in, dy_tensor *out,
                        dy_error *err) {
  dy_op op = {.id = -1, .kind = kind, .attrs = attrs, .n_attrs = n_attrs};
  return dy_kernel_table[kind](&op, in, n_in, (dy_tensor *const[]){out}, err);
}

/* Run a binary op on two new tensors and return a new output of shape
 * (ro, so); frees the inputs. */
static dy_status run2(dy_op_kind kind, dy_tensor *a, dy_tensor *b,
                      dy_tensor *out, dy_error *err) {
  dy_status s = run_op(kind, NULL, 0, (dy_tensor *const[]){a, b}, 2, out, err);
  dy_tensor_free(a);
  dy_tensor_free(b);
  return s;
}

/* Compare n floats with expected values. */
static void check_f32(const dy_tensor *t, const float *want, int64_t n,
                      double tol, int line) {
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(t), n);
  const float *got = t->data;
  for (int64_t i = 0; i < n; i++) {
    if (!(fabs((double)got[i] - want[i]) <= tol)) {
      fprintf(stderr, "\n  test_kernels.c:%d: element %lld = %.9g, expected %.9g\n",
              line, (long long)i, got[i], want[i]);
      CU_FAIL("float value mismatch");
      return;
    }
  }
  CU_PASS("values match");
}
#define CHECK_F32(t, tol, ...)                                          \
  check_f32((t), (const float[]){__VA_ARGS__},                          \
            sizeof((const float[]){__VA_ARGS__}) / sizeof(float), (tol), \
            __LINE__)

static void check_i64(const dy_tensor *t, const int64_t *want, int64_t n,
                      int line) {
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(t), n);
  const int64_t *got = t->data;
  for (int64_t i = 0; i < n; i++) {
    if (got[i] != want[i]) {
      fprintf(stderr, "\n  test_kernels.c:%d: element %lld = %lld, expected %lld\n",
              line, (long long)i, (long long)got[i], (long long)want[i]);
      CU_FAIL("int value mismatch");
      return;
    }
  }
  CU_PASS("values match");
}
#define CHECK_I64(t, ...)                                                    \
  check_i64((t), (const int64_t[]){__VA_ARGS__},                             \
            sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t), __LINE__)

static void check_shape(const dy_tensor *t, int rank, const int64_t *shape) {
  CU_ASSERT_EQUAL_FATAL(t->type.rank, rank);
  for (int i = 0; i < rank; i++)
    CU_ASSERT_EQUAL(t->type.shape[i], shape[i]);
}

/* A deterministic fill: small distinct values, exact in float. */
static dy_tensor *iota_f32(int rank, const int64_t *shape, float start,
                           float step) {
  dy_tensor *t = dy_tensor_new(DY_F32, rank, shape);
  float *p = t->data;
  for (int64_t i = 0; i < dy_tensor_numel(t); i++)
    p[i] = start + step * (float)i;
  return t;
}

/* ------------------------------------------------------------------ */
/* Binary ops                                                          */
/* ------------------------------------------------------------------ */

static void test_add_row_broadcast(void) {
  dy_error err = {0};
  /* [2,3] + [3]: each row plus (10, 20, 30) */
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3));
  DY_ASSERT_OK(run2(DY_OP_ADD, f32_tensor(2, DY_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6}),
                    f32_tensor(1, DY_SHAPE(3), (float[]){10, 20, 30}), o, &err),
               &err);
  CHECK_F32(o, 0, 11, 22, 33, 14, 25, 36);
  /* [3] + [2,3]: the same from the other side */
  DY_ASSERT_OK(run2(DY_OP_ADD, f32_tensor(1, DY_SHAPE(3), (float[]){10, 20, 30}),
                    f32_tensor(2, DY_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6}), o, &err),
               &err);
  CHECK_F32(o, 0, 11, 22, 33, 14, 25, 36);
  /* [2,3] - [3] and [3] - [2,3] */
  DY_ASSERT_OK(run2(DY_OP_SUB, f32_tensor(2, DY_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6}),
                    f32_tensor(1, DY_SHAPE(3), (float[]){10, 20, 30}), o, &err),
               &err);
  CHECK_F32(o, 0, -9, -18, -27, -6, -15, -24);
  DY_ASSERT_OK(run2(DY_OP_SUB, f32_tensor(1, DY_SHAPE(3), (float[]){10, 20, 30}),
                    f32_tensor(2, DY_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6}), o, &err),
               &err);
  CHECK_F32(o, 0, 9, 18, 27, 6, 15, 24);
  dy_tensor_free(o);
}

static void test_add_outer_broadcast(void) {
  dy_error err = {0};
  /* [3,1] + [1,4]: out[i][j] = a[i] + b[j] */
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(3, 4));
  DY_ASSERT_OK(run2(DY_OP_ADD, f32_tensor(2, DY_SHAPE(3, 1), (float[]){1, 2, 3}),
                    f32_tensor(2, DY_SHAPE(1, 4), (float[]){10, 20, 30, 40}), o, &err),
               &err);
  CHECK_F32(o, 0, 11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43);
  /* [1,4] / [3,1]: out[i][j] = b[j] / a[i] */
  DY_ASSERT_OK(run2(DY_OP_DIV, f32_tensor(2, DY_SHAPE(1, 4), (float[]){10, 20, 30, 40}),
                    f32_tensor(2, DY_SHAPE(3, 1), (float[]){1, 2, 4}), o, &err),
               &err);
  CHECK_F32(o, 0, 10, 20, 30, 40, 5, 10, 15, 20, 2.5f, 5, 7.5f, 10);
  dy_tensor_free(o);
}

static void test_mul_3d_broadcast(void) {
  dy_error err = {0};
  /* [2,1,3] * [4,1] -> [2,4,3]: out[i][j][k] = a[i][k] * b[j],
   * a = (1 2 3 | 4 5 6), b = (1 2 3 4) */
  const float want[] = {1, 2,  3,  2,  4,  6,  3,  6,  9,  4,  8,  12,
                        4, 5,  6,  8,  10, 12, 12, 15, 18, 16, 20, 24};
  dy_tensor *o = dy_tensor_new(DY_F32, 3, DY_SHAPE(2, 4, 3));
  DY_ASSERT_OK(run2(DY_OP_MUL, f32_tensor(3, DY_SHAPE(2, 1, 3), (float[]){1, 2, 3, 4, 5, 6}),
                    f32_tensor(2, DY_SHAPE(4, 1), (float[]){1, 2, 3, 4}), o, &err),
               &err);
  check_f32(o, want, 24, 0, __LINE__);
  /* [4,1] * [2,1,3]: same values, broadcast from the other side */
  memset(o->data, 0, o->nbytes);
  DY_ASSERT_OK(run2(DY_OP_MUL, f32_tensor(2, DY_SHAPE(4, 1), (float[]){1, 2, 3, 4}),
                    f32_tensor(3, DY_SHAPE(2, 1, 3), (float[]){1, 2, 3, 4, 5, 6}), o, &err),
               &err);
  check_f32(o, want, 24, 0, __LINE__);
  /* [4,1] - [2,1,3]: out[i][j][k] = b[j] - a[i][k] */
  DY_ASSERT_OK(run2(DY_OP_SUB, f32_tensor(2, DY_SHAPE(4, 1), (float[]){1, 2, 3, 4}),
                    f32_tensor(3, DY_SHAPE(2, 1, 3), (float[]){1, 2, 3, 4, 5, 6}), o, &err),
               &err);
  CHECK_F32(o, 0, 0, -1, -2, 1, 0, -1, 2, 1, 0, 3, 2, 1,
            -3, -4, -5, -2, -3, -4, -1, -2, -3, 0, -1, -2);
  dy_tensor_free(o);
}

static void test_scalar_operand(void) {
  dy_error err = {0};
  /* rank-0 2 - [2,2] */
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  DY_ASSERT_OK(run2(DY_OP_SUB, f32_tensor(0, NULL, (float[]){2}),
                    f32_tensor(2, DY_SHAPE(2, 2), (float[]){1, 2, 3, 4}), o, &err),
               &err);
  CHECK_F32(o, 0, 1, 0, -1, -2);
  /* [2,2] / rank-0 2 */
  DY_ASSERT_OK(run2(DY_OP_DIV, f32_tensor(2, DY_SHAPE(2, 2), (float[]){1, 2, 3, 4}),
                    f32_tensor(0, NULL, (float[]){2}), o, &err),
               &err);
  CHECK_F32(o, 0, 0.5f, 1, 1.5f, 2);
  dy_tensor_free(o);
  /* rank 0 * rank 0 -> rank 0 */
  o = dy_tensor_new(DY_F32, 0, NULL);
  DY_ASSERT_OK(run2(DY_OP_MUL, f32_tensor(0, NULL, (float[]){3}),
                    f32_tensor(0, NULL, (float[]){-4}), o, &err),
               &err);
  CHECK_F32(o, 0, -12);
  dy_tensor_free(o);
  /* [1,1] + [3]: size-1 dims everywhere */
  o = dy_tensor_new(DY_F32, 2, DY_SHAPE(1, 3));
  DY_ASSERT_OK(run2(DY_OP_ADD, f32_tensor(2, DY_SHAPE(1, 1), (float[]){100}),
                    f32_tensor(1, DY_SHAPE(3), (float[]){1, 2, 3}), o, &err),
               &err);
  CHECK_F32(o, 0, 101, 102, 103);
  dy_tensor_free(o);
}

static void test_i64_binary(void) {
  dy_error err = {0};
  dy_tensor *o = dy_tensor_new(DY_I64, 2, DY_SHAPE(2, 3));
  DY_ASSERT_OK(run2(DY_OP_ADD, i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){1, 2, 3, 4, 5, 6}),
                    i64_tensor(1, DY_SHAPE(3), (int64_t[]){10, 20, 30}), o, &err),
               &err);
  CHECK_I64(o, 11, 22, 33, 14, 25, 36);
  DY_ASSERT_OK(run2(DY_OP_MUL, i64_tensor(2, DY_SHAPE(2, 1), (int64_t[]){-1, 3}),
                    i64_tensor(1, DY_SHAPE(3), (int64_t[]){10, 20, 30}), o, &err),
               &err);
  CHECK_I64(o, -10, -20, -30, 30, 60, 90);
  DY_ASSERT_OK(run2(DY_OP_SUB, i64_tensor(0, NULL, (int64_t[]){100}),
                    i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){1, 2, 3, 4, 5, 6}), o, &err),
               &err);
  CHECK_I64(o, 99, 98, 97, 96, 95, 94);
  /* division truncates toward zero: 7/2 = 3, -7/2 = -3, 7/-2 = -3 */
  DY_ASSERT_OK(run2(DY_OP_DIV, i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){7, -7, 7, -7, 6, INT64_MIN}),
                    i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){2, 2, -2, -2, 3, -1}), o, &err),
               &err);
  CHECK_I64(o, 3, -3, -3, 3, 2, INT64_MIN);
  /* overflow wraps instead of being undefined (UBSan would catch it) */
  DY_ASSERT_OK(run2(DY_OP_ADD, i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){INT64_MAX, 0, 0, 0, 0, 0}),
                    i64_tensor(0, NULL, (int64_t[]){1}), o, &err),
               &err);
  CHECK_I64(o, INT64_MIN, 1, 1, 1, 1, 1);
  /* a zero divisor is an error */
  CU_ASSERT_EQUAL(run2(DY_OP_DIV, i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){1, 2, 3, 4, 5, 6}),
                       i64_tensor(1, DY_SHAPE(3), (int64_t[]){1, 0, 1}), o, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "division by zero"));
  dy_tensor_free(o);
}

static void test_binary_errors(void) {
  dy_error err = {0};
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3));
  /* incompatible dims */
  CU_ASSERT_EQUAL(run2(DY_OP_ADD, dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3)),
                       dy_tensor_new(DY_F32, 1, DY_SHAPE(2)), o, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  /* output of the wrong shape */
  CU_ASSERT_EQUAL(run2(DY_OP_ADD, dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 1)),
                       dy_tensor_new(DY_F32, 1, DY_SHAPE(4)), o, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  /* mixed dtypes */
  CU_ASSERT_EQUAL(run2(DY_OP_ADD, dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3)),
                       dy_tensor_new(DY_I64, 2, DY_SHAPE(2, 3)), o, &err),
                  DY_STATUS_DTYPE_MISMATCH);
  dy_tensor_free(o);
  /* bool arithmetic is unsupported */
  o = dy_tensor_new(DY_BOOL, 1, DY_SHAPE(2));
  CU_ASSERT_EQUAL(run2(DY_OP_MUL, dy_tensor_new(DY_BOOL, 1, DY_SHAPE(2)),
                       dy_tensor_new(DY_BOOL, 1, DY_SHAPE(2)), o, &err),
                  DY_STATUS_UNSUPPORTED);
  /* a NULL input, a symbolic input, the wrong arity: errors, not crashes */
  CU_ASSERT_NOT_EQUAL(run_op(DY_OP_ADD, NULL, 0, (dy_tensor *const[]){o, NULL}, 2, o, &err),
                      DY_OK);
  CU_ASSERT_NOT_EQUAL(run_op(DY_OP_ADD, NULL, 0, (dy_tensor *const[]){o}, 1, o, &err), DY_OK);
  dy_tensor *sym = dy_tensor_symbolic(&(dy_type){.dtype = DY_BOOL, .rank = 1, .shape = {2}});
  CU_ASSERT_EQUAL(run_op(DY_OP_ADD, NULL, 0, (dy_tensor *const[]){o, sym}, 2, o, &err),
                  DY_STATUS_SYMBOLIC);
  dy_tensor_free(sym);
  dy_tensor_free(o);
}

/* The executor may run an op in place over a same-typed input; over a
 * broadcast input that would read overwritten values, so it is refused. */
static void test_binary_in_place(void) {
  dy_error err = {0};
  dy_tensor *a = f32_tensor(2, DY_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  dy_tensor *b = f32_tensor(1, DY_SHAPE(3), (float[]){10, 20, 30});
  DY_ASSERT_OK(run_op(DY_OP_MUL, NULL, 0, (dy_tensor *const[]){a, b}, 2, a, &err), &err);
  CHECK_F32(a, 0, 10, 40, 90, 40, 100, 180);
  dy_tensor row = {.type = {.dtype = DY_F32, .rank = 2, .shape = {1, 3}},
                   .data = a->data, .nbytes = a->nbytes, .refcount = 1};
  CU_ASSERT_EQUAL(run_op(DY_OP_ADD, NULL, 0, (dy_tensor *const[]){&row, a}, 2, a, &err),
                  DY_STATUS_INTERNAL);
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  dy_tensor sq = {.type = {.dtype = DY_F32, .rank = 2, .shape = {2, 2}},
                  .data = o->data, .nbytes = o->nbytes, .refcount = 1};
  dy_attr attrs[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
  CU_ASSERT_EQUAL(run_op(DY_OP_MATMUL, attrs, 2, (dy_tensor *const[]){&sq, &sq}, 2, o, &err),
                  DY_STATUS_INTERNAL);
  dy_tensor_free(o);
  dy_tensor_free(a);
  dy_tensor_free(b);
}

/* Every pair of shapes below, broadcast, compared with direct index math. */
static void test_broadcast_vs_naive(void) {
  static const struct {
    int ra, rb;
    int64_t a[4], b[4];
  } cases[] = {
      {2, 2, {5, 7}, {5, 7}},          {3, 1, {2, 3, 4}, {4}},
      {3, 2, {2, 3, 4}, {3, 1}},       {3, 3, {2, 1, 4}, {1, 3, 1}},
      {4, 4, {2, 1, 3, 1}, {1, 4, 1, 5}}, {4, 2, {2, 3, 4, 5}, {4, 5}},
      {4, 4, {2, 3, 4, 5}, {2, 1, 4, 1}}, {1, 4, {1}, {2, 3, 1, 2}},
      {3, 3, {1, 1, 6}, {4, 5, 1}},    {4, 3, {3, 1, 1, 2}, {1, 7, 2}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int ra = cases[c].ra, rb = cases[c].rb, r = ra > rb ? ra : rb;
    int64_t os[4];
    for (int i = 0; i < r; i++) {
      int ia = i - (r - ra), ib = i - (r - rb);
      int64_t da = ia >= 0 ? cases[c].a[ia] : 1, db = ib >= 0 ? cases[c].b[ib] : 1;
      os[i] = da == 1 ? db : da;
    }
    dy_tensor *a = iota_f32(ra, cases[c].a, 1, 1);
    dy_tensor *b = iota_f32(rb, cases[c].b, 1000, 1000);
    dy_tensor *o = dy_tensor_new(DY_F32, r, os);
    dy_error err = {0};
    DY_ASSERT_OK(run_op(DY_OP_ADD, NULL, 0, (dy_tensor *const[]){a, b}, 2, o, &err), &err);
    /* naive: unravel each output index, map into a and b */
    int bad = 0;
    for (int64_t flat = 0; flat < dy_tensor_numel(o); flat++) {
      int64_t idx[4], rem = flat;
      for (int i = r - 1; i >= 0; i--) {
        idx[i] = rem % os[i];
        rem /= os[i];
      }
      int64_t fa = 0, fb = 0;
      for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        if (ia >= 0)
          fa = fa * cases[c].a[ia] + (cases[c].a[ia] == 1 ? 0 : idx[i]);
        if (ib >= 0)
          fb = fb * cases[c].b[ib] + (cases[c].b[ib] == 1 ? 0 : idx[i]);
      }
      float want = dy_tensor_f32(a)[fa] + dy_tensor_f32(b)[fb];
      if (dy_tensor_f32(o)[flat] != want)
        bad++;
    }
    if (bad)
      fprintf(stderr, "\n  broadcast case %zu: %d wrong elements\n", c, bad);
    CU_ASSERT_EQUAL(bad, 0);
    dy_tensor_free(a);
    dy_tensor_free(b);
    dy_tensor_free(o);
  }
}

/* ------------------------------------------------------------------ */
/* Unary ops                                                           */
/* ------------------------------------------------------------------ */

static void test_relu(void) {
  dy_error err = {0};
  dy_tensor *x = f32_tensor(1, DY_SHAPE(5), (float[]){-2, -0.5f, 0, 0.5f, 3});
  dy_tensor *o = dy_tensor_new(DY_F32, 1, DY_SHAPE(5));
  DY_ASSERT_OK(run_op(DY_OP_RELU, NULL, 0, &x, 1, o, &err), &err);
  CHECK_F32(o, 0, 0, 0, 0, 0.5f, 3);
  dy_tensor_free(x);
  dy_tensor_free(o);
  /* i64 is unsupported */
  x = dy_tensor_new(DY_I64, 1, DY_SHAPE(2));
  o = dy_tensor_new(DY_I64, 1, DY_SHAPE(2));
  CU_ASSERT_EQUAL(run_op(DY_OP_RELU, NULL, 0, &x, 1, o, &err), DY_STATUS_UNSUPPORTED);
  dy_tensor_free(x);
  dy_tensor_free(o);
}

static void test_sigmoid(void) {
  dy_error err = {0};
  /* 1/(1+e^-x): 0 -> .5, 2 -> .880797078, -2 -> .119202922,
   * 100 -> 1, -100 -> e^-100 = 3.72e-44 (finite, ~0) */
  dy_tensor *x = f32_tensor(1, DY_SHAPE(6), (float[]){0, 2, -2, 100, -100, -1000});
  dy_tensor *o = dy_tensor_new(DY_F32, 1, DY_SHAPE(6));
  DY_ASSERT_OK(run_op(DY_OP_SIGMOID, NULL, 0, &x, 1, o, &err), &err);
  const float *y = o->data;
  DY_ASSERT_NEAR(y[0], 0.5, 1e-7);
  DY_ASSERT_NEAR(y[1], 0.880797078, 1e-6);
  DY_ASSERT_NEAR(y[2], 0.119202922, 1e-6);
  DY_ASSERT_NEAR(y[3], 1.0, 1e-7);
  CU_ASSERT(isfinite(y[4]) && y[4] >= 0.0f && y[4] < 1e-30f);
  CU_ASSERT(isfinite(y[5]) && y[5] == 0.0f);
  dy_tensor_free(x);
  dy_tensor_free(o);
}

static void test_tanh(void) {
  dy_error err = {0};
  dy_tensor *x = f32_tensor(2, DY_SHAPE(2, 2), (float[]){0, 1, -1, 20});
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  DY_ASSERT_OK(run_op(DY_OP_TANH, NULL, 0, &x, 1, o, &err), &err);
  CHECK_F32(o, 1e-6, 0, 0.761594156f, -0.761594156f, 1);
  dy_tensor_free(x);
  dy_tensor_free(o);
}

/* ------------------------------------------------------------------ */
/* matmul                                                              */
/* ------------------------------------------------------------------ */

/* x = [[1,2,3],[4,5,6]], y = [[7,8],[9,10],[11,12]]:
 * x @ y = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
 *       = [[58, 64], [139, 154]] */
static const float mm_x[] = {1, 2, 3, 4, 5, 6};
static const float mm_xt[] = {1, 4, 2, 5, 3, 6};     /* x stored as [3,2] */
static const float mm_y[] = {7, 8, 9, 10, 11, 12};
static const float mm_yt[] = {7, 9, 11, 8, 10, 12};  /* y stored as [2,3] */

static dy_status matmul(dy_tensor *x, dy_tensor *y, int tx, int ty,
                        dy_tensor *o, dy_error *err) {
  dy_attr attrs[] = {DY_ATTR_I("transpose_x", tx), DY_ATTR_I("transpose_y", ty)};
  dy_status s = run_op(DY_OP_MATMUL, attrs, 2, (dy_tensor *const[]){x, y}, 2, o, err);
  dy_tensor_free(x);
  dy_tensor_free(y);
  return s;
}

static void test_matmul_2d(void) {
  dy_error err = {0};
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(2, 3), mm_x), f32_tensor(2, DY_SHAPE(3, 2), mm_y),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154);
  memset(o->data, 0, o->nbytes);
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(3, 2), mm_xt), f32_tensor(2, DY_SHAPE(3, 2), mm_y),
                      1, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154);
  memset(o->data, 0, o->nbytes);
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(2, 3), mm_x), f32_tensor(2, DY_SHAPE(2, 3), mm_yt),
                      0, 1, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154);
  memset(o->data, 0, o->nbytes);
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(3, 2), mm_xt), f32_tensor(2, DY_SHAPE(2, 3), mm_yt),
                      1, 1, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154);
  dy_tensor_free(o);
  /* y @ x = [3,2] @ [2,3] -> [3,3]: row 0 = 7*(1,2,3) + 8*(4,5,6) */
  o = dy_tensor_new(DY_F32, 2, DY_SHAPE(3, 3));
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(3, 2), mm_y), f32_tensor(2, DY_SHAPE(2, 3), mm_x),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 39, 54, 69, 49, 68, 87, 59, 82, 105);
  dy_tensor_free(o);
}

static void test_matmul_batched(void) {
  dy_error err = {0};
  /* [2,2,3] @ [3,2]: batch 0 is x; batch 1 rows (-1,0,1) and (2,2,2):
   * (-1,0,1) @ y = (-7+11, -8+12) = (4, 4); (2,2,2) @ y = (54, 60) */
  float xb[12];
  memcpy(xb, mm_x, sizeof mm_x);
  memcpy(xb + 6, (float[]){-1, 0, 1, 2, 2, 2}, 6 * sizeof(float));
  dy_tensor *o = dy_tensor_new(DY_F32, 3, DY_SHAPE(2, 2, 2));
  DY_ASSERT_OK(matmul(f32_tensor(3, DY_SHAPE(2, 2, 3), xb), f32_tensor(2, DY_SHAPE(3, 2), mm_y),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154, 4, 4, 54, 60);
  /* the same with y transposed (no folding of the batch into M) */
  memset(o->data, 0, o->nbytes);
  DY_ASSERT_OK(matmul(f32_tensor(3, DY_SHAPE(2, 2, 3), xb), f32_tensor(2, DY_SHAPE(2, 3), mm_yt),
                      0, 1, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154, 4, 4, 54, 60);
  /* x transposed per batch ([2,3,2] storage) against a 2-D y */
  float xbt[12];
  memcpy(xbt, mm_xt, sizeof mm_xt);
  memcpy(xbt + 6, (float[]){-1, 2, 0, 2, 1, 2}, 6 * sizeof(float));
  memset(o->data, 0, o->nbytes);
  DY_ASSERT_OK(matmul(f32_tensor(3, DY_SHAPE(2, 3, 2), xbt), f32_tensor(2, DY_SHAPE(3, 2), mm_y),
                      1, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154, 4, 4, 54, 60);
  /* [2,3] @ [2,3,2] where y's batch 1 is 2*y: x broadcast over y's batch */
  float yb[12];
  for (int i = 0; i < 6; i++) {
    yb[i] = mm_y[i];
    yb[6 + i] = 2 * mm_y[i];
  }
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(2, 3), mm_x), f32_tensor(3, DY_SHAPE(2, 3, 2), yb),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 139, 154, 116, 128, 278, 308);
  dy_tensor_free(o);
}

/* Naive batched matmul for the broadcast case: out[b..][i][j]. */
static void naive_matmul_4d(const float *x, const int64_t *xs, const float *y,
                            const int64_t *ys, int tx, int ty, float *o,
                            const int64_t *os) {
  /* x: [A,1,*,*] (or [A,B,*,*]), y: [B,*,*]; out [A,B,M,N] */
  int64_t A = os[0], B = os[1], M = os[2], N = os[3];
  int64_t K = tx ? xs[2] : xs[3];
  for (int64_t a = 0; a < A; a++)
    for (int64_t b = 0; b < B; b++)
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double s = 0;
          for (int64_t k = 0; k < K; k++) {
            int64_t xb = (a * xs[1] + (xs[1] == 1 ? 0 : b)) * xs[2] * xs[3];
            int64_t yb = b * ys[1] * ys[2];
            float xv = tx ? x[xb + k * xs[3] + i] : x[xb + i * xs[3] + k];
            float yv = ty ? y[yb + j * ys[2] + k] : y[yb + k * ys[2] + j];
            s += (double)xv * yv;
          }
          o[((a * B + b) * M + i) * N + j] = (float)s;
        }
}

static void test_matmul_broadcast_4d(void) {
  for (int t = 0; t < 4; t++) {
    int tx = t & 1, ty = t >> 1;
    dy_error err = {0};
    /* [2,1,2,3] @ [3,3,2] -> [2,3,2,2] (transposed storage as flagged) */
    const int64_t *xs = tx ? DY_SHAPE(2, 1, 3, 2) : DY_SHAPE(2, 1, 2, 3);
    const int64_t *ys = ty ? DY_SHAPE(3, 2, 3) : DY_SHAPE(3, 3, 2);
    dy_tensor *x = iota_f32(4, xs, 1, 1), *y = iota_f32(3, ys, -4, 0.5f);
    dy_tensor *o = dy_tensor_new(DY_F32, 4, DY_SHAPE(2, 3, 2, 2));
    float want[24];
    naive_matmul_4d(x->data, xs, y->data, ys, tx, ty, want, DY_SHAPE(2, 3, 2, 2));
    DY_ASSERT_OK(matmul(x, y, tx, ty, o, &err), &err);
    check_f32(o, want, 24, 1e-4, __LINE__);
    if (t == 0) {
      /* by hand: out[0][0][0][0] = (1,2,3) . (-4,-3,-2) = -4-6-6 = -16 */
      DY_ASSERT_NEAR(dy_tensor_f32(o)[0], -16, 1e-5);
    }
    dy_tensor_free(o);
  }
}

static void test_matmul_1d(void) {
  dy_error err = {0};
  /* [3] @ [3,2] -> [2]: (1,2,3) @ y = (58, 64) */
  dy_tensor *o = dy_tensor_new(DY_F32, 1, DY_SHAPE(2));
  DY_ASSERT_OK(matmul(f32_tensor(1, DY_SHAPE(3), mm_x), f32_tensor(2, DY_SHAPE(3, 2), mm_y),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64);
  /* [2,3] @ [3] -> [2]: x @ (1,1,1) = (6, 15) */
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(2, 3), mm_x),
                      f32_tensor(1, DY_SHAPE(3), (float[]){1, 1, 1}), 0, 0, o, &err), &err);
  CHECK_F32(o, 0, 6, 15);
  /* transpose flags are ignored on a 1-D operand */
  DY_ASSERT_OK(matmul(f32_tensor(2, DY_SHAPE(3, 2), mm_xt),
                      f32_tensor(1, DY_SHAPE(3), (float[]){1, 1, 1}), 1, 1, o, &err), &err);
  CHECK_F32(o, 0, 6, 15);
  dy_tensor_free(o);
  /* [3] @ [3] -> scalar 1+4+9 = 14 */
  o = dy_tensor_new(DY_F32, 0, NULL);
  DY_ASSERT_OK(matmul(f32_tensor(1, DY_SHAPE(3), mm_x), f32_tensor(1, DY_SHAPE(3), mm_x),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 14);
  dy_tensor_free(o);
  /* [3] @ [2,3,2] -> [2,2]: (1,2,3) @ y, then @ 2y */
  float yb[12];
  for (int i = 0; i < 6; i++) {
    yb[i] = mm_y[i];
    yb[6 + i] = 2 * mm_y[i];
  }
  o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  DY_ASSERT_OK(matmul(f32_tensor(1, DY_SHAPE(3), mm_x), f32_tensor(3, DY_SHAPE(2, 3, 2), yb),
                      0, 0, o, &err), &err);
  CHECK_F32(o, 0, 58, 64, 116, 128);
  /* [2,2,3] @ [3] -> [2,2]: row sums of x, then of (-1,0,1 | 2,2,2) */
  float xb[12];
  memcpy(xb, mm_x, sizeof mm_x);
  memcpy(xb + 6, (float[]){-1, 0, 1, 2, 2, 2}, 6 * sizeof(float));
  DY_ASSERT_OK(matmul(f32_tensor(3, DY_SHAPE(2, 2, 3), xb),
                      f32_tensor(1, DY_SHAPE(3), (float[]){1, 1, 1}), 0, 0, o, &err), &err);
  CHECK_F32(o, 0, 6, 15, 0, 6);
  dy_tensor_free(o);
}

static void test_matmul_errors(void) {
  dy_error err = {0};
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  /* inner dims 3 vs 2 */
  CU_ASSERT_EQUAL(matmul(dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3)),
                         dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2)), 0, 0, o, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "inner dims"));
  /* wrong output shape */
  CU_ASSERT_EQUAL(matmul(dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3)),
                         dy_tensor_new(DY_F32, 2, DY_SHAPE(3, 4)), 0, 0, o, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  /* batch dims 2 vs 3 */
  dy_tensor *o3 = dy_tensor_new(DY_F32, 3, DY_SHAPE(2, 2, 2));
  CU_ASSERT_EQUAL(matmul(dy_tensor_new(DY_F32, 3, DY_SHAPE(2, 2, 3)),
                         dy_tensor_new(DY_F32, 3, DY_SHAPE(3, 3, 2)), 0, 0, o3, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  dy_tensor_free(o3);
  /* i64 is unsupported; rank 0 is invalid */
  CU_ASSERT_EQUAL(matmul(dy_tensor_new(DY_I64, 2, DY_SHAPE(2, 2)),
                         dy_tensor_new(DY_I64, 2, DY_SHAPE(2, 2)), 0, 0, o, &err),
                  DY_STATUS_UNSUPPORTED);
  CU_ASSERT_EQUAL(matmul(dy_tensor_new(DY_F32, 0, NULL),
                         dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2)), 0, 0, o, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  dy_tensor_free(o);
  /* K = 0: an empty sum is zero */
  o = iota_f32(2, DY_SHAPE(2, 2), 5, 1);
  DY_ASSERT_OK(matmul(dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 0)),
                      dy_tensor_new(DY_F32, 2, DY_SHAPE(0, 2)), 0, 0, o, &err), &err);
  CHECK_F32(o, 0, 0, 0, 0, 0);
  dy_tensor_free(o);
}

/* ------------------------------------------------------------------ */
/* softmax                                                             */
/* ------------------------------------------------------------------ */

static dy_status softmax(dy_tensor *x, int axis, dy_tensor *o, dy_error *err) {
  dy_attr attrs[] = {DY_ATTR_I("axis", axis)};
  dy_status s = run_op(DY_OP_SOFTMAX, attrs, 1, &x, 1, o, err);
  dy_tensor_free(x);
  return s;
}

static void test_softmax_values(void) {
  dy_error err = {0};
  /* softmax(1,2,3) = (e^-2, e^-1, 1) / (1 + e^-1 + e^-2)
   *                = (0.09003057, 0.24472847, 0.66524096) */
  dy_tensor *o = dy_tensor_new(DY_F32, 1, DY_SHAPE(3));
  DY_ASSERT_OK(softmax(f32_tensor(1, DY_SHAPE(3), (float[]){1, 2, 3}), -1, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.09003057f, 0.24472847f, 0.66524096f);
  DY_ASSERT_OK(softmax(f32_tensor(1, DY_SHAPE(3), (float[]){1, 2, 3}), 0, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.09003057f, 0.24472847f, 0.66524096f);
  /* large inputs: (1000, 1001, 1002) is the same as (1, 2, 3) */
  DY_ASSERT_OK(softmax(f32_tensor(1, DY_SHAPE(3), (float[]){1000, 1001, 1002}), 0, o, &err),
               &err);
  CHECK_F32(o, 1e-6, 0.09003057f, 0.24472847f, 0.66524096f);
  /* and hugely negative ones do not underflow to 0/0 */
  DY_ASSERT_OK(softmax(f32_tensor(1, DY_SHAPE(3), (float[]){-1000, -999, -998}), 0, o, &err),
               &err);
  CHECK_F32(o, 1e-6, 0.09003057f, 0.24472847f, 0.66524096f);
  dy_tensor_free(o);

  /* (1000, 1001): 1/(1+e), e/(1+e) = (0.26894142, 0.73105858) */
  o = dy_tensor_new(DY_F32, 1, DY_SHAPE(2));
  DY_ASSERT_OK(softmax(f32_tensor(1, DY_SHAPE(2), (float[]){1000, 1001}), -1, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.26894142f, 0.73105858f);
  dy_tensor_free(o);
}

static void test_softmax_axes(void) {
  dy_error err = {0};
  /* [2,3] = (1 2 3 | 3 2 1) */
  const float x[] = {1, 2, 3, 3, 2, 1};
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 3));
  /* axis -1 (rows) */
  DY_ASSERT_OK(softmax(f32_tensor(2, DY_SHAPE(2, 3), x), -1, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.09003057f, 0.24472847f, 0.66524096f, 0.66524096f, 0.24472847f,
            0.09003057f);
  /* axis 1 is the same */
  DY_ASSERT_OK(softmax(f32_tensor(2, DY_SHAPE(2, 3), x), 1, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.09003057f, 0.24472847f, 0.66524096f, 0.66524096f, 0.24472847f,
            0.09003057f);
  /* axis 0 (columns): (1,3) -> (0.11920292, 0.88079708); (2,2) -> (.5,.5) */
  DY_ASSERT_OK(softmax(f32_tensor(2, DY_SHAPE(2, 3), x), 0, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.11920292f, 0.5f, 0.88079708f, 0.88079708f, 0.5f, 0.11920292f);
  /* axis -2 is axis 0 */
  DY_ASSERT_OK(softmax(f32_tensor(2, DY_SHAPE(2, 3), x), -2, o, &err), &err);
  CHECK_F32(o, 1e-6, 0.11920292f, 0.5f, 0.88079708f, 0.88079708f, 0.5f, 0.11920292f);
  /* out of range */
  CU_ASSERT_EQUAL(softmax(f32_tensor(2, DY_SHAPE(2, 3), x), 2, o, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(softmax(f32_tensor(2, DY_SHAPE(2, 3), x), -3, o, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  dy_tensor_free(o);

  /* middle axis of [2,3,4]: every (i, :, k) column sums to 1 */
  o = dy_tensor_new(DY_F32, 3, DY_SHAPE(2, 3, 4));
  DY_ASSERT_OK(softmax(iota_f32(3, DY_SHAPE(2, 3, 4), -5, 0.7f), 1, o, &err), &err);
  const float *y = o->data;
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      double s = 0;
      for (int j = 0; j < 3; j++)
        s += y[(i * 3 + j) * 4 + k];
      DY_ASSERT_NEAR(s, 1.0, 1e-6);
    }
  /* along axis 1 the inputs step by 4*0.7 = 2.8; ratio of neighbours e^2.8 */
  DY_ASSERT_NEAR(y[4] / y[0], exp(2.8), 1e-3);
  dy_tensor_free(o);
}

/* ------------------------------------------------------------------ */
/* reshape, flatten, transpose, full                                   */
/* ------------------------------------------------------------------ */

static void test_reshape_flatten(void) {
  dy_error err = {0};
  dy_tensor *x = f32_tensor(2, DY_SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(3, 2));
  dy_attr rattr[] = {DY_ATTR_IS("shape", DY_SHAPE(3, 2), 2)};
  DY_ASSERT_OK(run_op(DY_OP_RESHAPE, rattr, 1, &x, 1, o, &err), &err);
  CHECK_F32(o, 0, 1, 2, 3, 4, 5, 6);
  CU_ASSERT_PTR_NOT_EQUAL(o->data, x->data);  /* a copy, not an alias */
  dy_tensor_free(o);
  o = dy_tensor_new(DY_F32, 1, DY_SHAPE(6));
  dy_attr fattr[] = {DY_ATTR_I("start_axis", 0), DY_ATTR_I("stop_axis", -1)};
  DY_ASSERT_OK(run_op(DY_OP_FLATTEN, fattr, 2, &x, 1, o, &err), &err);
  CHECK_F32(o, 0, 1, 2, 3, 4, 5, 6);
  dy_tensor_free(o);
  /* element counts must agree; dtypes too */
  o = dy_tensor_new(DY_F32, 1, DY_SHAPE(5));
  CU_ASSERT_EQUAL(run_op(DY_OP_RESHAPE, rattr, 1, &x, 1, o, &err), DY_STATUS_SHAPE_MISMATCH);
  dy_tensor_free(o);
  o = dy_tensor_new(DY_I64, 1, DY_SHAPE(6));
  CU_ASSERT_EQUAL(run_op(DY_OP_FLATTEN, fattr, 2, &x, 1, o, &err), DY_STATUS_DTYPE_MISMATCH);
  dy_tensor_free(o);
  dy_tensor_free(x);
}

static void test_transpose_3d(void) {
  dy_error err = {0};
  /* x[i][j][k] = 100i + 10j + k over [2,3,4]; perm (2,0,1) gives out of
   * shape [4,2,3] with out[k][i][j] = x[i][j][k] */
  dy_tensor *x = dy_tensor_new(DY_F32, 3, DY_SHAPE(2, 3, 4));
  float *xv = x->data;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++)
        xv[(i * 3 + j) * 4 + k] = (float)(100 * i + 10 * j + k);
  dy_tensor *o = dy_tensor_new(DY_F32, 3, DY_SHAPE(4, 2, 3));
  dy_attr attrs[] = {DY_ATTR_IS("perm", DY_SHAPE(2, 0, 1), 3)};
  DY_ASSERT_OK(run_op(DY_OP_TRANSPOSE, attrs, 1, &x, 1, o, &err), &err);
  const float *ov = o->data;
  int bad = 0;
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        bad += ov[(k * 2 + i) * 3 + j] != (float)(100 * i + 10 * j + k);
  CU_ASSERT_EQUAL(bad, 0);
  /* spot checks by hand: out[0] = x[0][0][0], out[1] = x[0][1][0] = 10,
   * out[3] = x[1][0][0] = 100, out[6] = out[1][0][0] = x[0][0][1] = 1 */
  CU_ASSERT_EQUAL(ov[0], 0);
  CU_ASSERT_EQUAL(ov[1], 10);
  CU_ASSERT_EQUAL(ov[3], 100);
  CU_ASSERT_EQUAL(ov[6], 1);
  CU_ASSERT_EQUAL(ov[23], 123);
  dy_tensor_free(o);

  /* negative axes count from the end: (-1, 0, 1) is (2, 0, 1) */
  o = dy_tensor_new(DY_F32, 3, DY_SHAPE(4, 2, 3));
  dy_attr neg[] = {DY_ATTR_IS("perm", DY_SHAPE(-1, 0, 1), 3)};
  DY_ASSERT_OK(run_op(DY_OP_TRANSPOSE, neg, 1, &x, 1, o, &err), &err);
  CU_ASSERT_EQUAL(dy_tensor_f32(o)[23], 123);
  /* not a permutation; wrong length; wrong output shape */
  dy_attr dup[] = {DY_ATTR_IS("perm", DY_SHAPE(2, 2, 1), 3)};
  CU_ASSERT_EQUAL(run_op(DY_OP_TRANSPOSE, dup, 1, &x, 1, o, &err), DY_STATUS_INVALID_ARGUMENT);
  dy_attr shortp[] = {DY_ATTR_IS("perm", DY_SHAPE(1, 0), 2)};
  CU_ASSERT_EQUAL(run_op(DY_OP_TRANSPOSE, shortp, 1, &x, 1, o, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  dy_attr ident[] = {DY_ATTR_IS("perm", DY_SHAPE(0, 1, 2), 3)};
  CU_ASSERT_EQUAL(run_op(DY_OP_TRANSPOSE, ident, 1, &x, 1, o, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  /* missing perm */
  CU_ASSERT_EQUAL(run_op(DY_OP_TRANSPOSE, NULL, 0, &x, 1, o, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  dy_tensor_free(o);
  dy_tensor_free(x);
}

static void test_transpose_dtypes(void) {
  dy_error err = {0};
  /* i64 [2,3] -> [3,2] */
  dy_tensor *x = i64_tensor(2, DY_SHAPE(2, 3), (int64_t[]){1, 2, 3, 4, 5, 6});
  dy_tensor *o = dy_tensor_new(DY_I64, 2, DY_SHAPE(3, 2));
  dy_attr attrs[] = {DY_ATTR_IS("perm", DY_SHAPE(1, 0), 2)};
  DY_ASSERT_OK(run_op(DY_OP_TRANSPOSE, attrs, 1, &x, 1, o, &err), &err);
  CHECK_I64(o, 1, 4, 2, 5, 3, 6);
  dy_tensor_free(x);
  dy_tensor_free(o);
  /* bool [2,2] */
  x = dy_tensor_from_data(DY_BOOL, 2, DY_SHAPE(2, 2), (uint8_t[]){1, 0, 1, 1});
  o = dy_tensor_new(DY_BOOL, 2, DY_SHAPE(2, 2));
  DY_ASSERT_OK(run_op(DY_OP_TRANSPOSE, attrs, 1, &x, 1, o, &err), &err);
  CU_ASSERT_EQUAL(memcmp(o->data, (uint8_t[]){1, 1, 0, 1}, 4), 0);
  dy_tensor_free(x);
  dy_tensor_free(o);
  /* a 4-D permutation with size-1 dims: [1,2,1,3] perm (3,1,0,2) */
  x = iota_f32(4, DY_SHAPE(1, 2, 1, 3), 0, 1);
  o = dy_tensor_new(DY_F32, 4, DY_SHAPE(3, 2, 1, 1));
  dy_attr p4[] = {DY_ATTR_IS("perm", DY_SHAPE(3, 1, 0, 2), 4)};
  DY_ASSERT_OK(run_op(DY_OP_TRANSPOSE, p4, 1, &x, 1, o, &err), &err);
  /* out[k][j] = x[j][k] with x = (0 1 2 | 3 4 5) */
  CHECK_F32(o, 0, 0, 3, 1, 4, 2, 5);
  dy_tensor_free(x);
  dy_tensor_free(o);
}

static void test_full(void) {
  dy_error err = {0};
  dy_attr attrs[] = {DY_ATTR_IS("shape", DY_SHAPE(2, 2), 2), DY_ATTR_F("value", 2.5),
                     DY_ATTR_I("dtype", DY_F32)};
  dy_tensor *o = dy_tensor_new(DY_F32, 2, DY_SHAPE(2, 2));
  DY_ASSERT_OK(run_op(DY_OP_FULL, attrs, 3, NULL, 0, o, &err), &err);
  CHECK_F32(o, 0, 2.5f, 2.5f, 2.5f, 2.5f);
  dy_tensor_free(o);
  /* i64: 7.0 -> 7 */
  attrs[1] = DY_ATTR_F("value", 7.0);
  o = dy_tensor_new(DY_I64, 1, DY_SHAPE(3));
  DY_ASSERT_OK(run_op(DY_OP_FULL, attrs, 3, NULL, 0, o, &err), &err);
  CHECK_I64(o, 7, 7, 7);
  /* NaN does not fit an i64 */
  attrs[1] = DY_ATTR_F("value", NAN);
  CU_ASSERT_EQUAL(run_op(DY_OP_FULL, attrs, 3, NULL, 0, o, &err), DY_STATUS_INVALID_ARGUMENT);
  dy_tensor_free(o);
  /* bool: nonzero is true */
  attrs[1] = DY_ATTR_F("value", 1.0);
  o = dy_tensor_new(DY_BOOL, 1, DY_SHAPE(2));
  DY_ASSERT_OK(run_op(DY_OP_FULL, attrs, 3, NULL, 0, o, &err), &err);
  CU_ASSERT_EQUAL(memcmp(o->data, (uint8_t[]){1, 1}, 2), 0);
  attrs[1] = DY_ATTR_F("value", 0.0);
  DY_ASSERT_OK(run_op(DY_OP_FULL, attrs, 3, NULL, 0, o, &err), &err);
  CU_ASSERT_EQUAL(memcmp(o->data, (uint8_t[]){0, 0}, 2), 0);
  dy_tensor_free(o);
  /* rank 0 f32 */
  attrs[1] = DY_ATTR_F("value", -1.0);
  o = dy_tensor_new(DY_F32, 0, NULL);
  DY_ASSERT_OK(run_op(DY_OP_FULL, attrs, 3, NULL, 0, o, &err), &err);
  CHECK_F32(o, 0, -1);
  /* missing value */
  CU_ASSERT_EQUAL(run_op(DY_OP_FULL, attrs, 1, NULL, 0, o, &err), DY_STATUS_INVALID_ARGUMENT);
  dy_tensor_free(o);
}

static void test_kernel_table(void) {
  for (int k = 0; k < DY_OP_COUNT; k++) {
    if (!dy_kernel_table[k])
      fprintf(stderr, "\n  no kernel for op %s\n", dy_op_name((dy_op_kind)k));
    CU_ASSERT_PTR_NOT_NULL(dy_kernel_table[k]);
  }
  CU_ASSERT_PTR_EQUAL(dy_kernel_table[DY_OP_MATMUL], dy_kernel_matmul);
}

/* ------------------------------------------------------------------ */
/* random                                                              */
/* ------------------------------------------------------------------ */

/* Must run before anything else on this thread draws: the unseeded
 * generator behaves as dy_seed(0). */
static void test_random_default_seed(void) {
  uint64_t a[4], b[4];
  for (int i = 0; i < 4; i++)
    a[i] = dy_rand_u64();
  dy_seed(0);
  for (int i = 0; i < 4; i++)
    b[i] = dy_rand_u64();
  CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
}

static void test_random_reproducible(void) {
  uint64_t a[8], b[8];
  dy_seed(42);
  for (int i = 0; i < 8; i++)
    a[i] = dy_rand_u64();
  dy_seed(42);
  for (int i = 0; i < 8; i++)
    b[i] = dy_rand_u64();
  CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
  CU_ASSERT_NOT_EQUAL(a[0], a[1]);
  dy_seed(43);
  CU_ASSERT_NOT_EQUAL(dy_rand_u64(), a[0]);
  /* dy_seed drops the cached second normal */
  dy_seed(7);
  float n1 = dy_rand_normal();
  float n2 = dy_rand_normal();
  dy_seed(7);
  CU_ASSERT_EQUAL(dy_rand_normal(), n1);  /* spare now cached */
  dy_seed(7);                             /* ... and dropped */
  CU_ASSERT_EQUAL(dy_rand_normal(), n1);
  CU_ASSERT_EQUAL(dy_rand_normal(), n2);
}

static void test_random_distributions(void) {
  dy_seed(1234);
  const int n = 200000;
  double sum = 0, sum2 = 0, mn = 1, mx = 0;
  for (int i = 0; i < n; i++) {
    float u = dy_rand_uniform();
    CU_ASSERT_FATAL(u >= 0.0f && u < 1.0f);
    /* 24 bits: u * 2^24 is an integer */
    CU_ASSERT_FATAL(u * 16777216.0f == floorf(u * 16777216.0f));
    sum += u;
    mn = u < mn ? u : mn;
    mx = u > mx ? u : mx;
  }
  DY_ASSERT_NEAR(sum / n, 0.5, 0.005);
  CU_ASSERT(mn < 0.001 && mx > 0.999);
  sum = 0;
  for (int i = 0; i < n; i++) {
    float z = dy_rand_normal();
    CU_ASSERT_FATAL(isfinite(z));
    sum += z;
    sum2 += (double)z * z;
  }
  double mean = sum / n, var = sum2 / n - mean * mean;
  DY_ASSERT_NEAR(mean, 0.0, 0.01);
  DY_ASSERT_NEAR(var, 1.0, 0.02);
}

static void test_random_tensors(void) {
  dy_seed(5);
  dy_tensor *a = dy_rand(2, DY_SHAPE(3, 4));
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  check_shape(a, 2, DY_SHAPE(3, 4));
  CU_ASSERT_EQUAL(a->type.dtype, DY_F32);
  for (int i = 0; i < 12; i++)
    CU_ASSERT(dy_tensor_f32(a)[i] >= 0.0f && dy_tensor_f32(a)[i] < 1.0f);
  dy_seed(5);
  dy_tensor *b = dy_rand(2, DY_SHAPE(3, 4));
  CU_ASSERT_EQUAL(memcmp(a->data, b->data, a->nbytes), 0);
  dy_tensor *c = dy_randn(1, DY_SHAPE(5));
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  check_shape(c, 1, DY_SHAPE(5));
  dy_seed(5);
  for (int i = 0; i < 12; i++)  /* skip what dy_rand drew: one u64 each */
    dy_rand_u64();
  CU_ASSERT_EQUAL(dy_rand_normal(), dy_tensor_f32(c)[0]);
  dy_tensor_free(a);
  dy_tensor_free(b);
  dy_tensor_free(c);
  /* a bad shape: NULL with the error recorded */
  dy_clear_error();
  CU_ASSERT_PTR_NULL(dy_randn(1, DY_SHAPE(-3)));
  CU_ASSERT_PTR_NOT_NULL(dy_last_error());
  dy_clear_error();
}

/* ------------------------------------------------------------------ */
/* .npy                                                                */
/* ------------------------------------------------------------------ */

#define TMP(name) DY_BUILD_DIR "/test_kernels_" name ".npy"

static void write_bytes(const char *path, const void *buf, size_t n) {
  FILE *f = fopen(path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  if (n)
    CU_ASSERT_EQUAL(fwrite(buf, 1, n, f), n);
  fclose(f);
}

static uint8_t *read_bytes(const char *path, size_t *n) {
  uint8_t *buf;
  dy_error err = {0};
  if (dy_read_file(path, &buf, n, &err) != DY_OK)
    return NULL;
  return buf;
}

/* Read path expecting failure with status want and a message that starts
 * with the path. */
static void expect_npy_error(const char *path, dy_status want, int line) {
  dy_error err = {0};
  dy_tensor sentinel;
  dy_tensor *t = &sentinel;  /* must be reset to NULL */
  dy_status s = dy_npy_read(path, &t, &err);
  if (s != want)
    fprintf(stderr, "\n  test_kernels.c:%d: status %s (%s), expected %s\n", line,
            dy_status_name(s), err.msg, dy_status_name(want));
  CU_ASSERT_EQUAL(s, want);
  CU_ASSERT_PTR_NULL(t);
  CU_ASSERT_EQUAL(strncmp(err.msg, path, strlen(path)), 0);
  if (s == DY_OK)
    dy_tensor_free(t);
}

/* The header block of a file we wrote: the dict text without padding. */
static void check_written_header(const char *path, const char *dict) {
  size_t n;
  uint8_t *b = read_bytes(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_FATAL(n >= 10);
  CU_ASSERT_EQUAL(memcmp(b, "\x93NUMPY\x01\x00", 8), 0);
  size_t hlen = (size_t)b[8] | (size_t)b[9] << 8;
  CU_ASSERT_FATAL(10 + hlen <= n);
  CU_ASSERT_EQUAL((10 + hlen) % 64, 0);
  CU_ASSERT_EQUAL(b[10 + hlen - 1], '\n');
  size_t dl = strlen(dict);
  CU_ASSERT_FATAL(dl < hlen);
  CU_ASSERT_EQUAL(memcmp(b + 10, dict, dl), 0);
  for (size_t i = 10 + dl; i < 10 + hlen - 1; i++)
    CU_ASSERT_EQUAL_FATAL(b[i], ' ');
  free(b);
}

static void test_npy_round_trip(void) {
  dy_error err = {0};
  const char *path = TMP("rt");
  /* f32 [2,3] */
  dy_tensor *t = f32_tensor(2, DY_SHAPE(2, 3), (float[]){1.5f, -2, 3e-8f, 4e30f, 0, -0.0f});
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  check_written_header(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  dy_tensor *r = NULL;
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_TRUE(dy_type_equal(&t->type, &r->type));
  CU_ASSERT_EQUAL(memcmp(t->data, r->data, t->nbytes), 0);
  dy_tensor_free(t);
  dy_tensor_free(r);
  /* i64 [4] */
  t = i64_tensor(1, DY_SHAPE(4), (int64_t[]){INT64_MIN, -1, 0, INT64_MAX});
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  check_written_header(path, "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }");
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_TRUE(dy_type_equal(&t->type, &r->type));
  CHECK_I64(r, INT64_MIN, -1, 0, INT64_MAX);
  dy_tensor_free(t);
  dy_tensor_free(r);
  /* bool [2,2] */
  t = dy_tensor_from_data(DY_BOOL, 2, DY_SHAPE(2, 2), (uint8_t[]){1, 0, 0, 1});
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  check_written_header(path, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }");
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_TRUE(dy_type_equal(&t->type, &r->type));
  CU_ASSERT_EQUAL(memcmp(r->data, (uint8_t[]){1, 0, 0, 1}, 4), 0);
  dy_tensor_free(t);
  dy_tensor_free(r);
  /* rank 0 and an empty [0,3] */
  t = f32_tensor(0, NULL, (float[]){42});
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  check_written_header(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_EQUAL(r->type.rank, 0);
  CHECK_F32(r, 0, 42);
  dy_tensor_free(t);
  dy_tensor_free(r);
  t = dy_tensor_new(DY_F32, 2, DY_SHAPE(0, 3));
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_TRUE(dy_type_equal(&t->type, &r->type));
  dy_tensor_free(t);
  dy_tensor_free(r);
  /* the largest header: rank 8 with big dims stays one 64-byte multiple */
  t = dy_tensor_new(DY_BOOL, 8, DY_SHAPE(1, 2, 1, 2, 1, 2, 1, 2));
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_TRUE(dy_type_equal(&t->type, &r->type));
  dy_tensor_free(t);
  dy_tensor_free(r);
  remove(path);
}

/* Build a .npy image by hand: version, header text (padded to 64 with
 * spaces and '\n' unless raw), data. Returns its length. */
static size_t make_npy(uint8_t *buf, int major, const char *dict, bool pad,
                       const void *data, size_t nd) {
  size_t pre = major == 1 ? 10 : 12, dl = strlen(dict), hl = dl;
  if (pad) {
    hl = dl + 1;
    hl += (64 - (pre + hl) % 64) % 64;
  }
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)major;
  buf[7] = 0;
  for (size_t i = 0; i < pre - 8; i++)
    buf[8 + i] = (uint8_t)(hl >> (8 * i));
  memcpy(buf + pre, dict, dl);
  if (pad) {
    memset(buf + pre + dl, ' ', hl - dl);
    buf[pre + hl - 1] = '\n';
  }
  memcpy(buf + pre + hl, data, nd);
  return pre + hl + nd;
}

static void test_npy_versions(void) {
  dy_error err = {0};
  const char *path = TMP("ver");
  uint8_t buf[512];
  dy_tensor *r = NULL;
  /* 2.0: 4-byte header length; keys reordered, no spaces, no trailing
   * comma */
  const int64_t iv[2] = {-5, 9};
  size_t n = make_npy(buf, 2, "{'shape':(2,),'descr':'<i8','fortran_order':False}", true, iv,
                      sizeof iv);
  write_bytes(path, buf, n);
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  check_shape(r, 1, DY_SHAPE(2));
  CU_ASSERT_EQUAL(r->type.dtype, DY_I64);
  CHECK_I64(r, -5, 9);
  dy_tensor_free(r);
  /* 3.0, double quotes, odd spacing, '<f8' converted to f32 */
  const double dv[3] = {0.5, -1e300, 3.25};
  n = make_npy(buf, 3, "{ \"fortran_order\" : False , \"descr\":\"<f8\",\n \"shape\" : ( 3 , ) , }",
               true, dv, sizeof dv);
  write_bytes(path, buf, n);
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_EQUAL(r->type.dtype, DY_F32);
  CU_ASSERT_EQUAL(dy_tensor_f32(r)[0], 0.5f);
  CU_ASSERT(isinf(dy_tensor_f32(r)[1]) && dy_tensor_f32(r)[1] < 0);
  CU_ASSERT_EQUAL(dy_tensor_f32(r)[2], 3.25f);
  dy_tensor_free(r);
  /* 1.0 '<i4' is i32, unpadded header, Python 2 long dims "2L" */
  const int32_t i4[4] = {1, -2, 2147483647, -2147483647 - 1};
  n = make_npy(buf, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 2L), }", false,
               i4, sizeof i4);
  write_bytes(path, buf, n);
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_EQUAL(r->type.dtype, DY_I32);
  check_shape(r, 2, DY_SHAPE(2, 2));
  CU_ASSERT(r->type.dtype == DY_I32 && memcmp(r->data, i4, sizeof i4) == 0);
  dy_tensor_free(r);
  /* bool bytes other than 0/1 read as true */
  n = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", true,
               (uint8_t[]){0, 1, 7}, 3);
  write_bytes(path, buf, n);
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CU_ASSERT_EQUAL(memcmp(r->data, (uint8_t[]){0, 1, 1}, 3), 0);
  dy_tensor_free(r);
  remove(path);
}

static void test_npy_bad_headers(void) {
  const char *path = TMP("bad");
  uint8_t buf[512];
  const float fv[6] = {0};
  static const struct {
    const char *dict;
    dy_status want;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", DY_STATUS_FORMAT},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", DY_STATUS_FORMAT},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6), }",
       DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,,), }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (6,), }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", DY_STATUS_FORMAT},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} junk", DY_STATUS_FORMAT},
      {"['descr', '<f4']", DY_STATUS_FORMAT},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (6,)}", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4,)}",
       DY_STATUS_FORMAT},
      {"", DY_STATUS_FORMAT},
      /* the data is 24 bytes: 7 elements is a length mismatch */
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", DY_STATUS_FORMAT},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", DY_STATUS_FORMAT},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t n = make_npy(buf, 1, cases[c].dict, true, fv, sizeof fv);
    write_bytes(path, buf, n);
    expect_npy_error(path, cases[c].want, (int)(1000 + c));
  }
  /* fortran_order names itself */
  size_t n = make_npy(buf, 1, cases[0].dict, true, fv, sizeof fv);
  write_bytes(path, buf, n);
  dy_error err = {0};
  dy_tensor *t = NULL;
  CU_ASSERT_EQUAL(dy_npy_read(path, &t, &err), DY_STATUS_FORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fortran_order"));
  /* an unknown version */
  buf[6] = 9;
  write_bytes(path, buf, n);
  expect_npy_error(path, DY_STATUS_VERSION, __LINE__);
  /* bad magic, garbage, empty */
  buf[6] = 1;
  buf[1] = 'X';
  write_bytes(path, buf, n);
  expect_npy_error(path, DY_STATUS_FORMAT, __LINE__);
  uint8_t junk[300];
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (uint8_t)(i * 151 + 7);
  write_bytes(path, junk, sizeof junk);
  expect_npy_error(path, DY_STATUS_FORMAT, __LINE__);
  write_bytes(path, junk, 0);
  expect_npy_error(path, DY_STATUS_FORMAT, __LINE__);
  /* header length past the end of the file (1.0 and 2.0) */
  memcpy(buf, "\x93NUMPY\x01\x00\xff\xff{}", 12);
  write_bytes(path, buf, 12);
  expect_npy_error(path, DY_STATUS_FORMAT, __LINE__);
  memcpy(buf, "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14);
  write_bytes(path, buf, 14);
  expect_npy_error(path, DY_STATUS_FORMAT, __LINE__);
  remove(path);
}

/* Every proper prefix of a valid file, and the file plus a byte, fail
 * cleanly with FORMAT. */
static void test_npy_truncated(void) {
  dy_error err = {0};
  const char *good = TMP("good"), *path = TMP("trunc");
  dy_tensor *t = iota_f32(2, DY_SHAPE(3, 5), 0, 1);
  DY_ASSERT_OK(dy_npy_write(good, t, &err), &err);
  dy_tensor_free(t);
  size_t n;
  uint8_t *b = read_bytes(good, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  for (size_t len = 0; len < n; len++) {
    write_bytes(path, b, len);
    expect_npy_error(path, DY_STATUS_FORMAT, (int)len);
  }
  uint8_t *longer = malloc(n + 1);
  memcpy(longer, b, n);
  longer[n] = 0;
  write_bytes(path, longer, n + 1);
  expect_npy_error(path, DY_STATUS_FORMAT, __LINE__);
  /* the same for a 2.0 framing */
  uint8_t v2[256];
  size_t n2 = make_npy(v2, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", true,
                       (float[]){1, 2}, 8);
  for (size_t len = 0; len < n2; len++) {
    write_bytes(path, v2, len);
    expect_npy_error(path, DY_STATUS_FORMAT, (int)len);
  }
  write_bytes(path, v2, n2);
  dy_tensor *r = NULL;
  DY_ASSERT_OK(dy_npy_read(path, &r, &err), &err);
  CHECK_F32(r, 0, 1, 2);
  dy_tensor_free(r);
  free(longer);
  free(b);
  remove(good);
  remove(path);
}

static void test_npy_io_errors(void) {
  expect_npy_error(DY_BUILD_DIR "/test_kernels_no_such_file.npy", DY_STATUS_IO, __LINE__);
  dy_error err = {0};
  dy_tensor *t = dy_tensor_new(DY_F32, 1, DY_SHAPE(2));
  const char *bad = DY_BUILD_DIR "/no_such_dir/x.npy";
  CU_ASSERT_EQUAL(dy_npy_write(bad, t, &err), DY_STATUS_IO);
  CU_ASSERT_EQUAL(strncmp(err.msg, bad, strlen(bad)), 0);
  /* a symbolic tensor has nothing to write */
  dy_tensor *s = dy_tensor_symbolic(&t->type);
  CU_ASSERT_EQUAL(dy_npy_write(TMP("sym"), s, &err), DY_STATUS_SYMBOLIC);
  FILE *f = fopen(TMP("sym"), "rb");
  CU_ASSERT_PTR_NULL(f);
  if (f)
    fclose(f);
  dy_tensor_free(s);
  dy_tensor_free(t);
}

/* ------------------------------------------------------------------ */

void dy_test_register(void) {
  {
    DY_SUITE("random");
    DY_TEST(test_random_default_seed);  /* first: nothing has drawn yet */
    DY_TEST(test_random_reproducible);
    DY_TEST(test_random_distributions);
    DY_TEST(test_random_tensors);
  }
  {
    DY_SUITE("kernels.binary");
    DY_TEST(test_add_row_broadcast);
    DY_TEST(test_add_outer_broadcast);
    DY_TEST(test_mul_3d_broadcast);
    DY_TEST(test_scalar_operand);
    DY_TEST(test_i64_binary);
    DY_TEST(test_binary_errors);
    DY_TEST(test_binary_in_place);
    DY_TEST(test_broadcast_vs_naive);
  }
  {
    DY_SUITE("kernels.unary");
    DY_TEST(test_relu);
    DY_TEST(test_sigmoid);
    DY_TEST(test_tanh);
  }
  {
    DY_SUITE("kernels.matmul");
    DY_TEST(test_matmul_2d);
    DY_TEST(test_matmul_batched);
    DY_TEST(test_matmul_broadcast_4d);
    DY_TEST(test_matmul_1d);
    DY_TEST(test_matmul_errors);
  }
  {
    DY_SUITE("kernels.softmax");
    DY_TEST(test_softmax_values);
    DY_TEST(test_softmax_axes);
  }
  {
    DY_SUITE("kernels.shape");
    DY_TEST(test_reshape_flatten);
    DY_TEST(test_transpose_3d);
    DY_TEST(test_transpose_dtypes);
    DY_TEST(test_full);
    DY_TEST(test_kernel_table);
  }
  {
    DY_SUITE("npy");
    DY_TEST(test_npy_round_trip);
    DY_TEST(test_npy_versions);
    DY_TEST(test_npy_bad_headers);
    DY_TEST(test_npy_truncated);
    DY_TEST(test_npy_io_errors);
  }
}
