/* emit_ops.c - floor 2: one emitter per op: the C body of the op's kernel.
 *
 * Each dy_emit_<name> writes, through dy_cg_line and dy_cg_for, the
 * statements of a function whose parameters are the op's inputs and
 * outputs (restrict pointers, named by dy_cg_in and dy_cg_out) and, when
 * one of the op's types has a -1 dim, `int64_t batch`. Loops are
 * specialised for the op's shapes: extents and strides are literals, only
 * the batch is a run-time value, and dims that index alike are collapsed
 * first so the loop nests stay shallow. Sizes are handled as B^p * k (B the
 * batch), printed by dy_ext_str ("30", "batch", "batch*10", "batch*dim_seq*8").
 *
 * The driver (program/kernel.c) checks every kernel's output types against inference
 * (ir/infer*.c) once, before its emitter runs; emitters check only the
 * dtypes they are written for, and fail with an error naming the op rather
 * than print wrong code.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define OPNAME(ctx) dy_op_name((ctx)->op->kind)
#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* ------------------------------------------------------------------ */
/* Elementwise binary ops: numpy broadcasting (dy_cg_broadcast)      */
/* ------------------------------------------------------------------ */

/* fmt combines two %s; on i32 it goes through uint32_t (wraps, as
 * runtime/kernels/kernels_util.c's loops, instead of overflowing), on i8 and u8 the
 * int result converts back (wraps). */
static dy_status emit_arith(dy_cg_ctx *ctx, dy_error *err, const char *fmt) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *b = dy_cg_in_type(ctx, 1);
  const dy_type *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != b->dtype || a->dtype != o->dtype)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "dtypes differ");
  if (o->dtype == DY_I32 && strcmp(fmt, "%s / %s") != 0) {
    char w[64];
    snprintf(w, sizeof w, "(int32_t)((uint32_t)%%s %c (uint32_t)%%s)", fmt[3]);
    return dy_cg_broadcast(ctx, err, w);
  }
  if (o->dtype == DY_I8 || o->dtype == DY_U8 || o->dtype == DY_I32) {
    char w[64];
    snprintf(w, sizeof w, "(%s)(%s)", dy_ctype(o->dtype), fmt);
    return dy_cg_broadcast(ctx, err, w);
  }
  if (o->dtype != DY_F32 && o->dtype != DY_I64)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "needs f32 or an integer dtype");
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

/* y[i] = pre x[i] post, or with twice: pre x[i] mid x[i] post. */
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
  FOR("for (int64_t i = 0; i < %s; i++)",
      dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), s, sizeof s));
  if (twice)
    L("%s[i] = %s%s[i]%s%s[i]%s;", OUT(0), pre, IN(0), mid, IN(0), post);
  else
    L("%s[i] = %s%s[i]%s;", OUT(0), pre, IN(0), post);
  END();
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
    L("dy_act(%s, %s, %s, DY_ACT_%s);", OUT(0), IN(0), n, act);
    return DY_OK;
  }
  L("int64_t i = 0;");
  L("for (; i + DY_VW <= %s; i += DY_VW)", n);
  L("  dy_vstore(%s + i, dy_vrelu(dy_vload(%s + i)));", OUT(0), IN(0));
  L("for (int t = (int)(%s - i); t > 0; t--, i++)", n);
  L("  %s[i] = %s[i] > 0.0f ? %s[i] : 0.0f;", OUT(0), IN(0), IN(0));
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

/* ------------------------------------------------------------------ */
/* softmax                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_emit_softmax(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != DY_F32 || !dy_type_equal(a, o))
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                      "needs f32 and an output of the input's type");
  dy_softmax_attrs sa;
  dy_status s = dy_softmax_attrs_of(ctx->op, &sa, err);
  if (s != DY_OK)
    return s;
  int64_t axis = sa.axis;
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
  const char *X = IN(0), *Y = OUT(0);
  *ctx->uses |= DY_USES_SIMD;
  if (in1) {
    /* a contiguous row: vector max, then e = exp(x - max) stored and summed
     * in vector lanes, then y = e / sum; the row stays in L1 throughout */
    L("/* per row: max, exp(x - max) and its sum, then scale (vector lanes) */");
    FOR("for (int64_t o = 0; o < %s; o++) {", sO);
    L("const float *x = %s + o * %s;", X, sN);
    L("float *y = %s + o * %s;", Y, sN);
    L("dy_vf vm = dy_vset(x[0]), vs = dy_vset(0.0f);");
    L("int64_t k = 0;");
    L("for (; k + DY_VW <= %s; k += DY_VW)", sN);
    L("  vm = dy_vmax(vm, dy_vload(x + k));");
    L("float mx = dy_vhmax(vm), sum;");
    L("for (; k < %s; k++)", sN);
    L("  mx = x[k] > mx ? x[k] : mx;");
    L("vm = dy_vset(mx);");
    L("for (k = 0; k + DY_VW <= %s; k += DY_VW) {", sN);
    L("  const dy_vf e = dy_vexp_neg(dy_vsub(dy_vload(x + k), vm));");
    L("  dy_vstore(y + k, e);");
    L("  vs = dy_vadd(vs, e);");
    L("}");
    L("sum = dy_vsum(vs);");
    L("for (; k < %s; k++) {", sN);
    L("  y[k] = dy_expf(x[k] - mx);");
    L("  sum += y[k];");
    L("}");
    L("vs = dy_vset(1.0f / sum);");
    L("for (k = 0; k + DY_VW <= %s; k += DY_VW)", sN);
    L("  dy_vstore(y + k, dy_vmul(dy_vload(y + k), vs));");
    L("for (; k < %s; k++)", sN);
    L("  y[k] /= sum;");
    END();
    return DY_OK;
  }
  /* along a strided axis: DY_VW neighbouring columns j at a time */
  L("/* softmax along a strided axis: DY_VW columns at a time, then the rest */");
  FOR("for (int64_t o = 0; o < %s; o++) {", sO);
  L("int64_t j = 0;");
  L("for (; j + DY_VW <= %s; j += DY_VW) {", sI);
  ctx->indent++;
  L("const float *x = %s + o * %s + j;", X, sNI);
  L("float *y = %s + o * %s + j;", Y, sNI);
  L("dy_vf vm = dy_vload(x), vs = dy_vset(0.0f);");
  FOR("for (int64_t k = 1; k < %s; k++)", sN);
  L("vm = dy_vmax(vm, dy_vload(x + k * %s));", sI);
  END();
  FOR("for (int64_t k = 0; k < %s; k++) {", sN);
  L("const dy_vf e = dy_vexp_neg(dy_vsub(dy_vload(x + k * %s), vm));", sI);
  L("dy_vstore(y + k * %s, e);", sI);
  L("vs = dy_vadd(vs, e);");
  END();
  L("vs = dy_vdiv(dy_vset(1.0f), vs);");
  FOR("for (int64_t k = 0; k < %s; k++)", sN);
  L("dy_vstore(y + k * %s, dy_vmul(dy_vload(y + k * %s), vs));", sI, sI);
  END();
  ctx->indent--;
  L("}");
  L("for (; j < %s; j++) {", sI);
  ctx->indent++;
  L("const float *x = %s + o * %s + j;", X, sNI);
  L("float *y = %s + o * %s + j;", Y, sNI);
  L("float mx = x[0], sum = 0.0f;");
  FOR("for (int64_t k = 1; k < %s; k++)", sN);
  L("mx = x[k * %s] > mx ? x[k * %s] : mx;", sI, sI);
  END();
  FOR("for (int64_t k = 0; k < %s; k++) {", sN);
  L("y[k * %s] = dy_expf(x[k * %s] - mx);", sI, sI);
  L("sum += y[k * %s];", sI);
  END();
  FOR("for (int64_t k = 0; k < %s; k++)", sN);
  L("y[k * %s] /= sum;", sI);
  END();
  ctx->indent--;
  L("}");
  END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reshape / flatten: the data does not move; a copy when not aliased  */
/* ------------------------------------------------------------------ */

dy_status dy_emit_reshape(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_flat_copy(ctx, err);
}

dy_status dy_emit_flatten(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_flat_copy(ctx, err);
}

/* ------------------------------------------------------------------ */
/* transpose                                                           */
/* ------------------------------------------------------------------ */

dy_status dy_emit_transpose(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  dy_transpose_attrs ta;
  dy_status s = dy_transpose_attrs_of(ctx->op, &ta, err);
  if (s != DY_OK)
    return s;
  const int64_t *perm = ta.perm;
  int np = ta.n_perm;
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
    L("%s[0] = %s[0];", OUT(0), IN(0));
    return DY_OK;
  }
  if (ng == 1 && dy_ext_is_one(gstr[0])) {
    char sz[128];
    FOR("for (int64_t i = 0; i < %s; i++)", dy_ext_str(ctx, gext[0], sz, sizeof sz));
    L("%s[i] = %s[i];", OUT(0), IN(0));
    END();
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
  dy_cg_open_loops(ctx, ng, gext, dy_loop_var);
  L("%s[%s] = %s[%s];", OUT(0), dy_idx_str(&oi), IN(0), dy_idx_str(&ii));
  dy_cg_close_loops(ctx, ng);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* full                                                                */
/* ------------------------------------------------------------------ */

dy_status dy_emit_full(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  dy_full_attrs fa;
  dy_status s = dy_full_attrs_of(ctx->op, &fa, err);
  if (s != DY_OK)
    return s;
  double v = fa.value;
  int64_t dt = fa.dtype;
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
  FOR("for (int64_t i = 0; i < %s; i++)",
      dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), sz, sizeof sz));
  L("%s[i] = %s;", OUT(0), lit);
  END();
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_add = {.emit = dy_emit_add};
const dy_cg_op dy_cg_op_sub = {.emit = dy_emit_sub};
const dy_cg_op dy_cg_op_mul = {.emit = dy_emit_mul};
const dy_cg_op dy_cg_op_div = {.emit = dy_emit_div};
const dy_cg_op dy_cg_op_relu = {.emit = dy_emit_relu};
const dy_cg_op dy_cg_op_sigmoid = {.emit = dy_emit_sigmoid};
const dy_cg_op dy_cg_op_tanh = {.emit = dy_emit_tanh};
const dy_cg_op dy_cg_op_matmul = {.emit = dy_emit_matmul, .scratch = dy_gemm_matmul_scratch,
                                  .roles = {"x", "w", "bias", "res"}};
const dy_cg_op dy_cg_op_softmax = {.emit = dy_emit_softmax};
const dy_cg_op dy_cg_op_reshape = {.emit = dy_emit_reshape};
const dy_cg_op dy_cg_op_flatten = {.emit = dy_emit_flatten};
const dy_cg_op dy_cg_op_transpose = {.emit = dy_emit_transpose};
const dy_cg_op dy_cg_op_full = {.emit = dy_emit_full};
