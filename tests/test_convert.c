/* test_convert.c - the source converter (compiler/cfront/cconvert.c): `dy2stc
 * convert` and what `dy2stc compile net.c` does with its output.
 *
 *   - each tests/convert/CASE.c converts to exactly CASE.out.c (before/after
 *     pairs like the pass tests' .ir pairs; DY_UPDATE_GOLDENS=1 rewrites them), and
 *     that output compiles warning-free (-std=c11 -Wall -Wextra -pedantic
 *     -Werror) into tests/convert/harness.c, which runs fwd on five inputs
 *     taking every branch and loop counts 0, 1 and many: the converted code
 *     run eagerly prints exactly what the original prints, and the same run
 *     through dy_to_static (one trace, the static executor for each input)
 *     prints it too, while the original fails there at its dy_bool line;
 *   - the same with --line-directives (what compile traces): identical
 *     results, and errors still name the user's lines;
 *   - branches giving a variable different types (mismatch.c): dy_cond's
 *     error while tracing, at the user's if line;
 *   - each refusal (tests/convert/refuse_*.c) exits 1 with exactly the
 *     `file:line:col: error: reason`, line and caret of refuse_*.err;
 *   - `dy2stc compile` of a C model whose forward has a tensor if and while
 *     builds an executable equal to the eager run on inputs taking both
 *     branches and 0, 1 and many trips; so do the three control-flow
 *     samples of samples/static/ (early_exit.c, decode.c, solver.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define CASES DY_SOURCE_DIR "/tests/convert"
#define WORK DY_BUILD_DIR "/convert"
#define LOG WORK "/last.log"

#define sh(...) dy_test_sh(LOG, __VA_ARGS__)

static const char *const constructs[] = {"if_else", "if_only", "while_count",
                                         "for_loop", "nested", "plain_c",
                                         "early_return", "break_loop", "else_if"};
static const char *const refusals[] = {
    "refuse_goto",      "refuse_address", "refuse_c_var_after", "refuse_c_var_loop",
    "refuse_item",      "refuse_and",     "refuse_do_while",    "refuse_array",
    "refuse_loop_return", "refuse_break_plain_if"};

static void show_log(void) {
  char *log = dy_test_slurp(LOG);
  fprintf(stderr, "\n  output:\n%s\n", log ? log : "(none)");
  free(log);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* got == the file at want_path (rewritten with DY_UPDATE_GOLDENS=1). */
static bool same_as_golden(const char *got_path, const char *want_path) {
  char *got = dy_test_slurp(got_path);
  const char *update = getenv("DY_UPDATE_GOLDENS");
  if (got && update && *update == '1') {
    FILE *f = fopen(want_path, "w");
    if (f) {
      fputs(got, f);
      fclose(f);
    }
  }
  char *want = dy_test_slurp(want_path);
  bool ok = got && want && strcmp(got, want) == 0;
  if (!ok)
    fprintf(stderr, "\n  %s differs from %s (diff them; DY_UPDATE_GOLDENS=1 to accept)\n",
            got_path, want_path);
  free(got);
  free(want);
  return ok;
}

/* Build the harness around src into exe. */
static int build_harness(const char *src, const char *exe) {
  return sh("%s -std=c11 -Wall -Wextra -pedantic -Werror %s -I%s/ir -I%s/runtime "
            "-I%s/../runtime/include -DCASE='\"%s\"' -o %s %s/harness.c %s",
            DY_TEST_CC, DY_TEST_SAN_FLAGS, DY_SOURCE_DIR, DY_SOURCE_DIR, DY_BUILD_DIR, src, exe,
            CASES, DY_TEST_LIBS);
}

static char *run_harness(const char *exe, bool to_static, const char *out) {
  if (sh("%s %s > %s", exe, to_static ? "static" : "", out) != 0)
    return NULL;
  return dy_test_slurp(out);
}

/* One construct: golden, then original eager == converted eager ==
 * converted through dy_to_static, with and without #line directives. */
static void check_construct(const char *name) {
  char src[1024], got[1024], want[1024];
  snprintf(src, sizeof src, "%s/%s.c", CASES, name);
  snprintf(got, sizeof got, "%s/%s.c", WORK, name);
  snprintf(want, sizeof want, "%s/%s.out.c", CASES, name);
  int rc = sh("cd %s && %s convert %s.c > %s", CASES, DY2STC, name, got);
  if (rc) {
    show_log();
    CU_FAIL("dy2stc convert failed");
    return;
  }
  CU_ASSERT(same_as_golden(got, want));

  char exe[1024], out[1024];
  snprintf(exe, sizeof exe, "%s/%s_orig", WORK, name);
  snprintf(out, sizeof out, "%s/%s_orig.txt", WORK, name);
  rc = build_harness(src, exe);
  if (rc)
    show_log();
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *orig = run_harness(exe, false, out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
  CU_ASSERT(strstr(orig, "error") == NULL);

  for (int lines = 0; lines < 2; lines++) {
    char conv[1024];
    snprintf(conv, sizeof conv, "%s/%s_lines.c", WORK, name);
    if (lines && sh("cd %s && %s convert --line-directives %s.c > %s", CASES, DY2STC, name,
                    conv) != 0) {
      show_log();
      CU_FAIL("dy2stc convert --line-directives failed");
      continue;
    }
    snprintf(exe, sizeof exe, "%s/%s_conv%d", WORK, name, lines);
    rc = build_harness(lines ? conv : got, exe);
    if (rc)
      show_log();
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    for (int st = 0; st < 2; st++) {
      snprintf(out, sizeof out, "%s/%s_conv%d_%d.txt", WORK, name, lines, st);
      char *res = run_harness(exe, st, out);
      bool same = res && strcmp(res, orig) == 0;
      if (!same)
        fprintf(stderr, "\n  %s (%s, %s) prints\n%s\n  but the original prints\n%s\n", name,
                lines ? "with #line" : "without #line", st ? "dy_to_static" : "eager",
                res ? res : "(nothing)", orig);
      CU_ASSERT(same);
      free(res);
    }
  }
  free(orig);
}

static void test_constructs(void) {
  for (size_t i = 0; i < sizeof constructs / sizeof *constructs; i++) {
    fprintf(stderr, " [%s]", constructs[i]);
    check_construct(constructs[i]);
  }
}

/* The unconverted original cannot be traced: dy_bool on a traced tensor
 * is an error naming its line. */
static void test_unconverted_trace_fails(void) {
  char exe[] = WORK "/if_else_orig";
  CU_ASSERT_FATAL(exists(exe) || build_harness(CASES "/if_else.c", exe) == 0);
  char *res = run_harness(exe, true, WORK "/if_else_orig_static.txt");
  CU_ASSERT_PTR_NOT_NULL_FATAL(res);
  CU_ASSERT(strstr(res, "input 0: error:") && strstr(res, "if_else.c:11") &&
            strstr(res, "dy_bool"));
  free(res);
}

/* A variable whose type differs between the branches: converted, then
 * dy_cond's error while tracing, at the user's if line (the #line
 * directives), with the types. Eagerly each input takes one branch. */
static void test_type_mismatch(void) {
  int rc = sh("cd %s && %s convert --line-directives mismatch.c > %s/mismatch_lines.c", CASES,
              DY2STC, WORK);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = build_harness(WORK "/mismatch_lines.c", WORK "/mismatch");
  if (rc)
    show_log();
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *eager = run_harness(WORK "/mismatch", false, WORK "/mismatch_eager.txt");
  char *st = run_harness(WORK "/mismatch", true, WORK "/mismatch_static.txt");
  CU_ASSERT(eager && !strstr(eager, "error"));
  CU_ASSERT(st && strstr(st, "input 0: error: mismatch.c:10: dy_cond") &&
            strstr(st, "f32[4]") && strstr(st, "f32[]"));
  if (st && !strstr(st, "input 0: error: mismatch.c:10: dy_cond"))
    fprintf(stderr, "\n  %s\n", st);
  free(eager);
  free(st);
}

static void test_refusals(void) {
  for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
    const char *name = refusals[i];
    fprintf(stderr, " [%s]", name);
    char got[1024], want[1024];
    snprintf(got, sizeof got, "%s/%s.err", WORK, name);
    snprintf(want, sizeof want, "%s/%s.err", CASES, name);
    int rc = dy_test_sh(NULL, "cd %s && %s convert %s.c > /dev/null 2> %s", CASES, DY2STC,
                        name, got);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(same_as_golden(got, want));
  }
}

/* `dy2stc compile` of a model with a tensor if and while (the default -O2
 * pipeline): equal to eager. */
static void test_compile(void) {
  int rc = sh("cd %s && %s compile %s/model.c -o %s/model_exe && %s %s %s/model.c -I%s/ir "
              "-I%s/runtime -I%s/../runtime/include -o %s/model_eager %s && %s/model_eager %s",
              WORK, DY2STC, CASES, WORK, DY_TEST_CC, DY_TEST_SAN_FLAGS, CASES, DY_SOURCE_DIR,
              DY_SOURCE_DIR, DY_BUILD_DIR, WORK, DY_TEST_LIBS, WORK, WORK);
  if (rc)
    show_log();
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  for (int c = 0; c < 5; c++) {
    rc = sh("%s/model_exe --input x=%s/x%d.npy --output-dir %s/out%d && %s compare "
            "%s/out%d/out.npy %s/eager%d.npy --rtol 1e-5 --atol 1e-6",
            WORK, WORK, c, WORK, c, DY2STC, WORK, c, WORK, c);
    if (rc)
      show_log();
    CU_ASSERT_EQUAL(rc, 0);
  }
}

/* The three control-flow samples of samples/static/ (plain C if / while /
 * break on tensors): `dy2stc compile sample.c` equals the sample's eager
 * run on each of its cases (both paths of the early exit; 0, 1 and many
 * steps of the decoder, one ended by its end token; 0, 1, many and the
 * capped number of solver iterations). */
static const struct {
  const char *name;
  int n_cases;
  const char *inputs[2];
} samples[] = {
    {"early_exit", 4, {"x", NULL}},
    {"decode", 4, {"h0", "max_len"}},
    {"solver", 4, {"b", "tol"}},
};

static void test_samples(void) {
  for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
    const char *s = samples[i].name;
    fprintf(stderr, " [%s]", s);
    int rc = sh("mkdir -p %s/%s && %s/../samples/static_%s --out %s/%s && cd %s/%s && %s "
                "compile %s/samples/static/%s.c -o exe",
                WORK, s, DY_BUILD_DIR, s, WORK, s, WORK, s, DY2STC, DY_SOURCE_DIR, s);
    if (rc)
      show_log();
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
      continue;
    for (int c = 0; c < samples[i].n_cases; c++) {
      char ins[1024] = "";
      for (int k = 0; k < 2 && samples[i].inputs[k]; k++) {
        size_t len = strlen(ins);
        snprintf(ins + len, sizeof ins - len, " --input %s=in%d_%s.npy", samples[i].inputs[k],
                 c, samples[i].inputs[k]);
      }
      rc = sh("cd %s/%s && ./exe%s --output-dir out%d && %s compare out%d/out.npy eager%d.npy "
              "--rtol 1e-5 --atol 1e-5",
              WORK, s, ins, c, DY2STC, c, c);
      if (rc)
        show_log();
      CU_ASSERT_EQUAL(rc, 0);
    }
  }
}

void dy_test_register(void) {
  mkdir(WORK, 0777);
  DY_SUITE("convert");
  DY_TEST(test_constructs);
  DY_TEST(test_unconverted_trace_fails);
  DY_TEST(test_type_mismatch);
  DY_TEST(test_refusals);
  DY_TEST(test_compile);
  DY_TEST(test_samples);
}
