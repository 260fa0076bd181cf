/* executor_op.c - the floor of the static executor: its environment and
 * one plain op.
 *
 * dy_exec_init / dy_exec_fini allocate and release what a run keeps
 * beside the values (the block declaring each var, each block's last uses).
 * dy_exec_op runs one op that is not a control op: its inputs' values,
 * inference on their types (a reshape_dims to several symbolic sizes takes
 * its var's type at the symbols' values instead), an output tensor per
 * output, checked against its var's type (dy_exec_type_matches), then the
 * kernel; an in-place op's kernel writes into its inputs, the Program's
 * persistable data. Called by the block interpreter (executor_block.c).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

bool dy_exec_init(dy_exec *ex) {
  const dy_program *p = ex->p;
  ex->home = calloc((size_t)p->n_vars + 1, sizeof *ex->home);
  ex->last_use = calloc((size_t)p->n_blocks, sizeof *ex->last_use);
  if (!ex->home || !ex->last_use) {
    dy_exec_fini(ex);
    return false;
  }
  dy_program_declaring_blocks(p, ex->home, 0);
  return true;
}

void dy_exec_fini(dy_exec *ex) {
  if (ex->last_use)
    for (int b = 0; b < ex->p->n_blocks; b++)
      free(ex->last_use[b]);
  free(ex->last_use);
  free(ex->home);
  ex->last_use = NULL;
  ex->home = NULL;
}

bool dy_exec_type_matches(const dy_type *var, const dy_type *t, const int64_t *sym) {
  if (var->dtype != t->dtype || var->rank != t->rank)
    return false;
  for (int i = 0; i < t->rank; i++) {
    int64_t d = var->shape[i];
    if (d < 0 && !dy_dim_eval(d, sym, &d))
      return false;
    if (d != t->shape[i])
      return false;
  }
  return true;
}

/* The size symbol sym that op's kernel has just set (its output t's dim):
 * its value from now on in this run, checked against the Program's bound
 * (the one the memory plan and the compiled code size for) and the var's
 * type at that value. */
static dy_status bind_run_time_size(dy_exec *ex, const dy_op *op, int sym, const dy_tensor *t,
                                    int dim, dy_error *err) {
  int64_t n = t->type.shape[dim], bound = dy_program_sym_bound(ex->p, sym);
  if (n > bound)
    return dy_error_at(err, op, DY_STATUS_LIMIT,
                       "%s: the size symbol '%s' is %lld at run time, above its bound %lld "
                       "(--max-dim %s=N raises it)", dy_op_name(op->kind), dy_sym_name(sym),
                       (long long)n, (long long)bound, dy_sym_name(sym));
  ex->sym[sym] = n;
  const dy_var *v = ex->p->vars[op->outputs[0]];
  if (!dy_exec_type_matches(&v->type, &t->type, ex->sym)) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_INVALID_IR, "%s: computes %s for '%s' declared %s",
                       dy_op_name(op->kind), dy_type_str(&t->type, a, sizeof a), v->name,
                       dy_type_str(&v->type, b, sizeof b));
  }
  return DY_OK;
}

/* One op that is not a control op: infer, allocate, run the kernel; the
 * outputs' values go into ex->val, and to the observer if there is one. */
dy_status dy_exec_op(dy_exec *ex, const dy_op *op, dy_error *err) {
  const dy_program *p = ex->p;
  dy_tensor **val = ex->val;
  dy_status s = DY_OK;
  dy_tensor *in[DY_MAX_OP_INPUTS], *out[8] = {0};
  dy_type in_t[DY_MAX_OP_INPUTS], out_t[8];
  if (op->n_inputs > DY_MAX_OP_INPUTS || op->n_outputs > 8)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "too many operands");
  for (int i = 0; i < op->n_inputs; i++) {
    in[i] = val[op->inputs[i]];
    if (!in[i])
      return dy_error_at(err, op, DY_STATUS_INVALID_IR, "%s: input '%s' has no value",
                         dy_op_name(op->kind), p->vars[op->inputs[i]]->name);
    in_t[i] = in[i]->type;
  }
  if (op->kind == DY_OP_RESHAPE_DIMS && op->n_outputs == 1) {
    /* a reshape to several symbolic sizes: its var's type at the
     * symbols' values (inference alone cannot split the count) */
    const dy_type *vt = &p->vars[op->outputs[0]]->type;
    out_t[0] = *vt;
    for (int d = 0; d < vt->rank; d++)
      if (vt->shape[d] < 0 && !dy_dim_eval(vt->shape[d], ex->sym, &out_t[0].shape[d]))
        return dy_error_at(err, op, DY_STATUS_INVALID_IR,
                           "reshape_dims: '%s' has a size no input gives",
                           p->vars[op->outputs[0]]->name);
    if (dy_type_numel(&out_t[0]) != dy_type_numel(&in_t[0]))
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "reshape_dims: %lld elements for '%s' of %lld",
                         (long long)dy_type_numel(&in_t[0]), p->vars[op->outputs[0]]->name,
                         (long long)dy_type_numel(&out_t[0]));
  } else if ((s = dy_infer(op, in_t, op->n_inputs, out_t, err))) {
    return s;
  }
  if (dy_op_has(op, DY_OPF_INPLACE))
    /* the update writes the state tensors themselves: the borrowed views
     * of the Program's persistable data (the verifier has checked
     * outputs[i] == inputs[i], persistable) */
    return dy_kernel_table[op->kind](op, in, op->n_inputs, in, err);
  int size_dim, size_sym = dy_op_size_sym(op, &size_dim);
  bool sized[8] = {size_sym >= 0}; /* allocated at the count's capacity */
  if (size_sym >= 0) {
    int64_t d = out_t[0].shape[size_dim], cap;
    if ((s = dy_op_size_bound(op, in_t, op->n_inputs, NULL, &cap, err)))
      return s; /* allocated at its capacity; the kernel sets the size */
    for (int i = 0; i < op->n_outputs; i++) /* every output the count sizes */
      for (int k = 0; k < out_t[i].rank; k++)
        if (out_t[i].shape[k] == d)
          out_t[i].shape[k] = cap, sized[i] = true;
  }
  for (int i = 0; i < op->n_outputs && !s; i++) {
    const dy_var *v = p->vars[op->outputs[i]];
    if (sized[i]) {
      if (!(out[i] = dy_tensor_alloc(&out_t[i], true)))
        s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
    } else if (!dy_exec_type_matches(&v->type, &out_t[i], ex->sym)) {
      char a[128], b[128];
      s = dy_error_at(err, op, DY_STATUS_INVALID_IR,
                      "%s: computes %s for '%s' declared %s at batch %lld",
                      dy_op_name(op->kind), dy_type_str(&out_t[i], a, sizeof a),
                      v->name, dy_type_str(&v->type, b, sizeof b), (long long)ex->batch);
    } else if (!(out[i] = dy_tensor_alloc(&out_t[i], true))) {
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
    }
  }
  if (!s)
    s = dy_kernel_table[op->kind](op, in, op->n_inputs, out, err);
  if (!s && size_sym >= 0)
    s = bind_run_time_size(ex, op, size_sym, out[0], size_dim, err);
  for (int i = 1; i < op->n_outputs && !s; i++) /* the kernel set their count too */
    if (sized[i] && !dy_exec_type_matches(&p->vars[op->outputs[i]]->type, &out[i]->type, ex->sym))
      s = dy_error_at(err, op, DY_STATUS_INVALID_IR, "%s: output %d does not have the count "
                      "the kernel set", dy_op_name(op->kind), i);
  for (int i = 0; i < op->n_outputs; i++) {
    if (s)
      dy_tensor_free(out[i]);
    else
      val[op->outputs[i]] = out[i];
  }
  for (int i = 0; i < op->n_outputs && !s && ex->observe; i++)
    s = ex->observe(ex->observe_ctx, op->outputs[i], out[i], err);
  return s;
}
