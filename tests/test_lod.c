/* test_lod.c - the LoD sequence ops (ir/ops_lod.def) against values
 * computed by hand, each on the static executor and in the compiled
 * executable (inputs given with --input and --lod):
 *
 *   - sequence_pool, every pooltype, with an empty sequence (pad_value)
 *     and a single sequence;
 *   - sequence_pad (and sequence_len) with an empty sequence;
 *   - lstm (identity activations so the numbers are exact; peephole on
 *     the forget gate; forward and is_reverse) after an empty sequence;
 *   - gru (identity activations; origin_mode both ways);
 *   - crf_decoding: a Viterbi path that is not the greedy one, a one-row
 *     sequence and an empty one;
 *   - bad offsets and an overlong sequence: a one-line error on the
 *     executor and a failing executable.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

typedef struct {
  const char *name;  /* a var of the Program; NAME@lod goes with --lod NAME */
  dy_dtype dt;
  int rank;
  int64_t shape[4];
  const void *data;
} lod_in;

static dy_tensor *tensor_of(const lod_in *in) {
  dy_tensor *t = dy_tensor_new(in->dt, in->rank, in->shape);
  memcpy(t->data, in->data, t->nbytes);
  return t;
}

/* got against want (n values of out's dtype): f32 within 1e-5 relative. */
static void expect_values(const char *tag, const char *how, const dy_tensor *got,
                          const void *want, int64_t n) {
  CU_ASSERT_EQUAL_FATAL(dy_tensor_numel(got), n);
  for (int64_t i = 0; i < n; i++) {
    bool ok;
    if (got->type.dtype == DY_I64) {
      ok = ((const int64_t *)got->data)[i] == ((const int64_t *)want)[i];
    } else {
      float g = ((const float *)got->data)[i], w = ((const float *)want)[i];
      ok = fabsf(g - w) <= 1e-5f * (fabsf(w) > 1 ? fabsf(w) : 1);
    }
    if (!ok)
      fprintf(stderr, "\n  %s (%s): element %lld differs", tag, how, (long long)i);
    CU_ASSERT(ok);
  }
}

/* Save, compile and return the executable's command with its inputs. */
static void compiled_cmd(const char *tag, const dy_program *p, const lod_in *in, int n_in,
                         char *cmd, size_t n, char *out_dir, size_t n_dir) {
  char model[2048], exe[2048], path[4096];
  dy_error err = {0};
  snprintf(model, sizeof model, "%s/lod_%s.dymodel", DY_BUILD_DIR, tag);
  snprintf(exe, sizeof exe, "%s/lod_%s_exe", DY_BUILD_DIR, tag);
  snprintf(out_dir, n_dir, "%s/lod_%s_out", DY_BUILD_DIR, tag);
  DY_ASSERT_OK(dy_model_save(p, model, &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' >/dev/null", DY2STC_PATH,
                                   model, exe), 0);
  dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", out_dir, out_dir);
  size_t at = (size_t)snprintf(cmd, n, "'%s' --output-dir '%s'", exe, out_dir);
  for (int i = 0; i < n_in; i++) {
    snprintf(path, sizeof path, "%s/in%d.npy", out_dir, i);
    dy_tensor *t = tensor_of(&in[i]);
    DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
    dy_tensor_free(t);
    size_t len = strlen(in[i].name);
    bool lod = len > 4 && strcmp(in[i].name + len - 4, "@lod") == 0;
    at += (size_t)snprintf(cmd + at, n - at, " %s '%.*s=%s'", lod ? "--lod" : "--input",
                           (int)(lod ? len - 4 : len), in[i].name, path);
  }
}

/* The Program's output y on both paths equals want (n values). */
static void run_case(const char *tag, const char *text, const lod_in *in, int n_in,
                     const void *want, int64_t n) {
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *t[8], *got = NULL;
  dy_error err = {0};
  for (int i = 0; i < n_in; i++)
    t[i] = tensor_of(&in[i]);
  DY_ASSERT_OK(dy_executor_run(p, t, n_in, &got, 1, &err), &err);
  expect_values(tag, "executor", got, want, n);
  dy_tensor_free(got);
  for (int i = 0; i < n_in; i++)
    dy_tensor_free(t[i]);
  char cmd[16384], out_dir[2048], path[4096];
  compiled_cmd(tag, p, in, n_in, cmd, sizeof cmd, out_dir, sizeof out_dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s >/dev/null", cmd), 0);
  snprintf(path, sizeof path, "%s/y.npy", out_dir);
  got = NULL;
  DY_ASSERT_OK(dy_npy_read(path, &got, &err), &err);
  expect_values(tag, "compiled", got, want, n);
  dy_tensor_free(got);
  dy_program_free(p);
}

/* The Program fails on both paths: the executor with a one-line error
 * holding frag, the executable with a non-zero exit. */
static void fail_case(const char *tag, const char *text, const lod_in *in, int n_in,
                      const char *frag) {
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *t[8], *got = NULL;
  dy_error err = {0};
  for (int i = 0; i < n_in; i++)
    t[i] = tensor_of(&in[i]);
  CU_ASSERT_NOT_EQUAL(dy_executor_run(p, t, n_in, &got, 1, &err), DY_OK);
  if (!strstr(err.msg, frag))
    fprintf(stderr, "\n  %s: got '%s', want '%s'", tag, err.msg, frag);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag));
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  dy_tensor_free(got);
  for (int i = 0; i < n_in; i++)
    dy_tensor_free(t[i]);
  char cmd[16384], out_dir[2048];
  compiled_cmd(tag, p, in, n_in, cmd, sizeof cmd, out_dir, sizeof out_dir);
  CU_ASSERT_NOT_EQUAL(dy_test_sh(NULL, "%s >/dev/null 2>&1", cmd), 0);
  dy_program_free(p);
}

/* x [5, 2] in 3 sequences: rows 0-1, none, rows 2-4 */
static const float x52[] = {1, 8, 3, 4, 5, 6, 9, 2, 7, 10};
static const int64_t off3[] = {0, 2, 2, 5}, off1[] = {0, 5};

static void pool_text(char *buf, size_t n, const char *type, int n_seq) {
  snprintf(buf, n,
           "program {\n"
           "  var x : f32[5,2] feed 0\n"
           "  var x@lod : i64[%d] feed 1\n"
           "  var y : f32[%d,2]\n"
           "  block 0 parent -1 {\n"
           "    y = sequence_pool(x, x@lod) {pooltype = \"%s\", pad_value = -1.0}  @t:1\n"
           "  }\n"
           "  fetch 0 y\n"
           "}\n",
           n_seq + 1, n_seq, type);
}

static void test_sequence_pool(void) {
  static const struct {
    const char *type;
    float want[6];
  } c[] = {
      {"SUM", {4, 12, -1, -1, 21, 18}},
      {"AVERAGE", {2, 6, -1, -1, 7, 6}},
      {"SQRT", {2.8284271f, 8.4852814f, -1, -1, 12.124356f, 10.392305f}},
      {"MAX", {3, 8, -1, -1, 9, 10}},
      {"LAST", {3, 4, -1, -1, 7, 10}},
      {"FIRST", {1, 8, -1, -1, 5, 6}},
  };
  char text[1024], tag[64];
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    pool_text(text, sizeof text, c[i].type, 3);
    lod_in in[] = {{"x", DY_F32, 2, {5, 2}, x52}, {"x@lod", DY_I64, 1, {4}, off3}};
    snprintf(tag, sizeof tag, "pool_%s", c[i].type);
    run_case(tag, text, in, 2, c[i].want, 6);
  }
  /* one sequence of every row */
  pool_text(text, sizeof text, "SUM", 1);
  lod_in in[] = {{"x", DY_F32, 2, {5, 2}, x52}, {"x@lod", DY_I64, 1, {2}, off1}};
  run_case("pool_one", text, in, 2, (const float[]){25, 30}, 2);
}

/* bad offsets: a decrease, and an end short of the rows */
static void test_bad_offsets(void) {
  char text[1024];
  pool_text(text, sizeof text, "SUM", 3);
  static const int64_t down[] = {0, 3, 2, 5}, shy[] = {0, 2, 2, 4};
  lod_in a[] = {{"x", DY_F32, 2, {5, 2}, x52}, {"x@lod", DY_I64, 1, {4}, down}};
  fail_case("bad_down", text, a, 2, "sequence_pool: LoD offset 2 is 2");
  lod_in b[] = {{"x", DY_F32, 2, {5, 2}, x52}, {"x@lod", DY_I64, 1, {4}, shy}};
  fail_case("bad_end", text, b, 2, "LoD offset 3 is 4");
}

static const char pad_text[] =
    "program {\n"
    "  var x : f32[5,2] feed 0\n"
    "  var x@lod : i64[4] feed 1\n"
    "  var pad : f32[1] persistable = [0.5]\n"
    "  var y : f32[3,%d,2]\n"
    "  block 0 parent -1 {\n"
    "    y = sequence_pad(x, x@lod, pad) {padded_length = %d}  @t:1\n"
    "  }\n"
    "  fetch 0 y\n"
    "}\n";

static void test_sequence_pad(void) {
  char text[1024];
  lod_in in[] = {{"x", DY_F32, 2, {5, 2}, x52}, {"x@lod", DY_I64, 1, {4}, off3}};
  snprintf(text, sizeof text, pad_text, 3, 3);
  static const float want[] = {1, 8, 3, 4, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f,
                               5, 6, 9, 2, 7, 10};
  run_case("pad", text, in, 2, want, 18);
  /* padded_length 2 is shorter than the third sequence */
  snprintf(text, sizeof text, pad_text, 2, 2);
  fail_case("pad_short", text, in, 2, "sequence 2 has 3 rows, above padded_length 2");
  static const char len_text[] =
      "program {\n"
      "  var x@lod : i64[4] feed 0\n"
      "  var y : i64[3]\n"
      "  block 0 parent -1 {\n"
      "    y = sequence_len(x@lod)  @t:1\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n";
  lod_in l[] = {{"x@lod", DY_I64, 1, {4}, off3}};
  run_case("len", len_text, l, 1, (const int64_t[]){2, 0, 3}, 3);
}

/* D = 1, rows [candidate, input, forget, output]; the candidate sees
 * 0.5 h, the forget gate 0.5 c (peephole). By hand, forward: h0 = 1
 * (cand 1, c 1), h1 = 4 (cand 2.5, forget 1 + 0.5, c 2.5 + 1.5); reverse
 * (row 1 first): 2 (c 2), then row 0: cand 1 + 1, forget 0 + 1, c 2 + 2,
 * h 4. */
static void test_lstm(void) {
  static const char text[] =
      "program {\n"
      "  var x : f32[2,4] feed 0\n"
      "  var x@lod : i64[3] feed 1\n"
      "  var w : f32[1,4] persistable = [0.5, 0.0, 0.0, 0.0]\n"
      "  var b : f32[1,7] persistable = [0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0]\n"
      "  var y : f32[2,1]\n"
      "  block 0 parent -1 {\n"
      "    y = lstm(x, x@lod, w, b) {use_peepholes = 1, is_reverse = %d, gate_activation = "
      "\"identity\", cell_activation = \"identity\", candidate_activation = \"identity\"}  @t:1\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n";
  static const float x[] = {1, 1, 0, 1, 2, 1, 1, 1};
  static const int64_t off[] = {0, 0, 2}; /* an empty sequence, then both rows */
  lod_in in[] = {{"x", DY_F32, 2, {2, 4}, x}, {"x@lod", DY_I64, 1, {3}, off}};
  char t[2048];
  snprintf(t, sizeof t, text, 0);
  run_case("lstm", t, in, 2, (const float[]){1, 4}, 2);
  snprintf(t, sizeof t, text, 1);
  run_case("lstm_reverse", t, in, 2, (const float[]){4, 2}, 2);
}

/* D = 1, rows [update, reset, candidate], the candidate's weight 1 on
 * reset * h. By hand: h0 = 0.25 * 2 = 0.5; row 1: cand 4 + 0.5 * 0.5 =
 * 4.25, h = 0.5 - 0.25 * 0.5 + 0.25 * 4.25 = 1.4375. origin_mode: h0 =
 * 0.75 * 2 = 1.5; cand 4 + 0.5 * 1.5 = 4.75, h = 0.25 * 1.5 + 0.75 * 4.75 =
 * 3.9375. */
static void test_gru(void) {
  static const char text[] =
      "program {\n"
      "  var x : f32[2,3] feed 0\n"
      "  var x@lod : i64[2] feed 1\n"
      "  var w : f32[1,3] persistable = [0.0, 0.0, 1.0]\n"
      "  var b : f32[1,3] persistable = [0.0, 0.0, 0.0]\n"
      "  var y : f32[2,1]\n"
      "  block 0 parent -1 {\n"
      "    y = gru(x, x@lod, w, b) {is_reverse = 0, origin_mode = %d, gate_activation = "
      "\"identity\", activation = \"identity\"}  @t:1\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n";
  static const float x[] = {0.25f, 1, 2, 0.25f, 0.5f, 4};
  static const int64_t off[] = {0, 2};
  lod_in in[] = {{"x", DY_F32, 2, {2, 3}, x}, {"x@lod", DY_I64, 1, {2}, off}};
  char t[2048];
  snprintf(t, sizeof t, text, 0);
  run_case("gru", t, in, 2, (const float[]){0.5f, 1.4375f}, 2);
  snprintf(t, sizeof t, text, 1);
  run_case("gru_origin", t, in, 2, (const float[]){1.5f, 3.9375f}, 2);
}

/* K = 2, switching tags costs 5. Sequence 0 (3 rows): greedy is 0 1 1
 * (score -0.5), Viterbi 1 1 1 (3.5); sequence 1 empty; sequence 2 one row
 * [2, 1]: tag 0. */
static void test_crf_decoding(void) {
  static const char text[] =
      "program {\n"
      "  var e : f32[4,2] feed 0\n"
      "  var e@lod : i64[4] feed 1\n"
      "  var tr : f32[4,2] persistable = [0.0, 0.0, 0.0, 0.0, 0.0, -5.0, -5.0, 0.0]\n"
      "  var y : i64[4,1]\n"
      "  block 0 parent -1 {\n"
      "    y = crf_decoding(e, e@lod, tr)  @t:1\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n";
  static const float e[] = {1, 0, 0, 0.5f, 0, 3, 2, 1};
  static const int64_t off[] = {0, 3, 3, 4};
  lod_in in[] = {{"e", DY_F32, 2, {4, 2}, e}, {"e@lod", DY_I64, 1, {4}, off}};
  run_case("crf", text, in, 2, (const int64_t[]){1, 1, 1, 0}, 4);
}

void dy_test_register(void) {
  DY_SUITE("lod");
  DY_TEST(test_sequence_pool);
  DY_TEST(test_bad_offsets);
  DY_TEST(test_sequence_pad);
  DY_TEST(test_lstm);
  DY_TEST(test_gru);
  DY_TEST(test_crf_decoding);
}
