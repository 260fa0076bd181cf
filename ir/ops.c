/* ops.c - the op table, built from ops.def (QBE's optab[] pattern). */
#include <string.h>

#include "dy_ir.h"

static const dy_op_info op_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) \
  [DY_OP_##NAME] = {#name, n_in, n_out, flags, attrs},
#include "ops.def"
#undef DY_OP
};

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
