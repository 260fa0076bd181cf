/* simplify.c - algebraic and structural simplification.
 *
 * Requires: a verified Program. Rewrites, each local to one op:
 *
 *   identity ops         x*1, x/1, x+0, 0+x, x-0 (a constant operand of
 *                        all ones or zeros that does not widen the result),
 *                        a view (reshape, flatten, squeeze, unsqueeze) to
 *                        the same shape, transpose by the identity
 *                        permutation, dropout in eval mode (or p = 0
 *                        outside a training step),
 *                        scale by 1 plus 0, cast to the same dtype
 *                        -> the op's output is replaced by its input
 *   view of a view       reshape(reshape(x)) and any chain of views
 *                        -> one reshape of x to the final shape
 *   transpose pairs      transpose(transpose(x, p1), p2)
 *                        -> transpose(x, p1[p2[i]]), or x if the identity
 *   transposes of 1s     a transpose moving only dims of size 1
 *                        ([1, L, D] -> [L, 1, D]) -> reshape, a view
 *
 * In a training Program (dy_program_is_training) a trainable parameter or
 * state updated in place is not a constant: x + b with a bias that starts
 * at zero stays (dy_pass_var_is_constant); updates are never touched.
 *
 * An identity whose output is fetched keeps the output's name (see
 * dy_program_forward_var); where that is impossible the op stays. Ops left
 * without readers are DCE's to remove. Every block is simplified, sub-blocks
 * too; a var a rewrite makes a sub-block read from outside becomes a
 * capture (dy_pass_each_block).
 */
#include <string.h>

#include "dy_passes.h"

/* Is var a constant whose every element equals v? In a training Program
 * a trainable parameter or updated state is not a constant (a bias that
 * starts at zero does not stay there). */
static bool const_all(const dy_program *p, int var, float v, bool training) {
  const dy_var *c = p->vars[var];
  if (!dy_pass_var_is_constant(p, var, training) || c->type.dtype != DY_F32)
    return false;
  const float *d = c->data;
  for (int64_t i = 0; i < dy_type_numel(&c->type); i++)
    if (d[i] != v)
      return false;
  return true;
}

static bool op_is(const dy_op *op, const char *name) {
  return strcmp(dy_op_name(op->kind), name) == 0;
}

/* If op computes its input `*which` unchanged, say which input. */
static bool is_identity(const dy_program *p, const dy_op *op, bool training,
                        int *which) {
  const dy_type *out = &p->vars[op->outputs[0]]->type;
  *which = 0;
  if (op->n_inputs >= 1 && dy_op_has(op, DY_OPF_VIEW))
    return dy_type_equal(&p->vars[op->inputs[0]]->type, out);
  if (op->kind == DY_OP_TRANSPOSE) {
    dy_transpose_attrs a = dy_transpose_attrs_get(op);
    for (int i = 0; i < a.n_perm; i++)
      if (a.perm[i] != i)
        return false;
    return true;
  }
  if (op_is(op, "dropout")) {
    /* a training step's dropout of p = 0 stays: its host draws its seed
     * each step (dy_program_reseed_dropout), and the generated step's
     * seeds are those of its dropout ops (NAME_dropout_seeds) */
    dy_dropout_attrs a = dy_dropout_attrs_get(op);
    return a.is_test || (a.p == 0 && !training);
  }
  if (op_is(op, "scale")) {
    dy_scale_attrs a = dy_scale_attrs_get(op);
    return a.scale == 1 && a.bias == 0;
  }
  if (op_is(op, "cast"))
    return p->vars[op->inputs[0]]->type.dtype == out->dtype;
  if (!dy_op_has(op, DY_OPF_BINARY) || op->n_inputs != 2)
    return false;
  /* x OP c where c is the neutral element and x already has the output's
   * type (so c does not broadcast x any wider) */
  for (int side = 0; side < 2; side++) {
    int x = op->inputs[side], c = op->inputs[1 - side];
    if (!dy_type_equal(&p->vars[x]->type, out))
      continue;
    bool rhs = side == 0; /* c is the right operand */
    if ((op->kind == DY_OP_ADD && const_all(p, c, 0, training)) ||
        (op->kind == DY_OP_MUL && const_all(p, c, 1, training)) ||
        (rhs && op->kind == DY_OP_SUB && const_all(p, c, 0, training)) ||
        (rhs && op->kind == DY_OP_DIV && const_all(p, c, 1, training))) {
      *which = side;
      return true;
    }
  }
  return false;
}

/* The op becomes reshape(x) {shape = the output's}, when a reshape
 * attribute can say that shape: no size expression, one -1 at most. */
static bool to_reshape(dy_program *p, dy_op *op, int x) {
  const dy_type *out = &p->vars[op->outputs[0]]->type;
  int dyn = 0;
  for (int i = 0; i < out->rank; i++) {
    if (out->shape[i] < -1)
      return false; /* a size expression (batch * 12, seq): no reshape attribute says it */
    dyn += out->shape[i] < 0;
  }
  if (dyn > 1)
    return false; /* a reshape attribute can carry one -1 only */
  dy_attr at[DY_RESHAPE_NATTRS];
  int n = dy_reshape_attrs_put(&(dy_reshape_attrs){
      .given = DY_GIVEN_ALL, .shape = out->shape, .n_shape = out->rank}, at);
  if (!dy_op_set_attrs(p, op, at, n)) /* copied */
    return false;
  op->kind = DY_OP_RESHAPE;
  op->inputs[0] = x;
  return true;
}

/* A transpose that moves only dims of size 1 (the others keep their
 * order: [1, 64, 128] -> [64, 1, 128], the seq-first exports' ends) moves
 * no data: a reshape, a view, which merges with the views around it. */
static bool transpose_as_view(dy_program *p, dy_op *op) {
  if (op->kind != DY_OP_TRANSPOSE)
    return false;
  const dy_type *in = &p->vars[op->inputs[0]]->type;
  dy_transpose_attrs a = dy_transpose_attrs_get(op);
  int64_t last = -1;
  for (int i = 0; i < a.n_perm; i++) {
    if (a.perm[i] < 0 || a.perm[i] >= in->rank)
      return false;
    if (in->shape[a.perm[i]] == 1)
      continue;
    if (a.perm[i] < last)
      return false;
    last = a.perm[i];
  }
  return to_reshape(p, op, op->inputs[0]);
}

/* Replace a chain view(view(x)) by reshape(x) to the final shape. */
static bool merge_views(dy_program *p, dy_op *op) {
  if (!dy_op_has(op, DY_OPF_VIEW))
    return false;
  const dy_op *inner = dy_program_def(p, op->inputs[0], NULL, NULL);
  if (!inner || !dy_op_has(inner, DY_OPF_VIEW))
    return false;
  return to_reshape(p, op, inner->inputs[0]);
}

/* transpose(transpose(x, p1), p2) -> transpose(x, p1 o p2) */
static bool merge_transposes(dy_program *p, dy_op *op) {
  if (op->kind != DY_OP_TRANSPOSE)
    return false;
  const dy_op *inner = dy_program_def(p, op->inputs[0], NULL, NULL);
  if (!inner || inner->kind != DY_OP_TRANSPOSE)
    return false;
  dy_transpose_attrs p1 = dy_transpose_attrs_get(inner), p2 = dy_transpose_attrs_get(op);
  if (p1.n_perm != p2.n_perm)
    return false;
  int64_t perm[DY_MAX_DIMS];
  if (p2.n_perm > DY_MAX_DIMS)
    return false;
  for (int i = 0; i < p2.n_perm; i++)
    perm[i] = p1.perm[p2.perm[i]];
  dy_attr at[DY_TRANSPOSE_NATTRS];
  int n = dy_transpose_attrs_put(&(dy_transpose_attrs){
      .given = DY_GIVEN_ALL, .perm = perm, .n_perm = p2.n_perm}, at);
  if (!dy_op_set_attrs(p, op, at, n)) /* copied */
    return false;
  op->inputs[0] = inner->inputs[0];
  return true;
}

static dy_status simplify_in(dy_program *p, int b, bool *changed, const void *ctx,
                             dy_error *err) {
  (void)err;
  (void)ctx;
  dy_block *blk = p->blocks[b];
  const bool training = dy_program_is_training(p);
  for (int k = 0; k < blk->n_ops; k++) {
    dy_op *op = blk->ops[k];
    if (op->n_outputs != 1 || dy_op_has(op, DY_OPF_INPLACE))
      continue;
    *changed |= merge_views(p, op) || merge_transposes(p, op) || transpose_as_view(p, op);
    int which;
    if (is_identity(p, op, training, &which) &&
        dy_program_forward_var(p, op->outputs[0], op->inputs[which])) {
      dy_block_remove_op(blk, k--);
      *changed = true;
    }
  }
  return DY_OK;
}

dy_status dy_pass_simplify(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, simplify_in, NULL, changed, err);
}
