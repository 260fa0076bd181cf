/* train.c - the training step as a Program (dy_program_make_training) and
 * the two edits a host makes to one: train semantics for a saved inference
 * Program (dy_program_set_train_semantics) and fresh dropout masks per step
 * (dy_program_reseed_dropout).
 *
 * make_training appends, to block 0 of an inference Program:
 *
 *   1. the loss against a new feed "label" (dy_program_append_loss),
 *   2. the gradient of the loss for every trainable var
 *      (dy_program_append_backward),
 *   3. the optimizer's in-place updates (dy_program_append_optimizer),
 *      which add the feed "learning_rate";
 *
 * and makes the loss the Program's only fetch. The feeds are then the
 * model's inputs, "label", "learning_rate" (in that order); running the
 * Program once is one training step.
 *
 * Dropout. A dropout op's mask is a function of its `seed` attribute
 * (runtime/kernels/kernels_nn.c), and its gradient rule emits ops carrying the same
 * seed, so a training Program run twice would drop the same elements. The
 * host therefore reseeds before every step: dy_program_reseed_dropout walks
 * block 0 in op order, and the first training-mode dropout op with a given
 * old seed draws a new one from next(); every later dropout op with that
 * old seed (the gradient's) takes the same new seed. make_training makes
 * the forward's training-mode dropout seeds distinct first, so each forward
 * dropout draws once, in the order an eager forward would.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

/* Set int attribute name of op (adding it when the op does not carry it). */
static dy_status set_int_attr(dy_program *p, dy_op *op, const char *name, int64_t v,
                              dy_error *err) {
  for (int i = 0; i < op->n_attrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) {
      op->attrs[i].kind = DY_ATTR_INT;
      op->attrs[i].i = v;
      return DY_OK;
    }
  dy_attr *a = dy_program_alloc(p, sizeof *a * (size_t)(op->n_attrs + 1));
  const char *nm = dy_program_strdup(p, name);
  if (!a || !nm)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (op->n_attrs)
    memcpy(a, op->attrs, sizeof *a * (size_t)op->n_attrs);
  a[op->n_attrs] = DY_ATTR_I(nm, v);
  op->attrs = a;
  op->n_attrs++;
  return DY_OK;
}

static int64_t int_attr(const dy_op *op, const char *name, int64_t dflt) {
  const dy_attr *a = dy_op_find_attr(op, name);
  return a && a->kind == DY_ATTR_INT ? a->i : dflt;
}

static bool is_training_dropout(const dy_op *op) {
  return op->kind == DY_OP_DROPOUT && int_attr(op, "is_test", 0) == 0;
}

/* The training-mode dropout ops of block 0 one after the other: start
 * with *i = -1; NULL after the last. */
static dy_op *next_training_dropout(const dy_program *p, int *i) {
  const dy_block *b = p->blocks[0];
  while (++*i < b->n_ops)
    if (is_training_dropout(b->ops[*i]))
      return b->ops[*i];
  return NULL;
}

/* Give the training-mode dropout ops distinct seeds, 0, 1, 2, ... in op
 * order (a traced or loaded model's dropouts may all carry seed 0). */
static dy_status distinct_dropout_seeds(dy_program *p, dy_error *err) {
  dy_status s = DY_OK;
  int k = 0;
  for (int i = -1; !s;) {
    dy_op *op = next_training_dropout(p, &i);
    if (!op)
      break;
    s = set_int_attr(p, op, "seed", k++, err);
  }
  return s;
}

dy_status dy_program_reseed_dropout(dy_program *p, uint64_t (*next)(void),
                                    dy_error *err) {
  enum { MAX_DROPOUTS = 256 };
  int64_t old[MAX_DROPOUTS], new_[MAX_DROPOUTS];
  int n = 0;
  dy_status st = DY_OK;
  for (int i = -1; !st;) {
    dy_op *op = next_training_dropout(p, &i);
    if (!op)
      break;
    int64_t s = int_attr(op, "seed", 0);
    int k = 0;
    while (k < n && old[k] != s)
      k++;
    if (k == n) {
      if (n == MAX_DROPOUTS)
        return dy_error_at(err, op, DY_STATUS_LIMIT,
                           "dropout: more than %d dropout ops to reseed", MAX_DROPOUTS);
      old[n] = s;
      new_[n++] = (int64_t)next();
    }
    st = set_int_attr(p, op, "seed", new_[k], err);
  }
  return st;
}

dy_status dy_program_set_train_semantics(dy_program *p, int *n_changed,
                                         dy_error *err) {
  int n = 0;
  dy_block *b = p->blocks[0];
  for (int i = 0; i < b->n_ops; i++) {
    dy_op *op = b->ops[i];
    if (op->kind != DY_OP_DROPOUT && op->kind != DY_OP_BATCH_NORM)
      continue;
    if (int_attr(op, "is_test", 0) == 0)
      continue;
    dy_status s = set_int_attr(p, op, "is_test", 0, err);
    if (s)
      return s;
    n++;
    if (op->kind != DY_OP_BATCH_NORM)
      continue;
    /* running_mean, running_var = batch_norm_stats(running_mean,
     * running_var, x), right after the batch norm that reads them */
    double momentum;
    if ((s = dy_op_attr_float(op, "momentum", &momentum, err)))
      return s;
    dy_attr a = DY_ATTR_F("momentum", momentum);
    const int in[3] = {op->inputs[3], op->inputs[4], op->inputs[0]};
    dy_op *st = dy_program_append_op(p, 0, DY_OP_BATCH_NORM_STATS, in, 3, in, 2, &a, 1,
                                     op->loc);
    if (!st)
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    dy_block_move_last_to(b, ++i);
  }
  if (n_changed)
    *n_changed = n;
  return DY_OK;
}

dy_status dy_program_make_training(dy_program *p, int output, const dy_loss_spec *loss,
                                   const dy_optimizer_spec *opt, dy_error *err) {
  if (!p || !loss || !opt)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "make_training: NULL Program, loss or optimizer");
  if (output < 0 || output >= p->n_vars)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "make_training: output var %d does not exist", output);
  const dy_var *out = p->vars[output];
  if (out->persistable || out->feed_index >= 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "make_training: output '%s' is a %s, not computed by the model",
                        out->name, out->persistable ? "parameter" : "feed");
  if (dy_program_find_var(p, "label") >= 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "make_training: the model already has a var named 'label'");
  dy_status s = distinct_dropout_seeds(p, err);
  int label = -1, lossv = -1;
  if (!s)
    s = dy_program_append_loss(p, output, "label", loss, &label, &lossv, err);
  int *params = NULL, *grads = NULL, n = 0;
  if (!s)
    s = dy_program_append_backward(p, lossv, &params, &grads, &n, err);
  if (!s) {
    int k = 0;
    for (int i = 0; i < n; i++)
      k += grads[i] >= 0;
    if (k == 0)
      s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                       "make_training: the loss does not depend on any trainable "
                       "parameter (%d trainable var%s in the model)",
                       n, n == 1 ? "" : "s");
  }
  if (!s)
    s = dy_program_append_optimizer(p, opt, params, grads, n, err);
  free(params);
  free(grads);
  if (s)
    return s;
  for (int i = 0; i < p->n_fetches; i++)
    p->vars[p->fetches[i]]->fetch_index = -1;
  p->n_fetches = 0;
  if ((s = dy_program_add_fetch(p, lossv, err)))
    return s;
  if ((s = dy_verify(p, err)))
    dy_error_prefix(err, "the training Program is invalid");
  return s;
}
