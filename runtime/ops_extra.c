/* ops_extra.c - eager / tracing entry points of the extra op family.
 *
 * Each dy_<op>_at packs its arguments into the op's attributes, exactly as
 * ir/ops_extra.def lists them, and hands over to dy_apply (ops.c), which
 * infers, allocates, computes (or only types, in static mode) and records.
 * Semantics live in kernels_extra.c.
 */
#include "dy_runtime_internal.h"

#define IN1(x) ((dy_tensor *const[]){(x)})
#define IN2(x, y) ((dy_tensor *const[]){(x), (y)})
#define IN3(x, y, z) ((dy_tensor *const[]){(x), (y), (z)})

dy_tensor *dy_mod_at(dy_tensor *x, dy_tensor *y, bool c_fmod, dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_I("fmod", c_fmod)};
  return dy_apply(DY_OP_MOD, IN2(x, y), 2, a, 1, loc);
}

dy_tensor *dy_reduce_prod_at(dy_tensor *x, int n, const int64_t *axes, bool keepdim,
                             dy_srcloc loc) {
  if (n < 0 || (n > 0 && !axes))
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "reduce_prod: axes has %d entries", n);
  dy_attr a[] = {DY_ATTR_IS("axes", axes, n), DY_ATTR_I("keepdim", keepdim)};
  return dy_apply(DY_OP_REDUCE_PROD, IN1(x), 1, a, 2, loc);
}

dy_tensor *dy_cumsum_at(dy_tensor *x, int axis, bool exclusive, bool reverse,
                        dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_I("axis", axis), DY_ATTR_I("exclusive", exclusive),
                 DY_ATTR_I("reverse", reverse)};
  return dy_apply(DY_OP_CUMSUM, IN1(x), 1, a, 3, loc);
}

dy_tensor *dy_gather_elements_at(dy_tensor *x, dy_tensor *index, int axis,
                                  dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_I("axis", axis)};
  return dy_apply(DY_OP_GATHER_ELEMENTS, IN2(x, index), 2, a, 1, loc);
}

dy_tensor *dy_scatter_elements_at(dy_tensor *x, dy_tensor *index, dy_tensor *updates,
                                  int axis, const char *reduction, dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_I("axis", axis), DY_ATTR_S("reduction", reduction ? reduction : "none")};
  return dy_apply(DY_OP_SCATTER_ELEMENTS, IN3(x, index, updates), 3, a, 2, loc);
}

dy_tensor *dy_gather_nd_at(dy_tensor *x, dy_tensor *index, int batch_dims,
                           dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_I("batch_dims", batch_dims)};
  return dy_apply(DY_OP_GATHER_ND, IN2(x, index), 2, a, 1, loc);
}

dy_tensor *dy_scatter_nd_at(dy_tensor *x, dy_tensor *index, dy_tensor *updates,
                            const char *reduction, dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_S("reduction", reduction ? reduction : "none")};
  return dy_apply(DY_OP_SCATTER_ND, IN3(x, index, updates), 3, a, 1, loc);
}

dy_tensor *dy_top_k_at(dy_tensor *x, int64_t k, int axis, bool largest, dy_srcloc loc) {
  dy_attr a[] = {DY_ATTR_I("k", k), DY_ATTR_I("axis", axis), DY_ATTR_I("largest", largest)};
  return dy_apply(DY_OP_TOP_K, IN1(x), 1, a, 3, loc);
}

dy_tensor *dy_det_at(dy_tensor *x, dy_srcloc loc) {
  return dy_apply(DY_OP_DET, IN1(x), 1, NULL, 0, loc);
}

dy_tensor *dy_inverse_at(dy_tensor *x, dy_srcloc loc) {
  return dy_apply(DY_OP_INVERSE, IN1(x), 1, NULL, 0, loc);
}
