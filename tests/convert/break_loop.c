/* break and continue in tensor-dependent loops: the break becomes a bool
 * tensor carried through the loop (the condition turns into !brk && P, the
 * rest of the body runs only when the if does not break); a continue just
 * skips the rest of the body. */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *one = dy_full(DY_F32, 0, NULL, 1.0);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *y = x;
  while (dy_bool(dy_less(i, dy_full(DY_F32, 0, NULL, 100.0)))) {
    i = dy_add(i, one);
    if (dy_bool(dy_greater(i, s)))
      break;
    y = dy_add(y, x);
  }
  dy_tensor *j = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *acc = dy_mul(x, dy_full(DY_F32, 0, NULL, 0.0));
  while (dy_bool(dy_less(j, dy_full(DY_F32, 0, NULL, 6.0)))) {
    j = dy_add(j, one);
    if (dy_bool(dy_greater(j, s))) {
      acc = dy_sub(acc, one);
      continue;
    }
    acc = dy_add(acc, dy_mul(x, j));
  }
  return dy_add(dy_add(y, i), acc);
}
