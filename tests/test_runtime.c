/* test_runtime.c - eager ops and memory discipline, layers, the tracer,
 * static mode, to_static, jit_save / jit_load and the static executor.
 * Runs under ASan/LeakSanitizer in CI, so every test also checks that the
 * scope discipline leaks nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* ---- SimpleNet, as in samples/simple_net.c ---- */

typedef struct {
  dy_layer base;
  dy_layer *linear;
} simple_net;

static int forward_line;  /* the line of the dy_add below */

static dy_tensor *simple_net_forward(dy_layer *self, dy_tensor *const *in, int n) {
  simple_net *net = (simple_net *)self;
  (void)n;
  forward_line = __LINE__ + 1;
  return dy_add(dy_call1(net->linear, in[0]), in[1]);
}

static const dy_layer_vtable simple_net_vt = {"SimpleNet", simple_net_forward, NULL, false};

static dy_layer *simple_net_new(void) {
  simple_net *net = (simple_net *)dy_layer_new(sizeof *net, &simple_net_vt, "simple_net");
  net->linear = dy_layer_add_child(&net->base, dy_linear_new(10, 3));
  return &net->base;
}

static const dy_input_spec simple_specs[] = {
    {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 10}},
    {.name = "y", .dtype = DY_F32, .rank = 1, .shape = {3}},
};

static double max_diff(const dy_tensor *a, const dy_tensor *b) {
  CU_ASSERT_FATAL(dy_type_equal(&a->type, &b->type));
  double m = 0;
  for (int64_t i = 0; i < dy_tensor_numel(a); i++) {
    double d = fabs(dy_tensor_f32(a)[i] - dy_tensor_f32(b)[i]);
    if (d > m)
      m = d;
  }
  return m;
}

/* ---- eager ---- */

static void test_eager_nested_calls_by_hand(void) {
  /* relu(x @ w + b) with x = [[1,2]], w = [[1,-1],[2,0]], b = [0.5,-3] */
  dy_scope_begin();
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(1, 2), (float[]){1, 2});
  dy_tensor *w = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(2, 2), (float[]){1, -1, 2, 0});
  dy_tensor *b = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(2), (float[]){0.5f, -3});
  dy_tensor *y = dy_relu(dy_add(dy_matmul(x, w, false, false), b));
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  DY_ASSERT_NEAR(dy_tensor_f32(y)[0], 5.5, 1e-6); /* 1*1+2*2+0.5 */
  DY_ASSERT_NEAR(dy_tensor_f32(y)[1], 0.0, 0);    /* relu(-1-3) */
  dy_tensor *kept = dy_keep(y);
  dy_scope_end();
  DY_ASSERT_NEAR(dy_tensor_f32(kept)[0], 5.5, 1e-6);
  dy_tensor_free(kept);
}

static void test_eager_views_and_shapes(void) {
  dy_scope_begin();
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(2, 3), (float[]){0, 1, 2, 3, 4, 5});
  dy_tensor *r = dy_reshape(x, 2, DY_SHAPE(3, -1));
  CU_ASSERT_EQUAL(r->type.shape[0], 3);
  CU_ASSERT_EQUAL(r->type.shape[1], 2);
  CU_ASSERT_PTR_EQUAL(r->data, x->data); /* zero-copy view */
  dy_tensor *t = dy_transpose(x, 2, DY_SHAPE(1, 0));
  DY_ASSERT_NEAR(dy_tensor_f32(t)[1], 3.0, 0);
  dy_tensor *f = dy_flatten(dy_reshape(x, 3, DY_SHAPE(1, 2, 3)), 1, 2);
  CU_ASSERT_EQUAL(f->type.rank, 2);
  CU_ASSERT_EQUAL(f->type.shape[1], 6);
  dy_tensor *s = dy_softmax(x, -1);
  DY_ASSERT_NEAR(dy_tensor_f32(s)[0] + dy_tensor_f32(s)[1] + dy_tensor_f32(s)[2], 1.0, 1e-6);
  dy_tensor *o = dy_ones(2, DY_SHAPE(2, 2));
  DY_ASSERT_NEAR(dy_tensor_f32(o)[3], 1.0, 0);
  dy_scope_end();
}

static void test_eager_errors_propagate(void) {
  dy_clear_error();
  dy_scope_begin();
  dy_tensor *a = dy_zeros(2, DY_SHAPE(2, 3));
  dy_tensor *b = dy_zeros(2, DY_SHAPE(4, 5));
  int line = __LINE__ + 1;
  dy_tensor *bad = dy_relu(dy_add(dy_matmul(a, b, false, false), a));
  CU_ASSERT_PTR_NULL(bad);
  const dy_error *e = dy_last_error();
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL(e->status, DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_EQUAL(e->loc.line, line); /* the matmul's line, not a later op's */
  CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "matmul"));
  dy_scope_end();
  dy_clear_error();
}

static void test_seeded_random_is_reproducible(void) {
  dy_seed(11);
  dy_tensor *a = dy_randn(1, DY_SHAPE(100));
  dy_seed(11);
  dy_tensor *b = dy_randn(1, DY_SHAPE(100));
  CU_ASSERT_EQUAL(memcmp(a->data, b->data, a->nbytes), 0);
  double mean = 0;
  for (int i = 0; i < 100; i++)
    mean += dy_tensor_f32(a)[i] / 100;
  CU_ASSERT(fabs(mean) < 0.5);
  dy_tensor_free(a);
  dy_tensor_free(b);
}

static void test_layers_train_eval_and_names(void) {
  dy_layer *net = simple_net_new();
  CU_ASSERT_TRUE(net->training);
  dy_layer_eval(net);
  CU_ASSERT_FALSE(net->children[0]->training);
  dy_layer_train(net);
  CU_ASSERT_TRUE(net->children[0]->training);
  dy_layer *seq = dy_sequential_new();
  dy_sequential_append(seq, dy_linear_new(2, 2));
  dy_sequential_append(seq, dy_linear_new(2, 2));
  CU_ASSERT_STRING_EQUAL(seq->children[0]->name, "linear");
  CU_ASSERT_STRING_EQUAL(seq->children[1]->name, "linear_1");
  char path[128];
  dy_layer_param_path(seq->children[1], "weight", path, sizeof path);
  CU_ASSERT_STRING_EQUAL(path, "linear_1.weight");
  dy_layer_free(seq);
  dy_layer_free(net);
}

/* ---- tracer ---- */

static void test_trace_records_program(void) {
  dy_seed(1);
  dy_layer *net = simple_net_new();
  dy_tensor *x = dy_rand(2, DY_SHAPE(4, 10)), *y = dy_rand(1, DY_SHAPE(3));
  dy_tensor *out = NULL;
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_trace(net, simple_specs, (dy_tensor *[]){x, y}, 2, &out, &p, &err), &err);
  /* x @ W + b + y */
  CU_ASSERT_EQUAL(p->n_feeds, 2);
  CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[0]]->name, "x");
  CU_ASSERT_EQUAL(p->vars[p->feeds[0]]->type.shape[0], -1);
  CU_ASSERT_EQUAL(dy_program_count_ops(p), 3);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[0]->kind, DY_OP_MATMUL);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[2]->kind, DY_OP_ADD);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[2]->loc.line, forward_line);
  CU_ASSERT_PTR_NOT_NULL(strstr(p->blocks[0]->ops[2]->loc.file, "test_runtime.c"));
  const dy_var *o = p->vars[p->fetches[0]];
  CU_ASSERT_STRING_EQUAL(o->name, "out");
  CU_ASSERT_EQUAL(o->type.shape[0], -1);
  CU_ASSERT_EQUAL(o->type.shape[1], 3);
  CU_ASSERT(dy_program_find_var(p, "linear.weight") >= 0);
  CU_ASSERT(dy_program_find_var(p, "linear.bias") >= 0);
  /* the trace's eager output equals the executor on the traced Program */
  dy_tensor *o2 = NULL;
  DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *[]){x, y}, 2, &o2, 1, &err), &err);
  CU_ASSERT(max_diff(out, o2) == 0);
  dy_tensor_free(o2);
  dy_tensor_free(out);
  dy_tensor_free(x);
  dy_tensor_free(y);
  dy_program_free(p);
  dy_layer_free(net);
}

/* A forward that reshapes with the traced batch baked in. */
static int bake_line;
static dy_tensor *baking_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self;
  (void)n;
  bake_line = __LINE__ + 1;
  return dy_reshape(in[0], 3, DY_SHAPE(4, 5, 2));
}
static const dy_layer_vtable baking_vt = {"Baking", baking_forward, NULL, false};

/* The same, written with 0 and -1 so the batch stays dynamic. */
static dy_tensor *good_reshape_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self;
  (void)n;
  return dy_relu(dy_reshape(in[0], 3, DY_SHAPE(0, -1, 2)));
}
static const dy_layer_vtable good_vt = {"Good", good_reshape_forward, NULL, false};

static void test_trace_reports_baked_batch(void) {
  dy_layer *l = dy_layer_new(sizeof(dy_layer), &baking_vt, "baking");
  dy_tensor *x = dy_rand(2, DY_SHAPE(4, 10));
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 10}};
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_trace(l, &spec, &x, 1, NULL, &p, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_EQUAL(err.loc.line, bake_line);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dynamic batch"));
  CU_ASSERT_PTR_NULL(dy_last_error()); /* the slot is cleared after a trace */
  dy_layer_free(l);

  l = dy_layer_new(sizeof(dy_layer), &good_vt, "good");
  dy_tensor *out = NULL;
  DY_ASSERT_OK(dy_trace(l, &spec, &x, 1, &out, &p, &err), &err);
  const dy_var *o = p->vars[p->fetches[0]];
  CU_ASSERT_EQUAL(o->type.shape[0], -1);
  CU_ASSERT_EQUAL(o->type.shape[1], 5);
  CU_ASSERT_EQUAL(out->type.shape[0], 4);
  dy_tensor_free(out);
  dy_program_free(p);
  dy_layer_free(l);
  dy_tensor_free(x);
}

/* A forward with a data-dependent branch. */
static int item_line;
static dy_tensor *branchy_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self;
  (void)n;
  bool ok;
  item_line = __LINE__ + 1;
  double v = dy_item(dy_reshape(in[0], 1, DY_SHAPE(1)), &ok);
  if (!ok)
    return NULL;
  return v > 0 ? dy_relu(in[0]) : dy_tanh(in[0]);
}
static const dy_layer_vtable branchy_vt = {"Branchy", branchy_forward, NULL, false};

static void test_item_on_symbolic_is_an_error(void) {
  dy_layer *l = dy_layer_new(sizeof(dy_layer), &branchy_vt, "branchy");
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 1, .shape = {1}};
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_program_from_layer(l, &spec, 1, &p, &err), DY_STATUS_SYMBOLIC);
  CU_ASSERT_EQUAL(err.loc.line, item_line);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dy_item"));
  /* tracing on real data refuses too: the branch would be baked in */
  dy_tensor *x = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (float[]){2});
  CU_ASSERT_EQUAL(dy_trace(l, &spec, &x, 1, NULL, &p, &err), DY_STATUS_SYMBOLIC);
  CU_ASSERT_EQUAL(err.loc.line, item_line);
  /* eagerly it just works */
  dy_tensor *y = dy_call1(l, x);
  CU_ASSERT_PTR_NOT_NULL(y);
  dy_tensor_free(y);
  dy_tensor_free(x);
  dy_layer_free(l);
}

/* ---- static mode, to_static, jit ---- */

static void test_static_mode_program(void) {
  dy_seed(3);
  dy_layer *net = simple_net_new();
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_from_layer(net, simple_specs, 2, &p, &err), &err);
  CU_ASSERT_EQUAL(dy_program_count_ops(p), 3);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[0], -1);
  int w = dy_program_find_var(p, "linear.weight");
  CU_ASSERT_FATAL(w >= 0);
  CU_ASSERT_TRUE(p->vars[w]->persistable);
  CU_ASSERT_EQUAL(memcmp(p->vars[w]->data, net->children[0]->params[0]->data, 120), 0);
  dy_program_free(p);
  dy_layer_free(net);
}

static void test_to_static_caches_per_signature(void) {
  dy_seed(5);
  dy_layer *net = simple_net_new();
  dy_layer_eval(net);
  dy_layer *st = dy_to_static(net);
  dy_scope_begin();
  dy_tensor *y = dy_rand(1, DY_SHAPE(3));
  for (int round = 0; round < 2; round++)
    for (int b = 1; b <= 3; b += 2) {
      dy_tensor *x = dy_rand(2, DY_SHAPE(b, 10));
      dy_tensor *e = dy_call2(net, x, y), *s = dy_call2(st, x, y);
      CU_ASSERT_PTR_NOT_NULL_FATAL(s);
      CU_ASSERT(max_diff(e, s) <= 1e-6);
    }
  dy_scope_end();
  CU_ASSERT_EQUAL(dy_to_static_cache_size(st), 2); /* batch 1 and 3 */
  dy_layer_train(net);
  dy_scope_begin();
  dy_call2(st, dy_rand(2, DY_SHAPE(1, 10)), dy_rand(1, DY_SHAPE(3)));
  dy_scope_end();
  CU_ASSERT_EQUAL(dy_to_static_cache_size(st), 3); /* train mode is its own */
  dy_layer_free(st);
  dy_layer_free(net);
}

static void test_jit_save_load_run(void) {
  dy_seed(9);
  dy_layer *net = simple_net_new();
  dy_layer_eval(net);
  dy_error err = {0};
  const char *path = DY_BUILD_DIR "/rt_simple_net";
  DY_ASSERT_OK(dy_jit_save(net, simple_specs, 2, path, &err), &err);
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_jit_load(path, &p, &err), &err);
  for (int b = 1; b <= 64; b *= 4) {
    dy_scope_begin();
    dy_tensor *x = dy_randn(2, DY_SHAPE(b, 10)), *y = dy_randn(1, DY_SHAPE(3));
    dy_tensor *e = dy_call2(net, x, y), *o = NULL;
    DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *[]){x, y}, 2, &o, 1, &err), &err);
    CU_ASSERT(max_diff(e, o) <= 1e-6);
    dy_tensor_free(o);
    dy_scope_end();
  }
  dy_program_free(p);
  CU_ASSERT_EQUAL(dy_jit_load(DY_BUILD_DIR "/no_such_model", &p, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no_such_model"));
  dy_layer_free(net);
}

static void test_executor_rejects_bad_inputs(void) {
  dy_seed(9);
  dy_layer *net = simple_net_new();
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_from_layer(net, simple_specs, 2, &p, &err), &err);
  dy_scope_begin();
  dy_tensor *o = NULL;
  dy_tensor *x = dy_zeros(2, DY_SHAPE(2, 11)), *y = dy_zeros(1, DY_SHAPE(3));
  CU_ASSERT_EQUAL(dy_executor_run(p, (dy_tensor *[]){x, y}, 2, &o, 1, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "input 'x'"));
  CU_ASSERT_EQUAL(dy_executor_run(p, (dy_tensor *[]){x}, 1, &o, 1, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  dy_tensor *yi = dy_full(DY_I64, 1, DY_SHAPE(3), 1);
  x = dy_zeros(2, DY_SHAPE(2, 10));
  CU_ASSERT_EQUAL(dy_executor_run(p, (dy_tensor *[]){x, yi}, 2, &o, 1, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NULL(o);
  dy_scope_end();
  dy_program_free(p);
  dy_layer_free(net);
}

/* Bad programs are rejected at trace time with the op's source line. */
static int bad_line;
static int bad_which;
static dy_tensor *bad_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self;
  (void)n;
  if (bad_which == 0) {
    bad_line = __LINE__ + 1;
    return dy_reshape(in[0], 2, DY_SHAPE(0, 7)); /* 10 elements per row */
  }
  bad_line = __LINE__ + 1;
  return dy_softmax(in[0], 2); /* rank 2: axis out of range */
}
static const dy_layer_vtable bad_vt = {"Bad", bad_forward, NULL, false};

static void test_bad_ops_rejected_at_trace_time(void) {
  dy_layer *l = dy_layer_new(sizeof(dy_layer), &bad_vt, "bad");
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 10}};
  dy_tensor *x = dy_rand(2, DY_SHAPE(3, 10));
  for (bad_which = 0; bad_which < 2; bad_which++) {
    dy_program *p = NULL;
    dy_error err = {0};
    CU_ASSERT_NOT_EQUAL(dy_trace(l, &spec, &x, 1, NULL, &p, &err), DY_OK);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_EQUAL(err.loc.line, bad_line);
    CU_ASSERT(err.loc.file && strstr(err.loc.file, "test_runtime.c"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad_which ? "axis 2 out of range" : "reshape"));
    CU_ASSERT_NOT_EQUAL(dy_program_from_layer(l, &spec, 1, &p, &err), DY_OK);
    CU_ASSERT_EQUAL(err.loc.line, bad_line);
  }
  dy_tensor_free(x);
  dy_layer_free(l);
}

/* ---- train/eval and jit_save ---- */

static dy_tensor *moody_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)n;
  return self->training ? dy_tanh(in[0]) : dy_relu(in[0]);
}
static const dy_layer_vtable moody_vt = {"Moody", moody_forward, NULL, true};

static char warned[2048];
static void catch_warning(const char *msg, void *user) {
  (void)user;
  snprintf(warned, sizeof warned, "%s", msg);
}

/* Every recorded op points at a line of this file, never into the runtime:
 * a Sequential's child at the line where it was appended (a nested
 * Sequential's children at theirs), a traced root layer at the trace call,
 * and an error inside a child at the child's line. */
static void check_all_here(const dy_program *p) {
  for (int k = 0; k < p->blocks[0]->n_ops; k++) {
    const dy_op *op = p->blocks[0]->ops[k];
    CU_ASSERT(op->loc.file && strstr(op->loc.file, "test_runtime.c"));
    if (!op->loc.file || !strstr(op->loc.file, "test_runtime.c"))
      fprintf(stderr, "\n  op %d (%s) at %s:%d\n", op->id, dy_op_name(op->kind),
              op->loc.file ? op->loc.file : "?", op->loc.line);
  }
}

static void test_source_lines_are_the_users(void) {
  dy_seed(3);
  dy_layer *seq = dy_sequential_new(), *inner = dy_sequential_new();
  int line[4];
  line[0] = __LINE__ + 1;
  dy_sequential_append(seq, dy_linear_new(4, 8));
  line[1] = __LINE__ + 1;
  dy_sequential_append(seq, dy_relu_layer_new());
  line[2] = __LINE__ + 1;
  dy_sequential_append(inner, dy_linear_new(8, 2));
  line[3] = __LINE__ + 1;
  dy_sequential_append(inner, dy_tanh_layer_new());
  dy_sequential_append(seq, inner);
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 4}};
  /* matmul, add | relu | matmul, add | tanh */
  const dy_op_kind want_kind[] = {DY_OP_MATMUL, DY_OP_ADD, DY_OP_RELU,
                                  DY_OP_MATMUL, DY_OP_ADD, DY_OP_TANH};
  const int want_line[] = {line[0], line[0], line[1], line[2], line[2], line[3]};
  dy_error err = {0};
  dy_program *p = NULL, *q = NULL;
  DY_ASSERT_OK(dy_program_from_layer(seq, &spec, 1, &p, &err), &err);
  dy_tensor *x = dy_rand(2, DY_SHAPE(3, 4));
  DY_ASSERT_OK(dy_trace(seq, &spec, &x, 1, NULL, &q, &err), &err);
  const dy_program *both[2] = {p, q};
  for (int w = 0; w < 2; w++) {
    CU_ASSERT_EQUAL_FATAL(both[w]->blocks[0]->n_ops, 6);
    check_all_here(both[w]);
    for (int k = 0; k < 6; k++) {
      CU_ASSERT_EQUAL(both[w]->blocks[0]->ops[k]->kind, want_kind[k]);
      CU_ASSERT_EQUAL(both[w]->blocks[0]->ops[k]->loc.line, want_line[k]);
    }
  }
  dy_program_free(p);
  dy_program_free(q);

  /* eagerly called by the user: still each child's line (no trace) */
  dy_clear_error();
  dy_tensor *y = dy_call1(seq, x);
  CU_ASSERT_PTR_NOT_NULL(y);
  dy_tensor_free(y);

  /* a root built-in layer: the line of the trace call */
  dy_layer *lin = dy_linear_new(4, 2);
  int root_line = __LINE__ + 1;
  DY_ASSERT_OK(dy_program_from_layer(lin, &spec, 1, &p, &err), &err);
  CU_ASSERT_EQUAL_FATAL(p->blocks[0]->n_ops, 2);
  check_all_here(p);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[0]->loc.line, root_line);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[1]->loc.line, root_line);
  dy_program_free(p);
  root_line = __LINE__ + 1;
  DY_ASSERT_OK(dy_trace(lin, &spec, &x, 1, NULL, &p, &err), &err);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[0]->loc.line, root_line);
  dy_program_free(p);
  root_line = __LINE__ + 1;
  DY_ASSERT_OK(dy_jit_save(lin, &spec, 1, "runtime_srclines", &err), &err);
  DY_ASSERT_OK(dy_jit_load("runtime_srclines", &p, &err), &err);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[0]->loc.line, root_line);
  CU_ASSERT(p->blocks[0]->ops[0]->loc.file &&
            strstr(p->blocks[0]->ops[0]->loc.file, "test_runtime.c"));
  dy_program_free(p);
  remove("runtime_srclines.dymodel");
  remove("runtime_srclines.dyparams");
  dy_layer_free(lin);

  /* an error inside a child names the child's line */
  dy_layer *bad = dy_sequential_new();
  dy_sequential_append(bad, dy_relu_layer_new());
  int bad_line = __LINE__ + 1;
  dy_sequential_append(bad, dy_linear_new(5, 2));
  err = (dy_error){0};
  CU_ASSERT_EQUAL(dy_program_from_layer(bad, &spec, 1, &p, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_EQUAL(err.loc.line, bad_line);
  CU_ASSERT(err.loc.file && strstr(err.loc.file, "test_runtime.c"));
  dy_layer_free(bad);
  dy_tensor_free(x);
  dy_layer_free(seq);
  dy_clear_error();
}

static void test_jit_save_warns_in_train_mode(void) {
  dy_layer *seq = dy_sequential_new();
  dy_sequential_append(seq, dy_linear_new(4, 4));
  dy_sequential_append(seq, dy_layer_new(sizeof(dy_layer), &moody_vt, "moody"));
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, 4}};
  dy_error err = {0};
  dy_set_warning_handler(catch_warning, NULL);
  warned[0] = 0;
  /* train mode, saved as is: a warning naming the layer, train semantics */
  DY_ASSERT_OK(dy_jit_save(seq, &spec, 1, DY_BUILD_DIR "/rt_moody", &err), &err);
  CU_ASSERT_PTR_NOT_NULL(strstr(warned, "'sequential.moody' (Moody)"));
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_jit_load(DY_BUILD_DIR "/rt_moody", &p, &err), &err);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[p->blocks[0]->n_ops - 1]->kind, DY_OP_TANH);
  dy_program_free(p);
  /* asked for eval semantics: no warning, relu, and the modes come back */
  warned[0] = 0;
  DY_ASSERT_OK(dy_jit_save_ex(seq, &spec, 1, DY_BUILD_DIR "/rt_moody", DY_SAVE_EVAL, &err), &err);
  CU_ASSERT_EQUAL(warned[0], 0);
  DY_ASSERT_OK(dy_jit_load(DY_BUILD_DIR "/rt_moody", &p, &err), &err);
  CU_ASSERT_EQUAL(p->blocks[0]->ops[p->blocks[0]->n_ops - 1]->kind, DY_OP_RELU);
  dy_program_free(p);
  CU_ASSERT_TRUE(seq->children[1]->training);
  /* in eval mode: no warning */
  dy_layer_eval(seq);
  DY_ASSERT_OK(dy_jit_save(seq, &spec, 1, DY_BUILD_DIR "/rt_moody", &err), &err);
  CU_ASSERT_EQUAL(warned[0], 0);
  dy_set_warning_handler(NULL, NULL);
  dy_layer_free(seq);
}

void dy_test_register(void) {
  DY_SUITE("runtime");
  DY_TEST(test_eager_nested_calls_by_hand);
  DY_TEST(test_eager_views_and_shapes);
  DY_TEST(test_eager_errors_propagate);
  DY_TEST(test_seeded_random_is_reproducible);
  DY_TEST(test_layers_train_eval_and_names);
  DY_TEST(test_trace_records_program);
  DY_TEST(test_trace_reports_baked_batch);
  DY_TEST(test_item_on_symbolic_is_an_error);
  DY_TEST(test_static_mode_program);
  DY_TEST(test_to_static_caches_per_signature);
  DY_TEST(test_jit_save_load_run);
  DY_TEST(test_executor_rejects_bad_inputs);
  DY_TEST(test_jit_save_warns_in_train_mode);
  DY_TEST(test_source_lines_are_the_users);
  DY_TEST(test_bad_ops_rejected_at_trace_time);
}
