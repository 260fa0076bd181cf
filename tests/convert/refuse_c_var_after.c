/* refused: a C variable assigned in a tensor-dependent if and read after it */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  float scale = 1.0f;
  if (dy_bool(dy_greater(dy_reduce_sum(x, 0, NULL, false), dy_full(DY_F32, 0, NULL, 0.0))))
    scale = 2.0f;
  return dy_mul(x, dy_full(DY_F32, 0, NULL, scale));
}
