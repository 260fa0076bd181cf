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

#endif
