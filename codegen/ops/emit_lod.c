/* emit_lod.c - floor 2: the emitters of the LoD sequence ops
 * (ir/ops_lod.def): sequence_pool, lstm, gru, sequence_pad, sequence_len,
 * crf_decoding (the recurrent ops' and crf's state in the kernel's scratch).
 *
 * Each kernel is runtime/kernels/kernels_lod.c's word for word (the same
 * sums in the same order), so both paths give the same answer; change one,
 * change the other. The offsets are an input like any other (NAME@lod of
 * the generated API); the kernel checks them first and returns 1 on bad
 * ones (offsets[0] != 0, a decrease, offsets[N] != T), which the
 * generated run reports as a failed op.
 */
#include <stdio.h>

#include "cg_ops.h"
#include "dy_lod.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* The check of offsets `off` (n + 1 entries) against t rows (NULL: any). */
static void check_offsets(dy_cg_ctx *ctx, const char *off, const char *n, const char *t) {
  L("/* the LoD offsets first: bad ones fail the model */");
  if (t)
    L("if (%s[0] != 0 || %s[%s] != %s)", off, off, n, t);
  else
    L("if (%s[0] != 0)", off);
  L("  return 1;");
  FOR("for (int64_t q = 0; q < %s; q++)", n);
  L("if (%s[q + 1] < %s[q])", off, off);
  L("  return 1;");
  END();
}

dy_status dy_emit_sequence_pool(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_out_type(ctx, 0);
  dy_sequence_pool_attrs a = dy_sequence_pool_attrs_get(ctx->op);
  dy_seq_pool_kind k = dy_seq_pool_kind_of(a.pooltype);
  char n[128], t[128], d[128], pad[48];
  snprintf(n, sizeof n, "%s", dy_cg_dim(ctx, y, 0));
  snprintf(t, sizeof t, "%s", dy_cg_dim(ctx, x, 0));
  snprintf(d, sizeof d, "%s", dy_cg_extent(ctx, y, 1, y->rank));
  dy_float_literal(a.pad_value, pad, sizeof pad);
  check_offsets(ctx, IN(1), n, t);
  FOR("for (int64_t q = 0; q < %s; q++) {", n);
  L("const int64_t b = %s[q], e = %s[q + 1];", IN(1), IN(1));
  L("float *yr = %s + q * %s;", OUT(0), d);
  FOR("for (int64_t j = 0; j < %s; j++) {", d);
  L("if (e == b) { /* an empty sequence */");
  L("  yr[j] = %s;", pad);
  L("  continue;");
  L("}");
  if (k == DY_POOL_LAST || k == DY_POOL_FIRST) {
    L("yr[j] = %s[%s * %s + j];", IN(0), k == DY_POOL_LAST ? "(e - 1)" : "b", d);
  } else {
    L("float acc = %s[b * %s + j];", IN(0), d);
    FOR("for (int64_t r = b + 1; r < e; r++) {");
    L("const float v = %s[r * %s + j];", IN(0), d);
    L("%s", k == DY_POOL_MAX ? "acc = v > acc ? v : acc;" : "acc = acc + v;");
    END();
    if (k == DY_POOL_AVERAGE)
      L("acc = acc / (float)(e - b);");
    else if (k == DY_POOL_SQRT)
      L("acc = acc / dy_sqrtf((float)(e - b));");
    L("yr[j] = acc;");
  }
  END();
  END();
  return DY_OK;
}

const dy_cg_op dy_cg_op_sequence_pool = {.emit = dy_emit_sequence_pool,
                                         .roles = {"x", "offsets"}};

/* The C expression of activation a on `v`. */
static const char *act_expr(const char *name, char *buf, size_t n, const char *v) {
  switch (dy_lod_act_of(name)) {
  case DY_LOD_ACT_SIGMOID:
    snprintf(buf, n, "dy_sigmoidf(%s)", v);
    break;
  case DY_LOD_ACT_TANH:
    snprintf(buf, n, "dy_tanhf(%s)", v);
    break;
  case DY_LOD_ACT_RELU:
    snprintf(buf, n, "(%s > 0.0f ? %s : 0.0f)", v, v);
    break;
  default:
    snprintf(buf, n, "(%s)", v);
  }
  return buf;
}

/* The loops of a recurrent op (D in scope): over the n sequences, h (and
 * with a cell c) from inputs h0 (c0), or zeros for -1, then over the
 * sequence's rows, t the row (from the last one with is_reverse). Leaves
 * both loops open for the step. */
static void open_steps(dy_cg_ctx *ctx, const char *n, bool reverse, int h0, bool cell, int c0) {
  FOR("for (int64_t q = 0; q < %s; q++) {", n);
  FOR("for (int64_t j = 0; j < D; j++) {");
  if (h0 >= 0)
    L("h[j] = %s[q * D + j];", IN(h0));
  else
    L("h[j] = 0.0f;");
  if (cell && c0 >= 0)
    L("c[j] = %s[q * D + j];", IN(c0));
  else if (cell)
    L("c[j] = 0.0f;");
  END();
  FOR("for (int64_t i = 0; i < %s[q + 1] - %s[q]; i++) {", IN(1), IN(1));
  if (reverse)
    L("const int64_t t = %s[q + 1] - 1 - i; /* is_reverse: from the last row */", IN(1));
  else
    L("const int64_t t = %s[q] + i;", IN(1));
}

static int64_t lstm_scratch(const dy_program *p, const dy_op *op, int threads) {
  (void)threads;
  const dy_type *x = &p->vars[op->inputs[0]]->type;
  return 6 * (x->shape[1] / 4) * (int64_t)sizeof(float); /* g[4D], h[D], c[D] */
}

dy_status dy_emit_lstm(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_op *op = ctx->op;
  dy_lstm_attrs a = dy_lstm_attrs_get(op);
  const dy_type *x = dy_cg_in_type(ctx, 0);
  long long dd = (long long)(x->shape[1] / 4);
  char n[128], t[128], e1[96], e2[96], e3[96], e4[96], e5[96];
  snprintf(n, sizeof n, "(%s - 1)", dy_cg_dim(ctx, dy_cg_in_type(ctx, 1), 0));
  snprintf(t, sizeof t, "%s", dy_cg_dim(ctx, x, 0));
  bool peep = a.use_peepholes != 0, init = op->n_inputs == 6;
  check_offsets(ctx, IN(1), n, t);
  L("const int64_t D = %lld; /* the hidden size */", dd);
  L("float *restrict g = scratch, *restrict h = scratch + %lld, *restrict c = scratch + %lld;",
    4 * dd, 5 * dd);
  L("const float *pi = %s + %lld, *pf = %s + %lld, *po = %s + %lld; /* the peepholes */",
    IN(3), 4 * dd, IN(3), 5 * dd, IN(3), 6 * dd);
  if (!peep)
    L("(void)pi, (void)pf, (void)po;");
  open_steps(ctx, n, a.is_reverse, init ? 4 : -1, true, init ? 5 : -1);
  L("/* the gates: x[t] + bias + h weight (candidate, input, forget, output) */");
  FOR("for (int64_t j = 0; j < %lld; j++)", 4 * dd);
  L("g[j] = %s[t * %lld + j] + %s[j];", IN(0), 4 * dd, IN(3));
  END();
  FOR("for (int64_t k = 0; k < %lld; k++)", dd);
  FOR("for (int64_t j = 0; j < %lld; j++)", 4 * dd);
  L("g[j] += h[k] * %s[k * %lld + j];", IN(2), 4 * dd);
  END();
  END();
  FOR("for (int64_t j = 0; j < %lld; j++) {", dd);
  L("const float cp = c[j];");
  L("const float cand = %s;", act_expr(a.candidate_activation, e1, sizeof e1, "g[j]"));
  L("const float ig = %s;", act_expr(a.gate_activation, e2, sizeof e2,
                                      peep ? "g[D + j] + cp * pi[j]" : "g[D + j]"));
  L("const float fg = %s;", act_expr(a.gate_activation, e3, sizeof e3,
                                      peep ? "g[2 * D + j] + cp * pf[j]" : "g[2 * D + j]"));
  L("const float cn = cand * ig + cp * fg;");
  L("const float og = %s;", act_expr(a.gate_activation, e4, sizeof e4,
                                      peep ? "g[3 * D + j] + cn * po[j]" : "g[3 * D + j]"));
  L("c[j] = cn;");
  L("h[j] = og * %s;", act_expr(a.cell_activation, e5, sizeof e5, "cn"));
  L("%s[t * %lld + j] = h[j];", OUT(0), dd);
  END();
  END();
  END();
  return DY_OK;
}

dy_status dy_emit_sequence_pad(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_out_type(ctx, 0);
  char n[128], t[128], d[128];
  long long len = (long long)y->shape[1];
  snprintf(n, sizeof n, "%s", dy_cg_dim(ctx, y, 0));
  snprintf(t, sizeof t, "%s", dy_cg_dim(ctx, x, 0));
  snprintf(d, sizeof d, "%s", dy_cg_extent(ctx, y, 2, y->rank));
  check_offsets(ctx, IN(1), n, t);
  FOR("for (int64_t q = 0; q < %s; q++) {", n);
  L("const int64_t b = %s[q], n = %s[q + 1] - b;", IN(1), IN(1));
  L("if (n > %lld) /* longer than padded_length */", len);
  L("  return 1;");
  FOR("for (int64_t r = 0; r < %lld; r++)", len);
  FOR("for (int64_t j = 0; j < %s; j++)", d);
  L("%s[(q * %lld + r) * %s + j] = r < n ? %s[(b + r) * %s + j] : %s[0];", OUT(0), len, d,
    IN(0), d, IN(2));
  END();
  END();
  END();
  return DY_OK;
}

dy_status dy_emit_sequence_len(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  char n[128];
  snprintf(n, sizeof n, "%s", dy_cg_dim(ctx, dy_cg_out_type(ctx, 0), 0));
  check_offsets(ctx, IN(0), n, NULL);
  FOR("for (int64_t q = 0; q < %s; q++)", n);
  L("%s[q] = %s[q + 1] - %s[q];", OUT(0), IN(0), IN(0));
  END();
  return DY_OK;
}

static int64_t gru_scratch(const dy_program *p, const dy_op *op, int threads) {
  (void)threads;
  const dy_type *x = &p->vars[op->inputs[0]]->type;
  return 4 * (x->shape[1] / 3) * (int64_t)sizeof(float); /* g[3D], h[D] */
}

dy_status dy_emit_gru(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_op *op = ctx->op;
  dy_gru_attrs a = dy_gru_attrs_get(op);
  const dy_type *x = dy_cg_in_type(ctx, 0);
  long long dd = (long long)(x->shape[1] / 3);
  char n[128], t[128], e1[96], e2[96];
  snprintf(n, sizeof n, "(%s - 1)", dy_cg_dim(ctx, dy_cg_in_type(ctx, 1), 0));
  snprintf(t, sizeof t, "%s", dy_cg_dim(ctx, x, 0));
  check_offsets(ctx, IN(1), n, t);
  L("const int64_t D = %lld; /* the hidden size */", dd);
  L("float *restrict g = scratch, *restrict h = scratch + %lld;", 3 * dd);
  L("const float *wc = %s + %lld; /* the candidate's [D, D] */", IN(2), 2 * dd * dd);
  open_steps(ctx, n, a.is_reverse, op->n_inputs == 5 ? 4 : -1, false, -1);
  L("/* the gates: x[t] + bias + h weight (update, reset), then the candidate */");
  FOR("for (int64_t j = 0; j < 3 * D; j++)");
  L("g[j] = %s[t * 3 * D + j] + %s[j];", IN(0), IN(3));
  END();
  FOR("for (int64_t k = 0; k < D; k++)");
  FOR("for (int64_t j = 0; j < 2 * D; j++)");
  L("g[j] += h[k] * %s[k * 2 * D + j];", IN(2));
  END();
  END();
  FOR("for (int64_t j = 0; j < 2 * D; j++)");
  L("g[j] = %s;", act_expr(a.gate_activation, e1, sizeof e1, "g[j]"));
  END();
  FOR("for (int64_t k = 0; k < D; k++)");
  FOR("for (int64_t j = 0; j < D; j++)");
  L("g[2 * D + j] += g[D + k] * h[k] * wc[k * D + j];");
  END();
  END();
  FOR("for (int64_t j = 0; j < D; j++) {");
  L("const float u = g[j], cand = %s;", act_expr(a.activation, e2, sizeof e2, "g[2 * D + j]"));
  if (a.origin_mode)
    L("h[j] = u * h[j] + (1.0f - u) * cand;");
  else
    L("h[j] = h[j] - u * h[j] + u * cand;");
  L("%s[t * D + j] = h[j];", OUT(0));
  END();
  END();
  END();
  return DY_OK;
}

static int64_t crf_scratch(const dy_program *p, const dy_op *op, int threads) {
  (void)threads;
  const dy_type *x = &p->vars[op->inputs[0]]->type;
  int64_t t = x->shape[0] >= 0 ? x->shape[0] : dy_program_dim_bound(p, x->shape[0]);
  return (t * x->shape[1] + 1) * (int64_t)(sizeof(int64_t) + sizeof(float));
}

dy_status dy_emit_crf_decoding(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, 0);
  char n[128], t[128];
  snprintf(n, sizeof n, "(%s - 1)", dy_cg_dim(ctx, dy_cg_in_type(ctx, 1), 0));
  snprintf(t, sizeof t, "%s", dy_cg_dim(ctx, x, 0));
  check_offsets(ctx, IN(1), n, t);
  L("const int64_t K = %lld; /* the tags */", (long long)x->shape[1]);
  L("int64_t *restrict track = (int64_t *)(void *)scratch; /* [T, K] best previous tag */");
  L("float *restrict alpha = (float *)(void *)(track + %s * K); /* [T, K] best scores */", t);
  L("const float *start = %s, *end = %s + K, *w = %s + 2 * K;", IN(2), IN(2), IN(2));
  FOR("for (int64_t q = 0; q < %s; q++) {", n);
  L("const int64_t b = %s[q], n = %s[q + 1] - b;", IN(1), IN(1));
  L("const float *x = %s + b * K;", IN(0));
  L("if (n == 0)");
  L("  continue;");
  FOR("for (int64_t j = 0; j < K; j++)");
  L("alpha[j] = start[j] + x[j];");
  END();
  FOR("for (int64_t s = 1; s < n; s++)");
  FOR("for (int64_t j = 0; j < K; j++) {");
  L("float best = alpha[(s - 1) * K] + w[j];");
  L("int64_t arg = 0;");
  FOR("for (int64_t i = 1; i < K; i++) {");
  L("const float v = alpha[(s - 1) * K + i] + w[i * K + j];");
  L("if (v > best) {");
  L("  best = v;");
  L("  arg = i;");
  L("}");
  END();
  L("alpha[s * K + j] = best + x[s * K + j];");
  L("track[s * K + j] = arg;");
  END();
  END();
  L("float best = alpha[(n - 1) * K] + end[0];");
  L("int64_t arg = 0;");
  FOR("for (int64_t j = 1; j < K; j++)");
  L("if (alpha[(n - 1) * K + j] + end[j] > best) {");
  L("  best = alpha[(n - 1) * K + j] + end[j];");
  L("  arg = j;");
  L("}");
  END();
  FOR("for (int64_t s = n - 1; s > 0; s--) {");
  L("%s[b + s] = arg;", OUT(0));
  L("arg = track[s * K + arg];");
  END();
  L("%s[b] = arg;", OUT(0));
  END();
  return DY_OK;
}

const dy_cg_op dy_cg_op_lstm = {.emit = dy_emit_lstm, .scratch = lstm_scratch,
                                .roles = {"x", "offsets", "w", "bias", "h0", "c0"}};
const dy_cg_op dy_cg_op_sequence_pad = {.emit = dy_emit_sequence_pad,
                                        .roles = {"x", "offsets", "pad_value"}};
const dy_cg_op dy_cg_op_sequence_len = {.emit = dy_emit_sequence_len, .roles = {"offsets"}};
const dy_cg_op dy_cg_op_gru = {.emit = dy_emit_gru, .scratch = gru_scratch,
                               .roles = {"x", "offsets", "w", "bias", "h0"}};
const dy_cg_op dy_cg_op_crf_decoding = {.emit = dy_emit_crf_decoding, .scratch = crf_scratch,
                                        .roles = {"emission", "offsets", "transition"}};
