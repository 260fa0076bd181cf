/* a while whose trip count is the data's: i counts up to sum(x) (0, 1 and
 * many trips on the harness's inputs); i and y are carried, s and half
 * are read. */
#include "dy_runtime.h"

/* dy2stc convert: the loop of while_count.c:12 as dy_while */
struct dy_cv_1 {
  dy_tensor **i;
  dy_tensor **s;
  dy_tensor **y;
  dy_tensor **half;
};
static dy_tensor *dy_cv_1_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *i = dy_cv_in[0];
  (void)i;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = dy_cv_in[1];
  (void)y;
  dy_tensor *half = *dy_cv_c->half;
  (void)half;
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
  dy_tensor *y = dy_cv_in[1];
  (void)y;
  dy_tensor *half = *dy_cv_c->half;
  (void)half;
  (void)dy_cv_c;
  {
    i = dy_add(i, dy_full(DY_F32, 0, NULL, 1.0));
    y = dy_add(dy_mul(y, half), i);
  }
  dy_cv_out[0] = i;
  dy_cv_out[1] = y;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *half = dy_full(DY_F32, 0, NULL, 0.5);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *y = x;
  {
    struct dy_cv_1 dy_cv_1_ctx = {&i, &s, &y, &half};
    dy_tensor *dy_cv_1_carried[2] = {i, y};
    if (!dy_while(dy_cv_1_cond, dy_cv_1_body, &dy_cv_1_ctx, 2, dy_cv_1_carried))
      return NULL;
    i = dy_cv_1_carried[0];
    y = dy_cv_1_carried[1];
  }
  return dy_add(y, i);
}
