/* onnx_value.c - the ONNX importer's values (onnx_internal.h): errors
 * naming the node, the value table (ONNX name -> value, open hashing,
 * with the scopes of the sub-graphs being imported), constants and shape
 * values with their symbolic entries, and reading a constant input's data
 * (ox_get_ints, ox_get_floats), which records the graph input a caller
 * could bind when the input turns out to be a run-time value.
 *
 * The floor of the ONNX frontend: it calls nothing of the other onnx_*.c.
 */
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

ox_value *ox_lookup(ox_ctx *c, const char *name) {
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

bool ox_bind(ox_ctx *c, const char *name, ox_value *v) {
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

/* ox_bind, remembering the name in the innermost open scope (a sub-graph
 * being imported), so that closing the scope unbinds it again. */
bool ox_bind_scoped(ox_ctx *c, const char *name, ox_value *v) {
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
  return ox_bind(c, name, v);
}


/* Unbind every name bound in a scope since the mark (c->n_scoped when the
 * scope opened): a sub-graph's names are visible to one import only. */
void ox_unbind_since(ox_ctx *c, size_t mark) {
  slot *sl = slots_of(c);
  for (size_t k = mark; k < c->n_scoped; k++)
    for (size_t i = hash_str(c->scoped[k]) & (c->n_slots - 1); sl[i].name;
         i = (i + 1) & (c->n_slots - 1))
      if (strcmp(sl[i].name, c->scoped[k]) == 0) {
        sl[i].v = NULL;
        break;
      }
  c->n_scoped = mark;
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

void ox_free_values(ox_ctx *c) {
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


ox_value *ox_zero_like(ox_ctx *c, dy_dtype dt) {
  if (dt == DY_F32)
    return ox_const_f32(c, 0.0f);
  if (dt == DY_I64)
    return ox_const_i64(c, 0);
  return ox_const_bool(c, false);
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

/* v's name for a message: its own, else the name the node reads it by (a
 * value folded from shapes has none of its own). */
static const char *value_name(ox_ctx *c, const ox_value *v) {
  if (!v)
    return "";
  if (v->name && v->name[0])
    return v->name;
  for (size_t k = 0; c->node && k < c->node->n_input; k++)
    if (c->node->input[k][0] && ox_lookup(c, c->node->input[k]) == v)
      return c->node->input[k];
  return "?";
}

dy_status ox_get_ints(ox_ctx *c, ox_value *v, const char *what, bool allow_sym,
                      const int64_t **vals, int64_t *n) {
  if (!v || !v->c) {
    needs_const(c, v);
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s '%s' must be a constant (an initializer or computed from "
                   "constants and static shapes), not a run-time value",
                   what, value_name(c, v));
  }
  if (v->sym && !allow_sym)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s '%s' depends on a dynamic size (a shape value)", what,
                   value_name(c, v));
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

