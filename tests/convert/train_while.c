/* train_while.c - a C model for `dy2stc train NET.c` and `dy2stc compile
 * NET.c --train` (test_while_train.c): plain C while and if on tensors,
 * which the converter turns into a while carrying a break flag, with a
 * cond in its body; the trip count depends on the data, l2 is read inside
 * the loop (a captured parameter):
 *
 *   h = tanh(l1(x)); i = 0
 *   while (i < 4) {
 *     h = mean(h) > 0 ? tanh(l2(h)) : h / 2 + l2(h) / 4
 *     i = i + 1
 *     if (mean(h) > 0.05) break
 *   }
 *   out = l3(h)                                       [N, 4] -> [N, 2]
 *
 * The same net as test_while_train.c's WhileNet (its initial parameters
 * too: make_model seeds the generator with 5 as wt_new does).
 */
#include "dy_runtime.h"

typedef struct {
  dy_layer base;
  dy_layer *l1, *l2, *l3;
} net;

static dy_tensor *scalar(double v) { return dy_full(DY_F32, 0, NULL, v); }

DY_TO_STATIC("x: f32[-1,4]")
static dy_tensor *net_forward(dy_layer *self, dy_tensor *x) {
  net *n = (net *)self;
  dy_tensor *h = dy_tanh(dy_call1(n->l1, x));
  dy_tensor *i = scalar(0.0);
  while (dy_bool(dy_less(i, scalar(4.0)))) {
    if (dy_bool(dy_greater(dy_reduce_mean(h, 0, NULL, false), scalar(0.0))))
      h = dy_tanh(dy_call1(n->l2, h));
    else
      h = dy_add(dy_scale(h, 0.5f, 0.0f), dy_scale(dy_call1(n->l2, h), 0.25f, 0.0f));
    i = dy_add(i, scalar(1.0));
    if (dy_bool(dy_greater(dy_reduce_mean(h, 0, NULL, false), scalar(0.05))))
      break;
  }
  return dy_call1(n->l3, h);
}

static dy_tensor *net_vforward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  return net_forward(self, in[0]);
}

static const dy_layer_vtable net_vtable = {.type_name = "WhileNet", .forward = net_vforward};

DY_MODEL
dy_layer *make_model(void) {
  dy_seed(5);
  net *n = (net *)dy_layer_new(sizeof(net), &net_vtable, "whilenet");
  if (!n)
    return NULL;
  n->l1 = dy_layer_add_child(&n->base, dy_linear_new(4, 3));
  n->l2 = dy_layer_add_child(&n->base, dy_linear_new(3, 3));
  n->l3 = dy_layer_add_child(&n->base, dy_linear_new(3, 2));
  if (!n->l1 || !n->l2 || !n->l3) {
    dy_layer_free(&n->base);
    return NULL;
  }
  return &n->base;
}
