/* emit_matmul.c - floor 1: the matmul kernel builder, shared by matmul
 * (emit_ops.c) and fused_matmul (emit_fused.c): numpy rules with leading
 * dims broadcast, on the GEMM micro-kernel (emit_gemm.c) for f32 with an
 * optional bias-and-activation epilogue, plain loops otherwise. */
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)

/* One f32 matrix product c = act(a b + bias) on the GEMM micro-kernel
 * (emit_gemm.c): b is the packed constant weight (pk), or is packed here into
 * the scratch, a block of columns at a time. x is [.., M, K] (transposed:
 * [.., K, M]), the output [.., M, N]. */
static dy_status emit_matmul_gemm(dy_cg_ctx *ctx, dy_error *err, const dy_pack *pk,
                                  bool tx, bool ty, bool y_vector, dy_ext M, int64_t k,
                                  int64_t n, bool bias, const char *act, double alpha) {
  char sM[128], sK[32], sN[32], one[] = "1";
  dy_ext_str(ctx, M, sM, sizeof sM);
  snprintf(sK, sizeof sK, "%lld", (long long)k);
  snprintf(sN, sizeof sN, "%lld", (long long)n);
  dy_gemm_call g = {.m = sM, .n = n, .k = k, .a = "a", .rsa = tx ? one : sK,
                    .csa = tx ? sM : one, .b = "b", .c = "c", .ldc = sN,
                    .bias = bias ? dy_cg_in(ctx, 2) : NULL, .act = act, .alpha = alpha,
                    .m_static = M.p == 0 ? M.k : -1,
                    .m_max = dy_gemm_matmul_rows(ctx->p, ctx->op)};
  /* A's blocks packed at run time go into the scratch, after B's panels
   * when B is packed there too (dy_gemm_matmul_scratch) */
  char ap[64];
  if (ctx->scratch) {
    if (pk->kind == DY_PACK_B16)
      snprintf(ap, sizeof ap, "scratch");
    else
      snprintf(ap, sizeof ap, "scratch + %lld", (long long)(dy_gemm_runtime_panels(k, n) * 16 * k));
    g.ap = ap;
  }
  if (pk->kind == DY_PACK_B16) {
    dy_cg_line(ctx, "/* b: packed at compile time, %lld panel%s of %lld x 16 */",
                 (long long)((n + 15) / 16), n > 16 ? "s" : "", (long long)k);
    return dy_cg_gemm_loops(ctx, err, &g);
  }
  if (!ctx->scratch)
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT,
                              "no scratch for packing the run-time operand");
  /* run-time b: blocks of cb columns at a time, packed into the scratch */
  int64_t cb = dy_gemm_runtime_panels(k, n) * 16;
  bool trans = ty && !y_vector;
  char j0[64], cexpr[80], bexpr[80];
  g.b = "scratch";
  g.c = cexpr;
  if (bias)
    g.bias = bexpr;
  int64_t full = n / cb, rest = n % cb;
  for (int part = 0; part < 2; part++) {
    int64_t w = part == 0 ? (n <= cb ? n : cb) : rest;
    if (part == 1 && (n <= cb || rest == 0))
      break;
    bool loop = part == 0 && n > cb && full > 1;
    if (loop) {
      FOR("for (int64_t j0 = 0; j0 < %lld; j0 += %lld) {", (long long)(full * cb), (long long)cb);
      snprintf(j0, sizeof j0, "j0");
    } else {
      L("{");
      ctx->indent++;
      snprintf(j0, sizeof j0, "%lld", (long long)(part == 0 ? 0 : full * cb));
    }
    snprintf(cexpr, sizeof cexpr, "c + %s", j0);
    snprintf(bexpr, sizeof bexpr, "%s + %s", dy_cg_in(ctx, 2), j0);
    g.n = w;
    dy_cg_gemm_pack_b(ctx, "b", "scratch", k, n, trans, j0, w);
    dy_status s = dy_cg_gemm_loops(ctx, err, &g);
    if (s != DY_OK)
      return s;
    if (loop) {
      END();
    } else {
      ctx->indent--;
      L("}");
    }
  }
  return DY_OK;
}

/* A matmul's operands: x [.., M, K] (1-D: [1, K]) times y [.., K, N]
 * (1-D: [K, 1]), a transposed one with its last two dims swapped in
 * memory; the batch dims in groups that broadcast alike (gbc: which input
 * broadcasts over the group), as for the binary ops. */
typedef struct {
  bool tx, ty;
  int xr, yr, br;
  int64_t m, k, n;
  dy_ext gext[DY_MAX_DIMS];
  bool gbc[DY_MAX_DIMS][2];
  int ng;
} mm_shape;

static dy_status matmul_shape(dy_cg_ctx *ctx, dy_error *err, mm_shape *s) {
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_in_type(ctx, 1);
  const dy_type *o = dy_cg_out_type(ctx, 0);
  dy_matmul_attrs ma = dy_matmul_attrs_get(ctx->op); /* fused_matmul too */
  s->tx = ma.transpose_x != 0;
  s->ty = ma.transpose_y != 0;
  if (x->dtype != y->dtype || x->dtype != o->dtype ||
      (x->dtype != DY_F32 && x->dtype != DY_I64))
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                      "needs f32 (or i64) operands of one dtype");
  if (x->rank < 1 || y->rank < 1)
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "operands must have rank >= 1");
  int64_t kx, ky;
  int xr = s->xr = x->rank, yr = s->yr = y->rank;
  if (xr == 1) {
    s->tx = false;
    s->m = 1;
    kx = x->shape[0];
  } else {
    s->m = x->shape[xr - (s->tx ? 1 : 2)];
    kx = x->shape[xr - (s->tx ? 2 : 1)];
  }
  if (yr == 1) {
    s->ty = false;
    ky = y->shape[0];
    s->n = 1;
  } else {
    ky = y->shape[yr - (s->ty ? 1 : 2)];
    s->n = y->shape[yr - (s->ty ? 2 : 1)];
  }
  if (kx != ky)
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH, "inner dims differ");
  s->k = kx;
  int xb = xr > 2 ? xr - 2 : 0, yb = yr > 2 ? yr - 2 : 0;
  int br = s->br = xb > yb ? xb : yb;
  int want_rank = br + (xr > 1) + (yr > 1);
  if (o->rank != want_rank ||
      (xr > 1 && o->shape[br] != s->m) ||
      (yr > 1 && o->shape[o->rank - 1] != s->n))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "output shape is not the matmul of the inputs");
  const dy_type *in[2] = {x, y};
  int inb[2] = {xb, yb};
  s->ng = 0;
  for (int d = 0; d < br; d++) {
    int64_t od = o->shape[d];
    bool bc[2];
    for (int q = 0; q < 2; q++) {
      int qi = d - (br - inb[q]);
      int64_t qd = qi >= 0 ? in[q]->shape[qi] : 1;
      if (qd == od)
        bc[q] = false;
      else if (qd == 1)
        bc[q] = true;
      else
        return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                          "batch dims do not broadcast to the output");
    }
    if (od == 1)
      continue;
    if (bc[0] && bc[1])
      return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                        "output batch dim larger than both inputs'");
    int ng = s->ng;
    if (ng > 0 && s->gbc[ng - 1][0] == bc[0] && s->gbc[ng - 1][1] == bc[1]) {
      s->gext[ng - 1] = dy_ext_mul(s->gext[ng - 1], dy_ext_dim(od));
    } else {
      s->gext[ng] = dy_ext_dim(od);
      s->gbc[ng][0] = bc[0];
      s->gbc[ng][1] = bc[1];
      s->ng++;
    }
  }
  return DY_OK;
}

/* The product as plain loops over a, b, c (i64, or f32 off the GEMM):
 * M x K times K x N, epilogue fx (an expression of v) when epi. */
static void emit_matmul_loops(dy_cg_ctx *ctx, const mm_shape *s, dy_ext M, dy_ext K, dy_ext N,
                              bool epi, const char *fx) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  const char *T = dy_ctype(o->dtype), *Z = dy_zero_of(o->dtype);
  char sM[128], sK[128], sN[128];
  dy_ext_str(ctx, M, sM, sizeof sM);
  dy_ext_str(ctx, K, sK, sizeof sK);
  dy_ext_str(ctx, N, sN, sizeof sN);
  /* c[i][j], a[i][k] and b[k][j] as indexes into the row-major buffers */
  dy_idxbuf ci = {"", 0}, ai = {"", 0}, bi = {"", 0};
  dy_idx_add(ctx, &ci, "i", N);
  dy_idx_add(ctx, &ci, "j", dy_ext_one());
  if (s->tx) {
    dy_idx_add(ctx, &ai, "k", M);
    dy_idx_add(ctx, &ai, "i", dy_ext_one());
  } else {
    dy_idx_add(ctx, &ai, "i", K);
    dy_idx_add(ctx, &ai, "k", dy_ext_one());
  }
  if (s->ty) {
    dy_idx_add(ctx, &bi, "j", K);
    dy_idx_add(ctx, &bi, "k", dy_ext_one());
  } else {
    dy_idx_add(ctx, &bi, "k", N);
    dy_idx_add(ctx, &bi, "j", dy_ext_one());
  }
  const char *cij = ci.s, *aik = ai.s, *bkj = bi.s;
  if (!s->ty) {
    /* i-k-j: the inner loop runs along rows of b and c, so it vectorises */
    FOR("for (int64_t i = 0; i < %s; i++) {", sM);
    FOR("for (int64_t j = 0; j < %s; j++)", sN);
    L("c[%s] = %s;", cij, Z);
    END();
    FOR("for (int64_t k = 0; k < %s; k++) {", sK);
    L("const %s aik = a[%s];", T, aik);
    FOR("for (int64_t j = 0; j < %s; j++)", sN);
    L("c[%s] += aik * b[%s];", cij, bkj);
    END();
    END();
    if (epi) {
      L("/* epilogue: bias and activation on the finished row */");
      FOR("for (int64_t j = 0; j < %s; j++) {", sN);
      L("const float v = c[%s];", cij);
      L("c[%s] = %s;", cij, fx);
      END();
    }
    END();
  } else {
    /* b transposed: rows of b are columns of the product, so take dot
     * products along k, where both a (unless transposed) and b are
     * contiguous */
    FOR("for (int64_t i = 0; i < %s; i++)", sM);
    FOR("for (int64_t j = 0; j < %s; j++) {", sN);
    L("%s acc = %s;", T, Z);
    FOR("for (int64_t k = 0; k < %s; k++)", sK);
    L("acc += a[%s] * b[%s];", aik, bkj);
    END();
    if (epi) {
      L("const float v = acc;");
      L("c[%s] = %s;", cij, fx);
    } else {
      L("c[%s] = acc;", cij);
    }
    END();
    END();
  }
}

/* The matmul kernel, optionally with c = act(c + bias[j]) applied to each
 * row as soon as it is complete (while it is still in cache). */
dy_status dy_cg_matmul_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias,
                                  const char *act, double alpha) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  mm_shape s = {0};
  dy_status st = matmul_shape(ctx, err, &s);
  if (st != DY_OK)
    return st;
  dy_ext M = dy_ext_dim(s.m), K = dy_ext_dim(s.k), N = dy_ext_dim(s.n);
  dy_ext xmat = dy_ext_mul(M, K), ymat = dy_ext_mul(K, N), omat = dy_ext_mul(M, N);
  /* f32 runs on the GEMM micro-kernel; a constant y arrives packed */
  bool gemm = o->dtype == DY_F32 && s.k >= 0 && s.n >= 0;
  dy_pack pk = dy_gemm_pack_of(ctx->p, ctx->op, 1);
  if (pk.kind == DY_PACK_B16)
    ymat = dy_ext_dim(pk.rows * ((pk.cols + 15) / 16) * 16);

  /* [.., M, K] @ [K, N] with x's leading dims all its own: one GEMM with
   * M' = (leading dims) * M, as x and the output are both contiguous */
  int ng = s.ng;
  bool fold = ng > 0 && !s.tx && s.xr > 1;
  for (int gi = 0; gi < ng && fold; gi++)
    fold = !s.gbc[gi][0] && s.gbc[gi][1];
  if (fold) {
    for (int gi = 0; gi < ng; gi++)
      M = dy_ext_mul(M, s.gext[gi]);
    ng = 0;
  }

  const char *T = dy_ctype(o->dtype);
  dy_idxbuf idx[3] = {{"", 0}, {"", 0}, {"", 0}}, ptr[3];
  if (ng > 0) {
    dy_ext stride[DY_MAX_DIMS][3];
    dy_ext acc[3] = {xmat, ymat, omat};
    for (int gi = ng - 1; gi >= 0; gi--)
      for (int q = 0; q < 3; q++) {
        stride[gi][q] = acc[q];
        if (q == 2 || !s.gbc[gi][q])
          acc[q] = dy_ext_mul(acc[q], s.gext[gi]);
      }
    for (int gi = 0; gi < ng; gi++)
      for (int q = 0; q < 3; q++)
        if (q == 2 || !s.gbc[gi][q])
          dy_idx_add(ctx, &idx[q], dy_bvars[gi], stride[gi][q]);
    for (int gi = 0; gi < ng; gi++) {
      char e[128];
      FOR("for (int64_t %s = 0; %s < %s; %s++) {", dy_bvars[gi], dy_bvars[gi],
          dy_ext_str(ctx, s.gext[gi], e, sizeof e), dy_bvars[gi]);
    }
  }
  dy_ptr_plus(&ptr[0], dy_cg_in(ctx, 0), &idx[0]);
  dy_ptr_plus(&ptr[1], dy_cg_in(ctx, 1), &idx[1]);
  dy_ptr_plus(&ptr[2], dy_cg_out(ctx, 0), &idx[2]);
  L("const %s *a = %s;", T, ptr[0].s);
  L("const %s *b = %s;", T, ptr[1].s);
  L("%s *c = %s;", T, ptr[2].s);
  if (gemm) {
    /* an act without a vector form: the GEMM adds the bias, a loop over
     * the whole output applies act */
    bool after = dy_cg_act_scalar_only(act);
    char fx[512];
    if (after && !dy_cg_act_expr(act, alpha, "v", fx, sizeof fx))
      return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
    st = emit_matmul_gemm(ctx, err, &pk, s.tx, s.ty, s.yr == 1, M, s.k, s.n, bias,
                          after ? "" : act, alpha);
    if (st != DY_OK)
      return st;
    dy_cg_close_loops(ctx, ng);
    if (after) {
      char total[128];
      dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), total, sizeof total);
      L("/* epilogue: the activation on the finished output */");
      FOR("for (int64_t i = 0; i < %s; i++) {", total);
      L("const float v = %s[i];", dy_cg_out(ctx, 0));
      L("%s[i] = %s;", dy_cg_out(ctx, 0), fx);
      END();
    }
    return DY_OK;
  }
  bool epi = bias || (act && *act);
  char fx[512], v[64];
  snprintf(v, sizeof v, "(v + %s[j])", dy_cg_in(ctx, 2));
  if (epi && o->dtype != DY_F32)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "a fused epilogue needs f32");
  if (epi && !dy_cg_act_expr(act, alpha, bias ? v : "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  emit_matmul_loops(ctx, &s, M, K, N, epi, fx);
  dy_cg_close_loops(ctx, ng);
  return DY_OK;
}
