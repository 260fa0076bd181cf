/* infer_fused.c - inference for the fused ops (ops_fused.def). */
#include <string.h>

#include "dy_ir.h"

/* act(matmul(x, w) + b): matmul's rule, then b must broadcast along the
 * last dim without widening the result. */
dy_status dy_infer_fused_matmul(const dy_op *op, const dy_type *in, int n,
                                dy_type *out, dy_error *err) {
  if (n < 2 || n > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_matmul: takes 2 or 3 inputs, got %d", n);
  dy_status s = dy_infer_matmul(op, in, 2, out, err);
  if (s)
    return s;
  dy_fused_matmul_attrs a;
  if ((s = dy_fused_matmul_attrs_of(op, &a, err)))
    return s;
  if (n == 3) {
    const dy_type *b = &in[2];
    int64_t last = out->rank ? out->shape[out->rank - 1] : 1;
    int64_t nb = dy_type_numel(b);
    bool ok = b->dtype == DY_F32 && nb == last && b->rank >= 1 &&
              b->shape[b->rank - 1] == last && b->rank <= out->rank;
    if (!ok) {
      char t[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "fused_matmul: bias %s is not one value per output column (%lld)",
                         dy_type_str(b, t, sizeof t), (long long)last);
    }
  }
  return DY_OK;
}

/* Checks the expression's tokens and stack depth; the output is the
 * broadcast of the inputs. */
dy_status dy_infer_fused_elementwise(const dy_op *op, const dy_type *in, int n,
                                     dy_type *out, dy_error *err) {
  static const char *const unary[] = {"relu", "sigmoid", "tanh", "exp", "neg", "abs", "sqrt"};
  static const char *const binary[] = {"add", "sub", "mul", "div", "max", "min"};
  if (n < 1 || n > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_elementwise: takes 1 to 3 inputs, got %d", n);
  dy_fused_elementwise_attrs a;
  dy_status st = dy_fused_elementwise_attrs_of(op, &a, err);
  if (st)
    return st;
  int depth = 0;
  for (const char *s = a.expr; *s;) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    size_t len = strcspn(s, " ");
    bool ok = false;
    if (s[0] == '$' && len == 2 && s[1] >= '0' && s[1] < '0' + n) {
      depth++, ok = true;
    } else if (s[0] == '#' && len > 1) {
      depth++, ok = true;
    } else {
      for (size_t i = 0; i < sizeof unary / sizeof *unary && !ok; i++)
        ok = strlen(unary[i]) == len && strncmp(s, unary[i], len) == 0 && depth >= 1;
      for (size_t i = 0; i < sizeof binary / sizeof *binary && !ok; i++)
        if (strlen(binary[i]) == len && strncmp(s, binary[i], len) == 0 && depth >= 2)
          ok = true, depth--;
    }
    if (!ok)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "fused_elementwise: bad token '%.*s' in \"%s\"", (int)len, s, a.expr);
    s += len;
  }
  if (depth != 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_elementwise: \"%s\" leaves %d values", a.expr, depth);
  *out = in[0];
  for (int i = 0; i < n; i++) {
    if (in[i].dtype != DY_F32)
      return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                         "fused_elementwise: input %d is not f32", i);
    dy_type t = *out;
    dy_status s = dy_broadcast_shapes(op, &t, &in[i], out, err);
    if (s)
      return s;
  }
  return DY_OK;
}

/* act(conv2d(x, w) + b): conv2d's rule, then one bias value per channel. */
dy_status dy_infer_fused_conv2d(const dy_op *op, const dy_type *in, int n,
                                dy_type *out, dy_error *err) {
  if (n < 2 || n > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d: takes 2 or 3 inputs, got %d", n);
  dy_status s = dy_infer_conv2d(op, in, 2, out, err);
  if (s)
    return s;
  dy_fused_conv2d_attrs a;
  if ((s = dy_fused_conv2d_attrs_of(op, &a, err)))
    return s;
  if (n == 3) {
    const dy_type *b = &in[2];
    int64_t o = out->shape[1];
    bool ok = b->dtype == DY_F32 && dy_type_numel(b) == o && b->rank >= 1 && b->rank <= 4;
    /* [O], [O,1,1] or [1,O,1,1]: O sits at dim rank-3 unless rank is 1 */
    if (ok && b->rank > 1)
      ok = b->rank >= 3 && b->shape[b->rank - 3] == o;
    if (!ok) {
      char t[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "fused_conv2d: bias %s is not one value per channel (%lld)",
                         dy_type_str(b, t, sizeof t), (long long)o);
    }
  }
  return DY_OK;
}
