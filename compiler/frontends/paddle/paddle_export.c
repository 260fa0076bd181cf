/* paddle_export.c - a Program as a PaddlePaddle inference model: the
 * ProgramDesc (`.pdmodel`) and the combined params stream (`.pdiparams`),
 * the layout paddle.jit.save writes and paddle.c reads.
 *
 * Block 0 only: feed ops (col = feed position), one Paddle op per op of the
 * Program, fetch ops. Each op is written as the Paddle op that paddle.c
 * imports back to the very same op (so export then import gives the same
 * Program, locations aside):
 *
 *   add/sub/mul/div/pow/maximum/minimum  elementwise_* (axis -1)
 *   equal/greater/less                   equal/greater_than/less_than
 *   matmul                               matmul_v2 (operands of rank >= 2)
 *   conv2d, conv2d_transpose, pool2d     the same, paddings [h, w] or
 *                                        [top, bottom, left, right]
 *   batch_norm (eval), layer_norm, group_norm, dropout (eval:
 *   upscale_in_train), full (fill_constant), reshape/transpose/squeeze/
 *   unsqueeze (the *2 ops), flatten (flatten_contiguous_range), slice
 *   (steps 1), gather (1-D index), argmax (arg_max), cast, where, tile,
 *   softmax, log_softmax, scale, clip, the activations of the same name
 *
 * Anything else (control flow, fused ops, training ops, ops Paddle spells
 * differently) is an error naming the op. Persistable vars go to the params
 * stream in strcmp order of names; a trainable one has stop_gradient false.
 */
#include <stdio.h>
#include <string.h>

#include "paddle_internal.h"

/* Everything the messages point at is malloc'd and listed here. */
typedef struct {
  void **ptrs;
  size_t n, cap;
  bool oom;
  dy_error *err;
  const dy_program *p;
} ex_ctx;

static void *ex_alloc(ex_ctx *x, size_t n) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 256;
    void **np = realloc(x->ptrs, cap * sizeof *np);
    if (!np) {
      x->oom = true;
      return NULL;
    }
    x->ptrs = np;
    x->cap = cap;
  }
  void *m = calloc(1, n ? n : 1);
  if (!m) {
    x->oom = true;
    return NULL;
  }
  x->ptrs[x->n++] = m;
  return m;
}

static char *ex_str(ex_ctx *x, const char *s) {
  char *d = ex_alloc(x, strlen(s) + 1);
  if (d)
    strcpy(d, s);
  return d;
}

/* Append v to a protobuf-c repeated field (n, array). */
static void ex_push(ex_ctx *x, size_t *n, void ***arr, void *v) {
  void **na = ex_alloc(x, (*n + 1) * sizeof *na);
  if (!na)
    return;
  if (*n)
    memcpy(na, *arr, *n * sizeof *na);
  na[(*n)++] = v;
  *arr = na;
}

/* ---- ops ---- */

static PdOp *ex_op(ex_ctx *x, PdBlock *b, const char *type) {
  PdOp *op = ex_alloc(x, sizeof *op);
  if (!op)
    return NULL;
  paddle__framework__proto__op_desc__init(op);
  op->type = ex_str(x, type);
  ex_push(x, &b->n_ops, (void ***)&b->ops, op);
  return op;
}

static void ex_arg(ex_ctx *x, PdOp *op, bool output, const char *slot, const char *name) {
  if (!op)
    return;
  size_t *n = output ? &op->n_outputs : &op->n_inputs;
  Paddle__Framework__Proto__OpDesc__Var ***arr = output ? &op->outputs : &op->inputs;
  Paddle__Framework__Proto__OpDesc__Var *v = NULL;
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*arr)[i]->parameter, slot) == 0)
      v = (*arr)[i];
  if (!v) {
    v = ex_alloc(x, sizeof *v);
    if (!v)
      return;
    paddle__framework__proto__op_desc__var__init(v);
    v->parameter = ex_str(x, slot);
    ex_push(x, n, (void ***)arr, v);
  }
  if (name)
    ex_push(x, &v->n_arguments, (void ***)&v->arguments, ex_str(x, name));
}

static PdAttr *ex_attr(ex_ctx *x, PdOp *op, const char *name, int type) {
  if (!op)
    return NULL;
  PdAttr *a = ex_alloc(x, sizeof *a);
  if (!a)
    return NULL;
  paddle__framework__proto__op_desc__attr__init(a);
  a->name = ex_str(x, name);
  a->has_type = true;
  a->type = (Paddle__Framework__Proto__AttrType)type;
  ex_push(x, &op->n_attrs, (void ***)&op->attrs, a);
  return a;
}

static void at_i(ex_ctx *x, PdOp *op, const char *name, int64_t v) {
  PdAttr *a = ex_attr(x, op, name, PD_A_INT);
  if (a)
    a->has_i = true, a->i = (int32_t)v;
}

static void at_f(ex_ctx *x, PdOp *op, const char *name, double v) {
  PdAttr *a = ex_attr(x, op, name, PD_A_FLOAT);
  if (a)
    a->has_f = true, a->f = (float)v;
}

static void at_b(ex_ctx *x, PdOp *op, const char *name, bool v) {
  PdAttr *a = ex_attr(x, op, name, PD_A_BOOLEAN);
  if (a)
    a->has_b = true, a->b = v;
}

static void at_s(ex_ctx *x, PdOp *op, const char *name, const char *v) {
  PdAttr *a = ex_attr(x, op, name, PD_A_STRING);
  if (a)
    a->s = ex_str(x, v);
}

static void at_ints(ex_ctx *x, PdOp *op, const char *name, const int64_t *v, int n) {
  PdAttr *a = ex_attr(x, op, name, PD_A_INTS);
  int32_t *d = a ? ex_alloc(x, (size_t)n * sizeof *d) : NULL;
  if (!d)
    return;
  for (int i = 0; i < n; i++)
    d[i] = (int32_t)v[i];
  a->ints = d;
  a->n_ints = (size_t)n;
}

/* ---- vars ---- */

static int pd_type_of(dy_dtype t) { return t == DY_F32 ? PD_FP32 : t == DY_I64 ? PD_INT64 : PD_BOOL; }

static PdTensorDesc *ex_tdesc(ex_ctx *x, const dy_type *t) {
  PdTensorDesc *td = ex_alloc(x, sizeof *td);
  int64_t *dims = ex_alloc(x, (size_t)(t->rank + 1) * sizeof *dims);
  if (!td || !dims)
    return NULL;
  paddle__framework__proto__var_type__tensor_desc__init(td);
  td->has_data_type = true;
  td->data_type = (Paddle__Framework__Proto__VarType__Type)pd_type_of(t->dtype);
  for (int i = 0; i < t->rank; i++)
    dims[i] = t->shape[i] < 0 ? -1 : t->shape[i];
  td->dims = dims;
  td->n_dims = (size_t)t->rank;
  return td;
}

static PdVar *ex_var(ex_ctx *x, PdBlock *b, const char *name, int vtype, const dy_type *t) {
  PdVar *v = ex_alloc(x, sizeof *v);
  Paddle__Framework__Proto__VarType *vt = ex_alloc(x, sizeof *vt);
  if (!v || !vt)
    return NULL;
  paddle__framework__proto__var_desc__init(v);
  paddle__framework__proto__var_type__init(vt);
  v->name = ex_str(x, name);
  v->type = vt;
  vt->has_type = true;
  vt->type = (Paddle__Framework__Proto__VarType__Type)vtype;
  if (t) {
    Paddle__Framework__Proto__VarType__LoDTensorDesc *ld = ex_alloc(x, sizeof *ld);
    if (!ld)
      return NULL;
    paddle__framework__proto__var_type__lo_dtensor_desc__init(ld);
    ld->tensor = ex_tdesc(x, t);
    vt->lod_tensor = ld;
  }
  ex_push(x, &b->n_vars, (void ***)&b->vars, v);
  return v;
}

/* ---- one op ---- */

/* An op reading X and writing Out. */
static PdOp *ex_xo(ex_ctx *x, PdBlock *b, const char *type, const char *in, const char *out) {
  PdOp *op = ex_op(x, b, type);
  ex_arg(x, op, false, "X", in);
  ex_arg(x, op, true, "Out", out);
  return op;
}

/* dy's paddings ([h, w], or [top, left, bottom, right]) as Paddle's ([h,
 * w], or [top, bottom, left, right]): the count. */
static int ex_pads(const int64_t *p, int n, int64_t out[4]) {
  out[0] = out[1] = out[2] = out[3] = 0;
  if (n == 4) {
    out[0] = p[0], out[1] = p[2], out[2] = p[1], out[3] = p[3];
    return 4;
  }
  if (n == 2)
    out[0] = p[0], out[1] = p[1];
  return 2;
}

static const char *vname(ex_ctx *x, int id) { return x->p->vars[id]->name; }

/* An XShape output (what Paddle's *2 shape ops carry): [0, dims...]. */
static void ex_xshape(ex_ctx *x, PdBlock *b, PdOp *op, int in) {
  char nm[400];
  snprintf(nm, sizeof nm, "%.380s@xshape%d", vname(x, in), (int)b->n_ops);
  dy_type t = x->p->vars[in]->type;
  if (t.rank >= DY_MAX_DIMS)
    return;
  memmove(t.shape + 1, t.shape, sizeof(int64_t) * (size_t)t.rank);
  t.shape[0] = 0;
  t.rank++;
  ex_var(x, b, nm, PD_LOD_TENSOR, &t);
  ex_arg(x, op, true, "XShape", nm);
}

static const char *const same_name_unary[] = {
    "relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "reciprocal", "abs", "log", "silu",
    "erf", "sin", "cos", "softsign", "hard_swish"};

static dy_status ex_one(ex_ctx *x, PdBlock *b, const dy_op *o) {
  const char *k = dy_op_name(o->kind);
  const char *in0 = o->n_inputs ? vname(x, o->inputs[0]) : NULL, *out = vname(x, o->outputs[0]);
  const dy_type *t0 = o->n_inputs ? &x->p->vars[o->inputs[0]]->type : NULL;
  PdOp *op;
#define FAIL(...) dy_error_at(x->err, o, DY_STATUS_UNSUPPORTED, __VA_ARGS__)
  for (size_t i = 0; i < sizeof same_name_unary / sizeof *same_name_unary; i++)
    if (strcmp(k, same_name_unary[i]) == 0) {
      op = ex_xo(x, b, k, in0, out);
      if (o->kind == DY_OP_HARD_SWISH) {
        at_f(x, op, "threshold", 6), at_f(x, op, "scale", 6), at_f(x, op, "offset", 3);
      }
      return DY_OK;
    }
  static const struct {
    dy_op_kind kind;
    const char *pd;
  } binaries[] = {{DY_OP_ADD, "elementwise_add"}, {DY_OP_SUB, "elementwise_sub"},
                  {DY_OP_MUL, "elementwise_mul"}, {DY_OP_DIV, "elementwise_div"},
                  {DY_OP_POW, "elementwise_pow"}, {DY_OP_MAXIMUM, "elementwise_max"},
                  {DY_OP_MINIMUM, "elementwise_min"}, {DY_OP_EQUAL, "equal"},
                  {DY_OP_GREATER, "greater_than"}, {DY_OP_LESS, "less_than"}};
  for (size_t i = 0; i < sizeof binaries / sizeof *binaries; i++)
    if (o->kind == binaries[i].kind) {
      op = ex_op(x, b, binaries[i].pd);
      ex_arg(x, op, false, "X", in0);
      ex_arg(x, op, false, "Y", vname(x, o->inputs[1]));
      ex_arg(x, op, true, "Out", out);
      at_i(x, op, "axis", -1);
      return DY_OK;
    }
  switch (o->kind) {
  case DY_OP_MATMUL: {
    const dy_matmul_attrs m = dy_matmul_attrs_get(o);
    if (t0->rank < 2 || x->p->vars[o->inputs[1]]->type.rank < 2)
      return FAIL("export to Paddle: matmul of a 1-D operand");
    op = ex_op(x, b, "matmul_v2");
    ex_arg(x, op, false, "X", in0);
    ex_arg(x, op, false, "Y", vname(x, o->inputs[1]));
    ex_arg(x, op, true, "Out", out);
    at_b(x, op, "trans_x", m.transpose_x), at_b(x, op, "trans_y", m.transpose_y);
    return DY_OK;
  }
  case DY_OP_CONV2D:
  case DY_OP_CONV2D_TRANSPOSE: {
    bool tr = o->kind == DY_OP_CONV2D_TRANSPOSE;
    /* the two ops' first four attributes are the same */
    const dy_conv2d_transpose_attrs ca = tr ? dy_conv2d_transpose_attrs_get(o)
                                            : (dy_conv2d_transpose_attrs){0};
    const dy_conv2d_attrs cv = tr ? (dy_conv2d_attrs){0} : dy_conv2d_attrs_get(o);
    const int64_t *st = tr ? ca.strides : cv.strides, *pd = tr ? ca.paddings : cv.paddings;
    const int64_t *dl = tr ? ca.dilations : cv.dilations;
    int n_st = tr ? ca.n_strides : cv.n_strides, n_pd = tr ? ca.n_paddings : cv.n_paddings;
    int n_dl = tr ? ca.n_dilations : cv.n_dilations;
    op = ex_op(x, b, tr ? "conv2d_transpose" : "conv2d");
    ex_arg(x, op, false, "Input", in0);
    ex_arg(x, op, false, "Filter", vname(x, o->inputs[1]));
    ex_arg(x, op, true, "Output", out);
    int64_t pads[4];
    int np = ex_pads(pd, n_pd, pads);
    at_ints(x, op, "paddings", pads, np);
    at_ints(x, op, "strides", st, n_st);
    at_ints(x, op, "dilations", dl, n_dl);
    at_i(x, op, "groups", tr ? ca.groups : cv.groups);
    if (tr && ca.n_output_padding)
      at_ints(x, op, "output_padding", ca.output_padding, ca.n_output_padding);
    at_s(x, op, "padding_algorithm", "EXPLICIT"), at_s(x, op, "data_format", "NCHW");
    return DY_OK;
  }
  case DY_OP_POOL2D: {
    const dy_pool2d_attrs pa = dy_pool2d_attrs_get(o);
    op = ex_xo(x, b, "pool2d", in0, out);
    int64_t pads[4];
    int np = ex_pads(pa.paddings, pa.n_paddings, pads);
    at_s(x, op, "pooling_type", pa.pooling_type);
    at_ints(x, op, "ksize", pa.ksize, pa.n_ksize);
    at_ints(x, op, "strides", pa.strides, pa.n_strides);
    at_ints(x, op, "paddings", pads, np);
    at_b(x, op, "ceil_mode", pa.ceil_mode), at_b(x, op, "exclusive", pa.exclusive);
    at_b(x, op, "global_pooling", pa.global_pooling), at_b(x, op, "adaptive", pa.adaptive);
    at_s(x, op, "padding_algorithm", "EXPLICIT"), at_s(x, op, "data_format", "NCHW");
    return DY_OK;
  }
  case DY_OP_BATCH_NORM: {
    const dy_batch_norm_attrs ba = dy_batch_norm_attrs_get(o);
    if (!ba.is_test)
      return FAIL("export to Paddle: batch_norm in train mode (save the model in eval mode)");
    op = ex_op(x, b, "batch_norm");
    static const char *const slots[5] = {"X", "Scale", "Bias", "Mean", "Variance"};
    for (int i = 0; i < 5; i++)
      ex_arg(x, op, false, slots[i], vname(x, o->inputs[i]));
    ex_arg(x, op, true, "Y", out);
    ex_arg(x, op, true, "MeanOut", vname(x, o->inputs[3]));
    ex_arg(x, op, true, "VarianceOut", vname(x, o->inputs[4]));
    at_f(x, op, "epsilon", ba.epsilon), at_f(x, op, "momentum", ba.momentum);
    at_b(x, op, "is_test", true), at_s(x, op, "data_layout", "NCHW");
    return DY_OK;
  }
  case DY_OP_LAYER_NORM:
  case DY_OP_GROUP_NORM: {
    bool ln = o->kind == DY_OP_LAYER_NORM;
    const dy_layer_norm_attrs la = ln ? dy_layer_norm_attrs_get(o) : (dy_layer_norm_attrs){0};
    const dy_group_norm_attrs ga = ln ? (dy_group_norm_attrs){0} : dy_group_norm_attrs_get(o);
    if (ln && la.begin_norm_axis < 0)
      return FAIL("export to Paddle: layer_norm with a negative begin_norm_axis");
    op = ex_op(x, b, k);
    ex_arg(x, op, false, "X", in0);
    ex_arg(x, op, false, "Scale", vname(x, o->inputs[1]));
    ex_arg(x, op, false, "Bias", vname(x, o->inputs[2]));
    ex_arg(x, op, true, "Y", out);
    at_f(x, op, "epsilon", ln ? la.epsilon : ga.epsilon);
    if (ln)
      at_i(x, op, "begin_norm_axis", la.begin_norm_axis);
    else
      at_i(x, op, "groups", ga.groups), at_s(x, op, "data_layout", "NCHW");
    return DY_OK;
  }
  case DY_OP_DROPOUT: {
    const dy_dropout_attrs da = dy_dropout_attrs_get(o);
    if (!da.is_test)
      return FAIL("export to Paddle: dropout in train mode (save the model in eval mode)");
    op = ex_xo(x, b, "dropout", in0, out);
    at_f(x, op, "dropout_prob", da.p), at_b(x, op, "is_test", true);
    at_s(x, op, "dropout_implementation", "upscale_in_train");
    return DY_OK;
  }
  case DY_OP_FULL: {
    const dy_full_attrs fa = dy_full_attrs_get(o);
    op = ex_op(x, b, "fill_constant");
    ex_arg(x, op, true, "Out", out);
    at_ints(x, op, "shape", fa.shape, fa.n_shape);
    at_f(x, op, "value", fa.value);
    char sv[64];
    snprintf(sv, sizeof sv, "%.17g", fa.value);
    at_s(x, op, "str_value", sv);
    at_i(x, op, "dtype", pd_type_of((dy_dtype)fa.dtype));
    return DY_OK;
  }
  case DY_OP_RESHAPE:
    op = ex_xo(x, b, "reshape2", in0, out);
    ex_xshape(x, b, op, o->inputs[0]);
    at_ints(x, op, "shape", dy_reshape_attrs_get(o).shape, dy_reshape_attrs_get(o).n_shape);
    return DY_OK;
  case DY_OP_TRANSPOSE:
    op = ex_xo(x, b, "transpose2", in0, out);
    ex_xshape(x, b, op, o->inputs[0]);
    at_ints(x, op, "axis", dy_transpose_attrs_get(o).perm, dy_transpose_attrs_get(o).n_perm);
    return DY_OK;
  case DY_OP_SQUEEZE:
    op = ex_xo(x, b, "squeeze2", in0, out);
    ex_xshape(x, b, op, o->inputs[0]);
    at_ints(x, op, "axes", dy_squeeze_attrs_get(o).axes, dy_squeeze_attrs_get(o).n_axes);
    return DY_OK;
  case DY_OP_UNSQUEEZE: {
    const dy_unsqueeze_attrs ua = dy_unsqueeze_attrs_get(o);
    /* Paddle inserts one at a time: ascending output positions agree */
    for (int i = 1; i < ua.n_axes; i++)
      if (ua.axes[i] < ua.axes[i - 1])
        return FAIL("export to Paddle: unsqueeze axes not in ascending order");
    op = ex_xo(x, b, "unsqueeze2", in0, out);
    ex_xshape(x, b, op, o->inputs[0]);
    at_ints(x, op, "axes", ua.axes, ua.n_axes);
    return DY_OK;
  }
  case DY_OP_FLATTEN: {
    const dy_flatten_attrs fa = dy_flatten_attrs_get(o);
    op = ex_xo(x, b, "flatten_contiguous_range", in0, out);
    ex_xshape(x, b, op, o->inputs[0]);
    at_i(x, op, "start_axis", fa.start_axis), at_i(x, op, "stop_axis", fa.stop_axis);
    return DY_OK;
  }
  case DY_OP_SLICE: {
    const dy_slice_attrs sa = dy_slice_attrs_get(o);
    for (int i = 0; i < sa.n_steps; i++)
      if (sa.steps[i] != 1)
        return FAIL("export to Paddle: slice with a step other than 1");
    op = ex_op(x, b, "slice");
    ex_arg(x, op, false, "Input", in0);
    ex_arg(x, op, true, "Out", out);
    at_ints(x, op, "axes", sa.axes, sa.n_axes);
    at_ints(x, op, "starts", sa.starts, sa.n_starts);
    at_ints(x, op, "ends", sa.ends, sa.n_ends);
    at_ints(x, op, "decrease_axis", NULL, 0);
    return DY_OK;
  }
  case DY_OP_CONCAT:
    if (o->n_inputs < 2)
      return FAIL("export to Paddle: concat of one input");
    op = ex_op(x, b, "concat");
    for (int i = 0; i < o->n_inputs; i++)
      ex_arg(x, op, false, "X", vname(x, o->inputs[i]));
    ex_arg(x, op, true, "Out", out);
    at_i(x, op, "axis", dy_concat_attrs_get(o).axis);
    return DY_OK;
  case DY_OP_GATHER: {
    const dy_type *it = &x->p->vars[o->inputs[1]]->type;
    if (it->rank != 1)
      return FAIL("export to Paddle: gather with an index of rank %d (Paddle's is 1-D)",
                  it->rank);
    op = ex_xo(x, b, "gather", in0, out);
    ex_arg(x, op, false, "Index", vname(x, o->inputs[1]));
    at_i(x, op, "axis", dy_gather_attrs_get(o).axis);
    return DY_OK;
  }
  case DY_OP_REDUCE_SUM:
  case DY_OP_REDUCE_MEAN:
  case DY_OP_REDUCE_MAX:
  case DY_OP_REDUCE_MIN: {
    /* the four share one schema: axes, keepdim */
    const dy_reduce_sum_attrs ra = dy_reduce_sum_attrs_get(o);
    if (!ra.n_axes && !t0->rank)
      return FAIL("export to Paddle: a reduction of a rank-0 tensor");
    int64_t all[DY_MAX_DIMS];
    for (int i = 0; i < t0->rank; i++)
      all[i] = i;
    op = ex_xo(x, b, k, in0, out);
    at_ints(x, op, "dim", ra.n_axes ? ra.axes : all, ra.n_axes ? ra.n_axes : t0->rank);
    at_b(x, op, "keep_dim", ra.keepdim), at_b(x, op, "reduce_all", false);
    return DY_OK;
  }
  case DY_OP_ARGMAX:
    op = ex_xo(x, b, "arg_max", in0, out);
    at_i(x, op, "axis", dy_argmax_attrs_get(o).axis);
    at_b(x, op, "keepdims", dy_argmax_attrs_get(o).keepdim);
    at_b(x, op, "flatten", false), at_i(x, op, "dtype", PD_INT64);
    return DY_OK;
  case DY_OP_CAST:
    op = ex_xo(x, b, "cast", in0, out);
    at_i(x, op, "in_dtype", pd_type_of(t0->dtype));
    at_i(x, op, "out_dtype", pd_type_of((dy_dtype)dy_cast_attrs_get(o).dtype));
    return DY_OK;
  case DY_OP_WHERE:
    op = ex_op(x, b, "where");
    ex_arg(x, op, false, "Condition", in0);
    ex_arg(x, op, false, "X", vname(x, o->inputs[1]));
    ex_arg(x, op, false, "Y", vname(x, o->inputs[2]));
    ex_arg(x, op, true, "Out", out);
    return DY_OK;
  case DY_OP_TILE:
    op = ex_xo(x, b, "tile", in0, out);
    at_ints(x, op, "repeat_times", dy_tile_attrs_get(o).repeat_times,
            dy_tile_attrs_get(o).n_repeat_times);
    return DY_OK;
  case DY_OP_SOFTMAX:
    op = ex_xo(x, b, k, in0, out);
    at_i(x, op, "axis", dy_softmax_attrs_get(o).axis);
    return DY_OK;
  case DY_OP_LOG_SOFTMAX:
    op = ex_xo(x, b, k, in0, out);
    at_i(x, op, "axis", dy_log_softmax_attrs_get(o).axis);
    return DY_OK;
  case DY_OP_SCALE: {
    const dy_scale_attrs sa = dy_scale_attrs_get(o);
    op = ex_xo(x, b, "scale", in0, out);
    at_f(x, op, "scale", sa.scale), at_f(x, op, "bias", sa.bias);
    at_b(x, op, "bias_after_scale", sa.bias_after_scale);
    return DY_OK;
  }
  case DY_OP_CLIP:
    op = ex_xo(x, b, "clip", in0, out);
    at_f(x, op, "min", dy_clip_attrs_get(o).min), at_f(x, op, "max", dy_clip_attrs_get(o).max);
    return DY_OK;
  case DY_OP_HARD_SIGMOID:
    op = ex_xo(x, b, "hard_sigmoid", in0, out);
    at_f(x, op, "slope", dy_hard_sigmoid_attrs_get(o).slope);
    at_f(x, op, "offset", dy_hard_sigmoid_attrs_get(o).offset);
    return DY_OK;
  case DY_OP_LEAKY_RELU:
    op = ex_xo(x, b, "leaky_relu", in0, out);
    at_f(x, op, "alpha", dy_leaky_relu_attrs_get(o).alpha);
    return DY_OK;
  case DY_OP_GELU:
    op = ex_xo(x, b, "gelu", in0, out);
    at_b(x, op, "approximate", dy_gelu_attrs_get(o).approximate);
    return DY_OK;
  default:
    return FAIL("export to Paddle: the op %s has no Paddle counterpart here", k);
  }
#undef FAIL
}

/* ---- the params stream ---- */

typedef struct {
  uint8_t *b;
  size_t n, cap;
  bool oom;
} wbuf;

static void w_put(wbuf *w, const void *p, size_t n) {
  if (w->oom)
    return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->n + n)
      cap *= 2;
    uint8_t *nb = realloc(w->b, cap);
    if (!nb) {
      w->oom = true;
      return;
    }
    w->b = nb;
    w->cap = cap;
  }
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void w_u32(wbuf *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  w_put(w, b, 4);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp((*(const dy_var *const *)a)->name, (*(const dy_var *const *)b)->name);
}

static dy_status write_params(ex_ctx *x, wbuf *w) {
  const dy_program *p = x->p;
  const dy_var **pv = malloc(sizeof *pv * (size_t)(p->n_vars + 1));
  if (!pv)
    return dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int n = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->persistable)
      pv[n++] = p->vars[i];
  qsort(pv, (size_t)n, sizeof *pv, cmp_names);
  for (int i = 0; i < n; i++) {
    const dy_var *v = pv[i];
    PdTensorDesc *td = ex_tdesc(x, &v->type);
    if (!td)
      break;
    size_t len = protobuf_c_message_get_packed_size(&td->base);
    uint8_t *tb = ex_alloc(x, len);
    if (!tb)
      break;
    protobuf_c_message_pack(&td->base, tb);
    w_u32(w, 0);            /* version */
    w_u32(w, 0), w_u32(w, 0); /* u64 LoD level count: 0 */
    w_u32(w, 0);            /* tensor version */
    w_u32(w, (uint32_t)len);
    w_put(w, tb, len);
    w_put(w, v->data, (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype));
  }
  free(pv);
  return x->oom || w->oom ? dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

/* ---- the whole model ---- */

static dy_status build(ex_ctx *x, PdProgram *prog, PdBlock *b) {
  const dy_program *p = x->p;
  if (p->n_blocks > 1)
    return dy_error_set(x->err, DY_STATUS_UNSUPPORTED, "export to Paddle: the Program has "
                        "control flow (sub-blocks), which the exporter does not write yet");
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->type.dtype >= DY_DTYPE_COUNT)
      return dy_error_set(x->err, DY_STATUS_UNSUPPORTED, "export to Paddle: var '%s'",
                          p->vars[i]->name);
  ex_var(x, b, "feed", PD_FEED_MINIBATCH, NULL)->persistable = true;
  ex_var(x, b, "fetch", PD_FETCH_LIST, NULL)->persistable = true;
  for (int i = 0; i < p->n_vars && !x->oom; i++) {
    const dy_var *v = p->vars[i];
    PdVar *d = ex_var(x, b, v->name, PD_LOD_TENSOR, &v->type);
    if (d && v->persistable) {
      d->has_persistable = d->persistable = true;
      d->has_stop_gradient = true;
      d->stop_gradient = !v->trainable;
    }
    if (d && v->feed_index >= 0)
      d->has_need_check_feed = d->need_check_feed = true;
  }
  for (int i = 0; i < p->n_feeds; i++) {
    PdOp *op = ex_op(x, b, "feed");
    ex_arg(x, op, false, "X", "feed");
    ex_arg(x, op, true, "Out", p->vars[p->feeds[i]]->name);
    at_i(x, op, "col", i);
  }
  const dy_block *blk = p->blocks[0];
  for (int i = 0; i < blk->n_ops; i++) {
    const dy_op *o = blk->ops[i];
    if (o->n_outputs != 1 || dy_op_has(o, DY_OPF_FUSED | DY_OPF_INPLACE))
      return dy_error_at(x->err, o, DY_STATUS_UNSUPPORTED, "export to Paddle: the op %s has "
                         "no Paddle counterpart here", dy_op_name(o->kind));
    PD_TRY(ex_one(x, b, o));
  }
  for (int i = 0; i < p->n_fetches; i++) {
    PdOp *op = ex_op(x, b, "fetch");
    ex_arg(x, op, false, "X", p->vars[p->fetches[i]]->name);
    ex_arg(x, op, true, "Out", "fetch");
    at_i(x, op, "col", i);
  }
  Paddle__Framework__Proto__Version *ver = ex_alloc(x, sizeof *ver);
  if (ver) {
    paddle__framework__proto__version__init(ver);
    ver->has_version = true;
    ver->version = 2004000; /* the ProgramDesc layout of Paddle 2.x */
    prog->version = ver;
  }
  return x->oom ? dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

dy_status dy_paddle_save_mem(const dy_program *p, uint8_t **model, size_t *model_n,
                             uint8_t **params, size_t *params_n, dy_error *err) {
  *model = *params = NULL;
  *model_n = *params_n = 0;
  ex_ctx x = {.err = err, .p = p};
  PdProgram prog;
  PdBlock *b = ex_alloc(&x, sizeof *b);
  paddle__framework__proto__program_desc__init(&prog);
  dy_status s = b ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s) {
    paddle__framework__proto__block_desc__init(b);
    b->has_idx = b->has_parent_idx = true;
    b->idx = 0;
    b->parent_idx = -1;
    ex_push(&x, &prog.n_blocks, (void ***)&prog.blocks, b);
    s = build(&x, &prog, b);
  }
  wbuf w = {0};
  if (!s)
    s = write_params(&x, &w);
  if (!s) {
    size_t n = paddle__framework__proto__program_desc__get_packed_size(&prog);
    *model = malloc(n ? n : 1);
    if (!*model)
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    else
      *model_n = paddle__framework__proto__program_desc__pack(&prog, *model);
  }
  for (size_t i = 0; i < x.n; i++)
    free(x.ptrs[i]);
  free(x.ptrs);
  if (s) {
    free(*model);
    free(w.b);
    *model = NULL;
    *model_n = 0;
    return s;
  }
  *params = w.b ? w.b : malloc(1);
  *params_n = w.n;
  return *params ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
}

dy_status dy_paddle_save(const dy_program *p, const char *prefix, dy_error *err) {
  uint8_t *m, *pa;
  size_t mn, pn;
  PD_TRY(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, err));
  char mp[4200], pp[4200];
  snprintf(mp, sizeof mp, "%s.pdmodel", prefix);
  snprintf(pp, sizeof pp, "%s.pdiparams", prefix);
  /* params first: a model file never names params that are not there */
  dy_status s = dy_write_file_atomic(pp, pa, pn, err);
  if (!s && (s = dy_write_file_atomic(mp, m, mn, err)))
    remove(pp);
  free(m);
  free(pa);
  return s;
}
