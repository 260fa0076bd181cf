/* cmd_train.c - `dy2stc train`: train a model on .npy data with the static
 * executor and write the trained inference model.
 *
 *   dy2stc train MODEL --input NAME=FILE.npy ... --labels FILE.npy
 *                --loss cross_entropy|mse|l1|bce_with_logits
 *                --optimizer sgd|adam|adamw [--lr R] [--momentum M] [--nesterov]
 *                [--weight-decay W] [--clip-norm C]
 *                [--lr-schedule constant|step:SIZE:GAMMA|cosine:WARMUP]
 *                [--batch B] [--epochs E] [--shuffle SEED|--no-shuffle]
 *                [--output NAME] -o OUT
 *
 * The algorithm, exactly (the compiled trainer's generated main repeats it,
 * and tests/test_train.c checks that to_static training following it gives
 * the same losses and parameters):
 *
 *   1. MODEL is loaded twice: P, the inference Program written at the end,
 *      and T, which becomes the training Program: train semantics
 *      (dy_program_set_train_semantics: dropout and batch norm in training
 *      mode, running statistics updated), then dy_program_make_training on
 *      the output (the only fetch, or --output NAME). Its feeds: the model
 *      inputs, "label", "learning_rate".
 *   2. Every input and the labels have N samples along their first dim.
 *      Cross entropy takes i64 class indices in [0, C) (int32 .npy files
 *      read as i64) or f32 probabilities shaped like the output; the other
 *      losses f32 labels shaped like the output.
 *   3. dy_seed(SEED) (the runtime's generator, runtime/random.c:
 *      xoshiro256** seeded through splitmix64; SEED 0 without --shuffle).
 *      S = ceil(N / B) steps per epoch; step counts from 0 over the run.
 *   4. For epoch e = 1 .. E: the order is 0 .. N-1, shuffled (unless
 *      --no-shuffle) by dy_train_shuffle: for i = N-1 down to 1,
 *      j = dy_rand_u64() % (i + 1), swap order[i] and order[j]. Batch k
 *      (k = 0 .. S-1) is the samples order[k*B .. min((k+1)*B, N)) of every
 *      input and of the labels (the last batch may be short). Each step:
 *      lr = dy_lr_at(schedule, R, step) (cosine: total_steps = E * S,
 *      min_lr 0), then dy_program_train_step: one dy_rand_u64() per
 *      training dropout op of T in op order becomes its seed, and T runs
 *      once on (inputs, labels, lr). The epoch's loss is the mean of its S
 *      step losses; "epoch e loss L time T s" is printed on stdout (a
 *      progress bar goes to stderr only when stderr is a terminal).
 *   5. Every persistable var of P (parameters, running statistics) takes
 *      the value of T's var of the same name; P is written as
 *      OUT.dymodel + OUT.dyparams (eval semantics, as MODEL was).
 *
 * Any bad input is one line "dy2stc: <reason>" and exit 1 (usage: 2). The
 * options compile --train shares, and making the training Program, are in
 * cli_train.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char train_help[] =
    "usage: dy2stc train MODEL --input NAME=FILE.npy ... --labels FILE.npy\n"
    "                    --loss L --optimizer O -o OUT [options]\n"
    "Train the model on the static executor; write OUT.dymodel + OUT.dyparams,\n"
    "the inference model with the trained parameters.\n"
    "  --input NAME=FILE   an input's samples (.npy, first dim = samples)\n"
    "  --labels FILE       the labels (.npy, same number of samples)\n"
    "%s"
    "  --epochs E          passes over the data (default 1)\n"
    "  --shuffle SEED      shuffle each epoch from SEED (default 0)\n"
    "  --no-shuffle        keep the file order\n"
    "  --quiet, -q         no progress line within an epoch (one is shown when\n"
    "                      stderr is a terminal)\n"
    "  -o OUT              write OUT.dymodel + OUT.dyparams\n";

typedef struct {
  const char *model, *labels, *out;
  dy_cli_inputs ia;
  dy_cli_train_spec t;     /* the options compile --train shares */
  bool shuffle;
  bool quiet;              /* --quiet: no progress line */
  int64_t epochs;
  uint64_t seed;
} train_args;

/* Parse the arguments; returns 0 or the exit status of a usage error. */
static int parse_args(int argc, char **argv, train_args *a) {
  for (int i = 2; i < argc; i++) {
    const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (dy_cli_is_help(s)) {
      printf(train_help, dy_cli_train_help);
      return -1;
    }
    int to = dy_cli_train_option("train", argc, argv, &i, &a->t);
    if (to < 0)
      return 2;
    if (to > 0)
      continue;
    if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
      a->quiet = true;
      continue;
    }
    if (strcmp(s, "--no-shuffle") == 0) {
      a->shuffle = false;
      continue;
    }
    if (s[0] != '-') {
      if (a->model)
        return dy_cli_usage("train", "unexpected argument '%s'", s);
      a->model = s;
      continue;
    }
    if (!v)
      return dy_cli_usage("train", "unknown or incomplete option '%s'", s);
    i++;
    if (strcmp(s, "--input") == 0) {
      if (!dy_cli_add_input(&a->ia, v))
        return dy_cli_usage("train", "too many inputs (%s)", v);
    } else if (strcmp(s, "--labels") == 0) {
      a->labels = v;
    } else if (strcmp(s, "-o") == 0) {
      a->out = v;
    } else if (strcmp(s, "--epochs") == 0) {
      if (!dy_cli_positive(v, &a->epochs))
        return dy_cli_usage("train", "--epochs needs a positive integer, not '%s'", v);
    } else if (strcmp(s, "--shuffle") == 0) {
      char *end;
      unsigned long long seed = strtoull(v, &end, 10);
      if (!*v || *end || v[0] == '-')
        return dy_cli_usage("train", "--shuffle needs a seed (an integer >= 0), not '%s'", v);
      a->seed = seed;
      a->shuffle = true;
    } else {
      return dy_cli_usage("train", "unknown option '%s'", s);
    }
  }
  if (!a->model)
    return dy_cli_usage("train", "%s", "no model given");
  if (!a->ia.n)
    return dy_cli_usage("train", "%s", "no --input given");
  if (!a->labels)
    return dy_cli_usage("train", "%s", "no --labels given");
  int rc = dy_cli_train_finish("train", &a->t);
  if (rc)
    return rc;
  if (!a->out)
    return dy_cli_usage("train", "%s", "no -o OUT given");
  return 0;
}

/* Sample counts, batch dims, the labels' type and range. */
static dy_status check_data(const dy_program *t, dy_tensor *const *in, int n_in,
                            const dy_tensor *labels, const train_args *a,
                            const dy_type *pred, dy_error *err) {
  char ty[128], want[128];
  int64_t n = labels->type.rank ? labels->type.shape[0] : -1;
  if (n < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "labels %s: %s has no samples (the first dim is the sample dim)",
                        a->labels, dy_type_str(&labels->type, ty, sizeof ty));
  for (int i = 0; i < n_in; i++) {
    const dy_var *f = t->vars[t->feeds[i]];
    int64_t m = in[i]->type.rank ? in[i]->type.shape[0] : 0;
    if (m != n)
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                          "sample counts differ: input '%s' has %lld samples, "
                          "labels %s %lld", f->name, (long long)m, a->labels, (long long)n);
    if (f->type.rank < 1 || f->type.shape[0] >= 0)
      return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                          "input '%s' is %s: training needs a dynamic batch "
                          "(first) dim", f->name, dy_type_str(&f->type, ty, sizeof ty));
  }
  const dy_var *lf = t->vars[t->feeds[n_in]];   /* "label" */
  bool ok = lf->type.dtype == labels->type.dtype && lf->type.rank == labels->type.rank;
  for (int d = 1; ok && d < lf->type.rank; d++)
    ok = lf->type.shape[d] < 0 || lf->type.shape[d] == labels->type.shape[d];
  if (!ok)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "labels %s: %s does not fit %s of output %s: want %s",
                        a->labels, dy_type_str(&labels->type, ty, sizeof ty),
                        dy_loss_name(a->t.loss.kind),
                        dy_type_str(pred, (char[128]){0}, 128),
                        dy_type_str(&lf->type, want, sizeof want));
  if (a->t.loss.kind == DY_LOSS_CROSS_ENTROPY && labels->type.dtype == DY_I64) {
    int64_t c = pred->shape[1];
    const int64_t *y = labels->data;
    for (int64_t i = 0; i < dy_tensor_numel(labels); i++)
      if (y[i] < 0 || (c >= 0 && y[i] >= c))
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "labels %s: label %lld of sample %lld is out of range "
                            "[0, %lld) (the output's classes)", a->labels,
                            (long long)y[i], (long long)(i / (dy_tensor_numel(labels) / n)),
                            (long long)c);
  }
  return DY_OK;
}

/* Steps 3 and 4 of the header: the epochs over (in, labels). */
static dy_status run_epochs(dy_program *t, dy_tensor *const *in, int n_in,
                            dy_tensor *labels, const train_args *a, dy_error *err) {
  int64_t n = labels->type.shape[0], steps = (n + a->t.batch - 1) / a->t.batch;
  /* The step count (and the schedule's position in it) is exact in a
   * double up to 2^53; more would wrap or round. */
  if (steps > 0 && a->epochs > (INT64_C(1) << 53) / steps)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--epochs %lld: %lld epochs of %lld steps exceed 2^53 steps",
                        (long long)a->epochs, (long long)a->epochs, (long long)steps);
  dy_lr_schedule sched = a->t.sched;
  if (sched.kind == DY_LR_COSINE)
    sched.total_steps = a->epochs * steps;
  int64_t *order = malloc(sizeof *order * (size_t)n);
  if (!order)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_cli_progress pr;
  dy_cli_progress_init(&pr, "train", a->quiet);
  dy_seed(a->seed);
  dy_status s = DY_OK;
  int64_t step = 0;
  for (int64_t e = 1; e <= a->epochs && !s; e++) {
    double t0 = pr.t_phase, sum = 0;
    char phase[64];
    snprintf(phase, sizeof phase, "epoch %lld/%lld", (long long)e, (long long)a->epochs);
    if (a->shuffle)
      dy_train_shuffle(order, n);
    else
      for (int64_t i = 0; i < n; i++)
        order[i] = i;
    for (int64_t k = 0; k < steps && !s; k++, step++) {
      int64_t begin = k * a->t.batch, count = n - begin < a->t.batch ? n - begin : a->t.batch;
      dy_scope_begin();
      dy_tensor *x[DY_MAX_FEEDS];
      for (int i = 0; i < n_in; i++)
        x[i] = dy_train_batch(in[i], order, begin, count);
      dy_tensor *y = dy_train_batch(labels, order, begin, count);
      double loss = 0;
      if (dy_last_error()) {
        *err = *dy_last_error();
        s = err->status;
        dy_clear_error();
      } else {
        s = dy_program_train_step(t, x, n_in, y, dy_lr_at(&sched, a->t.opt.lr, step), &loss,
                                  err);
      }
      dy_scope_end();
      if (!s && !isfinite(loss))
        s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                         "epoch %lld step %lld: the loss is %g (lower --lr or "
                         "use --clip-norm)", (long long)e, (long long)k, loss);
      sum += loss;
      if (!s)
        dy_cli_progress_step(&pr, phase, k + 1, steps);
    }
    dy_cli_progress_done(&pr);
    if (!s)
      printf("epoch %lld loss %.4f time %.3f s\n", (long long)e, sum / (double)steps,
             pr.t_phase - t0);
    fflush(stdout);
  }
  free(order);
  return s;
}

/* Step 5: P's persistable vars from T's. */
static void copy_trained(dy_program *p, const dy_program *t) {
  for (int i = 0; i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    int k = v->persistable ? dy_program_find_var(t, v->name) : -1;
    if (k >= 0 && t->vars[k]->data && t->vars[k]->type.dtype == v->type.dtype &&
        dy_type_numel(&t->vars[k]->type) == dy_type_numel(&v->type))
      memcpy(v->data, t->vars[k]->data,
             (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype));
  }
}

int dy_cli_train(int argc, char **argv) {
  train_args a = {.epochs = 1, .shuffle = true};
  int rc = parse_args(argc, argv, &a);
  if (rc) {
    dy_cli_free_inputs(&a.ia);
    return rc < 0 ? 0 : rc;
  }
  dy_error err = {0};
  dy_program *p = NULL, *t = NULL;
  dy_tensor *in[DY_MAX_FEEDS] = {0}, *labels = NULL;
  int out = -1;
  dy_type pred = {0};
  dy_status s = dy_model_load_any(a.model, &p, &err);
  if (!s)
    s = dy_model_load_any(a.model, &t, &err);
  if (!s)
    s = dy_cli_load_inputs(p, &a.ia, true, in, &err);
  if (!s && ((s = dy_npy_read(a.labels, &labels, &err)) || (s = dy_cli_widen_i32(&labels, &err))))
    dy_error_prefix(&err, "labels");
  if (!s && (s = dy_cli_pick_output(t, a.t.output, &out, &err)) == DY_OK)
    pred = t->vars[out]->type;
  if (!s)
    s = dy_cli_make_training(t, &a.t, labels->type.dtype == DY_F32, &err);
  if (!s)
    s = check_data(t, in, p->n_feeds, labels, &a, &pred, &err);
  if (!s)
    s = run_epochs(t, in, p->n_feeds, labels, &a, &err);
  if (!s) {
    copy_trained(p, t);
    char path[4096];
    dy_cli_model_stem(a.out, path, sizeof path);
    if (!(s = dy_model_save(p, path, &err)))
      printf("wrote %s.dymodel and %s.dyparams\n", path, path);
  }
  for (int i = 0; i < DY_MAX_FEEDS; i++)
    dy_tensor_free(in[i]);
  dy_tensor_free(labels);
  dy_program_free(p);
  dy_program_free(t);
  dy_cli_free_inputs(&a.ia);
  return s ? dy_cli_fail(&err) : 0;
}
