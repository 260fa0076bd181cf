/* onnx.c - the ONNX frontend: a ModelProto (onnx.proto, read with the
 * protobuf-c code generated at build time) to a verified dy_program.
 *
 * How it works. The model is unpacked whole; the default domain's opset
 * (1..18) picks per-version attribute defaults. Initializers become
 * constants (onnx_tensor.c), graph inputs that are not initializers become feeds (the
 * batch's dim_param, or a dim with no value, is the dynamic batch: -1; any
 * other dim_param a size symbol, ir/dims.c). The nodes
 * are then imported in order, each by its mapper (onnx_ops.c, onnx_math.c,
 * onnx_shape.c, onnx_nn.c, onnx_image.c, onnx_seq.c, onnx_control.c), which
 * builds ops through ox_op() (onnx_op.c): an op whose inputs are all
 * constants is computed at once with the runtime's reference kernels (so a Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape chain on static shapes folds
 * away, and its result becomes Reshape's attribute), anything else is
 * appended to the Program. Constants become persistable vars only when a
 * run-time op reads them. The graph's outputs become fetches under their
 * ONNX names. The result is verified. Sub-graphs (If branches, Loop and
 * Scan bodies) are imported inline by ox_import_subgraph, their names
 * scoped to one import, which is how onnx_control.c unrolls them.
 *
 * Symbolic sizes inside shape arithmetic: Shape of a tensor with symbolic
 * dims gives a "shape value" whose entries hold them (onnx_internal.h);
 * data-movement ops carry them, Add/Sub/Mul/Div compute size expressions
 * (batch * heads), Reshape maps them back to 0 (copy the input's dim) or
 * -1 (infer), Expand to -1 (keep), Slice's end to "the whole axis". Every
 * other use is one clear error naming the node.
 *
 * Errors. Every failure is one message naming the model and, inside the
 * graph, the node (index, name, op type): DY_STATUS_FORMAT for a file that
 * is not ONNX or is truncated, DY_STATUS_UNSUPPORTED for an op, dtype,
 * attribute or opset we do not implement.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* errors                                                              */
/* ------------------------------------------------------------------ */

dy_status ox_fail(ox_ctx *c, dy_status status, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->node && c->node->name && *c->node->name)
    return dy_error_set(c->err, status, "%s: node %d '%s' (%s): %s", c->path,
                        c->node_index, c->node->name, c->node->op_type, msg);
  if (c->node)
    return dy_error_set(c->err, status, "%s: node %d (%s): %s", c->path, c->node_index,
                        c->node->op_type ? c->node->op_type : "?", msg);
  return dy_error_set(c->err, status, "%s: %s", c->path, msg);
}

/* ------------------------------------------------------------------ */
/* the value table                                                     */
/* ------------------------------------------------------------------ */

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Slots hold (name, value) pairs: a value may be bound under two names. */
typedef struct {
  const char *name;
  ox_value *v;
} slot;

static slot *slots_of(ox_ctx *c) { return (slot *)c->slots; }

static ox_value *lookup(ox_ctx *c, const char *name) {
  if (!c->n_slots)
    return NULL;
  slot *s = slots_of(c);
  for (size_t i = hash_str(name) & (c->n_slots - 1);; i = (i + 1) & (c->n_slots - 1)) {
    if (!s[i].name)
      return NULL;
    if (strcmp(s[i].name, name) == 0)
      return s[i].v; /* NULL: unbound when a sub-graph's scope closed */
  }
}

static bool bind(ox_ctx *c, const char *name, ox_value *v) {
  if ((c->n_vals + 1) * 2 > c->n_slots) {
    size_t n = c->n_slots ? c->n_slots * 2 : 256;
    slot *ns = calloc(n, sizeof *ns), *os = slots_of(c);
    if (!ns)
      return false;
    for (size_t i = 0; i < c->n_slots; i++) {
      if (!os[i].name)
        continue;
      size_t j = hash_str(os[i].name) & (n - 1);
      while (ns[j].name)
        j = (j + 1) & (n - 1);
      ns[j] = os[i];
    }
    free(os);
    c->slots = (ox_value **)ns;
    c->n_slots = n;
  }
  slot *s = slots_of(c);
  size_t i = hash_str(name) & (c->n_slots - 1);
  while (s[i].name && strcmp(s[i].name, name) != 0)
    i = (i + 1) & (c->n_slots - 1);
  if (!s[i].name) {
    s[i].name = dy_program_strdup(c->p, name);
    if (!s[i].name)
      return false;
    c->n_vals++;
  }
  s[i].v = v;
  return true;
}

/* bind, remembering the name in the innermost open scope (a sub-graph
 * being imported), so that closing the scope unbinds it again. */
static bool bind_scoped(ox_ctx *c, const char *name, ox_value *v) {
  if (c->scope_depth > 0) {
    if (c->n_scoped == c->cap_scoped) {
      size_t n = c->cap_scoped ? c->cap_scoped * 2 : 64;
      const char **a = realloc(c->scoped, n * sizeof *a);
      if (!a)
        return false;
      c->scoped = a;
      c->cap_scoped = n;
    }
    c->scoped[c->n_scoped++] = dy_program_strdup(c->p, name);
  }
  return bind(c, name, v);
}

void ox_free_const(ox_const *k) {
  if (k) {
    free(k->dims);
    free(k->data);
    free(k);
  }
}

ox_value *ox_new_value(ox_ctx *c, const char *name, const dy_type *t) {
  if (c->n_all == c->cap_all) {
    size_t n = c->cap_all ? c->cap_all * 2 : 256;
    ox_value **a = realloc(c->all, n * sizeof *a);
    if (!a)
      return NULL;
    c->all = a;
    c->cap_all = n;
  }
  ox_value *v = calloc(1, sizeof *v);
  if (!v)
    return NULL;
  v->name = name ? dy_program_strdup(c->p, name) : "";
  v->type = *t;
  v->var = -1;
  v->graph_input = -1;
  v->node = c->node ? c->node_serial : -1;
  c->all[c->n_all++] = v;
  return v;
}

static void free_values(ox_ctx *c) {
  for (size_t i = 0; i < c->n_all; i++) {
    ox_free_const(c->all[i]->c);
    free(c->all[i]);
  }
  free(c->all);
  free(c->slots);
  free(c->scoped);
}

bool ox_is_const(const ox_value *v) { return v && v->c && !v->sym; }

size_t ox_type_bytes(const dy_type *t) {
  int64_t b;
  return dy_type_is_static(t) && dy_type_bytes_at(t, 1, &b) ? (size_t)b : 0;
}

void ox_update_sym(ox_value *v) {
  v->sym = false;
  if (!v->c || !v->c->dims)
    return;
  int64_t n = dy_type_numel(&v->type);
  for (int64_t i = 0; i < n; i++)
    if (v->c->dims[i])
      v->sym = true;
}

dy_status ox_set_dim(ox_ctx *c, ox_value *v, int64_t i, int64_t d) {
  int64_t n = dy_type_numel(&v->type);
  if (!v->c || v->type.dtype != DY_I64 || i < 0 || i >= n)
    return ox_fail(c, DY_STATUS_INTERNAL, "setting entry %lld of '%s' to a size",
                   (long long)i, v->name ? v->name : "");
  if (d >= 0) {
    ((int64_t *)v->c->data)[i] = d;
    if (v->c->dims)
      v->c->dims[i] = 0;
    ox_update_sym(v);
    return DY_OK;
  }
  if (!v->c->dims && !(v->c->dims = calloc((size_t)n, sizeof *v->c->dims)))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  v->c->dims[i] = d;
  ((int64_t *)v->c->data)[i] = 0;
  v->sym = true;
  return DY_OK;
}

ox_value *ox_like(ox_ctx *c, int rank, const int64_t *dims) {
  for (size_t i = 0; i < c->n_all; i++) {
    ox_value *v = c->all[i];
    if (v->var < 0 || v->type.rank != rank)
      continue;
    bool same = true;
    for (int d = 0; d < rank; d++)
      same &= v->type.shape[d] == dims[d];
    if (same)
      return v;
  }
  return NULL;
}

int64_t ox_sym_dim(const ox_value *v, int64_t i) {
  return v && v->c && v->c->dims && i >= 0 && i < dy_type_numel(&v->type) ? v->c->dims[i] : 0;
}

int64_t ox_entry(const ox_value *v, int64_t i) {
  int64_t d = ox_sym_dim(v, i);
  return d ? d : ((const int64_t *)v->c->data)[i];
}

ox_value *ox_new_const(ox_ctx *c, dy_dtype dt, int rank, const int64_t *shape,
                       const void *data) {
  dy_type t = {.dtype = dt, .rank = rank};
  for (int i = 0; i < rank; i++)
    t.shape[i] = shape[i];
  dy_error te = {0};
  if (dy_type_check(&t, NULL, "a constant", &te) || !dy_type_is_static(&t)) {
    ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s", te.msg[0] ? te.msg : "a constant of a dynamic shape");
    return NULL;
  }
  ox_value *v = ox_new_value(c, NULL, &t);
  ox_const *k = calloc(1, sizeof *k);
  size_t nb = ox_type_bytes(&t);
  if (!v || !k || !(k->data = malloc(nb ? nb : 1))) {
    free(k);
    ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  k->type = t;
  if (data)
    memcpy(k->data, data, nb);
  else
    memset(k->data, 0, nb);
  v->c = k;
  ox_update_sym(v);
  return v;
}

ox_value *ox_const_f32(ox_ctx *c, float x) { return ox_new_const(c, DY_F32, 0, NULL, &x); }
ox_value *ox_const_i64(ox_ctx *c, int64_t x) { return ox_new_const(c, DY_I64, 0, NULL, &x); }
ox_value *ox_const_bool(ox_ctx *c, bool x) {
  unsigned char b = x;
  return ox_new_const(c, DY_BOOL, 0, NULL, &b);
}
ox_value *ox_const_i64s(ox_ctx *c, int n, const int64_t *x) {
  int64_t shape[1] = {n};
  return ox_new_const(c, DY_I64, 1, shape, x);
}

/* ------------------------------------------------------------------ */
/* node inputs, outputs, attributes                                    */
/* ------------------------------------------------------------------ */

int ox_n_in(ox_ctx *c) { return (int)c->node->n_input; }
int ox_n_out(ox_ctx *c) { return (int)c->node->n_output; }

ox_value *ox_in(ox_ctx *c, int i) {
  if (i < 0 || i >= (int)c->node->n_input || !c->node->input[i][0])
    return NULL;
  return lookup(c, c->node->input[i]);
}

bool ox_out_wanted(ox_ctx *c, int i) {
  return i < (int)c->node->n_output && c->node->output[i][0];
}

dy_status ox_set_out(ox_ctx *c, int i, ox_value *v) {
  if (!ox_out_wanted(c, i))
    return DY_OK;
  const char *name = c->node->output[i];
  if (lookup(c, name))
    return ox_fail(c, DY_STATUS_FORMAT, "output '%s' is already defined (the graph is not SSA)",
                   name);
  /* a run-time value this node made gets the ONNX name */
  if (v->var >= 0 && v->node == c->node_serial && v->graph_input < 0 &&
      !c->p->vars[v->var]->persistable && dy_program_find_var(c->p, name) < 0) {
    const char *nm = dy_program_strdup(c->p, name);
    if (!nm)
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    c->p->vars[v->var]->name = nm;
    v->node = -2; /* named now: never renamed again */
  }
  if (!bind_scoped(c, name, v))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

const Onnx__AttributeProto *ox_attr(ox_ctx *c, const char *name) {
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (c->node->attribute[i]->name && strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i];
  return NULL;
}

int64_t ox_attr_i(ox_ctx *c, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a = ox_attr(c, name);
  return a && a->has_i ? a->i : dflt;
}

float ox_attr_f(ox_ctx *c, const char *name, float dflt) {
  const Onnx__AttributeProto *a = ox_attr(c, name);
  if (!a)
    return dflt;
  if (a->has_f)
    return a->f;
  if (a->has_i)
    return (float)a->i;
  return dflt;
}

const int64_t *ox_attr_ints(ox_ctx *c, const char *name, int *n) {
  const Onnx__AttributeProto *a = ox_attr(c, name);
  if (!a) {
    *n = -1;
    return NULL;
  }
  *n = (int)a->n_ints;
  return a->ints;
}

const float *ox_attr_floats(ox_ctx *c, const char *name, int *n) {
  const Onnx__AttributeProto *a = ox_attr(c, name);
  if (!a) {
    *n = -1;
    return NULL;
  }
  *n = (int)a->n_floats;
  return a->floats;
}

const char *ox_attr_s(ox_ctx *c, const char *name, const char *dflt, char *buf,
                      size_t n) {
  const Onnx__AttributeProto *a = ox_attr(c, name);
  if (!a || !a->has_s) {
    snprintf(buf, n, "%s", dflt);
  } else {
    size_t k = a->s.len < n - 1 ? a->s.len : n - 1;
    memcpy(buf, a->s.data, k);
    buf[k] = 0;
  }
  return buf;
}

/* Attributes that are sizes, counts or extents, by name, with their least
 * value: every int in them must lie in [lo, DY_MAX_NUMEL] before a mapper
 * multiplies, divides or loops by it (a blocksize of 2^32 squared is 0;
 * an LRN size of 2^31 - 1 unrolled is a hang). */
static const struct {
  const char *name;
  int64_t lo;
} size_attrs[] = {
    {"blocksize", 1},   {"size", 1},           {"hidden_size", 1},     {"group", 1},
    {"kernel_shape", 1}, {"strides", 1},       {"dilations", 1},       {"num_outputs", 1},
    {"split", 0},       {"output_padding", 0}, {"output_shape", 0},
    {"pads", -DY_MAX_NUMEL}, /* Pad (opset < 11) crops with negative pads */
};

static dy_status check_size_attr(ox_ctx *c, const Onnx__AttributeProto *a) {
  for (size_t k = 0; k < sizeof size_attrs / sizeof *size_attrs; k++) {
    if (strcmp(a->name, size_attrs[k].name) != 0)
      continue;
    /* what ox_attr_i and ox_attr_ints read: i when has_i, every ints entry */
    for (size_t j = 0; j < a->n_ints + (a->has_i ? 1 : 0); j++) {
      bool list = j < a->n_ints;
      int64_t v = list ? a->ints[j] : a->i;
      if (v < size_attrs[k].lo || v > DY_MAX_NUMEL)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT,
                       "attribute '%s'%s is %lld, outside [%lld, %lld]", a->name,
                       list ? "'s entry" : "", (long long)v,
                       (long long)size_attrs[k].lo, (long long)DY_MAX_NUMEL);
    }
  }
  return DY_OK;
}

dy_status ox_check_attrs(ox_ctx *c, const char *known) {
  for (size_t i = 0; i < c->node->n_attribute; i++) {
    const char *nm = c->node->attribute[i]->name ? c->node->attribute[i]->name : "";
    size_t l = strlen(nm);
    bool ok = false;
    for (const char *s = known; *s && !ok;) {
      while (*s == ' ')
        s++;
      const char *e = s;
      while (*e && *e != ' ')
        e++;
      ok = (size_t)(e - s) == l && l > 0 && strncmp(s, nm, l) == 0;
      s = e;
    }
    if (c->node->attribute[i]->ref_attr_name && *c->node->attribute[i]->ref_attr_name)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "attribute '%s' refers to a function attribute",
                     nm);
    if (!ok)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "attribute '%s' is not supported", nm);
    TRY(check_size_attr(c, c->node->attribute[i]));
  }
  return DY_OK;
}

dy_status ox_axis(ox_ctx *c, int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= (rank ? rank : 1))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "axis %lld out of range for rank %d",
                   (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return DY_OK;
}

dy_status ox_set_or_fail(ox_ctx *c, int i, ox_value *v) {
  if (!v)
    return c->err->status ? c->err->status : DY_STATUS_INTERNAL;
  return ox_set_out(c, i, v);
}

dy_status ox_need_in(ox_ctx *c, int i, ox_value **v) {
  *v = ox_in(c, i);
  if (!*v)
    return ox_fail(c, DY_STATUS_FORMAT, "input %d is missing", i);
  return DY_OK;
}

ox_value *ox_zero_like(ox_ctx *c, dy_dtype dt) {
  if (dt == DY_F32)
    return ox_const_f32(c, 0.0f);
  if (dt == DY_I64)
    return ox_const_i64(c, 0);
  return ox_const_bool(c, false);
}

dy_status ox_need_f32(ox_ctx *c, const ox_value *v) {
  if (v->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs float32, got %s",
                   dy_dtype_name(v->type.dtype));
  return DY_OK;
}

/* The graph input (its value) that run-time var `var` depends on, or
 * NULL: a depth-first walk up the ops writing it. */
static ox_value *feeding_input(ox_ctx *c, int var, int depth) {
  if (var < 0 || depth > 64)
    return NULL;
  if (c->p->vars[var]->feed_index >= 0) {
    for (size_t i = 0; i < c->n_all; i++)
      if (c->all[i]->var == var && c->all[i]->graph_input >= 0)
        return c->all[i];
    return NULL;
  }
  const dy_op *op = dy_program_def(c->p, var, NULL, NULL);
  for (int i = 0; op && i < op->n_inputs; i++) {
    ox_value *g = feeding_input(c, op->inputs[i], depth + 1);
    if (g)
      return g;
  }
  return NULL;
}

/* Record that graph input v (or, for a value computed at run time, a
 * graph input it depends on) must be known at compile time: a caller may
 * bind it and load again (dy_onnx_info). */
static void needs_const(ox_ctx *c, ox_value *v) {
  if (v && v->graph_input < 0 && v->var >= 0)
    v = feeding_input(c, v->var, 0);
  if (c->info && v && v->graph_input >= 0 && c->info->needs_const_input < 0) {
    c->info->needs_const_input = v->graph_input;
    snprintf(c->info->needs_const_name, sizeof c->info->needs_const_name, "%s", v->name);
  }
}

dy_status ox_get_ints(ox_ctx *c, ox_value *v, const char *what, bool allow_sym,
                      const int64_t **vals, int64_t *n) {
  if (!v || !v->c) {
    needs_const(c, v);
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s '%s' must be a constant (an initializer or computed from "
                   "constants and static shapes), not a run-time value",
                   what, v ? v->name : "");
  }
  if (v->sym && !allow_sym)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s '%s' depends on a dynamic size (a shape value)", what, v->name);
  if (v->type.dtype == DY_I32 || v->type.dtype == DY_I8 || v->type.dtype == DY_U8) {
    /* ONNX allows int32 indices and the like: widen a copy (ctx-owned) */
    int64_t m = dy_type_numel(&v->type);
    ox_value *w = ox_new_const(c, DY_I64, v->type.rank, v->type.shape, NULL);
    if (!w)
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < m; i++)
      ((int64_t *)w->c->data)[i] = dy_quant_value(v->type.dtype, v->c->data, i);
    v = w;
  }
  if (v->type.dtype != DY_I64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s '%s' must be int64, not %s", what,
                   v->name, dy_dtype_name(v->type.dtype));
  *vals = v->c->data;
  *n = dy_type_numel(&v->type);
  return DY_OK;
}

dy_status ox_get_floats(ox_ctx *c, ox_value *v, const char *what,
                        const float **vals, int64_t *n) {
  if (!v || !v->c) {
    needs_const(c, v);
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s '%s' must be a constant, not a run-time value", what,
                   v ? v->name : "");
  }
  if (v->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s '%s' must be float32", what, v->name);
  *vals = v->c->data;
  *n = dy_type_numel(&v->type);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* the model                                                           */
/* ------------------------------------------------------------------ */

/* Dim i of a graph input's shape: its dim_param, "" when it has none (a
 * dim without a value), NULL when it is static. */
static const char *dim_param_of(const Onnx__TensorShapeProto__Dimension *d) {
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
    return NULL;
  return d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param
             ? d->dim_param
             : "";
}

/* Which dim_param is the batch: one named like a batch ("batch",
 * "batch_size", "N", ...), else the first on a dim 0, else the first met.
 * NULL when the inputs have none. */
static const char *batch_param(const Onnx__GraphProto *g) {
  static const char *const names[] = {"batch", "batch_size", "batchsize", "n", "b", "bsz",
                                      "N", "B", "Batch", "BATCH"};
  const char *first0 = NULL, *first = NULL;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__TypeProto *tp = g->input[i]->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
        !tp->tensor_type->shape)
      continue;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    for (size_t d = 0; d < sh->n_dim; d++) {
      const char *pm = dim_param_of(sh->dim[d]);
      if (!pm || !*pm)
        continue;
      for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (strcmp(pm, names[k]) == 0)
          return pm;
      if (!first0 && d == 0)
        first0 = pm;
      if (!first)
        first = pm;
    }
  }
  return first0 ? first0 : first;
}

/* A dim_param as a size symbol's name: [A-Za-z0-9_] kept, any other
 * character '_', a leading digit prefixed with "d_", at most 31 chars. */
static void symbol_name(const char *param, char *buf, size_t n) {
  size_t k = 0;
  if (*param >= '0' && *param <= '9')
    k = (size_t)snprintf(buf, n, "d_");
  for (const char *q = param; *q && k + 1 < n && k + 1 < DY_SYM_NAME_MAX; q++)
    buf[k++] = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')
                   ? *q
                   : '_';
  buf[k] = '\0';
}

/* A graph input's type: elem type and dims. The batch's dim_param (and a
 * dim with no value) is the batch, -1; every other dim_param a size
 * symbol of its (sanitised) name, the same name the same symbol. */
static dy_status input_type(ox_ctx *c, const Onnx__ValueInfoProto *vi,
                            const char *batch_name, dy_type *t) {
  const char *nm = vi->name ? vi->name : "";
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph input '%s' is not a tensor (sequences, maps and optionals "
                   "are not supported)", nm);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int et = tt->has_elem_type ? tt->elem_type : 0;
  if (!dy_onnx_dtype(et, &t->dtype))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph input '%s' has dtype %s (dy2stc has float32, int64, int32, int8, uint8 and bool)",
                   nm, ox_dtype_name(et));
  if (!tt->shape)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph input '%s' has no shape", nm);
  if (tt->shape->n_dim > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph input '%s' has rank %zu (at most %d)",
                   nm, tt->shape->n_dim, DY_MAX_DIMS);
  t->rank = (int)tt->shape->n_dim;
  for (int i = 0; i < t->rank; i++) {
    const char *param = dim_param_of(tt->shape->dim[i]);
    if (!param) {
      t->shape[i] = tt->shape->dim[i]->dim_value;
      continue;
    }
    if (!*param || (batch_name && strcmp(param, batch_name) == 0)) {
      t->shape[i] = -1;
      continue;
    }
    char sn[DY_SYM_NAME_MAX];
    symbol_name(param, sn, sizeof sn);
    if (strcmp(sn, "batch") == 0)
      snprintf(sn, sizeof sn, "batch_");
    dy_status s = dy_program_declare_sym(c->p, sn, 0, c->err);
    if (s)
      return ox_fail(c, s, "graph input '%s': dim_param '%s': %s", nm, param, c->err->msg);
    t->shape[i] = dy_dim_sym(sn);
  }
  return DY_OK;
}

/* The declared dtype (and static dims) of a graph output against ours. */
static dy_status check_output(ox_ctx *c, const Onnx__ValueInfoProto *vi,
                              const ox_value *v) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return DY_OK;
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  dy_dtype dt;
  if (tt->has_elem_type && tt->elem_type && !dy_onnx_dtype(tt->elem_type, &dt))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph output '%s' has dtype %s (dy2stc has float32, int64, int32, int8, uint8 and bool)",
                   vi->name, ox_dtype_name(tt->elem_type));
  if (tt->has_elem_type && tt->elem_type && dt != v->type.dtype)
    return ox_fail(c, DY_STATUS_INTERNAL, "graph output '%s' is declared %s, computed %s",
                   vi->name, ox_dtype_name(tt->elem_type), dy_dtype_name(v->type.dtype));
  if (tt->shape) {
    char a[128];
    bool ok = (int)tt->shape->n_dim == v->type.rank;
    for (int i = 0; ok && i < v->type.rank; i++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
          v->type.shape[i] >= 0)
        ok = d->dim_value == v->type.shape[i];
    }
    if (!ok)
      return ox_fail(c, DY_STATUS_SHAPE_MISMATCH,
                     "graph output '%s': computed %s, which does not match the declared "
                     "shape", vi->name, dy_type_str(&v->type, a, sizeof a));
  }
  return DY_OK;
}

ox_map_fn ox_find_mapper(const char *op_type) {
  static const ox_mapper *const tables[] = {ox_mappers_ops, ox_mappers_math,
                                            ox_mappers_shape, ox_mappers_nn,
                                            ox_mappers_image, ox_mappers_seq,
                                            ox_mappers_control, ox_mappers_quant};
  for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
    for (const ox_mapper *m = tables[t]; m->op_type; m++)
      if (strcmp(m->op_type, op_type) == 0)
        return m->map;
  return NULL;
}

static dy_status import_node(ox_ctx *c) {
  const Onnx__NodeProto *n = c->node;
  if (!n->op_type)
    return ox_fail(c, DY_STATUS_FORMAT, "node without an op type");
  if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "domain '%s' is not supported", n->domain);
  for (size_t i = 0; i < n->n_input; i++)
    if (n->input[i][0] && !lookup(c, n->input[i]))
      return ox_fail(c, DY_STATUS_FORMAT,
                     "input '%s' is not defined before use (not an initializer, graph "
                     "input or earlier node output)", n->input[i]);
  ox_map_fn f = ox_find_mapper(n->op_type);
  if (!f)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "op type %s is not supported", n->op_type);
  dy_status s = f(c);
  if (s)
    return s;
  for (size_t i = 0; i < n->n_output; i++)
    if (n->output[i][0] && !lookup(c, n->output[i]))
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "output %zu ('%s') is not supported", i,
                     n->output[i]);
  return DY_OK;
}

dy_status ox_import_subgraph(ox_ctx *c, const Onnx__GraphProto *g, const char *what,
                             ox_value *const *in, int n_in, ox_value **out, int n_out) {
  dy_status s = DY_OK;
  if ((int)g->n_input != n_in || (int)g->n_output != n_out)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT,
                   "%s has %zu inputs and %zu outputs, the node gives %d and takes %d", what,
                   g->n_input, g->n_output, n_in, n_out);
  if (g->n_sparse_initializer || c->scope_depth >= 8)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s: sparse initializers or sub-graphs nested "
                   "deeper than 8", what);
  /* the outer node, restored afterwards */
  const Onnx__NodeProto *node = c->node;
  int index = c->node_index;
  dy_srcloc loc = c->loc;
  size_t mark = c->n_scoped;
  c->scope_depth++;
  for (size_t i = 0; !s && i < g->n_initializer; i++) {
    ox_const *k;
    char w[300];
    snprintf(w, sizeof w, "%s: %s: initializer '%s'", c->path, what,
             g->initializer[i]->name ? g->initializer[i]->name : "");
    if ((s = ox_tensor_convert(g->initializer[i], w, c->dir, &k, c->err)))
      break;
    ox_value *v = ox_new_value(c, g->initializer[i]->name, &k->type);
    if (!v) {
      ox_free_const(k);
      s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    v->c = k;
    ox_update_sym(v);
    if (!g->initializer[i]->name || !bind_scoped(c, g->initializer[i]->name, v))
      s = ox_fail(c, DY_STATUS_FORMAT, "%s: an initializer without a name", what);
  }
  for (int i = 0; !s && i < n_in; i++)
    if (!g->input[i]->name || !bind_scoped(c, g->input[i]->name, in[i]))
      s = ox_fail(c, DY_STATUS_FORMAT, "%s: input %d has no name", what, i);
  for (size_t i = 0; !s && i < g->n_node; i++) {
    c->node = g->node[i];
    c->node_index = (int)i;
    c->node_serial++;
    if ((s = import_node(c)))
      dy_error_prefix(c->err, "in %s of node %d (%s)", what, index,
                      node->op_type ? node->op_type : "?");
  }
  c->node = node;
  c->node_index = index;
  c->loc = loc;
  for (int i = 0; !s && i < n_out; i++) {
    const char *nm = g->output[i]->name ? g->output[i]->name : "";
    out[i] = lookup(c, nm);
    if (!out[i])
      s = ox_fail(c, DY_STATUS_FORMAT, "%s: output '%s' is never computed", what, nm);
  }
  /* close the scope: unbind what it bound */
  slot *sl = slots_of(c);
  for (size_t k = mark; k < c->n_scoped; k++)
    for (size_t i = hash_str(c->scoped[k]) & (c->n_slots - 1); sl[i].name;
         i = (i + 1) & (c->n_slots - 1))
      if (strcmp(sl[i].name, c->scoped[k]) == 0) {
        sl[i].v = NULL;
        break;
      }
  c->n_scoped = mark;
  c->scope_depth--;
  return s;
}

/* Fetch value v under the ONNX output name. */
static dy_status add_output(ox_ctx *c, const char *name, ox_value *v) {
  dy_program *p = c->p;
  dy_status s;
  if (v->sym)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph output '%s' is a shape that depends on the dynamic batch size", name);
  if (v->var < 0 && dy_program_find_var(p, name) < 0) {
    /* a constant output: a persistable var under the output's name */
    v->name = dy_program_strdup(p, name);
    if ((s = ox_materialize(c, v)))
      return s;
    return dy_program_add_fetch(p, v->var, c->err);
  }
  if ((s = ox_materialize(c, v)))
    return s;
  dy_var *var = p->vars[v->var];
  if (strcmp(var->name, name) == 0 && var->fetch_index < 0)
    return dy_program_add_fetch(p, v->var, c->err);
  /* another name (or fetched twice): copy through a reshape keeping dims */
  int64_t zeros[DY_MAX_DIMS] = {0};
  dy_attr a[] = {DY_ATTR_IS("shape", zeros, v->type.rank)};
  int out = dy_program_find_var(p, name) < 0 ? dy_program_add_var(p, name, &v->type) : -1;
  if (out < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph output name '%s' is used twice", name);
  if (!dy_program_append_op(p, 0, DY_OP_RESHAPE, &v->var, 1, &out, 1, a, 1, c->loc))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return dy_program_add_fetch(p, out, c->err);
}

static dy_status import_graph(ox_ctx *c, const Onnx__ModelProto *m) {
  const Onnx__GraphProto *g = m->graph;
  dy_status s;
  /* opset of the default domain */
  c->opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (!o->domain || !*o->domain || strcmp(o->domain, "ai.onnx") == 0)
      c->opset = o->has_version ? o->version : 1;
  }
  if (c->opset < 0) {
    if (m->n_opset_import)
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "the model imports no opset of the default ONNX domain (only '%s')",
                     m->opset_import[0]->domain);
    c->opset = 1;
  }
  if (c->info)
    c->info->opset = c->opset;
  if (c->opset < 1 || c->opset > 18)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "opset %lld is not supported (1 to 18 are)",
                   (long long)c->opset);
  if (g->n_sparse_initializer)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "sparse initializers are not supported");

  /* initializers: constants */
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    char what[300];
    snprintf(what, sizeof what, "%s: initializer '%s'", c->path, t->name ? t->name : "");
    ox_const *k;
    if ((s = ox_tensor_convert(t, what, c->dir, &k, c->err)))
      return s;
    ox_value *v = ox_new_value(c, t->name, &k->type);
    if (!v) {
      ox_free_const(k);
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    v->c = k;
    v->weight = k->type.dtype == DY_F32;
    if (!t->name || !bind(c, t->name, v))
      return ox_fail(c, DY_STATUS_FORMAT, "an initializer has no name");
  }
  /* graph inputs: feeds, unless an initializer or a bound constant */
  const char *batch_name = batch_param(g);
  int n_inputs = 0;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name || !*vi->name)
      return ox_fail(c, DY_STATUS_FORMAT, "graph input %zu has no name", i);
    if (lookup(c, vi->name))
      continue;
    const dy_tensor *bound = NULL;
    for (int b = 0; c->opts && b < c->opts->n_bind; b++)
      if (strcmp(c->opts->bind_names[b], vi->name) == 0)
        bound = c->opts->bind_values[b];
    ox_value *v;
    if (bound) {
      v = ox_new_const(c, bound->type.dtype, bound->type.rank, bound->type.shape, bound->data);
      if (!v)
        return c->err->status;
      v->sym = false;
      v->name = dy_program_strdup(c->p, vi->name);
    } else {
      dy_type t = {0};
      if ((s = input_type(c, vi, batch_name, &t)))
        return s;
      int id = dy_program_add_var(c->p, vi->name, &t);
      if (id < 0)
        return ox_fail(c, DY_STATUS_FORMAT, "graph input name '%s' is used twice", vi->name);
      if (n_inputs >= DY_MAX_FEEDS)
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than %d graph inputs", DY_MAX_FEEDS);
      if ((s = dy_program_add_feed(c->p, id, c->err)))
        return s;
      v = ox_new_value(c, vi->name, &t);
      if (!v)
        return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      v->var = id;
      v->graph_input = (int)i;
      n_inputs++;
    }
    if (!bind(c, vi->name, v))
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  /* nodes, in order (ONNX requires a topological order) */
  for (size_t i = 0; i < g->n_node; i++) {
    c->node = g->node[i];
    c->node_index = (int)i;
    c->node_serial++;
    c->loc = (dy_srcloc){c->path, (int)i + 1};
    if ((s = import_node(c)))
      return s;
  }
  c->node = NULL;
  /* outputs */
  if (!g->n_output)
    return ox_fail(c, DY_STATUS_FORMAT, "the graph has no outputs");
  if (g->n_output > DY_MAX_FEEDS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than %d graph outputs", DY_MAX_FEEDS);
  for (size_t i = 0; i < g->n_output; i++) {
    const char *nm = g->output[i]->name ? g->output[i]->name : "";
    ox_value *v = lookup(c, nm);
    if (!v)
      return ox_fail(c, DY_STATUS_FORMAT, "graph output '%s' is never computed", nm);
    if ((s = check_output(c, g->output[i], v)) || (s = add_output(c, nm, v)))
      return s;
  }
  if ((s = dy_verify(c->p, c->err)))
    return dy_error_prefix(c->err, "%s: the imported Program does not verify", c->path);
  return DY_OK;
}

dy_status dy_onnx_load_ex(const char *path, const dy_onnx_options *opts,
                          dy_onnx_info *info, dy_program **out, dy_error *err) {
  *out = NULL;
  dy_error local = {0};
  if (!err)
    err = &local;
  if (info) {
    memset(info, 0, sizeof *info);
    info->needs_const_input = -1;
  }
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s)
    return s;
  Onnx__ModelProto *m = len ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
  free(buf);
  if (!m)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: not an ONNX model (the protobuf does not parse: not ONNX, "
                        "or truncated)", path);
  if (!m->graph || !m->has_ir_version) {
    onnx__model_proto__free_unpacked(m, NULL);
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: not an ONNX model (no graph or no ir_version)", path);
  }
  ox_ctx c = {.err = err, .opts = opts, .info = info};
  c.p = dy_program_new();
  if (!c.p) {
    onnx__model_proto__free_unpacked(m, NULL);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  c.path = dy_program_strdup(c.p, path);
  char *dir = dy_program_strdup(c.p, path);
  char *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash)
    *slash = 0;
  c.dir = slash ? dir : ".";
  s = import_graph(&c, m);
  free_values(&c);
  onnx__model_proto__free_unpacked(m, NULL);
  if (s) {
    /* messages built inside refer to the program's strings: keep them */
    dy_program_free(c.p);
    return s;
  }
  *out = c.p;
  return DY_OK;
}

dy_status dy_onnx_load(const char *path, dy_program **out, dy_error *err) {
  return dy_onnx_load_ex(path, NULL, NULL, out, err);
}
