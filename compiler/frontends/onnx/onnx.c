/* onnx.c - the ONNX frontend's dispatcher: a ModelProto (onnx.proto, read
 * with the protobuf-c code generated at build time) to a verified
 * dy_program. It sits on top of the other onnx_*.c (onnx_internal.h lists
 * them from the top down): it walks the graph and calls the mappers, which
 * call only the files below them.
 *
 * How it works. The model is unpacked whole; the default domain's opset
 * (1..18) picks per-version attribute defaults. Initializers become
 * constants (onnx_tensor.c), graph inputs that are not initializers become feeds (the
 * batch's dim_param, or a dim with no value, is the dynamic batch: -1; any
 * other dim_param a size symbol, ir/core/dims.c). The nodes
 * are then imported in order, each as the row of its op type in the
 * one-to-one table (onnx_table.c) or by its family's mapper (onnx_ops.c,
 * onnx_math.c, onnx_shape.c, onnx_nn.c, onnx_image.c, onnx_seq.c,
 * onnx_control.c, onnx_quant.c), which
 * builds ops through ox_op() (onnx_op.c): an op whose inputs are all
 * constants is computed at once with the runtime's reference kernels (so a Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape chain on static shapes folds
 * away, and its result becomes Reshape's attribute), anything else is
 * appended to the Program. Constants become persistable vars only when a
 * run-time op reads them. The graph's outputs become fetches under their
 * ONNX names. The result is verified. Sub-graphs (If branches, Loop and
 * Scan bodies) are imported inline by import_subgraph, their names
 * scoped to one import, which is how onnx_control.c unrolls them; the
 * mappers reach it through the context (ox_ctx.import_subgraph), the one
 * call that goes back up.
 *
 * Symbolic sizes inside shape arithmetic: Shape of a tensor with symbolic
 * dims gives a "shape value" whose entries hold them (onnx_internal.h);
 * data-movement ops carry them, Add/Sub/Mul/Div compute size expressions
 * (batch * heads), Reshape maps them back to 0 (copy the input's dim) or
 * -1 (infer), Expand to -1 (keep), Slice's end to "the whole axis". Every
 * other use is one clear error naming the node.
 *
 * Errors. Every failure is one message naming the model and, inside the
 * graph, the node (index, name, op type): DY_STATUS_FORMAT for a file that
 * is not ONNX or is truncated, DY_STATUS_UNSUPPORTED for an op, dtype,
 * attribute or opset we do not implement.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* the model                                                           */
/* ------------------------------------------------------------------ */

/* Dim i of a graph input's shape: its dim_param, "" when it has none (a
 * dim without a value), NULL when it is static. */
static const char *dim_param_of(const Onnx__TensorShapeProto__Dimension *d) {
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
    return NULL;
  return d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param
             ? d->dim_param
             : "";
}

/* Which dim_param is the batch: one named like a batch ("batch",
 * "batch_size", "N", ...), else the first on a dim 0, else the first met.
 * NULL when the inputs have none. */
static const char *batch_param(const Onnx__GraphProto *g) {
  static const char *const names[] = {"batch", "batch_size", "batchsize", "n", "b", "bsz",
                                      "N", "B", "Batch", "BATCH"};
  const char *first0 = NULL, *first = NULL;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__TypeProto *tp = g->input[i]->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
        !tp->tensor_type->shape)
      continue;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    for (size_t d = 0; d < sh->n_dim; d++) {
      const char *pm = dim_param_of(sh->dim[d]);
      if (!pm || !*pm)
        continue;
      for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (strcmp(pm, names[k]) == 0)
          return pm;
      if (!first0 && d == 0)
        first0 = pm;
      if (!first)
        first = pm;
    }
  }
  return first0 ? first0 : first;
}

/* A dim_param as a size symbol's name: [A-Za-z0-9_] kept, any other
 * character '_', a leading digit prefixed with "d_", at most 31 chars. */
static void symbol_name(const char *param, char *buf, size_t n) {
  size_t k = 0;
  if (*param >= '0' && *param <= '9')
    k = (size_t)snprintf(buf, n, "d_");
  for (const char *q = param; *q && k + 1 < n && k + 1 < DY_SYM_NAME_MAX; q++)
    buf[k++] = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')
                   ? *q
                   : '_';
  buf[k] = '\0';
}

/* A graph input's type: elem type and dims. The batch's dim_param (and a
 * dim with no value) is the batch, -1; every other dim_param a size
 * symbol of its (sanitised) name, the same name the same symbol. */
static dy_status input_type(ox_ctx *c, const Onnx__ValueInfoProto *vi,
                            const char *batch_name, dy_type *t) {
  const char *nm = vi->name ? vi->name : "";
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph input '%s' is not a tensor (sequences, maps and optionals "
                   "are not supported)", nm);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int et = tt->has_elem_type ? tt->elem_type : 0;
  if (!dy_onnx_dtype(et, &t->dtype))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph input '%s' has dtype %s (dy2stc has float32, int64, int32, int8, uint8 and bool)",
                   nm, ox_dtype_name(et));
  if (!tt->shape)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph input '%s' has no shape", nm);
  if (tt->shape->n_dim > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph input '%s' has rank %zu (at most %d)",
                   nm, tt->shape->n_dim, DY_MAX_DIMS);
  t->rank = (int)tt->shape->n_dim;
  for (int i = 0; i < t->rank; i++) {
    const char *param = dim_param_of(tt->shape->dim[i]);
    if (!param) {
      t->shape[i] = tt->shape->dim[i]->dim_value;
      continue;
    }
    if (!*param || (batch_name && strcmp(param, batch_name) == 0)) {
      t->shape[i] = -1;
      continue;
    }
    char sn[DY_SYM_NAME_MAX];
    symbol_name(param, sn, sizeof sn);
    if (strcmp(sn, "batch") == 0)
      snprintf(sn, sizeof sn, "batch_");
    dy_status s = dy_program_declare_sym(c->p, sn, 0, c->err);
    if (s)
      return ox_fail(c, s, "graph input '%s': dim_param '%s': %s", nm, param, c->err->msg);
    t->shape[i] = dy_dim_sym(sn);
  }
  return DY_OK;
}

/* The declared dtype (and static dims) of a graph output against ours. */
static dy_status check_output(ox_ctx *c, const Onnx__ValueInfoProto *vi,
                              const ox_value *v) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return DY_OK;
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  dy_dtype dt;
  if (tt->has_elem_type && tt->elem_type && !dy_onnx_dtype(tt->elem_type, &dt))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph output '%s' has dtype %s (dy2stc has float32, int64, int32, int8, uint8 and bool)",
                   vi->name, ox_dtype_name(tt->elem_type));
  if (tt->has_elem_type && tt->elem_type && dt != v->type.dtype)
    return ox_fail(c, DY_STATUS_INTERNAL, "graph output '%s' is declared %s, computed %s",
                   vi->name, ox_dtype_name(tt->elem_type), dy_dtype_name(v->type.dtype));
  if (tt->shape) {
    char a[128];
    bool ok = (int)tt->shape->n_dim == v->type.rank;
    for (int i = 0; ok && i < v->type.rank; i++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
          v->type.shape[i] >= 0)
        ok = d->dim_value == v->type.shape[i];
    }
    if (!ok)
      return ox_fail(c, DY_STATUS_SHAPE_MISMATCH,
                     "graph output '%s': computed %s, which does not match the declared "
                     "shape", vi->name, dy_type_str(&v->type, a, sizeof a));
  }
  return DY_OK;
}

/* The mapper of an ONNX op type in the family tables; NULL if none has
 * it (the one-to-one ops are onnx_table.c's rows). */
static ox_map_fn find_mapper(const char *op_type) {
  static const ox_mapper *const tables[] = {ox_mappers_ops, ox_mappers_math,
                                            ox_mappers_shape, ox_mappers_nn,
                                            ox_mappers_image, ox_mappers_seq,
                                            ox_mappers_control, ox_mappers_quant,
                                            ox_mappers_unique, ox_mappers_sequence};
  for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
    for (const ox_mapper *m = tables[t]; m->op_type; m++)
      if (strcmp(m->op_type, op_type) == 0)
        return m->map;
  return NULL;
}

static dy_status import_node(ox_ctx *c) {
  const Onnx__NodeProto *n = c->node;
  if (!n->op_type)
    return ox_fail(c, DY_STATUS_FORMAT, "node without an op type");
  if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "domain '%s' is not supported", n->domain);
  for (size_t i = 0; i < n->n_input; i++)
    if (n->input[i][0] && !ox_lookup(c, n->input[i]))
      return ox_fail(c, DY_STATUS_FORMAT,
                     "input '%s' is not defined before use (not an initializer, graph "
                     "input or earlier node output)", n->input[i]);
  const ox_direct *d = ox_find_direct(n->op_type);
  ox_map_fn f = d ? NULL : find_mapper(n->op_type);
  if (!d && !f)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "op type %s is not supported", n->op_type);
  dy_status s = d ? ox_map_direct(c, d) : f(c);
  if (s)
    return s;
  for (size_t i = 0; i < n->n_output; i++)
    if (n->output[i][0] && !ox_lookup(c, n->output[i]))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "output %zu ('%s') is not supported", i,
                     n->output[i]);
  return DY_OK;
}

/* ox_ctx.import_subgraph (onnx_internal.h): sub-graph g inline, its names
 * scoped to this import. Recursive through import_node: a body may hold
 * an If or a Loop, whose mapper calls back here through the context. */
static dy_status import_subgraph(ox_ctx *c, const Onnx__GraphProto *g, const char *what,
                                 ox_value *const *in, int n_in, ox_value **out, int n_out) {
  dy_status s = DY_OK;
  if ((int)g->n_input != n_in || (int)g->n_output != n_out)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT,
                   "%s has %zu inputs and %zu outputs, the node gives %d and takes %d", what,
                   g->n_input, g->n_output, n_in, n_out);
  if (g->n_sparse_initializer || c->scope_depth >= 8)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s: sparse initializers or sub-graphs nested "
                   "deeper than 8", what);
  /* the outer node, restored afterwards */
  const Onnx__NodeProto *node = c->node;
  int index = c->node_index;
  dy_srcloc loc = c->loc;
  size_t mark = c->n_scoped;
  c->scope_depth++;
  for (size_t i = 0; !s && i < g->n_initializer; i++) {
    ox_const *k;
    char w[300];
    snprintf(w, sizeof w, "%s: %s: initializer '%s'", c->path, what,
             g->initializer[i]->name ? g->initializer[i]->name : "");
    if ((s = ox_tensor_convert(g->initializer[i], w, c->dir, &k, c->err)))
      break;
    ox_value *v = ox_new_value(c, g->initializer[i]->name, &k->type);
    if (!v) {
      ox_free_const(k);
      s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    v->c = k;
    ox_update_sym(v);
    if (!g->initializer[i]->name || !ox_bind_scoped(c, g->initializer[i]->name, v))
      s = ox_fail(c, DY_STATUS_FORMAT, "%s: an initializer without a name", what);
  }
  for (int i = 0; !s && i < n_in; i++)
    if (!g->input[i]->name || !ox_bind_scoped(c, g->input[i]->name, in[i]))
      s = ox_fail(c, DY_STATUS_FORMAT, "%s: input %d has no name", what, i);
  for (size_t i = 0; !s && i < g->n_node; i++) {
    c->node = g->node[i];
    c->node_index = (int)i;
    c->node_serial++;
    if ((s = import_node(c)))
      dy_error_prefix(c->err, "in %s of node %d (%s)", what, index,
                      node->op_type ? node->op_type : "?");
  }
  c->node = node;
  c->node_index = index;
  c->loc = loc;
  for (int i = 0; !s && i < n_out; i++) {
    const char *nm = g->output[i]->name ? g->output[i]->name : "";
    out[i] = ox_lookup(c, nm);
    if (!out[i])
      s = ox_fail(c, DY_STATUS_FORMAT, "%s: output '%s' is never computed", what, nm);
  }
  /* close the scope: unbind what it bound */
  ox_unbind_since(c, mark);
  c->scope_depth--;
  return s;
}

/* Fetch value v under the ONNX output name. */
static dy_status add_output(ox_ctx *c, const char *name, ox_value *v) {
  dy_program *p = c->p;
  dy_status s;
  if (v->sym)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph output '%s' is a shape that depends on the dynamic batch size", name);
  if (v->var < 0 && dy_program_find_var(p, name) < 0) {
    /* a constant output: a persistable var under the output's name */
    v->name = dy_program_strdup(p, name);
    if ((s = ox_materialize(c, v)))
      return s;
    return dy_program_add_fetch(p, v->var, c->err);
  }
  if ((s = ox_materialize(c, v)))
    return s;
  dy_var *var = p->vars[v->var];
  if (strcmp(var->name, name) == 0 && var->fetch_index < 0)
    return dy_program_add_fetch(p, v->var, c->err);
  /* another name (or fetched twice): copy through a reshape keeping dims */
  int64_t zeros[DY_MAX_DIMS] = {0};
  dy_attr a[DY_RESHAPE_NATTRS];
  int n_a = dy_reshape_attrs_put(&(dy_reshape_attrs){
      .given = DY_GIVEN_ALL, .shape = zeros, .n_shape = v->type.rank}, a);
  int out = dy_program_find_var(p, name) < 0 ? dy_program_add_var(p, name, &v->type) : -1;
  if (out < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph output name '%s' is used twice", name);
  if (!dy_program_append_op(p, 0, DY_OP_RESHAPE, &v->var, 1, &out, 1, a, n_a, c->loc))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return dy_program_add_fetch(p, out, c->err);
}

static dy_status import_graph(ox_ctx *c, const Onnx__ModelProto *m) {
  const Onnx__GraphProto *g = m->graph;
  dy_status s;
  /* opset of the default domain */
  c->opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (!o->domain || !*o->domain || strcmp(o->domain, "ai.onnx") == 0)
      c->opset = o->has_version ? o->version : 1;
  }
  if (c->opset < 0) {
    if (m->n_opset_import)
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "the model imports no opset of the default ONNX domain (only '%s')",
                     m->opset_import[0]->domain);
    c->opset = 1;
  }
  if (c->info)
    c->info->opset = c->opset;
  if (c->opset < 1 || c->opset > 18)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "opset %lld is not supported (1 to 18 are)",
                   (long long)c->opset);
  if (g->n_sparse_initializer)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "sparse initializers are not supported");

  /* initializers: constants */
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    char what[300];
    snprintf(what, sizeof what, "%s: initializer '%s'", c->path, t->name ? t->name : "");
    ox_const *k;
    if ((s = ox_tensor_convert(t, what, c->dir, &k, c->err)))
      return s;
    ox_value *v = ox_new_value(c, t->name, &k->type);
    if (!v) {
      ox_free_const(k);
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    v->c = k;
    v->weight = k->type.dtype == DY_F32;
    if (!t->name || !ox_bind(c, t->name, v))
      return ox_fail(c, DY_STATUS_FORMAT, "an initializer has no name");
  }
  /* graph inputs: feeds, unless an initializer or a bound constant */
  const char *batch_name = batch_param(g);
  int n_inputs = 0;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name || !*vi->name)
      return ox_fail(c, DY_STATUS_FORMAT, "graph input %zu has no name", i);
    if (ox_lookup(c, vi->name))
      continue;
    const dy_tensor *bound = NULL;
    for (int b = 0; c->opts && b < c->opts->n_bind; b++)
      if (strcmp(c->opts->bind_names[b], vi->name) == 0)
        bound = c->opts->bind_values[b];
    ox_value *v;
    if (bound) {
      v = ox_new_const(c, bound->type.dtype, bound->type.rank, bound->type.shape, bound->data);
      if (!v)
        return c->err->status;
      v->sym = false;
      v->name = dy_program_strdup(c->p, vi->name);
    } else {
      dy_type t = {0};
      if ((s = input_type(c, vi, batch_name, &t)))
        return s;
      int id = dy_program_add_var(c->p, vi->name, &t);
      if (id < 0)
        return ox_fail(c, DY_STATUS_FORMAT, "graph input name '%s' is used twice", vi->name);
      if (n_inputs >= DY_MAX_FEEDS)
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than %d graph inputs", DY_MAX_FEEDS);
      if ((s = dy_program_add_feed(c->p, id, c->err)))
        return s;
      v = ox_new_value(c, vi->name, &t);
      if (!v)
        return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      v->var = id;
      v->graph_input = (int)i;
      n_inputs++;
    }
    if (!ox_bind(c, vi->name, v))
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  /* nodes, in order (ONNX requires a topological order) */
  for (size_t i = 0; i < g->n_node; i++) {
    c->node = g->node[i];
    c->node_index = (int)i;
    c->node_serial++;
    c->loc = (dy_srcloc){c->path, (int)i + 1};
    if ((s = import_node(c)))
      return s;
  }
  c->node = NULL;
  /* outputs */
  if (!g->n_output)
    return ox_fail(c, DY_STATUS_FORMAT, "the graph has no outputs");
  if (g->n_output > DY_MAX_FEEDS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than %d graph outputs", DY_MAX_FEEDS);
  for (size_t i = 0; i < g->n_output; i++) {
    const char *nm = g->output[i]->name ? g->output[i]->name : "";
    ox_value *v = ox_lookup(c, nm);
    if (!v)
      return ox_fail(c, DY_STATUS_FORMAT, "graph output '%s' is never computed", nm);
    if ((s = check_output(c, g->output[i], v)) || (s = add_output(c, nm, v)))
      return s;
  }
  if ((s = dy_verify(c->p, c->err)))
    return dy_error_prefix(c->err, "%s: the imported Program does not verify", c->path);
  return DY_OK;
}

dy_status dy_onnx_load_ex(const char *path, const dy_onnx_options *opts,
                          dy_onnx_info *info, dy_program **out, dy_error *err) {
  *out = NULL;
  dy_error local = {0};
  if (!err)
    err = &local;
  if (info) {
    memset(info, 0, sizeof *info);
    info->needs_const_input = -1;
  }
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s)
    return s;
  Onnx__ModelProto *m = len ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
  free(buf);
  if (!m)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: not an ONNX model (the protobuf does not parse: not ONNX, "
                        "or truncated)", path);
  if (!m->graph || !m->has_ir_version) {
    onnx__model_proto__free_unpacked(m, NULL);
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: not an ONNX model (no graph or no ir_version)", path);
  }
  ox_ctx c = {.err = err, .opts = opts, .info = info, .import_subgraph = import_subgraph};
  c.p = dy_program_new();
  if (!c.p) {
    onnx__model_proto__free_unpacked(m, NULL);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  c.path = dy_program_strdup(c.p, path);
  char *dir = dy_program_strdup(c.p, path);
  char *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash)
    *slash = 0;
  c.dir = slash ? dir : ".";
  s = import_graph(&c, m);
  ox_free_values(&c);
  onnx__model_proto__free_unpacked(m, NULL);
  if (s) {
    /* messages built inside refer to the program's strings: keep them */
    dy_program_free(c.p);
    return s;
  }
  *out = c.p;
  return DY_OK;
}

dy_status dy_onnx_load(const char *path, dy_program **out, dy_error *err) {
  return dy_onnx_load_ex(path, NULL, NULL, out, err);
}
