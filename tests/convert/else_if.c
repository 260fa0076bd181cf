/* an else-if chain on tensors (the inner if converts in the outlined else
 * function) and a tensor if inside a plain C for loop (unrolled at trace
 * time, each copy converted once: the loop counter is read, never carried). */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *y;
  if (dy_bool(dy_greater(s, dy_full(DY_F32, 0, NULL, 3.0))))
    y = dy_tanh(x);
  else if (dy_bool(dy_greater(s, dy_full(DY_F32, 0, NULL, 0.0))))
    y = dy_sigmoid(x);
  else
    y = dy_neg(x);
  for (int t = 1; t <= 3; t++) {
    if (dy_bool(dy_less(dy_reduce_sum(y, 0, NULL, false), dy_full(DY_F32, 0, NULL, t))))
      y = dy_add(y, dy_full(DY_F32, 0, NULL, 0.5 * t));
  }
  return y;
}
