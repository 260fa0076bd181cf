/* cli_train.c - what `dy2stc train` and `dy2stc compile --train` share
 * (cli.h): the training options (loss, optimizer, rate and schedule,
 * batch, the output to train), their --help lines, and the training
 * Program made from a model (train semantics, then
 * dy_program_make_training on the chosen output).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char dy_cli_train_help[] =
    "  --loss L            cross_entropy | mse | l1 | bce_with_logits\n"
    "  --optimizer O       sgd | adam | adamw\n"
    "  --lr R              base learning rate (default 0.01 for sgd, 0.001 else)\n"
    "  --momentum M        sgd momentum (default 0)\n"
    "  --nesterov          Nesterov momentum (sgd, M > 0)\n"
    "  --weight-decay W    L2 (sgd, adam) or decoupled (adamw; default 0.01)\n"
    "  --clip-norm C       clip gradients by global L2 norm C\n"
    "  --lr-schedule S     constant | step:SIZE:GAMMA | cosine:WARMUP (default constant)\n"
    "  --batch B           samples per step (default 32; the last batch may be short)\n"
    "  --output NAME       the model output to train (default: the only one)\n"
    "  --max-iterations N  trips a while loop without a bound of its own may run:\n"
    "                      the rows of its gradient's trip stack (default 256)\n";

static bool parse_schedule(const char *s, dy_lr_schedule *out) {
  char *end;
  if (strcmp(s, "constant") == 0) {
    *out = (dy_lr_schedule){.kind = DY_LR_CONSTANT};
    return true;
  }
  if (strncmp(s, "step:", 5) == 0) {
    long long size = strtoll(s + 5, &end, 10);
    if (end == s + 5 || *end != ':' || size < 1)
      return false;
    const char *g = end + 1;
    double gamma = strtod(g, &end);
    if (end == g || *end || !(gamma > 0) || !(gamma <= FLT_MAX))
      return false;
    *out = (dy_lr_schedule){.kind = DY_LR_STEP, .step_size = size, .gamma = gamma};
    return true;
  }
  if (strncmp(s, "cosine:", 7) == 0) {
    long long warm = strtoll(s + 7, &end, 10);
    if (end == s + 7 || *end || warm < 0)
      return false;
    *out = (dy_lr_schedule){.kind = DY_LR_COSINE, .warmup_steps = warm};
    return true;
  }
  return false;
}

int dy_cli_train_option(const char *cmd, int argc, char **argv, int *i,
                        dy_cli_train_spec *t) {
  const char *s = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (strcmp(s, "--nesterov") == 0) {
    t->opt.nesterov = true;
    return 1;
  }
  static const char *const with_value[] = {"--loss", "--optimizer", "--lr", "--momentum",
                                           "--weight-decay", "--clip-norm", "--lr-schedule",
                                           "--batch", "--output", "--max-iterations"};
  bool known = false;
  for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
    known |= strcmp(s, with_value[k]) == 0;
  if (!known)
    return 0;
  if (!v)
    return dy_cli_usage(cmd, "%s needs a value", s), -1;
  ++*i;
  if (strcmp(s, "--output") == 0) {
    t->output = v;
  } else if (strcmp(s, "--loss") == 0) {
    if (!dy_loss_from_name(v, &t->loss.kind))
      return dy_cli_usage(cmd, "unknown loss '%s' (cross_entropy, mse, l1, "
                          "bce_with_logits)", v), -1;
    t->has_loss = true;
  } else if (strcmp(s, "--optimizer") == 0) {
    if (!dy_opt_from_name(v, &t->opt.kind))
      return dy_cli_usage(cmd, "unknown optimizer '%s' (sgd, adam, adamw)", v), -1;
    t->has_opt = true;
  } else if (strcmp(s, "--lr") == 0) {
    if (!dy_cli_f32_number(v, &t->opt.lr) || !(t->opt.lr > 0))
      return dy_cli_usage(cmd, "--lr needs a positive finite number a float holds (at most "
                          "3.4e38), not '%s'", v), -1;
    t->has_lr = true;
  } else if (strcmp(s, "--momentum") == 0) {
    if (!dy_cli_f32_number(v, &t->opt.momentum) || !(t->opt.momentum < 1))
      return dy_cli_usage(cmd, "--momentum needs a number in [0, 1), not '%s'", v), -1;
  } else if (strcmp(s, "--weight-decay") == 0) {
    if (!dy_cli_f32_number(v, &t->opt.weight_decay))
      return dy_cli_usage(cmd, "--weight-decay needs a finite number >= 0, not '%s'", v), -1;
    t->has_wd = true;
  } else if (strcmp(s, "--clip-norm") == 0) {
    if (!dy_cli_f32_number(v, &t->opt.clip_norm))
      return dy_cli_usage(cmd, "--clip-norm needs a finite number >= 0, not '%s'", v), -1;
  } else if (strcmp(s, "--lr-schedule") == 0) {
    if (!parse_schedule(v, &t->sched))
      return dy_cli_usage(cmd, "bad --lr-schedule '%s' (constant, "
                          "step:SIZE:GAMMA, cosine:WARMUP)", v), -1;
  } else if (strcmp(s, "--max-iterations") == 0) {
    if (!dy_cli_range(v, 1, DY_MAX_TENSOR_BYTES / 4, &t->max_iterations))
      return dy_cli_usage(cmd, "--max-iterations needs a positive integer, not '%s'", v), -1;
  } else { /* --batch */
    if (!dy_cli_positive(v, &t->batch))
      return dy_cli_usage(cmd, "--batch needs a positive integer, not '%s'", v), -1;
    t->has_batch = true;
  }
  return 1;
}

int dy_cli_train_finish(const char *cmd, dy_cli_train_spec *t) {
  if (!t->has_loss)
    return dy_cli_usage(cmd, "%s", "no --loss given");
  if (!t->has_opt)
    return dy_cli_usage(cmd, "%s", "no --optimizer given");
  if (t->opt.nesterov && !(t->opt.kind == DY_OPT_SGD && t->opt.momentum > 0))
    return dy_cli_usage(cmd, "%s", "--nesterov needs --optimizer sgd and --momentum > 0");
  if (t->opt.momentum > 0 && t->opt.kind != DY_OPT_SGD)
    return dy_cli_usage(cmd, "%s", "--momentum is for --optimizer sgd");
  if (!t->has_lr)
    t->opt.lr = t->opt.kind == DY_OPT_SGD ? 0.01 : 0.001;
  if (!t->has_wd && t->opt.kind == DY_OPT_ADAMW)
    t->opt.weight_decay = 0.01;
  if (t->batch < 1)
    t->batch = 32;
  return 0;
}

dy_status dy_cli_train_plan(const dy_cli_train_spec *t, int64_t n, int64_t epochs,
                           dy_cli_train_loop *plan, dy_error *err) {
  if (t->has_batch && t->batch > n)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--batch %lld: above the %lld training samples", (long long)t->batch,
                        (long long)n);
  plan->batch = t->batch < n ? t->batch : n;
  plan->steps = (n - 1) / plan->batch + 1; /* ceil(n / batch), without overflow */
  /* the step count (and the schedule's position in it) is exact in a
   * double up to 2^53; more would wrap or round */
  if (epochs > (INT64_C(1) << 53) / plan->steps)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--epochs %lld: %lld epochs of %lld steps exceed 2^53 steps",
                        (long long)epochs, (long long)epochs, (long long)plan->steps);
  plan->sched = t->sched;
  int64_t total = epochs * plan->steps;
  if (plan->sched.kind == DY_LR_COSINE)
    plan->sched.total_steps = total;
  /* a growing step schedule must stay a float: its last rate is the largest */
  double top = dy_lr_at(&plan->sched, t->opt.lr, total - 1);
  if (!(fabs(top) <= FLT_MAX))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--lr-schedule step:%lld:%g: the rate reaches %g by step %lld, "
                        "beyond a float (lower GAMMA, --lr or --epochs)",
                        (long long)plan->sched.step_size, plan->sched.gamma, top,
                        (long long)(total - 1));
  return DY_OK;
}

/* The fetch to train: --output NAME, else the only one. */
dy_status dy_cli_pick_output(const dy_program *p, const char *name, int *out,
                             dy_error *err) {
  if (!name) {
    if (p->n_fetches != 1)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "the model has %d outputs; pick one with --output NAME",
                          p->n_fetches);
    *out = p->fetches[0];
    return DY_OK;
  }
  for (int i = 0; i < p->n_fetches; i++)
    if (strcmp(p->vars[p->fetches[i]]->name, name) == 0) {
      *out = p->fetches[i];
      return DY_OK;
    }
  return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "the model has no output named '%s'",
                      name);
}

dy_status dy_cli_make_training(dy_program *t, dy_cli_train_spec *ts, bool soft_labels,
                               dy_error *err) {
  int out = -1;
  dy_status s = dy_cli_pick_output(t, ts->output, &out, err);
  if (s)
    return s;
  dy_type pred = t->vars[out]->type;
  if (ts->loss.kind == DY_LOSS_CROSS_ENTROPY)
    ts->loss.soft_labels = soft_labels;
  if (ts->loss.kind == DY_LOSS_CROSS_ENTROPY && pred.rank < 2)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "cross_entropy needs logits [N, C, ...]; output '%s' is %s",
                        t->vars[out]->name, dy_type_str(&pred, (char[128]){0}, 128));
  for (int b = 0; ts->max_iterations > 0 && b < t->n_blocks; b++)
    for (int k = 0; k < t->blocks[b]->n_ops; k++) {
      dy_op *op = t->blocks[b]->ops[k];
      if (op->kind != DY_OP_WHILE || dy_while_attrs_get(op).max_iterations > 0)
        continue; /* a loop's own bound wins */
      dy_while_attrs a = dy_while_attrs_get(op);
      a.given = DY_GIVEN_ALL;
      a.max_iterations = ts->max_iterations;
      dy_attr attrs[DY_WHILE_NATTRS];
      int n_at = dy_while_attrs_put(&a, attrs);
      if (!dy_op_set_attrs(t, op, attrs, n_at))
        return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "--max-iterations: out of memory");
    }
  if ((s = dy_program_set_train_semantics(t, NULL, err)))
    return s;
  return dy_program_make_training(t, out, &ts->loss, &ts->opt, err);
}

void dy_cli_train_step_hint(dy_error *err) {
  if (err->status != DY_STATUS_LIMIT || !strstr(err->msg, "while: the loop did not end"))
    return;
  size_t n = strlen(err->msg);
  snprintf(err->msg + n, sizeof err->msg - n, "; the training step keeps every trip on a "
           "stack of that many rows (%d when the loop has no bound): train with a larger "
           "--max-iterations", DY_WHILE_GRAD_TRIPS);
}
