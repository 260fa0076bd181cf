/* emit_quant.c - emitters of the quant family (ir/ops_quant.def), floor 2.
 *
 * Each kernel is runtime/kernels/kernels_quant.c's loop written out for the op's
 * shapes, over the fixed-point helpers of ir/dy_qfixed.h (the generated
 * file carries that text when a kernel uses it: DY_USES_QFIXED), so the
 * compiled code equals the executor bit for bit. The requantization
 * multipliers and shifts are computed here at compile time (ir/core/quant.c,
 * as the reference kernels compute them) and written as `static const`
 * tables: the scales must be constants. A constant zero point is written
 * as its value (zp_str), so the compiler folds it even when the weights
 * are in another translation unit (NAME_weights); biases are read from
 * their arrays. The driver (program/kernel.c) keeps each qconv2d kernel out of line.
 *
 * Fast paths (same results, exact integer arithmetic):
 *   qconv2d   depthwise (one input and one output channel a group), i8 or
 *             u8 x, constant i8 w with zero w zero points, <= 25 taps: per
 *             channel the plane (or a band of it, <= 4 KB) is
 *             rewritten once as 16-bit pairs (x[iy][ix], x[iy][ix + dw])
 *             padded with the x zero point (the border peeled: no bounds
 *             checks anywhere), then each output is one dy_q_mac2 (SMLAD
 *             on a Cortex-M4) per two taps of a filter row, the weight
 *             pairs in locals (conv_depthwise).
 *   qconv2d   i8 or u8 x, constant i8 w with zero w zero points and a filter of
 *             16 or more taps (4 or more on the Cortex-M DSP): per output pixel the input patch is
 *             gathered once into a stack array (padding = the x zero
 *             point; no bounds checks for outputs whose taps are all
 *             inside), then one dy_q_dot2_s8 per two output channels
 *             against the filter's contiguous rows, minus x_zp * sum(w
 *             row) (a table); under #if DY_Q_BLOCK2X2 (the Cortex-M DSP)
 *             two pixels at a time, rewritten once as 16-bit pairs, and
 *             one dy_q_dot2x2 (8 SMLAD per 4 taps) per two output
 *             channels (put_block2x2). A kernel whose requantization
 *             shifts are all <= 0 stores through dy_q_mul_by_qm_r.
 *   qmatmul   i8 or u8 a, constant i8 b stored [N, K] (transpose_y), zero b zero
 *             points, K >= 16: one dy_q_dot_s8 per output.
 * dy_q_dot_s8 / dy_q_dot_u8s8 is where the instruction set comes in (AVX-512 VNNI, AVX2,
 * NEON sdot, Cortex-M DSP SMLAD, plain C: see dy_qfixed.h). Everything
 * else (depthwise and small filters, u8 weights, non-zero weight zero points) is
 * the direct loop, whose outputs with every tap inside the input (the
 * interior, a range per dim computed here) skip the bounds checks (and,
 * with zero weight zero points, sum x * w and subtract x_zp * sum(w);
 * depthwise filters of at most 9 taps on planes too large for the pairs
 * form written out tap by tap).
 * Loops inside one sample index with int_fast32_t (32 bits on 32-bit
 * targets) when a sample's x and y have fewer than 2^31 elements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_ops.h"

#define OPNAME(ctx) dy_op_name((ctx)->op->kind)
#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

static const dy_var *in_var(dy_cg_ctx *ctx, int i) {
  return ctx->p->vars[ctx->op->inputs[i]];
}

/* Input i's data when it is a constant, else NULL. */
static const void *const_data(dy_cg_ctx *ctx, int i) {
  const dy_var *v = in_var(ctx, i);
  return v->persistable && v->data && !dy_program_in_place_writer(ctx->p, v->id) ? v->data
                                                                                 : NULL;
}

static dy_status need_const(dy_cg_ctx *ctx, dy_error *err, int i) {
  if (const_data(ctx, i))
    return DY_OK;
  return dy_error_at(err, ctx->op, DY_STATUS_UNSUPPORTED,
                     "codegen: %s: input %d ('%s', a scale) must be a constant to compile "
                     "the requantization", OPNAME(ctx), i, in_var(ctx, i)->name);
}

/* Zero point input i (element 0) as C: its value when the input is a
 * constant, which the compiler then folds wherever the weights live (in
 * NAME_weights, another translation unit, it cannot read them), else
 * its parameter's element 0. buf holds the text. */
static const char *zp_str(dy_cg_ctx *ctx, int i, char *buf, size_t n) {
  const void *d = const_data(ctx, i);
  dy_dtype dt = in_var(ctx, i)->type.dtype;
  if (d && dt == DY_I8)
    snprintf(buf, n, "%d", ((const int8_t *)d)[0]);
  else if (d && dt == DY_U8)
    snprintf(buf, n, "%d", ((const uint8_t *)d)[0]);
  else if (d && dt == DY_I32)
    snprintf(buf, n, "%ld", (long)((const int32_t *)d)[0]);
  else
    snprintf(buf, n, "%s[0]", IN(i));
  return buf;
}

/* const int32_t name = <zero point input i>; */
static void put_zp(dy_cg_ctx *ctx, const char *name, int i) {
  char zp[32];
  dy_cg_line(ctx, "const int32_t %s = %s;", name, zp_str(ctx, i, zp, sizeof zp));
}

static float scale_at(dy_cg_ctx *ctx, int i, int64_t k) {
  const float *v = const_data(ctx, i);
  return v[dy_type_numel(&in_var(ctx, i)->type) == 1 ? 0 : k];
}

/* static const int32_t name[n] = {...}; eight values a line. */
static void put_table(dy_cg_ctx *ctx, const char *name, const int32_t *v, int64_t n) {
  dy_cg_line(ctx, "static const int32_t %s[%lld] = {", name, (long long)n);
  char line[160];
  for (int64_t i = 0; i < n; i += 8) {
    size_t k = 0;
    for (int64_t j = i; j < n && j < i + 8; j++)
      k += (size_t)snprintf(line + k, sizeof line - k, "%s%ld", j > i ? ", " : "", (long)v[j]);
    dy_cg_line(ctx, "    %s%s", line, i + 8 < n ? "," : "");
  }
  dy_cg_line(ctx, "};");
}

/* The requantization of qconv2d / qmatmul: tables mult[], shift[] (one
 * per output channel, or one), the clamp bounds lo, hi and y_zp; store
 * gets the statement writing y[yi] from acc (channel variable ch). */
static dy_status put_requant(dy_cg_ctx *ctx, dy_error *err, int64_t act_min, int64_t act_max,
                             const char *ch, char *store, size_t store_n, bool *right_out) {
  dy_status s;
  if ((s = need_const(ctx, err, 1)) || (s = need_const(ctx, err, 4)) ||
      (s = need_const(ctx, err, 6)))
    return s;
  int64_t nc = dy_type_numel(&in_var(ctx, 4)->type);
  int32_t *m = malloc(sizeof(int32_t) * 2 * (size_t)nc);
  if (!m)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t c = 0; c < nc; c++)
    dy_quant_multiplier((double)scale_at(ctx, 1, 0) * (double)scale_at(ctx, 4, c) /
                            (double)scale_at(ctx, 6, 0),
                        &m[c], &m[nc + c]);
  /* every shift <= 0 (the usual case): the right shifts, negated here,
   * and dy_q_mul_by_qm_r (no left shift, no saturating product) */
  bool right = true;
  for (int64_t c = 0; c < nc; c++)
    right = right && m[nc + c] <= 0 && m[c] != INT32_MIN;
  for (int64_t c = 0; right && c < nc; c++)
    m[nc + c] = -m[nc + c];
  if (right_out)
    *right_out = right;
  dy_cg_line(ctx, right ? "/* requantization: x_scale * w_scale[c] / y_scale as multiplier * "
                          "2^(-31 - rshift) */"
                        : "/* requantization: x_scale * w_scale[c] / y_scale as multiplier * "
                          "2^(shift - 31) */");
  put_table(ctx, "mult", m, nc);
  put_table(ctx, right ? "rshift" : "shift", m + nc, nc);
  free(m);
  int32_t lo, hi;
  dy_quant_act_range(dy_cg_out_type(ctx, 0)->dtype, act_min, act_max, &lo, &hi);
  char zp[32];
  dy_cg_line(ctx, "const int32_t lo = %ld, hi = %ld, y_zp = %s;", (long)lo, (long)hi,
             zp_str(ctx, 7, zp, sizeof zp));
  const char *c = nc > 1 ? ch : "0";
  /* clamp(add_sat(v, y_zp), lo, hi) = clamp(v, lo - y_zp, hi - y_zp) + y_zp
   * (lo, hi and y_zp 8-bit: a saturated sum clamps to lo or hi as v does) */
  if (right)
    snprintf(store, store_n,
             "%s[yi] = (%s)(dy_q_clamp(dy_q_mul_by_qm_r(acc, mult[%s], rshift[%s]), lo - y_zp, "
             "hi - y_zp) + y_zp);",
             OUT(0), dy_ctype(dy_cg_out_type(ctx, 0)->dtype), c, c);
  else
    snprintf(store, store_n,
             "%s[yi] = (%s)dy_q_clamp(dy_q_add_sat(dy_q_mul_by_qm(acc, mult[%s], shift[%s]), "
             "y_zp), lo, hi);",
             OUT(0), dy_ctype(dy_cg_out_type(ctx, 0)->dtype), c, c);
  *ctx->uses |= DY_USES_QFIXED;
  return DY_OK;
}

/* static const int32_t name[rows]: the sum of each row of the constant
 * int8 matrix w (rows x k), which the dot forms subtract times the other
 * operand's zero point. */
static dy_status put_row_sums(dy_cg_ctx *ctx, dy_error *err, const char *name, const int8_t *w,
                              int64_t rows, int64_t k) {
  int32_t *ws = malloc(sizeof(int32_t) * (size_t)(rows > 0 ? rows : 1));
  if (!ws)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t r = 0; r < rows; r++) {
    ws[r] = 0;
    for (int64_t i = 0; i < k; i++)
      ws[r] += w[r * k + i];
  }
  dy_cg_line(ctx, "/* the sum of each weight row, times the input zero point */");
  put_table(ctx, name, ws, rows);
  free(ws);
  return DY_OK;
}

/* ---- quantize / dequantize ---- */

/* The loop over x's elements with the channel c of a per-channel scale:
 * outer (dims before axis), C, inner (dims after). body uses i and c. */
static void channel_loops(dy_cg_ctx *ctx, int64_t axis, const char *body) {
  const dy_type *x = dy_cg_in_type(ctx, 0);
  int64_t nq = dy_type_numel(dy_cg_in_type(ctx, 1));
  char b1[64], b2[64];
  if (nq == 1 || x->rank == 0) {
    L("const int64_t c = 0;");
    FOR("for (int64_t i = 0; i < %s; i++)",
        dy_ext_str(ctx, dy_ext_range(x, 0, x->rank), b1, sizeof b1));
    L("%s", body);
    END();
    return;
  }
  int ax = (int)(axis < 0 ? axis + x->rank : axis);
  FOR("for (int64_t o = 0; o < %s; o++)", dy_ext_str(ctx, dy_ext_range(x, 0, ax), b1, sizeof b1));
  FOR("for (int64_t c = 0; c < %lld; c++)", (long long)x->shape[ax]);
  L("for (int64_t k = 0, i = (o * %lld + c) * %s; k < %s; k++, i++)", (long long)x->shape[ax],
    dy_ext_str(ctx, dy_ext_range(x, ax + 1, x->rank), b2, sizeof b2), b2);
  L("  %s", body);
  END();
  END();
}

dy_status dy_emit_quantize_linear(dy_cg_ctx *ctx, dy_error *err) {
  int32_t lo, hi;
  dy_quant_range(dy_cg_out_type(ctx, 0)->dtype, &lo, &hi);
  char body[256];
  snprintf(body, sizeof body,
           "%s[i] = (%s)dy_q_clamp(dy_q_round_f32(%s[i] / %s[c]) + (int32_t)%s[c], %ld, %ld);",
           OUT(0), dy_ctype(dy_cg_out_type(ctx, 0)->dtype), IN(0), IN(1), IN(2), (long)lo,
           (long)hi);
  *ctx->uses |= DY_USES_QFIXED;
  channel_loops(ctx, dy_quantize_linear_attrs_get(ctx->op).axis, body);
  return DY_OK;
}

dy_status dy_emit_dequantize_linear(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  char body[256];
  snprintf(body, sizeof body, "%s[i] = (float)((int32_t)%s[i] - (int32_t)%s[c]) * %s[c];", OUT(0),
           IN(0), IN(2), IN(1));
  channel_loops(ctx, dy_dequantize_linear_attrs_get(ctx->op).axis, body);
  return DY_OK;
}

/* ---- qconv2d, conv_integer ---- */

/* Is every element of constant input i zero? */
static bool all_zero(dy_cg_ctx *ctx, int i) {
  const dy_var *v = in_var(ctx, i);
  const void *d = const_data(ctx, i);
  if (!d)
    return false;
  for (int64_t k = 0; k < dy_type_numel(&v->type); k++)
    if (dy_quant_value(v->type.dtype, d, k) != 0)
      return false;
  return true;
}

/* The dot product of activations of dtype t (i8 or u8) with int8
 * weights. */
static const char *dot_fn(dy_dtype t) { return t == DY_U8 ? "dy_q_dot_u8s8" : "dy_q_dot_s8"; }
static const char *dot2_fn(dy_dtype t) { return t == DY_U8 ? "dy_q_dot2_u8s8" : "dy_q_dot2_s8"; }

/* Do activations of dtype t and a constant weight input wi with zero
 * zero points (input zi) take the dot form? */
static bool dot_form(dy_cg_ctx *ctx, dy_dtype t, int wi, int zi) {
  return (t == DY_I8 || t == DY_U8) && dy_cg_in_type(ctx, wi)->dtype == DY_I8 &&
         const_data(ctx, wi) && all_zero(ctx, zi);
}

/* The statement block writing output (o, oy, ox) of sample n. */
static void put_store(dy_cg_ctx *ctx, const dy_conv_geom *g, const char *store) {
  L("{");
  L("  const int64_t yi = n * %lld + (o * %lld + oy) * %lld + ox;",
    (long long)g->o * g->oh * g->ow, (long long)g->oh, (long long)g->ow);
  L("  %s", store);
  L("}");
}

/* The conv loop nest; wi and zi index the filter and its zero points, xz
 * the x zero point expression; `store` is the statement writing acc to
 * y[yi]. Requantized when requant, else the int32 sum. With wsum (the
 * name of a table of the filter rows' sums; the weight zero points are
 * then all zero) the interior outputs sum x * w and subtract xz * wsum[o]
 * once, the same integer. */
static void conv_direct(dy_cg_ctx *ctx, const dy_conv_geom *g, int wi, int zi, const char *xz,
                        const char *store, const char *init, const char *wsum) {
  const dy_type *x = dy_cg_in_type(ctx, 0);
  const char *I = dy_qconv_index_type(g);
  long long cg = g->c / g->groups, og = g->o / g->groups;
  bool wz_scalar = dy_type_numel(dy_cg_in_type(ctx, zi)) == 1;
  dy_qconv_open_sample(ctx, g);
  FOR("for (%s o = 0; o < %lld; o++) {", I, (long long)g->o);
  L("const %s xc = o / %lld * %lld; /* the group's first input channel */", I, og, cg);
  L("const int32_t wz = %s[%s];", IN(zi), wz_scalar ? "0" : "o");
  FOR("for (%s oy = 0; oy < %lld; oy++)", I, (long long)g->oh);
  FOR("for (%s ox = 0; ox < %lld; ox++) {", I, (long long)g->ow);
  L("int32_t acc = %s;", init);
  long long lo[2], hi[2];
  bool interior = dy_qconv_interior(g, lo, hi);
  /* one input channel a group (depthwise) and at most 9 taps with wsum:
   * the interior sum written out tap by tap */
  long long taps = g->kh * g->kw;
  bool unrolled = interior && wsum && cg == 1 && taps <= 9;
  if (unrolled) {
    L("if (oy >= %lld && oy < %lld && ox >= %lld && ox < %lld) { /* no tap outside */", lo[0],
      hi[0], lo[1], hi[1]);
    L("  const %s *wr = %s + o * %lld;", dy_ctype(dy_cg_in_type(ctx, wi)->dtype), IN(wi), taps);
    L("  const %s *xr = xb + (xc * %lld + oy * %lld - %lld) * %lld + ox * %lld - %lld;",
      dy_ctype(x->dtype), (long long)g->h, (long long)g->sh, (long long)g->pt, (long long)g->w,
      (long long)g->sw, (long long)g->pl);
    for (long long t = 0; t < taps; t++)
      L("  acc += (int32_t)xr[%lld] * wr[%lld];", t / g->kw * g->dh * g->w + t % g->kw * g->dw, t);
    L("  acc -= %s * %s[o];", xz, wsum);
    L("} else {");
    ctx->indent++;
  } else if (interior) {
    L("if (oy >= %lld && oy < %lld && ox >= %lld && ox < %lld) { /* no tap outside */", lo[0],
      hi[0], lo[1], hi[1]);
    ctx->indent++;
    FOR("for (%s ci = 0; ci < %lld; ci++)", I, cg);
    FOR("for (%s ky = 0; ky < %lld; ky++) {", I, (long long)g->kh);
    L("const %s *xr = xb + ((xc + ci) * %lld + oy * %lld - %lld + ky * %lld) * %lld + ox * %lld "
      "- %lld;",
      dy_ctype(x->dtype), (long long)g->h, (long long)g->sh, (long long)g->pt,
      (long long)g->dh, (long long)g->w, (long long)g->sw, (long long)g->pl);
    L("const %s *wr = %s + ((o * %lld + ci) * %lld + ky) * %lld;",
      dy_ctype(dy_cg_in_type(ctx, wi)->dtype), IN(wi), cg, (long long)g->kh, (long long)g->kw);
    FOR("for (%s kx = 0; kx < %lld; kx++)", I, (long long)g->kw);
    if (wsum)
      L("acc += (int32_t)xr[kx * %lld] * wr[kx];", (long long)g->dw);
    else
      L("acc += ((int32_t)xr[kx * %lld] - %s) * ((int32_t)wr[kx] - wz);", (long long)g->dw, xz);
    END();
    END();
    END();
    if (wsum)
      L("acc -= %s * %s[o];", xz, wsum);
    ctx->indent--;
    L("} else {");
    ctx->indent++;
  }
  FOR("for (%s ci = 0; ci < %lld; ci++)", I, cg);
  FOR("for (%s ky = 0; ky < %lld; ky++) {", I, (long long)g->kh);
  L("const %s iy = oy * %lld - %lld + ky * %lld;", I, (long long)g->sh, (long long)g->pt,
    (long long)g->dh);
  L("if (iy < 0 || iy >= %lld)", (long long)g->h);
  L("  continue;");
  FOR("for (%s kx = 0; kx < %lld; kx++) {", I, (long long)g->kw);
  L("const %s ix = ox * %lld - %lld + kx * %lld;", I, (long long)g->sw, (long long)g->pl,
    (long long)g->dw);
  L("if (ix < 0 || ix >= %lld)", (long long)g->w);
  L("  continue;");
  L("acc += ((int32_t)xb[((xc + ci) * %lld + iy) * %lld + ix] - %s) *", (long long)g->h,
    (long long)g->w, xz);
  L("       ((int32_t)%s[((o * %lld + ci) * %lld + ky) * %lld + kx] - wz);", IN(wi), cg,
    (long long)g->kh, (long long)g->kw);
  END();
  END();
  END();
  if (interior) {
    ctx->indent--;
    L("}");
  }
  put_store(ctx, g, store);
  END();
  END();
  END();
  END();
}

/* Closes n blocks opened with their indent. */
static void close_block(dy_cg_ctx *ctx, int n) {
  for (int i = 0; i < n; i++) {
    ctx->indent--;
    L("}");
  }
}

/* const int32_t acc = <acc>; the store of output (o, oy, ox); then
 * closes the n blocks around it. */
static void put_acc_store(dy_cg_ctx *ctx, const dy_conv_geom *g, const char *acc,
                          const char *store, int n) {
  L("const int32_t acc = %s;", acc);
  put_store(ctx, g, store);
  close_block(ctx, n);
}

/* conv_dot's 2 x 2 block (DY_Q_BLOCK2X2: the Cortex-M DSP): two output
 * pixels' patches gathered, rewritten once as 16-bit pairs (dy_q_pack2),
 * then one dy_q_dot2x2 per two output channels (an odd last one:
 * dy_q_dot1x2). An odd last pixel is gathered twice and stored once. */
static void put_block2x2(dy_cg_ctx *ctx, const dy_conv_geom *g, const char *store) {
  long long og = g->o / g->groups, k = g->c / g->groups * g->kh * g->kw, np = g->oh * g->ow;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  const char *I = dy_qconv_index_type(g);
  L("/* output pixels p and p + 1 */");
  FOR("for (%s p = 0; p < %lld; p += 2) {", I, np);
  FOR("for (%s j = 0; j < 2; j++) {", I);
  L("const %s q = p + j < %lld ? p + j : p, oy = q / %lld, ox = q %% %lld;", I, np,
    (long long)g->ow, (long long)g->ow);
  L("%s *const pj = patch + j * %lld;", dy_ctype(x->dtype), k);
  dy_qconv_gather(ctx, g, "pj");
  END();
  L("%s(patch, %lld, pw);", x->dtype == DY_U8 ? "dy_q_pack2_u8" : "dy_q_pack2_s8", k);
  FOR("for (%s o2 = gi * %lld; o2 < (gi + 1) * %lld; o2 += 2) {", I, og, og);
  /* (zeroed with an odd channel: dy_q_dot1x2 writes d[0] and d[2] only) */
  L("int32_t d[4]%s; /* (pixel p, o2), (p, o2 + 1), (p + 1, o2), (p + 1, o2 + 1) */",
    og % 2 ? " = {0, 0, 0, 0}" : "");
  if (og % 2) {
    L("const %s o1 = o2 + 1 < (gi + 1) * %lld ? o2 + 1 : o2;", I, og);
    L("if (o1 == o2)");
    L("  dy_q_dot1x2(pw, %s + o2 * %lld, %lld, d);", IN(3), k, k);
    L("else");
    L("  dy_q_dot2x2(pw, %s + o2 * %lld, %lld, d);", IN(3), k, k);
  } else {
    L("const %s o1 = o2 + 1;", I);
    L("dy_q_dot2x2(pw, %s + o2 * %lld, %lld, d);", IN(3), k, k);
  }
  /* the four stores written out (loops over them cost ~15 instructions
   * an output on a Cortex-M4): channel o2, then o1 */
  for (int c = 0; c < 2; c++) {
    L("%s{", c && og % 2 ? "if (o1 != o2) " : "");
    ctx->indent++;
    L("const %s o = o%d;", I, c ? 1 : 2);
    L("const int32_t bo = %s[o] - xz * wsum[o];", IN(8));
    for (int j = 0; j < 2; j++) {
      if (j && np % 2)
        L("if (p + 1 < %lld) { /* pixel p + 1 */", np);
      else
        L("{ /* pixel p%s */", j ? " + 1" : "");
      ctx->indent++;
      L("const %s oy = (p%s) / %lld, ox = (p%s) %% %lld;", I, j ? " + 1" : "", (long long)g->ow,
        j ? " + 1" : "", (long long)g->ow);
      char acc[32];
      snprintf(acc, sizeof acc, "bo + d[%d]", j * 2 + c);
      put_acc_store(ctx, g, acc, store, 1);
    }
    close_block(ctx, 1);
  }
  END();
  END();
}

/* The patch + dot form of qconv2d (see the header): filters of at least
 * DOT_MIN_K taps; smaller ones of at least BLOCK_MIN_K take the 2 x 2
 * block on the Cortex-M DSP and the direct loop elsewhere. */
enum { DOT_MIN_K = 16, BLOCK_MIN_K = 4 };
static dy_status conv_dot(dy_cg_ctx *ctx, dy_error *err, const dy_conv_geom *g,
                          const char *store, bool right) {
  long long cg = g->c / g->groups, og = g->o / g->groups, k = cg * g->kh * g->kw;
  dy_status s = put_row_sums(ctx, err, "wsum", const_data(ctx, 3), g->o, k);
  if (s)
    return s;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  const char *T = dy_ctype(x->dtype), *dot = dot_fn(x->dtype), *I = dy_qconv_index_type(g);
  put_zp(ctx, "xz", 2);
  if (k < DOT_MIN_K)
    L("(void)%s; /* the direct loop's alone */", IN(5));
  L("#if DY_Q_BLOCK2X2 /* the Cortex-M DSP: 2 pixels x 2 output channels a step */");
  L("%s patch[%lld]; /* two output pixels' input taps, (ci, ky, kx) each */", T, 2 * k);
  L("uint32_t pw[%lld]; /* the two as 16-bit pairs (dy_q_pack2) */", k);
  if (k < DOT_MIN_K) { /* elsewhere the direct loop, as for any filter this small */
    dy_qconv_open_sample(ctx, g);
    FOR("for (%s gi = 0; gi < %lld; gi++) {", I, (long long)g->groups);
    put_block2x2(ctx, g, store);
    END();
    END();
    L("#else");
    char init[64];
    snprintf(init, sizeof init, "%s[o]", IN(8));
    conv_direct(ctx, g, 3, 5, "xz", store, init, "wsum");
    L("#endif");
    return DY_OK;
  }
  L("#else");
  L("%s patch[%lld]; /* one output pixel's input taps, (ci, ky, kx) */", T, k);
  L("#endif");
  /* 16 output pixels a panel (AVX-512 VNNI) where there are 16 and the
   * requantization shifts right only */
  bool panel = right && (long long)g->oh * g->ow >= 16;
  if (panel) {
    L("#if DY_Q_PANEL16 && !DY_Q_BLOCK2X2 /* 16 output pixels x 8 channels a step */");
    L("{");
    ctx->indent++;
    dy_qconv_panel_args pa = {IN(3), IN(8), OUT(0), dy_type_numel(&in_var(ctx, 4)->type) > 1,
                              x->dtype == DY_I8, dy_cg_out_type(ctx, 0)->dtype == DY_U8};
    dy_qconv_panel16(ctx, g, &pa);
    L("(void)patch;");
    close_block(ctx, 1);
    L("#else");
  }
  dy_qconv_open_sample(ctx, g);
  FOR("for (%s gi = 0; gi < %lld; gi++) {", I, (long long)g->groups);
  L("#if DY_Q_BLOCK2X2");
  put_block2x2(ctx, g, store);
  L("#else");
  FOR("for (%s oy = 0; oy < %lld; oy++)", I, (long long)g->oh);
  FOR("for (%s ox = 0; ox < %lld; ox++) {", I, (long long)g->ow);
  dy_qconv_gather(ctx, g, "patch");
  /* two output channels a dot2 (one pass over the patch); an odd last one alone */
  L("for (%s o2 = gi * %lld; o2 < (gi + 1) * %lld; o2 += 2) {", I, og, og);
  ctx->indent++;
  L("int32_t d[2];");
  if (og % 2) {
    L("if (o2 + 1 == (gi + 1) * %lld)", og);
    L("  d[0] = %s(patch, %s + o2 * %lld, %lld);", dot, IN(3), k, k);
    L("else");
    L("  %s(patch, %s + o2 * %lld, %s + (o2 + 1) * %lld, %lld, d);", dot2_fn(x->dtype), IN(3), k,
      IN(3), k, k);
  } else {
    L("%s(patch, %s + o2 * %lld, %s + (o2 + 1) * %lld, %lld, d);", dot2_fn(x->dtype), IN(3), k,
      IN(3), k, k);
  }
  L("for (%s o = o2; o < o2 + 2 && o < (gi + 1) * %lld; o++) {", I, og);
  ctx->indent++;
  char acc[64];
  snprintf(acc, sizeof acc, "%s[o] + d[o - o2] - xz * wsum[o]", IN(8));
  put_acc_store(ctx, g, acc, store, 2);
  END();
  END();
  L("#endif");
  END();
  END();
  if (panel)
    L("#endif");
  return DY_OK;
}

/* The depthwise form (one input channel a group, one output channel a
 * group, zero weight zero points, at most 25 taps; see dw_form): per
 * channel, the plane is rewritten once into plane[HP][WP] of 16-bit pairs
 * (x[iy][ix], x[iy][ix + dw]), padded with the x zero point, so that
 * every output reads its taps without a bounds check (the border peeled
 * into the padding: x_zp * w adds what x_zp * wsum takes away; a plane
 * too large for DW_MAX_PLANE is made and used a band of output rows at a
 * time). Each
 * output is then one dy_q_mac2 (SMLAD on a Cortex-M4) per pair of taps
 * of a filter row (an odd last tap paired with a zero weight), the
 * channel's weight pairs held in locals. */
enum { DW_MAX_TAPS = 25, DW_MAX_PLANE = 1024 }; /* words of the plane: 4 KB of stack */

/* The plane's width wp, and the output rows one plane holds (*strip: all
 * oh when the whole padded plane fits, else bands of that many rows, each
 * plane then the band's input rows; 0 when not even one row fits) and its
 * height hp. */
static void dw_plane_size(const dy_conv_geom *g, long long *strip, long long *hp, long long *wp) {
  long long taps_h = (long long)(g->kh - 1) * g->dh + 1;
  *wp = (long long)(g->ow - 1) * g->sw + (long long)(g->kw - 1) * g->dw + 1;
  *strip = DW_MAX_PLANE / *wp < taps_h ? 0 : (DW_MAX_PLANE / *wp - taps_h) / g->sh + 1;
  *strip = *strip > g->oh ? g->oh : *strip;
  *hp = (*strip - 1) * g->sh + taps_h;
}

static bool dw_form(dy_cg_ctx *ctx, const dy_conv_geom *g) {
  long long strip, hp, wp;
  dw_plane_size(g, &strip, &hp, &wp);
  return dot_form(ctx, dy_cg_in_type(ctx, 0)->dtype, 3, 5) && g->c == g->groups &&
         g->o == g->groups && g->kh * g->kw <= DW_MAX_TAPS && strip > 0;
}

static void conv_depthwise(dy_cg_ctx *ctx, const dy_conv_geom *g, const char *store) {
  const dy_type *x = dy_cg_in_type(ctx, 0);
  const char *I = dy_qconv_index_type(g);
  long long strip, hp, wp, dw = g->dw, taps = g->kh * g->kw;
  dw_plane_size(g, &strip, &hp, &wp);
  bool bands = strip < g->oh;
  long long rl = wp + dw, c_lo = g->pl < rl ? g->pl : rl;
  long long c_hi = g->pl + g->w < rl ? g->pl + g->w : rl;
  long long n_pairs = (g->kw + 1) / 2;
  put_zp(ctx, "xz", 2);
  dy_cg_line(ctx, "const uint32_t zz = dy_q_pair(xz, xz);");
  dy_cg_line(ctx, "int32_t row[%lld]; /* one input row, padded */", rl);
  dy_cg_line(ctx, "uint32_t plane[%lld]; /* [%lld][%lld]: (x[iy][ix], x[iy][ix + %lld]) pairs, padded with xz */",
             hp * wp, hp, wp, dw);
  dy_qconv_open_sample(ctx, g);
  FOR("for (%s o = 0; o < %lld; o++) {", I, (long long)g->o);
  L("const %s *xc = xb + o * %lld; /* channel o */", dy_ctype(x->dtype), (long long)g->h * g->w);
  L("const int8_t *wr = %s + o * %lld;", IN(3), taps);
  L("const int32_t b0 = %s[o] - xz * wsum[o];", IN(8));
  /* the weight pairs: row ky, taps kx and kx + 1 (0 past the row's end) */
  for (long long ky = 0; ky < g->kh; ky++)
    for (long long p = 0; p < n_pairs; p++) {
      long long kx = 2 * p;
      char hi[32] = "0";
      if (kx + 1 < g->kw)
        snprintf(hi, sizeof hi, "wr[%lld]", ky * g->kw + kx + 1);
      L("const uint32_t w%lld_%lld = dy_q_pair(wr[%lld], %s);", ky, p, ky * g->kw + kx, hi);
    }
  if (bands) { /* a band of output rows [oy0, oy0 + ns) at a time */
    FOR("for (%s oy0 = 0; oy0 < %lld; oy0 += %lld) {", I, (long long)g->oh, strip);
    L("const %s ns = %lld - oy0 < %lld ? %lld - oy0 : %lld;", I, (long long)g->oh, strip,
      (long long)g->oh, strip);
    L("for (%s r = 0; r < (ns - 1) * %lld + %lld; r++) {", I, (long long)g->sh,
      hp - (strip - 1) * g->sh);
    L("  const %s iy = oy0 * %lld - %lld + r;", I, (long long)g->sh, (long long)g->pt);
  } else {
    L("for (%s r = 0; r < %lld; r++) {", I, hp);
    L("  const %s iy = r - %lld;", I, (long long)g->pt);
  }
  L("  uint32_t *pr = plane + r * %lld;", wp);
  L("  %s c = 0;", I);
  L("  if (iy < 0 || iy >= %lld) { /* a row of padding */", (long long)g->h);
  L("    for (; c < %lld; c++)", wp);
  L("      pr[c] = zz;");
  L("    continue;");
  L("  }");
  if (c_lo > 0) {
    L("  for (; c < %lld; c++)", c_lo);
    L("    row[c] = xz;");
  }
  if (c_hi > c_lo) {
    L("  for (; c < %lld; c++)", c_hi);
    L("    row[c] = xc[iy * %lld + c - %lld];", (long long)g->w, (long long)g->pl);
  }
  if (rl > c_hi) {
    L("  for (; c < %lld; c++)", rl);
    L("    row[c] = xz;");
  }
  L("  for (c = 0; c < %lld; c++)", wp);
  L("    pr[c] = dy_q_pair(row[c], row[c + %lld]);", dw);
  L("}");
  if (bands)
    L("for (%s oy = oy0; oy < oy0 + ns; oy++)", I);
  else
    FOR("for (%s oy = 0; oy < %lld; oy++)", I, (long long)g->oh);
  if (bands)
    ctx->indent++;
  FOR("for (%s ox = 0; ox < %lld; ox++) {", I, (long long)g->ow);
  L("const uint32_t *pp = plane + %s * %lld + ox * %lld;", bands ? "(oy - oy0)" : "oy",
    (long long)g->sh * wp, (long long)g->sw);
  L("int32_t acc = b0;");
  for (long long ky = 0; ky < g->kh; ky++)
    for (long long p = 0; p < n_pairs; p++)
      L("acc = dy_q_mac2(acc, pp[%lld], w%lld_%lld);", ky * g->dh * wp + 2 * p * dw, ky, p);
  put_store(ctx, g, store);
  END();
  if (bands)
    ctx->indent--; /* the rows of the band: a plain loop */
  END();
  END();
  END();
}

static dy_conv_geom geom_of(dy_cg_ctx *ctx, int wi) {
  dy_conv2d_attrs a = dy_conv2d_attrs_get(ctx->op);
  return dy_conv2d_geom(dy_cg_in_type(ctx, 0), dy_cg_in_type(ctx, wi), &a);
}

dy_status dy_emit_qconv2d(dy_cg_ctx *ctx, dy_error *err) {
  dy_qconv2d_attrs a = dy_qconv2d_attrs_get(ctx->op);
  char store[256];
  bool right;
  dy_status s = put_requant(ctx, err, a.act_min, a.act_max, "o", store, sizeof store, &right);
  if (s)
    return s;
  dy_conv_geom g = geom_of(ctx, 3);
  int64_t k = g.c / g.groups * g.kh * g.kw;
  if (dw_form(ctx, &g)) {
    if ((s = put_row_sums(ctx, err, "wsum", const_data(ctx, 3), g.o, k)))
      return s;
    /* 16 outputs at a time in exact f32 on AVX-512 */
    bool dw16 = right && dy_qconv_dw16_fits(&g);
    if (dw16) {
      L("#if DY_Q_PANEL16 && !DY_Q_BLOCK2X2 /* 16 outputs of a row at a time */");
      L("{");
      ctx->indent++;
      put_zp(ctx, "xz", 2);
      dy_qconv_panel_args pa = {IN(3), IN(8), OUT(0), dy_type_numel(&in_var(ctx, 4)->type) > 1,
                                dy_cg_in_type(ctx, 0)->dtype == DY_I8,
                                dy_cg_out_type(ctx, 0)->dtype == DY_U8};
      dy_qconv_dw16(ctx, &g, &pa);
      L("(void)wsum;");
      close_block(ctx, 1);
      L("#else");
    }
    conv_depthwise(ctx, &g, store);
    if (dw16)
      L("#endif");
    return DY_OK;
  }
  if (dot_form(ctx, dy_cg_in_type(ctx, 0)->dtype, 3, 5) && k >= BLOCK_MIN_K)
    return conv_dot(ctx, err, &g, store, right);
  const char *wsum = NULL;
  if (dot_form(ctx, dy_cg_in_type(ctx, 0)->dtype, 3, 5)) {
    if ((s = put_row_sums(ctx, err, "wsum", const_data(ctx, 3), g.o, k)))
      return s;
    wsum = "wsum";
  }
  put_zp(ctx, "xz", 2);
  char init[64];
  snprintf(init, sizeof init, "%s[o]", IN(8));
  conv_direct(ctx, &g, 3, 5, "xz", store, init, wsum);
  return DY_OK;
}

dy_status dy_emit_conv_integer(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  dy_conv_geom g = geom_of(ctx, 1);
  put_zp(ctx, "xz", 2);
  char store[64];
  snprintf(store, sizeof store, "%s[yi] = acc;", OUT(0));
  conv_direct(ctx, &g, 1, 3, "xz", store, "0", NULL);
  return DY_OK;
}

/* ---- qmatmul, matmul_integer ---- */

/* a [.., M, K] times b ([K, N], [N, K] when trans, or batched like a). */
static void matmul_direct(dy_cg_ctx *ctx, int bi, int zi, bool trans, const char *store,
                          const char *init) {
  const dy_type *ta = dy_cg_in_type(ctx, 0), *tb = dy_cg_in_type(ctx, bi);
  const dy_type *to = dy_cg_out_type(ctx, 0);
  long long k = ta->shape[ta->rank - 1];
  long long nn = to->shape[to->rank - 1];
  bool bz_scalar = dy_type_numel(dy_cg_in_type(ctx, zi)) == 1;
  char b1[64], m[64]; /* M may be the dynamic batch (a [-1, K]) */
  dy_ext_str(ctx, dy_ext_range(ta, ta->rank - 2, ta->rank - 1), m, sizeof m);
  FOR("for (int64_t bt = 0; bt < %s; bt++)",
      dy_ext_str(ctx, dy_ext_range(ta, 0, ta->rank - 2), b1, sizeof b1));
  FOR("for (int64_t i = 0; i < %s; i++)", m);
  FOR("for (int64_t j = 0; j < %lld; j++) {", nn);
  L("const int32_t bz = %s[%s];", IN(zi), bz_scalar ? "0" : "j");
  L("const int64_t yi = (bt * %s + i) * %lld + j;", m, nn);
  L("int32_t acc = %s;", init);
  FOR("for (int64_t kk = 0; kk < %lld; kk++)", k);
  L("acc += ((int32_t)%s[(bt * %s + i) * %lld + kk] - az) *", IN(0), m, k);
  char boff[64] = "";
  if (tb->rank > 2) /* one b per batch */
    snprintf(boff, sizeof boff, "bt * %lld + ", k * nn);
  if (trans)
    L("       ((int32_t)%s[%sj * %lld + kk] - bz);", IN(bi), boff, k);
  else
    L("       ((int32_t)%s[%skk * %lld + j] - bz);", IN(bi), boff, nn);
  END();
  L("%s", store);
  END();
  END();
  END();
}

dy_status dy_emit_qmatmul(dy_cg_ctx *ctx, dy_error *err) {
  dy_qmatmul_attrs a = dy_qmatmul_attrs_get(ctx->op);
  char store[256];
  dy_status s = put_requant(ctx, err, a.act_min, a.act_max, "j", store, sizeof store, NULL);
  if (s)
    return s;
  const dy_type *ta = dy_cg_in_type(ctx, 0), *tb = dy_cg_in_type(ctx, 3);
  const dy_type *to = dy_cg_out_type(ctx, 0);
  long long m = ta->shape[ta->rank - 2], k = ta->shape[ta->rank - 1];
  long long nn = to->shape[to->rank - 1];
  put_zp(ctx, "az", 2);
  if (dot_form(ctx, ta->dtype, 3, 5) && tb->rank == 2 && a.transpose_y && k >= 16) {
    if ((s = put_row_sums(ctx, err, "bsum", const_data(ctx, 3), nn, k)))
      return s;
    char b1[64];
    dy_cg_line(ctx, "for (int64_t r = 0; r < %s; r++) /* rows of a */",
               dy_ext_str(ctx, dy_ext_range(ta, 0, ta->rank - 1), b1, sizeof b1));
    ctx->indent++; /* the rows' loop has a comment: a plain one */
    FOR("for (int64_t j = 0; j < %lld; j++) {", nn);
    L("const int32_t acc = %s[j] + %s(%s + r * %lld, %s + j * %lld, %lld) - az * bsum[j];", IN(8),
      dot_fn(ta->dtype), IN(0), k, IN(3), k, k);
    L("const int64_t yi = r * %lld + j;", nn);
    L("%s", store);
    END();
    ctx->indent--;
    (void)m;
    return DY_OK;
  }
  char init[64];
  snprintf(init, sizeof init, "%s[j]", IN(8));
  matmul_direct(ctx, 3, 5, a.transpose_y != 0, store, init);
  return DY_OK;
}

dy_status dy_emit_matmul_integer(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  put_zp(ctx, "az", 2);
  char store[64];
  snprintf(store, sizeof store, "%s[yi] = acc;", OUT(0));
  matmul_direct(ctx, 1, 3, false, store, "0");
  return DY_OK;
}

/* ---- qadd, qmul ---- */

/* y = op(a, b) broadcast numpy-style; the body reads va and vb (the
 * zero-point-corrected elements) and writes y[i]. */
static void qbinary_loops(dy_cg_ctx *ctx, const char *expr) {
  const dy_type *ta = dy_cg_in_type(ctx, 0), *tb = dy_cg_in_type(ctx, 3);
  const dy_type *to = dy_cg_out_type(ctx, 0);
  int r = to->rank;
  dy_ext ext[DY_MAX_DIMS];
  dy_idxbuf ia = {0}, ib = {0}, io = {0};
  dy_ext sa = dy_ext_one(), sb = dy_ext_one(), so = dy_ext_one();
  for (int d = r - 1; d >= 0; d--) {
    int da = d - (r - ta->rank), db = d - (r - tb->rank);
    ext[d] = dy_ext_dim(to->shape[d]);
    dy_idx_add(ctx, &io, dy_loop_var[d], so);
    so = dy_ext_mul(so, ext[d]);
    if (da >= 0 && ta->shape[da] != 1)
      dy_idx_add(ctx, &ia, dy_loop_var[d], sa);
    if (da >= 0)
      sa = dy_ext_mul(sa, dy_ext_dim(ta->shape[da]));
    if (db >= 0 && tb->shape[db] != 1)
      dy_idx_add(ctx, &ib, dy_loop_var[d], sb);
    if (db >= 0)
      sb = dy_ext_mul(sb, dy_ext_dim(tb->shape[db]));
  }
  dy_cg_open_loops(ctx, r, ext, dy_loop_var);
  L("{");
  L("  const int32_t va = (int32_t)%s[%s] - az, vb = (int32_t)%s[%s] - bz;", IN(0),
    dy_idx_str(&ia), IN(3), dy_idx_str(&ib));
  L("  %s[%s] = (%s)dy_q_clamp(dy_q_add_sat(%s, y_zp), lo, hi);", OUT(0), dy_idx_str(&io), dy_ctype(to->dtype),
    expr);
  L("}");
  dy_cg_close_loops(ctx, r);
}

static dy_status qbinary(dy_cg_ctx *ctx, dy_error *err, bool add) {
  dy_status s;
  if ((s = need_const(ctx, err, 1)) || (s = need_const(ctx, err, 4)) ||
      (s = need_const(ctx, err, 6)))
    return s;
  dy_qadd_attrs at = dy_qadd_attrs_get(ctx->op); /* qmul's are the same */
  int32_t lo, hi, m[3], sh[3];
  dy_quant_act_range(dy_cg_out_type(ctx, 0)->dtype, at.act_min, at.act_max, &lo, &hi);
  float as = scale_at(ctx, 1, 0), bs = scale_at(ctx, 4, 0), ys = scale_at(ctx, 6, 0);
  *ctx->uses |= DY_USES_QFIXED;
  put_zp(ctx, "az", 2);
  put_zp(ctx, "bz", 5);
  put_zp(ctx, "y_zp", 7);
  dy_cg_line(ctx, "const int32_t lo = %ld, hi = %ld;", (long)lo, (long)hi);
  char expr[512];
  if (add) {
    dy_quant_add_params(as, bs, ys, m, sh);
    dy_cg_line(ctx, "/* TFLite ADD: both inputs << %d, rescaled to twice the larger scale */",
               DY_QADD_LEFT_SHIFT);
    snprintf(expr, sizeof expr,
             "dy_q_mul_by_qm(dy_q_mul_by_qm(va * %d, %ld, %ld) + dy_q_mul_by_qm(vb * %d, %ld, "
             "%ld), %ld, %ld)",
             1 << DY_QADD_LEFT_SHIFT, (long)m[0], (long)sh[0], 1 << DY_QADD_LEFT_SHIFT,
             (long)m[1], (long)sh[1], (long)m[2], (long)sh[2]);
  } else {
    dy_quant_multiplier((double)as * (double)bs / (double)ys, &m[2], &sh[2]);
    dy_cg_line(ctx, "/* TFLite MUL: a_scale * b_scale / y_scale */");
    snprintf(expr, sizeof expr, "dy_q_mul_by_qm(va * vb, %ld, %ld)", (long)m[2], (long)sh[2]);
  }
  qbinary_loops(ctx, expr);
  return DY_OK;
}

dy_status dy_emit_qadd(dy_cg_ctx *ctx, dy_error *err) { return qbinary(ctx, err, true); }

dy_status dy_emit_qmul(dy_cg_ctx *ctx, dy_error *err) { return qbinary(ctx, err, false); }

/* ---- qsoftmax ---- */

dy_status dy_emit_qsoftmax(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s;
  if ((s = need_const(ctx, err, 1)) || (s = need_const(ctx, err, 3)) ||
      (s = need_const(ctx, err, 4)))
    return s;
  const dy_type *t = dy_cg_in_type(ctx, 0);
  float ys = scale_at(ctx, 3, 0);
  int32_t yz = dy_quant_value(t->dtype, const_data(ctx, 4), 0);
  if (ys != 1.0f / 256.0f || yz != (t->dtype == DY_U8 ? 0 : -128))
    return dy_error_at(err, ctx->op, DY_STATUS_UNSUPPORTED,
                       "codegen: qsoftmax: the output must be scale 1/256 with zero point %d "
                       "(TFLite's), got %g and %ld", t->dtype == DY_U8 ? 0 : -128, (double)ys,
                       (long)yz);
  int32_t mult, lshift, diff_min;
  dy_quant_softmax_params(scale_at(ctx, 1, 0), &mult, &lshift, &diff_min);
  int64_t axis = dy_qsoftmax_attrs_get(ctx->op).axis;
  int ax = (int)(axis < 0 ? axis + t->rank : axis);
  char b1[64], b2[64], bn[64]; /* outer, inner and the axis' extents (the axis may be the batch) */
  dy_ext_str(ctx, dy_ext_range(t, ax, ax + 1), bn, sizeof bn);
  *ctx->uses |= DY_USES_QFIXED;
  dy_cg_line(ctx, "/* TFLite SOFTMAX (beta 1): x_scale * 2^26 as multiplier %ld, left shift %ld;",
             (long)mult, (long)lshift);
  dy_cg_line(ctx, " * differences below %ld from the row's maximum count as 0 */", (long)diff_min);
  FOR("for (int64_t o = 0; o < %s; o++)", dy_ext_str(ctx, dy_ext_range(t, 0, ax), b1, sizeof b1));
  FOR("for (int64_t k = 0; k < %s; k++)",
      dy_ext_str(ctx, dy_ext_range(t, ax + 1, t->rank), b2, sizeof b2));
  L("dy_q_softmax_row(%s + o * %s * %s + k, %s + o * %s * %s + k, %s, %s, %d, %ld, %ld, %ld);",
    IN(0), bn, b2, OUT(0), bn, b2, bn, b2, t->dtype == DY_U8, (long)mult, (long)lshift,
    (long)diff_min);
  END();
  END();
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

/* a quantized binary op's operands */
#define QBINARY_ROLES                                                                    \
  {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point", \
   "bias"}

const dy_cg_op dy_cg_op_quantize_linear = {.emit = dy_emit_quantize_linear,
                                           .roles = {"x", "scale", "zero_point"}};
const dy_cg_op dy_cg_op_dequantize_linear = {.emit = dy_emit_dequantize_linear,
                                             .roles = {"x", "scale", "zero_point"}};
const dy_cg_op dy_cg_op_qconv2d = {.emit = dy_emit_qconv2d,
                                   .roles = {"x", "x_scale", "x_zero_point", "w", "w_scale",
                                             "w_zero_point", "y_scale", "y_zero_point", "bias"}};
const dy_cg_op dy_cg_op_conv_integer = {.emit = dy_emit_conv_integer,
                                        .roles = {"x", "w", "x_zero_point", "w_zero_point"}};
const dy_cg_op dy_cg_op_qmatmul = {.emit = dy_emit_qmatmul, .roles = QBINARY_ROLES};
const dy_cg_op dy_cg_op_matmul_integer = {.emit = dy_emit_matmul_integer,
                                          .roles = {"a", "b", "a_zero_point", "b_zero_point"}};
const dy_cg_op dy_cg_op_qadd = {.emit = dy_emit_qadd, .roles = QBINARY_ROLES};
const dy_cg_op dy_cg_op_qmul = {.emit = dy_emit_qmul, .roles = QBINARY_ROLES};
const dy_cg_op dy_cg_op_qsoftmax = {.emit = dy_emit_qsoftmax,
                                    .roles = {"x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"}};
