/* fold.c - constant folding.
 *
 * Requires: a verified Program. An op whose inputs are all persistable
 * (constants and parameters) — or that has no inputs, like full — is
 * evaluated now with the runtime's reference kernels, and its output
 * becomes a persistable var holding the result. Its shape must be static.
 * Ops inside sub-blocks fold too (their constants become captures);
 * control ops with a constant predicate are fold_control.c's.
 *
 * A training Program (dy_program_is_training) updates its parameters and
 * optimizer state every run: an in-place op is never folded, nor any op
 * reading a trainable var or a var an in-place op writes
 * (dy_pass_var_is_constant).
 *
 * Folding trades code for data: a `full` of a million elements is cheaper
 * as a loop than as four megabytes of flash. So an op is folded only when
 * its result is no bigger than FOLD_SLACK bytes plus twice its inputs.
 */
#include <string.h>

#include "dy_passes.h"

enum { FOLD_SLACK = 4096 };

static bool foldable(const dy_program *p, const dy_op *op, bool training,
                     int64_t *in_bytes) {
  *in_bytes = 0;
  if (dy_op_sub_blocks(op, (int[2]){0}) || dy_op_has(op, DY_OPF_INPLACE) ||
      dy_op_has(op, DY_OPF_SETS_SIZE))
    return false;  /* control flow: fold_control.c; effects stay; a size set
                      at run time is a symbol the later types use */
  for (int i = 0; i < op->n_inputs; i++) {
    const dy_var *v = p->vars[op->inputs[i]];
    if (!dy_pass_var_is_constant(p, v->id, training))
      return false;
    *in_bytes += dy_type_numel(&v->type) * (int64_t)dy_dtype_size(v->type.dtype);
  }
  for (int i = 0; i < op->n_outputs; i++) {
    const dy_var *o = p->vars[op->outputs[i]];
    int64_t n = dy_type_numel(&o->type);
    if (n < 0 || n * (int64_t)dy_dtype_size(o->type.dtype) > FOLD_SLACK + 2 * *in_bytes)
      return false;
  }
  return op->n_outputs == 1;
}

/* Evaluate op; on success its output var holds the result. */
static dy_status evaluate(dy_program *p, const dy_op *op, dy_error *err) {
  dy_tensor *in[64], *out;
  if (op->n_inputs > 64)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "fold: too many inputs");
  dy_scope_begin();
  for (int i = 0; i < op->n_inputs; i++) {
    const dy_var *v = p->vars[op->inputs[i]];
    in[i] = dy_tensor_from_data(v->type.dtype, v->type.rank, v->type.shape, v->data);
  }
  dy_var *o = p->vars[op->outputs[0]];
  out = dy_tensor_new(o->type.dtype, o->type.rank, o->type.shape);
  dy_status s = DY_OK;
  for (int i = 0; i < op->n_inputs && !s; i++)
    if (!in[i])
      s = dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "fold: out of memory");
  if (!s && !out)
    s = dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "fold: out of memory");
  if (!s)
    s = dy_kernel_table[op->kind](op, in, op->n_inputs, &out, err);
  if (!s)
    s = dy_program_set_data(p, o->id, out->data, out->nbytes, err);
  dy_scope_end();
  dy_clear_error();
  return s;
}

dy_status dy_pass_fold(dy_program *p, bool *changed,
                       dy_error *err) {
  bool inner = false;
  const bool training = dy_program_is_training(p);
  for (int b = 0; b < p->n_blocks; b++) {
    dy_block *blk = p->blocks[b];
    for (int k = 0; k < blk->n_ops; k++) {
      const dy_op *op = blk->ops[k];
      int64_t in_bytes;
      if (!foldable(p, op, training, &in_bytes))
        continue;
      dy_status s = evaluate(p, op, err);
      if (s)
        return s;
      dy_block_remove_op(blk, k--);
      *changed = true;
      inner |= b > 0;
    }
  }
  /* a constant made inside a branch or loop is read from block 0 now */
  if (inner && !dy_program_sync_captures(p))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fold: out of memory");
  return DY_OK;
}
