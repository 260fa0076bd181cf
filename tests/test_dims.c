/* test_dims.c - symbolic shapes: size symbols and dim expressions
 * (ir/dims.c), the Program's symbol declarations, their text and .dymodel
 * forms, inference with expressions, the executor binding symbols from the
 * inputs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_runtime.h"
#include "dy_test.h"

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
  int64_t bs, sb, x, y;
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

void dy_test_register(void) {
  DY_SUITE("dims");
  DY_TEST(test_normal_form);
  DY_TEST(test_text_forms);
  DY_TEST(test_program_symbols);
  DY_TEST(test_executor_binds_symbols);
}
