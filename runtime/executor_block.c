/* executor_block.c - the static executor's interpreter of one block,
 * recursive over the sub-blocks of the control ops (ir/ops_control.def).
 *
 * dy_exec_block runs the ops of a block in order: a plain op through
 * dy_exec_op (executor_op.c), a cond or while here, over its sub-blocks,
 * through dy_exec_block again (running a sub-block that holds a control op
 * is mutual recursion, so it stays in this one file). A var's tensor is
 * released after its last use, so peak memory follows liveness; a var is
 * released by the block that declares it (at its last use there, or when
 * the block ends), never by a sub-block that only captures it, so a loop's
 * temporaries do not pile up over iterations.
 *
 * cond reads its predicate (a bool of one element) and runs one branch;
 * its outputs are that branch's results. while binds the carried values
 * to the condition block's params, runs it, and while it yields true binds
 * them to the body's params and takes the body's results as the next
 * carried values; the outputs are the last ones. A loop that would run more
 * than max_iterations trips (the op's attribute, or DY_WHILE_MAX_ITERATIONS
 * when it is 0) is an error naming the op, never a hang.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

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

static void free_all(dy_tensor **t, int n) {
  for (int i = 0; i < n; i++) {
    dy_tensor_free(t[i]);
    t[i] = NULL;
  }
}

/* A bool of one element with data, as C. */
static dy_status truth(const dy_op *op, const dy_tensor *t, const char *what,
                       bool *out, dy_error *err) {
  if (!t || !t->data || t->type.dtype != DY_BOOL || dy_type_numel(&t->type) != 1) {
    char ty[128];
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: %s must be a bool of one element, got %s",
                       dy_op_name(op->kind), what,
                       t ? dy_type_str(&t->type, ty, sizeof ty) : "no value");
  }
  *out = *(const unsigned char *)t->data != 0;
  return DY_OK;
}

/* Give the op's outputs the values in res (taking them over), checking
 * each against its var's type. */
static dy_status set_outputs(dy_exec *ex, const dy_op *op, dy_tensor **res,
                             dy_error *err) {
  for (int i = 0; i < op->n_outputs; i++) {
    const dy_var *v = ex->p->vars[op->outputs[i]];
    if (!dy_exec_type_matches(&v->type, &res[i]->type, ex->sym)) {
      char a[128], b[128];
      dy_status s = dy_error_at(err, op, DY_STATUS_INVALID_IR,
                                "%s: computes %s for '%s' declared %s at batch %lld",
                                dy_op_name(op->kind),
                                dy_type_str(&res[i]->type, a, sizeof a), v->name,
                                dy_type_str(&v->type, b, sizeof b), (long long)ex->batch);
      free_all(res, op->n_outputs);
      return s;
    }
  }
  for (int i = 0; i < op->n_outputs; i++)
    ex->val[op->outputs[i]] = res[i];
  return DY_OK;
}

/* Bind vals (new references) to block b's params and run it. */
static dy_status enter(dy_exec *ex, int b, dy_tensor *const *vals,
                       dy_tensor **results, dy_error *err) {
  const dy_block *blk = ex->p->blocks[b];
  for (int i = 0; i < blk->n_params; i++)
    ex->val[blk->params[i]] = dy_keep(vals[i]);
  return dy_exec_block(ex, b, results, err);
}

static dy_status run_cond(dy_exec *ex, const dy_op *op, dy_tensor **res,
                          dy_error *err) {
  bool taken = false;
  dy_status s = truth(op, ex->val[op->inputs[0]], "the predicate", &taken, err);
  if (s)
    return s;
  dy_cond_attrs a = dy_cond_attrs_get(op);
  s = dy_exec_block(ex, (int)(taken ? a.then_block : a.else_block), res, err);
  return s ? s : set_outputs(ex, op, res, err);
}

static dy_status run_while(dy_exec *ex, const dy_op *op, dy_tensor **carried,
                           dy_tensor **next, dy_error *err) {
  dy_while_attrs a = dy_while_attrs_get(op);
  int n = (int)a.n_carried;
  int64_t limit = a.max_iterations > 0 ? a.max_iterations : DY_WHILE_MAX_ITERATIONS;
  for (int i = 0; i < n; i++)
    if (!(carried[i] = dy_keep(ex->val[op->inputs[i]])))
      return dy_error_at(err, op, DY_STATUS_INVALID_IR, "while: input %d has no value", i);
  dy_status s = DY_OK;
  for (int64_t trips = 0;; trips++) {
    dy_tensor *c = NULL;
    bool go = false;
    s = enter(ex, (int)a.cond_block, carried, &c, err);
    if (!s)
      s = truth(op, c, "the condition block's result", &go, err);
    dy_tensor_free(c);
    if (s || !go)
      break;
    if (trips == limit) {
      s = dy_error_at(err, op, DY_STATUS_LIMIT,
                      "while: the loop did not end after %lld iterations (its "
                      "max_iterations%s)", (long long)limit,
                      a.max_iterations > 0 ? "" : " is 0: the executor's bound "
                      "DY_WHILE_MAX_ITERATIONS applies");
      break;
    }
    if ((s = enter(ex, (int)a.body_block, carried, next, err)))
      break;
    free_all(carried, n);
    memcpy(carried, next, sizeof *next * (size_t)n);
    memset(next, 0, sizeof *next * (size_t)n);
  }
  if (s) {
    free_all(carried, n);
    free_all(next, n);
    return s;
  }
  return set_outputs(ex, op, carried, err);
}

/* Run a cond or while op over its sub-blocks. */
static dy_status run_control(dy_exec *ex, const dy_op *op, dy_error *err) {
  int n = op->n_outputs;
  dy_tensor **res = calloc(2 * (size_t)n, sizeof *res);
  if (!res)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
  dy_status s = op->kind == DY_OP_COND ? run_cond(ex, op, res, err)
                                       : run_while(ex, op, res, res + n, err);
  if (s && op->kind == DY_OP_COND)
    free_all(res, n);
  free(res);
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
    s = dy_op_sub_blocks(op, (int[2]){0}) ? run_control(ex, op, err)
                                          : dy_exec_op(ex, op, err);
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
