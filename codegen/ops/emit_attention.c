/* emit_attention.c - floor 2: the emitter of fused_attention
 * (ops_fused.def; the pass fuse-attention makes it from matmul, scale,
 * softmax, matmul).
 *
 * Both products run on the GEMM micro-kernels (dy_gemm_tile, emit_gemm.c:
 * up to 12 rows x a panel of 16 columns in registers, A read in place
 * through two strides, B a packed panel [k][16]). Per group (a head):
 *   1. v packed once into panels of 16 features (vector copies of its
 *      rows, zero-padded past Dv);
 *   2. per block of 16 queries, q^T packed into one panel and scaled
 *      (qt[c][i], the block's only scalar copy), and the scores transposed,
 *      sc[j][i] = k_j . q_i, by dy_gemm_tile with A = k read in place (12
 *      keys a tile) and B = qt: the queries lie across the vector lanes, so
 *   3. the softmax of each query runs down a column: the max, exp (the
 *      mathlib's dy_vexp_neg) and sum are vector operations on whole rows
 *      of 16 queries, no reduction across lanes; the probabilities are
 *      scaled by 1 / sum in place;
 *   4. the output rows o_i = sum_j sc[j][i] v_j by dy_gemm_tile with A =
 *      sc read through strides (rsa 1, csa 16) and B = v's panels, stored
 *      straight into the output rows.
 * The scores of a block (keys x 16 floats) stay in the scratch (L1 for a
 * few hundred keys); no transposes or softmax pass of their own remain.
 * Layouts differ in strides only: "" [G.., L, D]; "lhd" [B, L, H, D]
 * (the heads between sequence and features, as the reshapes into heads
 * leave them) and its packed form (attribute packed = H, D, Dv, q, k and
 * v offsets: the rows of one [B, L, W] tensor, e.g. the QKV projection's
 * output, each head's features at an offset of the row; no slices). D and
 * Dv must be static; the sequence lengths and the group count may be
 * symbolic (the scratch is sized for the keys' bound).
 */
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))

enum { NR = 16, /* a panel's columns: the micro-kernel's width */
       QB = 32, /* queries per block: two panels of q^T */
       TR = DY_GEMM_MR /* rows per micro-kernel call, at most */ };

typedef long long ll;

/* The sequence's axis of fused_attention's inputs, and its feature sizes
 * (-1 if symbolic). */
static int seq_axis(const dy_program *p, const dy_op *op, int64_t *d, int64_t *dv) {
  dy_fused_attention_attrs a = dy_fused_attention_attrs_get(op);
  const dy_type *q = &p->vars[op->inputs[0]]->type, *v = &p->vars[op->inputs[2]]->type;
  int r = q->rank;
  if (a.n_packed == 6) {
    *d = a.packed[1], *dv = a.packed[2];
    return r - 2;
  }
  *d = q->shape[r - 1], *dv = v->shape[r - 1];
  return strcmp(a.layout, "lhd") == 0 ? r - 3 : r - 2;
}

/* v's panels (keys x 16 per 16 features), one block's q^T (D x 16) and
 * its scores (keys x 16), for the keys' bound (dy_program_dim_bound). */
static int64_t attention_scratch(const dy_program *p, const dy_op *op, int threads) {
  int64_t d, dv;
  int ls = seq_axis(p, op, &d, &dv);
  int64_t lk = dy_program_dim_bound(p, p->vars[op->inputs[1]]->type.shape[ls]);
  if (lk < 0 || d < 0 || dv < 0)
    return 0; /* the emitter reports it */
  return (((dv + NR - 1) / NR) * NR * lk + (lk + d) * QB) * 4;
}

dy_status dy_emit_fused_attention(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_fused_attention_attrs a = dy_fused_attention_attrs_get(op);
  bool lhd = strcmp(a.layout, "lhd") == 0, mask = op->n_inputs == 4, packed = a.n_packed == 6;
  const dy_type *q = dy_cg_in_type(ctx, 0), *k = dy_cg_in_type(ctx, 1);
  int r = q->rank;
  int64_t d64, dv64;
  int ls = seq_axis(ctx->p, op, &d64, &dv64); /* the sequence's axis */
  ll d = d64, dv = dv64;
  char scale[64];
  if (d < 0 || dv < 0 || !ctx->scratch || !dy_float_literal((float)a.scale, scale, sizeof scale))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                            "needs static feature sizes and a finite scale");
  ll nvp = (dv + NR - 1) / NR;
  char g[128], lq[128], lk[128], h[128];
  dy_ext_str(ctx, dy_ext_range(q, 0, ls), g, sizeof g);
  snprintf(lq, sizeof lq, "%s", dy_cg_dim(ctx, q, ls));
  snprintf(lk, sizeof lk, "%s", dy_cg_dim(ctx, k, ls));
  /* the heads per group of the leading dims, each tensor's row stride
   * and offset of head 0 in a row (q, k, v) */
  ll off[3] = {0, 0, 0};
  char rw[3][160];
  if (packed) {
    snprintf(h, sizeof h, "%lld", (ll)a.packed[0]);
    for (int i = 0; i < 3; i++) {
      snprintf(rw[i], sizeof rw[i], "%s", dy_cg_dim(ctx, dy_cg_in_type(ctx, i), r - 1));
      off[i] = a.packed[3 + i];
    }
  } else {
    snprintf(h, sizeof h, "%s", lhd ? dy_cg_dim(ctx, q, r - 2) : "1");
    snprintf(rw[0], sizeof rw[0], "H * %lld", d);
    snprintf(rw[1], sizeof rw[1], "H * %lld", d);
    snprintf(rw[2], sizeof rw[2], "H * %lld", dv);
  }
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  dy_cg_gemm_rows(ctx, -1, -1); /* the balanced splits' heights: any */
  L("/* per group: softmax(q k^T * %s%s) v on the GEMM micro-kernels: v packed in", scale,
    mask ? " + mask" : "");
  L(" * panels of 16 features; per %d queries, q^T packed (qt, 2 panels), the scores", QB);
  L(" * transposed (sc[j][i] = k_j . q_i, the queries across the lanes), softmaxed down");
  L(" * each column, then times v's panels into the output rows; the micro-kernel calls");
  L(" * share the rows evenly, at most %d each (layout \"%s\"%s) */", TR, a.layout,
    packed ? ", q, k, v heads within rows" : "");
  L("const int64_t LQ = %s, LK = %s;", lq, lk);
  /* group g = (g / H, g % H): a head of a batch item */
  L("const int64_t H = %s, G = %s * H;", h, g);
  L("const int64_t QR = %s, KR = %s, VR = %s, OR = H * %lld;", rw[0], rw[1], rw[2], dv);
  L("float *vp = scratch, *qt = vp + %lld * %d * LK, *sc = qt + %lld * %d;", nvp, NR, d, QB);
  OPEN("for (int64_t g = 0; g < G; g++) {");
  L("const int64_t gb = g / H, gh = g %% H;");
  /* " + offset" of each tensor's head 0 in its rows, when there is one */
  char at[3][32];
  for (int i = 0; i < 3; i++) {
    at[i][0] = '\0';
    if (off[i])
      snprintf(at[i], sizeof at[i], " + %lld", off[i]);
  }
  L("const float *q = %s + gb * LQ * QR%s + gh * %lld;", dy_cg_in(ctx, 0), at[0], d);
  L("const float *k = %s + gb * LK * KR%s + gh * %lld;", dy_cg_in(ctx, 1), at[1], d);
  L("const float *v = %s + gb * LK * VR%s + gh * %lld;", dy_cg_in(ctx, 2), at[2], dv);
  L("float *o = %s + gb * LQ * OR + gh * %lld;", dy_cg_out(ctx, 0), dv);
  L("/* v in panels of 16 features, vp[p][j][0..16) */");
  OPEN("for (int64_t j = 0; j < LK; j++) {");
  for (ll p = 0; p < nvp; p++) {
    if (dv - p * NR >= NR)
      L("dy_f16_store(vp + (%lld * LK + j) * 16, dy_f16_load(v + j * VR + %lld));", p, p * NR);
    else
      L("dy_f16_store(vp + (%lld * LK + j) * 16, dy_f16_loadn(v + j * VR + %lld, %lld));", p,
        p * NR, dv - p * NR);
  }
  CLOSE();
  OPEN("for (int64_t i0 = 0; i0 < LQ; i0 += %d) {", QB);
  L("const int64_t nq = LQ - i0 < %d ? LQ - i0 : %d, np = (nq + 15) / 16;", QB, QB);
  L("int64_t i = 0;");
  L("/* q^T of the block's queries, scaled, in panels of 16: qt[i / 16][c][i %% 16];");
  L(" * zeros past nq in the last panel */");
  OPEN("for (; i < nq; i++)");
  dy_cg_for(ctx, "for (int64_t c = 0; c < %lld; c++)", d);
  L("qt[(i / 16 * %lld + c) * 16 + i %% 16] = q[(i0 + i) * QR + c] * %s;", d, scale);
  dy_cg_end(ctx);
  ctx->indent--;
  OPEN("for (; i < np * 16; i++)");
  dy_cg_for(ctx, "for (int64_t c = 0; c < %lld; c++)", d);
  L("qt[(i / 16 * %lld + c) * 16 + i %% 16] = 0.0f;", d);
  dy_cg_end(ctx);
  ctx->indent--;
  L("/* the scores, sc[j][i] = k_j . q_i (row stride %d), per panel of queries */", QB);
  OPEN("for (int64_t t = 0, nt = (LK + %d) / %d; t < nt; t++) {", TR - 1, TR);
  L("const int64_t j0 = LK * t / nt, mr = LK * (t + 1) / nt - j0;");
  L("for (int64_t pq = 0; pq < np; pq++)");
  L("  dy_gemm_tile(mr, %lld, k + j0 * KR, KR, 1, qt + pq * %lld, sc + j0 * %d + pq * 16, %d, 16, 0, NULL, 0.0f);",
    d, d * NR, QB, QB);
  CLOSE();
  if (mask) {
    L("/* plus the mask of the block's queries */");
    L("for (int64_t j = 0; j < LK; j++)");
    L("  for (i = 0; i < nq; i++)");
    L("    sc[j * %d + i] += %s[(i0 + i) * LK + j];", QB, dy_cg_in(ctx, 3));
  }
  L("/* softmax down each column: DY_VW queries' max, exp and sum as vectors */");
  OPEN("for (int64_t u = 0; u < np * 16; u += DY_VW) {");
  L("dy_vf m0 = dy_vset(-3.40282347e+38f), m1 = m0, sum = dy_vset(0.0f);");
  L("int64_t j = 0;");
  OPEN("for (; j + 1 < LK; j += 2) {");
  L("m0 = dy_vmax(m0, dy_vload(sc + j * %d + u));", QB);
  L("m1 = dy_vmax(m1, dy_vload(sc + (j + 1) * %d + u));", QB);
  CLOSE();
  L("if (j < LK)");
  L("  m0 = dy_vmax(m0, dy_vload(sc + j * %d + u));", QB);
  L("m0 = dy_vmax(m0, m1);");
  OPEN("for (j = 0; j < LK; j++) {");
  L("const dy_vf e = dy_vexp_neg(dy_vsub(dy_vload(sc + j * %d + u), m0));", QB);
  L("dy_vstore(sc + j * %d + u, e);", QB);
  L("sum = dy_vadd(sum, e);");
  CLOSE();
  L("sum = dy_vdiv(dy_vset(1.0f), sum);");
  L("for (j = 0; j < LK; j++)");
  L("  dy_vstore(sc + j * %d + u, dy_vmul(dy_vload(sc + j * %d + u), sum));", QB, QB);
  CLOSE();
  L("/* the output rows o_i = sum_j sc[j][i] v_j, per panel of 16 features */");
  OPEN("for (int64_t t = 0, nt = (nq + %d) / %d; t < nt; t++) {", TR - 1, TR);
  L("const int64_t r0 = nq * t / nt, mr = nq * (t + 1) / nt - r0;");
  for (ll p = 0; p < nvp; p++)
    L("dy_gemm_tile(mr, LK, sc + r0, 1, %d, vp + %lld * LK, o + (i0 + r0) * OR + %lld, OR, %lld, 0, NULL, 0.0f);",
      QB, p * NR, p * NR, dv - p * NR < NR ? dv - p * NR : (ll)NR);
  CLOSE();
  CLOSE();
  CLOSE();
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_fused_attention = {.emit = dy_emit_fused_attention,
                                           .scratch = attention_scratch,
                                           .roles = {"query", "key", "value", "mask"}};
