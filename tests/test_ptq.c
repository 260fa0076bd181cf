/* test_ptq.c - post-training quantization (compiler/quantize/quantize.c,
 * dy_quant.h): what the rewrite makes of a small CNN (conv + batch_norm +
 * relu, max pool, flatten, linear, softmax) and a residual add, the
 * int8 model's error against the float one, per-channel against
 * per-tensor weights, the calibration methods on data with an outlier,
 * --keep-float, the errors, and `dy2stc quantize` (its report, its model
 * equal to the library's, its usage and input errors). The kernels'
 * bit-exactness is test_int8's; the MLPerf Tiny models and the digits
 * accuracy are the ctests mlperf_tiny and digits.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* conv 2->4 3x3 pad 1 + BN + relu, dropout, maxpool 2, flatten, linear
 * 64->5, softmax; the batch norm's statistics from one warm-up batch. */
static dy_tensor *softmax_fwd(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self, (void)n;
  return dy_softmax(in[0], -1);
}
static const dy_layer_vtable softmax_vt = {"Softmax", softmax_fwd, NULL, false};

static dy_program *small_cnn(bool softmax) {
  dy_seed(5);
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, dy_conv2d_layer_new(2, 4, 3, 3, (dy_conv2d_params){.padding = {1, 1, 1, 1}}, true));
  dy_sequential_append(s, dy_batch_norm2d_new(4, 0.0, 1e-5));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_dropout_layer_new(0.25));
  dy_sequential_append(s, dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {2, 2}}));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(64, 5));
  if (softmax)
    dy_sequential_append(s, dy_layer_new(sizeof(dy_layer), &softmax_vt, "softmax"));
  dy_no_grad_begin();
  dy_scope_begin();
  dy_call1(s, dy_randn(4, DY_SHAPE(16, 2, 8, 8)));
  dy_scope_end();
  dy_no_grad_end();
  dy_layer_eval(s);
  dy_program *p = NULL;
  dy_error err = {0};
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 2, 8, 8}};
  DY_ASSERT_OK(dy_program_from_layer(s, &spec, 1, &p, &err), &err);
  dy_layer_free(s);
  return p;
}

/* n batches of 4 N(0,1) inputs shaped like p's feed (batch 4). */
static dy_tensor **calib_set(const dy_program *p, int n) {
  dy_tensor **c = calloc((size_t)n, sizeof *c);
  dy_type t = p->vars[p->feeds[0]]->type;
  t.shape[0] = 4;
  dy_seed(9);
  dy_scope_begin();
  for (int i = 0; i < n; i++)
    c[i] = dy_keep(dy_randn(t.rank, t.shape));
  dy_scope_end();
  return c;
}

static void free_set(dy_tensor **c, int n) {
  for (int i = 0; i < n; i++)
    dy_tensor_free(c[i]);
  free(c);
}

static int count_ops(const dy_program *p, dy_op_kind k) {
  int n = 0;
  for (int i = 0; i < p->blocks[0]->n_ops; i++)
    n += p->blocks[0]->ops[i]->kind == k;
  return n;
}

static const dy_quant_layer *layer_named(const dy_quant_report *r, const char *name) {
  for (int i = 0; i < r->n_layers; i++)
    if (strcmp(r->layers[i].name, name) == 0)
      return &r->layers[i];
  return NULL;
}

static void test_cnn_rewrite_and_error(void) {
  dy_program *p = small_cnn(true), *q = NULL;
  dy_tensor **c = calib_set(p, 4);
  dy_error err = {0};
  dy_quant_report r = {0};
  dy_quant_options o = {.per_channel = true};
  DY_ASSERT_OK(dy_quantize_program(p, c, 4, &o, &q, &r, &err), &err);
  /* conv + bias + BN + relu is one qconv2d; linear + bias one qmatmul;
   * softmax int8; the input quantized once, the output dequantized once
   * (the max pool and flatten move int8 where their kernels take it, else
   * run float between a dequantize and a quantize) */
  CU_ASSERT_EQUAL(count_ops(p, DY_OP_DROPOUT), 1); /* recorded, inference form */
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QCONV2D), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QMATMUL), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QSOFTMAX), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_BATCH_NORM) + count_ops(q, DY_OP_CONV2D) +
                      count_ops(q, DY_OP_MATMUL) + count_ops(q, DY_OP_ADD) +
                      count_ops(q, DY_OP_RELU) + count_ops(q, DY_OP_SOFTMAX) +
                      count_ops(q, DY_OP_DROPOUT),
                  0);
  int borders = count_ops(q, DY_OP_QUANTIZE_LINEAR);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_DEQUANTIZE_LINEAR), borders);
  CU_ASSERT(borders == 1 || borders == 2);
  CU_ASSERT_EQUAL(q->blocks[0]->n_ops, 5 + 2 * borders);
  /* called as p is: same feed and fetch names, f32 */
  CU_ASSERT_STRING_EQUAL(q->vars[q->feeds[0]]->name, "x");
  CU_ASSERT_STRING_EQUAL(q->vars[q->fetches[0]]->name, p->vars[p->fetches[0]]->name);
  CU_ASSERT_EQUAL(q->vars[q->fetches[0]]->type.dtype, DY_F32);
  /* the report: every layer int8, the softmax's qparams fixed, errors small */
  CU_ASSERT_EQUAL(r.n_int8, borders == 1 ? 5 : 3);
  CU_ASSERT_EQUAL(r.n_layers, 5); /* the dropout is no layer */
  CU_ASSERT_EQUAL(r.n_samples, 16);
  const dy_quant_layer *conv = layer_named(&r, "conv2d");
  CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
  CU_ASSERT_STRING_EQUAL(conv->kind, "conv2d+bn+relu");
  CU_ASSERT_EQUAL(conv->zero_point, -128); /* relu: the range starts at 0 */
  CU_ASSERT(conv->cosine > 0.999);
  CU_ASSERT(r.out_cosine > 0.999);
  CU_ASSERT(r.out_max_abs_err < 0.02);
  /* the report is what the executor says: recompute the outputs' error */
  dy_tensor *fo = NULL, *qo = NULL;
  double md = 0;
  for (int b = 0; b < 4; b++) {
    DY_ASSERT_OK(dy_executor_run(p, &c[b], 1, &fo, 1, &err), &err);
    DY_ASSERT_OK(dy_executor_run(q, &c[b], 1, &qo, 1, &err), &err);
    for (int64_t i = 0; i < dy_tensor_numel(fo); i++)
      md = fmax(md, fabs((double)dy_tensor_f32(fo)[i] - dy_tensor_f32(qo)[i]));
    dy_tensor_free(fo);
    dy_tensor_free(qo);
  }
  CU_ASSERT_EQUAL(md, r.out_max_abs_err);
  /* a .dymodel round trip keeps it runnable */
  uint8_t *buf = NULL;
  size_t len = 0;
  DY_ASSERT_OK(dy_dymodel_encode(q, &buf, &len, &err), &err);
  free(buf);
  dy_quant_report_free(&r);
  free_set(c, 4);
  dy_program_free(p);
  dy_program_free(q);
}

/* Channels whose (folded) weights differ 1000x in size: one scale per
 * tensor crushes the small channel to 0 and +-1, one per channel keeps
 * its full [-127, 127]. */
static int max_abs_q(const dy_program *q, int64_t from, int64_t n) {
  int v = dy_program_find_var(q, "conv2d.weight.q"), m = 0;
  CU_ASSERT_FATAL(v >= 0);
  const int8_t *w = q->vars[v]->data;
  for (int64_t i = from; i < from + n; i++)
    m = abs(w[i]) > m ? abs(w[i]) : m;
  return m;
}

static void test_per_channel_beats_per_tensor(void) {
  dy_program *p = small_cnn(false), *q1 = NULL, *q2 = NULL;
  int g = dy_program_find_var(p, "batch_norm2d.weight");
  CU_ASSERT_FATAL(g >= 0);
  ((float *)p->vars[g]->data)[0] *= 1e-3f; /* BN's gamma: folded into channel 0 */
  dy_tensor **c = calib_set(p, 2);
  dy_error err = {0};
  dy_quant_report r1 = {0}, r2 = {0};
  DY_ASSERT_OK(dy_quantize_program(p, c, 2, &(dy_quant_options){.per_channel = true}, &q1, &r1, &err), &err);
  DY_ASSERT_OK(dy_quantize_program(p, c, 2, &(dy_quant_options){.per_channel = false}, &q2, &r2, &err), &err);
  int s1 = dy_program_find_var(q1, "conv2d.weight.q.scale");
  int s2 = dy_program_find_var(q2, "conv2d.weight.q.scale");
  CU_ASSERT_FATAL(s1 >= 0 && s2 >= 0);
  CU_ASSERT_EQUAL(dy_type_numel(&q1->vars[s1]->type), 4);
  CU_ASSERT_EQUAL(dy_type_numel(&q2->vars[s2]->type), 1);
  /* channel 0's scale is about 1000x smaller per channel */
  CU_ASSERT(((float *)q1->vars[s1]->data)[0] < 0.01f * ((float *)q2->vars[s2]->data)[0]);
  /* channel 0 is 2 x 3 x 3 weights; every channel reaches 127 per channel */
  for (int o = 0; o < 4; o++)
    CU_ASSERT_EQUAL(max_abs_q(q1, 18 * o, 18), 127);
  CU_ASSERT(max_abs_q(q2, 0, 18) <= 1);
  CU_ASSERT_EQUAL(max_abs_q(q2, 0, 72), 127);
  dy_quant_report_free(&r1);
  dy_quant_report_free(&r2);
  free_set(c, 2);
  dy_program_free(p);
  dy_program_free(q1);
  dy_program_free(q2);
}

/* The input quantizer's scale under method m (percentile 99.9). */
static float input_scale(const dy_program *p, dy_tensor **c, int n, dy_calib_method m) {
  dy_program *q = NULL;
  dy_error err = {0};
  dy_quant_options o = {.per_channel = true, .method = m, .percentile = 99.9};
  float s = 0;
  DY_ASSERT_OK(dy_quantize_program(p, c, n, &o, &q, NULL, &err), &err);
  int v = dy_program_find_var(q, "x.q.scale");
  CU_ASSERT(v >= 0);
  if (v >= 0)
    s = *(float *)q->vars[v]->data;
  dy_program_free(q);
  return s;
}

/* Inputs N(0,1) with one value of 1000: minmax spans the outlier, the
 * 99.9th percentile leaves it out. Inputs n^3 (heavy tails): mse's range
 * is never wider than minmax's (for 8 bits and a few thousand values the
 * rounding error saved by clipping rarely pays for the clipped tail, so it
 * may be the same). */
static void test_methods_clip_outliers(void) {
  dy_program *p = small_cnn(false);
  dy_tensor **c = calib_set(p, 4);
  dy_tensor_f32(c[1])[7] = 1000.0f;
  float mm = input_scale(p, c, 4, DY_CALIB_MINMAX), pc = input_scale(p, c, 4, DY_CALIB_PERCENTILE);
  CU_ASSERT(mm > 1000.0f / 255.0f * 0.99f);
  CU_ASSERT(pc < 0.1f * mm);
  dy_tensor_f32(c[1])[7] = 0.5f;
  for (int b = 0; b < 4; b++)
    for (int64_t i = 0; i < dy_tensor_numel(c[b]); i++) {
      float v = dy_tensor_f32(c[b])[i];
      dy_tensor_f32(c[b])[i] = v * v * v;
    }
  float mm3 = input_scale(p, c, 4, DY_CALIB_MINMAX), ms3 = input_scale(p, c, 4, DY_CALIB_MSE);
  CU_ASSERT(ms3 <= mm3);
  CU_ASSERT(ms3 > 0.2f * mm3);
  free_set(c, 4);
  dy_program_free(p);
}

static void test_keep_float(void) {
  dy_program *p = small_cnn(true), *q = NULL;
  dy_tensor **c = calib_set(p, 2);
  dy_error err = {0};
  dy_quant_report r = {0};
  dy_quant_options o = {.per_channel = true, .keep_float = "first,last"};
  DY_ASSERT_OK(dy_quantize_program(p, c, 2, &o, &q, &r, &err), &err);
  /* the conv (first) and the linear (last) stay float; pool and flatten
   * then have float inputs and stay float, and so does the softmax */
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_CONV2D), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_MATMUL), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QCONV2D) + count_ops(q, DY_OP_QMATMUL), 0);
  CU_ASSERT_EQUAL(r.n_int8, 0);
  CU_ASSERT_EQUAL(r.out_max_abs_err, 0.0);
  dy_quant_report_free(&r);
  dy_program_free(q);
  /* a name, and an unknown one */
  o.keep_float = "linear";
  DY_ASSERT_OK(dy_quantize_program(p, c, 2, &o, &q, NULL, &err), &err);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QCONV2D), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_MATMUL), 1);
  dy_program_free(q);
  o.keep_float = "first,nosuch";
  CU_ASSERT_NOT_EQUAL(dy_quantize_program(p, c, 2, &o, &q, NULL, &err), DY_OK);
  CU_ASSERT_PTR_NULL(q);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no layer 'nosuch'"));
  free_set(c, 2);
  dy_program_free(p);
}

/* y = relu(x + relu(conv(x))): the add of two activations is a qadd */
typedef struct {
  dy_layer base;
  dy_layer *conv;
} res_layer;

static dy_tensor *res_fwd(dy_layer *self, dy_tensor *const *in, int n) {
  (void)n;
  dy_tensor *y = dy_relu(dy_call1(((res_layer *)self)->conv, in[0]));
  return dy_relu(dy_add(in[0], y));
}
static const dy_layer_vtable res_vt = {"Res", res_fwd, NULL, false};

static void test_residual_add(void) {
  dy_seed(3);
  res_layer *l = (res_layer *)dy_layer_new(sizeof *l, &res_vt, "res");
  l->conv = dy_layer_add_child(&l->base, dy_conv2d_layer_new(3, 3, 3, 3, (dy_conv2d_params){.padding = {1, 1, 1, 1}}, true));
  dy_program *p = NULL, *q = NULL;
  dy_error err = {0};
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 3, 6, 6}};
  DY_ASSERT_OK(dy_program_from_layer(&l->base, &spec, 1, &p, &err), &err);
  dy_tensor **c = calib_set(p, 3);
  dy_quant_report r = {0};
  DY_ASSERT_OK(dy_quantize_program(p, c, 3, &(dy_quant_options){.per_channel = true}, &q, &r, &err), &err);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QADD), 1);
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QCONV2D), 1);
  /* x is quantized once, read by both the conv and the add */
  CU_ASSERT_EQUAL(count_ops(q, DY_OP_QUANTIZE_LINEAR), 1);
  CU_ASSERT(r.out_cosine > 0.999);
  dy_quant_report_free(&r);
  free_set(c, 3);
  dy_program_free(p);
  dy_program_free(q);
  dy_layer_free(&l->base);
}

static void test_errors(void) {
  dy_program *p = small_cnn(false), *q = NULL;
  dy_error err = {0};
  dy_quant_options o = {0};
  CU_ASSERT_NOT_EQUAL(dy_quantize_program(p, NULL, 0, &o, &q, NULL, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "calibration set is empty"));
  /* a calibration batch of the wrong shape names the batch */
  dy_scope_begin();
  dy_tensor *bad = dy_keep(dy_randn(4, DY_SHAPE(2, 3, 8, 8)));
  dy_scope_end();
  CU_ASSERT_NOT_EQUAL(dy_quantize_program(p, &bad, 1, &o, &q, NULL, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "calibration batch 0"));
  CU_ASSERT_PTR_NULL(q);
  dy_tensor_free(bad);
  dy_program_free(p);
}

/* ---- the command line ---- */

#define WORK DY_BUILD_DIR "/ptq_work"

/* dy2stc quantize ARGS: exit status want, and (for an error) one line on
 * stderr holding needle. */
static void cli(int want, const char *args, const char *needle) {
  int rc = dy_test_sh(NULL, "%s quantize %s >" WORK "/out.txt 2>" WORK "/err.txt", DY2STC_PATH,
                      args);
  char *e = dy_test_slurp(WORK "/err.txt");
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  int lines = 0;
  for (const char *s = e; *s; s++)
    lines += *s == '\n';
  bool ok = rc == want && (want == 0 ? lines == 0 : lines == 1 && strstr(e, needle));
  if (!ok)
    fprintf(stderr, "\n  quantize %s: exit %d (want %d), stderr: %s", args, rc, want, e);
  CU_ASSERT(ok);
  free(e);
}

static void test_cli(void) {
  mkdir(WORK, 0777);
  mkdir(WORK "/calib", 0777);
  mkdir(WORK "/bad", 0777);
  mkdir(WORK "/empty", 0777);
  dy_program *p = small_cnn(true);
  dy_tensor **c = calib_set(p, 2);
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_save(p, WORK "/cnn", &err), &err);
  DY_ASSERT_OK(dy_npy_write(WORK "/calib/a.npy", c[0], &err), &err);
  DY_ASSERT_OK(dy_npy_write(WORK "/calib/b.npy", c[1], &err), &err);
  dy_scope_begin();
  DY_ASSERT_OK(dy_npy_write(WORK "/bad/a.npy", dy_randn(4, DY_SHAPE(2, 3, 8, 8)), &err), &err);
  dy_scope_end();
  remove(WORK "/q.dymodel");
  cli(0, WORK "/cnn.dymodel --calibrate " WORK "/calib --per-channel --method mse -o " WORK "/q",
      NULL);
  /* the report on stdout, the model written and equal to the library's */
  char *out = dy_test_slurp(WORK "/out.txt");
  CU_ASSERT(out && strstr(out, "conv2d+bn+relu") && strstr(out, "outputs: max |err|"));
  free(out);
  dy_program *q = NULL, *lib = NULL;
  DY_ASSERT_OK(dy_model_load(WORK "/q", &q, &err), &err);
  dy_quant_options o = {.per_channel = true, .method = DY_CALIB_MSE};
  DY_ASSERT_OK(dy_quantize_program(p, c, 2, &o, &lib, NULL, &err), &err);
  char *tq = dy_program_to_text(q), *tl = dy_program_to_text(lib);
  CU_ASSERT(tq && tl && strcmp(tq, tl) == 0);
  free(tq);
  free(tl);
  dy_program_free(q);
  dy_program_free(lib);
  /* usage errors: exit 2 */
  cli(2, WORK "/cnn.dymodel -o " WORK "/q2", "--calibrate DIR");
  cli(2, WORK "/cnn.dymodel --calibrate " WORK "/calib --method best -o " WORK "/q2",
      "minmax, percentile or mse");
  cli(2, WORK "/cnn.dymodel --calibrate " WORK "/calib --percentile 20 -o " WORK "/q2",
      "--percentile");
  /* bad input: one line, exit 1, nothing written */
  cli(1, WORK "/cnn.dymodel --calibrate " WORK "/nosuch -o " WORK "/q2", "cannot open");
  cli(1, WORK "/cnn.dymodel --calibrate " WORK "/empty -o " WORK "/q2", "no .npy file");
  cli(1, WORK "/cnn.dymodel --calibrate " WORK "/bad -o " WORK "/q2", "but input 'x' is");
  cli(1, WORK "/cnn.dymodel --calibrate " WORK "/calib --keep-float conv9 -o " WORK "/q2",
      "no layer 'conv9'");
  struct stat st;
  CU_ASSERT_NOT_EQUAL(stat(WORK "/q2.dymodel", &st), 0);
  free_set(c, 2);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("ptq");
  DY_TEST(test_cnn_rewrite_and_error);
  DY_TEST(test_per_channel_beats_per_tensor);
  DY_TEST(test_methods_clip_outliers);
  DY_TEST(test_keep_float);
  DY_TEST(test_residual_add);
  DY_TEST(test_errors);
  DY_TEST(test_cli);
}
