/* test_paddle.c - the PaddlePaddle frontend (compiler/frontends/paddle/)
 * against the real models of ../shared/testdata-paddle (DY_PADDLE_DATA,
 * beside the source tree; README.md there describes every model).
 *
 *   - every model whose ops are supported: the static executor and the
 *     compiled executable (the imported Program saved as .dymodel and
 *     built by `dy2stc compile`) against the stored float64 references,
 *     every stored case, batch 1 and 2 (a model with a batch-1 case only
 *     runs it twice as a batch of 2), scale-relative error
 *     max|got - ref| / max|ref| <= 1e-4;
 *   - serving_blazeface in full, multiclass_nms's rows (a count known only
 *     at run time) against the stored LoD output; and up to multiclass_nms
 *     (fetch_names): its boxes and scores against the stored aux_*.npy;
 *   - every other model: its exact one-line error; the models whose
 *     references are not stored import and verify;
 *   - the decoder on every .pdmodel of the folder (pdmodel-only/ too),
 *     without params: a status, never a crash;
 *   - the one-file-per-variable layout equal to the combined one;
 *   - truncated and bit-flipped .pdmodel / .pdiparams: an error or the
 *     same Program, never a crash (under ASan in `make test`);
 *   - export then import (dy_paddle_save_mem, dy2stc export): the same
 *     Program, for the models above and a Program of the other ops;
 *   - the CLI on a .pdmodel: run, check, compile --shape, export, --params.
 */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "dy_custom.h"
#include "paddle_framework.pb-c.h"

/* the custom op sample (samples/custom_op/gap.c), registered in process */
#include "../samples/custom_op/gap.c"

#ifndef DY_PADDLE_DATA
#define DY_PADDLE_DATA DY_SOURCE_DIR "/../shared/testdata-paddle"
#endif

static bool have_data(void) {
  return dy_test_have_data(DY_PADDLE_DATA "/README.md", "no " DY_PADDLE_DATA
                           ": the Paddle model tests need it beside the clone");
}

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/paddle_%s", DY_BUILD_DIR, name);
}

/* The stored name of a tensor file: '/' becomes '_'. */
static void sanitize(char *s) {
  for (; *s; s++)
    if (*s == '/')
      *s = '_';
}

/* A batch of 2 made of b (batch 1) twice. */
static dy_tensor *twice(const dy_tensor *b) {
  int64_t shape[DY_MAX_DIMS];
  memcpy(shape, b->type.shape, sizeof shape);
  shape[0] = 2;
  dy_tensor *t = dy_tensor_new(b->type.dtype, b->type.rank, shape);
  memcpy(t->data, b->data, b->nbytes);
  memcpy((char *)t->data + b->nbytes, b->data, b->nbytes);
  return t;
}

/* dy_npy_read, and for a Fortran-order file (some stored references) the
 * same data reordered to C order: the header's flag is flipped in a copy,
 * the data read as C order and the strides reversed. */
static dy_status npy_read_any(const char *path, dy_tensor **out, dy_error *err) {
  if (dy_npy_read(path, out, err) == DY_OK)
    return DY_OK;
  if (!strstr(err->msg, "fortran_order"))
    return err->status;
  uint8_t *buf;
  size_t n;
  dy_status s = dy_read_file(path, &buf, &n, err);
  if (s)
    return s;
  char *f = memmem(buf, n < 256 ? n : 256, "'fortran_order': True, ", 23);
  if (!f)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: no fortran_order flag", path);
  memcpy(f, "'fortran_order': False,", 23);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s/paddle_fortran.npy", DY_BUILD_DIR);
  dy_tensor *c = NULL;
  if (!(s = dy_write_file_atomic(tmp, buf, n, err)))
    s = dy_npy_read(tmp, &c, err);
  free(buf);
  if (s)
    return s;
  dy_tensor *t = dy_tensor_new(c->type.dtype, c->type.rank, c->type.shape);
  int r = c->type.rank;
  int64_t numel = dy_tensor_numel(c), idx[DY_MAX_DIMS] = {0};
  size_t es = dy_dtype_size(c->type.dtype);
  for (int64_t i = 0; i < numel; i++) { /* i: the C-order index of idx */
    int64_t fo = 0, stride = 1;
    for (int d = 0; d < r; d++) {
      fo += idx[d] * stride;
      stride *= c->type.shape[d];
    }
    memcpy((char *)t->data + (size_t)i * es, (char *)c->data + (size_t)fo * es, es);
    for (int d = r - 1; d >= 0 && ++idx[d] == c->type.shape[d]; d--)
      idx[d] = 0;
  }
  dy_tensor_free(c);
  *out = t;
  return DY_OK;
}

typedef struct {
  const char *dir;
  const char *feeds[4];
  const char *fetches[2];
  const char *cases[3];
  bool fixed_plane;   /* -1 in H and W: typed per case from its input */
  bool aux;           /* fetches: vars before an unsupported op (aux_*.npy) */
} model_case;

static const model_case supported[] = {
    {"serving_uci_housing", {"x"}, {"fc_0.tmp_1"}, {"b1", "b2"}, false, false},
    {"fluid_cifar_resnet", {"pixel"}, {"fc_0.tmp_2"}, {"b1", "b2"}, false, false},
    {"fluid_dqn_breakout", {"state"}, {"tmp_3"}, {"b1", "b2"}, false, false},
    {"paddleclas_mnv3small_3cls", {"x"}, {"save_infer_model/scale_0.tmp_0"}, {"b1", "b2"}, false, false},
    {"paddlelite_simple_model", {"image"}, {"batch_norm_0.tmp_3"}, {"b1"}, false, false},
    {"paddlelite_autoscan_rpc", {"input_data", "index_data"}, {"output_data"}, {"b1"}, false, false},
    /* fill_constant's shape from the i32 feed: run-time size symbols */
    {"paddlelite_autoscan_unique", {"shape_data"}, {"output_data"}, {"b1"}, false, false},
    {"ppocrv3_det", {"x"}, {"sigmoid_0.tmp_0"}, {"b1", "b2"}, true, false},
    {"paddlets_lstnet", {"past_target"}, {"tmp_0"}, {"b1", "b2", "pub"}, false, false},
    /* in full: prior_box, box_coder, softmax, then multiclass_nms (its
     * rows, a size known only at run time, bounded by 2 x keep_top_k) */
    {"serving_blazeface", {"image"}, {"save_infer_model/scale_0.tmp_0"}, {"b1", "b2"}, true,
     false},
    /* the dense part before multiclass_nms: boxes decoded against the
     * priors, and the class scores */
    {"serving_blazeface", {"image"}, {"box_coder_0.tmp_0", "transpose_4.tmp_0"}, {"b1", "b2"},
     true, true},
};

/* Read the case's feeds and reference outputs. The importer types every
 * integer feed i64 (Paddle's int32 and smaller ints widen, as their params
 * do); a reference input stored as int32 is widened here the way every
 * input reader widens it (dy_tensor_widen_to: `dy2stc run`, the
 * executable and the Python API take the int32 file itself, see
 * test_int_feed_widths), as dy_executor_run takes the input's dtype. */
static void read_case(const model_case *m, const char *cs, dy_tensor **in, int *n_in,
                      dy_tensor **ref, int *n_ref) {
  dy_error err = {0};
  char path[4096], nm[256];
  *n_in = *n_ref = 0;
  for (int i = 0; i < 4 && m->feeds[i]; i++) {
    snprintf(nm, sizeof nm, "%s", m->feeds[i]);
    sanitize(nm);
    snprintf(path, sizeof path, "%s/%s/in_%s_%s.npy", DY_PADDLE_DATA, m->dir, nm, cs);
    DY_ASSERT_OK(npy_read_any(path, &in[*n_in], &err), &err);
    DY_ASSERT_OK(dy_tensor_widen_to(&in[*n_in], DY_I64, &err), &err);
    ++*n_in;
  }
  for (int i = 0; i < 2 && m->fetches[i]; i++) {
    snprintf(nm, sizeof nm, "%s", m->fetches[i]);
    sanitize(nm);
    snprintf(path, sizeof path, "%s/%s/%s_%s_%s.npy", DY_PADDLE_DATA, m->dir,
             m->aux ? "aux" : "out", nm, cs);
    DY_ASSERT_OK(npy_read_any(path, &ref[(*n_ref)++], &err), &err);
  }
}

static dy_status load_model(const model_case *m, const dy_tensor *typed_as, dy_program **p,
                            dy_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/model.pdmodel", DY_PADDLE_DATA, m->dir);
  dy_type t;
  dy_paddle_options o = {0};
  if (typed_as) {
    t = typed_as->type;
    t.shape[0] = -1;
    o = (dy_paddle_options){.n_feed_types = 1, .feed_names = &m->feeds[0], .feed_types = &t};
  }
  if (m->aux) {
    o.n_fetches = m->fetches[1] ? 2 : 1;
    o.fetch_names = m->fetches;
  }
  return dy_paddle_load(path, NULL, &o, p, err);
}

/* The compiled executable on inputs in, its outputs compared with ref. */
static void run_compiled(const char *exe, const model_case *m, dy_tensor **in, int n_in,
                         dy_tensor **ref, int n_ref, const char *tag) {
  char cmd[16384], dir[2048], path[4096], nm[256];
  dy_error err = {0};
  snprintf(dir, sizeof dir, "%s/paddle_out_%s_%s", DY_BUILD_DIR, m->dir, tag);
  dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  int n = snprintf(cmd, sizeof cmd, "'%s' --output-dir '%s'", exe, dir);
  for (int i = 0; i < n_in; i++) {
    snprintf(path, sizeof path, "%s/in%d.npy", dir, i);
    DY_ASSERT_OK(dy_npy_write(path, in[i], &err), &err);
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --input '%s=%s'", m->feeds[i], path);
  }
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s >/dev/null", cmd), 0);
  for (int i = 0; i < n_ref; i++) {
    snprintf(nm, sizeof nm, "%s", m->fetches[i]);
    for (char *s = nm; *s; s++)
      if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            *s == '.' || *s == '_' || *s == '-'))
        *s = '_';
    snprintf(path, sizeof path, "%s/%s.npy", dir, nm);
    dy_tensor *got = NULL;
    DY_ASSERT_OK(dy_npy_read(path, &got, &err), &err);
    CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &ref[i]->type));
    double e = dy_test_scaled_err(got, ref[i]);
    fprintf(stderr, "\n    %-28s %-4s compiled %-30s rel err %.3g", m->dir, tag, m->fetches[i], e);
    CU_ASSERT(e <= 1e-4);
    dy_tensor_free(got);
  }
}

/* Save p and build it with the CLI. */
static void compile_program(const dy_program *p, const char *name, char *exe, size_t n) {
  char model[4096];
  dy_error err = {0};
  tmp_path(model, sizeof model, name);
  strncat(model, ".dymodel", sizeof model - strlen(model) - 1);
  tmp_path(exe, n, name);
  strncat(exe, "_exe", n - strlen(exe) - 1);
  DY_ASSERT_OK(dy_model_save(p, model, &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' --max-batch 2 >/dev/null",
                                   DY2STC_PATH, model, exe), 0);
}

/* One model: every case on the executor (batch 1 and 2) and compiled. */
static void check_model(const model_case *m) {
  dy_program *p = NULL;
  dy_error err = {0};
  char exe[4096];
  for (int k = 0; k < 3 && m->cases[k]; k++) {
    dy_tensor *in[4] = {0}, *ref[2] = {0}, *got[2] = {0};
    int n_in, n_ref;
    read_case(m, m->cases[k], in, &n_in, ref, &n_ref);
    if (!p || m->fixed_plane) {
      dy_program_free(p);
      p = NULL;
      DY_ASSERT_OK(load_model(m, m->fixed_plane ? in[0] : NULL, &p, &err), &err);
      CU_ASSERT_EQUAL_FATAL(p->n_feeds, n_in);
      CU_ASSERT_EQUAL_FATAL(p->n_fetches, n_ref);
      for (int i = 0; i < n_in; i++)
        CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[i]]->name, m->feeds[i]);
      for (int i = 0; i < n_ref; i++)
        CU_ASSERT_STRING_EQUAL(p->vars[p->fetches[i]]->name, m->fetches[i]);
      char tag[300];
      snprintf(tag, sizeof tag, "%s_%s", m->dir, m->cases[k]);
      compile_program(p, tag, exe, sizeof exe);
    }
    DY_ASSERT_OK(dy_executor_run(p, in, n_in, got, n_ref, &err), &err);
    for (int i = 0; i < n_ref; i++) {
      CU_ASSERT_TRUE_FATAL(dy_type_equal(&got[i]->type, &ref[i]->type));
      double e = dy_test_scaled_err(got[i], ref[i]);
      fprintf(stderr, "\n    %-28s %-4s executor %-30s rel err %.3g", m->dir, m->cases[k],
              m->fetches[i], e);
      CU_ASSERT(e <= 1e-4);
      dy_tensor_free(got[i]);
    }
    run_compiled(exe, m, in, n_in, ref, n_ref, m->cases[k]);
    /* a batch-1 case alone: run it as a batch of 2 as well */
    if (!m->cases[1] && p->vars[p->feeds[0]]->type.shape[0] == -1) {
      dy_tensor *in2[4], *ref2[2], *got2[2] = {0};
      for (int i = 0; i < n_in; i++)
        in2[i] = twice(in[i]);
      for (int i = 0; i < n_ref; i++)
        ref2[i] = twice(ref[i]);
      DY_ASSERT_OK(dy_executor_run(p, in2, n_in, got2, n_ref, &err), &err);
      for (int i = 0; i < n_ref; i++) {
        CU_ASSERT(dy_test_scaled_err(got2[i], ref2[i]) <= 1e-4);
        dy_tensor_free(got2[i]);
      }
      run_compiled(exe, m, in2, n_in, ref2, n_ref, "b1x2");
      for (int i = 0; i < n_in; i++)
        dy_tensor_free(in2[i]);
      for (int i = 0; i < n_ref; i++)
        dy_tensor_free(ref2[i]);
    }
    for (int i = 0; i < n_in; i++)
      dy_tensor_free(in[i]);
    for (int i = 0; i < n_ref; i++)
      dy_tensor_free(ref[i]);
  }
  dy_program_free(p);
}

#define MODEL_TEST(fn, idx)                \
  static void fn(void) {                   \
    if (have_data())                       \
      check_model(&supported[idx]);        \
  }
MODEL_TEST(test_uci_housing, 0)
MODEL_TEST(test_cifar_resnet, 1)
MODEL_TEST(test_dqn_breakout, 2)
MODEL_TEST(test_mnv3small, 3)
MODEL_TEST(test_simple_model, 4)
MODEL_TEST(test_autoscan_rpc, 5)
MODEL_TEST(test_autoscan_unique, 6)
MODEL_TEST(test_ppocrv3_det, 7)
MODEL_TEST(test_lstnet, 8)
MODEL_TEST(test_blazeface, 9)
MODEL_TEST(test_blazeface_dense, 10)
#undef MODEL_TEST

/* The models that do not import: the exact one-line error of each. */
static void test_unsupported_models(void) {
  if (!have_data())
    return;
  static const struct {
    const char *dir, *msg;
  } want[] = {
      {"inferdemo_custom_gap", "op 7 (gap -> _generated_var_0): the custom op 'gap' is not "
                               "supported: it is a plugin (PD_BUILD_OP), not a Paddle op; give "
                               "its kernel and shape rule with --custom-op gap=FILE.c"},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    char path[1024], msg[2048];
    snprintf(path, sizeof path, "%s/%s/model.pdmodel", DY_PADDLE_DATA, want[i].dir);
    dy_program *p = NULL;
    dy_error err = {0};
    CU_ASSERT_EQUAL(dy_paddle_load(path, NULL, NULL, &p, &err), DY_STATUS_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(p);
    snprintf(msg, sizeof msg, "%s: %s", path, want[i].msg);
    if (strcmp(err.msg, msg))
      fprintf(stderr, "\n  got  %s\n  want %s\n", err.msg, msg);
    CU_ASSERT_STRING_EQUAL(err.msg, msg);
    CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  }
}

/* The models whose references are not stored here (too big): they import
 * and verify, with their feeds and fetches. */
static void test_models_without_refs(void) {
  if (!have_data())
    return;
  static const struct {
    const char *dir, *feed, *fetch;
  } m[] = {
      {"gcu_conv_bn", "x", "save_infer_model/scale_0.tmp_0"},
      {"gcu_conv_bn_relu", "x", "save_infer_model/scale_0.tmp_0"},
      {"gcu_conv_bn_hard_swish", "x", "save_infer_model/scale_0.tmp_0"},
      {"nafnet_restore_1024", "inp", "tmp_150"},
      {"serving_ocr_det_v1", "image", "save_infer_model/scale_0.tmp_0"},
  };
  for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/model.pdmodel", DY_PADDLE_DATA, m[i].dir);
    dy_program *p = NULL;
    dy_error err = {0};
    DY_ASSERT_OK(dy_paddle_load(path, NULL, NULL, &p, &err), &err);
    CU_ASSERT_EQUAL(p->n_feeds, 1);
    CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[0]]->name, m[i].feed);
    CU_ASSERT_EQUAL_FATAL(p->n_fetches, 1);
    CU_ASSERT_STRING_EQUAL(p->vars[p->fetches[0]]->name, m[i].fetch);
    DY_ASSERT_OK(dy_verify(p, &err), &err);
    dy_program_free(p);
  }
}

/* Every .pdmodel of the folder decodes, with no params: a status (the
 * first unsupported op, or the missing params), never a crash. */
static int decode_all(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[4096];
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      n += decode_all(path);
      continue;
    }
    size_t len = strlen(e->d_name);
    if (len < 8 || strcmp(e->d_name + len - 8, ".pdmodel"))
      continue;
    uint8_t *buf;
    size_t nb;
    dy_error err = {0};
    DY_ASSERT_OK(dy_read_file(path, &buf, &nb, &err), &err);
    dy_program *p = NULL;
    dy_status s = dy_paddle_load_mem(buf, nb, NULL, 0, path, NULL, &p, &err);
    CU_ASSERT(s != DY_OK || p != NULL);
    if (s)
      CU_ASSERT(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    dy_program_free(p);
    free(buf);
    n++;
  }
  closedir(d);
  return n;
}

static void test_decode_every_pdmodel(void) {
  if (!have_data())
    return;
  CU_ASSERT(decode_all(DY_PADDLE_DATA) >= 24);
  /* a Paddle 3.0 program and a quantized one name what stops them */
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_paddle_load(DY_PADDLE_DATA "/pdmodel-only/paddlelite_resnet50_int8/"
                                 "model.pdmodel", NULL, NULL, &p, &err),
                  DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "quantization ops"));
  /* a supported model whose params are absent: run and compile need them
   * (the error names the file), show prints it (params_optional: the
   * parameters typed from their VarDescs, without data) */
  CU_ASSERT_EQUAL(dy_paddle_load(DY_PADDLE_DATA "/pdmodel-only/inferdemo_resnet50/model.pdmodel",
                                 NULL, NULL, &p, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no params were given"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no params file "));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "inferdemo_resnet50/model.pdiparams"));
  dy_paddle_options o = {.params_optional = true};
  DY_ASSERT_OK(dy_paddle_load(DY_PADDLE_DATA "/pdmodel-only/inferdemo_resnet50/model.pdmodel",
                              NULL, &o, &p, &err), &err);
  int typed = 0;
  for (int i = 0; p && i < p->n_vars; i++)
    typed += p->vars[i]->persistable && !p->vars[i]->data;
  CU_ASSERT(typed > 100);
  dy_program_free(p);
  char log[4096];
  snprintf(log, sizeof log, "%s/paddle_show_noparams.txt", DY_BUILD_DIR);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' show '%s/pdmodel-only/inferdemo_resnet50/model.pdmodel' "
                             ">'%s' 2>&1 && grep -q 'no params file: its [0-9]* parameters are "
                             "shown by type' '%s' && grep -q 'persistable' '%s'", DY2STC_PATH,
                             DY_PADDLE_DATA, log, log, log), 0);
}

/* A Program's text without the source locations (the file name). */
static char *text_of(const dy_program *p) {
  char *t = dy_program_to_text(p), *w = t;
  for (const char *r = t; r && *r;) {
    if (r[0] == ' ' && r[1] == ' ' && r[2] == '@')
      while (*r && *r != '\n')
        r++;
    else
      *w++ = *r++;
  }
  if (w)
    *w = 0;
  return t;
}

/* Two Programs with the same ops (their text, locations aside) and the
 * same vars by name (type, flags, feed and fetch positions, data): var ids
 * may differ, as an importer creates a parameter where it is first read. */
static bool same_program(const dy_program *a, const dy_program *b) {
  char *ta = text_of(a), *tb = text_of(b);
  const char *oa = ta ? strstr(ta, "  block 0") : NULL, *ob = tb ? strstr(tb, "  block 0") : NULL;
  bool same = oa && ob && strcmp(oa, ob) == 0 && a->n_vars == b->n_vars;
  free(ta);
  free(tb);
  for (int i = 0; same && i < a->n_vars; i++) {
    const dy_var *x = a->vars[i];
    int j = dy_program_find_var(b, x->name);
    const dy_var *y = j >= 0 ? b->vars[j] : NULL;
    same = y && dy_type_equal(&x->type, &y->type) && x->persistable == y->persistable &&
           x->trainable == y->trainable && x->feed_index == y->feed_index &&
           x->fetch_index == y->fetch_index;
    if (same && x->persistable)
      same = memcmp(x->data, y->data,
                    (size_t)dy_type_numel(&x->type) * dy_dtype_size(x->type.dtype)) == 0;
  }
  return same;
}

/* The 2018 layout (__model__ + one file per var) loads as the combined. */
static void test_separate_files(void) {
  if (!have_data())
    return;
  dy_program *a = NULL, *b = NULL, *c = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load(DY_PADDLE_DATA "/fluid_dqn_breakout/model.pdmodel", NULL, NULL,
                              &a, &err), &err);
  DY_ASSERT_OK(dy_paddle_load(DY_PADDLE_DATA "/fluid_dqn_breakout/separate", NULL, NULL, &b,
                              &err), &err);
  DY_ASSERT_OK(dy_model_load_any(DY_PADDLE_DATA "/fluid_dqn_breakout/separate/__model__", &c,
                                 &err), &err);
  CU_ASSERT_TRUE(same_program(a, b));
  CU_ASSERT_TRUE(same_program(a, c));
  dy_program_free(a);
  dy_program_free(b);
  dy_program_free(c);
  /* a missing var file is named */
  char dir[4096];
  tmp_path(dir, sizeof dir, "separate");
  dy_test_sh(NULL, "rm -rf '%s' && cp -r '%s/fluid_dqn_breakout/separate' '%s' && chmod -R u+w "
             "'%s' && rm '%s/policy_conv2_b'", dir, DY_PADDLE_DATA, dir, dir, dir);
  CU_ASSERT_NOT_EQUAL(dy_paddle_load(dir, NULL, NULL, &a, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "parameter 'policy_conv2_b'"));
}

/* Truncations and bit flips of a model and its params: an error or the
 * same Program (a protobuf cut between fields, a flip in weight data),
 * never a crash. */
static void test_corruption_sweep(void) {
  if (!have_data())
    return;
  uint8_t *model, *params;
  size_t mn, pn;
  dy_error err = {0};
  DY_ASSERT_OK(dy_read_file(DY_PADDLE_DATA "/serving_uci_housing/model.pdmodel", &model, &mn,
                            &err), &err);
  DY_ASSERT_OK(dy_read_file(DY_PADDLE_DATA "/serving_uci_housing/model.pdiparams", &params,
                            &pn, &err), &err);
  dy_program *ref = NULL;
  DY_ASSERT_OK(dy_paddle_load_mem(model, mn, params, pn, "m", NULL, &ref, &err), &err);
  uint8_t *buf = malloc(mn > pn ? mn : pn);
  int errors = 0, same = 0;
  for (int which = 0; which < 2; which++) {
    const uint8_t *src = which ? params : model;
    size_t n = which ? pn : mn;
    for (size_t cut = 0; cut < n; cut++) {
      for (int flip = -1; flip < 8; flip++) {
        size_t len = flip < 0 ? cut : n;
        memcpy(buf, src, n);
        if (flip >= 0)
          buf[cut] ^= (uint8_t)(1u << flip);
        dy_program *p = NULL;
        dy_error e = {0};
        dy_status s = which ? dy_paddle_load_mem(model, mn, buf, len, "m", NULL, &p, &e)
                            : dy_paddle_load_mem(buf, len, params, pn, "m", NULL, &p, &e);
        if (s) {
          errors++;
          CU_ASSERT(e.msg[0] && strchr(e.msg, '\n') == NULL);
          CU_ASSERT_PTR_NULL(p);
        } else {
          same += same_program(p, ref);
        }
        /* a truncated params stream is always an error */
        if (which && flip < 0)
          CU_ASSERT_NOT_EQUAL(s, DY_OK);
        dy_program_free(p);
      }
    }
  }
  CU_ASSERT(errors > 0);
  fprintf(stderr, "\n    corruption sweep: %d errors, %d loads equal to the original ", errors,
          same);
  free(buf);
  free(model);
  free(params);
  dy_program_free(ref);
}

/* Export then import: the same Program (locations aside), for every
 * supported model without control flow and for a Program of the other ops
 * the exporter writes. */
static void round_trip(const dy_program *p, const char *what) {
  uint8_t *m, *pa;
  size_t mn, pn;
  dy_error err = {0};
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, &err), &err);
  DY_ASSERT_OK(dy_paddle_load_mem(m, mn, pa, pn, what, NULL, &q, &err), &err);
  bool same = same_program(p, q);
  if (!same) {
    char *a = text_of(p), *b = text_of(q);
    fprintf(stderr, "\n  %s: the round trip differs:\n%s\n---\n%s\n", what, a, b);
    free(a);
    free(b);
  }
  CU_ASSERT_TRUE(same);
  dy_program_free(q);
  free(m);
  free(pa);
}

static const char rt_text[] =
    "program {\n"
    "  var x : f32[-1,2,4,4] feed 0\n"
    "  var idx : i64[3] feed 1\n"
    "  var w : f32[2,3,3,3] persistable = [0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, "
    "0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, "
    "-0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, "
    "1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0, 0.5, -0.25, 1.0]\n"
    "  var g : f32[3] persistable trainable = [1.0, 2.0, 0.5]\n"
    "  var b : f32[3] persistable trainable = [0.0, 0.25, -1.0]\n"
    "  var t : f32[-1,3,5,6]\n"
    "  var gn : f32[-1,3,5,6]\n"
    "  var ge : f32[-1,3,5,6]\n"
    "  var pl : f32[-1,3,2,3]\n"
    "  var fl : f32[-1,18]\n"
    "  var sl : f32[-1,9]\n"
    "  var ga : f32[-1,3]\n"
    "  var k : f32[1,3]\n"
    "  var c : f32[-1,3]\n"
    "  var cmp : bool[-1,3]\n"
    "  var cmp2 : bool[-1,3]\n"
    "  var wh : f32[-1,3]\n"
    "  var ls : f32[-1,3]\n"
    "  var am : i64[-1]\n"
    "  var ci : f32[-1]\n"
    "  var ti : f32[-1,6]\n"
    "  var us : f32[-1,1,6]\n"
    "  var sq : f32[-1,6]\n"
    "  var rs : f32[-1]\n"
    "  var cl : f32[-1,3]\n"
    "  var lr : f32[-1,3]\n"
    "  var mx : f32[-1,3]\n"
    "  var dr : f32[-1,3]\n"
    "  var ln : f32[-1,3]\n"
    "  var out : f32[-1,3]\n"
    "  var cat : f32[-1,6]\n"
    "  block 0 parent -1 {\n"
    "    t = conv2d_transpose(x, w) {strides = [1, 1], paddings = [1, 0, 0, 0], dilations = [1, 1], groups = 1, output_padding = []}  @m.c:1\n"
    "    gn = group_norm(t, g, b) {groups = 3, epsilon = 0.0009765625}  @m.c:2\n"
    "    ge = gelu(gn) {approximate = 1}  @m.c:3\n"
    "    pl = pool2d(ge) {pooling_type = \"max\", ksize = [2, 2], strides = [2, 2], paddings = [0, 0], ceil_mode = 0, exclusive = 1, global_pooling = 0, adaptive = 0}  @m.c:4\n"
    "    fl = flatten(pl) {start_axis = 1, stop_axis = -1}  @m.c:5\n"
    "    sl = slice(fl) {starts = [2], ends = [11], axes = [1], steps = [1]}  @m.c:6\n"
    "    ga = gather(sl, idx) {axis = 1}  @m.c:7\n"
    "    k = full() {shape = [1, 3], value = 0.5, dtype = 0}  @m.c:8\n"
    "    c = add(ga, k)  @m.c:9\n"
    "    cmp = greater(c, ga)  @m.c:10\n"
    "    cmp2 = less(c, ga)  @m.c:11\n"
    "    wh = where(cmp, c, ga)  @m.c:12\n"
    "    ls = log_softmax(wh) {axis = 1}  @m.c:13\n"
    "    am = argmax(ls) {axis = 1, keepdim = 0}  @m.c:14\n"
    "    ci = cast(am) {dtype = 0}  @m.c:15\n"
    "    ti = tile(ga) {repeat_times = [1, 2]}  @m.c:16\n"
    "    us = unsqueeze(ti) {axes = [1]}  @m.c:17\n"
    "    sq = squeeze(us) {axes = [1]}  @m.c:18\n"
    "    rs = reduce_sum(sq) {axes = [1], keepdim = 0}  @m.c:19\n"
    "    cl = clip(ga) {min = -0.5, max = 0.5}  @m.c:20\n"
    "    lr = leaky_relu(cl) {alpha = 0.25}  @m.c:21\n"
    "    mx = maximum(lr, wh)  @m.c:22\n"
    "    dr = dropout(mx) {p = 0.25, is_test = 1, seed = 0}  @m.c:23\n"
    "    ln = layer_norm(dr, g, b) {begin_norm_axis = 1, epsilon = 0.0001220703125}  @m.c:24\n"
    "    out = hard_sigmoid(ln) {slope = 0.25, offset = 0.5}  @m.c:25\n"
    "    cat = concat(c, out) {axis = 1}  @m.c:26\n"
    "  }\n"
    "  fetch 0 out\n"
    "  fetch 1 ci\n"
    "  fetch 2 rs\n"
    "  fetch 3 cmp2\n"
    "  fetch 4 cat\n"
    "}\n";

static void test_round_trip(void) {
  dy_program *p = dy_test_parse_ok(rt_text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  round_trip(p, "ops");
  /* the CLI writes the pair, which loads back */
  char dm[4096], out[4096];
  dy_error err = {0};
  tmp_path(dm, sizeof dm, "rt.dymodel");
  tmp_path(out, sizeof out, "rt_out");
  DY_ASSERT_OK(dy_model_save(p, dm, &err), &err);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' export '%s' --to paddle -o '%s' >/dev/null && '%s' show "
                             "'%s.pdmodel' >/dev/null", DY2STC_PATH, dm, out, DY2STC_PATH, out),
                  0);
  dy_program *q = NULL;
  strncat(out, ".pdmodel", sizeof out - strlen(out) - 1);
  DY_ASSERT_OK(dy_paddle_load(out, NULL, NULL, &q, &err), &err);
  CU_ASSERT_TRUE(same_program(p, q));
  dy_program_free(q);
  dy_program_free(p);
  if (!have_data())
    return;
  for (size_t i = 0; i < sizeof supported / sizeof *supported; i++) {
    /* lstnet: control flow, below; autoscan_unique: its run-time fill is
     * nonzero ops, which the exporter does not write */
    if (supported[i].fixed_plane || strcmp(supported[i].dir, "paddlets_lstnet") == 0 ||
        strcmp(supported[i].dir, "paddlelite_autoscan_unique") == 0)
      continue;
    DY_ASSERT_OK(load_model(&supported[i], NULL, &p, &err), &err);
    round_trip(p, supported[i].dir);
    dy_program_free(p);
  }
  /* control flow is not written (yet): the error says so */
  DY_ASSERT_OK(load_model(&supported[8], NULL, &p, &err), &err); /* paddlets_lstnet */
  CU_ASSERT_STRING_EQUAL(supported[8].dir, "paddlets_lstnet");
  uint8_t *m, *pa;
  size_t mn, pn;
  CU_ASSERT_EQUAL(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "control flow"));
  dy_program_free(p);
}

/* An unsqueeze2 without its axes attribute (renamed in the exported
 * bytes): Paddle's default, no axes, which is a clean error (it was a
 * negative-length attribute copy). */
static void test_unsqueeze_without_axes(void) {
  dy_program *p = dy_test_parse_ok("program {\n"
                                   "  var x : f32[-1,3] feed 0\n"
                                   "  var u : f32[-1,1,3]\n"
                                   "  block 0 parent -1 {\n"
                                   "    u = unsqueeze(x) {axes = [1]}  @m.c:1\n"
                                   "  }\n"
                                   "  fetch 0 u\n"
                                   "}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  uint8_t *m, *pa;
  size_t mn, pn;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, &err), &err);
  uint8_t *at = memmem(m, mn, "\x0a\x04" "axes", 6);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  at[5] = 'z';
  dy_program *q = NULL;
  CU_ASSERT_NOT_EQUAL(dy_paddle_load_mem(m, mn, pa, pn, "noaxes", NULL, &q, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "axes is empty"));
  CU_ASSERT_PTR_NULL(q);
  free(m);
  free(pa);
  dy_program_free(p);
}

/* paddlelite_autoscan_rpc's index is stored as int32 for the i64 feed:
 * `dy2stc run` and the compiled executable both take that file (widened),
 * with the reference's output; a float file for it is refused by both in
 * the same words. */
static void test_int_feed_widths(void) {
  if (!have_data())
    return;
  const char *d = DY_PADDLE_DATA "/paddlelite_autoscan_rpc";
  char exe[4096], out[4096], bad[4096], log[4096], log2[4096];
  tmp_path(exe, sizeof exe, "rpc_i32_exe");
  tmp_path(out, sizeof out, "rpc_i32_out");
  tmp_path(bad, sizeof bad, "rpc_f32_index.npy");
  tmp_path(log, sizeof log, "rpc_f32_run.txt");
  tmp_path(log2, sizeof log2, "rpc_f32_exe.txt");
  dy_error err = {0};
  dy_tensor *ref = NULL, *idx = NULL;
  DY_ASSERT_OK(dy_npy_read(DY_PADDLE_DATA "/paddlelite_autoscan_rpc/out_output_data_b1.npy",
                           &ref, &err), &err);
  DY_ASSERT_OK(dy_npy_read(DY_PADDLE_DATA "/paddlelite_autoscan_rpc/in_index_data_b1.npy",
                           &idx, &err), &err);
  CU_ASSERT_EQUAL_FATAL(idx->type.dtype, DY_I32); /* the file is int32 */
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s/model.pdmodel' -o '%s' >/dev/null",
                                   DY2STC_PATH, d, exe), 0);
  char run[8400];
  snprintf(run, sizeof run, "'%s' run '%s/model.pdmodel'", DY2STC_PATH, d);
  for (int k = 0; k < 2; k++) {
    CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && %s --input "
                                     "input_data='%s/in_input_data_b1.npy' --input "
                                     "index_data='%s/in_index_data_b1.npy' --output-dir '%s' "
                                     ">/dev/null", out, out, k ? exe : run, d, d, out), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/output_data.npy", out);
    dy_tensor *got = NULL;
    DY_ASSERT_OK(dy_npy_read(path, &got, &err), &err);
    CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &ref->type));
    CU_ASSERT_EQUAL(memcmp(got->data, ref->data, ref->nbytes), 0); /* a gather: exact */
    dy_tensor_free(got);
  }
  /* a float index: refused, the same message on both paths */
  dy_tensor *f = dy_tensor_new(DY_F32, 1, (int64_t[]){1});
  ((float *)f->data)[0] = 1;
  DY_ASSERT_OK(dy_npy_write(bad, f, &err), &err);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' run '%s/model.pdmodel' --input input_data='%s/"
                             "in_input_data_b1.npy' --input index_data='%s' --output-dir '%s' "
                             "2>'%s'; test $? -eq 1", DY2STC_PATH, d, d, bad, out, log), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' --input input_data='%s/in_input_data_b1.npy' --input "
                             "index_data='%s' --output-dir '%s' 2>'%s'; test $? -ne 0", exe, d,
                             bad, out, log2), 0);
  char *a = dy_test_slurp(log), *b = dy_test_slurp(log2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  char want[4400];
  snprintf(want, sizeof want, "input 'index_data': %s: dtype '<f4', expected '<i8' (i64)", bad);
  if (!strstr(a, want) || !strstr(b, want))
    fprintf(stderr, "\n  run: %s  exe: %s  want: %s\n", a, b, want);
  CU_ASSERT_PTR_NOT_NULL(strstr(a, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(b, want));
  free(a);
  free(b);
  dy_tensor_free(f);
  dy_tensor_free(ref);
  dy_tensor_free(idx);
}

/* autoscan_unique's shape outside [0, bound] (16 per dim at rank 4): the
 * gather's index error on run and in the executable, never a short
 * count; a shape inside it runs. */
static void test_shape_tensor_bounds(void) {
  if (!have_data())
    return;
  const char *d = DY_PADDLE_DATA "/paddlelite_autoscan_unique";
  char exe[4096], out[4096], in[4096], log[4096];
  tmp_path(exe, sizeof exe, "unique_exe");
  tmp_path(out, sizeof out, "unique_out");
  tmp_path(in, sizeof in, "unique_in.npy");
  tmp_path(log, sizeof log, "unique_err.txt");
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s/model.pdmodel' -o '%s' >/dev/null && "
                                   "rm -rf '%s' && mkdir -p '%s'", DY2STC_PATH, d, exe, out, out),
                        0);
  static const int32_t cases[][4] = {{2, 3, 1, 17}, {2, -1, 1, 4}, {16, 1, 1, 16}};
  for (int k = 0; k < 3; k++) {
    dy_tensor *t = dy_tensor_new(DY_I32, 1, (int64_t[]){4});
    memcpy(t->data, cases[k], sizeof cases[k]);
    dy_error err = {0};
    DY_ASSERT_OK(dy_npy_write(in, t, &err), &err);
    dy_tensor_free(t);
    int want = k < 2 ? 1 : 0;
    CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' run '%s/model.pdmodel' --input shape_data='%s' "
                               "--output-dir '%s' >/dev/null 2>'%s'; test $? -eq %d",
                               DY2STC_PATH, d, in, out, log, want), 0);
    char *text = dy_test_slurp(log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    if (want)
      CU_ASSERT_PTR_NOT_NULL(strstr(text, "model.pdmodel:2: gather: index "));
    free(text);
    CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' --input shape_data='%s' --output-dir '%s' >/dev/null "
                               "2>'%s'; test $? %s 0", exe, in, out, log, want ? "-ne" : "-eq"),
                    0);
    text = dy_test_slurp(log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    if (want)
      CU_ASSERT_PTR_NOT_NULL(strstr(text, "an index input is out of range"));
    free(text);
  }
  /* the last case's output: [16, 1, 1, 16] ones */
  char path[4200];
  snprintf(path, sizeof path, "%s/output_data.npy", out);
  dy_tensor *got = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_read(path, &got, &err), &err);
  CU_ASSERT_EQUAL(dy_tensor_numel(got), 256);
  CU_ASSERT_EQUAL(got->type.shape[0], 16);
  CU_ASSERT_EQUAL(got->type.shape[3], 16);
  for (int64_t i = 0; i < dy_tensor_numel(got); i++)
    CU_ASSERT_EQUAL_FATAL(((int64_t *)got->data)[i], 1);
  dy_tensor_free(got);
}

/* Give op o of block 0 an input slot of the given var names. */
static void add_input_slot(Paddle__Framework__Proto__OpDesc *o, const char *slot, int n,
                           const char *const *names) {
  Paddle__Framework__Proto__OpDesc__Var *v = malloc(sizeof *v);
  paddle__framework__proto__op_desc__var__init(v);
  v->parameter = strdup(slot);
  v->n_arguments = (size_t)n;
  v->arguments = malloc(sizeof(char *) * (size_t)n);
  for (int i = 0; i < n; i++)
    v->arguments[i] = strdup(names[i]);
  o->inputs = realloc(o->inputs, sizeof *o->inputs * (o->n_inputs + 1));
  o->inputs[o->n_inputs++] = v;
}

/* Shapes given as tensors whose values are known at import (outputs of
 * fill_constant) are folded: reshape2's ShapeTensor, fill_constant's
 * ShapeTensorList and slice's StartsTensor / EndsTensorList win over the
 * (here wrong) attributes, and no run-time size symbol is made. */
static void test_shape_tensor_folded(void) {
  dy_program *p = dy_test_parse_ok("program {\n"
                                   "  var x : f32[2,6] feed 0\n"
                                   "  var a : i64[1]\n"
                                   "  var b : i64[1]\n"
                                   "  var y : f32[3,4]\n"
                                   "  var f : f32[3,4]\n"
                                   "  var s : f32[2,6]\n"
                                   "  block 0 parent -1 {\n"
                                   "    a = full() {shape = [1], value = 3, dtype = 1}  @m.c:1\n"
                                   "    b = full() {shape = [1], value = 4, dtype = 1}  @m.c:2\n"
                                   "    y = reshape(x) {shape = [3,4]}  @m.c:3\n"
                                   "    f = full() {shape = [3,4], value = 2, dtype = 0}  @m.c:4\n"
                                   "    s = slice(x) {starts = [0], ends = [6], axes = [1], "
                                   "steps = [1]}  @m.c:5\n"
                                   "  }\n"
                                   "  fetch 0 y\n"
                                   "  fetch 1 f\n"
                                   "  fetch 2 s\n"
                                   "}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  uint8_t *m, *pa, *m2;
  size_t mn, pn;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, &err), &err);
  Paddle__Framework__Proto__ProgramDesc *pd =
      paddle__framework__proto__program_desc__unpack(NULL, mn, m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(pd);
  const char *const ab[] = {"a", "b"};
  int done = 0;
  Paddle__Framework__Proto__BlockDesc *blk = pd->blocks[0];
  for (size_t k = 0; k < blk->n_ops; k++) {
    Paddle__Framework__Proto__OpDesc *o = blk->ops[k];
    const char *out = o->n_outputs ? o->outputs[0]->arguments[0] : "";
    for (size_t i = 0; i < o->n_attrs; i++) /* wrong attributes: the tensors win */
      if ((!strcmp(o->attrs[i]->name, "shape") && strcmp(out, "a") && strcmp(out, "b")) ||
          !strcmp(o->attrs[i]->name, "ends") || !strcmp(o->attrs[i]->name, "starts"))
        for (size_t j = 0; j < o->attrs[i]->n_ints; j++)
          o->attrs[i]->ints[j] = 1;
    if (!strcmp(o->type, "reshape2")) {
      add_input_slot(o, "ShapeTensor", 2, ab);
      done++;
    } else if (!strcmp(o->type, "fill_constant") && !strcmp(out, "f")) {
      add_input_slot(o, "ShapeTensorList", 2, ab);
      done++;
    } else if (!strcmp(o->type, "slice")) {
      add_input_slot(o, "StartsTensor", 1, (const char *const[]){"a"}); /* start 3 */
      add_input_slot(o, "EndsTensorList", 1, (const char *const[]){"b"}); /* end 4 */
      done++;
    }
  }
  CU_ASSERT_EQUAL_FATAL(done, 3);
  size_t n2 = paddle__framework__proto__program_desc__get_packed_size(pd);
  m2 = malloc(n2);
  paddle__framework__proto__program_desc__pack(pd, m2);
  paddle__framework__proto__program_desc__free_unpacked(pd, NULL);
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_paddle_load_mem(m2, n2, pa, pn, "folded", NULL, &q, &err), &err);
  static const int64_t want[3][2] = {{3, 4}, {3, 4}, {2, 1}};
  for (int i = 0; i < 3; i++) {
    const dy_type *t = &q->vars[q->fetches[i]]->type;
    CU_ASSERT_EQUAL(t->rank, 2);
    CU_ASSERT_EQUAL(t->shape[0], want[i][0]);
    CU_ASSERT_EQUAL(t->shape[1], want[i][1]);
  }
  CU_ASSERT_EQUAL(q->n_syms, 0); /* nothing at run time */
  dy_program_free(q);
  free(m);
  free(m2);
  free(pa);
  dy_program_free(p);
}

/* gap.c's functions behind the registry's pointers (dy_custom.h). */
static int gap_shape(void *ctx, int n_in, const int *dtypes, const int *ranks,
                     const int64_t *const *shapes, int *out_dtype, int *out_rank,
                     int64_t *out_shape, char *msg, size_t n) {
  (void)ctx, (void)msg, (void)n;
  return dy_custom_gap_shape(n_in, dtypes, ranks, shapes, out_dtype, out_rank, out_shape);
}

static int gap_run(void *ctx, int n_in, const void *const *in, const int *dtypes,
                   const int *ranks, const int64_t *const *shapes, void *out, int out_dtype,
                   int out_rank, const int64_t *out_shape, char *msg, size_t n) {
  (void)ctx, (void)dtypes, (void)out_dtype, (void)msg, (void)n;
  dy_custom_gap_run(n_in, in, ranks, shapes, out, out_rank, out_shape);
  return 0;
}

/* inferdemo_custom_gap with the demo's gap given as C (samples/custom_op/
 * gap.c): registered in process (the executor), then through the CLI's
 * --custom-op (run: the helper process; compile: built into the
 * executable), each against the reference; a kernel that crashes and a
 * shape function that refuses are one-line errors. */
static void test_custom_gap(void) {
  if (!have_data())
    return;
  const char *d = DY_PADDLE_DATA "/inferdemo_custom_gap";
  const char *ref_file = DY_PADDLE_DATA
      "/inferdemo_custom_gap/out_save_infer_model_scale_0.tmp_0_b32.npy";
  dy_error err = {0};
  dy_tensor *x = NULL, *ref = NULL, *got = NULL;
  DY_ASSERT_OK(dy_npy_read(DY_PADDLE_DATA "/inferdemo_custom_gap/in_x_b32.npy", &x, &err), &err);
  DY_ASSERT_OK(dy_npy_read(ref_file, &ref, &err), &err);
  DY_ASSERT_OK(dy_custom_register(&(dy_custom_op){.name = "gap", .shape = gap_shape,
                                                  .run = gap_run}, &err), &err);
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_paddle_load(DY_PADDLE_DATA "/inferdemo_custom_gap/model.pdmodel", NULL, NULL,
                              &p, &err), &err);
  dy_custom_clear();
  int n_custom = 0;
  for (int k = 0; k < p->blocks[0]->n_ops; k++)
    n_custom += p->blocks[0]->ops[k]->kind == DY_OP_CUSTOM;
  CU_ASSERT_EQUAL(n_custom, 1);
  /* unregistered: the kernel's error names the op and the option */
  CU_ASSERT_NOT_EQUAL(dy_executor_run(p, &x, 1, &got, 1, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "custom op 'gap' has no kernel here (dy2stc run "
                                "--custom-op gap=FILE.c)"));
  DY_ASSERT_OK(dy_custom_register(&(dy_custom_op){.name = "gap", .shape = gap_shape,
                                                  .run = gap_run}, &err), &err);
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &got, 1, &err), &err);
  dy_custom_clear();
  CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &ref->type));
  double e = dy_test_scaled_err(got, ref);
  fprintf(stderr, "\n    inferdemo_custom_gap b32 executor (registered) rel err %.3g", e);
  CU_ASSERT(e <= 1e-5);
  dy_tensor_free(got);
  dy_program_free(p);
  /* the CLI: run (helper process) and the executable */
  char out[4096], exe[4096], gap[4096], bad[4096], log[4096];
  tmp_path(out, sizeof out, "gap_out");
  tmp_path(exe, sizeof exe, "gap_exe");
  tmp_path(bad, sizeof bad, "gap_crash.c");
  tmp_path(log, sizeof log, "gap_err.txt");
  snprintf(gap, sizeof gap, "%s/samples/custom_op/gap.c", DY_SOURCE_DIR);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s/r' '%s/e' && '%s' run "
                                   "'%s/model.pdmodel' --custom-op gap='%s' --input "
                                   "x='%s/in_x_b32.npy' --output-dir '%s/r' >/dev/null && '%s' "
                                   "compile '%s/model.pdmodel' --custom-op gap='%s' -o '%s' "
                                   ">/dev/null && '%s' --input x='%s/in_x_b32.npy' --output-dir "
                                   "'%s/e' >/dev/null", out, out, out, DY2STC_PATH, d, gap, d,
                                   out, DY2STC_PATH, d, gap, exe, exe, d, out), 0);
  for (int k = 0; k < 2; k++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s/save_infer_model_scale_0.tmp_0.npy", out, k ? "e" : "r");
    got = NULL;
    DY_ASSERT_OK(dy_npy_read(path, &got, &err), &err);
    CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &ref->type));
    e = dy_test_scaled_err(got, ref);
    fprintf(stderr, "\n    inferdemo_custom_gap b32 %s rel err %.3g", k ? "compiled" : "run", e);
    CU_ASSERT(e <= 1e-5);
    dy_tensor_free(got);
  }
  /* a kernel that crashes, a shape function that refuses: one line, exit 1 */
  static const char crash[] =
      "#include <stdint.h>\n#include <stdlib.h>\n"
      "int dy_custom_gap_shape(int n, const int *dt, const int *rk, const int64_t *const *sh,\n"
      "                        int *od, int *orank, int64_t *os) {\n"
      "  (void)n, (void)dt, (void)rk;\n"
      "  if (getenv(\"GAP_REFUSE\")) return 7;\n"
      "  *od = 0, *orank = 4, os[0] = sh[0][0], os[1] = sh[0][1], os[2] = os[3] = 1;\n"
      "  return 0;\n}\n"
      "void dy_custom_gap_run(int n, const void *const *in, const int *rk,\n"
      "                       const int64_t *const *sh, void *out, int orank, const int64_t *os) {\n"
      "  (void)n, (void)in, (void)rk, (void)sh, (void)out, (void)orank, (void)os;\n"
      "  abort();\n}\n";
  DY_ASSERT_OK(dy_write_file_atomic(bad, (const uint8_t *)crash, sizeof crash - 1, &err), &err);
  for (int k = 0; k < 2; k++) {
    CU_ASSERT_EQUAL(dy_test_sh(NULL, "%s'%s' run '%s/model.pdmodel' --custom-op gap='%s' --input "
                               "x='%s/in_x_b32.npy' --output-dir '%s/r' >/dev/null 2>'%s'; test "
                               "$? -eq 1", k ? "GAP_REFUSE=1 " : "", DY2STC_PATH, d, bad, d, out,
                               log), 0);
    char *text = dy_test_slurp(log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *want = k ? "op 7 (gap -> _generated_var_0): custom op 'gap': its shape function "
                           "refused the inputs: dy_custom_gap_shape returned 7"
                         : "custom op 'gap': its helper process (built from ";
    if (!strstr(text, want))
      fprintf(stderr, "\n  got %s  want %s\n", text, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    CU_ASSERT_PTR_NOT_NULL(strchr(text, '\n'));
    CU_ASSERT_PTR_NULL(strchr(strchr(text, '\n') + 1, '\n')); /* one line */
    free(text);
  }
  dy_tensor_free(x);
  dy_tensor_free(ref);
}

/* The CLI on a .pdmodel: run, check (executor vs compiled) and show. */
static void test_cli(void) {
  if (!have_data())
    return;
  char out[4096];
  tmp_path(out, sizeof out, "cli_out");
  const char *m = DY_PADDLE_DATA "/serving_uci_housing";
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && '%s' run '%s/model.pdmodel' "
                             "--input x='%s/in_x_b2.npy' --output-dir '%s' >/dev/null && '%s' "
                             "compare '%s/fc_0.tmp_1.npy' '%s/out_fc_0.tmp_1_b2.npy' --rtol 1e-5 "
                             "--atol 1e-5 >/dev/null",
                             out, out, DY2STC_PATH, m, m, out, DY2STC_PATH, out, m), 0);
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' check '%s/model.pdmodel' --input x='%s/in_x_b1.npy' "
                             ">/dev/null", DY2STC_PATH, m, m), 0);
  /* H and W are size symbols (x_d2, x_d3); a conv needs them static:
   * compile --shape gives them before the ops are imported */
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_paddle_load(DY_PADDLE_DATA "/ppocrv3_det/model.pdmodel", NULL, NULL, &p,
                                 &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "op 1 (conv2d -> conv2d_211.tmp_0): conv2d: dim 2 of "
                                "input f32[-1,3,x_d2,x_d3] is dynamic"));
  char exe[4096];
  const char *d = DY_PADDLE_DATA "/ppocrv3_det";
  tmp_path(exe, sizeof exe, "cli_ppocr");
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' compile '%s/model.pdmodel' --shape x=1,3,128,160 -o '%s' "
                             ">/dev/null && '%s' --input x='%s/in_x_b1.npy' --output-dir '%s' "
                             ">/dev/null && '%s' compare '%s/sigmoid_0.tmp_0.npy' "
                             "'%s/out_sigmoid_0.tmp_0_b1.npy' --rtol 1 --atol 1e-4 >/dev/null",
                             DY2STC_PATH, d, exe, exe, d, out, DY2STC_PATH, out, d), 0);
  /* export writes the pair; --params reads a params file of another name */
  char pre[4096];
  tmp_path(pre, sizeof pre, "cli_export");
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' export '%s/model.pdmodel' --to paddle -o '%s' >/dev/null "
                             "&& mv '%s.pdiparams' '%s.weights' && '%s' run '%s.pdmodel' --params "
                             "'%s.weights' --input x='%s/in_x_b2.npy' --output-dir '%s' >/dev/null "
                             "&& '%s' compare '%s/fc_0.tmp_1.npy' '%s/out_fc_0.tmp_1_b2.npy' "
                             "--rtol 1e-5 --atol 1e-5 >/dev/null",
                             DY2STC_PATH, m, pre, pre, pre, DY2STC_PATH, pre, pre, m, out,
                             DY2STC_PATH, out, m), 0);
  /* --params is for Paddle models */
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' show '%s/rt.dymodel' --params x 2>/dev/null; test $? -eq 2",
                             DY2STC_PATH, DY_BUILD_DIR), 0);
  /* an unsupported model: one line, exit 1 */
  char log[4096];
  tmp_path(log, sizeof log, "cli_err.txt");
  CU_ASSERT_EQUAL(dy_test_sh(NULL, "'%s' show '%s/inferdemo_custom_gap/model.pdmodel' 2>'%s'; "
                             "test $? -eq 1", DY2STC_PATH, DY_PADDLE_DATA, log), 0);
  char *text = dy_test_slurp(log);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "the custom op 'gap' is not supported"));
  CU_ASSERT_PTR_NOT_NULL(strchr(text, '\n'));
  CU_ASSERT_PTR_NULL(strchr(text, '\n') ? strchr(strchr(text, '\n') + 1, '\n') : NULL);
  free(text);
}

void dy_test_register(void) {
  DY_SUITE("paddle");
  DY_TEST(test_unsupported_models);
  DY_TEST(test_decode_every_pdmodel);
  DY_TEST(test_models_without_refs);
  DY_TEST(test_separate_files);
  DY_TEST(test_corruption_sweep);
  DY_TEST(test_cli);
  DY_TEST(test_int_feed_widths);
  DY_TEST(test_custom_gap);
  DY_TEST(test_round_trip);
  DY_TEST(test_unsqueeze_without_axes);
  DY_TEST(test_uci_housing);
  DY_TEST(test_autoscan_rpc);
  DY_TEST(test_autoscan_unique);
  DY_TEST(test_shape_tensor_bounds);
  DY_TEST(test_shape_tensor_folded);
  DY_TEST(test_dqn_breakout);
  DY_TEST(test_cifar_resnet);
  DY_TEST(test_simple_model);
  DY_TEST(test_mnv3small);
  DY_TEST(test_ppocrv3_det);
  DY_TEST(test_lstnet);
  DY_TEST(test_blazeface);
  DY_TEST(test_blazeface_dense);
}
