/* ops_nn.c - eager entry points of the nn family (dy_nn.h).
 *
 * Each is a thin wrapper over dy_apply: it turns the caller's settings into
 * the op's attributes (ops_nn.def), filling in defaults for zero fields, and
 * leaves all checking to inference (ir/infer/infer_nn.c), so an eager call, a
 * trace and a loaded Program reject the same things with the same words.
 */
#include "dy_runtime_internal.h"

static int64_t or_one(int64_t v) { return v ? v : 1; }

static dy_tensor *conv_impl(dy_op_kind kind, dy_tensor *x, dy_tensor *w,
                            const int64_t stride[2], const int64_t padding[4],
                            const int64_t dilation[2], int64_t groups,
                            const int64_t *output_padding, dy_srcloc loc) {
  int64_t st[2] = {or_one(stride[0]), or_one(stride[1])};
  int64_t dil[2] = {or_one(dilation[0]), or_one(dilation[1])};
  /* conv2d_transpose: conv2d's four attributes, then output_padding */
  dy_conv2d_transpose_attrs a = {
      .given = DY_GIVEN_ALL, .strides = st, .n_strides = 2, .paddings = padding,
      .n_paddings = 4, .dilations = dil, .n_dilations = 2, .groups = or_one(groups),
      .output_padding = output_padding, .n_output_padding = output_padding ? 2 : 0};
  if (!output_padding)
    a.given &= ~DY_GIVEN(conv2d_transpose, output_padding);
  dy_attr attrs[DY_CONV2D_TRANSPOSE_NATTRS];
  int n = dy_conv2d_transpose_attrs_put(&a, attrs);
  return dy_apply(kind, (dy_tensor *const[]){x, w}, 2, attrs, n, loc);
}

dy_tensor *dy_conv2d_at(dy_tensor *x, dy_tensor *w, dy_conv2d_params p,
                        dy_srcloc loc) {
  return conv_impl(DY_OP_CONV2D, x, w, p.stride, p.padding, p.dilation, p.groups,
                   NULL, loc);
}

dy_tensor *dy_conv2d_transpose_at(dy_tensor *x, dy_tensor *w,
                                  dy_conv2d_transpose_params p, dy_srcloc loc) {
  return conv_impl(DY_OP_CONV2D_TRANSPOSE, x, w, p.stride, p.padding, p.dilation,
                   p.groups, p.output_padding, loc);
}

/* pool2d with every attribute spelled out. */
static dy_tensor *pool_impl(dy_tensor *x, const char *type, const int64_t k[2],
                            const int64_t st[2], const int64_t pad[4],
                            bool ceil_mode, bool exclusive, bool global,
                            bool adaptive, dy_srcloc loc) {
  dy_attr attrs[DY_POOL2D_NATTRS];
  int n_attrs = dy_pool2d_attrs_put(&(dy_pool2d_attrs){
      .given = DY_GIVEN_ALL, .pooling_type = type, .ksize = k, .n_ksize = 2,
      .strides = st, .n_strides = 2, .paddings = pad, .n_paddings = 4, .ceil_mode = ceil_mode,
      .exclusive = exclusive, .global_pooling = global, .adaptive = adaptive}, attrs);
  return dy_apply(DY_OP_POOL2D, (dy_tensor *const[]){x}, 1, attrs, n_attrs, loc);
}

static dy_tensor *window_pool(dy_tensor *x, const char *type, dy_pool2d_params p,
                              dy_srcloc loc) {
  int64_t st[2] = {p.stride[0] ? p.stride[0] : p.kernel[0],
                   p.stride[1] ? p.stride[1] : p.kernel[1]};
  return pool_impl(x, type, p.kernel, st, p.padding, p.ceil_mode, !p.count_include_pad,
                   false, false, loc);
}

dy_tensor *dy_max_pool2d_at(dy_tensor *x, dy_pool2d_params p, dy_srcloc loc) {
  return window_pool(x, "max", p, loc);
}

dy_tensor *dy_avg_pool2d_at(dy_tensor *x, dy_pool2d_params p, dy_srcloc loc) {
  return window_pool(x, "avg", p, loc);
}

static const int64_t ones2[2] = {1, 1}, zeros4[4] = {0, 0, 0, 0};

dy_tensor *dy_adaptive_avg_pool2d_at(dy_tensor *x, int64_t out_h, int64_t out_w,
                                     dy_srcloc loc) {
  return pool_impl(x, "avg", (const int64_t[]){out_h, out_w}, ones2, zeros4, false,
                   true, false, true, loc);
}

dy_tensor *dy_adaptive_max_pool2d_at(dy_tensor *x, int64_t out_h, int64_t out_w,
                                     dy_srcloc loc) {
  return pool_impl(x, "max", (const int64_t[]){out_h, out_w}, ones2, zeros4, false,
                   true, false, true, loc);
}

dy_tensor *dy_global_avg_pool2d_at(dy_tensor *x, dy_srcloc loc) {
  return pool_impl(x, "avg", ones2, ones2, zeros4, false, true, true, false, loc);
}

dy_tensor *dy_global_max_pool2d_at(dy_tensor *x, dy_srcloc loc) {
  return pool_impl(x, "max", ones2, ones2, zeros4, false, true, true, false, loc);
}

dy_tensor *dy_batch_norm_at(dy_tensor *x, dy_tensor *scale, dy_tensor *bias,
                            dy_tensor *mean, dy_tensor *var, double eps,
                            double momentum, bool training, dy_srcloc loc) {
  dy_attr attrs[DY_BATCH_NORM_NATTRS];
  int n_attrs = dy_batch_norm_attrs_put(&(dy_batch_norm_attrs){
      .given = DY_GIVEN_ALL, .epsilon = eps, .momentum = momentum, .is_test = !training}, attrs);
  return dy_apply(DY_OP_BATCH_NORM, (dy_tensor *const[]){x, scale, bias, mean, var},
                  5, attrs, n_attrs, loc);
}

dy_tensor *dy_layer_norm_at(dy_tensor *x, dy_tensor *scale, dy_tensor *bias,
                            int begin_norm_axis, double eps, dy_srcloc loc) {
  dy_attr attrs[DY_LAYER_NORM_NATTRS];
  int n_attrs = dy_layer_norm_attrs_put(&(dy_layer_norm_attrs){
      .given = DY_GIVEN_ALL, .begin_norm_axis = begin_norm_axis, .epsilon = eps}, attrs);
  return dy_apply(DY_OP_LAYER_NORM, (dy_tensor *const[]){x, scale, bias}, 3, attrs, n_attrs,
                  loc);
}

dy_tensor *dy_group_norm_at(dy_tensor *x, dy_tensor *scale, dy_tensor *bias,
                            int64_t groups, double eps, dy_srcloc loc) {
  dy_attr attrs[DY_GROUP_NORM_NATTRS];
  int n_attrs = dy_group_norm_attrs_put(&(dy_group_norm_attrs){
      .given = DY_GIVEN_ALL, .groups = groups, .epsilon = eps}, attrs);
  return dy_apply(DY_OP_GROUP_NORM, (dy_tensor *const[]){x, scale, bias}, 3, attrs, n_attrs,
                  loc);
}

dy_tensor *dy_dropout_at(dy_tensor *x, double p, bool training, dy_srcloc loc) {
  /* the seed is drawn only when it matters, so eval calls leave the
   * generator's sequence alone; a symbolic x (static mode) draws none
   * either: a training Program's dropouts are reseeded before every run
   * (dy_program_reseed_dropout), in the order an eager forward draws */
  uint64_t seed = training && x && x->data ? dy_rand_u64() : 0;
  dy_attr attrs[DY_DROPOUT_NATTRS];
  int n_attrs = dy_dropout_attrs_put(&(dy_dropout_attrs){
      .given = DY_GIVEN_ALL, .p = p, .is_test = !training, .seed = (int64_t)seed}, attrs);
  return dy_apply(DY_OP_DROPOUT, (dy_tensor *const[]){x}, 1, attrs, n_attrs, loc);
}
