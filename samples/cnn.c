/* cnn.c - a small VGG-style CNN on 3x32x32 images (x: f32[None, 3, 32, 32]):
 *
 *   3 x [conv 3x3 (pad 1) -> batch_norm -> relu -> maxpool 2], 32/64/128
 *   channels -> global average pool -> flatten -> linear 128->10
 *
 * Before export it runs a few batches in train mode, so the batch norms'
 * running statistics are not the trivial 0 and 1, then switches to eval:
 * the saved Program has eval semantics (the seed's advice), and the
 * compiler folds each batch norm into its convolution.
 *
 *   ./cnn [--batch N] [--out DIR]    (as samples/mlp.c)
 */
#include "sample.h"

static void block(dy_layer *s, int64_t cin, int64_t cout) {
  /* one line per append: __LINE__ inside a macro call that spans lines is
   * its first line under gcc and its last under clang */
  dy_conv2d_params same = {.padding = {1, 1, 1, 1}};
  dy_sequential_append(s, dy_conv2d_layer_new(cin, cout, 3, 3, same, true));
  dy_sequential_append(s, dy_batch_norm2d_new(cout, 0.9, 1e-5));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {2, 2}}));
}

static dy_layer *cnn_new(void) {
  dy_layer *s = dy_sequential_new();
  block(s, 3, 32);
  block(s, 32, 64);
  block(s, 64, 128);
  dy_sequential_append(s, dy_adaptive_avg_pool2d_layer_new(1, 1));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(128, 10));
  return s;
}

int main(int argc, char **argv) {
  long batch = 4;
  const char *dir = ".";
  int rc = sample_args("cnn", argc, argv, &batch, &dir);
  if (rc)
    return rc;
  dy_seed(11);
  dy_layer *net = cnn_new();
  if (!net || dy_last_error())
    return sample_die("cnn", "building", dy_last_error());
  /* warm the running statistics up in train mode */
  for (int i = 0; i < 3; i++) {
    dy_scope_begin();
    dy_call1(net, dy_randn(4, DY_SHAPE(8, 3, 32, 32)));
    dy_scope_end();
  }
  dy_layer_eval(net);
  dy_scope_begin();
  dy_tensor *x = dy_randn(4, DY_SHAPE(batch, 3, 32, 32));
  dy_tensor *out = dy_call1(net, x);
  if (!out)
    return sample_die("cnn", "eager run", dy_last_error());
  dy_tensor_print(out, "eager out", 10, stdout);
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 3, 32, 32}};
  rc = sample_save("cnn", net, &spec, 1, dir, 2, (const char *[]){"x", "eager_out"},
                   (dy_tensor *[]){x, out});
  dy_scope_end();
  dy_layer_free(net);
  return rc;
}
