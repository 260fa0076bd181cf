/* infer_core.c - inference of the core ops of ops.def (matmul, softmax,
 * reshape, flatten, transpose, full) and of every plain elementwise op of
 * the table (its DY_UNARY / DY_BINARY lines, in any family: one dtype
 * rule each, F32, NUM or CMP). Reshape and flatten compute with symbolic
 * dims exactly (dims.c); see infer.c for the conventions.
 */
#include <string.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

/* ---- the plain elementwise ops: DY_UNARY / DY_BINARY lines of the table ---- */

#define EW_F32 (1u << DY_F32)
#define EW_NUM (1u << DY_F32 | 1u << DY_I64)
/* binary NUM ops (add, sub, mul, div, minimum, maximum) also take the
 * narrow integers, wrapping */
#define EW_NUM2 (EW_NUM | 1u << DY_I32 | 1u << DY_I8 | 1u << DY_U8)
#define EW_CMP (1u << DY_F32 | 1u << DY_I64 | 1u << DY_BOOL | 1u << DY_I8 | 1u << DY_U8 | 1u << DY_I32)

static const char *ew_mask_str(unsigned mask) {
  return mask == EW_F32   ? "f32"
         : mask == EW_NUM  ? "f32 or i64"
         : mask == EW_NUM2 ? "f32, i64, i32, i8 or u8"
                           : "f32, i64, i32, i8, u8 or bool";
}

/* Input i's dtype must be in mask. */
static dy_status ew_need(const dy_op *op, const dy_type *in, int i, unsigned mask,
                         dy_error *err) {
  if ((mask >> in[i].dtype) & 1u)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: input %d is %s, needs %s",
                     OPNAME(op), i, dy_dtype_name(in[i].dtype), ew_mask_str(mask));
}

/* rule F32 or NUM: the input's type, its dtype in mask. */
static dy_status ew_unary(const dy_op *op, const dy_type *in, unsigned mask, dy_type *out,
                          dy_error *err) {
  dy_status s = ew_need(op, in, 0, mask, err);
  if (s != DY_OK)
    return s;
  *out = in[0];
  return DY_OK;
}

/* rule F32, NUM or CMP: both inputs of one dtype in mask, shapes broadcast;
 * CMP gives bool. */
static dy_status ew_binary(const dy_op *op, const dy_type *in, unsigned mask, dy_type *out,
                           dy_error *err) {
  dy_status s;
  if (mask == EW_NUM)
    mask = EW_NUM2;
  if (in[0].dtype != in[1].dtype)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: dtypes %s and %s differ",
                       OPNAME(op), dy_dtype_name(in[0].dtype), dy_dtype_name(in[1].dtype));
  if ((s = ew_need(op, in, 0, mask, err)) ||
      (s = dy_broadcast_shapes(op, &in[0], &in[1], out, err)))
    return s;
  if (mask == EW_CMP)
    out->dtype = DY_BOOL;
  return DY_OK;
}

#define DY_OP(NAME, name, n_in, n_out, flags, attrs)
#define DY_UNARY(NAME, name, rule, doc)                                          \
  dy_status dy_infer_##name(const dy_op *op, const dy_type *in, int n_in_,      \
                            dy_type *out, dy_error *err) {                      \
    return ew_unary(op, in, EW_##rule, out, err);                               \
  }
#define DY_BINARY(NAME, name, rule, flags, doc)                                  \
  dy_status dy_infer_##name(const dy_op *op, const dy_type *in, int n_in_,      \
                            dy_type *out, dy_error *err) {                      \
    return ew_binary(op, in, EW_##rule, out, err);                              \
  }
#include "ops.def"
#undef DY_OP

static dy_status unary_float(const dy_op *op, const dy_type *in, dy_type *out,
                             dy_error *err) {
  if (in[0].dtype != DY_F32)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "%s: needs f32, got %s", OPNAME(op),
                       dy_dtype_name(in[0].dtype));
  *out = in[0];
  return DY_OK;
}

/* matmul: numpy semantics. 1-D x is [1,K] (the 1 dropped from the result),
 * 1-D y is [K,1] (likewise); leading dims broadcast. transpose_x/_y swap the
 * last two dims of a 2-D-or-more operand first. */
dy_status dy_infer_matmul(const dy_op *op, const dy_type *in, int n,
                          dy_type *out, dy_error *err) {
  dy_matmul_attrs a;
  dy_status s = dy_matmul_attrs_of(op, &a, err);
  if (s)
    return s;
  int64_t tx = a.transpose_x, ty = a.transpose_y;
  const dy_type *x = &in[0], *y = &in[1];
  if (x->dtype != DY_F32 || y->dtype != DY_F32)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "matmul: needs f32 inputs");
  if (x->rank < 1 || y->rank < 1)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "matmul: inputs must have rank >= 1");
  int64_t m, kx, ky, nn;
  if (x->rank == 1) {
    m = 1;
    kx = x->shape[0];
  } else {
    m = x->shape[x->rank - (tx ? 1 : 2)];
    kx = x->shape[x->rank - (tx ? 2 : 1)];
  }
  if (y->rank == 1) {
    ky = y->shape[0];
    nn = 1;
  } else {
    ky = y->shape[y->rank - (ty ? 1 : 2)];
    nn = y->shape[y->rank - (ty ? 2 : 1)];
  }
  /* the inner dim may be the batch on both sides: a weight gradient,
   * x^T @ dy, sums over the batch */
  if (kx != ky) {
    char a[128], b[128];
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "matmul: inner dims %lld vs %lld (%s @ %s%s%s)",
                       (long long)kx, (long long)ky, dy_type_str(x, a, sizeof a),
                       dy_type_str(y, b, sizeof b), tx ? ", transpose_x" : "",
                       ty ? ", transpose_y" : "");
  }
  /* broadcast the leading (batch) dims */
  dy_type bx = {.dtype = DY_F32, .rank = x->rank > 2 ? x->rank - 2 : 0};
  dy_type by = {.dtype = DY_F32, .rank = y->rank > 2 ? y->rank - 2 : 0};
  memcpy(bx.shape, x->shape, sizeof(int64_t) * (size_t)bx.rank);
  memcpy(by.shape, y->shape, sizeof(int64_t) * (size_t)by.rank);
  if ((s = dy_broadcast_shapes(op, &bx, &by, out, err)))
    return s;
  if (x->rank > 1)
    out->shape[out->rank++] = m;
  if (y->rank > 1)
    out->shape[out->rank++] = nn;
  out->dtype = DY_F32;
  return DY_OK;
}

dy_status dy_infer_softmax(const dy_op *op, const dy_type *in, int n,
                           dy_type *out, dy_error *err) {
  dy_softmax_attrs a;
  int ax;
  dy_status s;
  if ((s = dy_softmax_attrs_of(op, &a, err)) ||
      (s = dy_normalize_axis(op, a.axis, in[0].rank, &ax, err)) ||
      (s = unary_float(op, in, out, err)))
    return s;
  if (in[0].rank == 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "softmax: needs rank >= 1");
  return DY_OK;
}

static void shape_str(const int64_t *s, int n, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)s[i]);
  if (k < cap)
    snprintf(buf + k, cap - k, "]");
}

/* reshape: Paddle semantics. 0 copies the input's dim at that position, -1
 * (at most one) is inferred from the element count: with symbolic dims the
 * exact quotient of the input's size expression by the other dims' (dims.c;
 * 2*batch or batch*seq are fine, an inexact one is an error). With a
 * dynamic input, a literal where the input's count needs a symbol would
 * bake the traced size into the Program, which the tracer reports. */
dy_status dy_infer_reshape(const dy_op *op, const dy_type *in, int n,
                           dy_type *out, dy_error *err) {
  dy_reshape_attrs a;
  dy_status s = dy_reshape_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *shape = a.shape;
  int rank = a.n_shape;
  char ss[256], ts[256];
  shape_str(shape, rank, ss, sizeof ss);
  dy_type_str(&in[0], ts, sizeof ts);
  if (rank > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "reshape: target rank %d exceeds %d", rank, DY_MAX_DIMS);
  out->dtype = in[0].dtype;
  out->rank = rank;
  int infer_at = -1;
  int64_t known = 1, total;
  bool ok = dy_type_numel_dim(&in[0], &total);
  for (int i = 0; i < rank; i++) {
    int64_t d = shape[i];
    if (d == 0) {
      if (i >= in[0].rank)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "reshape: 0 at position %d of %s but input %s has rank %d",
                           i, ss, ts, in[0].rank);
      d = in[0].shape[i];
    } else if (d == -1) {
      if (infer_at >= 0)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "reshape: more than one -1 in %s", ss);
      infer_at = i;
    } else if (d < -1) {
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "reshape: negative size %lld in %s", (long long)d, ss);
    }
    out->shape[i] = d;
    if (i != infer_at) {
      ok = ok && dy_dim_mul(known, d, &known);
      if (ok && known > DY_MAX_NUMEL)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "reshape: target %s is larger than the maximum tensor size "
                           "(%lld elements)", ss, (long long)DY_MAX_NUMEL);
    }
  }
  if (!ok)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "reshape: the sizes of %s to %s are not expressible as size "
                       "expressions", ts, ss);
  if (infer_at < 0) {
    if (total < 0 && known >= 0)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "reshape: target %s fixes %s of input %s "
                         "to the traced size; use 0 (copy) or -1 (infer) for it",
                         ss, dy_type_sym_mask(&in[0]) == 1 ? "the dynamic batch dim"
                                                           : "a dynamic dim", ts);
    if (total != known)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "reshape: cannot reshape %s to %s", ts, ss);
    return DY_OK;
  }
  int64_t q;
  if (known == 0 || !dy_dim_div(total, known, &q))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "reshape: cannot reshape %s to %s%s", ts, ss,
                       total < 0 ? " (the -1 would not be an exact size expression)" : "");
  out->shape[infer_at] = q;
  return DY_OK;
}

/* flatten: Paddle's flatten(start_axis, stop_axis) merges dims
 * [start, stop] into one. */
dy_status dy_infer_flatten(const dy_op *op, const dy_type *in, int n,
                           dy_type *out, dy_error *err) {
  dy_flatten_attrs fa;
  int start, stop;
  int r = in[0].rank;
  dy_status s = dy_flatten_attrs_of(op, &fa, err);
  if (s)
    return s;
  int64_t a = fa.start_axis, b = fa.stop_axis;
  if (r == 0) {
    *out = in[0];
    out->rank = 1;
    out->shape[0] = 1;
    return DY_OK;
  }
  if ((s = dy_normalize_axis(op, a, r, &start, err)) ||
      (s = dy_normalize_axis(op, b, r, &stop, err)))
    return s;
  if (start > stop)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "flatten: start_axis %d after stop_axis %d", start, stop);
  out->dtype = in[0].dtype;
  out->rank = 0;
  for (int i = 0; i < start; i++)
    out->shape[out->rank++] = in[0].shape[i];
  int64_t prod = 1;
  for (int i = start; i <= stop; i++)
    if (!dy_dim_mul(prod, in[0].shape[i], &prod))
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "flatten: the product of axes %d..%d is not expressible as a "
                         "size expression", start, stop);
  out->shape[out->rank++] = prod;
  for (int i = stop + 1; i < r; i++)
    out->shape[out->rank++] = in[0].shape[i];
  return DY_OK;
}

dy_status dy_infer_transpose(const dy_op *op, const dy_type *in, int n,
                             dy_type *out, dy_error *err) {
  dy_transpose_attrs a;
  dy_status s = dy_transpose_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *perm = a.perm;
  int np = a.n_perm;
  if (np != in[0].rank)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "transpose: perm has %d entries for rank %d", np, in[0].rank);
  bool seen[DY_MAX_DIMS] = {0};
  *out = in[0];
  for (int i = 0; i < np; i++) {
    int ax = 0;
    if ((s = dy_normalize_axis(op, perm[i], np, &ax, err)))
      return s;
    if (seen[ax])
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "transpose: perm repeats axis %d", ax);
    seen[ax] = true;
    out->shape[i] = in[0].shape[ax];
  }
  return DY_OK;
}

dy_status dy_infer_full(const dy_op *op, const dy_type *in, int n,
                        dy_type *out, dy_error *err) {
  dy_full_attrs a;
  dy_status s = dy_full_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *shape = a.shape;
  int rank = a.n_shape;
  int64_t dtype = a.dtype;
  if (rank > DY_MAX_DIMS || dtype < 0 || dtype >= DY_DTYPE_COUNT)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "full: bad rank %d or dtype %lld", rank, (long long)dtype);
  out->dtype = (dy_dtype)dtype;
  out->rank = rank;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "full: negative dim %lld", (long long)shape[i]);
    out->shape[i] = shape[i];
  }
  return DY_OK;
}
