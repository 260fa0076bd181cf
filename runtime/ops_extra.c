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
  dy_attr a[DY_MOD_NATTRS];
  int n_a = dy_mod_attrs_put(&(dy_mod_attrs){.given = DY_GIVEN_ALL, .fmod = c_fmod}, a);
  return dy_apply(DY_OP_MOD, IN2(x, y), 2, a, n_a, loc);
}

dy_tensor *dy_reduce_prod_at(dy_tensor *x, int n, const int64_t *axes, bool keepdim,
                             dy_srcloc loc) {
  if (n < 0 || (n > 0 && !axes))
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "reduce_prod: axes has %d entries", n);
  dy_attr a[DY_REDUCE_PROD_NATTRS];
  int n_a = dy_reduce_prod_attrs_put(&(dy_reduce_prod_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n, .keepdim = keepdim}, a);
  return dy_apply(DY_OP_REDUCE_PROD, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_cumsum_at(dy_tensor *x, int axis, bool exclusive, bool reverse,
                        dy_srcloc loc) {
  dy_attr a[DY_CUMSUM_NATTRS];
  int n_a = dy_cumsum_attrs_put(&(dy_cumsum_attrs){
      .given = DY_GIVEN_ALL, .axis = axis, .exclusive = exclusive, .reverse = reverse}, a);
  return dy_apply(DY_OP_CUMSUM, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_gather_elements_at(dy_tensor *x, dy_tensor *index, int axis,
                                  dy_srcloc loc) {
  dy_attr a[DY_GATHER_ELEMENTS_NATTRS];
  int n_a = dy_gather_elements_attrs_put(&(dy_gather_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = axis}, a);
  return dy_apply(DY_OP_GATHER_ELEMENTS, IN2(x, index), 2, a, n_a, loc);
}

dy_tensor *dy_scatter_elements_at(dy_tensor *x, dy_tensor *index, dy_tensor *updates,
                                  int axis, const char *reduction, dy_srcloc loc) {
  dy_attr a[DY_SCATTER_ELEMENTS_NATTRS];
  int n_a = dy_scatter_elements_attrs_put(&(dy_scatter_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = axis, .reduction = reduction ? reduction : "none"}, a);
  return dy_apply(DY_OP_SCATTER_ELEMENTS, IN3(x, index, updates), 3, a, n_a, loc);
}

dy_tensor *dy_gather_nd_at(dy_tensor *x, dy_tensor *index, int batch_dims,
                           dy_srcloc loc) {
  dy_attr a[DY_GATHER_ND_NATTRS];
  int n_a = dy_gather_nd_attrs_put(&(dy_gather_nd_attrs){
      .given = DY_GIVEN_ALL, .batch_dims = batch_dims}, a);
  return dy_apply(DY_OP_GATHER_ND, IN2(x, index), 2, a, n_a, loc);
}

dy_tensor *dy_scatter_nd_at(dy_tensor *x, dy_tensor *index, dy_tensor *updates,
                            const char *reduction, dy_srcloc loc) {
  dy_attr a[DY_SCATTER_ND_NATTRS];
  int n_a = dy_scatter_nd_attrs_put(&(dy_scatter_nd_attrs){
      .given = DY_GIVEN_ALL, .reduction = reduction ? reduction : "none"}, a);
  return dy_apply(DY_OP_SCATTER_ND, IN3(x, index, updates), 3, a, n_a, loc);
}

dy_tensor *dy_top_k_at(dy_tensor *x, int64_t k, int axis, bool largest, dy_srcloc loc) {
  dy_attr a[DY_TOP_K_NATTRS];
  int n_a = dy_top_k_attrs_put(&(dy_top_k_attrs){
      .given = DY_GIVEN_ALL, .k = k, .axis = axis, .largest = largest}, a);
  return dy_apply(DY_OP_TOP_K, IN1(x), 1, a, n_a, loc);
}

dy_tensor *dy_det_at(dy_tensor *x, dy_srcloc loc) {
  return dy_apply(DY_OP_DET, IN1(x), 1, NULL, 0, loc);
}

dy_tensor *dy_inverse_at(dy_tensor *x, dy_srcloc loc) {
  return dy_apply(DY_OP_INVERSE, IN1(x), 1, NULL, 0, loc);
}
