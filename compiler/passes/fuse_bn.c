/* fuse_bn.c - fold inference batch norms into the preceding weights.
 *
 * Requires: a verified Program. For a batch_norm with is_test = 1 and
 * constant scale (gamma), bias (beta), mean and variance, applied to the
 * result of a conv2d (per channel, dim 1) or of a matmul over [N, C] (per
 * column) with a constant weight, optionally through an add of a constant
 * bias b0, with s = gamma / sqrt(variance + epsilon):
 *
 *   w'[c, ...] = w[c, ...] * s[c]          (conv: output channel c;
 *                                           matmul: column c of w)
 *   b'[c]      = (b0[c] - mean[c]) * s[c] + beta[c]     (b0 = 0 if none)
 *
 * and the batch_norm becomes an add of b' (the fusion of bias and
 * activation then takes the add into the conv's or matmul's epilogue).
 * The intermediate results must have no other reader and not be fetched;
 * a weight that other ops also read is copied, not changed in place. In a
 * training Program every one of these must be a true constant
 * (dy_pass_var_is_constant): trainable parameters and state updated in
 * place change every step, so such a batch norm stays. Batch norms in
 * branches and loop bodies fold too (the new weight and bias become
 * captures).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_passes.h"

/* var's data when it is an f32 constant of n elements (in a training
 * Program, not a parameter or state the steps update). */
static const float *const_f32(const dy_program *p, int var, int64_t n, bool training) {
  const dy_var *v = p->vars[var];
  return dy_pass_var_is_constant(p, var, training) && v->type.dtype == DY_F32 &&
                 dy_type_numel(&v->type) == n
             ? (const float *)v->data
             : NULL;
}

/* A new constant var "<stem>_<n>" of type t holding data; -1 on failure. */
static int new_const(dy_program *p, const char *stem, const dy_type *t, const void *data,
                     dy_error *err) {
  const char *name = dy_program_fresh_name(p, stem);
  int v = name ? dy_program_add_var(p, name, t) : -1;
  size_t bytes = (size_t)dy_type_numel(t) * dy_dtype_size(t->dtype);
  if (v < 0 || dy_program_set_data(p, v, data, bytes, err))
    return -1;
  return v;
}

/* Try to fold the batch norm `bn` into what produces its input. */
static dy_status fold_one(dy_program *p, dy_op *bn, bool training, bool *done,
                          dy_error *err) {
  *done = false;
  dy_batch_norm_attrs bna = dy_batch_norm_attrs_get(bn);
  if (bna.is_test != 1)
    return DY_OK;
  const dy_type *xt = &p->vars[bn->inputs[0]]->type;
  if (xt->rank < 2 || xt->shape[1] < 1)
    return DY_OK;
  int64_t c = xt->shape[1];
  const float *gamma = const_f32(p, bn->inputs[1], c, training);
  const float *beta = const_f32(p, bn->inputs[2], c, training);
  const float *mean = const_f32(p, bn->inputs[3], c, training);
  const float *var = const_f32(p, bn->inputs[4], c, training);
  if (!gamma || !beta || !mean || !var)
    return DY_OK;
  /* walk back: [add b0 <-] conv2d / matmul */
  dy_op *add = NULL, *base = dy_program_def(p, bn->inputs[0], NULL, NULL);
  int b0 = -1;
  if (base && base->kind == DY_OP_ADD && dy_program_sole_user(p, base->outputs[0]) == bn) {
    add = base;
    for (int side = 0; side < 2 && b0 < 0; side++) {
      dy_op *d = dy_program_def(p, add->inputs[side], NULL, NULL);
      if (d && (d->kind == DY_OP_CONV2D || d->kind == DY_OP_MATMUL) &&
          const_f32(p, add->inputs[1 - side], c, training)) {
        base = d;
        b0 = add->inputs[1 - side];
      }
    }
    if (b0 < 0)
      return DY_OK;
  }
  if (!base || dy_program_sole_user(p, base->outputs[0]) != (add ? add : bn))
    return DY_OK;
  bool conv = base->kind == DY_OP_CONV2D;
  if (!conv && (base->kind != DY_OP_MATMUL || xt->rank != 2))
    return DY_OK;
  int w = base->inputs[1];
  const dy_var *wv = p->vars[w];
  if (!dy_pass_var_is_constant(p, w, training) || wv->type.dtype != DY_F32 ||
      wv->type.rank < 2)
    return DY_OK;
  bool ty = !conv && dy_matmul_attrs_get(base).transpose_y; /* fused_matmul too */
  int64_t wn = dy_type_numel(&wv->type);
  /* conv: w [O, ...], channel = row; matmul: w [K, C] (column c) or [C, K] */
  if (conv ? wv->type.shape[0] != c
           : (ty ? wv->type.shape[0] != c : wv->type.shape[wv->type.rank - 1] != c))
    return DY_OK;

  float *s = malloc(sizeof(float) * (size_t)c);
  float *nw = malloc(sizeof(float) * (size_t)wn);
  float *nb = malloc(sizeof(float) * (size_t)c);
  dy_status st = DY_OK;
  if (!s || !nw || !nb) {
    st = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-bn: out of memory");
    goto out;
  }
  const float *w0 = wv->data, *bias0 = b0 >= 0 ? p->vars[b0]->data : NULL;
  for (int64_t i = 0; i < c; i++) {
    s[i] = gamma[i] / sqrtf(var[i] + (float)bna.epsilon);
    nb[i] = ((bias0 ? bias0[i] : 0.0f) - mean[i]) * s[i] + beta[i];
  }
  int64_t per_row = wn / wv->type.shape[0];
  for (int64_t i = 0; i < wn; i++) {
    int64_t ch = conv || ty ? i / per_row : i % c;
    nw[i] = w0[i] * s[ch];
  }
  /* the new weight and bias; the old ones go when nothing reads them */
  char stem[300];
  snprintf(stem, sizeof stem, "%s.bn", wv->name);
  int nwv = new_const(p, stem, &wv->type, nw, err);
  dy_type bt = conv ? (dy_type){.dtype = DY_F32, .rank = 3, .shape = {c, 1, 1}}
                    : (dy_type){.dtype = DY_F32, .rank = 1, .shape = {c}};
  snprintf(stem, sizeof stem, "%s.bias", p->vars[bn->outputs[0]]->name);
  int nbv = nwv >= 0 ? new_const(p, stem, &bt, nb, err) : -1;
  if (nwv < 0 || nbv < 0) {
    st = err->status ? err->status : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-bn");
    goto out;
  }
  base->inputs[1] = nwv;
  const dy_op bn0 = *bn;  /* its kind and location, for the sources */
  /* the batch norm becomes add(base or add's result, b'), in its place */
  int y = add ? add->outputs[0] : base->outputs[0];
  if (add) {
    /* fold b0 into b': the add now adds b' to the base's result */
    add->inputs[0] = base->outputs[0];
    add->inputs[1] = nbv;
    add->outputs[0] = bn->outputs[0];
    dy_block *blk = p->blocks[bn->block];
    for (int k = 0; k < blk->n_ops; k++)
      if (blk->ops[k] == bn)
        dy_block_remove_op(blk, k);
  } else {
    bn->kind = DY_OP_ADD;
    bn->inputs[0] = y;
    bn->inputs[1] = nbv;
    bn->n_inputs = 2;
    bn->n_attrs = 0;
  }
  /* the add that stays lists the batch norm among its sources */
  if (!dy_op_set_srcs(p, add ? add : bn, (const dy_op *const[]){add ? add : &bn0, &bn0},
                      add ? 2 : 1))
    st = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-bn: out of memory");
  *done = true;
out:
  free(s);
  free(nw);
  free(nb);
  return st;
}

/* The batch norms of block bi (the conv or matmul before one sits in its
 * block: it has one reader). */
static dy_status fuse_bn_in(dy_program *p, int bi, bool *changed, const void *ctx,
                            dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  const bool training = dy_program_is_training(p);
  for (int k = 0; k < b->n_ops; k++) {
    if (b->ops[k]->kind != DY_OP_BATCH_NORM)
      continue;
    bool done;
    dy_status s = fold_one(p, b->ops[k], training, &done, err);
    if (s)
      return s;
    if (done) {
      *changed = true;
      k = -1; /* ops may have moved; start over */
    }
  }
  return DY_OK;
}

dy_status dy_pass_fuse_bn(dy_program *p, bool *changed, dy_error *err) {
  bool any = false;
  dy_status s = dy_pass_each_block(p, fuse_bn_in, NULL, &any, err); /* new weights: captures */
  if (!s && any)
    dy_program_compact(p);
  *changed |= any;
  return s;
}
