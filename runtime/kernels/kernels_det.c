/* kernels_det.c - reference kernels of the detection heads
 * (ir/ops_det.def). Shape and attribute rules are ir/infer/infer_det.c's.
 *
 * multiclass_nms follows Paddle's CPU kernel (multiclass_nms3_kernel.cc)
 * step by step, in float: the candidates above score_threshold sorted by
 * score (ties: lower index; Paddle's stable sort of the boxes in index
 * order), NMSFast's adaptive threshold, JaccardOverlap and BBoxArea with
 * std::max(a, b) = a < b ? b : a and std::min(a, b) = b < a ? b : a, and
 * keep_top_k's stable sort of the kept boxes (label, then kept order).
 * Both sorts order ids by (score descending, id ascending), a total
 * order, so one heap sort gives Paddle's stable result.
 * codegen/ops/emit_det.c prints the same code into the generated C: change
 * one, change the other.
 */
#include <stdlib.h>

#include "dy_det.h"
#include "kernels_internal.h"

/* ids a[0..n) ordered by v[id] descending, then id ascending. */
static void det_sort(int64_t *a, int64_t n, const float *v) {
#define LATER(x, y) (v[x] < v[y] || (v[x] == v[y] && (x) > (y)))
  int64_t start = n / 2 - 1, end = n;
  for (;;) {
    int64_t root;
    if (start >= 0) {
      root = start--;
    } else {
      if (--end <= 0)
        break;
      int64_t t = a[0];
      a[0] = a[end], a[end] = t, root = 0;
    }
    for (int64_t ch; (ch = 2 * root + 1) < end; root = ch) {
      if (ch + 1 < end && LATER(a[ch + 1], a[ch]))
        ch++;
      if (!LATER(a[ch], a[root]))
        break;
      int64_t t = a[root];
      a[root] = a[ch], a[ch] = t;
    }
  }
#undef LATER
}

/* Paddle's BBoxArea: 0 for an inverted box, +1 on each side unless normalized */
static float det_area(const float *b, float norm) {
  if (b[2] < b[0] || b[3] < b[1])
    return 0;
  const float w = b[2] - b[0], h = b[3] - b[1];
  return norm == 0 ? w * h : (w + 1) * (h + 1);
}

/* Paddle's JaccardOverlap of boxes a and b (xmin ymin xmax ymax) */
static float det_iou(const float *a, const float *b, float norm) {
  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1])
    return 0;
  const float ix0 = a[0] < b[0] ? b[0] : a[0], iy0 = a[1] < b[1] ? b[1] : a[1];
  const float ix1 = b[2] < a[2] ? b[2] : a[2], iy1 = b[3] < a[3] ? b[3] : a[3];
  const float inter = (ix1 - ix0 + norm) * (iy1 - iy0 + norm);
  return inter / (det_area(a, norm) + det_area(b, norm) - inter);
}

/* One batch: the kept (class, box) pairs into cls[], box[] in output
 * order (class by class, in the order kept); returns their count. cand
 * holds m ids, cls, box, order and sv per * classes. */
static int64_t nms_batch(const dy_multiclass_nms_attrs *a, const float *sc, const float *bx,
                         int64_t nc, int64_t m, int64_t *cand, int64_t *cls, int64_t *box,
                         int64_t *order, float *sv) {
  const float thr = (float)a->score_threshold, eta = (float)a->nms_eta;
  const float norm = a->normalized ? 0.0f : 1.0f;
  int64_t n_sel = 0;
  for (int64_t c = 0; c < nc; c++) {
    if (c == a->background_label)
      continue;
    const float *s = sc + c * m;
    int64_t n = 0;
    for (int64_t i = 0; i < m; i++)
      if (s[i] > thr)
        cand[n++] = i;
    det_sort(cand, n, s);
    if (a->nms_top_k > -1 && a->nms_top_k < n)
      n = a->nms_top_k;
    float adapt = (float)a->nms_threshold;
    int64_t first = n_sel;
    for (int64_t t = 0; t < n; t++) {
      int64_t i = cand[t];
      bool keep = true;
      for (int64_t r = first; r < n_sel && keep; r++)
        keep = det_iou(bx + i * 4, bx + box[r] * 4, norm) <= adapt;
      if (!keep)
        continue;
      cls[n_sel] = c, box[n_sel] = i, sv[n_sel] = s[i], n_sel++;
      if (eta < 1 && adapt > 0.5)
        adapt *= eta;
    }
  }
  if (a->keep_top_k < 0 || n_sel <= a->keep_top_k)
    return n_sel;
  /* the keep_top_k best stay (score, then label and kept order: the id) */
  for (int64_t k = 0; k < n_sel; k++)
    order[k] = k;
  det_sort(order, n_sel, sv);
  for (int64_t k = a->keep_top_k; k < n_sel; k++)
    cls[order[k]] = -1;
  int64_t n = 0;
  for (int64_t k = 0; k < n_sel; k++)
    if (cls[k] >= 0)
      cls[n] = cls[k], box[n] = box[k], n++;
  return n;
}

/* multiclass_nms: a DY_OPF_SETS_SIZE op; out[0] and out[1] are allocated
 * at the count's capacity (dy_op_size_bound), which the rows never pass. */
dy_status dy_kernel_multiclass_nms(const dy_op *op, dy_tensor *const *in, int n_in,
                                   dy_tensor *const *out, dy_error *err) {
  dy_status s = dy_kcheck_io(op, in, n_in, 2, out, err);
  if (s != DY_OK)
    return s;
  dy_multiclass_nms_attrs a = dy_multiclass_nms_attrs_get(op);
  const float *box = in[0]->data, *score = in[1]->data;
  int64_t nb = in[1]->type.shape[0], nc = in[1]->type.shape[1], m = in[1]->type.shape[2];
  int64_t per = dy_multiclass_nms_per_batch(op, nc, m), cap = out[0]->type.shape[0];
  int64_t sel = nc * (a.nms_top_k > -1 && a.nms_top_k < m ? a.nms_top_k : m);
  if (cap < nb * per || cap < 1 || out[1]->type.shape[0] != cap)
    return dy_error_at(err, op, DY_STATUS_INTERNAL, "multiclass_nms: the output's capacity "
                       "%lld is below %lld rows", (long long)cap, (long long)(nb * per));
  int64_t *ids = malloc((size_t)(m + 4 * sel + 1) * sizeof *ids);
  if (!ids)
    return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "multiclass_nms: out of memory");
  int64_t *cls = ids + m, *bi = cls + sel, *order = bi + sel;
  float *y = out[0]->data, *sv = (float *)(void *)(order + sel);
  int32_t *index = out[1]->data, *rois = out[2]->data;
  int64_t rows = 0;
  for (int64_t b = 0; b < nb; b++) {
    const float *sc = score + b * nc * m, *bx = box + b * m * 4;
    int64_t n = nms_batch(&a, sc, bx, nc, m, ids, cls, bi, order, sv);
    for (int64_t k = 0; k < n; k++, rows++) {
      float *row = y + rows * 6;
      const float *src = bx + bi[k] * 4;
      row[0] = (float)cls[k], row[1] = sc[cls[k] * m + bi[k]];
      row[2] = src[0], row[3] = src[1], row[4] = src[2], row[5] = src[3];
      index[rows] = (int32_t)(b * m + bi[k]);
    }
    rois[b] = (int32_t)n;
  }
  free(ids);
  if (rows == 0 && a.empty_row) { /* Paddle's multiclass_nms: [[-1]] */
    for (int k = 0; k < 6; k++)
      y[k] = -1;
    index[0] = -1, rows = 1;
  }
  out[0]->type.shape[0] = rows, out[1]->type.shape[0] = rows;
  out[0]->nbytes = (size_t)(rows * 6) * sizeof(float);
  out[1]->nbytes = (size_t)rows * sizeof(int32_t);
  return DY_OK;
}
