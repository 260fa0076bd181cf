/* ops.c - the eager / tracing entry points.
 *
 * Every public op (dy_add, dy_matmul, ...) is a thin wrapper over dy_apply,
 * the one driver: it propagates a NULL input (an earlier error), infers the
 * output type with ir/'s dy_infer_<name>, allocates the output, runs
 * dy_kernel_<name> (or, for view ops, shares the input's data; for a
 * symbolic input, computes nothing), and records the op into the active
 * trace. Errors go to the thread-local slot (dy_last_error) with the source
 * line of the user's call.
 */
#include <math.h>
#include <string.h>

#include "dy_runtime_internal.h"

dy_tensor *dy_apply(dy_op_kind kind, dy_tensor *const *in, int n_in,
                    const dy_attr *attrs, int n_attrs, dy_srcloc loc) {
  enum { MAX_IN = 16 };
  const char *name = dy_op_name(kind);
  if (n_in > MAX_IN)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "%s: too many inputs", name);
  bool symbolic = false;
  dy_type in_t[MAX_IN];
  for (int i = 0; i < n_in; i++) {
    if (!in[i])  /* an inner call failed; its error is kept (first wins) */
      return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "%s: input %d is NULL", name, i);
    in_t[i] = in[i]->type;
    symbolic |= in[i]->data == NULL;
  }
  dy_op op = {.id = -1, .kind = kind, .attrs = (dy_attr *)attrs,
              .n_attrs = n_attrs, .loc = loc};
  dy_type out_t;
  dy_error err = {0};
  if (dy_infer(&op, in_t, n_in, &out_t, &err) != DY_OK)
    return dy_fail_with(&err);

  dy_tensor *out;
  if (symbolic)
    out = dy_tensor_symbolic(&out_t);
  else if (dy_op_has(&op, DY_OPF_VIEW))
    out = dy_tensor_view(in[0], &out_t);
  else
    out = dy_tensor_new(out_t.dtype, out_t.rank, out_t.shape);
  if (!out)
    return NULL;
  if (!symbolic && !dy_op_has(&op, DY_OPF_VIEW) &&
      dy_kernel_table[kind](&op, in, n_in, &out, &err) != DY_OK)
    return dy_fail_with(&err);

  dy_trace_state *ts = dy_trace_active();
  if (ts && !dy_trace_record(ts, kind, in, n_in, attrs, n_attrs, loc, out))
    return NULL;
  return out;
}

#define BINARY(name, KIND)                                           \
  dy_tensor *dy_##name##_at(dy_tensor *a, dy_tensor *b, dy_srcloc loc) { \
    return dy_apply(DY_OP_##KIND, (dy_tensor *const[]){a, b}, 2, NULL, 0, loc); \
  }
BINARY(add, ADD)
BINARY(sub, SUB)
BINARY(mul, MUL)
BINARY(div, DIV)

#define UNARY(name, KIND)                                          \
  dy_tensor *dy_##name##_at(dy_tensor *x, dy_srcloc loc) {         \
    return dy_apply(DY_OP_##KIND, (dy_tensor *const[]){x}, 1, NULL, 0, loc); \
  }
UNARY(relu, RELU)
UNARY(sigmoid, SIGMOID)
UNARY(tanh, TANH)

dy_tensor *dy_matmul_at(dy_tensor *x, dy_tensor *y, bool transpose_x,
                        bool transpose_y, dy_srcloc loc) {
  dy_attr attrs[] = {DY_ATTR_I("transpose_x", transpose_x),
                     DY_ATTR_I("transpose_y", transpose_y)};
  return dy_apply(DY_OP_MATMUL, (dy_tensor *const[]){x, y}, 2, attrs, 2, loc);
}

dy_tensor *dy_softmax_at(dy_tensor *x, int axis, dy_srcloc loc) {
  dy_attr attrs[] = {DY_ATTR_I("axis", axis)};
  return dy_apply(DY_OP_SOFTMAX, (dy_tensor *const[]){x}, 1, attrs, 1, loc);
}

dy_tensor *dy_reshape_at(dy_tensor *x, int rank, const int64_t *shape,
                         dy_srcloc loc) {
  dy_attr attrs[] = {DY_ATTR_IS("shape", shape, rank)};
  return dy_apply(DY_OP_RESHAPE, (dy_tensor *const[]){x}, 1, attrs, 1, loc);
}

dy_tensor *dy_flatten_at(dy_tensor *x, int start_axis, int stop_axis,
                         dy_srcloc loc) {
  dy_attr attrs[] = {DY_ATTR_I("start_axis", start_axis),
                     DY_ATTR_I("stop_axis", stop_axis)};
  return dy_apply(DY_OP_FLATTEN, (dy_tensor *const[]){x}, 1, attrs, 2, loc);
}

dy_tensor *dy_transpose_at(dy_tensor *x, int rank, const int64_t *perm,
                           dy_srcloc loc) {
  dy_attr attrs[] = {DY_ATTR_IS("perm", perm, rank)};
  return dy_apply(DY_OP_TRANSPOSE, (dy_tensor *const[]){x}, 1, attrs, 1, loc);
}

dy_tensor *dy_full_at(dy_dtype dtype, int rank, const int64_t *shape,
                      double value, dy_srcloc loc) {
  dy_attr attrs[] = {DY_ATTR_IS("shape", shape, rank), DY_ATTR_F("value", value),
                     DY_ATTR_I("dtype", dtype)};
  return dy_apply(DY_OP_FULL, NULL, 0, attrs, 3, loc);
}

double dy_item_at(dy_tensor *t, bool *ok, dy_srcloc loc) {
  *ok = false;
  if (!t)
    return 0;
  dy_trace_state *ts = dy_trace_active();
  if (!t->data) {
    dy_fail(DY_STATUS_SYMBOLIC, loc,
            "dy_item: the value of a symbolic tensor is unknown in static mode; "
            "a branch on it cannot be baked into the Program");
    return 0;
  }
  if (ts && dy_trace_depends_on_input(ts, t)) {
    dy_fail(DY_STATUS_SYMBOLIC, loc,
            "dy_item: reading a traced value that depends on the inputs would "
            "bake this run's value into the Program");
    return 0;
  }
  if (dy_tensor_numel(t) != 1) {
    dy_fail(DY_STATUS_SHAPE_MISMATCH, loc, "dy_item: tensor has %lld elements, not 1",
            (long long)dy_tensor_numel(t));
    return 0;
  }
  *ok = true;
  switch (t->type.dtype) {
  case DY_F32: return ((const float *)t->data)[0];
  case DY_I64: return (double)((const int64_t *)t->data)[0];
  default: return ((const unsigned char *)t->data)[0];
  }
}
