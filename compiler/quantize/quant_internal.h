/* quant_internal.h - what post-training quantization's two files share
 * (compiler/quantize/quantize.c: units, rewrite, report; quantize_calib.c:
 * calibration). Private to dy_quantize. */
#ifndef DY_QUANT_INTERNAL_H
#define DY_QUANT_INTERNAL_H

#include "dy_quant.h"

enum { DY_QUANT_HIST_BINS = 2048 };

/* One f32 var's calibration statistics. */
typedef struct {
  bool seen;                      /* it took a finite value */
  float lo, hi;                   /* the values' range */
  float hlo, hhi;                 /* the histogram's range (the first run's) */
  double *hist;                   /* DY_QUANT_HIST_BINS counts, or NULL */
  float qlo, qhi;                 /* the range quantization uses */
} dy_quant_stats;

/* Fill st[v] (zeroed, one per var of p) for every f32 var of p from the
 * n_batches groups of p->n_feeds inputs in calib, by o->method. The
 * histograms are the caller's to free (dy_quant_stats_free). */
dy_status dy_quant_calibrate(const dy_program *p, dy_tensor *const *calib, int n_batches,
                             const dy_quant_options *o, dy_quant_stats *st, dy_error *err);
void dy_quant_stats_free(dy_quant_stats *st, int n);

/* TFLite's ChooseQuantizationParams for int8: the range [lo, hi] widened
 * to hold 0, as scale = (hi - lo) / 255 and a zero point in [-128, 127]. */
void dy_quant_choose_qparams(float lo, float hi, float *scale, int *zp);

#endif
