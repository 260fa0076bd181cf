/* gate.c - a model with two inputs for `dy2stc compile gate.c`, whose
 * marked forward has the layer's own signature (a dy_layer_vtable
 * forward), so the same function serves eager calls and the trace.
 *
 *   dy2stc compile gate.c -o gate_exe
 *   ./gate_exe --input x=x.npy --input c=c.npy --output-dir out
 *
 * A gated fusion of a feature vector x with a context c (both f32[B, 8]):
 *   g = sigmoid(Wg [x, c]),  y = g * tanh(Wx x) + (1 - g) * c.
 * Run as the ordinary program `static_gate [--seed S] [--out DIR]` it
 * writes DIR/x.npy, DIR/c.npy and DIR/eager_out.npy (batch 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime.h"

typedef struct {
  dy_layer base;
  dy_layer *wg;   /* Linear 16 -> 8: the gate from [x, c] */
  dy_layer *wx;   /* Linear 8 -> 8: the candidate from x */
} gate;

DY_TO_STATIC("x: f32[-1,8]", "c: f32[-1,8]")
static dy_tensor *gate_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  gate *m = (gate *)self;
  dy_tensor *x = in[0], *c = in[1];
  dy_tensor *g = dy_sigmoid(dy_call1(m->wg, dy_concat((dy_tensor *const[]){x, c}, 2, 1)));
  dy_tensor *cand = dy_tanh(dy_call1(m->wx, x));
  dy_tensor *keep = dy_sub(dy_full(DY_F32, 0, NULL, 1.0), g);
  return dy_add(dy_mul(g, cand), dy_mul(keep, c));
}

static const dy_layer_vtable gate_vtable = {.type_name = "Gate", .forward = gate_forward};

DY_MODEL
dy_layer *make_gate(void) {
  gate *m = (gate *)dy_layer_new(sizeof(gate), &gate_vtable, "gate");
  if (!m)
    return NULL;
  m->wg = dy_layer_add_child(&m->base, dy_linear_new(16, 8));
  m->wx = dy_layer_add_child(&m->base, dy_linear_new(8, 8));
  if (!m->wg || !m->wx) {
    dy_layer_free(&m->base);
    return NULL;
  }
  return &m->base;
}

int main(int argc, char **argv) {
  unsigned long long seed = 0;
  const char *dir = ".";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      dir = argv[++i];
    else {
      fprintf(stderr, "usage: static_gate [--seed S] [--out DIR]\n");
      return 2;
    }
  }
  dy_seed(seed);
  dy_layer *model = make_gate();
  if (!model) {
    fprintf(stderr, "static_gate: building failed\n");
    return 1;
  }
  dy_scope_begin();
  dy_tensor *x = dy_randn(2, DY_SHAPE(4, 8));
  dy_tensor *c = dy_randn(2, DY_SHAPE(4, 8));
  dy_tensor *out = dy_call2(model, x, c);
  int rc = 0;
  const char *names[] = {"x", "c", "eager_out"};
  dy_tensor *tensors[] = {x, c, out};
  for (int i = 0; i < 3 && out && !rc; i++) {
    char path[4096];
    dy_error err = {0};
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
    if (dy_npy_write(path, tensors[i], &err)) {
      fprintf(stderr, "static_gate: %s\n", err.msg);
      rc = 1;
    }
  }
  if (!out) {
    char line[1024];
    dy_error_format(dy_last_error(), line, sizeof line);
    fprintf(stderr, "static_gate: eager run: %s\n", line);
    rc = 1;
  } else if (!rc) {
    dy_tensor_print(out, "eager out", 8, stdout);
  }
  dy_scope_end();
  dy_layer_free(model);
  return rc;
}
