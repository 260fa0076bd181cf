/* test_while_train.c - the trainers through while (issue 28, item 2):
 * eager (the tape), to_static, `dy2stc train` and the compiled trainer
 * (`dy2stc compile --train --emit exe`) on a model with dy_while whose
 * trip count depends on the data, whose body reads a parameter captured
 * from outside, holds a cond and breaks early; and an ONNX Loop with a
 * scan output (unrolled by the importer) trains as its steps written out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

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

static int wt_trips; /* body runs, counted by eager forwards (wt_count_trips) */

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

/* limit: the loop's trip bound (4); thr: the break's threshold (0.05) */
static wt_net *wt_new_at(float limit, float thr) {
  dy_seed(5);
  wt_net *n = (wt_net *)dy_layer_new(sizeof(wt_net), &wt_vt, "whilenet");
  n->l1 = dy_layer_add_child(&n->base, dy_linear_new(4, 3));
  n->l2 = dy_layer_add_child(&n->base, dy_linear_new(3, 3));
  n->l3 = dy_layer_add_child(&n->base, dy_linear_new(3, 2));
  n->zero = scalar1(0.0f);
  n->one = scalar1(1.0f);
  n->hundred = scalar1(100.0f);
  n->four = scalar1(limit);
  n->thr = scalar1(thr);
  dy_layer_train(&n->base);
  return n;
}

static wt_net *wt_new(void) { return wt_new_at(4.0f, 0.05f); }

static void wt_free(wt_net *n) {
  dy_tensor *own[] = {n->zero, n->one, n->hundred, n->four, n->thr};
  for (int i = 0; i < 5; i++)
    dy_tensor_free(own[i]);
  dy_layer_free(&n->base);
}

enum { WT_N = 24, WT_BATCH = 4, WT_EPOCHS = 3, WT_STEPS = WT_EPOCHS * WT_N / WT_BATCH };

/* hist[t] counts the batches on which the loop runs t trips (4: 4 or
 * more), by an eager forward without gradients */
typedef struct {
  wt_net *n;
  int *hist;
} wt_count;

static void wt_count_trips(void *ctx, dy_tensor *xb) {
  wt_count *c = ctx;
  wt_trips = 0;
  dy_no_grad_begin();
  CU_ASSERT_PTR_NOT_NULL(dy_call1(&c->n->base, xb));
  dy_no_grad_end();
  c->hist[wt_trips < 4 ? wt_trips : 4]++;
}

/* Train a fresh net (wt_new_at(limit, thr)) as dy_test_train does; hist
 * (or NULL) gets the trip counts. */
static wt_net *wt_train_at(float limit, float thr, bool static_, const dy_optimizer_spec *opt,
                           const dy_tensor *x, const dy_tensor *y, int hist[5]) {
  wt_net *n = wt_new_at(limit, thr);
  wt_count c = {n, hist};
  dy_test_train(&n->base, static_, opt, x, y, WT_BATCH, WT_EPOCHS, 3,
                hist ? wt_count_trips : NULL, &c);
  return n;
}

static wt_net *wt_train(bool static_, const dy_optimizer_spec *opt, const dy_tensor *x,
                        const dy_tensor *y, int hist[5]) {
  return wt_train_at(4.0f, 0.05f, static_, opt, x, y, hist);
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
    wt_net *stat = wt_train(true, &runs[r].opt, x, y, NULL);
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

/* Save a fresh net (the batch dynamic) as WORK/NAME and write the data
 * as .npy. */
static void save_model_and_data(wt_net *fresh, const char *name, const dy_tensor *x,
                                const dy_tensor *y) {
  mkdir(WORK, 0777);
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(WORK "/x.npy", x, &err), &err);
  DY_ASSERT_OK(dy_npy_write(WORK "/y.npy", y, &err), &err);
  dy_input_spec spec = {"x", DY_F32, 2, {-1, 4}};
  char path[600];
  snprintf(path, sizeof path, "%s/%s", WORK, name);
  DY_ASSERT_OK(dy_jit_save_ex(&fresh->base, &spec, 1, path, DY_SAVE_EVAL, &err), &err);
  wt_free(fresh);
}

/* `dy2stc train MODEL` and the compiled trainer of `dy2stc compile MODEL
 * --train` with the optimizer options cli, on WORK's data (batch 4, 3
 * epochs, shuffle 3), outputs and logs named by tag: *d_cli and *d_exe get
 * max |parameter - eager's| of each (INFINITY when a command failed). */
static void run_trainers(const char *model, const char *cli, const char *tag,
                         const wt_net *eager, double *d_cli, double *d_exe) {
  const char *data = " --input x=" WORK "/x.npy --labels " WORK "/y.npy";
  char log[700], trained[700], state[700];
  snprintf(trained, sizeof trained, "%s/%s_trained", WORK, tag);
  snprintf(state, sizeof state, "%s/%s_state", WORK, tag);
  snprintf(log, sizeof log, "%s/%s_train.log", WORK, tag);
  int rc = dy_test_sh(log, "%s train %s%s --loss mse %s --batch 4 --epochs 3 --shuffle 3 -q "
                      "-o %s", DY2STC_PATH, model, data, cli, trained);
  CU_ASSERT_EQUAL(rc, 0);
  dy_program *tp = NULL;
  dy_error err = {0};
  *d_cli = *d_exe = INFINITY;
  if (rc == 0 && dy_jit_load(trained, &tp, &err) == DY_OK)
    *d_cli = dy_test_max_program_diff(&eager->base, tp);
  dy_program_free(tp);
  snprintf(log, sizeof log, "%s/%s_compile.log", WORK, tag);
  rc = dy_test_sh(log, "%s compile %s --train --loss mse %s --batch 4 -o %s/%s_trainer",
                  DY2STC_PATH, model, cli, WORK, tag);
  CU_ASSERT_EQUAL(rc, 0);
  snprintf(log, sizeof log, "%s/%s_trainer.log", WORK, tag);
  if (rc == 0)
    rc = dy_test_sh(log, "rm -rf %s && %s/%s_trainer%s --epochs 3 --batch 4 --shuffle 3 -o %s",
                    state, WORK, tag, data, state);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc == 0)
    *d_exe = dy_test_max_state_diff(&eager->base, state);
}

/* The optimizers the trainers are run with: eager's spec and the CLI's. */
static const struct {
  const char *what, *cli;
  dy_optimizer_spec opt;
} cli_runs[] = {
    {"sgd + momentum", "--optimizer sgd --momentum 0.9 --lr 0.1",
     {.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9}},
    {"adam", "--optimizer adam --lr 0.01", {.kind = DY_OPT_ADAM, .lr = 0.01}},
};

/* Both trainers on model against eager training of WhileNet (the same
 * initial parameters, data and order), with each of cli_runs: dy2stc
 * train bit for bit, the compiled trainer within 1e-5. */
static void trainers_match_eager(const char *model, const char *what, const dy_tensor *x,
                                 const dy_tensor *y) {
  for (size_t r = 0; r < sizeof cli_runs / sizeof cli_runs[0]; r++) {
    wt_net *eager = wt_train(false, &cli_runs[r].opt, x, y, NULL);
    double d_cli, d_exe;
    run_trainers(model, cli_runs[r].cli, "t", eager, &d_cli, &d_exe);
    fprintf(stderr, "\n  %s, %s: eager vs dy2stc train max |diff| %g, vs the compiled "
            "trainer %g\n", what, cli_runs[r].what, d_cli, d_exe);
    CU_ASSERT(d_cli == 0);
    CU_ASSERT(d_exe <= 1e-5);
    wt_free(eager);
  }
}

/* `dy2stc train` and the compiled trainer on the saved net. */
static void test_cli_trainers_match_eager(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 2));
  save_model_and_data(wt_new(), "untrained", x, y);
  trainers_match_eager(WORK "/untrained.dymodel", "saved net", x, y);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

/* A loop running more trips than the gradient's stack holds (300 against
 * DY_WHILE_GRAD_TRIPS = 256 rows: the loop has no bound of its own) is the
 * loop's error on every path, naming its line (dy2stc train) and
 * --max-iterations (both trainers); with --max-iterations 400 both run it,
 * dy2stc train equal to eager training. */
static void test_trip_bound_is_a_clean_error(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 2));
  save_model_and_data(wt_new_at(300.0f, 1e9f), "long", x, y);
  /* to_static: the executor's bound error at the loop's line */
  wt_net *n = wt_new_at(300.0f, 1e9f);
  dy_loss_spec loss = {.kind = DY_LOSS_MSE};
  dy_optimizer_spec sgd = {.kind = DY_OPT_SGD, .lr = 0.1};
  dy_static_trainer *st = dy_to_static_train(&n->base, &loss, &sgd);
  CU_ASSERT_PTR_NOT_NULL_FATAL(st);
  dy_error err = {0};
  int64_t first[4] = {0, 1, 2, 3};
  dy_tensor *xb = dy_train_batch(x, first, 0, 4); /* no scope open: ours to free */
  dy_tensor *yb = dy_train_batch(y, first, 0, 4);
  CU_ASSERT_EQUAL(dy_static_train_step(st, &xb, 1, yb, 0.1, NULL, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "did not end after 256 iterations"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.loc.file ? err.loc.file : "", "test_while_train.c"));
  dy_static_trainer_free(st);
  wt_free(n);
  dy_tensor_free(xb);
  dy_tensor_free(yb);
  const char *data = " --input x=" WORK "/x.npy --labels " WORK "/y.npy";
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s train %s/long.dymodel%s --loss mse --optimizer sgd --lr 0.1 "
           "--batch 4 --epochs 1 -q -o %s/long_trained", DY2STC_PATH, WORK, data, WORK);
  dy_test_expect_cli(WORK "/long_train.log", 1, "--max-iterations", cmd);
  char *log = dy_test_slurp(WORK "/long_train.log");
  CU_ASSERT(log && strstr(log, "test_while_train.c:") && strstr(log, "did not end after 256"));
  free(log);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/long_compile.log", "%s compile %s/long.dymodel --train "
                             "--loss mse --optimizer sgd --batch 4 -o %s/long_trainer",
                             DY2STC_PATH, WORK, WORK), 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s/long_state; %s/long_trainer%s --epochs 1 --lr 0.1 "
           "--batch 4 -o %s/long_state", WORK, WORK, data, WORK);
  dy_test_expect_cli(WORK "/long_trainer.log", 1, "--max-iterations", cmd);
  /* --max-iterations 400: both trainers run the 300 trips */
  int hist[5] = {0};
  dy_optimizer_spec sgd_m = {.kind = DY_OPT_SGD, .lr = 0.01, .momentum = 0.9};
  wt_net *eager = wt_train_at(300.0f, 1e9f, false, &sgd_m, x, y, hist);
  CU_ASSERT_EQUAL(hist[4], WT_STEPS);
  double d_cli, d_exe;
  run_trainers(WORK "/long.dymodel", "--optimizer sgd --momentum 0.9 --lr 0.01 "
               "--max-iterations 400", "long", eager, &d_cli, &d_exe);
  fprintf(stderr, "\n  300 trips, --max-iterations 400: eager vs dy2stc train max |diff| %g, "
          "vs the compiled trainer %g\n", d_cli, d_exe);
  CU_ASSERT(d_cli == 0);
  CU_ASSERT(d_exe <= 1e-5);
  wt_free(eager);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

/* The same net written in C with plain if / while / break on tensors
 * (tests/convert/train_while.c, converted and traced as `dy2stc compile
 * NET.c` does): `dy2stc train NET.c` and `dy2stc compile NET.c --train`
 * against eager training of WhileNet (the same initial parameters). */
static void test_c_model_trainers_match_eager(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 2));
  save_model_and_data(wt_new(), "untrained", x, y);
  trainers_match_eager(DY_SOURCE_DIR "/tests/convert/train_while.c", "NET.c", x, y);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

/* WhileNet as an ONNX graph (opset 13) with net's initial parameters as
 * f32 initializers named like its parameters (its constants are Constant
 * nodes): Loop(M = 4, true, h0) whose
 * body reads W2, b2 (initializers of the main graph: captures) inside an
 * If, and ends early through its condition output (not mean(h) > 0.05). */
static void write_onnx_while_net(const char *path, const wt_net *net) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  const dy_layer *ls[3] = {net->l1, net->l2, net->l3};
  static const char *const names[3][2] = {{"linear.weight", "linear.bias"},
                                          {"linear_1.weight", "linear_1.bias"},
                                          {"linear_2.weight", "linear_2.bias"}};
  for (int l = 0; l < 3; l++)
    for (int k = 0; k < 2; k++) {
      const dy_tensor *t = ls[l]->params[k];
      ob_init_f32(m, names[l][k], t->type.rank, t->type.shape, t->data);
    }
  float zero = 0, one = 1, half = 0.5f, quarter = 0.25f, thr = 0.05f;
  int64_t trips = 4;
  const char *cn[5] = {"zero", "one", "half", "quarter", "thr"};
  const float cv[5] = {zero, one, half, quarter, thr};
  for (int k = 0; k < 5; k++) { /* Constant nodes: f32 initializers would be trained */
    Onnx__NodeProto *c = ob_node(m, "Constant", cn[k], 0, NULL, 1, &cn[k]);
    ob_attr(m, c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t =
        ob_tensor(m, "", OB_F32, 0, NULL, &cv[k], sizeof(float));
  }
  ob_init_i64(m, "M", 0, NULL, &trips);
  ob_node(m, "MatMul", "mm1", 2, (const char *[]){"x", "linear.weight"}, 1,
          (const char *[]){"a0"});
  ob_node(m, "Add", "add1", 2, (const char *[]){"a0", "linear.bias"}, 1, (const char *[]){"a1"});
  ob_node(m, "Tanh", "tanh1", 1, (const char *[]){"a1"}, 1, (const char *[]){"h0"});
  ob_node(m, "Less", "true", 2, (const char *[]){"zero", "one"}, 1, (const char *[]){"go"});
  ob_graph *body = ob_graph_new(m, "body");
  ob_graph_input(m, body, "i", OB_I64, 0, NULL);
  ob_graph_input(m, body, "cin", OB_BOOL, 0, NULL);
  ob_graph_input(m, body, "h", OB_F32, 2, (int64_t[]){-1, 3});
  Onnx__NodeProto *n = ob_graph_node(m, body, "ReduceMean", "mean0", 1, (const char *[]){"h"},
                                     1, (const char *[]){"mh"});
  ob_attr_i(m, n, "keepdims", 0);
  ob_graph_node(m, body, "Greater", "pos", 2, (const char *[]){"mh", "zero"}, 1,
                (const char *[]){"p"});
  ob_graph *tb = ob_graph_new(m, "then"), *eb = ob_graph_new(m, "else");
  ob_graph_node(m, tb, "MatMul", "mm2t", 2, (const char *[]){"h", "linear_1.weight"}, 1,
                (const char *[]){"t0"});
  ob_graph_node(m, tb, "Add", "add2t", 2, (const char *[]){"t0", "linear_1.bias"}, 1,
                (const char *[]){"t1"});
  ob_graph_node(m, tb, "Tanh", "tanh2", 1, (const char *[]){"t1"}, 1, (const char *[]){"t2"});
  ob_graph_output(m, tb, "t2", OB_F32);
  ob_graph_node(m, eb, "MatMul", "mm2e", 2, (const char *[]){"h", "linear_1.weight"}, 1,
                (const char *[]){"e0"});
  ob_graph_node(m, eb, "Add", "add2e", 2, (const char *[]){"e0", "linear_1.bias"}, 1,
                (const char *[]){"e1"});
  ob_graph_node(m, eb, "Mul", "quarter", 2, (const char *[]){"e1", "quarter"}, 1,
                (const char *[]){"e2"});
  ob_graph_node(m, eb, "Mul", "halve", 2, (const char *[]){"h", "half"}, 1,
                (const char *[]){"e3"});
  ob_graph_node(m, eb, "Add", "sum", 2, (const char *[]){"e3", "e2"}, 1, (const char *[]){"e4"});
  ob_graph_output(m, eb, "e4", OB_F32);
  n = ob_graph_node(m, body, "If", "if", 1, (const char *[]){"p"}, 1, (const char *[]){"hn"});
  ob_attr_graph(m, n, "then_branch", tb);
  ob_attr_graph(m, n, "else_branch", eb);
  n = ob_graph_node(m, body, "ReduceMean", "mean1", 1, (const char *[]){"hn"}, 1,
                    (const char *[]){"m2"});
  ob_attr_i(m, n, "keepdims", 0);
  ob_graph_node(m, body, "Greater", "brk", 2, (const char *[]){"m2", "thr"}, 1,
                (const char *[]){"b"});
  ob_graph_node(m, body, "Not", "more", 1, (const char *[]){"b"}, 1, (const char *[]){"c2"});
  ob_graph_output(m, body, "c2", OB_BOOL);
  ob_graph_output(m, body, "hn", OB_F32);
  n = ob_node(m, "Loop", "loop", 3, (const char *[]){"M", "go", "h0"}, 1,
              (const char *[]){"hf"});
  ob_attr_graph(m, n, "body", body);
  ob_node(m, "MatMul", "mm3", 2, (const char *[]){"hf", "linear_2.weight"}, 1,
          (const char *[]){"o0"});
  ob_node(m, "Add", "add3", 2, (const char *[]){"o0", "linear_2.bias"}, 1,
          (const char *[]){"out"});
  ob_output(m, "out", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

/* `dy2stc train` and the compiled trainer on the ONNX Loop / If graph:
 * equal to eager training of WhileNet from the same parameters. */
static void test_onnx_loop_trainers_match_eager(void) {
  dy_seed(17);
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 2));
  save_model_and_data(wt_new(), "untrained", x, y);
  wt_net *init = wt_new();
  write_onnx_while_net(WORK "/while_net.onnx", init);
  wt_free(init);
  /* the Loop, whose body's condition is data, is a while (not unrolled):
   * its constant M is the loop's bound */
  dy_program *op = NULL;
  dy_error e0 = {0};
  DY_ASSERT_OK(dy_model_load_any(WORK "/while_net.onnx", &op, &e0), &e0);
  CU_ASSERT_EQUAL(dy_test_count_kind(op, DY_OP_WHILE), 1);
  char *text = dy_program_to_text(op);
  CU_ASSERT(text && strstr(text, "max_iterations = 4"));
  free(text);
  dy_program_free(op);
  trainers_match_eager(WORK "/while_net.onnx", "ONNX Loop/If", x, y);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

/* h_{k+1} = tanh(h_k @ w), h_0 = x, three steps; out = mean over the steps
 * of h_k + h_3: as an ONNX Loop (M = 3, cond true: unrolled by the
 * importer) with a scan output (loop = 1), or written out by hand with
 * Unsqueeze + Concat (loop = 0). w is the f32 initializer w0. */
static void write_scan_net(const char *path, bool loop, const float *w0) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  ob_init_f32(m, "w", 2, (int64_t[]){4, 4}, w0);
  int64_t zero = 0, trips = 3;
  ob_init_i64(m, "ax0", 1, (int64_t[]){1}, &zero);
  const char *steps[3] = {"h1", "h2", "h3"}, *us[3] = {"u1", "u2", "u3"};
  if (loop) {
    ob_init_i64(m, "M", 0, NULL, &trips);
    m->inits[m->graph.n_initializer++] = ob_tensor(m, "go", 9, 0, NULL, (uint8_t[]){1}, 1);
    ob_graph *body = ob_graph_new(m, "body");
    ob_graph_input(m, body, "i", OB_I64, 0, NULL);
    ob_graph_input(m, body, "cin", OB_BOOL, 0, NULL);
    ob_graph_input(m, body, "h", OB_F32, 2, (int64_t[]){-1, 4});
    ob_graph_node(m, body, "Identity", "c", 1, (const char *[]){"cin"}, 1,
                  (const char *[]){"cout"});
    ob_graph_node(m, body, "MatMul", "mm", 2, (const char *[]){"h", "w"}, 1,
                  (const char *[]){"a"});
    ob_graph_node(m, body, "Tanh", "t", 1, (const char *[]){"a"}, 1, (const char *[]){"hn"});
    ob_graph_node(m, body, "Identity", "s", 1, (const char *[]){"hn"}, 1,
                  (const char *[]){"sn"});
    ob_graph_output(m, body, "cout", OB_BOOL);
    ob_graph_output(m, body, "hn", OB_F32);
    ob_graph_output(m, body, "sn", OB_F32);
    Onnx__NodeProto *n = ob_node(m, "Loop", "loop", 3, (const char *[]){"M", "go", "x"}, 2,
                                 (const char *[]){"h3", "stacked"});
    ob_attr_graph(m, n, "body", body);
  } else {
    for (int k = 0; k < 3; k++) {
      char mm[8], a[8];
      snprintf(mm, sizeof mm, "mm%d", k);
      snprintf(a, sizeof a, "a%d", k);
      ob_node(m, "MatMul", mm, 2, (const char *[]){k ? steps[k - 1] : "x", "w"}, 1,
              (const char *[]){a});
      ob_node(m, "Tanh", steps[k], 1, (const char *[]){a}, 1, &steps[k]);
      ob_node(m, "Unsqueeze", us[k], 2, (const char *[]){steps[k], "ax0"}, 1, &us[k]);
    }
    Onnx__NodeProto *n = ob_node(m, "Concat", "cat", 3, us, 1, (const char *[]){"stacked"});
    ob_attr_i(m, n, "axis", 0);
  }
  Onnx__NodeProto *n = ob_node(m, "ReduceMean", "mean", 1, (const char *[]){"stacked"}, 1,
                               (const char *[]){"mean"});
  ob_attr_ints(m, n, "axes", 1, (int64_t[]){0});
  ob_attr_i(m, n, "keepdims", 0);
  ob_node(m, "Add", "out", 2, (const char *[]){"mean", "h3"}, 1, (const char *[]){"out"});
  ob_output(m, "out", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

/* w of the trained model at path (max |diff| against ref[16]; or, with ref
 * NULL, copied into out[16]). */
static double trained_w(const char *path, const float *ref, float *out) {
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_jit_load(path, &p, &err), &err);
  int v = p ? dy_program_find_var(p, "w") : -1;
  CU_ASSERT_FATAL(v >= 0);
  const float *w = p->vars[v]->data;
  double md = 0;
  for (int k = 0; k < 16; k++) {
    if (ref)
      md = fmax(md, fabs((double)w[k] - ref[k]));
    else
      out[k] = w[k];
  }
  dy_program_free(p);
  return md;
}

/* An ONNX Loop with a scan output trains as the same steps written out:
 * `dy2stc train` on both gives the same w (each op the same: bit for bit),
 * and the Loop's compiled trainer that w within 1e-5 of its largest
 * magnitude (its state file). */
static void test_onnx_scan_loop_trains(void) {
  mkdir(WORK, 0777);
  dy_seed(23);
  dy_tensor *w0 = dy_randn(2, DY_SHAPE(4, 4));
  dy_tensor *x = dy_randn(2, DY_SHAPE(WT_N, 4)), *y = dy_randn(2, DY_SHAPE(WT_N, 4));
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(WORK "/sx.npy", x, &err), &err);
  DY_ASSERT_OK(dy_npy_write(WORK "/sy.npy", y, &err), &err);
  write_scan_net(WORK "/scan_loop.onnx", true, dy_tensor_f32(w0));
  write_scan_net(WORK "/scan_flat.onnx", false, dy_tensor_f32(w0));
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_model_load_any(WORK "/scan_loop.onnx", &p, &err), &err);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_WHILE), 0); /* unrolled */
  dy_program_free(p);
  const char *opt = "--loss mse --optimizer sgd --momentum 0.9 --lr 0.1 --batch 4";
  const char *data = "--input x=" WORK "/sx.npy --labels " WORK "/sy.npy";
  for (int k = 0; k < 2; k++)
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(WORK "/scan_train.log",
                                     "%s train %s/scan_%s.onnx %s %s --epochs 3 --shuffle 3 "
                                     "-q -o %s/scan_%s_trained", DY2STC_PATH, WORK,
                                     k ? "flat" : "loop", data, opt, WORK,
                                     k ? "flat" : "loop"), 0);
  float flat[16];
  trained_w(WORK "/scan_flat_trained", NULL, flat);
  double d = trained_w(WORK "/scan_loop_trained", flat, NULL);
  double moved = 0;
  for (int k = 0; k < 16; k++)
    moved = fmax(moved, fabs((double)flat[k] - dy_tensor_f32(w0)[k]));
  fprintf(stderr, " [scan Loop vs written out: max |w diff| %g; w moved %g]", d, moved);
  CU_ASSERT(d == 0);
  CU_ASSERT(moved > 1e-3); /* training did something */
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(WORK "/scan_compile.log",
                                   "%s compile %s/scan_loop.onnx --train %s -o %s/scan_trainer",
                                   DY2STC_PATH, WORK, opt, WORK), 0);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(WORK "/scan_trainer.log",
                                   "rm -rf %s/scan_state && %s/scan_trainer %s --epochs 3 "
                                   "--batch 4 --shuffle 3 -o %s/scan_state", WORK, WORK, data,
                                   WORK), 0);
  dy_tensor *wt = NULL;
  DY_ASSERT_OK(dy_npy_read(WORK "/scan_state/w.npy", &wt, &err), &err);
  double de = 0, wmax = 0;
  for (int k = 0; wt && k < 16; k++) {
    de = fmax(de, fabs((double)dy_tensor_f32(wt)[k] - flat[k]));
    wmax = fmax(wmax, fabs((double)flat[k]));
  }
  fprintf(stderr, " [compiled trainer: %g of max |w| %g]", de, wmax);
  CU_ASSERT(wt && de <= 1e-5 * wmax); /* its own kernels: rounding, relative */
  dy_tensor_free(wt);
  dy_tensor_free(w0);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

void dy_test_register(void) {
  DY_SUITE("while_train");
  DY_TEST(test_to_static_training_matches_eager);
  DY_TEST(test_cli_trainers_match_eager);
  DY_TEST(test_trip_bound_is_a_clean_error);
  DY_TEST(test_c_model_trainers_match_eager);
  DY_TEST(test_onnx_loop_trainers_match_eager);
  DY_TEST(test_onnx_scan_loop_trains);
}
