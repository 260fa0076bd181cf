/* emit_nn.c - floor 2: emitters of the nn family (ir/ops_nn.def): conv2d,
 * conv2d_transpose, pool2d, batch_norm, layer_norm, group_norm, dropout,
 * and the gradient ops conv2d_grad_filter, pool2d_grad.
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
 *                 with bias and activation applied (and a residual, which
 *                 the GEMM accumulates onto). Depthwise: a direct kernel,
 *                 DY_VW outputs of a row summed over all taps in one
 *                 register (--plain-kernels: one tap at a time along the
 *                 row). A weight computed at run time: plain loops.
 *   pool2d        windows inside the input at stride 1, or 2 wide at stride
 *                 2: DY_VW outputs at a time (dy_vdeint splits even and odd
 *                 columns); whole-plane averages: a vector sum; max pooling
 *                 with padding at column stride 1 or 2: the window's rows
 *                 clipped per output row, DY_VW outputs at a time where the
 *                 columns are inside, window loops near the edges;
 *                 otherwise (and with --plain-kernels) window loops with
 *                 bounds checks
 *   layer_norm    per row one vector sweep for the moments (sums of x - x[0]
 *                 and its square) and one for y
 *   the rest      plain loops (transposed convolution as a scatter-add;
 *                 conv2d_grad_filter a dot product per filter tap;
 *                 pool2d_grad the forward's windows routing dy back)
 *
 * Bounds checks on an input index are emitted only on the sides where the
 * index can actually leave the input, so no load falls outside a buffer.
 *
 * The driver (program/kernel.c) has checked the op's types against inference before
 * an emitter runs, so attributes are known to be well formed (the rules
 * live in ir/infer/infer_nn.c). batch_norm, group_norm and dropout emit
 * exactly the arithmetic of runtime/kernels/kernels_nn.c — statistics in double,
 * the same operation order, dropout's counter hash with the threshold and
 * scale as literals — so the generated C agrees with eager calls (bit for
 * bit for dropout's mask); the vector kernels agree within rounding.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
/* A line that opens a block "{", and the line that closes it. */
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

typedef long long ll;

/* A float attribute's value d as a literal of its float value. */
static dy_status float_attr(dy_cg_ctx *ctx, double d, float *v,
                            char *lit, size_t n, dy_error *err) {
  *v = (float)d;
  if (!dy_float_literal(*v, lit, n))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT,
                              "attribute is not finite");
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* conv2d, conv2d_transpose                                            */
/* ------------------------------------------------------------------ */

dy_status dy_emit_conv2d(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_conv2d_epilogue(ctx, err, false, false, "", 0);
}

dy_status dy_emit_conv2d_transpose(dy_cg_ctx *ctx, dy_error *err) {
  dy_cg_conv_geom g = dy_cg_conv_geom_of(ctx->p, ctx->op);
  ll cg = g.c / g.groups, og = g.o / g.groups;
  char nb[64], size[128], t[128], oy[160], ox[160];
  const dy_type *y = dy_cg_out_type(ctx, 0);
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, y, 0));
  dy_ext_str(ctx, dy_ext_range(y, 0, 4), size, sizeof size);
  /* input pixel (iy, ix) through tap (i, j) lands on (oy, ox) */
  bool lo_h = g.pt > 0, hi_h = (g.h - 1) * g.sh - g.pt + (g.kh - 1) * g.dh >= g.oh;
  bool lo_w = g.pl > 0, hi_w = (g.w - 1) * g.sw - g.pl + (g.kw - 1) * g.dw >= g.ow;
  dy_cg_sum2(oy, sizeof oy, dy_cg_affine(t, sizeof t, "iy", g.sh, -g.pt), "i", g.dh);
  dy_cg_sum2(ox, sizeof ox, dy_cg_affine(t, sizeof t, "ix", g.sw, -g.pl), "j", g.dw);

  FOR("for (int64_t k = 0; k < %s; k++)", size);
  L("%s[k] = 0.0f;", OUT(0));
  END();
  if (g.groups == 1)
    L("/* y[n][oc][%s][%s] += x[n][ic][iy][ix] * w[ic][oc][i][j] */", oy, ox);
  else
    L("/* y[n][(ic / %lld) * %lld + oc][%s][%s] += x[n][ic][iy][ix] * w[ic][oc][i][j] */",
      cg, og, oy, ox);
  FOR("for (int64_t n = 0; n < %s; n++) {", nb);
  FOR("for (int64_t ic = 0; ic < %lld; ic++) {", g.c);
  L("const float *x = %s + (n * %lld + ic) * %lld;", IN(0), g.c, g.h * g.w);
  L("const float *wc = %s + ic * %lld;", IN(1), og * g.kh * g.kw);
  if (g.groups == 1)
    L("float *y = %s + n * %lld;", OUT(0), g.o * g.oh * g.ow);
  else
    L("float *y = %s + (n * %lld + (ic / %lld) * %lld) * %lld;", OUT(0), g.o, cg, og,
      g.oh * g.ow);
  FOR("for (int64_t iy = 0; iy < %lld; iy++) {", g.h);
  FOR("for (int64_t ix = 0; ix < %lld; ix++) {", g.w);
  L("const float v = x[iy * %lld + ix];", g.w);
  FOR("for (int64_t oc = 0; oc < %lld; oc++) {", og);
  FOR("for (int64_t i = 0; i < %lld; i++) {", g.kh);
  L("const int64_t oy = %s;", oy);
  dy_cg_bounds(ctx, "oy", lo_h, hi_h, g.oh);
  FOR("for (int64_t j = 0; j < %lld; j++) {", g.kw);
  L("const int64_t ox = %s;", ox);
  dy_cg_bounds(ctx, "ox", lo_w, hi_w, g.ow);
  L("y[(oc * %lld + oy) * %lld + ox] += v * wc[(oc * %lld + i) * %lld + j];", g.oh, g.ow,
    g.kh, g.kw);
  for (int k = 0; k < 7; k++)
    END();
  return DY_OK;
}

/* conv2d_grad_filter(x, dy): per filter tap, a dot product of dy's plane
 * with the input it saw, summed over the (run-time) batch. */
dy_status dy_emit_conv2d_grad_filter(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, 0), *dy = dy_cg_in_type(ctx, 1);
  dy_conv2d_grad_filter_attrs a = dy_conv2d_grad_filter_attrs_get(ctx->op);
  dy_conv_geom g = dy_conv2d_grad_filter_geom(x, dy, &a);
  ll cg = g.c / g.groups, og = g.o / g.groups, k = cg * g.kh * g.kw;
  char nb[64], t[128], iy[160], ix[160];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, x, 0));
  bool lo_h = g.pt > 0, hi_h = (g.oh - 1) * g.sh - g.pt + (g.kh - 1) * g.dh >= g.h;
  bool lo_w = g.pl > 0, hi_w = (g.ow - 1) * g.sw - g.pl + (g.kw - 1) * g.dw >= g.w;
  dy_cg_sum2(iy, sizeof iy, dy_cg_affine(t, sizeof t, "oy", g.sh, -g.pt), "i", g.dh);
  dy_cg_sum2(ix, sizeof ix, dy_cg_affine(t, sizeof t, "ox", g.sw, -g.pl), "j", g.dw);

  FOR("for (int64_t k = 0; k < %lld; k++)", (ll)g.o * k);
  L("%s[k] = 0.0f;", OUT(0));
  END();
  L("/* dw[oc][c][i][j] += sum over oy < %lld, ox < %lld of dy[n][oc][oy][ox] *", (ll)g.oh,
    (ll)g.ow);
  if (g.groups == 1)
    L(" *   x[n][c][%s][%s] */", iy, ix);
  else
    L(" *   x[n][(oc / %lld) * %lld + c][%s][%s] */", og, cg, iy, ix);
  FOR("for (int64_t n = 0; n < %s; n++) {", nb);
  FOR("for (int64_t oc = 0; oc < %lld; oc++) {", (ll)g.o);
  L("const float *dy = %s + (n * %lld + oc) * %lld;", IN(1), (ll)g.o, (ll)(g.oh * g.ow));
  if (g.groups == 1)
    L("const float *x = %s + n * %lld;", IN(0), (ll)(g.c * g.h * g.w));
  else
    L("const float *x = %s + (n * %lld + (oc / %lld) * %lld) * %lld;", IN(0), (ll)g.c, og, cg,
      (ll)(g.h * g.w));
  L("float *dw = %s + oc * %lld;", OUT(0), k);
  FOR("for (int64_t c = 0; c < %lld; c++) {", cg);
  FOR("for (int64_t i = 0; i < %lld; i++) {", (ll)g.kh);
  FOR("for (int64_t j = 0; j < %lld; j++) {", (ll)g.kw);
  L("float acc = 0.0f;");
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", (ll)g.oh);
  L("const int64_t iy = %s;", iy);
  dy_cg_bounds(ctx, "iy", lo_h, hi_h, g.h);
  FOR("for (int64_t ox = 0; ox < %lld; ox++) {", (ll)g.ow);
  L("const int64_t ix = %s;", ix);
  dy_cg_bounds(ctx, "ix", lo_w, hi_w, g.w);
  L("acc += dy[oy * %lld + ox] * x[(c * %lld + iy) * %lld + ix];", (ll)g.ow, (ll)g.h,
    (ll)g.w);
  END();
  END();
  L("dw[(c * %lld + i) * %lld + j] += acc;", (ll)g.kh, (ll)g.kw);
  for (int d = 0; d < 5; d++)
    END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pool2d                                                              */
/* ------------------------------------------------------------------ */

typedef enum { POOL_WINDOWS, POOL_ADAPTIVE, POOL_GLOBAL } pool_mode;

/* Emit the window [v0, v1) of output index o (named ov) along one axis of
 * input size n and output size on, and, when size is set, its extent
 * clipped to the padded input in vs (the divisor of avg with padding). The
 * rules are pool_window's in runtime/kernels/kernels_nn.c. */
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
  L("%sint64_t %s0 = %s, %s1 = %s0 + %lld;", q, v, dy_cg_affine(t, sizeof t, ov, st, -lo), v,
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

/* acc = the max of x over the window [h0, h1) x [w0, w1) of rows w long,
 * in runtime/kernels/kernels_nn.c's order (a NaN first in the window stays) */
static void emit_max_window(dy_cg_ctx *ctx, ll w) {
  L("float acc = x[h0 * %lld + w0];", w);
  L("for (int64_t iy = h0; iy < h1; iy++)");
  OPEN("  for (int64_t ix = w0; ix < w1; ix++) {");
  L("  const float v = x[iy * %lld + ix];", w);
  L("  acc = v > acc ? v : acc;");
  ctx->indent--;
  L("  }");
}

/* Max pooling with any padding at column stride 1 or 2: per output row,
 * the rows of the window clipped to the input; DY_VW outputs at a time
 * where every column tap lies inside the row (stride 2 splits even and
 * odd columns with dy_vdeint; its odd lanes read one column further,
 * which stays inside too), the columns near the edges one by one. */
static void emit_max_pool_rows(dy_cg_ctx *ctx, const char *planes, ll h, ll w, ll oh, ll ow,
                               const ll *k, const ll *st, const ll *lo, const ll *hi) {
  ll cl = 0, cv = ow; /* the vector columns: [cl, cv) */
  for (ll kx = 0; kx < k[1]; kx++) {
    ll off = kx - lo[1], extra = st[1] == 2 ? 1 : 0;
    while (cl < ow && cl * st[1] + off < 0)
      cl++;
    while (cv > cl && (cv - 1) * st[1] + off + extra >= w)
      cv--;
  }
  *ctx->uses |= DY_USES_SIMD;
  L("/* max pooling %lldx%lld, stride %lldx%lld, padding %lld/%lld: columns %lld..%lld DY_VW at "
    "a time, the rest one by one */", k[0], k[1], st[0], st[1], lo[0], lo[1], cl, cv - 1);
  FOR("for (int64_t p = 0; p < %s; p++) {", planes);
  L("const float *x = %s + p * %lld;", IN(0), h * w);
  L("float *y = %s + p * %lld;", OUT(0), oh * ow);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", oh);
  emit_window(ctx, POOL_WINDOWS, "h", "oy", h, oh, k[0], st[0], lo[0], hi[0], false);
  L("int64_t ox = 0;");
  OPEN("for (; ox < %lld; ox++) { /* left edge */", cl < cv ? cl : ow);
  emit_window(ctx, POOL_WINDOWS, "w", "ox", w, ow, k[1], st[1], lo[1], hi[1], false);
  emit_max_window(ctx, w);
  L("y[oy * %lld + ox] = acc;", ow);
  CLOSE();
  if (cl < cv) {
    OPEN("for (; ox + DY_VW <= %lld; ox += DY_VW) {", cv);
    L("dy_vf acc = dy_vset(0.0f), v;%s", st[1] == 2 ? " dy_vf od;" : "");
    OPEN("for (int64_t iy = h0; iy < h1; iy++) {");
    L("const float *r = x + iy * %lld;", w);
    for (ll kx = 0; kx < k[1]; kx++) {
      ll off = kx - lo[1];
      char o[48] = "";
      if (off)
        snprintf(o, sizeof o, " %c %lld", off < 0 ? '-' : '+', off < 0 ? -off : off);
      if (st[1] == 2)
        L("dy_vdeint(dy_vload(r + 2 * ox%s), dy_vload(r + 2 * ox%s + DY_VW), &v, &od);", o, o);
      else
        L("v = dy_vload(r + ox%s);", o);
      if (kx == 0)
        L("acc = iy == h0 ? v : dy_vselect_lt(acc, v, v, acc);");
      else
        L("acc = dy_vselect_lt(acc, v, v, acc);");
    }
    CLOSE();
    L("dy_vstore(y + oy * %lld + ox, acc);", ow);
    CLOSE();
    OPEN("for (; ox < %lld; ox++) { /* the rest */", ow);
    emit_window(ctx, POOL_WINDOWS, "w", "ox", w, ow, k[1], st[1], lo[1], hi[1], false);
    emit_max_window(ctx, w);
    L("y[oy * %lld + ox] = acc;", ow);
    CLOSE();
  }
  END();
  END();
}

/* The geometry of a pool2d op as its emitters read it. */
typedef struct {
  pool_mode mode;
  bool max, padded_div;
  ll k[2], st[2], lo[2], hi[2];
  ll h, w, oh, ow;
  char planes[128];       /* images times channels, as C */
} pool_view;

/* The loops over planes p, rows oy and columns ox (closed by three END),
 * x and y pointing at the plane of T elements, the window [h0, h1) x
 * [w0, w1) of output (oy, ox) in scope. */
static void open_windows(dy_cg_ctx *ctx, const pool_view *v, const char *T) {
  FOR("for (int64_t p = 0; p < %s; p++) {", v->planes);
  L("const %s *x = %s + p * %lld;", T, IN(0), v->h * v->w);
  L("%s *y = %s + p * %lld;", T, OUT(0), v->oh * v->ow);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", v->oh);
  emit_window(ctx, v->mode, "h", "oy", v->h, v->oh, v->k[0], v->st[0], v->lo[0], v->hi[0],
              v->padded_div);
  FOR("for (int64_t ox = 0; ox < %lld; ox++) {", v->ow);
  emit_window(ctx, v->mode, "w", "ox", v->w, v->ow, v->k[1], v->st[1], v->lo[1], v->hi[1],
              v->padded_div);
}

/* i8 / u8: runtime/kernels/kernels_nn.c's integer pooling. */
static void pool_int(dy_cg_ctx *ctx, const pool_view *v, dy_dtype dt) {
  const char *T = dy_ctype(dt);
  L("/* %s pooling of %s values%s */", v->max ? "max" : "avg", dy_dtype_name(dt),
    v->max ? "" : ": an int32 sum divided rounding half away from zero (TFLite)");
  open_windows(ctx, v, T);
  if (v->max)
    L("int32_t acc = x[h0 * %lld + w0];", v->w);
  else
    L("int32_t acc = 0;");
  L("for (int64_t iy = h0; iy < h1; iy++)");
  L("  for (int64_t ix = w0; ix < w1; ix++)");
  if (v->max)
    L("    acc = x[iy * %lld + ix] > acc ? x[iy * %lld + ix] : acc;", v->w, v->w);
  else
    L("    acc += x[iy * %lld + ix];", v->w);
  if (!v->max) {
    if (v->padded_div)
      L("const int32_t n = (int32_t)(hs * ws);");
    else
      L("const int32_t n = (int32_t)((h1 - h0) * (w1 - w0));");
    L("acc = acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;");
  }
  L("y[oy * %lld + ox] = (%s)acc;", v->ow, T);
  END();
  END();
  END();
}

/* Average over whole planes (global, or adaptive to 1 x 1): a vector sum. */
static void pool_avg_planes(dy_cg_ctx *ctx, const pool_view *v) {
  ll hw = v->h * v->w;
  *ctx->uses |= DY_USES_SIMD;
  L("/* avg pooling over each whole plane of %lld: a sum in vector lanes */", hw);
  FOR("for (int64_t p = 0; p < %s; p++) {", v->planes);
  L("const float *x = %s + p * %lld;", IN(0), hw);
  L("dy_vf acc = dy_vset(0.0f);");
  L("int64_t i = 0;");
  L("for (; i + DY_VW <= %lld; i += DY_VW)", hw);
  L("  acc = dy_vadd(acc, dy_vload(x + i));");
  L("float s = dy_vsum(acc);");
  L("for (; i < %lld; i++)", hw);
  L("  s += x[i];");
  L("%s[p] = s / %lld.0f;", OUT(0), hw);
  END();
}

/* Windows inside the input (no padding, no ceil-mode overhang) at stride
 * 1, or 2 wide at stride 2 (the even and odd columns of a row apart):
 * DY_VW outputs of a row at a time, then the rest one by one. */
static bool pool_fast_fits(const pool_view *v) {
  return v->mode == POOL_WINDOWS && v->lo[0] == 0 && v->lo[1] == 0 &&
         (v->oh - 1) * v->st[0] + v->k[0] <= v->h && (v->ow - 1) * v->st[1] + v->k[1] <= v->w &&
         v->k[0] * v->k[1] <= 16 && (v->st[1] == 1 || (v->st[1] == 2 && v->k[1] == 2));
}

static void pool_fast(dy_cg_ctx *ctx, const pool_view *v) {
  const ll *k = v->k, *st = v->st;
  bool max = v->max;
  *ctx->uses |= DY_USES_SIMD;
  L("/* %s pooling %lldx%lld, stride %lldx%lld: DY_VW outputs at a time, then one by one */",
    max ? "max" : "avg", k[0], k[1], st[0], st[1]);
  FOR("for (int64_t p = 0; p < %s; p++) {", v->planes);
  L("const float *x = %s + p * %lld;", IN(0), v->h * v->w);
  L("float *y = %s + p * %lld;", OUT(0), v->oh * v->ow);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", v->oh);
  L("int64_t ox = 0;");
  OPEN("for (; ox + DY_VW <= %lld; ox += DY_VW) {", v->ow);
  L("dy_vf acc, v%s;", st[1] == 2 ? ", e, o" : "");
  bool first = true;
  for (ll ky = 0; ky < k[0]; ky++) {
    char row[160];
    snprintf(row, sizeof row, "x + (oy * %lld + %lld) * %lld", st[0], ky, v->w);
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
    L("dy_vstore(y + oy * %lld + ox, acc);", v->ow);
  else
    L("dy_vstore(y + oy * %lld + ox, dy_vdiv(acc, dy_vset(%lld.0f)));", v->ow, k[0] * k[1]);
  CLOSE();
  OPEN("for (; ox < %lld; ox++) {", v->ow);
  L("const int64_t h0 = oy * %lld, w0 = ox * %lld;", st[0], st[1]);
  if (max)
    L("float acc = x[h0 * %lld + w0];", v->w);
  else
    L("float acc = 0.0f;");
  L("for (int64_t iy = h0; iy < h0 + %lld; iy++)", k[0]);
  L("  for (int64_t ix = w0; ix < w0 + %lld; ix++)", k[1]);
  if (max)
    L("    acc = x[iy * %lld + ix] > acc ? x[iy * %lld + ix] : acc;", v->w, v->w);
  else
    L("    acc += x[iy * %lld + ix];", v->w);
  if (max)
    L("y[oy * %lld + ox] = acc;", v->ow);
  else
    L("y[oy * %lld + ox] = acc / %lld.0f;", v->ow, k[0] * k[1]);
  CLOSE();
  END();
  END();
}

/* Any windows, one output at a time. */
static void pool_windows(dy_cg_ctx *ctx, const pool_view *v) {
  bool max = v->max;
  L("/* %s pooling%s */", max ? "max" : "avg",
    max ? "" : v->padded_div ? ", dividing by the window clipped to the padded input"
                             : ", dividing by the in-bounds elements");
  open_windows(ctx, v, "float");
  if (max) {
    emit_max_window(ctx, v->w);
  } else {
    L("float acc = 0.0f;");
    L("for (int64_t iy = h0; iy < h1; iy++)");
    L("  for (int64_t ix = w0; ix < w1; ix++)");
    L("    acc += x[iy * %lld + ix];", v->w);
    if (v->padded_div)
      L("acc /= (float)(hs * ws);");
    else
      L("acc /= (float)((h1 - h0) * (w1 - w0));");
  }
  L("y[oy * %lld + ox] = acc;", v->ow);
  END();
  END();
  END();
}

dy_status dy_emit_pool2d(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_out_type(ctx, 0);
  dy_pool2d_attrs pa = dy_pool2d_attrs_get(ctx->op);
  dy_pool_geom pg = dy_pool2d_geom(x, &pa);
  pool_view v = {.mode = pg.mode == DY_POOL_GLOBAL     ? POOL_GLOBAL
                         : pg.mode == DY_POOL_ADAPTIVE ? POOL_ADAPTIVE
                                                       : POOL_WINDOWS,
                 .max = pg.max,
                 .k = {pg.k[0], pg.k[1]}, .st = {pg.s[0], pg.s[1]},
                 .lo = {pg.lo[0], pg.lo[1]}, .hi = {pg.hi[0], pg.hi[1]},
                 .h = x->shape[2], .w = x->shape[3], .oh = y->shape[2], .ow = y->shape[3]};
  v.padded_div = !v.max && !pg.exclusive && v.mode == POOL_WINDOWS;
  dy_ext_str(ctx, dy_ext_range(x, 0, 2), v.planes, sizeof v.planes);
  if (x->dtype != DY_F32)
    pool_int(ctx, &v, x->dtype);
  else if (!v.max && (v.mode == POOL_GLOBAL || (v.mode == POOL_ADAPTIVE && v.oh == 1 && v.ow == 1)))
    pool_avg_planes(ctx, &v);
  else if (pool_fast_fits(&v))
    pool_fast(ctx, &v);
  else if (v.max && v.mode == POOL_WINDOWS && !ctx->plain_kernels &&
           (v.st[1] == 1 || v.st[1] == 2) && v.k[1] <= 16) /* ResNet's 3x3/2 after the stem */
    emit_max_pool_rows(ctx, v.planes, v.h, v.w, v.oh, v.ow, v.k, v.st, v.lo, v.hi);
  else
    pool_windows(ctx, &v);
  return DY_OK;
}

/* pool2d_grad(x, y, dy): the forward's windows (emit_window), each
 * output's gradient routed back as runtime/kernels/kernels_nn.c does. */
dy_status dy_emit_pool2d_grad(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_in_type(ctx, 1);
  dy_pool2d_attrs pa = dy_pool2d_attrs_get(ctx->op);
  dy_pool_geom pg = dy_pool2d_geom(x, &pa);
  pool_mode mode = pg.mode == DY_POOL_GLOBAL     ? POOL_GLOBAL
                   : pg.mode == DY_POOL_ADAPTIVE ? POOL_ADAPTIVE
                                                 : POOL_WINDOWS;
  ll h = x->shape[2], w = x->shape[3], oh = y->shape[2], ow = y->shape[3];
  bool padded_div = !pg.max && !pg.exclusive && mode == POOL_WINDOWS;
  char planes[128], size[128];
  dy_ext_str(ctx, dy_ext_range(x, 0, 2), planes, sizeof planes);
  dy_ext_str(ctx, dy_ext_range(x, 0, 4), size, sizeof size);

  FOR("for (int64_t k = 0; k < %s; k++)", size);
  L("%s[k] = 0.0f;", OUT(0));
  END();
  if (pg.max)
    L("/* max pooling's gradient: to the first maximum of each window */");
  else
    L("/* avg pooling's gradient: spread over the window, divided by %s */",
      padded_div ? "its extent clipped to the padded input" : "its in-bounds elements");
  FOR("for (int64_t p = 0; p < %s; p++) {", planes);
  if (pg.max)
    L("const float *x = %s + p * %lld;", IN(0), h * w);
  L("const float *dy = %s + p * %lld;", IN(2), oh * ow);
  L("float *dx = %s + p * %lld;", OUT(0), h * w);
  FOR("for (int64_t oy = 0; oy < %lld; oy++) {", oh);
  emit_window(ctx, mode, "h", "oy", h, oh, pg.k[0], pg.s[0], pg.lo[0], pg.hi[0], padded_div);
  FOR("for (int64_t ox = 0; ox < %lld; ox++) {", ow);
  emit_window(ctx, mode, "w", "ox", w, ow, pg.k[1], pg.s[1], pg.lo[1], pg.hi[1], padded_div);
  if (pg.max) {
    L("int64_t at = h0 * %lld + w0;", w);
    L("for (int64_t iy = h0; iy < h1; iy++)");
    L("  for (int64_t ix = w0; ix < w1; ix++)");
    L("    if (x[iy * %lld + ix] > x[at])", w);
    L("      at = iy * %lld + ix;", w);
    L("dx[at] += dy[oy * %lld + ox];", ow);
  } else {
    if (padded_div)
      L("const float g = dy[oy * %lld + ox] / (float)(hs * ws);", ow);
    else
      L("const float g = dy[oy * %lld + ox] / (float)((h1 - h0) * (w1 - w0));", ow);
    L("for (int64_t iy = h0; iy < h1; iy++)");
    L("  for (int64_t ix = w0; ix < w1; ix++)");
    L("    dx[iy * %lld + ix] += g;", w);
  }
  END();
  END();
  END();
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
    FOR("%s", loops[i]);
  L("sum += %s;", elem);
  dy_cg_close_loops(ctx, n_loops);
  L("const double mu = sum / (double)(%s);", cnt);
  for (int i = 0; i < n_loops; i++)
    FOR("%s%s", loops[i], i == n_loops - 1 ? " {" : "");
  L("const double d = %s - mu;", elem);
  L("sq += d * d;");
  dy_cg_close_loops(ctx, n_loops);
  L("const float m = (float)mu;");
  L("const float inv = 1.0f / dy_sqrtf((float)(sq / (double)(%s)) + %s);", cnt, eps);
}

dy_status dy_emit_batch_norm(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  float eps;
  char eps_lit[64], nb[64], cnt[128], loop_n[160], loop_j[160], elem[200];
  dy_batch_norm_attrs a = dy_batch_norm_attrs_get(ctx->op);
  if ((s = float_attr(ctx, a.epsilon, &eps, eps_lit, sizeof eps_lit, err)))
    return s;
  bool is_test = a.is_test != 0;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  dy_ext sp = dy_ext_range(x, 2, x->rank);
  ll c = x->shape[1];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, x, 0));
  dy_ext_str(ctx, dy_ext_mul(dy_ext_dim(x->shape[0]), sp), cnt, sizeof cnt);
  ll spk = sp.k;

  if (is_test)
    L("/* inference: the running mean %s and variance %s */", IN(3), IN(4));
  else
    L("/* training: this batch's mean and biased variance per channel */");
  FOR("for (int64_t c = 0; c < %lld; c++) {", c);
  if (is_test) {
    L("const float m = %s[c];", IN(3));
    L("const float inv = 1.0f / dy_sqrtf(%s[c] + %s);", IN(4), eps_lit);
  } else {
    snprintf(loop_n, sizeof loop_n, "for (int64_t n = 0; n < %s; n++)", nb);
    snprintf(loop_j, sizeof loop_j, "for (int64_t j = 0; j < %lld; j++)", spk);
    snprintf(elem, sizeof elem, "%s[(n * %lld + c) * %lld + j]", IN(0), c, spk);
    emit_moments(ctx, 2, (const char *const[]){loop_n, loop_j}, elem, cnt, eps_lit);
  }
  FOR("for (int64_t n = 0; n < %s; n++) {", nb);
  L("const float *x = %s + (n * %lld + c) * %lld;", IN(0), c, spk);
  L("float *y = %s + (n * %lld + c) * %lld;", OUT(0), c, spk);
  FOR("for (int64_t j = 0; j < %lld; j++)", spk);
  L("y[j] = (x[j] - m) * inv * %s[c] + %s[c];", IN(1), IN(2));
  END();
  END();
  END();
  return DY_OK;
}

dy_status dy_emit_layer_norm(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  float eps;
  char eps_lit[64], rows[128], cnt[64];
  dy_layer_norm_attrs a = dy_layer_norm_attrs_get(ctx->op);
  if ((s = float_attr(ctx, a.epsilon, &eps, eps_lit, sizeof eps_lit, err)))
    return s;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  int64_t axis = a.begin_norm_axis;
  int ax = (int)(axis < 0 ? axis + x->rank : axis);
  ll cols = dy_ext_range(x, ax, x->rank).k;
  dy_ext_str(ctx, dy_ext_range(x, 0, ax), rows, sizeof rows);
  snprintf(cnt, sizeof cnt, "%lld", cols);

  *ctx->uses |= DY_USES_SIMD;
  L("/* normalise each row of %lld over dims %d.. in one sweep for the moments", cols, ax);
  L(" * (sums of x - x[0] and of its square, in vector lanes: shifting by a");
  L(" * sample keeps the variance exact when the mean is large) and one for y */");
  FOR("for (int64_t r = 0; r < %s; r++) {", rows);
  L("const float *x = %s + r * %lld;", IN(0), cols);
  L("float *y = %s + r * %lld;", OUT(0), cols);
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
  L("  dy_vstore(y + j, dy_vfma(dy_vmul(dy_vsub(dy_vload(x + j), vm), vi), dy_vload(%s + j),",
    IN(1));
  L("                           dy_vload(%s + j)));", IN(2));
  L("for (; j < %lld; j++)", cols);
  L("  y[j] = (x[j] - m) * inv * %s[j] + %s[j];", IN(1), IN(2));
  END();
  return DY_OK;
}

dy_status dy_emit_group_norm(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  float eps;
  char eps_lit[64], groups_all[128], cnt[64], loop[128];
  dy_group_norm_attrs a = dy_group_norm_attrs_get(ctx->op);
  if ((s = float_attr(ctx, a.epsilon, &eps, eps_lit, sizeof eps_lit, err)))
    return s;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  ll groups = a.groups;
  ll cg = x->shape[1] / groups, sp = dy_ext_range(x, 2, x->rank).k, len = cg * sp;
  dy_ext_str(ctx, dy_ext_mul(dy_ext_dim(x->shape[0]), dy_ext_dim(groups)), groups_all,
             sizeof groups_all);
  snprintf(cnt, sizeof cnt, "%lld", len);
  snprintf(loop, sizeof loop, "for (int64_t j = 0; j < %lld; j++)", len);

  L("/* each (image, group) of %lld channels is %lld contiguous values */", cg, len);
  FOR("for (int64_t ng = 0; ng < %s; ng++) {", groups_all);
  L("const float *x = %s + ng * %lld;", IN(0), len);
  L("float *y = %s + ng * %lld;", OUT(0), len);
  L("const int64_t c0 = (ng %% %lld) * %lld;", groups, cg);
  emit_moments(ctx, 1, (const char *const[]){loop}, "x[j]", cnt, eps_lit);
  FOR("for (int64_t c = 0; c < %lld; c++)", cg);
  FOR("for (int64_t j = 0; j < %lld; j++)", sp);
  L("y[c * %lld + j] = (x[c * %lld + j] - m) * inv * %s[c0 + c] + %s[c0 + c];", sp, sp, IN(1),
    IN(2));
  END();
  END();
  END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* dropout                                                             */
/* ------------------------------------------------------------------ */

/* The seed is the op's attribute as a literal or, in a training step
 * (ctx->seed), the kernel's `uint64_t seed` parameter, drawn per step. */
dy_status dy_emit_dropout(dy_cg_ctx *ctx, dy_error *err) {
  dy_dropout_attrs a = dy_dropout_attrs_get(ctx->op);
  double pd = a.p;
  float p = (float)pd;
  bool is_test = a.is_test != 0;
  uint64_t seed = (uint64_t)a.seed;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  char size[128];
  dy_ext_str(ctx, dy_ext_range(x, 0, x->rank), size, sizeof size);
  if (is_test || p == 0.0f) {
    L("/* dropout %s: the identity */", is_test ? "at inference" : "with p = 0");
    FOR("for (int64_t i = 0; i < %s; i++)", size);
    L("%s[i] = %s[i];", OUT(0), IN(0));
    END();
    return DY_OK;
  }
  if (p >= 1.0f) {
    L("/* dropout with p = 1: everything is dropped */");
    FOR("for (int64_t i = 0; i < %s; i++)", size);
    L("%s[i] = 0.0f;", OUT(0));
    END();
    return DY_OK;
  }
  /* the same threshold and scale as the kernel, as literals */
  unsigned long long threshold = (unsigned long long)ceil((double)p * 16777216.0);
  char scale[64];
  if (!dy_float_literal(1.0f / (1.0f - p), scale, sizeof scale))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "bad p");
  L("/* dropout (upscale_in_train), p = %.9g: element i is kept, times 1/(1-p),", pd);
  L(" * iff the top 24 bits of splitmix64's mix of seed ^ (i * golden) are");
  L(" * >= p * 2^24 (runtime/kernels/kernels_nn.c documents the hash) */");
  FOR("for (int64_t i = 0; i < %s; i++) {", size);
  if (ctx->seed)
    L("uint64_t z = (seed ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull)) +");
  else
    L("uint64_t z = (0x%016llxull ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull)) +",
      (unsigned long long)seed);
  L("             0x9E3779B97F4A7C15ull;");
  L("z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;");
  L("z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;");
  L("z ^= z >> 31;");
  L("%s[i] = (z >> 40) >= %lluu ? %s[i] * %s : 0.0f;", OUT(0), threshold, IN(0), scale);
  END();
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

/* the normalisations' operands */
#define NORM_ROLES {"x", "scale", "bias", "mean", "variance"}

const dy_cg_op dy_cg_op_conv2d = {.emit = dy_emit_conv2d, .scratch = dy_cg_conv_scratch,
                                  .roles = {"x", "w", "bias", "res"}};
const dy_cg_op dy_cg_op_conv2d_transpose = {.emit = dy_emit_conv2d_transpose,
                                            .roles = {"x", "w", "bias", "res"}};
const dy_cg_op dy_cg_op_conv2d_grad_filter = {.emit = dy_emit_conv2d_grad_filter};
const dy_cg_op dy_cg_op_pool2d = {.emit = dy_emit_pool2d};
const dy_cg_op dy_cg_op_pool2d_grad = {.emit = dy_emit_pool2d_grad};
const dy_cg_op dy_cg_op_batch_norm = {.emit = dy_emit_batch_norm, .roles = NORM_ROLES};
const dy_cg_op dy_cg_op_layer_norm = {.emit = dy_emit_layer_norm, .roles = NORM_ROLES};
const dy_cg_op dy_cg_op_group_norm = {.emit = dy_emit_group_norm, .roles = NORM_ROLES};
const dy_cg_op dy_cg_op_dropout = {.emit = dy_emit_dropout};
