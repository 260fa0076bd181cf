/* dce.c - dead-code elimination.
 *
 * Requires: a verified Program. Ops have no side effects, except those
 * flagged DY_OPF_INPLACE (an optimizer step, a running statistic), which
 * always stay; so any other op none of whose outputs is read by another op,
 * yielded by its block or fetched is dead. Walking each block backwards
 * removes whole dead chains in one sweep. Sub-blocks go first (they have
 * higher indices than their parents): a var of an enclosing block read
 * inside one counts as read by the control op that captures it, so once
 * the inner readers are gone the op's captures are re-synced
 * (dy_program_sync_captures) and the outer producer can die in the same
 * sweep; a dead cond or while takes its blocks with it. Then vars and
 * blocks that nothing refers to any more (their parameters included) are
 * dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_passes.h"

/* Count a read of v in block b, unless it is a capture (v comes from an
 * enclosing block: its control op's input counts instead). */
static void count(const dy_program *p, const int *decl, int *uses, int b, int v,
                  int delta) {
  if (decl[v] < 0 || decl[v] == b || !dy_block_within(p, decl[v], b))
    uses[v] += delta;
}

dy_status dy_pass_dce(dy_program *p, bool *changed,
                      dy_error *err) {
  int *uses = calloc(2 * ((size_t)p->n_vars + 1), sizeof *uses);
  if (!uses)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "dce: out of memory");
  int *decl = uses + p->n_vars + 1;
  dy_program_declaring_blocks(p, decl, -1);
  for (int v = 0; v < p->n_vars; v++)
    uses[v] = p->vars[v]->fetch_index >= 0;
  for (int b = 0; b < p->n_blocks; b++) {
    const dy_block *blk = p->blocks[b];
    for (int k = 0; k < blk->n_ops; k++) {
      const dy_op *op = blk->ops[k];
      for (int i = 0; i < op->n_inputs; i++)
        count(p, decl, uses, b, op->inputs[i], 1);
    }
    for (int i = 0; i < blk->n_results; i++)
      count(p, decl, uses, b, blk->results[i], 1);
  }
  int n_vars = p->n_vars, n_blocks = p->n_blocks;
  for (int b = p->n_blocks - 1; b >= 0; b--) {
    dy_block *blk = p->blocks[b];
    for (int k = blk->n_ops - 1; k >= 0; k--) {
      dy_op *op = blk->ops[k];
      if (dy_op_sub_blocks(op, (int[2]){0})) {
        /* its blocks are swept: drop captures nothing reads any more */
        int n_in = op->n_inputs;
        int before[256];
        if (n_in <= 256) {
          memcpy(before, op->inputs, sizeof(int) * (size_t)n_in);
          if (!dy_op_sync_captures(p, op)) {
            free(uses);
            return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "dce: out of memory");
          }
          for (int i = 0; i < n_in; i++)
            count(p, decl, uses, b, before[i], -1);
          for (int i = 0; i < op->n_inputs; i++)
            count(p, decl, uses, b, op->inputs[i], 1);
          *changed |= op->n_inputs != n_in;
        }
      }
      bool live = dy_op_has(op, DY_OPF_INPLACE);
      for (int i = 0; i < op->n_outputs; i++)
        live |= uses[op->outputs[i]] > 0;
      if (live)
        continue;
      for (int i = 0; i < op->n_inputs; i++)
        count(p, decl, uses, b, op->inputs[i], -1);
      dy_block_remove_op(blk, k);
      *changed = true;
    }
  }
  free(uses);
  dy_program_compact(p);
  *changed |= p->n_vars != n_vars || p->n_blocks != n_blocks;
  return DY_OK;
}
