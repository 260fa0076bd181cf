/* infer_lod.c - inference of the LoD sequence ops (ir/ops_lod.def) and
 * their shared helpers (ir/dy_lod.h).
 *
 *   sequence_pool(x [T, D...] f32, offsets [N+1] i64) -> [N, D...] f32
 *
 * The offsets are a rank-1 i64 tensor of at least one entry; N is its
 * length minus one (batch+1 gives the batch). T is x's dim 0: a static
 * size or a size symbol (the feed's total length, bounded by --max-dim).
 * Whether the offsets fit T is known at run time only: the kernels check.
 */
#include <string.h>

#include "dy_lod.h"

#define OPNAME(op) dy_op_name((op)->kind)

dy_seq_pool_kind dy_seq_pool_kind_of(const char *pooltype) {
  static const char *const names[] = {"SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST"};
  for (int i = 0; pooltype && i < (int)(sizeof names / sizeof *names); i++)
    if (strcmp(pooltype, names[i]) == 0)
      return (dy_seq_pool_kind)i;
  return DY_POOL_BAD;
}

bool dy_dim_sym_plus(int64_t d, int *sym, int64_t *c) {
  dy_dim_expr e;
  if (d >= 0 || !dy_dim_expr_of(d, &e) || e.n_terms != 1 || e.t[0].coef != 1 ||
      e.t[0].n != 1 || e.c < 0)
    return false;
  *sym = e.t[0].sym[0];
  *c = e.c;
  return true;
}

int64_t dy_lod_bad_offset(const int64_t *off, int64_t n, int64_t t) {
  if (n < 1 || off[0] != 0)
    return 0;
  for (int64_t i = 1; i < n; i++)
    if (off[i] < off[i - 1] || off[i] > t)
      return i;
  return off[n - 1] == t ? -1 : n - 1;
}

/* The offsets operand: rank-1 i64; *n the sequence count (its length - 1). */
static dy_status offsets_count(const dy_op *op, const dy_type *off, int64_t *n,
                               dy_error *err) {
  char b[128];
  if (off->dtype != DY_I64 || off->rank != 1)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: the offsets are %s, not i64 "
                       "[N+1]", OPNAME(op), dy_type_str(off, b, sizeof b));
  if (off->shape[0] == 0 || !dy_dim_add_const(off->shape[0], -1, n))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: the offsets' length %s is not "
                       "N+1 for a sequence count N", OPNAME(op),
                       dy_dim_name(off->shape[0], b, sizeof b));
  return DY_OK;
}

/* The values operand: f32 of rank >= want_rank (>= 1). */
static dy_status values_of(const dy_op *op, const dy_type *x, int want_rank, dy_error *err) {
  char b[128];
  if (x->dtype != DY_F32 || x->rank < want_rank)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: the values are %s, not f32 "
                       "[T, ...] of rank >= %d", OPNAME(op), dy_type_str(x, b, sizeof b),
                       want_rank);
  return DY_OK;
}

dy_status dy_infer_sequence_pool(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                 dy_error *err) {
  (void)n;
  dy_sequence_pool_attrs a;
  int64_t ns;
  dy_status s;
  if ((s = dy_sequence_pool_attrs_of(op, &a, err)) || (s = values_of(op, &in[0], 1, err)) ||
      (s = offsets_count(op, &in[1], &ns, err)))
    return s;
  if (dy_seq_pool_kind_of(a.pooltype) == DY_POOL_BAD)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: pooltype \"%s\" is not SUM, "
                       "AVERAGE, SQRT, MAX, LAST or FIRST", OPNAME(op), a.pooltype);
  *out = in[0];
  out->shape[0] = ns;
  return DY_OK;
}
