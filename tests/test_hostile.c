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

void dy_test_register(void) {
  DY_SUITE("hostile");
  DY_TEST(test_slice_int64_min_reverses);
  DY_TEST(test_batch_flag_travels);
  DY_TEST(test_wrapping_sizes);
}
