/* onnx_export.c - the ONNX exporter's dispatcher: a Program as an ONNX
 * model (ModelProto, IR version 8, opset 17 of the default domain), which
 * dy_onnx_load reads back, ONNX Runtime runs and onnx.checker accepts.
 *
 *   - feeds are the graph's inputs, fetches its outputs, under the vars'
 *     names, with their types; a symbolic dim is a dim_param named as its
 *     size symbol ("batch" for the batch, which the importer reads back
 *     as the batch);
 *   - persistable vars are initializers under their names (raw data),
 *     written to a file beside the model (ONNX external data: location,
 *     offset, length) when they hold more than DY_ONNX_EXTERNAL_MIN bytes
 *     in all, or as the options say; small ones (< 1 KiB) stay inline;
 *   - each op of block 0 is written by onnx_export_ops.c, named as its
 *     output var (the importer names a node's one op after the node's
 *     output, so most of a Program reads back under the same names);
 *   - cond is an If whose branches are its blocks; while is a Loop: the
 *     condition block is written once before the Loop on the initial
 *     values (its names suffixed "/init") and once at the end of the
 *     Loop's body on the next values, so the body runs exactly while the
 *     condition holds. max_iterations > 0 is the Loop's trip count M
 *     (ONNX then stops where dy2stc reports an error).
 *
 * Both files are written whole or not at all (dy_write_files_atomic).
 */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* the name var v has in the graph being written: the var's, or with the
 * suffix while a block's copy is written under other names (the Loop's
 * initial condition) */
#define vname oxe_var_name

/* Identity of var v into a new name (a sub-graph's output must be made in
 * it, and every name of a model is made once) */
static const char *identity(oxe_ctx *x, int v, const char *stem) {
  const char *t = oxe_tmp(x, stem);
  const char *in = vname(x, v);
  oxe_node(x, "Identity", 1, &in, 1, &t);
  return t;
}

/* the ops of block b into x->cur */
static dy_status ops_of_block(oxe_ctx *x, int b);

/* a sub-graph of block b: its ops, then its results (copied by Identity
 * when the block does not make them) as the graph's outputs, after the
 * n_pre outputs named pre[] with types pre_t[] */
static Onnx__GraphProto *sub_graph(oxe_ctx *x, int b, const char *name, int n_pre,
                                   const char *const *pre, const dy_type *pre_t,
                                   dy_status *s) {
  oxe_graph *g = oxe_graph_new(x, name), *saved = x->cur;
  if (!g)
    return NULL;
  x->cur = g;
  *s = ops_of_block(x, b);
  const dy_block *bl = x->p->blocks[b];
  for (int i = 0; i < n_pre && !*s; i++)
    oxe_add_io(x, g, true, oxe_value_info(x, pre[i], &pre_t[i]));
  for (int i = 0; i < bl->n_results && !*s; i++) {
    int v = bl->results[i];
    bool made_here = false;
    for (int k = 0; k < bl->n_ops && !made_here; k++)
      for (int o = 0; o < bl->ops[k]->n_outputs; o++)
        made_here |= bl->ops[k]->outputs[o] == v;
    const char *nm = made_here ? vname(x, v) : identity(x, v, "result");
    oxe_add_io(x, g, true, oxe_value_info(x, nm, &x->p->vars[v]->type));
  }
  x->cur = saved;
  return g->g;
}

static dy_status export_cond(oxe_ctx *x, const dy_op *op) {
  dy_cond_attrs a = dy_cond_attrs_get(op);
  dy_status s = DY_OK;
  Onnx__GraphProto *t = sub_graph(x, (int)a.then_block, "then", 0, NULL, NULL, &s);
  Onnx__GraphProto *e = s ? NULL : sub_graph(x, (int)a.else_block, "else", 0, NULL, NULL, &s);
  if (s)
    return s;
  const char *outs[DY_MAX_FEEDS];
  if (op->n_outputs > DY_MAX_FEEDS)
    return oxe_refuse(x, "has too many outputs");
  for (int i = 0; i < op->n_outputs; i++)
    outs[i] = vname(x, op->outputs[i]);
  const char *pred = vname(x, op->inputs[0]);
  x->op = op;
  Onnx__NodeProto *n = oxe_node(x, "If", 1, &pred, op->n_outputs, outs);
  oxe_attr_g(x, n, "then_branch", t);
  oxe_attr_g(x, n, "else_branch", e);
  return DY_OK;
}

/* Identity of each var of from[] into the params of block b */
static void bind_params(oxe_ctx *x, int b, const char *const *from) {
  const dy_block *bl = x->p->blocks[b];
  for (int i = 0; i < bl->n_params; i++) {
    const char *to = vname(x, bl->params[i]);
    oxe_node(x, "Identity", 1, &from[i], 1, &to);
  }
}

static dy_status export_while(oxe_ctx *x, const dy_op *op) {
  dy_while_attrs a = dy_while_attrs_get(op);
  int n = (int)a.n_carried, cb = (int)a.cond_block, bb = (int)a.body_block;
  const dy_block *cbl = x->p->blocks[cb], *bbl = x->p->blocks[bb];
  if (n > DY_MAX_FEEDS - 2 || cbl->n_params != n || bbl->n_params != n ||
      bbl->n_results != n || cbl->n_results != 1)
    return oxe_refuse(x, "has blocks of a shape the exporter does not write");
  const char *names[DY_MAX_FEEDS];
  /* the initial condition: the condition block on the initial values,
   * under suffixed names */
  for (int i = 0; i < n; i++)
    names[i] = vname(x, op->inputs[i]);
  x->rename_block = cb;
  bind_params(x, cb, names);
  dy_status s = ops_of_block(x, cb);
  const char *c0 = s ? NULL : vname(x, cbl->results[0]);
  x->rename_block = -1;
  if (s)
    return s;
  /* the body: (iteration, condition, carried...) -> (condition, next...) */
  x->op = op;
  oxe_graph *g = oxe_graph_new(x, "body"), *saved = x->cur;
  if (!g)
    return DY_OK;
  x->cur = g;
  dy_type it = {.dtype = DY_I64, .rank = 0}, bt = x->p->vars[cbl->results[0]]->type;
  oxe_add_io(x, g, false, oxe_value_info(x, oxe_tmp(x, "iteration"), &it));
  oxe_add_io(x, g, false, oxe_value_info(x, oxe_tmp(x, "cond_in"), &bt));
  for (int i = 0; i < n; i++)
    oxe_add_io(x, g, false, oxe_value_info(x, vname(x, bbl->params[i]),
                                           &x->p->vars[bbl->params[i]]->type));
  s = ops_of_block(x, bb);
  const char *next[DY_MAX_FEEDS];
  for (int i = 0; i < n && !s; i++) {
    int v = bbl->results[i];
    next[i] = identity(x, v, "next");
  }
  if (!s) {
    bind_params(x, cb, next);
    s = ops_of_block(x, cb);
  }
  if (!s) {
    const char *c = identity(x, cbl->results[0], "cond_out");
    oxe_add_io(x, g, true, oxe_value_info(x, c, &bt));
    for (int i = 0; i < n; i++)
      oxe_add_io(x, g, true, oxe_value_info(x, next[i], &x->p->vars[bbl->results[i]]->type));
  }
  x->cur = saved;
  if (s)
    return s;
  x->op = op;
  const char *ins[DY_MAX_FEEDS], *outs[DY_MAX_FEEDS];
  ins[0] = a.max_iterations > 0 ? oxe_const_scalar(x, DY_I64, (double)a.max_iterations) : "";
  ins[1] = c0;
  for (int i = 0; i < n; i++)
    ins[2 + i] = vname(x, op->inputs[i]);
  for (int i = 0; i < op->n_outputs; i++)
    outs[i] = vname(x, op->outputs[i]);
  Onnx__NodeProto *node = oxe_node(x, "Loop", 2 + n, ins, op->n_outputs, outs);
  oxe_attr_g(x, node, "body", g->g);
  return DY_OK;
}

static dy_status ops_of_block(oxe_ctx *x, int b) {
  const dy_block *bl = x->p->blocks[b];
  for (int i = 0; i < bl->n_ops; i++) {
    const dy_op *op = bl->ops[i];
    x->op = op;
    dy_status s = op->kind == DY_OP_COND    ? export_cond(x, op)
                  : op->kind == DY_OP_WHILE ? export_while(x, op)
                                            : oxe_op(x, op);
    if (s)
      return s;
    if (x->oom)
      return dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "export to ONNX: out of memory");
  }
  return DY_OK;
}

static dy_status graph_of_block(oxe_ctx *x, int b, bool external) {
  const dy_program *p = x->p;
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    oxe_add_io(x, x->main, false, oxe_value_info(x, v->name, &v->type));
  }
  /* trainable weights are initializers; other constants Constant nodes,
   * which the importer reads back as constants that are not weights
   * (large ones initializers when their data goes to the data file) */
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!v->persistable || !v->data)
      continue;
    Onnx__TensorProto *t = oxe_tensor(x, v->name, &v->type, v->data);
    if (v->trainable || (external && t && t->raw_data.len >= 1024))
      oxe_add_init(x, t);
    else
      oxe_constant(x, t);
  }
  dy_status s = ops_of_block(x, b);
  if (s)
    return s;
  for (int i = 0; i < p->n_fetches; i++) {
    const dy_var *v = p->vars[p->fetches[i]];
    oxe_add_io(x, x->main, true, oxe_value_info(x, v->name, &v->type));
  }
  return DY_OK;
}

/* ---- external data ---- */

/* Move the initializers of at least 1 KiB into one buffer (*data, *n),
 * each at an offset aligned to 64 bytes, the TensorProtos pointing at
 * location (the data file's name, relative to the model). */
static dy_status externalize(oxe_ctx *x, const char *location, uint8_t **data, size_t *n) {
  Onnx__GraphProto *g = x->main->g;
  size_t total = 0;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->raw_data.len >= 1024)
      total += (g->initializer[i]->raw_data.len + 63) / 64 * 64;
  uint8_t *buf = calloc(1, total ? total : 1);
  if (!buf)
    return dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "export to ONNX: out of memory");
  size_t off = 0;
  for (size_t i = 0; i < g->n_initializer; i++) {
    Onnx__TensorProto *t = g->initializer[i];
    size_t len = t->raw_data.len;
    if (len < 1024)
      continue;
    memcpy(buf + off, t->raw_data.data, len);
    Onnx__StringStringEntryProto **e = oxe_alloc(x, sizeof *e * 3);
    const char *keys[3] = {"location", "offset", "length"};
    char vals[3][64];
    snprintf(vals[0], sizeof vals[0], "%s", "");
    snprintf(vals[1], sizeof vals[1], "%zu", off);
    snprintf(vals[2], sizeof vals[2], "%zu", len);
    for (int k = 0; e && k < 3; k++) {
      e[k] = oxe_alloc(x, sizeof **e);
      if (!e[k])
        break;
      *e[k] = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
      e[k]->key = oxe_str(x, keys[k]);
      e[k]->value = oxe_str(x, k ? vals[k] : location);
    }
    t->n_external_data = 3;
    t->external_data = e;
    t->has_data_location = true;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->has_raw_data = false;
    t->raw_data.len = 0;
    t->raw_data.data = NULL;
    off += (len + 63) / 64 * 64;
  }
  *data = buf;
  *n = total;
  return x->oom ? dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "export to ONNX: out of memory")
                : DY_OK;
}

static bool wants_external(const dy_program *p, const dy_onnx_save_options *o) {
  if (o && o->external_data)
    return o->external_data > 0;
  size_t total = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->persistable && p->vars[i]->data)
      total += (size_t)dy_type_numel(&p->vars[i]->type) * dy_dtype_size(p->vars[i]->type.dtype);
  return total > DY_ONNX_EXTERNAL_MIN;
}

/* ---- the model ---- */

dy_status dy_onnx_save(const dy_program *p, const char *path, const dy_onnx_save_options *opts,
                       dy_error *err) {
  for (int i = 0; i < p->n_vars; i++)
    if (!oxe_elem_type(p->vars[i]->type.dtype))
      return dy_error_set(err, DY_STATUS_UNSUPPORTED, "export to ONNX: var '%s' has a dtype "
                          "ONNX has no elem type for", p->vars[i]->name);
  oxe_ctx x = {.p = p, .err = err, .rename_block = -1};
  x.main = x.cur = oxe_graph_new(&x, "dy2stc");
  bool external = wants_external(p, opts);
  dy_status s = x.main ? graph_of_block(&x, 0, external) : DY_OK;
  uint8_t *ext = NULL, *buf = NULL;
  size_t ext_n = 0;
  /* the data file: OUT.onnx.data beside OUT.onnx, named relative to it */
  char data_path[4096];
  const char *slash = strrchr(path, '/');
  snprintf(data_path, sizeof data_path, "%s.data", path);
  if (!s && external)
    s = externalize(&x, slash ? strrchr(data_path, '/') + 1 : data_path, &ext, &ext_n);
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  Onnx__OperatorSetIdProto *opsets[1] = {&opset};
  if (!s && x.oom)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "export to ONNX: out of memory");
  if (!s) {
    opset.domain = "";
    opset.has_version = true;
    opset.version = DY_ONNX_EXPORT_OPSET;
    m.has_ir_version = true;
    m.ir_version = 8;
    m.n_opset_import = 1;
    m.opset_import = opsets;
    m.producer_name = "dy2stc";
    m.graph = x.main->g;
    size_t len = protobuf_c_message_get_packed_size(&m.base);
    buf = malloc(len ? len : 1);
    if (!buf)
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "export to ONNX: out of memory");
    else {
      protobuf_c_message_pack(&m.base, buf);
      if (external) {
        const char *paths[2] = {path, data_path};
        const void *bufs[2] = {buf, ext};
        size_t lens[2] = {len, ext_n};
        s = dy_write_files_atomic(2, paths, bufs, lens, err);
      } else {
        s = dy_write_file_atomic(path, buf, len, err);
      }
    }
  }
  free(buf);
  free(ext);
  oxe_free(&x);
  return s;
}
