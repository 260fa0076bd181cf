/* test_hostile.c - hostile input (issue 12): every case an attacker's
 * model, file or argument found becomes a test here. Each asserts the
 * exact one-line error (or the right answer) through the library call and,
 * where the CLI or a compiled executable is involved, through `dy2stc` and
 * the executable (it runs under ASan + UBSan in `make test`, which is how
 * "never a crash" is checked). Hostile ONNX models are written with
 * samples/onnx/onnx_build.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/hostile_%s", DY_BUILD_DIR, name);
}

/* Load path expecting failure with status and every fragment (up to two)
 * in one line of message. */
static void expect_load_error(const char *path, dy_status status, const char *frag1,
                              const char *frag2) {
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_onnx_load(path, &p, &err);
  if (s != status || (frag1 && !strstr(err.msg, frag1)) || (frag2 && !strstr(err.msg, frag2)))
    fprintf(stderr, "\n  %s: status %s, message: %s\n", path, dy_status_name(s), err.msg);
  CU_ASSERT_EQUAL(s, status);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  if (frag1)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag1));
  if (frag2)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag2));
  dy_program_free(p);
}

/* ---- the batch placeholder: no value a file holds is the batch ---- */

/* y = x[:, ::-1] written as ONNX writes it: Slice(starts=[-1],
 * ends=[INT64_MIN], axes=[1], steps=[-1]). When fold is set, the ends come
 * through a Concat of constants (a folded shape computation), else from an
 * initializer. */
static void write_reverse(const char *path, bool fold) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  ob_init_i64(m, "starts", 1, (int64_t[]){1}, (int64_t[]){-1});
  ob_init_i64(m, fold ? "ends0" : "ends", 1, (int64_t[]){1}, (int64_t[]){INT64_MIN});
  ob_init_i64(m, "axes", 1, (int64_t[]){1}, (int64_t[]){1});
  ob_init_i64(m, "steps", 1, (int64_t[]){1}, (int64_t[]){-1});
  if (fold) {
    Onnx__NodeProto *n = ob_node(m, "Concat", "cat", 1, (const char *[]){"ends0"}, 1,
                                 (const char *[]){"ends"});
    ob_attr_i(m, n, "axis", 0);
  }
  ob_node(m, "Slice", "reverse", 5, (const char *[]){"x", "starts", "ends", "axes", "steps"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_slice_int64_min_reverses(void) {
  for (int fold = 0; fold < 2; fold++) {
    char path[4096];
    tmp_path(path, sizeof path, fold ? "reverse_fold.onnx" : "reverse.onnx");
    write_reverse(path, fold);
    dy_program *p = NULL;
    dy_error err = {0};
    DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
    float xv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 4}, xv), *y = NULL;
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
    CU_ASSERT_EQUAL_FATAL(y->type.rank, 2);
    CU_ASSERT_EQUAL(y->type.shape[0], 2);
    CU_ASSERT_EQUAL_FATAL(y->type.shape[1], 4);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 4; j++)
        CU_ASSERT_EQUAL(dy_tensor_f32(y)[i * 4 + j], xv[i * 4 + 3 - j]);
    dy_tensor_free(x);
    dy_tensor_free(y);
    dy_program_free(p);
  }
}

/* The batch read from a Shape still slices "to the end" and reshapes (the
 * flag travels through Gather/Unsqueeze/Concat), and an INT64_MIN next to
 * it stays a number. */
static void test_batch_flag_travels(void) {
  char path[4096];
  tmp_path(path, sizeof path, "flag.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 6}, "N");
  ob_init_i64(m, "zero", 1, (int64_t[]){1}, (int64_t[]){0});
  ob_init_i64(m, "big", 1, (int64_t[]){1}, (int64_t[]){INT64_MIN});
  ob_init_i64(m, "minus_one", 1, (int64_t[]){1}, (int64_t[]){-1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  Onnx__NodeProto *n =
      ob_node(m, "Gather", "g", 2, (const char *[]){"s", "zero"}, 1, (const char *[]){"b"});
  ob_attr_i(m, n, "axis", 0);
  /* ends = [batch, INT64_MIN] on axes [0, 1] with steps [1, -1] */
  n = ob_node(m, "Concat", "cat", 2, (const char *[]){"b", "big"}, 1, (const char *[]){"ends"});
  ob_attr_i(m, n, "axis", 0);
  ob_init_i64(m, "starts", 1, (int64_t[]){2}, (int64_t[]){0, -1});
  ob_init_i64(m, "axes", 1, (int64_t[]){2}, (int64_t[]){0, 1});
  ob_init_i64(m, "steps", 1, (int64_t[]){2}, (int64_t[]){1, -1});
  ob_node(m, "Slice", "sl", 5, (const char *[]){"x", "starts", "ends", "axes", "steps"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  float xv[12];
  for (int i = 0; i < 12; i++)
    xv[i] = (float)i;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 6}, xv), *y = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
  CU_ASSERT_EQUAL(y->type.shape[0], 2);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[1], 6);
  CU_ASSERT_EQUAL(dy_tensor_f32(y)[0], 5);
  CU_ASSERT_EQUAL(dy_tensor_f32(y)[11], 6);
  dy_tensor_free(x);
  dy_tensor_free(y);
  dy_program_free(p);
}

/* ---- sizes that wrap around 2^63 ---- */

/* x f32[1, 8192] (32 KiB) -> op -> y, the op's size operand an initializer
 * named "s" (ints), with an optional extra int attribute. */
static void write_one_op(const char *path, const char *op, int n_s, const int64_t *s,
                         const char *attr, int64_t attr_v) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){1, 8192}, NULL);
  const char *in[2] = {"x", "s"};
  if (n_s)
    ob_init_i64(m, "s", 1, (int64_t[]){n_s}, s);
  Onnx__NodeProto *n = ob_node(m, op, "hostile", n_s ? 2 : 1, in, 1, (const char *[]){"y"});
  if (attr)
    ob_attr_i(m, n, attr, attr_v);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_wrapping_sizes(void) {
  char path[4096];
  tmp_path(path, sizeof path, "wrap.onnx");
  /* 2251799813685249 * 8192 = 2^64 + 8192: wrapped, it equals the input */
  write_one_op(path, "Reshape", 3, (int64_t[]){1, 2251799813685249, 8192}, NULL, 0);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Reshape)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Expand", 3, (int64_t[]){2251799813685249, 1, 8192}, NULL, 0);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Expand)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Tile", 2, (int64_t[]){2251799813685249, 1}, NULL, 0);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Tile)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Pad", 4, (int64_t[]){0, INT64_MAX - 4, 0, 8}, NULL, 0);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Pad)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Pad", 4, (int64_t[]){0, 1 << 30, 0, 1 << 30}, NULL, 0);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Pad)",
                    "larger than the maximum tensor size");
}

/* ---- attributes read from a file are range-checked ---- */

/* x f32[1, 16, 2, 2] -> op(attrs) -> y, and split-like ops with n_out
 * outputs. */
static void write_attr_op(const char *path, const char *op, const char *attr, int n_v,
                          const int64_t *v, int n_out) {
  ob_model *m = ob_new(11);
  ob_input(m, "x", OB_F32, 4, (int64_t[]){1, 16, 2, 2}, NULL);
  const char *outs[4] = {"y", "y1", "y2", "y3"};
  Onnx__NodeProto *n = ob_node(m, op, "hostile", 1, (const char *[]){"x"}, n_out, outs);
  if (n_v < 0)
    ob_attr_i(m, n, attr, v[0]);
  else
    ob_attr_ints(m, n, attr, n_v, v);
  for (int i = 0; i < n_out; i++)
    ob_output(m, outs[i], OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_attribute_ranges(void) {
  char path[4096];
  tmp_path(path, sizeof path, "attr.onnx");
  /* 2^32 squared wraps to 0: it divided by zero */
  write_attr_op(path, "DepthToSpace", "blocksize", -1, (int64_t[]){INT64_C(1) << 32}, 1);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (DepthToSpace)",
                    "attribute 'blocksize' is 4294967296, outside [1, 2147483647]");
  write_attr_op(path, "SpaceToDepth", "blocksize", -1, (int64_t[]){-2}, 1);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (SpaceToDepth)",
                    "attribute 'blocksize' is -2, outside [1, 2147483647]");
  /* a negative split entry (the others sum to the axis with it) */
  write_attr_op(path, "Split", "split", 2, (int64_t[]){20, -4}, 2);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Split)",
                    "attribute 'split''s entry is -4, outside [0, 2147483647]");
  write_attr_op(path, "MaxPool", "kernel_shape", 2, (int64_t[]){INT64_MAX, 1}, 1);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (MaxPool)",
                    "attribute 'kernel_shape''s entry is 9223372036854775807");
  write_attr_op(path, "LRN", "size", -1, (int64_t[]){INT64_C(1) << 40}, 1);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (LRN)",
                    "attribute 'size' is 1099511627776");
}

/* Split sizes from an input (opset 13) are checked too. */
static void test_split_input_negative(void) {
  char path[4096];
  tmp_path(path, sizeof path, "split13.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){1, 8}, NULL);
  ob_init_i64(m, "sp", 1, (int64_t[]){2}, (int64_t[]){12, -4});
  Onnx__NodeProto *n = ob_node(m, "Split", "hostile", 2, (const char *[]){"x", "sp"}, 2,
                               (const char *[]){"a", "b"});
  ob_attr_i(m, n, "axis", 1);
  ob_output(m, "a", OB_F32);
  ob_output(m, "b", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  expect_load_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Split)",
                    "split entry 0 is 12, outside [0, 8]");
}

/* LRN's size 2^31 - 1 used to unroll 2^31 slices (a hang); the window
 * only meets the 16 channels, so the model loads and computes
 * x / (bias + alpha/size * sum x^2)^beta. */
static void test_lrn_huge_size(void) {
  char path[4096];
  tmp_path(path, sizeof path, "lrn.onnx");
  write_attr_op(path, "LRN", "size", -1, (int64_t[]){INT32_MAX}, 1);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  float xv[64];
  for (int i = 0; i < 64; i++)
    xv[i] = (float)(i % 7) - 3.0f;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 4, (int64_t[]){1, 16, 2, 2}, xv), *y = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
  for (int i = 0; i < 64; i += 9) {
    int sp = i % 4;
    double sum = 0;
    for (int ch = 0; ch < 16; ch++) /* every channel is inside the window */
      sum += (double)xv[ch * 4 + sp] * xv[ch * 4 + sp];
    double want = xv[i] / pow(1.0 + 1e-4 / INT32_MAX * sum, 0.75);
    DY_ASSERT_NEAR(dy_tensor_f32(y)[i], want, 1e-5);
  }
  dy_tensor_free(x);
  dy_tensor_free(y);
  dy_program_free(p);
}

/* Loops nested in loops, each within its own trip limit (4096), would
 * unroll 4096 * 4096 adds: the importer's one budget stops it. A small
 * budget keeps the test short (the default, DY_ONNX_MAX_OPS, stops the
 * same file in about a minute: `dy2stc show build/tests/hostile_nested_loops.onnx`). */
static void test_unroll_budget(void) {
  char path[4096];
  tmp_path(path, sizeof path, "nested_loops.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){2}, NULL);
  ob_init_i64(m, "trips", 0, NULL, (int64_t[]){4096});
  ob_init_f32(m, "acc0", 1, (int64_t[]){2}, (float[]){0, 0});
  ob_init_i64(m, "yes", 0, NULL, (int64_t[]){1});
  Onnx__NodeProto *n = ob_node(m, "Cast", "cond", 1, (const char *[]){"yes"}, 1,
                               (const char *[]){"go"});
  ob_attr_i(m, n, "to", OB_BOOL);
  ob_graph *inner = ob_graph_new(m, "inner");
  ob_graph_input(m, inner, "j", OB_I64, 0, NULL);
  ob_graph_input(m, inner, "c2", OB_BOOL, 0, NULL);
  ob_graph_input(m, inner, "b", OB_F32, 1, (int64_t[]){2});
  ob_graph_node(m, inner, "Add", "add", 2, (const char *[]){"b", "x"}, 1, (const char *[]){"b2"});
  ob_graph_node(m, inner, "Identity", "c2out", 1, (const char *[]){"c2"}, 1,
                (const char *[]){"c3"});
  ob_graph_output(m, inner, "c3", OB_BOOL);
  ob_graph_output(m, inner, "b2", OB_F32);
  ob_graph *outer = ob_graph_new(m, "outer");
  ob_graph_input(m, outer, "i", OB_I64, 0, NULL);
  ob_graph_input(m, outer, "c1", OB_BOOL, 0, NULL);
  ob_graph_input(m, outer, "a", OB_F32, 1, (int64_t[]){2});
  n = ob_graph_node(m, outer, "Loop", "hostile", 3, (const char *[]){"trips", "go", "a"}, 1,
                    (const char *[]){"a2"});
  ob_attr_graph(m, n, "body", inner);
  ob_graph_node(m, outer, "Identity", "c1out", 1, (const char *[]){"c1"}, 1,
                (const char *[]){"c4"});
  ob_graph_output(m, outer, "c4", OB_BOOL);
  ob_graph_output(m, outer, "a2", OB_F32);
  n = ob_node(m, "Loop", "outer_loop", 3, (const char *[]){"trips", "go", "acc0"}, 1,
              (const char *[]){"y"});
  ob_attr_graph(m, n, "body", outer);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_onnx_options o = {.max_ops = 5000};
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_onnx_load_ex(path, &o, NULL, &p, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(Add): the model unrolls to more than 5000 ops"));
}

/* ---- a tensor's data must back its declared size ---- */

static void write_backing(const char *path, int rank, const int64_t *dims, size_t nbytes) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  float data[4] = {1, 2, 3, 4};
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "big", OB_F32, rank, dims, data, nbytes);
  ob_node(m, "Add", "add", 2, (const char *[]){"x", "big"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_tensor_backing(void) {
  char path[4096];
  tmp_path(path, sizeof path, "backing.onnx");
  /* 16 bytes claiming 8 GiB: an error before any allocation of that size */
  write_backing(path, 2, (int64_t[]){INT64_C(1) << 21, INT64_C(1) << 10}, 16);
  expect_load_error(path, DY_STATUS_FORMAT, "initializer 'big'",
                    "f32[2097152,1024] is negative or larger than the maximum tensor size");
  /* within the limit, the missing bytes are found before the allocation */
  write_backing(path, 2, (int64_t[]){INT64_C(1) << 18, INT64_C(1) << 10}, 16);
  expect_load_error(path, DY_STATUS_FORMAT, "initializer 'big'",
                    "raw_data has 16 bytes, float[262144,1024] needs 1073741824");
  /* dims whose product wraps */
  write_backing(path, 2, (int64_t[]){INT64_C(1) << 62, 4}, 16);
  expect_load_error(path, DY_STATUS_FORMAT, "initializer 'big'",
                    "f32[4611686018427387904,4] is negative or larger than the maximum");
  write_backing(path, 1, (int64_t[]){-4}, 16);
  expect_load_error(path, DY_STATUS_FORMAT, "initializer 'big'", "is negative");
}

void dy_test_register(void) {
  DY_SUITE("hostile");
  DY_TEST(test_slice_int64_min_reverses);
  DY_TEST(test_batch_flag_travels);
  DY_TEST(test_wrapping_sizes);
  DY_TEST(test_attribute_ranges);
  DY_TEST(test_split_input_negative);
  DY_TEST(test_lrn_huge_size);
  DY_TEST(test_unroll_budget);
  DY_TEST(test_tensor_backing);
}
