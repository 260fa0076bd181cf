/* test_dynsize.c - sizes known only at run time (issue 29, items 1 and 2):
 * an op whose output size depends on values (nonzero, DY_OPF_SETS_SIZE)
 * sets a size symbol when it runs, declared with the bound the op implies;
 * memory is planned at that bound and the actual size travels with the
 * tensor through the later ops on the executor. The generated C refuses
 * such a Program with one line naming the symbol (not compiled yet). */
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

/* The CLI: run writes the actual size; compile refuses in one line that
 * names the symbol. */
static void test_nonzero_cli(void) {
  char path[4096], npy[4096], log[4096], dir[4096], cmd[16384];
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
  snprintf(cmd, sizeof cmd, "%s compile %s -o %s/nz_bin", DY2STC_PATH, path, dir);
  dy_test_expect_cli(log, 1, "'nonzero' is known only at run time", cmd);
}

/* Range's limit from a dynamic dim (a GPT block's positions): still
 * refused, but the message names the value (it said '' before). */
static void test_range_of_shape_value_names_it(void) {
  char path[4096];
  tmp_path(path, sizeof path, "range_seq.onnx");
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 2, (int64_t[]){1, -1}, "seq");
  ob_init_i64(m, "zero", 0, NULL, (int64_t[]){0});
  ob_init_i64(m, "one", 0, NULL, (int64_t[]){1});
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  ob_node(m, "Gather", "g", 2, (const char *[]){"s", "one"}, 1, (const char *[]){"lim"});
  ob_node(m, "Range", "r", 3, (const char *[]){"zero", "lim", "one"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_I64);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  dy_test_onnx_error(path, DY_STATUS_UNSUPPORTED, "'lim' depends on a dynamic size", "(Range)");
}

void dy_test_register(void) {
  DY_SUITE("dynsize");
  DY_TEST(test_nonzero_eager);
  DY_TEST(test_nonzero_onnx_executor);
  DY_TEST(test_nonzero_cli);
  DY_TEST(test_range_of_shape_value_names_it);
}
