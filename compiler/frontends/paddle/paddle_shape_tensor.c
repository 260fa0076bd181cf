/* paddle_shape_tensor.c - attributes given as tensors (import only).
 *
 * Paddle lets an op take a list attribute from tensor inputs instead:
 * fill_constant's shape from ShapeTensor (one 1-D int tensor) or
 * ShapeTensorList (one [1] tensor per element), reshape2's from Shape /
 * ShapeTensor, slice's starts and ends from StartsTensor(List) /
 * EndsTensor(List). pd_tensor_ints reads such a slot:
 *
 *   - values known at import (a parameter's data, a constant, the output
 *     of a fill_constant) are folded: the op is imported as if the
 *     attribute had held them;
 *   - values known only at run time (a feed, a computed tensor) are an
 *     error naming the slot, except where the caller can carry them:
 *     fill_constant's shape (pd_fill_run_time below).
 *
 * A run-time shape [n0, ..., n{r-1}] uses issue 29's run-time size symbols
 * (docs/design.md, "Sizes known only at run time"): dim i is the count of
 * nonzero(iota < n_i), iota the constant 0..B (B + 1 entries), so the
 * nonzero op sets the size symbol fill_<k> (declared with bound B). n_i
 * is checked first: it is read as iota[n_i] (a gather: out of range for a
 * value above B or below 0, negative ones made B + 1 first so they do
 * not wrap), so a shape outside [0, B] is the gather's index error at the
 * op's line on every path, never a count cut short. Each count becomes a [1, .., n_i, .., 1]
 * tensor of zeros; their broadcast sum is the filled shape, to which the
 * value is added. B is 64 per dim for a shape of rank <= 2, 16 for rank
 * 3-4 and 8 above (--max-dim fill_<k>=N lowers it; a larger value stays
 * the gather's error).
 */
#include <math.h>
#include <string.h>

#include "paddle_internal.h"

/* The integer values of var, when the Program knows them at import: a
 * persistable var's data or a full op's output. */
static bool known_ints(pd_ctx *c, int var, int64_t *out, int cap, int *n) {
  const dy_var *v = c->p->vars[var];
  int64_t numel = dy_type_numel(&v->type);
  if (numel < 0 || numel > cap || v->type.dtype == DY_F32)
    return false;
  if (v->persistable && v->data) {
    for (int64_t i = 0; i < numel; i++)
      out[i] = dy_dtype_get_i64(v->type.dtype, v->data, i);
    *n = (int)numel;
    return true;
  }
  for (int b = 0; b < c->p->n_blocks; b++)
    for (int k = 0; k < c->p->blocks[b]->n_ops; k++) {
      const dy_op *o = c->p->blocks[b]->ops[k];
      if (o->kind == DY_OP_FULL && o->n_outputs == 1 && o->outputs[0] == var) {
        double value = dy_full_attrs_get(o).value;
        for (int64_t i = 0; i < numel; i++)
          out[i] = (int64_t)value;
        *n = (int)numel;
        return true;
      }
    }
  return false;
}

dy_status pd_tensor_ints(pd_ctx *c, const char *slot, const char *list, int64_t *out,
                         int cap, int *n, int *elem_vars) {
  *n = -1;
  const char *one = slot ? pd_arg(c, false, slot, 0) : NULL;
  int n_list = list ? pd_n_args(c, false, list) : 0;
  if (!one && n_list <= 0)
    return DY_OK;
  const char *from = one ? slot : list;
  int count = 0, x = -1;
  if (one) {
    PD_TRY(pd_in(c, slot, 0, &x));
    const dy_type *t = pd_type(c, x);
    if (t->rank != 1 || t->shape[0] < 0 || t->shape[0] > cap || t->dtype == DY_F32)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT,
                     "%s must be a 1-D integer tensor of a static length (at most %d)", slot,
                     cap);
    count = (int)t->shape[0];
    int got = 0;
    if (known_ints(c, x, out, cap, &got)) {
      *n = got;
      for (int i = 0; elem_vars && i < got; i++)
        elem_vars[i] = -1;
      return DY_OK;
    }
  } else if (n_list > cap) {
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s has %d tensors, at most %d", list, n_list,
                   cap);
  } else {
    count = n_list;
  }
  for (int i = 0; i < count; i++) {
    int e = -1, got = 0;
    if (one) {
      PD_TRY(pd_slice1(c, x, 0, i, i + 1, NULL, &e));
    } else {
      PD_TRY(pd_in(c, list, i, &e));
      const dy_type *t = pd_type(c, e);
      if (dy_type_numel(t) != 1 || t->dtype == DY_F32)
        return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s[%d] must be one integer", list, i);
    }
    if (known_ints(c, e, &out[i], 1, &got)) {
      if (elem_vars)
        elem_vars[i] = -1;
      continue;
    }
    if (!elem_vars)
      return pd_fail(c, DY_STATUS_UNSUPPORTED,
                     "%s is a value known only at run time ('%s'); only compile-time "
                     "constants are folded into the op", from,
                     one ? one : pd_arg(c, false, list, i));
    out[i] = -1;
    elem_vars[i] = e;
  }
  *n = count;
  return DY_OK;
}

/* [1, count]: the count of nonzero(iota < n), a run-time size symbol
 * fill_<k> bounded by bound (iota: 0..bound). */
static dy_status run_time_count(pd_ctx *c, int nvar, int iota, int64_t bound, int *out) {
  char name[32];
  snprintf(name, sizeof name, "fill");
  for (int k = 1; dy_program_sym(c->p, dy_sym_id(name)); k++)
    snprintf(name, sizeof name, "fill_%d", k);
  PD_TRY(dy_program_declare_sym(c->p, name, bound, c->err));
  /* n checked first: a negative n becomes bound + 1, and gathering
   * iota[n] fails (the index is out of range) unless 0 <= n <= bound */
  int neg, zero, big, n_eff, n_ok, mask;
  int64_t z = 0, b1 = bound + 1;
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &z, NULL, &zero));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &b1, NULL, &big));
  PD_TRY(pd_binary(c, "less", nvar, zero, NULL, &neg));
  PD_TRY(pd_op(c, "where", (int[]){neg, big, nvar}, 3, NULL, 0, NULL, &n_eff));
  dy_attr ga[DY_GATHER_NATTRS];
  int n_g = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = 0}, ga);
  PD_TRY(pd_op(c, "gather", (int[]){iota, n_eff}, 2, ga, n_g, NULL, &n_ok));
  PD_TRY(pd_binary(c, "less", iota, n_ok, NULL, &mask));
  dy_attr a[DY_NONZERO_NATTRS];
  int n_a = dy_nonzero_attrs_put(&(dy_nonzero_attrs){.given = DY_GIVEN_ALL, .size_sym = name},
                                 a);
  return pd_op(c, "nonzero", &mask, 1, a, n_a, NULL, out);
}

dy_status pd_fill_run_time(pd_ctx *c, int rank, const int64_t *shape, const int *elem_vars,
                           dy_dtype dt, double value, const char *name, int *out) {
  int64_t bound = rank <= 2 ? 64 : rank <= 4 ? 16 : 8;
  int acc = -1, zero, iota;
  int64_t z = 0, range[65];
  for (int64_t i = 0; i <= bound; i++)
    range[i] = i;
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &z, NULL, &zero));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){bound + 1}, range, NULL, &iota));
  for (int i = 0; i < rank; i++) {
    int64_t at[DY_MAX_DIMS];
    for (int d = 0; d < rank; d++)
      at[d] = 1;
    int part;
    if (elem_vars[i] < 0) { /* a folded dim: zeros along it */
      at[i] = shape[i];
      dy_attr a[DY_FULL_NATTRS];
      int n_a = dy_full_attrs_put(&(dy_full_attrs){.given = DY_GIVEN_ALL, .shape = at,
                                                   .n_shape = rank, .value = 0,
                                                   .dtype = DY_I64}, a);
      PD_TRY(pd_op(c, "full", NULL, 0, a, n_a, NULL, &part));
    } else {
      int count;
      PD_TRY(run_time_count(c, elem_vars[i], iota, bound, &count));
      at[i] = -1; /* reshape's -1: the count */
      PD_TRY(pd_reshape(c, count, rank, at, NULL, &part));
      PD_TRY(pd_binary(c, "mul", part, zero, NULL, &part));
    }
    if (acc < 0)
      acc = part;
    else
      PD_TRY(pd_binary(c, "add", acc, part, NULL, &acc));
  }
  dy_attr ca[DY_CAST_NATTRS];
  int n_c = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = dt}, ca);
  if (dt == DY_BOOL) { /* bool has no add: the value added as 0 / 1 first */
    int64_t one = value != 0;
    int vc;
    PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &one, NULL, &vc));
    PD_TRY(pd_binary(c, "add", acc, vc, NULL, &acc));
    return pd_op(c, "cast", &acc, 1, ca, n_c, name, out);
  }
  if (dt != DY_I64)
    PD_TRY(pd_op(c, "cast", &acc, 1, ca, n_c, NULL, &acc));
  uint8_t vbytes[8];
  dy_dtype_set_f64(dt, vbytes, 0, value);
  int vc;
  PD_TRY(pd_const(c, dt, 1, (int64_t[]){1}, vbytes, NULL, &vc));
  return pd_binary(c, "add", acc, vc, name, out);
}
