/* control.c - dy_cond and dy_while (dy_control.h): data-dependent control
 * flow, eagerly and while tracing.
 *
 * Eagerly (or to compute the values of a concrete dy_trace), the taken
 * branch runs, or the loop runs, with the trace suspended. Recording a
 * trace, each branch (or the loop's condition and body) is called once
 * more with the trace moved into a new sub-block of the current one and
 * every op forced symbolic (runtime/trace.c's hooks): its ops land in the
 * block, a loop's carried values are the block's params (symbolic tensors
 * bound to new vars), and the vars of what it returns are the block's
 * results. The captures are then read off the blocks (dy_block_captures),
 * and the op is appended with inputs [pred or carried..., captures...].
 * Its outputs are new vars bound to the computed values (a view of each,
 * so a value that was also an input keeps its own var) or, in static
 * mode, to symbolic tensors.
 *
 * Every function runs inside a scope of its own; only what it returns
 * survives, so a loop's temporaries are freed each trip.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

enum { MAX_VALUES = 64 };

/* One of the user's functions with its ctx. */
typedef struct {
  const char *what;  /* "dy_cond's then branch", ... for messages */
  dy_branch_fn branch;
  dy_loop_cond_fn cond;
  dy_loop_body_fn body;
  void *ctx;
} user_fn;

static bool failed(dy_status s, dy_srcloc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool failed(dy_status s, dy_srcloc loc, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dy_fail(s, loc, "%s", msg);
  return false;
}

/* Call f on args in a scope of its own; res[0..n_res) receive references
 * the caller frees (all NULL on failure). */
static bool call(const user_fn *f, dy_tensor *const *args, int n_res,
                 dy_tensor **res, dy_srcloc loc) {
  for (int i = 0; i < n_res; i++)
    res[i] = NULL;
  dy_scope_begin();
  bool ok = f->branch ? f->branch(f->ctx, res)
            : f->cond ? (res[0] = f->cond(f->ctx, args)) != NULL
                      : f->body(f->ctx, args, res);
  for (int i = 0; i < n_res; i++)
    ok = ok && res[i];
  if (!ok && !dy_last_error())
    failed(DY_STATUS_INVALID_ARGUMENT, loc, "%s returned no value", f->what);
  for (int i = 0; i < n_res; i++)
    res[i] = ok ? dy_keep(res[i]) : NULL;
  dy_scope_end();
  return ok;
}

static void release(dy_tensor **t, int n) {
  for (int i = 0; i < n; i++) {
    dy_tensor_free(t[i]);
    t[i] = NULL;
  }
}

/* A predicate's type: a bool of one element. */
static bool check_pred(const char *who, const dy_type *t, dy_srcloc loc) {
  char ty[128];
  if (t->dtype == DY_BOOL && dy_type_numel(t) == 1)
    return true;
  return failed(DY_STATUS_INVALID_ARGUMENT, loc,
                "%s must be a bool tensor of one element, got %s", who,
                dy_type_str(t, ty, sizeof ty));
}

/* An eager predicate's value. */
static bool truth(const char *who, const dy_tensor *t, bool *out, dy_srcloc loc) {
  if (!check_pred(who, &t->type, loc))
    return false;
  if (!t->data)
    return failed(DY_STATUS_SYMBOLIC, loc, "%s has no value (symbolic)", who);
  *out = *(const unsigned char *)t->data != 0;
  return true;
}

static bool same_types(const char *what, int i, const dy_type *a, const char *wa,
                       const dy_type *b, const char *wb, dy_srcloc loc) {
  if (dy_type_equal(a, b))
    return true;
  char x[128], y[128];
  return failed(DY_STATUS_DTYPE_MISMATCH, loc, "%s %d is %s %s and %s %s", what, i,
                dy_type_str(a, x, sizeof x), wa, dy_type_str(b, y, sizeof y), wb);
}

/* ---- eagerly ---- */

static bool eager_while(const user_fn *cf, const user_fn *bf, int n,
                        dy_tensor **cur, dy_srcloc loc) {
  dy_tensor *next[MAX_VALUES];
  for (int64_t trips = 0;; trips++) {
    dy_tensor *c;
    bool go = false;
    bool ok = call(cf, cur, 1, &c, loc) &&
              truth("dy_while: the condition's result", c, &go, loc);
    dy_tensor_free(c);
    if (!ok)
      return false;
    if (!go)
      return true;
    if (trips == DY_WHILE_MAX_ITERATIONS)
      return failed(DY_STATUS_LIMIT, loc, "dy_while: the loop did not end after %d "
                    "iterations (DY_WHILE_MAX_ITERATIONS)", DY_WHILE_MAX_ITERATIONS);
    if (!call(bf, cur, n, next, loc))
      return false;
    for (int i = 0; i < n; i++)
      if (!same_types("dy_while: carried value", i, &cur[i]->type, "before the body",
                      &next[i]->type, "after it (a loop-carried value keeps its type)",
                      loc)) {
        release(next, n);
        return false;
      }
    release(cur, n);
    memcpy(cur, next, sizeof *next * (size_t)n);
  }
}

/* ---- recording ---- */

/* Trace f into a new sub-block of the current one: n_params params of
 * types ptypes, n_res results whose types go to rtypes. The block, or -1
 * (error recorded). */
static int trace_block(dy_trace_state *ts, const user_fn *f, int n_params,
                       const dy_type *ptypes, int n_res, dy_type *rtypes,
                       dy_srcloc loc) {
  dy_program *p = dy_trace_program(ts);
  dy_trace_pos here = dy_trace_where(ts);
  int b = dy_program_add_block(p, here.block);
  int pv[MAX_VALUES], rv[MAX_VALUES];
  dy_tensor *args[MAX_VALUES] = {0}, *res[MAX_VALUES];
  bool ok = b >= 0;
  for (int i = 0; i < n_params && ok; i++) {
    const char *name = dy_program_fresh_name(p, "carried");
    pv[i] = name ? dy_program_add_var(p, name, &ptypes[i]) : -1;
    args[i] = pv[i] >= 0 ? dy_tensor_alloc(&ptypes[i], false) : NULL;
    if ((ok = args[i] != NULL))
      dy_trace_bind(ts, args[i], pv[i]);
  }
  if (!ok || !dy_block_set_params(p, b, pv, n_params)) {
    release(args, n_params);
    failed(DY_STATUS_OUT_OF_MEMORY, loc, "trace: out of memory");
    return -1;
  }
  dy_trace_move(ts, (dy_trace_pos){b, true});
  ok = call(f, args, n_res, res, loc);
  for (int i = 0; i < n_res && ok; i++) {
    rv[i] = dy_trace_var(ts, res[i], loc);
    if ((ok = rv[i] >= 0))
      rtypes[i] = p->vars[rv[i]]->type;
  }
  dy_trace_move(ts, here);
  if (ok && !dy_block_set_results(p, b, rv, n_res))
    ok = failed(DY_STATUS_OUT_OF_MEMORY, loc, "trace: out of memory");
  release(res, n_res);
  release(args, n_params);
  return ok ? b : -1;
}

/* Append the op: inputs first[0..n_first) then the blocks' captures;
 * outputs new vars of types `types`, bound to tensors into outs: views of
 * values[] when computed, else symbolic. Takes values' references. */
static bool append(dy_trace_state *ts, dy_op_kind kind, const int *first, int n_first,
                   const int blocks[2], const dy_attr *attrs, int n_attrs, int n_out,
                   const dy_type *types, dy_tensor **values, dy_tensor **outs,
                   dy_srcloc loc) {
  dy_program *p = dy_trace_program(ts);
  int here = dy_trace_where(ts).block;
  int in[2 * MAX_VALUES + 2 * 256], n_in = n_first, ov[MAX_VALUES];
  int cap = (int)(sizeof in / sizeof in[0]);
  memcpy(in, first, sizeof(int) * (size_t)n_first);
  bool ok = true;
  for (int j = 0; j < 2 && ok; j++) {
    int caps[256];
    int n = dy_block_captures(p, blocks[j], caps, 256);
    if (n < 0 || n > 256 || n_in + n > cap) {
      ok = failed(DY_STATUS_UNSUPPORTED, loc, "%s: more than 256 captured tensors",
                  dy_op_name(kind));
      break;
    }
    for (int i = 0; i < n; i++) {
      bool seen = false;
      for (int k = n_first; k < n_in && !seen; k++)
        seen = in[k] == caps[i];
      if (!seen)
        in[n_in++] = caps[i];
    }
  }
  for (int i = 0; i < n_out && ok; i++) {
    const char *name = dy_program_fresh_name(p, dy_op_name(kind));
    ov[i] = name ? dy_program_add_var(p, name, &types[i]) : -1;
    if (ov[i] < 0)
      ok = failed(DY_STATUS_OUT_OF_MEMORY, loc, "trace: out of memory");
    else
      p->vars[ov[i]]->block = here;
  }
  if (ok && !dy_program_append_op(p, here, kind, in, n_in, ov, n_out, attrs, n_attrs, loc))
    ok = failed(DY_STATUS_OUT_OF_MEMORY, loc, "trace: out of memory");
  for (int i = 0; i < n_out && ok; i++) {
    outs[i] = values ? dy_tensor_view(values[i], &values[i]->type)
                     : dy_tensor_symbolic(&types[i]);
    if (!(ok = outs[i] != NULL))
      break;
    dy_trace_bind(ts, outs[i], ov[i]);
  }
  if (values)
    release(values, n_out);
  if (!ok)
    for (int i = 0; i < n_out; i++)
      outs[i] = NULL;  /* the scope owns any made */
  return ok;
}

/* ---- the API ---- */

bool dy_cond_at(dy_tensor *pred, dy_branch_fn then_fn, dy_branch_fn else_fn,
                void *ctx, int n_out, dy_tensor **outs, dy_srcloc loc) {
  if (!outs || n_out < 1 || n_out > MAX_VALUES || !then_fn || !else_fn)
    return failed(DY_STATUS_INVALID_ARGUMENT, loc,
                  "dy_cond: needs two branch functions and 1 to %d outputs", MAX_VALUES);
  for (int i = 0; i < n_out; i++)
    outs[i] = NULL;
  if (!pred)  /* an earlier call failed; its error stands */
    return failed(DY_STATUS_INVALID_ARGUMENT, loc, "dy_cond: the predicate is NULL");
  if (!check_pred("dy_cond: the predicate", &pred->type, loc))
    return false;
  user_fn f[2] = {{"dy_cond's then branch", then_fn, NULL, NULL, ctx},
                  {"dy_cond's else branch", else_fn, NULL, NULL, ctx}};
  dy_trace_state *ts = dy_trace_active();
  dy_tensor *res[MAX_VALUES] = {0};
  bool computed = pred->data && !(ts && dy_trace_where(ts).symbolic);
  if (computed) {
    dy_trace_state *susp = dy_trace_suspend();
    bool taken = false;
    bool ok = truth("dy_cond: the predicate", pred, &taken, loc) &&
              call(&f[taken ? 0 : 1], NULL, n_out, res, loc);
    dy_trace_resume(susp);
    if (!ok)
      return false;
  }
  if (!ts) {
    for (int i = 0; i < n_out; i++)
      outs[i] = dy_tensor_adopt(res[i]);
    return true;
  }
  int pv = dy_trace_var(ts, pred, loc), blocks[2] = {-1, -1};
  dy_type t[2][MAX_VALUES];
  bool ok = pv >= 0;
  for (int j = 0; j < 2 && ok; j++)
    ok = (blocks[j] = trace_block(ts, &f[j], 0, NULL, n_out, t[j], loc)) >= 0;
  for (int i = 0; i < n_out && ok; i++)
    ok = same_types("dy_cond: result", i, &t[0][i], "in the then branch", &t[1][i],
                    "in the else branch", loc);
  dy_attr attrs[DY_COND_NATTRS];
  int n_attrs = dy_cond_attrs_put(&(dy_cond_attrs){
      .given = DY_GIVEN_ALL, .then_block = blocks[0], .else_block = blocks[1]}, attrs);
  if (ok)
    return append(ts, DY_OP_COND, &pv, 1, blocks, attrs, n_attrs, n_out, t[0],
                  computed ? res : NULL, outs, loc);
  release(res, n_out);
  return false;
}

bool dy_while_at(dy_loop_cond_fn cond_fn, dy_loop_body_fn body_fn, void *ctx,
                 int n_carried, dy_tensor **carried, dy_srcloc loc) {
  int n = n_carried;
  if (!carried || n < 1 || n > MAX_VALUES || !cond_fn || !body_fn)
    return failed(DY_STATUS_INVALID_ARGUMENT, loc,
                  "dy_while: needs a condition, a body and 1 to %d carried values",
                  MAX_VALUES);
  dy_tensor *init[MAX_VALUES], *cur[MAX_VALUES] = {0};
  bool have_data = true;
  for (int i = 0; i < n; i++) {
    init[i] = carried[i];
    carried[i] = NULL;
    if (!init[i])
      return failed(DY_STATUS_INVALID_ARGUMENT, loc, "dy_while: carried value %d is NULL", i);
    have_data &= init[i]->data != NULL;
  }
  user_fn cf = {"dy_while's condition", NULL, cond_fn, NULL, ctx};
  user_fn bf = {"dy_while's body", NULL, NULL, body_fn, ctx};
  dy_trace_state *ts = dy_trace_active();
  bool computed = have_data && !(ts && dy_trace_where(ts).symbolic);
  if (computed) {
    for (int i = 0; i < n; i++)
      cur[i] = dy_keep(init[i]);
    dy_trace_state *susp = dy_trace_suspend();
    bool ok = eager_while(&cf, &bf, n, cur, loc);
    dy_trace_resume(susp);
    if (!ok) {
      release(cur, n);
      return false;
    }
  }
  if (!ts) {
    for (int i = 0; i < n; i++)
      carried[i] = dy_tensor_adopt(cur[i]);
    return true;
  }
  dy_program *p = dy_trace_program(ts);
  int cv[MAX_VALUES], blocks[2] = {-1, -1};
  dy_type ct[MAX_VALUES], rt[MAX_VALUES];
  bool ok = true;
  for (int i = 0; i < n && ok; i++)
    if ((ok = (cv[i] = dy_trace_var(ts, init[i], loc)) >= 0))
      ct[i] = p->vars[cv[i]]->type;
  ok = ok && (blocks[0] = trace_block(ts, &cf, n, ct, 1, rt, loc)) >= 0 &&
       check_pred("dy_while: the condition's result", &rt[0], loc) &&
       (blocks[1] = trace_block(ts, &bf, n, ct, n, rt, loc)) >= 0;
  for (int i = 0; i < n && ok; i++)
    ok = same_types("dy_while: carried value", i, &ct[i], "before the body", &rt[i],
                    "after it (a loop-carried value keeps its type)", loc);
  dy_attr attrs[DY_WHILE_NATTRS];
  int n_attrs = dy_while_attrs_put(&(dy_while_attrs){
      .given = DY_GIVEN_ALL, .n_carried = n, .cond_block = blocks[0], .body_block = blocks[1],
      .max_iterations = 0}, attrs);
  if (ok)
    return append(ts, DY_OP_WHILE, cv, n, blocks, attrs, n_attrs, n, ct,
                  computed ? cur : NULL, carried, loc);
  release(cur, n);
  return false;
}
