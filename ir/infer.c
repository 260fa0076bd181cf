/* infer.c - shape and dtype inference, one function per op.
 *
 * Each dy_infer_<name> maps input types to output types and checks the
 * op's attributes. The same functions serve the tracer (which types vars
 * with -1 for the dynamic batch), eager calls and the static executor
 * (concrete shapes) and the verifier (which re-infers every op).
 *
 * The dynamic dim. -1 stands for the one run-time batch size B. Inference
 * keeps an output dim symbolic only when it is exactly B; a dim that would
 * be 2*B or B*B is rejected (DY_STATUS_UNSUPPORTED), and so is a static dim
 * that would have to equal B (broadcasting B against 7). Errors name the
 * op and its source line through dy_error_at.
 */
#include <string.h>

#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

const dy_infer_fn dy_infer_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) [DY_OP_##NAME] = dy_infer_##name,
#include "ops.def"
#undef DY_OP
};

dy_status dy_infer(const dy_op *op, const dy_type *in, int n_in, dy_type *out,
                   dy_error *err) {
  const dy_op_info *info = dy_op_info_of(op->kind);
  if ((info->n_in >= 0 && n_in != info->n_in) || (info->n_in < 0 && n_in < 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: takes %d inputs, got %d", info->name, info->n_in, n_in);
  for (int i = 0; i < n_in; i++)
    if (in[i].rank < 0 || in[i].rank > DY_MAX_DIMS)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "%s: input %d has rank %d", info->name, i, in[i].rank);
  dy_status s = dy_infer_table[op->kind](op, in, n_in, out, err);
  /* every output type inference makes is checked once here: no shape rule
   * can hand on a size that wraps or exceeds DY_MAX_TENSOR_BYTES */
  for (int i = 0; s == DY_OK && i < info->n_out; i++)
    s = dy_type_check(&out[i], op, info->n_out > 1 ? "an output" : "the output", err);
  return s;
}

dy_status dy_normalize_axis(const dy_op *op, int64_t axis, int rank, int *out,
                            dy_error *err) {
  *out = 0; /* defined on the error path too */
  if (axis < -rank || axis >= (rank ? rank : 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: axis %lld out of range for rank %d", OPNAME(op),
                       (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return DY_OK;
}

/* Broadcast one pair of dims (numpy rules, -1 = B). */
static dy_status broadcast_dim(const dy_op *op, int64_t a, int64_t b,
                               int64_t *out, dy_error *err) {
  if (a == b)
    *out = a;
  else if (a == 1)
    *out = b;
  else if (b == 1)
    *out = a;
  else if (a < 0 || b < 0)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: cannot broadcast the dynamic batch dim against %lld",
                       OPNAME(op), (long long)(a < 0 ? b : a));
  else
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: cannot broadcast %lld against %lld", OPNAME(op),
                       (long long)a, (long long)b);
  return DY_OK;
}

dy_status dy_broadcast_shapes(const dy_op *op, const dy_type *a,
                              const dy_type *b, dy_type *out, dy_error *err) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  out->rank = r;
  out->dtype = a->dtype;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    dy_status s = broadcast_dim(op, da, db, &out->shape[i], err);
    if (s != DY_OK) {
      char ta[128], tb[128];
      return dy_error_prefix(err, "%s vs %s", dy_type_str(a, ta, sizeof ta),
                             dy_type_str(b, tb, sizeof tb));
    }
  }
  return DY_OK;
}

/* ---- the plain elementwise ops: DY_UNARY / DY_BINARY lines of the table ---- */

#define EW_F32 (1u << DY_F32)
#define EW_NUM (1u << DY_F32 | 1u << DY_I64)
#define EW_CMP (1u << DY_F32 | 1u << DY_I64 | 1u << DY_BOOL)

static const char *ew_mask_str(unsigned mask) {
  return mask == EW_F32 ? "f32" : mask == EW_NUM ? "f32 or i64" : "f32, i64 or bool";
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

/* Split a type's element count into B^p * k. */
static void count_dynamic(const dy_type *t, int *p, int64_t *k) {
  *p = 0;
  *k = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0)
      ++*p;
    else
      *k *= t->shape[i];
  }
}

static void shape_str(const int64_t *s, int n, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)s[i]);
  if (k < cap)
    snprintf(buf + k, cap - k, "]");
}

/* reshape: Paddle semantics. 0 copies the input's dim at that position, -1
 * (at most one) is inferred from the element count. With a dynamic input,
 * the batch must be carried by a 0 or a -1: a literal there would bake the
 * traced batch size into the Program, which the tracer reports. */
dy_status dy_infer_reshape(const dy_op *op, const dy_type *in, int n,
                           dy_type *out, dy_error *err) {
  dy_reshape_attrs a;
  dy_status s = dy_reshape_attrs_of(op, &a, err);
  if (s)
    return s;
  const int64_t *shape = a.shape;
  int rank = a.n_shape;
  char ss[256], ts[128];
  shape_str(shape, rank, ss, sizeof ss);
  dy_type_str(&in[0], ts, sizeof ts);
  if (rank > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "reshape: target rank %d exceeds %d", rank, DY_MAX_DIMS);
  out->dtype = in[0].dtype;
  out->rank = rank;
  int infer_at = -1, q = 0;  /* q: dynamic dims copied by 0 */
  int64_t known = 1;
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
      if (d < 0)
        q++;
      else if (!dy_ck_mul(known, d, &known) || known > DY_MAX_NUMEL)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "reshape: target %s is larger than the maximum tensor size "
                           "(%lld elements)", ss, (long long)DY_MAX_NUMEL);
    }
  }
  int p;
  int64_t k;
  count_dynamic(&in[0], &p, &k);
  if (infer_at < 0) {
    if (p > q)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "reshape: target %s fixes the dynamic batch dim of input %s "
                         "to the traced size; use 0 (copy) or -1 (infer) for it",
                         ss, ts);
    if (p != q || k != known)
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "reshape: cannot reshape %s to %s", ts, ss);
    return DY_OK;
  }
  if (known == 0 || k % known != 0 || p - q < 0 || p - q > 1 ||
      (p - q == 1 && k != known))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "reshape: cannot reshape %s to %s%s", ts, ss,
                       p - q >= 1 ? " (the -1 would not equal the batch)" : "");
  out->shape[infer_at] = p - q == 1 ? -1 : k / known;
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
  int dyn = 0;
  int64_t prod = 1;
  for (int i = start; i <= stop; i++) {
    if (in[0].shape[i] < 0)
      dyn++;
    else
      prod *= in[0].shape[i];
  }
  if (dyn > 1 || (dyn == 1 && prod != 1))
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "flatten: merging the dynamic batch dim with other dims "
                       "(axes %d..%d) is not supported", start, stop);
  out->shape[out->rank++] = dyn ? -1 : prod;
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
