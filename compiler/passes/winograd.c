/* winograd.c - the pass "winograd": marks the 3x3 stride-1 convolutions
 * that codegen runs as Winograd F(4x4, 3x3) (codegen/emit_conv.c).
 *
 * A conv2d or fused_conv2d with a constant f32 weight [O, C, 3, 3],
 * strides 1, dilations 1, groups 1, a static image of at least 4 x 4 and
 * at least DY_WINOGRAD_MIN_CHANNELS input and output channels, and enough
 * 4 x 4 tiles to halve the multiplies (below), becomes a
 * fused_conv2d with the attribute algo = "winograd" (a conv2d becomes
 * fused_conv2d(x, w), act ""). Its meaning does not change: the runtime's
 * kernels ignore algo; codegen transforms the weight at compile time
 * (dy_gemm_pack_of's DY_PACK_W36) and emits the Winograd kernel. Smaller
 * convolutions stay on the im2col GEMM, which wins there (bench/RESULTS.md).
 * `--disable-pass winograd` keeps every conv on the direct path. */
#include "dy_passes.h"

/* May op run as Winograd F(4x4, 3x3)? */
static bool winograd_fits(const dy_program *p, const dy_op *op, bool training) {
  if (!dy_pass_conv_algo_open(p, op, training)) /* conv_small.c */
    return false;
  const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &p->vars[op->inputs[1]]->type;
  if (wt->shape[2] != 3 || wt->shape[3] != 3 || x->shape[2] < 4 || x->shape[3] < 4)
    return false;
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* fused_conv2d too */
  dy_conv_geom g = dy_conv2d_geom(x, wt, &a);
  if (g.groups != 1 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.oh < 1 ||
      g.ow < 1 || x->shape[1] < DY_WINOGRAD_MIN_CHANNELS ||
      wt->shape[0] < DY_WINOGRAD_MIN_CHANNELS)
    return false;
  /* multiply-adds per (input, output channel) pair: both kernels work on
   * blocks of 16 (tiles of 4 x 4 with 36 products, pixels with 9); the
   * transforms cost about as much again, so Winograd must halve them (a
   * 7 x 7 image is 4 tiles, a quarter of a block: no gain) */
  int64_t tiles = ((g.oh + 3) / 4) * ((g.ow + 3) / 4), pixels = g.oh * g.ow;
  return 2 * 36 * 16 * ((tiles + 15) / 16) <= 9 * 16 * ((pixels + 15) / 16);
}

dy_status dy_pass_winograd(dy_program *p, bool *changed, dy_error *err) {
  bool training = dy_program_is_training(p);
  dy_block *b = p->blocks[0];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *op = b->ops[k];
    if (!winograd_fits(p, op, training))
      continue;
    dy_status s = dy_pass_conv_with_algo(p, k, "winograd", err); /* conv_small.c */
    if (s)
      return s;
    *changed = true;
  }
  return DY_OK;
}
