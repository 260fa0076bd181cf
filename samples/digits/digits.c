/* digits.c - training end to end on scikit-learn's digits (1797 images of
 * 8x8 pixels 0..16, ten classes): an MLP and a small CNN, each trained
 * eagerly (dy_backward + dy_optimizer_step) and through its static Program
 * (dy_to_static_train), then saved trained (eval semantics).
 *
 *   ./digits [--data digits.csv.gz] [--out DIR]
 *   ./digits --eval MODEL [--out DIR]      (test accuracy of a saved model)
 *
 * Data: each line of the csv is 64 pixels then the label. Sample i goes to
 * the test split when i % 5 == 4, to the training split otherwise (1438
 * training and 359 test samples; the file cycles through the classes, so
 * both splits hold every class about equally). Pixels are divided by 16.
 * Written to DIR: train_x.npy f32[1438,64], train_img.npy f32[1438,1,8,8],
 * train_y.npy i64[1438], and the test_* counterparts.
 *
 * Models (seeded, so every run starts from the same weights):
 *   mlp  64 -> linear 128 -> relu -> linear 10
 *   cnn  [1,8,8] conv 3x3 pad 1 x16 -> relu -> maxpool 2 -> conv 3x3 x32
 *        -> relu -> flatten -> linear 128 -> 10
 * Training (both paths alike): cross entropy, Adam lr 0.01, batch 32,
 * dy_seed(SEED) then per epoch dy_train_shuffle (the order dy2stc train
 * uses), EPOCHS epochs. Written to DIR: NAME_untrained (the initial model,
 * eval), NAME_eager and NAME_static (trained, eval),
 * NAME_static_losses.txt (one mean loss per epoch), and the options of the
 * same run split in two: NAME_train_opts.txt (the training step's: loss,
 * optimizer, lr, schedule, batch; `dy2stc compile --train` takes these) and
 * NAME_run_args.txt (the data and the loop: --input, --labels, --epochs,
 * --shuffle; the compiled trainer takes these). `dy2stc train` takes both,
 * so that the ctest (check_digits.sh) can train NAME_untrained with
 * `dy2stc train` and with the compiled trainer and compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dy_runtime.h"

enum { N_ALL = 1797, N_PIX = 64, N_CLASSES = 10, BATCH = 32, SEED = 1, INIT_SEED = 7 };

static const char *default_data = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

typedef struct {
  dy_tensor *x, *img, *y;   /* [N,64], [N,1,8,8], i64 [N] */
} split;

typedef struct {
  const char *name;
  dy_layer *(*make)(void);
  int epochs;
  double lr;
  const char *input;        /* "x" or "img" */
  dy_input_spec spec;
} model_def;

static int die(const char *what, const dy_error *err) {
  char line[1024] = "failed";
  if (err)
    dy_error_format(err, line, sizeof line);
  fprintf(stderr, "digits: %s: %s\n", what, line);
  return 1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- data ---- */

/* Read the csv through gzip into pix [N_ALL][64] and labels. */
static int read_digits(const char *path, float *pix, int64_t *labels) {
  char cmd[4200];
  if (strchr(path, '\'')) {
    fprintf(stderr, "digits: %s: a quote in the path\n", path);
    return 1;
  }
  snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
  FILE *f = popen(cmd, "r");
  if (!f) {
    fprintf(stderr, "digits: cannot run gzip on %s\n", path);
    return 1;
  }
  int n = 0, bad = 0;
  for (; n < N_ALL && !bad; n++)
    for (int j = 0; j <= N_PIX && !bad; j++) {
      int v;
      if (fscanf(f, j ? " ,%d" : " %d", &v) != 1 || v < 0 || v > (j < N_PIX ? 16 : 9))
        bad = 1;
      else if (j < N_PIX)
        pix[n * N_PIX + j] = (float)v / 16.0f;
      else
        labels[n] = v;
    }
  int rc = pclose(f);
  if (bad || rc != 0) {
    fprintf(stderr, "digits: %s: not the digits csv (%d rows of 64 pixels in 0..16 "
                    "and a label in 0..9 expected; row %d is bad or gzip failed)\n",
            path, N_ALL, n);
    return 1;
  }
  return 0;
}

static void make_split(const float *pix, const int64_t *labels, bool test, split *s) {
  int64_t n = 0;
  for (int i = 0; i < N_ALL; i++)
    n += (i % 5 == 4) == test;
  s->x = dy_tensor_new(DY_F32, 2, DY_SHAPE(n, N_PIX));
  s->y = dy_tensor_new(DY_I64, 1, DY_SHAPE(n));
  float *x = s->x->data;
  int64_t *y = s->y->data, k = 0;
  for (int i = 0; i < N_ALL; i++)
    if ((i % 5 == 4) == test) {
      memcpy(x + k * N_PIX, pix + i * N_PIX, sizeof(float) * N_PIX);
      y[k++] = labels[i];
    }
  s->img = dy_reshape(s->x, 4, DY_SHAPE(n, 1, 8, 8));
}

static int write_split(const char *dir, const char *tag, const split *s) {
  const char *names[] = {"x", "img", "y"};
  dy_tensor *t[] = {s->x, s->img, s->y};
  for (int i = 0; i < 3; i++) {
    char path[4096];
    dy_error err = {0};
    snprintf(path, sizeof path, "%s/%s_%s.npy", dir, tag, names[i]);
    if (dy_npy_write(path, t[i], &err))
      return die("writing data", &err);
  }
  return 0;
}

/* ---- models ---- */

static dy_layer *mlp_new(void) {
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, dy_linear_new(N_PIX, 128));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_linear_new(128, N_CLASSES));
  return s;
}

static dy_layer *cnn_new(void) {
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, dy_conv2d_layer_new(1, 16, 3, 3, (dy_conv2d_params){.padding = {1, 1, 1, 1}}, true));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {2, 2}}));
  dy_sequential_append(s, dy_conv2d_layer_new(16, 32, 3, 3, (dy_conv2d_params){0}, true));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(128, N_CLASSES));
  return s;
}

/* ---- evaluation ---- */

/* Percentage of test samples whose largest logit is the label. */
static double accuracy(const dy_tensor *logits, const dy_tensor *y) {
  const float *l = logits->data;
  const int64_t *t = y->data;
  int64_t n = y->type.shape[0], ok = 0;
  for (int64_t i = 0; i < n; i++) {
    int best = 0;
    for (int c = 1; c < N_CLASSES; c++)
      if (l[i * N_CLASSES + c] > l[i * N_CLASSES + best])
        best = c;
    ok += best == t[i];
  }
  return 100.0 * (double)ok / (double)n;
}

static double layer_accuracy(dy_layer *net, dy_tensor *x, const dy_tensor *y) {
  dy_layer_eval(net);
  dy_no_grad_begin();
  dy_scope_begin();
  dy_tensor *out = dy_call1(net, x);
  double a = out ? accuracy(out, y) : -1;
  dy_scope_end();
  dy_no_grad_end();
  dy_layer_train(net);
  return a;
}

/* --eval MODEL: the saved model on the test split (the executor). */
static int eval_saved(const char *model, const char *dir) {
  char path[4096];
  dy_error err = {0};
  dy_program *p = NULL;
  dy_tensor *x = NULL, *y = NULL, *out = NULL;
  snprintf(path, sizeof path, "%s/test_%s.npy", dir, "y");
  if (dy_jit_load(model, &p, &err) || dy_npy_read(path, &y, &err))
    return die(model, &err);
  bool img = p->vars[p->feeds[0]]->type.rank == 4;
  snprintf(path, sizeof path, "%s/test_%s.npy", dir, img ? "img" : "x");
  if (dy_npy_read(path, &x, &err) || dy_executor_run(p, &x, 1, &out, 1, &err))
    return die(model, &err);
  printf("%s: test accuracy %.2f%%\n", model, accuracy(out, y));
  dy_tensor_free(x);
  dy_tensor_free(y);
  dy_tensor_free(out);
  dy_program_free(p);
  return 0;
}

/* ---- training ---- */

typedef enum { EAGER, STATIC } path_kind;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1; sorts v). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Write TEXT to DIR/NAME_WHAT.txt; nonzero (said on stderr) on failure. */
static int write_text(const char *dir, const char *name, const char *what, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%s.txt", dir, name, what);
  FILE *f = fopen(path, "w");
  int bad = !f || fputs(text, f) < 0;
  if ((f && fclose(f)) || bad) {
    fprintf(stderr, "digits: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

/* Train a fresh def->make() model EPOCHS epochs on tr; losses[e] is epoch
 * e's mean loss, secs[e] its wall time. Returns the model (trained) or NULL. */
static dy_layer *train(const model_def *def, path_kind how, const dy_tensor *xall,
                       const dy_tensor *yall, double *losses, double *secs) {
  dy_seed(INIT_SEED);
  dy_layer *net = def->make();
  if (!net || dy_last_error())
    return NULL;
  dy_loss_spec loss = {.kind = DY_LOSS_CROSS_ENTROPY};
  dy_optimizer_spec opt = {.kind = DY_OPT_ADAM, .lr = def->lr};
  dy_error err = {0};
  dy_static_trainer *st = how == STATIC ? dy_to_static_train(net, &loss, &opt) : NULL;
  dy_optimizer *eo = how == EAGER ? dy_optimizer_new(&opt, net) : NULL;
  int64_t n = yall->type.shape[0], steps = (n + BATCH - 1) / BATCH;
  int64_t *order = malloc(sizeof *order * (size_t)n);
  dy_status s = (st || eo) && order ? DY_OK : DY_STATUS_OUT_OF_MEMORY;
  /* the rate decays along a cosine from lr to 0 over the run */
  dy_lr_schedule sched = {.kind = DY_LR_COSINE, .total_steps = def->epochs * steps};
  dy_seed(SEED);
  for (int e = 0, step = 0; e < def->epochs && !s; e++) {
    double t0 = now_s(), sum = 0;
    dy_train_shuffle(order, n);
    for (int64_t k = 0; k < steps && !s; k++, step++) {
      int64_t begin = k * BATCH, count = n - begin < BATCH ? n - begin : BATCH;
      double l = 0, lr = dy_lr_at(&sched, def->lr, step);
      dy_scope_begin();
      dy_tensor *x = dy_train_batch(xall, order, begin, count);
      dy_tensor *y = dy_train_batch(yall, order, begin, count);
      if (how == STATIC) {
        s = dy_static_train_step(st, &x, 1, y, lr, &l, &err);
      } else {
        dy_tensor *lt = dy_cross_entropy(dy_call1(net, x), y, &loss);
        s = lt ? dy_backward(lt, &err) : DY_STATUS_INVALID_ARGUMENT;
        dy_optimizer_set_lr(eo, lr);
        if (!s)
          s = dy_optimizer_step(eo, &err);
        dy_clear_grad(net);
        l = lt ? *dy_tensor_f32(lt) : 0;
      }
      if (dy_last_error() && !s) {
        err = *dy_last_error();
        s = err.status;
      }
      dy_scope_end();
      sum += l;
    }
    losses[e] = sum / (double)steps;
    secs[e] = now_s() - t0;
  }
  if (s) {
    if (dy_last_error() && !err.status)
      err = *dy_last_error();
    die(def->name, &err);
    dy_layer_free(net);
    net = NULL;
  }
  free(order);
  dy_static_trainer_free(st);
  dy_optimizer_free(eo);
  return net;
}

static int save(dy_layer *net, const model_def *def, const char *dir, const char *tag) {
  char path[4096];
  dy_error err = {0};
  snprintf(path, sizeof path, "%s/%s_%s", dir, def->name, tag);
  if (dy_jit_save_ex(net, &def->spec, 1, path, DY_SAVE_EVAL, &err))
    return die("saving", &err);
  return 0;
}

static int run_model(const model_def *def, const split *tr, const split *te,
                     const char *dir) {
  enum { MAX_EPOCHS = 64 };
  double le[MAX_EPOCHS], ls[MAX_EPOCHS], sec_eager[MAX_EPOCHS], sec_static[MAX_EPOCHS];
  bool img = strcmp(def->input, "img") == 0;
  const dy_tensor *xtr = img ? tr->img : tr->x;
  dy_tensor *xte = img ? te->img : te->x;
  dy_seed(INIT_SEED);
  dy_layer *init = def->make();
  if (!init || save(init, def, dir, "untrained"))
    return die(def->name, dy_last_error());
  dy_layer_free(init);
  dy_layer *eager = train(def, EAGER, xtr, tr->y, le, sec_eager);
  dy_layer *stat = eager ? train(def, STATIC, xtr, tr->y, ls, sec_static) : NULL;
  if (!stat) {
    dy_layer_free(eager);
    return 1;
  }
  char path[4096];
  /* the run's options for check_digits.sh: the training step's (compile
   * time for the compiled trainer), then the data and the loop (run time) */
  char opts[512], run[4096 + 512];
  snprintf(opts, sizeof opts,
           "--loss cross_entropy --optimizer adam --lr %g --lr-schedule cosine:0 --batch %d\n",
           def->lr, BATCH);
  snprintf(run, sizeof run, "--input %s=%s/train_%s.npy --labels %s/train_y.npy --epochs %d "
           "--shuffle %d\n",
           def->spec.name, dir, def->input, dir, def->epochs, SEED);
  if (write_text(dir, def->name, "train_opts", opts) ||
      write_text(dir, def->name, "run_args", run)) {
    dy_layer_free(eager);
    dy_layer_free(stat);
    return 1;
  }
  snprintf(path, sizeof path, "%s/%s_static_losses.txt", dir, def->name);
  FILE *f = fopen(path, "w");
  double maxd = 0;
  for (int e = 0; e < def->epochs; e++) {
    double d = le[e] - ls[e];
    maxd = d < 0 ? (-d > maxd ? -d : maxd) : (d > maxd ? d : maxd);
    printf("%s epoch %d loss eager %.4f static %.4f\n", def->name, e + 1, le[e], ls[e]);
    if (f)
      fprintf(f, "%.6f\n", ls[e]);
  }
  if (!f || fclose(f)) {
    fprintf(stderr, "digits: cannot write %s\n", path);
    return 1;
  }
  double ae = layer_accuracy(eager, xte, te->y), as = layer_accuracy(stat, xte, te->y);
  printf("%s eager: test accuracy %.2f%%, median epoch %.3f s\n", def->name, ae,
         median(sec_eager, def->epochs));
  printf("%s to_static: test accuracy %.2f%%, median epoch %.3f s\n", def->name, as,
         median(sec_static, def->epochs));
  printf("%s: largest epoch-loss difference eager vs to_static %.2e\n", def->name, maxd);
  int rc = save(eager, def, dir, "eager") || save(stat, def, dir, "static");
  dy_layer_free(eager);
  dy_layer_free(stat);
  return rc;
}

int main(int argc, char **argv) {
  const char *data = default_data, *dir = ".", *eval = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
      data = argv[++i];
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--eval") == 0 && i + 1 < argc)
      eval = argv[++i];
    else {
      fprintf(stderr, "usage: digits [--data FILE.csv.gz] [--out DIR] [--eval MODEL]\n");
      return 2;
    }
  }
  if (eval)
    return eval_saved(eval, dir);
  float *pix = malloc(sizeof(float) * N_ALL * N_PIX);
  int64_t *labels = malloc(sizeof(int64_t) * N_ALL);
  if (!pix || !labels || read_digits(data, pix, labels)) {
    free(pix);
    free(labels);
    return 1;
  }
  split tr, te;
  make_split(pix, labels, false, &tr);
  make_split(pix, labels, true, &te);
  free(pix);
  free(labels);
  if (!tr.img || !te.img)
    return die("data", dy_last_error());
  printf("digits: %lld training and %lld test samples\n", (long long)tr.y->type.shape[0],
         (long long)te.y->type.shape[0]);
  int rc = write_split(dir, "train", &tr) || write_split(dir, "test", &te);
  const model_def defs[] = {
      {"mlp", mlp_new, 15, 0.01, "x", {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, N_PIX}}},
      {"cnn", cnn_new, 15, 0.01, "img",
       {.name = "img", .dtype = DY_F32, .rank = 4, .shape = {-1, 1, 8, 8}}},
  };
  for (int i = 0; i < 2 && !rc; i++)
    rc = run_model(&defs[i], &tr, &te, dir);
  split *ss[] = {&tr, &te};
  for (int i = 0; i < 2; i++) {
    dy_tensor_free(ss[i]->x);
    dy_tensor_free(ss[i]->img);
    dy_tensor_free(ss[i]->y);
  }
  return rc;
}
