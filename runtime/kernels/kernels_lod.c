/* kernels_lod.c - the kernels of the LoD sequence ops (ir/ops_lod.def):
 *
 *   sequence_pool   each sequence's rows pooled into one row
 *
 * Every kernel first checks its offsets against the values' rows
 * (dy_lod_bad_offset) and fails naming the entry. The generated kernels
 * (codegen/ops/emit_lod.c) compute the same sums in the same order; change
 * one, change the other.
 */
#include <math.h>
#include <string.h>

#include "dy_lod.h"
#include "kernels_internal.h"

#define op_name(op) dy_op_name((op)->kind)

static dy_status kcheck(const dy_op *op, dy_tensor *const *in, int n_in, int want_in,
                        dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, want_in, out, err);
  if (s != DY_OK)
    return s;
  return dy_kcheck_inferred(op, in, n_in, out, false, err);
}

/* The offsets in[k] against t rows: off[0] = 0, non-decreasing, last = t. */
static dy_status check_offsets(const dy_op *op, const dy_tensor *o, int64_t t, dy_error *err) {
  const int64_t *off = o->data;
  int64_t n = o->type.shape[0], bad = dy_lod_bad_offset(off, n, t);
  if (bad < 0)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                     "%s: LoD offset %lld is %lld: the offsets must start at 0, never "
                     "decrease and end at the values' %lld rows", op_name(op),
                     (long long)bad, (long long)off[bad], (long long)t);
}

dy_status dy_kernel_sequence_pool(const dy_op *op, dy_tensor *const *in, int n_in,
                                  dy_tensor *const *out, dy_error *err) {
  dy_status s = kcheck(op, in, n_in, 2, out, err);
  if (s || (s = check_offsets(op, in[1], in[0]->type.shape[0], err)))
    return s;
  dy_sequence_pool_attrs a = dy_sequence_pool_attrs_get(op);
  dy_seq_pool_kind k = dy_seq_pool_kind_of(a.pooltype);
  const float *x = in[0]->data;
  const int64_t *off = in[1]->data;
  float *y = out[0]->data;
  int64_t ns = out[0]->type.shape[0], d = 1; /* d: the elements of a row */
  for (int i = 1; i < out[0]->type.rank; i++)
    d *= out[0]->type.shape[i];
  for (int64_t q = 0; q < ns; q++) {
    int64_t b = off[q], e = off[q + 1], len = e - b;
    float *yr = y + q * d;
    for (int64_t j = 0; j < d; j++) {
      if (len == 0) {
        yr[j] = (float)a.pad_value;
        continue;
      }
      if (k == DY_POOL_LAST || k == DY_POOL_FIRST) {
        yr[j] = x[(k == DY_POOL_LAST ? e - 1 : b) * d + j];
        continue;
      }
      float acc = x[b * d + j];
      for (int64_t r = b + 1; r < e; r++) {
        float v = x[r * d + j];
        acc = k == DY_POOL_MAX ? (v > acc ? v : acc) : acc + v;
      }
      if (k == DY_POOL_AVERAGE)
        acc = acc / (float)len;
      else if (k == DY_POOL_SQRT)
        acc = acc / sqrtf((float)len);
      yr[j] = acc;
    }
  }
  return DY_OK;
}
