/* table.c - floor 3: the emitter table, dy_cg_table: for each op of
 * ir/ops.def its family's entry (dy_cg_op_<op>, codegen/ops/: emitter,
 * scratch, operands' role names), so a missing one is a link error; and
 * what the driver reads of it: the scratch each kernel needs
 * (dy_codegen_scratch_bytes, which the memory plan asks too) and the name
 * of a kernel's parameter by its operand's role. */
#include <stdio.h>

#include "cg_program.h"

const dy_cg_op *const dy_cg_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = &dy_cg_op_##name,
#include "ops.def"
#undef DY_OP
};

/* Every kernel's scratch serves one matrix or image (or head) at a time. */
int64_t dy_codegen_scratch_bytes(const dy_program *p, const dy_op *op, int64_t max_batch,
                                 int threads) {
  dy_cg_scratch_fn f = dy_cg_table[op->kind]->scratch;
  return f ? f(p, op, max_batch, threads) : 0;
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
