/* test_control.c - control flow: cond and while (ir/ops_control.def,
 * ir/program/blocks.c, runtime/executor_block.c, runtime/control.c).
 *
 * Hand-written Programs with a while loop and a cond run on the static
 * executor for inputs that take every branch and loop counts 0, 1 and
 * many; the text form and .dymodel round trip them (and a version-1 file
 * still reads); each verifier invariant for blocks (11-13) is broken once
 * by an edit of the text and reported by number. The eager API is run
 * against the executor on the Programs that tracing it records, and its
 * errors (a non-bool predicate, a branch-local tensor escaping, branches of
 * different types) are checked.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* acc doubles n times (n from a feed): i counts in f32 */
static const char *loop_text =
    "program {\n"
    "  var x : f32[-1,4] feed 0\n"
    "  var n : f32[1] feed 1\n"
    "  var zero : f32[1] persistable = [0.0]\n"
    "  var one : f32[1] persistable = [1.0]\n"
    "  var i_0 : f32[1]\n"
    "  var acc_0 : f32[-1,4]\n"
    "  var c_0 : bool[1]\n"
    "  var i_1 : f32[1]\n"
    "  var acc_1 : f32[-1,4]\n"
    "  var i_2 : f32[1]\n"
    "  var acc_2 : f32[-1,4]\n"
    "  var i_out : f32[1]\n"
    "  var out : f32[-1,4]\n"
    "  block 0 parent -1 {\n"
    "    i_out, out = while(zero, x, n, one) {n_carried = 2, cond_block = 1, body_block = 2, max_iterations = 0}  @loop.c:3\n"
    "  }\n"
    "  block 1 parent 0 (i_0, acc_0) {\n"
    "    c_0 = less(i_0, n)  @loop.c:4\n"
    "    yield c_0\n"
    "  }\n"
    "  block 2 parent 0 (i_1, acc_1) {\n"
    "    i_2 = add(i_1, one)  @loop.c:5\n"
    "    acc_2 = add(acc_1, acc_1)  @loop.c:6\n"
    "    yield i_2, acc_2\n"
    "  }\n"
    "  fetch 0 out\n"
    "  fetch 1 i_out\n"
    "}\n";

/* sum(x) < 0 ? -x : relu(x) * 2, the branch computed from a capture */
static const char *cond_text =
    "program {\n"
    "  var x : f32[-1,3] feed 0\n"
    "  var zero : f32[1] persistable = [0.0]\n"
    "  var s : f32[]\n"
    "  var p : bool[1]\n"
    "  var t_0 : f32[-1,3]\n"
    "  var e_0 : f32[-1,3]\n"
    "  var e_1 : f32[-1,3]\n"
    "  var out : f32[-1,3]\n"
    "  block 0 parent -1 {\n"
    "    s = reduce_sum(x) {axes = [], keepdim = 0}  @cond.c:2\n"
    "    p = less(s, zero)  @cond.c:3\n"
    "    out = cond(p, x) {then_block = 1, else_block = 2}  @cond.c:4\n"
    "  }\n"
    "  block 1 parent 0 () {\n"
    "    t_0 = neg(x)  @cond.c:5\n"
    "    yield t_0\n"
    "  }\n"
    "  block 2 parent 0 () {\n"
    "    e_0 = relu(x)  @cond.c:6\n"
    "    e_1 = add(e_0, e_0)  @cond.c:7\n"
    "    yield e_1\n"
    "  }\n"
    "  fetch 0 out\n"
    "}\n";


static dy_tensor *f32(int rank, const int64_t *shape, const float *data) {
  return dy_tensor_from_data(DY_F32, rank, shape, data);
}

static void test_while_on_executor(void) {
  dy_program *p = dy_test_parse_ok(loop_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  float xs[8] = {1, -2, 3, 0.5f, 4, 5, -6, 7};
  int64_t xshape[2] = {2, 4}, one = 1;
  for (int n = 0; n <= 7; n += (n < 2 ? 1 : 5)) {  /* 0, 1, 2, 7 trips */
    float nf = (float)n;
    dy_tensor *in[2] = {f32(2, xshape, xs), f32(1, &one, &nf)}, *out[2] = {0};
    dy_error err = {0};
    DY_ASSERT_OK(dy_executor_run(p, in, 2, out, 2, &err), &err);
    const float *y = out[0]->data;
    for (int k = 0; k < 8; k++)
      DY_ASSERT_NEAR(y[k], xs[k] * (float)(1 << n), 0);
    DY_ASSERT_NEAR(((const float *)out[1]->data)[0], n, 0);
    for (int k = 0; k < 2; k++) {
      dy_tensor_free(in[k]);
      dy_tensor_free(out[k]);
    }
  }
  dy_program_free(p);
}

static void test_while_runaway_is_an_error(void) {
  /* the counter never moves: i_2 = i_1 * one */
  char *t = strdup(loop_text);
  char *at = strstr(t, "i_2 = add(i_1, one)");
  memcpy(at, "i_2 = mul(i_1, one)", 19);
  char *m = strstr(t, "max_iterations = 0");
  memcpy(m, "max_iterations = 9", 18);
  dy_program *p = dy_test_parse_ok(t);
  free(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  float xs[4] = {1, 2, 3, 4}, nf = 3;
  int64_t xshape[2] = {1, 4}, one = 1;
  dy_tensor *in[2] = {f32(2, xshape, xs), f32(1, &one, &nf)}, *out[2] = {0};
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_executor_run(p, in, 2, out, 2, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "did not end after 9 iterations"));
  CU_ASSERT_EQUAL(err.loc.line, 3);
  CU_ASSERT_PTR_NULL(out[0]);
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  dy_program_free(p);
}

static void test_cond_on_executor(void) {
  dy_program *p = dy_test_parse_ok(cond_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  float pos[6] = {1, -2, 3, 4, -5, 6}, neg[6] = {-1, 2, -3, -4, 5, -6};
  int64_t shape[2] = {2, 3};
  for (int k = 0; k < 2; k++) {
    const float *xs = k ? neg : pos;
    dy_tensor *in = f32(2, shape, xs), *out = NULL;
    dy_error err = {0};
    DY_ASSERT_OK(dy_executor_run(p, &in, 1, &out, 1, &err), &err);
    for (int i = 0; i < 6; i++)
      DY_ASSERT_NEAR(((const float *)out->data)[i],
                     k ? -xs[i] : (xs[i] > 0 ? 2 * xs[i] : 0), 0);
    dy_tensor_free(in);
    dy_tensor_free(out);
  }
  dy_program_free(p);
}

/* print(parse(text)) == text, and .dymodel keeps it */
static void round_trip(const char *text) {
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char *printed = dy_program_to_text(p);
  CU_ASSERT_STRING_EQUAL(printed, text);
  uint8_t *buf = NULL;
  size_t len = 0;
  dy_error err = {0};
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_dymodel_encode(p, &buf, &len, &err), &err);
  DY_ASSERT_OK(dy_dymodel_decode(buf, len, &q, &err), &err);
  /* data lives in .dyparams: copy it over to compare the text */
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->persistable)
      DY_ASSERT_OK(dy_program_set_data(q, i, p->vars[i]->data,
                                       (size_t)dy_type_numel(&p->vars[i]->type) * 4, &err),
                   &err);
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  char *printed2 = dy_program_to_text(q);
  CU_ASSERT_STRING_EQUAL(printed2, text);
  char *dot = NULL;
  size_t dlen = 0;
  FILE *f = open_memstream(&dot, &dlen);
  dy_program_print_dot(p, f);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(dot, "subgraph cluster_b1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(dot, "subgraph cluster_b2"));
  free(dot);
  free(printed);
  free(printed2);
  free(buf);
  dy_program_free(p);
  dy_program_free(q);
}

static void test_text_and_dymodel_round_trip(void) {
  round_trip(loop_text);
  round_trip(cond_text);
}

/* A version-1 file (no block signatures) still reads and verifies. */
static void test_version_1_file_reads(void) {
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(DY_SOURCE_DIR "/tests/data/compat_v1", &p, &err), &err);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  CU_ASSERT_EQUAL(p->blocks[0]->n_params + p->blocks[0]->n_results, 0);
  dy_program_free(p);
}

/* text with the first `from` replaced by `to` (caller frees) */
static char *replaced(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  size_t n = strlen(text) + strlen(to) + 1;
  char *t = malloc(n);
  snprintf(t, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return t;
}

/* text with `from` replaced by `to` must fail to verify with `want` */
static void expect_broken(const char *text, const char *from, const char *to,
                          const char *want) {
  char *t = replaced(text, from, to);
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_program_parse(t, &p, &err);
  if (!s)
    s = dy_verify(p, &err);
  CU_ASSERT_EQUAL(s, DY_STATUS_INVALID_IR);
  if (!strstr(err.msg, want))
    fprintf(stderr, "\n  after '%s' -> '%s': '%s' lacks '%s'\n", from, to, err.msg, want);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
  dy_program_free(p);
  free(t);
}

static void test_verifier_invariants(void) {
  /* 11 (blocks): an index out of range, a block owned twice, an ownerless
   * block, a wrong parent, a parent that is not lower, params on a branch */
  expect_broken(cond_text, "else_block = 2", "else_block = 7", "invariant 11 (blocks)");
  expect_broken(cond_text, "else_block = 2", "else_block = 1", "invariant 11 (blocks)");
  expect_broken(loop_text, "body_block = 2", "body_block = 1", "invariant 11 (blocks)");
  expect_broken(cond_text, "block 2 parent 0", "block 2 parent 1", "invariant 11 (blocks)");
  expect_broken(cond_text, "block 1 parent 0 ()", "block 1 parent 0 (e_0)",
                "invariant 11 (blocks)");
  /* a cycle: a parent that is not a lower block (the parser and the
   * .dymodel reader refuse it too, so it is made by hand) */
  dy_program *cyc = dy_test_parse_ok(cond_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cyc);
  cyc->blocks[1]->parent = 2;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_verify(cyc, &err), DY_STATUS_INVALID_IR);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "invariant 11 (blocks): block 1 has parent 2"));
  dy_program_free(cyc);
  /* a block no op owns */
  expect_broken(cond_text, "  fetch 0 out\n", "  block 3 parent 0 () {\n    yield x\n  }\n  fetch 0 out\n",
                "block 3 has no owning op");
  /* 12 (scope): a capture not listed; a closed branch's var read after it;
   * a result not defined */
  expect_broken(cond_text, "cond(p, x)", "cond(p, zero)", "invariant 12 (scope)");
  expect_broken(cond_text, "fetch 0 out", "fetch 0 t_0", "invariant 9 (io)");
  expect_broken(loop_text, "    yield i_2, acc_2", "    yield i_2, acc_0", "invariant 12 (scope)");
  expect_broken(loop_text, "c_0 = less(i_0, n)", "c_0 = less(i_1, n)", "invariant 12 (scope)");
  /* 13 (block-types): branches disagree; a carried value changes type;
   * the condition is not one bool */
  char *t = replaced(cond_text, "cond(p, x)", "cond(p, x, s)");
  expect_broken(t, "    yield t_0", "    yield s", "invariant 13 (block-types)");
  free(t);
  expect_broken(loop_text, "    yield i_2, acc_2", "    yield acc_2, i_2", "invariant 13 (block-types)");
  expect_broken(loop_text, "    yield c_0", "    yield i_0", "invariant 13 (block-types)");
  expect_broken(loop_text, "n_carried = 2", "n_carried = 1", "invariant 13 (block-types)");
  /* 5 (ssa): a param written by an op */
  expect_broken(loop_text, "i_2 = add(i_1, one)", "i_0 = add(i_1, one)", "invariant 5 (ssa)");
}


/* ------------------------------------------------------------------ */
/* The eager API                                                       */
/* ------------------------------------------------------------------ */

/* y = sum(x) < 0 ? -x : 2 relu(x); then y doubles while max|y| < limit:
 * both branches and 0, 1 or many trips depending on the data */
typedef struct {
  dy_layer base;
  dy_tensor *zero, *limit;
} ctl_net;

static bool br_neg(void *ctx, dy_tensor **out) {
  out[0] = dy_neg((dy_tensor *)ctx);
  return out[0] != NULL;
}
static bool br_pos(void *ctx, dy_tensor **out) {
  out[0] = dy_scale(dy_relu((dy_tensor *)ctx), 2.0f, 0.0f);
  return out[0] != NULL;
}
static dy_tensor *loop_more(void *ctx, dy_tensor *const *c) {
  return dy_less(dy_reduce_max(dy_abs(c[0]), 0, NULL, false), ((ctl_net *)ctx)->limit);
}
static bool loop_step(void *ctx, dy_tensor *const *c, dy_tensor **next) {
  (void)ctx;
  next[0] = dy_scale(c[0], 2.0f, 0.0f);
  next[1] = dy_scale(c[1], 1.0f, 1.0f);
  return next[0] && next[1];
}

static dy_tensor *ctl_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  ctl_net *n = (ctl_net *)self;
  dy_tensor *x = in[0], *y = NULL;
  dy_tensor *pred = dy_less(dy_reduce_sum(x, 0, NULL, false), n->zero);
  if (!dy_cond(pred, br_neg, br_pos, x, 1, &y))
    return NULL;
  dy_tensor *c[2] = {y, n->zero};  /* the value and the trip count */
  if (!dy_while(loop_more, loop_step, n, 2, c))
    return NULL;
  /* out = y * 1000 + trips: both checked at once */
  return dy_add(dy_scale(c[0], 1000.0f, 0.0f), c[1]);
}

static const dy_layer_vtable ctl_vt = {"CtlNet", ctl_forward, NULL, false};

static ctl_net *ctl_new(void) {
  ctl_net *n = (ctl_net *)dy_layer_new(sizeof(ctl_net), &ctl_vt, "ctl");
  int64_t one = 1;
  float z = 0, lim = 10;
  n->zero = dy_tensor_from_data(DY_F32, 1, &one, &z);
  n->limit = dy_tensor_from_data(DY_F32, 1, &one, &lim);
  return n;
}

static void ctl_free(ctl_net *n) {
  dy_tensor_free(n->zero);
  dy_tensor_free(n->limit);
  dy_layer_free(&n->base);
}

/* rows of 4: then branch with 1 trip; else with 0 trips; else with 8 */
static const float ctl_inputs[3][4] = {
    {-6, 1, -2, 0}, {20, -1, 3, 4}, {0.01f, 0.02f, -0.01f, 0}};
static const int ctl_trips[3] = {1, 0, 8};

static void assert_same(const dy_tensor *a, const dy_tensor *b) {
  CU_ASSERT_FATAL(a && b);
  CU_ASSERT_FATAL(dy_type_equal(&a->type, &b->type));
  for (int64_t i = 0; i < dy_type_numel(&a->type); i++)
    DY_ASSERT_NEAR(((const float *)a->data)[i], ((const float *)b->data)[i], 1e-4);
}

static void test_eager_matches_every_static_path(void) {
  ctl_net *n = ctl_new();
  dy_input_spec spec = {"x", DY_F32, 2, {-1, 4}};
  dy_program *sp = NULL, *loaded = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_from_layer(&n->base, &spec, 1, &sp, &err), &err);
  CU_ASSERT_EQUAL(dy_program_count_ops(sp) > 4, true);
  DY_ASSERT_OK(dy_jit_save(&n->base, &spec, 1, DY_BUILD_DIR "/control_ctl", &err), &err);
  DY_ASSERT_OK(dy_jit_load(DY_BUILD_DIR "/control_ctl", &loaded, &err), &err);
  /* the text form of the traced Program round trips */
  char *text = dy_program_to_text(sp);
  dy_program *back = NULL;
  DY_ASSERT_OK(dy_program_parse(text, &back, &err), &err);
  char *text2 = dy_program_to_text(back);
  CU_ASSERT_STRING_EQUAL(text, text2);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "= cond("));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "= while("));
  free(text);
  free(text2);
  dy_program_free(back);
  /* the optimising pipeline (verifying after every pass) keeps it right */
  dy_program *opt = NULL;
  DY_ASSERT_OK(dy_jit_load(DY_BUILD_DIR "/control_ctl", &opt, &err), &err);
  dy_pass_options o = {.opt_level = 2, .verify_each = 1};
  DY_ASSERT_OK(dy_run_pipeline(opt, &o, &err), &err);
  dy_layer *st = dy_to_static(&n->base);
  int64_t shape[2] = {1, 4};
  for (int k = 0; k < 3; k++) {
    dy_tensor *x = f32(2, shape, ctl_inputs[k]);
    dy_tensor *eager = dy_call1(&n->base, x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eager);
    const float *e = eager->data;
    dy_tensor *out = NULL, *out2 = NULL, *traced_out = NULL;
    DY_ASSERT_OK(dy_executor_run(sp, &x, 1, &out, 1, &err), &err);
    assert_same(eager, out);
    DY_ASSERT_OK(dy_executor_run(loaded, &x, 1, &out2, 1, &err), &err);
    assert_same(eager, out2);
    dy_tensor *ts_out = dy_call1(st, x), *o_out = NULL;
    assert_same(eager, ts_out);
    DY_ASSERT_OK(dy_executor_run(opt, &x, 1, &o_out, 1, &err), &err);
    assert_same(eager, o_out);
    dy_tensor_free(o_out);
    /* a concrete trace records the same control flow */
    dy_program *tp = NULL;
    DY_ASSERT_OK(dy_trace(&n->base, &spec, &x, 1, &traced_out, &tp, &err), &err);
    assert_same(eager, traced_out);
    for (int j = 0; j < 3; j++) {  /* its Program runs every input right */
      dy_tensor *xj = f32(2, shape, ctl_inputs[j]), *oj = NULL;
      dy_tensor *ej = dy_call1(&n->base, xj);
      DY_ASSERT_OK(dy_executor_run(tp, &xj, 1, &oj, 1, &err), &err);
      assert_same(ej, oj);
      dy_tensor_free(xj);
      dy_tensor_free(ej);
      dy_tensor_free(oj);
    }
    dy_program_free(tp);
    /* the trip count: out = 1000 y + trips, y from the branch doubled */
    float y = ctl_inputs[k][0];
    float sum = ctl_inputs[k][0] + ctl_inputs[k][1] + ctl_inputs[k][2] + ctl_inputs[k][3];
    y = sum < 0 ? -y : (y > 0 ? 2 * y : 0);
    DY_ASSERT_NEAR(e[0], 1000.0f * y * (float)(1 << ctl_trips[k]) + (float)ctl_trips[k],
                   1e-2);
    dy_tensor_free(x);
    dy_tensor_free(eager);
    dy_tensor_free(out);
    dy_tensor_free(out2);
    dy_tensor_free(ts_out);
    dy_tensor_free(traced_out);
  }
  /* a batch of all three rows: the loop runs for the batch as a whole */
  float all[12];
  memcpy(all, ctl_inputs, sizeof all);
  int64_t shape3[2] = {3, 4};
  dy_tensor *x3 = f32(2, shape3, all), *o3 = NULL;
  dy_tensor *e3 = dy_call1(&n->base, x3);
  DY_ASSERT_OK(dy_executor_run(sp, &x3, 1, &o3, 1, &err), &err);
  assert_same(e3, o3);
  dy_tensor_free(x3);
  dy_tensor_free(e3);
  dy_tensor_free(o3);
  dy_layer_free(st);
  dy_program_free(sp);
  dy_program_free(loaded);
  dy_program_free(opt);
  ctl_free(n);
}

static bool br_f32(void *ctx, dy_tensor **out) {
  out[0] = dy_reduce_sum((dy_tensor *)ctx, 1, (int64_t[]){1}, true);
  return out[0] != NULL;
}
static dy_tensor *escaped;
static bool br_leak(void *ctx, dy_tensor **out) {
  /* kept: without it the branch's scope would free it */
  escaped = dy_keep(dy_relu((dy_tensor *)ctx));
  out[0] = dy_neg(escaped);
  return out[0] != NULL;
}

typedef struct {
  dy_layer base;
  int mode;  /* 0: branches of different types; 1: a tensor escapes */
} bad_net;

static dy_tensor *bad_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  dy_tensor *x = in[0], *y = NULL;
  dy_tensor *pred = dy_less(dy_reduce_sum(x, 0, NULL, true),
                            dy_reduce_max(x, 0, NULL, true));
  pred = dy_reshape(pred, 1, (int64_t[]){1});
  if (((bad_net *)self)->mode == 0)
    return dy_cond(pred, br_neg, br_f32, x, 1, &y) ? y : NULL;
  if (!dy_cond(pred, br_leak, br_neg, x, 1, &y))
    return NULL;
  return dy_add(y, escaped);  /* escaped was made inside the then branch */
}

static const dy_layer_vtable bad_vt = {"BadNet", bad_forward, NULL, false};

static void test_eager_errors(void) {
  int64_t shape[2] = {2, 4};
  float xs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  dy_tensor *x = f32(2, shape, xs), *out[1];
  /* a predicate that is not a bool, or has more than one element */
  dy_clear_error();
  CU_ASSERT_FALSE(dy_cond(x, br_neg, br_pos, x, 1, out));
  CU_ASSERT_PTR_NULL(out[0]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dy_last_error());
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "must be a bool tensor of one element"));
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->loc.file, "test_control.c"));
  dy_clear_error();
  dy_tensor *b2 = dy_less(x, x);
  CU_ASSERT_FALSE(dy_cond(b2, br_neg, br_pos, x, 1, out));
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "got bool[2,4]"));
  dy_clear_error();
  /* eagerly, branches of different types run fine (one runs) ... */
  dy_tensor *t = dy_full(DY_BOOL, 1, (int64_t[]){1}, 1.0);
  CU_ASSERT_TRUE(dy_cond(t, br_neg, br_f32, x, 1, out));
  dy_tensor_free(out[0]);
  /* ... but recording them is an error naming both types */
  bad_net *bn = (bad_net *)dy_layer_new(sizeof(bad_net), &bad_vt, "bad");
  dy_input_spec spec = {"x", DY_F32, 2, {-1, 4}};
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_program_from_layer(&bn->base, &spec, 1, &p, &err),
                  DY_STATUS_DTYPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "result 0 is f32[-1,4] in the then branch and "
                                         "f32[-1,1] in the else branch"));
  CU_ASSERT_PTR_NULL(p);
  /* a tensor made inside a branch, used outside it */
  bn->mode = 1;
  CU_ASSERT_EQUAL(dy_program_from_layer(&bn->base, &spec, 1, &p, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "was made inside a dy_cond branch"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "return it from the branch"));
  CU_ASSERT_PTR_NULL(p);
  dy_tensor_free(escaped);
  dy_layer_free(&bn->base);
  dy_tensor_free(t);
  dy_tensor_free(b2);
  dy_tensor_free(x);
  dy_clear_error();
}

/* ------------------------------------------------------------------ */
/* The samples: eager (which checks dy_to_static itself) against       */
/* dy_jit_save + `dy2stc run` (the static executor) on every case      */
/* ------------------------------------------------------------------ */

static void run_sample(const char *name, const char *input, int cases) {
  char dir[512];
  snprintf(dir, sizeof dir, DY_BUILD_DIR "/control_%s", name);
  int rc = dy_test_sh(NULL, "rm -rf %s && mkdir -p %s && %s/../samples/%s --out %s > %s/log.txt",
                      dir, dir, DY_BUILD_DIR, name, dir, dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  for (int k = 0; k < cases; k++) {
    rc = dy_test_sh(NULL, "%s run %s/%s.dymodel --input %s=%s/x_%d.npy --output-dir %s/run_%d "
                    "> /dev/null", DY2STC_PATH, dir, name, input, dir, k, dir, k);
    CU_ASSERT_EQUAL(rc, 0);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/run_%d/out.npy", dir, k);
    snprintf(b, sizeof b, "%s/eager_%d.npy", dir, k);
    dy_tensor *ta = NULL, *tb = NULL;
    dy_error err = {0};
    DY_ASSERT_OK(dy_npy_read(a, &ta, &err), &err);
    DY_ASSERT_OK(dy_npy_read(b, &tb, &err), &err);
    assert_same(ta, tb);
    dy_tensor_free(ta);
    dy_tensor_free(tb);
  }
}

static void test_samples(void) {
  run_sample("early_exit", "x", 2);
  run_sample("greedy_decode", "h0", 3);
  run_sample("jacobi", "b", 3);
  /* the early-exit sample takes both paths */
  char *log = dy_test_slurp(DY_BUILD_DIR "/control_early_exit/log.txt");
  CU_ASSERT(log && strstr(log, "case 0: head confidence") && strstr(log, "the head answers") &&
            strstr(log, "the deep layers run"));
  free(log);
}

void dy_test_register(void) {
  DY_SUITE("control");
  DY_TEST(test_while_on_executor);
  DY_TEST(test_while_runaway_is_an_error);
  DY_TEST(test_cond_on_executor);
  DY_TEST(test_text_and_dymodel_round_trip);
  DY_TEST(test_version_1_file_reads);
  DY_TEST(test_verifier_invariants);
  DY_TEST(test_eager_matches_every_static_path);
  DY_TEST(test_eager_errors);
  DY_TEST(test_samples);
}
