/* paddle_nn.c - Paddle's convolution, pooling and normalisation ops,
 * both ways: each importer (an OpDesc onto the op table, with Paddle's
 * semantics) beside the exporter that writes the op back as that OpDesc.
 *
 *   conv2d (+ depthwise, transpose)
 *                      paddings [h, w] or [top, bottom, left, right];
 *                      padding_algorithm SAME (dilation 1, pads from the
 *                      input size) / VALID / EXPLICIT; data_format NHWC
 *                      is a transpose around an NCHW conv (the filter is
 *                      OIHW either way); conv2d_transpose's output_size
 *                      becomes output_padding
 *   pool2d             global / adaptive / windows, exclusive, ceil_mode
 *   batch_norm         inference (is_test); NHWC a transpose around it
 *   layer_norm         absent Scale / Bias are ones / zeros
 *   group_norm         NCHW
 *   dropout            downgrade_in_infer: x * (1 - p); upscale_in_train:
 *                      dropout in eval mode (the identity)
 *
 * The exporter writes paddings in Paddle's order, padding_algorithm
 * EXPLICIT and data_format NCHW; batch norm and dropout only in eval mode.
 */
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* convolution                                                         */
/* ------------------------------------------------------------------ */

/* Paddle's paddings (2: [h, w]; 4: [top, bottom, left, right]) with
 * padding_algorithm, into dy's [top, left, bottom, right]. For SAME the
 * input's plane and the kernel give the pads (and dilation becomes 1). */
static dy_status conv_pads(pd_ctx *c, const dy_type *x, const int64_t *k, const int64_t *s,
                           int64_t *dil, int64_t pads[4]) {
  int64_t p[4] = {0, 0, 0, 0};
  int n = pd_attr_len(c, "paddings");
  if (n != -1 && n != 2 && n != 4)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "paddings of length %d, expected 2 or 4", n);
  pd_attr_ints(c, "paddings", p, 4);
  char alg[16];
  pd_attr_s(c, "padding_algorithm", "EXPLICIT", alg, sizeof alg);
  if (strcmp(alg, "VALID") == 0) {
    memset(pads, 0, 4 * sizeof *pads);
    return DY_OK;
  }
  if (strcmp(alg, "SAME") == 0) {
    for (int d = 0; d < 2; d++) {
      if (x->shape[2 + d] < 0)
        return pd_fail(c, DY_STATUS_UNSUPPORTED, "padding_algorithm SAME needs a static plane");
      int64_t in = x->shape[2 + d], out = (in + s[d] - 1) / s[d];
      int64_t total = (out - 1) * s[d] + k[d] - in;
      if (total < 0)
        total = 0;
      pads[d] = total / 2;
      pads[2 + d] = total - total / 2;
      dil[d] = 1;
    }
    return DY_OK;
  }
  if (strcmp(alg, "EXPLICIT"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "padding_algorithm '%s'", alg);
  if (n == 2 || n < 0) {
    pads[0] = pads[2] = n < 0 ? 0 : p[0];
    pads[1] = pads[3] = n < 0 ? 0 : p[1];
  } else if (n == 4) {
    pads[0] = p[0];
    pads[2] = p[1];
    pads[1] = p[2];
    pads[3] = p[3];
  } else {
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "paddings of length %d", n);
  }
  return DY_OK;
}

/* dy's paddings in their short form [h, w] when top = bottom and left =
 * right: the count (2 or 4). */
static int canon_pads(int64_t pads[4]) {
  if (pads[0] != pads[2] || pads[1] != pads[3])
    return 4;
  return 2;
}

static dy_status map_conv_any(pd_ctx *c, bool transposed) {
  int x, w, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  PD_TRY(pd_in(c, "Filter", 0, &w));
  if (pd_arg(c, false, "Bias", 0) || pd_arg(c, false, "ResidualData", 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "a fused Bias / ResidualData input");
  const char *on = pd_out_name(c, "Output");
  bool nhwc = pd_is_nhwc(c, "data_format");
  if (pd_type(c, x)->rank != 4 || pd_type(c, w)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D convolution of rank-4 tensors");
  if (nhwc)
    PD_TRY(pd_transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
  int64_t s[2] = {1, 1}, d[2] = {1, 1}, pads[4];
  PD_TRY(pd_attr_pair(c, "strides", s));
  PD_TRY(pd_attr_pair(c, "dilations", d));
  int64_t groups = pd_attr_i(c, "groups", 1);
  const dy_type *wt = pd_type(c, w);
  int64_t k[2] = {d[0] * (wt->shape[2] - 1) + 1, d[1] * (wt->shape[3] - 1) + 1};
  PD_TRY(conv_pads(c, pd_type(c, x), k, s, d, pads));
  /* conv2d's attributes, conv2d_transpose's output_padding when given */
  dy_conv2d_transpose_attrs ca = {
      .given = DY_GIVEN_ALL & ~DY_GIVEN(conv2d_transpose, output_padding), .strides = s,
      .n_strides = 2, .paddings = pads, .n_paddings = canon_pads(pads), .dilations = d,
      .n_dilations = 2, .groups = groups};
  int64_t op[2] = {0, 0};
  if (transposed) {
    int64_t os[2];
    int n = pd_attr_len(c, "output_padding");
    if (n > 0 && n != 2)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "output_padding of length %d, expected 2", n);
    pd_attr_ints(c, "output_padding", op, 2);
    int m = pd_attr_ints(c, "output_size", os, 2);
    if (m == 2) {
      const dy_type *xt = pd_type(c, x);
      for (int i = 0; i < 2; i++) {
        if (xt->shape[2 + i] < 0)
          return pd_fail(c, DY_STATUS_UNSUPPORTED, "output_size needs a static plane");
        int64_t natural = (xt->shape[2 + i] - 1) * s[i] - pads[i] - pads[2 + i] +
                          d[i] * (wt->shape[2 + i] - 1) + 1;
        op[i] = os[i] - natural;
        if (op[i] < 0 || op[i] >= (s[i] > d[i] ? s[i] : d[i]))
          return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "output_size %lld does not fit "
                         "(natural size %lld)", (long long)os[i], (long long)natural);
      }
      n = 2;
    }
    if (n == 2) {
      ca.given |= DY_GIVEN(conv2d_transpose, output_padding);
      ca.output_padding = op, ca.n_output_padding = 2;
    }
  }
  dy_attr a[DY_CONV2D_TRANSPOSE_NATTRS];
  int na = dy_conv2d_transpose_attrs_put(&ca, a);
  PD_TRY(pd_op(c, transposed ? "conv2d_transpose" : "conv2d", (int[]){x, w}, 2, a, na,
               nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

dy_status pd_import_conv2d(pd_ctx *c) { return map_conv_any(c, false); }
dy_status pd_import_conv2d_transpose(pd_ctx *c) { return map_conv_any(c, true); }

/* conv2d and conv2d_transpose (the two ops' first four attributes are the
 * same). */
dy_status pd_export_conv2d(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  bool tr = o->kind == DY_OP_CONV2D_TRANSPOSE;
  const dy_conv2d_transpose_attrs ca = tr ? dy_conv2d_transpose_attrs_get(o)
                                          : (dy_conv2d_transpose_attrs){0};
  const dy_conv2d_attrs cv = tr ? (dy_conv2d_attrs){0} : dy_conv2d_attrs_get(o);
  const int64_t *st = tr ? ca.strides : cv.strides, *pd = tr ? ca.paddings : cv.paddings;
  const int64_t *dl = tr ? ca.dilations : cv.dilations;
  int n_st = tr ? ca.n_strides : cv.n_strides, n_pd = tr ? ca.n_paddings : cv.n_paddings;
  int n_dl = tr ? ca.n_dilations : cv.n_dilations;
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, false, "Input", pdx_vname(x, o->inputs[0]));
  pdx_arg(x, op, false, "Filter", pdx_vname(x, o->inputs[1]));
  pdx_arg(x, op, true, "Output", pdx_vname(x, o->outputs[0]));
  int64_t pads[4];
  int np = pdx_pads(pd, n_pd, pads);
  pdx_at_ints(x, op, "paddings", pads, np);
  pdx_at_ints(x, op, "strides", st, n_st);
  pdx_at_ints(x, op, "dilations", dl, n_dl);
  pdx_at_i(x, op, "groups", tr ? ca.groups : cv.groups);
  if (tr && ca.n_output_padding)
    pdx_at_ints(x, op, "output_padding", ca.output_padding, ca.n_output_padding);
  pdx_at_s(x, op, "padding_algorithm", "EXPLICIT"), pdx_at_s(x, op, "data_format", "NCHW");
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pooling                                                             */
/* ------------------------------------------------------------------ */

dy_status pd_import_pool2d(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  const char *on = pd_out_name(c, "Out");
  bool nhwc = pd_is_nhwc(c, "data_format");
  if (pd_type(c, x)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D pooling of rank-4 tensors");
  if (nhwc)
    PD_TRY(pd_transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
  char type[16];
  pd_attr_s(c, "pooling_type", "max", type, sizeof type);
  if (strcmp(type, "max") && strcmp(type, "avg"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "pooling_type '%s'", type);
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, dil[2] = {1, 1}, pads[4];
  PD_TRY(pd_attr_pair(c, "ksize", k));
  PD_TRY(pd_attr_pair(c, "strides", s));
  bool global = pd_attr_b(c, "global_pooling", false), adaptive = pd_attr_b(c, "adaptive", false);
  PD_TRY(conv_pads(c, pd_type(c, x), k, s, dil, pads));
  if (global)
    memset(pads, 0, sizeof pads);
  dy_attr a[DY_POOL2D_NATTRS];
  int n_a = dy_pool2d_attrs_put(&(dy_pool2d_attrs){
      .given = DY_GIVEN_ALL, .pooling_type = type, .ksize = k, .n_ksize = 2,
      .strides = s, .n_strides = 2, .paddings = pads, .n_paddings = canon_pads(pads),
      .ceil_mode = pd_attr_b(c, "ceil_mode", false), .exclusive = pd_attr_b(c, "exclusive", true),
      .global_pooling = global, .adaptive = adaptive}, a);
  PD_TRY(pd_op(c, "pool2d", &x, 1, a, n_a, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

dy_status pd_export_pool2d(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_pool2d_attrs pa = dy_pool2d_attrs_get(o);
  PdOp *op = pdx_xo(x, b, d->type, pdx_vname(x, o->inputs[0]), pdx_vname(x, o->outputs[0]));
  int64_t pads[4];
  int np = pdx_pads(pa.paddings, pa.n_paddings, pads);
  pdx_at_s(x, op, "pooling_type", pa.pooling_type);
  pdx_at_ints(x, op, "ksize", pa.ksize, pa.n_ksize);
  pdx_at_ints(x, op, "strides", pa.strides, pa.n_strides);
  pdx_at_ints(x, op, "paddings", pads, np);
  pdx_at_b(x, op, "ceil_mode", pa.ceil_mode), pdx_at_b(x, op, "exclusive", pa.exclusive);
  pdx_at_b(x, op, "global_pooling", pa.global_pooling), pdx_at_b(x, op, "adaptive", pa.adaptive);
  pdx_at_s(x, op, "padding_algorithm", "EXPLICIT"), pdx_at_s(x, op, "data_format", "NCHW");
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* normalisation, dropout                                              */
/* ------------------------------------------------------------------ */

dy_status pd_import_batch_norm(pd_ctx *c) {
  int in[5], o;
  static const char *const slots[5] = {"X", "Scale", "Bias", "Mean", "Variance"};
  for (int i = 0; i < 5; i++)
    PD_TRY(pd_in(c, slots[i], 0, &in[i]));
  bool nhwc = pd_is_nhwc(c, "data_layout");
  int r = pd_type(c, in[0])->rank;
  const char *on = pd_out_name(c, "Y");
  if (nhwc && r != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_layout NHWC of rank %d", r);
  if (nhwc)
    PD_TRY(pd_transpose(c, in[0], 4, (int64_t[]){0, 3, 1, 2}, NULL, &in[0]));
  dy_attr a[DY_BATCH_NORM_NATTRS];
  int n_a = dy_batch_norm_attrs_put(&(dy_batch_norm_attrs){
      .given = DY_GIVEN(batch_norm, epsilon) | DY_GIVEN(batch_norm, is_test),
      .epsilon = pd_attr_f(c, "epsilon", 1e-5), .is_test = 1}, a);
  PD_TRY(pd_op(c, "batch_norm", in, 5, a, n_a, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

dy_status pd_export_batch_norm(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_batch_norm_attrs ba = dy_batch_norm_attrs_get(o);
  if (!ba.is_test)
    return pdx_unsupported(x, o, "batch_norm in train mode (save the model in eval mode)");
  PdOp *op = pdx_op(x, b, d->type);
  static const char *const slots[5] = {"X", "Scale", "Bias", "Mean", "Variance"};
  for (int i = 0; i < 5; i++)
    pdx_arg(x, op, false, slots[i], pdx_vname(x, o->inputs[i]));
  pdx_arg(x, op, true, "Y", pdx_vname(x, o->outputs[0]));
  pdx_arg(x, op, true, "MeanOut", pdx_vname(x, o->inputs[3]));
  pdx_arg(x, op, true, "VarianceOut", pdx_vname(x, o->inputs[4]));
  pdx_at_f(x, op, "epsilon", ba.epsilon), pdx_at_f(x, op, "momentum", ba.momentum);
  pdx_at_b(x, op, "is_test", true), pdx_at_s(x, op, "data_layout", "NCHW");
  return DY_OK;
}

dy_status pd_import_layer_norm(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "X", 0, &in[0]));
  PD_TRY(pd_in_opt(c, "Scale", 0, &in[1]));
  PD_TRY(pd_in_opt(c, "Bias", 0, &in[2]));
  const dy_type *t = pd_type(c, in[0]);
  int64_t ax = pd_attr_i(c, "begin_norm_axis", 1), cols = 1;
  if (ax < 0 || ax >= t->rank)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "begin_norm_axis %lld", (long long)ax);
  for (int i = (int)ax; i < t->rank; i++)
    cols *= t->shape[i];
  if (cols <= 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "the normalised dims must be static");
  for (int i = 1; i < 3; i++)
    if (in[i] < 0) {
      float *v = malloc((size_t)cols * sizeof *v);
      if (!v)
        return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      for (int64_t j = 0; j < cols; j++)
        v[j] = i == 1 ? 1.0f : 0.0f;
      dy_status s = pd_const(c, DY_F32, 1, &cols, v, NULL, &in[i]);
      free(v);
      PD_TRY(s);
    }
  dy_attr a[DY_LAYER_NORM_NATTRS];
  int n_a = dy_layer_norm_attrs_put(&(dy_layer_norm_attrs){
      .given = DY_GIVEN_ALL, .begin_norm_axis = ax, .epsilon = pd_attr_f(c, "epsilon", 1e-5)}, a);
  return pd_op(c, "layer_norm", in, 3, a, n_a, pd_out_name(c, "Y"), &o);
}

dy_status pd_import_group_norm(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "X", 0, &in[0]));
  PD_TRY(pd_in(c, "Scale", 0, &in[1]));
  PD_TRY(pd_in(c, "Bias", 0, &in[2]));
  if (pd_is_nhwc(c, "data_layout"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_layout NHWC");
  dy_attr a[DY_GROUP_NORM_NATTRS];
  int n_a = dy_group_norm_attrs_put(&(dy_group_norm_attrs){
      .given = DY_GIVEN_ALL, .groups = pd_attr_i(c, "groups", 1),
      .epsilon = pd_attr_f(c, "epsilon", 1e-5)}, a);
  return pd_op(c, "group_norm", in, 3, a, n_a, pd_out_name(c, "Y"), &o);
}

/* layer_norm and group_norm: X, Scale, Bias -> Y. */
dy_status pd_export_norm(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  bool ln = o->kind == DY_OP_LAYER_NORM;
  const dy_layer_norm_attrs la = ln ? dy_layer_norm_attrs_get(o) : (dy_layer_norm_attrs){0};
  const dy_group_norm_attrs ga = ln ? (dy_group_norm_attrs){0} : dy_group_norm_attrs_get(o);
  /* Paddle's begin_norm_axis is in [0, rank): a negative one (the
   * LayerNorm layer's -1, the last dims) counts from the input's rank */
  int64_t axis = la.begin_norm_axis;
  int rank = x->p->vars[o->inputs[0]]->type.rank;
  if (ln && axis < 0)
    axis += rank;
  if (ln && (axis < 0 || axis >= rank))
    return pdx_unsupported(x, o, "layer_norm with begin_norm_axis out of the input's rank");
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, false, "X", pdx_vname(x, o->inputs[0]));
  pdx_arg(x, op, false, "Scale", pdx_vname(x, o->inputs[1]));
  pdx_arg(x, op, false, "Bias", pdx_vname(x, o->inputs[2]));
  pdx_arg(x, op, true, "Y", pdx_vname(x, o->outputs[0]));
  pdx_at_f(x, op, "epsilon", ln ? la.epsilon : ga.epsilon);
  if (ln)
    pdx_at_i(x, op, "begin_norm_axis", axis);
  else
    pdx_at_i(x, op, "groups", ga.groups), pdx_at_s(x, op, "data_layout", "NCHW");
  return DY_OK;
}

dy_status pd_import_dropout(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  char impl[32];
  pd_attr_s(c, "dropout_implementation", "downgrade_in_infer", impl, sizeof impl);
  double p = pd_attr_f(c, "dropout_prob", 0.5);
  if (strcmp(impl, "upscale_in_train") == 0) { /* the identity at inference */
    dy_attr a[DY_DROPOUT_NATTRS];
    int n_a = dy_dropout_attrs_put(&(dy_dropout_attrs){
        .given = DY_GIVEN(dropout, p) | DY_GIVEN(dropout, is_test), .p = p, .is_test = 1}, a);
    return pd_op(c, "dropout", &x, 1, a, n_a, pd_out_name(c, "Out"), &o);
  }
  if (strcmp(impl, "downgrade_in_infer"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "dropout_implementation '%s'", impl);
  /* Paddle computes x * (1 - p) in float */
  return pd_scale(c, x, (double)(float)(1.0 - (double)(float)p), 0, pd_out_name(c, "Out"), &o);
}

dy_status pd_export_dropout(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_dropout_attrs da = dy_dropout_attrs_get(o);
  if (!da.is_test)
    return pdx_unsupported(x, o, "dropout in train mode (save the model in eval mode)");
  PdOp *op = pdx_xo(x, b, d->type, pdx_vname(x, o->inputs[0]), pdx_vname(x, o->outputs[0]));
  pdx_at_f(x, op, "dropout_prob", da.p), pdx_at_b(x, op, "is_test", true);
  pdx_at_s(x, op, "dropout_implementation", "upscale_in_train");
  return DY_OK;
}
