/* test_autograd.c - eager autograd (runtime/tape.c, backward.c) and the losses
 * (ir/train/loss.c, runtime/losses.c).
 *
 *   - an MLP's parameter gradients from dy_backward against the traced
 *     Program's dy_program_append_backward on the static executor and
 *     against central finite differences;
 *   - accumulation over two backward calls, dy_clear_grad, no_grad,
 *     seeds for non-scalar outputs, the freed graph, the tape's pruning,
 *     static mode leaving the tape alone;
 *   - every loss's value against a double reference (ignore_index, soft
 *     labels, sum included), eager and in a Program, and its gradient
 *     eager, in a Program and by finite differences; a loss traced with a
 *     dynamic batch, run (value and parameter gradients) at another;
 *   - the errors: non-scalar loss, no parameter on the path, labels of the
 *     wrong dtype or shape, a label out of range at run time.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_test.h"
#include "dy_compiler.h"

/* ---- helpers ---- */

static dy_tensor *tensor(int rank, const int64_t *shape, const float *v) {
  return dy_tensor_from_data(DY_F32, rank, shape, v);
}

static dy_tensor *randn(int rank, const int64_t *shape) {
  dy_tensor *t = dy_randn(rank, shape);
  return t;
}

static float item(const dy_tensor *t) { return t ? ((const float *)t->data)[0] : NAN; }

/* A layer computing loss(net(x), label): the traced Program's fetch is
 * the loss. net becomes its child. */
typedef struct {
  dy_layer base;
  dy_loss_spec spec;
} with_loss;

static dy_tensor *with_loss_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)n;
  with_loss *w = (with_loss *)self;
  return dy_loss(dy_call1(self->children[0], in[0]), in[1], &w->spec);
}
static const dy_layer_vtable with_loss_vt = {.type_name = "WithLoss",
                                             .forward = with_loss_forward};

static dy_layer *mlp(void) {
  dy_layer *net = dy_sequential_new();
  dy_sequential_append(net, dy_linear_new(4, 8));
  dy_sequential_append(net, dy_tanh_layer_new());
  dy_sequential_append(net, dy_linear_new(8, 6));
  dy_sequential_append(net, dy_relu_layer_new());
  dy_sequential_append(net, dy_linear_new(6, 3));
  return net;
}

static dy_layer *wrap(dy_layer *net, dy_loss_kind k) {
  with_loss *w = (with_loss *)dy_layer_new(sizeof *w, &with_loss_vt, "model");
  w->spec.kind = k;
  dy_layer_add_child(&w->base, net);
  return &w->base;
}

/* Every parameter of l (depth first), up to max. */
static int params_of(dy_layer *l, dy_tensor **out, int n, int max) {
  for (int i = 0; i < l->n_params && n < max; i++)
    out[n++] = l->params[i];
  for (int i = 0; i < l->n_children; i++)
    n = params_of(l->children[i], out, n, max);
  return n;
}

/* The loss of model on (x, label) without recording. */
static double loss_value(dy_layer *model, dy_tensor *x, dy_tensor *label) {
  dy_no_grad_begin();
  dy_scope_begin();
  double v = item(dy_call2(model, x, label));
  dy_scope_end();
  dy_no_grad_end();
  return v;
}

/* max |a - b| / (1 + |b|) over n floats */
static double max_rel(const float *a, const float *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i]));
    m = d > m || isnan(d) ? d : m;
  }
  return m;
}

/* ---- the MLP: eager backward = Program backward = finite differences ---- */

static void test_mlp_gradients(void) {
  dy_seed(7);
  dy_layer *model = wrap(mlp(), DY_LOSS_MSE);
  dy_tensor *x = randn(2, DY_SHAPE(5, 4)), *label = randn(2, DY_SHAPE(5, 3));
  dy_error err = {0};

  /* eager */
  dy_tensor *loss = dy_call2(model, x, label);
  CU_ASSERT_PTR_NOT_NULL_FATAL(loss);
  CU_ASSERT(dy_tape_size() > 0);
  DY_ASSERT_OK(dy_backward(loss, &err), &err);
  CU_ASSERT_EQUAL(dy_tape_size(), 0);  /* the graph is freed */
  dy_tensor *ps[16];
  int np = params_of(model, ps, 0, 16);
  CU_ASSERT_EQUAL_FATAL(np, 6);
  for (int i = 0; i < np; i++)
    CU_ASSERT_PTR_NOT_NULL_FATAL(ps[i]->grad);

  /* the traced Program's backward on the executor */
  dy_program *p = NULL;
  dy_tensor *traced = NULL;
  DY_ASSERT_OK(dy_trace(model, NULL, (dy_tensor *const[]){x, label}, 2, &traced, &p, &err),
               &err);
  DY_ASSERT_NEAR(item(traced), item(loss), 1e-6);
  int *pv, *gv, n;
  DY_ASSERT_OK(dy_program_append_backward(p, p->fetches[0], &pv, &gv, &n, &err), &err);
  CU_ASSERT_EQUAL_FATAL(n, np);
  for (int k = 0; k < n; k++)
    DY_ASSERT_OK(dy_program_add_fetch(p, gv[k], &err), &err);
  dy_tensor *outs[16] = {0};
  DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *const[]){x, label}, 2, outs, 1 + n, &err), &err);
  for (int i = 0; i < np; i++) {
    int k = 0;
    while (k < n && pv[k] != ps[i]->var)  /* the tracer bound each parameter to its var */
      k++;
    CU_ASSERT_FATAL(k < n);
    double d = max_rel(ps[i]->grad->data, outs[1 + k]->data, dy_tensor_numel(ps[i]));
    if (d > 1e-5)
      fprintf(stderr, "\n  %s: eager vs Program gradient differ by %g\n", ps[i]->name, d);
    CU_ASSERT(d <= 1e-5);
  }

  /* finite differences (in double from f32 losses: a loose tolerance) */
  for (int i = 0; i < np; i++) {
    float *w = ps[i]->data;
    const float *g = ps[i]->grad->data;
    for (int64_t e = 0; e < dy_tensor_numel(ps[i]); e += 3) {
      float w0 = w[e];
      w[e] = w0 + 1e-2f;
      double lp = loss_value(model, x, label);
      w[e] = w0 - 1e-2f;
      double lm = loss_value(model, x, label);
      w[e] = w0;
      double fd = (lp - lm) / 2e-2;
      if (!(fabs(fd - g[e]) <= 2e-3 * (1 + fabs(fd))))
        fprintf(stderr, "\n  %s[%lld]: backward %g, finite difference %g\n", ps[i]->name,
                (long long)e, g[e], fd);
      CU_ASSERT(fabs(fd - g[e]) <= 2e-3 * (1 + fabs(fd)));
    }
  }
  /* the trace recorded onto the tape too: backward of the traced output
   * gives the same gradients again (accumulated: twice the first) */
  float before = ((float *)ps[0]->grad->data)[1];
  DY_ASSERT_OK(dy_backward(traced, &err), &err);
  DY_ASSERT_NEAR(((float *)ps[0]->grad->data)[1], 2 * before, 1e-6 * (1 + fabs(before)));

  for (int k = 0; k < 1 + n; k++)
    dy_tensor_free(outs[k]);
  free(pv);
  free(gv);
  dy_program_free(p);
  dy_tensor_free(traced);
  dy_tensor_free(loss);
  dy_tensor_free(x);
  dy_tensor_free(label);
  dy_layer_free(model);
  CU_ASSERT_EQUAL(dy_tape_size(), 0);
}

/* ---- accumulation, clear_grad, no_grad, seeds ---- */

static void test_accumulate_and_clear(void) {
  dy_seed(3);
  dy_layer *model = wrap(mlp(), DY_LOSS_MSE);
  dy_tensor *x = randn(2, DY_SHAPE(4, 4)), *label = randn(2, DY_SHAPE(4, 3));
  dy_error err = {0};
  dy_tensor *ps[16];
  int np = params_of(model, ps, 0, 16);
  dy_scope_begin();
  DY_ASSERT_OK(dy_backward(dy_call2(model, x, label), &err), &err);
  float first[6];
  for (int i = 0; i < np; i++)
    first[i] = ((float *)ps[i]->grad->data)[0];
  DY_ASSERT_OK(dy_backward(dy_call2(model, x, label), &err), &err);
  for (int i = 0; i < np; i++)
    DY_ASSERT_NEAR(((float *)ps[i]->grad->data)[0], 2 * first[i], 1e-6 * (1 + fabs(first[i])));
  dy_clear_grad(model);
  for (int i = 0; i < np; i++)
    CU_ASSERT_PTR_NULL(ps[i]->grad);
  DY_ASSERT_OK(dy_backward(dy_call2(model, x, label), &err), &err);
  for (int i = 0; i < np; i++)
    DY_ASSERT_NEAR(((float *)ps[i]->grad->data)[0], first[i], 1e-6 * (1 + fabs(first[i])));

  /* no_grad: nothing recorded, and the result has no graph */
  int before = dy_tape_size();
  dy_no_grad_begin();
  dy_no_grad_begin();
  CU_ASSERT_FALSE(dy_grad_enabled());
  dy_no_grad_end();
  CU_ASSERT_FALSE(dy_grad_enabled());
  dy_tensor *l = dy_call2(model, x, label);
  dy_no_grad_end();
  CU_ASSERT_TRUE(dy_grad_enabled());
  CU_ASSERT_EQUAL(dy_tape_size(), before);
  CU_ASSERT_PTR_NULL(l->grad_fn);
  CU_ASSERT_EQUAL(dy_backward(l, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not require grad"));
  dy_scope_end();
  dy_tensor_free(x);
  dy_tensor_free(label);
  dy_layer_free(model);
}

/* dy_backward_seed(y, s) = dy_backward(sum(y * s)) */
static void test_seed(void) {
  dy_seed(11);
  dy_layer *net = mlp();
  dy_tensor *x = randn(2, DY_SHAPE(5, 4)), *s = randn(2, DY_SHAPE(5, 3));
  dy_error err = {0};
  dy_tensor *ps[16];
  int np = params_of(net, ps, 0, 16);
  dy_scope_begin();
  DY_ASSERT_OK(dy_backward_seed(dy_call1(net, x), s, &err), &err);
  dy_tensor *g1[16];
  for (int i = 0; i < np; i++) {
    g1[i] = ps[i]->grad;
    ps[i]->grad = NULL;
  }
  dy_tensor *y = dy_call1(net, x);
  /* non-scalar loss: the error names its shape */
  CU_ASSERT_EQUAL(dy_backward(y, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f32[5,3]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "scalar"));
  /* a seed of the wrong shape */
  CU_ASSERT_EQUAL(dy_backward_seed(y, x, &err), DY_STATUS_SHAPE_MISMATCH);
  dy_attr ra[] = {DY_ATTR_IS("axes", NULL, 0), DY_ATTR_I("keepdim", 0)};
  dy_tensor *sum = dy_apply(DY_OP_REDUCE_SUM, (dy_tensor *const[]){dy_mul(y, s)}, 1, ra, 2,
                            DY_HERE);
  DY_ASSERT_OK(dy_backward(sum, &err), &err);
  for (int i = 0; i < np; i++) {
    CU_ASSERT(max_rel(g1[i]->data, ps[i]->grad->data, dy_tensor_numel(ps[i])) <= 1e-6);
    dy_tensor_free(g1[i]);
  }
  /* the graph was freed: a second backward says so */
  CU_ASSERT_EQUAL(dy_backward(sum, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "freed"));
  /* a tensor used twice by one op and again by another: contributions sum
   * (d/dw sum(w * w + w) = 2w + 1); backward on a leaf itself adds the seed */
  float wv[3] = {0.5f, -2.0f, 3.0f};
  dy_tensor *w = tensor(1, DY_SHAPE(3), wv);
  w->requires_grad = true;
  DY_ASSERT_OK(dy_backward_seed(dy_add(dy_mul(w, w), w), dy_ones(1, DY_SHAPE(3)), &err), &err);
  for (int i = 0; i < 3; i++)
    DY_ASSERT_NEAR(((float *)w->grad->data)[i], 2 * wv[i] + 1, 1e-6);
  DY_ASSERT_OK(dy_backward_seed(w, dy_ones(1, DY_SHAPE(3)), &err), &err);
  DY_ASSERT_NEAR(((float *)w->grad->data)[1], 2 * wv[1] + 2, 1e-6);
  dy_scope_end();
  dy_tensor_free(x);
  dy_tensor_free(s);
  dy_layer_free(net);
}

/* Forwards never backwarded cost memory only while their outputs live;
 * static mode never records; dy_tape_clear drops a held graph. */
static void test_tape_bounded(void) {
  dy_seed(5);
  dy_layer *net = mlp();
  dy_tensor *x = randn(2, DY_SHAPE(2, 4));
  int peak = 0;
  for (int i = 0; i < 3000; i++) {
    dy_tensor_free(dy_call1(net, x));  /* 5 records each */
    peak = dy_tape_size() > peak ? dy_tape_size() : peak;
  }
  CU_ASSERT(peak <= 4096);
  /* a view's base is released with the view */
  dy_tape_clear();
  dy_tensor *w = randn(2, DY_SHAPE(2, 3));
  w->requires_grad = true;
  peak = 0;
  for (int i = 0; i < 3000; i++) {
    dy_scope_begin();
    dy_reshape(dy_mul(w, w), 1, DY_SHAPE(6));
    dy_scope_end();
    peak = dy_tape_size() > peak ? dy_tape_size() : peak;
  }
  CU_ASSERT(peak <= 4096);
  /* pruned once, at record 4097: everything went, the mul records too
   * (kept, they would be 2048 more) */
  CU_ASSERT(dy_tape_size() < 2048);
  dy_tensor_free(w);
  dy_tensor *kept = dy_call1(net, x);
  int n = dy_tape_size();
  CU_ASSERT(n >= 5);
  dy_tape_clear();
  CU_ASSERT_EQUAL(dy_tape_size(), 0);
  CU_ASSERT_PTR_NULL(kept->grad_fn);
  dy_tensor_free(kept);

  dy_program *p = NULL;
  dy_error err = {0};
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 4}};
  DY_ASSERT_OK(dy_program_from_layer(net, &spec, 1, &p, &err), &err);
  CU_ASSERT_EQUAL(dy_tape_size(), 0);
  dy_program_free(p);
  dy_tensor_free(x);
  dy_layer_free(net);
}

/* ---- losses: values against double references ---- */

static double log_softmax_at(const float *row, int64_t c, int64_t stride, int64_t k) {
  double m = -INFINITY, s = 0;
  for (int64_t j = 0; j < c; j++)
    m = fmax(m, row[j * stride]);
  for (int64_t j = 0; j < c; j++)
    s += exp(row[j * stride] - m);
  return row[k * stride] - m - log(s);
}

static void test_loss_values(void) {
  dy_seed(21);
  dy_scope_begin();
  /* cross entropy, hard labels [N] and [N, 1], mean and sum */
  dy_tensor *x = randn(2, DY_SHAPE(4, 5));
  int64_t lab[4] = {0, 3, 4, 1};
  dy_tensor *y = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), lab);
  const float *xv = x->data;
  double ref = 0;
  for (int i = 0; i < 4; i++)
    ref -= log_softmax_at(xv + i * 5, 5, 1, lab[i]);
  DY_ASSERT_NEAR(item(dy_cross_entropy(x, y, NULL)), ref / 4, 1e-5);
  dy_tensor *y1 = dy_tensor_from_data(DY_I64, 2, DY_SHAPE(4, 1), lab);
  dy_loss_spec sum = {.reduction = DY_REDUCTION_SUM};
  DY_ASSERT_NEAR(item(dy_cross_entropy(x, y1, &sum)), ref, 1e-5);

  /* ignore_index: the mean over the kept labels */
  int64_t lab_ig[4] = {0, -100, 4, -100};
  dy_tensor *yi = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), lab_ig);
  double r_ig = -(log_softmax_at(xv, 5, 1, 0) + log_softmax_at(xv + 10, 5, 1, 4));
  dy_loss_spec ig = {.has_ignore_index = true, .ignore_index = -100};
  DY_ASSERT_NEAR(item(dy_cross_entropy(x, yi, &ig)), r_ig / 2, 1e-5);
  ig.reduction = DY_REDUCTION_SUM;
  DY_ASSERT_NEAR(item(dy_cross_entropy(x, yi, &ig)), r_ig, 1e-5);

  /* [N, C, d] logits, labels [N, d] */
  dy_tensor *x3 = randn(3, DY_SHAPE(2, 3, 2));
  int64_t lab3[4] = {2, 0, 1, 1};
  dy_tensor *y3 = dy_tensor_from_data(DY_I64, 2, DY_SHAPE(2, 2), lab3);
  double r3 = 0;
  for (int n = 0; n < 2; n++)
    for (int d = 0; d < 2; d++)
      r3 -= log_softmax_at((const float *)x3->data + n * 6 + d, 3, 2, lab3[n * 2 + d]);
  DY_ASSERT_NEAR(item(dy_cross_entropy(x3, y3, NULL)), r3 / 4, 1e-5);

  /* soft labels */
  float pv[10] = {0.1f, 0.2f, 0.3f, 0.4f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  dy_tensor *xs = randn(2, DY_SHAPE(2, 5)), *ps = tensor(2, DY_SHAPE(2, 5), pv);
  double rs = 0;
  for (int n = 0; n < 2; n++)
    for (int k = 0; k < 5; k++)
      rs -= pv[n * 5 + k] * log_softmax_at((const float *)xs->data + n * 5, 5, 1, k);
  dy_loss_spec soft = {.soft_labels = true};
  DY_ASSERT_NEAR(item(dy_cross_entropy(xs, ps, &soft)), rs / 2, 1e-5);

  /* mse, l1, bce_with_logits */
  dy_tensor *a = randn(2, DY_SHAPE(3, 4)), *b = dy_rand(2, DY_SHAPE(3, 4));
  const float *av = a->data, *bv = b->data;
  double rm = 0, rl = 0, rb = 0;
  for (int i = 0; i < 12; i++) {
    double d = (double)av[i] - bv[i], xi = av[i], z = bv[i];
    rm += d * d;
    rl += fabs(d);
    rb += fmax(xi, 0) - xi * z + log1p(exp(-fabs(xi)));
  }
  DY_ASSERT_NEAR(item(dy_mse_loss(a, b)), rm / 12, 1e-5);
  DY_ASSERT_NEAR(item(dy_l1_loss(a, b)), rl / 12, 1e-5);
  DY_ASSERT_NEAR(item(dy_bce_with_logits_loss(a, b)), rb / 12, 1e-5);
  dy_loss_spec msum = {.kind = DY_LOSS_MSE, .reduction = DY_REDUCTION_SUM};
  DY_ASSERT_NEAR(item(dy_loss(a, b, &msum)), rm, 1e-4);
  /* large logits stay finite in the stable form */
  float big[2] = {90.0f, -90.0f}, zb[2] = {0.0f, 1.0f};
  DY_ASSERT_NEAR(item(dy_bce_with_logits_loss(tensor(1, DY_SHAPE(2), big),
                                              tensor(1, DY_SHAPE(2), zb))), 90.0, 1e-4);
  CU_ASSERT_PTR_NULL(dy_last_error());
  dy_scope_end();
}

/* The same losses through dy_program_append_loss on the executor, with a
 * dynamic batch (the ignore_index mean counts at run time). */
static void test_program_loss(void) {
  dy_seed(23);
  dy_scope_begin();
  dy_tensor *x = randn(2, DY_SHAPE(4, 5));
  int64_t lab[4] = {1, 7, 4, 7};
  dy_tensor *y = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), lab);
  dy_loss_spec specs[] = {
      {.kind = DY_LOSS_CROSS_ENTROPY, .has_ignore_index = true, .ignore_index = 7},
      {.kind = DY_LOSS_CROSS_ENTROPY, .has_ignore_index = true, .ignore_index = 7,
       .reduction = DY_REDUCTION_SUM},
  };
  for (int k = 0; k < 2; k++) {
    float eager = item(dy_cross_entropy(x, y, &specs[k]));
    dy_program *p = dy_program_new();
    dy_error err = {0};
    dy_type t = {.dtype = DY_F32, .rank = 2, .shape = {-1, 5}};
    int xv = dy_program_add_var(p, "logits", &t), lv, loss;
    dy_program_add_feed(p, xv, &err);
    DY_ASSERT_OK(dy_program_append_loss(p, xv, "label", &specs[k], &lv, &loss, &err), &err);
    CU_ASSERT_EQUAL(p->vars[lv]->type.dtype, DY_I64);
    CU_ASSERT_EQUAL(p->vars[lv]->type.rank, 1);
    CU_ASSERT_EQUAL(p->vars[lv]->type.shape[0], -1);
    CU_ASSERT_STRING_EQUAL(p->vars[loss]->name, "loss");
    DY_ASSERT_OK(dy_program_add_fetch(p, loss, &err), &err);
    DY_ASSERT_OK(dy_verify(p, &err), &err);
    dy_tensor *out = NULL;
    DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *const[]){x, y}, 2, &out, 1, &err), &err);
    DY_ASSERT_NEAR(item(out), eager, 1e-6);
    dy_tensor_free(out);
    dy_program_free(p);
  }
  dy_scope_end();
}

/* A loss inside a traced forward lands in the Program: with a dynamic
 * batch, the Program run at another batch equals the eager loss there. */
static void test_traced_loss(void) {
  dy_seed(37);
  with_loss *m = (with_loss *)wrap(mlp(), DY_LOSS_CROSS_ENTROPY);
  m->spec.has_ignore_index = true;
  m->spec.ignore_index = 2;
  dy_tensor *x = randn(2, DY_SHAPE(4, 4)), *x6 = randn(2, DY_SHAPE(6, 4));
  int64_t lab[4] = {0, 2, 1, 1}, lab6[6] = {2, 1, 0, 2, 0, 1};
  dy_tensor *y = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), lab);
  dy_tensor *y6 = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(6), lab6);
  dy_input_spec specs[2] = {{.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 4}},
                            {.name = "label", .dtype = DY_I64, .rank = 1, .shape = {-1}}};
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_trace(&m->base, specs, (dy_tensor *const[]){x, y}, 2, NULL, &p, &err), &err);
  dy_tape_clear();
  int *pv, *gv, n;
  DY_ASSERT_OK(dy_program_append_backward(p, p->fetches[0], &pv, &gv, &n, &err), &err);
  for (int k = 0; k < n; k++)
    DY_ASSERT_OK(dy_program_add_fetch(p, gv[k], &err), &err);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  dy_tensor *outs[16] = {0};
  DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *const[]){x6, y6}, 2, outs, 1 + n, &err), &err);
  DY_ASSERT_NEAR(item(outs[0]), loss_value(&m->base, x6, y6), 1e-6);
  /* and the gradients equal eager backward's at that batch */
  dy_tensor *loss = dy_call2(&m->base, x6, y6);
  DY_ASSERT_OK(dy_backward(loss, &err), &err);
  dy_tensor *ps[16];
  int np = params_of(&m->base, ps, 0, 16);
  CU_ASSERT_EQUAL_FATAL(np, n);
  for (int i = 0; i < np; i++) {
    int k = 0;
    while (k < n && pv[k] != ps[i]->var)
      k++;
    CU_ASSERT_FATAL(k < n);
    CU_ASSERT(max_rel(ps[i]->grad->data, outs[1 + k]->data, dy_tensor_numel(ps[i])) <= 1e-5);
  }
  for (int k = 0; k < 1 + n; k++)
    dy_tensor_free(outs[k]);
  free(pv);
  free(gv);
  dy_tensor_free(loss);
  dy_program_free(p);
  /* static mode (symbolic inputs) builds the same loss, records no tape */
  DY_ASSERT_OK(dy_program_from_layer(&m->base, specs, 2, &p, &err), &err);
  CU_ASSERT_EQUAL(dy_tape_size(), 0);
  dy_tensor *o6 = NULL;
  DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *const[]){x6, y6}, 2, &o6, 1, &err), &err);
  DY_ASSERT_NEAR(item(o6), loss_value(&m->base, x6, y6), 1e-6);
  dy_tensor_free(o6);
  dy_program_free(p);
  dy_tensor_free(x);
  dy_tensor_free(x6);
  dy_tensor_free(y);
  dy_tensor_free(y6);
  dy_layer_free(&m->base);
}

/* ---- losses: gradients against finite differences ---- */

/* d loss / d pred of the Program way: a feed for pred, the loss appended,
 * dy_program_gradients, the executor. NULL (printed) on failure. */
static dy_tensor *program_loss_grad(dy_tensor *pred, dy_tensor *label,
                                    const dy_loss_spec *spec) {
  dy_program *p = dy_program_new();
  dy_error err = {0};
  dy_type t = pred->type;
  t.shape[0] = -1;
  int pv = dy_program_add_var(p, "pred", &t), lv, loss, g;
  dy_program_add_feed(p, pv, &err);
  dy_tensor *out[2] = {0};
  if (dy_program_append_loss(p, pv, "label", spec, &lv, &loss, &err) ||
      dy_program_add_fetch(p, loss, &err) ||
      dy_program_gradients(p, loss, &pv, 1, &g, &err) || g < 0 ||
      dy_program_add_fetch(p, g, &err) || dy_verify(p, &err) ||
      dy_executor_run(p, (dy_tensor *const[]){pred, label}, 2, out, 2, &err)) {
    fprintf(stderr, "\n  %s loss, Program way: %s\n", dy_loss_name(spec->kind), err.msg);
    dy_program_free(p);
    return NULL;
  }
  dy_tensor_free(out[0]);
  dy_program_free(p);
  return out[1];
}

/* d loss / d pred (pred requiring grad) from dy_backward, against central
 * differences and against the Program way. */
static void check_loss_grad(const char *what, dy_tensor *pred, dy_tensor *label,
                            dy_loss_kind kind, const dy_loss_spec *spec0) {
  dy_loss_spec spec = *spec0;
  spec.kind = kind;
  dy_error err = {0};
  pred->requires_grad = true;
  dy_scope_begin();
  dy_status s = dy_backward(dy_loss(pred, label, &spec), &err);
  dy_scope_end();
  if (s)
    fprintf(stderr, "\n  %s: %s\n", what, err.msg);
  CU_ASSERT_EQUAL_FATAL(s, DY_OK);
  dy_tensor *pg = program_loss_grad(pred, label, &spec);
  CU_ASSERT_PTR_NOT_NULL_FATAL(pg);
  CU_ASSERT(max_rel(pg->data, pred->grad->data, dy_tensor_numel(pred)) <= 1e-6);
  dy_tensor_free(pg);
  float *v = pred->data;
  int bad = 0;
  dy_no_grad_begin();
  for (int64_t e = 0; e < dy_tensor_numel(pred); e++) {
    float v0 = v[e];
    dy_scope_begin();
    v[e] = v0 + 1e-2f;
    double lp = item(dy_loss(pred, label, &spec));
    v[e] = v0 - 1e-2f;
    double lm = item(dy_loss(pred, label, &spec));
    dy_scope_end();
    v[e] = v0;
    double fd = (lp - lm) / 2e-2, g = ((float *)pred->grad->data)[e];
    if (!(fabs(fd - g) <= 2e-3 * (1 + fabs(fd))) && bad++ < 3)
      fprintf(stderr, "\n  %s [%lld]: backward %g, finite difference %g\n", what,
              (long long)e, g, fd);
  }
  dy_no_grad_end();
  CU_ASSERT_EQUAL(bad, 0);
  dy_tensor_free(pred->grad);
  pred->grad = NULL;
}

static void test_loss_gradients(void) {
  dy_seed(29);
  dy_scope_begin();
  int64_t lab[4] = {0, 3, 4, 1}, lab_ig[4] = {2, -1, 4, -1}, lab3[4] = {2, 0, 1, 1};
  dy_tensor *y = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), lab);
  dy_tensor *yi = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), lab_ig);
  dy_tensor *y3 = dy_tensor_from_data(DY_I64, 2, DY_SHAPE(2, 2), lab3);
  dy_loss_spec mean = {0}, soft = {.soft_labels = true}, sum = {.reduction = DY_REDUCTION_SUM},
               ig = {.has_ignore_index = true, .ignore_index = -1};
  check_loss_grad("cross_entropy", randn(2, DY_SHAPE(4, 5)), y, DY_LOSS_CROSS_ENTROPY, &mean);
  check_loss_grad("cross_entropy ignore_index", randn(2, DY_SHAPE(4, 5)), yi,
                  DY_LOSS_CROSS_ENTROPY, &ig);
  check_loss_grad("cross_entropy sum", randn(2, DY_SHAPE(4, 5)), y, DY_LOSS_CROSS_ENTROPY, &sum);
  check_loss_grad("cross_entropy [N,C,d]", randn(3, DY_SHAPE(2, 3, 2)), y3,
                  DY_LOSS_CROSS_ENTROPY, &mean);
  dy_tensor *p = dy_softmax(randn(2, DY_SHAPE(4, 5)), -1);
  check_loss_grad("cross_entropy soft", randn(2, DY_SHAPE(4, 5)), p, DY_LOSS_CROSS_ENTROPY,
                  &soft);
  dy_tensor *z = dy_rand(2, DY_SHAPE(3, 4));
  check_loss_grad("mse", randn(2, DY_SHAPE(3, 4)), z, DY_LOSS_MSE, &mean);
  check_loss_grad("mse sum", randn(2, DY_SHAPE(3, 4)), z, DY_LOSS_MSE, &sum);
  check_loss_grad("l1", randn(2, DY_SHAPE(3, 4)), z, DY_LOSS_L1, &mean);
  check_loss_grad("bce_with_logits", randn(2, DY_SHAPE(3, 4)), z, DY_LOSS_BCE_WITH_LOGITS,
                  &mean);
  dy_scope_end();
}

/* ---- errors ---- */

static void test_errors(void) {
  dy_seed(31);
  dy_scope_begin();
  dy_error err = {0};
  /* no parameter on the path */
  dy_tensor *a = randn(2, DY_SHAPE(3, 4)), *b = randn(2, DY_SHAPE(3, 4));
  CU_ASSERT_EQUAL(dy_backward(dy_mse_loss(a, b), &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no parameter on its path"));
  /* a rule that refuses (tile's gradient needs rank 10 here): the error
   * names the op and the line of the forward call; nothing is added */
  dy_tensor *t5 = randn(5, DY_SHAPE(2, 2, 2, 2, 2));
  t5->requires_grad = true;
  int tile_line = __LINE__ + 1;
  dy_tensor *tiled = dy_tile(t5, 5, DY_SHAPE(2, 2, 2, 2, 2));
  CU_ASSERT_EQUAL(dy_backward(dy_reduce_sum(tiled, 0, NULL, false), &err),
                  DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tile"));
  CU_ASSERT_EQUAL(err.loc.line, tile_line);
  CU_ASSERT_PTR_NULL(t5->grad);
  dy_tape_clear();
  /* NULL loss (an earlier failure) */
  CU_ASSERT_EQUAL(dy_backward(NULL, &err), DY_STATUS_INVALID_ARGUMENT);

  /* class labels of the wrong dtype / shape: both types named, the line */
  dy_tensor *x = randn(2, DY_SHAPE(4, 5));
  dy_tensor *fl = randn(1, DY_SHAPE(4));
  dy_clear_error();
  int line = __LINE__ + 1;
  CU_ASSERT_PTR_NULL(dy_cross_entropy(x, fl, NULL));
  const dy_error *e = dy_last_error();
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "f32[4,5]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "f32[4]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "i64"));
  CU_ASSERT_EQUAL(e->loc.line, line);
  dy_clear_error();
  int64_t l3[3] = {0, 1, 2};
  CU_ASSERT_PTR_NULL(dy_cross_entropy(x, dy_tensor_from_data(DY_I64, 1, DY_SHAPE(3), l3), NULL));
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "i64[3]"));
  dy_clear_error();
  CU_ASSERT_PTR_NULL(dy_mse_loss(x, a));
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "f32[3,4]"));
  dy_clear_error();

  /* a label out of range, or negative, fails at run time */
  int64_t bad[4] = {0, 5, 1, 2}, neg[4] = {0, -1, 1, 2};
  CU_ASSERT_PTR_NULL(dy_cross_entropy(x, dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), bad), NULL));
  CU_ASSERT_PTR_NOT_NULL_FATAL(dy_last_error());
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "out of range"));
  dy_clear_error();
  CU_ASSERT_PTR_NULL(dy_cross_entropy(x, dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), neg), NULL));
  CU_ASSERT_PTR_NOT_NULL_FATAL(dy_last_error());
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "out of range"));
  dy_clear_error();

  /* a Program whose label is out of range: the executor's index error */
  dy_program *p = dy_program_new();
  dy_type t = {.dtype = DY_F32, .rank = 2, .shape = {-1, 5}};
  int xv = dy_program_add_var(p, "logits", &t), lv, loss;
  dy_program_add_feed(p, xv, &err);
  dy_loss_spec ce = {0};
  DY_ASSERT_OK(dy_program_append_loss(p, xv, "label", &ce, &lv, &loss, &err), &err);
  dy_program_add_fetch(p, loss, &err);
  dy_tensor *out = NULL;
  CU_ASSERT_NOT_EQUAL(dy_executor_run(p, (dy_tensor *const[]){
                                              x, dy_tensor_from_data(DY_I64, 1, DY_SHAPE(4), bad)},
                                      2, &out, 1, &err),
                      DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "out of range"));
  /* wrong label type for the Program loss: names both */
  dy_program *q = dy_program_new();
  int qx = dy_program_add_var(q, "logits", &(dy_type){.dtype = DY_F32, .rank = 1, .shape = {5}});
  CU_ASSERT_NOT_EQUAL(dy_program_append_loss(q, qx, "label", &ce, &lv, &loss, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f32[5]"));
  dy_program_free(q);
  dy_program_free(p);
  CU_ASSERT_STRING_EQUAL(dy_loss_name(DY_LOSS_BCE_WITH_LOGITS), "bce_with_logits");
  dy_loss_kind k;
  CU_ASSERT(dy_loss_from_name("l1", &k) && k == DY_LOSS_L1);
  CU_ASSERT_FALSE(dy_loss_from_name("hinge", &k));
  dy_scope_end();
  dy_tape_clear();
}

void dy_test_register(void) {
  DY_SUITE("autograd");
  DY_TEST(test_mlp_gradients);
  DY_TEST(test_accumulate_and_clear);
  DY_TEST(test_seed);
  DY_TEST(test_tape_bounded);
  DY_TEST(test_loss_values);
  DY_TEST(test_program_loss);
  DY_TEST(test_traced_loss);
  DY_TEST(test_errors);
  DY_TEST(test_loss_gradients);
}
