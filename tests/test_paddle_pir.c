/* test_paddle_pir.c - Paddle 3 PIR programs (`inference.json`,
 * compiler/frontends/paddle/paddle_pir.c and its JSON reader
 * common/fe_json.c) on the models of ../shared/testdata-paddle-next
 * (DY_PADDLE_NEXT_DATA; README.md there):
 *
 *   - pir_textline_ori (PP-LCNet, params present): the static executor
 *     and `dy2stc run` and the compiled executable against the stored
 *     reference out_fetch_name_0_b1.npy, scale-relative error
 *     max|got - ref| / max|ref| <= 1e-4 (test_paddle.c's);
 *   - pir_doclayout_s_nms (no params): the translation succeeds, the
 *     import stops at multiclass_nms3 with its one-line reason; its dense
 *     part (the NMS inputs as fetches) imports and verifies; `dy2stc
 *     show` of pir_textline_ori without its params prints the Program;
 *   - the JSON reader and the translator on malformed text and programs:
 *     one line naming the byte offset or the PIR op, never a crash
 *     (truncations and byte flips of the real file under ASan).
 * Without the data folder the model cases say so loudly and return.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#ifndef DY_PADDLE_NEXT_DATA
#define DY_PADDLE_NEXT_DATA DY_SOURCE_DIR "/../shared/testdata-paddle-next"
#endif
#define TEXTLINE DY_PADDLE_NEXT_DATA "/pir_textline_ori"
#define DOCLAYOUT DY_PADDLE_NEXT_DATA "/pir_doclayout_s_nms"
#define PICODET DY_PADDLE_NEXT_DATA "/picodet_layout_nms3"

static bool have_data(void) {
  static const char missing[] = "no " DY_PADDLE_NEXT_DATA " (pir_textline_ori, "
                                 "pir_doclayout_s_nms): the PIR model tests need it beside the clone";
  return dy_test_have_data(TEXTLINE "/inference.json", missing) &&
         dy_test_have_data(DOCLAYOUT "/inference.json", missing);
}

/* The PIR loader on text: the status, and err's message one line. */
static dy_status load_text(const char *text, dy_error *err) {
  dy_program *p = NULL;
  dy_status s = dy_paddle_load_pir_mem((const uint8_t *)text, strlen(text), NULL, 0, "t.json",
                                       NULL, &p, err);
  if (s) {
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT(err->msg[0] != 0 && strchr(err->msg, '\n') == NULL);
  }
  dy_program_free(p);
  return s;
}

static void expect_error(const char *text, dy_status want, const char *frag) {
  dy_error err = {0};
  CU_ASSERT_EQUAL(load_text(text, &err), want);
  if (!strstr(err.msg, frag))
    fprintf(stderr, "\n    expected '%s' in: %s", frag, err.msg);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag));
}

/* A PIR program of one block: the ops given, between a feed x f32[-1,4]
 * (value 1) and a fetch of value `fetched`. */
static char *program(const char *ops, int fetched) {
  static char buf[8192];
  snprintf(buf, sizeof buf,
           "{\"base_code\":{\"magic\":\"pir\",\"version\":1},\"program\":{\"regions\":[{\"#\":"
           "\"region_0\",\"blocks\":[{\"#\":\"block_0\",\"args\":[],\"ops\":["
           "{\"#\":\"1.data\",\"A\":[{\"AT\":{\"#\":\"0.a_str\",\"D\":\"x\"},\"N\":\"name\"}],"
           "\"I\":[],\"O\":[{\"%%\":1,\"TT\":{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},"
           "[-1,4],\"NCHW\",[],0]}}]},%s"
           "{\"#\":\"1.fetch\",\"A\":[{\"AT\":{\"#\":\"0.a_str\",\"D\":\"fetch_name_0\"},\"N\":"
           "\"name\"},{\"AT\":{\"#\":\"0.a_i32\",\"D\":0},\"N\":\"col\"}],\"I\":[{\"%%\":%d}],"
           "\"O\":[{\"%%\":99,\"TT\":{\"#\":\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},[-1,4],"
           "\"NCHW\",[],0]}}]}]}]}]}}",
           ops, fetched);
  return buf;
}

/* An op NAME of input values and one output value 2, f32[-1,4]. */
#define OP(name, attrs, ins) \
  "{\"#\":\"" name "\",\"A\":[" attrs "],\"I\":[" ins "],\"O\":[{\"%\":2,\"TT\":{\"#\":" \
  "\"0.t_dtensor\",\"D\":[{\"#\":\"0.t_f32\"},[-1,4],\"NCHW\",[],0]}}]},"

static void test_json_reader(void) {
  /* each refusal names the byte */
  expect_error("", DY_STATUS_FORMAT, "JSON: byte 0 (the end): a value");
  expect_error("{\"a\":1,}", DY_STATUS_FORMAT, "byte 7 ('}'): a key string in an object");
  expect_error("[1 2]", DY_STATUS_FORMAT, "byte 3 ('2'): ',' or ']' in an array");
  expect_error("{\"a\" 1}", DY_STATUS_FORMAT, "byte 5 ('1'): ':' after an object key");
  expect_error("[01]", DY_STATUS_FORMAT, "byte 1 ('0'): a number with a leading zero");
  expect_error("[1.]", DY_STATUS_FORMAT, "a digit after '.'");
  expect_error("[-]", DY_STATUS_FORMAT, "byte 2 (']'): a digit");
  expect_error("[tru]", DY_STATUS_FORMAT, "true or false");
  expect_error("[NaN]", DY_STATUS_FORMAT, "a value (object, array");
  expect_error("\"abc", DY_STATUS_FORMAT, "unterminated string");
  expect_error("\"a\tb\"", DY_STATUS_FORMAT, "byte 2 (0x09): a control character");
  expect_error("\"\\x\"", DY_STATUS_FORMAT, "an unknown escape");
  expect_error("\"\\ud800\"", DY_STATUS_FORMAT, "a high surrogate without its low surrogate");
  expect_error("\"\\udc00\"", DY_STATUS_FORMAT, "a lone low surrogate");
  expect_error("\"\\u12g4\"", DY_STATUS_FORMAT, "\\u needs 4 hex digits");
  expect_error("{} x", DY_STATUS_FORMAT, "byte 3 ('x'): the end of the text after the value");
  char deep[200];
  memset(deep, '[', 65);
  memset(deep + 65, ']', 65);
  deep[130] = 0;
  expect_error(deep, DY_STATUS_FORMAT, "byte 64 ('['): arrays/objects nested more than 64");
  deep[1] = ' '; /* 64 levels: parses, then is no PIR program */
  deep[129] = ' ';
  expect_error(deep, DY_STATUS_FORMAT, "t.json: PIR program: not a PIR program");
  /* valid JSON, escapes and numbers included, that is no PIR program */
  expect_error("{\"base_code\":{\"magic\":\"p\\u0069r\"},\"x\":[1e5,-0.5,\"\\ud83d\\ude00\"]}",
               DY_STATUS_FORMAT, "regions (one is supported)");
  expect_error("{\"base_code\":{\"magic\":\"pir\"},\"program\":{\"regions\":[{\"blocks\":[{"
               "\"ops\":[]}]}]}}", DY_STATUS_FORMAT, "the block has no ops");
}

static void test_program_errors(void) {
  /* a PIR program of the test's own: relu of x */
  dy_error err = {0};
  dy_program *p = NULL;
  const char *ok = program(OP("1.relu", "", "{\"%\":1}"), 2);
  DY_ASSERT_OK(dy_paddle_load_pir_mem((const uint8_t *)ok, strlen(ok), NULL, 0, "t.json", NULL,
                                      &p, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->n_feeds, 1);
  CU_ASSERT_EQUAL(p->n_fetches, 1);
  CU_ASSERT_STRING_EQUAL(p->vars[p->fetches[0]]->name, "fetch_name_0");
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_RELU), 1);
  dy_program_free(p);
  /* an unknown pd_op, a non-pd_op dialect, an undefined input, a value
   * defined twice, an attribute kind the reader lacks */
  expect_error(program(OP("1.frobnicate", "", "{\"%\":1}"), 2), DY_STATUS_UNSUPPORTED,
               "t.json: PIR op 1 (pd_op.frobnicate): the op type is not supported");
  expect_error(program(OP("3.while", "", "{\"%\":1}"), 2), DY_STATUS_UNSUPPORTED,
               "PIR op 1 (3.while): the op is not supported");
  expect_error(program(OP("1.relu", "", "{\"%\":7}"), 2), DY_STATUS_FORMAT,
               "PIR op 1 (pd_op.relu): input 0 is not a value defined before");
  expect_error(program(OP("1.relu", "", "{\"%\":1}") OP("1.relu", "", "{\"%\":2}"), 2),
               DY_STATUS_FORMAT, "PIR op 2 (pd_op.relu): value %2 is defined twice");
  expect_error(program(OP("1.softmax", "{\"AT\":{\"#\":\"1.a_weird\",\"D\":1},\"N\":\"axis\"}",
                          "{\"%\":1}"), 2),
               DY_STATUS_UNSUPPORTED, "attribute 'axis' of kind '1.a_weird' is not supported");
  expect_error(program(OP("1.relu", "", "{\"%\":1}"), 5), DY_STATUS_FORMAT,
               "PIR op 2 (pd_op.fetch): a fetch without its input value");
  /* pool2d's kernel size from a computed value */
  expect_error(program(OP("1.pool2d", "", "{\"%\":1},{\"%\":1}"), 2), DY_STATUS_UNSUPPORTED,
               "input 'ksize' is computed (not a pd_op.full / full_int_array)");
  /* the importer's own errors name the translated op */
  expect_error(program(OP("1.add", "", "{\"%\":1}"), 2), DY_STATUS_FORMAT, "elementwise_add");
}

/* The real file cut short and with bytes flipped: a status and one line,
 * never a crash. */
static void test_corruption(void) {
  if (!have_data())
    return;
  uint8_t *buf;
  size_t n;
  dy_error err = {0};
  DY_ASSERT_OK(dy_read_file(TEXTLINE "/inference.json", &buf, &n, &err), &err);
  int fails = 0;
  for (int k = 0; k < 48; k++) {
    uint8_t *b = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    memcpy(b, buf, n);
    size_t len = n;
    if (k < 16)
      len = n * (size_t)k / 16;
    else
      b[(size_t)(k - 16) * 2654435761u % n] ^= (uint8_t)(1u << (k % 8));
    dy_program *p = NULL;
    dy_status s = dy_paddle_load_pir_mem(b, len, NULL, 0, "c.json", NULL, &p, &err);
    if (s) {
      fails++;
      CU_ASSERT(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    }
    dy_program_free(p);
    free(b);
  }
  CU_ASSERT(fails >= 16); /* every truncation at least */
  free(buf);
}

static void test_textline(void) {
  if (!have_data())
    return;
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load(TEXTLINE "/inference.json", NULL, NULL, &p, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL_FATAL(p->n_feeds, 1);
  CU_ASSERT_EQUAL_FATAL(p->n_fetches, 1);
  CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[0]]->name, "x");
  CU_ASSERT_STRING_EQUAL(p->vars[p->fetches[0]]->name, "fetch_name_0");
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_CONV2D), 31);     /* 18 + 13 depthwise */
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_BATCH_NORM), 27);
  /* the source line of PIR op k is k + 1: softmax is op 258 of 260 */
  char *text = dy_program_to_text(p);
  const char *sm = text ? strstr(text, "fetch_name_0 = softmax(add_393) {axis = -1}  @") : NULL;
  CU_ASSERT_PTR_NOT_NULL(sm);
  CU_ASSERT(sm && strncmp(strchr(sm, '\n') - 18, "inference.json:259", 18) == 0);
  free(text);
  dy_tensor *x = NULL, *ref = NULL, *got = NULL;
  DY_ASSERT_OK(dy_npy_read(TEXTLINE "/in_x_b1.npy", &x, &err), &err);
  DY_ASSERT_OK(dy_npy_read(TEXTLINE "/out_fetch_name_0_b1.npy", &ref, &err), &err);
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &got, 1, &err), &err);
  CU_ASSERT_TRUE_FATAL(got && dy_type_equal(&got->type, &ref->type));
  double e = dy_test_scaled_err(got, ref);
  fprintf(stderr, "\n    pir_textline_ori executor rel err %.3g", e);
  CU_ASSERT(e <= 1e-4);
  /* the same Program as its ProgramDesc form: export, import */
  uint8_t *m, *pa;
  size_t mn, pn;
  DY_ASSERT_OK(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, &err), &err);
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_paddle_load_mem(m, mn, pa, pn, "rt", NULL, &q, &err), &err);
  dy_tensor *got2 = NULL;
  DY_ASSERT_OK(dy_executor_run(q, &x, 1, &got2, 1, &err), &err);
  CU_ASSERT(got2 && dy_test_scaled_err(got2, got) == 0);
  free(m);
  free(pa);
  dy_tensor_free(got2);
  dy_program_free(q);
  dy_tensor_free(x);
  dy_tensor_free(ref);
  dy_tensor_free(got);
  dy_program_free(p);
}

/* `dy2stc run`, `compile` + the executable, `check` on inference.json. */
static void test_textline_cli(void) {
  if (!have_data())
    return;
  char out[4096], exe[4096];
  snprintf(out, sizeof out, "%s/pir_out", DY_BUILD_DIR);
  snprintf(exe, sizeof exe, "%s/pir_textline", DY_BUILD_DIR);
  const char *cmp = "--rtol 1e-4 --atol 1e-5 >/dev/null";
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && '%s' run '%s/inference.json' "
                             "--input x='%s/in_x_b1.npy' --output-dir '%s' >/dev/null && '%s' "
                             "compare '%s/fetch_name_0.npy' '%s/out_fetch_name_0_b1.npy' %s",
                             out, out, DY2STC_PATH, TEXTLINE, TEXTLINE, out, DY2STC_PATH, out,
                             TEXTLINE, cmp), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && '%s' compile "
                             "'%s/inference.json' -o '%s' >/dev/null && '%s' --input "
                             "x='%s/in_x_b1.npy' --output-dir '%s' >/dev/null && '%s' compare "
                             "'%s/fetch_name_0.npy' '%s/out_fetch_name_0_b1.npy' %s",
                             out, out, DY2STC_PATH, TEXTLINE, exe, exe, TEXTLINE, out,
                             DY2STC_PATH, out, TEXTLINE, cmp), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' check '%s/inference.json' --input x='%s/in_x_b1.npy' "
                             ">/dev/null", DY2STC_PATH, TEXTLINE, TEXTLINE), 0);
}

/* Without its params file: show prints the Program (typed parameters, a
 * note), run and compile say which file is missing. */
static void test_show_without_params(void) {
  if (!have_data())
    return;
  char dir[4096], log[4200];
  snprintf(dir, sizeof dir, "%s/pir_noparams", DY_BUILD_DIR);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && cp '%s/inference.json' "
                                   "'%s/'", dir, dir, TEXTLINE, dir), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' show '%s/inference.json' >'%s' 2>'%s.err'", DY2STC_PATH,
                             dir, log, log), 0);
  char *text = dy_test_slurp(log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "var conv2d_0.w_0_deepcopy_0 : f32[8,3,3,3] persistable"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "fetch 0 fetch_name_0"));
  CU_ASSERT_PTR_NULL(strstr(text, "persistable = [")); /* no values */
  CU_ASSERT_PTR_NULL(strstr(text, "persistable trainable = ["));
  free(text);
  snprintf(log + strlen(log), sizeof log - strlen(log), ".err");
  text = dy_test_slurp(log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "no params file: its 145 parameters are shown by type"));
  free(text);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "'%s' run '%s/inference.json' --input x='%s/in_x_b1.npy' "
           "--output-dir '%s'", DY2STC_PATH, dir, TEXTLINE, dir);
  dy_test_expect_cli(log, 1, "no params file", cmd);
  snprintf(cmd, sizeof cmd, "'%s' compile '%s/inference.json' -o '%s/x'", DY2STC_PATH, dir, dir);
  dy_test_expect_cli(log, 1, "inference.pdiparams", cmd);
  /* the API: the same without params_optional, typed vars with it */
  dy_program *p = NULL;
  dy_error err = {0};
  char path[4200];
  snprintf(path, sizeof path, "%s/inference.json", dir);
  CU_ASSERT_EQUAL(dy_paddle_load(path, NULL, NULL, &p, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no params were given"));
  dy_paddle_options o = {.params_optional = true};
  DY_ASSERT_OK(dy_paddle_load(path, NULL, &o, &p, &err), &err);
  int typed = 0;
  for (int i = 0; p && i < p->n_vars; i++)
    typed += p->vars[i]->persistable && !p->vars[i]->data;
  CU_ASSERT_EQUAL(typed, 145);
  CU_ASSERT_NOT_EQUAL(dy_verify(p, &err), DY_OK); /* nothing runs it */
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "has no data"));
  dy_program_free(p);
}

/* Zeros for the absent params (a Program imported with params_optional). */
static void zero_params(dy_program *p) {
  dy_error err = {0};
  for (int i = 0; i < p->n_vars; i++) /* zeros for the absent params */
    if (p->vars[i]->persistable && !p->vars[i]->data) {
      size_t nb = (size_t)dy_type_numel(&p->vars[i]->type) * dy_dtype_size(p->vars[i]->type.dtype);
      void *z = calloc(1, nb ? nb : 1);
      DY_ASSERT_OK(dy_program_set_data(p, i, z, nb, &err), &err);
      free(z);
    }
}

/* The multiclass_nms3 head of a PaddleDetection export: one
 * multiclass_nms op (keep_top_k 100, background -1, no [[-1]] row) whose
 * rows are the size symbol nms_rows bounded by max batch x 100, fetched as
 * Out f32 [nms_rows, 6] and NmsRoisNum i32 [B]; with zeros for the absent
 * params the Program verifies. */
static void check_nms_head(dy_program *p, const char *out, const char *rois_num) {
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_MULTICLASS_NMS), 1);
  CU_ASSERT_EQUAL_FATAL(p->n_fetches, 2);
  const dy_var *o = p->vars[p->fetches[0]], *r = p->vars[p->fetches[1]];
  CU_ASSERT_STRING_EQUAL(o->name, out);
  CU_ASSERT_STRING_EQUAL(r->name, rois_num);
  int64_t rows = dy_dim_sym("nms_rows");
  CU_ASSERT(o->type.dtype == DY_F32 && o->type.rank == 2 && o->type.shape[0] == rows &&
            o->type.shape[1] == 6);
  CU_ASSERT(r->type.dtype == DY_I32 && r->type.rank == 1 && r->type.shape[0] == -1);
  const dy_sym_decl *d = dy_program_sym(p, dy_sym_id("nms_rows"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_EQUAL(d->max, 64 * 100);
  zero_params(p);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
}

static void test_doclayout(void) {
  if (!have_data())
    return;
  dy_program *p = NULL;
  dy_error err = {0};
  dy_paddle_options o = {.params_optional = true};
  /* translated whole, multiclass_nms3 included */
  DY_ASSERT_OK(dy_paddle_load(DOCLAYOUT "/inference.json", NULL, &o, &p, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  check_nms_head(p, "fetch_name_0", "fetch_name_1");
  dy_program_free(p);
  p = NULL;
  /* its dense part, up to the NMS inputs: imports and verifies, params
   * aside (split_with_num + builtin.split, combine + concat, full as
   * attributes, nearest_interp, transpose, scale, sqrt, divide) */
  const char *fetch[] = {"divide_1298", "concat_1273"};
  o.n_fetches = 2;
  o.fetch_names = fetch;
  DY_ASSERT_OK(dy_paddle_load(DOCLAYOUT "/inference.json", NULL, &o, &p, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->n_feeds, 2); /* image, scale_factor */
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_CONV2D), 98);
  CU_ASSERT(dy_test_count_kind(p, DY_OP_SLICE) >= 4);
  zero_params(p);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  dy_program_free(p);
  /* the CLI shows it whole */
  char log[4096];
  snprintf(log, sizeof log, "%s/pir_doclayout.txt", DY_BUILD_DIR);
  CU_ASSERT_EQUAL(dy_test_sh(log, "'%s' show '%s/inference.json'", DY2STC_PATH, DOCLAYOUT), 0);
  char *t = dy_test_slurp(log);
  CU_ASSERT(t && strstr(t, "fetch_name_0, multiclass_nms3_1300, fetch_name_1 = "
                                        "multiclass_nms(divide_1298, concat_1273)"));
  free(t);
}

/* picodet_layout_nms3 (.pdmodel, no params): imports whole, its
 * multiclass_nms3 (keep_top_k 100) a run-time count bounded by 64 x 100;
 * verifies with the absent params typed; show prints it. */
static void test_picodet_nms3(void) {
  if (!have_data())
    return;
  dy_program *p = NULL;
  dy_error err = {0};
  dy_paddle_options o = {.params_optional = true};
  DY_ASSERT_OK(dy_paddle_load(PICODET "/model.pdmodel", NULL, &o, &p, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->n_feeds, 2); /* image, scale_factor */
  check_nms_head(p, "multiclass_nms3_0.tmp_0", "multiclass_nms3_0.tmp_2");
  dy_program_free(p);
  char log[4096];
  snprintf(log, sizeof log, "%s/picodet_nms3.txt", DY_BUILD_DIR);
  CU_ASSERT_EQUAL(dy_test_sh(log, "'%s' show '%s/model.pdmodel'", DY2STC_PATH, PICODET), 0);
  char *t = dy_test_slurp(log);
  CU_ASSERT(t && strstr(t, "sym nms_rows max 6400"));
  CU_ASSERT(t && strstr(t, "var multiclass_nms3_0.tmp_0 : f32[nms_rows,6]"));
  free(t);
}

void dy_test_register(void) {
  DY_SUITE("paddle_pir");
  DY_TEST(test_json_reader);
  DY_TEST(test_program_errors);
  DY_TEST(test_corruption);
  DY_TEST(test_textline);
  DY_TEST(test_textline_cli);
  DY_TEST(test_show_without_params);
  DY_TEST(test_doclayout);
  DY_TEST(test_picodet_nms3);
}
