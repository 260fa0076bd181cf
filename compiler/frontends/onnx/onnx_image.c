/* onnx_image.c - ONNX's image ops onto the op table: DepthToSpace,
 * SpaceToDepth, Resize, Upsample, GridSample, RoiAlign (the last two onto
 * the extra family's grid_sample and roi_align).
 *
 *   DepthToSpace  a reshape, a transpose and a reshape (DCR and CRD)
 *   Resize        per axis, a gather of constant source indices (nearest),
 *                 or of 2 / 4 neighbours with constant weights (linear /
 *                 cubic), the coordinate transform evaluated here, so the
 *                 scales or sizes must be constants
 * Attribute lists with defaults are quoted above each mapper.
 */
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* DepthToSpace, SpaceToDepth                                          */
/* ------------------------------------------------------------------ */

/* DepthToSpace(input) attributes: blocksize, mode ("DCR"). */
static dy_status map_depth_to_space(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "blocksize mode"));
  TRY(ox_need_in(c, 0, &x));
  char mode[8];
  ox_attr_s(c, "mode", "DCR", mode, sizeof mode);
  int64_t b = ox_attr_i(c, "blocksize", 0);
  const int64_t *s = x->type.shape;
  if (x->type.rank != 4 || b < 1 || s[1] < 0 || s[1] % (b * b))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs [N, C, H, W] with C divisible by "
                   "blocksize^2");
  int64_t C = s[1] / (b * b);
  bool dcr = strcmp(mode, "DCR") == 0;
  if (!dcr && strcmp(mode, "CRD"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "mode '%s'", mode);
  ox_value *v = dcr ? ox_reshape(c, x, 6, (int64_t[]){0, b, b, C, s[2], s[3]})
                    : ox_reshape(c, x, 6, (int64_t[]){0, C, b, b, s[2], s[3]});
  v = dcr ? ox_transpose(c, v, 6, (int64_t[]){0, 3, 4, 1, 5, 2})
          : ox_transpose(c, v, 6, (int64_t[]){0, 1, 4, 2, 5, 3});
  OUT(0, ox_reshape(c, v, 4, (int64_t[]){0, C, s[2] * b, s[3] * b}));
}

/* SpaceToDepth(input) attributes: blocksize. */
static dy_status map_space_to_depth(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "blocksize"));
  TRY(ox_need_in(c, 0, &x));
  int64_t b = ox_attr_i(c, "blocksize", 0);
  const int64_t *s = x->type.shape;
  if (x->type.rank != 4 || b < 1 || s[2] < 0 || s[3] < 0 || s[2] % b || s[3] % b)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs [N, C, H, W] with H, W divisible by "
                   "blocksize");
  ox_value *v = ox_reshape(c, x, 6, (int64_t[]){0, s[1], s[2] / b, b, s[3] / b, b});
  v = ox_transpose(c, v, 6, (int64_t[]){0, 3, 5, 1, 2, 4});
  OUT(0, ox_reshape(c, v, 4, (int64_t[]){0, s[1] * b * b, s[2] / b, s[3] / b}));
}

/* ------------------------------------------------------------------ */
/* Resize, Upsample                                                    */
/* ------------------------------------------------------------------ */

typedef struct {
  char coord[32], mode[16], nearest[32];
  float cubic_a;
  bool exclude_outside;
} resize_opts;

/* The source coordinate of output index o along an axis. The output
 * length is in * scale unrounded, as the ONNX reference computes it. */
static double src_coord(const resize_opts *ro, int64_t o, int64_t in, double scale) {
  const char *m = ro->coord;
  double out = (double)in * scale;
  if (strcmp(m, "align_corners") == 0)
    return out == 1 ? 0.0 : (double)o * (double)(in - 1) / (out - 1);
  if (strcmp(m, "asymmetric") == 0)
    return (double)o / scale;
  if (strcmp(m, "tf_half_pixel_for_nn") == 0)
    return ((double)o + 0.5) / scale;
  if (strcmp(m, "pytorch_half_pixel") == 0)
    return out > 1 ? ((double)o + 0.5) / scale - 0.5 : 0.0;
  return ((double)o + 0.5) / scale - 0.5; /* half_pixel */
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static int64_t nearest_index(const resize_opts *ro, double x) {
  const char *m = ro->nearest;
  double f = floor(x);
  if (strcmp(m, "floor") == 0)
    return (int64_t)f;
  if (strcmp(m, "ceil") == 0)
    return (int64_t)ceil(x);
  if (x - f == 0.5)
    return (int64_t)(strcmp(m, "round_prefer_ceil") == 0 ? f + 1 : f);
  return (int64_t)floor(x + 0.5);
}

/* Cubic convolution weights for the 4 neighbours floor(x)-1 .. floor(x)+2. */
static void cubic_weights(double t, double a, double w[4]) {
  double x[4] = {t + 1, t, 1 - t, 2 - t};
  for (int i = 0; i < 4; i++) {
    double d = x[i];
    w[i] = d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1
                  : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  }
}

/* Resample v along axis from `in` to `out` elements. */
static ox_value *resize_axis(ox_ctx *c, ox_value *v, int axis, int64_t in, int64_t out,
                             double scale, const resize_opts *ro) {
  if (!v)
    return NULL;
  int r = v->type.rank;
  bool nearest = strcmp(ro->mode, "nearest") == 0;
  int taps = nearest ? 1 : strcmp(ro->mode, "linear") == 0 ? 2 : 4;
  ox_value *idx[4], *wt[4];
  int64_t wshape[DY_MAX_DIMS];
  for (int i = 0; i < r; i++)
    wshape[i] = i == axis ? out : 1;
  for (int k = 0; k < taps; k++) {
    idx[k] = ox_new_const(c, DY_I64, 1, &out, NULL);
    wt[k] = ox_new_const(c, DY_F32, r, wshape, NULL);
    if (!idx[k] || !wt[k])
      return NULL;
  }
  for (int64_t o = 0; o < out; o++) {
    double x = src_coord(ro, o, in, scale);
    if (nearest) {
      ((int64_t *)idx[0]->c->data)[o] = clamp64(nearest_index(ro, x), 0, in - 1);
      ((float *)wt[0]->c->data)[o] = 1;
      continue;
    }
    if (taps == 2) {
      if (x < 0)
        x = 0;
      if (x > (double)(in - 1))
        x = (double)(in - 1);
    }
    double f = floor(x), t = x - f, w[4];
    if (taps == 2) {
      w[0] = 1 - t;
      w[1] = t;
    } else {
      cubic_weights(t, ro->cubic_a, w);
    }
    double sum = 0;
    for (int k = 0; k < taps; k++) {
      int64_t j = (int64_t)f + k - (taps == 4 ? 1 : 0);
      if (ro->exclude_outside && (j < 0 || j >= in))
        w[k] = 0;
      sum += w[k];
      ((int64_t *)idx[k]->c->data)[o] = clamp64(j, 0, in - 1);
    }
    for (int k = 0; k < taps; k++)
      ((float *)wt[k]->c->data)[o] = (float)(ro->exclude_outside && sum != 0 ? w[k] / sum : w[k]);
  }
  ox_value *acc = NULL;
  for (int k = 0; k < taps; k++) {
    dy_attr a[DY_GATHER_NATTRS];
    int n_a = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = axis}, a);
    ox_value *in2[2] = {v, idx[k]};
    ox_value *g = ox_op(c, "gather", in2, 2, a, n_a);
    if (!nearest)
      g = ox_binary(c, "mul", g, wt[k]);
    acc = acc ? ox_binary(c, "add", acc, g) : g;
  }
  return acc;
}

static dy_status resize_common(ox_ctx *c, ox_value *x, const float *scales,
                               const int64_t *sizes, const resize_opts *ro) {
  int r = x->type.rank;
  if (strcmp(ro->mode, "nearest") && strcmp(ro->mode, "linear") && strcmp(ro->mode, "cubic"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "mode '%s'", ro->mode);
  if (strcmp(ro->coord, "tf_crop_and_resize") == 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "coordinate_transformation_mode tf_crop_and_resize");
  if (strcmp(ro->mode, "nearest") && x->type.dtype != DY_F32)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "linear/cubic resize of a non-float tensor");
  ox_value *v = x;
  for (int i = 0; i < r; i++) {
    int64_t in = x->type.shape[i];
    int64_t out = sizes ? sizes[i] : (int64_t)floor((double)in * scales[i]);
    double scale = sizes ? (double)out / (double)in : scales[i];
    if (in < 0) {
      if (out != in && !(scales && scales[i] == 1.0f))
        return ox_fail(c, DY_STATUS_UNSUPPORTED, "resizing the dynamic batch dim");
      continue;
    }
    if (out < 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "output extent %lld", (long long)out);
    if (out == in && scale == 1.0)
      continue;
    v = resize_axis(c, v, i, in, out, scale, ro);
  }
  if (v == x) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    v = ox_reshape(c, x, r, zeros);
  }
  OUT(0, v);
}

/* Resize(X, roi, scales, sizes) attributes: coordinate_transformation_mode
 * ("half_pixel"; opset 10: asymmetric), cubic_coeff_a (-0.75),
 * exclude_outside (0), extrapolation_value (0), mode ("nearest"),
 * nearest_mode ("round_prefer_floor"). Opset 10: Resize(X, scales). */
static dy_status map_resize(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "coordinate_transformation_mode cubic_coeff_a exclude_outside "
                        "extrapolation_value mode nearest_mode"));
  TRY(ox_need_in(c, 0, &x));
  resize_opts ro;
  ox_attr_s(c, "coordinate_transformation_mode", c->opset < 11 ? "asymmetric" : "half_pixel",
            ro.coord, sizeof ro.coord);
  ox_attr_s(c, "mode", "nearest", ro.mode, sizeof ro.mode);
  ox_attr_s(c, "nearest_mode", c->opset < 11 ? "floor" : "round_prefer_floor", ro.nearest,
            sizeof ro.nearest);
  if (c->opset < 11)
    snprintf(ro.nearest, sizeof ro.nearest, "floor");
  ro.cubic_a = ox_attr_f(c, "cubic_coeff_a", -0.75f);
  ro.exclude_outside = ox_attr_i(c, "exclude_outside", 0) != 0;
  int r = x->type.rank;
  ox_value *sv = ox_in(c, c->opset < 11 ? 1 : 2), *zv = c->opset < 11 ? NULL : ox_in(c, 3);
  const float *scales = NULL;
  const int64_t *sizes = NULL;
  int64_t n = 0;
  if (sv && dy_type_numel(&sv->type) > 0) {
    TRY(ox_get_floats(c, sv, "Resize's scales", &scales, &n));
  } else if (zv) {
    TRY(ox_get_ints(c, zv, "Resize's sizes", false, &sizes, &n));
  } else {
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "neither scales nor sizes");
  }
  if (n != r)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%lld scales/sizes for rank %d",
                   (long long)n, r);
  return resize_common(c, x, scales, sizes, &ro);
}

/* Upsample(X, scales) (opset 7..9; scales an attribute before 9)
 * attributes: mode ("nearest"). Coordinates are "asymmetric", nearest
 * rounds down. */
static dy_status map_upsample(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 9 ? "mode scales" : "mode"));
  TRY(ox_need_in(c, 0, &x));
  resize_opts ro = {.coord = "asymmetric", .nearest = "floor"};
  ox_attr_s(c, "mode", "nearest", ro.mode, sizeof ro.mode);
  const float *scales;
  int64_t n;
  if (c->opset < 9) {
    int k;
    scales = ox_attr_floats(c, "scales", &k);
    n = k;
  } else {
    ox_value *sv;
    TRY(ox_need_in(c, 1, &sv));
    TRY(ox_get_floats(c, sv, "Upsample's scales", &scales, &n));
  }
  if (!scales || n != x->type.rank)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "scales must have one entry per dim");
  return resize_common(c, x, scales, NULL, &ro);
}


/* ------------------------------------------------------------------ */
/* GridSample, RoiAlign                                                */
/* ------------------------------------------------------------------ */

/* GridSample(X, grid) attributes: align_corners (0), mode ("bilinear"),
 * padding_mode ("zeros"). 4-D: onto grid_sample. */
static dy_status map_grid_sample(ox_ctx *c) {
  ox_value *x, *g;
  TRY(ox_check_attrs(c, "align_corners mode padding_mode"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &g));
  char mode[16], pad[16];
  ox_attr_s(c, "mode", "bilinear", mode, sizeof mode);
  ox_attr_s(c, "padding_mode", "zeros", pad, sizeof pad);
  if (strcmp(mode, "linear") == 0) /* opset 20's names */
    snprintf(mode, sizeof mode, "bilinear");
  else if (strcmp(mode, "cubic") == 0)
    snprintf(mode, sizeof mode, "bicubic");
  if (x->type.rank != 4)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a %d-D input (2-D images only)", x->type.rank - 2);
  ox_value *in[2] = {x, g};
  dy_attr a[DY_GRID_SAMPLE_NATTRS];
  int n_a = dy_grid_sample_attrs_put(&(dy_grid_sample_attrs){
      .given = DY_GIVEN_ALL, .mode = mode, .padding_mode = pad,
      .align_corners = ox_attr_i(c, "align_corners", 0) != 0}, a);
  OUT(0, ox_op(c, "grid_sample", in, 2, a, n_a));
}

/* RoiAlign(X, rois, batch_indices) attributes:
 * coordinate_transformation_mode ("half_pixel"; opset 10 has none and
 * behaves as "output_half_pixel"), mode ("avg"), output_height (1),
 * output_width (1), sampling_ratio (0), spatial_scale (1.0). */
static dy_status map_roi_align(ox_ctx *c) {
  ox_value *x, *rois, *bi;
  TRY(ox_check_attrs(c, c->opset < 16 ? "mode output_height output_width sampling_ratio "
                                        "spatial_scale"
                                      : "coordinate_transformation_mode mode output_height "
                                        "output_width sampling_ratio spatial_scale"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &rois));
  TRY(ox_need_in(c, 2, &bi));
  char ctm[32], mode[8];
  ox_attr_s(c, "coordinate_transformation_mode",
            c->opset < 16 ? "output_half_pixel" : "half_pixel", ctm, sizeof ctm);
  ox_attr_s(c, "mode", "avg", mode, sizeof mode);
  if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "coordinate_transformation_mode '%s'", ctm);
  ox_value *in[3] = {x, rois, bi};
  dy_attr a[DY_ROI_ALIGN_NATTRS];
  int n_a = dy_roi_align_attrs_put(&(dy_roi_align_attrs){
      .given = DY_GIVEN_ALL, .mode = mode, .output_height = ox_attr_i(c, "output_height", 1),
      .output_width = ox_attr_i(c, "output_width", 1),
      .sampling_ratio = ox_attr_i(c, "sampling_ratio", 0),
      .spatial_scale = ox_attr_f(c, "spatial_scale", 1.0f),
      .half_pixel = strcmp(ctm, "half_pixel") == 0}, a);
  OUT(0, ox_op(c, "roi_align", in, 3, a, n_a));
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_image[] = {
    {"DepthToSpace", map_depth_to_space},
    {"SpaceToDepth", map_space_to_depth},
    {"Resize", map_resize},
    {"Upsample", map_upsample},
    {"GridSample", map_grid_sample},
    {"RoiAlign", map_roi_align},
    {NULL, NULL},
};
