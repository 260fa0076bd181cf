/* onnx_encoder.h - a transformer encoder as an ONNX model in the form
 * PyTorch's exporter writes it, and a float64 reference of it (test_dims).
 *
 * The model is nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model 32,
 * nhead 4, dim_feedforward 64, dropout 0, batch_first False), num_layers 2)
 * exported in eval mode with torch.onnx.export(opset_version=13,
 * dynamic_axes={"src": {0: "seq", 1: "batch"}}): the input src is
 * [seq, batch, 32] with two dim_params, and F.multi_head_attention_forward
 * becomes the exporter's shape chains on batch * heads:
 *
 *   tgt_len = Gather(Shape(src), 0); bsz = Gather(Shape(src), 1)
 *   qkv = Add(MatMul(src, in_proj_weight^T), in_proj_bias)      [S, B, 96]
 *   q, k, v = Split(qkv, [32, 32, 32], axis -1)
 *   q = Transpose(Reshape(q, Concat(Unsqueeze(tgt_len),
 *                                   Unsqueeze(Mul(bsz, 4)), [8])), [1, 0, 2])
 *   k, v: the same with Gather(Shape(k), 0) for the length   [B*4, S, 8]
 *   a = Softmax(MatMul(Div(q, sqrt(8)), Transpose(k, [0, 2, 1])), -1)
 *   o = Transpose(MatMul(a, v), [1, 0, 2])                         [S, B*4, 8]
 *   o = Reshape(o, Concat(Unsqueeze(Mul(tgt_len, bsz)), [32]))      [S*B, 32]
 *   o = Gemm(o, out_proj.weight, out_proj.bias, transB=1)
 *   o = Reshape(o, Concat(Unsqueeze(tgt_len), Unsqueeze(bsz),
 *                         Unsqueeze(Gather(Shape(o), 1))))           [S, B, 32]
 *   x = LayerNorm(src + o); x = LayerNorm(x + FFN(x))   (LayerNorm decomposed
 *   at opset 13: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add)
 *
 * The weights are a fixed pseudo-random draw (enc_weights_init); enc_ref
 * runs the same computation in double.
 */
#ifndef DY_TEST_ONNX_ENCODER_H
#define DY_TEST_ONNX_ENCODER_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../samples/onnx/onnx_build.h"

enum { ENC_E = 32, ENC_H = 4, ENC_HD = 8, ENC_FF = 64, ENC_LAYERS = 2 };

typedef struct {
  float in_w[3 * ENC_E][ENC_E], in_b[3 * ENC_E]; /* PyTorch layout [out, in] */
  float out_w[ENC_E][ENC_E], out_b[ENC_E];
  float w1[ENC_FF][ENC_E], b1[ENC_FF], w2[ENC_E][ENC_FF], b2[ENC_E];
  float g1[ENC_E], be1[ENC_E], g2[ENC_E], be2[ENC_E];
} enc_layer;

typedef struct {
  enc_layer l[ENC_LAYERS];
} enc_weights;

static inline float enc_rand(uint32_t *s, float scale) {
  *s = *s * 1664525u + 1013904223u;
  return ((float)(*s >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
}

static inline void enc_fill(float *x, int n, uint32_t *s, float scale, float bias) {
  for (int i = 0; i < n; i++)
    x[i] = bias + enc_rand(s, scale);
}

static inline void enc_weights_init(enc_weights *w) {
  uint32_t s = 12345;
  for (int k = 0; k < ENC_LAYERS; k++) {
    enc_layer *l = &w->l[k];
    enc_fill(&l->in_w[0][0], 3 * ENC_E * ENC_E, &s, 0.3f, 0);
    enc_fill(l->in_b, 3 * ENC_E, &s, 0.1f, 0);
    enc_fill(&l->out_w[0][0], ENC_E * ENC_E, &s, 0.3f, 0);
    enc_fill(l->out_b, ENC_E, &s, 0.1f, 0);
    enc_fill(&l->w1[0][0], ENC_FF * ENC_E, &s, 0.3f, 0);
    enc_fill(l->b1, ENC_FF, &s, 0.1f, 0);
    enc_fill(&l->w2[0][0], ENC_E * ENC_FF, &s, 0.2f, 0);
    enc_fill(l->b2, ENC_E, &s, 0.1f, 0);
    enc_fill(l->g1, ENC_E, &s, 0.2f, 1);
    enc_fill(l->be1, ENC_E, &s, 0.1f, 0);
    enc_fill(l->g2, ENC_E, &s, 0.2f, 1);
    enc_fill(l->be2, ENC_E, &s, 0.1f, 0);
  }
}

/* A node with name "<prefix>/<op>_<n>" as the exporter names them. */
typedef struct {
  ob_model *m;
  int n;
  char tmp[64][48];
  int nt;
} enc_gen;

static inline const char *enc_t(enc_gen *g, const char *stem) {
  char *t = g->tmp[g->nt++ % 64];
  snprintf(t, 48, "%s_%d", stem, g->n++);
  return ob_str(g->m, t);
}

static inline Onnx__NodeProto *enc_node(enc_gen *g, const char *op, int n_in,
                                        const char *const *in, const char *out) {
  char name[64];
  snprintf(name, sizeof name, "/%s_%d", op, g->n++);
  return ob_node(g->m, op, name, n_in, in, 1, (const char *[]){out});
}

/* An i64 constant through a Constant node (the exporter's way). */
static inline const char *enc_const_i64(enc_gen *g, int rank, int64_t n, const int64_t *v) {
  const char *o = enc_t(g, "const");
  Onnx__NodeProto *c = enc_node(g, "Constant", 0, NULL, o);
  ob_attr_tensor_i64(g->m, c, "value", rank, (int64_t[]){n}, v);
  return o;
}

static inline const char *enc_unsq(enc_gen *g, const char *x) {
  const char *o = enc_t(g, "unsq");
  enc_node(g, "Unsqueeze", 2, (const char *[]){x, enc_const_i64(g, 1, 1, (int64_t[]){0})}, o);
  return o;
}

/* Gather(Shape(x), i): a scalar. */
static inline const char *enc_dim(enc_gen *g, const char *x, int64_t i) {
  const char *sh = enc_t(g, "shape"), *o = enc_t(g, "dim");
  enc_node(g, "Shape", 1, (const char *[]){x}, sh);
  Onnx__NodeProto *n = enc_node(g, "Gather", 2, (const char *[]){sh, enc_const_i64(g, 0, 1,
                                (int64_t[]){i})}, o);
  ob_attr_i(g->m, n, "axis", 0);
  return o;
}

static inline const char *enc_concat(enc_gen *g, int n, const char *const *in) {
  const char *o = enc_t(g, "cat");
  Onnx__NodeProto *c = enc_node(g, "Concat", n, in, o);
  ob_attr_i(g->m, c, "axis", 0);
  return o;
}

static inline const char *enc_bin(enc_gen *g, const char *op, const char *a, const char *b) {
  const char *o = enc_t(g, op);
  enc_node(g, op, 2, (const char *[]){a, b}, o);
  return o;
}

static inline const char *enc_transpose(enc_gen *g, const char *x, int r, const int64_t *perm) {
  const char *o = enc_t(g, "tr");
  Onnx__NodeProto *n = enc_node(g, "Transpose", 1, (const char *[]){x}, o);
  ob_attr_ints(g->m, n, "perm", r, perm);
  return o;
}

static inline const char *enc_f32(enc_gen *g, const char *name, int rank, const int64_t *dims,
                                  const float *data) {
  ob_init_f32(g->m, name, rank, dims, data);
  return ob_str(g->m, name);
}

/* W [out, in] as the exporter stores a Linear's weight for MatMul: W^T. */
static inline const char *enc_wt(enc_gen *g, const char *name, int out, int in, const float *w) {
  static float t[ENC_FF * 3 * ENC_E];
  for (int i = 0; i < out; i++)
    for (int j = 0; j < in; j++)
      t[j * out + i] = w[i * in + j];
  return enc_f32(g, name, 2, (int64_t[]){in, out}, t);
}

/* Decomposed LayerNorm over the last axis (opset 13). */
static inline const char *enc_layer_norm(enc_gen *g, const char *x, const char *gamma,
                                         const char *beta) {
  const char *m = enc_t(g, "mean"), *d, *v = enc_t(g, "var"), *y;
  Onnx__NodeProto *n = enc_node(g, "ReduceMean", 1, (const char *[]){x}, m);
  ob_attr_ints(g->m, n, "axes", 1, (int64_t[]){-1});
  d = enc_bin(g, "Sub", x, m);
  const char *sq = enc_bin(g, "Pow", d, "two");
  n = enc_node(g, "ReduceMean", 1, (const char *[]){sq}, v);
  ob_attr_ints(g->m, n, "axes", 1, (int64_t[]){-1});
  const char *ve = enc_bin(g, "Add", v, "eps");
  const char *sd = enc_t(g, "sqrt");
  enc_node(g, "Sqrt", 1, (const char *[]){ve}, sd);
  y = enc_bin(g, "Div", d, sd);
  y = enc_bin(g, "Mul", y, gamma);
  return enc_bin(g, "Add", y, beta);
}

/* [S, B*4, 8] -> view(len, bsz * heads, 8).transpose(0, 1) */
static inline const char *enc_heads(enc_gen *g, const char *x, const char *len,
                                    const char *bh) {
  const char *shape = enc_concat(g, 3, (const char *[]){enc_unsq(g, len), enc_unsq(g, bh),
                                 enc_const_i64(g, 1, 1, (int64_t[]){ENC_HD})});
  const char *r = enc_bin(g, "Reshape", x, shape);
  return enc_transpose(g, r, 3, (int64_t[]){1, 0, 2});
}

/* Write the model to path, src [seq, batch, 32] with seq and batch as
 * dim_params (seq, batch 0) or static sizes (the static export); 0 on
 * success. */
static inline int enc_write_sized(const char *path, const enc_weights *w, int64_t seq,
                                  int64_t batch) {
  ob_model *m = ob_new(13);
  enc_gen g = {.m = m};
  char nm[64];
  const char *pars[3] = {"seq", "batch", NULL};
  m->inputs[m->graph.n_input++] = ob_value_info(
      m, "src", OB_F32, 3, (int64_t[]){seq ? seq : -1, batch ? batch : -2, ENC_E}, NULL);
  /* per-dim params: seq, batch */
  for (int i = 0; i < 2 && !seq; i++)
    m->inputs[0]->type->tensor_type->shape->dim[i]->dim_param = ob_str(m, pars[i]);
  ob_init_f32(m, "two", 0, NULL, (float[]){2.0f});
  ob_init_f32(m, "eps", 0, NULL, (float[]){1e-5f});
  ob_init_f32(m, "scale", 0, NULL, (float[]){sqrtf((float)ENC_HD)});
  ob_init_i64(m, "split", 1, (int64_t[]){3}, (int64_t[]){ENC_E, ENC_E, ENC_E});
  const char *x = "src";
  for (int k = 0; k < ENC_LAYERS; k++) {
    const enc_layer *l = &w->l[k];
#define W(field, what) (snprintf(nm, sizeof nm, "layers.%d.%s", k, what), nm)
    const char *tgt_len = enc_dim(&g, x, 0), *bsz = enc_dim(&g, x, 1);
    const char *qkv = enc_bin(&g, "MatMul", x, enc_wt(&g, W(in_w, "self_attn.in_proj_weight_t"),
                              3 * ENC_E, ENC_E, &l->in_w[0][0]));
    qkv = enc_bin(&g, "Add", qkv, enc_f32(&g, W(in_b, "self_attn.in_proj_bias"), 1,
                                          (int64_t[]){3 * ENC_E}, l->in_b));
    const char *q = enc_t(&g, "q"), *kk = enc_t(&g, "k"), *v = enc_t(&g, "v");
    char sname[64];
    snprintf(sname, sizeof sname, "/layers.%d/self_attn/Split", k);
    Onnx__NodeProto *sp = ob_node(m, "Split", sname, 2, (const char *[]){qkv, "split"}, 3,
                                  (const char *[]){q, kk, v});
    ob_attr_i(m, sp, "axis", -1);
    const char *bh = enc_bin(&g, "Mul", bsz, enc_const_i64(&g, 0, 1, (int64_t[]){ENC_H}));
    q = enc_heads(&g, q, tgt_len, bh);
    kk = enc_heads(&g, kk, enc_dim(&g, kk, 0), bh);
    v = enc_heads(&g, v, enc_dim(&g, v, 0), bh);
    q = enc_bin(&g, "Div", q, "scale");
    const char *att = enc_bin(&g, "MatMul", q, enc_transpose(&g, kk, 3, (int64_t[]){0, 2, 1}));
    const char *sm = enc_t(&g, "softmax");
    Onnx__NodeProto *n = enc_node(&g, "Softmax", 1, (const char *[]){att}, sm);
    ob_attr_i(m, n, "axis", -1);
    const char *o = enc_bin(&g, "MatMul", sm, v);
    o = enc_transpose(&g, o, 3, (int64_t[]){1, 0, 2});
    o = enc_bin(&g, "Reshape", o, enc_concat(&g, 2, (const char *[]){
                    enc_unsq(&g, enc_bin(&g, "Mul", tgt_len, bsz)),
                    enc_const_i64(&g, 1, 1, (int64_t[]){ENC_E})}));
    const char *gm = enc_t(&g, "gemm");
    n = enc_node(&g, "Gemm", 3, (const char *[]){o,
                 enc_f32(&g, W(out_w, "self_attn.out_proj.weight"), 2,
                         (int64_t[]){ENC_E, ENC_E}, &l->out_w[0][0]),
                 enc_f32(&g, W(out_b, "self_attn.out_proj.bias"), 1, (int64_t[]){ENC_E},
                         l->out_b)}, gm);
    ob_attr_i(m, n, "transB", 1);
    o = enc_bin(&g, "Reshape", gm, enc_concat(&g, 3, (const char *[]){
                    enc_unsq(&g, tgt_len), enc_unsq(&g, bsz), enc_unsq(&g, enc_dim(&g, gm, 1))}));
    const char *g1 = enc_f32(&g, W(g1, "norm1.weight"), 1, (int64_t[]){ENC_E}, l->g1);
    const char *b1 = enc_f32(&g, W(be1, "norm1.bias"), 1, (int64_t[]){ENC_E}, l->be1);
    x = enc_layer_norm(&g, enc_bin(&g, "Add", x, o), g1, b1);
    const char *h = enc_bin(&g, "MatMul", x, enc_wt(&g, W(w1, "linear1.weight_t"), ENC_FF, ENC_E,
                                                    &l->w1[0][0]));
    h = enc_bin(&g, "Add", h, enc_f32(&g, W(b1, "linear1.bias"), 1, (int64_t[]){ENC_FF}, l->b1));
    const char *hr = enc_t(&g, "relu");
    enc_node(&g, "Relu", 1, (const char *[]){h}, hr);
    h = enc_bin(&g, "MatMul", hr, enc_wt(&g, W(w2, "linear2.weight_t"), ENC_E, ENC_FF,
                                         &l->w2[0][0]));
    h = enc_bin(&g, "Add", h, enc_f32(&g, W(b2, "linear2.bias"), 1, (int64_t[]){ENC_E}, l->b2));
    const char *g2 = enc_f32(&g, W(g2, "norm2.weight"), 1, (int64_t[]){ENC_E}, l->g2);
    const char *b2 = enc_f32(&g, W(be2, "norm2.bias"), 1, (int64_t[]){ENC_E}, l->be2);
    x = enc_layer_norm(&g, enc_bin(&g, "Add", x, h), g2, b2);
#undef W
  }
  Onnx__NodeProto *idn = ob_node(m, "Identity", "/out", 1, (const char *[]){x}, 1,
                                 (const char *[]){"out"});
  (void)idn;
  ob_output(m, "out", OB_F32);
  int rc = ob_save(m, path);
  ob_free(m);
  return rc;
}

/* The export with dynamic_axes: seq and batch dim_params. */
static inline int enc_write(const char *path, const enc_weights *w) {
  return enc_write_sized(path, w, 0, 0);
}

/* The encoder in double: src [S, B, E] (C order) -> out [S, B, E]. */
static inline void enc_ref(const enc_weights *w, const float *src, int S, int B, double *out) {
  enum { E = ENC_E };
  int n = S * B;
  double *x = malloc(sizeof(double) * (size_t)n * E), *qkv = malloc(sizeof(double) * (size_t)n * 3 * E);
  double *att = malloc(sizeof(double) * (size_t)n * E), *h = malloc(sizeof(double) * (size_t)n * ENC_FF);
  double *p = malloc(sizeof(double) * (size_t)S);
  for (int i = 0; i < n * E; i++)
    x[i] = src[i];
  for (int k = 0; k < ENC_LAYERS; k++) {
    const enc_layer *l = &w->l[k];
    for (int r = 0; r < n; r++) /* row r = s * B + b */
      for (int o = 0; o < 3 * E; o++) {
        double a = l->in_b[o];
        for (int j = 0; j < E; j++)
          a += x[r * E + j] * l->in_w[o][j];
        qkv[r * 3 * E + o] = a;
      }
    for (int b = 0; b < B; b++)
      for (int hh = 0; hh < ENC_H; hh++)
        for (int s = 0; s < S; s++) {
          const double *q = &qkv[(s * B + b) * 3 * E + hh * ENC_HD];
          double mx = -1e300, sum = 0;
          for (int t = 0; t < S; t++) {
            const double *kv = &qkv[(t * B + b) * 3 * E + E + hh * ENC_HD];
            double a = 0;
            for (int d = 0; d < ENC_HD; d++)
              a += q[d] / sqrt((double)ENC_HD) * kv[d];
            p[t] = a;
            mx = a > mx ? a : mx;
          }
          for (int t = 0; t < S; t++)
            sum += p[t] = exp(p[t] - mx);
          for (int d = 0; d < ENC_HD; d++) {
            double a = 0;
            for (int t = 0; t < S; t++)
              a += p[t] / sum * qkv[(t * B + b) * 3 * E + 2 * E + hh * ENC_HD + d];
            att[(s * B + b) * E + hh * ENC_HD + d] = a;
          }
        }
    for (int pass = 0; pass < 2; pass++) {
      for (int r = 0; r < n; r++) {
        double y[ENC_E], mean = 0, var = 0;
        for (int o = 0; o < E; o++) {
          double a;
          if (pass == 0) {
            a = l->out_b[o];
            for (int j = 0; j < E; j++)
              a += att[r * E + j] * l->out_w[o][j];
          } else {
            a = l->b2[o];
            for (int j = 0; j < ENC_FF; j++)
              a += h[r * ENC_FF + j] * l->w2[o][j];
          }
          y[o] = x[r * E + o] + a;
          mean += y[o] / E;
        }
        for (int o = 0; o < E; o++)
          var += (y[o] - mean) * (y[o] - mean) / E;
        for (int o = 0; o < E; o++)
          x[r * E + o] = (y[o] - mean) / sqrt(var + 1e-5) * (pass ? l->g2[o] : l->g1[o]) +
                         (pass ? l->be2[o] : l->be1[o]);
      }
      if (pass == 0)
        for (int r = 0; r < n; r++)
          for (int o = 0; o < ENC_FF; o++) {
            double a = l->b1[o];
            for (int j = 0; j < E; j++)
              a += x[r * E + j] * l->w1[o][j];
            h[r * ENC_FF + o] = a > 0 ? a : 0;
          }
    }
  }
  memcpy(out, x, sizeof(double) * (size_t)n * E);
  free(x);
  free(qkv);
  free(att);
  free(h);
  free(p);
}

#endif
