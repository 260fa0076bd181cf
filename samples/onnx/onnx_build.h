/* onnx_build.h - write small ONNX models from C with protobuf-c, no Python.
 *
 *   ob_model *m = ob_new(13);
 *   ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");  // -1: dim_param N
 *   ob_init_f32(m, "w", 2, (int64_t[]){4, 3}, w_data);
 *   ob_node(m, "MatMul", "mm", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"y"});
 *   ob_output(m, "y", OB_F32);
 *   ob_save(m, "model.onnx");
 *   ob_free(m);
 *
 * Sub-graphs (If branches, Loop and Scan bodies) are built the same way:
 *
 *   ob_graph *body = ob_graph_new(m, "body");
 *   ob_graph_input(m, body, "i", OB_I64, 0, NULL);
 *   ob_graph_node(m, body, "Add", "add", 2, (const char *[]){"a", "x"}, 1, ...);
 *   ob_graph_output(m, body, "a_out", OB_F32);
 *   ob_attr_graph(m, loop_node, "body", body);
 *
 * Used by the sample's generator (make_cnn.c) and tests/test_onnx.c.
 * Everything is allocated in one list freed by ob_free. Header-only.
 */
#ifndef DY_ONNX_BUILD_H
#define DY_ONNX_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

enum { OB_F32 = 1, OB_U8 = 2, OB_I64 = 7, OB_BOOL = 9, OB_F64 = 11, OB_I32 = 6 };
#define OB_MAX 256

typedef struct {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opsets[1];
  Onnx__NodeProto *nodes[OB_MAX];
  Onnx__TensorProto *inits[OB_MAX];
  Onnx__ValueInfoProto *inputs[OB_MAX], *outputs[OB_MAX];
  void **blocks;             /* every allocation, freed by ob_free */
  size_t n_blocks, cap_blocks;
} ob_model;

static inline void *ob_alloc(ob_model *m, size_t n) {
  if (m->n_blocks == m->cap_blocks) {
    m->cap_blocks = m->cap_blocks ? 2 * m->cap_blocks : 64;
    m->blocks = realloc(m->blocks, m->cap_blocks * sizeof *m->blocks);
  }
  void *p = calloc(1, n ? n : 1);
  m->blocks[m->n_blocks++] = p;
  return p;
}

static inline char *ob_str(ob_model *m, const char *s) {
  char *d = ob_alloc(m, strlen(s) + 1);
  memcpy(d, s, strlen(s) + 1);
  return d;
}

static inline ob_model *ob_new(int64_t opset) {
  ob_model *m = calloc(1, sizeof *m);
  onnx__model_proto__init(&m->model);
  onnx__graph_proto__init(&m->graph);
  onnx__operator_set_id_proto__init(&m->opset);
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->model.producer_name = "dy2stc onnx_build.h";
  m->opset.domain = "";
  m->opset.has_version = 1;
  m->opset.version = opset;
  m->opsets[0] = &m->opset;
  m->model.n_opset_import = 1;
  m->model.opset_import = m->opsets;
  m->model.graph = &m->graph;
  m->graph.name = "g";
  m->graph.node = m->nodes;
  m->graph.initializer = m->inits;
  m->graph.input = m->inputs;
  m->graph.output = m->outputs;
  return m;
}

/* A value info with a tensor type; rank < 0: no shape. dims[i] < 0 is the
 * symbolic dim `param`. */
static inline Onnx__ValueInfoProto *ob_value_info(ob_model *m, const char *name, int elem,
                                           int rank, const int64_t *dims,
                                           const char *param) {
  Onnx__ValueInfoProto *vi = ob_alloc(m, sizeof *vi);
  onnx__value_info_proto__init(vi);
  vi->name = ob_str(m, name);
  Onnx__TypeProto *tp = ob_alloc(m, sizeof *tp);
  onnx__type_proto__init(tp);
  Onnx__TypeProto__Tensor *tt = ob_alloc(m, sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = elem;
  if (rank >= 0) {
    Onnx__TensorShapeProto *sh = ob_alloc(m, sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank;
    sh->dim = ob_alloc(m, sizeof *sh->dim * (size_t)(rank ? rank : 1));
    for (int i = 0; i < rank; i++) {
      Onnx__TensorShapeProto__Dimension *d = ob_alloc(m, sizeof *d);
      onnx__tensor_shape_proto__dimension__init(d);
      if (dims[i] >= 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
      } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = ob_str(m, param ? param : "N");
      }
      sh->dim[i] = d;
    }
    tt->shape = sh;
  }
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = tp;
  return vi;
}

static inline void ob_input(ob_model *m, const char *name, int elem, int rank,
                     const int64_t *dims, const char *param) {
  m->inputs[m->graph.n_input++] = ob_value_info(m, name, elem, rank, dims, param);
}

/* An output declared by dtype only (the importer infers the shape). */
static inline void ob_output(ob_model *m, const char *name, int elem) {
  m->outputs[m->graph.n_output++] = ob_value_info(m, name, elem, -1, NULL, NULL);
}

/* A tensor with raw little-endian data of n bytes. */
static inline Onnx__TensorProto *ob_tensor(ob_model *m, const char *name, int elem, int rank,
                                    const int64_t *dims, const void *data, size_t n) {
  Onnx__TensorProto *t = ob_alloc(m, sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = ob_str(m, name);
  t->has_data_type = 1;
  t->data_type = elem;
  t->n_dims = (size_t)rank;
  t->dims = ob_alloc(m, sizeof(int64_t) * (size_t)(rank ? rank : 1));
  if (rank)
    memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->has_raw_data = 1;
  t->raw_data.len = n;
  t->raw_data.data = ob_alloc(m, n);
  if (n)
    memcpy(t->raw_data.data, data, n);
  return t;
}

static inline int64_t ob_numel(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  return n;
}

static inline void ob_init_f32(ob_model *m, const char *name, int rank, const int64_t *dims,
                        const float *data) {
  m->inits[m->graph.n_initializer++] =
      ob_tensor(m, name, OB_F32, rank, dims, data, sizeof(float) * (size_t)ob_numel(rank, dims));
}

static inline void ob_init_i64(ob_model *m, const char *name, int rank, const int64_t *dims,
                        const int64_t *data) {
  m->inits[m->graph.n_initializer++] =
      ob_tensor(m, name, OB_I64, rank, dims, data, sizeof(int64_t) * (size_t)ob_numel(rank, dims));
}

/* A node (not yet in a graph). */
static inline Onnx__NodeProto *ob_make_node(ob_model *m, const char *op, const char *name,
                                            int n_in, const char *const *in, int n_out,
                                            const char *const *out) {
  Onnx__NodeProto *n = ob_alloc(m, sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = ob_str(m, op);
  n->name = ob_str(m, name);
  n->n_input = (size_t)n_in;
  n->input = ob_alloc(m, sizeof(char *) * (size_t)(n_in ? n_in : 1));
  for (int i = 0; i < n_in; i++)
    n->input[i] = ob_str(m, in[i]);
  n->n_output = (size_t)n_out;
  n->output = ob_alloc(m, sizeof(char *) * (size_t)(n_out ? n_out : 1));
  for (int i = 0; i < n_out; i++)
    n->output[i] = ob_str(m, out[i]);
  n->attribute = ob_alloc(m, sizeof(Onnx__AttributeProto *) * 16);
  return n;
}

static inline Onnx__NodeProto *ob_node(ob_model *m, const char *op, const char *name, int n_in,
                                const char *const *in, int n_out, const char *const *out) {
  Onnx__NodeProto *n = ob_make_node(m, op, name, n_in, in, n_out, out);
  m->nodes[m->graph.n_node++] = n;
  return n;
}

/* A sub-graph: its own inputs, nodes and outputs (up to 64 nodes). */
typedef struct {
  Onnx__GraphProto g;
  Onnx__NodeProto *nodes[64];
  Onnx__ValueInfoProto *inputs[16], *outputs[16];
} ob_graph;

static inline ob_graph *ob_graph_new(ob_model *m, const char *name) {
  ob_graph *g = ob_alloc(m, sizeof *g);
  onnx__graph_proto__init(&g->g);
  g->g.name = ob_str(m, name);
  g->g.node = g->nodes;
  g->g.input = g->inputs;
  g->g.output = g->outputs;
  return g;
}

/* rank < 0: no shape. */
static inline void ob_graph_input(ob_model *m, ob_graph *g, const char *name, int elem, int rank,
                                  const int64_t *dims) {
  g->inputs[g->g.n_input++] = ob_value_info(m, name, elem, rank, dims, NULL);
}

static inline void ob_graph_output(ob_model *m, ob_graph *g, const char *name, int elem) {
  g->outputs[g->g.n_output++] = ob_value_info(m, name, elem, -1, NULL, NULL);
}

static inline Onnx__NodeProto *ob_graph_node(ob_model *m, ob_graph *g, const char *op,
                                             const char *name, int n_in, const char *const *in,
                                             int n_out, const char *const *out) {
  Onnx__NodeProto *n = ob_make_node(m, op, name, n_in, in, n_out, out);
  g->nodes[g->g.n_node++] = n;
  return n;
}

static inline Onnx__AttributeProto *ob_attr(ob_model *m, Onnx__NodeProto *n, const char *name,
                                     Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto *a = ob_alloc(m, sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = ob_str(m, name);
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

static inline void ob_attr_i(ob_model *m, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = ob_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

static inline void ob_attr_f(ob_model *m, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = ob_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

static inline void ob_attr_ints(ob_model *m, Onnx__NodeProto *n, const char *name, int k,
                         const int64_t *v) {
  Onnx__AttributeProto *a = ob_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)k;
  a->ints = ob_alloc(m, sizeof(int64_t) * (size_t)(k ? k : 1));
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)k);
}

static inline void ob_attr_s(ob_model *m, Onnx__NodeProto *n, const char *name, const char *v) {
  Onnx__AttributeProto *a = ob_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.len = strlen(v);
  a->s.data = (uint8_t *)ob_str(m, v);
}

static inline void ob_attr_graph(ob_model *m, Onnx__NodeProto *n, const char *name, ob_graph *g) {
  Onnx__AttributeProto *a = ob_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  a->g = &g->g;
}

/* A Constant node's tensor value (i64 data). */
static inline void ob_attr_tensor_i64(ob_model *m, Onnx__NodeProto *n, const char *name, int rank,
                               const int64_t *dims, const int64_t *data) {
  Onnx__AttributeProto *a = ob_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = ob_tensor(m, "", OB_I64, rank, dims, data,
                   sizeof(int64_t) * (size_t)ob_numel(rank, dims));
}

/* Serialize to path; 0 on success. */
static inline int ob_save(ob_model *m, const char *path) {
  size_t n = onnx__model_proto__get_packed_size(&m->model);
  uint8_t *buf = malloc(n ? n : 1);
  onnx__model_proto__pack(&m->model, buf);
  FILE *f = fopen(path, "wb");
  int rc = !f || fwrite(buf, 1, n, f) != n;
  if (f)
    rc |= fclose(f) != 0;
  free(buf);
  return rc;
}

static inline void ob_free(ob_model *m) {
  for (size_t i = 0; i < m->n_blocks; i++)
    free(m->blocks[i]);
  free(m->blocks);
  free(m);
}

#endif
