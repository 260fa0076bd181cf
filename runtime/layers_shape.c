/* layers_shape.c - layers built on the shape op family: Embedding.
 *
 * Embedding is Paddle's nn.Embedding: a learned table, looked up with
 * gather along axis 0, so ids [B, T] give [B, T, dim]. An id out of range
 * is an error naming the id (eager and executor) or NAME_ERR_INDEX (the
 * compiled model), never a read outside the table.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

typedef struct {
  dy_layer base;
  dy_tensor *weight;   /* [num_embeddings, embedding_dim] */
} embedding;

static dy_tensor *embedding_forward(dy_layer *self, dy_tensor *const *in, int n) {
  embedding *e = (embedding *)self;
  if (n != 1)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, dy_layer_caller(),
                   "Embedding '%s' takes 1 input (the ids), got %d", self->name, n);
  return dy_gather_at(e->weight, in[0], 0, dy_layer_caller());
}

static const dy_layer_vtable embedding_vt = {"Embedding", embedding_forward, NULL, false};

dy_layer *dy_embedding_new(int64_t num_embeddings, int64_t embedding_dim,
                           int64_t padding_idx) {
  if (num_embeddings < 1 || embedding_dim < 1 || padding_idx < -1 ||
      padding_idx >= num_embeddings) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
            "Embedding: bad sizes %lld x %lld or padding_idx %lld",
            (long long)num_embeddings, (long long)embedding_dim,
            (long long)padding_idx);
    return NULL;
  }
  embedding *e = (embedding *)dy_layer_new(sizeof *e, &embedding_vt, "embedding");
  if (!e)
    return NULL;
  /* a parameter owned by the layer, not by any open scope */
  dy_type t = {.dtype = DY_F32, .rank = 2, .shape = {num_embeddings, embedding_dim}};
  dy_tensor *w = dy_tensor_alloc(&t, true);
  if (!w) {
    dy_layer_free(&e->base);
    dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "Embedding: out of memory");
    return NULL;
  }
  float *d = w->data;
  for (int64_t i = 0; i < num_embeddings * embedding_dim; i++)
    d[i] = dy_rand_normal();
  if (padding_idx >= 0)
    memset(d + padding_idx * embedding_dim, 0, sizeof(float) * (size_t)embedding_dim);
  e->weight = dy_layer_add_param(&e->base, "weight", w);
  if (!e->weight) {
    dy_layer_free(&e->base);
    return NULL;
  }
  return &e->base;
}
