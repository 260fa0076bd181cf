/* an else-if chain on tensors (the inner if converts in the outlined else
 * function) and a tensor if inside a plain C for loop (unrolled at trace
 * time, each copy converted once: the loop counter is read, never carried). */
#include "dy_runtime.h"

/* dy2stc convert: the if of else_if.c:10 as dy_cond */
struct dy_cv_1 {
  dy_tensor **s;
  dy_tensor **y;
  dy_tensor **x;
};
static bool dy_cv_1_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
    y = dy_tanh(x);
  dy_cv_out[0] = y;
  return true;
}
/* dy2stc convert: the if of else_if.c:12 as dy_cond */
struct dy_cv_2 {
  dy_tensor **s;
  dy_tensor **y;
  dy_tensor **x;
};
static bool dy_cv_2_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
    y = dy_sigmoid(x);
  dy_cv_out[0] = y;
  return true;
}
static bool dy_cv_2_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
    y = dy_neg(x);
  dy_cv_out[0] = y;
  return true;
}

static bool dy_cv_1_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_1 *dy_cv_c = dy_cv_ctx;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  {
         struct dy_cv_2 dy_cv_2_ctx = {&s, &y, &x};
         dy_tensor *dy_cv_2_out[1];
         if (!dy_cond(dy_greater(s, dy_full(DY_F32, 0, NULL, 0.0)), dy_cv_2_then, dy_cv_2_else, &dy_cv_2_ctx, 1, dy_cv_2_out))
           return false;
         y = dy_cv_2_out[0];
       }
  dy_cv_out[0] = y;
  return true;
}

/* dy2stc convert: the if of else_if.c:17 as dy_cond */
struct dy_cv_3 {
  dy_tensor **y;
  int *t;
};
static bool dy_cv_3_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_3 *dy_cv_c = dy_cv_ctx;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  int t = *dy_cv_c->t;
  (void)t;
      y = dy_add(y, dy_full(DY_F32, 0, NULL, 0.5 * t));
  dy_cv_out[0] = y;
  return true;
}
static bool dy_cv_3_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_3 *dy_cv_c = dy_cv_ctx;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  int t = *dy_cv_c->t;
  (void)t;
  dy_cv_out[0] = y;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *y;
  {
    struct dy_cv_1 dy_cv_1_ctx = {&s, &y, &x};
    dy_tensor *dy_cv_1_out[1];
    if (!dy_cond(dy_greater(s, dy_full(DY_F32, 0, NULL, 3.0)), dy_cv_1_then, dy_cv_1_else, &dy_cv_1_ctx, 1, dy_cv_1_out))
      return NULL;
    y = dy_cv_1_out[0];
  }
  for (int t = 1; t <= 3; t++) {
    {
      struct dy_cv_3 dy_cv_3_ctx = {&y, &t};
      dy_tensor *dy_cv_3_out[1];
      if (!dy_cond(dy_less(dy_reduce_sum(y, 0, NULL, false), dy_full(DY_F32, 0, NULL, t)), dy_cv_3_then, dy_cv_3_else, &dy_cv_3_ctx, 1, dy_cv_3_out))
        return NULL;
      y = dy_cv_3_out[0];
    }
  }
  return y;
}
