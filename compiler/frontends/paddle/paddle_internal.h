/* paddle_internal.h - private header of the PaddlePaddle frontend
 * (compiler/frontends/paddle/). Not part of the public API. Its files, each
 * calling only the ones below it:
 *
 *   paddle.c         the importer's dispatcher: files, feeds and fetches,
 *                    the scan and the import loop over block 0
 *   paddle_export.c  the exporter's dispatcher: the ProgramDesc's vars,
 *                    feed/fetch ops, the params stream
 *   paddle_pir.c     a Paddle 3 PIR program (inference.json) translated
 *                    into the equivalent ProgramDesc, which paddle.c
 *                    imports (its own pd_op -> legacy op table; the
 *                    exporter's builders of paddle_write.c)
 *   paddle_table.c   THE op table: one row per Paddle op type, which both
 *                    directions read (Paddle type <-> op, family,
 *                    attribute name map, own importer / exporter)
 *   paddle_nn.c, paddle_shape.c, paddle_math.c
 *                    the op families with their own lowering, the
 *                    importer and the exporter of an op side by side
 *   paddle_control.c while (and its sub-block) and the ops around it:
 *                    shape, set_value, one_hot_v2 (import only)
 *   paddle_ext.c     the ops that take many ops to lower (import only)
 *   paddle_shape_tensor.c
 *                    list attributes given as tensors (ShapeTensor...):
 *                    folded when constant, fill_constant's shape at run
 *                    time through size symbols
 *   paddle_custom.c  an op type registered as a custom op (dy_custom.h)
 *   paddle_family.c  the one-to-one families (X -> Out with attributes
 *                    mapped by name; elementwise with Paddle's axis)
 *   paddle_build.c   appending ops to the Program, the SSA naming rule,
 *                    the small op builders
 *   paddle_params.c  the params stream, parameters becoming vars, inputs
 *   paddle_desc.c    dtypes, errors, VarDescs, op slots and attributes
 *   paddle_write.c   the exporter's protobuf builders
 *
 * The importer walks block 0's OpDescs in order. Paddle names are the
 * Program's var names: the newest definition of a name holds it, so a
 * lookup is dy_program_find_var; an op that writes a name already defined
 * (an in-place op: `tanh` writing its input, reshape with inplace=true)
 * renames the older var to "<name>@<k>" first, which makes the Program SSA
 * while readers after the op see the new value. Persistable vars are kept
 * host-side (pd_param) and become Program vars only when an op reads them.
 */
#ifndef DY_PADDLE_INTERNAL_H
#define DY_PADDLE_INTERNAL_H

#include <stdlib.h>

#include "dy_custom.h"
#include "dy_frontends.h"
#include "fe_internal.h"
#include "paddle_framework.pb-c.h"

typedef Paddle__Framework__Proto__ProgramDesc PdProgram;
typedef Paddle__Framework__Proto__BlockDesc PdBlock;
typedef Paddle__Framework__Proto__VarDesc PdVar;
typedef Paddle__Framework__Proto__OpDesc PdOp;
typedef Paddle__Framework__Proto__OpDesc__Attr PdAttr;
typedef Paddle__Framework__Proto__VarType__TensorDesc PdTensorDesc;

/* Paddle's VarType.Type values the frontend names. */
enum {
  PD_BOOL = 0, PD_INT16 = 1, PD_INT32 = 2, PD_INT64 = 3, PD_FP16 = 4, PD_FP32 = 5,
  PD_FP64 = 6, PD_LOD_TENSOR = 7, PD_SELECTED_ROWS = 8, PD_FEED_MINIBATCH = 9,
  PD_FETCH_LIST = 10, PD_LOD_TENSOR_ARRAY = 13, PD_READER = 15, PD_RAW = 17,
  PD_UINT8 = 20, PD_INT8 = 21, PD_BF16 = 22,
};
/* AttrType values. */
enum {
  PD_A_INT = 0, PD_A_FLOAT = 1, PD_A_STRING = 2, PD_A_INTS = 3, PD_A_FLOATS = 4,
  PD_A_STRINGS = 5, PD_A_BOOLEAN = 6, PD_A_BOOLEANS = 7, PD_A_BLOCK = 8, PD_A_LONG = 9,
  PD_A_BLOCKS = 10, PD_A_LONGS = 11, PD_A_FLOAT64S = 12, PD_A_VAR = 13, PD_A_VARS = 14,
  PD_A_FLOAT64 = 15, PD_A_SCALAR = 16, PD_A_SCALARS = 17,
};

/* A persistable var read from the params stream: its Paddle dtype and
 * dims as stored, and its bytes (pointing into the params buffer). */
typedef struct {
  const char *name;     /* borrowed from the ProgramDesc */
  int pd_dtype;
  int rank;
  int64_t dims[DY_MAX_DIMS];
  const uint8_t *data;
  size_t nbytes;
  int var;              /* Program var once materialised, else -1 */
} pd_param;

struct pd_op_def;

#define PD_MAX_LOD 256 /* names carrying a LoD per Program */

typedef struct pd_ctx {
  dy_program *p;
  dy_error *err;
  const dy_paddle_options *opts;
  const char *path;         /* the model's name, for errors and locations */
  const PdProgram *prog;
  const PdBlock *blk;
  pd_param *params;         /* sorted by name */
  int n_params;
  /* the op being imported, and its row of the op table */
  const PdOp *op;
  const struct pd_op_def *def;
  int op_index;
  dy_srcloc loc;
  int n_renamed;            /* counter for SSA renames */
  bool *needed;             /* per op of block 0: imported (all, unless
                               dy_paddle_options names the fetches)      */
  int block;                /* the Program block ops go to: 0, or a while's
                               block being built (the rnn op)            */
  bool no_params;           /* params absent and optional: parameters are
                               typed from their VarDescs, without data   */
  /* LoD (paddle_lod.c): the Paddle names that carry level-0 offsets and
   * the Program var of their offsets (a LoD feed's NAME@lod) */
  int n_lod;
  const char *lod_name[PD_MAX_LOD];
  int lod_var[PD_MAX_LOD];
  /* imports c->op by its table row (paddle.c's; the control-flow rows
   * import their sub-blocks' ops through it) */
  dy_status (*import_op)(struct pd_ctx *c);
  int depth;                /* sub-blocks being imported (at most
                               PD_MAX_DEPTH: a hostile block tree)        */
} pd_ctx;

#define PD_TRY(x)       \
  do {                  \
    dy_status s_ = (x); \
    if (s_)             \
      return s_;        \
  } while (0)

/* ---- paddle_desc.c: dtypes, errors, VarDescs, slots, attributes ---- */

/* bytes per element of a Paddle dtype, 0 for one without a fixed size */
size_t pd_dtype_size(int pd_dtype);
const char *pd_dtype_name(int pd_dtype);
/* Paddle dtype -> dy dtype (i32 and smaller ints widen to i64); false for
 * float16 and others dy2stc lacks. */
bool pd_dtype_to_dy(int pd_dtype, dy_dtype *out);

/* Error naming the current op: "<path>: op 12 (conv2d -> conv2d_3.tmp_0):
 * msg". */
dy_status pd_fail(pd_ctx *c, dy_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The VarDesc of a name in block 0, or NULL. */
const PdVar *pd_var_desc(const pd_ctx *c, const char *name);
/* A VarDesc's TensorDesc (LoD tensor or selected rows), or NULL; its LoD
 * level (0 for none). */
const PdTensorDesc *pd_tensor_desc(const PdVar *v);
int pd_lod_level(const PdVar *v);

/* Inputs and outputs of the current op by slot ("X", "Out"). */
int pd_n_args(pd_ctx *c, bool output, const char *slot);
const char *pd_arg(pd_ctx *c, bool output, const char *slot, int i);
/* The type of a var. */
const dy_type *pd_type(pd_ctx *c, int var);

/* Attributes. */
const PdAttr *pd_attr(pd_ctx *c, const char *name);
int64_t pd_attr_i(pd_ctx *c, const char *name, int64_t dflt);
double pd_attr_f(pd_ctx *c, const char *name, double dflt);
bool pd_attr_b(pd_ctx *c, const char *name, bool dflt);
/* string into buf (dflt when absent) */
const char *pd_attr_s(pd_ctx *c, const char *name, const char *dflt, char *buf, size_t n);
/* ints or longs into out (at most cap); returns the count, -1 if absent */
int pd_attr_ints(pd_ctx *c, const char *name, int64_t *out, int cap);
/* the length of a list attribute (1 for a single int), -1 if absent */
int pd_attr_len(pd_ctx *c, const char *name);
/* a list of exactly two ints (strides, dilations, ksize) into out, left
 * as it is when absent; another length fails naming the attribute */
dy_status pd_attr_pair(pd_ctx *c, const char *name, int64_t out[2]);
int pd_attr_floats(pd_ctx *c, const char *name, float *out, int cap);

/* ---- paddle_params.c: the params stream, parameters, inputs ---- */

/* Persistable vars of block 0 that the params stream holds. */
bool pd_in_params(const PdVar *v);
/* Read the params stream (every byte accounted for) into c->params. */
dy_status pd_read_params(pd_ctx *c, const uint8_t *buf, size_t n);
/* The param of a name, or NULL; it as a Program var (made once). */
pd_param *pd_find_param(pd_ctx *c, const char *name);
dy_status pd_materialize(pd_ctx *c, pd_param *pm, int *var);
/* The var holding the current value of input slot[i] (a parameter is made
 * a Program var here). Errors name the slot and the Paddle name. */
dy_status pd_in(pd_ctx *c, const char *slot, int i, int *var);
/* Same, -1 in *var when the slot is absent or empty. */
dy_status pd_in_opt(pd_ctx *c, const char *slot, int i, int *var);

/* ---- paddle_build.c: building ops (a NULL name: a temporary) ---- */

/* A var for the Paddle name `name` (the SSA rule renames an older holder);
 * -1 when the Program cannot add it. */
int pd_define(pd_ctx *c, const char *name, const dy_type *t);
/* Append op `name` (the op table's) on inputs; out gets the new output var
 * (named `out_name` with the SSA rule, or a temporary when NULL). */
dy_status pd_op(pd_ctx *c, const char *name, const int *in, int n_in, const dy_attr *attrs,
                int n_attrs, const char *out_name, int *out);
/* Bind output slot[0] of the current op to var: the var takes the Paddle
 * name (the SSA rule renames an older holder). */
dy_status pd_set_out(pd_ctx *c, const char *slot, int var);
/* True if an op after the current one reads the Paddle name. */
bool pd_read_later(pd_ctx *c, const char *name);
/* A new var of type t in the current block (a block param). */
int pd_new_var(pd_ctx *c, const char *stem, const dy_type *t);
/* A new persistable constant var, named name (the SSA rule) or a
 * temporary when NULL. */
dy_status pd_const(pd_ctx *c, dy_dtype dt, int rank, const int64_t *shape, const void *data,
                   const char *name, int *out);
dy_status pd_const_f32(pd_ctx *c, float v, int *out);   /* shape [1] */

const char *pd_out_name(pd_ctx *c, const char *slot);   /* output slot[0] */
dy_status pd_unary(pd_ctx *c, const char *op, int x, const char *name, int *out);
dy_status pd_binary(pd_ctx *c, const char *op, int a, int b, const char *name, int *out);
/* an op with one ints attribute */
dy_status pd_ints_op(pd_ctx *c, const char *op, const char *attr, int x, int n,
                     const int64_t *v, const char *name, int *out);
dy_status pd_reshape(pd_ctx *c, int x, int rank, const int64_t *shape, const char *name,
                     int *out);
dy_status pd_transpose(pd_ctx *c, int x, int rank, const int64_t *perm, const char *name,
                       int *out);
dy_status pd_unsqueeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name,
                       int *out);
dy_status pd_squeeze(pd_ctx *c, int x, int n, const int64_t *axes, const char *name, int *out);
dy_status pd_flatten(pd_ctx *c, int x, int start, int stop, const char *name, int *out);
/* [start, end) of one axis, step 1, into name (NULL: a temporary) */
dy_status pd_slice1(pd_ctx *c, int x, int64_t axis, int64_t start, int64_t end, const char *name,
                    int *out);
/* The most elements of a shape value the importer folds (paddle_build.c:
 * an op on small integer constants runs at import time). */
#define PD_FOLD_MAX 64
/* The deepest nesting of control-flow sub-blocks the importer follows. */
#define PD_MAX_DEPTH 32
/* The values of a small integer constant var (a folded shape value) into
 * out: the count, or -1 when var is no such constant (or has more than
 * cap elements). */
int pd_const_ints(pd_ctx *c, int var, int64_t *out, int cap);
/* fill_constant's value: str_value when given, else value */
double pd_fill_value(pd_ctx *c);
dy_status pd_scale(pd_ctx *c, int x, double s, double b, const char *name, int *out);
/* the product of shape[0..n) within DY_MAX_NUMEL, or an error naming what */
dy_status pd_checked_numel(pd_ctx *c, const int64_t *shape, int n, const char *what,
                           int64_t *out);
/* a double as float32 (out of range: +-inf) */
double pd_as_f32(double v);
/* output slot takes x unchanged */
dy_status pd_identity(pd_ctx *c, int x, const char *slot);
/* the input slot (a tensor form of an attribute) must be absent */
dy_status pd_no_input(pd_ctx *c, const char *slot, const char *what);
dy_status pd_need_static_dim(pd_ctx *c, int var, int d, const char *what);
/* the attribute (data_format, data_layout) says NHWC */
bool pd_is_nhwc(pd_ctx *c, const char *attr);

/* ---- paddle_shape_tensor.c: attributes given as tensors ---- */

/* A list attribute from tensor inputs: slot (one 1-D int tensor) or list
 * (one [1] int tensor each), either NULL when the op has no such slot.
 * Neither given: *n = -1. Values known at import are folded into out;
 * a value known only at run time is an error naming the slot, unless
 * elem_vars is given: then out[i] = -1 and elem_vars[i] is a [1] var of
 * the value (-1 for a folded one). */
dy_status pd_tensor_ints(pd_ctx *c, const char *slot, const char *list, int64_t *out,
                         int cap, int *n, int *elem_vars);
/* fill_constant of a shape with run-time dims (elem_vars[i] >= 0; the
 * others static shape[i]) through run-time size symbols, value in dtype
 * dt, into name. */
dy_status pd_fill_run_time(pd_ctx *c, int rank, const int64_t *shape, const int *elem_vars,
                           dy_dtype dt, double value, const char *name, int *out);

/* ---- paddle_custom.c: a registered custom op (runtime/dy_custom.h) ---- */

/* The current op, of a type registered as custom op cu, as a custom op. */
dy_status pd_import_custom(pd_ctx *c, const dy_custom_op *cu);

/* ---- paddle_write.c: the exporter's protobuf builders ---- */

/* What the exporter writes is malloc'd and listed here, freed together
 * (pdx_free); oom is set by the first allocation that fails, after which
 * every builder does nothing. */
typedef struct {
  void **ptrs;
  size_t n, cap;
  bool oom;
  dy_error *err;
  const dy_program *p;
} pdx_ctx;

void *pdx_alloc(pdx_ctx *x, size_t n);   /* zeroed */
char *pdx_str(pdx_ctx *x, const char *s);
/* Append v to a protobuf-c repeated field (n, array). */
void pdx_push(pdx_ctx *x, size_t *n, void ***arr, void *v);
void pdx_free(pdx_ctx *x);
/* Error naming the op: "export to Paddle: <msg>", DY_STATUS_UNSUPPORTED. */
dy_status pdx_unsupported(pdx_ctx *x, const dy_op *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new op of Paddle type `type` at the end of block b. */
PdOp *pdx_op(pdx_ctx *x, PdBlock *b, const char *type);
/* Add var name to the op's input or output slot (made when new). */
void pdx_arg(pdx_ctx *x, PdOp *op, bool output, const char *slot, const char *name);
/* An op reading X and writing Out. */
PdOp *pdx_xo(pdx_ctx *x, PdBlock *b, const char *type, const char *in, const char *out);
/* Attributes of the op, each of its Paddle kind. */
void pdx_at_i(pdx_ctx *x, PdOp *op, const char *name, int64_t v);
void pdx_at_f(pdx_ctx *x, PdOp *op, const char *name, double v);
void pdx_at_b(pdx_ctx *x, PdOp *op, const char *name, bool v);
void pdx_at_s(pdx_ctx *x, PdOp *op, const char *name, const char *v);
void pdx_at_ints(pdx_ctx *x, PdOp *op, const char *name, const int64_t *v, int n);
void pdx_at_l(pdx_ctx *x, PdOp *op, const char *name, int64_t v);
void pdx_at_floats(pdx_ctx *x, PdOp *op, const char *name, const float *v, int n);
/* Paddle's dtype of a dy dtype (f32, i64, bool). */
int pdx_dtype(dy_dtype t);
/* A TensorDesc of type t; a VarDesc of block b (t NULL: not a tensor). */
PdTensorDesc *pdx_tdesc(pdx_ctx *x, const dy_type *t);
PdVar *pdx_var(pdx_ctx *x, PdBlock *b, const char *name, int vtype, const dy_type *t);
/* The same of a Paddle dtype and dims (-1: unknown); a VarDesc holding td
 * (NULL: not a tensor). */
PdTensorDesc *pdx_tdesc_pd(pdx_ctx *x, int pd_dtype, int rank, const int64_t *dims);
PdVar *pdx_var_td(pdx_ctx *x, PdBlock *b, const char *name, int vtype, PdTensorDesc *td);
/* The Program name of var id. */
const char *pdx_vname(pdx_ctx *x, int id);
/* An XShape output (what Paddle's *2 shape ops carry): [0, dims...] of
 * the op's input var in. */
void pdx_xshape(pdx_ctx *x, PdBlock *b, PdOp *op, int in);
/* dy's paddings ([h, w], or [top, left, bottom, right]) as Paddle's ([h,
 * w], or [top, bottom, left, right]): the count. */
int pdx_pads(const int64_t *p, int n, int64_t out[4]);

/* ---- paddle_pir.c: PIR JSON -> ProgramDesc ---- */

/* The attribute of a translated op holding its PIR op's number k: the
 * source line of what it becomes is k + 1 (as op k of a .pdmodel's). */
#define PIR_OP_ATTR "dy2stc_pir_op"

/* The PIR program (inference.json's bytes) as a serialized ProgramDesc
 * (malloc'd into *desc) that dy_paddle_load_mem imports. Errors name the
 * JSON byte offset or the PIR op. */
dy_status pd_pir_to_desc(const uint8_t *json, size_t n, const char *name, uint8_t **desc,
                         size_t *desc_n, dy_error *err);

/* ---- the op table (paddle_table.c) and its families ---- */

/* How a row maps: */
typedef enum {
  PD_FAM_XO,    /* X -> Out, the attributes mapped by name (paddle_family.c) */
  PD_FAM_EW,    /* X, Y -> Out with Paddle's axis rule (paddle_family.c)      */
  PD_FAM_OWN,   /* the row's own importer and exporter                        */
} pd_family;

/* An attribute of a row: Paddle's name, the op's (ops.def), how Paddle
 * stores it (PD_A_INT, PD_A_FLOAT, PD_A_BOOLEAN, PD_A_INTS) and Paddle's
 * default; dy NULL: a Paddle attribute the op does not have, which the
 * exporter writes with the value and the importer leaves alone. tensor:
 * the input slots that would give the attribute as a tensor, which the
 * importer does not support (they must be absent). */
typedef struct {
  const char *pd;
  const char *dy;
  int kind;
  double value;
  const char *tensor[2];
} pd_attr_map;

typedef dy_status (*pd_map_fn)(pd_ctx *c);
typedef dy_status (*pd_export_fn)(pdx_ctx *x, PdBlock *b, const dy_op *o,
                                  const struct pd_op_def *d);

/* One Paddle op type. The importer calls import (with c->def the row)
 * when set, else the family's; the exporter writes an op of the row's dy
 * op through the first row naming it that exports: an XO or EW row, or an
 * OWN row with an exporter (an OWN row without one is import only). */
typedef struct pd_op_def {
  const char *type;         /* the Paddle op type                         */
  const char *dy;           /* the op (ops.def), or NULL (a composite)     */
  pd_family family;
  pd_map_fn import;         /* OWN, or a check before the family's import */
  pd_export_fn export;      /* OWN rows that export (or a check before the
                               family's export)                          */
  bool xshape;              /* XO export: Paddle's *2 shape ops' XShape   */
  pd_attr_map attrs[4];     /* the attributes by name (pd NULL: no more):
                               XO rows, and the own importers and exporters
                               that read them from the row               */
} pd_op_def;

/* paddle_table.c: the row of a Paddle op type, or NULL. */
const pd_op_def *pd_op_def_of(const char *type);
/* The row that exports ops of dy op name `op`, or NULL. */
const pd_op_def *pd_op_def_for(const char *op);
/* For op types without a row that are known: why not ("LoD sequences"). */
const char *pd_unsupported_reason(const char *type);
/* Import the current op as row d; export op o as row d. */
dy_status pd_import_row(pd_ctx *c, const pd_op_def *d);
dy_status pd_export_row(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d);

/* paddle_family.c: the one-to-one families. pd_import_mapped builds
 * c->def's op on x with its attributes read by the map (after checking
 * their tensor forms are absent: pd_no_tensor_attrs), into output Out. */
dy_status pd_no_tensor_attrs(pd_ctx *c);
dy_status pd_import_xo(pd_ctx *c);
dy_status pd_import_mapped(pd_ctx *c, int x);
dy_status pd_import_ew(pd_ctx *c);
dy_status pd_export_xo(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d);
dy_status pd_export_ew(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d);

/* The OWN rows' importers and exporters, by family file. */
#define PD_IMPORTER(name) dy_status pd_import_##name(pd_ctx *c)
#define PD_EXPORTER(name) \
  dy_status pd_export_##name(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d)

/* paddle_nn.c */
PD_IMPORTER(conv2d);
PD_IMPORTER(conv2d_transpose);
PD_EXPORTER(conv2d);            /* conv2d and conv2d_transpose */
PD_IMPORTER(pool2d);
PD_EXPORTER(pool2d);
PD_IMPORTER(batch_norm);
PD_EXPORTER(batch_norm);
PD_IMPORTER(layer_norm);
PD_IMPORTER(group_norm);
PD_EXPORTER(norm);              /* layer_norm and group_norm */
PD_IMPORTER(dropout);
PD_EXPORTER(dropout);

/* paddle_shape.c */
PD_IMPORTER(reshape);           /* reshape, transpose: the row's ints */
PD_IMPORTER(transpose);
PD_IMPORTER(flatten_contiguous_range);
PD_IMPORTER(flatten);
PD_IMPORTER(squeeze);
PD_IMPORTER(unsqueeze);
PD_EXPORTER(unsqueeze);
PD_IMPORTER(concat);
PD_EXPORTER(concat);
PD_IMPORTER(split);
PD_IMPORTER(stack);
PD_IMPORTER(slice);
PD_EXPORTER(slice);
PD_IMPORTER(reduce);            /* the row's dy op */
/* reduce op `op` of x by the current op's dim / keep_dim / reduce_all */
dy_status pd_reduce_as(pd_ctx *c, const char *op, int x, const char *name, int *out);
PD_EXPORTER(reduce);
PD_IMPORTER(gather);
PD_EXPORTER(gather);
PD_IMPORTER(lookup_table);
PD_IMPORTER(lookup_table_v2);

/* paddle_math.c */
PD_IMPORTER(mul);
PD_IMPORTER(matmul);
PD_IMPORTER(matmul_v2);
PD_EXPORTER(matmul);
PD_IMPORTER(relu6);
PD_IMPORTER(hard_swish);
PD_IMPORTER(swish);
PD_IMPORTER(pow);
PD_IMPORTER(arg_max);
PD_IMPORTER(cast);
PD_EXPORTER(cast);
PD_IMPORTER(where);
PD_EXPORTER(where);
PD_IMPORTER(assign);
PD_IMPORTER(fill_constant);
PD_EXPORTER(full);

/* paddle_ext.c (import only) */
PD_IMPORTER(fill_constant_batch_size_like);
PD_IMPORTER(rnn);
PD_IMPORTER(prior_box);
PD_IMPORTER(box_coder);
PD_IMPORTER(nearest_interp);
PD_IMPORTER(nearest_interp_v2);
PD_IMPORTER(bilinear_interp);
PD_IMPORTER(bilinear_interp_v2);
PD_IMPORTER(pixel_shuffle);

/* paddle_det.c (import only) */
PD_IMPORTER(multiclass_nms);
PD_IMPORTER(yolo_box);

/* paddle_lod.c (LoD sequences, import only) */
PD_IMPORTER(sequence_pool);
PD_IMPORTER(lstm);
PD_IMPORTER(sequence_pad);
PD_IMPORTER(sequence_mask);
PD_IMPORTER(gru);
PD_IMPORTER(crf_decoding);

/* A LoD feed's type (dim 0 the size symbol "<feed>_len") before it is
 * defined, and after: its offsets, the feed NAME@lod i64 [batch+1]. */
dy_status pd_lod_feed_type(pd_ctx *c, const char *name, dy_type *t);
dy_status pd_lod_feed_offsets(pd_ctx *c, const char *name);
/* After an op: each output whose VarDesc has a LoD takes its first LoD
 * input's offsets (the row-wise ops: lookup_table, mul, add, tanh, lstm). */
dy_status pd_lod_propagate(pd_ctx *c);

/* paddle_control.c (import only) */
PD_IMPORTER(while);
PD_IMPORTER(shape);
PD_IMPORTER(one_hot_v2);
PD_IMPORTER(set_value);
PD_IMPORTER(assign_value);
PD_IMPORTER(scale);             /* of int64; else the row's family */
PD_IMPORTER(conditional_block);
PD_IMPORTER(select_input);
PD_IMPORTER(logical);           /* logical_and / or / xor / not */
PD_IMPORTER(reduce_bool);       /* reduce_all, reduce_any */
PD_IMPORTER(negated_compare);   /* not_equal, greater_equal, less_equal */
PD_IMPORTER(tril_triu);

#endif
