/* test_while_grad.c - the gradient of while (ir/autodiff/grad.c,
 * dy_grad_while): the forward loop keeps each trip's carried values on a
 * stack and its trip count; the backward is a while running the trips in
 * reverse, recomputing each trip's body and running its backward.
 *
 * Hand-written Programs, each with feeds x [2], w [2] (a parameter
 * captured from outside the loop) and n [] (the trip bound), are
 * differentiated with dy_program_gradients and run on the static executor;
 * every element of d l / d x and d l / d w is checked against a central
 * finite difference of the loss run on the same executor, for 0, 1 and
 * many trips: a plain loop (x is both the initial value and a capture), a
 * cond inside the body, a while inside a cond's branch, and a loop that
 * breaks early on its data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* The declarations every Program shares: feeds and constants. */
#define WG_HEAD                                     \
  "program {\n"                                     \
  "  var x : f32[2] feed 0\n"                       \
  "  var w : f32[2] feed 1\n"                       \
  "  var n : f32[] feed 2\n"                        \
  "  var zero : f32[] persistable = [0.0]\n"        \
  "  var one : f32[] persistable = [1.0]\n"         \
  "  var half : f32[] persistable = [0.5]\n"        \
  "  var i_0 : f32[]\n  var a_0 : f32[2]\n  var c_0 : bool[]\n" \
  "  var i_1 : f32[]\n  var a_1 : f32[2]\n  var i_2 : f32[]\n"  \
  "  var m_0 : f32[2]\n  var m_1 : f32[2]\n  var m_2 : f32[2]\n" \
  "  var a_2 : f32[2]\n  var i_f : f32[]\n  var a_f : f32[2]\n" \
  "  var sq : f32[2]\n  var l : f32[]\n"

/* The loop's condition (block 1): i < n. */
#define WG_COND(parent)                               \
  "  block 1 parent " parent " (i_0, a_0) {\n"       \
  "    c_0 = less(i_0, n)  @w.c:1\n"                  \
  "    yield c_0\n"                                   \
  "  }\n"

/* a_f = loop(a = x, i = 0; i < n) a = tanh(a w) + x / 2; l = sum(a_f^2) */
static const char *plain_text =
    WG_HEAD
    "  block 0 parent -1 {\n"
    "    i_f, a_f = while(zero, x, n, one, w, x, half) {n_carried = 2, cond_block = 1, "
    "body_block = 2, max_iterations = 8}  @w.c:1\n"
    "    sq = mul(a_f, a_f)  @w.c:5\n"
    "    l = reduce_sum(sq) {axes = [], keepdim = 0}  @w.c:6\n"
    "  }\n"
    WG_COND("0")
    "  block 2 parent 0 (i_1, a_1) {\n"
    "    i_2 = add(i_1, one)  @w.c:2\n"
    "    m_0 = mul(a_1, w)  @w.c:3\n"
    "    m_1 = tanh(m_0)  @w.c:3\n"
    "    m_2 = mul(x, half)  @w.c:4\n"
    "    a_2 = add(m_1, m_2)  @w.c:4\n"
    "    yield i_2, a_2\n"
    "  }\n"
    "  fetch 0 l\n"
    "}\n";

/* the body: a = sum(a) > 0 ? tanh(a w) : a x - w (a cond in the while;
 * max_iterations 0: the stack has DY_WHILE_GRAD_TRIPS rows) */
static const char *cond_in_while_text =
    WG_HEAD
    "  var s_0 : f32[]\n  var p_0 : bool[]\n  var e_0 : f32[2]\n  var e_1 : f32[2]\n"
    "  block 0 parent -1 {\n"
    "    i_f, a_f = while(zero, x, n, one, w, x) {n_carried = 2, cond_block = 1, "
    "body_block = 2, max_iterations = 0}  @w.c:1\n"
    "    sq = mul(a_f, a_f)  @w.c:5\n"
    "    l = reduce_sum(sq) {axes = [], keepdim = 0}  @w.c:6\n"
    "  }\n"
    WG_COND("0")
    "  block 2 parent 0 (i_1, a_1) {\n"
    "    i_2 = add(i_1, one)  @w.c:2\n"
    "    s_0 = reduce_sum(a_1) {axes = [], keepdim = 0}  @w.c:3\n"
    "    p_0 = greater(s_0, zero)  @w.c:3\n"
    "    a_2 = cond(p_0, a_1, w, x) {then_block = 3, else_block = 4}  @w.c:3\n"
    "    yield i_2, a_2\n"
    "  }\n"
    "  block 3 parent 2 () {\n"
    "    m_0 = mul(a_1, w)  @w.c:3\n"
    "    m_1 = tanh(m_0)  @w.c:3\n"
    "    yield m_1\n"
    "  }\n"
    "  block 4 parent 2 () {\n"
    "    e_0 = mul(a_1, x)  @w.c:4\n"
    "    e_1 = sub(e_0, w)  @w.c:4\n"
    "    yield e_1\n"
    "  }\n"
    "  fetch 0 l\n"
    "}\n";

/* out = sum(x) > 0 ? (the plain loop) : x w; l = sum(out^2) */
static const char *while_in_cond_text =
    WG_HEAD
    "  var s_0 : f32[]\n  var p_0 : bool[]\n  var out : f32[2]\n  var e_0 : f32[2]\n"
    "  block 0 parent -1 {\n"
    "    s_0 = reduce_sum(x) {axes = [], keepdim = 0}  @w.c:1\n"
    "    p_0 = greater(s_0, zero)  @w.c:1\n"
    "    out = cond(p_0, zero, x, n, one, w, half) {then_block = 1, else_block = 2}  @w.c:1\n"
    "    sq = mul(out, out)  @w.c:5\n"
    "    l = reduce_sum(sq) {axes = [], keepdim = 0}  @w.c:6\n"
    "  }\n"
    "  block 1 parent 0 () {\n"
    "    i_f, a_f = while(zero, x, n, one, w, x, half) {n_carried = 2, cond_block = 3, "
    "body_block = 4, max_iterations = 8}  @w.c:2\n"
    "    yield a_f\n"
    "  }\n"
    "  block 2 parent 0 () {\n"
    "    e_0 = mul(x, w)  @w.c:7\n"
    "    yield e_0\n"
    "  }\n"
    "  block 3 parent 1 (i_0, a_0) {\n"
    "    c_0 = less(i_0, n)  @w.c:1\n"
    "    yield c_0\n"
    "  }\n"
    "  block 4 parent 1 (i_1, a_1) {\n"
    "    i_2 = add(i_1, one)  @w.c:2\n"
    "    m_0 = mul(a_1, w)  @w.c:3\n"
    "    m_1 = tanh(m_0)  @w.c:3\n"
    "    m_2 = mul(x, half)  @w.c:4\n"
    "    a_2 = add(m_1, m_2)  @w.c:4\n"
    "    yield i_2, a_2\n"
    "  }\n"
    "  fetch 0 l\n"
    "}\n";

/* a break: the loop also stops once sum(a) > 1.5 (d, carried as 0 / 1,
 * pushes i past n): while (i + 100 d < n) { a = tanh(a w) + x / 2;
 * d = sum(a) > 1.5 } */
static const char *break_text =
    "program {\n"
    "  var x : f32[2] feed 0\n"
    "  var w : f32[2] feed 1\n"
    "  var n : f32[] feed 2\n"
    "  var zero : f32[] persistable = [0.0]\n"
    "  var one : f32[] persistable = [1.0]\n"
    "  var half : f32[] persistable = [0.5]\n"
    "  var hundred : f32[] persistable = [100.0]\n"
    "  var thr : f32[] persistable = [1.5]\n"
    "  var i_0 : f32[]\n  var a_0 : f32[2]\n  var d_0 : f32[]\n  var c_0 : bool[]\n"
    "  var u_0 : f32[]\n  var u_1 : f32[]\n"
    "  var i_1 : f32[]\n  var a_1 : f32[2]\n  var d_1 : f32[]\n  var i_2 : f32[]\n"
    "  var m_0 : f32[2]\n  var m_1 : f32[2]\n  var m_2 : f32[2]\n  var a_2 : f32[2]\n"
    "  var s_0 : f32[]\n  var p_0 : bool[]\n  var d_2 : f32[]\n"
    "  var i_f : f32[]\n  var a_f : f32[2]\n  var d_f : f32[]\n"
    "  var sq : f32[2]\n  var l : f32[]\n"
    "  block 0 parent -1 {\n"
    "    i_f, a_f, d_f = while(zero, x, zero, hundred, n, one, w, x, half, thr) "
    "{n_carried = 3, cond_block = 1, body_block = 2, max_iterations = 8}  @w.c:1\n"
    "    sq = mul(a_f, a_f)  @w.c:5\n"
    "    l = reduce_sum(sq) {axes = [], keepdim = 0}  @w.c:6\n"
    "  }\n"
    "  block 1 parent 0 (i_0, a_0, d_0) {\n"
    "    u_0 = mul(d_0, hundred)  @w.c:1\n"
    "    u_1 = add(i_0, u_0)  @w.c:1\n"
    "    c_0 = less(u_1, n)  @w.c:1\n"
    "    yield c_0\n"
    "  }\n"
    "  block 2 parent 0 (i_1, a_1, d_1) {\n"
    "    i_2 = add(i_1, one)  @w.c:2\n"
    "    m_0 = mul(a_1, w)  @w.c:3\n"
    "    m_1 = tanh(m_0)  @w.c:3\n"
    "    m_2 = mul(x, half)  @w.c:4\n"
    "    a_2 = add(m_1, m_2)  @w.c:4\n"
    "    s_0 = reduce_sum(a_2) {axes = [], keepdim = 0}  @w.c:4\n"
    "    p_0 = greater(s_0, thr)  @w.c:4\n"
    "    d_2 = cast(p_0) {dtype = 0}  @w.c:4\n"
    "    yield i_2, a_2, d_2\n"
    "  }\n"
    "  fetch 0 l\n"
    "}\n";

static dy_tensor *f32(int rank, const int64_t *shape, const float *data) {
  return dy_tensor_from_data(DY_F32, rank, shape, data);
}

/* Run p on (x, w, n) into n_out fetches. */
static void run(const dy_program *p, const float *x, const float *w, float n,
                dy_tensor **out, int n_out) {
  int64_t s2[1] = {2};
  dy_tensor *in[3] = {f32(1, s2, x), f32(1, s2, w), f32(0, NULL, &n)};
  dy_error err = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 3, out, n_out, &err), &err);
  for (int i = 0; i < 3; i++)
    dy_tensor_free(in[i]);
}

static double run_loss(const dy_program *p, const float *x, const float *w, float n) {
  dy_tensor *out = NULL;
  run(p, x, w, n, &out, 1);
  double l = out ? ((const float *)out->data)[0] : NAN;
  dy_tensor_free(out);
  return l;
}

/* The gradient Program of text: fetches l, d l / d x, d l / d w. */
static dy_program *grad_program(const char *text) {
  dy_program *gp = dy_test_parse_ok(text);
  if (!gp)
    return NULL;
  int wrt[2] = {dy_program_find_var(gp, "x"), dy_program_find_var(gp, "w")}, g[2] = {-2, -2};
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_gradients(gp, dy_program_find_var(gp, "l"), wrt, 2, g, &err), &err);
  CU_ASSERT_FATAL(g[0] >= 0 && g[1] >= 0);
  DY_ASSERT_OK(dy_program_add_fetch(gp, g[0], &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(gp, g[1], &err), &err);
  DY_ASSERT_OK(dy_verify(gp, &err), &err);
  return gp;
}

/* The analytic gradients at (x0, w0, n) against central differences;
 * the number of elements that differ. */
static int check_fd(const dy_program *fwd, const dy_program *gp, const float *x0,
                    const float *w0, float n, const char *what) {
  dy_tensor *out[3] = {0};
  run(gp, x0, w0, n, out, 3);
  int bad = 0;
  CU_ASSERT_PTR_NOT_NULL(out[2]);
  /* the gradient Program computes the forward's loss too */
  if (out[0])
    CU_ASSERT_DOUBLE_EQUAL(((const float *)out[0]->data)[0], run_loss(fwd, x0, w0, n), 1e-6);
  for (int which = 0; which < 2 && out[1] && out[2]; which++) {
    const float *g = out[1 + which]->data;
    for (int i = 0; i < 2; i++) {
      float x[2] = {x0[0], x0[1]}, w[2] = {w0[0], w0[1]};
      float *v = which ? &w[i] : &x[i], h = 1e-2f, c = *v;
      *v = c + h;
      double lp = run_loss(fwd, x, w, n);
      *v = c - h;
      double lm = run_loss(fwd, x, w, n);
      double fd = (lp - lm) / (2.0 * h);
      if (fabs(fd - g[i]) > 1e-2 * (1 + fabs(fd))) {
        fprintf(stderr, "\n  %s, n = %g: d l / d %s[%d] = %g, finite difference %g\n",
                what, (double)n, which ? "w" : "x", i, (double)g[i], fd);
        bad++;
      }
    }
  }
  for (int k = 0; k < 3; k++)
    dy_tensor_free(out[k]);
  return bad;
}

/* Each Program at 0, 1 and many trips (n = 0, 1, 6), at inputs away from
 * the branches' and the break's thresholds. */
static void check_text(const char *text, const char *what, const float (*xs)[2], int n_x) {
  dy_program *fwd = dy_test_parse_ok(text), *gp = grad_program(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fwd);
  CU_ASSERT_PTR_NOT_NULL_FATAL(gp);
  static const float w[2] = {0.7f, -1.2f};
  static const float ns[3] = {0, 1, 6};
  for (int k = 0; k < n_x; k++)
    for (int t = 0; t < 3; t++)
      CU_ASSERT_EQUAL(check_fd(fwd, gp, xs[k], w, ns[t], what), 0);
  dy_program_free(fwd);
  dy_program_free(gp);
}

static void test_plain_loop_against_finite_differences(void) {
  static const float xs[2][2] = {{0.5f, -0.3f}, {-0.8f, 0.4f}};
  check_text(plain_text, "plain loop", xs, 2);
}

/* both branches taken, on different trips for the second input */
static void test_cond_in_while_against_finite_differences(void) {
  static const float xs[3][2] = {{0.9f, 0.4f}, {-0.9f, -0.4f}, {0.6f, -0.35f}};
  check_text(cond_in_while_text, "cond in while", xs, 3);
}

static void test_while_in_cond_against_finite_differences(void) {
  static const float xs[2][2] = {{0.9f, 0.4f}, {-0.9f, 0.3f}};  /* the loop; x w */
  check_text(while_in_cond_text, "while in cond", xs, 2);
}

/* {1.9, 1.3}: sum(a) passes 1.5 on the first trip (one trip whatever n);
 * {0.5, -0.3}: it never does (n trips) */
static void test_break_against_finite_differences(void) {
  static const float xs[2][2] = {{1.9f, 1.3f}, {0.5f, -0.3f}};
  check_text(break_text, "break", xs, 2);
  /* the break does stop the loop: i_f is 1 at n = 6 */
  dy_program *p = dy_test_parse_ok(break_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_add_fetch(p, dy_program_find_var(p, "i_f"), &err), &err);
  dy_tensor *out[2] = {0};
  run(p, xs[0], (const float[]){0.7f, -1.2f}, 6, out, 2);
  CU_ASSERT(out[1] && ((const float *)out[1]->data)[0] == 1.0f);
  dy_tensor_free(out[0]);
  dy_tensor_free(out[1]);
  dy_program_free(p);
}

/* The forward keeps the trips: the loop carries a stack per value and the
 * trip count, max_iterations rows (8); a loop running more trips than the
 * stack holds is an error naming the loop, never a write out of bounds. */
static void test_the_forward_keeps_the_trips(void) {
  dy_program *gp = grad_program(plain_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(gp);
  char *text = dy_program_to_text(gp);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, ": f32[8,2]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "= scatter_nd("));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "n_carried = 5"));
  free(text);
  dy_tensor *out[3] = {0};
  int64_t s2[1] = {2};
  float nine = 9;
  dy_tensor *in[3] = {f32(1, s2, (const float[]){0.5f, -0.3f}),
                      f32(1, s2, (const float[]){0.7f, -1.2f}), f32(0, NULL, &nine)};
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_executor_run(gp, in, 3, out, 3, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "did not end after 8 iterations"));
  CU_ASSERT_EQUAL(err.loc.line, 1);
  for (int i = 0; i < 3; i++)
    dy_tensor_free(in[i]);
  dy_program_free(gp);
}

void dy_test_register(void) {
  DY_SUITE("while_grad");
  DY_TEST(test_plain_loop_against_finite_differences);
  DY_TEST(test_cond_in_while_against_finite_differences);
  DY_TEST(test_while_in_cond_against_finite_differences);
  DY_TEST(test_break_against_finite_differences);
  DY_TEST(test_the_forward_keeps_the_trips);
}
