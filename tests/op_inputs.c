/* op_inputs.c - a case's inputs, shared by the suites that run the op
 * table's cases (test_ops, test_grad). Each suite keeps its own generator
 * state, so each draws its own stream, as before this was shared. */
#include <string.h>

#include "op_table.h"

uint64_t dy_case_u64(uint64_t *rng) {
  *rng ^= *rng << 13;
  *rng ^= *rng >> 7;
  *rng ^= *rng << 17;
  return *rng;
}

double dy_case_uniform(uint64_t *rng) {
  return (double)(dy_case_u64(rng) >> 11) / 9007199254740992.0;
}

dy_tensor *dy_case_input(const dy_op_case *c, int i, int64_t batch, uint64_t *rng) {
  dy_type t = c->in[i];
  for (int d = 0; d < t.rank; d++)
    if (t.shape[d] < 0)
      t.shape[d] = batch;
  dy_tensor *x = dy_tensor_new(t.dtype, t.rank, t.shape);
  if (!x)
    return NULL;
  int64_t n = dy_tensor_numel(x);
  if (c->data[i]) {
    memcpy(x->data, c->data[i], x->nbytes);
    return x;
  }
  double lo = c->lo, hi = c->hi;
  for (int64_t k = 0; k < n; k++) {
    switch (t.dtype) {
    case DY_F32:
      ((float *)x->data)[k] = lo == hi ? (float)(2 * dy_case_uniform(rng) - 1)
                                       : (float)(lo + (hi - lo) * dy_case_uniform(rng));
      break;
    case DY_I64: {
      double l = lo == hi ? 0 : lo, h = lo == hi ? 4 : hi;
      ((int64_t *)x->data)[k] =
          (int64_t)(l + (double)(dy_case_u64(rng) % (uint64_t)(h - l)));
      break;
    }
    case DY_I8:
    case DY_U8: ((uint8_t *)x->data)[k] = (uint8_t)(dy_case_u64(rng) >> 24); break;
    case DY_I32: ((int32_t *)x->data)[k] = (int32_t)(dy_case_u64(rng) % 4000) - 2000; break;
    default: ((uint8_t *)x->data)[k] = dy_case_u64(rng) & 1; break;
    }
  }
  return x;
}
