/* paddle_build.c - appending ops to the Program being imported
 * (paddle_internal.h): pd_op checks the mapping against the op's schema,
 * infers the output type and names the output by the SSA rule (a Paddle
 * name written again renames its older holder "<name>@<k>"); pd_set_out,
 * constants, block params; and the small builders every mapper family
 * uses (pd_unary, pd_reshape, pd_slice1, pd_scale, ...).
 *
 * Below the families; calls paddle_desc.c (and common/fe_attrs.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* building ops                                                        */
/* ------------------------------------------------------------------ */

/* A var for the Paddle name `name`: when the name is taken (an in-place
 * op, a redefinition), the older holder becomes "<name>@<k>" (SSA;
 * free_name). */
static void free_name(pd_ctx *c, const char *name) {
  int old = dy_program_find_var(c->p, name);
  if (old < 0)
    return;
  char buf[300];
  do
    snprintf(buf, sizeof buf, "%.250s@%d", name, ++c->n_renamed);
  while (dy_program_find_var(c->p, buf) >= 0);
  c->p->vars[old]->name = dy_program_strdup(c->p, buf);
}

int pd_define(pd_ctx *c, const char *name, const dy_type *t) {
  free_name(c, name);
  return dy_program_add_var(c->p, name, t);
}

/* A small integer (or bool) constant: what shape arithmetic computes on. */
static bool small_int_const(const dy_var *v) {
  return v->persistable && v->data && (v->type.dtype == DY_I64 || v->type.dtype == DY_BOOL) &&
         dy_type_numel(&v->type) <= PD_FOLD_MAX;
}

/* An op folds at import when it has inputs, every one a small integer
 * constant, and its output is small too (a shape, a slice of one, the
 * arithmetic on them): shape values become constants, so what reads them
 * as attributes (reshape's ShapeTensor, fill_constant's ShapeTensorList,
 * interpolation's OutSize) sees numbers. */
static bool foldable(pd_ctx *c, const int *in, int n_in, const dy_type *out_t) {
  if (n_in < 1 || dy_type_numel(out_t) > PD_FOLD_MAX || out_t->rank < 0)
    return false;
  for (int i = 0; i < n_in; i++)
    if (!small_int_const(c->p->vars[in[i]]))
      return false;
  for (int i = 0; i < out_t->rank; i++)
    if (out_t->shape[i] < 0)
      return false;
  return true;
}

/* Run op's reference kernel on its constant inputs: the output is a new
 * constant (named by the SSA rule, or a temporary). */
static dy_status fold(pd_ctx *c, const dy_op *op, const int *in, int n_in, const dy_type *out_t,
                      const char *out_name, int *out) {
  dy_tensor ti[16], to;
  dy_tensor *pi[16], *po = &to;
  for (int i = 0; i < n_in; i++) {
    const dy_var *v = c->p->vars[in[i]];
    ti[i] = (dy_tensor){.type = v->type, .data = v->data, .refcount = 1, .borrowed = true,
                        .var = -1,
                        .nbytes = (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype)};
    pi[i] = &ti[i];
  }
  uint8_t buf[PD_FOLD_MAX * 8 + 8];
  to = (dy_tensor){.type = *out_t, .data = buf, .refcount = 1, .borrowed = true, .var = -1,
                   .nbytes = (size_t)dy_type_numel(out_t) * dy_dtype_size(out_t->dtype)};
  dy_error e = {0};
  dy_status s = dy_kernel_table[op->kind](op, pi, n_in, &po, &e);
  if (s)
    return pd_fail(c, s, "folding %s: %s", dy_op_name(op->kind), e.msg);
  return pd_const(c, out_t->dtype, out_t->rank, out_t->shape, buf, out_name, out);
}

int pd_const_ints(pd_ctx *c, int var, int64_t *out, int cap) {
  const dy_var *v = c->p->vars[var];
  int64_t n = dy_type_numel(&v->type);
  if (!small_int_const(v) || n > cap)
    return -1;
  for (int64_t i = 0; i < n; i++)
    out[i] = v->type.dtype == DY_BOOL ? ((const uint8_t *)v->data)[i]
                                      : ((const int64_t *)v->data)[i];
  return (int)n;
}

dy_status pd_op(pd_ctx *c, const char *name, const int *in, int n_in, const dy_attr *attrs,
                int n_attrs, const char *out_name, int *out) {
  dy_op_kind k;
  if (!dy_op_kind_from_name(name, &k))
    return pd_fail(c, DY_STATUS_INTERNAL, "no op '%s' in the op table", name);
  dy_type in_t[64], out_t[1]; /* 64: concat of many (serving_ctr's 27) */
  dy_attr full[16];
  char why[160];
  if (n_in > 64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s: %d inputs", name, n_in);
  if (dy_op_info_of(k)->n_attrs > 16 || !dy_fe_complete_attrs(k, attrs, n_attrs, full, why, sizeof why))
    return pd_fail(c, DY_STATUS_INTERNAL, "%s: the mapping does not fit the op's schema: %s",
                   name, why);
  attrs = full;
  n_attrs = dy_op_info_of(k)->n_attrs;
  for (int i = 0; i < n_in; i++)
    in_t[i] = c->p->vars[in[i]]->type;
  dy_op op = {.id = -1, .kind = k, .n_inputs = n_in, .n_outputs = 1, .n_attrs = n_attrs,
              .attrs = (dy_attr *)attrs, .loc = c->loc};
  dy_error e = {0};
  dy_status s = dy_infer(&op, in_t, n_in, out_t, &e);
  if (s)
    return pd_fail(c, s == DY_STATUS_DTYPE_MISMATCH ? DY_STATUS_UNSUPPORTED : s, "%s", e.msg);
  if (foldable(c, in, n_in, &out_t[0]))
    return fold(c, &op, in, n_in, &out_t[0], out_name, out);
  int id;
  if (out_name) {
    id = pd_define(c, out_name, &out_t[0]);
  } else {
    char stem[300];
    const char *base = "tmp";
    for (size_t i = 0; i < c->op->n_outputs && !strcmp(base, "tmp"); i++)
      if (c->op->outputs[i]->n_arguments && c->op->outputs[i]->arguments[0])
        base = c->op->outputs[i]->arguments[0];
    snprintf(stem, sizeof stem, "%.200s@%s", base, name);
    const char *nm = dy_program_fresh_name(c->p, stem);
    id = nm ? dy_program_add_var(c->p, nm, &out_t[0]) : -1;
  }
  if (id < 0)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!dy_program_append_op(c->p, c->block, k, in, n_in, &id, 1, attrs, n_attrs, c->loc))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (k == DY_OP_BATCH_NORM) /* the running mean and variance are buffers */
    for (int i = 3; i < n_in; i++)
      c->p->vars[in[i]]->trainable = false;
  *out = id;
  return DY_OK;
}

bool pd_read_later(pd_ctx *c, const char *name) {
  for (size_t i = (size_t)c->op_index + 1; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    for (size_t k = 0; k < op->n_inputs; k++)
      for (size_t j = 0; j < op->inputs[k]->n_arguments; j++)
        if (op->inputs[k]->arguments[j] && strcmp(op->inputs[k]->arguments[j], name) == 0)
          return true;
  }
  return false;
}

int pd_new_var(pd_ctx *c, const char *stem, const dy_type *t) {
  const char *nm = dy_program_fresh_name(c->p, stem);
  return nm ? dy_program_add_var(c->p, nm, t) : -1;
}

dy_status pd_set_out(pd_ctx *c, const char *slot, int var) {
  const char *name = pd_arg(c, true, slot, 0);
  if (!name)
    return pd_fail(c, DY_STATUS_FORMAT, "output %s is missing", slot);
  dy_var *v = c->p->vars[var];
  if (strcmp(v->name, name) == 0)
    return DY_OK;
  if (v->persistable || v->feed_index >= 0 || strchr(v->name, '@') == NULL) {
    /* the value already has a Paddle name (an op that passes its input
     * through): an assign under the new name */
    int64_t shape[DY_MAX_DIMS];
    for (int i = 0; i < v->type.rank; i++)
      shape[i] = 0;
    dy_attr a[DY_RESHAPE_NATTRS];
    int n_a = dy_reshape_attrs_put(&(dy_reshape_attrs){
        .given = DY_GIVEN_ALL, .shape = shape, .n_shape = v->type.rank}, a);
    int out;
    return pd_op(c, "reshape", &var, 1, a, n_a, name, &out);
  }
  free_name(c, name);
  v->name = dy_program_strdup(c->p, name);
  return DY_OK;
}

dy_status pd_const(pd_ctx *c, dy_dtype dt, int rank, const int64_t *shape, const void *data,
                   const char *name, int *out) {
  dy_type t = {.dtype = dt, .rank = rank};
  memcpy(t.shape, shape, sizeof(int64_t) * (size_t)rank);
  char stem[300];
  const char *base = "const";
  if (c->op && c->op->n_outputs && c->op->outputs[0]->n_arguments)
    base = c->op->outputs[0]->arguments[0];
  snprintf(stem, sizeof stem, "%.200s@const", base);
  const char *nm = name ? name : dy_program_fresh_name(c->p, stem);
  int id = !nm ? -1 : name ? pd_define(c, name, &t) : dy_program_add_var(c->p, nm, &t);
  if (id < 0)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  PD_TRY(dy_program_set_data(c->p, id, data, (size_t)dy_type_numel(&t) * dy_dtype_size(dt),
                             c->err));
  *out = id;
  return DY_OK;
}

dy_status pd_const_f32(pd_ctx *c, float v, int *out) {
  return pd_const(c, DY_F32, 1, (int64_t[]){1}, &v, NULL, out);
}


/* ------------------------------------------------------------------ */
/* small builders                                                      */
/* ------------------------------------------------------------------ */

const char *pd_out_name(pd_ctx *c, const char *slot) { return pd_arg(c, true, slot, 0); }

dy_status pd_unary(pd_ctx *c, const char *op, int x, const char *name, int *out) {
  return pd_op(c, op, &x, 1, NULL, 0, name, out);
}

dy_status pd_binary(pd_ctx *c, const char *op, int a, int b, const char *name, int *out) {
  return pd_op(c, op, (int[]){a, b}, 2, NULL, 0, name, out);
}

/* An op with one ints attribute, named by a frontend table row. */
dy_status pd_ints_op(pd_ctx *c, const char *op, const char *attr, int x, int n,
                         const int64_t *v, const char *name, int *out) {
  dy_attr a = DY_ATTR_IS(attr, v, n);
  return pd_op(c, op, &x, 1, &a, 1, name, out);
}

dy_status pd_reshape(pd_ctx *c, int x, int rank, const int64_t *shape, const char *name,
                         int *out) {
  dy_attr a[DY_RESHAPE_NATTRS];
  int na = dy_reshape_attrs_put(&(dy_reshape_attrs){
      .given = DY_GIVEN_ALL, .shape = shape, .n_shape = rank}, a);
  return pd_op(c, "reshape", &x, 1, a, na, name, out);
}

dy_status pd_transpose(pd_ctx *c, int x, int rank, const int64_t *perm, const char *name,
                           int *out) {
  dy_attr a[DY_TRANSPOSE_NATTRS];
  int na = dy_transpose_attrs_put(&(dy_transpose_attrs){
      .given = DY_GIVEN_ALL, .perm = perm, .n_perm = rank}, a);
  return pd_op(c, "transpose", &x, 1, a, na, name, out);
}

dy_status pd_unsqueeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                           int *out) {
  dy_attr a[DY_UNSQUEEZE_NATTRS];
  int na = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n}, a);
  return pd_op(c, "unsqueeze", &x, 1, a, na, name, out);
}

dy_status pd_squeeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                         int *out) {
  dy_attr a[DY_SQUEEZE_NATTRS];
  int na = dy_squeeze_attrs_put(&(dy_squeeze_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n}, a);
  return pd_op(c, "squeeze", &x, 1, a, na, name, out);
}

dy_status pd_slice1(pd_ctx *c, int x, int64_t axis, int64_t start, int64_t end, const char *name,
                    int *out) {
  int64_t sp = 1;
  dy_attr a[DY_SLICE_NATTRS];
  int n_a = dy_slice_attrs_put(&(dy_slice_attrs){
      .given = DY_GIVEN_ALL, .starts = &start, .n_starts = 1, .ends = &end, .n_ends = 1,
      .axes = &axis, .n_axes = 1, .steps = &sp, .n_steps = 1}, a);
  return pd_op(c, "slice", &x, 1, a, n_a, name, out);
}

dy_status pd_flatten(pd_ctx *c, int x, int start, int stop, const char *name, int *out) {
  dy_attr a[DY_FLATTEN_NATTRS];
  int n_a = dy_flatten_attrs_put(&(dy_flatten_attrs){
      .given = DY_GIVEN_ALL, .start_axis = start, .stop_axis = stop}, a);
  return pd_op(c, "flatten", &x, 1, a, n_a, name, out);
}

dy_status pd_scale(pd_ctx *c, int x, double s, double b, const char *name, int *out) {
  dy_attr a[DY_SCALE_NATTRS];
  int n_a = dy_scale_attrs_put(&(dy_scale_attrs){
      .given = DY_GIVEN(scale, scale) | DY_GIVEN(scale, bias), .scale = s, .bias = b}, a);
  return pd_op(c, "scale", &x, 1, a, n_a, name, out);
}

/* The product of shape[0..n) within DY_MAX_NUMEL (a hostile attribute
 * must not overflow), or fail naming what. */
dy_status pd_checked_numel(pd_ctx *c, const int64_t *shape, int n, const char *what,
                               int64_t *out) {
  int64_t k = 1;
  for (int i = 0; i < n; i++)
    if (shape[i] < 0 || !dy_ck_mul(k, shape[i], &k) || k > DY_MAX_NUMEL)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s: a dim %lld, or more than %lld elements",
                     what, (long long)shape[i], (long long)DY_MAX_NUMEL);
  *out = k;
  return DY_OK;
}

/* A float attribute's value as float32 (out of range: +-inf, as a float
 * cast would give in Paddle, without C's undefined conversion). */
double pd_as_f32(double v) {
  if (v > FLT_MAX)
    return INFINITY;
  if (v < -FLT_MAX)
    return -INFINITY;
  return (float)v;
}

/* An output that is its input unchanged. */
dy_status pd_identity(pd_ctx *c, int x, const char *slot) { return pd_set_out(c, slot, x); }

/* The input slot must be absent (a tensor form of an attribute). */
dy_status pd_no_input(pd_ctx *c, const char *slot, const char *what) {
  if (pd_arg(c, false, slot, 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s from a tensor input (%s) is not supported; "
                   "only the attribute form", what, slot);
  return DY_OK;
}

dy_status pd_need_static_dim(pd_ctx *c, int var, int d, const char *what) {
  if (pd_type(c, var)->shape[d] < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s needs dim %d of its input to be static", what,
                   d);
  return DY_OK;
}


bool pd_is_nhwc(pd_ctx *c, const char *attr) {
  char buf[32];
  pd_attr_s(c, attr, "NCHW", buf, sizeof buf);
  return strcmp(buf, "NHWC") == 0;
}


double pd_fill_value(pd_ctx *c) {
  char sv[64];
  pd_attr_s(c, "str_value", "", sv, sizeof sv);
  return *sv ? strtod(sv, NULL) : pd_attr_f(c, "value", 0.0);
}
