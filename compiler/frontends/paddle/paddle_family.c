/* paddle_family.c - the two families of Paddle ops that map one to one
 * onto an op of the table, both ways, from their row of the op table
 * (paddle_table.c):
 *
 *   XO  X -> Out: the row's op on X, each attribute of the row read by its
 *       Paddle name and kind (absent: Paddle's default) into the op's
 *       attribute, and written back the same way; a row attribute the op
 *       lacks (dy NULL) is only written, with its fixed value; a row of a
 *       *2 shape op also writes the XShape output
 *   EW  X, Y -> Out with Paddle's axis rule (elementwise_*, the
 *       comparisons): the lower-rank operand's dims sit at `axis` of the
 *       other's (-1: trailing), trailing 1-dims of it trimmed when they
 *       would overhang; it is unsqueezed to the full rank, then numpy
 *       broadcasting. The exporter writes axis -1 (numpy broadcasting).
 *
 * Below the op families (paddle_math.c's arg_max builds through
 * pd_import_mapped); calls paddle_build.c, paddle_params.c, paddle_desc.c
 * and paddle_write.c.
 */
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* import                                                              */
/* ------------------------------------------------------------------ */

dy_status pd_no_tensor_attrs(pd_ctx *c) {
  const pd_op_def *d = c->def;
  for (size_t i = 0; i < sizeof d->attrs / sizeof *d->attrs && d->attrs[i].pd; i++)
    for (int k = 0; k < 2 && d->attrs[i].tensor[k]; k++)
      PD_TRY(pd_no_input(c, d->attrs[i].tensor[k], d->attrs[i].pd));
  return DY_OK;
}

dy_status pd_import_mapped(pd_ctx *c, int x) {
  const pd_op_def *d = c->def;
  size_t n_map = sizeof d->attrs / sizeof *d->attrs;
  PD_TRY(pd_no_tensor_attrs(c));
  dy_attr a[sizeof d->attrs / sizeof *d->attrs];
  int64_t ints[sizeof d->attrs / sizeof *d->attrs][DY_MAX_DIMS];
  int na = 0;
  for (size_t i = 0; i < n_map && d->attrs[i].pd; i++) {
    const pd_attr_map *m = &d->attrs[i];
    if (!m->dy)
      continue;
    if (m->kind == PD_A_FLOAT) {
      a[na++] = DY_ATTR_F(m->dy, pd_attr_f(c, m->pd, m->value));
    } else if (m->kind == PD_A_BOOLEAN) {
      a[na++] = DY_ATTR_I(m->dy, pd_attr_b(c, m->pd, m->value != 0));
    } else if (m->kind == PD_A_INTS) {
      int n = pd_attr_ints(c, m->pd, ints[na], DY_MAX_DIMS);
      a[na] = DY_ATTR_IS(m->dy, ints[na], n < 0 ? 0 : n);
      na++;
    } else {
      a[na++] = DY_ATTR_I(m->dy, pd_attr_i(c, m->pd, (int64_t)m->value));
    }
  }
  int o;
  return pd_op(c, d->dy, &x, 1, a, na, pd_out_name(c, "Out"), &o);
}

dy_status pd_import_xo(pd_ctx *c) {
  int x;
  PD_TRY(pd_in(c, "X", 0, &x));
  return pd_import_mapped(c, x);
}

/* Paddle's axis rule: the lower-rank operand's dims sit at `axis` of the
 * other's. Returns it unsqueezed to the full rank (or as it is when numpy
 * broadcasting already lines it up). */
static dy_status align(pd_ctx *c, int small, int big_rank, int64_t axis, int *out) {
  const dy_type *t = pd_type(c, small);
  int sr = t->rank;
  *out = small;
  if (axis < 0)
    axis = big_rank - sr;
  /* trailing 1s that would overhang are dropped */
  int64_t drop[DY_MAX_DIMS];
  int nd = 0;
  while (sr > 0 && axis + sr > big_rank && t->shape[sr - 1] == 1)
    drop[nd++] = --sr;
  if (axis < 0 || axis + sr > big_rank)
    return pd_fail(c, DY_STATUS_SHAPE_MISMATCH, "axis %lld does not fit ranks %d and %d",
                   (long long)axis, big_rank, t->rank);
  if (nd)
    PD_TRY(pd_squeeze(c, small, nd, drop, NULL, out));
  if (axis + sr == big_rank)
    return DY_OK;
  /* trailing 1s; numpy broadcasting adds the leading ones */
  int64_t axes[DY_MAX_DIMS];
  int na = 0;
  for (int64_t d = axis + sr; d < big_rank; d++, na++)
    axes[na] = sr + na;
  return pd_unsqueeze(c, *out, na, axes, NULL, out);
}

dy_status pd_import_ew(pd_ctx *c) {
  int x, y, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "Y", 0, &y));
  int64_t axis = pd_attr_i(c, "axis", -1);
  int rx = pd_type(c, x)->rank, ry = pd_type(c, y)->rank;
  if (axis != -1 && rx != ry) {
    if (ry < rx)
      PD_TRY(align(c, y, rx, axis, &y));
    else
      PD_TRY(align(c, x, ry, axis, &x));
  }
  return pd_binary(c, c->def->dy, x, y, pd_out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* export                                                              */
/* ------------------------------------------------------------------ */

/* Op o's attribute name: its own, else the op table's default. */
static const dy_attr *attr_of(const dy_op *o, const char *name) {
  const dy_attr *a = dy_op_find_attr(o, name);
  const dy_attr_schema *e = a ? NULL : dy_attr_schema_find(o->kind, name);
  return a ? a : e ? &e->dflt : NULL;
}

dy_status pd_export_xo(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  PdOp *op = pdx_xo(x, b, d->type, pdx_vname(x, o->inputs[0]), pdx_vname(x, o->outputs[0]));
  if (d->xshape)
    pdx_xshape(x, b, op, o->inputs[0]);
  for (size_t i = 0; i < sizeof d->attrs / sizeof *d->attrs && d->attrs[i].pd; i++) {
    const pd_attr_map *m = &d->attrs[i];
    const dy_attr *a = m->dy ? attr_of(o, m->dy) : NULL;
    if (m->dy && !a)
      return dy_error_at(x->err, o, DY_STATUS_INTERNAL, "export to Paddle: %s has no "
                         "attribute '%s' (paddle_table.c)", dy_op_name(o->kind), m->dy);
    if (m->kind == PD_A_FLOAT)
      pdx_at_f(x, op, m->pd, a ? a->f : m->value);
    else if (m->kind == PD_A_BOOLEAN)
      pdx_at_b(x, op, m->pd, a ? a->i != 0 : m->value != 0);
    else if (m->kind == PD_A_INTS)
      pdx_at_ints(x, op, m->pd, a ? a->ints : NULL, a ? a->n : 0);
    else
      pdx_at_i(x, op, m->pd, a ? a->i : (int64_t)m->value);
  }
  return DY_OK;
}

dy_status pd_export_ew(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  PdOp *op = pdx_op(x, b, d->type);
  pdx_arg(x, op, false, "X", pdx_vname(x, o->inputs[0]));
  pdx_arg(x, op, false, "Y", pdx_vname(x, o->inputs[1]));
  pdx_arg(x, op, true, "Out", pdx_vname(x, o->outputs[0]));
  pdx_at_i(x, op, "axis", -1);
  return DY_OK;
}
