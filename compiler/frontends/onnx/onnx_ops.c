/* onnx_ops.c - ONNX ops onto the op table: constants and shapes
 * (Identity, Dropout, Constant, ConstantOfShape, Shape, Size, Range), the
 * softmax family and the losses built on it, MatMul, Gemm, Einsum, Det.
 * The ops that are one op of the table are rows of onnx_table.c;
 * elementwise math and activations are in onnx_math.c, data movement,
 * indexing and reductions in onnx_shape.c, convolution, pooling and
 * normalisation in onnx_nn.c, resizing in onnx_image.c.
 *
 * One mapper per ONNX op type, each under the op's attribute list (with
 * defaults) as the ONNX spec gives it. A mapper reads its inputs with
 * ox_in / ox_need_in, rejects attributes it does not know
 * (ox_check_attrs), builds ops with ox_op and the shorthands of
 * onnx_internal.h, and binds outputs with ox_set_out (or OUT). Ops dy2stc
 * lacks are composed from primitives, the way tinygrad builds relu as
 * where(x > 0, x, 0). Operands that must be known at compile time
 * (Reshape's shape, Slice's starts, ...) go through ox_get_ints, which
 * names the operand when it is a run-time value.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* Identity, Dropout, Constant, ConstantOfShape, Shape, Size, Range      */
/* ------------------------------------------------------------------ */

/* Identity: no attributes. The output is the input value itself. */
static dy_status map_identity(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  return ox_set_out(c, 0, x);
}

/* Dropout(data, ratio=0.5, training_mode=false) -> output, mask.
 *   opset < 12: attributes ratio (float, 0.5), is_test (< 7), seed (12+).
 * Inference: the identity; mask all true. The ratio matters only in
 * training mode, which is supported only with ratio 0 (still the
 * identity; otherwise it is random): so a run-time ratio is fine unless
 * training_mode is true, and a run-time training_mode must be bound. */
static dy_status map_dropout(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "ratio seed is_test"));
  TRY(ox_need_in(c, 0, &x));
  bool training = c->opset < 7 && ox_attr_i(c, "is_test", 0) == 0;
  float ratio = ox_attr_f(c, "ratio", 0.5f);
  if (c->opset >= 12) {
    ox_value *r = ox_in(c, 1), *t = ox_in(c, 2);
    if (t) {
      if (!t->c || t->type.dtype != DY_BOOL) {
        if (t->type.dtype == DY_BOOL)
          return ox_get_ints(c, t, "Dropout's training_mode", false, NULL, NULL);
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "training_mode '%s' must be a bool constant",
                       t->name);
      }
      training = ((unsigned char *)t->c->data)[0] != 0;
    }
    ratio = 0.5f;
    if (r && training) {
      const float *rv;
      int64_t n;
      TRY(ox_get_floats(c, r, "Dropout's ratio", &rv, &n));
      ratio = n ? rv[0] : 0.5f;
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

/* ConstantOfShape(input) attributes: value (one-element tensor, float 0).
 * A shape with symbolic sizes is the value expanded (expand_as) to a
 * run-time tensor of exactly those dims (ox_like: zeros_like and masks
 * built from Shape(x)); without one it is an error. */
static dy_status map_constant_of_shape(ox_ctx *c) {
  ox_value *sv;
  const int64_t *shape;
  int64_t n;
  TRY(ox_check_attrs(c, "value"));
  TRY(ox_need_in(c, 0, &sv));
  TRY(ox_get_ints(c, sv, "ConstantOfShape's shape", true, &shape, &n));
  if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "rank %lld", (long long)n);
  int64_t dims[DY_MAX_DIMS], ones[DY_MAX_DIMS];
  ox_value *like = NULL;
  for (int i = 0; i < n; i++) {
    dims[i] = ox_entry(sv, i);
    ones[i] = 1;
  }
  if (sv->sym && !(like = ox_like_make(c, (int)n, dims)))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "a shape of dynamic sizes that no run-time tensor has (dy2stc expands "
                   "the value to such a tensor)");
  if (like)
    shape = ones;
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
  if (like)
    OUT(0, ox_op(c, "expand_as", (ox_value *[]){v, like}, 2, NULL, 0));
  OUT(0, v);
}

/* Shape(data) attributes: start (0), end (rank) (opset 15). A symbolic
 * dim (the batch, seq, ...) becomes a symbolic entry: a shape value. */
static dy_status map_shape(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "start end"));
  TRY(ox_need_in(c, 0, &x));
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
    dims[n++] = x->type.shape[i] < 0 ? 0 : x->type.shape[i];
  ox_value *v = ox_const_i64s(c, n, dims);
  if (!v)
    return c->err->status;
  for (int i = 0; i < n; i++)
    if (x->type.shape[start + i] < 0)
      TRY(ox_set_dim(c, v, i, x->type.shape[start + i]));
  OUT(0, v);
}

/* Size(data): the element count (a size expression when dims are
 * symbolic: a shape value). */
static dy_status map_size(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  int64_t n = dy_type_numel(&x->type);
  if (n < 0) {
    if (!dy_type_numel_dim(&x->type, &n))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the size of %s is not a size expression",
                     x->name);
    ox_value *v = ox_const_i64(c, 0);
    if (!v)
      return c->err->status;
    TRY(ox_set_dim(c, v, 0, n));
    OUT(0, v);
  }
  OUT(0, ox_const_i64(c, n));
}

/* Range with a size for its limit (torch.arange(seq): limit a shape
 * value d, start s and delta k integer constants): ceil((d - s) / k)
 * elements, a size expression when exact (k = 1: d - s), built at run time
 * as s + k * cumsum(ones), exclusive, over a run-time tensor of that size
 * (ox_like_make). An inexact length, or a run-time start or delta, is
 * refused naming the operand. */
static dy_status range_of_size(ox_ctx *c, ox_value *const in[3]) {
  const int64_t *v[3];
  int64_t n;
  const char *lim = c->node->input[1]; /* a folded value has no name of its own */
  for (int i = 0; i < 3; i++) {
    TRY(ox_get_ints(c, in[i], i == 0   ? "Range's start"
                              : i == 1 ? "Range's limit"
                                       : "Range's delta",
                    i == 1, &v[i], &n));
    if (n != 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "Range operands must be scalars");
  }
  int64_t s = v[0][0], k = v[2][0], len;
  if (k == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "delta is 0");
  if (k < 0 || !dy_dim_add_const(ox_sym_dim(in[1], 0), -s, &len) ||
      !dy_dim_div(len, k, &len))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "Range from %lld by %lld to the dynamic size '%s': its length is not a "
                   "size expression", (long long)s, (long long)k, lim);
  ox_value *like = ox_like_make(c, 1, &len);
  dy_dim_expr e;
  int64_t base;
  if (!like && dy_dim_expr_of(len, &e) && e.c > 0 && dy_dim_add_const(len, -e.c, &base) &&
      (like = ox_like_make(c, 1, &base))) /* seq + 2: seq's, then 2 more */
    like = ox_concat(c, (ox_value *[]){like, ox_new_const(c, DY_F32, 1, &e.c, NULL)}, 2, 0);
  if (!like)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "Range to the dynamic size '%s': no run-time tensor has that size", lim);
  dy_attr at[DY_CUMSUM_NATTRS];
  int n_at = dy_cumsum_attrs_put(
      &(dy_cumsum_attrs){.given = DY_GIVEN_ALL, .axis = 0, .exclusive = true}, at);
  ox_value *i = ox_op(c, "cumsum", (ox_value *[]){ox_scale(c, like, 1.0f, 1.0f)}, 1, at, n_at);
  dy_dtype dt = in[0]->type.dtype;
  ox_value *r = ox_cast(c, i, dt);
  if (k != 1)
    r = ox_binary(c, "mul", r, ox_cast(c, ox_const_i64(c, k), dt));
  if (s != 0)
    r = ox_binary(c, "add", r, ox_cast(c, ox_const_i64(c, s), dt));
  OUT(0, r);
}

/* Range(start, limit, delta): constants (the length known), or a limit
 * that is a dynamic size (range_of_size). */
static dy_status map_range(ox_ctx *c) {
  ox_value *in[3];
  TRY(ox_check_attrs(c, ""));
  for (int i = 0; i < 3; i++)
    TRY(ox_need_in(c, i, &in[i]));
  if (in[1]->sym && in[0]->type.dtype != DY_F32)
    return range_of_size(c, in);
  for (int i = 0; i < 3; i++) {
    if (!ox_is_const(in[i])) /* its length would depend on run-time data */
      return ox_get_ints(c, in[i], "Range's start, limit and delta", false, NULL, NULL);
    if (in[i]->type.dtype != in[0]->type.dtype || dy_type_numel(&in[i]->type) != 1)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "Range operands must be scalars of one dtype");
  }
  dy_dtype dt = in[0]->type.dtype;
  bool f = dt == DY_F32;
  if (dt != DY_F32 && dt != DY_I64 && dt != DY_I32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "Range of %s", dy_dtype_name(dt));
  double v[3];
  int64_t iv[3];
  for (int i = 0; i < 3; i++) {
    iv[i] = dt == DY_I64 ? ((int64_t *)in[i]->c->data)[0] : dy_quant_value(dt, in[i]->c->data, 0);
    v[i] = f ? ((float *)in[i]->c->data)[0] : (double)iv[i];
  }
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
    else if (dt == DY_I64)
      ((int64_t *)o->c->data)[i] = iv[0] + i * iv[2];
    else
      ((int32_t *)o->c->data)[i] = (int32_t)(iv[0] + i * iv[2]);
  }
  OUT(0, o);
}

/* ------------------------------------------------------------------ */
/* softmax family                                                      */
/* ------------------------------------------------------------------ */

/* Softmax / LogSoftmax / Hardmax attributes: axis (1 before opset 13,
 * with "flatten to 2-D at axis" semantics; -1 from 13). */
static dy_status softmax_common(ox_ctx *c, int kind) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis"));
  TRY(ox_need_in(c, 0, &x));
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
  /* softmax and log_softmax share one schema */
  dy_attr a[DY_SOFTMAX_NATTRS];
  dy_softmax_attrs_put(&(dy_softmax_attrs){.given = DY_GIVEN_ALL, .axis = axis}, a);
  if (kind == 0)
    o = v ? ox_op(c, "softmax", &v, 1, a, DY_SOFTMAX_NATTRS) : NULL;
  else if (kind == 1)
    o = v ? ox_op(c, "log_softmax", &v, 1, a, DY_SOFTMAX_NATTRS) : NULL;
  else {
    /* hardmax: one-hot of the first maximum */
    if (!v)
      return c->err->status;
    int vr = v->type.rank;
    dy_attr b[DY_ARGMAX_NATTRS];
    int n_b = dy_argmax_attrs_put(&(dy_argmax_attrs){
        .given = DY_GIVEN_ALL, .axis = axis, .keepdim = 1}, b);
    ox_value *am = ox_op(c, "argmax", &v, 1, b, n_b);
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
  dy_attr at[DY_MATMUL_NATTRS];
  int n_at = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_x = ta, .transpose_y = tb}, at);
  return ox_op(c, "matmul", in, 2, at, n_at);
}

/* MatMul(A, B): numpy matmul (float32). */
static dy_status map_matmul(ox_ctx *c) {
  ox_value *a, *b;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &a));
  TRY(ox_need_in(c, 1, &b));
  OUT(0, matmul(c, a, b, false, false));
}

/* Gemm(A, B, C) attributes: alpha (1.0), beta (1.0), transA (0), transB
 * (0): alpha * A' B' + beta * C, C broadcasting. */
static dy_status map_gemm(ox_ctx *c) {
  ox_value *a, *b, *cc = NULL;
  TRY(ox_check_attrs(c, c->opset < 7 ? "alpha beta transA transB broadcast"
                                     : "alpha beta transA transB"));
  TRY(ox_need_in(c, 0, &a));
  TRY(ox_need_in(c, 1, &b));
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
/* losses                                                              */
/* ------------------------------------------------------------------ */

/* The NLL loss of log-probabilities lp [N, C, d...] at targets t [N, d...]
 * with optional class weights w [C], ignore_index and reduction. */
static ox_value *nll(ox_ctx *c, ox_value *lp, ox_value *t, ox_value *w, bool has_ii,
                     int64_t ii, const char *reduction) {
  if (!lp || !t)
    return NULL;
  int r = lp->type.rank;
  int64_t C = lp->type.shape[1];
  ox_value *oh = ox_binary(c, "equal", ox_unsqueeze(c, t, 1, (int64_t[]){1}),
                           ox_iota(c, C, r, 1));
  ox_value *picked = ox_reduce(c, "reduce_sum", ox_where(c, oh, lp, ox_const_f32(c, 0)), 1,
                               (int64_t[]){1}, false);
  ox_value *wt = NULL;
  if (w) {
    int64_t shape[DY_MAX_DIMS];
    for (int i = 0; i < r; i++)
      shape[i] = i == 1 ? C : 1;
    wt = ox_reduce(c, "reduce_sum",
                   ox_where(c, oh, ox_reshape(c, w, r, shape), ox_const_f32(c, 0)), 1,
                   (int64_t[]){1}, false);
  }
  if (has_ii) {
    ox_value *keep = ox_not(c, ox_binary(c, "equal", t, ox_const_i64(c, ii)));
    wt = wt ? ox_where(c, keep, wt, ox_const_f32(c, 0)) : ox_cast(c, keep, DY_F32);
  }
  ox_value *loss = ox_unary(c, "neg", wt ? ox_binary(c, "mul", picked, wt) : picked);
  if (strcmp(reduction, "none") == 0)
    return loss;
  ox_value *sum = ox_reduce(c, "reduce_sum", loss, 0, NULL, false);
  if (strcmp(reduction, "sum") == 0)
    return sum;
  if (wt)
    return ox_binary(c, "div", sum, ox_reduce(c, "reduce_sum", wt, 0, NULL, false));
  return ox_reduce(c, "reduce_mean", loss, 0, NULL, false);
}

static dy_status loss_common(ox_ctx *c, bool softmax) {
  ox_value *x, *t, *w = ox_in(c, 2);
  TRY(ox_check_attrs(c, "ignore_index reduction"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &t));
  TRY(ox_need_f32(c, x));
  if (t->type.dtype != DY_I64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "targets must be int64");
  if (x->type.rank < 2 || x->type.shape[1] < 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "input must be [N, C, ...]");
  char red[16];
  ox_attr_s(c, "reduction", "mean", red, sizeof red);
  if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "reduction '%s'", red);
  bool has_ii = ox_attr(c, "ignore_index") != NULL;
  int64_t ii = ox_attr_i(c, "ignore_index", 0);
  ox_value *lp = x;
  if (softmax) {
    dy_attr a[DY_LOG_SOFTMAX_NATTRS];
    int n_a = dy_log_softmax_attrs_put(&(dy_log_softmax_attrs){
        .given = DY_GIVEN_ALL, .axis = 1}, a);
    lp = ox_op(c, "log_softmax", &x, 1, a, n_a);
  }
  TRY(ox_set_or_fail(c, 0, nll(c, lp, t, w, has_ii, ii, red)));
  if (softmax && ox_out_wanted(c, 1))
    TRY(ox_set_or_fail(c, 1, lp));
  return DY_OK;
}

/* NegativeLogLikelihoodLoss(input, target, weight) attributes:
 * ignore_index (none), reduction ("mean"). */
static dy_status map_nll_loss(ox_ctx *c) { return loss_common(c, false); }
/* SoftmaxCrossEntropyLoss(scores, labels, weights) -> output, log_prob;
 * attributes: ignore_index, reduction ("mean"). */
static dy_status map_sce_loss(ox_ctx *c) { return loss_common(c, true); }

/* ------------------------------------------------------------------ */
/* Einsum                                                              */
/* ------------------------------------------------------------------ */

/* An operand of Einsum: its value and one letter per dim (the ellipsis'
 * dims get the letters '0'.., right-aligned). */
typedef struct {
  ox_value *v;
  char l[DY_MAX_DIMS + 1];
} es_term;

/* A set of subscript letters: at most 52 letters and DY_MAX_DIMS ellipsis
 * digits, each once. */
enum { ES_SET = 64 };

/* Add to set the letters of s it lacks. */
static void es_union(char *set, const char *s) {
  size_t n = strlen(set);
  for (; *s; s++)
    if (!strchr(set, *s) && n + 1 < ES_SET)
      set[n++] = *s;
  set[n] = 0;
}

/* Sum v over its dims whose letters are not in keep; the rest keep their
 * order. */
static dy_status es_reduce(ox_ctx *c, es_term *t, const char *keep) {
  int64_t axes[DY_MAX_DIMS];
  int n = 0, k = 0;
  char left[DY_MAX_DIMS + 1];
  for (int i = 0; t->l[i]; i++) {
    if (strchr(keep, t->l[i]))
      left[k++] = t->l[i];
    else
      axes[n++] = i;
  }
  left[k] = 0;
  if (n) {
    t->v = ox_reduce(c, "reduce_sum", t->v, n, axes, false);
    if (!t->v)
      return c->err->status;
  }
  memcpy(t->l, left, (size_t)k + 1);
  return DY_OK;
}

/* A letter repeated within a term is its diagonal: x * eye at the two
 * dims, summed over the second. */
static dy_status es_diagonals(ox_ctx *c, es_term *t) {
  for (int i = 0; t->l[i]; i++)
    for (int j = i + 1; t->l[j]; j++) {
      if (t->l[i] != t->l[j])
        continue;
      int r = t->v->type.rank;
      int64_t n = t->v->type.shape[i];
      if (n < 0 || n != t->v->type.shape[j])
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "a diagonal of unequal dims");
      int64_t shape[DY_MAX_DIMS];
      for (int d = 0; d < r; d++)
        shape[d] = d == i || d == j ? n : 1;
      ox_value *eye = ox_new_const(c, DY_F32, r, shape, NULL);
      if (!eye)
        return c->err->status;
      for (int64_t k = 0; k < n; k++)
        ((float *)eye->c->data)[k * n + k] = 1.0f;
      t->v = ox_reduce(c, "reduce_sum", ox_binary(c, "mul", t->v, eye), 1,
                       (int64_t[]){j}, false);
      if (!t->v)
        return c->err->status;
      memmove(t->l + j, t->l + j + 1, strlen(t->l + j));
      j--;
    }
  return DY_OK;
}

/* The positions in t of set's letters (in set's order), appended to
 * perm; returns the product of their extents. */
static int64_t es_group(const es_term *t, const char *set, int64_t *perm, int *n) {
  int64_t p = 1;
  for (int i = 0; set[i]; i++) {
    int64_t at = strchr(t->l, set[i]) - t->l;
    perm[(*n)++] = at;
    p *= t->v->type.shape[at];
  }
  return p;
}

/* Contract a and b over the letters in neither keep: batch letters
 * (in both, kept) become matmul's batch, contracted ones its inner dim.
 * The result's letters: batch, a's kept, b's kept. */
static dy_status es_pair(ox_ctx *c, es_term *a, es_term *b, const char *keep, es_term *out) {
  char batch[DY_MAX_DIMS + 1] = "", con[DY_MAX_DIMS + 1] = "", ak[DY_MAX_DIMS + 1] = "",
       bk[DY_MAX_DIMS + 1] = "";
  int nb = 0, nc = 0, na = 0, nk = 0;
  for (int i = 0; a->l[i]; i++) {
    char x = a->l[i];
    bool inb = strchr(b->l, x), kept = strchr(keep, x);
    if (inb && kept)
      batch[nb++] = x;
    else if (inb)
      con[nc++] = x;
    else
      ak[na++] = x;
  }
  for (int i = 0; b->l[i]; i++)
    if (!strchr(a->l, b->l[i]))
      bk[nk++] = b->l[i];
  if (nb + na + nk > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a pairwise product has rank %d, over %d",
                   nb + na + nk, DY_MAX_DIMS);
  /* the shared letters must have one extent */
  for (int i = 0; a->l[i]; i++) {
    const char *q = strchr(b->l, a->l[i]);
    if (q && a->v->type.shape[i] != b->v->type.shape[q - b->l])
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "subscript '%c' has extents %lld and %lld "
                     "(broadcasting is not supported)", a->l[i],
                     (long long)a->v->type.shape[i], (long long)b->v->type.shape[q - b->l]);
  }
  /* a -> [batch, a kept, contracted], b -> [batch, contracted, b kept] */
  int64_t pa[DY_MAX_DIMS], pb[DY_MAX_DIMS];
  int ia = 0, ib = 0;
  int64_t B = es_group(a, batch, pa, &ia);
  int64_t M = es_group(a, ak, pa, &ia);
  int64_t K = es_group(a, con, pa, &ia);
  es_group(b, batch, pb, &ib);
  es_group(b, con, pb, &ib);
  int64_t N = es_group(b, bk, pb, &ib);
  if (B < 0 || M < 0 || K < 0 || N < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic dim");
  ox_value *x = ox_reshape(c, ox_transpose(c, a->v, ia, pa), 3, (int64_t[]){B, M, K});
  ox_value *y = ox_reshape(c, ox_transpose(c, b->v, ib, pb), 3, (int64_t[]){B, K, N});
  ox_value *in[2] = {x, y};
  dy_attr at[DY_MATMUL_NATTRS];
  int n_at = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_x = 0, .transpose_y = 0}, at);
  ox_value *z = x && y ? ox_op(c, "matmul", in, 2, at, n_at) : NULL;
  /* back to [batch..., a kept..., b kept...] */
  int64_t shape[DY_MAX_DIMS], unused[DY_MAX_DIMS];
  int r = 0, nu = 0;
  es_group(a, batch, unused, &nu);
  es_group(a, ak, unused, &nu);
  for (int i = 0; i < nu; i++)
    shape[r++] = a->v->type.shape[unused[i]];
  nu = 0;
  es_group(b, bk, unused, &nu);
  for (int i = 0; i < nu; i++)
    shape[r++] = b->v->type.shape[unused[i]];
  out->v = ox_reshape(c, z, r, shape);
  if (!out->v)
    return c->err->status;
  memcpy(out->l, batch, (size_t)nb); /* nb + na + nk <= DY_MAX_DIMS (checked above) */
  memcpy(out->l + nb, ak, (size_t)na);
  memcpy(out->l + nb + na, bk, (size_t)nk);
  out->l[nb + na + nk] = 0;
  return DY_OK;
}

/* Parse one term's subscripts (spaces skipped) for a value of rank r;
 * "..." stands for the dims the letters leave, named '0'.. from the
 * right end of n_ell. */
static dy_status es_parse(ox_ctx *c, const char *s, const char *e, int r, int n_ell,
                          char *l) {
  int letters = 0, k = 0;
  bool ell = false;
  for (const char *p = s; p < e; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
      letters++;
    else if (*p == '.' && e - p >= 3 && p[1] == '.' && p[2] == '.')
      ell = true, p += 2;
    else if (*p != ' ')
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "bad equation character '%c'", *p);
  int ne = ell ? r - letters : 0;
  if (ne < 0 || (!ell && letters != r) || ne > n_ell || r > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the subscripts do not match rank %d", r);
  for (const char *p = s; p < e; p++) {
    if (*p == '.') {
      for (int i = 0; i < ne; i++)
        l[k++] = (char)('0' + n_ell - ne + i);
      p += 2;
    } else if (*p != ' ') {
      l[k++] = *p;
    }
  }
  l[k] = 0;
  return DY_OK;
}

/* Einsum(Inputs...) attributes: equation. Float32 operands. Each term's
 * repeated letters take its diagonal, letters no other term or the output
 * names are summed out, and the terms are contracted pairwise (left to
 * right) by transposes, reshapes and one batched matmul each; the result
 * is transposed to the output's order. Without "->" the output is the
 * ellipsis, then the letters used once, in alphabetical order. Shared
 * extents must agree (no broadcasting of size-1 dims). */
static dy_status map_einsum(ox_ctx *c) {
  TRY(ox_check_attrs(c, "equation"));
  char eq[512];
  ox_attr_s(c, "equation", "", eq, sizeof eq);
  int n = ox_n_in(c);
  if (n < 1 || n > 8 || !eq[0])
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs 1 to 8 inputs and an equation");
  es_term t[8];
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq);
  /* the ellipsis' rank: the most any term gives it */
  int n_ell = 0;
  const char *s = eq;
  for (int i = 0; i < n; i++) {
    TRY(ox_need_in(c, i, &t[i].v));
    TRY(ox_need_f32(c, t[i].v));
    const char *e = memchr(s, ',', (size_t)(end - s));
    if (!e)
      e = end;
    if ((i < n - 1) != (e < end))
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the equation has another number of terms");
    int letters = 0;
    for (const char *p = s; p < e; p++)
      letters += (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
    if (strstr(s, "...") && strstr(s, "...") < e && t[i].v->type.rank - letters > n_ell)
      n_ell = t[i].v->type.rank - letters;
    s = e + 1;
  }
  s = eq;
  for (int i = 0; i < n; i++) {
    const char *e = memchr(s, ',', (size_t)(end - s));
    if (!e)
      e = end;
    TRY(es_parse(c, s, e, t[i].v->type.rank, n_ell, t[i].l));
    TRY(es_diagonals(c, &t[i]));
    s = e + 1;
  }
  /* the output's letters */
  char outl[DY_MAX_DIMS + 1];
  if (arrow) {
    const char *o = arrow + 2;
    int letters = 0;
    for (const char *p = o; *p; p++)
      letters += (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
    TRY(es_parse(c, o, o + strlen(o), letters + (strstr(o, "...") ? n_ell : 0), n_ell, outl));
  } else {
    int k = 0;
    for (int i = 0; i < n_ell; i++)
      outl[k++] = (char)('0' + i);
    for (char x = 'A'; x <= 'z'; x++) {
      int uses = 0;
      for (int i = 0; i < n; i++)
        for (int j = 0; t[i].l[j]; j++)
          uses += t[i].l[j] == x;
      if (uses == 1 && k < DY_MAX_DIMS)
        outl[k++] = x;
    }
    outl[k] = 0;
  }
  /* sum out what no later term and not the output needs; contract left to
   * right */
  es_term acc = t[0];
  for (int i = 0; i < n; i++) {
    char need[ES_SET] = "";
    es_union(need, outl);
    for (int j = i + 1; j < n; j++)
      es_union(need, t[j].l);
    if (i == 0) {
      TRY(es_reduce(c, &acc, need));
      continue;
    }
    es_term b = t[i];
    char need_b[ES_SET];
    strcpy(need_b, need);
    es_union(need_b, acc.l);
    TRY(es_reduce(c, &b, need_b));
    char keep_a[ES_SET];
    strcpy(keep_a, need);
    es_union(keep_a, b.l);
    TRY(es_reduce(c, &acc, keep_a));
    TRY(es_pair(c, &acc, &b, need, &acc));
  }
  /* to the output's order */
  int r = (int)strlen(outl);
  if (r != (int)strlen(acc.l))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the output names a subscript no input has");
  int64_t perm[DY_MAX_DIMS];
  for (int i = 0; i < r; i++) {
    const char *q = strchr(acc.l, outl[i]);
    if (!q)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the output names a subscript no input has");
    perm[i] = q - acc.l;
  }
  ox_value *y = ox_transpose(c, acc.v, r, perm);
  if (y == t[0].v && n == 1) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    y = ox_reshape(c, y, y->type.rank, zeros);
  }
  OUT(0, y);
}

/* Det(X): the determinants of the trailing square matrices (f32), onto
 * det. */
static dy_status map_det(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  OUT(0, ox_unary(c, "det", x));
}

/* NonZero(X) -> i64 [rank(X), n]. n is known only at run time: a size
 * symbol of its own ("nonzero", "nonzero_1", ...: --max-dim names it),
 * declared with the bound the op implies, X's size at its symbols'
 * bounds (dy_op_size_bound). A constant X folds to a constant. */
static dy_status map_nonzero(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  int r = x->type.rank;
  if (r < 1)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "NonZero of a scalar");
  if (x->c) {
    int64_t numel = dy_type_numel(&x->type), n = 0;
    for (int64_t i = 0; i < numel; i++)
      n += dy_dtype_get_f64(x->type.dtype, x->c->data, i) != 0.0;
    ox_value *o = ox_new_const(c, DY_I64, 2, (int64_t[]){r, n}, NULL);
    if (!o)
      return c->err->status ? c->err->status : DY_STATUS_OUT_OF_MEMORY;
    int64_t *y = o->c->data, idx[DY_MAX_DIMS] = {0}, k = 0;
    for (int64_t i = 0; i < numel; i++) {
      if (dy_dtype_get_f64(x->type.dtype, x->c->data, i) != 0.0) {
        for (int d = 0; d < r; d++)
          y[d * n + k] = idx[d];
        k++;
      }
      for (int d = r - 1; d >= 0 && ++idx[d] == x->type.shape[d]; d--)
        idx[d] = 0;
    }
    return ox_set_out(c, 0, o);
  }
  OUT(0, ox_nonzero(c, x));
}

/* NonMaxSuppression(boxes, scores, max_output_boxes_per_class,
 * iou_threshold, score_threshold) -> i64 [n, 3], onto nms: the three
 * scalars must be constants (absent: 0 boxes, IoU 0, no score threshold);
 * n is a size symbol of its own ("nms", ...) bounded by B * C *
 * min(max_output_boxes_per_class, N). */
static dy_status map_non_max_suppression(ox_ctx *c) {
  ox_value *boxes, *scores, *v;
  TRY(ox_check_attrs(c, "center_point_box"));
  TRY(ox_need_in(c, 0, &boxes));
  TRY(ox_need_in(c, 1, &scores));
  dy_nms_attrs a = {.center_point_box = ox_attr_i(c, "center_point_box", 0)};
  if ((v = ox_in(c, 2))) {
    const int64_t *k;
    int64_t n;
    TRY(ox_get_ints(c, v, "NonMaxSuppression's max_output_boxes_per_class", false, &k, &n));
    if (n != 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "max_output_boxes_per_class must have one "
                     "element");
    a.max_per_class = k[0] > 0 ? k[0] : 0;
  }
  for (int i = 3; i < 5; i++)
    if ((v = ox_in(c, i))) {
      const float *f;
      int64_t n;
      TRY(ox_get_floats(c, v, i == 3 ? "NonMaxSuppression's iou_threshold"
                                     : "NonMaxSuppression's score_threshold", &f, &n));
      if (n != 1)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s must have one element",
                       i == 3 ? "iou_threshold" : "score_threshold");
      if (i == 3)
        a.iou_threshold = f[0];
      else
        a.score_threshold = f[0], a.has_score_threshold = 1;
    }
  OUT(0, ox_nms(c, boxes, scores, &a));
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_ops[] = {
    {"Identity", map_identity},
    {"Dropout", map_dropout},
    {"Constant", map_constant},
    {"ConstantOfShape", map_constant_of_shape},
    {"Shape", map_shape},
    {"Size", map_size},
    {"Range", map_range},
    {"Softmax", map_softmax},
    {"LogSoftmax", map_log_softmax},
    {"Hardmax", map_hardmax},
    {"MatMul", map_matmul},
    {"Gemm", map_gemm},
    {"NegativeLogLikelihoodLoss", map_nll_loss},
    {"SoftmaxCrossEntropyLoss", map_sce_loss},
    {"Det", map_det},
    {"Einsum", map_einsum},
    {"NonZero", map_nonzero},
    {"NonMaxSuppression", map_non_max_suppression},
    {NULL, NULL},
};
