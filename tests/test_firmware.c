/* test_firmware.c - the generated .c/.h pair as firmware uses it (issue 7).
 *
 *   - for every sample, `dy2stc compile --emit c --name S`: S.c includes
 *     only S.h, <stddef.h> and <stdint.h> (and a SIMD header inside the
 *     #if that selects its path), builds with -ffreestanding
 *     -nostdlib, defines no writable data (all state is in the caller's
 *     arena) and no global symbol without the S_ prefix, and neither does
 *     S_weights.c (-pedantic); S.h states RAM,
 *     flash and the I/O shapes as macros; the same S.c builds for a
 *     Cortex-M4F, a Cortex-M0 (soft float) and AArch64
 *   - --max-ram and --max-flash fail the compile with one line naming
 *     both numbers, and pass at exactly the plan's figures
 *   - three models (two of them the same MLP under two names) link into
 *     one program without libm, share one arena, and each gives its own
 *     eager outputs
 *   - samples/firmware: LeNet-5 for a Cortex-M4F runs under
 *     qemu-system-arm -M mps2-an386 (semihosting), and its Cortex-M0 build
 *     on the Cortex-M3 of mps2-an385; both print the outputs of the
 *     host-compiled executable on the same input (bit patterns compared;
 *     within 1e-5 of the output's scale required, as the host's SIMD
 *     kernels may sum in another order). The arm-none-eabi-size figures
 *     go to stderr.
 *   - a detection head's NonMaxSuppression (its row count set at run
 *     time) built for the Cortex-M4F runs under qemu and prints the host
 *     executable's rows
 *   - the emitted .c of LeNet-5 and of the transformer, built for AArch64
 *     (static; the NEON path) with a small driver, runs under
 *     qemu-aarch64 and agrees with the same sources built for the host.
 *
 * Cross tools missing: those parts are skipped with a printed reason
 * (scripts/setup.sh installs them).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

#define DY2STC DY2STC_PATH
#define SAMPLES DY_BUILD_DIR "/../samples"
#define FIRMWARE DY_SOURCE_DIR "/samples/firmware"
#define WORK DY_BUILD_DIR "/firmware"

#define QEMU_ARM "timeout 300 qemu-system-arm -nographic -semihosting-config enable=on,target=native"
#define M4_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard"
#define M0_FLAGS "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"

static const char *const samples[] = {"simple_net", "mlp", "lenet5", "cnn", "transformer"};
enum { N_SAMPLES = 5 };

/* a shell command; stdout and stderr in WORK/last.log */
#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static char *last_log(void) { return dy_test_slurp(WORK "/last.log"); }

static void show_log_on_failure(int rc, const char *what) {
  if (rc != 0) {
    char *log = last_log();
    fprintf(stderr, "\n  %s: exit %d; output:\n%s\n", what, rc, log ? log : "");
    free(log);
  }
}

static bool have_arm(void) {
  if (dy_test_have("arm-none-eabi-gcc") && dy_test_have("qemu-system-arm") &&
      sh("test -f \"$(arm-none-eabi-gcc " M4_FLAGS " -print-file-name=librdimon.a)\"") == 0)
    return true;
  fprintf(stderr, "\n  SKIPPED: needs arm-none-eabi-gcc, newlib's librdimon and "
                  "qemu-system-arm (scripts/setup.sh installs gcc-arm-none-eabi, "
                  "libnewlib-arm-none-eabi, qemu-system-arm)\n");
  return false;
}

static void setup_work(void) { mkdir(WORK, 0777); }

/* Save sample s (batch 2) into WORK/<dir> and emit S.c/S.h there under
 * name; 0 on success. */
static int emit_sample(const char *s, const char *dir, const char *name, const char *extra) {
  int rc = sh("mkdir -p %s/%s && cd %s/%s && %s/%s --batch 2 --out . && "
              "%s compile %s.dymodel --emit c --name %s -o %s --max-batch 4 %s",
              WORK, dir, WORK, dir, SAMPLES, s, DY2STC, s, name, name, extra);
  show_log_on_failure(rc, s);
  return rc;
}

/* ---- the pair: freestanding, prefixed, reentrant, everywhere ---- */

static void test_freestanding_prefixed_reentrant(void) {
  setup_work();
  bool arm = dy_test_have("arm-none-eabi-gcc"), a64 = dy_test_have("aarch64-linux-gnu-gcc");
  if (!arm || !a64)
    fprintf(stderr, "\n  (cross builds skipped: %s%s missing; scripts/setup.sh installs them)",
            arm ? "" : "arm-none-eabi-gcc ", a64 ? "" : "aarch64-linux-gnu-gcc");
  for (int i = 0; i < N_SAMPLES; i++) {
    const char *s = samples[i];
    char dir[64], name[64], upper[64];
    snprintf(dir, sizeof dir, "pair_%s", s);
    snprintf(name, sizeof name, "fw_%s", s);
    for (size_t k = 0; k <= strlen(name); k++)
      upper[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32 : name[k]);
    CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s/%s", WORK, dir), 0);
    CU_ASSERT_EQUAL_FATAL(emit_sample(s, dir, name, ""), 0);

    /* only NAME.c, NAME.h and NAME_weights.c are written */
    int rc = sh("cd %s/%s && ls %s.* %s_* | tr '\\n' ' ' | grep -qx '%s.c %s.h %s_weights.c '",
                WORK, dir, name, name, name, name, name);
    CU_ASSERT_EQUAL(rc, 0);
    /* includes: NAME.h, <stddef.h>, <stdint.h>, and a SIMD header only
     * inside the #if that selects its path */
    rc = sh("cd %s/%s && awk '/^#if/ { d++ } /^#endif/ { d-- } /^#include/ { "
            "if (d == 0) print; else if ($2 !~ /^<(immintrin|emmintrin|xmmintrin|arm_neon)[.]h>$/) "
            "print \"nested \" $0 }' %s.c | tr '\\n' ' ' | "
            "grep -qx '#include \"%s.h\" #include <stddef.h> #include <stdint.h> '",
            WORK, dir, name, name);
    show_log_on_failure(rc, "includes");
    CU_ASSERT_EQUAL(rc, 0);
    /* freestanding, host: no libc, no libm (the weights' file too) */
    rc = sh("cd %s/%s && gcc -std=c11 -ffreestanding -nostdlib -fno-pic -O2 -Wall -Wextra "
            "-Werror -c %s.c -o %s.o && gcc -std=c99 -ffreestanding -nostdlib -fno-pic -O2 "
            "-Wall -Wextra -pedantic -Werror -c %s_weights.c -o %s_weights.o",
            WORK, dir, name, name, name, name);
    show_log_on_failure(rc, "freestanding build");
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    /* every global symbol, defined or not, is NAME_... or memcpy/memset */
    rc = sh("cd %s/%s && nm -g %s.o %s_weights.o | awk 'NF > 1 {print $NF}' | "
            "grep -v -E '^(%s_|memcpy$|memset$)' | tee foreign.txt | wc -l | grep -qx 0",
            WORK, dir, name, name, name);
    if (rc) {
      char path[600];
      snprintf(path, sizeof path, "%s/%s/foreign.txt", WORK, dir);
      char *u = dy_test_slurp(path);
      fprintf(stderr, "\n  %s.o: symbols without the prefix: %s\n", name, u ? u : "?");
      free(u);
    }
    CU_ASSERT_EQUAL(rc, 0);
    /* reentrant: no writable data or bss (nm types b d c g s) */
    rc = sh("cd %s/%s && nm %s.o %s_weights.o | awk '$2 ~ /^[bBdDcCgGsS]$/' | "
            "tee writable.txt | wc -l | grep -qx 0",
            WORK, dir, name, name);
    show_log_on_failure(rc, "writable data");
    CU_ASSERT_EQUAL(rc, 0);
    /* the header states RAM, flash and the shapes */
    char hpath[600];
    snprintf(hpath, sizeof hpath, "%s/%s/%s.h", WORK, dir, name);
    char *h = dy_test_slurp(hpath);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    const char *macros[] = {"_RAM_BYTES ", "_FLASH_BYTES ", "_ARENA_BYTES ", "_WEIGHT_BYTES ",
                            "_INPUT_0_SHAPE ", "_OUTPUT_0_SHAPE ", "_INPUT_0_NUMEL(batch) "};
    for (int m = 0; m < 7; m++) {
      char want[128];
      snprintf(want, sizeof want, "#define %s%s", upper, macros[m]);
      if (!strstr(h, want))
        fprintf(stderr, "\n  %s.h lacks %s\n", name, want);
      CU_ASSERT_PTR_NOT_NULL(strstr(h, want));
    }
    free(h);
    /* the same .c for a Cortex-M4F, a Cortex-M0 and AArch64 */
    if (arm) {
      rc = sh("cd %s/%s && arm-none-eabi-gcc " M4_FLAGS " -std=c11 -ffreestanding -O2 -Wall "
              "-Wextra -Werror -c %s.c -o %s-m4.o && "
              "arm-none-eabi-gcc " M0_FLAGS " -std=c11 -ffreestanding -O2 -Wall -Wextra "
              "-Werror -c %s.c -o %s-m0.o && "
              "arm-none-eabi-gcc " M0_FLAGS " -std=c99 -ffreestanding -O2 -Wall -Wextra "
              "-pedantic -Werror -c %s_weights.c -o %s_weights-m0.o",
              WORK, dir, name, name, name, name, name, name);
      show_log_on_failure(rc, "Cortex-M builds");
      CU_ASSERT_EQUAL(rc, 0);
      /* on the M4F: the model's own symbols, memcpy/memset, and libgcc's
       * __aeabi_ helpers (double precision and 64-bit division have no
       * hardware there) */
      rc = sh("cd %s/%s && arm-none-eabi-nm -g %s-m4.o | awk '{print $NF}' | "
              "grep -v -E '^(%s_|memcpy$|memset$|__aeabi_)' | wc -l | grep -qx 0",
              WORK, dir, name, name);
      CU_ASSERT_EQUAL(rc, 0);
    }
    if (a64) {
      rc = sh("cd %s/%s && aarch64-linux-gnu-gcc -std=c11 -ffreestanding -O2 -Wall -Wextra "
              "-Werror -c %s.c -o %s-a64.o && aarch64-linux-gnu-nm -u %s-a64.o | "
              "awk '{print $2}' | grep -v -E '^(memcpy|memset|%s_weights)$' | wc -l | grep -qx 0",
              WORK, dir, name, name, name, name);
      show_log_on_failure(rc, "AArch64 build");
      CU_ASSERT_EQUAL(rc, 0);
    }
  }
}

/* ---- budgets ---- */

static void expect_limit_error(int rc, const char *a, const char *b) {
  CU_ASSERT_EQUAL(rc, 1);
  char *log = last_log();
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  int lines = 0;
  for (char *c = log; *c; c++)
    lines += *c == '\n';
  bool ok = lines == 1 && strstr(log, a) && strstr(log, b);
  if (!ok)
    fprintf(stderr, "\n  expected one line naming %s and %s, got:\n%s", a, b, log);
  CU_ASSERT(ok);
  free(log);
}

static long long header_macro(const char *h, const char *name) {
  const char *s = strstr(h, name);
  return s ? strtoll(s + strlen(name), NULL, 10) : -1;
}

static void test_max_ram_and_max_flash(void) {
  setup_work();
  CU_ASSERT_EQUAL_FATAL(emit_sample("lenet5", "budget", "lenet5", "--max-batch 1"), 0);
  char *h = dy_test_slurp(WORK "/budget/lenet5.h");
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  /* RAM: the arena and the stack (measured with the host's cc, when it
   * is gcc) */
  long long stack = header_macro(h, "#define LENET5_STACK_BYTES ");
  long long ram = header_macro(h, "#define LENET5_ARENA_BYTES ") + (stack > 0 ? stack : 0);
  long long flash = header_macro(h, "#define LENET5_WEIGHT_BYTES ");
  free(h);
  CU_ASSERT(ram > 0 && flash > 0);
  char a[64], b[64];
  /* at exactly the figures: fine */
  int rc = sh("cd %s/budget && %s compile lenet5.dymodel --emit c -o ok --max-batch 1 "
              "--max-ram %lld --max-flash %lld",
              WORK, DY2STC, ram, flash);
  show_log_on_failure(rc, "at the budget");
  CU_ASSERT_EQUAL(rc, 0);
  /* one byte less: one line with both numbers, nothing written */
  rc = sh("cd %s/budget && %s compile lenet5.dymodel --emit c -o over_flash --max-batch 1 "
          "--max-flash %lld",
          WORK, DY2STC, flash - 1);
  snprintf(a, sizeof a, "%lld", flash);
  snprintf(b, sizeof b, "--max-flash %lld", flash - 1);
  expect_limit_error(rc, a, b);
  CU_ASSERT_NOT_EQUAL(sh("test -e %s/budget/over_flash.c", WORK), 0);
  rc = sh("cd %s/budget && %s compile lenet5.dymodel --emit c -o over_ram --max-batch 1 "
          "--max-ram %lld",
          WORK, DY2STC, ram - 1);
  snprintf(a, sizeof a, "%lld", ram);
  snprintf(b, sizeof b, "--max-ram %lld", ram - 1);
  expect_limit_error(rc, a, b);
  /* a bad value is a usage error */
  rc = sh("%s compile %s/budget/lenet5.dymodel --emit c -o x --max-flash 0", DY2STC, WORK);
  CU_ASSERT_EQUAL(rc, 2);
}

/* ---- only the code the model uses ---- */

/* Issue 27, item 3: NAME.c carries the GEMM micro-kernels of the tile
 * heights its kernels use, nothing else. LeNet-5's GEMMs are its three
 * fully connected layers (its convolutions are conv-small's), whose rows
 * are the batch: at --max-batch 1 one row, so dy_gemm_ukr1 alone, in the
 * text and in the object; at --max-batch 4 the kernels of 1..4 rows (on
 * both paths: 1..4 and AVX-512's 2x4, 3x3, 4x2; no 5 or 6). --report lists each function's bytes and the
 * stack bound, which the header states. For the Cortex-M4 (when
 * arm-none-eabi-gcc is there) the kernel file is at most 16 KB of text
 * at -O2 without --gc-sections. */
static void test_only_the_micro_kernels_used(void) {
  setup_work();
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s/ukr", WORK), 0);
  CU_ASSERT_EQUAL_FATAL(emit_sample("lenet5", "ukr", "lenet5", "--max-batch 1"), 0);
  int rc = sh("cd %s/ukr && grep -o 'dy_gemm_ukr[0-9x]*' lenet5.c | sort -u | tr '\\n' ' ' | "
              "grep -qx 'dy_gemm_ukr1 '", WORK);
  show_log_on_failure(rc, "micro-kernels in lenet5.c at batch 1");
  CU_ASSERT_EQUAL(rc, 0);
  rc = sh("cd %s/ukr && cc -std=c11 -O2 -c lenet5.c -o host.o && nm host.o | "
          "grep -o 'dy_gemm_ukr[0-9x]*' | sort -u | tr '\\n' ' ' | grep -qx 'dy_gemm_ukr1 '",
          WORK);
  show_log_on_failure(rc, "micro-kernels in lenet5.o at batch 1");
  CU_ASSERT_EQUAL(rc, 0);
  rc = sh("cd %s/ukr && %s compile lenet5.dymodel --emit c -o b4 --max-batch 4 && "
          "grep -o 'dy_gemm_ukr[0-9x]*' b4.c | sort -u | tr '\\n' ' ' | "
          "grep -qx 'dy_gemm_ukr1 dy_gemm_ukr2 dy_gemm_ukr2x4 dy_gemm_ukr3 dy_gemm_ukr3x3 "
          "dy_gemm_ukr4 dy_gemm_ukr4x2 '", WORK, DY2STC);
  show_log_on_failure(rc, "micro-kernels at batch 4");
  CU_ASSERT_EQUAL(rc, 0);
  /* --report: code per function and the stack, as the header states it */
  rc = sh("cd %s/ukr && %s compile lenet5.dymodel --emit c -o rep --max-batch 1 --report", WORK,
          DY2STC);
  char *log = last_log();
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "code: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "  rep_run\n"));
  char *h = dy_test_slurp(WORK "/ukr/rep.h");
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  long long stack = header_macro(h, "#define REP_STACK_BYTES ");
  const char *st = strstr(log, "stack: ");
  if (stack > 0) {
    char want[64];
    snprintf(want, sizeof want, "stack: %lld bytes", stack);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, want));
  } else {
    fprintf(stderr, "\n  (no stack bound: %.120s)", st ? st : "no stack line");
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "stack: unknown"));
  }
  free(h);
  free(log);
  if (!dy_test_have("arm-none-eabi-gcc"))
    return;
  rc = sh("cd %s/ukr && arm-none-eabi-gcc " M4_FLAGS " -std=c11 -ffreestanding -O2 -c lenet5.c "
          "-o m4.o && arm-none-eabi-size m4.o | awk 'NR == 2 { print $1; exit !($1 <= 16384) }'",
          WORK);
  log = last_log();
  fprintf(stderr, "\n  lenet5.c for the Cortex-M4 (-O2): %s bytes of text (at most 16384)",
          log ? strtok(log, "\n") : "?");
  free(log);
  CU_ASSERT_EQUAL(rc, 0);
}

/* ---- several models in one image ---- */

/* Raw f32 data of an .npy into path; false on failure. */
static bool npy_to_bin(const char *npy, const char *bin) {
  dy_tensor *t = NULL;
  dy_error err = {0};
  if (dy_npy_read(npy, &t, &err)) {
    fprintf(stderr, "\n  %s\n", err.msg);
    return false;
  }
  FILE *f = fopen(bin, "wb");
  bool ok = f && fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
  if (f)
    fclose(f);
  dy_tensor_free(t);
  return ok;
}

/* max|got - ref| / max|ref| of raw f32 file got against an .npy. */
static double bin_vs_npy(const char *bin, const char *npy) {
  dy_tensor *t = NULL;
  dy_error err = {0};
  if (dy_npy_read(npy, &t, &err))
    return INFINITY;
  char *raw = NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  double r = INFINITY;
  if (!dy_read_file(bin, &buf, &len, &err) && len == t->nbytes) {
    raw = (char *)buf;
    double md = 0, mr = 0;
    for (int64_t i = 0; i < dy_tensor_numel(t); i++) {
      float g;
      memcpy(&g, raw + 4 * i, 4);
      double y = dy_tensor_f32(t)[i];
      md = fmax(md, fabs(g - y));
      mr = fmax(mr, fabs(y));
    }
    r = md / (mr > 0 ? mr : 1);
  }
  free(buf);
  dy_tensor_free(t);
  return r;
}

static const char multi_main[] =
    "/* three models in one program, one shared arena (they run in turn) */\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"mlp.h\"\n"
    "#include \"mlp_twin.h\"\n"
    "#include \"transformer.h\"\n"
    "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    "#define ARENA MAX(MAX(MLP_RAM_BYTES, MLP_TWIN_RAM_BYTES), TRANSFORMER_RAM_BYTES)\n"
    "static unsigned char arena[ARENA + 1] __attribute__((aligned(64)));\n"
    "static float *load(const char *path, long n) {\n"
    "  float *p = malloc(sizeof(float) * (size_t)n);\n"
    "  FILE *f = fopen(path, \"rb\");\n"
    "  if (!p || !f || fread(p, sizeof(float), (size_t)n, f) != (size_t)n) exit(3);\n"
    "  fclose(f);\n"
    "  return p;\n"
    "}\n"
    "static void save(const char *path, const float *p, long n) {\n"
    "  FILE *f = fopen(path, \"wb\");\n"
    "  if (!f || fwrite(p, sizeof(float), (size_t)n, f) != (size_t)n) exit(4);\n"
    "  fclose(f);\n"
    "}\n"
    "#define RUN(name, NAME, in, out)                                          \\\n"
    "  do {                                                                    \\\n"
    "    float *x = load(in, (long)NAME##_INPUT_0_NUMEL(2));                   \\\n"
    "    float *y = malloc(sizeof(float) * (size_t)NAME##_OUTPUT_0_NUMEL(2));  \\\n"
    "    if (!y || name##_run(arena, 2, x, y) != NAME##_OK) return 1;          \\\n"
    "    save(out, y, (long)NAME##_OUTPUT_0_NUMEL(2));                         \\\n"
    "    free(x);                                                              \\\n"
    "    free(y);                                                              \\\n"
    "  } while (0)\n"
    "int main(void) {\n"
    "  RUN(mlp, MLP, \"mlp/x.bin\", \"mlp.out.bin\");\n"
    "  RUN(transformer, TRANSFORMER, \"transformer/x.bin\", \"transformer.out.bin\");\n"
    "  RUN(mlp_twin, MLP_TWIN, \"mlp/x.bin\", \"mlp_twin.out.bin\");\n"
    "  return 0;\n"
    "}\n";

static void test_models_link_into_one_program(void) {
  setup_work();
  CU_ASSERT_EQUAL_FATAL(emit_sample("mlp", "multi/mlp", "mlp", ""), 0);
  CU_ASSERT_EQUAL_FATAL(emit_sample("mlp", "multi/mlp", "mlp_twin", ""), 0);
  CU_ASSERT_EQUAL_FATAL(emit_sample("transformer", "multi/transformer", "transformer", ""), 0);
  CU_ASSERT_FATAL(npy_to_bin(WORK "/multi/mlp/x.npy", WORK "/multi/mlp/x.bin"));
  CU_ASSERT_FATAL(npy_to_bin(WORK "/multi/transformer/x.npy", WORK "/multi/transformer/x.bin"));
  FILE *f = fopen(WORK "/multi/main.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(multi_main, f);
  fclose(f);
  /* no -lm: the models need no library but memcpy/memset */
  int rc = sh("cd %s/multi && cc -std=c11 -O2 -Wall -Wextra -Werror -fno-common "
              "-Imlp -Itransformer main.c mlp/mlp.c mlp/mlp_twin.c transformer/transformer.c "
              "mlp/mlp_weights.c mlp/mlp_twin_weights.c transformer/transformer_weights.c "
              "-o multi && ./multi",
              WORK);
  show_log_on_failure(rc, "three models in one program");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double e1 = bin_vs_npy(WORK "/multi/mlp.out.bin", WORK "/multi/mlp/eager_out.npy");
  double e2 = bin_vs_npy(WORK "/multi/transformer.out.bin",
                         WORK "/multi/transformer/eager_out.npy");
  double e3 = bin_vs_npy(WORK "/multi/mlp_twin.out.bin", WORK "/multi/mlp/eager_out.npy");
  fprintf(stderr, "\n  one program: mlp %.2g, transformer %.2g, mlp_twin %.2g (vs eager)", e1,
          e2, e3);
  CU_ASSERT(e1 <= 1e-5);
  CU_ASSERT(e2 <= 1e-4);
  CU_ASSERT(e3 <= 1e-5);
}

/* ---- on the targets ---- */

/* Outputs printed by samples/firmware/app.c ("out[i] = v 0xBITS") into
 * bits[]; returns how many, or -1 unless the run said status 0 and done. */
static int parse_firmware_output(const char *log, uint32_t *bits, int max) {
  if (!log || !strstr(log, "lenet5: status 0") || !strstr(log, "\ndone"))
    return -1;
  int n = 0;
  for (const char *s = strstr(log, "out["); s && n < max; s = strstr(s + 1, "out[")) {
    int i;
    double v;
    unsigned long u;
    if (sscanf(s, "out[%d] = %lf 0x%lx", &i, &v, &u) != 3 || i != n)
      return -1;
    bits[n++] = (uint32_t)u;
  }
  return n;
}

/* Compare outputs (bit patterns) with the host's .npy: the largest
 * difference relative to the output's scale; *identical if every bit
 * agrees. */
static double compare_bits(const uint32_t *bits, int n, const char *npy, bool *identical) {
  dy_tensor *t = NULL;
  dy_error err = {0};
  *identical = false;
  if (dy_npy_read(npy, &t, &err) || dy_tensor_numel(t) != n) {
    dy_tensor_free(t);
    return INFINITY;
  }
  double md = 0, mr = 0;
  bool same = true;
  for (int i = 0; i < n; i++) {
    float g;
    memcpy(&g, &bits[i], 4);
    float h = dy_tensor_f32(t)[i];
    same &= memcmp(&g, &h, 4) == 0;
    md = fmax(md, fabs((double)g - h));
    mr = fmax(mr, fabs((double)h));
  }
  dy_tensor_free(t);
  *identical = same;
  return md / (mr > 0 ? mr : 1);
}

/* The host executable's output for WORK/fw/x.npy at WORK/fw/host/out.npy. */
static int host_reference(void) {
  int rc = sh("cd %s/fw && %s compile lenet5.dymodel -o host_lenet5 --max-batch 1 && "
              "./host_lenet5 --input x=x.npy --output-dir host",
              WORK, DY2STC);
  show_log_on_failure(rc, "host executable");
  return rc;
}

static void run_on_board(const char *board, const char *elf, const char *what) {
  int rc = sh(QEMU_ARM " -M %s -kernel %s/fw/%s", board, WORK, elf);
  char *log = last_log();
  fprintf(stderr, "\n  %s under qemu-system-arm -M %s:\n%s", what, board, log ? log : "");
  CU_ASSERT_EQUAL(rc, 0);
  uint32_t bits[16];
  int n = parse_firmware_output(log, bits, 16);
  free(log);
  CU_ASSERT_EQUAL_FATAL(n, 10);
  bool identical;
  double d = compare_bits(bits, n, WORK "/fw/host/out.npy", &identical);
  fprintf(stderr, "  vs the host executable: max difference %.3g of the output's scale%s\n", d,
          identical ? " (bit-identical)" : "");
  CU_ASSERT(d <= 1e-5);
}

static void test_lenet5_on_cortex_m4_under_qemu(void) {
  setup_work();
  if (!have_arm())
    return;
  int rc = sh("rm -rf %s/fw && sh %s/build.sh %s %s/lenet5 %s/fw m4 m0", WORK, FIRMWARE, DY2STC,
              SAMPLES, WORK);
  char *log = last_log();
  if (rc)
    fprintf(stderr, "\n  build.sh failed (%d):\n%s", rc, log ? log : "");
  else
    fprintf(stderr, "\n  arm-none-eabi-size (model object, whole program):\n%s",
            log ? strstr(log, "   text") : "");
  free(log);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL_FATAL(host_reference(), 0);
  run_on_board("mps2-an386", "app-m4.elf", "Cortex-M4F (hard float)");
}

/* ---- a detection head's NMS on the Cortex-M4 (issue 29) ----
 * boxes f32 [1, 12, 4] (center form) and class logits [1, 2, 12] ->
 * Sigmoid -> NonMaxSuppression (at most 3 a class, IoU 0.45, score 0.3):
 * the kept [n, 3] indices, n a size set at run time. Built with
 * samples/firmware's startup and linker script and a small app that
 * prints the count and the rows; the rows must be the host executable's. */
static const char nms_app[] =
    "#include <stdio.h>\n"
    "#include \"nms.h\"\n"
    "#include \"nms_input.h\"\n"
    "static unsigned char arena[NMS_ARENA_BYTES + 1] __attribute__((aligned(NMS_ARENA_ALIGN)));\n"
    "static int64_t sel[NMS_OUTPUT_0_NUMEL(1, NMS_MAX_DIM_NMS)];\n"
    "int main(void) {\n"
    "  int64_t n = -1;\n"
    "  int rc = nms_run(arena, 1, &n, boxes, logits, sel);\n"
    "  printf(\"nms: status %d count %ld\\n\", rc, (long)n);\n"
    "  for (int64_t i = 0; rc == 0 && i < n; i++)\n"
    "    printf(\"sel %ld %ld %ld\\n\", (long)sel[3 * i], (long)sel[3 * i + 1],\n"
    "           (long)sel[3 * i + 2]);\n"
    "  printf(\"done\\n\");\n"
    "  return rc;\n"
    "}\n";

static void test_nms_on_cortex_m4_under_qemu(void) {
  setup_work();
  if (!have_arm())
    return;
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s/nms && mkdir -p %s/nms", WORK, WORK), 0);
  ob_model *m = ob_new(13);
  ob_input(m, "boxes", OB_F32, 3, (int64_t[]){1, 12, 4}, NULL);
  ob_input(m, "logits", OB_F32, 3, (int64_t[]){1, 2, 12}, NULL);
  ob_init_i64(m, "mo", 1, (int64_t[]){1}, (int64_t[]){3});
  ob_init_f32(m, "iou", 1, (int64_t[]){1}, (float[]){0.45f});
  ob_init_f32(m, "st", 1, (int64_t[]){1}, (float[]){0.3f});
  ob_node(m, "Sigmoid", "sig", 1, (const char *[]){"logits"}, 1, (const char *[]){"scores"});
  Onnx__NodeProto *nd = ob_node(m, "NonMaxSuppression", "nms", 5,
                                (const char *[]){"boxes", "scores", "mo", "iou", "st"}, 1,
                                (const char *[]){"sel"});
  ob_attr_i(m, nd, "center_point_box", 1);
  ob_output(m, "sel", OB_I64);
  CU_ASSERT_EQUAL_FATAL(ob_save(m, WORK "/nms/nms.onnx"), 0);
  ob_free(m);
  float boxes[48], logits[24];
  uint32_t r = 7;
  for (int i = 0; i < 48; i++) { /* centres in [0, 1), sizes in [0.1, 0.5) */
    r = r * 1664525u + 1013904223u;
    float u = (float)(r >> 8) / 16777216.0f;
    boxes[i] = i % 4 < 2 ? u : 0.1f + 0.4f * u;
  }
  for (int i = 0; i < 24; i++) {
    r = r * 1664525u + 1013904223u;
    logits[i] = ((float)(r >> 8) / 16777216.0f - 0.5f) * 6.0f;
  }
  dy_test_write_f32(WORK "/nms/boxes.npy", 3, (int64_t[]){1, 12, 4}, boxes);
  dy_test_write_f32(WORK "/nms/logits.npy", 3, (int64_t[]){1, 2, 12}, logits);
  FILE *f = fopen(WORK "/nms/nms_input.h", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "static const float boxes[48] = {");
  for (int i = 0; i < 48; i++)
    fprintf(f, "%s%a", i ? ", " : "", (double)boxes[i]);
  fprintf(f, "};\nstatic const float logits[24] = {");
  for (int i = 0; i < 24; i++)
    fprintf(f, "%s%a", i ? ", " : "", (double)logits[i]);
  fprintf(f, "};\n");
  fclose(f);
  f = fopen(WORK "/nms/app.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(nms_app, f);
  fclose(f);
  /* the host executable's rows */
  int rc = sh("cd %s/nms && %s compile nms.onnx -o host && ./host --input boxes=boxes.npy "
              "--input logits=logits.npy --output-dir h", WORK, DY2STC);
  show_log_on_failure(rc, "host executable");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  dy_tensor *want = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_read(WORK "/nms/h/sel.npy", &want, &err), &err);
  /* the firmware */
  rc = sh("cd %s/nms && %s compile nms.onnx --emit c --name nms -o nms --max-batch 1 "
          "--cc arm-none-eabi-gcc --cflags '" M4_FLAGS " -ffreestanding' && "
          "for s in nms nms_weights; do arm-none-eabi-gcc " M4_FLAGS " -std=c11 -O2 -Wall "
          "-Wextra -pedantic -Werror -ffreestanding -c $s.c -o $s.o || exit 1; done && "
          "arm-none-eabi-gcc " M4_FLAGS " -std=c11 -O2 -Wall -Wextra -Werror -I. -c app.c -o app.o && "
          "arm-none-eabi-gcc " M4_FLAGS " -std=c11 -O2 -c %s/startup.c -o startup.o && "
          "arm-none-eabi-gcc " M4_FLAGS " --specs=rdimon.specs -nostartfiles -T %s/mps2.ld "
          "-Wl,--gc-sections startup.o app.o nms.o nms_weights.o -o nms-m4.elf",
          WORK, DY2STC, FIRMWARE, FIRMWARE);
  show_log_on_failure(rc, "the NMS firmware's build");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh(QEMU_ARM " -M mps2-an386 -kernel %s/nms/nms-m4.elf", WORK);
  char *log = last_log();
  fprintf(stderr, "\n  NMS on the Cortex-M4F under qemu-system-arm -M mps2-an386:\n%s",
          log ? log : "");
  CU_ASSERT_EQUAL(rc, 0);
  long n = -1;
  const char *p = log ? strstr(log, "nms: status 0 count ") : NULL;
  CU_ASSERT_FATAL(p && sscanf(p, "nms: status 0 count %ld", &n) == 1 && strstr(log, "\ndone"));
  CU_ASSERT_EQUAL(n, want->type.shape[0]);
  CU_ASSERT(n >= 2); /* the draw keeps boxes of both classes */
  const int64_t *wv = want->data;
  long i = 0;
  for (const char *q = strstr(p, "sel "); q && i < n; q = strstr(q + 1, "sel "), i++) {
    long a, b, c;
    CU_ASSERT(sscanf(q, "sel %ld %ld %ld", &a, &b, &c) == 3 && a == wv[3 * i] &&
              b == wv[3 * i + 1] && c == wv[3 * i + 2]);
  }
  CU_ASSERT_EQUAL(i, n);
  free(log);
  dy_tensor_free(want);
}

static void test_lenet5_cortex_m0_build_under_qemu(void) {
  setup_work();
  if (!have_arm())
    return;
  if (sh("test -f %s/fw/app-m0.elf && test -f %s/fw/host/out.npy", WORK, WORK) != 0) {
    int rc = sh("rm -rf %s/fw && sh %s/build.sh %s %s/lenet5 %s/fw m0", WORK, FIRMWARE, DY2STC,
                SAMPLES, WORK);
    show_log_on_failure(rc, "build.sh m0");
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(host_reference(), 0);
  }
  /* ARMv6-M code with soft float; the Cortex-M3 of AN385 runs it */
  run_on_board("mps2-an385", "app-m0.elf", "Cortex-M0 build (soft float)");
}

/* A driver for one model NAME: input 0 from x.bin, output 0 to out.bin,
 * batch 2 (printf arguments: name, NAME x4, name, NAME). */
static const char one_main[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"%s.h\"\n"
    "static unsigned char arena[%s_RAM_BYTES + 1] __attribute__((aligned(64)));\n"
    "int main(void) {\n"
    "  long nx = (long)%s_INPUT_0_NUMEL(2), ny = (long)%s_OUTPUT_0_NUMEL(2);\n"
    "  float *x = malloc(sizeof(float) * (size_t)nx), *y = malloc(sizeof(float) * (size_t)ny);\n"
    "  FILE *f = fopen(\"x.bin\", \"rb\");\n"
    "  if (!x || !y || !f || fread(x, sizeof(float), (size_t)nx, f) != (size_t)nx) return 3;\n"
    "  fclose(f);\n"
    "  if (%s_run(arena, 2, x, y) != %s_OK) return 1;\n"
    "  f = fopen(\"out.bin\", \"wb\");\n"
    "  if (!f || fwrite(y, sizeof(float), (size_t)ny, f) != (size_t)ny) return 4;\n"
    "  fclose(f);\n"
    "  return 0;\n"
    "}\n";

/* The emitted .c of LeNet-5 and of the transformer (math functions),
 * built for AArch64 (static; NEON where the code has a NEON path) and for
 * the host (the compiler's baseline) with the same driver: the AArch64
 * run under qemu-aarch64 must agree with the host's and with eager. */
static void test_aarch64_under_qemu(void) {
  setup_work();
  if (!dy_test_have_aarch64())
    return;
  const char *models[] = {"lenet5", "transformer"};
  for (int i = 0; i < 2; i++) {
    const char *s = models[i];
    char dir[64], upper[64], path[600];
    snprintf(dir, sizeof dir, "a64_%s", s);
    for (size_t k = 0; k <= strlen(s); k++)
      upper[k] = (char)(s[k] >= 'a' && s[k] <= 'z' ? s[k] - 32 : s[k]);
    CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s/%s", WORK, dir), 0);
    CU_ASSERT_EQUAL_FATAL(emit_sample(s, dir, s, ""), 0);
    snprintf(path, sizeof path, "%s/%s/main.c", WORK, dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, one_main, s, upper, upper, upper, s, upper);
    fclose(f);
    char x_npy[600], x_bin[600];
    snprintf(x_npy, sizeof x_npy, "%s/%s/x.npy", WORK, dir);
    snprintf(x_bin, sizeof x_bin, "%s/%s/x.bin", WORK, dir);
    CU_ASSERT_FATAL(npy_to_bin(x_npy, x_bin));
    int rc = sh("cd %s/%s && "
                "aarch64-linux-gnu-gcc -std=c11 -O2 -Wall -Wextra -Werror -static main.c %s.c "
                "%s_weights.c -o a64 && qemu-aarch64 -L /usr/aarch64-linux-gnu ./a64 && "
                "mv out.bin a64.bin && "
                "cc -std=c11 -O2 -Wall -Wextra -Werror main.c %s.c %s_weights.c -o host && "
                "./host && mv out.bin host.bin",
                WORK, dir, s, s, s, s);
    show_log_on_failure(rc, s);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char a[600], h[600];
    snprintf(a, sizeof a, "%s/%s/a64.bin", WORK, dir);
    snprintf(h, sizeof h, "%s/%s/host.bin", WORK, dir);
    uint8_t *ab = NULL, *hb = NULL;
    size_t an = 0, hn = 0;
    dy_error err = {0};
    CU_ASSERT_FATAL(!dy_read_file(a, &ab, &an, &err) && !dy_read_file(h, &hb, &hn, &err));
    bool identical = an == hn && memcmp(ab, hb, an) == 0;
    double d = INFINITY, scale = 0;
    if (an == hn) {
      d = 0;
      for (size_t k = 0; k + 4 <= an; k += 4) {
        float g, r;
        memcpy(&g, ab + k, 4);
        memcpy(&r, hb + k, 4);
        d = fmax(d, fabs((double)g - r));
        scale = fmax(scale, fabs((double)r));
      }
      d /= scale > 0 ? scale : 1;
    }
    free(ab);
    free(hb);
    char eager[600];
    snprintf(eager, sizeof eager, "%s/%s/eager_out.npy", WORK, dir);
    double e = bin_vs_npy(a, eager);
    fprintf(stderr, "\n  %s on AArch64 (qemu-aarch64) vs the host: %.3g of the scale%s; "
                    "vs eager %.3g", s, d, identical ? " (bit-identical)" : "", e);
    CU_ASSERT(d <= 1e-5);
    CU_ASSERT(e <= 1e-4);
  }
}

/* ---- a training step on the Cortex-M4 ---- */

/* The losses "step K loss V 0xBITS" a training program printed; count. */
static int parse_losses(const char *log, uint32_t *bits, int cap) {
  int n = 0;
  for (const char *s = log; s && (s = strstr(s, "step ")) && n < cap; s++) {
    int k;
    double v;
    unsigned long u;
    if (sscanf(s, "step %d loss %lf 0x%lx", &k, &v, &u) != 3 || k != n)
      return -1;
    bits[n++] = (uint32_t)u;
  }
  return n;
}

/* A small classifier (8 -> linear 16 -> relu -> linear 4) trained by
 * samples/firmware/build_train.sh: five SGD steps under qemu-system-arm
 * give the losses of the same program built for the host, and they fall. */
static void test_training_steps_on_cortex_m4_under_qemu(void) {
  setup_work();
  if (!have_arm())
    return;
  const char *dir = WORK "/fwtrain";
  sh("rm -rf %s && mkdir -p %s", dir, dir);
  dy_buf b = {0};
  dy_buf_printf(&b, "program {\n  var x : f32[-1,8] feed 0\n");
  const char *vars[4][2] = {{"fc1.weight", "8,16"}, {"fc1.bias", "16"},
                            {"fc2.weight", "16,4"}, {"fc2.bias", "4"}};
  const int numel[4] = {128, 16, 64, 4};
  for (int v = 0; v < 4; v++) {
    dy_buf_printf(&b, "  var %s : f32[%s] persistable trainable = [", vars[v][0], vars[v][1]);
    for (int i = 0; i < numel[v]; i++)
      dy_buf_printf(&b, "%s%.6f", i ? ", " : "", 0.4 * sin(1.7 * i + v));
    dy_buf_printf(&b, "]\n");
  }
  dy_buf_printf(&b, "  var h : f32[-1,16]\n  var hb : f32[-1,16]\n  var a : f32[-1,16]\n"
                    "  var o : f32[-1,4]\n  var logits : f32[-1,4]\n  block 0 parent -1 {\n"
                    "    h = matmul(x, fc1.weight) {transpose_x = 0, transpose_y = 0}  @net.c:1\n"
                    "    hb = add(h, fc1.bias)  @net.c:1\n    a = relu(hb)  @net.c:2\n"
                    "    o = matmul(a, fc2.weight) {transpose_x = 0, transpose_y = 0}  @net.c:3\n"
                    "    logits = add(o, fc2.bias)  @net.c:3\n  }\n  fetch 0 logits\n}\n");
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(b.s, &p, &err), &err);
  dy_buf_free(&b);
  char path[600];
  snprintf(path, sizeof path, "%s/net", dir);
  DY_ASSERT_OK(dy_model_save(p, path, &err), &err);
  dy_program_free(p);
  enum { B = 12 };
  float x[B * 8];
  int64_t y[B];
  for (int i = 0; i < B; i++) {
    for (int k = 0; k < 8; k++)
      x[i * 8 + k] = (float)cos(0.9 * i + 0.3 * k);
    y[i] = i % 4;
  }
  CU_ASSERT_FATAL(dy_test_write_samples(dir, x, B, 8, y));
  int rc = sh("cd %s && sh %s/build_train.sh %s net.dymodel x.npy y.npy . m4 host", dir,
              FIRMWARE, DY2STC);
  show_log_on_failure(rc, "build_train.sh");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("%s/train-host", dir);
  char *host = last_log();
  CU_ASSERT_EQUAL(rc, 0);
  rc = sh(QEMU_ARM " -M mps2-an386 -kernel %s/train-m4.elf", dir);
  char *board = last_log();
  fprintf(stderr, "\n  training steps under qemu-system-arm -M mps2-an386:\n%s",
          board ? board : "");
  CU_ASSERT_EQUAL(rc, 0);
  uint32_t hb[8], mb[8];
  int nh = parse_losses(host, hb, 8), nm = parse_losses(board, mb, 8);
  free(host);
  free(board);
  CU_ASSERT_EQUAL_FATAL(nh, 5);
  CU_ASSERT_EQUAL_FATAL(nm, 5);
  for (int i = 0; i < 5; i++) {
    float h, m;
    memcpy(&h, &hb[i], 4);
    memcpy(&m, &mb[i], 4);
    CU_ASSERT(fabs((double)h - m) <= 1e-5 * fabs((double)h));
  }
  float first, last;
  memcpy(&first, &mb[0], 4);
  memcpy(&last, &mb[4], 4);
  CU_ASSERT(last < first);
}

void dy_test_register(void) {
  DY_SUITE("firmware");
  DY_TEST(test_freestanding_prefixed_reentrant);
  DY_TEST(test_max_ram_and_max_flash);
  DY_TEST(test_only_the_micro_kernels_used);
  DY_TEST(test_models_link_into_one_program);
  DY_TEST(test_lenet5_on_cortex_m4_under_qemu);
  DY_TEST(test_lenet5_cortex_m0_build_under_qemu);
  DY_TEST(test_nms_on_cortex_m4_under_qemu);
  DY_TEST(test_aarch64_under_qemu);
  DY_TEST(test_training_steps_on_cortex_m4_under_qemu);
}
