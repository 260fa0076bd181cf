/* emit_nn.c - emitters of the nn family (ir/ops_nn.def): conv2d,
 * conv2d_transpose, pool2d, batch_norm, layer_norm, group_norm, dropout.
 *
 * Loops with literal extents (only the batch is the run-time `batch`):
 *
 *   conv2d        with a constant weight: GEMM on the micro-kernel of
 *                 emit_gemm.c. The weight is packed at compile time into
 *                 micro-panels of 6 output channels; per image, each panel
 *                 of 16 output pixels of im2col(x) is gathered into the
 *                 scratch (runs along an output row are vector copies; a
 *                 padded convolution first copies the image into a
 *                 zero-padded buffer there, so the gather never checks
 *                 bounds), and each 6 x 16 tile of y comes out of registers
 *                 with bias and activation applied. Depthwise: a direct
 *                 kernel, one tap at a time along each output row in vector
 *                 lanes. A weight computed at run time: plain loops.
 *   pool2d        windows inside the input at stride 1, or 2 wide at stride
 *                 2: DY_VW outputs at a time (dy_vdeint splits even and odd
 *                 columns); whole-plane averages: a vector sum; otherwise
 *                 window loops with bounds checks
 *   layer_norm    per row one vector sweep for the moments (sums of x - x[0]
 *                 and its square) and one for y
 *   the rest      plain loops (transposed convolution as a scatter-add)
 *
 * Bounds checks on an input index are emitted only on the sides where the
 * index can actually leave the input, so no load falls outside a buffer.
 *
 * The driver (emit.c) has checked the op's types against inference before
 * an emitter runs, so attributes are known to be well formed (the rules
 * live in ir/infer_nn.c). batch_norm, group_norm and dropout emit
 * exactly the arithmetic of runtime/kernels_nn.c — statistics in double,
 * the same operation order, dropout's counter hash with the threshold and
 * scale as literals — so the generated C agrees with eager calls (bit for
 * bit for dropout's mask); the vector kernels agree within rounding.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen_internal.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
/* A line that opens a block "{", and the line that closes it. */
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))

typedef long long ll;

/* "v * m + a" for an index, simplified: "oy", "oy * 2 - 1", "i * 2". */
static const char *affine(char *buf, size_t n, const char *v, ll m, ll a) {
  int k = m == 1 ? snprintf(buf, n, "%s", v) : snprintf(buf, n, "%s * %lld", v, m);
  if (a && k >= 0 && (size_t)k < n)
    snprintf(buf + k, n - (size_t)k, " %c %lld", a < 0 ? '-' : '+', a < 0 ? -a : a);
  return buf;
}

/* The sum of two affine terms "t1 + t2" where t2 may vanish. */
static const char *sum2(char *buf, size_t n, const char *t1, const char *v, ll m) {
  if (m == 0)
    snprintf(buf, n, "%s", t1);
  else if (m == 1)
    snprintf(buf, n, "%s + %s", t1, v);
  else
    snprintf(buf, n, "%s + %s * %lld", t1, v, m);
  return buf;
}

/* "if (v < 0 || v >= n) continue;" with only the halves that can happen. */
static void emit_bounds(dy_cg_ctx *ctx, const char *v, bool lo, bool hi, ll n) {
  if (lo && hi)
    L("if (%s < 0 || %s >= %lld) continue;", v, v, n);
  else if (lo)
    L("if (%s < 0) continue;", v);
  else if (hi)
    L("if (%s >= %lld) continue;", v, n);
}

/* A float attribute as a literal of its float value. */
static dy_status float_attr(dy_cg_ctx *ctx, const char *name, float *v,
                            char *lit, size_t n, dy_error *err) {
  double d;
  dy_status s = dy_op_attr_float(ctx->op, name, &d, err);
  if (s != DY_OK)
    return s;
  *v = (float)d;
  if (!dy_float_literal(*v, lit, n))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT,
                              "attribute is not finite");
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* conv2d, conv2d_transpose                                            */
/* ------------------------------------------------------------------ */

typedef struct {
  ll c, h, w;            /* input [N, c, h, w]      */
  ll o, oh, ow;          /* output [N, o, oh, ow]   */
  ll kh, kw;
  ll sh, sw, dh, dw;     /* strides, dilations      */
  ll pt, pl;             /* top and left padding    */
  ll groups;
} conv_geom;

static conv_geom conv_geom_from(const dy_program *p, const dy_op *op) {
  const dy_type *x = &p->vars[op->inputs[0]]->type, *w = &p->vars[op->inputs[1]]->type;
  const dy_type *y = &p->vars[op->outputs[0]]->type;
  const int64_t *st, *pad, *dil;
  int n;
  dy_op_attr_ints(op, "strides", &st, &n, NULL);
  dy_op_attr_ints(op, "paddings", &pad, &n, NULL); /* [t,l,b,r] or [h,w] */
  dy_op_attr_ints(op, "dilations", &dil, &n, NULL);
  return (conv_geom){
      .c = x->shape[1], .h = x->shape[2], .w = x->shape[3],
      .o = y->shape[1], .oh = y->shape[2], .ow = y->shape[3],
      .kh = w->shape[2], .kw = w->shape[3],
      .sh = st[0], .sw = st[1], .dh = dil[0], .dw = dil[1],
      .pt = pad[0], .pl = pad[1],
      .groups = dy_op_attr_int_or(op, "groups", 1)};
}

static conv_geom conv_geom_of(dy_cg_ctx *ctx) { return conv_geom_from(ctx->p, ctx->op); }

/* The input as the windows see it, padding included: hp x wp. False when
 * no window leaves the input (no padding needed). */
static bool conv_padded(const conv_geom *g, ll *hp, ll *wp) {
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
static dy_status emit_conv_direct(dy_cg_ctx *ctx, const conv_geom *gp) {
  conv_geom g = *gp;
  ll cg = g.c / g.groups, og = g.o / g.groups;
  char nb[64], t[128], iy[160], ix[160];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));
  /* iy = oy*sh - pt + i*dh stays inside [0, h) unless padding pushes it out */
  bool lo_h = g.pt > 0, hi_h = (g.oh - 1) * g.sh - g.pt + (g.kh - 1) * g.dh >= g.h;
  bool lo_w = g.pl > 0, hi_w = (g.ow - 1) * g.sw - g.pl + (g.kw - 1) * g.dw >= g.w;
  sum2(iy, sizeof iy, affine(t, sizeof t, "oy", g.sh, -g.pt), "i", g.dh);
  sum2(ix, sizeof ix, affine(t, sizeof t, "ox", g.sw, -g.pl), "j", g.dw);

  L("/* y[n][oc][oy][ox] = sum over c < %lld, i < %lld, j < %lld of", cg, g.kh, g.kw);
  if (g.groups == 1)
    L(" *   x[n][c][%s][%s] * w[oc][c][i][j] */", iy, ix);
  else
    L(" *   x[n][(oc / %lld) * %lld + c][%s][%s] * w[oc][c][i][j] */", og, cg, iy, ix);
  OPEN("for (int64_t n = 0; n < %s; n++) {", nb);
  OPEN("for (int64_t oc = 0; oc < %lld; oc++) {", g.o);
  if (g.groups == 1)
    L("const float *x = in0 + n * %lld;", g.c * g.h * g.w);
  else
    L("const float *x = in0 + (n * %lld + (oc / %lld) * %lld) * %lld;", g.c, og, cg,
      g.h * g.w);
  L("const float *wk = in1 + oc * %lld;", cg * g.kh * g.kw);
  L("float *y = out0 + (n * %lld + oc) * %lld;", g.o, g.oh * g.ow);
  OPEN("for (int64_t oy = 0; oy < %lld; oy++) {", g.oh);
  OPEN("for (int64_t ox = 0; ox < %lld; ox++) {", g.ow);
  L("float acc = 0.0f;");
  OPEN("for (int64_t c = 0; c < %lld; c++) {", cg);
  OPEN("for (int64_t i = 0; i < %lld; i++) {", g.kh);
  L("const int64_t iy = %s;", iy);
  emit_bounds(ctx, "iy", lo_h, hi_h, g.h);
  OPEN("for (int64_t j = 0; j < %lld; j++) {", g.kw);
  L("const int64_t ix = %s;", ix);
  emit_bounds(ctx, "ix", lo_w, hi_w, g.w);
  L("acc += x[(c * %lld + iy) * %lld + ix] * wk[(c * %lld + i) * %lld + j];", g.h, g.w,
    g.kh, g.kw);
  CLOSE();
  CLOSE();
  CLOSE();
  L("y[oy * %lld + ox] = acc;", g.ow);
  CLOSE();
  CLOSE();
  CLOSE();
  CLOSE();
  return DY_OK;
}

/* bias and activation over each output channel, after a kernel that
 * wrote the plain convolution */
static dy_status emit_conv_epilogue_loop(dy_cg_ctx *ctx, dy_error *err, bool bias,
                                         const char *act, double alpha) {
  char fx[512];
  if (!dy_cg_act_expr(act, alpha, bias ? "(v + in2[c])" : "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  const dy_type *o = dy_cg_out_type(ctx, 0);
  char sn[64];
  snprintf(sn, sizeof sn, "%s", dy_cg_dim(ctx, o, 0));
  L("/* epilogue: bias and activation per output channel */");
  L("for (int64_t n = 0; n < %s; n++)", sn);
  L("  for (int64_t c = 0; c < %lld; c++)", (ll)o->shape[1]);
  L("    for (int64_t j = 0; j < %lld; j++) {", (ll)(o->shape[2] * o->shape[3]));
  L("      float *p = &out0[(n * %lld + c) * %lld + j];", (ll)o->shape[1],
    (ll)(o->shape[2] * o->shape[3]));
  L("      const float v = *p;");
  L("      *p = %s;", fx);
  L("    }");
  return DY_OK;
}

/* The 16-pixel im2col panel for pixels [p0, p0 + nr) of the channels from
 * c0 on: scratch[r * 16 + j] = x[c0 + c][iy][ix], 0 in the padding, for r
 * = (c * kh + i) * kw + j'. A run of pixels along one output row is one
 * copy per (c, i, j'): with vector loads where stride 1 makes it
 * contiguous and it lies inside the row, element by element elsewhere. */
static void emit_im2col_panel(dy_cg_ctx *ctx, const conv_geom *g, ll cg, const char *c0) {
  ll ow = g->ow;
  bool lo_h = g->pt > 0, hi_h = (g->oh - 1) * g->sh - g->pt + (g->kh - 1) * g->dh >= g->h;
  bool lo_w = g->pl > 0, hi_w = (g->ow - 1) * g->sw - g->pl + (g->kw - 1) * g->dw >= g->w;
  char t[128], e[160];
  L("/* im2col: scratch[r * 16 + j] for pixel p0 + j, r = (c * %lld + i) * %lld + j' */",
    g->kh, g->kw);
  L("int64_t j = 0;");
  OPEN("while (j < nr) { /* a run of pixels along one output row */");
  L("const int64_t oy = (p0 + j) / %lld, ox = (p0 + j) %% %lld;", ow, ow);
  L("const int64_t len = %lld - ox < nr - j ? %lld - ox : nr - j;", ow, ow);
  OPEN("for (int64_t c = 0; c < %lld; c++) {", cg);
  OPEN("for (int64_t i = 0; i < %lld; i++) {", g->kh);
  sum2(e, sizeof e, affine(t, sizeof t, "oy", g->sh, -g->pt), "i", g->dh);
  L("const int64_t iy = %s;", e);
  L("float *d = scratch + (c * %lld + i) * %lld + j;", g->kh, g->kw * 16);
  if (lo_h || hi_h) {
    if (lo_h && hi_h)
      OPEN("if (iy < 0 || iy >= %lld) {", g->h);
    else if (lo_h)
      OPEN("if (iy < 0) {");
    else
      OPEN("if (iy >= %lld) {", g->h);
    L("for (int64_t k = 0; k < %lld; k++)", g->kw);
    L("  for (int64_t t = 0; t < len; t++)");
    L("    d[k * 16 + t] = 0.0f;");
    L("continue;");
    CLOSE();
  }
  if (c0)
    L("const float *row = x + (%s + c) * %lld + iy * %lld;", c0, g->h * g->w, g->w);
  else
    L("const float *row = x + c * %lld + iy * %lld;", g->h * g->w, g->w);
  OPEN("for (int64_t k = 0; k < %lld; k++, d += 16) {", g->kw);
  sum2(e, sizeof e, affine(t, sizeof t, "ox", g->sw, -g->pl), "k", g->dw);
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
    L("else");
    L("  dy_copy(d + t0, row + ix0 + t0, t1 - t0);");
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
  CLOSE();
  CLOSE();
  L("j += len;");
  CLOSE();
}

/* Scratch of the GEMM convolution, per thread: an im2col panel of r x 16
 * floats, then, when the convolution pads, the zero-padded image. */
int64_t dy_cg_conv_scratch(const dy_program *p, const dy_op *op, int threads) {
  dy_pack k = dy_gemm_pack_of(p, op, 1);
  if (k.kind != DY_PACK_A6)
    return 0;
  conv_geom g = conv_geom_from(p, op);
  ll hp, wp, padded = conv_padded(&g, &hp, &wp) ? g.c * hp * wp : 0;
  return (k.cols * 16 + padded) * (threads > 1 ? threads : 1) * 4;
}

/* Image n of in0 into xp = scratch + at: hp x wp planes, zero around the
 * input placed at (pt, pl). */
static void emit_pad_image(dy_cg_ctx *ctx, const conv_geom *g, ll hp, ll wp, ll at) {
  L("/* the image, zero-padded to %lld x %lld */", hp, wp);
  L("float *xp = scratch + %lld;", at);
  L("for (int64_t q = 0; q < %lld; q++)", g->c * hp * wp);
  L("  xp[q] = 0.0f;");
  L("for (int64_t c = 0; c < %lld; c++)", g->c);
  L("  for (int64_t iy = 0; iy < %lld; iy++)", g->h);
  L("    dy_copy(xp + (c * %lld + iy + %lld) * %lld + %lld, in0 + ((n * %lld + c) * %lld + iy) * %lld,",
    hp, g->pt, wp, g->pl, g->c, g->h, g->w);
  L("            %lld);", g->w);
}

/* conv2d as GEMM on the micro-kernel: per image and 16-pixel panel, the
 * panel of im2col(x) is gathered into the scratch, then each 6 output
 * channels' packed weight (in1) times it gives a 6 x 16 tile of y, bias
 * and activation applied in registers. */
static dy_status emit_conv_gemm(dy_cg_ctx *ctx, dy_error *err, const conv_geom *g,
                                const dy_pack *pk, bool bias, const char *act, double alpha) {
  ll groups = g->groups, cg = g->c / groups, og = g->o / groups, r = pk->cols;
  ll p = g->oh * g->ow, nq = (og + 5) / 6, nkb = (r + 511) / 512, kc = (r + nkb - 1) / nkb;
  char alit[64] = "0.0f", epi[160];
  if (!dy_gemm_act_flag(act))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  if (act && strcmp(act, "leaky_relu") == 0 && !dy_float_literal((float)alpha, alit, sizeof alit))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "alpha is not finite");
  dy_gemm_epilogue_flags(epi, sizeof epi, bias ? "DY_GEMM_BIAS_ROW" : NULL, act);
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  char nb[64];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, 0), 0));

  L("/* as GEMM: y[n] (%lld x %lld pixels) = w (%lld x %lld, in1 packed: %lld micro-panel%s",
    g->o, p, g->o, r, groups * nq, groups * nq == 1 ? "" : "s");
  L(" * of %lld x 6) times im2col(x[n]) (%lld x %lld), gathered 16 pixels at a time */", r, r,
    p);
  ll panels = (p + 15) / 16, hp, wp;
  /* with padding, the im2col reads a zero-padded copy of the image (after
   * the panels in the scratch), so it never checks bounds */
  bool padded = conv_padded(g, &hp, &wp);
  conv_geom gi = *g;
  if (padded)
    gi.h = hp, gi.w = wp, gi.pt = 0, gi.pl = 0;
  char fn[64];
  ll slice = r * 16 + (padded ? g->c * hp * wp : 0); /* one thread's scratch */
  if (ctx->threads > 1) {
    /* items [lo, hi) of batch x panels, one thread's share: each thread
     * gathers into its own slice of the scratch and, with padding, pads
     * each image it reaches into the same slice */
    snprintf(fn, sizeof fn, "k%d_part%d", ctx->op->id, ctx->n_parts++);
    dy_buf_printf(ctx->before,
                  "/* op %d: items [lo, hi) of (image, 16-pixel panel), one thread's share */\n"
                  "typedef struct {\n"
                  "  const float *in0, *in1, *in2;\n"
                  "  float *out0, *scratch;\n"
                  "} %s_args;\n\n"
                  "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                  "  const %s_args *g_ = (const %s_args *)arg;\n"
                  "  const float *in0 = g_->in0, *in1 = g_->in1%s, *x = in0;\n"
                  "  float *y = g_->out0, *scratch = g_->scratch + (int64_t)t * %lld;\n"
                  "  int64_t cur = -1;\n",
                  ctx->op->id, fn, fn, fn, fn, bias ? ", *in2 = g_->in2" : "", slice);
    *ctx->uses |= DY_USES_THREADS;
  }
  dy_cg_ctx sub = *ctx;
  if (ctx->threads > 1) {
    sub.body = ctx->before;
    sub.indent = 1;
  }
  dy_cg_ctx *outer = ctx;
  ctx = &sub;
  /* one thread: loops over images and panels; threads: over the items of
   * the share, x and y set when the image changes */
  bool one = outer->threads <= 1;
  if (one) {
    OPEN("for (int64_t n = 0; n < %s; n++) {", nb);
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
    L("%sx = in0 + n * %lld;", one ? "const float *" : "", g->c * g->h * g->w);
  L("%sy = %s + n * %lld;", one ? "float *" : "", one ? "out0" : "g_->out0", g->o * p);
  if (one)
    OPEN("for (int64_t p0 = 0; p0 < %lld; p0 += 16) {", p);
  else
    CLOSE();
  if (p % 16 == 0)
    L("const int nr = 16;");
  else
    L("const int nr = %lld - p0 < 16 ? (int)(%lld - p0) : 16;", p, p);
  char c0[64];
  snprintf(c0, sizeof c0, "g * %lld", cg);
  if (groups > 1)
    OPEN("for (int64_t g = 0; g < %lld; g++) {", groups);
  emit_im2col_panel(ctx, &gi, cg, groups > 1 ? c0 : NULL);
  if (p % 16 != 0) {
    L("/* the last panel's columns past nr: computed, never stored */");
    L("for (int64_t r = 0; r < %lld; r++)", r);
    L("  for (int j = nr; j < 16; j++)");
    L("    scratch[r * 16 + j] = 0.0f;");
  }
  if (nkb > 1) {
    OPEN("for (int64_t k0 = 0; k0 < %lld; k0 += %lld) {", r, kc);
    L("const int64_t kc = %lld - k0 < %lld ? %lld - k0 : %lld;", r, kc, r, kc);
    L("const int flags = (k0 > 0 ? DY_GEMM_ADD_C : 0) | (k0 + kc == %lld ? %s : 0);", r, epi);
  } else {
    L("const int64_t k0 = 0, kc = %lld;", r);
    L("const int flags = %s;", epi);
  }
  OPEN("for (int64_t o = 0; o < %lld; o += 6) {", og);
  if (groups > 1) {
    L("const int64_t oc = g * %lld + o;", og);
    L("dy_gemm_tile(%lld - o, kc, in1 + g * %lld + o * %lld + k0 * 6, 1, 6,", og, nq * 6 * r, r);
    L("             scratch + k0 * 16,");
  } else {
    L("const int64_t oc = o;");
    L("dy_gemm_tile(%lld - o, kc, in1 + o * %lld + k0 * 6, 1, 6, scratch + k0 * 16,", og, r);
  }
  L("             y + oc * %lld + p0, %lld, nr, flags, %s, %s);", p, p,
    bias ? "in2 + oc" : "0", alit);
  CLOSE();
  if (nkb > 1)
    CLOSE();
  else
    L("(void)k0;");
  if (groups > 1)
    CLOSE();
  CLOSE();
  ctx = outer;
  if (ctx->threads <= 1) {
    ctx->indent = sub.indent;
    CLOSE();
    return DY_OK;
  }
  dy_buf_puts(ctx->before, "}\n\n");
  /* the kernel: all images' panels over the threads, in one call */
  L("%s_args args;", fn);
  L("args.in0 = in0, args.in1 = in1, args.in2 = %s;", bias ? "in2" : "0");
  L("args.out0 = out0, args.scratch = scratch;");
  L("if (%s * %lld >= DY_THREAD_MIN_WORK) /* multiply-adds: worth the threads? */", nb,
    g->o * r * p);
  L("  dy_parallel(%s * %lld, %s, &args);", nb, panels, fn);
  L("else");
  L("  %s(&args, 0, %s * %lld, 0);", fn, nb, panels);
  return DY_OK;
}

/* Depthwise (one input and one output channel per group): per channel
 * and output row, y += w[i][j] * x[iy][ix] one tap at a time along the
 * row, vectorised where the stride is 1; the valid columns of each tap are
 * worked out here, so the inner loops have no bounds checks. */
static dy_status emit_conv_depthwise(dy_cg_ctx *ctx, dy_error *err, const conv_geom *g,
                                     bool bias, const char *act, double alpha) {
  char fx[512];
  if (!dy_cg_act_expr(act, alpha, "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  *ctx->uses |= DY_USES_SIMD;
  char planes[128];
  dy_ext_str(ctx, dy_ext_range(dy_cg_in_type(ctx, 0), 0, 2), planes, sizeof planes);
  bool lo_h = g->pt > 0, hi_h = (g->oh - 1) * g->sh - g->pt + (g->kh - 1) * g->dh >= g->h;
  char t[128], e[160];
  L("/* depthwise: y[c][oy][ox] = %sw[c][i][j] * x[c][iy][ix] */", bias ? "in2[c] + sum of " : "sum of ");
  OPEN("for (int64_t pl = 0; pl < %s; pl++) {", planes);
  L("const int64_t c = pl %% %lld;", g->c);
  L("const float *x = in0 + pl * %lld;", g->h * g->w);
  L("const float *w = in1 + c * %lld;", g->kh * g->kw);
  OPEN("for (int64_t oy = 0; oy < %lld; oy++) {", g->oh);
  L("float *y = out0 + pl * %lld + oy * %lld;", g->oh * g->ow, g->ow);
  L("for (int64_t ox = 0; ox < %lld; ox++)", g->ow);
  L("  y[ox] = %s;", bias ? "in2[c]" : "0.0f");
  OPEN("for (int64_t i = 0; i < %lld; i++) {", g->kh);
  sum2(e, sizeof e, affine(t, sizeof t, "oy", g->sh, -g->pt), "i", g->dh);
  L("const int64_t iy = %s;", e);
  emit_bounds(ctx, "iy", lo_h, hi_h, g->h);
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
    sum2(e, sizeof e, affine(t, sizeof t, "ox", g->sw, off), "", 0);
    L("  y[ox] += wv * row[%s];", e);
    CLOSE();
  }
  CLOSE();
  if (act && *act) {
    L("for (int64_t ox = 0; ox < %lld; ox++) {", g->ow);
    L("  const float v = y[ox];");
    L("  y[ox] = %s;", fx);
    L("}");
  }
  CLOSE();
  CLOSE();
  return DY_OK;
}

/* conv2d, and fused_conv2d's act(conv2d(x, w) + b): on the GEMM when the
 * weight is constant, a direct depthwise kernel, or plain loops. */
dy_status dy_cg_conv2d_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias, const char *act,
                                  double alpha) {
  dy_status s = DY_OK;
  conv_geom g = conv_geom_of(ctx);
  dy_pack pk = dy_gemm_pack_of(ctx->p, ctx->op, 1);
  if (pk.kind == DY_PACK_A6 && ctx->scratch)
    return emit_conv_gemm(ctx, err, &g, &pk, bias, act, alpha);
  if (g.groups == g.c && g.groups == g.o && dy_cg_in_type(ctx, 0)->dtype == DY_F32)
    return emit_conv_depthwise(ctx, err, &g, bias, act, alpha);
  if ((s = emit_conv_direct(ctx, &g)) != DY_OK)
    return s;
  if (bias || (act && *act))
    return emit_conv_epilogue_loop(ctx, err, bias, act, alpha);
  return DY_OK;
}

dy_status dy_emit_conv2d(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_conv2d_epilogue(ctx, err, false, "", 0);
}

dy_status dy_emit_conv2d_transpose(dy_cg_ctx *ctx, dy_error *err) {
  conv_geom g = conv_geom_of(ctx);
  ll cg = g.c / g.groups, og = g.o / g.groups;
  char nb[64], size[128], t[128], oy[160], ox[160];
  const dy_type *y = dy_cg_out_type(ctx, 0);
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, y, 0));
  dy_ext_str(ctx, dy_ext_range(y, 0, 4), size, sizeof size);
  /* input pixel (iy, ix) through tap (i, j) lands on (oy, ox) */
  bool lo_h = g.pt > 0, hi_h = (g.h - 1) * g.sh - g.pt + (g.kh - 1) * g.dh >= g.oh;
  bool lo_w = g.pl > 0, hi_w = (g.w - 1) * g.sw - g.pl + (g.kw - 1) * g.dw >= g.ow;
  sum2(oy, sizeof oy, affine(t, sizeof t, "iy", g.sh, -g.pt), "i", g.dh);
  sum2(ox, sizeof ox, affine(t, sizeof t, "ix", g.sw, -g.pl), "j", g.dw);

  L("for (int64_t k = 0; k < %s; k++)", size);
  L("  out0[k] = 0.0f;");
  if (g.groups == 1)
    L("/* y[n][oc][%s][%s] += x[n][ic][iy][ix] * w[ic][oc][i][j] */", oy, ox);
  else
    L("/* y[n][(ic / %lld) * %lld + oc][%s][%s] += x[n][ic][iy][ix] * w[ic][oc][i][j] */",
      cg, og, oy, ox);
  OPEN("for (int64_t n = 0; n < %s; n++) {", nb);
  OPEN("for (int64_t ic = 0; ic < %lld; ic++) {", g.c);
  L("const float *x = in0 + (n * %lld + ic) * %lld;", g.c, g.h * g.w);
  L("const float *wc = in1 + ic * %lld;", og * g.kh * g.kw);
  if (g.groups == 1)
    L("float *y = out0 + n * %lld;", g.o * g.oh * g.ow);
  else
    L("float *y = out0 + (n * %lld + (ic / %lld) * %lld) * %lld;", g.o, cg, og,
      g.oh * g.ow);
  OPEN("for (int64_t iy = 0; iy < %lld; iy++) {", g.h);
  OPEN("for (int64_t ix = 0; ix < %lld; ix++) {", g.w);
  L("const float v = x[iy * %lld + ix];", g.w);
  OPEN("for (int64_t oc = 0; oc < %lld; oc++) {", og);
  OPEN("for (int64_t i = 0; i < %lld; i++) {", g.kh);
  L("const int64_t oy = %s;", oy);
  emit_bounds(ctx, "oy", lo_h, hi_h, g.oh);
  OPEN("for (int64_t j = 0; j < %lld; j++) {", g.kw);
  L("const int64_t ox = %s;", ox);
  emit_bounds(ctx, "ox", lo_w, hi_w, g.ow);
  L("y[(oc * %lld + oy) * %lld + ox] += v * wc[(oc * %lld + i) * %lld + j];", g.oh, g.ow,
    g.kh, g.kw);
  for (int k = 0; k < 7; k++)
    CLOSE();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pool2d                                                              */
/* ------------------------------------------------------------------ */

typedef enum { POOL_WINDOWS, POOL_ADAPTIVE, POOL_GLOBAL } pool_mode;

/* Emit the window [v0, v1) of output index o (named ov) along one axis of
 * input size n and output size on, and, when size is set, its extent
 * clipped to the padded input in vs (the divisor of avg with padding). The
 * rules are pool_window's in runtime/kernels_nn.c. */
static void emit_window(dy_cg_ctx *ctx, pool_mode mode, const char *v,
                        const char *ov, ll n, ll on, ll k, ll st, ll lo, ll hi,
                        bool size) {
  char t[128];
  if (mode == POOL_GLOBAL) {
    L("const int64_t %s0 = 0, %s1 = %lld;", v, v, n);
    return;
  }
  if (mode == POOL_ADAPTIVE) {
    L("const int64_t %s0 = %s * %lld / %lld, %s1 = (%s * %lld + %lld) / %lld;", v, ov,
      n, on, v, ov, n, n + on - 1, on);
    return;
  }
  /* windows start at o*st - lo; the far edge may pass n (padding, or a
   * ceil_mode window) */
  bool clip_lo = lo > 0, clip_hi = (on - 1) * st - lo + k > n;
  const char *q = clip_lo || clip_hi ? "" : "const ";
  L("%sint64_t %s0 = %s, %s1 = %s0 + %lld;", q, v, affine(t, sizeof t, ov, st, -lo), v,
    v, k);
  if (size) {
    if ((on - 1) * st - lo + k > n + hi)
      L("const int64_t %ss = (%s1 < %lld ? %s1 : %lld) - %s0;", v, v, n + hi, v, n + hi, v);
    else
      L("const int64_t %ss = %lld;", v, k);
  }
  if (clip_lo)
    L("if (%s0 < 0) %s0 = 0;", v, v);
  if (clip_hi)
    L("if (%s1 > %lld) %s1 = %lld;", v, n, v, n);
}

dy_status dy_emit_pool2d(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_out_type(ctx, 0);
  bool max = strcmp(dy_op_find_attr(ctx->op, "pooling_type")->s, "max") == 0;
  bool exclusive = dy_op_attr_int_or(ctx->op, "exclusive", 1) != 0;
  pool_mode mode = dy_op_attr_int_or(ctx->op, "global_pooling", 0) ? POOL_GLOBAL
                   : dy_op_attr_int_or(ctx->op, "adaptive", 0)     ? POOL_ADAPTIVE
                                                                   : POOL_WINDOWS;
  ll k[2] = {0, 0}, st[2] = {1, 1}, lo[2] = {0, 0}, hi[2] = {0, 0};
  const int64_t *v;
  int n;
  if (mode != POOL_GLOBAL && dy_op_attr_ints(ctx->op, "ksize", &v, &n, NULL) == DY_OK)
    k[0] = v[0], k[1] = v[1];
  if (mode == POOL_WINDOWS) {
    dy_op_attr_ints(ctx->op, "strides", &v, &n, NULL);
    st[0] = v[0], st[1] = v[1];
    dy_op_attr_ints(ctx->op, "paddings", &v, &n, NULL);
    for (int d = 0; d < 2; d++) {
      lo[d] = v[d];
      hi[d] = n == 4 ? v[d + 2] : v[d];
    }
  }
  ll h = x->shape[2], w = x->shape[3], oh = y->shape[2], ow = y->shape[3];
  bool padded_div = !max && !exclusive && mode == POOL_WINDOWS;
  char planes[128];
  dy_ext_str(ctx, dy_ext_range(x, 0, 2), planes, sizeof planes);

  /* average over whole planes (global, or adaptive to 1 x 1): a vector sum */
  if (!max && (mode == POOL_GLOBAL || (mode == POOL_ADAPTIVE && oh == 1 && ow == 1))) {
    *ctx->uses |= DY_USES_SIMD;
    L("/* avg pooling over each whole plane of %lld: a sum in vector lanes */", h * w);
    OPEN("for (int64_t p = 0; p < %s; p++) {", planes);
    L("const float *x = in0 + p * %lld;", h * w);
    L("dy_vf acc = dy_vset(0.0f);");
    L("int64_t i = 0;");
    L("for (; i + DY_VW <= %lld; i += DY_VW)", h * w);
    L("  acc = dy_vadd(acc, dy_vload(x + i));");
    L("float s = dy_vsum(acc);");
    L("for (; i < %lld; i++)", h * w);
    L("  s += x[i];");
    L("out0[p] = s / %lld.0f;", h * w);
    CLOSE();
    return DY_OK;
  }
  /* windows inside the input (no padding, no ceil-mode overhang) at stride
   * 1, or 2 wide at stride 2 (the even and odd columns of a row apart):
   * DY_VW outputs of a row at a time, then the rest one by one below */
  bool fast = mode == POOL_WINDOWS && lo[0] == 0 && lo[1] == 0 &&
              (oh - 1) * st[0] + k[0] <= h && (ow - 1) * st[1] + k[1] <= w &&
              k[0] * k[1] <= 16 && (st[1] == 1 || (st[1] == 2 && k[1] == 2));
  if (fast) {
    *ctx->uses |= DY_USES_SIMD;
    L("/* %s pooling %lldx%lld, stride %lldx%lld: DY_VW outputs at a time, then one by one */",
      max ? "max" : "avg", k[0], k[1], st[0], st[1]);
    OPEN("for (int64_t p = 0; p < %s; p++) {", planes);
    L("const float *x = in0 + p * %lld;", h * w);
    L("float *y = out0 + p * %lld;", oh * ow);
    OPEN("for (int64_t oy = 0; oy < %lld; oy++) {", oh);
    L("int64_t ox = 0;");
    OPEN("for (; ox + DY_VW <= %lld; ox += DY_VW) {", ow);
    L("dy_vf acc, v%s;", st[1] == 2 ? ", e, o" : "");
    bool first = true;
    for (ll ky = 0; ky < k[0]; ky++) {
      char row[160];
      snprintf(row, sizeof row, "x + (oy * %lld + %lld) * %lld", st[0], ky, w);
      if (st[1] == 2)
        L("dy_vdeint(dy_vload(%s + 2 * ox), dy_vload(%s + 2 * ox + DY_VW), &e, &o);", row, row);
      for (ll kx = 0; kx < k[1]; kx++) {
        if (st[1] == 2)
          L("v = %s;", kx == 0 ? "e" : "o");
        else
          L("v = dy_vload(%s + ox + %lld);", row, kx);
        if (first)
          L("acc = v;");
        else if (max)
          L("acc = dy_vselect_lt(acc, v, v, acc);");
        else
          L("acc = dy_vadd(acc, v);");
        first = false;
      }
    }
    if (max)
      L("dy_vstore(y + oy * %lld + ox, acc);", ow);
    else
      L("dy_vstore(y + oy * %lld + ox, dy_vdiv(acc, dy_vset(%lld.0f)));", ow, k[0] * k[1]);
    CLOSE();
    OPEN("for (; ox < %lld; ox++) {", ow);
    L("const int64_t h0 = oy * %lld, w0 = ox * %lld;", st[0], st[1]);
    if (max)
      L("float acc = x[h0 * %lld + w0];", w);
    else
      L("float acc = 0.0f;");
    L("for (int64_t iy = h0; iy < h0 + %lld; iy++)", k[0]);
    L("  for (int64_t ix = w0; ix < w0 + %lld; ix++)", k[1]);
    if (max)
      L("    acc = x[iy * %lld + ix] > acc ? x[iy * %lld + ix] : acc;", w, w);
    else
      L("    acc += x[iy * %lld + ix];", w);
    if (max)
      L("y[oy * %lld + ox] = acc;", ow);
    else
      L("y[oy * %lld + ox] = acc / %lld.0f;", ow, k[0] * k[1]);
    CLOSE();
    CLOSE();
    CLOSE();
    return DY_OK;
  }

  L("/* %s pooling%s */", max ? "max" : "avg",
    max ? "" : padded_div ? ", dividing by the window clipped to the padded input"
                          : ", dividing by the in-bounds elements");
  OPEN("for (int64_t p = 0; p < %s; p++) {", planes);
  L("const float *x = in0 + p * %lld;", h * w);
  L("float *y = out0 + p * %lld;", oh * ow);
  OPEN("for (int64_t oy = 0; oy < %lld; oy++) {", oh);
  emit_window(ctx, mode, "h", "oy", h, oh, k[0], st[0], lo[0], hi[0], padded_div);
  OPEN("for (int64_t ox = 0; ox < %lld; ox++) {", ow);
  emit_window(ctx, mode, "w", "ox", w, ow, k[1], st[1], lo[1], hi[1], padded_div);
  if (max) {
    L("float acc = x[h0 * %lld + w0];", w);
    L("for (int64_t iy = h0; iy < h1; iy++)");
    OPEN("  for (int64_t ix = w0; ix < w1; ix++) {");
    L("  const float v = x[iy * %lld + ix];", w);
    L("  acc = v > acc ? v : acc;");
    ctx->indent--;
    L("  }");
  } else {
    L("float acc = 0.0f;");
    L("for (int64_t iy = h0; iy < h1; iy++)");
    L("  for (int64_t ix = w0; ix < w1; ix++)");
    L("    acc += x[iy * %lld + ix];", w);
    if (padded_div)
      L("acc /= (float)(hs * ws);");
    else
      L("acc /= (float)((h1 - h0) * (w1 - w0));");
  }
  L("y[oy * %lld + ox] = acc;", ow);
  CLOSE();
  CLOSE();
  CLOSE();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* batch_norm, layer_norm, group_norm                                  */
/* ------------------------------------------------------------------ */

/* The statistics of kernels_nn.c's moments(): mean m and inv = 1/sqrt(var +
 * eps) of the values `elem` (an expression in the loop variables) over
 * the loops `loops` (one or two "for (...)" heads), count cnt. */
static void emit_moments(dy_cg_ctx *ctx, int n_loops, const char *const *loops,
                         const char *elem, const char *cnt, const char *eps) {
  L("double sum = 0.0, sq = 0.0;");
  for (int i = 0; i < n_loops; i++)
    L("%*s%s", 2 * i, "", loops[i]);
  L("%*ssum += %s;", 2 * n_loops, "", elem);
  L("const double mu = sum / (double)(%s);", cnt);
  for (int i = 0; i < n_loops; i++)
    L("%*s%s%s", 2 * i, "", loops[i], i == n_loops - 1 ? " {" : "");
  L("%*sconst double d = %s - mu;", 2 * n_loops, "", elem);
  L("%*ssq += d * d;", 2 * n_loops, "");
  L("%*s}", 2 * (n_loops - 1), "");
  L("const float m = (float)mu;");
  L("const float inv = 1.0f / dy_sqrtf((float)(sq / (double)(%s)) + %s);", cnt, eps);
}

dy_status dy_emit_batch_norm(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  float eps;
  char eps_lit[64], nb[64], cnt[128], loop_n[160], loop_j[160], elem[200];
  if ((s = float_attr(ctx, "epsilon", &eps, eps_lit, sizeof eps_lit, err)))
    return s;
  bool is_test = dy_op_attr_int_or(ctx->op, "is_test", 0) != 0;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  dy_ext sp = dy_ext_range(x, 2, x->rank);
  ll c = x->shape[1];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, x, 0));
  dy_ext_str(ctx, dy_ext_mul(dy_ext_dim(x->shape[0]), sp), cnt, sizeof cnt);
  ll spk = sp.k;

  if (is_test)
    L("/* inference: the running mean in3 and variance in4 */");
  else
    L("/* training: this batch's mean and biased variance per channel */");
  OPEN("for (int64_t c = 0; c < %lld; c++) {", c);
  if (is_test) {
    L("const float m = in3[c];");
    L("const float inv = 1.0f / dy_sqrtf(in4[c] + %s);", eps_lit);
  } else {
    snprintf(loop_n, sizeof loop_n, "for (int64_t n = 0; n < %s; n++)", nb);
    snprintf(loop_j, sizeof loop_j, "for (int64_t j = 0; j < %lld; j++)", spk);
    snprintf(elem, sizeof elem, "in0[(n * %lld + c) * %lld + j]", c, spk);
    emit_moments(ctx, 2, (const char *const[]){loop_n, loop_j}, elem, cnt, eps_lit);
  }
  OPEN("for (int64_t n = 0; n < %s; n++) {", nb);
  L("const float *x = in0 + (n * %lld + c) * %lld;", c, spk);
  L("float *y = out0 + (n * %lld + c) * %lld;", c, spk);
  L("for (int64_t j = 0; j < %lld; j++)", spk);
  L("  y[j] = (x[j] - m) * inv * in1[c] + in2[c];");
  CLOSE();
  CLOSE();
  return DY_OK;
}

dy_status dy_emit_layer_norm(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  float eps;
  char eps_lit[64], rows[128], cnt[64], loop[128];
  if ((s = float_attr(ctx, "epsilon", &eps, eps_lit, sizeof eps_lit, err)))
    return s;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  int64_t axis = dy_op_attr_int_or(ctx->op, "begin_norm_axis", -1);
  int ax = (int)(axis < 0 ? axis + x->rank : axis);
  ll cols = dy_ext_range(x, ax, x->rank).k;
  dy_ext_str(ctx, dy_ext_range(x, 0, ax), rows, sizeof rows);
  snprintf(cnt, sizeof cnt, "%lld", cols);
  snprintf(loop, sizeof loop, "for (int64_t j = 0; j < %lld; j++)", cols);

  (void)loop;
  *ctx->uses |= DY_USES_SIMD;
  L("/* normalise each row of %lld over dims %d.. in one sweep for the moments", cols, ax);
  L(" * (sums of x - x[0] and of its square, in vector lanes: shifting by a");
  L(" * sample keeps the variance exact when the mean is large) and one for y */");
  OPEN("for (int64_t r = 0; r < %s; r++) {", rows);
  L("const float *x = in0 + r * %lld;", cols);
  L("float *y = out0 + r * %lld;", cols);
  L("const float x0 = x[0];");
  L("dy_vf s1 = dy_vset(0.0f), s2 = s1;");
  L("int64_t j = 0;");
  OPEN("for (; j + DY_VW <= %lld; j += DY_VW) {", cols);
  L("const dy_vf d = dy_vsub(dy_vload(x + j), dy_vset(x0));");
  L("s1 = dy_vadd(s1, d);");
  L("s2 = dy_vfma(d, d, s2);");
  CLOSE();
  L("float t1 = dy_vsum(s1), t2 = dy_vsum(s2);");
  OPEN("for (; j < %lld; j++) {", cols);
  L("const float d = x[j] - x0;");
  L("t1 += d;");
  L("t2 += d * d;");
  CLOSE();
  L("const float m = x0 + t1 / %s.0f;", cnt);
  L("const float var = (t2 - t1 * t1 / %s.0f) / %s.0f;", cnt, cnt);
  L("const float inv = 1.0f / dy_sqrtf((var > 0.0f ? var : 0.0f) + %s);", eps_lit);
  L("const dy_vf vm = dy_vset(m), vi = dy_vset(inv);");
  L("for (j = 0; j + DY_VW <= %lld; j += DY_VW)", cols);
  L("  dy_vstore(y + j, dy_vfma(dy_vmul(dy_vsub(dy_vload(x + j), vm), vi), dy_vload(in1 + j),");
  L("                           dy_vload(in2 + j)));");
  L("for (; j < %lld; j++)", cols);
  L("  y[j] = (x[j] - m) * inv * in1[j] + in2[j];");
  CLOSE();
  return DY_OK;
}

dy_status dy_emit_group_norm(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  float eps;
  char eps_lit[64], groups_all[128], cnt[64], loop[128];
  if ((s = float_attr(ctx, "epsilon", &eps, eps_lit, sizeof eps_lit, err)))
    return s;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  ll groups = dy_op_attr_int_or(ctx->op, "groups", 1);
  ll cg = x->shape[1] / groups, sp = dy_ext_range(x, 2, x->rank).k, len = cg * sp;
  dy_ext_str(ctx, dy_ext_mul(dy_ext_dim(x->shape[0]), dy_ext_dim(groups)), groups_all,
             sizeof groups_all);
  snprintf(cnt, sizeof cnt, "%lld", len);
  snprintf(loop, sizeof loop, "for (int64_t j = 0; j < %lld; j++)", len);

  L("/* each (image, group) of %lld channels is %lld contiguous values */", cg, len);
  OPEN("for (int64_t ng = 0; ng < %s; ng++) {", groups_all);
  L("const float *x = in0 + ng * %lld;", len);
  L("float *y = out0 + ng * %lld;", len);
  L("const int64_t c0 = (ng %% %lld) * %lld;", groups, cg);
  emit_moments(ctx, 1, (const char *const[]){loop}, "x[j]", cnt, eps_lit);
  L("for (int64_t c = 0; c < %lld; c++)", cg);
  L("  for (int64_t j = 0; j < %lld; j++)", sp);
  L("    y[c * %lld + j] = (x[c * %lld + j] - m) * inv * in1[c0 + c] + in2[c0 + c];", sp,
    sp);
  CLOSE();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* dropout                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_emit_dropout(dy_cg_ctx *ctx, dy_error *err) {
  double pd;
  dy_op_attr_float(ctx->op, "p", &pd, NULL);
  float p = (float)pd;
  bool is_test = dy_op_attr_int_or(ctx->op, "is_test", 0) != 0;
  uint64_t seed = (uint64_t)dy_op_attr_int_or(ctx->op, "seed", 0);
  const dy_type *x = dy_cg_in_type(ctx, 0);
  char size[128];
  dy_ext_str(ctx, dy_ext_range(x, 0, x->rank), size, sizeof size);
  if (is_test || p == 0.0f) {
    L("/* dropout %s: the identity */", is_test ? "at inference" : "with p = 0");
    L("for (int64_t i = 0; i < %s; i++)", size);
    L("  out0[i] = in0[i];");
    return DY_OK;
  }
  if (p >= 1.0f) {
    L("/* dropout with p = 1: everything is dropped */");
    L("for (int64_t i = 0; i < %s; i++)", size);
    L("  out0[i] = 0.0f;");
    return DY_OK;
  }
  /* the same threshold and scale as the kernel, as literals */
  unsigned long long threshold = (unsigned long long)ceil((double)p * 16777216.0);
  char scale[64];
  if (!dy_float_literal(1.0f / (1.0f - p), scale, sizeof scale))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "bad p");
  L("/* dropout (upscale_in_train), p = %.9g: element i is kept, times 1/(1-p),", pd);
  L(" * iff the top 24 bits of splitmix64's mix of seed ^ (i * golden) are");
  L(" * >= p * 2^24 (runtime/kernels_nn.c documents the hash) */");
  OPEN("for (int64_t i = 0; i < %s; i++) {", size);
  L("uint64_t z = (0x%016llxull ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull)) +",
    (unsigned long long)seed);
  L("             0x9E3779B97F4A7C15ull;");
  L("z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;");
  L("z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;");
  L("z ^= z >> 31;");
  L("out0[i] = (z >> 40) >= %lluu ? in0[i] * %s : 0.0f;", threshold, scale);
  CLOSE();
  return DY_OK;
}
