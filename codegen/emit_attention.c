/* emit_attention.c - the emitter of fused_attention (ops_fused.def; the
 * pass fuse-attention makes it from matmul, scale, softmax, matmul).
 *
 * Per group (a head), ATT_ROWS = 8 queries at a time:
 *   1. k of the group transposed once into the scratch (kt: D x LKP, LKP
 *      = the keys rounded up to a vector, zero-padded), so the scores of 8
 *      queries against DY_VW keys are 8 vector accumulators fed by one
 *      load of kt and 8 broadcasts of q per feature (no dot products
 *      reduced across lanes, no packing of B per matmul call);
 *   2. the 8 rows of scores (8 x LKP floats, in L1) scaled, masked and
 *      turned into probabilities in place (vector max, exp, sum);
 *   3. the output rows as 8 vector accumulators per DY_VW features of v,
 *      v read row by row where it lies (a strided read: in layout "lhd",
 *      [B, L, H, D], the heads sit between sequence and features, so
 *      neither q, k, v nor the output is transposed), scaled by 1 / sum
 *      at the store.
 * The scores never reach memory beyond the scratch, and no transposes or
 * softmax pass of their own remain. Rows of a last partial block compute
 * on a repeated query and are not stored. D and Dv must be static; the
 * sequence lengths and the group count may be symbolic (the scratch is
 * sized for the keys' bound).
 */
#include <stdio.h>
#include <string.h>

#include "floor1_kernels.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))

enum { ATT_ROWS = 8 };

typedef long long ll;

/* The keys' largest count, rounded up to 16 floats (the widest vector). */
static int64_t keys_padded(const dy_program *p, const dy_op *op, int64_t max_batch) {
  const dy_type *k = &p->vars[op->inputs[1]]->type;
  bool lhd = strcmp(dy_fused_attention_attrs_get(op).layout, "lhd") == 0;
  int64_t lk = k->shape[k->rank - (lhd ? 3 : 2)], vals[DY_MAX_SYMS], n = 0;
  dy_program_sym_bounds(p, max_batch, max_batch, vals);
  if (!dy_dim_eval(lk, vals, &n) || n < 0)
    return -1;
  return (n + 15) / 16 * 16;
}

int64_t dy_cg_attention_scratch(const dy_program *p, const dy_op *op, int64_t max_batch) {
  const dy_type *q = &p->vars[op->inputs[0]]->type;
  int64_t lkp = keys_padded(p, op, max_batch), d = q->shape[q->rank - 1];
  if (lkp < 0 || d < 0)
    return 0; /* the emitter reports it */
  return (d + ATT_ROWS) * (lkp > 0 ? lkp : 16) * 4;
}

dy_status dy_emit_fused_attention(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_fused_attention_attrs a = dy_fused_attention_attrs_get(op);
  bool lhd = strcmp(a.layout, "lhd") == 0, mask = op->n_inputs == 4;
  const dy_type *q = dy_cg_in_type(ctx, 0), *k = dy_cg_in_type(ctx, 1),
                *v = dy_cg_in_type(ctx, 2);
  int r = q->rank;
  dy_ext de = dy_ext_dim(q->shape[r - 1]), dve = dy_ext_dim(v->shape[r - 1]);
  char scale[64];
  if (de.p || dve.p || !ctx->scratch || !dy_float_literal((float)a.scale, scale, sizeof scale))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                            "needs static feature sizes and a finite scale");
  ll d = de.k, dv = dve.k;
  char g[128], lq[128], lk[128];
  int ls = lhd ? r - 3 : r - 2; /* the sequence's axis */
  dy_ext_str(ctx, dy_ext_range(q, 0, ls), g, sizeof g);
  snprintf(lq, sizeof lq, "%s", dy_cg_dim(ctx, q, ls));
  snprintf(lk, sizeof lk, "%s", dy_cg_dim(ctx, k, ls));
  *ctx->uses |= DY_USES_SIMD;
  L("/* per group: softmax(q k^T * %s%s) v, %d queries at a time; k transposed into", scale,
    mask ? " + mask" : "", ATT_ROWS);
  L(" * the scratch (kt), the scores of the %d rows in the scratch (sc) and softmaxed", ATT_ROWS);
  L(" * there, then times v read in place (layout \"%s\") */", a.layout);
  L("const int64_t LQ = %s, LK = %s;", lq, lk);
  L("const int64_t LKP = (LK + DY_VW - 1) / DY_VW * DY_VW;");
  /* row strides, and each tensor's start of group g */
  if (lhd) {
    /* [B, L, H, D]: group g = (g / H, g % H) */
    L("const int64_t H = %s, G = %s * H;", dy_cg_dim(ctx, q, r - 2), g);
    L("const int64_t QR = H * %lld, KR = H * %lld, VR = H * %lld, OR = H * %lld;", d, d, dv,
      dv);
  } else {
    L("const int64_t G = %s;", g);
    L("const int64_t QR = %lld, KR = %lld, VR = %lld, OR = %lld;", d, d, dv, dv);
  }
  L("float *kt = scratch, *sc = scratch + %lld * LKP;", d);
  L("const dy_vf vscale = dy_vset(%s);", scale);
  OPEN("for (int64_t g = 0; g < G; g++) {");
  if (lhd) {
    L("const int64_t gb = g / H, gh = g %% H;");
    L("const float *q = in0 + (gb * LQ * H + gh) * %lld, *k = in1 + (gb * LK * H + gh) * %lld;", d,
      d);
    L("const float *v = in2 + (gb * LK * H + gh) * %lld;", dv);
    L("float *o = out0 + (gb * LQ * H + gh) * %lld;", dv);
  } else {
    L("const float *q = in0 + g * LQ * %lld, *k = in1 + g * LK * %lld;", d, d);
    L("const float *v = in2 + g * LK * %lld;", dv);
    L("float *o = out0 + g * LQ * %lld;", dv);
  }
  L("for (int64_t j = 0; j < LK; j++)");
  L("  for (int64_t c = 0; c < %lld; c++)", d);
  L("    kt[c * LKP + j] = k[j * KR + c];");
  L("for (int64_t j = LK; j < LKP; j++)");
  L("  for (int64_t c = 0; c < %lld; c++)", d);
  L("    kt[c * LKP + j] = 0.0f;");
  OPEN("for (int64_t i0 = 0; i0 < LQ; i0 += %d) {", ATT_ROWS);
  L("const int64_t nr = LQ - i0 < %d ? LQ - i0 : %d;", ATT_ROWS, ATT_ROWS);
  L("float inv[%d] = {0.0f};", ATT_ROWS);
  L("const float *q0 = q + i0 * QR;");
  for (int i = 1; i < ATT_ROWS; i++)
    L("const float *q%d = %d < nr ? q%d + QR : q0;", i, i, i - 1);
  L("/* the scores: %d rows x DY_VW keys in registers per step */", ATT_ROWS);
  OPEN("for (int64_t j = 0; j < LKP; j += DY_VW) {");
  L("dy_vf a0 = dy_vset(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;");
  OPEN("for (int64_t c = 0; c < %lld; c++) {", d);
  L("const dy_vf kv = dy_vload(kt + c * LKP + j);");
  for (int i = 0; i < ATT_ROWS; i++)
    L("a%d = dy_vfma(dy_vset(q%d[c]), kv, a%d);", i, i, i);
  CLOSE();
  for (int i = 0; i < ATT_ROWS; i++)
    L("dy_vstore(sc + %d * LKP + j, dy_vmul(a%d, vscale));", i, i);
  CLOSE();
  L("/* softmax of each row in place; inv = 1 / its sum */");
  OPEN("for (int64_t r = 0; r < nr; r++) {");
  L("float *s = sc + r * LKP;");
  if (mask)
    L("const float *m = in3 + (i0 + r) * LK;");
  L("int64_t j = 0;");
  L("float mx = s[0]%s;", mask ? " + m[0]" : "");
  L("dy_vf vx = dy_vset(mx), vs = dy_vset(0.0f);");
  OPEN("for (; j + DY_VW <= LK; j += DY_VW) {");
  if (mask) {
    L("const dy_vf t = dy_vadd(dy_vload(s + j), dy_vload(m + j));");
    L("dy_vstore(s + j, t);");
    L("vx = dy_vmax(vx, t);");
  } else {
    L("vx = dy_vmax(vx, dy_vload(s + j));");
  }
  CLOSE();
  L("mx = dy_vhmax(vx);");
  OPEN("for (; j < LK; j++) {");
  if (mask)
    L("s[j] += m[j];");
  L("mx = s[j] > mx ? s[j] : mx;");
  CLOSE();
  L("vx = dy_vset(mx);");
  OPEN("for (j = 0; j + DY_VW <= LK; j += DY_VW) {");
  L("const dy_vf e = dy_vexp_neg(dy_vsub(dy_vload(s + j), vx));");
  L("dy_vstore(s + j, e);");
  L("vs = dy_vadd(vs, e);");
  CLOSE();
  L("float sum = dy_vsum(vs);");
  OPEN("for (; j < LK; j++) {");
  L("s[j] = dy_expf(s[j] - mx);");
  L("sum += s[j];");
  CLOSE();
  L("inv[r] = 1.0f / sum;");
  CLOSE();
  L("/* the output rows: %d rows x DY_VW features of v in registers per step */", ATT_ROWS);
  L("int64_t c = 0;");
  OPEN("for (; c + DY_VW <= %lld; c += DY_VW) {", dv);
  L("dy_vf b0 = dy_vset(0.0f), b1 = b0, b2 = b0, b3 = b0, b4 = b0, b5 = b0, b6 = b0, b7 = b0;");
  OPEN("for (int64_t j = 0; j < LK; j++) {");
  L("const dy_vf vv = dy_vload(v + j * VR + c);");
  for (int i = 0; i < ATT_ROWS; i++)
    L("b%d = dy_vfma(dy_vset(sc[%d * LKP + j]), vv, b%d);", i, i, i);
  CLOSE();
  for (int i = 0; i < ATT_ROWS; i++)
    L("if (%d < nr) dy_vstore(o + (i0 + %d) * OR + c, dy_vmul(b%d, dy_vset(inv[%d])));", i, i,
      i, i);
  CLOSE();
  OPEN("for (; c < %lld; c++)", dv);
  OPEN("for (int64_t r = 0; r < nr; r++) {");
  L("float acc = 0.0f;");
  L("for (int64_t j = 0; j < LK; j++)");
  L("  acc += sc[r * LKP + j] * v[j * VR + c];");
  L("o[(i0 + r) * OR + c] = acc * inv[r];");
  CLOSE();
  ctx->indent--;
  CLOSE();
  CLOSE();
  return DY_OK;
}
