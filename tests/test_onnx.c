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
  dy_reshape_attrs ra;
  DY_ASSERT_OK(dy_reshape_attrs_of(op, &ra, &err), &err);
  const int64_t *shape = ra.shape;
  CU_ASSERT_EQUAL_FATAL(ra.n_shape, 2);
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
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "'unsq' (Unsqueeze)", "axes");
}

/* PyTorch's export of class_token.expand(n, -1, -1) with a dynamic n (ViT):
 * Where(Equal(shape, -1), ones, shape) on a shape value holding the batch,
 * then Expand of a [1, 1, D] weight to [batch, 1, D], which no run-time
 * tensor has (one is made from x). The comparison folds (a size is >= 1),
 * Where carries the batch, and the expanded token is concatenated with x. */
static void test_expand_class_token_dynamic_batch(void) {
  char path[4096];
  tmp_path(path, sizeof path, "cls.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 3, (int64_t[]){-1, 3, 4}, "N");
  ob_init_f32(m, "cls", 3, (int64_t[]){1, 1, 4}, (float[]){10, 20, 30, 40});
  ob_init_i64(m, "zero", 0, NULL, (int64_t[]){0});
  ob_init_i64(m, "axes0", 1, (int64_t[]){1}, (int64_t[]){0});
  ob_init_i64(m, "m1", 1, (int64_t[]){1}, (int64_t[]){-1});
  ob_init_i64(m, "m1s", 0, NULL, (int64_t[]){-1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Gather", "n", 2, (const char *[]){"s", "zero"}, 1, (const char *[]){"n"});
  ob_node(m, "Unsqueeze", "n1", 2, (const char *[]){"n", "axes0"}, 1, (const char *[]){"n1"});
  Onnx__NodeProto *cat =
      ob_node(m, "Concat", "cat", 3, (const char *[]){"n1", "m1", "m1"}, 1, (const char *[]){"c"});
  ob_attr_i(m, cat, "axis", 0);
  ob_node(m, "Reshape", "r", 2, (const char *[]){"c", "m1"}, 1, (const char *[]){"r"});
  ob_node(m, "Shape", "shape4", 1, (const char *[]){"r"}, 1, (const char *[]){"s4"});
  Onnx__NodeProto *cos =
      ob_node(m, "ConstantOfShape", "ones", 1, (const char *[]){"s4"}, 1, (const char *[]){"o"});
  ob_attr_tensor_i64(m, cos, "value", 1, (int64_t[]){1}, (int64_t[]){1});
  ob_node(m, "Mul", "neg", 2, (const char *[]){"o", "m1s"}, 1, (const char *[]){"neg"});
  ob_node(m, "Equal", "eq", 2, (const char *[]){"r", "neg"}, 1, (const char *[]){"eq"});
  ob_node(m, "Where", "w", 3, (const char *[]){"eq", "o", "r"}, 1, (const char *[]){"w"});
  ob_node(m, "Expand", "ex", 2, (const char *[]){"cls", "w"}, 1, (const char *[]){"t"});
  Onnx__NodeProto *cat2 =
      ob_node(m, "Concat", "cat2", 2, (const char *[]){"t", "x"}, 1, (const char *[]){"y"});
  ob_attr_i(m, cat2, "axis", 1);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  char ts[64];
  CU_ASSERT_STRING_EQUAL(dy_type_str(&p->vars[p->fetches[0]]->type, ts, sizeof ts),
                         "f32[-1,4,4]");
  for (int64_t b = 1; b <= 3; b += 2) {
    dy_tensor *x = dy_tensor_new(DY_F32, 3, (int64_t[]){b, 3, 4}), *y = NULL;
    for (int64_t i = 0; i < b * 12; i++)
      dy_tensor_f32(x)[i] = i == 5 ? NAN : (float)i; /* a NaN in x stays in x */
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
    CU_ASSERT_EQUAL_FATAL(y->type.shape[0], b);
    const float *v = dy_tensor_f32(y);
    for (int64_t n = 0; n < b; n++)
      for (int64_t t = 0; t < 4; t++)
        for (int64_t d = 0; d < 4; d++) {
          float want = t == 0 ? 10.0f * (float)(d + 1) : (float)(n * 12 + (t - 1) * 4 + d);
          float got = v[(n * 4 + t) * 4 + d];
          if (n * 12 + (t - 1) * 4 + d == 5 && t > 0) {
            CU_ASSERT(isnan(got));
          } else {
            CU_ASSERT_EQUAL(got, want);
          }
        }
    dy_tensor_free(x);
    dy_tensor_free(y);
  }
  dy_program_free(p);
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
  /* 2N x 8 is a size expression, but not x's 4N elements */
  dy_test_onnx_error(path, DY_STATUS_SHAPE_MISMATCH, "'r' (Reshape)",
               "4*batch elements cannot be reshaped to 16*batch");

  /* [N, 4] / [1, 2] * [2, 1] = [2N, 2]: reshaped to it, f32[2*batch, 2] */
  tmp_path(path, sizeof path, "batch2ok.onnx");
  m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  ob_init_i64(m, "d", 1, (int64_t[]){2}, (int64_t[]){1, 2});
  ob_init_i64(m, "k", 1, (int64_t[]){2}, (int64_t[]){2, 1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Div", "half", 2, (const char *[]){"s", "d"}, 1, (const char *[]){"s1"});
  ob_node(m, "Mul", "double_it", 2, (const char *[]){"s1", "k"}, 1, (const char *[]){"s2"});
  ob_node(m, "Reshape", "r", 2, (const char *[]){"x", "s2"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  char ts[64];
  CU_ASSERT_STRING_EQUAL(dy_type_str(&p->vars[p->fetches[0]]->type, ts, sizeof ts),
                         "f32[2*batch,2]");
  dy_program_free(p);

  /* [N, 4] * [N, 1]: batch*batch is no size of the shape's second entry */
  tmp_path(path, sizeof path, "batch3.onnx");
  m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  ob_init_i64(m, "m1", 1, (int64_t[]){2}, (int64_t[]){-1, 0});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Mul", "neg", 2, (const char *[]){"s", "m1"}, 1, (const char *[]){"s2"});
  ob_node(m, "Reshape", "r", 2, (const char *[]){"x", "s2"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "'neg' (Mul)", "is not a size expression");
}

static void test_unsupported_op_names_node(void) {
  char path[4096];
  tmp_path(path, sizeof path, "unsupported.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  ob_node(m, "Relu", "ok", 1, (const char *[]){"x"}, 1, (const char *[]){"h"});
  ob_node(m, "TfIdfVectorizer", "my_tfidf", 1, (const char *[]){"h"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "node 1 'my_tfidf' (TfIdfVectorizer)",
                     "not supported");
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
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "'x'", "double");

  /* two different symbolic dims are two size symbols: no broadcast */
  tmp_path(path, sizeof path, "twodims.onnx");
  m = ob_new(13);
  ob_input(m, "a", OB_F32, 2, (int64_t[]){-1, 4}, "batch");
  ob_input(m, "b", OB_F32, 2, (int64_t[]){-1, 4}, "seq");
  ob_node(m, "Add", "add", 2, (const char *[]){"a", "b"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_SHAPE_MISMATCH, "'add' (Add)",
               "cannot broadcast the dynamic dim batch against seq");

  /* an opset beyond 18 */
  tmp_path(path, sizeof path, "opset19.onnx");
  m = ob_new(19);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "opset 19", NULL);
}

static void test_not_onnx_and_truncated(void) {
  char path[4096];
  tmp_path(path, sizeof path, "text.onnx");
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("this is not a model\n", f);
  fclose(f);
  dy_test_onnx_error(path, DY_STATUS_FORMAT, "not an ONNX model", NULL);

  /* the sample, cut in half */
  uint8_t *buf;
  size_t len;
  dy_error err = {0};
  DY_ASSERT_OK(dy_read_file(SAMPLE "/cnn.onnx", &buf, &len, &err), &err);
  tmp_path(path, sizeof path, "truncated.onnx");
  DY_ASSERT_OK(dy_write_file_atomic(path, buf, len / 2, &err), &err);
  free(buf);
  dy_test_onnx_error(path, DY_STATUS_FORMAT, "truncated", NULL);

  dy_test_onnx_error(DY_BUILD_DIR "/no_such_model.onnx", DY_STATUS_IO, NULL, NULL);
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
  dy_onnx_options o = {.n_bind = 1, .bind_names = names, .bind_values = &shape};
  DY_ASSERT_OK(dy_onnx_load_ex(path, &o, &info, &p, &err), &err);
  CU_ASSERT_EQUAL(p->n_feeds, 1);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[0], 3);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[1], 4);
  dy_tensor_free(shape);
  dy_program_free(p);
}

/* ---- the mappings added for the conformance work ---- */

/* Conv -> ConvTranspose -> MaxPool (ceil, pads) -> AveragePool (pads
 * counted), written 2-D (mapped onto conv2d, conv2d_transpose, pool2d) and
 * 3-D with a depth of 1 (the composites: im2col slices, zero-upsampling,
 * window maxima and sums). Both must compute the same numbers. */
static void write_conv_chain(const char *path, bool three_d) {
  ob_model *m = ob_new(13);
  int r = three_d ? 5 : 4;
  int64_t xd[5] = {1, 2, 1, 5, 6}, wd[5] = {3, 2, 1, 3, 3}, td[5] = {3, 2, 1, 2, 3};
  if (!three_d) {
    int64_t x2[4] = {1, 2, 5, 6}, w2[4] = {3, 2, 3, 3}, t2[4] = {3, 2, 2, 3};
    memcpy(xd, x2, sizeof x2), memcpy(wd, w2, sizeof w2), memcpy(td, t2, sizeof t2);
  }
  float w[54], t[36], b[3] = {0.5f, -0.25f, 0.125f};
  for (int i = 0; i < 54; i++)
    w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
  for (int i = 0; i < 36; i++)
    t[i] = (float)((i * 5) % 9 - 4) / 6.0f;
  ob_input(m, "x", OB_F32, r, xd, NULL);
  ob_init_f32(m, "w", r, wd, w);
  ob_init_f32(m, "b", 1, (int64_t[]){3}, b);
  ob_init_f32(m, "t", r, td, t);
  /* the 3-D attributes: depth stride 1, no depth pads, depth kernel 1 */
  Onnx__NodeProto *n = ob_node(m, "Conv", "conv", 3, (const char *[]){"x", "w", "b"}, 1,
                               (const char *[]){"c"});
  if (three_d) {
    ob_attr_ints(m, n, "pads", 6, (int64_t[]){0, 1, 0, 0, 1, 2});
    ob_attr_ints(m, n, "strides", 3, (int64_t[]){1, 2, 1});
  } else {
    ob_attr_ints(m, n, "pads", 4, (int64_t[]){1, 0, 1, 2});
    ob_attr_ints(m, n, "strides", 2, (int64_t[]){2, 1});
  }
  n = ob_node(m, "ConvTranspose", "deconv", 2, (const char *[]){"c", "t"}, 1,
              (const char *[]){"d"});
  ob_attr_ints(m, n, "strides", r - 2, three_d ? (int64_t[]){1, 2, 2} : (int64_t[]){2, 2});
  ob_attr_ints(m, n, "output_padding", r - 2, three_d ? (int64_t[]){0, 1, 0} : (int64_t[]){1, 0});
  n = ob_node(m, "MaxPool", "maxpool", 1, (const char *[]){"d"}, 1, (const char *[]){"e"});
  ob_attr_ints(m, n, "kernel_shape", r - 2, three_d ? (int64_t[]){1, 2, 2} : (int64_t[]){2, 2});
  ob_attr_ints(m, n, "strides", r - 2, three_d ? (int64_t[]){1, 2, 2} : (int64_t[]){2, 2});
  ob_attr_ints(m, n, "pads", 2 * (r - 2),
               three_d ? (int64_t[]){0, 1, 1, 0, 0, 0} : (int64_t[]){1, 1, 0, 0});
  ob_attr_i(m, n, "ceil_mode", 1);
  n = ob_node(m, "AveragePool", "avgpool", 1, (const char *[]){"e"}, 1, (const char *[]){"y"});
  ob_attr_ints(m, n, "kernel_shape", r - 2, three_d ? (int64_t[]){1, 3, 2} : (int64_t[]){3, 2});
  ob_attr_ints(m, n, "pads", 2 * (r - 2),
               three_d ? (int64_t[]){0, 1, 1, 0, 1, 1} : (int64_t[]){1, 1, 1, 1});
  ob_attr_i(m, n, "count_include_pad", 1);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_native_and_composite_agree(void) {
  char p2[4096], p3[4096];
  tmp_path(p2, sizeof p2, "chain2d.onnx");
  tmp_path(p3, sizeof p3, "chain3d.onnx");
  write_conv_chain(p2, false);
  write_conv_chain(p3, true);
  float xv[60];
  for (int i = 0; i < 60; i++)
    xv[i] = (float)((i * 13) % 17 - 8) / 4.0f;
  dy_tensor *x2 = dy_tensor_from_data(DY_F32, 4, (int64_t[]){1, 2, 5, 6}, xv);
  dy_tensor *x3 = dy_tensor_from_data(DY_F32, 5, (int64_t[]){1, 2, 1, 5, 6}, xv);
  dy_tensor *y2 = NULL, *y3 = NULL;
  dy_program *q2 = NULL, *q3 = NULL;
  dy_test_onnx_run(p2, &x2, 1, &y2, &q2);
  dy_test_onnx_run(p3, &x3, 1, &y3, &q3);
  /* 2-D: one native op each; 3-D: none of them */
  CU_ASSERT_EQUAL(dy_test_count_kind(q2, DY_OP_CONV2D), 1);
  CU_ASSERT_EQUAL(dy_test_count_kind(q2, DY_OP_CONV2D_TRANSPOSE), 1);
  CU_ASSERT_EQUAL(dy_test_count_kind(q2, DY_OP_POOL2D), 2);
  CU_ASSERT_EQUAL(dy_test_count_kind(q3, DY_OP_CONV2D) +
                      dy_test_count_kind(q3, DY_OP_CONV2D_TRANSPOSE) +
                      dy_test_count_kind(q3, DY_OP_POOL2D), 0);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(y2), dy_tensor_numel(y3));
  CU_ASSERT(dy_tensor_numel(y2) > 20);
  for (int64_t i = 0; i < dy_tensor_numel(y2); i++)
    DY_ASSERT_NEAR(dy_tensor_f32(y2)[i], dy_tensor_f32(y3)[i], 1e-4);
  dy_tensor_free(x2), dy_tensor_free(x3), dy_tensor_free(y2), dy_tensor_free(y3);
  dy_program_free(q2);
  dy_program_free(q3);
}

/* Trilu's k given at run time: no binding needed. */
static void test_trilu_run_time_k(void) {
  char path[4096];
  tmp_path(path, sizeof path, "trilu.onnx");
  ob_model *m = ob_new(14);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){3, 4}, NULL);
  ob_input(m, "k", OB_I64, 0, NULL, NULL);
  ob_node(m, "Trilu", "tri", 2, (const char *[]){"x", "k"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  float xv[12];
  for (int i = 0; i < 12; i++)
    xv[i] = (float)(i + 1);
  for (int64_t k = -1; k <= 1; k += 2) {
    dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 2, (int64_t[]){3, 4}, xv),
                        dy_tensor_from_data(DY_I64, 0, NULL, &k)};
    dy_tensor *y = NULL;
    dy_test_onnx_run(path, in, 2, &y, NULL);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        DY_ASSERT_NEAR(dy_tensor_f32(y)[i * 4 + j], j - i >= k ? xv[i * 4 + j] : 0.0f, 0);
    dy_tensor_free(in[0]), dy_tensor_free(in[1]), dy_tensor_free(y);
  }
}

/* An LSTM over a dynamic batch: the zero initial state broadcasts, and
 * each sequence of a batch of 3 comes out as it does alone. */
static void test_lstm_dynamic_batch(void) {
  char path[4096];
  tmp_path(path, sizeof path, "lstm.onnx");
  ob_model *m = ob_new(14);
  float w[16 * 3], r[16 * 4], b[32];
  for (int i = 0; i < 48; i++)
    w[i] = (float)((i * 7) % 13 - 6) / 10.0f;
  for (int i = 0; i < 64; i++)
    r[i] = (float)((i * 5) % 11 - 5) / 10.0f;
  for (int i = 0; i < 32; i++)
    b[i] = (float)(i % 5 - 2) / 10.0f;
  ob_input(m, "X", OB_F32, 3, (int64_t[]){4, -1, 3}, "N");
  ob_init_f32(m, "W", 3, (int64_t[]){1, 16, 3}, w);
  ob_init_f32(m, "R", 3, (int64_t[]){1, 16, 4}, r);
  ob_init_f32(m, "B", 2, (int64_t[]){1, 32}, b);
  Onnx__NodeProto *n = ob_node(m, "LSTM", "lstm", 4, (const char *[]){"X", "W", "R", "B"}, 3,
                               (const char *[]){"Y", "Y_h", "Y_c"});
  ob_attr_i(m, n, "hidden_size", 4);
  ob_output(m, "Y", OB_F32);
  ob_output(m, "Y_h", OB_F32);
  ob_output(m, "Y_c", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[2], -1); /* Y [4, 1, N, 4] */
  float xv[4 * 3 * 3];
  for (int i = 0; i < 36; i++)
    xv[i] = (float)((i * 11) % 7 - 3) / 3.0f;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 3, (int64_t[]){4, 3, 3}, xv), *all[3];
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, all, 3, &err), &err);
  for (int s = 0; s < 3; s++) {
    float one[12];
    for (int t = 0; t < 4; t++)
      for (int i = 0; i < 3; i++)
        one[t * 3 + i] = xv[(t * 3 + s) * 3 + i];
    dy_tensor *x1 = dy_tensor_from_data(DY_F32, 3, (int64_t[]){4, 1, 3}, one), *alone[3];
    DY_ASSERT_OK(dy_executor_run(p, &x1, 1, alone, 3, &err), &err);
    for (int t = 0; t < 4; t++)
      for (int h = 0; h < 4; h++)
        DY_ASSERT_NEAR(dy_tensor_f32(all[0])[(t * 3 + s) * 4 + h],
                       dy_tensor_f32(alone[0])[t * 4 + h], 1e-6);
    for (int h = 0; h < 4; h++)
      DY_ASSERT_NEAR(dy_tensor_f32(all[2])[s * 4 + h], dy_tensor_f32(alone[2])[h], 1e-6);
    dy_tensor_free(x1);
    for (int k = 0; k < 3; k++)
      dy_tensor_free(alone[k]);
  }
  dy_tensor_free(x);
  for (int k = 0; k < 3; k++)
    dy_tensor_free(all[k]);
  dy_program_free(p);
}

/* A Loop of 3 iterations (a constant trip count) accumulating x * i
 * becomes straight-line ops; an If on a run-time condition choosing
 * between x * 2 and x + 1 becomes a cond op (tests/test_control_codegen.c
 * has the run-time Loop). */
static void test_loop_and_if(void) {
  char path[4096];
  tmp_path(path, sizeof path, "control.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){3}, NULL);
  ob_input(m, "c", OB_BOOL, 0, NULL, NULL);
  ob_init_i64(m, "trips", 0, NULL, (int64_t[]){3});
  float zero[3] = {0, 0, 0}, two = 2, one = 1;
  ob_init_f32(m, "acc0", 1, (int64_t[]){3}, zero);
  ob_init_f32(m, "two", 0, NULL, &two);
  ob_init_f32(m, "one", 0, NULL, &one);
  ob_init_i64(m, "yes", 0, NULL, (int64_t[]){1});
  Onnx__NodeProto *n = ob_node(m, "Cast", "cond", 1, (const char *[]){"yes"}, 1,
                               (const char *[]){"go"});
  ob_attr_i(m, n, "to", OB_BOOL);
  /* body(i, cond, acc) -> (cond, acc + x * float(i), acc) */
  ob_graph *body = ob_graph_new(m, "body");
  ob_graph_input(m, body, "i", OB_I64, 0, NULL);
  ob_graph_input(m, body, "cin", OB_BOOL, 0, NULL);
  ob_graph_input(m, body, "a", OB_F32, 1, (int64_t[]){3});
  n = ob_graph_node(m, body, "Cast", "fi", 1, (const char *[]){"i"}, 1, (const char *[]){"f"});
  ob_attr_i(m, n, "to", OB_F32);
  ob_graph_node(m, body, "Mul", "xi", 2, (const char *[]){"x", "f"}, 1, (const char *[]){"xf"});
  ob_graph_node(m, body, "Add", "acc", 2, (const char *[]){"a", "xf"}, 1, (const char *[]){"a2"});
  ob_graph_node(m, body, "Identity", "cout", 1, (const char *[]){"cin"}, 1,
                (const char *[]){"c2"});
  ob_graph_node(m, body, "Identity", "scan", 1, (const char *[]){"a2"}, 1,
                (const char *[]){"s"});
  ob_graph_output(m, body, "c2", OB_BOOL);
  ob_graph_output(m, body, "a2", OB_F32);
  ob_graph_output(m, body, "s", OB_F32);
  n = ob_node(m, "Loop", "loop", 3, (const char *[]){"trips", "go", "acc0"}, 2,
              (const char *[]){"sum", "partial"});
  ob_attr_graph(m, n, "body", body);
  ob_graph *tb = ob_graph_new(m, "then"), *eb = ob_graph_new(m, "else");
  ob_graph_node(m, tb, "Mul", "dbl", 2, (const char *[]){"sum", "two"}, 1,
                (const char *[]){"t"});
  ob_graph_output(m, tb, "t", OB_F32);
  ob_graph_node(m, eb, "Add", "inc", 2, (const char *[]){"sum", "one"}, 1,
                (const char *[]){"e"});
  ob_graph_output(m, eb, "e", OB_F32);
  n = ob_node(m, "If", "if", 1, (const char *[]){"c"}, 1, (const char *[]){"y"});
  ob_attr_graph(m, n, "then_branch", tb);
  ob_attr_graph(m, n, "else_branch", eb);
  ob_output(m, "y", OB_F32);
  ob_output(m, "partial", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_COND), 1);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_WHERE), 0);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_WHILE), 0);
  float xv[3] = {1, -2, 0.5f};
  for (int cv = 0; cv <= 1; cv++) {
    unsigned char cb = (unsigned char)cv;
    dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 1, (int64_t[]){3}, xv),
                        dy_tensor_from_data(DY_BOOL, 0, NULL, &cb)};
    dy_tensor *out[2] = {0};
    DY_ASSERT_OK(dy_executor_run(p, in, 2, out, 2, &err), &err);
    for (int i = 0; i < 3; i++) {
      float sum = xv[i] * 3; /* 0 + 1 + 2 */
      DY_ASSERT_NEAR(dy_tensor_f32(out[0])[i], cv ? sum * 2 : sum + 1, 1e-6);
      /* partial sums [3, 3]: after iterations 0, 1, 2 */
      DY_ASSERT_NEAR(dy_tensor_f32(out[1])[0 * 3 + i], 0, 1e-6);
      DY_ASSERT_NEAR(dy_tensor_f32(out[1])[1 * 3 + i], xv[i], 1e-6);
      DY_ASSERT_NEAR(dy_tensor_f32(out[1])[2 * 3 + i], sum, 1e-6);
    }
    dy_tensor_free(in[0]), dy_tensor_free(in[1]), dy_tensor_free(out[0]), dy_tensor_free(out[1]);
  }
  dy_program_free(p);
}

/* TopK: values through gather_elements of top_k's indices. */
static void test_top_k(void) {
  char path[4096];
  tmp_path(path, sizeof path, "topk.onnx");
  ob_model *m = ob_new(11);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){2, 5}, NULL);
  ob_init_i64(m, "k", 1, (int64_t[]){1}, (int64_t[]){2});
  Onnx__NodeProto *n = ob_node(m, "TopK", "top", 2, (const char *[]){"x", "k"}, 2,
                               (const char *[]){"v", "i"});
  ob_attr_i(m, n, "largest", 0);
  ob_output(m, "v", OB_F32);
  ob_output(m, "i", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  float xv[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 5}, xv), *out[2];
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, out, 2, &err), &err);
  /* the two smallest of each row, ties to the lower index */
  const float v[4] = {1, 1, 2, 3};
  const int64_t ix[4] = {1, 3, 1, 4};
  for (int k = 0; k < 4; k++) {
    DY_ASSERT_NEAR(dy_tensor_f32(out[0])[k], v[k], 0);
    CU_ASSERT_EQUAL(((int64_t *)out[1]->data)[k], ix[k]);
  }
  dy_tensor_free(x), dy_tensor_free(out[0]), dy_tensor_free(out[1]);
  dy_program_free(p);
}

/* Einsum by the definition, for the test: every assignment of the letters
 * adds the product of the operands' elements to the output element.
 * Terms are plain letters (no ellipsis), the output explicit. */
static void einsum_ref(const char *const terms[], int n, const dy_tensor *const *in, const char *out,
                       const int64_t *ext /* per letter a..z */, float *y, int64_t ny) {
  char letters[27] = "";
  int nl = 0;
  for (int i = 0; i < n; i++)
    for (const char *p = terms[i]; *p; p++)
      if (!strchr(letters, *p))
        letters[nl++] = *p, letters[nl] = 0;
  for (int64_t i = 0; i < ny; i++)
    y[i] = 0;
  int64_t idx[26] = {0}, total = 1;
  for (int k = 0; k < nl; k++)
    total *= ext[letters[k] - 'a'];
  for (int64_t it = 0; it < total; it++) {
    int64_t rem = it;
    for (int k = nl - 1; k >= 0; k--) {
      idx[letters[k] - 'a'] = rem % ext[letters[k] - 'a'];
      rem /= ext[letters[k] - 'a'];
    }
    float prod = 1;
    for (int i = 0; i < n; i++) {
      int64_t off = 0;
      for (const char *p = terms[i]; *p; p++)
        off = off * ext[*p - 'a'] + idx[*p - 'a'];
      prod *= dy_tensor_f32(in[i])[off];
    }
    int64_t o = 0;
    for (const char *p = out; *p; p++)
      o = o * ext[*p - 'a'] + idx[*p - 'a'];
    y[o] += prod;
  }
}

/* Einsum: matmul-shaped, attention-shaped, sums, transposes, a diagonal,
 * three operands and the implicit output, against the definition. */
static void test_einsum(void) {
  static const struct {
    const char *eq, *terms[3], *out;
  } cases[] = {
      {"bij, bjk -> bik", {"bij", "bjk"}, "bik"},
      {"bhid,bhjd->bhij", {"bhid", "bhjd"}, "bhij"},
      {"ij->ji", {"ij"}, "ji"},
      {"ij->i", {"ij"}, "i"},
      {"i,i", {"i", "i"}, ""},
      {"ij,jk", {"ij", "jk"}, "ik"},
      {"ij,jk,kl->li", {"ij", "jk", "kl"}, "li"},
      {"bii->bi", {"bii"}, "bi"},
      {"ab,cb->ac", {"ab", "cb"}, "ac"},
  };
  int64_t ext[26];
  for (int i = 0; i < 26; i++)
    ext[i] = 2 + i % 3;
  ext['d' - 'a'] = 3;
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    char path[4096];
    tmp_path(path, sizeof path, "einsum.onnx");
    ob_model *m = ob_new(12);
    int n = cases[ci].terms[2] ? 3 : cases[ci].terms[1] ? 2 : 1;
    const char *names[3] = {"a", "b", "c"};
    dy_tensor *in[3];
    for (int i = 0; i < n; i++) {
      int64_t dims[8];
      int r = (int)strlen(cases[ci].terms[i]);
      for (int k = 0; k < r; k++)
        dims[k] = ext[cases[ci].terms[i][k] - 'a'];
      ob_input(m, names[i], OB_F32, r, dims, NULL);
      in[i] = dy_tensor_new(DY_F32, r, dims);
      for (int64_t k = 0; k < dy_tensor_numel(in[i]); k++)
        dy_tensor_f32(in[i])[k] = (float)((k * 7 + i * 3) % 11 - 5) / 4.0f;
    }
    Onnx__NodeProto *nd = ob_node(m, "Einsum", "es", n, names, 1, (const char *[]){"y"});
    ob_attr_s(m, nd, "equation", cases[ci].eq);
    ob_output(m, "y", OB_F32);
    CU_ASSERT_EQUAL(ob_save(m, path), 0);
    ob_free(m);
    dy_tensor *y = NULL;
    dy_test_onnx_run(path, in, n, &y, NULL);
    int64_t ny = 1;
    for (const char *p = cases[ci].out; *p; p++)
      ny *= ext[*p - 'a'];
    float want[256];
    einsum_ref(cases[ci].terms, n, (const dy_tensor *const *)in, cases[ci].out, ext, want, ny);
    CU_ASSERT_EQUAL(dy_tensor_numel(y), ny);
    CU_ASSERT_EQUAL(y->type.rank, (int)strlen(cases[ci].out));
    for (int64_t k = 0; k < ny && k < dy_tensor_numel(y); k++)
      DY_ASSERT_NEAR(dy_tensor_f32(y)[k], want[k], 1e-4);
    for (int i = 0; i < n; i++)
      dy_tensor_free(in[i]);
    dy_tensor_free(y);
  }
}

/* A pairwise product whose rank would pass DY_MAX_DIMS (abcde x fghij,
 * both still needed by the later operands) is a clean error naming the
 * node, not an overrun of the intermediate's shape. */
static void test_einsum_rank_bound(void) {
  char path[4096];
  tmp_path(path, sizeof path, "einsum_rank.onnx");
  ob_model *m = ob_new(12);
  const char *names[4] = {"a", "b", "c", "d"};
  int64_t dims[5] = {1, 2, 1, 2, 1};
  for (int i = 0; i < 4; i++)
    ob_input(m, names[i], OB_F32, 5, dims, NULL);
  Onnx__NodeProto *nd = ob_node(m, "Einsum", "wide", 4, names, 1, (const char *[]){"y"});
  ob_attr_s(m, nd, "equation", "abcde,fghij,abcde,fghij->");
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "'wide' (Einsum)", "rank 10");
}

/* int32 and int8 constants (int32 indices, int8 values, as converters
 * write them) keep their dtypes: the indices become int64 for Gather, the
 * int8 values cast exactly; an int32 graph input is an int32 feed. */
static void test_narrow_int_constants(void) {
  char path[4096];
  tmp_path(path, sizeof path, "int32_const.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){5}, NULL);
  int32_t idx[3] = {4, -5, 2};
  m->inits[m->graph.n_initializer++] =
      ob_tensor(m, "idx", OB_I32, 1, (int64_t[]){3}, idx, sizeof idx);
  int8_t add[3] = {-128, 127, -1};
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "add", 3 /* int8 */, 1, (int64_t[]){3}, add,
                                                 sizeof add);
  Onnx__NodeProto *n = ob_node(m, "Gather", "g", 2, (const char *[]){"x", "idx"}, 1,
                               (const char *[]){"y"});
  ob_attr_i(m, n, "axis", 0);
  n = ob_node(m, "Cast", "c", 1, (const char *[]){"add"}, 1, (const char *[]){"a"});
  ob_attr_i(m, n, "to", OB_F32);
  ob_node(m, "Add", "plus", 2, (const char *[]){"y", "a"}, 1, (const char *[]){"z"});
  ob_output(m, "z", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  float xv[5] = {10, 20, 30, 40, 50};
  dy_tensor *x = dy_tensor_from_data(DY_F32, 1, (int64_t[]){5}, xv), *z = NULL;
  dy_test_onnx_run(path, &x, 1, &z, NULL);
  const float want[3] = {50 - 128, 10 + 127, 30 - 1};
  for (int i = 0; i < 3; i++)
    DY_ASSERT_NEAR(dy_tensor_f32(z)[i], want[i], 0);
  dy_tensor_free(x), dy_tensor_free(z);
  /* an int32 graph input is an int32 feed; uint32 is still refused */
  tmp_path(path, sizeof path, "int32_input.onnx");
  m = ob_new(13);
  ob_input(m, "i", OB_I32, 1, (int64_t[]){3}, NULL);
  ob_node(m, "Identity", "id", 1, (const char *[]){"i"}, 1, (const char *[]){"o"});
  ob_output(m, "o", OB_I32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  int32_t iv[3] = {-7, 0, 2147483647};
  dy_tensor *i = dy_tensor_from_data(DY_I32, 1, (int64_t[]){3}, iv), *o = NULL;
  dy_test_onnx_run(path, &i, 1, &o, NULL);
  CU_ASSERT(o && o->type.dtype == DY_I32 && memcmp(o->data, iv, sizeof iv) == 0);
  dy_tensor_free(i), dy_tensor_free(o);
  tmp_path(path, sizeof path, "uint32_input.onnx");
  m = ob_new(13);
  ob_input(m, "i", 12 /* uint32 */, 1, (int64_t[]){3}, NULL);
  ob_node(m, "Identity", "id", 1, (const char *[]){"i"}, 1, (const char *[]){"o"});
  ob_output(m, "o", 12);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "graph input 'i'", "uint32");
}

void dy_test_register(void) {
  DY_SUITE("onnx");
  DY_TEST(test_matmul_add_relu);
  DY_TEST(test_shape_subgraph_dynamic_batch);
  DY_TEST(test_expand_class_token_dynamic_batch);
  DY_TEST(test_batch_arithmetic_is_an_error);
  DY_TEST(test_unsupported_op_names_node);
  DY_TEST(test_unsupported_dtype_and_dims);
  DY_TEST(test_not_onnx_and_truncated);
  DY_TEST(test_sample_cnn);
  DY_TEST(test_load_any_by_content);
  DY_TEST(test_bind_shape_input);
  DY_TEST(test_native_and_composite_agree);
  DY_TEST(test_trilu_run_time_k);
  DY_TEST(test_lstm_dynamic_batch);
  DY_TEST(test_loop_and_if);
  DY_TEST(test_top_k);
  DY_TEST(test_einsum);
  DY_TEST(test_einsum_rank_bound);
  DY_TEST(test_narrow_int_constants);
}
