/* npy.c - NumPy .npy files: read versions 1.0, 2.0 and 3.0, write 1.0.
 *
 * The format (numpy/lib/format.py, NEP 1):
 *
 *   "\x93NUMPY" major minor      magic and version, 8 bytes
 *   header_len                   little-endian u16 (1.0) or u32 (2.0, 3.0)
 *   header                       ASCII (3.0: UTF-8) Python dict literal,
 *                                e.g. {'descr': '<f4', 'fortran_order':
 *                                False, 'shape': (2, 3), } padded with
 *                                spaces and ended by '\n' so that the data
 *                                starts at a multiple of 64 bytes
 *   data                         prod(shape) elements, C order
 *
 * dtypes: '<f4' is f32, '<i8' i64, '|b1' bool, '|i1' i8, '|u1' u8, '<i4'
 * i32 (each dtype's descr is in ir/dtypes.def); on read '<f8' converts to
 * f32. Fortran-order arrays are refused (we would have to transpose) with a
 * clear message.
 *
 * The header parser is a small recursive-descent reader for exactly the
 * dict numpy writes, but tolerant the way ast.literal_eval is: keys in any
 * order, either quote style, any spacing, optional trailing commas, '()'
 * for a scalar and '(3,)' for a vector. Every malformed file is a
 * DY_STATUS_FORMAT error whose message starts with the path; nothing is
 * read beyond the buffer.
 */
#include <math.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static bool host_is_little_endian(void) {
  uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ------------------------------------------------------------------ */
/* Header parsing                                                      */
/* ------------------------------------------------------------------ */

typedef struct {
  const char *p, *end;
} cursor;

static void skip_space(cursor *c) {
  while (c->p < c->end &&
         (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static bool accept(cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

/* A quoted Python string without escapes: 'x' or "x". */
static bool parse_string(cursor *c, char *buf, size_t n) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return false;
  char q = *c->p++;
  size_t k = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || *c->p == '\n' || k + 1 >= n)
      return false;
    buf[k++] = *c->p++;
  }
  if (c->p >= c->end)
    return false;
  c->p++;
  buf[k] = '\0';
  return true;
}

/* True or False. */
static bool parse_bool(cursor *c, bool *out) {
  skip_space(c);
  size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
    c->p += 4;
    *out = true;
    return true;
  }
  if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
    c->p += 5;
    *out = false;
    return true;
  }
  return false;
}

/* A non-negative integer (Python 2 numpy wrote longs as "3L"). */
static bool parse_dim(cursor *c, int64_t *out) {
  skip_space(c);
  if (c->p >= c->end || *c->p < '0' || *c->p > '9')
    return false;
  int64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    int d = *c->p++ - '0';
    if (v > (INT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  if (c->p < c->end && *c->p == 'L')
    c->p++;
  *out = v;
  return true;
}

typedef struct {
  char descr[32];
  bool fortran_order;
  int rank;
  int64_t shape[DY_MAX_DIMS];
  bool has_descr, has_fortran, has_shape;
} npy_header;

/* A tuple of dims: (), (3,), (2, 3), (2, 3,). Fills *msg on failure. */
static bool parse_shape(cursor *c, npy_header *h, const char **msg) {
  *msg = "'shape' is not a tuple of non-negative integers";
  if (!accept(c, '('))
    return false;
  h->rank = 0;
  for (;;) {
    if (accept(c, ')'))
      return true;
    int64_t d;
    if (!parse_dim(c, &d))
      return false;
    if (h->rank == DY_MAX_DIMS) {
      *msg = "rank exceeds DY_MAX_DIMS (8)";
      return false;
    }
    h->shape[h->rank++] = d;
    if (accept(c, ','))
      continue;
    if (accept(c, ')')) {
      /* "(3)" is just 3 in Python, not a tuple */
      if (h->rank == 1)
        return false;
      return true;
    }
    return false;
  }
}

/* The header dict. On failure *msg says what is wrong. */
static bool parse_header(cursor *c, npy_header *h, const char **msg) {
  *msg = "header is not a dict";
  if (!accept(c, '{'))
    return false;
  for (;;) {
    if (accept(c, '}'))
      break;
    char key[32];
    *msg = "header dict has a malformed key";
    if (!parse_string(c, key, sizeof key) || !accept(c, ':'))
      return false;
    if (strcmp(key, "descr") == 0) {
      *msg = "'descr' is not a simple dtype string";
      if (!parse_string(c, h->descr, sizeof h->descr))
        return false;
      h->has_descr = true;
    } else if (strcmp(key, "fortran_order") == 0) {
      *msg = "'fortran_order' is not True or False";
      if (!parse_bool(c, &h->fortran_order))
        return false;
      h->has_fortran = true;
    } else if (strcmp(key, "shape") == 0) {
      if (!parse_shape(c, h, msg))
        return false;
      h->has_shape = true;
    } else {
      *msg = "header dict has an unknown key";
      return false;
    }
    if (accept(c, ','))
      continue;
    *msg = "header dict is not closed";
    if (accept(c, '}'))
      break;
    return false;
  }
  /* only padding may follow */
  skip_space(c);
  *msg = "junk after the header dict";
  if (c->p != c->end)
    return false;
  *msg = "header lacks 'descr', 'fortran_order' or 'shape'";
  return h->has_descr && h->has_fortran && h->has_shape;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/* What a descr means: the tensor dtype and the bytes per stored element. */
typedef struct {
  const char *descr;
  dy_dtype dtype;
  size_t file_size;
} npy_kind;

/* A dtype's own descr (the dtype table, dy_dtype_npy), or '<f8' read as f32. */
static bool npy_kind_of(const char *descr, npy_kind *k) {
  dy_dtype t;
  if (dy_dtype_from_npy(descr, &t))
    *k = (npy_kind){dy_dtype_npy(t), t, dy_dtype_size(t)};
  else if (strcmp(descr, "<f8") == 0)
    *k = (npy_kind){"<f8", DY_F32, 8};
  else
    return false;
  return true;
}

static uint64_t load_le(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* double -> float without the undefined out-of-range conversion. */
static float f64_to_f32(double d) {
  if (isfinite(d) && fabs(d) > FLT_MAX)
    return d > 0 ? INFINITY : -INFINITY;
  return (float)d;
}

/* Convert n stored elements at src (little-endian, kind k) into dst. */
static void decode_data(const npy_kind *k, const uint8_t *src, int64_t n,
                        void *dst) {
  bool le = host_is_little_endian();
  if (k->dtype == DY_BOOL) {
    uint8_t *o = dst;
    for (int64_t i = 0; i < n; i++)
      o[i] = src[i] != 0;
  } else if (le && k->file_size == dy_dtype_size(k->dtype)) {
    memcpy(dst, src, (size_t)n * k->file_size);
  } else if (k->dtype == DY_F32 && k->file_size == 4) {
    float *o = dst;
    for (int64_t i = 0; i < n; i++) {
      uint32_t u = (uint32_t)load_le(src + 4 * i, 4);
      memcpy(&o[i], &u, 4);
    }
  } else if (k->dtype == DY_F32) { /* <f8 */
    float *o = dst;
    for (int64_t i = 0; i < n; i++) {
      uint64_t u = load_le(src + 8 * i, 8);
      double d;
      memcpy(&d, &u, 8);
      o[i] = f64_to_f32(d);
    }
  } else if (k->file_size == 8) { /* <i8 on a big-endian host */
    int64_t *o = dst;
    for (int64_t i = 0; i < n; i++)
      o[i] = (int64_t)load_le(src + 8 * i, 8);
  } else { /* <i4 on a big-endian host */
    int32_t *o = dst;
    for (int64_t i = 0; i < n; i++)
      o[i] = (int32_t)(uint32_t)load_le(src + 4 * i, 4);
  }
}

/* Parse a whole .npy image. On success *out is a new tensor. */
static dy_status npy_decode(const char *path, const uint8_t *buf, size_t len,
                            dy_tensor **out, char descr[DY_NPY_DESCR_MAX], dy_error *err) {
  if (len < sizeof npy_magic || memcmp(buf, npy_magic, sizeof npy_magic) != 0)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: not a .npy file (bad magic)", path);
  if (len < 10)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: truncated .npy header",
                        path);
  int major = buf[6], minor = buf[7];
  size_t pre;  /* bytes before the header text */
  size_t hlen;
  if (major == 1) {
    pre = 10;
    hlen = (size_t)load_le(buf + 8, 2);
  } else if (major == 2 || major == 3) {
    pre = 12;
    if (len < pre)
      return dy_error_set(err, DY_STATUS_FORMAT,
                          "%s: truncated .npy header", path);
    hlen = (size_t)load_le(buf + 8, 4);
  } else {
    return dy_error_set(err, DY_STATUS_VERSION,
                        "%s: .npy version %d.%d is not supported (1.0, 2.0, "
                        "3.0 are)", path, major, minor);
  }
  if (hlen > len - pre)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: truncated .npy header (%zu bytes declared, %zu "
                        "present)", path, hlen, len - pre);

  npy_header h = {.rank = 0};
  cursor c = {(const char *)buf + pre, (const char *)buf + pre + hlen};
  const char *msg;
  if (!parse_header(&c, &h, &msg))
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: bad .npy header: %s",
                        path, msg);
  if (h.fortran_order)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: fortran_order arrays are not supported; save "
                        "a C-order copy (numpy.ascontiguousarray)", path);
  npy_kind kind, *k = &kind;
  snprintf(descr, DY_NPY_DESCR_MAX, "%s", h.descr);
  if (!npy_kind_of(h.descr, k))
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: unsupported dtype '%s' (want <f4, <f8, <i8, <i4, "
                        "|i1, |u1 or |b1)", path, h.descr);

  /* The data must be exactly prod(shape) elements. */
  int64_t numel, nbytes;
  if (!dy_ck_numel(h.shape, h.rank, &numel) || !dy_ck_bytes(numel, k->file_size, &nbytes) ||
      !dy_ck_bytes(numel, dy_dtype_size(k->dtype), &nbytes))
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: the shape is larger than the maximum tensor size (%lld bytes)",
                        path, (long long)DY_MAX_TENSOR_BYTES);
  size_t have = len - pre - hlen;
  if ((uint64_t)numel > (uint64_t)SIZE_MAX / k->file_size ||
      (size_t)numel * k->file_size != have)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: data is %zu bytes, shape and dtype '%s' need "
                        "%lld elements of %zu bytes", path, have, h.descr,
                        (long long)numel, k->file_size);

  dy_tensor *t = dy_tensor_new(k->dtype, h.rank, h.shape);
  if (!t)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY,
                        "%s: cannot allocate the tensor", path);
  if (numel > 0)
    decode_data(k, buf + pre + hlen, numel, t->data);
  *out = t;
  return DY_OK;
}

/* The tensor follows the usual ownership rule of dy_runtime.h: it belongs
 * to the innermost open scope, or to the caller (dy_tensor_free) when no
 * scope is open. */
dy_status dy_npy_read_descr(const char *path, dy_tensor **out, char descr[DY_NPY_DESCR_MAX],
                            dy_error *err) {
  if (!path || !out || !descr)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "dy_npy_read: NULL path, out or descr");
  *out = NULL;
  descr[0] = 0;
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s != DY_OK)
    return s;
  s = npy_decode(path, buf, len, out, descr, err);
  free(buf);
  return s;
}

bool dy_dtype_widens_to(dy_dtype from, dy_dtype to) {
  if (to == DY_I64)
    return from == DY_I32 || from == DY_I8 || from == DY_U8;
  if (to == DY_I32)
    return from == DY_I8 || from == DY_U8;
  return false;
}

dy_status dy_tensor_widen_to(dy_tensor **t, dy_dtype want, dy_error *err) {
  const dy_tensor *a = *t;
  if (!a || !dy_dtype_widens_to(a->type.dtype, want))
    return DY_OK;
  dy_tensor *w = dy_tensor_new(want, a->type.rank, a->type.shape);
  if (!w)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int64_t n = dy_tensor_numel(w);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = a->type.dtype == DY_I32  ? ((const int32_t *)a->data)[i]
                : a->type.dtype == DY_I8 ? ((const int8_t *)a->data)[i]
                                         : ((const uint8_t *)a->data)[i];
    if (want == DY_I64)
      ((int64_t *)w->data)[i] = v;
    else
      ((int32_t *)w->data)[i] = (int32_t)v;
  }
  dy_tensor_free(*t);
  *t = w;
  return DY_OK;
}

dy_status dy_npy_read_as(const char *path, const char *what, dy_dtype want, dy_tensor **out,
                         dy_error *err) {
  char descr[DY_NPY_DESCR_MAX];
  dy_status s = dy_npy_read_descr(path, out, descr, err);
  if (s)
    return s;
  if (dy_dtype_widens_to((*out)->type.dtype, want))
    return dy_tensor_widen_to(out, want, err);
  if (strcmp(descr, dy_dtype_npy(want)) == 0)
    return DY_OK;
  dy_tensor_free(*out);
  *out = NULL;
  return dy_error_set(err, DY_STATUS_DTYPE_MISMATCH, "%s: %s: dtype '%s', expected '%s' (%s)",
                      what, path, descr, dy_dtype_npy(want), dy_dtype_name(want));
}

dy_status dy_npy_read(const char *path, dy_tensor **out, dy_error *err) {
  char descr[DY_NPY_DESCR_MAX];
  return dy_npy_read_descr(path, out, descr, err);
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

static void store_le(uint8_t *p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

dy_status dy_npy_write(const char *path, const dy_tensor *t, dy_error *err) {
  if (!path || !t)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "dy_npy_write: NULL path or tensor");
  const dy_type *ty = &t->type;
  if ((unsigned)ty->dtype >= DY_DTYPE_COUNT || ty->rank < 0 ||
      ty->rank > DY_MAX_DIMS)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "%s: tensor has a corrupt type", path);
  int64_t numel = dy_type_numel(ty);
  size_t es = dy_dtype_size(ty->dtype);
  if (numel < 0 || (numel > 0 && !t->data))
    return dy_error_set(err, DY_STATUS_SYMBOLIC,
                        "%s: cannot write a symbolic tensor", path);
  size_t nbytes = (size_t)numel * es;
  if (t->nbytes < nbytes)
    return dy_error_set(err, DY_STATUS_INTERNAL,
                        "%s: tensor holds %zu bytes, its type needs %zu", path,
                        t->nbytes, nbytes);

  /* The dict as numpy writes it, then spaces and '\n' up to a multiple of
   * 64 bytes counting the 10-byte preamble. */
  char dict[512];
  int n = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   dy_dtype_npy(ty->dtype));
  for (int i = 0; i < ty->rank; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld",
                  i ? ", " : "", (long long)ty->shape[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }",
                ty->rank == 1 ? "," : "");
  size_t hlen = (size_t)n + 1; /* with the newline */
  hlen += (64 - (10 + hlen) % 64) % 64;

  size_t total = 10 + hlen + nbytes;
  uint8_t *buf = malloc(total);
  if (!buf)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory",
                        path);
  memcpy(buf, npy_magic, sizeof npy_magic);
  buf[6] = 1;
  buf[7] = 0;
  store_le(buf + 8, hlen, 2);
  memcpy(buf + 10, dict, (size_t)n);
  memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
  buf[10 + hlen - 1] = '\n';

  /* data, little-endian; bools as 0/1 */
  uint8_t *d = buf + 10 + hlen;
  if (ty->dtype == DY_BOOL) {
    const uint8_t *s = t->data;
    for (int64_t i = 0; i < numel; i++)
      d[i] = s[i] != 0;
  } else if (host_is_little_endian()) {
    if (nbytes)
      memcpy(d, t->data, nbytes);
  } else {
    const uint8_t *s = t->data;
    for (int64_t i = 0; i < numel; i++) {
      uint64_t v = 0;
      if (es == 4) {
        uint32_t u;
        memcpy(&u, s + 4 * i, 4);
        v = u;
      } else {
        memcpy(&v, s + 8 * i, 8);
      }
      store_le(d + es * (size_t)i, v, es);
    }
  }
  dy_status st = dy_write_file_atomic(path, buf, total, err);
  free(buf);
  return st;
}
