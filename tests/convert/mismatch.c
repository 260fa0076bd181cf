/* branches that give y different types: converted (the converter cannot
 * see tensor types), then dy_cond's error at this file's if line while
 * tracing (test_convert's test_type_mismatch). */
#include "dy_runtime.h"

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *y = x;
  if (dy_bool(dy_greater(s, dy_full(DY_F32, 0, NULL, 0.0))))
    y = dy_relu(x);
  else
    y = s;
  return y;
}
