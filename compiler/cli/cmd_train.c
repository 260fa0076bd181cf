/* cmd_train.c - `dy2stc train`: train a model on .npy data with the static
 * executor and write the trained inference model.
 *
 *   dy2stc train MODEL --input NAME=FILE.npy ... --labels FILE.npy
 *                --loss cross_entropy|mse|l1|bce_with_logits
 *                --optimizer sgd|adam|adamw [--lr R] [--momentum M] [--nesterov]
 *                [--weight-decay W] [--clip-norm C]
 *                [--lr-schedule constant|step:SIZE:GAMMA|cosine:WARMUP]
 *                [--batch B] [--epochs E] [--shuffle SEED|--no-shuffle]
 *                [--val-input NAME=FILE.npy ... --val-labels FILE.npy |
 *                 --val-split F] [--checkpoint DIR] [--resume DIR]
 *                [--output NAME] -o OUT
 *
 * The algorithm, exactly (the compiled trainer's generated main repeats it,
 * and tests/test_train.c checks that to_static training following it gives
 * the same losses and parameters):
 *
 *   1. MODEL is loaded twice (a C model, NET.c, traced as `dy2stc compile
 *      NET.c` traces it): P, the inference Program written at the end,
 *      and T, which becomes the training Program: train semantics
 *      (dy_program_set_train_semantics: dropout and batch norm in training
 *      mode, running statistics updated), then dy_program_make_training on
 *      the output (the only fetch, or --output NAME). Its feeds: the model
 *      inputs, "label", "learning_rate".
 *   2. Every input and the labels have N samples along their first dim.
 *      Cross entropy takes i64 class indices in [0, C) (int32 .npy files
 *      read as i64) or f32 probabilities shaped like the output; the other
 *      losses f32 labels shaped like the output. Every f32 value of the
 *      data is finite (a NaN or inf is an error naming the file, the
 *      sample and the element). --val-split F keeps the last floor(F * N)
 *      samples (at least 1, leaving at least 1) out of training as the
 *      validation set; --val-input/--val-labels give one instead.
 *   3. dy_seed(SEED) (the runtime's generator, runtime/random.c:
 *      xoshiro256** seeded through splitmix64; SEED 0 without --shuffle).
 *      S = ceil(N / B) steps per epoch; step counts from 0 over the run.
 *      B is --batch (at most N) or min(32, N); E * S must stay below 2^53,
 *      and a step schedule's largest rate a finite float
 *      (dy_cli_train_plan, which the compiled trainer repeats).
 *   4. For epoch e = 1 .. E: the order is 0 .. N-1, shuffled (unless
 *      --no-shuffle) by dy_train_shuffle: for i = N-1 down to 1,
 *      j = dy_rand_u64() % (i + 1), swap order[i] and order[j]. Batch k
 *      (k = 0 .. S-1) is the samples order[k*B .. min((k+1)*B, N)) of every
 *      input and of the labels (the last batch may be short). Each step:
 *      lr = dy_lr_at(schedule, R, step) (cosine: total_steps = E * S,
 *      min_lr 0), then dy_program_train_step: one dy_rand_u64() per
 *      training dropout op of T in op order becomes its seed, and T runs
 *      once on (inputs, labels, lr). A step whose loss is not finite, or
 *      after which a state tensor (parameters, optimizer moments, running
 *      statistics: what an in-place op writes) holds a NaN or inf, stops
 *      the run (exit 1, naming the epoch, step and tensor; a non-finite
 *      gradient shows there, through the update), and nothing is written
 *      but the checkpoints of the epochs before. The epoch's loss is the
 *      mean of its S step losses; "epoch e loss L time T s" is printed on
 *      stdout (a progress bar goes to stderr only when stderr is a
 *      terminal), followed with a validation set by " val loss V
 *      accuracy A%" (P of step 5 in eval semantics on it, batches of B;
 *      no accuracy for mse and l1). With --checkpoint DIR the state and
 *      the loop's position (cli_train_state.c) are written to DIR after
 *      every epoch. --resume DIR reads them back and goes on from the
 *      epoch after (the same batch, rate, schedule, seed and samples are
 *      required, and for a cosine schedule the same E): the run equals an
 *      uninterrupted one bit for bit.
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
    "the inference model with the trained parameters. MODEL: .dymodel, ONNX,\n"
    "Paddle, or a C model NET.c (traced as `dy2stc compile NET.c` traces it).\n"
    "  --input NAME=FILE   an input's samples (.npy, first dim = samples)\n"
    "  --labels FILE       the labels (.npy, same number of samples)\n"
    "%s"
    "  --epochs E          passes over the data (default 1)\n"
    "  --shuffle SEED      shuffle each epoch from SEED (default 0)\n"
    "  --no-shuffle        keep the file order\n"
    "  --val-input NAME=FILE, --val-labels FILE\n"
    "                      a validation set: its loss and accuracy after every epoch\n"
    "  --val-split F       validate on the last fraction F of the samples instead\n"
    "  --checkpoint DIR    write the state and the loop's position after every epoch\n"
    "  --resume DIR        go on from a checkpoint (dy2stc train's or a compiled\n"
    "                      trainer's), with the options it was made with\n"
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
  dy_cli_inputs va;        /* --val-input */
  const char *val_labels;
  double val_split;        /* 0: none */
  const char *checkpoint, *resume;
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
    } else if (strcmp(s, "--val-input") == 0) {
      if (!dy_cli_add_input(&a->va, v))
        return dy_cli_usage("train", "too many validation inputs (%s)", v);
    } else if (strcmp(s, "--val-labels") == 0) {
      a->val_labels = v;
    } else if (strcmp(s, "--val-split") == 0) {
      if (!dy_cli_double(v, &a->val_split) || !(a->val_split > 0 && a->val_split < 1))
        return dy_cli_usage("train", "--val-split needs a fraction in (0, 1), not '%s'", v);
    } else if (strcmp(s, "--checkpoint") == 0) {
      a->checkpoint = v;
    } else if (strcmp(s, "--resume") == 0) {
      a->resume = v;
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
  if (a->val_split > 0 && (a->va.n || a->val_labels))
    return dy_cli_usage("train", "%s", "--val-split or --val-input/--val-labels, not both");
  if (!a->va.n != !a->val_labels)
    return dy_cli_usage("train", "%s", "--val-input and --val-labels go together");
  int rc = dy_cli_train_finish("train", &a->t);
  if (rc)
    return rc;
  if (!a->out)
    return dy_cli_usage("train", "%s", "no -o OUT given");
  return 0;
}

/* Sample counts, batch dims, the labels' type and range, finite values;
 * lab names the labels' file. */
static dy_status check_data(const dy_program *t, dy_tensor *const *in, int n_in,
                            const dy_cli_inputs *ia, const dy_tensor *labels, const char *lab,
                            const train_args *a, const dy_type *pred, dy_error *err) {
  char ty[128], want[128];
  int64_t n = labels->type.rank ? labels->type.shape[0] : -1;
  if (n < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "labels %s: %s has no samples (the first dim is the sample dim)",
                        lab, dy_type_str(&labels->type, ty, sizeof ty));
  for (int i = 0; i < n_in; i++) {
    const dy_var *f = t->vars[t->feeds[i]];
    int64_t m = in[i]->type.rank ? in[i]->type.shape[0] : 0;
    if (m != n)
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                          "sample counts differ: input '%s' has %lld samples, "
                          "labels %s %lld", f->name, (long long)m, lab, (long long)n);
    if (f->type.rank < 1 || f->type.shape[0] >= 0)
      return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                          "input '%s' is %s: training needs a dynamic batch "
                          "(first) dim", f->name, dy_type_str(&f->type, ty, sizeof ty));
    const char *file = i < ia->n && !ia->name[i] ? ia->file[i] : "";
    for (int j = 0; j < ia->n; j++)
      file = ia->name[j] && strcmp(ia->name[j], f->name) == 0 ? ia->file[j] : file;
    char what[300];
    snprintf(what, sizeof what, "input '%s' (%s)", f->name, file);
    dy_status s = dy_cli_finite_data(in[i], what, err);
    if (s)
      return s;
  }
  const dy_var *lf = t->vars[t->feeds[n_in]];   /* "label" */
  bool ok = lf->type.dtype == labels->type.dtype && lf->type.rank == labels->type.rank;
  for (int d = 1; ok && d < lf->type.rank; d++)
    ok = lf->type.shape[d] < 0 || lf->type.shape[d] == labels->type.shape[d];
  if (!ok)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "labels %s: %s does not fit %s of output %s: want %s",
                        lab, dy_type_str(&labels->type, ty, sizeof ty),
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
                            "[0, %lld) (the output's classes)", lab,
                            (long long)y[i], (long long)(i / (dy_tensor_numel(labels) / n)),
                            (long long)c);
  }
  char what[300];
  snprintf(what, sizeof what, "labels %s", lab);
  return dy_cli_finite_data(labels, what, err);
}

/* What the loop works on. */
typedef struct {
  dy_program *p, *t;                      /* the inference model, the training Program */
  int n_in, fetch;                        /* inputs; the trained output among p's fetches */
  dy_tensor *in[DY_MAX_FEEDS], *labels;   /* the training samples */
  dy_tensor *vin[DY_MAX_FEEDS], *vlabels; /* the validation set, or NULL */
  dy_cli_state st;                        /* t's state tensors */
  dy_cli_train_loop loop;                 /* batch, steps, schedule */
  dy_cli_checkpoint pos;                  /* the position after the last epoch */
} train_run;

/* --val-split: the last floor(F * N) samples (at least 1, leaving 1)
 * become the validation set, the others stay the training set. */
static dy_status split_validation(train_run *r, double f, dy_error *err) {
  int64_t n = r->labels->type.shape[0], v = (int64_t)(f * (double)n);
  if (n < 2)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--val-split %g: %lld sample%s cannot be split", f, (long long)n,
                        n == 1 ? "" : "s");
  v = v < 1 ? 1 : v > n - 1 ? n - 1 : v;
  int64_t *order = malloc(sizeof *order * (size_t)n);
  if (!order)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < n; i++)
    order[i] = i;
  for (int i = 0; i <= r->n_in; i++) {
    dy_tensor **all = i < r->n_in ? &r->in[i] : &r->labels;
    dy_tensor **val = i < r->n_in ? &r->vin[i] : &r->vlabels;
    dy_tensor *head = dy_train_batch(*all, order, 0, n - v);
    *val = dy_train_batch(*all, order, n - v, v);
    dy_tensor_free(*all);
    *all = head;
  }
  free(order);
  if (dy_last_error()) {
    *err = *dy_last_error();
    dy_clear_error();
    return err->status;
  }
  return DY_OK;
}

/* --resume: the checkpoint read into T must be of this run's loop. */
static dy_status check_resume(const train_run *r, const train_args *a, dy_error *err) {
  const dy_cli_checkpoint *c = &r->pos;
  char sched[96];
  dy_cli_schedule_text(&r->loop.sched, sched, sizeof sched);
  const char *d = a->resume;
  if (c->samples != r->labels->type.shape[0])
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--resume %s: the checkpoint was trained on %lld samples, the data "
                        "has %lld", d, (long long)c->samples,
                        (long long)r->labels->type.shape[0]);
  if (c->batch != r->loop.batch)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--batch %lld: the checkpoint in %s was trained with --batch %lld",
                        (long long)r->loop.batch, d, (long long)c->batch);
  if (c->lr != a->t.opt.lr)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--lr %.17g: the checkpoint in %s was trained with --lr %.17g",
                        a->t.opt.lr, d, c->lr);
  if (strcmp(c->schedule, sched) != 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--lr-schedule %s: the checkpoint in %s was trained with %s", sched, d,
                        c->schedule);
  if (c->shuffle != a->shuffle || (a->shuffle && c->seed != a->seed))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--shuffle: the checkpoint in %s was trained with %s %llu", d,
                        c->shuffle ? "--shuffle" : "--no-shuffle",
                        (unsigned long long)c->seed);
  if (r->loop.sched.kind == DY_LR_COSINE && c->epochs != a->epochs)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--epochs %lld: the checkpoint's cosine schedule spans %lld epochs; "
                        "resume with --epochs %lld", (long long)a->epochs,
                        (long long)c->epochs, (long long)c->epochs);
  if (a->epochs <= c->epochs_done)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--epochs %lld: the checkpoint in %s has trained %lld epochs already",
                        (long long)a->epochs, d, (long long)c->epochs_done);
  if (c->steps != c->epochs_done * r->loop.steps)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--resume %s: %lld steps do not make %lld epochs of %lld steps", d,
                        (long long)c->steps, (long long)c->epochs_done,
                        (long long)r->loop.steps);
  return DY_OK;
}

/* One step of epoch e (k: its step in the epoch) on the batch at begin. */
static dy_status one_step(train_run *r, const int64_t *order, int64_t begin, int64_t count,
                          double lr, int64_t e, int64_t k, double *loss, dy_error *err) {
  dy_scope_begin();
  dy_tensor *x[DY_MAX_FEEDS];
  for (int i = 0; i < r->n_in; i++)
    x[i] = dy_train_batch(r->in[i], order, begin, count);
  dy_tensor *y = dy_train_batch(r->labels, order, begin, count);
  dy_status s;
  if (dy_last_error()) {
    *err = *dy_last_error();
    s = err->status;
    dy_clear_error();
  } else {
    s = dy_program_train_step(r->t, x, r->n_in, y, lr, loss, err);
    if (s)
      dy_cli_train_step_hint(err);
  }
  dy_scope_end();
  char where[96];
  snprintf(where, sizeof where, "epoch %lld step %lld", (long long)e, (long long)k);
  if (!s && !isfinite(*loss))
    s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                     "%s: the loss is %g (lower --lr or use --clip-norm); the last good state "
                     "on disk is kept", where, *loss);
  if (!s)
    s = dy_cli_finite_state(r->t, &r->st, where, err);
  return s;
}

/* Step 5's copy: P's persistable vars from T's. */
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

/* After epoch e: its line (with the validation set's loss and accuracy),
 * then the checkpoint. */
static dy_status end_epoch(train_run *r, const train_args *a, int64_t e, double mean,
                           double seconds, dy_error *err) {
  printf("epoch %lld loss %.4f time %.3f s", (long long)e, mean, seconds);
  dy_status s = DY_OK;
  if (r->vlabels) {
    double vl, acc;
    copy_trained(r->p, r->t);
    s = dy_cli_validate(r->p, r->fetch, r->vin, r->n_in, r->vlabels, a->t.loss.kind,
                        r->loop.batch, &vl, &acc, err);
    if (!s)
      printf(" val loss %.4f", vl);
    if (!s && acc >= 0)
      printf(" accuracy %.2f%%", acc);
  }
  printf("\n");
  fflush(stdout);
  r->pos.epochs_done = e;
  r->pos.steps = e * r->loop.steps;
  dy_rand_state_get(r->pos.rng);
  if (!s && a->checkpoint)
    s = dy_cli_checkpoint_write(a->checkpoint, r->t, &r->st, &r->pos, err);
  return s;
}

/* Steps 3 and 4 of the header: the epochs over the training samples, from
 * the epoch after the checkpoint's (0: the first). */
static dy_status run_epochs(train_run *r, const train_args *a, dy_error *err) {
  int64_t n = r->labels->type.shape[0], steps = r->loop.steps, batch = r->loop.batch;
  int64_t *order = malloc(sizeof *order * (size_t)n);
  if (!order)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_cli_progress pr;
  dy_cli_progress_init(&pr, "train", a->quiet);
  dy_status s = DY_OK;
  int64_t step = r->pos.steps;
  for (int64_t e = r->pos.epochs_done + 1; e <= a->epochs && !s; e++) {
    double t0 = pr.t_phase, sum = 0;
    char phase[64];
    snprintf(phase, sizeof phase, "epoch %lld/%lld", (long long)e, (long long)a->epochs);
    if (a->shuffle)
      dy_train_shuffle(order, n);
    else
      for (int64_t i = 0; i < n; i++)
        order[i] = i;
    for (int64_t k = 0; k < steps && !s; k++, step++) {
      int64_t begin = k * batch, count = n - begin < batch ? n - begin : batch;
      double loss = 0;
      s = one_step(r, order, begin, count, dy_lr_at(&r->loop.sched, a->t.opt.lr, step), e, k,
                   &loss, err);
      sum += loss;
      if (!s)
        dy_cli_progress_step(&pr, phase, k + 1, steps);
    }
    dy_cli_progress_done(&pr);
    if (!s)
      s = end_epoch(r, a, e, sum / (double)steps, pr.t_phase - t0, err);
  }
  free(order);
  return s;
}

/* The validation set of --val-input/--val-labels or --val-split. */
static dy_status load_validation(train_run *r, const train_args *a, const dy_type *pred,
                                 dy_error *err) {
  if (a->val_split > 0)
    return split_validation(r, a->val_split, err);
  if (!a->val_labels)
    return DY_OK;
  dy_status s = dy_cli_load_inputs(r->p, &a->va, r->vin, err);
  if (s)
    return dy_error_prefix(err, "%s", "--val-input");
  if ((s = dy_npy_read(a->val_labels, &r->vlabels, err)) ||
      (s = dy_tensor_widen_to(&r->vlabels, DY_I64, err)))
    return dy_error_prefix(err, "%s", "--val-labels");
  return check_data(r->t, r->vin, r->n_in, &a->va, r->vlabels, a->val_labels, a, pred, err);
}

/* Steps 1 to 3: the Programs, the data, the loop and where it starts. */
static dy_status prepare(train_run *r, train_args *a, dy_error *err) {
  dy_type pred = {0};
  int out = -1;
  /* a C model (NET.c) is traced as `dy2stc compile NET.c` traces it */
  dy_status s = dy_cli_load_model(a->model, NULL, NULL, 0, &r->p, err);
  if (!s)
    s = dy_cli_load_model(a->model, NULL, NULL, 0, &r->t, err);
  if (!s)
    r->n_in = r->p->n_feeds;
  if (!s)
    s = dy_cli_load_inputs(r->p, &a->ia, r->in, err);
  if (!s && ((s = dy_npy_read(a->labels, &r->labels, err)) ||
             (s = dy_tensor_widen_to(&r->labels, DY_I64, err))))
    dy_error_prefix(err, "%s", "labels");
  if (!s && (s = dy_cli_pick_output(r->t, a->t.output, &out, err)) == DY_OK)
    pred = r->t->vars[out]->type;
  for (int i = 0; !s && i < r->p->n_fetches; i++)
    if (strcmp(r->p->vars[r->p->fetches[i]]->name, r->t->vars[out]->name) == 0)
      r->fetch = i;
  if (!s)
    s = dy_cli_make_training(r->t, &a->t, r->labels->type.dtype == DY_F32, err);
  if (!s)
    s = check_data(r->t, r->in, r->n_in, &a->ia, r->labels, a->labels, a, &pred, err);
  if (!s)
    s = load_validation(r, a, &pred, err);
  if (!s)
    s = dy_cli_train_plan(&a->t, r->labels->type.shape[0], a->epochs, &r->loop, err);
  if (!s)
    s = dy_cli_state_init(&r->st, r->t, err);
  if (s)
    return s;
  dy_seed(a->seed);
  r->pos = (dy_cli_checkpoint){.epochs = a->epochs, .samples = r->labels->type.shape[0],
                               .batch = r->loop.batch, .lr = a->t.opt.lr,
                               .shuffle = a->shuffle, .seed = a->seed};
  dy_cli_schedule_text(&r->loop.sched, r->pos.schedule, sizeof r->pos.schedule);
  if (!a->resume)
    return DY_OK;
  dy_cli_checkpoint want = r->pos;
  if ((s = dy_cli_checkpoint_read(a->resume, r->t, &r->st, &r->pos, err)) ||
      (s = check_resume(r, a, err)))
    return s;
  dy_rand_state_set(r->pos.rng);
  r->pos.epochs = want.epochs;
  return DY_OK;
}

int dy_cli_train(int argc, char **argv) {
  train_args a = {.epochs = 1, .shuffle = true};
  int rc = parse_args(argc, argv, &a);
  if (rc) {
    dy_cli_free_inputs(&a.ia);
    dy_cli_free_inputs(&a.va);
    return rc < 0 ? 0 : rc;
  }
  dy_error err = {0};
  train_run r = {0};
  dy_status s = prepare(&r, &a, &err);
  if (!s)
    s = run_epochs(&r, &a, &err);
  if (!s) {
    copy_trained(r.p, r.t);
    char path[4096];
    dy_cli_model_stem(a.out, path, sizeof path);
    if (!(s = dy_model_save(r.p, path, &err)))
      printf("wrote %s.dymodel and %s.dyparams\n", path, path);
  }
  for (int i = 0; i < DY_MAX_FEEDS; i++) {
    dy_tensor_free(r.in[i]);
    dy_tensor_free(r.vin[i]);
  }
  dy_tensor_free(r.labels);
  dy_tensor_free(r.vlabels);
  dy_cli_state_free(&r.st);
  dy_program_free(r.p);
  dy_program_free(r.t);
  dy_cli_free_inputs(&a.ia);
  dy_cli_free_inputs(&a.va);
  return s ? dy_cli_fail(&err) : 0;
}
