/* break and continue in tensor-dependent loops: the break becomes a bool
 * tensor carried through the loop (the condition turns into !brk && P, the
 * rest of the body runs only when the if does not break); a continue just
 * skips the rest of the body. */
#include "dy_runtime.h"

/* dy2stc convert: the loop of break_loop.c:13 as dy_while */
struct dy_cv_2 {
  dy_tensor **dy_cv_1_brk;
  dy_tensor **i;
  dy_tensor **one;
  dy_tensor **s;
  dy_tensor **y;
  dy_tensor **x;
};
static dy_tensor *dy_cv_2_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *dy_cv_1_brk = dy_cv_in[0];
  (void)dy_cv_1_brk;
  dy_tensor *i = dy_cv_in[1];
  (void)i;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = dy_cv_in[2];
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  (void)dy_cv_c;
  return dy_less(dy_cv_1_brk, dy_less(i, dy_full(DY_F32, 0, NULL, 100.0)));
}
/* dy2stc convert: the if of break_loop.c:15 as dy_cond */
struct dy_cv_3 {
  dy_tensor **i;
  dy_tensor **s;
  dy_tensor **dy_cv_1_brk;
  dy_tensor **y;
  dy_tensor **x;
};
static bool dy_cv_3_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_3 *dy_cv_c = dy_cv_ctx;
  dy_tensor *i = *dy_cv_c->i;
  (void)i;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *dy_cv_1_brk = *dy_cv_c->dy_cv_1_brk;
  (void)dy_cv_1_brk;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
      dy_cv_1_brk = dy_full(DY_BOOL, 0, NULL, 1);
  dy_cv_out[0] = dy_cv_1_brk;
  dy_cv_out[1] = y;
  return true;
}
static bool dy_cv_3_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_3 *dy_cv_c = dy_cv_ctx;
  dy_tensor *i = *dy_cv_c->i;
  (void)i;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *dy_cv_1_brk = *dy_cv_c->dy_cv_1_brk;
  (void)dy_cv_1_brk;
  dy_tensor *y = *dy_cv_c->y;
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
      {
    y = dy_add(y, x);
  
}
  dy_cv_out[0] = dy_cv_1_brk;
  dy_cv_out[1] = y;
  return true;
}

static bool dy_cv_2_body(void *dy_cv_ctx, dy_tensor *const *dy_cv_in,
                          dy_tensor **dy_cv_out) {
  struct dy_cv_2 *dy_cv_c = dy_cv_ctx;
  dy_tensor *dy_cv_1_brk = dy_cv_in[0];
  (void)dy_cv_1_brk;
  dy_tensor *i = dy_cv_in[1];
  (void)i;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *y = dy_cv_in[2];
  (void)y;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  (void)dy_cv_c;
  {
    i = dy_add(i, one);
    {
      struct dy_cv_3 dy_cv_3_ctx = {&i, &s, &dy_cv_1_brk, &y, &x};
      dy_tensor *dy_cv_3_out[2];
      if (!dy_cond(dy_greater(i, s), dy_cv_3_then, dy_cv_3_else, &dy_cv_3_ctx, 2, dy_cv_3_out))
        return false;
      dy_cv_1_brk = dy_cv_3_out[0];
      y = dy_cv_3_out[1];
    }
  }
  dy_cv_out[0] = dy_cv_1_brk;
  dy_cv_out[1] = i;
  dy_cv_out[2] = y;
  return true;
}

/* dy2stc convert: the loop of break_loop.c:21 as dy_while */
struct dy_cv_4 {
  dy_tensor **j;
  dy_tensor **one;
  dy_tensor **s;
  dy_tensor **acc;
  dy_tensor **x;
};
static dy_tensor *dy_cv_4_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {
  struct dy_cv_4 *dy_cv_c = dy_cv_ctx;
  dy_tensor *j = dy_cv_in[0];
  (void)j;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *acc = dy_cv_in[1];
  (void)acc;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  (void)dy_cv_c;
  return dy_less(j, dy_full(DY_F32, 0, NULL, 6.0));
}
/* dy2stc convert: the if of break_loop.c:23 as dy_cond */
struct dy_cv_5 {
  dy_tensor **j;
  dy_tensor **s;
  dy_tensor **acc;
  dy_tensor **one;
  dy_tensor **x;
};
static bool dy_cv_5_then(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_5 *dy_cv_c = dy_cv_ctx;
  dy_tensor *j = *dy_cv_c->j;
  (void)j;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *acc = *dy_cv_c->acc;
  (void)acc;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
    {
      acc = dy_sub(acc, one);
      
    }
  dy_cv_out[0] = acc;
  return true;
}
static bool dy_cv_5_else(void *dy_cv_ctx, dy_tensor **dy_cv_out) {
  struct dy_cv_5 *dy_cv_c = dy_cv_ctx;
  dy_tensor *j = *dy_cv_c->j;
  (void)j;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *acc = *dy_cv_c->acc;
  (void)acc;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
    {
    acc = dy_add(acc, dy_mul(x, j));
  
}
  dy_cv_out[0] = acc;
  return true;
}

static bool dy_cv_4_body(void *dy_cv_ctx, dy_tensor *const *dy_cv_in,
                          dy_tensor **dy_cv_out) {
  struct dy_cv_4 *dy_cv_c = dy_cv_ctx;
  dy_tensor *j = dy_cv_in[0];
  (void)j;
  dy_tensor *one = *dy_cv_c->one;
  (void)one;
  dy_tensor *s = *dy_cv_c->s;
  (void)s;
  dy_tensor *acc = dy_cv_in[1];
  (void)acc;
  dy_tensor *x = *dy_cv_c->x;
  (void)x;
  (void)dy_cv_c;
  {
    j = dy_add(j, one);
    {
      struct dy_cv_5 dy_cv_5_ctx = {&j, &s, &acc, &one, &x};
      dy_tensor *dy_cv_5_out[1];
      if (!dy_cond(dy_greater(j, s), dy_cv_5_then, dy_cv_5_else, &dy_cv_5_ctx, 1, dy_cv_5_out))
        return false;
      acc = dy_cv_5_out[0];
    }
  }
  dy_cv_out[0] = j;
  dy_cv_out[1] = acc;
  return true;
}

DY_TO_STATIC("x: f32[4]")
static dy_tensor *fwd(dy_tensor *x) {
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *one = dy_full(DY_F32, 0, NULL, 1.0);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *y = x;
  dy_tensor *dy_cv_1_brk = dy_full(DY_BOOL, 0, NULL, 0);
  {
    struct dy_cv_2 dy_cv_2_ctx = {&dy_cv_1_brk, &i, &one, &s, &y, &x};
    dy_tensor *dy_cv_2_carried[3] = {dy_cv_1_brk, i, y};
    if (!dy_while(dy_cv_2_cond, dy_cv_2_body, &dy_cv_2_ctx, 3, dy_cv_2_carried))
      return NULL;
    dy_cv_1_brk = dy_cv_2_carried[0];
    i = dy_cv_2_carried[1];
    y = dy_cv_2_carried[2];
  }
  dy_tensor *j = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *acc = dy_mul(x, dy_full(DY_F32, 0, NULL, 0.0));
  {
    struct dy_cv_4 dy_cv_4_ctx = {&j, &one, &s, &acc, &x};
    dy_tensor *dy_cv_4_carried[2] = {j, acc};
    if (!dy_while(dy_cv_4_cond, dy_cv_4_body, &dy_cv_4_ctx, 2, dy_cv_4_carried))
      return NULL;
    j = dy_cv_4_carried[0];
    acc = dy_cv_4_carried[1];
  }
  return dy_add(dy_add(y, i), acc);
}
