/* types.c - dtypes and value types (dtype + shape; a negative dim is a
 * symbolic dim, dims.c: -1 the dynamic batch). */
#include <string.h>

#include "dy_ir.h"

static const char *const dtype_names[DY_DTYPE_COUNT] = {"f32", "i64", "bool"};
static const size_t dtype_sizes[DY_DTYPE_COUNT] = {4, 8, 1};

const char *dy_dtype_name(dy_dtype t) {
  return (unsigned)t < DY_DTYPE_COUNT ? dtype_names[t] : "?";
}

size_t dy_dtype_size(dy_dtype t) {
  return (unsigned)t < DY_DTYPE_COUNT ? dtype_sizes[t] : 0;
}

bool dy_dtype_from_name(const char *s, dy_dtype *out) {
  for (int i = 0; i < DY_DTYPE_COUNT; i++)
    if (strcmp(s, dtype_names[i]) == 0) {
      *out = (dy_dtype)i;
      return true;
    }
  return false;
}

int64_t dy_type_numel(const dy_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0)
      return -1;
    n *= t->shape[i];
  }
  return n;
}

/* Every symbol at batch: a symbolic dim is evaluated with all its symbols
 * set to the one value (for the batch alone, the batch's value). */
int64_t dy_type_numel_at(const dy_type *t, int64_t batch) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->shape[i];
    if (d < -1) {
      int64_t vals[DY_MAX_SYMS];
      for (int s = 0; s < DY_MAX_SYMS; s++)
        vals[s] = batch;
      if (!dy_dim_eval(t->shape[i], vals, &d))
        return -1;
    }
    n *= d == -1 ? batch : d;
  }
  return n;
}

bool dy_type_is_static(const dy_type *t) { return dy_type_numel(t) >= 0; }

bool dy_type_equal(const dy_type *a, const dy_type *b) {
  if (a->dtype != b->dtype || a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i])
      return false;
  return true;
}

char *dy_type_str(const dy_type *t, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s[", dy_dtype_name(t->dtype));
  for (int i = 0; i < t->rank && k < n; i++) {
    char d[96];
    k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? "," : "",
                          dy_dim_str(t->shape[i], d, sizeof d));
  }
  if (k < n)
    snprintf(buf + k, n - k, "]");
  return buf;
}
