/* paddle_custom.c - an op type of a custom op (runtime/dy_custom.h: a
 * Paddle Inference plugin, PD_BUILD_OP, whose kernel and shape rule the
 * user registered, e.g. by --custom-op gap=gap.c) becomes a custom op:
 * every input slot's vars in order, the first output slot's first var;
 * the user's shape function runs here on the inputs' types, and its
 * answer is the op's out_dtype and out_shape. The op's own Paddle
 * attributes are not passed (the demo's gap ignores its test_attr*).
 */
#include <string.h>

#include "paddle_internal.h"

dy_status pd_import_custom(pd_ctx *c, const dy_custom_op *cu) {
  const PdOp *op = c->op;
  int in[DY_MAX_OP_INPUTS], n = 0, dtypes[DY_MAX_OP_INPUTS], ranks[DY_MAX_OP_INPUTS];
  const int64_t *shapes[DY_MAX_OP_INPUTS];
  for (size_t s = 0; s < op->n_inputs; s++)
    for (size_t k = 0; k < op->inputs[s]->n_arguments; k++) {
      if (n == DY_MAX_OP_INPUTS)
        return pd_fail(c, DY_STATUS_LIMIT, "custom op '%s': more than %d inputs", op->type,
                       DY_MAX_OP_INPUTS);
      PD_TRY(pd_in(c, op->inputs[s]->parameter, (int)k, &in[n]));
      const dy_type *t = pd_type(c, in[n]);
      dtypes[n] = (int)t->dtype;
      ranks[n] = t->rank;
      shapes[n] = t->shape;
      for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < -1)
          return pd_fail(c, DY_STATUS_UNSUPPORTED,
                         "custom op '%s': input %d has a size symbol besides the batch "
                         "(pin it: --shape)", op->type, n);
      n++;
    }
  if (n == 0 || op->n_outputs == 0 || op->outputs[0]->n_arguments == 0)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "custom op '%s' needs an input and an output",
                   op->type);
  int out_dtype = -1, out_rank = -1;
  int64_t out_shape[DY_MAX_DIMS] = {0};
  char msg[256] = "";
  if (cu->shape(cu->ctx, n, dtypes, ranks, shapes, &out_dtype, &out_rank, out_shape, msg,
                sizeof msg))
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "custom op '%s': its shape function refused "
                   "the inputs%s%s", op->type, msg[0] ? ": " : "", msg);
  if (out_dtype < 0 || out_dtype >= DY_DTYPE_COUNT || out_rank < 0 || out_rank > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "custom op '%s': its shape function gave "
                   "dtype %d, rank %d", op->type, out_dtype, out_rank);
  dy_attr a[DY_CUSTOM_NATTRS];
  int n_a = dy_custom_attrs_put(&(dy_custom_attrs){.given = DY_GIVEN_ALL, .name = op->type,
                                                   .out_shape = out_shape,
                                                   .n_out_shape = out_rank,
                                                   .out_dtype = out_dtype}, a);
  int o;
  return pd_op(c, "custom", in, n, a, n_a, op->outputs[0]->arguments[0], &o);
}
