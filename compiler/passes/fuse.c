/* fuse.c - fusion passes.
 *
 * Requires: a verified Program. Each rewrite replaces a group of ops whose
 * intermediate results nobody else reads (one use, not fetched) by one op,
 * so the intermediates never reach memory:
 *
 *   fuse-transpose    matmul(transpose(x, swap last two dims), w)
 *                     -> matmul(x, w) with transpose_x flipped (same for w)
 *   fuse-matmul       act(matmul(x, w) + b), b a constant with one value per
 *                     output column, act optional (an activation of
 *                     ir/acts.def: relu, relu6 = clip(0, 6), ...)
 *                     -> fused_matmul(x, w, b) {act}
 *   fuse-conv         act(conv2d(x, w) + b), b one value per channel
 *                     -> fused_conv2d(x, w, b) {conv attributes, act}
 *   fuse-residual     act(conv(x, w[, b]) + r), conv a conv2d or a
 *                     fused_conv2d without activation, r any tensor of
 *                     the result's type (ResNet's shortcut), act optional
 *                     -> fused_conv2d(x, w, b, r) {act}: the residual is
 *                     added in the GEMM's epilogue, not in a pass over
 *                     memory of its own (b: zeros when the conv had none)
 *   fuse-elementwise  a tree of f32 elementwise ops (the tokens of
 *                     ir/acts.def) whose intermediates all have the
 *                     result's shape, reading at most three tensors
 *                     (scalar constants are inlined; in a training
 *                     Program not a trainable or updated scalar:
 *                     dy_pass_var_is_constant)
 *                     -> fused_elementwise(...) {expr}, one loop
 *
 * The fused op takes the place of the group's last op, so every input is
 * still defined before it. Ops left unread are DCE's to remove. Every
 * block is rewritten, a loop body's and a branch's too (dy_pass_each_block):
 * a group's intermediates have one reader, and a var read inside a
 * sub-block is also its control op's input, so a group never spans a
 * block boundary; what a rewrite reads from outside (fuse-residual's zero
 * bias, fuse-transpose's untransposed operand) becomes a capture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_passes.h"

static int index_of(const dy_block *b, const dy_op *op) {
  for (int k = 0; k < b->n_ops; k++)
    if (b->ops[k] == op)
      return k;
  return -1;
}

static void remove_op(dy_block *b, const dy_op *op) {
  int k = index_of(b, op);
  if (k >= 0)
    dy_block_remove_op(b, k);
}

/* ---- fuse-transpose ---- */

/* Does transpose op t swap exactly the last two dims? */
static bool swaps_last_two(const dy_op *t) {
  dy_transpose_attrs a = dy_transpose_attrs_get(t);
  if (a.n_perm < 2)
    return false;
  int r = a.n_perm;
  for (int i = 0; i < r - 2; i++)
    if (a.perm[i] != i)
      return false;
  return a.perm[r - 2] == r - 1 && a.perm[r - 1] == r - 2;
}

static dy_status set_int_attr(dy_program *p, dy_op *op, const char *name, int64_t v) {
  for (int i = 0; i < op->n_attrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) {
      op->attrs[i].i = v;
      return DY_OK;
    }
  (void)p;
  return DY_STATUS_INTERNAL;
}

static dy_status fuse_transpose_in(dy_program *p, int bi, bool *changed, const void *ctx,
                                   dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *mm = b->ops[k];
    if (mm->kind != DY_OP_MATMUL && mm->kind != DY_OP_FUSED_MATMUL)
      continue;
    for (int side = 0; side < 2; side++) {
      const dy_op *t = dy_program_def(p, mm->inputs[side], NULL, NULL);
      if (!t || t->kind != DY_OP_TRANSPOSE || !swaps_last_two(t) ||
          p->vars[t->inputs[0]]->type.rank < 2)
        continue;
      const char *flag = side ? "transpose_y" : "transpose_x";
      dy_matmul_attrs ma = dy_matmul_attrs_get(mm); /* fused_matmul too */
      int64_t v = side ? ma.transpose_y : ma.transpose_x;
      if (set_int_attr(p, mm, flag, !v))
        return dy_error_at(err, mm, DY_STATUS_INTERNAL, "fuse-transpose: no '%s'", flag);
      mm->inputs[side] = t->inputs[0];
      *changed = true;
    }
  }
  return DY_OK;
}

dy_status dy_pass_fuse_transpose(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, fuse_transpose_in, NULL, changed, err);
}

/* ---- fuse-matmul ---- */

/* If op is an activation of acts.def (fused from its kind when WHEN
 * holds), its name and parameter. */
static bool epilogue_act(const dy_program *p, const dy_op *op, const char **act,
                         double *alpha) {
  (void)p;
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) \
  if (op->kind == DY_OP_##FROM && (WHEN)) {                  \
    *act = #name;                                            \
    *alpha = (double)(ALPHA);                                \
    return true;                                             \
  }
#include "acts.def"
#undef DY_ACT
  *alpha = 0;
  return false;
}

/* Is var a constant with one value per column of a result of type out? */
static bool is_column_bias(const dy_program *p, int var, const dy_type *out) {
  const dy_var *b = p->vars[var];
  if (!b->persistable || b->type.dtype != DY_F32 || out->rank < 1 || b->type.rank < 1 ||
      b->type.rank > out->rank)
    return false;
  int64_t n = out->shape[out->rank - 1];
  return n > 0 && b->type.shape[b->type.rank - 1] == n && dy_type_numel(&b->type) == n;
}

/* Is var a constant with one value per channel (dim 1) of a 4-D result:
 * [O], [O,1,1] or [1,O,1,1]? [O] only broadcasts right when H = W = 1, so
 * it must come shaped for the add to have been legal; accept what
 * broadcasts along dim 1. */
static bool is_channel_bias(const dy_program *p, int var, const dy_type *out) {
  const dy_var *b = p->vars[var];
  if (!b->persistable || b->type.dtype != DY_F32 || out->rank != 4)
    return false;
  int64_t o = out->shape[1];
  const dy_type *t = &b->type;
  if (dy_type_numel(t) != o)
    return false;
  return (t->rank == 3 && t->shape[0] == o) || (t->rank == 4 && t->shape[1] == o);
}

/* act(base(x, w) + b) -> fused(x, w, b) {base's attributes, act, alpha},
 * base being matmul (bias per column) or conv2d (bias per channel). */
typedef struct {
  dy_op_kind base, fused;
} bias_act;

static dy_status fuse_bias_act(dy_program *p, int bi, bool *changed, const void *ctx,
                               dy_error *err) {
  const dy_op_kind base = ((const bias_act *)ctx)->base, fused = ((const bias_act *)ctx)->fused;
  dy_block *b = p->blocks[bi];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *mm = b->ops[k];
    if (mm->kind != base || p->vars[mm->outputs[0]]->type.dtype != DY_F32)
      continue;
    const dy_type *mt = &p->vars[mm->outputs[0]]->type;
    dy_op *last = mm, *add = NULL, *act_op = NULL;
    int bias = -1;
    dy_op *u = dy_program_sole_user(p, mm->outputs[0]);
    if (u && u->kind == DY_OP_ADD) {
      int other = u->inputs[0] == mm->outputs[0] ? u->inputs[1] : u->inputs[0];
      bool ok = base == DY_OP_MATMUL ? is_column_bias(p, other, mt)
                                     : is_channel_bias(p, other, mt);
      if (u->inputs[0] != u->inputs[1] && ok &&
          dy_type_equal(&p->vars[u->outputs[0]]->type, mt)) {
        add = u;
        bias = other;
        last = add;
        u = dy_program_sole_user(p, add->outputs[0]);
      }
    }
    const char *act = "";
    double alpha = 0;
    if (u && u->n_inputs == 1 && epilogue_act(p, u, &act, &alpha)) {
      act_op = u;
      last = act_op;
    }
    if (last == mm)
      continue;
    /* the fused op replaces `last`: base's attributes plus act and alpha;
     * the base op and the add go */
    int ins[3] = {mm->inputs[0], mm->inputs[1], bias};
    dy_attr attrs[16];
    int na = 0;
    for (int i = 0; i < mm->n_attrs && na < 14; i++)
      attrs[na++] = mm->attrs[i];
    na += fused == DY_OP_FUSED_MATMUL
              ? dy_fused_matmul_attrs_put(&(dy_fused_matmul_attrs){
                    .given = DY_GIVEN(fused_matmul, act) | DY_GIVEN(fused_matmul, alpha),
                    .act = act, .alpha = alpha}, attrs + na)
              : dy_fused_conv2d_attrs_put(&(dy_fused_conv2d_attrs){
                    .given = DY_GIVEN(fused_conv2d, act) | DY_GIVEN(fused_conv2d, alpha),
                    .act = act, .alpha = alpha}, attrs + na);
    na = dy_pass_attrs_complete(fused, attrs, na, 16);
    int out = last->outputs[0];
    int at = index_of(b, last);
    dy_op *f = dy_program_append_op(p, bi, fused, ins, bias >= 0 ? 3 : 2, &out, 1, attrs,
                                    na, last->loc);
    const dy_op *srcs[3] = {mm, add ? add : act_op, act_op};
    if (!f || !dy_op_set_srcs(p, f, srcs, 1 + !!add + !!act_op))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fusion: out of memory");
    dy_block_remove_op(b, at);
    dy_block_move_last_to(b, at);
    remove_op(b, mm);
    if (add && add != last)
      remove_op(b, add);
    *changed = true;
    k = -1; /* indices moved; start over (groups are few) */
  }
  return DY_OK;
}

dy_status dy_pass_fuse_matmul(dy_program *p, bool *changed,
                              dy_error *err) {
  static const bias_act k = {DY_OP_MATMUL, DY_OP_FUSED_MATMUL};
  return dy_pass_each_block(p, fuse_bias_act, &k, changed, err);
}

dy_status dy_pass_fuse_conv(dy_program *p, bool *changed,
                            dy_error *err) {
  static const bias_act k = {DY_OP_CONV2D, DY_OP_FUSED_CONV2D};
  return dy_pass_each_block(p, fuse_bias_act, &k, changed, err);
}

/* ---- fuse-residual ---- */

/* The conv2d or plain fused_conv2d (no act, no residual yet) op is, or
 * NULL. */
static bool residual_base(const dy_program *p, const dy_op *op) {
  if (op->kind == DY_OP_FUSED_CONV2D) {
    const char *act = dy_fused_conv2d_attrs_get(op).act;
    if (op->n_inputs > 3 || (act && *act))
      return false;
  } else if (op->kind != DY_OP_CONV2D) {
    return false;
  }
  const dy_type *t = &p->vars[op->outputs[0]]->type;
  return t->dtype == DY_F32 && t->rank == 4;
}

static dy_status fuse_residual_in(dy_program *p, int bi, bool *changed, const void *ctx,
                                  dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *cv = b->ops[k];
    if (!residual_base(p, cv))
      continue;
    const dy_type *ct = &p->vars[cv->outputs[0]]->type;
    dy_op *add = dy_program_sole_user(p, cv->outputs[0]), *act_op = NULL;
    if (!add || add->kind != DY_OP_ADD || add->inputs[0] == add->inputs[1] ||
        !dy_type_equal(&p->vars[add->outputs[0]]->type, ct))
      continue;
    int r = add->inputs[0] == cv->outputs[0] ? add->inputs[1] : add->inputs[0];
    if (p->vars[r]->persistable || !dy_type_equal(&p->vars[r]->type, ct))
      continue; /* a constant is a bias (fuse-conv's) */
    const char *act = "";
    double alpha = 0;
    dy_op *u = dy_program_sole_user(p, add->outputs[0]), *last = add;
    if (u && u->n_inputs == 1 && epilogue_act(p, u, &act, &alpha)) {
      act_op = u;
      last = u;
    }
    /* the bias: the conv's, or zeros */
    int bias = cv->n_inputs == 3 ? cv->inputs[2] : -1;
    if (bias < 0) {
      int64_t o = ct->shape[1];
      dy_type bt = {.dtype = DY_F32, .rank = 3, .shape = {o, 1, 1}};
      char stem[300];
      snprintf(stem, sizeof stem, "%s.zero_bias", p->vars[cv->inputs[1]]->name);
      const char *name = dy_program_fresh_name(p, stem);
      bias = name ? dy_program_add_var(p, name, &bt) : -1;
      float *z = calloc((size_t)o, sizeof *z);
      dy_status s = z && bias >= 0 ? dy_program_set_data(p, bias, z, (size_t)o * 4, err)
                                   : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY,
                                                  "fuse-residual: out of memory");
      free(z);
      if (s)
        return s;
    }
    /* conv2d's attributes (a fused_conv2d's without its act), act, alpha */
    dy_attr attrs[16];
    int na = 0;
    for (int i = 0; i < cv->n_attrs && na < 13; i++)
      if (dy_attr_schema_find(DY_OP_CONV2D, cv->attrs[i].name))
        attrs[na++] = cv->attrs[i];
    /* act, alpha, then a fused_conv2d's algo (when it carries one) */
    unsigned algo = 0;
    if (cv->kind == DY_OP_FUSED_CONV2D)
      algo = dy_fused_conv2d_attrs_get(cv).given & DY_GIVEN(fused_conv2d, algo);
    const char *cv_algo = algo ? dy_fused_conv2d_attrs_get(cv).algo : "";
    na += dy_fused_conv2d_attrs_put(&(dy_fused_conv2d_attrs){
        .given = DY_GIVEN(fused_conv2d, act) | DY_GIVEN(fused_conv2d, alpha) | algo,
        .act = act, .alpha = alpha, .algo = cv_algo}, attrs + na);
    na = dy_pass_attrs_complete(DY_OP_FUSED_CONV2D, attrs, na, 16); /* a conv2d's: algo "" */
    int ins[4] = {cv->inputs[0], cv->inputs[1], bias, r};
    int out = last->outputs[0];
    int at = index_of(b, last);
    dy_op *f = dy_program_append_op(p, bi, DY_OP_FUSED_CONV2D, ins, 4, &out, 1, attrs, na,
                                    last->loc);
    const dy_op *srcs[3] = {cv, add, act_op};
    if (!f || !dy_op_set_srcs(p, f, srcs, act_op ? 3 : 2))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-residual: out of memory");
    dy_block_remove_op(b, at);
    dy_block_move_last_to(b, at);
    remove_op(b, cv);
    if (add != last)
      remove_op(b, add);
    *changed = true;
    k = -1; /* indices moved; start over */
  }
  return DY_OK;
}

dy_status dy_pass_fuse_residual(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, fuse_residual_in, NULL, changed, err);
}

/* ---- fuse-elementwise ---- */

/* The postfix token of an op the fused kernel can compute, or NULL. */
static const char *token_of(const dy_program *p, const dy_op *op) {
  if (p->vars[op->outputs[0]]->type.dtype != DY_F32)
    return NULL;
  for (int i = 0; i < op->n_inputs; i++)
    if (p->vars[op->inputs[i]]->type.dtype != DY_F32)
      return NULL;
  switch (op->kind) {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) \
  case DY_OP_##FROM: return #token;
#include "acts.def"
#undef DY_EW
  default: return NULL;
  }
}

typedef struct {
  dy_op *ops[32];   /* members */
  int n_ops;
  int ext[3];       /* external inputs ($0..$2) */
  int n_ext;
  char expr[1024];
  bool training;    /* dy_program_is_training: parameters are not literals */
} group;

/* Can the producer of var join the group rooted at an op of type out? */
static dy_op *joinable(const dy_program *p, int var, const dy_type *out) {
  dy_op *d = dy_program_def(p, var, NULL, NULL);
  if (!d || d->n_outputs != 1 || !token_of(p, d) || !dy_program_sole_user(p, var) ||
      !dy_type_equal(&p->vars[var]->type, out))
    return NULL;
  return d;
}

/* Append the postfix form of var (an input of the group at some op) to
 * g->expr, pulling producers in while the external inputs fit in three. */
static bool build(const dy_program *p, group *g, int var, const dy_type *out) {
  char tok[64];
  dy_op *d = joinable(p, var, out);
  if (d && g->n_ops < 32) {
    g->ops[g->n_ops++] = d;
    for (int i = 0; i < d->n_inputs; i++)
      if (!build(p, g, d->inputs[i], out))
        return false;
    snprintf(tok, sizeof tok, "%s ", token_of(p, d));
  } else {
    const dy_var *v = p->vars[var];
    if (dy_pass_var_is_constant(p, var, g->training) && dy_type_numel(&v->type) == 1 &&
        v->type.rank <= out->rank) {
      snprintf(tok, sizeof tok, "#%.9g ", ((const float *)v->data)[0]);
    } else {
      int slot = -1;
      for (int i = 0; i < g->n_ext; i++)
        if (g->ext[i] == var)
          slot = i;
      if (slot < 0) {
        if (g->n_ext == 3)
          return false;
        slot = g->n_ext;
        g->ext[g->n_ext++] = var;
      }
      snprintf(tok, sizeof tok, "$%d ", slot);
    }
  }
  size_t n = strlen(g->expr);
  if (n + strlen(tok) >= sizeof g->expr)
    return false;
  strcat(g->expr, tok);
  return true;
}

static dy_status fuse_elementwise_in(dy_program *p, int bi, bool *changed, const void *ctx,
                                     dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  const bool training = dy_program_is_training(p);
  for (int k = b->n_ops - 1; k >= 0; k--) {
    dy_op *root = b->ops[k];
    if (root->n_outputs != 1 || !token_of(p, root))
      continue;
    /* a root is not itself absorbed by its user */
    dy_op *u = dy_program_sole_user(p, root->outputs[0]);
    if (u && token_of(p, u) && dy_type_equal(&p->vars[u->outputs[0]]->type,
                                             &p->vars[root->outputs[0]]->type))
      continue;
    const dy_type *out = &p->vars[root->outputs[0]]->type;
    group g = {.n_ops = 1, .ops = {root}, .training = training};
    bool ok = true;
    for (int i = 0; i < root->n_inputs && ok; i++)
      ok = build(p, &g, root->inputs[i], out);
    if (!ok || g.n_ops < 2 || g.n_ext == 0)
      continue;
    char tok[64];
    snprintf(tok, sizeof tok, "%s", token_of(p, root));
    if (strlen(g.expr) + strlen(tok) >= sizeof g.expr)
      continue;
    strcat(g.expr, tok);
    dy_attr attr[DY_FUSED_ELEMENTWISE_NATTRS];
    int n_attr = dy_fused_elementwise_attrs_put(&(dy_fused_elementwise_attrs){
        .given = DY_GIVEN_ALL, .expr = g.expr}, attr);
    int o = root->outputs[0];
    dy_op *f = dy_program_append_op(p, bi, DY_OP_FUSED_ELEMENTWISE, g.ext, g.n_ext, &o, 1,
                                    attr, n_attr, root->loc);
    if (!f || !dy_op_set_srcs(p, f, (const dy_op *const *)g.ops, g.n_ops))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-elementwise: out of memory");
    dy_block_remove_op(b, k);
    dy_block_move_last_to(b, k);
    for (int i = 1; i < g.n_ops; i++)
      remove_op(b, g.ops[i]);
    k = b->n_ops; /* start over from the end */
    *changed = true;
  }
  return DY_OK;
}

dy_status dy_pass_fuse_elementwise(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, fuse_elementwise_in, NULL, changed, err);
}
