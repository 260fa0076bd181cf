/* dy_train.h - training in the IR: losses, optimizers and the training
 * step as ops of the table, written once against the builder of dy_grad.h
 * so that eager training (runtime/), the static executor and the
 * generated C run the same ops. Included by dy_ir.h.
 *
 *   train/loss.c    dy_loss_build, dy_program_append_loss
 *   train/optim.c   dy_optimizer_build, dy_program_append_optimizer, dy_lr_at
 *   train/train.c   dy_program_make_training (the whole step), train
 *                   semantics, dropout reseeding (over the other two)
 *
 * A training Program is an inference Program plus: a label feed, the
 * loss (fetched), the gradient ops (dy_program_append_backward), and the
 * optimizer's update ops (DY_OPF_INPLACE: they write the parameters and
 * their state, persistable vars, in place), with the learning rate as a
 * rank-0 f32 feed named "learning_rate" (the host applies the schedule).
 */
#ifndef DY_TRAIN_H
#define DY_TRAIN_H

typedef enum {
  DY_LOSS_CROSS_ENTROPY = 0, /* logits [N, C] (or [N, C, ...] with the
                                classes on dim 1); labels i64 [N] (class
                                indices) or, soft, f32 like the logits   */
  DY_LOSS_MSE,               /* mean((pred - label)^2)                   */
  DY_LOSS_L1,                /* mean(|pred - label|)                     */
  DY_LOSS_BCE_WITH_LOGITS,   /* the numerically stable form              */
} dy_loss_kind;

typedef enum { DY_REDUCTION_MEAN = 0, DY_REDUCTION_SUM } dy_reduction;

typedef struct {
  dy_loss_kind kind;
  dy_reduction reduction;
  bool soft_labels;          /* cross_entropy: labels are probabilities    */
  bool has_ignore_index;     /* cross_entropy: labels equal to it add
                                nothing (and do not count in the mean)     */
  int64_t ignore_index;
} dy_loss_spec;

/* "cross_entropy", "mse", "l1", "bce_with_logits" <-> kind. */
const char *dy_loss_name(dy_loss_kind k);
bool dy_loss_from_name(const char *s, dy_loss_kind *out);

/* Emit the loss of pred against label through b; returns the loss value
 * (an f32 scalar, rank 0) or -1 with the error in b->err (a label of the
 * wrong dtype or shape names both). Labels out of range fail when run
 * (an index error), never read out of bounds. */
int dy_loss_build(dy_gb *b, int pred, int label, const dy_loss_spec *spec);

/* Add a label feed named label_name (its type from spec and pred's type)
 * and the loss ops to block 0; *loss is the loss var, *label the feed. */
dy_status dy_program_append_loss(dy_program *p, int pred, const char *label_name,
                                 const dy_loss_spec *spec, int *label, int *loss,
                                 dy_error *err);

typedef enum {
  DY_OPT_SGD = 0,            /* with momentum > 0: heavy ball / Nesterov */
  DY_OPT_ADAM,
  DY_OPT_ADAMW,              /* decoupled weight decay                   */
} dy_opt_kind;

typedef struct {
  dy_opt_kind kind;
  double lr;                 /* the base rate; the schedule scales it       */
  double momentum;           /* sgd                                         */
  bool nesterov;             /* sgd                                         */
  double weight_decay;       /* sgd, adam: L2 added to the gradient; adamw:
                                decoupled (0.01 is AdamW's usual default)   */
  double beta1, beta2, epsilon;  /* adam(w); 0 means 0.9, 0.999, 1e-8      */
  double clip_norm;          /* > 0: clip gradients by their global L2 norm */
} dy_optimizer_spec;

const char *dy_opt_name(dy_opt_kind k);
bool dy_opt_from_name(const char *s, dy_opt_kind *out);

typedef enum { DY_LR_CONSTANT = 0, DY_LR_STEP, DY_LR_COSINE } dy_lr_kind;

typedef struct {
  dy_lr_kind kind;
  int64_t step_size;         /* step: multiply by gamma every step_size   */
  double gamma;
  int64_t warmup_steps;      /* cosine: linear warm-up from 0, then ...    */
  int64_t total_steps;       /* ... cosine decay to min_lr at total_steps  */
  double min_lr;
} dy_lr_schedule;

/* The learning rate at step (0-based) of a run with base rate lr
 * (formulas in optim.c: constant; step: lr * gamma^floor(step /
 * step_size), PyTorch's StepLR; cosine: linear warm-up lr * step /
 * warmup_steps, then PyTorch's CosineAnnealingLR down to min_lr at
 * total_steps, and min_lr after). A NULL schedule is constant. */
double dy_lr_at(const dy_lr_schedule *s, double lr, int64_t step);

/* The optimizer's state per parameter, in the order dy_optimizer_build
 * takes it: sgd none (with momentum > 0: "velocity"); adam, adamw
 * "moment1", "moment2", "beta1_pow", "beta2_pow". A state is shaped like
 * its parameter, except the beta pows ([1]); it starts at
 * dy_optimizer_state_init (0, and 1 for the beta pows). */
#define DY_OPT_MAX_STATE 4
int dy_optimizer_state_count(const dy_optimizer_spec *opt);
const char *dy_optimizer_state_name(const dy_optimizer_spec *opt, int i);
double dy_optimizer_state_init(const dy_optimizer_spec *opt, int i);
/* State i of a parameter of type param. */
dy_type dy_optimizer_state_type(const dy_optimizer_spec *opt, int i,
                                const dy_type *param);
/* Check a spec (kind known, rates and betas in range, clip_norm >= 0):
 * an error naming the field. */
dy_status dy_optimizer_check(const dy_optimizer_spec *opt, dy_error *err);

/* The update, written once for every path: through b (the Program
 * builder, or the eager one, which runs it at once), clip the gradients
 * by their global norm when opt->clip_norm > 0,
 *
 *   norm = sqrt(sum_i reduce_sum(g_i * g_i)),
 *   g_i  = g_i * (clip_norm / max(norm, clip_norm))
 *
 * (PyTorch's clip_grad_norm_ without its 1e-6), then emit one in-place
 * update op per parameter: sgd / momentum / adam / adamw with the spec's
 * attributes. params[i], grads[i] (< 0: no gradient, the parameter is
 * left alone and takes no part in the norm), state[i][0 ..
 * dy_optimizer_state_count) and lr (a rank-0 f32) are values of b.
 * Returns 0, or -1 with the error in b->err. */
int dy_optimizer_build(dy_gb *b, const dy_optimizer_spec *opt, const int *params,
                       const int *grads, int n, const int *const *state, int lr);

/* Append the update ops for params[i] with gradient grads[i] (grads[i] <
 * 0: no gradient, the parameter is left alone) to block 0: gradient
 * clipping when asked, then one in-place update op per parameter. The
 * optimizer's state (velocity, moments, step counts) becomes persistable
 * vars named "<param>@<state>" (not trainable) initialised as the
 * optimizer starts; the learning rate is the rank-0 f32 feed
 * "learning_rate" (created if absent). */
dy_status dy_program_append_optimizer(dy_program *p, const dy_optimizer_spec *opt,
                                      const int *params, const int *grads, int n,
                                      dy_error *err);

/* The training step of an inference Program p whose fetch `output` is the
 * model's prediction: append the loss against a label feed named "label",
 * the backward ops and the optimizer ops; afterwards the Program's only
 * fetch is the loss. Errors: no trainable var on the loss's path ("the
 * loss does not depend on any trainable parameter"), an op without a
 * gradient, a label that cannot match. */
dy_status dy_program_make_training(dy_program *p, int output, const dy_loss_spec *loss,
                                   const dy_optimizer_spec *opt, dy_error *err);

/* Train semantics for an inference Program (dy2stc train on a saved
 * model): every dropout and batch_norm op of block 0 with is_test set is
 * switched to training (batch statistics, random masks), and each such
 * batch_norm gets the batch_norm_stats op that updates its running
 * statistics in place. *n_changed (may be NULL) counts the ops switched. */
dy_status dy_program_set_train_semantics(dy_program *p, int *n_changed,
                                         dy_error *err);

/* Fresh dropout masks for the next step: walking block 0 in op order, the
 * first training-mode dropout op with a given seed attribute draws a new
 * seed from next(), and every later one with the same old seed (the ops
 * its gradient emitted) takes the same new seed. make_training gives the
 * forward's dropouts distinct seeds, so the draws happen once per forward
 * dropout, in forward order, as an eager forward draws them. */
dy_status dy_program_reseed_dropout(dy_program *p, uint64_t (*next)(void),
                                    dy_error *err);

#endif /* DY_TRAIN_H */
