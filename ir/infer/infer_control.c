/* infer_control.c - inference of the control-flow ops (ops_control.def).
 *
 * Without the Program an op's blocks are out of reach, so these rules check
 * what the inputs alone decide: cond's predicate is a bool of one element
 * (static shape); while's n_carried lies in [1, n_in], and its outputs are
 * the carried values' types (loop-carried values keep their type). cond's
 * output types are its branches' results: dy_infer_in (blocks.c) gives
 * them inside a Program, so dy_infer_cond alone reports that.
 */
#include "dy_ir.h"

dy_status dy_infer_cond(const dy_op *op, const dy_type *in, int n_in,
                        dy_type *out, dy_error *err) {
  (void)out;
  char t[128];
  if (n_in < 1 || in[0].dtype != DY_BOOL || dy_type_numel(&in[0]) != 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "cond: the predicate must be a bool of one element, got %s",
                       n_in < 1 ? "nothing" : dy_type_str(&in[0], t, sizeof t));
  dy_cond_attrs a;
  dy_status s = dy_cond_attrs_of(op, &a, err);
  if (s)
    return s;
  return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                     "cond: its output types come from its branch blocks "
                     "(dy_infer_in with the Program)");
}

dy_status dy_infer_while(const dy_op *op, const dy_type *in, int n_in,
                         dy_type *out, dy_error *err) {
  dy_while_attrs a;
  dy_status s = dy_while_attrs_of(op, &a, err);
  if (s)
    return s;
  if (a.n_carried < 1 || a.n_carried > n_in)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "while: n_carried %lld is not in [1, %d] (its inputs)",
                       (long long)a.n_carried, n_in);
  if (a.max_iterations < 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "while: max_iterations %lld is negative",
                       (long long)a.max_iterations);
  for (int i = 0; i < a.n_carried; i++)
    out[i] = in[i];
  return DY_OK;
}
