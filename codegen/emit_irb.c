/* emit_irb.c - floor 2: fused_irb (the pass fuse-irb), MobileNetV2's
 * inverted residual block: 1x1 expand conv -> act_e -> depthwise conv ->
 * act_dw -> 1x1 project conv (+ bias, + residual, act), without the
 * expanded tensor e (E channels) or the depthwise output ever going to
 * memory.
 *
 * Per image and band of output rows (emit_dwpw.c's bands, sized so that
 * the band's expanded rows and the project GEMM's panels stay in L2): the
 * expanded rows the band reads, [iy0, iy1), are computed into ex (E rows
 * of (iy1 - iy0) x w floats, channel e's row iy at ex + e * LDE + (iy -
 * iy0) * w): x's pixels gathered 16 at a time into a panel (C x 16), the
 * packed expand weight (DY_PACK_A12) times it on the GEMM micro-kernel,
 * the expand bias and act_e in its epilogue. Consecutive bands of one
 * image on one thread share the halo (the last kh - sh rows of a band's
 * input at stride 1, 3x3: 2): those rows move to the front of ex instead
 * of being computed again. Then emit_dwpw.c's pieces: the depthwise conv
 * of the band from ex into the project GEMM's panels, and the project
 * GEMM with its bias, the residual and act. With --threads the (image,
 * band) items are split over the threads, each with its own slice of the
 * scratch; a thread's first band computes its halo itself (the same sums
 * in the same order: outputs identical). */
#include <stdio.h>
#include <string.h>

#include "floor1_kernels.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))

typedef long long ll;

/* Bytes of one band's expanded rows and project panels: L2-sized */
enum { IRB_BAND_BYTES = 512 * 1024 };

typedef struct {
  dy_cg_dwpw_geom k; /* the depthwise + project part; its g on e */
  ll cin, e;         /* x's channels, e's */
  ll lde;            /* floats of one channel's rows in ex */
} irb_geom;

static irb_geom irb_geom_of(const dy_program *p, const dy_op *op) {
  irb_geom r;
  const dy_type *xt = &p->vars[op->inputs[0]]->type, *wd = &p->vars[op->inputs[3]]->type;
  const dy_type *y = &p->vars[op->outputs[0]]->type;
  r.cin = xt->shape[1];
  r.e = p->vars[op->inputs[1]]->type.shape[0];
  dy_type et = *xt;
  et.shape[1] = r.e;
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* conv2d's view of the attributes */
  dy_conv_geom cg = dy_conv2d_geom(&et, wd, &a);
  dy_cg_conv_geom g = {.c = r.e, .h = xt->shape[2], .w = xt->shape[3],
                       .o = r.e, .oh = y->shape[2], .ow = y->shape[3],
                       .kh = wd->shape[2], .kw = wd->shape[3],
                       .sh = cg.sh, .sw = cg.sw, .dh = cg.dh, .dw = cg.dw,
                       .pt = cg.pt, .pl = cg.pl, .groups = cg.groups};
  /* the rows of ex a band of R output rows needs: (R - 1) sh + (kh - 1) dh + 1 */
  dy_cg_dwpw_geom k0 = dy_cg_dwpw_geom_of(&g, y->shape[1], IRB_BAND_BYTES,
                                          4 * r.e * g.sh * g.w, 0);
  ll rows_in = (k0.rows - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  r.lde = (rows_in < g.h ? rows_in : g.h) * g.w;
  r.k = dy_cg_dwpw_geom_of(&g, y->shape[1], IRB_BAND_BYTES, 4 * r.e * g.sh * g.w,
                           r.e * r.lde + r.cin * 16);
  return r;
}

int64_t dy_cg_irb_scratch(const dy_program *p, const dy_op *op, int threads) {
  if (dy_gemm_pack_of(p, op, 1).kind != DY_PACK_A12 ||
      dy_gemm_pack_of(p, op, 5).kind != DY_PACK_A12)
    return 0;
  return irb_geom_of(p, op).k.slice * (threads > 1 ? threads : 1) * 4;
}

typedef struct {
  const irb_geom *r;
  bool residual;
  const char *vact, *epi_e, *alit_e, *epi, *alit;
} irb_items_arg;

/* The 1x1 expand of x's rows [have, iy1) of image n into ex. */
static void emit_expand(dy_cg_ctx *ctx, const irb_items_arg *a) {
  const irb_geom *r = a->r;
  const dy_cg_conv_geom *g = &r->k.g;
  ll hw = g->h * g->w;
  L("/* the 1x1 expand conv of x's rows [have, iy1): panels of 16 pixels (%lld x 16) on the", r->cin);
  L(" * micro-kernel, act_e(w_ex x + bias_ex) into ex */");
  L("const float *xs = in0 + n * %lld;", r->cin * hw);
  OPEN("for (int64_t p0 = have * %lld; p0 < iy1 * %lld; p0 += 16) {", g->w, g->w);
  L("const int nr = iy1 * %lld - p0 < 16 ? (int)(iy1 * %lld - p0) : 16;", g->w, g->w);
  L("for (int64_t ch = 0; ch < %lld; ch++) /* lanes past nr: 0 (computed, never stored) */",
    r->cin);
  L("  dy_f16_store(bx + ch * 16, dy_f16_loadn(xs + ch * %lld + p0, nr));", hw);
  L("float *const e0 = ex + (p0 - iy0 * %lld);", g->w);
  char ce[32];
  snprintf(ce, sizeof ce, "e0 + o * %lld", r->lde);
  dy_cg_gemm_packed_tiles(ctx, r->e, r->cin, "in1", "bx", ce, r->lde, "in2", a->alit_e, false,
                          a->epi_e);
  CLOSE();
}

static void emit_irb_items(dy_cg_ctx *ctx, const void *arg) {
  const irb_items_arg *a = arg;
  const irb_geom *r = a->r;
  const dy_cg_dwpw_geom *k = &r->k;
  const dy_cg_conv_geom *g = &k->g;
  L("float *const ex = pan + %lld, *const bx = ex + %lld;", k->more - (k->d.size + k->rt),
    r->e * r->lde);
  dy_cg_dwpw_band_head(ctx, k);
  L("int64_t have = iy0; /* ex holds rows [iy0, have) */");
  OPEN("if (it == prev + 1 && oy0 > 0 && pv1 > iy0) { /* the band before's, same image */");
  L("/* its last rows [iy0, pv1) to the front of ex, in steps that do not overlap */");
  L("const int64_t sh_ = (iy0 - pv0) * %lld, len = (pv1 - iy0) * %lld;", g->w, g->w);
  L("for (int64_t ch = 0; ch < %lld && sh_ > 0; ch++)", r->e);
  L("  for (int64_t q = 0; q < len; q += sh_)");
  L("    dy_copy(ex + ch * %lld + q, ex + ch * %lld + q + sh_, len - q < sh_ ? len - q : sh_);",
    r->lde, r->lde);
  L("have = pv1;");
  CLOSE();
  L("prev = it, pv0 = iy0, pv1 = iy1;");
  emit_expand(ctx, a);
  char src[160];
  snprintf(src, sizeof src, "ex + c * %lld + (iy - iy0) * %lld", r->lde, g->w);
  dy_cg_dwpw_band_dw(ctx, k, a->vact, "in3", "in4", src);
  dy_cg_dwpw_band_pw(ctx, k, a->epi, a->alit, "in5", "in6", a->residual ? "in7" : NULL);
}

dy_status dy_emit_fused_irb(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_fused_irb_attrs a = dy_fused_irb_attrs_get(op);
  bool residual = op->n_inputs == 8;
  if (dy_gemm_pack_of(ctx->p, op, 1).kind != DY_PACK_A12 ||
      dy_gemm_pack_of(ctx->p, op, 5).kind != DY_PACK_A12 || !ctx->scratch)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                            "fused_irb needs constant f32 expand and project weights");
  char alit_e[64] = "0.0f", alit_dw[64] = "0.0f", alit[64] = "0.0f", vbuf[96];
  char epi_e[160], epi[160];
  if ((dy_cg_act_uses_alpha(a.act_e) && !dy_float_literal((float)a.alpha_e, alit_e, sizeof alit_e)) ||
      (dy_cg_act_uses_alpha(a.act_dw) &&
       !dy_float_literal((float)a.alpha_dw, alit_dw, sizeof alit_dw)) ||
      (dy_cg_act_uses_alpha(a.act) && !dy_float_literal((float)a.alpha, alit, sizeof alit)))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "alpha is not finite");
  const char *vact = dy_cg_dw_vec_act(a.act_dw, alit_dw, vbuf, sizeof vbuf);
  /* the passes only fuse activations with a vector form */
  if (!vact || !dy_gemm_act_flag(a.act) || dy_cg_act_scalar_only(a.act) ||
      !dy_gemm_act_flag(a.act_e) || dy_cg_act_scalar_only(a.act_e))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                            "fused_irb: activation without a vector form");
  dy_gemm_epilogue_flags(epi_e, sizeof epi_e, "DY_GEMM_BIAS_ROW", a.act_e);
  dy_gemm_epilogue_flags(epi, sizeof epi, "DY_GEMM_BIAS_ROW", a.act);
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  irb_geom r = irb_geom_of(ctx->p, op);
  const dy_cg_dwpw_geom *k = &r.k;
  const dy_cg_conv_geom *g = &k->g;
  L("/* 1x1 conv %lld -> %lld channels (%s) + depthwise %lldx%lld (stride %lld, %s) + 1x1 conv",
    r.cin, r.e, *a.act_e ? a.act_e : "no act", g->kh, g->kw, g->sh,
    *a.act_dw ? a.act_dw : "no act");
  L(" * %lld -> %lld channels%s, fused: per band of %lld output rows the expanded rows it reads",
    r.e, k->o, residual ? " + residual" : "", k->rows);
  L(" * (the band before's halo kept) into ex, their depthwise conv into the project GEMM's");
  L(" * panels (%lld of %lld x 16), then the packed project weight times them */", k->panels,
    g->c);
  irb_items_arg ia = {&r, residual, vact, epi_e, alit_e, epi, alit};
  ll work = g->h * g->w * r.cin * r.e + g->oh * g->ow * g->c * (k->o + g->kh * g->kw);
  dy_cg_dwpw_kernel(ctx, k, op->n_inputs, work, "int64_t prev = -1, pv0 = 0, pv1 = 0; /* the "
                    "band in ex: item, rows [pv0, pv1) */", emit_irb_items, &ia);
  return DY_OK;
}
