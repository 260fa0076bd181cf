/* kernels_util.c - the helpers every kernel family calls: the floor of
 * runtime/kernels/, below the family files (kernels_<family>.c) and the
 * table on top of them (kernels.c); it calls nothing of theirs.
 *
 *   checks          dy_kcheck_tensor, dy_kcheck_io, dy_kcheck_inferred
 *                   (a kernel never trusts its caller: arity, every
 *                   tensor's type and buffer, the output's type against
 *                   inference) and the two errors they share
 *   strides         dy_contiguous_strides, dy_odometer_next (a C-order walk
 *                   keeping a strided offset in step), dy_reduce_strides
 *   broadcasting    dy_bcast_plan_make / dy_bcast_run, the strided iterator
 *                   of every binary elementwise op: shapes aligned on the
 *                   right, a broadcast dim given stride 0, size-1 dims
 *                   dropped and runs of dims contiguous in every operand
 *                   merged, so [64,256] + [256] runs as 64 calls of a
 *                   256-long inner loop; dy_kbinary, a whole binary op over
 *                   it, with the narrow integer loops (i32, i8, u8) of add,
 *                   sub, mul, div, minimum and maximum
 *   unary           dy_kunary_check and dy_kmap_f32 (y[i] = f(x[i]))
 */
#include <string.h>

#include "kernels_internal.h"

/* ------------------------------------------------------------------ */
/* Checks shared by every kernel                                       */
/* ------------------------------------------------------------------ */

#define op_name(op) dy_op_name((op)->kind)

/* t must be a concrete tensor whose buffer holds its type's bytes. */
dy_status dy_kcheck_tensor(const dy_op *op, const dy_tensor *t,
                              const char *what, int i, dy_error *err) {
  if (!t)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: %s %d is NULL", op_name(op), what, i);
  if ((unsigned)t->type.dtype >= DY_DTYPE_COUNT || t->type.rank < 0 ||
      t->type.rank > DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INTERNAL,
                       "%s: %s %d has a corrupt type", op_name(op), what, i);
  int64_t n = dy_type_numel(&t->type);
  if (n < 0)
    return dy_error_at(err, op, DY_STATUS_SYMBOLIC,
                       "%s: %s %d has a dynamic dim at run time", op_name(op),
                       what, i);
  size_t need = (size_t)n * dy_dtype_size(t->type.dtype);
  if (need > 0 && !t->data)
    return dy_error_at(err, op, DY_STATUS_SYMBOLIC,
                       "%s: %s %d is symbolic (has no data)", op_name(op),
                       what, i);
  if (t->nbytes < need)
    return dy_error_at(err, op, DY_STATUS_INTERNAL,
                       "%s: %s %d holds %zu bytes, its type needs %zu",
                       op_name(op), what, i, t->nbytes, need);
  return DY_OK;
}

/* Arity and the basic health of every input and the single output. */
dy_status dy_kcheck_io(const dy_op *op, dy_tensor *const *in, int n_in,
                          int want_in, dy_tensor *const *out, dy_error *err) {
  if (n_in != want_in || (want_in > 0 && !in) || !out)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: expects %d input(s) and an output, got %d input(s)",
                       op_name(op), want_in, n_in);
  for (int i = 0; i < n_in; i++) {
    dy_status s = dy_kcheck_tensor(op, in[i], "input", i, err);
    if (s != DY_OK)
      return s;
  }
  return dy_kcheck_tensor(op, out[0], "output", 0, err);
}

/* Checks out[0] against inference on the inputs' types; unless alias_ok,
 * also that out[0] shares no memory with a (non-empty) input. The caller
 * has run dy_kcheck_io. */
dy_status dy_kcheck_inferred(const dy_op *op, dy_tensor *const *in, int n_in,
                             dy_tensor *const *out, bool alias_ok,
                             dy_error *err) {
  enum { MAX_IN = DY_MAX_OP_INPUTS };
  if (n_in > MAX_IN)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: takes at most %d inputs, got %d", op_name(op),
                       MAX_IN, n_in);
  dy_type t[MAX_IN], want;
  for (int i = 0; i < n_in; i++)
    t[i] = in[i]->type;
  dy_status s = dy_infer(op, t, n_in, &want, err);
  if (s != DY_OK)
    return s;
  if (!dy_type_equal(&want, &out[0]->type))
    return dy_kshape_error(op, "output", &out[0]->type, &want, err);
  if (!alias_ok && dy_type_numel(&want) > 0)
    for (int i = 0; i < n_in; i++)
      if (in[i]->data == out[0]->data)
        return dy_error_at(err, op, DY_STATUS_INTERNAL,
                           "%s: output aliases input %d", op_name(op), i);
  return DY_OK;
}

dy_status dy_kunsupported_dtype(const dy_op *op, dy_dtype t,
                                   dy_error *err) {
  return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                     "%s: dtype %s is not supported", op_name(op),
                     dy_dtype_name(t));
}

dy_status dy_kshape_error(const dy_op *op, const char *what,
                             const dy_type *got, const dy_type *want,
                             dy_error *err) {
  char g[128], w[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                     "%s: %s is %s, expected %s", op_name(op), what,
                     dy_type_str(got, g, sizeof g),
                     dy_type_str(want, w, sizeof w));
}

/* Contiguous (C order) element strides of a shape. */
void dy_contiguous_strides(int rank, const int64_t *shape,
                               int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
}

/* Steps the C-order index idx[0..rank) over shape by one, keeping *off
 * (the sum of idx[d] * stride[d]) in step. */
void dy_odometer_next(int rank, const int64_t *shape, const int64_t *stride,
                      int64_t *idx, int64_t *off) {
  for (int d = rank - 1; d >= 0; d--) {
    *off += stride[d];
    if (++idx[d] < shape[d])
      return;
    *off -= stride[d] * shape[d];
    idx[d] = 0;
  }
}

/* ------------------------------------------------------------------ */
/* Binary elementwise ops: the broadcast iterator                      */
/* ------------------------------------------------------------------ */

/* Build the plan for a op b -> out, checking out has the broadcast type. */
dy_status dy_bcast_plan_make(const dy_op *op, const dy_type *a,
                                 const dy_type *b, const dy_type *out,
                                 dy_bcast_plan *pl, dy_error *err) {
  dy_type want = {.dtype = out->dtype};
  want.rank = a->rank > b->rank ? a->rank : b->rank;
  int64_t stra[DY_MAX_DIMS], strb[DY_MAX_DIMS];
  dy_contiguous_strides(a->rank, a->shape, stra);
  dy_contiguous_strides(b->rank, b->shape, strb);

  /* Align on the right; a missing or size-1 dim broadcasts (stride 0). */
  int64_t sa[DY_MAX_DIMS], sb[DY_MAX_DIMS];
  for (int i = 0; i < want.rank; i++) {
    int ia = i - (want.rank - a->rank), ib = i - (want.rank - b->rank);
    int64_t da = ia >= 0 ? a->shape[ia] : 1;
    int64_t db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char ta[128], tb[128];
      return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                         "%s: cannot broadcast %s with %s (dim %d: %lld vs %lld)",
                         op_name(op), dy_type_str(a, ta, sizeof ta),
                         dy_type_str(b, tb, sizeof tb), i, (long long)da,
                         (long long)db);
    }
    want.shape[i] = da == 1 ? db : da;
    sa[i] = da == 1 ? 0 : stra[ia];
    sb[i] = db == 1 ? 0 : strb[ib];
  }
  if (!dy_type_equal(&want, out))
    return dy_kshape_error(op, "output", out, &want, err);

  /* Drop size-1 dims, then merge a dim into the previous one when the pair
   * is contiguous in both inputs (the output is always contiguous). */
  int r = 0;
  for (int i = 0; i < want.rank; i++) {
    int64_t n = want.shape[i];
    if (n == 1)
      continue;
    if (r > 0 && pl->sa[r - 1] == sa[i] * n && pl->sb[r - 1] == sb[i] * n) {
      pl->shape[r - 1] *= n;
      pl->sa[r - 1] = sa[i];
      pl->sb[r - 1] = sb[i];
      continue;
    }
    pl->shape[r] = n;
    pl->sa[r] = sa[i];
    pl->sb[r] = sb[i];
    r++;
  }
  if (r == 0) { /* every dim is 1: a single element */
    pl->shape[0] = 1;
    pl->sa[0] = pl->sb[0] = 0;
    r = 1;
  }
  pl->rank = r;
  return DY_OK;
}

/* Walk the plan, calling loop once per innermost row. es is the element
 * size in bytes. Returns the first nonzero result of loop. */
int dy_bcast_run(const dy_bcast_plan *pl, dy_binary_loop loop, size_t es,
                     const char *a, const char *b, char *o) {
  int inner = pl->rank - 1;
  int64_t n = pl->shape[inner];
  int64_t outer = 1;
  for (int d = 0; d < inner; d++)
    outer *= pl->shape[d];
  int64_t idx[DY_MAX_DIMS] = {0};
  int64_t oa = 0, ob = 0, oo = 0;
  for (int64_t k = 0; k < outer; k++) {
    int bad = loop(a + (size_t)oa * es, pl->sa[inner], b + (size_t)ob * es,
                   pl->sb[inner], o + (size_t)oo * es, n);
    if (bad)
      return bad;
    oo += n;
    /* advance the odometer over the outer dims */
    for (int d = inner - 1; d >= 0; d--) {
      oa += pl->sa[d];
      ob += pl->sb[d];
      if (++idx[d] < pl->shape[d])
        break;
      oa -= pl->sa[d] * pl->shape[d];
      ob -= pl->sb[d] * pl->shape[d];
      idx[d] = 0;
    }
  }
  return 0;
}

/* The narrow integer dtypes (i32, i8, u8) of add, sub, mul, div, minimum
 * and maximum: arithmetic wraps as i64's does; division truncates, a zero
 * divisor fails the op, the minimum divided by -1 wraps. */
#define DEFINE_NARROW(T, U, sfx)                                                   \
  DEFINE_BINARY_LOOP(add_##sfx, T, (T)(U)((U)x + (U)y))                            \
  DEFINE_BINARY_LOOP(sub_##sfx, T, (T)(U)((U)x - (U)y))                            \
  DEFINE_BINARY_LOOP(mul_##sfx, T, (T)(U)((U)x * (U)y))                            \
  DEFINE_BINARY_LOOP(min_##sfx, T, x < y ? x : y)                                  \
  DEFINE_BINARY_LOOP(max_##sfx, T, x > y ? x : y)                                  \
  static int div_##sfx(const void *pa, int64_t sa, const void *pb, int64_t sb,    \
                       void *po, int64_t n) {                                     \
    const T *a = pa, *b = pb;                                                     \
    T *o = po;                                                                    \
    for (int64_t i = 0; i < n; i++) {                                             \
      int64_t x = a[i * sa], y = b[i * sb];                                       \
      if (y == 0)                                                                 \
        return 1;                                                                 \
      o[i] = (T)(U)(uint64_t)(x / y);                                             \
    }                                                                             \
    return 0;                                                                     \
  }
DEFINE_NARROW(int32_t, uint32_t, i32)
DEFINE_NARROW(int8_t, uint8_t, i8)
DEFINE_NARROW(uint8_t, uint8_t, u8)

static dy_binary_loop narrow_loop(dy_op_kind k, dy_dtype t) {
  static const dy_binary_loop loops[6][3] = {
      {add_i32, add_i8, add_u8}, {sub_i32, sub_i8, sub_u8}, {mul_i32, mul_i8, mul_u8},
      {div_i32, div_i8, div_u8}, {min_i32, min_i8, min_u8}, {max_i32, max_i8, max_u8}};
  int r = k == DY_OP_ADD ? 0 : k == DY_OP_SUB ? 1 : k == DY_OP_MUL ? 2 : k == DY_OP_DIV ? 3
        : k == DY_OP_MINIMUM ? 4 : k == DY_OP_MAXIMUM ? 5 : -1;
  int c = t == DY_I32 ? 0 : t == DY_I8 ? 1 : t == DY_U8 ? 2 : -1;
  return r < 0 || c < 0 ? NULL : loops[r][c];
}

dy_status dy_kbinary(const dy_op *op, dy_tensor *const *in, int n_in,
                        dy_tensor *const *out, dy_binary_loop f32,
                        dy_binary_loop i64, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  const dy_type *ta = &in[0]->type, *tb = &in[1]->type, *to = &out[0]->type;
  if (ta->dtype != tb->dtype || ta->dtype != to->dtype)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                       "%s: dtypes %s and %s -> %s do not agree", op_name(op),
                       dy_dtype_name(ta->dtype), dy_dtype_name(tb->dtype),
                       dy_dtype_name(to->dtype));
  dy_binary_loop loop = ta->dtype == DY_F32   ? f32
                        : ta->dtype == DY_I64 ? i64
                                              : narrow_loop(op->kind, ta->dtype);
  if (!loop)
    return dy_kunsupported_dtype(op, ta->dtype, err);
  dy_bcast_plan pl;
  s = dy_bcast_plan_make(op, ta, tb, to, &pl, err);
  if (s != DY_OK)
    return s;
  if (dy_type_numel(to) == 0)
    return DY_OK;
  /* In place is fine only over an input that is not broadcast. */
  for (int i = 0; i < 2; i++)
    if (in[i]->data == out[0]->data && !dy_type_equal(&in[i]->type, to))
      return dy_error_at(err, op, DY_STATUS_INTERNAL,
                         "%s: output aliases broadcast input %d", op_name(op), i);
  if (dy_bcast_run(&pl, loop, dy_dtype_size(ta->dtype), in[0]->data,
                in[1]->data, out[0]->data))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: integer division by zero", op_name(op));
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* Unary elementwise ops (f32)                                         */
/* ------------------------------------------------------------------ */

/* Checks shared by the unary ops: one f32 input, output of the same type. */
dy_status dy_kunary_check(const dy_op *op, dy_tensor *const *in, int n_in,
                             dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 1, out, err);
  if (s != DY_OK)
    return s;
  if (in[0]->type.dtype != DY_F32)
    return dy_kunsupported_dtype(op, in[0]->type.dtype, err);
  if (!dy_type_equal(&in[0]->type, &out[0]->type))
    return dy_kshape_error(op, "output", &out[0]->type, &in[0]->type, err);
  return DY_OK;
}

/* Checks a unary f32 op and writes y[i] = f(x[i]) for every element. */
dy_status dy_kmap_f32(const dy_op *op, dy_tensor *const *in, int n_in,
                      dy_tensor *const *out, float (*f)(float), dy_error *err) {
  dy_status s = dy_kunary_check(op, in, n_in, out, err);
  if (s != DY_OK)
    return s;
  const float *x = in[0]->data;
  float *y = out[0]->data;
  int64_t n = dy_tensor_numel(in[0]);
  for (int64_t i = 0; i < n; i++)
    y[i] = f(x[i]);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* Reductions                                                          */
/* ------------------------------------------------------------------ */

/* The output offset stride of each dim of t under a reduction over axes
 * (every axis when na is 0): 0 on a reduced dim, else the C-order stride
 * of the output made of the kept dims. */
void dy_reduce_strides(const dy_type *t, const int64_t *axes, int na,
                       int64_t *ostr) {
  unsigned mask = na ? 0 : ~0u;
  for (int i = 0; i < na; i++)
    mask |= 1u << (axes[i] < 0 ? axes[i] + t->rank : axes[i]);
  int64_t acc = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    ostr[d] = mask >> d & 1u ? 0 : acc;
    acc *= mask >> d & 1u ? 1 : t->shape[d];
  }
}

dy_status dy_kcheck(const dy_op *op, dy_tensor *const *in, int n_in, int want_in,
                    dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, want_in, out, err);
  if (s != DY_OK)
    return s;
  return dy_kcheck_inferred(op, in, n_in, out, false, err);
}
