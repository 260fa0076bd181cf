/* dy_runtime.h - the eager tensor API, layers, the tracer / static mode,
 * to_static, jit_save / jit_load and the static executor.
 *
 * Eager use: every call computes at once and returns a new tensor.
 *
 *   dy_scope_begin();
 *   dy_tensor *h = dy_relu(dy_add(dy_matmul(x, w, false, false), b));
 *   dy_tensor *out = dy_keep(h);           // survives the scope
 *   dy_scope_end();                        // frees every intermediate
 *   ...
 *   dy_tensor_free(out);
 *
 * Memory discipline. Tensors are reference counted. A tensor returned by an
 * op belongs to the innermost open scope (dy_scope_begin/_end); when no
 * scope is open it belongs to the caller, who frees it with dy_tensor_free.
 * dy_keep(t) takes one extra reference for the caller, so t outlives the
 * scope. Views (reshape, flatten) hold a reference to their base. Layer
 * parameters are owned by their layer. Every layer call is itself a scope:
 * dy_call1(net, x) frees the forward's intermediates when it returns and
 * hands back only its output, so even without a scope of one's own a layer
 * call leaks nothing (its result is then the caller's to free).
 *
 * Errors. Ops return NULL on error and record the first error in a
 * thread-local slot (dy_last_error); an op given a NULL input returns NULL
 * at once, so a nested expression fails as a whole and the first cause is
 * kept. Functions that return dy_status fill a dy_error as in ir/.
 *
 * Source locations. Every op is a macro over a function taking a
 * dy_srcloc, so the op records the file:line of the user's call:
 * dy_add(a, b) is dy_add_at(a, b, DY_HERE). The library itself never uses
 * these macros: its internal calls pass no location ((dy_srcloc){0}) and
 * inherit the user's, so no op ever points into the library. An op
 * computed inside a built-in layer records the layer's user location:
 *   - the user's call of the layer (dy_call1(net, x) at main.c:40);
 *   - a layer called by the library (a Sequential's child, the root of
 *     dy_trace): the line where the user added it to its parent
 *     (dy_sequential_append at net.c:12), so each LeNet op points at its
 *     own layer's line, as PyTorch and Paddle users expect; a layer
 *     never added records its caller's location, or the line of the
 *     dy_trace / dy_program_from_layer / dy_jit_save call for a root.
 *
 * Tracing and static mode. dy_trace runs a layer eagerly and records each op
 * into a Program as it executes; dy_program_from_layer calls the same
 * forward with symbolic tensors (shape only, -1 for the dynamic batch) and
 * records without computing. dy_jit_save builds that Program and writes
 * .dymodel + .dyparams; dy_jit_load reads them back and dy_executor_run
 * interprets them with the same kernels.
 */
#ifndef DY_RUNTIME_H
#define DY_RUNTIME_H

#include "dy_ir.h"

/* ------------------------------------------------------------------ */
/* tensor.c: tensors, scopes, errors                                   */
/* ------------------------------------------------------------------ */

typedef struct dy_tensor {
  dy_type type;           /* concrete in eager mode; -1 dims when symbolic  */
  void *data;             /* NULL for a symbolic tensor                     */
  size_t nbytes;          /* bytes of data                                  */
  int refcount;
  struct dy_tensor *base; /* a view's base (referenced), else NULL          */
  char *name;             /* parameter name ("linear.weight"), or NULL      */
  bool borrowed;          /* data not owned (the executor's view of a
                             Program's parameter); never freed here        */
  /* tracer bookkeeping */
  int var;                /* var id in the trace whose id is trace_id       */
  unsigned trace_id;
  /* autograd */
  bool requires_grad;     /* a leaf whose gradient is wanted (a layer's f32
                             parameter; traced as a trainable var)         */
  struct dy_tensor *grad; /* its accumulated gradient (owned), or NULL      */
  /* eager autograd's tape (runtime/tape.c, dy_autograd.h) */
  struct dy_tape_node *grad_fn; /* the recorded op that made it, or NULL  */
  int tape_refs;          /* how many of refcount the tape holds            */
  unsigned ag_pass;       /* scratch of one dy_backward / tape pruning pass */
  int ag_val, ag_aux;     /* (valid while ag_pass is that pass's number)    */
} dy_tensor;

/* Returns a new zero-filled tensor. Owned as described above. */
dy_tensor *dy_tensor_new(dy_dtype dtype, int rank, const int64_t *shape);
/* Returns a new tensor holding a copy of data (numel * dtype size bytes). */
dy_tensor *dy_tensor_from_data(dy_dtype dtype, int rank, const int64_t *shape,
                               const void *data);
/* Returns a new symbolic tensor (no data). */
dy_tensor *dy_tensor_symbolic(const dy_type *type);
/* Drop one reference; the tensor is freed when none remain. NULL is ok. */
void dy_tensor_free(dy_tensor *t);
/* Take a reference for the caller (who frees it with dy_tensor_free). */
dy_tensor *dy_keep(dy_tensor *t);

static inline int64_t dy_tensor_numel(const dy_tensor *t) {
  return dy_type_numel(&t->type);
}
static inline float *dy_tensor_f32(const dy_tensor *t) {
  return (float *)t->data;
}

void dy_scope_begin(void);
/* Release every tensor the scope holds (kept ones survive). */
void dy_scope_end(void);

/* The first error since the last dy_clear_error, or NULL. Borrowed. */
const dy_error *dy_last_error(void);
void dy_clear_error(void);
/* Record an error in the thread-local slot (first one wins). Returns NULL
 * so ops can `return dy_fail(...)`. */
dy_tensor *dy_fail(dy_status s, dy_srcloc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Warnings (a model saved in train mode, ...) go to a handler; the default
 * prints "dy2stc: warning: <msg>" on stderr. NULL restores the default. */
typedef void (*dy_warning_fn)(const char *msg, void *user);
void dy_set_warning_handler(dy_warning_fn fn, void *user);
void dy_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print a tensor (shape and up to `limit` values) for debugging. */
void dy_tensor_print(const dy_tensor *t, const char *label, int limit,
                     FILE *out);

/* ------------------------------------------------------------------ */
/* random.c: seeded generator (like paddle.seed)                       */
/* ------------------------------------------------------------------ */

void dy_seed(uint64_t seed);
uint64_t dy_rand_u64(void);
/* The generator's xoshiro256** state, to save and restore it exactly (a
 * training checkpoint): the next dy_rand_u64 after dy_rand_state_set(s) is
 * the one after dy_rand_state_get(s). Normal deviates' pending spare is
 * dropped. */
void dy_rand_state_get(uint64_t s[4]);
void dy_rand_state_set(const uint64_t s[4]);
float dy_rand_uniform(void);   /* [0, 1) */
float dy_rand_normal(void);    /* N(0, 1) */

/* ------------------------------------------------------------------ */
/* kernels/: reference kernels, one per op (the table: kernels.c)     */
/* ------------------------------------------------------------------ */

/* Compute op on concrete inputs into outputs already allocated with the
 * inferred types. Used by eager calls and the static executor alike. */
#define DY_OP(NAME, name, n_in, n_out, flags, attrs)                      \
  dy_status dy_kernel_##name(const dy_op *op, dy_tensor *const *in,      \
                             int n_in_, dy_tensor *const *out, dy_error *err);
#include "ops.def"
#undef DY_OP

typedef dy_status (*dy_kernel_fn)(const dy_op *op, dy_tensor *const *in,
                                  int n_in, dy_tensor *const *out,
                                  dy_error *err);
extern const dy_kernel_fn dy_kernel_table[DY_OP_COUNT];

/* ------------------------------------------------------------------ */
/* ops.c: the eager / tracing entry points                             */
/* ------------------------------------------------------------------ */

/* The one driver behind every op: propagate NULL inputs, infer, allocate,
 * run the kernel (unless symbolic), record into the active trace. Returns
 * the op's single output. An in-place op (DY_OPF_INPLACE: an optimizer
 * update, batch_norm_stats) allocates nothing: its kernel updates its
 * first n_out inputs and it returns in[0] (one more reference, owned like
 * any op result). */
dy_tensor *dy_apply(dy_op_kind kind, dy_tensor *const *in, int n_in,
                    const dy_attr *attrs, int n_attrs, dy_srcloc loc);

/* The plain elementwise ops of every family - the DY_UNARY and DY_BINARY
 * lines of ir/ops*.def (core: add sub mul div relu sigmoid tanh; math:
 * exp, log, pow, minimum, equal, ...; extra: sin, cos, ...). Each line is
 *
 *   dy_tensor *dy_<name>_at(dy_tensor *x, dy_srcloc loc);               unary
 *   dy_tensor *dy_<name>_at(dy_tensor *a, dy_tensor *b, dy_srcloc loc);  binary
 *
 * with the macro dy_<name>(x) / dy_<name>(a, b) (dy_ew_api.h, generated
 * from the same lines, where each macro carries the line's doc column: what
 * the op computes and its dtypes). E.g. DY_UNARY(EXP, exp, F32, "e^x") is
 * dy_exp(x); DY_BINARY(ADD, add, NUM, ...) is dy_add(a, b). Binary ops
 * broadcast numpy-style, both inputs of one dtype. */
#define DY_OP(NAME, name, n_in, n_out, flags, attrs)
#define DY_UNARY(NAME, name, rule, doc) \
  dy_tensor *dy_##name##_at(dy_tensor *x, dy_srcloc loc);
#define DY_BINARY(NAME, name, rule, flags, doc) \
  dy_tensor *dy_##name##_at(dy_tensor *a, dy_tensor *b, dy_srcloc loc);
#include "ops.def"
#undef DY_OP
#include "dy_ew_api.h"

dy_tensor *dy_matmul_at(dy_tensor *x, dy_tensor *y, bool transpose_x,
                        bool transpose_y, dy_srcloc loc);
dy_tensor *dy_softmax_at(dy_tensor *x, int axis, dy_srcloc loc);
dy_tensor *dy_reshape_at(dy_tensor *x, int rank, const int64_t *shape,
                         dy_srcloc loc);
dy_tensor *dy_flatten_at(dy_tensor *x, int start_axis, int stop_axis,
                         dy_srcloc loc);
dy_tensor *dy_transpose_at(dy_tensor *x, int rank, const int64_t *perm,
                           dy_srcloc loc);
dy_tensor *dy_full_at(dy_dtype dtype, int rank, const int64_t *shape,
                      double value, dy_srcloc loc);

#define dy_matmul(x, y, tx, ty) dy_matmul_at((x), (y), (tx), (ty), DY_HERE)
#define dy_softmax(x, axis) dy_softmax_at((x), (axis), DY_HERE)
/* dy_reshape(x, 2, DY_SHAPE(0, -1)) */
#define dy_reshape(x, rank, shape) dy_reshape_at((x), (rank), (shape), DY_HERE)
#define dy_flatten(x, start, stop) dy_flatten_at((x), (start), (stop), DY_HERE)
#define dy_transpose(x, rank, perm) dy_transpose_at((x), (rank), (perm), DY_HERE)
#define dy_full(dtype, rank, shape, v) dy_full_at((dtype), (rank), (shape), (v), DY_HERE)
#define dy_zeros(rank, shape) dy_full_at(DY_F32, (rank), (shape), 0.0, DY_HERE)
#define dy_ones(rank, shape) dy_full_at(DY_F32, (rank), (shape), 1.0, DY_HERE)

#define DY_SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* Seeded random tensors (dy_seed). Not ops: inside a trace the values
 * drawn become a constant of the Program. */
dy_tensor *dy_rand(int rank, const int64_t *shape);   /* U[0,1) */
dy_tensor *dy_randn(int rank, const int64_t *shape);  /* N(0,1) */

/* A scalar's value. In static mode, or on a traced tensor that depends on
 * the inputs, this is an error naming the call's source line (the value
 * would be baked into the Program): *ok is set false and 0 returned. */
double dy_item_at(dy_tensor *t, bool *ok, dy_srcloc loc);
#define dy_item(t, ok) dy_item_at((t), (ok), DY_HERE)

/* A condition's truth: t must be a bool tensor of one element. The
 * condition of an if/while/for written `if (dy_bool(t))` inside a
 * DY_TO_STATIC function is what `dy2stc compile` / `dy2stc convert`
 * rewrite into dy_cond / dy_while (compiler/cfront/cconvert.c), so the Program
 * keeps the branch. Called on a traced tensor that depends on the inputs
 * (a statement the converter did not rewrite), or on a non-bool or
 * non-scalar tensor, it is an error naming the line: false is returned and
 * dy_last_error() says why (check it when false is not the answer). */
bool dy_bool_at(dy_tensor *t, dy_srcloc loc);
#define dy_bool(t) dy_bool_at((t), DY_HERE)

/* ------------------------------------------------------------------ */
/* layer.c, layers.c: layers with parameters and train/eval            */
/* ------------------------------------------------------------------ */

typedef struct dy_layer dy_layer;

typedef struct {
  const char *type_name;     /* "Linear" */
  /* The forward computation. Returns the output (scope-owned like any op
   * result) or NULL on error. */
  dy_tensor *(*forward)(dy_layer *self, dy_tensor *const *in, int n_in);
  /* Extra cleanup for the layer's own fields (may be NULL). Children and
   * parameters are freed by dy_layer_free. */
  void (*destroy)(dy_layer *self);
  /* True when train() and eval() behave differently (dropout, batch_norm):
   * dy_jit_save warns about such layers still in train mode. */
  bool mode_dependent;
} dy_layer_vtable;

struct dy_layer {
  const dy_layer_vtable *vt;
  char name[64];             /* unique among siblings: "linear", "linear_1" */
  bool training;             /* train() / eval() */
  dy_layer *parent;
  int n_children;
  dy_layer *children[32];
  int n_params;
  dy_tensor *params[16];     /* owned; each has its full name set on add */
  dy_srcloc loc;             /* where the user added it to its parent */
};

/* Allocate a zeroed layer struct of `size` bytes (>= sizeof(dy_layer),
 * with dy_layer as its first member), in train mode as Paddle does.
 * Returns NULL on OOM. Free with dy_layer_free. */
dy_layer *dy_layer_new(size_t size, const dy_layer_vtable *vt,
                       const char *name);
void dy_layer_free(dy_layer *l);
/* Attach child (ownership passes to parent); renames on a clash. Returns
 * child, or NULL if full. loc (the user's line; empty from the library) is
 * where the ops of the child's library-made calls point. */
dy_layer *dy_layer_add_child_at(dy_layer *parent, dy_layer *child, dy_srcloc loc);
#define dy_layer_add_child(...) dy_layer_add_child_at(__VA_ARGS__, DY_HERE)
/* Register a parameter (ownership passes to the layer); returns it. */
dy_tensor *dy_layer_add_param(dy_layer *l, const char *name, dy_tensor *t);
/* Call the layer's forward (records like any op while tracing). loc is the
 * user's call site: ops inside built-in layers record it as their source
 * line, so a Program points at the user's `dy_call1(linear, x)`, not at
 * layers.c. An empty loc (a call from the library) means: the line where
 * the layer was added (l->loc), else the enclosing call's location. */
dy_tensor *dy_layer_call_at(dy_layer *l, dy_tensor *const *in, int n_in,
                            dy_srcloc loc);
#define dy_layer_call(l, in, n) dy_layer_call_at((l), (in), (n), DY_HERE)
#define dy_call1(l, x) dy_layer_call_at((l), (dy_tensor *const[]){(x)}, 1, DY_HERE)
#define dy_call2(l, x, y) \
  dy_layer_call_at((l), (dy_tensor *const[]){(x), (y)}, 2, DY_HERE)
/* The user location of the innermost layer call in progress (for layers'
 * forwards to pass to the _at ops), or an empty location. */
dy_srcloc dy_layer_caller(void);
/* Set train/eval mode on l and every descendant. */
void dy_layer_train(dy_layer *l);
void dy_layer_eval(dy_layer *l);
/* "linear.weight": the parameter's dotted path below the root layer. */
void dy_layer_param_path(const dy_layer *l, const char *param, char *buf,
                         size_t n);

/* Linear: y = x @ W + b with W [in, out] (Paddle's layout). Kaiming-uniform
 * style init from the seeded generator: U(-1/sqrt(in), 1/sqrt(in)) for both
 * W and b, drawn in that order. */
dy_layer *dy_linear_new(int64_t in_features, int64_t out_features);
/* Sequential: calls its children in order. */
dy_layer *dy_sequential_new(void);
dy_layer *dy_sequential_append_at(dy_layer *seq, dy_layer *child, dy_srcloc loc);
#define dy_sequential_append(...) dy_sequential_append_at(__VA_ARGS__, DY_HERE)
/* Multi-head self-attention (layers_attention.c): Paddle's
 * nn.MultiHeadAttention with query = key = value, built from matmul,
 * scale, softmax, reshape and transpose; input [batch, seq, embed_dim]. */
dy_layer *dy_multihead_attention_new(int64_t embed_dim, int64_t num_heads);
/* Flatten(start_axis, stop_axis) as a layer (Paddle's default 1, -1). */
dy_layer *dy_flatten_layer_new(int start_axis, int stop_axis);
/* ReLU, Sigmoid and Tanh as layers, for Sequential. */
dy_layer *dy_relu_layer_new(void);
dy_layer *dy_sigmoid_layer_new(void);
dy_layer *dy_tanh_layer_new(void);

/* ------------------------------------------------------------------ */
/* trace.c: tracer and static mode                                     */
/* ------------------------------------------------------------------ */

/* Paddle's InputSpec: a name, dtype and shape where -1 is the dynamic
 * batch (Paddle's None) and DY_DIM("seq") a named dynamic dim (a size
 * symbol, ir/core/dims.c): every dim naming one symbol takes one run-time value;
 * the Program declares the symbol (dy_program_declare_sym sets its bound). */
#define DY_DIM(name) dy_dim_sym(name)
typedef struct {
  const char *name;
  dy_dtype dtype;
  int rank;
  int64_t shape[DY_MAX_DIMS];
} dy_input_spec;

/* Run layer's forward eagerly on inputs and record every op into a new
 * Program whose feeds have the specs' names and shapes (specs may be NULL:
 * then the feeds are "x0", "x1", ... with the inputs' static shapes).
 * *out gets the eager output (caller frees), *prog the Program (caller
 * frees with dy_program_free). Either may be NULL if unwanted. */
/* (dy_trace, dy_program_from_layer, dy_jit_save and dy_jit_save_ex are
 * variadic macros over their _at functions, so that compound-literal
 * arguments pass through whole.) */
dy_status dy_trace_at(dy_layer *layer, const dy_input_spec *specs,
                      dy_tensor *const *inputs, int n_inputs, dy_tensor **out,
                      dy_program **prog, dy_error *err, dy_srcloc loc);
#define dy_trace(...) dy_trace_at(__VA_ARGS__, DY_HERE)

/* Static mode: call layer's forward with symbolic tensors built from specs
 * and record its ops without computing. *prog is new (caller frees). */
dy_status dy_program_from_layer_at(dy_layer *layer, const dy_input_spec *specs,
                                   int n_specs, dy_program **prog, dy_error *err,
                                   dy_srcloc loc);
#define dy_program_from_layer(...) dy_program_from_layer_at(__VA_ARGS__, DY_HERE)

/* ------------------------------------------------------------------ */
/* jit.c: to_static, jit_save, jit_load                                */
/* ------------------------------------------------------------------ */

/* dy_to_static: wraps layer (borrowed; must outlive the wrapper) in a new
 * layer whose calls build a Program once per input signature (dtype and
 * shape of every input), cache it, and run it on the static executor.
 * Free the wrapper with dy_layer_free. */
dy_layer *dy_to_static(dy_layer *layer);
/* Number of Programs the wrapper has built so far (its cache size). */
int dy_to_static_cache_size(const dy_layer *wrapper);

/* Paddle's jit.save: build the Program from specs (static mode) and write
 * path.dymodel + path.dyparams. The Program has the semantics of the mode
 * the layers are in: a layer whose train and eval behaviour differ
 * (dropout, batch_norm) that is still in train mode is saved as such, with
 * a warning naming it (the seed's advice: call eval() before export). */
dy_status dy_jit_save_at(dy_layer *layer, const dy_input_spec *specs,
                         int n_specs, const char *path, dy_error *err,
                         dy_srcloc loc);
#define dy_jit_save(...) dy_jit_save_at(__VA_ARGS__, DY_HERE)

typedef enum {
  DY_SAVE_AS_IS = 0,   /* each layer's current mode (warns on train mode) */
  DY_SAVE_EVAL = 1,    /* eval semantics; the layers' modes are restored */
} dy_save_mode;

dy_status dy_jit_save_ex_at(dy_layer *layer, const dy_input_spec *specs,
                            int n_specs, const char *path, dy_save_mode mode,
                            dy_error *err, dy_srcloc loc);
#define dy_jit_save_ex(...) dy_jit_save_ex_at(__VA_ARGS__, DY_HERE)
/* Paddle's jit.load: read path.dymodel + path.dyparams and verify. */
dy_status dy_jit_load(const char *path, dy_program **prog, dy_error *err);

/* ------------------------------------------------------------------ */
/* executor.c: the static executor                                     */
/* ------------------------------------------------------------------ */

/* Interpret p on inputs (one per feed, in order; checked against the feed
 * types, every -1 dim taking one common batch size). outputs[i] receives a
 * new tensor per fetch (caller frees each). On a training Program (one
 * with DY_OPF_INPLACE ops: optimizer updates, running statistics) a run
 * UPDATES p's persistable vars in place (their data), though p is const:
 * each run is one step. */
dy_status dy_executor_run(const dy_program *p, dy_tensor *const *inputs,
                          int n_inputs, dy_tensor **outputs, int n_outputs,
                          dy_error *err);
/* The symbols' values implied by the inputs' types (sym: DY_MAX_SYMS
 * entries, -1 for a symbol no input gives): each dim that is one symbol
 * binds it; every dtype and rank must be the feed's, every dim then equal
 * its expression's value, every symbol be >= 1 and within its declared
 * bound; else an error naming the input, the dim and the symbol. The
 * executor's own check of its inputs, also for callers of compiled code
 * (the Python package) that must refuse what the executor refuses. */
dy_status dy_exec_bind_syms(const dy_program *p, const dy_type *const *inputs,
                            int64_t *sym, dy_error *err);
/* dy_executor_run, calling observe(ctx, var, value, err) on every value an
 * op computes (var: its id in p; value borrowed, valid during the call),
 * in execution order; a non-OK return stops the run with that status.
 * Post-training quantization's calibration (compiler/quantize/) watches
 * every activation this way. */
typedef dy_status (*dy_exec_observer)(void *ctx, int var, const dy_tensor *value,
                                      dy_error *err);
dy_status dy_executor_run_observed(const dy_program *p, dy_tensor *const *inputs,
                                   int n_inputs, dy_tensor **outputs, int n_outputs,
                                   dy_exec_observer observe, void *ctx, dy_error *err);

/* ------------------------------------------------------------------ */
/* npy.c: .npy files (float32/int64/bool, C order)                     */
/* ------------------------------------------------------------------ */

/* *out is a new tensor, owned like any op result (the innermost open
 * scope, else the caller); NULL on error. f8 reads as f32, i4 as i64. */
dy_status dy_npy_read(const char *path, dy_tensor **out, dy_error *err);
/* The same, and the file's own descr ("<f8" for a file read as f32): a
 * model input's reader refuses a file whose dtype is not the input's. */
#define DY_NPY_DESCR_MAX 32
dy_status dy_npy_read_descr(const char *path, dy_tensor **out, char descr[DY_NPY_DESCR_MAX],
                            dy_error *err);
/* An integer of a narrower width converts exactly: i8, u8, i32 -> i64;
 * i8, u8 -> i32. *t widened to want when it is such a narrower integer
 * (a new tensor, the old one freed), else left alone. Every input reader
 * takes a model input's integers this way: run, check, train, the Python
 * API (compiler/capi) and the compiled executable (codegen/rt/dy_main.c,
 * its own copy of the rule). */
bool dy_dtype_widens_to(dy_dtype from, dy_dtype to);
dy_status dy_tensor_widen_to(dy_tensor **t, dy_dtype want, dy_error *err);
/* A model input's file (what names it: "input 'x'"): its dtype must be
 * want's or widen to it (dy_dtype_widens_to), else "input 'x': PATH:
 * dtype '<f8', expected '<f4' (f32)", the compiled executable's words.
 * run, check, train and the Python API read inputs through this. */
dy_status dy_npy_read_as(const char *path, const char *what, dy_dtype want, dy_tensor **out,
                         dy_error *err);
/* Writes whole or not at all. */
dy_status dy_npy_write(const char *path, const dy_tensor *t, dy_error *err);

/* The op families' entry points and layers; the eager optimizers. */
#include "dy_nn.h"
#include "dy_math.h"
#include "dy_extra.h"
#include "dy_optim.h"
#include "dy_shape.h"
#include "dy_control.h"  /* dy_cond, dy_while */
/* to_static training, a training Program's step, the data order. */
#include "dy_train_api.h"

/* DY_MODEL / DY_TO_STATIC, the markers of `dy2stc compile net.c`. */
#include "dy_static.h"

/* Eager autograd and the losses. */
#include "dy_autograd.h"

#endif /* DY_RUNTIME_H */
