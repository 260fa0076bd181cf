/* refused: two tensor conditions joined by && */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false), *y = x;
  if (dy_bool(dy_greater(s, dy_full(DY_F32, 0, NULL, 0.0))) && dy_bool(dy_less(s, dy_full(DY_F32, 0, NULL, 9.0))))
    y = dy_relu(x);
  return y;
}
