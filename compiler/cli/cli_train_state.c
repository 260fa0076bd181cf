/* cli_train_state.c - what `dy2stc train` keeps and checks around its loop
 * (cli.h): the training data and the state must be finite, the state
 * (every persistable var an in-place op writes: parameters, optimizer
 * moments, running statistics) goes to a checkpoint directory and comes
 * back from one, and a validation set is scored between epochs.
 *
 * A checkpoint is the compiled trainer's state directory: DIR/<name>.npy
 * per state tensor (names made file-safe as dy_safe_file_name does) and
 * DIR/checkpoint.txt, the loop's position, written last:
 *
 *   dy2stc checkpoint 1
 *   epochs_done E      epochs trained
 *   epochs P           the epochs the run was planned for (cosine's span)
 *   samples N          training samples
 *   batch B
 *   steps S            steps done (E * ceil(N / B))
 *   lr R               the base rate, %.17g
 *   schedule T         constant | step:SIZE:GAMMA | cosine:WARMUP (GAMMA %.17g)
 *   shuffle 0|1
 *   seed X
 *   rng A B C D        the generator's state after epoch E (hex)
 *
 * so either trainer resumes the other's. Every file is written whole or
 * not at all (a temporary, then a rename). Calls below it: cli_inputs.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* f32 data of a tensor: the index of its first non-finite element, or -1. */
static int64_t first_non_finite(const float *v, int64_t n) {
  /* an exponent of all ones is inf or nan: one pass of integer ops (which
   * vectorise without -ffast-math), then the search only on failure */
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
  }
  if (!bad)
    return -1;
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return i;
  return -1;
}

dy_status dy_cli_finite_data(const dy_tensor *t, const char *what, dy_error *err) {
  if (t->type.dtype != DY_F32)
    return DY_OK;
  int64_t n = dy_tensor_numel(t), k = first_non_finite(t->data, n);
  if (k < 0)
    return DY_OK;
  int64_t row = t->type.rank && t->type.shape[0] ? n / t->type.shape[0] : 1;
  return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                      "%s: element %lld of sample %lld is %g: training data must be finite",
                      what, (long long)(k % row), (long long)(k / row),
                      (double)((const float *)t->data)[k]);
}

dy_status dy_cli_state_init(dy_cli_state *st, const dy_program *t, dy_error *err) {
  st->n = 0;
  st->vars = calloc((size_t)t->n_vars + 1, sizeof *st->vars);
  bool *is = calloc((size_t)t->n_vars + 1, 1);
  if (!st->vars || !is) {
    free(is);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int b = 0; b < t->n_blocks; b++)
    for (int k = 0; k < t->blocks[b]->n_ops; k++) {
      const dy_op *op = t->blocks[b]->ops[k];
      for (int o = 0; dy_op_has(op, DY_OPF_INPLACE) && o < op->n_outputs; o++)
        if (op->outputs[o] >= 0 && t->vars[op->outputs[o]]->persistable)
          is[op->outputs[o]] = true;
    }
  for (int i = 0; i < t->n_vars; i++)
    if (is[i] && t->vars[i]->data)
      st->vars[st->n++] = i;
  free(is);
  return DY_OK;
}

void dy_cli_state_free(dy_cli_state *st) {
  free(st->vars);
  st->vars = NULL;
  st->n = 0;
}

dy_status dy_cli_finite_state(const dy_program *t, const dy_cli_state *st, const char *where,
                              dy_error *err) {
  for (int i = 0; i < st->n; i++) {
    const dy_var *v = t->vars[st->vars[i]];
    if (v->type.dtype != DY_F32)
      continue;
    int64_t k = first_non_finite(v->data, dy_type_numel(&v->type));
    if (k >= 0)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "%s: '%s' is %g (element %lld) after the step: a gradient or the "
                          "update is not finite (lower --lr or use --clip-norm); the last good "
                          "state on disk is kept",
                          where, v->name, (double)((const float *)v->data)[k], (long long)k);
  }
  return DY_OK;
}

void dy_cli_schedule_text(const dy_lr_schedule *s, char *buf, size_t n) {
  if (s->kind == DY_LR_STEP)
    snprintf(buf, n, "step:%lld:%.17g", (long long)s->step_size, s->gamma);
  else if (s->kind == DY_LR_COSINE)
    snprintf(buf, n, "cosine:%lld", (long long)s->warmup_steps);
  else
    snprintf(buf, n, "constant");
}

/* DIR/<safe name>.npy of var v; false when too long. */
static bool state_path(const char *dir, const char *name, char *path, size_t n) {
  char base[512];
  dy_safe_file_name(name, base, sizeof base);
  return strlen(name) < sizeof base && snprintf(path, n, "%s/%s.npy", dir, base) < (int)n;
}

dy_status dy_cli_checkpoint_write(const char *dir, const dy_program *t, const dy_cli_state *st,
                                  const dy_cli_checkpoint *c, dy_error *err) {
  dy_status ds = dy_cli_ensure_dir(dir, err);
  if (ds)
    return dy_error_prefix(err, "%s", "checkpoint");
  char path[4096];
  for (int i = 0; i < st->n; i++) {
    const dy_var *v = t->vars[st->vars[i]];
    if (!state_path(dir, v->name, path, sizeof path))
      return dy_error_set(err, DY_STATUS_IO, "checkpoint %.200s: the path of '%.200s' is "
                          "too long", dir, v->name);
    dy_tensor *x = dy_tensor_from_data(v->type.dtype, v->type.rank, v->type.shape, v->data);
    dy_status s = x ? dy_npy_write(path, x, err)
                    : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    dy_tensor_free(x);
    if (s)
      return s;
  }
  char text[1024];
  int len = snprintf(text, sizeof text,
                     "dy2stc checkpoint 1\nepochs_done %lld\nepochs %lld\nsamples %lld\n"
                     "batch %lld\nsteps %lld\nlr %.17g\nschedule %s\nshuffle %d\n"
                     "seed %" PRIu64 "\nrng %016" PRIx64 " %016" PRIx64 " %016" PRIx64
                     " %016" PRIx64 "\n",
                     (long long)c->epochs_done, (long long)c->epochs, (long long)c->samples,
                     (long long)c->batch, (long long)c->steps, c->lr, c->schedule, c->shuffle,
                     c->seed, c->rng[0], c->rng[1], c->rng[2], c->rng[3]);
  snprintf(path, sizeof path, "%s/checkpoint.txt", dir);
  return dy_write_file_atomic(path, text, (size_t)len, err);
}

/* The value of "key " in the checkpoint text, or NULL. */
static const char *field(const char *text, const char *key) {
  size_t n = strlen(key);
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
    if (strncmp(s, key, n) == 0 && s[n] == ' ')
      return s + n + 1;
  return NULL;
}

static dy_status read_position(const char *path, dy_cli_checkpoint *c, dy_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return dy_error_set(err, DY_STATUS_IO, "--resume: %s: %s", path, strerror(errno));
  char text[2048];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  const char *v[11] = {field(text, "epochs_done"), field(text, "epochs"),
                       field(text, "samples"),     field(text, "batch"),
                       field(text, "steps"),       field(text, "lr"),
                       field(text, "schedule"),    field(text, "shuffle"),
                       field(text, "seed"),        field(text, "rng"),
                       strncmp(text, "dy2stc checkpoint 1\n", 20) == 0 ? text : NULL};
  long long ed = 0, ep = 0, sa = 0, ba = 0, stp = 0;
  dy_cli_checkpoint r = {0};
  int ok = 1;
  for (int i = 0; i < 11; i++)
    ok &= v[i] != NULL;
  ok = ok && sscanf(v[0], "%lld", &ed) == 1 && sscanf(v[1], "%lld", &ep) == 1 &&
       sscanf(v[2], "%lld", &sa) == 1 && sscanf(v[3], "%lld", &ba) == 1 &&
       sscanf(v[4], "%lld", &stp) == 1 && sscanf(v[5], "%lf", &r.lr) == 1 &&
       sscanf(v[6], "%95s", r.schedule) == 1 && sscanf(v[7], "%d", &r.shuffle) == 1 &&
       sscanf(v[8], "%" SCNu64, &r.seed) == 1 &&
       sscanf(v[9], "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &r.rng[0], &r.rng[1],
              &r.rng[2], &r.rng[3]) == 4;
  if (!ok || ed < 1 || ba < 1 || sa < 1 || stp < 0 || ep < ed)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--resume: %s is not a dy2stc checkpoint (version 1)", path);
  r.epochs_done = ed;
  r.epochs = ep;
  r.samples = sa;
  r.batch = ba;
  r.steps = stp;
  *c = r;
  return DY_OK;
}

dy_status dy_cli_checkpoint_read(const char *dir, dy_program *t, const dy_cli_state *st,
                                 dy_cli_checkpoint *c, dy_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/checkpoint.txt", dir);
  dy_status s = read_position(path, c, err);
  for (int i = 0; !s && i < st->n; i++) {
    const dy_var *v = t->vars[st->vars[i]];
    if (!state_path(dir, v->name, path, sizeof path))
      return dy_error_set(err, DY_STATUS_IO, "--resume %.200s: the path of '%.200s' is too "
                          "long", dir, v->name);
    dy_tensor *x = NULL;
    char got[128], want[128];
    if ((s = dy_npy_read(path, &x, err)))
      dy_error_prefix(err, "%s", "--resume");
    else if (!dy_type_equal(&x->type, &v->type))
      s = dy_error_set(err, DY_STATUS_SHAPE_MISMATCH, "--resume: %s is %s, but '%s' is %s",
                       path, dy_type_str(&x->type, got, sizeof got), v->name,
                       dy_type_str(&v->type, want, sizeof want));
    else
      s = dy_program_set_data(t, st->vars[i], x->data, x->nbytes, err);
    dy_tensor_free(x);
  }
  return s;
}

/* Sums of a batch's loss terms and hits into acc (terms, hits, count). */
typedef struct {
  double loss, hits;
  int64_t terms;
} val_sums;

static void score_cross_entropy(const dy_tensor *out, const dy_tensor *y, val_sums *v) {
  int64_t n = out->type.shape[0], c = out->type.shape[1];
  int64_t inner = n && c ? dy_tensor_numel(out) / (n * c) : 0;
  const float *x = out->data;
  bool hard = y->type.dtype == DY_I64;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < inner; j++) {
      const float *row = x + i * c * inner + j;
      int64_t best = 0, want = 0;
      double mx = row[0], sum = 0, l = 0;
      for (int64_t k = 1; k < c; k++)
        if (row[k * inner] > mx)
          mx = row[k * inner], best = k;
      for (int64_t k = 0; k < c; k++)
        sum += exp(row[k * inner] - mx);
      double lse = mx + log(sum);
      if (hard) {
        want = ((const int64_t *)y->data)[i * inner + j];
        l = want >= 0 && want < c ? lse - row[want * inner] : NAN;
      } else {
        const float *p = (const float *)y->data + i * c * inner + j;
        for (int64_t k = 0; k < c; k++) {
          l -= p[k * inner] * (row[k * inner] - lse);
          if (p[k * inner] > p[want * inner])
            want = k;
        }
      }
      v->loss += l;
      v->hits += best == want;
      v->terms++;
    }
}

static void score_elementwise(const dy_tensor *out, const dy_tensor *y, dy_loss_kind kind,
                              val_sums *v) {
  const float *x = out->data, *z = y->data;
  for (int64_t i = 0; i < dy_tensor_numel(out); i++) {
    double d = (double)x[i] - z[i];
    if (kind == DY_LOSS_MSE)
      v->loss += d * d;
    else if (kind == DY_LOSS_L1)
      v->loss += fabs(d);
    else /* bce_with_logits, the stable form */
      v->loss += fmax(x[i], 0) - (double)x[i] * z[i] + log1p(exp(-fabs((double)x[i])));
    v->hits += (x[i] > 0) == (z[i] > 0.5f);
    v->terms++;
  }
}

dy_status dy_cli_validate(const dy_program *p, int fetch, dy_tensor *const *in, int n_in,
                          const dy_tensor *labels, dy_loss_kind loss, int64_t batch,
                          double *loss_out, double *acc_out, dy_error *err) {
  int64_t n = labels->type.shape[0];
  int64_t *order = malloc(sizeof *order * (size_t)n);
  dy_tensor **outs = calloc((size_t)p->n_fetches + 1, sizeof *outs);
  dy_status s = order && outs ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY,
                                                      "out of memory");
  for (int64_t i = 0; !s && i < n; i++)
    order[i] = i;
  val_sums v = {0};
  for (int64_t begin = 0; !s && begin < n; begin += batch) {
    int64_t count = n - begin < batch ? n - begin : batch;
    dy_scope_begin();
    dy_tensor *x[DY_MAX_FEEDS];
    for (int i = 0; i < n_in; i++)
      x[i] = dy_train_batch(in[i], order, begin, count);
    dy_tensor *y = dy_train_batch(labels, order, begin, count);
    if (dy_last_error()) {
      *err = *dy_last_error();
      s = err->status;
      dy_clear_error();
    } else if (!(s = dy_executor_run(p, x, n_in, outs, p->n_fetches, err))) {
      const dy_tensor *o = outs[fetch];
      if (o->type.dtype != DY_F32 || dy_tensor_numel(o) % count)
        s = dy_error_set(err, DY_STATUS_UNSUPPORTED, "validation: the output is not f32 "
                         "samples");
      else if (loss == DY_LOSS_CROSS_ENTROPY)
        score_cross_entropy(o, y, &v);
      else
        score_elementwise(o, y, loss, &v);
    }
    for (int i = 0; i < p->n_fetches; i++) {
      dy_tensor_free(outs[i]);
      outs[i] = NULL;
    }
    dy_scope_end();
  }
  free(order);
  free(outs);
  if (s)
    return dy_error_prefix(err, "%s", "validation");
  *loss_out = v.terms ? v.loss / (double)v.terms : NAN;
  *acc_out = loss == DY_LOSS_MSE || loss == DY_LOSS_L1 || !v.terms
                 ? -1 : 100.0 * v.hits / (double)v.terms;
  return DY_OK;
}
