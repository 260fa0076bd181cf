/* test_onnx.c - the ONNX frontend: hand-built models (written with
 * samples/onnx/onnx_build.h), the dynamic-batch shape subgraph, clean
 * errors, and the sample CNN through the executor and the CLI. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

#define SAMPLE DY_SOURCE_DIR "/samples/onnx"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/onnx_%s", DY_BUILD_DIR, name);
}

/* Load path expecting failure with status; the message must contain each
 * of the (up to two) fragments. */
static void expect_error(const char *path, dy_status status, const char *frag1,
                         const char *frag2) {
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_onnx_load(path, &p, &err);
  if (s != status || (frag1 && !strstr(err.msg, frag1)) || (frag2 && !strstr(err.msg, frag2)))
    fprintf(stderr, "\n  %s: status %s, message: %s\n", path, dy_status_name(s), err.msg);
  CU_ASSERT_EQUAL(s, status);
  CU_ASSERT_PTR_NULL(p);
  if (frag1)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag1));
  if (frag2)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag2));
  dy_program_free(p);
}

/* y = relu(x @ w + b), a Gemm-free MLP layer */
static void test_matmul_add_relu(void) {
  char path[4096];
  tmp_path(path, sizeof path, "mlp.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 3}, "batch");
  float w[6] = {1, -1, 2, 0, 0.5f, 1}, b[2] = {0.5f, -10};
  ob_init_f32(m, "w", 2, (int64_t[]){3, 2}, w);
  ob_init_f32(m, "b", 1, (int64_t[]){2}, b);
  ob_node(m, "MatMul", "mm", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"h"});
  ob_node(m, "Add", "add", 2, (const char *[]){"h", "b"}, 1, (const char *[]){"h2"});
  ob_node(m, "Relu", "relu", 1, (const char *[]){"h2"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL_FATAL(ob_save(m, path), 0);
  ob_free(m);

  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  CU_ASSERT_EQUAL(p->n_feeds, 1);
  CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[0]]->name, "x");
  CU_ASSERT_EQUAL(p->vars[p->feeds[0]]->type.shape[0], -1);
  CU_ASSERT_STRING_EQUAL(p->vars[p->fetches[0]]->name, "y");
  CU_ASSERT_EQUAL(dy_program_count_ops(p), 3);
  float xv[6] = {1, 2, 3, -1, 0, 1};
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 3}, xv), *y = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
  /* row 0: [1-2+6... ] x@w = [1*1+2*2+3*0.5, 1*-1+2*0+3*1] = [6.5, 2] */
  DY_ASSERT_NEAR(dy_tensor_f32(y)[0], 7.0, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(y)[1], 0.0, 1e-6);
  /* row 1: [-1+0+0.5, 1+0+1] + b = [0, -8] -> relu */
  DY_ASSERT_NEAR(dy_tensor_f32(y)[2], 0.0, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(y)[3], 0.0, 1e-6);
  dy_tensor_free(x);
  dy_tensor_free(y);
  dy_program_free(p);
}

/* x [N,4,3] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
 * with N a dim_param: the shape subgraph folds to reshape [0, 12]. */
static void write_view_model(const char *path, int64_t opset) {
  ob_model *m = ob_new(opset);
  ob_input(m, "input.1", OB_F32, 3, (int64_t[]){-1, 4, 3}, "N");
  ob_init_i64(m, "minus_one", 1, (int64_t[]){1}, (int64_t[]){-1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"input.1"}, 1, (const char *[]){"s"});
  Onnx__NodeProto *n = ob_node(m, "Constant", "c0", 0, NULL, 1, (const char *[]){"zero"});
  ob_attr_tensor_i64(m, n, "value", 0, NULL, (int64_t[]){0});
  n = ob_node(m, "Gather", "gather", 2, (const char *[]){"s", "zero"}, 1, (const char *[]){"n"});
  ob_attr_i(m, n, "axis", 0);
  n = ob_node(m, "Unsqueeze", "unsq", 1, (const char *[]){"n"}, 1, (const char *[]){"n1"});
  ob_attr_ints(m, n, "axes", 1, (int64_t[]){0});
  n = ob_node(m, "Concat", "cat", 2, (const char *[]){"n1", "minus_one"}, 1,
              (const char *[]){"shape2"});
  ob_attr_i(m, n, "axis", 0);
  ob_node(m, "Reshape", "view", 2, (const char *[]){"input.1", "shape2"}, 1,
          (const char *[]){"out:0"});
  ob_output(m, "out:0", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_shape_subgraph_dynamic_batch(void) {
  char path[4096];
  tmp_path(path, sizeof path, "view.onnx");
  write_view_model(path, 11); /* Unsqueeze's axes as an attribute (opset < 13) */
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  /* one op remains: reshape {shape = [0, -1]}: the batch copied */
  CU_ASSERT_EQUAL_FATAL(dy_program_count_ops(p), 1);
  const dy_op *op = p->blocks[0]->ops[0];
  CU_ASSERT_EQUAL(op->kind, DY_OP_RESHAPE);
  const int64_t *shape;
  int n;
  DY_ASSERT_OK(dy_op_attr_ints(op, "shape", &shape, &n, &err), &err);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_EQUAL(shape[0], 0);
  CU_ASSERT(shape[1] == 12 || shape[1] == -1);
  const dy_var *out = p->vars[p->fetches[0]];
  CU_ASSERT_STRING_EQUAL(out->name, "out:0");
  CU_ASSERT_EQUAL(out->type.shape[0], -1);
  CU_ASSERT_EQUAL(out->type.shape[1], 12);
  /* the same Program runs at two batch sizes */
  for (int64_t b = 2; b <= 5; b += 3) {
    dy_tensor *x = dy_tensor_new(DY_F32, 3, (int64_t[]){b, 4, 3}), *y = NULL;
    for (int64_t i = 0; i < b * 12; i++)
      dy_tensor_f32(x)[i] = (float)i;
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
    CU_ASSERT_EQUAL(y->type.shape[0], b);
    CU_ASSERT_EQUAL(y->type.shape[1], 12);
    DY_ASSERT_NEAR(dy_tensor_f32(y)[b * 12 - 1], (double)(b * 12 - 1), 0);
    dy_tensor_free(x);
    dy_tensor_free(y);
  }
  dy_program_free(p);
  /* opset 13: Unsqueeze takes axes as an input; here the attribute is then
   * unknown and rejected cleanly, naming the node */
  write_view_model(path, 13);
  expect_error(path, DY_STATUS_UNSUPPORTED, "'unsq' (Unsqueeze)", "axes");
}

/* The batch used as a value (Mul of the batch by 2) is a clear error. */
static void test_batch_arithmetic_is_an_error(void) {
  char path[4096];
  tmp_path(path, sizeof path, "batch2.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  ob_init_i64(m, "two", 1, (int64_t[]){1}, (int64_t[]){2});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Mul", "double_it", 2, (const char *[]){"s", "two"}, 1, (const char *[]){"s2"});
  ob_node(m, "Reshape", "r", 2, (const char *[]){"x", "s2"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  expect_error(path, DY_STATUS_UNSUPPORTED, "'double_it' (Mul)", "dynamic batch");
}

static void test_unsupported_op_names_node(void) {
  char path[4096];
  tmp_path(path, sizeof path, "unsupported.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  ob_node(m, "Relu", "ok", 1, (const char *[]){"x"}, 1, (const char *[]){"h"});
  ob_node(m, "Sin", "my_sine", 1, (const char *[]){"h"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  expect_error(path, DY_STATUS_UNSUPPORTED, "node 1 'my_sine' (Sin)", "not supported");
}

static void test_unsupported_dtype_and_dims(void) {
  char path[4096];
  tmp_path(path, sizeof path, "f64.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F64, 1, (int64_t[]){4}, NULL);
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  expect_error(path, DY_STATUS_UNSUPPORTED, "'x'", "double");

  /* two different symbolic dims: dy2stc has one dynamic dim */
  tmp_path(path, sizeof path, "twodims.onnx");
  m = ob_new(13);
  ob_input(m, "a", OB_F32, 2, (int64_t[]){-1, 4}, "batch");
  ob_input(m, "b", OB_F32, 2, (int64_t[]){-1, 4}, "seq");
  ob_node(m, "Add", "add", 2, (const char *[]){"a", "b"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  expect_error(path, DY_STATUS_UNSUPPORTED, "graph input 'b'", "'seq'");

  /* an opset beyond 18 */
  tmp_path(path, sizeof path, "opset19.onnx");
  m = ob_new(19);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  expect_error(path, DY_STATUS_UNSUPPORTED, "opset 19", NULL);
}

static void test_not_onnx_and_truncated(void) {
  char path[4096];
  tmp_path(path, sizeof path, "text.onnx");
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("this is not a model\n", f);
  fclose(f);
  expect_error(path, DY_STATUS_FORMAT, "not an ONNX model", NULL);

  /* the sample, cut in half */
  uint8_t *buf;
  size_t len;
  dy_error err = {0};
  DY_ASSERT_OK(dy_read_file(SAMPLE "/cnn.onnx", &buf, &len, &err), &err);
  tmp_path(path, sizeof path, "truncated.onnx");
  DY_ASSERT_OK(dy_write_file_atomic(path, buf, len / 2, &err), &err);
  free(buf);
  expect_error(path, DY_STATUS_FORMAT, "truncated", NULL);

  expect_error(DY_BUILD_DIR "/no_such_model.onnx", DY_STATUS_IO, NULL, NULL);
}

/* The sample CNN: executor and compiled C against the reference that
 * make_cnn computed with plain loops. */
static void test_sample_cnn(void) {
  dy_program *p = NULL;
  dy_error err = {0};
  dy_tensor *x = NULL, *want = NULL, *got = NULL;
  DY_ASSERT_OK(dy_model_load_any(SAMPLE "/cnn.onnx", &p, &err), &err);
  DY_ASSERT_OK(dy_npy_read(SAMPLE "/input.npy", &x, &err), &err);
  DY_ASSERT_OK(dy_npy_read(SAMPLE "/expected.npy", &want, &err), &err);
  CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[0]]->name, "input.1");
  CU_ASSERT_EQUAL(p->vars[p->feeds[0]]->type.shape[0], -1);
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &got, 1, &err), &err);
  CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &want->type));
  for (int64_t i = 0; i < dy_tensor_numel(want); i++)
    DY_ASSERT_NEAR(dy_tensor_f32(got)[i], dy_tensor_f32(want)[i], 1e-5);
  dy_tensor_free(got);
  dy_program_free(p);

  /* the CLI: compile, run the executable with --input input.1=..., compare */
  char cmd[30000], exe[4096], out[4096];
  tmp_path(exe, sizeof exe, "cnn_exe");
  tmp_path(out, sizeof out, "cnn_out");
  snprintf(cmd, sizeof cmd,
           "%s compile %s/cnn.onnx -o %s >/dev/null && %s --input input.1=%s/input.npy "
           "--output-dir %s >/dev/null && %s compare %s/probs.npy %s/expected.npy --rtol 1e-4 "
           "--atol 1e-5 >/dev/null && %s check %s/cnn.onnx --input input.1=%s/input.npy "
           ">/dev/null",
           DY2STC_PATH, SAMPLE, exe, exe, SAMPLE, out, DY2STC_PATH, out, SAMPLE, DY2STC_PATH,
           SAMPLE, SAMPLE);
  CU_ASSERT_EQUAL(system(cmd), 0);
  /* a clean one-line error from the CLI for an unsupported model */
  char bad[4096];
  tmp_path(bad, sizeof bad, "unsupported.onnx");
  (void)ob_attr_f;
  snprintf(cmd, sizeof cmd, "%s show %s 2>/dev/null", DY2STC_PATH, bad);
  CU_ASSERT_NOT_EQUAL(system(cmd), 0);
  dy_tensor_free(x);
  dy_tensor_free(want);
}

/* dy_model_load_any finds ONNX by content when the name says nothing. */
static void test_load_any_by_content(void) {
  uint8_t *buf;
  size_t len;
  dy_error err = {0};
  char path[4096];
  DY_ASSERT_OK(dy_read_file(SAMPLE "/cnn.onnx", &buf, &len, &err), &err);
  tmp_path(path, sizeof path, "cnn_model_bin");
  DY_ASSERT_OK(dy_write_file_atomic(path, buf, len, &err), &err);
  free(buf);
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_model_load_any(path, &p, &err), &err);
  CU_ASSERT_EQUAL(p->n_fetches, 1);
  dy_program_free(p);
}

/* A graph input used as Reshape's shape: a clean error naming it, and the
 * loader reports which input to bind; bound, it loads. */
static void test_bind_shape_input(void) {
  char path[4096];
  tmp_path(path, sizeof path, "reshape_input.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "data", OB_F32, 2, (int64_t[]){2, 6}, NULL);
  ob_input(m, "shape", OB_I64, 1, (int64_t[]){2}, NULL);
  ob_node(m, "Reshape", "r", 2, (const char *[]){"data", "shape"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  dy_onnx_info info;
  CU_ASSERT_EQUAL(dy_onnx_load_ex(path, NULL, &info, &p, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'shape'"));
  CU_ASSERT_EQUAL(info.needs_const_input, 1);
  dy_tensor *shape = dy_tensor_from_data(DY_I64, 1, (int64_t[]){2}, (int64_t[]){3, -1});
  const char *names[] = {"shape"};
  dy_onnx_options o = {1, names, &shape};
  DY_ASSERT_OK(dy_onnx_load_ex(path, &o, &info, &p, &err), &err);
  CU_ASSERT_EQUAL(p->n_feeds, 1);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[0], 3);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[1], 4);
  dy_tensor_free(shape);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("onnx");
  DY_TEST(test_matmul_add_relu);
  DY_TEST(test_shape_subgraph_dynamic_batch);
  DY_TEST(test_batch_arithmetic_is_an_error);
  DY_TEST(test_unsupported_op_names_node);
  DY_TEST(test_unsupported_dtype_and_dims);
  DY_TEST(test_not_onnx_and_truncated);
  DY_TEST(test_sample_cnn);
  DY_TEST(test_load_any_by_content);
  DY_TEST(test_bind_shape_input);
}
