/* fe_attrs.c - attribute lists for the frontends' op builders
 * (fe_internal.h). */
#include <stdio.h>
#include <string.h>

#include "fe_internal.h"

/* The op's full attribute list from the mapper's (or importer's): each schema entry
 * (ops.def) given with its kind, or absent and then the table's default;
 * nothing outside the schema. A mapper may so leave out every attribute
 * whose ONNX default is the table's. */
bool dy_fe_complete_attrs(dy_op_kind k, const dy_attr *attrs, int n, dy_attr *full,
                           char *why, size_t wn) {
  const dy_op_info *info = dy_op_info_of(k);
  for (int i = 0; i < n; i++)
    if (!dy_attr_schema_find(k, attrs[i].name)) {
      snprintf(why, wn, "attribute '%s' is not in the schema", attrs[i].name);
      return false;
    }
  for (int j = 0; j < info->n_attrs; j++) {
    const dy_attr_schema *e = &info->attrs[j];
    const dy_attr *a = NULL;
    for (int i = 0; i < n && !a; i++)
      if (strcmp(attrs[i].name, e->name) == 0)
        a = &attrs[i];
    if (a && a->kind != e->kind) {
      snprintf(why, wn, "attribute '%s' is %s, should be %s", e->name,
               dy_attr_kind_name(a->kind), dy_attr_kind_name(e->kind));
      return false;
    }
    if (!a && e->required) {
      snprintf(why, wn, "missing attribute '%s'", e->name);
      return false;
    }
    full[j] = a ? *a : e->dflt;
  }
  return true;
}
