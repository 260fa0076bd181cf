/* fuse_layernorm.c - the pass fuse-layernorm: a layer norm spelled out op
 * by op (what ONNX exporters before opset 17 write for LayerNorm, e.g.
 * PyTorch's nn.TransformerEncoder) becomes one layer_norm op.
 *
 * Requires: a verified Program. Matches, over the last axis of x (f32):
 *
 *   m = reduce_mean(x, axes = [-1], keepdim = 1)
 *   d = sub(x, m)
 *   q = pow(d, 2)  or  mul(d, d)
 *   v = reduce_mean(q, axes = [-1], keepdim = 1)
 *   s = sqrt(add(v, eps))            (eps a scalar constant >= 0)
 *   n = div(d, s)
 *   [n = mul(n, gamma)] [n = add(n, beta)]    (gamma, beta f32[C])
 *
 * -> layer_norm(x, gamma, beta) {begin_norm_axis = -1, epsilon = eps}
 * (gamma ones and beta zeros when absent), in the place of the last op.
 * m, q, v, the eps add and s must have no other reader (so they go);
 * d may (sub then stays for its other readers). The layer_norm emitter
 * does one vector sweep for the moments and one for the output instead of
 * seven passes over memory, and no powf. It runs before fuse-elementwise,
 * which would otherwise take the eps add and sqrt apart from the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_passes.h"

static int index_of(const dy_block *b, const dy_op *op) {
  for (int k = 0; k < b->n_ops; k++)
    if (b->ops[k] == op)
      return k;
  return -1;
}

/* Is op reduce_mean over the last axis only, keeping it? */
static bool mean_last(const dy_program *p, const dy_op *op) {
  if (!op || op->kind != DY_OP_REDUCE_MEAN)
    return false;
  dy_reduce_mean_attrs a = dy_reduce_mean_attrs_get(op);
  int r = p->vars[op->inputs[0]]->type.rank;
  return a.keepdim == 1 && a.n_axes == 1 && (a.axes[0] == -1 || a.axes[0] == r - 1);
}

/* op's sole reader when that is of kind k, else NULL. */
static dy_op *user_of(const dy_program *p, const dy_op *op, dy_op_kind k) {
  dy_op *u = op ? dy_program_sole_user(p, op->outputs[0]) : NULL;
  return u && u->kind == k ? u : NULL;
}

/* The other input of binary op u than var (NULL-safe: -1). */
static int other_input(const dy_op *u, int var) {
  if (!u || u->n_inputs != 2 || u->inputs[0] == u->inputs[1])
    return -1;
  return u->inputs[0] == var ? u->inputs[1] : u->inputs[0];
}

/* Is var an f32[c] (a 1-D per-column affine parameter)? */
static bool is_row_param(const dy_program *p, int var, int64_t c) {
  const dy_type *t = &p->vars[var]->type;
  return var >= 0 && t->dtype == DY_F32 && t->rank == 1 && t->shape[0] == c;
}

/* A new f32[c] constant filled with v, named after stem; -1 on OOM. */
static int const_row(dy_program *p, const char *stem, int64_t c, float v, dy_error *err) {
  dy_type t = {.dtype = DY_F32, .rank = 1, .shape = {c}};
  float *d = malloc(sizeof *d * (size_t)c);
  const char *name = d ? dy_program_fresh_name(p, stem) : NULL;
  int var = name ? dy_program_add_var(p, name, &t) : -1;
  if (d)
    for (int64_t i = 0; i < c; i++)
      d[i] = v;
  if (var >= 0 && dy_program_set_data(p, var, d, sizeof *d * (size_t)c, err))
    var = -1;
  free(d);
  return var;
}

/* Try the pattern starting at reduce_mean m; *done when rewritten. */
static dy_status fuse_one(dy_program *p, dy_op *m, bool training, bool *done,
                          dy_error *err) {
  *done = false;
  int x = m->inputs[0];
  const dy_type *xt = &p->vars[x]->type;
  if (xt->dtype != DY_F32 || xt->rank < 1 || !mean_last(p, m))
    return DY_OK;
  int64_t c = xt->shape[xt->rank - 1];
  const dy_type row = {.dtype = DY_F32, .rank = 1, .shape = {c}};
  if (c <= 0 || !dy_type_is_static(&row))
    return DY_OK; /* the normalised dim must be a number */
  dy_op *sub = user_of(p, m, DY_OP_SUB);
  if (!sub || sub->inputs[0] != x || sub->inputs[1] != m->outputs[0])
    return DY_OK;
  int d = sub->outputs[0];
  if (!dy_type_equal(&p->vars[d]->type, xt))
    return DY_OK;
  /* d's readers: the square and the division (and maybe others) */
  dy_op *sq = NULL, *div = NULL;
  dy_block *b = p->blocks[m->block]; /* the group lives in m's block */
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *u = b->ops[k];
    float two;
    if (!sq && u->kind == DY_OP_POW && u->inputs[0] == d &&
        dy_pass_scalar_f32(p, u->inputs[1], training, &two) && two == 2.0f)
      sq = u;
    else if (!sq && u->kind == DY_OP_MUL && u->inputs[0] == d && u->inputs[1] == d)
      sq = u;
    else if (!div && u->kind == DY_OP_DIV && u->inputs[0] == d)
      div = u;
  }
  if (!sq || !div || !dy_type_equal(&p->vars[sq->outputs[0]]->type, xt))
    return DY_OK;
  dy_op *v = dy_program_sole_user(p, sq->outputs[0]);
  if (!mean_last(p, v))
    return DY_OK;
  dy_op *add = user_of(p, v, DY_OP_ADD);
  float eps;
  if (!add || !dy_pass_scalar_f32(p, other_input(add, v->outputs[0]), training, &eps) ||
      !(eps >= 0.0f))
    return DY_OK;
  dy_op *sqrt_op = user_of(p, add, DY_OP_SQRT);
  if (!sqrt_op || div->inputs[1] != sqrt_op->outputs[0] ||
      dy_program_sole_user(p, sqrt_op->outputs[0]) != div ||
      !dy_type_equal(&p->vars[div->outputs[0]]->type, xt))
    return DY_OK;
  /* the optional affine part */
  dy_op *last = div, *mul = NULL, *badd = NULL;
  int gamma = -1, beta = -1;
  dy_op *u = user_of(p, div, DY_OP_MUL);
  int g = other_input(u, div->outputs[0]);
  if (u && is_row_param(p, g, c) && dy_type_equal(&p->vars[u->outputs[0]]->type, xt)) {
    mul = last = u;
    gamma = g;
  }
  u = user_of(p, last, DY_OP_ADD);
  int be = other_input(u, last->outputs[0]);
  if (u && is_row_param(p, be, c) && dy_type_equal(&p->vars[u->outputs[0]]->type, xt)) {
    badd = last = u;
    beta = be;
  }
  char stem[300];
  if (gamma < 0) {
    snprintf(stem, sizeof stem, "%s.ln_scale", p->vars[last->outputs[0]]->name);
    if ((gamma = const_row(p, stem, c, 1.0f, err)) < 0)
      return err->status ? err->status
                         : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-layernorm");
  }
  if (beta < 0) {
    snprintf(stem, sizeof stem, "%s.ln_bias", p->vars[last->outputs[0]]->name);
    if ((beta = const_row(p, stem, c, 0.0f, err)) < 0)
      return err->status ? err->status
                         : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-layernorm");
  }
  int ins[3] = {x, gamma, beta}, out = last->outputs[0];
  dy_attr attrs[DY_LAYER_NORM_NATTRS];
  int n_attrs = dy_layer_norm_attrs_put(&(dy_layer_norm_attrs){
      .given = DY_GIVEN_ALL, .begin_norm_axis = -1, .epsilon = (double)eps}, attrs);
  int at = index_of(b, last);
  dy_op *ln = dy_program_append_op(p, m->block, DY_OP_LAYER_NORM, ins, 3, &out, 1, attrs, n_attrs,
                                   last->loc);
  const dy_op *srcs[9] = {m, sub, sq, v, add, sqrt_op, div, mul, badd};
  int ns = 7;
  if (mul)
    srcs[ns++] = mul;
  if (badd)
    srcs[ns++] = badd;
  if (!ln || !dy_op_set_srcs(p, ln, srcs, ns))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-layernorm: out of memory");
  /* the layer norm replaces the last op; the others are left to dce */
  dy_block_remove_op(b, at);
  dy_block_move_last_to(b, at);
  *done = true;
  return DY_OK;
}

static dy_status fuse_layernorm_in(dy_program *p, int bi, bool *changed, const void *ctx,
                                   dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  const bool training = dy_program_is_training(p);
  for (int k = 0; k < b->n_ops; k++) {
    if (b->ops[k]->kind != DY_OP_REDUCE_MEAN)
      continue;
    bool done;
    dy_status s = fuse_one(p, b->ops[k], training, &done, err);
    if (s)
      return s;
    if (done)
      *changed = true;
  }
  return DY_OK;
}

dy_status dy_pass_fuse_layernorm(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, fuse_layernorm_in, NULL, changed, err); /* new gamma/beta: captures */
}
