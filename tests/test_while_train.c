/* test_while_train.c - the trainers through while (issue 28, item 2):
 * eager (the tape), to_static, `dy2stc train` and the compiled trainer
 * (`dy2stc compile --train --emit exe`) on a model with dy_while whose
 * trip count depends on the data, whose body reads a parameter captured
 * from outside, holds a cond and breaks early.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* h = tanh(l1(x)); carried (i, d, h), i = d = 0:
 *   while (i + 100 d < 4) {
 *     h = mean(h) > 0 ? tanh(l2(h)) : h / 2 + l2(h) / 4
 *     i = i + 1;  d = mean(h) > 0.05   (the break)
 *   }
 *   out = l3(h)                                  [N, 4] -> [N, 2]
 * l2 is captured by the loop's body and both branches. */
typedef struct {
  dy_layer base;
  dy_layer *l1, *l2, *l3;
  dy_tensor *zero, *one, *hundred, *four, *thr;
} wt_net;

static int wt_trips; /* body runs, counted by eager forwards */

typedef struct {
  wt_net *n;
  dy_tensor *h;
} wt_branch;

static bool wt_then(void *ctx, dy_tensor **out) {
  wt_branch *b = ctx;
  out[0] = dy_tanh(dy_call1(b->n->l2, b->h));
  return out[0] != NULL;
}

static bool wt_else(void *ctx, dy_tensor **out) {
  wt_branch *b = ctx;
  out[0] = dy_add(dy_scale(b->h, 0.5f, 0.0f), dy_scale(dy_call1(b->n->l2, b->h), 0.25f, 0.0f));
  return out[0] != NULL;
}

static dy_tensor *wt_more(void *ctx, dy_tensor *const *c) {
  wt_net *n = ctx;
  return dy_less(dy_add(c[0], dy_mul(c[1], n->hundred)), n->four);
}

static bool wt_body(void *ctx, dy_tensor *const *c, dy_tensor **next) {
  wt_net *n = ctx;
  wt_trips++;
  wt_branch b = {n, c[2]};
  dy_tensor *h = NULL;
  dy_tensor *p = dy_greater(dy_reduce_mean(c[2], 0, NULL, false), n->zero);
  if (!dy_cond(p, wt_then, wt_else, &b, 1, &h))
    return false;
  next[0] = dy_add(c[0], n->one);
  next[1] = dy_cast(dy_greater(dy_reduce_mean(h, 0, NULL, false), n->thr), DY_F32);
  next[2] = h;
  return next[0] && next[1] && next[2];
}

static dy_tensor *wt_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  wt_net *n = (wt_net *)self;
  dy_tensor *c[3] = {dy_scale(n->one, 0.0f, 0.0f), dy_scale(n->one, 0.0f, 0.0f),
                     dy_tanh(dy_call1(n->l1, in[0]))};
  if (!dy_while(wt_more, wt_body, n, 3, c))
    return NULL;
  return dy_call1(n->l3, c[2]);
}

static const dy_layer_vtable wt_vt = {"WhileNet", wt_forward, NULL, false};

static dy_tensor *scalar1(float v) { return dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), &v); }

static wt_net *wt_new(void) {
  dy_seed(5);
  wt_net *n = (wt_net *)dy_layer_new(sizeof(wt_net), &wt_vt, "whilenet");
  n->l1 = dy_layer_add_child(&n->base, dy_linear_new(4, 3));
  n->l2 = dy_layer_add_child(&n->base, dy_linear_new(3, 3));
  n->l3 = dy_layer_add_child(&n->base, dy_linear_new(3, 2));
  n->zero = scalar1(0.0f);
  n->one = scalar1(1.0f);
  n->hundred = scalar1(100.0f);
  n->four = scalar1(4.0f);
  n->thr = scalar1(0.05f);
  dy_layer_train(&n->base);
  return n;
}

static void wt_free(wt_net *n) {
  dy_tensor *own[] = {n->zero, n->one, n->hundred, n->four, n->thr};
  for (int i = 0; i < 5; i++)
    dy_tensor_free(own[i]);
  dy_layer_free(&n->base);
}

enum { WT_N = 24, WT_BATCH = 4, WT_EPOCHS = 3, WT_STEPS = WT_EPOCHS * WT_N / WT_BATCH };

/* Train a fresh net; hist[t] counts the eager steps that ran t trips. */
static wt_net *wt_train(bool static_, const dy_optimizer_spec *opt, const dy_tensor *x,
                        const dy_tensor *y, int hist[5]) {
  wt_net *n = wt_new();
  dy_loss_spec loss = {.kind = DY_LOSS_MSE};
  dy_static_trainer *st = static_ ? dy_to_static_train(&n->base, &loss, opt) : NULL;
  dy_optimizer *eo = static_ ? NULL : dy_optimizer_new(opt, &n->base);
  CU_ASSERT_FATAL(st || eo);
  dy_error err = {0};
  int64_t order[WT_N];
  dy_seed(3);
  for (int e = 0; e < WT_EPOCHS; e++) {
    dy_train_shuffle(order, WT_N);
    for (int64_t b = 0; b < WT_N; b += WT_BATCH) {
      dy_scope_begin();
      dy_tensor *xb = dy_train_batch(x, order, b, WT_BATCH);
      dy_tensor *yb = dy_train_batch(y, order, b, WT_BATCH);
      if (static_) {
        DY_ASSERT_OK(dy_static_train_step(st, &xb, 1, yb, opt->lr, NULL, &err), &err);
      } else {
        wt_trips = 0;
        dy_tensor *lt = dy_loss(dy_call1(&n->base, xb), yb, &loss);
        if (!lt)
          fprintf(stderr, "\n  eager: %s\n", dy_last_error()->msg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(lt);
        hist[wt_trips < 4 ? wt_trips : 4]++;
        DY_ASSERT_OK(dy_backward(lt, &err), &err);
        DY_ASSERT_OK(dy_optimizer_step(eo, &err), &err);
        dy_clear_grad(&n->base);
      }
      dy_scope_end();
    }
  }
  dy_static_trainer_free(st);
  dy_optimizer_free(eo);
  return n;
}

static void test_to_static_training_matches_eager(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 2));
  static const struct {
    const char *what;
    dy_optimizer_spec opt;
  } runs[] = {
      {"sgd", {.kind = DY_OPT_SGD, .lr = 0.1}},
      {"sgd + momentum", {.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9}},
      {"adam", {.kind = DY_OPT_ADAM, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-8}},
  };
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    int hist[5] = {0};
    wt_net *init = wt_new();
    wt_net *eager = wt_train(false, &runs[r].opt, x, y, hist);
    wt_net *stat = wt_train(true, &runs[r].opt, x, y, hist);
    double d = dy_test_max_param_diff(&eager->base, &stat->base);
    fprintf(stderr, "\n  %s: steps by trips 0..4: %d %d %d %d %d; eager vs to_static max |diff| %g\n",
            runs[r].what, hist[0], hist[1], hist[2], hist[3], hist[4], d);
    CU_ASSERT(dy_test_max_param_diff(&init->base, &eager->base) > 1e-3);
    CU_ASSERT(d == 0);
    int kinds = 0; /* the trip count does depend on the data */
    for (int t = 0; t < 5; t++)
      kinds += hist[t] > 0;
    CU_ASSERT(kinds >= 3);
    wt_free(init);
    wt_free(eager);
    wt_free(stat);
  }
  dy_tensor_free(x);
  dy_tensor_free(y);
}

#define WORK DY_BUILD_DIR "/while_train"

/* Save a fresh net (the batch dynamic) and write the data as .npy. */
static void save_model_and_data(const dy_tensor *x, const dy_tensor *y) {
  mkdir(WORK, 0777);
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(WORK "/x.npy", x, &err), &err);
  DY_ASSERT_OK(dy_npy_write(WORK "/y.npy", y, &err), &err);
  wt_net *fresh = wt_new();
  dy_input_spec spec = {"x", DY_F32, 2, {-1, 4}};
  DY_ASSERT_OK(dy_jit_save_ex(&fresh->base, &spec, 1, WORK "/untrained", DY_SAVE_EVAL, &err),
               &err);
  wt_free(fresh);
}

/* `dy2stc train` and the compiled trainer on the saved net, the same data
 * and order, against eager training: dy2stc train bit for bit, the
 * compiled trainer within 1e-5; SGD with momentum and Adam. */
static void test_cli_trainers_match_eager(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 2));
  save_model_and_data(x, y);
  static const struct {
    const char *what, *cli;
    dy_optimizer_spec opt;
  } runs[] = {
      {"sgd + momentum", "--optimizer sgd --momentum 0.9 --lr 0.1",
       {.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9}},
      {"adam", "--optimizer adam --lr 0.01", {.kind = DY_OPT_ADAM, .lr = 0.01}},
  };
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    int hist[5] = {0};
    wt_net *eager = wt_train(false, &runs[r].opt, x, y, hist);
    int rc = dy_test_sh(WORK "/train.log", "%s train " WORK "/untrained.dymodel --input x=" WORK
                        "/x.npy --labels " WORK "/y.npy --loss mse %s --batch 4 --epochs 3 "
                        "--shuffle 3 -q -o " WORK "/trained", DY2STC_PATH, runs[r].cli);
    CU_ASSERT_EQUAL(rc, 0);
    dy_program *tp = NULL;
    dy_error err = {0};
    double d_cli = INFINITY, d_exe = INFINITY;
    if (rc == 0 && dy_jit_load(WORK "/trained", &tp, &err) == DY_OK)
      d_cli = dy_test_max_program_diff(&eager->base, tp);
    dy_program_free(tp);
    rc = dy_test_sh(WORK "/compile.log", "%s compile " WORK "/untrained.dymodel --train "
                    "--loss mse %s --batch 4 --emit exe -o " WORK "/trainer",
                    DY2STC_PATH, runs[r].cli);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0)
      rc = dy_test_sh(WORK "/trainer.log", "rm -rf " WORK "/state && " WORK "/trainer --input x="
                      WORK "/x.npy --labels " WORK "/y.npy --epochs 3 --batch 4 "
                      "--shuffle 3 -o " WORK "/state");
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0)
      d_exe = dy_test_max_state_diff(&eager->base, WORK "/state");
    fprintf(stderr, "\n  %s: eager vs dy2stc train max |diff| %g, vs the compiled trainer %g\n",
            runs[r].what, d_cli, d_exe);
    CU_ASSERT(d_cli == 0);
    CU_ASSERT(d_exe <= 1e-5);
    wt_free(eager);
  }
  dy_tensor_free(x);
  dy_tensor_free(y);
}

void dy_test_register(void) {
  DY_SUITE("while_train");
  DY_TEST(test_to_static_training_matches_eager);
  DY_TEST(test_cli_trainers_match_eager);
}
