/* emit_conv.c - floor 1: the conv2d kernel builder, shared by conv2d
 * (emit_nn.c) and fused_conv2d (emit_fused.c): on the GEMM micro-kernel
 * when the weight is constant (im2col panels in the scratch), a direct
 * depthwise kernel (register-blocked over the taps, or with
 * dy_codegen_options.plain_kernels one tap at a time), Winograd (a
 * fused_conv2d with a Winograd algo: emit_winograd.c), the direct kernel of
 * emit_conv_small.c for algo "small", or plain loops;
 * bias, a residual (fused_conv2d's fourth input) and activation as an
 * epilogue.
 * Also the scratch the GEMM form needs (the geometry of a convolution,
 * dy_cg_conv_geom, is conv_geom.c's). */
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"

/* the GEMM tile's rows (packed weights' micro-panels), and as a string */
#define MR DY_GEMM_MR

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
/* A line that opens a block "{", and the line that closes it. */
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
/* A loop (dy_cg_for: none of one trip) and its end. */
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

typedef long long ll;

/* The input as the windows see it, padding included: hp x wp. False when
 * no window leaves the input (no padding needed). */
static bool conv_padded(const dy_cg_conv_geom *g, ll *hp, ll *wp) {
  ll pb = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1 - g->h - g->pt;
  ll pr = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1 - g->w - g->pl;
  pb = pb > 0 ? pb : 0;
  pr = pr > 0 ? pr : 0;
  *hp = g->h + g->pt + pb;
  *wp = g->w + g->pl + pr;
  return g->pt > 0 || g->pl > 0 || pb > 0 || pr > 0;
}

/* The direct convolution: plain loops, any operands (a weight computed at
 * run time too). */
static dy_status emit_conv_direct(dy_cg_ctx *ctx, const dy_cg_conv_geom *gp) {
  dy_cg_conv_geom g = *gp;
  ll cg = g.c / g.groups, og = g.o / g.groups;
  char nb[64], t[128], iy[160], ix[160];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));
  /* iy = oy*sh - pt + i*dh stays inside [0, h) unless padding pushes it out */
  bool lo_h = g.pt > 0, hi_h = (g.oh - 1) * g.sh - g.pt + (g.kh - 1) * g.dh >= g.h;
  bool lo_w = g.pl > 0, hi_w = (g.ow - 1) * g.sw - g.pl + (g.kw - 1) * g.dw >= g.w;
  dy_cg_sum2(iy, sizeof iy, dy_cg_affine(t, sizeof t, "oy", g.sh, -g.pt), "i", g.dh);
  dy_cg_sum2(ix, sizeof ix, dy_cg_affine(t, sizeof t, "ox", g.sw, -g.pl), "j", g.dw);

  L("/* y[n][oc][oy][ox] = sum over c < %lld, i < %lld, j < %lld of", cg, g.kh, g.kw);
  if (g.groups == 1)
    L(" *   x[n][c][%s][%s] * w[oc][c][i][j] */", iy, ix);
  else
    L(" *   x[n][(oc / %lld) * %lld + c][%s][%s] * w[oc][c][i][j] */", og, cg, iy, ix);
  FOR("for (int64_t n = 0; n < %s; n++) {", nb);
  FOR("for (int64_t oc = 0; oc < %lld; oc++) {", g.o);
  if (g.groups == 1)
    L("const float *x = %s + n * %lld;", IN(0), g.c * g.h * g.w);
  else
    L("const float *x = %s + (n * %lld + (oc / %lld) * %lld) * %lld;", IN(0), g.c, og, cg,
      g.h * g.w);
  L("const float *wk = %s + oc * %lld;", IN(1), cg * g.kh * g.kw);
  L("float *y = %s + (n * %lld + oc) * %lld;", OUT(0), g.o, g.oh * g.ow);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", g.oh);
  FOR("for (int64_t ox = 0; ox < %lld; ox++) {", g.ow);
  L("float acc = 0.0f;");
  FOR("for (int64_t c = 0; c < %lld; c++) {", cg);
  FOR("for (int64_t i = 0; i < %lld; i++) {", g.kh);
  L("const int64_t iy = %s;", iy);
  dy_cg_bounds(ctx, "iy", lo_h, hi_h, g.h);
  FOR("for (int64_t j = 0; j < %lld; j++) {", g.kw);
  L("const int64_t ix = %s;", ix);
  dy_cg_bounds(ctx, "ix", lo_w, hi_w, g.w);
  L("acc += x[(c * %lld + iy) * %lld + ix] * wk[(c * %lld + i) * %lld + j];", g.h, g.w,
    g.kh, g.kw);
  END();
  END();
  END();
  L("y[oy * %lld + ox] = acc;", g.ow);
  END();
  END();
  END();
  END();
  return DY_OK;
}

/* bias, residual and activation over each output channel, after a kernel
 * that wrote the plain convolution */
static dy_status emit_conv_epilogue_loop(dy_cg_ctx *ctx, dy_error *err, bool bias,
                                         bool residual, const char *act, double alpha) {
  char fx[512], v[160];
  if (bias && residual)
    snprintf(v, sizeof v, "(v + %s[c] + %s[at])", IN(2), IN(3));
  else if (bias)
    snprintf(v, sizeof v, "(v + %s[c])", IN(2));
  else if (residual)
    snprintf(v, sizeof v, "(v + %s[at])", IN(3));
  else
    snprintf(v, sizeof v, "v");
  const dy_type *o = dy_cg_out_type(ctx, 0);
  const char *code = ctx->plain_kernels ? NULL : dy_cg_act_tile_code(act);
  if (code) { /* the vector form over the whole output, after bias and residual */
    dy_status s = bias || residual ? emit_conv_epilogue_loop(ctx, err, bias, residual, "", 0)
                                   : DY_OK;
    char total[128];
    if (s == DY_OK) {
      *ctx->uses |= DY_USES_SIMD;
      L("dy_act(%s, %s, %s, DY_ACT_%s);", OUT(0), OUT(0),
        dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), total, sizeof total), code);
    }
    return s;
  }
  if (!dy_cg_act_expr(act, alpha, v, fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  char sn[64];
  snprintf(sn, sizeof sn, "%s", dy_cg_dim(ctx, o, 0));
  L("/* epilogue: %sactivation per output channel */",
    bias && residual ? "bias, residual and " : bias ? "bias and " : residual ? "residual and " : "");
  FOR("for (int64_t n = 0; n < %s; n++)", sn);
  FOR("for (int64_t c = 0; c < %lld; c++)", (ll)o->shape[1]);
  FOR("for (int64_t j = 0; j < %lld; j++) {", (ll)(o->shape[2] * o->shape[3]));
  L("const int64_t at = (n * %lld + c) * %lld + j;", (ll)o->shape[1],
    (ll)(o->shape[2] * o->shape[3]));
  L("const float v = %s[at];", OUT(0));
  L("%s[at] = %s;", OUT(0), fx);
  END();
  END();
  END();
  return DY_OK;
}

/* The 16-pixel im2col panel for pixels [p0, p0 + nr) of the channels from
 * c0 on: scratch[r * 16 + j] = x[c0 + c][iy][ix], 0 in the padding, for r
 * = (c * kh + i) * kw + j'. A run of pixels along one output row is one
 * copy per (c, i, j'): with vector loads where stride 1 makes it
 * contiguous and it lies inside the row, element by element elsewhere. */
static void emit_im2col_panel(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, ll cg, const char *c0,
                              const char *dst) {
  ll ow = g->ow;
  bool lo_h = g->pt > 0, hi_h = (g->oh - 1) * g->sh - g->pt + (g->kh - 1) * g->dh >= g->h;
  bool lo_w = g->pl > 0, hi_w = (g->ow - 1) * g->sw - g->pl + (g->kw - 1) * g->dw >= g->w;
  char t[128], e[160];
  L("/* im2col: %s[r * 16 + j] for pixel p0 + j, r = (c * %lld + i) * %lld + j' */", dst,
    g->kh, g->kw);
  L("int64_t j = 0;");
  OPEN("while (j < nr) { /* a run of pixels along one output row */");
  L("const int64_t oy = (p0 + j) / %lld, ox = (p0 + j) %% %lld;", ow, ow);
  L("const int64_t len = %lld - ox < nr - j ? %lld - ox : nr - j;", ow, ow);
  FOR("for (int64_t c = 0; c < %lld; c++) {", cg);
  FOR("for (int64_t i = 0; i < %lld; i++) {", g->kh);
  dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "oy", g->sh, -g->pt), "i", g->dh);
  L("const int64_t iy = %s;", e);
  L("float *d = %s + (c * %lld + i) * %lld + j;", dst, g->kh, g->kw * 16);
  if (lo_h || hi_h) {
    if (lo_h && hi_h)
      OPEN("if (iy < 0 || iy >= %lld) {", g->h);
    else if (lo_h)
      OPEN("if (iy < 0) {");
    else
      OPEN("if (iy >= %lld) {", g->h);
    FOR("for (int64_t k = 0; k < %lld; k++)", g->kw);
    L("for (int64_t t = 0; t < len; t++)");
    L("  d[k * 16 + t] = 0.0f;");
    END();
    L("continue;");
    CLOSE();
  }
  if (c0)
    L("const float *row = x + (%s + c) * %lld + iy * %lld;", c0, g->h * g->w, g->w);
  else
    L("const float *row = x + c * %lld + iy * %lld;", g->h * g->w, g->w);
  OPEN("for (int64_t k = 0; k < %lld; k++, d += 16) {", g->kw);
  dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "ox", g->sw, -g->pl), "k", g->dw);
  L("const int64_t ix0 = %s;", e);
  const char *inside = lo_w && hi_w ? "ix >= 0 && ix < " : lo_w ? "ix >= 0" : hi_w ? "ix < " : "";
  char cond[96];
  snprintf(cond, sizeof cond, "%s", inside);
  if (hi_w)
    snprintf(cond + strlen(cond), sizeof cond - strlen(cond), "%lld", g->w);
  if (g->sw == 1) {
    /* contiguous: the columns inside the row [t0, t1), zeros around them */
    if (lo_w || hi_w) {
      L("const int64_t t0 = ix0 < 0 ? (-ix0 < len ? -ix0 : len) : 0;");
      L("const int64_t t1 = %lld - ix0 < len ? (%lld - ix0 > t0 ? %lld - ix0 : t0) : len;", g->w,
        g->w, g->w);
    } else {
      L("const int64_t t0 = 0, t1 = len;");
    }
    L("if (t1 - t0 == 16)");
    L("  dy_f16_store(d, dy_f16_load(row + ix0));");
    L("else /* a short run: on AVX-512 one masked load and store */");
    L("  dy_f16_storen(d + t0, dy_f16_loadn(row + ix0 + t0, (int)(t1 - t0)), (int)(t1 - t0));");
    if (lo_w || hi_w) {
      L("for (int64_t t = 0; t < t0; t++)");
      L("  d[t] = 0.0f;");
      L("for (int64_t t = t1; t < len; t++)");
      L("  d[t] = 0.0f;");
    }
  } else {
    OPEN("for (int64_t t = 0; t < len; t++) {");
    if (g->sw == 1)
      L("const int64_t ix = ix0 + t;");
    else
      L("const int64_t ix = ix0 + t * %lld;", g->sw);
    if (lo_w || hi_w)
      L("d[t] = %s ? row[ix] : 0.0f;", cond);
    else
      L("d[t] = row[ix];");
    CLOSE();
  }
  CLOSE();
  END();
  END();
  L("j += len;");
  CLOSE();
}

/* Weight-stationary GEMM convolution (emit_conv_gemm_ws): when the weight
 * is larger than WS_MIN_WEIGHT bytes (so no longer in L2 between panels:
 * the 7x7 and 14x14 layers of resnet18, 4.7-9.4 MB), np panels of
 * im2col(x) at once, at most WS_MAX_SCRATCH bytes, each micro-panel of the
 * weight multiplied into all of them while it is in L1: the weight is read
 * from memory once per np panels instead of once per panel. One group
 * (with threads: the output channels split); --plain-kernels: one panel
 * at a time. */
enum { WS_MIN_WEIGHT = 1 << 20, WS_MAX_SCRATCH = 2 << 20 };

static ll conv_ws_panels(const dy_cg_conv_geom *g, int threads, bool plain) {
  ll r = g->c / (g->groups > 0 ? g->groups : 1) * g->kh * g->kw;
  ll panels = (g->oh * g->ow + 15) / 16;
  if (plain || g->groups != 1 || panels < 2 || g->o * r * 4 <= WS_MIN_WEIGHT)
    return 1;
  ll np = WS_MAX_SCRATCH / (r * 64);
  if (np < 2)
    return 1;
  ll blocks = (panels + np - 1) / np; /* as few blocks as fit, of equal size */
  return (panels + blocks - 1) / blocks;
}

int64_t dy_codegen_conv_panels(const dy_program *p, const dy_op *op, int threads,
                               bool plain_kernels) {
  if ((op->kind != DY_OP_CONV2D && op->kind != DY_OP_FUSED_CONV2D) ||
      dy_gemm_pack_of(p, op, 1).kind != DY_PACK_A12)
    return 1;
  dy_cg_conv_geom g = dy_cg_conv_geom_of(p, op);
  return conv_ws_panels(&g, threads, plain_kernels);
}

/* Scratch of the GEMM convolution, per thread: an im2col panel of r x 16
 * floats, then, when the convolution pads, the zero-padded image.
 * Winograd's: emit_winograd.c. */
int64_t dy_cg_conv_scratch(const dy_program *p, const dy_op *op, int threads) {
  if (op->kind == DY_OP_FUSED_CONV2D_POOL ||
      (op->kind == DY_OP_FUSED_CONV2D && strcmp(dy_fused_conv2d_attrs_get(op).algo, "small") == 0)) {
    return dy_cg_conv_small_scratch(p, op, threads); /* emit_conv_small.c */
  }
  dy_pack k = dy_gemm_pack_of(p, op, 1);
  if (k.kind == DY_PACK_WINO) {
    dy_cg_conv_geom g = dy_cg_conv_geom_of(p, op);
    return dy_cg_winograd_scratch(&g, dy_winograd_tile(dy_fused_conv2d_attrs_get(op).algo),
                                  p->vars[op->inputs[0]]->type.shape[0]);
  }
  if (k.kind == DY_PACK_NONE && dy_codegen_depthwise_padded(p, op, false)) {
    dy_cg_conv_geom g = dy_cg_conv_geom_of(p, op);
    return dy_cg_depthwise_scratch(&g, threads); /* emit_depthwise.c */
  }
  if (k.kind != DY_PACK_A12)
    return 0;
  dy_cg_conv_geom g = dy_cg_conv_geom_of(p, op);
  ll hp, wp, padded = conv_padded(&g, &hp, &wp) ? g.c * hp * wp : 0;
  /* the panels of the weight-stationary form (as without --plain-kernels) */
  ll np = conv_ws_panels(&g, threads, false);
  return (k.cols * 16 * np + padded) * (threads > 1 ? threads : 1) * 4;
}

/* Image n of the input into xp = scratch + at: hp x wp planes, zero
 * around the input placed at (pt, pl). */
static void emit_pad_image(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, ll hp, ll wp, ll at) {
  L("/* the image, zero-padded to %lld x %lld */", hp, wp);
  L("float *xp = scratch + %lld;", at);
  FOR("for (int64_t q = 0; q < %lld; q++)", g->c * hp * wp);
  L("xp[q] = 0.0f;");
  END();
  FOR("for (int64_t c = 0; c < %lld; c++)", g->c);
  FOR("for (int64_t iy = 0; iy < %lld; iy++)", g->h);
  L("dy_copy(xp + (c * %lld + iy + %lld) * %lld + %lld, %s + ((n * %lld + c) * %lld + iy) * %lld,",
    hp, g->pt, wp, g->pl, IN(0), g->c, g->h, g->w);
  L("        %lld);", g->w);
  END();
  END();
}

void dy_cg_gemm_kblocks_open(dy_cg_ctx *ctx, long long depth, long long nkb, long long kc,
                             bool add_c, const char *epi) {
  if (nkb > 1) {
    OPEN("for (int64_t k0 = 0; k0 < %lld; k0 += %lld) {", depth, kc);
    L("const int64_t kc = %lld - k0 < %lld ? %lld - k0 : %lld;", depth, kc, depth, kc);
    if (add_c)
      L("const int flags = DY_GEMM_ADD_C | (k0 + kc == %lld ? %s : 0);", depth, epi);
    else
      L("const int flags = (k0 > 0 ? DY_GEMM_ADD_C : 0) | (k0 + kc == %lld ? %s : 0);", depth,
        epi);
  } else {
    L("const int64_t kc = %lld;", depth);
    L("const int flags = %s%s;", add_c ? "DY_GEMM_ADD_C | " : "", epi);
  }
}

/* The weight-stationary form (conv_ws_panels): per image, blocks of np
 * panels gathered into the scratch, then per block of k and micro-panel
 * of the weight a tile of each panel. One group. With threads, per block
 * two splits: the panels' gathers (panel s of the block), then the
 * micro-panels of the weight (output channels), each thread times all
 * the block's panels (shared in the scratch): each thread reads its share
 * of the weight once per block. */

/* gather panel s of the block at pb (p0, nr, the residual into y, the
 * zeroed columns past nr) */
static void ws_gather_panel(dy_cg_ctx *ctx, const dy_cg_conv_geom *gi, ll r, ll p, ll o,
                            bool residual, const char *nr_line) {
  L("const int64_t p0 = pb + s * 16;");
  L(nr_line, p, p);
  L("float *const panel = scratch + s * %lld;", r * 16);
  if (residual) {
    L("for (int64_t oc = 0; oc < %lld; oc++) /* the residual, added by the GEMM */", o);
    L("  dy_copy(y + oc * %lld + p0, res + oc * %lld + p0, nr);", p, p);
  }
  emit_im2col_panel(ctx, gi, gi->c, NULL, "panel");
  if (p % 16 != 0) {
    L("/* the last panel's columns past nr: computed, never stored */");
    L("for (int64_t r = 0; r < %lld && nr < 16; r++)", r);
    L("  for (int j = nr; j < 16; j++)");
    L("    panel[r * 16 + j] = 0.0f;");
  }
}

/* micro-panel oc of the weight, its blocks of k in order (the weight is
 * read as one stream, which the kernels prefetch ahead), each times all
 * ns panels of the block */
static void ws_tiles(dy_cg_ctx *ctx, ll o, ll r, ll p, ll mr, bool residual, const char *epi,
                     const char *alit, bool bias, const char *nr_line) {
  ll nkb = (r + 511) / 512, kc = (r + nkb - 1) / nkb;
  char k0a[32] = "";
  const char *k0b = "";
  dy_cg_gemm_kblocks_open(ctx, r, nkb, kc, residual, epi);
  if (nkb > 1) {
    snprintf(k0a, sizeof k0a, " + k0 * %lld", mr);
    k0b = " + k0 * 16";
  }
  L("const float *a = %s + oc * %lld%s; /* the block of the micro-panel, kept in L1 */",
    IN(1), r, k0a);
  OPEN("for (int64_t s = 0; s < ns; s++) {");
  L("const int64_t p0 = pb + s * 16;");
  L(nr_line, p, p);
  dy_cg_gemm_rows(ctx, o, o);
  L("dy_gemm_tile(%lld - oc, kc, a, 1, %lld, scratch + s * %lld%s, y + oc * %lld + p0, %lld,", o,
    mr, r * 16, k0b, p, p);
  char b[64];
  snprintf(b, sizeof b, "%s + oc", IN(2));
  L("             nr, flags, %s, %s);", bias ? b : "0", alit);
  CLOSE();
  if (nkb > 1)
    CLOSE();
}

static void emit_conv_gemm_ws(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const dy_pack *pk,
                              ll np, bool bias, bool residual, const char *epi,
                              const char *alit, const char *nb) {
  ll o = g->o, r = pk->cols, p = g->oh * g->ow, mr = dy_gemm_pack_mr(o), hp, wp;
  ll nq = (o + MR - 1) / MR;
  L("/* as GEMM, weight-stationary: y[n] (%lld x %lld pixels) = w (%lld x %lld, %s packed:", o,
    p, o, r, IN(1));
  L(" * %lld micro-panels of %lld x %lld) times im2col(x[n]) (%lld x %lld), gathered %lld",
    (o + mr - 1) / mr, r, mr, r, p, np);
  L(" * panels of 16 pixels at a time; each micro-panel of w (%lld bytes in all: more than",
    o * r * 4);
  L(" * L2) times all of them while it is in L1%s */",
    ctx->threads > 1 ? "; with threads the gathers, then\n * the micro-panels, split" : "");
  bool padded = conv_padded(g, &hp, &wp);
  dy_cg_conv_geom gi = *g;
  if (padded)
    gi.h = hp, gi.w = wp, gi.pt = 0, gi.pl = 0;
  const char *nr_line = p % 16 == 0 ? "const int nr = 16;"
                                    : "const int nr = %lld - p0 < 16 ? (int)(%lld - p0) : 16;";
  char fg[64], fm[64];
  if (ctx->threads > 1) {
    /* the two splits, as functions of a block's args */
    int id = ctx->op->id;
    snprintf(fg, sizeof fg, "k%d_part%d", id, ctx->n_parts++);
    snprintf(fm, sizeof fm, "k%d_part%d", id, ctx->n_parts++);
    *ctx->uses |= DY_USES_THREADS;
    const char *W = IN(1), *B = IN(2);
    dy_buf_printf(ctx->before,
                  "/* op %d: a block of panels of one image, weight-stationary */\n"
                  "typedef struct {\n"
                  "  const float *x, *%s, *%s, *res;\n"
                  "  float *y, *scratch;\n"
                  "  int64_t pb, ns;\n"
                  "} k%d_ws_args;\n\n",
                  id, W, B, id);
    const char *head =
        "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
        "  const k%d_ws_args *g_ = (const k%d_ws_args *)arg;\n"
        "  const float *x = g_->x, *%s = g_->%s, *%s = g_->%s, *res = g_->res;\n"
        "  float *y = g_->y, *scratch = g_->scratch;\n"
        "  const int64_t pb = g_->pb, ns = g_->ns;\n"
        "  (void)x, (void)%s, (void)%s, (void)res, (void)y, (void)ns, (void)t;\n";
    dy_cg_ctx sub = *ctx;
    sub.body = ctx->before;
    sub.indent = 1;
    dy_buf_printf(ctx->before, "/* op %d: panels [lo, hi) of the block, gathered */\n", id);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    dy_buf_printf(ctx->before, head, fg, id, id, W, W, B, B, W, B);
    dy_cg_ctx *outer = ctx;
    ctx = &sub;
    OPEN("for (int64_t s = lo; s < hi; s++) {");
    ws_gather_panel(ctx, &gi, r, p, o, residual, nr_line);
    CLOSE();
    dy_buf_puts(outer->before, "}\n\n");
    dy_buf_printf(outer->before,
                  "/* op %d: micro-panels [lo, hi) of the weight times the block's panels */\n",
                  id);
    dy_buf_printf(outer->before, head, fm, id, id, W, W, B, B, W, B);
#pragma GCC diagnostic pop
    OPEN("for (int64_t q = lo; q < hi; q++) {");
    L("const int64_t oc = q * %d;", MR);
    ws_tiles(ctx, o, r, p, mr, residual, epi, alit, bias, nr_line);
    CLOSE();
    dy_buf_puts(outer->before, "}\n\n");
    ctx = outer;
    L("k%d_ws_args args;", id);
    L("const int par = %s * %lld >= DY_THREAD_MIN_WORK; /* multiply-adds: worth the threads? */",
      nb, o * r * p);
    L("args.%s = %s, args.%s = %s, args.scratch = scratch;", W, W, B, bias ? B : "0");
  }
  FOR("for (int64_t n = 0; n < %s; n++) {", nb);
  if (padded) {
    emit_pad_image(ctx, g, hp, wp, np * r * 16);
    L("const float *x = xp;");
  } else {
    L("const float *x = %s + n * %lld;", IN(0), g->c * g->h * g->w);
  }
  L("float *y = %s + n * %lld;", OUT(0), o * p);
  if (residual)
    L("const float *res = %s + n * %lld;", IN(3), o * p);
  FOR("for (int64_t pb = 0; pb < %lld; pb += %lld) {", p, np * 16);
  L("const int64_t ns = %lld - pb < %lld ? (%lld - pb + 15) / 16 : %lld;", p, np * 16, p, np);
  L("/* the block's panels: panel s at scratch + s * %lld */", r * 16);
  if (ctx->threads > 1) {
    L("args.x = x, args.y = y, args.res = %s, args.pb = pb, args.ns = ns;",
      residual ? "res" : "0");
    L("if (par)");
    L("  dy_parallel(ns, %s, &args), dy_parallel(%lld, %s, &args);", fg, nq, fm);
    L("else");
    L("  %s(&args, 0, ns, 0), %s(&args, 0, %lld, 0);", fg, fm, nq);
  } else {
    OPEN("for (int64_t s = 0; s < ns; s++) {");
    ws_gather_panel(ctx, &gi, r, p, o, residual, nr_line);
    CLOSE();
    FOR("for (int64_t oc = 0; oc < %lld; oc += %d) {", o, MR);
    ws_tiles(ctx, o, r, p, mr, residual, epi, alit, bias, nr_line);
    END();
  }
  END();
  END();
}

/* The head of the GEMM convolution's worker function (before the kernel),
 * its name into fn: items [lo, hi) of batch x panels, one thread's share;
 * each thread gathers into its own slice of the scratch (slice floats)
 * and, with padding, pads each image it reaches into the same slice. */
static void put_gemm_worker_head(dy_cg_ctx *ctx, char *fn, size_t fn_n, bool bias,
                                 bool residual, ll slice) {
  const char *X = IN(0), *W = IN(1), *B = IN(2), *R = IN(3), *Y = OUT(0);
  snprintf(fn, fn_n, "k%d_part%d", ctx->op->id, ctx->n_parts++);
  dy_buf_printf(ctx->before,
                "/* op %d: items [lo, hi) of (image, 16-pixel panel), one thread's share */\n"
                "typedef struct {\n"
                "  const float *%s, *%s, *%s, *%s;\n"
                "  float *%s, *scratch;\n"
                "} %s_args;\n\n"
                "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                "  const %s_args *g_ = (const %s_args *)arg;\n"
                "  const float *%s = g_->%s, *%s = g_->%s",
                ctx->op->id, X, W, B, R, Y, fn, fn, fn, fn, X, X, W, W);
  if (bias)
    dy_buf_printf(ctx->before, ", *%s = g_->%s", B, B);
  if (residual)
    dy_buf_printf(ctx->before, ", *%s = g_->%s", R, R);
  dy_buf_printf(ctx->before, ", *x = %s;\n"
                "  float *y = g_->%s, *scratch = g_->scratch + (int64_t)t * %lld;\n"
                "  int64_t cur = -1;\n", X, Y, slice);
  if (residual)
    dy_buf_printf(ctx->before, "  const float *res = %s;\n", R);
  *ctx->uses |= DY_USES_THREADS;
}

/* conv2d as GEMM on the micro-kernel: per image and 16-pixel panel, the
 * panel of im2col(x) is gathered into the scratch, then each 12 output
 * channels' packed weight times it gives a 12 x 16 tile of y, bias
 * and activation applied in registers. */
static dy_status emit_conv_gemm(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                                const dy_pack *pk, bool bias, bool residual, const char *act,
                                double alpha) {
  ll groups = g->groups, cg = g->c / groups, og = g->o / groups, r = pk->cols;
  ll p = g->oh * g->ow, mr = dy_gemm_pack_mr(og), nq = (og + mr - 1) / mr, nkb = (r + 511) / 512, kc = (r + nkb - 1) / nkb;
  char alit[64] = "0.0f", epi[160];
  if (!dy_gemm_act_flag(act))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  if (dy_cg_act_uses_alpha(act) && !dy_float_literal((float)alpha, alit, sizeof alit))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "alpha is not finite");
  dy_gemm_epilogue_flags(epi, sizeof epi, bias ? "DY_GEMM_BIAS_ROW" : NULL, act);
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  char nb[64];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));
  ll np = conv_ws_panels(g, ctx->threads, ctx->plain_kernels);
  if (np > 1) {
    emit_conv_gemm_ws(ctx, g, pk, np, bias, residual, epi, alit, nb);
    return DY_OK;
  }

  L("/* as GEMM: y[n] (%lld x %lld pixels) = w (%lld x %lld, %s packed: %lld micro-panel%s",
    g->o, p, g->o, r, IN(1), groups * nq, groups * nq == 1 ? "" : "s");
  L(" * of %lld x %lld) times im2col(x[n]) (%lld x %lld), gathered 16 pixels at a time */", r,
    mr, r, p);
  ll panels = (p + 15) / 16, hp, wp;
  /* with padding, the im2col reads a zero-padded copy of the image (after
   * the panels in the scratch), so it never checks bounds */
  bool padded = conv_padded(g, &hp, &wp);
  dy_cg_conv_geom gi = *g;
  if (padded)
    gi.h = hp, gi.w = wp, gi.pt = 0, gi.pl = 0;
  char fn[64];
  ll slice = r * 16 + (padded ? g->c * hp * wp : 0); /* one thread's scratch */
  const char *X = IN(0), *W = IN(1), *B = IN(2), *R = IN(3), *Y = OUT(0);
  if (ctx->threads > 1)
    put_gemm_worker_head(ctx, fn, sizeof fn, bias, residual, slice);
  /* one thread: loops over images and panels; threads: over the items of
   * the share (in the worker, before the kernel), x and y set when the
   * image changes */
  bool one = ctx->threads <= 1;
  dy_cg_ctx sub = *ctx;
  if (!one) {
    sub.body = ctx->before;
    sub.indent = 1;
  }
  dy_cg_ctx *outer = ctx;
  if (!one)
    ctx = &sub;
  if (one) {
    FOR("for (int64_t n = 0; n < %s; n++) {", nb);
  } else {
    OPEN("for (int64_t it = lo; it < hi; it++) {");
    L("const int64_t n = it / %lld, p0 = it %% %lld * 16;", panels, panels);
    OPEN("if (n != cur) { /* a new image */");
    L("cur = n;");
  }
  if (padded)
    emit_pad_image(ctx, g, hp, wp, r * 16);
  if (padded)
    L("%sx = xp;", one ? "const float *" : "");
  else
    L("%sx = %s + n * %lld;", one ? "const float *" : "", X, g->c * g->h * g->w);
  L("%sy = %s%s + n * %lld;", one ? "float *" : "", one ? "" : "g_->", Y, g->o * p);
  if (residual)
    L("%sres = %s + n * %lld;", one ? "const float *" : "", R, g->o * p);
  if (one)
    FOR("for (int64_t p0 = 0; p0 < %lld; p0 += 16) {", p);
  else
    CLOSE();
  if (p % 16 == 0)
    L("const int nr = 16;");
  else
    L("const int nr = %lld - p0 < 16 ? (int)(%lld - p0) : 16;", p, p);
  if (residual) {
    /* y = act(res + w x + b): the panel's residual first, which the GEMM
     * adds to (DY_GEMM_ADD_C) before the bias and the activation */
    L("for (int64_t oc = 0; oc < %lld; oc++) /* the residual, added by the GEMM */", g->o);
    L("  dy_copy(y + oc * %lld + p0, res + oc * %lld + p0, nr);", p, p);
  }
  char c0[64];
  snprintf(c0, sizeof c0, "g * %lld", cg);
  if (groups > 1)
    FOR("for (int64_t g = 0; g < %lld; g++) {", groups);
  emit_im2col_panel(ctx, &gi, cg, groups > 1 ? c0 : NULL, "scratch");
  if (p % 16 != 0) {
    L("/* the last panel's columns past nr: computed, never stored */");
    FOR("for (int64_t r = 0; r < %lld; r++)", r);
    L("for (int j = nr; j < 16; j++)");
    L("  scratch[r * 16 + j] = 0.0f;");
    END();
  }
  dy_cg_gemm_kblocks_open(ctx, r, nkb, kc, residual, epi);
  /* the depth offset of the block: no term when there is one block */
  char k0a[32] = "";
  const char *k0b = nkb > 1 ? " + k0 * 16" : "";
  if (nkb > 1)
    snprintf(k0a, sizeof k0a, " + k0 * %lld", mr);
  dy_cg_gemm_rows(ctx, og, og);
  FOR("for (int64_t o = 0; o < %lld; o += %d) {", og, MR);
  if (groups > 1) {
    L("const int64_t oc = g * %lld + o;", og);
    L("dy_gemm_tile(%lld - o, kc, %s + g * %lld + o * %lld%s, 1, %lld,", og, W, nq * mr * r, r,
      k0a, mr);
    L("             scratch%s,", k0b);
  } else {
    L("const int64_t oc = o;");
    L("dy_gemm_tile(%lld - o, kc, %s + o * %lld%s, 1, %lld, scratch%s,", og, W, r, k0a, mr, k0b);
  }
  char bo[64];
  snprintf(bo, sizeof bo, "%s + oc", B);
  L("             y + oc * %lld + p0, %lld, nr, flags, %s, %s);", p, p, bias ? bo : "0", alit);
  END();
  if (nkb > 1)
    CLOSE();
  if (groups > 1)
    END();
  if (one) {
    END(); /* p0 */
    END(); /* n */
    return DY_OK;
  }
  CLOSE(); /* it */
  ctx = outer;
  dy_buf_puts(ctx->before, "}\n\n");
  /* the kernel: all images' panels over the threads, in one call */
  L("%s_args args;", fn);
  L("args.%s = %s, args.%s = %s, args.%s = %s, args.%s = %s;", X, X, W, W, B, bias ? B : "0", R,
    residual ? R : "0");
  L("args.%s = %s, args.scratch = scratch;", Y, Y);
  L("if (%s * %lld >= DY_THREAD_MIN_WORK) /* multiply-adds: worth the threads? */", nb,
    g->o * r * p);
  L("  dy_parallel(%s * %lld, %s, &args);", nb, panels, fn);
  L("else");
  L("  %s(&args, 0, %s * %lld, 0);", fn, nb, panels);
  return DY_OK;
}

/* act (its expression fx over v) on the output row y[0..ow), when there
 * is one: the row is still in L1 */
static void emit_row_act(dy_cg_ctx *ctx, ll ow, const char *act, const char *fx) {
  if (!act || !*act)
    return;
  if (!ctx->plain_kernels && dy_cg_act_tile_code(act)) { /* its vector form, out of line */
    L("dy_act(y, y, %lld, DY_ACT_%s);", ow, dy_cg_act_tile_code(act));
    return;
  }
  FOR("for (int64_t ox = 0; ox < %lld; ox++) {", ow);
  L("const float v = y[ox];");
  L("y[ox] = %s;", fx);
  END();
}

/* Depthwise (one input and one output channel per group): per channel
 * and output row, y += w[i][j] * x[iy][ix] one tap at a time along the
 * row, vectorised where the stride is 1; the valid columns of each tap are
 * worked out here, so the inner loops have no bounds checks. */
static dy_status emit_conv_depthwise(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                                     bool bias, const char *act, double alpha) {
  char fx[512];
  if (!dy_cg_act_expr(act, alpha, "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  *ctx->uses |= DY_USES_SIMD;
  char planes[128];
  dy_ext_str(ctx, dy_ext_range(dy_cg_in_type(ctx, 0), 0, 2), planes, sizeof planes);
  bool lo_h = g->pt > 0, hi_h = (g->oh - 1) * g->sh - g->pt + (g->kh - 1) * g->dh >= g->h;
  char t[128], e[160];
  char bc[64];
  snprintf(bc, sizeof bc, "%s[c]", IN(2));
  L("/* depthwise: y[c][oy][ox] = %s%sw[c][i][j] * x[c][iy][ix] */", bias ? bc : "",
    bias ? " + sum of " : "sum of ");
  FOR("for (int64_t pl = 0; pl < %s; pl++) {", planes);
  L("const int64_t c = pl %% %lld;", g->c);
  L("const float *x = %s + pl * %lld;", IN(0), g->h * g->w);
  L("const float *w = %s + c * %lld;", IN(1), g->kh * g->kw);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", g->oh);
  L("float *y = %s + pl * %lld + oy * %lld;", OUT(0), g->oh * g->ow, g->ow);
  FOR("for (int64_t ox = 0; ox < %lld; ox++)", g->ow);
  L("y[ox] = %s;", bias ? bc : "0.0f");
  END();
  FOR("for (int64_t i = 0; i < %lld; i++) {", g->kh);
  dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "oy", g->sh, -g->pt), "i", g->dh);
  L("const int64_t iy = %s;", e);
  dy_cg_bounds(ctx, "iy", lo_h, hi_h, g->h);
  L("const float *row = x + iy * %lld;", g->w);
  for (ll j = 0; j < g->kw; j++) {
    /* columns ox with 0 <= ox*sw - pl + j*dw < w */
    ll off = j * g->dw - g->pl, lo = 0, hi = g->ow;
    while (lo < g->ow && lo * g->sw + off < 0)
      lo++;
    while (hi > lo && (hi - 1) * g->sw + off >= g->w)
      hi--;
    if (lo >= hi)
      continue;
    OPEN("{ /* tap j = %lld: columns %lld..%lld */", j, lo, hi - 1);
    L("const float wv = w[i * %lld + %lld];", g->kw, j);
    L("int64_t ox = %lld;", lo);
    if (g->sw == 1) {
      L("for (; ox + DY_VW <= %lld; ox += DY_VW)", hi);
      L("  dy_vstore(y + ox, dy_vfma(dy_vset(wv), dy_vload(row + ox%s), dy_vload(y + ox)));",
        off ? (snprintf(t, sizeof t, " %c %lld", off < 0 ? '-' : '+', off < 0 ? -off : off), t) : "");
    }
    L("for (; ox < %lld; ox++)", hi);
    dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "ox", g->sw, off), "", 0);
    L("  y[ox] += wv * row[%s];", e);
    CLOSE();
  }
  END();
  emit_row_act(ctx, g->ow, act, fx);
  END();
  END();
  return DY_OK;
}

/* Can the register-blocked depthwise kernel take g? Stride 1 or 2 along
 * rows, taps unrolled (at most 49). */
static bool depthwise_blocked_fits(const dy_cg_conv_geom *g) {
  return (g->sw == 1 || g->sw == 2) && g->kh * g->kw <= 49;
}

/* Depthwise, register-blocked: per channel and output row, DY_VW outputs
 * at a time are summed over every tap in one register (the taps' weights
 * broadcast once per channel; stride 2 splits even and odd columns with
 * dy_vdeint) and stored once, where every tap's column lies inside the
 * row; the columns near the edges one by one with their checks; rows
 * outside the input skipped. act on the finished row. */
static dy_status emit_conv_depthwise_blocked(dy_cg_ctx *ctx, dy_error *err,
                                             const dy_cg_conv_geom *g, bool bias,
                                             const char *act, double alpha) {
  char fx[512];
  if (!dy_cg_act_expr(act, alpha, "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  *ctx->uses |= DY_USES_SIMD;
  char planes[128];
  dy_ext_str(ctx, dy_ext_range(dy_cg_in_type(ctx, 0), 0, 2), planes, sizeof planes);
  /* output columns where every tap is inside the row: [cl, ch) */
  ll cl = 0, ch = g->ow;
  for (ll j = 0; j < g->kw; j++) {
    ll off = j * g->dw - g->pl;
    while (cl < g->ow && cl * g->sw + off < 0)
      cl++;
    while (ch > cl && (ch - 1) * g->sw + off >= g->w)
      ch--;
  }
  char t[128], e[160];
  char bc[64];
  snprintf(bc, sizeof bc, "%s[c]", IN(2));
  L("/* depthwise, register-blocked: y[c][oy][ox] = %s%ssum of w[c][i][j] * x[c][iy][ix];",
    bias ? bc : "", bias ? " + " : "");
  L(" * columns %lld..%lld DY_VW at a time over all %lld taps, the rest one by one */", cl,
    ch - 1, g->kh * g->kw);
  FOR("for (int64_t pl = 0; pl < %s; pl++) {", planes);
  L("const int64_t c = pl %% %lld;", g->c);
  L("const float *x = %s + pl * %lld;", IN(0), g->h * g->w);
  L("const float *w = %s + c * %lld;", IN(1), g->kh * g->kw);
  L("const float b0 = %s;", bias ? bc : "0.0f");
  for (ll i = 0; i < g->kh; i++)
    for (ll j = 0; j < g->kw; j++)
      L("const dy_vf w%lld_%lld = dy_vset(w[%lld]);", i, j, i * g->kw + j);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", g->oh);
  L("float *y = %s + pl * %lld + oy * %lld;", OUT(0), g->oh * g->ow, g->ow);
  /* which rows of the window are inside the input */
  bool lo_h = g->pt > 0, hi_h = (g->oh - 1) * g->sh - g->pt + (g->kh - 1) * g->dh >= g->h;
  for (ll i = 0; i < g->kh; i++) {
    dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "oy", g->sh, -g->pt), "", 0);
    L("const int64_t iy%lld = %s + %lld;", i, e, i * g->dh);
    if (lo_h && hi_h)
      L("const int ok%lld = iy%lld >= 0 && iy%lld < %lld;", i, i, i, g->h);
    else if (lo_h)
      L("const int ok%lld = iy%lld >= 0;", i, i);
    else if (hi_h)
      L("const int ok%lld = iy%lld < %lld;", i, i, g->h);
    else
      L("const int ok%lld = 1;", i);
    L("const float *r%lld = x + (ok%lld ? iy%lld : 0) * %lld;", i, i, i, g->w);
  }
  /* the columns near the edges, one by one: [0, cl) and [ch, ow) */
  for (int side = 0; side < 2; side++) {
    ll from = side ? ch : 0, to = side ? g->ow : cl;
    if (from >= to)
      continue;
    FOR("for (int64_t ox = %lld; ox < %lld; ox++) {", from, to);
    L("float acc = b0;");
    for (ll i = 0; i < g->kh; i++) {
      OPEN("if (ok%lld) {", i);
      for (ll j = 0; j < g->kw; j++) {
        dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "ox", g->sw, j * g->dw - g->pl), "", 0);
        L("const int64_t ix%lld = %s;", j, e);
        L("if (ix%lld >= 0 && ix%lld < %lld) acc += w[%lld] * r%lld[ix%lld];", j, j, g->w,
          i * g->kw + j, i, j);
      }
      CLOSE();
    }
    L("y[ox] = acc;");
    END();
  }
  /* stride 2: the odd lanes load one column past the last tap's; keep
   * that inside the row too */
  ll cv = ch;
  for (ll j = 0; g->sw == 2 && j < g->kw; j++)
    while (cv > cl && (cv - 1) * 2 + j * g->dw - g->pl + 1 >= g->w)
      cv--;
  if (ch > cl) {
    L("int64_t ox = %lld;", cl);
    OPEN("for (; ox + DY_VW <= %lld; ox += DY_VW) {", cv);
    L("dy_vf acc = dy_vset(b0);%s", g->sw == 2 ? " dy_vf ev, od;" : "");
    for (ll i = 0; i < g->kh; i++) {
      OPEN("if (ok%lld) {", i);
      for (ll j = 0; j < g->kw; j++) {
        ll off = j * g->dw - g->pl;
        char o[48] = "";
        if (off)
          snprintf(o, sizeof o, " %c %lld", off < 0 ? '-' : '+', off < 0 ? -off : off);
        if (g->sw == 1) {
          L("acc = dy_vfma(w%lld_%lld, dy_vload(r%lld + ox%s), acc);", i, j, i, o);
        } else {
          L("dy_vdeint(dy_vload(r%lld + 2 * ox%s), dy_vload(r%lld + 2 * ox%s + DY_VW), &ev, &od);",
            i, o, i, o);
          L("acc = dy_vfma(w%lld_%lld, ev, acc);", i, j);
        }
      }
      CLOSE();
    }
    L("dy_vstore(y + ox, acc);");
    CLOSE();
    OPEN("for (; ox < %lld; ox++) {", ch);
    L("float acc = b0;");
    for (ll i = 0; i < g->kh; i++) {
      OPEN("if (ok%lld) {", i);
      for (ll j = 0; j < g->kw; j++) {
        dy_cg_sum2(e, sizeof e, dy_cg_affine(t, sizeof t, "ox", g->sw, j * g->dw - g->pl), "", 0);
        L("acc += w[%lld] * r%lld[%s];", i * g->kw + j, i, e);
      }
      CLOSE();
    }
    L("y[ox] = acc;");
    CLOSE();
  }
  emit_row_act(ctx, g->ow, act, fx);
  END();
  END();
  return DY_OK;
}

/* One window, the whole input (algo "gemv", the pass conv-gemv): y[n] =
 * act(w x[n] + b) as a GEMV (a GEMM of batch rows), x read in place, the
 * weight packed transposed in panels of 16 output channels (DY_PACK_B16),
 * the bias and act in the 1-row micro-kernel's epilogue. */
static dy_status emit_conv_gemv(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                                const dy_pack *pk, bool bias, const char *act, double alpha) {
  char sm[64], sk[32], so[32];
  const dy_type *x = dy_cg_in_type(ctx, 0);
  snprintf(sm, sizeof sm, "%s", dy_cg_dim(ctx, x, 0));
  snprintf(sk, sizeof sk, "%lld", (ll)pk->rows);
  snprintf(so, sizeof so, "%lld", g->o);
  L("/* one window, the whole input: y[n] (%lld) = w (%lld x %lld) x[n] (%lld) as a GEMV, %s",
    g->o, g->o, (ll)pk->rows, (ll)pk->rows, IN(1));
  L(" * packed transposed: %lld panel%s of %lld x 16 output channels */", (ll)(pk->cols + 15) / 16,
    pk->cols > 16 ? "s" : "", (ll)pk->rows);
  dy_gemm_call c = {.m = sm, .n = pk->cols, .k = pk->rows, .a = IN(0), .rsa = sk, .csa = "1",
                    .b = IN(1), .c = OUT(0), .ldc = so, .bias = bias ? IN(2) : NULL,
                    .act = act, .alpha = alpha, .ap = NULL,
                    .m_static = x->shape[0] >= 0 ? x->shape[0] : -1,
                    .m_max = dy_program_sym_bound(ctx->p, 0)};
  return dy_cg_gemm_loops(ctx, err, &c);
}

/* conv2d, and fused_conv2d's act(conv2d(x, w) + b + r): on the GEMM when
 * the weight is constant (the residual added in registers), a direct
 * depthwise kernel, or plain loops (the residual in a loop after). */
dy_status dy_cg_conv2d_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias, bool residual,
                                const char *act, double alpha) {
  dy_status s = DY_OK;
  dy_cg_conv_geom g = dy_cg_conv_geom_of(ctx->p, ctx->op);
  dy_pack pk = dy_gemm_pack_of(ctx->p, ctx->op, 1);
  if (pk.kind == DY_PACK_WINO) /* the weight is transformed: this kernel only */
    return dy_cg_conv_winograd(ctx, err, &g, bias, residual, act, alpha);
  if (ctx->op->kind == DY_OP_FUSED_CONV2D &&
      strcmp(dy_fused_conv2d_attrs_get(ctx->op).algo, "small") == 0) /* emit_conv_small.c */
    return dy_cg_conv_small(ctx, err, &g, bias, residual, act, alpha, NULL);
  if (pk.kind == DY_PACK_B16) { /* algo gemv */
    bool after = dy_cg_act_scalar_only(act);
    if ((s = emit_conv_gemv(ctx, err, &g, &pk, bias, after ? "" : act, alpha)) != DY_OK ||
        !after)
      return s;
    return emit_conv_epilogue_loop(ctx, err, false, false, act, alpha);
  }
  if (pk.kind == DY_PACK_A12 && ctx->scratch && dy_cg_act_scalar_only(act)) {
    /* no vector form: the GEMM adds the bias and residual, a loop applies act */
    if ((s = emit_conv_gemm(ctx, err, &g, &pk, bias, residual, "", 0)) != DY_OK)
      return s;
    return emit_conv_epilogue_loop(ctx, err, false, false, act, alpha);
  }
  if (pk.kind == DY_PACK_A12 && ctx->scratch)
    return emit_conv_gemm(ctx, err, &g, &pk, bias, residual, act, alpha);
  if (g.groups == g.c && g.groups == g.o && dy_cg_in_type(ctx, 0)->dtype == DY_F32) {
    /* padded planes (emit_depthwise.c) with the scratch, else
     * register-blocked, unless the options ask for the plain kernels */
    bool padded = !ctx->plain_kernels && ctx->scratch && dy_cg_depthwise_padded_fits(&g);
    bool blocked = !ctx->plain_kernels && depthwise_blocked_fits(&g);
    const char *a = residual ? "" : act;
    double al = residual ? 0 : alpha;
    s = padded    ? dy_cg_conv_depthwise_padded(ctx, err, &g, bias, a, al)
        : blocked ? emit_conv_depthwise_blocked(ctx, err, &g, bias, a, al)
                  : emit_conv_depthwise(ctx, err, &g, bias, a, al);
    if (s != DY_OK || !residual)
      return s;
    return emit_conv_epilogue_loop(ctx, err, false, true, act, alpha);
  }
  if ((s = emit_conv_direct(ctx, &g)) != DY_OK)
    return s;
  if (bias || residual || (act && *act))
    return emit_conv_epilogue_loop(ctx, err, bias, residual, act, alpha);
  return DY_OK;
}
