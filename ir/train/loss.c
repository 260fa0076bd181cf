/* loss.c - the losses of dy_train.h, written once against the builder
 * (dy_gb), so eager losses (runtime/losses.c, the eager builder: taped and
 * traced), Program losses (dy_program_append_loss) and the generated C
 * run the same ops of the table. Every loss is an f32 scalar (rank 0).
 *
 *   cross_entropy  logits x [N, C, d...] (classes on dim 1), per element
 *                  l = -log_softmax(x, 1)[label]:
 *                  - hard labels: i64 [N, d...] or [N, 1, d...]; the class
 *                    is picked with gather_elements, so a label >= C fails
 *                    at run time with the gather's index error; a negative
 *                    label is moved below -C first (gather_elements counts
 *                    negatives from the end) so it fails the same way
 *                    instead of picking a class;
 *                  - ignore_index: labels equal to it are masked (weight 0)
 *                    and replaced by class 0 before the gather; the mean
 *                    is over the kept elements, a count computed by ops
 *                    (N is the run-time batch): sum(l * keep) / sum(keep)
 *                    (NaN when every label is ignored, as PyTorch);
 *                  - soft labels: f32 of the logits' type,
 *                    l = -sum(label * log_softmax(x, 1), 1).
 *   mse            (pred - label)^2
 *   l1             |pred - label|
 *   bce_with_logits  max(x, 0) - x z + log(1 + e^-|x|) (the stable form;
 *                  log(1 + e^t) is the softplus op)
 *
 * then the mean (over every element) or the sum. pred and label have the
 * same type for mse, l1 and bce (no broadcasting: a shape mismatch is
 * usually a bug, so it is an error naming both types).
 *
 * dy_program_append_loss names the loss var "loss" when that name is free
 * (its temporaries are "loss@<n>"). Ops are emitted one per statement, so
 * the Program is the same whichever compiler built this file.
 */
#include <string.h>

#include "dy_ir.h"

static const char *const loss_names[] = {
    [DY_LOSS_CROSS_ENTROPY] = "cross_entropy",
    [DY_LOSS_MSE] = "mse",
    [DY_LOSS_L1] = "l1",
    [DY_LOSS_BCE_WITH_LOGITS] = "bce_with_logits",
};
enum { N_LOSSES = (int)(sizeof loss_names / sizeof loss_names[0]) };

const char *dy_loss_name(dy_loss_kind k) {
  return (unsigned)k < N_LOSSES ? loss_names[k] : "?";
}

bool dy_loss_from_name(const char *s, dy_loss_kind *out) {
  for (int k = 0; k < N_LOSSES; k++)
    if (s && strcmp(s, loss_names[k]) == 0) {
      *out = (dy_loss_kind)k;
      return true;
    }
  return false;
}

/* ---- small emitters ---- */

static int iconst(dy_gb *b, int64_t v) {
  return dy_gb_status(b) ? -1 : b->constant(b, DY_I64, (double)v);
}

static int binop(dy_gb *b, dy_op_kind k, int x, int y) {
  return dy_gb_op(b, k, (const int[]){x, y}, 2, NULL, 0);
}

static int reduce_all(dy_gb *b, dy_op_kind k, int x) {
  /* every axis (none named), not kept; the reduce ops share one schema */
  dy_attr a[DY_REDUCE_SUM_NATTRS];
  int n = dy_reduce_sum_attrs_put(&(dy_reduce_sum_attrs){
      .given = DY_GIVEN_ALL, .axes = NULL, .n_axes = 0, .keepdim = 0}, a);
  return dy_gb_op1(b, k, x, a, n);
}

static int reduce(dy_gb *b, int x, dy_reduction r) {
  return reduce_all(b, r == DY_REDUCTION_SUM ? DY_OP_REDUCE_SUM : DY_OP_REDUCE_MEAN, x);
}

/* "<what>: pred f32[...] and label i64[...]: <why>" */
static int type_error(dy_gb *b, const char *what, const dy_type *p, const dy_type *l,
                      const char *why) {
  char a[128], c[128];
  return dy_gb_fail(b, DY_STATUS_SHAPE_MISMATCH, "%s loss: prediction %s and label %s: %s",
                    what, dy_type_str(p, a, sizeof a), dy_type_str(l, c, sizeof c), why);
}

/* ---- the losses ---- */

/* Class indices lab (i64 [N, 1, d...]) against log-probabilities lsm:
 * per-element losses, the ignored ones masked; *keep gets the 0/1 mask
 * (f32) when ignore_index is set. */
static int nll_hard(dy_gb *b, int lsm, int lab, const dy_loss_spec *spec, int *keep) {
  int64_t n_class = b->type(b, lsm).shape[1];
  *keep = -1;
  if (spec->has_ignore_index) {
    int drop = binop(b, DY_OP_EQUAL, lab, iconst(b, spec->ignore_index));
    *keep = dy_gb_scale(b, dy_gb_cast(b, drop, DY_F32), -1.0, 1.0);
    lab = dy_gb_mul(b, lab, dy_gb_cast(b, *keep, DY_I64));  /* ignored -> 0 */
  }
  /* a negative label becomes label - C, out of the gather's [-C, C) */
  int neg = dy_gb_cast(b, binop(b, DY_OP_LESS, lab, iconst(b, 0)), DY_I64);
  lab = dy_gb_sub(b, lab, dy_gb_mul(b, neg, iconst(b, n_class)));
  dy_attr ax[DY_GATHER_ELEMENTS_NATTRS];
  int n_ax = dy_gather_elements_attrs_put(&(dy_gather_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = 1}, ax);
  int picked = dy_gb_op(b, DY_OP_GATHER_ELEMENTS, (const int[]){lsm, lab}, 2, ax, n_ax);
  int l = dy_gb_neg(b, picked);
  return *keep >= 0 ? dy_gb_mul(b, l, *keep) : l;
}

static int cross_entropy(dy_gb *b, int x, int label, const dy_loss_spec *spec) {
  dy_type tx = b->type(b, x), tl = b->type(b, label);
  if (tx.dtype != DY_F32 || tx.rank < 2)
    return type_error(b, "cross_entropy", &tx, &tl,
                      "the logits must be f32 [N, C, ...] (classes on dim 1)");
  dy_attr ax[DY_LOG_SOFTMAX_NATTRS];
  int n_ax = dy_log_softmax_attrs_put(&(dy_log_softmax_attrs){
      .given = DY_GIVEN_ALL, .axis = 1}, ax);
  if (spec->soft_labels) {
    if (spec->has_ignore_index)
      return dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT,
                        "cross_entropy loss: ignore_index applies to class-index "
                        "labels, not to soft labels");
    if (!dy_type_equal(&tx, &tl))
      return type_error(b, "cross_entropy", &tx, &tl,
                        "soft labels must be f32 of the logits' type");
    int lsm = dy_gb_op1(b, DY_OP_LOG_SOFTMAX, x, ax, n_ax);
    int64_t axis = 1;
    int l = dy_gb_neg(b, dy_gb_reduce_sum(b, dy_gb_mul(b, label, lsm), &axis, 1, true));
    return reduce(b, l, spec->reduction);
  }
  /* hard labels: [N, d...] or [N, 1, d...], i64 */
  bool with_one = tl.rank == tx.rank;
  bool ok = tl.dtype == DY_I64 && (tl.rank == tx.rank - 1 || (with_one && tl.shape[1] == 1));
  for (int d = 0, k = 0; ok && d < tx.rank; d++) {
    if (d == 1) {
      k += with_one;
      continue;
    }
    ok = tl.shape[k++] == tx.shape[d];
  }
  if (!ok)
    return type_error(b, "cross_entropy", &tx, &tl,
                      "class-index labels must be i64 of the logits' shape without "
                      "the class dim 1 ([N, d...] or [N, 1, d...]); probabilities "
                      "need soft_labels");
  if (!with_one) {
    dy_attr ua[DY_UNSQUEEZE_NATTRS];
    int n_ua = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
        .given = DY_GIVEN_ALL, .axes = (const int64_t[]){1}, .n_axes = 1}, ua);
    label = dy_gb_op1(b, DY_OP_UNSQUEEZE, label, ua, n_ua);
  }
  int lsm = dy_gb_op1(b, DY_OP_LOG_SOFTMAX, x, ax, n_ax);
  int keep;
  int l = nll_hard(b, lsm, label, spec, &keep);
  if (keep >= 0 && spec->reduction == DY_REDUCTION_MEAN) {
    /* one statement per op: the order of a call's arguments is the
     * compiler's, and the Program's op order must not be */
    int total = reduce_all(b, DY_OP_REDUCE_SUM, l);
    int kept = reduce_all(b, DY_OP_REDUCE_SUM, keep);
    return dy_gb_div(b, total, kept);
  }
  return reduce(b, l, spec->reduction);
}

int dy_loss_build(dy_gb *b, int pred, int label, const dy_loss_spec *spec) {
  if (pred < 0 || label < 0 || dy_gb_status(b))
    return -1;
  if ((unsigned)spec->kind >= N_LOSSES)
    return dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT, "unknown loss kind %d", (int)spec->kind);
  if (spec->kind == DY_LOSS_CROSS_ENTROPY)
    return cross_entropy(b, pred, label, spec);
  dy_type tp = b->type(b, pred), tl = b->type(b, label);
  if (tp.dtype != DY_F32 || !dy_type_equal(&tp, &tl))
    return type_error(b, dy_loss_name(spec->kind), &tp, &tl,
                      "they must be f32 of one shape");
  int l;
  switch (spec->kind) {
  case DY_LOSS_MSE: {
    int d = dy_gb_sub(b, pred, label);
    l = dy_gb_mul(b, d, d);
    break;
  }
  case DY_LOSS_L1:
    l = dy_gb_op1(b, DY_OP_ABS, dy_gb_sub(b, pred, label), NULL, 0);
    break;
  default: { /* bce_with_logits */
    int relu = dy_gb_op1(b, DY_OP_RELU, pred, NULL, 0);
    int nabs = dy_gb_neg(b, dy_gb_op1(b, DY_OP_ABS, pred, NULL, 0));
    dy_attr spa[DY_SOFTPLUS_NATTRS];
    int n_spa = dy_softplus_attrs_put(&(dy_softplus_attrs){
        .given = DY_GIVEN_ALL, .beta = 1.0, .threshold = 20.0}, spa);
    int sp = dy_gb_op1(b, DY_OP_SOFTPLUS, nabs, spa, n_spa);
    l = dy_gb_add(b, dy_gb_sub(b, relu, dy_gb_mul(b, pred, label)), sp);
    break;
  }
  }
  return reduce(b, l, spec->reduction);
}

dy_status dy_program_append_loss(dy_program *p, int pred, const char *label_name,
                                 const dy_loss_spec *spec, int *label, int *loss,
                                 dy_error *err) {
  *label = *loss = -1;
  *err = (dy_error){0};  /* the builder stops at the first error it holds */
  if (pred < 0 || pred >= p->n_vars)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "append_loss: no prediction var");
  /* the label's type: the prediction's, or for class indices its shape
   * without the class dim 1, i64 */
  dy_type tl = p->vars[pred]->type;
  if (spec->kind == DY_LOSS_CROSS_ENTROPY && !spec->soft_labels && tl.rank >= 2) {
    for (int d = 1; d + 1 < tl.rank; d++)
      tl.shape[d] = tl.shape[d + 1];
    tl.rank--;
    tl.dtype = DY_I64;
  }
  int lv = dy_program_add_var(p, label_name, &tl);
  if (lv < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "append_loss: cannot add the label feed '%s' (the name is taken?)",
                        label_name);
  dy_status s = dy_program_add_feed(p, lv, err);
  if (s)
    return s;
  dy_gb_program_state st;
  dy_gb b;
  dy_gb_program(&b, &st, p, 0, "loss@", err);
  int l = dy_loss_build(&b, pred, lv, spec);
  if (l < 0)
    return err->status ? err->status
                       : dy_error_set(err, DY_STATUS_INTERNAL, "append_loss: no loss");
  if (dy_program_find_var(p, "loss") < 0)
    p->vars[l]->name = dy_program_strdup(p, "loss");
  *label = lv;
  *loss = l;
  return DY_OK;
}
