/* emit_irb.c - floor 2: fused_irb (the pass fuse-irb), MobileNetV2's
 * inverted residual block: 1x1 expand conv -> act_e -> depthwise conv ->
 * act_dw -> 1x1 project conv (+ bias, + residual, act), without the
 * expanded tensor e (E channels) or the depthwise output ever going to
 * memory.
 *
 * Per image and band of output rows (emit_dwpw.c's bands, sized so that
 * the band's expanded rows and the project GEMM's panels stay in L2): the
 * expanded rows the band reads are computed into ex (LDE floats a
 * channel): x's pixels gathered up to 16 at a time into a panel (C x 16),
 * the packed expand weight (DY_PACK_A12) times it on the GEMM
 * micro-kernel, the expand bias and act_e in its epilogue. Plane mode
 * (rows of a multiple of 16 pixels, or at least IRB_PLANE_MIN_W): ex
 * holds the band's padded rows [pr0, pr1) as the depthwise conv's padded
 * plane lays them out (wp floats a row, zero borders, padding rows
 * zeroed), each row's panels written in place, and the depthwise conv
 * reads them there; otherwise (linear mode) ex holds the image rows [iy0,
 * iy1) w floats each, panels of 16 pixels across rows, and each channel's
 * rows are copied into the padded plane first. Consecutive bands of one
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

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)

typedef long long ll;

/* Bytes of one band's expanded rows and project panels (L2-sized: 256 KB
 * to 512 KB measured the same, 1 MB and 2 MB slower); the least row
 * width of plane mode when not a multiple of 16 */
enum { IRB_BAND_BYTES = 512 * 1024, IRB_PLANE_MIN_W = 48 };

typedef struct {
  dy_cg_dwpw_geom k; /* the depthwise + project part; its g on e */
  ll cin, e;         /* x's channels, e's */
  ll lde;            /* floats of one channel's rows in ex */
  bool plane;        /* ex holds padded rows, the depthwise reads them in place */
} irb_geom;

/* Plane mode (see the head comment): the expand GEMM's panels along one
 * row each, so for rows of a multiple of 16 pixels or wide enough that
 * the last short panel costs less than the copy it saves (mobilenet_v2's
 * rows of 112 and 56: 2% less CPU than linear mode, bench/RESULTS.md). */
static bool irb_plane(const dy_cg_conv_geom *g) {
  return g->w % 16 == 0 || g->w >= IRB_PLANE_MIN_W;
}

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
  r.plane = irb_plane(&g);
  if (r.plane) { /* padded rows, and the lanes the depthwise's last vectors read past them */
    ll wp = k0.d.wp, last = (rows_in - 1) * wp + g.sw * (g.ow - 1) + (g.kw - 1) * g.dw + 16 * g.sw;
    r.lde = rows_in * wp > last ? rows_in * wp : last;
  } else {
    r.lde = (rows_in < g.h ? rows_in : g.h) * g.w;
  }
  r.k = dy_cg_dwpw_geom_of(&g, y->shape[1], IRB_BAND_BYTES, 4 * r.e * g.sh * g.w,
                           r.e * r.lde + r.cin * 16);
  return r;
}

static int64_t irb_scratch(const dy_program *p, const dy_op *op, int threads) {
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

/* The 1x1 expand of x's rows [have, iy1) of image n into ex (linear
 * mode: 16 pixels a panel, across rows). */
static void emit_expand(dy_cg_ctx *ctx, const irb_items_arg *a) {
  const irb_geom *r = a->r;
  const dy_cg_conv_geom *g = &r->k.g;
  ll hw = g->h * g->w;
  L("/* the 1x1 expand conv of x's rows [have, iy1): panels of 16 pixels (%lld x 16) on the", r->cin);
  L(" * micro-kernel, act_e(w_ex x + bias_ex) into ex */");
  L("const float *xs = %s + n * %lld;", IN(0), r->cin * hw);
  OPEN("for (int64_t p0 = have * %lld; p0 < iy1 * %lld; p0 += 16) {", g->w, g->w);
  L("const int nr = iy1 * %lld - p0 < 16 ? (int)(iy1 * %lld - p0) : 16;", g->w, g->w);
  L("for (int64_t ch = 0; ch < %lld; ch++) /* lanes past nr: 0 (computed, never stored) */",
    r->cin);
  L("  dy_f16_store(bx + ch * 16, dy_f16_loadn(xs + ch * %lld + p0, nr));", hw);
  L("float *const e0 = ex + (p0 - iy0 * %lld);", g->w);
  char ce[32];
  snprintf(ce, sizeof ce, "e0 + o * %lld", r->lde);
  dy_cg_gemm_packed_tiles(ctx, r->e, r->cin, IN(1), "bx", ce, r->lde, IN(2), a->alit_e, false,
                          a->epi_e, false);
  CLOSE();
}

/* Plane mode: the band's padded rows [pr0, pr1) in ex (row pr at ex + (pr
 * - pr0) * wp, its first pixel pl floats in), rows [have, pr1) to do:
 * padding rows zeroed, image rows expanded a row at a time. */
static void emit_expand_plane(dy_cg_ctx *ctx, const irb_items_arg *a) {
  const irb_geom *r = a->r;
  const dy_cg_conv_geom *g = &r->k.g;
  ll hw = g->h * g->w, wp = r->k.d.wp;
  L("/* the 1x1 expand conv of the padded rows [have, pr1), a row at a time: panels of up to");
  L(" * 16 pixels (%lld x 16) on the micro-kernel, act_e(w_ex x + bias_ex) into ex; the", r->cin);
  L(" * padding rows zero */");
  L("const float *xs = %s + n * %lld;", IN(0), r->cin * hw);
  OPEN("for (int64_t pr = have; pr < pr1; pr++) {");
  L("float *const er = ex + (pr - pr0) * %lld + %lld;", wp, g->pl);
  OPEN("if (pr < %lld || pr >= %lld) {", g->pt, g->pt + g->h);
  FOR("for (int64_t ch = 0; ch < %lld; ch++)", r->e);
  FOR("for (int64_t q = 0; q < %lld; q++)", g->w);
  L("er[ch * %lld + q] = 0.0f;", r->lde);
  END();
  END();
  L("continue;");
  CLOSE();
  OPEN("for (int64_t p0 = (pr - %lld) * %lld; p0 < (pr - %lld) * %lld + %lld; p0 += 16) {", g->pt,
       g->w, g->pt, g->w, g->w);
  L("const int64_t j0 = p0 - (pr - %lld) * %lld;", g->pt, g->w);
  L("const int nr = %lld - j0 < 16 ? (int)(%lld - j0) : 16;", g->w, g->w);
  L("for (int64_t ch = 0; ch < %lld; ch++) /* lanes past nr: 0 (computed, never stored) */",
    r->cin);
  L("  dy_f16_store(bx + ch * 16, dy_f16_loadn(xs + ch * %lld + p0, nr));", hw);
  L("float *const e0 = er + j0;");
  char ce[32];
  snprintf(ce, sizeof ce, "e0 + o * %lld", r->lde);
  dy_cg_gemm_packed_tiles(ctx, r->e, r->cin, IN(1), "bx", ce, r->lde, IN(2), a->alit_e, false,
                          a->epi_e, false);
  CLOSE();
  CLOSE();
}

static void emit_irb_items(dy_cg_ctx *ctx, const void *arg) {
  const irb_items_arg *a = arg;
  const irb_geom *r = a->r;
  const dy_cg_dwpw_geom *k = &r->k;
  const dy_cg_conv_geom *g = &k->g;
  /* the rows ex holds: linear mode the image rows [iy0, iy1) (w floats
   * each), plane mode the padded rows [pr0, pr1) (wp floats each) */
  ll rw = r->plane ? k->d.wp : g->w;
  const char *lo = r->plane ? "pr0" : "iy0", *hi = r->plane ? "pr1" : "iy1";
  L("float *const ex = pan + %lld, *const bx = ex + %lld;", k->more - (k->d.size + k->rt),
    r->e * r->lde);
  dy_cg_dwpw_band_head(ctx, k, !r->plane);
  if (r->plane)
    L("const int64_t pr0 = oy0 * %lld, pr1 = (oy1 - 1) * %lld + %lld; /* padded rows */", g->sh,
      g->sh, (g->kh - 1) * g->dh + 1);
  L("int64_t have = %s; /* ex holds rows [%s, have) */", lo, lo);
  OPEN("if (it == prev + 1 && oy0 > 0 && pv1 > %s) { /* the band before's, same image */", lo);
  L("/* its last rows [%s, pv1) to the front of ex, in steps that do not overlap */", lo);
  L("const int64_t sh_ = (%s - pv0) * %lld, len = (pv1 - %s) * %lld;", lo, rw, lo, rw);
  L("for (int64_t ch = 0; ch < %lld && sh_ > 0; ch++)", r->e);
  L("  for (int64_t q = 0; q < len; q += sh_)");
  L("    dy_copy(ex + ch * %lld + q, ex + ch * %lld + q + sh_, len - q < sh_ ? len - q : sh_);",
    r->lde, r->lde);
  L("have = pv1;");
  CLOSE();
  L("prev = it, pv0 = %s, pv1 = %s;", lo, hi);
  char src[160];
  if (r->plane) {
    emit_expand_plane(ctx, a);
    snprintf(src, sizeof src, "ex + c * %lld", r->lde);
    dy_cg_dwpw_band_dw(ctx, k, a->vact, IN(3), IN(4), NULL, src);
  } else {
    emit_expand(ctx, a);
    snprintf(src, sizeof src, "ex + c * %lld + (iy - iy0) * %lld", r->lde, g->w);
    dy_cg_dwpw_band_dw(ctx, k, a->vact, IN(3), IN(4), src, NULL);
  }
  dy_cg_dwpw_band_pw(ctx, k, a->epi, a->alit, IN(5), IN(6), a->residual ? IN(7) : NULL);
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
  char pre[256];
  if (r.plane)
    snprintf(pre, sizeof pre, "for (int64_t q = 0; q < %lld; q++) /* ex's borders stay zero */\n"
             "  pan[%lld + q] = 0.0f;\n", r.e * r.lde, k->more - (k->d.size + k->rt));
  else
    pre[0] = 0;
  snprintf(pre + strlen(pre), sizeof pre - strlen(pre),
           "int64_t prev = -1, pv0 = 0, pv1 = 0; /* the band in ex: item, rows [pv0, pv1) */");
  dy_cg_dwpw_kernel(ctx, k, op->n_inputs, work, pre, emit_irb_items, &ia);
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_fused_irb = {.emit = dy_emit_fused_irb,
                                     .scratch = irb_scratch,
                                     .roles = {"x", "w_ex", "bias_ex", "w_dw", "bias_dw", "w_pw", "bias_pw", "res"}};
