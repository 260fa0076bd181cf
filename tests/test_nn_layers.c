/* test_nn_layers.c - the nn family's eager API and layers: BatchNorm2D in
 * train mode by hand (running-statistics update included) and in eval
 * mode, dropout's mask (statistics, upscaling, reproducibility, the
 * documented hash), every layer traced (dy_trace) and built in static mode
 * (dy_program_from_layer, -1 batch) and run on the static executor against
 * eager, a small CNN saved, compiled to C and run, and the errors: a conv
 * whose channels do not divide by its groups is rejected at trace time
 * with the source line of the call. Runs under ASan too, so every test
 * also checks that nothing leaks.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define WORK DY_BUILD_DIR "/nn_layers"

static double max_diff(const dy_tensor *a, const dy_tensor *b) {
  char ta[128], tb[128];
  if (!a || !b || !dy_type_equal(&a->type, &b->type)) {
    fprintf(stderr, "\n  types differ: %s vs %s\n",
            a ? dy_type_str(&a->type, ta, sizeof ta) : "NULL",
            b ? dy_type_str(&b->type, tb, sizeof tb) : "NULL");
    return INFINITY;
  }
  double m = 0;
  for (int64_t i = 0; i < dy_tensor_numel(a); i++) {
    double d = fabs(dy_tensor_f32(a)[i] - dy_tensor_f32(b)[i]);
    if (!(d <= m))
      m = d;
  }
  return m;
}

static dy_tensor *param(const dy_layer *l, const char *name) {
  for (int i = 0; i < l->n_params; i++) {
    const char *n = strrchr(l->params[i]->name, '.');
    if (strcmp(n ? n + 1 : l->params[i]->name, name) == 0)
      return l->params[i];
  }
  return NULL;
}

static void assert_no_error(void) {
  const dy_error *e = dy_last_error();
  if (e)
    fprintf(stderr, "\n  unexpected error: %s\n", e->msg);
  CU_ASSERT_PTR_NULL(e);
  dy_clear_error();
}

/* ---- BatchNorm2D ---- */

static void test_batch_norm_train_by_hand(void) {
  /* x [2,2,1,2]: channel 0 holds 1,3,1,3 (mean 2, biased variance 1),
   * channel 1 holds 2,6,6,2 (mean 4, variance 4); eps 0 */
  dy_layer *bn = dy_batch_norm2d_new(2, 0.9, 0.0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bn);
  CU_ASSERT_TRUE(bn->vt->mode_dependent);
  CU_ASSERT_TRUE(bn->training);
  dy_tensor *w = param(bn, "weight"), *b = param(bn, "bias");
  dy_tensor *rm = param(bn, "_mean"), *rv = param(bn, "_variance");
  CU_ASSERT_PTR_NOT_NULL_FATAL(rm);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rv);
  /* Paddle's initial values */
  DY_ASSERT_NEAR(dy_tensor_f32(w)[1], 1.0, 0);
  DY_ASSERT_NEAR(dy_tensor_f32(b)[1], 0.0, 0);
  DY_ASSERT_NEAR(dy_tensor_f32(rm)[0], 0.0, 0);
  DY_ASSERT_NEAR(dy_tensor_f32(rv)[0], 1.0, 0);
  dy_tensor_f32(w)[1] = 2; /* scale channel 1 by 2 and shift it by 1 */
  dy_tensor_f32(b)[1] = 1;

  dy_scope_begin();
  dy_tensor *x = dy_tensor_from_data(DY_F32, 4, DY_SHAPE(2, 2, 1, 2),
                                     (float[]){1, 3, 2, 6, 1, 3, 6, 2});
  dy_tensor *y = dy_call1(bn, x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  const float want[] = {-1, 1, -1, 3, -1, 1, 3, -1};
  for (int i = 0; i < 8; i++)
    DY_ASSERT_NEAR(dy_tensor_f32(y)[i], want[i], 1e-6);
  /* running = 0.9 * running + 0.1 * batch */
  DY_ASSERT_NEAR(dy_tensor_f32(rm)[0], 0.2, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rm)[1], 0.4, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rv)[0], 1.0, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rv)[1], 1.3, 1e-6);
  /* a second step moves them again */
  dy_call1(bn, x);
  DY_ASSERT_NEAR(dy_tensor_f32(rm)[0], 0.38, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rm)[1], 0.76, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rv)[0], 1.0, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rv)[1], 1.57, 1e-6);

  /* eval: the running statistics, which stay put */
  dy_layer_eval(bn);
  dy_tensor *e = dy_call1(bn, x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  DY_ASSERT_NEAR(dy_tensor_f32(e)[0], (1 - 0.38) / sqrt(1.0), 1e-5);
  DY_ASSERT_NEAR(dy_tensor_f32(e)[1], (3 - 0.38) / sqrt(1.0), 1e-5);
  DY_ASSERT_NEAR(dy_tensor_f32(e)[2], (2 - 0.76) / sqrt(1.57) * 2 + 1, 1e-5);
  DY_ASSERT_NEAR(dy_tensor_f32(e)[3], (6 - 0.76) / sqrt(1.57) * 2 + 1, 1e-5);
  DY_ASSERT_NEAR(dy_tensor_f32(rm)[1], 0.76, 1e-6);
  DY_ASSERT_NEAR(dy_tensor_f32(rv)[1], 1.57, 1e-6);
  dy_scope_end();
  assert_no_error();
  dy_layer_free(bn);
}

static void test_batch_norm_static_mode_keeps_running_stats(void) {
  dy_layer *bn = dy_batch_norm2d_new(3, 0.9, 1e-5);
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 3, 4, 4}};
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_from_layer(bn, &spec, 1, &p, &err), &err);
  CU_ASSERT_EQUAL(dy_tensor_f32(param(bn, "_mean"))[2], 0.0f);
  CU_ASSERT_EQUAL(dy_tensor_f32(param(bn, "_variance"))[2], 1.0f);
  /* the op is in training mode and the statistics are Program parameters */
  const dy_op *op = p->blocks[0]->ops[0];
  CU_ASSERT_EQUAL(op->kind, DY_OP_BATCH_NORM);
  CU_ASSERT_PTR_NOT_NULL(dy_op_find_attr(op, "is_test")); /* carried, not defaulted */
  CU_ASSERT_EQUAL(dy_batch_norm_attrs_get(op).is_test, 0);
  CU_ASSERT(dy_program_find_var(p, "_mean") >= 0);
  dy_program_free(p);
  dy_layer_free(bn);
  assert_no_error();
}

/* ---- dropout ---- */

/* The mask documented in runtime/kernels/kernels_nn.c, written out again. */
static bool kept(uint64_t seed, uint64_t i, float p) {
  uint64_t z = (seed ^ (i * 0x9E3779B97F4A7C15ull)) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 40) / 16777216.0 >= (double)p;
}

static void test_dropout_train_mask_and_scale(void) {
  enum { ROWS = 200, COLS = 500, N = ROWS * COLS };
  dy_scope_begin();
  dy_tensor *x = dy_tensor_new(DY_F32, 2, DY_SHAPE(ROWS, COLS));
  for (int i = 0; i < N; i++)
    dy_tensor_f32(x)[i] = (float)(i % 7) - 2.5f;
  const float p = 0.3f, scale = 1.0f / (1.0f - p);

  dy_seed(5);
  uint64_t seed = dy_rand_u64(); /* the seed the next training call draws */
  dy_seed(5);
  dy_tensor *y = dy_dropout(x, p, true);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  int dropped = 0, wrong = 0, hash_mismatch = 0;
  for (int i = 0; i < N; i++) {
    float v = dy_tensor_f32(y)[i], xi = dy_tensor_f32(x)[i];
    if (v == 0.0f)
      dropped++;
    else if (v != xi * scale) /* kept values are x / (1 - p) exactly */
      wrong++;
    if ((v != 0.0f) != kept(seed, (uint64_t)i, p))
      hash_mismatch++;
  }
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_EQUAL(hash_mismatch, 0);
  /* 30% dropped, within 5 standard deviations (sqrt(N p (1-p)) = 145) */
  CU_ASSERT(abs(dropped - (int)(0.3 * N)) < 5 * 145);
  /* the same seed gives the same mask; the next call another one */
  dy_seed(5);
  dy_tensor *again = dy_dropout(x, p, true);
  CU_ASSERT_EQUAL(memcmp(again->data, y->data, y->nbytes), 0);
  dy_tensor *other = dy_dropout(x, p, true);
  CU_ASSERT_NOT_EQUAL(memcmp(other->data, y->data, y->nbytes), 0);

  /* eval is the identity, and p = 1 drops everything */
  dy_tensor *e = dy_dropout(x, p, false);
  CU_ASSERT_EQUAL(memcmp(e->data, x->data, x->nbytes), 0);
  dy_tensor *all = dy_dropout(x, 1.0, true);
  CU_ASSERT_EQUAL(max_diff(all, dy_zeros(2, DY_SHAPE(ROWS, COLS))), 0.0);
  CU_ASSERT_PTR_NULL(dy_dropout(x, -0.1, true));
  CU_ASSERT_EQUAL(dy_last_error()->status, DY_STATUS_INVALID_ARGUMENT);
  dy_clear_error();
  dy_scope_end();
}

static void test_dropout_layer_modes(void) {
  dy_layer *d = dy_dropout_layer_new(0.5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_TRUE(d->vt->mode_dependent);
  dy_scope_begin();
  dy_tensor *x = dy_ones(2, DY_SHAPE(4, 100));
  dy_tensor *y = dy_call1(d, x);
  int zeros = 0, twos = 0;
  for (int i = 0; i < 400; i++) {
    zeros += dy_tensor_f32(y)[i] == 0.0f;
    twos += dy_tensor_f32(y)[i] == 2.0f;
  }
  CU_ASSERT_EQUAL(zeros + twos, 400);
  CU_ASSERT(zeros > 100 && zeros < 300);
  dy_layer_eval(d);
  CU_ASSERT_EQUAL(max_diff(dy_call1(d, x), x), 0.0);
  dy_scope_end();
  dy_layer_free(d);
  CU_ASSERT_PTR_NULL(dy_dropout_layer_new(1.5));
  dy_clear_error();
}

/* ---- every layer: trace and static mode against eager ---- */

/* Eager, dy_trace and dy_program_from_layer (spec with a -1 batch) agree
 * on the executor, at the traced batch and at another one (x2). Layers
 * that draw random numbers per call (dropout in training) only compare the
 * trace with its own eager run. */
static void check_static(dy_layer *l, const dy_input_spec *spec, dy_tensor *x,
                         dy_tensor *x2, bool random_per_call, double tol) {
  dy_error err = {0};
  dy_tensor *eager = NULL, *traced = NULL, *run = NULL;
  dy_program *tp = NULL, *sp = NULL;
  DY_ASSERT_OK(dy_trace(l, spec, &x, 1, &traced, &tp, &err), &err);
  DY_ASSERT_OK(dy_executor_run(tp, &x, 1, &run, 1, &err), &err);
  double d = max_diff(run, traced);
  if (!(d <= tol))
    fprintf(stderr, "\n  %s: traced Program vs eager differ by %g\n", l->vt->type_name, d);
  CU_ASSERT(d <= tol);
  dy_tensor_free(run);
  if (!random_per_call) {
    dy_scope_begin();
    eager = dy_keep(dy_call1(l, x));
    dy_tensor *eager2 = dy_keep(dy_call1(l, x2));
    dy_scope_end();
    CU_ASSERT(max_diff(eager, traced) <= tol);
    DY_ASSERT_OK(dy_program_from_layer(l, spec, 1, &sp, &err), &err);
    DY_ASSERT_OK(dy_executor_run(sp, &x, 1, &run, 1, &err), &err);
    d = max_diff(run, eager);
    if (!(d <= tol))
      fprintf(stderr, "\n  %s: static Program vs eager differ by %g\n", l->vt->type_name, d);
    CU_ASSERT(d <= tol);
    dy_tensor_free(run);
    DY_ASSERT_OK(dy_executor_run(sp, &x2, 1, &run, 1, &err), &err);
    CU_ASSERT(max_diff(run, eager2) <= tol);
    dy_tensor_free(run);
    dy_tensor_free(eager2);
    /* the -1 survives into the Program */
    CU_ASSERT_EQUAL(sp->vars[sp->fetches[0]]->type.shape[0], -1);
  }
  dy_tensor_free(eager);
  dy_tensor_free(traced);
  dy_program_free(tp);
  dy_program_free(sp);
  assert_no_error();
}

/* random input [b, c, h, w] (caller frees) */
static dy_tensor *input(int64_t b, int64_t c, int64_t h, int64_t w) {
  return dy_randn(4, DY_SHAPE(b, c, h, w));
}

static void test_conv2d_layer(void) {
  dy_seed(1);
  dy_layer *conv = dy_conv2d_layer_new(
      3, 4, 3, 3, (dy_conv2d_params){.stride = {2, 2}, .padding = {1, 1, 1, 1}}, true);
  CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
  dy_tensor *w = param(conv, "weight"), *b = param(conv, "bias");
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT(w->type.rank == 4 && w->type.shape[0] == 4 && w->type.shape[1] == 3);
  CU_ASSERT(b->type.rank == 3 && b->type.shape[0] == 4 && b->type.shape[1] == 1);
  /* Kaiming-uniform bound 1/sqrt(3*3*3) */
  float bound = 1.0f / sqrtf(27.0f), mx = 0;
  for (int64_t i = 0; i < dy_tensor_numel(w); i++)
    mx = fabsf(dy_tensor_f32(w)[i]) > mx ? fabsf(dy_tensor_f32(w)[i]) : mx;
  CU_ASSERT(mx <= bound && mx > 0.5f * bound);

  dy_tensor *x = input(2, 3, 9, 9), *x2 = input(3, 3, 9, 9);
  /* the layer is conv2d + bias */
  dy_scope_begin();
  dy_tensor *y = dy_call1(conv, x);
  dy_tensor *ref = dy_add(dy_conv2d(x, w, .stride = {2, 2}, .padding = {1, 1, 1, 1}), b);
  CU_ASSERT_EQUAL(y->type.shape[2], 5);
  CU_ASSERT_EQUAL(max_diff(y, ref), 0.0);
  dy_scope_end();
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 3, 9, 9}};
  check_static(conv, &spec, x, x2, false, 1e-5);
  dy_tensor_free(x);
  dy_tensor_free(x2);
  dy_layer_free(conv);
}

static void test_grouped_conv2d_layer(void) {
  dy_seed(2);
  dy_layer *conv = dy_conv2d_layer_new(
      4, 6, 3, 1, (dy_conv2d_params){.padding = {1, 0, 1, 0}, .groups = 2}, false);
  CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
  CU_ASSERT_PTR_NULL(param(conv, "bias"));
  CU_ASSERT_EQUAL(param(conv, "weight")->type.shape[1], 2);
  dy_tensor *x = input(2, 4, 7, 5), *x2 = input(1, 4, 7, 5);
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 4, 7, 5}};
  check_static(conv, &spec, x, x2, false, 1e-5);
  /* depthwise, channel multiplier 2, dilation 2 */
  dy_layer *dw = dy_conv2d_layer_new(
      4, 8, 3, 3, (dy_conv2d_params){.padding = {2, 2, 2, 2}, .dilation = {2, 2}, .groups = 4},
      true);
  check_static(dw, &spec, x, x2, false, 1e-5);
  dy_tensor_free(x);
  dy_tensor_free(x2);
  dy_layer_free(conv);
  dy_layer_free(dw);
}

static void test_conv2d_transpose_layer(void) {
  dy_seed(3);
  dy_layer *up = dy_conv2d_transpose_layer_new(
      4, 6, 3, 3,
      (dy_conv2d_transpose_params){.stride = {2, 2}, .padding = {1, 1, 1, 1},
                                   .output_padding = {1, 1}, .groups = 2},
      true);
  CU_ASSERT_PTR_NOT_NULL_FATAL(up);
  dy_tensor *w = param(up, "weight");
  CU_ASSERT(w->type.shape[0] == 4 && w->type.shape[1] == 3); /* [C, O/g, kh, kw] */
  dy_tensor *x = input(2, 4, 5, 5), *x2 = input(3, 4, 5, 5);
  dy_scope_begin();
  dy_tensor *y = dy_call1(up, x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT(y->type.shape[1] == 6 && y->type.shape[2] == 10 && y->type.shape[3] == 10);
  dy_scope_end();
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 4, 5, 5}};
  check_static(up, &spec, x, x2, false, 1e-5);
  dy_tensor_free(x);
  dy_tensor_free(x2);
  dy_layer_free(up);
}

static void test_norm_layers(void) {
  dy_seed(4);
  dy_tensor *x = input(2, 6, 5, 4), *x2 = input(3, 6, 5, 4);
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 6, 5, 4}};

  dy_layer *bn = dy_batch_norm2d_new(6, 0.9, 1e-5);
  /* make the running statistics and affine parameters non-trivial */
  for (int c = 0; c < 6; c++) {
    dy_tensor_f32(param(bn, "_mean"))[c] = 0.1f * (float)c;
    dy_tensor_f32(param(bn, "_variance"))[c] = 0.5f + 0.2f * (float)c;
    dy_tensor_f32(param(bn, "weight"))[c] = 1.0f + 0.5f * (float)c;
    dy_tensor_f32(param(bn, "bias"))[c] = -0.3f * (float)c;
  }
  dy_layer_eval(bn);
  check_static(bn, &spec, x, x2, false, 1e-5);
  dy_layer_train(bn);
  check_static(bn, &spec, x, x2, false, 1e-5);
  dy_layer_free(bn);

  dy_layer *ln = dy_layer_norm_layer_new(2, DY_SHAPE(5, 4), 1e-5);
  CU_ASSERT_EQUAL(param(ln, "weight")->type.shape[0], 20);
  check_static(ln, &spec, x, x2, false, 1e-5);
  dy_layer_free(ln);

  dy_layer *gn = dy_group_norm_layer_new(3, 6, 1e-5);
  check_static(gn, &spec, x, x2, false, 1e-5);
  dy_layer_free(gn);
  CU_ASSERT_PTR_NULL(dy_group_norm_layer_new(4, 6, 1e-5));
  dy_clear_error();
  dy_tensor_free(x);
  dy_tensor_free(x2);
}

static void test_dropout_and_pool_layers(void) {
  dy_seed(5);
  dy_tensor *x = input(2, 3, 13, 13), *x2 = input(1, 3, 13, 13);
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 3, 13, 13}};

  /* training: the trace records the seed it drew, so the Program replays
   * the eager mask exactly */
  dy_layer *drop = dy_dropout_layer_new(0.4);
  check_static(drop, &spec, x, x2, true, 0.0);
  dy_layer_eval(drop);
  check_static(drop, &spec, x, x2, false, 0.0);
  dy_layer_free(drop);

  dy_layer *mp = dy_max_pool2d_layer_new(
      (dy_pool2d_params){.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1},
                         .ceil_mode = true});
  check_static(mp, &spec, x, x2, false, 0.0);
  dy_layer_free(mp);

  dy_layer *ap = dy_avg_pool2d_layer_new(
      (dy_pool2d_params){.kernel = {2, 3}, .padding = {1, 0, 1, 2}, .count_include_pad = true});
  check_static(ap, &spec, x, x2, false, 1e-6);
  dy_layer_free(ap);

  dy_layer *ad = dy_adaptive_avg_pool2d_layer_new(3, 2);
  check_static(ad, &spec, x, x2, false, 1e-6);
  dy_layer_free(ad);
  dy_tensor_free(x);
  dy_tensor_free(x2);
}

/* ---- the functional API ---- */

static void test_functional_defaults(void) {
  dy_seed(6);
  dy_scope_begin();
  dy_tensor *x = dy_randn(4, DY_SHAPE(1, 4, 6, 6)), *w = dy_randn(4, DY_SHAPE(2, 4, 3, 3));
  dy_tensor *a = dy_conv2d(x, w, 0);
  dy_tensor *b = dy_conv2d(x, w, .stride = {1, 1}, .dilation = {1, 1}, .groups = 1);
  CU_ASSERT_EQUAL(a->type.shape[2], 4);
  CU_ASSERT_EQUAL(max_diff(a, b), 0.0);
  /* the pool's stride defaults to its kernel */
  dy_tensor *p = dy_max_pool2d(x, .kernel = {2, 3});
  CU_ASSERT(p->type.shape[2] == 3 && p->type.shape[3] == 2);
  dy_tensor *g = dy_global_avg_pool2d(x), *ga = dy_adaptive_avg_pool2d(x, 1, 1);
  CU_ASSERT(g->type.shape[2] == 1 && g->type.shape[3] == 1);
  CU_ASSERT(max_diff(g, ga) <= 1e-6);
  dy_tensor *gm = dy_global_max_pool2d(x), *am = dy_adaptive_max_pool2d(x, 1, 1);
  CU_ASSERT_EQUAL(max_diff(gm, am), 0.0);
  dy_tensor *ln = dy_layer_norm(x, dy_ones(1, DY_SHAPE(36)), dy_zeros(1, DY_SHAPE(36)), 2,
                                1e-5);
  dy_tensor *gn = dy_group_norm(x, dy_ones(1, DY_SHAPE(4)), dy_zeros(1, DY_SHAPE(4)), 4,
                                1e-5);
  /* group norm with one channel per group is layer norm over H, W */
  CU_ASSERT(max_diff(ln, gn) <= 1e-5);
  dy_scope_end();
  assert_no_error();
}

/* ---- errors, with the user's source line ---- */

typedef struct {
  dy_layer base;
  dy_layer *conv;
} wrap_net;

static int wrap_line;

static dy_tensor *wrap_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)n;
  wrap_line = __LINE__ + 1;
  return dy_call1(((wrap_net *)self)->conv, in[0]);
}

static const dy_layer_vtable wrap_vt = {"Wrap", wrap_forward, NULL, false};

static void test_conv_groups_rejected_at_trace_time(void) {
  /* a conv with 3 groups, given 4 channels */
  wrap_net *net = (wrap_net *)dy_layer_new(sizeof *net, &wrap_vt, "net");
  net->conv = dy_layer_add_child(
      &net->base, dy_conv2d_layer_new(6, 6, 3, 3, (dy_conv2d_params){.groups = 3}, true));
  CU_ASSERT_PTR_NOT_NULL_FATAL(net->conv);
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 4, 8, 8}};
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_program_from_layer(&net->base, &spec, 1, &p, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_EQUAL(err.loc.line, wrap_line);
  CU_ASSERT(err.loc.file && strstr(err.loc.file, "test_nn_layers.c"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "input channels 4 do not divide by groups 3"));
  char line[800];
  dy_error_format(&err, line, sizeof line);
  if (err.loc.line != wrap_line)
    fprintf(stderr, "\n  error: %s\n", line);

  /* the eager trace fails the same way */
  dy_tensor *x = dy_randn(4, DY_SHAPE(2, 4, 8, 8));
  err = (dy_error){0};
  CU_ASSERT_EQUAL(dy_trace(&net->base, &spec, &x, 1, NULL, &p, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_EQUAL(err.loc.line, wrap_line);
  dy_tensor_free(x);
  dy_layer_free(&net->base);
  dy_clear_error();

  /* a constructor whose channels do not divide says so at once */
  CU_ASSERT_PTR_NULL(dy_conv2d_layer_new(5, 6, 3, 3, (dy_conv2d_params){.groups = 2}, true));
  CU_ASSERT_EQUAL(dy_last_error()->status, DY_STATUS_SHAPE_MISMATCH);
  dy_clear_error();
}

static void test_dynamic_dims_rejected(void) {
  dy_error err = {0};
  dy_program *p = NULL;
  /* LayerNorm over [4, 6] of a [-1, 6] input would normalise over the batch */
  dy_layer *ln = dy_layer_norm_layer_new(2, DY_SHAPE(4, 6), 1e-5);
  dy_input_spec s1 = {"x", DY_F32, 2, {-1, 6}};
  CU_ASSERT_EQUAL(dy_program_from_layer(ln, &s1, 1, &p, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dynamic"));
  dy_layer_free(ln);
  /* a conv's channels must be static */
  dy_layer *conv = dy_conv2d_layer_new(3, 3, 1, 1, (dy_conv2d_params){0}, false);
  dy_input_spec s2 = {"x", DY_F32, 4, {2, -1, 5, 5}};
  err = (dy_error){0};
  CU_ASSERT_EQUAL(dy_program_from_layer(conv, &s2, 1, &p, &err), DY_STATUS_UNSUPPORTED);
  dy_layer_free(conv);
  /* a pool larger than its padded input */
  dy_layer *mp = dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {5, 5}});
  dy_input_spec s3 = {"x", DY_F32, 4, {-1, 2, 4, 4}};
  err = (dy_error){0};
  CU_ASSERT_EQUAL(dy_program_from_layer(mp, &s3, 1, &p, &err), DY_STATUS_SHAPE_MISMATCH);
  dy_layer_free(mp);
  CU_ASSERT_PTR_NULL(dy_max_pool2d_layer_new((dy_pool2d_params){.kernel = {0, 2}}));
  dy_clear_error();
}

/* ---- a small CNN: save, load, compile, run ---- */

static int sh(const char *cmd) {
  char full[4096];
  snprintf(full, sizeof full, "(%s) >%s/last.log 2>&1", cmd, WORK);
  int rc = system(full);
  if (rc) {
    char show[600];
    snprintf(show, sizeof show, "cat %s/last.log >&2", WORK);
    fprintf(stderr, "\n  failed: %s\n", cmd);
    if (system(show)) { /* nothing more to show */
    }
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static dy_layer *small_cnn(void) {
  dy_layer *net = dy_sequential_new();
  dy_sequential_append(net, dy_conv2d_layer_new(3, 8, 3, 3,
                                                (dy_conv2d_params){.padding = {1, 1, 1, 1}},
                                                true));
  dy_sequential_append(net, dy_batch_norm2d_new(8, 0.9, 1e-5));
  dy_sequential_append(net, dy_relu_layer_new());
  dy_sequential_append(net, dy_max_pool2d_layer_new(
                                (dy_pool2d_params){.kernel = {2, 2}, .ceil_mode = true}));
  dy_sequential_append(net, dy_dropout_layer_new(0.25));
  dy_sequential_append(net, dy_conv2d_layer_new(
                                8, 8, 3, 3,
                                (dy_conv2d_params){.stride = {2, 2}, .padding = {1, 1, 1, 1},
                                                   .groups = 8},
                                false));
  dy_sequential_append(net, dy_group_norm_layer_new(2, 8, 1e-5));
  dy_sequential_append(net, dy_conv2d_transpose_layer_new(
                                8, 4, 2, 2, (dy_conv2d_transpose_params){.stride = {2, 2}},
                                true));
  dy_sequential_append(net, dy_adaptive_avg_pool2d_layer_new(2, 3));
  return net;
}

static void test_small_cnn_compiled(void) {
  mkdir(WORK, 0777);
  dy_seed(7);
  dy_layer *net = small_cnn();
  CU_ASSERT_EQUAL_FATAL(net->n_children, 9);
  /* one training step moves the BatchNorm statistics off their defaults */
  dy_tensor *warm = dy_randn(4, DY_SHAPE(4, 3, 11, 9));
  dy_tensor_free(dy_call1(net, warm));
  dy_tensor_free(warm);
  dy_layer_eval(net);

  dy_error err = {0};
  dy_input_spec spec = {"x", DY_F32, 4, {-1, 3, 11, 9}};
  DY_ASSERT_OK(dy_jit_save(net, &spec, 1, WORK "/cnn", &err), &err);
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_jit_load(WORK "/cnn", &p, &err), &err);

  int64_t batches[] = {1, 3};
  for (int k = 0; k < 2; k++) {
    dy_tensor *x = dy_randn(4, DY_SHAPE(batches[k], 3, 11, 9));
    dy_tensor *eager = dy_call1(net, x), *run = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(eager);
    CU_ASSERT(eager->type.shape[1] == 4 && eager->type.shape[2] == 2);
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, &run, 1, &err), &err);
    CU_ASSERT(max_diff(run, eager) <= 1e-5);
    dy_tensor_free(run);

    char cmd[2048], path[600];
    snprintf(path, sizeof path, WORK "/x%d.npy", k);
    DY_ASSERT_OK(dy_npy_write(path, x, &err), &err);
    if (k == 0) {
      snprintf(cmd, sizeof cmd, "%s compile %s/cnn.dymodel -o %s/cnn_bin --max-batch 4",
               DY2STC_PATH, WORK, WORK);
      CU_ASSERT_EQUAL_FATAL(sh(cmd), 0);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s/out && %s/cnn_bin --input x=%s --output-dir %s/out",
             WORK, WORK, path, WORK);
    CU_ASSERT_EQUAL(sh(cmd), 0);
    dy_tensor *got = NULL;
    DY_ASSERT_OK(dy_npy_read(WORK "/out/out.npy", &got, &err), &err);
    /* the compiled direct convolutions sum in another order than sgemm */
    double d = max_diff(got, eager);
    if (!(d <= 1e-4))
      fprintf(stderr, "\n  compiled CNN differs from eager by %g at batch %lld\n", d,
              (long long)batches[k]);
    CU_ASSERT(d <= 1e-4);
    dy_tensor_free(got);
    dy_tensor_free(eager);
    dy_tensor_free(x);
  }
  dy_program_free(p);
  dy_layer_free(net);
  assert_no_error();
}

void dy_test_register(void) {
  DY_SUITE("nn_layers");
  DY_TEST(test_batch_norm_train_by_hand);
  DY_TEST(test_batch_norm_static_mode_keeps_running_stats);
  DY_TEST(test_dropout_train_mask_and_scale);
  DY_TEST(test_dropout_layer_modes);
  DY_TEST(test_conv2d_layer);
  DY_TEST(test_grouped_conv2d_layer);
  DY_TEST(test_conv2d_transpose_layer);
  DY_TEST(test_norm_layers);
  DY_TEST(test_dropout_and_pool_layers);
  DY_TEST(test_functional_defaults);
  DY_TEST(test_conv_groups_rejected_at_trace_time);
  DY_TEST(test_dynamic_dims_rejected);
  DY_TEST(test_small_cnn_compiled);
}
