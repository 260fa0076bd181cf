/* emit_conv_small.c - floor 1: the direct convolution for few channels
 * (fused_conv2d with algo "small", marked by the pass conv-small; and
 * fused_conv2d_pool, the same kernel with a max pool in its store, made by
 * the pass fuse-pool).
 *
 * For convolutions of small depth (C * kh * kw) such as LeNet-5's (1 -> 6
 * and 6 -> 16 channels, 5 x 5) the im2col GEMM spends much of its time
 * gathering panels and filling 6-row tiles. This kernel gathers nothing:
 * per image it copies the input once into the scratch, zero-padded to
 * hp x wp (hp = oh + kh - 1, wp = ow + kw - 1: stride 1, dilation 1), and
 * computes the output at the flat positions q = oy * wp + ox, where tap
 * (c, i, j) reads xs[c][q + i * wp + j]: one contiguous vector load per tap
 * for DY_VW output pixels. The positions ox >= ow of each row are computed
 * and never stored (the kernel's waste is (kw - 1) / wp of the work).
 * Registers hold a tile of OB output channels x 3 vectors of pixels
 * (OB = 8 with AVX-512's 32 registers, 4 on the other paths), the weights
 * (the weight as it is, [O][C][kh][kw], not packed) broadcast one at a time; the
 * tile loops over c and i, the kw taps of a row written out. The conv
 * rows go in bands (small_geom_of: at most 32 KB of output a band, whole
 * pooling windows): the tiles write a band's flat results to the scratch
 * (ys), from which the store loop writes y = act(conv + b [+ r]), or for
 * fused_conv2d_pool the max over each pooling window of act(conv + b),
 * while the band is in L1: the convolution's full output never reaches
 * the arena (and rows no window reads are not computed). With --threads
 * the (image, band) items split, each thread padding the images it reaches
 * into its own slice of the scratch (outputs identical). */
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

typedef long long ll;

/* pixel vectors per tile, and the flat positions a tile covers at most
 * (AVX-512: 3 x 16): each band's count is a multiple of it, so every
 * path's tiles end there. YS_CAP: the bytes of a band's flat output, so
 * that it stays in L1 between the tiles and the store loop. */
enum { PB = 3, QSTEP = 48, YS_CAP = 32 * 1024 };

typedef struct {
  ll hp, wp;    /* the padded image */
  ll rows;      /* conv rows computed: oh, or those the pool windows read */
  ll br, qb;    /* rows per band, flat positions per (full) band: br * wp rounded up */
  ll xs, ys;    /* floats of the padded image (with a zero tail) and of one band's output */
} small_geom;

static ll round_up(ll v, ll m) { return (v + m - 1) / m * m; }

/* The bands: rows in multiples of step (the pool's stride when its windows
 * do not overlap, so each band pools on its own; with overlapping windows
 * one band), the number that computes the fewest positions (a band's last
 * tile is cut at QSTEP) with its output within YS_CAP, the larger on a
 * tie. */
static small_geom small_geom_of(const dy_cg_conv_geom *g, const dy_cg_pool_geom *pool) {
  small_geom s;
  s.hp = g->oh + g->kh - 1;
  s.wp = g->ow + g->kw - 1;
  s.rows = g->oh;
  ll step = 1;
  if (pool) {
    bool tiled = pool->kh == pool->sh;
    s.rows = tiled ? pool->oh * pool->sh : (pool->oh - 1) * pool->sh + pool->kh;
    step = tiled ? pool->sh : s.rows;
  }
  s.br = step;
  ll best = -1;
  for (ll br = step; br <= s.rows; br += step) {
    ll qb = round_up(br * s.wp, QSTEP), full = s.rows / br, rest = s.rows - full * br;
    if (br > step && g->o * qb * 4 > YS_CAP)
      break;
    ll work = full * qb + round_up(rest * s.wp, QSTEP);
    if (best < 0 || work <= best)
      best = work, s.br = br;
  }
  s.qb = round_up(s.br * s.wp, QSTEP);
  /* the last tile of each band reads up to its start + qb - 1 + the last
   * tap's offset (kh - 1) * wp + kw - 1, in the last channel */
  ll plane = s.hp * s.wp, last = 0;
  for (ll r0 = 0; r0 < s.rows; r0 += s.br) {
    ll n = s.rows - r0 < s.br ? s.rows - r0 : s.br;
    ll end = r0 * s.wp + round_up(n * s.wp, QSTEP) + (g->kh - 1) * s.wp + g->kw - 1;
    last = end > last ? end : last;
  }
  s.xs = (g->c - 1) * plane + (last > plane ? last : plane);
  s.ys = g->o * s.qb;
  return s;
}

dy_cg_conv_geom dy_cg_conv_small_geom(const dy_program *p, const dy_op *op) {
  const dy_type *x = &p->vars[op->inputs[0]]->type, *w = &p->vars[op->inputs[1]]->type;
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* fused_conv2d(_pool) too */
  dy_conv_geom g = dy_conv2d_geom(x, w, &a);
  return (dy_cg_conv_geom){
      .c = x->shape[1], .h = x->shape[2], .w = x->shape[3],
      .o = w->shape[0], .oh = g.oh, .ow = g.ow,
      .kh = w->shape[2], .kw = w->shape[3],
      .sh = g.sh, .sw = g.sw, .dh = g.dh, .dw = g.dw,
      .pt = g.pt, .pl = g.pl,
      .groups = g.groups};
}

bool dy_cg_conv_small_pool(const dy_program *p, const dy_op *op, dy_cg_pool_geom *pg) {
  if (op->kind != DY_OP_FUSED_CONV2D_POOL)
    return false;
  dy_fused_conv2d_pool_attrs a = dy_fused_conv2d_pool_attrs_get(op);
  const dy_type *o = &p->vars[op->outputs[0]]->type;
  *pg = (dy_cg_pool_geom){.kh = a.pool_ksize[0], .kw = a.pool_ksize[1], .sh = a.pool_strides[0],
                          .sw = a.pool_strides[1], .oh = o->shape[2], .ow = o->shape[3]};
  return true;
}

int64_t dy_cg_conv_small_scratch(const dy_program *p, const dy_op *op, int threads) {
  dy_cg_conv_geom g = dy_cg_conv_small_geom(p, op);
  dy_cg_pool_geom pg;
  small_geom s = small_geom_of(&g, dy_cg_conv_small_pool(p, op, &pg) ? &pg : NULL);
  return (s.xs + s.ys) * (threads > 1 ? threads : 1) * 4;
}

/* One tile: ob output channels from o, PB vectors of flat positions
 * from q, over every tap; the sums stored into ys. */
static void emit_tile(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const small_geom *s, int ob,
                      bool bias) {
  ll k = g->c * g->kh * g->kw;
  OPEN("for (int64_t q = 0; q < qn; q += %d * DY_VW) {", PB);
  for (int b = 0; b < ob; b++) {
    char init[64];
    if (bias)
      snprintf(init, sizeof init, "dy_vset(%s[o + %d])", IN(2), b);
    else
      snprintf(init, sizeof init, "dy_vset(0.0f)");
    L("dy_vf a%d_0 = %s, a%d_1 = a%d_0, a%d_2 = a%d_0;", b, init, b, b, b, b);
  }
  FOR("for (int64_t c = 0; c < %lld; c++) {", g->c);
  L("const float *xc = xb + c * %lld + q, *wc = %s + o * %lld + c * %lld;", s->hp * s->wp, IN(1),
    k, g->kh * g->kw);
  FOR("for (int64_t i = 0; i < %lld; i++) {", g->kh);
  L("const float *xr = xc + i * %lld, *wr = wc + i * %lld;", s->wp, g->kw);
  for (ll j = 0; j < g->kw; j++) {
    OPEN("{");
    L("const dy_vf x0 = dy_vload(xr + %lld), x1 = dy_vload(xr + %lld + DY_VW),", j, j);
    L("            x2 = dy_vload(xr + %lld + 2 * DY_VW);", j);
    for (int b = 0; b < ob; b++) {
      L("{ const dy_vf w = dy_vset(wr[%lld]);", b * k + j);
      L("  a%d_0 = dy_vfma(w, x0, a%d_0), a%d_1 = dy_vfma(w, x1, a%d_1), "
        "a%d_2 = dy_vfma(w, x2, a%d_2); }", b, b, b, b, b, b);
    }
    CLOSE();
  }
  END();
  END();
  for (int b = 0; b < ob; b++)
    L("dy_vstore(ys + (o + %d) * %lld + q, a%d_0), dy_vstore(ys + (o + %d) * %lld + q + DY_VW, "
      "a%d_1), dy_vstore(ys + (o + %d) * %lld + q + 2 * DY_VW, a%d_2);",
      b, s->qb, b, b, s->qb, b, b, s->qb, b);
  CLOSE();
}

/* The tiles of all output channels, ob at a time, the rest in one tile. */
static void emit_tiles(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const small_geom *s, int ob,
                       bool bias) {
  ll full = g->o / ob * ob, rest = g->o - full;
  if (full > 0) {
    FOR("for (int64_t o = 0; o < %lld; o += %d) {", full, ob);
    emit_tile(ctx, g, s, ob, bias);
    END();
  }
  if (rest > 0) {
    OPEN("{");
    L("const int64_t o = %lld;", full);
    emit_tile(ctx, g, s, (int)rest, bias);
    CLOSE();
  }
}

/* The band's valid positions of ys into y = fx (of v), or max pooled;
 * code: act's DY_ACT_ code (dy_act over the stored row) or NULL. */
static void emit_small_store(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const small_geom *sg,
                             bool residual, const char *fx, const char *code,
                             const dy_cg_pool_geom *pool) {
  const small_geom s = *sg;
  if (!pool) {
    L("/* store the band's valid positions: y = %s */", code ? "v, then its act" : fx);
    FOR("for (int64_t oc = 0; oc < %lld; oc++)", g->o);
    OPEN("for (int64_t oy = 0; oy < rows; oy++) {");
    L("const float *row = ys + oc * %lld + oy * %lld;", s.qb, s.wp);
    L("float *y = %s + ((n * %lld + oc) * %lld + r0 + oy) * %lld;", OUT(0), g->o, g->oh, g->ow);
    if (residual)
      L("const float *res = %s + ((n * %lld + oc) * %lld + r0 + oy) * %lld;", IN(3), g->o, g->oh,
        g->ow);
    FOR("for (int64_t ox = 0; ox < %lld; ox++) {", g->ow);
    L("const float v = %s;", residual ? "row[ox] + res[ox]" : "row[ox]");
    L("y[ox] = %s;", code ? "v" : fx);
    END();
    if (code) /* the vector form of act, out of line */
      L("dy_act(y, y, %lld, DY_ACT_%s);", g->ow, code);
    CLOSE();
    END();
  } else {
    L("/* max pool %lldx%lld stride %lldx%lld of the band's rows: y = max of %s */", pool->kh,
      pool->kw, pool->sh, pool->sw, fx);
    FOR("for (int64_t oc = 0; oc < %lld; oc++)", g->o);
    /* one band (windows may overlap): every pooled row; else the band's
     * rows, a multiple of the stride, are whole windows */
    if (s.br >= s.rows)
      FOR("for (int64_t py = 0; py < %lld; py++) {", pool->oh);
    else
      OPEN("for (int64_t py = r0 / %lld; py < (r0 + rows) / %lld; py++) {", pool->sh, pool->sh);
    L("float *y = %s + ((n * %lld + oc) * %lld + py) * %lld;", OUT(0), g->o, pool->oh, pool->ow);
    FOR("for (int64_t px = 0; px < %lld; px++) {", pool->ow);
    L("const float *row = ys + oc * %lld + (py * %lld - r0) * %lld + px * %lld;", s.qb,
      pool->sh, s.wp, pool->sw);
    L("float m = 0.0f;");
    for (ll i = 0; i < pool->kh; i++)
      for (ll j = 0; j < pool->kw; j++) {
        L("{ const float v = row[%lld], a = %s;", i * s.wp + j, fx);
        if (i == 0 && j == 0)
          L("  m = a; }");
        else
          L("  m = a > m ? a : m; }");
      }
    L("y[px] = m;");
    END();
    if (s.br >= s.rows)
      END();
    else
      CLOSE();
    END();
  }
}

dy_status dy_cg_conv_small(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g, bool bias,
                           bool residual, const char *act, double alpha,
                           const dy_cg_pool_geom *pool) {
  char fx[512];
  if (!ctx->scratch || g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1 || g->groups != 1 ||
      g->c < 1 || g->h < 1 || g->w < 1 || g->oh < 1 || g->ow < 1 || (pool && residual))
    return dy_cg_type_error(ctx, err, DY_STATUS_INTERNAL,
                            "the small conv kernel takes a static image, stride 1, dilation 1, "
                            "groups 1");
  if (!dy_cg_act_expr(act, alpha, "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  small_geom s = small_geom_of(g, pool);
  *ctx->uses |= DY_USES_SIMD;
  char nb[64];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));
  ll plane = s.hp * s.wp;
  L("/* direct (few channels): per image, x zero-padded to %lld x %lld x %lld in the scratch;",
    g->c, s.hp, s.wp);
  L(" * per band of %lld conv rows from r0, ys[oc][q] = %ssum over c, i, j of", s.br,
    bias ? "b[oc] + " : "");
  L(" * w[oc][c][i][j] * xs[c][r0 * %lld + q + i * %lld + j] at the flat positions", s.wp, s.wp);
  L(" * q = oy * %lld + ox (ox >= %lld never stored), then %s */", s.wp, g->ow,
    pool ? "max pooled" : "stored");
  ll nbands = (s.rows + s.br - 1) / s.br;
  char fn[64];
  dy_cg_ctx sub = *ctx, *outer = ctx;
  if (ctx->threads > 1) {
    /* items [lo, hi) of (image, band), each thread padding the images it
     * reaches into its own slice of the scratch */
    snprintf(fn, sizeof fn, "k%d_part%d", ctx->op->id, ctx->n_parts++);
    dy_buf_printf(ctx->before,
                  "/* op %d: items [lo, hi) of (image, band of conv rows), one thread's share */\n"
                  "typedef struct {\n"
                  "  const float *%s, *%s, *%s, *%s;\n"
                  "  float *%s, *scratch;\n"
                  "} %s_args;\n\n"
                  "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                  "  const %s_args *g_ = (const %s_args *)arg;\n"
                  "  const float *%s = g_->%s, *%s = g_->%s, *%s = g_->%s, *%s = g_->%s;\n"
                  "  float *%s = g_->%s;\n"
                  "  float *const xs = g_->scratch + (int64_t)t * %lld, *const ys = xs + %lld;\n"
                  "  int64_t cur = -1;\n"
                  "  (void)%s, (void)%s;\n",
                  ctx->op->id, IN(0), IN(1), IN(2), IN(3), OUT(0), fn, fn, fn, fn, IN(0), IN(0),
                  IN(1), IN(1), IN(2), IN(2), IN(3), IN(3), OUT(0), OUT(0), s.xs + s.ys, s.xs,
                  IN(2), IN(3));
    *ctx->uses |= DY_USES_THREADS;
    sub.body = ctx->before;
    sub.indent = 1;
    ctx = &sub;
    OPEN("for (int64_t it = lo; it < hi; it++) {");
    L("const int64_t n = it / %lld, r0 = it %% %lld * %lld;", nbands, nbands, s.br);
    OPEN("if (n != cur) { /* a new image */");
    L("cur = n;");
  } else {
    FOR("for (int64_t n = 0; n < %s; n++) {", nb);
    L("float *const xs = scratch, *const ys = scratch + %lld;", s.xs);
  }
  FOR("for (int64_t q = 0; q < %lld; q++)", s.xs);
  L("xs[q] = 0.0f;");
  END();
  /* input rows and columns that land inside hp x wp */
  ll iy0 = g->pt < 0 ? -g->pt : 0, iy1 = g->h < s.hp - g->pt ? g->h : s.hp - g->pt;
  ll ix0 = g->pl < 0 ? -g->pl : 0, ix1 = g->w < s.wp - g->pl ? g->w : s.wp - g->pl;
  FOR("for (int64_t c = 0; c < %lld; c++)", g->c);
  FOR("for (int64_t iy = %lld; iy < %lld; iy++)", iy0, iy1);
  L("dy_copy(xs + c * %lld + (iy + %lld) * %lld + %lld, %s + ((n * %lld + c) * %lld + iy) * "
    "%lld + %lld, %lld);",
    plane, g->pt, s.wp, g->pl + ix0, IN(0), g->c, g->h, g->w, ix0, ix1 - ix0);
  END();
  END();
  if (outer->threads > 1)
    CLOSE();
  else
    FOR("for (int64_t r0 = 0; r0 < %lld; r0 += %lld) {", s.rows, s.br);
  if (pool && s.br >= s.rows) /* one band: rows not needed */
    L("const int64_t qn = %lld;", s.qb);
  else if (s.rows % s.br == 0)
    L("const int64_t rows = %lld, qn = %lld;", s.br, s.qb);
  else
    L("const int64_t rows = %lld - r0 < %lld ? %lld - r0 : %lld, qn = (rows * %lld + %d) / %d * %d;",
      s.rows, s.br, s.rows, s.br, s.wp, QSTEP - 1, QSTEP, QSTEP);
  L("const float *const xb = xs + r0 * %lld;", s.wp);
  L("#if DY_VW == 16 /* 32 registers: 8 x 3 accumulators */");
  emit_tiles(ctx, g, &s, 8, bias);
  L("#else /* 16 registers (AVX2, SSE2, NEON) or plain C: 4 x 3 */");
  emit_tiles(ctx, g, &s, 4, bias);
  L("#endif");
  emit_small_store(ctx, g, &s, residual, fx, pool || ctx->plain_kernels ? NULL : dy_cg_act_tile_code(act),
                   pool);
  if (outer->threads <= 1) {
    END(); /* r0 */
    END(); /* n */
    return DY_OK;
  }
  CLOSE();
  dy_buf_puts(outer->before, "}\n\n");
  ctx = outer;
  ctx->n_parts = sub.n_parts;
  L("%s_args args;", fn);
  L("args.%s = %s, args.%s = %s, args.%s = %s, args.%s = %s;", IN(0), IN(0), IN(1), IN(1),
    IN(2), bias ? IN(2) : "0", IN(3), residual ? IN(3) : "0");
  L("args.%s = %s, args.scratch = scratch;", OUT(0), OUT(0));
  L("if (%s * %lld >= DY_THREAD_MIN_WORK) /* multiply-adds: worth the threads? */", nb,
    g->o * g->c * g->kh * g->kw * s.rows * g->ow);
  L("  dy_parallel(%s * %lld, %s, &args);", nb, nbands, fn);
  L("else");
  L("  %s(&args, 0, %s * %lld, 0);", fn, nb, nbands);
  return DY_OK;
}
