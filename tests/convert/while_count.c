/* a while whose trip count is the data's: i counts up to sum(x) (0, 1 and
 * many trips on the harness's inputs); i and y are carried, s and half
 * are read. */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *half = dy_full(DY_F32, 0, NULL, 0.5);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *y = x;
  while (dy_bool(dy_less(i, s))) {
    i = dy_add(i, dy_full(DY_F32, 0, NULL, 1.0));
    y = dy_add(dy_mul(y, half), i);
  }
  return dy_add(y, i);
}
