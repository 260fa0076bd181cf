#include "dy_runtime.h"
DY_TO_STATIC("x: f32[2]", "n: f32[]")
static dy_tensor *f(dy_layer *self, dy_tensor *x, dy_tensor *n) {
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  while (dy_bool(dy_less(i, n))) {
    i = dy_add(i, dy_full(DY_F32, 0, NULL, 1.0));
    if (dy_bool(dy_greater(i, n))) continue;
    x = dy_add(x, x);
  }
  return x;
}
