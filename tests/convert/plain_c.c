/* conditions on plain C values are not converted: they are evaluated once,
 * at trace time (as Paddle does with Python values). */
#include "dy_runtime.h"

static int n_layers = 2;

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *y = x;
  for (int k = 0; k < n_layers; k++)
    y = dy_tanh(dy_add(y, x));
  if (n_layers > 1)
    y = dy_relu(y);
  return y;
}
