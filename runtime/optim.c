/* optim.c - the eager optimizers of dy_optim.h.
 *
 * The optimizer holds the model's trainable parameters (borrowed), one
 * state tensor per (parameter, state) that it owns, and the learning rate
 * as a rank-0 tensor. A step hands all of them to the eager builder
 * (gb_eager.c) as values and calls dy_optimizer_build (ir/train/optim.c), whose
 * in-place update ops then run through dy_apply: each kernel writes the
 * parameter's and the state's data where they are.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

struct dy_optimizer {
  dy_optimizer_spec spec;
  int n_state;          /* per parameter */
  int n, cap;
  dy_tensor **params;   /* borrowed from the model */
  dy_tensor **state;    /* [n * n_state], owned */
  dy_tensor *lr;        /* rank-0 f32, owned */
};

/* Add p unless it is there already (a parameter shared by two layers). */
static bool add_param(dy_optimizer *o, dy_tensor *p) {
  for (int i = 0; i < o->n; i++)
    if (o->params[i] == p)
      return true;
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 16;
    dy_tensor **v = realloc(o->params, sizeof *v * (size_t)cap);
    if (!v)
      return false;
    o->params = v;
    o->cap = cap;
  }
  o->params[o->n++] = p;
  return true;
}

static bool collect(dy_optimizer *o, dy_layer *l) {
  for (int i = 0; i < l->n_params; i++) {
    dy_tensor *p = l->params[i];
    if (p && p->requires_grad && p->type.dtype == DY_F32 && !add_param(o, p))
      return false;
  }
  for (int i = 0; i < l->n_children; i++)
    if (!collect(o, l->children[i]))
      return false;
  return true;
}

dy_optimizer *dy_optimizer_new(const dy_optimizer_spec *spec, dy_layer *model) {
  dy_error err = {0};
  if (!spec || !model)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, DY_INHERIT,
                   "dy_optimizer_new: %s is NULL", spec ? "the model" : "the spec"),
           NULL;
  if (dy_optimizer_check(spec, &err)) {
    dy_fail_with(&err);
    return NULL;
  }
  dy_optimizer *o = calloc(1, sizeof *o);
  if (!o)
    goto oom;
  o->spec = *spec;
  o->n_state = dy_optimizer_state_count(spec);
  dy_type scalar = {.dtype = DY_F32, .rank = 0};
  if (!collect(o, model) || !(o->lr = dy_tensor_alloc(&scalar, true)))
    goto oom;
  ((float *)o->lr->data)[0] = (float)spec->lr;
  o->state = calloc((size_t)(o->n * o->n_state + 1), sizeof *o->state);
  if (!o->state)
    goto oom;
  for (int k = 0; k < o->n; k++)
    for (int i = 0; i < o->n_state; i++) {
      dy_type t = dy_optimizer_state_type(spec, i, &o->params[k]->type);
      dy_tensor *s = dy_tensor_alloc(&t, true);
      if (!s)
        goto oom;
      float v = (float)dy_optimizer_state_init(spec, i);
      for (int64_t j = 0; j < dy_tensor_numel(s); j++)
        ((float *)s->data)[j] = v;
      o->state[k * o->n_state + i] = s;
    }
  return o;
oom:
  dy_optimizer_free(o);
  return dy_fail(DY_STATUS_OUT_OF_MEMORY, DY_INHERIT, "dy_optimizer_new: out of memory"),
         NULL;
}

void dy_optimizer_free(dy_optimizer *o) {
  if (!o)
    return;
  if (o->state)
    for (int i = 0; i < o->n * o->n_state; i++)
      dy_tensor_free(o->state[i]);
  free(o->state);
  free(o->params);
  dy_tensor_free(o->lr);
  free(o);
}

dy_status dy_optimizer_step(dy_optimizer *o, dy_error *err) {
  if (!o)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "dy_optimizer_step: NULL optimizer");
  for (int k = 0; k < o->n; k++) {
    const dy_tensor *p = o->params[k], *g = p->grad;
    if (g && !dy_type_equal(&g->type, &p->type)) {
      char a[128], b[128];
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                          "dy_optimizer_step: the grad of '%s' is %s, the parameter %s",
                          p->name ? p->name : "?", dy_type_str(&g->type, a, sizeof a),
                          dy_type_str(&p->type, b, sizeof b));
    }
  }
  int *vals = malloc(sizeof(int) * (size_t)(o->n * (2 + o->n_state) + 1));
  const int **rows = malloc(sizeof *rows * (size_t)(o->n + 1));
  if (!vals || !rows) {
    free(vals);
    free(rows);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "dy_optimizer_step: out of memory");
  }
  int *params = vals, *grads = vals + o->n, *state = vals + 2 * o->n;
  dy_gb b;
  dy_gb_eager_state st;
  *err = (dy_error){0};
  dy_gb_eager(&b, &st, DY_INHERIT, err);
  int lr = dy_gb_eager_value(&b, o->lr);
  for (int k = 0; k < o->n; k++) {
    dy_tensor *p = o->params[k];
    params[k] = dy_gb_eager_value(&b, p);
    grads[k] = p->grad ? dy_gb_eager_value(&b, p->grad) : -1;
    for (int i = 0; i < o->n_state; i++)
      state[k * o->n_state + i] = dy_gb_eager_value(&b, o->state[k * o->n_state + i]);
    rows[k] = state + k * o->n_state;
  }
  dy_optimizer_build(&b, &o->spec, params, grads, o->n, rows, lr);
  dy_gb_eager_free(&b);
  free(vals);
  free(rows);
  return err->status;
}

void dy_optimizer_set_lr(dy_optimizer *o, double lr) {
  if (o)
    ((float *)o->lr->data)[0] = (float)lr;
}

double dy_optimizer_get_lr(const dy_optimizer *o) {
  return o ? ((const float *)o->lr->data)[0] : 0.0;
}

int dy_optimizer_n_params(const dy_optimizer *o) { return o ? o->n : 0; }

dy_tensor *dy_optimizer_param(const dy_optimizer *o, int k) {
  return o && k >= 0 && k < o->n ? o->params[k] : NULL;
}

dy_tensor *dy_optimizer_state(const dy_optimizer *o, int k, int i) {
  return o && k >= 0 && k < o->n && i >= 0 && i < o->n_state
             ? o->state[k * o->n_state + i]
             : NULL;
}
