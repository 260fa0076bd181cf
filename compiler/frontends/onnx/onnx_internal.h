/* onnx_internal.h - private header of the ONNX frontend (compiler/
 * frontends/onnx/). Not part of the public API. Its files, each calling
 * only the ones below it:
 *
 *   onnx.c          the dispatcher: the model, its graph walk, sub-graphs
 *   onnx_table.c    the ONNX ops that are one op of the table, one row each
 *   onnx_ops.c, onnx_math.c, onnx_shape.c, onnx_nn.c, onnx_image.c,
 *   onnx_seq.c, onnx_control.c, onnx_quant.c
 *                   the mapper families, one mapper per ONNX op type
 *   onnx_op.c       the op builder: ox_op and its shorthands
 *   onnx_node.c     the node being imported: inputs, outputs, attributes
 *   onnx_tensor.c   TensorProtos -> constants
 *   onnx_value.c    errors, the value table, constants
 *
 * and the exporter (a Program as an ONNX model, dy_onnx_save), on top:
 *
 *   onnx_export.c       the model: graphs, sub-graphs (If, Loop), tensors,
 *                       external data, the files
 *   onnx_export_ops.c   one op as ONNX nodes (the direct rows of
 *                       onnx_table.c read backwards, and the rest)
 *   onnx_export_build.c the protobuf-c builder the two share
 *
 * The importer walks the graph's nodes in order, keeping one `ox_value` per
 * ONNX tensor name. A value is either
 *   - a constant: its data is known at import time (an initializer, a
 *     Constant node, or any op whose inputs are all constants, computed with
 *     the runtime's reference kernels), held host-side in `cval` and only
 *     turned into a persistable var when a run-time op reads it;
 *   - a shape value: a constant 1-D (or 0-D) i64 some of whose entries are
 *     symbolic sizes (what Shape gives for an input with dim_params: the
 *     batch, seq, ...), each held as its dim expression (ir/core/dims.c) in a
 *     per-element array beside the data (ox_const.dims), never by a magic
 *     number, so no value a file holds (INT64_MIN included: Slice's "to the
 *     start") can be taken for a symbol. Data-moving ops (Gather,
 *     Unsqueeze, Concat, Slice, Where, ...) carry the entries along; Equal,
 *     Greater and Less fold where the answer holds for any size >= 1
 *     (batch == -1 is false); Add, Sub,
 *     Mul and Div compute with them as expressions (batch * heads);
 *     Reshape, Expand and Slice turn a symbolic entry back into 0 (copy),
 *     -1 (infer or keep) or "to the end"; anything else reading one is an
 *     error naming the node;
 *   - a run-time value: a var of the Program.
 * Mappers build ops through ox_op(), which folds when every input is a
 * constant and otherwise appends to the Program, so a shape subgraph of a
 * static model disappears at import time.
 */
#ifndef DY_ONNX_INTERNAL_H
#define DY_ONNX_INTERNAL_H

#include <stdlib.h>

#include "dy_frontends.h"
#include "fe_internal.h"
#include "onnx.pb-c.h"

/* Constant data: type and host bytes (malloc'd, owned by the value). */
typedef struct {
  dy_type type;
  void *data;
  /* a shape value's symbolic entries: dims[i] < 0 when entry i is that
   * symbolic size (a dim expression, ir/core/dims.c: -1 the batch, or batch*4,
   * seq, ...; its data entry is then 0 and means nothing), 0 for a plain
   * entry; NULL when none is symbolic */
  int64_t *dims;
} ox_const;

typedef struct ox_value {
  const char *name;      /* the ONNX name (or a temp), ctx-owned            */
  dy_type type;          /* negative dims: symbolic (ir/core/dims.c; -1 the batch) */
  int var;               /* Program var, -1 until materialised              */
  ox_const *c;           /* constant data, or NULL                          */
  bool sym;              /* c is a shape value with symbolic entries        */
  bool weight;           /* c is an f32 initializer's data, maybe reshaped
                            or transposed: a trainable var once materialised */
  int graph_input;       /* index among graph inputs for a feed, else -1    */
  bool is_seq;           /* an ONNX sequence of n_items tensors, known at
                            import time (onnx_sequence.c); never a var      */
  int n_items;
  struct ox_value **items; /* Program-owned array                          */
  int node;              /* index of the node that made it, -1 for inputs  */
} ox_value;

typedef struct ox_ctx {
  dy_program *p;
  dy_error *err;
  const dy_onnx_options *opts;
  dy_onnx_info *info;
  const char *path;         /* the model's path (for errors, external data) */
  char *dir;                /* its directory                                */
  int64_t opset;            /* default domain's version                     */
  /* the value table: ONNX name -> value (open hashing) */
  ox_value **slots;
  size_t n_slots, n_vals;
  ox_value **all;           /* every value made, for cleanup                */
  size_t n_all, cap_all;
  /* the node being imported */
  const Onnx__NodeProto *node;
  int node_index;
  dy_srcloc loc;
  int node_serial;          /* counts imported nodes, sub-graphs' included  */
  int64_t n_built;          /* ops built (folded or appended): at most
                               DY_ONNX_MAX_OPS, the limit on unrolling    */
  int tmp_counter;
  int block;                /* the Program block ops are appended to: 0, or
                               a cond branch / while block being imported
                               (onnx_control.c)                           */
  /* sub-graph scopes: the names bound inside the open ones */
  int scope_depth;
  const char **scoped;
  size_t n_scoped, cap_scoped;
  /* Import sub-graph g (an If branch, a Loop or Scan body) inline: bind its
   * n_in inputs to in, import its nodes (names of the enclosing graphs
   * stay visible) and return its n_out outputs in out. The names it binds
   * are unbound again afterwards, so a body can be imported once per
   * unrolled iteration. `what` names it in errors ("the body"). It is
   * onnx.c's graph walk, handed to the mappers here (onnx_control.c calls
   * it) so that the mapper families stay below the dispatcher that calls
   * them: a body's nodes are of every family, the If and Loop among them. */
  dy_status (*import_subgraph)(struct ox_ctx *c, const Onnx__GraphProto *g, const char *what,
                               ox_value *const *in, int n_in, ox_value **out, int n_out);
} ox_ctx;

/* Return the status of x when it is not DY_OK. */
#define TRY(x)          \
  do {                  \
    dy_status s_ = (x); \
    if (s_)             \
      return s_;        \
  } while (0)

/* ---- onnx_value.c: errors, the value table, values, constants ---- */

/* Error naming the current node: "node 3 'conv1' (Conv): <msg>". Returns
 * status. */
dy_status ox_fail(ox_ctx *c, dy_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value table. ox_lookup: the value bound to an ONNX name, NULL when
 * none is (or a closed scope unbound it). ox_bind: bind name to v (false:
 * out of memory). ox_bind_scoped: the same, and inside a sub-graph's
 * scope (c->scope_depth > 0) remembered so that ox_unbind_since(c, mark)
 * unbinds it when the scope that opened at mark = c->n_scoped closes. */
ox_value *ox_lookup(ox_ctx *c, const char *name);
bool ox_bind(ox_ctx *c, const char *name, ox_value *v);
bool ox_bind_scoped(ox_ctx *c, const char *name, ox_value *v);
void ox_unbind_since(ox_ctx *c, size_t mark);

/* A new value named name (NULL: "") of type t, owned by the context. */
ox_value *ox_new_value(ox_ctx *c, const char *name, const dy_type *t);
/* Free every value made (with its constant), the table and the scopes
 * (not c->p). */
void ox_free_values(ox_ctx *c);
/* Free a constant and its data. */
void ox_free_const(ox_const *k);
/* Bytes of data of a static type. */
size_t ox_type_bytes(const dy_type *t);
/* Mark v symbolic if any of its entries is a symbolic size. */
void ox_update_sym(ox_value *v);
/* Set entry i of constant i64 v to the size d: its value when d >= 0,
 * else the symbolic size d (v becomes a shape value). DY_OK, or out of
 * memory. */
dy_status ox_set_dim(ox_ctx *c, ox_value *v, int64_t i, int64_t d);
/* The symbolic size at entry i of shape value v, or 0 when it is plain. */
int64_t ox_sym_dim(const ox_value *v, int64_t i);
/* Entry i of an i64 constant as a size: its symbolic dim or its value. */
int64_t ox_entry(const ox_value *v, int64_t i);

/* A run-time value (a var) whose dims are exactly dims[0..rank), the
 * first made, or NULL: what expand_as reads for the shape when a size is
 * symbolic (ConstantOfShape, Expand to a dynamic size). */
ox_value *ox_like(ox_ctx *c, int rank, const int64_t *dims);

/* Constants. */
ox_value *ox_new_const(ox_ctx *c, dy_dtype dt, int rank, const int64_t *shape,
                       const void *data);
ox_value *ox_const_f32(ox_ctx *c, float v);             /* scalar, rank 0 */
ox_value *ox_const_i64(ox_ctx *c, int64_t v);
ox_value *ox_const_bool(ox_ctx *c, bool v);
ox_value *ox_const_i64s(ox_ctx *c, int n, const int64_t *v); /* 1-D */
/* A scalar 0 of dtype dt (false for bool). */
ox_value *ox_zero_like(ox_ctx *c, dy_dtype dt);
bool ox_is_const(const ox_value *v);
/* A constant input's i64 values (converted from bool); the value must be a
 * constant (else an error naming the input and why: `what`). Symbolic
 * entries (ox_sym_dim; their data is 0) are allowed only with allow_sym.
 * *vals points into the value. */
dy_status ox_get_ints(ox_ctx *c, ox_value *v, const char *what, bool allow_sym,
                      const int64_t **vals, int64_t *n);
dy_status ox_get_floats(ox_ctx *c, ox_value *v, const char *what,
                        const float **vals, int64_t *n);

/* ---- onnx_tensor.c: TensorProtos ---- */

/* An ONNX elem type's name ("float", "int32", ...). */
const char *ox_dtype_name(int onnx_type);
/* Convert a TensorProto into a new constant (caller frees it with
 * ox_free_const); `what` names it in errors, dir resolves external data. */
dy_status ox_tensor_convert(const Onnx__TensorProto *t, const char *what,
                            const char *dir, ox_const **out, dy_error *err);

/* ---- onnx_node.c: the node being imported ---- */

/* The node's i-th input value, or NULL when absent (optional input left
 * empty or i out of range). */
ox_value *ox_in(ox_ctx *c, int i);
int ox_n_in(ox_ctx *c);
int ox_n_out(ox_ctx *c);
/* The node's input i, which must be present. */
dy_status ox_need_in(ox_ctx *c, int i, ox_value **v);
/* True when output i is requested (present and non-empty). */
bool ox_out_wanted(ox_ctx *c, int i);
/* Bind the node's output i to v. */
dy_status ox_set_out(ox_ctx *c, int i, ox_value *v);
/* Bind output i to v, a built value or NULL (the error already recorded). */
dy_status ox_set_or_fail(ox_ctx *c, int i, ox_value *v);
/* Bind output i to v (ox_set_or_fail) and return. */
#define OUT(i, v) return ox_set_or_fail(c, (i), (v))

/* Input checks the families share. v's dtype must be f32 (else an
 * unsupported-dtype error naming the node). */
dy_status ox_need_f32(ox_ctx *c, const ox_value *v);
/* The scales of a QLinear node (inputs idx[0..n)) must be constants: the
 * requantization is compiled from them (a graph input is reported as one
 * to bind, like a shape input). */
dy_status ox_need_const_scales(ox_ctx *c, ox_value *const *in, const int *idx, int n);
/* ConvInteger's and MatMulInteger's inputs (a, b, a's and b's zero
 * points): absent zero points are 0 of their tensor's dtype. */
dy_status ox_integer_inputs(ox_ctx *c, ox_value *in[4]);

/* Attributes of the current node. */
const Onnx__AttributeProto *ox_attr(ox_ctx *c, const char *name);
int64_t ox_attr_i(ox_ctx *c, const char *name, int64_t dflt);
float ox_attr_f(ox_ctx *c, const char *name, float dflt);
/* ints: *n = -1 when absent. Borrowed from the model. */
const int64_t *ox_attr_ints(ox_ctx *c, const char *name, int *n);
const float *ox_attr_floats(ox_ctx *c, const char *name, int *n);
/* String attribute into buf ("" default). */
const char *ox_attr_s(ox_ctx *c, const char *name, const char *dflt,
                      char *buf, size_t n);
/* Reject any attribute not in the space-separated list (and a size
 * attribute out of its bounds). */
dy_status ox_check_attrs(ox_ctx *c, const char *known);
/* Normalise axis against rank, or fail naming the node. */
dy_status ox_axis(ox_ctx *c, int64_t axis, int rank, int *out);

/* ---- onnx_op.c: the op builder ---- */

/* Build one op: folded at once when every input is a non-symbolic constant,
 * else appended to the Program. `op` is the op's name in the op table
 * (looked up at run time, so an op a build lacks is a clean
 * DY_STATUS_UNSUPPORTED). Returns the output value, NULL on error. */
ox_value *ox_op(ox_ctx *c, const char *op, ox_value *const *in, int n_in,
                const dy_attr *attrs, int n_attrs);
/* The same for an op with several outputs (out gets n_out values). */
dy_status ox_op_n(ox_ctx *c, const char *op, ox_value *const *in, int n_in,
                  const dy_attr *attrs, int n_attrs, ox_value **out, int n_out);

/* Make constant v a persistable var of the Program (once). */
dy_status ox_materialize(ox_ctx *c, ox_value *v);

/* Shorthands over ox_op. */
ox_value *ox_unary(ox_ctx *c, const char *op, ox_value *x);
ox_value *ox_binary(ox_ctx *c, const char *op, ox_value *a, ox_value *b);
ox_value *ox_scale(ox_ctx *c, ox_value *x, float scale, float bias);
ox_value *ox_cast(ox_ctx *c, ox_value *x, dy_dtype to);
ox_value *ox_reshape(ox_ctx *c, ox_value *x, int rank, const int64_t *shape);
ox_value *ox_transpose(ox_ctx *c, ox_value *x, int rank, const int64_t *perm);
ox_value *ox_unsqueeze(ox_ctx *c, ox_value *x, int n, const int64_t *axes);
ox_value *ox_squeeze(ox_ctx *c, ox_value *x, int n, const int64_t *axes);
ox_value *ox_reduce(ox_ctx *c, const char *op, ox_value *x, int n,
                    const int64_t *axes, bool keepdim);
ox_value *ox_slice(ox_ctx *c, ox_value *x, int n, const int64_t *starts,
                   const int64_t *ends, const int64_t *axes,
                   const int64_t *steps);
ox_value *ox_where(ox_ctx *c, ox_value *cond, ox_value *a, ox_value *b);
ox_value *ox_not(ox_ctx *c, ox_value *x);
ox_value *ox_concat(ox_ctx *c, ox_value *const *in, int n, int64_t axis);
ox_value *ox_pad(ox_ctx *c, ox_value *x, const int64_t *pads, const char *mode,
                 float value);
/* NonZero of a run-time x: i64 [rank, n], n a size symbol of its own
 * ("nonzero", "nonzero_1", ...: --max-dim names it) declared with the
 * bound the op implies (dy_op_size_bound: x's size at its bounds). */
ox_value *ox_nonzero(ox_ctx *c, ox_value *x);
ox_value *ox_nms(ox_ctx *c, ox_value *boxes, ox_value *scores, const dy_nms_attrs *a);
/* Concatenate any number of values (in chunks the executor accepts). */
ox_value *ox_concat_many(ox_ctx *c, ox_value *const *in, int n, int64_t axis);
/* An i64 constant [1,..,n,..,1] (rank r, n at axis) holding 0..n-1. */
ox_value *ox_iota(ox_ctx *c, int64_t n, int r, int axis);
/* ox_like, or else one made: a run-time zero tensor of exactly dims, its
 * symbolic sizes taken from the first var that has them all (sliced to
 * one element on its other axes, cast to bool and to f32, times 0, plus
 * zeros of the static dims); NULL when no var has them. */
ox_value *ox_like_make(ox_ctx *c, int rank, const int64_t *dims);

/* ---- the mappers: onnx_table.c and the families ---- */

/* A mapper imports the current node: it reads inputs (ox_in, ox_need_in)
 * and attributes, builds ops (ox_op and the shorthands above) and binds the
 * node's outputs (ox_set_out, or OUT for a value that may be NULL after an
 * error). */
typedef dy_status (*ox_map_fn)(ox_ctx *c);
typedef struct {
  const char *op_type;
  ox_map_fn map;
} ox_mapper;

/* Each family file's table, ended by {NULL, NULL}. */
extern const ox_mapper ox_mappers_ops[];    /* onnx_ops.c   */
extern const ox_mapper ox_mappers_math[];   /* onnx_math.c  */
extern const ox_mapper ox_mappers_shape[];  /* onnx_shape.c */
extern const ox_mapper ox_mappers_nn[];     /* onnx_nn.c    */
extern const ox_mapper ox_mappers_image[];  /* onnx_image.c */
extern const ox_mapper ox_mappers_seq[];    /* onnx_seq.c   */
extern const ox_mapper ox_mappers_control[]; /* onnx_control.c */
extern const ox_mapper ox_mappers_quant[];  /* onnx_quant.c */
extern const ox_mapper ox_mappers_unique[]; /* onnx_unique.c */
extern const ox_mapper ox_mappers_sequence[]; /* onnx_sequence.c */

/* onnx_table.c: the ONNX op types that are one op of the table. A float
 * attribute of such a row: ONNX's name, the op's (ops.def) and ONNX's
 * default; onnx NULL: the op's attribute is fixed to dflt. */
typedef struct {
  const char *onnx;
  const char *name;
  float dflt;
} ox_attr_map;

typedef struct {
  const char *op_type;      /* the ONNX op type                          */
  const char *op;           /* the op (ops.def) a node of it is          */
  int n_in;                 /* its inputs, each required, at most 3      */
  bool f32;                 /* input 0 must be float32                   */
  ox_attr_map attrs[2];     /* its attributes (name NULL: no more)       */
} ox_direct;

/* The row of an ONNX op type, or NULL when it is not one to one. */
const ox_direct *ox_find_direct(const char *op_type);
/* Import the current node as the op of row d. */
dy_status ox_map_direct(ox_ctx *c, const ox_direct *d);

/* ---- the exporter (onnx_export*.c) ---- */

/* A graph being built: the GraphProto and the capacities of its lists. */
typedef struct {
  Onnx__GraphProto *g;
  size_t cap_node, cap_init, cap_in, cap_out;
} oxe_graph;

typedef struct oxe_ctx {
  const dy_program *p;
  dy_error *err;
  bool oom;
  void **blocks;            /* every allocation, freed by oxe_free        */
  size_t n_blocks, cap_blocks;
  oxe_graph *main;          /* the model's graph (initializers go here)   */
  oxe_graph *cur;           /* the graph nodes are appended to            */
  const dy_op *op;          /* the op being exported (names made for it)  */
  int tmp;                  /* counter of made names                      */
  int rename_block;         /* >= 0: the vars of this block (and the blocks
                               under it) are written as "<name>/init"     */
} oxe_ctx;

/* onnx_export_build.c: allocation (zeroed; NULL and x->oom on failure),
 * names, nodes and their attributes, constants, value infos. */
void *oxe_alloc(oxe_ctx *x, size_t n);
void oxe_free(oxe_ctx *x);
char *oxe_str(oxe_ctx *x, const char *s);
/* A name no var of the Program and no earlier made name has:
 * "<the op's first output>/<stem>_<n>". */
const char *oxe_tmp(oxe_ctx *x, const char *stem);
/* The ONNX name of var v (x->rename_block says when it is suffixed). */
const char *oxe_var_name(oxe_ctx *x, int v);
/* The ONNX elem type of dt (0 for none). */
int oxe_elem_type(dy_dtype dt);
oxe_graph *oxe_graph_new(oxe_ctx *x, const char *name);
/* Append a node of op_type to x->cur (empty names: absent inputs). */
Onnx__NodeProto *oxe_node(oxe_ctx *x, const char *op_type, int n_in, const char *const *in,
                          int n_out, const char *const *out);
void oxe_attr_i(oxe_ctx *x, Onnx__NodeProto *n, const char *name, int64_t v);
void oxe_attr_f(oxe_ctx *x, Onnx__NodeProto *n, const char *name, float v);
void oxe_attr_is(oxe_ctx *x, Onnx__NodeProto *n, const char *name, int k, const int64_t *v);
void oxe_attr_s(oxe_ctx *x, Onnx__NodeProto *n, const char *name, const char *v);
void oxe_attr_g(oxe_ctx *x, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g);
/* A TensorProto named name of type t holding data (raw, copied by
 * reference: data must outlive the model). */
Onnx__TensorProto *oxe_tensor(oxe_ctx *x, const char *name, const dy_type *t, const void *data);
/* Add an initializer to the main graph. */
void oxe_add_init(oxe_ctx *x, Onnx__TensorProto *t);
/* A Constant node of x->cur making t (under t's name). The importer
 * reads a Constant as a constant that is not a trainable weight. */
void oxe_constant(oxe_ctx *x, Onnx__TensorProto *t);
/* Constants made for the op being exported (Constant nodes of x->cur):
 * 1-D i64, a scalar (rank 0) of dtype dt. Return their names. */
const char *oxe_const_i64s(oxe_ctx *x, int n, const int64_t *v);
const char *oxe_const_scalar(oxe_ctx *x, dy_dtype dt, double v);
/* A ValueInfoProto of name and type t (a symbolic dim is a dim_param:
 * its symbol's name, "batch" for the batch, or its expression). */
Onnx__ValueInfoProto *oxe_value_info(oxe_ctx *x, const char *name, const dy_type *t);
void oxe_add_io(oxe_ctx *x, oxe_graph *g, bool output, Onnx__ValueInfoProto *v);
/* DY_STATUS_UNSUPPORTED naming the op being exported and its line. */
dy_status oxe_refuse(oxe_ctx *x, const char *why);

/* onnx_export_ops.c: op (of block 0 or a sub-block; not cond / while) as
 * nodes of x->cur, its outputs named as its output vars. */
dy_status oxe_op(oxe_ctx *x, const dy_op *op);

/* onnx_table.c: the row whose op is `op` (the first), or NULL. */
const ox_direct *ox_find_direct_op(const char *op);

#endif
