/* if/else on a tensor: y is assigned in both branches (the cond's output);
 * an error path (return NULL) and a C value read inside. */
#include "dy_runtime.h"

/* dy2stc convert: the if of if_else.c:11 as dy_cond */
struct dy_cv_1 {
  dy_tensor **s;
  dy_tensor **zero;
  dy_tensor **x;
  dy_tensor **y;
  double *gain;
};
static bool dy_cv_1_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *zero = *dy_cv_c->zero;
  (void)zero;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  double gain = *dy_cv_c->gain;
  (void)gain;
  {
    dy_tensor *r = dy_relu(x);
    if (!r)
      return false;
    y = dy_mul(r, dy_full(DY_F32, 0, NULL, gain));
  }
  dy_cv_out[0] = y;
  return true;
}
static bool dy_cv_1_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *zero = *dy_cv_c->zero;
  (void)zero;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  double gain = *dy_cv_c->gain;
  (void)gain;
  {
    y = dy_neg(x);
  }
  dy_cv_out[0] = y;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *zero = dy_full(DY_F32, 0, NULL, 0.0);
  double gain = 2.0;
  dy_tensor *y;
  {
    struct dy_cv_1 dy_cv_1_ctx = {&s, &zero, &x, &y, &gain};
    dy_tensor *dy_cv_1_out[1];
    if (!dy_cond(dy_greater(s, zero), dy_cv_1_then, dy_cv_1_else, &dy_cv_1_ctx, 1, dy_cv_1_out))
      return NULL;
    y = dy_cv_1_out[0];
  }
  return dy_add(y, s);
}
