/* test_control_codegen.c - cond and while through the memory plan and the
 * generated C (compiler/passes/memplan.c, codegen/program/blocks.c's if/while driver,
 * codegen/ops/emit_control.c).
 *
 * Each Program is compiled in-process (dy_compile_program, --emit c), built
 * with -std=c99 -Wall -Wextra -Werror -pedantic beside a small driver that
 * calls NAME_run and prints its status and outputs, and compared with the
 * static executor on inputs that take every branch and loop counts 0, 1 and
 * many. A loop that does not end returns NAME_ERR_LOOP at the bound
 * --max-iterations sets (or the op's own max_iterations), where the
 * executor reports DY_STATUS_LIMIT. The plan is checked to share a cond's
 * branches and a loop body's temporaries, and `dy2stc compile --report`
 * states the arena with its lower bound. The same sources build for the
 * Cortex-M4 (freestanding) when arm-none-eabi-gcc is there.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

#define DY2STC DY2STC_PATH
#define WORK DY_BUILD_DIR "/control_codegen"
#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)
/* the generated code runs under AddressSanitizer and UBSan: an arena
 * access out of bounds or a misaligned one stops the driver */
#define SAN "-fsanitize=address,undefined -fno-sanitize-recover=all"
#define M4_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard"
#define ARM_CC "arm-none-eabi-gcc " M4_FLAGS
#define FIRMWARE DY_SOURCE_DIR "/samples/firmware"
#define QEMU_ARM "timeout 300 qemu-system-arm -nographic -semihosting-config enable=on,target=native"

/* Halve x until max |x| <= 1, counting the trips: 0, 1 or many by input. */
static const char *halve_text =
    "program {\n"
    "  var x : f32[-1,3] feed 0\n"
    "  var one : f32[1] persistable = [1.0]\n"
    "  var half : f32[1] persistable = [0.5]\n"
    "  var k0 : f32[1] persistable = [0.0]\n"
    "  var x_c : f32[-1,3]\n"
    "  var k_c : f32[1]\n"
    "  var a_c : f32[-1,3]\n"
    "  var m_c : f32[]\n"
    "  var go : bool[1]\n"
    "  var x_b : f32[-1,3]\n"
    "  var k_b : f32[1]\n"
    "  var x_n : f32[-1,3]\n"
    "  var k_n : f32[1]\n"
    "  var x_out : f32[-1,3]\n"
    "  var k_out : f32[1]\n"
    "  block 0 parent -1 {\n"
    "    x_out, k_out = while(x, k0, one, half) {n_carried = 2, cond_block = 1, "
    "body_block = 2, max_iterations = 0}  @halve.c:3\n"
    "  }\n"
    "  block 1 parent 0 (x_c, k_c) {\n"
    "    a_c = abs(x_c)  @halve.c:4\n"
    "    m_c = reduce_max(a_c) {axes = [], keepdim = 0}  @halve.c:4\n"
    "    go = greater(m_c, one)  @halve.c:4\n"
    "    yield go\n"
    "  }\n"
    "  block 2 parent 0 (x_b, k_b) {\n"
    "    x_n = mul(x_b, half)  @halve.c:5\n"
    "    k_n = add(k_b, one)  @halve.c:6\n"
    "    yield x_n, k_n\n"
    "  }\n"
    "  fetch 0 x_out\n"
    "  fetch 1 k_out\n"
    "}\n";

/* sum(x) < 0 ? (halve x as above) : 2 * relu(x): a while nested in a branch */
static const char *nested_text =
    "program {\n"
    "  var x : f32[-1,3] feed 0\n"
    "  var zero : f32[1] persistable = [0.0]\n"
    "  var one : f32[1] persistable = [1.0]\n"
    "  var half : f32[1] persistable = [0.5]\n"
    "  var s : f32[]\n"
    "  var p : bool[1]\n"
    "  var t_out : f32[-1,3]\n"
    "  var y_c : f32[-1,3]\n"
    "  var a_c : f32[-1,3]\n"
    "  var m_c : f32[]\n"
    "  var go : bool[1]\n"
    "  var y_b : f32[-1,3]\n"
    "  var y_n : f32[-1,3]\n"
    "  var e_0 : f32[-1,3]\n"
    "  var e_1 : f32[-1,3]\n"
    "  var out : f32[-1,3]\n"
    "  block 0 parent -1 {\n"
    "    s = reduce_sum(x) {axes = [], keepdim = 0}  @nest.c:2\n"
    "    p = less(s, zero)  @nest.c:3\n"
    "    out = cond(p, x, one, half) {then_block = 1, else_block = 2}  @nest.c:4\n"
    "  }\n"
    "  block 1 parent 0 () {\n"
    "    t_out = while(x, one, half) {n_carried = 1, cond_block = 3, body_block = 4, "
    "max_iterations = 0}  @nest.c:5\n"
    "    yield t_out\n"
    "  }\n"
    "  block 2 parent 0 () {\n"
    "    e_0 = relu(x)  @nest.c:8\n"
    "    e_1 = add(e_0, e_0)  @nest.c:9\n"
    "    yield e_1\n"
    "  }\n"
    "  block 3 parent 1 (y_c) {\n"
    "    a_c = abs(y_c)  @nest.c:5\n"
    "    m_c = reduce_max(a_c) {axes = [], keepdim = 0}  @nest.c:5\n"
    "    go = greater(m_c, one)  @nest.c:5\n"
    "    yield go\n"
    "  }\n"
    "  block 4 parent 1 (y_b) {\n"
    "    y_n = mul(y_b, half)  @nest.c:6\n"
    "    yield y_n\n"
    "  }\n"
    "  fetch 0 out\n"
    "}\n";

/* (a, b) <- (b, a + b) five times from (x, x): the body yields a param in
 * another slot, so that param keeps its own copy (memplan's hazard). */
static const char *fib_text =
    "program {\n"
    "  var x : f32[-1,3] feed 0\n"
    "  var zero : f32[1] persistable = [0.0]\n"
    "  var one : f32[1] persistable = [1.0]\n"
    "  var five : f32[1] persistable = [5.0]\n"
    "  var a_c : f32[-1,3]\n"
    "  var b_c : f32[-1,3]\n"
    "  var i_c : f32[1]\n"
    "  var go : bool[1]\n"
    "  var a_b : f32[-1,3]\n"
    "  var b_b : f32[-1,3]\n"
    "  var i_b : f32[1]\n"
    "  var s_b : f32[-1,3]\n"
    "  var i_n : f32[1]\n"
    "  var a_out : f32[-1,3]\n"
    "  var b_out : f32[-1,3]\n"
    "  var i_out : f32[1]\n"
    "  block 0 parent -1 {\n"
    "    a_out, b_out, i_out = while(x, x, zero, five, one) {n_carried = 3, cond_block = 1, "
    "body_block = 2, max_iterations = 0}  @fib.c:3\n"
    "  }\n"
    "  block 1 parent 0 (a_c, b_c, i_c) {\n"
    "    go = less(i_c, five)  @fib.c:4\n"
    "    yield go\n"
    "  }\n"
    "  block 2 parent 0 (a_b, b_b, i_b) {\n"
    "    s_b = add(a_b, b_b)  @fib.c:5\n"
    "    i_n = add(i_b, one)  @fib.c:6\n"
    "    yield b_b, s_b, i_n\n"
    "  }\n"
    "  fetch 0 a_out\n"
    "  fetch 1 b_out\n"
    "}\n";

/* Inputs (batch 2, f32[2,3]) and what they exercise. */
static const float x_small[6] = {0.5f, -1, 0.25f, 1, 0, -0.75f};      /* 0 trips */
static const float x_one[6] = {1.5f, -1, 0.25f, 1, 0, -0.75f};        /* 1 trip */
static const float x_many[6] = {100, -3, 0.25f, 7, 0, -40};           /* 7 trips */
static const float x_neg_many[6] = {-100, -3, 0.25f, 7, 0, -40};      /* then, 7 */
static const float x_neg_one[6] = {-1.5f, -1, 0.25f, 1, 0, -0.75f};   /* then, 1 */
static const float x_neg_small[6] = {-0.5f, -1, 0.25f, 1, 0, -0.75f}; /* then, 0 */
static const float x_pos[6] = {3, -1, 2, 1, 0, -0.5f};                /* else */


/* text with the first `from` replaced by `to` (malloc'd). */
static char *edit(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1, k = (size_t)(at - text);
  char *s = malloc(n);
  memcpy(s, text, k);
  strcpy(s + k, to);
  strcat(s, at + strlen(from));
  return s;
}

static void show_log(void) {
  char *log = dy_test_slurp(WORK "/last.log");
  fprintf(stderr, "\n%s\n", log ? log : "(no log)");
  free(log);
}

/* Compile p (taken) as dir/NAME.c + NAME.h (opt_level: the pass
 * pipeline's -O). */
static bool emit_c_program(dy_program *p, const char *dir, const char *name, int opt_level,
                           int64_t max_iterations, dy_compile_report *rep) {
  dy_compile_options o = dy_compile_options_default();
  o.name = name;
  o.max_iterations = max_iterations;
  o.passes.opt_level = opt_level;
  o.passes.verify_each = 1;
  dy_codegen_output co = {0};
  dy_error err = {0};
  char base[512];
  snprintf(base, sizeof base, "%s/%s", dir, name);
  mkdir(WORK, 0777);
  mkdir(dir, 0777);
  dy_status s = dy_compile_program(p, &o, &co, rep, &err);
  if (!s)
    s = dy_write_sources(&co, base, &err);
  if (s)
    fprintf(stderr, "\n  compile failed: %s\n", err.msg);
  dy_codegen_output_free(&co);
  dy_program_free(p);
  return s == DY_OK;
}

static bool emit_c(const char *text, const char *dir, const char *name, int opt_level,
                   int64_t max_iterations, dy_compile_report *rep) {
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  return emit_c_program(p, dir, name, opt_level, max_iterations, rep);
}

/* "static const float x[6] = {...};" for the driver (buf holds it whole:
 * n >= 20 bytes per value). */
static void decl_f32(char *buf, size_t n, const char *name, const float *x, int k) {
  size_t at = (size_t)snprintf(buf, n, "static const float %s[%d] = {", name, k);
  for (int i = 0; i < k && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%.9g", i ? ", " : "", (double)x[i]);
  if (at < n)
    snprintf(buf + at, n - at, "};\n");
}

/* Build dir/NAME.c (and NAME_weights.c) with a driver that declares the inputs (decls), calls
 * NAME_run(arena, batch, args, outputs...) and prints the status, then
 * every output element; run it; parse into rc and got. Returns the number
 * of values read, -1 on a build failure. */
static int run_c_on(const char *dir, const char *name, int batch, const char *decls,
                    const char *args, int n_out, const char *out_ctype, int *rc, float *got,
                    int cap, bool m4) {
  char path[600];
  snprintf(path, sizeof path, "%s/drv.c", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char up[64];
  size_t k = 0;
  for (; name[k] && k + 1 < sizeof up; k++)
    up[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 'a' + 'A' : name[k]);
  up[k] = '\0';
  fprintf(f, "#include <stdio.h>\n#include \"%s.h\"\n", name);
  fprintf(f, "static _Alignas(64) unsigned char arena[%s_ARENA_BYTES + 1];\n%s", up, decls);
  for (int i = 0; i < n_out; i++)
    fprintf(f, "static %s y%d[%s_OUTPUT_%d_NUMEL(%d)];\n", out_ctype, i, up, i, batch);
  fprintf(f, "int main(void) {\n  int rc = %s_run(arena, %d, %s", name, batch, args);
  for (int i = 0; i < n_out; i++)
    fprintf(f, ", y%d", i);
  fprintf(f, ");\n  printf(\"%%d\\n\", rc);\n");
  for (int i = 0; i < n_out; i++)
    fprintf(f, "  for (long i = 0; i < (long)%s_OUTPUT_%d_NUMEL(%d); i++)\n"
               "    printf(\"%%.9g\\n\", (double)y%d[i]);\n", up, i, batch, i);
  fprintf(f, "  return 0;\n}\n");
  fclose(f);
  /* -Wno-aggressive-loop-optimizations: for the early-exit and GRU samples
   * arm-none-eabi-gcc -O2 clones the GEMM micro-kernel (codegen/rt/
   * dy_gemm.h) by constant propagation and then warns that its k loop would
   * overrun a 32-bit address space after 2^30 trips (gone with
   * -fno-ipa-cp; the clones come from the conv/matmul kernels' constant
   * arguments to dy_gemm_tile, not from the if/while in NAME_run) */
  int b = m4 ? sh("cd %s && " ARM_CC " -std=c99 -O2 -Wall -Wextra -Werror -pedantic "
                  "-Wno-aggressive-loop-optimizations "
                  "-ffreestanding -c %s.c -o %s-m4.o && " ARM_CC " -std=c99 -O2 -pedantic -Werror "
                  "-c %s_weights.c -o %s_weights-m4.o && " ARM_CC " -std=c11 -O2 -c drv.c -o "
                  "drv-m4.o && " ARM_CC " -std=c11 -O2 -c " FIRMWARE "/startup.c -o startup-m4.o"
                  " && " ARM_CC " --specs=rdimon.specs -nostartfiles -T " FIRMWARE "/mps2.ld "
                  "-Wl,--gc-sections startup-m4.o drv-m4.o %s-m4.o %s_weights-m4.o "
                  "-o drv-m4.elf && " QEMU_ARM " -M mps2-an386 -kernel drv-m4.elf > out.txt",
                  dir, name, name, name, name, name, name)
             : sh("cd %s && cc -std=c99 -Wall -Wextra -Werror -pedantic -O1 %s -c %s.c "
                  "%s_weights.c && cc -std=c11 -Wall -Wextra -Werror -O1 drv.c %s.o "
                  "%s_weights.o -o drv %s && ./drv > out.txt",
                  dir, SAN, name, name, name, name, SAN);
  if (b != 0) {
    show_log();
    return -1;
  }
  snprintf(path, sizeof path, "%s/out.txt", dir);
  f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  int n = 0;
  if (fscanf(f, "%d", rc) != 1)
    *rc = -1;
  while (n < cap && fscanf(f, "%f", &got[n]) == 1)
    n++;
  fclose(f);
  return n;
}

static int run_c(const char *dir, const char *name, int batch, const char *decls,
                 const char *args, int n_out, int *rc, float *got, int cap) {
  return run_c_on(dir, name, batch, decls, args, n_out, "float", rc, got, cap, false);
}

/* run_c on batch 2 of one input x of f32[2,3]. */
static int run_c_x(const char *dir, const char *name, const float *x, int n_out, int *rc,
                   float *got, int cap) {
  char decls[512];
  decl_f32(decls, sizeof decls, "x", x, 6);
  return run_c(dir, name, 2, decls, "x", n_out, rc, got, cap);
}

/* The static executor on batch 2 of x: status and outputs, flattened. */
static dy_status run_executor(dy_program *p, const float *x, float *want, int cap, int *n) {
  int64_t shape[2] = {2, 3};
  dy_tensor *in = dy_tensor_from_data(DY_F32, 2, shape, x);
  dy_tensor *out[4] = {0};
  dy_error err = {0};
  dy_status s = dy_executor_run(p, &in, 1, out, p->n_fetches, &err);
  *n = 0;
  for (int i = 0; i < p->n_fetches && !s; i++) {
    CU_ASSERT_EQUAL_FATAL(out[i]->type.dtype, DY_F32);
    const float *d = out[i]->data;
    for (int64_t k = 0; k < dy_tensor_numel(out[i]) && *n < cap; k++)
      want[(*n)++] = d[k];
  }
  for (int i = 0; i < 4; i++)
    dy_tensor_free(out[i]);
  dy_tensor_free(in);
  return s;
}

/* compiled C == executor on x, at -O0 and -O2. */
static void agree(const char *text, const char *tag, const float *x) {
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  float want[32], got[32];
  int nw = 0;
  dy_status s = run_executor(p, x, want, 32, &nw);
  CU_ASSERT_EQUAL(s, DY_OK);
  for (int o = 0; o <= 2; o += 2) { /* -O0 and the full pipeline */
    char dir[300], name[64];
    snprintf(dir, sizeof dir, WORK "/%s_O%d", tag, o);
    snprintf(name, sizeof name, "%s", tag);
    dy_compile_report rep;
    CU_ASSERT_FATAL(emit_c(text, dir, name, o, 0, &rep));
    int rc = -1, ng = run_c_x(dir, name, x, p->n_fetches, &rc, got, 32);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(ng, nw);
    for (int i = 0; i < ng && i < nw; i++)
      DY_ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + fabs(want[i])));
  }
  dy_program_free(p);
}

/* The executor on x gives n values, value i0 = v0 and value i1 = v1. */
static void executor_gives(const char *text, const float *x, int n_want, int i0, double v0,
                           int i1, double v1) {
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  float want[16];
  int n = 0;
  CU_ASSERT_EQUAL(run_executor(p, x, want, 16, &n), DY_OK);
  CU_ASSERT_EQUAL_FATAL(n, n_want);
  DY_ASSERT_NEAR(want[i0], v0, 0);
  DY_ASSERT_NEAR(want[i1], v1, 0);
  dy_program_free(p);
}

static void test_while_counts_0_1_many(void) {
  agree(halve_text, "halve0", x_small);
  agree(halve_text, "halve1", x_one);
  agree(halve_text, "halve7", x_many);
  /* and the answers are the loop's: 7 halvings of 100, 7 trips counted */
  executor_gives(halve_text, x_many, 7, 0, 100.0 / 128, 6, 7);
}

static void test_carried_values_swap(void) {
  agree(fib_text, "fib", x_many);
  /* (a, b) after five steps from (x, x): (8x, 13x) */
  executor_gives(fib_text, x_many, 12, 0, 8 * x_many[0], 6, 13 * x_many[0]);
}

static void test_cond_every_branch_with_nested_while(void) {
  agree(nested_text, "nest_then7", x_neg_many);
  agree(nested_text, "nest_then1", x_neg_one);
  agree(nested_text, "nest_then0", x_neg_small);
  agree(nested_text, "nest_else", x_pos);
}

/* The generated text: plain if/else and a guarded loop, kernels in blocks
 * keep their source-line comments, and the header has the loop's status. */
static void test_generated_text(void) {
  dy_program *p = dy_test_parse_ok(nested_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_compile_report rep;
  CU_ASSERT_FATAL(emit_c(nested_text, WORK "/text", "nest", 0, 77, &rep));
  char *c = dy_test_slurp(WORK "/text/nest.c"), *h = dy_test_slurp(WORK "/text/nest.h");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "  if ("));
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "  } else {\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "for (;;) {"));
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "return NEST_ERR_LOOP;"));
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "> NEST_MAX_ITERATIONS)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "nest.c:6"));  /* the body's mul */
  CU_ASSERT_PTR_NOT_NULL(strstr(c, "nest.c:9"));  /* the else branch's add */
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "#define NEST_MAX_ITERATIONS 77 "));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "NEST_ERR_LOOP = 4"));
  CU_ASSERT_PTR_NULL(strstr(c, "malloc"));
  CU_ASSERT_PTR_NULL(strstr(c, "#include <math.h>"));
  /* the same Program gives the same bytes */
  CU_ASSERT_FATAL(emit_c(nested_text, WORK "/text2", "nest", 0, 77, &rep));
  char *c2 = dy_test_slurp(WORK "/text2/nest.c");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
  CU_ASSERT_STRING_EQUAL(c, c2);
  free(c);
  free(c2);
  free(h);
  dy_program_free(p);
}

/* A loop that never ends: NAME_ERR_LOOP at --max-iterations, or at the
 * op's own bound; the executor stops with DY_STATUS_LIMIT there too. A loop
 * of exactly its bound of trips runs. */
static void test_runaway_loop(void) {
  /* x * 1 never shrinks */
  char *t = edit(halve_text, "var half : f32[1] persistable = [0.5]",
                 "var half : f32[1] persistable = [1.0]");
  dy_program *p = dy_test_parse_ok(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  float got[16];
  int rc = -1;
  dy_compile_report rep;
  CU_ASSERT_FATAL(emit_c(t, WORK "/runaway", "runaway", 2, 50, &rep));
  run_c_x(WORK "/runaway", "runaway", x_many, 2, &rc, got, 16);
  CU_ASSERT_EQUAL(rc, 4); /* RUNAWAY_ERR_LOOP */
  dy_program_free(p);
  free(t);

  /* the op's bound: 7 trips are needed */
  for (int bound = 6; bound <= 7; bound++) {
    char attr[64];
    snprintf(attr, sizeof attr, "max_iterations = %d}  @halve.c:3", bound);
    t = edit(halve_text, "max_iterations = 0}  @halve.c:3", attr);
    p = dy_test_parse_ok(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    float want[16];
    int n = 0;
    dy_status s = run_executor(p, x_many, want, 16, &n);
    CU_ASSERT_EQUAL(s, bound == 7 ? DY_OK : DY_STATUS_LIMIT);
    CU_ASSERT_FATAL(emit_c(t, WORK "/bounded", "bounded", 2, 0, &rep));
    rc = -1;
    run_c_x(WORK "/bounded", "bounded", x_many, 2, &rc, got, 16);
    CU_ASSERT_EQUAL(rc, bound == 7 ? 0 : 4);
    dy_program_free(p);
    free(t);
  }
}

/* The block a var is declared in: its op's, else (a param) its own. */
static int home(const dy_program *p, int v) {
  int b = -1, k = -1;
  return dy_program_def(p, v, &b, &k) ? b : p->vars[v]->block;
}

/* The plan: a cond's branches share bytes; a loop body's temporaries are
 * placed once; the arena meets its lower bound here. */
static void test_memory_plan(void) {
  dy_program *p = dy_test_parse_ok(nested_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_memplan_result r;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 4, &err), &err);
  DY_ASSERT_OK(dy_memplan(p, &r, &err), &err);
  /* vars by block: 1 and its loop's blocks 3, 4 are the then branch */
  int64_t all = 0;
  bool shared = false;
  int t_out = -1, y_n = -1;
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (v->mem_offset >= 0)
      all += (dy_type_numel_at(&v->type, 4) * 4 + 63) / 64 * 64;
    if (strcmp(v->name, "t_out") == 0)
      t_out = i;
    if (strcmp(v->name, "y_n") == 0)
      y_n = i;
    if (home(p, i) != 2 || v->mem_offset < 0)
      continue;
    for (int j = 0; j < p->n_vars; j++) {
      const dy_var *w = p->vars[j];
      int hw = home(p, j);
      if ((hw == 1 || hw == 3 || hw == 4) && w->mem_offset >= 0 &&
          w->mem_offset < v->mem_offset + 48 && v->mem_offset < w->mem_offset + 48)
        shared = true;
    }
  }
  /* a then-branch temporary and an else-branch one share bytes */
  CU_ASSERT(shared);
  CU_ASSERT(r.arena_bytes < all);
  CU_ASSERT(r.arena_bytes >= r.lower_bound);
  CU_ASSERT_EQUAL(r.arena_bytes, r.lower_bound);
  /* the carried value (the while's output) and the body's temporary are
   * live together, so they never share */
  CU_ASSERT_FATAL(t_out >= 0 && y_n >= 0);
  CU_ASSERT_NOT_EQUAL(p->vars[t_out]->mem_offset, p->vars[y_n]->mem_offset);
  dy_program_free(p);
}

/* dy2stc compile --report states the arena and its lower bound, and
 * --max-iterations sets NAME_MAX_ITERATIONS. */
static void test_cli_report(void) {
  dy_program *p = dy_test_parse_ok(nested_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};
  mkdir(WORK, 0777);
  mkdir(WORK "/cli", 0777);
  DY_ASSERT_OK(dy_model_save(p, WORK "/cli/nest", &err), &err);
  int rc = sh("cd " WORK "/cli && " DY2STC " compile nest.dymodel --emit c -o nest "
              "--max-iterations 1000 --report");
  if (rc)
    show_log();
  CU_ASSERT_EQUAL(rc, 0);
  char *log = dy_test_slurp(WORK "/last.log");
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "arena: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "(lower bound "));
  free(log);
  char *h = dy_test_slurp(WORK "/cli/nest.h");
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "#define NEST_MAX_ITERATIONS 1000 "));
  free(h);
  /* a bad bound is a usage error */
  CU_ASSERT_EQUAL(sh(DY2STC " compile " WORK "/cli/nest.dymodel --emit c --max-iterations 0"), 2);
  dy_program_free(p);
}

static bool have_m4(void);

/* The --emit c sources of the nested program, built freestanding for the
 * Cortex-M4 with the firmware sample's startup code, run under
 * qemu-system-arm -M mps2-an386 on both branches and 0 and many trips. */
static void test_cortex_m4_under_qemu(void) {
  if (!have_m4()) {
    fprintf(stderr, "\n  SKIPPED: needs arm-none-eabi-gcc, newlib's librdimon and "
                    "qemu-system-arm\n");
    return;
  }
  const float *xs[3] = {x_neg_many, x_neg_small, x_pos};
  for (int k = 0; k < 3; k++) {
    dy_program *p = dy_test_parse_ok(nested_text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    float want[8], got[8];
    int nw = 0, rc = -1;
    CU_ASSERT_EQUAL(run_executor(p, xs[k], want, 8, &nw), DY_OK);
    char dir[300], decls[512];
    snprintf(dir, sizeof dir, WORK "/m4_%d", k);
    CU_ASSERT_FATAL(emit_c_program(p, dir, "nest", 2, 0, NULL));
    decl_f32(decls, sizeof decls, "x", xs[k], 6);
    int ng = run_c_on(dir, "nest", 2, decls, "x", 1, "float", &rc, got, 8, true);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(ng, nw);
    for (int i = 0; i < ng && i < nw; i++)
      DY_ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + fabs(want[i])));
  }
}

/* An ONNX model with run-time control flow: Loop(M, go0, x) halves x while
 * max |x| > 1 (the body's condition, data-dependent) and i < M (a graph
 * input); If(c) then 2 * x' else x' - 1. The importer makes a while and a
 * cond (no unrolling, no where); executor and compiled C agree with the
 * closed form for trip counts 0, 1 and many, cut short by M or not. */
static void write_onnx_loop_if(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){4}, NULL);
  ob_input(m, "M", OB_I64, 0, NULL, NULL);
  ob_input(m, "c", OB_BOOL, 0, NULL, NULL);
  float one = 1, half = 0.5f;
  ob_init_f32(m, "one", 0, NULL, &one);
  ob_init_f32(m, "half", 0, NULL, &half);
  ob_node(m, "Abs", "abs0", 1, (const char *[]){"x"}, 1, (const char *[]){"ax"});
  Onnx__NodeProto *n = ob_node(m, "ReduceMax", "max0", 1, (const char *[]){"ax"}, 1,
                               (const char *[]){"mx"});
  ob_attr_i(m, n, "keepdims", 0);
  ob_node(m, "Greater", "go0", 2, (const char *[]){"mx", "one"}, 1, (const char *[]){"go"});
  ob_graph *body = ob_graph_new(m, "body");
  ob_graph_input(m, body, "i", OB_I64, 0, NULL);
  ob_graph_input(m, body, "cin", OB_BOOL, 0, NULL);
  ob_graph_input(m, body, "a", OB_F32, 1, (int64_t[]){4});
  ob_graph_node(m, body, "Mul", "halve", 2, (const char *[]){"a", "half"}, 1,
                (const char *[]){"a2"});
  ob_graph_node(m, body, "Abs", "abs1", 1, (const char *[]){"a2"}, 1, (const char *[]){"aa"});
  n = ob_graph_node(m, body, "ReduceMax", "max1", 1, (const char *[]){"aa"}, 1,
                    (const char *[]){"m2"});
  ob_attr_i(m, n, "keepdims", 0);
  ob_graph_node(m, body, "Greater", "more", 2, (const char *[]){"m2", "one"}, 1,
                (const char *[]){"c2"});
  ob_graph_output(m, body, "c2", OB_BOOL);
  ob_graph_output(m, body, "a2", OB_F32);
  n = ob_node(m, "Loop", "loop", 3, (const char *[]){"M", "go", "x"}, 1,
              (const char *[]){"xf"});
  ob_attr_graph(m, n, "body", body);
  ob_graph *tb = ob_graph_new(m, "then"), *eb = ob_graph_new(m, "else");
  ob_graph_node(m, tb, "Add", "dbl", 2, (const char *[]){"xf", "xf"}, 1,
                (const char *[]){"t"});
  ob_graph_output(m, tb, "t", OB_F32);
  ob_graph_node(m, eb, "Sub", "dec", 2, (const char *[]){"xf", "one"}, 1,
                (const char *[]){"e"});
  ob_graph_output(m, eb, "e", OB_F32);
  n = ob_node(m, "If", "if", 1, (const char *[]){"c"}, 1, (const char *[]){"y"});
  ob_attr_graph(m, n, "then_branch", tb);
  ob_attr_graph(m, n, "else_branch", eb);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static int count_kind(const dy_program *p, dy_op_kind k) {
  int n = 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++)
      n += p->blocks[b]->ops[i]->kind == k;
  return n;
}

static void test_onnx_run_time_loop_and_if(void) {
  mkdir(WORK, 0777);
  const char *path = WORK "/loop_if.onnx";
  write_onnx_loop_if(path);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  CU_ASSERT_EQUAL(count_kind(p, DY_OP_WHILE), 1);
  CU_ASSERT_EQUAL(count_kind(p, DY_OP_COND), 1);
  /* the If is not a where over both branches (the loop's condition block
   * has one: cond && i < M) */
  for (int i = 0; i < p->blocks[0]->n_ops; i++)
    CU_ASSERT_NOT_EQUAL(p->blocks[0]->ops[i]->kind, DY_OP_WHERE);
  static const float xs[2][4] = {{100, -3, 0.25f, 7}, {0.5f, -1, 0.25f, 0}};
  static const int64_t ms[3] = {10, 3, 0};
  int k = 0;
  for (int xi = 0; xi < 2; xi++)
    for (int mi = 0; mi < 3; mi++)
      for (int ci = 0; ci <= 1; ci++, k++) {
        /* the closed form */
        float want[4], maxa = 0;
        memcpy(want, xs[xi], sizeof want);
        for (int i = 0; i < 4; i++)
          maxa = fabsf(want[i]) > maxa ? fabsf(want[i]) : maxa;
        for (int64_t t = 0; t < ms[mi] && maxa > 1; t++) {
          maxa = 0;
          for (int i = 0; i < 4; i++) {
            want[i] *= 0.5f;
            maxa = fabsf(want[i]) > maxa ? fabsf(want[i]) : maxa;
          }
        }
        for (int i = 0; i < 4; i++)
          want[i] = ci ? want[i] * 2 : want[i] - 1;
        /* the executor */
        unsigned char cb = (unsigned char)ci;
        dy_tensor *in[3] = {dy_tensor_from_data(DY_F32, 1, (int64_t[]){4}, xs[xi]),
                            dy_tensor_from_data(DY_I64, 0, NULL, &ms[mi]),
                            dy_tensor_from_data(DY_BOOL, 0, NULL, &cb)};
        dy_tensor *out[1] = {0};
        DY_ASSERT_OK(dy_executor_run(p, in, 3, out, 1, &err), &err);
        for (int i = 0; i < 4; i++)
          DY_ASSERT_NEAR(dy_tensor_f32(out[0])[i], want[i], 1e-6);
        dy_tensor_free(out[0]);
        for (int i = 0; i < 3; i++)
          dy_tensor_free(in[i]);
        /* the compiled C (three of the twelve cases, each a fresh build) */
        if (k % 4 != 0)
          continue;
        dy_program *q = NULL;
        DY_ASSERT_OK(dy_onnx_load(path, &q, &err), &err);
        char dir[300], decls[600];
        snprintf(dir, sizeof dir, WORK "/onnx_%d", k);
        CU_ASSERT_FATAL(emit_c_program(q, dir, "loopif", 2, 0, NULL));
        decl_f32(decls, sizeof decls, "x", xs[xi], 4);
        snprintf(decls + strlen(decls), sizeof decls - strlen(decls),
                 "static const int64_t M[1] = {%lld};\n"
                 "static const unsigned char c[1] = {%d};\n", (long long)ms[mi], ci);
        float got[8];
        int rc = -1;
        CU_ASSERT_EQUAL(run_c(dir, "loopif", 1, decls, "x, M, c", 1, &rc, got, 8), 4);
        CU_ASSERT_EQUAL(rc, 0);
        for (int i = 0; i < 4; i++)
          DY_ASSERT_NEAR(got[i], want[i], 1e-6);
      }
  dy_program_free(p);
}

/* cflow's samples (samples/control): each saves its model and, per input
 * case, the input and the eager output; the model is compiled (-O2) and
 * its C run on every case, on the host under ASan/UBSan and case 0 on the
 * Cortex-M4 under qemu, and must give the eager numbers. */
static const char *ctype_of_dtype(dy_dtype t) {
  return t == DY_F32 ? "float" : t == DY_I64 ? "int64_t" : "unsigned char";
}

static void sample_case(const char *name, int cases, bool m4) {
  char dir[512], base[600];
  snprintf(dir, sizeof dir, WORK "/sample_%s", name);
  snprintf(base, sizeof base, "%s/%s", dir, name);
  mkdir(WORK, 0777);
  int rc = sh("rm -rf %s && mkdir -p %s && " DY_BUILD_DIR "/../samples/%s --out %s", dir, dir,
              name, dir);
  if (rc)
    show_log();
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(base, &p, &err), &err);
  CU_ASSERT_FATAL(p->n_feeds == 1 && p->n_fetches == 1);
  CU_ASSERT_FATAL(count_kind(p, DY_OP_COND) + count_kind(p, DY_OP_WHILE) > 0);
  dy_type tin = p->vars[p->feeds[0]]->type;
  const char *out_ct = ctype_of_dtype(p->vars[p->fetches[0]]->type.dtype);
  CU_ASSERT_EQUAL_FATAL(tin.dtype, DY_F32);
  CU_ASSERT_FATAL(emit_c_program(p, dir, name, 2, 0, NULL));
  size_t cap = 1 << 16;
  char *decls = malloc(cap);
  float *got = malloc(sizeof *got * 4096);
  CU_ASSERT_FATAL(decls && got);
  for (int k = 0; k < cases; k++) {
    char xp[700], ep[700];
    snprintf(xp, sizeof xp, "%s/x_%d.npy", dir, k);
    snprintf(ep, sizeof ep, "%s/eager_%d.npy", dir, k);
    dy_tensor *x = NULL, *want = NULL;
    DY_ASSERT_OK(dy_npy_read(xp, &x, &err), &err);
    DY_ASSERT_OK(dy_npy_read(ep, &want, &err), &err);
    int batch = tin.rank > 0 && tin.shape[0] < 0 ? (int)x->type.shape[0] : 1;
    decl_f32(decls, cap, "in0", x->data, (int)dy_tensor_numel(x));
    for (int on_m4 = 0; on_m4 <= (m4 && k == 0); on_m4++) {
      int status = -1;
      int ng = run_c_on(dir, name, batch, decls, "in0", 1, out_ct, &status, got, 4096, on_m4);
      CU_ASSERT_EQUAL(status, 0);
      CU_ASSERT_EQUAL(ng, (int)dy_tensor_numel(want));
      for (int i = 0; i < ng && i < (int)dy_tensor_numel(want); i++) {
        double w = want->type.dtype == DY_F32 ? ((const float *)want->data)[i]
                   : want->type.dtype == DY_I64 ? (double)((const int64_t *)want->data)[i]
                                                 : ((const unsigned char *)want->data)[i];
        DY_ASSERT_NEAR(got[i], w, 1e-4 * (1 + fabs(w)));
      }
    }
    dy_tensor_free(x);
    dy_tensor_free(want);
  }
  free(decls);
  free(got);
}

static bool have_m4(void) {
  return dy_test_have("arm-none-eabi-gcc") && dy_test_have("qemu-system-arm") &&
         sh("test -f \"$(" ARM_CC " -print-file-name=librdimon.a)\"") == 0;
}

static void test_samples_compiled(void) {
  bool m4 = have_m4();
  if (!m4)
    fprintf(stderr, "\n  (Cortex-M4 runs SKIPPED: needs arm-none-eabi-gcc, librdimon, "
                    "qemu-system-arm)\n");
  sample_case("early_exit", 2, m4);
  sample_case("greedy_decode", 3, m4);
  sample_case("jacobi", 3, m4);
}

void dy_test_register(void) {
  DY_SUITE("control_codegen");
  DY_TEST(test_while_counts_0_1_many);
  DY_TEST(test_carried_values_swap);
  DY_TEST(test_cond_every_branch_with_nested_while);
  DY_TEST(test_generated_text);
  DY_TEST(test_runaway_loop);
  DY_TEST(test_memory_plan);
  DY_TEST(test_cli_report);
  DY_TEST(test_cortex_m4_under_qemu);
  DY_TEST(test_onnx_run_time_loop_and_if);
  DY_TEST(test_samples_compiled);
}
