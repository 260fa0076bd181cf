/* fe_internal.h - what both frontends (onnx/, paddle/) share, below them
 * both (common/fe_attrs.c); not part of the public API. */
#ifndef DY_FE_INTERNAL_H
#define DY_FE_INTERNAL_H

#include "dy_ir.h"

/* The op's full attribute list (the schema's order, dy_op_info_of(k)->n_attrs
 * entries) from a partial one: each schema entry given with its kind, or
 * absent and then the table's default; nothing outside the schema. false
 * with the reason in why otherwise. */
bool dy_fe_complete_attrs(dy_op_kind k, const dy_attr *attrs, int n, dy_attr *full, char *why,
                          size_t wn);

/* ---- fe_json.c: a strict JSON reader (RFC 8259), bounded ---- */

#define FE_JSON_MAX_DEPTH 64             /* nested arrays/objects */
#define FE_JSON_MAX_NODES (1 << 24)      /* values in one text */
#define FE_JSON_MAX_BYTES (1 << 28)

typedef enum { FE_JNULL, FE_JBOOL, FE_JNUMBER, FE_JSTRING, FE_JARRAY, FE_JOBJECT } fe_jkind;

/* One value. Arrays and objects link their members (first, next: node
 * indices, -1 none); an object's members carry their key. */
typedef struct {
  fe_jkind kind;
  int first, next, n;   /* n: members of an array/object */
  const char *key;      /* as an object's member, else NULL */
  const char *str;      /* FE_JSTRING: decoded UTF-8, NUL-terminated */
  size_t len;
  double num;           /* FE_JNUMBER */
  bool is_int;          /* no fraction/exponent and within int64: i */
  int64_t i;
  bool b;               /* FE_JBOOL */
  size_t off;           /* byte offset of the value in the text */
} fe_jnode;

typedef struct {
  fe_jnode *nodes;      /* nodes[0] the root */
  int n, cap;
  char *strs;
} fe_json;

/* Parse text (n bytes) into *out; errors are DY_STATUS_FORMAT, one line:
 * "NAME: JSON: byte K ('c'): expected-what". Free with fe_json_free. */
dy_status fe_json_parse(const uint8_t *text, size_t n, const char *name, fe_json *out,
                        dy_error *err);
void fe_json_free(fe_json *j);
const fe_jnode *fe_json_root(const fe_json *j);
/* Members (NULL past the last or for a scalar). */
const fe_jnode *fe_json_first(const fe_json *j, const fe_jnode *v);
const fe_jnode *fe_json_next(const fe_json *j, const fe_jnode *v);
/* An object's member by key (the first), an array's item by index; NULL
 * when absent or v is not of that kind. */
const fe_jnode *fe_json_get(const fe_json *j, const fe_jnode *obj, const char *key);
const fe_jnode *fe_json_at(const fe_json *j, const fe_jnode *arr, int i);

#endif
