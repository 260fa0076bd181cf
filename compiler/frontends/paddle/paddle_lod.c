/* paddle_lod.c - LoD sequences (import only): a LoD feed becomes two
 * Program inputs, its values NAME (dim 0 the total length, the size
 * symbol "<feed>_len", bounded by --max-dim) and its level-0 offsets
 * NAME@lod (i64 [batch+1]: the batch is the sequence count). The context
 * keeps which Paddle names carry which offsets: a feed's, then every
 * output whose VarDesc has a LoD takes its first LoD input's (Paddle's
 * row-wise ops keep the LoD: lookup_table, mul, elementwise, tanh, lstm).
 * The sequence ops read their input's offsets as a second operand
 * (ir/ops_lod.def).
 */
#include <ctype.h>
#include <string.h>

#include "paddle_internal.h"

/* ---- the LoD map ---- */

static int lod_of(const pd_ctx *c, const char *name) {
  for (int i = c->n_lod - 1; i >= 0; i--)
    if (strcmp(c->lod_name[i], name) == 0)
      return c->lod_var[i];
  return -1;
}

static dy_status set_lod(pd_ctx *c, const char *name, int var) {
  if (c->n_lod == PD_MAX_LOD)
    return pd_fail(c, DY_STATUS_LIMIT, "more than %d LoD tensors", PD_MAX_LOD);
  c->lod_name[c->n_lod] = name;
  c->lod_var[c->n_lod++] = var;
  return DY_OK;
}

/* The offsets of input slot[0], or an error naming the slot. */
static dy_status lod_in(pd_ctx *c, const char *slot, int *off) {
  const char *nm = pd_arg(c, false, slot, 0);
  *off = nm ? lod_of(c, nm) : -1;
  if (*off < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "input %s '%s' carries no LoD (its sequence "
                   "offsets come from a LoD feed through row-wise ops)", slot, nm ? nm : "");
  return DY_OK;
}

dy_status pd_lod_feed_type(pd_ctx *c, const char *name, dy_type *t) {
  const PdVar *vd = pd_var_desc(c, name);
  if (pd_lod_level(vd) != 1 || t->rank < 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s' is a LoD tensor of level %d and "
                   "rank %d: only level-1 LoD feeds of rank >= 1 are supported", name,
                   pd_lod_level(vd), t->rank);
  if (t->shape[0] >= 0)
    return DY_OK;
  char sym[DY_SYM_NAME_MAX];
  int n = snprintf(sym, sizeof sym, "%s%.24s", isdigit((unsigned char)name[0]) ? "_" : "",
                   name);
  for (int k = 0; k < n && sym[k]; k++)
    if (!isalnum((unsigned char)sym[k]))
      sym[k] = '_';
  snprintf(sym + strlen(sym), sizeof sym - strlen(sym), "_len");
  t->shape[0] = dy_dim_sym(sym);
  if (t->shape[0] == DY_DIM_NONE)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s': no size symbol '%s'", name, sym);
  return dy_program_declare_sym(c->p, sym, 0, c->err);
}

dy_status pd_lod_feed_offsets(pd_ctx *c, const char *name) {
  char nm[300];
  snprintf(nm, sizeof nm, "%.280s@lod", name);
  dy_type t = {.dtype = DY_I64, .rank = 1};
  if (!dy_dim_add_const(DY_DIM_BATCH, 1, &t.shape[0]))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s': no dim batch+1", name);
  int id = pd_define(c, nm, &t);
  if (id < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "feed '%s' is defined twice", nm);
  PD_TRY(dy_program_add_feed(c->p, id, c->err));
  return set_lod(c, name, id); /* name: the OpDesc's, alive while importing */
}

dy_status pd_lod_propagate(pd_ctx *c) {
  int from = -1;
  for (size_t i = 0; i < c->op->n_inputs && from < 0; i++)
    for (size_t k = 0; k < c->op->inputs[i]->n_arguments && from < 0; k++)
      from = lod_of(c, c->op->inputs[i]->arguments[k]);
  if (from < 0)
    return DY_OK;
  for (size_t i = 0; i < c->op->n_outputs; i++)
    for (size_t k = 0; k < c->op->outputs[i]->n_arguments; k++) {
      const char *nm = c->op->outputs[i]->arguments[k];
      if (nm && pd_lod_level(pd_var_desc(c, nm)) > 0 && lod_of(c, nm) < 0)
        PD_TRY(set_lod(c, nm, from));
    }
  return DY_OK;
}

/* ---- the sequence ops ---- */

/* sequence_pool(X; pooltype, pad_value) -> Out (MaxIndex is training's) */
PD_IMPORTER(sequence_pool) {
  int x, off, out;
  char pt[32];
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(lod_in(c, "X", &off));
  pd_attr_s(c, "pooltype", "AVERAGE", pt, sizeof pt);
  dy_attr a[DY_SEQUENCE_POOL_NATTRS];
  int n_a = dy_sequence_pool_attrs_put(
      &(dy_sequence_pool_attrs){.pooltype = pt, .pad_value = pd_attr_f(c, "pad_value", 0)}, a);
  return pd_op(c, "sequence_pool", (int[]){x, off}, 2, a, n_a, pd_out_name(c, "Out"), &out);
}
