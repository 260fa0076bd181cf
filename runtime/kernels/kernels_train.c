/* kernels_train.c - reference kernels of the training family
 * (ops_train.def): sgd, momentum, adam, adamw, batch_norm_stats.
 *
 * These ops update state in place: in eager calls and on the static
 * executor out[i] IS in[i] (the same tensor), so a kernel reads every
 * operand of an element before it writes that element, and works as well
 * when out[i] is a separate buffer. The formulas, and their float
 * operation order, are ops_train.def's; codegen/ops/emit_train.c emits the
 * same arithmetic. Scalars (lr, the attributes, the beta pows) are read
 * once, before the loop.
 */
#include <math.h>

#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

/* Arity, tensor health, and every output of the type inference gives
 * (the type of the input it updates). */
static dy_status check_train(const dy_op *op, dy_tensor *const *in, int n_in,
                             int want_in, dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, want_in, out, err);
  if (s)
    return s;
  dy_type t[8], want[8];
  for (int i = 0; i < n_in; i++)
    t[i] = in[i]->type;
  if ((s = dy_infer(op, t, n_in, want, err)))
    return s;
  int n_out = dy_op_info_of(op->kind)->n_out;
  for (int i = 0; i < n_out; i++) {
    if ((s = dy_kcheck_tensor(op, out[i], "output", i, err)))
      return s;
    if (!dy_type_equal(&out[i]->type, &want[i]))
      return dy_kshape_error(op, "output", &out[i]->type, &want[i], err);
  }
  return DY_OK;
}

static float scalar(const dy_tensor *t) { return ((const float *)t->data)[0]; }

dy_status dy_kernel_sgd(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_error *err) {
  dy_status s = check_train(op, in, n_in, 3, out, err);
  if (s)
    return s;
  dy_sgd_attrs a = dy_sgd_attrs_get(op);
  const float wd = (float)a.weight_decay, lr = scalar(in[2]);
  const float *p = in[0]->data, *gr = in[1]->data;
  float *po = out[0]->data;
  int64_t n = dy_tensor_numel(in[0]);
  for (int64_t i = 0; i < n; i++) {
    float g = gr[i];
    if (wd != 0.0f)
      g = g + wd * p[i];
    po[i] = p[i] - lr * g;
  }
  return DY_OK;
}

dy_status dy_kernel_momentum(const dy_op *op, dy_tensor *const *in, int n_in,
                             dy_tensor *const *out, dy_error *err) {
  dy_status s = check_train(op, in, n_in, 4, out, err);
  if (s)
    return s;
  dy_momentum_attrs a = dy_momentum_attrs_get(op);
  const float mu = (float)a.mu, wd = (float)a.weight_decay, lr = scalar(in[3]);
  const bool nesterov = a.use_nesterov != 0;
  const float *p = in[0]->data, *v = in[1]->data, *gr = in[2]->data;
  float *po = out[0]->data, *vo = out[1]->data;
  int64_t n = dy_tensor_numel(in[0]);
  for (int64_t i = 0; i < n; i++) {
    float g = gr[i];
    if (wd != 0.0f)
      g = g + wd * p[i];
    const float vn = mu * v[i] + g;
    const float step = nesterov ? g + mu * vn : vn;
    vo[i] = vn;
    po[i] = p[i] - lr * step;
  }
  return DY_OK;
}

/* adam and adamw: (param, moment1, moment2, beta1_pow, beta2_pow, grad, lr);
 * decay is coupled L2 (adam's weight_decay) or decoupled (adamw's coeff). */
static dy_status adam_impl(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, double beta1, double beta2,
                           double epsilon, double l2, double coeff, dy_error *err) {
  dy_status s = check_train(op, in, n_in, 7, out, err);
  if (s)
    return s;
  const float b1 = (float)beta1, b2 = (float)beta2, eps = (float)epsilon;
  const float wd = (float)l2, lr = scalar(in[6]);
  const float omb1 = 1.0f - b1, omb2 = 1.0f - b2;
  const float decay = 1.0f - lr * (float)coeff;
  const float b1p = scalar(in[3]) * b1, b2p = scalar(in[4]) * b2;
  const float bc1 = 1.0f - b1p, bc2 = 1.0f - b2p;
  const float *p = in[0]->data, *m = in[1]->data, *v = in[2]->data, *gr = in[5]->data;
  float *po = out[0]->data, *mo = out[1]->data, *vo = out[2]->data;
  int64_t n = dy_tensor_numel(in[0]);
  for (int64_t i = 0; i < n; i++) {
    float pi = p[i], g = gr[i];
    if (coeff != 0.0)
      pi = pi * decay;
    if (wd != 0.0f)
      g = g + wd * pi;
    const float mn = b1 * m[i] + omb1 * g;
    const float vn = b2 * v[i] + omb2 * g * g;
    mo[i] = mn;
    vo[i] = vn;
    po[i] = pi - lr * (mn / bc1) / (sqrtf(vn / bc2) + eps);
  }
  ((float *)out[3]->data)[0] = b1p;
  ((float *)out[4]->data)[0] = b2p;
  return DY_OK;
}

dy_status dy_kernel_adam(const dy_op *op, dy_tensor *const *in, int n_in,
                         dy_tensor *const *out, dy_error *err) {
  dy_adam_attrs a = dy_adam_attrs_get(op);
  return adam_impl(op, in, n_in, out, a.beta1, a.beta2, a.epsilon, a.weight_decay,
                   0.0, err);
}

dy_status dy_kernel_adamw(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err) {
  dy_adamw_attrs a = dy_adamw_attrs_get(op);
  return adam_impl(op, in, n_in, out, a.beta1, a.beta2, a.epsilon, 0.0, a.coeff,
                   err);
}

/* Per channel: the batch's mean and biased variance over N and the
 * spatial dims, in double, two passes (kernels_nn.c's order), then
 * running = momentum * running + (1 - momentum) * stat, rounded once. */
dy_status dy_kernel_batch_norm_stats(const dy_op *op, dy_tensor *const *in, int n_in,
                                     dy_tensor *const *out, dy_error *err) {
  dy_status s = check_train(op, in, n_in, 3, out, err);
  if (s)
    return s;
  const double mom = dy_batch_norm_stats_attrs_get(op).momentum;
  const dy_type *t = &in[2]->type;
  int64_t n = t->shape[0], c = t->shape[1], sp = 1;
  for (int i = 2; i < t->rank; i++)
    sp *= t->shape[i];
  if (n * sp == 0)
    return DY_OK; /* no statistics to take: the state is left as it is */
  const float *x = in[2]->data, *rm = in[0]->data, *rv = in[1]->data;
  float *rmo = out[0]->data, *rvo = out[1]->data;
  const double cnt = (double)(n * sp);
  for (int64_t ch = 0; ch < c; ch++) {
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < sp; j++)
        sum += x[(i * c + ch) * sp + j];
    const double mu = sum / cnt;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < sp; j++) {
        const double d = x[(i * c + ch) * sp + j] - mu;
        sq += d * d;
      }
    const float m = (float)(mom * rm[ch] + (1.0 - mom) * mu);
    const float v = (float)(mom * rv[ch] + (1.0 - mom) * (sq / cnt));
    rmo[ch] = m;
    rvo[ch] = v;
  }
  return DY_OK;
}
