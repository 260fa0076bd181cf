/* test_shape.c - the shape family beyond the op table (op_cases_shape.c):
 *
 *   - the dynamic-batch rules, on -1 types (the op table runs concrete
 *     shapes eagerly, so it cannot see them), and their error in static
 *     mode naming the source line;
 *   - squeeze/unsqueeze are zero-copy views eagerly and aliases (no
 *     kernel) in the compiled model;
 *   - a gather index out of range is refused by eager, by the static
 *     executor and by the compiled C (NAME_ERR_INDEX from NAME_run, a
 *     one-line message and exit 1 from the generated main.c) - never read;
 *   - dy_split and dy_stack, eagerly and traced;
 *   - the Embedding layer: seeded init, padding_idx, jit save/load, run
 *     compiled.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define SCRATCH DY_BUILD_DIR "/shape_scratch"

#define sh(...) dy_test_sh(NULL, __VA_ARGS__)

static const char *cc(void) {
  const char *c = getenv("CC");
  return c && *c ? c : "cc";
}

static const char *scratch(const char *test) {
  static char buf[512];
  mkdir(SCRATCH, 0777);
  snprintf(buf, sizeof buf, SCRATCH "/%s", test);
  sh("rm -rf %s && mkdir -p %s", buf, buf);
  return buf;
}

static void write_text(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs(s, f);
  fclose(f);
}

/* Plan, emit NAME.{c,h} and main.c into dir and compile NAME.c strictly.
 * *source gets the NAME.c text (caller frees) when wanted. */
static bool build_model(dy_program *p, const char *dir, const char *name,
                        int64_t max_batch, char **source) {
  dy_error err = {0};
  dy_memplan_result mr;
  dy_codegen_output out = {0};
  dy_codegen_options o = {.name = name, .emit_main = true};
  if (dy_program_bound_sym(p, "batch", max_batch, &err) || dy_memplan(p, &mr, &err) ||
      (o.arena_bytes = mr.arena_bytes, dy_codegen(p, &o, &out, &err))) {
    fprintf(stderr, "\n  codegen: %s\n", err.msg);
    CU_FAIL("codegen failed");
    return false;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.c", dir, name);
  write_text(path, out.source);
  snprintf(path, sizeof path, "%s/%s.h", dir, name);
  write_text(path, out.header);
  snprintf(path, sizeof path, "%s/main.c", dir);
  write_text(path, out.main_c);
  if (source)
    *source = strdup(out.source);
  dy_codegen_output_free(&out);
  int rc = sh("cd %s && %s -std=c99 -Wall -Wextra -Werror -pedantic -O1 -c %s.c "
              "2> cc.log || cat cc.log >&2", dir, cc(), name);
  CU_ASSERT_EQUAL(rc, 0);
  return rc == 0;
}

/* Compile driver.c (text) with NAME.o and run it; its exit status. */
static int run_driver(const char *dir, const char *name, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/driver.c", dir);
  write_text(path, text);
  int rc = sh("cd %s && %s -std=c99 -Wall -Wextra -Werror -pedantic -c driver.c && "
              "%s -o driver driver.o %s.o -lm", dir, cc(), cc(), name);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc)
    return -1;
  return sh("cd %s && ./driver > run.log 2>&1 || { cat run.log >&2; exit 1; }", dir);
}

/* ------------------------------------------------------------------ */
/* The dynamic batch                                                   */
/* ------------------------------------------------------------------ */

static dy_status infer1(dy_op_kind k, const dy_type *in, int n, const dy_attr *attrs,
                        int na, dy_type *out) {
  dy_op op = {.id = 0, .kind = k, .attrs = (dy_attr *)attrs, .n_attrs = na,
              .loc = {"model.c", 7}};
  dy_error err = {0};
  dy_status s = dy_infer(&op, in, n, out, &err);
  if (s != DY_OK)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, dy_op_name(k)));
  return s;
}

#define IS(name, n, ...) DY_ATTR_IS(name, ((const int64_t[]){__VA_ARGS__}), n)

static void check_type(const dy_type *t, int rank, const int64_t *shape) {
  CU_ASSERT_EQUAL(t->rank, rank);
  for (int i = 0; i < rank && i < t->rank; i++)
    CU_ASSERT_EQUAL(t->shape[i], shape[i]);
}

static void test_batch_rules(void) {
  dy_type b7 = {DY_F32, 2, {-1, 7}}, two[2] = {b7, b7}, out;
  dy_type b17 = {DY_F32, 3, {-1, 1, 7}}, ib = {DY_I64, 1, {-1}};
  dy_attr ax0[] = {DY_ATTR_I("axis", 0)}, ax1[] = {DY_ATTR_I("axis", 1)};

  /* concat: along the batch gives 2*B, a size expression (ir/core/dims.c) */
  CU_ASSERT_EQUAL(infer1(DY_OP_CONCAT, two, 2, ax0, 1, &out), DY_OK);
  CU_ASSERT(out.rank == 2 && out.shape[0] < -1 && out.shape[1] == 7);
  CU_ASSERT_EQUAL(infer1(DY_OP_CONCAT, two, 2, ax1, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 14));
  CU_ASSERT_EQUAL(infer1(DY_OP_CONCAT, two, 1, ax0, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 7));

  /* slice: the batch only whole */
  dy_attr whole[] = {IS("starts", 1, 0), IS("ends", 1, INT64_MAX), IS("axes", 1, 0),
                     IS("steps", 1, 1)};
  CU_ASSERT_EQUAL(infer1(DY_OP_SLICE, &b7, 1, whole, 4, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 7));
  dy_attr part[] = {IS("starts", 1, 1), IS("ends", 1, INT64_MAX), IS("axes", 1, 0),
                    IS("steps", 1, 1)};
  CU_ASSERT_EQUAL(infer1(DY_OP_SLICE, &b7, 1, part, 4, &out), DY_STATUS_UNSUPPORTED);
  dy_attr head[] = {IS("starts", 1, 0), IS("ends", 1, 5), IS("axes", 1, -2), IS("steps", 1, 1)};
  CU_ASSERT_EQUAL(infer1(DY_OP_SLICE, &b7, 1, head, 4, &out), DY_STATUS_UNSUPPORTED);
  dy_attr rev[] = {IS("starts", 1, 0), IS("ends", 1, INT64_MAX), IS("axes", 1, 0),
                   IS("steps", 1, -1)};
  CU_ASSERT_EQUAL(infer1(DY_OP_SLICE, &b7, 1, rev, 4, &out), DY_STATUS_UNSUPPORTED);

  /* squeeze: the batch is never known to be 1 */
  dy_attr sq0[] = {IS("axes", 1, 0)}, sq1[] = {IS("axes", 1, 1)}, none[] = {
      DY_ATTR_IS("axes", NULL, 0)};
  CU_ASSERT_EQUAL(infer1(DY_OP_SQUEEZE, &b17, 1, sq0, 1, &out), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_EQUAL(infer1(DY_OP_SQUEEZE, &b17, 1, none, 1, &out), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_EQUAL(infer1(DY_OP_SQUEEZE, &b17, 1, sq1, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 7));
  CU_ASSERT_EQUAL(infer1(DY_OP_UNSQUEEZE, &b7, 1, sq0, 1, &out), DY_OK);
  check_type(&out, 3, DY_SHAPE(1, -1, 7));

  /* expand: keeping or broadcasting the batch is fine, fixing it is not */
  dy_type b1 = {DY_F32, 2, {-1, 1}};
  dy_attr e_keep[] = {IS("shape", 2, -1, 5)}, e_one[] = {IS("shape", 2, 1, 5)},
          e_fix[] = {IS("shape", 2, 4, 5)};
  CU_ASSERT_EQUAL(infer1(DY_OP_EXPAND, &b1, 1, e_keep, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 5));
  CU_ASSERT_EQUAL(infer1(DY_OP_EXPAND, &b1, 1, e_one, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 5));
  CU_ASSERT_EQUAL(infer1(DY_OP_EXPAND, &b1, 1, e_fix, 1, &out), DY_STATUS_SHAPE_MISMATCH);

  /* tile and pad: never along the batch */
  dy_attr t_b[] = {IS("repeat_times", 2, 2, 1)}, t_7[] = {IS("repeat_times", 2, 1, 3)};
  CU_ASSERT_EQUAL(infer1(DY_OP_TILE, &b7, 1, t_b, 1, &out), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_EQUAL(infer1(DY_OP_TILE, &b7, 1, t_7, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 21));
  dy_attr p_b[] = {IS("paddings", 4, 1, 0, 0, 0), DY_ATTR_S("mode", "constant"),
                   DY_ATTR_F("value", 0)};
  dy_attr p_7[] = {IS("paddings", 4, 0, 2, 0, 3), DY_ATTR_S("mode", "reflect"),
                   DY_ATTR_F("value", 0)};
  CU_ASSERT_EQUAL(infer1(DY_OP_PAD, &b7, 1, p_b, 3, &out), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_EQUAL(infer1(DY_OP_PAD, &b7, 1, p_7, 3, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 12));

  /* gather: each output dim is one input dim, B stays B */
  dy_type xi[2] = {b7, ib};
  CU_ASSERT_EQUAL(infer1(DY_OP_GATHER, xi, 2, ax1, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, -1));
  CU_ASSERT_EQUAL(infer1(DY_OP_GATHER, xi, 2, ax0, 1, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(-1, 7));

  /* reductions over the batch */
  dy_attr r0[] = {IS("axes", 1, 0), DY_ATTR_I("keepdim", 0)},
          r0k[] = {IS("axes", 1, 0), DY_ATTR_I("keepdim", 1)};
  CU_ASSERT_EQUAL(infer1(DY_OP_REDUCE_SUM, &b7, 1, r0, 2, &out), DY_OK);
  check_type(&out, 1, DY_SHAPE(7));
  CU_ASSERT_EQUAL(infer1(DY_OP_REDUCE_MAX, &b7, 1, r0k, 2, &out), DY_OK);
  check_type(&out, 2, DY_SHAPE(1, 7));
  dy_attr am[] = {DY_ATTR_I("axis", 0), DY_ATTR_I("keepdim", 0)};
  CU_ASSERT_EQUAL(infer1(DY_OP_ARGMAX, &b7, 1, am, 2, &out), DY_OK);
  check_type(&out, 1, DY_SHAPE(7));
  CU_ASSERT_EQUAL(out.dtype, DY_I64);
}

/* In static mode the error names the user's line. */
static void test_static_mode_error_line(void) {
  dy_type t = {DY_F32, 2, {-1, 4}};
  dy_scope_begin();
  dy_tensor *x = dy_tensor_symbolic(&t);
  dy_clear_error();
  int line = __LINE__ + 1;
  dy_tensor *y = dy_tile(x, 2, DY_SHAPE(2, 1));
  CU_ASSERT_PTR_NULL(y);
  const dy_error *e = dy_last_error();
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL(e->status, DY_STATUS_UNSUPPORTED);
  CU_ASSERT_EQUAL(e->loc.line, line);
  CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "dynamic batch"));
  dy_clear_error();
  /* a symbolic split along the batch */
  dy_tensor *parts[2];
  CU_ASSERT_FALSE(dy_split(x, 2, NULL, 0, parts));
  CU_ASSERT_PTR_NULL(parts[0]);
  CU_ASSERT_EQUAL(dy_last_error()->status, DY_STATUS_UNSUPPORTED);
  dy_clear_error();
  dy_scope_end();
}

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

static void test_views(void) {
  dy_scope_begin();
  dy_tensor *x = dy_tensor_from_data(DY_F32, 3, DY_SHAPE(1, 3, 1),
                                     (const float[]){1, -2, 3});
  dy_tensor *s = dy_squeeze(x, 2, DY_SHAPE(0, -1));
  dy_tensor *u = dy_unsqueeze(s, 2, DY_SHAPE(0, 2));
  CU_ASSERT_PTR_NOT_NULL_FATAL(u);
  CU_ASSERT_EQUAL(s->type.rank, 1);
  CU_ASSERT_PTR_EQUAL(s->data, x->data);  /* zero-copy */
  CU_ASSERT_PTR_EQUAL(u->data, x->data);
  check_type(&u->type, 3, DY_SHAPE(1, 3, 1));
  dy_scope_end();

  /* compiled: relu(squeeze(x)) + unsqueeze: the views get no kernel */
  dy_error err = {0};
  dy_program *p = dy_program_new();
  int x_id = dy_program_add_var(p, "x", &(dy_type){DY_F32, 3, {-1, 1, 5}});
  int s_id = dy_program_add_var(p, "s", &(dy_type){DY_F32, 2, {-1, 5}});
  int r_id = dy_program_add_var(p, "r", &(dy_type){DY_F32, 2, {-1, 5}});
  int u_id = dy_program_add_var(p, "u", &(dy_type){DY_F32, 3, {-1, 5, 1}});
  int y_id = dy_program_add_var(p, "y", &(dy_type){DY_F32, 3, {-1, 5, 1}});
  dy_program_add_feed(p, x_id, &err);
  dy_attr a1[] = {IS("axes", 1, 1)}, a2[] = {IS("axes", 1, -1)};
  dy_srcloc loc = {"model.c", 3};
  dy_program_append_op(p, 0, DY_OP_SQUEEZE, &x_id, 1, &s_id, 1, a1, 1, loc);
  dy_program_append_op(p, 0, DY_OP_RELU, &s_id, 1, &r_id, 1, NULL, 0, loc);
  dy_program_append_op(p, 0, DY_OP_UNSQUEEZE, &r_id, 1, &u_id, 1, a2, 1, loc);
  dy_program_append_op(p, 0, DY_OP_RELU, &u_id, 1, &y_id, 1, NULL, 0, loc);
  dy_program_add_fetch(p, y_id, &err);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  const char *dir = scratch("views");
  char *src = NULL;
  if (build_model(p, dir, "v", 4, &src)) {
    CU_ASSERT_PTR_NULL(strstr(src, "_squeeze_"));
    CU_ASSERT_PTR_NULL(strstr(src, "_unsqueeze_"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "is a view of"));
    int rc = run_driver(dir, "v",
                        "#include <stdio.h>\n#include \"v.h\"\n"
                        "int main(void) {\n"
                        "  static double arena[V_ARENA_BYTES / 8 + 1];\n"
                        "  const float x[10] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10};\n"
                        "  float y[10];\n"
                        "  if (v_run(arena, 2, x, y) != V_OK) return 2;\n"
                        "  for (int i = 0; i < 10; i++)\n"
                        "    if (y[i] != (x[i] > 0 ? x[i] : 0)) return 3;\n"
                        "  return 0;\n}\n");
    CU_ASSERT_EQUAL(rc, 0);
  }
  free(src);
  dy_program_free(p);
}

/* ------------------------------------------------------------------ */
/* gather: an index out of range is refused everywhere                 */
/* ------------------------------------------------------------------ */

/* x [B,4] f32, idx [3] i64, gather axis 1 -> [B,3] */
static dy_program *gather_program(void) {
  dy_error err = {0};
  dy_program *p = dy_program_new();
  int x = dy_program_add_var(p, "x", &(dy_type){DY_F32, 2, {-1, 4}});
  int idx = dy_program_add_var(p, "idx", &(dy_type){DY_I64, 1, {3}});
  int y = dy_program_add_var(p, "y", &(dy_type){DY_F32, 2, {-1, 3}});
  dy_program_add_feed(p, x, &err);
  dy_program_add_feed(p, idx, &err);
  dy_attr a[] = {DY_ATTR_I("axis", 1)};
  dy_program_append_op(p, 0, DY_OP_GATHER, (int[]){x, idx}, 2, &y, 1, a, 1,
                       (dy_srcloc){"model.c", 12});
  dy_program_add_fetch(p, y, &err);
  return p;
}

static void test_gather_out_of_range(void) {
  /* eager: the first bad index is named */
  dy_scope_begin();
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(3, 2),
                                     (const float[]){1, 2, 3, 4, 5, 6});
  dy_tensor *bad = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(3), (const int64_t[]){0, 5, -9});
  dy_clear_error();
  CU_ASSERT_PTR_NULL(dy_gather(x, bad, 0));
  const dy_error *e = dy_last_error();
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL(e->status, DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "index 5"));
  dy_clear_error();
  dy_tensor *neg = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(1), (const int64_t[]){-4});
  CU_ASSERT_PTR_NULL(dy_gather(x, neg, 0));
  dy_clear_error();

  /* the static executor */
  dy_program *p = gather_program();
  dy_error err = {0};
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  dy_tensor *xb = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(2, 4),
                                      (const float[]){0, 1, 2, 3, 10, 11, 12, 13});
  dy_tensor *good = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(3), (const int64_t[]){3, -4, 1});
  dy_tensor *oob = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(3), (const int64_t[]){3, 4, 1});
  dy_tensor *out = NULL;
  DY_ASSERT_OK(dy_executor_run(p, (dy_tensor *const[]){xb, good}, 2, &out, 1, &err), &err);
  const float want[] = {3, 0, 1, 13, 10, 11};
  for (int i = 0; i < 6; i++)
    CU_ASSERT_EQUAL(((float *)out->data)[i], want[i]);
  dy_tensor_free(out);
  out = NULL;
  err = (dy_error){0};
  CU_ASSERT_EQUAL(dy_executor_run(p, (dy_tensor *const[]){xb, oob}, 2, &out, 1, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "index 4"));
  CU_ASSERT_EQUAL(err.loc.line, 12);

  /* the compiled C: NAME_run returns G_ERR_INDEX, main.c says why */
  const char *dir = scratch("gather");
  char *src = NULL;
  if (build_model(p, dir, "g", 8, &src)) {
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "static int k0_gather_Bx3("));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "return G_ERR_INDEX;"));
    int rc = run_driver(dir, "g",
                        "#include <stdio.h>\n#include \"g.h\"\n"
                        "int main(void) {\n"
                        "  static double arena[G_ARENA_BYTES / 8 + 1];\n"
                        "  const float x[8] = {0, 1, 2, 3, 10, 11, 12, 13};\n"
                        "  const int64_t good[3] = {3, -4, 1}, hi[3] = {3, 4, 1},\n"
                        "                lo[3] = {0, 0, -5}, big[3] = {0, INT64_MAX, 0},\n"
                        "                small[3] = {INT64_MIN, 0, 0};\n"
                        "  const float want[6] = {3, 0, 1, 13, 10, 11};\n"
                        "  float y[6];\n"
                        "  if (G_ERR_INDEX != 3) return 2;\n"
                        "  if (g_run(arena, 2, x, good, y) != G_OK) return 3;\n"
                        "  for (int i = 0; i < 6; i++)\n"
                        "    if (y[i] != want[i]) return 4;\n"
                        "  if (g_run(arena, 2, x, hi, y) != G_ERR_INDEX) return 5;\n"
                        "  if (g_run(arena, 2, x, lo, y) != G_ERR_INDEX) return 6;\n"
                        "  if (g_run(arena, 2, x, big, y) != G_ERR_INDEX) return 7;\n"
                        "  if (g_run(arena, 2, x, small, y) != G_ERR_INDEX) return 8;\n"
                        "  return 0;\n}\n");
    CU_ASSERT_EQUAL(rc, 0);

    /* the executable built with main.c */
    char path[1024];
    snprintf(path, sizeof path, "%s/x.npy", dir);
    DY_ASSERT_OK(dy_npy_write(path, xb, &err), &err);
    snprintf(path, sizeof path, "%s/good.npy", dir);
    DY_ASSERT_OK(dy_npy_write(path, good, &err), &err);
    snprintf(path, sizeof path, "%s/oob.npy", dir);
    DY_ASSERT_OK(dy_npy_write(path, oob, &err), &err);
    rc = sh("cd %s && %s -std=c99 -O1 -o gbin main.c g.o -lm 2> main.log", dir, cc());
    CU_ASSERT_EQUAL(rc, 0);
    rc = sh("cd %s && ./gbin --input x=x.npy --input idx=good.npy --output-dir out", dir);
    CU_ASSERT_EQUAL(rc, 0);
    rc = sh("cd %s && ./gbin --input x=x.npy --input idx=oob.npy --output-dir out2 "
            "2> err.txt", dir);
    CU_ASSERT_EQUAL(rc, 1);
    rc = sh("cd %s && grep -q 'index input is out of range' err.txt && "
            "test $(wc -l < err.txt) -eq 1", dir);
    CU_ASSERT_EQUAL(rc, 0);
  }
  free(src);
  dy_program_free(p);
  dy_scope_end();
}

/* ------------------------------------------------------------------ */
/* split and stack                                                     */
/* ------------------------------------------------------------------ */

static void test_split_stack(void) {
  dy_scope_begin();
  float v[14];
  for (int i = 0; i < 14; i++)
    v[i] = (float)i;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(2, 7), v);
  dy_tensor *part[7];
  /* sizes with one -1 */
  CU_ASSERT_TRUE_FATAL(dy_split(x, 3, DY_SHAPE(2, -1, 1), -1, part));
  check_type(&part[0]->type, 2, DY_SHAPE(2, 2));
  check_type(&part[1]->type, 2, DY_SHAPE(2, 4));
  check_type(&part[2]->type, 2, DY_SHAPE(2, 1));
  const float want1[] = {2, 3, 4, 5, 9, 10, 11, 12};
  for (int i = 0; i < 8; i++)
    CU_ASSERT_EQUAL(((float *)part[1]->data)[i], want1[i]);
  CU_ASSERT_EQUAL(((float *)part[2]->data)[1], 13);
  /* equal parts */
  CU_ASSERT_TRUE_FATAL(dy_split(x, 7, NULL, 1, part));
  CU_ASSERT_EQUAL(((float *)part[6]->data)[0], 6);
  CU_ASSERT_EQUAL(((float *)part[6]->data)[1], 13);
  /* bad splits */
  dy_clear_error();
  CU_ASSERT_FALSE(dy_split(x, 3, NULL, 1, part));
  CU_ASSERT_PTR_NULL(part[0]);
  CU_ASSERT_EQUAL(dy_last_error()->status, DY_STATUS_SHAPE_MISMATCH);
  dy_clear_error();
  CU_ASSERT_FALSE(dy_split(x, 2, DY_SHAPE(3, 3), 1, part));
  dy_clear_error();
  CU_ASSERT_FALSE(dy_split(x, 2, NULL, 2, part));
  CU_ASSERT_EQUAL(dy_last_error()->status, DY_STATUS_INVALID_ARGUMENT);
  dy_clear_error();

  /* stack three [2,3] along 1 and along -1 */
  dy_tensor *xs[3];
  for (int k = 0; k < 3; k++) {
    float d[6];
    for (int i = 0; i < 6; i++)
      d[i] = (float)(10 * k + i);
    xs[k] = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(2, 3), d);
  }
  dy_tensor *s1 = dy_stack(xs, 3, 1), *s2 = dy_stack(xs, 3, -1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
  check_type(&s1->type, 3, DY_SHAPE(2, 3, 3));
  check_type(&s2->type, 3, DY_SHAPE(2, 3, 3));
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 3; j++) {
        float want = (float)(10 * k + 3 * i + j);
        CU_ASSERT_EQUAL(((float *)s1->data)[(i * 3 + k) * 3 + j], want);
        CU_ASSERT_EQUAL(((float *)s2->data)[(i * 3 + j) * 3 + k], want);
      }
  dy_scope_end();
}

/* A layer made of split, stack and a reduction, traced with a -1 batch. */
static dy_tensor *halves_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)self;
  (void)n;
  dy_tensor *h[2];
  if (!dy_split(in[0], 2, NULL, 1, h))
    return NULL;
  dy_tensor *s = dy_stack(h, 2, 0);                      /* [2, B, 3] */
  return dy_reduce_max(s, 1, DY_SHAPE(0), false);        /* [B, 3]    */
}

static void test_split_stack_traced(void) {
  static const dy_layer_vtable vt = {"Halves", halves_forward, NULL, false};
  dy_layer *l = dy_layer_new(sizeof(dy_layer), &vt, "halves");
  dy_scope_begin();
  float v[18];
  for (int i = 0; i < 18; i++)
    v[i] = (float)((i * 7) % 11) - 5;
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(3, 6), v);
  dy_input_spec spec = {"x", DY_F32, 2, {-1, 6}};
  dy_tensor *eager = NULL, *got = NULL;
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_trace(l, &spec, &x, 1, &eager, &p, &err), &err);
  CU_ASSERT_EQUAL(p->vars[p->fetches[0]]->type.shape[0], -1);
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &got, 1, &err), &err);
  for (int i = 0; i < 9; i++) {
    int r = i / 3, c = i % 3;
    float a = v[r * 6 + c], b = v[r * 6 + 3 + c];
    CU_ASSERT_EQUAL(((float *)eager->data)[i], a > b ? a : b);
    CU_ASSERT_EQUAL(((float *)got->data)[i], a > b ? a : b);
  }
  dy_tensor_free(eager);
  dy_tensor_free(got);
  dy_program_free(p);
  dy_scope_end();
  dy_layer_free(l);
}

/* ------------------------------------------------------------------ */
/* Embedding                                                           */
/* ------------------------------------------------------------------ */

static void test_embedding(void) {
  dy_seed(7);
  dy_layer *a = dy_embedding_new(13, 5, 2);
  dy_seed(7);
  dy_layer *b = dy_embedding_new(13, 5, -1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  const float *wa = a->params[0]->data, *wb = b->params[0]->data;
  check_type(&a->params[0]->type, 2, DY_SHAPE(13, 5));
  for (int i = 0; i < 65; i++) /* seeded; row 2 of a zeroed */
    CU_ASSERT_EQUAL(wa[i], i / 5 == 2 ? 0.0f : wb[i]);
  dy_clear_error();
  CU_ASSERT_PTR_NULL(dy_embedding_new(13, 5, 13));
  CU_ASSERT_PTR_NULL(dy_embedding_new(0, 5, -1));
  dy_clear_error();

  /* eager lookup */
  dy_scope_begin();
  const int64_t idv[6] = {0, 2, 12, -1, 5, 5};
  dy_tensor *ids = dy_tensor_from_data(DY_I64, 2, DY_SHAPE(2, 3), idv);
  dy_tensor *y = dy_call1(a, ids);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  check_type(&y->type, 3, DY_SHAPE(2, 3, 5));
  for (int t = 0; t < 6; t++) {
    int64_t row = idv[t] < 0 ? idv[t] + 13 : idv[t];
    for (int j = 0; j < 5; j++)
      CU_ASSERT_EQUAL(((float *)y->data)[t * 5 + j], wa[row * 5 + j]);
  }
  dy_tensor *bad = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(1), (const int64_t[]){13});
  dy_clear_error();
  CU_ASSERT_PTR_NULL(dy_call1(a, bad));
  CU_ASSERT_EQUAL(dy_last_error()->status, DY_STATUS_INVALID_ARGUMENT);
  dy_clear_error();

  /* jit save / load / executor, then compiled */
  const char *dir = scratch("embedding");
  char path[1024];
  snprintf(path, sizeof path, "%s/emb", dir);
  dy_input_spec spec = {"ids", DY_I64, 2, {-1, 3}};
  dy_error err = {0};
  DY_ASSERT_OK(dy_jit_save(a, &spec, 1, path, &err), &err);
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_jit_load(path, &p, &err), &err);
  dy_tensor *got = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &ids, 1, &got, 1, &err), &err);
  CU_ASSERT_EQUAL(memcmp(got->data, y->data, y->nbytes), 0);
  dy_tensor_free(got);
  if (build_model(p, dir, "emb", 4, NULL)) {
    char drv[4096];
    snprintf(drv, sizeof drv,
             "#include <stdio.h>\n#include <string.h>\n#include \"emb.h\"\n"
             "int main(void) {\n"
             "  static double arena[EMB_ARENA_BYTES / 8 + 1];\n"
             "  const int64_t ids[6] = {0, 2, 12, -1, 5, 5}, bad[6] = {0, 2, 12, -14, 5, 5};\n"
             "  float y[30];\n"
             "  FILE *f = fopen(\"want.bin\", \"rb\");\n"
             "  float want[30];\n"
             "  if (!f || fread(want, sizeof want, 1, f) != 1) return 2;\n"
             "  fclose(f);\n"
             "  if (emb_run(arena, 2, ids, y) != EMB_OK) return 3;\n"
             "  if (memcmp(y, want, sizeof y) != 0) return 4;\n"
             "  if (emb_run(arena, 2, bad, y) != EMB_ERR_INDEX) return 5;\n"
             "  return 0;\n}\n");
    snprintf(path, sizeof path, "%s/want.bin", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(y->data, 1, y->nbytes, f);
    fclose(f);
    CU_ASSERT_EQUAL(run_driver(dir, "emb", drv), 0);
  }
  dy_program_free(p);
  dy_scope_end();
  dy_layer_free(a);
  dy_layer_free(b);
}


/* ------------------------------------------------------------------ */
/* .dymodel round trip: variadic inputs, empty lists, a string         */
/* ------------------------------------------------------------------ */

static void test_dymodel_round_trip(void) {
  dy_error err = {0};
  dy_program *p = dy_program_new();
  dy_type t = {DY_F32, 2, {-1, 5}};
  int x = dy_program_add_var(p, "x", &t);
  int c = dy_program_add_var(p, "c", &(dy_type){DY_F32, 2, {-1, 15}});
  int s = dy_program_add_var(p, "s", &(dy_type){DY_F32, 2, {-1, 13}});
  int q = dy_program_add_var(p, "q", &(dy_type){DY_F32, 2, {-1, 17}});
  int y = dy_program_add_var(p, "y", &(dy_type){DY_F32, 0, {0}});
  dy_program_add_feed(p, x, &err);
  dy_srcloc loc = {"model.c", 40};
  dy_attr ca[] = {DY_ATTR_I("axis", -1)};
  /* axes and steps empty: axes 0, 1 with step 1; the batch whole (end
   * INT32_MAX: the text form reads integers through double for now, so
   * INT64_MAX would not survive dy_program_parse) */
  dy_attr sl[] = {IS("starts", 2, 0, 0), IS("ends", 2, INT32_MAX, 13),
                  DY_ATTR_IS("axes", NULL, 0), DY_ATTR_IS("steps", NULL, 0)};
  dy_attr pa[] = {IS("paddings", 4, 0, 2, 0, 2), DY_ATTR_S("mode", "reflect"),
                  DY_ATTR_F("value", 0)};
  dy_attr ra[] = {DY_ATTR_IS("axes", NULL, 0), DY_ATTR_I("keepdim", 0)};
  dy_program_append_op(p, 0, DY_OP_CONCAT, (int[]){x, x, x}, 3, &c, 1, ca, 1, loc);
  dy_program_append_op(p, 0, DY_OP_SLICE, &c, 1, &s, 1, sl, 4, loc);
  dy_program_append_op(p, 0, DY_OP_PAD, &s, 1, &q, 1, pa, 3, loc);
  dy_program_append_op(p, 0, DY_OP_REDUCE_SUM, &q, 1, &y, 1, ra, 2, loc);
  dy_program_add_fetch(p, y, &err);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  uint8_t *buf = NULL;
  size_t len = 0;
  dy_program *back = NULL;
  DY_ASSERT_OK(dy_dymodel_encode(p, &buf, &len, &err), &err);
  DY_ASSERT_OK(dy_dymodel_decode(buf, len, &back, &err), &err);
  DY_ASSERT_OK(dy_verify(back, &err), &err);
  const dy_op *pad = back->blocks[0]->ops[2];
  CU_ASSERT_STRING_EQUAL(dy_op_find_attr(pad, "mode")->s, "reflect");
  CU_ASSERT_EQUAL(back->blocks[0]->ops[0]->n_inputs, 3);
  /* and through the text form */
  char *text = NULL;
  size_t tlen = 0;
  FILE *f = open_memstream(&text, &tlen);
  CU_ASSERT_FATAL(f != NULL);
  dy_program_print(p, f);
  fclose(f);
  dy_program *parsed = NULL;
  DY_ASSERT_OK(dy_program_parse(text, &parsed, &err), &err);
  DY_ASSERT_OK(dy_verify(parsed, &err), &err);
  CU_ASSERT_EQUAL(dy_program_count_ops(parsed), 4);
  CU_ASSERT_EQUAL(dy_op_find_attr(parsed->blocks[0]->ops[1], "axes")->n, 0);
  dy_program_free(parsed);
  free(text);

  dy_scope_begin();
  float v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  dy_tensor *in = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(2, 5), v), *o1 = NULL, *o2 = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &in, 1, &o1, 1, &err), &err);
  DY_ASSERT_OK(dy_executor_run(back, &in, 1, &o2, 1, &err), &err);
  /* by hand: each row of c is the row of x three times; s drops the last
   * two; reflect pads 2 each side with s[2], s[1] and s[11], s[10] */
  double want = 0;
  for (int r = 0; r < 2; r++) {
    double row = 0;
    for (int j = 0; j < 13; j++)
      row += v[r * 5 + j % 5];
    row += v[r * 5 + 2] + v[r * 5 + 1] + v[r * 5 + 11 % 5] + v[r * 5 + 10 % 5];
    want += row;
  }
  DY_ASSERT_NEAR(((float *)o1->data)[0], want, 1e-4);
  DY_ASSERT_NEAR(((float *)o2->data)[0], want, 1e-4);
  dy_tensor_free(o1);
  dy_tensor_free(o2);
  dy_scope_end();
  free(buf);
  dy_program_free(back);
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("shape");
  DY_TEST(test_batch_rules);
  DY_TEST(test_static_mode_error_line);
  DY_TEST(test_views);
  DY_TEST(test_gather_out_of_range);
  DY_TEST(test_split_stack);
  DY_TEST(test_split_stack_traced);
  DY_TEST(test_embedding);
  DY_TEST(test_dymodel_round_trip);
}
