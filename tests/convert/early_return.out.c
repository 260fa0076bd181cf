/* an early return in a tensor-dependent if at the top of the function:
 * the rest of the function becomes the other branch, both assign a result
 * the function returns after the cond (Paddle's return transformer). */
#include "dy_runtime.h"

/* dy2stc convert: the if of early_return.c:9 as dy_cond */
struct dy_cv_2 {
  dy_tensor **s;
  dy_tensor **x;
  dy_tensor **dy_cv_1_ret;
};
static bool dy_cv_2_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  dy_tensor *dy_cv_1_ret = *dy_cv_c->dy_cv_1_ret;
  (void)dy_cv_1_ret;
  {
    dy_tensor *big = dy_mul(x, s);
    dy_cv_1_ret =  dy_tanh(big);
  }
  dy_cv_out[0] = dy_cv_1_ret;
  return true;
}
static bool dy_cv_2_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  dy_tensor *dy_cv_1_ret = *dy_cv_c->dy_cv_1_ret;
  (void)dy_cv_1_ret;
  {
  dy_tensor *y = dy_sigmoid(x);
  if (!y)
    return false;
  dy_cv_1_ret =  dy_add(y, s);

}
  dy_cv_out[0] = dy_cv_1_ret;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *dy_cv_1_ret = NULL;
  {
    struct dy_cv_2 dy_cv_2_ctx = {&s, &x, &dy_cv_1_ret};
    dy_tensor *dy_cv_2_out[1];
    if (!dy_cond(dy_greater(s, dy_full(DY_F32, 0, NULL, 4.0)), dy_cv_2_then, dy_cv_2_else, &dy_cv_2_ctx, 1, dy_cv_2_out))
      return NULL;
    dy_cv_1_ret = dy_cv_2_out[0];
  }
  return dy_cv_1_ret;
}
