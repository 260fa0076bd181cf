/* test_dims.c - symbolic shapes: size symbols and dim expressions
 * (ir/core/dims.c), the Program's symbol declarations, their text and .dymodel
 * forms, inference with expressions, the executor binding symbols from the
 * inputs. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_runtime.h"
#include "dy_test.h"
#include "onnx_encoder.h"

static int64_t sym(const char *name) {
  int64_t d = dy_dim_sym(name);
  CU_ASSERT_FATAL(d != DY_DIM_NONE);
  return d;
}

static const char *str(int64_t d) {
  static char buf[4][96];
  static int k;
  k = (k + 1) % 4;
  return dy_dim_str(d, buf[k], sizeof buf[k]);
}

static int64_t parse(const char *s) {
  int64_t d = DY_DIM_NONE;
  CU_ASSERT_FATAL(dy_dim_parse(s, strlen(s), &d));
  return d;
}

static void test_normal_form(void) {
  int64_t b = sym("batch"), s = sym("seq"), h = sym("heads");
  CU_ASSERT_EQUAL(b, -1);
  CU_ASSERT(s < -1 && h < -1 && s != h);
  int64_t bs = 0, sb = 0, x = 0, y = 0;
  CU_ASSERT(dy_dim_mul(b, s, &bs) && dy_dim_mul(s, b, &sb));
  CU_ASSERT_EQUAL(bs, sb); /* normal form: equal iff the same id */
  CU_ASSERT_STRING_EQUAL(str(bs), "batch*seq");
  CU_ASSERT(dy_dim_mul(bs, 8, &x));
  CU_ASSERT_STRING_EQUAL(str(x), "8*batch*seq");
  CU_ASSERT(dy_dim_div(x, 8, &y) && y == bs);
  CU_ASSERT(dy_dim_div(x, b, &y));
  CU_ASSERT_STRING_EQUAL(str(y), "8*seq");
  CU_ASSERT(!dy_dim_div(x, 3, &y));       /* inexact */
  CU_ASSERT(!dy_dim_div(x, h, &y));       /* heads is not a factor */
  /* sums: 2*seq + 1, merged terms, subtraction back to seq */
  CU_ASSERT(dy_dim_add(s, s, &x) && dy_dim_add_const(x, 1, &x));
  CU_ASSERT_STRING_EQUAL(str(x), "2*seq+1");
  CU_ASSERT(dy_dim_sub(x, s, &y) && dy_dim_add_const(y, -1, &y) && y == s);
  CU_ASSERT(dy_dim_sub(s, s, &y) && y == 0);
  CU_ASSERT(!dy_dim_sub(s, b, &y));       /* a negative coefficient */
  CU_ASSERT(!dy_dim_sub(4, s, &y));
  /* (seq+1) * batch = batch*seq + batch; divided back by batch */
  CU_ASSERT(dy_dim_add_const(s, 1, &x) && dy_dim_mul(x, b, &y));
  CU_ASSERT_STRING_EQUAL(str(y), "batch+batch*seq");
  CU_ASSERT(dy_dim_div(y, b, &bs) && bs == x);
  CU_ASSERT(dy_dim_mul(x, 3, &bs) && dy_dim_div(bs, x, &y) && y == 3);
  /* static stays static, the batch stays -1 */
  CU_ASSERT(dy_dim_mul(6, 7, &x) && x == 42);
  CU_ASSERT(dy_dim_mul(b, 1, &x) && x == -1);
  CU_ASSERT(!dy_dim_mul(INT64_MAX / 2, 3, &x));
  /* evaluation */
  int64_t vals[DY_MAX_SYMS];
  for (int i = 0; i < DY_MAX_SYMS; i++)
    vals[i] = -1;
  vals[dy_sym_id("batch")] = 3;
  vals[dy_sym_id("seq")] = 5;
  CU_ASSERT(dy_dim_eval(parse("2*batch*seq+seq+1"), vals, &x) && x == 36);
  CU_ASSERT(!dy_dim_eval(h, vals, &x)); /* unknown */
  /* substitution */
  CU_ASSERT(dy_dim_substitute(parse("2*batch*seq+1"), dy_sym_id("seq"), 4, &x));
  CU_ASSERT_STRING_EQUAL(str(x), "8*batch+1");
  CU_ASSERT(dy_dim_substitute(x, 0, 2, &y) && y == 17);
  CU_ASSERT_EQUAL(dy_dim_single_sym(s), dy_sym_id("seq"));
  CU_ASSERT_EQUAL(dy_dim_single_sym(x), -1);
}

static void test_text_forms(void) {
  const char *ok[] = {"-1", "seq", "batch*seq", "2*batch*seq+1", "seq-1", "4*heads*seq"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    int64_t d = parse(ok[i]);
    CU_ASSERT_STRING_EQUAL(str(d), ok[i]);
  }
  CU_ASSERT_EQUAL(parse("seq*batch"), parse("batch*seq"));
  CU_ASSERT_EQUAL(parse("batch"), -1);
  int64_t d;
  const char *bad[] = {"", "-2", "seq-batch", "2**seq", "3seq", "seq+", "-seq"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CU_ASSERT(!dy_dim_parse(bad[i], strlen(bad[i]), &d));
}

/* A Program with named dims, as text: sym lines, expression dims. */
static const char *prog_text =
    "program {\n"
    "  sym seq max 16\n"
    "  var x : f32[-1,seq,8] feed 0\n"
    "  var y : f32[-1,8*seq]\n"
    "  var z : f32[-1,8*seq]\n"
    "  block 0 parent -1 {\n"
    "    y = reshape(x) {shape = [0, -1]}\n"
    "    z = relu(y)\n"
    "  }\n"
    "  fetch 0 z\n"
    "}\n";

static void test_program_symbols(void) {
  dy_program *p = dy_test_parse_ok(prog_text);
  CU_ASSERT_FATAL(p != NULL);
  CU_ASSERT_EQUAL(p->n_syms, 1);
  const dy_sym_decl *d = dy_program_sym(p, dy_sym_id("seq"));
  CU_ASSERT_FATAL(d != NULL);
  CU_ASSERT_EQUAL(d->max, 16);
  CU_ASSERT_EQUAL(d->value, -1);
  /* text round trip */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  dy_program_print(p, f);
  fclose(f);
  CU_ASSERT(strstr(buf, "sym seq max 16\n") != NULL);
  CU_ASSERT(strstr(buf, "var y : f32[-1,8*seq]") != NULL);
  dy_program *q = dy_test_parse_ok(buf);
  CU_ASSERT_FATAL(q != NULL);
  CU_ASSERT_EQUAL(q->vars[1]->type.shape[1], p->vars[1]->type.shape[1]);
  free(buf);
  /* .dymodel round trip: the symbols and the expressions */
  char path[] = "/tmp/dy_dims_XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_save(q, path, &err), &err);
  dy_program *r = NULL;
  DY_ASSERT_OK(dy_model_load(path, &r, &err), &err);
  CU_ASSERT_EQUAL(r->n_syms, 1);
  CU_ASSERT_EQUAL(r->syms[0].max, 16);
  for (int i = 0; i < p->n_vars; i++)
    CU_ASSERT(dy_type_equal(&r->vars[i]->type, &p->vars[i]->type));
  /* pinning makes the Program static in the symbol */
  DY_ASSERT_OK(dy_program_pin_sym(r, "seq", 4, &err), &err);
  CU_ASSERT_EQUAL(r->vars[1]->type.shape[1], 32);
  CU_ASSERT_EQUAL(r->syms[0].value, 4);
  DY_ASSERT_OK(dy_verify(r, &err), &err);
  unlink(path);
  dy_program_free(p);
  dy_program_free(q);
  dy_program_free(r);
}

static float max_diff(const float *a, const float *b, int n);

/* tests/data/compat_v2_*: samples/simple_net.c saved by the dy2stc before
 * size symbols (.dymodel version 2, x f32[-1,10]); never regenerate them.
 * It still reads, with its -1 the batch, and runs to the eager output it
 * was saved with. */
static void test_version2_file_reads(void) {
  const char *dir = DY_SOURCE_DIR "/tests/data/";
  char path[1024];
  snprintf(path, sizeof path, "%scompat_v2_simple_net.dymodel", dir);
  char *bytes = dy_test_slurp(path);
  CU_ASSERT_FATAL(bytes != NULL);
  CU_ASSERT(bytes[0] == 0x08 && bytes[1] == 0x02); /* field 1, version 2 */
  free(bytes);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(path, &p, &err), &err);
  CU_ASSERT_EQUAL(p->n_syms, 0);
  CU_ASSERT_EQUAL(p->vars[p->feeds[0]]->type.shape[0], -1);
  dy_tensor *in[2] = {0}, *want = NULL, *got = NULL;
  snprintf(path, sizeof path, "%scompat_v2_x.npy", dir);
  DY_ASSERT_OK(dy_npy_read(path, &in[0], &err), &err);
  snprintf(path, sizeof path, "%scompat_v2_y.npy", dir);
  DY_ASSERT_OK(dy_npy_read(path, &in[1], &err), &err);
  snprintf(path, sizeof path, "%scompat_v2_eager_out.npy", dir);
  DY_ASSERT_OK(dy_npy_read(path, &want, &err), &err);
  DY_ASSERT_OK(dy_executor_run(p, in, 2, &got, 1, &err), &err);
  CU_ASSERT_FATAL(dy_type_equal(&got->type, &want->type));
  CU_ASSERT(max_diff(dy_tensor_f32(got), dy_tensor_f32(want), (int)dy_type_numel(&got->type)) <=
            1e-5f);
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  dy_tensor_free(want);
  dy_tensor_free(got);
  dy_program_free(p);
}

/* The executor binds batch and seq from the inputs' shapes, checks they
 * agree and stay within the bounds. */
static const char *exec_text =
    "program {\n"
    "  sym seq max 6\n"
    "  var x : f32[-1,seq,8] feed 0\n"
    "  var m : f32[-1,seq,1] feed 1\n"
    "  var y : f32[-1,seq,8]\n"
    "  var z : f32[-1,8*seq]\n"
    "  block 0 parent -1 {\n"
    "    y = mul(x, m)\n"
    "    z = reshape(y) {shape = [0, -1]}\n"
    "  }\n"
    "  fetch 0 z\n"
    "}\n";

static dy_status run_xm(const dy_program *p, int64_t b, int64_t sx, int64_t sm,
                        dy_tensor **z, dy_error *err) {
  dy_tensor *x = dy_tensor_new(DY_F32, 3, (int64_t[]){b, sx, 8});
  dy_tensor *m = dy_tensor_new(DY_F32, 3, (int64_t[]){b, sm, 1});
  float *xd = dy_tensor_f32(x), *md = dy_tensor_f32(m);
  for (int64_t i = 0; i < b * sx * 8; i++)
    xd[i] = (float)i;
  for (int64_t i = 0; i < b * sm; i++)
    md[i] = (float)(i % 3);
  dy_status s = dy_executor_run(p, (dy_tensor *[]){x, m}, 2, z, 1, err);
  dy_tensor_free(x);
  dy_tensor_free(m);
  return s;
}

static void test_executor_binds_symbols(void) {
  dy_program *p = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(p != NULL);
  dy_error err = {0};
  dy_tensor *z = NULL;
  DY_ASSERT_OK(run_xm(p, 2, 5, 5, &z, &err), &err);
  CU_ASSERT(z->type.rank == 2 && z->type.shape[0] == 2 && z->type.shape[1] == 40);
  const float *zd = dy_tensor_f32(z);
  int bad = 0;
  for (int64_t i = 0; i < 80; i++)
    bad += zd[i] != (float)i * (float)((i / 8) % 3);
  CU_ASSERT_EQUAL(bad, 0);
  dy_tensor_free(z);
  /* seq disagrees between the inputs */
  CU_ASSERT_EQUAL(run_xm(p, 2, 5, 4, &z, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT(strstr(err.msg, "seq = 4 disagrees with seq = 5") != NULL);
  /* seq above its bound */
  memset(&err, 0, sizeof err);
  CU_ASSERT_EQUAL(run_xm(p, 1, 7, 7, &z, &err), DY_STATUS_LIMIT);
  CU_ASSERT(strstr(err.msg, "seq = 7 is above its bound 6") != NULL);
  dy_program_free(p);
}

/* ---- the generated code: compiled, bound from the input shapes ---- */

#define WORK DY_BUILD_DIR "/dims"
#define SAN "-fsanitize=address,undefined -fno-sanitize-recover=all"

/* Input i's element j: the same in the driver and here. */
static float fill(int i, int64_t j) { return (float)((j * 7 + i * 3) % 23) * 0.1f - 1.1f; }

/* Compile p (freed) to WORK/NAME.c with bounds (symbol=max pairs in
 * p's declarations) and build a driver that reads each input's dims from
 * argv, fills the inputs, calls NAME_bind and NAME_run_v and prints the
 * status and every output value. Under ASan and UBSan. */
static bool build_model(dy_program *p, const char *name, int64_t max_batch) {
  dy_compile_options o = dy_compile_options_default();
  o.name = name;
  o.passes.verify_each = 1;
  dy_codegen_output co = {0};
  dy_compile_report rep;
  dy_error err = {0};
  if (dy_program_bound_sym(p, "batch", max_batch, &err)) {
    fprintf(stderr, "\n  --max-batch: %s\n", err.msg);
    return false;
  }
  char base[512], path[600];
  snprintf(base, sizeof base, WORK "/%s", name);
  mkdir(WORK, 0777);
  int n_in = p->n_feeds, n_out = p->n_fetches;
  dy_status s = dy_compile_program(p, &o, &co, &rep, &err);
  if (!s)
    s = dy_write_sources(&co, base, &err);
  if (s)
    fprintf(stderr, "\n  compile failed: %s\n", err.msg);
  dy_codegen_output_free(&co);
  dy_program_free(p);
  if (s)
    return false;
  char up[64];
  size_t k = 0;
  for (; name[k] && k + 1 < sizeof up; k++)
    up[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 'a' + 'A' : name[k]);
  up[k] = '\0';
  snprintf(path, sizeof path, WORK "/%s_drv.c", name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n#include \"%s.h\"\n", name);
  fprintf(f, "static _Alignas(64) unsigned char arena[%s_ARENA_BYTES + 1];\n", up);
  fprintf(f, "int main(int argc, char **argv) {\n  static const int rank[] = {");
  for (int i = 0; i < n_in; i++)
    fprintf(f, "%s%s_INPUT_%d_RANK", i ? ", " : "", up, i);
  fprintf(f, "};\n  static const int orank[] = {");
  for (int i = 0; i < n_out; i++)
    fprintf(f, "%s%s_OUTPUT_%d_RANK", i ? ", " : "", up, i);
  fprintf(f, "};\n"
             "  int64_t shp[%d][8], dims[%s_NUM_DIMS];\n"
             "  const int64_t *sp[%d];\n  const void *in[%d];\n  void *out[%d];\n"
             "  float *got[%d];\n  long on[%d];\n  int a = 1, rc;\n"
             "  for (int i = 0; i < %d; i++) {\n"
             "    long n = 1;\n"
             "    for (int d = 0; d < rank[i]; d++) {\n"
             "      if (a >= argc) return 2;\n"
             "      shp[i][d] = atoll(argv[a++]);\n"
             "      n *= (long)shp[i][d];\n"
             "    }\n"
             "    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);\n"
             "    for (long j = 0; j < n; j++)\n"
             "      x[j] = (float)((j * 7 + i * 3) %% 23) * 0.1f - 1.1f;\n"
             "    in[i] = x;\n    sp[i] = shp[i];\n  }\n"
             "  rc = %s_bind(sp, dims);\n  printf(\"%%d\\n\", rc);\n"
             "  if (rc) {\n    for (int i = 0; i < %d; i++)\n      free((void *)in[i]);\n"
             "    return 0;\n  }\n"
             "  for (int o = 0; o < %d; o++) {\n"
             "    int64_t os[8];\n    long n = 1;\n"
             "    %s_output_shape(o, dims, os);\n"
             "    for (int d = 0; d < orank[o]; d++)\n      n *= (long)os[d];\n"
             "    on[o] = n;\n    out[o] = got[o] = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));\n"
             "  }\n"
             "  rc = %s_run_v(arena, dims, in, out);\n  printf(\"%%d\\n\", rc);\n"
             "  for (int o = 0; o < %d; o++)\n    for (long j = 0; j < on[o]; j++)\n"
             "      printf(\"%%.9g\\n\", (double)got[o][j]);\n"
             "  for (int i = 0; i < %d; i++)\n    free((void *)in[i]);\n"
             "  for (int o = 0; o < %d; o++)\n    free(got[o]);\n"
             "  return 0;\n}\n",
          n_in, up, n_in, n_in, n_out, n_out, n_out, n_in, name, n_in, n_out, name, name, n_out,
          n_in, n_out);
  fclose(f);
  return dy_test_sh(WORK "/build.log",
                    "cc -std=c11 -Wall -Wextra -Werror -pedantic -O1 " SAN " -I" WORK " -o "
                    WORK "/%s_drv " WORK "/%s_drv.c " WORK "/%s.c"
                    " $(ls " WORK "/%s_weights.c 2>/dev/null)",
                    name, name, name, name) == 0;
}

/* Run the driver on the inputs' shapes (shapes[i] has the rank of input
 * i); the status of bind and, when 0, of run, and the outputs into got. */
static int run_model(const char *name, int n_in, const int *rank, int64_t (*shapes)[8],
                     int *rc_run, float *got, int cap) {
  char cmd[1024];
  size_t at = (size_t)snprintf(cmd, sizeof cmd, WORK "/%s_drv", name);
  for (int i = 0; i < n_in; i++)
    for (int d = 0; d < rank[i]; d++)
      at += (size_t)snprintf(cmd + at, sizeof cmd - at, " %lld", (long long)shapes[i][d]);
  snprintf(cmd + at, sizeof cmd - at, " > " WORK "/%s.out 2>&1", name);
  int st = system(cmd);
  CU_ASSERT_EQUAL(st, 0);
  char path[600];
  snprintf(path, sizeof path, WORK "/%s.out", name);
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  int rc = -1, n = 0;
  *rc_run = -1;
  if (fscanf(f, "%d", &rc) == 1 && rc == 0 && fscanf(f, "%d", rc_run) == 1) {
    double v;
    while (n < cap && fscanf(f, "%lf", &v) == 1)
      got[n++] = (float)v;
  }
  fclose(f);
  return rc == 0 ? n : -rc;
}

/* The executor on the same inputs; fills want, returns the count. */
static int run_exec(const dy_program *p, int64_t (*shapes)[8], float *want, int cap) {
  dy_tensor *in[8], *out[8] = {0};
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_type *t = &p->vars[p->feeds[i]]->type;
    in[i] = dy_tensor_new(DY_F32, t->rank, shapes[i]);
    float *x = dy_tensor_f32(in[i]);
    for (int64_t j = 0; j < dy_type_numel(&in[i]->type); j++)
      x[j] = fill(i, j);
  }
  dy_error err = {0};
  dy_status s = dy_executor_run(p, in, p->n_feeds, out, p->n_fetches, &err);
  if (s)
    fprintf(stderr, "\n  executor: %s\n", err.msg);
  int n = 0;
  for (int o = 0; o < p->n_fetches && !s; o++) {
    const float *y = dy_tensor_f32(out[o]);
    for (int64_t j = 0; j < dy_type_numel(&out[o]->type) && n < cap; j++)
      want[n++] = y[j];
    dy_tensor_free(out[o]);
  }
  for (int i = 0; i < p->n_feeds; i++)
    dy_tensor_free(in[i]);
  return s ? -1 : n;
}

static float max_diff(const float *a, const float *b, int n) {
  float m = 0;
  for (int i = 0; i < n; i++) {
    float d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    if (!(d <= m))
      m = d;
  }
  return m;
}

static void test_compiled_binds_symbols(void) {
  dy_program *p = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(p != NULL);
  dy_program *q = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(build_model(q, "xm", 3));
  /* the header: the bound, the dims, the status */
  char *h = dy_test_slurp(WORK "/xm.h");
  CU_ASSERT_FATAL(h != NULL);
  CU_ASSERT(strstr(h, "#define XM_MAX_DIM_SEQ 6") != NULL);
  CU_ASSERT(strstr(h, "#define XM_NUM_DIMS 2") != NULL);
  CU_ASSERT(strstr(h, "XM_ERR_SHAPE = 5") != NULL);
  free(h);
  static float got[4096], want[4096];
  int rank[2] = {3, 3}, rc_run;
  int64_t pairs[][2] = {{1, 1}, {2, 5}, {3, 6}, {1, 6}, {3, 1}};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
    int64_t b = pairs[k][0], sq = pairs[k][1];
    int64_t shapes[2][8] = {{b, sq, 8}, {b, sq, 1}};
    int n = run_model("xm", 2, rank, shapes, &rc_run, got, 4096);
    int m = run_exec(p, shapes, want, 4096);
    CU_ASSERT_EQUAL(rc_run, 0);
    CU_ASSERT_EQUAL(n, b * sq * 8);
    CU_ASSERT_EQUAL(n, m);
    if (n == m && n > 0)
      CU_ASSERT(max_diff(got, want, n) == 0.0f);
  }
  /* refused: seq disagrees, seq above its bound, batch above its bound,
   * a static dim wrong: the bind's status, nothing run (ASan would see a
   * read past the inputs) */
  int64_t bad[][2][8] = {{{2, 5, 8}, {2, 4, 1}}, {{1, 7, 8}, {1, 7, 1}},
                         {{4, 2, 8}, {4, 2, 1}}, {{1, 2, 9}, {1, 2, 1}}};
  int want_rc[] = {5, 5, 1, 5};
  for (int k = 0; k < 4; k++)
    CU_ASSERT_EQUAL(run_model("xm", 2, rank, bad[k], &rc_run, got, 4096), -want_rc[k]);
  dy_program_free(p);
}

/* Compiled == executor at (batch, seq) pairs on one input [batch, seq, d]
 * (bounds 3 and max_seq included); then a batch and a seq above their
 * bounds and a wrong static dim are refused by NAME_bind. */
static void check_pairs(const char *model, const char *name, int64_t d, int64_t max_seq,
                        float tol) {
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(model, &p, &err), &err);
  DY_ASSERT_OK(dy_program_declare_sym(p, "seq", max_seq, &err), &err);
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_model_load(model, &q, &err), &err);
  DY_ASSERT_OK(dy_program_declare_sym(q, "seq", max_seq, &err), &err);
  CU_ASSERT_FATAL(build_model(q, name, 3));
  enum { CAP = 1 << 16 };
  float *got = malloc(sizeof(float) * CAP), *want = malloc(sizeof(float) * CAP);
  int rank[1] = {3}, rc_run;
  int64_t pairs[][2] = {{1, 1}, {2, 7}, {3, max_seq}, {1, max_seq}, {3, 1}, {2, max_seq - 1}};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
    int64_t shapes[1][8] = {{pairs[k][0], pairs[k][1], d}};
    int n = run_model(name, 1, rank, shapes, &rc_run, got, CAP);
    int m = run_exec(p, shapes, want, CAP);
    CU_ASSERT_EQUAL(rc_run, 0);
    CU_ASSERT_EQUAL(n, pairs[k][0] * pairs[k][1] * d);
    CU_ASSERT_EQUAL(n, m);
    float diff = n == m && n > 0 ? max_diff(got, want, n) : 1e9f;
    if (!(diff <= tol))
      fprintf(stderr, "\n  %s at batch %lld, seq %lld: max diff %g\n", name,
              (long long)pairs[k][0], (long long)pairs[k][1], (double)diff);
    CU_ASSERT(diff <= tol);
  }
  int64_t bad[][1][8] = {{{4, 2, d}}, {{1, max_seq + 1, d}}, {{1, 2, d + 1}}, {{0, 2, d}}};
  int want_rc[] = {1, 5, 5, 1};
  for (int k = 0; k < 4; k++)
    CU_ASSERT_EQUAL(run_model(name, 1, rank, bad[k], &rc_run, got, CAP), -want_rc[k]);
  free(got);
  free(want);
  dy_program_free(p);
}

/* samples/transformer.c saved with x: f32[None, seq, 128]: the compiled
 * code at several (batch, seq) pairs equals the static executor. */
static void test_transformer_sample(void) {
  mkdir(WORK, 0777);
  mkdir(WORK "/tr", 0777);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(WORK "/tr.log", DY_BUILD_DIR "/../samples/transformer --out "
                                   WORK "/tr --dynamic-seq"), 0);
  /* the eager API's named dim round-trips through the .dymodel */
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(WORK "/tr/transformer.dymodel", &p, &err), &err);
  char ts[64];
  CU_ASSERT_STRING_EQUAL(dy_type_str(&p->vars[p->feeds[0]]->type, ts, sizeof ts),
                         "f32[-1,seq,128]");
  CU_ASSERT(p->n_syms == 1 && strcmp(p->syms[0].name, "seq") == 0);
  dy_program_free(p);
  check_pairs(WORK "/tr/transformer.dymodel", "trs", 128, 16, 2e-4f);
  /* the executable (main.c binds the sizes from the .npy shapes): dy2stc
   * check against the executor at the sample's batch 2, seq 64 */
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/check.log", "%s check " WORK "/tr/transformer.dymodel --input x="
                             WORK "/tr/x.npy --max-batch 2 --max-dim seq=64 --atol 1e-4",
                             DY2STC_PATH), 0);
  char *log = dy_test_slurp(WORK "/check.log");
  CU_ASSERT(log && strstr(log, ": ok") != NULL);
  free(log);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/check.log", "%s check " WORK "/tr/transformer.dymodel --input x="
                             WORK "/tr/x.npy --max-dim seq=32", DY2STC_PATH), 1);
  log = dy_test_slurp(WORK "/check.log");
  CU_ASSERT(log && strstr(log, "seq = 64 is above its bound 32") != NULL);
  free(log);
}

/* Ops of kind k in p's blocks. */
static int count_ops(const dy_program *p, dy_op_kind k) {
  int n = 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++)
      n += p->blocks[b]->ops[i]->kind == k;
  return n;
}

/* The exporter-shaped ONNX encoder (onnx_encoder.h): src [seq, batch, 32]
 * with two dim_params imports with seq and the batch symbolic through the
 * Shape/Gather/Mul/Unsqueeze/Concat/Reshape chains; the executor matches a
 * float64 reference and the compiled code the executor at (seq, batch)
 * pairs up to the bounds; sizes above the bounds are refused. */
static void test_onnx_encoder(void) {
  static enc_weights w;
  enc_weights_init(&w);
  mkdir(WORK, 0777);
  CU_ASSERT_EQUAL_FATAL(enc_write(WORK "/enc.onnx", &w), 0);
  dy_program *p = NULL, *q = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(WORK "/enc.onnx", &p, &err), &err);
  char ts[96];
  CU_ASSERT_STRING_EQUAL(dy_type_str(&p->vars[p->feeds[0]]->type, ts, sizeof ts),
                         "f32[seq,-1,32]");
  CU_ASSERT_STRING_EQUAL(dy_type_str(&p->vars[p->fetches[0]]->type, ts, sizeof ts),
                         "f32[seq,-1,32]");
  /* the attention's batch * heads */
  bool bh = false;
  for (int i = 0; i < p->n_vars; i++)
    bh |= strstr(dy_type_str(&p->vars[i]->type, ts, sizeof ts), "f32[4*batch,seq,8]") != NULL;
  CU_ASSERT(bh);
  enum { MAX_SEQ = 12, MAX_B = 3, CAP = MAX_SEQ * MAX_B * ENC_E };
  /* the compiled code runs the fused forms (checked against the executor,
   * which runs the Program as imported, below): each decomposed layer norm
   * one layer_norm (fuse-layernorm), each attention one fused_attention in
   * the exporter's [seq, batch * heads, 8] layout, no transpose left
   * (fuse-attention) */
  {
    dy_program *o = NULL;
    DY_ASSERT_OK(dy_onnx_load(WORK "/enc.onnx", &o, &err), &err);
    DY_ASSERT_OK(dy_program_declare_sym(o, "seq", MAX_SEQ, &err), &err);
    dy_pass_options po = {.opt_level = 2, .verify_each = 1};
    DY_ASSERT_OK(dy_run_pipeline(o, &po, &err), &err);
    CU_ASSERT_EQUAL(count_ops(o, DY_OP_LAYER_NORM), 2 * ENC_LAYERS);
    CU_ASSERT_EQUAL(count_ops(o, DY_OP_POW), 0);
    CU_ASSERT_EQUAL(count_ops(o, DY_OP_FUSED_ATTENTION), ENC_LAYERS);
    CU_ASSERT_EQUAL(count_ops(o, DY_OP_SOFTMAX), 0);
    CU_ASSERT_EQUAL(count_ops(o, DY_OP_TRANSPOSE), 0);
    dy_program_free(o);
  }
  DY_ASSERT_OK(dy_program_declare_sym(p, "seq", MAX_SEQ, &err), &err);
  DY_ASSERT_OK(dy_onnx_load(WORK "/enc.onnx", &q, &err), &err);
  DY_ASSERT_OK(dy_program_declare_sym(q, "seq", MAX_SEQ, &err), &err);
  CU_ASSERT_FATAL(build_model(q, "enc", MAX_B));
  static float got[CAP], want[CAP], src[CAP];
  static double ref[CAP];
  int rank[1] = {3}, rc_run;
  int64_t pairs[][2] = {{1, 1}, {5, 2}, {MAX_SEQ, MAX_B}, {MAX_SEQ, 1}, {1, MAX_B}, {7, 3}};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
    int64_t S = pairs[k][0], B = pairs[k][1];
    int64_t shapes[1][8] = {{S, B, ENC_E}};
    int n = run_model("enc", 1, rank, shapes, &rc_run, got, CAP);
    int m = run_exec(p, shapes, want, CAP);
    CU_ASSERT_EQUAL(rc_run, 0);
    CU_ASSERT_EQUAL(n, S * B * ENC_E);
    CU_ASSERT_EQUAL_FATAL(n, m);
    for (int i = 0; i < n; i++)
      src[i] = fill(0, i);
    enc_ref(&w, src, (int)S, (int)B, ref);
    double dc = 0, dr = 0;
    for (int i = 0; i < n; i++) {
      double a = fabs((double)got[i] - want[i]), b = fabs((double)want[i] - ref[i]);
      dc = a > dc ? a : dc;
      dr = b > dr ? b : dr;
    }
    if (!(dc <= 1e-4 && dr <= 1e-4))
      fprintf(stderr, "\n  seq %lld, batch %lld: compiled - executor %g, executor - float64 %g\n",
              (long long)S, (long long)B, dc, dr);
    CU_ASSERT(dc <= 1e-4);
    CU_ASSERT(dr <= 1e-4);
  }
  /* pinned to one size (dy2stc --shape src=7,3,32): the sizes the
   * reshape_dims ops spell in symbols (seq,-1,32) are pinned with the
   * vars' types, so the Program verifies, optimises, and computes what
   * the dynamic one does at that size */
  {
    dy_program *o = NULL;
    DY_ASSERT_OK(dy_onnx_load(WORK "/enc.onnx", &o, &err), &err);
    const int64_t dims[3] = {7, 3, ENC_E};
    DY_ASSERT_OK(dy_program_pin_input(o, "src", dims, 3, &err), &err);
    DY_ASSERT_OK(dy_verify(o, &err), &err);
    CU_ASSERT_STRING_EQUAL(dy_type_str(&o->vars[o->fetches[0]]->type, ts, sizeof ts),
                           "f32[7,3,32]");
    int64_t shapes[1][8] = {{7, 3, ENC_E}};
    int n = run_exec(o, shapes, got, CAP), m = run_exec(p, shapes, want, CAP);
    CU_ASSERT_EQUAL(n, 7 * 3 * ENC_E);
    CU_ASSERT_EQUAL_FATAL(n, m);
    int differ = 0;
    for (int i = 0; i < n; i++)
      differ += fabs((double)got[i] - want[i]) > 1e-6;
    CU_ASSERT_EQUAL(differ, 0);
    dy_pass_options po = {.opt_level = 2, .verify_each = 1};
    DY_ASSERT_OK(dy_run_pipeline(o, &po, &err), &err);
    dy_program_free(o);
  }
  int64_t bad[][1][8] = {{{MAX_SEQ + 1, 1, ENC_E}}, {{2, MAX_B + 1, ENC_E}}, {{2, 2, ENC_E + 1}}};
  int want_rc[] = {5, 1, 5};
  for (int k = 0; k < 3; k++)
    CU_ASSERT_EQUAL(run_model("enc", 1, rank, bad[k], &rc_run, got, CAP), -want_rc[k]);
  /* the executor refuses them too */
  CU_ASSERT(run_exec(p, bad[0], want, CAP) < 0);
  dy_program_free(p);
}

/* The fused attentions of p reading q, k and v packed in rows. */
static int count_packed_attention(const dy_program *p) {
  int n = 0;
  for (int i = 0; i < p->blocks[0]->n_ops; i++) {
    const dy_op *op = p->blocks[0]->ops[i];
    n += op->kind == DY_OP_FUSED_ATTENTION && dy_fused_attention_attrs_get(op).n_packed == 6;
  }
  return n;
}

/* The same encoder exported with static shapes, batch 1 and 19 positions,
 * as bench/torch_compare.py exports it: the heads are slices of the QKV
 * projection's rows [19, 1, 96], and fuse-attention's packed form reads
 * them in place (no slice left); the executables built with and without
 * the pass agree with each other and with the float64 reference. */
static void test_onnx_encoder_packed(void) {
  enum { S = 19, N = S * ENC_E };
  static enc_weights w;
  enc_weights_init(&w);
  mkdir(WORK, 0777);
  CU_ASSERT_EQUAL_FATAL(enc_write_sized(WORK "/encp.onnx", &w, S, 1), 0);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(WORK "/encp.onnx", &p, &err), &err);
  char out_name[256];
  snprintf(out_name, sizeof out_name, "%s", p->vars[p->fetches[0]]->name);
  dy_pass_options po = {.opt_level = 2, .verify_each = 1};
  DY_ASSERT_OK(dy_run_pipeline(p, &po, &err), &err);
  CU_ASSERT_EQUAL(count_packed_attention(p), ENC_LAYERS);
  CU_ASSERT_EQUAL(count_ops(p, DY_OP_SLICE), 0);
  dy_program_free(p);
  /* the input, and the outputs of the two executables */
  dy_tensor *x = dy_tensor_new(DY_F32, 3, (int64_t[]){S, 1, ENC_E});
  static float src[N];
  static double ref[N];
  for (int i = 0; i < N; i++)
    src[i] = dy_tensor_f32(x)[i] = fill(0, i);
  DY_ASSERT_OK(dy_npy_write(WORK "/encp_x.npy", x, &err), &err);
  dy_tensor_free(x);
  const char *flags[2] = {"", "--disable-pass fuse-attention"};
  dy_tensor *y[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(WORK "/encp.log",
                                     "%s compile " WORK "/encp.onnx -o " WORK "/encp_%d %s && "
                                     WORK "/encp_%d --input src=" WORK "/encp_x.npy "
                                     "--output-dir " WORK "/encp_out%d",
                                     DY2STC_PATH, k, flags[k], k, k), 0);
    char path[700];
    snprintf(path, sizeof path, WORK "/encp_out%d/%s.npy", k, out_name);
    DY_ASSERT_OK(dy_npy_read(path, &y[k], &err), &err);
    CU_ASSERT_EQUAL_FATAL(dy_type_numel(&y[k]->type), N);
  }
  enc_ref(&w, src, S, 1, ref);
  double dab = 0, dref = 0;
  const float *a = dy_tensor_f32(y[0]), *b = dy_tensor_f32(y[1]);
  for (int i = 0; i < N; i++) {
    double u = fabs((double)a[i] - b[i]), v = fabs((double)a[i] - ref[i]);
    dab = u > dab ? u : dab;
    dref = v > dref ? v : dref;
  }
  CU_ASSERT(dab <= 1e-4);
  CU_ASSERT(dref <= 1e-4);
  dy_tensor_free(y[0]);
  dy_tensor_free(y[1]);
}

/* ConstantOfShape(Shape(x)) and Expand(m [1,1,4], Shape(x)) on symbolic
 * sizes: the value (or m) expanded to x's sizes at run time;
 * y = (x + 1) + x * m, executor and compiled. A ConstantOfShape no tensor
 * has the sizes of is refused. */
static void test_onnx_constant_of_shape_expand(void) {
  mkdir(WORK, 0777);
  ob_model *m = ob_new(13);
  m->inputs[m->graph.n_input++] = ob_value_info(m, "x", OB_F32, 3, (int64_t[]){-1, -1, 4}, NULL);
  m->inputs[0]->type->tensor_type->shape->dim[0]->dim_param = ob_str(m, "seq");
  m->inputs[0]->type->tensor_type->shape->dim[1]->dim_param = ob_str(m, "batch");
  ob_init_f32(m, "mask", 3, (int64_t[]){1, 1, 4}, (float[]){1, 0, 2, -1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  Onnx__NodeProto *n = ob_node(m, "ConstantOfShape", "ones", 1, (const char *[]){"s"}, 1,
                               (const char *[]){"one"});
  Onnx__AttributeProto *a = ob_attr(m, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = ob_tensor(m, "", OB_F32, 1, (int64_t[]){1}, (float[]){1.0f}, sizeof(float));
  ob_node(m, "Expand", "expand", 2, (const char *[]){"mask", "s"}, 1, (const char *[]){"me"});
  ob_node(m, "Add", "add", 2, (const char *[]){"x", "one"}, 1, (const char *[]){"a"});
  ob_node(m, "Mul", "mul", 2, (const char *[]){"x", "me"}, 1, (const char *[]){"b"});
  ob_node(m, "Add", "sum", 2, (const char *[]){"a", "b"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL_FATAL(ob_save(m, WORK "/cos.onnx"), 0);
  ob_free(m);
  dy_program *p = NULL, *q = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(WORK "/cos.onnx", &p, &err), &err);
  DY_ASSERT_OK(dy_onnx_load(WORK "/cos.onnx", &q, &err), &err);
  DY_ASSERT_OK(dy_program_declare_sym(q, "seq", 5, &err), &err);
  CU_ASSERT_FATAL(build_model(q, "cos", 3));
  static const float mk[4] = {1, 0, 2, -1};
  float got[64], want[64];
  int rank[1] = {3}, rc_run;
  int64_t pairs[][2] = {{1, 1}, {3, 2}, {5, 3}};
  for (int k = 0; k < 3; k++) {
    int64_t shapes[1][8] = {{pairs[k][0], pairs[k][1], 4}};
    int nn = run_model("cos", 1, rank, shapes, &rc_run, got, 64);
    int mm = run_exec(p, shapes, want, 64);
    CU_ASSERT_EQUAL(rc_run, 0);
    CU_ASSERT_EQUAL(nn, pairs[k][0] * pairs[k][1] * 4);
    CU_ASSERT_EQUAL_FATAL(nn, mm);
    int bad = 0;
    for (int i = 0; i < nn; i++) {
      float x = fill(0, i), y = (x + 1.0f) + x * mk[i % 4];
      bad += fabsf(want[i] - y) > 1e-6f || got[i] != want[i];
    }
    CU_ASSERT_EQUAL(bad, 0);
  }
  dy_program_free(p);
  /* ConstantOfShape of [seq, 7]: no tensor of those sizes, one is made
   * from x's seq (ox_like_make) */
  m = ob_new(13);
  m->inputs[m->graph.n_input++] = ob_value_info(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "seq");
  ob_init_i64(m, "seven", 1, (int64_t[]){1}, (int64_t[]){7});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Slice", "first", 3, (const char *[]){"s", "zero", "one"}, 1, (const char *[]){"s0"});
  ob_init_i64(m, "zero", 1, (int64_t[]){1}, (int64_t[]){0});
  ob_init_i64(m, "one", 1, (int64_t[]){1}, (int64_t[]){1});
  n = ob_node(m, "Concat", "cat", 2, (const char *[]){"s0", "seven"}, 1, (const char *[]){"s7"});
  ob_attr_i(m, n, "axis", 0);
  ob_node(m, "ConstantOfShape", "zeros", 1, (const char *[]){"s7"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL_FATAL(ob_save(m, WORK "/cos2.onnx"), 0);
  ob_free(m);
  p = NULL;
  DY_ASSERT_OK(dy_onnx_load(WORK "/cos2.onnx", &p, &err), &err);
  {
    dy_tensor *x = dy_tensor_new(DY_F32, 2, (int64_t[]){3, 4}), *y = NULL;
    for (int i = 0; i < 12; i++)
      dy_tensor_f32(x)[i] = i == 5 ? NAN : (float)i; /* x's values never leak in */
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, &y, 1, &err), &err);
    CU_ASSERT_EQUAL_FATAL(y->type.rank, 2);
    CU_ASSERT_EQUAL(y->type.shape[0], 3);
    CU_ASSERT_EQUAL(y->type.shape[1], 7);
    int nonzero = 0;
    for (int i = 0; i < 21; i++)
      nonzero += dy_tensor_f32(y)[i] != 0.0f;
    CU_ASSERT_EQUAL(nonzero, 0);
    dy_tensor_free(x);
    dy_tensor_free(y);
  }
  dy_program_free(p);
  /* ConstantOfShape of [2*seq]: no var has that size, so none is made */
  m = ob_new(13);
  m->inputs[m->graph.n_input++] = ob_value_info(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "seq");
  ob_init_i64(m, "two", 1, (int64_t[]){1}, (int64_t[]){2});
  ob_init_i64(m, "zero", 1, (int64_t[]){1}, (int64_t[]){0});
  ob_init_i64(m, "one", 1, (int64_t[]){1}, (int64_t[]){1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Slice", "first", 3, (const char *[]){"s", "zero", "one"}, 1, (const char *[]){"s0"});
  ob_node(m, "Mul", "twice", 2, (const char *[]){"s0", "two"}, 1, (const char *[]){"s2"});
  ob_node(m, "ConstantOfShape", "zeros", 1, (const char *[]){"s2"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL_FATAL(ob_save(m, WORK "/cos3.onnx"), 0);
  ob_free(m);
  p = NULL;
  CU_ASSERT_EQUAL(dy_onnx_load(WORK "/cos3.onnx", &p, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT(strstr(err.msg, "'zeros' (ConstantOfShape)") != NULL &&
            strstr(err.msg, "no run-time tensor") != NULL);
}

/* concat along a symbolic axis (seq + 2) and along the batch (2*batch):
 * inference adds the sizes, the compiled offsets are expressions. */
static void test_concat_symbolic(void) {
  static const char *text =
      "program {\n"
      "  sym seq max 6\n"
      "  var x : f32[-1,seq,4] feed 0\n"
      "  var y : f32[-1,2,4] feed 1\n"
      "  var z : f32[-1,seq+2,4]\n"
      "  var w : f32[2*batch,seq,4]\n"
      "  block 0 parent -1 {\n"
      "    z = concat(x, y) {axis = 1}\n"
      "    w = concat(x, x) {axis = 0}\n"
      "  }\n"
      "  fetch 0 z\n"
      "  fetch 1 w\n"
      "}\n";
  dy_program *p = dy_test_parse_ok(text);
  CU_ASSERT_FATAL(p != NULL);
  CU_ASSERT_FATAL(build_model(dy_test_parse_ok(text), "cat", 3));
  float got[1024], want[1024];
  int rank[2] = {3, 3}, rc_run;
  int64_t pairs[][2] = {{1, 1}, {2, 5}, {3, 6}};
  for (int k = 0; k < 3; k++) {
    int64_t b = pairs[k][0], sq = pairs[k][1];
    int64_t shapes[2][8] = {{b, sq, 4}, {b, 2, 4}};
    int n = run_model("cat", 2, rank, shapes, &rc_run, got, 1024);
    int m = run_exec(p, shapes, want, 1024);
    CU_ASSERT_EQUAL(rc_run, 0);
    CU_ASSERT_EQUAL(n, b * (sq + 2) * 4 + 2 * b * sq * 4);
    CU_ASSERT_EQUAL_FATAL(n, m);
    CU_ASSERT(max_diff(got, want, n) == 0.0f);
    /* z's row s of batch 0 is x's (s < seq) or y's */
    CU_ASSERT(want[0] == fill(0, 0) && want[sq * 4] == fill(1, 0));
  }
  dy_program_free(p);
}

/* NAME.c and NAME.h of p (freed) with the default options, or NULL. */
static char *emit_text(dy_program *p, char **header) {
  dy_compile_options o = dy_compile_options_default();
  o.name = "m";
  dy_codegen_output co = {0};
  dy_compile_report rep;
  dy_error err = {0};
  dy_status s = dy_program_bound_sym(p, "batch", 4, &err);
  if (!s)
    s = dy_compile_program(p, &o, &co, &rep, &err);
  if (s)
    fprintf(stderr, "\n  compile failed: %s\n", err.msg);
  dy_program_free(p);
  char *c = s ? NULL : co.source;
  *header = s ? NULL : co.header;
  co.source = co.header = NULL;
  dy_codegen_output_free(&co);
  return c;
}

/* --shape x=2,5,8 (pins batch and seq) gives the very code of the model
 * written with static shapes; --dim seq=5 alone leaves the batch dynamic. */
static void test_pinned_is_static(void) {
  static const char *static_text =
      "program {\n"
      "  var x : f32[2,5,8] feed 0\n"
      "  var m : f32[2,5,1] feed 1\n"
      "  var y : f32[2,5,8]\n"
      "  var z : f32[2,40]\n"
      "  block 0 parent -1 {\n"
      "    y = mul(x, m)\n"
      "    z = reshape(y) {shape = [0, -1]}\n"
      "  }\n"
      "  fetch 0 z\n"
      "}\n";
  dy_error err = {0};
  dy_program *p = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(p != NULL);
  DY_ASSERT_OK(dy_program_pin_input(p, "x", (int64_t[]){2, 5, 8}, 3, &err), &err);
  char *ph, *sh;
  char *pc = emit_text(p, &ph), *sc = emit_text(dy_test_parse_ok(static_text), &sh);
  CU_ASSERT_FATAL(pc && sc);
  CU_ASSERT_STRING_EQUAL(pc, sc);
  CU_ASSERT_STRING_EQUAL(ph, sh);
  free(pc);
  free(sc);
  free(ph);
  free(sh);
  /* a wrong static dim, an unknown input */
  p = dy_test_parse_ok(exec_text);
  CU_ASSERT_EQUAL(dy_program_pin_input(p, "x", (int64_t[]){2, 5, 9}, 3, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT(strstr(err.msg, "dim 2 is 8 in the model, not 9") != NULL);
  CU_ASSERT_EQUAL(dy_program_pin_input(p, "q", (int64_t[]){2}, 1, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  /* seq pinned, the batch still dynamic: no NAME_bind, the batch argument */
  DY_ASSERT_OK(dy_program_pin_sym(p, "seq", 5, &err), &err);
  pc = emit_text(p, &ph);
  CU_ASSERT_FATAL(pc != NULL);
  CU_ASSERT(strstr(pc, "m_bind") == NULL && strstr(pc, "batch*40") != NULL);
  free(pc);
  free(ph);
}

/* The CLI: --max-dim bounds seq (the header's macro, --report's arena at
 * the bounds and as a function of the symbols), --dim pins it, bad
 * values are usage errors. */
static void test_cli_dims(void) {
  dy_program *p = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(p != NULL);
  dy_error err = {0};
  mkdir(WORK, 0777);
  DY_ASSERT_OK(dy_model_save(p, WORK "/xm.dymodel", &err), &err);
  dy_program_free(p);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/cli.log", "%s compile " WORK "/xm.dymodel --emit c -o " WORK
                             "/cli --max-batch 4 --max-dim seq=32 --report", DY2STC_PATH), 0);
  char *log = dy_test_slurp(WORK "/cli.log"), *h = dy_test_slurp(WORK "/cli.h");
  CU_ASSERT_FATAL(log && h);
  CU_ASSERT(strstr(log, "bytes at batch 4, seq 32 (lower bound") != NULL);
  CU_ASSERT(strstr(log, "arena(symbols)") != NULL && strstr(log, "32*batch*seq bytes") != NULL);
  CU_ASSERT(strstr(h, "#define CLI_MAX_DIM_SEQ 32") != NULL);
  free(log);
  free(h);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/cli.log", "%s compile " WORK "/xm.dymodel --emit c -o " WORK
                             "/cli2 --dim seq=3", DY2STC_PATH), 0);
  h = dy_test_slurp(WORK "/cli2.h");
  CU_ASSERT_FATAL(h != NULL);
  CU_ASSERT(strstr(h, "MAX_DIM_SEQ") == NULL && strstr(h, "f32[-1,24]") != NULL);
  free(h);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/cli.log", "%s compile " WORK "/xm.dymodel --emit c -o " WORK
                             "/cli3 --max-dim seq=0", DY2STC_PATH), 2);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/cli.log", "%s compile " WORK "/xm.dymodel --emit c -o " WORK
                             "/cli3 --max-dim len=4", DY2STC_PATH), 1);
  log = dy_test_slurp(WORK "/cli.log");
  CU_ASSERT(log && strstr(log, "no size symbol 'len'") != NULL);
  free(log);
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/cli.log", "%s compile " WORK "/xm.dymodel --emit c -o " WORK
                             "/cli3 --shape x=1,2", DY2STC_PATH), 1);
}

/* Every bound lives in the Program: the batch's too (declared like any
 * symbol, default 64), and the memory plan and the generated header read
 * them there; a bound round-trips through save/load; an old file without
 * the batch's bound loads with the default. */
static void test_bounds_in_program(void) {
  dy_error err = {0};
  dy_program *p = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(p != NULL);
  CU_ASSERT_EQUAL(dy_program_sym_bound(p, 0), DY_DEFAULT_MAX_BATCH);
  CU_ASSERT_EQUAL(dy_program_sym_bound(p, dy_sym_id("seq")), 6);
  dy_memplan_result r64, r8;
  DY_ASSERT_OK(dy_memplan(p, &r64, &err), &err);
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 8, &err), &err);
  CU_ASSERT_EQUAL(dy_program_sym_bound(p, 0), 8);
  CU_ASSERT_EQUAL(dy_program_dim_bound(p, dy_dim_sym("batch")), 8);
  CU_ASSERT_EQUAL(dy_program_dim_bound(p, p->vars[3]->type.shape[1]), 48); /* 8*seq */
  DY_ASSERT_OK(dy_memplan(p, &r8, &err), &err);
  /* y: f32[batch,seq,8] is the one arena buffer: 4 * batch * 6 * 8 bytes */
  CU_ASSERT_EQUAL(r8.arena_bytes, 4 * 8 * 6 * 8);
  CU_ASSERT_EQUAL(r64.arena_bytes, 4 * 64 * 6 * 8);
  /* the bound survives save and load, and reaches NAME_MAX_BATCH */
  mkdir(WORK, 0777);
  DY_ASSERT_OK(dy_model_save(p, WORK "/b8.dymodel", &err), &err);
  dy_program_free(p);
  DY_ASSERT_OK(dy_model_load(WORK "/b8.dymodel", &p, &err), &err);
  CU_ASSERT_EQUAL(dy_program_sym_bound(p, 0), 8);
  dy_compile_options o = dy_compile_options_default();
  o.name = "b8";
  dy_codegen_output co = {0};
  DY_ASSERT_OK(dy_compile_program(p, &o, &co, NULL, &err), &err);
  CU_ASSERT(strstr(co.header, "#define B8_MAX_BATCH 8\n") != NULL);
  dy_codegen_output_free(&co);
  dy_program_free(p);
  /* the text IR: a declared batch bound, and none (the default) */
  p = dy_test_parse_ok("program {\n  sym batch max 3\n  var x : f32[-1,2] feed 0\n"
                       "  var y : f32[-1,2]\n  block 0 parent -1 {\n    y = relu(x)\n  }\n"
                       "  fetch 0 y\n}\n");
  CU_ASSERT_FATAL(p != NULL);
  CU_ASSERT_EQUAL(dy_program_sym_bound(p, 0), 3);
  dy_program_free(p);
}

/* dy2stc compile of WORK/pe.dymodel with args exits rc, saying want. */
static void compile_says(const char *args, int rc, const char *want) {
  CU_ASSERT_EQUAL(dy_test_sh(WORK "/pe.log", "%s compile " WORK "/pe.dymodel --emit c -o " WORK
                             "/pe %s", DY2STC_PATH, args), rc);
  char *log = dy_test_slurp(WORK "/pe.log");
  CU_ASSERT(log && strstr(log, want) != NULL);
  if (!log || !strstr(log, want))
    fprintf(stderr, "\n  compile %s said: %s\n  not: %s\n", args, log ? log : "", want);
  free(log);
}

/* A pin above the bound, a pin to 0, a bound below the pin and a pin of a
 * symbol the model lacks are errors with one line each (issue 31 item 7). */
static void test_pin_errors(void) {
  dy_error err = {0};
  dy_program *p = dy_test_parse_ok(exec_text); /* seq max 6 */
  CU_ASSERT_FATAL(p != NULL);
  CU_ASSERT_EQUAL(dy_program_pin_sym(p, "seq", 8, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(err.msg, "size symbol 'seq': pinned to 8, above the bound 6");
  CU_ASSERT_EQUAL(dy_program_pin_sym(p, "seq", 0, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(err.msg, "size symbol 'seq': pinned value 0 is less than 1");
  CU_ASSERT_EQUAL(dy_program_pin_sym(p, "len", 4, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(err.msg, "the model has no size symbol 'len'");
  DY_ASSERT_OK(dy_program_pin_sym(p, "seq", 3, &err), &err);
  CU_ASSERT_EQUAL(dy_program_bound_sym(p, "seq", 2, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(err.msg, "size symbol 'seq': pinned to 3, above the bound 2");
  CU_ASSERT_EQUAL(dy_program_bound_sym(p, "len", 2, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(err.msg, "the model has no size symbol 'len'");
  dy_program_free(p);
  /* the same in a model's own declarations */
  dy_program *q = NULL;
  CU_ASSERT_NOT_EQUAL(dy_program_parse("program {\n  sym seq max 4 value 8\n}\n", &q, &err),
                      DY_OK);
  CU_ASSERT(strstr(err.msg, "size symbol 'seq': pinned to 8, above the bound 4") != NULL);
  dy_program_free(q);
  q = NULL;
  CU_ASSERT_NOT_EQUAL(dy_program_parse("program {\n  sym seq value 0\n}\n", &q, &err), DY_OK);
  CU_ASSERT(strstr(err.msg, "size symbol 'seq': pinned value 0 is not a size") != NULL);
  dy_program_free(q);
  /* the CLI: --dim above --max-dim, --dim of a symbol the model lacks */
  p = dy_test_parse_ok(exec_text);
  CU_ASSERT_FATAL(p != NULL);
  mkdir(WORK, 0777);
  DY_ASSERT_OK(dy_model_save(p, WORK "/pe.dymodel", &err), &err);
  dy_program_free(p);
  compile_says("--dim seq=3 --max-dim seq=2", 1,
               "--max-dim: size symbol 'seq': pinned to 3, above the bound 2\n");
  compile_says("--dim seq=9", 1, "--dim: size symbol 'seq': pinned to 9, above the bound 6\n");
  compile_says("--dim len=4", 1, "--dim: the model has no size symbol 'len'\n");
  compile_says("--dim seq=0", 2, "--dim needs NAME=N (a positive size), not 'seq=0'");
}

/* Each op's kernel scratch is computed once (dy_codegen_scratch_sizes, the
 * emitter table's figure) and the memory plan places what it is handed:
 * a matmul with a run-time B packs its panels into scratch. */
static void test_scratch_stored(void) {
  dy_program *p = dy_test_parse_ok(
      "program {\n  sym batch max 16\n  var x : f32[-1,64] feed 0\n"
      "  var w : f32[64,64] feed 1\n  var h : f32[-1,64]\n  var y : f32[-1,64]\n"
      "  block 0 parent -1 {\n    h = matmul(x, w) {transpose_x = 0, transpose_y = 0}\n"
      "    y = relu(h)\n  }\n  fetch 0 y\n}\n");
  CU_ASSERT_FATAL(p != NULL);
  dy_error err = {0};
  int64_t bytes[2], more[2], off[2];
  dy_codegen_scratch_sizes(p, 1, bytes);
  CU_ASSERT(bytes[0] > 0);
  CU_ASSERT_EQUAL(bytes[0], dy_codegen_scratch_bytes(p, p->blocks[0]->ops[0], 1));
  CU_ASSERT_EQUAL(bytes[1], 0);
  dy_memplan_result r, r2;
  DY_ASSERT_OK(dy_memplan_scratch(p, bytes, off, &r, &err), &err);
  CU_ASSERT_EQUAL(r.n_scratch, 1);
  CU_ASSERT(off[0] >= 0 && off[1] == -1);
  /* h (16 x 64 floats) and the scratch, live at once */
  CU_ASSERT_EQUAL(r.arena_bytes, 4 * 16 * 64 + (bytes[0] + 63) / 64 * 64);
  more[0] = (bytes[0] + 63) / 64 * 64 + 4096;
  more[1] = 0;
  DY_ASSERT_OK(dy_memplan_scratch(p, more, off, &r2, &err), &err);
  CU_ASSERT_EQUAL(r2.arena_bytes, 4 * 16 * 64 + more[0]);
  /* the code from the stored sizes is the code that asks the table */
  DY_ASSERT_OK(dy_memplan_scratch(p, bytes, off, &r, &err), &err);
  dy_codegen_options o = {.name = "s", .arena_bytes = r.arena_bytes, .scratch_offsets = off};
  dy_codegen_output a = {0}, b = {0};
  DY_ASSERT_OK(dy_codegen(p, &o, &a, &err), &err);
  o.scratch_bytes = bytes;
  DY_ASSERT_OK(dy_codegen(p, &o, &b, &err), &err);
  CU_ASSERT_STRING_EQUAL(a.source, b.source);
  CU_ASSERT(strstr(b.header, "#define DY_M_S_MAX_BATCH 16\n") != NULL);
  dy_codegen_output_free(&a);
  dy_codegen_output_free(&b);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("dims");
  DY_TEST(test_normal_form);
  DY_TEST(test_text_forms);
  DY_TEST(test_program_symbols);
  DY_TEST(test_version2_file_reads);
  DY_TEST(test_executor_binds_symbols);
  DY_TEST(test_compiled_binds_symbols);
  DY_TEST(test_pinned_is_static);
  DY_TEST(test_cli_dims);
  DY_TEST(test_bounds_in_program);
  DY_TEST(test_pin_errors);
  DY_TEST(test_scratch_stored);
  DY_TEST(test_transformer_sample);
  DY_TEST(test_onnx_encoder);
  DY_TEST(test_onnx_encoder_packed);
  DY_TEST(test_onnx_constant_of_shape_expand);
  DY_TEST(test_concat_symbolic);
}
