/* onnx_sequence.c - ONNX sequences inside a graph, taken apart at import
 * time: a sequence value (ox_value.is_seq) is the list of its tensors, so
 * every op on it is list work here and the Program only sees the tensors
 * (the executor and the generated C need nothing new). Positions
 * (SequenceAt, SequenceInsert, SequenceErase) and SplitToSequence's split
 * must be constants, as any size-deciding operand (a graph input is
 * bound by the conformance runner, ox_get_ints); a sequence as a graph
 * input or output, or read by a tensor op, is refused (ox_materialize,
 * ox_op_n). */
#include <string.h>

#include "onnx_internal.h"

/* A new sequence of n items (copied), named as the node's output. */
static ox_value *new_seq(ox_ctx *c, ox_value *const *items, int n) {
  dy_type t = {0};
  ox_value *s = ox_new_value(c, c->node->output[0], &t); /* named: errors name it */
  if (!s)
    return NULL;
  s->is_seq = true;
  s->n_items = n;
  s->items = dy_program_alloc(c->p, (size_t)(n ? n : 1) * sizeof *s->items);
  if (!s->items)
    return NULL;
  if (n)
    memcpy(s->items, items, (size_t)n * sizeof *items);
  return s;
}

static dy_status need_seq(ox_ctx *c, int i, ox_value **s) {
  TRY(ox_need_in(c, i, s));
  if (!(*s)->is_seq)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "input %d '%s' is not a sequence", i,
                   c->node->input[i]);
  return DY_OK;
}

/* Position input i (a constant scalar) in [-n, n - 1 + extra], made
 * non-negative; absent: dflt. */
static dy_status position(ox_ctx *c, int i, int n, int extra, int dflt, int *out) {
  ox_value *pv = ox_in(c, i);
  if (!pv) {
    *out = dflt;
    return DY_OK;
  }
  const int64_t *v;
  int64_t k;
  TRY(ox_get_ints(c, pv, "the sequence position", false, &v, &k));
  if (k != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the position must be a scalar");
  int64_t p = v[0] < 0 ? v[0] + n : v[0];
  if (p < 0 || p > n - 1 + extra)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT,
                   "position %lld is outside the sequence of %d tensors", (long long)v[0], n);
  *out = (int)p;
  return DY_OK;
}

/* SequenceEmpty attributes: dtype (float). */
static dy_status map_sequence_empty(ox_ctx *c) {
  TRY(ox_check_attrs(c, "dtype"));
  OUT(0, new_seq(c, NULL, 0));
}

/* SequenceConstruct(inputs...). */
static dy_status map_sequence_construct(ox_ctx *c) {
  TRY(ox_check_attrs(c, ""));
  int n = (int)c->node->n_input;
  ox_value **in = dy_program_alloc(c->p, (size_t)(n ? n : 1) * sizeof *in);
  if (!in)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n; i++)
    TRY(ox_need_in(c, i, &in[i]));
  OUT(0, new_seq(c, in, n));
}

/* SequenceInsert(seq, tensor, position = the end). */
static dy_status map_sequence_insert(ox_ctx *c) {
  ox_value *s, *t;
  int p;
  TRY(ox_check_attrs(c, ""));
  TRY(need_seq(c, 0, &s));
  TRY(ox_need_in(c, 1, &t));
  TRY(position(c, 2, s->n_items, 1, s->n_items, &p));
  ox_value *r = new_seq(c, s->items, s->n_items + 1);
  if (r) {
    memmove(r->items + p + 1, r->items + p, (size_t)(s->n_items - p) * sizeof *r->items);
    r->items[p] = t;
  }
  OUT(0, r);
}

/* SequenceErase(seq, position = the last). */
static dy_status map_sequence_erase(ox_ctx *c) {
  ox_value *s;
  int p;
  TRY(ox_check_attrs(c, ""));
  TRY(need_seq(c, 0, &s));
  if (s->n_items == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "erasing from an empty sequence");
  TRY(position(c, 1, s->n_items, 0, s->n_items - 1, &p));
  ox_value *r = new_seq(c, s->items, s->n_items - 1);
  if (r)
    memcpy(r->items + p, s->items + p + 1, (size_t)(s->n_items - 1 - p) * sizeof *r->items);
  OUT(0, r);
}

/* SequenceAt(seq, position). */
static dy_status map_sequence_at(ox_ctx *c) {
  ox_value *s, *pv;
  int p;
  TRY(ox_check_attrs(c, ""));
  TRY(need_seq(c, 0, &s));
  TRY(ox_need_in(c, 1, &pv));
  TRY(position(c, 1, s->n_items, 0, 0, &p));
  return ox_set_out(c, 0, s->items[p]);
}

/* SequenceLength(seq): an i64 scalar constant. */
static dy_status map_sequence_length(ox_ctx *c) {
  ox_value *s;
  TRY(ox_check_attrs(c, ""));
  TRY(need_seq(c, 0, &s));
  OUT(0, ox_const_i64(c, s->n_items));
}

/* ConcatFromSequence(seq) attributes: axis (required), new_axis (0): the
 * tensors concatenated, or stacked on a new axis. */
static dy_status map_concat_from_sequence(ox_ctx *c) {
  ox_value *s;
  TRY(ox_check_attrs(c, "axis new_axis"));
  TRY(need_seq(c, 0, &s));
  if (!ox_attr(c, "axis"))
    return ox_fail(c, DY_STATUS_FORMAT, "the attribute axis is required");
  if (s->n_items == 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "concatenating an empty sequence");
  bool stack = ox_attr_i(c, "new_axis", 0) != 0;
  int r = s->items[0]->type.rank, axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), r + stack, &axis));
  ox_value **in = s->items;
  if (stack) {
    in = dy_program_alloc(c->p, (size_t)s->n_items * sizeof *in);
    if (!in)
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < s->n_items; i++)
      in[i] = ox_unsqueeze(c, s->items[i], 1, (int64_t[]){axis});
  }
  OUT(0, ox_concat_many(c, in, s->n_items, axis));
}

/* SplitToSequence(input, split) attributes: axis (0), keepdims (1). No
 * split: pieces of 1 (squeezed unless keepdims); a scalar: pieces of that
 * length (the last shorter); 1-D: those lengths (summing to the axis). */
static dy_status map_split_to_sequence(ox_ctx *c) {
  ox_value *x, *sv = NULL;
  TRY(ox_check_attrs(c, "axis keepdims"));
  TRY(ox_need_in(c, 0, &x));
  int axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), x->type.rank, &axis));
  int64_t dim = x->type.shape[axis];
  if (dim < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "splitting a dynamic axis into a sequence");
  const int64_t *sp = NULL;
  int64_t n_sp = 0;
  bool scalar = false;
  if ((sv = ox_in(c, 1))) {
    TRY(ox_get_ints(c, sv, "SplitToSequence's split", false, &sp, &n_sp));
    scalar = sv->type.rank == 0;
  }
  int64_t len[1024], n = 0, sum = 0;
  for (int64_t at = 0; at < dim || (sp && !scalar && n < n_sp); n++) {
    if (n == 1024)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "a sequence of more than 1024 tensors");
    len[n] = !sp ? 1 : scalar ? (sp[0] < dim - at ? sp[0] : dim - at) : sp[n];
    if (len[n] < (scalar ? 1 : 0))
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "a split of %lld", (long long)len[n]);
    at += len[n];
    sum += len[n];
  }
  if (sum != dim)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the splits sum to %lld, the axis is %lld",
                   (long long)sum, (long long)dim);
  bool squeeze = !sp && ox_attr_i(c, "keepdims", 1) == 0;
  ox_value **items = dy_program_alloc(c->p, (size_t)(n ? n : 1) * sizeof *items);
  if (!items)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0, at = 0; i < n; at += len[i++]) {
    int64_t st = at, en = at + len[i], ax = axis;
    items[i] = ox_slice(c, x, 1, &st, &en, &ax, NULL);
    if (squeeze)
      items[i] = ox_squeeze(c, items[i], 1, &ax);
    if (!items[i])
      return c->err->status;
  }
  OUT(0, new_seq(c, items, (int)n));
}

const ox_mapper ox_mappers_sequence[] = {
    {"SequenceEmpty", map_sequence_empty},
    {"SequenceConstruct", map_sequence_construct},
    {"SequenceInsert", map_sequence_insert},
    {"SequenceErase", map_sequence_erase},
    {"SequenceAt", map_sequence_at},
    {"SequenceLength", map_sequence_length},
    {"ConcatFromSequence", map_concat_from_sequence},
    {"SplitToSequence", map_split_to_sequence},
    {NULL, NULL},
};
