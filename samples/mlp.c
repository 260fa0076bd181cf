/* mlp.c - a 784-512-256-10 multilayer perceptron with ReLU, built from
 * Sequential and Linear, with a dynamic batch: x is f32[None, 784].
 *
 *   ./mlp [--batch N] [--out DIR]
 *
 * runs it eagerly on seeded random input, prints the first outputs, saves
 * DIR/mlp.dymodel + DIR/mlp.dyparams with dy_jit_save, and writes
 * DIR/x.npy and DIR/eager_out.npy for comparison with the compiled model.
 */
#include "sample.h"

static dy_layer *mlp_new(void) {
  dy_layer *seq = dy_sequential_new();
  dy_sequential_append(seq, dy_linear_new(784, 512));
  dy_sequential_append(seq, dy_relu_layer_new());
  dy_sequential_append(seq, dy_linear_new(512, 256));
  dy_sequential_append(seq, dy_relu_layer_new());
  dy_sequential_append(seq, dy_linear_new(256, 10));
  return seq;
}

int main(int argc, char **argv) {
  long batch = 4;
  const char *dir = ".";
  int rc = sample_args("mlp", argc, argv, &batch, &dir);
  if (rc)
    return rc;
  dy_seed(7);
  dy_layer *net = mlp_new();
  if (!net)
    return sample_die("mlp", "building", dy_last_error());
  dy_layer_eval(net);

  dy_scope_begin();
  dy_tensor *x = dy_randn(2, DY_SHAPE(batch, 784));
  dy_tensor *out = dy_call1(net, x);
  if (!out)
    return sample_die("mlp", "eager run", dy_last_error());
  dy_tensor_print(out, "eager out", 10, stdout);

  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 784}};
  rc = sample_save("mlp", net, &spec, 1, dir, 2, (const char *[]){"x", "eager_out"},
                   (dy_tensor *[]){x, out});
  dy_scope_end();
  dy_layer_free(net);
  return rc;
}
