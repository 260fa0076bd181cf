/* dy_det.h - the detection heads' helpers shared by inference, the
 * kernel and the emitter (ir/ops_det.def, ir/infer/infer_det.c). */
#ifndef DY_DET_H
#define DY_DET_H

#include "dy_ir.h"

/* multiclass_nms: the most rows one batch can give with scores [B,
 * classes, boxes]: keep_top_k, or the non-background classes times
 * min(nms_top_k, boxes) when that is smaller (or keep_top_k is -1). */
int64_t dy_multiclass_nms_per_batch(const dy_op *op, int64_t classes, int64_t boxes);

#endif
