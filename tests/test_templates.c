/* test_templates.c - the runtime pieces of the generated C as real files
 * (codegen/rt/, codegen/text/templates.h).
 *
 *   - each template compiles on its own with -Wall -Wextra -Werror
 *     -pedantic (C99; main.c C11, for _Noreturn), under gcc and clang,
 *     hosted and freestanding (all but main.c and the thread helper), on
 *     the plain-C path (-DDY_NO_SIMD), the host's own (-march=native) and,
 *     on x86-64, SSE2, AVX2+FMA and AVX-512 (compiled, not run); main.c
 *     also links against a stand-in model and answers --help
 *   - the strings the build made (rt/embed.cmake) are the files' text
 *     between the markers, section markers left out
 *   - placeholders: main.c and the thread helper carry none once emitted,
 *     and dy_tpl_put replaces them as documented
 *   (the math library's sections, one per function: tests/test_mathlib.c)
 * Scratch files go under DY_BUILD_DIR/templates.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cg_program.h"
#include "dy_test.h"
#include "templates.h"

#define RT DY_SOURCE_DIR "/codegen/rt"
#define WORK DY_BUILD_DIR "/templates"

#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static void show_log(const char *why) {
  char *log = dy_test_slurp(WORK "/last.log");
  fprintf(stderr, "\n  %s:\n%s\n", why, log ? log : "(no output)");
  free(log);
}

static const struct {
  const char *file;
  const char *const *lines;
  const dy_tpl_section *sections;
  bool freestanding; /* also builds with -ffreestanding (firmware) */
} templates[] = {
    {"dy_mathlib.h", dy_tpl_mathlib, dy_tpl_mathlib_sections, true},
    {"dy_simd.h", dy_tpl_simd, dy_tpl_simd_sections, true},
    {"dy_gemm.h", dy_tpl_gemm, dy_tpl_gemm_sections, true},
    {"dy_thread.h", dy_tpl_thread, dy_tpl_thread_sections, false},
    {"dy_main.c", dy_tpl_main, dy_tpl_main_sections, false},
    {"dy_train_main.c", dy_tpl_train_main, dy_tpl_train_main_sections, false},
};
enum { N_TEMPLATES = sizeof templates / sizeof *templates };

/* The compilers to try: gcc, and clang when it is there. */
static int compilers(const char **ccs) {
  int n = 0;
  ccs[n++] = "gcc";
  if (dy_test_have("clang"))
    ccs[n++] = "clang";
  else
    fprintf(stderr, "\n  SKIPPED clang: not on the PATH\n");
  return n;
}

static void test_each_compiles_alone(void) {
  mkdir(WORK, 0777);
  const char *ccs[2];
  int n_cc = compilers(ccs);
  const char *paths[] = {
      "-DDY_NO_SIMD", "-march=native",
#if defined(__x86_64__)
      "-mno-avx",     "-mavx2 -mfma", "-mavx512f -mfma",
#endif
  };
  for (int c = 0; c < n_cc; c++)
    for (int t = 0; t < N_TEMPLATES; t++) {
      bool is_main = strstr(templates[t].file, "main.c") != NULL;
      for (size_t p = 0; p < sizeof paths / sizeof *paths; p++)
        for (int fs = 0; fs <= (int)templates[t].freestanding; fs++) {
          int rc = sh("%s -x c %s -Wall -Wextra -Werror -pedantic -O2 %s %s -I%s/check "
                      "-c %s/%s -o /dev/null",
                      ccs[c], is_main ? "-std=c11" : "-std=c99", paths[p],
                      fs ? "-ffreestanding" : "", RT, RT, templates[t].file);
          if (rc) {
            char why[256];
            snprintf(why, sizeof why, "%s %s %s%s", ccs[c], templates[t].file, paths[p],
                     fs ? " -ffreestanding" : "");
            show_log(why);
          }
          CU_ASSERT_EQUAL(rc, 0);
        }
    }
}

/* main.c against a stand-in model whose one output is its input plus 1. */
static void test_main_links_and_runs(void) {
  mkdir(WORK, 0777);
  FILE *f = fopen(WORK "/model.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("#include \"dy_model.h\"\n"
        "const dy_model_tensor_info dy_model_inputs[] = {{\"x\", 0, 2, {-1, 3}}};\n"
        "const dy_model_tensor_info dy_model_outputs[] = {{\"y/0\", 0, 2, {-1, 3}}};\n"
        "int dy_model_run_v(void *arena, int64_t batch, const void *const *inputs,\n"
        "                   void *const *outputs) {\n"
        "  const float *x = inputs[0];\n"
        "  float *y = outputs[0];\n"
        "  (void)arena;\n"
        "  for (int64_t i = 0; i < batch * 3; i++)\n"
        "    y[i] = x[i] + 1.0f;\n"
        "  return DY_MODEL_OK;\n"
        "}\n",
        f);
  fclose(f);
  /* 2 x 3 floats 1..6, raw little-endian (the host's order on x86/ARM) */
  f = fopen(WORK "/x.bin", "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const float x[6] = {1, 2, 3, 4, 5, 6};
  fwrite(x, sizeof x, 1, f);
  fclose(f);
  int rc = sh("cd %s && gcc -std=c11 -Wall -Wextra -Werror -pedantic -I%s/check "
              "%s/dy_main.c model.c -o prog && ./prog --help > help.txt && "
              "grep -q 'Runs the model dy_model (dy2stc DY_TPL_VERSION)' help.txt && "
              "rm -rf out && ./prog x.bin --output-dir out && test -f out/y_0.npy",
              WORK, RT, RT);
  if (rc)
    show_log("main.c with a stand-in model");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *npy = dy_test_slurp(WORK "/out/y_0.npy");
  CU_ASSERT_PTR_NOT_NULL_FATAL(npy);
  CU_ASSERT(strstr(npy + 10, "'shape': (2, 3)") != NULL); /* past the magic */
  const unsigned char *u = (const unsigned char *)npy;
  size_t off = 10 + (size_t)(u[8] | u[9] << 8); /* format 1.0: header length */
  float y[6];
  memcpy(y, npy + off, sizeof y);
  for (int i = 0; i < 6; i++)
    DY_ASSERT_NEAR(y[i], x[i] + 1.0f, 0);
  free(npy);
}

/* The text of a template file between its markers, section markers out. */
static char *file_text(const char *file) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", RT, file);
  char *all = dy_test_slurp(path);
  if (!all)
    return NULL;
  const char *begin = "/* dy2stc: template begin */\n";
  char *s = strstr(all, begin);
  if (!s) {
    free(all);
    return NULL;
  }
  s += strlen(begin);
  char *end = strstr(s, "/* dy2stc: template end */\n");
  if (end)
    *end = '\0';
  dy_buf b = {0};
  for (char *line = s; *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
    if (strncmp(line, "/* dy2stc: section ", 19) != 0)
      dy_buf_putn(&b, line, n);
    line += n;
  }
  free(all);
  char *text = dy_buf_take(&b);
  return text ? text : strdup("");
}

static void test_strings_are_the_files(void) {
  for (int t = 0; t < N_TEMPLATES; t++) {
    char *want = file_text(templates[t].file);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    dy_buf b = {0};
    int n = 0;
    for (; templates[t].lines[n]; n++) {
      const char *l = templates[t].lines[n];
      CU_ASSERT(strlen(l) > 0 && l[strlen(l) - 1] == '\n' && strchr(l, '\n') == l + strlen(l) - 1);
      dy_buf_puts(&b, l);
    }
    char *got = dy_buf_take(&b);
    if (!got || strcmp(got, want) != 0)
      fprintf(stderr, "\n  %s: the embedded text differs from the file\n", templates[t].file);
    CU_ASSERT(got && strcmp(got, want) == 0);
    /* the sections: increasing lines, then {NULL, number of lines} */
    const dy_tpl_section *s = templates[t].sections;
    int k = 0;
    for (; s[k].name; k++)
      CU_ASSERT(s[k].line >= (k ? s[k - 1].line : 0) && s[k].line <= n);
    CU_ASSERT_EQUAL(s[k].line, n);
    free(got);
    free(want);
  }
  /* the math library has one section per function (all of them: none
   * beyond what emit_mathlib.c can hold); main.c the common part and the
   * inference driver, the trainer its code (emit_main.c pastes them); the
   * others none */
  int n_math = 0;
  while (dy_tpl_mathlib_sections[n_math].name)
    n_math++;
  CU_ASSERT(n_math >= 23);
  CU_ASSERT_EQUAL(dy_mathlib_count(), n_math);
  CU_ASSERT_PTR_NULL(dy_tpl_simd_sections[0].name);
  CU_ASSERT(dy_tpl_section_line(dy_tpl_main_sections, "common") > 0);
  CU_ASSERT(dy_tpl_section_line(dy_tpl_main_sections, "run") >
            dy_tpl_section_line(dy_tpl_main_sections, "common"));
  CU_ASSERT(dy_tpl_section_line(dy_tpl_train_main_sections, "code") > 0);
  CU_ASSERT_PTR_NULL(dy_tpl_gemm_sections[0].name);
}

static void test_placeholders(void) {
  /* dy_tpl_put: every occurrence, the first listed wins, values as is */
  const char *const lines[] = {"a FOO b FOOBAR FOO\n", "FOOFOO BAR\n", "none\n", NULL};
  const dy_tpl_sub subs[] = {{"FOOBAR", "x"}, {"FOO", "FOOBAR"}, {"BAR", "y"}};
  dy_buf b = {0};
  dy_tpl_put(&b, lines, 0, -1, subs, 3);
  CU_ASSERT_STRING_EQUAL(b.s, "a FOOBAR b x FOOBAR\nFOOBARFOOBAR y\nnone\n");
  dy_buf_free(&b);
  dy_tpl_put(&b, lines, 1, 2, NULL, 0);
  CU_ASSERT_STRING_EQUAL(b.s, "FOOFOO BAR\n");
  dy_buf_free(&b);

  /* main.c for a model: its names, none of the placeholders */
  dy_codegen_options o;
  memset(&o, 0, sizeof o);
  o.name = "my_net2";
  dy_error err = {0};
  DY_ASSERT_OK(dy_codegen_main_c(NULL, &o, &b, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b.s);
  CU_ASSERT(strstr(b.s, "#include \"my_net2.h\"\n") != NULL);
  CU_ASSERT(strstr(b.s, "int rc = my_net2_run_v(arena, RUN_SIZES, ins, outs);") != NULL);
  CU_ASSERT(strstr(b.s, "MY_NET2_NUM_INPUTS") != NULL);
  CU_ASSERT(strstr(b.s, "generated by dy2stc " DY_VERSION_STRING ".") != NULL);
  CU_ASSERT(strstr(b.s, "dy_model") == NULL);
  CU_ASSERT(strstr(b.s, "DY_MODEL") == NULL);
  CU_ASSERT(strstr(b.s, "DY_TPL_") == NULL);
  dy_buf_free(&b);

  dy_cg_thread_prelude(&b, 3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b.s);
  CU_ASSERT(strstr(b.s, "/* ---- threads (dy2stc --threads 3) ----\n") == b.s);
  CU_ASSERT(strstr(b.s, "#define DY_THREADS 3\n") != NULL);
  char min_work[64];
  snprintf(min_work, sizeof min_work, "#define DY_THREAD_MIN_WORK %d\n", (int)DY_THREAD_MIN_WORK);
  CU_ASSERT(strstr(b.s, min_work) != NULL);
  CU_ASSERT(strstr(b.s, "DY_TPL_") == NULL);
  CU_ASSERT(strstr(b.s, "dy_tpl_check") == NULL); /* the file's own check stays out */
  dy_buf_free(&b);
}

void dy_test_register(void) {
  DY_SUITE("templates");
  DY_TEST(test_strings_are_the_files);
  DY_TEST(test_placeholders);
  DY_TEST(test_each_compiles_alone);
  DY_TEST(test_main_links_and_runs);
}
