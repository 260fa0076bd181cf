/* test_grad.c - every gradient rule against central finite differences.
 *
 * Table-driven over the op table's own cases (tests/op_cases_*.c): for
 * every case of a differentiable op (not a bad-input case), random inputs
 * in the case's range and a random cotangent w of the output's shape; the
 * scalar L = sum(op(x) * w); the analytic gradient of L with respect to
 * every differentiable input (dy_grad_input_is_differentiable), from the
 * op's rule, against (L(x + e) - L(x - e)) / 2e per element (up to
 * MAX_PROBE elements per input, spread over the tensor).
 * L(x + e) - L(x - e) is summed in double element by element from the two
 * outputs, so elements that did not move cancel exactly.
 *
 * Where the op has a kink (relu at 0, clip at a bound, a tie of maximum)
 * the central difference averages two one-sided derivatives while a rule
 * takes one of them (the op's documented convention): an element whose
 * rule matches the forward or the backward difference there passes, and
 * is counted. So does one that matches the central difference at a 64
 * times smaller step (curvature on the scale of the step: sin at 1000).
 * Elements without a finite difference cannot be checked and are counted,
 * not failed: a NaN input, the edge of the domain (sqrt at 0), or a
 * non-finite rule where the output is non-finite too. Cases marked
 * no_grad (forward edge values where a derivative means nothing: mod at
 * a quotient of 1e7) are skipped.
 *
 * The ways the analytic gradient is computed:
 *   - program: a Program op(x) -> L, dy_program_gradients, the static
 *     executor;
 *   - eager: the inputs require grad, op and L run eagerly (dy_apply) onto
 *     the autograd tape, dy_backward fills each input's .grad;
 *   - compiled: the same gradient Program, memory-planned and emitted as C
 *     (symbol prefix g<k>, no passes: the rule's ops as they are), every
 *     case's file compiled with -std=c99 -Wall -Wextra -Werror -pedantic at
 *     -O0 (two at a time) and linked with one generated driver that runs
 *     each on the case's inputs and writes its gradients; each must agree
 *     with the executor's (the program way).
 *
 * A differentiable op with no case, or whose rule is missing or fails, is
 * a failure naming it.
 *
 * The text of every case's gradient Program, and of a training step with
 * each loss and with each optimizer, is compared with the golden
 * tests/golden/grad_programs.txt, so that a rule whose ops' order depends
 * on the compiler (two emitting arguments of one call) fails under gcc or
 * under clang.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_test.h"
#include "dy_compiler.h"
#include "dy_passes.h"
#include "op_table.h"

#define MAX_PROBE 24

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double uniform(void) { return dy_case_uniform(&rng); }
static dy_tensor *make_input(const dy_op_case *c, int i, int64_t batch) {
  return dy_case_input(c, i, batch, &rng);
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

/* L at the given inputs (fetch 0 of p). NAN on error. */
static double eval_loss(const dy_program *p, dy_tensor **in, int n_in, int n_out) {
  dy_tensor *out[16] = {0};
  dy_error err = {0};
  if (dy_executor_run(p, in, n_in, out, n_out, &err))
    return NAN;
  double v = ((float *)out[0]->data)[0];
  for (int i = 0; i < n_out; i++)
    dy_tensor_free(out[i]);
  return v;
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

/* Central, forward and backward differences of L in element e of x (an
 * input of the feeds in) with step h; o0 is the op's output at x. */
typedef struct {
  double c, p, m;
} diffs;
static diffs differences(const dy_program *p, dy_tensor **in, int n_feed, int n_out,
                         float *x, int64_t e, double h, const dy_tensor *o0,
                         const dy_tensor *w) {
  float x0 = x[e];
  x[e] = (float)(x0 + h);
  double hp = (double)x[e] - x0;
  dy_tensor *plus = eval_out(p, in, n_feed, n_out);
  x[e] = (float)(x0 - h);
  double hm = x0 - (double)x[e];
  dy_tensor *minus = eval_out(p, in, n_feed, n_out);
  x[e] = x0;
  diffs d = {loss_diff(plus, minus, o0, w) / (hp + hm), loss_diff(plus, o0, o0, w) / hp,
             loss_diff(o0, minus, o0, w) / hm};
  dy_tensor_free(plus);
  dy_tensor_free(minus);
  return d;
}

static bool near(double got, double ref, double tol) {
  return fabs(got - ref) <= tol * (1 + fabs(ref));
}

static bool has_nonfinite(const dy_tensor *t) {
  const float *v = t->data;
  for (int64_t k = 0; k < dy_tensor_numel(t); k++)
    if (!isfinite(v[k]))
      return true;
  return false;
}

typedef struct {
  int cases, checked, failed;
  int one_sided;    /* matched a one-sided difference (a kink) */
  int small_step;   /* matched the difference at a 64 times smaller step */
  int uncheckable;  /* the finite difference is not finite (NaN input,
                       the edge of the domain), or the rule's is not at a
                       point where the output is not */
  bool has_case[DY_OP_COUNT];
} tally;

/* The eager way: g[i] gets d L / d in[i] from the tape (NULL: zero) for
 * every f32 input. False (printed) when backward fails. */
static bool eager_grads(const dy_op_case *c, dy_tensor **in, dy_tensor *w,
                        dy_tensor **g) {
  for (int i = 0; i < c->n_in; i++)
    in[i]->requires_grad = in[i]->type.dtype == DY_F32;
  dy_error err = {0};
  dy_scope_begin();
  dy_srcloc loc = {"op_cases.c", 1};
  dy_tensor *out = dy_apply(c->kind, in, c->n_in, c->attrs, c->n_attrs, loc);
  dy_attr ra[] = {DY_ATTR_IS("axes", NULL, 0), DY_ATTR_I("keepdim", 0)};
  dy_tensor *l = dy_apply(DY_OP_REDUCE_SUM, (dy_tensor *const[]){dy_mul(out, w)}, 1,
                          ra, 2, loc);
  dy_status s = l ? dy_backward(l, &err) : DY_STATUS_INTERNAL;
  if (s) {
    const dy_error *e = l ? &err : dy_last_error();
    fprintf(stderr, "\n  [%s] eager backward: %s\n", c->label, e ? e->msg : "?");
    dy_clear_error();
    dy_tape_clear();
  }
  dy_scope_end();
  for (int i = 0; i < c->n_in; i++) {
    in[i]->requires_grad = false;
    g[i] = in[i]->grad;
    in[i]->grad = NULL;
  }
  return s == DY_OK;
}

/* The compiled way (below): emit the case's gradient Program. */
static void cg_add(const dy_op_case *c, dy_program *p, dy_tensor **in, int n_feed,
                   dy_tensor **out, int n_out, int64_t batch);

/* One case: the program way (the compiled way is queued by cg_add). */
/* Does case c have a gradient to check: a good case of a differentiable
 * op with an f32 input and an f32 result? */
static bool has_gradient(const dy_op_case *c) {
  if (c->expect_error || c->no_grad || !dy_grad_table[c->kind])
    return false;
  bool any_f32 = false;
  for (int i = 0; i < c->n_in; i++)
    any_f32 |= c->in[i].dtype == DY_F32;
  dy_op probe = {.id = 0, .kind = c->kind, .attrs = (dy_attr *)c->attrs,
                 .n_attrs = c->n_attrs};
  dy_type tout;
  dy_error err = {0};
  return any_f32 && !dy_infer(&probe, c->in, c->n_in, &tout, &err) && tout.dtype == DY_F32;
}

/* The gradient Program of case c: loss_program, then the gradients of L
 * with respect to every differentiable input which[k] (grads[k], -1 when
 * L does not depend on it), each fetched after L and out (the fetches 2,
 * 3, ...), verified. NULL on failure, with a one-line message on stderr
 * naming the case. */
static dy_program *gradient_program(const dy_op_case *c, int *which, int *n_wrt,
                                    int *grads) {
  dy_error err = {0};
  int ids[DY_CASE_MAX_IN], loss;
  dy_program *p = loss_program(c, ids, &loss, &err);
  if (!p) {
    fprintf(stderr, "\n  [%s] cannot build: %s\n", c->label, err.msg);
    return NULL;
  }
  int wrt[8];
  *n_wrt = 0;
  for (int i = 0; i < c->n_in; i++)
    if (dy_grad_input_is_differentiable(c->kind, i, c->in[i].dtype)) {
      which[*n_wrt] = i;
      wrt[(*n_wrt)++] = ids[i];
    }
  if (dy_program_gradients(p, loss, wrt, *n_wrt, grads, &err)) {
    char m[700];
    dy_error_format(&err, m, sizeof m);
    fprintf(stderr, "\n  [%s] %s: %s\n", c->label, dy_op_name(c->kind), m);
    dy_program_free(p);
    return NULL;
  }
  for (int k = 0; k < *n_wrt; k++)
    if (grads[k] >= 0)
      dy_program_add_fetch(p, grads[k], &err);
  if (dy_verify(p, &err)) {
    fprintf(stderr, "\n  [%s] gradient program invalid: %s\n", c->label, err.msg);
    dy_program_free(p);
    return NULL;
  }
  return p;
}

static void check_case(const dy_op_case *c, tally *t) {
  if (!has_gradient(c))
    return;
  t->cases++;
  int n_wrt, which[8], grads[8];
  dy_program *p = gradient_program(c, which, &n_wrt, grads);
  if (!p) {
    t->failed++;
    return;
  }
  t->has_case[c->kind] = true;
  dy_error err = {0};
  dy_status s;

  int64_t batch = c->batch ? c->batch : 2;
  dy_tensor *in[9] = {0};
  for (int i = 0; i < c->n_in; i++)
    in[i] = make_input(c, i, batch);
  dy_op probe = {.id = 0, .kind = c->kind, .attrs = (dy_attr *)c->attrs,
                 .n_attrs = c->n_attrs};
  dy_type tin[DY_CASE_MAX_IN], tout;
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
    dy_tensor *eg[8] = {0};
    if (!eager_grads(c, in, w, eg))
      t->failed++;
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
        double h = 1e-3 * (fabs(x[e]) > 1 ? fabs(x[e]) : 1);
        diffs d = differences(p, in, n_feed, n_out, x, e, h, o0, w);
        double an = g ? ((const float *)g->data)[e] : 0.0;
        double ea = eg[i] ? ((const float *)eg[i]->data)[e] : 0.0;
        t->checked++;
        if (!isfinite(d.c) || (!isfinite(an) && o0 && has_nonfinite(o0))) {
          t->uncheckable++;  /* NaN input or output, the edge of the domain */
          continue;
        }
        /* each way: the rule through the Program, the rule on the tape
         * (the counts are the first's) */
        const double got[2] = {an, ea};
        const char *way[2] = {"rule", "eager tape"};
        diffs d2 = {0};
        bool have_d2 = false;
        for (int v = 0; v < 2; v++) {
          if (near(got[v], d.c, tol))
            continue;
          /* a kink (relu at 0, clip at a bound): the rule takes one side's
           * derivative, which the central difference averages */
          if (near(got[v], d.p, tol) || near(got[v], d.m, tol)) {
            t->one_sided += v == 0;
            continue;
          }
          /* curvature on the scale of h (sin at 1000, tan near a pole) */
          if (!have_d2) {
            d2 = differences(p, in, n_feed, n_out, x, e, h / 64, o0, w);
            have_d2 = true;
          }
          if (near(got[v], d2.c, tol)) {
            t->small_step += v == 0;
            continue;
          }
          if (bad++ < 3)
            fprintf(stderr, "\n  [%s] d/d in%d [%lld]: %s %.7g, finite difference %.7g",
                    c->label, i, (long long)e, way[v], got[v], d.c);
        }
      }
      if (bad) {
        fprintf(stderr, "\n  [%s] %s: %d elements of in%d's gradient differ (tol %g)\n",
                c->label, dy_op_name(c->kind), bad, i, tol);
        t->failed++;
      }
    }
    for (int i = 0; i < c->n_in; i++)
      dy_tensor_free(eg[i]);
    dy_tensor_free(o0);
    cg_add(c, p, in, n_feed, out, n_out, batch);
  }
  for (int i = 0; i < n_out; i++)
    dy_tensor_free(out[i]);
  for (int i = 0; i <= c->n_in; i++)
    dy_tensor_free(in[i]);
  dy_program_free(p);
}

/* ---- the compiled way ---- */

#define CG_DIR DY_BUILD_DIR "/grad_compiled"
enum { CG_MAX = 2048 };

typedef struct {
  const dy_op_case *c;
  int n_grads;
  dy_tensor *ref[8];      /* the executor's gradients */
} cg_case;

static struct {
  dy_buf drv;             /* the driver main()'s body */
  cg_case cases[CG_MAX];
  int n;
} cg;

static bool write_bin(const char *path, const dy_tensor *t) {
  dy_error err = {0};
  return dy_write_file_atomic(path, t->data, t->nbytes, &err) == DY_OK;
}

/* Emit case c's gradient Program p (feeds in[0..n_feed), fetches L, out,
 * then the gradients out[2..n_out)) as g<k>.c/.h with its inputs, and the
 * driver's block that runs it. */
static void cg_add(const dy_op_case *c, dy_program *p, dy_tensor **in, int n_feed,
                   dy_tensor **out, int n_out, int64_t batch) {
  if (cg.n >= CG_MAX || n_out > 10)
    return;
  int k = cg.n;
  char name[16], path[600];
  snprintf(name, sizeof name, "g%d", k);
  dy_error err = {0};
  dy_memplan_result mr;
  dy_codegen_output co = {0};
  dy_codegen_options o = {.name = name, .source = c->label};
  if (dy_program_bound_sym(p, "batch", batch, &err) || dy_memplan(p, &mr, &err) ||
      (o.arena_bytes = mr.arena_bytes, dy_codegen(p, &o, &co, &err))) {
    fprintf(stderr, "\n  [%s] codegen of the gradient Program: %s\n", c->label, err.msg);
    CU_FAIL("gradient codegen failed");
    return;
  }
  snprintf(path, sizeof path, CG_DIR "/%s.c", name);
  dy_write_file_atomic(path, co.source, strlen(co.source), &err);
  snprintf(path, sizeof path, CG_DIR "/%s.h", name);
  dy_write_file_atomic(path, co.header, strlen(co.header), &err);
  dy_codegen_output_free(&co);
  dy_buf_printf(&cg.drv, "  { /* %d */\n    const void *in[%d]; void *out[%d];\n", k, n_feed,
                n_out);
  for (int i = 0; i < n_feed; i++) {
    snprintf(path, sizeof path, CG_DIR "/in_%d_%d.bin", k, i);
    write_bin(path, in[i]);
    dy_buf_printf(&cg.drv, "    in[%d] = load(\"in_%d_%d.bin\", %zu);\n", i, k, i,
                  in[i]->nbytes);
  }
  for (int i = 0; i < n_out; i++)
    dy_buf_printf(&cg.drv, "    out[%d] = malloc(%zu + 1);\n", i, out[i]->nbytes);
  dy_buf_printf(&cg.drv,
                "    void *arena = malloc(G%d_ARENA_BYTES + 64);\n"
                "    if (g%d_run_v(arena, %lld, in, out)) { fprintf(stderr, \"case %d\\n\"); "
                "return 1; }\n",
                k, k, (long long)batch, k);
  cg.cases[k] = (cg_case){.c = c, .n_grads = n_out - 2};
  for (int i = 2; i < n_out; i++) {
    dy_buf_printf(&cg.drv, "    save(\"grad_%d_%d.bin\", out[%d], %zu);\n", k, i - 2, i,
                  out[i]->nbytes);
    cg.cases[k].ref[i - 2] = dy_keep(out[i]);
  }
  dy_buf_printf(&cg.drv, "    free(arena);\n    for (int i = 0; i < %d; i++) free(out[i]);\n"
                         "    for (int i = 0; i < %d; i++) free((void *)in[i]);\n  }\n",
                n_out, n_feed);
  cg.n++;
}

/* Compile every emitted case, run the driver, compare with the executor. */
static void cg_run_and_compare(void) {
  dy_buf full = {0};
  dy_buf_printf(&full, "%s", dy_test_driver_io);
  for (int k = 0; k < cg.n; k++)
    dy_buf_printf(&full, "#include \"g%d.h\"\n", k);
  dy_buf_printf(&full, "int main(void) {\n%s  return 0;\n}\n", cg.drv.s ? cg.drv.s : "");
  dy_error err = {0};
  dy_write_file_atomic(CG_DIR "/driver.c", full.s, full.len, &err);
  dy_buf_free(&full);
  dy_buf_free(&cg.drv);
  const char *cc_env = getenv("CC");
  const char *compiler = cc_env && *cc_env ? cc_env : "cc";
  int rc = dy_test_sh(NULL, "cd " CG_DIR " && ls g*.c | xargs -P 2 -I{} sh -c '%s -std=c99 -Wall "
                            "-Wextra -Werror -pedantic -O0 -c {} || { echo \"FAILED: {}\"; "
                            "exit 1; }' > build.log 2>&1",
                      compiler);
  if (rc) {
    dy_test_sh(NULL, "head -40 " CG_DIR "/build.log >&2");
    CU_FAIL("emitted gradient C does not compile cleanly");
  }
  if (!rc)
    rc = dy_test_sh(NULL, "cd " CG_DIR " && %s -std=c11 -O0 -w -c driver.c && %s -o driver *.o "
                          "-lm >> build.log 2>&1 && ./driver > run.log 2>&1",
                    compiler, compiler);
  if (rc) {
    dy_test_sh(NULL, "tail -20 " CG_DIR "/build.log " CG_DIR "/run.log >&2");
    CU_FAIL("the compiled gradient Programs did not run");
  }
  int checked = 0, bad_cases = 0;
  for (int k = 0; k < cg.n; k++) {
    cg_case *cc = &cg.cases[k];
    for (int j = 0; j < cc->n_grads; j++) {
      if (!rc) {
        char path[600];
        snprintf(path, sizeof path, CG_DIR "/grad_%d_%d.bin", k, j);
        uint8_t *buf = NULL;
        size_t len = 0;
        const dy_tensor *ref = cc->ref[j];
        int bad = 0;
        if (dy_read_file(path, &buf, &len, &err) || len != ref->nbytes) {
          bad = 1;
        } else {
          const float *got = (const float *)buf, *want = ref->data;
          for (int64_t e = 0; e < dy_tensor_numel(ref); e++) {
            double g = got[e], w = want[e];
            bool ok = (isnan(g) && isnan(w)) || (isinf(g) && g == w) ||
                      fabs(g - w) <= 1e-4 * (1 + fabs(w));
            if (!ok && bad++ < 2)
              fprintf(stderr, "\n  [%s] compiled gradient %d [%lld]: %.7g, executor %.7g",
                      cc->c->label, j, (long long)e, g, w);
          }
        }
        free(buf);
        checked++;
        bad_cases += bad > 0;
      }
      dy_tensor_free(cc->ref[j]);
    }
  }
  fprintf(stderr, "\n  compiled: %d gradient Programs, %d gradients compared, %d differ\n",
          cg.n, checked, bad_cases);
  CU_ASSERT_EQUAL(bad_cases, 0);
  cg.n = 0;
}

static const dy_op_case_list *const *families(int *n) {
  static const dy_op_case_list *lists[] = {&dy_op_cases_core, &dy_op_cases_nn,
                                           &dy_op_cases_math, &dy_op_cases_shape,
                                           &dy_op_cases_extra};
  *n = 5;
  return lists;
}

static void test_rules_against_finite_differences(void) {
  tally t = {0};
  int nl;
  const dy_op_case_list *const *lists = families(&nl);
  dy_test_sh(NULL, "rm -rf " CG_DIR " && mkdir -p " CG_DIR);
  for (int l = 0; l < nl; l++) {
    /* each family's draws start afresh: cases added to one family do not
     * move the inputs of the others' (tan's poles, relu's kinks) */
    rng = 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull * (uint64_t)l;
    for (int i = 0; i < lists[l]->n; i++)
      check_case(&lists[l]->cases[i], &t);
  }
  cg_run_and_compare();
  fprintf(stderr,
          "\n  %d cases, %d elements checked (%d at a kink matched one side, %d "
          "matched at a smaller step, %d without a finite difference), "
          "%d failures\n",
          t.cases, t.checked, t.one_sided, t.small_step, t.uncheckable,
          t.failed);
  CU_ASSERT_EQUAL(t.failed, 0);
  /* every differentiable op that users write (not the fused ones, which
   * the passes make) had a case whose gradient checked */
  for (int k = 0; k < DY_OP_COUNT; k++) {
    if (!dy_grad_table[k] || dy_op_info_of((dy_op_kind)k)->flags & DY_OPF_FUSED)
      continue;
    if (k == DY_OP_COND || k == DY_OP_WHILE) /* own blocks: test_cond_grad and
                                                test_while_grad check their rules */
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

/* ------------------------------------------------------------------ */
/* Program autodiff as a whole                                          */
/* ------------------------------------------------------------------ */

/* A two-layer MLP: x (a feed) is used three times (matmul, x*x), h1 twice
 * (tanh's input and a factor), so the gradients sum contributions; c is a
 * persistable that is not trainable, `unused` a trainable the loss does
 * not read and y a feed it does not read. */
static const char *mlp_text =
    "program {\n"
    "  var x : f32[-1,3] feed 0\n"
    "  var y : f32[-1,2] feed 1\n"
    "  var w1 : f32[3,4] persistable trainable\n"
    "  var b1 : f32[4] persistable trainable\n"
    "  var c : f32[4] persistable\n"
    "  var w2 : f32[4,2] persistable trainable\n"
    "  var unused : f32[2] persistable trainable\n"
    "  var h : f32[-1,4]\n"
    "  var h1 : f32[-1,4]\n"
    "  var hc : f32[-1,4]\n"
    "  var t : f32[-1,4]\n"
    "  var u : f32[-1,4]\n"
    "  var z : f32[-1,2]\n"
    "  var m : f32[]\n"
    "  var q : f32[-1,3]\n"
    "  var v : f32[]\n"
    "  var L : f32[]\n"
    "  block 0 parent -1 {\n"
    "    h = matmul(x, w1) {transpose_x = 0, transpose_y = 0}  @mlp.c:1\n"
    "    h1 = add(h, b1)  @mlp.c:2\n"
    "    hc = mul(h1, c)  @mlp.c:3\n"
    "    t = tanh(hc)  @mlp.c:4\n"
    "    u = mul(t, h1)  @mlp.c:5\n"
    "    z = matmul(u, w2) {transpose_x = 0, transpose_y = 0}  @mlp.c:6\n"
    "    m = reduce_mean(z) {axes = [], keepdim = 0}  @mlp.c:7\n"
    "    q = mul(x, x)  @mlp.c:8\n"
    "    v = reduce_sum(q) {axes = [], keepdim = 0}  @mlp.c:9\n"
    "    L = add(m, v)  @mlp.c:10\n"
    "  }\n"
    "  fetch 0 L\n"
    "}\n";

/* The MLP with random parameters, and random feeds for a batch of 3. */
static dy_program *mlp_program(dy_tensor **feeds) {
  dy_program *p;
  dy_error err = {0};
  if (dy_program_parse(mlp_text, &p, &err)) {
    fprintf(stderr, "\n  mlp: %s\n", err.msg);
    return NULL;
  }
  for (int v = 0; v < p->n_vars; v++) {
    dy_var *var = p->vars[v];
    if (!var->persistable)
      continue;
    float *d = var->data;
    for (int64_t k = 0; k < dy_type_numel(&var->type); k++)
      d[k] = (float)(2 * uniform() - 1);
  }
  int64_t xs[2] = {3, 3}, ys[2] = {3, 2};
  feeds[0] = dy_tensor_new(DY_F32, 2, xs);
  feeds[1] = dy_tensor_new(DY_F32, 2, ys);
  for (int i = 0; i < 2; i++)
    for (int64_t k = 0; k < dy_tensor_numel(feeds[i]); k++)
      ((float *)feeds[i]->data)[k] = (float)(2 * uniform() - 1);
  return p;
}

/* Compare the gradient g (a fetched tensor) of the loss (fetch 0 of p)
 * with respect to the n floats at x (a feed's data or a parameter's)
 * with central finite differences; returns the number that differ. */
static int fd_mismatches(const dy_program *p, dy_tensor **feeds, int n_feeds,
                         float *x, int64_t n, const dy_tensor *g, const char *what) {
  int bad = 0;
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(g), n);
  for (int64_t e = 0; e < n; e++) {
    float x0 = x[e];
    double h = 1e-3 * (fabs(x0) > 1 ? fabs(x0) : 1);
    x[e] = (float)(x0 + h);
    double hp = (double)x[e] - x0, lp = eval_loss(p, feeds, n_feeds, p->n_fetches);
    x[e] = (float)(x0 - h);
    double hm = x0 - (double)x[e], lm = eval_loss(p, feeds, n_feeds, p->n_fetches);
    x[e] = x0;
    double fd = (lp - lm) / (hp + hm), an = ((const float *)g->data)[e];
    if (!(fabs(fd - an) <= 1e-2 * (1 + fabs(fd))) && bad++ < 3)
      fprintf(stderr, "\n  d/d %s[%lld]: program %.7g, finite difference %.7g", what,
              (long long)e, an, fd);
  }
  return bad;
}

/* d L / d (x, w1, b1) of the MLP, by dy_program_gradients and the static
 * executor, against finite differences; y is not read: -1. */
static void test_program_mlp_gradients(void) {
  dy_tensor *feeds[2];
  dy_program *p = mlp_program(feeds);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};
  const char *names[] = {"x", "w1", "b1", "y"};
  int wrt[4], grads[4];
  for (int i = 0; i < 4; i++)
    wrt[i] = dy_program_find_var(p, names[i]);
  int loss = dy_program_find_var(p, "L");
  int n_fwd = p->blocks[0]->n_ops;
  DY_ASSERT_OK(dy_program_gradients(p, loss, wrt, 4, grads, &err), &err);
  CU_ASSERT(p->blocks[0]->n_ops > n_fwd);
  CU_ASSERT_EQUAL(grads[3], -1); /* the loss does not read y */
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_FATAL(grads[i] >= 0);
    char want[32];
    snprintf(want, sizeof want, "%s@GRAD", names[i]);
    CU_ASSERT_STRING_EQUAL(p->vars[grads[i]]->name, want);
    CU_ASSERT(dy_type_equal(&p->vars[grads[i]]->type, &p->vars[wrt[i]]->type));
    DY_ASSERT_OK(dy_program_add_fetch(p, grads[i], &err), &err);
  }
  /* the contributions of a var used several times are summed by add ops:
   * x's gradient is one (from matmul and both factors of x*x) */
  int adds = 0;
  for (int k = n_fwd; k < p->blocks[0]->n_ops; k++)
    adds += p->blocks[0]->ops[k]->kind == DY_OP_ADD;
  CU_ASSERT(adds >= 2);
  DY_ASSERT_OK(dy_verify(p, &err), &err);

  dy_tensor *out[4] = {0};
  DY_ASSERT_OK(dy_executor_run(p, feeds, 2, out, 4, &err), &err);
  float *param[3] = {feeds[0]->data, p->vars[wrt[1]]->data, p->vars[wrt[2]]->data};
  int64_t n[3] = {dy_tensor_numel(feeds[0]), 12, 4};
  for (int i = 0; i < 3; i++) {
    int bad = fd_mismatches(p, feeds, 2, param[i], n[i], out[1 + i], names[i]);
    if (bad)
      fprintf(stderr, "\n  %d elements of d L / d %s differ\n", bad, names[i]);
    CU_ASSERT_EQUAL(bad, 0);
  }
  for (int i = 0; i < 4; i++)
    dy_tensor_free(out[i]);
  for (int i = 0; i < 2; i++)
    dy_tensor_free(feeds[i]);
  dy_program_free(p);
}

/* dy_program_append_backward: every trainable var in var order (not the
 * persistable c, which is not trainable), its gradient "<var>@GRAD" or
 * -1 for `unused`; the result verifies, its values match finite
 * differences, and its text form reads back to the same text. */
static void test_append_backward(void) {
  dy_tensor *feeds[2];
  dy_program *p = mlp_program(feeds);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};
  int *params, *grads, n;
  DY_ASSERT_OK(dy_program_append_backward(p, dy_program_find_var(p, "L"), &params,
                                          &grads, &n, &err), &err);
  const char *want[] = {"w1", "b1", "w2", "unused"};
  CU_ASSERT_EQUAL_FATAL(n, 4);
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_STRING_EQUAL(p->vars[params[i]]->name, want[i]);
    if (i == 3) {
      CU_ASSERT_EQUAL(grads[i], -1);
      continue;
    }
    CU_ASSERT_FATAL(grads[i] >= 0);
    char nm[32];
    snprintf(nm, sizeof nm, "%s@GRAD", want[i]);
    CU_ASSERT_STRING_EQUAL(p->vars[grads[i]]->name, nm);
    CU_ASSERT_FALSE(p->vars[grads[i]]->persistable);
    DY_ASSERT_OK(dy_program_add_fetch(p, grads[i], &err), &err);
  }
  DY_ASSERT_OK(dy_verify(p, &err), &err);

  dy_tensor *out[4] = {0};
  DY_ASSERT_OK(dy_executor_run(p, feeds, 2, out, 4, &err), &err);
  for (int i = 0; i < 3; i++) {
    dy_var *v = p->vars[params[i]];
    int bad = fd_mismatches(p, feeds, 2, v->data, dy_type_numel(&v->type), out[1 + i],
                            want[i]);
    if (bad)
      fprintf(stderr, "\n  %d elements of d L / d %s differ\n", bad, want[i]);
    CU_ASSERT_EQUAL(bad, 0);
  }

  /* print -> parse -> print gives the same text, and the parsed Program
   * verifies and computes the same gradients */
  char *t1 = NULL, *t2 = NULL;
  size_t l1 = 0, l2 = 0;
  FILE *f = open_memstream(&t1, &l1);
  dy_program_print(p, f);
  fclose(f);
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_program_parse(t1, &q, &err), &err);
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  f = open_memstream(&t2, &l2);
  dy_program_print(q, f);
  fclose(f);
  CU_ASSERT_STRING_EQUAL(t1, t2);
  CU_ASSERT_PTR_NOT_NULL(strstr(t1, "w1@GRAD"));
  dy_tensor *out2[4] = {0};
  /* small parameters print their data; w1 (12 floats) and the rest do:
   * the parsed Program computes the same values */
  DY_ASSERT_OK(dy_executor_run(q, feeds, 2, out2, 4, &err), &err);
  for (int i = 0; i < 4; i++) {
    const float *a = out[i]->data, *b = out2[i]->data;
    for (int64_t k = 0; k < dy_tensor_numel(out[i]); k++)
      DY_ASSERT_NEAR(b[k], a[k], 1e-6 * (1 + fabs(a[k])));
  }
  for (int i = 0; i < 4; i++) {
    dy_tensor_free(out[i]);
    dy_tensor_free(out2[i]);
  }
  free(t1);
  free(t2);
  free(params);
  free(grads);
  for (int i = 0; i < 2; i++)
    dy_tensor_free(feeds[i]);
  dy_program_free(q);
  dy_program_free(p);
}

/* d sum(op(x) * w) / dx of the one-op Program "out = OP" over the
 * declarations vars (feeds x and w, out, ow, L), at the given data, by the
 * program way; fills g (n_x floats). */
static void grad_by_hand(const char *vars, const char *op_text, const float *xd,
                         int64_t n_x, int n_w, const float *wd, float *g) {
  char text[1024];
  snprintf(text, sizeof text,
           "program {\n%s"
           "  block 0 parent -1 {\n"
           "    out = %s  @h.c:1\n"
           "    ow = mul(out, w)  @h.c:2\n"
           "    L = reduce_sum(ow) {axes = [], keepdim = 0}  @h.c:3\n"
           "  }\n"
           "  fetch 0 L\n"
           "}\n",
           vars, op_text);
  dy_program *p;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  int x = dy_program_find_var(p, "x"), gx;
  DY_ASSERT_OK(dy_program_gradients(p, dy_program_find_var(p, "L"), &x, 1, &gx, &err), &err);
  CU_ASSERT_FATAL(gx >= 0);
  DY_ASSERT_OK(dy_program_add_fetch(p, gx, &err), &err);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  dy_tensor *in[2] = {dy_tensor_new(DY_F32, p->vars[x]->type.rank, p->vars[x]->type.shape),
                      NULL};
  const dy_var *wv = p->vars[dy_program_find_var(p, "w")];
  in[1] = dy_tensor_new(DY_F32, wv->type.rank, wv->type.shape);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(in[0]), n_x);
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(in[1]), n_w);
  memcpy(in[0]->data, xd, sizeof(float) * (size_t)n_x);
  memcpy(in[1]->data, wd, sizeof(float) * (size_t)n_w);
  dy_tensor *out[2] = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 2, out, 2, &err), &err);
  memcpy(g, out[1]->data, sizeof(float) * (size_t)n_x);
  for (int i = 0; i < 2; i++) {
    dy_tensor_free(out[i]);
    dy_tensor_free(in[i]);
  }
  dy_program_free(p);
}

/* What finite differences cannot check: at a tie, reduce_max / reduce_min
 * split the gradient evenly among the equal elements (PyTorch's amax);
 * a row gathered twice receives both gradients. */
static void test_shape_gradients_by_hand(void) {
  const char *vars = "  var x : f32[2,3] feed 0\n  var w : f32[2] feed 1\n"
                     "  var out : f32[2]\n  var ow : f32[2]\n  var L : f32[]\n";
  const float x[] = {1, 3, 3, 5, 5, 5}, w[] = {2, 3};
  float g[6];
  grad_by_hand(vars, "reduce_max(x) {axes = [1], keepdim = 0}", x, 6, 2, w, g);
  const float gmax[] = {0, 1, 1, 1, 1, 1};
  for (int i = 0; i < 6; i++)
    DY_ASSERT_NEAR(g[i], gmax[i], 1e-6);
  grad_by_hand(vars, "reduce_min(x) {axes = [-1], keepdim = 0}", x, 6, 2, w, g);
  const float gmin[] = {2, 0, 0, 1, 1, 1};
  for (int i = 0; i < 6; i++)
    DY_ASSERT_NEAR(g[i], gmin[i], 1e-6);

  /* gather rows {2, 0, -1} of a [3,2]: row 2 twice (2 and -1) */
  const char *gvars = "  var x : f32[3,2] feed 0\n  var w : f32[3,2] feed 1\n"
                      "  var i : i64[3] persistable = [2, 0, -1]\n"
                      "  var out : f32[3,2]\n  var ow : f32[3,2]\n  var L : f32[]\n";
  const float gx[] = {1, 2, 3, 4, 5, 6}, gw[] = {1, 2, 3, 4, 5, 6};
  grad_by_hand(gvars, "gather(x, i) {axis = 0}", gx, 6, 6, gw, g);
  const float ggather[] = {3, 4, 0, 0, 6, 8};
  for (int i = 0; i < 6; i++)
    DY_ASSERT_NEAR(g[i], ggather[i], 1e-6);
}

/* The fused ops, made by the fusion passes from ops whose rules the table
 * test checks: the fused Program's gradients equal the unfused one's and
 * central finite differences of its loss. */
static const char *const fused_src =
    "program {\n"
    "  var x : f32[-1,4] feed 0\n"
    "  var w : f32[4,3] feed 1\n"
    "  var y : f32[3] feed 2\n"
    "  var v : f32[4,3] feed 3\n"
    "  var b : f32[3] persistable = [0.25, -0.5, 0.75]\n"
    "  var half : f32[1] persistable = [0.5]\n"
    "  var m : f32[-1,3]\n"
    "  var a : f32[-1,3]\n"
    "  var h : f32[-1,3]\n"
    "  var m2 : f32[-1,3]\n"
    "  var h2 : f32[-1,3]\n"
    "  var e1 : f32[-1,3]\n"
    "  var e2 : f32[-1,3]\n"
    "  var e3 : f32[-1,3]\n"
    "  var e4 : f32[-1,3]\n"
    "  var out : f32[-1,3]\n"
    "  var L : f32[]\n"
    "  block 0 parent -1 {\n"
    "    m = matmul(x, w) {transpose_x = 0, transpose_y = 0}  @f.c:1\n"
    "    a = add(m, b)  @f.c:2\n"
    "    h = gelu(a) {approximate = 0}  @f.c:3\n"
    "    m2 = matmul(x, v) {transpose_x = 0, transpose_y = 0}  @f.c:4\n"
    "    h2 = clip(m2) {min = 0.0, max = 6.0}  @f.c:5\n"
    "    e1 = mul(h, half)  @f.c:6\n"
    "    e2 = sub(e1, y)  @f.c:7\n"
    "    e3 = tanh(e2)  @f.c:8\n"
    "    e4 = mul(e3, h2)  @f.c:9\n"
    "    out = sigmoid(e4)  @f.c:10\n"
    "    L = reduce_sum(out) {axes = [], keepdim = 0}  @f.c:11\n"
    "  }\n"
    "  fetch 0 L\n"
    "}\n";

/* L and the gradients of p (fetch 0 and the rest) at feeds in. */
static bool run_all(const dy_program *p, dy_tensor **in, int n_in, dy_tensor **out, int n_out) {
  dy_error err = {0};
  dy_status s = dy_executor_run(p, in, n_in, out, n_out, &err);
  if (s)
    fprintf(stderr, "\n  running: %s\n", err.msg);
  return s == DY_OK;
}

static void test_fused_ops_gradients(void) {
  dy_program *p, *q;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(fused_src, &p, &err), &err);
  DY_ASSERT_OK(dy_program_parse(fused_src, &q, &err), &err);
  bool changed = false;
  DY_ASSERT_OK(dy_pass_fuse_matmul(p, &changed, &err), &err);
  DY_ASSERT_OK(dy_pass_fuse_elementwise(p, &changed, &err), &err);
  DY_ASSERT_OK(dy_pass_dce(p, &changed, &err), &err);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  int n_mm = 0, n_ew = 0;
  for (int k = 0; k < p->blocks[0]->n_ops; k++) {
    n_mm += p->blocks[0]->ops[k]->kind == DY_OP_FUSED_MATMUL;
    n_ew += p->blocks[0]->ops[k]->kind == DY_OP_FUSED_ELEMENTWISE;
  }
  CU_ASSERT_EQUAL(n_mm, 2);  /* gelu and relu6 (clip 0..6) epilogues */
  CU_ASSERT_EQUAL(n_ew, 1);

  const char *names[] = {"x", "w", "y", "v", "b"};
  enum { NW = 5 };
  dy_program *ps[2] = {p, q};
  int grads[2][NW];
  for (int k = 0; k < 2; k++) {
    int wrt[NW];
    for (int i = 0; i < NW; i++)
      wrt[i] = dy_program_find_var(ps[k], names[i]);
    DY_ASSERT_OK(dy_program_gradients(ps[k], dy_program_find_var(ps[k], "L"), wrt, NW,
                                      grads[k], &err), &err);
    for (int i = 0; i < NW; i++) {
      CU_ASSERT(grads[k][i] >= 0);
      if (grads[k][i] >= 0)
        dy_program_add_fetch(ps[k], grads[k][i], &err);
    }
    DY_ASSERT_OK(dy_verify(ps[k], &err), &err);
  }

  int64_t batch = 3;
  dy_tensor *in[4] = {dy_tensor_new(DY_F32, 2, (int64_t[]){batch, 4}),
                      dy_tensor_new(DY_F32, 2, (int64_t[]){4, 3}),
                      dy_tensor_new(DY_F32, 1, (int64_t[]){3}),
                      dy_tensor_new(DY_F32, 2, (int64_t[]){4, 3})};
  for (int i = 0; i < 4; i++)
    for (int64_t e = 0; e < dy_tensor_numel(in[i]); e++)
      ((float *)in[i]->data)[e] = (float)(4 * uniform() - 2);
  dy_tensor *of[1 + NW] = {0}, *ou[1 + NW] = {0};
  CU_ASSERT_FATAL(run_all(p, in, 4, of, 1 + NW));
  CU_ASSERT_FATAL(run_all(q, in, 4, ou, 1 + NW));
  int bad = 0, checked = 0;
  for (int i = 0; i < NW; i++) {
    const float *gf = of[1 + i]->data, *gu = ou[1 + i]->data;
    CU_ASSERT_EQUAL(dy_tensor_numel(of[1 + i]), dy_tensor_numel(ou[1 + i]));
    for (int64_t e = 0; e < dy_tensor_numel(of[1 + i]); e++, checked++)
      if (!(fabs(gf[e] - gu[e]) <= 1e-4 * (1 + fabs(gu[e])))) {
        if (bad++ < 5)
          fprintf(stderr, "\n  d L / d %s [%lld]: fused %.7g, unfused %.7g", names[i],
                  (long long)e, gf[e], gu[e]);
      }
    /* the feeds: central differences of the fused program's L */
    if (i >= 4)
      continue;
    float *xv = in[i]->data;
    for (int64_t e = 0; e < dy_tensor_numel(in[i]); e++, checked++) {
      float x0 = xv[e];
      dy_tensor *lp[1 + NW] = {0}, *lm[1 + NW] = {0};
      xv[e] = x0 + 1e-3f;
      double hp = (double)xv[e] - x0;
      bool ok = run_all(p, in, 4, lp, 1 + NW);
      xv[e] = x0 - 1e-3f;
      double hm = x0 - (double)xv[e];
      ok = ok && run_all(p, in, 4, lm, 1 + NW);
      xv[e] = x0;
      double fd = ok ? ((double)((float *)lp[0]->data)[0] - ((float *)lm[0]->data)[0]) /
                           (hp + hm)
                     : NAN;
      if (!(fabs(fd - gf[e]) <= 1e-2 * (1 + fabs(fd)))) {
        if (bad++ < 5)
          fprintf(stderr, "\n  d L / d %s [%lld]: fused %.7g, finite difference %.7g",
                  names[i], (long long)e, gf[e], fd);
      }
      for (int j = 0; j < 1 + NW; j++) {
        dy_tensor_free(lp[j]);
        dy_tensor_free(lm[j]);
      }
    }
  }
  fprintf(stderr, "\n  %d gradient elements checked, %d differ\n", checked, bad);
  CU_ASSERT_EQUAL(bad, 0);
  for (int j = 0; j < 1 + NW; j++) {
    dy_tensor_free(of[j]);
    dy_tensor_free(ou[j]);
  }
  for (int i = 0; i < 4; i++)
    dy_tensor_free(in[i]);
  dy_program_free(p);
  dy_program_free(q);
}

/* ------------------------------------------------------------------ */

/* The gradient Programs' text is the same whichever compiler built
 * dy2stc: a rule that emits ops from two arguments of one call (whose
 * order C leaves unspecified) numbers vars one way under gcc and another
 * under clang. The text of every op case's gradient Program, of a
 * training step with each loss and of one with each optimizer (clipping
 * on) goes into one file compared with tests/golden/grad_programs.txt;
 * `make test` runs this under gcc and under clang. The golden is
 * rewritten with DY_UPDATE_GOLDENS=1 (review `git diff tests/golden`). */
#define GRAD_GOLDEN DY_SOURCE_DIR "/tests/golden/grad_programs.txt"
#define GRAD_GOT DY_BUILD_DIR "/grad_programs.txt"

typedef struct {
  char *s;
  size_t n, cap;
  bool oom;
} textbuf;

static void text_add(textbuf *t, const char *s) {
  size_t k = strlen(s);
  if (t->n + k + 1 > t->cap) {
    size_t cap = 2 * (t->n + k + 1);
    char *g = realloc(t->s, cap);
    if (!g) {
      t->oom = true;
      return;
    }
    t->s = g;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, k + 1);
  t->n += k;
}

/* "# title" then p's text (an error's message in its place when p is NULL) */
static void text_add_program(textbuf *t, const char *title, const dy_program *p,
                             const dy_error *err) {
  text_add(t, "# ");
  text_add(t, title);
  text_add(t, "\n");
  char *txt = p ? dy_program_to_text(p) : NULL;
  text_add(t, txt ? txt : "error: ");
  if (!txt)
    text_add(t, err && err->status ? err->msg : "cannot print");
  text_add(t, "\n");
  free(txt);
}

/* A linear layer pred = x w + b, then the loss, its backward ops and the
 * optimizer's: the whole training step. NULL with err set on failure. */
static dy_program *training_program(const dy_loss_spec *loss, const dy_optimizer_spec *opt,
                                    dy_error *err) {
  static const char *model =
      "program {\n"
      "  var x : f32[-1,3] feed 0\n"
      "  var w : f32[3,4] persistable trainable\n"
      "  var b : f32[4] persistable trainable\n"
      "  var z : f32[-1,4]\n"
      "  var pred : f32[-1,4]\n"
      "  block 0 parent -1 {\n"
      "    z = matmul(x, w) {transpose_x = 0, transpose_y = 0}  @step.c:1\n"
      "    pred = add(z, b)  @step.c:2\n"
      "  }\n"
      "  fetch 0 pred\n"
      "}\n";
  dy_program *p;
  if (dy_program_parse(model, &p, err))
    return NULL;
  int label, l, *params = NULL, *grads = NULL, n = 0;
  if (dy_program_append_loss(p, dy_program_find_var(p, "pred"), "label", loss, &label, &l,
                             err) ||
      dy_program_append_backward(p, l, &params, &grads, &n, err) ||
      dy_program_append_optimizer(p, opt, params, grads, n, err) || dy_verify(p, err)) {
    dy_program_free(p);
    p = NULL;
  }
  free(params);
  free(grads);
  return p;
}

static void test_gradient_programs_golden(void) {
  textbuf t = {0};
  int nl, n_cases = 0, n_failed = 0;
  const dy_op_case_list *const *lists = families(&nl);
  for (int l = 0; l < nl; l++)
    for (int i = 0; i < lists[l]->n; i++) {
      const dy_op_case *c = &lists[l]->cases[i];
      if (!has_gradient(c))
        continue;
      int n_wrt, which[8], grads[8];
      dy_program *p = gradient_program(c, which, &n_wrt, grads);
      char title[200];
      snprintf(title, sizeof title, "case %s (%s)", c->label, dy_op_name(c->kind));
      text_add_program(&t, title, p, NULL);
      n_cases++;
      n_failed += !p;
      dy_program_free(p);
    }
  CU_ASSERT_EQUAL(n_failed, 0);

  const dy_optimizer_spec sgd = {.kind = DY_OPT_SGD, .lr = 0.1};
  const struct {
    const char *what;
    dy_loss_spec spec;
  } losses[] = {
      {"cross_entropy", {.kind = DY_LOSS_CROSS_ENTROPY}},
      {"cross_entropy soft labels", {.kind = DY_LOSS_CROSS_ENTROPY, .soft_labels = true}},
      {"cross_entropy ignore_index 1, sum",
       {.kind = DY_LOSS_CROSS_ENTROPY, .reduction = DY_REDUCTION_SUM,
        .has_ignore_index = true, .ignore_index = 1}},
      {"mse", {.kind = DY_LOSS_MSE}},
      {"l1 sum", {.kind = DY_LOSS_L1, .reduction = DY_REDUCTION_SUM}},
      {"bce_with_logits", {.kind = DY_LOSS_BCE_WITH_LOGITS}},
  };
  const dy_loss_spec mse = {.kind = DY_LOSS_MSE};
  const struct {
    const char *what;
    dy_optimizer_spec spec;
  } opts[] = {
      {"sgd, clip_norm 1", {.kind = DY_OPT_SGD, .lr = 0.1, .clip_norm = 1.0}},
      {"sgd momentum nesterov weight_decay, clip_norm 1",
       {.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9, .nesterov = true,
        .weight_decay = 1e-4, .clip_norm = 1.0}},
      {"adam weight_decay, clip_norm 0.5",
       {.kind = DY_OPT_ADAM, .lr = 0.01, .weight_decay = 1e-4, .clip_norm = 0.5}},
      {"adamw, clip_norm 0.5",
       {.kind = DY_OPT_ADAMW, .lr = 0.01, .weight_decay = 0.01, .clip_norm = 0.5}},
  };
  int n_steps = (int)(sizeof losses / sizeof *losses + sizeof opts / sizeof *opts);
  for (int k = 0; k < n_steps; k++) {
    int nlo = (int)(sizeof losses / sizeof *losses);
    bool is_loss = k < nlo;
    const char *what = is_loss ? losses[k].what : opts[k - nlo].what;
    dy_error err = {0};
    dy_program *p = training_program(is_loss ? &losses[k].spec : &mse,
                                     is_loss ? &sgd : &opts[k - nlo].spec, &err);
    if (!p)
      fprintf(stderr, "\n  training step (%s): %s\n", what, err.msg);
    CU_ASSERT_PTR_NOT_NULL(p);
    char title[200];
    snprintf(title, sizeof title, "training step: %s loss, %s", is_loss ? what : "mse",
             is_loss ? "sgd" : what);
    text_add_program(&t, title, p, &err);
    dy_program_free(p);
  }
  CU_ASSERT_FALSE_FATAL(t.oom);
  fprintf(stderr, "\n  %d gradient Programs and %d training steps printed\n", n_cases,
          n_steps);

  dy_error err = {0};
  CU_ASSERT_FATAL(dy_write_file_atomic(GRAD_GOT, t.s, t.n, &err) == DY_OK);
  if (getenv("DY_UPDATE_GOLDENS")) {
    DY_ASSERT_OK(dy_write_file_atomic(GRAD_GOLDEN, t.s, t.n, &err), &err);
    fprintf(stderr, "\n  wrote %s\n", GRAD_GOLDEN);
    free(t.s);
    return;
  }
  char *want = dy_test_slurp(GRAD_GOLDEN);
  if (!want)
    fprintf(stderr, "\n  no golden %s (DY_UPDATE_GOLDENS=1 writes it)\n", GRAD_GOLDEN);
  bool same = want && strcmp(want, t.s) == 0;
  if (want && !same) {
    fprintf(stderr, "\n  the gradient Programs differ from their golden; the diff's start:\n");
    dy_test_sh(NULL, "diff -u '%s' '%s' | head -60 >&2", GRAD_GOLDEN, GRAD_GOT);
    fprintf(stderr, "  (a rule emitting from two arguments of one call? "
                    "scripts/check_emit_order.py)\n  if the change is deliberate: "
                    "DY_UPDATE_GOLDENS=1 %s/test_grad\n", DY_BUILD_DIR);
  }
  CU_ASSERT(same);
  free(want);
  free(t.s);
}

void dy_test_register(void) {
  DY_SUITE("grad");
  DY_TEST(test_gradient_errors);
  DY_TEST(test_rules_against_finite_differences);
  DY_TEST(test_program_mlp_gradients);
  DY_TEST(test_append_backward);
  DY_TEST(test_shape_gradients_by_hand);
  DY_TEST(test_fused_ops_gradients);
  DY_TEST(test_gradient_programs_golden);
}
