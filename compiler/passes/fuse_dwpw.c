/* fuse_dwpw.c - the passes "fuse-dwpw" and "fuse-irb".
 *
 * fuse-dwpw: MobileNet's depthwise conv and the
 * 1x1 conv after it become one fused_dwpw, whose kernel
 * (codegen/ops/emit_dwpw.c) feeds the depthwise output a band of rows at a
 * time straight into the 1x1 GEMM's panels, so it never goes to memory.
 *
 * Matches, in an inference Program (fused_dwpw has no gradient):
 *   t = fused_conv2d(x, wd, bd) {depthwise: groups = channels, a constant
 *       f32 weight the padded-plane kernel takes (stride 1 or 2 along
 *       rows, <= 49 taps), act "", relu, relu6 or leaky_relu, algo ""}
 *   y = fused_conv2d(t, wp, bp[, r]) {1x1, strides 1, no padding, groups
 *       1, a constant f32 weight, act as above, algo ""}
 * with t read by nothing else (not fetched), and makes
 *   y = fused_dwpw(x, wd, bd, wp, bp[, r]) {the depthwise conv's strides,
 *       paddings, dilations, groups; act_dw, alpha_dw; act, alpha}
 * in the 1x1 conv's place. Run after fuse-conv and fuse-residual (which
 * make the two fused_conv2d); `--disable-pass fuse-dwpw` keeps them
 * apart (the depthwise conv then on its own padded-plane kernel).
 *
 * fuse-irb (after fuse-dwpw): MobileNetV2's 1x1 expand conv before a
 * fused_dwpw,
 *   e = fused_conv2d(x, we, be) {1x1 as the 1x1 conv above, a bias, no
 *       residual}
 *   y = fused_dwpw(e, wd, bd, wp, bp[, r])
 * with e read by nothing else (not fetched), becomes
 *   y = fused_irb(x, we, be, wd, bd, wp, bp[, r]) {fused_dwpw's
 *       attributes; act_e, alpha_e the expand conv's act and alpha}
 * whose kernel (codegen/ops/emit_irb.c) computes e a band of rows at a time
 * into the scratch, so e never goes to memory. Only when e (one image) is
 * at least IRB_MIN_BYTES: a smaller e stays in L2 between the separate
 * expand conv and the fused_dwpw, whose kernels are then as fast (measured
 * on mobilenet_v2, bench/RESULTS.md: fusing its blocks of 0.2-0.6 MB too
 * was slower than fusing the three of 1.8-4.8 MB alone). `--disable-pass
 * fuse-irb` keeps every expand conv apart. */
#include <string.h>

#include "dy_codegen.h"
#include "dy_passes.h"

/* An activation the fused kernel applies in registers on both sides. */
static bool vector_act(const char *act) {
  return !*act || strcmp(act, "relu") == 0 || strcmp(act, "relu6") == 0 ||
         strcmp(act, "leaky_relu") == 0;
}

/* Is op a fused_conv2d with a constant f32 weight, a bias, no algo and an
 * act vector_act takes? */
static bool plain_fused_conv(const dy_program *p, const dy_op *op) {
  if (op->kind != DY_OP_FUSED_CONV2D || op->n_inputs < 3)
    return false;
  dy_fused_conv2d_attrs a = dy_fused_conv2d_attrs_get(op);
  const dy_var *w = p->vars[op->inputs[1]];
  return !*a.algo && vector_act(a.act) && dy_pass_var_is_constant(p, w->id, false) &&
         w->type.dtype == DY_F32 && w->type.rank == 4 &&
         p->vars[op->inputs[0]]->type.dtype == DY_F32;
}

static bool pointwise(const dy_program *p, const dy_op *op) {
  if (!plain_fused_conv(p, op))
    return false;
  const dy_type *w = &p->vars[op->inputs[1]]->type;
  dy_fused_conv2d_attrs a = dy_fused_conv2d_attrs_get(op);
  bool ones = true;
  for (int i = 0; i < a.n_strides; i++)
    ones = ones && a.strides[i] == 1;
  for (int i = 0; i < a.n_dilations; i++)
    ones = ones && a.dilations[i] == 1;
  for (int i = 0; i < a.n_paddings; i++)
    ones = ones && a.paddings[i] == 0;
  return ones && a.groups == 1 && w->shape[2] == 1 && w->shape[3] == 1;
}

/* The op at index k of block 0 and second (its output's reader, after
 * it) become one op of kind in second's place, writing second's output,
 * its sources theirs. False when out of memory. */
static bool replace_pair(dy_program *p, int k, dy_op *second, dy_op_kind kind, const int *ins,
                         int n_ins, const dy_attr *attrs, int na) {
  dy_block *b = p->blocks[0];
  dy_op *first = b->ops[k];
  int out = second->outputs[0], at = -1;
  for (int i = 0; i < b->n_ops; i++)
    if (b->ops[i] == second)
      at = i;
  dy_op *f = dy_program_append_op(p, 0, kind, ins, n_ins, &out, 1, attrs, na, second->loc);
  const dy_op *srcs[2] = {first, second};
  if (!f || at < 0 || !dy_op_set_srcs(p, f, srcs, 2))
    return false;
  dy_block_remove_op(b, at);
  dy_block_move_last_to(b, at);
  dy_block_remove_op(b, k); /* the first op comes before the second */
  return true;
}

dy_status dy_pass_fuse_dwpw(dy_program *p, bool *changed, dy_error *err) {
  if (dy_program_is_training(p))
    return DY_OK;
  dy_block *b = p->blocks[0];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *dw = b->ops[k];
    if (!plain_fused_conv(p, dw) || dw->n_inputs != 3 ||
        !dy_codegen_depthwise_padded(p, dw, false))
      continue;
    dy_op *pw = dy_program_sole_user(p, dw->outputs[0]);
    if (!pw || pw->inputs[0] != dw->outputs[0] || !pointwise(p, pw))
      continue;
    dy_fused_conv2d_attrs ad = dy_fused_conv2d_attrs_get(dw), ap = dy_fused_conv2d_attrs_get(pw);
    dy_attr attrs[16];
    int na = 0;
    for (int i = 0; i < dw->n_attrs && na < 12; i++)
      if (dy_attr_schema_find(DY_OP_CONV2D, dw->attrs[i].name))
        attrs[na++] = dw->attrs[i];
    na += dy_fused_dwpw_attrs_put(&(dy_fused_dwpw_attrs){
        .given = DY_GIVEN(fused_dwpw, act_dw) | DY_GIVEN(fused_dwpw, alpha_dw) |
                 DY_GIVEN(fused_dwpw, act) | DY_GIVEN(fused_dwpw, alpha),
        .act_dw = ad.act, .alpha_dw = ad.alpha, .act = ap.act, .alpha = ap.alpha}, attrs + na);
    na = dy_pass_attrs_complete(DY_OP_FUSED_DWPW, attrs, na, 16);
    int ins[6] = {dw->inputs[0], dw->inputs[1], dw->inputs[2], pw->inputs[1], pw->inputs[2],
                  pw->n_inputs == 4 ? pw->inputs[3] : -1};
    if (!replace_pair(p, k, pw, DY_OP_FUSED_DWPW, ins, pw->n_inputs == 4 ? 6 : 5, attrs, na))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-dwpw: out of memory");
    *changed = true;
    k--;
  }
  return DY_OK;
}

/* The least expanded tensor (bytes an image) fuse-irb fuses: half of L2 */
enum { IRB_MIN_BYTES = 1 << 20 };

dy_status dy_pass_fuse_irb(dy_program *p, bool *changed, dy_error *err) {
  if (dy_program_is_training(p))
    return DY_OK;
  dy_block *b = p->blocks[0];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *ex = b->ops[k];
    if (!pointwise(p, ex) || ex->n_inputs != 3)
      continue;
    dy_op *dp = dy_program_sole_user(p, ex->outputs[0]);
    if (!dp || dp->kind != DY_OP_FUSED_DWPW || dp->inputs[0] != ex->outputs[0])
      continue;
    bool other = false; /* e read again by the fused_dwpw (as its residual) */
    for (int i = 1; i < dp->n_inputs; i++)
      other = other || dp->inputs[i] == ex->outputs[0];
    const dy_type *et = &p->vars[ex->outputs[0]]->type; /* [N, E, H, W] */
    if (other || (et->shape[1] > 0 && et->shape[2] > 0 && et->shape[3] > 0 &&
                  et->shape[1] * et->shape[2] * et->shape[3] * 4 < IRB_MIN_BYTES))
      continue;
    dy_fused_conv2d_attrs ae = dy_fused_conv2d_attrs_get(ex);
    dy_attr attrs[16];
    int na = 0;
    for (int i = 0; i < dp->n_attrs && na < 12; i++)
      attrs[na++] = dp->attrs[i];
    na += dy_fused_irb_attrs_put(&(dy_fused_irb_attrs){
        .given = DY_GIVEN(fused_irb, act_e) | DY_GIVEN(fused_irb, alpha_e), .act_e = ae.act,
        .alpha_e = ae.alpha}, attrs + na);
    na = dy_pass_attrs_complete(DY_OP_FUSED_IRB, attrs, na, 16);
    int ins[8] = {ex->inputs[0], ex->inputs[1], ex->inputs[2]};
    for (int i = 1; i < dp->n_inputs; i++)
      ins[i + 2] = dp->inputs[i];
    if (!replace_pair(p, k, dp, DY_OP_FUSED_IRB, ins, dp->n_inputs + 2, attrs, na))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-irb: out of memory");
    *changed = true;
    k--;
  }
  return DY_OK;
}
