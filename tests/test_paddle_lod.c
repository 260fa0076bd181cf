/* test_paddle_lod.c - the Paddle LoD sequence models of
 * ../shared/testdata-paddle (DY_PADDLE_DATA; README.md there) against
 * their stored float64 references, every stored case:
 *
 *   - serving_ctr (26 LoD feeds, sequence_pool AVERAGE), serving_textcls_lstm
 *     (lstm with peepholes, sequence_pool MAX) and benchmark_mmdnn (four
 *     lstm, two reverse, sequence_pad, sequence_mask);
 *   - each through the static executor (dy_executor_run), `dy2stc run`
 *     with --lod and the compiled executable with --lod, scale-relative
 *     error max|got - ref| / max|ref| <= 1e-4;
 *   - a LoD feed NAME is the Program's inputs NAME (values, dim 0 the size
 *     symbol NAME_len) and NAME@lod (i64 [batch+1]), read from the case's
 *     in_NAME_<case>.npy and in_NAME_<case>.lod.npy;
 *   - bad offsets fail with a one-line error on both paths;
 *   - serving_lac (program only: LoD gru, crf_decoding) imports without
 *     params and shows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#ifndef DY_PADDLE_DATA
#define DY_PADDLE_DATA DY_SOURCE_DIR "/../shared/testdata-paddle"
#endif

static bool have_data(void) {
  return dy_test_have_data(DY_PADDLE_DATA "/README.md", "no " DY_PADDLE_DATA
                           ": the Paddle LoD model tests need it beside the clone");
}

/* A var name as the stored files spell it ('/' -> '_'), and as the
 * executable names its output files (outside [A-Za-z0-9._-] -> '_'). */
static void file_name(char *dst, size_t n, const char *name, bool out_file) {
  snprintf(dst, n, "%s", name);
  for (char *s = dst; *s; s++)
    if (out_file ? !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                     (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-')
                 : *s == '/')
      *s = '_';
}

/* Feed i's file of case cs: NAME@lod is NAME's .lod.npy. */
static void feed_path(const dy_program *p, int i, const char *dir, const char *cs, char *path,
                      size_t n, bool *lod) {
  char nm[300];
  file_name(nm, sizeof nm, p->vars[p->feeds[i]]->name, false);
  size_t len = strlen(nm);
  *lod = len > 4 && strcmp(nm + len - 4, "@lod") == 0;
  if (*lod)
    nm[len - 4] = '\0';
  snprintf(path, n, "%s/%s/in_%s_%s%s", DY_PADDLE_DATA, dir, nm, cs, *lod ? ".lod.npy" : ".npy");
}

static void ref_path(const dy_program *p, int i, const char *dir, const char *cs, char *path,
                     size_t n) {
  char nm[300];
  file_name(nm, sizeof nm, p->vars[p->fetches[i]]->name, false);
  snprintf(path, n, "%s/%s/out_%s_%s.npy", DY_PADDLE_DATA, dir, nm, cs);
}

/* The inputs of the command line: --input NAME=FILE / --lod NAME=FILE. */
static size_t cli_inputs(const dy_program *p, const char *dir, const char *cs, char *cmd,
                         size_t n) {
  size_t at = 0;
  for (int i = 0; i < p->n_feeds; i++) {
    char path[4096], nm[300];
    bool lod;
    feed_path(p, i, dir, cs, path, sizeof path, &lod);
    snprintf(nm, sizeof nm, "%s", p->vars[p->feeds[i]]->name);
    if (lod)
      nm[strlen(nm) - 4] = '\0';
    at += (size_t)snprintf(cmd + at, n - at, " %s '%s=%s'", lod ? "--lod" : "--input", nm, path);
  }
  return at;
}

/* The outputs in out_dir against the references of case cs. */
static void check_outputs(const dy_program *p, const char *dir, const char *cs,
                          const char *out_dir, const char *how) {
  for (int i = 0; i < p->n_fetches; i++) {
    char path[8192], nm[300];
    dy_error err = {0};
    dy_tensor *got = NULL, *ref = NULL;
    file_name(nm, sizeof nm, p->vars[p->fetches[i]]->name, true);
    snprintf(path, sizeof path, "%s/%s.npy", out_dir, nm);
    DY_ASSERT_OK(dy_npy_read(path, &got, &err), &err);
    ref_path(p, i, dir, cs, path, sizeof path);
    DY_ASSERT_OK(dy_npy_read(path, &ref, &err), &err);
    CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &ref->type));
    double e = dy_test_scaled_err(got, ref);
    fprintf(stderr, "\n    %-22s %-3s %-9s %-26s rel err %.3g", dir, cs, how,
            p->vars[p->fetches[i]]->name, e);
    CU_ASSERT(e <= 1e-4);
    dy_tensor_free(got);
    dy_tensor_free(ref);
  }
}

static void check_lod_model(const char *dir, const char *const *cases) {
  if (!have_data())
    return;
  char model[4096], saved[4096], exe[4096], cmd[32768], out_dir[4096];
  dy_program *p = NULL;
  dy_error err = {0};
  snprintf(model, sizeof model, "%s/%s/model.pdmodel", DY_PADDLE_DATA, dir);
  DY_ASSERT_OK(dy_paddle_load(model, NULL, NULL, &p, &err), &err);
  snprintf(saved, sizeof saved, "%s/lod_%s.dymodel", DY_BUILD_DIR, dir);
  snprintf(exe, sizeof exe, "%s/lod_%s_exe", DY_BUILD_DIR, dir);
  DY_ASSERT_OK(dy_model_save(p, saved, &err), &err);
  /* each total length NAME_len bounded by 64 rows, the sequences by 2 */
  size_t at = (size_t)snprintf(cmd, sizeof cmd, "'%s' compile '%s' -o '%s' --max-batch 2",
                               DY2STC_PATH, saved, exe);
  for (int k = 0; k < p->n_syms; k++)
    at += (size_t)snprintf(cmd + at, sizeof cmd - at, " --max-dim %s=64", p->syms[k].name);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s >/dev/null", cmd), 0);
  for (int k = 0; cases[k]; k++) {
    const char *cs = cases[k];
    /* the executor */
    dy_tensor *in[DY_MAX_FEEDS] = {0}, *got[DY_MAX_FEEDS] = {0};
    for (int i = 0; i < p->n_feeds; i++) {
      char path[4096];
      bool lod;
      feed_path(p, i, dir, cs, path, sizeof path, &lod);
      DY_ASSERT_OK(dy_npy_read(path, &in[i], &err), &err);
    }
    DY_ASSERT_OK(dy_executor_run(p, in, p->n_feeds, got, p->n_fetches, &err), &err);
    snprintf(out_dir, sizeof out_dir, "%s/lod_out_%s_%s_exec", DY_BUILD_DIR, dir, cs);
    dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", out_dir, out_dir);
    for (int i = 0; i < p->n_fetches; i++) {
      char path[8192], nm[300];
      file_name(nm, sizeof nm, p->vars[p->fetches[i]]->name, true);
      snprintf(path, sizeof path, "%s/%s.npy", out_dir, nm);
      DY_ASSERT_OK(dy_npy_write(path, got[i], &err), &err);
      dy_tensor_free(got[i]);
    }
    check_outputs(p, dir, cs, out_dir, "executor");
    for (int i = 0; i < p->n_feeds; i++)
      dy_tensor_free(in[i]);
    /* dy2stc run and the executable, with --lod */
    snprintf(out_dir, sizeof out_dir, "%s/lod_out_%s_%s_run", DY_BUILD_DIR, dir, cs);
    size_t n = (size_t)snprintf(cmd, sizeof cmd, "'%s' run '%s' --output-dir '%s'",
                                DY2STC_PATH, model, out_dir);
    cli_inputs(p, dir, cs, cmd + n, sizeof cmd - n);
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s >/dev/null", cmd), 0);
    check_outputs(p, dir, cs, out_dir, "run");
    snprintf(out_dir, sizeof out_dir, "%s/lod_out_%s_%s_exe", DY_BUILD_DIR, dir, cs);
    n = (size_t)snprintf(cmd, sizeof cmd, "'%s' --output-dir '%s'", exe, out_dir);
    cli_inputs(p, dir, cs, cmd + n, sizeof cmd - n);
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s >/dev/null", cmd), 0);
    check_outputs(p, dir, cs, out_dir, "compiled");
  }
  dy_program_free(p);
}

static const char *const two_cases[] = {"b1", "b2", NULL};

static void test_serving_ctr(void) { check_lod_model("serving_ctr", two_cases); }
static void test_textcls_lstm(void) { check_lod_model("serving_textcls_lstm", two_cases); }
static void test_mmdnn(void) { check_lod_model("benchmark_mmdnn", two_cases); }

/* serving_lac (program only: word_emb and the rest absent): imports
 * without params, verifies and shows; with made-up parameters (a fixed
 * pattern) its gru and crf_decoding path is the same on the executor and
 * in the compiled executable, and is a tag per row. */
static void test_serving_lac(void) {
  if (!have_data())
    return;
  const char *model = DY_PADDLE_DATA "/pdmodel-only/serving_lac/model.pdmodel";
  dy_paddle_options o = {.params_optional = true};
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load(model, NULL, &o, &p, &err), &err);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_GRU), 4);
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_CRF_DECODING), 1);
  CU_ASSERT_EQUAL_FATAL(p->n_feeds, 2);
  CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[1]]->name, "word@lod");
  for (int i = 0, k = 0; i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    if (!v->persistable || v->data)
      continue;
    int64_t n = dy_type_numel(&v->type);
    float *d = malloc(sizeof(float) * (size_t)n);
    for (int64_t j = 0; j < n; j++)
      d[j] = 0.3f * sinf(0.7f * (float)j + (float)k);
    k++;
    DY_ASSERT_OK(dy_program_set_data(p, i, d, sizeof(float) * (size_t)n, &err), &err);
    free(d);
  }
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  char cmd[16384], dir[2048], path[4096];
  snprintf(dir, sizeof dir, "%s/lod_lac", DY_BUILD_DIR);
  dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' show '%s' > '%s/show.txt' 2>/dev/null", DY2STC_PATH,
                             model, dir), 0);
  snprintf(path, sizeof path, "%s/show.txt", dir);
  char *shown = dy_test_slurp(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(shown);
  CU_ASSERT_PTR_NOT_NULL(strstr(shown, "= gru(fc_0.tmp_1, word@lod,"));
  CU_ASSERT_PTR_NOT_NULL(strstr(shown, "= crf_decoding(fc_4.tmp_1, word@lod, crfw)"));
  free(shown);
  /* 7 words in sequences of 4, 0 and 3 */
  static const int64_t ids[] = {1, 5, 2, 9, 3, 3, 7}, off[] = {0, 4, 4, 7};
  dy_tensor *in[2] = {dy_tensor_new(DY_I64, 2, (int64_t[]){7, 1}),
                      dy_tensor_new(DY_I64, 1, (int64_t[]){4})}, *got = NULL, *exe_out = NULL;
  memcpy(in[0]->data, ids, sizeof ids);
  memcpy(in[1]->data, off, sizeof off);
  DY_ASSERT_OK(dy_executor_run(p, in, 2, &got, 1, &err), &err);
  CU_ASSERT_EQUAL(got->type.rank, 2);
  CU_ASSERT_EQUAL(got->type.shape[0], 7);
  int64_t tags = p->vars[dy_program_find_var(p, "crfw")]->type.shape[1];
  for (int i = 0; i < 7; i++) {
    int64_t t = ((const int64_t *)got->data)[i];
    CU_ASSERT(t >= 0 && t < tags);
  }
  char saved[4096], exe[4096];
  snprintf(saved, sizeof saved, "%s/lac.dymodel", dir);
  snprintf(exe, sizeof exe, "%s/lac_exe", dir);
  DY_ASSERT_OK(dy_model_save(p, saved, &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' --max-batch 4 "
                                   "--max-dim word_len=16 >/dev/null", DY2STC_PATH, saved, exe),
                        0);
  snprintf(path, sizeof path, "%s/word.npy", dir);
  DY_ASSERT_OK(dy_npy_write(path, in[0], &err), &err);
  snprintf(path, sizeof path, "%s/word.lod.npy", dir);
  DY_ASSERT_OK(dy_npy_write(path, in[1], &err), &err);
  snprintf(cmd, sizeof cmd, "'%s' --input 'word=%s/word.npy' --lod 'word=%s/word.lod.npy' "
           "--output-dir '%s' >/dev/null", exe, dir, dir, dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  snprintf(path, sizeof path, "%s/save_infer_model_scale_0.npy", dir);
  DY_ASSERT_OK(dy_npy_read(path, &exe_out, &err), &err);
  CU_ASSERT_TRUE_FATAL(dy_type_equal(&exe_out->type, &got->type));
  CU_ASSERT_EQUAL(memcmp(exe_out->data, got->data, got->nbytes), 0);
  fprintf(stderr, "\n    serving_lac tags:");
  for (int i = 0; i < 7; i++)
    fprintf(stderr, " %lld", (long long)((const int64_t *)got->data)[i]);
  dy_tensor_free(got);
  dy_tensor_free(exe_out);
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("paddle_lod");
  DY_TEST(test_serving_ctr);
  DY_TEST(test_textcls_lstm);
  DY_TEST(test_mmdnn);
  DY_TEST(test_serving_lac);
}
