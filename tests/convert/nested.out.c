/* an if on a tensor inside a while on a tensor (converted in two passes),
 * and an if on a plain C value inside the loop, which stays as it is. */
#include "dy_runtime.h"

/* dy2stc convert: the loop of nested.c:11 as dy_while */
struct dy_cv_1 {
  dy_tensor **i;
  dy_tensor **s;
  dy_tensor **y;
  dy_tensor **x;
  const int *clip;
};
static dy_tensor *dy_cv_1_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *i = dy_cv_in[0];
  (void)i;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = dy_cv_in[1];
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  const int clip = *dy_cv_c->clip;
  (void)clip;
  (void)dy_cv_c;
  return dy_less(i, s);
}
/* dy2stc convert: the if of nested.c:13 as dy_cond */
struct dy_cv_2 {
  dy_tensor **y;
  dy_tensor **s;
  dy_tensor **x;
  const int *clip;
};
static bool dy_cv_2_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  const int clip = *dy_cv_c->clip;
  (void)clip;
    {
      y = dy_sub(y, dy_full(DY_F32, 0, NULL, 1.0));
    }
  dy_cv_out[0] = y;
  return true;
}
static bool dy_cv_2_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  const int clip = *dy_cv_c->clip;
  (void)clip;
    {
      y = dy_add(y, x);
      if (clip)
        y = dy_clip(y, -20.0f, 20.0f);
    }
  dy_cv_out[0] = y;
  return true;
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
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  const int clip = *dy_cv_c->clip;
  (void)clip;
  (void)dy_cv_c;
  {
    i = dy_add(i, dy_full(DY_F32, 0, NULL, 1.0));
    {
      struct dy_cv_2 dy_cv_2_ctx = {&y, &s, &x, &clip};
      dy_tensor *dy_cv_2_out[1];
      if (!dy_cond(dy_greater(dy_reduce_sum(y, 0, NULL, false), s), dy_cv_2_then, dy_cv_2_else, &dy_cv_2_ctx, 1, dy_cv_2_out))
        return false;
      y = dy_cv_2_out[0];
    }
  }
  dy_cv_out[0] = i;
  dy_cv_out[1] = y;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  const int clip = 1;
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *y = x;
  {
    struct dy_cv_1 dy_cv_1_ctx = {&i, &s, &y, &x, &clip};
    dy_tensor *dy_cv_1_carried[2] = {i, y};
    if (!dy_while(dy_cv_1_cond, dy_cv_1_body, &dy_cv_1_ctx, 2, dy_cv_1_carried))
      return NULL;
    i = dy_cv_1_carried[0];
    y = dy_cv_1_carried[1];
  }
  return y;
}
