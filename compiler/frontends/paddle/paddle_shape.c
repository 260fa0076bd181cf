/* paddle_shape.c - Paddle's shape, indexing and reduction ops, both
 * ways: each importer beside the exporter that writes the op back.
 *
 *   reshape(2), transpose(2)   the shape / axis attribute (not its tensor
 *                              forms); the exporter writes the *2 ops with
 *                              their XShape output
 *   flatten_contiguous_range   flatten; flatten / flatten2: to 2-D at axis
 *   squeeze(2), unsqueeze(2)   Paddle's rules: an axis whose dim is not 1
 *                              is left alone; unsqueeze inserts one axis
 *                              at a time
 *   concat, stack              concat (stack: each input unsqueezed)
 *   split                      num equal parts or sections: one slice each
 *   slice                      decrease_axis squeezed (all of them: [1])
 *   reduce_*                   dim, keep_dim, reduce_all
 *   gather, lookup_table(_v2)  gather on axis 0, padding_idx rows zeros
 */
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* reshape, transpose, flatten                                         */
/* ------------------------------------------------------------------ */

/* X -> Out through the row's op with the row's one ints attribute
 * (reshape's shape, transpose's axis as perm), which must be given. */
static dy_status map_ints(pd_ctx *c, const char *slot, const char *list) {
  const pd_attr_map *m = &c->def->attrs[0];
  int x, o, n = -1;
  PD_TRY(pd_in(c, "X", 0, &x));
  int64_t v[DY_MAX_DIMS];
  if (slot || list) /* the tensor form, when given, wins (folded) */
    PD_TRY(pd_tensor_ints(c, slot, list, v, DY_MAX_DIMS, &n, NULL));
  if (n < 0)
    n = pd_attr_ints(c, m->pd, v, DY_MAX_DIMS);
  if (n < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "no %s attribute", m->pd);
  return pd_ints_op(c, c->def->dy, m->dy, x, n, v, pd_out_name(c, "Out"), &o);
}

/* reshape's Shape (a 1-D tensor) or ShapeTensor (a list of [1] tensors),
 * folded when known at import (paddle_shape_tensor.c) */
dy_status pd_import_reshape(pd_ctx *c) { return map_ints(c, "Shape", "ShapeTensor"); }

dy_status pd_import_transpose(pd_ctx *c) { return map_ints(c, NULL, NULL); }

/* flatten_contiguous_range: the row's start_axis and stop_axis. */
dy_status pd_import_flatten_contiguous_range(pd_ctx *c) {
  const pd_attr_map *m = c->def->attrs;
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  return pd_flatten(c, x, (int)pd_attr_i(c, m[0].pd, (int64_t)m[0].value),
                    (int)pd_attr_i(c, m[1].pd, (int64_t)m[1].value), pd_out_name(c, "Out"), &o);
}

/* flatten / flatten2: to 2-D at axis. */
dy_status pd_import_flatten(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int axis = (int)pd_attr_i(c, "axis", 1), r = pd_type(c, x)->rank;
  if (axis < 0 || axis > r)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "axis %d for rank %d", axis, r);
  if (axis == 0)
    return pd_reshape(c, x, 2, (int64_t[]){1, -1}, pd_out_name(c, "Out"), &o);
  if (axis == r)
    return pd_reshape(c, x, 2, (int64_t[]){-1, 1}, pd_out_name(c, "Out"), &o);
  if (axis > 1)
    PD_TRY(pd_flatten(c, x, 0, axis - 1, NULL, &x));
  return pd_flatten(c, x, 1, -1, pd_out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* squeeze, unsqueeze, concat, stack, slice                            */
/* ------------------------------------------------------------------ */

/* squeeze(2): the row's axes; none: every dim of 1. */
dy_status pd_import_squeeze(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int64_t axes[DY_MAX_DIMS], keep[DY_MAX_DIMS];
  int n = pd_attr_ints(c, c->def->attrs[0].pd, axes, DY_MAX_DIMS), k = 0;
  const dy_type *t = pd_type(c, x);
  if (n <= 0 && dy_type_is_static(t)) {
    return pd_squeeze(c, x, 0, keep, pd_out_name(c, "Out"), &o);
  } else if (n <= 0) {
    for (int d = 0; d < t->rank; d++)
      if (t->shape[d] == 1)
        keep[k++] = d;
  } else {
    /* Paddle leaves an axis whose dim is not 1 alone */
    for (int i = 0; i < n; i++) {
      int64_t a = axes[i] < 0 ? axes[i] + t->rank : axes[i];
      if (a >= 0 && a < t->rank && t->shape[a] == 1)
        keep[k++] = a;
    }
  }
  if (k == 0)
    return pd_identity(c, x, "Out");
  return pd_squeeze(c, x, k, keep, pd_out_name(c, "Out"), &o);
}

/* unsqueeze(2): the row's axes (not their tensor forms). */
dy_status pd_import_unsqueeze(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_tensor_attrs(c));
  int64_t axes[DY_MAX_DIMS];
  int n = pd_attr_ints(c, c->def->attrs[0].pd, axes, DY_MAX_DIMS);
  if (n < 0) /* absent: Paddle's default, no axes */
    n = 0;
  int r = pd_type(c, x)->rank;
  /* Paddle inserts one axis at a time: a negative one counts from the
   * rank reached so far */
  for (int i = 0; i < n; i++)
    if (axes[i] < 0)
      axes[i] += r + i + 1;
  return pd_unsqueeze(c, x, n, axes, pd_out_name(c, "Out"), &o);
}

dy_status pd_export_unsqueeze(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_unsqueeze_attrs ua = dy_unsqueeze_attrs_get(o);
  /* Paddle inserts one at a time: ascending output positions agree */
  for (int i = 1; i < ua.n_axes; i++)
    if (ua.axes[i] < ua.axes[i - 1])
      return pdx_unsupported(x, o, "unsqueeze axes not in ascending order");
  return pd_export_xo(x, b, o, d);
}

dy_status pd_import_concat(pd_ctx *c) {
  int n = pd_n_args(c, false, "X"), o;
  int in[64];
  PD_TRY(pd_no_input(c, "AxisTensor", "axis"));
  if (n < 1 || n > 64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%d inputs", n);
  for (int i = 0; i < n; i++)
    PD_TRY(pd_in(c, "X", i, &in[i]));
  dy_attr a[DY_CONCAT_NATTRS];
  int n_a = dy_concat_attrs_put(&(dy_concat_attrs){
      .given = DY_GIVEN_ALL, .axis = pd_attr_i(c, "axis", 0)}, a);
  if (n == 1)
    return pd_identity(c, in[0], "Out");
  return pd_op(c, "concat", in, n, a, n_a, pd_out_name(c, "Out"), &o);
}

/* split: X into Out[0..n) along axis, `num` equal parts or `sections`
 * (one -1 takes the rest), each part a slice. */
dy_status pd_import_split(pd_ctx *c) {
  int x, o, n = pd_n_args(c, true, "Out");
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "AxisTensor", "axis"));
  PD_TRY(pd_no_input(c, "SectionsTensorList", "sections"));
  const dy_type *t = pd_type(c, x);
  int64_t axis = pd_attr_i(c, "axis", 0), sec[64], num = pd_attr_i(c, "num", 0);
  if (axis < 0)
    axis += t->rank;
  if (axis < 0 || axis >= t->rank || n < 1 || n > 64)
    return pd_fail(c, DY_STATUS_FORMAT, "split of a rank-%d input at axis %lld into %d parts",
                   t->rank, (long long)pd_attr_i(c, "axis", 0), n);
  PD_TRY(pd_need_static_dim(c, x, (int)axis, "split"));
  int64_t len = t->shape[axis], known = 0;
  int ns = pd_attr_ints(c, "sections", sec, 64), rest = -1;
  if (ns <= 0) { /* num equal parts */
    if (num != n || len % n)
      return pd_fail(c, DY_STATUS_FORMAT, "split of %lld into num %lld parts (%d outputs)",
                     (long long)len, (long long)num, n);
    for (int i = 0; i < n; i++)
      sec[i] = len / n;
    ns = n;
  }
  for (int i = 0; i < ns; i++) {
    if (sec[i] == -1 && rest < 0)
      rest = i;
    else if (sec[i] < 0)
      return pd_fail(c, DY_STATUS_FORMAT, "split: section %d is %lld", i, (long long)sec[i]);
    else
      known += sec[i];
  }
  if (rest >= 0)
    sec[rest] = len - known;
  if (ns != n || (rest >= 0 ? known > len : known != len))
    return pd_fail(c, DY_STATUS_FORMAT, "split: %d sections for %d outputs, of %lld in all "
                   "(the axis has %lld)", ns, n, (long long)known, (long long)len);
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    PD_TRY(pd_slice1(c, x, axis, at, at + sec[i], pd_arg(c, true, "Out", i), &o));
    at += sec[i];
  }
  return DY_OK;
}

dy_status pd_export_concat(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  if (o->n_inputs < 2)
    return pdx_unsupported(x, o, "concat of one input");
  PdOp *op = pdx_op(x, b, d->type);
  for (int i = 0; i < o->n_inputs; i++)
    pdx_arg(x, op, false, "X", pdx_vname(x, o->inputs[i]));
  pdx_arg(x, op, true, "Out", pdx_vname(x, o->outputs[0]));
  pdx_at_i(x, op, "axis", dy_concat_attrs_get(o).axis);
  return DY_OK;
}

/* stack of one name n times (benchmark_mmdnn's 256 copies of a mask):
 * unsqueeze, then tile n times on the axis */
static dy_status stack_copies(pd_ctx *c, int n, int64_t axis) {
  const char *x0 = pd_arg(c, false, "X", 0);
  for (int i = 1; i < n; i++) {
    const char *xi = pd_arg(c, false, "X", i);
    if (!x0 || !xi || strcmp(x0, xi))
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "%d inputs (at most 64, or copies of one)", n);
  }
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  int r = pd_type(c, x)->rank;
  int64_t a = axis < 0 ? axis + r + 1 : axis, rep[DY_MAX_DIMS];
  if (a < 0 || a > r || r + 1 > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "stack at axis %lld of rank %d",
                   (long long)axis, r);
  PD_TRY(pd_unsqueeze(c, x, 1, &a, NULL, &x));
  for (int d = 0; d <= r; d++)
    rep[d] = d == a ? n : 1;
  return pd_ints_op(c, "tile", "repeat_times", x, r + 1, rep, pd_out_name(c, "Y"), &o);
}

dy_status pd_import_stack(pd_ctx *c) {
  int n = pd_n_args(c, false, "X"), o;
  int in[64];
  int64_t axis = pd_attr_i(c, "axis", 0);
  if (n > 64)
    return stack_copies(c, n, axis);
  if (n < 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%d inputs", n);
  for (int i = 0; i < n; i++) {
    PD_TRY(pd_in(c, "X", i, &in[i]));
    int64_t a = axis < 0 ? axis + pd_type(c, in[i])->rank + 1 : axis;
    PD_TRY(pd_unsqueeze(c, in[i], 1, &a, n == 1 ? pd_out_name(c, "Y") : NULL, &in[i]));
    axis = a;
  }
  if (n == 1)
    return DY_OK;
  dy_attr a[DY_CONCAT_NATTRS];
  int n_a = dy_concat_attrs_put(&(dy_concat_attrs){.given = DY_GIVEN_ALL, .axis = axis}, a);
  return pd_op(c, "concat", in, n, a, n_a, pd_out_name(c, "Y"), &o);
}

dy_status pd_import_slice(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  int64_t axes[DY_MAX_DIMS], st[DY_MAX_DIMS], en[DY_MAX_DIMS], steps[DY_MAX_DIMS], dec[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS), n_st, n_en;
  /* starts / ends as tensors: folded when known at import */
  PD_TRY(pd_tensor_ints(c, "StartsTensor", "StartsTensorList", st, DY_MAX_DIMS, &n_st, NULL));
  PD_TRY(pd_tensor_ints(c, "EndsTensor", "EndsTensorList", en, DY_MAX_DIMS, &n_en, NULL));
  if (n_st < 0)
    n_st = pd_attr_ints(c, "starts", st, DY_MAX_DIMS);
  if (n_en < 0)
    n_en = pd_attr_ints(c, "ends", en, DY_MAX_DIMS);
  if (n < 1 || n_st != n || n_en != n)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "axes, starts and ends of different lengths");
  for (int i = 0; i < n; i++)
    steps[i] = 1;
  int nd = pd_attr_ints(c, "decrease_axis", dec, DY_MAX_DIMS);
  dy_attr a[DY_SLICE_NATTRS];
  int n_a = dy_slice_attrs_put(&(dy_slice_attrs){
      .given = DY_GIVEN_ALL, .starts = st, .n_starts = n, .ends = en, .n_ends = n,
      .axes = axes, .n_axes = n, .steps = steps, .n_steps = n}, a);
  PD_TRY(pd_op(c, "slice", &x, 1, a, n_a, nd > 0 ? NULL : pd_out_name(c, "Out"), &o));
  if (nd > 0) {
    if (nd == pd_type(c, o)->rank) /* every dim decreased: Paddle keeps [1] */
      return pd_reshape(c, o, 1, (int64_t[]){1}, pd_out_name(c, "Out"), &o);
    PD_TRY(pd_squeeze(c, o, nd, dec, pd_out_name(c, "Out"), &o));
  }
  return DY_OK;
}

dy_status pd_export_slice(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_slice_attrs sa = dy_slice_attrs_get(o);
  for (int i = 0; i < sa.n_steps; i++)
    if (sa.steps[i] != 1)
      return pdx_unsupported(x, o, "slice with a step other than 1");
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, false, "Input", pdx_vname(x, o->inputs[0]));
  pdx_arg(x, op, true, "Out", pdx_vname(x, o->outputs[0]));
  pdx_at_ints(x, op, "axes", sa.axes, sa.n_axes);
  pdx_at_ints(x, op, "starts", sa.starts, sa.n_starts);
  pdx_at_ints(x, op, "ends", sa.ends, sa.n_ends);
  pdx_at_ints(x, op, "decrease_axis", NULL, 0);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reductions                                                          */
/* ------------------------------------------------------------------ */

/* reduce_mean, reduce_sum, reduce_max, reduce_min: the row's op. */
dy_status pd_import_reduce(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  return pd_reduce_as(c, c->def->dy, x, pd_out_name(c, "Out"), &o);
}

dy_status pd_reduce_as(pd_ctx *c, const char *op, int x, const char *name, int *out) {
  int r = pd_type(c, x)->rank;
  int64_t axes[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "dim", axes, DY_MAX_DIMS);
  if (pd_attr_b(c, "reduce_all", false) || n <= 0) {
    n = r;
    for (int i = 0; i < r; i++)
      axes[i] = i;
  }
  bool keep = pd_attr_b(c, "keep_dim", false);
  /* the reduce ops share one schema */
  dy_attr a[DY_REDUCE_SUM_NATTRS];
  int na = dy_reduce_sum_attrs_put(&(dy_reduce_sum_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n, .keepdim = keep}, a);
  return pd_op(c, op, &x, 1, a, na, name, out);
}

dy_status pd_export_reduce(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  /* the four share one schema: axes, keepdim */
  const dy_reduce_sum_attrs ra = dy_reduce_sum_attrs_get(o);
  const dy_type *t0 = &x->p->vars[o->inputs[0]]->type;
  if (!ra.n_axes && !t0->rank)
    return pdx_unsupported(x, o, "a reduction of a rank-0 tensor");
  int64_t all[DY_MAX_DIMS];
  for (int i = 0; i < t0->rank; i++)
    all[i] = i;
  PdOp *op = pdx_xo(x, b, d->type, pdx_vname(x, o->inputs[0]), pdx_vname(x, o->outputs[0]));
  pdx_at_ints(x, op, "dim", ra.n_axes ? ra.axes : all, ra.n_axes ? ra.n_axes : t0->rank);
  pdx_at_b(x, op, "keep_dim", ra.keepdim), pdx_at_b(x, op, "reduce_all", false);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gathers                                                             */
/* ------------------------------------------------------------------ */

dy_status pd_import_gather(pd_ctx *c) {
  int x, idx, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Index", 0, &idx));
  PD_TRY(pd_no_input(c, "Axis", "the axis"));
  const dy_type *it = pd_type(c, idx);
  if (it->rank == 2 && it->shape[1] == 1)
    PD_TRY(pd_squeeze(c, idx, 1, (int64_t[]){1}, NULL, &idx));
  dy_attr a[DY_GATHER_NATTRS];
  int n_a = dy_gather_attrs_put(&(dy_gather_attrs){
      .given = DY_GIVEN_ALL, .axis = pd_attr_i(c, "axis", 0)}, a);
  return pd_op(c, "gather", (int[]){x, idx}, 2, a, n_a, pd_out_name(c, "Out"), &o);
}

dy_status pd_export_gather(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  const dy_type *it = &x->p->vars[o->inputs[1]]->type;
  if (it->rank != 1)
    return pdx_unsupported(x, o, "gather with an index of rank %d (Paddle's is 1-D)", it->rank);
  PdOp *op = pdx_xo(x, b, d->type, pdx_vname(x, o->inputs[0]), pdx_vname(x, o->outputs[0]));
  pdx_arg(x, op, false, "Index", pdx_vname(x, o->inputs[1]));
  pdx_at_i(x, op, "axis", dy_gather_attrs_get(o).axis);
  return DY_OK;
}

/* lookup_table (ids [.., 1]) and lookup_table_v2: rows of W, a padding_idx
 * row read as zeros. */
static dy_status lookup(pd_ctx *c, bool v1) {
  int w, ids, o;
  PD_TRY(pd_in(c, "W", 0, &w));
  PD_TRY(pd_in(c, "Ids", 0, &ids));
  const dy_type *it = pd_type(c, ids);
  if (v1 && it->rank >= 2 && it->shape[it->rank - 1] == 1)
    PD_TRY(pd_squeeze(c, ids, 1, (int64_t[]){it->rank - 1}, NULL, &ids));
  int64_t pad = pd_attr_i(c, "padding_idx", -1);
  if (pad < 0 && pad != -1)
    pad += pd_type(c, w)->shape[0];
  dy_attr a[DY_GATHER_NATTRS];
  int n_a = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = 0}, a);
  if (pad == -1)
    return pd_op(c, "gather", (int[]){w, ids}, 2, a, n_a, pd_out_name(c, "Out"), &o);
  int k, m, r;
  int64_t pv = pad;
  PD_TRY(pd_op(c, "gather", (int[]){w, ids}, 2, a, n_a, NULL, &o));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &pv, NULL, &k));
  PD_TRY(pd_binary(c, "equal", ids, k, NULL, &m));
  dy_attr ct[DY_CAST_NATTRS];
  int n_ct = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = DY_F32}, ct);
  PD_TRY(pd_op(c, "cast", &m, 1, ct, n_ct, NULL, &m));
  PD_TRY(pd_scale(c, m, -1.0, 1.0, NULL, &m));
  r = pd_type(c, m)->rank;
  PD_TRY(pd_unsqueeze(c, m, 1, (int64_t[]){r}, NULL, &m));
  return pd_binary(c, "mul", o, m, pd_out_name(c, "Out"), &o);
}

dy_status pd_import_lookup_table(pd_ctx *c) { return lookup(c, true); }
dy_status pd_import_lookup_table_v2(pd_ctx *c) { return lookup(c, false); }
