/* paddle_internal.h - private header of the PaddlePaddle frontend
 * (paddle.c: files, params and the import loop; paddle_ops.c,
 * paddle_ops_ext.c: the op mappers; paddle_export.c: the writer). Not part of the public API.
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

typedef struct pd_ctx {
  dy_program *p;
  dy_error *err;
  const dy_paddle_options *opts;
  const char *path;         /* the model's name, for errors and locations */
  const PdProgram *prog;
  const PdBlock *blk;
  pd_param *params;         /* sorted by name */
  int n_params;
  /* the op being imported */
  const PdOp *op;
  int op_index;
  dy_srcloc loc;
  int n_renamed;            /* counter for SSA renames */
  bool *needed;             /* per op of block 0: imported (all, unless
                               dy_paddle_options names the fetches)      */
  int block;                /* the Program block ops go to: 0, or a while's
                               block being built (the rnn op)            */
} pd_ctx;

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

/* Inputs and outputs of the current op by slot ("X", "Out"). */
int pd_n_args(pd_ctx *c, bool output, const char *slot);
const char *pd_arg(pd_ctx *c, bool output, const char *slot, int i);
/* The var holding the current value of input slot[i] (a parameter is made
 * a Program var here). Errors name the slot and the Paddle name. */
dy_status pd_in(pd_ctx *c, const char *slot, int i, int *var);
/* Same, -1 in *var when the slot is absent or empty. */
dy_status pd_in_opt(pd_ctx *c, const char *slot, int i, int *var);
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
int pd_attr_floats(pd_ctx *c, const char *name, float *out, int cap);

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

/* ---- paddle_ops.c: builders over pd_op (a NULL name: a temporary) ---- */
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
/* [start, end) of one axis, step 1, into a temporary */
dy_status pd_slice1(pd_ctx *c, int x, int64_t axis, int64_t start, int64_t end, int *out);
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

typedef dy_status (*pd_map_fn)(pd_ctx *c);
typedef struct {
  const char *type;
  pd_map_fn map;
} pd_mapper;
/* paddle_ops_ext.c's mappers, ended by {NULL, NULL} */
extern const pd_mapper pd_mappers_ext[];
/* The mapper of a Paddle op type, or NULL. */
pd_map_fn pd_find_mapper(const char *type);
/* For op types with no mapper that are known: why not ("LoD sequences"). */
const char *pd_unsupported_reason(const char *type);

#define PD_TRY(x)       \
  do {                  \
    dy_status s_ = (x); \
    if (s_)             \
      return s_;        \
  } while (0)

#endif
