/* test_onnx_corners.c - the ONNX corners of issue 29 (item 5): Concat
 * with any number of inputs (one op up to DY_MAX_OP_INPUTS, a tree of
 * concats beyond), opset-6 attributes as that opset's spec reads them
 * (Add's broadcast/axis, PRelu's per-channel slope, BatchNormalization's
 * is_test) and pooling windows beyond the importer's slice cap (a 600-
 * element dilated MaxPool, a 3-D AveragePool), sequences inside a graph
 * (split, erase, insert, concat, length, at) and DynamicQuantizeLinear
 * (the form ONNX Runtime's dynamic quantizer writes). Each model runs on the
 * executor against a reference computed here; the larger ones also
 * through `dy2stc check` (executor and compiled C agree). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/corners_%s", DY_BUILD_DIR, name);
}

/* `dy2stc check` of the model at path with input x = xv (rank, shape):
 * the executor and the compiled executable agree. */
static void check_compiled(const char *path, const char *x_name, int rank,
                           const int64_t *shape, const float *xv) {
  char npy[4096], cmd[12288], log[4096];
  snprintf(npy, sizeof npy, "%s.%s.npy", path, x_name);
  snprintf(log, sizeof log, "%s.log", path);
  dy_test_write_f32(npy, rank, shape, xv);
  snprintf(cmd, sizeof cmd, "%s check %s --input %s=%s --rtol 1e-5 --atol 1e-5", DY2STC_PATH,
           path, x_name, npy);
  int rc = dy_test_sh(log, "%s", cmd);
  if (rc != 0) {
    char *t = dy_test_slurp(log);
    fprintf(stderr, "\n  %s: exit %d\n%s\n", cmd, rc, t ? t : "");
    free(t);
  }
  CU_ASSERT_EQUAL(rc, 0);
}

/* ---- Concat of many inputs ---- */

/* y = Concat(x, z, x, z, ...) of n inputs along axis 0: x [2, 3], z [1, 3]. */
static void write_concat(const char *path, int n) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){2, 3}, NULL);
  ob_input(m, "z", OB_F32, 2, (int64_t[]){1, 3}, NULL);
  const char **in = malloc(sizeof *in * (size_t)n);
  for (int i = 0; i < n; i++)
    in[i] = i % 2 ? "z" : "x";
  Onnx__NodeProto *nd = ob_node(m, "Concat", "cat", n, in, 1, (const char *[]){"y"});
  ob_attr_i(m, nd, "axis", 0);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  free(in);
}

static void concat_case(int n, int want_concats) {
  char path[4096];
  char name[32];
  snprintf(name, sizeof name, "concat%d.onnx", n);
  tmp_path(path, sizeof path, name);
  write_concat(path, n);
  float xv[6] = {1, 2, 3, 4, 5, 6}, zv[3] = {-1, -2, -3};
  dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 3}, xv),
                      dy_tensor_from_data(DY_F32, 2, (int64_t[]){1, 3}, zv)};
  dy_tensor *y = NULL;
  dy_program *p = NULL;
  dy_test_onnx_run(path, in, 2, &y, &p);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_CONCAT), want_concats);
  int64_t rows = (int64_t)(n + 1) / 2 * 2 + (int64_t)n / 2;
  CU_ASSERT_EQUAL_FATAL(y->type.shape[0], rows);
  const float *yv = dy_tensor_f32(y);
  int64_t r = 0;
  bool ok = true;
  for (int i = 0; i < n; i++) {
    const float *src = i % 2 ? zv : xv;
    int k = i % 2 ? 3 : 6;
    ok &= memcmp(yv + r * 3, src, sizeof(float) * (size_t)k) == 0;
    r += k / 3;
  }
  CU_ASSERT(ok);
  dy_tensor_free(in[0]), dy_tensor_free(in[1]), dy_tensor_free(y);
  dy_program_free(p);
}

/* 40 inputs: one concat op (beyond the 16 of before); 150: a tree. The
 * eager API takes DY_MAX_OP_INPUTS too. */
static void test_concat_many_inputs(void) {
  concat_case(40, 1);
  concat_case(DY_MAX_OP_INPUTS, 1);
  concat_case(150, 4); /* 64 + 64 + 22, then the three */
  float v[2] = {1, 2};
  dy_tensor *t = dy_tensor_from_data(DY_F32, 1, (int64_t[]){2}, v);
  dy_tensor *many[DY_MAX_OP_INPUTS];
  for (int i = 0; i < DY_MAX_OP_INPUTS; i++)
    many[i] = t;
  dy_tensor *y = dy_concat(many, DY_MAX_OP_INPUTS, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_EQUAL(y->type.shape[0], 2 * DY_MAX_OP_INPUTS);
  CU_ASSERT_EQUAL(dy_tensor_f32(y)[2 * DY_MAX_OP_INPUTS - 1], 2.0f);
  dy_tensor_free(y);
  dy_tensor_free(t);
  char path[1024];
  tmp_path(path, sizeof path, "concat40.onnx");
  /* the compiled C of the 40-input concat: check needs both inputs */
  char zn[1100], xn[1100], cmd[4096], log[1100];
  snprintf(xn, sizeof xn, "%s.x.npy", path);
  snprintf(zn, sizeof zn, "%s.z.npy", path);
  snprintf(log, sizeof log, "%s.log", path);
  dy_test_write_f32(xn, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  dy_test_write_f32(zn, 2, (int64_t[]){1, 3}, (float[]){-1, -2, -3});
  snprintf(cmd, sizeof cmd, "%s check %s --input x=%s --input z=%s", DY2STC_PATH, path, xn, zn);
  CU_ASSERT_EQUAL(dy_test_sh(log, "%s", cmd), 0);
}

/* ---- opset 6 ---- */

/* Add(A [2, 3, 4], B) with broadcast 1: B [3] at axis 1, B [4] without an
 * axis (the trailing dims), and Mul with broadcast 0 on equal shapes. */
static void test_opset6_add_broadcast(void) {
  char path[4096];
  tmp_path(path, sizeof path, "add6.onnx");
  ob_model *m = ob_new(6);
  ob_input(m, "a", OB_F32, 3, (int64_t[]){2, 3, 4}, NULL);
  float b3[3] = {10, 20, 30}, b4[4] = {1, 2, 3, 4}, w[24];
  for (int i = 0; i < 24; i++)
    w[i] = (float)(i % 5) - 2.0f;
  ob_init_f32(m, "b3", 1, (int64_t[]){3}, b3);
  ob_init_f32(m, "b4", 1, (int64_t[]){4}, b4);
  ob_init_f32(m, "w", 3, (int64_t[]){2, 3, 4}, w);
  Onnx__NodeProto *n = ob_node(m, "Add", "add1", 2, (const char *[]){"a", "b3"}, 1,
                               (const char *[]){"h1"});
  ob_attr_i(m, n, "broadcast", 1);
  ob_attr_i(m, n, "axis", 1);
  n = ob_node(m, "Add", "add2", 2, (const char *[]){"h1", "b4"}, 1, (const char *[]){"h2"});
  ob_attr_i(m, n, "broadcast", 1);
  ob_node(m, "Mul", "mul", 2, (const char *[]){"h2", "w"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  float av[24];
  for (int i = 0; i < 24; i++)
    av[i] = (float)i * 0.5f;
  dy_tensor *a = dy_tensor_from_data(DY_F32, 3, (int64_t[]){2, 3, 4}, av), *y = NULL;
  dy_test_onnx_run(path, &a, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(y), 24);
  for (int i = 0; i < 24; i++)
    DY_ASSERT_NEAR(dy_tensor_f32(y)[i], (av[i] + b3[(i / 4) % 3] + b4[i % 4]) * w[i], 1e-5);
  dy_tensor_free(a), dy_tensor_free(y);

  /* broadcast 0 with shapes that differ is an error naming the rule */
  tmp_path(path, sizeof path, "add6_bad.onnx");
  m = ob_new(6);
  ob_input(m, "a", OB_F32, 3, (int64_t[]){2, 3, 4}, NULL);
  ob_init_f32(m, "b4", 1, (int64_t[]){4}, b4);
  ob_node(m, "Add", "add", 2, (const char *[]){"a", "b4"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_SHAPE_MISMATCH, "broadcast=0", "'add'");
}

/* PRelu (opset 6) with a [C] slope on [N, C, H, W]: per channel. */
static void test_opset6_prelu_channels(void) {
  char path[4096];
  tmp_path(path, sizeof path, "prelu6.onnx");
  ob_model *m = ob_new(6);
  ob_input(m, "x", OB_F32, 4, (int64_t[]){1, 3, 2, 4}, NULL);
  float s[3] = {0.5f, -2.0f, 0.25f};
  ob_init_f32(m, "s", 1, (int64_t[]){3}, s);
  ob_node(m, "PRelu", "prelu", 2, (const char *[]){"x", "s"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  float xv[24];
  for (int i = 0; i < 24; i++)
    xv[i] = (float)(i % 7) - 3.0f;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 4, (int64_t[]){1, 3, 2, 4}, xv), *y = NULL;
  dy_test_onnx_run(path, &x, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(y), 24);
  for (int i = 0; i < 24; i++)
    DY_ASSERT_NEAR(dy_tensor_f32(y)[i], xv[i] < 0 ? s[i / 8] * xv[i] : xv[i], 1e-6);
  dy_tensor_free(x), dy_tensor_free(y);
}

/* BatchNormalization (opset 6): is_test 1 normalises with the given
 * statistics, is_test 0 (the default) with the batch's. */
static void bn6_case(bool is_test) {
  char path[4096];
  tmp_path(path, sizeof path, is_test ? "bn6_test.onnx" : "bn6_train.onnx");
  ob_model *m = ob_new(6);
  ob_input(m, "x", OB_F32, 4, (int64_t[]){2, 3, 2, 2}, NULL);
  float sc[3] = {1, 2, 0.5f}, b[3] = {0, 1, -1}, mu[3] = {0.5f, -1, 2}, var[3] = {1, 4, 0.25f};
  ob_init_f32(m, "sc", 1, (int64_t[]){3}, sc);
  ob_init_f32(m, "b", 1, (int64_t[]){3}, b);
  ob_init_f32(m, "mu", 1, (int64_t[]){3}, mu);
  ob_init_f32(m, "var", 1, (int64_t[]){3}, var);
  Onnx__NodeProto *n = ob_node(m, "BatchNormalization", "bn", 5,
                               (const char *[]){"x", "sc", "b", "mu", "var"}, 1,
                               (const char *[]){"y"});
  ob_attr_f(m, n, "epsilon", 1e-3f);
  if (is_test)
    ob_attr_i(m, n, "is_test", 1);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  float xv[24];
  for (int i = 0; i < 24; i++)
    xv[i] = (float)((i * 5) % 11) - 4.0f;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 4, (int64_t[]){2, 3, 2, 2}, xv), *y = NULL;
  dy_test_onnx_run(path, &x, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(y), 24);
  for (int ch = 0; ch < 3; ch++) {
    double mean = mu[ch], v = var[ch];
    if (!is_test) {
      double s1 = 0, s2 = 0;
      for (int nn = 0; nn < 2; nn++)
        for (int k = 0; k < 4; k++)
          s1 += xv[nn * 12 + ch * 4 + k];
      mean = s1 / 8;
      for (int nn = 0; nn < 2; nn++)
        for (int k = 0; k < 4; k++) {
          double d = xv[nn * 12 + ch * 4 + k] - mean;
          s2 += d * d;
        }
      v = s2 / 8;
    }
    for (int nn = 0; nn < 2; nn++)
      for (int k = 0; k < 4; k++) {
        int i = nn * 12 + ch * 4 + k;
        DY_ASSERT_NEAR(dy_tensor_f32(y)[i], (xv[i] - mean) / sqrt(v + 1e-3) * sc[ch] + b[ch],
                       1e-4);
      }
  }
  dy_tensor_free(x), dy_tensor_free(y);
}

static void test_opset6_batch_norm_is_test(void) {
  bn6_case(true);
  bn6_case(false);
}

/* ---- pooling windows beyond the slice cap ---- */

/* MaxPool, kernel 30 x 20 (600 offsets), dilations 2, strides 3 x 2, pads
 * [1, 2, 0, 3] on x [1, 2, 70, 48]: against the definition. */
static void test_large_dilated_max_pool(void) {
  char path[4096];
  tmp_path(path, sizeof path, "maxpool600.onnx");
  ob_model *m = ob_new(13);
  int64_t xs[4] = {1, 2, 70, 48};
  ob_input(m, "x", OB_F32, 4, xs, NULL);
  Onnx__NodeProto *n = ob_node(m, "MaxPool", "pool", 1, (const char *[]){"x"}, 1,
                               (const char *[]){"y"});
  ob_attr_ints(m, n, "kernel_shape", 2, (int64_t[]){30, 20});
  ob_attr_ints(m, n, "dilations", 2, (int64_t[]){2, 2});
  ob_attr_ints(m, n, "strides", 2, (int64_t[]){3, 2});
  ob_attr_ints(m, n, "pads", 4, (int64_t[]){1, 2, 0, 3});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  enum { H = 70, W = 48, OH = 5, OW = 8 };
  float *xv = malloc(sizeof(float) * 2 * H * W);
  for (int i = 0; i < 2 * H * W; i++)
    xv[i] = (float)((i * 37) % 1009) / 100.0f - 5.0f;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 4, xs, xv), *y = NULL;
  dy_test_onnx_run(path, &x, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(y->type.rank, 4);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[2], OH);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[3], OW);
  bool ok = true;
  for (int ch = 0; ch < 2; ch++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        float best = -INFINITY;
        for (int i = 0; i < 30; i++)
          for (int j = 0; j < 20; j++) {
            int iy = oy * 3 - 1 + 2 * i, ix = ox * 2 - 2 + 2 * j;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W && xv[(ch * H + iy) * W + ix] > best)
              best = xv[(ch * H + iy) * W + ix];
          }
        ok &= dy_tensor_f32(y)[(ch * OH + oy) * OW + ox] == best;
      }
  CU_ASSERT(ok);
  check_compiled(path, "x", 4, xs, xv);
  dy_tensor_free(x), dy_tensor_free(y);
  free(xv);
}

/* AveragePool 3-D, kernel 2 x 3 x 4, pads not counted, on [1, 1, 3, 5, 6]. */
static void test_separable_average_pool_3d(void) {
  char path[4096];
  tmp_path(path, sizeof path, "avgpool3d.onnx");
  ob_model *m = ob_new(13);
  int64_t xs[5] = {1, 1, 3, 5, 6};
  ob_input(m, "x", OB_F32, 5, xs, NULL);
  Onnx__NodeProto *n = ob_node(m, "AveragePool", "pool", 1, (const char *[]){"x"}, 1,
                               (const char *[]){"y"});
  ob_attr_ints(m, n, "kernel_shape", 3, (int64_t[]){2, 3, 4});
  ob_attr_ints(m, n, "pads", 6, (int64_t[]){0, 1, 1, 1, 1, 2});
  ob_attr_ints(m, n, "strides", 3, (int64_t[]){1, 2, 2});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  /* out: d (3+1-2)/1+1 = 3, h (5+2-3)/2+1 = 3, w (6+3-4)/2+1 = 3 */
  float xv[90];
  for (int i = 0; i < 90; i++)
    xv[i] = (float)((i * 13) % 29) - 14.0f;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 5, xs, xv), *y = NULL;
  dy_test_onnx_run(path, &x, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(y), 27);
  for (int od = 0; od < 3; od++)
    for (int oh = 0; oh < 3; oh++)
      for (int ow = 0; ow < 3; ow++) {
        double s = 0;
        int cnt = 0;
        for (int a = 0; a < 2; a++)
          for (int b = 0; b < 3; b++)
            for (int e = 0; e < 4; e++) {
              int d = od + a, h = oh * 2 - 1 + b, w = ow * 2 - 1 + e;
              if (d < 3 && h >= 0 && h < 5 && w >= 0 && w < 6) {
                s += xv[(d * 5 + h) * 6 + w];
                cnt++;
              }
            }
        DY_ASSERT_NEAR(dy_tensor_f32(y)[(od * 3 + oh) * 3 + ow], s / cnt, 1e-5);
      }
  check_compiled(path, "x", 5, xs, xv);
  dy_tensor_free(x), dy_tensor_free(y);
}

/* ---- sequences inside a graph (taken apart at import time) ---- */

/* x f32 [2, 6]: s1 = SplitToSequence(x, [1, 2, 3], axis 1); s2 = erase
 * s1[0]; s3 = insert x at -1 (before the last); y = ConcatFromSequence(s3,
 * axis 1), n = SequenceLength(s3), z = SequenceAt(s3, -1); bad 1 returns
 * s3 itself, bad 2 feeds it to Relu. */
static void write_sequence_model(const char *path, int bad) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){2, 6}, NULL);
  ob_init_i64(m, "split", 1, (int64_t[]){3}, (int64_t[]){1, 2, 3});
  ob_init_i64(m, "zero", 0, NULL, (int64_t[]){0});
  ob_init_i64(m, "last", 0, NULL, (int64_t[]){-1});
  Onnx__NodeProto *n = ob_node(m, "SplitToSequence", "split_seq", 2,
                               (const char *[]){"x", "split"}, 1, (const char *[]){"s1"});
  ob_attr_i(m, n, "axis", 1);
  ob_node(m, "SequenceErase", "erase", 2, (const char *[]){"s1", "zero"}, 1,
          (const char *[]){"s2"});
  ob_node(m, "SequenceInsert", "insert", 3, (const char *[]){"s2", "x", "last"}, 1,
          (const char *[]){"s3"});
  if (bad == 1) {
    ob_output(m, "s3", OB_F32);
  } else if (bad == 2) {
    ob_node(m, "Relu", "relu", 1, (const char *[]){"s3"}, 1, (const char *[]){"r"});
    ob_output(m, "r", OB_F32);
  } else {
    n = ob_node(m, "ConcatFromSequence", "cat", 1, (const char *[]){"s3"}, 1,
                (const char *[]){"y"});
    ob_attr_i(m, n, "axis", 1);
    ob_node(m, "SequenceLength", "len", 1, (const char *[]){"s3"}, 1, (const char *[]){"n"});
    ob_node(m, "SequenceAt", "at", 2, (const char *[]){"s3", "last"}, 1, (const char *[]){"z"});
    ob_output(m, "y", OB_F32);
    ob_output(m, "n", OB_I64);
    ob_output(m, "z", OB_F32);
  }
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_sequence_in_graph(void) {
  char path[4096];
  tmp_path(path, sizeof path, "sequence.onnx");
  write_sequence_model(path, 0);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  float xv[12];
  for (int i = 0; i < 12; i++)
    xv[i] = (float)i;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 6}, xv), *out[3] = {NULL};
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, out, 3, &err), &err);
  /* y = [x[:, 1:3], x, x[:, 3:6]] along axis 1: [2, 11] */
  CU_ASSERT_EQUAL_FATAL(out[0]->type.shape[1], 11);
  const float *y = out[0]->data;
  for (int r = 0; r < 2; r++)
    for (int j = 0; j < 11; j++) {
      int col = j < 2 ? 1 + j : j < 8 ? j - 2 : j - 5;
      CU_ASSERT_EQUAL(y[r * 11 + j], xv[r * 6 + col]);
    }
  CU_ASSERT_EQUAL(((int64_t *)out[1]->data)[0], 3);
  CU_ASSERT_EQUAL_FATAL(out[2]->type.shape[1], 3);
  CU_ASSERT_EQUAL(((float *)out[2]->data)[0], 3.0f);
  CU_ASSERT_EQUAL(((float *)out[2]->data)[5], 11.0f);
  for (int i = 0; i < 3; i++)
    dy_tensor_free(out[i]);
  dy_tensor_free(x);
  dy_program_free(p);
  check_compiled(path, "x", 2, (int64_t[]){2, 6}, xv);
  /* a sequence never becomes a tensor: one line naming it */
  tmp_path(path, sizeof path, "sequence_out.onnx");
  write_sequence_model(path, 1);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "'s3' is a sequence", "never a tensor");
  tmp_path(path, sizeof path, "sequence_relu.onnx");
  write_sequence_model(path, 2);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "input 's3' is a sequence, not a tensor",
                     "(Relu)");
}

/* ---- DynamicQuantizeLinear ---- */

/* The ONNX reference's rule in float32, written out here. */
static void dql_ref(const float *x, int n, uint8_t *y, float *scale, uint8_t *zp) {
  float lo = 0.0f, hi = 0.0f;
  for (int i = 0; i < n; i++) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  *scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float z = rintf(-lo / *scale);
  *zp = (uint8_t)(z < 0 ? 0 : z > 255 ? 255 : z);
  for (int i = 0; i < n; i++) {
    float q = rintf(x[i] / *scale) + (float)*zp;
    y[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
  }
}

/* All three outputs on the executor against the rule, for an input of
 * zeros (the scale's degenerate case), one of negatives only (the zero
 * point at 255), one of positives only and a mixed one; then `dy2stc
 * check` (the compiled C agrees with the executor). */
static void test_dynamic_quantize_linear(void) {
  char path[4096];
  tmp_path(path, sizeof path, "dql.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){6}, NULL);
  ob_node(m, "DynamicQuantizeLinear", "dql", 1, (const char *[]){"x"}, 3,
          (const char *[]){"y", "s", "z"});
  ob_output(m, "y", OB_U8);
  ob_output(m, "s", OB_F32);
  ob_output(m, "z", OB_U8);
  CU_ASSERT_EQUAL_FATAL(ob_save(m, path), 0);
  ob_free(m);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  static const float cases[4][6] = {{0, 0, 0, 0, 0, 0},
                                    {-1, -2, -3, -4, -5, -6.5f},
                                    {0.5f, 1, 2, 3, 4, 5},
                                    {-1.2f, 0.3f, 2.5f, -0.01f, 7.9f, 0}};
  for (int c = 0; c < 4; c++) {
    uint8_t wy[6], wz;
    float ws;
    dql_ref(cases[c], 6, wy, &ws, &wz);
    dy_tensor *x = dy_tensor_from_data(DY_F32, 1, (int64_t[]){6}, cases[c]);
    dy_tensor *out[3] = {NULL, NULL, NULL};
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, out, 3, &err), &err);
    CU_ASSERT_EQUAL_FATAL(out[0]->type.dtype, DY_U8);
    CU_ASSERT_EQUAL(out[1]->type.rank, 0);
    CU_ASSERT(memcmp(out[0]->data, wy, 6) == 0);
    CU_ASSERT_EQUAL(*(const float *)out[1]->data, ws);
    CU_ASSERT_EQUAL(*(const uint8_t *)out[2]->data, wz);
    check_compiled(path, "x", 1, (int64_t[]){6}, cases[c]);
    for (int k = 0; k < 3; k++)
      dy_tensor_free(out[k]);
    dy_tensor_free(x);
  }
  /* ONNX's test_dynamicquantizelinear_max_adjusted data, its stored
   * outputs: y, y_scale 4 / 255, y_zero_point 255 */
  float xv[6] = {-1.0f, -2.1f, -1.3f, -2.5f, -3.34f, -4.0f};
  dy_tensor *x = dy_tensor_from_data(DY_F32, 1, (int64_t[]){6}, xv), *out[3] = {NULL};
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, out, 3, &err), &err);
  const uint8_t want[6] = {191, 121, 172, 96, 42, 0};
  CU_ASSERT(memcmp(out[0]->data, want, 6) == 0);
  CU_ASSERT_DOUBLE_EQUAL(((float *)out[1]->data)[0], 4.0 / 255.0, 1e-9);
  CU_ASSERT_EQUAL(((uint8_t *)out[2]->data)[0], 255);
  for (int i = 0; i < 3; i++)
    dy_tensor_free(out[i]);
  dy_tensor_free(x);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("onnx_corners");
  DY_TEST(test_concat_many_inputs);
  DY_TEST(test_opset6_add_broadcast);
  DY_TEST(test_opset6_prelu_channels);
  DY_TEST(test_opset6_batch_norm_is_test);
  DY_TEST(test_large_dilated_max_pool);
  DY_TEST(test_separable_average_pool_3d);
  DY_TEST(test_sequence_in_graph);
  DY_TEST(test_dynamic_quantize_linear);
}
