/* emit_ops.c - one emitter per op: the C body of the op's kernel.
 *
 * Each dy_emit_<name> writes, through dy_cg_line, the statements of a
 * function whose parameters are in0.., out0.. (restrict pointers) and, when
 * one of the op's types has a -1 dim, `int64_t batch`. Loops are
 * specialised for the op's shapes: extents and strides are literals, only
 * the batch is a run-time value, and dims that index alike are collapsed
 * first so the loop nests stay shallow. Sizes are handled as B^p * k (B the
 * batch), printed by dy_cg_product ("30", "batch", "batch*10").
 *
 * The driver (emit.c) checks every kernel's output types against inference
 * (ir/infer*.c) once, before its emitter runs; emitters check only the
 * dtypes they are written for, and fail with an error naming the op rather
 * than print wrong code.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen_internal.h"
#include "dy_codegen.h"

const dy_cg_fn dy_cg_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = dy_emit_##name,
#include "ops.def"
#undef DY_OP
};

#define OPNAME(ctx) dy_op_name((ctx)->op->kind)

/* ------------------------------------------------------------------ */
/* Elementwise binary ops: numpy broadcasting (dy_cg_broadcast)      */
/* ------------------------------------------------------------------ */

static dy_status emit_arith(dy_cg_ctx *ctx, dy_error *err, const char *fmt) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *b = dy_cg_in_type(ctx, 1);
  const dy_type *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != b->dtype || a->dtype != o->dtype)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "dtypes differ");
  if (o->dtype != DY_F32 && o->dtype != DY_I64)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "needs f32 or i64");
  return dy_cg_broadcast(ctx, err, fmt);
}

dy_status dy_emit_add(dy_cg_ctx *ctx, dy_error *err) {
  return emit_arith(ctx, err, "%s + %s");
}
dy_status dy_emit_sub(dy_cg_ctx *ctx, dy_error *err) {
  return emit_arith(ctx, err, "%s - %s");
}
dy_status dy_emit_mul(dy_cg_ctx *ctx, dy_error *err) {
  return emit_arith(ctx, err, "%s * %s");
}
dy_status dy_emit_div(dy_cg_ctx *ctx, dy_error *err) {
  return emit_arith(ctx, err, "%s / %s");
}

/* ------------------------------------------------------------------ */
/* Elementwise unary ops: one flat loop                                */
/* ------------------------------------------------------------------ */

/* out0[i] = pre in0[i] post, or with twice: pre in0[i] mid in0[i] post. */
static dy_status emit_unary(dy_cg_ctx *ctx, dy_error *err, bool int_ok,
                            const char *pre, const char *mid, const char *post,
                            bool twice) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != o->dtype || (a->dtype != DY_F32 && !(int_ok && a->dtype == DY_I64)))
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                      int_ok ? "needs f32 or i64" : "needs f32");
  if (!dy_ext_eq(dy_ext_range(a, 0, a->rank), dy_ext_range(o, 0, o->rank)))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "input and output sizes differ");
  char s[128];
  dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++)",
               dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), s, sizeof s));
  if (twice)
    dy_cg_line(ctx, "  out0[i] = %sin0[i]%sin0[i]%s;", pre, mid, post);
  else
    dy_cg_line(ctx, "  out0[i] = %sin0[i]%s;", pre, post);
  return DY_OK;
}

/* f32 activations in vector lanes (emit_simd.c): relu as a loop over
 * dy_vrelu with the scalar form for the tail, the others through dy_act. */
static dy_status emit_unary_vector(dy_cg_ctx *ctx, dy_error *err, const char *act) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != DY_F32 || o->dtype != DY_F32)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "needs f32");
  if (!dy_ext_eq(dy_ext_range(a, 0, a->rank), dy_ext_range(o, 0, o->rank)))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                              "input and output sizes differ");
  char n[128];
  dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), n, sizeof n);
  *ctx->uses |= DY_USES_SIMD;
  if (strcmp(act, "relu") != 0) {
    dy_cg_line(ctx, "dy_act(out0, in0, %s, DY_ACT_%s);", n, act);
    return DY_OK;
  }
  dy_cg_line(ctx, "int64_t i = 0;");
  dy_cg_line(ctx, "for (; i + DY_VW <= %s; i += DY_VW)", n);
  dy_cg_line(ctx, "  dy_vstore(out0 + i, dy_vrelu(dy_vload(in0 + i)));");
  dy_cg_line(ctx, "for (int t = (int)(%s - i); t > 0; t--, i++)", n);
  dy_cg_line(ctx, "  out0[i] = in0[i] > 0.0f ? in0[i] : 0.0f;");
  return DY_OK;
}

dy_status dy_emit_relu(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0);
  if (a->dtype == DY_I64)
    return emit_unary(ctx, err, true, "", " > 0 ? ", " : 0", true);
  return emit_unary_vector(ctx, err, "relu");
}

dy_status dy_emit_sigmoid(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary_vector(ctx, err, "SIGMOID");
}

dy_status dy_emit_tanh(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary_vector(ctx, err, "TANH");
}

/* ------------------------------------------------------------------ */
/* matmul: numpy rules, leading dims broadcast                         */
/* ------------------------------------------------------------------ */

dy_status dy_emit_matmul(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_matmul_epilogue(ctx, err, false, NULL, 0);
}

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
                    .bias = bias ? "in2" : NULL, .act = act, .alpha = alpha};
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
  bool tx = dy_op_attr_int_or(ctx->op, "transpose_x", 0) != 0;
  bool ty = dy_op_attr_int_or(ctx->op, "transpose_y", 0) != 0;
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
    dy_status s = emit_matmul_gemm(ctx, err, &pk, tx, ty, yr == 1, M, kx, n, bias, act, alpha);
    for (int gi = ng - 1; gi >= 0 && s == DY_OK; gi--) {
      ctx->indent--;
      dy_cg_line(ctx, "}");
    }
    ctx->indent = base;
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

/* ------------------------------------------------------------------ */
/* softmax                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_emit_softmax(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != DY_F32 || !dy_type_equal(a, o))
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                      "needs f32 and an output of the input's type");
  int64_t axis;
  dy_status s = dy_op_attr_int(ctx->op, "axis", &axis, err);
  if (s != DY_OK)
    return s;
  int r = a->rank;
  if (r == 0 || axis < -r || axis >= r)
    return dy_error_at(err, ctx->op, DY_STATUS_INVALID_ARGUMENT,
                       "codegen: softmax: axis %lld out of range for rank %d",
                       (long long)axis, r);
  int ax = (int)(axis < 0 ? axis + r : axis);
  dy_ext outer = dy_ext_range(a, 0, ax), n = dy_ext_dim(a->shape[ax]),
      inner = dy_ext_range(a, ax + 1, r);
  if (n.k == 0)
    return DY_OK; /* no elements */
  char sO[128], sN[128], sI[128], sNI[128];
  dy_ext_str(ctx, outer, sO, sizeof sO);
  dy_ext_str(ctx, n, sN, sizeof sN);
  dy_ext_str(ctx, inner, sI, sizeof sI);
  dy_ext_str(ctx, dy_ext_mul(n, inner), sNI, sizeof sNI);
  bool in1 = dy_ext_is_one(inner);
  int base = ctx->indent;
  *ctx->uses |= DY_USES_SIMD;
#define L(...) dy_cg_line(ctx, __VA_ARGS__)
  if (in1) {
    /* a contiguous row: vector max, then e = exp(x - max) stored and summed
     * in vector lanes, then y = e / sum; the row stays in L1 throughout */
    L("/* per row: max, exp(x - max) and its sum, then scale (vector lanes) */");
    L("for (int64_t o = 0; o < %s; o++) {", sO);
    L("  const float *x = in0 + o * %s;", sN);
    L("  float *y = out0 + o * %s;", sN);
    L("  dy_vf vm = dy_vset(x[0]), vs = dy_vset(0.0f);");
    L("  int64_t k = 0;");
    L("  for (; k + DY_VW <= %s; k += DY_VW)", sN);
    L("    vm = dy_vmax(vm, dy_vload(x + k));");
    L("  float mx = dy_vhmax(vm), sum;");
    L("  for (; k < %s; k++)", sN);
    L("    mx = x[k] > mx ? x[k] : mx;");
    L("  vm = dy_vset(mx);");
    L("  for (k = 0; k + DY_VW <= %s; k += DY_VW) {", sN);
    L("    const dy_vf e = dy_vexp_neg(dy_vsub(dy_vload(x + k), vm));");
    L("    dy_vstore(y + k, e);");
    L("    vs = dy_vadd(vs, e);");
    L("  }");
    L("  sum = dy_vsum(vs);");
    L("  for (; k < %s; k++) {", sN);
    L("    y[k] = dy_expf(x[k] - mx);");
    L("    sum += y[k];");
    L("  }");
    L("  vs = dy_vset(1.0f / sum);");
    L("  for (k = 0; k + DY_VW <= %s; k += DY_VW)", sN);
    L("    dy_vstore(y + k, dy_vmul(dy_vload(y + k), vs));");
    L("  for (; k < %s; k++)", sN);
    L("    y[k] /= sum;");
    L("}");
    return DY_OK;
  }
  /* along a strided axis: DY_VW neighbouring columns j at a time */
  L("/* softmax along a strided axis: DY_VW columns at a time, then the rest */");
  L("for (int64_t o = 0; o < %s; o++) {", sO);
  L("  int64_t j = 0;");
  L("  for (; j + DY_VW <= %s; j += DY_VW) {", sI);
  L("    const float *x = in0 + o * %s + j;", sNI);
  L("    float *y = out0 + o * %s + j;", sNI);
  L("    dy_vf vm = dy_vload(x), vs = dy_vset(0.0f);");
  L("    for (int64_t k = 1; k < %s; k++)", sN);
  L("      vm = dy_vmax(vm, dy_vload(x + k * %s));", sI);
  L("    for (int64_t k = 0; k < %s; k++) {", sN);
  L("      const dy_vf e = dy_vexp_neg(dy_vsub(dy_vload(x + k * %s), vm));", sI);
  L("      dy_vstore(y + k * %s, e);", sI);
  L("      vs = dy_vadd(vs, e);");
  L("    }");
  L("    vs = dy_vdiv(dy_vset(1.0f), vs);");
  L("    for (int64_t k = 0; k < %s; k++)", sN);
  L("      dy_vstore(y + k * %s, dy_vmul(dy_vload(y + k * %s), vs));", sI, sI);
  L("  }");
  L("  for (; j < %s; j++) {", sI);
  L("    const float *x = in0 + o * %s + j;", sNI);
  L("    float *y = out0 + o * %s + j;", sNI);
  L("    float mx = x[0], sum = 0.0f;");
  L("    for (int64_t k = 1; k < %s; k++)", sN);
  L("      mx = x[k * %s] > mx ? x[k * %s] : mx;", sI, sI);
  L("    for (int64_t k = 0; k < %s; k++) {", sN);
  L("      y[k * %s] = dy_expf(x[k * %s] - mx);", sI, sI);
  L("      sum += y[k * %s];", sI);
  L("    }");
  L("    for (int64_t k = 0; k < %s; k++)", sN);
  L("      y[k * %s] /= sum;", sI);
  L("  }");
  L("}");
#undef L
  ctx->indent = base;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reshape / flatten: the data does not move; a copy when not aliased  */
/* ------------------------------------------------------------------ */

static dy_status emit_copy(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != o->dtype)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "dtypes differ");
  dy_ext na = dy_ext_range(a, 0, a->rank), no = dy_ext_range(o, 0, o->rank);
  if (!dy_ext_eq(na, no))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "input and output sizes differ");
  char s[128];
  dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++)",
               dy_ext_str(ctx, no, s, sizeof s));
  dy_cg_line(ctx, "  out0[i] = in0[i];");
  return DY_OK;
}

dy_status dy_emit_reshape(dy_cg_ctx *ctx, dy_error *err) {
  return emit_copy(ctx, err);
}

dy_status dy_emit_flatten(dy_cg_ctx *ctx, dy_error *err) {
  return emit_copy(ctx, err);
}

/* ------------------------------------------------------------------ */
/* transpose                                                           */
/* ------------------------------------------------------------------ */

dy_status dy_emit_transpose(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  const int64_t *perm;
  int np;
  dy_status s = dy_op_attr_ints(ctx->op, "perm", &perm, &np, err);
  if (s != DY_OK)
    return s;
  int r = a->rank;
  if (a->dtype != o->dtype || o->rank != r || np != r)
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                      "perm, input and output do not agree");
  int pm[DY_MAX_DIMS];
  bool seen[DY_MAX_DIMS] = {false};
  for (int d = 0; d < r; d++) {
    int64_t q = perm[d] < 0 ? perm[d] + r : perm[d];
    if (q < 0 || q >= r || seen[q])
      return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT,
                        "perm is not a permutation");
    seen[q] = true;
    pm[d] = (int)q;
    if (o->shape[d] != a->shape[q])
      return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                        "output shape is not the permuted input shape");
  }
  /* input strides */
  dy_ext istr[DY_MAX_DIMS];
  for (int d = 0; d < r; d++)
    istr[d] = dy_ext_range(a, d + 1, r);
  /* loop groups over the output dims, dropping 1s and merging neighbours
   * that are also neighbours in the input */
  dy_ext gext[DY_MAX_DIMS], gstr[DY_MAX_DIMS];
  int ng = 0;
  for (int d = 0; d < r; d++) {
    if (o->shape[d] == 1)
      continue;
    dy_ext e = dy_ext_dim(o->shape[d]), st = istr[pm[d]];
    if (ng > 0 && dy_ext_eq(gstr[ng - 1], dy_ext_mul(e, st))) {
      gext[ng - 1] = dy_ext_mul(gext[ng - 1], e);
      gstr[ng - 1] = st;
    } else {
      gext[ng] = e;
      gstr[ng] = st;
      ng++;
    }
  }
  if (ng == 0) {
    dy_cg_line(ctx, "out0[0] = in0[0];");
    return DY_OK;
  }
  if (ng == 1 && dy_ext_is_one(gstr[0])) {
    char sz[128];
    dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++)",
                 dy_ext_str(ctx, gext[0], sz, sizeof sz));
    dy_cg_line(ctx, "  out0[i] = in0[i];");
    return DY_OK;
  }
  dy_ext ostr[DY_MAX_DIMS];
  dy_ext acc = dy_ext_one();
  for (int gi = ng - 1; gi >= 0; gi--) {
    ostr[gi] = acc;
    acc = dy_ext_mul(acc, gext[gi]);
  }
  dy_idxbuf oi = {"", 0}, ii = {"", 0};
  for (int gi = 0; gi < ng; gi++) {
    dy_idx_add(ctx, &oi, dy_loop_var[gi], ostr[gi]);
    dy_idx_add(ctx, &ii, dy_loop_var[gi], gstr[gi]);
  }
  int base = ctx->indent;
  dy_cg_open_loops(ctx, ng, gext, dy_loop_var);
  dy_cg_line(ctx, "out0[%s] = in0[%s];", dy_idx_str(&oi), dy_idx_str(&ii));
  ctx->indent = base;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* full                                                                */
/* ------------------------------------------------------------------ */

dy_status dy_emit_full(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  double v;
  dy_status s = dy_op_attr_float(ctx->op, "value", &v, err);
  if (s != DY_OK)
    return s;
  int64_t dt = dy_op_attr_int_or(ctx->op, "dtype", o->dtype);
  if (dt != (int64_t)o->dtype)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                      "attribute dtype differs from the output's");
  char lit[64];
  switch (o->dtype) {
  case DY_F32: {
    float f = (float)v;
    if (isnan(f))
      snprintf(lit, sizeof lit, "DY_NAN");
    else if (isinf(f))
      snprintf(lit, sizeof lit, "%sDY_INFINITY", f < 0 ? "-" : "");
    else
      dy_float_literal(f, lit, sizeof lit);
    break;
  }
  case DY_I64:
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      return dy_error_at(err, ctx->op, DY_STATUS_INVALID_ARGUMENT,
                         "codegen: full: value %g does not fit in i64", v);
    dy_int64_literal((int64_t)v, lit, sizeof lit);
    break;
  case DY_BOOL:
    snprintf(lit, sizeof lit, "%d", v != 0);
    break;
  default:
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown dtype");
  }
  char sz[128];
  dy_cg_line(ctx, "for (int64_t i = 0; i < %s; i++)",
               dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), sz, sizeof sz));
  dy_cg_line(ctx, "  out0[i] = %s;", lit);
  return DY_OK;
}
