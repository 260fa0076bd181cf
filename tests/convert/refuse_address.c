/* refused: a pointer to a variable of the function escaping a branch */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *y = x, *z = x;
  dy_tensor **pick = &y;
  if (dy_bool(dy_greater(dy_reduce_sum(x, 0, NULL, false), dy_full(DY_F32, 0, NULL, 0.0))))
    pick = &z;
  *pick = dy_relu(x);
  return dy_add(y, z);
}
