/* test_block_passes.c - sub-blocks first-class for the passes and the tools
 * (issue 28, item 3): fusion and loop-invariant hoisting inside a while
 * body, `check --localize` inside a loop body with the trip, `bench
 * --per-op` on ops inside branches and loops with their run counts.
 *
 * The loop below carries (i, h) for n trips: h = tanh(relu(h w + b) *
 * exp(c) * (6 / d)). Its matmul + add + relu fuse in the body; exp(c) reads
 * only a capture and is hoisted before the while; 6 / d (i64) is
 * invariant too but stays, since with n = 0 and d = 0 it must not run. The
 * results are compared before and after the passes on the static executor
 * and against the compiled code (dy_localize, every op of every block, each
 * trip), for 0, 1 and 3 trips.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define WORK DY_BUILD_DIR "/block_passes"

static const char *loop_text =
    "program {\n"
    "  var x : f32[-1,3] feed 0\n"
    "  var n : f32[1] feed 1\n"
    "  var c : f32[1] feed 2\n"
    "  var d : i64[1] feed 3\n"
    "  var w : f32[3,3] persistable = [0.5, 0.1, 0.0, -0.2, 0.5, 0.1, 0.0, 0.3, 0.5]\n"
    "  var b : f32[3] persistable = [0.1, -0.2, 0.3]\n"
    "  var one : f32[1] persistable = [1.0]\n"
    "  var zero : f32[1] persistable = [0.0]\n"
    "  var six : i64[1] persistable = [6]\n"
    "  var i_0 : f32[1]\n"
    "  var h_0 : f32[-1,3]\n"
    "  var go : bool[1]\n"
    "  var i_1 : f32[1]\n"
    "  var h_1 : f32[-1,3]\n"
    "  var mm : f32[-1,3]\n"
    "  var ab : f32[-1,3]\n"
    "  var r : f32[-1,3]\n"
    "  var e : f32[1]\n"
    "  var q : i64[1]\n"
    "  var qf : f32[1]\n"
    "  var s : f32[1]\n"
    "  var g : f32[-1,3]\n"
    "  var t : f32[-1,3]\n"
    "  var i_2 : f32[1]\n"
    "  var i_out : f32[1]\n"
    "  var h_out : f32[-1,3]\n"
    "  block 0 parent -1 {\n"
    "    i_out, h_out = while(zero, x, n, w, b, c, six, d, one) {n_carried = 2, "
    "cond_block = 1, body_block = 2, max_iterations = 0}  @loop.c:1\n"
    "  }\n"
    "  block 1 parent 0 (i_0, h_0) {\n"
    "    go = less(i_0, n)  @loop.c:2\n"
    "    yield go\n"
    "  }\n"
    "  block 2 parent 0 (i_1, h_1) {\n"
    "    mm = matmul(h_1, w) {transpose_x = 0, transpose_y = 0}  @loop.c:3\n"
    "    ab = add(mm, b)  @loop.c:3\n"
    "    r = relu(ab)  @loop.c:3\n"
    "    e = exp(c)  @loop.c:4\n"
    "    q = div(six, d)  @loop.c:5\n"
    "    qf = cast(q) {dtype = 0}  @loop.c:5\n"
    "    s = mul(e, qf)  @loop.c:6\n"
    "    g = mul(r, s)  @loop.c:6\n"
    "    t = tanh(g)  @loop.c:7\n"
    "    i_2 = add(i_1, one)  @loop.c:8\n"
    "    yield i_2, t\n"
    "  }\n"
    "  fetch 0 h_out\n"
    "}\n";

/* The inputs for `trips` trips with divisor d. */
static void make_inputs(float trips, int64_t d, dy_tensor **in) {
  static const float x[] = {0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f};
  in[0] = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 3}, x);
  in[1] = dy_tensor_from_data(DY_F32, 1, (int64_t[]){1}, &trips);
  in[2] = dy_tensor_from_data(DY_F32, 1, (int64_t[]){1}, (const float[]){0.1f});
  in[3] = dy_tensor_from_data(DY_I64, 1, (int64_t[]){1}, &d);
}

static void free_inputs(dy_tensor **in) {
  for (int i = 0; i < 4; i++)
    dy_tensor_free(in[i]);
}

static dy_compile_options options(void) {
  dy_compile_options o = dy_compile_options_default();
  o.name = "loop";
  o.target = "generic"; /* quicker to build, as right */
  o.cflags = "-O1";
  return o;
}

/* The while op of block 0 (there is one). */
static const dy_op *the_while(const dy_program *p) {
  for (int k = 0; k < p->blocks[0]->n_ops; k++)
    if (p->blocks[0]->ops[k]->kind == DY_OP_WHILE)
      return p->blocks[0]->ops[k];
  return NULL;
}

static int count_in(const dy_program *p, int b, dy_op_kind k) {
  int n = 0;
  for (int i = 0; i < p->blocks[b]->n_ops; i++)
    n += p->blocks[b]->ops[i]->kind == k;
  return n;
}

/* The first op of kind k in block b, or NULL. */
static const dy_op *first_in(const dy_program *p, int b, dy_op_kind k) {
  for (int i = 0; i < p->blocks[b]->n_ops; i++)
    if (p->blocks[b]->ops[i]->kind == k)
      return p->blocks[b]->ops[i];
  return NULL;
}

static dy_tensor *run(const dy_program *p, dy_tensor **in) {
  dy_tensor *out = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 4, &out, 1, &err), &err);
  return out;
}

/* The optimised loop: fused in its body, exp hoisted, the div kept; and
 * --print-after fuse-matmul shows the fused op inside the body. */
static void test_fused_and_hoisted_in_the_body(void) {
  dy_program *p = dy_test_parse_ok(loop_text), *orig = dy_test_parse_ok(loop_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
  char *printed = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&printed, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  dy_pass_options o = {.opt_level = 2, .verify_each = 1, .print_after = "fuse-matmul",
                       .print_to = f};
  dy_error err = {0};
  DY_ASSERT_OK(dy_run_pipeline(p, &o, &err), &err);
  fclose(f);
  /* the printed Program after fuse-matmul: the fused op reads the body's
   * carried h_1, inside "block 2 parent 0 (i_1, h_1) {" */
  const char *body = strstr(printed, "block 2 parent 0 (i_1, h_1) {");
  CU_ASSERT_PTR_NOT_NULL_FATAL(body);
  const char *fused = strstr(body, "r = fused_matmul(h_1, w, b)");
  const char *end = strstr(body, "yield");
  CU_ASSERT(fused != NULL && end != NULL && fused < end);
  CU_ASSERT(strstr(printed, "act = \"relu\"") != NULL);
  free(printed);

  const dy_op *w = the_while(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  int body_b = (int)dy_while_attrs_get(w).body_block;
  CU_ASSERT_EQUAL(count_in(p, body_b, DY_OP_FUSED_MATMUL), 1);
  CU_ASSERT_EQUAL(count_in(p, body_b, DY_OP_MATMUL), 0);
  CU_ASSERT_EQUAL(count_in(p, body_b, DY_OP_EXP), 0); /* hoisted ... */
  CU_ASSERT_EQUAL(count_in(p, 0, DY_OP_EXP), 1);      /* ... before the while */
  CU_ASSERT_EQUAL(count_in(p, body_b, DY_OP_DIV), 1); /* may fail: stays */
  CU_ASSERT_EQUAL(count_in(p, 0, DY_OP_DIV), 0);

  /* the same results before and after, for 3, 1 and 0 trips; 0 trips with
   * a zero divisor too (the kept div never runs) */
  const float trips[] = {3, 1, 0, 0};
  const int64_t divs[] = {2, 3, 2, 0};
  for (int c = 0; c < 4; c++) {
    dy_tensor *in[4];
    make_inputs(trips[c], divs[c], in);
    dy_tensor *a = run(orig, in), *z = run(p, in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    for (int64_t i = 0; i < 6; i++)
      CU_ASSERT(fabsf(((float *)a->data)[i] - ((float *)z->data)[i]) <= 1e-6f);
    if (trips[c] == 0) /* h_out = x */
      CU_ASSERT(memcmp(a->data, in[0]->data, 6 * sizeof(float)) == 0);
    dy_tensor_free(a);
    dy_tensor_free(z);
    free_inputs(in);
  }
  dy_program_free(p);
  dy_program_free(orig);
}

/* The runs of a zero-trip loop with a zero divisor: the executor on the
 * optimised Program succeeds (the div was not hoisted), the executor on a
 * Program where it is (done by hand) fails: the rule guards something. */
static void test_hoisting_a_failing_op_would_fail(void) {
  dy_program *p = dy_test_parse_ok(loop_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  const dy_op *w = the_while(p);
  int body_b = (int)dy_while_attrs_get(w).body_block;
  int k = -1;
  for (int i = 0; i < p->blocks[body_b]->n_ops; i++)
    if (p->blocks[body_b]->ops[i]->kind == DY_OP_DIV)
      k = i;
  CU_ASSERT_FATAL(k >= 0);
  CU_ASSERT_FATAL(dy_block_move_op(p, body_b, k, 0, 0));
  CU_ASSERT_FATAL(dy_program_sync_captures(p));
  dy_error err = {0};
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  dy_tensor *in[4], *out = NULL;
  make_inputs(0, 0, in);
  CU_ASSERT_NOT_EQUAL(dy_executor_run(p, in, 4, &out, 1, &err), DY_OK);
  CU_ASSERT(strstr(err.msg, "div") != NULL);
  dy_tensor_free(out);
  free_inputs(in);
  dy_program_free(p);
}

/* The compiled code agrees with the executor on every op of every block,
 * each trip compared. */
static void test_compiled_agrees_in_every_trip(void) {
  const float trips[] = {3, 0};
  const int64_t divs[] = {2, 0};
  for (int c = 0; c < 2; c++) {
    dy_program *p = dy_test_parse_ok(loop_text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    dy_tensor *in[4];
    make_inputs(trips[c], divs[c], in);
    dy_compile_options o = options();
    dy_localize_result r;
    dy_error err = {0};
    DY_ASSERT_OK(dy_localize(p, &o, in, 1e-5, 1e-6, -1, &r, &err), &err);
    CU_ASSERT(!r.found);
    /* block 0: the hoisted exp and the while; then per trip the
     * condition's less and the body's results (at least fused_matmul,
     * div, cast, the product, tanh, i's add); the condition once more */
    bool enough = trips[c] == 3 ? r.n_compared >= 2 + 3 * 6 + 4
                                : r.n_compared >= 2 + 1 && r.n_compared < 2 + 6;
    CU_ASSERT(enough);
    printf("(%d results compared) ", r.n_compared);
    free_inputs(in);
    dy_program_free(p);
  }
}

/* A wrong kernel inside the body, on trip 1 only (or every trip): named,
 * with its block, its loop and the trip. */
static void test_localize_names_the_trip(void) {
  /* the fused op's id in the compiled Program (the same every time) */
  dy_program *p = dy_test_parse_ok(loop_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_compile_options o = options();
  dy_codegen_output co = {0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_compile_program(p, &o, &co, NULL, &err), &err);
  const dy_op *w = the_while(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  int body_b = (int)dy_while_attrs_get(w).body_block, loop_id = w->id;
  const dy_op *f = first_in(p, body_b, DY_OP_FUSED_MATMUL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  int fused_id = f->id;
  dy_codegen_output_free(&co);
  dy_program_free(p);

  const int64_t plant_trip[] = {1, -1}, want_trip[] = {1, 0};
  for (int c = 0; c < 2; c++) {
    p = dy_test_parse_ok(loop_text);
    dy_tensor *in[4];
    make_inputs(3, 2, in);
    dy_localize_result r;
    DY_ASSERT_OK(dy_localize_planted(p, &o, in, 1e-5, 1e-6, fused_id, plant_trip[c], &r, &err),
                 &err);
    CU_ASSERT(r.found);
    CU_ASSERT_EQUAL(r.op_id, fused_id);
    CU_ASSERT_EQUAL(r.kind, DY_OP_FUSED_MATMUL);
    CU_ASSERT_EQUAL(r.block, body_b);
    CU_ASSERT_EQUAL(r.loop_op, loop_id);
    CU_ASSERT_EQUAL(r.trip, want_trip[c]);
    CU_ASSERT_STRING_EQUAL(r.var, "r");
    CU_ASSERT_EQUAL(r.line, 3);
    CU_ASSERT(strstr(r.srcs, "loop.c:3 matmul") != NULL);
    CU_ASSERT_EQUAL(r.n_bad, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.got[0] - r.expected[0], 1.0, 1e-4);
    free_inputs(in);
    dy_program_free(p);
  }
}

/* Runs per op: the body's once a trip, the condition's once more, block
 * 0's once. */
static void test_op_runs(void) {
  dy_program *p = dy_test_parse_ok(loop_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *in[4];
  make_inputs(3, 2, in);
  int n = dy_program_count_ops(p);
  int64_t *runs = calloc((size_t)n, sizeof *runs);
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_op_runs(p, in, runs, &err), &err);
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      int64_t want = b == 0 ? 0 /* the while: its blocks' ops run */ : b == 1 ? 4 : 3;
      CU_ASSERT_EQUAL(runs[dy_codegen_op_slot(p, b, k)], want);
    }
  free(runs);
  free_inputs(in);
  dy_program_free(p);
}

/* The rows of `bench --per-op` in the log, for block `block`: the run
 * counts ("runs N x"), each into counts (at most cap); returns how many. */
static int rows_of_block(const char *log, int block, int64_t *counts, int cap) {
  char head[64];
  snprintf(head, sizeof head, " block %d (of op", block);
  const char *s = strstr(log, head);
  if (!s)
    return -1;
  s = strchr(s, '\n');
  int n = 0;
  while (s && s[1] == ' ' && s[2] == ' ') { /* the op rows under it */
    const char *r = strstr(s, " runs ");
    const char *eol = strchr(s + 1, '\n');
    if (!r || (eol && r > eol))
      break;
    if (n < cap)
      counts[n] = strtoll(r + 6, NULL, 10);
    n++;
    s = eol;
  }
  return n;
}

/* bench --per-op on samples/control: early_exit's cond (the taken branch's
 * ops run once, the other's none) and jacobi's while (the body's ops once
 * a trip, the condition's once more). */
static void test_bench_per_op_in_blocks(void) {
  int rc = dy_test_sh(NULL, "rm -rf %s && mkdir -p %s && %s/../samples/early_exit --out %s "
                      "> /dev/null && %s/../samples/jacobi --out %s > /dev/null",
                      WORK, WORK, DY_BUILD_DIR, WORK, DY_BUILD_DIR, WORK);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = dy_test_sh(WORK "/ee.log", "%s bench %s/early_exit.dymodel --runs 3 --per-op -q "
                  "--target generic", DY2STC_PATH, WORK);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *log = dy_test_slurp(WORK "/ee.log");
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  int64_t c[16];
  /* the then branch yields the head's logits (no op); the else branch
   * holds the deep conv and linear: both ran once or not at all */
  CU_ASSERT(strstr(log, " block 1 (of op") != NULL);
  int n = rows_of_block(log, 2, c, 16);
  CU_ASSERT(n >= 2);
  for (int i = 1; i < n && i < 16; i++)
    CU_ASSERT_EQUAL(c[i], c[0]);
  CU_ASSERT(n >= 1 && (c[0] == 0 || c[0] == 1));
  CU_ASSERT(strstr(log, "fused_conv2d") != NULL && strstr(log, "per op kind (sums):") != NULL);
  free(log);

  rc = dy_test_sh(WORK "/jacobi.log", "%s bench %s/jacobi.dymodel --runs 3 --per-op -q "
                  "--target generic", DY2STC_PATH, WORK);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  log = dy_test_slurp(WORK "/jacobi.log");
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  int64_t cc[16], bc[16];
  int nc = rows_of_block(log, 1, cc, 16), nb = rows_of_block(log, 2, bc, 16);
  CU_ASSERT(nc >= 1 && nb >= 1);
  for (int i = 0; i < nc && i < 16; i++)
    CU_ASSERT_EQUAL(cc[i], cc[0]);
  for (int i = 0; i < nb && i < 16; i++)
    CU_ASSERT_EQUAL(bc[i], bc[0]);
  CU_ASSERT(nb >= 1 && bc[0] >= 2);          /* the solver iterates */
  CU_ASSERT(nc >= 1 && cc[0] == bc[0] + 1);  /* the condition: once more */
  free(log);
}

void dy_test_register(void) {
  DY_SUITE("block_passes");
  DY_TEST(test_fused_and_hoisted_in_the_body);
  DY_TEST(test_hoisting_a_failing_op_would_fail);
  DY_TEST(test_compiled_agrees_in_every_trip);
  DY_TEST(test_localize_names_the_trip);
  DY_TEST(test_op_runs);
  DY_TEST(test_bench_per_op_in_blocks);
}
