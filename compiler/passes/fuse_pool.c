/* fuse_pool.c - the pass "fuse-pool": a max pool after a convolution on
 * the small-depth direct kernel (algo "small", the pass conv-small)
 * becomes one fused_conv2d_pool, whose kernel pools the conv's output in
 * its store loop (codegen/kernels/emit_conv_small.c): the conv's full output is
 * never written to the arena nor read back (LeNet-5 and the CNN pool after
 * each conv).
 *
 * The rule: pool2d max, no padding, floor (ceil_mode 0), not global nor
 * adaptive, windows of at most 4 x 4, reading the output of a
 * fused_conv2d with algo "small" and no residual that nothing else reads.
 * `--disable-pass fuse-pool` keeps them apart (so does disabling
 * conv-small). */
#include <string.h>

#include "dy_passes.h"

/* Is op a max pool the small kernel can take in its store loop? */
static bool poolable(const dy_op *op) {
  if (op->kind != DY_OP_POOL2D)
    return false;
  dy_pool2d_attrs a = dy_pool2d_attrs_get(op);
  if (!a.pooling_type || strcmp(a.pooling_type, "max") != 0 || a.ceil_mode || a.global_pooling ||
      a.adaptive || a.n_ksize != 2 || a.n_strides != 2)
    return false;
  for (int i = 0; i < a.n_paddings; i++)
    if (a.paddings[i] != 0)
      return false;
  return a.ksize[0] >= 1 && a.ksize[0] <= 4 && a.ksize[1] >= 1 && a.ksize[1] <= 4 &&
         a.strides[0] >= 1 && a.strides[1] >= 1;
}

static dy_status fuse_pool_in(dy_program *p, int bi, bool *changed, const void *ctx,
                              dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *cv = b->ops[k];
    if (cv->kind != DY_OP_FUSED_CONV2D || cv->n_inputs > 3 ||
        strcmp(dy_fused_conv2d_attrs_get(cv).algo, "small") != 0)
      continue;
    dy_op *pool = dy_program_sole_user(p, cv->outputs[0]);
    if (!pool || !poolable(pool))
      continue;
    dy_fused_conv2d_attrs a = dy_fused_conv2d_attrs_get(cv);
    dy_pool2d_attrs pa = dy_pool2d_attrs_get(pool);
    dy_attr attrs[DY_FUSED_CONV2D_POOL_NATTRS];
    int n_attrs = dy_fused_conv2d_pool_attrs_put(&(dy_fused_conv2d_pool_attrs){
        .given = DY_GIVEN_ALL, .strides = a.strides, .n_strides = a.n_strides,
        .paddings = a.paddings, .n_paddings = a.n_paddings,
        .dilations = a.dilations, .n_dilations = a.n_dilations, .groups = a.groups, .act = a.act,
        .alpha = a.alpha, .pool_ksize = pa.ksize, .n_pool_ksize = pa.n_ksize,
        .pool_strides = pa.strides, .n_pool_strides = pa.n_strides}, attrs);
    int at = -1;
    for (int i = 0; i < b->n_ops && at < 0; i++)
      if (b->ops[i] == pool)
        at = i;
    dy_op *f = dy_program_append_op(p, bi, DY_OP_FUSED_CONV2D_POOL, cv->inputs, cv->n_inputs,
                                    pool->outputs, 1, attrs, n_attrs, pool->loc);
    /* sources in id order: the conv was remade by earlier passes (a later
     * id than the pool's), so the pool goes last through a copy */
    dy_op last = *pool;
    last.id = cv->id + 1;
    const dy_op *srcs[2] = {cv, &last};
    if (!f || at < 0 || !dy_op_set_srcs(p, f, srcs, 2))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-pool: out of memory");
    /* the fused op takes the pool's place (its inputs are defined before
     * the conv, so before it too), then the conv goes */
    dy_block_remove_op(b, at);
    dy_block_move_last_to(b, at);
    dy_block_remove_op(b, k);
    *changed = true;
    k--;
  }
  return DY_OK;
}

dy_status dy_pass_fuse_pool(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, fuse_pool_in, NULL, changed, err);
}
