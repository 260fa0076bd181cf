/* executor.c - the static executor: an interpreter over a Program.
 *
 * Paddle Inference's role: run a saved Program without the model's source.
 * dy_executor_run binds the feeds, wraps each parameter's data in a
 * borrowed tensor (no copy), runs block 0 (executor_block.c) and hands back
 * the fetches, with the same inference and kernels as eager calls. The
 * feeds' shapes give each size symbol's value (every -1 dim one common
 * batch size, every dim naming "seq" one seq, a dim batch+1 (a LoD
 * input's offsets) the batch too; dy_exec_bind_syms); each
 * op's concrete output type is checked against its var's type with the
 * symbols' values filled in.
 *
 * A training Program (dy_program_is_training: it has in-place ops, the
 * optimizer's updates and batch norm's running statistics) changes its
 * own state: an in-place op's kernel writes straight into the Program's
 * persistable data (parameters, optimizer state), so each run is one
 * training step and the next run sees the updated values.
 *
 * The executor is three files, each calling only the ones below it:
 *
 *   executor.c        this entry point: feeds, symbols, parameters, fetches
 *   executor_block.c  the interpreter of a block, recursive over the
 *                     sub-blocks of cond and while
 *   executor_op.c     the environment (dy_exec) and one plain op: infer,
 *                     allocate, check, run its kernel
 */
#include <stdlib.h>
#include <string.h>

#include "dy_lod.h"
#include "dy_runtime_internal.h"

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
      int s;
      int64_t c; /* the dim is s + c: a LoD input's offsets are batch+1 */
      if (!dy_dim_sym_plus(v->type.shape[d], &s, &c) || t->shape[d] < c)
        continue;
      if (sym[s] < 0) {
        sym[s] = t->shape[d] - c;
        set_by[s] = v->name;
      } else if (sym[s] != t->shape[d] - c) {
        if (c)
          continue; /* the check below names the input */
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
