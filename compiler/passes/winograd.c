/* winograd.c - the pass "winograd": picks, per 3x3 stride-1 convolution,
 * Winograd F(2x2, 3x3), F(4x4, 3x3), F(6x6, 3x3) or the direct (im2col
 * GEMM) kernel by a cost model (below), and marks the Winograd ones
 * (codegen/kernels/emit_winograd.c).
 *
 * Candidates: a conv2d or fused_conv2d with a constant f32 weight
 * [O, C, 3, 3], strides 1, dilations 1, groups 1, a static image of at
 * least 4 x 4 and at least DY_WINOGRAD_MIN_CHANNELS input and output
 * channels. The chosen one becomes a fused_conv2d with the attribute algo =
 * "winograd2", "winograd4" or "winograd6" (a conv2d becomes
 * fused_conv2d(x, w), act ""). Its meaning does not change: the runtime's
 * kernels ignore algo; codegen transforms the weight at compile time
 * (dy_gemm_pack_of's DY_PACK_WINO) and emits the Winograd kernel.
 * `--disable-pass winograd` keeps every conv on the direct path. */
#include "dy_passes.h"

/* The cost model, in multiply-adds per (input, output channel) pair of
 * one image (both kernels work on blocks of 16: 16 pixels of 9 products,
 * 16 tiles of a*a products):
 *   direct:  9 * 16 * ceil(pixels / 16)
 *            + WINO_WEIGHT_COST * 9 * ceil(pixels / 16)   when the weight
 *              (9*O*C floats, read once a 16-pixel panel) exceeds L2
 *   F(m):    16 * ceil(tiles / 16) * (a*a + T_in / O + T_out / C)
 *            + WINO_WEIGHT_COST * a*a   when U (a*a*O*C floats) exceeds L2
 * with a = m + 2, T_in = 2 a^3 (B^T d B per input channel and tile),
 * T_out = m a (a + m) (A^T M A per output channel and tile); U is read
 * once an image (emit_winograd.c's groups), costed at WINO_WEIGHT_COST
 * multiply-adds a float (a float from L3 per cycle against 32 FMA lanes,
 * halved for the prefetcher). Winograd is taken when its cost times
 * WINO_MARGIN stays below the direct one (the Winograd GEMMs are as deep
 * as C only and the outputs are scattered tile by tile): measured on
 * resnet18's layers and the CNN sample (bench/RESULTS.md, "Winograd
 * variants"). */
#define WINO_U_L2_BYTES (1 << 20)
#define WINO_WEIGHT_COST 16.0
#define WINO_MARGIN 1.25

static double cost_winograd(int m, int64_t oh, int64_t ow, int64_t c, int64_t o) {
  int a = m + 2;
  int64_t tiles = ((oh + m - 1) / m) * ((ow + m - 1) / m);
  double t_in = 2.0 * a * a * a, t_out = (double)m * a * (a + m);
  double cost = 16.0 * (double)((tiles + 15) / 16) * (a * a + t_in / (double)o + t_out / (double)c);
  if ((double)a * a * (double)o * (double)c * 4 > WINO_U_L2_BYTES)
    cost += WINO_WEIGHT_COST * a * a;
  return cost;
}

/* The tile size m (2, 4, 6) op runs Winograd F(m x m, 3x3) with, or 0;
 * force (2, 4, 6) for every conv the kernel can run (any image and
 * channel count), 0 to let the cost model pick among the candidates. */
static int winograd_choice(const dy_program *p, const dy_op *op, bool training, int force) {
  if ((op->kind != DY_OP_CONV2D && op->kind != DY_OP_FUSED_CONV2D) || op->n_inputs < 2)
    return 0;
  if (op->kind == DY_OP_FUSED_CONV2D && *dy_fused_conv2d_attrs_get(op).algo)
    return 0; /* already chosen */
  const dy_var *w = p->vars[op->inputs[1]];
  const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &w->type;
  if (!dy_pass_var_is_constant(p, w->id, training) || wt->dtype != DY_F32 ||
      x->dtype != DY_F32 || x->rank != 4 || wt->rank != 4)
    return 0;
  if (wt->shape[2] != 3 || wt->shape[3] != 3 || x->shape[2] < 1 || x->shape[3] < 1)
    return 0;
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* fused_conv2d too */
  dy_conv_geom g = dy_conv2d_geom(x, wt, &a);
  int64_t c = x->shape[1], o = wt->shape[0];
  if (g.groups != 1 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.oh < 1 ||
      g.ow < 1 || c < 1 || o < 1)
    return 0;
  if (force) /* every conv Winograd can run, however small (to compare) */
    return force;
  if (x->shape[2] < 4 || x->shape[3] < 4 || c < DY_WINOGRAD_MIN_CHANNELS ||
      o < DY_WINOGRAD_MIN_CHANNELS)
    return 0;
  int64_t panels = (g.oh * g.ow + 15) / 16;
  double direct = 9.0 * 16 * (double)panels;
  if (9.0 * (double)o * (double)c * 4 > WINO_U_L2_BYTES)
    direct += WINO_WEIGHT_COST * 9 * (double)panels;
  double best = direct / WINO_MARGIN;
  int pick = 0;
  for (int m = 2; m <= 6; m += 2) {
    double cm = cost_winograd(m, g.oh, g.ow, c, o);
    if (cm < best)
      best = cm, pick = m;
  }
  return pick;
}

dy_status dy_pass_winograd(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_winograd_tile(p, 0, changed, err);
}

dy_status dy_pass_winograd_tile(dy_program *p, int force, bool *changed, dy_error *err) {
  bool training = dy_program_is_training(p);
  for (int bi = 0; bi < p->n_blocks; bi++) { /* sub-blocks' convs too */
    dy_block *b = p->blocks[bi];
    for (int k = 0; k < b->n_ops; k++) {
      dy_op *op = b->ops[k];
      int m = winograd_choice(p, op, training, force);
      if (!m)
        continue;
      dy_status s = dy_pass_conv_with_algo(p, bi, k, m == 2 ? "winograd2" : m == 4 ? "winograd4"
                                                                            : "winograd6",
                                           err); /* pass_util.c */
      if (s)
        return s;
      *changed = true;
    }
  }
  return DY_OK;
}
