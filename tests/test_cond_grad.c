/* test_cond_grad.c - the gradient of cond (ir/autodiff/grad.c,
 * dy_grad_cond): a cond on the same predicate whose branches recompute the
 * forward branch and run its backward.
 *
 * A hand-written Program with a nested cond (a parameter w captured from
 * outside and used only in the then branch) is differentiated with
 * dy_program_gradients and run on the static executor for inputs taking
 * each of its three paths; every gradient element is checked against a
 * central finite difference of the loss run on the same executor. Then a
 * small model with dy_cond trains eagerly (the tape) and through
 * to_static, both branches taken across the batches, to the same
 * parameters. while's gradient is checked in test_while_grad.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* l = sum(out^2), out = s < 0 ? (s < -2 ? tanh(x w) : x w w) : sigmoid(x) x,
 * s = sum(x): w (one row, broadcast) is read in the then branch only, and
 * through the nested cond's captures there. */
static const char *nested_text =
    "program {\n"
    "  var x : f32[2,3] feed 0\n"
    "  var w : f32[1,3] feed 1\n"
    "  var zero : f32[] persistable = [0.0]\n"
    "  var mtwo : f32[] persistable = [-2.0]\n"
    "  var s : f32[]\n"
    "  var p : bool[]\n"
    "  var q : bool[]\n"
    "  var t_0 : f32[2,3]\n"
    "  var t_1 : f32[2,3]\n"
    "  var a_0 : f32[2,3]\n"
    "  var a_1 : f32[2,3]\n"
    "  var e_0 : f32[2,3]\n"
    "  var e_1 : f32[2,3]\n"
    "  var out : f32[2,3]\n"
    "  var sq : f32[2,3]\n"
    "  var l : f32[]\n"
    "  block 0 parent -1 {\n"
    "    s = reduce_sum(x) {axes = [], keepdim = 0}  @n.c:1\n"
    "    p = less(s, zero)  @n.c:2\n"
    "    q = less(s, mtwo)  @n.c:3\n"
    "    out = cond(p, x, w, q) {then_block = 1, else_block = 2}  @n.c:4\n"
    "    sq = mul(out, out)  @n.c:10\n"
    "    l = reduce_sum(sq) {axes = [], keepdim = 0}  @n.c:11\n"
    "  }\n"
    "  block 1 parent 0 () {\n"
    "    t_0 = mul(x, w)  @n.c:5\n"
    "    t_1 = cond(q, t_0, w) {then_block = 3, else_block = 4}  @n.c:6\n"
    "    yield t_1\n"
    "  }\n"
    "  block 2 parent 0 () {\n"
    "    e_0 = sigmoid(x)  @n.c:8\n"
    "    e_1 = mul(e_0, x)  @n.c:9\n"
    "    yield e_1\n"
    "  }\n"
    "  block 3 parent 1 () {\n"
    "    a_0 = tanh(t_0)  @n.c:6\n"
    "    yield a_0\n"
    "  }\n"
    "  block 4 parent 1 () {\n"
    "    a_1 = mul(t_0, w)  @n.c:7\n"
    "    yield a_1\n"
    "  }\n"
    "  fetch 0 l\n"
    "}\n";

static dy_tensor *f32(int rank, const int64_t *shape, const float *data) {
  return dy_tensor_from_data(DY_F32, rank, shape, data);
}

static double run_loss(const dy_program *p, const float *x, const float *w) {
  int64_t xs[2] = {2, 3}, ws[2] = {1, 3};
  dy_tensor *in[2] = {f32(2, xs, x), f32(2, ws, w)}, *out = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 2, &out, 1, &err), &err);
  double l = out ? ((const float *)out->data)[0] : NAN;
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  dy_tensor_free(out);
  return l;
}

/* The analytic gradients of one input against central differences. */
static int check_fd(const dy_program *fwd, const dy_program *gp, const float *x0,
                    const float *w0, const char *what) {
  int64_t xs[2] = {2, 3}, ws[2] = {1, 3};
  dy_tensor *in[2] = {f32(2, xs, x0), f32(2, ws, w0)}, *out[3] = {0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_executor_run(gp, in, 2, out, 3, &err), &err);
  int bad = 0;
  for (int which = 0; which < 2 && out[1] && out[2]; which++) {
    int n = which ? 3 : 6;
    const float *g = out[1 + which]->data;
    for (int i = 0; i < n; i++) {
      float x[6], w[3];
      memcpy(x, x0, sizeof x);
      memcpy(w, w0, sizeof w);
      float *v = which ? &w[i] : &x[i], h = 1e-2f, c = *v;
      *v = c + h;
      double lp = run_loss(fwd, x, w);
      *v = c - h;
      double lm = run_loss(fwd, x, w);
      double fd = (lp - lm) / (2.0 * h);
      if (fabs(fd - g[i]) > 2e-2 * (1 + fabs(fd))) {
        fprintf(stderr, "\n  %s: d l / d %s[%d] = %g, finite difference %g\n", what,
                which ? "w" : "x", i, (double)g[i], fd);
        bad++;
      }
    }
  }
  CU_ASSERT_PTR_NOT_NULL(out[1]);
  for (int k = 0; k < 3; k++)
    dy_tensor_free(out[k]);
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  return bad;
}

/* Every path of the nested cond: the else branch (w's gradient zero), the
 * then branch's inner else (x w w) and inner then (tanh). */
static void test_nested_cond_against_finite_differences(void) {
  dy_program *fwd = dy_test_parse_ok(nested_text), *gp = dy_test_parse_ok(nested_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fwd);
  CU_ASSERT_PTR_NOT_NULL_FATAL(gp);
  int wrt[2] = {dy_program_find_var(gp, "x"), dy_program_find_var(gp, "w")}, g[2] = {-2, -2};
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_gradients(gp, dy_program_find_var(gp, "l"), wrt, 2, g, &err), &err);
  CU_ASSERT_FATAL(g[0] >= 0 && g[1] >= 0);
  DY_ASSERT_OK(dy_program_add_fetch(gp, g[0], &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(gp, g[1], &err), &err);
  DY_ASSERT_OK(dy_verify(gp, &err), &err);
  /* the backward is a cond on the same predicates, inner one nested */
  char *text = dy_program_to_text(gp);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "= cond(p,"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "= cond(q,"));
  /* the else branch recomputes what its backward reads (e_0, sigmoid's
   * result) but not its result, which nothing reads */
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "e_0@re"));
  CU_ASSERT_PTR_NULL(strstr(text, "= mul(e_0@re"));
  free(text);
  static const float xs[3][6] = {
      {0.5f, -0.3f, 0.8f, 0.2f, 0.4f, -0.1f},      /* s = 1.5: else */
      {-0.5f, 0.3f, -0.8f, 0.2f, -0.4f, 0.1f},     /* s = -1.1: then, x w w */
      {-0.9f, 0.3f, -0.8f, -0.6f, -0.4f, 0.1f},    /* s = -2.3: then, tanh */
  };
  static const float w[3] = {0.7f, -1.2f, 0.4f};
  static const char *what[3] = {"else branch", "then / inner else", "then / inner then"};
  for (int k = 0; k < 3; k++)
    CU_ASSERT_EQUAL(check_fd(fwd, gp, xs[k], w, what[k]), 0);
  /* the else branch leaves w's gradient zero */
  int64_t xsh[2] = {2, 3}, wsh[2] = {1, 3};
  dy_tensor *in[2] = {f32(2, xsh, xs[0]), f32(2, wsh, w)}, *out[3] = {0};
  DY_ASSERT_OK(dy_executor_run(gp, in, 2, out, 3, &err), &err);
  for (int i = 0; i < 3 && out[2]; i++)
    CU_ASSERT_EQUAL(((const float *)out[2]->data)[i], 0.0f);
  for (int k = 0; k < 3; k++)
    dy_tensor_free(out[k]);
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  dy_program_free(fwd);
  dy_program_free(gp);
}

/* ------------------------------------------------------------------ */
/* training through dy_cond: eager tape against to_static               */
/* ------------------------------------------------------------------ */

/* h = l1(x); mean(h) > 0 ? l2(h) : l3(tanh(h)) * 0.5, on [N, 4] -> [N, 2]:
 * l2 is trained by the then batches only, l3 by the else ones. With
 * `both`, each branch also adds a little of the other linear (then:
 * + l3(h) / 4, else: + l2(tanh(h)) / 10), so every step reaches every
 * parameter. */
typedef struct {
  dy_layer base;
  dy_layer *l1, *l2, *l3;
  dy_tensor *zero;
  bool both;
} cg_net;

typedef struct {
  cg_net *n;
  dy_tensor *h;
} cg_ctx;

static bool cg_then(void *ctx, dy_tensor **out) {
  cg_ctx *c = ctx;
  out[0] = dy_call1(c->n->l2, c->h);
  if (c->n->both)
    out[0] = dy_add(out[0], dy_scale(dy_call1(c->n->l3, c->h), 0.25f, 0.0f));
  return out[0] != NULL;
}
static bool cg_else(void *ctx, dy_tensor **out) {
  cg_ctx *c = ctx;
  dy_tensor *t = dy_tanh(c->h);
  out[0] = dy_scale(dy_call1(c->n->l3, t), 0.5f, 0.0f);
  if (c->n->both)
    out[0] = dy_add(out[0], dy_scale(dy_call1(c->n->l2, t), 0.1f, 0.0f));
  return out[0] != NULL;
}

static dy_tensor *cg_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  cg_net *n = (cg_net *)self;
  cg_ctx c = {n, dy_call1(n->l1, in[0])};
  dy_tensor *y = NULL;
  dy_tensor *pred = dy_greater(dy_reduce_mean(c.h, 0, NULL, false), n->zero);
  if (!dy_cond(pred, cg_then, cg_else, &c, 1, &y))
    return NULL;
  return y;
}

static const dy_layer_vtable cg_vt = {"CondNet", cg_forward, NULL, false};

static cg_net *cg_new(bool both) {
  dy_seed(5);
  cg_net *n = (cg_net *)dy_layer_new(sizeof(cg_net), &cg_vt, "condnet");
  n->l1 = dy_layer_add_child(&n->base, dy_linear_new(4, 3));
  n->l2 = dy_layer_add_child(&n->base, dy_linear_new(3, 2));
  n->l3 = dy_layer_add_child(&n->base, dy_linear_new(3, 2));
  n->zero = dy_tensor_from_data(DY_F32, 0, NULL, (const float[]){0.0f});
  n->both = both;
  dy_layer_train(&n->base);
  return n;
}

static void cg_free(cg_net *n) {
  dy_tensor_free(n->zero);
  dy_layer_free(&n->base);
}

enum { CG_N = 24, CG_BATCH = 4, CG_EPOCHS = 3 };

/* *thens counts the batches whose mean(l1(x)) > 0: the then branch */
typedef struct {
  cg_net *n;
  int *thens;
} cg_count;

static void cg_count_thens(void *ctx, dy_tensor *xb) {
  cg_count *c = ctx;
  *c->thens += *dy_tensor_f32(dy_reduce_mean(dy_call1(c->n->l1, xb), 0, NULL, false)) > 0;
}

/* Train a fresh net; *thens counts the batches the then branch took. */
static cg_net *cg_train(bool static_, bool both, const dy_optimizer_spec *opt, const dy_tensor *x,
                        const dy_tensor *y, int *thens) {
  cg_net *n = cg_new(both);
  *thens = 0;
  cg_count c = {n, thens};
  dy_test_train(&n->base, static_, opt, x, y, CG_BATCH, CG_EPOCHS, 3, cg_count_thens, &c);
  return n;
}

/* Eager (the tape, which records the branch run) and to_static (the
 * Program's cond and its gradient cond) train to the same parameters:
 * bit for bit, with plain SGD on the net whose branches train different
 * linears, with momentum and Adam on the net whose branches both reach
 * every parameter. (With momentum or Adam a parameter the
 * branch taken does not read differs: eager leaves a parameter without a
 * gradient alone, the Program's update sees a zero gradient and moves it
 * by its momentum.) */
static void test_to_static_training_matches_eager(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(CG_N, 4)), *y = dy_randn(2, DY_SHAPE(CG_N, 2));
  static const struct {
    const char *what;
    bool both;
    dy_optimizer_spec opt;
    double tol;
  } runs[] = {
      {"sgd, one linear per branch", false, {.kind = DY_OPT_SGD, .lr = 0.1}, 0},
      {"sgd + momentum", true, {.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9}, 0},
      {"adam", true, {.kind = DY_OPT_ADAM, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999,
                      .epsilon = 1e-8}, 0},
  };
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    int te = 0, ts = 0;
    cg_net *init = cg_new(runs[r].both);
    cg_net *eager = cg_train(false, runs[r].both, &runs[r].opt, x, y, &te);
    cg_net *stat = cg_train(true, runs[r].both, &runs[r].opt, x, y, &ts);
    /* both branches were taken, and training moved the parameters */
    CU_ASSERT(te > 0 && te < CG_EPOCHS * CG_N / CG_BATCH);
    CU_ASSERT_EQUAL(te, ts);
    CU_ASSERT(dy_test_max_param_diff(&init->base, &eager->base) > 1e-3);
    double d = dy_test_max_param_diff(&eager->base, &stat->base);
    fprintf(stderr, "\n  %s: %d of %d batches took the then branch; eager vs to_static "
            "max |diff| %g\n", runs[r].what, te, CG_EPOCHS * CG_N / CG_BATCH, d);
    CU_ASSERT(d <= runs[r].tol);
    cg_free(init);
    cg_free(eager);
    cg_free(stat);
  }
  dy_tensor_free(x);
  dy_tensor_free(y);
}

#define WORK DY_BUILD_DIR "/cond_grad"

/* `dy2stc train` and the compiled trainer (`dy2stc compile --train
 * --emit exe`) on the saved net, the same data and order, against eager
 * training with Adam: dy2stc train bit for bit, the compiled trainer within
 * rounding. */
static void test_cli_trainers_match_eager(void) {
  mkdir(WORK, 0777);
  dy_error err = {0};
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(CG_N, 4)), *y = dy_randn(2, DY_SHAPE(CG_N, 2));
  DY_ASSERT_OK(dy_npy_write(WORK "/x.npy", x, &err), &err);
  DY_ASSERT_OK(dy_npy_write(WORK "/y.npy", y, &err), &err);
  cg_net *fresh = cg_new(true);
  dy_input_spec spec = {"x", DY_F32, 2, {-1, 4}};
  DY_ASSERT_OK(dy_jit_save_ex(&fresh->base, &spec, 1, WORK "/untrained", DY_SAVE_EVAL, &err),
               &err);
  cg_free(fresh);
  dy_optimizer_spec adam = {.kind = DY_OPT_ADAM, .lr = 0.01};
  int te = 0;
  cg_net *eager = cg_train(false, true, &adam, x, y, &te);
  const char *opts = "--loss mse --optimizer adam --lr 0.01 --batch 4 --epochs 3 --shuffle 3";
  int rc = dy_test_sh(WORK "/train.log", "%s train " WORK "/untrained.dymodel --input x=" WORK
                      "/x.npy --labels " WORK "/y.npy %s -q -o " WORK "/trained",
                      DY2STC_PATH, opts);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  dy_program *tp = NULL;
  DY_ASSERT_OK(dy_jit_load(WORK "/trained", &tp, &err), &err);
  double d_cli = tp ? dy_test_max_program_diff(&eager->base, tp) : INFINITY;
  dy_program_free(tp);
  rc = dy_test_sh(WORK "/compile.log", "%s compile " WORK "/untrained.dymodel --train "
                  "--loss mse --optimizer adam --batch 4 --emit exe -o " WORK "/trainer",
                  DY2STC_PATH);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = dy_test_sh(WORK "/trainer.log", "rm -rf " WORK "/state && " WORK "/trainer --input x="
                  WORK "/x.npy --labels " WORK "/y.npy --epochs 3 --lr 0.01 --batch 4 "
                  "--shuffle 3 -o " WORK "/state");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double d_exe = dy_test_max_state_diff(&eager->base, WORK "/state");
  fprintf(stderr, "\n  %d of %d batches took the then branch; eager vs dy2stc train max "
          "|diff| %g, vs the compiled trainer %g\n", te, CG_EPOCHS * CG_N / CG_BATCH, d_cli,
          d_exe);
  CU_ASSERT(te > 0 && te < CG_EPOCHS * CG_N / CG_BATCH);
  CU_ASSERT(d_cli == 0);
  CU_ASSERT(d_exe <= 1e-5);
  cg_free(eager);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

void dy_test_register(void) {
  DY_SUITE("cond_grad");
  DY_TEST(test_nested_cond_against_finite_differences);
  DY_TEST(test_to_static_training_matches_eager);
  DY_TEST(test_cli_trainers_match_eager);
}
