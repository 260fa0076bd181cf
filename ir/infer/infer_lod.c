/* infer_lod.c - inference of the LoD sequence ops (ir/ops_lod.def) and
 * their shared helpers (ir/dy_lod.h).
 *
 *   sequence_pool(x [T, D...] f32, offsets [N+1] i64) -> [N, D...] f32
 *
 * The offsets are a rank-1 i64 tensor of at least one entry; N is its
 * length minus one (batch+1 gives the batch). T is x's dim 0: a static
 * size or a size symbol (the feed's total length, bounded by --max-dim).
 * Whether the offsets fit T is known at run time only: the kernels check.
 */
#include <string.h>

#include "dy_lod.h"

#define OPNAME(op) dy_op_name((op)->kind)

dy_seq_pool_kind dy_seq_pool_kind_of(const char *pooltype) {
  static const char *const names[] = {"SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST"};
  for (int i = 0; pooltype && i < (int)(sizeof names / sizeof *names); i++)
    if (strcmp(pooltype, names[i]) == 0)
      return (dy_seq_pool_kind)i;
  return DY_POOL_BAD;
}

bool dy_dim_sym_plus(int64_t d, int *sym, int64_t *c) {
  dy_dim_expr e;
  if (d >= 0 || !dy_dim_expr_of(d, &e) || e.n_terms != 1 || e.t[0].coef != 1 ||
      e.t[0].n != 1 || e.c < 0)
    return false;
  *sym = e.t[0].sym[0];
  *c = e.c;
  return true;
}

int64_t dy_lod_bad_offset(const int64_t *off, int64_t n, int64_t t) {
  if (n < 1 || off[0] != 0)
    return 0;
  for (int64_t i = 1; i < n; i++)
    if (off[i] < off[i - 1] || off[i] > t)
      return i;
  return off[n - 1] == t ? -1 : n - 1;
}

/* The offsets operand: rank-1 i64; *n the sequence count (its length - 1). */
static dy_status offsets_count(const dy_op *op, const dy_type *off, int64_t *n,
                               dy_error *err) {
  char b[128];
  if (off->dtype != DY_I64 || off->rank != 1)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: the offsets are %s, not i64 "
                       "[N+1]", OPNAME(op), dy_type_str(off, b, sizeof b));
  if (off->shape[0] == 0 || !dy_dim_add_const(off->shape[0], -1, n))
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: the offsets' length %s is not "
                       "N+1 for a sequence count N", OPNAME(op),
                       dy_dim_name(off->shape[0], b, sizeof b));
  return DY_OK;
}

/* The values operand: f32 of rank >= want_rank (>= 1). */
static dy_status values_of(const dy_op *op, const dy_type *x, int want_rank, dy_error *err) {
  char b[128];
  if (x->dtype != DY_F32 || x->rank < want_rank)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: the values are %s, not f32 "
                       "[T, ...] of rank >= %d", OPNAME(op), dy_type_str(x, b, sizeof b),
                       want_rank);
  return DY_OK;
}

dy_status dy_infer_sequence_pool(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                 dy_error *err) {
  (void)n;
  dy_sequence_pool_attrs a;
  int64_t ns;
  dy_status s;
  if ((s = dy_sequence_pool_attrs_of(op, &a, err)) || (s = values_of(op, &in[0], 1, err)) ||
      (s = offsets_count(op, &in[1], &ns, err)))
    return s;
  if (dy_seq_pool_kind_of(a.pooltype) == DY_POOL_BAD)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: pooltype \"%s\" is not SUM, "
                       "AVERAGE, SQRT, MAX, LAST or FIRST", OPNAME(op), a.pooltype);
  *out = in[0];
  out->shape[0] = ns;
  return DY_OK;
}

dy_lod_act dy_lod_act_of(const char *name) {
  static const char *const names[] = {"sigmoid", "tanh", "relu", "identity"};
  for (int i = 0; name && i < (int)(sizeof names / sizeof *names); i++)
    if (strcmp(name, names[i]) == 0)
      return (dy_lod_act)i;
  if (name && strcmp(name, "linear") == 0)
    return DY_LOD_ACT_IDENTITY;
  return DY_LOD_ACT_BAD;
}

static dy_status need_act(const dy_op *op, const char *attr, const char *v, dy_error *err) {
  if (dy_lod_act_of(v) != DY_LOD_ACT_BAD)
    return DY_OK;
  return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: %s \"%s\" is not sigmoid, tanh, "
                     "relu or identity", OPNAME(op), attr, v ? v : "");
}

static dy_status need_shape(const dy_op *op, const char *what, const dy_type *t, int rank,
                            const int64_t *shape, dy_error *err) {
  bool ok = t->dtype == DY_F32 && t->rank == rank;
  for (int i = 0; ok && i < rank; i++)
    ok = t->shape[i] == shape[i];
  if (ok)
    return DY_OK;
  dy_type want = {.dtype = DY_F32, .rank = rank};
  memcpy(want.shape, shape, sizeof(int64_t) * (size_t)rank);
  char a[128], b[128];
  return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: %s is %s, not %s", OPNAME(op), what,
                     dy_type_str(t, a, sizeof a), dy_type_str(&want, b, sizeof b));
}

/* lstm(x [T, 4D], offsets [N+1], weight [D, 4D], bias [1, 4D | 7D]
 * [, h0 [N, D], c0 [N, D]]) -> [T, D]; D static. */
dy_status dy_infer_lstm(const dy_op *op, const dy_type *in, int n, dy_type *out,
                        dy_error *err) {
  dy_lstm_attrs a;
  int64_t ns;
  dy_status s;
  if (n != 4 && n != 6)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: takes x, offsets, weight, "
                       "bias and optionally h0 and c0 (4 or 6 inputs), got %d", OPNAME(op), n);
  if ((s = dy_lstm_attrs_of(op, &a, err)) || (s = values_of(op, &in[0], 2, err)) ||
      (s = offsets_count(op, &in[1], &ns, err)) ||
      (s = need_act(op, "gate_activation", a.gate_activation, err)) ||
      (s = need_act(op, "cell_activation", a.cell_activation, err)) ||
      (s = need_act(op, "candidate_activation", a.candidate_activation, err)))
    return s;
  int64_t g = in[0].shape[1], d = g / 4;
  if (in[0].rank != 2 || g < 4 || g % 4)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: x's dim 1 (%lld) is not 4D, "
                       "D static", OPNAME(op), (long long)g);
  if ((s = need_shape(op, "weight", &in[2], 2, (int64_t[]){d, g}, err)) ||
      (s = need_shape(op, "bias", &in[3], 2, (int64_t[]){1, a.use_peepholes ? 7 * d : g},
                      err)))
    return s;
  if (n == 6 && ((s = need_shape(op, "h0", &in[4], 2, (int64_t[]){ns, d}, err)) ||
                 (s = need_shape(op, "c0", &in[5], 2, (int64_t[]){ns, d}, err))))
    return s;
  *out = in[0];
  out->shape[1] = d;
  return DY_OK;
}

/* sequence_pad(x [T, D...], offsets [N+1], pad_value [1]) -> [N, L, D...] */
dy_status dy_infer_sequence_pad(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                dy_error *err) {
  (void)n;
  dy_sequence_pad_attrs a;
  int64_t ns;
  dy_status s;
  if ((s = dy_sequence_pad_attrs_of(op, &a, err)) || (s = values_of(op, &in[0], 1, err)) ||
      (s = offsets_count(op, &in[1], &ns, err)) ||
      (s = need_shape(op, "pad_value", &in[2], 1, (int64_t[]){1}, err)))
    return s;
  if (a.padded_length < 1 || in[0].rank >= DY_MAX_DIMS)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: padded_length %lld (a static "
                       "length >= 1) of values of rank %d", OPNAME(op),
                       (long long)a.padded_length, in[0].rank);
  *out = in[0];
  out->rank = in[0].rank + 1;
  out->shape[0] = ns;
  out->shape[1] = a.padded_length;
  for (int i = 1; i < in[0].rank; i++)
    out->shape[i + 1] = in[0].shape[i];
  return DY_OK;
}

/* sequence_len(offsets [N+1]) -> i64 [N] */
dy_status dy_infer_sequence_len(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                dy_error *err) {
  (void)n;
  int64_t ns;
  dy_status s = offsets_count(op, &in[0], &ns, err);
  if (s)
    return s;
  *out = (dy_type){.dtype = DY_I64, .rank = 1, .shape = {ns}};
  return DY_OK;
}

/* gru(x [T, 3D], offsets [N+1], weight [D, 3D], bias [1, 3D] [, h0 [N, D]])
 * -> [T, D] */
dy_status dy_infer_gru(const dy_op *op, const dy_type *in, int n, dy_type *out,
                       dy_error *err) {
  dy_gru_attrs a;
  int64_t ns;
  dy_status s;
  if (n != 4 && n != 5)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "%s: takes x, offsets, weight, "
                       "bias and optionally h0 (4 or 5 inputs), got %d", OPNAME(op), n);
  if ((s = dy_gru_attrs_of(op, &a, err)) || (s = values_of(op, &in[0], 2, err)) ||
      (s = offsets_count(op, &in[1], &ns, err)) ||
      (s = need_act(op, "gate_activation", a.gate_activation, err)) ||
      (s = need_act(op, "activation", a.activation, err)))
    return s;
  int64_t g = in[0].shape[1], d = g / 3;
  if (in[0].rank != 2 || g < 3 || g % 3)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: x's dim 1 (%lld) is not 3D, "
                       "D static", OPNAME(op), (long long)g);
  if ((s = need_shape(op, "weight", &in[2], 2, (int64_t[]){d, g}, err)) ||
      (s = need_shape(op, "bias", &in[3], 2, (int64_t[]){1, g}, err)))
    return s;
  if (n == 5 && (s = need_shape(op, "h0", &in[4], 2, (int64_t[]){ns, d}, err)))
    return s;
  *out = in[0];
  out->shape[1] = d;
  return DY_OK;
}

/* crf_decoding(emission [T, K], offsets [N+1], transition [K+2, K]) ->
 * i64 [T, 1] */
dy_status dy_infer_crf_decoding(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                dy_error *err) {
  (void)n;
  int64_t ns;
  dy_status s;
  if ((s = values_of(op, &in[0], 2, err)) || (s = offsets_count(op, &in[1], &ns, err)))
    return s;
  int64_t k = in[0].shape[1];
  if (in[0].rank != 2 || k < 1)
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH, "%s: the emission is not [T, K], K "
                       "static", OPNAME(op));
  if ((s = need_shape(op, "transition", &in[2], 2, (int64_t[]){k + 2, k}, err)))
    return s;
  *out = (dy_type){.dtype = DY_I64, .rank = 2, .shape = {in[0].shape[0], 1}};
  return DY_OK;
}
