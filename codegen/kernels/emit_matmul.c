/* emit_matmul.c - floor 1: the matmul kernel builder, shared by matmul
 * (emit_ops.c) and fused_matmul (emit_fused.c): numpy rules with leading
 * dims broadcast, on the GEMM micro-kernel (emit_gemm.c) for f32 with an
 * optional bias-and-activation epilogue, plain loops otherwise. */
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"

/* One f32 matrix product c = act(a b + in2) on the GEMM micro-kernel
 * (emit_gemm.c): b is the packed constant in1 (pk), or is packed here into
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
                    .bias = bias ? "in2" : NULL, .act = act, .alpha = alpha,
                    .m_static = M.p == 0 ? M.k : -1,
                    .m_max = dy_gemm_matmul_rows(ctx->p, ctx->op, ctx->max_batch)};
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
    if (part == 0 && n > cb && full > 1) {
      dy_cg_line(ctx, "for (int64_t j0 = 0; j0 < %lld; j0 += %lld) {",
                   (long long)(full * cb), (long long)cb);
      snprintf(j0, sizeof j0, "j0");
    } else {
      dy_cg_line(ctx, "{");
      snprintf(j0, sizeof j0, "%lld", (long long)(part == 0 ? 0 : full * cb));
    }
    ctx->indent++;
    snprintf(cexpr, sizeof cexpr, "c + %s", j0);
    snprintf(bexpr, sizeof bexpr, "in2 + %s", j0);
    g.n = w;
    dy_cg_gemm_pack_b(ctx, "b", "scratch", k, n, trans, j0, w);
    dy_status s = dy_cg_gemm_loops(ctx, err, &g);
    if (s != DY_OK)
      return s;
    ctx->indent--;
    dy_cg_line(ctx, "}");
  }
  return DY_OK;
}

/* The matmul kernel, optionally with c = act(c + in2[j]) applied to each
 * row as soon as it is complete (while it is still in cache). */
dy_status dy_cg_matmul_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias,
                                  const char *act, double alpha) {
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_in_type(ctx, 1);
  const dy_type *o = dy_cg_out_type(ctx, 0);
  dy_matmul_attrs ma = dy_matmul_attrs_get(ctx->op); /* fused_matmul too */
  bool tx = ma.transpose_x != 0;
  bool ty = ma.transpose_y != 0;
  if (x->dtype != y->dtype || x->dtype != o->dtype ||
      (x->dtype != DY_F32 && x->dtype != DY_I64))
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                      "needs f32 (or i64) operands of one dtype");
  if (x->rank < 1 || y->rank < 1)
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "operands must have rank >= 1");
  /* x is [.., M, K] (1-D: [1, K]), y is [.., K, N] (1-D: [K, 1]); a
   * transposed operand has its last two dims swapped in memory. */
  int64_t m, kx, ky, n;
  int xr = x->rank, yr = y->rank;
  if (xr == 1) {
    tx = false;
    m = 1;
    kx = x->shape[0];
  } else {
    m = x->shape[xr - (tx ? 1 : 2)];
    kx = x->shape[xr - (tx ? 2 : 1)];
  }
  if (yr == 1) {
    ty = false;
    ky = y->shape[0];
    n = 1;
  } else {
    ky = y->shape[yr - (ty ? 1 : 2)];
    n = y->shape[yr - (ty ? 2 : 1)];
  }
  if (kx != ky)
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH, "inner dims differ");
  int xb = xr > 2 ? xr - 2 : 0, yb = yr > 2 ? yr - 2 : 0;
  int br = xb > yb ? xb : yb;
  int want_rank = br + (xr > 1) + (yr > 1);
  if (o->rank != want_rank ||
      (xr > 1 && o->shape[br] != m) ||
      (yr > 1 && o->shape[o->rank - 1] != n))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "output shape is not the matmul of the inputs");

  dy_ext M = dy_ext_dim(m), K = dy_ext_dim(kx), N = dy_ext_dim(n);
  dy_ext xmat = dy_ext_mul(M, K), ymat = dy_ext_mul(K, N), omat = dy_ext_mul(M, N);
  /* f32 runs on the GEMM micro-kernel; a constant y arrives packed */
  bool gemm = o->dtype == DY_F32 && kx >= 0 && n >= 0;
  dy_pack pk = dy_gemm_pack_of(ctx->p, ctx->op, 1);
  if (pk.kind == DY_PACK_B16)
    ymat = dy_ext_dim(pk.rows * ((pk.cols + 15) / 16) * 16);

  /* batch dims: groups that broadcast alike, as for the binary ops */
  const dy_type *in[2] = {x, y};
  int inb[2] = {xb, yb};
  dy_ext gext[DY_MAX_DIMS];
  bool gbc[DY_MAX_DIMS][2];
  int ng = 0;
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
    if (ng > 0 && gbc[ng - 1][0] == bc[0] && gbc[ng - 1][1] == bc[1]) {
      gext[ng - 1] = dy_ext_mul(gext[ng - 1], dy_ext_dim(od));
    } else {
      gext[ng] = dy_ext_dim(od);
      gbc[ng][0] = bc[0];
      gbc[ng][1] = bc[1];
      ng++;
    }
  }

  /* [.., M, K] @ [K, N] with x's leading dims all its own: one GEMM with
   * M' = (leading dims) * M, as x and the output are both contiguous */
  bool fold = ng > 0 && !tx && xr > 1;
  for (int gi = 0; gi < ng && fold; gi++)
    fold = !gbc[gi][0] && gbc[gi][1];
  if (fold) {
    for (int gi = 0; gi < ng; gi++)
      M = dy_ext_mul(M, gext[gi]);
    ng = 0;
  }

  const char *T = dy_ctype(o->dtype), *Z = dy_zero_of(o->dtype);
  char sM[128], sK[128], sN[128];
  dy_ext_str(ctx, M, sM, sizeof sM);
  dy_ext_str(ctx, K, sK, sizeof sK);
  dy_ext_str(ctx, N, sN, sizeof sN);
  int base = ctx->indent;
  dy_idxbuf idx[3] = {{"", 0}, {"", 0}, {"", 0}}, ptr[3];
  if (ng > 0) {
    dy_ext stride[DY_MAX_DIMS][3];
    dy_ext acc[3] = {xmat, ymat, omat};
    for (int gi = ng - 1; gi >= 0; gi--)
      for (int q = 0; q < 3; q++) {
        stride[gi][q] = acc[q];
        if (q == 2 || !gbc[gi][q])
          acc[q] = dy_ext_mul(acc[q], gext[gi]);
      }
    for (int gi = 0; gi < ng; gi++)
      for (int q = 0; q < 3; q++)
        if (q == 2 || !gbc[gi][q])
          dy_idx_add(ctx, &idx[q], dy_bvars[gi], stride[gi][q]);
    for (int gi = 0; gi < ng; gi++) {
      char s[128];
      dy_cg_line(ctx, "for (int64_t %s = 0; %s < %s; %s++) {", dy_bvars[gi],
                   dy_bvars[gi], dy_ext_str(ctx, gext[gi], s, sizeof s), dy_bvars[gi]);
      ctx->indent++;
    }
  }
  dy_ptr_plus(&ptr[0], "in0", &idx[0]);
  dy_ptr_plus(&ptr[1], "in1", &idx[1]);
  dy_ptr_plus(&ptr[2], "out0", &idx[2]);
  dy_cg_line(ctx, "const %s *a = %s;", T, ptr[0].s);
  dy_cg_line(ctx, "const %s *b = %s;", T, ptr[1].s);
  dy_cg_line(ctx, "%s *c = %s;", T, ptr[2].s);
  if (gemm) {
    /* an act without a vector form: the GEMM adds the bias, a loop over
     * the whole output applies act */
    bool after = dy_cg_act_scalar_only(act);
    char fx[512];
    if (after && !dy_cg_act_expr(act, alpha, "v", fx, sizeof fx))
      return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
    dy_status s = emit_matmul_gemm(ctx, err, &pk, tx, ty, yr == 1, M, kx, n, bias,
                                   after ? "" : act, alpha);
    for (int gi = ng - 1; gi >= 0 && s == DY_OK; gi--) {
      ctx->indent--;
      dy_cg_line(ctx, "}");
    }
    ctx->indent = base;
    if (s == DY_OK && after) {
      char total[128];
      dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), total, sizeof total);
      dy_cg_line(ctx, "/* epilogue: the activation on the finished output */");
      dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++) {", total);
      dy_cg_line(ctx, "  const float v = out0[i];");
      dy_cg_line(ctx, "  out0[i] = %s;", fx);
      dy_cg_line(ctx, "}");
    }
    return s;
  }

  /* c[i][j], a[i][k] and b[k][j] as indexes into the row-major buffers */
  dy_idxbuf ci = {"", 0}, ai = {"", 0}, bi = {"", 0};
  dy_idx_add(ctx, &ci, "i", N);
  dy_idx_add(ctx, &ci, "j", dy_ext_one());
  if (tx) {
    dy_idx_add(ctx, &ai, "k", M);
    dy_idx_add(ctx, &ai, "i", dy_ext_one());
  } else {
    dy_idx_add(ctx, &ai, "i", K);
    dy_idx_add(ctx, &ai, "k", dy_ext_one());
  }
  if (ty) {
    dy_idx_add(ctx, &bi, "j", K);
    dy_idx_add(ctx, &bi, "k", dy_ext_one());
  } else {
    dy_idx_add(ctx, &bi, "k", N);
    dy_idx_add(ctx, &bi, "j", dy_ext_one());
  }
  const char *cij = ci.s, *aik = ai.s, *bkj = bi.s;

  bool epi = bias || (act && *act);
  char fx[512];
  if (epi && o->dtype != DY_F32)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "a fused epilogue needs f32");
  if (epi && !dy_cg_act_expr(act, alpha, bias ? "(v + in2[j])" : "v", fx, sizeof fx))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  if (!ty) {
    /* i-k-j: the inner loop runs along rows of b and c, so it vectorises */
    dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++) {", sM);
    dy_cg_line(ctx, "  for (int64_t j = 0; j < %s; j++)", sN);
    dy_cg_line(ctx, "    c[%s] = %s;", cij, Z);
    dy_cg_line(ctx, "  for (int64_t k = 0; k < %s; k++) {", sK);
    dy_cg_line(ctx, "    const %s aik = a[%s];", T, aik);
    dy_cg_line(ctx, "    for (int64_t j = 0; j < %s; j++)", sN);
    dy_cg_line(ctx, "      c[%s] += aik * b[%s];", cij, bkj);
    dy_cg_line(ctx, "  }");
    if (epi) {
      dy_cg_line(ctx, "  /* epilogue: bias and activation on the finished row */");
      dy_cg_line(ctx, "  for (int64_t j = 0; j < %s; j++) {", sN);
      dy_cg_line(ctx, "    const float v = c[%s];", cij);
      dy_cg_line(ctx, "    c[%s] = %s;", cij, fx);
      dy_cg_line(ctx, "  }");
    }
    dy_cg_line(ctx, "}");
  } else {
    /* b transposed: rows of b are columns of the product, so take dot
     * products along k, where both a (unless transposed) and b are
     * contiguous */
    dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++)", sM);
    dy_cg_line(ctx, "  for (int64_t j = 0; j < %s; j++) {", sN);
    dy_cg_line(ctx, "    %s acc = %s;", T, Z);
    dy_cg_line(ctx, "    for (int64_t k = 0; k < %s; k++)", sK);
    dy_cg_line(ctx, "      acc += a[%s] * b[%s];", aik, bkj);
    if (epi) {
      dy_cg_line(ctx, "    const float v = acc;");
      dy_cg_line(ctx, "    c[%s] = %s;", cij, fx);
    } else {
      dy_cg_line(ctx, "    c[%s] = acc;", cij);
    }
    dy_cg_line(ctx, "  }");
  }
  for (int gi = ng - 1; gi >= 0; gi--) {
    ctx->indent--;
    dy_cg_line(ctx, "}");
  }
  ctx->indent = base;
  return DY_OK;
}
