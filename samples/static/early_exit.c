/* early_exit.c - an early-exit CNN written with a plain C `if` on a tensor,
 * for `dy2stc compile early_exit.c` (the if becomes a cond op: both paths
 * stay in the Program; compiler/cfront/cconvert.c).
 *
 *   dy2stc convert early_exit.c              # see the rewritten forward
 *   dy2stc compile early_exit.c -o ee_exe    # convert, trace, compile
 *   ./ee_exe --input x=x.npy --output-dir out
 *
 * A cheap head (conv 1->4, global average, linear 4->3) answers when its
 * most probable class passes EXIT_THRESHOLD; otherwise a deeper stage
 * (conv 4->8 on the same features, linear 8->3) runs. x: f32[1,1,8,8].
 * As the program `static_early_exit --out DIR` it builds the model after
 * dy_seed(0) and writes, for N_CASES inputs (faint ones, which take the
 * deep path, and strong ones, which exit early), DIR/in<c>_x.npy and the
 * eager result DIR/eager<c>.npy, and prints which path each took.
 */
#include <stdio.h>
#include <string.h>

#include "dy_runtime.h"

#define EXIT_THRESHOLD 0.6
#define N_CASES 4

typedef struct {
  dy_layer base;
  dy_layer *conv1, *cheap, *conv2, *deep;
} early_exit;

static dy_tensor *pooled(dy_tensor *h, int64_t channels) {
  return dy_reshape(dy_global_avg_pool2d(h), 2, DY_SHAPE(1, channels));
}

/* The cheap head's confidence: its largest class probability. */
static dy_tensor *confidence(dy_tensor *probs) {
  return dy_reduce_max(probs, 0, NULL, false);
}

DY_TO_STATIC("x: f32[1,1,8,8]")
static dy_tensor *early_exit_forward(dy_layer *self, dy_tensor *x) {
  early_exit *m = (early_exit *)self;
  dy_tensor *h = dy_relu(dy_call1(m->conv1, x));
  dy_tensor *probs = dy_softmax(dy_call1(m->cheap, pooled(h, 4)), -1);
  if (!dy_bool(dy_greater(confidence(probs), dy_full(DY_F32, 0, NULL, EXIT_THRESHOLD)))) {
    dy_tensor *d = dy_relu(dy_call1(m->conv2, h));
    probs = dy_softmax(dy_call1(m->deep, pooled(d, 8)), -1);
  }
  return probs;
}

static dy_tensor *early_exit_vforward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  return early_exit_forward(self, in[0]);
}

static const dy_layer_vtable early_exit_vtable = {.type_name = "EarlyExit",
                                                  .forward = early_exit_vforward};

DY_MODEL
dy_layer *make_early_exit(void) {
  early_exit *m = (early_exit *)dy_layer_new(sizeof(early_exit), &early_exit_vtable, "ee");
  if (!m)
    return NULL;
  dy_conv2d_params same = {.padding = {1, 1, 1, 1}};
  m->conv1 = dy_layer_add_child(&m->base, dy_conv2d_layer_new(1, 4, 3, 3, same, true));
  m->cheap = dy_layer_add_child(&m->base, dy_linear_new(4, 3));
  m->conv2 = dy_layer_add_child(&m->base, dy_conv2d_layer_new(4, 8, 3, 3, same, true));
  m->deep = dy_layer_add_child(&m->base, dy_linear_new(8, 3));
  if (!m->conv1 || !m->cheap || !m->conv2 || !m->deep) {
    dy_layer_free(&m->base);
    return NULL;
  }
  return &m->base;
}

int main(int argc, char **argv) {
  const char *dir = argc == 3 && strcmp(argv[1], "--out") == 0 ? argv[2] : NULL;
  if (!dir) {
    fprintf(stderr, "usage: static_early_exit --out DIR\n");
    return 2;
  }
  static const double scale[N_CASES] = {0.01, 0.1, 40.0, 100.0};
  dy_seed(0);
  dy_layer *model = make_early_exit();
  if (!model)
    return 1;
  int rc = 0;
  for (int c = 0; c < N_CASES && !rc; c++) {
    dy_scope_begin();
    dy_tensor *x = dy_mul(dy_randn(4, DY_SHAPE(1, 1, 8, 8)), dy_full(DY_F32, 0, NULL, scale[c]));
    dy_tensor *y = dy_call1(model, x);
    early_exit *m = (early_exit *)model;
    dy_tensor *h = dy_relu(dy_call1(m->conv1, x));
    bool ok;
    double conf = dy_item(confidence(dy_softmax(dy_call1(m->cheap, pooled(h, 4)), -1)), &ok);
    char px[4096], py[4096];
    snprintf(px, sizeof px, "%s/in%d_x.npy", dir, c);
    snprintf(py, sizeof py, "%s/eager%d.npy", dir, c);
    dy_error err = {0};
    if (!y || !ok || dy_npy_write(px, x, &err) || dy_npy_write(py, y, &err)) {
      fprintf(stderr, "static_early_exit: case %d: %s\n", c, y ? err.msg : dy_last_error()->msg);
      rc = 1;
    } else {
      printf("case %d: confidence %.3f: %s\n", c, conf,
             conf > EXIT_THRESHOLD ? "early exit" : "deep path");
    }
    dy_scope_end();
  }
  dy_layer_free(model);
  return rc;
}
