/* a for on a tensor: its init and increment are tensors too; the for
 * becomes a while, then dy_while. */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *one = dy_full(DY_F32, 0, NULL, 1.0);
  dy_tensor *acc = dy_mul(x, dy_full(DY_F32, 0, NULL, 0.0));
  for (dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0); dy_bool(dy_less(i, s)); i = dy_add(i, one))
    acc = dy_add(acc, dy_mul(x, i));
  return acc;
}
