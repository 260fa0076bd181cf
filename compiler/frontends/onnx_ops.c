/* onnx_ops.c - ONNX ops onto the op table: elementwise math, activations,
 * comparisons and logic, casts, constants and shapes, data movement,
 * reductions, softmax, matmul and gemm. (Convolution, pooling,
 * normalisation, losses and resizing are in onnx_nn.c.)
 *
 * One mapper per ONNX op type, each under the op's attribute list (with
 * defaults) as the ONNX spec gives it. A mapper reads its inputs with
 * ox_in, rejects attributes it does not know (ox_check_attrs), builds ops
 * with ox_op and the shorthands of onnx_internal.h, and binds outputs with
 * ox_set_out. Ops dy2stc lacks are composed from primitives, the way
 * tinygrad builds relu as where(x > 0, x, 0): Selu is a scaled elu, Sinh is
 * (e^x - e^-x) / 2, GreaterOrEqual is greater or equal, Floor goes through
 * an i64 cast. Operands that must be known at compile time (Reshape's
 * shape, Slice's starts, ...) go through ox_get_ints, which names the
 * operand when it is a run-time value.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

#define TRY(x)          \
  do {                  \
    dy_status s_ = (x); \
    if (s_)             \
      return s_;        \
  } while (0)
/* A built value, or the error already recorded. */
#define OUT(i, v) return set_or_fail(c, (i), (v))

static dy_status set_or_fail(ox_ctx *c, int i, ox_value *v) {
  if (!v)
    return c->err->status ? c->err->status : DY_STATUS_INTERNAL;
  return ox_set_out(c, i, v);
}

/* The node's input i, which must be present. */
static dy_status need_in(ox_ctx *c, int i, ox_value **v) {
  *v = ox_in(c, i);
  if (!*v)
    return ox_fail(c, DY_STATUS_FORMAT, "input %d is missing", i);
  return DY_OK;
}

static ox_value *zero_like(ox_ctx *c, dy_dtype dt) {
  if (dt == DY_F32)
    return ox_const_f32(c, 0.0f);
  if (dt == DY_I64)
    return ox_const_i64(c, 0);
  return ox_const_bool(c, false);
}

/* ------------------------------------------------------------------ */
/* Identity, Dropout, Constant, ConstantOfShape, Shape, Size, Range      */
/* ------------------------------------------------------------------ */

/* Identity: no attributes. The output is the input value itself. */
static dy_status map_identity(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &x));
  return ox_set_out(c, 0, x);
}

/* Dropout(data, ratio=0.5, training_mode=false) -> output, mask.
 *   opset < 12: attributes ratio (float, 0.5), is_test (< 7), seed (12+).
 * Inference: the identity; mask all true. Training mode is supported only
 * with ratio 0 (still the identity); otherwise it is random. */
static dy_status map_dropout(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "ratio seed is_test"));
  TRY(need_in(c, 0, &x));
  bool training = c->opset < 7 && ox_attr_i(c, "is_test", 0) == 0;
  float ratio = ox_attr_f(c, "ratio", 0.5f);
  if (c->opset >= 12) {
    ox_value *r = ox_in(c, 1), *t = ox_in(c, 2);
    const float *rv;
    int64_t n;
    if (r) {
      TRY(ox_get_floats(c, r, "Dropout ratio", &rv, &n));
      ratio = n ? rv[0] : 0.5f;
    }
    if (t) {
      if (!t->c || t->type.dtype != DY_BOOL) {
        if (c->info && t->graph_input >= 0 && c->info->needs_const_input < 0) {
          c->info->needs_const_input = t->graph_input;
          snprintf(c->info->needs_const_name, sizeof c->info->needs_const_name, "%s", t->name);
        }
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "training_mode '%s' must be a constant", t->name);
      }
      training = ((unsigned char *)t->c->data)[0] != 0;
    }
  }
  if (training && ratio != 0.0f)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "training mode (random dropout) is not supported; export in eval mode");
  TRY(ox_set_out(c, 0, x));
  if (ox_out_wanted(c, 1)) {
    /* all true: no element is below itself, NaN included */
    OUT(1, ox_not(c, ox_binary(c, "less", x, x)));
  }
  return DY_OK;
}

/* Constant: exactly one of value (tensor), value_float, value_floats,
 * value_int, value_ints (sparse_value, value_string(s) unsupported). */
static dy_status map_constant(ox_ctx *c) {
  TRY(ox_check_attrs(c, "value value_float value_floats value_int value_ints"));
  const Onnx__AttributeProto *a;
  ox_value *v = NULL;
  if ((a = ox_attr(c, "value"))) {
    if (!a->t)
      return ox_fail(c, DY_STATUS_FORMAT, "attribute 'value' holds no tensor");
    char what[300];
    snprintf(what, sizeof what, "%s: node %d (Constant)", c->path, c->node_index);
    ox_const *k;
    TRY(ox_tensor_convert(a->t, what, c->dir, &k, c->err));
    v = ox_new_const(c, k->type.dtype, k->type.rank, k->type.shape, k->data);
    free(k->data);
    free(k);
  } else if ((a = ox_attr(c, "value_float"))) {
    v = ox_const_f32(c, a->f);
  } else if ((a = ox_attr(c, "value_int"))) {
    v = ox_const_i64(c, a->i);
  } else if ((a = ox_attr(c, "value_floats"))) {
    int64_t n = (int64_t)a->n_floats;
    v = ox_new_const(c, DY_F32, 1, &n, a->floats);
  } else if ((a = ox_attr(c, "value_ints"))) {
    v = ox_const_i64s(c, (int)a->n_ints, a->ints);
  } else {
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a Constant without a supported value attribute");
  }
  if (v)
    v->sym = false;
  OUT(0, v);
}

/* ConstantOfShape(input) attributes: value (one-element tensor, float 0). */
static dy_status map_constant_of_shape(ox_ctx *c) {
  ox_value *sv;
  const int64_t *shape;
  int64_t n;
  TRY(ox_check_attrs(c, "value"));
  TRY(need_in(c, 0, &sv));
  TRY(ox_get_ints(c, sv, "ConstantOfShape's shape", false, &shape, &n));
  if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "rank %lld", (long long)n);
  dy_dtype dt = DY_F32;
  unsigned char val[8] = {0};
  const Onnx__AttributeProto *a = ox_attr(c, "value");
  if (a && a->t) {
    ox_const *k;
    TRY(ox_tensor_convert(a->t, "ConstantOfShape value", c->dir, &k, c->err));
    dt = k->type.dtype;
    if (dy_type_numel(&k->type) != 1) {
      free(k->data);
      free(k);
      return ox_fail(c, DY_STATUS_FORMAT, "value must have one element");
    }
    memcpy(val, k->data, dy_dtype_size(dt));
    free(k->data);
    free(k);
  }
  ox_value *v = ox_new_const(c, dt, (int)n, shape, NULL);
  if (!v)
    return c->err->status;
  int64_t numel = dy_type_numel(&v->type);
  size_t es = dy_dtype_size(dt);
  for (int64_t i = 0; i < numel; i++)
    memcpy((char *)v->c->data + (size_t)i * es, val, es);
  v->sym = false;
  OUT(0, v);
}

/* Shape(data) attributes: start (0), end (rank) (opset 15). A dim that is
 * the batch becomes OX_BATCH: a shape value. */
static dy_status map_shape(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "start end"));
  TRY(need_in(c, 0, &x));
  int r = x->type.rank;
  int64_t start = ox_attr_i(c, "start", 0), end = ox_attr_i(c, "end", r);
  if (start < 0)
    start += r;
  if (end < 0)
    end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int64_t dims[DY_MAX_DIMS];
  int n = 0;
  for (int64_t i = start; i < end; i++)
    dims[n++] = x->type.shape[i] < 0 ? OX_BATCH : x->type.shape[i];
  OUT(0, ox_const_i64s(c, n, dims));
}

/* Size(data): the element count (static shapes only). */
static dy_status map_size(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &x));
  int64_t n = dy_type_numel(&x->type);
  if (n < 0) {
    int64_t k = 1;
    for (int i = 0; i < x->type.rank; i++)
      k *= x->type.shape[i] < 0 ? 1 : x->type.shape[i];
    if (k != 1)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the size is a multiple of the dynamic batch");
    n = OX_BATCH;
  }
  OUT(0, ox_const_i64(c, n));
}

/* Range(start, limit, delta): all constants (the length must be known). */
static dy_status map_range(ox_ctx *c) {
  ox_value *in[3];
  TRY(ox_check_attrs(c, ""));
  for (int i = 0; i < 3; i++) {
    TRY(need_in(c, i, &in[i]));
    if (!ox_is_const(in[i]))
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "Range needs constant start, limit and delta (its length "
                     "would depend on run-time data)");
    if (in[i]->type.dtype != in[0]->type.dtype || dy_type_numel(&in[i]->type) != 1)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "Range operands must be scalars of one dtype");
  }
  bool f = in[0]->type.dtype == DY_F32;
  double v[3];
  for (int i = 0; i < 3; i++)
    v[i] = f ? ((float *)in[i]->c->data)[0] : (double)((int64_t *)in[i]->c->data)[0];
  if (v[2] == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "delta is 0");
  double len = ceil((v[1] - v[0]) / v[2]);
  int64_t n = len > 0 ? (int64_t)len : 0;
  if (n > (1 << 26))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "Range of %lld elements", (long long)n);
  ox_value *o = ox_new_const(c, in[0]->type.dtype, 1, &n, NULL);
  if (!o)
    return c->err->status;
  for (int64_t i = 0; i < n; i++) {
    if (f)
      ((float *)o->c->data)[i] = ((float *)in[0]->c->data)[0] + (float)i * ((float *)in[2]->c->data)[0];
    else
      ((int64_t *)o->c->data)[i] = ((int64_t *)in[0]->c->data)[0] + i * ((int64_t *)in[2]->c->data)[0];
  }
  OUT(0, o);
}

/* ------------------------------------------------------------------ */
/* elementwise binary ops                                              */
/* ------------------------------------------------------------------ */

/* Arithmetic on shape values (rank <= 1, i64): OX_BATCH survives x*1,
 * x/1, x+0, x-0; anything else would compute with the batch size. */
static dy_status sym_arith(ox_ctx *c, const char *op, ox_value *a, ox_value *b,
                           ox_value **out) {
  if (!a->c || !b->c || a->type.dtype != DY_I64 || b->type.dtype != DY_I64 ||
      a->type.rank > 1 || b->type.rank > 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s computes with the dynamic batch size (a shape value)", op);
  int64_t na = dy_type_numel(&a->type), nb = dy_type_numel(&b->type);
  int64_t n = na > nb ? na : nb;
  if ((na != n && na != 1) || (nb != n && nb != 1))
    return ox_fail(c, DY_STATUS_SHAPE_MISMATCH, "cannot broadcast %lld against %lld",
                   (long long)na, (long long)nb);
  int rank = a->type.rank > b->type.rank ? a->type.rank : b->type.rank;
  ox_value *o = ox_new_const(c, DY_I64, rank, &n, NULL);
  if (!o)
    return c->err->status;
  const int64_t *x = a->c->data, *y = b->c->data;
  int64_t *z = o->c->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t p = x[na == 1 ? 0 : i], q = y[nb == 1 ? 0 : i];
    bool bp = p == OX_BATCH, bq = q == OX_BATCH;
    if (strcmp(op, "mul") == 0 && (bp || bq) && (bp ? q : p) == 1)
      z[i] = OX_BATCH;
    else if ((strcmp(op, "div") == 0 && bp && q == 1) ||
             ((strcmp(op, "add") == 0 || strcmp(op, "sub") == 0) && bp && q == 0) ||
             (strcmp(op, "add") == 0 && bq && p == 0))
      z[i] = OX_BATCH;
    else if (bp || bq)
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "%s computes with the dynamic batch size (a shape value)", op);
    else if (strcmp(op, "mul") == 0)
      z[i] = p * q;
    else if (strcmp(op, "add") == 0)
      z[i] = p + q;
    else if (strcmp(op, "sub") == 0)
      z[i] = p - q;
    else if (q != 0)
      z[i] = p / q;
    else
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "division by zero");
  }
  *out = o;
  return DY_OK;
}

/* Add, Sub, Mul, Div: numpy broadcasting (opset >= 7; earlier versions'
 * broadcast/axis attributes are not supported). */
static dy_status binary_op(ox_ctx *c, const char *op) {
  ox_value *a, *b;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &a));
  TRY(need_in(c, 1, &b));
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
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &a));
  TRY(need_in(c, 1, &b));
  if (a->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "an integer base is not supported");
  OUT(0, ox_binary(c, "pow", a, ox_cast(c, b, DY_F32)));
}

/* Min, Max, Sum, Mean: variadic, broadcasting. */
static dy_status variadic(ox_ctx *c, const char *op, bool mean) {
  TRY(ox_check_attrs(c, ""));
  int n = ox_n_in(c);
  ox_value *acc;
  TRY(need_in(c, 0, &acc));
  for (int i = 1; i < n; i++) {
    ox_value *x;
    TRY(need_in(c, i, &x));
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

/* Comparisons -> bool. */
static dy_status compare(ox_ctx *c, const char *op, const char *or_op) {
  ox_value *a, *b;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &a));
  TRY(need_in(c, 1, &b));
  ox_value *r = ox_binary(c, op, a, b);
  if (or_op) {
    ox_value *e = ox_binary(c, or_op, a, b);
    r = ox_where(c, r, ox_const_bool(c, true), e);
  }
  OUT(0, r);
}
static dy_status map_equal(ox_ctx *c) { return compare(c, "equal", NULL); }
static dy_status map_greater(ox_ctx *c) { return compare(c, "greater", NULL); }
static dy_status map_less(ox_ctx *c) { return compare(c, "less", NULL); }
static dy_status map_greater_equal(ox_ctx *c) { return compare(c, "greater", "equal"); }
static dy_status map_less_equal(ox_ctx *c) { return compare(c, "less", "equal"); }

/* And, Or, Xor (bool, broadcasting), Not: through where and equal. */
static dy_status logic(ox_ctx *c, int kind) {
  ox_value *a, *b = NULL;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &a));
  if (kind != 3)
    TRY(need_in(c, 1, &b));
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

/* Where(condition, X, Y). */
static dy_status map_where(ox_ctx *c) {
  ox_value *a, *b, *d;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &a));
  TRY(need_in(c, 1, &b));
  TRY(need_in(c, 2, &d));
  OUT(0, ox_where(c, a, b, d));
}

/* ------------------------------------------------------------------ */
/* unary math and activations                                          */
/* ------------------------------------------------------------------ */

static dy_status unary_op(ox_ctx *c, const char *op) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &x));
  OUT(0, ox_unary(c, op, x));
}
static dy_status map_relu(ox_ctx *c) { return unary_op(c, "relu"); }
static dy_status map_sigmoid(ox_ctx *c) { return unary_op(c, "sigmoid"); }
static dy_status map_tanh(ox_ctx *c) { return unary_op(c, "tanh"); }
static dy_status map_exp(ox_ctx *c) { return unary_op(c, "exp"); }
static dy_status map_log(ox_ctx *c) { return unary_op(c, "log"); }
static dy_status map_sqrt(ox_ctx *c) { return unary_op(c, "sqrt"); }
static dy_status map_abs(ox_ctx *c) { return unary_op(c, "abs"); }
static dy_status map_neg(ox_ctx *c) { return unary_op(c, "neg"); }
static dy_status map_erf(ox_ctx *c) { return unary_op(c, "erf"); }
static dy_status map_reciprocal(ox_ctx *c) { return unary_op(c, "reciprocal"); }
static dy_status map_hard_swish(ox_ctx *c) { return unary_op(c, "hard_swish"); }

/* An f32 input 0, for the composites below. */
static dy_status f32_in(ox_ctx *c, const char *attrs, ox_value **x) {
  TRY(ox_check_attrs(c, attrs));
  TRY(need_in(c, 0, x));
  if ((*x)->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs float32, got %s",
                   dy_dtype_name((*x)->type.dtype));
  return DY_OK;
}

static ox_value *attr_op1(ox_ctx *c, const char *op, ox_value *x, const char *an,
                          float av) {
  if (!x)
    return NULL;
  dy_attr a[] = {DY_ATTR_F(an, av)};
  return ox_op(c, op, &x, 1, a, 1);
}

/* Softplus: log(exp(x) + 1). */
static dy_status map_softplus(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  dy_attr a[] = {DY_ATTR_F("beta", 1.0), DY_ATTR_F("threshold", 20.0)};
  OUT(0, ox_op(c, "softplus", &x, 1, a, 2));
}

/* Softsign: x / (1 + |x|). */
static dy_status map_softsign(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "", &x));
  OUT(0, ox_binary(c, "div", x, ox_scale(c, ox_unary(c, "abs", x), 1.0f, 1.0f)));
}

/* LeakyRelu attributes: alpha (0.01). */
static dy_status map_leaky_relu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha", &x));
  OUT(0, attr_op1(c, "leaky_relu", x, "alpha", ox_attr_f(c, "alpha", 0.01f)));
}

/* Elu attributes: alpha (1.0). */
static dy_status map_elu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha", &x));
  OUT(0, attr_op1(c, "elu", x, "alpha", ox_attr_f(c, "alpha", 1.0f)));
}

/* Selu attributes: alpha (1.67326...), gamma (1.0507...):
 * gamma * elu(x, alpha). */
static dy_status map_selu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha gamma", &x));
  float alpha = ox_attr_f(c, "alpha", 1.67326319217681884765625f);
  float gamma = ox_attr_f(c, "gamma", 1.05070102214813232421875f);
  OUT(0, ox_scale(c, attr_op1(c, "elu", x, "alpha", alpha), gamma, 0.0f));
}

/* Celu attributes: alpha (1.0): alpha * elu(x / alpha, 1). */
static dy_status map_celu(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha", &x));
  float alpha = ox_attr_f(c, "alpha", 1.0f);
  if (alpha == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "alpha is 0");
  ox_value *e = attr_op1(c, "elu", ox_scale(c, x, 1.0f / alpha, 0.0f), "alpha", 1.0f);
  OUT(0, ox_scale(c, e, alpha, 0.0f));
}

/* HardSigmoid attributes: alpha (0.2), beta (0.5). */
static dy_status map_hard_sigmoid(ox_ctx *c) {
  ox_value *x;
  TRY(f32_in(c, "alpha beta", &x));
  dy_attr a[] = {DY_ATTR_F("slope", ox_attr_f(c, "alpha", 0.2f)),
                 DY_ATTR_F("offset", ox_attr_f(c, "beta", 0.5f))};
  OUT(0, ox_op(c, "hard_sigmoid", &x, 1, a, 2));
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

/* PRelu(X, slope): x < 0 ? slope * x : x (slope broadcasts to X). */
static dy_status map_prelu(ox_ctx *c) {
  ox_value *x, *slope;
  TRY(f32_in(c, "", &x));
  TRY(need_in(c, 1, &slope));
  ox_value *m = ox_binary(c, "less", x, ox_const_f32(c, 0));
  OUT(0, ox_where(c, m, ox_binary(c, "mul", x, slope), x));
}

/* Clip(input, min, max); opset 6..10: attributes min, max (-/+ FLT_MAX).
 * Constant bounds -> clip; run-time bounds -> maximum / minimum. */
static dy_status map_clip(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 11 ? "min max" : ""));
  TRY(need_in(c, 0, &x));
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
      dy_attr a[] = {DY_ATTR_F("min", l), DY_ATTR_F("max", h)};
      OUT(0, ox_op(c, "clip", &x, 1, a, 2));
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
  TRY(need_in(c, 0, &x));
  if (x->type.dtype == DY_BOOL)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "Sign of bool");
  ox_value *z = zero_like(c, x->type.dtype);
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
  TRY(need_in(c, 0, &x));
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
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &t));
  ox_value *r = ox_cast(c, x, t->type.dtype);
  if (r == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    r = ox_reshape(c, x, x->type.rank, zeros);
  }
  OUT(0, r);
}

/* ------------------------------------------------------------------ */
/* shapes and data movement                                            */
/* ------------------------------------------------------------------ */

/* Reshape(data, shape) attributes: allowzero (0, opset 14). opset < 5:
 * shape attribute. A shape value's OX_BATCH becomes 0 where the input's
 * batch dim sits at the same position, else -1 (and an explicit -1 is then
 * resolved from the static dims, the batch cancelling out). */
static dy_status map_reshape(ox_ctx *c) {
  ox_value *x, *sv;
  TRY(ox_check_attrs(c, "allowzero"));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &sv));
  const int64_t *shape;
  int64_t n;
  TRY(ox_get_ints(c, sv, "Reshape's shape", true, &shape, &n));
  if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "target rank %lld", (long long)n);
  bool allowzero = ox_attr_i(c, "allowzero", 0) != 0;
  int64_t t[DY_MAX_DIMS];
  int n_batch = 0, infer_at = -1;
  for (int i = 0; i < n; i++) {
    t[i] = shape[i];
    if (t[i] == 0 && allowzero)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "allowzero with a 0 in the shape (an empty tensor)");
    if (t[i] == 0 && i < x->type.rank && x->type.shape[i] >= 0)
      t[i] = x->type.shape[i]; /* copy a static dim now */
    if (t[i] == -1)
      infer_at = i;
    if (t[i] == OX_BATCH)
      n_batch++;
  }
  if (n_batch) {
    int in_dyn = 0;
    int64_t in_static = 1;
    for (int i = 0; i < x->type.rank; i++) {
      if (x->type.shape[i] < 0)
        in_dyn++;
      else
        in_static *= x->type.shape[i];
    }
    if (n_batch > 1 || in_dyn != 1)
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "the target shape uses the dynamic batch size in a way dy2stc "
                     "cannot express");
    for (int i = 0; i < n; i++) {
      if (t[i] != OX_BATCH)
        continue;
      if (i < x->type.rank && x->type.shape[i] < 0) {
        t[i] = 0; /* copy the input's batch dim */
      } else {
        if (infer_at >= 0) {
          /* resolve the explicit -1 statically: the batch cancels */
          int64_t known = 1;
          for (int j = 0; j < n; j++)
            if (j != i && j != infer_at)
              known *= t[j];
          if (known <= 0 || in_static % known)
            return ox_fail(c, DY_STATUS_SHAPE_MISMATCH, "cannot resolve the target shape");
          t[infer_at] = in_static / known;
        }
        t[i] = -1;
      }
    }
  }
  OUT(0, ox_reshape(c, x, (int)n, t));
}

/* Flatten attributes: axis (1): [prod(d[:axis]), prod(d[axis:])]. */
static dy_status map_flatten(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis"));
  TRY(need_in(c, 0, &x));
  int r = x->type.rank, axis;
  int64_t a = ox_attr_i(c, "axis", 1);
  if (a == r) {
    axis = r;
  } else {
    TRY(ox_axis(c, a, r, &axis));
  }
  int64_t head = 1, tail = 1;
  bool head_dyn = false, tail_dyn = false;
  for (int i = 0; i < r; i++) {
    int64_t d = x->type.shape[i];
    if (d < 0)
      *(i < axis ? &head_dyn : &tail_dyn) = true;
    else
      *(i < axis ? &head : &tail) *= d;
  }
  int64_t t[2] = {head, tail};
  if (head_dyn && head == 1)
    t[0] = -1;
  else if (tail_dyn && tail == 1)
    t[1] = -1;
  else if (head_dyn || tail_dyn)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "flattening merges the dynamic batch dim with other dims");
  OUT(0, ox_reshape(c, x, 2, t));
}

/* Transpose attributes: perm (reversed dims). */
static dy_status map_transpose(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "perm"));
  TRY(need_in(c, 0, &x));
  int n;
  const int64_t *perm = ox_attr_ints(c, "perm", &n);
  int64_t p[DY_MAX_DIMS];
  int r = x->type.rank;
  if (n >= 0 && n != r)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "perm has %d entries for rank %d", n, r);
  for (int i = 0; i < r; i++)
    p[i] = perm ? perm[i] : r - 1 - i;
  ox_value *o = ox_transpose(c, x, r, p);
  if (o == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    o = ox_reshape(c, x, r, zeros);
  }
  OUT(0, o);
}

/* Axes from an attribute (before `since`) or from input 1. *n = -1: none. */
static dy_status axes_operand(ox_ctx *c, int since, int input, int64_t *axes,
                              int *n) {
  *n = -1;
  if (c->opset < since) {
    int k;
    const int64_t *a = ox_attr_ints(c, "axes", &k);
    if (k > DY_MAX_DIMS)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%d axes", k);
    for (int i = 0; i < k; i++)
      axes[i] = a[i];
    *n = k;
    return DY_OK;
  }
  ox_value *v = ox_in(c, input);
  if (!v)
    return DY_OK;
  const int64_t *a;
  int64_t k;
  TRY(ox_get_ints(c, v, "axes", false, &a, &k));
  if (k > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%lld axes", (long long)k);
  for (int i = 0; i < k; i++)
    axes[i] = a[i];
  *n = (int)k;
  return DY_OK;
}

/* Squeeze(data, axes) (axes attribute before opset 13). */
static dy_status map_squeeze(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 13 ? "axes" : ""));
  TRY(need_in(c, 0, &x));
  int64_t axes[DY_MAX_DIMS];
  int n;
  TRY(axes_operand(c, 13, 1, axes, &n));
  OUT(0, ox_squeeze(c, x, n < 0 ? 0 : n, axes));
}

/* Unsqueeze(data, axes) (axes attribute before opset 13). */
static dy_status map_unsqueeze(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 13 ? "axes" : ""));
  TRY(need_in(c, 0, &x));
  int64_t axes[DY_MAX_DIMS];
  int n;
  TRY(axes_operand(c, 13, 1, axes, &n));
  if (n <= 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "Unsqueeze needs axes");
  OUT(0, ox_unsqueeze(c, x, n, axes));
}

/* Concat attributes: axis (required). */
static dy_status map_concat(ox_ctx *c) {
  TRY(ox_check_attrs(c, "axis"));
  int n = ox_n_in(c);
  if (n > 16)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than 16 inputs");
  ox_value *in[16];
  int k = 0;
  for (int i = 0; i < n; i++) {
    TRY(need_in(c, i, &in[k]));
    if (dy_type_numel(&in[k]->type) != 0 || n == 1)
      k++; /* empty inputs add nothing */
  }
  if (!ox_attr(c, "axis"))
    return ox_fail(c, DY_STATUS_FORMAT, "Concat needs an axis");
  if (k == 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "every input is empty");
  ox_value *o = ox_concat(c, in, k, ox_attr_i(c, "axis", 0));
  if (o == in[0] && k == 1) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    o = ox_reshape(c, o, o->type.rank, zeros);
  }
  OUT(0, o);
}

/* Split(input, split) attributes: axis (0), split (before 13),
 * num_outputs (18). Each output is a slice. */
static dy_status map_split(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 13 ? "axis split" : "axis num_outputs"));
  TRY(need_in(c, 0, &x));
  int axis, n_out = ox_n_out(c);
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), x->type.rank, &axis));
  int64_t dim = x->type.shape[axis];
  if (dim < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "splitting the dynamic batch dim");
  int64_t sizes[64];
  if (n_out > 64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than 64 outputs");
  const int64_t *sp = NULL;
  int64_t ns = -1;
  if (c->opset < 13) {
    int k;
    sp = ox_attr_ints(c, "split", &k);
    ns = k;
  } else if (ox_in(c, 1)) {
    TRY(ox_get_ints(c, ox_in(c, 1), "Split's split", false, &sp, &ns));
  }
  if (sp && ns >= 0) {
    if (ns != n_out)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "split has %lld entries for %d outputs",
                     (long long)ns, n_out);
    int64_t sum = 0;
    for (int i = 0; i < n_out; i++)
      sum += sizes[i] = sp[i];
    if (sum != dim)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "split sums to %lld, the axis is %lld",
                     (long long)sum, (long long)dim);
  } else {
    int64_t parts = ox_attr_i(c, "num_outputs", n_out);
    if (parts != n_out || n_out < 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "num_outputs %lld for %d outputs",
                     (long long)parts, n_out);
    int64_t each = (dim + n_out - 1) / n_out;
    if (c->opset < 18 && dim % n_out)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%lld does not split in %d equal parts",
                     (long long)dim, n_out);
    for (int i = 0; i < n_out; i++) {
      int64_t left = dim - each * i;
      sizes[i] = left < each ? (left > 0 ? left : 0) : each;
    }
  }
  int64_t start = 0, ax = axis;
  for (int i = 0; i < n_out; i++) {
    int64_t end = start + sizes[i];
    if (sizes[i] == 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "an empty split (output %d)", i);
    TRY(set_or_fail(c, i, ox_slice(c, x, 1, &start, &end, &ax, NULL)));
    start = end;
  }
  return DY_OK;
}

/* Slice(data, starts, ends, axes, steps); before opset 10 starts, ends,
 * axes are attributes. An OX_BATCH end means "to the end". */
static dy_status map_slice(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 10 ? "starts ends axes" : ""));
  TRY(need_in(c, 0, &x));
  int64_t st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], sp[DY_MAX_DIMS];
  int64_t n = 0;
  const int64_t *p[4] = {0};
  int64_t len[4] = {-1, -1, -1, -1};
  if (c->opset < 10) {
    for (int k = 0; k < 3; k++) {
      int m;
      p[k] = ox_attr_ints(c, k == 0 ? "starts" : k == 1 ? "ends" : "axes", &m);
      len[k] = m;
    }
  } else {
    static const char *const what[] = {"Slice's starts", "Slice's ends", "Slice's axes",
                                       "Slice's steps"};
    for (int k = 0; k < 4; k++)
      if (ox_in(c, k + 1))
        TRY(ox_get_ints(c, ox_in(c, k + 1), what[k], k == 1, &p[k], &len[k]));
  }
  if (!p[0] || !p[1] || len[0] != len[1])
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "starts and ends must be given, of one length");
  n = len[0];
  if (n > DY_MAX_DIMS || (p[2] && len[2] != n) || (p[3] && len[3] != n))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "bad starts/ends/axes/steps lengths");
  for (int i = 0; i < n; i++) {
    st[i] = p[0][i];
    en[i] = p[1][i] == OX_BATCH ? INT64_MAX : p[1][i];
    ax[i] = p[2] ? p[2][i] : i;
    sp[i] = p[3] ? p[3][i] : 1;
  }
  OUT(0, ox_slice(c, x, (int)n, st, en, ax, sp));
}

/* Expand(input, shape): bidirectional broadcast. An OX_BATCH entry keeps
 * the input's batch dim (-1). */
static dy_status map_expand(ox_ctx *c) {
  ox_value *x, *sv;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &sv));
  const int64_t *shape;
  int64_t n;
  TRY(ox_get_ints(c, sv, "Expand's shape", true, &shape, &n));
  if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "rank %lld", (long long)n);
  int64_t t[DY_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    t[i] = shape[i];
    if (t[i] == OX_BATCH) {
      int j = i - (int)(n - x->type.rank);
      if (j < 0 || x->type.shape[j] >= 0)
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "expanding a static dim to the dynamic batch size");
      t[i] = -1;
    }
  }
  dy_attr a[] = {DY_ATTR_IS("shape", t, (int)n)};
  OUT(0, ox_op(c, "expand", &x, 1, a, 1));
}

/* Tile(input, repeats). */
static dy_status map_tile(ox_ctx *c) {
  ox_value *x, *rv;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &rv));
  const int64_t *r;
  int64_t n;
  TRY(ox_get_ints(c, rv, "Tile's repeats", false, &r, &n));
  if (n != x->type.rank)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "repeats has %lld entries for rank %d",
                   (long long)n, x->type.rank);
  dy_attr a[] = {DY_ATTR_IS("repeat_times", r, (int)n)};
  OUT(0, ox_op(c, "tile", &x, 1, a, 1));
}

/* Pad(data, pads, constant_value, axes) attributes: mode ("constant").
 * Before opset 11: attributes pads, value (0). axes input from 18. */
static dy_status map_pad(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 11 ? "mode pads value" : "mode"));
  TRY(need_in(c, 0, &x));
  char mode[32];
  ox_attr_s(c, "mode", "constant", mode, sizeof mode);
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "mode '%s'", mode);
  int r = x->type.rank;
  const int64_t *pads;
  int64_t np;
  float value = 0;
  int64_t axes[DY_MAX_DIMS];
  int n_axes = r;
  for (int i = 0; i < r; i++)
    axes[i] = i;
  if (c->opset < 11) {
    int k;
    pads = ox_attr_ints(c, "pads", &k);
    np = k;
    value = ox_attr_f(c, "value", 0.0f);
  } else {
    ox_value *pv, *cv = ox_in(c, 2);
    TRY(need_in(c, 1, &pv));
    TRY(ox_get_ints(c, pv, "Pad's pads", false, &pads, &np));
    if (cv) {
      if (!cv->c) {
        ox_get_ints(c, cv, "Pad's constant_value", false, &pads, &np);
        return c->err->status;
      }
      if (dy_type_numel(&cv->type) != 1)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "constant_value must be a scalar");
      value = cv->type.dtype == DY_F32 ? ((float *)cv->c->data)[0]
              : cv->type.dtype == DY_I64 ? (float)((int64_t *)cv->c->data)[0]
                                         : ((unsigned char *)cv->c->data)[0];
    }
    if (ox_in(c, 3)) {
      const int64_t *a;
      int64_t na;
      TRY(ox_get_ints(c, ox_in(c, 3), "Pad's axes", false, &a, &na));
      if (na > r)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "too many axes");
      n_axes = (int)na;
      for (int i = 0; i < n_axes; i++) {
        int ax;
        TRY(ox_axis(c, a[i], r, &ax));
        axes[i] = ax;
      }
    }
  }
  if (!pads || np != 2 * n_axes)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "pads has %lld entries for %d axes",
                   (long long)np, n_axes);
  int64_t full[2 * DY_MAX_DIMS] = {0};
  for (int i = 0; i < n_axes; i++) {
    full[axes[i]] = pads[i];
    full[r + axes[i]] = pads[n_axes + i];
  }
  ox_value *o = ox_pad(c, x, full, mode, value);
  if (o == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    o = ox_reshape(c, x, r, zeros);
  }
  OUT(0, o);
}

/* Gather(data, indices) attributes: axis (0). */
static dy_status map_gather(ox_ctx *c) {
  ox_value *x, *idx;
  TRY(ox_check_attrs(c, "axis"));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &idx));
  dy_attr a[] = {DY_ATTR_I("axis", ox_attr_i(c, "axis", 0))};
  ox_value *in[2] = {x, idx};
  OUT(0, ox_op(c, "gather", in, 2, a, 1));
}

/* GatherElements(data, indices) attributes: axis (0). Composed as a
 * one-hot select: out = sum_k (indices == k) ? data[.., k, ..] : 0 along
 * a new last axis (data sliced to the indices' extent on the other axes).
 * An index out of range selects nothing (gives 0). */
static dy_status map_gather_elements(ox_ctx *c) {
  ox_value *x, *idx;
  TRY(ox_check_attrs(c, "axis"));
  TRY(need_in(c, 0, &x));
  TRY(need_in(c, 1, &idx));
  int r = x->type.rank, axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), r, &axis));
  if (idx->type.rank != r || r + 1 > DY_MAX_DIMS || idx->type.dtype != DY_I64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "indices must be int64 of the data's rank");
  int64_t dim = x->type.shape[axis];
  if (!dy_type_is_static(&x->type) || !dy_type_is_static(&idx->type))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "dynamic shapes");
  /* negative indices count from the end */
  ox_value *neg = ox_binary(c, "less", idx, ox_const_i64(c, 0));
  idx = ox_where(c, neg, ox_binary(c, "add", idx, ox_const_i64(c, dim)), idx);
  ox_value *oh = ox_binary(c, "equal", ox_unsqueeze(c, idx, 1, (int64_t[]){r}),
                           ox_iota(c, dim, r + 1, r));
  /* data: slice the other axes to the indices' extent, move axis last */
  int64_t st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], perm[DY_MAX_DIMS];
  int ns = 0;
  for (int i = 0; i < r; i++)
    if (i != axis && idx->type.shape[i] != x->type.shape[i]) {
      st[ns] = 0;
      en[ns] = idx->type.shape[i];
      ax[ns++] = i;
    }
  ox_value *d = ns ? ox_slice(c, x, ns, st, en, ax, NULL) : x;
  int k = 0;
  for (int i = 0; i < r; i++)
    if (i != axis)
      perm[k++] = i;
  perm[k] = axis;
  d = ox_unsqueeze(c, ox_transpose(c, d, r, perm), 1, (int64_t[]){axis});
  ox_value *sel = oh && d ? ox_where(c, oh, d, zero_like(c, x->type.dtype)) : NULL;
  OUT(0, ox_reduce(c, "reduce_sum", sel, 1, (int64_t[]){r}, false));
}

/* Trilu(input, k) attributes: upper (1). The mask is a constant. */
static dy_status map_trilu(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "upper"));
  TRY(need_in(c, 0, &x));
  int64_t k = 0;
  if (ox_in(c, 1)) {
    const int64_t *kv;
    int64_t n;
    TRY(ox_get_ints(c, ox_in(c, 1), "Trilu's k", false, &kv, &n));
    if (n != 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "k must be a scalar");
    k = kv[0];
  }
  int r = x->type.rank;
  if (r < 2)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "rank %d < 2", r);
  int64_t rows = x->type.shape[r - 2], cols = x->type.shape[r - 1];
  if (rows < 0 || cols < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic matrix dim");
  bool upper = ox_attr_i(c, "upper", 1) != 0;
  int64_t shape[2] = {rows, cols};
  ox_value *m = ox_new_const(c, DY_BOOL, 2, shape, NULL);
  if (!m)
    return c->err->status;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      ((unsigned char *)m->c->data)[i * cols + j] = upper ? j - i >= k : j - i <= k;
  OUT(0, ox_where(c, m, x, zero_like(c, x->type.dtype)));
}

/* ------------------------------------------------------------------ */
/* reductions, arg max/min                                             */
/* ------------------------------------------------------------------ */

/* Reduce*(data, axes) attributes: keepdims (1), axes (attribute before
 * opset 13 for ReduceSum, 18 for the others), noop_with_empty_axes (0). */
static dy_status reduce_common(ox_ctx *c, ox_value **x, int64_t *axes, int *n,
                               bool *keep, bool *noop) {
  bool sum = strcmp(c->node->op_type, "ReduceSum") == 0;
  int since = sum ? 13 : 18;
  TRY(ox_check_attrs(c, c->opset < since ? "keepdims axes" : "keepdims noop_with_empty_axes"));
  TRY(need_in(c, 0, x));
  TRY(axes_operand(c, since, 1, axes, n));
  *keep = ox_attr_i(c, "keepdims", 1) != 0;
  *noop = *n <= 0 && ox_attr_i(c, "noop_with_empty_axes", 0) != 0;
  if (*n < 0)
    *n = 0;
  return DY_OK;
}

static dy_status map_reduce(ox_ctx *c) {
  ox_value *x;
  int64_t axes[DY_MAX_DIMS];
  int n;
  bool keep, noop;
  TRY(reduce_common(c, &x, axes, &n, &keep, &noop));
  const char *t = c->node->op_type + 6; /* after "Reduce" */
  if (noop) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    OUT(0, ox_reshape(c, x, x->type.rank, zeros));
  }
  ox_value *r;
  if (strcmp(t, "Sum") == 0)
    r = ox_reduce(c, "reduce_sum", x, n, axes, keep);
  else if (strcmp(t, "Mean") == 0)
    r = ox_reduce(c, "reduce_mean", x, n, axes, keep);
  else if (strcmp(t, "Max") == 0)
    r = ox_reduce(c, "reduce_max", x, n, axes, keep);
  else if (strcmp(t, "Min") == 0)
    r = ox_reduce(c, "reduce_min", x, n, axes, keep);
  else if (strcmp(t, "L1") == 0)
    r = ox_reduce(c, "reduce_sum", ox_unary(c, "abs", x), n, axes, keep);
  else if (strcmp(t, "L2") == 0)
    r = ox_unary(c, "sqrt", ox_reduce(c, "reduce_sum", ox_binary(c, "mul", x, x), n, axes, keep));
  else if (strcmp(t, "SumSquare") == 0)
    r = ox_reduce(c, "reduce_sum", ox_binary(c, "mul", x, x), n, axes, keep);
  else if (strcmp(t, "LogSum") == 0)
    r = ox_unary(c, "log", ox_reduce(c, "reduce_sum", x, n, axes, keep));
  else if (strcmp(t, "LogSumExp") == 0) {
    /* m + log(sum(exp(x - m))) with m the max, kept for broadcasting */
    ox_value *m = ox_reduce(c, "reduce_max", x, n, axes, true);
    ox_value *s = ox_reduce(c, "reduce_sum", ox_unary(c, "exp", ox_binary(c, "sub", x, m)),
                            n, axes, keep);
    if (!keep)
      m = ox_reduce(c, "reduce_max", x, n, axes, false);
    r = ox_binary(c, "add", ox_unary(c, "log", s), m);
  } else
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "op type %s is not supported", c->node->op_type);
  OUT(0, r);
}

/* ArgMax / ArgMin attributes: axis (0), keepdims (1), select_last_index
 * (0). ArgMin is argmax of -x; the last index is found on the reversed
 * axis. */
static dy_status arg_common(ox_ctx *c, bool min) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis keepdims select_last_index"));
  TRY(need_in(c, 0, &x));
  int axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), x->type.rank, &axis));
  bool keep = ox_attr_i(c, "keepdims", 1) != 0, last = ox_attr_i(c, "select_last_index", 0);
  int64_t dim = x->type.shape[axis];
  if (last && dim < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "select_last_index along the batch dim");
  ox_value *v = min ? ox_unary(c, "neg", x) : x;
  if (last) {
    int64_t st = -1, en = INT64_MIN, ax = axis, sp = -1;
    v = ox_slice(c, v, 1, &st, &en, &ax, &sp);
  }
  dy_attr a[] = {DY_ATTR_I("axis", axis), DY_ATTR_I("keepdim", keep)};
  ox_value *r = v ? ox_op(c, "argmax", &v, 1, a, 2) : NULL;
  if (last && r) /* index on the reversed axis -> dim - 1 - i */
    r = ox_binary(c, "sub", ox_const_i64(c, dim - 1), r);
  OUT(0, r);
}
static dy_status map_argmax(ox_ctx *c) { return arg_common(c, false); }
static dy_status map_argmin(ox_ctx *c) { return arg_common(c, true); }

/* ------------------------------------------------------------------ */
/* softmax family                                                      */
/* ------------------------------------------------------------------ */

/* Softmax / LogSoftmax / Hardmax attributes: axis (1 before opset 13,
 * with "flatten to 2-D at axis" semantics; -1 from 13). */
static dy_status softmax_common(ox_ctx *c, int kind) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis"));
  TRY(need_in(c, 0, &x));
  int r = x->type.rank, axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", c->opset < 13 ? 1 : -1), r, &axis));
  ox_value *v = x;
  bool flat = c->opset < 13 && axis != r - 1;
  if (flat) {
    int64_t head = 1, tail = 1;
    for (int i = 0; i < r; i++) {
      if (x->type.shape[i] < 0)
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "coerced 2-D softmax with a dynamic dim");
      *(i < axis ? &head : &tail) *= x->type.shape[i];
    }
    v = ox_reshape(c, x, 2, (int64_t[]){head, tail});
    axis = 1;
  }
  ox_value *o;
  dy_attr a[] = {DY_ATTR_I("axis", axis)};
  if (kind == 0)
    o = v ? ox_op(c, "softmax", &v, 1, a, 1) : NULL;
  else if (kind == 1)
    o = v ? ox_op(c, "log_softmax", &v, 1, a, 1) : NULL;
  else {
    /* hardmax: one-hot of the first maximum */
    if (!v)
      return c->err->status;
    int vr = v->type.rank;
    dy_attr b[] = {DY_ATTR_I("axis", axis), DY_ATTR_I("keepdim", 1)};
    ox_value *am = ox_op(c, "argmax", &v, 1, b, 2);
    o = ox_cast(c, ox_binary(c, "equal", am, ox_iota(c, v->type.shape[axis], vr, axis)), DY_F32);
  }
  if (flat && o) {
    int64_t zeros[DY_MAX_DIMS];
    for (int i = 0; i < r; i++)
      zeros[i] = x->type.shape[i];
    o = ox_reshape(c, o, r, zeros);
  }
  OUT(0, o);
}
static dy_status map_softmax(ox_ctx *c) { return softmax_common(c, 0); }
static dy_status map_log_softmax(ox_ctx *c) { return softmax_common(c, 1); }
static dy_status map_hardmax(ox_ctx *c) { return softmax_common(c, 2); }

/* ------------------------------------------------------------------ */
/* MatMul, Gemm                                                        */
/* ------------------------------------------------------------------ */

static ox_value *matmul(ox_ctx *c, ox_value *a, ox_value *b, bool ta, bool tb) {
  if (!a || !b)
    return NULL;
  ox_value *in[2] = {a, b};
  dy_attr at[] = {DY_ATTR_I("transpose_x", ta), DY_ATTR_I("transpose_y", tb)};
  return ox_op(c, "matmul", in, 2, at, 2);
}

/* MatMul(A, B): numpy matmul (float32). */
static dy_status map_matmul(ox_ctx *c) {
  ox_value *a, *b;
  TRY(ox_check_attrs(c, ""));
  TRY(need_in(c, 0, &a));
  TRY(need_in(c, 1, &b));
  OUT(0, matmul(c, a, b, false, false));
}

/* Gemm(A, B, C) attributes: alpha (1.0), beta (1.0), transA (0), transB
 * (0): alpha * A' B' + beta * C, C broadcasting. */
static dy_status map_gemm(ox_ctx *c) {
  ox_value *a, *b, *cc = NULL;
  TRY(ox_check_attrs(c, c->opset < 7 ? "alpha beta transA transB broadcast"
                                     : "alpha beta transA transB"));
  TRY(need_in(c, 0, &a));
  TRY(need_in(c, 1, &b));
  cc = ox_in(c, 2);
  if (a->type.rank != 2 || b->type.rank != 2)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "A and B must be 2-D");
  float alpha = ox_attr_f(c, "alpha", 1.0f), beta = ox_attr_f(c, "beta", 1.0f);
  ox_value *y = matmul(c, a, b, ox_attr_i(c, "transA", 0), ox_attr_i(c, "transB", 0));
  if (alpha != 1.0f)
    y = ox_scale(c, y, alpha, 0.0f);
  if (cc && beta != 0.0f) {
    if (beta != 1.0f)
      cc = ox_scale(c, cc, beta, 0.0f);
    y = ox_binary(c, "add", y, cc);
  }
  OUT(0, y);
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

static const ox_mapper mappers[] = {
    {"Identity", map_identity},     {"Dropout", map_dropout},
    {"Constant", map_constant},     {"ConstantOfShape", map_constant_of_shape},
    {"Shape", map_shape},           {"Size", map_size},
    {"Range", map_range},           {"Add", map_add},
    {"Sub", map_sub},               {"Mul", map_mul},
    {"Div", map_div},               {"Pow", map_pow},
    {"Min", map_min},               {"Max", map_max},
    {"Sum", map_sum},               {"Mean", map_mean},
    {"Equal", map_equal},           {"Greater", map_greater},
    {"Less", map_less},             {"GreaterOrEqual", map_greater_equal},
    {"LessOrEqual", map_less_equal}, {"And", map_and},
    {"Or", map_or},                 {"Xor", map_xor},
    {"Not", map_not},               {"Where", map_where},
    {"Relu", map_relu},             {"Sigmoid", map_sigmoid},
    {"Tanh", map_tanh},             {"Exp", map_exp},
    {"Log", map_log},               {"Sqrt", map_sqrt},
    {"Abs", map_abs},               {"Neg", map_neg},
    {"Erf", map_erf},               {"Reciprocal", map_reciprocal},
    {"HardSwish", map_hard_swish},  {"Softplus", map_softplus},
    {"Softsign", map_softsign},     {"LeakyRelu", map_leaky_relu},
    {"Elu", map_elu},               {"Selu", map_selu},
    {"Celu", map_celu},             {"HardSigmoid", map_hard_sigmoid},
    {"ThresholdedRelu", map_thresholded_relu}, {"Shrink", map_shrink},
    {"PRelu", map_prelu},           {"Clip", map_clip},
    {"Sinh", map_sinh},             {"Cosh", map_cosh},
    {"Asinh", map_asinh},           {"Acosh", map_acosh},
    {"Atanh", map_atanh},           {"Sign", map_sign},
    {"Floor", map_floor},           {"Ceil", map_ceil},
    {"Round", map_round},           {"IsNaN", map_isnan},
    {"IsInf", map_isinf},           {"Cast", map_cast},
    {"CastLike", map_cast_like},    {"Reshape", map_reshape},
    {"Flatten", map_flatten},       {"Transpose", map_transpose},
    {"Squeeze", map_squeeze},       {"Unsqueeze", map_unsqueeze},
    {"Concat", map_concat},         {"Split", map_split},
    {"Slice", map_slice},           {"Expand", map_expand},
    {"Tile", map_tile},             {"Pad", map_pad},
    {"Gather", map_gather},         {"GatherElements", map_gather_elements},
    {"Trilu", map_trilu},           {"ReduceSum", map_reduce},
    {"ReduceMean", map_reduce},     {"ReduceMax", map_reduce},
    {"ReduceMin", map_reduce},      {"ReduceL1", map_reduce},
    {"ReduceL2", map_reduce},       {"ReduceSumSquare", map_reduce},
    {"ReduceLogSum", map_reduce},   {"ReduceLogSumExp", map_reduce},
    {"ArgMax", map_argmax},         {"ArgMin", map_argmin},
    {"Softmax", map_softmax},       {"LogSoftmax", map_log_softmax},
    {"Hardmax", map_hardmax},       {"MatMul", map_matmul},
    {"Gemm", map_gemm},
};

ox_map_fn ox_find_mapper(const char *op_type) {
  for (size_t i = 0; i < sizeof mappers / sizeof *mappers; i++)
    if (strcmp(mappers[i].op_type, op_type) == 0)
      return mappers[i].map;
  return NULL;
}
