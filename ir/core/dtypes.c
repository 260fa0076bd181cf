/* dtypes.c - the dtype table's functions, each built from dtypes.def: the
 * dtype's name, size, C type, .npy descr and integer range, and element i
 * of an array read and written as double or int64 and printed (dy_ir.h
 * states the conversions). The bottom of core/: it calls nothing of the IR.
 *
 * Every reader and printer of elements goes through here (the text IR's
 * printer and parser, the tensor printer, dy_item, the .npy reader and
 * writer, --localize's comparison), so an i8 reads signed and an i32 as
 * four bytes everywhere by construction.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

static const struct {
  const char *name, *ctype, *npy;
  size_t size;
  int64_t lo, hi;
  char kind;            /* 'F', 'S', 'U', 'B' */
} dtypes[DY_DTYPE_COUNT] = {
#define KIND_F 'F'
#define KIND_S 'S'
#define KIND_U 'U'
#define KIND_B 'B'
#define DY_DTYPE(NAME, name_, ctype_, kind_, npy_, lo_, hi_) \
  [DY_##NAME] = {name_, #ctype_, npy_, sizeof(ctype_), lo_, hi_, KIND_##kind_},
#include "dtypes.def"
#undef DY_DTYPE
};

static bool known(dy_dtype t) { return (unsigned)t < DY_DTYPE_COUNT; }

const char *dy_dtype_name(dy_dtype t) { return known(t) ? dtypes[t].name : "?"; }
size_t dy_dtype_size(dy_dtype t) { return known(t) ? dtypes[t].size : 0; }
const char *dy_dtype_ctype(dy_dtype t) { return known(t) ? dtypes[t].ctype : "void"; }
const char *dy_dtype_npy(dy_dtype t) { return known(t) ? dtypes[t].npy : NULL; }

bool dy_dtype_from_name(const char *s, dy_dtype *out) {
  for (int i = 0; i < DY_DTYPE_COUNT; i++)
    if (strcmp(s, dtypes[i].name) == 0) {
      *out = (dy_dtype)i;
      return true;
    }
  return false;
}

bool dy_dtype_from_npy(const char *descr, dy_dtype *out) {
  for (int i = 0; i < DY_DTYPE_COUNT; i++)
    if (strcmp(descr, dtypes[i].npy) == 0) {
      *out = (dy_dtype)i;
      return true;
    }
  return false;
}

bool dy_dtype_int_range(dy_dtype t, int64_t *lo, int64_t *hi) {
  if (!known(t) || (dtypes[t].kind != 'S' && dtypes[t].kind != 'U'))
    return false;
  *lo = dtypes[t].lo;
  *hi = dtypes[t].hi;
  return true;
}

/* ---- elements ---- */

/* v truncated toward zero into [lo, hi], NaN as 0 (no undefined
 * conversion: (double)INT64_MAX is 2^63, so v below it converts). */
static int64_t f64_to_int(double v, int64_t lo, int64_t hi) {
  if (v != v)
    return 0;
  if (v <= (double)lo)
    return lo;
  if (v >= (double)hi)
    return hi;
  return (int64_t)v;
}

/* A double as the nearest float; beyond its range an infinity (the
 * conversion itself would be undefined there). */
static float f64_to_f32(double v) {
  if (isfinite(v) && fabs(v) > FLT_MAX)
    return v > 0 ? INFINITY : -INFINITY;
  return (float)v;
}

/* Per kind: an element read as int64, and a double or an int64 written. */
#define GET_I64_F(ct, x) f64_to_int((double)(x), INT64_MIN, INT64_MAX)
#define GET_I64_S(ct, x) (int64_t)(x)
#define GET_I64_U(ct, x) (int64_t)(x)
#define GET_I64_B(ct, x) (int64_t)(x)
#define SET_F64_F(ct, v, lo, hi) f64_to_f32(v)
#define SET_F64_S(ct, v, lo, hi) (ct) f64_to_int(v, lo, hi)
#define SET_F64_U(ct, v, lo, hi) (ct) f64_to_int(v, lo, hi)
#define SET_F64_B(ct, v, lo, hi) (ct)((v) != 0)
#define SET_I64_F(ct, v) (ct)(v)
#define SET_I64_S(ct, v) (ct)(v)
#define SET_I64_U(ct, v) (ct)(v)
#define SET_I64_B(ct, v) (ct)((v) != 0)

double dy_dtype_get_f64(dy_dtype t, const void *data, int64_t i) {
  switch (t) {
#define DY_DTYPE(NAME, name, ct, kind, npy, lo, hi) \
  case DY_##NAME: return (double)((const ct *)data)[i];
#include "dtypes.def"
#undef DY_DTYPE
  default: return 0;
  }
}

int64_t dy_dtype_get_i64(dy_dtype t, const void *data, int64_t i) {
  switch (t) {
#define DY_DTYPE(NAME, name, ct, kind, npy, lo, hi) \
  case DY_##NAME: return GET_I64_##kind(ct, ((const ct *)data)[i]);
#include "dtypes.def"
#undef DY_DTYPE
  default: return 0;
  }
}

void dy_dtype_set_f64(dy_dtype t, void *data, int64_t i, double v) {
  switch (t) {
#define DY_DTYPE(NAME, name, ct, kind, npy, lo, hi) \
  case DY_##NAME: ((ct *)data)[i] = SET_F64_##kind(ct, v, lo, hi); break;
#include "dtypes.def"
#undef DY_DTYPE
  default: break;
  }
}

void dy_dtype_set_i64(dy_dtype t, void *data, int64_t i, int64_t v) {
  switch (t) {
#define DY_DTYPE(NAME, name, ct, kind, npy, lo, hi) \
  case DY_##NAME: ((ct *)data)[i] = SET_I64_##kind(ct, v); break;
#include "dtypes.def"
#undef DY_DTYPE
  default: break;
  }
}

char *dy_float_str(double f, char *buf, size_t n) {
  char s[64];
  for (int prec = 9; prec <= 17; prec++) {
    snprintf(s, sizeof s, "%.*g", prec, f);
    if (strtod(s, NULL) == f || f != f)
      break;
  }
  snprintf(buf, n, "%s%s", s, strpbrk(s, ".eEn") ? "" : ".0");
  return buf;
}

char *dy_dtype_format(char *buf, size_t n, dy_dtype t, const void *data, int64_t i,
                      int digits) {
  if (!known(t))
    snprintf(buf, n, "?");
  else if (dtypes[t].kind != 'F')
    snprintf(buf, n, "%lld", (long long)dy_dtype_get_i64(t, data, i));
  else if (digits > 0)
    snprintf(buf, n, "%.*g", digits, dy_dtype_get_f64(t, data, i));
  else
    dy_float_str(dy_dtype_get_f64(t, data, i), buf, n);
  return buf;
}
