/* layers_nn.c - the nn family's layers: Conv2D, Conv2DTranspose,
 * BatchNorm2D, LayerNorm, GroupNorm, Dropout, MaxPool2D, AvgPool2D,
 * AdaptiveAvgPool2D. Each follows layers.c: parameters are layer-owned
 * tensors registered with dy_layer_add_param (Paddle's names: weight, bias,
 * _mean, _variance), and the ops of a forward record the user's call of
 * the layer as their source line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

static dy_tensor *one_input(dy_layer *self, int n) {
  return dy_fail(DY_STATUS_INVALID_ARGUMENT, dy_layer_caller(),
                 "%s '%s' takes 1 input, got %d", self->vt->type_name, self->name, n);
}

/* A layer-owned f32 parameter with every element v. */
static dy_tensor *param_fill(int rank, const int64_t *shape, float v) {
  dy_tensor *p = dy_param_new(rank, shape);
  for (int64_t i = 0; p && i < dy_tensor_numel(p); i++)
    dy_tensor_f32(p)[i] = v;
  return p;
}

static bool positive(const char *layer, int n, const int64_t *v) {
  for (int i = 0; i < n; i++)
    if (v[i] < 1) {
      dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
              "%s: sizes must be >= 1, got %lld", layer, (long long)v[i]);
      return false;
    }
  return true;
}

/* ---- Conv2D, Conv2DTranspose ---- */

typedef struct {
  dy_layer base;
  bool transpose;
  dy_conv2d_transpose_params p;  /* conv2d uses all but output_padding */
  dy_tensor *weight;             /* [O, C/g, kh, kw] or [C, O/g, kh, kw] */
  dy_tensor *bias;               /* [O, 1, 1], or NULL                   */
} conv_layer;

static dy_tensor *conv_forward(dy_layer *self, dy_tensor *const *in, int n) {
  conv_layer *l = (conv_layer *)self;
  if (n != 1)
    return one_input(self, n);
  dy_srcloc at = dy_layer_caller();
  dy_tensor *y;
  if (l->transpose) {
    y = dy_conv2d_transpose_at(in[0], l->weight, l->p, at);
  } else {
    dy_conv2d_params p = {.groups = l->p.groups};
    memcpy(p.stride, l->p.stride, sizeof p.stride);
    memcpy(p.padding, l->p.padding, sizeof p.padding);
    memcpy(p.dilation, l->p.dilation, sizeof p.dilation);
    y = dy_conv2d_at(in[0], l->weight, p, at);
  }
  return l->bias ? dy_add_at(y, l->bias, at) : y;
}

static const dy_layer_vtable conv2d_vt = {"Conv2D", conv_forward, NULL, false};
static const dy_layer_vtable conv2d_transpose_vt = {"Conv2DTranspose", conv_forward,
                                                    NULL, false};

static dy_layer *conv_new(bool transpose, int64_t cin, int64_t cout, int64_t kh,
                          int64_t kw, dy_conv2d_transpose_params p, bool bias) {
  const char *type = transpose ? "Conv2DTranspose" : "Conv2D";
  int64_t groups = p.groups ? p.groups : 1;
  if (!positive(type, 5, (const int64_t[]){cin, cout, kh, kw, groups}))
    return NULL;
  if (cin % groups || cout % groups) {
    dy_fail(DY_STATUS_SHAPE_MISMATCH, (dy_srcloc){0},
            "%s: %s channels %lld do not divide by groups %lld", type,
            cin % groups ? "input" : "output", (long long)(cin % groups ? cin : cout),
            (long long)groups);
    return NULL;
  }
  conv_layer *l = (conv_layer *)dy_layer_new(
      sizeof *l, transpose ? &conv2d_transpose_vt : &conv2d_vt,
      transpose ? "conv2d_transpose" : "conv2d");
  if (!l)
    return NULL;
  l->transpose = transpose;
  l->p = p;
  int64_t fan_in = (transpose ? cout : cin) / groups * kh * kw;
  float bound = 1.0f / sqrtf((float)fan_in);
  int64_t wshape[4] = {transpose ? cin : cout, (transpose ? cout : cin) / groups, kh, kw};
  l->weight = dy_layer_add_param(&l->base, "weight", dy_param_uniform(4, wshape, bound));
  if (bias)
    l->bias = dy_layer_add_param(&l->base, "bias",
                                 dy_param_uniform(3, DY_SHAPE(cout, 1, 1), bound));
  if (!l->weight || (bias && !l->bias)) {
    dy_layer_free(&l->base);
    return NULL;
  }
  return &l->base;
}

dy_layer *dy_conv2d_layer_new(int64_t in_channels, int64_t out_channels,
                              int64_t kernel_h, int64_t kernel_w,
                              dy_conv2d_params p, bool bias) {
  dy_conv2d_transpose_params tp = {.groups = p.groups};
  memcpy(tp.stride, p.stride, sizeof tp.stride);
  memcpy(tp.padding, p.padding, sizeof tp.padding);
  memcpy(tp.dilation, p.dilation, sizeof tp.dilation);
  return conv_new(false, in_channels, out_channels, kernel_h, kernel_w, tp, bias);
}

dy_layer *dy_conv2d_transpose_layer_new(int64_t in_channels, int64_t out_channels,
                                        int64_t kernel_h, int64_t kernel_w,
                                        dy_conv2d_transpose_params p, bool bias) {
  return conv_new(true, in_channels, out_channels, kernel_h, kernel_w, p, bias);
}

/* ---- BatchNorm2D ---- */

typedef struct {
  dy_layer base;
  double momentum, epsilon;
  dy_tensor *weight, *bias;   /* [C] scale and shift         */
  dy_tensor *mean, *variance; /* [C] running statistics      */
} batch_norm_layer;

static dy_tensor *batch_norm_forward(dy_layer *self, dy_tensor *const *in, int n) {
  batch_norm_layer *l = (batch_norm_layer *)self;
  if (n != 1)
    return one_input(self, n);
  dy_tensor *y = dy_batch_norm_at(in[0], l->weight, l->bias, l->mean, l->variance,
                                  l->epsilon, l->momentum, self->training,
                                  dy_layer_caller());
  /* train mode: running = momentum * running + (1 - momentum) * the
   * batch's mean and biased variance, as the in-place op batch_norm_stats
   * (ops_train.def), so that a traced or to_static forward records the
   * update into the Program (on a symbolic x it only records) */
  if (y && self->training) {
    dy_attr a[DY_BATCH_NORM_STATS_NATTRS];
    int n_a = dy_batch_norm_stats_attrs_put(&(dy_batch_norm_stats_attrs){
        .given = DY_GIVEN_ALL, .momentum = l->momentum}, a);
    if (!dy_apply(DY_OP_BATCH_NORM_STATS, (dy_tensor *const[]){l->mean, l->variance, in[0]},
                  3, a, n_a, dy_layer_caller()))
      return NULL;
  }
  return y;
}

static const dy_layer_vtable batch_norm_vt = {"BatchNorm2D", batch_norm_forward, NULL,
                                              true};

dy_layer *dy_batch_norm2d_new(int64_t num_features, double momentum,
                              double epsilon) {
  if (!positive("BatchNorm2D", 1, &num_features))
    return NULL;
  batch_norm_layer *l =
      (batch_norm_layer *)dy_layer_new(sizeof *l, &batch_norm_vt, "batch_norm2d");
  if (!l)
    return NULL;
  l->momentum = momentum;
  l->epsilon = epsilon;
  const int64_t *c = &num_features;
  l->weight = dy_layer_add_param(&l->base, "weight", param_fill(1, c, 1.0f));
  l->bias = dy_layer_add_param(&l->base, "bias", param_fill(1, c, 0.0f));
  l->mean = dy_layer_add_param(&l->base, "_mean", param_fill(1, c, 0.0f));
  l->variance = dy_layer_add_param(&l->base, "_variance", param_fill(1, c, 1.0f));
  if (!l->weight || !l->bias || !l->mean || !l->variance) {
    dy_layer_free(&l->base);
    return NULL;
  }
  l->mean->requires_grad = l->variance->requires_grad = false; /* buffers */
  return &l->base;
}

/* ---- LayerNorm, GroupNorm ---- */

typedef struct {
  dy_layer base;
  int64_t arg;              /* LayerNorm: rank of normalized_shape; GroupNorm: groups */
  double epsilon;
  dy_tensor *weight, *bias; /* 1-D */
} norm_layer;

static dy_tensor *layer_norm_forward(dy_layer *self, dy_tensor *const *in, int n) {
  norm_layer *l = (norm_layer *)self;
  if (n != 1)
    return one_input(self, n);
  return dy_layer_norm_at(in[0], l->weight, l->bias, -(int)l->arg, l->epsilon,
                          dy_layer_caller());
}

static dy_tensor *group_norm_forward(dy_layer *self, dy_tensor *const *in, int n) {
  norm_layer *l = (norm_layer *)self;
  if (n != 1)
    return one_input(self, n);
  return dy_group_norm_at(in[0], l->weight, l->bias, l->arg, l->epsilon,
                          dy_layer_caller());
}

static const dy_layer_vtable layer_norm_vt = {"LayerNorm", layer_norm_forward, NULL, false};
static const dy_layer_vtable group_norm_vt = {"GroupNorm", group_norm_forward, NULL, false};

static dy_layer *norm_new(const dy_layer_vtable *vt, const char *name, int64_t arg,
                          int64_t size, double epsilon) {
  norm_layer *l = (norm_layer *)dy_layer_new(sizeof *l, vt, name);
  if (!l)
    return NULL;
  l->arg = arg;
  l->epsilon = epsilon;
  l->weight = dy_layer_add_param(&l->base, "weight", param_fill(1, &size, 1.0f));
  l->bias = dy_layer_add_param(&l->base, "bias", param_fill(1, &size, 0.0f));
  if (!l->weight || !l->bias) {
    dy_layer_free(&l->base);
    return NULL;
  }
  return &l->base;
}

dy_layer *dy_layer_norm_layer_new(int rank, const int64_t *normalized_shape,
                                  double epsilon) {
  if (rank < 1 || rank > DY_MAX_DIMS || !normalized_shape) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
            "LayerNorm: normalized_shape needs 1 to %d dims, got %d", DY_MAX_DIMS, rank);
    return NULL;
  }
  if (!positive("LayerNorm", rank, normalized_shape))
    return NULL;
  int64_t size = 1;
  for (int i = 0; i < rank; i++)
    size *= normalized_shape[i];
  return norm_new(&layer_norm_vt, "layer_norm", rank, size, epsilon);
}

dy_layer *dy_group_norm_layer_new(int64_t groups, int64_t channels,
                                  double epsilon) {
  if (!positive("GroupNorm", 2, (const int64_t[]){groups, channels}))
    return NULL;
  if (channels % groups) {
    dy_fail(DY_STATUS_SHAPE_MISMATCH, (dy_srcloc){0},
            "GroupNorm: channels %lld do not divide by groups %lld", (long long)channels,
            (long long)groups);
    return NULL;
  }
  return norm_new(&group_norm_vt, "group_norm", groups, channels, epsilon);
}

/* ---- Dropout ---- */

typedef struct {
  dy_layer base;
  double p;
} dropout_layer;

static dy_tensor *dropout_forward(dy_layer *self, dy_tensor *const *in, int n) {
  if (n != 1)
    return one_input(self, n);
  return dy_dropout_at(in[0], ((dropout_layer *)self)->p, self->training,
                       dy_layer_caller());
}

static const dy_layer_vtable dropout_vt = {"Dropout", dropout_forward, NULL, true};

dy_layer *dy_dropout_layer_new(double p) {
  if (!(p >= 0 && p <= 1)) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
            "Dropout: p is %g, must be in [0, 1]", p);
    return NULL;
  }
  dropout_layer *l = (dropout_layer *)dy_layer_new(sizeof *l, &dropout_vt, "dropout");
  if (!l)
    return NULL;
  l->p = p;
  return &l->base;
}

/* ---- MaxPool2D, AvgPool2D, AdaptiveAvgPool2D ---- */

typedef struct {
  dy_layer base;
  dy_pool2d_params p;   /* window pools                 */
  int64_t out[2];       /* adaptive: the output size    */
} pool_layer;

static dy_tensor *max_pool_forward(dy_layer *self, dy_tensor *const *in, int n) {
  if (n != 1)
    return one_input(self, n);
  return dy_max_pool2d_at(in[0], ((pool_layer *)self)->p, dy_layer_caller());
}

static dy_tensor *avg_pool_forward(dy_layer *self, dy_tensor *const *in, int n) {
  if (n != 1)
    return one_input(self, n);
  return dy_avg_pool2d_at(in[0], ((pool_layer *)self)->p, dy_layer_caller());
}

static dy_tensor *adaptive_avg_pool_forward(dy_layer *self, dy_tensor *const *in,
                                            int n) {
  pool_layer *l = (pool_layer *)self;
  if (n != 1)
    return one_input(self, n);
  return dy_adaptive_avg_pool2d_at(in[0], l->out[0], l->out[1], dy_layer_caller());
}

static const dy_layer_vtable max_pool_vt = {"MaxPool2D", max_pool_forward, NULL, false};
static const dy_layer_vtable avg_pool_vt = {"AvgPool2D", avg_pool_forward, NULL, false};
static const dy_layer_vtable adaptive_avg_pool_vt = {"AdaptiveAvgPool2D",
                                                     adaptive_avg_pool_forward, NULL,
                                                     false};

static dy_layer *pool_new(const dy_layer_vtable *vt, const char *name,
                          dy_pool2d_params p, int64_t oh, int64_t ow) {
  pool_layer *l = (pool_layer *)dy_layer_new(sizeof *l, vt, name);
  if (!l)
    return NULL;
  l->p = p;
  l->out[0] = oh;
  l->out[1] = ow;
  return &l->base;
}

dy_layer *dy_max_pool2d_layer_new(dy_pool2d_params p) {
  if (!positive("MaxPool2D", 2, p.kernel))
    return NULL;
  return pool_new(&max_pool_vt, "max_pool2d", p, 0, 0);
}

dy_layer *dy_avg_pool2d_layer_new(dy_pool2d_params p) {
  if (!positive("AvgPool2D", 2, p.kernel))
    return NULL;
  return pool_new(&avg_pool_vt, "avg_pool2d", p, 0, 0);
}

dy_layer *dy_adaptive_avg_pool2d_layer_new(int64_t out_h, int64_t out_w) {
  if (!positive("AdaptiveAvgPool2D", 2, (const int64_t[]){out_h, out_w}))
    return NULL;
  return pool_new(&adaptive_avg_pool_vt, "adaptive_avg_pool2d", (dy_pool2d_params){0},
                  out_h, out_w);
}
