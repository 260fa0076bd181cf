/* emit_control.c - the control-flow family (ir/ops_control.def): cond and
 * while. Floor 2.
 *
 * A cond or while op is not one kernel: its blocks become a C `if` / `while`
 * around their own ops' kernels, which the driver (floor 3) has to write.
 * Until it does, these emitters refuse the op with a clear message, so a
 * Program with control flow fails to compile instead of compiling wrong.
 */
#include "floor1_kernels.h"

static dy_status refuse(dy_cg_ctx *ctx, dy_error *err) {
  return dy_error_at(err, ctx->op, DY_STATUS_UNSUPPORTED,
                     "%s: cond/while are emitted by the driver as C if/while "
                     "around their blocks, which this dy2stc does not do yet; "
                     "run the model with the static executor (dy2stc run)",
                     dy_op_name(ctx->op->kind));
}

dy_status dy_emit_cond(dy_cg_ctx *ctx, dy_error *err) { return refuse(ctx, err); }
dy_status dy_emit_while(dy_cg_ctx *ctx, dy_error *err) { return refuse(ctx, err); }
