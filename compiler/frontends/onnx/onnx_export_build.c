/* onnx_export_build.c - the protobuf-c builder of the ONNX exporter:
 * every message is allocated from one list (freed at once by oxe_free),
 * so a failure anywhere only sets x->oom and the caller reports it once.
 * Nodes, attributes, constants and value infos; the exporter's files above
 * (onnx_export_ops.c, onnx_export.c) say which.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

void *oxe_alloc(oxe_ctx *x, size_t n) {
  if (x->oom)
    return NULL;
  if (x->n_blocks == x->cap_blocks) {
    size_t cap = x->cap_blocks ? 2 * x->cap_blocks : 256;
    void **nb = realloc(x->blocks, cap * sizeof *nb);
    if (!nb) {
      x->oom = true;
      return NULL;
    }
    x->blocks = nb;
    x->cap_blocks = cap;
  }
  void *p = calloc(1, n ? n : 1);
  if (!p) {
    x->oom = true;
    return NULL;
  }
  x->blocks[x->n_blocks++] = p;
  return p;
}

void oxe_free(oxe_ctx *x) {
  for (size_t i = 0; i < x->n_blocks; i++)
    free(x->blocks[i]);
  free(x->blocks);
  x->blocks = NULL;
  x->n_blocks = x->cap_blocks = 0;
}

char *oxe_str(oxe_ctx *x, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = oxe_alloc(x, n);
  if (d)
    memcpy(d, s, n);
  return d;
}

const char *oxe_tmp(oxe_ctx *x, const char *stem) {
  const char *base = x->op && x->op->n_outputs ? oxe_var_name(x, x->op->outputs[0]) : "t";
  char buf[256];
  do
    snprintf(buf, sizeof buf, "%.180s/%s_%d", base, stem, x->tmp++);
  while (dy_program_find_var(x->p, buf) >= 0);
  return oxe_str(x, buf);
}

const char *oxe_var_name(oxe_ctx *x, int v) {
  const dy_var *var = x->p->vars[v];
  int b = var->block;
  while (x->rename_block >= 0 && b > x->rename_block)
    b = x->p->blocks[b]->parent;
  if (x->rename_block < 0 || b != x->rename_block)
    return var->name;
  char buf[300];
  snprintf(buf, sizeof buf, "%.250s/init", var->name);
  return oxe_str(x, buf);
}

int oxe_elem_type(dy_dtype dt) {
  /* TensorProto.DataType's values, read through the importer's map so
   * the pairs are written once (onnx_tensor.c) */
  for (int t = 1; t <= 16; t++) {
    dy_dtype d;
    if (dy_onnx_dtype(t, &d) && d == dt)
      return t;
  }
  return 0;
}

/* Append item to the list (*items, *n) of capacity *cap. */
static void push(oxe_ctx *x, void ***items, size_t *n, size_t *cap, void *item) {
  if (!item || x->oom)
    return;
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    void **ni = oxe_alloc(x, nc * sizeof *ni);
    if (!ni)
      return;
    if (*n)
      memcpy(ni, *items, *n * sizeof *ni);
    *items = ni;
    *cap = nc;
  }
  (*items)[(*n)++] = item;
}

oxe_graph *oxe_graph_new(oxe_ctx *x, const char *name) {
  oxe_graph *g = oxe_alloc(x, sizeof *g);
  Onnx__GraphProto *gp = oxe_alloc(x, sizeof *gp);
  if (!g || !gp)
    return NULL;
  *gp = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
  gp->name = oxe_str(x, name);
  g->g = gp;
  return g;
}

Onnx__NodeProto *oxe_node(oxe_ctx *x, const char *op_type, int n_in, const char *const *in,
                          int n_out, const char *const *out) {
  Onnx__NodeProto *n = oxe_alloc(x, sizeof *n);
  char **ins = oxe_alloc(x, sizeof *ins * (size_t)(n_in + 1));
  char **outs = oxe_alloc(x, sizeof *outs * (size_t)(n_out + 1));
  if (!n || !ins || !outs)
    return NULL;
  *n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
  n->op_type = oxe_str(x, op_type);
  /* the node's name: its first output's, so a message names the var */
  n->name = oxe_str(x, n_out && out[0] ? out[0] : op_type);
  for (int i = 0; i < n_in; i++)
    ins[i] = oxe_str(x, in[i] ? in[i] : "");
  for (int i = 0; i < n_out; i++)
    outs[i] = oxe_str(x, out[i]);
  n->n_input = (size_t)n_in;
  n->input = ins;
  n->n_output = (size_t)n_out;
  n->output = outs;
  oxe_graph *g = x->cur;
  push(x, (void ***)&g->g->node, &g->g->n_node, &g->cap_node, n);
  return x->oom ? NULL : n;
}

static Onnx__AttributeProto *attr(oxe_ctx *x, Onnx__NodeProto *n, const char *name,
                                  Onnx__AttributeProto__AttributeType type) {
  if (!n)
    return NULL;
  Onnx__AttributeProto *a = oxe_alloc(x, sizeof *a);
  Onnx__AttributeProto **na = oxe_alloc(x, sizeof *na * (n->n_attribute + 1));
  if (!a || !na)
    return NULL;
  *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  a->name = oxe_str(x, name);
  a->has_type = true;
  a->type = type;
  if (n->n_attribute)
    memcpy(na, n->attribute, sizeof *na * n->n_attribute);
  na[n->n_attribute++] = a;
  n->attribute = na;
  return a;
}

void oxe_attr_i(oxe_ctx *x, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = attr(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (a)
    a->has_i = true, a->i = v;
}

void oxe_attr_f(oxe_ctx *x, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = attr(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  if (a)
    a->has_f = true, a->f = v;
}

void oxe_attr_is(oxe_ctx *x, Onnx__NodeProto *n, const char *name, int k, const int64_t *v) {
  Onnx__AttributeProto *a = attr(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t *d = oxe_alloc(x, sizeof *d * (size_t)(k + 1));
  if (!a || !d)
    return;
  if (k)
    memcpy(d, v, sizeof *d * (size_t)k);
  a->n_ints = (size_t)k;
  a->ints = d;
}

void oxe_attr_s(oxe_ctx *x, Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = attr(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  char *d = oxe_str(x, v);
  if (a && d)
    a->has_s = true, a->s.data = (uint8_t *)d, a->s.len = strlen(d);
}

void oxe_attr_g(oxe_ctx *x, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g) {
  Onnx__AttributeProto *a = attr(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  if (a)
    a->g = g;
}

Onnx__TensorProto *oxe_tensor(oxe_ctx *x, const char *name, const dy_type *t, const void *data) {
  Onnx__TensorProto *tp = oxe_alloc(x, sizeof *tp);
  int64_t *dims = oxe_alloc(x, sizeof *dims * (size_t)(t->rank + 1));
  if (!tp || !dims)
    return NULL;
  *tp = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  tp->name = oxe_str(x, name);
  for (int i = 0; i < t->rank; i++)
    dims[i] = t->shape[i];
  tp->n_dims = (size_t)t->rank;
  tp->dims = dims;
  tp->has_data_type = true;
  tp->data_type = oxe_elem_type(t->dtype);
  tp->has_raw_data = true;
  tp->raw_data.len = (size_t)dy_type_numel(t) * dy_dtype_size(t->dtype);
  tp->raw_data.data = (uint8_t *)data;
  return tp;
}

void oxe_add_init(oxe_ctx *x, Onnx__TensorProto *t) {
  oxe_graph *g = x->main;
  push(x, (void ***)&g->g->initializer, &g->g->n_initializer, &g->cap_init, t);
}

void oxe_constant(oxe_ctx *x, Onnx__TensorProto *t) {
  if (!t)
    return;
  const char *name = t->name;
  Onnx__NodeProto *n = oxe_node(x, "Constant", 0, NULL, 1, &name);
  Onnx__AttributeProto *a = attr(x, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  if (a)
    a->t = t;
}

const char *oxe_const_i64s(oxe_ctx *x, int n, const int64_t *v) {
  const char *name = oxe_tmp(x, "const");
  int64_t *d = oxe_alloc(x, sizeof *d * (size_t)(n + 1));
  if (!name || !d)
    return NULL;
  if (n)
    memcpy(d, v, sizeof *d * (size_t)n);
  dy_type t = {.dtype = DY_I64, .rank = 1, .shape = {n}};
  oxe_constant(x, oxe_tensor(x, name, &t, d));
  return name;
}

const char *oxe_const_scalar(oxe_ctx *x, dy_dtype dt, double v) {
  const char *name = oxe_tmp(x, "const");
  void *d = oxe_alloc(x, 8);
  if (!name || !d)
    return NULL;
  dy_dtype_set_f64(dt, d, 0, v);
  dy_type t = {.dtype = dt, .rank = 0};
  oxe_constant(x, oxe_tensor(x, name, &t, d));
  return name;
}

Onnx__ValueInfoProto *oxe_value_info(oxe_ctx *x, const char *name, const dy_type *t) {
  Onnx__ValueInfoProto *v = oxe_alloc(x, sizeof *v);
  Onnx__TypeProto *tp = oxe_alloc(x, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = oxe_alloc(x, sizeof *tt);
  Onnx__TensorShapeProto *sh = oxe_alloc(x, sizeof *sh);
  Onnx__TensorShapeProto__Dimension **dims = oxe_alloc(x, sizeof *dims * (size_t)(t->rank + 1));
  if (!v || !tp || !tt || !sh || !dims)
    return NULL;
  *v = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
  *tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  *tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
  *sh = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
  for (int i = 0; i < t->rank; i++) {
    Onnx__TensorShapeProto__Dimension *d = oxe_alloc(x, sizeof *d);
    if (!d)
      return NULL;
    *d = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    if (t->shape[i] >= 0) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = t->shape[i];
    } else {
      char buf[128];
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d->dim_param = oxe_str(x, dy_dim_name(t->shape[i], buf, sizeof buf));
    }
    dims[i] = d;
  }
  sh->n_dim = (size_t)t->rank;
  sh->dim = dims;
  tt->has_elem_type = true;
  tt->elem_type = oxe_elem_type(t->dtype);
  tt->shape = sh;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  v->name = oxe_str(x, name);
  v->type = tp;
  return v;
}

void oxe_add_io(oxe_ctx *x, oxe_graph *g, bool output, Onnx__ValueInfoProto *v) {
  if (output)
    push(x, (void ***)&g->g->output, &g->g->n_output, &g->cap_out, v);
  else
    push(x, (void ***)&g->g->input, &g->g->n_input, &g->cap_in, v);
}

dy_status oxe_refuse(oxe_ctx *x, const char *why) {
  return dy_error_at(x->err, x->op, DY_STATUS_UNSUPPORTED, "export to ONNX: %s %s",
                     x->op ? dy_op_name(x->op->kind) : "the Program", why);
}
