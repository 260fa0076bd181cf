/* infer_fused.c - inference for the fused ops (ops_fused.def). */
#include <string.h>

#include "dy_ir.h"

/* ---- the tables of acts.def ---- */

static const char *const act_names[DY_ACTIVATION_COUNT] = {
    "",
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) #name,
#include "acts.def"
#undef DY_ACT
};

int dy_act_find(const char *s) {
  if (!s)
    return DY_ACTIVATION_NONE;
  for (int i = 0; i < DY_ACTIVATION_COUNT; i++)
    if (strcmp(s, act_names[i]) == 0)
      return i;
  return -1;
}

const char *dy_act_name(dy_activation a) {
  return (unsigned)a < DY_ACTIVATION_COUNT ? act_names[a] : NULL;
}

static const struct {
  const char *name;
  int arity;
} ew_tokens[DY_EWTOK_COUNT] = {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) {#token, ARITY},
#include "acts.def"
#undef DY_EW
};

int dy_ew_token_find(const char *s, size_t len) {
  for (int i = 0; i < DY_EWTOK_COUNT; i++)
    if (strlen(ew_tokens[i].name) == len && strncmp(s, ew_tokens[i].name, len) == 0)
      return i;
  return -1;
}

int dy_ew_token_arity(dy_ew_token t) {
  return (unsigned)t < DY_EWTOK_COUNT ? ew_tokens[t].arity : 0;
}

const char *dy_ew_token_name(dy_ew_token t) {
  return (unsigned)t < DY_EWTOK_COUNT ? ew_tokens[t].name : NULL;
}

/* The act attribute names an activation of acts.def. */
static dy_status check_act(const dy_op *op, const char *act, dy_error *err) {
  if (dy_act_find(act) < 0)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: unknown activation '%s'",
                       dy_op_name(op->kind), act);
  return DY_OK;
}

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
  if ((s = dy_fused_matmul_attrs_of(op, &a, err)) || (s = check_act(op, a.act, err)))
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
      int t = dy_ew_token_find(s, len);
      int arity = t >= 0 ? dy_ew_token_arity((dy_ew_token)t) : 0;
      ok = arity > 0 && depth >= arity;
      if (ok)
        depth -= arity - 1;
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

/* A conv's bias b: one f32 value per channel (o of them), [O], [O,1,1] or
 * [1,O,1,1]. */
static dy_status check_conv_bias(const dy_op *op, const dy_type *b, int64_t o, dy_error *err) {
  bool ok = b->dtype == DY_F32 && dy_type_numel(b) == o && b->rank >= 1 && b->rank <= 4;
  /* O sits at dim rank-3 unless rank is 1 */
  if (ok && b->rank > 1)
    ok = b->rank >= 3 && b->shape[b->rank - 3] == o;
  if (ok)
    return DY_OK;
  char t[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                     "%s: bias %s is not one value per channel (%lld)", dy_op_name(op->kind),
                     dy_type_str(b, t, sizeof t), (long long)o);
}

/* act(conv2d(x, w) + b + r): conv2d's rule, then one bias value per
 * channel, and a residual r of the output's type. */
int dy_winograd_tile(const char *algo) {
  if (!algo)
    return 0;
  if (strcmp(algo, "winograd2") == 0)
    return 2;
  if (strcmp(algo, "winograd4") == 0 || strcmp(algo, "winograd") == 0)
    return 4;
  return strcmp(algo, "winograd6") == 0 ? 6 : 0;
}

dy_status dy_infer_fused_conv2d(const dy_op *op, const dy_type *in, int n,
                                dy_type *out, dy_error *err) {
  if (n < 2 || n > 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d: takes 2 to 4 inputs, got %d", n);
  dy_status s = dy_infer_conv2d(op, in, 2, out, err);
  if (s)
    return s;
  dy_fused_conv2d_attrs a;
  if ((s = dy_fused_conv2d_attrs_of(op, &a, err)) || (s = check_act(op, a.act, err)))
    return s;
  if (*a.algo) {
    /* Winograd F(m x m, 3x3): 3x3 kernels, strides 1, dilations 1, groups 1;
     * small: the direct kernel of codegen/kernels/emit_conv_small.c, any kernel size */
    dy_conv2d_attrs ca = dy_conv2d_attrs_get(op);
    dy_conv_geom g = dy_conv2d_geom(&in[0], &in[1], &ca);
    bool small = strcmp(a.algo, "small") == 0, gemv = strcmp(a.algo, "gemv") == 0;
    if (!small && !gemv && !dy_winograd_tile(a.algo))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "fused_conv2d: unknown algo '%s' (\"\", \"winograd2\", \"winograd4\", "
                         "\"winograd6\", \"winograd\", \"small\" or \"gemv\")", a.algo);
    /* gemv: one window, the whole input (the pass conv-gemv) */
    if (gemv && (g.groups != 1 || g.dh != 1 || g.dw != 1 || g.pt || g.pl || g.pb || g.pr ||
                 g.kh != g.h || g.kw != g.w || n == 4 || in[0].dtype != DY_F32 ||
                 in[1].dtype != DY_F32))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "fused_conv2d: algo gemv needs f32, the kernel the size of the input, "
                         "no padding, dilations 1, groups 1, no residual");
    if (small && (g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.groups != 1 ||
                  in[0].dtype != DY_F32 || in[1].dtype != DY_F32))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "fused_conv2d: algo small needs f32, strides 1, dilations 1, groups 1");
    if (!small && !gemv && (g.kh != 3 || g.kw != 3 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 ||
                   g.groups != 1 || in[0].dtype != DY_F32))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "fused_conv2d: algo winograd needs an f32 3x3 kernel, strides 1, "
                         "dilations 1, groups 1");
  }
  if (n == 4 && !dy_type_equal(&in[3], out)) {
    char t[128], u[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "fused_conv2d: residual %s is not of the output's type %s",
                       dy_type_str(&in[3], t, sizeof t), dy_type_str(out, u, sizeof u));
  }
  return n >= 3 ? check_conv_bias(op, &in[2], out->shape[1], err) : DY_OK;
}

/* fused_dwpw: the depthwise conv's rule on (x, wd), then a 1x1 conv's on
 * its result t; biases one value per channel of t and of the output. */
static dy_status infer_dwpw(const dy_op *op, const dy_type *in, int n, dy_type *out,
                            dy_error *err) {
  const char *name = dy_op_name(op->kind); /* fused_irb runs it on its e */
  dy_type t;
  dy_status s = dy_infer_conv2d(op, in, 2, &t, err);
  if (s)
    return s;
  dy_fused_dwpw_attrs a;
  if ((s = dy_fused_dwpw_attrs_of(op, &a, err)) || (s = check_act(op, a.act_dw, err)) ||
      (s = check_act(op, a.act, err)))
    return s;
  const dy_type *wp = &in[3];
  char u[128], v[128];
  if (in[0].dtype != DY_F32 || a.groups != in[0].shape[1] || in[1].shape[0] != a.groups)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: the first conv must be f32 depthwise (groups = channels = "
                       "%lld), got groups %lld",
                       name, (long long)in[0].shape[1], (long long)a.groups);
  if (wp->dtype != DY_F32 || wp->rank != 4 || wp->shape[1] != t.shape[1] || wp->shape[2] != 1 ||
      wp->shape[3] != 1)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: pointwise weight %s is not [O, %lld, 1, 1]", name,
                       dy_type_str(wp, u, sizeof u), (long long)t.shape[1]);
  *out = t;
  out->shape[1] = wp->shape[0];
  if ((s = check_conv_bias(op, &in[2], t.shape[1], err)) ||
      (s = check_conv_bias(op, &in[4], out->shape[1], err)))
    return s;
  if (n == 6 && !dy_type_equal(&in[5], out))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: residual %s is not of the output's type %s", name,
                       dy_type_str(&in[5], u, sizeof u), dy_type_str(out, v, sizeof v));
  return DY_OK;
}

/* The mask in[3], if any, is [lq, lk]. */
static dy_status check_mask(const dy_op *op, const dy_type *in, int n, int64_t lq, int64_t lk,
                            dy_error *err) {
  if (n == 4 && (in[3].rank != 2 || in[3].shape[0] != lq || in[3].shape[1] != lk)) {
    char t0[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "fused_attention: mask %s is not [queries, keys]",
                       dy_type_str(&in[3], t0, sizeof t0));
  }
  return DY_OK;
}

/* The packed form: q, k, v rows [B, L, W] (B optional), packed = (H, D,
 * Dv, q, k, v offsets) -> [B, Lq, H, Dv]; each head's features within
 * the rows (static widths). */
static dy_status infer_packed(const dy_op *op, const dy_fused_attention_attrs *a,
                              const dy_type *in, int n, dy_type *out, dy_error *err) {
  const dy_type *q = &in[0], *k = &in[1], *v = &in[2];
  const int64_t *pk = a->packed;
  int r = q->rank;
  bool ok = a->n_packed == 6 && strcmp(a->layout, "lhd") == 0 && pk[0] > 0 && pk[1] > 0 &&
            pk[2] > 0 && pk[3] >= 0 && pk[4] >= 0 && pk[5] >= 0;
  if (!ok)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_attention: packed is (heads, D, Dv, q, k, v offsets), "
                       "positive sizes, with layout \"lhd\"");
  ok = (r == 2 || r == 3) && k->rank == r && v->rank == r && k->shape[r - 2] == v->shape[r - 2] &&
       (r == 2 || (q->shape[0] == k->shape[0] && q->shape[0] == v->shape[0]));
  /* each head's features within its rows */
  const int64_t need[3] = {pk[3] + pk[0] * pk[1], pk[4] + pk[0] * pk[1], pk[5] + pk[0] * pk[2]};
  for (int i = 0; ok && i < 3; i++)
    ok = in[i].shape[r - 1] >= need[i];
  if (!ok) {
    char t0[128], t1[128], t2[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "fused_attention: rows q %s, k %s, v %s do not hold %lld heads of "
                       "%lld, %lld features at %lld, %lld, %lld",
                       dy_type_str(q, t0, sizeof t0), dy_type_str(k, t1, sizeof t1),
                       dy_type_str(v, t2, sizeof t2), (long long)pk[0], (long long)pk[1],
                       (long long)pk[2], (long long)pk[3], (long long)pk[4], (long long)pk[5]);
  }
  dy_status s = check_mask(op, in, n, q->shape[r - 2], k->shape[r - 2], err);
  if (s)
    return s;
  *out = *q;
  out->rank = r + 1;
  out->shape[r - 1] = pk[0];
  out->shape[r] = pk[2];
  return DY_OK;
}

dy_status dy_infer_fused_dwpw(const dy_op *op, const dy_type *in, int n, dy_type *out,
                              dy_error *err) {
  if (n < 5 || n > 6)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_dwpw: takes 5 or 6 inputs, got %d", n);
  return infer_dwpw(op, in, n, out, err);
}

/* fused_irb: the 1x1 expand conv's rule on (x, we, be) gives e, then
 * fused_dwpw's on (e, wd, bd, wp, bp[, r]). */
dy_status dy_infer_fused_irb(const dy_op *op, const dy_type *in, int n, dy_type *out,
                             dy_error *err) {
  if (n < 7 || n > 8)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_irb: takes 7 or 8 inputs, got %d", n);
  dy_fused_irb_attrs a;
  dy_status s;
  if ((s = dy_fused_irb_attrs_of(op, &a, err)) || (s = check_act(op, a.act_e, err)))
    return s;
  const dy_type *x = &in[0], *we = &in[1];
  char u[128];
  if (x->dtype != DY_F32 || x->rank != 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_irb: input %s is not an f32 [N, C, H, W]", dy_type_str(x, u, sizeof u));
  if (we->dtype != DY_F32 || we->rank != 4 || we->shape[1] != x->shape[1] || we->shape[2] != 1 ||
      we->shape[3] != 1 || we->shape[0] < 1)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "fused_irb: expand weight %s is not [E, %lld, 1, 1]",
                       dy_type_str(we, u, sizeof u), (long long)x->shape[1]);
  if ((s = check_conv_bias(op, &in[2], we->shape[0], err)))
    return s;
  dy_type rest[6];
  rest[0] = *x;
  rest[0].shape[1] = we->shape[0];
  for (int i = 3; i < n; i++)
    rest[i - 2] = in[i];
  return infer_dwpw(op, rest, n - 2, out, err);
}

/* softmax(q k^T * scale + mask) v per group; layout "" ([G.., L, D]) or
 * "lhd" ([L, H, D] or [B, L, H, D]). Every group dim of q, k and v must agree exactly (no
 * broadcasting), and k and v have the same number of keys. */
dy_status dy_infer_fused_attention(const dy_op *op, const dy_type *in, int n,
                                   dy_type *out, dy_error *err) {
  if (n < 3 || n > 4)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_attention: takes 3 or 4 inputs, got %d", n);
  dy_fused_attention_attrs a;
  dy_status s = dy_fused_attention_attrs_of(op, &a, err);
  if (s)
    return s;
  bool lhd = strcmp(a.layout, "lhd") == 0;
  if (!lhd && a.layout[0])
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_attention: unknown layout '%s' (\"\" or \"lhd\")", a.layout);
  for (int i = 0; i < n; i++)
    if (in[i].dtype != DY_F32)
      return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                         "fused_attention: input %d is not f32", i);
  const dy_type *q = &in[0], *k = &in[1], *v = &in[2];
  int r = q->rank;
  if (a.n_packed)
    return infer_packed(op, &a, in, n, out, err);
  /* the axis of the sequence and of the group in each layout */
  int ls = lhd ? r - 3 : r - 2;
  bool ok = r >= 2 && (!lhd || r == 3 || r == 4) && k->rank == r && v->rank == r &&
            q->shape[r - 1] == k->shape[r - 1] && k->shape[ls] == v->shape[ls];
  for (int d = 0; ok && d < r - 1; d++)
    if (d != ls)
      ok = q->shape[d] == k->shape[d] && q->shape[d] == v->shape[d];
  if (!ok) {
    char t0[128], t1[128], t2[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "fused_attention: q %s, k %s, v %s do not agree (layout \"%s\")",
                       dy_type_str(q, t0, sizeof t0), dy_type_str(k, t1, sizeof t1),
                       dy_type_str(v, t2, sizeof t2), a.layout);
  }
  s = check_mask(op, in, n, q->shape[ls], k->shape[ls], err);
  if (s)
    return s;
  *out = *q;
  out->shape[r - 1] = v->shape[r - 1];
  return DY_OK;
}

void dy_fused_conv2d_pool_parts(const dy_op *op, dy_attr conv_attrs[7], dy_op *conv,
                                dy_attr pool_attrs[8], dy_op *pool) {
  dy_fused_conv2d_pool_attrs a = dy_fused_conv2d_pool_attrs_get(op);
  int n_conv = dy_fused_conv2d_attrs_put(&(dy_fused_conv2d_attrs){
      .given = DY_GIVEN_ALL, .strides = a.strides, .n_strides = a.n_strides,
      .paddings = a.paddings, .n_paddings = a.n_paddings, .dilations = a.dilations,
      .n_dilations = a.n_dilations, .groups = a.groups, .act = a.act, .alpha = a.alpha,
      .algo = ""}, conv_attrs);
  *conv = (dy_op){.id = op->id, .kind = DY_OP_FUSED_CONV2D, .inputs = op->inputs,
                  .n_inputs = op->n_inputs, .n_outputs = 1, .attrs = conv_attrs,
                  .n_attrs = n_conv, .loc = op->loc};
  static const int64_t no_pad[2] = {0, 0};
  int n_pool = dy_pool2d_attrs_put(&(dy_pool2d_attrs){
      .given = DY_GIVEN_ALL, .pooling_type = "max", .ksize = a.pool_ksize,
      .n_ksize = a.n_pool_ksize, .strides = a.pool_strides, .n_strides = a.n_pool_strides,
      .paddings = no_pad, .n_paddings = 2, .ceil_mode = 0, .exclusive = 1, .global_pooling = 0,
      .adaptive = 0}, pool_attrs);
  *pool = (dy_op){.id = op->id, .kind = DY_OP_POOL2D, .n_inputs = 1, .n_outputs = 1,
                  .attrs = pool_attrs, .n_attrs = n_pool, .loc = op->loc};
}

/* max pool of act(conv2d(x, w) + b): fused_conv2d's rule (2 or 3 inputs)
 * with the limits of its "small" kernel, then pool2d's on its output. */
dy_status dy_infer_fused_conv2d_pool(const dy_op *op, const dy_type *in, int n,
                                     dy_type *out, dy_error *err) {
  if (n < 2 || n > 3)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d_pool: takes 2 or 3 inputs, got %d", n);
  dy_fused_conv2d_pool_attrs a;
  dy_status s = dy_fused_conv2d_pool_attrs_of(op, &a, err);
  if (s || (s = dy_infer_fused_conv2d(op, in, n, out, err)))
    return s;
  dy_conv2d_attrs ca = dy_conv2d_attrs_get(op);
  dy_conv_geom g = dy_conv2d_geom(&in[0], &in[1], &ca);
  if (g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.groups != 1 ||
      in[0].dtype != DY_F32 || in[1].dtype != DY_F32 || in[0].rank != 4 || in[0].shape[1] < 1 ||
      in[0].shape[2] < 1 || in[0].shape[3] < 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d_pool: needs f32, a static image, strides 1, dilations 1, "
                       "groups 1");
  if (a.n_pool_ksize != 2 || a.n_pool_strides != 2 || a.pool_ksize[0] < 1 ||
      a.pool_ksize[1] < 1 || a.pool_strides[0] < 1 || a.pool_strides[1] < 1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "fused_conv2d_pool: pool_ksize and pool_strides must be two positive "
                       "ints");
  dy_attr cpa[7], pa[8];
  dy_op conv, pool;
  dy_fused_conv2d_pool_parts(op, cpa, &conv, pa, &pool);
  dy_type t = *out;
  return dy_infer_pool2d(&pool, &t, 1, out, err);
}
