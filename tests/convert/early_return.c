/* an early return in a tensor-dependent if at the top of the function:
 * the rest of the function becomes the other branch, both assign a result
 * the function returns after the cond (Paddle's return transformer). */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  if (dy_bool(dy_greater(s, dy_full(DY_F32, 0, NULL, 4.0)))) {
    dy_tensor *big = dy_mul(x, s);
    return dy_tanh(big);
  }
  dy_tensor *y = dy_sigmoid(x);
  if (!y)
    return NULL;
  return dy_add(y, s);
}
