/* test_train.c - training three ways: eager (dy_backward +
 * dy_optimizer_step), to_static (dy_static_train_step) and `dy2stc train`
 * on the model saved untrained. Each runs 20 steps (4 epochs of 5 batches,
 * the last one short) over the same seeded data order (dy_train_shuffle)
 * with SGD with momentum and with Adam (and, on the MLP, Nesterov with L2
 * decay and a step schedule, AdamW with clipping and a cosine schedule),
 * and the parameters (and batch
 * norm's running statistics) after the last step must agree within 1e-4
 * of each tensor's scale, and the epoch losses likewise. Models: the MLP,
 * LeNet-5 and the transformer of samples/ (their own constructors, included
 * below; the transformer's dropout trains in training mode), and a small
 * conv + batch norm + dropout net. Plus the errors: bad labels, sample
 * counts, losses that do not fit, a model without trainable parameters,
 * each one line naming the thing.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* The samples' model constructors, with their main()s renamed out of the
 * way, so these tests train exactly the models the samples export. */
#define main mlp_sample_main
#include "../samples/mlp.c"
#undef main
#define main lenet5_sample_main
#include "../samples/lenet5.c"
#undef main
#define main transformer_sample_main
#include "../samples/transformer.c"
#undef main

#define DY2STC DY2STC_PATH
#define WORK DY_BUILD_DIR "/train"
#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

enum { STEPS_PER_EPOCH = 5, EPOCHS = 4, SEED = 11 };

static dy_layer *transformer_new(void) {
  dy_layer *net = dy_sequential_new();
  dy_sequential_append(net, encoder_layer_new());
  dy_sequential_append(net, encoder_layer_new());
  return net;
}

/* conv 3x3 (1 -> 4, pad 1) -> batch norm -> relu -> dropout 0.3 -> flatten
 * -> linear 144 -> 3, on [N, 1, 6, 6] */
static dy_layer *bn_drop_new(void) {
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, dy_conv2d_layer_new(1, 4, 3, 3, (dy_conv2d_params){.padding = {1, 1, 1, 1}}, true));
  dy_sequential_append(s, dy_batch_norm2d_new(4, 0.9, 1e-5));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_dropout_layer_new(0.3));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(144, 3));
  return s;
}

typedef struct {
  const char *name;
  dy_layer *(*make)(void);
  dy_input_spec spec;      /* the input, batch -1 */
  dy_loss_kind loss;
  int64_t batch;           /* samples = 5 batches, the last one short */
  double tol;
} train_case;

static const train_case cases[] = {
    {"mlp", mlp_new, {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 784}},
     DY_LOSS_CROSS_ENTROPY, 4, 1e-4},
    {"lenet5", lenet5_new, {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 1, 28, 28}},
     DY_LOSS_CROSS_ENTROPY, 4, 1e-4},
    {"transformer", transformer_new,
     {.name = "x", .dtype = DY_F32, .rank = 3, .shape = {-1, SEQ, D_MODEL}}, DY_LOSS_MSE, 2,
     1e-4},
    {"bn_drop", bn_drop_new, {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 1, 6, 6}},
     DY_LOSS_BCE_WITH_LOGITS, 4, 1e-4},
};

static int64_t n_samples(const train_case *c) { return STEPS_PER_EPOCH * c->batch - 1; }

/* Seeded data for c (the caller frees x and y; no scope is open here):
 * inputs N(0,1); labels: classes for cross entropy,
 * N(0,1) targets shaped like the output for mse, 0/1 for bce. */
static void make_data(const train_case *c, const dy_type *out, dy_tensor **x, dy_tensor **y) {
  int64_t n = n_samples(c);
  dy_seed(99);
  dy_type t = {.dtype = DY_F32, .rank = c->spec.rank};
  memcpy(t.shape, c->spec.shape, sizeof t.shape);
  t.shape[0] = n;
  *x = dy_randn(t.rank, t.shape);
  if (c->loss == DY_LOSS_CROSS_ENTROPY) {
    *y = dy_tensor_new(DY_I64, 1, DY_SHAPE(n));
    for (int64_t i = 0; i < n; i++)
      ((int64_t *)(*y)->data)[i] = (int64_t)(dy_rand_u64() % (uint64_t)out->shape[1]);
  } else {
    dy_type o = *out;
    o.shape[0] = n;
    *y = dy_randn(o.rank, o.shape);
    if (c->loss == DY_LOSS_BCE_WITH_LOGITS)
      for (int64_t i = 0; i < dy_tensor_numel(*y); i++)
        dy_tensor_f32(*y)[i] = dy_tensor_f32(*y)[i] > 0 ? 1.0f : 0.0f;
  }
}

/* A fresh model of c, initialised from seed 7, in train mode. */
static dy_layer *fresh(const train_case *c) {
  dy_seed(7);
  dy_layer *net = c->make();
  CU_ASSERT_PTR_NULL(dy_last_error());
  dy_layer_train(net);
  return net;
}

/* Train a fresh model eagerly (static_ false) or through to_static; the
 * epochs' mean losses in losses[]. */
static dy_layer *train_layer(const train_case *c, bool static_, const dy_optimizer_spec *opt,
                             const dy_lr_schedule *sched, dy_tensor *x, dy_tensor *y,
                             double *losses) {
  dy_layer *net = fresh(c);
  dy_loss_spec loss = {.kind = c->loss};
  dy_error err = {0};
  dy_static_trainer *st = static_ ? dy_to_static_train(net, &loss, opt) : NULL;
  dy_optimizer *eo = static_ ? NULL : dy_optimizer_new(opt, net);
  CU_ASSERT_FATAL(st || eo);
  int64_t n = n_samples(c), order[64];
  dy_seed(SEED);
  for (int e = 0, step = 0; e < EPOCHS; e++) {
    dy_train_shuffle(order, n);
    losses[e] = 0;
    for (int k = 0; k < STEPS_PER_EPOCH; k++, step++) {
      int64_t begin = k * c->batch, count = n - begin < c->batch ? n - begin : c->batch;
      double l = -1, lr = dy_lr_at(sched, opt->lr, step);
      dy_scope_begin();
      dy_tensor *xb = dy_train_batch(x, order, begin, count);
      dy_tensor *yb = dy_train_batch(y, order, begin, count);
      if (static_) {
        DY_ASSERT_OK(dy_static_train_step(st, &xb, 1, yb, lr, &l, &err), &err);
      } else {
        dy_tensor *lt = dy_loss(dy_call1(net, xb), yb, &loss);
        CU_ASSERT_PTR_NOT_NULL_FATAL(lt);
        l = *dy_tensor_f32(lt);
        DY_ASSERT_OK(dy_backward(lt, &err), &err);
        dy_optimizer_set_lr(eo, lr);
        DY_ASSERT_OK(dy_optimizer_step(eo, &err), &err);
        dy_clear_grad(net);
      }
      dy_scope_end();
      losses[e] += l / STEPS_PER_EPOCH;
    }
  }
  CU_ASSERT_PTR_NULL(dy_last_error());
  dy_static_trainer_free(st);
  dy_optimizer_free(eo);
  return net;
}

/* max |a - b| <= tol * max |b| (+ a floor for all-zero tensors). */
static bool close_to(const float *a, const float *b, int64_t n, double tol, const char *what) {
  double md = 0, mb = 0;
  for (int64_t i = 0; i < n; i++) {
    md = fmax(md, fabs((double)a[i] - b[i]));
    mb = fmax(mb, fabs((double)b[i]));
  }
  bool ok = md <= tol * mb + 1e-7;
  if (!ok)
    fprintf(stderr, "\n  %s: max diff %g, scale %g\n", what, md, mb);
  return ok;
}

/* Every parameter and buffer of net against the var of its name in p. */
static void compare_with_program(const dy_layer *net, const dy_program *p, double tol,
                                 const char *what) {
  for (int i = 0; i < net->n_params; i++) {
    const dy_tensor *t = net->params[i];
    int v = dy_program_find_var(p, t->name);
    CU_ASSERT_FATAL(v >= 0);
    char w[256];
    snprintf(w, sizeof w, "%s %s", what, t->name);
    CU_ASSERT(close_to(p->vars[v]->data, t->data, dy_tensor_numel(t), tol, w));
  }
  for (int i = 0; i < net->n_children; i++)
    compare_with_program(net->children[i], p, tol, what);
}

static void compare_layers(const dy_layer *a, const dy_layer *b, double tol, const char *what) {
  for (int i = 0; i < a->n_params; i++) {
    char w[256];
    snprintf(w, sizeof w, "%s %s", what, a->params[i]->name);
    CU_ASSERT(close_to(a->params[i]->data, b->params[i]->data, dy_tensor_numel(a->params[i]),
                       tol, w));
  }
  for (int i = 0; i < a->n_children; i++)
    compare_layers(a->children[i], b->children[i], tol, what);
}

static void write_npy(const char *path, const dy_tensor *t) {
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
}

/* `dy2stc train` on c's model saved untrained (eval), the same data and
 * order; its epoch losses in losses[]; returns the trained Program. */
static dy_program *train_cli(const train_case *c, const char *opt_args, dy_tensor *x,
                             dy_tensor *y, double *losses) {
  char dir[512], path[700];
  dy_error err = {0};
  snprintf(dir, sizeof dir, WORK "/%s", c->name);
  mkdir(WORK, 0777);
  mkdir(dir, 0777);
  dy_layer *net = fresh(c);
  snprintf(path, sizeof path, "%s/untrained", dir);
  DY_ASSERT_OK(dy_jit_save_ex(net, &c->spec, 1, path, DY_SAVE_EVAL, &err), &err);
  dy_layer_free(net);
  snprintf(path, sizeof path, "%s/x.npy", dir);
  write_npy(path, x);
  snprintf(path, sizeof path, "%s/y.npy", dir);
  write_npy(path, y);
  int rc = dy_test_sh(NULL,
                      "%s train %s/untrained.dymodel --input x=%s/x.npy --labels %s/y.npy "
                      "--loss %s %s --batch %lld --epochs %d --shuffle %d -o %s/trained "
                      ">%s/train.log 2>&1",
                      DY2STC, dir, dir, dir, dy_loss_name(c->loss), opt_args,
                      (long long)c->batch, EPOCHS, SEED, dir, dir);
  snprintf(path, sizeof path, "%s/train.log", dir);
  char *log = dy_test_slurp(path);
  if (rc)
    fprintf(stderr, "\n  dy2stc train failed:\n%s\n", log ? log : "");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  int e = 0;
  for (const char *s = log; s && (s = strstr(s, "epoch ")); s++) {
    int k;
    double l;
    if (sscanf(s, "epoch %d loss %lf", &k, &l) == 2 && k == e + 1 && e < EPOCHS)
      losses[e++] = l;
  }
  free(log);
  CU_ASSERT_EQUAL(e, EPOCHS);
  dy_program *p = NULL;
  snprintf(path, sizeof path, "%s/trained", dir);
  DY_ASSERT_OK(dy_jit_load(path, &p, &err), &err);
  return p;
}

static void three_ways_sched(const train_case *c, const dy_optimizer_spec *opt,
                             const dy_lr_schedule *sched, const char *opt_args) {
  dy_layer *probe = fresh(c);
  dy_program *pp = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_from_layer(probe, &c->spec, 1, &pp, &err), &err);
  dy_type out = pp->vars[pp->fetches[0]]->type;
  dy_program_free(pp);
  dy_layer_free(probe);
  dy_tensor *x, *y;
  make_data(c, &out, &x, &y);
  double le[EPOCHS], ls[EPOCHS], lc[EPOCHS];
  dy_layer *eager = train_layer(c, false, opt, sched, x, y, le);
  dy_layer *stat = train_layer(c, true, opt, sched, x, y, ls);
  dy_program *cli = train_cli(c, opt_args, x, y, lc);
  char what[128];
  snprintf(what, sizeof what, "%s %s: to_static vs eager", c->name, dy_opt_name(opt->kind));
  compare_layers(stat, eager, c->tol, what);
  snprintf(what, sizeof what, "%s %s: dy2stc train vs to_static", c->name,
           dy_opt_name(opt->kind));
  compare_with_program(stat, cli, c->tol, what);
  for (int e = 0; e < EPOCHS; e++) {
    DY_ASSERT_NEAR(ls[e], le[e], c->tol * fabs(le[e]) + 1e-6);
    DY_ASSERT_NEAR(lc[e], ls[e], 1e-4 * fabs(ls[e]) + 1e-4); /* printed with 4 decimals */
  }
  /* training did something: the last epoch's loss is below the first's */
  CU_ASSERT(ls[EPOCHS - 1] < ls[0]);
  dy_layer_free(eager);
  dy_layer_free(stat);
  dy_program_free(cli);
  dy_tensor_free(x);
  dy_tensor_free(y);
}

static void three_ways(const train_case *c, const dy_optimizer_spec *opt, const char *opt_args) {
  three_ways_sched(c, opt, NULL, opt_args);
}

static const dy_optimizer_spec sgd = {.kind = DY_OPT_SGD, .lr = 0.01, .momentum = 0.9};
static const dy_optimizer_spec adam = {.kind = DY_OPT_ADAM, .lr = 0.001};
#define SGD_ARGS "--optimizer sgd --lr 0.01 --momentum 0.9"
#define ADAM_ARGS "--optimizer adam --lr 0.001"

static void test_mlp(void) {
  three_ways(&cases[0], &sgd, SGD_ARGS);
  three_ways(&cases[0], &adam, ADAM_ARGS);
  /* the other options: Nesterov, AdamW's decoupled decay, L2 decay, clipping
   * by the global norm, the step and cosine schedules */
  const dy_optimizer_spec nesterov = {.kind = DY_OPT_SGD, .lr = 0.01, .momentum = 0.9,
                                      .nesterov = true, .weight_decay = 1e-3};
  const dy_optimizer_spec adamw = {.kind = DY_OPT_ADAMW, .lr = 0.002, .weight_decay = 0.05,
                                   .clip_norm = 0.5};
  const dy_lr_schedule step = {.kind = DY_LR_STEP, .step_size = 6, .gamma = 0.5};
  const dy_lr_schedule cosine = {.kind = DY_LR_COSINE, .warmup_steps = 3,
                                 .total_steps = EPOCHS * STEPS_PER_EPOCH};
  three_ways_sched(&cases[0], &nesterov, &step,
                   "--optimizer sgd --lr 0.01 --momentum 0.9 --nesterov --weight-decay 0.001 "
                   "--lr-schedule step:6:0.5");
  three_ways_sched(&cases[0], &adamw, &cosine,
                   "--optimizer adamw --lr 0.002 --weight-decay 0.05 --clip-norm 0.5 "
                   "--lr-schedule cosine:3");
}

static void test_lenet5(void) {
  three_ways(&cases[1], &sgd, SGD_ARGS);
  three_ways(&cases[1], &adam, ADAM_ARGS);
}

static void test_transformer(void) {
  three_ways(&cases[2], &sgd, SGD_ARGS);
  three_ways(&cases[2], &adam, ADAM_ARGS);
}

static void test_batch_norm_dropout(void) {
  three_ways(&cases[3], &sgd, SGD_ARGS);
  three_ways(&cases[3], &adam, ADAM_ARGS);
}

/* ---- errors ---- */

/* Run dy2stc train on the small model with labels lab; expect exit status
 * want and one line on stderr containing every needle. */
static void cli_error(int want, const char *labels_file, const char *extra, const char *n1,
                      const char *n2) {
  int rc = sh("%s train " WORK "/small/model.dymodel --input x=" WORK "/small/x.npy "
              "--labels " WORK "/small/%s %s -o " WORK "/small/out 2>" WORK "/small/err.txt",
              DY2STC, labels_file, extra);
  char *e = dy_test_slurp(WORK "/small/err.txt");
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  int lines = 0;
  for (const char *s = e; *s; s++)
    lines += *s == '\n';
  bool ok = rc == want && lines == 1 && strstr(e, n1) && (!n2 || strstr(e, n2));
  if (!ok)
    fprintf(stderr, "\n  labels %s %s: exit %d (want %d), stderr: %s", labels_file, extra,
            rc, want, e);
  CU_ASSERT(ok);
  free(e);
}

static void test_cli_errors(void) {
  mkdir(WORK, 0777);
  mkdir(WORK "/small", 0777);
  dy_seed(3);
  dy_layer *net = dy_sequential_new();
  dy_sequential_append(net, dy_linear_new(4, 3));
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 4}};
  dy_error err = {0};
  DY_ASSERT_OK(dy_jit_save_ex(net, &spec, 1, WORK "/small/model", DY_SAVE_EVAL, &err), &err);
  dy_layer_free(net);
  dy_scope_begin();
  write_npy(WORK "/small/x.npy", dy_randn(2, DY_SHAPE(6, 4)));
  dy_tensor *y = dy_tensor_new(DY_I64, 1, DY_SHAPE(6));
  for (int i = 0; i < 6; i++)
    ((int64_t *)y->data)[i] = i % 3;
  write_npy(WORK "/small/y.npy", y);
  ((int64_t *)y->data)[4] = 3;
  write_npy(WORK "/small/y_range.npy", y);
  write_npy(WORK "/small/y_f32.npy", dy_zeros(1, DY_SHAPE(6)));
  write_npy(WORK "/small/y_2d.npy", dy_tensor_new(DY_I64, 2, DY_SHAPE(6, 2)));
  write_npy(WORK "/small/y_5.npy", dy_tensor_new(DY_I64, 1, DY_SHAPE(5)));
  dy_scope_end();
  const char *ce = "--loss cross_entropy --optimizer sgd";
  /* the good case works, so the failures below are the labels' fault */
  CU_ASSERT_EQUAL(sh("%s train " WORK "/small/model.dymodel --input x=" WORK "/small/x.npy "
                     "--labels " WORK "/small/y.npy %s -o " WORK "/small/out", DY2STC, ce), 0);
  cli_error(1, "y_range.npy", ce, "label 3 of sample 4 is out of range", "[0, 3)");
  cli_error(1, "y_f32.npy", ce, "y_f32.npy", "does not fit cross_entropy");
  cli_error(1, "y_2d.npy", ce, "y_2d.npy", "does not fit cross_entropy");
  cli_error(1, "y_5.npy", ce, "sample counts differ", "5");
  cli_error(1, "y.npy", "--loss mse --optimizer sgd", "does not fit mse", "i64");
  cli_error(2, "y.npy", "--loss hinge --optimizer sgd", "unknown loss 'hinge'", NULL);
  cli_error(2, "y.npy", "--loss mse --optimizer rmsprop", "unknown optimizer 'rmsprop'", NULL);
  cli_error(2, "y.npy", "--loss mse --optimizer adam --momentum 0.9", "--momentum", NULL);
  cli_error(1, "nothing.npy", ce, "nothing.npy", NULL);
}

static dy_tensor *ident(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self;
  (void)n;
  return dy_relu(in[0]);
}

static const dy_layer_vtable ident_vt = {"NoParams", ident, NULL, false};

static void test_static_errors(void) {
  dy_error err = {0};
  dy_loss_spec mse = {.kind = DY_LOSS_MSE};
  dy_scope_begin();
  dy_tensor *x = dy_randn(2, DY_SHAPE(4, 3)), *y = dy_randn(2, DY_SHAPE(4, 3));
  /* a model with nothing to train */
  dy_layer *none = dy_layer_new(sizeof(dy_layer), &ident_vt, "noparams");
  dy_static_trainer *t = dy_to_static_train(none, &mse, &sgd);
  CU_ASSERT_NOT_EQUAL(dy_static_train_step(t, &x, 1, y, 0.1, NULL, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not depend on any trainable parameter"));
  dy_static_trainer_free(t);
  dy_layer_free(none);
  /* labels of the wrong shape name the label */
  dy_layer *lin = dy_linear_new(3, 2);
  t = dy_to_static_train(lin, &mse, &sgd);
  err = (dy_error){0};
  CU_ASSERT_NOT_EQUAL(dy_static_train_step(t, &x, 1, y, 0.1, NULL, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "label"));
  /* a model with parameters but a loss that is not a scalar cannot be built
   * either: cross entropy on labels of the wrong dtype */
  dy_loss_spec ce = {.kind = DY_LOSS_CROSS_ENTROPY};
  dy_static_trainer *t2 = dy_to_static_train(lin, &ce, &sgd);
  err = (dy_error){0};
  CU_ASSERT_NOT_EQUAL(dy_static_train_step(t2, &x, 1, y, 0.1, NULL, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "label"));
  dy_static_trainer_free(t);
  dy_static_trainer_free(t2);
  dy_layer_free(lin);
  dy_scope_end();
  dy_clear_error();
}

/* The shuffle is the documented Fisher-Yates over dy_rand_u64. */
static void test_shuffle(void) {
  int64_t got[10], want[10];
  dy_seed(5);
  dy_train_shuffle(got, 10);
  dy_seed(5);
  for (int i = 0; i < 10; i++)
    want[i] = i;
  for (int i = 9; i > 0; i--) {
    int j = (int)(dy_rand_u64() % (uint64_t)(i + 1));
    int64_t t = want[i];
    want[i] = want[j];
    want[j] = t;
  }
  CU_ASSERT_EQUAL(memcmp(got, want, sizeof got), 0);
  bool moved = false;
  for (int i = 0; i < 10; i++)
    moved |= got[i] != i;
  CU_ASSERT(moved);
}

void dy_test_register(void) {
  DY_SUITE("train");
  DY_TEST(test_shuffle);
  DY_TEST(test_static_errors);
  DY_TEST(test_cli_errors);
  DY_TEST(test_mlp);
  DY_TEST(test_lenet5);
  DY_TEST(test_batch_norm_dropout);
  DY_TEST(test_transformer);
}
