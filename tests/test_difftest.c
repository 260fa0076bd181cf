/* test_difftest.c - the differential tester (tests/difftest.c) as a suite.
 *
 * Random valid Programs, each run eagerly and four more ways (static
 * executor, compiled at -O0, at the default level, with --threads 2 and
 * the 3x3 stride-1 convs as Winograd F(2x2/4x4/6x6) by seed), all
 * equal to eager within the ops' tolerance. The bounded run checks seeds
 * 1..48 (a few minutes of cc on two cores at most); a long run is
 *
 *   DY_DIFFTEST_PROGRAMS=2000 DY_DIFFTEST_SEED=1000 build/tests/test_difftest
 *
 * (scripts/difftest.sh N [SEED] does that, niced; DY_DIFFTEST_KEEP=1 keeps
 * the scratch files of a run that found nothing). A mismatch is minimised
 * and printed as text IR with its seed and the path that differs; a fixed
 * bug's seed joins `regressions` below, so that it stays fixed.
 *
 * The suite also checks the tester itself: the programs exercise fusion
 * and in-place reuse in the memory plan (else the run proves little), and a
 * planted wrong reference is reported on every path.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "difftest.h"
#include "dy_test.h"

/* difftest_scratch/<pid>: a long run beside ctest's keeps its own files
 * (removed when nothing differed) */
static char scratch[512];
#define PER_BATCH 16

/* Seeds of programs that found a bug (fixed since): they run every time,
 * all four ways.
 *   20263  -O0: add(flatten(x), x) in place over x was refused by the
 *          emitter ("output shares memory with input"): the in-place rule
 *          knew the input itself, not a view of the same bytes
 *          (codegen/program/kernel.c) */
static const uint64_t regressions[] = {20263, 0};

/* The minimised programs of those seeds: each compiles at -O0 and at the
 * default level (the seeds above also run them). */
static const char *const regression_ir[] = {
    /* 20263 */
    "program {\n"
    "  var x0 : f32[-1,1] feed 0\n"
    "  var v1 : f32[-1,1]\n"
    "  var v2 : f32[-1,1]\n"
    "  var v3 : f32[-1,1]\n"
    "  var v4 : f32[-1,1]\n"
    "  var v5 : f32[-1,1]\n"
    "  block 0 parent -1 {\n"
    "    v1 = sigmoid(x0)  @difftest:1\n"
    "    v2 = asin(v1)  @difftest:2\n"
    "    v3 = flatten(v1) {start_axis = 1, stop_axis = -1}  @difftest:3\n"
    "    v4 = add(v3, v1)  @difftest:4\n"
    "    v5 = scale(v4) {scale = 1.0, bias = 0.0, bias_after_scale = 1}  @difftest:5\n"
    "  }\n"
    "  fetch 0 v2\n"
    "  fetch 1 v5\n"
    "}\n",
};

static void test_regression_programs(void) {
  for (size_t i = 0; i < sizeof regression_ir / sizeof regression_ir[0]; i++)
    for (int level = 0; level <= 2; level += 2) {
      dy_program *p = dy_test_parse_ok(regression_ir[i]);
      CU_ASSERT_PTR_NOT_NULL_FATAL(p);
      dy_compile_options o = dy_compile_options_default();
      o.passes.opt_level = level;
      dy_codegen_output co = {0};
      dy_error err = {0};
      DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 1, &err), &err);
      DY_ASSERT_OK(dy_compile_program(p, &o, &co, NULL, &err), &err);
      dy_codegen_output_free(&co);
      dy_program_free(p);
    }
}

static int64_t env_int(const char *name, int64_t dflt) {
  const char *s = getenv(name);
  return s && *s ? strtoll(s, NULL, 10) : dflt;
}

/* For a compiled mode's mismatch: the first op whose compiled result
 * leaves the executor's (dy_localize), printed. */
static void localize(const dt_prog *g, int mode) {
  dy_error err = {0};
  dy_program *p = dt_program(g, &err);
  dy_tensor *in[DT_MAX_VALS];
  int n = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (g->v[v].kind == DT_FEED)
      in[n++] = g->v[v].t;
  dy_compile_options o = dy_compile_options_default();
  o.name = "localize";
  if (p && dy_program_bound_sym(p, "batch", g->max_batch, &err))
    fprintf(stderr, "difftest: --max-batch: %s\n", err.msg);
  o.passes.opt_level = mode == DT_O0 ? 0 : 2;
  o.threads = mode == DT_T2 ? 2 : 0;
  dy_localize_result r;
  double tol = dt_tol(g);
  if (!p || dy_localize(p, &o, in, tol, tol, -1, &r, &err))
    fprintf(stderr, "difftest: localize: %s\n", err.msg);
  else if (!r.found)
    fprintf(stderr, "difftest: localize: the %d op results agree with the executor\n",
            r.n_compared);
  else
    fprintf(stderr,
            "difftest: first divergence at %s:%d: op %d (%s) [%s], var '%s', %lld of %lld "
            "elements; [%lld] expected %.9g, got %.9g\n",
            r.file, r.line, r.op_id, dy_op_name(r.kind), r.srcs, r.var, (long long)r.n_bad,
            (long long)r.n_elements, (long long)r.index[0], r.expected[0], r.got[0]);
  dy_program_free(p);
}

/* Check seeds [first, first + n) in batches; returns the mismatches
 * (each minimised and printed). *n_ops gets the ops generated. */
static int run_seeds(const uint64_t *list, uint64_t first, int n, int max_ops, int *n_ops) {
  int mismatches = 0;
  *n_ops = 0;
  for (int base = 0; base < n; base += PER_BATCH) {
    dt_prog *progs[PER_BATCH];
    int bad[PER_BATCH], m = 0;
    for (int i = base; i < n && m < PER_BATCH; i++) {
      uint64_t seed = list ? list[i] : first + (uint64_t)i;
      progs[m] = dt_generate(seed, max_ops);
      if (!progs[m]) {
        CU_FAIL("out of memory");
        continue;
      }
      *n_ops += progs[m]->n_ops;
      m++;
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/run", scratch);
    bool ok = dt_check(progs, m, DT_ALL, dir, bad, stderr);
    CU_ASSERT(ok);
    for (int i = 0; i < m; i++) {
      if (!bad[i])
        continue;
      mismatches++;
      int mode = bad[i] & -bad[i];
      fprintf(stderr, "\ndifftest: seed %llu differs (%s%s); the program:\n",
              (unsigned long long)progs[i]->seed, dt_mode_name(mode),
              bad[i] != mode ? " and more" : "");
      dt_print(progs[i], stderr);
      char mdir[600];
      snprintf(mdir, sizeof mdir, "%s/minimise", scratch);
      dt_prog *small = dt_minimise(progs[i], mode, mdir);
      const dt_prog *shown = small ? small : progs[i];
      if (small) {
        fprintf(stderr, "difftest: minimised (%d ops, still differs on %s):\n", small->n_ops,
                dt_mode_name(mode));
        dt_print(small, stderr);
      }
      if (mode != DT_EXEC)
        localize(shown, mode);
      dt_free(small);
    }
    for (int i = 0; i < m; i++)
      dt_free(progs[i]);
    if (n > 48) /* a long run: progress */
      fprintf(stderr, "difftest: %d of %d programs checked, %d mismatches\n",
              base + m, n, mismatches);
  }
  return mismatches;
}

static void test_bounded_run(void) {
  int n = (int)env_int("DY_DIFFTEST_PROGRAMS", 48);
  uint64_t first = (uint64_t)env_int("DY_DIFFTEST_SEED", 1);
  int max_ops = (int)env_int("DY_DIFFTEST_MAX_OPS", 30);
  int n_ops = 0;
  int bad = run_seeds(NULL, first, n, max_ops, &n_ops);
  printf("\ndifftest: %d programs checked (seeds %llu..%llu, %d ops), 4 ways each, %d "
         "mismatches\n",
         n, (unsigned long long)first, (unsigned long long)(first + (uint64_t)n - 1), n_ops, bad);
  CU_ASSERT_EQUAL(bad, 0);
  if (bad == 0 && !env_int("DY_DIFFTEST_KEEP", 0))
    dy_test_sh(NULL, "rm -rf '%s'", scratch);
}

static void test_regressions(void) {
  int n = 0, n_ops = 0;
  while (n < (int)(sizeof regressions / sizeof regressions[0]) && regressions[n])
    n++;
  if (n)
    CU_ASSERT_EQUAL(run_seeds(regressions, 0, n, 30, &n_ops), 0);
}

/* The programs are what the tester promises: they verify, reach fusion
 * (fused ops after the default pipeline) and in-place reuse, and use every
 * op kind they may. */
static void test_generator_reaches(void) {
  bool kinds[DY_OP_COUNT] = {0};
  int fused = 0, in_place = 0, n_kinds = 0, long_chains = 0, quant = 0;
  for (uint64_t seed = 1; seed <= 96; seed++) {
    dt_prog *g = dt_generate(seed, 30);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    long_chains += g->n_ops >= 10;
    for (int k = 0; k < g->n_ops; k++) {
      quant += g->ops[k].kind >= DY_OP_QUANTIZE_LINEAR && g->ops[k].kind <= DY_OP_CONV_INTEGER;
      if (!kinds[g->ops[k].kind]) {
        kinds[g->ops[k].kind] = true;
        n_kinds++;
      }
    }
    dy_error err = {0};
    dy_program *p = dt_program(g, &err);
    if (!p)
      fprintf(stderr, "\n  seed %llu: %s\n", (unsigned long long)seed, err.msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    dy_compile_options o = dy_compile_options_default();
    DY_ASSERT_OK(dy_program_bound_sym(p, "batch", g->max_batch, &err), &err);
    dy_codegen_output co = {0};
    dy_compile_report rep;
    DY_ASSERT_OK(dy_compile_program(p, &o, &co, &rep, &err), &err);
    for (int k = 0; k < p->blocks[0]->n_ops; k++)
      fused += (dy_op_info_of(p->blocks[0]->ops[k]->kind)->flags & DY_OPF_FUSED) != 0;
    in_place += rep.mem.n_in_place;
    dy_codegen_output_free(&co);
    dy_program_free(p);
    dt_free(g);
  }
  printf("\ndifftest generator, seeds 1..96: %d op kinds, %d fused ops, %d in-place "
         "writes, %d programs of 10+ ops, %d quant-family ops; not generated:",
         n_kinds, fused, in_place, long_chains, quant);
  for (int k = 0; k < DY_OP_COUNT; k++)
    if (!kinds[k])
      printf(" %s", dy_op_name((dy_op_kind)k));
  printf("\n");
  /* every op but the fused ones (the passes make them: counted above),
   * the in-place training family, the control-flow ops and the ops whose
   * size is set at run time (the harness sizes outputs by inference:
   * test_dynsize runs them compiled), the custom op, whose kernel is the
   * user's (test_paddle's test_custom_gap), and the LoD ops (ops_lod.def,
   * from sequence_pool to crf_decoding: an operand must be valid offsets,
   * which random data is not; test_lod and op_cases_lod.c run them both
   * ways) */
  for (int k = 0; k < DY_OP_COUNT; k++) {
    unsigned f = dy_op_info_of((dy_op_kind)k)->flags;
    bool lod = k >= DY_OP_SEQUENCE_POOL && k <= DY_OP_CRF_DECODING;
    if (!(f & (DY_OPF_FUSED | DY_OPF_INPLACE | DY_OPF_SETS_SIZE)) && k != DY_OP_COND &&
        k != DY_OP_WHILE && k != DY_OP_CUSTOM && !lod)
      CU_ASSERT(kinds[k]);
  }
  CU_ASSERT(fused >= 20);
  CU_ASSERT(in_place >= 10);
  CU_ASSERT(long_chains >= 20);
  CU_ASSERT(quant >= 40);
  /* the same seed is the same program */
  dt_prog *a = dt_generate(7, 30), *b = dt_generate(7, 30);
  CU_ASSERT_EQUAL(a->n_ops, b->n_ops);
  for (int k = 0; k < a->n_ops && k < b->n_ops; k++)
    CU_ASSERT_EQUAL(a->ops[k].kind, b->ops[k].kind);
  dt_free(a);
  dt_free(b);
}

/* A wrong eager reference is reported on all four paths. */
static void test_detects_a_difference(void) {
  dt_prog *g = dt_generate(3, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  dy_tensor *ref = g->v[g->fetch[0]].t;
  if (ref->type.dtype == DY_F32)
    ((float *)ref->data)[0] += 0.5f;
  else if (ref->type.dtype == DY_I64)
    ((int64_t *)ref->data)[0] += 1;
  else
    ((uint8_t *)ref->data)[0] ^= 1;
  int bad = 0;
  char dir[600];
  snprintf(dir, sizeof dir, "%s/planted", scratch);
  CU_ASSERT(dt_check(&g, 1, DT_ALL, dir, &bad, NULL));
  CU_ASSERT_EQUAL(bad, DT_ALL);
  dt_free(g);
}

/* A C compiler with a planted bug - the generated tanh kernels compute a
 * sigmoid - is found, minimised and localised: the minimised program keeps
 * a tanh and little else, and dy_localize names that tanh. */
static void test_minimise_planted(void) {
  char cc[600], dir[600];
  snprintf(cc, sizeof cc, "%s/cc_planted.sh", scratch);
  FILE *f = fopen(cc, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("#!/bin/sh\n"
        "# cc, but the generated tanh kernels compute a sigmoid\n"
        "for a; do case $a in *.c) sed -i 's/DY_ACT_LOOP(dy_vtanh)/DY_ACT_LOOP(dy_vsigmoid)/' "
        "\"$a\";; esac; done\n"
        "exec cc \"$@\"\n",
        f);
  fclose(f);
  chmod(cc, 0755);
  /* the first seed whose program has a tanh that an output depends on,
   * among ten ops or more */
  dt_prog *g = NULL;
  for (uint64_t seed = 1; seed < 400 && !g; seed++) {
    g = dt_generate(seed, 30);
    bool tanh = false, live[DT_MAX_VALS] = {0};
    for (int f = 0; g && f < g->n_fetch; f++)
      live[g->fetch[f]] = true;
    for (int k = g ? g->n_ops - 1 : -1; k >= 0; k--)
      if (live[g->ops[k].out]) {
        tanh |= g->ops[k].kind == DY_OP_TANH;
        for (int i = 0; i < g->ops[k].n_in; i++)
          live[g->ops[k].in[i]] = true;
      }
    if (g && !(tanh && g->n_ops >= 10)) {
      dt_free(g);
      g = NULL;
    }
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  const char *old = getenv("CC");
  char *saved = old ? strdup(old) : NULL;
  setenv("CC", cc, 1);
  int bad = 0;
  snprintf(dir, sizeof dir, "%s/planted_cc", scratch);
  CU_ASSERT(dt_check(&g, 1, DT_EXEC | DT_O0, dir, &bad, NULL));
  CU_ASSERT_EQUAL(bad, DT_O0); /* the executor is right, the C is not */
  dt_prog *small = dt_minimise(g, DT_O0, dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(small);
  bool tanh = false;
  for (int k = 0; k < small->n_ops; k++)
    tanh |= small->ops[k].kind == DY_OP_TANH;
  if (small->n_ops > 2 || !tanh) {
    fprintf(stderr, "\n  from %d ops, minimised to:\n", g->n_ops);
    dt_print(small, stderr);
  }
  CU_ASSERT(tanh);
  CU_ASSERT(small->n_ops <= 2);
  CU_ASSERT(small->n_ops < g->n_ops);
  /* dy_localize (the same cc) names the tanh */
  dy_error err = {0};
  dy_program *p = dt_program(small, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *in[8];
  int n = 0;
  for (int v = 0; v < small->n_vals && n < 8; v++)
    if (small->v[v].kind == DT_FEED)
      in[n++] = small->v[v].t;
  dy_compile_options o = dy_compile_options_default();
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", small->max_batch, &err), &err);
  o.passes.opt_level = 0;
  dy_localize_result r;
  DY_ASSERT_OK(dy_localize(p, &o, in, 1e-4, 1e-5, -1, &r, &err), &err);
  CU_ASSERT(r.found);
  CU_ASSERT_EQUAL(r.kind, DY_OP_TANH);
  CU_ASSERT_STRING_EQUAL(r.file, "difftest");
  dy_program_free(p);
  if (saved)
    setenv("CC", saved, 1);
  else
    unsetenv("CC");
  free(saved);
  dt_free(small);
  dt_free(g);
}

void dy_test_register(void) {
  mkdir(DY_BUILD_DIR "/difftest_scratch", 0777);
  snprintf(scratch, sizeof scratch, DY_BUILD_DIR "/difftest_scratch/%ld", (long)getpid());
  mkdir(scratch, 0777);
  DY_SUITE("difftest");
  DY_TEST(test_generator_reaches);
  DY_TEST(test_detects_a_difference);
  DY_TEST(test_minimise_planted);
  DY_TEST(test_regression_programs);
  DY_TEST(test_regressions);
  DY_TEST(test_bounded_run);
}
