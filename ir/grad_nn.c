/* grad_nn.c - gradient rules of the nn family (ops_nn.def); the
 * contract is in dy_grad.h. */
#include "grad_internal.h"

DY_GRAD_TODO(conv2d)
DY_GRAD_TODO(conv2d_transpose)
DY_GRAD_TODO(pool2d)
DY_GRAD_TODO(batch_norm)
DY_GRAD_TODO(layer_norm)
DY_GRAD_TODO(group_norm)
DY_GRAD_TODO(dropout)
