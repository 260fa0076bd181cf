/* emit_qconv.c - floor 1: the int8 convolution's pieces (qconv2d,
 * conv_integer: codegen/ops/emit_quant.c): the range of outputs whose taps
 * are all inside the input, the loops' index type, the batch loop, the
 * gather of one output pixel's patch, and the 16-pixel panel form
 * (DY_Q_PANEL16, ir/dy_qfixed.h): qconv2d as a small GEMM on AVX-512 VNNI.
 *
 * The panel form, per sample and group: 16 output pixels' patches are
 * gathered (the dot form's gather, the tail of each patch up to a multiple
 * of 4 taps zeroed), rewritten once as a panel of [taps / 4][16 pixels][4]
 * u8 (dy_q_panel16), then for each block of 8 output channels one
 * dy_q_panel16_dot (8 x 16 int32 sums in registers, a vpdpbusd per 4 taps,
 * pixel and channel) and one dy_q_requant16_r per channel: the bias, the
 * zero point's correction ((x_zp + 128 for s8 activations, the panel's
 * flip) * sum(w row), a table) and TFLite's requantization, 16 pixels at a
 * time in vector registers, stored as 16 contiguous bytes of the NCHW
 * output (masked at the last panel). The sums are the dot form's, so the
 * outputs are bit for bit those of every other path. */
#include <stdio.h>

#include "cg_kernels.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)

/* The outputs whose every tap is inside the input: [lo, hi) per dim
 * (0 = rows, 1 = columns); false when there are none. */
bool dy_qconv_interior(const dy_conv_geom *g, long long lo[2], long long hi[2]) {
  for (int d = 0; d < 2; d++) {
    long long st = d ? g->sw : g->sh, pad = d ? g->pl : g->pt, in = d ? g->w : g->h;
    long long span = (d ? g->kw - 1 : g->kh - 1) * (d ? g->dw : g->dh), out = d ? g->ow : g->oh;
    long long num = in - 1 + pad - span;
    lo[d] = (pad + st - 1) / st;
    hi[d] = num >= 0 ? num / st + 1 : 0;
    hi[d] = hi[d] > out ? out : hi[d];
  }
  return hi[0] > lo[0] && hi[1] > lo[1];
}

/* The index type of the loops inside one sample: int_fast32_t (32 bits
 * on 32-bit targets, where 64-bit index arithmetic costs two or three
 * instructions an operation) when one sample's x and y fit in it, else
 * int64_t. The batch index stays int64_t: xb / yb below point at the
 * sample. */
const char *dy_qconv_index_type(const dy_conv_geom *g) {
  long long lim = 2147483647LL;
  return (long long)g->c * g->h * g->w < lim && (long long)g->o * g->oh * g->ow < lim
             ? "int_fast32_t"
             : "int64_t";
}

/* Opens the batch loop (closed by END): xb = sample n of x. */
void dy_qconv_open_sample(dy_cg_ctx *ctx, const dy_conv_geom *g) {
  const dy_type *x = dy_cg_in_type(ctx, 0);
  FOR("for (int64_t n = 0; n < %s; n++) {", dy_cg_dim(ctx, x, 0));
  L("const %s *xb = %s + n * %lld; /* sample n */", dy_ctype(x->dtype), IN(0),
    (long long)g->c * g->h * g->w);
}

/* The gather of conv_dot: output pixel (oy, ox)'s input taps, (ci, ky,
 * kx), into dst[0, k) (padding = xz; no bounds checks when every tap is
 * inside). */
enum { GATHER_UNROLL = 16 }; /* taps of a channel the interior gather writes out */

void dy_qconv_gather(dy_cg_ctx *ctx, const dy_conv_geom *g, const char *dst) {
  long long cg = g->c / g->groups, taps = g->kh * g->kw;
  const char *T = dy_ctype(dy_cg_in_type(ctx, 0)->dtype), *I = dy_qconv_index_type(g);
  long long lo[2], hi[2];
  bool interior = dy_qconv_interior(g, lo, hi);
  bool all_inside = interior && lo[0] == 0 && lo[1] == 0 && hi[0] == g->oh && hi[1] == g->ow;
  L("%s t = 0;", I);
  if (interior) {
    if (!all_inside)
      L("if (oy >= %lld && oy < %lld && ox >= %lld && ox < %lld) { /* no tap outside */", lo[0],
        hi[0], lo[1], hi[1]);
    else
      L("{ /* every tap inside the input */");
    L("  const %s *xr = xb + (gi * %lld * %lld + oy * %lld - %lld) * %lld + ox * %lld - %lld;", T,
      cg, (long long)g->h, (long long)g->sh, (long long)g->pt, (long long)g->w, (long long)g->sw,
      (long long)g->pl);
    L("  for (%s ci = 0; ci < %lld; ci++, xr += %lld)%s", I, cg, (long long)g->h * g->w,
      taps <= GATHER_UNROLL ? " {" : "");
    ctx->indent += 2;
    if (taps <= GATHER_UNROLL) { /* a channel's taps written out: loads at constant offsets */
      for (long long tp = 0; tp < taps; tp++)
        L("%s[t + %lld] = xr[%lld];", dst, tp, tp / g->kw * g->dh * g->w + tp % g->kw * g->dw);
      L("t += %lld;", taps);
      ctx->indent--;
      L("}");
      ctx->indent--;
    } else {
      FOR("for (%s ky = 0; ky < %lld; ky++)", I, (long long)g->kh);
      L("for (%s kx = 0; kx < %lld; kx++, t++)", I, (long long)g->kw);
      L("  %s[t] = xr[ky * %lld + kx * %lld];", dst, (long long)g->dh * g->w, (long long)g->dw);
      END();
      ctx->indent -= 2;
    }
    if (all_inside)
      L("}");
    else
      L("} else");
  }
  if (!all_inside) {
    FOR("for (%s ci = 0; ci < %lld; ci++)", I, cg);
    FOR("for (%s ky = 0; ky < %lld; ky++) {", I, (long long)g->kh);
    L("const %s iy = oy * %lld - %lld + ky * %lld;", I, (long long)g->sh, (long long)g->pt,
      (long long)g->dh);
    L("for (%s kx = 0; kx < %lld; kx++, t++) {", I, (long long)g->kw);
    L("  const %s ix = ox * %lld - %lld + kx * %lld;", I, (long long)g->sw, (long long)g->pl,
      (long long)g->dw);
    L("  %s[t] = iy < 0 || iy >= %lld || ix < 0 || ix >= %lld", dst, (long long)g->h,
      (long long)g->w);
    L("                 ? (%s)xz", T);
    L("                 : xb[((gi * %lld + ci) * %lld + iy) * %lld + ix];", cg, (long long)g->h,
      (long long)g->w);
    L("}");
    END();
    END();
  }
}

/* The panel form's kernel text (see the file's header); a->x_s8: the
 * activations are i8 (flipped in the panel). xz, wsum, mult, rshift, lo,
 * hi and y_zp are the names conv_dot and put_requant declared. */
void dy_qconv_panel16(dy_cg_ctx *ctx, const dy_conv_geom *g, const dy_qconv_panel_args *a) {
  long long og = g->o / g->groups, k = g->c / g->groups * g->kh * g->kw, k4 = (k + 3) / 4 * 4;
  long long np = (long long)g->oh * g->ow;
  const char *T = a->x_s8 ? "int8_t" : "uint8_t", *I = dy_qconv_index_type(g);
  /* a 1 x 1 filter of stride 1 without padding reads its panel straight
   * from the input's channel rows */
  bool direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 &&
                g->pl == 0 && g->oh == g->h && g->ow == g->w;
  if (!direct)
    L("%s patch16[%lld]; /* 16 output pixels' taps, %lld each */", T, 16 * k4, k4);
  L("uint8_t panel[%lld]; /* the same as [%lld / 4][16 pixels][4] u8 */", 16 * k4,
    k4);
  L("int32_t acc16[128]; /* 8 channels x 16 pixels */");
  dy_qconv_open_sample(ctx, g);
  FOR("for (%s gi = 0; gi < %lld; gi++) {", I, (long long)g->groups);
  FOR("for (%s p0 = 0; p0 < %lld; p0 += 16) {", I, np);
  L("const int nv = %lld - p0 < 16 ? (int)(%lld - p0) : 16; /* pixels of this panel */", np, np);
  if (direct) {
    L("dy_q_panel16_1x1(xb + gi * %lld, %lld, p0, nv, %lld, %lld, %d, panel);",
      (long long)(g->c / g->groups) * g->h * g->w, np, k, k4, a->x_s8 ? 1 : 0);
  } else {
    FOR("for (%s j = 0; j < 16; j++) {", I);
    L("const %s q = p0 + j < %lld ? p0 + j : %lld, oy = q / %lld, ox = q %% %lld;", I, np, np - 1,
      (long long)g->ow, (long long)g->ow);
    L("%s *const pj = patch16 + j * %lld;", T, k4);
    dy_qconv_gather(ctx, g, "pj");
    if (k4 > k)
      L("for (; t < %lld; t++) pj[t] = 0;", k4);
    END();
    L("dy_q_panel16(patch16, %lld, %d, panel);", k4, a->x_s8 ? 1 : 0);
  }
  FOR("for (%s o0 = gi * %lld; o0 < (gi + 1) * %lld; o0 += 8) {", I, og, og);
  if (og % 8 == 0) {
    L("const int nc = 8;");
    L("dy_q_panel16_dot(panel, %s + o0 * %lld, %lld, 8, acc16);", a->w, k, k);
  } else {
    L("const int nc = (gi + 1) * %lld - o0 < 8 ? (int)((gi + 1) * %lld - o0) : 8;", og, og);
    L("if (nc == 8)");
    L("  dy_q_panel16_dot(panel, %s + o0 * %lld, %lld, 8, acc16);", a->w, k, k);
    L("else");
    L("  dy_q_panel16_dot(panel, %s + o0 * %lld, %lld, nc, acc16);", a->w, k, k);
  }
  FOR("for (int c = 0; c < nc; c++) {");
  L("const %s o = o0 + c;", I);
  const char *ch = a->per_channel ? "o" : "0";
  L("dy_q_requant16_r(acc16 + c * 16, %s[o] - (xz%s) * wsum[o], mult[%s], rshift[%s], lo - y_zp,",
    a->bias, a->x_s8 ? " + 128" : "", ch, ch);
  L("                 hi - y_zp, y_zp, %s + n * %lld + o * %lld + p0, nv, %d);", a->y,
    (long long)g->o * np, np, a->y_u8 ? 1 : 0);
  END();
  END();
  END();
  END();
  END();
  *ctx->uses |= DY_USES_QFIXED;
}

/* The depthwise form beside the panels (one input and one output channel
 * a group, constant i8 weights with zero zero points, right shifts only),
 * exact in f32: per channel the input is rewritten once as sw planes of
 * floats (x - x_zp; 0 as padding), phase p holding the padded columns
 * p, p + sw, ..., so that every tap of 16 neighbouring outputs is 16
 * contiguous floats; each output is the sum of its taps' products in f32,
 * which is exact (|w| <= 128, |x - x_zp| <= 255, at most DW16_MAX_TAPS
 * taps: every partial sum is an integer below 2^24), 16 outputs of a row
 * at a time (dy_q_dw16_sum: a table of the taps' offsets, two FMA chains
 * on AVX-512), then requantized 16 at a time (dy_q_requant16_r). A plane
 * too large for DW16_MAX_FLOATS is made a band of output rows at a time. */
enum { DW16_MAX_FLOATS = 8192, DW16_MAX_TAPS = 25 };

/* The band of output rows one set of planes holds (0: not one row fits),
 * the planes' rows hp and their width wq (a multiple of 16 plus the
 * slack the last vector's taps read). */
static long long dw16_band(const dy_conv_geom *g, long long *hp, long long *wq) {
  long long taps_h = (long long)(g->kh - 1) * g->dh + 1;
  *wq = (g->ow + 15) / 16 * 16 + (long long)(g->kw - 1) * g->dw / g->sw + 1;
  long long rows = DW16_MAX_FLOATS / (*wq * g->sw);
  long long band = rows < taps_h ? 0 : (rows - taps_h) / g->sh + 1;
  band = band > g->oh ? g->oh : band;
  *hp = (band - 1) * g->sh + taps_h;
  return band;
}

bool dy_qconv_dw16_fits(const dy_conv_geom *g) {
  long long hp, wq;
  return g->c == g->groups && g->o == g->groups && g->kh * g->kw <= DW16_MAX_TAPS &&
         dw16_band(g, &hp, &wq) > 0;
}

void dy_qconv_dw16(dy_cg_ctx *ctx, const dy_conv_geom *g, const dy_qconv_panel_args *a) {
  long long hp, wq, band = dw16_band(g, &hp, &wq), taps = (long long)g->kh * g->kw;
  long long sw = g->sw, np = (long long)g->oh * g->ow;
  const char *T = a->x_s8 ? "int8_t" : "uint8_t", *I = dy_qconv_index_type(g);
  const char *ch = a->per_channel ? "o" : "0";
  L("float plane[%lld]; /* [%lld phases][%lld rows][%lld]: x - xz, padded with 0 */",
    sw * hp * wq, sw, hp, wq);
  L("float wf[%lld]; /* channel o's taps */", taps);
  L("/* each tap's first float for output column 0 of a row: phase, row, column */");
  L("static const int32_t toff[%lld] = {", taps);
  for (long long ky = 0; ky < g->kh; ky++) {
    char line[256];
    size_t n = 0;
    for (long long kx = 0; kx < g->kw; kx++) {
      long long col = kx * g->dw;
      n += (size_t)snprintf(line + n, sizeof line - n, "%s%lld", kx ? ", " : "",
                            col % sw * hp * wq + ky * g->dh * wq + col / sw);
    }
    L("    %s%s", line, ky + 1 < g->kh ? "," : "");
  }
  L("};");
  L("int32_t acc16[16];");
  dy_qconv_open_sample(ctx, g);
  FOR("for (%s o = 0; o < %lld; o++) {", I, (long long)g->o);
  L("const %s *xc = xb + o * %lld; /* channel o */", T, (long long)g->h * g->w);
  L("for (int t = 0; t < %lld; t++)", taps);
  L("  wf[t] = (float)%s[o * %lld + t];", a->w, taps);
  L("/* bands of %lld output rows */", band);
  FOR("for (%s oy0 = 0; oy0 < %lld; oy0 += %lld) {", I, (long long)g->oh, band);
  L("const %s ns = %lld - oy0 < %lld ? %lld - oy0 : %lld;", I, (long long)g->oh, band,
    (long long)g->oh, band);
  FOR("for (%s r = 0; r < (ns - 1) * %lld + %lld; r++) {", I, (long long)g->sh,
      hp - (band - 1) * g->sh);
  L("const %s iy = oy0 * %lld - %lld + r;", I, (long long)g->sh, (long long)g->pt);
  L("float *const pr0 = plane + r * %lld;", wq);
  L("if (iy < 0 || iy >= %lld) { /* a row of padding */", (long long)g->h);
  L("  for (int_fast32_t ph = 0; ph < %lld; ph++)", sw);
  L("    for (int_fast32_t c = 0; c < %lld; c++)", wq);
  L("      pr0[ph * %lld + c] = 0.0f;", hp * wq);
  L("  continue;");
  L("}");
  L("const %s *const xr = xc + iy * %lld;", T, (long long)g->w);
  /* phase ph: columns c whose input column c * sw + ph - pl is inside
   * [0, w) are [c_lo, c_hi), zeros around them */
  for (long long ph = 0; ph < sw; ph++) {
    long long c_lo = g->pl - ph > 0 ? (g->pl - ph + sw - 1) / sw : 0;
    long long last = (long long)g->w - 1 + g->pl - ph;
    long long c_hi = last < 0 ? 0 : last / sw + 1;
    c_hi = c_hi > wq ? wq : c_hi;
    c_lo = c_lo > c_hi ? c_hi : c_lo;
    L("{ /* phase %lld */", ph);
    L("  float *const pr = pr0 + %lld;", ph * hp * wq);
    if (c_lo > 0)
      L("  for (int_fast32_t c = 0; c < %lld; c++) pr[c] = 0.0f;", c_lo);
    if (c_hi > c_lo)
      L("  for (int_fast32_t c = %lld; c < %lld; c++) pr[c] = (float)((int32_t)xr[c * %lld + %lld] - xz);",
        c_lo, c_hi, sw, ph - g->pl);
    if (wq > c_hi)
      L("  for (int_fast32_t c = %lld; c < %lld; c++) pr[c] = 0.0f;", c_hi, wq);
    L("}");
  }
  END();
  FOR("for (%s oy = oy0; oy < oy0 + ns; oy++)", I);
  FOR("for (%s ox0 = 0; ox0 < %lld; ox0 += 16) {", I, (long long)g->ow);
  L("dy_q_dw16_sum(plane + (oy - oy0) * %lld + ox0, toff, wf, %lld, acc16);",
    (long long)g->sh * wq, taps);
  L("dy_q_requant16_r(acc16, %s[o], mult[%s], rshift[%s], lo - y_zp, hi - y_zp, y_zp,", a->bias,
    ch, ch);
  L("                 %s + n * %lld + o * %lld + oy * %lld + ox0,", a->y, (long long)g->o * np,
    np, (long long)g->ow);
  L("                 %lld - ox0 < 16 ? (int)(%lld - ox0) : 16, %d);", (long long)g->ow,
    (long long)g->ow, a->y_u8 ? 1 : 0);
  END();
  END();
  END();
  END();
  END();
  *ctx->uses |= DY_USES_QFIXED;
}
