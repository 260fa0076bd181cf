/* test_dynsize.c - sizes known only at run time (issue 29, items 1 and 2):
 * an op whose output size depends on values (nonzero, DY_OPF_SETS_SIZE)
 * sets a size symbol when it runs, declared with the bound the op implies;
 * memory is planned at that bound and the actual size travels with the
 * tensor through the later ops, on the executor and in the generated C
 * (the kernel sets dim_<name>, NAME_run writes it out, the executable
 * writes .npy files of the actual size): both paths give the same bytes,
 * the same empty result and the same error at the bound. */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/dynsize_%s", DY_BUILD_DIR, name);
}

/* Eager: the coordinates of the nonzero elements, C order. */
static void test_nonzero_eager(void) {
  float xv[6] = {0, 3, 0, -1, 0, 2};
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 3}, xv);
  dy_tensor *y = dy_nonzero(x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_EQUAL(y->type.dtype, DY_I64);
  CU_ASSERT_EQUAL(y->type.rank, 2);
  CU_ASSERT_EQUAL(y->type.shape[0], 2);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[1], 3);
  const int64_t want[6] = {0, 1, 1, 1, 0, 2}; /* rows [0 1 1], cols [1 0 2] */
  CU_ASSERT(memcmp(y->data, want, sizeof want) == 0);
  dy_tensor_free(y);
  float zv[3] = {0, 0, 0};
  dy_tensor *z = dy_tensor_from_data(DY_F32, 1, (int64_t[]){3}, zv);
  y = dy_nonzero(z);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  CU_ASSERT_EQUAL(y->type.shape[0], 1);
  CU_ASSERT_EQUAL(y->type.shape[1], 0); /* nothing found: an empty result */
  dy_tensor_free(y);
  dy_tensor_free(z);
  dy_tensor_free(x);
}

/* y = Transpose(NonZero(x)) + 1 with x f32 [N, 4] (N a dim_param): the
 * count is a size symbol the later ops carry. */
static void write_nonzero_model(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 4}, "N");
  ob_init_i64(m, "one", 0, NULL, (int64_t[]){1});
  ob_node(m, "NonZero", "nz", 1, (const char *[]){"x"}, 1, (const char *[]){"idx"});
  Onnx__NodeProto *n = ob_node(m, "Transpose", "t", 1, (const char *[]){"idx"}, 1,
                               (const char *[]){"idx_t"});
  ob_attr_ints(m, n, "perm", 2, (int64_t[]){1, 0});
  ob_node(m, "Add", "add", 2, (const char *[]){"idx_t", "one"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static dy_status run_nonzero(const dy_program *p, int64_t rows, const float *xv, dy_tensor **y,
                             dy_error *err) {
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){rows, 4}, xv);
  dy_status s = dy_executor_run(p, &x, 1, y, 1, err);
  dy_tensor_free(x);
  return s;
}

static void test_nonzero_onnx_executor(void) {
  char path[4096];
  tmp_path(path, sizeof path, "nonzero.onnx");
  write_nonzero_model(path);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  /* the symbol, declared with the bound NonZero implies: 2 x N x 4 at N's
   * bound (the batch's default, 64) */
  int sym = dy_sym_id("nonzero");
  const dy_sym_decl *dc = dy_program_sym(p, sym);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dc);
  CU_ASSERT_EQUAL(dc->max, 4 * DY_DEFAULT_MAX_BATCH);
  const dy_type *yt = &p->vars[p->fetches[0]]->type;
  CU_ASSERT_EQUAL(yt->rank, 2);
  CU_ASSERT_EQUAL(dy_dim_single_sym(yt->shape[0]), sym);
  CU_ASSERT_EQUAL(yt->shape[1], 2);
  CU_ASSERT_EQUAL(dy_program_dim_bound(p, yt->shape[0]), 4 * DY_DEFAULT_MAX_BATCH);
  /* two runs, two counts: the size travels through transpose and add */
  float a[8] = {0, 1, 0, 0, 2, 0, 0, 3}, b[12] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
  dy_tensor *y = NULL;
  DY_ASSERT_OK(run_nonzero(p, 2, a, &y, &err), &err);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[0], 3);
  CU_ASSERT_EQUAL(y->type.shape[1], 2);
  const int64_t wa[6] = {1, 2, 2, 1, 2, 4};
  CU_ASSERT(memcmp(y->data, wa, sizeof wa) == 0);
  dy_tensor_free(y);
  DY_ASSERT_OK(run_nonzero(p, 3, b, &y, &err), &err);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[0], 3);
  const int64_t wb[6] = {1, 1, 1, 2, 3, 4};
  CU_ASSERT(memcmp(y->data, wb, sizeof wb) == 0);
  dy_tensor_free(y);

  /* a smaller bound from --max-dim: a count above it is a clear error */
  DY_ASSERT_OK(dy_program_bound_sym(p, "nonzero", 2, &err), &err);
  CU_ASSERT_EQUAL(run_nonzero(p, 2, a, &y, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'nonzero' is 3 at run time, above its bound 2"));
  dy_program_free(p);
}

/* The CLI: run writes the actual size. */
static void test_nonzero_cli(void) {
  char path[4096], npy[4096], log[4096], dir[4096];
  tmp_path(path, sizeof path, "nonzero_cli.onnx");
  tmp_path(npy, sizeof npy, "nonzero_x.npy");
  tmp_path(log, sizeof log, "nonzero_cli.log");
  tmp_path(dir, sizeof dir, "nonzero_out");
  write_nonzero_model(path);
  dy_test_write_f32(npy, 2, (int64_t[]){2, 4}, (float[]){0, 1, 0, 0, 2, 0, 0, 3});
  CU_ASSERT_EQUAL(dy_test_sh(log, "rm -rf %s && mkdir -p %s && %s run %s --input x=%s "
                             "--output-dir %s", dir, dir, DY2STC_PATH, path, npy, dir), 0);
  dy_tensor *y = NULL;
  char out[8192];
  snprintf(out, sizeof out, "%s/y.npy", dir);
  dy_error err = {0};
  if (dy_npy_read(out, &y, &err) == DY_OK) {
    CU_ASSERT_EQUAL(y->type.shape[0], 3);
    CU_ASSERT_EQUAL(y->type.shape[1], 2);
    dy_tensor_free(y);
  } else {
    fprintf(stderr, "\n  %s\n", err.msg);
    CU_FAIL("run wrote no y.npy");
  }
}

/* ---- the generated code: compiled executables against the executor ---- */

#define SAN_FLAGS "-fsanitize=address,undefined -fno-sanitize-recover=all"

/* Compile model (with extra options) to exe, under ASan and UBSan. */
static bool compile_exe(const char *model, const char *extra, const char *exe) {
  char log[4096];
  tmp_path(log, sizeof log, "compile.log");
  int rc = dy_test_sh(log, "%s compile %s %s --cflags '" SAN_FLAGS "' -o %s", DY2STC_PATH, model,
                      extra, exe);
  if (rc != 0) {
    char *t = dy_test_slurp(log);
    fprintf(stderr, "\n  compile %s failed: %s\n", model, t ? t : "");
    free(t);
  }
  return rc == 0;
}

/* Run exe on the inputs x[0..n_in) (files in input order) and the
 * executor on p: exit 0 and the same first output 'y' (dtype, shape, bytes) on
 * both; returns y's dim count_dim (the count: nonzero [rank, n], nms
 * [n, 3]), -1 on a failure. */
static int64_t same_on_both(const dy_program *p, const char *exe, const char *tag, dy_tensor **x,
                            int n_in, int count_dim) {
  char npy[4096], files[8192] = "", dir[4096], log[4096], out[8192];
  dy_error err = {0};
  for (int i = 0; i < n_in; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s_x%d.npy", tag, i);
    tmp_path(npy, sizeof npy, name);
    CU_ASSERT_EQUAL_FATAL(dy_npy_write(npy, x[i], &err), DY_OK);
    snprintf(files + strlen(files), sizeof files - strlen(files), " %s", npy);
  }
  tmp_path(dir, sizeof dir, tag);
  strcat(dir, "_out");
  tmp_path(log, sizeof log, tag);
  strcat(log, ".log");
  int rc = dy_test_sh(log, "rm -rf %s && mkdir -p %s && %s%s --output-dir %s", dir, dir, exe,
                      files, dir);
  CU_ASSERT_EQUAL(rc, 0);
  dy_tensor *outs[4] = {NULL}, *want, *got = NULL;
  CU_ASSERT_FATAL(p->n_fetches <= 4);
  DY_ASSERT_OK(dy_executor_run(p, x, n_in, outs, p->n_fetches, &err), &err);
  want = outs[0];
  for (int i = 1; i < p->n_fetches; i++)
    dy_tensor_free(outs[i]);
  snprintf(out, sizeof out, "%s/y.npy", dir);
  if (rc != 0 || dy_npy_read(out, &got, &err) != DY_OK) {
    char *t = dy_test_slurp(log);
    fprintf(stderr, "\n  %s: %s %s\n", tag, err.msg, t ? t : "");
    free(t);
    CU_FAIL("the executable wrote no y.npy");
    dy_tensor_free(want);
    return -1;
  }
  int64_t n = -1;
  CU_ASSERT_EQUAL(got->type.dtype, want->type.dtype);
  CU_ASSERT_EQUAL(got->type.rank, want->type.rank);
  if (got->type.rank == want->type.rank && got->type.dtype == want->type.dtype) {
    bool same = true;
    for (int d = 0; d < got->type.rank; d++)
      same &= got->type.shape[d] == want->type.shape[d];
    CU_ASSERT(same);
    CU_ASSERT(same && got->nbytes == want->nbytes &&
              memcmp(got->data, want->data, want->nbytes) == 0);
    if (same)
      n = want->type.shape[count_dim];
  }
  dy_tensor_free(want);
  dy_tensor_free(got);
  return n;
}

/* The model write_fn writes, at NAME.onnx (path), loaded; exe and exe2
 * (4096 bytes each) get NAME_bin and NAME2_bin. */
static dy_program *write_and_load(void (*write_fn)(const char *), const char *name, char *path,
                                  char *exe, char *exe2) {
  char f[64];
  snprintf(f, sizeof f, "%s.onnx", name);
  tmp_path(path, 4096, f);
  snprintf(f, sizeof f, "%s_bin", name);
  tmp_path(exe, 4096, f);
  snprintf(f, sizeof f, "%s2_bin", name);
  tmp_path(exe2, 4096, f);
  write_fn(path);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  return p;
}

/* Transpose(NonZero(x)) + 1 compiled: counts 3 and 2 at two batches, an
 * empty result, the same bytes as the executor; at a smaller bound
 * (--max-dim nonzero=2) the executable and the executor stop with the same
 * words. */
static void test_nonzero_compiled(void) {
  char path[4096], exe[4096], exe2[4096], log[4096], npy[4096], cmd[16384];
  dy_error err = {0};
  dy_program *p = write_and_load(write_nonzero_model, "nonzero_c", path, exe, exe2);
  CU_ASSERT_FATAL(compile_exe(path, "", exe));
  float a[8] = {0, 1, 0, 0, 2, 0, 0, 3}, b[12] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
  float z[12] = {0, 0, 0, 0, -0.0f, 0, 0, 0, 0, 0, 0, 0};
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 4}, a);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzc_a", &x, 1, 0), 3);
  dy_tensor_free(x);
  x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){3, 4}, b);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzc_b", &x, 1, 0), 3);
  dy_tensor_free(x);
  x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){3, 4}, z);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzc_z", &x, 1, 0), 0); /* nothing found: [0, 2] */
  dy_tensor_free(x);

  /* the bound reached: one line naming the symbol, on both paths */
  CU_ASSERT_FATAL(compile_exe(path, "--max-dim nonzero=2", exe2));
  tmp_path(npy, sizeof npy, "nzc_a_x0.npy");
  tmp_path(log, sizeof log, "nzc_bound.log");
  snprintf(cmd, sizeof cmd, "%s --input x=%s --output-dir %s.out", exe2, npy, exe2);
  dy_test_expect_cli(log, 1, "the size symbol 'nonzero' is 3 at run time, above its bound 2",
                     cmd);
  DY_ASSERT_OK(dy_program_bound_sym(p, "nonzero", 2, &err), &err);
  x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){2, 4}, a);
  dy_tensor *y = NULL;
  CU_ASSERT_EQUAL(dy_executor_run(p, &x, 1, &y, 1, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the size symbol 'nonzero' is 3 at run time, above "
                                         "its bound 2"));
  dy_tensor_free(x);
  dy_program_free(p);
}

/* NonZero as the model's output, straight from its kernel into the
 * caller's buffer: x of rank 1 (i64) and of rank 3 (bool), static shapes
 * (the count is the model's only size symbol). */
static void write_nonzero_out_model(const char *path, int elem, int rank, const int64_t *shape) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", elem, rank, shape, NULL);
  ob_node(m, "NonZero", "nz", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void test_nonzero_compiled_ranks(void) {
  char path[4096], exe[4096];
  dy_error err = {0};
  /* rank 1, i64 */
  tmp_path(path, sizeof path, "nonzero_r1.onnx");
  tmp_path(exe, sizeof exe, "nonzero_r1_bin");
  write_nonzero_out_model(path, OB_I64, 1, (int64_t[]){6});
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  CU_ASSERT_FATAL(compile_exe(path, "", exe));
  int64_t v[6] = {0, 7, 0, -2, 3, 0};
  dy_tensor *x = dy_tensor_from_data(DY_I64, 1, (int64_t[]){6}, v);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzr1", &x, 1, 1), 3);
  memset(v, 0, sizeof v);
  memcpy(x->data, v, sizeof v);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzr1_z", &x, 1, 1), 0);
  dy_tensor_free(x);
  dy_program_free(p);
  /* rank 3, bool: every element set reaches the bound exactly */
  tmp_path(path, sizeof path, "nonzero_r3.onnx");
  tmp_path(exe, sizeof exe, "nonzero_r3_bin");
  write_nonzero_out_model(path, OB_BOOL, 3, (int64_t[]){2, 3, 2});
  p = NULL;
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  CU_ASSERT_FATAL(compile_exe(path, "", exe));
  bool bv[12] = {1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1};
  x = dy_tensor_from_data(DY_BOOL, 3, (int64_t[]){2, 3, 2}, bv);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzr3", &x, 1, 1), 6);
  for (int i = 0; i < 12; i++)
    bv[i] = true;
  memcpy(x->data, bv, sizeof bv);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nzr3_all", &x, 1, 1), 12);
  dy_tensor_free(x);
  dy_program_free(p);
}

/* NonMaxSuppression on boxes [N, 6, 4] and scores [N, 1, 6] (N a
 * dim_param), at most 3 boxes per class, IoU 0.5, scores above 0 (ONNX's
 * suppress_by_IOU data): the count is the size symbol 'nms', bounded by
 * N * 1 * 3. */
static void write_nms_model(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "boxes", OB_F32, 3, (int64_t[]){-1, 6, 4}, "N");
  ob_input(m, "scores", OB_F32, 3, (int64_t[]){-1, 1, 6}, "N");
  ob_init_i64(m, "max", 1, (int64_t[]){1}, (int64_t[]){3});
  ob_init_f32(m, "iou", 1, (int64_t[]){1}, (float[]){0.5f});
  ob_init_f32(m, "thr", 1, (int64_t[]){1}, (float[]){0.0f});
  ob_node(m, "NonMaxSuppression", "nms", 5,
          (const char *[]){"boxes", "scores", "max", "iou", "thr"}, 1, (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static const float nms_boxes[24] = {0, 0, 1, 1,     0, 0.1f, 1, 1.1f,   0, -0.1f, 1, 0.9f,
                                    0, 10, 1, 11,   0, 10.1f, 1, 11.1f, 0, 100, 1, 101};

/* The executor keeps ONNX's boxes; the compiled executable (ASan/UBSan)
 * the same bytes at one and two batches and for no box above the
 * threshold; with --max-dim nms=2 both stop at the count 3 in the same
 * words. */
static void test_nms_compiled(void) {
  char path[4096], exe[4096], exe2[4096], log[4096], cmd[20000];
  dy_error err = {0};
  dy_program *p = write_and_load(write_nms_model, "nms", path, exe, exe2);
  const dy_sym_decl *dc = dy_program_sym(p, dy_sym_id("nms"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(dc);
  CU_ASSERT_EQUAL(dc->max, 3 * DY_DEFAULT_MAX_BATCH); /* N * C * min(3, 6) */
  float b2[48], s2[12] = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f,
                          0.3f, 0.5f, 0.95f, 0.6f, 0.75f, 0.9f};
  memcpy(b2, nms_boxes, sizeof nms_boxes);
  memcpy(b2 + 24, nms_boxes, sizeof nms_boxes);
  dy_tensor *x[2] = {dy_tensor_from_data(DY_F32, 3, (int64_t[]){1, 6, 4}, b2),
                     dy_tensor_from_data(DY_F32, 3, (int64_t[]){1, 1, 6}, s2)};
  dy_tensor *y = NULL;
  DY_ASSERT_OK(dy_executor_run(p, x, 2, &y, 1, &err), &err);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[0], 3);
  const int64_t want1[9] = {0, 0, 3, 0, 0, 0, 0, 0, 5};
  CU_ASSERT(memcmp(y->data, want1, sizeof want1) == 0);
  dy_tensor_free(y);
  CU_ASSERT_FATAL(compile_exe(path, "", exe));
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nms1", x, 2, 0), 3);
  dy_tensor_free(x[0]);
  dy_tensor_free(x[1]);
  /* two batches: the second's scores reversed keep boxes 2, 5, 4 */
  x[0] = dy_tensor_from_data(DY_F32, 3, (int64_t[]){2, 6, 4}, b2);
  x[1] = dy_tensor_from_data(DY_F32, 3, (int64_t[]){2, 1, 6}, s2);
  DY_ASSERT_OK(dy_executor_run(p, x, 2, &y, 1, &err), &err);
  CU_ASSERT_EQUAL_FATAL(y->type.shape[0], 6);
  const int64_t want2[9] = {1, 0, 2, 1, 0, 5, 1, 0, 4};
  CU_ASSERT(memcmp((int64_t *)y->data + 9, want2, sizeof want2) == 0);
  dy_tensor_free(y);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nms2", x, 2, 0), 6);
  /* no score above the threshold: an empty [0, 3] */
  memset(x[1]->data, 0, x[1]->nbytes);
  CU_ASSERT_EQUAL(same_on_both(p, exe, "nms0", x, 2, 0), 0);
  dy_tensor_free(x[0]);
  dy_tensor_free(x[1]);

  /* the bound reached: one line naming the symbol, on both paths */
  CU_ASSERT_FATAL(compile_exe(path, "--max-dim nms=2", exe2));
  char bx[4096], sx[4096];
  tmp_path(bx, sizeof bx, "nms1_x0.npy");
  tmp_path(sx, sizeof sx, "nms1_x1.npy");
  tmp_path(log, sizeof log, "nms_bound.log");
  snprintf(cmd, sizeof cmd, "%s %s %s --output-dir %s.out", exe2, bx, sx, exe2);
  dy_test_expect_cli(log, 1, "the size symbol 'nms' is 3 at run time, above its bound 2", cmd);
  DY_ASSERT_OK(dy_program_bound_sym(p, "nms", 2, &err), &err);
  x[0] = dy_tensor_from_data(DY_F32, 3, (int64_t[]){1, 6, 4}, b2);
  x[1] = dy_tensor_from_data(DY_F32, 3, (int64_t[]){1, 1, 6}, s2);
  CU_ASSERT_EQUAL(dy_executor_run(p, x, 2, &y, 1, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the size symbol 'nms' is 3 at run time, above its "
                                         "bound 2"));
  dy_tensor_free(x[0]);
  dy_tensor_free(x[1]);
  dy_program_free(p);
}

/* y = Range(start, Gather(Shape(x), 1), delta) with x f32 [1, seq] (a GPT
 * block's positions: torch.arange(seq)), start and delta initializers. */
static int64_t range_start = 0, range_delta = 1;
static bool range_batch = true; /* a batch input b besides x: seq is a symbol of its own */
static void write_range_model(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){1, -1}, "seq");
  if (range_batch)
    ob_input(m, "b", OB_F32, 1, (int64_t[]){-1}, "batch");
  ob_init_i64(m, "start", 0, NULL, (int64_t[]){range_start});
  ob_init_i64(m, "delta", 0, NULL, (int64_t[]){range_delta});
  ob_init_i64(m, "one", 0, NULL, (int64_t[]){1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Gather", "g", 2, (const char *[]){"s", "one"}, 1, (const char *[]){"lim"});
  ob_node(m, "Range", "r", 3, (const char *[]){"start", "lim", "delta"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  if (range_batch) {
    ob_node(m, "Neg", "neg", 1, (const char *[]){"b"}, 1, (const char *[]){"nb"});
    ob_output(m, "nb", OB_F32);
  }
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

/* Range to a dynamic size: arange(seq) and arange(-2, seq) (length seq + 2)
 * at seq 3 and 5 on the executor (ONNX's values) and compiled (the same
 * bytes); a length that is no size expression (delta 2: ceil(seq / 2)) is
 * refused naming the limit, and so is an output of batch + 2 by compile. */
static void test_range_of_shape_value(void) {
  char path[4096], exe[4096], exe2[4096], tag[32];
  dy_error err = {0};
  for (int v = 0; v < 2; v++) {
    range_start = v ? -2 : 0;
    range_delta = 1;
    dy_program *p = write_and_load(write_range_model, v ? "range_m2" : "range_0", path, exe, exe2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_FATAL(compile_exe(path, "", exe));
    for (int64_t seq = 3; seq <= 5; seq += 2) {
      float xv[5] = {0}, bv[2] = {1, 2};
      dy_tensor *x[2] = {dy_tensor_from_data(DY_F32, 2, (int64_t[]){1, seq}, xv),
                         dy_tensor_from_data(DY_F32, 1, (int64_t[]){2}, bv)};
      dy_tensor *y[2] = {NULL, NULL};
      DY_ASSERT_OK(dy_executor_run(p, x, 2, y, 2, &err), &err);
      CU_ASSERT_EQUAL_FATAL(y[0]->type.rank, 1);
      CU_ASSERT_EQUAL_FATAL(y[0]->type.shape[0], seq - range_start);
      for (int64_t i = 0; i < seq - range_start; i++)
        CU_ASSERT_EQUAL(((int64_t *)y[0]->data)[i], range_start + i);
      dy_tensor_free(y[0]);
      dy_tensor_free(y[1]);
      snprintf(tag, sizeof tag, "range%d_%lld", v, (long long)seq);
      CU_ASSERT_EQUAL(same_on_both(p, exe, tag, x, 2, 0), seq - range_start);
      dy_tensor_free(x[0]);
      dy_tensor_free(x[1]);
    }
    dy_program_free(p);
  }
  range_start = 0;
  range_delta = 2;
  tmp_path(path, sizeof path, "range_d2.onnx");
  write_range_model(path);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "dynamic size 'lim': its length is not a size",
                     "(Range)");
  /* seq the only symbol (so the batch): NAME.h gives every dynamic dim
   * of an output as the batch, so an output of batch + 2 is refused by
   * the compiler (it was written at batch elements: a heap overflow) */
  range_start = -2;
  range_delta = 1;
  range_batch = false;
  tmp_path(path, sizeof path, "range_batch.onnx");
  write_range_model(path);
  range_batch = true;
  char log[4096], cmd[16384];
  tmp_path(log, sizeof log, "range_batch.log");
  snprintf(cmd, sizeof cmd, "%s compile %s -o %s.bin", DY2STC_PATH, path, path);
  dy_test_expect_cli(log, 1, "output 'y': dim 0 is batch+2, not the batch itself", cmd);
  /* and 2*batch: a concat of the input with itself along the batch (the
   * executable wrote the .npy of batch rows from a buffer of batch rows,
   * the kernel 2*batch into it) */
  tmp_path(path, sizeof path, "concat_batch.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){-1, 3}, "N");
  Onnx__NodeProto *nd = ob_node(m, "Concat", "cat", 2, (const char *[]){"x", "x"}, 1,
                                (const char *[]){"y"});
  ob_attr_i(m, nd, "axis", 0);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  tmp_path(log, sizeof log, "concat_batch.log");
  snprintf(cmd, sizeof cmd, "%s compile %s -o %s.bin", DY2STC_PATH, path, path);
  dy_test_expect_cli(log, 1, "output 'y': dim 0 is 2*batch, not the batch itself", cmd);
}

/* y = TopK(x, k) values, x f32 [5], k a graph input i64 [1] (bound only
 * by x's axis); Compress(x2, cond) the same way with cond bool [4]. */
static void write_topk_model(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){5}, NULL);
  ob_input(m, "k", OB_I64, 1, (int64_t[]){1}, NULL);
  ob_node(m, "TopK", "topk", 2, (const char *[]){"x", "k"}, 2, (const char *[]){"y", "i"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

static void write_compress_model(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){4, 2}, NULL);
  ob_input(m, "cond", OB_BOOL, 1, (int64_t[]){4}, NULL);
  Onnx__NodeProto *n = ob_node(m, "Compress", "cmp", 2, (const char *[]){"x", "cond"}, 1,
                               (const char *[]){"y"});
  ob_attr_i(m, n, "axis", 0);
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

/* TopK with a run-time K: the K best, best first, at K 2, 5 and 0 on the
 * executor and compiled (same bytes); K 6 > 5 an index error on both
 * paths. Compress with a run-time condition: the rows kept, none kept. */
static void test_topk_compress_run_time(void) {
  char path[4096], exe[4096], exe2[4096], log[4096], cmd[16384], npy[4096];
  dy_error err = {0};
  dy_program *p = write_and_load(write_topk_model, "topk_k", path, exe, exe2);
  CU_ASSERT_FATAL(compile_exe(path, "", exe));
  float xv[5] = {3, -1, 7, 0.5f, 7};
  const float want[5] = {7, 7, 3, 0.5f, -1};
  int64_t ks[3] = {2, 5, 0};
  for (int t = 0; t < 3; t++) {
    dy_tensor *x[2] = {dy_tensor_from_data(DY_F32, 1, (int64_t[]){5}, xv),
                       dy_tensor_from_data(DY_I64, 1, (int64_t[]){1}, &ks[t])};
    dy_tensor *y = NULL;
    DY_ASSERT_OK(dy_executor_run(p, x, 2, &y, 1, &err), &err);
    CU_ASSERT_EQUAL_FATAL(y->type.shape[0], ks[t]);
    CU_ASSERT(memcmp(y->data, want, (size_t)ks[t] * sizeof(float)) == 0);
    dy_tensor_free(y);
    char tag[32];
    snprintf(tag, sizeof tag, "topk_%d", t);
    CU_ASSERT_EQUAL(same_on_both(p, exe, tag, x, 2, 0), ks[t]);
    dy_tensor_free(x[0]);
    dy_tensor_free(x[1]);
  }
  int64_t k6 = 6;
  dy_tensor *x[2] = {dy_tensor_from_data(DY_F32, 1, (int64_t[]){5}, xv),
                     dy_tensor_from_data(DY_I64, 1, (int64_t[]){1}, &k6)};
  dy_tensor *y = NULL;
  CU_ASSERT_NOT_EQUAL(dy_executor_run(p, x, 2, &y, 1, &err), DY_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "index 5"));
  tmp_path(npy, sizeof npy, "topk_k6.npy");
  CU_ASSERT_EQUAL(dy_npy_write(npy, x[1], &err), DY_OK);
  tmp_path(log, sizeof log, "topk_k6.log");
  snprintf(cmd, sizeof cmd, "%s %s/dynsize_topk_0_x0.npy %s --output-dir %s.out", exe,
           DY_BUILD_DIR, npy, exe);
  dy_test_expect_cli(log, 1, "index", cmd);
  dy_tensor_free(x[0]);
  dy_tensor_free(x[1]);
  dy_program_free(p);

  p = write_and_load(write_compress_model, "compress_c", path, exe, exe2);
  CU_ASSERT_FATAL(compile_exe(path, "", exe));
  float cx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  bool conds[2][4] = {{false, true, false, true}, {false, false, false, false}};
  for (int t = 0; t < 2; t++) {
    dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 2, (int64_t[]){4, 2}, cx),
                        dy_tensor_from_data(DY_BOOL, 1, (int64_t[]){4}, conds[t])};
    dy_tensor *out = NULL;
    DY_ASSERT_OK(dy_executor_run(p, in, 2, &out, 1, &err), &err);
    CU_ASSERT_EQUAL_FATAL(out->type.shape[0], t ? 0 : 2);
    if (!t)
      CU_ASSERT(memcmp(out->data, (float[]){2, 3, 6, 7}, 4 * sizeof(float)) == 0);
    dy_tensor_free(out);
    char tag[32];
    snprintf(tag, sizeof tag, "compress_%d", t);
    CU_ASSERT_EQUAL(same_on_both(p, exe, tag, in, 2, 0), t ? 0 : 2);
    dy_tensor_free(in[0]);
    dy_tensor_free(in[1]);
  }
  dy_program_free(p);
}

/* Unique(x), x f32 [6] a graph input, sorted or not: all four outputs. */
static int unique_sorted = 1;
static int64_t unique_len = 6;
static void write_unique_model(const char *path) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 1, (int64_t[]){unique_len}, NULL);
  Onnx__NodeProto *n = ob_node(m, "Unique", "u", 1, (const char *[]){"x"}, 4,
                               (const char *[]){"y", "idx", "inv", "cnt"});
  ob_attr_i(m, n, "sorted", unique_sorted);
  ob_output(m, "y", OB_F32);
  ob_output(m, "idx", OB_I64);
  ob_output(m, "inv", OB_I64);
  ob_output(m, "cnt", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
}

/* Unique at run time: ONNX's four outputs for x = [2, 1, 2, 3, 1, 2]
 * sorted and in order of appearance, and all equal (one unique value), on
 * the executor; compiled, the same Y bytes; a tensor too large for the
 * pairwise comparison refused. */
static void test_unique_run_time(void) {
  char path[4096], exe[4096], exe2[4096];
  dy_error err = {0};
  static const float xs[2][6] = {{2, 1, 2, 3, 1, 2}, {4, 4, 4, 4, 4, 4}};
  /* per sorted (1, 0) and data: count, y, idx, inv, cnt */
  static const struct {
    int64_t n;
    float y[3];
    int64_t idx[3], inv[6], cnt[3];
  } want[2][2] = {{{3, {1, 2, 3}, {1, 0, 3}, {1, 0, 1, 2, 0, 1}, {2, 3, 1}},
                   {1, {4}, {0}, {0, 0, 0, 0, 0, 0}, {6}}},
                  {{3, {2, 1, 3}, {0, 1, 3}, {0, 1, 0, 2, 1, 0}, {3, 2, 1}},
                   {1, {4}, {0}, {0, 0, 0, 0, 0, 0}, {6}}}};
  for (int srt = 0; srt < 2; srt++) {
    unique_sorted = 1 - srt;
    dy_program *p = write_and_load(write_unique_model, srt ? "unique_u" : "unique_s", path, exe,
                                   exe2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_FATAL(compile_exe(path, "", exe));
    for (int t = 0; t < 2; t++) {
      dy_tensor *x = dy_tensor_from_data(DY_F32, 1, (int64_t[]){6}, (void *)xs[t]);
      dy_tensor *y[4] = {NULL};
      DY_ASSERT_OK(dy_executor_run(p, &x, 1, y, 4, &err), &err);
      int64_t n = want[srt][t].n;
      CU_ASSERT_EQUAL_FATAL(y[0]->type.shape[0], n);
      CU_ASSERT(memcmp(y[0]->data, want[srt][t].y, (size_t)n * sizeof(float)) == 0);
      CU_ASSERT(memcmp(y[1]->data, want[srt][t].idx, (size_t)n * sizeof(int64_t)) == 0);
      CU_ASSERT(memcmp(y[2]->data, want[srt][t].inv, 6 * sizeof(int64_t)) == 0);
      CU_ASSERT(memcmp(y[3]->data, want[srt][t].cnt, (size_t)n * sizeof(int64_t)) == 0);
      for (int i = 0; i < 4; i++)
        dy_tensor_free(y[i]);
      char tag[32];
      snprintf(tag, sizeof tag, "unique_%d_%d", srt, t);
      CU_ASSERT_EQUAL(same_on_both(p, exe, tag, &x, 1, 0), n);
      dy_tensor_free(x);
    }
    dy_program_free(p);
  }
  /* the pairwise comparison is bounded: 5000^2 elements refused */
  unique_len = 5000;
  tmp_path(path, sizeof path, "unique_big.onnx");
  write_unique_model(path);
  unique_len = 6;
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "Unique of 5000 slices of 1 elements",
                     "limited to 2^24");
}

void dy_test_register(void) {
  DY_SUITE("dynsize");
  DY_TEST(test_nonzero_eager);
  DY_TEST(test_nonzero_onnx_executor);
  DY_TEST(test_nonzero_cli);
  DY_TEST(test_nonzero_compiled);
  DY_TEST(test_nonzero_compiled_ranks);
  DY_TEST(test_nms_compiled);
  DY_TEST(test_range_of_shape_value);
  DY_TEST(test_topk_compress_run_time);
  DY_TEST(test_unique_run_time);
}
