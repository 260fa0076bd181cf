/* onnx_op.c - the ONNX frontend's op builder: ox_op and its shorthands.
 *
 * ox_op looks the op up in this build's op table by name (so an op a build
 * lacks is a clean DY_STATUS_UNSUPPORTED), checks the mapper's attributes
 * against the op's schema, and runs shape inference on the input types.
 * When every input is a constant the op is computed at once with the
 * runtime's reference kernel and the result is a new constant (this is how
 * shape subgraphs fold away at import time); otherwise the constant inputs
 * become persistable vars and the op is appended to the Program. Values
 * holding the dynamic batch (shape values) may only flow through the ops
 * that move data: the fold runs the kernel a second time on the batch
 * flags (0/1 as i64) to move them as it moves the entries.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* the op builder                                                      */
/* ------------------------------------------------------------------ */

/* Ops that only move data: they may fold on shape values (the batch flags
 * travel with the data). */
static bool moves_data(const char *op) {
  static const char *const ok[] = {"gather", "concat", "slice", "squeeze", "unsqueeze",
                                   "reshape", "flatten", "transpose", "expand", "tile"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (strcmp(op, ok[i]) == 0)
      return true;
  return false;
}

/* Comparisons that may fold on shape values when the answer does not
 * depend on the symbol's value (fix_sym_compare). */
static bool compares(dy_op_kind k) {
  return k == DY_OP_EQUAL || k == DY_OP_GREATER || k == DY_OP_LESS;
}

/* A comparison of shape values, folded by the kernel with each symbolic
 * entry read as its data (0): put right what is known without the symbol's
 * value. A size symbol is at least 1, so against a plain entry <= 0 the
 * answer is fixed (PyTorch's export of expand writes Where(Equal(shape,
 * -1), ones, shape)), and a symbol equals itself; anything else depends on
 * the run and is an error naming the op. */
static dy_status fix_sym_compare(ox_ctx *c, dy_op_kind k, ox_value *const *in, ox_value *out) {
  int64_t n = dy_type_numel(&out->type), na = dy_type_numel(&in[0]->type),
          nb = dy_type_numel(&in[1]->type);
  if (in[0]->type.dtype != DY_I64 || in[1]->type.dtype != DY_I64 || (na != n && na != 1) ||
      (nb != n && nb != 1))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s of a shape value with the dynamic batch "
                   "size in a broadcast it cannot fold", dy_op_name(k));
  uint8_t *r = out->c->data;
  for (int64_t j = 0; j < n; j++) {
    int64_t ia = na == 1 ? 0 : j, ib = nb == 1 ? 0 : j;
    int64_t sa = ox_sym_dim(in[0], ia), sb = ox_sym_dim(in[1], ib);
    int64_t va = ((const int64_t *)in[0]->c->data)[ia], vb = ((const int64_t *)in[1]->c->data)[ib];
    if (!sa && !sb)
      continue; /* the kernel's answer */
    if (sa && sb && sa == sb)
      r[j] = k == DY_OP_EQUAL;
    else if (sa && !sb && vb <= 0) /* symbol >= 1 > vb */
      r[j] = k == DY_OP_GREATER;
    else if (sb && !sa && va <= 0) /* va < 1 <= symbol */
      r[j] = k == DY_OP_LESS;
    else
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "%s would compute with the dynamic batch size (a shape value of an "
                     "input with a dim_param) where its answer depends on the size",
                     dy_op_name(k));
  }
  return DY_OK;
}

/* Ops whose output holds each element of their first input once. */
static bool rearranges(const char *op) {
  static const char *const ok[] = {"reshape", "flatten", "squeeze", "unsqueeze",
                                   "transpose"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (strcmp(op, ok[i]) == 0)
      return true;
  return false;
}

/* Make constant v a persistable var (once); a weight's is trainable. */
dy_status ox_materialize(ox_ctx *c, ox_value *v) {
  if (v->var >= 0)
    return DY_OK;
  if (v->is_seq)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "'%s' is a sequence: a sequence is only taken apart at import time, never "
                   "a tensor or a graph output", v->name);
  if (!v->c)
    return ox_fail(c, DY_STATUS_INTERNAL, "value '%s' has neither a var nor data", v->name);
  if (v->sym)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "'%s' depends on the dynamic batch size and cannot be a tensor",
                   v->name);
  const char *nm = v->name && *v->name && dy_program_find_var(c->p, v->name) < 0
                       ? v->name
                       : dy_program_fresh_name(c->p, "const");
  int id = nm ? dy_program_add_var(c->p, nm, &v->type) : -1;
  if (id < 0)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_status s = dy_program_set_data(c->p, id, v->c->data, ox_type_bytes(&v->type), c->err);
  if (s)
    return s;
  /* a weight is trainable, unless it turns out to be batch norm's running
   * statistics (ox_op_n) */
  c->p->vars[id]->trainable = v->weight;
  v->var = id;
  return DY_OK;
}

/* A shape-value fold moved the entries; move their batch flags the same
 * way: the kernel again, each data input (every input of concat, else the
 * first) replaced by its flags as i64 0/1, and the outputs' non-zero
 * entries flagged. ti holds the inputs' tensors, out the folded values. */
static dy_status fold_batch_flags(ox_ctx *c, const dy_op *op, ox_value *const *in, int n_in,
                                  dy_tensor *ti, ox_value **out, int n_out) {
  /* the data inputs: concat's every one, where's x and y, else the first */
  bool all = op->kind == DY_OP_CONCAT, where = op->kind == DY_OP_WHERE;
  dy_tensor fi[16], fo[8];
  dy_tensor *pi[16], *po[8];
  void *bufs[24] = {0};
  int n_bufs = 0;
  dy_status s = DY_OK;
  for (int i = 0; i < n_in && !s; i++) {
    fi[i] = ti[i];
    pi[i] = &fi[i];
    if (where ? i == 0 : !all && i > 0)
      continue;
    if (in[i]->type.dtype != DY_I64) {
      s = ox_fail(c, DY_STATUS_UNSUPPORTED, "%s of a shape value with a non-int64 operand",
                  dy_op_name(op->kind));
      break;
    }
    int64_t n = dy_type_numel(&in[i]->type);
    int64_t *f = calloc((size_t)(n > 0 ? n : 1), sizeof *f);
    if (!(bufs[n_bufs++] = f)) {
      s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    for (int64_t j = 0; j < n; j++)
      f[j] = ox_sym_dim(in[i], j);
    fi[i].data = f;
  }
  for (int i = 0; i < n_out && !s; i++) {
    int64_t n = dy_type_numel(&out[i]->type);
    fo[i] = (dy_tensor){.type = out[i]->type, .nbytes = ox_type_bytes(&out[i]->type),
                        .refcount = 1, .borrowed = true, .var = -1};
    if (!(fo[i].data = bufs[n_bufs++] = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t))))
      s = ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    po[i] = &fo[i];
  }
  dy_error e = {0};
  if (!s && (s = dy_kernel_table[op->kind](op, pi, n_in, po, &e)))
    s = ox_fail(c, s, "folding %s: %s", dy_op_name(op->kind), e.msg);
  for (int i = 0; i < n_out && !s; i++) {
    const int64_t *f = fo[i].data;
    for (int64_t j = 0; j < dy_type_numel(&out[i]->type) && !s; j++)
      if (f[j])
        s = ox_set_dim(c, out[i], j, f[j]);
  }
  for (int i = 0; i < n_bufs; i++)
    free(bufs[i]);
  return s;
}

dy_status ox_op_n(ox_ctx *c, const char *opname, ox_value *const *in, int n_in,
                  const dy_attr *attrs, int n_attrs, ox_value **out, int n_out) {
  dy_op_kind k;
  char why[160];
  for (int i = 0; i < n_out; i++)
    out[i] = NULL;
  /* everything a mapper unrolls (a recurrence over time, a window, a loop,
   * LRN's channel window) comes through here: one budget bounds it all */
  int64_t budget = c->opts && c->opts->max_ops > 0 ? c->opts->max_ops : DY_ONNX_MAX_OPS;
  if (++c->n_built > budget)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "the model unrolls to more than %lld ops (the importer's limit)",
                   (long long)budget);
  if (!dy_op_kind_from_name(opname, &k))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "needs the op '%s', which this build's op table does not have", opname);
  dy_attr full[16];
  if (dy_op_info_of(k)->n_attrs > 16 || !dy_fe_complete_attrs(k, attrs, n_attrs, full, why, sizeof why))
    return ox_fail(c, DY_STATUS_INTERNAL, "%s: the mapping does not fit the op's schema: %s",
                   opname, why);
  attrs = full;
  n_attrs = dy_op_info_of(k)->n_attrs;
  if (n_in > DY_MAX_OP_INPUTS || n_out > 8)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s: too many operands", opname);
  bool all_const = true, any_sym = false;
  dy_type in_t[DY_MAX_OP_INPUTS], out_t[8];
  for (int i = 0; i < n_in; i++) {
    if (!in[i])
      return ox_fail(c, DY_STATUS_INTERNAL, "%s: missing input %d", opname, i);
    if (in[i]->is_seq)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "%s: input '%s' is a sequence, not a tensor",
                     opname, in[i]->name);
    all_const &= in[i]->c != NULL;
    any_sym |= in[i]->sym;
    in_t[i] = in[i]->type;
  }
  dy_op op = {.id = -1, .kind = k, .n_inputs = n_in, .n_outputs = n_out,
              .n_attrs = n_attrs, .attrs = (dy_attr *)attrs, .loc = c->loc};
  if (any_sym && !(all_const && (moves_data(opname) || compares(k) ||
                                 (k == DY_OP_WHERE && !in[0]->sym)) &&
                   !(strcmp(opname, "gather") == 0 && in[1]->sym)))
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "%s would compute with the dynamic batch size (a shape value of "
                   "an input with a dim_param)", opname);
  dy_error e = {0};
  dy_status s = dy_infer(&op, in_t, n_in, out_t, &e);
  if (s) {
    if (s == DY_STATUS_DTYPE_MISMATCH)
      s = DY_STATUS_UNSUPPORTED;
    return ox_fail(c, s, "%s", e.msg);
  }
  if (all_const) {
    /* fold now with the reference kernel */
    dy_tensor ti[DY_MAX_OP_INPUTS], to[8];
    dy_tensor *pi[DY_MAX_OP_INPUTS], *po[8];
    for (int i = 0; i < n_in; i++) {
      ti[i] = (dy_tensor){.type = in[i]->type, .data = in[i]->c->data,
                          .nbytes = ox_type_bytes(&in[i]->type), .refcount = 1,
                          .borrowed = true, .var = -1};
      pi[i] = &ti[i];
    }
    for (int i = 0; i < n_out; i++) {
      out[i] = ox_new_const(c, out_t[i].dtype, out_t[i].rank, out_t[i].shape, NULL);
      if (!out[i])
        return c->err ? c->err->status : DY_STATUS_OUT_OF_MEMORY;
      to[i] = (dy_tensor){.type = out_t[i], .data = out[i]->c->data,
                          .nbytes = ox_type_bytes(&out_t[i]), .refcount = 1,
                          .borrowed = true, .var = -1};
      po[i] = &to[i];
    }
    s = dy_kernel_table[k](&op, pi, n_in, po, &e);
    if (s)
      return ox_fail(c, s, "folding %s: %s", opname, e.msg);
    if (any_sym && (s = compares(k) ? fix_sym_compare(c, k, in, out[0])
                                    : fold_batch_flags(c, &op, in, n_in, ti, out, n_out)))
      return s;
    for (int i = 0; i < n_out; i++) {
      /* a weight reshaped or transposed (a conv bias to [C, 1, 1]) is still
       * one, element for element */
      out[i]->weight = in[0]->weight && rearranges(opname);
    }
    return DY_OK;
  }
  int ids_in[DY_MAX_OP_INPUTS], ids_out[8];
  for (int i = 0; i < n_in; i++) {
    if ((s = ox_materialize(c, in[i])))
      return s;
    ids_in[i] = in[i]->var;
  }
  if (k == DY_OP_BATCH_NORM) /* the running mean and variance are buffers */
    for (int i = 3; i < n_in; i++)
      c->p->vars[ids_in[i]]->trainable = false;
  char stem[200];
  const char *base = c->node && c->node->n_output && c->node->output[0][0]
                         ? c->node->output[0] : opname;
  snprintf(stem, sizeof stem, "%.150s/%s", base, opname);
  for (int i = 0; i < n_out; i++) {
    const char *nm = dy_program_fresh_name(c->p, stem);
    int id = nm ? dy_program_add_var(c->p, nm, &out_t[i]) : -1;
    out[i] = ox_new_value(c, nm, &out_t[i]);
    if (id < 0 || !out[i])
      return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    out[i]->var = id;
    ids_out[i] = id;
  }
  if (!dy_program_append_op(c->p, c->block, k, ids_in, n_in, ids_out, n_out, attrs, n_attrs,
                            c->loc))
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

ox_value *ox_op(ox_ctx *c, const char *opname, ox_value *const *in, int n_in,
                const dy_attr *attrs, int n_attrs) {
  ox_value *o;
  return ox_op_n(c, opname, in, n_in, attrs, n_attrs, &o, 1) ? NULL : o;
}

/* The shorthands propagate a NULL input (an earlier error) as NULL. */
#define NEED(...)                                                     \
  do {                                                                \
    ox_value *const need_[] = {__VA_ARGS__};                          \
    for (size_t i_ = 0; i_ < sizeof need_ / sizeof *need_; i_++)      \
      if (!need_[i_])                                                 \
        return NULL;                                                  \
  } while (0)

ox_value *ox_unary(ox_ctx *c, const char *op, ox_value *x) {
  NEED(x);
  return ox_op(c, op, &x, 1, NULL, 0);
}

ox_value *ox_binary(ox_ctx *c, const char *op, ox_value *a, ox_value *b) {
  NEED(a, b);
  ox_value *in[2] = {a, b};
  return ox_op(c, op, in, 2, NULL, 0);
}

ox_value *ox_scale(ox_ctx *c, ox_value *x, float scale, float bias) {
  NEED(x);
  dy_attr a[DY_SCALE_NATTRS];
  int n_a = dy_scale_attrs_put(&(dy_scale_attrs){
      .given = DY_GIVEN_ALL, .scale = scale, .bias = bias, .bias_after_scale = 1}, a);
  return ox_op(c, "scale", &x, 1, a, n_a);
}

ox_value *ox_cast(ox_ctx *c, ox_value *x, dy_dtype to) {
  NEED(x);
  if (x->type.dtype == to)
    return x;
  dy_attr a[DY_CAST_NATTRS];
  int n_a = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = to}, a);
  return ox_op(c, "cast", &x, 1, a, n_a);
}

ox_value *ox_reshape(ox_ctx *c, ox_value *x, int rank, const int64_t *shape) {
  NEED(x);
  dy_attr a[DY_RESHAPE_NATTRS];
  int n_a = dy_reshape_attrs_put(&(dy_reshape_attrs){
      .given = DY_GIVEN_ALL, .shape = shape, .n_shape = rank}, a);
  return ox_op(c, "reshape", &x, 1, a, n_a);
}

ox_value *ox_transpose(ox_ctx *c, ox_value *x, int rank, const int64_t *perm) {
  NEED(x);
  bool id = true;
  for (int i = 0; i < rank; i++)
    id &= perm[i] == i;
  if (id)
    return x;
  dy_attr a[DY_TRANSPOSE_NATTRS];
  int n_a = dy_transpose_attrs_put(&(dy_transpose_attrs){
      .given = DY_GIVEN_ALL, .perm = perm, .n_perm = rank}, a);
  return ox_op(c, "transpose", &x, 1, a, n_a);
}

ox_value *ox_unsqueeze(ox_ctx *c, ox_value *x, int n, const int64_t *axes) {
  NEED(x);
  if (n == 0)
    return x;
  dy_attr a[DY_UNSQUEEZE_NATTRS];
  int n_a = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n}, a);
  return ox_op(c, "unsqueeze", &x, 1, a, n_a);
}

ox_value *ox_squeeze(ox_ctx *c, ox_value *x, int n, const int64_t *axes) {
  NEED(x);
  dy_attr a[DY_SQUEEZE_NATTRS];
  int n_a = dy_squeeze_attrs_put(&(dy_squeeze_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n}, a);
  return ox_op(c, "squeeze", &x, 1, a, n_a);
}

ox_value *ox_reduce(ox_ctx *c, const char *op, ox_value *x, int n,
                    const int64_t *axes, bool keepdim) {
  NEED(x);
  /* the reduce ops share one schema */
  dy_attr a[DY_REDUCE_SUM_NATTRS];
  int na = dy_reduce_sum_attrs_put(&(dy_reduce_sum_attrs){
      .given = DY_GIVEN_ALL, .axes = axes, .n_axes = n, .keepdim = keepdim}, a);
  return ox_op(c, op, &x, 1, a, na);
}

ox_value *ox_slice(ox_ctx *c, ox_value *x, int n, const int64_t *starts,
                   const int64_t *ends, const int64_t *axes,
                   const int64_t *steps) {
  NEED(x);
  int64_t ones[DY_MAX_DIMS];
  for (int i = 0; i < n && i < DY_MAX_DIMS; i++)
    ones[i] = 1;
  dy_attr a[DY_SLICE_NATTRS];
  int n_a = dy_slice_attrs_put(&(dy_slice_attrs){
      .given = DY_GIVEN_ALL, .starts = starts, .n_starts = n, .ends = ends, .n_ends = n,
      .axes = axes, .n_axes = n, .steps = steps ? steps : ones, .n_steps = n}, a);
  return ox_op(c, "slice", &x, 1, a, n_a);
}

ox_value *ox_where(ox_ctx *c, ox_value *cond, ox_value *a, ox_value *b) {
  NEED(cond, a, b);
  ox_value *in[3] = {cond, a, b};
  return ox_op(c, "where", in, 3, NULL, 0);
}

ox_value *ox_not(ox_ctx *c, ox_value *x) {
  NEED(x);
  return ox_binary(c, "equal", x, ox_const_bool(c, false));
}

ox_value *ox_concat(ox_ctx *c, ox_value *const *in, int n, int64_t axis) {
  for (int i = 0; i < n; i++)
    NEED(in[i]);
  if (n == 1)
    return in[0];
  dy_attr a[DY_CONCAT_NATTRS];
  int n_a = dy_concat_attrs_put(&(dy_concat_attrs){.given = DY_GIVEN_ALL, .axis = axis}, a);
  return ox_op(c, "concat", in, n, a, n_a);
}

ox_value *ox_concat_many(ox_ctx *c, ox_value *const *in, int n, int64_t axis) {
  enum { M = DY_MAX_OP_INPUTS };
  if (n <= M)
    return ox_concat(c, in, n, axis);
  /* a tree: concats of M inputs each, then the concat of those */
  ox_value **part = malloc(sizeof *part * (size_t)((n + M - 1) / M));
  if (!part) {
    ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  int k = 0;
  ox_value *y = NULL;
  for (int i = 0; i < n; i += M)
    if (!(part[k++] = ox_concat(c, in + i, n - i < M ? n - i : M, axis)))
      goto done;
  y = ox_concat_many(c, part, k, axis);
done:
  free(part);
  return y;
}

/* An op whose kernel sets a count (DY_OPF_SETS_SIZE): its size symbol of
 * its own ("nonzero", "nonzero_1", ...: --max-dim names it) declared with
 * the bound the op implies (dy_op_size_bound); attrs has room for the
 * size_sym attribute last. */
static ox_value *sized_op(ox_ctx *c, dy_op_kind kind, ox_value *const *in, int n_in,
                          dy_attr *attrs, int n_attrs) {
  const char *base = dy_op_name(kind);
  char name[32];
  snprintf(name, sizeof name, "%s", base);
  for (int k = 1; dy_program_sym(c->p, dy_sym_id(name)); k++)
    snprintf(name, sizeof name, "%s_%d", base, k);
  for (int i = 0; i < n_attrs; i++)
    if (strcmp(attrs[i].name, "size_sym") == 0)
      attrs[i].s = name;
  dy_op op = {.id = -1, .kind = kind, .n_inputs = n_in, .n_outputs = 1,
              .n_attrs = n_attrs, .attrs = attrs, .loc = c->loc};
  dy_type t[DY_MAX_OP_INPUTS];
  for (int i = 0; i < n_in; i++)
    t[i] = in[i]->type;
  int64_t vals[DY_MAX_SYMS], bound;
  dy_program_sym_bounds(c->p, vals);
  dy_error e = {0};
  if (dy_op_size_bound(&op, t, n_in, vals, &bound, &e) ||
      dy_program_declare_sym(c->p, name, bound, &e)) {
    ox_fail(c, e.status, "%s", e.msg);
    return NULL;
  }
  return ox_op(c, base, in, n_in, attrs, n_attrs);
}

ox_value *ox_nonzero(ox_ctx *c, ox_value *x) {
  NEED(x);
  dy_attr a[DY_NONZERO_NATTRS];
  int n_a = dy_nonzero_attrs_put(&(dy_nonzero_attrs){.given = DY_GIVEN_ALL, .size_sym = "nonzero"},
                                 a);
  return sized_op(c, DY_OP_NONZERO, &x, 1, a, n_a);
}

ox_value *ox_nms(ox_ctx *c, ox_value *boxes, ox_value *scores, const dy_nms_attrs *at) {
  NEED(boxes);
  NEED(scores);
  dy_nms_attrs a = *at;
  a.given = DY_GIVEN_ALL;
  a.size_sym = "nms";
  dy_attr attrs[DY_NMS_NATTRS];
  int n_a = dy_nms_attrs_put(&a, attrs);
  return sized_op(c, DY_OP_NMS, (ox_value *const[]){boxes, scores}, 2, attrs, n_a);
}

ox_value *ox_iota(ox_ctx *c, int64_t n, int r, int axis) {
  int64_t shape[DY_MAX_DIMS];
  for (int i = 0; i < r; i++)
    shape[i] = i == axis ? n : 1;
  ox_value *v = ox_new_const(c, DY_I64, r, shape, NULL);
  if (v)
    for (int64_t i = 0; i < n; i++)
      ((int64_t *)v->c->data)[i] = i;
  return v;
}

ox_value *ox_like_make(ox_ctx *c, int rank, const int64_t *dims) {
  ox_value *like = ox_like(c, rank, dims);
  if (like || rank > DY_MAX_DIMS)
    return like;
  /* a run-time value holding every symbolic dim of dims, in order, at
   * distinct axes (the graph's input, usually) */
  int at[DY_MAX_DIMS], n_sym = 0;
  ox_value *v = NULL;
  for (size_t i = 0; i < c->n_all && !v; i++) {
    ox_value *u = c->all[i];
    if (u->var < 0)
      continue;
    int a = 0, k = 0;
    for (int d = 0; d < rank; d++)
      if (dims[d] < 0) {
        while (a < u->type.rank && u->type.shape[a] != dims[d])
          a++;
        if (a == u->type.rank)
          break;
        at[k++] = a++;
      }
    int want = 0;
    for (int d = 0; d < rank; d++)
      want += dims[d] < 0;
    if (k == want && k > 0) {
      v = u;
      n_sym = k;
    }
  }
  if (!v)
    return NULL;
  /* v sliced to one element on every other axis and squeezed to its
   * symbolic dims, unsqueezed to dims' rank: [batch, 1, 1] */
  int64_t st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], sq[DY_MAX_DIMS], un[DY_MAX_DIMS];
  int n_cut = 0, n_un = 0;
  for (int a = 0, k = 0; a < v->type.rank; a++) {
    if (k < n_sym && at[k] == a) {
      k++;
      continue;
    }
    st[n_cut] = 0;
    en[n_cut] = 1;
    sq[n_cut] = ax[n_cut] = a;
    n_cut++;
  }
  int64_t ones[DY_MAX_DIMS], zeros_shape[DY_MAX_DIMS];
  for (int d = 0; d < rank; d++) {
    ones[d] = 1;
    zeros_shape[d] = dims[d] < 0 ? 1 : dims[d];
    if (dims[d] >= 0)
      un[n_un++] = d;
  }
  ox_value *t = n_cut ? ox_slice(c, v, n_cut, st, en, ax, NULL) : v;
  t = ox_squeeze(c, t, n_cut, sq);
  t = ox_unsqueeze(c, t, n_un, un);
  /* zeros without reading v's values (a NaN times 0 is NaN): 0/1 from a
   * cast to bool, times 0, plus a zero constant of the static dims */
  t = ox_binary(c, "mul", ox_cast(c, ox_cast(c, t, DY_BOOL), DY_F32),
                ox_new_const(c, DY_F32, rank, ones, NULL));
  return ox_binary(c, "add", t, ox_new_const(c, DY_F32, rank, zeros_shape, NULL));
}

ox_value *ox_pad(ox_ctx *c, ox_value *x, const int64_t *pads, const char *mode,
                 float value) {
  NEED(x);
  bool zero = true;
  for (int i = 0; i < 2 * x->type.rank; i++)
    zero &= pads[i] == 0;
  if (zero)
    return x;
  dy_attr a[DY_PAD_NATTRS];
  int n_a = dy_pad_attrs_put(&(dy_pad_attrs){
      .given = DY_GIVEN_ALL, .paddings = pads, .n_paddings = 2 * x->type.rank, .mode = mode,
      .value = value}, a);
  return ox_op(c, "pad", &x, 1, a, n_a);
}
