/* fuse_attention.c - the pass fuse-attention: scaled dot-product attention
 * written as matmul, scale, softmax, matmul (what ONNX exporters write for
 * multi-head attention, e.g. PyTorch's nn.MultiheadAttention) becomes one
 * fused_attention op (codegen/ops/emit_attention.c), the scores never
 * written out as a tensor.
 *
 * Requires: a verified inference Program (never a training one: the op
 * has no gradient rule). Matches, from each softmax over the last axis:
 *
 *   s  = matmul(q', kt)        q' = q, or q scaled: div(q, c), mul(q, c)
 *                              or scale(q) {scale = c, bias = 0}
 *                              kt = transpose(k, swap last two) or k with
 *                              transpose_y = 1 (fuse-transpose's form)
 *   s' = s [scaled by a constant] [+ mask]    mask f32 [Lq, Lk]
 *   o  = matmul(softmax(s', axis -1), v)
 *
 * -> fused_attention(q, k, v[, mask]) {scale, layout ""}. When the heads
 * come from the exporter's reshapes, [L, H, D] transposed to [H, L, D]:
 *
 *   q = transpose(Q, [1,0,2]), kt = transpose(K, [1,2,0]) (or k =
 *   transpose(K, [1,0,2]) with transpose_y), v = transpose(V, [1,0,2]),
 *   and o's one reader transpose(o, [1,0,2]); or the same in 4-D,
 *   [B, L, H, D] by [0,2,1,3] (k^T by [0,2,3,1]), as dy2stc's own
 *   multi-head attention layer writes it
 *
 * -> fused_attention(Q, K, V[, mask]) {scale, layout "lhd"} writing that
 * last transpose's result: the four transposes go too. And when Q, K and
 * V are in turn reshape(slice(X, last axis, [s, s + H*D))) of rows X
 * (PyTorch's seq-first export slices the QKV projection's [L, 1, 3E]
 * output):
 *
 * -> fused_attention(Xr, Xr, Xr[, mask]) {scale, "lhd", packed = (H, D,
 *    Dv, q, k, v offsets)}, Xr = X or reshape(X) to [L, W]: the slices
 *    and head reshapes go too (packed_inputs).
 *
 * The scores, the softmax and o must have no other reader; the feature
 * sizes must be static (the emitter's loops). Ops left unread are dce's.
 */
#include <string.h>

#include "dy_passes.h"

static int index_of(const dy_block *b, const dy_op *op) {
  for (int k = 0; k < b->n_ops; k++)
    if (b->ops[k] == op)
      return k;
  return -1;
}

/* Does transpose op t have exactly this permutation? */
static bool perm_is(const dy_op *t, int n, const int64_t *perm) {
  if (!t || t->kind != DY_OP_TRANSPOSE)
    return false;
  dy_transpose_attrs a = dy_transpose_attrs_get(t);
  if (a.n_perm != n)
    return false;
  for (int i = 0; i < n; i++)
    if (a.perm[i] != perm[i])
      return false;
  return true;
}

static bool swaps_last_two(const dy_op *t) {
  if (!t || t->kind != DY_OP_TRANSPOSE)
    return false;
  dy_transpose_attrs a = dy_transpose_attrs_get(t);
  int r = a.n_perm;
  if (r < 2)
    return false;
  for (int i = 0; i < r - 2; i++)
    if (a.perm[i] != i)
      return false;
  return a.perm[r - 2] == r - 1 && a.perm[r - 1] == r - 2;
}

/* If op is x / c, x * c (either side; c a scalar constant, x not) or
 * scale(x) {scale = c, bias = 0}: x, and *scale multiplied by 1/c or c.
 * Else -1. */
static int scaled_input(const dy_program *p, const dy_op *op, bool training, float *scale) {
  float c;
  if (!op)
    return -1;
  if (op->kind == DY_OP_DIV && op->n_inputs == 2 && dy_pass_scalar_f32(p, op->inputs[1], training, &c) && c != 0.0f) {
    *scale /= c;
    return op->inputs[0];
  }
  if (op->kind == DY_OP_SCALE && op->n_inputs == 1) {
    dy_scale_attrs a = dy_scale_attrs_get(op);
    if (a.bias != 0.0)
      return -1;
    *scale *= (float)a.scale;
    return op->inputs[0];
  }
  if (op->kind != DY_OP_MUL)
    return -1;
  for (int side = 0; side < 2; side++)
    if (dy_pass_scalar_f32(p, op->inputs[side], training, &c) &&
        !dy_pass_scalar_f32(p, op->inputs[1 - side], training, &(float){0})) {
      *scale *= c;
      return op->inputs[1 - side];
    }
  return -1;
}

/* The op defining var when var's only reader is `user`, else NULL. */
static dy_op *sole_def(const dy_program *p, int var, const dy_op *user) {
  dy_op *d = dy_program_def(p, var, NULL, NULL);
  return d && dy_program_sole_user(p, var) == user ? d : NULL;
}

/* Would fused_attention on inputs of types in[0..n) with attrs give
 * exactly type `want`? */
static bool infers_to(const dy_type *in, int n, const dy_attr *attrs, int n_attrs,
                      const dy_type *want) {
  dy_type out;
  dy_op tmp = {.kind = DY_OP_FUSED_ATTENTION, .n_inputs = n, .n_attrs = n_attrs,
               .attrs = (dy_attr *)attrs};
  dy_error e = {0};
  int64_t d = -1, dv = -1;
  if (dy_infer(&tmp, in, n, &out, &e) != DY_OK || !dy_type_equal(&out, want))
    return false;
  /* the emitter's loops need the feature sizes as numbers */
  dy_fused_attention_attrs a = dy_fused_attention_attrs_get(&tmp);
  if (a.n_packed == 6)
    d = a.packed[1], dv = a.packed[2];
  else
    d = in[0].shape[in[0].rank - 1], dv = in[2].shape[in[2].rank - 1];
  return d >= 0 && dv >= 0;
}

static bool var_infers_to(const dy_program *p, const int *ins, int n, const dy_attr *attrs,
                          const dy_type *want) {
  dy_type in[4];
  for (int i = 0; i < n; i++)
    in[i] = p->vars[ins[i]]->type;
  return infers_to(in, n, attrs, DY_FUSED_ATTENTION_NATTRS, want);
}

/* The dims of t before axis `end`, those of size 1 left out, into out;
 * their count. */
static int dims_but_ones(const dy_type *t, int end, int64_t *out) {
  int n = 0;
  for (int i = 0; i < end; i++)
    if (t->shape[i] != 1)
      out[n++] = t->shape[i];
  return n;
}

/* The packed form's source of head input h ([B?, L, H, D]): h =
 * reshape(slice(X, last axis, [s, s + H*D), step 1)) with X's rows the
 * (b, l) positions, in order (X [.., W]; its leading dims and [B?, L] equal
 * but for sizes of 1). Returns X, with s in *off and the two ops in
 * ops[0..2); -1 if h is not so made. (Reading X in place is right whoever
 * else reads h; the slice goes when no one does, e.g. after dce took a
 * transpose that simplify merged into the next.) */
static int packed_source(const dy_program *p, int h, int64_t *off, const dy_op **ops) {
  dy_op *rs = dy_program_def(p, h, NULL, NULL);
  dy_op *sl = rs && rs->kind == DY_OP_RESHAPE ? dy_program_def(p, rs->inputs[0], NULL, NULL) : NULL;
  if (!sl || sl->kind != DY_OP_SLICE)
    return -1;
  const dy_type *ht = &p->vars[h]->type, *xt = &p->vars[sl->inputs[0]]->type;
  const dy_type *st = &p->vars[sl->outputs[0]]->type;
  int hr = ht->rank, xr = xt->rank;
  dy_slice_attrs a = dy_slice_attrs_get(sl);
  if (hr < 2 || xr < 1 || a.n_axes != 1 || a.n_starts != 1 ||
      (a.axes[0] != -1 && a.axes[0] != xr - 1) || (a.n_steps && a.steps[0] != 1))
    return -1;
  int64_t hd = ht->shape[hr - 2] * ht->shape[hr - 1], w = xt->shape[xr - 1], s = a.starts[0];
  if (ht->shape[hr - 2] <= 0 || ht->shape[hr - 1] <= 0 || w <= 0 || s < 0 || s + hd > w ||
      st->shape[xr - 1] != hd)
    return -1;
  int64_t lx[DY_MAX_DIMS], lh[DY_MAX_DIMS];
  int nx = dims_but_ones(xt, xr - 1, lx), nh = dims_but_ones(ht, hr - 2, lh);
  if (nx != nh || memcmp(lx, lh, sizeof *lx * (size_t)nx) != 0)
    return -1;
  *off = s;
  ops[0] = sl, ops[1] = rs;
  return sl->inputs[0];
}

/* The packed form of the lhd fusion about to replace op o (ins[0..3):
 * the heads [B?, L, H, D] of q, k and v): when all
 * three are slices of rows, ins become those rows, through a reshape to
 * [L, W] in front of o where the rows have another shape ([L, 1, W], the
 * seq-first export), and attrs[2] packed = pk (H, D, Dv, offsets). The
 * slices and reshapes are left to dce; they join srcs. */
static dy_status packed_inputs(dy_program *p, const dy_op *o, int *ins, int n, dy_attr *attrs,
                               int64_t *pk,
                               const dy_op **srcs, int *ns, dy_error *err) {
  int r = p->vars[ins[0]]->type.rank, xs[3];
  const dy_op *ops[6];
  dy_type in[4];
  for (int i = 0; i < 3; i++) {
    xs[i] = packed_source(p, ins[i], &pk[3 + i], &ops[2 * i]);
    if (xs[i] < 0)
      return DY_OK;
  }
  const dy_type *qt = &p->vars[ins[0]]->type, *vt = &p->vars[ins[2]]->type;
  pk[0] = qt->shape[r - 2], pk[1] = qt->shape[r - 1], pk[2] = vt->shape[r - 1];
  /* the rows as [B?, L, W]: X itself, or X reshaped to [L, W] (rank 3 only) */
  for (int i = 0; i < 3; i++) {
    const dy_type *xt = &p->vars[xs[i]]->type, *ht = &p->vars[ins[i]]->type;
    in[i] = *xt;
    if (xt->rank == r - 1 && memcmp(xt->shape, ht->shape, sizeof *xt->shape * (size_t)(r - 2)) == 0)
      continue;
    if (r != 3)
      return DY_OK;
    in[i].rank = 2;
    in[i].shape[0] = ht->shape[0];
    in[i].shape[1] = xt->shape[xt->rank - 1];
  }
  if (n == 4)
    in[3] = p->vars[ins[3]]->type;
  dy_attr pa[DY_FUSED_ATTENTION_NATTRS] = {attrs[0], attrs[1]};
  dy_fused_attention_attrs_put(&(dy_fused_attention_attrs){
      .given = DY_GIVEN(fused_attention, packed), .packed = pk, .n_packed = 6}, pa + 2);
  if (!infers_to(in, n, pa, DY_FUSED_ATTENTION_NATTRS, &p->vars[o->outputs[0]]->type))
    return DY_OK;
  /* the reshapes, one per source, in front of o */
  dy_block *b = p->blocks[0];
  for (int i = 0; i < 3; i++) {
    int x = xs[i];
    ins[i] = x;
    for (int j = 0; j < i; j++)
      if (xs[j] == x)
        ins[i] = ins[j];
    if (in[i].rank == p->vars[x]->type.rank || ins[i] != x)
      continue;
    char stem[300];
    snprintf(stem, sizeof stem, "%s.rows", p->vars[x]->name);
    const char *name = dy_program_fresh_name(p, stem);
    int v = name ? dy_program_add_var(p, name, &in[i]) : -1;
    dy_attr ra[DY_RESHAPE_NATTRS];
    int n_ra = dy_reshape_attrs_put(&(dy_reshape_attrs){
        .given = DY_GIVEN_ALL, .shape = ((int64_t[]){-1, in[i].shape[1]}), .n_shape = 2}, ra);
    if (v < 0 || !dy_program_append_op(p, 0, DY_OP_RESHAPE, &x, 1, &v, 1, ra, n_ra, o->loc))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-attention: out of memory");
    dy_block_move_last_to(b, index_of(b, o));
    ins[i] = v;
  }
  attrs[2] = pa[2];
  for (int i = 0; i < 6; i++)
    srcs[(*ns)++] = ops[i];
  return DY_OK;
}

/* Try the pattern ending in softmax sm; *done when rewritten. */
static dy_status fuse_one(dy_program *p, dy_op *sm, bool training, bool *done, dy_error *err) {
  *done = false;
  const dy_type *st = &p->vars[sm->outputs[0]]->type;
  int r = st->rank;
  dy_softmax_attrs sa = dy_softmax_attrs_get(sm);
  if (st->dtype != DY_F32 || r < 2 || (sa.axis != -1 && sa.axis != r - 1))
    return DY_OK;
  dy_op *mm2 = dy_program_sole_user(p, sm->outputs[0]);
  if (!mm2 || mm2->kind != DY_OP_MATMUL || mm2->inputs[0] != sm->outputs[0])
    return DY_OK;
  dy_matmul_attrs a2 = dy_matmul_attrs_get(mm2);
  if (a2.transpose_x || a2.transpose_y)
    return DY_OK;
  /* back from the softmax: [+ mask] [scale] matmul */
  const dy_op *srcs[24];
  int ns = 0, mask = -1;
  float scale = 1.0f;
  dy_op *d = sole_def(p, sm->inputs[0], sm);
  if (d && d->kind == DY_OP_ADD && d->inputs[0] != d->inputs[1]) {
    for (int side = 0; side < 2 && mask < 0; side++) {
      const dy_type *mt = &p->vars[d->inputs[side]]->type;
      if (mt->dtype == DY_F32 && mt->rank == 2 && mt->shape[0] == st->shape[r - 2] &&
          mt->shape[1] == st->shape[r - 1]) {
        mask = d->inputs[side];
        srcs[ns++] = d;
        d = sole_def(p, d->inputs[1 - side], d);
      }
    }
  }
  if (d && d->kind != DY_OP_MATMUL) {
    int x = scaled_input(p, d, training, &scale);
    if (x < 0)
      return DY_OK;
    srcs[ns++] = d;
    d = sole_def(p, x, d);
  }
  dy_op *mm1 = d;
  if (!mm1 || mm1->kind != DY_OP_MATMUL || dy_matmul_attrs_get(mm1).transpose_x)
    return DY_OK;
  srcs[ns++] = mm1;
  /* q: maybe scaled first */
  int q = mm1->inputs[0];
  dy_op *qs = sole_def(p, q, mm1);
  if (qs) {
    int x = scaled_input(p, qs, training, &scale);
    if (x >= 0) {
      srcs[ns++] = qs;
      q = x;
    }
  }
  /* k: as the second operand, transposed or with transpose_y */
  int kt = mm1->inputs[1], k_std = -1, k_lhd = -1;
  const dy_op *kt_op = dy_program_def(p, kt, NULL, NULL);
  /* [L, H, D] -> [H, L, D] (and -> [H, D, L] for k^T); [B, L, H, D] ->
   * [B, H, L, D] (and [B, H, D, L]) */
  static const int64_t heads3[3] = {1, 0, 2}, keys3[3] = {1, 2, 0};
  static const int64_t heads4[4] = {0, 2, 1, 3}, keys4[4] = {0, 2, 3, 1};
  const int64_t *heads = r == 3 ? heads3 : heads4, *keys = r == 3 ? keys3 : keys4;
  bool ty = dy_matmul_attrs_get(mm1).transpose_y != 0;
  if (ty)
    k_std = kt;
  else if (swaps_last_two(kt_op))
    k_std = kt_op->inputs[0];
  if (ty && perm_is(kt_op, r, heads))
    k_lhd = kt_op->inputs[0];
  else if (!ty && perm_is(kt_op, r, keys))
    k_lhd = kt_op->inputs[0];
  int v = mm2->inputs[1];
  const dy_op *q_t = dy_program_def(p, q, NULL, NULL), *v_t = dy_program_def(p, v, NULL, NULL);
  dy_op *o_t = dy_program_sole_user(p, mm2->outputs[0]);
  srcs[ns++] = sm;
  srcs[ns++] = mm2;
  dy_attr attrs[DY_FUSED_ATTENTION_NATTRS];
  dy_fused_attention_attrs_put(&(dy_fused_attention_attrs){
      .given = DY_GIVEN_ALL, .scale = (double)scale, .layout = "lhd", .packed = NULL,
      .n_packed = 0}, attrs);
  int ins[4], n = mask >= 0 ? 4 : 3;
  int64_t pk[6];
  dy_op *last = NULL;
  /* the heads between sequence and features: no transposes at all */
  if ((r == 3 || r == 4) && k_lhd >= 0 && perm_is(q_t, r, heads) && perm_is(v_t, r, heads) &&
      perm_is(o_t, r, heads)) {
    ins[0] = q_t->inputs[0], ins[1] = k_lhd, ins[2] = v_t->inputs[0], ins[3] = mask;
    if (var_infers_to(p, ins, n, attrs, &p->vars[o_t->outputs[0]]->type)) {
      last = o_t;
      srcs[ns++] = q_t;
      srcs[ns++] = kt_op;
      srcs[ns++] = v_t;
      srcs[ns++] = o_t;
      dy_status s = packed_inputs(p, o_t, ins, n, attrs, pk, srcs, &ns, err);
      if (s)
        return s;
    }
  }
  if (!last && k_std >= 0) {
    dy_fused_attention_attrs_put(&(dy_fused_attention_attrs){
        .given = DY_GIVEN(fused_attention, layout), .layout = ""}, attrs + 1);
    ins[0] = q, ins[1] = k_std, ins[2] = v, ins[3] = mask;
    if (var_infers_to(p, ins, n, attrs, &p->vars[mm2->outputs[0]]->type)) {
      last = mm2;
      if (!ty)
        srcs[ns++] = kt_op;
    }
  }
  if (!last)
    return DY_OK;
  dy_block *b = p->blocks[0];
  int out = last->outputs[0], at = index_of(b, last);
  dy_op *f = dy_program_append_op(p, 0, DY_OP_FUSED_ATTENTION, ins, n, &out, 1, attrs,
                                  DY_FUSED_ATTENTION_NATTRS,
                                  last->loc);
  if (!f || !dy_op_set_srcs(p, f, srcs, ns))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-attention: out of memory");
  dy_block_remove_op(b, at);
  dy_block_move_last_to(b, at);
  *done = true;
  return DY_OK;
}

dy_status dy_pass_fuse_attention(dy_program *p, bool *changed, dy_error *err) {
  const bool training = dy_program_is_training(p);
  if (training)
    return DY_OK; /* fused_attention has no gradient rule */
  dy_block *b = p->blocks[0];
  for (int k = 0; k < b->n_ops; k++) {
    if (b->ops[k]->kind != DY_OP_SOFTMAX)
      continue;
    bool done;
    dy_status s = fuse_one(p, b->ops[k], training, &done, err);
    if (s)
      return s;
    *changed |= done;
  }
  return DY_OK;
}
