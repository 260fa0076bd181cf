/* table.c - floor 3: the emitter table, dy_cg_table: for each op of
 * ir/ops.def its family's entry (dy_cg_op_<op>, codegen/ops/: emitter,
 * scratch, operands' role names), so a missing one is a link error; and
 * what the driver reads of it: the scratch each kernel needs
 * (dy_codegen_scratch_bytes; dy_codegen_scratch_sizes for every op once,
 * which the compiler's driver hands to the memory plan) and the name
 * of a kernel's parameter by its operand's role. */
#include <stdio.h>

#include "cg_program.h"

const dy_cg_op *const dy_cg_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = &dy_cg_op_##name,
#include "ops.def"
#undef DY_OP
};

/* Every kernel's scratch serves one matrix or image (or head) at a time. */
int64_t dy_codegen_scratch_bytes(const dy_program *p, const dy_op *op, int threads) {
  dy_cg_scratch_fn f = dy_cg_table[op->kind]->scratch;
  return f ? f(p, op, threads) : 0;
}

/* Slots are block-major (dy_codegen_op_slot): block 0's ops, then 1's... */
void dy_codegen_scratch_sizes(const dy_program *p, int threads, int64_t *bytes) {
  int slot = 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++)
      bytes[slot++] = dy_codegen_scratch_bytes(p, p->blocks[b]->ops[k], threads);
}

const char *cg_operand_role(const dy_op *op, bool out, int i, char *buf, size_t n) {
  const dy_cg_op *e = dy_cg_table[op->kind];
  if (out)
    return "y";
  if (e->role_prefix) {
    snprintf(buf, n, "%s%d", e->role_prefix, i);
    return buf;
  }
  if (e->roles[0])
    return i < DY_CG_MAX_ROLES ? e->roles[i] : NULL;
  if (op->n_inputs == 1)
    return "x";
  if (op->n_inputs == 2 && dy_op_has(op, DY_OPF_ELEMENTWISE))
    return i == 0 ? "a" : "b";
  return NULL;
}
