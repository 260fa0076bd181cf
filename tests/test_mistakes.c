/* test_mistakes.c - the mistakes a user makes on the command line (issue
 * 31): misspelt options and commands, wrong or missing files, inputs of
 * the wrong dtype or shape, missing directories. Each gets one line that
 * names the thing, on stderr, with exit status 1 (2 for a usage error),
 * from dy2stc's subcommands and from a compiled executable; the table
 * below holds the command, the status and a fragment of that line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define D DY2STC_PATH
#define WORK DY_BUILD_DIR "/mistakes"

typedef struct {
  const char *cmd;   /* run in WORK */
  int status;
  const char *frag;  /* in the first line */
} mistake;

/* WORK/net.dymodel: y = x @ w + b, x f32[-1,2]; WORK/exe compiled from
 * it; x.npy f32[3,2], x64.npy i64[3,2], x3.npy f32[3,3], cal/ for
 * quantize, text.onnx a text file, renamed.dymodel an ONNX model. */
static void setup(void) {
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s/cal", WORK, WORK);
  dy_program *p = dy_test_parse_ok(
      "program {\n  var x : f32[-1,2] feed 0\n"
      "  var w : f32[2,2] persistable trainable = [0.5, -0.25, 0.125, 1]\n"
      "  var b : f32[2] persistable trainable = [0.1, -0.1]\n"
      "  var h : f32[-1,2]\n  var y : f32[-1,2]\n  block 0 parent -1 {\n"
      "    h = matmul(x, w) {transpose_x = 0, transpose_y = 0}  @net.c:1\n"
      "    y = add(h, b)  @net.c:1\n  }\n  fetch 0 y\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_save(p, WORK "/net", &err), &err);
  dy_program_free(p);
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  dy_test_write_f32(WORK "/x.npy", 2, (int64_t[]){3, 2}, x);
  dy_test_write_f32(WORK "/cal/x.npy", 2, (int64_t[]){3, 2}, x);
  dy_test_write_f32(WORK "/x3.npy", 2, (int64_t[]){3, 3}, x);
  int64_t xi[6] = {1, 2, 3, 4, 5, 6};
  dy_tensor *t = dy_tensor_from_data(DY_I64, 2, (int64_t[]){3, 2}, xi);
  DY_ASSERT_OK(dy_npy_write(WORK "/x64.npy", t, &err), &err);
  dy_tensor_free(t);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "cd %s && echo 'not a model' > text.onnx && cp "
                                   DY_SOURCE_DIR "/samples/onnx/cnn.onnx renamed.dymodel && "
                                   "%s compile net -o exe > /dev/null", WORK, D), 0);
}

static void check_all(const mistake *m, int n) {
  for (int i = 0; i < n; i++) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && %s", WORK, m[i].cmd);
    dy_test_expect_cli(WORK "/last.log", m[i].status, m[i].frag, cmd);
  }
}

/* Misspelt options and commands: usage errors (2) naming what was typed. */
static void test_misspelt(void) {
  static const mistake m[] = {
      {D " compil net", 2, "unknown command 'compil'"},
      {D " compile net --max-btach 4", 2, "'--max-btach'"},
      {D " compile net --emit exec", 2, "--emit takes exe or c, not 'exec'"},
      {D " compile net --max-batch many", 2, "--max-batch needs an integer"},
      {D " run net --inptu x=x.npy", 2, "'--inptu'"},
      {D " check net --input x=x.npy --rtol", 2, "incomplete option '--rtol'"},
      {D " export net --to tflite -o t", 2, "paddle or onnx, not 'tflite'"},
      {"./exe --inptu x=x.npy", 2, "unknown option '--inptu'"},
      {"./exe --input x=x.npy --bench 0", 2, "--bench expects a count from 1 to 1000000"},
  };
  setup();
  check_all(m, (int)(sizeof m / sizeof *m));
}

/* Wrong and missing files, wrong inputs: one line (1) naming the file or
 * the input. */
static void test_wrong_files_and_inputs(void) {
  static const mistake m[] = {
      {D " run nosuch --input x=x.npy", 1, "nosuch.dymodel: cannot open"},
      {D " show text.onnx", 1, "text.onnx: not an ONNX model"},
      {D " show renamed.dymodel", 1, "not a .dymodel but an ONNX model"},
      {D " run net --input x=nosuch.npy", 1, "nosuch.npy"},
      {D " run net --input y=x.npy", 1, "'y'"},
      {D " run net", 1, "missing input 'x'"},
      {D " run net --input x=x64.npy", 1, "dtype '<i8', expected '<f4'"},
      {D " run net --input x=x3.npy", 1, "input 'x' is f32[3,3], the Program expects f32[-1,2]"},
      {"./exe --input x=x64.npy", 1, "dtype '<i8', expected '<f4'"},
      {"./exe --input x=x3.npy", 1, "input 'x': x3.npy: shape [3, 3], expected [-1, 2]"},
      {"./exe --input x=nosuch.npy", 1, "nosuch.npy"},
      {"./exe --input y=x.npy", 1, "input 'y': the model has no input of that name"},
      {D " compare x.npy x3.npy", 1, "shapes differ"},
      {D " compare x.npy nosuch.npy", 1, "nosuch.npy"},
  };
  setup();
  check_all(m, (int)(sizeof m / sizeof *m));
}

/* Missing directories: created where the command writes into one of its
 * own, else one line naming the directory. */
static void test_missing_dirs(void) {
  static const mistake m[] = {
      {D " compile net -o nodir/sub/exe", 1, "exe: the directory nodir/sub does not exist"},
      {D " compile net --emit c -o nodir/sub/fw", 1,
       "fw.h: the directory nodir/sub does not exist"},
      {D " quantize net --calibrate nodir -o q", 1, "--calibrate nodir: cannot open the directory"},
      {D " run net --input x=x.npy --output-dir nodir/sub", 1,
       "nodir/sub: cannot create: No such file or directory"},
      {"./exe --input x=x.npy --output-dir nodir/sub", 1,
       "output directory nodir/sub: No such file or directory"},
      {D " export net --to onnx -o nodir/sub/n.onnx", 1,
       "n.onnx: the directory nodir/sub does not exist"},
  };
  setup();
  check_all(m, (int)(sizeof m / sizeof *m));
}

void dy_test_register(void) {
  DY_SUITE("mistakes");
  DY_TEST(test_misspelt);
  DY_TEST(test_wrong_files_and_inputs);
  DY_TEST(test_missing_dirs);
}
