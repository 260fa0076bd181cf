/* paddle_lod.c - LoD sequences (import only): a LoD feed becomes two
 * Program inputs, its values NAME (dim 0 the total length, the size
 * symbol "<feed>_len", bounded by --max-dim) and its level-0 offsets
 * NAME@lod (i64 [batch+1]: the batch is the sequence count). The context
 * keeps which Paddle names carry which offsets: a feed's, then every
 * output whose VarDesc has a LoD takes its first LoD input's (Paddle's
 * row-wise ops keep the LoD: lookup_table, mul, elementwise, tanh, lstm).
 * The sequence ops read their input's offsets as a second operand
 * (ir/ops_lod.def).
 */
#include <ctype.h>
#include <string.h>

#include "paddle_internal.h"

/* ---- the LoD map ---- */

static int lod_of(const pd_ctx *c, const char *name) {
  for (int i = c->n_lod - 1; i >= 0; i--)
    if (strcmp(c->lod_name[i], name) == 0)
      return c->lod_var[i];
  return -1;
}

static dy_status set_lod(pd_ctx *c, const char *name, int var) {
  if (c->n_lod == PD_MAX_LOD)
    return pd_fail(c, DY_STATUS_LIMIT, "more than %d LoD tensors", PD_MAX_LOD);
  c->lod_name[c->n_lod] = name;
  c->lod_var[c->n_lod++] = var;
  return DY_OK;
}

/* The offsets of input slot[0], or an error naming the slot. */
static dy_status lod_in(pd_ctx *c, const char *slot, int *off) {
  const char *nm = pd_arg(c, false, slot, 0);
  *off = nm ? lod_of(c, nm) : -1;
  if (*off < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "input %s '%s' carries no LoD (its sequence "
                   "offsets come from a LoD feed through row-wise ops)", slot, nm ? nm : "");
  return DY_OK;
}

dy_status pd_lod_feed_type(pd_ctx *c, const char *name, dy_type *t) {
  const PdVar *vd = pd_var_desc(c, name);
  if (pd_lod_level(vd) != 1 || t->rank < 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s' is a LoD tensor of level %d and "
                   "rank %d: only level-1 LoD feeds of rank >= 1 are supported", name,
                   pd_lod_level(vd), t->rank);
  if (t->shape[0] >= 0)
    return DY_OK;
  char sym[DY_SYM_NAME_MAX];
  int n = snprintf(sym, sizeof sym, "%s%.24s", isdigit((unsigned char)name[0]) ? "_" : "",
                   name);
  for (int k = 0; k < n && sym[k]; k++)
    if (!isalnum((unsigned char)sym[k]))
      sym[k] = '_';
  snprintf(sym + strlen(sym), sizeof sym - strlen(sym), "_len");
  t->shape[0] = dy_dim_sym(sym);
  if (t->shape[0] == DY_DIM_NONE)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s': no size symbol '%s'", name, sym);
  return dy_program_declare_sym(c->p, sym, 0, c->err);
}

dy_status pd_lod_feed_offsets(pd_ctx *c, const char *name) {
  char nm[300];
  snprintf(nm, sizeof nm, "%.280s@lod", name);
  dy_type t = {.dtype = DY_I64, .rank = 1};
  if (!dy_dim_add_const(DY_DIM_BATCH, 1, &t.shape[0]))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s': no dim batch+1", name);
  int id = pd_define(c, nm, &t);
  if (id < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "feed '%s' is defined twice", nm);
  PD_TRY(dy_program_add_feed(c->p, id, c->err));
  return set_lod(c, name, id); /* name: the OpDesc's, alive while importing */
}

dy_status pd_lod_propagate(pd_ctx *c) {
  int from = -1;
  for (size_t i = 0; i < c->op->n_inputs && from < 0; i++)
    for (size_t k = 0; k < c->op->inputs[i]->n_arguments && from < 0; k++)
      from = lod_of(c, c->op->inputs[i]->arguments[k]);
  if (from < 0)
    return DY_OK;
  for (size_t i = 0; i < c->op->n_outputs; i++)
    for (size_t k = 0; k < c->op->outputs[i]->n_arguments; k++) {
      const char *nm = c->op->outputs[i]->arguments[k];
      if (nm && pd_lod_level(pd_var_desc(c, nm)) > 0 && lod_of(c, nm) < 0)
        PD_TRY(set_lod(c, nm, from));
    }
  return DY_OK;
}

/* ---- the sequence ops ---- */

/* sequence_pool(X; pooltype, pad_value) -> Out (MaxIndex is training's) */
PD_IMPORTER(sequence_pool) {
  int x, off, out;
  char pt[32];
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(lod_in(c, "X", &off));
  pd_attr_s(c, "pooltype", "AVERAGE", pt, sizeof pt);
  dy_attr a[DY_SEQUENCE_POOL_NATTRS];
  int n_a = dy_sequence_pool_attrs_put(
      &(dy_sequence_pool_attrs){.given = DY_GIVEN_ALL, .pooltype = pt, .pad_value = pd_attr_f(c, "pad_value", 0)}, a);
  return pd_op(c, "sequence_pool", (int[]){x, off}, 2, a, n_a, pd_out_name(c, "Out"), &out);
}

/* A recurrent op's operands: Input, its offsets, Weight, Bias, H0 (-1:
 * none) into in[0..5). */
static dy_status rnn_inputs(pd_ctx *c, int *in) {
  PD_TRY(pd_in(c, "Input", 0, &in[0]));
  PD_TRY(lod_in(c, "Input", &in[1]));
  PD_TRY(pd_in(c, "Weight", 0, &in[2]));
  PD_TRY(pd_in(c, "Bias", 0, &in[3]));
  return pd_in_opt(c, "H0", 0, &in[4]);
}

/* lstm(Input, Weight, Bias [, H0, C0]) -> Hidden (Cell, BatchGate and
 * BatchCellPreAct are training's: refused when an op reads Cell) */
PD_IMPORTER(lstm) {
  int in[6], out, n = 4;
  char ga[32], ca[32], na[32];
  PD_TRY(rnn_inputs(c, in));
  PD_TRY(pd_in_opt(c, "C0", 0, &in[5]));
  if ((in[4] < 0) != (in[5] < 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "lstm with only one of H0 and C0 (give both or "
                   "neither)");
  if (in[4] >= 0)
    n = 6;
  const char *cell = pd_arg(c, true, "Cell", 0);
  if (cell && pd_read_later(c, cell))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "lstm: its Cell output '%s' is read by a later "
                   "op (only Hidden is supported)", cell);
  dy_attr a[DY_LSTM_NATTRS];
  int n_a = dy_lstm_attrs_put(
      &(dy_lstm_attrs){.given = DY_GIVEN_ALL,
                       .use_peepholes = pd_attr_b(c, "use_peepholes", true),
                       .is_reverse = pd_attr_b(c, "is_reverse", false),
                       .gate_activation = pd_attr_s(c, "gate_activation", "sigmoid", ga, 32),
                       .cell_activation = pd_attr_s(c, "cell_activation", "tanh", ca, 32),
                       .candidate_activation =
                           pd_attr_s(c, "candidate_activation", "tanh", na, 32)},
      a);
  return pd_op(c, "lstm", in, n, a, n_a, pd_out_name(c, "Hidden"), &out);
}

/* sequence_pad(X, PadValue; padded_length) -> Out, Length (each
 * sequence's length, i64 at run time whatever the VarDesc declares) */
PD_IMPORTER(sequence_pad) {
  int x, off, pad, out;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(lod_in(c, "X", &off));
  PD_TRY(pd_in(c, "PadValue", 0, &pad));
  int64_t len = pd_attr_i(c, "padded_length", -1);
  if (len < 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "sequence_pad with padded_length %lld (the "
                   "longest sequence's) is not supported: the output's shape would depend on "
                   "the data; give a static padded_length", (long long)len);
  const dy_type *pt = pd_type(c, pad);
  if (pt->rank != 1 || pt->shape[0] != 1)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "sequence_pad: PadValue of %d dims (only one "
                   "value, [1], is supported)", pt->rank);
  dy_attr a[DY_SEQUENCE_PAD_NATTRS];
  int n_a = dy_sequence_pad_attrs_put(&(dy_sequence_pad_attrs){.given = DY_GIVEN_ALL, .padded_length = len}, a);
  PD_TRY(pd_op(c, "sequence_pad", (int[]){x, off, pad}, 3, a, n_a, pd_out_name(c, "Out"),
               &out));
  const char *ln = pd_arg(c, true, "Length", 0);
  if (!ln || !pd_read_later(c, ln))
    return DY_OK;
  /* [N], or [N, 1] as Paddle 1.x declares it */
  const PdTensorDesc *td = pd_tensor_desc(pd_var_desc(c, ln));
  if (!td || td->n_dims != 2)
    return pd_op(c, "sequence_len", &off, 1, NULL, 0, ln, &out);
  PD_TRY(pd_op(c, "sequence_len", &off, 1, NULL, 0, NULL, &out));
  return pd_unsqueeze(c, out, 1, (int64_t[]){1}, ln, &out);
}

/* sequence_mask(X [...]; maxlen, out_dtype) -> Y [..., maxlen]: y[i..][j] =
 * j < x[i..], as less(iota [maxlen], x [..., 1]) cast to out_dtype */
PD_IMPORTER(sequence_mask) {
  int x, iota, xu, lt, out;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_no_input(c, "MaxLenTensor", "maxlen"));
  int64_t m = pd_attr_i(c, "maxlen", -1);
  const dy_type *xt = pd_type(c, x);
  if (m < 1 || m > 1 << 20)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "sequence_mask with maxlen %lld: only a static "
                   "maxlen (1 .. 2^20) is supported", (long long)m);
  if (xt->rank >= DY_MAX_DIMS || xt->dtype != DY_I64)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "sequence_mask of lengths of %d dims (only i64 "
                   "of fewer than %d dims)", xt->rank, DY_MAX_DIMS);
  dy_dtype dt;
  int pdt = (int)pd_attr_i(c, "out_dtype", PD_INT64);
  if (!pd_dtype_to_dy(pdt, &dt))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "sequence_mask to %s", pd_dtype_name(pdt));
  int64_t *v = malloc(sizeof(int64_t) * (size_t)m);
  if (!v)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t j = 0; j < m; j++)
    v[j] = j;
  dy_status s = pd_const(c, DY_I64, 1, &m, v, NULL, &iota);
  free(v);
  PD_TRY(s);
  PD_TRY(pd_unsqueeze(c, x, 1, (int64_t[]){xt->rank}, NULL, &xu));
  PD_TRY(pd_binary(c, "less", iota, xu, NULL, &lt));
  dy_attr a[DY_CAST_NATTRS];
  int n_a = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = dt}, a);
  return pd_op(c, "cast", &lt, 1, a, n_a, pd_out_name(c, "Y"), &out);
}

/* gru(Input, Weight, Bias [, H0]) -> Hidden (BatchGate, BatchResetHiddenPrev
 * and BatchHidden are training's) */
PD_IMPORTER(gru) {
  int in[5], out, n = 4;
  char ga[32], ca[32];
  PD_TRY(rnn_inputs(c, in));
  if (in[4] >= 0)
    n = 5;
  dy_attr a[DY_GRU_NATTRS];
  int n_a = dy_gru_attrs_put(
      &(dy_gru_attrs){.given = DY_GIVEN_ALL,
                      .is_reverse = pd_attr_b(c, "is_reverse", false),
                      .origin_mode = pd_attr_b(c, "origin_mode", false),
                      .gate_activation = pd_attr_s(c, "gate_activation", "sigmoid", ga, 32),
                      .activation = pd_attr_s(c, "activation", "tanh", ca, 32)},
      a);
  return pd_op(c, "gru", in, n, a, n_a, pd_out_name(c, "Hidden"), &out);
}

/* crf_decoding(Emission, Transition) -> ViterbiPath (with a Label, the
 * training form that marks matching tags: refused) */
PD_IMPORTER(crf_decoding) {
  int e, off, tr, out;
  PD_TRY(pd_in(c, "Emission", 0, &e));
  PD_TRY(lod_in(c, "Emission", &off));
  PD_TRY(pd_in(c, "Transition", 0, &tr));
  PD_TRY(pd_no_input(c, "Label", "the decoded path (crf_decoding with a Label)"));
  PD_TRY(pd_no_input(c, "Length", "the LoD (crf_decoding on padded input with Length)"));
  return pd_op(c, "crf_decoding", (int[]){e, off, tr}, 3, NULL, 0,
               pd_out_name(c, "ViterbiPath"), &out);
}
