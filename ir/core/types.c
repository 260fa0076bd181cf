/* types.c - value types (a dtype of dtypes.c and a shape; a negative dim
 * is a symbolic dim, dims.c: -1 the dynamic batch): element counts and
 * bytes, the check every type passes where it is made, equality, text. */
#include "dy_ir.h"

/* A dim's value with every size symbol set to batch (a symbolic dim is
 * evaluated: 2*batch*seq at batch 3 is 18): batch < 0 gives -1, an
 * expression too large for int64 -2. */
static int64_t dim_at(int64_t d, int64_t batch) {
  if (d >= 0 || batch < 0)
    return d >= 0 ? d : -1;
  if (d == -1)
    return batch;
  int64_t vals[DY_MAX_SYMS];
  for (int s = 0; s < DY_MAX_SYMS; s++)
    vals[s] = batch;
  return dy_dim_eval(d, vals, &d) ? d : -2;
}

/* The element count with dynamic dims set to batch (batch < 0: -1 when
 * any is dynamic), saturating at DY_MAX_NUMEL + 1. */
static int64_t numel_sat(const dy_type *t, int64_t batch) {
  int64_t n = 1;
  bool zero = false;
  for (int i = 0; i < t->rank; i++) {
    int64_t d = t->shape[i] < 0 ? dim_at(t->shape[i], batch) : t->shape[i];
    if (d == -2)
      return DY_MAX_NUMEL + 1;
    if (d < 0)
      return -1;
    if (d == 0)
      zero = true;
    else if (!dy_ck_mul(n, d, &n) || n > DY_MAX_NUMEL)
      n = DY_MAX_NUMEL + 1;
  }
  return zero ? 0 : n;
}

int64_t dy_type_numel(const dy_type *t) { return numel_sat(t, -1); }

int64_t dy_type_numel_at(const dy_type *t, int64_t batch) {
  return numel_sat(t, batch < 0 ? 0 : batch);
}

bool dy_type_bytes_at(const dy_type *t, int64_t batch, int64_t *out) {
  int64_t shape[DY_MAX_DIMS], n;
  if (t->rank < 0 || t->rank > DY_MAX_DIMS || batch < 1)
    return false;
  for (int i = 0; i < t->rank; i++)
    if ((shape[i] = dim_at(t->shape[i], batch)) < 0)
      return false;
  return dy_ck_numel(shape, t->rank, &n) && dy_ck_bytes(n, dy_dtype_size(t->dtype), out);
}

dy_status dy_type_check(const dy_type *t, const dy_op *op, const char *what,
                        dy_error *err) {
  const char *on = op ? dy_op_name(op->kind) : NULL;
  if ((unsigned)t->dtype >= DY_DTYPE_COUNT)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s%s%s has dtype %d",
                       on ? on : "", on ? ": " : "", what, (int)t->dtype);
  if (t->rank < 0 || t->rank > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s%s%s has rank %d (at most %d)", on ? on : "", on ? ": " : "",
                       what, t->rank, DY_MAX_DIMS);
  char ts[160];
  dy_dim_expr e;
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] < -1 && !dy_dim_expr_of(t->shape[i], &e))
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s%s%s %s has a negative dim", on ? on : "", on ? ": " : "",
                         what, dy_type_str(t, ts, sizeof ts));
  int64_t bytes;
  if (!dy_type_bytes_at(t, 1, &bytes))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s%s%s %s is larger than the maximum tensor size (%lld bytes)",
                       on ? on : "", on ? ": " : "", what, dy_type_str(t, ts, sizeof ts),
                       (long long)DY_MAX_TENSOR_BYTES);
  return DY_OK;
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
