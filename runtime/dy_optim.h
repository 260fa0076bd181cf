/* dy_optim.h - eager optimizers (PyTorch's torch.optim, Paddle's
 * paddle.optimizer). Included by dy_runtime.h.
 *
 *   dy_optimizer_spec spec = {.kind = DY_OPT_ADAM, .lr = 1e-3};
 *   dy_optimizer *opt = dy_optimizer_new(&spec, model);
 *   for (int64_t step = 0; step < n; step++) {
 *     ... forward, loss, dy_backward (fills each parameter's grad) ...
 *     dy_optimizer_set_lr(opt, dy_lr_at(&sched, spec.lr, step));
 *     if (dy_optimizer_step(opt, &err)) ...
 *   }
 *   dy_optimizer_free(opt);
 *
 * A step runs ir/train/optim.c's dy_optimizer_build through the eager builder:
 * the same ops (clipping by global norm, then one in-place sgd /
 * momentum / adam / adamw per parameter) that dy_program_append_optimizer
 * puts in a training Program, on the same kernels, so an eager step and a
 * Program step give the same bits. The optimizer owns its state tensors
 * (velocity, moments, beta pows, initialised as dy_optimizer_state_init
 * says) and the learning rate; the parameters stay the model's.
 */
#ifndef DY_OPTIM_H
#define DY_OPTIM_H

#include "dy_runtime.h"

typedef struct dy_optimizer dy_optimizer;

/* A new optimizer over every f32 parameter of model and its descendants
 * with requires_grad set (batch norm's running statistics are not), each
 * once, in the order of a depth-first walk (a layer's own parameters,
 * then its children's). The model must outlive the optimizer. NULL (the
 * error recorded, dy_last_error) on a bad spec or out of memory. Free with
 * dy_optimizer_free. */
dy_optimizer *dy_optimizer_new(const dy_optimizer_spec *spec, dy_layer *model);
void dy_optimizer_free(dy_optimizer *o);

/* One update of every parameter whose grad is set (a parameter whose
 * grad is NULL is skipped: no update, no part in the clipping norm).
 * A grad of another type than its parameter is an error naming it. */
dy_status dy_optimizer_step(dy_optimizer *o, dy_error *err);

/* The learning rate of the next steps (the spec's lr at first). */
void dy_optimizer_set_lr(dy_optimizer *o, double lr);
double dy_optimizer_get_lr(const dy_optimizer *o);

/* The parameters, in the optimizer's order, and their state: state i of
 * parameter k (i < dy_optimizer_state_count(spec)). Borrowed. */
int dy_optimizer_n_params(const dy_optimizer *o);
dy_tensor *dy_optimizer_param(const dy_optimizer *o, int k);
dy_tensor *dy_optimizer_state(const dy_optimizer *o, int k, int i);

#endif /* DY_OPTIM_H */
