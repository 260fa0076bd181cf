/* paddle_det.c - the detection heads of Paddle's exports (import only;
 * OWN rows of paddle_table.c without an exporter):
 *
 *   multiclass_nms, multiclass_nms3   the op multiclass_nms (ir/ops_det.def)
 *                      on scores [B, C, M]; its row count is a size symbol
 *                      of its own ("nms_rows", "nms_rows_1", ...: --max-dim
 *                      names it) bounded by B * keep_top_k. Paddle's LoD of
 *                      Out is NmsRoisNum's running sum.
 *
 * Below the families; calls paddle_build.c and paddle_desc.c.
 */
#include <string.h>

#include "paddle_internal.h"

/* An output slot's var: the Paddle name when the op has it, else fresh. */
static int out_var(pd_ctx *c, const char *slot, const char *stem, const dy_type *t) {
  const char *name = pd_arg(c, true, slot, 0);
  return name ? pd_define(c, name, t) : pd_new_var(c, stem, t);
}

dy_status pd_import_multiclass_nms(pd_ctx *c) {
  bool v1 = strcmp(c->op->type, "multiclass_nms") == 0;
  int boxes, scores, rois;
  PD_TRY(pd_in(c, "BBoxes", 0, &boxes));
  PD_TRY(pd_in(c, "Scores", 0, &scores));
  PD_TRY(pd_in_opt(c, "RoisNum", 0, &rois));
  if (rois >= 0 || pd_type(c, scores)->rank != 3)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s with Scores [N, M, C] by RoisNum or LoD "
                   "(only Scores [N, C, M] and BBoxes [N, M, 4])", c->op->type);
  char sym[32] = "nms_rows";
  for (int k = 1; dy_program_sym(c->p, dy_sym_id(sym)); k++)
    snprintf(sym, sizeof sym, "nms_rows_%d", k);
  dy_multiclass_nms_attrs a = {
      .given = DY_GIVEN_ALL,
      .score_threshold = pd_as_f32(pd_attr_f(c, "score_threshold", 0)),
      .nms_top_k = pd_attr_i(c, "nms_top_k", -1),
      .keep_top_k = pd_attr_i(c, "keep_top_k", -1),
      .nms_threshold = pd_as_f32(pd_attr_f(c, "nms_threshold", 0.3)),
      .nms_eta = pd_as_f32(pd_attr_f(c, "nms_eta", 1.0)),
      .normalized = pd_attr_b(c, "normalized", true),
      .background_label = pd_attr_i(c, "background_label", 0),
      .empty_row = v1,
      .size_sym = sym};
  dy_attr attrs[DY_MULTICLASS_NMS_NATTRS];
  int n_a = dy_multiclass_nms_attrs_put(&a, attrs);
  int in[2] = {boxes, scores};
  dy_type in_t[2] = {*pd_type(c, boxes), *pd_type(c, scores)}, out_t[3];
  dy_op op = {.id = -1, .kind = DY_OP_MULTICLASS_NMS, .n_inputs = 2, .n_outputs = 3,
              .n_attrs = n_a, .attrs = attrs, .loc = c->loc};
  int64_t vals[DY_MAX_SYMS], bound;
  dy_program_sym_bounds(c->p, vals);
  dy_error e = {0};
  if (dy_op_size_bound(&op, in_t, 2, vals, &bound, &e) ||
      dy_program_declare_sym(c->p, sym, bound, &e) || dy_infer(&op, in_t, 2, out_t, &e))
    return pd_fail(c, e.status == DY_STATUS_DTYPE_MISMATCH ? DY_STATUS_UNSUPPORTED : e.status,
                   "%s", e.msg);
  int out[3] = {out_var(c, "Out", "nms_out", &out_t[0]),
                out_var(c, "Index", "nms_index", &out_t[1]),
                out_var(c, "NmsRoisNum", "nms_rois_num", &out_t[2])};
  if (out[0] < 0 || out[1] < 0 || out[2] < 0 ||
      !dy_program_append_op(c->p, c->block, DY_OP_MULTICLASS_NMS, in, 2, out, 3, attrs, n_a,
                            c->loc))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}
