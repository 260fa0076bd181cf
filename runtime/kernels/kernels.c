/* kernels.c - the kernel table: dy_kernel_table[kind] is dy_kernel_<name>,
 * one reference kernel per op of ir/ops.def, built from the table itself
 * so an op without a kernel is a link error.
 *
 * Every kernel has the signature
 *
 *   dy_status dy_kernel_NAME(const dy_op *op, dy_tensor *const *in, int n_in,
 *                            dy_tensor *const *out, dy_error *err);
 *
 * and computes op on concrete inputs into outputs the caller has already
 * allocated with the inferred types (no -1 dims at kernel time). Eager calls
 * (dy_apply) and the static executor both run them through this table, and
 * constant folding uses them too, so they favour being obviously right over
 * being fast; the generated C is where speed lives. Still, a kernel never
 * trusts its caller: shapes and dtypes are checked against what the op
 * means, and anything wrong or unsupported comes back as an error naming
 * the op, never a crash.
 *
 * runtime/kernels/ has three floors, each calling only the ones below:
 *
 *   kernels.c             this table (calls every family)
 *   kernels_<family>.c    the kernels of one op family: core (ir/ops.def's
 *                         own ops), nn, math, shape, extra, fused, train,
 *                         quant, control; a fused kernel may run another
 *                         family's kernel (fused_conv2d runs conv2d)
 *   kernels_util.c        the checks, strides, broadcast iterator and maps
 *                         the families share (kernels_internal.h)
 *
 * Nothing here calls the rest of the runtime (eager ops, the tracer, the
 * executor): the kernels see tensors and ops only.
 */
#include "kernels_internal.h"

const dy_kernel_fn dy_kernel_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) \
  [DY_OP_##NAME] = dy_kernel_##name,
#include "ops.def"
#undef DY_OP
};
