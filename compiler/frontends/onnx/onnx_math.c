/* onnx_math.c - ONNX's elementwise ops that are more than one op of the
 * table: arithmetic (with the dynamic batch carried through shape
 * arithmetic), Pow, Mod, Min/Max/Sum/Mean, GreaterOrEqual/LessOrEqual and
 * logic, composed activations, hyperbolic functions, rounding,
 * IsNaN/IsInf, Cast. The elementwise ops that are exactly one op of the
 * table (Relu, Exp, Sin, LeakyRelu, Equal, Where, ...) are rows of
 * onnx_table.c instead.
 *
 * Ops the op table lacks are composed from primitives: Selu is a scaled
 * elu, Sinh is (e^x - e^-x) / 2, GreaterOrEqual is greater or equal, Floor
 * goes through an i64 cast. Conventions as in onnx_ops.c.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* elementwise binary ops                                              */
/* ------------------------------------------------------------------ */

/* Arithmetic on shape values (rank <= 1, i64): a symbolic entry computes
 * as a size expression (ir/core/dims.c): batch * heads, seq + 1, the exact
 * quotient 4*batch / 4; an entry the expressions cannot hold (a negative
 * coefficient, an inexact division) is an error naming the node. Plain
 * entries are computed with overflow checks. */
static dy_status sym_arith(ox_ctx *c, const char *op, ox_value *a, ox_value *b,
                           ox_value **out) {
  if (!a->c || !b->c || a->type.dtype != DY_I64 || b->type.dtype != DY_I64 ||
      a->type.rank > 1 || b->type.rank > 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s computes with a dynamic size (a shape value) and a tensor", op);
  int64_t na = dy_type_numel(&a->type), nb = dy_type_numel(&b->type);
  int64_t n = na > nb ? na : nb;
  if ((na != n && na != 1) || (nb != n && nb != 1))
    return ox_fail(c, DY_STATUS_SHAPE_MISMATCH, "cannot broadcast %lld against %lld",
                   (long long)na, (long long)nb);
  int rank = a->type.rank > b->type.rank ? a->type.rank : b->type.rank;
  ox_value *o = ox_new_const(c, DY_I64, rank, &n, NULL);
  if (!o)
    return c->err->status;
  int64_t *z = o->c->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t ia = na == 1 ? 0 : i, ib = nb == 1 ? 0 : i;
    int64_t p = ox_entry(a, ia), q = ox_entry(b, ib), r = 0;
    bool sp = ox_sym_dim(a, ia) != 0, sq = ox_sym_dim(b, ib) != 0, ok = true;
    if (sp || sq) {
      /* a plain operand of a symbolic one is a size (>= 0) but for the
       * constant of an addition or subtraction */
      bool is_add = strcmp(op, "add") == 0, is_sub = strcmp(op, "sub") == 0;
      if (is_add && !sq)
        ok = dy_dim_add_const(p, q, &r);
      else if (is_add && !sp)
        ok = dy_dim_add_const(q, p, &r);
      else if (is_add)
        ok = dy_dim_add(p, q, &r);
      else if (is_sub && !sq)
        ok = q != INT64_MIN && dy_dim_add_const(p, -q, &r);
      else if (is_sub)
        ok = p >= 0 ? false : dy_dim_sub(p, q, &r);
      else if ((!sp && p < 0) || (!sq && q < 0))
        ok = false;
      else if (strcmp(op, "mul") == 0)
        ok = dy_dim_mul(p, q, &r);
      else
        ok = dy_dim_div(p, q, &r);
      if (!ok) {
        char x[96], y[96];
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "%s of the sizes %s and %s is not a size expression (a product of "
                       "dynamic sizes times a constant, plus a constant)", op,
                       sp ? dy_dim_name(p, x, sizeof x) : dy_dim_str(p, x, sizeof x),
                       sq ? dy_dim_name(q, y, sizeof y) : dy_dim_str(q, y, sizeof y));
      }
      TRY(ox_set_dim(c, o, i, r));
      continue;
    }
    if (strcmp(op, "mul") == 0)
      ok = dy_ck_mul(p, q, &z[i]);
    else if (strcmp(op, "add") == 0)
      ok = dy_ck_add(p, q, &z[i]);
    else if (strcmp(op, "sub") == 0)
      ok = dy_ck_sub(p, q, &z[i]);
    else if (q == 0)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "division by zero");
    else if (p == INT64_MIN && q == -1)
      ok = false;
    else
      z[i] = p / q;
    if (!ok)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s of shape values %lld and %lld "
                     "overflows int64", op, (long long)p, (long long)q);
  }
  *out = o;
  return DY_OK;
}

/* Before opset 7, Add, Sub, Mul, Div and Pow broadcast only when their
 * attribute broadcast (0) is 1, and then B to A: B's dims match A's from
 * axis on (A's rank - B's rank when axis is absent: numpy's alignment);
 * without it the shapes must be equal. Here B is reshaped to A's rank
 * with 1s around its dims, so numpy broadcasting computes the same. */
static dy_status legacy_broadcast(ox_ctx *c, ox_value *a, ox_value **b) {
  TRY(ox_check_attrs(c, "broadcast axis"));
  int ra = a->type.rank, rb = (*b)->type.rank;
  if (ox_attr_i(c, "broadcast", 0) == 0) {
    if (!dy_type_equal(&a->type, &(*b)->type) && dy_type_numel(&(*b)->type) != 1)
      return ox_fail(c, DY_STATUS_SHAPE_MISMATCH,
                     "broadcast=0 (opset %lld) needs A and B of one shape",
                     (long long)c->opset);
    return DY_OK;
  }
  if (rb > ra)
    return DY_OK; /* outside the rule (A broadcast to B): numpy's, leniently */
  int64_t axis = ox_attr_i(c, "axis", ra - rb);
  if (axis < 0)
    axis += ra;
  if (axis < 0 || axis + rb > ra)
    return ox_fail(c, DY_STATUS_SHAPE_MISMATCH,
                   "B of rank %d does not fit A of rank %d at axis %lld", rb, ra,
                   (long long)axis);
  if (axis + rb == ra)
    return DY_OK; /* numpy's alignment already */
  int64_t shape[DY_MAX_DIMS];
  for (int i = 0; i < ra - axis; i++)
    shape[i] = i < rb ? (*b)->type.shape[i] : 1;
  for (int i = 0; i < rb; i++)
    if (shape[i] < 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "a legacy broadcast of a dynamic B");
  *b = ox_reshape(c, *b, (int)(ra - axis), shape);
  return *b ? DY_OK : c->err->status;
}

/* Add, Sub, Mul, Div: numpy broadcasting (opset >= 7; before, the
 * broadcast/axis attributes: legacy_broadcast). */
static dy_status binary_op(ox_ctx *c, const char *op) {
  ox_value *a, *b;
  TRY(ox_need_in(c, 0, &a));
  TRY(ox_need_in(c, 1, &b));
  if (c->opset < 7)
    TRY(legacy_broadcast(c, a, &b));
  else
    TRY(ox_check_attrs(c, ""));
  if (a->sym || b->sym) {
    ox_value *o = NULL;
    TRY(sym_arith(c, op, a, b, &o));
    return ox_set_out(c, 0, o);
  }
  OUT(0, ox_binary(c, op, a, b));
}
static dy_status map_add(ox_ctx *c) { return binary_op(c, "add"); }
static dy_status map_sub(ox_ctx *c) { return binary_op(c, "sub"); }
static dy_status map_mul(ox_ctx *c) { return binary_op(c, "mul"); }
static dy_status map_div(ox_ctx *c) { return binary_op(c, "div"); }

/* Pow(X, Y): an integer exponent is cast to float (exact for |Y| < 2^24);
 * integer bases are not supported. */
static dy_status map_pow(ox_ctx *c) {
  ox_value *a, *b;
  TRY(ox_need_in(c, 0, &a));
  TRY(ox_need_in(c, 1, &b));
  if (c->opset < 7)
    TRY(legacy_broadcast(c, a, &b));
  else
    TRY(ox_check_attrs(c, ""));
  if (a->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "an integer base is not supported");
  OUT(0, ox_binary(c, "pow", a, ox_cast(c, b, DY_F32)));
}

/* Mod(A, B) attributes: fmod (0). fmod 0 is the integer remainder with
 * the divisor's sign (Python %), fmod 1 the dividend's (C fmod); ONNX
 * requires fmod 1 for floats, and so does this mapping. */
static dy_status map_mod(ox_ctx *c) {
  ox_value *a, *b;
  TRY(ox_check_attrs(c, "fmod"));
  TRY(ox_need_in(c, 0, &a));
  TRY(ox_need_in(c, 1, &b));
  int64_t f = ox_attr_i(c, "fmod", 0);
  if (f != 0 && f != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "fmod %lld", (long long)f);
  if (a->type.dtype == DY_F32 && f == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "floating-point Mod needs fmod=1");
  ox_value *in[2] = {a, b};
  dy_attr at[DY_MOD_NATTRS];
  int n_at = dy_mod_attrs_put(&(dy_mod_attrs){.given = DY_GIVEN_ALL, .fmod = f}, at);
  OUT(0, ox_op(c, "mod", in, 2, at, n_at));
}

/* Min, Max, Sum, Mean: variadic, broadcasting. */
static dy_status variadic(ox_ctx *c, const char *op, bool mean) {
  TRY(ox_check_attrs(c, ""));
  int n = ox_n_in(c);
  ox_value *acc;
  TRY(ox_need_in(c, 0, &acc));
  for (int i = 1; i < n; i++) {
    ox_value *x;
    TRY(ox_need_in(c, i, &x));
    acc = ox_binary(c, op, acc, x);
  }
  if (n == 1 && acc) {
    /* a copy, so the output is a value of its own */
    int64_t zeros[DY_MAX_DIMS] = {0};
    acc = ox_reshape(c, acc, acc->type.rank, zeros);
  }
  if (mean && acc) {
    if (acc->type.dtype != DY_F32)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "Mean of integers");
    acc = ox_scale(c, acc, 1.0f / (float)n, 0.0f);
  }
  OUT(0, acc);
}
static dy_status map_min(ox_ctx *c) { return variadic(c, "minimum", false); }
static dy_status map_max(ox_ctx *c) { return variadic(c, "maximum", false); }
static dy_status map_sum(ox_ctx *c) { return variadic(c, "add", false); }
static dy_status map_mean(ox_ctx *c) { return variadic(c, "add", true); }

/* GreaterOrEqual, LessOrEqual -> bool: op or or_op (Equal, Greater and
 * Less are one to one: onnx_table.c). */
static dy_status compare(ox_ctx *c, const char *op, const char *or_op) {
  ox_value *a, *b;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &a));
  TRY(ox_need_in(c, 1, &b));
  ox_value *r = ox_binary(c, op, a, b);
  ox_value *e = ox_binary(c, or_op, a, b);
  OUT(0, ox_where(c, r, ox_const_bool(c, true), e));
}
static dy_status map_greater_equal(ox_ctx *c) { return compare(c, "greater", "equal"); }
static dy_status map_less_equal(ox_ctx *c) { return compare(c, "less", "equal"); }

/* And, Or, Xor (bool, broadcasting), Not: through where and equal. */
static dy_status logic(ox_ctx *c, int kind) {
  ox_value *a, *b = NULL;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &a));
  if (kind != 3)
    TRY(ox_need_in(c, 1, &b));
  if (a->type.dtype != DY_BOOL || (b && b->type.dtype != DY_BOOL))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs bool operands");
  ox_value *r;
  if (kind == 0) /* and */
    r = ox_where(c, a, b, ox_const_bool(c, false));
  else if (kind == 1) /* or */
    r = ox_where(c, a, ox_const_bool(c, true), b);
  else if (kind == 2) /* xor */
    r = ox_not(c, ox_binary(c, "equal", a, b));
  else
    r = ox_not(c, a);
  OUT(0, r);
}
static dy_status map_and(ox_ctx *c) { return logic(c, 0); }
static dy_status map_or(ox_ctx *c) { return logic(c, 1); }
static dy_status map_xor(ox_ctx *c) { return logic(c, 2); }
static dy_status map_not(ox_ctx *c) { return logic(c, 3); }

/* ------------------------------------------------------------------ */
/* activations composed from primitives (the one-to-one unary ops and    */
/* activations are rows of onnx_table.c)                                 */
/* ------------------------------------------------------------------ */

/* An f32 input 0, for the composites below. */
static dy_status f32_in(ox_ctx *c, const char *attrs, ox_value **x) {
  TRY(ox_check_attrs(c, attrs));
  TRY(ox_need_in(c, 0, x));
  if ((*x)->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs float32, got %s",
                   dy_dtype_name((*x)->type.dtype));
  return DY_OK;
}

static ox_value *elu(ox_ctx *c, ox_value *x, float alpha) {
  if (!x)
    return NULL;
  dy_attr a[DY_ELU_NATTRS];
  int na = dy_elu_attrs_put(&(dy_elu_attrs){.given = DY_GIVEN_ALL, .alpha = alpha}, a);
  return ox_op(c, "elu", &x, 1, a, na);
}

/* Selu attributes: alpha (1.67326...), gamma (1.0507...):
 * gamma * elu(x, alpha). */
static dy_status map_selu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha gamma", &x));
  float alpha = ox_attr_f(c, "alpha", 1.67326319217681884765625f);
  float gamma = ox_attr_f(c, "gamma", 1.05070102214813232421875f);
  OUT(0, ox_scale(c, elu(c, x, alpha), gamma, 0.0f));
}

/* Celu attributes: alpha (1.0): alpha * elu(x / alpha, 1). */
static dy_status map_celu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha", &x));
  float alpha = ox_attr_f(c, "alpha", 1.0f);
  if (alpha == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "alpha is 0");
  ox_value *e = elu(c, ox_scale(c, x, 1.0f / alpha, 0.0f), 1.0f);
  OUT(0, ox_scale(c, e, alpha, 0.0f));
}

/* ThresholdedRelu attributes: alpha (1.0): x > alpha ? x : 0. */
static dy_status map_thresholded_relu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha", &x));
  ox_value *m = ox_binary(c, "greater", x, ox_const_f32(c, ox_attr_f(c, "alpha", 1.0f)));
  OUT(0, ox_where(c, m, x, ox_const_f32(c, 0)));
}

/* Shrink attributes: bias (0), lambd (0.5). */
static dy_status map_shrink(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "bias lambd", &x));
  float bias = ox_attr_f(c, "bias", 0.0f), l = ox_attr_f(c, "lambd", 0.5f);
  ox_value *lo = ox_binary(c, "less", x, ox_const_f32(c, -l));
  ox_value *hi = ox_binary(c, "greater", x, ox_const_f32(c, l));
  ox_value *r = ox_where(c, hi, ox_scale(c, x, 1.0f, -bias), ox_const_f32(c, 0));
  OUT(0, ox_where(c, lo, ox_scale(c, x, 1.0f, bias), r));
}

/* PRelu(X, slope): x < 0 ? slope * x : x (slope broadcasts to X). Before
 * opset 7 the slope is one value or one per channel (X's axis 1: a [C]
 * slope, Caffe2's rule), so a [C] slope is reshaped to [C, 1, ...]. */
static dy_status map_prelu(ox_ctx *c) {
  ox_value *x, *slope;
  TRY(f32_in(c, "", &x));
  TRY(ox_need_in(c, 1, &slope));
  int r = x->type.rank;
  if (c->opset < 7 && slope->type.rank == 1 && r > 2 && slope->type.shape[0] > 1 &&
      slope->type.shape[0] == x->type.shape[1]) {
    int64_t shape[DY_MAX_DIMS];
    shape[0] = slope->type.shape[0];
    for (int i = 1; i < r - 1; i++)
      shape[i] = 1;
    if (!(slope = ox_reshape(c, slope, r - 1, shape)))
      return c->err->status;
  }
  ox_value *m = ox_binary(c, "less", x, ox_const_f32(c, 0));
  OUT(0, ox_where(c, m, ox_binary(c, "mul", x, slope), x));
}

/* Clip(input, min, max); opset 6..10: attributes min, max (-/+ FLT_MAX).
 * Constant bounds -> clip; run-time bounds -> maximum / minimum. */
static dy_status map_clip(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 11 ? "min max" : ""));
  TRY(ox_need_in(c, 0, &x));
  ox_value *lo = NULL, *hi = NULL;
  if (c->opset < 11) {
    if (ox_attr(c, "min"))
      lo = ox_const_f32(c, ox_attr_f(c, "min", -FLT_MAX));
    if (ox_attr(c, "max"))
      hi = ox_const_f32(c, ox_attr_f(c, "max", FLT_MAX));
  } else {
    lo = ox_in(c, 1);
    hi = ox_in(c, 2);
  }
  bool const_bounds = (!lo || ox_is_const(lo)) && (!hi || ox_is_const(hi)) &&
                      x->type.dtype == DY_F32;
  if (const_bounds && (!lo || lo->type.dtype == DY_F32) && (!hi || hi->type.dtype == DY_F32)) {
    float l = lo ? ((float *)lo->c->data)[0] : -INFINITY;
    float h = hi ? ((float *)hi->c->data)[0] : INFINITY;
    if ((!lo || dy_type_numel(&lo->type) == 1) && (!hi || dy_type_numel(&hi->type) == 1) &&
        l <= h) {
      dy_attr a[DY_CLIP_NATTRS];
      int n_a = dy_clip_attrs_put(&(dy_clip_attrs){.given = DY_GIVEN_ALL, .min = l, .max = h}, a);
      OUT(0, ox_op(c, "clip", &x, 1, a, n_a));
    }
  }
  ox_value *r = x;
  if (lo)
    r = ox_binary(c, "maximum", r, lo);
  if (hi)
    r = ox_binary(c, "minimum", r, hi);
  if (r == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    r = ox_reshape(c, x, x->type.rank, zeros);
  }
  OUT(0, r);
}

/* Sinh, Cosh, Asinh, Acosh, Atanh through exp and log. */
static dy_status map_sinh(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  ox_value *e = ox_unary(c, "exp", x), *f = ox_unary(c, "exp", ox_unary(c, "neg", x));
  OUT(0, ox_scale(c, ox_binary(c, "sub", e, f), 0.5f, 0.0f));
}
static dy_status map_cosh(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  ox_value *e = ox_unary(c, "exp", x), *f = ox_unary(c, "exp", ox_unary(c, "neg", x));
  OUT(0, ox_scale(c, ox_binary(c, "add", e, f), 0.5f, 0.0f));
}
/* asinh x = sign(x) log(|x| + sqrt(x^2 + 1)) (odd, so no cancellation) */
static dy_status map_asinh(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  ox_value *a = ox_unary(c, "abs", x);
  ox_value *r = ox_unary(c, "sqrt", ox_scale(c, ox_binary(c, "mul", x, x), 1.0f, 1.0f));
  ox_value *l = ox_unary(c, "log", ox_binary(c, "add", a, r));
  ox_value *neg = ox_binary(c, "less", x, ox_const_f32(c, 0));
  OUT(0, ox_where(c, neg, ox_unary(c, "neg", l), l));
}
static dy_status map_acosh(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  ox_value *r = ox_unary(c, "sqrt", ox_scale(c, ox_binary(c, "mul", x, x), 1.0f, -1.0f));
  OUT(0, ox_unary(c, "log", ox_binary(c, "add", x, r)));
}
static dy_status map_atanh(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  ox_value *q = ox_binary(c, "div", ox_scale(c, x, 1.0f, 1.0f), ox_scale(c, x, -1.0f, 1.0f));
  OUT(0, ox_scale(c, ox_unary(c, "log", q), 0.5f, 0.0f));
}

/* Sign: (x > 0) - (x < 0), in x's dtype. */
static dy_status map_sign(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  if (x->type.dtype == DY_BOOL)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "Sign of bool");
  ox_value *z = ox_zero_like(c, x->type.dtype);
  ox_value *p = ox_cast(c, ox_binary(c, "greater", x, z), x->type.dtype);
  ox_value *n = ox_cast(c, ox_binary(c, "less", x, z), x->type.dtype);
  OUT(0, ox_binary(c, "sub", p, n));
}

/* Floor, Ceil, Round: through an i64 cast (which truncates) for |x| <
 * 2^23; larger floats, infinities and NaN are integral already. Round is
 * half to even. */
static ox_value *floor_of(ox_ctx *c, ox_value *x, int mode) {
  ox_value *small = ox_binary(c, "less", ox_unary(c, "abs", x), ox_const_f32(c, 8388608.0f));
  ox_value *xs = ox_where(c, small, x, ox_const_f32(c, 0));
  ox_value *t = ox_cast(c, ox_cast(c, xs, DY_I64), DY_F32);
  ox_value *r;
  if (mode == 0) /* floor: t - (t > x) */
    r = ox_binary(c, "sub", t, ox_cast(c, ox_binary(c, "greater", t, xs), DY_F32));
  else /* ceil: t + (t < x) */
    r = ox_binary(c, "add", t, ox_cast(c, ox_binary(c, "less", t, xs), DY_F32));
  return ox_where(c, small, r, x);
}
static dy_status map_floor(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  OUT(0, floor_of(c, x, 0));
}
static dy_status map_ceil(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  OUT(0, floor_of(c, x, 1));
}
static dy_status map_round(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  /* r = floor(x + 0.5); at an exact half (r - x == 0.5) an odd r steps
   * back: odd means r - 2 floor(r / 2) == 1 */
  ox_value *r = floor_of(c, ox_scale(c, x, 1.0f, 0.5f), 0);
  ox_value *half = ox_binary(c, "equal", ox_binary(c, "sub", r, x), ox_const_f32(c, 0.5f));
  ox_value *h = floor_of(c, ox_scale(c, r, 0.5f, 0.0f), 0);
  ox_value *odd = ox_binary(c, "equal", ox_binary(c, "sub", r, ox_scale(c, h, 2.0f, 0.0f)),
                            ox_const_f32(c, 1.0f));
  ox_value *back = ox_where(c, half, odd, ox_const_bool(c, false));
  OUT(0, ox_where(c, back, ox_scale(c, r, 1.0f, -1.0f), r));
}

/* IsNaN: x != x. IsInf attributes: detect_negative (1), detect_positive (1). */
static dy_status map_isnan(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  OUT(0, ox_not(c, ox_binary(c, "equal", x, x)));
}
static dy_status map_isinf(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "detect_negative detect_positive", &x));
  bool neg = ox_attr_i(c, "detect_negative", 1), pos = ox_attr_i(c, "detect_positive", 1);
  ox_value *r;
  /* beyond FLT_MAX only an infinity lies (a NaN compares false) */
  if (neg && pos)
    r = ox_binary(c, "greater", ox_unary(c, "abs", x), ox_const_f32(c, FLT_MAX));
  else if (pos)
    r = ox_binary(c, "greater", x, ox_const_f32(c, FLT_MAX));
  else if (neg)
    r = ox_binary(c, "less", x, ox_const_f32(c, -FLT_MAX));
  else
    r = ox_binary(c, "less", x, x); /* all false */
  OUT(0, r);
}

/* Cast attributes: to (an elem type); saturate (19) unsupported. */
static dy_status map_cast(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "to"));
  TRY(ox_need_in(c, 0, &x));
  dy_dtype to;
  int64_t t = ox_attr_i(c, "to", 0);
  if (!dy_onnx_dtype((int)t, &to))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "cast to ONNX dtype %lld (dy2stc has float32, "
                   "int64 and bool)", (long long)t);
  if (x->sym && to == DY_I64)
    return ox_set_out(c, 0, x);
  ox_value *r = ox_cast(c, x, to);
  if (r == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    r = ox_reshape(c, x, x->type.rank, zeros);
  }
  OUT(0, r);
}

/* CastLike(input, target_type). */
static dy_status map_cast_like(ox_ctx *c) {
  ox_value *x, *t;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &t));
  ox_value *r = ox_cast(c, x, t->type.dtype);
  if (r == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    r = ox_reshape(c, x, x->type.rank, zeros);
  }
  OUT(0, r);
}


/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_math[] = {
    {"Add", map_add},
    {"Sub", map_sub},
    {"Mul", map_mul},
    {"Div", map_div},
    {"Pow", map_pow},
    {"Min", map_min},
    {"Max", map_max},
    {"Sum", map_sum},
    {"Mean", map_mean},
    {"GreaterOrEqual", map_greater_equal},
    {"LessOrEqual", map_less_equal},
    {"And", map_and},
    {"Or", map_or},
    {"Xor", map_xor},
    {"Not", map_not},
    {"Mod", map_mod},
    {"Selu", map_selu},
    {"Celu", map_celu},
    {"ThresholdedRelu", map_thresholded_relu},
    {"Shrink", map_shrink},
    {"PRelu", map_prelu},
    {"Clip", map_clip},
    {"Sinh", map_sinh},
    {"Cosh", map_cosh},
    {"Asinh", map_asinh},
    {"Acosh", map_acosh},
    {"Atanh", map_atanh},
    {"Sign", map_sign},
    {"Floor", map_floor},
    {"Ceil", map_ceil},
    {"Round", map_round},
    {"IsNaN", map_isnan},
    {"IsInf", map_isinf},
    {"Cast", map_cast},
    {"CastLike", map_cast_like},
    {NULL, NULL},
};
