/* ops_math.c - eager / tracing entry points of the math family, and the
 * activation layers.
 *
 * Each dy_<op>_at is a thin wrapper over dy_apply (ops.c): it packs its
 * arguments into the op's attributes, exactly as ops_math.def lists them
 * (the verifier checks every recorded op against that schema), and
 * dy_apply infers, allocates, computes (or only types, in static mode) and
 * records. Semantics live in kernels_math.c.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

#define IN1(x) ((dy_tensor *const[]){(x)})

/* ---- activations ---- */

dy_tensor *dy_gelu_at(dy_tensor *x, bool approximate, dy_srcloc loc) {
  dy_attr a[DY_GELU_NATTRS];
  int n_a = dy_gelu_attrs_put(&(dy_gelu_attrs){
      .given = DY_GIVEN_ALL, .approximate = approximate}, a);
  return dy_apply(DY_OP_GELU, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_hard_sigmoid_at(dy_tensor *x, float slope, float offset,
                              dy_srcloc loc) {
  dy_attr a[DY_HARD_SIGMOID_NATTRS];
  int n_a = dy_hard_sigmoid_attrs_put(&(dy_hard_sigmoid_attrs){
      .given = DY_GIVEN_ALL, .slope = slope, .offset = offset}, a);
  return dy_apply(DY_OP_HARD_SIGMOID, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_leaky_relu_at(dy_tensor *x, float alpha, dy_srcloc loc) {
  dy_attr a[DY_LEAKY_RELU_NATTRS];
  int n_a = dy_leaky_relu_attrs_put(&(dy_leaky_relu_attrs){
      .given = DY_GIVEN_ALL, .alpha = alpha}, a);
  return dy_apply(DY_OP_LEAKY_RELU, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_elu_at(dy_tensor *x, float alpha, dy_srcloc loc) {
  dy_attr a[DY_ELU_NATTRS];
  int n_a = dy_elu_attrs_put(&(dy_elu_attrs){.given = DY_GIVEN_ALL, .alpha = alpha}, a);
  return dy_apply(DY_OP_ELU, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_clip_at(dy_tensor *x, float min, float max, dy_srcloc loc) {
  dy_attr a[DY_CLIP_NATTRS];
  int n_a = dy_clip_attrs_put(&(dy_clip_attrs){.given = DY_GIVEN_ALL, .min = min, .max = max}, a);
  return dy_apply(DY_OP_CLIP, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_relu6_at(dy_tensor *x, dy_srcloc loc) {
  return dy_clip_at(x, 0.0f, 6.0f, loc);
}

dy_tensor *dy_softplus_at(dy_tensor *x, float beta, float threshold,
                          dy_srcloc loc) {
  dy_attr a[DY_SOFTPLUS_NATTRS];
  int n_a = dy_softplus_attrs_put(&(dy_softplus_attrs){
      .given = DY_GIVEN_ALL, .beta = beta, .threshold = threshold}, a);
  return dy_apply(DY_OP_SOFTPLUS, IN1(x), 1, a, n_a, loc);
}

/* ---- elementwise math ---- */

dy_tensor *dy_scale_at(dy_tensor *x, float scale, float bias,
                       bool bias_after_scale, dy_srcloc loc) {
  dy_attr a[DY_SCALE_NATTRS];
  int n_a = dy_scale_attrs_put(&(dy_scale_attrs){
      .given = DY_GIVEN_ALL, .scale = scale, .bias = bias,
      .bias_after_scale = bias_after_scale}, a);
  return dy_apply(DY_OP_SCALE, IN1(x), 1, a, n_a, loc);
}

/* ---- pow with a number ---- */

/* The constant is an intermediate of this call: its own scope frees it
 * (in a trace it stays as a full op feeding the pow). */
dy_tensor *dy_pow_scalar_at(dy_tensor *x, float y, dy_srcloc loc) {
  if (!x)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "pow: input 0 is NULL");
  dy_scope_begin();
  dy_tensor *c = dy_full_at(DY_F32, 0, NULL, y, loc);
  dy_tensor *out = dy_keep(dy_pow_at(x, c, loc));
  dy_scope_end();
  return dy_tensor_adopt(out);
}

/* ---- where, cast ---- */

dy_tensor *dy_where_at(dy_tensor *cond, dy_tensor *x, dy_tensor *y,
                       dy_srcloc loc) {
  return dy_apply(DY_OP_WHERE, (dy_tensor *const[]){cond, x, y}, 3, NULL, 0, loc);
}

dy_tensor *dy_cast_at(dy_tensor *x, dy_dtype dtype, dy_srcloc loc) {
  dy_attr a[DY_CAST_NATTRS];
  int n_a = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = dtype}, a);
  return dy_apply(DY_OP_CAST, IN1(x), 1, a, n_a, loc);
}

/* ------------------------------------------------------------------ */
/* Activation layers                                                   */
/* ------------------------------------------------------------------ */

enum { ACT_MAX_ATTRS = 4, ACT_NAME_LEN = 32 };

typedef struct {
  dy_layer base;
  dy_op_kind kind;
  int n_attrs;
  dy_attr attrs[ACT_MAX_ATTRS];       /* names point into names[] */
  char names[ACT_MAX_ATTRS][ACT_NAME_LEN];
} activation;

static dy_tensor *activation_forward(dy_layer *self, dy_tensor *const *in, int n) {
  activation *a = (activation *)self;
  dy_srcloc at = dy_layer_caller();
  if (n != 1)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, at, "%s layer takes 1 input, got %d",
                   dy_op_name(a->kind), n);
  return dy_apply(a->kind, in, 1, a->attrs, a->n_attrs, at);
}

static const dy_layer_vtable activation_vt = {"Activation", activation_forward,
                                              NULL, false};

/* Record "activation layer: <why>" and return NULL. */
#define fail_layer(status, ...) \
  (dy_fail((status), DY_INHERIT, "activation layer: " __VA_ARGS__), (dy_layer *)NULL)

dy_layer *dy_activation_layer_new(dy_op_kind kind, const dy_attr *attrs,
                                  int n_attrs) {
  if ((unsigned)kind >= DY_OP_COUNT ||
      dy_op_info_of(kind)->n_in != 1 ||
      !(dy_op_info_of(kind)->flags & DY_OPF_UNARY))
    return fail_layer(DY_STATUS_INVALID_ARGUMENT, "'%s' is not a unary op",
                      dy_op_name(kind));
  if (n_attrs < 0 || n_attrs > ACT_MAX_ATTRS || (n_attrs > 0 && !attrs))
    return fail_layer(DY_STATUS_INVALID_ARGUMENT, "%d attributes (at most %d)",
                      n_attrs, ACT_MAX_ATTRS);
  for (int i = 0; i < n_attrs; i++)
    if ((attrs[i].kind != DY_ATTR_INT && attrs[i].kind != DY_ATTR_FLOAT) ||
        !attrs[i].name || strlen(attrs[i].name) >= ACT_NAME_LEN)
      return fail_layer(DY_STATUS_INVALID_ARGUMENT,
                        "attribute %d must be a named int or float", i);
  activation *a = (activation *)dy_layer_new(sizeof *a, &activation_vt,
                                             dy_op_name(kind));
  if (!a)
    return fail_layer(DY_STATUS_OUT_OF_MEMORY, "out of memory");
  a->kind = kind;
  a->n_attrs = n_attrs;
  for (int i = 0; i < n_attrs; i++) {
    snprintf(a->names[i], sizeof a->names[i], "%s", attrs[i].name);
    a->attrs[i] = attrs[i];
    a->attrs[i].name = a->names[i];
  }
  return &a->base;
}

dy_layer *dy_gelu_layer_new(bool approximate) {
  dy_attr a[DY_GELU_NATTRS];
  int n_a = dy_gelu_attrs_put(&(dy_gelu_attrs){
      .given = DY_GIVEN_ALL, .approximate = approximate}, a);
  return dy_activation_layer_new(DY_OP_GELU, a, n_a);
}

dy_layer *dy_silu_layer_new(void) {
  return dy_activation_layer_new(DY_OP_SILU, NULL, 0);
}

dy_layer *dy_hard_swish_layer_new(void) {
  return dy_activation_layer_new(DY_OP_HARD_SWISH, NULL, 0);
}

dy_layer *dy_leaky_relu_layer_new(float alpha) {
  dy_attr a[DY_LEAKY_RELU_NATTRS];
  int n_a = dy_leaky_relu_attrs_put(&(dy_leaky_relu_attrs){
      .given = DY_GIVEN_ALL, .alpha = alpha}, a);
  return dy_activation_layer_new(DY_OP_LEAKY_RELU, a, n_a);
}
