/* infer_util.c - what every family's inference shares: an axis normalised
 * against a rank, and numpy broadcasting of two shapes (-1 aware; also
 * used by the kernels and emitters). The bottom of the inference files
 * (infer.c's header has their order). */
#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

dy_status dy_normalize_axis(const dy_op *op, int64_t axis, int rank, int *out,
                            dy_error *err) {
  *out = 0; /* defined on the error path too */
  if (axis < -rank || axis >= (rank ? rank : 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: axis %lld out of range for rank %d", OPNAME(op),
                       (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return DY_OK;
}

/* Broadcast one pair of dims (numpy rules, -1 = B). */
static dy_status broadcast_dim(const dy_op *op, int64_t a, int64_t b,
                               int64_t *out, dy_error *err) {
  if (a == b)
    *out = a;
  else if (a == 1)
    *out = b;
  else if (b == 1)
    *out = a;
  else if (a < 0 || b < 0) {
    char x[96], y[96];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: cannot broadcast the dynamic dim %s against %s",
                       OPNAME(op), dy_dim_name(a < 0 ? a : b, x, sizeof x),
                       dy_dim_str(a < 0 ? b : a, y, sizeof y));
  }
  else
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: cannot broadcast %lld against %lld", OPNAME(op),
                       (long long)a, (long long)b);
  return DY_OK;
}

dy_status dy_broadcast_shapes(const dy_op *op, const dy_type *a,
                              const dy_type *b, dy_type *out, dy_error *err) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  out->rank = r;
  out->dtype = a->dtype;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    dy_status s = broadcast_dim(op, da, db, &out->shape[i], err);
    if (s != DY_OK) {
      char ta[128], tb[128];
      return dy_error_prefix(err, "%s vs %s", dy_type_str(a, ta, sizeof ta),
                             dy_type_str(b, tb, sizeof tb));
    }
  }
  return DY_OK;
}

/* The dim of a DY_OPF_SETS_SIZE op's size_sym attribute (a size symbol's
 * name, not the batch): its single-symbol dim into *d. */
dy_status dy_size_sym_dim(const dy_op *op, const char *name, int64_t *d, dy_error *err) {
  *d = dy_dim_sym(name);
  if (*d == DY_DIM_NONE || dy_dim_single_sym(*d) <= 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: size_sym '%s' is not a size symbol's name (nor the batch)",
                       OPNAME(op), name);
  return DY_OK;
}
