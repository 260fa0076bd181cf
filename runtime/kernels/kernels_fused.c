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

/* fused_dwpw: t = act_dw(depthwise conv2d(x, wd) + bd) (conv2d's kernel
 * with the op's attributes), then y = act(wp t + bp + r) per image, the
 * 1x1 conv as a plain sum over t's channels. */
dy_status dy_kernel_fused_dwpw(const dy_op *op, dy_tensor *const *in, int n_in,
                               dy_tensor *const *out, dy_error *err) {
  if (n_in < 5 || n_in > 6)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_dwpw: takes 5 or 6 inputs, got %d", n_in);
  dy_fused_dwpw_attrs a;
  dy_status s = dy_fused_dwpw_attrs_of(op, &a, err);
  if (s)
    return s;
  int act_dw = dy_act_find(a.act_dw), act = dy_act_find(a.act);
  if (act_dw < 0 || act < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "fused_dwpw: unknown activation");
  const dy_type *yt = &out[0]->type;
  int64_t n = yt->shape[0], o = yt->shape[1], hw = yt->shape[2] * yt->shape[3];
  int64_t c = in[3]->type.shape[1];
  if (dy_tensor_numel(in[3]) != o * c || dy_tensor_numel(in[2]) != c ||
      dy_tensor_numel(in[4]) != o || (n_in == 6 && dy_tensor_numel(in[5]) != n * o * hw))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "fused_dwpw: operand sizes");
  /* t: a tensor of the kernel's own (not handed to a scope) */
  dy_tensor tt = {.type = {.dtype = DY_F32, .rank = 4, .shape = {n, c, yt->shape[2], yt->shape[3]}},
                  .nbytes = sizeof(float) * (size_t)(n * c * hw), .refcount = 1};
  tt.data = malloc(tt.nbytes ? tt.nbytes : 1);
  if (!tt.data)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "fused_dwpw: out of memory");
  dy_tensor *t = &tt, *const tout[1] = {t};
  dy_op dw = *op; /* the depthwise conv: conv2d's kernel on the same attributes */
  dw.kind = DY_OP_CONV2D;
  dw.n_inputs = 2;
  if ((s = dy_kernel_conv2d(&dw, in, 2, tout, err))) {
    free(tt.data);
    return s;
  }
  float *tv = t->data, *y = out[0]->data;
  const float *bd = in[2]->data, *wp = in[3]->data, *bp = in[4]->data;
  const float *r = n_in == 6 ? in[5]->data : NULL;
  for (int64_t i = 0; i < n * c * hw; i++)
    tv[i] = act_apply((dy_activation)act_dw, (float)a.alpha_dw, tv[i] + bd[i / hw % c]);
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < o; k++)
      for (int64_t j = 0; j < hw; j++) {
        float v = bp[k];
        for (int64_t q = 0; q < c; q++)
          v += wp[k * c + q] * tv[(i * c + q) * hw + j];
        int64_t at = (i * o + k) * hw + j;
        y[at] = act_apply((dy_activation)act, (float)a.alpha, r ? v + r[at] : v);
      }
  free(tt.data);
  return DY_OK;
}

/* fused_irb: e = act_e(we x + be) per image (the 1x1 expand conv as a
 * plain sum over x's channels) into a temporary, then fused_dwpw's kernel
 * on (e, wd, bd, wp, bp[, r]) with the same attributes. */
dy_status dy_kernel_fused_irb(const dy_op *op, dy_tensor *const *in, int n_in,
                              dy_tensor *const *out, dy_error *err) {
  if (n_in < 7 || n_in > 8)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_irb: takes 7 or 8 inputs, got %d", n_in);
  dy_fused_irb_attrs a;
  dy_status s = dy_fused_irb_attrs_of(op, &a, err);
  if (s)
    return s;
  int act_e = dy_act_find(a.act_e);
  if (act_e < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "fused_irb: unknown activation");
  const dy_type *xt = &in[0]->type;
  int64_t n = xt->shape[0], c = xt->shape[1], hw = xt->shape[2] * xt->shape[3];
  int64_t e = in[1]->type.shape[0];
  if (dy_tensor_numel(in[1]) != e * c || dy_tensor_numel(in[2]) != e)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "fused_irb: operand sizes");
  dy_tensor et = {.type = {.dtype = DY_F32, .rank = 4, .shape = {n, e, xt->shape[2], xt->shape[3]}},
                  .nbytes = sizeof(float) * (size_t)(n * e * hw), .refcount = 1};
  et.data = malloc(et.nbytes ? et.nbytes : 1);
  if (!et.data)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "fused_irb: out of memory");
  const float *x = in[0]->data, *we = in[1]->data, *be = in[2]->data;
  float *ev = et.data;
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < e; k++)
      for (int64_t j = 0; j < hw; j++) {
        float v = be[k];
        for (int64_t q = 0; q < c; q++)
          v += we[k * c + q] * x[(i * c + q) * hw + j];
        ev[(i * e + k) * hw + j] = act_apply((dy_activation)act_e, (float)a.alpha_e, v);
      }
  dy_tensor *rest[6] = {&et};
  for (int i = 3; i < n_in; i++)
    rest[i - 2] = in[i];
  s = dy_kernel_fused_dwpw(op, rest, n_in - 2, out, err);
  free(et.data);
  return s;
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

/* fused_attention: per group g and query i, scores s_j = q_i . k_j * scale
 * (+ mask[i][j]) over the keys, softmax (max subtracted), then the
 * probabilities times v; the same steps and order as matmul, softmax and
 * matmul run one after the other (sums in double). The layouts differ only
 * in strides: "" [G.., L, D] (group stride L*D, row stride D), "lhd"
 * [B, L, H, D] (group g = (b, h) at (b * L * H + h) * D, row stride H*D),
 * packed: rows [B, L, W], head h at offset + h * D of a row. */
dy_status dy_kernel_fused_attention(const dy_op *op, dy_tensor *const *in, int n_in,
                                    dy_tensor *const *out, dy_error *err) {
  if (n_in < 3 || n_in > 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_attention: takes 3 or 4 inputs, got %d", n_in);
  dy_fused_attention_attrs a;
  dy_status s = dy_fused_attention_attrs_of(op, &a, err);
  if (s)
    return s;
  const dy_type *qt = &in[0]->type;
  int r = qt->rank;
  bool lhd = strcmp(a.layout, "lhd") == 0, packed = a.n_packed == 6;
  int ls = packed ? r - 2 : lhd ? r - 3 : r - 2; /* the sequence's axis */
  int64_t d = qt->shape[r - 1], dv = in[2]->type.shape[r - 1];
  int64_t lq = qt->shape[ls], lk = in[1]->type.shape[ls], hh = lhd ? qt->shape[r - 2] : 1;
  /* each tensor's row stride and offset of head 0 (q, k, v, out) */
  int64_t rw[4], off[4] = {0, 0, 0, 0};
  if (packed) {
    hh = a.packed[0], d = a.packed[1], dv = a.packed[2];
    for (int i = 0; i < 3; i++)
      rw[i] = in[i]->type.shape[r - 1], off[i] = a.packed[3 + i];
  } else {
    rw[0] = rw[1] = hh * d, rw[2] = hh * dv;
  }
  rw[3] = hh * dv;
  int64_t groups = lq * dv > 0 ? dy_tensor_numel(out[0]) / (lq * dv) : 0;
  const float *q = in[0]->data, *k = in[1]->data, *v = in[2]->data;
  const float *mask = n_in == 4 ? in[3]->data : NULL;
  float *o = out[0]->data;
  float *p = malloc(sizeof *p * (size_t)(lk > 0 ? lk : 1));
  if (!p)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "fused_attention: out of memory");
  /* tensor t's row i of group g = (b, h), h of hh, heads `width` apart */
#define ATT_OFF(t, width, len, g, i) \
  ((((g) / hh) * (len) + (i)) * rw[t] + off[t] + ((g) % hh) * (width))
  float scale = (float)a.scale;
  for (int64_t g = 0; g < groups; g++)
    for (int64_t i = 0; i < lq; i++) {
      const float *qi = q + ATT_OFF(0, d, lq, g, i);
      float mx = 0.0f;
      for (int64_t j = 0; j < lk; j++) {
        const float *kj = k + ATT_OFF(1, d, lk, g, j);
        double acc = 0.0;
        for (int64_t c = 0; c < d; c++)
          acc += (double)qi[c] * kj[c];
        p[j] = (float)acc * scale + (mask ? mask[i * lk + j] : 0.0f);
        mx = j == 0 || p[j] > mx ? p[j] : mx;
      }
      double sum = 0.0;
      for (int64_t j = 0; j < lk; j++) {
        p[j] = expf(p[j] - mx);
        sum += p[j];
      }
      float *oi = o + ATT_OFF(3, dv, lq, g, i);
      for (int64_t c = 0; c < dv; c++) {
        double acc = 0.0;
        for (int64_t j = 0; j < lk; j++)
          acc += (double)p[j] * v[ATT_OFF(2, dv, lk, g, j) + c];
        oi[c] = lk > 0 ? (float)(acc / sum) : 0.0f; /* no keys: matmul's zeros */
      }
    }
#undef ATT_OFF
  free(p);
  return DY_OK;
}
