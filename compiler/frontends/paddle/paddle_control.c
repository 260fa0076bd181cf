/* paddle_control.c - Paddle's control flow and the ops around it (import
 * only; paddle_internal.h):
 *
 *   while           the sub-block as a dy2stc while (ir/ops_control.def):
 *                   Paddle's loop is imperative (the body overwrites vars
 *                   of the parent block, the condition var among them); the
 *                   carried values are the parent vars the body writes (the
 *                   op's Out list), the body yields their new values (the
 *                   condition's too) and the cond block only reads the
 *                   condition among them
 *   shape           a constant (the input's dims must be static)
 *   one_hot_v2      equal(unsqueeze(X), [0, depth)) cast to the dtype
 *   set_value       where(the region's mask, the value, Input): the region
 *                   of each axis [start, end) by step, starts / ends / steps
 *                   from attributes or tensor lists (run-time values too)
 *   assign_value    a constant
 *   scale           of an int64 tensor: mul / add of int64 constants
 */
#include <math.h>
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* shape values and small ops                                          */
/* ------------------------------------------------------------------ */

static dy_status cast_to(pd_ctx *c, int x, dy_dtype dt, const char *name, int *out) {
  dy_attr a[DY_CAST_NATTRS];
  int n_a = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = dt}, a);
  return pd_op(c, "cast", &x, 1, a, n_a, name, out);
}

dy_status pd_import_shape(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  const dy_type *t = pd_type(c, x);
  int64_t dims[DY_MAX_DIMS];
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "the shape of '%s' has a dynamic dim %d (give "
                     "the inputs static shapes: --shape)", pd_arg(c, false, "Input", 0), i);
    dims[i] = t->shape[i];
  }
  return pd_const(c, DY_I64, 1, (int64_t[]){t->rank}, dims, pd_out_name(c, "Out"), &o);
}

/* The number of values a list attribute holds (of any element kind). */
static int attr_count(pd_ctx *c, const char *name) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return -1;
  size_t n = a->n_ints + a->n_floats + a->n_longs + a->n_float64s + a->n_bools;
  return n > INT32_MAX ? INT32_MAX : (int)n;
}

/* Its values as doubles (ints, longs, floats, float64s or bools). */
static void attr_vals(pd_ctx *c, const char *name, double *out, int cap) {
  const PdAttr *a = pd_attr(c, name);
  int n = 0;
  for (size_t i = 0; a && i < a->n_ints && n < cap; i++)
    out[n++] = a->ints[i];
  for (size_t i = 0; a && i < a->n_longs && n < cap; i++)
    out[n++] = (double)a->longs[i];
  for (size_t i = 0; a && i < a->n_floats && n < cap; i++)
    out[n++] = a->floats[i];
  for (size_t i = 0; a && i < a->n_float64s && n < cap; i++)
    out[n++] = a->float64s[i];
  for (size_t i = 0; a && i < a->n_bools && n < cap; i++)
    out[n++] = a->bools[i] != 0;
}

/* n values of an attribute as a constant of dtype dt and the shape. */
static dy_status attr_const(pd_ctx *c, const char *an, int n_el, dy_dtype dt, int rank,
                            const int64_t *shape, const char *name, int *out) {
  size_t k = (size_t)(n_el ? n_el : 1);
  double *v = calloc(k, sizeof *v);
  float *f = malloc(k * sizeof *f);
  int64_t *iv = malloc(k * sizeof *iv);
  uint8_t *bv = malloc(k);
  dy_status s = v && f && iv && bv ? DY_OK : pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s) {
    attr_vals(c, an, v, n_el);
    for (int i = 0; i < n_el; i++)
      f[i] = (float)pd_as_f32(v[i]), iv[i] = fabs(v[i]) < 9e18 ? (int64_t)v[i] : 0,
      bv[i] = v[i] != 0;
    s = pd_const(c, dt, rank, shape, dt == DY_F32 ? (void *)f : dt == DY_I64 ? (void *)iv : bv,
                 name, out);
  }
  free(v);
  free(f);
  free(iv);
  free(bv);
  return s;
}

dy_status pd_import_assign_value(pd_ctx *c) {
  int64_t shape[DY_MAX_DIMS], n_el = 0;
  int n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS), pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  dy_dtype dt;
  if (n < 0 || !pd_dtype_to_dy(pdt, &dt) || (dt != DY_F32 && dt != DY_I64 && dt != DY_BOOL))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "assign_value of %s", pd_dtype_name(pdt));
  PD_TRY(pd_checked_numel(c, shape, n, "assign_value's shape", &n_el));
  const char *an = dt == DY_F32 ? "fp32_values" : dt == DY_BOOL ? "bool_values"
                   : pdt == PD_INT32 ? "int32_values" : "int64_values";
  int k = attr_count(c, an);
  if (k != n_el)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s holds %d values for %lld elements", an, k,
                   (long long)n_el);
  int o;
  return attr_const(c, an, k, dt, n, shape, pd_out_name(c, "Out"), &o);
}

/* scale of an int64 tensor (a loop counter): x * scale + bias with int64
 * constants (bias first when bias_after_scale is false); the float forms
 * go to the table's scale. */
dy_status pd_import_scale(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (pd_type(c, x)->dtype != DY_I64)
    return pd_import_mapped(c, x);
  PD_TRY(pd_no_input(c, "ScaleTensor", "the scale"));
  double sc = pd_attr_f(c, "scale", 1.0), b = pd_attr_f(c, "bias", 0.0);
  if (sc != (double)(int64_t)sc || b != (double)(int64_t)b)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "scale of an int64 tensor by %g + %g (not "
                   "integers)", sc, b);
  int64_t si = (int64_t)sc, bi = (int64_t)b;
  bool after = pd_attr_b(c, "bias_after_scale", true);
  int sv, bv;
  /* rank-0 constants: the output keeps x's shape (a scalar counter too) */
  PD_TRY(pd_const(c, DY_I64, 0, (int64_t[]){1}, &si, NULL, &sv));
  PD_TRY(pd_const(c, DY_I64, 0, (int64_t[]){1}, &bi, NULL, &bv));
  const char *on = pd_out_name(c, "Out");
  if (after) {
    PD_TRY(pd_binary(c, "mul", x, sv, NULL, &x));
    return pd_binary(c, "add", x, bv, on, &o);
  }
  PD_TRY(pd_binary(c, "add", x, bv, NULL, &x));
  return pd_binary(c, "mul", x, sv, on, &o);
}

/* 0, 1, ..., n - 1 as an int64 constant of rank `rank`, along axis. */
static dy_status arange(pd_ctx *c, int64_t n, int rank, int axis, int *out) {
  int64_t shape[DY_MAX_DIMS], *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  if (!v)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < rank; i++)
    shape[i] = i == axis ? n : 1;
  for (int64_t i = 0; i < n; i++)
    v[i] = i;
  dy_status s = pd_const(c, DY_I64, rank, shape, v, NULL, out);
  free(v);
  return s;
}

dy_status pd_import_one_hot_v2(pd_ctx *c) {
  int x, o, r, dv;
  PD_TRY(pd_in(c, "X", 0, &x));
  int64_t depth = pd_attr_i(c, "depth", -1), dd[1];
  PD_TRY(pd_in_opt(c, "depth_tensor", 0, &dv));
  if (dv >= 0 && pd_const_ints(c, dv, dd, 1) != 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "depth_tensor is not known at import time");
  if (dv >= 0)
    depth = dd[0];
  int pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  dy_dtype dt;
  if (depth < 1 || depth > DY_MAX_NUMEL || !pd_dtype_to_dy(pdt, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "one_hot_v2 of depth %lld to %s", (long long)depth,
                   pd_dtype_name(pdt));
  if (pd_type(c, x)->dtype != DY_I64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "one_hot_v2 of a %s input (needs integers)",
                   dy_dtype_name(pd_type(c, x)->dtype));
  r = pd_type(c, x)->rank;
  PD_TRY(pd_unsqueeze(c, x, 1, (int64_t[]){r}, NULL, &x));
  PD_TRY(arange(c, depth, r + 1, r, &dv));
  PD_TRY(pd_binary(c, "equal", x, dv, NULL, &x));
  return cast_to(c, x, dt, pd_out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* set_value                                                           */
/* ------------------------------------------------------------------ */

/* The i-th start / end / step of set_value: the tensor list's var (a
 * one-element int64, maybe known only at run time) or the attribute's
 * value as a constant. */
static dy_status bound(pd_ctx *c, const char *list, const char *attr, int i, int64_t dflt,
                       int *out, int64_t *known) {
  int n = pd_n_args(c, false, list);
  *known = INT64_MIN;
  if (n > 0) {
    int v;
    int64_t k[1];
    if (i >= n)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s has %d tensors, axes more", list, n);
    PD_TRY(pd_in(c, list, i, &v));
    if (pd_type(c, v)->dtype != DY_I64 || dy_type_numel(pd_type(c, v)) != 1)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s[%d] is not a one-element integer", list, i);
    if (pd_const_ints(c, v, k, 1) == 1)
      *known = k[0];
    return pd_reshape(c, v, 1, (int64_t[]){1}, NULL, out);
  }
  int64_t vals[DY_MAX_DIMS];
  int k = pd_attr_ints(c, attr, vals, DY_MAX_DIMS);
  int64_t v = k < 0 && dflt != INT64_MIN ? dflt : i < k ? vals[i] : INT64_MIN;
  if (v == INT64_MIN)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "no %s (nor %s) for axis %d", attr, list, i);
  *known = v;
  return pd_const(c, DY_I64, 1, (int64_t[]){1}, &v, NULL, out);
}

/* s as an index of a dim of size d: s + d when negative. */
static dy_status normalise(pd_ctx *c, int s, int64_t d, int *out) {
  int zero, dv, neg, sum;
  int64_t z = 0;
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &z, NULL, &zero));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &d, NULL, &dv));
  PD_TRY(pd_binary(c, "less", s, zero, NULL, &neg));
  PD_TRY(pd_binary(c, "add", s, dv, NULL, &sum));
  return pd_op(c, "where", (int[]){neg, sum, s}, 3, NULL, 0, NULL, out);
}

/* The int64 0/1 mask of axis `axis` (of rank r, dim d): start <= i < end
 * and (i - start) % step == 0. */
static dy_status axis_mask(pd_ctx *c, int i, int axis, int r, int64_t d, int *out) {
  int s, e, st, idx, lt_e, lt_s, m, one, zero;
  int64_t ks, ke, kst, z = 0, o1 = 1;
  PD_TRY(bound(c, "StartsTensorList", "starts", i, INT64_MIN, &s, &ks));
  PD_TRY(bound(c, "EndsTensorList", "ends", i, INT64_MIN, &e, &ke));
  PD_TRY(bound(c, "StepsTensorList", "steps", i, 1, &st, &kst));
  if (kst != INT64_MIN && kst < 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "set_value with step %lld (only positive)",
                   (long long)kst);
  PD_TRY(normalise(c, s, d, &s));
  PD_TRY(normalise(c, e, d, &e));
  PD_TRY(arange(c, d, r, axis, &idx));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &z, NULL, &zero));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &o1, NULL, &one));
  PD_TRY(pd_binary(c, "less", idx, e, NULL, &lt_e));
  PD_TRY(cast_to(c, lt_e, DY_I64, NULL, &lt_e));
  PD_TRY(pd_binary(c, "less", idx, s, NULL, &lt_s));
  PD_TRY(cast_to(c, lt_s, DY_I64, NULL, &lt_s));
  PD_TRY(pd_binary(c, "sub", one, lt_s, NULL, &lt_s));
  PD_TRY(pd_binary(c, "mul", lt_e, lt_s, NULL, &m));
  if (kst != 1) { /* (i - start) % step == 0 */
    int dlt, md;
    PD_TRY(pd_binary(c, "sub", idx, s, NULL, &dlt));
    PD_TRY(pd_binary(c, "mod", dlt, st, NULL, &md));
    PD_TRY(pd_binary(c, "equal", md, zero, NULL, &md));
    PD_TRY(cast_to(c, md, DY_I64, NULL, &md));
    PD_TRY(pd_binary(c, "mul", m, md, NULL, &m));
  }
  *out = m;
  return DY_OK;
}

/* The value: ValueTensor, or the attribute values (of Input's dtype) as a
 * constant of the `shape` attribute. */
static dy_status set_value_value(pd_ctx *c, dy_dtype dt, int *out) {
  PD_TRY(pd_in_opt(c, "ValueTensor", 0, out));
  if (*out >= 0)
    return DY_OK;
  int64_t shape[DY_MAX_DIMS], n_el = 0;
  int n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS);
  if (n < 0)
    n = 0;
  PD_TRY(pd_checked_numel(c, shape, n, "set_value's shape", &n_el));
  const char *names[] = {"fp32_values", "fp64_values", "int64_values", "int32_values",
                         "bool_values"};
  for (int k = 0; k < 5; k++) {
    int len = attr_count(c, names[k]);
    if (len < 1)
      continue;
    if (len != n_el)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s holds %d values for shape of %lld",
                     names[k], len, (long long)n_el);
    return attr_const(c, names[k], len, dt, n, shape, NULL, out);
  }
  return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "neither ValueTensor nor values");
}

/* set_value: Out = Input with Input[region] = value. The region's mask is
 * the product of the axes' masks; the value (decrease_axes put back as
 * dims of 1) broadcasts over Input, so along a set axis it has 1 element
 * (or the whole dim when the region starts at 0 by step 1). */
dy_status pd_import_set_value(pd_ctx *c) {
  int x, v, m = -1, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  const dy_type xt = *pd_type(c, x);
  int64_t axes[DY_MAX_DIMS], dec[DY_MAX_DIMS], none[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "axes", axes, DY_MAX_DIMS);
  int nd = pd_attr_ints(c, "decrease_axes", dec, DY_MAX_DIMS);
  if (pd_attr_ints(c, "none_axes", none, DY_MAX_DIMS) > 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "set_value with none_axes");
  if (n < 1)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "set_value without axes");
  PD_TRY(set_value_value(c, xt.dtype, &v));
  if (pd_type(c, v)->dtype != xt.dtype)
    PD_TRY(cast_to(c, v, xt.dtype, NULL, &v));
  if (nd > 0 && pd_type(c, v)->rank == xt.rank - nd) {
    /* the decreased axes back as dims of 1 (sorted, as unsqueeze wants) */
    for (int i = 1; i < nd; i++)
      for (int j = i; j > 0 && dec[j - 1] > dec[j]; j--) {
        int64_t t = dec[j];
        dec[j] = dec[j - 1];
        dec[j - 1] = t;
      }
    PD_TRY(pd_unsqueeze(c, v, nd, dec, NULL, &v));
  }
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + xt.rank : axes[i];
    if (a < 0 || a >= xt.rank || xt.shape[a] < 0)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "set_value on axis %lld (needs a static dim)",
                     (long long)axes[i]);
    const dy_type *vt = pd_type(c, v);
    int va = (int)a - (xt.rank - vt->rank);
    if (va >= 0 && vt->shape[va] != 1) {
      int64_t s0[DY_MAX_DIMS], st[DY_MAX_DIMS];
      bool whole = pd_n_args(c, false, "StartsTensorList") == 0 &&
                   pd_attr_ints(c, "starts", s0, DY_MAX_DIMS) > i && s0[i] == 0 &&
                   (pd_attr_ints(c, "steps", st, DY_MAX_DIMS) <= i || st[i] == 1) &&
                   vt->shape[va] == xt.shape[a];
      if (!whole)
        return pd_fail(c, DY_STATUS_UNSUPPORTED, "set_value of a value of %lld elements along "
                       "axis %lld (only 1, or the whole dim from 0)", (long long)vt->shape[va],
                       (long long)a);
    }
    int mi = -1;
    PD_TRY(axis_mask(c, i, (int)a, xt.rank, xt.shape[a], &mi));
    if (m < 0)
      m = mi;
    else
      PD_TRY(pd_binary(c, "mul", m, mi, NULL, &m));
  }
  int one;
  int64_t o1 = 1;
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &o1, NULL, &one));
  PD_TRY(pd_binary(c, "equal", m, one, NULL, &m));
  PD_TRY(pd_op(c, "where", (int[]){m, v, x}, 3, NULL, 0, NULL, &o));
  if (!dy_type_equal(pd_type(c, o), &xt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "set_value's value does not broadcast to Input");
  return pd_set_out(c, "Out", o);
}

/* ------------------------------------------------------------------ */
/* while                                                               */
/* ------------------------------------------------------------------ */

/* The sub-block attribute's block, a child of the current one. */
static dy_status sub_block(pd_ctx *c, const char *attr, const PdBlock **out) {
  const PdAttr *a = pd_attr(c, attr);
  int64_t b = a && (int)a->type == PD_A_BLOCK && a->has_block_idx ? a->block_idx : -1;
  if (b < 1 || (size_t)b >= c->prog->n_blocks || !c->prog->blocks[b] ||
      c->prog->blocks[b] == c->blk || c->prog->blocks[b]->parent_idx != c->blk->idx)
    return pd_fail(c, DY_STATUS_FORMAT, "%s %lld is not a child block of block %d", attr,
                   (long long)b, c->blk->idx);
  *out = c->prog->blocks[b];
  return DY_OK;
}

/* Import the ops of Paddle block sb into Program block b (the current
 * op's state saved and restored). */
static dy_status import_block(pd_ctx *c, const PdBlock *sb, int b) {
  if (c->depth >= PD_MAX_DEPTH)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "sub-blocks nested more than %d deep",
                   PD_MAX_DEPTH);
  pd_ctx saved = *c;
  c->depth++;
  c->blk = sb;
  c->block = b;
  dy_status s = DY_OK;
  for (size_t i = 0; i < sb->n_ops && !s; i++) {
    c->op = sb->ops[i];
    c->op_index = (int)i;
    c->loc = (dy_srcloc){c->path, saved.loc.line};
    s = c->import_op(c);
  }
  saved.n_renamed = c->n_renamed;
  *c = saved;
  return s;
}

/* The vars of the while's inputs: first[0..n) then the captures of its
 * blocks, each once (malloc'd into *in). */
static dy_status control_inputs(pd_ctx *c, const int *first, int n, const int *blocks,
                                int n_blocks, int **in, int *n_in) {
  int cap = c->p->n_vars + n + 1;
  int *v = malloc(sizeof *v * (size_t)cap), *caps = malloc(sizeof *caps * (size_t)cap);
  if (!v || !caps) {
    free(v);
    free(caps);
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  memcpy(v, first, sizeof *v * (size_t)n);
  int k = n;
  for (int j = 0; j < n_blocks; j++) {
    int m = dy_block_captures(c->p, blocks[j], caps, cap);
    for (int i = 0; i < m && k < cap; i++) {
      bool seen = false;
      for (int q = n; q < k && !seen; q++)
        seen = v[q] == caps[i];
      if (!seen)
        v[k++] = caps[i];
    }
  }
  free(caps);
  *in = v;
  *n_in = k;
  return DY_OK;
}

static bool has_arg(const PdOp *op, bool output, const char *name) {
  size_t n = output ? op->n_outputs : op->n_inputs;
  for (size_t k = 0; k < n; k++) {
    const Paddle__Framework__Proto__OpDesc__Var *v = output ? op->outputs[k] : op->inputs[k];
    for (size_t j = 0; j < v->n_arguments; j++)
      if (v->arguments[j] && strcmp(v->arguments[j], name) == 0)
        return true;
  }
  return false;
}

static bool has_block(const PdOp *op) {
  for (size_t k = 0; k < op->n_attrs; k++)
    if ((int)op->attrs[k]->type == PD_A_BLOCK)
      return true;
  return false;
}

/* Does block sb read name before writing it (an op with a sub-block
 * reads what its block reads: its inputs list them; its outputs are
 * written only on some paths, so they count as read too)? */
static bool read_first(const PdBlock *sb, const char *name) {
  for (size_t i = 0; i < sb->n_ops; i++) {
    const PdOp *op = sb->ops[i];
    if (has_arg(op, false, name) || (has_block(op) && has_arg(op, true, name)))
      return true;
    if (has_arg(op, true, name))
      return false;
  }
  return false;
}

/* Is the Out name `nm` (defined before the loop) a carried value: the
 * condition, read by the body before it writes it, or read after the
 * loop? Inside a sub-block every one is (an enclosing block may yield
 * it). Else it is the body's own (Paddle's undefined_var placeholders). */
static bool carried(pd_ctx *c, const PdBlock *sb, const char *nm, const char *cn) {
  return strcmp(nm, cn) == 0 || c->blk->idx > 0 || read_first(sb, nm) || pd_read_later(c, nm);
}

/* One element of another rank ([] and [1]: Paddle 2's and 0-D scalars
 * mix) reshaped, in block b, to type t; true on an error. */
static bool one_element_as(pd_ctx *c, int b, int *v, const dy_type *t) {
  const dy_type *vt = &c->p->vars[*v]->type;
  if (dy_type_equal(vt, t) || vt->dtype != t->dtype || dy_type_numel(vt) != 1 ||
      dy_type_numel(t) != 1)
    return false;
  int saved = c->block;
  c->block = b;
  dy_status s = pd_reshape(c, *v, t->rank, t->shape, NULL, v);
  c->block = saved;
  return s != DY_OK;
}

/* while (sub_block, Condition, X, Out): the carried values are the Out
 * names defined before the loop that carried() keeps, the condition
 * among them. */
dy_status pd_import_while(pd_ctx *c) {
  const PdBlock *sb = NULL;
  PD_TRY(sub_block(c, "sub_block", &sb));
  const char *cn = pd_arg(c, false, "Condition", 0);
  int n_out = pd_n_args(c, true, "Out"), n = 0, ci = -1;
  if (!cn)
    return pd_fail(c, DY_STATUS_FORMAT, "while without its Condition");
  const char **names = malloc(sizeof *names * (size_t)(n_out + 1));
  int *init = malloc(sizeof *init * (size_t)(n_out + 1) * 4);
  dy_type *types = malloc(sizeof *types * (size_t)(n_out + 1));
  if (!names || !init || !types) {
    free(names);
    free(init);
    free(types);
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  int *par = init + n_out + 1, *res = par + n_out + 1, *outs = res + n_out + 1;
  dy_status s = DY_OK;
  for (int i = 0; i <= n_out && !s; i++) {
    const char *nm = i < n_out ? pd_arg(c, true, "Out", i) : cn;
    bool seen = false;
    for (int j = 0; j < n && !seen; j++)
      seen = strcmp(names[j], nm) == 0;
    int v = seen ? -1 : dy_program_find_var(c->p, nm);
    if (v < 0 || !carried(c, sb, nm, cn))
      continue; /* the body's own */
    if (strcmp(nm, cn) == 0)
      ci = n;
    names[n] = nm;
    init[n] = v;
    types[n++] = c->p->vars[v]->type;
  }
  if (ci < 0)
    s = pd_fail(c, DY_STATUS_FORMAT, "the Condition '%s' is not defined before the loop", cn);
  else if (types[ci].dtype != DY_BOOL || dy_type_numel(&types[ci]) != 1)
    s = pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "the Condition '%s' is not a one-element bool",
                cn);
  int blocks[2] = {-1, -1};
  /* the cond block reads the condition among the carried values */
  if (!s && (blocks[0] = dy_program_add_block(c->p, c->block)) < 0)
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n && !s; i++)
    if ((par[i] = pd_new_var(c, "while_param", &types[i])) < 0)
      s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s && (!dy_block_set_params(c->p, blocks[0], par, n) ||
             !dy_block_set_results(c->p, blocks[0], &par[ci], 1)))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* the body: params under the Paddle names, then its ops */
  if (!s && (blocks[1] = dy_program_add_block(c->p, c->block)) < 0)
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n && !s; i++)
    if ((par[i] = pd_define(c, names[i], &types[i])) < 0)
      s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s && !dy_block_set_params(c->p, blocks[1], par, n))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s)
    s = import_block(c, sb, blocks[1]);
  for (int i = 0; i < n && !s; i++) {
    res[i] = dy_program_find_var(c->p, names[i]);
    if (one_element_as(c, blocks[1], &res[i], &types[i]))
      s = c->err->status;
    else if (!dy_type_equal(&c->p->vars[res[i]]->type, &types[i])) {
      char a[128], b[128];
      s = pd_fail(c, DY_STATUS_UNSUPPORTED, "'%s' is %s before the loop and %s after the body; "
                  "a loop-carried value needs one type", names[i],
                  dy_type_str(&types[i], a, sizeof a),
                  dy_type_str(&c->p->vars[res[i]]->type, b, sizeof b));
    }
  }
  if (!s && !dy_block_set_results(c->p, blocks[1], res, n))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int *in = NULL, n_in = 0;
  if (!s)
    s = control_inputs(c, init, n, blocks, 2, &in, &n_in);
  for (int i = 0; i < n && !s; i++)
    if ((outs[i] = pd_define(c, names[i], &types[i])) < 0)
      s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* max_iterations 0: the runner's bound (DY_WHILE_MAX_ITERATIONS); a
   * Paddle while has no trip count of its own */
  dy_attr wa[DY_WHILE_NATTRS];
  int n_wa = dy_while_attrs_put(&(dy_while_attrs){
      .given = DY_GIVEN_ALL, .n_carried = n, .cond_block = blocks[0], .body_block = blocks[1],
      .max_iterations = 0}, wa);
  if (!s && !dy_program_append_op(c->p, c->block, DY_OP_WHILE, in, n_in, outs, n, wa, n_wa,
                                  c->loc))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  free(in);
  free(names);
  free(init);
  free(types);
  return s;
}

/* ------------------------------------------------------------------ */
/* conditional_block, select_input                                     */
/* ------------------------------------------------------------------ */

/* conditional_block (Cond, Out, sub_block): a cond whose then block is
 * the sub-block and whose else block yields what the Out names held
 * before (zeros for a name first defined by the block: Paddle leaves it
 * undefined, and select_input picks the other branch's). */
dy_status pd_import_conditional_block(pd_ctx *c) {
  const PdBlock *sb = NULL;
  int pred;
  PD_TRY(sub_block(c, "sub_block", &sb));
  PD_TRY(pd_in(c, "Cond", 0, &pred));
  const dy_type *pt = pd_type(c, pred);
  if (pt->dtype != DY_BOOL || dy_type_numel(pt) != 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "conditional_block on a condition of other than "
                   "one bool element");
  if (pt->rank != 1 || pt->shape[0] != 1)
    PD_TRY(pd_reshape(c, pred, 1, (int64_t[]){1}, NULL, &pred));
  int n = pd_n_args(c, true, "Out");
  int *v = malloc(sizeof *v * (size_t)(4 * n + 1));
  dy_type *types = malloc(sizeof *types * (size_t)(n + 1));
  if (!v || !types) {
    free(v);
    free(types);
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  int *prev = v, *res = v + n, *els = v + 2 * n, *outs = v + 3 * n, blocks[2];
  for (int i = 0; i < n; i++)
    prev[i] = dy_program_find_var(c->p, pd_arg(c, true, "Out", i));
  dy_status s = DY_OK;
  if ((blocks[0] = dy_program_add_block(c->p, c->block)) < 0 ||
      (blocks[1] = dy_program_add_block(c->p, c->block)) < 0)
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s)
    s = import_block(c, sb, blocks[0]);
  for (int i = 0; i < n && !s; i++) {
    const char *nm = pd_arg(c, true, "Out", i);
    res[i] = dy_program_find_var(c->p, nm);
    if (res[i] < 0 || res[i] == prev[i]) {
      s = pd_fail(c, DY_STATUS_FORMAT, "Out '%s' is not written by block %d", nm, sb->idx);
      break;
    }
    types[i] = c->p->vars[res[i]]->type;
    if (prev[i] >= 0 && !dy_type_equal(&c->p->vars[prev[i]]->type, &types[i])) {
      char a[128], b[128];
      s = pd_fail(c, DY_STATUS_UNSUPPORTED, "'%s' is %s before the block and %s in it",
                  nm, dy_type_str(&c->p->vars[prev[i]]->type, a, sizeof a),
                  dy_type_str(&types[i], b, sizeof b));
    }
    els[i] = prev[i];
    if (!s && els[i] < 0) { /* zeros of the type, in the else block */
      int saved = c->block;
      c->block = blocks[1];
      dy_attr a[DY_FULL_NATTRS];
      int n_a = dy_full_attrs_put(&(dy_full_attrs){
          .given = DY_GIVEN_ALL, .shape = types[i].shape, .n_shape = types[i].rank,
          .value = 0, .dtype = types[i].dtype}, a);
      s = dy_type_is_static(&types[i])
              ? pd_op(c, "full", NULL, 0, a, n_a, NULL, &els[i])
              : pd_fail(c, DY_STATUS_UNSUPPORTED, "'%s' has no static type", nm);
      c->block = saved;
    }
  }
  if (!s && (!dy_block_set_results(c->p, blocks[0], res, n) ||
             !dy_block_set_results(c->p, blocks[1], els, n)))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int *in = NULL, n_in = 0;
  if (!s)
    s = control_inputs(c, &pred, 1, blocks, 2, &in, &n_in);
  for (int i = 0; i < n && !s; i++)
    if ((outs[i] = pd_define(c, pd_arg(c, true, "Out", i), &types[i])) < 0)
      s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_attr ca[DY_COND_NATTRS];
  int n_ca = dy_cond_attrs_put(&(dy_cond_attrs){
      .given = DY_GIVEN_ALL, .then_block = blocks[0], .else_block = blocks[1]}, ca);
  if (!s && !dy_program_append_op(c->p, c->block, DY_OP_COND, in, n_in, outs, n, ca, n_ca,
                                  c->loc))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  free(in);
  free(v);
  free(types);
  return s;
}

/* select_input (Mask, X): X[Mask], as where(Mask == k, X[k], ...). */
dy_status pd_import_select_input(pd_ctx *c) {
  int n = pd_n_args(c, false, "X"), m, o, k, eq;
  if (n < 1)
    return pd_fail(c, DY_STATUS_FORMAT, "select_input without X");
  PD_TRY(pd_in(c, "Mask", 0, &m));
  if (pd_type(c, m)->dtype != DY_I64 || dy_type_numel(pd_type(c, m)) != 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "select_input's Mask is not one integer");
  PD_TRY(pd_in(c, "X", 0, &o));
  for (int i = 1; i < n; i++) {
    int64_t iv = i;
    int x;
    PD_TRY(pd_in(c, "X", i, &x));
    if (!dy_type_equal(pd_type(c, x), pd_type(c, o)))
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "select_input of inputs of different types");
    PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &iv, NULL, &k));
    PD_TRY(pd_binary(c, "equal", m, k, NULL, &eq));
    PD_TRY(pd_op(c, "where", (int[]){eq, x, o}, 3, NULL, 0, NULL, &o));
  }
  return pd_set_out(c, "Out", o);
}

/* ------------------------------------------------------------------ */
/* logical ops, reduce_all / reduce_any                                */
/* ------------------------------------------------------------------ */

/* As int64 0/1: not = 1 - x, and = x * y, or = max(x, y), xor = x != y. */
dy_status pd_import_logical(pd_ctx *c) {
  const char *t = c->op->type + strlen("logical_");
  int x, y = -1, o, one;
  int64_t o1 = 1;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (strcmp(t, "not"))
    PD_TRY(pd_in(c, "Y", 0, &y));
  /* other dtypes: nonzero is true */
  if (pd_type(c, x)->dtype != DY_BOOL)
    PD_TRY(cast_to(c, x, DY_BOOL, NULL, &x));
  if (y >= 0 && pd_type(c, y)->dtype != DY_BOOL)
    PD_TRY(cast_to(c, y, DY_BOOL, NULL, &y));
  PD_TRY(cast_to(c, x, DY_I64, NULL, &x));
  if (y >= 0)
    PD_TRY(cast_to(c, y, DY_I64, NULL, &y));
  PD_TRY(pd_const(c, DY_I64, 0, (int64_t[]){1}, &o1, NULL, &one)); /* keeps the shapes */
  if (!strcmp(t, "not"))
    PD_TRY(pd_binary(c, "sub", one, x, NULL, &o));
  else if (!strcmp(t, "and"))
    PD_TRY(pd_binary(c, "mul", x, y, NULL, &o));
  else if (!strcmp(t, "or"))
    PD_TRY(pd_binary(c, "maximum", x, y, NULL, &o));
  else { /* xor: (x - y)^2 */
    PD_TRY(pd_binary(c, "sub", x, y, NULL, &o));
    PD_TRY(pd_binary(c, "mul", o, o, NULL, &o));
  }
  PD_TRY(pd_binary(c, "equal", o, one, NULL, &o));
  return pd_set_out(c, "Out", o);
}

/* reduce_all = reduce_min, reduce_any = reduce_max, over 0/1 floats. */
dy_status pd_import_reduce_bool(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (pd_type(c, x)->dtype != DY_BOOL)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s of a %s tensor", c->op->type,
                   dy_dtype_name(pd_type(c, x)->dtype));
  PD_TRY(cast_to(c, x, DY_F32, NULL, &x));
  bool all = strcmp(c->op->type, "reduce_all") == 0;
  PD_TRY(pd_reduce_as(c, all ? "reduce_min" : "reduce_max", x, NULL, &o));
  return cast_to(c, o, DY_BOOL, pd_out_name(c, "Out"), &o);
}

/* not_equal, greater_equal, less_equal: the negation of equal, less,
 * greater (Paddle's elementwise axis rule through the EW family). */
dy_status pd_import_negated_compare(pd_ctx *c) {
  const char *t = c->op->type;
  const char *dy = !strcmp(t, "not_equal") ? "equal" : !strcmp(t, "greater_equal") ? "less"
                                                                                 : "greater";
  const pd_op_def *row = c->def, neg = {.type = t, .dy = dy, .family = PD_FAM_EW};
  c->def = &neg;
  dy_status s = pd_import_ew(c);
  c->def = row;
  PD_TRY(s);
  int v = dy_program_find_var(c->p, pd_out_name(c, "Out")), f, o;
  uint8_t no = 0;
  PD_TRY(pd_const(c, DY_BOOL, 0, (int64_t[]){1}, &no, NULL, &f));
  return pd_binary(c, "equal", v, f, pd_out_name(c, "Out"), &o);
}

/* tril_triu (lower, diagonal): X where j - i <= diagonal (lower) or
 * j - i >= diagonal (upper) over the last two dims (static), else 0. */
dy_status pd_import_tril_triu(pd_ctx *c) {
  int x, o, m, z;
  PD_TRY(pd_in(c, "X", 0, &x));
  const dy_type *t = pd_type(c, x);
  if (t->rank < 2 || t->shape[t->rank - 1] < 0 || t->shape[t->rank - 2] < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "tril_triu needs static last two dims");
  int64_t R = t->shape[t->rank - 2], C = t->shape[t->rank - 1], n = 0;
  int64_t d = pd_attr_i(c, "diagonal", 0);
  bool lower = pd_attr_b(c, "lower", true);
  PD_TRY(pd_checked_numel(c, (int64_t[]){R, C}, 2, "tril_triu's mask", &n));
  uint8_t *mask = malloc((size_t)(n ? n : 1));
  if (!mask)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++)
      mask[i * C + j] = lower ? j - i <= d : j - i >= d;
  dy_status s = pd_const(c, DY_BOOL, 2, (int64_t[]){R, C}, mask, NULL, &m);
  free(mask);
  PD_TRY(s);
  int64_t zi = 0;
  float zf = 0;
  PD_TRY(pd_const(c, t->dtype, 0, (int64_t[]){1}, t->dtype == DY_F32 ? (void *)&zf : &zi, NULL,
                  &z));
  return pd_op(c, "where", (int[]){m, x, z}, 3, NULL, 0, pd_out_name(c, "Out"), &o);
}
