/* params.c - .dyparams files: the data of a Program's persistable vars,
 * and dy_model_save / dy_model_load for the .dymodel + .dyparams pair.
 *
 * Layout, version 1. Every integer is little-endian and is written and read
 * one byte at a time (never a struct or whole-array dump of host memory), so
 * files are the same on every host, big-endian ones included.
 *
 *   size   field
 *   8      magic "DYPARAMS" (no NUL)
 *   u32    version: DY_DYPARAMS_VERSION
 *   u32    tensor count N
 *   N tensor records, one per persistable var, in var-id order:
 *     u32    name length L (> 0)
 *     L      name bytes, no NUL
 *     u32    dtype (dy_dtype: 0 f32, 1 i64, 2 bool, 3 i8, 4 u8, 5 i32)
 *     u32    rank R (<= DY_MAX_DIMS)
 *     i64    dims[R], each >= 0 (parameters have static shapes)
 *     u64    data size D in bytes, = product(dims) * dtype size
 *     D      data, row-major: f32 as IEEE-754 bits (u32 LE), i64 as
 *            two's complement (u64 LE), bool one byte, 0 or 1
 *     u32    CRC-32 of the record, from the name length through the data
 *   u32    CRC-32 of every byte before it (header and all records)
 *
 * CRC-32 is dy_crc32 (zlib's). The record CRC lets an error name the
 * damaged tensor; the trailing file CRC also covers the header and makes the
 * file checkable without parsing it.
 *
 * Reading checks, in order: magic; version (0 is malformed, newer than
 * DY_DYPARAMS_VERSION is DY_STATUS_VERSION, older ones are read); each
 * record's bounds ("truncated at byte N") and CRC; its dtype, shape and size;
 * that it names a persistable var of the Program with the same dtype and
 * shape, at most once; that exactly the file CRC follows the last record and
 * matches; that no persistable var is left without data. Records may come in
 * any order. Nothing in the Program changes unless the whole file is good.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

static const char magic[8] = {'D', 'Y', 'P', 'A', 'R', 'A', 'M', 'S'};

enum { HEADER_BYTES = 16 }; /* magic, version, count */

static dy_status with_path(dy_error *err, dy_status s, const char *path) {
  if (err && s != DY_OK)
    dy_error_prefix(err, "%s", path);
  return s;
}

/* A name made fit for a one-line message: at most SHOWN_MAX of its n
 * bytes, control characters and NUL as '?'. Returns buf. */
enum { SHOWN_MAX = 80 };
static const char *show(const char *s, size_t n, char buf[SHOWN_MAX + 4]) {
  size_t k = 0;
  for (; k < n && k < SHOWN_MAX; k++)
    buf[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
  if (k < n) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = '\0';
  return buf;
}

static bool host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* Convert n elements of size bytes between host order and little-endian
 * (the same operation both ways): nothing on little-endian hosts. */
static void swap_to_le(void *data, size_t size, size_t n) {
  if (size == 1 || host_is_little_endian())
    return;
  unsigned char *p = data;
  for (size_t e = 0; e < n; e++, p += size)
    for (size_t i = 0; i < size / 2; i++) {
      unsigned char t = p[i];
      p[i] = p[size - 1 - i];
      p[size - 1 - i] = t;
    }
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

static uint8_t *put_u32(uint8_t *o, uint32_t v) {
  for (int i = 0; i < 4; i++)
    o[i] = (uint8_t)(v >> (8 * i));
  return o + 4;
}

static uint8_t *put_u64(uint8_t *o, uint64_t v) {
  for (int i = 0; i < 8; i++)
    o[i] = (uint8_t)(v >> (8 * i));
  return o + 8;
}

static size_t data_bytes(const dy_var *v) {
  return (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype);
}

dy_status dy_dyparams_encode(const dy_program *p, uint8_t **buf, size_t *len,
                             dy_error *err) {
  *buf = NULL;
  *len = 0;

  /* Size the file, checking every persistable var can be written. */
  size_t total = HEADER_BYTES + 4;
  uint32_t count = 0;
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!v->persistable)
      continue;
    if (!dy_type_is_static(&v->type) || !v->data)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "persistable var '%s' has %s", v->name,
                          v->data ? "a dynamic shape" : "no data");
    total += 4 + strlen(v->name) + 4 + 4 + 8 * (size_t)v->type.rank + 8 +
             data_bytes(v) + 4;
    count++;
  }
  uint8_t *b = malloc(total);
  if (!b)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY,
                        ".dyparams: out of memory (%zu bytes)", total);

  uint8_t *o = b;
  memcpy(o, magic, sizeof magic);
  o = put_u32(o + sizeof magic, DY_DYPARAMS_VERSION);
  o = put_u32(o, count);
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!v->persistable)
      continue;
    uint8_t *rec = o;
    size_t name_len = strlen(v->name), nbytes = data_bytes(v);
    size_t size = dy_dtype_size(v->type.dtype);
    o = put_u32(o, (uint32_t)name_len);
    memcpy(o, v->name, name_len);
    o = put_u32(o + name_len, (uint32_t)v->type.dtype);
    o = put_u32(o, (uint32_t)v->type.rank);
    for (int d = 0; d < v->type.rank; d++)
      o = put_u64(o, (uint64_t)v->type.shape[d]);
    o = put_u64(o, (uint64_t)nbytes);
    memcpy(o, v->data, nbytes);
    swap_to_le(o, size, nbytes / size);
    o += nbytes;
    o = put_u32(o, dy_crc32(0, rec, (size_t)(o - rec)));
  }
  o = put_u32(o, dy_crc32(0, b, (size_t)(o - b)));

  *buf = b;
  *len = total;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* A bounds-checked cursor over the file. */
typedef struct {
  const uint8_t *buf;
  size_t len, pos;
  dy_error *err;
} reader;

/* True if n more bytes are there; else sets a "truncated" error naming
 * what was being read. */
static bool need(reader *r, uint64_t n, const char *what) {
  if (n <= r->len - r->pos)
    return true;
  dy_error_set(r->err, DY_STATUS_FORMAT,
               "truncated at byte %zu: %s needs %llu bytes, %zu left", r->len,
               what, (unsigned long long)n, r->len - r->pos);
  return false;
}

static uint64_t get_le(reader *r, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++)
    v |= (uint64_t)r->buf[r->pos + (size_t)i] << (8 * i);
  r->pos += (size_t)n;
  return v;
}

static bool read_u32(reader *r, uint32_t *v, const char *what) {
  if (!need(r, 4, what))
    return false;
  *v = (uint32_t)get_le(r, 4);
  return true;
}

/* One record, located and checksummed, not yet matched to a var. */
typedef struct {
  size_t index;               /* position in the file */
  const char *name;           /* not NUL-terminated */
  size_t name_len;
  char shown[SHOWN_MAX + 4];  /* the name for messages */
  uint32_t dtype, rank;
  int64_t dims[DY_MAX_DIMS];
  uint64_t nbytes;
  const uint8_t *data;
} record;

/* Locates record i by its length fields and checks its CRC, so a damaged
 * record reads as a checksum error before its contents are believed. */
static dy_status read_record(reader *r, size_t i, record *rec) {
  char what[96];
  size_t start = r->pos;
  uint32_t name_len;
  snprintf(what, sizeof what, "tensor %zu name length", i);
  if (!read_u32(r, &name_len, what))
    return DY_STATUS_FORMAT;
  snprintf(what, sizeof what, "tensor %zu name", i);
  if (!need(r, name_len, what))
    return DY_STATUS_FORMAT;
  rec->index = i;
  rec->name = (const char *)r->buf + r->pos;
  rec->name_len = name_len;
  show(rec->name, name_len, rec->shown);
  r->pos += name_len;

  snprintf(what, sizeof what, "tensor '%.40s' header", rec->shown);
  if (!need(r, 8, what))
    return DY_STATUS_FORMAT;
  rec->dtype = (uint32_t)get_le(r, 4);
  rec->rank = (uint32_t)get_le(r, 4);
  if (rec->rank > DY_MAX_DIMS)
    return dy_error_set(r->err, DY_STATUS_FORMAT,
                        "tensor %zu ('%s'): rank %u exceeds the maximum %d "
                        "(corrupted file?)",
                        i, rec->shown, (unsigned)rec->rank, DY_MAX_DIMS);
  if (!need(r, 8 * (uint64_t)rec->rank + 8, what))
    return DY_STATUS_FORMAT;
  for (uint32_t d = 0; d < rec->rank; d++)
    rec->dims[d] = (int64_t)get_le(r, 8); /* two's complement */
  rec->nbytes = get_le(r, 8);
  snprintf(what, sizeof what, "tensor '%.40s' data and checksum",
           rec->shown);
  if (rec->nbytes > UINT64_MAX - 4 || !need(r, rec->nbytes + 4, what))
    return DY_STATUS_FORMAT;
  rec->data = r->buf + r->pos;
  r->pos += (size_t)rec->nbytes;

  uint32_t crc = dy_crc32(0, r->buf + start, r->pos - start);
  uint32_t stored = (uint32_t)get_le(r, 4);
  if (crc != stored)
    return dy_error_set(r->err, DY_STATUS_FORMAT,
                        "tensor %zu ('%s'): checksum mismatch (stored "
                        "%08x, computed %08x): the file is corrupted",
                        i, rec->shown, (unsigned)stored, (unsigned)crc);
  return DY_OK;
}

/* "[3,10]" from file dims, for messages. */
static void dims_str(const record *rec, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (uint32_t d = 0; d < rec->rank && k < n; d++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "",
                          (long long)rec->dims[d]);
  if (k < n)
    snprintf(buf + k, n - k, "]");
}

/* Checks a record's contents and finds its var; *var_out is its id. */
static dy_status match_record(const dy_program *p, const record *rec,
                              const uint8_t **seen, int *var_out,
                              dy_error *err) {
  const char *nm = rec->shown;
  if (rec->name_len == 0)
    return dy_error_set(err, DY_STATUS_FORMAT, "tensor %zu has an empty name",
                        rec->index);
  if (rec->dtype >= DY_DTYPE_COUNT)
    return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                        "tensor '%s': unknown dtype %u", nm,
                        (unsigned)rec->dtype);

  /* The element count must match the data size; a product that overflows
   * cannot. */
  uint64_t size = dy_dtype_size((dy_dtype)rec->dtype), numel = 1;
  bool overflow = false;
  for (uint32_t d = 0; d < rec->rank; d++)
    if (rec->dims[d] < 0)
      return dy_error_set(err, DY_STATUS_FORMAT,
                          "tensor '%s': dim %u is %lld (must be >= 0)", nm,
                          (unsigned)d, (long long)rec->dims[d]);
  for (uint32_t d = 0; d < rec->rank && numel; d++) {
    uint64_t dim = (uint64_t)rec->dims[d];
    if (dim && numel > UINT64_MAX / size / dim)
      overflow = true;
    else
      numel *= dim;
  }
  if (numel == 0)
    overflow = false;
  if (overflow || numel * size != rec->nbytes) {
    char shape[128];
    dims_str(rec, shape, sizeof shape);
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "tensor '%s': %llu data bytes do not fit %s%s", nm,
                        (unsigned long long)rec->nbytes,
                        dy_dtype_name((dy_dtype)rec->dtype), shape);
  }
  if (rec->dtype == DY_BOOL)
    for (uint64_t e = 0; e < rec->nbytes; e++)
      if (rec->data[e] > 1)
        return dy_error_set(err, DY_STATUS_FORMAT,
                            "tensor '%s': bool element %llu is %u, not 0 "
                            "or 1", nm, (unsigned long long)e,
                            (unsigned)rec->data[e]);

  /* Find the var (names in the file have no NUL; compare by length). */
  int id = -1;
  for (int i = 0; i < p->n_vars && id < 0; i++)
    if (strlen(p->vars[i]->name) == rec->name_len &&
        memcmp(p->vars[i]->name, rec->name, rec->name_len) == 0)
      id = i;
  if (id < 0 || !p->vars[id]->persistable)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "tensor '%s' is not a persistable var of the "
                        "program", nm);
  const dy_var *v = p->vars[id];
  if (seen[id])
    return dy_error_set(err, DY_STATUS_FORMAT, "tensor '%s' appears twice",
                        nm);
  bool same = v->type.dtype == (dy_dtype)rec->dtype &&
              v->type.rank == (int)rec->rank;
  for (int d = 0; same && d < v->type.rank; d++)
    same = v->type.shape[d] == rec->dims[d];
  if (!same) {
    char want[128], got[128];
    dims_str(rec, got, sizeof got);
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "tensor '%s': file has %s%s, the program %s", nm,
                        dy_dtype_name((dy_dtype)rec->dtype), got,
                        dy_type_str(&v->type, want, sizeof want));
  }
  *var_out = id;
  return DY_OK;
}

/* Reads and checks the whole file; seen[var] points at each var's data. */
static dy_status check_file(const dy_program *p, reader *r,
                            const uint8_t **seen, dy_error *err) {
  if (r->len < sizeof magic || memcmp(r->buf, magic, sizeof magic) != 0)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "not a .dyparams file (bad magic)");
  r->pos = sizeof magic;
  uint32_t version, count;
  if (!read_u32(r, &version, "the version"))
    return DY_STATUS_FORMAT;
  if (version == 0)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "not a .dyparams file: version 0");
  if (version > DY_DYPARAMS_VERSION)
    return dy_error_set(err, DY_STATUS_VERSION,
                        ".dyparams version %u is newer than version %d, the "
                        "newest this dy2stc %s reads",
                        (unsigned)version, DY_DYPARAMS_VERSION,
                        DY_VERSION_STRING);
  if (!read_u32(r, &count, "the tensor count"))
    return DY_STATUS_FORMAT;

  for (uint32_t i = 0; i < count; i++) {
    record rec;
    int id = -1;
    dy_status s = read_record(r, i, &rec);
    if (s == DY_OK)
      s = match_record(p, &rec, seen, &id, err);
    if (s != DY_OK)
      return s;
    seen[id] = rec.data;
  }

  size_t end = r->pos;
  uint32_t stored;
  if (!read_u32(r, &stored, "the file checksum"))
    return DY_STATUS_FORMAT;
  if (r->pos != r->len)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%zu unexpected bytes after the file checksum at "
                        "byte %zu", r->len - r->pos, r->pos);
  uint32_t crc = dy_crc32(0, r->buf, end);
  if (crc != stored)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "file checksum mismatch (stored %08x, computed %08x): "
                        "the file is corrupted",
                        (unsigned)stored, (unsigned)crc);

  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->persistable && !seen[i]) {
      const char *name = p->vars[i]->name;
      char shown[SHOWN_MAX + 4];
      return dy_error_set(err, DY_STATUS_FORMAT,
                          "tensor '%s' is missing (%u tensors in the file)",
                          show(name, strlen(name), shown), (unsigned)count);
    }
  return DY_OK;
}

dy_status dy_dyparams_decode(dy_program *p, const uint8_t *buf, size_t len,
                             dy_error *err) {
  static const uint8_t empty[1];
  reader r = {buf ? buf : empty, buf ? len : 0, 0, err};
  const uint8_t **seen = calloc((size_t)p->n_vars + 1, sizeof *seen);
  if (!seen)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY,
                        ".dyparams: out of memory");
  dy_status s = check_file(p, &r, seen, err);

  /* The file is good: now fill the vars. */
  for (int i = 0; s == DY_OK && i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    if (!v->persistable)
      continue;
    size_t nbytes = data_bytes(v), size = dy_dtype_size(v->type.dtype);
    s = dy_program_set_data(p, i, seen[i], nbytes, err);
    if (s == DY_OK)
      swap_to_le(v->data, size, nbytes / size);
  }
  free(seen);
  return s;
}

dy_status dy_dyparams_read(dy_program *p, const char *path, dy_error *err) {
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err); /* message names path */
  if (s != DY_OK)
    return s;
  s = dy_dyparams_decode(p, buf, len, err);
  free(buf);
  return with_path(err, s, path);
}

/* ------------------------------------------------------------------ */
/* The .dymodel + .dyparams pair                                       */
/* ------------------------------------------------------------------ */

/* path without a trailing ".dymodel" or ".dyparams", plus ext. malloc'd. */
static char *pair_path(const char *path, const char *ext) {
  size_t n = strlen(path);
  static const char *const exts[] = {".dymodel", ".dyparams"};
  for (int i = 0; i < 2; i++) {
    size_t k = strlen(exts[i]);
    if (n > k && strcmp(path + n - k, exts[i]) == 0) {
      n -= k;
      break;
    }
  }
  char *s = malloc(n + strlen(ext) + 1);
  if (s) {
    memcpy(s, path, n);
    strcpy(s + n, ext);
  }
  return s;
}

void dy_model_pair_free(dy_model_pair *m) {
  for (int i = 0; i < 2; i++) {
    free(m->path[i]);
    free(m->buf[i]);
  }
  memset(m, 0, sizeof *m);
}

dy_status dy_model_pair_encode(const dy_program *p, const char *path, dy_model_pair *m,
                               dy_error *err) {
  memset(m, 0, sizeof *m);
  m->path[0] = pair_path(path, ".dyparams");
  m->path[1] = pair_path(path, ".dymodel");
  if (!m->path[0] || !m->path[1])
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  if (strlen(m->path[1]) == strlen(".dymodel"))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "'%s' is not a file name stem (the pair would be '.dymodel' and "
                        "'.dyparams')", path);
  /* Encode both before touching the disk, so a Program that cannot be
   * saved leaves no half-written pair. */
  dy_status s = dy_dymodel_encode(p, &m->buf[1], &m->len[1], err);
  if (s != DY_OK)
    return with_path(err, s, m->path[1]);
  if ((s = dy_dyparams_encode(p, &m->buf[0], &m->len[0], err)) != DY_OK)
    return with_path(err, s, m->path[0]);
  return DY_OK;
}

dy_status dy_model_pair_write(const dy_model_pair *m, dy_error *err) {
  const char *paths[2] = {m->path[0], m->path[1]};
  const void *bufs[2] = {m->buf[0], m->buf[1]};
  return dy_write_files_atomic(2, paths, bufs, m->len, err);
}

dy_status dy_model_save(const dy_program *p, const char *path, dy_error *err) {
  dy_model_pair m;
  dy_status s = dy_model_pair_encode(p, path, &m, err);
  if (s == DY_OK)
    s = dy_model_pair_write(&m, err);
  dy_model_pair_free(&m);
  return s;
}

dy_status dy_model_load(const char *path, dy_program **out, dy_error *err) {
  *out = NULL;
  char *model = pair_path(path, ".dymodel");
  char *params = pair_path(path, ".dyparams");
  dy_program *p = NULL;
  dy_status s = DY_OK;
  if (!model || !params)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  if (s == DY_OK)
    s = dy_dymodel_read(model, &p, err);
  if (s == DY_OK)
    s = dy_dyparams_read(p, params, err);
  free(model);
  free(params);
  if (s == DY_OK)
    *out = p;
  else
    dy_program_free(p);
  return s;
}
