/* refused: a return of a value inside a tensor-dependent loop */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *y = x;
  while (dy_bool(dy_less(dy_reduce_sum(y, 0, NULL, false), dy_full(DY_F32, 0, NULL, 9.0)))) {
    y = dy_add(y, x);
    return y;
  }
  return y;
}
