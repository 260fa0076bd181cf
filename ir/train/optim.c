/* optim.c - optimizers in the IR: names, learning-rate schedules, the
 * optimizer's state, and the update written once against the builder of
 * dy_grad.h (dy_optimizer_build), so that the Program (through
 * dy_program_append_optimizer), the eager optimizer (runtime/optim.c,
 * through the eager builder) and the generated C run the same ops, bit
 * for bit.
 *
 * The update ops are the training family (ops_train.def): in place on the
 * parameter and its state. Defaults: betas 0 mean 0.9 and 0.999, epsilon
 * 0 means 1e-8 (dy_optimizer_spec's contract in dy_train.h).
 *
 * Learning-rate schedules (dy_lr_at), with lr the base rate and t the
 * 0-based step:
 *
 *   constant  lr
 *   step      lr * gamma^floor(t / step_size)          (PyTorch's StepLR)
 *   cosine    t < W:  lr * t / W                       (linear warm-up from 0)
 *             W <= t < T:  min_lr + (lr - min_lr) * (1 + cos(pi * (t - W)
 *                          / (T - W))) / 2             (CosineAnnealingLR
 *                                                       with T_max = T - W)
 *             t >= T:  min_lr
 *   with W = warmup_steps and T = total_steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

static const char *const opt_names[] = {"sgd", "adam", "adamw"};

const char *dy_opt_name(dy_opt_kind k) {
  return (unsigned)k < sizeof opt_names / sizeof opt_names[0] ? opt_names[k] : NULL;
}

bool dy_opt_from_name(const char *s, dy_opt_kind *out) {
  for (unsigned i = 0; s && i < sizeof opt_names / sizeof opt_names[0]; i++)
    if (strcmp(s, opt_names[i]) == 0) {
      *out = (dy_opt_kind)i;
      return true;
    }
  return false;
}

double dy_lr_at(const dy_lr_schedule *s, double lr, int64_t step) {
  if (!s || step < 0)
    return lr;
  switch (s->kind) {
  case DY_LR_STEP:
    return s->step_size > 0 ? lr * pow(s->gamma, (double)(step / s->step_size)) : lr;
  case DY_LR_COSINE: {
    int64_t w = s->warmup_steps > 0 ? s->warmup_steps : 0, t = s->total_steps;
    if (step < w)
      return lr * (double)step / (double)w;
    if (step >= t || t <= w)
      return step >= t ? s->min_lr : lr;
    const double pi = 3.14159265358979323846;
    double progress = (double)(step - w) / (double)(t - w);
    return s->min_lr + (lr - s->min_lr) * (1.0 + cos(pi * progress)) / 2.0;
  }
  default:
    return lr;
  }
}

/* ---- the state ---- */

static double beta1_of(const dy_optimizer_spec *o) { return o->beta1 ? o->beta1 : 0.9; }
static double beta2_of(const dy_optimizer_spec *o) { return o->beta2 ? o->beta2 : 0.999; }
static double eps_of(const dy_optimizer_spec *o) { return o->epsilon ? o->epsilon : 1e-8; }

static const char *const adam_state[] = {"moment1", "moment2", "beta1_pow", "beta2_pow"};

int dy_optimizer_state_count(const dy_optimizer_spec *opt) {
  if (opt->kind == DY_OPT_SGD)
    return opt->momentum > 0 ? 1 : 0;
  return 4;
}

const char *dy_optimizer_state_name(const dy_optimizer_spec *opt, int i) {
  if (i < 0 || i >= dy_optimizer_state_count(opt))
    return NULL;
  return opt->kind == DY_OPT_SGD ? "velocity" : adam_state[i];
}

double dy_optimizer_state_init(const dy_optimizer_spec *opt, int i) {
  return opt->kind != DY_OPT_SGD && i >= 2 ? 1.0 : 0.0;
}

dy_type dy_optimizer_state_type(const dy_optimizer_spec *opt, int i,
                                const dy_type *param) {
  if (opt->kind != DY_OPT_SGD && i >= 2)
    return (dy_type){.dtype = DY_F32, .rank = 1, .shape = {1}};
  return *param;
}

dy_status dy_optimizer_check(const dy_optimizer_spec *o, dy_error *err) {
  const char *bad = NULL;
  if (!dy_opt_name(o->kind))
    bad = "kind is not an optimizer";
  else if (!(o->lr >= 0) || !isfinite(o->lr))
    bad = "lr must be finite and >= 0";
  else if (!(o->weight_decay >= 0) || !isfinite(o->weight_decay))
    bad = "weight_decay must be finite and >= 0";
  else if (!(o->clip_norm >= 0) || !isfinite(o->clip_norm))
    bad = "clip_norm must be finite and >= 0 (0: no clipping)";
  else if (o->kind == DY_OPT_SGD && (!(o->momentum >= 0) || !(o->momentum < 1)))
    bad = "momentum must be in [0, 1)";
  else if (o->kind == DY_OPT_SGD && o->nesterov && o->momentum <= 0)
    bad = "nesterov needs momentum > 0";
  else if (o->kind != DY_OPT_SGD &&
           (!(beta1_of(o) > 0 && beta1_of(o) < 1) || !(beta2_of(o) > 0 && beta2_of(o) < 1)))
    bad = "beta1 and beta2 must be in (0, 1)";
  else if (o->kind != DY_OPT_SGD && !(eps_of(o) > 0 && isfinite(eps_of(o))))
    bad = "epsilon must be finite and > 0";
  if (bad)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "optimizer %s: %s",
                        dy_opt_name(o->kind) ? dy_opt_name(o->kind) : "?", bad);
  return DY_OK;
}

/* ---- the update ---- */

/* Record an error in b (the first one wins); -1. */
static int fail(dy_gb *b, dy_status s, const char *msg, const char *what) {
  if (!b->err->status)
    dy_error_set(b->err, s, "optimizer: %s%s", msg, what);
  return -1;
}

/* g_i *= clip / max(norm, clip) over the global norm of every gradient. */
static void clip_by_global_norm(dy_gb *b, double clip, int *g, int n) {
  int total = -1;
  for (int i = 0; i < n; i++) {
    if (g[i] < 0)
      continue;
    int sq = dy_gb_reduce_sum(b, dy_gb_mul(b, g[i], g[i]), NULL, 0, false);
    total = total < 0 ? sq : dy_gb_add(b, total, sq);
  }
  if (total < 0)
    return; /* no gradient at all */
  int norm = dy_gb_op1(b, DY_OP_SQRT, total, NULL, 0);
  int c = dy_gb_const(b, clip);
  int factor = dy_gb_div(b, c, dy_gb_op(b, DY_OP_MAXIMUM, (const int[]){norm, c}, 2, NULL, 0));
  for (int i = 0; i < n; i++)
    if (g[i] >= 0)
      g[i] = dy_gb_mul(b, g[i], factor);
}

/* The update op of one parameter. */
static int update(dy_gb *b, const dy_optimizer_spec *o, int param, int grad,
                  const int *state, int lr) {
  switch (o->kind) {
  case DY_OPT_SGD:
    if (o->momentum > 0) {
      dy_attr a[DY_MOMENTUM_NATTRS];
      int n_a = dy_momentum_attrs_put(&(dy_momentum_attrs){
          .given = DY_GIVEN_ALL, .mu = o->momentum, .use_nesterov = o->nesterov,
          .weight_decay = o->weight_decay}, a);
      return dy_gb_op(b, DY_OP_MOMENTUM, (const int[]){param, state[0], grad, lr}, 4, a, n_a);
    } else {
      dy_attr a[DY_SGD_NATTRS];
      int n_a = dy_sgd_attrs_put(&(dy_sgd_attrs){
          .given = DY_GIVEN_ALL, .weight_decay = o->weight_decay}, a);
      return dy_gb_op(b, DY_OP_SGD, (const int[]){param, grad, lr}, 3, a, n_a);
    }
  case DY_OPT_ADAM:
  case DY_OPT_ADAMW: {
    bool w = o->kind == DY_OPT_ADAMW;
    dy_attr a[DY_ADAM_NATTRS];
    int n = w ? dy_adamw_attrs_put(&(dy_adamw_attrs){.given = DY_GIVEN_ALL,
                                                     .beta1 = beta1_of(o), .beta2 = beta2_of(o),
                                                     .epsilon = eps_of(o),
                                                     .coeff = o->weight_decay}, a)
              : dy_adam_attrs_put(&(dy_adam_attrs){.given = DY_GIVEN_ALL,
                                                   .beta1 = beta1_of(o), .beta2 = beta2_of(o),
                                                   .epsilon = eps_of(o),
                                                   .weight_decay = o->weight_decay}, a);
    const int in[] = {param, state[0], state[1], state[2], state[3], grad, lr};
    return dy_gb_op(b, w ? DY_OP_ADAMW : DY_OP_ADAM, in, 7, a, n);
  }
  }
  return fail(b, DY_STATUS_INVALID_ARGUMENT, "unknown kind", "");
}

int dy_optimizer_build(dy_gb *b, const dy_optimizer_spec *opt, const int *params,
                       const int *grads, int n, const int *const *state, int lr) {
  if (b->err->status)
    return -1;
  if (dy_optimizer_check(opt, b->err))
    return -1;
  if (n < 0 || lr < 0)
    return fail(b, DY_STATUS_INVALID_ARGUMENT, "no learning rate or a negative count", "");
  if (dy_optimizer_state_count(opt) > 0 && n > 0 && !state)
    return fail(b, DY_STATUS_INVALID_ARGUMENT, "no state for ", dy_opt_name(opt->kind));
  int *g = malloc(sizeof(int) * (size_t)(n + 1));
  if (!g)
    return fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory", "");
  for (int i = 0; i < n; i++)
    g[i] = grads[i];
  if (opt->clip_norm > 0)
    clip_by_global_norm(b, opt->clip_norm, g, n);
  for (int i = 0; i < n && !b->err->status; i++)
    if (g[i] >= 0)
      update(b, opt, params[i], g[i], state ? state[i] : NULL, lr);
  free(g);
  return b->err->status ? -1 : 0;
}

/* ---- the Program ---- */

/* The "learning_rate" feed (rank-0 f32), created if absent. */
static int lr_feed(dy_program *p, dy_error *err) {
  int v = dy_program_find_var(p, "learning_rate");
  dy_type t = {.dtype = DY_F32, .rank = 0};
  if (v >= 0) {
    const dy_var *lv = p->vars[v];
    if (lv->feed_index < 0 || !dy_type_equal(&lv->type, &t)) {
      dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                   "optimizer: 'learning_rate' exists but is not a rank-0 f32 feed");
      return -1;
    }
    return v;
  }
  v = dy_program_add_var(p, "learning_rate", &t);
  if (v < 0 || dy_program_add_feed(p, v, err)) {
    if (!err->status)
      dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "optimizer: out of memory");
    return -1;
  }
  return v;
}

/* Make state var "<param>@<name>" of type t filled with v. */
static int state_var(dy_program *p, const dy_var *param, const char *name,
                     const dy_type *t, double v, dy_error *err) {
  char nm[512];
  snprintf(nm, sizeof nm, "%s@%s", param->name, name);
  if (dy_program_find_var(p, nm) >= 0) {
    dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                 "optimizer: state var '%s' exists already (an optimizer appended twice?)", nm);
    return -1;
  }
  int id = dy_program_add_var(p, nm, t);
  int64_t n = dy_type_numel(t);
  float *data = id >= 0 ? dy_program_alloc(p, sizeof(float) * (size_t)(n ? n : 1)) : NULL;
  if (!data) {
    dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "optimizer: out of memory");
    return -1;
  }
  for (int64_t k = 0; k < n; k++)
    data[k] = (float)v;
  if (dy_program_set_data(p, id, data, sizeof(float) * (size_t)n, err))
    return -1;
  return id;
}

dy_status dy_program_append_optimizer(dy_program *p, const dy_optimizer_spec *opt,
                                      const int *params, const int *grads, int n,
                                      dy_error *err) {
  dy_status s = dy_optimizer_check(opt, err);
  if (s)
    return s;
  int ns = dy_optimizer_state_count(opt);
  int lr = lr_feed(p, err);
  if (lr < 0)
    return err->status;
  int(*st)[DY_OPT_MAX_STATE] = malloc(sizeof *st * (size_t)(n + 1));
  const int **rows = malloc(sizeof *rows * (size_t)(n + 1));
  if (!st || !rows) {
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "optimizer: out of memory");
    goto out;
  }
  for (int i = 0; i < n && !s; i++) {
    rows[i] = st[i];
    if (grads[i] < 0)
      continue;
    if (params[i] < 0 || params[i] >= p->n_vars || grads[i] >= p->n_vars) {
      s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                       "optimizer: parameter %d has a bad var id", i);
      break;
    }
    const dy_var *pv = p->vars[params[i]];
    if (!pv->persistable || pv->type.dtype != DY_F32) {
      s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                       "optimizer: '%s' is not a persistable f32 parameter", pv->name);
      break;
    }
    for (int j = 0; j < ns && !s; j++) {
      dy_type t = dy_optimizer_state_type(opt, j, &pv->type);
      if ((st[i][j] = state_var(p, pv, dy_optimizer_state_name(opt, j), &t,
                                dy_optimizer_state_init(opt, j), err)) < 0)
        s = err->status;
    }
  }
  if (!s) {
    dy_gb b;
    dy_gb_program_state ps;
    dy_gb_program(&b, &ps, p, 0, "optim@", err);
    dy_optimizer_build(&b, opt, params, grads, n, rows, lr);
    s = err->status;
  }
out:
  free(st);
  free(rows);
  return s;
}
