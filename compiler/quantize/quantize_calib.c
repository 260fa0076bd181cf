/* quantize_calib.c - calibration for post-training quantization
 * (quantize.c, dy_quant.h): the ranges of a Program's f32 values
 * over a calibration set, and the int8 scale and zero point of a range.
 *
 * dy_quant_calibrate runs the Program on the static executor over every
 * batch with an observer (dy_executor_run_observed) recording each f32
 * value's smallest and largest element, feeds included. For percentile and
 * mse a second run fills a DY_QUANT_HIST_BINS-bin histogram of each value over the
 * first run's range, from which choose_ranges picks the range to quantize
 * (percentile: the two tails of (100 - P)% each; mse: both ends shrunk by
 * the one factor in [0.2, 1] whose rounding + clipping error over the
 * histogram is least). Non-finite elements are ignored.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant_internal.h"

typedef struct {
  const dy_program *p;
  const dy_quant_options *o;
  dy_quant_stats *st;
  int pass;                       /* 1: range, 2: histogram */
} calib_ctx;

/* TFLite's ChooseQuantizationParams for int8: a range holding 0. */
void dy_quant_choose_qparams(float lo, float hi, float *scale, int *zp) {
  double rmin = lo < 0 ? lo : 0, rmax = hi > 0 ? hi : 0;
  double s = (rmax - rmin) / 255.0;
  if (!(s > 1e-30) || !isfinite(s)) {
    *scale = 1.0f;
    *zp = 0;
    return;
  }
  *scale = (float)s;
  double z = -128.0 - rmin / (double)*scale;
  z = z < -128 ? -128 : z > 127 ? 127 : z;
  *zp = (int)lround(z);
}



static void stats_add(calib_ctx *c, int var, const dy_tensor *t) {
  if (t->type.dtype != DY_F32)
    return;
  dy_quant_stats *s = &c->st[var];
  const float *x = t->data;
  int64_t n = dy_type_numel(&t->type);
  if (c->pass == 1) {
    for (int64_t i = 0; i < n; i++) {
      if (!isfinite(x[i]))
        continue;
      if (!s->seen || x[i] < s->lo)
        s->lo = x[i];
      if (!s->seen || x[i] > s->hi)
        s->hi = x[i];
      s->seen = true;
    }
    return;
  }
  if (!s->hist)
    return;
  double w = (double)s->hhi - s->hlo;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i]))
      continue;
    int bin = w > 0 ? (int)(((double)x[i] - s->hlo) / w * DY_QUANT_HIST_BINS) : 0;
    bin = bin < 0 ? 0 : bin >= DY_QUANT_HIST_BINS ? DY_QUANT_HIST_BINS - 1 : bin;
    s->hist[bin] += 1;
  }
}

static dy_status observe_calib(void *ctx, int var, const dy_tensor *t, dy_error *err) {
  (void)err;
  stats_add(ctx, var, t);
  return DY_OK;
}

static dy_status calib_pass(calib_ctx *c, dy_tensor *const *calib, int n_batches, dy_error *err) {
  const dy_program *p = c->p;
  dy_status s = DY_OK;
  for (int b = 0; b < n_batches && !s; b++) {
    if (c->o->progress)
      c->o->progress(c->o->progress_ctx, c->pass == 1 ? "calibrate" : "histogram", b,
                     n_batches);
    dy_tensor *const *in = calib + (size_t)b * p->n_feeds;
    for (int i = 0; i < p->n_feeds; i++)
      stats_add(c, p->feeds[i], in[i]);
    dy_tensor *outs[DY_MAX_FEEDS] = {0};
    s = dy_executor_run_observed(p, in, p->n_feeds, outs, p->n_fetches, observe_calib, c, err);
    for (int i = 0; i < p->n_fetches; i++)
      dy_tensor_free(outs[i]);
    if (s)
      dy_error_prefix(err, "quantize: calibration batch %d", b);
  }
  return s;
}

/* The error of quantizing the histogram's values to 256 levels over
 * [lo, hi] (clipping outside it), sum of count x squared error. */
static double hist_mse(const dy_quant_stats *s, double lo, double hi) {
  float scale;
  int zp;
  dy_quant_choose_qparams((float)lo, (float)hi, &scale, &zp);
  double w = ((double)s->hhi - s->hlo) / DY_QUANT_HIST_BINS, e = 0;
  for (int i = 0; i < DY_QUANT_HIST_BINS; i++) {
    if (s->hist[i] == 0)
      continue;
    double v = s->hlo + (i + 0.5) * w;
    double q = nearbyint(v / scale) + zp;
    q = q < -128 ? -128 : q > 127 ? 127 : q;
    double d = v - (q - zp) * scale;
    e += s->hist[i] * d * d;
  }
  return e;
}

/* Set every seen var's quantization range from its statistics. */
static void choose_ranges(calib_ctx *c) {
  double pct = c->o->percentile > 0 ? c->o->percentile : 99.99;
  for (int v = 0; v < c->p->n_vars; v++) {
    dy_quant_stats *s = &c->st[v];
    s->qlo = s->lo;
    s->qhi = s->hi;
    if (!s->seen || !s->hist)
      continue;
    double total = 0;
    for (int i = 0; i < DY_QUANT_HIST_BINS; i++)
      total += s->hist[i];
    if (total <= 0)
      continue;
    double w = ((double)s->hhi - s->hlo) / DY_QUANT_HIST_BINS;
    if (c->o->method == DY_CALIB_PERCENTILE) {
      double below = total * (100.0 - pct) / 100.0, above = total * pct / 100.0, cum = 0;
      int lo_bin = 0, hi_bin = DY_QUANT_HIST_BINS - 1;
      for (int i = 0; i < DY_QUANT_HIST_BINS; i++) {
        if (cum <= below)
          lo_bin = i;
        cum += s->hist[i];
        if (cum >= above) {
          hi_bin = i;
          break;
        }
      }
      s->qlo = s->lo < 0 ? (float)(s->hlo + lo_bin * w) : s->lo;
      s->qhi = s->hi > 0 ? (float)(s->hlo + (hi_bin + 1) * w) : s->hi;
    } else { /* mse: shrink both ends by one factor */
      double best = hist_mse(s, s->lo, s->hi), best_a = 1;
      for (int k = 99; k >= 20; k--) {
        double a = k / 100.0, e = hist_mse(s, s->lo * a, s->hi * a);
        if (e < best) {
          best = e;
          best_a = a;
        }
      }
      s->qlo = (float)(s->lo * best_a);
      s->qhi = (float)(s->hi * best_a);
    }
  }
}

dy_status dy_quant_calibrate(const dy_program *p, dy_tensor *const *calib, int n_batches,
                             const dy_quant_options *o, dy_quant_stats *st, dy_error *err) {
  calib_ctx cc = {.p = p, .o = o, .st = st}, *c = &cc;
  c->pass = 1;
  dy_status s = calib_pass(c, calib, n_batches, err);
  if (s || c->o->method == DY_CALIB_MINMAX) {
    if (!s)
      choose_ranges(c);
    return s;
  }
  for (int v = 0; v < c->p->n_vars && !s; v++) {
    dy_quant_stats *sv = &c->st[v];
    if (!sv->seen)
      continue;
    sv->hlo = sv->lo;
    sv->hhi = sv->hi;
    if (!(sv->hist = calloc(DY_QUANT_HIST_BINS, sizeof *sv->hist)))
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  }
  c->pass = 2;
  if (!s)
    s = calib_pass(c, calib, n_batches, err);
  if (!s)
    choose_ranges(c);
  return s;
}

void dy_quant_stats_free(dy_quant_stats *st, int n) {
  for (int v = 0; v < n; v++) {
    free(st[v].hist);
    st[v].hist = NULL;
  }
}
