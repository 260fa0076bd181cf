/* serialize.c - .dymodel files: a Program's structure as protobuf-c.
 *
 * The schema and its versioning rule are in dymodel.proto. Encoding copies
 * the Program into the generated Dy__* structs and packs them; protobuf-c
 * writes fields in field-number order and we fill repeated fields in id
 * order, so the same Program always gives the same bytes. The message is
 * packed twice: once to compute the CRC-32 of its bytes, then again with
 * the checksum field (the last one) set. Parameter data is not written here
 * (params.c).
 *
 * Decoding never trusts the file. protobuf-c rejects malformed wire data;
 * then every field is checked before the Program is built through the
 * ordinary dy_program_* calls:
 *   - version: present, >= 1, and not newer than DY_DYMODEL_VERSION
 *   - the file ends with the checksum field, and the CRC matches
 *   - blocks: at least one; blocks[i].idx == i; block 0's parent is -1 and
 *     every other parent is a lower index
 *   - vars: names non-empty and unique, dtype known, rank <= DY_MAX_DIMS,
 *     dims >= -1, element count fits in int64, declaring block exists, a
 *     persistable var has a static shape
 *   - ops: type is an op this build knows, every input/output names a var,
 *     attribute names non-empty and unique per op, attribute kinds known
 *   - blocks' params and results (version 2) name vars
 *   - size symbols (version 3) have names; a var dim of -2 is read from
 *     Var.dims, a dim expression (dims.c)
 *   - feeds and fetches name vars, each at most once
 * An unknown op type, dtype or attribute kind may come from a newer release
 * that added it: DY_STATUS_UNSUPPORTED. Everything else: DY_STATUS_FORMAT.
 * It does not check op arity, attribute schemas, SSA or shapes: that is the
 * verifier's job (dy_verify), which a loader runs next.
 *
 * File errors start with the path ("model.dymodel: ..."); writes go through
 * dy_write_file_atomic, so a file is replaced whole or not at all.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"
#include "dymodel.pb-c.h"

#define PRODUCER "dy2stc " DY_VERSION_STRING

/* The checksum field as it ends every file: its tag (field 2047, wire type
 * 5 = fixed32: varint of 2047 << 3 | 5) and 4 bytes of CRC, little-endian. */
static const uint8_t checksum_tag[2] = {0xFD, 0x7F};
enum { CHECKSUM_BYTES = 6 };

/* Prefix err's message with path; unlike dy_error_prefix, keeps status
 * when err is NULL. */
static dy_status with_path(dy_error *err, dy_status s, const char *path) {
  if (err && s != DY_OK)
    dy_error_prefix(err, "%s", path);
  return s;
}

/* A string from the file made fit for a one-line message: at most
 * SHOWN_MAX bytes, control characters as '?'. Returns buf. */
enum { SHOWN_MAX = 80 };
static const char *show(const char *s, char buf[SHOWN_MAX + 4]) {
  size_t n = 0;
  for (; s && s[n] && n < SHOWN_MAX; n++)
    buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
  if (s && s[n]) {
    memcpy(buf + n, "...", 3);
    n += 3;
  }
  buf[n] = '\0';
  return buf;
}

static dy_status oom(dy_error *err) {
  return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, ".dymodel: out of memory");
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

/* Scratch memory for the Dy__* structs comes from a throwaway program's
 * arena: zeroed, and released at once by dy_program_free. */
#define NEW_ARRAY(tmp, ptr, n) \
  ((ptr) = dy_program_alloc((tmp), sizeof *(ptr) * (size_t)(n)))

static dy_status encode_attr(const dy_attr *a, Dy__Attr *m, dy_error *err) {
  dy__attr__init(m);
  m->name = (char *)a->name;
  m->has_kind = 1;
  m->kind = (int32_t)a->kind;
  switch (a->kind) {
  case DY_ATTR_INT:
    m->has_i = 1;
    m->i = a->i;
    break;
  case DY_ATTR_FLOAT:
    m->has_f = 1;
    m->f = a->f;
    break;
  case DY_ATTR_INTS:
    m->n_ints = (size_t)(a->n > 0 ? a->n : 0);
    m->ints = (int64_t *)a->ints;
    break;
  case DY_ATTR_FLOATS:
    m->n_floats = (size_t)(a->n > 0 ? a->n : 0);
    m->floats = (float *)a->floats;
    break;
  case DY_ATTR_STRING:
    m->s = (char *)(a->s ? a->s : "");
    break;
  default:
    return dy_error_set(err, DY_STATUS_INVALID_IR,
                        "attribute '%s' has unknown kind %d", a->name,
                        (int)a->kind);
  }
  return DY_OK;
}

static dy_status encode_op(const dy_program *p, dy_program *tmp,
                           const dy_op *op, Dy__Op *m, dy_error *err) {
  dy__op__init(m);
  if ((unsigned)op->kind >= DY_OP_COUNT)
    return dy_error_at(err, op, DY_STATUS_INVALID_IR,
                       "op %d has unknown kind %d", op->id, (int)op->kind);
  m->type = (char *)dy_op_name(op->kind);
  if (!NEW_ARRAY(tmp, m->inputs, op->n_inputs) ||
      !NEW_ARRAY(tmp, m->outputs, op->n_outputs) ||
      !NEW_ARRAY(tmp, m->attrs, op->n_attrs))
    return oom(err);
  for (int i = 0; i < op->n_inputs + op->n_outputs; i++) {
    bool in = i < op->n_inputs;
    int id = in ? op->inputs[i] : op->outputs[i - op->n_inputs];
    if (id < 0 || id >= p->n_vars)
      return dy_error_at(err, op, DY_STATUS_INVALID_IR,
                         "op %d (%s): %s refers to var id %d of %d", op->id,
                         dy_op_name(op->kind), in ? "an input" : "an output",
                         id, p->n_vars);
    if (in)
      m->inputs[m->n_inputs++] = (char *)p->vars[id]->name;
    else
      m->outputs[m->n_outputs++] = (char *)p->vars[id]->name;
  }
  Dy__Attr *attrs;
  if (!NEW_ARRAY(tmp, attrs, op->n_attrs))
    return oom(err);
  for (int i = 0; i < op->n_attrs; i++) {
    dy_status s = encode_attr(&op->attrs[i], &attrs[i], err);
    if (s != DY_OK)
      return s;
    m->attrs[m->n_attrs++] = &attrs[i];
  }
  if (op->loc.file)
    m->file = (char *)op->loc.file;
  m->has_line = 1;
  m->line = op->loc.line;
  /* a fused op's sources */
  Dy__Source *srcs;
  if (!NEW_ARRAY(tmp, srcs, op->n_srcs) || !NEW_ARRAY(tmp, m->sources, op->n_srcs))
    return oom(err);
  for (int i = 0; i < op->n_srcs; i++) {
    const dy_op_src *src = &op->srcs[i];
    if ((unsigned)src->kind >= DY_OP_COUNT)
      return dy_error_at(err, op, DY_STATUS_INVALID_IR,
                         "op %d: source %d has unknown kind %d", op->id, i,
                         (int)src->kind);
    dy__source__init(&srcs[i]);
    srcs[i].type = (char *)dy_op_name(src->kind);
    srcs[i].file = (char *)src->loc.file;
    srcs[i].has_line = 1;
    srcs[i].line = src->loc.line;
    m->sources[m->n_sources++] = &srcs[i];
  }
  return DY_OK;
}

static dy_status encode_program(const dy_program *p, dy_program *tmp,
                                Dy__Program *m, dy_error *err) {
  dy__program__init(m);
  m->version = DY_DYMODEL_VERSION;
  m->producer = PRODUCER;

  /* blocks and their ops */
  Dy__Block *blocks;
  if (!NEW_ARRAY(tmp, blocks, p->n_blocks) ||
      !NEW_ARRAY(tmp, m->blocks, p->n_blocks))
    return oom(err);
  for (int b = 0; b < p->n_blocks; b++) {
    const dy_block *blk = p->blocks[b];
    Dy__Block *mb = &blocks[b];
    dy__block__init(mb);
    mb->has_idx = mb->has_parent = 1;
    mb->idx = b;
    mb->parent = blk->parent;
    Dy__Op *ops;
    if (!NEW_ARRAY(tmp, ops, blk->n_ops) ||
        !NEW_ARRAY(tmp, mb->ops, blk->n_ops))
      return oom(err);
    for (int i = 0; i < blk->n_ops; i++) {
      dy_status s = encode_op(p, tmp, blk->ops[i], &ops[i], err);
      if (s != DY_OK)
        return s;
      mb->ops[mb->n_ops++] = &ops[i];
    }
    if (!NEW_ARRAY(tmp, mb->params, blk->n_params) ||
        !NEW_ARRAY(tmp, mb->results, blk->n_results))
      return oom(err);
    for (int i = 0; i < blk->n_params; i++)
      mb->params[mb->n_params++] = (char *)p->vars[blk->params[i]]->name;
    for (int i = 0; i < blk->n_results; i++)
      mb->results[mb->n_results++] = (char *)p->vars[blk->results[i]]->name;
    m->blocks[m->n_blocks++] = mb;
  }

  /* vars, in id order */
  Dy__Var *vars;
  if (!NEW_ARRAY(tmp, vars, p->n_vars) || !NEW_ARRAY(tmp, m->vars, p->n_vars))
    return oom(err);
  for (int i = 0; i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    Dy__Var *mv = &vars[i];
    dy__var__init(mv);
    mv->name = (char *)v->name;
    mv->has_dtype = 1;
    mv->dtype = (int32_t)v->type.dtype;
    mv->n_shape = (size_t)v->type.rank;
    mv->shape = v->type.shape;
    bool symbolic = false;
    for (int d = 0; d < v->type.rank; d++)
      symbolic |= v->type.shape[d] < -1;
    if (symbolic) {
      int64_t *shape;
      if (!NEW_ARRAY(tmp, shape, v->type.rank) || !NEW_ARRAY(tmp, mv->dims, v->type.rank))
        return oom(err);
      for (int d = 0; d < v->type.rank; d++) {
        char buf[160];
        shape[d] = v->type.shape[d] < -1 ? -2 : v->type.shape[d];
        mv->dims[d] = dy_program_strdup(tmp, v->type.shape[d] < -1
                                                 ? dy_dim_str(v->type.shape[d], buf, sizeof buf)
                                                 : "");
        if (!mv->dims[d])
          return oom(err);
      }
      mv->n_dims = (size_t)v->type.rank;
      mv->shape = shape;
    }
    mv->has_persistable = 1;
    mv->persistable = v->persistable;
    mv->has_block = 1;
    mv->block = v->block;
    mv->has_trainable = v->trainable;
    mv->trainable = v->trainable;
    m->vars[m->n_vars++] = mv;
  }

  /* size symbols */
  Dy__Symbol *syms;
  if (!NEW_ARRAY(tmp, syms, p->n_syms) || !NEW_ARRAY(tmp, m->symbols, p->n_syms))
    return oom(err);
  for (int i = 0; i < p->n_syms; i++) {
    dy__symbol__init(&syms[i]);
    syms[i].name = (char *)p->syms[i].name;
    syms[i].has_max = syms[i].has_value = 1;
    syms[i].max = p->syms[i].max;
    syms[i].value = p->syms[i].value;
    m->symbols[m->n_symbols++] = &syms[i];
  }

  /* feeds and fetches, by name, in order */
  if (!NEW_ARRAY(tmp, m->feeds, p->n_feeds) ||
      !NEW_ARRAY(tmp, m->fetches, p->n_fetches))
    return oom(err);
  for (int i = 0; i < p->n_feeds; i++)
    m->feeds[m->n_feeds++] = (char *)p->vars[p->feeds[i]]->name;
  for (int i = 0; i < p->n_fetches; i++)
    m->fetches[m->n_fetches++] = (char *)p->vars[p->fetches[i]]->name;
  return DY_OK;
}

dy_status dy_dymodel_encode(const dy_program *p, uint8_t **buf, size_t *len,
                            dy_error *err) {
  *buf = NULL;
  *len = 0;
  dy_program *tmp = dy_program_new();
  if (!tmp)
    return oom(err);
  Dy__Program m;
  dy_status s = encode_program(p, tmp, &m, err);
  if (s == DY_OK) {
    size_t n = dy__program__get_packed_size(&m);
    uint8_t *b = malloc(n + CHECKSUM_BYTES);
    if (!b) {
      s = oom(err);
    } else {
      dy__program__pack(&m, b);
      m.has_checksum = 1;
      m.checksum = dy_crc32(0, b, n);
      /* Same bytes again, now followed by the checksum field. */
      dy__program__pack(&m, b);
      *buf = b;
      *len = n + CHECKSUM_BYTES;
    }
  }
  dy_program_free(tmp);
  return s;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* Var name -> id, open addressing. program.c looks names up linearly;
 * a big model has thousands of vars and every op input is a lookup. */
typedef struct {
  const dy_program *p;
  size_t mask;   /* capacity - 1, capacity a power of two */
  int *slots;    /* var id or -1 */
} name_index;

static size_t hash_name(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static bool index_init(name_index *ix, const dy_program *p, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n)
    cap *= 2;
  ix->p = p;
  ix->mask = cap - 1;
  ix->slots = malloc(sizeof *ix->slots * cap);
  if (!ix->slots)
    return false;
  for (size_t i = 0; i < cap; i++)
    ix->slots[i] = -1;
  return true;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t index_slot(const name_index *ix, const char *name) {
  size_t i = hash_name(name) & ix->mask;
  while (ix->slots[i] >= 0 && strcmp(ix->p->vars[ix->slots[i]]->name, name))
    i = (i + 1) & ix->mask;
  return i;
}

static int index_find(const name_index *ix, const char *name) {
  return name ? ix->slots[index_slot(ix, name)] : -1;
}

static dy_status check_version(const Dy__Program *m, dy_error *err) {
  char producer[SHOWN_MAX + 4];
  if (m->version == 0)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "not a .dymodel file: version 0");
  if (m->version > DY_DYMODEL_VERSION)
    return dy_error_set(err, DY_STATUS_VERSION,
                        ".dymodel version %u (written by %s) is newer than "
                        "version %d, the newest this dy2stc %s reads",
                        (unsigned)m->version,
                        m->producer ? show(m->producer, producer)
                                    : "an unknown producer",
                        DY_DYMODEL_VERSION, DY_VERSION_STRING);
  return DY_OK;
}

static dy_status check_checksum(const Dy__Program *m, const uint8_t *buf,
                                size_t len, dy_error *err) {
  if (!m->has_checksum || len < CHECKSUM_BYTES ||
      memcmp(buf + len - CHECKSUM_BYTES, checksum_tag,
             sizeof checksum_tag) != 0)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "truncated .dymodel file (no checksum at the end)");
  const uint8_t *end = buf + len - CHECKSUM_BYTES;
  uint32_t stored = (uint32_t)end[2] | (uint32_t)end[3] << 8 |
                    (uint32_t)end[4] << 16 | (uint32_t)end[5] << 24;
  uint32_t crc = dy_crc32(0, buf, len - CHECKSUM_BYTES);
  if (stored != crc || m->checksum != crc)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "checksum mismatch (stored %08x, computed %08x): the "
                        "file is corrupted", (unsigned)stored, (unsigned)crc);
  return DY_OK;
}

static dy_status decode_blocks(const Dy__Program *m, dy_program *p,
                               dy_error *err) {
  if (m->n_blocks == 0)
    return dy_error_set(err, DY_STATUS_FORMAT, "no blocks (block 0 missing)");
  if (m->n_blocks > INT_MAX / 2)
    return dy_error_set(err, DY_STATUS_FORMAT, "too many blocks");
  for (size_t i = 0; i < m->n_blocks; i++) {
    const Dy__Block *b = m->blocks[i];
    if (!b->has_idx || b->idx != (int32_t)i)
      return dy_error_set(err, DY_STATUS_FORMAT,
                          "block %zu: index is %s%d, should be %zu", i,
                          b->has_idx ? "" : "missing, ",
                          b->has_idx ? (int)b->idx : 0, i);
    int parent = b->has_parent ? b->parent : INT_MIN;
    bool ok = i == 0 ? parent == -1 : parent >= 0 && (size_t)parent < i;
    if (!ok)
      return dy_error_set(err, DY_STATUS_FORMAT,
                          "block %zu: parent %s%d is invalid (block 0 has "
                          "parent -1, others a lower block)",
                          i, b->has_parent ? "" : "missing, ",
                          b->has_parent ? (int)parent : 0);
    if (i > 0 && dy_program_add_block(p, parent) < 0)
      return oom(err);
  }
  return DY_OK;
}

static dy_status decode_var(const Dy__Var *v, size_t i, dy_program *p,
                            name_index *ix, dy_error *err) {
  if (!v->name || !v->name[0])
    return dy_error_set(err, DY_STATUS_FORMAT, "var %zu has no name", i);
  char name[SHOWN_MAX + 4];
  show(v->name, name);
  size_t slot = index_slot(ix, v->name);
  if (ix->slots[slot] >= 0)
    return dy_error_set(err, DY_STATUS_FORMAT, "var '%s' declared twice",
                        name);
  if (!v->has_dtype || v->dtype < 0)
    return dy_error_set(err, DY_STATUS_FORMAT, "var '%s': %s dtype %d",
                        name, v->has_dtype ? "invalid" : "missing",
                        v->has_dtype ? (int)v->dtype : 0);
  if (v->dtype >= DY_DTYPE_COUNT) /* perhaps added by a newer release */
    return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                        "var '%s': unknown dtype %d", name, (int)v->dtype);
  if (v->n_shape > DY_MAX_DIMS)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "var '%s': rank %zu exceeds the maximum %d", name,
                        v->n_shape, DY_MAX_DIMS);
  dy_type t = {.dtype = (dy_dtype)v->dtype, .rank = (int)v->n_shape};
  /* the checked-size rules (dy_checked.h): dims >= -1 or a size
   * expression (version 3: Var.dims), the static part within
   * DY_MAX_TENSOR_BYTES, so no size computed downstream can wrap */
  for (size_t d = 0; d < v->n_shape; d++) {
    int64_t dim = v->shape[d];
    if (dim == -2 && v->n_dims == v->n_shape && v->dims[d][0]) {
      if (!dy_dim_parse(v->dims[d], strlen(v->dims[d]), &dim))
        return dy_error_set(err, DY_STATUS_FORMAT,
                            "var '%s': dim %zu '%s' is not a size expression", name, d,
                            v->dims[d]);
    } else if (dim < -1) {
      return dy_error_set(err, DY_STATUS_FORMAT, "var '%s': dim %zu is %lld (must be >= -1)",
                          name, d, (long long)dim);
    }
    t.shape[d] = dim;
  }
  dy_error te = {0};
  if (dy_type_check(&t, NULL, "its type", &te))
    return dy_error_set(err, DY_STATUS_FORMAT, "var '%s': %s", name, te.msg);
  int block = v->has_block ? v->block : 0;
  if (block < 0 || block >= p->n_blocks)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "var '%s': block %d does not exist", name, block);
  bool persistable = v->has_persistable && v->persistable;
  if (persistable && !dy_type_is_static(&t))
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "var '%s': persistable with a dynamic shape",
                        name);

  int id = dy_program_add_var(p, v->name, &t);
  if (id < 0)
    return oom(err);
  p->vars[id]->persistable = persistable;
  p->vars[id]->trainable = persistable && v->has_trainable && v->trainable &&
                           t.dtype == DY_F32;
  p->vars[id]->block = block;
  ix->slots[slot] = id;
  return DY_OK;
}

static dy_status decode_attr(const Dy__Attr *m, const dy_op *at, int k,
                             dy_attr *a, dy_error *err) {
  char name[SHOWN_MAX + 4];
  if (!m->name || !m->name[0])
    return dy_error_at(err, at, DY_STATUS_FORMAT,
                       "op %d (%s): attribute %d has no name", at->id,
                       dy_op_name(at->kind), k);
  if (!m->has_kind || m->kind < DY_ATTR_INT)
    return dy_error_at(err, at, DY_STATUS_FORMAT,
                       "op %d (%s): attribute '%.100s' has %s kind %d",
                       at->id, dy_op_name(at->kind), show(m->name, name),
                       m->has_kind ? "invalid" : "missing",
                       m->has_kind ? (int)m->kind : 0);
  if (m->kind > DY_ATTR_STRING) /* perhaps added by a newer release */
    return dy_error_at(err, at, DY_STATUS_UNSUPPORTED,
                       "op %d (%s): attribute '%.100s' has unknown kind %d",
                       at->id, dy_op_name(at->kind), show(m->name, name),
                       (int)m->kind);
  if (m->n_ints > INT_MAX || m->n_floats > INT_MAX)
    return dy_error_at(err, at, DY_STATUS_FORMAT,
                       "op %d (%s): attribute '%s' is too long", at->id,
                       dy_op_name(at->kind), show(m->name, name));
  *a = (dy_attr){.name = m->name, .kind = (dy_attr_kind)m->kind};
  switch (a->kind) {
  case DY_ATTR_INT:
    a->i = m->i;
    break;
  case DY_ATTR_FLOAT:
    a->f = m->f;
    break;
  case DY_ATTR_INTS: /* copied by dy_program_append_op unless empty */
    a->n = (int)m->n_ints;
    a->ints = a->n ? m->ints : NULL;
    break;
  case DY_ATTR_FLOATS:
    a->n = (int)m->n_floats;
    a->floats = a->n ? m->floats : NULL;
    break;
  case DY_ATTR_STRING:
    a->s = m->s ? m->s : "";
    break;
  }
  return DY_OK;
}

/* Var ids of an op's input or output names, into ids. */
static dy_status resolve_names(char *const *names, size_t n, const char *what,
                               const dy_op *at, const name_index *ix, int *ids,
                               dy_error *err) {
  char name[SHOWN_MAX + 4];
  for (size_t i = 0; i < n; i++) {
    ids[i] = index_find(ix, names[i]);
    if (ids[i] < 0)
      return dy_error_at(err, at, DY_STATUS_FORMAT,
                         "op %d (%s): %s %zu names unknown var '%s'", at->id,
                         dy_op_name(at->kind), what, i, show(names[i], name));
  }
  return DY_OK;
}

/* Decodes op m of block b. The id and attribute arrays handed to
 * dy_program_append_op (which copies them) live in tmp's arena. */
static dy_status decode_op(const Dy__Op *m, int b, dy_program *p,
                           const name_index *ix, dy_program *tmp,
                           dy_error *err) {
  /* A stand-in op, so errors carry the op's id and source location. */
  dy_op at = {.id = p->next_op_id,
              .kind = DY_OP_COUNT,
              .block = b,
              .loc = {m->file, m->has_line ? m->line : 0}};
  char name[SHOWN_MAX + 4];
  if (!m->type || !dy_op_kind_from_name(m->type, &at.kind))
    return dy_error_at(err, &at, DY_STATUS_UNSUPPORTED,
                       "op %d (block %d): unknown op type '%s' (not in this "
                       "dy2stc %s; the file may need a newer release)",
                       at.id, b, show(m->type, name), DY_VERSION_STRING);
  if (m->has_line && m->line < 0)
    return dy_error_at(err, &at, DY_STATUS_FORMAT,
                       "op %d (%s): negative source line", at.id,
                       dy_op_name(at.kind));
  if (m->n_inputs > INT_MAX || m->n_outputs > INT_MAX || m->n_attrs > INT_MAX)
    return dy_error_at(err, &at, DY_STATUS_FORMAT, "op %d (%s): too many "
                       "inputs, outputs or attributes", at.id,
                       dy_op_name(at.kind));
  int *inputs, *outputs;
  dy_attr *attrs;
  if (!NEW_ARRAY(tmp, inputs, m->n_inputs) ||
      !NEW_ARRAY(tmp, outputs, m->n_outputs) ||
      !NEW_ARRAY(tmp, attrs, m->n_attrs))
    return oom(err);
  dy_status s = resolve_names(m->inputs, m->n_inputs, "input", &at, ix,
                              inputs, err);
  if (s == DY_OK)
    s = resolve_names(m->outputs, m->n_outputs, "output", &at, ix, outputs,
                      err);
  for (size_t k = 0; s == DY_OK && k < m->n_attrs; k++) {
    s = decode_attr(m->attrs[k], &at, (int)k, &attrs[k], err);
    for (size_t j = 0; s == DY_OK && j < k; j++)
      if (strcmp(attrs[j].name, attrs[k].name) == 0)
        s = dy_error_at(err, &at, DY_STATUS_FORMAT,
                        "op %d (%s): attribute '%s' given twice", at.id,
                        dy_op_name(at.kind), show(attrs[k].name, name));
  }
  if (s != DY_OK)
    return s;
  /* a fused op's sources (files before they existed have none) */
  dy_op_src *srcs;
  if (m->n_sources > INT_MAX || !NEW_ARRAY(tmp, srcs, m->n_sources))
    return m->n_sources > INT_MAX
               ? dy_error_at(err, &at, DY_STATUS_FORMAT, "op %d (%s): too many "
                             "sources", at.id, dy_op_name(at.kind))
               : oom(err);
  for (size_t k = 0; k < m->n_sources; k++) {
    const Dy__Source *src = m->sources[k];
    if (!src->type || !dy_op_kind_from_name(src->type, &srcs[k].kind))
      return dy_error_at(err, &at, DY_STATUS_UNSUPPORTED,
                         "op %d (%s): source %zu has unknown op type '%s'",
                         at.id, dy_op_name(at.kind), k, show(src->type, name));
    if (src->has_line && src->line < 0)
      return dy_error_at(err, &at, DY_STATUS_FORMAT,
                         "op %d (%s): source %zu has a negative line", at.id,
                         dy_op_name(at.kind), k);
    srcs[k].loc = (dy_srcloc){src->file, src->has_line ? src->line : 0};
  }
  dy_op *op = dy_program_append_op(p, b, at.kind, inputs, (int)m->n_inputs,
                                   outputs, (int)m->n_outputs, attrs,
                                   (int)m->n_attrs, at.loc);
  if (!op || !NEW_ARRAY(p, op->srcs, m->n_sources))
    return oom(err);
  for (size_t k = 0; k < m->n_sources; k++) {
    op->srcs[k] = srcs[k];
    if (srcs[k].loc.file &&
        !(op->srcs[k].loc.file = dy_program_strdup(p, srcs[k].loc.file)))
      return oom(err);
  }
  op->n_srcs = (int)m->n_sources;
  if (!op->n_srcs)
    op->srcs = NULL;
  return DY_OK;
}

/* Feed or fetch names -> dy_program_add_feed / add_fetch. */
static dy_status decode_io(char *const *names, size_t n, bool feed,
                           dy_program *p, const name_index *ix,
                           dy_error *err) {
  const char *what = feed ? "feed" : "fetch";
  char name[SHOWN_MAX + 4];
  for (size_t i = 0; i < n; i++) {
    int id = index_find(ix, names[i]);
    if (id < 0)
      return dy_error_set(err, DY_STATUS_FORMAT,
                          "%s %zu names unknown var '%s'", what, i,
                          show(names[i], name));
    const dy_var *v = p->vars[id];
    if ((feed ? v->feed_index : v->fetch_index) >= 0)
      return dy_error_set(err, DY_STATUS_FORMAT, "var '%s' is a %s twice",
                          show(v->name, name), what);
    dy_status s = feed ? dy_program_add_feed(p, id, err)
                       : dy_program_add_fetch(p, id, err);
    if (s != DY_OK)
      return s;
  }
  return DY_OK;
}

/* A block's params and results (version 2; a version-1 block has none). */
static dy_status decode_signature(const Dy__Block *m, int b, dy_program *p,
                                  const name_index *ix, dy_program *tmp,
                                  dy_error *err) {
  char name[SHOWN_MAX + 4];
  for (int k = 0; k < 2; k++) {
    char *const *names = k ? m->results : m->params;
    size_t n = k ? m->n_results : m->n_params;
    if (!n)
      continue;
    if (n > INT_MAX / 4)
      return dy_error_set(err, DY_STATUS_FORMAT, "block %d: too many %s", b,
                          k ? "results" : "params");
    int *ids = dy_program_alloc(tmp, sizeof(int) * n);
    if (!ids)
      return oom(err);
    for (size_t i = 0; i < n; i++)
      if ((ids[i] = index_find(ix, names[i])) < 0)
        return dy_error_set(err, DY_STATUS_FORMAT,
                            "block %d: %s %zu names unknown var '%s'", b,
                            k ? "result" : "param", i, show(names[i], name));
    if (!(k ? dy_block_set_results : dy_block_set_params)(p, b, ids, (int)n))
      return oom(err);
  }
  return DY_OK;
}

static dy_status decode_program(const Dy__Program *m, const uint8_t *buf,
                                size_t len, dy_program *p, dy_program *tmp,
                                dy_error *err) {
  dy_status s = check_version(m, err);
  if (s == DY_OK)
    s = check_checksum(m, buf, len, err);
  if (s == DY_OK)
    s = decode_blocks(m, p, err);
  if (s != DY_OK)
    return s;
  if (m->n_vars > INT_MAX / 4)
    return dy_error_set(err, DY_STATUS_FORMAT, "too many vars");

  for (size_t i = 0; i < m->n_symbols; i++) { /* version 3 */
    const Dy__Symbol *sy = m->symbols[i];
    if (!sy->name || (sy->has_max && sy->max < 0))
      return dy_error_set(err, DY_STATUS_FORMAT, "size symbol %zu: no name or a negative bound", i);
    if ((s = dy_program_load_sym(p, sy->name, sy->has_max ? sy->max : 0,
                                 sy->has_value ? sy->value : -1, err)))
      return dy_error_prefix(err, "size symbol %zu", i);
  }

  name_index ix;
  if (!index_init(&ix, p, m->n_vars))
    return oom(err);
  for (size_t i = 0; s == DY_OK && i < m->n_vars; i++)
    s = decode_var(m->vars[i], i, p, &ix, err);
  for (size_t b = 0; s == DY_OK && b < m->n_blocks; b++)
    for (size_t i = 0; s == DY_OK && i < m->blocks[b]->n_ops; i++)
      s = decode_op(m->blocks[b]->ops[i], (int)b, p, &ix, tmp, err);
  for (size_t b = 0; s == DY_OK && b < m->n_blocks; b++)
    s = decode_signature(m->blocks[b], (int)b, p, &ix, tmp, err);
  if (s == DY_OK)
    s = decode_io(m->feeds, m->n_feeds, true, p, &ix, err);
  if (s == DY_OK)
    s = decode_io(m->fetches, m->n_fetches, false, p, &ix, err);
  free(ix.slots);
  return s;
}

dy_status dy_dymodel_decode(const uint8_t *buf, size_t len, dy_program **out,
                            dy_error *err) {
  *out = NULL;
  static const uint8_t empty[1];
  if (!buf) {
    buf = empty;
    len = 0;
  }
  Dy__Program *m = dy__program__unpack(NULL, len, buf);
  if (!m)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "not a .dymodel file or truncated/corrupted");
  dy_program *p = dy_program_new();
  dy_program *tmp = dy_program_new();
  dy_status s = p && tmp ? decode_program(m, buf, len, p, tmp, err) : oom(err);
  dy__program__free_unpacked(m, NULL);
  dy_program_free(tmp);
  if (s == DY_OK)
    *out = p;
  else
    dy_program_free(p);
  return s;
}

dy_status dy_dymodel_read(const char *path, dy_program **out, dy_error *err) {
  *out = NULL;
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err); /* message names path */
  if (s != DY_OK)
    return s;
  s = dy_dymodel_decode(buf, len, out, err);
  free(buf);
  return with_path(err, s, path);
}
