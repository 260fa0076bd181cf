/* lenet5.c - LeNet-5 on 1x28x28 images (x: f32[None, 1, 28, 28]):
 *
 *   conv 5x5 (1->6, pad 2) relu maxpool 2 -> conv 5x5 (6->16) relu maxpool 2
 *   -> flatten -> linear 400->120 relu -> 120->84 relu -> 84->10
 *
 *   ./lenet5 [--batch N] [--out DIR]    (as samples/mlp.c)
 */
#include "sample.h"

static dy_layer *lenet5_new(void) {
  dy_layer *s = dy_sequential_new();
  dy_sequential_append(s, dy_conv2d_layer_new(1, 6, 5, 5, (dy_conv2d_params){.padding = {2, 2, 2, 2}}, true));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {2, 2}}));
  dy_sequential_append(s, dy_conv2d_layer_new(6, 16, 5, 5, (dy_conv2d_params){0}, true));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {2, 2}}));
  dy_sequential_append(s, dy_flatten_layer_new(1, -1));
  dy_sequential_append(s, dy_linear_new(400, 120));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_linear_new(120, 84));
  dy_sequential_append(s, dy_relu_layer_new());
  dy_sequential_append(s, dy_linear_new(84, 10));
  return s;
}

int main(int argc, char **argv) {
  long batch = 4;
  const char *dir = ".";
  int rc = sample_args("lenet5", argc, argv, &batch, &dir);
  if (rc)
    return rc;
  dy_seed(5);
  dy_layer *net = lenet5_new();
  if (!net || dy_last_error())
    return sample_die("lenet5", "building", dy_last_error());
  dy_layer_eval(net);
  dy_scope_begin();
  dy_tensor *x = dy_rand(4, DY_SHAPE(batch, 1, 28, 28));
  dy_tensor *out = dy_call1(net, x);
  if (!out)
    return sample_die("lenet5", "eager run", dy_last_error());
  dy_tensor_print(out, "eager out", 10, stdout);
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 1, 28, 28}};
  rc = sample_save("lenet5", net, &spec, 1, dir, 2, (const char *[]){"x", "eager_out"},
                   (dy_tensor *[]){x, out});
  dy_scope_end();
  dy_layer_free(net);
  return rc;
}
