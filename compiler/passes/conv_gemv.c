/* conv_gemv.c - the pass "conv-gemv": marks the convolutions whose one
 * window is the whole input (an output of 1 x 1 pixels: the two 1x1
 * convs of a squeeze-and-excitation block on the pooled [N, C, 1, 1]
 * tensor, MobileNetV3 and EfficientNet) that codegen runs as a
 * matrix-vector product instead of the im2col GEMM.
 *
 * The rule: a conv2d or fused_conv2d (no algo yet, no residual) with a
 * constant f32 weight [O, C, kh, kw], groups 1, dilations 1, no padding,
 * the kernel as large as the image (kh = H, kw = W, so one output pixel).
 * The GEMM form computes such a conv as 16-pixel panels of which one
 * column is used: 16 times the multiply-adds (mobilenet_v3_large's SE
 * convs took ~7% of its run). As a GEMV, y[n] = w (O x C*kh*kw) x[n],
 * the weight is packed transposed into 16-column panels (the output
 * channels) and x is read in place: the 1-row micro-kernel (k unrolled
 * into four sets of accumulators), bias and activation in its epilogue,
 * as a linear layer at batch 1. Such an op becomes a fused_conv2d with
 * algo = "gemv" (a conv2d: fused_conv2d(x, w), act ""); its meaning does
 * not change and the runtime's kernels ignore algo. `--disable-pass
 * conv-gemv` keeps them on the GEMM. */

#include "dy_passes.h"

/* May op run as a GEMV? */
static bool conv_gemv_fits(const dy_program *p, const dy_op *op, bool training) {
  dy_conv_geom g;
  if (op->n_inputs > 3 || !dy_pass_conv_algo_open_geom(p, op, training, &g))
    return false;
  return g.groups == 1 && g.dh == 1 && g.dw == 1 && g.pt == 0 && g.pl == 0 && g.pb == 0 &&
         g.pr == 0 && g.kh == g.h && g.kw == g.w && g.oh == 1 && g.ow == 1;
}

dy_status dy_pass_conv_gemv(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_conv_algo_where(p, conv_gemv_fits, "gemv", changed, err); /* pass_util.c */
}
