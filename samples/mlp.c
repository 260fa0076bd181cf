/* mlp.c - a 784-512-256-10 multilayer perceptron with ReLU, built from
 * Sequential and Linear, with a dynamic batch: x is f32[None, 784].
 *
 *   ./mlp [--batch N] [--out DIR]
 *
 * runs it eagerly on seeded random input, prints the first outputs, saves
 * DIR/mlp.dymodel + DIR/mlp.dyparams with dy_jit_save, and writes
 * DIR/x.npy and DIR/eager_out.npy for comparison with the compiled model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime.h"

static dy_layer *mlp_new(void) {
  dy_layer *seq = dy_sequential_new();
  dy_sequential_append(seq, dy_linear_new(784, 512));
  dy_sequential_append(seq, dy_relu_layer_new());
  dy_sequential_append(seq, dy_linear_new(512, 256));
  dy_sequential_append(seq, dy_relu_layer_new());
  dy_sequential_append(seq, dy_linear_new(256, 10));
  return seq;
}

static int die(const char *what, const dy_error *err) {
  char line[1024];
  dy_error_format(err, line, sizeof line);
  fprintf(stderr, "mlp: %s: %s\n", what, line);
  return 1;
}

int main(int argc, char **argv) {
  long batch = 4;
  const char *dir = ".";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
      batch = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      dir = argv[++i];
    else {
      fprintf(stderr, "usage: mlp [--batch N] [--out DIR]\n");
      return 2;
    }
  }
  if (batch < 1) {
    fprintf(stderr, "mlp: --batch must be at least 1\n");
    return 2;
  }
  dy_seed(7);
  dy_layer *net = mlp_new();
  if (!net)
    return die("building", dy_last_error());
  dy_layer_eval(net);

  dy_scope_begin();
  dy_tensor *x = dy_randn(2, DY_SHAPE(batch, 784));
  dy_tensor *out = dy_call1(net, x);
  if (!out)
    return die("eager run", dy_last_error());
  dy_tensor_print(out, "eager out", 10, stdout);

  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 784}};
  char path[4096], file[4200];
  snprintf(path, sizeof path, "%s/mlp", dir);
  dy_error err = {0};
  if (dy_jit_save(net, &spec, 1, path, &err))
    return die("jit_save", &err);
  printf("saved %s.dymodel and %s.dyparams\n", path, path);
  const char *names[] = {"x", "eager_out"};
  dy_tensor *tensors[] = {x, out};
  for (int i = 0; i < 2; i++) {
    snprintf(file, sizeof file, "%s/%s.npy", dir, names[i]);
    if (dy_npy_write(file, tensors[i], &err))
      return die("writing", &err);
    printf("wrote %s\n", file);
  }
  dy_scope_end();
  dy_layer_free(net);
  return 0;
}
