/* conv_small.c - the pass "conv-small": marks the convolutions of small
 * depth that codegen runs on its direct kernel (codegen/kernels/emit_conv_small.c)
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

#include "dy_passes.h"

/* May op run on the direct small-depth kernel? */
static bool conv_small_fits(const dy_program *p, const dy_op *op, bool training) {
  dy_conv_geom g;
  if (!dy_pass_conv_algo_open_geom(p, op, training, &g))
    return false;
  const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &p->vars[op->inputs[1]]->type;
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

dy_status dy_pass_conv_small(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_conv_algo_where(p, conv_small_fits, "small", changed, err); /* pass_util.c */
}
