/* cli_diff.c - two tensors compared element by element within atol +
 * rtol * |b| (cli.h), for compare and check. NaN and +-inf are exact.
 */
#include <math.h>

#include "cli.h"

dy_status dy_cli_diff_tensors(const dy_tensor *a, const dy_tensor *b, double rtol,
                              double atol, dy_cli_diff_stats *d, dy_error *err) {
  char ta[128], tb[128];
  if (!dy_type_equal(&a->type, &b->type))
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH, "shapes differ: %s vs %s",
                        dy_type_str(&a->type, ta, sizeof ta),
                        dy_type_str(&b->type, tb, sizeof tb));
  *d = (dy_cli_diff_stats){.worst = -1};
  double worst_excess = 0;
  int64_t n = dy_tensor_numel(a);
  for (int64_t i = 0; i < n; i++) {
    /* every dtype through its row of the dtype table (ir/dtypes.def):
     * i8 signed, i32 four bytes */
    double x = dy_dtype_get_f64(a->type.dtype, a->data, i);
    double y = dy_dtype_get_f64(b->type.dtype, b->data, i);
    /* NaN and +-inf are exact: equal only to the same non-finite value
     * (NaN to NaN, inf to inf of its sign), never within a tolerance */
    double ad, rd, excess;
    if (!isfinite(x) || !isfinite(y)) {
      bool same = (isnan(x) && isnan(y)) || (isinf(x) && isinf(y) && (x > 0) == (y > 0));
      ad = rd = same ? 0 : INFINITY;
      excess = same ? 0 : INFINITY;
    } else {
      ad = fabs(x - y);
      rd = ad / (fabs(y) > 1e-30 ? fabs(y) : 1e-30);
      excess = ad - (atol + rtol * fabs(y));
    }
    if (ad > d->max_abs)
      d->max_abs = ad;
    if (ad > 0 && rd > d->max_rel)
      d->max_rel = rd;
    if (excess > 0) {
      d->n_bad++;
      if (excess > worst_excess) {
        worst_excess = excess;
        d->worst = i;
      }
    }
  }
  return DY_OK;
}
