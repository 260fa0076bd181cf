/* onnx.c - the ONNX frontend: a ModelProto (onnx.proto, read with the
 * protobuf-c code generated at build time) to a verified dy_program.
 *
 * How it works. The model is unpacked whole; the default domain's opset
 * (1..18) picks per-version attribute defaults. Initializers become
 * constants, graph inputs that are not initializers become feeds (a
 * dim_param, or a dim with no value, is the dynamic batch: -1). The nodes
 * are then imported in order, each by its mapper (onnx_ops.c, onnx_nn.c),
 * which builds ops through ox_op(): an op whose inputs are all constants is
 * computed at once with the runtime's reference kernels (so a Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape chain on static shapes folds
 * away, and its result becomes Reshape's attribute), anything else is
 * appended to the Program. Constants become persistable vars only when a
 * run-time op reads them. The graph's outputs become fetches under their
 * ONNX names. The result is verified.
 *
 * The dynamic batch inside shape arithmetic: Shape of a tensor whose dim is
 * the batch gives a "shape value" whose entry is OX_BATCH (see
 * onnx_internal.h); data-movement ops carry it, Reshape maps it back to 0
 * (copy the input's batch dim) or -1 (infer), Expand to -1 (keep). Every
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
      return s[i].v;
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

static void free_const(ox_const *k) {
  if (k) {
    free(k->data);
    free(k);
  }
}

static ox_value *new_value(ox_ctx *c, const char *name, const dy_type *t) {
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
  v->node = c->node ? c->node_index : -1;
  c->all[c->n_all++] = v;
  return v;
}

static void free_values(ox_ctx *c) {
  for (size_t i = 0; i < c->n_all; i++) {
    free_const(c->all[i]->c);
    free(c->all[i]);
  }
  free(c->all);
  free(c->slots);
}

bool ox_is_const(const ox_value *v) { return v && v->c && !v->sym; }

static size_t type_bytes(const dy_type *t) {
  int64_t n = dy_type_numel(t);
  return n > 0 ? (size_t)n * dy_dtype_size(t->dtype) : 0;
}

/* Mark v symbolic if any of its i64 entries is OX_BATCH. */
static void update_sym(ox_value *v) {
  v->sym = false;
  if (!v->c || v->type.dtype != DY_I64)
    return;
  int64_t n = dy_type_numel(&v->type);
  const int64_t *d = v->c->data;
  for (int64_t i = 0; i < n; i++)
    if (d[i] == OX_BATCH)
      v->sym = true;
}

ox_value *ox_new_const(ox_ctx *c, dy_dtype dt, int rank, const int64_t *shape,
                       const void *data) {
  dy_type t = {.dtype = dt, .rank = rank};
  for (int i = 0; i < rank; i++)
    t.shape[i] = shape[i];
  ox_value *v = new_value(c, NULL, &t);
  ox_const *k = calloc(1, sizeof *k);
  size_t nb = type_bytes(&t);
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
  update_sym(v);
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
/* tensors: TensorProto -> constant                                    */
/* ------------------------------------------------------------------ */

static const char *onnx_dtype_name(int t) {
  static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16",
                                "int16", "int32", "int64", "string", "bool",
                                "float16", "double", "uint32", "uint64",
                                "complex64", "complex128", "bfloat16"};
  return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

/* ONNX elem type -> our dtype; false for the ones we do not have. */
static bool map_dtype(int t, dy_dtype *out) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = DY_F32; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = DY_I64; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = DY_BOOL; return true;
  default: return false;
  }
}

bool dy_onnx_dtype(int onnx_type, dy_dtype *out) { return map_dtype(onnx_type, out); }

/* Read `len` bytes at `offset` of file dir/location, refusing paths that
 * leave dir and ranges outside the file. */
static dy_status read_external(const char *what, const char *dir,
                               const Onnx__TensorProto *t, void *dst, size_t want,
                               dy_error *err) {
  const char *loc = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (!e->key || !e->value)
      continue;
    char *end;
    if (strcmp(e->key, "location") == 0) {
      loc = e->value;
    } else if (strcmp(e->key, "offset") == 0) {
      errno = 0;
      offset = strtoll(e->value, &end, 10);
      if (errno || *end || offset < 0)
        return dy_error_set(err, DY_STATUS_FORMAT, "%s: bad external data offset '%s'",
                            what, e->value);
    } else if (strcmp(e->key, "length") == 0) {
      errno = 0;
      length = strtoll(e->value, &end, 10);
      if (errno || *end || length < 0)
        return dy_error_set(err, DY_STATUS_FORMAT, "%s: bad external data length '%s'",
                            what, e->value);
    }
  }
  if (!loc || !*loc)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: external data without a location", what);
  if (loc[0] == '/' || strstr(loc, ".."))
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: external data location '%s' must be a relative path "
                        "inside the model's directory", what, loc);
  if (length >= 0 && (size_t)length != want)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: external data length %lld, the tensor needs %zu bytes",
                        what, (long long)length, want);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", loc);
  FILE *f = fopen(path, "rb");
  if (!f)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot open external data %s: %s",
                        what, path, strerror(errno));
  dy_status s = DY_OK;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (size < 0 || (uint64_t)offset > (uint64_t)size ||
      (uint64_t)size - (uint64_t)offset < want)
    s = dy_error_set(err, DY_STATUS_FORMAT,
                     "%s: external data %s holds %ld bytes, the tensor needs %zu "
                     "at offset %lld", what, path, size, want, (long long)offset);
  else if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(dst, 1, want, f) != want)
    s = dy_error_set(err, DY_STATUS_IO, "%s: reading %s failed", what, path);
  fclose(f);
  return s;
}

/* Convert a TensorProto into a new constant. `what` names it in errors;
 * dir resolves external data (NULL: the current directory). */
dy_status ox_tensor_convert(const Onnx__TensorProto *t, const char *what,
                            const char *dir, ox_const **out, dy_error *err) {
  *out = NULL;
  dy_dtype dt;
  int odt = t->has_data_type ? t->data_type : 0;
  if (!map_dtype(odt, &dt))
    return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                        "%s: dtype %s is not supported (dy2stc has float32, int64 "
                        "and bool)", what, onnx_dtype_name(odt));
  if (t->segment)
    return dy_error_set(err, DY_STATUS_UNSUPPORTED, "%s: segmented tensors are not supported", what);
  if (t->n_dims > DY_MAX_DIMS)
    return dy_error_set(err, DY_STATUS_UNSUPPORTED, "%s: rank %zu exceeds %d", what,
                        t->n_dims, DY_MAX_DIMS);
  dy_type ty = {.dtype = dt, .rank = (int)t->n_dims};
  int64_t n = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || (t->dims[i] > 0 && n > (INT64_C(1) << 40) / t->dims[i]))
      return dy_error_set(err, DY_STATUS_FORMAT, "%s: bad dim %lld", what,
                          (long long)t->dims[i]);
    ty.shape[i] = t->dims[i];
    n *= t->dims[i];
  }
  size_t esz = dy_dtype_size(dt), nb = (size_t)n * esz;
  ox_const *k = calloc(1, sizeof *k);
  if (!k || !(k->data = calloc(nb ? nb : 1, 1))) {
    free(k);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
  }
  k->type = ty;
  dy_status s = DY_OK;
  bool external = t->has_data_location &&
                  t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (external) {
    s = read_external(what, dir, t, k->data, nb, err);
  } else if (t->has_raw_data) {
    if (t->raw_data.len != nb)
      s = dy_error_set(err, DY_STATUS_FORMAT, "%s: raw_data has %zu bytes, %s[%lld] needs %zu",
                       what, t->raw_data.len, onnx_dtype_name(odt), (long long)n, nb);
    else if (nb)
      memcpy(k->data, t->raw_data.data, nb);
    if (!s && dt == DY_BOOL)
      for (size_t i = 0; i < nb; i++)
        ((unsigned char *)k->data)[i] = ((unsigned char *)k->data)[i] != 0;
  } else if (dt == DY_F32) {
    if (t->n_float_data != (size_t)n)
      s = dy_error_set(err, DY_STATUS_FORMAT, "%s: %zu floats for %lld elements", what,
                       t->n_float_data, (long long)n);
    else if (nb)
      memcpy(k->data, t->float_data, nb);
  } else if (dt == DY_I64) {
    if (t->n_int64_data != (size_t)n)
      s = dy_error_set(err, DY_STATUS_FORMAT, "%s: %zu int64s for %lld elements", what,
                       t->n_int64_data, (long long)n);
    else if (nb)
      memcpy(k->data, t->int64_data, nb);
  } else {
    if (t->n_int32_data != (size_t)n)
      s = dy_error_set(err, DY_STATUS_FORMAT, "%s: %zu bools for %lld elements", what,
                       t->n_int32_data, (long long)n);
    for (int64_t i = 0; !s && i < n; i++)
      ((unsigned char *)k->data)[i] = t->int32_data[i] != 0;
  }
  if (s) {
    free_const(k);
    return s;
  }
  *out = k;
  return DY_OK;
}

dy_status dy_onnx_tensor_read(const char *path, dy_tensor **out, char *name,
                              size_t name_n, dy_error *err) {
  *out = NULL;
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s)
    return s;
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
  free(buf);
  if (!t)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: not a TensorProto (or truncated)", path);
  if (name && name_n)
    snprintf(name, name_n, "%s", t->name ? t->name : "");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(dir, sizeof dir, ".");
  ox_const *k;
  s = ox_tensor_convert(t, path, dir, &k, err);
  onnx__tensor_proto__free_unpacked(t, NULL);
  if (s)
    return s;
  *out = dy_tensor_from_data(k->type.dtype, k->type.rank, k->type.shape, k->data);
  free_const(k);
  if (!*out)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  return DY_OK;
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
  if (v->var >= 0 && v->node == c->node_index && v->graph_input < 0 &&
      !c->p->vars[v->var]->persistable && dy_program_find_var(c->p, name) < 0) {
    const char *nm = dy_program_strdup(c->p, name);
    if (!nm)
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    c->p->vars[v->var]->name = nm;
    v->node = -2; /* named now: never renamed again */
  }
  if (!bind(c, name, v))
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

/* Record that graph input v must be known at compile time. */
static void needs_const(ox_ctx *c, ox_value *v) {
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
                   "%s '%s' depends on the dynamic batch size", what, v->name);
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
/* the op builder                                                      */
/* ------------------------------------------------------------------ */

/* Compare attrs with an op's schema ("name:kind ..."): same names, kinds. */
static bool schema_matches(const char *schema, const dy_attr *attrs, int n,
                           char *why, size_t wn) {
  int count = 0;
  for (const char *s = schema; *s;) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    const char *colon = strchr(s, ':');
    if (!colon)
      break;
    const char *e = colon + 1;
    while (*e && *e != ' ')
      e++;
    size_t nl = (size_t)(colon - s), kl = (size_t)(e - colon - 1);
    dy_attr_kind kind = kl == 1 && colon[1] == 'i'   ? DY_ATTR_INT
                        : kl == 1 && colon[1] == 'f' ? DY_ATTR_FLOAT
                        : kl == 1 && colon[1] == 's' ? DY_ATTR_STRING
                        : kl == 2 && colon[2] == 's' && colon[1] == 'i' ? DY_ATTR_INTS
                                                                        : DY_ATTR_FLOATS;
    bool found = false;
    for (int i = 0; i < n; i++)
      if (strlen(attrs[i].name) == nl && strncmp(attrs[i].name, s, nl) == 0) {
        found = attrs[i].kind == kind;
        break;
      }
    if (!found) {
      snprintf(why, wn, "attribute '%.*s' missing or of another kind", (int)nl, s);
      return false;
    }
    count++;
    s = e;
  }
  if (count != n) {
    snprintf(why, wn, "%d attributes given, the schema has %d", n, count);
    return false;
  }
  return true;
}

bool ox_have_op(const char *op, const char *schema) {
  dy_op_kind k;
  if (!dy_op_kind_from_name(op, &k))
    return false;
  return strcmp(dy_op_info_of(k)->attrs, schema) == 0;
}

/* Ops that only move data: they may fold on shape values (OX_BATCH entries
 * travel with the data). */
static bool moves_data(const char *op) {
  static const char *const ok[] = {"gather", "concat", "slice", "squeeze", "unsqueeze",
                                   "reshape", "flatten", "transpose", "expand", "tile"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (strcmp(op, ok[i]) == 0)
      return true;
  return false;
}

/* Make constant v a persistable var (once). */
static dy_status materialize(ox_ctx *c, ox_value *v) {
  if (v->var >= 0)
    return DY_OK;
  if (!v->c)
    return ox_fail(c, DY_STATUS_INTERNAL, "value '%s' has neither a var nor data", v->name);
  if (v->sym)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "'%s' depends on the dynamic batch size and cannot be a tensor",
                   v->name);
  const char *nm = v->name && *v->name && dy_program_find_var(c->p, v->name) < 0
                       ? v->name
                       : dy_program_fresh_name(c->p, "const");
  int id = nm ? dy_program_add_var(c->p, nm, &v->type) : -1;
  if (id < 0)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_status s = dy_program_set_data(c->p, id, v->c->data, type_bytes(&v->type), c->err);
  if (s)
    return s;
  v->var = id;
  return DY_OK;
}

dy_status ox_op_n(ox_ctx *c, const char *opname, ox_value *const *in, int n_in,
                  const dy_attr *attrs, int n_attrs, ox_value **out, int n_out) {
  dy_op_kind k;
  char why[160];
  for (int i = 0; i < n_out; i++)
    out[i] = NULL;
  if (!dy_op_kind_from_name(opname, &k))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "needs the op '%s', which this build's op table does not have", opname);
  const dy_op_info *info = dy_op_info_of(k);
  if (!schema_matches(info->attrs, attrs, n_attrs, why, sizeof why))
    return ox_fail(c, DY_STATUS_INTERNAL, "%s: the mapping does not fit the op's schema "
                   "\"%s\": %s", opname, info->attrs, why);
  if (n_in > 16 || n_out > 8)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s: too many operands", opname);
  bool all_const = true, any_sym = false;
  dy_type in_t[16], out_t[8];
  for (int i = 0; i < n_in; i++) {
    if (!in[i])
      return ox_fail(c, DY_STATUS_INTERNAL, "%s: missing input %d", opname, i);
    all_const &= in[i]->c != NULL;
    any_sym |= in[i]->sym;
    in_t[i] = in[i]->type;
  }
  dy_op op = {.id = -1, .kind = k, .n_inputs = n_in, .n_outputs = n_out,
              .n_attrs = n_attrs, .attrs = (dy_attr *)attrs, .loc = c->loc};
  if (any_sym && !(all_const && moves_data(opname) &&
                   !(strcmp(opname, "gather") == 0 && in[1]->sym)))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s would compute with the dynamic batch size (a shape value of "
                   "an input with a dim_param)", opname);
  dy_error e = {0};
  dy_status s = dy_infer(&op, in_t, n_in, out_t, &e);
  if (s) {
    if (s == DY_STATUS_DTYPE_MISMATCH)
      s = DY_STATUS_UNSUPPORTED;
    return ox_fail(c, s, "%s", e.msg);
  }
  if (all_const) {
    /* fold now with the reference kernel */
    dy_tensor ti[16], to[8];
    dy_tensor *pi[16], *po[8];
    for (int i = 0; i < n_in; i++) {
      ti[i] = (dy_tensor){.type = in[i]->type, .data = in[i]->c->data,
                          .nbytes = type_bytes(&in[i]->type), .refcount = 1,
                          .borrowed = true, .var = -1};
      pi[i] = &ti[i];
    }
    for (int i = 0; i < n_out; i++) {
      out[i] = ox_new_const(c, out_t[i].dtype, out_t[i].rank, out_t[i].shape, NULL);
      if (!out[i])
        return c->err ? c->err->status : DY_STATUS_OUT_OF_MEMORY;
      to[i] = (dy_tensor){.type = out_t[i], .data = out[i]->c->data,
                          .nbytes = type_bytes(&out_t[i]), .refcount = 1,
                          .borrowed = true, .var = -1};
      po[i] = &to[i];
    }
    s = dy_kernel_table[k](&op, pi, n_in, po, &e);
    if (s)
      return ox_fail(c, s, "folding %s: %s", opname, e.msg);
    for (int i = 0; i < n_out; i++) {
      update_sym(out[i]);
      if (!any_sym)
        out[i]->sym = false;
    }
    return DY_OK;
  }
  int ids_in[16], ids_out[8];
  for (int i = 0; i < n_in; i++) {
    if ((s = materialize(c, in[i])))
      return s;
    ids_in[i] = in[i]->var;
  }
  char stem[200];
  const char *base = c->node && c->node->n_output && c->node->output[0][0]
                         ? c->node->output[0] : opname;
  snprintf(stem, sizeof stem, "%.150s/%s", base, opname);
  for (int i = 0; i < n_out; i++) {
    const char *nm = dy_program_fresh_name(c->p, stem);
    int id = nm ? dy_program_add_var(c->p, nm, &out_t[i]) : -1;
    out[i] = new_value(c, nm, &out_t[i]);
    if (id < 0 || !out[i])
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    out[i]->var = id;
    ids_out[i] = id;
  }
  if (!dy_program_append_op(c->p, 0, k, ids_in, n_in, ids_out, n_out, attrs, n_attrs,
                            c->loc))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

ox_value *ox_op(ox_ctx *c, const char *opname, ox_value *const *in, int n_in,
                const dy_attr *attrs, int n_attrs) {
  ox_value *o;
  return ox_op_n(c, opname, in, n_in, attrs, n_attrs, &o, 1) ? NULL : o;
}

/* The shorthands propagate a NULL input (an earlier error) as NULL. */
#define NEED(...)                                                     \
  do {                                                                \
    ox_value *const need_[] = {__VA_ARGS__};                          \
    for (size_t i_ = 0; i_ < sizeof need_ / sizeof *need_; i_++)      \
      if (!need_[i_])                                                 \
        return NULL;                                                  \
  } while (0)

ox_value *ox_unary(ox_ctx *c, const char *op, ox_value *x) {
  NEED(x);
  return ox_op(c, op, &x, 1, NULL, 0);
}

ox_value *ox_binary(ox_ctx *c, const char *op, ox_value *a, ox_value *b) {
  NEED(a, b);
  ox_value *in[2] = {a, b};
  return ox_op(c, op, in, 2, NULL, 0);
}

ox_value *ox_scale(ox_ctx *c, ox_value *x, float scale, float bias) {
  NEED(x);
  dy_attr a[] = {DY_ATTR_F("scale", scale), DY_ATTR_F("bias", bias),
                 DY_ATTR_I("bias_after_scale", 1)};
  return ox_op(c, "scale", &x, 1, a, 3);
}

ox_value *ox_cast(ox_ctx *c, ox_value *x, dy_dtype to) {
  NEED(x);
  if (x->type.dtype == to)
    return x;
  dy_attr a[] = {DY_ATTR_I("dtype", to)};
  return ox_op(c, "cast", &x, 1, a, 1);
}

ox_value *ox_reshape(ox_ctx *c, ox_value *x, int rank, const int64_t *shape) {
  NEED(x);
  dy_attr a[] = {DY_ATTR_IS("shape", shape, rank)};
  return ox_op(c, "reshape", &x, 1, a, 1);
}

ox_value *ox_transpose(ox_ctx *c, ox_value *x, int rank, const int64_t *perm) {
  NEED(x);
  bool id = true;
  for (int i = 0; i < rank; i++)
    id &= perm[i] == i;
  if (id)
    return x;
  dy_attr a[] = {DY_ATTR_IS("perm", perm, rank)};
  return ox_op(c, "transpose", &x, 1, a, 1);
}

ox_value *ox_unsqueeze(ox_ctx *c, ox_value *x, int n, const int64_t *axes) {
  NEED(x);
  if (n == 0)
    return x;
  dy_attr a[] = {DY_ATTR_IS("axes", axes, n)};
  return ox_op(c, "unsqueeze", &x, 1, a, 1);
}

ox_value *ox_squeeze(ox_ctx *c, ox_value *x, int n, const int64_t *axes) {
  NEED(x);
  dy_attr a[] = {DY_ATTR_IS("axes", axes, n)};
  return ox_op(c, "squeeze", &x, 1, a, 1);
}

ox_value *ox_reduce(ox_ctx *c, const char *op, ox_value *x, int n,
                    const int64_t *axes, bool keepdim) {
  NEED(x);
  dy_attr a[] = {DY_ATTR_IS("axes", axes, n), DY_ATTR_I("keepdim", keepdim)};
  return ox_op(c, op, &x, 1, a, 2);
}

ox_value *ox_slice(ox_ctx *c, ox_value *x, int n, const int64_t *starts,
                   const int64_t *ends, const int64_t *axes,
                   const int64_t *steps) {
  NEED(x);
  int64_t ones[DY_MAX_DIMS];
  for (int i = 0; i < n && i < DY_MAX_DIMS; i++)
    ones[i] = 1;
  dy_attr a[] = {DY_ATTR_IS("starts", starts, n), DY_ATTR_IS("ends", ends, n),
                 DY_ATTR_IS("axes", axes, n), DY_ATTR_IS("steps", steps ? steps : ones, n)};
  return ox_op(c, "slice", &x, 1, a, 4);
}

ox_value *ox_where(ox_ctx *c, ox_value *cond, ox_value *a, ox_value *b) {
  NEED(cond, a, b);
  ox_value *in[3] = {cond, a, b};
  return ox_op(c, "where", in, 3, NULL, 0);
}

ox_value *ox_not(ox_ctx *c, ox_value *x) {
  NEED(x);
  return ox_binary(c, "equal", x, ox_const_bool(c, false));
}

ox_value *ox_concat(ox_ctx *c, ox_value *const *in, int n, int64_t axis) {
  for (int i = 0; i < n; i++)
    NEED(in[i]);
  if (n == 1)
    return in[0];
  dy_attr a[] = {DY_ATTR_I("axis", axis)};
  return ox_op(c, "concat", in, n, a, 1);
}

ox_value *ox_concat_many(ox_ctx *c, ox_value *const *in, int n, int64_t axis) {
  if (n <= 16)
    return ox_concat(c, in, n, axis);
  ox_value *part[16];
  int k = 0;
  for (int i = 0; i < n; i += 16)
    part[k++] = ox_concat(c, in + i, n - i < 16 ? n - i : 16, axis);
  return ox_concat_many(c, part, k, axis);
}

ox_value *ox_iota(ox_ctx *c, int64_t n, int r, int axis) {
  int64_t shape[DY_MAX_DIMS];
  for (int i = 0; i < r; i++)
    shape[i] = i == axis ? n : 1;
  ox_value *v = ox_new_const(c, DY_I64, r, shape, NULL);
  if (v)
    for (int64_t i = 0; i < n; i++)
      ((int64_t *)v->c->data)[i] = i;
  return v;
}

ox_value *ox_pad(ox_ctx *c, ox_value *x, const int64_t *pads, const char *mode,
                 float value) {
  NEED(x);
  bool zero = true;
  for (int i = 0; i < 2 * x->type.rank; i++)
    zero &= pads[i] == 0;
  if (zero)
    return x;
  dy_attr a[] = {DY_ATTR_IS("paddings", pads, 2 * x->type.rank), DY_ATTR_S("mode", mode),
                 DY_ATTR_F("value", value)};
  return ox_op(c, "pad", &x, 1, a, 3);
}

/* ------------------------------------------------------------------ */
/* the model                                                           */
/* ------------------------------------------------------------------ */

/* A graph input's type: elem type and dims, a dim_param (or a dim with no
 * value) being the batch. All inputs must agree on one batch name. */
static dy_status input_type(ox_ctx *c, const Onnx__ValueInfoProto *vi,
                            const char **batch_name, dy_type *t) {
  const char *nm = vi->name ? vi->name : "";
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph input '%s' is not a tensor (sequences, maps and optionals "
                   "are not supported)", nm);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int et = tt->has_elem_type ? tt->elem_type : 0;
  if (!map_dtype(et, &t->dtype))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph input '%s' has dtype %s (dy2stc has float32, int64 and bool)",
                   nm, onnx_dtype_name(et));
  if (!tt->shape)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph input '%s' has no shape", nm);
  if (tt->shape->n_dim > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "graph input '%s' has rank %zu (at most %d)",
                   nm, tt->shape->n_dim, DY_MAX_DIMS);
  t->rank = (int)tt->shape->n_dim;
  int n_dyn = 0;
  for (int i = 0; i < t->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        d->dim_value >= 0) {
      t->shape[i] = d->dim_value;
      continue;
    }
    const char *param = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                            ? d->dim_param : "";
    if (++n_dyn > 1)
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "graph input '%s' has more than one symbolic dim; dy2stc has one "
                     "dynamic dim, the batch", nm);
    if (param && *param) {
      if (*batch_name && **batch_name && strcmp(*batch_name, param) != 0)
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "graph input '%s' has symbolic dim '%s' but an earlier input has "
                       "'%s'; dy2stc has one dynamic dim, the batch", nm, param,
                       *batch_name);
      *batch_name = param;
    }
    t->shape[i] = -1;
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
  if (tt->has_elem_type && tt->elem_type && !map_dtype(tt->elem_type, &dt))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "graph output '%s' has dtype %s (dy2stc has float32, int64 and bool)",
                   vi->name, onnx_dtype_name(tt->elem_type));
  if (tt->has_elem_type && tt->elem_type && dt != v->type.dtype)
    return ox_fail(c, DY_STATUS_INTERNAL, "graph output '%s' is declared %s, computed %s",
                   vi->name, onnx_dtype_name(tt->elem_type), dy_dtype_name(v->type.dtype));
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

static ox_map_fn find_mapper(const char *op_type) {
  ox_map_fn f = ox_find_mapper(op_type);
  return f ? f : ox_find_mapper_nn(op_type);
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
  ox_map_fn f = find_mapper(n->op_type);
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
    if ((s = materialize(c, v)))
      return s;
    return dy_program_add_fetch(p, v->var, c->err);
  }
  if ((s = materialize(c, v)))
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
    ox_value *v = new_value(c, t->name, &k->type);
    if (!v) {
      free_const(k);
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    v->c = k;
    if (!t->name || !bind(c, t->name, v))
      return ox_fail(c, DY_STATUS_FORMAT, "an initializer has no name");
  }
  /* graph inputs: feeds, unless an initializer or a bound constant */
  const char *batch_name = NULL;
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
      if ((s = input_type(c, vi, &batch_name, &t)))
        return s;
      int id = dy_program_add_var(c->p, vi->name, &t);
      if (id < 0)
        return ox_fail(c, DY_STATUS_FORMAT, "graph input name '%s' is used twice", vi->name);
      if (n_inputs >= DY_MAX_FEEDS)
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than %d graph inputs", DY_MAX_FEEDS);
      if ((s = dy_program_add_feed(c->p, id, c->err)))
        return s;
      v = new_value(c, vi->name, &t);
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
