/* simple_net.c - the seed example: PaddlePaddle's SimpleNet, in C.
 *
 *   class SimpleNet(paddle.nn.Layer):
 *       def __init__(self):  self.linear = paddle.nn.Linear(10, 3)
 *       def forward(self, x, y):  return self.linear(x) + y
 *
 * It runs the model eagerly, runs it again through dy_to_static (the
 * static executor, Paddle's "方式二"), and saves it with dy_jit_save and
 * the InputSpecs x: f32[None, 10], y: f32[3]. It also writes its inputs
 * and eager output as .npy so the compiled executable can be compared:
 *
 *   ./simple_net [--batch N] [--out DIR]
 *   dy2stc compile DIR/simple_net.dymodel -o simple_net_bin
 *   ./simple_net_bin --input x=DIR/x.npy --input y=DIR/y.npy --output-dir OUT
 *   dy2stc compare OUT/add_0.npy DIR/eager_out.npy
 */
#include "sample.h"

typedef struct {
  dy_layer base;
  dy_layer *linear;
} simple_net;

static dy_tensor *simple_net_forward(dy_layer *self, dy_tensor *const *in, int n) {
  simple_net *net = (simple_net *)self;
  (void)n;
  return dy_add(dy_call1(net->linear, in[0]), in[1]);
}

static const dy_layer_vtable simple_net_vt = {"SimpleNet", simple_net_forward, NULL, false};

static dy_layer *simple_net_new(void) {
  simple_net *net = (simple_net *)dy_layer_new(sizeof *net, &simple_net_vt, "simple_net");
  if (net)
    net->linear = dy_layer_add_child(&net->base, dy_linear_new(10, 3));
  return &net->base;
}

int main(int argc, char **argv) {
  long batch = 2;
  const char *dir = ".";
  int rc = sample_args("simple_net", argc, argv, &batch, &dir);
  if (rc)
    return rc;
  dy_seed(2024);
  dy_layer *net = simple_net_new();
  dy_layer_eval(net);

  /* eager: x = rand([batch, 10]), y = rand([3]) */
  dy_scope_begin();
  dy_tensor *x = dy_rand(2, DY_SHAPE(batch, 10));
  dy_tensor *y = dy_rand(1, DY_SHAPE(3));
  dy_tensor *out = dy_call2(net, x, y);
  if (!out)
    return sample_die("simple_net", "eager run", dy_last_error());
  dy_tensor_print(out, "eager out", 12, stdout);

  /* to_static: the same call, built once into a Program and interpreted */
  dy_layer *static_net = dy_to_static(net);
  dy_tensor *out2 = dy_call2(static_net, x, y);
  if (!out2)
    return sample_die("simple_net", "to_static run", dy_last_error());
  dy_tensor_print(out2, "to_static out", 12, stdout);

  /* jit.save with InputSpec: x is [None, 10], y is [3] */
  dy_input_spec specs[] = {
      {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 10}},
      {.name = "y", .dtype = DY_F32, .rank = 1, .shape = {3}},
  };
  rc = sample_save("simple_net", net, specs, 2, dir, 3,
                   (const char *[]){"x", "y", "eager_out"}, (dy_tensor *[]){x, y, out});
  dy_scope_end();
  dy_layer_free(static_net);
  dy_layer_free(net);
  return rc;
}
