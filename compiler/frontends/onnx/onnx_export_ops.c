/* onnx_export_ops.c - one op of a Program as ONNX nodes (opset 17), each
 * the node(s) the importer reads back to that op wherever ONNX has one:
 *
 *   - the direct rows of onnx_table.c, read backwards (ox_find_direct_op):
 *     one node of the row's type, the row's float attributes by their
 *     ONNX names; a row's fixed attribute (Softplus's beta) must have the
 *     fixed value;
 *   - the rest below, by op kind: the ONNX op the importer maps onto the
 *     op (Conv, MatMul, Gemm, pools, Reshape, Slice, reductions, ...), its
 *     attribute-held operands (shapes, axes, bounds) as i64 / scalar
 *     initializers, as opset 13+ takes them;
 *   - ops ONNX 17 has no op for, as their ONNX composition (gelu, silu,
 *     rsqrt, scale), read back as the composition's ops;
 *   - int8: quantize_linear / dequantize_linear and the QLinear-shaped ops
 *     one to one (qconv2d -> QLinearConv without an activation clamp,
 *     matmul_integer, conv_integer), the others as QDQ: DequantizeLinear
 *     of every quantized operand, the float op, QuantizeLinear of the
 *     result (qmatmul, qadd, qmul, qsoftmax; a clamp act_min / act_max as
 *     a Clip in the float domain).
 *
 * Fused ops (made by compiler/passes after import), training ops and the
 * few without an ONNX spelling (inverse, group_norm, ...) are an error
 * naming the op and its line: export the Program before the fusion passes
 * (`dy2stc export` does; a .dymodel saved by dy_jit_save is unfused).
 */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

#define IN(i) oxe_var_name(x, op->inputs[i])
#define OUTV(i) oxe_var_name(x, op->outputs[i])
#define NODE(type, n_in, n_out, ...) oxe_node(x, type, n_in, (const char *[]){__VA_ARGS__}, n_out, \
                                              (const char *[]){OUTV(0)})
#define VTYPE(i) (&x->p->vars[op->inputs[i]]->type)

/* paddings of 2 ([h, w]) or 4 ([top, left, bottom, right], ONNX's
 * x1_begin, x2_begin, x1_end, x2_end order) as ONNX pads */
static void pads4(const int64_t *p, int n, int64_t out[4]) {
  for (int i = 0; i < 4; i++)
    out[i] = n == 4 ? p[i] : n == 2 ? p[i % 2] : 0;
}

static dy_status direct(oxe_ctx *x, const dy_op *op, const ox_direct *d) {
  const char *in[3];
  for (int i = 0; i < d->n_in; i++)
    in[i] = IN(i);
  Onnx__NodeProto *n = oxe_node(x, d->op_type, d->n_in, in, 1, (const char *[]){OUTV(0)});
  for (int i = 0; i < 2 && d->attrs[i].name; i++) {
    const dy_attr *a = dy_op_find_attr(op, d->attrs[i].name);
    double v = a ? a->f : d->attrs[i].dflt;
    if (d->attrs[i].onnx)
      oxe_attr_f(x, n, d->attrs[i].onnx, (float)v);
    else if ((float)v != d->attrs[i].dflt)
      return oxe_refuse(x, "with this attribute value has no ONNX spelling");
  }
  return DY_OK;
}

/* ---- nn ---- */

/* Conv's (and ConvTranspose's, ConvInteger's, QLinearConv's) attributes */
static void conv_attrs(oxe_ctx *x, Onnx__NodeProto *n, const int64_t *strides, int n_strides,
                       const int64_t *paddings, int n_paddings, const int64_t *dilations,
                       int n_dilations, int64_t groups) {
  int64_t pads[4];
  pads4(paddings, n_paddings, pads);
  oxe_attr_is(x, n, "strides", n_strides, strides);
  oxe_attr_is(x, n, "pads", 4, pads);
  oxe_attr_is(x, n, "dilations", n_dilations, dilations);
  oxe_attr_i(x, n, "group", groups);
}

static dy_status conv(oxe_ctx *x, const dy_op *op) {
  if (op->kind == DY_OP_CONV2D) {
    dy_conv2d_attrs a = dy_conv2d_attrs_get(op);
    conv_attrs(x, NODE("Conv", 2, 1, IN(0), IN(1)), a.strides, a.n_strides, a.paddings,
               a.n_paddings, a.dilations, a.n_dilations, a.groups);
    return DY_OK;
  }
  dy_conv2d_transpose_attrs a = dy_conv2d_transpose_attrs_get(op);
  Onnx__NodeProto *n = NODE("ConvTranspose", 2, 1, IN(0), IN(1));
  conv_attrs(x, n, a.strides, a.n_strides, a.paddings, a.n_paddings, a.dilations,
             a.n_dilations, a.groups);
  if (a.n_output_padding)
    oxe_attr_is(x, n, "output_padding", a.n_output_padding, a.output_padding);
  return DY_OK;
}

static dy_status pool(oxe_ctx *x, const dy_op *op) {
  dy_pool2d_attrs a = dy_pool2d_attrs_get(op);
  bool max = strcmp(a.pooling_type, "max") == 0;
  if (!max && strcmp(a.pooling_type, "avg"))
    return oxe_refuse(x, "of this pooling_type has no ONNX spelling");
  if (a.global_pooling) {
    NODE(max ? "GlobalMaxPool" : "GlobalAveragePool", 1, 1, IN(0));
    return DY_OK;
  }
  if (a.adaptive)
    return oxe_refuse(x, "adaptive has no ONNX spelling");
  int64_t pads[4];
  pads4(a.paddings, a.n_paddings, pads);
  Onnx__NodeProto *n = NODE(max ? "MaxPool" : "AveragePool", 1, 1, IN(0));
  oxe_attr_is(x, n, "kernel_shape", a.n_ksize, a.ksize);
  oxe_attr_is(x, n, "strides", a.n_strides, a.strides);
  oxe_attr_is(x, n, "pads", 4, pads);
  if (a.ceil_mode)
    oxe_attr_i(x, n, "ceil_mode", 1);
  if (!max && !a.exclusive)
    oxe_attr_i(x, n, "count_include_pad", 1);
  return DY_OK;
}

static dy_status norm(oxe_ctx *x, const dy_op *op) {
  if (op->kind == DY_OP_BATCH_NORM) {
    dy_batch_norm_attrs a = dy_batch_norm_attrs_get(op);
    if (!a.is_test)
      return oxe_refuse(x, "in training mode (is_test 0) has no ONNX inference spelling");
    Onnx__NodeProto *n = NODE("BatchNormalization", 5, 1, IN(0), IN(1), IN(2), IN(3), IN(4));
    oxe_attr_f(x, n, "epsilon", (float)a.epsilon);
    oxe_attr_f(x, n, "momentum", (float)a.momentum);
    return DY_OK;
  }
  dy_layer_norm_attrs a = dy_layer_norm_attrs_get(op);
  Onnx__NodeProto *n = NODE("LayerNormalization", 3, 1, IN(0), IN(1), IN(2));
  oxe_attr_i(x, n, "axis", a.begin_norm_axis);
  oxe_attr_f(x, n, "epsilon", (float)a.epsilon);
  return DY_OK;
}

/* ---- math ---- */

/* gelu (exact or tanh), silu, rsqrt, scale: ONNX 17 compositions */
static dy_status composite(oxe_ctx *x, const dy_op *op) {
  const char *xin = IN(0), *y = OUTV(0);
  dy_dtype dt = VTYPE(0)->dtype;
  switch (op->kind) {
  case DY_OP_GELU: {
    /* exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    const char *inner = oxe_tmp(x, "gelu"), *t = oxe_tmp(x, "gelu"), *u = oxe_tmp(x, "gelu"),
               *h = oxe_tmp(x, "gelu");
    if (dy_gelu_attrs_get(op).approximate) {
      const char *x3 = oxe_tmp(x, "gelu"), *p = oxe_tmp(x, "gelu"), *q = oxe_tmp(x, "gelu");
      oxe_node(x, "Pow", 2, (const char *[]){xin, oxe_const_scalar(x, dt, 3.0)}, 1, &x3);
      oxe_node(x, "Mul", 2, (const char *[]){x3, oxe_const_scalar(x, dt, 0.044715)}, 1, &p);
      oxe_node(x, "Add", 2, (const char *[]){xin, p}, 1, &q);
      oxe_node(x, "Mul", 2, (const char *[]){q, oxe_const_scalar(x, dt, 0.7978845608028654)}, 1,
               &inner);
      oxe_node(x, "Tanh", 1, &inner, 1, &t);
    } else {
      oxe_node(x, "Div", 2, (const char *[]){xin, oxe_const_scalar(x, dt, 1.4142135623730951)},
               1, &inner);
      oxe_node(x, "Erf", 1, &inner, 1, &t);
    }
    oxe_node(x, "Add", 2, (const char *[]){t, oxe_const_scalar(x, dt, 1.0)}, 1, &u);
    oxe_node(x, "Mul", 2, (const char *[]){xin, oxe_const_scalar(x, dt, 0.5)}, 1, &h);
    oxe_node(x, "Mul", 2, (const char *[]){h, u}, 1, &y);
    return DY_OK;
  }
  case DY_OP_SILU: {
    const char *s = oxe_tmp(x, "sigmoid");
    oxe_node(x, "Sigmoid", 1, &xin, 1, &s);
    oxe_node(x, "Mul", 2, (const char *[]){xin, s}, 1, &y);
    return DY_OK;
  }
  case DY_OP_RSQRT: {
    const char *s = oxe_tmp(x, "sqrt");
    oxe_node(x, "Sqrt", 1, &xin, 1, &s);
    oxe_node(x, "Reciprocal", 1, &s, 1, &y);
    return DY_OK;
  }
  case DY_OP_SCALE: { /* x * scale + bias, or (x + bias) * scale */
    dy_scale_attrs a = dy_scale_attrs_get(op);
    const char *t = oxe_tmp(x, "scale");
    const char *k = oxe_const_scalar(x, dt, a.scale), *b = oxe_const_scalar(x, dt, a.bias);
    if (a.bias_after_scale) {
      oxe_node(x, "Mul", 2, (const char *[]){xin, k}, 1, &t);
      oxe_node(x, "Add", 2, (const char *[]){t, b}, 1, &y);
    } else {
      oxe_node(x, "Add", 2, (const char *[]){xin, b}, 1, &t);
      oxe_node(x, "Mul", 2, (const char *[]){t, k}, 1, &y);
    }
    return DY_OK;
  }
  default:
    return oxe_refuse(x, "has no ONNX spelling in this exporter");
  }
}

static dy_status matmul(oxe_ctx *x, const dy_op *op) {
  dy_matmul_attrs a = dy_matmul_attrs_get(op);
  const dy_type *ta = VTYPE(0), *tb = VTYPE(1);
  if (!a.transpose_x && !a.transpose_y) {
    NODE("MatMul", 2, 1, IN(0), IN(1));
    return DY_OK;
  }
  if (ta->rank == 2 && tb->rank == 2) { /* Gemm, which the importer reads as one matmul */
    Onnx__NodeProto *n = NODE("Gemm", 2, 1, IN(0), IN(1));
    if (a.transpose_x)
      oxe_attr_i(x, n, "transA", 1);
    if (a.transpose_y)
      oxe_attr_i(x, n, "transB", 1);
    return DY_OK;
  }
  /* batched with transposes: Transpose of the last two dims, then MatMul */
  const char *in[2] = {IN(0), IN(1)};
  for (int k = 0; k < 2; k++) {
    const dy_type *t = k ? tb : ta;
    if (!(k ? a.transpose_y : a.transpose_x))
      continue;
    if (t->rank < 2)
      return oxe_refuse(x, "transposes a 1-D operand");
    int64_t perm[DY_MAX_DIMS];
    for (int i = 0; i < t->rank; i++)
      perm[i] = i;
    perm[t->rank - 2] = t->rank - 1, perm[t->rank - 1] = t->rank - 2;
    const char *tr = oxe_tmp(x, "transpose");
    oxe_attr_is(x, oxe_node(x, "Transpose", 1, &in[k], 1, &tr), "perm", t->rank, perm);
    in[k] = tr;
  }
  NODE("MatMul", 2, 1, in[0], in[1]);
  return DY_OK;
}

static dy_status math(oxe_ctx *x, const dy_op *op) {
  static const struct {
    dy_op_kind k;
    const char *type;
  } bin[] = {{DY_OP_ADD, "Add"}, {DY_OP_SUB, "Sub"}, {DY_OP_MUL, "Mul"}, {DY_OP_DIV, "Div"},
             {DY_OP_POW, "Pow"}, {DY_OP_MINIMUM, "Min"}, {DY_OP_MAXIMUM, "Max"}};
  for (size_t i = 0; i < sizeof bin / sizeof *bin; i++)
    if (op->kind == bin[i].k) {
      NODE(bin[i].type, 2, 1, IN(0), IN(1));
      return DY_OK;
    }
  dy_dtype dt = VTYPE(0)->dtype;
  switch (op->kind) {
  case DY_OP_CLIP: {
    dy_clip_attrs a = dy_clip_attrs_get(op);
    NODE("Clip", 3, 1, IN(0), oxe_const_scalar(x, dt, a.min), oxe_const_scalar(x, dt, a.max));
    return DY_OK;
  }
  case DY_OP_CAST: {
    int to = oxe_elem_type((dy_dtype)dy_cast_attrs_get(op).dtype);
    if (!to)
      return oxe_refuse(x, "to this dtype has no ONNX spelling");
    oxe_attr_i(x, NODE("Cast", 1, 1, IN(0)), "to", to);
    return DY_OK;
  }
  case DY_OP_MOD:
    oxe_attr_i(x, NODE("Mod", 2, 1, IN(0), IN(1)), "fmod", dy_mod_attrs_get(op).fmod);
    return DY_OK;
  case DY_OP_SOFTMAX:
    oxe_attr_i(x, NODE("Softmax", 1, 1, IN(0)), "axis", dy_softmax_attrs_get(op).axis);
    return DY_OK;
  case DY_OP_LOG_SOFTMAX:
    oxe_attr_i(x, NODE("LogSoftmax", 1, 1, IN(0)), "axis", dy_log_softmax_attrs_get(op).axis);
    return DY_OK;
  case DY_OP_DET:
    NODE("Det", 1, 1, IN(0));
    return DY_OK;
  case DY_OP_DROPOUT:
    if (!dy_dropout_attrs_get(op).is_test)
      return oxe_refuse(x, "in training mode (is_test 0) has no ONNX inference spelling");
    NODE("Identity", 1, 1, IN(0));
    return DY_OK;
  default:
    return composite(x, op);
  }
}

/* ---- shape ---- */

static dy_status reduce(oxe_ctx *x, const dy_op *op, const char *type) {
  dy_reduce_sum_attrs a = dy_reduce_sum_attrs_get(op); /* the reductions' schemas agree */
  Onnx__NodeProto *n;
  if (op->kind == DY_OP_REDUCE_SUM) /* opset 13: ReduceSum's axes are an input */
    n = a.n_axes ? NODE(type, 2, 1, IN(0), oxe_const_i64s(x, a.n_axes, a.axes))
                 : NODE(type, 1, 1, IN(0));
  else {
    n = NODE(type, 1, 1, IN(0));
    if (a.n_axes)
      oxe_attr_is(x, n, "axes", a.n_axes, a.axes);
  }
  oxe_attr_i(x, n, "keepdims", a.keepdim);
  return DY_OK;
}

/* Size symbol sym at run time, a [1] i64 tensor: Shape of the first feed
 * with a dim that is exactly sym (the importer reads it back as that
 * symbolic size); NULL when no feed has one. */
static const char *sym_size(oxe_ctx *x, int sym) {
  for (int f = 0; f < x->p->n_feeds; f++) {
    const dy_var *v = x->p->vars[x->p->feeds[f]];
    for (int k = 0; k < v->type.rank; k++)
      if (v->type.shape[k] < 0 && dy_dim_single_sym(v->type.shape[k]) == sym) {
        const char *t = oxe_tmp(x, "size");
        Onnx__NodeProto *n = oxe_node(x, "Shape", 1, &v->name, 1, &t);
        oxe_attr_i(x, n, "start", k);
        oxe_attr_i(x, n, "end", k + 1);
        return t;
      }
  }
  return NULL;
}

/* a op b of two [1] i64 tensors into a new one */
static const char *arith(oxe_ctx *x, const char *type, const char *a, const char *b) {
  const char *t = oxe_tmp(x, "size");
  oxe_node(x, type, 2, (const char *[]){a, b}, 1, &t);
  return t;
}

/* reshape_dims: the target sizes computed at run time (each a sum of
 * products of size symbols, read off the feeds), concatenated: Reshape */
static dy_status reshape_dims(oxe_ctx *x, const dy_op *op) {
  const dy_type *t = &x->p->vars[op->outputs[0]]->type;
  const char *entry[DY_MAX_DIMS];
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->shape[i];
    dy_dim_expr e;
    if (d == 0)
      return oxe_refuse(x, "to a size 0 has no ONNX Reshape spelling");
    if (d > 0 || !dy_dim_expr_of(d, &e)) {
      entry[i] = oxe_const_i64s(x, 1, &d);
      continue;
    }
    const char *sum = e.c ? oxe_const_i64s(x, 1, &e.c) : NULL;
    for (int k = 0; k < e.n_terms; k++) {
      const char *prod = e.t[k].coef != 1 ? oxe_const_i64s(x, 1, &e.t[k].coef) : NULL;
      for (int f = 0; f < e.t[k].n; f++) {
        const char *v = sym_size(x, e.t[k].sym[f]);
        if (!v)
          return oxe_refuse(x, "reads a size symbol no input has as a dim");
        prod = prod ? arith(x, "Mul", prod, v) : v;
      }
      sum = sum ? arith(x, "Add", sum, prod) : prod;
    }
    entry[i] = sum;
  }
  const char *shape = oxe_tmp(x, "shape");
  oxe_attr_i(x, oxe_node(x, "Concat", t->rank, entry, 1, &shape), "axis", 0);
  NODE("Reshape", 2, 1, IN(0), shape);
  return DY_OK;
}

static dy_status shape_ops(oxe_ctx *x, const dy_op *op) {
  switch (op->kind) {
  case DY_OP_RESHAPE_DIMS:
    return reshape_dims(x, op);
  case DY_OP_RESHAPE: {
    dy_reshape_attrs a = dy_reshape_attrs_get(op);
    NODE("Reshape", 2, 1, IN(0), oxe_const_i64s(x, a.n_shape, a.shape));
    return DY_OK;
  }
  case DY_OP_FLATTEN: {
    dy_flatten_attrs a = dy_flatten_attrs_get(op);
    int r = VTYPE(0)->rank;
    int64_t s = a.start_axis < 0 ? a.start_axis + r : a.start_axis;
    int64_t e = a.stop_axis < 0 ? a.stop_axis + r : a.stop_axis;
    if (s >= 1 && e == r - 1) { /* ONNX Flatten: [d0 .. d(s-1) as one, the rest as one] */
      if (s == 1 || r == 2) {
        oxe_attr_i(x, NODE("Flatten", 1, 1, IN(0)), "axis", s);
        return DY_OK;
      }
    }
    /* else a Reshape keeping the dims around the flattened run (0) */
    int64_t shape[DY_MAX_DIMS];
    int m = 0;
    for (int i = 0; i < r; i++)
      if (i < s || i > e)
        shape[m++] = 0;
      else if (i == s)
        shape[m++] = -1;
    NODE("Reshape", 2, 1, IN(0), oxe_const_i64s(x, m, shape));
    return DY_OK;
  }
  case DY_OP_TRANSPOSE: {
    dy_transpose_attrs a = dy_transpose_attrs_get(op);
    oxe_attr_is(x, NODE("Transpose", 1, 1, IN(0)), "perm", a.n_perm, a.perm);
    return DY_OK;
  }
  case DY_OP_CONCAT: {
    const char *in[64];
    if (op->n_inputs > 64)
      return oxe_refuse(x, "has more than 64 inputs");
    for (int i = 0; i < op->n_inputs; i++)
      in[i] = IN(i);
    Onnx__NodeProto *n = oxe_node(x, "Concat", op->n_inputs, in, 1, (const char *[]){OUTV(0)});
    oxe_attr_i(x, n, "axis", dy_concat_attrs_get(op).axis);
    return DY_OK;
  }
  case DY_OP_SLICE: {
    dy_slice_attrs a = dy_slice_attrs_get(op); /* empty axes, steps: absent inputs */
    NODE("Slice", 5, 1, IN(0), oxe_const_i64s(x, a.n_starts, a.starts),
         oxe_const_i64s(x, a.n_ends, a.ends), a.n_axes ? oxe_const_i64s(x, a.n_axes, a.axes) : "",
         a.n_steps ? oxe_const_i64s(x, a.n_steps, a.steps) : "");
    return DY_OK;
  }
  case DY_OP_SQUEEZE: {
    dy_squeeze_attrs a = dy_squeeze_attrs_get(op);
    if (a.n_axes)
      NODE("Squeeze", 2, 1, IN(0), oxe_const_i64s(x, a.n_axes, a.axes));
    else
      NODE("Squeeze", 1, 1, IN(0));
    return DY_OK;
  }
  case DY_OP_UNSQUEEZE: {
    dy_unsqueeze_attrs a = dy_unsqueeze_attrs_get(op);
    NODE("Unsqueeze", 2, 1, IN(0), oxe_const_i64s(x, a.n_axes, a.axes));
    return DY_OK;
  }
  case DY_OP_EXPAND: { /* our -1 keeps a dim: ONNX's 1 broadcasts to it */
    dy_expand_attrs a = dy_expand_attrs_get(op);
    int64_t s[DY_MAX_DIMS];
    for (int i = 0; i < a.n_shape && i < DY_MAX_DIMS; i++)
      s[i] = a.shape[i] == -1 ? 1 : a.shape[i];
    NODE("Expand", 2, 1, IN(0), oxe_const_i64s(x, a.n_shape, s));
    return DY_OK;
  }
  case DY_OP_EXPAND_AS: {
    const char *sh = oxe_tmp(x, "shape");
    oxe_node(x, "Shape", 1, (const char *[]){IN(1)}, 1, &sh);
    NODE("Expand", 2, 1, IN(0), sh);
    return DY_OK;
  }
  case DY_OP_TILE: {
    dy_tile_attrs a = dy_tile_attrs_get(op);
    NODE("Tile", 2, 1, IN(0), oxe_const_i64s(x, a.n_repeat_times, a.repeat_times));
    return DY_OK;
  }
  case DY_OP_PAD: {
    dy_pad_attrs a = dy_pad_attrs_get(op);
    Onnx__NodeProto *n = NODE("Pad", 3, 1, IN(0), oxe_const_i64s(x, a.n_paddings, a.paddings),
                              oxe_const_scalar(x, VTYPE(0)->dtype, a.value));
    oxe_attr_s(x, n, "mode", a.mode);
    return DY_OK;
  }
  case DY_OP_FULL: { /* a static shape: the tensor as an initializer */
    dy_full_attrs a = dy_full_attrs_get(op);
    const dy_type *t = &x->p->vars[op->outputs[0]]->type;
    if (!dy_type_is_static(t))
      return oxe_refuse(x, "of a symbolic shape has no ONNX spelling in this exporter");
    size_t es = dy_dtype_size(t->dtype);
    int64_t n = dy_type_numel(t);
    uint8_t *d = oxe_alloc(x, (size_t)n * es);
    if (!d)
      return DY_OK;
    for (int64_t i = 0; i < n; i++)
      dy_dtype_set_f64(t->dtype, d, i, a.value);
    const char *name = oxe_tmp(x, "full");
    oxe_constant(x, oxe_tensor(x, name, t, d));
    NODE("Identity", 1, 1, name);
    return DY_OK;
  }
  case DY_OP_GATHER:
    oxe_attr_i(x, NODE("Gather", 2, 1, IN(0), IN(1)), "axis", dy_gather_attrs_get(op).axis);
    return DY_OK;
  case DY_OP_ARGMAX: {
    dy_argmax_attrs a = dy_argmax_attrs_get(op);
    Onnx__NodeProto *n = NODE("ArgMax", 1, 1, IN(0));
    oxe_attr_i(x, n, "axis", a.axis);
    oxe_attr_i(x, n, "keepdims", a.keepdim);
    return DY_OK;
  }
  case DY_OP_REDUCE_SUM: return reduce(x, op, "ReduceSum");
  case DY_OP_REDUCE_MEAN: return reduce(x, op, "ReduceMean");
  case DY_OP_REDUCE_MAX: return reduce(x, op, "ReduceMax");
  case DY_OP_REDUCE_MIN: return reduce(x, op, "ReduceMin");
  case DY_OP_REDUCE_PROD: return reduce(x, op, "ReduceProd");
  case DY_OP_NONZERO: /* the importer gives the count a symbol again */
    NODE("NonZero", 1, 1, IN(0));
    return DY_OK;
  default:
    return oxe_refuse(x, "has no ONNX spelling in this exporter");
  }
}

/* ---- extra: scans, indexing, sampling ---- */

static dy_status extra(oxe_ctx *x, const dy_op *op) {
  switch (op->kind) {
  case DY_OP_CUMSUM: {
    dy_cumsum_attrs a = dy_cumsum_attrs_get(op);
    int64_t ax = a.axis;
    Onnx__NodeProto *n = NODE("CumSum", 2, 1, IN(0), oxe_const_i64s(x, 1, &ax));
    oxe_attr_i(x, n, "exclusive", a.exclusive);
    oxe_attr_i(x, n, "reverse", a.reverse);
    return DY_OK;
  }
  case DY_OP_GATHER_ELEMENTS:
    oxe_attr_i(x, NODE("GatherElements", 2, 1, IN(0), IN(1)), "axis",
               dy_gather_elements_attrs_get(op).axis);
    return DY_OK;
  case DY_OP_GATHER_ND:
    oxe_attr_i(x, NODE("GatherND", 2, 1, IN(0), IN(1)), "batch_dims",
               dy_gather_nd_attrs_get(op).batch_dims);
    return DY_OK;
  case DY_OP_SCATTER_ELEMENTS: {
    dy_scatter_elements_attrs a = dy_scatter_elements_attrs_get(op);
    Onnx__NodeProto *n = NODE("ScatterElements", 3, 1, IN(0), IN(1), IN(2));
    oxe_attr_i(x, n, "axis", a.axis);
    oxe_attr_s(x, n, "reduction", a.reduction);
    return DY_OK;
  }
  case DY_OP_SCATTER_ND:
    oxe_attr_s(x, NODE("ScatterND", 3, 1, IN(0), IN(1), IN(2)), "reduction",
               dy_scatter_nd_attrs_get(op).reduction);
    return DY_OK;
  case DY_OP_TOP_K: { /* our op is TopK's second output, the indices */
    dy_top_k_attrs a = dy_top_k_attrs_get(op);
    int64_t k = a.k;
    const char *vals = oxe_tmp(x, "values");
    Onnx__NodeProto *n = oxe_node(x, "TopK", 2, (const char *[]){IN(0), oxe_const_i64s(x, 1, &k)},
                                  2, (const char *[]){vals, OUTV(0)});
    oxe_attr_i(x, n, "axis", a.axis);
    oxe_attr_i(x, n, "largest", a.largest);
    return DY_OK;
  }
  case DY_OP_GRID_SAMPLE: {
    dy_grid_sample_attrs a = dy_grid_sample_attrs_get(op);
    Onnx__NodeProto *n = NODE("GridSample", 2, 1, IN(0), IN(1));
    oxe_attr_s(x, n, "mode", a.mode);
    oxe_attr_s(x, n, "padding_mode", a.padding_mode);
    oxe_attr_i(x, n, "align_corners", a.align_corners);
    return DY_OK;
  }
  case DY_OP_ROI_ALIGN: {
    dy_roi_align_attrs a = dy_roi_align_attrs_get(op);
    Onnx__NodeProto *n = NODE("RoiAlign", 3, 1, IN(0), IN(1), IN(2));
    oxe_attr_s(x, n, "mode", a.mode);
    oxe_attr_i(x, n, "output_height", a.output_height);
    oxe_attr_i(x, n, "output_width", a.output_width);
    oxe_attr_i(x, n, "sampling_ratio", a.sampling_ratio);
    oxe_attr_f(x, n, "spatial_scale", (float)a.spatial_scale);
    oxe_attr_s(x, n, "coordinate_transformation_mode",
               a.half_pixel ? "half_pixel" : "output_half_pixel");
    return DY_OK;
  }
  default:
    return shape_ops(x, op);
  }
}

/* ---- int8 ---- */

/* DequantizeLinear of op's inputs q, scale, zero point (indices) into a
 * new float tensor; returns its name. A per-channel scale (more than one
 * value) is along axis of q: ONNX's default axis is 1, so it is always
 * written (a weight's output channel is axis 0) */
static const char *dq_axis(oxe_ctx *x, const dy_op *op, int q, int s, int z, int64_t axis) {
  const char *f = oxe_tmp(x, "dq");
  Onnx__NodeProto *n =
      oxe_node(x, "DequantizeLinear", 3, (const char *[]){IN(q), IN(s), IN(z)}, 1, &f);
  if (dy_type_numel(VTYPE(s)) > 1)
    oxe_attr_i(x, n, "axis", axis);
  return f;
}

/* The same of a per-tensor operand. */
static const char *dq(oxe_ctx *x, const dy_op *op, int q, int s, int z) {
  return dq_axis(x, op, q, s, z, 1);
}

/* the float result f quantized by op's inputs (ys, yz) as op's output,
 * clamped first to act_min / act_max in the float domain when either is
 * tighter than the output dtype */
static void q_out(oxe_ctx *x, const dy_op *op, const char *f, int ys, int yz, int64_t act_min,
                  int64_t act_max) {
  const dy_var *sv = x->p->vars[op->inputs[ys]], *zv = x->p->vars[op->inputs[yz]];
  int64_t lo, hi;
  dy_dtype qt = zv->type.dtype;
  if (dy_dtype_int_range(qt, &lo, &hi) && (act_min > lo || act_max < hi) && sv->data && zv->data) {
    double scale = dy_dtype_get_f64(DY_F32, sv->data, 0);
    double zp = (double)dy_dtype_get_i64(qt, zv->data, 0);
    double fmin = act_min > lo ? (double)(act_min - zp) * scale : -3.4e38;
    double fmax = act_max < hi ? (double)(act_max - zp) * scale : 3.4e38;
    const char *c = oxe_tmp(x, "clip");
    oxe_node(x, "Clip", 3,
             (const char *[]){f, oxe_const_scalar(x, DY_F32, fmin), oxe_const_scalar(x, DY_F32, fmax)},
             1, &c);
    f = c;
  }
  oxe_node(x, "QuantizeLinear", 3, (const char *[]){f, IN(ys), IN(yz)}, 1,
           (const char *[]){OUTV(0)});
}

static dy_status quant(oxe_ctx *x, const dy_op *op) {
  switch (op->kind) {
  case DY_OP_QUANTIZE_LINEAR:
  case DY_OP_DEQUANTIZE_LINEAR: {
    int64_t axis = op->kind == DY_OP_QUANTIZE_LINEAR ? dy_quantize_linear_attrs_get(op).axis
                                                     : dy_dequantize_linear_attrs_get(op).axis;
    Onnx__NodeProto *n = NODE(op->kind == DY_OP_QUANTIZE_LINEAR ? "QuantizeLinear"
                                                                : "DequantizeLinear",
                              3, 1, IN(0), IN(1), IN(2));
    if (dy_type_numel(VTYPE(1)) > 1)
      oxe_attr_i(x, n, "axis", axis);
    return DY_OK;
  }
  case DY_OP_QCONV2D: { /* QLinearConv: the same 9 inputs; a clamp as QDQ */
    dy_qconv2d_attrs a = dy_qconv2d_attrs_get(op);
    int64_t lo, hi;
    dy_dtype_int_range(VTYPE(7)->dtype, &lo, &hi);
    Onnx__NodeProto *n;
    const char *conv_out = OUTV(0);
    bool clamp = a.act_min > lo || a.act_max < hi;
    if (clamp) { /* DQ(x), DQ(w), Conv(+ DQ'd bias), Clip, Q */
      conv_out = oxe_tmp(x, "conv");
      const char *xf = dq(x, op, 0, 1, 2), *wf = dq_axis(x, op, 3, 4, 5, 0);
      /* the i32 bias in scale x_scale * w_scale: Cast, Mul by both scales */
      const char *bf = oxe_tmp(x, "bias"), *s = oxe_tmp(x, "bias"), *b = oxe_tmp(x, "bias");
      oxe_attr_i(x, oxe_node(x, "Cast", 1, (const char *[]){IN(8)}, 1, &bf), "to",
                 oxe_elem_type(DY_F32));
      oxe_node(x, "Mul", 2, (const char *[]){IN(1), IN(4)}, 1, &s);
      oxe_node(x, "Mul", 2, (const char *[]){bf, s}, 1, &b);
      n = oxe_node(x, "Conv", 3, (const char *[]){xf, wf, b}, 1, &conv_out);
    } else {
      n = NODE("QLinearConv", 9, 1, IN(0), IN(1), IN(2), IN(3), IN(4), IN(5), IN(6), IN(7), IN(8));
    }
    conv_attrs(x, n, a.strides, a.n_strides, a.paddings, a.n_paddings, a.dilations,
               a.n_dilations, a.groups);
    if (clamp)
      q_out(x, op, conv_out, 6, 7, a.act_min, a.act_max);
    return DY_OK;
  }
  case DY_OP_QMATMUL: { /* QDQ: DQ(a), DQ(b), MatMul (or Gemm transB), + bias, Q */
    dy_qmatmul_attrs a = dy_qmatmul_attrs_get(op);
    /* b per column: [K, N] along axis 1, [N, K] (transpose_y) along 0 */
    const char *af = dq(x, op, 0, 1, 2), *bf = dq_axis(x, op, 3, 4, 5, a.transpose_y ? 0 : 1);
    const char *m = oxe_tmp(x, "matmul"), *bq = oxe_tmp(x, "bias"), *s = oxe_tmp(x, "bias"),
               *b = oxe_tmp(x, "bias"), *y = oxe_tmp(x, "biased");
    if (a.transpose_y) {
      const char *t = oxe_tmp(x, "transpose");
      int r = VTYPE(3)->rank;
      int64_t perm[DY_MAX_DIMS];
      for (int i = 0; i < r; i++)
        perm[i] = i;
      if (r >= 2)
        perm[r - 2] = r - 1, perm[r - 1] = r - 2;
      oxe_attr_is(x, oxe_node(x, "Transpose", 1, &bf, 1, &t), "perm", r, perm);
      bf = t;
    }
    oxe_node(x, "MatMul", 2, (const char *[]){af, bf}, 1, &m);
    oxe_attr_i(x, oxe_node(x, "Cast", 1, (const char *[]){IN(8)}, 1, &bq), "to",
               oxe_elem_type(DY_F32));
    oxe_node(x, "Mul", 2, (const char *[]){IN(1), IN(4)}, 1, &s);
    oxe_node(x, "Mul", 2, (const char *[]){bq, s}, 1, &b);
    oxe_node(x, "Add", 2, (const char *[]){m, b}, 1, &y);
    q_out(x, op, y, 6, 7, a.act_min, a.act_max);
    return DY_OK;
  }
  case DY_OP_QADD:
  case DY_OP_QMUL: {
    dy_qadd_attrs a = dy_qadd_attrs_get(op); /* qmul's schema is qadd's */
    const char *af = dq(x, op, 0, 1, 2), *bf = dq(x, op, 3, 4, 5), *y = oxe_tmp(x, "float");
    oxe_node(x, op->kind == DY_OP_QADD ? "Add" : "Mul", 2, (const char *[]){af, bf}, 1, &y);
    q_out(x, op, y, 6, 7, a.act_min, a.act_max);
    return DY_OK;
  }
  case DY_OP_QSOFTMAX: {
    const char *xf = dq(x, op, 0, 1, 2), *y = oxe_tmp(x, "softmax");
    oxe_attr_i(x, oxe_node(x, "Softmax", 1, &xf, 1, &y), "axis", dy_qsoftmax_attrs_get(op).axis);
    q_out(x, op, y, 3, 4, INT64_MIN, INT64_MAX);
    return DY_OK;
  }
  case DY_OP_MATMUL_INTEGER:
    NODE("MatMulInteger", 4, 1, IN(0), IN(1), IN(2), IN(3));
    return DY_OK;
  case DY_OP_CONV_INTEGER: {
    dy_conv_integer_attrs a = dy_conv_integer_attrs_get(op);
    conv_attrs(x, NODE("ConvInteger", 4, 1, IN(0), IN(1), IN(2), IN(3)), a.strides, a.n_strides,
               a.paddings, a.n_paddings, a.dilations, a.n_dilations, a.groups);
    return DY_OK;
  }
  default:
    return extra(x, op);
  }
}

dy_status oxe_op(oxe_ctx *x, const dy_op *op) {
  x->op = op;
  const dy_op_info *info = dy_op_info_of(op->kind);
  if (info->flags & DY_OPF_FUSED)
    return oxe_refuse(x, "is a fused op, which ONNX has no op for: export the Program "
                         "before the fusion passes");
  if (info->flags & DY_OPF_INPLACE)
    return oxe_refuse(x, "is a training op (it updates state in place), which an ONNX "
                         "inference model cannot hold");
  if (op->n_outputs != 1)
    return oxe_refuse(x, "has several outputs, which the exporter does not write");
  const ox_direct *d = ox_find_direct_op(info->name);
  dy_status s;
  if (d)
    s = direct(x, op, d);
  else if (op->kind == DY_OP_CONV2D || op->kind == DY_OP_CONV2D_TRANSPOSE)
    s = conv(x, op);
  else if (op->kind == DY_OP_POOL2D)
    s = pool(x, op);
  else if (op->kind == DY_OP_BATCH_NORM || op->kind == DY_OP_LAYER_NORM)
    s = norm(x, op);
  else if (op->kind == DY_OP_MATMUL)
    s = matmul(x, op);
  else if (info->flags & DY_OPF_ELEMENTWISE || op->kind == DY_OP_SOFTMAX ||
           op->kind == DY_OP_LOG_SOFTMAX || op->kind == DY_OP_DET || op->kind == DY_OP_DROPOUT)
    s = math(x, op);
  else
    s = quant(x, op);
  if (!s && x->oom)
    return dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "export to ONNX: out of memory");
  return s;
}
