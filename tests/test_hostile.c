/* test_hostile.c - hostile input (issue 12): every case an attacker's
 * model, file or argument found becomes a test here. Each asserts the
 * exact one-line error (or the right answer) through the library call and,
 * where the CLI or a compiled executable is involved, through `dy2stc` and
 * the executable (it runs under ASan + UBSan in `make test`, which is how
 * "never a crash" is checked). Hostile ONNX models are written with
 * samples/onnx/onnx_build.h. */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

/* compiled executables run under AddressSanitizer and UBSan: "never a
 * crash" includes them */
#define SAN_CFLAGS "--cflags '-fsanitize=address,undefined -fno-sanitize-recover=all'"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/hostile_%s", DY_BUILD_DIR, name);
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
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Reshape)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Expand", 3, (int64_t[]){2251799813685249, 1, 8192}, NULL, 0);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Expand)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Tile", 2, (int64_t[]){2251799813685249, 1}, NULL, 0);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Tile)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Pad", 4, (int64_t[]){0, INT64_MAX - 4, 0, 8}, NULL, 0);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Pad)",
                    "larger than the maximum tensor size");
  write_one_op(path, "Pad", 4, (int64_t[]){0, 1 << 30, 0, 1 << 30}, NULL, 0);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Pad)",
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
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (DepthToSpace)",
                    "attribute 'blocksize' is 4294967296, outside [1, 2147483647]");
  write_attr_op(path, "SpaceToDepth", "blocksize", -1, (int64_t[]){-2}, 1);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (SpaceToDepth)",
                    "attribute 'blocksize' is -2, outside [1, 2147483647]");
  /* a negative split entry (the others sum to the axis with it) */
  write_attr_op(path, "Split", "split", 2, (int64_t[]){20, -4}, 2);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Split)",
                    "attribute 'split''s entry is -4, outside [0, 2147483647]");
  write_attr_op(path, "MaxPool", "kernel_shape", 2, (int64_t[]){INT64_MAX, 1}, 1);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (MaxPool)",
                    "attribute 'kernel_shape''s entry is 9223372036854775807");
  write_attr_op(path, "LRN", "size", -1, (int64_t[]){INT64_C(1) << 40}, 1);
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (LRN)",
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
  dy_test_onnx_error(path, DY_STATUS_INVALID_ARGUMENT, "'hostile' (Split)",
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
  dy_test_onnx_error(path, DY_STATUS_FORMAT, "initializer 'big'",
                    "f32[2097152,1024] is negative or larger than the maximum tensor size");
  /* within the limit, the missing bytes are found before the allocation */
  write_backing(path, 2, (int64_t[]){INT64_C(1) << 18, INT64_C(1) << 10}, 16);
  dy_test_onnx_error(path, DY_STATUS_FORMAT, "initializer 'big'",
                    "raw_data has 16 bytes, float[262144,1024] needs 1073741824");
  /* dims whose product wraps */
  write_backing(path, 2, (int64_t[]){INT64_C(1) << 62, 4}, 16);
  dy_test_onnx_error(path, DY_STATUS_FORMAT, "initializer 'big'",
                    "f32[4611686018427387904,4] is negative or larger than the maximum");
  write_backing(path, 1, (int64_t[]){-4}, 16);
  dy_test_onnx_error(path, DY_STATUS_FORMAT, "initializer 'big'", "is negative");
}

/* ---- through the CLI and the compiled executable ---- */

/* dy_test_expect_cli with this suite's log file. */
static void expect_cli(int want, const char *frag, const char *cmd) {
  char log[4200];
  tmp_path(log, sizeof log, "cli.log");
  dy_test_expect_cli(log, want, frag, cmd);
}

static void write_npy_f32(const char *path, int rank, const int64_t *shape, const float *v) {
  dy_test_write_f32(path, rank, shape, v);
}

static void test_cli_wrapping_and_ranges(void) {
  char model[4096], x[4096], cmd[16384];
  tmp_path(model, sizeof model, "wrap.onnx");
  write_one_op(model, "Reshape", 3, (int64_t[]){1, 2251799813685249, 8192}, NULL, 0);
  tmp_path(x, sizeof x, "x8192.npy");
  float *v = calloc(8192, sizeof *v);
  write_npy_f32(x, 2, (int64_t[]){1, 8192}, v);
  free(v);
  snprintf(cmd, sizeof cmd, "%s run %s --input x=%s --output-dir %s/hostile_out", DY2STC_PATH,
           model, x, DY_BUILD_DIR);
  expect_cli(1, "(Reshape): reshape: target [1,2251799813685249,8192] is larger than the "
                "maximum tensor size", cmd);
  snprintf(cmd, sizeof cmd, "%s compile %s -o %s/hostile_wrap_exe", DY2STC_PATH, model,
           DY_BUILD_DIR);
  expect_cli(1, "larger than the maximum tensor size", cmd);
  /* command-line sizes */
  tmp_path(model, sizeof model, "reverse.onnx");
  write_reverse(model, false);
  snprintf(cmd, sizeof cmd, "%s compile %s --max-batch 4611686018427387904 -o %s/hostile_x",
           DY2STC_PATH, model, DY_BUILD_DIR);
  expect_cli(2, "--max-batch needs an integer from 1 to 2147483648, not '4611686018427387904'",
             cmd);
  snprintf(cmd, sizeof cmd, "%s compile %s --max-ram 4611686018427387904 -o %s/hostile_x",
           DY2STC_PATH, model, DY_BUILD_DIR);
  expect_cli(2, "--max-ram needs a byte count from 1 to 2^46", cmd);
  snprintf(cmd, sizeof cmd, "%s bench %s --runs 2305843009213693953", DY2STC_PATH, model);
  expect_cli(2, "--runs needs a count from 1 to 1000000", cmd);
}

/* The compiled executable: a batch over --max-batch and a huge --bench are
 * one-line errors; a batch within gives x[::-1]. */
static void test_exe_limits(void) {
  char model[4096], exe[4096], x[4096], cmd[16384], out[4096];
  tmp_path(model, sizeof model, "reverse.onnx");
  write_reverse(model, false);
  tmp_path(exe, sizeof exe, "reverse_exe");
  snprintf(cmd, sizeof cmd, "%s compile %s --max-batch 4 " SAN_CFLAGS " -o %s > /dev/null",
           DY2STC_PATH, model, exe);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  tmp_path(x, sizeof x, "x5.npy");
  float v[20];
  for (int i = 0; i < 20; i++)
    v[i] = (float)i;
  write_npy_f32(x, 2, (int64_t[]){5, 4}, v);
  tmp_path(out, sizeof out, "reverse_out");
  snprintf(cmd, sizeof cmd, "%s --input x=%s --output-dir %s", exe, x, out);
  expect_cli(1, "batch 5 exceeds the maximum batch 4", cmd);
  write_npy_f32(x, 2, (int64_t[]){2, 4}, v);
  snprintf(cmd, sizeof cmd, "%s --input x=%s --output-dir %s --bench 2305843009213693953", exe,
           x, out);
  expect_cli(2, "--bench expects a count from 1 to 1000000, got '2305843009213693953'", cmd);
  snprintf(cmd, sizeof cmd, "%s --input x=%s --output-dir %s", exe, x, out);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s > /dev/null", cmd), 0);
  char y[4200];
  snprintf(y, sizeof y, "%s/y.npy", out);
  dy_tensor *t = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_read(y, &t, &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(t), 8);
  for (int i = 0; i < 8; i++)
    CU_ASSERT_EQUAL(dy_tensor_f32(t)[i], v[(i / 4) * 4 + 3 - i % 4]);
  dy_tensor_free(t);
}

/* Outputs "probs:0" and "probs_0" map onto one file name: run, the
 * executable and check all write / read probs_0.npy and probs_0_1.npy. */
static void test_output_name_collision(void) {
  char model[4096], x[4096], cmd[16384], dir[4096];
  tmp_path(model, sizeof model, "collide.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 3}, "N");
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"probs:0"});
  ob_node(m, "Neg", "n", 1, (const char *[]){"x"}, 1, (const char *[]){"probs_0"});
  ob_output(m, "probs:0", OB_F32);
  ob_output(m, "probs_0", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, model), 0);
  ob_free(m);
  tmp_path(x, sizeof x, "x3.npy");
  float v[3] = {-1, 2, -3};
  write_npy_f32(x, 2, (int64_t[]){1, 3}, v);
  for (int way = 0; way < 2; way++) {
    tmp_path(dir, sizeof dir, way ? "collide_exe_out" : "collide_run_out");
    if (way == 0) {
      snprintf(cmd, sizeof cmd, "%s run %s --input x=%s --output-dir %s > /dev/null",
               DY2STC_PATH, model, x, dir);
    } else {
      snprintf(cmd, sizeof cmd, "%s compile %s " SAN_CFLAGS " -o %s/hostile_collide_exe "
               "> /dev/null && "
               "%s/hostile_collide_exe --input x=%s --output-dir %s", DY2STC_PATH, model,
               DY_BUILD_DIR, DY_BUILD_DIR, x, dir);
    }
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf %s && %s", dir, cmd), 0);
    for (int k = 0; k < 2; k++) {
      char path[4200];
      snprintf(path, sizeof path, "%s/%s.npy", dir, k ? "probs_0_1" : "probs_0");
      dy_tensor *t = NULL;
      dy_error err = {0};
      DY_ASSERT_OK(dy_npy_read(path, &t, &err), &err);
      for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(dy_tensor_f32(t)[i], k ? -v[i] : (v[i] > 0 ? v[i] : 0));
      dy_tensor_free(t);
    }
  }
  /* check reads the executable's files by the same names */
  snprintf(cmd, sizeof cmd, "%s check %s --input x=%s > /dev/null", DY2STC_PATH, model, x);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s", cmd), 0);
  /* an output path too long is an error, not a cut path: a directory of
   * 4080 bytes holds, its file names do not fit */
  char longdir[4200];
  int k = snprintf(longdir, sizeof longdir, "%s/hostile_long", DY_BUILD_DIR);
  while (k < 4080)
    k += snprintf(longdir + k, sizeof longdir - (size_t)k, "/%.*s", 4079 - k > 200 ? 200 : 4079 - k,
                  "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "mkdir -p %s", longdir), 0);
  char *lcmd = malloc(20000);
  snprintf(lcmd, 20000, "%s run %s --input x=%s --output-dir %s", DY2STC_PATH, model, x, longdir);
  expect_cli(1, "is too long", lcmd);
  free(lcmd);
  dy_test_sh(NULL, "rm -rf %s/hostile_long", DY_BUILD_DIR);
}

/* compare and check: NaN and +-inf equal only the same non-finite value. */
static void test_compare_nonfinite(void) {
  char a[4096], b[4096], cmd[9000];
  tmp_path(a, sizeof a, "cmp_a.npy");
  tmp_path(b, sizeof b, "cmp_b.npy");
  const float inf = INFINITY, nan = NAN;
  struct {
    float x, y;
    int want;
  } cases[] = {{inf, 5, 1}, {5, inf, 1}, {inf, -inf, 1}, {-inf, inf, 1}, {nan, 1, 1},
               {1, nan, 1}, {nan, inf, 1}, {inf, inf, 0}, {-inf, -inf, 0}, {nan, nan, 0},
               {1, 1, 0}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    float va[2] = {1, cases[k].x}, vb[2] = {1, cases[k].y};
    write_npy_f32(a, 1, (int64_t[]){2}, va);
    write_npy_f32(b, 1, (int64_t[]){2}, vb);
    snprintf(cmd, sizeof cmd, "%s compare %s %s --rtol 1e30 --atol 1e30 > /dev/null",
             DY2STC_PATH, a, b);
    int rc = dy_test_sh(NULL, "%s", cmd);
    if (rc != cases[k].want)
      fprintf(stderr, "\n  compare %g vs %g: exit %d, want %d\n", cases[k].x, cases[k].y, rc,
              cases[k].want);
    CU_ASSERT_EQUAL(rc, cases[k].want);
  }
}

/* compare reads every dtype by its width and sign (the dtype table): two
 * i32 tensors that differ only above the low byte differ, and i8 -1 is
 * -1, not 255 (it was read as one unsigned byte per element). */
static void test_compare_narrow_dtypes(void) {
  char a[4096], b[4096];
  tmp_path(a, sizeof a, "cmp_i32_a.npy");
  tmp_path(b, sizeof b, "cmp_i32_b.npy");
  dy_error err = {0};
  int32_t ia[2] = {1, 300}, ib[2] = {1, 44};   /* 300 and 44 share the low byte */
  dy_tensor *ta = dy_tensor_from_data(DY_I32, 1, (int64_t[]){2}, ia);
  dy_tensor *tb = dy_tensor_from_data(DY_I32, 1, (int64_t[]){2}, ib);
  DY_ASSERT_OK(dy_npy_write(a, ta, &err), &err);
  DY_ASSERT_OK(dy_npy_write(b, tb, &err), &err);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s compare %s %s > /dev/null", DY2STC_PATH, a, b), 1);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s compare %s %s > /dev/null", DY2STC_PATH, a, a), 0);
  dy_tensor_free(ta);
  dy_tensor_free(tb);
  /* i8: -1 against 1 is 2 apart; read as unsigned it was 254 */
  int8_t ca[1] = {-1}, cb[1] = {1};
  ta = dy_tensor_from_data(DY_I8, 1, (int64_t[]){1}, ca);
  tb = dy_tensor_from_data(DY_I8, 1, (int64_t[]){1}, cb);
  DY_ASSERT_OK(dy_npy_write(a, ta, &err), &err);
  DY_ASSERT_OK(dy_npy_write(b, tb, &err), &err);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s compare %s %s --atol 2.5 --rtol 0 > /dev/null", DY2STC_PATH, a, b), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s compare %s %s --atol 1.5 --rtol 0 > /dev/null", DY2STC_PATH, a, b), 1);
  dy_tensor_free(ta);
  dy_tensor_free(tb);
}

/* Temporaries are exclusive (a planted file or link is never written
 * through) and a link at the target is replaced, not followed. */
static void test_temp_files(void) {
  char target[4096], victim[4096], t1[4200], t2[4200];
  tmp_path(target, sizeof target, "target.bin");
  tmp_path(victim, sizeof victim, "victim.bin");
  dy_error err = {0};
  DY_ASSERT_OK(dy_write_file_atomic(victim, "precious", 8, &err), &err);
  unlink(target);
  CU_ASSERT_EQUAL_FATAL(symlink(victim, target), 0);
  int fd1, fd2;
  DY_ASSERT_OK(dy_temp_create(target, t1, sizeof t1, &fd1, &err), &err);
  DY_ASSERT_OK(dy_temp_create(target, t2, sizeof t2, &fd2, &err), &err);
  CU_ASSERT(strcmp(t1, t2) != 0);
  struct stat st;
  CU_ASSERT(fstat(fd1, &st) == 0 && (st.st_mode & 0777) == 0600);
  close(fd1);
  close(fd2);
  /* a link planted at a temporary's name: creating it again fails (EEXIST
   * is retried under another name by the writers) */
  unlink(t1);
  CU_ASSERT_EQUAL(symlink(victim, t1), 0);
  CU_ASSERT(open(t1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600) < 0);
  unlink(t1);
  unlink(t2);
  DY_ASSERT_OK(dy_write_file_atomic(target, "new", 3, &err), &err);
  char *v = dy_test_slurp(victim), *t = dy_test_slurp(target);
  CU_ASSERT(v && strcmp(v, "precious") == 0);
  CU_ASSERT(t && strcmp(t, "new") == 0);
  CU_ASSERT(lstat(target, &st) == 0 && S_ISREG(st.st_mode));
  free(v);
  free(t);
  /* too long for a temporary name: an error, not a cut path */
  char *longp = malloc(4100);
  memset(longp, 'a', 4099);
  longp[4099] = 0;
  CU_ASSERT_EQUAL(dy_write_file_atomic(longp, "x", 1, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too long"));
  free(longp);
}

/* --emit c that fails leaves both old files; a failed build leaves no
 * temporary directory, nor does SIGTERM in the middle of one. */
static void test_emit_pair_and_temp_dirs(void) {
  char model[4096], base[4096], cmd[16384], tmpd[4096];
  tmp_path(model, sizeof model, "reverse.onnx");
  write_reverse(model, false);
  tmp_path(base, sizeof base, "pair/net");
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf %s/hostile_pair && mkdir -p %s/hostile_pair "
                                   "&& echo old > %s.h && mkdir %s.c", DY_BUILD_DIR,
                                   DY_BUILD_DIR, base, base), 0);
  snprintf(cmd, sizeof cmd, "%s compile %s --emit c -o %s", DY2STC_PATH, model, base);
  expect_cli(1, "net.c: cannot write: it is a directory", cmd);
  char h[4200];
  snprintf(h, sizeof h, "%s.h", base);
  char *text = dy_test_slurp(h);
  CU_ASSERT(text && strcmp(text, "old\n") == 0);
  free(text);
  /* a compiler that fails, then one killed by SIGTERM: TMPDIR stays empty */
  tmp_path(tmpd, sizeof tmpd, "tmpdir");
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", tmpd, tmpd), 0);
  snprintf(cmd, sizeof cmd, "TMPDIR=%s CC=false %s compile %s -o %s/hostile_nope", tmpd,
           DY2STC_PATH, model, DY_BUILD_DIR);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s > /dev/null 2>&1", cmd), 1);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "test -z \"$(ls -A %s)\"", tmpd), 0);
  /* the slow compiler says where it is, then waits to be killed */
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "printf '#!/bin/sh\\ntouch %s.started\\n"
                                   "exec sleep 60\\n' > %s.cc && chmod +x %s.cc", tmpd, tmpd,
                                   tmpd), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL,
                             "rm -f %s.started; TMPDIR=%s CC=%s.cc setsid %s compile %s -o "
                             "%s/hostile_nope > /dev/null 2>&1 & pid=$!; "
                             "for i in $(seq 600); do [ -e %s.started ] && break; sleep 0.1; done; "
                             "[ -e %s.started ] && [ -n \"$(ls -A %s)\" ] || exit 3; "
                             "kill -TERM -$pid; wait $pid 2> /dev/null; test -z \"$(ls -A %s)\"",
                             tmpd, tmpd, tmpd, DY2STC_PATH, model, DY_BUILD_DIR, tmpd, tmpd,
                             tmpd, tmpd), 0);
}

/* Untrusted names in messages are escaped: one line, whatever they hold. */
static void test_escaped_names(void) {
  char model[4096], cmd[9000];
  tmp_path(model, sizeof model, "evil.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  ob_node(m, "TfIdfVectorizer", "evil\nname\x1b[31m", 1, (const char *[]){"x"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, model), 0);
  ob_free(m);
  dy_test_onnx_error(model, DY_STATUS_UNSUPPORTED,
                     "'evil\\x0aname\\x1b[31m' (TfIdfVectorizer)", NULL);
  snprintf(cmd, sizeof cmd, "%s show %s", DY2STC_PATH, model);
  expect_cli(1, "evil\\x0aname", cmd);
}

/* The same model compiled in two directories gives the same bytes. */
static void test_reproducible(void) {
  char cmd[16384];
  for (int k = 0; k < 2; k++) {
    char dir[4096], model[4200];
    tmp_path(dir, sizeof dir, k ? "repro/b/deeper" : "repro/a");
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", dir, dir), 0);
    snprintf(model, sizeof model, "%s/rev.onnx", dir);
    write_reverse(model, false);
    snprintf(cmd, sizeof cmd, "%s compile %s --emit c -o %s/net > /dev/null", DY2STC_PATH,
             model, dir);
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  }
  char a[4200], b[4200];
  for (int f = 0; f < 2; f++) {
    snprintf(a, sizeof a, "%s/hostile_repro/a/net.%s", DY_BUILD_DIR, f ? "h" : "c");
    snprintf(b, sizeof b, "%s/hostile_repro/b/deeper/net.%s", DY_BUILD_DIR, f ? "h" : "c");
    char *ta = dy_test_slurp(a), *tb = dy_test_slurp(b);
    CU_ASSERT_FATAL(ta && tb);
    CU_ASSERT_PTR_NOT_NULL(strstr(ta, "model:   rev.onnx"));
    CU_ASSERT_PTR_NULL(strstr(ta, DY_BUILD_DIR));
    CU_ASSERT_STRING_EQUAL(ta, tb);
    free(ta);
    free(tb);
  }
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
  DY_TEST(test_cli_wrapping_and_ranges);
  DY_TEST(test_exe_limits);
  DY_TEST(test_output_name_collision);
  DY_TEST(test_compare_nonfinite);
  DY_TEST(test_compare_narrow_dtypes);
  DY_TEST(test_temp_files);
  DY_TEST(test_emit_pair_and_temp_dirs);
  DY_TEST(test_escaped_names);
  DY_TEST(test_reproducible);
}
