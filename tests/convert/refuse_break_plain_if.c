/* refused: a break under a plain C if of a tensor-dependent loop */
#include "dy_runtime.h"

static int limit = 3;

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *y = x;
  while (dy_bool(dy_less(dy_reduce_sum(y, 0, NULL, false), dy_full(DY_F32, 0, NULL, 9.0)))) {
    y = dy_add(y, x);
    if (limit < 2)
      break;
  }
  return y;
}
