/* emit_dwpw.c - floor 2: fused_dwpw (the pass fuse-dwpw), MobileNet's
 * depthwise conv followed by a 1x1 conv, without the depthwise output
 * ever going to memory.
 *
 * Per image and band of output rows (R rows, R * ow a multiple of 16 so
 * that every 16-pixel panel but the image's last is full; the band's
 * panels of all C channels sized to stay in L2): for each channel, the
 * input rows the band needs are copied into the zero-bordered plane of
 * emit_depthwise.c, each output row is computed DY_VW outputs at a time
 * (bias and act_dw in registers) into a row in L1, and its pixels go to
 * the 1x1 GEMM's B panels (C x 16 each); then the packed pointwise weight
 * (DY_PACK_A12, one group of O x C) times each panel on the micro-kernel,
 * with the pointwise bias, the residual (copied into y, DY_GEMM_ADD_C)
 * and act in its epilogue. The band's pieces (its geometry, rows,
 * depthwise conv into the panels, 1x1 GEMM and the kernel over the items
 * with --threads) are floor 1's dwpw_band.c, which fused_irb
 * (emit_irb.c) builds on too. */
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))

typedef long long ll;

/* Bytes of the panels of one band aimed at (all channels): L2-sized */
enum { DWPW_BAND_BYTES = 256 * 1024 };

typedef dy_cg_dwpw_geom dwpw_geom;

static dwpw_geom dwpw_geom_of(const dy_program *p, const dy_op *op) {
  dy_cg_conv_geom g = dy_cg_conv_geom_of(p, op);
  return dy_cg_dwpw_geom_of(&g, p->vars[op->inputs[3]]->type.shape[0], DWPW_BAND_BYTES, 0, 0);
}

static int64_t dwpw_scratch(const dy_program *p, const dy_op *op, int threads) {
  if (dy_gemm_pack_of(p, op, 3).kind != DY_PACK_A12)
    return 0;
  return dwpw_geom_of(p, op).slice * (threads > 1 ? threads : 1) * 4;
}

/* fused_dwpw's (image, band) items: xp, rt, pan point into the scratch. */
typedef struct {
  const dwpw_geom *k;
  bool residual;
  const char *vact, *epi, *alit;
} dwpw_items_arg;

static void emit_dwpw_items(dy_cg_ctx *ctx, const void *arg) {
  const dwpw_items_arg *a = arg;
  const dwpw_geom *k = a->k;
  const dy_cg_conv_geom *g = &k->g;
  char src[160];
  dy_cg_dwpw_band_head(ctx, k, true);
  snprintf(src, sizeof src, "%s + ((n * %lld + c) * %lld + iy) * %lld", dy_cg_in(ctx, 0), g->c,
           g->h, g->w);
  dy_cg_dwpw_band_dw(ctx, k, a->vact, dy_cg_in(ctx, 1), dy_cg_in(ctx, 2), src, NULL);
  dy_cg_dwpw_band_pw(ctx, k, a->epi, a->alit, dy_cg_in(ctx, 3), dy_cg_in(ctx, 4),
                     a->residual ? dy_cg_in(ctx, 5) : NULL);
}

dy_status dy_emit_fused_dwpw(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_fused_dwpw_attrs a = dy_fused_dwpw_attrs_get(op);
  bool residual = op->n_inputs == 6;
  if (dy_gemm_pack_of(ctx->p, op, 3).kind != DY_PACK_A12 || !ctx->scratch)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                            "fused_dwpw needs a constant f32 pointwise weight");
  char alit_dw[64] = "0.0f", alit[64] = "0.0f", vbuf[96], epi[160];
  if ((dy_cg_act_uses_alpha(a.act_dw) &&
       !dy_float_literal((float)a.alpha_dw, alit_dw, sizeof alit_dw)) ||
      (dy_cg_act_uses_alpha(a.act) && !dy_float_literal((float)a.alpha, alit, sizeof alit)))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "alpha is not finite");
  const char *vact = dy_cg_dw_vec_act(a.act_dw, alit_dw, vbuf, sizeof vbuf);
  const char *aflag = dy_gemm_act_flag(a.act);
  /* the pass only fuses activations with a vector form on both sides */
  if (!vact || !aflag || dy_cg_act_scalar_only(a.act))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                            "fused_dwpw: activation without a vector form");
  dy_gemm_epilogue_flags(epi, sizeof epi, "DY_GEMM_BIAS_ROW", a.act);
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  dwpw_geom k = dwpw_geom_of(ctx->p, op);
  const dy_cg_conv_geom *g = &k.g;
  L("/* depthwise %lldx%lld (stride %lld, %s) + 1x1 conv %lld -> %lld channels%s, fused: per band",
    g->kh, g->kw, g->sh, *a.act_dw ? a.act_dw : "no act", g->c, k.o,
    residual ? " + residual" : "");
  L(" * of %lld output rows (%lld panels of 16 pixels) the depthwise output goes straight into",
    k.rows, k.panels);
  L(" * the GEMM's panels (%lld x 16 each, in the scratch), then the packed 1x1 weight times them */",
    g->c);
  /* with --threads and micro-panels enough, items may split the 1x1 weight */
  k.split = ctx->threads > 1 && (k.o + DY_GEMM_MR - 1) / DY_GEMM_MR >= 2 * ctx->threads;
  dwpw_items_arg ia = {&k, residual, vact, epi, alit};
  dy_cg_dwpw_kernel(ctx, &k, op->n_inputs, g->oh * g->ow * g->c * (k.o + g->kh * g->kw),
                    NULL, emit_dwpw_items, &ia);
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_fused_dwpw = {.emit = dy_emit_fused_dwpw, .scratch = dwpw_scratch,
                                      .roles = {"x", "w_dw", "bias_dw", "w_pw", "bias_pw", "res"}};
