/* bind.c - floor 3: the tables at the end of NAME.c (NAME_inputs,
 * NAME_outputs and NAME_state: name, dtype, rank, shape each) and, for a
 * Program with size symbols other than the batch, NAME_bind (each symbol's
 * value from the inputs' shapes) and NAME_output_shape. */
#include <stdio.h>

#include "cg_program.h"
#include "dy_lod.h"
/* One row of a tensor table: name, dtype, rank, shape. */
static void put_info(dy_buf *out, const dy_var *v) {
  dy_buf_puts(out, "  {");
  dy_buf_put_cstring(out, v->name);
  dy_buf_printf(out, ", %d, %d, ", (int)v->type.dtype, v->type.rank);
  cg_put_shape_list(out, &v->type);
  dy_buf_puts(out, "},\n");
}


/* A Program with size symbols other than the batch: NAME_bind derives
 * every symbol's value from the inputs' shapes (the first input dim that is
 * the symbol alone or plus a constant: a LoD input's offsets, batch+1), then checks each input dim against its expression and
 * each symbol against its bound; NAME_output_shape gives an output's shape
 * at those values; NAME_run_v takes them as dims[]. */
dy_status cg_emit_bind(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  char nm[DY_SYM_NAME_MAX + 8], up[DY_SYM_NAME_MAX + 8], ex[256];
  dy_buf_printf(out, "int %s_bind(const int64_t *const shapes[], int64_t *dims) {\n", L);
  dy_buf_puts(out, "  int64_t batch = -1");
  for (int k = 0; k < g->n_named; k++)
    if (cg_sym_rt(g, g->named[k]))
      dy_buf_printf(out, ", %s = %s_MAX_DIM_%s", dy_cg_sym_cname(g->named[k], nm, sizeof nm), U,
                    cg_sym_upper(g->named[k], up, sizeof up));
    else
      dy_buf_printf(out, ", %s = -1", dy_cg_sym_cname(g->named[k], nm, sizeof nm));
  dy_buf_puts(out, ";\n");
  if (g->rt_mask)
    dy_buf_puts(out, "  /* a size a kernel sets is at its bound until the run: the outputs'\n"
                     "   * shapes at these dims are the buffers' sizes */\n");
  dy_buf_printf(out, "  if (!shapes || !dims)\n    return %s_ERR_ARG;\n", U);
  for (int i = 0; i < p->n_feeds; i++)
    dy_buf_printf(out, "  if (!shapes[%d])\n    return %s_ERR_ARG;\n", i, U);
  dy_buf_puts(out, "  /* each symbol from the first input dim that is the symbol alone */\n");
  uint64_t bound = 0;
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_type *t = &p->vars[p->feeds[i]]->type;
    for (int d = 0; d < t->rank; d++) {
      int sy;
      int64_t c; /* the dim is sy + c: a LoD input's offsets are batch+1 */
      if (!dy_dim_sym_plus(t->shape[d], &sy, &c) || (bound >> sy & 1))
        continue;
      bound |= (uint64_t)1 << sy;
      if (c)
        dy_buf_printf(out, "  %s = shapes[%d][%d] - %lld;\n", dy_cg_sym_cname(sy, nm, sizeof nm),
                      i, d, (long long)c);
      else
        dy_buf_printf(out, "  %s = shapes[%d][%d];\n", dy_cg_sym_cname(sy, nm, sizeof nm), i,
                      d);
    }
  }
  uint64_t need = g->sym_mask;
  if ((need & ~bound & ~g->rt_mask) >> 1) {
    for (int k = 0; k < g->n_named; k++)
      if (!(bound >> g->named[k] & 1) && !cg_sym_rt(g, g->named[k]))
        return dy_error_set(g->err, DY_STATUS_UNSUPPORTED,
                            "codegen: size symbol '%s' is no input's dim alone, so the "
                            "generated code cannot find its value (pin it with --dim %s=N)",
                            dy_sym_name(g->named[k]), dy_sym_name(g->named[k]));
  }
  if (!(bound & 1))
    dy_buf_puts(out, "  batch = 1; /* no input dim is the batch */\n");
  dy_buf_printf(out, "  if (batch < 1 || batch > %s_MAX_BATCH)\n    return %s_ERR_BATCH;\n", U, U);
  for (int k = 0; k < g->n_named; k++)
    if (!cg_sym_rt(g, g->named[k]))
      dy_buf_printf(out, "  if (%s < 1 || %s > %s_MAX_DIM_%s)\n    return %s_ERR_SHAPE;\n",
                    dy_cg_sym_cname(g->named[k], nm, sizeof nm), nm, U,
                    cg_sym_upper(g->named[k], up, sizeof up), U);
  dy_buf_puts(out, "  /* every input dim equals its size */\n");
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_type *t = &p->vars[p->feeds[i]]->type;
    for (int d = 0; d < t->rank; d++)
      if (dy_dim_single_sym(t->shape[d]) < 0 || t->shape[d] >= 0)
        dy_buf_printf(out, "  if (shapes[%d][%d] != %s)\n    return %s_ERR_SHAPE;\n", i, d,
                      dy_cg_dim_expr(t->shape[d], ex, sizeof ex), U);
      else
        dy_buf_printf(out, "  if (shapes[%d][%d] != %s)\n    return %s_ERR_SHAPE;\n", i, d,
                      dy_cg_sym_cname(dy_dim_single_sym(t->shape[d]), ex, sizeof ex), U);
  }
  dy_buf_puts(out, "  dims[0] = batch;\n");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, "  dims[%d] = %s;\n", k + 1, dy_cg_sym_cname(g->named[k], nm, sizeof nm));
  dy_buf_printf(out, "  return %s_OK;\n}\n\n", U);

  /* NAME_output_shape */
  dy_buf_printf(out, "void %s_output_shape(int i, const int64_t *dims, int64_t *shape) {\n", L);
  dy_buf_puts(out, "  const int64_t batch = dims[0]");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, ", %s = dims[%d]", dy_cg_sym_cname(g->named[k], nm, sizeof nm), k + 1);
  dy_buf_puts(out, ";\n  (void)batch;\n");
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, "  (void)%s;\n", dy_cg_sym_cname(g->named[k], nm, sizeof nm));
  dy_buf_puts(out, "  switch (i) {\n");
  for (int i = 0; i < p->n_fetches; i++) {
    const dy_type *t = &p->vars[p->fetches[i]]->type;
    dy_buf_printf(out, "  case %d:\n", i);
    for (int d = 0; d < t->rank; d++)
      dy_buf_printf(out, "    shape[%d] = %s;\n", d, dy_cg_dim_expr(t->shape[d], ex, sizeof ex));
    dy_buf_puts(out, "    break;\n");
  }
  dy_buf_puts(out, "  default:\n    break;\n  }\n}\n\n");
  return DY_OK;
}

/* The tables NAME_state (with state), NAME_inputs and NAME_outputs. */
void cg_emit_tables(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  if (g->state_bytes > 0) {
    dy_buf_printf(out, "const %s_tensor_info %s_state[%s_NUM_STATE] = {\n", g->lower, g->lower,
                  g->upper);
    for (int i = 0; i < p->n_vars; i++)
      if (g->soff[i])
        put_info(out, p->vars[i]);
    dy_buf_puts(out, "};\n");
  }
  for (int t = 0; t < 2; t++) {
    int n = t ? p->n_fetches : p->n_feeds;
    const int *ids = t ? p->fetches : p->feeds;
    dy_buf_printf(out, "const %s_tensor_info %s_%s[%d] = {\n", g->lower, g->lower,
                  t ? "outputs" : "inputs", n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
      put_info(out, p->vars[ids[i]]);
    if (n == 0)
      dy_buf_puts(out, "  {NULL, 0, 0, {0}}, /* none; C has no empty arrays */\n");
    dy_buf_puts(out, "};\n");
  }
}
