/* dwpw_band.c - floor 1: the pieces of a depthwise conv followed by a 1x1
 * conv per band of output rows, which fused_dwpw (emit_dwpw.c) and
 * fused_irb (emit_irb.c) are built of.
 *
 * Per image and band of output rows (R rows, R * ow a multiple of 16 so
 * that every 16-pixel panel but the image's last is full; the band's
 * panels of all C channels sized to stay in L2): for each channel, the
 * input rows the band needs are copied into the zero-bordered plane of
 * emit_depthwise.c, each output row is computed DY_VW outputs at a time
 * (bias and act_dw in registers) into a row in L1, and its pixels go to
 * the 1x1 GEMM's B panels (C x 16 each) as 16-float copies: a run of
 * pixels starting at column j of a panel is stored whole, the floats past
 * the run landing on the next channel's row of the panel or the panel's
 * slack, which later stores overwrite (every store of a panel is in
 * ascending order). Then the packed pointwise weight (DY_PACK_A12, one
 * group of O x C) times each panel on the micro-kernel, with the pointwise
 * bias, the residual (DY_GEMM_ADD_C) and act in its epilogue, as
 * emit_conv.c's GEMM convolution does. With --threads the (image, band)
 * pairs are split over the threads, each with its own slice of the
 * scratch (outputs identical); with fewer pairs than threads (a 7x7 map at
 * batch 1 is one band), each pair's 1x1 weight is split too, each part
 * computing the band's depthwise output again.
 *
 * The pieces: dy_cg_dwpw_geom_of (the band geometry), dy_cg_dwpw_band_head
 * (an item's image and rows), dy_cg_dwpw_band_dw (its depthwise conv into
 * the panels), dy_cg_dwpw_band_pw (its 1x1 GEMM), dy_cg_gemm_packed_tiles
 * and dy_cg_dwpw_kernel (the loop over the items, with --threads a worker
 * function). */
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)

typedef long long ll;

typedef dy_cg_dwpw_geom dwpw_geom;


static ll gcd(ll a, ll b) {
  while (b) {
    ll t = a % b;
    a = b, b = t;
  }
  return a;
}

dy_cg_dwpw_geom dy_cg_dwpw_geom_of(const dy_cg_conv_geom *g, long long o, long long band_bytes,
                                   long long row_bytes, long long extra) {
  dwpw_geom k;
  k.g = *g;
  k.o = o;
  ll r0 = 16 / gcd(k.g.ow, 16); /* rows whose pixels fill whole panels */
  ll per = band_bytes / ((4 * 16 * k.g.c * k.g.ow / 16 + row_bytes) * r0 + 1);
  k.rows = r0 * (per > 1 ? per : 1);
  if (k.rows > k.g.oh)
    k.rows = k.g.oh;
  k.bands = (k.g.oh + k.rows - 1) / k.rows;
  k.panels = (k.rows * k.g.ow + 15) / 16;
  k.ps = k.g.c * 16 + 16;
  k.rt = k.g.ow + 32;
  k.d = dy_cg_dw_plane_of(&k.g);
  k.more = k.d.size + k.rt + k.panels * k.ps;
  k.slice = k.more + extra;
  k.split = false;
  return k;
}

void dy_cg_dwpw_band_head(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, bool in_rows) {
  const dy_cg_conv_geom *g = &k->g;
  if (k->split) {
    ll nq = (k->o + DY_GEMM_MR - 1) / DY_GEMM_MR;
    L("const int64_t n = it / (sp * %lld), oy0 = it / sp %% %lld * %lld;", k->bands, k->bands,
      k->rows);
    L("const int64_t q0 = it %% sp * %lld / sp, q1 = (it %% sp + 1) * %lld / sp; /* its "
      "micro-panels */",
      nq, nq);
  } else {
    L("const int64_t n = it / %lld, oy0 = it %% %lld * %lld;", k->bands, k->bands, k->rows);
  }
  L("const int64_t oy1 = oy0 + %lld < %lld ? oy0 + %lld : %lld; /* rows [oy0, oy1) */", k->rows,
    g->oh, k->rows, g->oh);
  if (!in_rows)
    return;
  /* the input rows the band reads, inside the image */
  L("const int64_t iy0 = oy0 * %lld - %lld > 0 ? oy0 * %lld - %lld : 0;", g->sh, g->pt, g->sh,
    g->pt);
  L("const int64_t iy1 = (oy1 - 1) * %lld + %lld < %lld ? (oy1 - 1) * %lld + %lld : %lld;", g->sh,
    (g->kh - 1) * g->dh - g->pt + 1, g->h, g->sh, (g->kh - 1) * g->dh - g->pt + 1, g->h);
}

void dy_cg_dwpw_band_dw(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, const char *vact,
                        const char *wd, const char *bd, const char *src, const char *plane) {
  const dy_cg_conv_geom *g = &k->g;
  L("/* the depthwise conv of the band, channel by channel, into the panels */");
  FOR("for (int64_t c = 0; c < %lld; c++) {", g->c);
  L("const float *w = %s + c * %lld;", wd, g->kh * g->kw);
  char b[64];
  snprintf(b, sizeof b, "%s[c]", bd);
  dy_cg_dw_weights(ctx, g, "w", b);
  if (plane) { /* the band's padded rows in place: oy counts from the band's first */
    L("const float *const xp = %s;", plane);
    OPEN("for (int64_t oy = 0; oy < oy1 - oy0; oy++) {");
  } else {
    L("for (int64_t iy = iy0; iy < iy1; iy++)");
    L("  dy_copy(xp + (iy + %lld) * %lld + %lld, %s, %lld);", g->pt, k->d.wp, g->pl, src, g->w);
    OPEN("for (int64_t oy = oy0; oy < oy1; oy++) {");
  }
  dy_cg_dw_row(ctx, g, k->d.wp, "rt", vact, true);
  L("/* its pixels into the panels, a run within a panel at a time */");
  OPEN("for (int64_t ox = 0, q = (oy%s) * %lld; ox < %lld;) {", plane ? "" : " - oy0", g->ow,
       g->ow);
  L("const int64_t j = q %% 16, len = 16 - j < %lld - ox ? 16 - j : %lld - ox;", g->ow, g->ow);
  L("dy_f16_store(pan + q / 16 * %lld + c * 16 + j, dy_f16_load(rt + ox));", k->ps);
  L("ox += len, q += len;");
  CLOSE();
  CLOSE();
  END();
}

void dy_cg_dwpw_band_pw(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, const char *epi,
                        const char *alit, const char *wp, const char *bp, const char *res) {
  const dy_cg_conv_geom *g = &k->g;
  ll p = g->oh * g->ow, c = g->c;
  L("/* the 1x1 conv of the band: panels of 16 pixels on the micro-kernel */");
  L("float *y = %s + n * %lld + oy0 * %lld;", dy_cg_out(ctx, 0), k->o * p, g->ow);
  if (res)
    L("const float *res = %s + n * %lld + oy0 * %lld;", res, k->o * p, g->ow);
  L("const int64_t np = (oy1 - oy0) * %lld;", g->ow);
  OPEN("for (int64_t p0 = 0; p0 < np; p0 += 16) {");
  L("const int nr = np - p0 < 16 ? (int)(np - p0) : 16;");
  L("const float *b = pan + p0 / 16 * %lld;", k->ps);
  if (res && k->split) {
    L("for (int64_t oc = q0 * %d; oc < q1 * %d && oc < %lld; oc++) /* the residual, added by the "
      "GEMM */",
      DY_GEMM_MR, DY_GEMM_MR, k->o);
    L("  dy_copy(y + oc * %lld + p0, res + oc * %lld + p0, nr);", p, p);
  } else if (res) {
    L("for (int64_t oc = 0; oc < %lld; oc++) /* the residual, added by the GEMM */", k->o);
    L("  dy_copy(y + oc * %lld + p0, res + oc * %lld + p0, nr);", p, p);
  }
  char cy[32];
  snprintf(cy, sizeof cy, "y + o * %lld + p0", p);
  dy_cg_gemm_packed_tiles(ctx, k->o, c, wp, "b", cy, p, bp, alit, res != NULL, epi, k->split);
  CLOSE();
}

void dy_cg_gemm_packed_tiles(dy_cg_ctx *ctx, long long m, long long depth, const char *a,
                             const char *b, const char *c, long long ldc, const char *bias,
                             const char *alit, bool add_c, const char *epi, bool parts) {
  ll nkb = (depth + 511) / 512, kc = (depth + nkb - 1) / nkb;
  dy_cg_gemm_kblocks_open(ctx, depth, nkb, kc, add_c, epi);
  ll mr = dy_gemm_pack_mr(m); /* rows of the weight's micro-panels */
  char k0a[32] = "";
  const char *k0b = nkb > 1 ? " + k0 * 16" : "";
  if (nkb > 1)
    snprintf(k0a, sizeof k0a, " + k0 * %lld", mr);
  if (parts)
    L("for (int64_t o = q0 * %d; o < q1 * %d; o += %d)", DY_GEMM_MR, DY_GEMM_MR, DY_GEMM_MR);
  else
    FOR("for (int64_t o = 0; o < %lld; o += %d)", m, DY_GEMM_MR);
  if (parts)
    ctx->indent++;
  dy_cg_gemm_rows(ctx, m, m);
  L("dy_gemm_tile(%lld - o, kc, %s + o * %lld%s, 1, %lld, %s%s, %s, %lld, nr, flags,", m, a,
    depth, k0a, mr, b, k0b, c, ldc);
  L("             %s + o, %s);", bias, alit);
  if (parts)
    ctx->indent--;
  else
    END();
  if (nkb > 1)
    CLOSE();
}

/* Each line of text (NULL: none) as a line of code. */
static void emit_lines(dy_cg_ctx *ctx, const char *text) {
  for (const char *t = text; t && *t;) {
    int len = (int)strcspn(t, "\n");
    L("%.*s", len, t);
    t += len + (t[len] == '\n');
  }
}

void dy_cg_dwpw_kernel(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, int n_in, long long work,
                       const char *pre, void (*items)(dy_cg_ctx *ctx, const void *arg),
                       const void *arg) {
  const dy_op *op = ctx->op;
  char nb[64];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));
  ll xo = 0, ro = k->d.size, po = k->d.size + k->rt;
  if (ctx->threads <= 1) {
    OPEN("{");
    L("float *xp = scratch + %lld, *rt = scratch + %lld, *pan = scratch + %lld;", xo, ro, po);
    L("for (int64_t q = 0; q < %lld; q++) /* the border (and slack) stays zero */", k->d.size);
    L("  xp[q] = 0.0f;");
    emit_lines(ctx, pre);
    OPEN("for (int64_t it = 0; it < %s * %lld; it++) {", nb, k->bands);
    items(ctx, arg);
    CLOSE();
    CLOSE();
    return;
  }
  char fn[64];
  snprintf(fn, sizeof fn, "k%d_part%d", op->id, ctx->n_parts++);
  dy_buf_printf(ctx->before,
                "/* op %d: items [lo, hi) of (image, band of rows), one thread's share */\n"
                "typedef struct {\n"
                "  const float *in[%d];\n"
                "  float *%s, *scratch;\n"
                "%s"
                "} %s_args;\n\n"
                "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                "  const %s_args *g_ = (const %s_args *)arg;\n",
                op->id, n_in, dy_cg_out(ctx, 0),
                k->split ? "  int64_t sp; /* parts of the 1x1 weight an (image, band) */\n" : "",
                fn, fn, fn, fn);
  for (int i = 0; i < n_in; i++)
    dy_buf_printf(ctx->before, "  const float *%s = g_->in[%d];\n", dy_cg_in(ctx, i), i);
  dy_buf_printf(ctx->before,
                "  float *%s = g_->%s, *s_ = g_->scratch + (int64_t)t * %lld;\n"
                "  float *xp = s_ + %lld, *rt = s_ + %lld, *pan = s_ + %lld;\n",
                dy_cg_out(ctx, 0), dy_cg_out(ctx, 0), k->slice, xo, ro, po);
  if (k->split)
    dy_buf_puts(ctx->before, "  const int64_t sp = g_->sp;\n");
  *ctx->uses |= DY_USES_THREADS;
  dy_cg_ctx sub = *ctx;
  sub.body = ctx->before;
  sub.indent = 1;
  dy_cg_line(&sub, "for (int64_t q = 0; q < %lld; q++) /* the border (and slack) stays zero */",
             k->d.size);
  dy_cg_line(&sub, "  xp[q] = 0.0f;");
  emit_lines(&sub, pre);
  dy_cg_line(&sub, "for (int64_t it = lo; it < hi; it++) {");
  sub.indent++;
  items(&sub, arg);
  sub.indent--;
  dy_cg_line(&sub, "}");
  dy_buf_puts(ctx->before, "}\n\n");
  ctx->n_parts = sub.n_parts;
  L("%s_args args;", fn);
  for (int i = 0; i < n_in; i++)
    L("args.in[%d] = %s;", i, dy_cg_in(ctx, i));
  L("args.%s = %s, args.scratch = scratch;", dy_cg_out(ctx, 0), dy_cg_out(ctx, 0));
  if (!k->split) {
    L("if (%s * %lld >= DY_THREAD_MIN_WORK) /* multiply-adds: worth the threads? */", nb, work);
    L("  dy_parallel(%s * %lld, %s, &args);", nb, k->bands, fn);
    L("else");
    L("  %s(&args, 0, %s * %lld, 0);", fn, nb, k->bands);
    return;
  }
  L("args.sp = 1;");
  OPEN("if (%s * %lld >= DY_THREAD_MIN_WORK) { /* multiply-adds: worth the threads? */", nb, work);
  L("if (%s * %lld < DY_THREADS) /* fewer bands than threads: split the 1x1 weight too */", nb,
    k->bands);
  L("  args.sp = DY_THREADS;");
  L("dy_parallel(%s * %lld * args.sp, %s, &args);", nb, k->bands, fn);
  ctx->indent--;
  OPEN("} else {");
  L("%s(&args, 0, %s * %lld, 0);", fn, nb, k->bands);
  CLOSE();
}
