/* grad_extra.c - gradient rules of the extra family (ops_extra.def); the
 * contract is in dy_grad.h. */
#include "grad_internal.h"

DY_GRAD_TODO(sin)
DY_GRAD_TODO(cos)
DY_GRAD_TODO(tan)
DY_GRAD_TODO(asin)
DY_GRAD_TODO(acos)
DY_GRAD_TODO(atan)
DY_GRAD_TODO(mod)
DY_GRAD_TODO(reduce_prod)
DY_GRAD_TODO(cumsum)
DY_GRAD_TODO(gather_elements)
DY_GRAD_TODO(gather_nd)
DY_GRAD_TODO(scatter_elements)
DY_GRAD_TODO(scatter_nd)
DY_GRAD_TODO(top_k)
DY_GRAD_TODO(det)
DY_GRAD_TODO(grid_sample)
DY_GRAD_TODO(roi_align)
