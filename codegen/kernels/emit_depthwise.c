/* emit_depthwise.c - floor 1: the padded-plane depthwise kernel (f32, one
 * input and one output channel per group, stride 1 or 2 along the rows, at
 * most 49 taps), which dy_cg_conv2d_epilogue (emit_conv.c) picks for such
 * convolutions unless dy_codegen_options.plain_kernels.
 *
 * Per plane (image, channel) the input is copied into a zero-bordered
 * plane in the scratch (hp x wp floats and some slack, zeroed once per
 * call: only the interior is rewritten plane after plane), so every tap of
 * every output is a plain load: each output row is DY_VW outputs at a time
 * over all taps in one register (the taps' weights broadcast once per
 * plane; stride 2 splits even and odd columns with dy_vdeint, one split
 * serving two neighbouring taps), with no bounds checks and no border
 * path; the last vector of a row, when the row is not a multiple of DY_VW,
 * computes lanes past the row (reading the next padded row or the slack,
 * which are discarded) and stores only the row's. Bias and relu / relu6 /
 * leaky_relu in registers; another activation over the finished row.
 * With --threads the planes are split over the threads, each with its own
 * slice of the scratch (the same sums in the same order: outputs
 * identical). */
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

dy_cg_dw_plane dy_cg_dw_plane_of(const dy_cg_conv_geom *g) {
  dy_cg_dw_plane d;
  ll rows = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
  ll cols = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
  d.hp = rows > g->pt + g->h ? rows : g->pt + g->h;
  d.wp = cols > g->pl + g->w ? cols : g->pl + g->w;
  /* the furthest float a vector reads: the last row's taps, its last
   * vector starting at ow - 1 at most, 16 lanes (32 floats at stride 2) */
  ll last = (rows - 1) * d.wp + g->sw * (g->ow - 1) + (g->kw - 1) * g->dw + 16 * g->sw;
  d.size = d.hp * d.wp > last ? d.hp * d.wp : last;
  return d;
}

bool dy_cg_depthwise_padded_fits(const dy_cg_conv_geom *g) {
  return g->groups == g->c && g->groups == g->o && (g->sw == 1 || g->sw == 2) &&
         g->kh * g->kw <= 49;
}

bool dy_codegen_depthwise_padded(const dy_program *p, const dy_op *op, bool plain_kernels) {
  if (plain_kernels || (op->kind != DY_OP_CONV2D && op->kind != DY_OP_FUSED_CONV2D) ||
      p->vars[op->inputs[0]]->type.dtype != DY_F32 ||
      dy_gemm_pack_of(p, op, 1).kind != DY_PACK_NONE)
    return false;
  dy_cg_conv_geom g = dy_cg_conv_geom_of(p, op);
  return dy_cg_depthwise_padded_fits(&g);
}

int64_t dy_cg_depthwise_scratch(const dy_cg_conv_geom *g, int threads) {
  return dy_cg_dw_plane_of(g).size * (threads > 1 ? threads : 1) * 4;
}

/* The vector form of act applied to acc in registers ("" for no act), or
 * NULL when act has none here (then the row loop applies it). */
const char *dy_cg_dw_vec_act(const char *act, const char *alit, char *buf, size_t n) {
  if (!act || !*act)
    snprintf(buf, n, "%s", "");
  else if (strcmp(act, "relu") == 0)
    snprintf(buf, n, "dy_vrelu(acc)");
  else if (strcmp(act, "relu6") == 0)
    snprintf(buf, n, "dy_vrelu6(acc)");
  else if (strcmp(act, "leaky_relu") == 0)
    snprintf(buf, n, "dy_vleaky(acc, %s)", alit);
  else if (dy_cg_act_tile_code(act)) /* sigmoid, silu, hard_swish, ...: vector math */
    snprintf(buf, n, "dy_vact(acc, DY_ACT_%s)", dy_cg_act_tile_code(act));
  else
    return NULL;
  return buf;
}

void dy_cg_dw_weights(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const char *w, const char *b) {
  L("const dy_vf b0 = dy_vset(%s);", b);
  for (ll i = 0; i < g->kh; i++)
    for (ll j = 0; j < g->kw; j++)
      L("const dy_vf w%lld_%lld = dy_vset(%s[%lld]);", i, j, w, i * g->kw + j);
}

void dy_cg_dw_row(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, long long wp, const char *dst,
                  const char *vact, bool slack) {
  for (ll i = 0; i < g->kh; i++) {
    if (g->sh == 1)
      L("const float *r%lld = xp + (oy + %lld) * %lld;", i, i * g->dh, wp);
    else
      L("const float *r%lld = xp + (oy * %lld + %lld) * %lld;", i, g->sh, i * g->dh, wp);
  }
  OPEN("for (int64_t ox = 0; ox < %lld; ox += DY_VW) {", g->ow);
  L("dy_vf acc = b0;%s", g->sw == 2 ? " dy_vf ev, od;" : "");
  for (ll i = 0; i < g->kh; i++) {
    for (ll j = 0; j < g->kw; j++) {
      ll off = j * g->dw;
      if (g->sw == 1) {
        L("acc = dy_vfma(w%lld_%lld, dy_vload(r%lld + ox + %lld), acc);", i, j, i, off);
        continue;
      }
      /* stride 2: the even lanes are tap j, the odd ones tap j + 1 when
       * the dilation is 1 */
      L("dy_vdeint(dy_vload(r%lld + 2 * ox + %lld), dy_vload(r%lld + 2 * ox + %lld + DY_VW), &ev, "
        "&od);",
        i, off, i, off);
      L("acc = dy_vfma(w%lld_%lld, ev, acc);", i, j);
      if (g->dw == 1 && j + 1 < g->kw) {
        L("acc = dy_vfma(w%lld_%lld, od, acc);", i, j + 1);
        j++;
      }
    }
  }
  if (vact && *vact)
    L("acc = %s;", vact);
  if (slack || g->ow % 16 == 0) { /* room for every lane, or a multiple of every DY_VW */
    L("dy_vstore(%s + ox, acc);", dst);
  } else {
    OPEN("if (ox + DY_VW <= %lld) {", g->ow);
    L("dy_vstore(%s + ox, acc);", dst);
    ctx->indent--;
    OPEN("} else { /* the row's last outputs */");
    L("float t[DY_VW];");
    L("dy_vstore(t, acc);");
    L("for (int k = 0; k < %lld - ox; k++)", g->ow);
    L("  %s[ox + k] = t[k];", dst);
    CLOSE();
  }
  CLOSE();
}

/* Output rows computed together by emit_dw_rows: a row of one or two
 * vectors (7, 14 or 28 wide) is otherwise one chain of kh*kw dependent
 * FMAs per vector (4 cycles each), which out-of-order execution overlaps
 * only a row or two deep (efficientnet_b0's 5x5 depthwise at 7x7 ran at a
 * ninth of the FMA rate). 2 rows for more than 9 taps (25 weights and 2
 * sums in 32 registers), 4 for 3x3; 1 (the row by row form) with
 * --plain-kernels or an act with no vector form. */
static ll dw_rows_at_once(const dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const char *vact) {
  if (ctx->plain_kernels || !vact)
    return 1;
  return g->kh * g->kw > 9 ? 2 : 4;
}

/* R output rows from oy on (y: the first one's), each its own sums (a<r>)
 * over the same taps; the input rows they share are loaded once (the
 * compiler merges the equal loads). Stores as dy_cg_dw_row's, no slack. */
static void emit_dw_rows(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, ll wp, ll R,
                         const char *vact) {
  ll top = (R - 1) * g->sh + (g->kh - 1) * g->dh;
  for (ll q = 0; q <= top; q++) { /* the input rows some sum reads */
    bool used = false;
    for (ll r = 0; r < R && !used; r++)
      for (ll i = 0; i < g->kh && !used; i++)
        used = r * g->sh + i * g->dh == q;
    if (used)
      L("const float *q%lld = xp + (oy * %lld + %lld) * %lld;", q, g->sh, q, wp);
  }
  OPEN("for (int64_t ox = 0; ox < %lld; ox += DY_VW) {", g->ow);
  for (ll r = 0; r < R; r++)
    L("dy_vf a%lld = b0;%s", r, g->sw == 2 ? (r == 0 ? " dy_vf ev, od;" : "") : "");
  for (ll r = 0; r < R; r++)
    for (ll i = 0; i < g->kh; i++) {
      ll q = r * g->sh + i * g->dh;
      for (ll j = 0; j < g->kw; j++) {
        ll off = j * g->dw;
        if (g->sw == 1) {
          L("a%lld = dy_vfma(w%lld_%lld, dy_vload(q%lld + ox + %lld), a%lld);", r, i, j, q, off, r);
          continue;
        }
        L("dy_vdeint(dy_vload(q%lld + 2 * ox + %lld), dy_vload(q%lld + 2 * ox + %lld + DY_VW), &ev, "
          "&od);",
          q, off, q, off);
        L("a%lld = dy_vfma(w%lld_%lld, ev, a%lld);", r, i, j, r);
        if (g->dw == 1 && j + 1 < g->kw) {
          L("a%lld = dy_vfma(w%lld_%lld, od, a%lld);", r, i, j + 1, r);
          j++;
        }
      }
    }
  for (ll r = 0; r < R; r++) {
    OPEN("{ /* row oy + %lld */", r);
    L("dy_vf acc = a%lld;", r);
    if (*vact)
      L("acc = %s;", vact);
    if (g->ow % 16 == 0) {
      L("dy_vstore(y + %lld + ox, acc);", r * g->ow);
    } else {
      OPEN("if (ox + DY_VW <= %lld) {", g->ow);
      L("dy_vstore(y + %lld + ox, acc);", r * g->ow);
      ctx->indent--;
      OPEN("} else { /* the row's last outputs */");
      L("float t[DY_VW];");
      L("dy_vstore(t, acc);");
      L("for (int k = 0; k < %lld - ox; k++)", g->ow);
      L("  y[%lld + ox + k] = t[k];", r * g->ow);
      CLOSE();
    }
    CLOSE();
  }
  CLOSE();
}

/* The planes [lo, hi) (C expressions) into the output, xp being the
 * zeroed padded plane. */
static void emit_dw_planes(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const dy_cg_dw_plane *d,
                           bool bias, const char *vact, const char *fx, const char *lo,
                           const char *hi) {
  L("for (int64_t q = 0; q < %lld; q++) /* the border (and slack) stays zero */", d->size);
  L("  xp[q] = 0.0f;");
  FOR("for (int64_t pl = %s; pl < %s; pl++) {", lo, hi);
  L("const int64_t c = pl %% %lld;", g->c);
  L("const float *w = %s + c * %lld;", IN(1), g->kh * g->kw);
  char bc[64];
  snprintf(bc, sizeof bc, "%s[c]", IN(2));
  dy_cg_dw_weights(ctx, g, "w", bias ? bc : "0.0f");
  FOR("for (int64_t iy = 0; iy < %lld; iy++)", g->h);
  L("dy_copy(xp + (iy + %lld) * %lld + %lld, %s + (pl * %lld + iy) * %lld, %lld);", g->pt, d->wp,
    g->pl, IN(0), g->h, g->w, g->w);
  END();
  ll R = dw_rows_at_once(ctx, g, vact), full = g->oh / R * R;
  if (R > 1 && full > 0) {
    L("/* %lld rows at a time, each its own sums */", R);
    FOR("for (int64_t oy = 0; oy < %lld; oy += %lld) {", full, R);
    L("float *y = %s + (pl * %lld + oy) * %lld;", OUT(0), g->oh, g->ow);
    emit_dw_rows(ctx, g, d->wp, R, vact);
    END();
  } else {
    full = 0;
  }
  if (full == g->oh) {
    END(); /* pl */
    return;
  }
  FOR("for (int64_t oy = %lld; oy < %lld; oy++) {", full, g->oh);
  L("float *y = %s + (pl * %lld + oy) * %lld;", OUT(0), g->oh, g->ow);
  dy_cg_dw_row(ctx, g, d->wp, "y", vact, false);
  if (!vact) {
    FOR("for (int64_t ox = 0; ox < %lld; ox++) {", g->ow);
    L("const float v = y[ox];");
    L("y[ox] = %s;", fx);
    END();
  }
  END();
  END();
}

dy_status dy_cg_conv_depthwise_padded(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                                      bool bias, const char *act, double alpha) {
  char fx[512], alit[64] = "0.0f", vbuf[96];
  if (!dy_cg_act_expr(act, alpha, "v", fx, sizeof fx) ||
      (dy_cg_act_uses_alpha(act) && !dy_float_literal((float)alpha, alit, sizeof alit)))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  const char *vact = dy_cg_dw_vec_act(act, alit, vbuf, sizeof vbuf);
  *ctx->uses |= DY_USES_SIMD;
  dy_cg_dw_plane d = dy_cg_dw_plane_of(g);
  char planes[128];
  dy_ext_str(ctx, dy_ext_range(dy_cg_in_type(ctx, 0), 0, 2), planes, sizeof planes);
  char bc[64];
  snprintf(bc, sizeof bc, "%s[c] + ", IN(2));
  L("/* depthwise, padded planes: y[c][oy][ox] = %ssum of w[c][i][j] * x[c][iy][ix] over %lld "
    "taps;",
    bias ? bc : "", g->kh * g->kw);
  L(" * each plane copied into a %lld x %lld zero-bordered one, DY_VW outputs at a time */", d.hp,
    d.wp);
  if (ctx->threads <= 1) {
    OPEN("{");
    L("float *xp = scratch;");
    emit_dw_planes(ctx, g, &d, bias, vact, fx, "0", planes);
    CLOSE();
    return DY_OK;
  }
  /* threads: planes [lo, hi) in a worker function, each thread its slice */
  char fn[64];
  snprintf(fn, sizeof fn, "k%d_part%d", ctx->op->id, ctx->n_parts++);
  const char *X = IN(0), *W = IN(1), *B = IN(2), *Y = OUT(0);
  char bl[96] = "";
  if (bias)
    snprintf(bl, sizeof bl, ", *%s = g_->%s", B, B);
  dy_buf_printf(ctx->before,
                "/* op %d: the depthwise planes [lo, hi), one thread's share */\n"
                "typedef struct {\n"
                "  const float *%s, *%s, *%s;\n"
                "  float *%s, *scratch;\n"
                "} %s_args;\n\n"
                "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                "  const %s_args *g_ = (const %s_args *)arg;\n"
                "  const float *%s = g_->%s, *%s = g_->%s%s;\n"
                "  float *%s = g_->%s, *xp = g_->scratch + (int64_t)t * %lld;\n",
                ctx->op->id, X, W, B, Y, fn, fn, fn, fn, X, X, W, W, bl, Y, Y, d.size);
  *ctx->uses |= DY_USES_THREADS;
  dy_cg_ctx sub = *ctx;
  sub.body = ctx->before;
  sub.indent = 1;
  emit_dw_planes(&sub, g, &d, bias, vact, fx, "lo", "hi");
  dy_buf_puts(ctx->before, "}\n\n");
  ctx->n_parts = sub.n_parts;
  L("%s_args args;", fn);
  L("args.%s = %s, args.%s = %s, args.%s = %s;", X, X, W, W, B, bias ? B : "0");
  L("args.%s = %s, args.scratch = scratch;", Y, Y);
  L("if (%s * %lld >= DY_THREAD_MIN_WORK) /* multiply-adds: worth the threads? */", planes,
    g->oh * g->ow * g->kh * g->kw);
  L("  dy_parallel(%s, %s, &args);", planes, fn);
  L("else");
  L("  %s(&args, 0, %s, 0);", fn, planes);
  return DY_OK;
}
