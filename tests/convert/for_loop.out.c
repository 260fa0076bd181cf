/* a for on a tensor: its init and increment are tensors too; the for
 * becomes a while, then dy_while. */
#include "dy_runtime.h"

/* dy2stc convert: the loop of for_loop.c:10 as dy_while */
struct dy_cv_1 {
  dy_tensor **i;
  dy_tensor **s;
  dy_tensor **acc;
  dy_tensor **x;
  dy_tensor **one;
};
static dy_tensor *dy_cv_1_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *i = dy_cv_in[0];
  (void)i;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *acc = dy_cv_in[1];
  (void)acc;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  (void)dy_cv_c;
  return dy_less(i, s);
}
static bool dy_cv_1_body(void *dy_cv_ctx, dy_tensor *const *dy_cv_in,
                          dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *i = dy_cv_in[0];
  (void)i;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *acc = dy_cv_in[1];
  (void)acc;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  (void)dy_cv_c;
  {
    acc = dy_add(acc, dy_mul(x, i));
  i = dy_add(i, one);
  }
  dy_cv_out[0] = i;
  dy_cv_out[1] = acc;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *one = dy_full(DY_F32, 0, NULL, 1.0);
  dy_tensor *acc = dy_mul(x, dy_full(DY_F32, 0, NULL, 0.0));
  {
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  {
    struct dy_cv_1 dy_cv_1_ctx = {&i, &s, &acc, &x, &one};
    dy_tensor *dy_cv_1_carried[2] = {i, acc};
    if (!dy_while(dy_cv_1_cond, dy_cv_1_body, &dy_cv_1_ctx, 2, dy_cv_1_carried))
      return NULL;
    i = dy_cv_1_carried[0];
    acc = dy_cv_1_carried[1];
  }
  }
  return acc;
}
