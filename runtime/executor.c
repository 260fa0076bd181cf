/* executor.c - the static executor: an interpreter over a Program.
 *
 * Paddle Inference's role: run a saved Program without the model's source.
 * It binds the feeds, wraps each parameter's data in a borrowed tensor (no
 * copy), then runs the ops of block 0 in order with the same inference and
 * kernels as eager calls. A var's tensor is released after its last use, so
 * peak memory follows liveness. Every -1 dim of the feeds must take one
 * common batch size; each op's concrete output type is checked against its
 * var's type with that batch filled in.
 *
 * A training Program (dy_program_is_training: it has in-place ops, the
 * optimizer's updates and batch norm's running statistics) changes its
 * own state: an in-place op's kernel writes straight into the Program's
 * persistable data (parameters, optimizer state), so each run is one
 * training step and the next run sees the updated values.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

static bool type_matches(const dy_type *var, const dy_type *t, int64_t batch) {
  if (var->dtype != t->dtype || var->rank != t->rank)
    return false;
  for (int i = 0; i < t->rank; i++)
    if ((var->shape[i] < 0 ? batch : var->shape[i]) != t->shape[i])
      return false;
  return true;
}

/* The batch size implied by the inputs, or an error. */
static dy_status bind_batch(const dy_program *p, dy_tensor *const *inputs,
                            int64_t *batch, dy_error *err) {
  *batch = -1;
  char a[128], b[128];
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    const dy_tensor *t = inputs[i];
    if (!t || !t->data)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is missing or has no data", v->name);
    bool ok = t->type.dtype == v->type.dtype && t->type.rank == v->type.rank;
    for (int d = 0; ok && d < v->type.rank; d++) {
      if (v->type.shape[d] >= 0) {
        ok = v->type.shape[d] == t->type.shape[d];
      } else if (*batch < 0) {
        *batch = t->type.shape[d];
      } else if (*batch != t->type.shape[d]) {
        return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                            "input '%s': batch %lld differs from %lld set by "
                            "an earlier dynamic dim", v->name,
                            (long long)t->type.shape[d], (long long)*batch);
      }
    }
    if (!ok)
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                          "input '%s' is %s, the Program expects %s", v->name,
                          dy_type_str(&t->type, a, sizeof a),
                          dy_type_str(&v->type, b, sizeof b));
  }
  if (*batch == 0)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH, "batch size 0");
  return DY_OK;
}

dy_status dy_executor_run(const dy_program *p, dy_tensor *const *inputs,
                          int n_inputs, dy_tensor **outputs, int n_outputs,
                          dy_error *err) {
  if (n_inputs != p->n_feeds || n_outputs != p->n_fetches)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "the Program takes %d inputs and gives %d outputs, "
                        "called with %d and %d", p->n_feeds, p->n_fetches,
                        n_inputs, n_outputs);
  int64_t batch;
  dy_status s = bind_batch(p, inputs, &batch, err);
  if (s)
    return s;

  const dy_block *blk = p->blocks[0];
  dy_tensor **val = calloc((size_t)p->n_vars + 1, sizeof *val);
  int *last_use = malloc(sizeof(int) * ((size_t)p->n_vars + 1));
  if (!val || !last_use) {
    free(val);
    free(last_use);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "executor: out of memory");
  }
  /* liveness: the index of the last op reading each var; fetches live on */
  for (int i = 0; i < p->n_vars; i++)
    last_use[i] = p->vars[i]->fetch_index >= 0 ? blk->n_ops : -1;
  for (int k = 0; k < blk->n_ops; k++)
    for (int i = 0; i < blk->ops[k]->n_inputs; i++)
      if (last_use[blk->ops[k]->inputs[i]] < k)
        last_use[blk->ops[k]->inputs[i]] = k;

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

  for (int k = 0; k < blk->n_ops && !s; k++) {
    const dy_op *op = blk->ops[k];
    dy_tensor *in[16], *out[8] = {0};
    dy_type in_t[16], out_t[8];
    if (op->n_inputs > 16 || op->n_outputs > 8) {
      s = dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "too many operands");
      break;
    }
    for (int i = 0; i < op->n_inputs; i++) {
      in[i] = val[op->inputs[i]];
      if (!in[i]) {
        s = dy_error_at(err, op, DY_STATUS_INVALID_IR, "%s: input '%s' has no value",
                        dy_op_name(op->kind), p->vars[op->inputs[i]]->name);
        break;
      }
      in_t[i] = in[i]->type;
    }
    if (s || (s = dy_infer(op, in_t, op->n_inputs, out_t, err)))
      break;
    if (dy_op_has(op, DY_OPF_INPLACE)) {
      /* the update writes the state tensors themselves: the borrowed
       * views of the Program's persistable data (the verifier has checked
       * outputs[i] == inputs[i], persistable) */
      s = dy_kernel_table[op->kind](op, in, op->n_inputs, in, err);
      continue;
    }
    for (int i = 0; i < op->n_outputs && !s; i++) {
      const dy_var *v = p->vars[op->outputs[i]];
      if (!type_matches(&v->type, &out_t[i], batch)) {
        char a[128], b[128];
        s = dy_error_at(err, op, DY_STATUS_INVALID_IR,
                        "%s: computes %s for '%s' declared %s at batch %lld",
                        dy_op_name(op->kind), dy_type_str(&out_t[i], a, sizeof a),
                        v->name, dy_type_str(&v->type, b, sizeof b), (long long)batch);
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
    /* release what is dead after this op */
    for (int i = 0; i < op->n_inputs && !s; i++) {
      int v = op->inputs[i];
      if (last_use[v] == k && !p->vars[v]->persistable && val[v]) {
        dy_tensor_free(val[v]);
        val[v] = NULL;
      }
    }
  }

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
  free(last_use);
  return s;
}
