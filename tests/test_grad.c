/* test_grad.c - every gradient rule against central finite differences.
 *
 * Table-driven over the op table's own cases (tests/op_cases_*.c): for
 * every case of a differentiable op (not a bad-input case), random inputs
 * in the case's range and a random cotangent w of the output's shape; the
 * scalar L = sum(op(x) * w); the analytic gradient of L with respect to
 * every f32 input, from the op's rule, against (L(x + e) - L(x - e)) / 2e
 * per element (up to MAX_PROBE elements per input, spread over the tensor).
 * L(x + e) - L(x - e) is summed in double element by element from the two
 * outputs, so elements that did not move cancel exactly.
 *
 * Where the op has a kink (relu at 0, clip at a bound, a tie of maximum)
 * the central difference averages two one-sided derivatives while a rule
 * takes one of them (the op's documented convention): an element whose
 * rule matches the forward or the backward difference there passes, and
 * is counted. An element without a finite difference (a NaN input, the
 * edge of the domain: sqrt at 0) cannot be checked, and is counted too.
 *
 * The ways the analytic gradient is computed:
 *   - program: a Program op(x) -> L, dy_program_gradients, the static
 *     executor;
 * (more ways are added beside it: the eager tape, the compiled C).
 *
 * A differentiable op with no case, or whose rule is missing or fails, is
 * a failure naming it.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_test.h"
#include "op_table.h"

#define MAX_PROBE 24

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double uniform(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

static dy_type concrete(const dy_type *t, int64_t batch) {
  dy_type c = *t;
  for (int i = 0; i < c.rank; i++)
    if (c.shape[i] < 0)
      c.shape[i] = batch;
  return c;
}

static dy_tensor *make_input(const dy_op_case *c, int i, int64_t batch) {
  dy_type t = concrete(&c->in[i], batch);
  dy_tensor *x = dy_tensor_new(t.dtype, t.rank, t.shape);
  if (!x)
    return NULL;
  int64_t n = dy_tensor_numel(x);
  if (c->data[i]) {
    memcpy(x->data, c->data[i], x->nbytes);
    return x;
  }
  double lo = c->lo, hi = c->hi;
  for (int64_t k = 0; k < n; k++) {
    switch (t.dtype) {
    case DY_F32:
      ((float *)x->data)[k] = lo == hi ? (float)(2 * uniform() - 1)
                                       : (float)(lo + (hi - lo) * uniform());
      break;
    case DY_I64: {
      double l = lo == hi ? 0 : lo, h = lo == hi ? 4 : hi;
      ((int64_t *)x->data)[k] = (int64_t)(l + (double)(next_u64() % (uint64_t)(h - l)));
      break;
    }
    default: ((uint8_t *)x->data)[k] = next_u64() & 1; break;
    }
  }
  return x;
}

/* The Program of case c: every input a feed (in0, in1, ...), then the
 * cotangent feed w, out = op(in...), L = reduce_sum(out * w). Returns the
 * program; *loss and ids[] are set. */
static dy_program *loss_program(const dy_op_case *c, int *ids, int *loss,
                                dy_error *err) {
  dy_program *p = dy_program_new();
  for (int i = 0; i < c->n_in; i++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    ids[i] = dy_program_add_var(p, name, &c->in[i]);
    dy_program_add_feed(p, ids[i], err);
  }
  dy_op probe = {.id = 0, .kind = c->kind, .attrs = (dy_attr *)c->attrs,
                 .n_attrs = c->n_attrs, .loc = {"op_cases.c", 1}};
  dy_type out_t;
  if (dy_infer(&probe, c->in, c->n_in, &out_t, err)) {
    dy_program_free(p);
    return NULL;
  }
  int w = dy_program_add_var(p, "w", &out_t);
  dy_program_add_feed(p, w, err);
  int o = dy_program_add_var(p, "out", &out_t);
  dy_program_append_op(p, 0, c->kind, ids, c->n_in, &o, 1, c->attrs, c->n_attrs,
                       (dy_srcloc){"op_cases.c", 1});
  int m = dy_program_add_var(p, "ow", &out_t);
  dy_program_append_op(p, 0, DY_OP_MUL, (const int[]){o, w}, 2, &m, 1, NULL, 0,
                       (dy_srcloc){"loss", 2});
  dy_type st = {.dtype = DY_F32, .rank = 0};
  *loss = dy_program_add_var(p, "L", &st);
  dy_attr ra[] = {DY_ATTR_IS("axes", NULL, 0), DY_ATTR_I("keepdim", 0)};
  dy_program_append_op(p, 0, DY_OP_REDUCE_SUM, &m, 1, loss, 1, ra, 2,
                       (dy_srcloc){"loss", 3});
  dy_program_add_fetch(p, *loss, err);
  dy_program_add_fetch(p, o, err);
  return p;
}

/* The op's output at the given inputs (fetch 1 of p), or NULL. */
static dy_tensor *eval_out(const dy_program *p, dy_tensor **in, int n_in, int n_out) {
  dy_tensor *out[16] = {0};
  dy_error err = {0};
  if (dy_executor_run(p, in, n_in, out, n_out, &err))
    return NULL;
  for (int i = 0; i < n_out; i++)
    if (i != 1)
      dy_tensor_free(out[i]);
  return out[1];
}

/* L(a) - L(b) = sum((a - b) * w), in double, element by element: an
 * element that did not move cancels exactly, so the difference is not lost
 * in the rounding of a large sum; so does a NaN that is NaN at the centre
 * point c too (a NaN input), but not one that appears only off the centre
 * (the op is not defined there). NAN when either is missing. */
static double loss_diff(const dy_tensor *a, const dy_tensor *b, const dy_tensor *c,
                        const dy_tensor *w) {
  if (!a || !b || !c)
    return NAN;
  const float *pa = a->data, *pb = b->data, *pc = c->data, *pw = w->data;
  double v = 0;
  for (int64_t k = 0; k < dy_tensor_numel(w); k++)
    if (memcmp(&pa[k], &pb[k], sizeof(float)) != 0 || (isnan(pa[k]) && !isnan(pc[k])))
      v += ((double)pa[k] - pb[k]) * pw[k];
  return v;
}

typedef struct {
  int cases, checked, failed;
  int one_sided;    /* matched a one-sided difference (a kink) */
  int uncheckable;  /* the finite difference is not finite (NaN input,
                       the edge of the domain) */
  bool has_case[DY_OP_COUNT];
} tally;

/* One case: the program way. */
static void check_case(const dy_op_case *c, tally *t) {
  if (c->expect_error || !dy_grad_table[c->kind])
    return;
  bool any_f32 = false;
  for (int i = 0; i < c->n_in; i++)
    any_f32 |= c->in[i].dtype == DY_F32;
  dy_op probe0 = {.id = 0, .kind = c->kind, .attrs = (dy_attr *)c->attrs,
                  .n_attrs = c->n_attrs};
  dy_type tout0;
  dy_error err0 = {0};
  if (!any_f32 || dy_infer(&probe0, c->in, c->n_in, &tout0, &err0) ||
      tout0.dtype != DY_F32)
    return; /* an f32 result is what has a gradient */
  t->cases++;
  dy_error err = {0};
  int ids[8], loss;
  dy_program *p = loss_program(c, ids, &loss, &err);
  if (!p) {
    fprintf(stderr, "\n  [%s] cannot build: %s\n", c->label, err.msg);
    t->failed++;
    return;
  }
  int wrt[8], n_wrt = 0, which[8];
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i].dtype == DY_F32) {
      which[n_wrt] = i;
      wrt[n_wrt++] = ids[i];
    }
  int grads[8];
  dy_status s = dy_program_gradients(p, loss, wrt, n_wrt, grads, &err);
  if (s) {
    char m[700];
    dy_error_format(&err, m, sizeof m);
    fprintf(stderr, "\n  [%s] %s: %s\n", c->label, dy_op_name(c->kind), m);
    t->failed++;
    dy_program_free(p);
    return;
  }
  for (int k = 0; k < n_wrt; k++)
    if (grads[k] >= 0)
      dy_program_add_fetch(p, grads[k], &err);
  if ((s = dy_verify(p, &err))) {
    fprintf(stderr, "\n  [%s] gradient program invalid: %s\n", c->label, err.msg);
    t->failed++;
    dy_program_free(p);
    return;
  }
  t->has_case[c->kind] = true;

  int64_t batch = c->batch ? c->batch : 2;
  dy_tensor *in[9] = {0};
  for (int i = 0; i < c->n_in; i++)
    in[i] = make_input(c, i, batch);
  dy_op probe = {.id = 0, .kind = c->kind, .attrs = (dy_attr *)c->attrs,
                 .n_attrs = c->n_attrs};
  dy_type tin[8], tout;
  for (int i = 0; i < c->n_in; i++)
    tin[i] = in[i]->type;
  dy_infer(&probe, tin, c->n_in, &tout, &err);
  dy_tensor *w = dy_tensor_new(DY_F32, tout.rank, tout.shape);
  for (int64_t k = 0; k < dy_tensor_numel(w); k++)
    ((float *)w->data)[k] = (float)(2 * uniform() - 1);
  in[c->n_in] = w;
  int n_feed = c->n_in + 1, n_out = p->n_fetches;

  dy_tensor *out[16] = {0};
  if ((s = dy_executor_run(p, in, n_feed, out, n_out, &err))) {
    fprintf(stderr, "\n  [%s] running the gradient program: %s\n", c->label, err.msg);
    t->failed++;
  } else {
    double tol = c->tol > 1e-3 ? c->tol * 10 : 1e-2;
    int f = 2;  /* fetch index of the next gradient (0: L, 1: out) */
    dy_tensor *o0 = eval_out(p, in, n_feed, n_out);
    for (int k = 0; k < n_wrt; k++) {
      int i = which[k];
      const dy_tensor *g = grads[k] >= 0 ? out[f++] : NULL;
      float *x = in[i]->data;
      int64_t n = dy_tensor_numel(in[i]);
      int64_t step = n > MAX_PROBE ? n / MAX_PROBE : 1;
      int bad = 0;
      for (int64_t e = 0; e < n; e += step) {
        float x0 = x[e];
        double h = 1e-3 * (fabs(x0) > 1 ? fabs(x0) : 1);
        x[e] = (float)(x0 + h);
        double hp = (double)x[e] - x0;
        dy_tensor *plus = eval_out(p, in, n_feed, n_out);
        x[e] = (float)(x0 - h);
        double hm = x0 - (double)x[e];
        dy_tensor *om = eval_out(p, in, n_feed, n_out);
        x[e] = x0;
        double fd = loss_diff(plus, om, o0, w) / (hp + hm);
        double dp = loss_diff(plus, o0, o0, w) / hp, dm = loss_diff(o0, om, o0, w) / hm;
        dy_tensor_free(plus);
        dy_tensor_free(om);
        double an = g ? ((const float *)g->data)[e] : 0.0;
        t->checked++;
        if (!isfinite(fd)) {
          t->uncheckable++;  /* NaN input or the edge of the domain */
          continue;
        }
        if (fabs(fd - an) <= tol * (1 + fabs(fd)))
          continue;
        /* a kink (relu at 0, clip at a bound): the rule takes one side's
         * derivative, which the central difference averages */
        if (fabs(dp - an) <= tol * (1 + fabs(dp)) || fabs(dm - an) <= tol * (1 + fabs(dm))) {
          t->one_sided++;
          continue;
        }
        if (bad++ < 3)
          fprintf(stderr, "\n  [%s] d/d in%d [%lld]: rule %.7g, finite difference %.7g",
                  c->label, i, (long long)e, an, fd);
      }
      if (bad) {
        fprintf(stderr, "\n  [%s] %s: %d elements of in%d's gradient differ (tol %g)\n",
                c->label, dy_op_name(c->kind), bad, i, tol);
        t->failed++;
      }
    }
    dy_tensor_free(o0);
  }
  for (int i = 0; i < n_out; i++)
    dy_tensor_free(out[i]);
  for (int i = 0; i <= c->n_in; i++)
    dy_tensor_free(in[i]);
  dy_program_free(p);
}

static const dy_op_case_list *const *families(int *n) {
  static const dy_op_case_list *lists[] = {&dy_op_cases_core, &dy_op_cases_nn,
                                           &dy_op_cases_math, &dy_op_cases_shape,
                                           &dy_op_cases_extra, &dy_op_cases_train};
  *n = 6;
  return lists;
}

static void test_rules_against_finite_differences(void) {
  tally t = {0};
  int nl;
  const dy_op_case_list *const *lists = families(&nl);
  for (int l = 0; l < nl; l++)
    for (int i = 0; i < lists[l]->n; i++)
      check_case(&lists[l]->cases[i], &t);
  fprintf(stderr,
          "\n  %d cases, %d elements checked (%d at a kink matched one side, %d "
          "without a finite difference), %d failures\n",
          t.cases, t.checked, t.one_sided, t.uncheckable, t.failed);
  CU_ASSERT_EQUAL(t.failed, 0);
  /* every differentiable op that users write (not the fused ones, which
   * the passes make) had a case whose gradient checked */
  for (int k = 0; k < DY_OP_COUNT; k++) {
    if (!dy_grad_table[k] || dy_op_info_of((dy_op_kind)k)->flags & DY_OPF_FUSED)
      continue;
    if (!t.has_case[k])
      fprintf(stderr, "\n  differentiable op '%s' has no gradient case\n",
              dy_op_name((dy_op_kind)k));
    CU_ASSERT(t.has_case[k]);
  }
}

/* A loss that is not a scalar, and an op without a gradient on the path,
 * are errors that name them. */
static void test_gradient_errors(void) {
  const char *txt =
      "program {\n"
      "  var x : f32[-1,3] feed 0\n"
      "  var y : f32[-1,3]\n"
      "  block 0 parent -1 {\n"
      "    y = relu(x)  @m.c:7\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n";
  dy_program *p;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(txt, &p, &err), &err);
  int x = dy_program_find_var(p, "x"), y = dy_program_find_var(p, "y"), g;
  CU_ASSERT_EQUAL(dy_program_gradients(p, y, &x, 1, &g, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'y'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "scalar"));
  CU_ASSERT_EQUAL(g, -1);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("grad");
  DY_TEST(test_gradient_errors);
  DY_TEST(test_rules_against_finite_differences);
}
