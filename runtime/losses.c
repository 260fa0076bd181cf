/* losses.c - the eager losses (dy_autograd.h): ir/train/loss.c's dy_loss_build
 * run on the eager builder, so each op of a loss goes through dy_apply —
 * onto the autograd tape, and into the Program when a trace is active. */
#include "dy_runtime_internal.h"

dy_tensor *dy_loss_at(dy_tensor *pred, dy_tensor *label, const dy_loss_spec *spec,
                      dy_srcloc loc) {
  if (!pred || !label)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "%s loss: a NULL %s",
                   dy_loss_name(spec ? spec->kind : DY_LOSS_CROSS_ENTROPY),
                   pred ? "label" : "prediction");
  dy_loss_spec dflt = {0};
  if (!spec)
    spec = &dflt;
  dy_error err = {0};
  dy_gb b;
  dy_gb_eager_state st;
  dy_gb_eager(&b, &st, loc, &err);
  int vp = dy_gb_eager_value(&b, pred);
  int v = dy_loss_build(&b, vp, dy_gb_eager_value(&b, label), spec);
  dy_tensor *out = dy_keep(dy_gb_eager_tensor(&b, v));
  dy_gb_eager_free(&b);
  if (!out) {
    /* an op's own error is already recorded with its line (first wins) */
    dy_fail(err.status ? err.status : DY_STATUS_INTERNAL, loc, "%s",
            err.status ? err.msg : "loss: no value");
    return NULL;
  }
  return dy_tensor_adopt(out);
}

static dy_tensor *named(dy_loss_kind k, dy_tensor *pred, dy_tensor *label,
                        const dy_loss_spec *spec, dy_srcloc loc) {
  dy_loss_spec s = spec ? *spec : (dy_loss_spec){0};
  s.kind = k;
  return dy_loss_at(pred, label, &s, loc);
}

dy_tensor *dy_cross_entropy_at(dy_tensor *logits, dy_tensor *labels,
                               const dy_loss_spec *spec, dy_srcloc loc) {
  return named(DY_LOSS_CROSS_ENTROPY, logits, labels, spec, loc);
}

dy_tensor *dy_mse_loss_at(dy_tensor *pred, dy_tensor *label, dy_srcloc loc) {
  return named(DY_LOSS_MSE, pred, label, NULL, loc);
}

dy_tensor *dy_l1_loss_at(dy_tensor *pred, dy_tensor *label, dy_srcloc loc) {
  return named(DY_LOSS_L1, pred, label, NULL, loc);
}

dy_tensor *dy_bce_with_logits_loss_at(dy_tensor *logits, dy_tensor *label,
                                      dy_srcloc loc) {
  return named(DY_LOSS_BCE_WITH_LOGITS, logits, label, NULL, loc);
}
