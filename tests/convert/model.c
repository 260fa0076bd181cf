/* model.c - a C model for `dy2stc compile` whose forward branches and
 * loops on tensors with plain C if/while (test_convert.c's test_compile).
 *
 *   h = linear(x);  y = sum(h) > 0 ? relu(h) : -h
 *   i = 0; while (i < sum(x)) { i += 1; y = y / 2 + i }     -> y + i
 *
 * Run as a program, `model DIR` builds the model after dy_seed(0) (as
 * dy2stc compile does) and writes DIR/x<c>.npy and the eager result
 * DIR/eager<c>.npy for five inputs taking both branches and 0, 1 and many
 * trips.
 */
#include <stdio.h>

#include "dy_runtime.h"

typedef struct {
  dy_layer base;
  dy_layer *lin;
} model;

DY_TO_STATIC("x: f32[4]")
static dy_tensor *model_forward(dy_layer *self, dy_tensor *x) {
  model *m = (model *)self;
  dy_tensor *h = dy_call1(m->lin, x);
  dy_tensor *y;
  if (dy_bool(dy_greater(dy_reduce_sum(h, 0, NULL, false), dy_full(DY_F32, 0, NULL, 0.0))))
    y = dy_relu(h);
  else
    y = dy_neg(h);
  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);
  dy_tensor *i = dy_full(DY_F32, 0, NULL, 0.0);
  while (dy_bool(dy_less(i, s))) {
    i = dy_add(i, dy_full(DY_F32, 0, NULL, 1.0));
    y = dy_add(dy_mul(y, dy_full(DY_F32, 0, NULL, 0.5)), i);
  }
  return dy_add(y, i);
}

static dy_tensor *model_vforward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  return model_forward(self, in[0]);
}

static const dy_layer_vtable model_vtable = {.type_name = "Model", .forward = model_vforward};

DY_MODEL
dy_layer *make_model(void) {
  model *m = (model *)dy_layer_new(sizeof(model), &model_vtable, "model");
  if (!m)
    return NULL;
  m->lin = dy_layer_add_child(&m->base, dy_linear_new(4, 4));
  if (!m->lin) {
    dy_layer_free(&m->base);
    return NULL;
  }
  return &m->base;
}

int main(int argc, char **argv) {
  static const float xs[][4] = {{1, 2, 3, -1}, {-1, -2, 0.5f, 0}, {0.2f, 0.3f, 0.1f, 0.1f},
                                {0, 0, 0, 0},  {3, 3, 3, 3}};
  if (argc != 2)
    return 2;
  dy_seed(0);
  dy_layer *net = make_model();
  if (!net)
    return 1;
  int rc = 0;
  for (int c = 0; c < 5 && !rc; c++) {
    dy_scope_begin();
    dy_tensor *x = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(4), xs[c]);
    dy_tensor *y = dy_call1(net, x);
    char px[4096], py[4096];
    snprintf(px, sizeof px, "%s/x%d.npy", argv[1], c);
    snprintf(py, sizeof py, "%s/eager%d.npy", argv[1], c);
    dy_error err = {0};
    if (!y || dy_npy_write(px, x, &err) || dy_npy_write(py, y, &err)) {
      fprintf(stderr, "model: input %d: %s\n", c, y ? err.msg : dy_last_error()->msg);
      rc = 1;
    }
    dy_scope_end();
  }
  dy_layer_free(net);
  return rc;
}
