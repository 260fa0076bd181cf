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

/* Give op the attributes at[0 .. n) (its own, read, changed and written back). */
static dy_status set_attrs(dy_program *p, dy_op *op, const dy_attr *at, int n, dy_error *err) {
  if (!dy_op_set_attrs(p, op, at, n))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

/* Set a dropout op's seed (adding it when the op does not carry it). */
static dy_status set_seed(dy_program *p, dy_op *op, int64_t seed, dy_error *err) {
  dy_dropout_attrs a = dy_dropout_attrs_get(op);
  a.seed = seed;
  a.given |= DY_GIVEN(dropout, seed);
  dy_attr at[DY_DROPOUT_NATTRS];
  return set_attrs(p, op, at, dy_dropout_attrs_put(&a, at), err);
}

/* is_test of a dropout or batch_norm op. */
static int64_t is_test(const dy_op *op) {
  return op->kind == DY_OP_DROPOUT ? dy_dropout_attrs_get(op).is_test
                                   : dy_batch_norm_attrs_get(op).is_test;
}

/* Put a dropout or batch_norm op in training mode (is_test 0). */
static dy_status set_training(dy_program *p, dy_op *op, dy_error *err) {
  dy_attr at[DY_DROPOUT_NATTRS + DY_BATCH_NORM_NATTRS];
  int n;
  if (op->kind == DY_OP_DROPOUT) {
    dy_dropout_attrs a = dy_dropout_attrs_get(op);
    a.is_test = 0;
    a.given |= DY_GIVEN(dropout, is_test);
    n = dy_dropout_attrs_put(&a, at);
  } else {
    dy_batch_norm_attrs a = dy_batch_norm_attrs_get(op);
    a.is_test = 0;
    a.given |= DY_GIVEN(batch_norm, is_test);
    n = dy_batch_norm_attrs_put(&a, at);
  }
  return set_attrs(p, op, at, n, err);
}

static bool is_training_dropout(const dy_op *op) {
  return op->kind == DY_OP_DROPOUT && is_test(op) == 0;
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
    s = set_seed(p, op, k++, err);
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
    int64_t s = dy_dropout_attrs_get(op).seed;
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
    st = set_seed(p, op, new_[k], err);
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
    if (is_test(op) == 0)
      continue;
    dy_status s = set_training(p, op, err);
    if (s)
      return s;
    n++;
    if (op->kind != DY_OP_BATCH_NORM)
      continue;
    /* running_mean, running_var = batch_norm_stats(running_mean,
     * running_var, x), right after the batch norm that reads them */
    dy_batch_norm_attrs bn;
    if ((s = dy_batch_norm_attrs_of(op, &bn, err)))
      return s;
    double momentum = bn.momentum;
    dy_attr a[DY_BATCH_NORM_STATS_NATTRS];
    int n_a = dy_batch_norm_stats_attrs_put(&(dy_batch_norm_stats_attrs){
        .given = DY_GIVEN_ALL, .momentum = momentum}, a);
    const int in[3] = {op->inputs[3], op->inputs[4], op->inputs[0]};
    dy_op *st = dy_program_append_op(p, 0, DY_OP_BATCH_NORM_STATS, in, 3, in, 2, a, n_a,
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
