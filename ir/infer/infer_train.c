/* infer_train.c - inference for the training family (ops_train.def):
 * optimizer updates and batch_norm_stats. Each op's outputs are its first
 * n_out inputs, updated in place, so each output type is that input's
 * type; inference checks the operands agree (all f32, the state shaped
 * like the parameter, lr and the beta pows one-element scalars) and names
 * the op and the operand in every error. */
#include "dy_ir.h"

/* in[i] is f32. */
static dy_status want_f32(const dy_op *op, const dy_type *in, int i,
                          const char *what, dy_error *err) {
  if (in[i].dtype != DY_F32)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "%s: %s (input %d) is %s, must be f32", dy_op_name(op->kind),
                       what, i, dy_dtype_name(in[i].dtype));
  return DY_OK;
}

/* in[i] is f32 with exactly the type of in[like] (a state or gradient of
 * the parameter in[like]). */
static dy_status want_like(const dy_op *op, const dy_type *in, int i,
                           const char *what, int like, const char *like_what,
                           dy_error *err) {
  dy_status s = want_f32(op, in, i, what, err);
  if (s)
    return s;
  if (!dy_type_equal(&in[i], &in[like])) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: %s %s does not match %s %s", dy_op_name(op->kind), what,
                       dy_type_str(&in[i], a, sizeof a), like_what,
                       dy_type_str(&in[like], b, sizeof b));
  }
  return DY_OK;
}

/* in[i] is an f32 scalar: rank 0, or rank 1 of one element when one_ok
 * (the beta pows); lr must be rank 0. */
static dy_status want_scalar(const dy_op *op, const dy_type *in, int i,
                             const char *what, bool one_ok, dy_error *err) {
  dy_status s = want_f32(op, in, i, what, err);
  if (s)
    return s;
  if (in[i].rank == 0 || (one_ok && in[i].rank == 1 && in[i].shape[0] == 1))
    return DY_OK;
  char a[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: %s is %s, must be %s",
                     dy_op_name(op->kind), what, dy_type_str(&in[i], a, sizeof a),
                     one_ok ? "a scalar (rank 0 or [1])" : "a rank-0 scalar");
}

/* The parameter: f32 with a static shape (it is persistable state). */
static dy_status want_param(const dy_op *op, const dy_type *in, dy_error *err) {
  dy_status s = want_f32(op, in, 0, "param", err);
  if (s)
    return s;
  if (!dy_type_is_static(&in[0])) {
    char a[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: param %s has a dynamic dim (state has a static shape)",
                       dy_op_name(op->kind), dy_type_str(&in[0], a, sizeof a));
  }
  return DY_OK;
}

static void pass_through(const dy_type *in, int n_out, dy_type *out) {
  for (int i = 0; i < n_out; i++)
    out[i] = in[i];
}

dy_status dy_infer_sgd(const dy_op *op, const dy_type *in, int n_, dy_type *out,
                       dy_error *err) {
  (void)n_;
  dy_status s;
  if ((s = want_param(op, in, err)) ||
      (s = want_like(op, in, 1, "grad", 0, "param", err)) ||
      (s = want_scalar(op, in, 2, "lr", false, err)))
    return s;
  pass_through(in, 1, out);
  return DY_OK;
}

dy_status dy_infer_momentum(const dy_op *op, const dy_type *in, int n_,
                            dy_type *out, dy_error *err) {
  (void)n_;
  dy_status s;
  if ((s = want_param(op, in, err)) ||
      (s = want_like(op, in, 1, "velocity", 0, "param", err)) ||
      (s = want_like(op, in, 2, "grad", 0, "param", err)) ||
      (s = want_scalar(op, in, 3, "lr", false, err)))
    return s;
  pass_through(in, 2, out);
  return DY_OK;
}

/* adam and adamw: (param, moment1, moment2, beta1_pow, beta2_pow, grad, lr) */
static dy_status infer_adam(const dy_op *op, const dy_type *in, dy_type *out,
                            dy_error *err) {
  dy_status s;
  if ((s = want_param(op, in, err)) ||
      (s = want_like(op, in, 1, "moment1", 0, "param", err)) ||
      (s = want_like(op, in, 2, "moment2", 0, "param", err)) ||
      (s = want_scalar(op, in, 3, "beta1_pow", true, err)) ||
      (s = want_scalar(op, in, 4, "beta2_pow", true, err)) ||
      (s = want_like(op, in, 5, "grad", 0, "param", err)) ||
      (s = want_scalar(op, in, 6, "lr", false, err)))
    return s;
  pass_through(in, 5, out);
  return DY_OK;
}

dy_status dy_infer_adam(const dy_op *op, const dy_type *in, int n_, dy_type *out,
                        dy_error *err) {
  (void)n_;
  return infer_adam(op, in, out, err);
}

dy_status dy_infer_adamw(const dy_op *op, const dy_type *in, int n_, dy_type *out,
                         dy_error *err) {
  (void)n_;
  return infer_adam(op, in, out, err);
}

/* batch_norm_stats(running_mean [C], running_var [C], x [N, C, ...]) */
dy_status dy_infer_batch_norm_stats(const dy_op *op, const dy_type *in, int n_,
                                    dy_type *out, dy_error *err) {
  (void)n_;
  dy_status s;
  char a[128], b[128];
  if ((s = want_f32(op, in, 0, "running_mean", err)) ||
      (s = want_f32(op, in, 1, "running_var", err)) ||
      (s = want_f32(op, in, 2, "x", err)))
    return s;
  const dy_type *x = &in[2];
  if (x->rank < 2)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "batch_norm_stats: x %s must be [N, C, ...]",
                       dy_type_str(x, a, sizeof a));
  for (int i = 0; i < 2; i++)
    if (in[i].rank != 1 || in[i].shape[0] != x->shape[1] || x->shape[1] < 0)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "batch_norm_stats: %s %s must be [C] for x %s",
                         i ? "running_var" : "running_mean",
                         dy_type_str(&in[i], a, sizeof a), dy_type_str(x, b, sizeof b));
  pass_through(in, 2, out);
  return DY_OK;
}
