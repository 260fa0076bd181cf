/* infer_det.c - shape and dtype inference for the detection heads
 * (ops_det.def).
 *
 *   multiclass_nms(boxes f32 [B, M, 4], scores f32 [B, C, M]; size_sym)
 *     -> out f32 [size_sym, 6], index i32 [size_sym, 1], rois_num i32 [B]
 *
 * Its run-time count's bound (dy_op_size_bound, infer_shape.c) is
 * dy_multiclass_nms_per_batch's per-batch bound times B.
 */
#include "dy_det.h"
#include "dy_ir.h"

#define OPNAME(op) dy_op_name((op)->kind)

int64_t dy_multiclass_nms_per_batch(const dy_op *op, int64_t classes, int64_t boxes) {
  dy_multiclass_nms_attrs a = dy_multiclass_nms_attrs_get(op);
  int64_t per = a.nms_top_k > -1 && a.nms_top_k < boxes ? a.nms_top_k : boxes;
  int64_t kept = a.background_label >= 0 && a.background_label < classes ? classes - 1 : classes;
  if (kept > 0 && per > DY_MAX_NUMEL / kept)
    kept = DY_MAX_NUMEL; /* no bound within the limit unless keep_top_k gives one */
  else
    kept *= per;
  return a.keep_top_k > -1 && a.keep_top_k < kept ? a.keep_top_k : kept;
}

dy_status dy_infer_multiclass_nms(const dy_op *op, const dy_type *in, int n, dy_type *out,
                                  dy_error *err) {
  dy_multiclass_nms_attrs a;
  dy_status s;
  (void)n;
  if ((s = dy_multiclass_nms_attrs_of(op, &a, err)))
    return s;
  if ((a.normalized != 0 && a.normalized != 1) || (a.empty_row != 0 && a.empty_row != 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: normalized and empty_row must be 0 or 1", OPNAME(op));
  if (a.nms_top_k < -1 || a.keep_top_k < -1)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: nms_top_k %lld and keep_top_k %lld must be >= -1", OPNAME(op),
                       (long long)a.nms_top_k, (long long)a.keep_top_k);
  if (in[0].dtype != DY_F32 || in[1].dtype != DY_F32)
    return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH, "%s: boxes and scores must be f32",
                       OPNAME(op));
  const dy_type *b = &in[0], *sc = &in[1];
  if (b->rank != 3 || b->shape[2] != 4 || sc->rank != 3 || b->shape[0] != sc->shape[0] ||
      b->shape[1] != sc->shape[2])
    return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                       "%s: boxes must be [B, M, 4] and scores [B, C, M]", OPNAME(op));
  int64_t d;
  if ((s = dy_size_sym_dim(op, a.size_sym, &d, err)))
    return s;
  out[0] = (dy_type){.dtype = DY_F32, .rank = 2, .shape = {d, 6}};
  out[1] = (dy_type){.dtype = DY_I32, .rank = 2, .shape = {d, 1}};
  out[2] = (dy_type){.dtype = DY_I32, .rank = 1, .shape = {sc->shape[0]}};
  return DY_OK;
}
