/* fold_control.c - control flow with a constant decision.
 *
 * Requires: a verified Program. A cond whose predicate is a constant
 * (persistable) becomes its taken branch: the branch's ops move into the
 * cond's block where the cond was (dy_block_splice), each output of the
 * cond is replaced by the branch's matching result, and both branch blocks
 * are dropped. A while whose condition block yields a constant false (its
 * condition folded to a persistable) never runs: its outputs are its
 * initial carried values and the op goes. When an output is fetched and
 * its replacement cannot take the output's name (a feed or a constant:
 * dy_program_forward_var), the op stays as it is. Ops are only moved out of
 * a branch that runs exactly once, where they ran anyway, so nothing with
 * effects is hoisted out of a loop or a branch not taken.
 */
#include <string.h>

#include "dy_passes.h"

/* The value of a constant bool of one element: 0, 1, or -1 if not one. */
static int constant_truth(const dy_program *p, int v) {
  const dy_var *var = p->vars[v];
  if (!var->persistable || !var->data || var->type.dtype != DY_BOOL ||
      dy_type_numel(&var->type) != 1)
    return -1;
  return *(const unsigned char *)var->data != 0;
}

/* Every output of op can be replaced by repl[i] (a fetched output needs a
 * replacement that can take its name). */
static bool replaceable(const dy_program *p, const dy_op *op, const int *repl) {
  for (int i = 0; i < op->n_outputs; i++) {
    const dy_var *out = p->vars[op->outputs[i]], *r = p->vars[repl[i]];
    if (out->fetch_index >= 0 &&
        (r->feed_index >= 0 || r->persistable || r->fetch_index >= 0 ||
         !dy_program_def(p, repl[i], NULL, NULL)))
      return false;
    for (int j = 0; j < i; j++)  /* one var cannot take two names */
      if (repl[j] == repl[i] && out->fetch_index >= 0)
        return false;
  }
  return true;
}

static void forward_outputs(dy_program *p, const dy_op *op, const int *repl) {
  for (int i = 0; i < op->n_outputs; i++)
    dy_program_forward_var(p, op->outputs[i], repl[i]);
}

dy_status dy_pass_fold_control(dy_program *p, bool *changed, dy_error *err) {
  bool any = false;
  for (int b = 0; b < p->n_blocks; b++) {
    dy_block *blk = p->blocks[b];
    for (int k = 0; k < blk->n_ops; k++) {
      dy_op *op = blk->ops[k];
      int sub[2];
      if (!dy_op_sub_blocks(op, sub))
        continue;
      if (op->kind == DY_OP_COND) {
        int t = constant_truth(p, op->inputs[0]);
        if (t < 0)
          continue;
        const dy_block *taken = p->blocks[sub[t ? 0 : 1]];
        if (!replaceable(p, op, taken->results))
          continue;
        int n = taken->n_ops;
        int results[64];
        if (op->n_outputs > 64)
          continue;
        memcpy(results, taken->results, sizeof(int) * (size_t)op->n_outputs);
        dy_block_remove_op(blk, k);
        if (!dy_block_splice(p, taken->idx, b, k))
          return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fold-control: out of memory");
        forward_outputs(p, op, results);
        k += n - 1;
      } else {
        const dy_block *cb = p->blocks[sub[0]];
        if (cb->n_results != 1 || constant_truth(p, cb->results[0]) != 0 ||
            !replaceable(p, op, op->inputs))
          continue;
        dy_block_remove_op(blk, k--);
        forward_outputs(p, op, op->inputs);
      }
      any = true;
    }
  }
  if (any) {
    dy_program_compact(p);  /* drops the blocks no op owns any more */
    if (!dy_program_sync_captures(p))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fold-control: out of memory");
    *changed = true;
  }
  return DY_OK;
}
