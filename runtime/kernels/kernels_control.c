/* kernels_control.c - the control-flow family (ir/ops_control.def).
 *
 * cond and while run blocks of their Program, which a kernel (one op and
 * its tensors) cannot see: the static executor runs them itself
 * (runtime/executor_block.c), and eager code calls dy_cond / dy_while
 * (runtime/control.c). These entries of dy_kernel_table only say so.
 */
#include "dy_runtime_internal.h"

static dy_status not_a_kernel(const dy_op *op, dy_error *err) {
  return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                     "%s: runs its blocks through the static executor or "
                     "dy_cond/dy_while, not as a kernel", dy_op_name(op->kind));
}

dy_status dy_kernel_cond(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  (void)in, (void)n_in, (void)out;
  return not_a_kernel(op, err);
}

dy_status dy_kernel_while(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  (void)in, (void)n_in, (void)out;
  return not_a_kernel(op, err);
}
