/* dy_grad.h - gradient rules, one per differentiable op of the table, and
 * Program autodiff (Paddle's append_backward). Included by dy_ir.h.
 *
 * A rule says how an op's input gradients are computed from its output
 * gradient, in ops of the table. It computes nothing itself: it asks a
 * builder (dy_gb) to emit ops, and the builder decides what emitting means:
 *
 *   - the Program builder (ir/autodiff/grad.c) appends each op to a block,
 *     typed by inference: dy_program_append_backward, dy_program_gradients;
 *   - the eager builder (runtime/gb_eager.c) runs each op at once on
 *     tensors: dy_backward.
 *
 * So one rule serves eager autograd, the static executor and the generated
 * C (which sees only the ops the rule emitted). Values are small ints the
 * builder hands out (var ids in a Program, slots on the eager tape); -1 is
 * "no value" and propagates through the dy_gb_* helpers like NULL through
 * eager ops, so a rule is straight-line code that checks b->err once:
 *
 *   dy_status dy_grad_mul(dy_gb *b, const dy_op *op, const int *x,
 *                         const int *y, const int *dy, const bool *need,
 *                         int *dx) {
 *     if (need[0]) dx[0] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], x[1]), x[0]);
 *     if (need[1]) dx[1] = dy_gb_sum_to(b, dy_gb_mul(b, dy[0], x[0]), x[1]);
 *     return dy_gb_status(b);
 *   }
 *
 * x[i] are the op's inputs, y[j] its outputs, dy[j] the gradient of output
 * j (-1: none reaches it; treat as zero), need[i] whether input i wants a
 * gradient; the rule sets dx[i] for the inputs it was asked for (dx[i] =
 * -1 when input i's gradient is structurally zero). Types (b->type) are
 * the Program's (-1 dims: the batch) or the eager tensors' (concrete); a
 * rule decides from them statically, e.g. which dims a broadcast gradient
 * is summed over (the batch against 1 is a broadcast dim).
 *
 * The table. ops.def flags DY_OPF_NODIFF on ops with no gradient (integer
 * or boolean results, comparisons, creation): asking for one is an error
 * naming the op and its source line. Every other op has a rule
 * dy_grad_<name>, in ir/autodiff/grad_<family>.c (one per family); a
 * differentiable op without one is a link error (ir/autodiff/grad.c builds the
 * table).
 */
#ifndef DY_GRAD_H
#define DY_GRAD_H

/* ------------------------------------------------------------------ */
/* the builder a rule emits into                                       */
/* ------------------------------------------------------------------ */

typedef struct dy_gb dy_gb;
struct dy_gb {
  /* Emit kind(in[0..n_in); attrs) and return its output value, or -1
   * with the error recorded (dy_gb_fail). The op's source location is
   * b->fwd's: a gradient op points at the forward call it differentiates.
   * An in-place op (DY_OPF_INPLACE, an optimizer update) updates its first
   * n_out inputs and returns in[0]. */
  int (*emit)(dy_gb *b, dy_op_kind kind, const int *in, int n_in,
              const dy_attr *attrs, int n_attrs);
  /* A rank-0 constant of dtype holding v. */
  int (*constant)(dy_gb *b, dy_dtype dtype, double v);
  /* The type of value v. */
  dy_type (*type)(dy_gb *b, int v);
  const dy_op *fwd;     /* the forward op being differentiated */
  dy_error *err;        /* the first error (status DY_OK while none) */
  void *user;           /* the builder's own state */
};

/* The rule signature. x: inputs, y: outputs, dy: output gradients (-1 for
 * none), need: which inputs want a gradient, dx: filled (-1 for zero). */
typedef dy_status (*dy_grad_fn)(dy_gb *b, const dy_op *op, const int *x,
                                const int *y, const int *dy, const bool *need,
                                int *dx);

#define DY_OP(NAME, name, n_in, n_out, flags, attrs)                          \
  dy_status dy_grad_##name(dy_gb *b, const dy_op *op, const int *x,          \
                           const int *y, const int *dy, const bool *need,    \
                           int *dx);
#include "ops.def"
#undef DY_OP

/* The rule of each op kind; NULL for DY_OPF_NODIFF ops. */
extern const dy_grad_fn dy_grad_table[DY_OP_COUNT];

/* Run op's rule through b: checks that the op is differentiable (an error
 * naming the op and its source line otherwise) and that every input asked
 * for got a value or an explicit zero. dx[i] = -1 on return means zero. */
dy_status dy_grad_op(dy_gb *b, const dy_op *op, const int *x, const int *y,
                     const int *dy, const bool *need, int *dx);

/* True when a gradient can flow into input i of kind k: a differentiable
 * op and an f32 input that is not an index, mask or shape operand (the
 * rule's own business: e.g. gather's indices, where's condition), nor
 * sampling coordinates (grid_sample's grid, roi_align's rois). */
bool dy_grad_input_is_differentiable(dy_op_kind k, int i, dy_dtype t);

/* ------------------------------------------------------------------ */
/* helpers for rules (ir/autodiff/gb.c). Each returns -1 when an       */
/* operand is -1 or the op fails (the first error stays in b->err).    */
/* ------------------------------------------------------------------ */

/* Record an error at the forward op (first one wins; with no forward op,
 * as when an optimizer emits, the message alone); returns -1. */
int dy_gb_fail(dy_gb *b, dy_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline dy_status dy_gb_status(const dy_gb *b) { return b->err->status; }

int dy_gb_op(dy_gb *b, dy_op_kind kind, const int *in, int n_in,
             const dy_attr *attrs, int n_attrs);
int dy_gb_op1(dy_gb *b, dy_op_kind kind, int x, const dy_attr *attrs,
              int n_attrs);
int dy_gb_add(dy_gb *b, int x, int y);
int dy_gb_sub(dy_gb *b, int x, int y);
int dy_gb_mul(dy_gb *b, int x, int y);
int dy_gb_div(dy_gb *b, int x, int y);
int dy_gb_neg(dy_gb *b, int x);
/* x * s + t (the scale op) */
int dy_gb_scale(dy_gb *b, int x, double s, double t);
/* A rank-0 f32 constant. */
int dy_gb_const(dy_gb *b, double v);
/* x cast to dtype to (a boolean mask becomes 0.0 / 1.0). */
int dy_gb_cast(dy_gb *b, int x, dy_dtype to);
/* Sum g down to like's type (numpy broadcasting undone): leading dims g
 * has beyond like's rank and dims where like is 1 (g not) are summed. */
int dy_gb_sum_to(dy_gb *b, int g, int like);
/* Broadcast x to like's shape (expand_as). */
int dy_gb_expand_as(dy_gb *b, int x, int like);
/* Reshape g to like's shape (a -1 dim of like, at most one, is inferred). */
int dy_gb_reshape_as(dy_gb *b, int g, int like);
/* Reshape g to dims (rank of them); a -1 is the batch: copied where g has
 * it at the same place, else inferred (at most one such). */
int dy_gb_reshape(dy_gb *b, int g, const int64_t *dims, int rank);
int dy_gb_reduce_sum(dy_gb *b, int x, const int64_t *axes, int n_axes,
                     bool keepdim);
int dy_gb_transpose(dy_gb *b, int x, const int64_t *perm, int rank);
int dy_gb_matmul(dy_gb *b, int x, int y, bool tx, bool ty);
/* dy * mask where mask is a boolean value: dy where mask, else 0. */
int dy_gb_mask(dy_gb *b, int dy, int mask);

/* The Program builder: emitting appends an op to block `block` of p,
 * its output a new var typed by inference and named <stem><n>; a
 * constant is a new persistable var. st holds its state (keep it alive
 * as long as b). */
typedef struct {
  dy_program *p;
  int block;
  int next;            /* counter for fresh names */
  const char *stem;    /* "grad@" for gradients */
} dy_gb_program_state;
void dy_gb_program(dy_gb *b, dy_gb_program_state *st, dy_program *p, int block,
                   const char *stem, dy_error *err);

/* ------------------------------------------------------------------ */
/* Program autodiff (ir/autodiff/grad.c)                               */
/* ------------------------------------------------------------------ */

/* The rows of the trip stack of a while whose max_iterations is 0 (as
 * dy_while records it): a Program's gradient keeps each trip's carried
 * values, so its forward loop may run at most this many trips (more is an
 * error naming the loop). */
#define DY_WHILE_GRAD_TRIPS 256

/* Paddle's paddle.static.gradients: append to block 0 the ops computing
 * d loss / d wrt[i] for each i, and set grads[i] to the var holding it
 * (-1 when loss does not depend on wrt[i]). loss must be an f32 var with
 * one element (a scalar loss; a non-scalar one is an error naming it).
 * The seed is a persistable 1.0. Gradient vars are named "<var>@GRAD";
 * where several uses of a var contribute, the contributions are summed
 * with add ops. Errors (an op without a rule on the path, ...) name the op
 * and its source line. */
dy_status dy_program_gradients(dy_program *p, int loss, const int *wrt,
                               int n_wrt, int *grads, dy_error *err);

/* Paddle's append_backward: gradients of loss with respect to every
 * trainable var of p (dy_var.trainable, persistable f32 parameters).
 * *n_params receives their number and params[i] / grads[i] (each
 * malloc'd, caller frees) the parameter and its gradient var (-1 when
 * the loss does not depend on it). */
dy_status dy_program_append_backward(dy_program *p, int loss, int **params,
                                     int **grads, int *n_params,
                                     dy_error *err);

#endif /* DY_GRAD_H */
