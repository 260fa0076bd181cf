/* op_cases_nn.c - op table cases for the nn family (ir/ops_nn.def):
 * conv2d, conv2d_transpose, pool2d, batch_norm, layer_norm, group_norm,
 * dropout, and the gradient ops conv2d_grad_filter and pool2d_grad.
 *
 * Shapes are chosen to break naive code: odd sizes (7, 13), size-1 dims,
 * non-square kernels (3x1, 1x5), strides larger than the kernel, padding of
 * half the kernel or more, asymmetric padding, dilation 2, groups 2 and
 * groups == channels, the dynamic batch with weights as constants. Each op
 * has cases with hand-computed values (small inputs given as .data; the
 * dropout masks come from the hash documented in runtime/kernels/kernels_nn.c,
 * evaluated independently), and bad inputs that inference must reject.
 *
 * Tolerance is the default 1e-5 relative unless a case says why not.
 */
#include "op_table.h"

/* conv2d attributes: strides, paddings [top, left, bottom, right],
 * dilations, groups */
#define CONV(sh, sw, pt, pl, pb, pr, dh, dw, g)                                 \
  .n_attrs = 4,                                                                 \
  .attrs = {DY_ATTR_IS("strides", DY_SHAPE(sh, sw), 2),                         \
            DY_ATTR_IS("paddings", DY_SHAPE(pt, pl, pb, pr), 4),                \
            DY_ATTR_IS("dilations", DY_SHAPE(dh, dw), 2), DY_ATTR_I("groups", g)}
/* conv2d_transpose: the same plus output_padding */
#define CONVT(sh, sw, pt, pl, pb, pr, dh, dw, g, oph, opw)                      \
  .n_attrs = 5,                                                                 \
  .attrs = {DY_ATTR_IS("strides", DY_SHAPE(sh, sw), 2),                         \
            DY_ATTR_IS("paddings", DY_SHAPE(pt, pl, pb, pr), 4),                \
            DY_ATTR_IS("dilations", DY_SHAPE(dh, dw), 2), DY_ATTR_I("groups", g), \
            DY_ATTR_IS("output_padding", DY_SHAPE(oph, opw), 2)}
/* conv2d_grad_filter: conv2d's attributes and the filter's ksize */
#define GF(sh, sw, pt, pl, pb, pr, dh, dw, g, kh, kw)                           \
  .n_attrs = 5,                                                                 \
  .attrs = {DY_ATTR_IS("strides", DY_SHAPE(sh, sw), 2),                         \
            DY_ATTR_IS("paddings", DY_SHAPE(pt, pl, pb, pr), 4),                \
            DY_ATTR_IS("dilations", DY_SHAPE(dh, dw), 2), DY_ATTR_I("groups", g), \
            DY_ATTR_IS("ksize", DY_SHAPE(kh, kw), 2)}
/* pool2d (and pool2d_grad): type, ksize, strides, paddings, ceil_mode, exclusive,
 * global_pooling, adaptive */
#define POOL(type, kh, kw, sh, sw, pt, pl, pb, pr, ceil, excl, global, adaptive) \
  .n_attrs = 8,                                                                  \
  .attrs = {DY_ATTR_S("pooling_type", type), DY_ATTR_IS("ksize", DY_SHAPE(kh, kw), 2), \
            DY_ATTR_IS("strides", DY_SHAPE(sh, sw), 2),                          \
            DY_ATTR_IS("paddings", DY_SHAPE(pt, pl, pb, pr), 4),                 \
            DY_ATTR_I("ceil_mode", ceil), DY_ATTR_I("exclusive", excl),          \
            DY_ATTR_I("global_pooling", global), DY_ATTR_I("adaptive", adaptive)}
#define MAXPOOL(kh, kw, sh, sw, pt, pl, pb, pr, ceil) \
  POOL("max", kh, kw, sh, sw, pt, pl, pb, pr, ceil, 1, 0, 0)
#define AVGPOOL(kh, kw, sh, sw, pt, pl, pb, pr, ceil, excl) \
  POOL("avg", kh, kw, sh, sw, pt, pl, pb, pr, ceil, excl, 0, 0)
#define ADAPTIVE(type, oh, ow) POOL(type, oh, ow, 1, 1, 0, 0, 0, 0, 0, 1, 0, 1)
#define GLOBAL(type) POOL(type, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0)
#define BN(eps, is_test)                                                      \
  .n_attrs = 3, .attrs = {DY_ATTR_F("epsilon", eps), DY_ATTR_F("momentum", 0.9), \
                          DY_ATTR_I("is_test", is_test)}
#define LN(axis, eps) \
  .n_attrs = 2, .attrs = {DY_ATTR_I("begin_norm_axis", axis), DY_ATTR_F("epsilon", eps)}
#define GN(groups, eps) \
  .n_attrs = 2, .attrs = {DY_ATTR_I("groups", groups), DY_ATTR_F("epsilon", eps)}
#define DROPOUT(p, is_test, seed)                                      \
  .n_attrs = 3, .attrs = {DY_ATTR_F("p", p), DY_ATTR_I("is_test", is_test), \
                          DY_ATTR_I("seed", seed)}
#define BY_HAND(x) .expect = (x), .n_expect = (int)(sizeof(x) / sizeof((x)[0]))

/* ---- hand-computed values ---- */

static const float x3x3[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const float w1234[] = {1, 2, 3, 4};
static const float ones4[] = {1, 1, 1, 1};
/* 2x2 kernel over 1..9 padded with a row on top and a column on the
 * right: out[0][0] = 3*1 + 4*2, out[1][1] = 1*5 + 2*6 + 3*8 + 4*9, ... */
static const float conv_pad_expect[] = {11, 18, 9, 37, 47, 21, 67, 77, 33};
/* dilation 2: the four corners, 1 + 3 + 7 + 9 */
static const float conv_dil_expect[] = {20};
/* groups == channels: channel 0 times 2, channel 1 times -1 */
static const float x2ch[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const float w_dw[] = {2, -1};
static const float conv_dw_expect[] = {2, 4, 6, 8, -5, -6, -7, -8};
/* groups 2 with 2 channels per group and a 1x1 kernel: y0 = x0 + x1,
 * y1 = x0 - x1 (group 0), y2 = 2*x2, y3 = x3 - x2 (group 1); small values
 * (test_grad's finite differences read the loss as a float) */
static const float x4ch[] = {1, 2, 3, 5, -2, 4, 6, -1};
static const float w_g2[] = {1, 1, 1, -1, 2, 0, -1, 1};
static const float conv_g2_expect[] = {4, 7, -2, -3, -4, 8, 8, -5};

/* transposed: each input pixel stamps the kernel scaled by itself */
static const float convt_s2_expect[] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
static const float convt_s1_expect[] = {1, 3, 2, 4, 10, 6, 3, 7, 4};
/* stride 2 of kernel 1,2,3,4 gives [[1,2,2,4],[3,4,6,8],[3,6,4,8],[9,12,12,16]];
 * padding [1,1,0,0] cuts the top row and left column, output_padding
 * [1,1] adds an untouched bottom row and right column */
static const float convt_pad_expect[] = {4, 6, 8, 0, 6, 4, 8, 0, 12, 12, 16, 0, 0, 0, 0, 0};

/* conv2d_grad_filter: dw[i][j] = sum of dy[oy][ox] * x[oy + i][ox + j];
 * with dy = 1,2,3,4 over 1..9: 1*1 + 2*2 + 3*4 + 4*5 = 37, ... With pads
 * [1,0,0,1] and dy all ones, tap (0, 0) sees rows 0-1, all columns: 21. */
static const float gf_expect[] = {37, 47, 67, 77};
static const float ones9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float gf_pad_expect[] = {21, 16, 45, 33};

static const float x4x4[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const float max2_expect[] = {6, 8, 14, 16};
static const float avg2_expect[] = {3.5f, 5.5f, 11.5f, 13.5f};
/* 3x3, stride 1, padding 1: the top-left window holds 1, 2, 5, 6 */
static const float avg3_excl_expect[] = {3.5f, 4,  5,  5.5f, 5.5f,  6,  7,  7.5f,
                                         9.5f, 10, 11, 11.5f, 11.5f, 12, 13, 13.5f};
static const float avg3_incl_expect[] = {
    14 / 9.0f, 24 / 9.0f, 30 / 9.0f, 22 / 9.0f, 33 / 9.0f, 54 / 9.0f, 63 / 9.0f, 45 / 9.0f,
    57 / 9.0f, 90 / 9.0f, 99 / 9.0f, 69 / 9.0f, 46 / 9.0f, 72 / 9.0f, 78 / 9.0f, 54 / 9.0f};
static const float x5x5[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                             14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
/* 2x2 stride 2 with ceil_mode over 5x5: the last row and column of windows
 * hang over the edge and hold 2 (or 1) elements */
static const float max_ceil_expect[] = {7, 9, 10, 17, 19, 20, 22, 24, 25};
/* the same as avg counting padding: the clipped windows divide by their
 * clipped size (ONNX), (5 + 10) / 2, 25 / 1 */
static const float avg_ceil_expect[] = {4, 6, 7.5f, 14, 16, 17.5f, 21.5f, 23.5f, 25};
/* adaptive 3x2 over 5 rows x 4 columns: rows [0,2) [1,4) [3,5), columns
 * [0,2) [2,4) */
static const float x5x4[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                             11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
static const float adaptive_avg_expect[] = {3.5f, 5.5f, 9.5f, 11.5f, 15.5f, 17.5f};
static const float adaptive_max_expect[] = {6, 8, 14, 16, 18, 20};
static const float global_avg_expect[] = {10.5f};
static const float global_max_expect[] = {20};

/* pool2d_grad over x4x4 2x2 stride 2 with dy 1,2,3,4: max sends each to
 * its window's maximum (6, 8, 14, 16), avg spreads dy / 4; over a window
 * of ties max picks the first */
static const float max2_grad_expect[] = {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4};
static const float avg2_grad_expect[] = {0.25f, 0.25f, 0.5f, 0.5f, 0.25f, 0.25f, 0.5f, 0.5f,
                                         0.75f, 0.75f, 1,    1,    0.75f, 0.75f, 1,    1};
static const float five[] = {5};
static const float max_tie_grad_expect[] = {5, 0, 0, 0};

/* batch_norm, is_test: (x - mean) / sqrt(var + 0) * scale + bias */
static const float bn_x[] = {1, 2, 3, 4};
static const float bn_scale[] = {1, 2}, bn_bias[] = {0, 1};
static const float bn_mean[] = {1, 3}, bn_var[] = {4, 1};
static const float bn_test_expect[] = {0, 0.5f, 1, 3};
/* batch_norm, training, x [2,2,1,2]: channel 0 holds 1,3,1,3 (mean 2,
 * variance 1), channel 1 holds 2,6,6,2 (mean 4, variance 4); eps 0 */
static const float bn_train_x[] = {1, 3, 2, 6, 1, 3, 6, 2};
static const float bn_train_expect[] = {-1, 1, -1, 3, -1, 1, 3, -1};
/* layer_norm, eps 2.75: row 1,2,3,4 has mean 2.5 and variance 1.25, so
 * 1/sqrt(1.25 + 2.75) = 0.5; a constant row gives the bias */
static const float ln_x[] = {1, 2, 3, 4, 2, 2, 2, 2};
static const float ln_scale[] = {1, 2, 1, 2}, ln_bias[] = {0, 0, 1, 1};
static const float ln_expect[] = {-0.75f, -0.5f, 1.25f, 2.5f, 0, 0, 1, 1};
/* group_norm, 2 groups, eps 0.75: {1,2} and {3,4} have variance 0.25 */
static const float gn_x[] = {1, 2, 3, 4};
static const float gn_scale[] = {1, 2, 3, 4}, gn_bias[] = {0, 0, 0, 1};
static const float gn_expect[] = {-0.5f, 1, -1.5f, 3};
/* dropout */
static const float drop_x[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const float drop_p25_expect[] = {1.33333337f, 2.66666675f, 4, 0,
                                        6.66666698f, 8, 0, 10.666667f};
static const float ones12[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float drop_p50_expect[] = {0, 2, 0, 0, 2, 2, 0, 2, 2, 2, 2, 0};
static const float zeros8[] = {0, 0, 0, 0, 0, 0, 0, 0};

static const dy_op_case cases[] = {
    /* ---------------- conv2d ---------------- */
    {.label = "conv2d 2x2 asymmetric pads [1,0,0,1] by hand", .kind = DY_OP_CONV2D,
     .n_in = 2, .in = {F32(4, 1, 1, 3, 3), F32(4, 1, 1, 2, 2)}, CONV(1, 1, 1, 0, 0, 1, 1, 1, 1),
     .data = {x3x3, w1234}, BY_HAND(conv_pad_expect)},
    {.label = "conv2d dilation 2 by hand", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 1, 3, 3), F32(4, 1, 1, 2, 2)}, CONV(1, 1, 0, 0, 0, 0, 2, 2, 1),
     .data = {x3x3, ones4}, BY_HAND(conv_dil_expect)},
    {.label = "conv2d depthwise by hand", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 2, 2, 2), F32(4, 2, 1, 1, 1)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 2),
     .data = {x2ch, w_dw}, BY_HAND(conv_dw_expect)},
    {.label = "conv2d groups 2 1x1 by hand", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 4, 1, 2), F32(4, 4, 2, 1, 1)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 2),
     .data = {x4ch, w_g2}, BY_HAND(conv_g2_expect)},
    {.label = "conv2d [B,3,7,7] 3x3 pad 1, weight const", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, -1, 3, 7, 7), F32(4, 5, 3, 3, 3)}, .consts = 1u << 1,
     CONV(1, 1, 1, 1, 1, 1, 1, 1, 1)},
    {.label = "conv2d 13x13 kernel 3x1 stride 2", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 2, 2, 13, 13), F32(4, 4, 2, 3, 1)}, CONV(2, 2, 0, 0, 0, 0, 1, 1, 1)},
    {.label = "conv2d kernel 1x5 asymmetric pads [0,2,1,3]", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 3, 7, 9), F32(4, 2, 3, 1, 5)}, CONV(1, 1, 0, 2, 1, 3, 1, 1, 1)},
    {.label = "conv2d stride 3 > kernel 2", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, -1, 2, 7, 7), F32(4, 3, 2, 2, 2)}, .consts = 1u << 1, .batch = 3,
     CONV(3, 3, 0, 0, 0, 0, 1, 1, 1)},
    {.label = "conv2d pad 2 on a 3x3 kernel (output grows)", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 2, 5, 5), F32(4, 3, 2, 3, 3)}, CONV(1, 1, 2, 2, 2, 2, 1, 1, 1)},
    {.label = "conv2d dilation 2 pad 2 stride [2,1]", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 2, 3, 9, 8), F32(4, 4, 3, 3, 3)}, CONV(2, 1, 2, 2, 2, 2, 2, 2, 1)},
    {.label = "conv2d groups 2 [B,4,6,5] pad 1", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, -1, 4, 6, 5), F32(4, 6, 2, 3, 3)}, .consts = 1u << 1,
     CONV(1, 1, 1, 1, 1, 1, 1, 1, 2)},
    {.label = "conv2d depthwise [B,8,7,7] stride 2 pad 1", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, -1, 8, 7, 7), F32(4, 8, 1, 3, 3)}, .consts = 1u << 1,
     CONV(2, 2, 1, 1, 1, 1, 1, 1, 8)},
    {.label = "conv2d depthwise multiplier 2, asymmetric pad", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 3, 5, 5), F32(4, 6, 1, 3, 3)}, CONV(1, 1, 0, 1, 2, 0, 1, 1, 3)},
    {.label = "conv2d 1x1 [B,5,4,3] (no im2col)", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, -1, 5, 4, 3), F32(4, 7, 5, 1, 1)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 1)},
    {.label = "conv2d 1x1 stride 2 pad bottom/right", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 3, 5, 4), F32(4, 2, 3, 1, 1)}, CONV(2, 2, 0, 0, 1, 1, 1, 1, 1)},
    {.label = "conv2d size-1 plane [1,4,1,1]", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 4, 1, 1), F32(4, 3, 4, 1, 1)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 1)},
    {.label = "conv2d kernel as large as the input", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, -1, 2, 5, 3), F32(4, 3, 2, 5, 3)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 1)},
    {.label = "conv2d channels 6 groups 4 rejected", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 6, 5, 5), F32(4, 4, 1, 3, 3)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 4),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d output channels 3 groups 2 rejected", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 4, 5, 5), F32(4, 3, 2, 3, 3)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 2),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d filter channels mismatch rejected", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 4, 5, 5), F32(4, 2, 3, 3, 3)}, CONV(1, 1, 0, 0, 0, 0, 1, 1, 1),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d dilated kernel larger than padded input", .kind = DY_OP_CONV2D,
     .n_in = 2, .in = {F32(4, 1, 1, 4, 4), F32(4, 1, 1, 3, 3)}, CONV(1, 1, 0, 0, 0, 0, 2, 2, 1),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d stride 0 rejected", .kind = DY_OP_CONV2D, .n_in = 2,
     .in = {F32(4, 1, 1, 4, 4), F32(4, 1, 1, 3, 3)}, CONV(0, 1, 0, 0, 0, 0, 1, 1, 1),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---------------- conv2d_transpose ---------------- */
    {.label = "conv2d_transpose stride 2 by hand", .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2,
     .in = {F32(4, 1, 1, 2, 2), F32(4, 1, 1, 2, 2)}, CONVT(2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0),
     .data = {w1234, ones4}, BY_HAND(convt_s2_expect)},
    {.label = "conv2d_transpose stride 1 by hand", .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2,
     .in = {F32(4, 1, 1, 2, 2), F32(4, 1, 1, 2, 2)}, CONVT(1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0),
     .data = {w1234, ones4}, BY_HAND(convt_s1_expect)},
    {.label = "conv2d_transpose pads [1,1,0,0] output_padding 1 by hand",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, 1, 1, 2, 2), F32(4, 1, 1, 2, 2)},
     CONVT(2, 2, 1, 1, 0, 0, 1, 1, 1, 1, 1), .data = {w1234, w1234}, BY_HAND(convt_pad_expect)},
    {.label = "conv2d_transpose stride 2 output_padding 1 groups 2 [B,4,5,5]",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, -1, 4, 5, 5), F32(4, 4, 3, 3, 3)},
     .consts = 1u << 1, CONVT(2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1)},
    {.label = "conv2d_transpose dilation 2 asymmetric pads", .kind = DY_OP_CONV2D_TRANSPOSE,
     .n_in = 2, .in = {F32(4, 1, 2, 4, 3), F32(4, 2, 3, 3, 2)},
     CONVT(1, 1, 1, 0, 2, 1, 2, 2, 1, 1, 0)},
    {.label = "conv2d_transpose stride 3 > kernel 2 (gaps)", .kind = DY_OP_CONV2D_TRANSPOSE,
     .n_in = 2, .in = {F32(4, 2, 3, 3, 4), F32(4, 3, 2, 2, 2)},
     CONVT(3, 3, 0, 0, 0, 0, 1, 1, 1, 2, 0)},
    {.label = "conv2d_transpose depthwise [B,3,7,7] kernel 1x5 stride [1,2]",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, -1, 3, 7, 7), F32(4, 3, 1, 1, 5)},
     .consts = 1u << 1, CONVT(1, 2, 0, 2, 0, 2, 1, 1, 3, 0, 1)},
    {.label = "conv2d_transpose output_padding >= stride rejected",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, 1, 2, 4, 4), F32(4, 2, 2, 3, 3)},
     CONVT(2, 2, 0, 0, 0, 0, 1, 1, 1, 2, 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "conv2d_transpose channels 3 groups 2 rejected", .kind = DY_OP_CONV2D_TRANSPOSE,
     .n_in = 2, .in = {F32(4, 1, 3, 4, 4), F32(4, 3, 2, 3, 3)},
     CONVT(1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 0), .expect_error = DY_STATUS_SHAPE_MISMATCH},

    {.label = "conv2d groups 2 stride [2,3] dilation [2,1] pads [1,0,2,1] (leftovers)",
     .kind = DY_OP_CONV2D, .n_in = 2, .in = {F32(4, 1, 4, 9, 8), F32(4, 6, 2, 3, 2)},
     CONV(2, 3, 1, 0, 2, 1, 2, 1, 2)},
    {.label = "conv2d depthwise [B,3,8,7] stride 2 dilation 2 pads [2,1,0,2]",
     .kind = DY_OP_CONV2D, .n_in = 2, .in = {F32(4, -1, 3, 8, 7), F32(4, 3, 1, 2, 3)},
     CONV(2, 2, 2, 1, 0, 2, 2, 2, 3)},
    {.label = "conv2d_transpose output_padding 1 = stride, below dilation 2",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, 1, 2, 4, 4), F32(4, 2, 2, 3, 3)},
     CONVT(1, 1, 0, 1, 1, 0, 2, 2, 1, 1, 0)},
    {.label = "conv2d_transpose output_padding [1,1] = stride, no padding, dilation 2",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, 2, 2, 3, 4), F32(4, 2, 3, 2, 3)},
     CONVT(1, 1, 0, 0, 0, 0, 2, 2, 1, 1, 1)},
    {.label = "conv2d_transpose groups 3 [B,6,3,4] stride 2 pads [1,0,0,2] output_padding [1,0]",
     .kind = DY_OP_CONV2D_TRANSPOSE, .n_in = 2, .in = {F32(4, -1, 6, 3, 4), F32(4, 6, 2, 3, 3)},
     CONVT(2, 2, 1, 0, 0, 2, 1, 1, 3, 1, 0)},

    /* ---------------- conv2d_grad_filter ---------------- */
    {.label = "conv2d_grad_filter 2x2 over 1..9 by hand", .kind = DY_OP_CONV2D_GRAD_FILTER,
     .n_in = 2, .in = {F32(4, 1, 1, 3, 3), F32(4, 1, 1, 2, 2)}, GF(1, 1, 0, 0, 0, 0, 1, 1, 1, 2, 2),
     .data = {x3x3, w1234}, BY_HAND(gf_expect)},
    {.label = "conv2d_grad_filter pads [1,0,0,1] by hand", .kind = DY_OP_CONV2D_GRAD_FILTER,
     .n_in = 2, .in = {F32(4, 1, 1, 3, 3), F32(4, 1, 1, 3, 3)}, GF(1, 1, 1, 0, 0, 1, 1, 1, 1, 2, 2),
     .data = {x3x3, ones9}, BY_HAND(gf_pad_expect)},
    {.label = "conv2d_grad_filter [B,4,7,6] groups 2 stride 2 pads [1,0,2,1]",
     .kind = DY_OP_CONV2D_GRAD_FILTER, .n_in = 2, .in = {F32(4, -1, 4, 7, 6), F32(4, -1, 6, 4, 3)},
     GF(2, 2, 1, 0, 2, 1, 1, 1, 2, 3, 3), .batch = 3},
    {.label = "conv2d_grad_filter depthwise [B,3,8,7] dilation 2",
     .kind = DY_OP_CONV2D_GRAD_FILTER, .n_in = 2,
     .in = {F32(4, -1, 3, 8, 7), F32(4, -1, 3, 4, 3)}, GF(2, 2, 2, 1, 0, 2, 2, 2, 3, 2, 3)},
    {.label = "conv2d_grad_filter 1x5 kernel, dy plane smaller than the output",
     .kind = DY_OP_CONV2D_GRAD_FILTER, .n_in = 2, .in = {F32(4, 2, 3, 5, 9), F32(4, 2, 2, 4, 3)},
     GF(1, 2, 0, 2, 0, 2, 1, 1, 1, 1, 5)},
    {.label = "conv2d_grad_filter dy plane larger than the output rejected",
     .kind = DY_OP_CONV2D_GRAD_FILTER, .n_in = 2, .in = {F32(4, 1, 1, 3, 3), F32(4, 1, 1, 3, 3)},
     GF(1, 1, 0, 0, 0, 0, 1, 1, 1, 2, 2), .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d_grad_filter batches 2 and 3 rejected", .kind = DY_OP_CONV2D_GRAD_FILTER,
     .n_in = 2, .in = {F32(4, 2, 1, 3, 3), F32(4, 3, 1, 2, 2)}, GF(1, 1, 0, 0, 0, 0, 1, 1, 1, 2, 2),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d_grad_filter channels 3 groups 2 rejected", .kind = DY_OP_CONV2D_GRAD_FILTER,
     .n_in = 2, .in = {F32(4, 1, 3, 3, 3), F32(4, 1, 2, 2, 2)}, GF(1, 1, 0, 0, 0, 0, 1, 1, 2, 2, 2),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "conv2d_grad_filter ksize 0 rejected", .kind = DY_OP_CONV2D_GRAD_FILTER,
     .n_in = 2, .in = {F32(4, 1, 1, 3, 3), F32(4, 1, 1, 2, 2)}, GF(1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 2),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---------------- pool2d ---------------- */
    {.label = "pool2d max i8 3x3 stride 2 padded [B,3,7,7]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {I8(4, -1, 3, 7, 7)}, MAXPOOL(3, 3, 2, 2, 1, 1, 1, 1, 0)},
    {.label = "pool2d avg u8 2x2 exclusive, padded (ties at n = 2, 4)", .kind = DY_OP_POOL2D,
     .n_in = 1, .in = {U8(4, 1, 2, 5, 5)}, AVGPOOL(2, 2, 2, 2, 1, 1, 0, 0, 1, 1)},
    {.label = "pool2d avg i8 3x3 padding counted", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {I8(4, 2, 3, 6, 5)}, AVGPOOL(3, 3, 1, 1, 1, 1, 1, 1, 0, 0)},
    {.label = "pool2d avg i8 global", .kind = DY_OP_POOL2D, .n_in = 1, .in = {I8(4, -1, 4, 5, 3)},
     GLOBAL("avg")},
    {.label = "max pool 2x2 stride 2 by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 4, 4)}, MAXPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0), .data = {x4x4},
     BY_HAND(max2_expect)},
    {.label = "avg pool 2x2 stride 2 by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 4, 4)}, AVGPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0, 1), .data = {x4x4},
     BY_HAND(avg2_expect)},
    {.label = "avg pool 3x3 pad 1 exclusive by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 4, 4)}, AVGPOOL(3, 3, 1, 1, 1, 1, 1, 1, 0, 1), .data = {x4x4},
     BY_HAND(avg3_excl_expect)},
    {.label = "avg pool 3x3 pad 1 counting padding by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 4, 4)}, AVGPOOL(3, 3, 1, 1, 1, 1, 1, 1, 0, 0), .data = {x4x4},
     BY_HAND(avg3_incl_expect)},
    {.label = "max pool ceil_mode 5x5 by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 5, 5)}, MAXPOOL(2, 2, 2, 2, 0, 0, 0, 0, 1), .data = {x5x5},
     BY_HAND(max_ceil_expect)},
    {.label = "avg pool ceil_mode counting padding by hand (clipped divisor)",
     .kind = DY_OP_POOL2D, .n_in = 1, .in = {F32(4, 1, 1, 5, 5)},
     AVGPOOL(2, 2, 2, 2, 0, 0, 0, 0, 1, 0), .data = {x5x5}, BY_HAND(avg_ceil_expect)},
    {.label = "adaptive avg 5x4 -> 3x2 by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 5, 4)}, ADAPTIVE("avg", 3, 2), .data = {x5x4},
     BY_HAND(adaptive_avg_expect)},
    {.label = "adaptive max 5x4 -> 3x2 by hand", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 5, 4)}, ADAPTIVE("max", 3, 2), .data = {x5x4},
     BY_HAND(adaptive_max_expect)},
    {.label = "global avg by hand", .kind = DY_OP_POOL2D, .n_in = 1, .in = {F32(4, 1, 1, 5, 4)},
     GLOBAL("avg"), .data = {x5x4}, BY_HAND(global_avg_expect)},
    {.label = "global max by hand", .kind = DY_OP_POOL2D, .n_in = 1, .in = {F32(4, 1, 1, 5, 4)},
     GLOBAL("max"), .data = {x5x4}, BY_HAND(global_max_expect)},
    {.label = "max pool 3x3 s2 pad 1 ceil [B,3,13,13]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 3, 13, 13)}, MAXPOOL(3, 3, 2, 2, 1, 1, 1, 1, 1)},
    {.label = "max pool 3x3 s2 pad 1 floor [B,3,13,12]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 3, 13, 12)}, MAXPOOL(3, 3, 2, 2, 1, 1, 1, 1, 0)},
    /* rows wide enough for the padded max pool's vector loop (ResNet's
     * 3x3/2 pad 1 after the stem; stride 1; ceil-mode overhang) */
    {.label = "max pool 3x3 s2 pad 1 wide rows [B,2,9,41]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 2, 9, 41)}, MAXPOOL(3, 3, 2, 2, 1, 1, 1, 1, 0)},
    {.label = "max pool 3x3 s1 pad 1 wide rows", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 2, 5, 37)}, MAXPOOL(3, 3, 1, 1, 1, 1, 1, 1, 0)},
    {.label = "max pool 2x3 s2 pads [0,1,1,0] ceil wide rows", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 2, 6, 44)}, MAXPOOL(2, 3, 2, 2, 0, 1, 1, 0, 1)},
    {.label = "avg pool 3x3 s2 pads [1,0,1,1] ceil counting padding", .kind = DY_OP_POOL2D,
     .n_in = 1, .in = {F32(4, 2, 2, 7, 8)}, AVGPOOL(3, 3, 2, 2, 1, 0, 1, 1, 1, 0)},
    {.label = "avg pool 3x3 s2 pads [1,0,1,1] ceil exclusive", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 2, 2, 7, 8)}, AVGPOOL(3, 3, 2, 2, 1, 0, 1, 1, 1, 1)},
    {.label = "max pool 1x5 stride [1,3] pad [0,2,0,2]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 2, 3, 13)}, MAXPOOL(1, 5, 1, 3, 0, 2, 0, 2, 0)},
    {.label = "avg pool 2x2 stride 3 > kernel", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 2, 7, 7)}, AVGPOOL(2, 2, 3, 3, 0, 0, 0, 0, 0, 1)},
    {.label = "avg pool 3x1 pad [1,0,1,0] counting padding", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 3, 7, 1)}, AVGPOOL(3, 1, 1, 1, 1, 0, 1, 0, 0, 0)},
    {.label = "max pool negative inputs, window all padding but one",
     .kind = DY_OP_POOL2D, .n_in = 1, .in = {F32(4, 1, 2, 5, 5)},
     MAXPOOL(3, 3, 3, 3, 2, 2, 2, 2, 1), .lo = -9, .hi = -1},
    {.label = "adaptive avg [B,3,7,5] -> 3x2", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 3, 7, 5)}, ADAPTIVE("avg", 3, 2)},
    {.label = "adaptive avg -> 1x1", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 4, 6, 5)}, ADAPTIVE("avg", 1, 1)},
    {.label = "adaptive max 13x13 -> 3x3", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 2, 2, 13, 13)}, ADAPTIVE("max", 3, 3)},
    {.label = "adaptive avg 3x3 -> 5x4 (upsampling)", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 2, 3, 3)}, ADAPTIVE("avg", 5, 4)},
    {.label = "global max [B,4,7,7]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 4, 7, 7)}, GLOBAL("max")},
    {.label = "global avg [B,5,1,13]", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, -1, 5, 1, 13)}, GLOBAL("avg")},
    {.label = "pool window larger than padded input rejected", .kind = DY_OP_POOL2D,
     .n_in = 1, .in = {F32(4, 1, 1, 2, 2)}, MAXPOOL(5, 5, 1, 1, 1, 1, 1, 1, 0),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "pool padding as large as the window rejected", .kind = DY_OP_POOL2D,
     .n_in = 1, .in = {F32(4, 1, 1, 6, 6)}, AVGPOOL(2, 2, 1, 1, 2, 0, 0, 0, 0, 1),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "pool type 'sum' rejected", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(4, 1, 1, 6, 6)}, POOL("sum", 2, 2, 2, 2, 0, 0, 0, 0, 0, 1, 0, 0),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "pool of a 3-D input rejected", .kind = DY_OP_POOL2D, .n_in = 1,
     .in = {F32(3, 1, 6, 6)}, MAXPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---------------- pool2d_grad (x, y, dy) ---------------- */
    {.label = "pool2d_grad max 2x2 stride 2 by hand", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, 1, 1, 4, 4), F32(4, 1, 1, 2, 2), F32(4, 1, 1, 2, 2)},
     MAXPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0), .data = {x4x4, max2_expect, w1234},
     BY_HAND(max2_grad_expect)},
    {.label = "pool2d_grad avg 2x2 stride 2 by hand", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, 1, 1, 4, 4), F32(4, 1, 1, 2, 2), F32(4, 1, 1, 2, 2)},
     AVGPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0, 1), .data = {x4x4, avg2_expect, w1234},
     BY_HAND(avg2_grad_expect)},
    {.label = "pool2d_grad max over ties goes to the first, by hand", .kind = DY_OP_POOL2D_GRAD,
     .n_in = 3, .in = {F32(4, 1, 1, 2, 2), F32(4, 1, 1, 1, 1), F32(4, 1, 1, 1, 1)},
     MAXPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0), .data = {ones4, ones4, five},
     BY_HAND(max_tie_grad_expect)},
    {.label = "pool2d_grad max 3x3 s2 pad 1 ceil [B,3,13,13]", .kind = DY_OP_POOL2D_GRAD,
     .n_in = 3, .in = {F32(4, -1, 3, 13, 13), F32(4, -1, 3, 7, 7), F32(4, -1, 3, 7, 7)},
     MAXPOOL(3, 3, 2, 2, 1, 1, 1, 1, 1)},
    {.label = "pool2d_grad avg 3x3 s2 pads [1,0,1,1] ceil counting padding",
     .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, 2, 2, 7, 8), F32(4, 2, 2, 4, 4), F32(4, 2, 2, 4, 4)},
     AVGPOOL(3, 3, 2, 2, 1, 0, 1, 1, 1, 0)},
    {.label = "pool2d_grad avg 3x3 s2 pads [1,0,1,1] ceil exclusive", .kind = DY_OP_POOL2D_GRAD,
     .n_in = 3, .in = {F32(4, 2, 2, 7, 8), F32(4, 2, 2, 4, 4), F32(4, 2, 2, 4, 4)},
     AVGPOOL(3, 3, 2, 2, 1, 0, 1, 1, 1, 1)},
    {.label = "pool2d_grad adaptive avg [B,3,7,5] -> 3x2", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, -1, 3, 7, 5), F32(4, -1, 3, 3, 2), F32(4, -1, 3, 3, 2)},
     ADAPTIVE("avg", 3, 2)},
    {.label = "pool2d_grad adaptive max 13x13 -> 3x3", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, 2, 2, 13, 13), F32(4, 2, 2, 3, 3), F32(4, 2, 2, 3, 3)},
     ADAPTIVE("max", 3, 3)},
    {.label = "pool2d_grad global avg [B,5,1,13]", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, -1, 5, 1, 13), F32(4, -1, 5, 1, 1), F32(4, -1, 5, 1, 1)}, GLOBAL("avg")},
    {.label = "pool2d_grad global max [B,4,7,7]", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, -1, 4, 7, 7), F32(4, -1, 4, 1, 1), F32(4, -1, 4, 1, 1)}, GLOBAL("max")},
    {.label = "pool2d_grad dy of the wrong shape rejected", .kind = DY_OP_POOL2D_GRAD, .n_in = 3,
     .in = {F32(4, 1, 1, 4, 4), F32(4, 1, 1, 2, 2), F32(4, 1, 1, 2, 3)},
     MAXPOOL(2, 2, 2, 2, 0, 0, 0, 0, 0), .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---------------- batch_norm ---------------- */
    {.label = "batch_norm inference by hand", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(4, 1, 2, 1, 2), F32(1, 2), F32(1, 2), F32(1, 2), F32(1, 2)}, BN(0.0, 1),
     .data = {bn_x, bn_scale, bn_bias, bn_mean, bn_var}, BY_HAND(bn_test_expect)},
    {.label = "batch_norm training by hand", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(4, 2, 2, 1, 2), F32(1, 2), F32(1, 2), F32(1, 2), F32(1, 2)}, BN(0.0, 0),
     .data = {bn_train_x, bn_scale, bn_bias, bn_mean, bn_var}, BY_HAND(bn_train_expect)},
    /* variances must be positive: every input in [0.5, 1.5) */
    {.label = "batch_norm inference [B,3,5,7] params const", .kind = DY_OP_BATCH_NORM,
     .n_in = 5, .in = {F32(4, -1, 3, 5, 7), F32(1, 3), F32(1, 3), F32(1, 3), F32(1, 3)},
     .consts = 0x1e, BN(1e-5, 1), .lo = 0.5f, .hi = 1.5f},
    {.label = "batch_norm training [B,4,3,3]", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(4, -1, 4, 3, 3), F32(1, 4), F32(1, 4), F32(1, 4), F32(1, 4)},
     .consts = 0x1e, BN(1e-5, 0), .batch = 3},
    {.label = "batch_norm training [B,6] (rank 2)", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(2, -1, 6), F32(1, 6), F32(1, 6), F32(1, 6), F32(1, 6)}, BN(1e-3, 0),
     .batch = 5},
    {.label = "batch_norm inference rank 5 [2,2,3,1,2]", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(5, 2, 2, 3, 1, 2), F32(1, 2), F32(1, 2), F32(1, 2), F32(1, 2)}, BN(1e-5, 1),
     .lo = 0.5f, .hi = 1.5f},
    {.label = "batch_norm training size-1 batch [1,3,7,1]", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(4, 1, 3, 7, 1), F32(1, 3), F32(1, 3), F32(1, 3), F32(1, 3)}, BN(1e-5, 0)},
    {.label = "batch_norm scale of the wrong size rejected", .kind = DY_OP_BATCH_NORM,
     .n_in = 5, .in = {F32(4, 1, 3, 2, 2), F32(1, 4), F32(1, 3), F32(1, 3), F32(1, 3)},
     BN(1e-5, 1), .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "batch_norm of a 1-D input rejected", .kind = DY_OP_BATCH_NORM, .n_in = 5,
     .in = {F32(1, 3), F32(1, 3), F32(1, 3), F32(1, 3), F32(1, 3)}, BN(1e-5, 1),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---------------- layer_norm ---------------- */
    {.label = "layer_norm last axis by hand", .kind = DY_OP_LAYER_NORM, .n_in = 3,
     .in = {F32(2, 2, 4), F32(1, 4), F32(1, 4)}, LN(-1, 2.75),
     .data = {ln_x, ln_scale, ln_bias}, BY_HAND(ln_expect)},
    {.label = "layer_norm two axes, scale in the trailing shape, by hand",
     .kind = DY_OP_LAYER_NORM, .n_in = 3, .in = {F32(3, 2, 2, 2), F32(2, 2, 2), F32(2, 2, 2)},
     LN(1, 2.75), .data = {ln_x, ln_scale, ln_bias}, BY_HAND(ln_expect)},
    {.label = "layer_norm [B,7,13] over 1 axis", .kind = DY_OP_LAYER_NORM, .n_in = 3,
     .in = {F32(3, -1, 7, 13), F32(1, 13), F32(1, 13)}, .consts = 6, LN(-1, 1e-5)},
    {.label = "layer_norm [B,3,5] over 2 axes, 1-D scale", .kind = DY_OP_LAYER_NORM, .n_in = 3,
     .in = {F32(3, -1, 3, 5), F32(1, 15), F32(1, 15)}, .consts = 6, LN(1, 1e-5)},
    {.label = "layer_norm [B,3,5] over axes -2.., [3,5] scale", .kind = DY_OP_LAYER_NORM,
     .n_in = 3, .in = {F32(3, -1, 3, 5), F32(2, 3, 5), F32(2, 3, 5)}, LN(-2, 1e-5)},
    /* a mean 30 standard deviations away from 0 (the naive variance loses
     * digits); not more, as test_grad's finite-difference step grows with
     * |x| and must stay well below the spread */
    {.label = "layer_norm static [4,6] over everything", .kind = DY_OP_LAYER_NORM, .n_in = 3,
     .in = {F32(2, 4, 6), F32(1, 24), F32(1, 24)}, LN(0, 1e-5), .lo = 10, .hi = 11},
    {.label = "layer_norm row of 1 (output is the bias)", .kind = DY_OP_LAYER_NORM, .n_in = 3,
     .in = {F32(2, 5, 1), F32(1, 1), F32(1, 1)}, LN(1, 1e-5)},
    {.label = "layer_norm scale of the wrong size rejected", .kind = DY_OP_LAYER_NORM,
     .n_in = 3, .in = {F32(3, 2, 3, 5), F32(1, 5), F32(1, 15)}, LN(1, 1e-5),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "layer_norm bias [5,3] for dims [3,5] rejected", .kind = DY_OP_LAYER_NORM,
     .n_in = 3, .in = {F32(3, 2, 3, 5), F32(2, 3, 5), F32(2, 5, 3)}, LN(1, 1e-5),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "layer_norm axis 2 of rank 2 rejected", .kind = DY_OP_LAYER_NORM, .n_in = 3,
     .in = {F32(2, 3, 4), F32(1, 4), F32(1, 4)}, LN(2, 1e-5),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---------------- group_norm ---------------- */
    {.label = "group_norm 2 groups by hand", .kind = DY_OP_GROUP_NORM, .n_in = 3,
     .in = {F32(4, 1, 4, 1, 1), F32(1, 4), F32(1, 4)}, GN(2, 0.75),
     .data = {gn_x, gn_scale, gn_bias}, BY_HAND(gn_expect)},
    {.label = "group_norm [B,6,4,5] 3 groups", .kind = DY_OP_GROUP_NORM, .n_in = 3,
     .in = {F32(4, -1, 6, 4, 5), F32(1, 6), F32(1, 6)}, .consts = 6, GN(3, 1e-5)},
    {.label = "group_norm 1 group [2,3,7,7]", .kind = DY_OP_GROUP_NORM, .n_in = 3,
     .in = {F32(4, 2, 3, 7, 7), F32(1, 3), F32(1, 3)}, GN(1, 1e-5)},
    {.label = "group_norm groups == channels [2,4,3,1]", .kind = DY_OP_GROUP_NORM, .n_in = 3,
     .in = {F32(4, 2, 4, 3, 1), F32(1, 4), F32(1, 4)}, GN(4, 1e-5)},
    {.label = "group_norm rank 2 [B,6] 2 groups", .kind = DY_OP_GROUP_NORM, .n_in = 3,
     .in = {F32(2, -1, 6), F32(1, 6), F32(1, 6)}, GN(2, 1e-5), .batch = 3},
    {.label = "group_norm channels 6 groups 4 rejected", .kind = DY_OP_GROUP_NORM, .n_in = 3,
     .in = {F32(4, 1, 6, 2, 2), F32(1, 6), F32(1, 6)}, GN(4, 1e-5),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---------------- dropout ---------------- */
    {.label = "dropout eval is the identity, by hand", .kind = DY_OP_DROPOUT, .n_in = 1,
     .in = {F32(1, 8)}, DROPOUT(0.5, 1, 99), .data = {drop_x}, BY_HAND(drop_x)},
    {.label = "dropout train p 0.25 seed 7, by the documented hash", .kind = DY_OP_DROPOUT,
     .n_in = 1, .in = {F32(1, 8)}, DROPOUT(0.25, 0, 7), .data = {drop_x},
     BY_HAND(drop_p25_expect)},
    {.label = "dropout train p 0.5 seed 12345, by the documented hash",
     .kind = DY_OP_DROPOUT, .n_in = 1, .in = {F32(2, 3, 4)}, DROPOUT(0.5, 0, 12345),
     .data = {ones12}, BY_HAND(drop_p50_expect)},
    {.label = "dropout train p 1 zeroes everything", .kind = DY_OP_DROPOUT, .n_in = 1,
     .in = {F32(1, 8)}, DROPOUT(1.0, 0, 3), .data = {drop_x}, BY_HAND(zeros8)},
    {.label = "dropout train p 0 is the identity", .kind = DY_OP_DROPOUT, .n_in = 1,
     .in = {F32(1, 8)}, DROPOUT(0.0, 0, 3), .data = {drop_x}, BY_HAND(drop_x)},
    {.label = "dropout train p 0.3 [B,7,13] negative seed", .kind = DY_OP_DROPOUT, .n_in = 1,
     .in = {F32(3, -1, 7, 13)}, DROPOUT(0.3, 0, -8070450532247928832ll), .batch = 3},
    {.label = "dropout train p 0.9 [5,1,3]", .kind = DY_OP_DROPOUT, .n_in = 1,
     .in = {F32(3, 5, 1, 3)}, DROPOUT(0.9, 0, 42)},
    {.label = "dropout eval [B,13]", .kind = DY_OP_DROPOUT, .n_in = 1, .in = {F32(2, -1, 13)},
     DROPOUT(0.5, 1, 0)},
    {.label = "dropout p 1.5 rejected", .kind = DY_OP_DROPOUT, .n_in = 1, .in = {F32(1, 8)},
     DROPOUT(1.5, 0, 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
};

const dy_op_case_list dy_op_cases_nn = DY_CASE_LIST(cases);
