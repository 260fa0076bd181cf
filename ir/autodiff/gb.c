/* gb.c - the helpers gradient rules (and losses, optimizers) are written
 * with: dy_gb_op and its shorthands (add, mul, scale, cast, ...) and the
 * shape helpers (sum_to undoes a broadcast, reshape_as, expand_as). Each
 * emits through the builder's own emit (dy_grad.h): the Program builder
 * (grad.c) or the eager one (runtime/gb_eager.c). The bottom of the
 * autodiff files: it calls nothing but the builder and the core of the IR.
 */
#include <stdarg.h>
#include <string.h>

#include "dy_ir.h"

int dy_gb_fail(dy_gb *b, dy_status s, const char *fmt, ...) {
  if (b->err->status)
    return -1;
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (b->fwd)
    dy_error_at(b->err, b->fwd, s, "gradient of %s: %s", dy_op_name(b->fwd->kind), msg);
  else /* ops emitted for no forward op: an optimizer's update, a loss */
    dy_error_set(b->err, s, "%s", msg);
  return -1;
}

int dy_gb_op(dy_gb *b, dy_op_kind kind, const int *in, int n_in,
             const dy_attr *attrs, int n_attrs) {
  if (b->err->status)
    return -1;
  for (int i = 0; i < n_in; i++)
    if (in[i] < 0)
      return dy_gb_fail(b, DY_STATUS_INTERNAL, "%s: operand %d has no value",
                        dy_op_name(kind), i);
  return b->emit(b, kind, in, n_in, attrs, n_attrs);
}

int dy_gb_op1(dy_gb *b, dy_op_kind kind, int x, const dy_attr *attrs,
              int n_attrs) {
  return dy_gb_op(b, kind, &x, 1, attrs, n_attrs);
}

static int op2(dy_gb *b, dy_op_kind k, int x, int y) {
  return dy_gb_op(b, k, (const int[]){x, y}, 2, NULL, 0);
}

int dy_gb_add(dy_gb *b, int x, int y) { return op2(b, DY_OP_ADD, x, y); }
int dy_gb_sub(dy_gb *b, int x, int y) { return op2(b, DY_OP_SUB, x, y); }
int dy_gb_mul(dy_gb *b, int x, int y) { return op2(b, DY_OP_MUL, x, y); }
int dy_gb_div(dy_gb *b, int x, int y) { return op2(b, DY_OP_DIV, x, y); }
int dy_gb_neg(dy_gb *b, int x) { return dy_gb_op1(b, DY_OP_NEG, x, NULL, 0); }

int dy_gb_scale(dy_gb *b, int x, double s, double t) {
  dy_attr a[DY_SCALE_NATTRS];
  int n_a = dy_scale_attrs_put(&(dy_scale_attrs){
      .given = DY_GIVEN_ALL, .scale = s, .bias = t, .bias_after_scale = 1}, a);
  return dy_gb_op1(b, DY_OP_SCALE, x, a, n_a);
}

int dy_gb_const(dy_gb *b, double v) {
  if (b->err->status)
    return -1;
  return b->constant(b, DY_F32, v);
}

int dy_gb_cast(dy_gb *b, int x, dy_dtype to) {
  dy_attr a[DY_CAST_NATTRS];
  int n_a = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = to}, a);
  return dy_gb_op1(b, DY_OP_CAST, x, a, n_a);
}

int dy_gb_mask(dy_gb *b, int dy, int mask) {
  return dy_gb_mul(b, dy, dy_gb_cast(b, mask, DY_F32));
}

int dy_gb_sum_to(dy_gb *b, int g, int like) {
  if (g < 0 || like < 0 || b->err->status)
    return -1;
  dy_type tg = b->type(b, g), tl = b->type(b, like);
  if (tg.rank < tl.rank)
    return dy_gb_fail(b, DY_STATUS_INTERNAL, "sum_to: rank %d below %d",
                      tg.rank, tl.rank);
  int64_t axes[DY_MAX_DIMS];
  int na = 0, lead = tg.rank - tl.rank;
  bool keep_all = true;  /* every summed dim is kept as a 1 of like */
  for (int d = 0; d < tg.rank; d++) {
    if (d < lead) {
      axes[na++] = d;
      keep_all = false;
    } else if (tl.shape[d - lead] == 1 && tg.shape[d] != 1) {
      axes[na++] = d;
    } else if (tl.shape[d - lead] != tg.shape[d]) {
      char a[128], c[128];
      return dy_gb_fail(b, DY_STATUS_SHAPE_MISMATCH,
                        "sum_to: %s does not broadcast to %s",
                        dy_type_str(&tl, a, sizeof a), dy_type_str(&tg, c, sizeof c));
    }
  }
  if (na == 0)
    return g;
  if (keep_all)
    return dy_gb_reduce_sum(b, g, axes, na, true);
  /* the broadcast dims stay as like's 1s, the leading ones go: the result
   * has like's type without a reshape (which could not place several
   * batch dims that move) */
  int lead_n = 0;
  while (lead_n < na && axes[lead_n] < lead)
    lead_n++;
  if (na > lead_n)
    g = dy_gb_reduce_sum(b, g, axes + lead_n, na - lead_n, true);
  return dy_gb_reduce_sum(b, g, axes, lead_n, false);
}

int dy_gb_expand_as(dy_gb *b, int x, int like) {
  if (x < 0 || like < 0 || b->err->status)
    return -1;
  dy_type tx = b->type(b, x), tl = b->type(b, like);
  if (dy_type_equal(&tx, &tl))
    return x;
  return op2(b, DY_OP_EXPAND_AS, x, like);
}

int dy_gb_reshape_as(dy_gb *b, int g, int like) {
  if (g < 0 || like < 0 || b->err->status)
    return -1;
  dy_type tl = b->type(b, like);
  return dy_gb_reshape(b, g, tl.shape, tl.rank);
}

int dy_gb_reshape(dy_gb *b, int g, const int64_t *dims, int rank) {
  if (g < 0 || b->err->status)
    return -1;
  dy_type tg = b->type(b, g);
  if (tg.rank == rank && memcmp(tg.shape, dims, sizeof(int64_t) * (size_t)rank) == 0)
    return g;
  int64_t shape[DY_MAX_DIMS];
  int dyn = 0;
  for (int d = 0; d < rank; d++) {
    shape[d] = dims[d];
    dyn += shape[d] < 0;
  }
  if (dyn > 1) {
    /* several batch dims: copy those g has at the same place (reshape's 0) */
    for (int d = 0; d < rank; d++)
      if (shape[d] < 0 && d < tg.rank && tg.shape[d] < 0) {
        shape[d] = 0;
        dyn--;
      }
    if (dyn > 1) {
      dy_type tl = {.dtype = tg.dtype, .rank = rank};
      memcpy(tl.shape, dims, sizeof(int64_t) * (size_t)rank);
      char a[128];
      return dy_gb_fail(b, DY_STATUS_UNSUPPORTED,
                        "cannot reshape a gradient to %s (more than one "
                        "dynamic dim moves)", dy_type_str(&tl, a, sizeof a));
    }
  }
  dy_attr a[DY_RESHAPE_NATTRS];
  int n_a = dy_reshape_attrs_put(&(dy_reshape_attrs){
      .given = DY_GIVEN_ALL, .shape = shape, .n_shape = rank}, a);
  return dy_gb_op1(b, DY_OP_RESHAPE, g, a, n_a);
}

int dy_gb_reduce_sum(dy_gb *b, int x, const int64_t *axes, int n_axes,
                     bool keepdim) {
  dy_attr a[DY_REDUCE_SUM_NATTRS];
  int n_a = dy_reduce_sum_attrs_put(&(dy_reduce_sum_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n_axes, .keepdim = keepdim}, a);
  return dy_gb_op1(b, DY_OP_REDUCE_SUM, x, a, n_a);
}

int dy_gb_transpose(dy_gb *b, int x, const int64_t *perm, int rank) {
  dy_attr a[DY_TRANSPOSE_NATTRS];
  int n_a = dy_transpose_attrs_put(&(dy_transpose_attrs){
      .given = DY_GIVEN_ALL, .perm = perm, .n_perm = rank}, a);
  return dy_gb_op1(b, DY_OP_TRANSPOSE, x, a, n_a);
}

int dy_gb_matmul(dy_gb *b, int x, int y, bool tx, bool ty) {
  dy_attr a[DY_MATMUL_NATTRS];
  int n_a = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN_ALL, .transpose_x = tx, .transpose_y = ty}, a);
  return dy_gb_op(b, DY_OP_MATMUL, (const int[]){x, y}, 2, a, n_a);
}
