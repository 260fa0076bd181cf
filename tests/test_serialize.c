/* test_serialize.c - .dymodel and .dyparams files (ir/program/serialize.c, params.c).
 *
 * A small hand-built Program - a dynamic dim, every dtype, every attribute
 * kind, a rank-0 parameter, a sub-block, ops with and without a source
 * location - must come back from encode/decode and save/load equal in every
 * field, parameters bit-exact (NaN payloads, -0, subnormals), and encode to
 * the same bytes every time. Every damaged file - each truncation, each
 * flipped bit, a newer version, an unknown op, text, a missing file - must
 * give an error, never a crash (run under ASan: buffers are copied to exact
 * size so an over-read is caught).
 *
 * tests/data/compat_v1.* and compat_v1_kinds.* were written once by dy2stc
 * 0.1.0 (.dymodel version 1, .dyparams version 1) with dy_model_save from
 * make_compat_v1() and make_compat_kinds() below. Never regenerate them:
 * they stand for files users already have, and must keep loading.
 *
 * Files are written in the working directory (the build's tests dir) with
 * names starting "serialize_", and removed afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"
#include "dy_test.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

#define ASSERT_MSG_HAS(err, text)                                             \
  do {                                                                        \
    if (!strstr((err).msg, (text)))                                           \
      fprintf(stderr, "\n  %s:%d: message \"%s\" lacks \"%s\"\n", __FILE__,   \
              __LINE__, (err).msg, (text));                                   \
    CU_ASSERT_PTR_NOT_NULL(strstr((err).msg, (text)));                        \
  } while (0)

static int add_var(dy_program *p, const char *name, dy_dtype dtype, int rank,
                   const int64_t *shape) {
  dy_type t = {.dtype = dtype, .rank = rank};
  for (int i = 0; i < rank; i++)
    t.shape[i] = shape[i];
  int id = dy_program_add_var(p, name, &t);
  CU_ASSERT_FATAL(id >= 0);
  return id;
}

/* VAR(p, "x", DY_F32, -1, 10): a var of shape [-1, 10] (rank >= 1). */
#define VAR(p, name, dtype, ...)                                         \
  add_var((p), (name), (dtype),                                          \
          (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
          (int64_t[]){__VA_ARGS__})

static void set_data(dy_program *p, int var, const void *data, size_t n) {
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_set_data(p, var, data, n, &err), &err);
}

static void op(dy_program *p, int block, dy_op_kind kind, const int *in,
               int n_in, int out, const dy_attr *attrs, int n_attrs,
               dy_srcloc loc) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(dy_program_append_op(
      p, block, kind, in, n_in, &out, 1, attrs, n_attrs, loc));
}


static float f32_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static void write_bytes(const char *path, const void *buf, size_t len) {
  FILE *f = fopen(path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(fwrite(buf, 1, len, f), len);
  fclose(f);
}

static bool file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f)
    fclose(f);
  return f != NULL;
}

/* A .dymodel ends with the checksum field: tag 0xFD 0x7F, then CRC-32 of
 * every byte before the tag, little-endian (dymodel.proto). Tests that
 * patch a file recompute it, so the reader gets past the checksum to the
 * check under test. */
static void fix_dymodel_checksum(uint8_t *buf, size_t len) {
  CU_ASSERT_FATAL(len >= 6 && buf[len - 6] == 0xFD && buf[len - 5] == 0x7F);
  uint32_t crc = dy_crc32(0, buf, len - 6);
  for (int i = 0; i < 4; i++)
    buf[len - 4 + i] = (uint8_t)(crc >> (8 * i));
}

/* Replaces the first occurrence of pattern (same length) in buf. */
static void patch(uint8_t *buf, size_t len, const void *from, const void *to,
                  size_t n) {
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(buf + i, from, n) == 0) {
      memcpy(buf + i, to, n);
      return;
    }
  CU_FAIL_FATAL("pattern to patch not found");
}

/* ------------------------------------------------------------------ */
/* The test program                                                    */
/* ------------------------------------------------------------------ */

/* feeds x f32[-1,10], y f32[3]; parameters w f32[10,3], b f32[3] (with
 * odd float bit patterns), steps i64[2], mask bool[3], scale f32[] (rank
 * 0); matmul -> add -> add -> relu -> reshape -> softmax, a full op without
 * source location, a relu in sub-block 1; fetches softmax out, then add. */
static dy_program *make_program(void) {
  dy_program *p = dy_program_new();
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_error err = {0};

  int x = VAR(p, "x", DY_F32, -1, 10);
  int y = VAR(p, "y", DY_F32, 3);
  int w = VAR(p, "w", DY_F32, 10, 3);
  int b = VAR(p, "b", DY_F32, 3);
  int steps = VAR(p, "steps", DY_I64, 2);
  int mask = VAR(p, "mask", DY_BOOL, 3);
  int scale = add_var(p, "scale", DY_F32, 0, NULL);
  int h0 = VAR(p, "matmul_0.out", DY_F32, -1, 3);
  int h1 = VAR(p, "add_0.out", DY_F32, -1, 3);
  int h2 = VAR(p, "add_1.out", DY_F32, -1, 3);
  int h3 = VAR(p, "relu_0.out", DY_F32, -1, 3);
  int h4 = VAR(p, "reshape_0.out", DY_F32, -1, 3, 1);
  int h5 = VAR(p, "softmax_0.out", DY_F32, -1, 3, 1);
  int c = VAR(p, "full_0.out", DY_F32, 3);
  int sub = VAR(p, "sub.out", DY_F32, 3);

  float wd[30];
  for (int i = 0; i < 30; i++)
    wd[i] = (float)(i - 15) * 0.37f;
  wd[0] = f32_bits(0x7fc00123u); /* NaN with a payload */
  wd[1] = -0.0f;
  wd[2] = f32_bits(0x00000001u); /* smallest subnormal */
  wd[3] = f32_bits(0xff800000u); /* -inf */
  float bd[3] = {0.5f, -1.25f, 3e38f};
  int64_t sd[2] = {-5, INT64_MAX};
  uint8_t md[3] = {1, 0, 1};
  float scd = 0.125f;
  set_data(p, w, wd, sizeof wd);
  set_data(p, b, bd, sizeof bd);
  set_data(p, steps, sd, sizeof sd);
  set_data(p, mask, md, sizeof md);
  set_data(p, scale, &scd, sizeof scd);

  dy_attr mm[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
  op(p, 0, DY_OP_MATMUL, (int[]){x, w}, 2, h0, mm, 2,
     (dy_srcloc){"model.c", 10});
  op(p, 0, DY_OP_ADD, (int[]){h0, b}, 2, h1, NULL, 0,
     (dy_srcloc){"model.c", 11});
  op(p, 0, DY_OP_ADD, (int[]){h1, y}, 2, h2, NULL, 0,
     (dy_srcloc){"model.c", 12});
  op(p, 0, DY_OP_RELU, (int[]){h2}, 1, h3, NULL, 0,
     (dy_srcloc){"model.c", 13});
  static const int64_t shape[] = {0, 3, 1};
  dy_attr rs[] = {DY_ATTR_IS("shape", shape, 3)};
  op(p, 0, DY_OP_RESHAPE, (int[]){h3}, 1, h4, rs, 1,
     (dy_srcloc){"model.c", 14});
  static const float scales[] = {0.5f, -2.25f, 1e-7f};
  dy_attr sm[] = {
      DY_ATTR_I("axis", -1),
      DY_ATTR_F("eps", 0.1), /* not exact in float: checks double */
      DY_ATTR_FS("scales", scales, 3),
      DY_ATTR_S("note", "hello, world"),
      DY_ATTR_I("big", INT64_MIN),
      DY_ATTR_IS("empty", NULL, 0),
      DY_ATTR_S("blank", ""),
  };
  op(p, 0, DY_OP_SOFTMAX, (int[]){h4}, 1, h5, sm, 7,
     (dy_srcloc){"layers/norm.c", 15});
  static const int64_t three[] = {3};
  dy_attr fa[] = {DY_ATTR_IS("shape", three, 1), DY_ATTR_F("value", 0.5),
                  DY_ATTR_I("dtype", DY_F32)};
  op(p, 0, DY_OP_FULL, NULL, 0, c, fa, 3, (dy_srcloc){NULL, 0});
  int blk = dy_program_add_block(p, 0);
  p->vars[sub]->block = blk;
  op(p, blk, DY_OP_RELU, (int[]){c}, 1, sub, NULL, 0,
     (dy_srcloc){"model.c", 20});
  /* as if fused: the relu stands for the four ops before it, and the
   * softmax for itself and an op of unknown location */
  dy_op **ops = p->blocks[0]->ops;
  CU_ASSERT_FATAL(dy_op_set_srcs(p, ops[3], (const dy_op *const *)ops, 4));
  ops[5]->srcs = dy_program_alloc(p, 2 * sizeof(dy_op_src));
  CU_ASSERT_PTR_NOT_NULL_FATAL(ops[5]->srcs);
  ops[5]->srcs[0] = (dy_op_src){DY_OP_SIGMOID, {NULL, 0}};
  ops[5]->srcs[1] = (dy_op_src){DY_OP_SOFTMAX, ops[5]->loc};
  ops[5]->n_srcs = 2;

  DY_ASSERT_OK(dy_program_add_feed(p, x, &err), &err);
  DY_ASSERT_OK(dy_program_add_feed(p, y, &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(p, h5, &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(p, h1, &err), &err);
  return p;
}

static void assert_same_attr(const dy_attr *a, const dy_attr *b) {
  CU_ASSERT_STRING_EQUAL(a->name, b->name);
  CU_ASSERT_EQUAL_FATAL(a->kind, b->kind);
  switch (a->kind) {
  case DY_ATTR_INT:
    CU_ASSERT_EQUAL(a->i, b->i);
    break;
  case DY_ATTR_FLOAT:
    CU_ASSERT(memcmp(&a->f, &b->f, sizeof a->f) == 0);
    break;
  case DY_ATTR_INTS:
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    CU_ASSERT(a->n == 0 || memcmp(a->ints, b->ints, sizeof *a->ints *
                                                        (size_t)a->n) == 0);
    break;
  case DY_ATTR_FLOATS:
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    CU_ASSERT(a->n == 0 || memcmp(a->floats, b->floats,
                                  sizeof *a->floats * (size_t)a->n) == 0);
    break;
  case DY_ATTR_STRING:
    CU_ASSERT_STRING_EQUAL(a->s, b->s);
    break;
  }
}

/* Every serialized field of a and b agrees; with_data: b's parameters are
 * bit-identical to a's, else b has none yet. */
static void assert_same_program(const dy_program *a, const dy_program *b,
                                bool with_data) {
  CU_ASSERT_EQUAL_FATAL(a->n_vars, b->n_vars);
  for (int i = 0; i < a->n_vars; i++) {
    const dy_var *va = a->vars[i], *vb = b->vars[i];
    CU_ASSERT_EQUAL(vb->id, i);
    CU_ASSERT_STRING_EQUAL(va->name, vb->name);
    CU_ASSERT(dy_type_equal(&va->type, &vb->type));
    CU_ASSERT_EQUAL(va->persistable, vb->persistable);
    CU_ASSERT_EQUAL(va->block, vb->block);
    CU_ASSERT_EQUAL(va->feed_index, vb->feed_index);
    CU_ASSERT_EQUAL(va->fetch_index, vb->fetch_index);
    if (va->persistable && with_data) {
      size_t n = (size_t)dy_type_numel(&va->type) *
                 dy_dtype_size(va->type.dtype);
      CU_ASSERT_PTR_NOT_NULL_FATAL(vb->data);
      CU_ASSERT(memcmp(va->data, vb->data, n) == 0);
    } else if (!with_data) {
      CU_ASSERT_PTR_NULL(vb->data);
    }
  }
  CU_ASSERT_EQUAL_FATAL(a->n_blocks, b->n_blocks);
  for (int bi = 0; bi < a->n_blocks; bi++) {
    const dy_block *ba = a->blocks[bi], *bb = b->blocks[bi];
    CU_ASSERT_EQUAL(bb->idx, bi);
    CU_ASSERT_EQUAL(ba->parent, bb->parent);
    CU_ASSERT_EQUAL_FATAL(ba->n_ops, bb->n_ops);
    for (int i = 0; i < ba->n_ops; i++) {
      const dy_op *oa = ba->ops[i], *ob = bb->ops[i];
      CU_ASSERT_EQUAL(oa->id, ob->id);
      CU_ASSERT_EQUAL(oa->kind, ob->kind);
      CU_ASSERT_EQUAL(ob->block, bi);
      CU_ASSERT_EQUAL_FATAL(oa->n_inputs, ob->n_inputs);
      CU_ASSERT_EQUAL_FATAL(oa->n_outputs, ob->n_outputs);
      for (int k = 0; k < oa->n_inputs; k++)
        CU_ASSERT_EQUAL(oa->inputs[k], ob->inputs[k]);
      for (int k = 0; k < oa->n_outputs; k++)
        CU_ASSERT_EQUAL(oa->outputs[k], ob->outputs[k]);
      CU_ASSERT_EQUAL_FATAL(oa->n_attrs, ob->n_attrs);
      for (int k = 0; k < oa->n_attrs; k++)
        assert_same_attr(&oa->attrs[k], &ob->attrs[k]);
      CU_ASSERT_EQUAL(oa->loc.line, ob->loc.line);
      CU_ASSERT_EQUAL(oa->loc.file == NULL, ob->loc.file == NULL);
      if (oa->loc.file && ob->loc.file)
        CU_ASSERT_STRING_EQUAL(oa->loc.file, ob->loc.file);
      CU_ASSERT_EQUAL_FATAL(oa->n_srcs, ob->n_srcs);
      for (int k = 0; k < oa->n_srcs; k++) {
        const dy_op_src *sa = &oa->srcs[k], *sb = &ob->srcs[k];
        CU_ASSERT_EQUAL(sa->kind, sb->kind);
        CU_ASSERT_EQUAL(sa->loc.line, sb->loc.line);
        CU_ASSERT_EQUAL(sa->loc.file == NULL, sb->loc.file == NULL);
        if (sa->loc.file && sb->loc.file)
          CU_ASSERT_STRING_EQUAL(sa->loc.file, sb->loc.file);
      }
    }
  }
  CU_ASSERT_EQUAL_FATAL(a->n_feeds, b->n_feeds);
  CU_ASSERT_EQUAL_FATAL(a->n_fetches, b->n_fetches);
  for (int i = 0; i < a->n_feeds; i++)
    CU_ASSERT_EQUAL(a->feeds[i], b->feeds[i]);
  for (int i = 0; i < a->n_fetches; i++)
    CU_ASSERT_EQUAL(a->fetches[i], b->fetches[i]);
}

/* The test program encoded: .dymodel and .dyparams bytes (malloc'd). */
typedef struct {
  dy_program *p;
  uint8_t *model, *params;
  size_t model_len, params_len;
} encoded;

static encoded encode_test_program(void) {
  encoded e = {make_program(), NULL, NULL, 0, 0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_dymodel_encode(e.p, &e.model, &e.model_len, &err), &err);
  DY_ASSERT_OK(dy_dyparams_encode(e.p, &e.params, &e.params_len, &err),
               &err);
  return e;
}

static void encoded_free(encoded *e) {
  dy_program_free(e->p);
  free(e->model);
  free(e->params);
}

/* Decodes the test program's .dymodel: parameters not yet filled. */
static dy_program *decode_structure(const encoded *e) {
  dy_error err = {0};
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_dymodel_decode(e->model, e->model_len, &q, &err), &err);
  return q;
}

/* ------------------------------------------------------------------ */
/* Round trips and determinism                                         */
/* ------------------------------------------------------------------ */

static void test_roundtrip_memory(void) {
  encoded e = encode_test_program();
  dy_error err = {0};
  dy_program *q = decode_structure(&e);
  assert_same_program(e.p, q, false);
  DY_ASSERT_OK(dy_dyparams_decode(q, e.params, e.params_len, &err), &err);
  assert_same_program(e.p, q, true);

  /* A few fields spelled out, in case make_program and the comparison
   * agree on something wrong. */
  const dy_var *x = q->vars[dy_program_find_var(q, "x")];
  CU_ASSERT_EQUAL(x->type.shape[0], -1);
  CU_ASSERT_EQUAL(x->feed_index, 0);
  const dy_op *sm = q->blocks[0]->ops[5];
  CU_ASSERT_EQUAL(sm->kind, DY_OP_SOFTMAX);
  CU_ASSERT_STRING_EQUAL(sm->loc.file, "layers/norm.c");
  CU_ASSERT_EQUAL(sm->loc.line, 15);
  CU_ASSERT_STRING_EQUAL(dy_op_find_attr(sm, "note")->s, "hello, world");
  CU_ASSERT_EQUAL(dy_op_find_attr(sm, "big")->i, INT64_MIN);
  CU_ASSERT_EQUAL(dy_op_find_attr(sm, "eps")->f, 0.1);
  CU_ASSERT_PTR_NULL(q->blocks[0]->ops[6]->loc.file);
  /* a fused op's sources */
  const dy_op *relu = q->blocks[0]->ops[3];
  CU_ASSERT_EQUAL_FATAL(relu->n_srcs, 4);
  CU_ASSERT_EQUAL(relu->srcs[0].kind, DY_OP_MATMUL);
  CU_ASSERT_STRING_EQUAL(relu->srcs[0].loc.file, "model.c");
  CU_ASSERT_EQUAL(relu->srcs[0].loc.line, 10);
  CU_ASSERT_EQUAL(relu->srcs[2].kind, DY_OP_ADD);
  CU_ASSERT_EQUAL(relu->srcs[2].loc.line, 12);
  CU_ASSERT_EQUAL(relu->srcs[3].kind, DY_OP_RELU);
  CU_ASSERT_EQUAL_FATAL(sm->n_srcs, 2);
  CU_ASSERT_PTR_NULL(sm->srcs[0].loc.file);
  CU_ASSERT_EQUAL(sm->srcs[0].kind, DY_OP_SIGMOID);
  CU_ASSERT_EQUAL(q->blocks[0]->ops[0]->n_srcs, 0);
  CU_ASSERT_EQUAL(q->blocks[1]->parent, 0);
  const dy_var *steps = q->vars[dy_program_find_var(q, "steps")];
  CU_ASSERT_EQUAL(((const int64_t *)steps->data)[1], INT64_MAX);
  const dy_var *w = q->vars[dy_program_find_var(q, "w")];
  uint32_t bits;
  memcpy(&bits, w->data, 4);
  CU_ASSERT_EQUAL(bits, 0x7fc00123u);
  dy_program_free(q);
  encoded_free(&e);
}

static void test_encoding_is_deterministic(void) {
  encoded a = encode_test_program(), b = encode_test_program();
  CU_ASSERT_EQUAL_FATAL(a.model_len, b.model_len);
  CU_ASSERT(memcmp(a.model, b.model, a.model_len) == 0);
  CU_ASSERT_EQUAL_FATAL(a.params_len, b.params_len);
  CU_ASSERT(memcmp(a.params, b.params, a.params_len) == 0);

  /* A decoded program encodes to the very same bytes. */
  dy_error err = {0};
  dy_program *q = decode_structure(&a);
  DY_ASSERT_OK(dy_dyparams_decode(q, a.params, a.params_len, &err), &err);
  uint8_t *buf;
  size_t len;
  DY_ASSERT_OK(dy_dymodel_encode(q, &buf, &len, &err), &err);
  CU_ASSERT(len == a.model_len && memcmp(buf, a.model, len) == 0);
  free(buf);
  DY_ASSERT_OK(dy_dyparams_encode(q, &buf, &len, &err), &err);
  CU_ASSERT(len == a.params_len && memcmp(buf, a.params, len) == 0);
  free(buf);
  dy_program_free(q);
  encoded_free(&a);
  encoded_free(&b);
}

static void test_params_layout(void) {
  /* The documented layout, checked byte by byte on the first record. */
  encoded e = encode_test_program();
  const uint8_t *b = e.params;
  CU_ASSERT(memcmp(b, "DYPARAMS", 8) == 0);
  CU_ASSERT(b[8] == 1 && b[9] == 0 && b[10] == 0 && b[11] == 0);
  CU_ASSERT(b[12] == 5 && b[13] == 0); /* w, b, steps, mask, scale */
  CU_ASSERT(b[16] == 1 && b[17] == 0 && b[20] == 'w');   /* name "w" */
  CU_ASSERT(b[21] == DY_F32 && b[25] == 2);              /* dtype, rank */
  CU_ASSERT(b[29] == 10 && b[37] == 3);                  /* dims */
  CU_ASSERT(b[45] == 120 && b[46] == 0);                 /* data bytes */
  CU_ASSERT(b[53] == 0x23 && b[54] == 0x01 && b[55] == 0xc0 && b[56] == 0x7f);
  uint32_t crc = dy_crc32(0, b + 16, 37 + 120);
  const uint8_t *c = b + 16 + 37 + 120;
  CU_ASSERT_EQUAL(crc, (uint32_t)c[0] | (uint32_t)c[1] << 8 |
                           (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24);
  size_t n = e.params_len;
  uint32_t file_crc = dy_crc32(0, b, n - 4);
  CU_ASSERT_EQUAL(file_crc, (uint32_t)b[n - 4] | (uint32_t)b[n - 3] << 8 |
                                (uint32_t)b[n - 2] << 16 |
                                (uint32_t)b[n - 1] << 24);
  encoded_free(&e);
}

static void test_file_roundtrip(void) {
  encoded e = encode_test_program();
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_save(e.p, "serialize_rt", &err), &err);
  CU_ASSERT(file_exists("serialize_rt.dymodel"));
  CU_ASSERT(file_exists("serialize_rt.dyparams"));

  /* The name works with or without either extension. */
  const char *names[] = {"serialize_rt", "serialize_rt.dymodel",
                         "serialize_rt.dyparams"};
  for (int i = 0; i < 3; i++) {
    dy_program *q = NULL;
    DY_ASSERT_OK(dy_model_load(names[i], &q, &err), &err);
    assert_same_program(e.p, q, true);
    dy_program_free(q);
  }

  /* The files hold exactly the encoded bytes. */
  uint8_t *buf;
  size_t len;
  DY_ASSERT_OK(dy_read_file("serialize_rt.dymodel", &buf, &len, &err), &err);
  CU_ASSERT(len == e.model_len && memcmp(buf, e.model, len) == 0);
  free(buf);
  DY_ASSERT_OK(dy_read_file("serialize_rt.dyparams", &buf, &len, &err), &err);
  CU_ASSERT(len == e.params_len && memcmp(buf, e.params, len) == 0);
  free(buf);

  /* Saving through a name with an extension writes the same pair. */
  DY_ASSERT_OK(dy_model_save(e.p, "serialize_rt.dyparams", &err), &err);
  CU_ASSERT(!file_exists("serialize_rt.dyparams.dymodel"));
  remove("serialize_rt.dymodel");
  remove("serialize_rt.dyparams");
  encoded_free(&e);
}

/* The pair in two steps (compile --save-model): encoding writes nothing,
 * the write gives the bytes dy_model_save gives; an empty name is refused
 * (it would write the hidden pair '.dymodel' + '.dyparams'). */
static void test_pair_encode_then_write(void) {
  encoded e = encode_test_program();
  dy_error err = {0};
  dy_model_pair m;
  DY_ASSERT_OK(dy_model_pair_encode(e.p, "serialize_pair.dymodel", &m, &err), &err);
  CU_ASSERT(!file_exists("serialize_pair.dymodel") && !file_exists("serialize_pair.dyparams"));
  CU_ASSERT(m.len[1] == e.model_len && memcmp(m.buf[1], e.model, e.model_len) == 0);
  CU_ASSERT(m.len[0] == e.params_len && memcmp(m.buf[0], e.params, e.params_len) == 0);
  DY_ASSERT_OK(dy_model_pair_write(&m, &err), &err);
  dy_model_pair_free(&m);
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_model_load("serialize_pair", &q, &err), &err);
  assert_same_program(e.p, q, true);
  dy_program_free(q);
  remove("serialize_pair.dymodel");
  remove("serialize_pair.dyparams");
  CU_ASSERT_EQUAL(dy_model_save(e.p, "", &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT(strstr(err.msg, "is not a file name stem") != NULL);
  CU_ASSERT(!file_exists(".dymodel") && !file_exists(".dyparams"));
  encoded_free(&e);
}

/* ------------------------------------------------------------------ */
/* Damaged files                                                       */
/* ------------------------------------------------------------------ */

static void test_truncated_dymodel(void) {
  encoded e = encode_test_program();
  for (size_t n = 0; n < e.model_len; n++) {
    uint8_t *cut = malloc(n ? n : 1); /* exact size: ASan sees over-reads */
    memcpy(cut, e.model, n);
    dy_error err = {0};
    dy_program *q = (dy_program *)&err; /* must be reset to NULL */
    dy_status s = dy_dymodel_decode(cut, n, &q, &err);
    CU_ASSERT_EQUAL(s, DY_STATUS_FORMAT);
    CU_ASSERT_PTR_NULL(q);
    if (s == DY_OK)
      dy_program_free(q);
    if (!strstr(err.msg, "truncated"))
      fprintf(stderr, "\n  prefix %zu: %s\n", n, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
    free(cut);
  }
  encoded_free(&e);
}

static void test_truncated_dyparams(void) {
  encoded e = encode_test_program();
  dy_program *q = decode_structure(&e);
  for (size_t n = 0; n < e.params_len; n++) {
    uint8_t *cut = malloc(n ? n : 1);
    memcpy(cut, e.params, n);
    dy_error err = {0};
    CU_ASSERT_EQUAL(dy_dyparams_decode(q, cut, n, &err), DY_STATUS_FORMAT);
    if (n >= 8) {
      char want[64];
      snprintf(want, sizeof want, "truncated at byte %zu", n);
      ASSERT_MSG_HAS(err, want);
    }
    free(cut);
  }
  /* Whole or nothing: no failed read left data behind. */
  for (int i = 0; i < q->n_vars; i++)
    CU_ASSERT_PTR_NULL(q->vars[i]->data);
  dy_program_free(q);
  encoded_free(&e);
}

static void test_flipped_bits_dyparams(void) {
  encoded e = encode_test_program();
  dy_program *q = decode_structure(&e);
  uint8_t *bad = malloc(e.params_len);
  int undetected = 0;
  for (size_t i = 0; i < e.params_len; i++)
    for (int bit = 0; bit < 8; bit++) {
      memcpy(bad, e.params, e.params_len);
      bad[i] ^= (uint8_t)(1u << bit);
      dy_error err = {0};
      dy_status s = dy_dyparams_decode(q, bad, e.params_len, &err);
      if (s == DY_OK) {
        undetected++;
        fprintf(stderr, "\n  flip of byte %zu bit %d undetected\n", i, bit);
      }
      /* Version bytes read as a newer version; all else is malformed. */
      bool version_byte = i >= 8 && i < 12;
      CU_ASSERT(s == DY_STATUS_FORMAT ||
                (version_byte && s == DY_STATUS_VERSION));
    }
  CU_ASSERT_EQUAL(undetected, 0);

  /* Damage inside w's data is reported against w. */
  memcpy(bad, e.params, e.params_len);
  bad[60] ^= 0x10;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_dyparams_decode(q, bad, e.params_len, &err),
                  DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "'w'");
  ASSERT_MSG_HAS(err, "checksum");
  for (int i = 0; i < q->n_vars; i++)
    CU_ASSERT_PTR_NULL(q->vars[i]->data);
  free(bad);
  dy_program_free(q);
  encoded_free(&e);
}

static void test_flipped_bits_dymodel(void) {
  encoded e = encode_test_program();
  uint8_t *bad = malloc(e.model_len);
  int undetected = 0;
  for (size_t i = 0; i < e.model_len; i++)
    for (int bit = 0; bit < 8; bit++) {
      memcpy(bad, e.model, e.model_len);
      bad[i] ^= (uint8_t)(1u << bit);
      dy_error err = {0};
      dy_program *q = NULL;
      dy_status s = dy_dymodel_decode(bad, e.model_len, &q, &err);
      if (s == DY_OK) {
        undetected++;
        dy_program_free(q);
      }
    }
  CU_ASSERT_EQUAL(undetected, 0);
  free(bad);
  encoded_free(&e);
}

/* xorshift32: a fixed, portable sequence, so failures reproduce. */
static uint32_t next_random(uint32_t *state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* Bit flips only reach the checksum. Here random damage gets a valid
 * checksum, so it reaches protobuf-c and every check behind it; whatever
 * decodes must then encode again and survive the verifier. */
static void test_fuzz_dymodel(void) {
  encoded e = encode_test_program();
  size_t body = e.model_len - 6;
  uint32_t rng = 12345;
  int accepted = 0;
  for (int iter = 0; iter < 4000; iter++) {
    size_t len = e.model_len;
    uint8_t *bad = malloc(len);
    memcpy(bad, e.model, len);
    if (iter % 4 == 3) {
      /* pure garbage of random length, then a valid checksum */
      len = 6 + next_random(&rng) % 64;
      for (size_t i = 0; i + 6 < len; i++)
        bad[i] = (uint8_t)next_random(&rng);
      bad[len - 6] = 0xFD;
      bad[len - 5] = 0x7F;
    } else {
      int n = 1 + (int)(next_random(&rng) % 4);
      for (int k = 0; k < n; k++) {
        uint32_t r = next_random(&rng);
        bad[r % body] = (uint8_t)(r >> 24);
      }
    }
    fix_dymodel_checksum(bad, len);
    uint8_t *exact = malloc(len); /* exact size for ASan */
    memcpy(exact, bad, len);
    dy_error err = {0};
    dy_program *q = NULL;
    if (dy_dymodel_decode(exact, len, &q, &err) == DY_OK) {
      accepted++;
      uint8_t *again;
      size_t again_len;
      DY_ASSERT_OK(dy_dymodel_encode(q, &again, &again_len, &err), &err);
      free(again);
      dy_verify(q, &err); /* may fail; must not crash */
      dy_program_free(q);
    } else {
      CU_ASSERT_PTR_NULL(q);
      CU_ASSERT(err.msg[0] != 0);
    }
    free(exact);
    free(bad);
  }
  /* Some damage (a changed name, attribute value, line) is valid. */
  CU_ASSERT(accepted > 0);
  encoded_free(&e);
}

static void test_newer_version(void) {
  encoded e = encode_test_program();
  dy_error err = {0};
  dy_program *q = NULL;

  /* .dymodel: field 1 (version) is the first two bytes, 08 01. */
  CU_ASSERT_FATAL(e.model[0] == 0x08 && e.model[1] == DY_DYMODEL_VERSION);
  e.model[1] = 99;
  fix_dymodel_checksum(e.model, e.model_len);
  CU_ASSERT_EQUAL(dy_dymodel_decode(e.model, e.model_len, &q, &err),
                  DY_STATUS_VERSION);
  CU_ASSERT_PTR_NULL(q);
  ASSERT_MSG_HAS(err, "99");
  ASSERT_MSG_HAS(err, "version 3,");
  write_bytes("serialize_v99.dymodel", e.model, e.model_len);
  CU_ASSERT_EQUAL(dy_dymodel_read("serialize_v99.dymodel", &q, &err),
                  DY_STATUS_VERSION);
  CU_ASSERT_EQUAL(strncmp(err.msg, "serialize_v99.dymodel: ", 23), 0);
  ASSERT_MSG_HAS(err, "99");
  remove("serialize_v99.dymodel");

  /* Version 0 is no version at all. */
  e.model[1] = 0;
  fix_dymodel_checksum(e.model, e.model_len);
  CU_ASSERT_EQUAL(dy_dymodel_decode(e.model, e.model_len, &q, &err),
                  DY_STATUS_FORMAT);

  /* .dyparams: u32 version at byte 8. */
  dy_program *p2 = make_program();
  e.params[8] = 99;
  CU_ASSERT_EQUAL(dy_dyparams_decode(p2, e.params, e.params_len, &err),
                  DY_STATUS_VERSION);
  ASSERT_MSG_HAS(err, "99");
  ASSERT_MSG_HAS(err, "version 1,");
  dy_program_free(p2);
  encoded_free(&e);
}

/* a f32[2] -relu-> b f32[2], encoded. */
static void tiny_model(uint8_t **buf, size_t *len) {
  dy_program *p = dy_program_new();
  dy_error err = {0};
  int a = VAR(p, "a", DY_F32, 2), b = VAR(p, "b", DY_F32, 2);
  op(p, 0, DY_OP_RELU, (int[]){a}, 1, b, NULL, 0, (dy_srcloc){"tiny.c", 3});
  DY_ASSERT_OK(dy_program_add_feed(p, a, &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(p, b, &err), &err);
  DY_ASSERT_OK(dy_dymodel_encode(p, buf, len, &err), &err);
  dy_program_free(p);
}

static void test_unknown_op(void) {
  uint8_t *buf;
  size_t len;
  tiny_model(&buf, &len);
  /* Op.type is field 1, length 4: 0A 04 "relu". */
  patch(buf, len, "\x0a\x04relu", "\x0a\x04" "frob", 6);
  fix_dymodel_checksum(buf, len);
  dy_error err = {0};
  dy_program *q = NULL;
  CU_ASSERT_EQUAL(dy_dymodel_decode(buf, len, &q, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NULL(q);
  ASSERT_MSG_HAS(err, "'frob'");
  ASSERT_MSG_HAS(err, "op 0");
  CU_ASSERT_STRING_EQUAL(err.loc.file, "tiny.c"); /* the op's location */
  free(buf);
}

static void test_bad_references(void) {
  /* Var "b" renamed to "c": the op's output names nothing. Var.name is
   * field 1: 0A 01 "b" (op outputs are field 3, fetches field 6). */
  uint8_t *buf;
  size_t len;
  dy_error err = {0};
  dy_program *q = NULL;
  tiny_model(&buf, &len);
  patch(buf, len, "\x0a\x01" "b", "\x0a\x01" "c", 3);
  fix_dymodel_checksum(buf, len);
  CU_ASSERT_EQUAL(dy_dymodel_decode(buf, len, &q, &err), DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "unknown var 'b'");
  free(buf);

  /* Var "b" renamed to "a": declared twice. */
  tiny_model(&buf, &len);
  patch(buf, len, "\x0a\x01" "b", "\x0a\x01" "a", 3);
  fix_dymodel_checksum(buf, len);
  CU_ASSERT_EQUAL(dy_dymodel_decode(buf, len, &q, &err), DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "'a' declared twice");
  free(buf);

  /* The fetch renamed to "z". */
  tiny_model(&buf, &len);
  patch(buf, len, "\x32\x01" "b", "\x32\x01" "z", 3);
  fix_dymodel_checksum(buf, len);
  CU_ASSERT_EQUAL(dy_dymodel_decode(buf, len, &q, &err), DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "fetch 0 names unknown var 'z'");
  free(buf);
  CU_ASSERT_PTR_NULL(q);
}

static void test_params_mismatch(void) {
  encoded e = encode_test_program();
  dy_error err = {0};

  /* Same element count, other shape. */
  dy_program *q = decode_structure(&e);
  dy_var *w = q->vars[dy_program_find_var(q, "w")];
  w->type.shape[0] = 3;
  w->type.shape[1] = 10;
  CU_ASSERT_EQUAL(dy_dyparams_decode(q, e.params, e.params_len, &err),
                  DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "'w'");
  ASSERT_MSG_HAS(err, "f32[10,3]");
  for (int i = 0; i < q->n_vars; i++)
    CU_ASSERT_PTR_NULL(q->vars[i]->data);
  dy_program_free(q);

  /* Other dtype. */
  q = decode_structure(&e);
  q->vars[dy_program_find_var(q, "steps")]->type.dtype = DY_F32;
  CU_ASSERT_EQUAL(dy_dyparams_decode(q, e.params, e.params_len, &err),
                  DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "'steps'");
  dy_program_free(q);

  /* An extra tensor in the file. */
  q = decode_structure(&e);
  q->vars[dy_program_find_var(q, "b")]->persistable = false;
  CU_ASSERT_EQUAL(dy_dyparams_decode(q, e.params, e.params_len, &err),
                  DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "'b' is not a persistable var");
  dy_program_free(q);

  /* A tensor missing from the file. */
  q = decode_structure(&e);
  int extra = VAR(q, "extra", DY_F32, 1);
  q->vars[extra]->persistable = true;
  CU_ASSERT_EQUAL(dy_dyparams_decode(q, e.params, e.params_len, &err),
                  DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "'extra' is missing");
  dy_program_free(q);
  encoded_free(&e);
}

static void test_unsaveable_program(void) {
  /* A persistable var without data cannot be saved; nothing is written. */
  dy_program *p = make_program();
  int v = VAR(p, "no_data", DY_F32, 2);
  p->vars[v]->persistable = true;
  dy_error err = {0};
  uint8_t *buf = (uint8_t *)&err;
  size_t len = 1;
  CU_ASSERT_EQUAL(dy_dyparams_encode(p, &buf, &len, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NULL(buf);
  ASSERT_MSG_HAS(err, "'no_data'");
  CU_ASSERT_NOT_EQUAL(dy_model_save(p, "serialize_unsaved", &err), DY_OK);
  ASSERT_MSG_HAS(err, "serialize_unsaved.dyparams: ");
  CU_ASSERT(!file_exists("serialize_unsaved.dymodel"));
  CU_ASSERT(!file_exists("serialize_unsaved.dyparams"));
  dy_program_free(p);
}

/* A source of an unknown kind cannot be saved. */
static void test_unsaveable_source(void) {
  dy_program *p = make_program();
  p->blocks[0]->ops[3]->srcs[1].kind = DY_OP_COUNT;
  dy_error err = {0};
  uint8_t *buf = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL(dy_dymodel_encode(p, &buf, &len, &err), DY_STATUS_INVALID_IR);
  ASSERT_MSG_HAS(err, "source 1 has unknown kind");
  CU_ASSERT_EQUAL(err.loc.line, 13);
  free(buf);
  dy_program_free(p);
}

static void test_missing_file(void) {
  dy_error err = {0};
  dy_program *q = (dy_program *)&err;
  CU_ASSERT_EQUAL(dy_model_load("serialize_no_such_model", &q, &err),
                  DY_STATUS_IO);
  CU_ASSERT_PTR_NULL(q);
  ASSERT_MSG_HAS(err, "serialize_no_such_model.dymodel");

  /* The .dymodel exists but the .dyparams does not. */
  encoded e = encode_test_program();
  write_bytes("serialize_half.dymodel", e.model, e.model_len);
  CU_ASSERT_EQUAL(dy_model_load("serialize_half", &q, &err), DY_STATUS_IO);
  CU_ASSERT_PTR_NULL(q);
  ASSERT_MSG_HAS(err, "serialize_half.dyparams");
  remove("serialize_half.dymodel");
  encoded_free(&e);
}

static void test_not_a_model(void) {
  static const char text[] = "this is a text file, not a model\n";
  write_bytes("serialize_text.dymodel", text, sizeof text - 1);
  write_bytes("serialize_text.dyparams", text, sizeof text - 1);
  dy_error err = {0};
  dy_program *q = NULL;
  CU_ASSERT_EQUAL(dy_model_load("serialize_text", &q, &err), DY_STATUS_FORMAT);
  CU_ASSERT_PTR_NULL(q);
  CU_ASSERT_EQUAL(strncmp(err.msg, "serialize_text.dymodel: ", 24), 0);

  dy_program *p = make_program();
  CU_ASSERT_EQUAL(dy_dyparams_read(p, "serialize_text.dyparams", &err),
                  DY_STATUS_FORMAT);
  ASSERT_MSG_HAS(err, "serialize_text.dyparams: not a .dyparams file");
  dy_program_free(p);

  /* Empty files and NULL buffers, too. */
  write_bytes("serialize_text.dymodel", "", 0);
  CU_ASSERT_EQUAL(dy_dymodel_read("serialize_text.dymodel", &q, &err),
                  DY_STATUS_FORMAT);
  CU_ASSERT_EQUAL(dy_dymodel_decode(NULL, 0, &q, &err), DY_STATUS_FORMAT);
  remove("serialize_text.dymodel");
  remove("serialize_text.dyparams");
}

/* ------------------------------------------------------------------ */
/* Compatibility: files written by version 1                           */
/* ------------------------------------------------------------------ */

/* What tests/data/compat_v1.* hold: a tiny valid model.
 *   x f32[-1,4] -matmul fc.w f32[4,2]-> h -add fc.b-> h2 -relu-> h3
 *   -reshape [0,2]-> h4 -softmax axis -1-> h5 ; full [2] 1.5 f32 -> c ;
 *   mul(h5, c) -> y (fetched) */
#define LOC(line) ((dy_srcloc){"compat.c", (line)})

static dy_program *make_compat_v1(void) {
  dy_program *p = dy_program_new();
  dy_error err = {0};
  int x = VAR(p, "x", DY_F32, -1, 4);
  int w = VAR(p, "fc.w", DY_F32, 4, 2);
  int b = VAR(p, "fc.b", DY_F32, 2);
  int h = VAR(p, "h", DY_F32, -1, 2), h2 = VAR(p, "h2", DY_F32, -1, 2);
  int h3 = VAR(p, "h3", DY_F32, -1, 2), h4 = VAR(p, "h4", DY_F32, -1, 2);
  int h5 = VAR(p, "h5", DY_F32, -1, 2), c = VAR(p, "c", DY_F32, 2);
  int y = VAR(p, "y", DY_F32, -1, 2);
  static const float wd[8] = {0.5f, -1, 1.5f, -2, 2.5f, -3, 3.5f, -4};
  static const float bd[2] = {0.25f, -0.25f};
  set_data(p, w, wd, sizeof wd);
  set_data(p, b, bd, sizeof bd);
  dy_attr mm[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
  op(p, 0, DY_OP_MATMUL, (int[]){x, w}, 2, h, mm, 2, LOC(10));
  op(p, 0, DY_OP_ADD, (int[]){h, b}, 2, h2, NULL, 0, LOC(11));
  op(p, 0, DY_OP_RELU, (int[]){h2}, 1, h3, NULL, 0, LOC(12));
  static const int64_t shape[] = {0, 2};
  dy_attr rs[] = {DY_ATTR_IS("shape", shape, 2)};
  op(p, 0, DY_OP_RESHAPE, (int[]){h3}, 1, h4, rs, 1, LOC(13));
  dy_attr sm[] = {DY_ATTR_I("axis", -1)};
  op(p, 0, DY_OP_SOFTMAX, (int[]){h4}, 1, h5, sm, 1, LOC(14));
  static const int64_t two[] = {2};
  dy_attr fa[] = {DY_ATTR_IS("shape", two, 1), DY_ATTR_F("value", 1.5),
                  DY_ATTR_I("dtype", DY_F32)};
  op(p, 0, DY_OP_FULL, NULL, 0, c, fa, 3, LOC(15));
  op(p, 0, DY_OP_MUL, (int[]){h5, c}, 2, y, NULL, 0, LOC(16));
  DY_ASSERT_OK(dy_program_add_feed(p, x, &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(p, y, &err), &err);
  return p;
}

/* What tests/data/compat_v1_kinds.* hold: every dtype and attribute kind,
 * a rank-0 parameter, a sub-block and an op without location. It is not a
 * valid model (the attributes are not add's), only a format sample. */
static dy_program *make_compat_kinds(void) {
  dy_program *p = dy_program_new();
  dy_error err = {0};
  int x = VAR(p, "x", DY_F32, -1, 3);
  int flags = VAR(p, "flags", DY_BOOL, 4);
  int ids = VAR(p, "ids", DY_I64, 3);
  int scale = add_var(p, "scale", DY_F32, 0, NULL);
  int out = VAR(p, "out", DY_F32, -1, 3);
  int sub = VAR(p, "sub.out", DY_F32, -1, 3);
  static const uint8_t fd[4] = {1, 0, 0, 1};
  static const int64_t id[3] = {-1, 0, (int64_t)1 << 40};
  static const float sd = 2.5f;
  set_data(p, flags, fd, sizeof fd);
  set_data(p, ids, id, sizeof id);
  set_data(p, scale, &sd, sizeof sd);
  static const int64_t is[] = {1, -2, 3};
  static const float fs[] = {0.5f, -1.25f};
  dy_attr a[] = {DY_ATTR_I("i", 7), DY_ATTR_F("f", 0.1),
                 DY_ATTR_IS("is", is, 3), DY_ATTR_FS("fs", fs, 2),
                 DY_ATTR_S("s", "text")};
  op(p, 0, DY_OP_ADD, (int[]){x, scale}, 2, out, a, 5,
     (dy_srcloc){"kinds.c", 5});
  int blk = dy_program_add_block(p, 0);
  p->vars[sub]->block = blk;
  op(p, blk, DY_OP_RELU, (int[]){out}, 1, sub, NULL, 0, (dy_srcloc){NULL, 0});
  DY_ASSERT_OK(dy_program_add_feed(p, x, &err), &err);
  DY_ASSERT_OK(dy_program_add_fetch(p, out, &err), &err);
  return p;
}

static void test_compat_v1(void) {
  dy_error err = {0};
  dy_program *q = NULL;
  DY_ASSERT_OK(dy_model_load(DY_SOURCE_DIR "/tests/data/compat_v1", &q, &err),
               &err);
  dy_program *p = make_compat_v1();
  assert_same_program(p, q, true);
  dy_program_free(p);

  /* Spelled out, independent of the builder above. */
  CU_ASSERT_EQUAL(q->n_vars, 10);
  CU_ASSERT_EQUAL(q->n_blocks, 1);
  CU_ASSERT_EQUAL(q->blocks[0]->n_ops, 7);
  const dy_var *x = q->vars[q->feeds[0]];
  CU_ASSERT_STRING_EQUAL(x->name, "x");
  CU_ASSERT(x->type.rank == 2 && x->type.shape[0] == -1 &&
            x->type.shape[1] == 4);
  CU_ASSERT_STRING_EQUAL(q->vars[q->fetches[0]]->name, "y");
  const dy_var *w = q->vars[dy_program_find_var(q, "fc.w")];
  CU_ASSERT(w->persistable && w->data);
  CU_ASSERT_EQUAL(((const float *)w->data)[7], -4.0f);
  const dy_op *mm = q->blocks[0]->ops[0];
  CU_ASSERT_EQUAL(mm->kind, DY_OP_MATMUL);
  CU_ASSERT_PTR_NOT_NULL(dy_op_find_attr(mm, "transpose_y")); /* carried, not defaulted */
  CU_ASSERT_EQUAL(dy_matmul_attrs_get(mm).transpose_y, 0);
  CU_ASSERT_STRING_EQUAL(mm->loc.file, "compat.c");
  CU_ASSERT_EQUAL(mm->loc.line, 10);
  CU_ASSERT_EQUAL(q->blocks[0]->ops[6]->kind, DY_OP_MUL);
  /* written before ops had a list of sources: none */
  for (int k = 0; k < q->blocks[0]->n_ops; k++)
    CU_ASSERT_EQUAL(q->blocks[0]->ops[k]->n_srcs, 0);
  /* It is a valid model, and must stay one. */
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  dy_program_free(q);
}

static void test_compat_v1_kinds(void) {
  dy_error err = {0};
  dy_program *q = NULL;
  const char *path = DY_SOURCE_DIR "/tests/data/compat_v1_kinds.dymodel";
  DY_ASSERT_OK(dy_model_load(path, &q, &err), &err);
  dy_program *p = make_compat_kinds();
  assert_same_program(p, q, true);
  dy_program_free(p);

  const dy_op *add = q->blocks[0]->ops[0];
  CU_ASSERT_EQUAL(dy_op_find_attr(add, "i")->i, 7);
  CU_ASSERT_EQUAL(dy_op_find_attr(add, "f")->f, 0.1);
  CU_ASSERT_EQUAL(dy_op_find_attr(add, "is")->ints[1], -2);
  CU_ASSERT_EQUAL(dy_op_find_attr(add, "fs")->floats[1], -1.25f);
  CU_ASSERT_STRING_EQUAL(dy_op_find_attr(add, "s")->s, "text");
  CU_ASSERT_EQUAL(q->n_blocks, 2);
  CU_ASSERT_EQUAL(q->blocks[1]->parent, 0);
  CU_ASSERT_PTR_NULL(q->blocks[1]->ops[0]->loc.file);
  const dy_var *ids = q->vars[dy_program_find_var(q, "ids")];
  CU_ASSERT_EQUAL(((const int64_t *)ids->data)[2], (int64_t)1 << 40);
  const dy_var *scale = q->vars[dy_program_find_var(q, "scale")];
  CU_ASSERT_EQUAL(scale->type.rank, 0);
  CU_ASSERT_EQUAL(*(const float *)scale->data, 2.5f);
  const dy_var *flags = q->vars[dy_program_find_var(q, "flags")];
  CU_ASSERT_EQUAL(((const uint8_t *)flags->data)[3], 1);
  dy_program_free(q);
}

void dy_test_register(void) {
  DY_SUITE("serialize");
  DY_TEST(test_roundtrip_memory);
  DY_TEST(test_encoding_is_deterministic);
  DY_TEST(test_params_layout);
  DY_TEST(test_file_roundtrip);
  DY_TEST(test_pair_encode_then_write);
  DY_TEST(test_truncated_dymodel);
  DY_TEST(test_truncated_dyparams);
  DY_TEST(test_flipped_bits_dyparams);
  DY_TEST(test_flipped_bits_dymodel);
  DY_TEST(test_fuzz_dymodel);
  DY_TEST(test_newer_version);
  DY_TEST(test_unknown_op);
  DY_TEST(test_bad_references);
  DY_TEST(test_params_mismatch);
  DY_TEST(test_unsaveable_program);
  DY_TEST(test_unsaveable_source);
  DY_TEST(test_missing_file);
  DY_TEST(test_not_a_model);
  DY_TEST(test_compat_v1);
  DY_TEST(test_compat_v1_kinds);
}
