/* hoist.c - the pass "hoist": loop-invariant code motion out of a while.
 *
 * Requires: a verified Program. An op of a while's condition or body block
 * whose every input is defined outside the loop (a capture: a feed, a
 * constant, a value of an enclosing block) or by an op hoisted before it
 * computes the same value on every trip, so it moves out, to just before
 * the while in the while's own block, and runs once instead of once a
 * trip. Loop-carried values are the blocks' params, declared inside the
 * loop, so nothing that depends on them moves.
 *
 * A loop may run zero times, and then the hoisted op runs where it did not
 * before. So only ops that cannot fail or have effects move: not a control
 * op, not an in-place update, not an op flagged DY_OPF_CAN_FAIL (an index
 * out of range) or DY_OPF_SETS_SIZE (a run-time size), not dropout (a
 * random draw per run), not an integer div or mod (a zero divisor is an
 * error). What stays is correct whatever the trip count; what moves is
 * pure and total, so its result, read or not, changes nothing else.
 *
 * Blocks are visited from the highest index down: a nested loop's blocks
 * come after their parent's, so an op leaves the inner loop first and may
 * then leave the outer one too. The captures are re-synced afterwards
 * (the while now reads the hoisted op's output, perhaps no longer its
 * inputs). A cond's branches are never hoisted from: an op there runs
 * only when its branch is taken.
 */
#include <stdlib.h>

#include "dy_passes.h"

/* Can op run once before the loop instead of on every trip (whatever its
 * inputs)? */
static bool movable(const dy_program *p, const dy_op *op) {
  int sub[2];
  if (dy_op_sub_blocks(op, sub) || dy_op_has(op, DY_OPF_INPLACE) ||
      dy_op_has(op, DY_OPF_CAN_FAIL) || dy_op_has(op, DY_OPF_SETS_SIZE) ||
      op->kind == DY_OP_DROPOUT || op->n_outputs < 1)
    return false;
  if (op->kind == DY_OP_DIV || op->kind == DY_OP_MOD) /* an integer zero divisor fails */
    return p->vars[op->outputs[0]]->type.dtype == DY_F32;
  return true;
}

/* Move the invariant ops of block b (a while's condition or body) to
 * before the while. decl[v]: the block declaring var v, kept up to date. */
static dy_status hoist_block(dy_program *p, int b, int *decl, bool *changed, dy_error *err) {
  int ob = -1, at = -1;
  const dy_op *loop = dy_block_owner(p, b, &ob, &at);
  if (!loop || loop->kind != DY_OP_WHILE)
    return DY_OK;
  dy_block *blk = p->blocks[b];
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    if (!movable(p, op))
      continue;
    bool invariant = true;
    for (int i = 0; i < op->n_inputs && invariant; i++)
      invariant = !dy_block_within(p, decl[op->inputs[i]], b);
    if (!invariant)
      continue;
    if (!dy_block_move_op(p, b, k, ob, at))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "hoist: out of memory");
    for (int i = 0; i < op->n_outputs; i++)
      decl[op->outputs[i]] = ob;
    at++; /* the while moved one down */
    k--;
    *changed = true;
  }
  return DY_OK;
}

dy_status dy_pass_hoist(dy_program *p, bool *changed, dy_error *err) {
  if (p->n_blocks < 2)
    return DY_OK;
  int *decl = malloc(sizeof *decl * ((size_t)p->n_vars + 1));
  if (!decl)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "hoist: out of memory");
  dy_program_declaring_blocks(p, decl, 0);
  bool moved = false;
  dy_status s = DY_OK;
  for (int b = p->n_blocks - 1; b > 0 && !s; b--)
    s = hoist_block(p, b, decl, &moved, err);
  free(decl);
  if (!s && moved && !dy_program_sync_captures(p))
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "hoist: out of memory");
  *changed |= moved;
  return s;
}
