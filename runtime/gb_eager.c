/* gb_eager.c - the eager builder of dy_grad.h: emitting an op runs it at
 * once (dy_apply), so a gradient rule, a loss or an optimizer written
 * against dy_gb computes eagerly with the very ops the Program builder
 * would append. Through dy_apply an emitted op is also recorded by an
 * active trace (static mode, to_static), so a loss built this way in a
 * traced forward lands in the Program.
 *
 * Ownership: the builder opens a scope when it starts and holds one
 * reference per value; dy_gb_eager_free ends that scope and drops its
 * references. Keep a value past it with dy_keep(dy_gb_eager_tensor(b, v)).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

static int add_value(dy_gb *b, dy_tensor *t) {
  dy_gb_eager_state *st = b->user;
  if (!t)
    return -1;
  if (st->n == st->cap) {
    int cap = st->cap ? 2 * st->cap : 32;
    dy_tensor **v = realloc(st->vals, sizeof *v * (size_t)cap);
    if (!v)
      return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    st->vals = v;
    st->cap = cap;
  }
  st->vals[st->n] = dy_keep(t);
  return st->n++;
}

static dy_type eager_type(dy_gb *b, int v) {
  dy_gb_eager_state *st = b->user;
  return st->vals[v]->type;
}

static int eager_emit(dy_gb *b, dy_op_kind kind, const int *in, int n_in,
                      const dy_attr *attrs, int n_attrs) {
  dy_gb_eager_state *st = b->user;
  dy_tensor *t[DY_MAX_OP_INPUTS];
  if (n_in > DY_MAX_OP_INPUTS)
    return dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "%s: too many inputs", dy_op_name(kind));
  for (int i = 0; i < n_in; i++)
    t[i] = st->vals[in[i]];
  dy_srcloc loc = b->fwd ? b->fwd->loc : st->loc;
  dy_tensor *out = dy_apply(kind, t, n_in, attrs, n_attrs, loc);
  if (!out) {
    const dy_error *e = dy_last_error();
    return dy_gb_fail(b, e ? e->status : DY_STATUS_INTERNAL, "%s",
                      e ? e->msg : "an op failed");
  }
  return add_value(b, out);
}

static int eager_constant(dy_gb *b, dy_dtype dtype, double v) {
  union { float f; int64_t i; uint8_t b; } d;
  if (dtype == DY_F32)
    d.f = (float)v;
  else if (dtype == DY_I64)
    d.i = (int64_t)v;
  else
    d.b = v != 0;
  dy_tensor *t = dy_tensor_from_data(dtype, 0, NULL, &d);
  if (!t)
    return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return add_value(b, t);
}

void dy_gb_eager(dy_gb *b, dy_gb_eager_state *st, dy_srcloc loc, dy_error *err) {
  *st = (dy_gb_eager_state){.loc = loc};
  *b = (dy_gb){.emit = eager_emit, .constant = eager_constant, .type = eager_type,
               .err = err, .user = st};
  dy_scope_begin();
}

int dy_gb_eager_value(dy_gb *b, dy_tensor *t) {
  if (!t)
    return dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT, "a NULL tensor");
  return add_value(b, t);
}

dy_tensor *dy_gb_eager_tensor(dy_gb *b, int v) {
  dy_gb_eager_state *st = b->user;
  return v >= 0 && v < st->n ? st->vals[v] : NULL;
}

void dy_gb_eager_free(dy_gb *b) {
  dy_gb_eager_state *st = b->user;
  dy_scope_end();
  for (int i = 0; i < st->n; i++)
    dy_tensor_free(st->vals[i]);
  free(st->vals);
  st->vals = NULL;
  st->n = st->cap = 0;
}
