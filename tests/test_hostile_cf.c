/* test_hostile_cf.c - hostile input, round 2 (issue 31): the C frontend
 * (`dy2stc compile/convert NET.c`) and the frictions of a first use.
 *
 *   - case 8: the #line names of the converter survive every pass: a
 *     refusal in a nested (second-pass) statement of back\slash.c or
 *     q"uote.c names that file, not an escaped-again one;
 *   - case 9: a model file whose name holds '"', '\' or a newline
 *     compiles, with and without a converted statement, and runs (and
 *     one in a folder named c*, which a comment must not end on);
 *   - case 10: exit() in the constructor or the forward is one line
 *     saying so (not "cannot open" a temporary); flags after -- that
 *     change what the compiler makes are refused with one line naming the
 *     flag, -include F works; CC with flags is split into words;
 *   - case 13: the transformer sample (LayerNorm's begin_norm_axis -1)
 *     exports to Paddle and runs to the .dymodel's outputs;
 *   - case 14: an unbraced `if (dy_bool(c)) continue;` converts as the
 *     braced form does (the same outputs); a tensor if assigning no
 *     tensor is a source error at its line;
 *   - case 17: run/show/check NET.c trace the file; check's "ok" beside
 *     maxima over the tolerances says it judges per element; the samples'
 *     --out DIR is created; --emit c's header names the weights' file and
 *     its byte count is --report's; an .onnx named .dymodel gets a hint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define WORK DY_BUILD_DIR "/hostile_cf"
#define LOG WORK "/cli.log"

static void expect_cli(int want, const char *frag, const char *cmd) {
  dy_test_expect_cli(LOG, want, frag, cmd);
}

/* Run cmd (in WORK, its output to LOG): its exit status, the log shown on
 * a failure. */
static int run_in_work(const char *cmd) {
  int rc = dy_test_sh(LOG, "cd %s && %s", WORK, cmd);
  if (rc) {
    char *log = dy_test_slurp(LOG);
    fprintf(stderr, "\n  %s: exit %d\n%s\n", cmd, rc, log ? log : "");
    free(log);
  }
  return rc;
}

/* cmd exits 1 and its output starts with frag (a source error: the
 * file:line:col line, the source line and a caret). */
static void expect_source_error(const char *frag, const char *cmd) {
  int rc = dy_test_sh(LOG, "cd %s && %s", WORK, cmd);
  char *log = dy_test_slurp(LOG);
  bool ok = rc == 1 && log && strncmp(log, frag, strlen(frag)) == 0;
  if (!ok)
    fprintf(stderr, "\n  %s: exit %d (want 1), want %s..., got:\n%s\n", cmd, rc, frag,
            log ? log : "");
  CU_ASSERT(ok);
  free(log);
}

static void fresh_work(void) { dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", WORK, WORK); }

/* WORK/name: a model whose forward is `body` (x: f32[-1,4]; returns y). */
static void write_model(const char *name, const char *body) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", WORK, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f,
          "#include \"dy_runtime.h\"\n"                                          /* 1 */
          "#include <stdlib.h>\n"                                                /* 2 */
          "DY_TO_STATIC(\"x: f32[-1,4]\")\n"                                     /* 3 */
          "static dy_tensor *fwd(dy_layer *self, dy_tensor *x) {\n"              /* 4 */
          "  (void)self;\n"                                                      /* 5 */
          "  dy_tensor *zero = dy_full(DY_F32, 0, NULL, 0.0);\n"                 /* 6 */
          "  dy_tensor *s = dy_reduce_sum(x, 0, NULL, false);\n"                 /* 7 */
          "  dy_tensor *y = x;\n"                                                /* 8 */
          "%s"                                                                   /* 9.. */
          "  return y;\n"
          "}\n"
          "static dy_tensor *call(dy_layer *self, dy_tensor *const *in, int n) {\n"
          "  (void)n;\n"
          "  return fwd(self, in[0]);\n"
          "}\n"
          "static const dy_layer_vtable vt = {.type_name = \"T\", .forward = call};\n"
          "DY_MODEL\n"
          "dy_layer *make_t(void) { return dy_layer_new(sizeof(dy_layer), &vt, \"t\"); }\n",
          body);
  fclose(f);
}

static const char if_body[] =
    "  if (dy_bool(dy_greater(s, zero))) {\n"
    "    y = dy_relu(x);\n"
    "  } else {\n"
    "    y = dy_neg(x);\n"
    "  }\n";

/* WORK/x.npy: f32[2,4]. */
static void write_x(void) {
  float x[8] = {1, -2, 3, 0.5f, -1, 2, 0.25f, 4};
  dy_test_write_f32(WORK "/x.npy", 2, (int64_t[]){2, 4}, x);
}

/* ---- cases 8 and 9: file names ---- */

static void test_file_names(void) {
  fresh_work();
  write_x();
  static const char *const names[] = {"back\\slash.c", "q\"uote.c", "new\nline.c"};
  /* a nested tensor if on dy_item: refused in the second pass, at line 11 */
  static const char nested[] =
      "  if (dy_bool(dy_greater(s, zero))) {\n"          /* 9 */
      "    bool ok;\n"                                   /* 10 */
      "    if (dy_item(s, &ok) > 0.5)\n"                 /* 11 */
      "      y = dy_relu(x);\n"
      "  }\n";
  for (int i = 0; i < 3; i++) {
    /* the names go through the environment: the shell never parses them */
    setenv("DY_NAME", names[i], 1);
    /* converted (a copy with #line directives) and not (the file itself,
     * which an #include "..." cannot name) */
    write_model(names[i], if_body);
    CU_ASSERT_EQUAL(run_in_work("rm -rf out && mkdir out && " DY2STC " compile \"$DY_NAME\" "
                                "-o exe > /dev/null && ./exe --input x=x.npy --output-dir out"),
                    0);
    /* the op in the converted branch (line 10) names the file as it is */
    CU_ASSERT_EQUAL(run_in_work(DY2STC " show \"$DY_NAME\" > shown.txt"), 0);
    char *shown = dy_test_slurp(WORK "/shown.txt"), want[64];
    snprintf(want, sizeof want, "= relu(x)  @%s:10\n", names[i]);
    CU_ASSERT(shown && strstr(shown, want));
    if (!shown || !strstr(shown, want))
      fprintf(stderr, "\n  want '%s' in:\n%s\n", want, shown ? shown : "");
    free(shown);
    write_model(names[i], "  y = dy_relu(x);\n");
    CU_ASSERT_EQUAL(run_in_work(DY2STC " compile \"$DY_NAME\" -o exe > /dev/null && "
                                "./exe --input x=x.npy --output-dir out"), 0);
    if (i == 2)
      continue; /* the message names the file as it is: on two lines */
    write_model(names[i], nested);
    char frag[128];
    snprintf(frag, sizeof frag, "%s:11:", names[i]);
    expect_source_error(frag, DY2STC " convert \"$DY_NAME\"");
    expect_source_error(frag, DY2STC " compile \"$DY_NAME\" -o exe");
  }
  unsetenv("DY_NAME");
  /* a folder named c* : the converted code's comment naming the file
   * must not end at its "*" "/" */
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "mkdir -p '%s/c*'", WORK), 0);
  write_model("c*/n.c", if_body);
  CU_ASSERT_EQUAL(run_in_work(DY2STC " compile 'c*/n.c' -o exe > /dev/null && "
                              "./exe --input x=x.npy --output-dir out"), 0);
}

/* ---- case 10: exit(), flags after --, CC with flags ---- */

static void test_exit_and_flags(void) {
  fresh_work();
  write_model("bye.c", "  exit(0);\n");
  expect_cli(1, "bye.c: the process ended (exit()) while tracing fwd()",
             "cd " WORK " && " DY2STC " compile bye.c -o exe");
  /* a constructor that exits */
  write_model("bye2.c", "");
  dy_test_sh(NULL, "cd %s && sed -i 's/{ return dy_layer_new/{ exit(0); return dy_layer_new/' "
             "bye2.c", WORK);
  expect_cli(1, "bye2.c: the process ended (exit()) while running make_t()",
             "cd " WORK " && " DY2STC " compile bye2.c -o exe");

  write_model("net.c", "  y = dy_relu(x);\n");
  static const char *const refused[] = {"-o X", "-c", "-E", "-x c++", "-S", "-MD"};
  for (int i = 0; i < 6; i++) {
    char cmd[1024], frag[128];
    snprintf(cmd, sizeof cmd, "cd %s && %s compile net.c -o exe -- %s", WORK, DY2STC,
             refused[i]);
    snprintf(frag, sizeof frag, "net.c: '%.2s", refused[i]);
    expect_cli(1, frag, cmd);
  }
  expect_cli(1, "'-include' after -- needs a value",
             "cd " WORK " && " DY2STC " compile net.c -o exe -- -include");
  /* -include F reaches the parser and the compiler: F defines what net.c
   * uses */
  write_model("inc.c", "  y = DY_TEST_ACT(x);\n");
  FILE *f = fopen(WORK "/act.h", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("#define DY_TEST_ACT(t) dy_relu(t)\n", f);
  fclose(f);
  CU_ASSERT_EQUAL(run_in_work(DY2STC " compile inc.c -o exe -- -include act.h > /dev/null"), 0);
  /* CC with flags: its words (the make convention), for the tracing
   * driver and for the executable */
  CU_ASSERT_EQUAL(run_in_work("CC='cc -std=c11 -O1' " DY2STC " compile net.c -o exe > /dev/null "
                              "&& " DY2STC " show net.c > /dev/null"), 0);
  CU_ASSERT_EQUAL(run_in_work(DY2STC " compile net.c -o exe > /dev/null && CC='cc -O1' " DY2STC
                              " compile " DY_SOURCE_DIR "/samples/onnx/cnn.onnx -o cnn > /dev/null"),
                  0);
}

/* ---- case 14: an unbraced continue; an if that assigns nothing ---- */

static void test_convert_forms(void) {
  fresh_work();
  write_x();
  static const char *const loops[2] = {
      "  dy_tensor *i = zero, *one = dy_full(DY_F32, 0, NULL, 1.0);\n"
      "  while (dy_bool(dy_less(i, dy_full(DY_F32, 0, NULL, 5.0)))) {\n"
      "    i = dy_add(i, one);\n"
      "    if (dy_bool(dy_greater(i, dy_full(DY_F32, 0, NULL, 2.0))))\n"
      "      continue;\n"
      "    y = dy_add(y, x);\n"
      "  }\n",
      "  dy_tensor *i = zero, *one = dy_full(DY_F32, 0, NULL, 1.0);\n"
      "  while (dy_bool(dy_less(i, dy_full(DY_F32, 0, NULL, 5.0)))) {\n"
      "    i = dy_add(i, one);\n"
      "    if (dy_bool(dy_greater(i, dy_full(DY_F32, 0, NULL, 2.0)))) {\n"
      "      continue;\n"
      "    }\n"
      "    y = dy_add(y, x);\n"
      "  }\n"};
  write_model("unbraced.c", loops[0]);
  write_model("braced.c", loops[1]);
  CU_ASSERT_EQUAL(run_in_work(DY2STC " compile unbraced.c -o u > /dev/null && "
                              DY2STC " compile braced.c -o b > /dev/null && "
                              "./u --input x=x.npy --output-dir ou && "
                              "./b --input x=x.npy --output-dir ob"), 0);
  /* y = x + 2x (the iterations i = 1, 2 add; 3, 4, 5 continue) */
  dy_tensor *u = NULL, *b = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_read(WORK "/ou/out.npy", &u, &err), &err);
  DY_ASSERT_OK(dy_npy_read(WORK "/ob/out.npy", &b, &err), &err);
  if (u && b) {
    CU_ASSERT_EQUAL(dy_tensor_numel(u), 8);
    CU_ASSERT_EQUAL(memcmp(u->data, b->data, 8 * sizeof(float)), 0);
    CU_ASSERT_EQUAL(dy_tensor_f32(u)[1], -6.0f);
  }
  dy_tensor_free(u);
  dy_tensor_free(b);
  write_model("noout.c", "  if (dy_bool(dy_greater(s, zero))) {\n"  /* 9 */
                         "    dy_tensor *t = dy_relu(x);\n"
                         "    (void)t;\n"
                         "  }\n");
  expect_source_error("noout.c:9:3: error: this tensor-dependent if assigns no dy_tensor *",
                      DY2STC " convert noout.c");
}

/* ---- case 13: the transformer sample exported to Paddle ---- */

static void test_paddle_export_layer_norm(void) {
  fresh_work();
  CU_ASSERT_EQUAL_FATAL(
      run_in_work(DY_BUILD_DIR "/../samples/transformer --batch 2 --out t > /dev/null && "
                  DY2STC " export t/transformer --to paddle -o t/tp > /dev/null && "
                  DY2STC " run t/tp.pdmodel --input x=t/x.npy --output-dir op > /dev/null && "
                  DY2STC " compare op/*.npy t/eager_out.npy --rtol 1e-5 --atol 1e-5"), 0);
}

/* ---- case 17: the frictions of a first use ---- */

static void test_first_use(void) {
  fresh_work();
  write_x();
  /* run / show / check NET.c trace it (they looked for NET.c.dymodel) */
  write_model("net.c", if_body);
  CU_ASSERT_EQUAL(run_in_work(DY2STC " run net.c --input x=x.npy --output-dir o > /dev/null && "
                              "test -f o/out.npy && " DY2STC " show net.c > /dev/null && "
                              DY2STC " check net.c --input x=x.npy > /dev/null"), 0);
  /* check: "ok" beside maxima over the tolerances says it judges per
   * element (LeNet-5's compiled sums differ from the executor's in the
   * last bits: a max rel error over rtol 0, each element within atol) */
  CU_ASSERT_EQUAL_FATAL(run_in_work(DY_BUILD_DIR "/../samples/lenet5 --out l > /dev/null && "
                                    DY2STC " check l/lenet5 --input x=l/x.npy --rtol 0 "
                                    "--atol 10 > check.txt"), 0);
  char *c = dy_test_slurp(WORK "/check.txt");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT(strstr(c, "max rel err 0:") || strstr(c, ": ok (judged per element: each within "
                                                     "atol + rtol * |expected|)"));
  if (!strstr(c, "judged per element"))
    fprintf(stderr, "\n  check printed: %s\n", c);
  free(c);
  /* the samples' --out DIR: created, or one line when its parent is
   * missing */
  CU_ASSERT_EQUAL(run_in_work(DY_BUILD_DIR "/../samples/lenet5 --out fresh > /dev/null && "
                              "test -f fresh/lenet5.dymodel"), 0);
  expect_cli(1, "lenet5: --out missing/sub: No such file or directory",
             "cd " WORK " && " DY_BUILD_DIR "/../samples/lenet5 --out missing/sub");
  /* --emit c: every file listed; the header names the weights' file and
   * its byte count is --report's */
  CU_ASSERT_EQUAL_FATAL(run_in_work(DY2STC " compile l/lenet5 --emit c --name mynet -o fw "
                                    "--report > report.txt && "
                                    "grep -q '^wrote fw.c fw.h fw_weights.c$' report.txt && "
                                    "test -f fw_weights.c"), 0);
  char *h = dy_test_slurp(WORK "/fw.h"), *r = dy_test_slurp(WORK "/report.txt");
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const char *m = strstr(h, "_WEIGHT_BYTES "), *w = strstr(r, "weights: ");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  long long hb = atoll(m + strlen("_WEIGHT_BYTES ")), rb = atoll(w + strlen("weights: "));
  CU_ASSERT_EQUAL(hb, rb);
  CU_ASSERT(hb > 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(m, "/* const data in fw_weights.c */"));
  free(h);
  free(r);
  /* an ONNX model named .dymodel: the hint */
  expect_cli(1, "not a .dymodel but an ONNX model (name it .onnx",
             "cd " WORK " && cp " DY_SOURCE_DIR "/samples/onnx/cnn.onnx renamed.dymodel && "
             DY2STC " show renamed.dymodel");
}

void dy_test_register(void) {
  DY_SUITE("hostile_cf");
  DY_TEST(test_file_names);
  DY_TEST(test_exit_and_flags);
  DY_TEST(test_convert_forms);
  DY_TEST(test_paddle_export_layer_norm);
  DY_TEST(test_first_use);
}
