/* ops.c - the op table, built from ops.def (QBE's optab[] pattern): each
 * op's name, arity, flags and attribute schema; an op's attributes looked
 * up by name (dy_op_find_attr, dy_op_attr_float); and the typed attribute
 * accessors and writers the schema generates (dy_<name>_attrs_of / _get /
 * _put, see dy_ir.h): the only place our attribute names are strings.
 * It needs nothing of the IR above an op: status.c for its errors. */
#include <string.h>

#include "dy_ir.h"

/* ---- the attribute schemas, one array per op ---- */

/* A default's value as a dy_attr. Lists are written (1, 1) in ops.def; the
 * arrays get a leading 0 so that an empty list () is valid C. */
#define DY_UNPAREN(...) __VA_ARGS__
#define DFLT_I(d) .kind = DY_ATTR_INT, .i = (d)
#define DFLT_F(d) .kind = DY_ATTR_FLOAT, .f = (d)
#define DFLT_S(d) .kind = DY_ATTR_STRING, .s = (d)
#define DFLT_IS(d)                                                      \
  .kind = DY_ATTR_INTS, .ints = (const int64_t[]){0, DY_UNPAREN d} + 1, \
  .n = (int)(sizeof((const int64_t[]){0, DY_UNPAREN d}) / sizeof(int64_t)) - 1
#define DFLT_FS(d)                                                        \
  .kind = DY_ATTR_FLOATS, .floats = (const float[]){0, DY_UNPAREN d} + 1, \
  .n = (int)(sizeof((const float[]){0, DY_UNPAREN d}) / sizeof(float)) - 1
#define KIND_I DY_ATTR_INT
#define KIND_F DY_ATTR_FLOAT
#define KIND_S DY_ATTR_STRING
#define KIND_IS DY_ATTR_INTS
#define KIND_FS DY_ATTR_FLOATS

#define DY_A(nm, K, d) \
  {.name = #nm, .kind = KIND_##K, .dflt = {.name = #nm, DFLT_##K(d)}},
#define DY_R(nm, K) \
  {.name = #nm, .kind = KIND_##K, .required = true, .dflt = {.name = #nm, .kind = KIND_##K}},
/* entry 0 is a placeholder, so that an op without attributes has a valid
 * (one-entry) array; the schema starts at entry 1 */
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs) \
  static const dy_attr_schema schema_##op_[] = {{.name = NULL}, attrs};
#include "ops.def"
#undef DY_OP

static const dy_op_info op_table[DY_OP_COUNT] = {
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs)             \
  [DY_OP_##NAME] = {#op_, n_in, n_out, flags, schema_##op_ + 1, \
                    (int)(sizeof schema_##op_ / sizeof schema_##op_[0]) - 1},
#include "ops.def"
#undef DY_OP
};
#undef DY_A
#undef DY_R

const dy_op_info *dy_op_info_of(dy_op_kind k) { return &op_table[k]; }

const char *dy_op_name(dy_op_kind k) {
  return (unsigned)k < DY_OP_COUNT ? op_table[k].name : "?";
}

bool dy_op_kind_from_name(const char *name, dy_op_kind *out) {
  for (int i = 0; i < DY_OP_COUNT; i++)
    if (strcmp(op_table[i].name, name) == 0) {
      *out = (dy_op_kind)i;
      return true;
    }
  return false;
}

const dy_attr_schema *dy_attr_schema_find(dy_op_kind k, const char *name) {
  const dy_op_info *info = &op_table[k];
  for (int i = 0; i < info->n_attrs; i++)
    if (strcmp(info->attrs[i].name, name) == 0)
      return &info->attrs[i];
  return NULL;
}

const char *dy_attr_kind_name(dy_attr_kind kind) {
  static const char *const names[] = {"int", "float", "ints", "floats", "string"};
  return (unsigned)kind < 5 ? names[kind] : "?";
}

/* ---- attribute lookup by name (the printer, the serializer, CSE) ---- */

const dy_attr *dy_op_find_attr(const dy_op *op, const char *name) {
  for (int i = 0; i < op->n_attrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0)
      return &op->attrs[i];
  return NULL;
}

dy_status dy_op_attr_float(const dy_op *op, const char *name, double *out,
                           dy_error *err) {
  const dy_attr *a = dy_op_find_attr(op, name);
  const dy_attr_schema *e = dy_attr_schema_find(op->kind, name);
  if (!a && e && !e->required)
    a = &e->dflt; /* the table's default */
  if (!a)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: missing attribute '%s'", dy_op_name(op->kind), name);
  if (a->kind != DY_ATTR_FLOAT)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: attribute '%s' is %s, should be float", dy_op_name(op->kind),
                       name, dy_attr_kind_name(a->kind));
  *out = a->f;
  return DY_OK;
}

/* ---- the typed accessors ---- */

/* The value of schema entry i of kind k for op: the op's attribute, or the
 * default when absent. An absent required attribute or one of the wrong
 * kind sets *s (the first error wins) and reads as the default. */
static const dy_attr *pick(const dy_op *op, dy_op_kind k, int i, unsigned *given,
                           dy_status *s, dy_error *err) {
  const dy_attr_schema *e = &op_table[k].attrs[i];
  const dy_attr *a = dy_op_find_attr(op, e->name);
  if (a && a->kind == e->kind) {
    *given |= 1u << i;
    return a;
  }
  if (!*s && a)
    *s = dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                     "%s: attribute '%s' is %s, should be %s", dy_op_name(op->kind),
                     e->name, dy_attr_kind_name(a->kind), dy_attr_kind_name(e->kind));
  else if (!*s && e->required)
    *s = dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                     "%s: missing attribute '%s'", dy_op_name(op->kind), e->name);
  return &e->dflt;
}

#define SET_I(nm) out->nm = a_->i;
#define SET_F(nm) out->nm = a_->f;
#define SET_S(nm) out->nm = a_->s;
#define SET_IS(nm) out->nm = a_->ints, out->n_##nm = a_->n;
#define SET_FS(nm) out->nm = a_->floats, out->n_##nm = a_->n;
#define DY_A(nm, K, d)                                            \
  {                                                               \
    const dy_attr *a_ = pick(op, k_, i_++, &out->given, &s, err); \
    SET_##K(nm)                                                   \
  }
#define DY_R(nm, K) DY_A(nm, K, 0)
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs)                            \
  dy_status dy_##op_##_attrs_of(const dy_op *op, dy_##op_##_attrs *out,        \
                                 dy_error *err) {                              \
    const dy_op_kind k_ = DY_OP_##NAME;                                        \
    dy_status s = DY_OK;                                                       \
    int i_ = 0;                                                                \
    memset(out, 0, sizeof *out);                                               \
    (void)k_, (void)i_, (void)err;                                             \
    attrs return s;                                                            \
  }                                                                            \
  dy_##op_##_attrs dy_##op_##_attrs_get(const dy_op *op) {                     \
    dy_##op_##_attrs a;                                                        \
    dy_##op_##_attrs_of(op, &a, NULL);                                         \
    return a;                                                                  \
  }                                                                            \
  static dy_status attrs_of_##op_(const dy_op *op, void *out, dy_error *err) { \
    return dy_##op_##_attrs_of(op, out, err);                                  \
  }
#include "ops.def"
#undef DY_OP
#undef DY_A
#undef DY_R

const dy_attrs_fn dy_attrs_table[DY_OP_COUNT] = {
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs) [DY_OP_##NAME] = attrs_of_##op_,
#include "ops.def"
#undef DY_OP
};

const size_t dy_attrs_size[DY_OP_COUNT] = {
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs) \
  [DY_OP_##NAME] = sizeof(dy_##op_##_attrs),
#include "ops.def"
#undef DY_OP
};

/* ---- the typed writers ---- */

#define PUT_I(nm) .kind = DY_ATTR_INT, .i = a->nm
#define PUT_F(nm) .kind = DY_ATTR_FLOAT, .f = a->nm
#define PUT_S(nm) .kind = DY_ATTR_STRING, .s = a->nm
#define PUT_IS(nm) .kind = DY_ATTR_INTS, .ints = a->nm, .n = a->n_##nm
#define PUT_FS(nm) .kind = DY_ATTR_FLOATS, .floats = a->nm, .n = a->n_##nm
#define DY_A(nm, K, d)                                   \
  if (a->given & 1u << i_)                               \
    out[n++] = (dy_attr){.name = #nm, PUT_##K(nm)};      \
  i_++;
#define DY_R(nm, K) DY_A(nm, K, 0)
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs)                              \
  int dy_##op_##_attrs_put(const dy_##op_##_attrs *a, dy_attr *out) {            \
    int n = 0, i_ = 0;                                                           \
    (void)a, (void)out, (void)i_;                                                \
    attrs return n;                                                              \
  }                                                                              \
  static int attrs_put_##op_(const void *a, dy_attr *out) {                     \
    return dy_##op_##_attrs_put(a, out);                                         \
  }
#include "ops.def"
#undef DY_OP
#undef DY_A
#undef DY_R

const dy_attrs_put_fn dy_attrs_put_table[DY_OP_COUNT] = {
#define DY_OP(NAME, op_, n_in, n_out, flags, attrs) [DY_OP_##NAME] = attrs_put_##op_,
#include "ops.def"
#undef DY_OP
};
