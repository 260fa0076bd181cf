/* test_passes.c - pass goldens, the pass manager and the pipeline.
 *
 * Each file in tests/passes/ holds one case, TVM style: a before-Program
 * and an expected-Program in the text form, and the pass to run:
 *
 *   # pass: simplify
 *   # then: dce            (optional: a second pass, to clear leftovers)
 *   # >>> before
 *   program { ... }
 *   # >>> expected
 *   program { ... }
 *
 * The before-Program is parsed and verified, the pass run (the verifier
 * after it), and the result printed; the expected text is parsed and
 * printed the same way, and the two texts must be equal.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "dy_test.h"
#include "dy_compiler.h"

#define CASES DY_SOURCE_DIR "/tests/passes"

/* The value of "# key: value" in text, into buf ("" if absent). */
static void header(const char *text, const char *key, char *buf, size_t n) {
  char pat[64];
  snprintf(pat, sizeof pat, "# %s:", key);
  const char *s = strstr(text, pat);
  buf[0] = 0;
  if (!s)
    return;
  s += strlen(pat);
  while (*s == ' ')
    s++;
  size_t k = 0;
  while (s[k] && s[k] != '\n' && k + 1 < n) {
    buf[k] = s[k];
    k++;
  }
  buf[k] = 0;
}

static char *canonical(const char *text, dy_error *err) {
  dy_program *p = NULL;
  if (dy_program_parse(text, &p, err))
    return NULL;
  char *t = dy_program_to_text(p);
  dy_program_free(p);
  return t;
}

static bool run_case(const char *path) {
  char *text = dy_test_slurp(path);
  if (!text)
    return false;
  char pass1[64], pass2[64];
  header(text, "pass", pass1, sizeof pass1);
  header(text, "then", pass2, sizeof pass2);
  char *before = strstr(text, "# >>> before"), *expected = strstr(text, "# >>> expected");
  bool ok = before && expected && pass1[0];
  dy_error err = {0};
  dy_program *p = NULL;
  char *got = NULL, *want = NULL;
  if (ok) {
    *expected = 0; /* split */
    expected += strlen("# >>> expected");
    before += strlen("# >>> before");
    ok = dy_program_parse(before, &p, &err) == DY_OK && dy_verify(p, &err) == DY_OK;
  }
  const char *names[2] = {pass1, pass2};
  for (int i = 0; i < 2 && ok && names[i][0]; i++) {
    const dy_pass *pass = dy_pass_find(names[i]);
    bool changed = false;
    ok = pass && pass->run(p, &changed, &err) == DY_OK && dy_verify(p, &err) == DY_OK;
    if (!pass)
      snprintf(err.msg, sizeof err.msg, "unknown pass '%s'", names[i]);
  }
  if (ok) {
    got = dy_program_to_text(p);
    want = canonical(expected, &err);
    ok = got && want && strcmp(got, want) == 0;
    if (got && want && !ok)
      fprintf(stderr, "\n  %s: got\n%s  expected\n%s", path, got, want);
  } else {
    fprintf(stderr, "\n  %s: %s\n", path, err.msg);
  }
  free(got);
  free(want);
  free(text);
  dy_program_free(p);
  return ok;
}

static void test_pass_goldens(void) {
  DIR *d = opendir(CASES);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  char *names[256];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 256;)
    if (strstr(e->d_name, ".ir"))
      names[n++] = strdup(e->d_name);
  closedir(d);
  CU_ASSERT(n >= 8);
  for (int i = 0; i < n; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CASES, names[i]);
    bool ok = run_case(path);
    if (!ok)
      fprintf(stderr, "  golden failed: %s\n", names[i]);
    CU_ASSERT(ok);
    free(names[i]);
  }
}

/* A pass that breaks an invariant is caught by the verifier, which names
 * the pass. */
static dy_status bad_pass(dy_program *p, bool *changed, dy_error *err) {
  (void)err;
  /* plant a use before definition: swap the first two ops */
  dy_block *b = p->blocks[0];
  dy_op *t = b->ops[0];
  b->ops[0] = b->ops[1];
  b->ops[1] = t;
  *changed = true;
  return DY_OK;
}

static void test_verifier_catches_a_bad_pass(void) {
  const char *text = "program {\n var x : f32[2] feed 0\n var a : f32[2]\n var b : f32[2]\n"
                     " block 0 parent -1 {\n  a = relu(x)\n  b = tanh(a)\n }\n fetch 0 b\n}\n";
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  bool changed = false;
  bad_pass(p, &changed, &err);
  CU_ASSERT_EQUAL(dy_verify(p, &err), DY_STATUS_INVALID_IR);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "invariant 6 (def-use)"));
  dy_program_free(p);
}

static void test_pipeline_dump_and_print(void) {
  const char *text = "program {\n var x : f32[-1,2] feed 0\n var one : f32[2] persistable = [1.0, 1.0]\n"
                     " var a : f32[-1,2]\n var b : f32[-1,2]\n"
                     " block 0 parent -1 {\n  a = mul(x, one)\n  b = relu(a)\n }\n fetch 0 b\n}\n";
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  char *printed = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&printed, &len);
  dy_pass_options o = {.opt_level = 2, .verify_each = 1, .print_after = "simplify",
                       .dump_dir = DY_BUILD_DIR "/passes_dump", .print_to = f};
  DY_ASSERT_OK(dy_run_pipeline(p, &o, &err), &err);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(printed, "// -----// IR after simplify //----- //"));
  CU_ASSERT_PTR_NOT_NULL(strstr(printed, "b = relu(x)"));
  free(printed);
  char *d0 = dy_test_slurp(DY_BUILD_DIR "/passes_dump/000_input.ir");
  char *d1 = dy_test_slurp(DY_BUILD_DIR "/passes_dump/001_simplify.ir");
  CU_ASSERT(d0 && strstr(d0, "mul(x, one)"));
  CU_ASSERT(d1 && !strstr(d1, "mul(x, one)"));
  free(d0);
  free(d1);
  CU_ASSERT_EQUAL(dy_program_count_ops(p), 1);
  dy_program_free(p);
  /* -O0 runs nothing */
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  dy_pass_options o0 = {.opt_level = 0, .verify_each = 1};
  DY_ASSERT_OK(dy_run_pipeline(p, &o0, &err), &err);
  CU_ASSERT_EQUAL(dy_program_count_ops(p), 2);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("passes");
  DY_TEST(test_pass_goldens);
  DY_TEST(test_verifier_catches_a_bad_pass);
  DY_TEST(test_pipeline_dump_and_print);
}
