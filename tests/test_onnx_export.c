/* test_onnx_export.c - the ONNX exporter (dy_onnx_save, `dy2stc export
 * --to onnx`, compiler/frontends/onnx/onnx_export*.c):
 *
 *   - round trip ONNX -> dy2stc -> ONNX -> dy2stc over every model of the
 *     ONNX backend test data (Debian libonnx-testdata) the importer
 *     reads: the same printed Program (locations aside, which name the
 *     node of each file) for all but the models whose Program holds one
 *     of the three ops ONNX 17 has no single op for (scale: Mul and Add;
 *     rsqrt: Sqrt and Reciprocal; a matmul transposing a batched operand:
 *     Transpose and MatMul), which read back as exactly those; a second
 *     round trip changes nothing (a fixed point) for every model;
 *   - the eager-built samples (LeNet-5, the transformer) and the ONNX CNN
 *     sample exported: `dy2stc run` on the export gives the eager outputs
 *     within 1e-5; the transformer's weights (over 1 MiB) go to external
 *     data, and --external-data on|off say otherwise;
 *   - size symbols as dim_params: the transformer sample with a dynamic
 *     sequence, and PyTorch's shape of a transformer encoder
 *     (tests/onnx_encoder.h: [seq, batch, 32], reshapes to batch * heads,
 *     reshape_dims written as Shape / Mul / Concat / Reshape) round trip
 *     and run at another (seq, batch) to the same outputs;
 *   - control flow (samples/control: cond and while) as If and Loop: the
 *     export runs to the eager outputs exactly;
 *   - int8 (dy2stc quantize of LeNet-5, per tensor and --per-channel) as
 *     QLinearConv and QDQ (a per-channel DequantizeLinear with its axis):
 *     the export runs to the int8 model's outputs exactly;
 *   - fused and training ops: a one-line error naming the op and its line;
 *   - every file exported here passes onnx.checker (full check) of
 *     Debian's python3-onnx, which scripts/setup.sh installs: when it is
 *     missing the test fails saying so.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "onnx_encoder.h"

#define DY2STC DY2STC_PATH
#define SAMPLES DY_BUILD_DIR "/../samples"
#define WORK DY_BUILD_DIR "/onnx_export"
#define NODE_DATA "/usr/share/libonnx-testdata/data/node"

#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static void show_log_on_failure(int rc) {
  if (rc == 0)
    return;
  char *log = dy_test_slurp(WORK "/last.log");
  fprintf(stderr, "\n  command failed (%d):\n%s\n", rc, log ? log : "(no output)");
  free(log);
}

#define SH_OK(...)                  \
  do {                              \
    int rc_ = sh(__VA_ARGS__);      \
    show_log_on_failure(rc_);       \
    CU_ASSERT_EQUAL_FATAL(rc_, 0);  \
  } while (0)

/* The printed Program without its source locations ("  @file:line"). */
static char *text_of(const dy_program *p) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f)
    return NULL;
  dy_program_print(p, f);
  fclose(f);
  char *w = buf;
  for (const char *r = buf; *r;) {
    if (r[0] == ' ' && r[1] == ' ' && r[2] == '@') {
      while (*r && *r != '\n')
        r++;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
  return buf;
}

/* p exported to path and read back (NULL on failure, the reason printed),
 * without its dead ops: ONNX's TopK has a values output our top_k (the
 * indices) does not, which reads back as a gather_elements nothing uses,
 * as compile's dce would drop it. */
static dy_program *export_import(const dy_program *p, const char *path) {
  dy_error err = {0};
  dy_program *q = NULL;
  bool changed = false;
  if (dy_onnx_save(p, path, NULL, &err) || dy_onnx_load(path, &q, &err) ||
      dy_pass_dce(q, &changed, &err)) {
    fprintf(stderr, "\n  %s: %s\n", path, err.msg);
    dy_program_free(q);
    return NULL;
  }
  return q;
}

/* The known differences of one round trip: an op ONNX 17 cannot say as
 * one op, which the export writes as a composition. */
static bool has_composed_op(const char *text) {
  if (strstr(text, "= scale(") || strstr(text, "= rsqrt("))
    return true;
  for (const char *m = text; (m = strstr(m, "= matmul(")); m++) {
    const char *eol = strchr(m, '\n');
    const char *t = strstr(m, "transpose_y = 1");
    const char *u = strstr(m, "transpose_x = 1");
    if ((t && (!eol || t < eol)) || (u && (!eol || u < eol)))
      return true;
  }
  return false;
}

static void test_testdata_round_trip(void) {
  mkdir(WORK, 0777);
  DIR *d = opendir(NODE_DATA);
  if (!d)
    fprintf(stderr, "\n  %s is missing: install libonnx-testdata (scripts/setup.sh)\n", NODE_DATA);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  int n = 0, same = 0, composed = 0, bad = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char model[1024], out[1024];
    snprintf(model, sizeof model, NODE_DATA "/%s/model.onnx", e->d_name);
    snprintf(out, sizeof out, WORK "/rt.onnx");
    dy_program *a = NULL;
    dy_error err = {0};
    bool changed = false;
    if (dy_onnx_load(model, &a, &err))
      continue; /* not imported: nothing to export */
    if (dy_pass_dce(a, &changed, &err)) { /* compared without dead ops, as export_import */
      fprintf(stderr, "\n  %s: dce: %s\n", e->d_name, err.msg);
      bad++;
    }
    n++;
    dy_program *b = export_import(a, out);
    dy_program *c = b ? export_import(b, out) : NULL;
    char *ta = text_of(a), *tb = b ? text_of(b) : NULL, *tc = c ? text_of(c) : NULL;
    if (!tb || !tc) {
      fprintf(stderr, "\n  %s: the export does not read back\n", e->d_name);
      bad++;
    } else if (strcmp(ta, tb) == 0) {
      same++;
    } else if (!has_composed_op(ta)) {
      fprintf(stderr, "\n  %s: reads back to another Program\n", e->d_name);
      bad++;
    } else {
      composed++;
    }
    if (tb && tc && strcmp(tb, tc)) {
      fprintf(stderr, "\n  %s: a second round trip changes the Program\n", e->d_name);
      bad++;
    }
    free(ta);
    free(tb);
    free(tc);
    dy_program_free(a);
    dy_program_free(b);
    dy_program_free(c);
  }
  closedir(d);
  printf("\n  %d models: %d the same Program, %d with scale / rsqrt / a transposing matmul "
         "read back as their composition, %d bad\n", n, same, composed, bad);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_TRUE(n >= 600);
  CU_ASSERT_TRUE(same >= 590);
}

/* An eager sample exported and run: the eager outputs within 1e-5. */
static void sample_runs(const char *sample, const char *ext_flag) {
  char d[512];
  snprintf(d, sizeof d, WORK "/%s", sample);
  SH_OK("rm -rf %s && mkdir -p %s && %s/%s --batch 3 --out %s", d, d, SAMPLES, sample, d);
  SH_OK("cd %s && %s export %s --to onnx -o %s.onnx %s && %s run %s.onnx --input x=x.npy "
        "--output-dir o && %s compare o/out.npy eager_out.npy --rtol 1e-5 --atol 1e-5",
        d, DY2STC, sample, sample, ext_flag, DY2STC, sample, DY2STC);
}

static bool exists(const char *fmt, const char *a, const char *b) {
  char path[1024];
  snprintf(path, sizeof path, fmt, a, b);
  struct stat st;
  return stat(path, &st) == 0;
}

static void test_samples(void) {
  mkdir(WORK, 0777);
  sample_runs("lenet5", "");
  CU_ASSERT_FALSE(exists("%s/%s.onnx.data", WORK "/lenet5", "lenet5"));
  sample_runs("transformer", "");
  CU_ASSERT_TRUE(exists("%s/%s.onnx.data", WORK "/transformer", "transformer"));
  /* the flag overrides the 1 MiB rule both ways */
  sample_runs("transformer", "--external-data off");
  CU_ASSERT_FALSE(exists("%s/%s.onnx.data", WORK "/transformer", "transformer"));
  sample_runs("lenet5", "--external-data on");
  CU_ASSERT_TRUE(exists("%s/%s.onnx.data", WORK "/lenet5", "lenet5"));
  /* LeNet-5 through ONNX is the eager Program, but for the importer's
   * reshape for Flatten */
  dy_program *a = NULL, *b = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load_any(WORK "/lenet5/lenet5", &a, &err), &err);
  DY_ASSERT_OK(dy_onnx_load(WORK "/lenet5/lenet5.onnx", &b, &err), &err);
  char *ta = text_of(a), *tb = text_of(b);
  char *f = strstr(ta, "= flatten(pool2d_1) {start_axis = 1, stop_axis = -1}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const char *r = "= reshape(pool2d_1) {shape = [-1, 400]}";
  size_t fl = strlen("= flatten(pool2d_1) {start_axis = 1, stop_axis = -1}");
  char *fixed = malloc(strlen(ta) + strlen(r) + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fixed);
  sprintf(fixed, "%.*s%s%s", (int)(f - ta), ta, r, f + fl);
  CU_ASSERT_STRING_EQUAL(fixed, tb);
  free(fixed);
  free(ta);
  free(tb);
  dy_program_free(a);
  dy_program_free(b);
  /* the ONNX sample: ONNX -> dy2stc -> ONNX gives its expected outputs */
  SH_OK("cd %s && %s export %s/samples/onnx/cnn.onnx --to onnx -o cnn.onnx && %s run cnn.onnx "
        "--input %s/samples/onnx/input.npy --output-dir ocnn && %s compare ocnn/probs.npy "
        "%s/samples/onnx/expected.npy --rtol 1e-5 --atol 1e-5",
        WORK, DY2STC, DY_SOURCE_DIR, DY2STC, DY_SOURCE_DIR, DY2STC, DY_SOURCE_DIR);
}

/* Size symbols: dim_params "batch" and "seq", read back as the symbols,
 * and the encoder's reshapes to symbolic sizes (reshape_dims) */
static void test_symbols(void) {
  const char *d = WORK "/seq";
  SH_OK("rm -rf %s && mkdir -p %s && %s/transformer --out %s --dynamic-seq && cd %s && "
        "%s export transformer --to onnx -o t.onnx && %s run t.onnx --input x=x.npy "
        "--output-dir o && %s compare o/out.npy eager_out.npy --rtol 1e-5 --atol 1e-5",
        d, d, SAMPLES, d, d, DY2STC, DY2STC, DY2STC);
  dy_program *p = NULL, *q = NULL;
  dy_error err = {0};
  char ts[96];
  DY_ASSERT_OK(dy_onnx_load(WORK "/seq/t.onnx", &p, &err), &err);
  CU_ASSERT_STRING_EQUAL(dy_type_str(&p->vars[p->feeds[0]]->type, ts, sizeof ts),
                         "f32[-1,seq,128]");
  dy_program_free(p);
  /* the encoder: the same Program, and the same outputs at seq 5,
   * batch 2; but its last reshape, whose third entry the importer left a
   * copy (0) of a static dim, reads back as that dim's size (32), as the
   * importer reads a Reshape's 0 of a static dim */
  static enc_weights w;
  enc_weights_init(&w);
  CU_ASSERT_EQUAL_FATAL(enc_write(WORK "/enc.onnx", &w), 0);
  DY_ASSERT_OK(dy_onnx_load(WORK "/enc.onnx", &p, &err), &err);
  bool has_dims = false;
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++)
      has_dims |= p->blocks[b]->ops[i]->kind == DY_OP_RESHAPE_DIMS;
  CU_ASSERT_TRUE(has_dims);
  q = export_import(p, WORK "/enc_x.onnx");
  CU_ASSERT_PTR_NOT_NULL_FATAL(q);
  char *ta = text_of(p), *tb = text_of(q);
  char *r = strstr(tb, "out = reshape(Add_360) {shape = [0, 0, 32]}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  memcpy(strstr(r, "32]"), "0] ", 3);
  char *sp = strstr(r, "0] ") + 2; /* drop the space the shorter size leaves */
  memmove(sp, sp + 1, strlen(sp + 1) + 1);
  CU_ASSERT_STRING_EQUAL(ta, tb);
  CU_ASSERT_STRING_EQUAL(dy_type_str(&q->vars[q->feeds[0]]->type, ts, sizeof ts),
                         "f32[seq,-1,32]");
  free(ta);
  free(tb);
  dy_program_free(p);
  dy_program_free(q);
  static float src[5 * 2 * ENC_E];
  uint32_t seed = 7;
  enc_fill(src, 5 * 2 * ENC_E, &seed, 1.0f, 0.0f);
  dy_tensor *t = dy_tensor_from_data(DY_F32, 3, (int64_t[]){5, 2, ENC_E}, src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  DY_ASSERT_OK(dy_npy_write(WORK "/enc_src.npy", t, &err), &err);
  dy_tensor_free(t);
  SH_OK("cd %s && rm -rf e1 e2 && %s run enc.onnx --input enc_src.npy --output-dir e1 && "
        "%s run enc_x.onnx --input enc_src.npy --output-dir e2 && for f in e1/*.npy; do "
        "%s compare $f e2/${f#e1/} --rtol 1e-5 --atol 1e-5 || exit 1; done",
        WORK, DY2STC, DY2STC, DY2STC);
}

/* cond and while as If and Loop: each input case's eager output, exactly */
static void test_control(void) {
  static const char *const samples[] = {"early_exit", "greedy_decode", "jacobi"};
  for (int i = 0; i < 3; i++) {
    const char *s = samples[i];
    char d[512];
    snprintf(d, sizeof d, WORK "/%s", s);
    SH_OK("rm -rf %s && mkdir -p %s && cd %s && %s/%s --out . && %s export %s.dymodel --to onnx "
          "-o %s.onnx",
          d, d, d, SAMPLES, s, DY2STC, s, s);
    dy_program *p = NULL;
    dy_error err = {0};
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.onnx", d, s);
    DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
    char *t = text_of(p);
    CU_ASSERT_TRUE(strstr(t, "= cond(") || strstr(t, "= while("));
    const char *in = p->vars[p->feeds[0]]->name;
    for (int k = 0; k < 3; k++)
      if (exists("%s/x_%s.npy", d, (const char *[]){"0", "1", "2"}[k]))
        SH_OK("cd %s && rm -rf o && %s run %s.onnx --input %s=x_%d.npy --output-dir o && "
              "%s compare o/*.npy eager_%d.npy --rtol 0 --atol 0",
              d, DY2STC, s, in, k, DY2STC, k);
    free(t);
    dy_program_free(p);
  }
}

/* int8: LeNet-5 quantized, exported as QLinearConv and QDQ, runs to the
 * int8 model's outputs */
static void test_int8(void) {
  const char *d = WORK "/q8";
  SH_OK("rm -rf %s && mkdir -p %s/cal && cd %s && %s/lenet5 --batch 3 --out . && cp x.npy cal/ "
        "&& %s quantize lenet5 --calibrate cal -o q8 && %s export q8 --to onnx -o q8.onnx && "
        "%s run q8 --input x=x.npy --output-dir oq && %s run q8.onnx --input x=x.npy "
        "--output-dir ox && %s compare ox/out.npy oq/out.npy --rtol 0 --atol 0",
        d, d, d, SAMPLES, DY2STC, DY2STC, DY2STC, DY2STC, DY2STC);
  char *m = dy_test_slurp(WORK "/q8/q8.onnx");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* the op types are strings in the protobuf */
  size_t n = 0;
  FILE *f = fopen(WORK "/q8/q8.onnx", "rb");
  if (f) {
    fseek(f, 0, SEEK_END);
    n = (size_t)ftell(f);
    fclose(f);
  }
  bool qlinear = false, qdq = false;
  for (size_t i = 0; i + 16 < n; i++) {
    qlinear |= memcmp(m + i, "QLinearConv", 11) == 0;
    qdq |= memcmp(m + i, "DequantizeLinear", 16) == 0;
  }
  CU_ASSERT_TRUE(qlinear);
  CU_ASSERT_TRUE(qdq);
  free(m);
  /* per-channel weights (issue 32): the DequantizeLinear of a weight names
   * its axis (ONNX's default, 1, is not the output channel of a conv's or
   * a transposed matmul's weight): onnx.checker and the importer take it
   * (test_checker checks q8pc.onnx) */
  SH_OK("cd %s && %s quantize lenet5 --calibrate cal --per-channel -o q8pc && "
        "%s export q8pc --to onnx -o q8pc.onnx && "
        "%s run q8pc --input x=x.npy --output-dir opq && %s run q8pc.onnx --input x=x.npy "
        "--output-dir opx && %s compare opx/out.npy opq/out.npy --rtol 0 --atol 0",
        d, DY2STC, DY2STC, DY2STC, DY2STC, DY2STC);
}

/* Fused and training ops: one line naming the op and its line. */
static void test_refusals(void) {
  static const char *const texts[] = {
      "program {\n"
      "  var x : f32[2, 4] feed 0\n"
      "  var w : f32[4, 3] persistable = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "
      "0.0]\n"
      "  var y : f32[2, 3]\n"
      "  block 0 parent -1 {\n"
      "    y = fused_matmul(x, w) {transpose_x = 0, transpose_y = 0, act = \"relu\", "
      "alpha = 0.0}  @net.c:7\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n",
      "program {\n"
      "  var x : f32[4, 4] feed 0\n"
      "  var y : f32[4, 4]\n"
      "  block 0 parent -1 {\n"
      "    y = inverse(x)  @net.c:9\n"
      "  }\n"
      "  fetch 0 y\n"
      "}\n",
  };
  static const char *const want[][2] = {{"fused_matmul", "net.c:7"}, {"inverse", "net.c:9"}};
  for (int i = 0; i < 2; i++) {
    dy_program *p = dy_test_parse_ok(texts[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    dy_error err = {0};
    CU_ASSERT_EQUAL(dy_onnx_save(p, WORK "/refused.onnx", NULL, &err), DY_STATUS_UNSUPPORTED);
    char line[1024];
    dy_error_format(&err, line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, want[i][0]));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, want[i][1]));
    CU_ASSERT_PTR_NULL(strchr(line, '\n'));
    if (!strstr(line, want[i][0]) || !strstr(line, want[i][1]))
      fprintf(stderr, "\n  message: %s\n", line);
    dy_program_free(p);
  }
  /* the CLI: non-zero, the message, no file */
  SH_OK("cd %s && rm -f r.onnx && ! %s export %s/samples/onnx/cnn.onnx --to onnx -o r.onnx "
        "--external-data maybe && test ! -e r.onnx",
        WORK, DY2STC, DY_SOURCE_DIR);
}

/* onnx.checker (full check) on every file the tests above wrote. */
static void test_checker(void) {
  int rc = sh("/usr/bin/python3 -c 'import onnx.checker'");
  if (rc)
    fprintf(stderr, "\n  python3-onnx is MISSING (Debian python3-onnx, scripts/setup.sh "
                    "installs it): the exported files were not checked\n");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  SH_OK("cd %s && /usr/bin/python3 -c 'import sys, onnx.checker\n"
        "for p in sys.argv[1:]:\n"
        "    onnx.checker.check_model(p, full_check=True)\n"
        "    print(\"checked\", p)' lenet5/lenet5.onnx transformer/transformer.onnx cnn.onnx "
        "early_exit/early_exit.onnx greedy_decode/greedy_decode.onnx jacobi/jacobi.onnx "
        "q8/q8.onnx q8/q8pc.onnx seq/t.onnx enc_x.onnx",
        WORK);
}

void dy_test_register(void) {
  DY_SUITE("onnx_export");
  DY_TEST(test_testdata_round_trip);
  DY_TEST(test_samples);
  DY_TEST(test_symbols);
  DY_TEST(test_control);
  DY_TEST(test_int8);
  DY_TEST(test_refusals);
  DY_TEST(test_checker);
}
