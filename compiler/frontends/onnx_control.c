/* onnx_control.c - ONNX's control flow, for the cases a static-shape
 * compiler can express without control flow in the Program:
 *
 *   If    both branches are imported (ONNX ops have no side effects) and
 *         each output is where(cond, then, else); a constant cond picks
 *         one branch. The branches' outputs must have one type.
 *   Scan  unrolled: the body is imported once per step of the (static)
 *         scan axis, the state threaded through, the scan outputs
 *         concatenated. Opset 8's batch dimension is unrolled too.
 *   Loop  unrolled, when the trip count is a constant and the condition
 *         stays a constant (true, until the body makes it false): the body
 *         is imported once per iteration with iter_num a constant.
 *
 * Each sub-graph is imported inline by ox_import_subgraph (onnx.c), names
 * of the enclosing graph visible, its own names scoped to one import.
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
    TRY(ox_import_subgraph(c, t ? tg : eg, t ? "then_branch" : "else_branch", NULL, 0, tv, n));
    for (int i = 0; i < n; i++)
      TRY(ox_set_out(c, i, tv[i]));
    return DY_OK;
  }
  TRY(ox_import_subgraph(c, tg, "then_branch", NULL, 0, tv, n));
  TRY(ox_import_subgraph(c, eg, "else_branch", NULL, 0, ev, n));
  ox_value *cs = cond->type.rank ? ox_reshape(c, cond, 0, NULL) : cond;
  for (int i = 0; i < n; i++) {
    if (!dy_type_equal(&tv[i]->type, &ev[i]->type)) {
      char a[128], b[128];
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "output %d is %s in then_branch and %s in else_branch; a run-time "
                     "condition needs one type", i, dy_type_str(&tv[i]->type, a, sizeof a),
                     dy_type_str(&ev[i]->type, b, sizeof b));
    }
    TRY(ox_set_or_fail(c, i, ox_where(c, cs, tv[i], ev[i])));
  }
  return DY_OK;
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
      s = ox_import_subgraph(c, body, "the body", in, n_state + n_scan, res, n_state + n_sout);
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
  int64_t B = state[0] ? state[0]->type.shape[0] : -1;
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
    TRY(ox_import_subgraph(c, body, "the body", in, 2 + n_carried, res, 1 + n_carried + n_scan));
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

/* Loop(M, cond, v_initial...) attributes: body. The trip count M must be
 * a constant (or absent: then the condition must turn false within
 * MAX_STEPS iterations), cond and every iteration's condition constants.
 * Outputs: the final loop-carried values, then each scan output stacked
 * along a new axis 0. */
static dy_status map_loop(ox_ctx *c) {
  TRY(ox_check_attrs(c, "body"));
  const Onnx__GraphProto *body = graph_attr(c, "body");
  ox_value *mv = ox_in(c, 0), *cv = ox_in(c, 1);
  int n_carried = ox_n_in(c) - 2, n_scan = ox_n_out(c) - n_carried;
  if (!body || n_carried < 0 || n_scan < 0 || n_carried > MAX_VALS || n_scan > MAX_VALS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs a body and matching inputs/outputs");
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
  ox_value *carried[MAX_VALS];
  for (int i = 0; i < n_carried; i++)
    TRY(ox_need_in(c, 2 + i, &carried[i]));
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
