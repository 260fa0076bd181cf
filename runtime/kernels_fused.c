/* kernels_fused.c - reference kernels of the fused ops (ops_fused.def).
 *
 * They exist so that a fused Program still runs on the static executor and
 * so that tests can compare fused and unfused results. The activations'
 * and elementwise tokens' formulas are ir/acts.def's, compiled with
 * kernels_scalar.h's libm names (the same functions as the unfused
 * kernels), applied in the same order.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels_internal.h"
#include "kernels_scalar.h"

/* act(x) by acts.def's formula; alpha is the act's parameter. */
static float act_apply(dy_activation a, float alpha, float x) {
  (void)alpha;
  switch (a) {
  case DY_ACTIVATION_NONE: return x;
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) \
  case DY_ACTIVATION_##NAME: return EXPR;
#include "acts.def"
#undef DY_ACT
  default: return x;
  }
}

dy_status dy_kernel_fused_matmul(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  if (n_in < 2 || n_in > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_matmul: takes 2 or 3 inputs, got %d", n_in);
  dy_fused_matmul_attrs a;
  dy_status s = dy_fused_matmul_attrs_of(op, &a, err);
  if (s)
    return s;
  int act = dy_act_find(a.act);
  if (act < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "fused_matmul: unknown activation");
  float alpha = (float)a.alpha;
  if ((s = dy_kernel_matmul(op, in, 2, out, err)))
    return s;
  float *o = out[0]->data;
  int64_t total = dy_tensor_numel(out[0]);
  int64_t cols = out[0]->type.rank ? out[0]->type.shape[out[0]->type.rank - 1] : 1;
  const float *b = n_in == 3 ? in[2]->data : NULL;
  if (n_in == 3 && dy_tensor_numel(in[2]) != cols)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "fused_matmul: bias size");
  for (int64_t i = 0; i < total; i++)
    o[i] = act_apply((dy_activation)act, alpha, b ? o[i] + b[i % cols] : o[i]);
  return DY_OK;
}

dy_status dy_kernel_fused_conv2d(const dy_op *op, dy_tensor *const *in, int n_in,
                                 dy_tensor *const *out, dy_error *err) {
  if (n_in < 2 || n_in > 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d: takes 2 to 4 inputs, got %d", n_in);
  dy_fused_conv2d_attrs a;
  dy_status s = dy_fused_conv2d_attrs_of(op, &a, err);
  if (s)
    return s;
  int act = dy_act_find(a.act);
  if (act < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "fused_conv2d: unknown activation");
  float alpha = (float)a.alpha;
  if ((s = dy_kernel_conv2d(op, in, 2, out, err)))
    return s;
  const dy_type *t = &out[0]->type;
  int64_t n = t->shape[0], c = t->shape[1], hw = t->shape[2] * t->shape[3];
  const float *b = n_in >= 3 ? in[2]->data : NULL;
  const float *r = n_in == 4 ? in[3]->data : NULL; /* the residual */
  if (r && dy_tensor_numel(in[3]) != dy_tensor_numel(out[0]))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "fused_conv2d: residual size");
  float *y = out[0]->data;
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t j = 0; j < hw; j++) {
        int64_t at = (i * c + k) * hw + j;
        float v = b ? y[at] + b[k] : y[at];
        y[at] = act_apply((dy_activation)act, alpha, r ? v + r[at] : v);
      }
  return DY_OK;
}

/* fused_conv2d's kernel into a temporary, then pool2d's over it */
dy_status dy_kernel_fused_conv2d_pool(const dy_op *op, dy_tensor *const *in, int n_in,
                                      dy_tensor *const *out, dy_error *err) {
  if (n_in < 2 || n_in > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d_pool: takes 2 or 3 inputs, got %d", n_in);
  dy_type ti[3], tc;
  for (int i = 0; i < n_in; i++)
    ti[i] = in[i]->type;
  dy_attr ca[7], pa[8];
  dy_op cop, pop;
  dy_fused_conv2d_pool_parts(op, ca, &cop, pa, &pop);
  dy_status s = dy_infer_fused_conv2d(&cop, ti, n_in, &tc, err);
  if (s)
    return s;
  dy_tensor conv = {.type = tc, .nbytes = (size_t)dy_type_numel(&tc) * sizeof(float)};
  conv.data = malloc(conv.nbytes ? conv.nbytes : 1);
  if (!conv.data)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "fused_conv2d_pool: out of memory");
  dy_tensor *const co[1] = {&conv};
  s = dy_kernel_fused_conv2d(&cop, in, n_in, co, err);
  if (!s)
    s = dy_kernel_pool2d(&pop, co, 1, out, err);
  free(conv.data);
  return s;
}

/* ---- fused_elementwise: a postfix program per element ---- */

enum { MAX_CODE = 64 };

typedef struct {
  char kind;   /* 'i' input, 'c' constant, 'u' unary, 'b' binary */
  int arg;     /* input index, or the op */
  float value;
} instr;

static int parse_expr(const char *e, instr *code) {
  int n = 0;
  for (const char *s = e; *s && n < MAX_CODE;) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    size_t len = strcspn(s, " ");
    instr in = {0};
    if (s[0] == '$') {
      in.kind = 'i';
      in.arg = s[1] - '0';
    } else if (s[0] == '#') {
      in.kind = 'c';
      in.value = strtof(s + 1, NULL);
    } else {
      in.arg = dy_ew_token_find(s, len);
      if (in.arg < 0)
        return -1;
      in.kind = dy_ew_token_arity((dy_ew_token)in.arg) == 1 ? 'u' : 'b';
    }
    code[n++] = in;
    s += len;
  }
  return n;
}

/* token t of acts.def on x (and y) */
static float ew_apply(int t, float x, float y) {
  (void)y;
  switch (t) {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) \
  case DY_EWTOK_##NAME: return EXPR;
#include "acts.def"
#undef DY_EW
  default: return x;
  }
}

static float run_expr(const instr *code, int n, const float *x) {
  float st[MAX_CODE];
  int sp = 0;
  for (int k = 0; k < n; k++) {
    const instr *c = &code[k];
    switch (c->kind) {
    case 'i': st[sp++] = x[c->arg]; break;
    case 'c': st[sp++] = c->value; break;
    case 'u': st[sp - 1] = ew_apply(c->arg, st[sp - 1], 0.0f); break;
    default: {
      float b = st[--sp];
      st[sp - 1] = ew_apply(c->arg, st[sp - 1], b);
    }
    }
  }
  return st[0];
}

dy_status dy_kernel_fused_elementwise(const dy_op *op, dy_tensor *const *in, int n_in,
                                      dy_tensor *const *out, dy_error *err) {
  dy_fused_elementwise_attrs a;
  instr code[MAX_CODE];
  int n = dy_fused_elementwise_attrs_of(op, &a, NULL) == DY_OK && a.expr
              ? parse_expr(a.expr, code) : -1;
  if (n <= 0 || n_in < 1 || n_in > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "fused_elementwise: bad expression");
  const dy_type *o = &out[0]->type;
  /* per input, the element stride of each output dim (0 when broadcast) */
  int64_t strides[3][DY_MAX_DIMS] = {{0}};
  for (int i = 0; i < n_in; i++) {
    const dy_type *t = &in[i]->type;
    int64_t cs[DY_MAX_DIMS];
    dy_contiguous_strides(t->rank, t->shape, cs);
    for (int d = 0; d < o->rank; d++) {
      int ti = d - (o->rank - t->rank);
      strides[i][d] = ti >= 0 && t->shape[ti] != 1 ? cs[ti] : 0;
    }
  }
  float *y = out[0]->data;
  int64_t idx[DY_MAX_DIMS] = {0}, off[3] = {0};
  int64_t total = dy_tensor_numel(out[0]);
  for (int64_t k = 0; k < total; k++) {
    float x[3] = {0};
    for (int i = 0; i < n_in; i++)
      x[i] = ((const float *)in[i]->data)[off[i]];
    y[k] = run_expr(code, n, x);
    for (int d = o->rank - 1; d >= 0; d--) {
      for (int i = 0; i < n_in; i++)
        off[i] += strides[i][d];
      if (++idx[d] < o->shape[d])
        break;
      for (int i = 0; i < n_in; i++)
        off[i] -= strides[i][d] * o->shape[d];
      idx[d] = 0;
    }
  }
  return DY_OK;
}
