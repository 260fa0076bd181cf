/* grad_internal.h - shared by the gradient rule files (grad_<family>.c).
 *
 * DY_GRAD_TODO(name) stands for a rule not written yet: asking for it is an
 * UNSUPPORTED error naming the op. It exists only while the rules are being
 * written: tests/test_grad.c fails on it, and no TODO may remain.
 *
 * At most one argument of a call emits ops (C leaves the order of
 * arguments unspecified, and gcc and clang differ): name the others in
 * locals first. scripts/check_emit_order.py checks it. */
#ifndef DY_GRAD_INTERNAL_H
#define DY_GRAD_INTERNAL_H

#include "dy_ir.h"

#define DY_GRAD_ARGS                                                        \
  dy_gb *b, const dy_op *op, const int *x, const int *y, const int *dy,    \
      const bool *need, int *dx

/* The rule's signature for op `name`. */
#define DY_GRAD(name) dy_status dy_grad_##name(DY_GRAD_ARGS)

/* Small emitters the rule files share: kind(x) and kind(x, y) without
 * attributes, where(c, t, f), comparisons with a constant, and a unary
 * elementwise rule's end, dx[0] = dy * d when input 0 is asked for. */
static inline int dy_gb_unary(dy_gb *b, dy_op_kind kind, int x) {
  return dy_gb_op1(b, kind, x, NULL, 0);
}
static inline int dy_gb_binary(dy_gb *b, dy_op_kind kind, int x, int y) {
  return dy_gb_op(b, kind, (const int[]){x, y}, 2, NULL, 0);
}
static inline int dy_gb_where(dy_gb *b, int c, int t, int f) {
  return dy_gb_op(b, DY_OP_WHERE, (const int[]){c, t, f}, 3, NULL, 0);
}
/* x <kind> c, a comparison with an f32 constant (a bool value), and the
 * same as 0.0 / 1.0 */
static inline int dy_gb_cmp_const(dy_gb *b, dy_op_kind kind, int x, double c) {
  return dy_gb_binary(b, kind, x, dy_gb_const(b, c));
}
static inline int dy_gb_ind_const(dy_gb *b, dy_op_kind kind, int x, double c) {
  return dy_gb_cast(b, dy_gb_cmp_const(b, kind, x, c), DY_F32);
}
static inline dy_status dy_gb_chain(dy_gb *b, const bool *need, const int *dy, int d,
                                    int *dx) {
  if (need[0])
    dx[0] = dy_gb_mul(b, dy[0], d);
  return dy_gb_status(b);
}

#define DY_GRAD_TODO(name)                                                   \
  DY_GRAD(name) {                                                            \
    (void)x; (void)y; (void)dy; (void)need; (void)dx;                        \
    return dy_error_at(b->err, op, DY_STATUS_UNSUPPORTED,                    \
                       "the gradient of %s is not written yet", #name);      \
  }

#endif
