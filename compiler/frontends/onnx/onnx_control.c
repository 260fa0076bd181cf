/* onnx_control.c - ONNX's control flow:
 *
 *   If    a constant cond picks one branch (imported inline); a run-time
 *         cond becomes a `cond` op: each branch is imported into its own
 *         sub-block, yielding the branch's outputs (which must have one
 *         type), and the outer values the branches read become the op's
 *         captures (dy_block_captures).
 *   Scan  unrolled: the body is imported once per step of the (static)
 *         scan axis, the state threaded through, the scan outputs
 *         concatenated. Opset 8's batch dimension is unrolled too.
 *   Loop  unrolled when the trip count M is a constant (at most MAX_STEPS)
 *         and cond a constant, and the condition stays a constant (true,
 *         until the body makes it false; a body condition computed from
 *         run-time values, cond_is_run_time, is not): the body is imported
 *         once per iteration with iter_num a constant. Otherwise, when the loop has
 *         no scan outputs (their length would be a run-time value), a
 *         `while` op carries (iter_num, cond, v...): its condition block
 *         computes `cond && iter_num < M` (M, when given, a capture), its
 *         body block is the ONNX body plus iter_num + 1; a constant M is
 *         also the op's max_iterations.
 *
 * Each sub-graph is imported by c->import_subgraph (onnx.c's, handed to
 * the mappers through the context), names of the enclosing graph visible,
 * its own names scoped to one import; ops go to the block in ctx->block.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

#define MAX_VALS 32
#define MAX_STEPS 4096

static const Onnx__GraphProto *graph_attr(ox_ctx *c, const char *name) {
  const Onnx__AttributeProto *a = ox_attr(c, name);
  return a ? a->g : NULL;
}

static ox_value *slice1(ox_ctx *c, ox_value *x, int64_t axis, int64_t start, int64_t end) {
  return ox_slice(c, x, 1, &start, &end, &axis, NULL);
}

/* The values of a list stacked along a new axis (concatenated as
 * [.., 1, ..] slices). */
static ox_value *stack(ox_ctx *c, ox_value **v, int n, int axis) {
  ox_value *u[MAX_STEPS];
  for (int i = 0; i < n; i++) {
    u[i] = ox_unsqueeze(c, v[i], 1, (int64_t[]){axis});
    if (!u[i])
      return NULL;
  }
  return ox_concat_many(c, u, n, axis);
}

/* ------------------------------------------------------------------ */
/* Sub-blocks                                                          */
/* ------------------------------------------------------------------ */

/* A new sub-block of the current block with n params of the given types
 * (new vars, bound to new values in vals). c->block becomes it; *saved
 * gets the block to return to (close_block). */
static dy_status open_block(ox_ctx *c, const dy_type *types, int n, ox_value **vals,
                            int *block, int *saved) {
  int b = dy_program_add_block(c->p, c->block), ids[2 * MAX_VALS + 2];
  if (b < 0 || n > 2 * MAX_VALS + 2)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n; i++) {
    const char *nm = dy_program_fresh_name(c->p, "param");
    ids[i] = nm ? dy_program_add_var(c->p, nm, &types[i]) : -1;
    vals[i] = ids[i] >= 0 ? ox_new_value(c, nm, &types[i]) : NULL;
    if (!vals[i])
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    vals[i]->var = ids[i];
  }
  if (n && !dy_block_set_params(c->p, b, ids, n))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  *saved = c->block;
  *block = c->block = b;
  return DY_OK;
}

/* Block b (the current one) yields res (constants become weights); back to
 * block saved. */
static dy_status close_block(ox_ctx *c, int b, ox_value **res, int n, int saved) {
  int ids[2 * MAX_VALS + 2];
  dy_status s = DY_OK;
  for (int i = 0; i < n && !s; i++)
    if (!(s = ox_materialize(c, res[i])))
      ids[i] = res[i]->var;
  c->block = saved;
  if (!s && n && !dy_block_set_results(c->p, b, ids, n))
    s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return s;
}

/* Append a control op: inputs first[0..n_first) then the captures of its
 * blocks (each outer var once); outputs new vars of the given types, bound
 * to the node's outputs from out_from on. */
static dy_status append_control(ox_ctx *c, dy_op_kind kind, const int *blocks, int n_blocks,
                                ox_value **first, int n_first, const dy_type *out_t,
                                int n_out, int out_from, const dy_attr *attrs, int n_attrs) {
  int cap = c->p->n_vars + n_first + 1, n_in = 0;
  int *in = malloc(sizeof *in * (size_t)cap), *caps = malloc(sizeof *caps * (size_t)cap);
  int outs[2 * MAX_VALS + 2];
  dy_status s = !in || !caps ? ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
  for (int i = 0; i < n_first && !s; i++)
    if (!(s = ox_materialize(c, first[i])))
      in[n_in++] = first[i]->var;
  for (int j = 0; j < n_blocks && !s; j++) {
    int k = dy_block_captures(c->p, blocks[j], caps, cap);
    if (k < 0 || k > cap)
      s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < k && !s; i++) {
      bool seen = false;
      for (int q = n_first; q < n_in && !seen; q++)
        seen = in[q] == caps[i];
      if (!seen && n_in < cap)
        in[n_in++] = caps[i];
    }
  }
  char stem[200];
  const char *base = c->node && c->node->n_output && c->node->output[0][0]
                         ? c->node->output[0] : dy_op_name(kind);
  snprintf(stem, sizeof stem, "%.150s/%s", base, dy_op_name(kind));
  ox_value *vals[2 * MAX_VALS + 2];
  for (int i = 0; i < n_out && !s; i++) {
    const char *nm = dy_program_fresh_name(c->p, stem);
    outs[i] = nm ? dy_program_add_var(c->p, nm, &out_t[i]) : -1;
    vals[i] = outs[i] >= 0 ? ox_new_value(c, nm, &out_t[i]) : NULL;
    if (!vals[i])
      s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    else
      vals[i]->var = outs[i];
  }
  if (!s && !dy_program_append_op(c->p, c->block, kind, in, n_in, outs, n_out, attrs, n_attrs,
                                  c->loc))
    s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = out_from; i < n_out && !s; i++)
    s = ox_set_out(c, i - out_from, vals[i]);
  free(in);
  free(caps);
  return s;
}

/* ------------------------------------------------------------------ */
/* If                                                                  */
/* ------------------------------------------------------------------ */

/* If(cond) attributes: then_branch, else_branch (graphs). */
static dy_status map_if(ox_ctx *c) {
  ox_value *cond;
  TRY(ox_check_attrs(c, "then_branch else_branch"));
  TRY(ox_need_in(c, 0, &cond));
  const Onnx__GraphProto *tg = graph_attr(c, "then_branch"), *eg = graph_attr(c, "else_branch");
  int n = ox_n_out(c);
  if (!tg || !eg || n > MAX_VALS)
    return ox_fail(c, DY_STATUS_FORMAT, "If needs then_branch and else_branch graphs");
  if (cond->type.dtype != DY_BOOL || dy_type_numel(&cond->type) != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "cond must be a one-element bool");
  ox_value *tv[MAX_VALS], *ev[MAX_VALS];
  if (ox_is_const(cond)) {
    bool t = ((unsigned char *)cond->c->data)[0] != 0;
    TRY(c->import_subgraph(c, t ? tg : eg, t ? "then_branch" : "else_branch", NULL, 0, tv, n));
    for (int i = 0; i < n; i++)
      TRY(ox_set_out(c, i, tv[i]));
    return DY_OK;
  }
  /* a run-time condition: a cond op over two sub-blocks */
  int blocks[2], saved = c->block;
  TRY(open_block(c, NULL, 0, NULL, &blocks[0], &saved));
  dy_status s = c->import_subgraph(c, tg, "then_branch", NULL, 0, tv, n);
  if (!s)
    s = close_block(c, blocks[0], tv, n, saved);
  c->block = saved;
  TRY(s);
  TRY(open_block(c, NULL, 0, NULL, &blocks[1], &saved));
  s = c->import_subgraph(c, eg, "else_branch", NULL, 0, ev, n);
  if (!s)
    s = close_block(c, blocks[1], ev, n, saved);
  c->block = saved;
  TRY(s);
  dy_type types[MAX_VALS];
  for (int i = 0; i < n; i++) {
    if (!dy_type_equal(&tv[i]->type, &ev[i]->type)) {
      char a[128], b[128];
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "output %d is %s in then_branch and %s in else_branch; a run-time "
                     "condition needs one type", i, dy_type_str(&tv[i]->type, a, sizeof a),
                     dy_type_str(&ev[i]->type, b, sizeof b));
    }
    types[i] = tv[i]->type;
  }
  dy_attr attrs[DY_COND_NATTRS];
  int n_attrs = dy_cond_attrs_put(&(dy_cond_attrs){
      .given = DY_GIVEN_ALL, .then_block = blocks[0], .else_block = blocks[1]}, attrs);
  return append_control(c, DY_OP_COND, blocks, 2, &cond, 1, types, n, 0, attrs, n_attrs);
}

/* ------------------------------------------------------------------ */
/* Scan                                                                */
/* ------------------------------------------------------------------ */

/* One scan over the step axis: n_state states, n_scan scan inputs (each
 * sliced along axes[i], in direction dirs[i]); out gets the final states
 * then the stacked scan outputs. */
static dy_status scan_once(ox_ctx *c, const Onnx__GraphProto *body, int n_state,
                           ox_value **state, int n_scan, ox_value **xs, const int64_t *in_axes,
                           const int64_t *in_dirs, int n_sout, const int64_t *out_axes,
                           const int64_t *out_dirs, ox_value **out) {
  int64_t T = -1;
  for (int i = 0; i < n_scan; i++) {
    int64_t t = xs[i]->type.shape[in_axes[i]];
    if (t < 1 || (T >= 0 && t != T))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "scan inputs need one static, non-empty "
                     "sequence length");
    T = t;
  }
  if (T < 1 || T > MAX_STEPS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a scan of %lld steps", (long long)T);
  ox_value *in[2 * MAX_VALS], *res[2 * MAX_VALS];
  /* steps[i * T + q]: scan output i of step q */
  ox_value **steps = calloc((size_t)(n_sout * T + 1), sizeof *steps);
  if (!steps)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_status s = DY_OK;
  for (int64_t q = 0; q < T && !s; q++) {
    for (int i = 0; i < n_state; i++)
      in[i] = state[i];
    for (int i = 0; i < n_scan && !s; i++) {
      int64_t t = in_dirs[i] ? T - 1 - q : q;
      in[n_state + i] = ox_squeeze(c, slice1(c, xs[i], in_axes[i], t, t + 1), 1,
                                   (int64_t[]){in_axes[i]});
      if (!in[n_state + i])
        s = c->err->status;
    }
    if (!s)
      s = c->import_subgraph(c, body, "the body", in, n_state + n_scan, res, n_state + n_sout);
    for (int i = 0; i < n_state && !s; i++)
      state[i] = res[i];
    for (int i = 0; i < n_sout && !s; i++)
      steps[i * T + q] = res[n_state + i];
  }
  for (int i = 0; i < n_state && !s; i++)
    out[i] = state[i];
  for (int i = 0; i < n_sout && !s; i++) {
    ox_value **v = steps + i * T;
    if (out_dirs[i]) /* the last step first */
      for (int64_t q = 0; q < T / 2; q++) {
        ox_value *u = v[q];
        v[q] = v[T - 1 - q];
        v[T - 1 - q] = u;
      }
    int ax;
    if (!(s = ox_axis(c, out_axes[i], v[0]->type.rank + 1, &ax))) {
      out[n_state + i] = stack(c, v, (int)T, ax);
      if (!out[n_state + i])
        s = c->err->status;
    }
  }
  free(steps);
  return s;
}

/* Scan(initial_state_and_scan_inputs...) attributes: body, num_scan_inputs,
 * scan_input_axes (0s), scan_input_directions (0s), scan_output_axes (0s),
 * scan_output_directions (0s). Opset 8: Scan(sequence_lens,
 * initial_state_and_scan_inputs...) with a leading batch dim and
 * `directions`; sequence_lens must be absent. */
static dy_status map_scan(ox_ctx *c) {
  bool v8 = c->opset < 9;
  TRY(ox_check_attrs(c, v8 ? "body num_scan_inputs directions"
                           : "body num_scan_inputs scan_input_axes scan_input_directions "
                             "scan_output_axes scan_output_directions"));
  const Onnx__GraphProto *body = graph_attr(c, "body");
  int first = v8 ? 1 : 0, n_in = ox_n_in(c) - first, n_out = ox_n_out(c);
  int64_t m = ox_attr_i(c, "num_scan_inputs", -1);
  if (!body || m < 1 || m > n_in || n_in > MAX_VALS || n_out > MAX_VALS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs a body and 1 <= num_scan_inputs <= "
                   "the inputs");
  if (v8 && ox_in(c, 0))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "sequence_lens");
  int n_state = n_in - (int)m, n_scan = (int)m, n_sout = n_out - n_state;
  if (n_sout < 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "fewer outputs than states");
  ox_value *state[MAX_VALS], *xs[MAX_VALS], *out[2 * MAX_VALS];
  for (int i = 0; i < n_in; i++)
    TRY(ox_need_in(c, first + i, i < n_state ? &state[i] : &xs[i - n_state]));
  int64_t in_axes[MAX_VALS] = {0}, in_dirs[MAX_VALS] = {0};
  int64_t out_axes[MAX_VALS] = {0}, out_dirs[MAX_VALS] = {0};
  const char *names[4] = {v8 ? "directions" : "scan_input_directions", "scan_input_axes",
                          "scan_output_axes", "scan_output_directions"};
  int64_t *dst[4] = {in_dirs, in_axes, out_axes, out_dirs};
  int want[4] = {n_scan, n_scan, n_sout, n_sout};
  for (int k = 0; k < 4; k++) {
    int na;
    const int64_t *a = ox_attr_ints(c, names[k], &na);
    if (a && na != want[k])
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s has %d entries", names[k], na);
    for (int i = 0; a && i < na; i++)
      dst[k][i] = a[i];
  }
  if (!v8) {
    for (int i = 0; i < n_scan; i++) {
      int ax;
      TRY(ox_axis(c, in_axes[i], xs[i]->type.rank, &ax));
      in_axes[i] = ax;
    }
    TRY(scan_once(c, body, n_state, state, n_scan, xs, in_axes, in_dirs, n_sout, out_axes,
                  out_dirs, out));
    for (int i = 0; i < n_out; i++)
      TRY(ox_set_out(c, i, out[i]));
    return DY_OK;
  }
  /* opset 8: every input has a leading batch dim; scan axis 1 */
  int64_t B = -1; /* (no state: state[0] is not set) */
  for (int i = 0; i < n_in; i++) {
    ox_value *v = i < n_state ? state[i] : xs[i - n_state];
    if (v->type.rank < 1 || v->type.shape[0] < 1 || (B >= 0 && v->type.shape[0] != B))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "opset 8 Scan needs one static batch");
    B = v->type.shape[0];
  }
  if (B > MAX_VALS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a batch of %lld", (long long)B);
  ox_value *per[MAX_VALS][2 * MAX_VALS];
  for (int64_t b = 0; b < B; b++) {
    ox_value *st[MAX_VALS], *x1[MAX_VALS];
    for (int i = 0; i < n_state; i++)
      st[i] = ox_squeeze(c, slice1(c, state[i], 0, b, b + 1), 1, (int64_t[]){0});
    for (int i = 0; i < n_scan; i++)
      x1[i] = ox_squeeze(c, slice1(c, xs[i], 0, b, b + 1), 1, (int64_t[]){0});
    TRY(scan_once(c, body, n_state, st, n_scan, x1, in_axes, in_dirs, n_sout, out_axes,
                  out_dirs, per[b]));
  }
  for (int i = 0; i < n_out; i++) {
    ox_value *v[MAX_VALS];
    for (int64_t b = 0; b < B; b++)
      v[b] = per[b][i];
    TRY(ox_set_or_fail(c, i, stack(c, v, (int)B, 0)));
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* Loop                                                                */
/* ------------------------------------------------------------------ */

/* The iterations of a Loop: import the body once per iteration while the
 * (constant) condition holds, at most trips times. steps[i * MAX_STEPS +
 * t] gets scan output i of iteration t; *n gets the iteration count. */
static dy_status unroll(ox_ctx *c, const Onnx__GraphProto *body, int64_t trips, bool go,
                        int n_carried, ox_value **carried, int n_scan, ox_value **steps,
                        int64_t *n) {
  ox_value *res[2 * MAX_VALS + 1], *in[MAX_VALS + 2];
  int64_t t = 0;
  for (; go && t < trips; t++) {
    if (t >= MAX_STEPS)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than %d iterations (or a condition "
                     "that never turns false)", MAX_STEPS);
    in[0] = ox_const_i64(c, t);
    in[1] = ox_const_bool(c, true);
    if (!in[0] || !in[1])
      return c->err->status;
    for (int i = 0; i < n_carried; i++)
      in[2 + i] = carried[i];
    TRY(c->import_subgraph(c, body, "the body", in, 2 + n_carried, res, 1 + n_carried + n_scan));
    if (!ox_is_const(res[0]) || res[0]->type.dtype != DY_BOOL)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the body's condition is a run-time value "
                     "(the iteration count would depend on data)");
    go = ((unsigned char *)res[0]->c->data)[0] != 0;
    for (int i = 0; i < n_carried; i++)
      carried[i] = res[1 + i];
    for (int i = 0; i < n_scan; i++)
      steps[i * MAX_STEPS + t] = res[1 + n_carried + i];
  }
  *n = t;
  return DY_OK;
}

/* A Loop with a run-time trip count or condition as a while op (no scan
 * outputs). The carried values are (iter_num, cond, v...). */
static dy_status loop_as_while(ox_ctx *c, const Onnx__GraphProto *body, ox_value *mv,
                               ox_value *cv, int n_v, ox_value **v0) {
  int n = 2 + n_v, blocks[2], saved = c->block;
  ox_value *first[MAX_VALS + 2], *par[MAX_VALS + 2], *res[MAX_VALS + 2];
  dy_type types[MAX_VALS + 2];
  if (mv && (mv->type.dtype != DY_I64 || dy_type_numel(&mv->type) != 1))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "M must be an int64 scalar");
  first[0] = ox_const_i64(c, 0);
  first[1] = cv ? cv : ox_const_bool(c, true);
  if (!first[0] || !first[1])
    return c->err->status;
  if (first[1]->type.dtype != DY_BOOL || dy_type_numel(&first[1]->type) != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "cond must be a one-element bool");
  for (int i = 0; i < n_v; i++)
    first[2 + i] = v0[i];
  for (int i = 0; i < n; i++)
    types[i] = first[i]->type;
  /* condition: cond && iter_num < M */
  TRY(open_block(c, types, n, par, &blocks[0], &saved));
  ox_value *go = par[1];
  if (mv)
    go = ox_where(c, par[1], ox_binary(c, "less", par[0], mv), ox_const_bool(c, false));
  dy_status s = go ? close_block(c, blocks[0], &go, 1, saved) : c->err->status;
  c->block = saved;
  TRY(s);
  /* body: the ONNX body, then iter_num + 1 */
  TRY(open_block(c, types, n, par, &blocks[1], &saved));
  s = c->import_subgraph(c, body, "the body", par, n, res + 1, 1 + n_v);
  if (!s) {
    res[0] = ox_binary(c, "add", par[0], ox_const_i64(c, 1));
    if (res[1] && !dy_type_equal(&res[1]->type, &types[1]) &&
        dy_type_numel(&res[1]->type) == 1)
      res[1] = ox_reshape(c, res[1], types[1].rank, types[1].shape);
    for (int i = 0; i < n && !s; i++) {
      if (!res[i])
        s = c->err->status;
      else if (!dy_type_equal(&res[i]->type, &types[i])) {
        char a[128], b[128];
        s = ox_fail(c, DY_STATUS_UNSUPPORTED,
                    "%s %d is %s before the loop and %s after the body; a run-time "
                    "loop needs one type", i < 2 ? "the condition" : "loop-carried value",
                    i - 2, dy_type_str(&types[i], a, sizeof a),
                    dy_type_str(&res[i]->type, b, sizeof b));
      }
    }
  }
  if (!s)
    s = close_block(c, blocks[1], res, n, saved);
  c->block = saved;
  TRY(s);
  /* a constant M bounds the trips: the loop's own bound (the rows of its
   * gradient's trip stack), else none */
  int64_t bound = 0;
  if (mv && ox_is_const(mv) && ((const int64_t *)mv->c->data)[0] > 0 &&
      ((const int64_t *)mv->c->data)[0] <= DY_WHILE_MAX_ITERATIONS)
    bound = ((const int64_t *)mv->c->data)[0];
  dy_attr attrs[DY_WHILE_NATTRS];
  int n_attrs = dy_while_attrs_put(&(dy_while_attrs){
      .given = DY_GIVEN_ALL, .n_carried = n, .cond_block = blocks[0], .body_block = blocks[1],
      .max_iterations = bound}, attrs);
  return append_control(c, DY_OP_WHILE, blocks, 2, first, n, types, n, 2, attrs, n_attrs);
}

/* Is name among the n names of set? */
static bool named(const char *name, const char *const *set, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(set[i], name) == 0)
      return true;
  return false;
}

/* Does the body's condition output depend on run-time data, when iter_num
 * and cond are constants (as unrolling makes them)? A value is run-time
 * when it is a carried value that is (or becomes, through the body) one,
 * an outer value that is not a constant, or the output of a node with a
 * run-time input or a sub-graph (conservatively). Such a Loop is imported
 * as a while: unrolling would find out only after importing a trip. */
static bool cond_is_run_time(ox_ctx *c, const Onnx__GraphProto *body, ox_value *const *v0,
                             int n_carried) {
  size_t cap = 0;
  for (size_t k = 0; k < body->n_node; k++)
    cap += body->node[k]->n_output;
  const char **dyn = malloc(sizeof *dyn * (cap + (size_t)n_carried + 1));
  if (!dyn || body->n_output < 1 || body->n_input < 2 + (size_t)n_carried) {
    free(dyn);
    return true;
  }
  bool carried_dyn[MAX_VALS] = {0}, grew = true, out = false;
  for (int i = 0; i < n_carried; i++)
    carried_dyn[i] = !ox_is_const(v0[i]);
  while (grew) { /* at most n_carried + 1 rounds: a carried value only turns run-time */
    size_t n = 0;
    for (int i = 0; i < n_carried; i++)
      if (carried_dyn[i])
        dyn[n++] = body->input[2 + i]->name;
    for (size_t k = 0; k < body->n_node; k++) {
      const Onnx__NodeProto *nd = body->node[k];
      bool d = false;
      for (size_t a = 0; a < nd->n_attribute; a++)
        d |= nd->attribute[a]->g != NULL || nd->attribute[a]->n_graphs > 0;
      for (size_t j = 0; j < nd->n_input && !d; j++) {
        const char *in = nd->input[j];
        bool local = false;
        for (size_t q = 0; q < body->n_input && !local; q++)
          local = strcmp(body->input[q]->name, in) == 0;
        for (size_t q = 0; q < k && !local; q++)
          local = named(in, (const char *const *)body->node[q]->output, body->node[q]->n_output);
        d = *in && (named(in, dyn, n) || (!local && !ox_is_const(ox_lookup(c, in))));
      }
      for (size_t j = 0; j < nd->n_output && d; j++)
        dyn[n++] = nd->output[j];
    }
    grew = false;
    for (int i = 0; i < n_carried && 1 + (size_t)i < body->n_output; i++)
      if (!carried_dyn[i] && named(body->output[1 + i]->name, dyn, n))
        carried_dyn[i] = grew = true;
    out = named(body->output[0]->name, dyn, n);
  }
  free(dyn);
  return out;
}

/* Loop(M, cond, v_initial...) attributes: body. Unrolled when M is a
 * constant of at most MAX_STEPS trips and cond a constant (every
 * iteration's condition must then be one); otherwise a while op, when
 * there are no scan outputs. Outputs: the final loop-carried values, then
 * each scan output stacked along a new axis 0. */
static dy_status map_loop(ox_ctx *c) {
  TRY(ox_check_attrs(c, "body"));
  const Onnx__GraphProto *body = graph_attr(c, "body");
  ox_value *mv = ox_in(c, 0), *cv = ox_in(c, 1);
  int n_carried = ox_n_in(c) - 2, n_scan = ox_n_out(c) - n_carried;
  if (!body || n_carried < 0 || n_scan < 0 || n_carried > MAX_VALS || n_scan > MAX_VALS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs a body and matching inputs/outputs");
  ox_value *carried[MAX_VALS];
  for (int i = 0; i < n_carried; i++)
    TRY(ox_need_in(c, 2 + i, &carried[i]));
  bool unrolls = mv && ox_is_const(mv) && !mv->sym && (!cv || ox_is_const(cv));
  if (unrolls) {
    const int64_t *m;
    int64_t nm;
    TRY(ox_get_ints(c, mv, "Loop's trip count M", false, &m, &nm));
    unrolls = nm == 1 && m[0] <= MAX_STEPS;
  }
  if (unrolls && n_scan == 0 && cond_is_run_time(c, body, carried, n_carried))
    unrolls = false;
  if (!unrolls && n_scan == 0)
    return loop_as_while(c, body, mv, cv, n_carried, carried);
  int64_t trips = MAX_STEPS + 1;
  if (mv) {
    const int64_t *m;
    int64_t nm;
    TRY(ox_get_ints(c, mv, "Loop's trip count M", false, &m, &nm));
    if (nm != 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "M must be a scalar");
    trips = m[0];
  }
  bool go = true;
  if (cv) {
    if (!ox_is_const(cv))
      return ox_get_ints(c, cv, "Loop's condition", false, NULL, NULL);
    go = ((unsigned char *)cv->c->data)[0] != 0;
  }
  ox_value **steps = calloc((size_t)n_scan * MAX_STEPS + 1, sizeof *steps);
  if (!steps)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int64_t t = 0;
  dy_status s = unroll(c, body, trips, go, n_carried, carried, n_scan, steps, &t);
  for (int i = 0; i < n_carried && !s; i++)
    s = ox_set_out(c, i, carried[i]);
  for (int i = 0; i < n_scan && !s; i++)
    s = t == 0 ? ox_fail(c, DY_STATUS_UNSUPPORTED, "a scan output of zero iterations")
               : ox_set_or_fail(c, n_carried + i, stack(c, steps + i * MAX_STEPS, (int)t, 0));
  free(steps);
  return s;
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_control[] = {
    {"If", map_if},
    {"Scan", map_scan},
    {"Loop", map_loop},
    {NULL, NULL},
};
