/* onnx_tensor.c - ONNX TensorProtos (initializers, Constant values, test
 * data) to host constants: dtype mapping (float32, int64, bool, int8, uint8,
 * int32; int16, uint16 and uint32 widen exactly to int64), raw / typed /
 * external data with their sizes checked, and dy_onnx_tensor_read for .pb
 * files. The declared shape is checked against DY_MAX_TENSOR_BYTES
 * (dy_checked.h) and the data that backs it is checked to be there before
 * anything of that size is allocated: a few bytes claiming tens of GB are
 * an error, not a malloc.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* tensors: TensorProto -> constant                                    */
/* ------------------------------------------------------------------ */

const char *ox_dtype_name(int t) {
  static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16",
                                "int16", "int32", "int64", "string", "bool",
                                "float16", "double", "uint32", "uint64",
                                "complex64", "complex128", "bfloat16"};
  return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

/* ONNX elem type -> our dtype; false for the ones we do not have. */
static bool map_dtype(int t, dy_dtype *out) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = DY_F32; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = DY_I64; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = DY_BOOL; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = DY_I8; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = DY_U8; return true;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = DY_I32; return true;
  default: return false;
  }
}

bool dy_onnx_dtype(int onnx_type, dy_dtype *out) { return map_dtype(onnx_type, out); }

/* Open the external data file dir/location of t and check that it holds
 * `want` bytes at its offset (refusing paths that leave dir); *f is then
 * positioned there (caller closes). Nothing is allocated for the data. */
static dy_status open_external(const char *what, const char *dir,
                               const Onnx__TensorProto *t, size_t want, FILE **fp,
                               dy_error *err) {
  *fp = NULL;
  const char *loc = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (!e->key || !e->value)
      continue;
    char *end;
    if (strcmp(e->key, "location") == 0) {
      loc = e->value;
    } else if (strcmp(e->key, "offset") == 0) {
      errno = 0;
      offset = strtoll(e->value, &end, 10);
      if (errno || *end || offset < 0)
        return dy_error_set(err, DY_STATUS_FORMAT, "%s: bad external data offset '%s'",
                            what, e->value);
    } else if (strcmp(e->key, "length") == 0) {
      errno = 0;
      length = strtoll(e->value, &end, 10);
      if (errno || *end || length < 0)
        return dy_error_set(err, DY_STATUS_FORMAT, "%s: bad external data length '%s'",
                            what, e->value);
    }
  }
  if (!loc || !*loc)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: external data without a location", what);
  if (loc[0] == '/' || strstr(loc, ".."))
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: external data location '%s' must be a relative path "
                        "inside the model's directory", what, loc);
  if (length >= 0 && (size_t)length != want)
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: external data length %lld, the tensor needs %zu bytes",
                        what, (long long)length, want);
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", loc) >= (int)sizeof path)
    return dy_error_set(err, DY_STATUS_IO, "%s: the external data path is too long", what);
  int fd;
  size_t fsize;
  dy_error oe = {0};
  if (dy_open_regular(path, &fd, &fsize, &oe)) /* a FIFO or device is refused */
    return dy_error_set(err, DY_STATUS_IO, "%s: external data %s", what, oe.msg);
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot open external data %s: %s",
                        what, path, strerror(errno));
  }
  dy_status s = DY_OK;
  long size = (long)fsize;
  if ((uint64_t)offset > (uint64_t)size ||
      (uint64_t)size - (uint64_t)offset < want)
    s = dy_error_set(err, DY_STATUS_FORMAT,
                     "%s: external data %s holds %ld bytes, the tensor needs %zu "
                     "at offset %lld", what, path, size, want, (long long)offset);
  else if (fseek(f, (long)offset, SEEK_SET) != 0)
    s = dy_error_set(err, DY_STATUS_IO, "%s: reading %s failed", what, path);
  if (s)
    fclose(f);
  else
    *fp = f;
  return s;
}

/* Read the `want` bytes open_external checked into dst and close f. */
static dy_status read_external(const char *what, FILE *f, void *dst, size_t want,
                               dy_error *err) {
  dy_status s = DY_OK;
  if (want && fread(dst, 1, want, f) != want)
    s = dy_error_set(err, DY_STATUS_IO, "%s: reading the external data failed", what);
  fclose(f);
  return s;
}

/* A tensor of a narrower integer type (width bytes) as int64 into dst (n
 * elements): raw or external little-endian data, or int32_data (uint32's
 * in uint64_data). */
static dy_status widen_ints(const Onnx__TensorProto *t, const char *what, FILE *ext,
                            int64_t n, int width, bool is_signed, int64_t *dst,
                            dy_error *err) {
  size_t nb = (size_t)n * (size_t)width;
  if (ext || t->has_raw_data) {
    uint8_t *raw = malloc(nb ? nb : 1);
    if (!raw) {
      if (ext)
        fclose(ext);
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    dy_status s = DY_OK;
    if (ext)
      s = read_external(what, ext, raw, nb, err);
    else if (nb)
      memcpy(raw, t->raw_data.data, nb);
    for (int64_t i = 0; !s && i < n; i++) {
      uint64_t u = 0;
      for (int b = width - 1; b >= 0; b--)
        u = u << 8 | raw[(size_t)i * (size_t)width + (size_t)b];
      /* sign-extend from width bytes */
      uint64_t sign = (uint64_t)1 << (8 * width - 1);
      dst[i] = is_signed && (u & sign) ? (int64_t)u - (int64_t)(sign << 1) : (int64_t)u;
    }
    free(raw);
    return s;
  }
  bool u32 = width == 4 && !is_signed;
  int64_t lo = is_signed ? -32768 : 0, hi = u32 ? 4294967295 : is_signed ? 32767 : 65535;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = u32 ? (int64_t)t->uint64_data[i] : (int64_t)t->int32_data[i];
    if (v < lo || v > hi || (u32 && t->uint64_data[i] > 4294967295u))
      return dy_error_set(err, DY_STATUS_FORMAT, "%s: value %lld (element %lld) is out of "
                          "the range of %s", what, (long long)v, (long long)i,
                          u32 ? "uint32" : is_signed ? "int16" : "uint16");
    dst[i] = v;
  }
  return DY_OK;
}

/* The typed data field (float_data, int64_data, int32_data, uint64_data)
 * holds n values. */
static dy_status check_typed(const Onnx__TensorProto *t, const char *what, int width,
                             bool is_signed, dy_dtype dt, int64_t n, dy_error *err) {
  bool u32 = width == 4 && !is_signed;
  size_t have = width ? (u32 ? t->n_uint64_data : t->n_int32_data)
                : dt == DY_F32 ? t->n_float_data
                : dt == DY_I64 ? t->n_int64_data
                               : t->n_int32_data;
  const char *kind = width            ? "values"
                     : dt == DY_F32   ? "floats"
                     : dt == DY_I64   ? "int64s"
                     : dt == DY_BOOL  ? "bools"
                                      : "values";
  if (have != (size_t)n)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: %zu %s for %lld elements", what, have,
                        kind, (long long)n);
  return DY_OK;
}

/* Convert a TensorProto into a new constant. `what` names it in errors;
 * dir resolves external data (NULL: the current directory). */
dy_status ox_tensor_convert(const Onnx__TensorProto *t, const char *what,
                            const char *dir, ox_const **out, dy_error *err) {
  *out = NULL;
  dy_dtype dt;
  int odt = t->has_data_type ? t->data_type : 0;
  int width = 0; /* a narrower integer, widened to int64 (exactly) */
  bool is_signed = false;
  if (!map_dtype(odt, &dt)) {
    switch (odt) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: width = 2, is_signed = true; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: width = 2; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: width = 4; break;
    default:
      return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                          "%s: dtype %s is not supported (dy2stc has float32, int64, "
                          "int32, int8, uint8 and bool)", what, ox_dtype_name(odt));
    }
    dt = DY_I64;
  }
  if (t->segment)
    return dy_error_set(err, DY_STATUS_UNSUPPORTED, "%s: segmented tensors are not supported", what);
  if (t->n_dims > DY_MAX_DIMS)
    return dy_error_set(err, DY_STATUS_UNSUPPORTED, "%s: rank %zu exceeds %d", what,
                        t->n_dims, DY_MAX_DIMS);
  dy_type ty = {.dtype = dt, .rank = (int)t->n_dims};
  for (size_t i = 0; i < t->n_dims; i++)
    ty.shape[i] = t->dims[i];
  int64_t n, nb64;
  char ts[160];
  if (!dy_ck_numel(ty.shape, ty.rank, &n) ||
      !dy_ck_bytes(n, width ? (size_t)width : dy_dtype_size(dt), &nb64) ||
      !dy_ck_bytes(n, dy_dtype_size(dt), &nb64))
    return dy_error_set(err, DY_STATUS_FORMAT,
                        "%s: shape %s is negative or larger than the maximum tensor size "
                        "(%lld bytes)", what, dy_type_str(&ty, ts, sizeof ts),
                        (long long)DY_MAX_TENSOR_BYTES);
  size_t esz = dy_dtype_size(dt), nb = (size_t)nb64;
  size_t src_bytes = (size_t)n * (width ? (size_t)width : esz);
  /* the data must back the declared size before anything that big is
   * allocated */
  bool external = t->has_data_location &&
                  t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  FILE *ext = NULL;
  dy_status s = DY_OK;
  if (external)
    s = open_external(what, dir, t, src_bytes, &ext, err);
  else if (t->has_raw_data && t->raw_data.len != src_bytes)
    s = dy_error_set(err, DY_STATUS_FORMAT, "%s: raw_data has %zu bytes, %s%s needs %zu",
                     what, t->raw_data.len, ox_dtype_name(odt),
                     dy_type_str(&ty, ts, sizeof ts) + strlen(dy_dtype_name(dt)), src_bytes);
  else if (!t->has_raw_data)
    s = check_typed(t, what, width, is_signed, dt, n, err);
  if (s)
    return s;
  ox_const *k = calloc(1, sizeof *k);
  if (!k || !(k->data = calloc(nb ? nb : 1, 1))) {
    free(k);
    if (ext)
      fclose(ext);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
  }
  k->type = ty;
  if (width) {
    s = widen_ints(t, what, ext, n, width, is_signed, k->data, err);
  } else if (ext) {
    s = read_external(what, ext, k->data, nb, err);
  } else if (t->has_raw_data) {
    if (nb)
      memcpy(k->data, t->raw_data.data, nb);
    if (dt == DY_BOOL)
      for (size_t i = 0; i < nb; i++)
        ((unsigned char *)k->data)[i] = ((unsigned char *)k->data)[i] != 0;
  } else if (dt == DY_F32) {
    if (nb)
      memcpy(k->data, t->float_data, nb);
  } else if (dt == DY_I64) {
    if (nb)
      memcpy(k->data, t->int64_data, nb);
  } else if (dt == DY_BOOL) {
    for (int64_t i = 0; i < n; i++)
      ((unsigned char *)k->data)[i] = t->int32_data[i] != 0;
  } else { /* int8, uint8, int32 in int32_data (counted by check_typed) */
    for (int64_t i = 0; !s && i < n; i++) {
      int32_t v = t->int32_data[i];
      if ((dt == DY_I8 && (v < -128 || v > 127)) || (dt == DY_U8 && (v < 0 || v > 255)))
        s = dy_error_set(err, DY_STATUS_FORMAT, "%s: value %d (element %lld) is out of the "
                         "range of %s", what, (int)v, (long long)i, dt == DY_I8 ? "int8" : "uint8");
      else if (dt == DY_I32)
        ((int32_t *)k->data)[i] = v;
      else if (dt == DY_I8)
        ((int8_t *)k->data)[i] = (int8_t)v;
      else
        ((uint8_t *)k->data)[i] = (uint8_t)v;
    }
  }
  if (s) {
    ox_free_const(k);
    return s;
  }
  *out = k;
  return DY_OK;
}

dy_status dy_onnx_tensor_read(const char *path, dy_tensor **out, char *name,
                              size_t name_n, dy_error *err) {
  *out = NULL;
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s)
    return s;
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
  free(buf);
  if (!t)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: not a TensorProto (or truncated)", path);
  if (name && name_n)
    snprintf(name, name_n, "%s", t->name ? t->name : "");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(dir, sizeof dir, ".");
  ox_const *k;
  s = ox_tensor_convert(t, path, dir, &k, err);
  onnx__tensor_proto__free_unpacked(t, NULL);
  if (s)
    return s;
  *out = dy_tensor_from_data(k->type.dtype, k->type.rank, k->type.shape, k->data);
  ox_free_const(k);
  if (!*out)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  return DY_OK;
}
