/* layers_attention.c - multi-head self-attention built from primitives.
 *
 * Paddle's nn.MultiHeadAttention for self-attention (query = key = value):
 *
 *   q, k, v = x Wq + bq, x Wk + bk, x Wv + bv          x: [N, S, E]
 *   split heads: [N, S, H, D] -> [N, H, S, D]           D = E / H
 *   a = softmax(q k^T / sqrt(D), axis -1)               [N, H, S, S]
 *   o = (a v) -> [N, S, H, D] -> [N, S, E]
 *   out = o Wo + bo
 *
 * Every step is an op of the table (matmul with transpose_y, scale,
 * softmax, reshape with 0 for the batch, transpose), so the layer traces
 * into a Program with a dynamic batch and compiles like any other; the
 * fusion passes turn the projections into fused_matmul kernels and the
 * k transpose into a flag.
 */
#include <math.h>
#include <string.h>

#include "dy_runtime_internal.h"

typedef struct {
  dy_layer base;
  int64_t embed_dim, num_heads;
  dy_layer *q, *k, *v, *out;
} mha;

static dy_tensor *split_heads(const mha *m, dy_tensor *x, dy_srcloc at) {
  int64_t d = m->embed_dim / m->num_heads;
  dy_tensor *r = dy_reshape_at(x, 4, DY_SHAPE(0, 0, m->num_heads, d), at);
  return dy_transpose_at(r, 4, DY_SHAPE(0, 2, 1, 3), at);
}

static dy_tensor *mha_forward(dy_layer *self, dy_tensor *const *in, int n) {
  mha *m = (mha *)self;
  dy_srcloc at = dy_layer_caller();
  if (n != 1)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, at,
                   "MultiHeadAttention '%s' takes 1 input (self-attention), got %d",
                   self->name, n);
  dy_tensor *x = in[0];
  if (x->type.rank != 3 || x->type.shape[2] != m->embed_dim) {
    char t[128];
    return dy_fail(DY_STATUS_SHAPE_MISMATCH, at,
                   "MultiHeadAttention '%s': input %s is not [batch, seq, %lld]",
                   self->name, dy_type_str(&x->type, t, sizeof t), (long long)m->embed_dim);
  }
  int64_t d = m->embed_dim / m->num_heads;
  dy_tensor *q = split_heads(m, dy_layer_call_at(m->q, &x, 1, at), at);
  dy_tensor *k = split_heads(m, dy_layer_call_at(m->k, &x, 1, at), at);
  dy_tensor *v = split_heads(m, dy_layer_call_at(m->v, &x, 1, at), at);
  dy_tensor *scores = dy_scale_at(dy_matmul_at(q, k, false, true, at),
                                  1.0f / sqrtf((float)d), 0.0f, true, at);
  dy_tensor *attn = dy_softmax_at(scores, -1, at);
  dy_tensor *o = dy_transpose_at(dy_matmul_at(attn, v, false, false, at), 4,
                                 DY_SHAPE(0, 2, 1, 3), at);
  o = dy_reshape_at(o, 3, DY_SHAPE(0, 0, m->embed_dim), at);
  return dy_layer_call_at(m->out, &o, 1, at);
}

static const dy_layer_vtable mha_vt = {"MultiHeadAttention", mha_forward, NULL, false};

dy_layer *dy_multihead_attention_new(int64_t embed_dim, int64_t num_heads) {
  if (embed_dim < 1 || num_heads < 1 || embed_dim % num_heads) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
            "MultiHeadAttention: embed_dim %lld is not a multiple of num_heads %lld",
            (long long)embed_dim, (long long)num_heads);
    return NULL;
  }
  mha *m = (mha *)dy_layer_new(sizeof *m, &mha_vt, "attention");
  if (!m)
    return NULL;
  m->embed_dim = embed_dim;
  m->num_heads = num_heads;
  dy_layer *lin[4];
  const char *names[4] = {"q_proj", "k_proj", "v_proj", "out_proj"};
  for (int i = 0; i < 4; i++) {
    lin[i] = dy_linear_new(embed_dim, embed_dim);
    if (lin[i])
      snprintf(lin[i]->name, sizeof lin[i]->name, "%s", names[i]);
    if (!dy_layer_add_child_at(&m->base, lin[i], DY_INHERIT)) {
      dy_layer_free(&m->base);
      return NULL;
    }
  }
  m->q = lin[0];
  m->k = lin[1];
  m->v = lin[2];
  m->out = lin[3];
  return &m->base;
}
