/* dy_autograd.h - eager autograd (PyTorch's / Paddle dygraph's
 * loss.backward()) and the eager losses. Included by dy_runtime.h.
 *
 *   dy_tensor *loss = dy_cross_entropy(dy_call1(net, x), labels, NULL);
 *   dy_backward(loss, &err);     // every parameter's .grad += d loss / d p
 *   ... optimizer step ...
 *   dy_clear_grad(net);          // Paddle's clear_grad(): grads to NULL
 *
 * The tape (runtime/tape.c). While grad mode is on, every op (dy_apply)
 * with a concrete f32 result and an input that requires grad (a layer's
 * parameter, dy_tensor.requires_grad) or was itself made by a recorded op
 * is recorded: its kind, a copy of its attributes and source line, a
 * reference to each input and to its output, which points back at the
 * record (dy_tensor.grad_fn). Symbolic tensors (static mode) are never
 * recorded, nor an op that writes one of its inputs in place.
 *
 * Backward (runtime/backward.c) walks the records the loss depends on,
 * newest first, and runs each op's gradient rule (ir/, dy_grad.h) on the
 * eager builder with grad mode off, so gradients are computed by the same
 * ops the Program's backward would append. Each leaf's gradient (a tensor that requires grad
 * and was made by no recorded op) is ADDED into its .grad (owned by the
 * tensor; accumulates across calls until dy_clear_grad). Then the records
 * it walked are released (PyTorch frees the graph after backward): a
 * second backward through them finds no graph and says so.
 *
 * Memory. The tape's references keep the intermediates backward needs
 * alive after the scopes that made them ended (dy_call1 frees a forward's
 * intermediates otherwise). The tape never grows without bound: once it
 * holds twice as many records as after its last pruning (and at least
 * 4096), the records no gradient can reach any more — whose output
 * nobody but the tape holds, and that no live record reads — are released.
 * So an eval forward run without dy_no_grad costs memory only as long as
 * its outputs are held. dy_tape_clear drops every record at once. The
 * tape and grad mode are per thread (like scopes): a thread that recorded
 * calls dy_tape_clear before it ends.
 */
#ifndef DY_AUTOGRAD_H
#define DY_AUTOGRAD_H

#include "dy_runtime.h"

/* ------------------------------------------------------------------ */
/* backward.c: backward                                                */
/* ------------------------------------------------------------------ */

/* d loss / d leaf added into every leaf's .grad. loss: an f32 tensor with
 * one element (else an error naming its shape) that depends on a tensor
 * requiring grad (else "the loss does not require grad"). An op on the
 * path without a gradient rule is an error naming the op and its line. */
dy_status dy_backward(dy_tensor *loss, dy_error *err);
/* The same for any f32 output t with the cotangent seed (t's shape):
 * leaves get sum(seed * d t / d leaf). */
dy_status dy_backward_seed(dy_tensor *t, dy_tensor *seed, dy_error *err);

/* Every parameter's .grad of l and its descendants freed and set to NULL. */
void dy_clear_grad(dy_layer *l);

/* ------------------------------------------------------------------ */
/* tape.c: grad mode and the tape                                      */
/* ------------------------------------------------------------------ */

/* Grad mode (Paddle's no_grad, nestable): between begin and end nothing is
 * recorded. dy_grad_enabled is false while any no_grad is open (and while
 * dy_backward runs). */
void dy_no_grad_begin(void);
void dy_no_grad_end(void);
bool dy_grad_enabled(void);

/* Drop every record of the tape (a graph never backwarded). */
void dy_tape_clear(void);
/* The number of records on the tape (for tests and diagnostics). */
int dy_tape_size(void);

/* ------------------------------------------------------------------ */
/* losses.c: the losses of ir/train/loss.c, eager                            */
/* ------------------------------------------------------------------ */

/* Each runs dy_loss_build (ir/dy_train.h) on the eager builder: the loss
 * is recorded on the tape (and into an active trace), and its value is
 * returned as a new scope-owned f32 scalar (rank 0), or NULL with the
 * error recorded (dy_last_error: wrong label dtype or shape, a label out
 * of range). spec NULL: the defaults (mean, hard labels, no ignore_index);
 * spec->kind is ignored by the named forms. */
dy_tensor *dy_loss_at(dy_tensor *pred, dy_tensor *label, const dy_loss_spec *spec,
                      dy_srcloc loc);
dy_tensor *dy_cross_entropy_at(dy_tensor *logits, dy_tensor *labels,
                               const dy_loss_spec *spec, dy_srcloc loc);
dy_tensor *dy_mse_loss_at(dy_tensor *pred, dy_tensor *label, dy_srcloc loc);
dy_tensor *dy_l1_loss_at(dy_tensor *pred, dy_tensor *label, dy_srcloc loc);
dy_tensor *dy_bce_with_logits_loss_at(dy_tensor *logits, dy_tensor *label,
                                      dy_srcloc loc);

#define dy_loss(pred, label, spec) dy_loss_at((pred), (label), (spec), DY_HERE)
#define dy_cross_entropy(logits, labels, spec) \
  dy_cross_entropy_at((logits), (labels), (spec), DY_HERE)
#define dy_mse_loss(pred, label) dy_mse_loss_at((pred), (label), DY_HERE)
#define dy_l1_loss(pred, label) dy_l1_loss_at((pred), (label), DY_HERE)
#define dy_bce_with_logits_loss(logits, label) \
  dy_bce_with_logits_loss_at((logits), (label), DY_HERE)

#endif /* DY_AUTOGRAD_H */
