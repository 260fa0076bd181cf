/* grad_fused.c - gradient rules of the fused family (ops_fused.def); the
 * contract is in dy_grad.h.
 *
 * A fused op is differentiated as the ops it was made of: the rule
 * recomputes the intermediate values with those ops (the fused op keeps
 * only its result) and runs their own rules backwards, so each part's
 * derivative is written once, in its own rule:
 *
 *   fused_matmul(x, w[, b])   z = matmul(x, w) [+ b]; out = act(z): the
 *                             act's op rule (acts.def FROM, e.g. relu6 is
 *                             clip 0..6), then add's and matmul's
 *   fused_conv2d(x, w[, b[, r]])  the same with conv2d (b reshaped to
 *                             [O,1,1]); the residual r gets dz as it is
 *   fused_conv2d_pool(x, w[, b])  pool2d's rule, then fused_conv2d's
 *   fused_elementwise(in...)  the postfix expr replayed with each token's
 *                             FROM op, then their rules in reverse order,
 *                             the gradients of a value used twice summed
 */
#include <stdlib.h>
#include <string.h>

#include "grad_internal.h"

/* The rules a part may run: every differentiable op's but the fused ones'
 * (a fused op is made of unfused ops), cond's and while's (a part owns no
 * blocks; their rules are grad.c's, which walk blocks), from ops.def as
 * grad.c's table is. So this file sits above the other families' rules
 * and below grad.c. */
#define PART_RULE(NAME, name, flags)                                      \
  (((flags) & (DY_OPF_NODIFF | DY_OPF_FUSED)) || DY_OP_##NAME == DY_OP_COND || \
           DY_OP_##NAME == DY_OP_WHILE ? (dy_grad_fn)0 : dy_grad_##name)
static const dy_grad_fn part_rules[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) \
  [DY_OP_##NAME] = PART_RULE(NAME, name, flags),
#include "ops.def"
#undef DY_OP
};
#undef PART_RULE

/* ---- activations ---- */

static const dy_op_kind act_from[DY_ACTIVATION_COUNT] = {
    DY_OP_COUNT, /* none */
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) DY_OP_##FROM,
#include "acts.def"
#undef DY_ACT
};

/* Run the rule of one op (kind, attrs) of a fused op's parts: in[] its
 * inputs, out its recomputed output, g the gradient of out; fills d[]
 * for the inputs in need[]. Errors name the fused op (b->fwd). */
static void part_rule(dy_gb *b, dy_op_kind kind, const dy_attr *attrs, int n_attrs,
                      const int *in, int out, int g, const bool *need, int *d) {
  int n = dy_op_info_of(kind)->n_in;
  for (int i = 0; i < n; i++)
    d[i] = -1;
  if (dy_gb_status(b) || g < 0)
    return;
  const dy_grad_fn rule = part_rules[kind];
  if (!rule) {
    dy_gb_fail(b, DY_STATUS_INTERNAL, "its part %s has no gradient", dy_op_name(kind));
    return;
  }
  dy_op part = {.id = -1, .kind = kind, .n_inputs = n, .n_outputs = 1,
                .attrs = (dy_attr *)attrs, .n_attrs = n_attrs, .loc = b->fwd ? b->fwd->loc
                                                                             : (dy_srcloc){0}};
  dy_status s = rule(b, &part, in, &out, &g, need, d);
  if (s && !dy_gb_status(b))
    dy_gb_fail(b, s, "its part %s failed", dy_op_name(kind));
}

/* The gradient of z where out = act(z) (alpha: the act's parameter). */
static int act_backward(dy_gb *b, const char *act, double alpha, int z, int out, int g) {
  int a = dy_act_find(act);
  if (a < 0)
    return dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT, "unknown activation '%s'", act);
  if (a == DY_ACTIVATION_NONE)
    return g;
  dy_op_kind k = act_from[a];
  dy_attr at[2];
  int na = 0;
  if (k == DY_OP_CLIP) /* relu6 */
    na = dy_clip_attrs_put(&(dy_clip_attrs){.given = DY_GIVEN_ALL, .min = 0.0, .max = 6.0}, at);
  else if (k == DY_OP_LEAKY_RELU)
    na = dy_leaky_relu_attrs_put(&(dy_leaky_relu_attrs){.given = DY_GIVEN_ALL, .alpha = alpha},
                                 at);
  else if (k == DY_OP_GELU)
    na = dy_gelu_attrs_put(&(dy_gelu_attrs){.given = DY_GIVEN_ALL, .approximate = 0}, at);
  int d;
  part_rule(b, k, at, na, &z, out, g, (const bool[]){true}, &d);
  return d;
}

/* ---- fused_matmul, fused_conv2d ---- */

/* After the activation: the bias's share of dz (summed to its shape) and
 * the matmul's or conv's (its own rule), into dx. */
static dy_status linear_backward(dy_gb *b, const dy_op *op, const int *x, const bool *need,
                                 int *dx, int lin, int bias, int dz) {
  if (op->n_inputs >= 3 && need[2]) {
    int d[2];
    part_rule(b, DY_OP_ADD, NULL, 0, (const int[]){lin, bias}, -1, dz,
              (const bool[]){false, true}, d);
    dx[2] = dy_gb_reshape_as(b, d[1], x[2]);
  }
  if (need[0] || need[1]) {
    dy_grad_fn rule = op->kind == DY_OP_FUSED_MATMUL ? dy_grad_matmul : dy_grad_conv2d;
    dy_status s = rule(b, op, x, &lin, &dz, need, dx);
    if (s && !dy_gb_status(b))
      dy_gb_fail(b, s, "its %s part failed",
                 op->kind == DY_OP_FUSED_MATMUL ? "matmul" : "conv2d");
  }
  return dy_gb_status(b);
}

DY_GRAD(fused_matmul) {
  dy_fused_matmul_attrs a = dy_fused_matmul_attrs_get(op);
  bool has_b = op->n_inputs == 3;
  int lin = dy_gb_matmul(b, x[0], x[1], a.transpose_x != 0, a.transpose_y != 0);
  int z = has_b ? dy_gb_add(b, lin, x[2]) : lin;
  int dz = act_backward(b, a.act, a.alpha, z, y[0], dy[0]);
  return linear_backward(b, op, x, need, dx, lin, has_b ? x[2] : -1, dz);
}

DY_GRAD(fused_conv2d) {
  dy_fused_conv2d_attrs a = dy_fused_conv2d_attrs_get(op);
  dy_attr ca[DY_CONV2D_NATTRS];
  int n_ca = dy_conv2d_attrs_put(&(dy_conv2d_attrs){
      .given = DY_GIVEN_ALL, .strides = a.strides, .n_strides = a.n_strides,
      .paddings = a.paddings, .n_paddings = a.n_paddings, .dilations = a.dilations,
      .n_dilations = a.n_dilations, .groups = a.groups}, ca);
  int lin = dy_gb_op(b, DY_OP_CONV2D, x, 2, ca, n_ca), bias = -1, z = lin;
  if (op->n_inputs >= 3) {
    bias = x[2];
    dy_type tb = b->type(b, bias);
    if (tb.rank == 1) { /* [O] -> [O,1,1], to broadcast over [N,O,H,W] */
      int64_t s[3] = {tb.shape[0], 1, 1};
      dy_attr a_reshape[DY_RESHAPE_NATTRS];
      int n_a_reshape = dy_reshape_attrs_put(&(dy_reshape_attrs){
          .given = DY_GIVEN_ALL, .shape = s, .n_shape = 3}, a_reshape);
      bias = dy_gb_op1(b, DY_OP_RESHAPE, bias, a_reshape, n_a_reshape);
    }
    z = dy_gb_add(b, lin, bias);
  }
  int zr = op->n_inputs == 4 ? dy_gb_add(b, z, x[3]) : z;
  int dz = act_backward(b, a.act, a.alpha, zr, y[0], dy[0]);
  if (op->n_inputs == 4 && need[3])
    dx[3] = dz; /* the residual's share: d(z + r)/dr = 1, same shape */
  return linear_backward(b, op, x, need, dx, lin, bias, dz);
}

/* fused_conv2d_pool: z = fused_conv2d(x, w[, b]) recomputed, pool2d's
 * rule from y back to z, then fused_conv2d's */
DY_GRAD(fused_conv2d_pool) {
  dy_attr ca[7], pa[8];
  dy_op conv, pool;
  dy_fused_conv2d_pool_parts(op, ca, &conv, pa, &pool);
  int z = dy_gb_op(b, DY_OP_FUSED_CONV2D, x, op->n_inputs, ca, 7), dz[1];
  part_rule(b, DY_OP_POOL2D, pa, 8, &z, y[0], dy[0], (const bool[]){true}, dz);
  if (dy_gb_status(b))
    return dy_gb_status(b);
  return dy_grad_fused_conv2d(b, &conv, x, &z, dz, need, dx);
}

/* ---- fused_elementwise ---- */

static const dy_op_kind ew_from[DY_EWTOK_COUNT] = {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) DY_OP_##FROM,
#include "acts.def"
#undef DY_EW
};

#define EW_MAX 64 /* values of one expression (inputs, constants, steps) */

DY_GRAD(fused_elementwise) {
  const char *expr = dy_fused_elementwise_attrs_get(op).expr;
  /* forward: every value of the expression; step v made value v from
   * kind[v] over arg[v][] (kind DY_OP_COUNT: an input or a constant) */
  int val[EW_MAX], arg[EW_MAX][2], input_of[EW_MAX], nv = 0, stack[EW_MAX], depth = 0;
  dy_op_kind kind[EW_MAX];
  for (const char *s = expr; s && *s && !dy_gb_status(b);) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    size_t len = strcspn(s, " ");
    if (nv == EW_MAX) {
      dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "expression \"%s\" too long", expr);
      break;
    }
    kind[nv] = DY_OP_COUNT;
    input_of[nv] = -1;
    if (s[0] == '$') {
      input_of[nv] = s[1] - '0';
      val[nv] = x[input_of[nv]];
    } else if (s[0] == '#') {
      val[nv] = dy_gb_const(b, strtod(s + 1, NULL));
    } else {
      int t = dy_ew_token_find(s, len);
      int ar = t >= 0 ? dy_ew_token_arity((dy_ew_token)t) : 0;
      if (ar < 1 || depth < ar) {
        dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT, "bad token '%.*s' in \"%s\"", (int)len, s,
                   expr);
        break;
      }
      kind[nv] = ew_from[t];
      depth -= ar;
      for (int j = 0; j < 2; j++)
        arg[nv][j] = j < ar ? stack[depth + j] : -1;
      int in[2] = {val[arg[nv][0]], ar == 2 ? val[arg[nv][1]] : -1};
      val[nv] = dy_gb_op(b, kind[nv], in, ar, NULL, 0);
    }
    stack[depth++] = nv++;
    s += len;
  }
  if (depth != 1 && !dy_gb_status(b))
    dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT, "\"%s\" leaves %d values", expr, depth);
  if (dy_gb_status(b))
    return dy_gb_status(b);

  /* backward: gradients of the values, from the result down */
  int g[EW_MAX];
  for (int v = 0; v < nv; v++)
    g[v] = -1;
  g[stack[0]] = dy_gb_sum_to(b, dy[0], val[stack[0]]);
  for (int v = nv - 1; v >= 0 && !dy_gb_status(b); v--) {
    if (kind[v] == DY_OP_COUNT || g[v] < 0)
      continue;
    int ar = dy_op_info_of(kind[v])->n_in, in[2], d[2];
    bool nd[2];
    for (int j = 0; j < ar; j++) {
      int u = arg[v][j];
      in[j] = val[u];
      nd[j] = kind[u] != DY_OP_COUNT || input_of[u] >= 0; /* not a constant */
    }
    part_rule(b, kind[v], NULL, 0, in, val[v], g[v], nd, d);
    for (int j = 0; j < ar; j++) {
      int u = arg[v][j];
      if (d[j] >= 0)
        g[u] = g[u] < 0 ? d[j] : dy_gb_add(b, g[u], d[j]);
    }
  }
  for (int v = 0; v < nv; v++) {
    int i = input_of[v];
    if (i >= 0 && need[i] && g[v] >= 0) {
      int gi = dy_gb_sum_to(b, g[v], x[i]);
      dx[i] = dx[i] < 0 ? gi : dy_gb_add(b, dx[i], gi);
    }
  }
  return dy_gb_status(b);
}
