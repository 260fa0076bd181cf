/* test_cfront.c - `dy2stc compile net.c` (compiler/cfront*.c) and the
 * installed dy2stc.
 *
 *   - samples/static/net.c compiled from the build tree to an executable
 *     matches the sample's own eager run (x.npy -> eager_out.npy) within
 *     1e-5, with the seeded init (seed 0 and --seed 5) and with the weights
 *     of another seed given by --params (which the seeded executable does
 *     not match, so the weights really come from the file); --save-model
 *     keeps the traced Program (`dy2stc run` on it matches eager; a failed
 *     compile leaves the kept pair as it was); --emit c
 *     writes net.c/.h; samples/static/gate.c (two inputs, a forward with the
 *     layer's own signature) matches its eager run too; flags after `--`
 *     reach both the parse and the driver's build;
 *   - source errors come back as file:line:col: error:, the line and a
 *     caret, exit 1: a syntax error, a missing include, a malformed input
 *     spec, a second DY_TO_STATIC function, a forward whose tensor count
 *     differs from the specs; a missing DY_MODEL / DY_TO_STATIC, a shape
 *     error while tracing, model code that exits while traced and an
 *     unreadable --params are one line each;
 *     nothing is left in the temporary directory;
 *   - `cmake --install` to a temporary prefix: the headers, libraries, CMake
 *     package and pkg-config file are there; a user project builds against
 *     them with find_package(dy2stc) and with pkg-config and runs; the
 *     installed P/bin/dy2stc uses its own tree (--version) and compiles
 *     net.c from there, matching eager again.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define SAMPLE_SRC DY_SOURCE_DIR "/samples/static/net.c"
#define SAMPLE_EXE DY_BUILD_DIR "/../samples/static_net"
#define WORK DY_BUILD_DIR "/cfront"
#define LOG WORK "/last.log"
#define PREFIX WORK "/prefix"

#define sh(...) dy_test_sh(LOG, __VA_ARGS__)

static void show_log_on_failure(int rc, int want) {
  if (rc != want) {
    char *log = dy_test_slurp(LOG);
    fprintf(stderr, "\n  exit %d (wanted %d); output:\n%s\n", rc, want, log ? log : "");
    free(log);
  }
}

/* The log contains s (printing the log when not). */
static bool log_has(const char *s) {
  char *log = dy_test_slurp(LOG);
  bool ok = log && strstr(log, s);
  if (!ok)
    fprintf(stderr, "\n  the output lacks \"%s\"; it is:\n%s\n", s, log ? log : "(none)");
  free(log);
  return ok;
}

static int log_lines(void) {
  char *log = dy_test_slurp(LOG);
  int n = 0;
  for (char *p = log; p && *p; p++)
    n += *p == '\n';
  free(log);
  return n;
}

/* max|a-b| / max|b| */
static double rel_err(const char *got_path, const char *ref_path) {
  dy_tensor *a = NULL, *b = NULL;
  dy_error err = {0};
  if (dy_npy_read(got_path, &a, &err) || dy_npy_read(ref_path, &b, &err)) {
    fprintf(stderr, "\n  %s\n", err.msg);
    dy_tensor_free(a);
    return INFINITY;
  }
  double r = INFINITY;
  if (dy_type_equal(&a->type, &b->type)) {
    double md = 0, mb = 0;
    for (int64_t i = 0; i < dy_tensor_numel(a); i++) {
      double d = fabs(dy_tensor_f32(a)[i] - dy_tensor_f32(b)[i]);
      md = d > md ? d : md;
      mb = fabs(dy_tensor_f32(b)[i]) > mb ? fabs(dy_tensor_f32(b)[i]) : mb;
    }
    r = md / (mb > 0 ? mb : 1);
  }
  dy_tensor_free(a);
  dy_tensor_free(b);
  return r;
}

/* Run the compiled exe on DIR/x.npy; its output's error against
 * DIR/eager_out.npy. */
static double run_against(const char *exe, const char *dir) {
  int rc = sh("%s --input x=%s/x.npy --output-dir %s/got", exe, dir, dir);
  show_log_on_failure(rc, 0);
  if (rc)
    return INFINITY;
  char got[4096], ref[4096];
  snprintf(got, sizeof got, "%s/got/out.npy", dir);
  snprintf(ref, sizeof ref, "%s/eager_out.npy", dir);
  return rel_err(got, ref);
}

/* The sample's eager run (weights after dy_seed(seed)) into WORK/s<seed>. */
static void eager_run(int seed) {
  int rc = sh("mkdir -p %s/s%d && %s --seed %d --batch 5 --out %s/s%d", WORK, seed,
              SAMPLE_EXE, seed, WORK, seed);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static int count_cfront_dirs(void) {
  const char *t = getenv("TMPDIR");
  DIR *d = opendir(t && *t ? t : "/tmp");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strncmp(e->d_name, "dy2stc-cfront.", 14) == 0;
  if (d)
    closedir(d);
  return n;
}

static void test_compile_sample(void) {
  eager_run(0);
  eager_run(5);
  int tmp_before = count_cfront_dirs();

  /* the seeded init, as the sample's default seed */
  int rc = sh("cd %s && %s compile %s -o net0", WORK, DY2STC, SAMPLE_SRC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT(log_has("wrote net0"));
  double e0 = run_against(WORK "/net0", WORK "/s0");
  fprintf(stderr, " [seed 0: rel err %.2g]", e0);
  CU_ASSERT(e0 <= 1e-5);
  /* another seed's weights are not these */
  CU_ASSERT(run_against(WORK "/net0", WORK "/s5") > 1e-3);

  /* --params: the weights of the seed-5 run, by name */
  rc = sh("cd %s && %s compile %s --params s5/net.dyparams -o net5p", WORK, DY2STC, SAMPLE_SRC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double e5 = run_against(WORK "/net5p", WORK "/s5");
  fprintf(stderr, " [--params: rel err %.2g]", e5);
  CU_ASSERT(e5 <= 1e-5);

  /* --seed 5, and the usual compile options (-O0, --max-batch) */
  rc = sh("cd %s && %s compile %s --seed 5 -O0 --max-batch 8 -o net5s", WORK, DY2STC, SAMPLE_SRC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT(run_against(WORK "/net5s", WORK "/s5") <= 1e-5);

  /* --save-model: the traced Program kept; `dy2stc run` on it gives the
   * eager output (seed 5), and a compile that fails afterwards (--max-ram
   * 1) leaves the kept pair byte for byte as it was */
  rc = sh("cd %s && rm -rf kept net5k && %s compile %s --seed 5 --save-model kept/net5 -o net5k",
          WORK, DY2STC, SAMPLE_SRC);
  CU_ASSERT_EQUAL(rc, 1); /* kept/ does not exist: the compile fails... */
  CU_ASSERT(log_has("--save-model kept/net5: cannot write in 'kept/'"));
  struct stat st;
  CU_ASSERT_NOT_EQUAL(stat(WORK "/net5k", &st), 0); /* ...before any output */
  rc = sh("cd %s && mkdir -p kept && %s compile %s --seed 5 --save-model kept/net5.dymodel "
          "-o net5k && %s run kept/net5.dymodel --input x=s5/x.npy --output-dir s5/kept",
          WORK, DY2STC, SAMPLE_SRC, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT(rel_err(WORK "/s5/kept/out.npy", WORK "/s5/eager_out.npy") <= 1e-5);
  CU_ASSERT_EQUAL(sh("cp %s/kept/net5.dyparams %s/kept/before", WORK, WORK), 0);
  rc = sh("cd %s && %s compile %s --seed 0 --save-model kept/net5 --max-ram 1 -o net0k", WORK,
          DY2STC, SAMPLE_SRC);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT(log_has("over --max-ram 1"));
  CU_ASSERT_EQUAL(sh("cmp %s/kept/net5.dyparams %s/kept/before", WORK, WORK), 0);

  /* --emit c: OUT.c and OUT.h, whose comments point at the user's lines */
  rc = sh("cd %s && cp %s net.c && %s compile net.c --emit c -o gen", WORK, SAMPLE_SRC, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL(rc, 0);
  char *c = dy_test_slurp(WORK "/gen.c");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_PTR_NOT_NULL(strstr(c, " net.c:"));
  CU_ASSERT_PTR_NULL(strstr(c, "dy2stc_driver"));
  free(c);
  CU_ASSERT_EQUAL(stat(WORK "/gen.h", &st), 0);

  /* the driver's directory is gone */
  CU_ASSERT_EQUAL(count_cfront_dirs(), tmp_before);
}

/* The 1-based line of the sample where s first appears. */
static int sample_line(const char *s) {
  char *src = dy_test_slurp(SAMPLE_SRC);
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  char *at = strstr(src, s);
  int line = at ? 1 : 0;
  for (char *p = src; at && p < at; p++)
    line += *p == '\n';
  free(src);
  return line;
}

static void test_compile_two_inputs(void) {
  int rc = sh("mkdir -p %s/gate && cd %s/gate && %s/../samples/static_gate && "
              "%s compile %s/samples/static/gate.c -o gate && "
              "./gate --input x=x.npy --input c=c.npy --output-dir got",
              WORK, WORK, DY_BUILD_DIR, DY2STC, DY_SOURCE_DIR);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double e = rel_err(WORK "/gate/got/out.npy", WORK "/gate/eager_out.npy");
  fprintf(stderr, " [gate: rel err %.2g]", e);
  CU_ASSERT(e <= 1e-5);
}

/* WORK/name: the sample with the first `from` replaced by `to`; returns
 * the 1-based line of the replacement (0 when from is not there). */
static int write_variant(const char *name, const char *from, const char *to) {
  char *src = dy_test_slurp(SAMPLE_SRC);
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  char *at = strstr(src, from);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  int line = sample_line(from);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", WORK, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fwrite(src, 1, (size_t)(at - src), f);
  fputs(to, f);
  fputs(at + strlen(from), f);
  fclose(f);
  free(src);
  return line;
}

/* `dy2stc compile name` fails with exit 1 and the log has each string. */
static void expect_error(const char *name, const char *const *want, int n_want) {
  int rc = sh("cd %s && %s compile %s -o never", WORK, DY2STC, name);
  show_log_on_failure(rc, 1);
  CU_ASSERT_EQUAL(rc, 1);
  for (int i = 0; i < n_want; i++)
    CU_ASSERT(log_has(want[i]));
  struct stat st;
  CU_ASSERT_NOT_EQUAL(stat(WORK "/never", &st), 0);
}

static void test_source_errors(void) {
  char a[256], b[256];
  /* a syntax error: clang's message at the line, the line, a caret */
  const char *ret = "return dy_softmax(dy_call1(n->head, h), -1);";
  int line = write_variant("e_syntax.c", ret, "return dy_softmax(dy_call1(n->head, h), -1)");
  snprintf(a, sizeof a, "e_syntax.c:%d:46: error: expected ';' after return statement\n", line);
  expect_error("e_syntax.c",
               (const char *[]){a, "\n  return dy_softmax(dy_call1(n->head, h), -1)\n"
                                   "                                             ^\n"}, 2);
  CU_ASSERT_EQUAL(log_lines(), 3);

  /* a missing include */
  line = write_variant("e_include.c", "#include <stdio.h>", "#include \"no_such_header.h\"");
  snprintf(a, sizeof a,
           "e_include.c:%d:10: error: 'no_such_header.h' file not found\n"
           "#include \"no_such_header.h\"\n"
           "         ^\n", line);
  expect_error("e_include.c", (const char *[]){a}, 1);

  /* a malformed input spec points at its marker */
  line = write_variant("e_spec.c", "DY_TO_STATIC(\"x: f32[-1,16]\")", "DY_TO_STATIC(\"x: f32[-1,0]\")");
  snprintf(a, sizeof a, "e_spec.c:%d:1: error: input spec 'x: f32[-1,0]': dim 1 must be a "
                        "positive integer, -1 (the batch) or a name (a dynamic size, e.g. "
                        "seq)\n", line);
  expect_error("e_spec.c", (const char *[]){a, "\nDY_TO_STATIC(\"x: f32[-1,0]\")\n^\n"}, 2);
  /* a dim past int64 (strtoll's ERANGE) is refused, not clamped */
  line = write_variant("e_spec_big.c", "DY_TO_STATIC(\"x: f32[-1,16]\")",
                       "DY_TO_STATIC(\"x: f32[-1,99999999999999999999]\")");
  snprintf(a, sizeof a, "e_spec_big.c:%d:1: error: input spec 'x: f32[-1,99999999999999999999]': "
                        "dim 1 is too large\n", line);
  expect_error("e_spec_big.c", (const char *[]){a}, 1);

  /* two DY_TO_STATIC functions */
  int first = sample_line("static dy_tensor *net_forward(");
  line = write_variant("e_dup.c", "static dy_tensor *net_call(",
                       "DY_TO_STATIC(\"x: f32[-1,16]\")\nstatic dy_tensor *net_call(");
  snprintf(a, sizeof a, "e_dup.c:%d:19: error: 'net_call' is a second DY_TO_STATIC function "
                        "(the first is 'net_forward' at e_dup.c:%d); mark exactly one\n",
           line + 1, first);
  snprintf(b, sizeof b, "\n                  ^\n");
  expect_error("e_dup.c", (const char *[]){a, b}, 2);

  /* two specs for a forward of one tensor */
  write_variant("e_count.c", "DY_TO_STATIC(\"x: f32[-1,16]\")",
                "DY_TO_STATIC(\"x: f32[-1,16]\", \"y: f32[3]\")");
  expect_error("e_count.c",
               (const char *[]){"error: 'net_forward' takes 1 tensor but DY_TO_STATIC gives 2 "
                                "input specs\n"}, 1);
}

static void test_cflags(void) {
  /* a file that needs -D from the command line: without it clang's #error */
  int line = write_variant("needs_flag.c", "#include <stdio.h>",
                           "#ifndef NET_FLAG\n#error compile with -DNET_FLAG\n#endif\n"
                           "#include <stdio.h>");
  char a[256];
  snprintf(a, sizeof a, "needs_flag.c:%d:2: error: compile with -DNET_FLAG\n"
                        "#error compile with -DNET_FLAG\n ^\n", line + 1);
  expect_error("needs_flag.c", (const char *[]){a}, 1);
  /* with it (and a linker flag, which only the build sees) it compiles */
  int rc = sh("cd %s && %s compile needs_flag.c -o flagged -- -DNET_FLAG -lm", WORK, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(run_against(WORK "/flagged", WORK "/s0") <= 1e-5);
}

static void test_one_line_errors(void) {
  /* no DY_MODEL, no DY_TO_STATIC: one line each */
  write_variant("e_nomodel.c", "DY_MODEL\n", "\n");
  expect_error("e_nomodel.c",
               (const char *[]){"dy2stc: e_nomodel.c: no function is marked DY_MODEL (put it "
                                "before the model's constructor, dy_layer *make_net(void))\n"}, 1);
  CU_ASSERT_EQUAL(log_lines(), 1);
  write_variant("e_noforward.c", "DY_TO_STATIC(\"x: f32[-1,16]\")\n", "\n");
  expect_error("e_noforward.c",
               (const char *[]){"dy2stc: e_noforward.c: no function is marked DY_TO_STATIC"}, 1);
  CU_ASSERT_EQUAL(log_lines(), 1);

  /* a shape error while tracing names the user's line */
  int line = write_variant("e_shape.c", "DY_TO_STATIC(\"x: f32[-1,16]\")", "DY_TO_STATIC(\"x: f32[-1,8]\")");
  char a[256];
  snprintf(a, sizeof a, "dy2stc: e_shape.c: tracing net_forward: e_shape.c:%d: matmul: inner "
                        "dims 8 vs 16", line + 3);
  expect_error("e_shape.c", (const char *[]){a}, 1);
  CU_ASSERT_EQUAL(log_lines(), 1);

  /* a model whose code exits while being traced: said so, in one line */
  write_variant("e_exit.c", "  net *n = (net *)self;\n", "  net *n = (net *)self;\n  exit(3);\n");
  expect_error("e_exit.c",
               (const char *[]){"dy2stc: e_exit.c: the process ended (exit()) while tracing "
                                "net_forward(), before the model was saved (exit status 3)\n"},
               1);
  CU_ASSERT_EQUAL(log_lines(), 1);

  /* --params that cannot be read; --params on a .dymodel is a usage error */
  int rc = sh("cd %s && %s compile %s --params nowhere.dyparams -o never", WORK, DY2STC,
              SAMPLE_SRC);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT(log_has("--params nowhere.dyparams does not fit the model of"));
  CU_ASSERT_EQUAL(log_lines(), 1);
  rc = sh("cd %s && %s compile s0/net.dymodel --params s5/net.dyparams", WORK, DY2STC);
  CU_ASSERT_EQUAL(rc, 2);
  CU_ASSERT(log_has("are for a C model file"));
  /* a file that is not there */
  rc = sh("cd %s && %s compile missing.c", WORK, DY2STC);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT(log_has("dy2stc: missing.c: cannot open"));
}

/* A user's project on the installed tree: the eager API, checked. */
static const char user_c[] =
    "#include <stdio.h>\n"
    "#include \"dy_runtime.h\"\n"
    "int main(void) {\n"
    "  dy_scope_begin();\n"
    "  dy_tensor *a = dy_full(DY_F32, 2, DY_SHAPE(2, 3), 1.5);\n"
    "  dy_tensor *b = dy_relu(dy_add(a, a));\n"
    "  float s = 0;\n"
    "  for (int i = 0; b && i < 6; i++) s += dy_tensor_f32(b)[i];\n"
    "  dy_scope_end();\n"
    "  printf(\"sum %g\\n\", s);\n"
    "  return s == 18.0f ? 0 : 1;\n"
    "}\n";

static const char user_cmake[] =
    "cmake_minimum_required(VERSION 3.18)\n"
    "project(user C)\n"
    "find_package(dy2stc 0.1 REQUIRED CONFIG)\n"
    "add_executable(user user.c)\n"
    "target_link_libraries(user PRIVATE dy2stc::runtime)\n";

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

static void test_install(void) {
  int rc = sh("rm -rf %s && %s --install %s/.. --prefix %s", PREFIX, DY_CMAKE, DY_BUILD_DIR,
              PREFIX);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  const char *files[] = {"bin/dy2stc", "include/dy2stc/dy_runtime.h", "include/dy2stc/dy_ir.h",
                         "include/dy2stc/dy_grad.h", "include/dy2stc/dy_train.h",
                         "include/dy2stc/dy_static.h", "include/dy2stc/dy_ew_api.h",
                         "include/dy2stc/ops.def", "lib/libdy_runtime.a", "lib/libdy_ir.a",
                         "lib/cmake/dy2stc/dy2stcConfig.cmake",
                         "lib/cmake/dy2stc/dy2stcConfigVersion.cmake",
                         "lib/pkgconfig/dy2stc.pc"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", PREFIX, files[i]);
    if (stat(path, &st) != 0)
      fprintf(stderr, "\n  not installed: %s\n", files[i]);
    CU_ASSERT_EQUAL(stat(path, &st), 0);
  }
  struct stat st;
  CU_ASSERT_NOT_EQUAL(stat(PREFIX "/include/dy2stc/dy_runtime_internal.h", &st), 0);

  /* the user's project: CMake package, then pkg-config */
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s/proj && mkdir -p %s/proj", WORK, WORK), 0);
  write_text(WORK "/proj/user.c", user_c);
  write_text(WORK "/proj/CMakeLists.txt", user_cmake);
  rc = sh("cd %s/proj && CC='%s' %s -S . -B build -DCMAKE_PREFIX_PATH=%s "
          "-DCMAKE_C_FLAGS='%s' -DCMAKE_EXE_LINKER_FLAGS='%s' && %s --build build && "
          "./build/user",
          WORK, DY_TEST_CC, DY_CMAKE, PREFIX, DY_TEST_SAN_FLAGS, DY_TEST_SAN_FLAGS, DY_CMAKE);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(log_has("sum 18\n"));
  rc = sh("cd %s/proj && export PKG_CONFIG_PATH=%s/lib/pkgconfig && "
          "'%s' %s user.c -o user_pc $(pkg-config --cflags --libs dy2stc) && ./user_pc",
          WORK, PREFIX, DY_TEST_CC, DY_TEST_SAN_FLAGS);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(log_has("sum 18\n"));

  /* the installed dy2stc uses its own tree and compiles a C model */
  rc = sh("%s/bin/dy2stc --version", PREFIX);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(log_has("headers: " PREFIX "/include/dy2stc (installed)"));
  rc = sh("cd %s/proj && cp %s net.c && %s/bin/dy2stc compile net.c -o net_inst", WORK,
          SAMPLE_SRC, PREFIX);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double e = run_against(WORK "/proj/net_inst", WORK "/s0");
  fprintf(stderr, " [installed: rel err %.2g]", e);
  CU_ASSERT(e <= 1e-5);
}

void dy_test_register(void) {
  mkdir(WORK, 0777);
  DY_SUITE("cfront");
  DY_TEST(test_compile_sample);
  DY_TEST(test_compile_two_inputs);
  DY_TEST(test_source_errors);
  DY_TEST(test_cflags);
  DY_TEST(test_one_line_errors);
  DY_TEST(test_install);
}
