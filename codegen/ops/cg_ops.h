/* cg_ops.h - codegen floor 2 (codegen/ops/): the op families, one file per
 * .def file of ir/ (emit_ops.c for ops.def, emit_nn.c for ops_nn.def, ...;
 * fused_dwpw, fused_irb and fused_attention have a file each). Each writes
 * the body of its ops' kernels, dy_emit_<op> (declared in dy_codegen.h
 * from the op table), on floors 0 and 1 only: no family calls another
 * (what two share is a kernel builder of floor 1, cg_kernels.h). The
 * driver (floor 3) reads what this header declares. */
#ifndef DY_CODEGEN_CG_OPS_H
#define DY_CODEGEN_CG_OPS_H

#include "cg_kernels.h"

/* emit_attention.c: the scratch of fused_attention (one group's v in
 * panels, a block's q^T and scores, for the keys' bound at max_batch). */
int64_t dy_cg_attention_scratch(const dy_program *p, const dy_op *op, int64_t max_batch);
/* emit_dwpw.c, emit_irb.c: the scratch of fused_dwpw and fused_irb (bytes). */
int64_t dy_cg_dwpw_scratch(const dy_program *p, const dy_op *op, int threads);
int64_t dy_cg_irb_scratch(const dy_program *p, const dy_op *op, int threads);

#endif /* DY_CODEGEN_CG_OPS_H */
