/* infer.c - shape and dtype inference: the dispatcher.
 *
 * Each dy_infer_<name> maps input types to output types and checks the
 * op's attributes. The same functions serve the tracer (which types vars
 * with -1 for the dynamic batch), eager calls and the static executor
 * (concrete shapes) and the verifier (which re-infers every op). They see
 * an op and its input types, never a Program (dy_infer_in, blocks.c, adds
 * the control ops' blocks).
 *
 * The files, top to bottom (a file calls only those below it):
 *
 *   infer.c           the table dy_infer_table (built from ops.def) and
 *                     dy_infer, which checks arity and every output type
 *   infer_fused.c     the fused family; infer_quant.c, the quantized one
 *                     (both also reuse conv2d's and matmul's rules)
 *   infer_<family>.c  one per ops_<family>.def; infer_core.c holds the
 *                     core ops of ops.def and every plain elementwise op
 *   infer_util.c      axes and numpy broadcasting, shared by all
 *
 * Symbolic dims. A negative dim is a size expression over named symbols
 * (dims.c; -1 is the batch B). Inference computes with expressions exactly
 * (reshape, flatten, concat, slice, pad, tile: products, sums, exact
 * quotients), and two dims are equal when their normal forms are; a dim
 * that is not expressible, or a static dim that would have to equal a
 * symbolic one (broadcasting B against 7), is an error. Errors name the op
 * and its source line through dy_error_at.
 */
#include "dy_ir.h"

const dy_infer_fn dy_infer_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = dy_infer_##name,
#include "ops.def"
#undef DY_OP
};

dy_status dy_infer(const dy_op *op, const dy_type *in, int n_in, dy_type *out,
                   dy_error *err) {
  const dy_op_info *info = dy_op_info_of(op->kind);
  if ((info->n_in >= 0 && n_in != info->n_in) || (info->n_in < 0 && n_in < 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: takes %d inputs, got %d", info->name, info->n_in, n_in);
  for (int i = 0; i < n_in; i++)
    if (in[i].rank < 0 || in[i].rank > DY_MAX_DIMS)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: input %d has rank %d", info->name, i, in[i].rank);
  dy_status s = dy_infer_table[op->kind](op, in, n_in, out, err);
  /* every output type inference makes is checked once here: no shape rule
   * can hand on a size that wraps or exceeds DY_MAX_TENSOR_BYTES */
  for (int i = 0; s == DY_OK && i < info->n_out; i++)
    s = dy_type_check(&out[i], op, info->n_out > 1 ? "an output" : "the output", err);
  return s;
}
