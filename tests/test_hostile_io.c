/* test_hostile_io.c - hostile input, round 2 (issue 31): unbounded reads,
 * wrapping counts, saturating fixed point, integers out of their dtype's
 * range (a uint8 zero point of 300 in int32_data), dtype mismatches, the C
 * frontend's file names. Like test_hostile.c, each case asserts the one-line
 * error (or the right answer) through the library, `dy2stc` and the
 * compiled executable (built with ASan + UBSan). */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"
#include "paddle_framework.pb-c.h"

#define SAN_CFLAGS "--cflags '-fsanitize=address,undefined -fno-sanitize-recover=all'"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/hostile_io_%s", DY_BUILD_DIR, name);
}

static void expect_cli(int want, const char *frag, const char *cmd) {
  char log[4200];
  tmp_path(log, sizeof log, "cli.log");
  dy_test_expect_cli(log, want, frag, cmd);
}

/* y = x @ w + b, x f32[-1,2], w trainable: dir/net.dymodel. */
static void save_linear(const char *dir) {
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", dir, dir);
  const char *text =
      "program {\n  var x : f32[-1,2] feed 0\n"
      "  var w : f32[2,2] persistable trainable = [0.5, -0.25, 0.125, 1]\n"
      "  var b : f32[2] persistable trainable = [0.1, -0.1]\n"
      "  var h : f32[-1,2]\n  var y : f32[-1,2]\n  block 0 parent -1 {\n"
      "    h = matmul(x, w) {transpose_x = 0, transpose_y = 0}  @net.c:1\n"
      "    y = add(h, b)  @net.c:1\n  }\n  fetch 0 y\n}\n";
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char path[4200];
  snprintf(path, sizeof path, "%s/net", dir);
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_save(p, path, &err), &err);
  dy_program_free(p);
}

/* ---- case 2: reads are bounded; devices and FIFOs are refused ---- */

static void test_read_devices_and_fifos(void) {
  char fifo[4096], dir[4096], cmd[16384];
  tmp_path(fifo, sizeof fifo, "fifo");
  unlink(fifo);
  CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  dy_error err = {0};
  /* the library: no read of /dev/zero, no blocking open of a FIFO */
  CU_ASSERT_EQUAL(dy_read_file("/dev/zero", &buf, &len, &err), DY_STATUS_IO);
  CU_ASSERT_STRING_EQUAL(err.msg, "/dev/zero: is a device, expected a regular file");
  CU_ASSERT_EQUAL(dy_read_file(fifo, &buf, &len, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is a pipe or socket, expected a regular file"));
  CU_ASSERT_EQUAL(dy_read_file(DY_BUILD_DIR, &buf, &len, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is a directory"));
  dy_tensor *t = NULL;
  CU_ASSERT_EQUAL(dy_npy_read("/dev/zero", &t, &err), DY_STATUS_IO);
  /* a regular file is read whole, exactly */
  char reg[4096];
  tmp_path(reg, sizeof reg, "reg.bin");
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "printf 'abc' > %s", reg), 0);
  DY_ASSERT_OK(dy_read_file(reg, &buf, &len, &err), &err);
  CU_ASSERT(len == 3 && memcmp(buf, "abc", 3) == 0);
  free(buf);

  /* run, the executable and quantize --calibrate (timeout: a hang fails) */
  tmp_path(dir, sizeof dir, "lin");
  save_linear(dir);
  snprintf(cmd, sizeof cmd, "timeout 60 %s run %s/net.dymodel --input x=/dev/zero", DY2STC_PATH,
           dir);
  expect_cli(1, "dy2stc: /dev/zero: is a device, expected a regular file", cmd);
  snprintf(cmd, sizeof cmd, "timeout 60 %s run %s/net.dymodel --input x=%s", DY2STC_PATH, dir,
           fifo);
  expect_cli(1, "is a pipe or socket, expected a regular file", cmd);
  snprintf(cmd, sizeof cmd, "%s compile %s/net.dymodel " SAN_CFLAGS " -o %s/exe > /dev/null",
           DY2STC_PATH, dir, dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(cmd, sizeof cmd, "timeout 60 %s/exe --input x=/dev/zero --output-dir %s", dir, dir);
  expect_cli(1, "exe: input 'x': /dev/zero: is a device, pipe or socket, expected a regular file",
             cmd);
  snprintf(cmd, sizeof cmd, "timeout 60 %s/exe --input x=%s.bin --output-dir %s", dir, fifo,
           dir);
  dy_test_sh(NULL, "rm -f %s.bin && mkfifo %s.bin", fifo, fifo);
  expect_cli(1, "is a device, pipe or socket, expected a regular file", cmd);
  snprintf(cmd, sizeof cmd, "timeout 60 %s/exe --input x=%s --output-dir %s", dir, dir, dir);
  expect_cli(1, "is a directory, expected a regular file", cmd);
  dy_test_sh(NULL, "mkdir -p %s/cal && rm -f %s/cal/x.npy && mkfifo %s/cal/x.npy", dir, dir, dir);
  snprintf(cmd, sizeof cmd, "timeout 60 %s quantize %s/net.dymodel --calibrate %s/cal -o %s/q",
           DY2STC_PATH, dir, dir, dir);
  expect_cli(1, "is a pipe or socket, expected a regular file", cmd);
  unlink(fifo);
}

/* ---- case 3: an epoch count whose step count would wrap ---- */

static void test_epochs_wrap(void) {
  char dir[1024], cmd[16384];
  tmp_path(dir, sizeof dir, "train");
  save_linear(dir);
  char x[4200], l[4200];
  snprintf(x, sizeof x, "%s/x.npy", dir);
  snprintf(l, sizeof l, "%s/l.npy", dir);
  float v[6] = {1, 2, 3, 4, 5, 6};
  dy_test_write_f32(x, 2, (int64_t[]){3, 2}, v);
  dy_test_write_f32(l, 2, (int64_t[]){3, 2}, v);
  snprintf(cmd, sizeof cmd,
           "timeout 60 %s train %s/net.dymodel --input x=%s --labels %s --loss mse "
           "--optimizer sgd --batch 1 --epochs 4611686018427387904 -o %s/t",
           DY2STC_PATH, dir, x, l, dir);
  expect_cli(1, "--epochs 4611686018427387904: 4611686018427387904 epochs of 3 steps exceed "
                "2^53 steps", cmd);
  snprintf(cmd, sizeof cmd,
           "%s compile %s/net.dymodel --train --loss mse --optimizer sgd --batch 1 " SAN_CFLAGS
           " -o %s/trainer > /dev/null", DY2STC_PATH, dir, dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(cmd, sizeof cmd,
           "timeout 60 %s/trainer --input x=%s --labels %s --epochs 4611686018427387904 "
           "-o %s", dir, x, l, dir);
  /* exit 1, as dy2stc train: the step count depends on the data */
  expect_cli(1, "--epochs 4611686018427387904: 4611686018427387904 epochs of 3 steps exceed "
                "2^53 steps", cmd);
}

/* ---- case 4: requantization saturates ---- */

/* y = QLinearMatMul(a, 0.1, 0, b, 0.05, 0, y_scale, y_zp), a u8 [2,3] an
 * input, b u8 [3,2] a constant; y_zp 0 as raw data, or y_zp in int32_data
 * (where ONNX stores a uint8 that is not raw: any int32 fits the field). */
static void write_qmatmul_zp(const char *path, float y_scale, int32_t y_zp) {
  ob_model *m = ob_new(13);
  enum { U8 = 2 };
  ob_input(m, "a", U8, 2, (int64_t[]){2, 3}, NULL);
  static const uint8_t b[6] = {1, 2, 3, 4, 5, 6}, zp = 0;
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "b", U8, 2, (int64_t[]){3, 2}, b, 6);
  ob_init_f32(m, "as", 0, NULL, (float[]){0.1f});
  ob_init_f32(m, "bs", 0, NULL, (float[]){0.05f});
  ob_init_f32(m, "ys", 0, NULL, &y_scale);
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "zp", U8, 0, NULL, &zp, 1);
  Onnx__TensorProto *yzp = ob_tensor(m, "yzp", U8, 0, NULL, &zp, 1);
  if (y_zp) {
    yzp->has_raw_data = 0;
    yzp->n_int32_data = 1;
    yzp->int32_data = ob_alloc(m, sizeof(int32_t));
    yzp->int32_data[0] = y_zp;
  }
  m->inits[m->graph.n_initializer++] = yzp;
  const char *in[8] = {"a", "as", "zp", "b", "bs", "zp", "ys", "yzp"};
  ob_node(m, "QLinearMatMul", "qmm", 8, in, 1, (const char *[]){"y"});
  ob_output(m, "y", U8);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void write_qmatmul(const char *path, float y_scale) {
  write_qmatmul_zp(path, y_scale, 0);
}

/* The reproducer: y_scale 1e-11 against 0.1 x 0.05 gives 255
 * everywhere (it gave the zero point, 0) through run and the executable;
 * y_scale 1e6 gives the zero point. */
static void test_requant_saturates(void) {
  char dir[1024], cmd[16384], a[1100];
  tmp_path(dir, sizeof dir, "qmm");
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s/run %s/exe", dir, dir, dir);
  snprintf(a, sizeof a, "%s/a.npy", dir);
  static const uint8_t av[6] = {1, 2, 3, 4, 5, 6};
  dy_tensor *t = dy_tensor_from_data(DY_U8, 2, (int64_t[]){2, 3}, av);
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(a, t, &err), &err);
  dy_tensor_free(t);
  for (int k = 0; k < 2; k++) {
    char model[1100];
    snprintf(model, sizeof model, "%s/q%d.onnx", dir, k);
    write_qmatmul(model, k ? 1e6f : 1e-11f);
    snprintf(cmd, sizeof cmd, "%s run %s --input a=%s --output-dir %s/run > /dev/null",
             DY2STC_PATH, model, a, dir);
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
    snprintf(cmd, sizeof cmd, "%s compile %s " SAN_CFLAGS " -o %s/exe/q > /dev/null && "
             "%s/exe/q --input a=%s --output-dir %s/exe > /dev/null",
             DY2STC_PATH, model, dir, dir, a, dir);
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
    for (int w = 0; w < 2; w++) {
      char y[1200];
      snprintf(y, sizeof y, "%s/%s/y.npy", dir, w ? "exe" : "run");
      dy_tensor *out = NULL;
      DY_ASSERT_OK(dy_npy_read(y, &out, &err), &err);
      CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(out), 4);
      for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(((const uint8_t *)out->data)[i], k ? 0 : 255);
      dy_tensor_free(out);
    }
  }
}

/* ---- case 7: a uint8 zero point of 300 is refused, not wrapped to 44 ---- */

static void test_zero_point_range(void) {
  char dir[1024], model[1100], cmd[4096];
  tmp_path(dir, sizeof dir, "qzp");
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", dir, dir);
  for (int k = 0; k < 3; k++) {
    static const int32_t zp[3] = {300, -1, 255};
    snprintf(model, sizeof model, "%s/zp%d.onnx", dir, k);
    write_qmatmul_zp(model, 1e-3f, zp[k]);
    snprintf(cmd, sizeof cmd, "%s show %s", DY2STC_PATH, model);
    if (k < 2) {
      char want[200];
      snprintf(want, sizeof want, "initializer 'yzp': value %d (element 0) is out of the range of uint8",
               (int)zp[k]);
      expect_cli(1, want, cmd);
    } else { /* 255 is a uint8: the model loads */
      CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s > /dev/null", cmd), 0);
    }
  }
}

/* ---- case 5: every dtype of a C model's input spec ---- */

/* dir/cast.c: y = (f32)x + 0.5 with x declared as dtype. */
static void write_cast_model(const char *path, const char *dtype) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f,
          "#include \"dy_runtime.h\"\n"
          "DY_TO_STATIC(\"x: %s[-1,4]\")\n"
          "static dy_tensor *cast_forward(dy_layer *self, dy_tensor *x) {\n"
          "  return dy_add(dy_cast(x, DY_F32), dy_full(DY_F32, 0, NULL, 0.5));\n"
          "}\n"
          "static dy_tensor *cast_call(dy_layer *self, dy_tensor *const *in, int n) {\n"
          "  return cast_forward(self, in[0]);\n"
          "}\n"
          "static const dy_layer_vtable vt = {.type_name = \"Cast\", .forward = cast_call};\n"
          "DY_MODEL\n"
          "dy_layer *make_cast(void) { return dy_layer_new(sizeof(dy_layer), &vt, \"cast\"); }\n",
          dtype);
  fclose(f);
}

static void test_cfront_dtypes(void) {
  static const struct {
    const char *name;
    dy_dtype t;
  } dts[] = {{"i8", DY_I8}, {"u8", DY_U8}, {"i32", DY_I32}};
  char dir[1024], cmd[16384];
  tmp_path(dir, sizeof dir, "cast");
  for (int k = 0; k < 3; k++) {
    dy_test_sh(NULL, "rm -rf %s && mkdir -p %s/out", dir, dir);
    char src[1100], x[1100], y[1100];
    snprintf(src, sizeof src, "%s/cast.c", dir);
    snprintf(x, sizeof x, "%s/x.npy", dir);
    snprintf(y, sizeof y, "%s/out/y.npy", dir);
    write_cast_model(src, dts[k].name);
    int8_t i8[4] = {-3, 0, 7, 100};
    uint8_t u8[4] = {0, 3, 200, 255};
    int32_t i32[4] = {-70000, 0, 5, 1 << 30};
    const void *data = k == 0 ? (const void *)i8 : k == 1 ? (const void *)u8 : (const void *)i32;
    dy_tensor *t = dy_tensor_from_data(dts[k].t, 2, (int64_t[]){1, 4}, data);
    dy_error err = {0};
    DY_ASSERT_OK(dy_npy_write(x, t, &err), &err);
    dy_tensor_free(t);
    snprintf(cmd, sizeof cmd, "cd %s && %s compile cast.c -o exe > /dev/null && "
             "./exe --input x=x.npy --output-dir out", dir, DY2STC_PATH);
    int rc = dy_test_sh(NULL, "%s", cmd);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
      fprintf(stderr, "\n  %s: %s failed\n", dts[k].name, cmd);
    dy_tensor *out = NULL;
    if (rc || dy_npy_read(y, &out, &err))
      continue;
    CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(out), 4);
    for (int i = 0; i < 4; i++) {
      double want = k == 0 ? i8[i] : k == 1 ? u8[i] : i32[i];
      CU_ASSERT_EQUAL(dy_tensor_f32(out)[i], (float)(want + 0.5));
    }
    dy_tensor_free(out);
  }
}

/* ---- case 6: Paddle attribute lists and dims of the wrong form ---- */

typedef Paddle__Framework__Proto__ProgramDesc PdProgram;

/* conv2d then pool2d, exported to Paddle's bytes and unpacked. */
static PdProgram *paddle_conv_pool(uint8_t **params, size_t *params_n) {
  dy_program *p = dy_test_parse_ok(
      "program {\n  var x : f32[-1,1,6,6] feed 0\n"
      "  var w : f32[2,1,3,3] persistable = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
      "  var c : f32[-1,2,6,6]\n  var m : f32[-1,2,3,3]\n  block 0 parent -1 {\n"
      "    c = conv2d(x, w) {strides = [1, 1], paddings = [1, 1, 1, 1], dilations = [1, 1], "
      "groups = 1}  @m.c:1\n"
      "    m = pool2d(c) {pooling_type = \"max\", ksize = [2, 2], strides = [2, 2], "
      "paddings = [0, 0, 0, 0], ceil_mode = 0, exclusive = 1, global_pooling = 0, "
      "adaptive = 0}  @m.c:2\n  }\n  fetch 0 m\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  uint8_t *m;
  size_t mn;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_save_mem(p, &m, &mn, params, params_n, &err), &err);
  dy_program_free(p);
  PdProgram *prog = paddle__framework__proto__program_desc__unpack(NULL, mn, m);
  free(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(prog);
  return prog;
}

/* The attribute name of op type `op` in block 0 (NULL if none). */
static Paddle__Framework__Proto__OpDesc__Attr *pd_find_attr(PdProgram *prog, const char *op,
                                                            const char *name) {
  Paddle__Framework__Proto__BlockDesc *b = prog->blocks[0];
  for (size_t i = 0; i < b->n_ops; i++)
    for (size_t k = 0; !strcmp(b->ops[i]->type, op) && k < b->ops[i]->n_attrs; k++)
      if (!strcmp(b->ops[i]->attrs[k]->name, name))
        return b->ops[i]->attrs[k];
  return NULL;
}

static Paddle__Framework__Proto__VarType__TensorDesc *pd_find_var(PdProgram *prog,
                                                                  const char *name) {
  Paddle__Framework__Proto__BlockDesc *b = prog->blocks[0];
  for (size_t i = 0; i < b->n_vars; i++)
    if (!strcmp(b->vars[i]->name, name))
      return b->vars[i]->type->lod_tensor->tensor;
  return NULL;
}

/* Load prog's bytes: the load fails and the message holds want. */
static void expect_paddle_error(PdProgram *prog, const uint8_t *params, size_t params_n,
                                const char *want) {
  size_t n = paddle__framework__proto__program_desc__get_packed_size(prog);
  uint8_t *buf = malloc(n ? n : 1);
  paddle__framework__proto__program_desc__pack(prog, buf);
  dy_program *q = NULL;
  dy_error err = {0};
  dy_status s = dy_paddle_load_mem(buf, n, params, params_n, "bad", NULL, &q, &err);
  if (s == DY_OK || !strstr(err.msg, want))
    fprintf(stderr, "\n  want '%s', got %d: %s\n", want, (int)s, err.msg);
  CU_ASSERT_NOT_EQUAL(s, DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
  CU_ASSERT_PTR_NULL(q);
  dy_program_free(q);
  free(buf);
}

static void test_paddle_list_lengths(void) {
  static const struct {
    const char *op, *attr, *want;
    int n;
  } cases[] = {
      {"conv2d", "strides", "strides of length 3, expected 2", 3},
      {"conv2d", "strides", "strides of length 1, expected 2", 1},
      {"conv2d", "dilations", "dilations of length 3, expected 2", 3},
      {"conv2d", "paddings", "paddings of length 3, expected 2 or 4", 3},
      {"conv2d", "paddings", "paddings of length 6, expected 2 or 4", 6},
      {"pool2d", "ksize", "ksize of length 1, expected 2", 1},
      {"pool2d", "strides", "strides of length 1, expected 2", 1},
  };
  static int32_t vals[6] = {4, 1, 3, 1, 1, 1};
  uint8_t *params;
  size_t params_n;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    PdProgram *prog = paddle_conv_pool(&params, &params_n);
    Paddle__Framework__Proto__OpDesc__Attr *a = pd_find_attr(prog, cases[k].op, cases[k].attr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int32_t *saved = a->ints;
    size_t saved_n = a->n_ints;
    a->ints = vals;
    a->n_ints = (size_t)cases[k].n;
    expect_paddle_error(prog, params, params_n, cases[k].want);
    a->ints = saved;
    a->n_ints = saved_n;
    paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
    free(params);
  }
  /* dims: only -1 means unknown, in a parameter's VarDesc and a feed's */
  PdProgram *prog = paddle_conv_pool(&params, &params_n);
  Paddle__Framework__Proto__VarType__TensorDesc *w = pd_find_var(prog, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  w->dims[0] = -5;
  expect_paddle_error(prog, params, params_n, "var 'w' is float32[2,1,3,3] in the params but "
                                              "float32[-5,1,3,3] in the model");
  w->dims[0] = 2;
  Paddle__Framework__Proto__VarType__TensorDesc *x = pd_find_var(prog, "x");
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  x->dims[1] = -5;
  expect_paddle_error(prog, params, params_n, "feed 'x': dim 1 is -5 (a size, or -1 for unknown)");
  paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
  free(params);
}

/* ---- case 15: one policy for an input of another dtype: refused, but a
 * narrower integer widened ---- */

static void test_input_dtype_refused(void) {
  char dir[1024], cmd[16384];
  tmp_path(dir, sizeof dir, "dtype");
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s/out", dir, dir);
  dy_program *p = dy_test_parse_ok("program {\n  var x : f32[-1,2] feed 0\n"
                                   "  var i : i64[3] feed 1\n  var y : f32[-1,2]\n"
                                   "  var j : i64[3]\n  block 0 parent -1 {\n"
                                   "    y = add(x, x)  @m.c:1\n    j = add(i, i)  @m.c:2\n"
                                   "  }\n  fetch 0 y\n  fetch 1 j\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char path[1100];
  dy_error err = {0};
  snprintf(path, sizeof path, "%s/m", dir);
  DY_ASSERT_OK(dy_model_save(p, path, &err), &err);
  dy_program_free(p);
  /* f64 for f32 (refused), i32 for i64 (widened), and the right files */
  double x8[2] = {1, 2};
  int32_t i4[3] = {1, 2, 3};
  float x4[2] = {1, 2};
  int64_t i8[3] = {1, 2, 3};
  static const char *const names[4] = {"x8", "i4", "x4", "i8"};
  const void *data[4] = {x8, i4, x4, i8};
  const char *descr[4] = {"<f8", "<i4", "<f4", "<i8"};
  const size_t bytes[4] = {16, 12, 8, 24};
  for (int k = 0; k < 4; k++) { /* written by hand: dy_npy_write has no f64 */
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[k]);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char h[118];
    int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (%d,%s), }",
                     descr[k], k & 1 ? 3 : 1, k & 1 ? "" : " 2");
    memset(h + n, ' ', sizeof h - (size_t)n - 1);
    h[sizeof h - 1] = '\n';
    fwrite("\x93NUMPY\x01\x00\x76\x00", 1, 10, f);
    fwrite(h, 1, sizeof h, f);
    fwrite(data[k], 1, bytes[k], f);
    fclose(f);
  }
  snprintf(cmd, sizeof cmd, "%s compile %s/m.dymodel " SAN_CFLAGS " -o %s/exe > /dev/null",
           DY2STC_PATH, dir, dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  static const char *const paths[3] = {"%s run %s/m.dymodel --output-dir %s/out",
                                       "%s check %s/m.dymodel", "%s/exe --output-dir %s/out"};
  for (int w = 0; w < 3; w++) {
    char base[9000];
    if (w < 2)
      snprintf(base, sizeof base, paths[w], DY2STC_PATH, dir, dir);
    else
      snprintf(base, sizeof base, paths[w], dir, dir);
    snprintf(cmd, sizeof cmd, "cd %s && %s --input x=x8.npy --input i=i8.npy", dir, base);
    expect_cli(1, "input 'x': x8.npy: dtype '<f8', expected '<f4' (f32)", cmd);
    /* a narrower integer widens (dy_dtype_widens_to): the same on every path */
    snprintf(cmd, sizeof cmd, "cd %s && rm -f out/j.npy && %s --input x=x4.npy --input i=i4.npy "
             "> /dev/null", dir, base);
    CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s", cmd), 0);
    if (w != 1) { /* check writes no outputs */
      dy_tensor *j = NULL;
      snprintf(path, sizeof path, "%s/out/j.npy", dir);
      DY_ASSERT_OK(dy_npy_read(path, &j, &err), &err);
      CU_ASSERT_EQUAL_FATAL(j->type.dtype, DY_I64);
      CU_ASSERT_EQUAL(((int64_t *)j->data)[0] + ((int64_t *)j->data)[2] * 10, 2 + 60);
      dy_tensor_free(j);
    }
    snprintf(cmd, sizeof cmd, "cd %s && %s --input x=x4.npy --input i=i8.npy > /dev/null", dir,
             base);
    CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s", cmd), 0);
  }
}

/* ---- case 17: raw little-endian inputs on every path ---- */

/* A raw .bin input is read by `dy2stc run`, `check` and the executable
 * alike: the batch inferred from the size (3 rows of f32[-1,2]), the same
 * outputs as the .npy of the same data; a size that is no whole number of
 * rows gets the same one line from each. */
static void test_raw_inputs(void) {
  char dir[1024], cmd[16384];
  tmp_path(dir, sizeof dir, "raw");
  save_linear(dir);
  float x[6] = {1, 2, -3, 0.5f, 4, -1};
  char path[1100];
  dy_error err = {0};
  snprintf(path, sizeof path, "%s/x.bin", dir);
  DY_ASSERT_OK(dy_write_file_atomic(path, x, sizeof x, &err), &err);
  snprintf(path, sizeof path, "%s/bad.bin", dir);
  DY_ASSERT_OK(dy_write_file_atomic(path, x, 10, &err), &err);
  snprintf(path, sizeof path, "%s/x.npy", dir);
  dy_tensor *t = dy_tensor_new(DY_F32, 2, (int64_t[]){3, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  memcpy(t->data, x, sizeof x);
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  dy_tensor_free(t);
  snprintf(cmd, sizeof cmd, "%s compile %s/net.dymodel " SAN_CFLAGS " -o %s/netexe > /dev/null",
           DY2STC_PATH, dir, dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  static const char *const outs[3] = {"npy", "run", "exe"};
  static const char *const runs[3] = {"%s run net.dymodel x.npy --output-dir npy",
                                      "%s run net.dymodel x.bin --output-dir run",
                                      "./netexe x.bin --output-dir exe"};
  for (int w = 0; w < 3; w++) {
    char base[9000];
    snprintf(base, sizeof base, runs[w], DY2STC_PATH);
    CU_ASSERT_EQUAL(dy_test_sh(NULL, "cd %s && %s > /dev/null", dir, base), 0);
  }
  dy_tensor *y[3] = {NULL, NULL, NULL};
  for (int w = 0; w < 3; w++) {
    snprintf(path, sizeof path, "%s/%s/y.npy", dir, outs[w]);
    DY_ASSERT_OK(dy_npy_read(path, &y[w], &err), &err);
    CU_ASSERT_FATAL(y[w] && y[w]->type.rank == 2 && y[w]->type.shape[0] == 3);
  }
  /* y = x @ w + b, row 0: (1*0.5 + 2*0.125 + 0.1, 1*-0.25 + 2*1 - 0.1) */
  CU_ASSERT_DOUBLE_EQUAL(((float *)y[1]->data)[0], 0.85, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(((float *)y[1]->data)[1], 1.65, 1e-6);
  for (int w = 1; w < 3; w++)
    CU_ASSERT_EQUAL(memcmp(y[0]->data, y[w]->data, 6 * sizeof(float)), 0);
  for (int w = 0; w < 3; w++)
    dy_tensor_free(y[w]);
  snprintf(cmd, sizeof cmd, "cd %s && %s check net.dymodel x.bin", dir, DY2STC_PATH);
  expect_cli(0, "y: max abs err", cmd);
  const char *msg = "input 'x': bad.bin: 10 bytes is not a whole number of batch rows of f32 "
                    "[-1, 2] (batch at most ";
  snprintf(cmd, sizeof cmd, "cd %s && %s run net.dymodel bad.bin", dir, DY2STC_PATH);
  expect_cli(1, msg, cmd);
  snprintf(cmd, sizeof cmd, "cd %s && ./netexe bad.bin", dir);
  expect_cli(1, msg, cmd);
}

/* ---- cases 11, 12: generated names; the header OUT.c includes ---- */

/* Models named r, w, x, f (R_OK ... of <unistd.h>), e and o, built as
 * executables and as C that a file including <unistd.h> and <fcntl.h>
 * before the header compiles warning-free; --emit c --name mynet -o
 * model_fw writes model_fw.c including "model_fw.h"; a header name an
 * #include cannot spell is refused. */
static void test_generated_names(void) {
  char dir[1024], cmd[16384];
  tmp_path(dir, sizeof dir, "names");
  char lin[1100];
  tmp_path(lin, sizeof lin, "lin");
  save_linear(lin);
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", dir, dir);
  static const char *const names[] = {"r", "w", "x", "f", "o", "s", "errno_model", "sig"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    snprintf(cmd, sizeof cmd,
             "cd %s && %s compile %s/net.dymodel --name %s -o exe_%s > /dev/null && "
             "%s compile %s/net.dymodel --emit c -o %s > /dev/null && "
             "printf '#include <unistd.h>\n#include <fcntl.h>\n#include <errno.h>\n"
             "#include <signal.h>\n#include \"%s.h\"\nint use_%s(void) { return 0; }\n' "
             "> user_%s.c && cc -std=c11 -Wall -Wextra -pedantic -Werror -c %s.c user_%s.c",
             dir, DY2STC_PATH, lin, names[k], names[k], DY2STC_PATH, lin, names[k], names[k],
             names[k], names[k], names[k], names[k]);
    int rc = dy_test_sh(NULL, "%s > %s/log_%s 2>&1", cmd, dir, names[k]);
    if (rc)
      fprintf(stderr, "\n  model %s: %s failed\n", names[k], cmd);
    CU_ASSERT_EQUAL(rc, 0);
  }
  snprintf(cmd, sizeof cmd,
           "cd %s && %s compile %s/net.dymodel --emit c --name mynet -o model_fw", dir,
           DY2STC_PATH, lin);
  expect_cli(0, "wrote model_fw.c model_fw.h model_fw_weights.c", cmd);
  snprintf(cmd, sizeof cmd,
           "cd %s && grep -q '#include \"model_fw.h\"' model_fw.c && "
           "cc -std=c11 -Wall -Wextra -pedantic -Werror -c model_fw.c model_fw_weights.c",
           dir);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(cmd, sizeof cmd, "cd %s && %s compile %s/net.dymodel --emit c --name q -o 'a\"b'",
           dir, DY2STC_PATH, lin);
  expect_cli(1, "header file name 'a\"b.h' has a '\"', '\\' or newline, which an #include "
                "cannot name", cmd);
}

/* ---- case 16: a loop at its bound names the loop and --max-iterations ---- */

static void test_loop_bound_message(void) {
  char dir[1024], cmd[16384];
  tmp_path(dir, sizeof dir, "loop");
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s/out", dir, dir);
  dy_program *p = dy_test_parse_ok(
      "program {\n  var x : f32[-1,4] feed 0\n  var n : f32[1] feed 1\n"
      "  var zero : f32[1] persistable = [0.0]\n  var one : f32[1] persistable = [1.0]\n"
      "  var i_0 : f32[1]\n  var acc_0 : f32[-1,4]\n  var c_0 : bool[1]\n  var i_1 : f32[1]\n"
      "  var acc_1 : f32[-1,4]\n  var i_2 : f32[1]\n  var acc_2 : f32[-1,4]\n"
      "  var i_out : f32[1]\n  var out : f32[-1,4]\n  block 0 parent -1 {\n"
      "    i_out, out = while(zero, x, n, one) {n_carried = 2, cond_block = 1, body_block = 2, "
      "max_iterations = 0}  @loop.c:3\n  }\n"
      "  block 1 parent 0 (i_0, acc_0) {\n    c_0 = less(i_0, n)  @loop.c:4\n    yield c_0\n  }\n"
      "  block 2 parent 0 (i_1, acc_1) {\n    i_2 = add(i_1, one)  @loop.c:5\n"
      "    acc_2 = add(acc_1, acc_1)  @loop.c:6\n    yield i_2, acc_2\n  }\n"
      "  fetch 0 out\n  fetch 1 i_out\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char path[1100];
  dy_error err = {0};
  snprintf(path, sizeof path, "%s/loop", dir);
  DY_ASSERT_OK(dy_model_save(p, path, &err), &err);
  dy_program_free(p);
  snprintf(path, sizeof path, "%s/x.npy", dir);
  float x[4] = {1, 2, 3, 4}, n[1] = {10};
  dy_test_write_f32(path, 2, (int64_t[]){1, 4}, x);
  snprintf(path, sizeof path, "%s/n.npy", dir);
  dy_test_write_f32(path, 1, (int64_t[]){1}, n);
  snprintf(cmd, sizeof cmd, "cd %s && %s compile loop.dymodel --max-iterations 3 " SAN_CFLAGS
           " -o exe > /dev/null", dir, DY2STC_PATH);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(cmd, sizeof cmd, "cd %s && ./exe --input x=x.npy --input n=n.npy --output-dir out",
           dir);
  expect_cli(1, "exe: exe_run: a while loop did not end within its bound of trips (its "
                "max_iterations, else EXE_MAX_ITERATIONS: compile with a larger "
                "--max-iterations); no output written", cmd);
}

/* Paddle 3 PIR files (NAME.json): malformed JSON, a hostile nesting, an
 * unknown pd_op, a missing params file, a directory of the name: one line
 * naming the thing through dy2stc show / run / compile, exit 1. */
static void test_pir_files(void) {
  char dir[2048], path[2200], cmd[16384];
  tmp_path(dir, sizeof dir, "pir");
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s/dir.json", dir, dir);
  const char *head =
      "{\"base_code\":{\"magic\":\"pir\",\"version\":1},\"program\":{\"regions\":[{"
      "\"blocks\":[{\"args\":[],\"ops\":["
      "{\"#\":\"p\",\"A\":[0,1,1,\"w\"],\"O\":{\"%\":1,\"TT\":{\"#\":\"0.t_dtensor\",\"D\":"
      "[{\"#\":\"0.t_f32\"},[4],\"NCHW\",[],0]}}},"
      "{\"#\":\"1.data\",\"A\":[{\"AT\":{\"#\":\"0.a_str\",\"D\":\"x\"},\"N\":\"name\"}],\"I\":[],"
      "\"O\":[{\"%\":2,\"TT\":{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},[-1,4],\"NCHW\","
      "[],0]}}]},{\"#\":\"1.";
  const char *tail =
      "\",\"A\":[],\"I\":[{\"%\":2},{\"%\":1}],\"O\":[{\"%\":3,\"TT\":{\"#\":\"0.t_dtensor\","
      "\"D\":[{\"#\":\"0.t_f32\"},[-1,4],\"NCHW\",[],0]}}]},"
      "{\"#\":\"1.fetch\",\"A\":[{\"AT\":{\"#\":\"0.a_str\",\"D\":\"fetch_name_0\"},\"N\":"
      "\"name\"},{\"AT\":{\"#\":\"0.a_i32\",\"D\":0},\"N\":\"col\"}],\"I\":[{\"%\":3}],\"O\":[]}"
      "]}]}]}}";
  const char *ops[] = {"add", "frobnicate"};
  for (int k = 0; k < 2; k++) {
    snprintf(path, sizeof path, "%s/%s.json", dir, ops[k]);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%s%s%s", head, ops[k], tail);
    fclose(f);
  }
  /* the add program: shown without params, not run without them */
  snprintf(cmd, sizeof cmd, "%s show %s/add.json 2>/dev/null | grep -q 'var w : f32\\[4\\] "
           "persistable'", DY2STC_PATH, dir);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(cmd, sizeof cmd, "%s run %s/add.json --input x=%s/none.npy", DY2STC_PATH, dir, dir);
  expect_cli(1, "no params file", cmd);
  snprintf(cmd, sizeof cmd, "%s compile %s/add.json -o %s/exe", DY2STC_PATH, dir, dir);
  expect_cli(1, "add.pdiparams", cmd);
  snprintf(cmd, sizeof cmd, "%s show %s/frobnicate.json", DY2STC_PATH, dir);
  expect_cli(1, "frobnicate.json: PIR op 2 (pd_op.frobnicate): the op type is not supported",
             cmd);
  /* cut short; nested a million deep (no stack to exhaust); empty; a dir */
  snprintf(cmd, sizeof cmd, "head -c 200 %s/add.json > %s/cut.json && "
           "/usr/bin/python3 -c \"print('['*1000000)\" > %s/deep.json && : > %s/empty.json",
           dir, dir, dir, dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(cmd, sizeof cmd, "%s show %s/cut.json", DY2STC_PATH, dir);
  expect_cli(1, "cut.json: JSON: byte 200 (the end): unterminated string", cmd);
  snprintf(cmd, sizeof cmd, "%s compile %s/deep.json -o %s/exe", DY2STC_PATH, dir, dir);
  expect_cli(1, "deep.json: JSON: byte 64 ('['): arrays/objects nested more than 64", cmd);
  snprintf(cmd, sizeof cmd, "%s run %s/empty.json --input x=%s/none.npy", DY2STC_PATH, dir, dir);
  expect_cli(1, "empty.json: JSON: byte 0 (the end): a value", cmd);
  snprintf(cmd, sizeof cmd, "%s show %s/dir.json", DY2STC_PATH, dir);
  expect_cli(1, "dir.json", cmd);
}

void dy_test_register(void) {
  DY_SUITE("hostile_io");
  DY_TEST(test_read_devices_and_fifos);
  DY_TEST(test_epochs_wrap);
  DY_TEST(test_requant_saturates);
  DY_TEST(test_zero_point_range);
  DY_TEST(test_cfront_dtypes);
  DY_TEST(test_paddle_list_lengths);
  DY_TEST(test_input_dtype_refused);
  DY_TEST(test_raw_inputs);
  DY_TEST(test_generated_names);
  DY_TEST(test_loop_bound_message);
  DY_TEST(test_pir_files);
}
