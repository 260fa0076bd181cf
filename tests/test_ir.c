/* test_ir.c - the op table, shape inference, the verifier and the printer.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dy_compiler.h"
#include "dy_test.h"

/* ---- the op table: every op has every part ---- */

static void test_every_op_has_every_part(void) {
  for (int k = 0; k < DY_OP_COUNT; k++) {
    const dy_op_info *info = dy_op_info_of((dy_op_kind)k);
    CU_ASSERT_PTR_NOT_NULL(info->name);
    CU_ASSERT_PTR_NOT_NULL(dy_infer_table[k]);
    CU_ASSERT_PTR_NOT_NULL(dy_kernel_table[k]);
    CU_ASSERT_PTR_NOT_NULL(dy_cg_table[k]);
    dy_op_kind back;
    CU_ASSERT(dy_op_kind_from_name(info->name, &back) && back == (dy_op_kind)k);
  }
  dy_op_kind x;
  CU_ASSERT_FALSE(dy_op_kind_from_name("no_such_op", &x));
}

/* ---- inference ---- */

static dy_type T(int rank, const int64_t *shape) {
  dy_type t = {.dtype = DY_F32, .rank = rank};
  memcpy(t.shape, shape, sizeof(int64_t) * (size_t)rank);
  return t;
}

static dy_status infer1(dy_op_kind kind, const dy_attr *attrs, int n_attrs,
                        const dy_type *in, int n_in, dy_type *out, dy_error *err) {
  dy_op op = {.id = 3, .kind = kind, .attrs = (dy_attr *)attrs, .n_attrs = n_attrs,
              .loc = {"model.c", 42}};
  return dy_infer(&op, in, n_in, out, err);
}

static bool shape_is(const dy_type *t, int rank, const int64_t *s) {
  if (t->rank != rank)
    return false;
  for (int i = 0; i < rank; i++)
    if (t->shape[i] != s[i])
      return false;
  return true;
}

static void test_infer_broadcast(void) {
  dy_error err = {0};
  dy_type out, in[2] = {T(2, DY_SHAPE(-1, 3)), T(1, DY_SHAPE(3))};
  DY_ASSERT_OK(infer1(DY_OP_ADD, NULL, 0, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(-1, 3)));
  in[0] = T(3, DY_SHAPE(2, 1, 5));
  in[1] = T(2, DY_SHAPE(4, 1));
  DY_ASSERT_OK(infer1(DY_OP_MUL, NULL, 0, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 3, DY_SHAPE(2, 4, 5)));
  in[0] = T(2, DY_SHAPE(2, 3));
  in[1] = T(1, DY_SHAPE(4));
  CU_ASSERT_EQUAL(infer1(DY_OP_SUB, NULL, 0, in, 2, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3 against 4"));
  CU_ASSERT_EQUAL(err.loc.line, 42);
  /* the batch against a static 7 is refused */
  in[0] = T(2, DY_SHAPE(-1, 3));
  in[1] = T(2, DY_SHAPE(7, 3));
  CU_ASSERT_EQUAL(infer1(DY_OP_ADD, NULL, 0, in, 2, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  in[1].dtype = DY_I64;
  CU_ASSERT_EQUAL(infer1(DY_OP_ADD, NULL, 0, in, 2, &out, &err), DY_STATUS_DTYPE_MISMATCH);
}

static void test_infer_matmul(void) {
  dy_error err = {0};
  dy_attr a[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
  dy_type out, in[2] = {T(2, DY_SHAPE(-1, 10)), T(2, DY_SHAPE(10, 3))};
  DY_ASSERT_OK(infer1(DY_OP_MATMUL, a, 2, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(-1, 3)));
  in[1] = T(2, DY_SHAPE(3, 10));
  CU_ASSERT_EQUAL(infer1(DY_OP_MATMUL, a, 2, in, 2, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "inner dims 10 vs 3"));
  dy_attr ty[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 1)};
  DY_ASSERT_OK(infer1(DY_OP_MATMUL, ty, 2, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(-1, 3)));
  /* batched with broadcasting, and 1-D operands */
  in[0] = T(4, DY_SHAPE(2, 1, 5, 6));
  in[1] = T(3, DY_SHAPE(3, 6, 7));
  DY_ASSERT_OK(infer1(DY_OP_MATMUL, a, 2, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(2, 3, 5, 7)));
  in[0] = T(1, DY_SHAPE(6));
  DY_ASSERT_OK(infer1(DY_OP_MATMUL, a, 2, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(3, 7)));
  /* a missing attribute takes the op table's default (transpose_y 0)... */
  DY_ASSERT_OK(infer1(DY_OP_MATMUL, a, 1, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(3, 7)));
  in[1] = T(3, DY_SHAPE(3, 7, 6)); /* ...so [6] x [3,7,6] does not fit */
  CU_ASSERT_EQUAL(infer1(DY_OP_MATMUL, a, 1, in, 2, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  /* ...and a missing required one is named */
  in[0] = T(2, DY_SHAPE(4, 6));
  CU_ASSERT_EQUAL(infer1(DY_OP_RESHAPE, NULL, 0, in, 1, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "reshape: missing attribute 'shape'"));
}

static void test_infer_reshape(void) {
  dy_error err = {0};
  dy_type out, in = T(3, DY_SHAPE(-1, 4, 4));
  dy_attr a1[] = {DY_ATTR_IS("shape", DY_SHAPE(0, -1), 2)};
  DY_ASSERT_OK(infer1(DY_OP_RESHAPE, a1, 1, &in, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(-1, 16)));
  dy_attr a2[] = {DY_ATTR_IS("shape", DY_SHAPE(-1, 2, 8), 3)};
  DY_ASSERT_OK(infer1(DY_OP_RESHAPE, a2, 1, &in, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 3, DY_SHAPE(-1, 2, 8)));
  /* a literal for the dynamic dim would bake in the traced batch */
  dy_attr a3[] = {DY_ATTR_IS("shape", DY_SHAPE(3, 16), 2)};
  CU_ASSERT_EQUAL(infer1(DY_OP_RESHAPE, a3, 1, &in, 1, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dynamic batch dim"));
  /* -1 that is 2*batch: a size expression (dims.c) */
  dy_attr a4[] = {DY_ATTR_IS("shape", DY_SHAPE(-1, 8), 2)};
  DY_ASSERT_OK(infer1(DY_OP_RESHAPE, a4, 1, &in, 1, &out, &err), &err);
  char b[64];
  CU_ASSERT_STRING_EQUAL(dy_dim_str(out.shape[0], b, sizeof b), "2*batch");
  /* -1 that is not an exact quotient: batch*16 / 5 */
  dy_attr a4b[] = {DY_ATTR_IS("shape", DY_SHAPE(-1, 5), 2)};
  CU_ASSERT_EQUAL(infer1(DY_OP_RESHAPE, a4b, 1, &in, 1, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  /* static: impossible sizes and two -1s */
  dy_type st = T(2, DY_SHAPE(6, 5));
  dy_attr a5[] = {DY_ATTR_IS("shape", DY_SHAPE(7, -1), 2)};
  CU_ASSERT_EQUAL(infer1(DY_OP_RESHAPE, a5, 1, &st, 1, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  dy_attr a6[] = {DY_ATTR_IS("shape", DY_SHAPE(-1, -1), 2)};
  CU_ASSERT_EQUAL(infer1(DY_OP_RESHAPE, a6, 1, &st, 1, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  dy_attr a7[] = {DY_ATTR_IS("shape", DY_SHAPE(3, -1, 5), 3)};
  DY_ASSERT_OK(infer1(DY_OP_RESHAPE, a7, 1, &st, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 3, DY_SHAPE(3, 2, 5)));
}

static void test_infer_flatten_transpose_softmax(void) {
  dy_error err = {0};
  dy_type out, in = T(4, DY_SHAPE(-1, 3, 4, 5));
  dy_attr f[] = {DY_ATTR_I("start_axis", 1), DY_ATTR_I("stop_axis", -1)};
  DY_ASSERT_OK(infer1(DY_OP_FLATTEN, f, 2, &in, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 2, DY_SHAPE(-1, 60)));
  dy_attr f0[] = {DY_ATTR_I("start_axis", 0), DY_ATTR_I("stop_axis", 1)};
  DY_ASSERT_OK(infer1(DY_OP_FLATTEN, f0, 2, &in, 1, &out, &err), &err);
  CU_ASSERT(out.rank == 3 && out.shape[0] < -1 && out.shape[1] == 4); /* 3*batch */
  dy_attr t[] = {DY_ATTR_IS("perm", DY_SHAPE(0, 3, 1, 2), 4)};
  DY_ASSERT_OK(infer1(DY_OP_TRANSPOSE, t, 1, &in, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(-1, 5, 3, 4)));
  dy_attr tb[] = {DY_ATTR_IS("perm", DY_SHAPE(0, 1, 1, 2), 4)};
  CU_ASSERT_EQUAL(infer1(DY_OP_TRANSPOSE, tb, 1, &in, 1, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  dy_attr s[] = {DY_ATTR_I("axis", 4)};
  CU_ASSERT_EQUAL(infer1(DY_OP_SOFTMAX, s, 1, &in, 1, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "axis 4 out of range"));
  dy_attr s2[] = {DY_ATTR_I("axis", -4)};
  DY_ASSERT_OK(infer1(DY_OP_SOFTMAX, s2, 1, &in, 1, &out, &err), &err);
}

/* ---- the verifier ---- */

/* x f32[-1,10] -> matmul(w) -> add(b) -> relu -> out; returns the program. */
static dy_program *small_program(void) {
  dy_program *p = dy_program_new();
  dy_error err = {0};
  int x = dy_program_add_var(p, "x", &(dy_type){DY_F32, 2, {-1, 10}});
  int w = dy_program_add_var(p, "w", &(dy_type){DY_F32, 2, {10, 3}});
  int b = dy_program_add_var(p, "b", &(dy_type){DY_F32, 1, {3}});
  int h = dy_program_add_var(p, "h", &(dy_type){DY_F32, 2, {-1, 3}});
  int g = dy_program_add_var(p, "g", &(dy_type){DY_F32, 2, {-1, 3}});
  int o = dy_program_add_var(p, "out", &(dy_type){DY_F32, 2, {-1, 3}});
  float wd[30] = {0}, bd[3] = {1, 2, 3};
  dy_program_set_data(p, w, wd, sizeof wd, &err);
  dy_program_set_data(p, b, bd, sizeof bd, &err);
  dy_program_add_feed(p, x, &err);
  dy_attr mm[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
  dy_program_append_op(p, 0, DY_OP_MATMUL, (int[]){x, w}, 2, &h, 1, mm, 2, (dy_srcloc){"m.c", 1});
  dy_program_append_op(p, 0, DY_OP_ADD, (int[]){h, b}, 2, &g, 1, NULL, 0, (dy_srcloc){"m.c", 2});
  dy_program_append_op(p, 0, DY_OP_RELU, &g, 1, &o, 1, NULL, 0, (dy_srcloc){"m.c", 3});
  dy_program_add_fetch(p, o, &err);
  return p;
}

static void expect_invariant(dy_program *p, int n) {
  dy_error err = {0};
  char want[32];
  snprintf(want, sizeof want, "invariant %d ", n);
  CU_ASSERT_EQUAL(dy_verify(p, &err), DY_STATUS_INVALID_IR);
  if (!strstr(err.msg, want))
    fprintf(stderr, "\n  expected '%s', got: %s\n", want, err.msg);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
  dy_program_free(p);
}

static void test_verifier(void) {
  dy_error err = {0};
  dy_program *p = small_program();
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  dy_program_free(p);

  p = small_program(); /* 1: duplicate names */
  p->vars[4]->name = "h";
  expect_invariant(p, 1);
  p = small_program(); /* 2: arity */
  p->blocks[0]->ops[2]->n_inputs = 2;
  p->blocks[0]->ops[2]->inputs[1] = 0;
  expect_invariant(p, 2);
  p = small_program(); /* 3: operand id out of range */
  p->blocks[0]->ops[1]->inputs[1] = 99;
  expect_invariant(p, 3);
  p = small_program(); /* 4: attribute of the wrong kind */
  p->blocks[0]->ops[0]->attrs[1].kind = DY_ATTR_FLOAT;
  expect_invariant(p, 4);
  p = small_program(); /* 4: missing attribute */
  p->blocks[0]->ops[0]->n_attrs = 1;
  expect_invariant(p, 4);
  p = small_program(); /* 5: two writers */
  p->blocks[0]->ops[2]->outputs[0] = 4; /* relu writes g, which add wrote */
  expect_invariant(p, 5);
  p = small_program(); /* 6: use before def: swap add and relu */
  {
    dy_op *t = p->blocks[0]->ops[1];
    p->blocks[0]->ops[1] = p->blocks[0]->ops[2];
    p->blocks[0]->ops[2] = t;
  }
  expect_invariant(p, 6);
  p = small_program(); /* 7: output type disagrees with inference */
  p->vars[5]->type.shape[1] = 4;
  expect_invariant(p, 7);
  p = small_program(); /* 8: parameter without data */
  p->vars[1]->data = NULL;
  expect_invariant(p, 8);
  p = small_program(); /* 9: no fetch */
  p->n_fetches = 0;
  p->vars[5]->fetch_index = -1;
  expect_invariant(p, 9);
}

static void test_verifier_names_the_op_line(void) {
  dy_program *p = small_program();
  dy_error err = {0};
  p->vars[5]->type.shape[1] = 4;
  dy_verify(p, &err);
  CU_ASSERT_EQUAL(err.loc.line, 3);
  CU_ASSERT_STRING_EQUAL(err.loc.file, "m.c");
  char line[1024];
  dy_error_format(&err, line, sizeof line);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "m.c:3: invariant 7 (types)"));
  dy_program_free(p);
}

static void test_printer(void) {
  dy_program *p = small_program();
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  dy_program_print(p, f);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "var x : f32[-1,10] feed 0\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "var w : f32[10,3] persistable\n"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(buf, "    h = matmul(x, w) {transpose_x = 0, transpose_y = 0}  @m.c:1\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "    out = relu(g)  @m.c:3\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  fetch 0 out\n"));
  free(buf);
  f = open_memstream(&buf, &len);
  dy_program_print_dot(p, f);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "digraph program"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "v0 -> op0;"));
  free(buf);
  dy_program_free(p);
}

static void test_crc32_and_types(void) {
  CU_ASSERT_EQUAL(dy_crc32(0, "123456789", 9), 0xCBF43926u);
  char buf[64];
  CU_ASSERT_STRING_EQUAL(dy_type_str(&(dy_type){DY_I64, 3, {-1, 2, 3}}, buf, sizeof buf),
                         "i64[-1,2,3]");
  CU_ASSERT_EQUAL(dy_type_numel(&(dy_type){DY_F32, 2, {-1, 3}}), -1);
  CU_ASSERT_EQUAL(dy_type_numel_at(&(dy_type){DY_F32, 2, {-1, 3}}, 5), 15);
  CU_ASSERT_EQUAL(dy_type_numel(&(dy_type){DY_F32, 0, {0}}), 1);
}

static void test_memplan(void) {
  /* x -> matmul -> h -> add -> g -> relu -> out: h and g are intermediates
   * live at once only during add, so they need two slots */
  dy_program *p = small_program();
  dy_error err = {0};
  dy_memplan_result r;
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 8, &err), &err);
  DY_ASSERT_OK(dy_memplan(p, &r, &err), &err);
  CU_ASSERT_EQUAL(r.n_planned, 1);
  /* each is 8*3*4 = 96 bytes, 128 once aligned; h dies at the add, which
   * is elementwise with h's type, so g is written over h in place */
  CU_ASSERT_EQUAL(r.n_in_place, 1);
  CU_ASSERT_EQUAL(r.arena_bytes, 128);
  CU_ASSERT_EQUAL(r.lower_bound, 128);
  CU_ASSERT(p->vars[3]->mem_offset >= 0 && p->vars[4]->mem_offset >= 0);
  CU_ASSERT_EQUAL(p->vars[3]->mem_offset, p->vars[4]->mem_offset);
  CU_ASSERT_EQUAL(p->vars[5]->mem_offset, -1); /* the fetch is the caller's */
  CU_ASSERT_EQUAL(r.weight_bytes, 30 * 4 + 3 * 4);
  dy_program_free(p);
}

static void test_parse_round_trip(void) {
  dy_program *p = small_program(), *q = NULL;
  dy_error err = {0};
  char *text = dy_program_to_text(p);
  DY_ASSERT_OK(dy_program_parse(text, &q, &err), &err);
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  char *again = dy_program_to_text(q);
  CU_ASSERT_STRING_EQUAL(text, again);
  /* small constants carry their values */
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "var b : f32[3] persistable = [1.0, 2.0, 3.0]"));
  CU_ASSERT_EQUAL(((float *)q->vars[2]->data)[2], 3.0f);
  free(text);
  free(again);
  dy_program_free(q);
  dy_program_free(p);
  /* errors name the line */
  const char *bad = "program {\n  var x : f32[2] feed 0\n  block 0 parent -1 {\n"
                    "    y = relu(x)\n  }\n}\n";
  CU_ASSERT_EQUAL(dy_program_parse(bad, &q, &err), DY_STATUS_FORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 4: unknown var 'y'"));
  const char *attrs = "program {\n var x : f32[2,3] feed 0\n var y : f32[3,2]\n"
                      " block 0 parent -1 {\n  y = transpose(x) {perm = [1, 0]} @a.c:7\n }\n"
                      " fetch 0 y\n}\n";
  DY_ASSERT_OK(dy_program_parse(attrs, &q, &err), &err);
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  CU_ASSERT_EQUAL(q->blocks[0]->ops[0]->loc.line, 7);
  dy_program_free(q);
}

/* Every dtype's constants print as the values they hold and read back: an
 * i32 is four bytes and an i8 signed (the printer once read every narrow
 * dtype as one unsigned byte, so i32 [300, -1] came back as [1, 1]); a
 * value outside its dtype is an error naming it. */
static void test_parse_print_every_dtype(void) {
  const char *text = "program {\n"
                     "  var a : i32[2] persistable = [300, -1]\n"
                     "  var b : i8[2] persistable = [-128, 127]\n"
                     "  var c : u8[2] persistable = [0, 255]\n"
                     "  var d : i64[2] persistable = [-9000000000, 7]\n"
                     "  var e : f32[2] persistable = [0.1, -2.5]\n"
                     "  var f : bool[2] persistable = [1, 0]\n"
                     "  block 0 parent -1 {\n  }\n}\n";
  dy_program *q = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &q, &err), &err);
  CU_ASSERT_EQUAL(((const int32_t *)q->vars[0]->data)[0], 300);
  CU_ASSERT_EQUAL(((const int32_t *)q->vars[0]->data)[1], -1);
  CU_ASSERT_EQUAL(((const int8_t *)q->vars[1]->data)[0], -128);
  CU_ASSERT_EQUAL(((const uint8_t *)q->vars[2]->data)[1], 255);
  CU_ASSERT_EQUAL(((const int64_t *)q->vars[3]->data)[0], -9000000000LL);
  CU_ASSERT_EQUAL(((const float *)q->vars[4]->data)[0], 0.1f);
  char *out = dy_program_to_text(q);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "var a : i32[2] persistable = [300, -1]\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "var b : i8[2] persistable = [-128, 127]\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "var c : u8[2] persistable = [0, 255]\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "var d : i64[2] persistable = [-9000000000, 7]\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "var e : f32[2] persistable = [0.10000000149011612, -2.5]\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "var f : bool[2] persistable = [1, 0]\n"));
  dy_program *r = NULL;
  DY_ASSERT_OK(dy_program_parse(out, &r, &err), &err);
  char *again = dy_program_to_text(r);
  CU_ASSERT_STRING_EQUAL(out, again);
  for (int v = 0; v < q->n_vars; v++)
    CU_ASSERT_EQUAL(memcmp(q->vars[v]->data, r->vars[v]->data,
                           (size_t)dy_type_numel(&q->vars[v]->type) *
                               dy_dtype_size(q->vars[v]->type.dtype)), 0);
  free(out);
  free(again);
  dy_program_free(r);
  dy_program_free(q);
  /* out of range */
  const char *bad = "program {\n  var a : i8[1] persistable = [300]\n"
                    "  block 0 parent -1 {\n  }\n}\n";
  CU_ASSERT_EQUAL(dy_program_parse(bad, &q, &err), DY_STATUS_FORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 2: value 300 is out of range for i8 (-128..127)"));
}

/* The dtype table (dtypes.def) and the readers and printers built on it:
 * each dtype's name, size and .npy descr read back, elements convert as
 * dy_ir.h says, and the tensor printer, dy_item and .npy keep an i8's sign
 * and an i32's four bytes. */
static void test_dtype_table(void) {
  static const char *const names[] = {"f32", "i64", "bool", "i8", "u8", "i32"};
  static const size_t sizes[] = {4, 8, 1, 1, 1, 4};
  CU_ASSERT_EQUAL(DY_DTYPE_COUNT, 6);
  for (int k = 0; k < DY_DTYPE_COUNT; k++) {
    dy_dtype t = (dy_dtype)k, back;
    CU_ASSERT_STRING_EQUAL(dy_dtype_name(t), names[k]);
    CU_ASSERT_EQUAL(dy_dtype_size(t), sizes[k]);
    CU_ASSERT(dy_dtype_from_name(names[k], &back) && back == t);
    CU_ASSERT(dy_dtype_from_npy(dy_dtype_npy(t), &back) && back == t);
  }
  CU_ASSERT_STRING_EQUAL(dy_dtype_npy(DY_I32), "<i4");
  CU_ASSERT_STRING_EQUAL(dy_dtype_ctype(DY_BOOL), "uint8_t");
  CU_ASSERT_STRING_EQUAL(dy_dtype_name((dy_dtype)99), "?");
  int64_t lo, hi;
  CU_ASSERT(dy_dtype_int_range(DY_U8, &lo, &hi) && lo == 0 && hi == 255);
  CU_ASSERT_FALSE(dy_dtype_int_range(DY_BOOL, &lo, &hi));
  CU_ASSERT_FALSE(dy_dtype_int_range(DY_F32, &lo, &hi));
  /* conversions */
  int8_t q[4];
  dy_dtype_set_f64(DY_I8, q, 0, 300.0);
  dy_dtype_set_f64(DY_I8, q, 1, -1e30);
  dy_dtype_set_f64(DY_I8, q, 2, NAN);
  dy_dtype_set_i64(DY_I8, q, 3, 300);
  CU_ASSERT(q[0] == 127 && q[1] == -128 && q[2] == 0 && q[3] == 44);
  uint8_t bo = 7;
  dy_dtype_set_i64(DY_BOOL, &bo, 0, 5);
  CU_ASSERT_EQUAL(bo, 1);
  float f[2];
  dy_dtype_set_f64(DY_F32, f, 0, 1e300);
  dy_dtype_set_f64(DY_F32, f, 1, -2.75);
  CU_ASSERT(isinf(f[0]) && f[0] > 0);
  CU_ASSERT_EQUAL(dy_dtype_get_i64(DY_F32, f, 1), -2);
  CU_ASSERT_EQUAL(dy_dtype_get_i64(DY_F32, f, 0), INT64_MAX);
  int32_t w[2] = {300, -1};
  char buf[32];
  CU_ASSERT_STRING_EQUAL(dy_dtype_format(buf, sizeof buf, DY_I32, w, 1, 0), "-1");
  CU_ASSERT_EQUAL(dy_dtype_get_f64(DY_I32, w, 0), 300.0);
  float tenth = 0.1f;
  CU_ASSERT_STRING_EQUAL(dy_dtype_format(buf, sizeof buf, DY_F32, &tenth, 0, 6), "0.1");
  CU_ASSERT_STRING_EQUAL(dy_dtype_format(buf, sizeof buf, DY_F32, &tenth, 0, 0),
                         "0.10000000149011612");
  CU_ASSERT_STRING_EQUAL(dy_float_str(2.0, buf, sizeof buf), "2.0");
  /* the runtime's readers */
  dy_tensor *ti = dy_tensor_from_data(DY_I32, 1, (int64_t[]){1}, (int32_t[]){300});
  dy_tensor *tb = dy_tensor_from_data(DY_I8, 1, (int64_t[]){2}, (int8_t[]){-128, 127});
  bool ok = false;
  CU_ASSERT_EQUAL(dy_item(ti, &ok), 300.0);
  CU_ASSERT(ok);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  dy_tensor_print(tb, "q", 8, out);
  dy_tensor_print(ti, "b", 8, out);
  fclose(out);
  CU_ASSERT_STRING_EQUAL(text, "q: i8[2] = -128 127\nb: i32[1] = 300\n");
  free(text);
  char path[] = "/tmp/dy_test_dtype_XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(path, tb, &err), &err);
  dy_tensor *back = NULL;
  DY_ASSERT_OK(dy_npy_read(path, &back, &err), &err);
  CU_ASSERT(back->type.dtype == DY_I8 && ((const int8_t *)back->data)[0] == -128);
  remove(path);
  dy_tensor_free(back);
  dy_tensor_free(tb);
  dy_tensor_free(ti);
}

/* An op made from others lists each one's kind and line: dy_op_set_srcs
 * orders them by op id, flattens nested lists, drops repeats; the text
 * form prints and parses them back, and the single-location form still
 * reads as before. */
static void test_op_sources(void) {
  dy_program *p = small_program(), *q = NULL;
  dy_error err = {0};
  dy_op **ops = p->blocks[0]->ops;
  /* matmul (m.c:1) + add (m.c:2) stand behind relu (m.c:3), listed last
   * first on purpose: the list comes out in program order */
  CU_ASSERT_FATAL(dy_op_set_srcs(p, ops[2], (const dy_op *const[]){ops[2], ops[1], ops[0]}, 3));
  CU_ASSERT_EQUAL_FATAL(ops[2]->n_srcs, 3);
  CU_ASSERT_EQUAL(ops[2]->srcs[0].kind, DY_OP_MATMUL);
  CU_ASSERT_EQUAL(ops[2]->srcs[0].loc.line, 1);
  CU_ASSERT_STRING_EQUAL(ops[2]->srcs[0].loc.file, "m.c");
  CU_ASSERT_EQUAL(ops[2]->srcs[1].kind, DY_OP_ADD);
  CU_ASSERT_EQUAL(ops[2]->srcs[1].loc.line, 2);
  CU_ASSERT_EQUAL(ops[2]->srcs[2].kind, DY_OP_RELU);
  CU_ASSERT_EQUAL(ops[2]->srcs[2].loc.line, 3);
  CU_ASSERT_EQUAL(ops[2]->loc.line, 3); /* the message line is unchanged */
  /* an op standing for itself alone lists nothing more */
  CU_ASSERT_FATAL(dy_op_set_srcs(p, ops[1], (const dy_op *const[]){ops[1], ops[1]}, 2));
  CU_ASSERT_EQUAL(ops[1]->n_srcs, 0);
  /* nested: a list already made is taken whole, without repeats */
  CU_ASSERT_FATAL(dy_op_set_srcs(p, ops[1], (const dy_op *const[]){ops[2], ops[0]}, 2));
  CU_ASSERT_EQUAL(ops[1]->n_srcs, 3);
  CU_ASSERT_FATAL(dy_op_set_srcs(p, ops[1], (const dy_op *const[]){ops[0]}, 1));
  CU_ASSERT_EQUAL_FATAL(ops[1]->n_srcs, 1); /* another kind: kept */
  CU_ASSERT_EQUAL(ops[1]->srcs[0].kind, DY_OP_MATMUL);
  ops[1]->n_srcs = 0;

  char *text = dy_program_to_text(p);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "    out = relu(g)  @m.c:3 [m.c:1 matmul, m.c:2 add, m.c:3 relu]\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "    g = add(h, b)  @m.c:2\n"));
  DY_ASSERT_OK(dy_program_parse(text, &q, &err), &err);
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  const dy_op *r = q->blocks[0]->ops[2];
  CU_ASSERT_EQUAL_FATAL(r->n_srcs, 3);
  CU_ASSERT_EQUAL(r->srcs[0].kind, DY_OP_MATMUL);
  CU_ASSERT_STRING_EQUAL(r->srcs[1].loc.file, "m.c");
  CU_ASSERT_EQUAL(r->srcs[1].loc.line, 2);
  CU_ASSERT_EQUAL(q->blocks[0]->ops[1]->n_srcs, 0);
  char *again = dy_program_to_text(q);
  CU_ASSERT_STRING_EQUAL(text, again);
  free(text);
  free(again);
  dy_program_free(q);
  /* the Graphviz label lists them too */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  dy_program_print_dot(p, f);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "label=\"relu\\nm.c:1 matmul\\nm.c:2 add\\nm.c:3 relu\""));
  free(buf);
  dy_program_free(p);

  /* by hand: no primary location, an unknown file ('?'), and errors */
  const char *src = "program {\n var x : f32[2] feed 0\n var y : f32[2]\n"
                    " block 0 parent -1 {\n  y = relu(x) [?:0 sigmoid, b.c:9 relu]\n }\n"
                    " fetch 0 y\n}\n";
  DY_ASSERT_OK(dy_program_parse(src, &q, &err), &err);
  r = q->blocks[0]->ops[0];
  CU_ASSERT_PTR_NULL(r->loc.file);
  CU_ASSERT_EQUAL_FATAL(r->n_srcs, 2);
  CU_ASSERT_PTR_NULL(r->srcs[0].loc.file);
  CU_ASSERT_EQUAL(r->srcs[0].kind, DY_OP_SIGMOID);
  CU_ASSERT_STRING_EQUAL(r->srcs[1].loc.file, "b.c");
  CU_ASSERT_EQUAL(r->srcs[1].loc.line, 9);
  text = dy_program_to_text(q);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "  y = relu(x)  [?:0 sigmoid, b.c:9 relu]\n"));
  free(text);
  dy_program_free(q);
  const char *bad = "program {\n var x : f32[2] feed 0\n var y : f32[2]\n"
                    " block 0 parent -1 {\n  y = relu(x) @a.c:1 [a.c:1 frobnicate]\n }\n}\n";
  CU_ASSERT_EQUAL(dy_program_parse(bad, &q, &err), DY_STATUS_FORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 5: unknown op 'frobnicate'"));
  bad = "program {\n var x : f32[2] feed 0\n var y : f32[2]\n"
        " block 0 parent -1 {\n  y = relu(x) @a.c:1 [a.c relu]\n }\n}\n";
  CU_ASSERT_EQUAL(dy_program_parse(bad, &q, &err), DY_STATUS_FORMAT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 5: expected ':'"));
}

/* ---- typed attributes from the op table ---- */

/* An op of kind k carrying attrs (the stack form eager calls use). */
static dy_op op_with(dy_op_kind k, const dy_attr *attrs, int n) {
  return (dy_op){.id = 5, .kind = k, .attrs = (dy_attr *)attrs, .n_attrs = n,
                 .loc = {"attrs.c", 9}};
}

static void test_attr_defaults(void) {
  dy_error err = {0};
  /* conv2d without attributes: every field is the table's default */
  dy_op op = op_with(DY_OP_CONV2D, NULL, 0);
  dy_conv2d_attrs c;
  DY_ASSERT_OK(dy_conv2d_attrs_of(&op, &c, &err), &err);
  CU_ASSERT_EQUAL(c.given, 0u);
  CU_ASSERT_EQUAL_FATAL(c.n_strides, 2);
  CU_ASSERT(c.strides[0] == 1 && c.strides[1] == 1);
  CU_ASSERT_EQUAL_FATAL(c.n_paddings, 2);
  CU_ASSERT(c.paddings[0] == 0 && c.paddings[1] == 0);
  CU_ASSERT(c.n_dilations == 2 && c.dilations[0] == 1 && c.dilations[1] == 1);
  CU_ASSERT_EQUAL(c.groups, 1);
  /* a given attribute wins and is marked given; the rest stay defaults */
  dy_attr g2[] = {DY_ATTR_I("groups", 2), DY_ATTR_IS("strides", DY_SHAPE(2, 3), 2)};
  op = op_with(DY_OP_CONV2D, g2, 2);
  DY_ASSERT_OK(dy_conv2d_attrs_of(&op, &c, &err), &err);
  CU_ASSERT_EQUAL(c.groups, 2);
  CU_ASSERT(c.strides[0] == 2 && c.strides[1] == 3);
  CU_ASSERT_EQUAL(c.given, (1u << 0) | (1u << 3)); /* strides, groups: schema order */
  CU_ASSERT_EQUAL(c.dilations[1], 1);
  /* pool2d: exclusive defaults to 1, float defaults too (batch_norm) */
  dy_attr pt[] = {DY_ATTR_S("pooling_type", "avg")};
  op = op_with(DY_OP_POOL2D, pt, 1);
  dy_pool2d_attrs pa = dy_pool2d_attrs_get(&op);
  CU_ASSERT_STRING_EQUAL(pa.pooling_type, "avg");
  CU_ASSERT_EQUAL(pa.exclusive, 1);
  CU_ASSERT_EQUAL(pa.global_pooling, 0);
  op = op_with(DY_OP_BATCH_NORM, NULL, 0);
  CU_ASSERT_DOUBLE_EQUAL(dy_batch_norm_attrs_get(&op).epsilon, 1e-5, 1e-12);
  CU_ASSERT_STRING_EQUAL(dy_attr_schema_find(DY_OP_SCATTER_ND, "reduction")->dflt.s, "none");
  /* inference applies the defaults: a 3x3 conv, stride 1, no padding */
  dy_type out, in[2] = {T(4, DY_SHAPE(1, 3, 8, 8)), T(4, DY_SHAPE(4, 3, 3, 3))};
  DY_ASSERT_OK(infer1(DY_OP_CONV2D, NULL, 0, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(1, 4, 6, 6)));
  /* the generic float getter falls back on the same default */
  double eps = 0;
  op = op_with(DY_OP_LAYER_NORM, NULL, 0);
  DY_ASSERT_OK(dy_op_attr_float(&op, "epsilon", &eps, &err), &err);
  CU_ASSERT_DOUBLE_EQUAL(eps, 1e-5, 1e-12);
  /* a required attribute has no default: named when absent */
  op = op_with(DY_OP_POOL2D, NULL, 0);
  CU_ASSERT_EQUAL(dy_pool2d_attrs_of(&op, &pa, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "pool2d: missing attribute 'pooling_type'"));
  CU_ASSERT_EQUAL(err.loc.line, 9);
}

/* A value of kind k that is not the schema's kind. */
static dy_attr other_kind(const char *name, dy_attr_kind k) {
  return k == DY_ATTR_STRING ? DY_ATTR_I(name, 1) : DY_ATTR_S(name, "x");
}

/* Every op's typed accessor agrees with its schema: it exists, reads the
 * whole schema (every attribute given -> every bit of `given`), fills
 * defaults for the rest, and rejects each attribute of the wrong kind
 * naming op and attribute. */
static void test_every_op_has_a_typed_accessor(void) {
  _Alignas(16) unsigned char buf[512];
  int with_attrs = 0;
  for (int k = 0; k < DY_OP_COUNT; k++) {
    const dy_op_info *info = dy_op_info_of((dy_op_kind)k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dy_attrs_table[k]);
    CU_ASSERT_FATAL(dy_attrs_size[k] <= sizeof buf);
    CU_ASSERT_FATAL(info->n_attrs <= 16);
    if (info->n_attrs == 0) {
      CU_ASSERT_EQUAL(dy_attrs_size[k], sizeof(unsigned));
      continue;
    }
    with_attrs++;
    CU_ASSERT(dy_attrs_size[k] > sizeof(unsigned));
    dy_attr all[16], req[16];
    int n_req = 0;
    unsigned req_bits = 0;
    for (int i = 0; i < info->n_attrs; i++) {
      const dy_attr_schema *e = &info->attrs[i];
      CU_ASSERT_PTR_EQUAL(dy_attr_schema_find((dy_op_kind)k, e->name), e);
      CU_ASSERT_EQUAL(e->dflt.kind, e->kind);
      all[i] = e->dflt;
      if (e->required) {
        req[n_req++] = e->dflt;
        req_bits |= 1u << i;
      }
    }
    dy_error err = {0};
    unsigned given;
    dy_op op = op_with((dy_op_kind)k, all, info->n_attrs);
    DY_ASSERT_OK(dy_attrs_table[k](&op, buf, &err), &err);
    memcpy(&given, buf, sizeof given);
    CU_ASSERT_EQUAL(given, (1u << info->n_attrs) - 1);
    op = op_with((dy_op_kind)k, req, n_req);
    DY_ASSERT_OK(dy_attrs_table[k](&op, buf, &err), &err);
    memcpy(&given, buf, sizeof given);
    CU_ASSERT_EQUAL(given, req_bits);
    for (int i = 0; i < info->n_attrs; i++) {
      dy_attr bad[16];
      memcpy(bad, all, sizeof(dy_attr) * (size_t)info->n_attrs);
      bad[i] = other_kind(info->attrs[i].name, info->attrs[i].kind);
      op = op_with((dy_op_kind)k, bad, info->n_attrs);
      CU_ASSERT_EQUAL(dy_attrs_table[k](&op, buf, &err), DY_STATUS_INVALID_ARGUMENT);
      char want[128];
      snprintf(want, sizeof want, "%s: attribute '%s' is ", info->name, info->attrs[i].name);
      if (!strstr(err.msg, want))
        fprintf(stderr, "\n  expected '%s', got: %s\n", want, err.msg);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    }
  }
  CU_ASSERT(with_attrs >= 40);
}

/* The typed writers: a struct written back gives the attributes it was read
 * from, the given ones only, in schema order; DY_GIVEN names a field's bit
 * and DY_<NAME>_NATTRS the schema's length. */
static void test_attr_writers(void) {
  /* a literal: strides and groups given, the rest left to the defaults */
  dy_attr at[DY_CONV2D_NATTRS];
  CU_ASSERT_EQUAL(DY_CONV2D_NATTRS, 4);
  CU_ASSERT_EQUAL(DY_GIVEN(conv2d, groups), 1u << 3);
  int n = dy_conv2d_attrs_put(&(dy_conv2d_attrs){.given = DY_GIVEN(conv2d, groups) |
                                                          DY_GIVEN(conv2d, strides),
                                                 .strides = DY_SHAPE(2, 3), .n_strides = 2,
                                                 .groups = 4},
                              at);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_STRING_EQUAL(at[0].name, "strides");
  CU_ASSERT(at[0].kind == DY_ATTR_INTS && at[0].n == 2 && at[0].ints[1] == 3);
  CU_ASSERT_STRING_EQUAL(at[1].name, "groups");
  CU_ASSERT(at[1].kind == DY_ATTR_INT && at[1].i == 4);
  dy_op op = op_with(DY_OP_CONV2D, at, n);
  dy_conv2d_attrs c = dy_conv2d_attrs_get(&op);
  CU_ASSERT_EQUAL(c.given, DY_GIVEN(conv2d, strides) | DY_GIVEN(conv2d, groups));
  CU_ASSERT(c.groups == 4 && c.dilations[0] == 1);
  /* every attribute, every kind: a string and a float */
  dy_attr pa[DY_POOL2D_NATTRS];
  n = dy_pool2d_attrs_put(&(dy_pool2d_attrs){.given = DY_GIVEN_ALL, .pooling_type = "avg",
                                             .ksize = DY_SHAPE(2, 2), .n_ksize = 2,
                                             .strides = DY_SHAPE(2, 2), .n_strides = 2,
                                             .paddings = DY_SHAPE(0, 0), .n_paddings = 2,
                                             .exclusive = 1},
                          pa);
  CU_ASSERT_EQUAL_FATAL(n, 8);
  CU_ASSERT_STRING_EQUAL(pa[0].s, "avg");
  CU_ASSERT_STRING_EQUAL(pa[7].name, "adaptive");
  dy_attr ea[DY_LEAKY_RELU_NATTRS];
  CU_ASSERT_EQUAL(dy_leaky_relu_attrs_put(&(dy_leaky_relu_attrs){.given = DY_GIVEN_ALL,
                                                                  .alpha = 0.25},
                                          ea),
                  1);
  CU_ASSERT(ea[0].kind == DY_ATTR_FLOAT && ea[0].f == 0.25);
  /* every op: read (all given, or none) and write back, through the table */
  _Alignas(16) unsigned char buf[512];
  for (int k = 0; k < DY_OP_COUNT; k++) {
    const dy_op_info *info = dy_op_info_of((dy_op_kind)k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dy_attrs_put_table[k]);
    dy_attr all[16], back[16];
    for (int i = 0; i < info->n_attrs; i++)
      all[i] = info->attrs[i].dflt;
    dy_error err = {0};
    op = op_with((dy_op_kind)k, all, info->n_attrs);
    DY_ASSERT_OK(dy_attrs_table[k](&op, buf, &err), &err);
    CU_ASSERT_EQUAL_FATAL(dy_attrs_put_table[k](buf, back), info->n_attrs);
    for (int i = 0; i < info->n_attrs; i++) {
      CU_ASSERT_STRING_EQUAL(back[i].name, info->attrs[i].name);
      CU_ASSERT_EQUAL(back[i].kind, info->attrs[i].kind);
      CU_ASSERT(back[i].i == all[i].i && back[i].f == all[i].f && back[i].n == all[i].n);
    }
    op = op_with((dy_op_kind)k, NULL, 0);
    dy_attrs_table[k](&op, buf, &err);
    CU_ASSERT_EQUAL(dy_attrs_put_table[k](buf, back), 0);
  }
}

static void test_attr_wrong_kind_rejected(void) {
  /* the verifier names op and attribute */
  dy_program *p = small_program();
  dy_error err = {0};
  p->blocks[0]->ops[0]->attrs[1].kind = DY_ATTR_FLOAT;
  CU_ASSERT_EQUAL(dy_verify(p, &err), DY_STATUS_INVALID_IR);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "invariant 4 (attributes): op 0 (matmul): attribute "
                                        "'transpose_y' is float, should be int"));
  dy_program_free(p);
  /* and so does the parser, for each form of value */
  static const char *const bad[][2] = {
      {"y = transpose(x) {perm = 1}", "transpose: attribute 'perm' is a scalar, should be ints"},
      {"y = transpose(x) {perm = \"a\"}", "transpose: attribute 'perm' is a string, should be ints"},
      {"y = transpose(x) {perm = [1.5, 0]}", "transpose: attribute 'perm' is a list of floats"},
      {"y = softmax(x) {axis = 1.5}", "softmax: attribute 'axis' is a float, should be int"},
      {"y = softmax(x) {axis = [1]}", "softmax: attribute 'axis' is a list, should be int"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "program {\n var x : f32[2,3] feed 0\n var y : f32[3,2]\n block 0 parent -1 {\n"
             "  %s\n }\n fetch 0 y\n}\n", bad[i][0]);
    dy_program *q = NULL;
    CU_ASSERT_EQUAL(dy_program_parse(text, &q, &err), DY_STATUS_FORMAT);
    if (!strstr(err.msg, bad[i][1]))
      fprintf(stderr, "\n  expected '%s', got: %s\n", bad[i][1], err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 5: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i][1]));
    dy_program_free(q);
  }
}

static void test_conv_pool_geometry(void) {
  dy_error err = {0};
  dy_type out;
  /* conv2d, asymmetric [t,l,b,r] padding, per-axis stride and dilation:
   * oh = (7 + 1 + 2 - (2*(3-1) + 1)) / 2 + 1 = 3,
   * ow = (9 + 0 + 1 - (1*(2-1) + 1)) / 3 + 1 = 3 */
  dy_attr ca[] = {DY_ATTR_IS("strides", DY_SHAPE(2, 3), 2),
                  DY_ATTR_IS("paddings", DY_SHAPE(1, 0, 2, 1), 4),
                  DY_ATTR_IS("dilations", DY_SHAPE(2, 1), 2), DY_ATTR_I("groups", 1)};
  dy_type in[2] = {T(4, DY_SHAPE(1, 1, 7, 9)), T(4, DY_SHAPE(5, 1, 3, 2))};
  dy_op op = op_with(DY_OP_CONV2D, ca, 4);
  dy_conv2d_attrs a = dy_conv2d_attrs_get(&op);
  dy_conv_geom g = dy_conv2d_geom(&in[0], &in[1], &a);
  CU_ASSERT(g.pt == 1 && g.pl == 0 && g.pb == 2 && g.pr == 1);
  CU_ASSERT(g.sh == 2 && g.sw == 3 && g.dh == 2 && g.dw == 1);
  CU_ASSERT(g.o == 5 && g.oh == 3 && g.ow == 3 && g.kh == 3 && g.kw == 2);
  DY_ASSERT_OK(infer1(DY_OP_CONV2D, ca, 4, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(1, 5, 3, 3)));
  /* [h, w] padding is both sides: oh = 5 + 2 - 3 + 1, ow = 5 + 4 - 3 + 1 */
  ca[0] = DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2);
  ca[1] = DY_ATTR_IS("paddings", DY_SHAPE(1, 2), 2);
  ca[2] = DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2);
  in[0] = T(4, DY_SHAPE(1, 1, 5, 5));
  in[1] = T(4, DY_SHAPE(2, 1, 3, 3));
  a = dy_conv2d_attrs_get(&op);
  g = dy_conv2d_geom(&in[0], &in[1], &a);
  CU_ASSERT(g.pt == 1 && g.pb == 1 && g.pl == 2 && g.pr == 2);
  CU_ASSERT(g.oh == 5 && g.ow == 7);
  DY_ASSERT_OK(infer1(DY_OP_CONV2D, ca, 4, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(1, 2, 5, 7)));
  int64_t p4[4];
  dy_pads4(DY_SHAPE(3, 4), 2, p4);
  CU_ASSERT(p4[0] == 3 && p4[1] == 4 && p4[2] == 3 && p4[3] == 4);
  dy_pads4(NULL, 0, p4);
  CU_ASSERT(p4[0] == 0 && p4[3] == 0);

  /* conv2d_transpose: oh = (3-1)*2 - 1 - 0 + 1*(3-1) + 1 + 1 = 7,
   * ow = (4-1)*2 - 0 - 1 + 2*(3-1) + 0 + 1 = 10; o = 3 per group */
  dy_attr ta[] = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2),
                  DY_ATTR_IS("paddings", DY_SHAPE(1, 0, 0, 1), 4),
                  DY_ATTR_IS("dilations", DY_SHAPE(1, 2), 2), DY_ATTR_I("groups", 1),
                  DY_ATTR_IS("output_padding", DY_SHAPE(1, 0), 2)};
  in[0] = T(4, DY_SHAPE(1, 2, 3, 4));
  in[1] = T(4, DY_SHAPE(2, 3, 3, 3));
  op = op_with(DY_OP_CONV2D_TRANSPOSE, ta, 5);
  dy_conv2d_transpose_attrs tt = dy_conv2d_transpose_attrs_get(&op);
  g = dy_conv2d_transpose_geom(&in[0], &in[1], &tt);
  CU_ASSERT(g.o == 3 && g.oh == 7 && g.ow == 10 && g.oph == 1 && g.opw == 0);
  DY_ASSERT_OK(infer1(DY_OP_CONV2D_TRANSPOSE, ta, 5, in, 2, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(1, 3, 7, 10)));

  /* pool2d, ceil_mode: H 8 padded to 10, windows of 3 at stride 2 ->
   * ceil((10-3)/2)+1 = 5; W 8 padded to 9 (right 1), windows of 2 at
   * stride 3 -> ceil((9-2)/3)+1 = 4, but the 4th would start at 9, past
   * the input and its left padding, so 3 */
  dy_attr pa[] = {DY_ATTR_S("pooling_type", "max"), DY_ATTR_IS("ksize", DY_SHAPE(3, 2), 2),
                  DY_ATTR_IS("strides", DY_SHAPE(2, 3), 2),
                  DY_ATTR_IS("paddings", DY_SHAPE(1, 0, 1, 1), 4), DY_ATTR_I("ceil_mode", 1),
                  DY_ATTR_I("exclusive", 0), DY_ATTR_I("global_pooling", 0),
                  DY_ATTR_I("adaptive", 0)};
  in[0] = T(4, DY_SHAPE(2, 3, 8, 8));
  op = op_with(DY_OP_POOL2D, pa, 8);
  dy_pool2d_attrs pl = dy_pool2d_attrs_get(&op);
  dy_pool_geom pg = dy_pool2d_geom(&in[0], &pl);
  CU_ASSERT(pg.mode == DY_POOL_WINDOWS && pg.max && !pg.exclusive);
  CU_ASSERT(pg.lo[0] == 1 && pg.lo[1] == 0 && pg.hi[0] == 1 && pg.hi[1] == 1);
  CU_ASSERT(pg.oh == 5 && pg.ow == 3);
  DY_ASSERT_OK(infer1(DY_OP_POOL2D, pa, 8, in, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(2, 3, 5, 3)));
  pa[4] = DY_ATTR_I("ceil_mode", 0); /* floor: (10-3)/2+1 = 4, (9-2)/3+1 = 3 */
  pl = dy_pool2d_attrs_get(&op);
  pg = dy_pool2d_geom(&in[0], &pl);
  CU_ASSERT(pg.oh == 4 && pg.ow == 3);
  DY_ASSERT_OK(infer1(DY_OP_POOL2D, pa, 8, in, 1, &out, &err), &err);
  CU_ASSERT(shape_is(&out, 4, DY_SHAPE(2, 3, 4, 3)));
  pa[7] = DY_ATTR_I("adaptive", 1); /* ksize is the output size */
  pl = dy_pool2d_attrs_get(&op);
  pg = dy_pool2d_geom(&in[0], &pl);
  CU_ASSERT(pg.mode == DY_POOL_ADAPTIVE && pg.oh == 3 && pg.ow == 2);
  pa[6] = DY_ATTR_I("global_pooling", 1);
  pl = dy_pool2d_attrs_get(&op);
  pg = dy_pool2d_geom(&in[0], &pl);
  CU_ASSERT(pg.mode == DY_POOL_GLOBAL && pg.oh == 1 && pg.ow == 1);
}

void dy_test_register(void) {
  DY_SUITE("ir");
  DY_TEST(test_every_op_has_every_part);
  DY_TEST(test_infer_broadcast);
  DY_TEST(test_infer_matmul);
  DY_TEST(test_infer_reshape);
  DY_TEST(test_infer_flatten_transpose_softmax);
  DY_TEST(test_verifier);
  DY_TEST(test_verifier_names_the_op_line);
  DY_TEST(test_printer);
  DY_TEST(test_crc32_and_types);
  DY_TEST(test_memplan);
  DY_TEST(test_parse_round_trip);
  DY_TEST(test_parse_print_every_dtype);
  DY_TEST(test_dtype_table);
  DY_TEST(test_op_sources);
  DY_TEST(test_attr_defaults);
  DY_TEST(test_every_op_has_a_typed_accessor);
  DY_TEST(test_attr_writers);
  DY_TEST(test_attr_wrong_kind_rejected);
  DY_TEST(test_conv_pool_geometry);
}
