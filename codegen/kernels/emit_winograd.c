/* emit_winograd.c - floor 1: Winograd F(m x m, 3x3) convolutions, m = 2,
 * 4 or 6 (Lavin and Gray), for a fused_conv2d whose algo the pass
 * winograd set ("winograd2", "winograd4" or "winograd", "winograd6";
 * compiler/passes/winograd.c picks m per layer):
 * - the transform matrices B^T (a x a, a = m + 2) and A^T (m x a); the
 *   weight's, G, and its packing at compile time (DY_PACK_WINO: U = G w
 *   G^T in double, per tile position q < a*a an O x C matrix in MR-row
 *   micro-panels) are emit_gemm.c's;
 * - the kernel: blocks of 16 tiles (m x m outputs each, read from a x a
 *   inputs, bounds checked only for tiles at the image's edge), numbered
 *   over all images of the batch, in groups of blocks, each in three
 *   phases: (0) the input transform V = B^T d B of
 *   each block, (1) per position q one GEMM per block on the micro-kernel,
 *   M[q] (O x 16) = U[q] (O x C) V[q] (C x 16), each micro-panel of U[q]
 *   used for all blocks of the group while it is in L1, (2) the output
 *   transform A^T M A with bias, residual and activation, stored where the
 *   tile lies in y. With --threads each phase splits over the threads
 *   (blocks, positions, blocks) when the group's GEMMs reach
 *   DY_THREAD_MIN_WORK; each output is computed the same way either way.
 * A group has as many blocks as keep U (read once a group) from dominating
 * (wino_group below); V and M of one group are the scratch. */
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

/* ---- the transforms B^T and A^T (points 0, +-1, +-2, +-1/2, inf; G, the
 * weight's, is in emit_gemm.c; verified against the direct sum by
 * tests/op_cases_core.c's Winograd cases) ---- */
static const double bt2[4 * 4] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
static const double at2[2 * 4] = {1, 1, 1, 0, 0, 1, -1, -1};

static const double bt4[6 * 6] = {4, 0, -5, 0, 1, 0, 0, -4, -4, 1,  1, 0,
                                  0, 4, -4, -1, 1, 0, 0, -2, -1, 2, 1, 0,
                                  0, 2, -1, -2, 1, 0, 0, 4,  0, -5, 0, 1};
static const double at4[4 * 6] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0,
                                   0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};

static const double bt6[8 * 8] = {
    1, 0,    -5.25, 0,    5.25,  0,     -1, 0, /* */
    0, 1,    1,     -4.25, -4.25, 1,    1,  0, /* */
    0, -1,   1,     4.25, -4.25, -1,    1,  0, /* */
    0, 0.5,  0.25,  -2.5, -1.25, 2,     1,  0, /* */
    0, -0.5, 0.25,  2.5,  -1.25, -2,    1,  0, /* */
    0, 2,    4,     -2.5, -5,    0.5,   1,  0, /* */
    0, -2,   4,     2.5,  -5,    -0.5,  1,  0, /* */
    0, -1,   0,     5.25, 0,     -5.25, 0,  1};
static const double at6[6 * 8] = {
    1, 1, 1,  1,  1,   1,       1,        0, /* */
    0, 1, -1, 2,  -2,  0.5,     -0.5,     0, /* */
    0, 1, 1,  4,  4,   0.25,    0.25,     0, /* */
    0, 1, -1, 8,  -8,  0.125,   -0.125,   0, /* */
    0, 1, 1,  16, 16,  0.0625,  0.0625,   0, /* */
    0, 1, -1, 32, -32, 0.03125, -0.03125, 1};

typedef struct {
  int m, a;                     /* output tile m x m, input tile a x a */
  const double *bt, *at;        /* a x a, m x a, row-major */
} wino_mats;

static wino_mats wino_mats_of(int m) {
  if (m == 2)
    return (wino_mats){2, 4, bt2, at2};
  if (m == 6)
    return (wino_mats){6, 8, bt6, at6};
  return (wino_mats){4, 6, bt4, at4};
}

/* ---- geometry ---- */

/* Bytes of transformed weight (U) above which it is read from L3 or
 * memory rather than L2: then a group takes every block of the image (up
 * to WINO_GROUP_BYTES of V and M), so U is read once an image; below it a
 * group's V and M stay within WINO_VM_BYTES (L2). Measured on resnet18
 * (bench/RESULTS.md, "Winograd variants"). */
#define WINO_U_CACHE_BYTES (1 << 20)
#define WINO_VM_BYTES (1 << 20)
#define WINO_GROUP_BYTES (32 << 20)

typedef struct {
  wino_mats t;
  int p;                     /* positions a * a */
  ll th, tw, tiles, blocks;  /* tiles of m x m outputs, blocks of 16 tiles */
  ll group, groups;          /* blocks of a group; groups of an image (if < 1 image) */
} wino_geom;

/* nimg: the images one call may see (the static batch, else a bound for
 * sizing the groups only: WINO_BATCH_GUESS). */
#define WINO_BATCH_GUESS 8
static wino_geom wino_geom_of(const dy_cg_conv_geom *g, int m, ll nimg) {
  wino_geom w;
  w.t = wino_mats_of(m);
  w.p = w.t.a * w.t.a;
  w.th = (g->oh + m - 1) / m, w.tw = (g->ow + m - 1) / m, w.tiles = w.th * w.tw;
  w.blocks = (w.tiles + 15) / 16;
  ll per_block = (ll)w.p * 16 * (g->c + g->o) * 4, u = (ll)w.p * g->o * g->c * 4;
  ll cap = (u > WINO_U_CACHE_BYTES ? WINO_GROUP_BYTES : WINO_VM_BYTES) / per_block;
  nimg = nimg > 0 ? nimg : WINO_BATCH_GUESS;
  cap = cap < 1 ? 1 : cap > w.blocks * nimg ? w.blocks * nimg : cap;
  /* groups of equal size over one image's blocks when they fit in one */
  w.groups = (w.blocks + cap - 1) / cap;
  w.group = cap >= w.blocks ? cap : (w.blocks + w.groups - 1) / w.groups;
  return w;
}

static int op_m(const dy_op *op) { return dy_winograd_tile(dy_fused_conv2d_attrs_get(op).algo); }

/* V (a*a x group x C x 16) then M (a*a x group x O x 16), shared by the
 * threads (each phase writes disjoint parts). */
int64_t dy_cg_winograd_scratch(const dy_cg_conv_geom *g, int m, int64_t nimg) {
  wino_geom w = wino_geom_of(g, m, nimg);
  return (int64_t)w.p * w.group * 16 * (g->c + g->o) * 4;
}

/* ---- the kernel ---- */

/* The line "lhs = sum_k coef[k] * term(k);", term(k) being fmt with k in
 * it, zero coefficients left out, +-1 without a product. */
static void emit_combo(dy_cg_ctx *ctx, const char *lhs, const double *coef, int n,
                       const char *fmt) {
  char line[1024], term[128], lit[48];
  int at = snprintf(line, sizeof line, "%s =", lhs);
  bool first = true;
  for (int k = 0; k < n && at < (int)sizeof line; k++) {
    double cf = coef[k];
    if (cf == 0)
      continue;
    snprintf(term, sizeof term, fmt, k);
    double a = cf < 0 ? -cf : cf;
    /* " -x" first, " - x" / " + x" after */
    const char *sign = first ? (cf < 0 ? " -" : " ") : (cf < 0 ? " - " : " + ");
    if (a == 1) {
      at += snprintf(line + at, sizeof line - (size_t)at, "%s%s", sign, term);
    } else {
      dy_float_literal((float)a, lit, sizeof lit);
      at += snprintf(line + at, sizeof line - (size_t)at, "%s%s * %s", sign, lit, term);
    }
    first = false;
  }
  L("%s;", line);
}

/* Block b0 + b's image n and first tile t0. */
static void emit_block_start(dy_cg_ctx *ctx, const wino_geom *w) {
  if (w->blocks == 1)
    L("const int64_t n = b0 + b, t0 = 0; /* one block an image */");
  else
    L("const int64_t n = (b0 + b) / %lld, t0 = (b0 + b) %% %lld * 16;", w->blocks, w->blocks);
}

/* One pass of a transform over the 16 tiles: the loops "for (int var <
 * trips) for (int j < 16)" around, per row r of mat (rows x a), the line
 * lhs(r) = sum_k mat[r][k] * term(k) (lhs, term: formats of r, k). */
static void emit_transform(dy_cg_ctx *ctx, const char *var, int trips, const double *mat,
                           int rows, int a, const char *lhs, const char *term) {
  char l[128];
  OPEN("for (int %s = 0; %s < %d; %s++)", var, var, trips, var);
  OPEN("for (int j = 0; j < 16; j++) {");
  for (int r = 0; r < rows; r++) {
    snprintf(l, sizeof l, lhs, r);
    emit_combo(ctx, l, mat + r * a, a, term);
  }
  CLOSE();
  ctx->indent--;
}

/* Phase 0 of block b: the tiles' a x a inputs d (outside the image and
 * past the last tile: 0), u = B^T d, V[q][b] = u B. */
static void emit_input_transform(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const wino_geom *w) {
  int m = w->t.m, a = w->t.a;
  ll hw = g->h * g->w;
  L("/* input transform of blocks [lo, hi): per tile its %d x %d inputs d, V = B^T d B */", a, a);
  OPEN("for (int64_t b = lo; b < hi; b++) {");
  emit_block_start(ctx, w);
  L("const float *xn = %s + n * %lld;", IN(0), g->c * hw);
  L("float *vb = V + b * %lld;", g->c * 16);
  L("int64_t iy[16], ix[16];");
  L("int inside[16]; /* 1: all inputs in the image, 0: at an edge, -1: past the last tile */");
  OPEN("for (int j = 0; j < 16; j++) {");
  L("iy[j] = (t0 + j) / %lld * %d - %lld, ix[j] = (t0 + j) %% %lld * %d - %lld;", w->tw, m, g->pt,
    w->tw, m, g->pl);
  L("inside[j] = t0 + j >= %lld ? -1 : iy[j] >= 0 && iy[j] <= %lld && ix[j] >= 0 && ix[j] <= %lld;",
    w->tiles, g->h - a, g->w - a);
  CLOSE();
  FOR("for (int64_t c = 0; c < %lld; c++) {", g->c);
  L("const float *xc = xn + c * %lld;", hw);
  L("float d[%d][16], u[%d][16];", a * a, a * a);
  OPEN("for (int j = 0; j < 16; j++) {");
  OPEN("if (inside[j] > 0) {");
  L("const float *s = xc + iy[j] * %lld + ix[j];", g->w);
  L("for (int k = 0; k < %d; k++)", a);
  L("  for (int l = 0; l < %d; l++)", a);
  L("    d[k * %d + l][j] = s[k * %lld + l];", a, g->w);
  CLOSE();
  OPEN("else {");
  OPEN("for (int k = 0; k < %d; k++)", a);
  OPEN("for (int l = 0; l < %d; l++) {", a);
  L("const int64_t yy = iy[j] + k, xx = ix[j] + l;");
  L("d[k * %d + l][j] = inside[j] == 0 && yy >= 0 && yy < %lld && xx >= 0 && xx < %lld", a, g->h,
    g->w);
  L("                     ? xc[yy * %lld + xx] : 0.0f;", g->w);
  CLOSE();
  ctx->indent--;
  CLOSE();
  CLOSE();
  char lhs[96], fmt[96];
  L("/* u = B^T d, column l */");
  snprintf(lhs, sizeof lhs, "u[%%d * %d + l][j]", a);
  snprintf(fmt, sizeof fmt, "d[%%d * %d + l][j]", a);
  emit_transform(ctx, "l", a, w->t.bt, a, a, lhs, fmt);
  L("/* V[q][b][c] = (u B)[q], row i */");
  L("float *vc = vb + c * 16;");
  snprintf(lhs, sizeof lhs, "vc[(i * %d + %%d) * %lld + j]", a, w->group * g->c * 16);
  snprintf(fmt, sizeof fmt, "u[i * %d + %%d][j]", a);
  emit_transform(ctx, "i", a, w->t.bt, a, a, lhs, fmt);
  END();
  CLOSE();
}

/* Phase 1 for positions [lo, hi): M[q][b] = U[q] V[q][b] for the group's
 * blocks, each micro-panel of U[q] over all of them in turn. */
static void emit_gemms(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const wino_geom *w) {
  ll c = g->c, o = g->o, mr = dy_gemm_pack_mr(o), nq = (o + mr - 1) / mr;
  ll nkb = (c + 511) / 512, kc = (c + nkb - 1) / nkb;
  L("/* GEMMs of positions [lo, hi): M[q][b] (%lld x 16) = U[q] (%lld x %lld) V[q][b] */", o, o,
    c);
  OPEN("for (int64_t q = lo; q < hi; q++) {");
  char k0m[48] = "", k0b[32] = "";
  if (nkb > 1) {
    OPEN("for (int64_t k0 = 0; k0 < %lld; k0 += %lld) {", c, kc);
    L("const int64_t kc = %lld - k0 < %lld ? %lld - k0 : %lld;", c, kc, c, kc);
    L("const int flags = k0 > 0 ? DY_GEMM_ADD_C : 0;");
    snprintf(k0m, sizeof k0m, " + k0 * %lld", mr);
    snprintf(k0b, sizeof k0b, " + k0 * 16");
  } else {
    L("const int64_t kc = %lld;", c);
    L("const int flags = 0;");
  }
  FOR("for (int64_t o = 0; o < %lld; o += %lld)", o, mr);
  L("for (int64_t b = 0; b < nb; b++)");
  dy_cg_gemm_rows(ctx, o, o);
  L("  dy_gemm_tile(%lld - o, kc, %s + q * %lld + o * %lld%s, 1, %lld,", o, IN(1), nq * mr * c, c,
    k0m, mr);
  L("               V + (q * %lld + b) * %lld%s, M + (q * %lld + b) * %lld + o * 16, 16, 16,",
    w->group, c * 16, k0b, w->group, o * 16);
  L("               flags, 0, 0.0f);");
  END();
  if (nkb > 1)
    CLOSE();
  CLOSE();
}

/* Phase 2 of block b: per output channel e = A^T M A, the epilogue fx (of
 * e, oc, at), stored inside y. */
static void emit_output_transform(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const wino_geom *w,
                                  bool residual, const char *fx) {
  int m = w->t.m, a = w->t.a;
  ll o = g->o, ohw = g->oh * g->ow, qs = w->group * o * 16;
  L("/* output transform of blocks [lo, hi): e = A^T M A, then the epilogue */");
  OPEN("for (int64_t b = lo; b < hi; b++) {");
  emit_block_start(ctx, w);
  L("float *y = %s + n * %lld;", OUT(0), o * ohw);
  if (residual)
    L("const float *res = %s + n * %lld;", IN(3), o * ohw);
  if (w->tiles % 16 == 0)
    L("const int nt = 16;");
  else
    L("const int nt = %lld - t0 < 16 ? (int)(%lld - t0) : 16;", w->tiles, w->tiles);
  FOR("for (int64_t oc = 0; oc < %lld; oc++) {", o);
  L("const float *mb = M + (b * %lld + oc) * 16;", o);
  L("float tm[%d][16], ev[%d][16];", m * a, m * m);
  char lhs[96], fmt[96];
  L("/* tm = A^T m, column l */");
  snprintf(lhs, sizeof lhs, "tm[%%d * %d + l][j]", a);
  snprintf(fmt, sizeof fmt, "mb[(%%d * %d + l) * %lld + j]", a, qs);
  emit_transform(ctx, "l", a, w->t.at, m, a, lhs, fmt);
  L("/* ev = tm A, row r */");
  snprintf(lhs, sizeof lhs, "ev[r * %d + %%d][j]", m);
  snprintf(fmt, sizeof fmt, "tm[r * %d + %%d][j]", a);
  emit_transform(ctx, "r", m, w->t.at, m, a, lhs, fmt);
  L("/* the tiles' outputs inside y */");
  OPEN("for (int j = 0; j < nt; j++) {");
  L("const int64_t y0 = (t0 + j) / %lld * %d, x0 = (t0 + j) %% %lld * %d;", w->tw, m, w->tw, m);
  if (g->oh % m == 0)
    L("const int hr = %d;", m);
  else
    L("const int hr = %lld - y0 < %d ? (int)(%lld - y0) : %d;", g->oh, m, g->oh, m);
  if (g->ow % m == 0)
    L("const int wc = %d;", m);
  else
    L("const int wc = %lld - x0 < %d ? (int)(%lld - x0) : %d;", g->ow, m, g->ow, m);
  OPEN("for (int r = 0; r < hr; r++) {");
  OPEN("for (int cc = 0; cc < wc; cc++) {");
  L("const int64_t at = (oc * %lld + y0 + r) * %lld + x0 + cc;", g->oh, g->ow);
  L("const float e = ev[r * %d + cc][j];", m);
  L("y[at] = %s;", fx);
  CLOSE();
  CLOSE();
  CLOSE();
  END();
  CLOSE();
}

dy_status dy_cg_conv_winograd(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                              bool bias, bool residual, const char *act, double alpha) {
  int m = op_m(ctx->op);
  wino_geom w = wino_geom_of(g, m, dy_cg_in_type(ctx, 0)->shape[0]);
  ll c = g->c, o = g->o;
  char fx[512], vb[64], vr[96], nb[64], fn[64];
  snprintf(vb, sizeof vb, "(e + %s[oc])", IN(2));
  const char *v = bias ? vb : "e";
  if (residual) {
    snprintf(vr, sizeof vr, "(%s + res[at])", v);
    v = vr;
  }
  if (!dy_cg_act_expr(act ? act : "", alpha, v, fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));
  ll vsz = (ll)w.p * w.group * c * 16;

  /* the phases: one function, phase in its arguments */
  snprintf(fn, sizeof fn, "k%d_part%d", ctx->op->id, ctx->n_parts++);
  dy_buf_printf(ctx->before,
                "/* op %d: Winograd F(%dx%d, 3x3), one phase for the group of blocks [b0, b0 + nb)\n"
                " * (blocks of 16 tiles, numbered over all images): 0 the input transform of\n"
                " * blocks b0 + [lo, hi), 1 the GEMMs of tile positions [lo, hi), 2 the output\n"
                " * transform of blocks b0 + [lo, hi) with the epilogue */\n"
                "typedef struct {\n"
                "  const float *%s, *%s, *%s, *%s;\n"
                "  float *%s, *V, *M;\n"
                "  int64_t b0, nb;\n"
                "  int phase;\n"
                "} %s_args;\n\n"
                "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                "  const %s_args *g_ = (const %s_args *)arg;\n"
                "  const float *%s = g_->%s, *%s = g_->%s",
                ctx->op->id, m, m, IN(0), IN(1), IN(2), IN(3), OUT(0), fn, fn, fn, fn, IN(0),
                IN(0), IN(1), IN(1));
  if (bias)
    dy_buf_printf(ctx->before, ", *%s = g_->%s", IN(2), IN(2));
  if (residual)
    dy_buf_printf(ctx->before, ", *%s = g_->%s", IN(3), IN(3));
  dy_buf_printf(ctx->before,
                ";\n"
                "  float *const %s = g_->%s, *const V = g_->V, *const M = g_->M;\n"
                "  const int64_t b0 = g_->b0, nb = g_->nb;\n"
                "  (void)t;\n",
                OUT(0), OUT(0));
  dy_cg_ctx sub = *ctx, *outer = ctx;
  sub.body = ctx->before;
  sub.indent = 1;
  ctx = &sub;
  OPEN("if (g_->phase == 0) {");
  emit_input_transform(ctx, g, &w);
  CLOSE();
  OPEN("else if (g_->phase == 1) {");
  emit_gemms(ctx, g, &w);
  CLOSE();
  OPEN("else {");
  emit_output_transform(ctx, g, &w, residual, fx);
  CLOSE();
  dy_buf_puts(ctx->before, "}\n\n");
  ctx = outer;

  L("/* as Winograd F(%dx%d, 3x3): %lld x %lld tiles of %d x %d outputs in %lld block%s of 16,",
    m, m, w.th, w.tw, m, m, w.blocks, w.blocks == 1 ? "" : "s");
  L(" * per image, in groups of %lld blocks (numbered over the images); per group the", w.group);
  L(" * input transforms (V, %d positions x %lld x 16 a", w.p, c);
  L(" * block), the GEMMs M[q] = U[q] V[q] (U: %s, G w G^T, packed), the output transforms",
    IN(1));
  L(" * (M: %d x %lld x 16 a block). Scratch: V, M. */", w.p, o);
  L("%s_args args;", fn);
  L("args.%s = %s, args.%s = %s, args.%s = %s, args.%s = %s;", IN(0), IN(0), IN(1), IN(1), IN(2),
    bias ? IN(2) : "0", IN(3), residual ? IN(3) : "0");
  L("args.%s = %s, args.V = scratch, args.M = scratch + %lld;", OUT(0), OUT(0), vsz);
  L("const int64_t blocks = %s * %lld; /* of all images */", nb, w.blocks);
  OPEN("for (int64_t b0 = 0; b0 < blocks; b0 += %lld) {", w.group);
  L("args.b0 = b0;");
  L("args.nb = blocks - b0 < %lld ? blocks - b0 : %lld;", w.group, w.group);
  if (ctx->threads > 1) {
    *ctx->uses |= DY_USES_THREADS;
    /* multiply-adds of the group's GEMMs: worth the threads? */
    L("const int par = args.nb * %lld >= DY_THREAD_MIN_WORK;", (ll)w.p * 16 * o * c);
    OPEN("for (args.phase = 0; args.phase < 3; args.phase++) {");
    L("const int64_t items = args.phase == 1 ? %d : args.nb;", w.p);
    L("if (par)");
    L("  dy_parallel(items, %s, &args);", fn);
    L("else");
    L("  %s(&args, 0, items, 0);", fn);
    CLOSE();
  } else {
    L("for (args.phase = 0; args.phase < 3; args.phase++)");
    L("  %s(&args, 0, args.phase == 1 ? %d : args.nb, 0);", fn, w.p);
  }
  CLOSE();
  return DY_OK;
}
