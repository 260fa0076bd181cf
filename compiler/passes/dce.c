/* dce.c - dead-code elimination.
 *
 * Requires: a verified Program. Ops have no side effects, except in-place
 * ops (DY_OPF_INPLACE: an optimizer's update, running statistics), which
 * are always live; any other op none of whose outputs is read by another
 * op or fetched is dead. Walking each
 * block backwards removes whole dead chains in one sweep; then vars that
 * nothing refers to any more (their parameters included) are dropped.
 */
#include <stdlib.h>

#include "dy_passes.h"

dy_status dy_pass_dce(dy_program *p, bool *changed,
                      dy_error *err) {
  int *uses = calloc((size_t)p->n_vars + 1, sizeof *uses);
  if (!uses)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "dce: out of memory");
  for (int v = 0; v < p->n_vars; v++)
    uses[v] = p->vars[v]->fetch_index >= 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      const dy_op *op = p->blocks[b]->ops[k];
      for (int i = 0; i < op->n_inputs; i++)
        uses[op->inputs[i]]++;
    }
  int n_vars = p->n_vars;
  for (int b = p->n_blocks - 1; b >= 0; b--) {
    dy_block *blk = p->blocks[b];
    for (int k = blk->n_ops - 1; k >= 0; k--) {
      const dy_op *op = blk->ops[k];
      bool live = dy_op_has(op, DY_OPF_INPLACE);
      for (int i = 0; i < op->n_outputs; i++)
        live |= uses[op->outputs[i]] > 0;
      if (live)
        continue;
      for (int i = 0; i < op->n_inputs; i++)
        uses[op->inputs[i]]--;
      dy_block_remove_op(blk, k);
      *changed = true;
    }
  }
  free(uses);
  dy_program_compact(p);
  *changed |= p->n_vars != n_vars;
  return DY_OK;
}
