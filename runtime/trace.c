/* trace.c - the tracer and static mode.
 *
 * While a trace is active on this thread, dy_apply calls dy_trace_record
 * after computing each op. Tensors are bound to Program vars through two
 * fields (var, trace_id), so no lookup table is needed: a tensor is "known"
 * to a trace when its trace_id equals the trace's id. A tensor the trace has
 * never seen but that carries data (a layer's parameter, a constant made
 * with dy_full or dy_rand outside the forward) becomes a persistable var
 * holding a copy of that data, named after the parameter.
 *
 * Each op's output var is typed by running inference on the input *vars*'
 * types, where the dynamic batch is -1; so dims marked -1 in the input
 * specs stay dynamic, and an attribute that would bake in the traced batch
 * (reshape to a literal size) is reported with its source line.
 *
 * Static mode is the same machinery with symbolic inputs (no data): ops
 * infer and record but compute nothing.
 *
 * Blocks (runtime/control.c): ops are recorded into the current block,
 * which dy_cond / dy_while move into a sub-block while they trace a branch
 * or a loop's condition and body, with every op forced symbolic there (the
 * path not taken computes nothing). A tensor bound to a var of a block
 * that is not on the current block's parent chain (made inside a branch or
 * a body and not returned) is an error where it is used.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

struct dy_trace_state {
  dy_program *p;
  unsigned id;
  bool symbolic;
  dy_trace_pos pos;     /* where ops are recorded (control.c moves it) */
};

static _Thread_local dy_trace_state *active;
static _Thread_local unsigned trace_counter;

dy_trace_state *dy_trace_active(void) { return active; }

static unsigned new_trace_id(void) {
  /* unique per thread; tensors are not shared across threads while tracing */
  return ++trace_counter;
}

static bool bind(dy_trace_state *ts, dy_tensor *t, int var) {
  t->var = var;
  t->trace_id = ts->id;
  return true;
}

/* The var of tensor t, creating a persistable one for unseen data. */
static int var_of(dy_trace_state *ts, dy_tensor *t, dy_srcloc loc) {
  if (t->trace_id == ts->id) {
    const dy_var *v = ts->p->vars[t->var];
    if (!dy_block_within(ts->p, ts->pos.block, v->block)) {
      dy_fail(DY_STATUS_INVALID_ARGUMENT, loc,
              "tensor '%s' was made inside a %s (block %d) and is used outside "
              "it: return it from the branch or body instead", v->name,
              dy_block_owner(ts->p, v->block, NULL, NULL) &&
                      dy_block_owner(ts->p, v->block, NULL, NULL)->kind == DY_OP_WHILE
                  ? "dy_while loop"
                  : "dy_cond branch",
              v->block);
      return -1;
    }
    return t->var;
  }
  if (!t->data) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, loc,
            "a symbolic tensor from another trace was used");
    return -1;
  }
  const char *name = t->name ? t->name : dy_program_fresh_name(ts->p, "const");
  if (t->name && dy_program_find_var(ts->p, name) >= 0)
    name = dy_program_fresh_name(ts->p, t->name);
  int v = dy_program_add_var(ts->p, name, &t->type);
  dy_error err = {0};
  if (v < 0 || dy_program_set_data(ts->p, v, t->data, t->nbytes, &err) != DY_OK) {
    dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "trace: cannot add constant '%s'", name);
    return -1;
  }
  ts->p->vars[v]->trainable = t->requires_grad && t->type.dtype == DY_F32;
  bind(ts, t, v);
  return v;
}

bool dy_trace_record(dy_trace_state *ts, dy_op_kind kind, dy_tensor *const *in,
                     int n_in, const dy_attr *attrs, int n_attrs, dy_srcloc loc,
                     dy_tensor *out) {
  int ids[DY_MAX_OP_INPUTS];
  dy_type types[DY_MAX_OP_INPUTS];
  if (n_in > DY_MAX_OP_INPUTS) {
    dy_fail(DY_STATUS_UNSUPPORTED, loc, "%s: more than %d inputs", dy_op_name(kind),
            DY_MAX_OP_INPUTS);
    return false;
  }
  if (dy_op_info_of(kind)->flags & DY_OPF_SETS_SIZE) {
    /* each traced one would need a size symbol of its own (the ONNX
     * frontend makes them); not yet */
    dy_fail(DY_STATUS_UNSUPPORTED, loc, "%s: its output size is known only at run time, "
            "which tracing does not record yet", dy_op_name(kind));
    return false;
  }
  for (int i = 0; i < n_in; i++) {
    if ((ids[i] = var_of(ts, in[i], loc)) < 0)
      return false;
    types[i] = ts->p->vars[ids[i]]->type;
  }
  dy_op probe = {.id = ts->p->next_op_id, .kind = kind, .attrs = (dy_attr *)attrs,
                 .n_attrs = n_attrs, .loc = loc};
  dy_type out_ts[8];
  dy_error err = {0};
  if (dy_infer(&probe, types, n_in, out_ts, &err) != DY_OK) {
    dy_fail_with(&err);
    return false;
  }
  /* an in-place op writes the vars of its first n_out inputs (the state
   * it updates: persistable vars, checked by the verifier) */
  if (dy_op_has(&probe, DY_OPF_INPLACE)) {
    if (!dy_program_append_op(ts->p, 0, kind, ids, n_in, ids,
                              dy_op_info_of(kind)->n_out, attrs, n_attrs, loc)) {
      dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "trace: out of memory");
      return false;
    }
    return true;
  }
  const dy_type out_t = out_ts[0];
  /* the var's static dims must agree with what was computed */
  for (int i = 0; i < out_t.rank; i++)
    if (out_t.shape[i] >= 0 && out->type.shape[i] >= 0 &&
        out_t.shape[i] != out->type.shape[i]) {
      dy_fail(DY_STATUS_INTERNAL, loc, "%s: traced dim %d is %lld, Program says %lld",
              dy_op_name(kind), i, (long long)out->type.shape[i],
              (long long)out_t.shape[i]);
      return false;
    }
  const char *name = dy_program_fresh_name(ts->p, dy_op_name(kind));
  int v = name ? dy_program_add_var(ts->p, name, &out_t) : -1;
  if (v < 0 || !dy_program_append_op(ts->p, ts->pos.block, kind, ids, n_in, &v,
                                     1, attrs, n_attrs, loc)) {
    dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "trace: out of memory");
    return false;
  }
  ts->p->vars[v]->block = ts->pos.block;
  return bind(ts, out, v);
}

/* ---- the hooks of control.c ---- */

dy_program *dy_trace_program(dy_trace_state *ts) { return ts->p; }
int dy_trace_var(dy_trace_state *ts, dy_tensor *t, dy_srcloc loc) {
  return var_of(ts, t, loc);
}
void dy_trace_bind(dy_trace_state *ts, dy_tensor *t, int var) { bind(ts, t, var); }
dy_trace_pos dy_trace_move(dy_trace_state *ts, dy_trace_pos to) {
  dy_trace_pos was = ts->pos;
  ts->pos = to;
  return was;
}
dy_trace_pos dy_trace_where(const dy_trace_state *ts) { return ts->pos; }
dy_trace_state *dy_trace_suspend(void) {
  dy_trace_state *ts = active;
  active = NULL;
  return ts;
}
void dy_trace_resume(dy_trace_state *ts) { active = ts; }
bool dy_trace_var_type(const dy_trace_state *ts, const dy_tensor *t, dy_type *out) {
  if (!ts || !ts->pos.symbolic || t->trace_id != ts->id)
    return false;
  *out = ts->p->vars[t->var]->type;
  return true;
}

bool dy_trace_depends_on_input(dy_trace_state *ts, const dy_tensor *t) {
  return t->trace_id == ts->id && !ts->p->vars[t->var]->persistable;
}

/* Give every parameter of the tree its dotted path as name. */
static void name_params(dy_layer *l) {
  for (int i = 0; i < l->n_params; i++) {
    char path[256];
    const char *local = strrchr(l->params[i]->name, '.');
    local = local ? local + 1 : l->params[i]->name;
    dy_layer_param_path(l, local, path, sizeof path);
    char *n = malloc(strlen(path) + 1);
    if (n) {
      strcpy(n, path);
      free(l->params[i]->name);
      l->params[i]->name = n;
    }
  }
  for (int i = 0; i < l->n_children; i++)
    name_params(l->children[i]);
}

static dy_status check_spec(const dy_input_spec *s, const dy_tensor *t, int i,
                            dy_error *err) {
  bool ok = s->rank == t->type.rank && s->dtype == t->type.dtype;
  for (int d = 0; ok && d < s->rank; d++)
    ok = s->shape[d] < 0 || s->shape[d] == t->type.shape[d];
  if (!ok) {
    char a[128];
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "input %d ('%s'): tensor %s does not match its spec", i,
                        s->name ? s->name : "?", dy_type_str(&t->type, a, sizeof a));
  }
  return DY_OK;
}

/* Run forward under a trace. inputs are bound to new feed vars typed by
 * specs (or by the inputs themselves). loc is the user's call of the trace:
 * the root layer's location unless it was added somewhere (layer->loc). */
static dy_status run_traced(dy_layer *layer, const dy_input_spec *specs,
                            dy_tensor *const *inputs, int n, bool symbolic,
                            dy_tensor **out, dy_program **prog, dy_error *err,
                            dy_srcloc loc) {
  if (active)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "a trace is already active on this thread");
  if (n < 1 || n > DY_MAX_FEEDS)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "bad input count %d", n);
  dy_trace_state ts = {.p = dy_program_new(), .id = new_trace_id(), .symbolic = symbolic};
  if (!ts.p)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "trace: out of memory");
  dy_status s = DY_OK;
  name_params(layer);
  for (int i = 0; i < n && !s; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "x%d", i);
    const char *name = specs && specs[i].name ? specs[i].name : nm;
    dy_type t = inputs[i]->type;
    if (specs) {
      if ((s = check_spec(&specs[i], inputs[i], i, err)))
        break;
      memcpy(t.shape, specs[i].shape, sizeof(int64_t) * (size_t)t.rank);
    }
    int v = dy_program_add_var(ts.p, name, &t);
    if (v < 0) {
      s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                       "input name '%s' is used twice", name);
      break;
    }
    if ((s = dy_program_add_feed(ts.p, v, err)))
      break;
    bind(&ts, inputs[i], v);
  }
  dy_tensor *y = NULL;
  if (!s) {
    dy_clear_error();
    active = &ts;
    dy_scope_begin();
    if (layer->loc.file)
      loc = DY_INHERIT;
    y = dy_layer_call_at(layer, inputs, n, loc);
    if (y && !dy_last_error()) {
      int v = var_of(&ts, y, (dy_srcloc){0});
      dy_var *fv = v >= 0 ? ts.p->vars[v] : NULL;
      /* the output is called "out", as Paddle's jit.save names it after
       * the forward's return, unless it is an input or a parameter */
      if (fv && !fv->persistable && fv->feed_index < 0 &&
          dy_program_find_var(ts.p, "out") < 0)
        fv->name = dy_program_strdup(ts.p, "out");
      if (v >= 0)
        s = dy_program_add_fetch(ts.p, v, err);
    }
    if (dy_last_error()) {
      *err = *dy_last_error();
      if (err->loc.file)
        err->loc.file = err->file_buf;
      s = err->status ? err->status : DY_STATUS_INTERNAL;
      dy_clear_error();
    } else if (!y) {
      s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                       "the forward of '%s' returned NULL", layer->name);
    }
    if (!s && out)
      *out = dy_keep(y);
    dy_scope_end();
    active = NULL;
  }
  for (int i = 0; i < n; i++)
    inputs[i]->trace_id = 0;
  if (!s)
    s = dy_program_declare_used_syms(ts.p, err);
  if (!s && (s = dy_verify(ts.p, err)))
    dy_error_prefix(err, "traced Program is invalid");
  if (s) {
    if (out && *out) {
      dy_tensor_free(*out);
      *out = NULL;
    }
    dy_program_free(ts.p);
    return s;
  }
  if (prog)
    *prog = ts.p;
  else
    dy_program_free(ts.p);
  return DY_OK;
}

dy_status dy_trace_at(dy_layer *layer, const dy_input_spec *specs,
                      dy_tensor *const *inputs, int n_inputs, dy_tensor **out,
                      dy_program **prog, dy_error *err, dy_srcloc loc) {
  if (out)
    *out = NULL;
  for (int i = 0; i < n_inputs; i++)
    if (!inputs[i] || !inputs[i]->data)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "dy_trace: input %d has no data", i);
  return run_traced(layer, specs, inputs, n_inputs, false, out, prog, err, loc);
}

dy_status dy_program_from_layer_at(dy_layer *layer, const dy_input_spec *specs,
                                   int n_specs, dy_program **prog, dy_error *err,
                                   dy_srcloc loc) {
  dy_tensor *in[DY_MAX_FEEDS];
  if (n_specs < 1 || n_specs > DY_MAX_FEEDS)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "bad spec count %d", n_specs);
  for (int i = 0; i < n_specs; i++) {
    dy_type t = {.dtype = specs[i].dtype, .rank = specs[i].rank};
    if (t.rank < 0 || t.rank > DY_MAX_DIMS || (unsigned)t.dtype >= DY_DTYPE_COUNT)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "spec %d ('%s'): bad rank or dtype", i,
                          specs[i].name ? specs[i].name : "?");
    for (int d = 0; d < t.rank; d++) {
      t.shape[d] = specs[i].shape[d];
      if (t.shape[d] < -1 && dy_dim_single_sym(t.shape[d]) < 0) {
        char b[96];
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "spec %d ('%s'): dim %d is %s (a size, -1 or one "
                            "named symbol, DY_DIM(\"name\"))", i,
                            specs[i].name ? specs[i].name : "?", d,
                            dy_dim_str(t.shape[d], b, sizeof b));
      }
    }
    in[i] = dy_tensor_alloc(&t, false);
    if (!in[i]) {
      for (int k = 0; k < i; k++)
        dy_tensor_free(in[k]);
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
  }
  dy_status s = run_traced(layer, specs, in, n_specs, true, NULL, prog, err, loc);
  for (int i = 0; i < n_specs; i++)
    dy_tensor_free(in[i]);
  return s;
}
