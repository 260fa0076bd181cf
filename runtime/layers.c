/* layers.c - the built-in layers: Linear, Sequential, activations. */
#include <math.h>
#include <stdlib.h>

#include "dy_runtime_internal.h"

/* ---- Linear: y = x @ W + b, W [in, out] ---- */

typedef struct {
  dy_layer base;
  dy_tensor *weight;  /* [in, out] */
  dy_tensor *bias;    /* [out]     */
} linear;

static dy_tensor *linear_forward(dy_layer *self, dy_tensor *const *in, int n) {
  linear *l = (linear *)self;
  if (n != 1)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
                   "Linear '%s' takes 1 input, got %d", self->name, n);
  dy_srcloc at = dy_layer_caller();
  return dy_add_at(dy_matmul_at(in[0], l->weight, false, false, at), l->bias, at);
}

static const dy_layer_vtable linear_vt = {"Linear", linear_forward, NULL, false};

/* A layer-owned f32 parameter (not held by any open scope), zero-filled. */
dy_tensor *dy_param_new(int rank, const int64_t *shape) {
  dy_type t = {.dtype = DY_F32, .rank = rank};
  for (int i = 0; i < rank; i++)
    t.shape[i] = shape[i];
  dy_tensor *p = dy_tensor_alloc(&t, true);
  if (!p)
    return dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "parameter: out of memory");
  return p;
}

/* A layer-owned f32 parameter drawn from U(-bound, bound) by the seeded
 * generator. */
dy_tensor *dy_param_uniform(int rank, const int64_t *shape, float bound) {
  dy_tensor *p = dy_param_new(rank, shape);
  for (int64_t i = 0; p && i < dy_tensor_numel(p); i++)
    dy_tensor_f32(p)[i] = (2.0f * dy_rand_uniform() - 1.0f) * bound;
  return p;
}

dy_layer *dy_linear_new(int64_t in_features, int64_t out_features) {
  if (in_features < 1 || out_features < 1) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
            "Linear: bad sizes %lld -> %lld", (long long)in_features,
            (long long)out_features);
    return NULL;
  }
  linear *l = (linear *)dy_layer_new(sizeof *l, &linear_vt, "linear");
  if (!l)
    return NULL;
  float bound = 1.0f / sqrtf((float)in_features);
  l->weight = dy_layer_add_param(&l->base, "weight",
                                 dy_param_uniform(2, DY_SHAPE(in_features, out_features), bound));
  l->bias = dy_layer_add_param(&l->base, "bias", dy_param_uniform(1, DY_SHAPE(out_features), bound));
  if (!l->weight || !l->bias) {
    dy_layer_free(&l->base);
    return NULL;
  }
  return &l->base;
}

/* ---- Sequential ---- */

static dy_tensor *sequential_forward(dy_layer *self, dy_tensor *const *in, int n) {
  if (self->n_children == 0)
    return n == 1 ? in[0] : NULL;
  dy_tensor *x = dy_layer_call_at(self->children[0], in, n, DY_INHERIT);
  for (int i = 1; i < self->n_children && x; i++)
    x = dy_layer_call_at(self->children[i], (dy_tensor *const[]){x}, 1, DY_INHERIT);
  return x;
}

static const dy_layer_vtable sequential_vt = {"Sequential", sequential_forward, NULL, false};

dy_layer *dy_sequential_new(void) {
  return dy_layer_new(sizeof(dy_layer), &sequential_vt, "sequential");
}

dy_layer *dy_sequential_append_at(dy_layer *seq, dy_layer *child, dy_srcloc loc) {
  return dy_layer_add_child_at(seq, child, loc);
}

/* ---- activations as layers ---- */

#define ACTIVATION_LAYER(fn, Name)                                          \
  static dy_tensor *fn##_forward(dy_layer *self, dy_tensor *const *in, int n) { \
    (void)self;                                                              \
    if (n != 1)                                                              \
      return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},             \
                     #Name " takes 1 input, got %d", n);                     \
    return dy_##fn##_at(in[0], dy_layer_caller());                  \
  }                                                                          \
  static const dy_layer_vtable fn##_vt = {#Name, fn##_forward, NULL, false}; \
  dy_layer *dy_##fn##_layer_new(void) {                                      \
    return dy_layer_new(sizeof(dy_layer), &fn##_vt, #fn);                    \
  }

ACTIVATION_LAYER(relu, ReLU)
ACTIVATION_LAYER(sigmoid, Sigmoid)
ACTIVATION_LAYER(tanh, Tanh)

/* ---- Flatten ---- */

typedef struct {
  dy_layer base;
  int start, stop;
} flatten_layer;

static dy_tensor *flatten_forward(dy_layer *self, dy_tensor *const *in, int n) {
  flatten_layer *f = (flatten_layer *)self;
  if (n != 1)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0}, "Flatten takes 1 input, got %d", n);
  return dy_flatten_at(in[0], f->start, f->stop, dy_layer_caller());
}

static const dy_layer_vtable flatten_vt = {"Flatten", flatten_forward, NULL, false};

dy_layer *dy_flatten_layer_new(int start_axis, int stop_axis) {
  flatten_layer *f = (flatten_layer *)dy_layer_new(sizeof *f, &flatten_vt, "flatten");
  if (f) {
    f->start = start_axis;
    f->stop = stop_axis;
  }
  return &f->base;
}
