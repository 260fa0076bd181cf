/* conv_small.c - the pass "conv-small": marks the convolutions of small
 * depth that codegen runs on its direct kernel (codegen/emit_conv_small.c)
 * instead of the im2col GEMM.
 *
 * The rule: a conv2d or fused_conv2d (no algo yet) with a constant f32
 * weight [O, C, kh, kw], strides 1, dilations 1, groups 1, a static image,
 * depth C * kh * kw <= DY_CONV_SMALL_MAX_DEPTH, O <= DY_CONV_SMALL_MAX_OUT
 * (with more output channels the GEMM spreads its gathering over them
 * and wins: the CNN's 3 -> 32 conv ran ~3% slower here), output rows at least
 * kw - 1 wide (the kernel computes kw - 1 columns per row that it drops)
 * and a zero-padded copy of the image (the kernel's scratch, one image at
 * a time) of at most DY_CONV_SMALL_MAX_SCRATCH bytes. There the GEMM's
 * im2col gathers C * kh * kw floats per pixel for few multiply-adds per
 * float gathered, and its 6-row tiles pad small O (LeNet-5: 1 -> 6 and
 * 6 -> 16 channels, 5 x 5, run 3.9x and 3.1x faster; bench/RESULTS.md
 * has the measurements behind the bounds). Such an op becomes a
 * fused_conv2d with algo = "small" (a conv2d: fused_conv2d(x, w), act "");
 * its meaning does not change and the runtime's kernels ignore algo.
 * `--disable-pass conv-small` keeps them on the GEMM. */
#include <string.h>

#include "dy_passes.h"

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

/* May op run on the direct small-depth kernel? */
static bool conv_small_fits(const dy_program *p, const dy_op *op, bool training) {
  if (!dy_pass_conv_algo_open(p, op, training))
    return false;
  const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &p->vars[op->inputs[1]]->type;
  for (int d = 1; d < 4; d++)
    if (x->shape[d] < 1)
      return false; /* a symbolic channel count or image size */
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* fused_conv2d too */
  dy_conv_geom g = dy_conv2d_geom(x, wt, &a);
  if (g.groups != 1 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.oh < 1 ||
      g.ow < 1 || g.ow < g.kw - 1)
    return false;
  int64_t depth = x->shape[1] * g.kh * g.kw;
  if (depth > DY_CONV_SMALL_MAX_DEPTH || wt->shape[0] > DY_CONV_SMALL_MAX_OUT)
    return false;
  /* the kernel's scratch (emit_conv_small.c) is mostly the image padded
   * to (oh + kh - 1) x (ow + kw - 1); its output goes through bands of
   * at most 32 KB */
  int64_t bytes = 4 * x->shape[1] * (g.oh + g.kh - 1) * (g.ow + g.kw - 1);
  return bytes <= DY_CONV_SMALL_MAX_SCRATCH;
}

dy_status dy_pass_conv_with_algo(dy_program *p, int k, const char *algo, dy_error *err) {
  dy_block *b = p->blocks[0];
  dy_op *op = b->ops[k];
  /* the op's attributes (a conv2d's: act "", alpha 0 added), algo */
  dy_attr attrs[16];
  int na = 0;
  for (int i = 0; i < op->n_attrs && na < 15; i++)
    if (strcmp(op->attrs[i].name, "algo") != 0)
      attrs[na++] = op->attrs[i];
  na = dy_pass_attrs_complete(DY_OP_FUSED_CONV2D, attrs, na, 15); /* algo "" last */
  attrs[na - 1] = DY_ATTR_S("algo", algo);
  dy_op *f = dy_program_append_op(p, 0, DY_OP_FUSED_CONV2D, op->inputs, op->n_inputs,
                                  op->outputs, 1, attrs, na, op->loc);
  const dy_op *srcs[1] = {op};
  if (!f || !dy_op_set_srcs(p, f, srcs, 1))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "algo %s: out of memory", algo);
  dy_block_remove_op(b, k);
  dy_block_move_last_to(b, k);
  return DY_OK;
}

dy_status dy_pass_conv_small(dy_program *p, bool *changed, dy_error *err) {
  bool training = dy_program_is_training(p);
  dy_block *b = p->blocks[0];
  for (int k = 0; k < b->n_ops; k++) {
    if (!conv_small_fits(p, b->ops[k], training))
      continue;
    dy_status s = dy_pass_conv_with_algo(p, k, "small", err);
    if (s)
      return s;
    *changed = true;
  }
  return DY_OK;
}
