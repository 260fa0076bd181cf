/* net.c - a model written for `dy2stc compile net.c`: the whole way from
 * eager C source to an executable in one command.
 *
 *   dy2stc compile net.c -o net_exe            # trace, compile, build
 *   ./net_exe --input x=x.npy --output-dir out
 *
 * It is also an ordinary program (built as the sample `static_net`):
 *
 *   ./static_net [--batch N] [--seed S] [--out DIR]
 *
 * builds the model after dy_seed(S) (default 0, the seed dy2stc compile
 * uses unless told --seed), runs it eagerly on seeded random input and
 * writes DIR/x.npy, DIR/eager_out.npy and DIR/net.dymodel + .dyparams
 * (dy_jit_save), whose weights `dy2stc compile net.c --params
 * DIR/net.dyparams` takes by name.
 *
 * The model: a residual MLP with a softmax head over 16 features,
 *   h = relu(fc1(x)),  h = h + tanh(fc2(h)),  y = softmax(head(h)).
 * DY_MODEL marks its constructor, DY_TO_STATIC its forward with the input
 * spec (the batch, -1, is dynamic); see dy_static.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime.h"

typedef struct {
  dy_layer base;
  dy_layer *fc1, *fc2, *head;   /* Linear 16->32, 32->32, 32->4 */
} net;

DY_TO_STATIC("x: f32[-1,16]")
static dy_tensor *net_forward(dy_layer *self, dy_tensor *x) {
  net *n = (net *)self;
  dy_tensor *h = dy_relu(dy_call1(n->fc1, x));
  h = dy_add(h, dy_tanh(dy_call1(n->fc2, h)));
  return dy_softmax(dy_call1(n->head, h), -1);
}

/* the layer's forward for eager calls (dy_call1) */
static dy_tensor *net_call(dy_layer *self, dy_tensor *const *in, int n_in) {
  return net_forward(self, in[0]);
}

static const dy_layer_vtable net_vtable = {.type_name = "Net", .forward = net_call};

DY_MODEL
dy_layer *make_net(void) {
  net *n = (net *)dy_layer_new(sizeof(net), &net_vtable, "net");
  if (!n)
    return NULL;
  n->fc1 = dy_layer_add_child(&n->base, dy_linear_new(16, 32));
  n->fc2 = dy_layer_add_child(&n->base, dy_linear_new(32, 32));
  n->head = dy_layer_add_child(&n->base, dy_linear_new(32, 4));
  if (!n->fc1 || !n->fc2 || !n->head) {
    dy_layer_free(&n->base);
    return NULL;
  }
  return &n->base;
}

static int fail(const char *what, const dy_error *err) {
  char line[1024];
  if (err)
    dy_error_format(err, line, sizeof line);
  fprintf(stderr, "static_net: %s: %s\n", what, err ? line : "failed");
  return 1;
}

int main(int argc, char **argv) {
  long batch = 3;
  unsigned long long seed = 0;
  const char *dir = ".";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
      batch = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      dir = argv[++i];
    else {
      fprintf(stderr, "usage: static_net [--batch N] [--seed S] [--out DIR]\n");
      return 2;
    }
  }
  if (batch < 1) {
    fprintf(stderr, "static_net: --batch must be at least 1\n");
    return 2;
  }
  dy_seed(seed);
  dy_layer *model = make_net();
  if (!model)
    return fail("building", dy_last_error());
  dy_layer_eval(model);

  /* the input comes after the weights in the generator's sequence */
  dy_scope_begin();
  dy_tensor *x = dy_randn(2, DY_SHAPE(batch, 16));
  dy_tensor *out = dy_call1(model, x);
  int rc = out ? 0 : fail("eager run", dy_last_error());
  dy_error err = {0};
  char path[4096];
  const char *names[] = {"x", "eager_out"};
  dy_tensor *tensors[] = {x, out};
  for (int i = 0; i < 2 && !rc; i++) {
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
    if (dy_npy_write(path, tensors[i], &err))
      rc = fail("writing", &err);
  }
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 16}};
  snprintf(path, sizeof path, "%s/net", dir);
  if (!rc && dy_jit_save(model, &spec, 1, path, &err))
    rc = fail("jit_save", &err);
  if (!rc) {
    dy_tensor_print(out, "eager out", 12, stdout);
    printf("wrote %s/x.npy, %s/eager_out.npy, %s.dymodel and %s.dyparams\n", dir, dir, path,
           path);
  }
  dy_scope_end();
  dy_layer_free(model);
  return rc;
}
