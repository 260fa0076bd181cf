/* executor.c - the static executor: an interpreter over a Program.
 *
 * Paddle Inference's role: run a saved Program without the model's source.
 * It binds the feeds, wraps each parameter's data in a borrowed tensor (no
 * copy), then runs the ops of block 0 in order with the same inference and
 * kernels as eager calls. A var's tensor is released after its last use, so
 * peak memory follows liveness. The feeds' shapes give each size symbol's
 * value (every -1 dim one common batch size, every dim naming "seq" one
 * seq; dy_exec_bind_syms); each op's concrete output type is checked
 * against its var's type with the symbols' values filled in.
 *
 * A training Program (dy_program_is_training: it has in-place ops, the
 * optimizer's updates and batch norm's running statistics) changes its
 * own state: an in-place op's kernel writes straight into the Program's
 * persistable data (parameters, optimizer state), so each run is one
 * training step and the next run sees the updated values.
 *
 * Blocks: dy_exec_block runs the ops of one block; a cond or while op is
 * handed to runtime/executor_block.c, which runs its sub-blocks through
 * dy_exec_block again. A var is released by the block that declares it (at
 * its last use there, or when the block ends), never by a sub-block that
 * only captures it.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

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

dy_status dy_exec_bind_syms(const dy_program *p, const dy_type *const *inputs,
                            int64_t *sym, dy_error *err) {
  char a[160], b[160], e[96];
  const char *set_by[DY_MAX_SYMS] = {0};
  for (int s = 0; s < DY_MAX_SYMS; s++)
    sym[s] = -1;
  /* a dim that is one symbol binds it */
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    const dy_type *t = inputs[i];
    if (!t)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is missing or has no data", v->name);
    if (t->dtype != v->type.dtype || t->rank != v->type.rank)
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                          "input '%s' is %s, the Program expects %s", v->name,
                          dy_type_str(t, a, sizeof a), dy_type_str(&v->type, b, sizeof b));
    for (int d = 0; d < v->type.rank; d++) {
      int s = dy_dim_single_sym(v->type.shape[d]);
      if (s < 0)
        continue;
      if (sym[s] < 0) {
        sym[s] = t->shape[d];
        set_by[s] = v->name;
      } else if (sym[s] != t->shape[d]) {
        if (s == 0)
          return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                              "input '%s': batch %lld differs from %lld set by "
                              "an earlier dynamic dim", v->name,
                              (long long)t->shape[d], (long long)sym[s]);
        return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                            "input '%s' dim %d: %s = %lld disagrees with %s = %lld set "
                            "by input '%s'", v->name, d, dy_sym_name(s),
                            (long long)t->shape[d], dy_sym_name(s), (long long)sym[s],
                            set_by[s]);
      }
    }
  }
  for (int s = 0; s < DY_MAX_SYMS; s++) {
    if (sym[s] < 0)
      continue;
    if (sym[s] == 0)
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH, s == 0 ? "batch size 0" : "%s = 0 (set by input '%s')",
                          dy_sym_name(s), set_by[s]);
    const dy_sym_decl *dc = dy_program_sym(p, s);
    if (dc && dc->max > 0 && sym[s] > dc->max)
      return dy_error_set(err, DY_STATUS_LIMIT,
                          "input '%s': %s = %lld is above its bound %lld", set_by[s],
                          dy_sym_name(s), (long long)sym[s], (long long)dc->max);
  }
  /* every dim equals its value */
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    for (int d = 0; d < v->type.rank; d++) {
      int64_t want = v->type.shape[d];
      if (want < 0 && !dy_dim_eval(want, sym, &want))
        return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                            "input '%s' dim %d is %s, which names a symbol no input "
                            "dim gives alone", v->name, d,
                            dy_dim_name(v->type.shape[d], e, sizeof e));
      if (want != inputs[i]->shape[d])
        return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                            "input '%s' is %s, the Program expects %s", v->name,
                            dy_type_str(inputs[i], a, sizeof a),
                            dy_type_str(&v->type, b, sizeof b));
    }
  }
  return DY_OK;
}

/* The symbols' values implied by the inputs, or an error. */
static dy_status bind_inputs(const dy_program *p, dy_tensor *const *inputs,
                             int64_t *sym, dy_error *err) {
  const dy_type *types[DY_MAX_FEEDS];
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_tensor *t = inputs[i];
    if (!t || !t->data)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is missing or has no data", p->vars[p->feeds[i]]->name);
    types[i] = &t->type;
  }
  return dy_exec_bind_syms(p, types, sym, err);
}

/* The index of the last op of block b reading each var (results and, in
 * block 0, fetches: n_ops, they live on); -1 where b does not read it. */
static const int *last_uses(dy_exec *ex, int b) {
  if (ex->last_use[b])
    return ex->last_use[b];
  const dy_program *p = ex->p;
  const dy_block *blk = p->blocks[b];
  int *lu = malloc(sizeof(int) * ((size_t)p->n_vars + 1));
  if (!lu)
    return NULL;
  for (int i = 0; i < p->n_vars; i++)
    lu[i] = b == 0 && p->vars[i]->fetch_index >= 0 ? blk->n_ops : -1;
  for (int k = 0; k < blk->n_ops; k++)
    for (int i = 0; i < blk->ops[k]->n_inputs; i++)
      if (lu[blk->ops[k]->inputs[i]] < k)
        lu[blk->ops[k]->inputs[i]] = k;
  for (int i = 0; i < blk->n_results; i++)
    lu[blk->results[i]] = blk->n_ops;
  return ex->last_use[b] = lu;
}

/* One op that is not a control op: infer, allocate, run the kernel. */
static dy_status run_op(dy_exec *ex, const dy_op *op, dy_error *err) {
  const dy_program *p = ex->p;
  dy_tensor **val = ex->val;
  dy_status s = DY_OK;
  dy_tensor *in[16], *out[8] = {0};
  dy_type in_t[16], out_t[8];
  if (op->n_inputs > 16 || op->n_outputs > 8)
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
  for (int i = 0; i < op->n_outputs && !s; i++) {
    const dy_var *v = p->vars[op->outputs[i]];
    if (!dy_exec_type_matches(&v->type, &out_t[i], ex->sym)) {
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

dy_status dy_exec_block(dy_exec *ex, int b, dy_tensor **results, dy_error *err) {
  const dy_program *p = ex->p;
  const dy_block *blk = p->blocks[b];
  dy_tensor **val = ex->val;
  const int *last_use = last_uses(ex, b);
  if (!last_use)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
  dy_status s = DY_OK;
  for (int k = 0; k < blk->n_ops && !s; k++) {
    const dy_op *op = blk->ops[k];
    s = dy_op_sub_blocks(op, (int[2]){0}) ? dy_exec_control(ex, op, err)
                                          : run_op(ex, op, err);
    /* release what is dead after this op (and declared in this block) */
    for (int i = 0; i < op->n_inputs && !s; i++) {
      int v = op->inputs[i];
      if (last_use[v] == k && !p->vars[v]->persistable && val[v] &&
          (b == 0 || ex->home[v] == b)) {
        dy_tensor_free(val[v]);
        val[v] = NULL;
      }
    }
  }
  if (b == 0)
    return s;
  for (int i = 0; i < blk->n_results && !s; i++) {
    results[i] = dy_keep(val[blk->results[i]]);
    if (!results[i])
      s = dy_error_set(err, DY_STATUS_INVALID_IR, "block %d: result '%s' has no value",
                       b, p->vars[blk->results[i]]->name);
  }
  /* the block's own vars end with it */
  for (int i = 0; i < p->n_vars; i++)
    if (ex->home[i] == b && val[i]) {
      dy_tensor_free(val[i]);
      val[i] = NULL;
    }
  return s;
}

dy_status dy_executor_run(const dy_program *p, dy_tensor *const *inputs,
                          int n_inputs, dy_tensor **outputs, int n_outputs,
                          dy_error *err) {
  return dy_executor_run_observed(p, inputs, n_inputs, outputs, n_outputs, NULL, NULL, err);
}

dy_status dy_executor_run_observed(const dy_program *p, dy_tensor *const *inputs,
                                   int n_inputs, dy_tensor **outputs, int n_outputs,
                                   dy_exec_observer observe, void *ctx, dy_error *err) {
  if (n_inputs != p->n_feeds || n_outputs != p->n_fetches)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "the Program takes %d inputs and gives %d outputs, "
                        "called with %d and %d", p->n_feeds, p->n_fetches,
                        n_inputs, n_outputs);
  dy_exec ex = {.p = p};
  dy_status s = bind_inputs(p, inputs, ex.sym, err);
  if (s)
    return s;
  ex.batch = ex.sym[0];
  ex.observe = observe;
  ex.observe_ctx = ctx;
  dy_tensor **val = ex.val = calloc((size_t)p->n_vars + 1, sizeof *val);
  if (!val || !dy_exec_init(&ex)) {
    free(val);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
  }
  for (int i = 0; i < p->n_feeds; i++)
    val[p->feeds[i]] = dy_keep(inputs[i]);
  for (int i = 0; i < p->n_vars && !s; i++) {
    const dy_var *v = p->vars[i];
    if (!v->persistable)
      continue;
    if (!(val[i] = dy_tensor_alloc(&v->type, false)))
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
    else {
      val[i]->data = v->data;
      val[i]->nbytes = (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype);
      val[i]->borrowed = true;
    }
  }
  if (!s)
    s = dy_exec_block(&ex, 0, NULL, err);

  for (int i = 0; i < n_outputs; i++)
    outputs[i] = NULL;
  for (int i = 0; i < p->n_fetches && !s; i++) {
    int v = p->fetches[i];
    if (!val[v]) {
      s = dy_error_set(err, DY_STATUS_INVALID_IR, "fetch '%s' has no value",
                       p->vars[v]->name);
      break;
    }
    /* a fetched parameter is copied: its data belongs to the Program */
    outputs[i] = p->vars[v]->persistable
                     ? dy_tensor_alloc(&val[v]->type, true)
                     : dy_keep(val[v]);
    if (!outputs[i])
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
    else if (p->vars[v]->persistable)
      memcpy(outputs[i]->data, val[v]->data, val[v]->nbytes);
  }
  if (s)
    for (int i = 0; i < n_outputs; i++) {
      dy_tensor_free(outputs[i]);
      outputs[i] = NULL;
    }
  for (int i = 0; i < p->n_vars; i++)
    dy_tensor_free(val[i]);
  free(val);
  dy_exec_fini(&ex);
  return s;
}
