/* test_det.c - the detection heads (ir/ops_det.def): multiclass_nms on
 * hand-computed cases, on the executor and the compiled executable (the
 * same rows on both, a count known only at run time):
 *   - suppression by overlap > nms_threshold, the background class
 *     skipped, score_threshold, ties in score (lower box first), and
 *     keep_top_k's cut with a tie between classes (the lower class stays);
 *     a second batch with no box above the threshold (rois_num 0);
 *   - normalized 0 (+1 on widths and heights) and nms_eta < 1 (the
 *     threshold shrinks after each kept box);
 *   - nothing kept: multiclass_nms3's empty result, and multiclass_nms's
 *     one row of -1s (Paddle's [[-1]]);
 *   - a count above a --max-dim bound: the same one line from both.
 * The expected rows were worked out by hand from Paddle's kernel
 * (multiclass_nms3_kernel.cc: NMSFast, JaccardOverlap, keep_top_k). */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

static void tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/det_%s", DY_BUILD_DIR, name);
}

/* A Program of one multiclass_nms on boxes [B, 4, 4], scores [B, 3, 4]
 * with the attributes attrs, its three outputs fetched. */
static dy_program *nms_program(const char *attrs) {
  char text[2048];
  snprintf(text, sizeof text,
           "program {\n  sym rows max 8\n"
           "  var boxes : f32[-1,4,4] feed 0\n  var scores : f32[-1,3,4] feed 1\n"
           "  var out : f32[rows,6]\n  var index : i32[rows,1]\n  var rois : i32[-1]\n"
           "  block 0 parent -1 {\n"
           "    out, index, rois = multiclass_nms(boxes, scores) {%s, size_sym = \"rows\"}\n"
           "  }\n  fetch 0 out\n  fetch 1 index\n  fetch 2 rois\n}\n", attrs);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  if (p)
    DY_ASSERT_OK(dy_verify(p, &err), &err);
  return p;
}

static void compile_to(const dy_program *p, const char *name, char *exe) {
  char model[4096];
  dy_error err = {0};
  snprintf(exe, 4096, "%s/det_%s_exe", DY_BUILD_DIR, name);
  tmp_path(model, sizeof model, name);
  strcat(model, ".dymodel");
  DY_ASSERT_OK(dy_model_save(p, model, &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' --max-batch 2 >/dev/null",
                                   DY2STC_PATH, model, exe), 0);
}

/* got's shape is [n, width] (rois: [n]) and its values are want's */
static void expect(const dy_tensor *got, const char *what, int64_t n, int width,
                   const double *want) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  if (got->type.shape[0] != n)
    fprintf(stderr, "\n  %s: %lld rows, want %lld", what, (long long)got->type.shape[0], (long long)n);
  CU_ASSERT_EQUAL_FATAL(got->type.shape[0], n);
  if (width > 0)
    CU_ASSERT_EQUAL_FATAL(got->type.shape[1], width);
  int64_t k = n * (width > 0 ? width : 1);
  for (int64_t i = 0; i < k; i++) {
    double v = got->type.dtype == DY_F32 ? ((const float *)got->data)[i]
                                          : ((const int32_t *)got->data)[i];
    if (v != (double)(float)want[i])
      fprintf(stderr, "\n  %s[%lld] is %g, want %g", what, (long long)i, v, want[i]);
    CU_ASSERT_EQUAL(v, (double)(float)want[i]);
  }
}

/* Both paths on boxes / scores (batch b): out, index and rois as wanted. */
static void check_both(const dy_program *p, const char *exe, const char *tag, int64_t b,
                       const float *boxes, const float *scores, int64_t n, const double *out,
                       const double *index, const double *rois) {
  dy_error err = {0};
  dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 3, (int64_t[]){b, 4, 4}, boxes),
                      dy_tensor_from_data(DY_F32, 3, (int64_t[]){b, 3, 4}, scores)};
  dy_tensor *got[3] = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 2, got, 3, &err), &err);
  expect(got[0], "executor out", n, 6, out);
  expect(got[1], "executor index", n, 1, index);
  expect(got[2], "executor rois", b, 0, rois);
  char dir[2048], f0[4096], f1[4096], path[4096];
  tmp_path(dir, sizeof dir, tag);
  snprintf(f0, sizeof f0, "%s_boxes.npy", dir);
  snprintf(f1, sizeof f1, "%s_scores.npy", dir);
  DY_ASSERT_OK(dy_npy_write(f0, in[0], &err), &err);
  DY_ASSERT_OK(dy_npy_write(f1, in[1], &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && '%s' '%s' '%s' "
                                   "--output-dir '%s' >/dev/null", dir, dir, exe, f0, f1, dir), 0);
  const char *names[3] = {"out", "index", "rois"};
  for (int i = 0; i < 3; i++) {
    dy_tensor *c = NULL;
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
    DY_ASSERT_OK(dy_npy_read(path, &c, &err), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_TRUE(dy_type_equal(&c->type, &got[i]->type));
    CU_ASSERT(c->nbytes == got[i]->nbytes && memcmp(c->data, got[i]->data, c->nbytes) == 0);
    dy_tensor_free(c);
    dy_tensor_free(got[i]);
  }
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
}

/* box 1 overlaps box 0 by 0.9, box 3 overlaps box 0 by 1/3 and box 1 by
 * 0.4/1.5; box 2 is apart */
static const float boxes4[16] = {0, 0, 1, 1, 0, 0, 1, 0.9f, 2, 2, 3, 3, 0, 0.5f, 1, 1.5f};

static void test_multiclass_nms(void) {
  dy_program *p = nms_program("score_threshold = 0.1, nms_top_k = -1, keep_top_k = 3, "
                              "nms_threshold = 0.5, nms_eta = 1.0, normalized = 1, "
                              "background_label = 0, empty_row = 0");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char exe[4096];
  compile_to(p, "nms", exe);
  float boxes[32], scores[24] = {
      0.9f, 0.9f, 0.9f, 0.9f, /* class 0: the background, never kept */
      0.8f, 0.9f, 0.6f, 0.05f, /* class 1: 1, then 0 (suppressed by 1), 2 */
      0.6f, 0.6f, 0.0f, 0.7f,  /* class 2: 3, 0, 1 (tie: 0 first; 1 suppressed by 0) */
  };
  memcpy(boxes, boxes4, sizeof boxes4);
  memcpy(boxes + 16, boxes4, sizeof boxes4);
  for (int i = 12; i < 24; i++) /* batch 1: nothing above the threshold */
    scores[i] = 0.1f;
  /* kept: (1, box 1, .9), (1, box 2, .6), (2, box 3, .7), (2, box 0, .6);
   * keep_top_k 3 cuts the tie at .6: class 1's box 2 stays */
  const double out[18] = {1, 0.9f, 0, 0, 1, 0.9f, 1, 0.6f, 2, 2, 3, 3,
                          2, 0.7f, 0, 0.5f, 1, 1.5f};
  check_both(p, exe, "b1", 1, boxes, scores, 3, out, (double[]){1, 2, 3}, (double[]){3});
  check_both(p, exe, "b2", 2, boxes, scores, 3, out, (double[]){1, 2, 3}, (double[]){3, 0});
  /* the second batch alone: no row (multiclass_nms3) */
  check_both(p, exe, "none", 1, boxes + 16, scores + 12, 0, NULL, NULL, (double[]){0});
  /* 3 rows above a bound of 2 (--max-dim rows=2): one line naming the
   * symbol, from the executable and the executor */
  char model[4096], exe2[4096], log[4096], cmd[16384], dir[2048];
  tmp_path(model, sizeof model, "nms.dymodel");
  tmp_path(exe2, sizeof exe2, "nms_bound2_exe");
  tmp_path(log, sizeof log, "nms_bound2.log");
  tmp_path(dir, sizeof dir, "b1");
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' --max-batch 2 --max-dim "
                                   "rows=2 >/dev/null", DY2STC_PATH, model, exe2), 0);
  snprintf(cmd, sizeof cmd, "'%s' '%s_boxes.npy' '%s_scores.npy' --output-dir '%s'", exe2, dir,
           dir, dir);
  dy_test_expect_cli(log, 1, "the size symbol 'rows' is 3 at run time, above its bound 2", cmd);
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_bound_sym(p, "rows", 2, &err), &err);
  dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 3, (int64_t[]){1, 4, 4}, boxes),
                      dy_tensor_from_data(DY_F32, 3, (int64_t[]){1, 3, 4}, scores)};
  dy_tensor *got[3] = {0};
  CU_ASSERT_EQUAL(dy_executor_run(p, in, 2, got, 3, &err), DY_STATUS_LIMIT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the size symbol 'rows' is 3 at run time, above its "
                                         "bound 2"));
  dy_tensor_free(in[0]);
  dy_tensor_free(in[1]);
  dy_program_free(p);
}

/* normalized 0 (+1 on widths and heights): box 3 [0, 0.5, 1, 1.5]
 * against box 0: inter 2 * 1.5 = 3 over 4 + 4 - 3, IoU 0.6 (1/3 when
 * normalized); box 1: inter 2 * 1.9 over 4 + 3.8 - 3.8, 0.95. nms_eta 0.9
 * after the first kept box: 0.65 becomes 0.585, so box 3 goes too (it
 * would stay at 0.65). nms_top_k 3 cuts box 2 (the lowest score). */
static void test_multiclass_nms_eta(void) {
  dy_program *p = nms_program("score_threshold = 0.0, nms_top_k = 3, keep_top_k = -1, "
                              "nms_threshold = 0.65, nms_eta = 0.9, normalized = 0, "
                              "background_label = -1, empty_row = 1");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char exe[4096];
  compile_to(p, "eta", exe);
  float scores[12] = {0.9f, 0.5f, 0.1f, 0.8f, 0, 0, 0, 0, 0, 0, 0, 0};
  /* class 0: boxes 0 (.9), 3 (.8), 1 (.5) by nms_top_k; 0 kept, 3 and 1
   * suppressed; classes 1 and 2: nothing above 0 */
  const double out[6] = {0, 0.9f, 0, 0, 1, 1};
  check_both(p, exe, "eta", 1, boxes4, scores, 1, out, (double[]){0}, (double[]){1});
  /* nothing above 0: multiclass_nms's one row of -1s */
  float zero[12] = {0};
  const double empty[6] = {-1, -1, -1, -1, -1, -1};
  check_both(p, exe, "empty", 1, boxes4, zero, 1, empty, (double[]){-1}, (double[]){0});
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("det");
  DY_TEST(test_multiclass_nms);
  DY_TEST(test_multiclass_nms_eta);
}
