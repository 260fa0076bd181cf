/* early_exit.c - an early-exit CNN: a cheap head answers when it is
 * confident, otherwise deeper layers run (dy_cond).
 *
 *   h      = relu(conv3x3(x))                      [B, 4, 6, 6]
 *   logits = head(flatten(h))                      [B, 3]
 *   sure   = min over the batch of max softmax(logits) > 0.9
 *   out    = sure ? logits : deep(h)               deep: conv3x3, relu, linear
 *
 * Eagerly only the taken path runs; dy_to_static and dy_jit_save record
 * both as the branches of one `cond` op. A large-amplitude input makes the
 * head confident (case 0: the head answers), a faint one does not (case 1:
 * the deep path runs); the sample prints which. See control_sample.h for
 * what it writes.
 */
#include "control_sample.h"

typedef struct {
  dy_layer base;
  dy_layer *stem, *head, *deep_conv, *deep_fc;
  dy_tensor *threshold;
} early_exit;

typedef struct {
  early_exit *net;
  dy_tensor *h, *logits;
} exit_ctx;

static bool answer_now(void *c, dy_tensor **out) {
  out[0] = ((exit_ctx *)c)->logits;
  return true;
}

static bool go_deeper(void *c, dy_tensor **out) {
  exit_ctx *e = c;
  dy_tensor *d = dy_relu(dy_call1(e->net->deep_conv, e->h));
  out[0] = dy_call1(e->net->deep_fc, dy_flatten(d, 1, -1));
  return out[0] != NULL;
}

/* The cheap part: the stem's features, the head's logits and its
 * confidence (the least sure row's top probability, [1]). */
static dy_tensor *head(early_exit *net, dy_tensor *x, dy_tensor **h, dy_tensor **logits) {
  *h = dy_relu(dy_call1(net->stem, x));
  *logits = dy_call1(net->head, dy_flatten(*h, 1, -1));
  dy_tensor *conf = dy_reduce_max(dy_softmax(*logits, -1), 1, DY_SHAPE(1), false);
  return dy_reduce_min(conf, 0, NULL, true);
}

static dy_tensor *early_exit_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)n;
  early_exit *net = (early_exit *)self;
  dy_tensor *h, *logits;
  dy_tensor *sure = dy_greater(head(net, in[0], &h, &logits), net->threshold);
  exit_ctx c = {net, h, logits};
  dy_tensor *out = NULL;
  return dy_cond(sure, answer_now, go_deeper, &c, 1, &out) ? out : NULL;
}

static const dy_layer_vtable early_exit_vt = {"EarlyExit", early_exit_forward, NULL, false};

int main(int argc, char **argv) {
  dy_seed(7);
  early_exit *net = (early_exit *)dy_layer_new(sizeof *net, &early_exit_vt, "early_exit");
  dy_conv2d_params same = {.padding = {1, 1, 1, 1}};
  net->stem = dy_layer_add_child(&net->base, dy_conv2d_layer_new(1, 4, 3, 3, same, true));
  net->head = dy_layer_add_child(&net->base, dy_linear_new(144, 3));
  net->deep_conv = dy_layer_add_child(&net->base, dy_conv2d_layer_new(4, 4, 3, 3, same, true));
  net->deep_fc = dy_layer_add_child(&net->base, dy_linear_new(144, 3));
  net->threshold = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){0.9f});
  dy_layer_eval(&net->base);

  /* case 0: loud inputs (the head is sure); case 1: faint ones (it is not) */
  dy_scope_begin();  /* the rand tensors go with it; the inputs are kept */
  dy_tensor *x[2] = {dy_keep(dy_scale(dy_rand(4, DY_SHAPE(2, 1, 6, 6)), 400.0f, -200.0f)),
                     dy_keep(dy_scale(dy_rand(4, DY_SHAPE(2, 1, 6, 6)), 0.02f, -0.01f))};
  dy_scope_end();
  for (int k = 0; k < 2 && x[0] && x[1]; k++) {  /* which path each case takes */
    dy_scope_begin();
    dy_tensor *h, *logits;
    bool ok;
    double conf = dy_item(head(net, x[k], &h, &logits), &ok);
    printf("case %d: head confidence %.3f: %s\n", k, conf,
           conf > 0.9 ? "the head answers" : "the deep layers run");
    dy_scope_end();
  }
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 1, 6, 6}};
  int rc = x[0] && x[1] ? ctl_run("early_exit", &net->base, &spec, x, 2, 1e-4f, argc, argv)
                        : ctl_die("early_exit", "inputs");
  dy_tensor_free(x[0]);
  dy_tensor_free(x[1]);
  dy_tensor_free(net->threshold);
  dy_layer_free(&net->base);
  return rc;
}
