/* grad_fused.c - gradient rules of the fused family (ops_fused.def); the
 * contract is in dy_grad.h. */
#include "grad_internal.h"

DY_GRAD_TODO(fused_matmul)
DY_GRAD_TODO(fused_elementwise)
DY_GRAD_TODO(fused_conv2d)
