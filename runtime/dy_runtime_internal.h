/* dy_runtime_internal.h - runtime's private header: helpers shared by the
 * runtime's own files, not part of the public API. */
#ifndef DY_RUNTIME_INTERNAL_H
#define DY_RUNTIME_INTERNAL_H

#include "dy_runtime.h"

/* The location a library-internal call passes: none, so the user's
 * location in effect is inherited (see "Source locations" in dy_runtime.h).
 * Library code never uses the DY_HERE macros of the public API. */
#define DY_INHERIT ((dy_srcloc){NULL, 0})

/* tensor.c */
dy_tensor *dy_tensor_view(dy_tensor *base, const dy_type *type);
dy_tensor *dy_fail_with(const dy_error *err);
/* A new tensor owned by the caller whatever scope is open (data zeroed, or
 * none when with_data is false). NULL on OOM. */
dy_tensor *dy_tensor_alloc(const dy_type *type, bool with_data);
/* Hand a caller-owned tensor to the innermost scope (if any); returns it. */
dy_tensor *dy_tensor_adopt(dy_tensor *t);

/* layers.c: layer-owned f32 parameters (not held by any open scope),
 * zero-filled or drawn from U(-bound, bound) by the seeded generator.
 * NULL (error recorded) on OOM. */
dy_tensor *dy_param_new(int rank, const int64_t *shape);
dy_tensor *dy_param_uniform(int rank, const int64_t *shape, float bound);

/* trace.c: the active trace, if any (NULL when eager only). */
typedef struct dy_trace_state dy_trace_state;
dy_trace_state *dy_trace_active(void);
/* Record op kind with inputs in and single output t (already computed or
 * symbolic); an in-place op (DY_OPF_INPLACE) is recorded writing the vars
 * of its first n_out inputs (t is ignored). Returns false (error
 * recorded) on failure. */
bool dy_trace_record(dy_trace_state *ts, dy_op_kind kind, dy_tensor *const *in,
                     int n_in, const dy_attr *attrs, int n_attrs, dy_srcloc loc,
                     dy_tensor *out);
/* True if t is bound to a non-persistable var of the active trace. */
bool dy_trace_depends_on_input(dy_trace_state *ts, const dy_tensor *t);
/* Hooks for dy_cond / dy_while (control.c). Where ops are recorded: the
 * block, and whether every op is forced symbolic there (a branch or loop
 * traced for the Program only). */
typedef struct {
  int block;
  bool symbolic;
} dy_trace_pos;
dy_program *dy_trace_program(dy_trace_state *ts);
/* t's var (a persistable one for unseen data); -1 (error recorded) when t
 * belongs to a block not visible from the current one. */
int dy_trace_var(dy_trace_state *ts, dy_tensor *t, dy_srcloc loc);
void dy_trace_bind(dy_trace_state *ts, dy_tensor *t, int var);
/* Move recording to `to`; returns where it was. */
dy_trace_pos dy_trace_move(dy_trace_state *ts, dy_trace_pos to);
dy_trace_pos dy_trace_where(const dy_trace_state *ts);
/* Stop recording on this thread (to compute eagerly) and start again. */
dy_trace_state *dy_trace_suspend(void);
void dy_trace_resume(dy_trace_state *ts);
/* In a forced-symbolic block, a traced tensor's var type (-1 dims: the
 * batch) into *out; false otherwise. dy_apply infers from it there. */
bool dy_trace_var_type(const dy_trace_state *ts, const dy_tensor *t, dy_type *out);

/* The static executor: executor.c (the entry point) on executor_block.c
 * (the interpreter of a block) on executor_op.c (the environment and one
 * op). dy_exec is the state of one run. */
typedef struct {
  const dy_program *p;
  dy_tensor **val;       /* the value of each var, or NULL */
  int64_t batch;          /* sym[0], for messages */
  int64_t sym[DY_MAX_SYMS]; /* each size symbol's value (-1: unused) */
  int *home;             /* the block declaring each var (0: feeds, params) */
  int **last_use;        /* per block, computed on first run (executor_block.c) */
  dy_exec_observer observe; /* called on each op output, or NULL */
  void *observe_ctx;
} dy_exec;
/* executor.c: dy_exec_bind_syms is public (dy_runtime.h) */
/* executor_block.c: run block b; for a sub-block, results[i] receives a
 * reference to each value it yields (caller frees) and the block's own
 * values are released. A cond or while op runs its sub-blocks through
 * dy_exec_block again. */
dy_status dy_exec_block(dy_exec *ex, int b, dy_tensor **results, dy_error *err);
/* executor_op.c: allocate / release home and last_use (dy_exec_init: false
 * on OOM). */
bool dy_exec_init(dy_exec *ex);
void dy_exec_fini(dy_exec *ex);
/* executor_op.c: var's declared type (its symbolic dims evaluated at the
 * symbols' values sym[]) matches the concrete t. */
bool dy_exec_type_matches(const dy_type *var, const dy_type *t, const int64_t *sym);
/* executor_op.c: run one op that is not a control op (infer, allocate,
 * check against its vars, run the kernel; an in-place op's kernel writes
 * into its inputs), its outputs' values into ex->val. */
dy_status dy_exec_op(dy_exec *ex, const dy_op *op, dy_error *err);

/* gb_eager.c: the eager builder of dy_grad.h. Emitting runs the op at
 * once through dy_apply (so an active trace records it); values are
 * tensors the builder holds one reference to. dy_gb_eager opens a scope
 * that dy_gb_eager_free closes (then drops the builder's references):
 * keep a result with dy_keep(dy_gb_eager_tensor(b, v)) before freeing.
 * loc is the location emitted ops record when b->fwd is NULL. */
typedef struct {
  dy_tensor **vals;
  int n, cap;
  dy_srcloc loc;
} dy_gb_eager_state;
void dy_gb_eager(dy_gb *b, dy_gb_eager_state *st, dy_srcloc loc, dy_error *err);
/* Add an existing tensor as a value (one more reference). */
int dy_gb_eager_value(dy_gb *b, dy_tensor *t);
/* The tensor of value v (borrowed), NULL if none. */
dy_tensor *dy_gb_eager_tensor(dy_gb *b, int v);
void dy_gb_eager_free(dy_gb *b);

/* tape.c: the tape of eager autograd. dy_apply records an op whose result
 * t it wants (grad mode on, a concrete f32 result, an input requiring grad
 * or made by a recorded op, no input written in place); false (error
 * recorded) on failure. */
bool dy_tape_wants(dy_tensor *const *in, int n_in, const dy_tensor *out);
bool dy_tape_record(dy_op_kind kind, dy_tensor *const *in, int n_in,
                    const dy_attr *attrs, int n_attrs, dy_srcloc loc, dy_tensor *out);
/* One record: the op as it ran and its tensors (dy_tensor.grad_fn of its
 * output points at it). */
typedef struct dy_tape_node {
  dy_op op;                 /* kind, attributes (copied), loc; id -1   */
  dy_tensor *in[DY_MAX_OP_INPUTS]; /* referenced                       */
  dy_tensor *out;           /* referenced; out->grad_fn is this record */
  int pos;                  /* index in the tape                        */
  bool visit;               /* scratch of one backward / pruning pass   */
} dy_tape_node;
/* What backward (backward.c) reads: the records in the order they ran
 * (dy_tape_size of them; borrowed, valid until the next record or
 * release), a new pass number for dy_tensor.ag_pass (shared with pruning,
 * so the two never mix their scratch), and the release of every record
 * whose visit flag is set (the graph a backward walked). */
dy_tape_node *const *dy_tape_nodes(void);
unsigned dy_tape_new_pass(void);
void dy_tape_release_visited(void);

#endif
