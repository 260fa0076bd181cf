/* dy_quant.h - post-training quantization: a float Program and a
 * calibration set in, an int8 Program out (compiler/quantize/quantize.c,
 * quantize_calib.c; library dy_quantize, over dy_ir and dy_runtime: it
 * runs the static executor; installed as include/dy2stc/dy_quant.h and
 * lib/libdy_quantize.a, dy2stc::quantize).
 *
 *   dy_program *q = NULL;
 *   dy_quant_report rep = {0};
 *   dy_quant_options o = {.per_channel = true, .method = DY_CALIB_MINMAX};
 *   if (dy_quantize_program(p, calib, n_batches, &o, &q, &rep, &err) == DY_OK) {
 *     dy_quant_report_print(&rep, stdout);
 *     dy_model_save(q, "model_int8", &err);
 *   }
 *   dy_quant_report_free(&rep);
 *
 * Calibration runs p on the static executor over every calibration batch
 * and records each activation's range (minmax: the smallest and largest
 * value seen; percentile: the 0.01th and 99.99th percentiles (or
 * o.percentile) of the values seen; mse: the range, shrunk by a common
 * factor, whose int8 rounding and clipping error over the values seen is
 * least). The rewrite then turns each layer into the quantized ops of
 * ir/ops_quant.def:
 *
 *   conv2d [+ bias add] [+ batch_norm] [+ relu | relu6]  -> qconv2d
 *   matmul (constant weight) [+ bias] [+ batch_norm] [+ relu | relu6] -> qmatmul
 *   add of two activations [+ relu]                     -> qadd
 *   softmax                                              -> qsoftmax
 *   reshape, flatten, pool2d (where it takes int8)       -> the same op on int8
 *   dropout (inference)                                  -> nothing
 *
 * batch_norm (inference form) is folded into the weights and the bias
 * first. Weights are symmetric int8 (zero point 0, values in [-127, 127]),
 * one scale per output channel (per_channel) or one per tensor;
 * activations asymmetric int8 (TFLite's scale = (max - min) / 255 over a
 * range holding 0); biases int32 in the scale x_scale * w_scale. An
 * elementwise layer (add, softmax, reshape, ...) is quantized only when its
 * input already is; everything else (and every layer named in keep_float)
 * stays float, with quantize_linear / dequantize_linear at the borders.
 * Inputs and outputs stay f32 with their names, so the int8 Program is
 * called exactly as p is.
 *
 * The report compares, layer by layer, the int8 Program's value of each
 * layer's output (dequantized) with p's on the calibration set: the
 * largest absolute difference and the cosine similarity.
 */
#ifndef DY_QUANT_H
#define DY_QUANT_H

#include <stdio.h>

#include "dy_runtime.h"

typedef enum {
  DY_CALIB_MINMAX = 0,
  DY_CALIB_PERCENTILE = 1,
  DY_CALIB_MSE = 2,
} dy_calib_method;

typedef struct {
  bool per_channel;          /* weight scales per output channel, else per tensor */
  dy_calib_method method;
  double percentile;         /* percentile method: 0 means 99.99            */
  /* Layers kept float, comma-separated: "first" and "last" (the first and
   * last conv2d / matmul layer) and layer names (a layer is named by its
   * weight without ".weight": "conv2d", "stage_1.linear"). NULL: none. A
   * name that names no layer is an error. */
  const char *keep_float;
  dy_progress_fn progress;   /* hears "calibrate" (and "histogram", the
                                second pass of entropy/percentile) and
                                "measure", batch b of n_batches (or NULL) */
  void *progress_ctx;
} dy_quant_options;

typedef struct {
  char name[96];             /* the layer's name (weight-based) or output var */
  char kind[32];             /* "conv2d", "depthwise", "matmul", "add", ...   */
  char out[96];              /* its output var in p                           */
  bool int8;                 /* quantized (else kept float)                   */
  float scale;               /* its output's scale and zero point (int8)      */
  int zero_point;
  double max_abs_err;        /* int8 Program vs p on the calibration set      */
  double cosine;
} dy_quant_layer;

typedef struct {
  int n_layers;
  dy_quant_layer *layers;    /* malloc'd; dy_quant_report_free           */
  int n_int8;                /* layers quantized                          */
  double out_max_abs_err;    /* the outputs (all fetches) likewise        */
  double out_cosine;
  double out_max_abs;        /* the largest |output| of p (for scale)      */
  int64_t n_samples;         /* calibration batches x batch               */
} dy_quant_report;

/* Quantize p (a verified inference Program, block 0 only) with the
 * calibration set calib: n_batches groups of p->n_feeds tensors (feed
 * order; each group one batch). *out is a new Program (caller frees with
 * dy_program_free), verified; report (may be NULL) is filled. Errors name
 * the layer or the input at fault. */
dy_status dy_quantize_program(const dy_program *p, dy_tensor *const *calib, int n_batches,
                              const dy_quant_options *o, dy_program **out,
                              dy_quant_report *report, dy_error *err);
void dy_quant_report_free(dy_quant_report *r);
/* The report as a table, one line per layer, then the outputs' line. */
void dy_quant_report_print(const dy_quant_report *r, FILE *f);

#endif
