/* dy_train_api.h - training a layer through its static Program (Paddle's
 * to_static, then train), one step of a training Program, and the data
 * order every training loop of dy2stc shares (train_static.c). Included by
 * dy_runtime.h.
 *
 *   dy_static_trainer *t = dy_to_static_train(net, &loss, &opt);
 *   for each batch:
 *     dy_static_train_step(t, (dy_tensor *[]){x}, 1, y, lr, &loss, &err);
 *   dy_static_trainer_free(t);
 *   dy_jit_save_ex(net, &spec, 1, "net", DY_SAVE_EVAL, &err);  // trained
 */
#ifndef DY_TRAIN_API_H
#define DY_TRAIN_API_H

/* ------------------------------------------------------------------ */
/* the data order (shared by dy2stc train, the samples and the tests)  */
/* ------------------------------------------------------------------ */

/* One epoch's order of n samples: order[i] = i, then Fisher-Yates from
 * the end with the runtime's generator (random.c: xoshiro256**):
 *
 *   for (i = n - 1; i > 0; i--) { j = dy_rand_u64() % (i + 1); swap(i, j); }
 *
 * (n - 1 draws; the modulo's bias, below 2^-40 for n < 2^24, is accepted
 * for the sake of an order any C program can reproduce). */
void dy_train_shuffle(int64_t *order, int64_t n);

/* A new tensor holding the samples order[begin .. begin + count) of data
 * (the first dim is the sample dim), in that order; owned like any op
 * result. NULL (with the error recorded) on a bad range. */
dy_tensor *dy_train_batch(const dy_tensor *data, const int64_t *order, int64_t begin,
                          int64_t count);

/* ------------------------------------------------------------------ */
/* one step of a training Program (dy_program_make_training)           */
/* ------------------------------------------------------------------ */

/* Run one training step of p: reseed its training-mode dropout ops from
 * dy_rand_u64 (dy_program_reseed_dropout), feed inputs (one per model
 * input, in feed order), labels to "label" and lr to "learning_rate", run
 * it on the static executor (the optimizer updates p's parameters and
 * state in place) and store the loss in *loss (may be NULL). */
dy_status dy_program_train_step(dy_program *p, dy_tensor *const *inputs, int n,
                                dy_tensor *labels, double lr, double *loss,
                                dy_error *err);

/* ------------------------------------------------------------------ */
/* to_static training                                                  */
/* ------------------------------------------------------------------ */

typedef struct dy_static_trainer dy_static_trainer;

/* Train model (borrowed; must outlive the trainer) through its static
 * Program. NULL on OOM or a NULL argument (error recorded). */
dy_static_trainer *dy_to_static_train(dy_layer *model, const dy_loss_spec *loss,
                                      const dy_optimizer_spec *opt);

/* One step on a batch. The first call for an input signature (each
 * input's dtype and shape past the batch dim, and the model's train/eval
 * mode) traces the model's forward in static mode with the batch dynamic,
 * in the model's current mode (a new layer is in train mode: dropout masks
 * and batch statistics, batch_norm_stats updating the running statistics)
 * and turns it into a training Program (dy_program_make_training); later
 * calls reuse it, so one Program serves every batch size, the last short
 * batch included. The step runs dy_program_train_step.
 *
 * The parameters are copied, not bound: before each step the model's
 * parameters and buffers (batch norm's running statistics) are copied into
 * the Program, and afterwards the updated values are copied back, so the
 * model always holds the trained values (dy_jit_save_ex(..., DY_SAVE_EVAL)
 * saves the trained inference Program) and edits made to it between steps
 * are seen. The optimizer's state lives in the Program; when the signature
 * changes it moves to the new Program with everything else persistable of
 * the same name. */
dy_status dy_static_train_step(dy_static_trainer *t, dy_tensor *const *inputs, int n,
                               dy_tensor *labels, double lr, double *loss_out,
                               dy_error *err);

/* The training Program of the last step (NULL before the first): for
 * inspection, and for building the compiled trainer from the same Program. */
const dy_program *dy_static_trainer_program(const dy_static_trainer *t);

void dy_static_trainer_free(dy_static_trainer *t);

#endif /* DY_TRAIN_API_H */
