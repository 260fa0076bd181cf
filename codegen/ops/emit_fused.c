/* emit_fused.c - floor 2: emitters of the fused ops of ops_fused.def but
 * fused_dwpw, fused_irb and fused_attention (a file each): matmul and
 * conv2d with a bias, residual and activation epilogue (the kernels of
 * emit_matmul.c and emit_conv.c, floor 1; fused_conv2d_pool's max pool in
 * emit_conv_small.c's store), and elementwise chains as one loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_ops.h"

dy_status dy_emit_fused_matmul(dy_cg_ctx *ctx, dy_error *err) {
  dy_fused_matmul_attrs a = dy_fused_matmul_attrs_get(ctx->op);
  return dy_cg_matmul_epilogue(ctx, err, ctx->op->n_inputs == 3, a.act, a.alpha);
}

/* conv2d with bias, residual and activation (emit_conv.c applies them in
 * registers on the GEMM path). */
dy_status dy_emit_fused_conv2d(dy_cg_ctx *ctx, dy_error *err) {
  dy_fused_conv2d_attrs a = dy_fused_conv2d_attrs_get(ctx->op);
  return dy_cg_conv2d_epilogue(ctx, err, ctx->op->n_inputs >= 3, ctx->op->n_inputs == 4, a.act,
                               a.alpha);
}

/* The postfix expression as one C expression over v0, v1, v2. */
static bool infix(const char *expr, char *out, size_t n) {
  enum { MAX = 32, LEN = 2048, TLEN = 5 * LEN };
  char (*st)[LEN] = malloc(sizeof(char[MAX][LEN]));
  char *t = malloc(TLEN); /* a rewritten entry, before it is copied back */
  if (!st || !t) {
    free(st);
    free(t);
    return false;
  }
  int sp = 0;
  bool ok = true;
  for (const char *s = expr; *s && ok;) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    size_t len = strcspn(s, " ");
    char tok[64];
    snprintf(tok, sizeof tok, "%.*s", (int)len, s);
    s += len;
    if (sp == MAX) {
      ok = false;
    } else if (tok[0] == '$') {
      snprintf(st[sp++], LEN, "v%c", tok[1]);
    } else if (tok[0] == '#') {
      ok = dy_float_literal(strtof(tok + 1, NULL), st[sp++], LEN);
    } else {
      /* a token of acts.def: its formula over the top one or two entries */
      int k = dy_ew_token_find(tok, strlen(tok));
      int arity = k >= 0 ? dy_ew_token_arity((dy_ew_token)k) : 0;
      ok = arity > 0 && sp >= arity &&
           dy_cg_ew_expr(tok, st[sp - arity], arity == 2 ? st[sp - 1] : NULL, t, TLEN);
      if (ok) {
        sp -= arity - 1;
        ok = strlen(t) < LEN;
        if (ok)
          memcpy(st[sp - 1], t, strlen(t) + 1);
      }
    }
  }
  ok = ok && sp == 1 && strlen(st[0]) < n;
  if (ok)
    snprintf(out, n, "%s", st[0]);
  free(st);
  free(t);
  return ok;
}

/* max pool of act(conv2d + bias), in the store loop of the small-depth
 * direct kernel (emit_conv_small.c) */
dy_status dy_emit_fused_conv2d_pool(dy_cg_ctx *ctx, dy_error *err) {
  dy_fused_conv2d_pool_attrs a = dy_fused_conv2d_pool_attrs_get(ctx->op);
  dy_cg_conv_geom g = dy_cg_conv_small_geom(ctx->p, ctx->op);
  dy_cg_pool_geom pg;
  dy_cg_conv_small_pool(ctx->p, ctx->op, &pg);
  return dy_cg_conv_small(ctx, err, &g, ctx->op->n_inputs == 3, false, a.act, a.alpha, &pg);
}

dy_status dy_emit_fused_elementwise(dy_cg_ctx *ctx, dy_error *err) {
  const char *e = dy_fused_elementwise_attrs_get(ctx->op).expr;
  char body[4096], fmt[4400];
  if (!e || !infix(e, body, sizeof body))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "bad fused expression");
  for (int i = 0; i < ctx->op->n_inputs; i++)
    if (dy_cg_in_type(ctx, i)->dtype != DY_F32)
      return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "needs f32");
  dy_cg_line(ctx, "/* %s */", e);
  /* v0..v2 name the inputs' elements; the broadcast loop binds them */
  snprintf(fmt, sizeof fmt, "%s", body);
  return dy_cg_broadcast_let(ctx, err, fmt);
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_fused_matmul = {.emit = dy_emit_fused_matmul,
                                        .scratch = dy_gemm_matmul_scratch,
                                        .roles = {"x", "w", "bias", "res"}};
const dy_cg_op dy_cg_op_fused_conv2d = {.emit = dy_emit_fused_conv2d, .scratch = dy_cg_conv_scratch,
                                        .roles = {"x", "w", "bias", "res"}};
const dy_cg_op dy_cg_op_fused_conv2d_pool = {.emit = dy_emit_fused_conv2d_pool,
                                             .scratch = dy_cg_conv_scratch,
                                             .roles = {"x", "w", "bias", "res"}};
const dy_cg_op dy_cg_op_fused_elementwise = {.emit = dy_emit_fused_elementwise, .role_prefix = "x"};
