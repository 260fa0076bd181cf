/* cg_ops.h - codegen floor 2 (codegen/ops/): the op families, one file per
 * .def file of ir/ (emit_ops.c for ops.def, emit_nn.c for ops_nn.def, ...;
 * fused_dwpw, fused_irb and fused_attention have a file each). Each writes
 * the body of its ops' kernels, dy_emit_<op>, on floors 0 and 1 only: no
 * family calls another (what two share is a kernel builder of floor 1,
 * cg_kernels.h). Each also defines its ops' entries of the emitter table
 * (dy_cg_op_<op>: dy_codegen.h), at the end of the file: the emitter, the
 * scratch function (beside the emitter) and the operands' role names. The
 * driver (floor 3, program/table.c) builds dy_cg_table from them. */
#ifndef DY_CODEGEN_CG_OPS_H
#define DY_CODEGEN_CG_OPS_H

#include "cg_kernels.h"

/* Each op's emitter, the body of its kernel (dy_cg_ctx: dy_codegen.h), and
 * its entry in the emitter table (dy_cg_op: emitter, scratch, roles), both
 * defined in its family's file. */
#define DY_OP(NAME, name, n_in, n_out, flags, attrs)         \
  dy_status dy_emit_##name(dy_cg_ctx *ctx, dy_error *err); \
  extern const dy_cg_op dy_cg_op_##name;
#include "ops.def"
#undef DY_OP

#endif /* DY_CODEGEN_CG_OPS_H */
