/* paddle_math.c - the Paddle ops with a mapping of their own that are
 * neither convolution-like (paddle_nn.c) nor shapes (paddle_shape.c),
 * both ways where the exporter writes them:
 *
 *   mul                X flattened at x_num_col_dims, Y at y_num_col_dims,
 *                      a matmul, the result shaped X[:xn] + Y[yn:]
 *   matmul (v1)        transpose_X/Y, alpha; a 1-D X is a row, a 1-D Y a
 *                      column, the added dim dropped again
 *   matmul_v2          trans_x/y; exported from matmul (operands of rank
 *                      >= 2)
 *   relu6, swish, pow  clip, silu (beta 1) or x * sigmoid(beta x), x^factor
 *   hard_swish, arg_max  the one-to-one rows' importers' checks
 *   cast               out_dtype (ints widen to int64 as everywhere)
 *   where, assign
 *   fill_constant      full (an integer dtype truncates the value); the
 *                      shape from ShapeTensor(List): paddle_shape_tensor.c
 */
#include <math.h>
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* matrix products                                                     */
/* ------------------------------------------------------------------ */

/* Flatten t to 2-D at col: [prod(dims[:col]), prod(dims[col:])]. */
static dy_status to_matrix(pd_ctx *c, int v, int col, int *out) {
  int r = pd_type(c, v)->rank;
  *out = v;
  if (col < 1 || col >= r)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "num_col_dims %d for a rank-%d input", col, r);
  if (r - col > 1)
    PD_TRY(pd_flatten(c, *out, col, r - 1, NULL, out));
  if (col > 1)
    PD_TRY(pd_flatten(c, *out, 0, col - 1, NULL, out));
  return DY_OK;
}

dy_status pd_import_mul(pd_ctx *c) {
  int x, y, x2, y2, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  int xn = (int)pd_attr_i(c, "x_num_col_dims", 1), yn = (int)pd_attr_i(c, "y_num_col_dims", 1);
  dy_type tx = *pd_type(c, x), ty = *pd_type(c, y);
  PD_TRY(to_matrix(c, x, xn, &x2));
  PD_TRY(to_matrix(c, y, yn, &y2));
  int rank = xn + ty.rank - yn;
  if (rank == 2)
    return pd_binary(c, "matmul", x2, y2, pd_out_name(c, "Out"), &o);
  int64_t shape[DY_MAX_DIMS];
  if (rank > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "result rank %d", rank);
  for (int i = 0; i < xn; i++)
    shape[i] = tx.shape[i] < 0 ? 0 : tx.shape[i];
  for (int i = yn; i < ty.rank; i++)
    shape[xn + i - yn] = ty.shape[i];
  PD_TRY(pd_binary(c, "matmul", x2, y2, NULL, &o));
  return pd_reshape(c, o, rank, shape, pd_out_name(c, "Out"), &o);
}

static dy_status matmul_common(pd_ctx *c, bool tx, bool ty, double alpha) {
  int x, y, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  bool x1 = pd_type(c, x)->rank == 1, y1 = pd_type(c, y)->rank == 1;
  if (x1)
    PD_TRY(pd_unsqueeze(c, x, 1, (int64_t[]){0}, NULL, &x));
  if (y1)
    PD_TRY(pd_unsqueeze(c, y, 1, (int64_t[]){1}, NULL, &y));
  if (x1 && tx)
    tx = false; /* a vector is the same row either way */
  if (y1 && ty)
    ty = false;
  dy_attr a[DY_MATMUL_NATTRS];
  int n_a = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_x = tx, .transpose_y = ty}, a);
  bool more = x1 || y1 || alpha != 1.0;
  PD_TRY(pd_op(c, "matmul", (int[]){x, y}, 2, a, n_a, more ? NULL : pd_out_name(c, "Out"), &o));
  if (x1 || y1) {
    int r = pd_type(c, o)->rank;
    int64_t ax[2];
    int n = 0;
    if (x1)
      ax[n++] = r - 2;
    if (y1)
      ax[n++] = r - 1;
    PD_TRY(pd_squeeze(c, o, n, ax, alpha != 1.0 ? NULL : pd_out_name(c, "Out"), &o));
  }
  if (alpha != 1.0)
    PD_TRY(pd_scale(c, o, alpha, 0, pd_out_name(c, "Out"), &o));
  return DY_OK;
}

dy_status pd_import_matmul(pd_ctx *c) {
  return matmul_common(c, pd_attr_b(c, "transpose_X", false), pd_attr_b(c, "transpose_Y", false),
                       pd_attr_f(c, "alpha", 1.0));
}

dy_status pd_import_matmul_v2(pd_ctx *c) {
  return matmul_common(c, pd_attr_b(c, "trans_x", false), pd_attr_b(c, "trans_y", false), 1.0);
}

dy_status pd_export_matmul(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_matmul_attrs m = dy_matmul_attrs_get(o);
  if (x->p->vars[o->inputs[0]]->type.rank < 2 || x->p->vars[o->inputs[1]]->type.rank < 2)
    return pdx_unsupported(x, o, "matmul of a 1-D operand");
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, false, "X", pdx_vname(x, o->inputs[0]));
  pdx_arg(x, op, false, "Y", pdx_vname(x, o->inputs[1]));
  pdx_arg(x, op, true, "Out", pdx_vname(x, o->outputs[0]));
  pdx_at_b(x, op, "trans_x", m.transpose_x), pdx_at_b(x, op, "trans_y", m.transpose_y);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* activations with a mapping of their own                             */
/* ------------------------------------------------------------------ */

dy_status pd_import_relu6(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  dy_attr a[DY_CLIP_NATTRS];
  int n_a = dy_clip_attrs_put(&(dy_clip_attrs){
      .given = DY_GIVEN_ALL, .min = 0.0, .max = pd_attr_f(c, "threshold", 6.0)}, a);
  return pd_op(c, "clip", &x, 1, a, n_a, pd_out_name(c, "Out"), &o);
}

/* hard_swish: only with the row's constants (threshold 6, scale 6, offset
 * 3: dy's hard_swish), which the exporter writes. */
dy_status pd_import_hard_swish(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  const pd_attr_map *m = c->def->attrs;
  double v[3];
  bool same = true;
  for (int i = 0; i < 3; i++) {
    v[i] = pd_attr_f(c, m[i].pd, m[i].value);
    same &= v[i] == m[i].value;
  }
  if (!same)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "hard_swish with %s %g, %s %g, %s %g (only %g, "
                   "%g, %g)", m[0].pd, v[0], m[1].pd, v[1], m[2].pd, v[2], m[0].value,
                   m[1].value, m[2].value);
  return pd_unary(c, "hard_swish", x, pd_out_name(c, "Out"), &o);
}

dy_status pd_import_swish(pd_ctx *c) {
  int x, o, t;
  PD_TRY(pd_in(c, "X", 0, &x));
  double beta = pd_attr_f(c, "beta", 1.0);
  if (beta == 1.0)
    return pd_unary(c, "silu", x, pd_out_name(c, "Out"), &o);
  PD_TRY(pd_scale(c, x, beta, 0, NULL, &t));
  PD_TRY(pd_unary(c, "sigmoid", t, NULL, &t));
  return pd_binary(c, "mul", x, t, pd_out_name(c, "Out"), &o);
}

dy_status pd_import_pow(pd_ctx *c) {
  int x, f, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "FactorTensor", "factor"));
  PD_TRY(pd_const_f32(c, (float)pd_attr_f(c, "factor", 1.0), &f));
  return pd_binary(c, "pow", x, f, pd_out_name(c, "Out"), &o);
}

/* arg_max: the row's attributes, only without flatten. */
dy_status pd_import_arg_max(pd_ctx *c) {
  int x;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (pd_attr_b(c, "flatten", false))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "arg_max with flatten");
  return pd_import_mapped(c, x);
}

/* ------------------------------------------------------------------ */
/* cast, where, assign, fill_constant                                  */
/* ------------------------------------------------------------------ */

dy_status pd_import_cast(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int t = (int)pd_attr_i(c, "out_dtype", PD_FP32);
  dy_dtype dt;
  if (!pd_dtype_to_dy(t, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "cast to %s", pd_dtype_name(t));
  dy_attr a[DY_CAST_NATTRS];
  int n_a = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = dt}, a);
  return pd_op(c, "cast", &x, 1, a, n_a, pd_out_name(c, "Out"), &o);
}

dy_status pd_export_cast(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  PdOp *op = pdx_xo(x, b, d->type, pdx_vname(x, o->inputs[0]), pdx_vname(x, o->outputs[0]));
  pdx_at_i(x, op, "in_dtype", pdx_dtype(x->p->vars[o->inputs[0]]->type.dtype));
  pdx_at_i(x, op, "out_dtype", pdx_dtype((dy_dtype)dy_cast_attrs_get(o).dtype));
  return DY_OK;
}

dy_status pd_import_where(pd_ctx *c) {
  int in[3], o;
  PD_TRY(pd_in(c, "Condition", 0, &in[0]));
  PD_TRY(pd_in(c, "X", 0, &in[1]));
  PD_TRY(pd_in(c, "Y", 0, &in[2]));
  return pd_op(c, "where", in, 3, NULL, 0, pd_out_name(c, "Out"), &o);
}

dy_status pd_export_where(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, false, "Condition", pdx_vname(x, o->inputs[0]));
  pdx_arg(x, op, false, "X", pdx_vname(x, o->inputs[1]));
  pdx_arg(x, op, false, "Y", pdx_vname(x, o->inputs[2]));
  pdx_arg(x, op, true, "Out", pdx_vname(x, o->outputs[0]));
  return DY_OK;
}

dy_status pd_import_assign(pd_ctx *c) {
  int x;
  PD_TRY(pd_in(c, "X", 0, &x));
  return pd_identity(c, x, "Out");
}

dy_status pd_import_fill_constant(pd_ctx *c) {
  PD_TRY(pd_no_input(c, "ValueTensor", "the value"));
  int64_t shape[DY_MAX_DIMS];
  int elem[DY_MAX_DIMS], n;
  bool run_time = false;
  PD_TRY(pd_tensor_ints(c, "ShapeTensor", "ShapeTensorList", shape, DY_MAX_DIMS, &n, elem));
  for (int i = 0; i < n; i++)
    run_time |= elem[i] >= 0;
  if (n < 0)
    n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS);
  int pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  dy_dtype dt;
  if (n < 0 || !pd_dtype_to_dy(pdt, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "fill_constant of %s", pd_dtype_name(pdt));
  double v = pd_fill_value(c);
  int64_t numel = 0;
  if (!run_time)
    PD_TRY(pd_checked_numel(c, shape, n, "fill_constant's shape", &numel));
  (void)numel; /* the check is the point: full makes the tensor */
  if (dt == DY_I64 && !(fabs(v) < 9e18))
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "value %g does not fit int64", v);
  if (dt == DY_I64)
    v = trunc(v); /* Paddle casts the value: toward zero */
  else if (dt == DY_BOOL)
    v = v != 0;
  else
    v = pd_as_f32(v);
  int o;
  if (run_time)
    return pd_fill_run_time(c, n, shape, elem, dt, v, pd_out_name(c, "Out"), &o);
  if ((dt == DY_I64 || dt == DY_BOOL) && numel <= PD_FOLD_MAX) {
    /* a small integer: a constant, which shape arithmetic folds on */
    int64_t iv[PD_FOLD_MAX];
    uint8_t bv[PD_FOLD_MAX];
    for (int64_t i = 0; i < numel; i++)
      iv[i] = (int64_t)v, bv[i] = v != 0;
    return pd_const(c, dt, n, shape, dt == DY_I64 ? (const void *)iv : bv,
                    pd_out_name(c, "Out"), &o);
  }
  dy_attr a[DY_FULL_NATTRS];
  int n_a = dy_full_attrs_put(&(dy_full_attrs){
      .given = DY_GIVEN_ALL, .shape = shape, .n_shape = n, .value = v, .dtype = dt}, a);
  return pd_op(c, "full", NULL, 0, a, n_a, pd_out_name(c, "Out"), &o);
}

dy_status pd_export_full(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_full_attrs fa = dy_full_attrs_get(o);
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, true, "Out", pdx_vname(x, o->outputs[0]));
  pdx_at_ints(x, op, "shape", fa.shape, fa.n_shape);
  pdx_at_f(x, op, "value", fa.value);
  char sv[64];
  snprintf(sv, sizeof sv, "%.17g", fa.value);
  pdx_at_s(x, op, "str_value", sv);
  pdx_at_i(x, op, "dtype", pdx_dtype((dy_dtype)fa.dtype));
  return DY_OK;
}
