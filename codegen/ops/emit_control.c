/* emit_control.c - the control-flow family (ir/ops_control.def): cond and
 * while. Floor 2.
 *
 * A cond or while op is not one kernel: the driver (program/blocks.c)
 * writes it into NAME_run as a C `if (pred) { ... } else { ... }` or
 * a guarded `for (;;)` around the calls of its blocks' kernels, with the
 * copies that bind block params and results. No kernel function is made
 * for the op itself, so these emitters are never called for a Program the
 * driver accepts; they refuse, naming the op, if one is.
 */
#include "cg_ops.h"

static dy_status refuse(dy_cg_ctx *ctx, dy_error *err) {
  return dy_error_at(err, ctx->op, DY_STATUS_INVALID_ARGUMENT,
                     "%s: op %d has no kernel of its own; the driver writes it as C "
                     "if/while around its blocks' kernels",
                     dy_op_name(ctx->op->kind), ctx->op->id);
}

dy_status dy_emit_cond(dy_cg_ctx *ctx, dy_error *err) { return refuse(ctx, err); }
dy_status dy_emit_while(dy_cg_ctx *ctx, dy_error *err) { return refuse(ctx, err); }

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_cond = {.emit = dy_emit_cond};
const dy_cg_op dy_cg_op_while = {.emit = dy_emit_while};
