/* table.c - floor 3: the op table of the emitters, dy_cg_table (op ->
 * its family's dy_emit_<op>, built from ir/ops.def, so a missing emitter is
 * a link error), and the scratch each kernel needs
 * (dy_codegen_scratch_bytes, which the memory plan asks). */
#include "cg_program.h"

const dy_cg_fn dy_cg_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = dy_emit_##name,
#include "ops.def"
#undef DY_OP
};

int64_t dy_codegen_scratch_bytes(const dy_program *p, const dy_op *op, int64_t max_batch,
                                 int threads) {
  /* every kernel's scratch serves one matrix or image (or head) at a time */
  switch (op->kind) {
  case DY_OP_MATMUL:
  case DY_OP_FUSED_MATMUL:
    return dy_gemm_matmul_scratch(p, op, threads, max_batch); /* B packed once; A per block */
  case DY_OP_CONV2D:
  case DY_OP_FUSED_CONV2D:
  case DY_OP_FUSED_CONV2D_POOL:
    return dy_cg_conv_scratch(p, op, threads);
  case DY_OP_FUSED_ATTENTION:
    return dy_cg_attention_scratch(p, op, max_batch); /* v panels, q^T, a block of scores */
  case DY_OP_FUSED_DWPW:
    return dy_cg_dwpw_scratch(p, op, threads);
  case DY_OP_FUSED_IRB:
    return dy_cg_irb_scratch(p, op, threads);
  default:
    return 0;
  }
}
