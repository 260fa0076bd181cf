/* grad_internal.h - shared by the gradient rule files (grad_<family>.c).
 *
 * DY_GRAD_TODO(name) stands for a rule not written yet: asking for it is an
 * UNSUPPORTED error naming the op. It exists only while the rules are being
 * written: tests/test_grad.c fails on it, and no TODO may remain. */
#ifndef DY_GRAD_INTERNAL_H
#define DY_GRAD_INTERNAL_H

#include "dy_ir.h"

#define DY_GRAD_ARGS                                                        \
  dy_gb *b, const dy_op *op, const int *x, const int *y, const int *dy,    \
      const bool *need, int *dx

/* The rule's signature for op `name`. */
#define DY_GRAD(name) dy_status dy_grad_##name(DY_GRAD_ARGS)

#define DY_GRAD_TODO(name)                                                   \
  DY_GRAD(name) {                                                            \
    (void)x; (void)y; (void)dy; (void)need; (void)dx;                        \
    return dy_error_at(b->err, op, DY_STATUS_UNSUPPORTED,                    \
                       "the gradient of %s is not written yet", #name);      \
  }

#endif
