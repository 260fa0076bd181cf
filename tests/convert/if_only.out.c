/* an if without else on a negated condition: the else yields y as it was. */
#include "dy_runtime.h"

/* dy2stc convert: the if of if_only.c:8 as dy_cond */
struct dy_cv_1 {
  dy_tensor **s;
  dy_tensor **y;
};
static bool dy_cv_1_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
    y = dy_sigmoid(y);
  dy_cv_out[0] = y;
  return true;
}
static bool dy_cv_1_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_cv_out[0] = y;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *y = dy_tanh(x);
  {
    struct dy_cv_1 dy_cv_1_ctx = {&s, &y};
    dy_tensor *dy_cv_1_out[1];
    if (!dy_cond(dy_equal(dy_greater(s, dy_full(DY_F32, 0, NULL, 1.0)), dy_full(DY_BOOL, 0, NULL, 0)), dy_cv_1_then, dy_cv_1_else, &dy_cv_1_ctx, 1, dy_cv_1_out))
      return NULL;
    y = dy_cv_1_out[0];
  }
  return y;
}
