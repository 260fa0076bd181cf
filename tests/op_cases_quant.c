/* op_cases_quant.c - op table cases for the quant family
 * (ir/ops_quant.def): quantize/dequantize per tensor and per channel, i8
 * and u8; qconv2d on both generated forms (the patch + dot form: i8, a
 * constant filter of >= 16 taps with zero weight zero points; the direct
 * loop: depthwise, u8 with per-channel weight zero points; the depthwise
 * pairs form, its plane in bands on a large map), with strides,
 * asymmetric padding, dilation, the dynamic batch and a relu6 clamp;
 * qmatmul (the dot form with b as [N, K], the direct loop batched and u8);
 * qadd and qmul broadcasting; qsoftmax along the last, a middle and the batch axis;
 * matmul_integer and conv_integer; inputs inference must reject.
 *
 * Every quantized value is random over its whole range (biases in
 * [-2000, 2000)), so outputs saturate as well as land in range; the scales
 * are chosen so that most of them land in range. test_ops requires the
 * three ways to agree exactly (integers); tests/test_int8.c checks the
 * kernels against an independent reference of the fixed-point rules.
 */
#include "op_table.h"

/* Every op spells out all its attributes (the verifier's invariant 4). */
#define CONV4(sh, sw, pt, pl, pb, pr, dh, dw, g)                                \
  DY_ATTR_IS("strides", DY_SHAPE(sh, sw), 2),                                   \
      DY_ATTR_IS("paddings", DY_SHAPE(pt, pl, pb, pr), 4),                      \
      DY_ATTR_IS("dilations", DY_SHAPE(dh, dw), 2), DY_ATTR_I("groups", g)
#define ACT(lo, hi) DY_ATTR_I("act_min", lo), DY_ATTR_I("act_max", hi)
#define NOACT ACT(INT32_MIN, INT32_MAX)
/* qconv2d: conv2d's attributes and the activation clamp */
#define QCONV(sh, sw, pt, pl, pb, pr, dh, dw, g, lo, hi) \
  .n_attrs = 6, .attrs = {CONV4(sh, sw, pt, pl, pb, pr, dh, dw, g), ACT(lo, hi)}
#define CONV(sh, sw, pt, pl, pb, pr, dh, dw, g) \
  .n_attrs = 4, .attrs = {CONV4(sh, sw, pt, pl, pb, pr, dh, dw, g)}
#define QMM(trans, lo, hi) .n_attrs = 3, .attrs = {DY_ATTR_I("transpose_y", trans), ACT(lo, hi)}
#define QBIN(lo, hi) .n_attrs = 2, .attrs = {ACT(lo, hi)}
#define AXIS(a) .n_attrs = 1, .attrs = {DY_ATTR_I("axis", a)}

static const float s_x[] = {0.05f}, s_y[] = {0.5f}, s_half[] = {0.5f};
static const float s_w4[] = {0.01f, 0.02f, 0.004f, 0.013f};
static const float s_q3[] = {0.02f, 0.1f, 0.007f};
static const float s_w5[] = {0.01f, 0.03f, 0.002f, 0.02f, 0.011f};
static const float s_soft[] = {1.0f / 256.0f}, s_soft_in[] = {0.0625f};
/* the extremes (issue 31): an output scale so small that every
 * requantized value saturates (a wrapping left shift gave the zero point),
 * and so large that every one rounds to the zero point */
static const float s_tiny[] = {1e-11f}, s_huge[] = {1e6f};
static const int8_t z_i8[] = {3}, z_i8_0[] = {0}, z_i8_m[] = {-7};
static const int8_t z_zero4[] = {0, 0, 0, 0}, z_zero5[] = {0, 0, 0, 0, 0};
static const int8_t z_soft_i8[] = {-128};
static const uint8_t z_u8[] = {128}, z_u8_3[] = {10, 128, 250}, z_u8_w[] = {120, 130, 127, 0};
static const uint8_t z_soft_u8[] = {0}, z_u8_2[] = {7, 200};

static const dy_op_case cases[] = {
    /* quantize / dequantize */
    {.label = "quantize_linear i8 per tensor, saturating", .kind = DY_OP_QUANTIZE_LINEAR,
     .n_in = 3, AXIS(1), .in = {F32(2, -1, 5), F32(1, 1), I8(1, 1)}, .consts = 6u, .lo = -9, .hi = 9,
     .data = {NULL, s_x, z_i8}},
    {.label = "quantize_linear u8 per channel axis 1", .kind = DY_OP_QUANTIZE_LINEAR,
     .n_in = 3, AXIS(1), .in = {F32(3, 2, 3, 4), F32(1, 3), U8(1, 3)}, .consts = 6u, .lo = -2, .hi = 2,
     .data = {NULL, s_q3, z_u8_3}},
    {.label = "quantize_linear scalar params", .kind = DY_OP_QUANTIZE_LINEAR, .n_in = 3,
     AXIS(0), .in = {F32(1, 6), F32(0), I8(0)}, .data = {NULL, s_half, z_i8_m}, .lo = -80, .hi = 80},
    {.label = "dequantize_linear i8", .kind = DY_OP_DEQUANTIZE_LINEAR, .n_in = 3, AXIS(1),
     .in = {I8(2, -1, 7), F32(1, 1), I8(1, 1)}, .consts = 6u, .data = {NULL, s_x, z_i8}},
    {.label = "dequantize_linear u8 per channel", .kind = DY_OP_DEQUANTIZE_LINEAR, .n_in = 3, AXIS(1),
     .in = {U8(3, 2, 3, 2), F32(1, 3), U8(1, 3)}, .data = {NULL, s_q3, z_u8_3}},
    {.label = "dequantize_linear u8 per channel axis -1", .kind = DY_OP_DEQUANTIZE_LINEAR,
     .n_in = 3, AXIS(-1),
     .in = {U8(2, 4, 2), F32(1, 2), U8(1, 2)}, .data = {NULL, s_q3, z_u8_2}},
    /* qconv2d */
    {.label = "qconv2d i8 dot form, stride 2, padding, batch", .kind = DY_OP_QCONV2D, .n_in = 9,
     QCONV(2, 1, 1, 0, 2, 1, 1, 1, 1, INT32_MIN, INT32_MAX),
     .in = {I8(4, -1, 3, 7, 6), F32(1, 1), I8(1, 1), I8(4, 4, 3, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), I8(1, 1), I32(1, 4)},
     .consts = 0x1feu, .data = {NULL, s_x, z_i8, NULL, s_w4, z_zero4, s_y, z_i8_m, NULL}},
    {.label = "qconv2d i8 dot form, groups 2, dilation 2, relu6", .kind = DY_OP_QCONV2D,
     .n_in = 9, QCONV(1, 1, 2, 2, 2, 2, 2, 2, 2, -7, 5),
     .in = {I8(4, 1, 4, 5, 5), F32(1, 1), I8(1, 1), I8(4, 4, 2, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), I8(1, 1), I32(1, 4)},
     .consts = 0x1feu, .data = {NULL, s_x, z_i8, NULL, s_w4, z_zero4, s_y, z_i8_m, NULL}},
    {.label = "qconv2d u8 x, i8 w: the u8 x s8 dot form", .kind = DY_OP_QCONV2D, .n_in = 9,
     QCONV(1, 1, 1, 1, 1, 1, 1, 1, 1, 128, 250),
     .in = {U8(4, -1, 2, 5, 4), F32(1, 1), U8(1, 1), I8(4, 4, 2, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), U8(1, 1), I32(1, 4)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_w4, z_zero4, s_y, z_u8, NULL}},
    {.label = "qconv2d depthwise i8 (direct)", .kind = DY_OP_QCONV2D, .n_in = 9,
     QCONV(1, 2, 1, 1, 1, 1, 1, 1, 4, INT32_MIN, INT32_MAX),
     .in = {I8(4, 2, 4, 6, 5), F32(1, 1), I8(1, 1), I8(4, 4, 1, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), I8(1, 1), I32(1, 4)},
     .consts = 0x1feu, .data = {NULL, s_x, z_i8_0, NULL, s_w4, z_zero4, s_y, z_i8, NULL}},
    {.label = "qconv2d depthwise u8 x, 41 x 40, stride 2 rows: the plane in bands",
     .kind = DY_OP_QCONV2D, .n_in = 9, QCONV(2, 1, 1, 1, 1, 1, 1, 1, 2, 120, INT32_MAX),
     .in = {U8(4, 1, 2, 41, 40), F32(1, 1), U8(1, 1), I8(4, 2, 1, 3, 3), F32(1, 2), I8(1, 2),
            F32(1, 1), U8(1, 1), I32(1, 2)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_w4, z_zero4, s_y, z_u8, NULL}},
    {.label = "qconv2d u8, per-channel weight zero points (direct)", .kind = DY_OP_QCONV2D,
     .n_in = 9, QCONV(1, 1, 0, 1, 0, 1, 1, 1, 1, INT32_MIN, INT32_MAX),
     .in = {U8(4, 1, 2, 4, 4), F32(1, 1), U8(1, 1), U8(4, 4, 2, 2, 3), F32(1, 4), U8(1, 4),
            F32(1, 1), U8(1, 1), I32(1, 4)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_w4, z_u8_w, s_y, z_u8, NULL}},
    /* qmatmul */
    {.label = "qmatmul i8 dot form (b [N, K])", .kind = DY_OP_QMATMUL, .n_in = 9,
     QMM(1, INT32_MIN, INT32_MAX),
     .in = {I8(2, -1, 20), F32(1, 1), I8(1, 1), I8(2, 5, 20), F32(1, 5), I8(1, 5), F32(1, 1),
            I8(1, 1), I32(1, 5)},
     .consts = 0x1feu, .data = {NULL, s_x, z_i8, NULL, s_w5, z_zero5, s_y, z_i8_m, NULL}},
    {.label = "qmatmul u8 a, i8 b [N, K]: the u8 x s8 dot form", .kind = DY_OP_QMATMUL, .n_in = 9,
     QMM(1, INT32_MIN, INT32_MAX),
     .in = {U8(2, 3, 33), F32(1, 1), U8(1, 1), I8(2, 5, 33), F32(1, 5), I8(1, 5), F32(1, 1),
            U8(1, 1), I32(1, 5)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_w5, z_zero5, s_y, z_u8, NULL}},
    {.label = "qmatmul u8 batched a, b [K, N] (direct)", .kind = DY_OP_QMATMUL, .n_in = 9,
     QMM(0, INT32_MIN, INT32_MAX),
     .in = {U8(3, 2, 3, 4), F32(1, 1), U8(1, 1), U8(2, 4, 3), F32(1, 1), U8(1, 1), F32(1, 1),
            U8(1, 1), I32(1, 3)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_x, z_u8, s_y, z_u8, NULL}},
    {.label = "qmatmul i8 batched b, relu", .kind = DY_OP_QMATMUL, .n_in = 9,
     QMM(0, -7, INT32_MAX),
     .in = {I8(3, 2, 3, 4), F32(1, 1), I8(1, 1), I8(3, 2, 4, 5), F32(1, 1), I8(1, 1), F32(1, 1),
            I8(1, 1), I32(1, 5)},
     .consts = 0x1f6u, .data = {NULL, s_x, z_i8, NULL, s_half, z_i8_m, s_y, z_i8_m, NULL}},
    /* qadd, qmul */
    {.label = "qadd i8 broadcast [2,3,4] + [3,1]", .kind = DY_OP_QADD, .n_in = 8,
     QBIN(INT32_MIN, INT32_MAX),
     .in = {I8(3, 2, 3, 4), F32(1, 1), I8(1, 1), I8(2, 3, 1), F32(1, 1), I8(1, 1), F32(1, 1),
            I8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_x, z_i8, NULL, s_half, z_i8_m, s_y, z_i8_0}},
    {.label = "qadd u8 batch, relu", .kind = DY_OP_QADD, .n_in = 8, QBIN(128, INT32_MAX),
     .in = {U8(2, -1, 6), F32(1, 1), U8(1, 1), U8(2, -1, 6), F32(1, 1), U8(1, 1), F32(1, 1),
            U8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_x, z_u8, NULL, s_y, z_u8, s_half, z_u8}},
    {.label = "qmul i8 broadcast [4] * [3,1]", .kind = DY_OP_QMUL, .n_in = 8,
     QBIN(INT32_MIN, INT32_MAX),
     .in = {I8(1, 4), F32(1, 1), I8(1, 1), I8(2, 3, 1), F32(1, 1), I8(1, 1), F32(1, 1),
            I8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_half, z_i8, NULL, s_x, z_i8_m, s_y, z_i8_0}},
    /* the extremes of the scales: saturating, or all the zero point */
    {.label = "qmatmul u8 tiny output scale: saturates", .kind = DY_OP_QMATMUL, .n_in = 9,
     QMM(0, INT32_MIN, INT32_MAX),
     .in = {U8(2, 3, 4), F32(1, 1), U8(1, 1), U8(2, 4, 3), F32(1, 1), U8(1, 1), F32(1, 1),
            U8(1, 1), I32(1, 3)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_x, z_u8, s_tiny, z_u8, NULL}},
    {.label = "qmatmul i8 dot form, huge output scale: the zero point", .kind = DY_OP_QMATMUL,
     .n_in = 9, QMM(1, INT32_MIN, INT32_MAX),
     .in = {I8(2, -1, 20), F32(1, 1), I8(1, 1), I8(2, 5, 20), F32(1, 5), I8(1, 5), F32(1, 1),
            I8(1, 1), I32(1, 5)},
     .consts = 0x1feu, .data = {NULL, s_x, z_i8, NULL, s_w5, z_zero5, s_huge, z_i8_m, NULL}},
    {.label = "qconv2d i8 dot form, tiny output scale: saturates", .kind = DY_OP_QCONV2D,
     .n_in = 9, QCONV(1, 1, 1, 1, 1, 1, 1, 1, 1, INT32_MIN, INT32_MAX),
     .in = {I8(4, 1, 3, 5, 5), F32(1, 1), I8(1, 1), I8(4, 4, 3, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), I8(1, 1), I32(1, 4)},
     .consts = 0x1feu, .data = {NULL, s_x, z_i8, NULL, s_w4, z_zero4, s_tiny, z_i8_m, NULL}},
    {.label = "qconv2d depthwise u8, tiny output scale (direct)", .kind = DY_OP_QCONV2D,
     .n_in = 9, QCONV(1, 1, 1, 1, 1, 1, 1, 1, 2, INT32_MIN, INT32_MAX),
     .in = {U8(4, 1, 2, 6, 5), F32(1, 1), U8(1, 1), I8(4, 2, 1, 3, 3), F32(1, 2), I8(1, 2),
            F32(1, 1), U8(1, 1), I32(1, 2)},
     .consts = 0x1feu, .data = {NULL, s_x, z_u8, NULL, s_w4, z_zero4, s_tiny, z_u8, NULL}},
    {.label = "qadd i8 tiny output scale: saturates", .kind = DY_OP_QADD, .n_in = 8,
     QBIN(INT32_MIN, INT32_MAX),
     .in = {I8(2, 3, 4), F32(1, 1), I8(1, 1), I8(2, 3, 4), F32(1, 1), I8(1, 1), F32(1, 1),
            I8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_x, z_i8, NULL, s_half, z_i8_m, s_tiny, z_i8_0}},
    {.label = "qadd u8 huge output scale: the zero point", .kind = DY_OP_QADD, .n_in = 8,
     QBIN(INT32_MIN, INT32_MAX),
     .in = {U8(2, 3, 4), F32(1, 1), U8(1, 1), U8(2, 3, 4), F32(1, 1), U8(1, 1), F32(1, 1),
            U8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_x, z_u8, NULL, s_half, z_u8, s_huge, z_u8}},
    {.label = "qmul u8 tiny output scale: saturates", .kind = DY_OP_QMUL, .n_in = 8,
     QBIN(INT32_MIN, INT32_MAX),
     .in = {U8(2, 3, 4), F32(1, 1), U8(1, 1), U8(2, 3, 4), F32(1, 1), U8(1, 1), F32(1, 1),
            U8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_x, z_u8, NULL, s_half, z_u8, s_tiny, z_u8}},
    {.label = "qmul i8 huge output scale: the zero point", .kind = DY_OP_QMUL, .n_in = 8,
     QBIN(INT32_MIN, INT32_MAX),
     .in = {I8(2, 3, 4), F32(1, 1), I8(1, 1), I8(2, 3, 4), F32(1, 1), I8(1, 1), F32(1, 1),
            I8(1, 1)},
     .consts = 0xf6u, .data = {NULL, s_x, z_i8, NULL, s_half, z_i8_m, s_huge, z_i8_m}},
    {.label = "qsoftmax u8 tiny input scale", .kind = DY_OP_QSOFTMAX, .n_in = 5,
     AXIS(-1), .in = {U8(2, 3, 10), F32(1, 1), U8(1, 1), F32(1, 1), U8(1, 1)}, .consts = 0x1eu,
     .data = {NULL, s_tiny, z_u8, s_soft, z_soft_u8}},
    {.label = "qsoftmax i8 huge input scale", .kind = DY_OP_QSOFTMAX, .n_in = 5, AXIS(-1),
     .in = {I8(2, 3, 10), F32(1, 1), I8(1, 1), F32(1, 1), I8(1, 1)}, .consts = 0x1eu,
     .data = {NULL, s_huge, z_i8, s_soft, z_soft_i8}},
    /* qsoftmax */
    {.label = "qsoftmax i8 last axis", .kind = DY_OP_QSOFTMAX, .n_in = 5, AXIS(-1),
     .in = {I8(2, -1, 10), F32(1, 1), I8(1, 1), F32(1, 1), I8(1, 1)}, .consts = 0x1eu,
     .data = {NULL, s_soft_in, z_i8, s_soft, z_soft_i8}},
    {.label = "qsoftmax i8 along the dynamic batch axis", .kind = DY_OP_QSOFTMAX, .n_in = 5,
     AXIS(-3), .in = {I8(3, -1, 2, 3), F32(1, 1), I8(1, 1), F32(1, 1), I8(1, 1)}, .consts = 0x1eu,
     .data = {NULL, s_soft_in, z_i8, s_soft, z_soft_i8}},
    {.label = "qsoftmax u8 middle axis, wide scale", .kind = DY_OP_QSOFTMAX, .n_in = 5,
     AXIS(1), .in = {U8(3, 2, 5, 3), F32(1, 1), U8(1, 1), F32(1, 1), U8(1, 1)}, .consts = 0x1eu,
     .data = {NULL, s_half, z_u8, s_soft, z_soft_u8}},
    /* the _integer ops */
    {.label = "matmul_integer u8 x i8, per-column b zero points", .kind = DY_OP_MATMUL_INTEGER,
     .n_in = 4, .in = {U8(2, 3, 4), I8(2, 4, 4), U8(1, 1), I8(1, 4)}, .consts = 0xeu,
     .data = {NULL, NULL, z_u8, z_zero4}},
    {.label = "matmul_integer i8 batched", .kind = DY_OP_MATMUL_INTEGER, .n_in = 4,
     .in = {I8(3, 2, 2, 3), I8(3, 2, 3, 2), I8(0), I8(0)}, .data = {NULL, NULL, z_i8, z_i8_m}},
    {.label = "conv_integer u8, padding, per-channel w zero points", .kind = DY_OP_CONV_INTEGER,
     .n_in = 4, CONV(1, 1, 1, 1, 1, 1, 1, 1, 1),
     .in = {U8(4, -1, 2, 3, 3), U8(4, 4, 2, 2, 2), U8(1, 1), U8(1, 4)}, .consts = 0xeu,
     .data = {NULL, NULL, z_u8, z_u8_w}},
    /* rejected */
    {.label = "quantize_linear f32 zero point", .kind = DY_OP_QUANTIZE_LINEAR, .n_in = 3, AXIS(0),
     .in = {F32(1, 4), F32(1, 1), F32(1, 1)}, .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "dequantize_linear zero point of another dtype", .kind = DY_OP_DEQUANTIZE_LINEAR,
     .n_in = 3, AXIS(0), .in = {I8(1, 4), F32(1, 1), U8(1, 1)}, .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "quantize_linear 2 scales for 3 channels", .kind = DY_OP_QUANTIZE_LINEAR, .n_in = 3,
     .in = {F32(2, 4, 3), F32(1, 2), I8(1, 2)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "qconv2d f32 input", .kind = DY_OP_QCONV2D, .n_in = 9,
     .in = {F32(4, 1, 3, 5, 5), F32(1, 1), I8(1, 1), I8(4, 4, 3, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), I8(1, 1), I32(1, 4)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "qconv2d bias of the wrong length", .kind = DY_OP_QCONV2D, .n_in = 9,
     .in = {I8(4, 1, 3, 5, 5), F32(1, 1), I8(1, 1), I8(4, 4, 3, 3, 3), F32(1, 4), I8(1, 4),
            F32(1, 1), I8(1, 1), I32(1, 3)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "qmatmul inner dims differ", .kind = DY_OP_QMATMUL, .n_in = 9,
     .in = {I8(2, 2, 5), F32(1, 1), I8(1, 1), I8(2, 4, 3), F32(1, 1), I8(1, 1), F32(1, 1),
            I8(1, 1), I32(1, 3)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "qadd a i8 and b u8", .kind = DY_OP_QADD, .n_in = 8,
     .in = {I8(1, 4), F32(1, 1), I8(1, 1), U8(1, 4), F32(1, 1), U8(1, 1), F32(1, 1), I8(1, 1)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
};

const dy_op_case_list dy_op_cases_quant = DY_CASE_LIST(cases);
