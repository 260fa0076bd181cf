/* an if on a tensor inside a while on a tensor (converted in two passes),
 * and an if on a plain C value inside the loop, which stays as it is. */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  const int clip = 1;
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *y = x;
  while (dy_bool(dy_less(i, s))) {
    i = dy_add(i, dy_full(DY_F32, 0, NULL, 1.0));
    if (dy_bool(dy_greater(dy_reduce_sum(y, 0, NULL, false), s))) {
      y = dy_sub(y, dy_full(DY_F32, 0, NULL, 1.0));
    } else {
      y = dy_add(y, x);
      if (clip)
        y = dy_clip(y, -20.0f, 20.0f);
    }
  }
  return y;
}
