/* test_localize.c - `dy2stc check --localize` and dy_localize
 * (compiler/driver/localize.c): the first op whose compiled result departs from
 * the static executor.
 *
 * A small net (matmul + bias + relu, which fuse into one kernel, then
 * tanh, softmax and scale, one source line each) is compiled with a wrong
 * kernel planted (dy_localize's plant_op: the op's result is off by one in
 * element 0 before later ops read it); the report must name exactly that
 * op, its line and var, and the element, at the default level (the fused
 * op lists its three lines) and at -O0. Unplanted, every op agrees. The
 * debug build only adds the dump calls: without them its NAME.c is the
 * normal one byte for byte. Integer results (i8, i32) are compared too.
 * The CLI prints the report and exits 0 or 1.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define SCRATCH DY_BUILD_DIR "/localize_scratch"

static const char net[] =
    "program {\n"
    "  sym batch max 4\n"
    "  var x : f32[-1,4] feed 0\n"
    "  var w : f32[4,3] persistable = [0.5, -0.25, 0.125, 0.75, 0.5, -0.5, -0.125, 0.25, 1.0,"
    " 0.3, -0.6, 0.2]\n"
    "  var b : f32[3] persistable = [0.1, -0.2, 0.3]\n"
    "  var m : f32[-1,3]\n"
    "  var a : f32[-1,3]\n"
    "  var h : f32[-1,3]\n"
    "  var e : f32[-1,3]\n"
    "  var s : f32[-1,3]\n"
    "  var out : f32[-1,3]\n"
    "  block 0 parent -1 {\n"
    "    m = matmul(x, w) {transpose_x = 0, transpose_y = 0}  @net.c:10\n"
    "    a = add(m, b)  @net.c:11\n"
    "    h = relu(a)  @net.c:12\n"
    "    e = tanh(h)  @net.c:13\n"
    "    s = softmax(e) {axis = -1}  @net.c:14\n"
    "    out = scale(s) {scale = 2.0, bias = 0.5, bias_after_scale = 1}  @net.c:15\n"
    "  }\n"
    "  fetch 0 out\n"
    "}\n";

static dy_tensor *input(void) {
  static const float x[] = {1, 2, 3, 4, -1, 0.5f, 2, -3, 0.25f, 1, -2, 1};
  return dy_tensor_from_data(DY_F32, 2, (int64_t[]){3, 4}, x);
}

static dy_compile_options options(int opt_level) {
  dy_compile_options o = dy_compile_options_default();
  o.name = "net";
  o.passes.opt_level = opt_level;
  o.target = "generic"; /* SSE2 and -O1: quicker to build, as right */
  o.cflags = "-O1";
  return o;
}

/* The id of the op at source line `line` in net compiled at opt_level,
 * and its number of outputs' first var name. */
static int op_at_line(int opt_level, int line, char *var, size_t n) {
  dy_program *p = dy_test_parse_ok(net);
  dy_compile_options o = options(opt_level);
  dy_codegen_output co = {0};
  dy_error err = {0};
  int id = -1;
  if (p && dy_compile_program(p, &o, &co, NULL, &err) == DY_OK)
    for (int k = 0; k < p->blocks[0]->n_ops; k++)
      if (p->blocks[0]->ops[k]->loc.line == line) {
        id = p->blocks[0]->ops[k]->id;
        snprintf(var, n, "%s", p->vars[p->blocks[0]->ops[k]->outputs[0]]->name);
      }
  dy_codegen_output_free(&co);
  dy_program_free(p);
  return id;
}

static void localize(int opt_level, int plant, dy_localize_result *r) {
  dy_program *p = dy_test_parse_ok(net);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *x = input();
  dy_compile_options o = options(opt_level);
  dy_error err = {0};
  DY_ASSERT_OK(dy_localize(p, &o, &x, 1e-5, 1e-6, plant, r, &err), &err);
  dy_tensor_free(x);
  dy_program_free(p);
}

static void test_no_plant_agrees(void) {
  dy_localize_result r;
  localize(2, -1, &r);
  CU_ASSERT(!r.found);
  CU_ASSERT(r.n_compared >= 4); /* fused_matmul, tanh, softmax, scale */
  localize(0, -1, &r);
  CU_ASSERT(!r.found);
  CU_ASSERT_EQUAL(r.n_compared, 6);
}

/* Integer results (i8, i32) are dumped with their own element sizes and
 * compared: a quantize, an integer matmul and a dequantize all agree. */
static void test_integer_results(void) {
  static const char qnet[] =
      "program {\n"
      "  sym batch max 4\n"
      "  var x : f32[-1,4] feed 0\n"
      "  var s : f32[1] persistable = [0.05]\n"
      "  var z : i8[1] persistable = [3]\n"
      "  var w : i8[4,2] persistable = [1, -2, 3, -4, 5, -6, 7, -8]\n"
      "  var wz : i8[1] persistable = [0]\n"
      "  var s2 : f32[1] persistable = [0.001]\n"
      "  var z2 : i32[1] persistable = [0]\n"
      "  var q : i8[-1,4]\n"
      "  var m : i32[-1,2]\n"
      "  var d : f32[-1,2]\n"
      "  block 0 parent -1 {\n"
      "    q = quantize_linear(x, s, z) {axis = 1}  @q.c:1\n"
      "    m = matmul_integer(q, w, z, wz)  @q.c:2\n"
      "    d = dequantize_linear(m, s2, z2) {axis = 1}  @q.c:3\n"
      "  }\n"
      "  fetch 0 d\n"
      "}\n";
  dy_program *p = dy_test_parse_ok(qnet);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *x = input();
  dy_compile_options o = options(0);
  dy_localize_result r;
  dy_error err = {0};
  DY_ASSERT_OK(dy_localize(p, &o, &x, 0, 0, -1, &r, &err), &err);
  CU_ASSERT(!r.found);
  CU_ASSERT_EQUAL(r.n_compared, 3);
  dy_tensor_free(x);
  dy_program_free(p);
}

/* A planted wrong kernel is named: op, line, var, element, values. */
static void expect_plant(int opt_level, int line, const char *kind) {
  char var[256] = "";
  int id = op_at_line(opt_level, line, var, sizeof var);
  CU_ASSERT_FATAL(id >= 0);
  dy_localize_result r;
  localize(opt_level, id, &r);
  CU_ASSERT_FATAL(r.found);
  if (r.op_id != id || r.line != line)
    fprintf(stderr, "\n  planted op %d (line %d), found op %d at %s:%d\n", id, line, r.op_id,
            r.file, r.line);
  CU_ASSERT_EQUAL(r.op_id, id);
  CU_ASSERT_EQUAL(r.line, line);
  CU_ASSERT_STRING_EQUAL(r.file, "net.c");
  CU_ASSERT_STRING_EQUAL(dy_op_name(r.kind), kind);
  CU_ASSERT_STRING_EQUAL(r.var, var);
  CU_ASSERT_EQUAL(r.n_bad, 1); /* element 0 of the first row, nothing else */
  CU_ASSERT_EQUAL(r.n_elements, 9);
  CU_ASSERT_EQUAL(r.n_shown, 1);
  CU_ASSERT_EQUAL(r.index[0], 0);
  DY_ASSERT_NEAR(r.got[0] - r.expected[0], 1.0, 1e-5);
}

static void test_plant_found(void) {
  expect_plant(2, 14, "softmax");
  expect_plant(2, 13, "tanh");
  expect_plant(0, 11, "add");
  expect_plant(0, 15, "scale");
  /* the fused kernel: its line is its last part's, its parts listed */
  char var[256];
  int id = op_at_line(2, 12, var, sizeof var);
  dy_localize_result r;
  localize(2, id, &r);
  CU_ASSERT(r.found && r.op_id == id);
  CU_ASSERT_STRING_EQUAL(dy_op_name(r.kind), "fused_matmul");
  CU_ASSERT_STRING_EQUAL(r.srcs, "net.c:10 matmul, net.c:11 add, net.c:12 relu");
}

/* The debug build adds the dump calls and their prototype, nothing else;
 * off, nothing changes. */
static void test_debug_build_only_adds(void) {
  char *src[2] = {0};
  for (int on = 0; on < 2; on++) {
    dy_program *p = dy_test_parse_ok(net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    dy_compile_options o = options(2);
    o.debug_dump = on;
    dy_codegen_output co = {0};
    dy_error err = {0};
    DY_ASSERT_OK(dy_compile_program(p, &o, &co, NULL, &err), &err);
    src[on] = co.source;
    co.source = NULL;
    dy_codegen_output_free(&co);
    dy_program_free(p);
  }
  CU_ASSERT(strstr(src[0], "debug_dump") == NULL);
  CU_ASSERT(strstr(src[1], "net_debug_dump(") != NULL);
  /* strip the prototype (comment to blank line) and every call line */
  char *s = src[1], *out = malloc(strlen(s) + 1);
  size_t k = 0;
  char *proto = strstr(s, "/* a --localize build");
  CU_ASSERT_PTR_NOT_NULL_FATAL(proto);
  char *proto_end = strstr(proto, "\n\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(proto_end);
  int calls = 0;
  for (char *line = s; *line;) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
    bool drop = (line >= proto && line <= proto_end + 1);
    if (!drop && strstr(line, "net_debug_dump(") && strstr(line, "net_debug_dump(") < line + len) {
      drop = true;
      calls++;
    }
    if (!drop) {
      memcpy(out + k, line, len);
      k += len;
    }
    line += len;
  }
  out[k] = '\0';
  CU_ASSERT_EQUAL(calls, 4);
  CU_ASSERT_STRING_EQUAL(out, src[0]);
  free(out);
  free(src[0]);
  free(src[1]);
}

static void test_cli(void) {
  dy_program *p = dy_test_parse_ok(net);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_save(p, SCRATCH "/net", &err), &err);
  dy_tensor *x = input();
  DY_ASSERT_OK(dy_npy_write(SCRATCH "/x.npy", x, &err), &err);
  dy_tensor_free(x);
  dy_program_free(p);
  int rc = dy_test_sh(SCRATCH "/cli.log", "%s check %s/net.dymodel --input x=%s/x.npy --localize",
                      DY2STC_PATH, SCRATCH, SCRATCH);
  CU_ASSERT_EQUAL(rc, 0);
  char *log = dy_test_slurp(SCRATCH "/cli.log");
  CU_ASSERT(log && strstr(log, "op results all agree with the static executor"));
  free(log);
  /* a failure to build is one line and exit 1 */
  rc = dy_test_sh(SCRATCH "/cli.log", "%s check %s/net.dymodel --input x=%s/x.npy --localize "
                                      "--cc /nonexistent/cc",
                  DY2STC_PATH, SCRATCH, SCRATCH);
  CU_ASSERT_EQUAL(rc, 1);
  log = dy_test_slurp(SCRATCH "/cli.log");
  CU_ASSERT(log && strncmp(log, "dy2stc: ", 8) == 0 && strchr(log, '\n') == log + strlen(log) - 1);
  free(log);
}

void dy_test_register(void) {
  mkdir(SCRATCH, 0777);
  DY_SUITE("localize");
  DY_TEST(test_no_plant_agrees);
  DY_TEST(test_plant_found);
  DY_TEST(test_integer_results);
  DY_TEST(test_debug_build_only_adds);
  DY_TEST(test_cli);
}
