/* infer_custom.c - shape and dtype inference of the custom op
 * (ops_custom.def): the output type the user's shape function gave at
 * import, held in the op (out_dtype, out_shape; -1 is the batch B).
 *
 *   custom(x...; name, out_shape, out_dtype) -> out_dtype[out_shape]
 */
#include "dy_ir.h"

dy_status dy_infer_custom(const dy_op *op, const dy_type *in, int n, dy_type *out,
                          dy_error *err) {
  dy_custom_attrs a;
  dy_status s = dy_custom_attrs_of(op, &a, err);
  if (s)
    return s;
  (void)in;
  if (n < 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "custom '%s': no inputs", a.name);
  if (a.out_dtype < 0 || a.out_dtype >= DY_DTYPE_COUNT)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "custom '%s': out_dtype %lld is not a dtype", a.name,
                       (long long)a.out_dtype);
  if (a.n_out_shape > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "custom '%s': out_shape has %d dims (at most %d)", a.name, a.n_out_shape,
                       DY_MAX_DIMS);
  *out = (dy_type){.dtype = (dy_dtype)a.out_dtype, .rank = a.n_out_shape};
  for (int d = 0; d < a.n_out_shape; d++) {
    if (a.out_shape[d] < -1)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "custom '%s': out_shape dim %d is %lld", a.name, d,
                         (long long)a.out_shape[d]);
    out->shape[d] = a.out_shape[d];
  }
  return DY_OK;
}
