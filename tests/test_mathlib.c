/* test_mathlib.c - the math functions of the generated C (emit_mathlib.c).
 *
 *   - dy_mathlib_emit writes what kernel text names and what that needs,
 *     dependencies first, and nothing for text that names none; every
 *     function emitted alone compiles (a missing dependency fails)
 *   - all of them together are clean C99 under gcc and clang with strict
 *     warnings, freestanding, and build for Cortex-M0/M4 when the cross
 *     compiler is there
 *   - accuracy against libm (tests/mathlib_sweep.c: every 1021st float of
 *     each range plus edges and special values, the bounds stated in
 *     emit_mathlib.c), built with gcc and clang on the host and, when
 *     aarch64-linux-gnu-gcc and qemu-aarch64 are there, for AArch64 with
 *     FMA contraction on (-ffp-contract=fast), run under qemu
 *   - the vector math of the SIMD helpers (emit_simd.c) against libm the
 *     same way, on the SSE2, AVX2 (AVX-512) and NEON paths
 *   - a loop over each function vectorises (gcc -O3, the host's SIMD):
 *     every loop of the test file is reported vectorised
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cg_program.h"
#include "dy_compiler.h"
#include "dy_test.h"
#include "templates.h"

#define WORK DY_BUILD_DIR "/mathlib"
#define SWEEP DY_SOURCE_DIR "/tests/mathlib_sweep.c"

/* a shell command; stdout and stderr in WORK/last.log */
#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static void show_log(const char *why) {
  char *log = dy_test_slurp(WORK "/last.log");
  fprintf(stderr, "\n  %s:\n%s\n", why, log ? log : "(no output)");
  free(log);
}

/* dy_mathlib_emit for code, as a string (caller frees). */
static char *emit_for(const char *code) {
  dy_buf b = {0};
  dy_mathlib_emit(&b, code);
  char *s = dy_buf_take(&b);
  return s ? s : strdup("");
}

/* Where "name(" or "#define name" is defined in text, or NULL. */
static const char *definition(const char *text, const char *name) {
  char pat[128];
  snprintf(pat, sizeof pat, " %s(", name);
  const char *s = strstr(text, pat);
  if (!s) {
    snprintf(pat, sizeof pat, "#define %s ", name);
    s = strstr(text, pat);
  }
  return s;
}

/* WORK/mathlib.h: every function, as a NAME.c would hold them. */
static void write_all(void) {
  mkdir(WORK, 0777);
  dy_buf names = {0};
  for (int i = 0; i < dy_mathlib_count(); i++)
    dy_buf_printf(&names, "%s\n", dy_mathlib_name(i));
  char *text = emit_for(names.s);
  dy_buf_free(&names);
  FILE *f = fopen(WORK "/mathlib.h", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("#include <stdint.h>\n\n", f);
  fputs(text, f);
  fclose(f);
  free(text);
  /* vmath.h: the same and the SIMD helpers, for the vector sweep */
  dy_buf pre = {0};
  dy_cg_simd_prelude(&pre);
  f = fopen(WORK "/vmath.h", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "#include \"mathlib.h\"\n\n%s", pre.s);
  fclose(f);
  dy_buf_free(&pre);
}

static void test_emits_what_is_named(void) {
  char *t = emit_for("  out0[i] = 1.0f / (1.0f + dy_expf(-x));\n");
  CU_ASSERT_PTR_NOT_NULL(definition(t, "dy_expf"));
  CU_ASSERT_PTR_NOT_NULL(definition(t, "dy_select"));   /* what dy_expf uses */
  CU_ASSERT_PTR_NOT_NULL(definition(t, "DY_INFINITY"));
  CU_ASSERT_PTR_NULL(definition(t, "dy_logf"));         /* nothing else */
  CU_ASSERT_PTR_NULL(definition(t, "dy_powf"));
  CU_ASSERT(definition(t, "dy_asuint") < definition(t, "dy_select"));
  CU_ASSERT(definition(t, "dy_select") < definition(t, "dy_expf"));
  free(t);
  /* names only as whole identifiers */
  t = emit_for("w_dy_expf[3] + my_dy_logf + dy_expf2 + expf(x)");
  CU_ASSERT_STRING_EQUAL(t, "");
  free(t);
  t = emit_for(NULL);
  CU_ASSERT_STRING_EQUAL(t, "");
  free(t);
  /* a chain: powf -> floorf -> truncf -> select; every definition
   * precedes its first use */
  t = emit_for("y = dy_powf(a, b);");
  for (int i = 0; i < dy_mathlib_count(); i++) {
    const char *name = dy_mathlib_name(i);
    const char *def = definition(t, name);
    if (def && strstr(t, name) < def)
      fprintf(stderr, "\n  %s is used before its definition\n", name);
    CU_ASSERT(!def || strstr(t, name) >= def);
  }
  CU_ASSERT_PTR_NOT_NULL(definition(t, "dy_truncf"));
  CU_ASSERT_PTR_NULL(definition(t, "dy_erff"));
  free(t);
}

/* Every function emitted alone, with what its text names (the template
 * codegen/rt/dy_mathlib.h, one section per function): it compiles
 * freestanding with -Werror under gcc and clang, so a dependency missing
 * from the library fails; each definition comes before its first use; and
 * each section defines the name it carries. */
static void test_mathlib_each_alone(void) {
  mkdir(WORK, 0777);
  dy_buf files = {0};
  for (int i = 0; i < dy_mathlib_count(); i++) {
    const char *name = dy_mathlib_name(i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(name);
    /* the section carries the name of what it defines */
    const dy_tpl_section *s = &dy_tpl_mathlib_sections[i];
    dy_buf sec = {0};
    dy_tpl_put(&sec, dy_tpl_mathlib, s[0].line, s[1].line, NULL, 0);
    if (!sec.s || !definition(sec.s, name))
      fprintf(stderr, "\n  section %s does not define %s\n", name, name);
    CU_ASSERT(sec.s && definition(sec.s, name));
    dy_buf_free(&sec);

    dy_buf b = {0};
    dy_mathlib_emit(&b, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b.s);
    /* every name it holds is defined before its first use */
    for (int j = 0; j < dy_mathlib_count(); j++) {
      const char *other = dy_mathlib_name(j);
      const char *def = definition(b.s, other);
      if (def && strstr(b.s, other) < def)
        fprintf(stderr, "\n  %s alone: %s is used before its definition\n", name, other);
      CU_ASSERT(!def || strstr(b.s, other) >= def);
    }
    /* alone_NAME.h, as NAME.c would hold it (a header: clang would warn
     * of static inline functions a .c file does not call) */
    char path[512];
    snprintf(path, sizeof path, WORK "/alone_%s.h", name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#include <stdint.h>\n\n%s", b.s);
    fclose(f);
    snprintf(path, sizeof path, WORK "/alone_%s.c", name);
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#include \"alone_%s.h\"\n", name);
    /* a use, so that a macro's body is compiled too */
    if (strncmp(name, "DY_", 3) == 0)
      fprintf(f, "float use_%s(void);\nfloat use_%s(void) { return %s; }\n", name, name, name);
    else
      fprintf(f, "typedef int nonempty_;\n"); /* ISO C: no empty file */
    fclose(f);
    dy_buf_printf(&files, " alone_%s.c", name);
    dy_buf_free(&b);
  }
  const char *ccs[] = {"gcc", "clang"};
  for (int c = 0; c < 2; c++) {
    int rc = sh("cd %s && %s -std=c99 -pedantic -Wall -Wextra -Werror -ffreestanding -c%s",
                WORK, ccs[c], files.s);
    if (rc)
      show_log(ccs[c]);
    CU_ASSERT_EQUAL(rc, 0);
  }
  dy_buf_free(&files);
}

static void test_clean_c_everywhere(void) {
  write_all();
  FILE *f = fopen(WORK "/all.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  /* what the functions are called from: kernels of a freestanding NAME.c */
  fputs("#include \"mathlib.h\"\n"
        "float all(const float *x, int n);\n"
        "float all(const float *x, int n) {\n"
        "  float s = DY_NAN * 0.0f + DY_INFINITY * 0.0f;\n"
        "  for (int i = 0; i < n; i++)\n"
        "    s += dy_expf(x[i]) + dy_logf(x[i]) + dy_log1pf(x[i]) + dy_expm1f(x[i]) +\n"
        "         dy_sqrtf(x[i]) + dy_tanhf(x[i]) + dy_sigmoidf(x[i]) + dy_erff(x[i]) +\n"
        "         dy_powf(x[i], s) + dy_fabsf(x[i]) + dy_copysignf(s, x[i]) +\n"
        "         dy_fminf(s, x[i]) + dy_fmaxf(s, x[i]) + dy_floorf(x[i]) +\n"
        "         dy_ceilf(x[i]) + dy_roundf(x[i]) + (float)dy_isnanf(x[i]);\n"
        "  return s;\n"
        "}\n",
        f);
  fclose(f);
  const char *strict = "-std=c99 -pedantic -Wall -Wextra -Werror -Wshadow -Wconversion "
                       "-Wdouble-promotion -Wstrict-prototypes -ffreestanding -O2";
  const char *ccs[] = {"gcc", "clang"};
  for (int i = 0; i < 2; i++) {
    int rc = sh("cd %s && %s %s -c all.c -o all_%s.o && nm -u all_%s.o | wc -l | grep -qx 0",
                WORK, ccs[i], strict, ccs[i], ccs[i]);
    if (rc)
      show_log(ccs[i]);
    CU_ASSERT_EQUAL(rc, 0);
  }
  if (!dy_test_have("arm-none-eabi-gcc")) {
    fprintf(stderr, "\n  SKIPPED Cortex-M builds: no arm-none-eabi-gcc (scripts/setup.sh "
                    "installs gcc-arm-none-eabi)\n");
    return;
  }
  const char *arm[] = {"-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard",
                       "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"};
  for (int i = 0; i < 2; i++) {
    int rc = sh("cd %s && arm-none-eabi-gcc %s %s -c all.c -o all_arm%d.o", WORK, arm[i],
                strict, i);
    if (rc)
      show_log(arm[i]);
    CU_ASSERT_EQUAL(rc, 0);
  }
  /* the M4F has single-precision hardware: no float helper calls at all */
  int rc = sh("cd %s && arm-none-eabi-nm -u all_arm0.o | wc -l | grep -qx 0", WORK);
  if (rc)
    show_log("Cortex-M4F object calls a helper");
  CU_ASSERT_EQUAL(rc, 0);
}

/* Build the sweep with cc and flags, run it (through runner, may be ""),
 * print its table, and require every bound held. */
static void sweep_with(const char *cc, const char *flags, const char *runner, int stride) {
  write_all();
  int rc = sh("cd %s && %s -std=c11 -O2 -Wall -Wextra -Werror %s -I. %s -o sweep_bin -lm",
              WORK, cc, flags, SWEEP);
  if (rc)
    show_log("building the sweep");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("cd %s && %s ./sweep_bin %d", WORK, runner, stride);
  char *log = dy_test_slurp(WORK "/last.log");
  fprintf(stderr, "\n  %s %s%s:\n%s", cc, flags, *runner ? " (under qemu)" : "",
          log ? log : "(no output)");
  free(log);
  CU_ASSERT_EQUAL(rc, 0);
}

static void test_accuracy_gcc(void) { sweep_with("gcc", "", "", 1021); }

static void test_accuracy_clang(void) { sweep_with("clang", "", "", 1021); }

static void test_accuracy_aarch64_fma(void) {
  if (!dy_test_have_aarch64())
    return;
  /* gnu11 and -ffp-contract=fast: the compiler fuses a*b+c into FMAs,
   * which the hi+lo arithmetic of dy_powf must survive */
  sweep_with("aarch64-linux-gnu-gcc", "-static -std=gnu11 -ffp-contract=fast",
             "qemu-aarch64 -L /usr/aarch64-linux-gnu", 16381);
}

/* The vector math of the kernels (emit_simd.c) on each SIMD path this
 * machine can run: SSE2, AVX2+FMA and AVX-512 when the CPU has them, and
 * NEON under qemu-aarch64. A path the CPU lacks is still built. */
static void test_vector_accuracy(void) {
  __builtin_cpu_init();
  const struct {
    const char *flags;
    bool run;
  } x86[] = {{"-mno-avx", true},
             {"-mavx2 -mfma", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
             {"-mavx512f -mfma", __builtin_cpu_supports("avx512f")}};
  for (int i = 0; i < 3; i++) {
    char flags[96];
    snprintf(flags, sizeof flags, "-DDY_SWEEP_VECTOR %s", x86[i].flags);
    if (x86[i].run) {
      sweep_with("gcc", flags, "", 1021);
      continue;
    }
    int rc = sh("cd %s && gcc -std=c11 -O2 -Wall -Wextra -Werror %s -I. %s -o vsweep_bin -lm",
                WORK, flags, SWEEP);
    fprintf(stderr, "\n  gcc %s: built, not run (this CPU lacks it)\n", flags);
    CU_ASSERT_EQUAL(rc, 0);
  }
  if (dy_test_have_aarch64())
    sweep_with("aarch64-linux-gnu-gcc", "-static -DDY_SWEEP_VECTOR",
               "qemu-aarch64 -L /usr/aarch64-linux-gnu", 16381);
}

static void test_loops_vectorise(void) {
  write_all();
  FILE *f = fopen(WORK "/vec.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("#include \"mathlib.h\"\n", f);
  const char *fns[] = {"dy_expf",  "dy_logf",    "dy_log1pf", "dy_expm1f", "dy_sqrtf",
                       "dy_tanhf", "dy_sigmoidf", "dy_erff",  "dy_floorf", "dy_roundf",
                       "dy_fabsf"};
  int n = (int)(sizeof fns / sizeof *fns);
  for (int i = 0; i < n; i++)
    fprintf(f,
            "void v_%s(const float *restrict x, float *restrict y, long n);\n"
            "void v_%s(const float *restrict x, float *restrict y, long n) {\n"
            "  for (long i = 0; i < n; i++)\n    y[i] = %s(x[i]);\n}\n",
            fns[i], fns[i], fns[i]);
  fputs("void v_pow(const float *restrict x, const float *restrict z, float *restrict y, long n);\n"
        "void v_pow(const float *restrict x, const float *restrict z, float *restrict y, long n) {\n"
        "  for (long i = 0; i < n; i++)\n    y[i] = dy_powf(x[i], z[i]);\n}\n",
        f);
  fclose(f);
  int rc = sh("cd %s && gcc -std=c11 -O3 -c vec.c -o vec.o -fopt-info-vec-optimized 2>&1 | "
              "grep 'loop vectorized' | cut -d: -f2 | sort -u | wc -l > vec.count",
              WORK);
  char *count = dy_test_slurp(WORK "/vec.count");
  int got = count ? atoi(count) : -1;
  free(count);
  if (got != n + 1)
    fprintf(stderr, "\n  %d of %d loops vectorised (gcc -O3)\n", got, n + 1);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(got, n + 1);
}

void dy_test_register(void) {
  DY_SUITE("mathlib");
  DY_TEST(test_emits_what_is_named);
  DY_TEST(test_mathlib_each_alone);
  DY_TEST(test_clean_c_everywhere);
  DY_TEST(test_accuracy_gcc);
  DY_TEST(test_accuracy_clang);
  DY_TEST(test_accuracy_aarch64_fma);
  DY_TEST(test_vector_accuracy);
  DY_TEST(test_loops_vectorise);
}
