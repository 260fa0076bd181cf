/* backward.c - eager autograd's backward pass: dy_backward,
 * dy_backward_seed and dy_clear_grad (dy_autograd.h).
 *
 * dy_backward walks the tape (tape.c) from the loss's record down to 0,
 * once to mark the records the loss reaches (its graph), once more running
 * the rule of each marked record whose output received a gradient, on the
 * eager builder (gb_eager.c) with grad mode off, so the gradient ops run
 * through dy_apply like any op. It keeps per tensor the builder value of
 * its gradient so far (ag_val, valid for the pass numbered ag_pass, a
 * number dy_tape_new_pass gives), adds each leaf's gradient into its
 * .grad, and releases the loss's graph (dy_tape_release_visited).
 *
 * Above the tape and the builder: backward.c -> gb_eager.c -> ops.c ->
 * tape.c, never back.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

typedef struct {
  dy_gb b;
  dy_gb_eager_state st;
  unsigned pass;
  dy_tensor **leaves;       /* leaves that received a gradient (borrowed) */
  int n_leaves, cap_leaves;
} bwd;

/* Start t's bookkeeping for this pass: no gradient yet. */
static void touch(bwd *w, dy_tensor *t) {
  if (t->ag_pass != w->pass) {
    t->ag_pass = w->pass;
    t->ag_val = -1;
    t->ag_aux = -1;  /* t's own builder value, made on first use */
  }
}

static int value_of(bwd *w, dy_tensor *t) {
  touch(w, t);
  if (t->ag_aux < 0)
    t->ag_aux = dy_gb_eager_value(&w->b, t);
  return t->ag_aux;
}

static bool is_leaf(const dy_tensor *t) { return t->requires_grad && !t->grad_fn; }

/* Add gradient value g into t's gradient of this pass. */
static void accumulate(bwd *w, dy_tensor *t, int g) {
  touch(w, t);
  if (t->ag_val < 0) {
    t->ag_val = g;
    if (is_leaf(t)) {
      if (w->n_leaves == w->cap_leaves) {
        int cap = w->cap_leaves ? 2 * w->cap_leaves : 16;
        dy_tensor **v = realloc(w->leaves, sizeof *v * (size_t)cap);
        if (!v) {
          dy_gb_fail(&w->b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
          return;
        }
        w->leaves = v;
        w->cap_leaves = cap;
      }
      w->leaves[w->n_leaves++] = t;
    }
  } else {
    t->ag_val = dy_gb_add(&w->b, t->ag_val, g);
  }
}

/* Run the rule of one record whose output has a gradient. */
static dy_status step(bwd *w, dy_tape_node *nd) {
  const dy_op *op = &nd->op;
  int n = op->n_inputs;
  int x[DY_MAX_OP_INPUTS], dx[DY_MAX_OP_INPUTS], dy = nd->out->ag_val;
  bool need[DY_MAX_OP_INPUTS], any = false;
  for (int i = 0; i < n; i++) {
    dy_tensor *t = nd->in[i];
    need[i] = (t->requires_grad || t->grad_fn) &&
              dy_grad_input_is_differentiable(op->kind, i, t->type.dtype);
    any |= need[i];
    x[i] = value_of(w, t);
  }
  if (!any)
    return DY_OK;
  int y = value_of(w, nd->out);
  dy_status s = dy_grad_op(&w->b, op, x, &y, &dy, need, dx);
  for (int i = 0; i < n && !s; i++) {
    if (!need[i] || dx[i] < 0)
      continue;
    w->b.fwd = op;
    accumulate(w, nd->in[i], dx[i]);
    w->b.fwd = NULL;
    s = dy_gb_status(&w->b);
  }
  return s;
}

/* Add the gradient tensor g into leaf t's .grad. */
static dy_status add_into_grad(dy_tensor *t, const dy_tensor *g, dy_error *err) {
  char a[128], c[128];
  if (!dy_type_equal(&t->type, &g->type))
    return dy_error_set(err, DY_STATUS_INTERNAL,
                        "backward: the gradient of '%s' is %s, not its %s",
                        t->name ? t->name : "a tensor", dy_type_str(&g->type, c, sizeof c),
                        dy_type_str(&t->type, a, sizeof a));
  if (!t->grad) {
    t->grad = dy_tensor_alloc(&t->type, true);
    if (!t->grad)
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "backward: out of memory");
    memcpy(t->grad->data, g->data, t->grad->nbytes);
    return DY_OK;
  }
  float *d = t->grad->data;
  const float *s = g->data;
  for (int64_t i = 0, n = dy_tensor_numel(t); i < n; i++)
    d[i] += s[i];
  return DY_OK;
}

dy_status dy_backward_seed(dy_tensor *t, dy_tensor *seed, dy_error *err) {
  char a[128], c[128];
  if (!t || !seed)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "backward: a NULL %s (an earlier op failed?)", t ? "seed" : "tensor");
  if (!t->data)
    return dy_error_set(err, DY_STATUS_SYMBOLIC,
                        "backward: the tensor is symbolic (static mode); use "
                        "dy_program_append_backward on the Program instead");
  if (t->type.dtype != DY_F32 || !dy_type_equal(&t->type, &seed->type) || !seed->data)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "backward: the seed is %s, the tensor %s: they must be the "
                        "same f32 type", dy_type_str(&seed->type, c, sizeof c),
                        dy_type_str(&t->type, a, sizeof a));
  if (!t->grad_fn && !t->requires_grad)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "the loss does not require grad: no parameter on its path "
                        "(or it was computed under dy_no_grad, or its graph was "
                        "freed by an earlier dy_backward)");
  if (!t->grad_fn)  /* a leaf itself */
    return add_into_grad(t, seed, err);

  *err = (dy_error){0};
  bwd w = {.pass = dy_tape_new_pass()};
  dy_gb_eager(&w.b, &w.st, t->grad_fn->op.loc, err);
  dy_no_grad_begin();
  touch(&w, t);
  t->ag_val = dy_gb_eager_value(&w.b, seed);
  /* the loss's graph: the records it reaches (visit) and whether a leaf
   * is among their inputs */
  dy_tape_node *const *nodes = dy_tape_nodes(); /* stable: grad mode is off */
  int start = t->grad_fn->pos;
  for (int i = 0; i <= start; i++)
    nodes[i]->visit = false;
  t->grad_fn->visit = true;
  bool leaf = false;
  for (int i = start; i >= 0; i--) {
    dy_tape_node *nd = nodes[i];
    for (int k = 0; k < nd->op.n_inputs && nd->visit; k++) {
      if (nd->in[k]->grad_fn)
        nd->in[k]->grad_fn->visit = true;
      leaf |= is_leaf(nd->in[k]);
    }
  }
  dy_status s = DY_OK;
  if (!leaf)
    s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                     "the loss does not require grad: no parameter on its path "
                     "(its graph was freed by an earlier dy_backward?)");
  /* newest first, every record whose output received a gradient */
  for (int i = start; i >= 0 && !s; i--) {
    dy_tape_node *nd = nodes[i];
    if (nd->visit && nd->out->ag_pass == w.pass && nd->out->ag_val >= 0)
      s = step(&w, nd);
  }
  dy_no_grad_end();
  for (int i = 0; i < w.n_leaves && !s; i++)
    s = add_into_grad(w.leaves[i], dy_gb_eager_tensor(&w.b, w.leaves[i]->ag_val), err);
  dy_gb_eager_free(&w.b);
  free(w.leaves);
  /* free the loss's graph (PyTorch's default, retain_graph=False) */
  nodes = dy_tape_nodes();
  for (int i = start + 1, n = dy_tape_size(); i < n; i++)
    nodes[i]->visit = false;
  if (!s)
    dy_tape_release_visited();
  return s;
}

dy_status dy_backward(dy_tensor *loss, dy_error *err) {
  char a[128];
  if (!loss)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "backward: the loss is NULL (an earlier op failed?)");
  if (loss->type.dtype != DY_F32 || dy_type_numel(&loss->type) != 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "backward: the loss is %s: it must be an f32 scalar (one "
                        "element; reduce it with mean or sum, or use "
                        "dy_backward_seed)", dy_type_str(&loss->type, a, sizeof a));
  dy_tensor *one = dy_tensor_alloc(&loss->type, loss->data != NULL);
  if (!one)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "backward: out of memory");
  if (one->data)
    ((float *)one->data)[0] = 1.0f;
  dy_status s = dy_backward_seed(loss, one, err);
  dy_tensor_free(one);
  return s;
}

/* ---- layers ---- */

void dy_clear_grad(dy_layer *l) {
  if (!l)
    return;
  for (int i = 0; i < l->n_params; i++) {
    dy_tensor_free(l->params[i]->grad);
    l->params[i]->grad = NULL;
  }
  for (int i = 0; i < l->n_children; i++)
    dy_clear_grad(l->children[i]);
}
