/* make_cnn.c - writes the ONNX sample: a small CNN with batch norm, made
 * here (no downloads, no Python), plus an input and the reference output
 * computed by plain loops in this file (independent of dy2stc's kernels).
 *
 *   input.1 [N,3,8,8] -> Conv 3x3 (8) -> BatchNormalization -> Relu
 *     -> MaxPool 2x2 -> Conv 3x3 (16) -> BatchNormalization -> Relu
 *     -> GlobalAveragePool
 *     -> Reshape to [N, -1] by Shape -> Gather -> Unsqueeze -> Concat, the
 *        way PyTorch exports x.view(x.size(0), -1)
 *     -> Gemm (transB) 10 -> Softmax -> "probs" [N,10]
 *
 * N is a dim_param: the batch stays dynamic in dy2stc. Weights come from a
 * fixed-seed generator, so the files are the same on every run.
 *
 *   make_cnn OUTDIR     writes OUTDIR/cnn.onnx, input.npy (batch 2) and
 *                       expected.npy
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dy_runtime.h"
#include "onnx_build.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float uniform(float lo, float hi) { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  uint64_t r = rng * 0x2545F4914F6CDD1Dull;
  return lo + (hi - lo) * (float)((r >> 40) / 16777216.0);
}
static void fill(float *a, int n, float lo, float hi) {
  for (int i = 0; i < n; i++)
    a[i] = uniform(lo, hi);
}

enum { B = 2, C0 = 3, H = 8, C1 = 8, C2 = 16, K = 10 };
static float w1[C1][C0][3][3], b1[C1], s1[C1], o1[C1], m1[C1], v1[C1];
static float w2[C2][C1][3][3], b2[C2], s2[C2], o2[C2], m2[C2], v2[C2];
static float wf[K][C2], bf[K];

/* conv 3x3 pad 1 + batch norm (eps 1e-5) + relu, on [c_in][h][h] */
static void conv_bn_relu(int cin, int cout, int h, const float *in, const float *w,
                         const float *b, const float *s, const float *o, const float *m,
                         const float *v, float *out) {
  for (int co = 0; co < cout; co++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < h; x++) {
        double acc = b[co];
        for (int ci = 0; ci < cin; ci++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int yy = y + ky - 1, xx = x + kx - 1;
              if (yy >= 0 && yy < h && xx >= 0 && xx < h)
                acc += (double)in[(ci * h + yy) * h + xx] * w[((co * cin + ci) * 3 + ky) * 3 + kx];
            }
        double z = (acc - m[co]) / sqrt((double)v[co] + 1e-5) * s[co] + o[co];
        out[(co * h + y) * h + x] = (float)(z > 0 ? z : 0);
      }
}

static void reference(const float *x, float *probs) {
  float a[C1][H][H], p[C1][H / 2][H / 2], c[C2][H / 2][H / 2];
  conv_bn_relu(C0, C1, H, x, &w1[0][0][0][0], b1, s1, o1, m1, v1, &a[0][0][0]);
  for (int ch = 0; ch < C1; ch++)
    for (int y = 0; y < H / 2; y++)
      for (int xx = 0; xx < H / 2; xx++) {
        float mx = a[ch][2 * y][2 * xx];
        for (int k = 1; k < 4; k++)
          mx = fmaxf(mx, a[ch][2 * y + k / 2][2 * xx + k % 2]);
        p[ch][y][xx] = mx;
      }
  conv_bn_relu(C1, C2, H / 2, &p[0][0][0], &w2[0][0][0][0], b2, s2, o2, m2, v2, &c[0][0][0]);
  double g[C2], z[K], zmax = -1e30, sum = 0;
  for (int ch = 0; ch < C2; ch++) {
    g[ch] = 0;
    for (int i = 0; i < (H / 2) * (H / 2); i++)
      g[ch] += (&c[ch][0][0])[i];
    g[ch] /= (H / 2) * (H / 2);
  }
  for (int k = 0; k < K; k++) {
    z[k] = bf[k];
    for (int ch = 0; ch < C2; ch++)
      z[k] += g[ch] * wf[k][ch];
    zmax = z[k] > zmax ? z[k] : zmax;
  }
  for (int k = 0; k < K; k++)
    sum += exp(z[k] - zmax);
  for (int k = 0; k < K; k++)
    probs[k] = (float)(exp(z[k] - zmax) / sum);
}

static void bn_params(ob_model *m, const char *pfx, int c, float *s, float *o, float *mu,
                      float *v) {
  fill(s, c, 0.5f, 1.5f);
  fill(o, c, -0.2f, 0.2f);
  fill(mu, c, -0.1f, 0.1f);
  fill(v, c, 0.5f, 2.0f);
  char n[64];
  const float *arr[] = {s, o, mu, v};
  const char *sfx[] = {"weight", "bias", "running_mean", "running_var"};
  for (int i = 0; i < 4; i++) {
    snprintf(n, sizeof n, "%s.%s", pfx, sfx[i]);
    ob_init_f32(m, n, 1, (int64_t[]){c}, arr[i]);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_cnn OUTDIR\n");
    return 2;
  }
  const char *dir = argv[1];
  fill(&w1[0][0][0][0], C1 * C0 * 9, -0.4f, 0.4f);
  fill(b1, C1, -0.1f, 0.1f);
  fill(&w2[0][0][0][0], C2 * C1 * 9, -0.2f, 0.2f);
  fill(b2, C2, -0.1f, 0.1f);
  fill(&wf[0][0], K * C2, -0.5f, 0.5f);
  fill(bf, K, -0.1f, 0.1f);

  ob_model *m = ob_new(13);
  ob_input(m, "input.1", OB_F32, 4, (int64_t[]){-1, C0, H, H}, "N");
  ob_init_f32(m, "conv1.weight", 4, (int64_t[]){C1, C0, 3, 3}, &w1[0][0][0][0]);
  ob_init_f32(m, "conv1.bias", 1, (int64_t[]){C1}, b1);
  bn_params(m, "bn1", C1, s1, o1, m1, v1);
  ob_init_f32(m, "conv2.weight", 4, (int64_t[]){C2, C1, 3, 3}, &w2[0][0][0][0]);
  ob_init_f32(m, "conv2.bias", 1, (int64_t[]){C2}, b2);
  bn_params(m, "bn2", C2, s2, o2, m2, v2);
  ob_init_f32(m, "fc.weight", 2, (int64_t[]){K, C2}, &wf[0][0]);
  ob_init_f32(m, "fc.bias", 1, (int64_t[]){K}, bf);
  ob_init_i64(m, "minus_one", 1, (int64_t[]){1}, (int64_t[]){-1});

  int64_t pads[] = {1, 1, 1, 1}, k3[] = {3, 3}, k2[] = {2, 2};
  Onnx__NodeProto *n;
  n = ob_node(m, "Conv", "/conv1/Conv", 3, (const char *[]){"input.1", "conv1.weight", "conv1.bias"},
              1, (const char *[]){"/conv1/Conv_output_0"});
  ob_attr_ints(m, n, "kernel_shape", 2, k3);
  ob_attr_ints(m, n, "pads", 4, pads);
  n = ob_node(m, "BatchNormalization", "/bn1/BatchNormalization", 5,
              (const char *[]){"/conv1/Conv_output_0", "bn1.weight", "bn1.bias", "bn1.running_mean",
                               "bn1.running_var"},
              1, (const char *[]){"/bn1/BatchNormalization_output_0"});
  ob_attr_f(m, n, "epsilon", 1e-5f);
  ob_node(m, "Relu", "/relu1/Relu", 1, (const char *[]){"/bn1/BatchNormalization_output_0"}, 1,
          (const char *[]){"/relu1/Relu_output_0"});
  n = ob_node(m, "MaxPool", "/pool/MaxPool", 1, (const char *[]){"/relu1/Relu_output_0"}, 1,
              (const char *[]){"/pool/MaxPool_output_0"});
  ob_attr_ints(m, n, "kernel_shape", 2, k2);
  ob_attr_ints(m, n, "strides", 2, k2);
  n = ob_node(m, "Conv", "/conv2/Conv", 3,
              (const char *[]){"/pool/MaxPool_output_0", "conv2.weight", "conv2.bias"}, 1,
              (const char *[]){"/conv2/Conv_output_0"});
  ob_attr_ints(m, n, "kernel_shape", 2, k3);
  ob_attr_ints(m, n, "pads", 4, pads);
  n = ob_node(m, "BatchNormalization", "/bn2/BatchNormalization", 5,
              (const char *[]){"/conv2/Conv_output_0", "bn2.weight", "bn2.bias", "bn2.running_mean",
                               "bn2.running_var"},
              1, (const char *[]){"/bn2/BatchNormalization_output_0"});
  ob_attr_f(m, n, "epsilon", 1e-5f);
  ob_node(m, "Relu", "/relu2/Relu", 1, (const char *[]){"/bn2/BatchNormalization_output_0"}, 1,
          (const char *[]){"/relu2/Relu_output_0"});
  ob_node(m, "GlobalAveragePool", "/gap/GlobalAveragePool", 1,
          (const char *[]){"/relu2/Relu_output_0"}, 1, (const char *[]){"/gap/GlobalAveragePool_output_0"});
  /* x.view(x.size(0), -1), as PyTorch exports it */
  ob_node(m, "Shape", "/Shape", 1, (const char *[]){"/gap/GlobalAveragePool_output_0"}, 1,
          (const char *[]){"/Shape_output_0"});
  n = ob_node(m, "Constant", "/Constant", 0, NULL, 1, (const char *[]){"/Constant_output_0"});
  ob_attr_tensor_i64(m, n, "value", 0, NULL, (int64_t[]){0});
  n = ob_node(m, "Gather", "/Gather", 2, (const char *[]){"/Shape_output_0", "/Constant_output_0"},
              1, (const char *[]){"/Gather_output_0"});
  ob_attr_i(m, n, "axis", 0);
  n = ob_node(m, "Constant", "/Constant_1", 0, NULL, 1, (const char *[]){"/Constant_1_output_0"});
  ob_attr_tensor_i64(m, n, "value", 1, (int64_t[]){1}, (int64_t[]){0});
  ob_node(m, "Unsqueeze", "/Unsqueeze", 2, (const char *[]){"/Gather_output_0", "/Constant_1_output_0"},
          1, (const char *[]){"/Unsqueeze_output_0"});
  n = ob_node(m, "Concat", "/Concat", 2, (const char *[]){"/Unsqueeze_output_0", "minus_one"}, 1,
              (const char *[]){"/Concat_output_0"});
  ob_attr_i(m, n, "axis", 0);
  ob_node(m, "Reshape", "/Reshape", 2,
          (const char *[]){"/gap/GlobalAveragePool_output_0", "/Concat_output_0"}, 1,
          (const char *[]){"/Reshape_output_0"});
  n = ob_node(m, "Gemm", "/fc/Gemm", 3, (const char *[]){"/Reshape_output_0", "fc.weight", "fc.bias"},
              1, (const char *[]){"/fc/Gemm_output_0"});
  ob_attr_i(m, n, "transB", 1);
  n = ob_node(m, "Softmax", "/Softmax", 1, (const char *[]){"/fc/Gemm_output_0"}, 1,
              (const char *[]){"probs"});
  ob_attr_i(m, n, "axis", 1);
  ob_output(m, "probs", OB_F32);

  char path[4096];
  snprintf(path, sizeof path, "%s/cnn.onnx", dir);
  int rc = ob_save(m, path);
  ob_free(m);

  /* an input of batch 2 and the reference output */
  static float x[B][C0][H][H], probs[B][K];
  fill(&x[0][0][0][0], B * C0 * H * H, -1.0f, 1.0f);
  for (int b = 0; b < B; b++)
    reference(&x[b][0][0][0], probs[b]);
  dy_error err = {0};
  dy_tensor *tx = dy_tensor_from_data(DY_F32, 4, (int64_t[]){B, C0, H, H}, x);
  dy_tensor *tp = dy_tensor_from_data(DY_F32, 2, (int64_t[]){B, K}, probs);
  snprintf(path, sizeof path, "%s/input.npy", dir);
  rc |= dy_npy_write(path, tx, &err) != DY_OK;
  snprintf(path, sizeof path, "%s/expected.npy", dir);
  rc |= dy_npy_write(path, tp, &err) != DY_OK;
  dy_tensor_free(tx);
  dy_tensor_free(tp);
  if (rc)
    fprintf(stderr, "make_cnn: writing %s failed\n", dir);
  return rc;
}
