/* onnx_node.c - the node being imported (onnx_internal.h): its inputs
 * and outputs (ox_in, ox_need_in, ox_set_out, and the input checks every
 * mapper family shares: float32, QLinear scales, the integer ops' zero
 * points) and its attributes (ox_attr*, ox_check_attrs with the bounds on
 * size attributes, ox_axis).
 *
 * Below the mapper families; calls onnx_value.c only.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* node inputs, outputs, attributes                                    */
/* ------------------------------------------------------------------ */

int ox_n_in(ox_ctx *c) { return (int)c->node->n_input; }
int ox_n_out(ox_ctx *c) { return (int)c->node->n_output; }

ox_value *ox_in(ox_ctx *c, int i) {
  if (i < 0 || i >= (int)c->node->n_input || !c->node->input[i][0])
    return NULL;
  return ox_lookup(c, c->node->input[i]);
}

bool ox_out_wanted(ox_ctx *c, int i) {
  return i < (int)c->node->n_output && c->node->output[i][0];
}

dy_status ox_set_out(ox_ctx *c, int i, ox_value *v) {
  if (!ox_out_wanted(c, i))
    return DY_OK;
  const char *name = c->node->output[i];
  if (ox_lookup(c, name))
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
  if (!ox_bind_scoped(c, name, v))
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

dy_status ox_need_f32(ox_ctx *c, const ox_value *v) {
  if (v->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs float32, got %s",
                   dy_dtype_name(v->type.dtype));
  return DY_OK;
}

dy_status ox_need_const_scales(ox_ctx *c, ox_value *const *in, const int *idx, int n) {
  for (int k = 0; k < n; k++) {
    const float *v;
    int64_t m;
    TRY(ox_get_floats(c, in[idx[k]], "a QLinear scale", &v, &m));
  }
  return DY_OK;
}

dy_status ox_integer_inputs(ox_ctx *c, ox_value *in[4]) {
  TRY(ox_need_in(c, 0, &in[0]));
  TRY(ox_need_in(c, 1, &in[1]));
  for (int i = 2; i < 4; i++) {
    in[i] = ox_in(c, i);
    if (!in[i] && !(in[i] = ox_new_const(c, in[i - 2]->type.dtype, 0, NULL, NULL)))
      return DY_STATUS_OUT_OF_MEMORY;
  }
  return DY_OK;
}
