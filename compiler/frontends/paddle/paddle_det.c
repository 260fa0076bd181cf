/* paddle_det.c - the detection heads of Paddle's exports (import only;
 * OWN rows of paddle_table.c without an exporter):
 *
 *   multiclass_nms, multiclass_nms3   the op multiclass_nms (ir/ops_det.def)
 *                      on scores [B, C, M]; its row count is a size symbol
 *                      of its own ("nms_rows", "nms_rows_1", ...: --max-dim
 *                      names it) bounded by B * keep_top_k. Paddle's LoD of
 *                      Out is NmsRoisNum's running sum.
 *   yolo_box           sigmoid / exp / where on X seen as [N, an, 5 + C,
 *                      H * W], the grid and anchors constants (iou_aware
 *                      off); Boxes and Scores zero below conf_thresh
 *
 * Below the families; calls paddle_build.c and paddle_desc.c.
 */
#include <stdlib.h>
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

/* ------------------------------------------------------------------ */
/* yolo_box                                                            */
/* ------------------------------------------------------------------ */

/* f32 [1, an, 1, 1] of an (anchor) values, or [1, 1, 1, hw] of the grid's
 * column (col) or row index of each cell. */
static dy_status yolo_const(pd_ctx *c, int64_t n, int64_t axis, const float *v, int *out) {
  int64_t shape[4] = {1, 1, 1, 1};
  shape[axis] = n;
  return pd_const(c, DY_F32, 4, shape, v, NULL, out);
}

/* x ? kept where cond (conf < conf_thresh) is false, else 0 */
static dy_status yolo_mask(pd_ctx *c, int below, int zero, int x, int *out) {
  return pd_op(c, "where", (int[]){below, zero, x}, 3, NULL, 0, NULL, out);
}

/* [N, an, k, hw] -> [N, an * hw, k] */
static dy_status yolo_rows(pd_ctx *c, int x, int64_t an, int64_t hw, int64_t k,
                           const char *name, int *out) {
  PD_TRY(pd_transpose(c, x, 4, (int64_t[]){0, 1, 3, 2}, NULL, &x));
  return pd_reshape(c, x, 3, (int64_t[]){0, an * hw, k}, name, out);
}

/* yolo_box, as Paddle's CPU kernel (yolo_box_kernel.cc, iou_aware off):
 * X [N, an * (5 + C), H, W] seen as [N, an, 5 + C, H * W]; per cell of
 * anchor j at column l, row k: conf = sigmoid(obj); cells with conf <
 * conf_thresh give zeros; else
 *   cx = (l + sigmoid(tx) * scale + bias) * img_w / W, bias = -0.5 (scale - 1)
 *   w  = exp(tw) * anchor_w * img_w / (downsample_ratio * W)   (same for y, h)
 *   box = [cx - w/2, cy - h/2, cx + w/2, cy + h/2], clip_bbox: into
 *   [0, img_w - 1] x [0, img_h - 1]; scores = conf * sigmoid(class)
 * with (img_h, img_w) = ImgSize's row. Boxes [N, an H W, 4], Scores
 * [N, an H W, C]. */
dy_status pd_import_yolo_box(pd_ctx *c) {
  int x, isz;
  PD_TRY(pd_in(c, "X", 0, &x));
  PD_TRY(pd_in(c, "ImgSize", 0, &isz));
  int64_t anchors[64], ncls = pd_attr_i(c, "class_num", 0), ratio = pd_attr_i(c, "downsample_ratio", 32);
  int n_anch = pd_attr_ints(c, "anchors", anchors, 64);
  float thr = (float)pd_attr_f(c, "conf_thresh", 0.01), scale = (float)pd_attr_f(c, "scale_x_y", 1.0);
  bool clip = pd_attr_b(c, "clip_bbox", true);
  const dy_type *xt = pd_type(c, x);
  int64_t an = n_anch / 2, h = xt->rank == 4 ? xt->shape[2] : -1, w = xt->rank == 4 ? xt->shape[3] : -1;
  if (pd_attr_b(c, "iou_aware", false))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "yolo_box with iou_aware");
  if (n_anch < 2 || n_anch % 2 || ncls < 1 || h < 1 || w < 1 || xt->shape[1] != an * (5 + ncls) ||
      pd_type(c, isz)->rank != 2 || pd_type(c, isz)->shape[1] != 2 || h * w > (1 << 20))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "yolo_box needs X [N, an * (5 + class_num), H, W] "
                   "with a static H, W and ImgSize [N, 2]");
  int64_t hw = h * w;
  float *gx = malloc((size_t)hw * sizeof *gx), *gy = malloc((size_t)hw * sizeof *gy);
  float aw[32], ah[32];
  dy_status s = gx && gy ? DY_OK : pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < hw && !s; i++)
    gx[i] = (float)(i % w), gy[i] = (float)(i / w);
  for (int64_t j = 0; j < an; j++)
    aw[j] = (float)anchors[2 * j], ah[j] = (float)anchors[2 * j + 1];
  int cgx = -1, cgy = -1, caw, cah;
  if (!s)
    s = yolo_const(c, hw, 3, gx, &cgx);
  if (!s)
    s = yolo_const(c, hw, 3, gy, &cgy);
  free(gx);
  free(gy);
  PD_TRY(s);
  PD_TRY(yolo_const(c, an, 1, aw, &caw));
  PD_TRY(yolo_const(c, an, 1, ah, &cah));
  PD_TRY(pd_reshape(c, x, 4, (int64_t[]){0, an, 5 + ncls, hw}, NULL, &x));
  int t[5], cls, sz[2], isf, zero, vsc, vbias, vhalf, v1, below, conf;
  for (int k = 0; k < 5; k++)
    PD_TRY(pd_slice1(c, x, 2, k, k + 1, NULL, &t[k]));
  PD_TRY(pd_slice1(c, x, 2, 5, 5 + ncls, NULL, &cls));
  dy_attr ca[DY_CAST_NATTRS];
  int n_ca = dy_cast_attrs_put(&(dy_cast_attrs){.given = DY_GIVEN_ALL, .dtype = DY_F32}, ca);
  PD_TRY(pd_op(c, "cast", &isz, 1, ca, n_ca, NULL, &isf));
  PD_TRY(pd_reshape(c, isf, 4, (int64_t[]){0, 2, 1, 1}, NULL, &isf));
  for (int d = 0; d < 2; d++) /* sz[0] = img_w, sz[1] = img_h: [N, 1, 1, 1] */
    PD_TRY(pd_slice1(c, isf, 1, 1 - d, 2 - d, NULL, &sz[d]));
  PD_TRY(pd_const_f32(c, 0.0f, &zero));
  PD_TRY(pd_const_f32(c, scale, &vsc));
  PD_TRY(pd_const_f32(c, (float)(-0.5 * ((double)scale - 1.0)), &vbias));
  PD_TRY(pd_const_f32(c, 0.5f, &vhalf));
  PD_TRY(pd_const_f32(c, 1.0f, &v1));
  PD_TRY(pd_unary(c, "sigmoid", t[4], NULL, &conf));
  int vthr;
  PD_TRY(pd_const_f32(c, thr, &vthr));
  PD_TRY(pd_binary(c, "less", conf, vthr, NULL, &below));
  int ctr[2], ext[2], box[4];
  const int grid[2] = {cgx, cgy}, anc[2] = {caw, cah};
  const int64_t cells[2] = {w, h};
  for (int d = 0; d < 2; d++) { /* d = 0: x, w; 1: y, h */
    int v, g, in;
    PD_TRY(pd_unary(c, "sigmoid", t[d], NULL, &v));
    PD_TRY(pd_binary(c, "mul", v, vsc, NULL, &v));
    PD_TRY(pd_binary(c, "add", grid[d], v, NULL, &v));
    PD_TRY(pd_binary(c, "add", v, vbias, NULL, &v));
    PD_TRY(pd_binary(c, "mul", v, sz[d], NULL, &v));
    PD_TRY(pd_const_f32(c, (float)cells[d], &g));
    PD_TRY(pd_binary(c, "div", v, g, NULL, &ctr[d]));
    PD_TRY(pd_unary(c, "exp", t[2 + d], NULL, &v));
    PD_TRY(pd_binary(c, "mul", v, anc[d], NULL, &v));
    PD_TRY(pd_binary(c, "mul", v, sz[d], NULL, &v));
    PD_TRY(pd_const_f32(c, (float)(ratio * cells[d]), &in));
    PD_TRY(pd_binary(c, "div", v, in, NULL, &v));
    PD_TRY(pd_binary(c, "mul", v, vhalf, NULL, &ext[d]));
    PD_TRY(pd_binary(c, "sub", ctr[d], ext[d], NULL, &box[d]));
    PD_TRY(pd_binary(c, "add", ctr[d], ext[d], NULL, &box[2 + d]));
    if (clip) {
      int hi;
      PD_TRY(pd_binary(c, "maximum", box[d], zero, NULL, &box[d]));
      PD_TRY(pd_binary(c, "sub", sz[d], v1, NULL, &hi));
      PD_TRY(pd_binary(c, "minimum", box[2 + d], hi, NULL, &box[2 + d]));
    }
  }
  for (int k = 0; k < 4; k++)
    PD_TRY(yolo_mask(c, below, zero, box[k], &box[k]));
  int boxes, scores, o;
  dy_attr a[DY_CONCAT_NATTRS];
  int n_a = dy_concat_attrs_put(&(dy_concat_attrs){.given = DY_GIVEN_ALL, .axis = 2}, a);
  PD_TRY(pd_op(c, "concat", box, 4, a, n_a, NULL, &boxes));
  PD_TRY(yolo_rows(c, boxes, an, hw, 4, pd_arg(c, true, "Boxes", 0), &o));
  PD_TRY(pd_unary(c, "sigmoid", cls, NULL, &scores));
  PD_TRY(pd_binary(c, "mul", conf, scores, NULL, &scores));
  PD_TRY(yolo_mask(c, below, zero, scores, &scores));
  return yolo_rows(c, scores, an, hw, ncls, pd_arg(c, true, "Scores", 0), &o);
}
