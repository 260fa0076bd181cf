/* emit_math.c - floor 2: emitters of the math family (ir/ops_math.def).
 *
 * Unary ops go through one helper, emit_map, which binds the op's float
 * attributes to named constants and the element to `x` (the parameter is
 * then x_in: the driver names parameters by role where the name is free):
 *
 *   const float alpha = 0.00999999978f;
 *   for (int64_t i = 0; i < batch*13; i++) {
 *     const float x = x_in[i];
 *     y[i] = x > 0.0f ? x : alpha * x;
 *   }
 *
 * The expression strings are the formulas of runtime/kernels/kernels_math.c,
 * word for word (same f32 constants and order of operations; where the
 * kernel calls libm's expf, erff, ..., the generated C calls dy_expf,
 * dy_erff, ... of emit_mathlib.c), so the generated C agrees with the
 * eager kernels; change one, change the other. Semantics are documented
 * there.
 *
 * Binary and ternary ops go through dy_cg_broadcast. minimum and maximum
 * name each operand twice, which a format string with one %s per input
 * cannot: on f32 they use dy_cg_broadcast_let, which binds the elements
 * to v0, v1 (`dy_isnanf(v0) || v0 > v1 ? v0 : v1`, NaN propagating); that
 * helper binds f32 only, so on i64 the kernel defines a function-like macro
 * for its body and undefines it after:
 *
 *   #define DY_MAXIMUM(x, y) ((x) > (y) ? (x) : (y))
 *     ... y[i] = DY_MAXIMUM(a[i], b[0]); ...
 *   #undef DY_MAXIMUM
 *
 * Generated code uses emit_mathlib.c's functions (dy_expf, dy_erff,
 * dy_isnanf, DY_INFINITY, ...; no libm) and <stdint.h> (INT64_MAX), which
 * every NAME.c includes.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define M_F32 (1u << DY_F32)
#define M_I64 (1u << DY_I64)
#define M_ALL ((1u << DY_DTYPE_COUNT) - 1u)
#define M_NARROW (1u << DY_I32 | 1u << DY_I8 | 1u << DY_U8)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* A float attribute as the f32 the kernels compute with (kernels_math.c
 * converts the same way), printed as a C literal into buf. */
static dy_status param_literal(dy_cg_ctx *ctx, const char *name, char *buf,
                               size_t n, dy_error *err) {
  double d;
  dy_status s = dy_op_attr_float(ctx->op, name, &d, err);
  if (s != DY_OK)
    return s;
  float v = d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
  if (!dy_float_literal(v, buf, n))
    snprintf(buf, n, "%s", isnan(v) ? "DY_NAN" : v > 0 ? "DY_INFINITY" : "-DY_INFINITY");
  return DY_OK;
}

/* One flat loop: y[i] = expr of x, the input's element i. Its dtype must be
 * in in_mask; the output has the input's shape and dtype out (or the
 * input's when out < 0). params (NULL-terminated, at most two) are the
 * float attributes the expression names, declared as `const float NAME`
 * from the attribute of the same name; "lo"/"hi" stand for clip's min/max,
 * which are C's words too often to be safe names. */
static dy_status emit_map(dy_cg_ctx *ctx, dy_error *err, unsigned in_mask,
                          int out, const char *const *params, const char *expr) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  dy_dtype want = out < 0 ? a->dtype : (dy_dtype)out;
  if (!((in_mask >> a->dtype) & 1u) || o->dtype != want)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                              "input or output dtype not supported");
  if (!dy_ext_eq(dy_ext_range(a, 0, a->rank), dy_ext_range(o, 0, o->rank)))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                              "input and output sizes differ");
  for (int k = 0; params && params[k]; k++) {
    const char *attr = strcmp(params[k], "lo") == 0   ? "min"
                       : strcmp(params[k], "hi") == 0 ? "max"
                                                      : params[k];
    char lit[64];
    dy_status s = param_literal(ctx, attr, lit, sizeof lit, err);
    if (s != DY_OK)
      return s;
    dy_cg_line(ctx, "const float %s = %s;", params[k], lit);
  }
  char sz[128];
  dy_cg_for(ctx, "for (int64_t i = 0; i < %s; i++) {",
            dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), sz, sizeof sz));
  dy_cg_line(ctx, "const %s x = %s[i];", dy_ctype(a->dtype), dy_cg_in(ctx, 0));
  dy_cg_line(ctx, "%s[i] = %s;", dy_cg_out(ctx, 0), expr);
  dy_cg_end(ctx);
  return DY_OK;
}

/* A unary op with f32 formula ef and, when i64 is allowed, formula ei. */
static dy_status emit_unary(dy_cg_ctx *ctx, dy_error *err,
                            const char *const *params, const char *ef,
                            const char *ei) {
  if (ei && dy_cg_in_type(ctx, 0)->dtype == DY_I64)
    return emit_map(ctx, err, M_I64, -1, params, ei);
  return emit_map(ctx, err, M_F32, -1, params, ef);
}

#define PARAMS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Inputs [first, n_inputs) share one dtype, which is in mask; the output
 * has dtype out (or theirs when out < 0). */
static dy_status check_operands(dy_cg_ctx *ctx, dy_error *err, int first,
                                unsigned mask, int out) {
  dy_dtype t = dy_cg_in_type(ctx, first)->dtype;
  for (int i = first + 1; i < ctx->op->n_inputs; i++)
    if (dy_cg_in_type(ctx, i)->dtype != t)
      return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "dtypes differ");
  if (!((mask >> t) & 1u) || dy_cg_out_type(ctx, 0)->dtype != (out < 0 ? t : (dy_dtype)out))
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                              "input or output dtype not supported");
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* Activations                                                         */
/* ------------------------------------------------------------------ */

/* An activation with a vector form (dy_simd.h's dy_act, DY_ACT_<code>):
 * one out-of-line call over the whole tensor, the same formula lane by
 * lane; kept apart from the C compiler's inlining budget inside NAME_run.
 * With --plain-kernels the scalar loop of formula ef instead. */
static dy_status emit_vector_act(dy_cg_ctx *ctx, dy_error *err, const char *code,
                                 const char *ef) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (ctx->plain_kernels || a->dtype != DY_F32 || o->dtype != DY_F32 ||
      !dy_ext_eq(dy_ext_range(a, 0, a->rank), dy_ext_range(o, 0, o->rank)))
    return emit_unary(ctx, err, NULL, ef, NULL); /* its checks and errors */
  char n[128];
  *ctx->uses |= DY_USES_SIMD;
  dy_cg_line(ctx, "dy_act(%s, %s, %s, DY_ACT_%s);", dy_cg_out(ctx, 0), dy_cg_in(ctx, 0),
             dy_ext_str(ctx, dy_ext_range(o, 0, o->rank), n, sizeof n), code);
  return DY_OK;
}

dy_status dy_emit_gelu(dy_cg_ctx *ctx, dy_error *err) {
  dy_gelu_attrs a;
  dy_status s = dy_gelu_attrs_of(ctx->op, &a, err);
  if (s != DY_OK)
    return s;
  if (a.approximate)
    return emit_unary(ctx, err, NULL,
                      "0.5f * x * (1.0f + dy_tanhf(0.797884561f * (x + 0.044715f * x * x * x)))",
                      NULL);
  return emit_vector_act(ctx, err, "GELU", "0.5f * x * (1.0f + dy_erff(x * 0.707106781f))");
}

dy_status dy_emit_silu(dy_cg_ctx *ctx, dy_error *err) {
  return emit_vector_act(ctx, err, "SILU", "x / (1.0f + dy_expf(-x))");
}

dy_status dy_emit_hard_swish(dy_cg_ctx *ctx, dy_error *err) {
  return emit_vector_act(ctx, err, "HARD_SWISH",
                         "x * dy_fminf(dy_fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f");
}

dy_status dy_emit_softsign(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "x / (1.0f + dy_fabsf(x))", NULL);
}

dy_status dy_emit_hard_sigmoid(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, PARAMS("slope", "offset"),
                    "dy_isnanf(x) ? x : dy_fmaxf(0.0f, dy_fminf(1.0f, slope * x + offset))", NULL);
}

dy_status dy_emit_leaky_relu(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, PARAMS("alpha"), "x > 0.0f ? x : alpha * x", NULL);
}

dy_status dy_emit_elu(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, PARAMS("alpha"), "x > 0.0f ? x : alpha * dy_expm1f(x)", NULL);
}

dy_status dy_emit_clip(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, PARAMS("lo", "hi"), "x < lo ? lo : x > hi ? hi : x", NULL);
}

dy_status dy_emit_softplus(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, PARAMS("beta", "threshold"),
                    "beta * x > threshold ? x : dy_log1pf(dy_expf(beta * x)) / beta", NULL);
}

/* ------------------------------------------------------------------ */
/* Elementwise math                                                    */
/* ------------------------------------------------------------------ */

dy_status dy_emit_exp(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "dy_expf(x)", NULL);
}
dy_status dy_emit_log(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "dy_logf(x)", NULL);
}
dy_status dy_emit_sqrt(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "dy_sqrtf(x)", NULL);
}
dy_status dy_emit_rsqrt(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "1.0f / dy_sqrtf(x)", NULL);
}
dy_status dy_emit_erf(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "dy_erff(x)", NULL);
}
dy_status dy_emit_reciprocal(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "1.0f / x", NULL);
}

/* i64: two's complement wrap, so abs/neg of INT64_MIN is INT64_MIN. */
dy_status dy_emit_abs(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "dy_fabsf(x)",
                    "x < 0 ? (int64_t)(0u - (uint64_t)x) : x");
}
dy_status dy_emit_neg(dy_cg_ctx *ctx, dy_error *err) {
  return emit_unary(ctx, err, NULL, "-x", "(int64_t)(0u - (uint64_t)x)");
}

dy_status dy_emit_scale(dy_cg_ctx *ctx, dy_error *err) {
  dy_scale_attrs a;
  dy_status s = dy_scale_attrs_of(ctx->op, &a, err);
  if (s != DY_OK)
    return s;
  return emit_unary(ctx, err, PARAMS("scale", "bias"),
                    a.bias_after_scale ? "scale * x + bias" : "scale * (x + bias)", NULL);
}

/* ------------------------------------------------------------------ */
/* pow, minimum, maximum                                               */
/* ------------------------------------------------------------------ */

dy_status dy_emit_pow(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = check_operands(ctx, err, 0, M_F32, -1);
  return s ? s : dy_cg_broadcast(ctx, err, "dy_powf(%s, %s)");
}

/* minimum / maximum: f32 expression over v0, v1 (dy_cg_broadcast_let);
 * integers (i64, i32, i8, u8) through a macro MACRO(x, y) defined around
 * the loop nest. */
static dy_status emit_minmax(dy_cg_ctx *ctx, dy_error *err, const char *f32,
                             const char *macro, const char *i64) {
  dy_status s = check_operands(ctx, err, 0, M_F32 | M_I64 | M_NARROW, -1);
  if (s != DY_OK)
    return s;
  if (dy_cg_in_type(ctx, 0)->dtype == DY_F32)
    return dy_cg_broadcast_let(ctx, err, f32);
  char fmt[64];
  snprintf(fmt, sizeof fmt, "%s(%%s, %%s)", macro);
  dy_buf_printf(ctx->body, "#define %s(x, y) (%s)\n", macro, i64);
  s = dy_cg_broadcast(ctx, err, fmt);
  dy_buf_printf(ctx->body, "#undef %s\n", macro);
  return s;
}

dy_status dy_emit_minimum(dy_cg_ctx *ctx, dy_error *err) {
  return emit_minmax(ctx, err, "dy_isnanf(v0) || v0 < v1 ? v0 : v1", "DY_MINIMUM",
                     "(x) < (y) ? (x) : (y)");
}

dy_status dy_emit_maximum(dy_cg_ctx *ctx, dy_error *err) {
  return emit_minmax(ctx, err, "dy_isnanf(v0) || v0 > v1 ? v0 : v1", "DY_MAXIMUM",
                     "(x) > (y) ? (x) : (y)");
}

/* ------------------------------------------------------------------ */
/* Comparisons, where, cast                                            */
/* ------------------------------------------------------------------ */

dy_status dy_emit_equal(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = check_operands(ctx, err, 0, M_ALL, DY_BOOL);
  return s ? s : dy_cg_broadcast(ctx, err, "(uint8_t)(%s == %s)");
}

dy_status dy_emit_greater(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = check_operands(ctx, err, 0, M_ALL, DY_BOOL);
  return s ? s : dy_cg_broadcast(ctx, err, "(uint8_t)(%s > %s)");
}

dy_status dy_emit_less(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = check_operands(ctx, err, 0, M_ALL, DY_BOOL);
  return s ? s : dy_cg_broadcast(ctx, err, "(uint8_t)(%s < %s)");
}

dy_status dy_emit_where(dy_cg_ctx *ctx, dy_error *err) {
  if (dy_cg_in_type(ctx, 0)->dtype != DY_BOOL)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH,
                              "the condition must be bool");
  dy_status s = check_operands(ctx, err, 1, M_ALL, -1);
  return s ? s : dy_cg_broadcast(ctx, err, "%s ? %s : %s");
}

/* The conversions of kernels_math.c's dy_kernel_cast, from x to the
 * output's dtype: f32 -> an integer truncates, NaN -> 0, saturates to the
 * dtype's range; integer -> narrower integer wraps (through the unsigned
 * type, so the conversion is defined); -> bool is x != 0. */
dy_status dy_emit_cast(dy_cg_ctx *ctx, dy_error *err) {
  dy_cast_attrs a;
  dy_status s = dy_cast_attrs_of(ctx->op, &a, err);
  if (s != DY_OK)
    return s;
  int64_t dt = a.dtype;
  dy_dtype from = dy_cg_in_type(ctx, 0)->dtype;
  if (dt < 0 || dt >= DY_DTYPE_COUNT || (unsigned)from >= DY_DTYPE_COUNT)
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "unknown dtype");
  static const char *const from_f32[DY_DTYPE_COUNT] = {
      [DY_F32] = "x",
      [DY_I64] = "dy_isnanf(x) ? 0 : x >= 9223372036854775808.0f ? INT64_MAX : "
                 "x < -9223372036854775808.0f ? INT64_MIN : (int64_t)x",
      [DY_BOOL] = "(uint8_t)(x != 0.0f)",
      [DY_I8] = "dy_isnanf(x) ? 0 : x >= 127.0f ? 127 : x <= -128.0f ? -128 : (int8_t)x",
      [DY_U8] = "dy_isnanf(x) ? 0 : x >= 255.0f ? 255 : x <= 0.0f ? 0 : (uint8_t)x",
      [DY_I32] = "dy_isnanf(x) ? 0 : x >= 2147483647.0f ? INT32_MAX : "
                 "x <= -2147483648.0f ? INT32_MIN : (int32_t)x",
  };
  /* from an integer or bool */
  static const char *const from_int[DY_DTYPE_COUNT] = {
      [DY_F32] = "(float)x",
      [DY_I64] = "(int64_t)x",
      [DY_BOOL] = "(uint8_t)(x != 0)",
      [DY_I8] = "(int8_t)(uint8_t)x",
      [DY_U8] = "(uint8_t)x",
      [DY_I32] = "(int32_t)(uint32_t)x",
  };
  const char *e = from == DY_F32 ? from_f32[dt] : from_int[dt];
  if (from == DY_BOOL && dt == DY_F32)
    e = "x ? 1.0f : 0.0f";
  if (from == (dy_dtype)dt)
    e = "x";
  return emit_map(ctx, err, 1u << from, (int)dt, NULL, e);
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

const dy_cg_op dy_cg_op_gelu = {.emit = dy_emit_gelu};
const dy_cg_op dy_cg_op_silu = {.emit = dy_emit_silu};
const dy_cg_op dy_cg_op_hard_swish = {.emit = dy_emit_hard_swish};
const dy_cg_op dy_cg_op_softsign = {.emit = dy_emit_softsign};
const dy_cg_op dy_cg_op_hard_sigmoid = {.emit = dy_emit_hard_sigmoid};
const dy_cg_op dy_cg_op_leaky_relu = {.emit = dy_emit_leaky_relu};
const dy_cg_op dy_cg_op_elu = {.emit = dy_emit_elu};
const dy_cg_op dy_cg_op_clip = {.emit = dy_emit_clip};
const dy_cg_op dy_cg_op_softplus = {.emit = dy_emit_softplus};
const dy_cg_op dy_cg_op_exp = {.emit = dy_emit_exp};
const dy_cg_op dy_cg_op_log = {.emit = dy_emit_log};
const dy_cg_op dy_cg_op_sqrt = {.emit = dy_emit_sqrt};
const dy_cg_op dy_cg_op_rsqrt = {.emit = dy_emit_rsqrt};
const dy_cg_op dy_cg_op_erf = {.emit = dy_emit_erf};
const dy_cg_op dy_cg_op_reciprocal = {.emit = dy_emit_reciprocal};
const dy_cg_op dy_cg_op_abs = {.emit = dy_emit_abs};
const dy_cg_op dy_cg_op_neg = {.emit = dy_emit_neg};
const dy_cg_op dy_cg_op_scale = {.emit = dy_emit_scale};
const dy_cg_op dy_cg_op_pow = {.emit = dy_emit_pow};
const dy_cg_op dy_cg_op_minimum = {.emit = dy_emit_minimum};
const dy_cg_op dy_cg_op_maximum = {.emit = dy_emit_maximum};
const dy_cg_op dy_cg_op_equal = {.emit = dy_emit_equal};
const dy_cg_op dy_cg_op_greater = {.emit = dy_emit_greater};
const dy_cg_op dy_cg_op_less = {.emit = dy_emit_less};
const dy_cg_op dy_cg_op_where = {.emit = dy_emit_where, .roles = {"cond", "a", "b"}};
const dy_cg_op dy_cg_op_cast = {.emit = dy_emit_cast};
