/* emit_train.c - floor 2: emitters of the training family (ops_train.def): sgd,
 * momentum, adam, adamw, batch_norm_stats.
 *
 * Each op updates state in place: its outputs are its first inputs. The
 * kernel reads input i and writes output i, element by element, every operand
 * of an element read before any is written, so the code is right both
 * when the training code generator passes one buffer as both
 * (it then drops `restrict`, as for any kernel writing over an input) and
 * when they are distinct. The arithmetic is runtime/kernels/kernels_train.c's,
 * operation for operation (float, the attributes as float literals;
 * batch_norm_stats in double with momentum as a double literal), with the
 * generated math library's dy_sqrtf.
 */
#include <math.h>
#include <stdio.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* An attribute's value as a float literal (lit), false if not finite. */
static dy_status flit(dy_cg_ctx *ctx, double d, char *lit, size_t n, dy_error *err) {
  if (!dy_float_literal((float)d, lit, n))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT,
                            "attribute is not finite");
  return DY_OK;
}

/* The loop over the parameter's elements (closed by END). */
static void open_loop(dy_cg_ctx *ctx) {
  FOR("for (int64_t i = 0; i < %s; i++) {",
      dy_cg_extent(ctx, dy_cg_in_type(ctx, 0), 0, dy_cg_in_type(ctx, 0)->rank));
}

/* g = grad[i] (input grad), plus weight_decay * p when it is nonzero (p a
 * C expression). */
static void emit_grad(dy_cg_ctx *ctx, int grad, double wd, const char *wd_lit,
                      const char *p) {
  if (wd != 0.0 && (float)wd != 0.0f)
    L("const float g = %s[i] + %s * %s;", IN(grad), wd_lit, p);
  else
    L("const float g = %s[i];", IN(grad));
}

dy_status dy_emit_sgd(dy_cg_ctx *ctx, dy_error *err) {
  dy_sgd_attrs a = dy_sgd_attrs_get(ctx->op);
  char wd[64], p[64];
  dy_status s = flit(ctx, a.weight_decay, wd, sizeof wd, err);
  if (s)
    return s;
  snprintf(p, sizeof p, "%s[i]", IN(0));
  L("/* p -= lr * (grad + weight_decay * p) */");
  L("const float lr = %s[0];", IN(2));
  open_loop(ctx);
  emit_grad(ctx, 1, a.weight_decay, wd, p);
  L("%s[i] = %s[i] - lr * g;", OUT(0), IN(0));
  END();
  return DY_OK;
}

dy_status dy_emit_momentum(dy_cg_ctx *ctx, dy_error *err) {
  dy_momentum_attrs a = dy_momentum_attrs_get(ctx->op);
  char wd[64], mu[64], p[64];
  dy_status s;
  if ((s = flit(ctx, a.weight_decay, wd, sizeof wd, err)) ||
      (s = flit(ctx, a.mu, mu, sizeof mu, err)))
    return s;
  snprintf(p, sizeof p, "%s[i]", IN(0));
  L("/* v = mu * v + g; p -= lr * %s */", a.use_nesterov ? "(g + mu * v)" : "v");
  L("const float lr = %s[0];", IN(3));
  open_loop(ctx);
  emit_grad(ctx, 2, a.weight_decay, wd, p);
  L("const float v = %s * %s[i] + g;", mu, IN(1));
  if (a.use_nesterov)
    L("const float step = g + %s * v;", mu);
  else
    L("const float step = v;");
  L("%s[i] = v;", OUT(1));
  L("%s[i] = %s[i] - lr * step;", OUT(0), IN(0));
  END();
  return DY_OK;
}

/* adam (coupled L2 l2) and adamw (decoupled coeff). */
static dy_status emit_adam(dy_cg_ctx *ctx, dy_error *err, double beta1, double beta2,
                           double epsilon, double l2, double coeff) {
  char b1[64], b2[64], eps[64], wd[64], omb1[64], omb2[64], cf[64];
  dy_status s;
  if ((s = flit(ctx, beta1, b1, sizeof b1, err)) ||
      (s = flit(ctx, beta2, b2, sizeof b2, err)) ||
      (s = flit(ctx, epsilon, eps, sizeof eps, err)) ||
      (s = flit(ctx, l2, wd, sizeof wd, err)) ||
      (s = flit(ctx, coeff, cf, sizeof cf, err)) ||
      (s = flit(ctx, 1.0f - (float)beta1, omb1, sizeof omb1, err)) ||
      (s = flit(ctx, 1.0f - (float)beta2, omb2, sizeof omb2, err)))
    return s;
  L("/* m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; bias-corrected step */");
  L("const float lr = %s[0];", IN(6));
  L("const float b1p = %s[0] * %s, b2p = %s[0] * %s;", IN(3), b1, IN(4), b2);
  L("const float bc1 = 1.0f - b1p, bc2 = 1.0f - b2p;");
  if (coeff != 0.0)
    L("const float decay = 1.0f - lr * %s;", cf);
  open_loop(ctx);
  L("const float p = %s[i]%s;", IN(0), coeff != 0.0 ? " * decay" : "");
  emit_grad(ctx, 5, l2, wd, "p");
  L("const float m = %s * %s[i] + %s * g;", b1, IN(1), omb1);
  L("const float v = %s * %s[i] + %s * g * g;", b2, IN(2), omb2);
  L("%s[i] = m;", OUT(1));
  L("%s[i] = v;", OUT(2));
  L("%s[i] = p - lr * (m / bc1) / (dy_sqrtf(v / bc2) + %s);", OUT(0), eps);
  END();
  L("%s[0] = b1p;", OUT(3));
  L("%s[0] = b2p;", OUT(4));
  return DY_OK;
}

dy_status dy_emit_adam(dy_cg_ctx *ctx, dy_error *err) {
  dy_adam_attrs a = dy_adam_attrs_get(ctx->op);
  return emit_adam(ctx, err, a.beta1, a.beta2, a.epsilon, a.weight_decay, 0.0);
}

dy_status dy_emit_adamw(dy_cg_ctx *ctx, dy_error *err) {
  dy_adamw_attrs a = dy_adamw_attrs_get(ctx->op);
  return emit_adam(ctx, err, a.beta1, a.beta2, a.epsilon, 0.0, a.coeff);
}

dy_status dy_emit_batch_norm_stats(dy_cg_ctx *ctx, dy_error *err) {
  double mom = dy_batch_norm_stats_attrs_get(ctx->op).momentum;
  if (!isfinite(mom))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT,
                            "momentum is not finite");
  const dy_type *x = dy_cg_in_type(ctx, 2);
  long long c = (long long)x->shape[1];
  char nb[64], sp[128], cnt[256];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, x, 0));
  snprintf(sp, sizeof sp, "%s", dy_cg_extent(ctx, x, 2, x->rank));
  snprintf(cnt, sizeof cnt, "(double)(%s) * (double)(%s)", nb, sp);
  L("/* running = momentum * running + (1 - momentum) * the batch's mean");
  L(" * and biased variance per channel (in double, two passes) */");
  bool empty = x->shape[0] == 0;
  for (int d = 2; d < x->rank; d++)
    empty |= x->shape[d] == 0;
  if (empty) {
    L("/* an empty batch: no statistics, the state is left as it is */");
    return DY_OK;
  }
  FOR("for (int64_t c = 0; c < %lld; c++) {", c);
  L("double sum = 0.0, sq = 0.0;");
  FOR("for (int64_t n = 0; n < %s; n++)", nb);
  FOR("for (int64_t j = 0; j < %s; j++)", sp);
  L("sum += %s[(n * %lld + c) * %s + j];", IN(2), c, sp);
  END();
  END();
  L("const double mu = sum / (%s);", cnt);
  FOR("for (int64_t n = 0; n < %s; n++)", nb);
  FOR("for (int64_t j = 0; j < %s; j++) {", sp);
  L("const double d = %s[(n * %lld + c) * %s + j] - mu;", IN(2), c, sp);
  L("sq += d * d;");
  END();
  END();
  L("const float m = (float)(%.17g * %s[c] + %.17g * mu);", mom, IN(0), 1.0 - mom);
  L("const float v = (float)(%.17g * %s[c] + %.17g * (sq / (%s)));", mom, IN(1), 1.0 - mom, cnt);
  L("%s[c] = m;", OUT(0));
  L("%s[c] = v;", OUT(1));
  END();
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_sgd = {.emit = dy_emit_sgd};
const dy_cg_op dy_cg_op_momentum = {.emit = dy_emit_momentum};
const dy_cg_op dy_cg_op_adam = {.emit = dy_emit_adam};
const dy_cg_op dy_cg_op_adamw = {.emit = dy_emit_adamw};
const dy_cg_op dy_cg_op_batch_norm_stats = {.emit = dy_emit_batch_norm_stats};
