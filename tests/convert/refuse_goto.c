/* refused: a goto inside a tensor-dependent if */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *y = x;
  if (dy_bool(dy_greater(dy_reduce_sum(x, 0, NULL, false), dy_full(DY_F32, 0, NULL, 0.0)))) {
    y = dy_relu(x);
    goto done;
  }
  y = dy_neg(y);
done:
  return y;
}
