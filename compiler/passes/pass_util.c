/* pass_util.c - what the pass files share, below all of them (the
 * pipeline, pipeline.c, is on top; a pass file calls only this file and the
 * libraries, never another pass):
 *
 *   constants   which persistable vars a pass may take as constant (a
 *               training Program's state is not), one-element f32 values
 *   attributes  a fused op's attribute list completed from its schema
 *   blocks      a per-block rewrite run on every block, captures re-synced
 *   kernels     the kernel-choice passes' common rule and rewrite (conv-small,
 *               winograd: a conv2d / fused_conv2d becomes a fused_conv2d
 *               with an algo)
 */
#include <string.h>

#include "dy_passes.h"

/* ---- constants ---- */

bool dy_pass_var_is_constant(const dy_program *p, int var, bool training) {
  const dy_var *v = p->vars[var];
  if (!v->persistable)
    return false;
  return !training || (!v->trainable && !dy_program_in_place_writer(p, var));
}

bool dy_pass_scalar_f32(const dy_program *p, int var, bool training, float *v) {
  const dy_var *x = var >= 0 ? p->vars[var] : NULL;
  if (!x || !dy_pass_var_is_constant(p, var, training) || x->type.dtype != DY_F32 ||
      dy_type_numel(&x->type) != 1 || !x->data)
    return false;
  *v = *(const float *)x->data;
  return true;
}

/* ---- attributes ---- */

int dy_pass_attrs_complete(dy_op_kind k, dy_attr *attrs, int na, int cap) {
  const dy_op_info *info = dy_op_info_of(k);
  for (int i = 0; i < info->n_attrs && na < cap; i++) {
    bool have = false;
    for (int j = 0; j < na && !have; j++)
      have = strcmp(attrs[j].name, info->attrs[i].name) == 0;
    if (!have && !info->attrs[i].required)
      attrs[na++] = info->attrs[i].dflt;
  }
  return na;
}

/* ---- blocks ---- */

dy_status dy_pass_each_block(dy_program *p, dy_pass_block_fn fn, const void *ctx,
                             bool *changed, dy_error *err) {
  bool any = false;
  for (int b = 0; b < p->n_blocks; b++) {
    bool c = false;
    dy_status s = fn(p, b, &c, ctx, err);
    if (s)
      return s;
    any |= c;
  }
  *changed |= any;
  /* a rewrite may make a sub-block read another outer var (or no longer
   * read one): each control op's captures follow */
  if (any && p->n_blocks > 1 && !dy_program_sync_captures(p))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

/* ---- kernels: the choices of conv-small and winograd ---- */

bool dy_pass_conv_algo_open(const dy_program *p, const dy_op *op, bool training) {
  if ((op->kind != DY_OP_CONV2D && op->kind != DY_OP_FUSED_CONV2D) || op->n_inputs < 2)
    return false;
  if (op->kind == DY_OP_FUSED_CONV2D && *dy_fused_conv2d_attrs_get(op).algo)
    return false; /* already chosen */
  const dy_var *w = p->vars[op->inputs[1]];
  const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &w->type;
  return dy_pass_var_is_constant(p, w->id, training) && wt->dtype == DY_F32 &&
         x->dtype == DY_F32 && x->rank == 4 && wt->rank == 4;
}

bool dy_pass_conv_algo_open_geom(const dy_program *p, const dy_op *op, bool training,
                                 dy_conv_geom *g) {
  if (!dy_pass_conv_algo_open(p, op, training))
    return false;
  const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &p->vars[op->inputs[1]]->type;
  for (int d = 1; d < 4; d++)
    if (x->shape[d] < 1)
      return false; /* a symbolic channel count or image size */
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* fused_conv2d too */
  *g = dy_conv2d_geom(x, wt, &a);
  return true;
}

dy_status dy_pass_conv_with_algo(dy_program *p, int bi, int k, const char *algo,
                                 dy_error *err) {
  dy_block *b = p->blocks[bi];
  dy_op *op = b->ops[k];
  /* the op's attributes (a conv2d's: act "", alpha 0 added), algo */
  dy_attr attrs[16], a_algo[DY_FUSED_CONV2D_NATTRS];
  dy_fused_conv2d_attrs_put(&(dy_fused_conv2d_attrs){
      .given = DY_GIVEN(fused_conv2d, algo), .algo = algo}, a_algo);
  int na = 0;
  for (int i = 0; i < op->n_attrs && na < 15; i++)
    if (strcmp(op->attrs[i].name, a_algo[0].name) != 0)
      attrs[na++] = op->attrs[i];
  na = dy_pass_attrs_complete(DY_OP_FUSED_CONV2D, attrs, na, 15); /* algo "" last */
  attrs[na - 1] = a_algo[0];
  dy_op *f = dy_program_append_op(p, bi, DY_OP_FUSED_CONV2D, op->inputs, op->n_inputs,
                                  op->outputs, 1, attrs, na, op->loc);
  const dy_op *srcs[1] = {op};
  if (!f || !dy_op_set_srcs(p, f, srcs, 1))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "algo %s: out of memory", algo);
  dy_block_remove_op(b, k);
  dy_block_move_last_to(b, k);
  return DY_OK;
}

dy_status dy_pass_conv_algo_where(dy_program *p, bool (*fits)(const dy_program *, const dy_op *,
                                                               bool training),
                                  const char *algo, bool *changed, dy_error *err) {
  bool training = dy_program_is_training(p);
  for (int bi = 0; bi < p->n_blocks; bi++) { /* a loop body's and a branch's convs too */
    dy_block *b = p->blocks[bi];
    for (int k = 0; k < b->n_ops; k++) {
      if (!fits(p, b->ops[k], training))
        continue;
      dy_status s = dy_pass_conv_with_algo(p, bi, k, algo, err);
      if (s)
        return s;
      *changed = true;
    }
  }
  return DY_OK;
}
