/* cse.c - common-subexpression elimination.
 *
 * Requires: a verified Program (SSA). Two ops of the same kind reading the
 * same vars with equal attributes compute the same value (ops are pure),
 * so the later one's output is replaced by the earlier one's and the later
 * op removed, in every block (each on its own: nothing moves between a
 * block and its sub-blocks). In-place ops (updates of state) have effects:
 * never merged. A later output that is fetched keeps its name (see
 * dy_program_forward_var); when that is impossible the op stays.
 */
#include <string.h>

#include "dy_passes.h"

static bool same_attr(const dy_attr *a, const dy_attr *b) {
  if (strcmp(a->name, b->name) != 0 || a->kind != b->kind)
    return false;
  switch (a->kind) {
  case DY_ATTR_INT: return a->i == b->i;
  case DY_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
  case DY_ATTR_INTS:
    return a->n == b->n && (!a->n || memcmp(a->ints, b->ints, sizeof *a->ints * (size_t)a->n) == 0);
  case DY_ATTR_FLOATS:
    return a->n == b->n &&
           (!a->n || memcmp(a->floats, b->floats, sizeof *a->floats * (size_t)a->n) == 0);
  case DY_ATTR_STRING: return strcmp(a->s, b->s) == 0;
  }
  return false;
}

/* Same kind, inputs and attributes (attributes in any order). */
static bool same_op(const dy_op *a, const dy_op *b) {
  if (a->kind != b->kind || a->n_inputs != b->n_inputs ||
      a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs)
    return false;
  for (int i = 0; i < a->n_inputs; i++)
    if (a->inputs[i] != b->inputs[i])
      return false;
  for (int i = 0; i < a->n_attrs; i++) {
    const dy_attr *o = dy_op_find_attr(b, a->attrs[i].name);
    if (!o || !same_attr(&a->attrs[i], o))
      return false;
  }
  return true;
}

/* Within each block: an op is merged with an earlier one of its own block
 * only, never moved in or out of a branch or loop. */
static dy_status cse_block(dy_program *p, dy_block *blk, bool *changed,
                           dy_error *err) {
  for (int k = 1; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    if (dy_op_has(op, DY_OPF_INPLACE))
      continue;
    for (int j = 0; j < k; j++) {
      const dy_op *first = blk->ops[j];
      if (!same_op(first, op))
        continue;
      bool ok = true;
      for (int i = 0; i < op->n_outputs && ok; i++)
        ok = p->vars[op->outputs[i]]->fetch_index < 0 ||
             p->vars[first->outputs[i]]->fetch_index < 0;
      if (!ok)
        break;
      for (int i = 0; i < op->n_outputs; i++)
        if (!dy_program_forward_var(p, op->outputs[i], first->outputs[i]))
          ok = false;
      if (!ok)
        break;  /* the fetch could not move; the op stays */
      /* the op that stays computes for both source lines */
      dy_op *kept = blk->ops[j];
      if (!dy_op_set_srcs(p, kept, (const dy_op *const[]){kept, op}, 2))
        return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "cse: out of memory");
      dy_block_remove_op(blk, k--);
      *changed = true;
      break;
    }
  }
  return DY_OK;
}

dy_status dy_pass_cse(dy_program *p, bool *changed, dy_error *err) {
  dy_status s = DY_OK;
  for (int b = 0; b < p->n_blocks && !s; b++)
    s = cse_block(p, p->blocks[b], changed, err);
  return s;
}
