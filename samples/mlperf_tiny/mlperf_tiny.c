/* mlperf_tiny.c - the four MLPerf Tiny (v1.x, closed division) reference
 * architectures, built with seeded weights through the eager API and saved
 * as float models, each with an input and calibration data:
 *
 *   resnet8   image classification, x f32[-1,3,32,32] -> 10 (softmax):
 *             conv 16 3x3 + BN + relu; three residual stages of
 *             [conv 3x3 + BN + relu, conv 3x3 + BN] + shortcut, relu, with
 *             16, 32, 64 filters (the 2nd and 3rd stride 2, their shortcut
 *             a 1x1 conv stride 2); avgpool 8x8; dense 10
 *   dscnn     keyword spotting, x f32[-1,1,49,10] (MFCC) -> 12 (softmax):
 *             conv 64 10x4 stride 2 + BN + relu; 4 x [depthwise 3x3 + BN +
 *             relu, pointwise 64 + BN + relu]; avgpool 24x5 (the
 *             reference's pool over the 25x5 map); dense 12
 *   mobilenet visual wake words, MobileNetV1 alpha 0.25,
 *             x f32[-1,3,96,96] -> 2 (softmax): conv 8 3x3 stride 2 + BN +
 *             relu; 13 depthwise-separable blocks (16, 32, 32, 64, 64,
 *             128 x 6, 256, 256 filters; stride 2 at 32, 64, 128, 256);
 *             avgpool 3x3; dense 2
 *   autoenc   anomaly detection, x f32[-1,640] -> 640: dense 128 + BN +
 *             relu x 4, dense 8 + BN + relu, dense 128 + BN + relu x 4,
 *             dense 640
 *
 * As in the Keras references: "same" padding (TensorFlow's: the extra row
 * or column of an even total goes at the bottom/right), every conv and
 * dense with a bias, BN after each conv/dense except the shortcut and the
 * last dense, dropout left out (the identity at inference). Layout NCHW.
 * Weights are the layers' seeded initialisation; the batch norms' running
 * statistics are those of one warm-up batch (momentum 0), so each layer's
 * output is normalised as in a trained network, not the trivial 0 and 1.
 *
 *   ./mlperf_tiny [--out DIR] [--only NAME] [--quantize]
 *
 * writes, per model, DIR/NAME.dymodel + .dyparams (eval semantics),
 * DIR/NAME_x.npy (one input, batch 1), DIR/NAME_out.npy (its eager
 * output) and DIR/NAME_calib/cal_K.npy (8 batches of 4 inputs drawn like
 * the input: images U[0,1), MFCC and spectrogram features N(0,1)), the
 * calibration set for `dy2stc quantize`. With --quantize it also makes
 * DIR/NAME_int8 itself, through the library call dy_quantize_program on
 * the traced Program (per-channel, minmax), and prints the report.
 * samples/mlperf_tiny/build.sh turns them into Cortex-M4F firmware.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_quant.h"   /* dy_quantize_program (compiler/quantize/) */
#include "dy_runtime.h"

enum { N_CALIB = 8, CALIB_BATCH = 4, WARMUP_BATCH = 16 };

static int die(const char *what, const dy_error *err) {
  char line[1024] = "failed";
  if (err)
    dy_error_format(err, line, sizeof line);
  fprintf(stderr, "mlperf_tiny: %s: %s\n", what, line);
  return 1;
}

/* ---- building blocks ---- */

/* TensorFlow's "same" padding of one axis of size *n (updated to the
 * output size) for kernel k and stride s: before = total / 2. */
static void same_pad(int64_t *n, int64_t k, int64_t s, int64_t *before, int64_t *after) {
  int64_t out = (*n + s - 1) / s, total = (out - 1) * s + k - *n;
  if (total < 0)
    total = 0;
  *before = total / 2;
  *after = total - *before;
  *n = out;
}

/* conv k x k (kh x kw), stride s, "same", on an h x w map (updated);
 * groups = cin makes it depthwise. */
static dy_layer *conv_same(int64_t cin, int64_t cout, int64_t kh, int64_t kw, int64_t s,
                           int64_t *h, int64_t *w, bool depthwise) {
  dy_conv2d_params p = {.stride = {s, s}, .groups = depthwise ? cin : 1};
  same_pad(h, kh, s, &p.padding[0], &p.padding[2]);
  same_pad(w, kw, s, &p.padding[1], &p.padding[3]);
  return dy_conv2d_layer_new(cin, cout, kh, kw, p, true);
}

static dy_layer *bn(int64_t c) { return dy_batch_norm2d_new(c, 0.0, 1e-3); }

/* A final softmax as a layer, so the models end as the references do. */
static dy_tensor *softmax_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self, (void)n;
  return dy_softmax(in[0], -1);
}

static const dy_layer_vtable softmax_vt = {"Softmax", softmax_forward, NULL, false};

static dy_layer *softmax_new(void) { return dy_layer_new(sizeof(dy_layer), &softmax_vt, "softmax"); }

/* ---- ResNet-8 ---- */

typedef struct {
  dy_layer base;
  dy_layer *conv1, *bn1, *conv2, *bn2, *shortcut; /* shortcut NULL: identity */
} res_stage;

static dy_tensor *res_stage_forward(dy_layer *self, dy_tensor *const *in, int n) {
  res_stage *r = (res_stage *)self;
  (void)n;
  dy_tensor *x = in[0];
  dy_tensor *y = dy_relu(dy_call1(r->bn1, dy_call1(r->conv1, x)));
  y = dy_call1(r->bn2, dy_call1(r->conv2, y));
  dy_tensor *sc = r->shortcut ? dy_call1(r->shortcut, x) : x;
  return dy_relu(dy_add(sc, y));
}

static const dy_layer_vtable res_stage_vt = {"ResidualStage", res_stage_forward, NULL, false};

static dy_layer *res_stage_new(int64_t cin, int64_t cout, int64_t stride, int64_t *h,
                               int64_t *w) {
  res_stage *r = (res_stage *)dy_layer_new(sizeof *r, &res_stage_vt, "stage");
  if (!r)
    return NULL;
  dy_layer *b = &r->base;
  int64_t h0 = *h, w0 = *w;
  r->conv1 = dy_layer_add_child(b, conv_same(cin, cout, 3, 3, stride, h, w, false));
  r->bn1 = dy_layer_add_child(b, bn(cout));
  int64_t h1 = *h, w1 = *w;
  r->conv2 = dy_layer_add_child(b, conv_same(cout, cout, 3, 3, 1, &h1, &w1, false));
  r->bn2 = dy_layer_add_child(b, bn(cout));
  if (stride != 1 || cin != cout)
    r->shortcut = dy_layer_add_child(b, conv_same(cin, cout, 1, 1, stride, &h0, &w0, false));
  return b;
}

static dy_layer *resnet8_new(void) {
  int64_t h = 32, w = 32;
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, conv_same(3, 16, 3, 3, 1, &h, &w, false));
  dy_sequential_append(s, bn(16));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, res_stage_new(16, 16, 1, &h, &w));
  dy_sequential_append(s, res_stage_new(16, 32, 2, &h, &w));
  dy_sequential_append(s, res_stage_new(32, 64, 2, &h, &w));
  dy_sequential_append(s, dy_avg_pool2d_layer_new((dy_pool2d_params){.kernel = {h, w}}));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(64, 10));
  dy_sequential_append(s, softmax_new());
  return s;
}

/* ---- DS-CNN and MobileNetV1: depthwise-separable blocks ---- */

/* depthwise 3x3 stride s + BN + relu, pointwise cout + BN + relu */
static dy_layer *ds_block(int64_t cin, int64_t cout, int64_t s, int64_t *h, int64_t *w) {
  dy_layer *b = dy_sequential_new();
  dy_sequential_append(b, conv_same(cin, cin, 3, 3, s, h, w, true));
  dy_sequential_append(b, bn(cin));
  dy_sequential_append(b, dy_relu_layer_new());
  dy_sequential_append(b, conv_same(cin, cout, 1, 1, 1, h, w, false));
  dy_sequential_append(b, bn(cout));
  dy_sequential_append(b, dy_relu_layer_new());
  return b;
}

static dy_layer *dscnn_new(void) {
  int64_t h = 49, w = 10;
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, conv_same(1, 64, 10, 4, 2, &h, &w, false));
  dy_sequential_append(s, bn(64));
  dy_sequential_append(s, dy_relu_layer_new());
  for (int i = 0; i < 4; i++)
    dy_sequential_append(s, ds_block(64, 64, 1, &h, &w));
  /* the reference pools (49/2, 10/2) = (24, 5) over the 25 x 5 map */
  dy_sequential_append(s, dy_avg_pool2d_layer_new((dy_pool2d_params){.kernel = {49 / 2, 10 / 2}}));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(64, 12));
  dy_sequential_append(s, softmax_new());
  return s;
}

static dy_layer *mobilenet_new(void) {
  static const int64_t filters[13] = {16, 32, 32, 64, 64, 128, 128, 128, 128, 128, 128, 256, 256};
  static const int64_t strides[13] = {1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1};
  int64_t h = 96, w = 96, c = 8;
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, conv_same(3, c, 3, 3, 2, &h, &w, false));
  dy_sequential_append(s, bn(c));
  dy_sequential_append(s, dy_relu_layer_new());
  for (int i = 0; i < 13; i++) {
    dy_sequential_append(s, ds_block(c, filters[i], strides[i], &h, &w));
    c = filters[i];
  }
  dy_sequential_append(s, dy_avg_pool2d_layer_new((dy_pool2d_params){.kernel = {h, w}}));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(c, 2));
  dy_sequential_append(s, softmax_new());
  return s;
}

/* ---- FC autoencoder ---- */

static dy_layer *autoenc_new(void) {
  static const int64_t widths[10] = {128, 128, 128, 128, 8, 128, 128, 128, 128, 640};
  dy_layer *s = dy_sequential_new();
  int64_t in = 640;
  for (int i = 0; i < 10; i++) {
    dy_sequential_append(s, dy_linear_new(in, widths[i]));
    if (i < 9) {
      dy_sequential_append(s, bn(widths[i]));
      dy_sequential_append(s, dy_relu_layer_new());
    }
    in = widths[i];
  }
  return s;
}

/* ---- driver ---- */

typedef struct {
  const char *name;
  dy_layer *(*make)(void);
  uint64_t seed;
  bool uniform;   /* inputs U[0,1) (images), else N(0,1) (features) */
  int rank;
  int64_t shape[4]; /* shape[0] is the batch */
} model_def;

static dy_tensor *draw(const model_def *m, int64_t batch) {
  int64_t shape[4];
  memcpy(shape, m->shape, sizeof shape);
  shape[0] = batch;
  return m->uniform ? dy_rand(m->rank, shape) : dy_randn(m->rank, shape);
}

/* DIR/NAME... into path (PATH_BYTES); nonzero (said on stderr) when too long. */
enum { PATH_BYTES = 4200 };
static int make_path(char *path, const char *fmt, const char *dir, const char *name,
                     const char *what) {
  if (snprintf(path, PATH_BYTES, fmt, dir, name, what) < PATH_BYTES)
    return 0;
  fprintf(stderr, "mlperf_tiny: the path %s/%s%s is too long\n", dir, name, what);
  return 1;
}

static int write_npy(const char *dir, const char *name, const char *what, const dy_tensor *t) {
  char path[PATH_BYTES];
  dy_error err = {0};
  if (make_path(path, "%s/%s%s.npy", dir, name, what))
    return 1;
  if (dy_npy_write(path, t, &err))
    return die("writing", &err);
  return 0;
}

/* --quantize: the library call itself (what `dy2stc quantize --per-channel`
 * does with the saved files): the traced Program and the calibration
 * batches in, the int8 Program out, saved as DIR/NAME_int8. */
static int quantize(dy_layer *net, const dy_input_spec *spec, dy_tensor *const *calib,
                    const char *name, const char *dir) {
  char path[PATH_BYTES];
  dy_error err = {0};
  dy_program *p = NULL, *q = NULL;
  dy_quant_report rep = {0};
  dy_quant_options o = {.per_channel = true, .method = DY_CALIB_MINMAX};
  dy_status s = dy_program_from_layer(net, spec, 1, &p, &err);
  if (!s)
    s = dy_quantize_program(p, calib, N_CALIB, &o, &q, &rep, &err);
  if (!s && make_path(path, "%s/%s%s", dir, name, "_int8"))
    s = dy_error_set(&err, DY_STATUS_INVALID_ARGUMENT, "the path is too long");
  if (!s)
    s = dy_model_save(q, path, &err);
  if (!s) {
    printf("%s int8:\n", name);
    dy_quant_report_print(&rep, stdout);
  }
  dy_quant_report_free(&rep);
  dy_program_free(p);
  dy_program_free(q);
  return s ? die(name, &err) : 0;
}

static int build(const model_def *m, const char *dir, bool quant) {
  char path[PATH_BYTES];
  dy_error err = {0};
  dy_seed(m->seed);
  dy_layer *net = m->make();
  if (!net || dy_last_error())
    return die(m->name, dy_last_error());
  /* one warm-up batch in train mode sets the running statistics */
  dy_no_grad_begin();
  dy_scope_begin();
  dy_call1(net, draw(m, WARMUP_BATCH));
  dy_scope_end();
  dy_layer_eval(net);
  int rc = 0;
  dy_scope_begin();
  dy_tensor *x = draw(m, 1), *out = dy_call1(net, x);
  if (!out)
    rc = die(m->name, dy_last_error());
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = m->rank};
  memcpy(spec.shape, m->shape, sizeof m->shape);
  spec.shape[0] = -1;
  rc = rc || make_path(path, "%s/%s%s", dir, m->name, "");
  if (!rc && dy_jit_save_ex(net, &spec, 1, path, DY_SAVE_EVAL, &err))
    rc = die(m->name, &err);
  rc = rc || write_npy(dir, m->name, "_x", x) || write_npy(dir, m->name, "_out", out);
  dy_scope_end();
  rc = rc || make_path(path, "%s/%s%s", dir, m->name, "_calib");
  struct stat st;
  if (!rc && mkdir(path, 0777) && (stat(path, &st) || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "mlperf_tiny: cannot make %s\n", path);
    rc = 1;
  }
  dy_tensor *calib[N_CALIB] = {0};
  for (int k = 0; k < N_CALIB && !rc; k++) {
    char name[64];
    snprintf(name, sizeof name, "cal_%d", k);
    dy_scope_begin();
    calib[k] = dy_keep(draw(m, CALIB_BATCH));
    dy_scope_end();
    rc = write_npy(path, name, "", calib[k]);
  }
  if (!rc && quant)
    rc = quantize(net, &spec, calib, m->name, dir);
  for (int k = 0; k < N_CALIB; k++)
    dy_tensor_free(calib[k]);
  dy_no_grad_end();
  dy_layer_free(net);
  if (!rc)
    printf("mlperf_tiny: wrote %s/%s.dymodel, %s_x.npy, %s_out.npy, %s_calib/ (%d x %d)\n",
           dir, m->name, m->name, m->name, m->name, N_CALIB, CALIB_BATCH);
  return rc;
}

int main(int argc, char **argv) {
  const char *dir = ".", *only = NULL;
  bool quant = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--quantize") == 0)
      quant = true;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else {
      fprintf(stderr, "usage: mlperf_tiny [--out DIR] [--only resnet8|dscnn|mobilenet|autoenc] "
                      "[--quantize]\n");
      return 2;
    }
  }
  static const model_def defs[] = {
      {"resnet8", resnet8_new, 81, true, 4, {1, 3, 32, 32}},
      {"dscnn", dscnn_new, 82, false, 4, {1, 1, 49, 10}},
      {"mobilenet", mobilenet_new, 83, true, 4, {1, 3, 96, 96}},
      {"autoenc", autoenc_new, 84, false, 2, {1, 640}},
  };
  int found = 0, rc = 0;
  for (size_t i = 0; i < sizeof defs / sizeof defs[0] && !rc; i++)
    if (!only || strcmp(only, defs[i].name) == 0) {
      found = 1;
      rc = build(&defs[i], dir, quant);
    }
  if (!found) {
    fprintf(stderr, "mlperf_tiny: no model '%s' (resnet8, dscnn, mobilenet, autoenc)\n", only);
    return 2;
  }
  return rc;
}
