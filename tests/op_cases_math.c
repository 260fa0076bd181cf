/* op_cases_math.c - op table cases for the math family (ir/ops_math.def):
 * activations, elementwise math, pow/minimum/maximum, comparisons, where,
 * cast, scale.
 *
 * Shapes break naive code: odd sizes (7, 13), size-1 dims, broadcasting
 * from either side and three ways (where), rank-0 operands, the -1 batch
 * (run at 2, 3 and 1), constant (weight) operands, empty tensors. Input
 * ranges suit each op: log/sqrt/rsqrt/reciprocal/pow bases positive (pow
 * also by hand at zero and negative bases, integer exponents), erf
 * and gelu across [-5, 5], softplus across its threshold, silu at +-100 (no
 * overflow to NaN). Each op has hand-computed values (double-precision
 * references rounded to f32) on small inputs.
 *
 * NaN: the hand-value check cannot express an expected NaN, so NaN inputs
 * sit after the hand-checked prefix (n_expect) and are checked by the
 * three-way agreement (which treats NaN as equal to NaN only): eager,
 * executor and compiled C must all propagate them alike.
 */
#include <math.h>

#include "op_table.h"

#define GELU(a) .n_attrs = 1, .attrs = {DY_ATTR_I("approximate", (a))}
#define ATTR1(n, v) .n_attrs = 1, .attrs = {DY_ATTR_F(n, (v))}
#define ATTR2(n1, v1, n2, v2) .n_attrs = 2, .attrs = {DY_ATTR_F(n1, (v1)), DY_ATTR_F(n2, (v2))}
#define CLIP(lo, hi) ATTR2("min", lo, "max", hi)
#define SCALE(s, b, after)                                                     \
  .n_attrs = 3, .attrs = {DY_ATTR_F("scale", (s)), DY_ATTR_F("bias", (b)), \
                          DY_ATTR_I("bias_after_scale", (after))}
#define CAST(dt) .n_attrs = 1, .attrs = {DY_ATTR_I("dtype", (dt))}
#define EXPECT(arr) .expect = (arr), .n_expect = (int)(sizeof(arr) / sizeof((arr)[0]))

/* ---- activations ---- */
static const float gelu_x[] = {-3, -1, -0.5f, 0, 0.5f, 1, 3};
static const float gelu_erf_y[] = {-0.00404969417f, -0.158655256f, -0.154268771f, 0,
                                   0.345731229f, 0.841344774f, 2.99595022f};
static const float gelu_tanh_y[] = {-0.00363739207f, -0.158808008f, -0.154285997f, 0,
                                    0.345714003f, 0.841192007f, 2.99636269f};
static const float silu_x[] = {-2, 0, 1, 5};
static const float silu_y[] = {-0.238405839f, 0, 0.731058598f, 4.96653557f};
static const float hswish_x[] = {-4, -3, -1, 0, 1, 3, 4};
static const float hswish_y[] = {0, 0, -0.333333343f, 0, 0.666666687f, 3, 4};
static const float softsign_x[] = {-3, -1, 0, 0.5f, 4, 1e30f};
static const float softsign_y[] = {-0.75f, -0.5f, 0, 0.333333343f, 0.8f, 1};
static const float hsig_x[] = {-4, -3, 0, 1.5f, 3, 4, NAN};
static const float hsig_paddle_y[] = {0, 0, 0.5f, 0.75f, 1, 1};   /* slope 1/6 */
static const float hsig_onnx_x[] = {-4, -2.5f, 0, 1, 2.5f, 4};
static const float hsig_onnx_y[] = {0, 0, 0.5f, 0.699999988f, 1, 1}; /* slope 0.2 */
static const float leaky_x[] = {-2, -0.5f, 0, 3};
static const float leaky_y[] = {-0.02f, -0.005f, 0, 3};
static const float elu_x[] = {-2, -0.5f, 0, 1};
static const float elu_y[] = {-0.864664733f, -0.393469334f, 0, 1};
static const float elu_half_y[] = {-0.432332367f, -0.196734667f, 0, 1};
static const float clip_x[] = {-3, -1, 0.5f, 2, 5, NAN};
static const float clip_y[] = {-1, -1, 0.5f, 2, 2};
static const float clip_inf_x[] = {-1e30f, -3, 0.5f, 7};
static const float clip_inf_y[] = {-1e30f, -3, 0.5f, 0.5f};
static const float softplus_x[] = {-3, 0, 1, 19, 21};
static const float softplus_y[] = {0.048587352f, 0.693147182f, 1.31326163f, 19, 21};
static const float softplus2_x[] = {-3, 0, 1, 4, 6};
static const float softplus2_y[] = {0.0012378426f, 0.346573591f, 1.06346405f, 4.00016785f, 6};

/* ---- elementwise math ---- */
static const float exp_x[] = {0, 1, -1, 2};
static const float exp_y[] = {1, 2.71828175f, 0.36787945f, 7.38905621f};
static const float log_x[] = {1, 2.718281828f, 10, 0.5f};
static const float log_y[] = {0, 0.99999994f, 2.30258512f, -0.693147182f};
static const float sqrt_x[] = {0, 1, 4, 2};
static const float sqrt_y[] = {0, 1, 2, 1.41421354f};
static const float rsqrt_x[] = {1, 4, 0.25f, 2};
static const float rsqrt_y[] = {1, 0.5f, 2, 0.707106769f};
static const float abs_x[] = {-2.5f, 0, 3, -0.0f};
static const float abs_y[] = {2.5f, 0, 3, 0};
static const int64_t abs_i64_x[] = {-5, 0, 3, INT64_MIN, INT64_MAX, -1};
static const float abs_i64_y[] = {5, 0, 3, -9223372036854775808.0f, 9223372036854775807.0f, 1};
static const int64_t neg_i64_x[] = {-5, 0, 3, INT64_MIN, INT64_MAX};
static const float neg_i64_y[] = {5, 0, -3, -9223372036854775808.0f, -9223372036854775807.0f};
static const float neg_x[] = {1.5f};
static const float neg_y[] = {-1.5f};
static const float erf_x[] = {-2, -0.5f, 0, 0.5f, 2};
static const float erf_y[] = {-0.995322287f, -0.520499885f, 0, 0.520499885f, 0.995322287f};
static const float recip_x[] = {1, 2, -4, 0.5f};
static const float recip_y[] = {1, 0.5f, -0.25f, 2};
static const float scale_x[] = {1, 2, 3};
static const float scale_after_y[] = {3, 5, 7};   /* 2x + 1   */
static const float scale_before_y[] = {4, 6, 8};  /* 2(x + 1) */

/* ---- pow, minimum, maximum ---- */
static const float pow_base[] = {1, 2, 3, 4, 5, 6};  /* [2,3] */
static const float pow_exp[] = {2, 0.5f, -1};         /* [3]   */
static const float pow_y[] = {1, 1.41421354f, 0.333333343f, 16, 2.23606801f, 0.166666672f};
/* zero and negative bases with integer exponents (the gradient's guards) */
static const float pow0_base[] = {0, 0, 0, -2, -1.5f, 2};
static const float pow0_exp[] = {2, 1, 0, 3, 2, -1};
static const float pow0_y[] = {0, 0, 1, -8, 2.25f, 0.5f};
static const float mm_a[] = {1, -2, 3, -0.5f, 7, NAN, 1};
static const float mm_b[] = {2, -3, 3, -0.5f, NAN, 1, NAN};
static const float min_y[] = {1, -3, 3, -0.5f};
static const float max_y[] = {2, -2, 3, -0.5f};
static const int64_t mm_i64_a[] = {1, -2, INT64_MIN, INT64_MAX, 5};
static const int64_t mm_i64_b[] = {2, -3, 0, 0, 5};
static const float min_i64_y[] = {1, -3, -9223372036854775808.0f, 0, 5};
static const float max_i64_y[] = {2, -2, 0, 9223372036854775807.0f, 5};

/* ---- comparisons ---- */
static const float cmp_a[] = {1, 2, 3, -0.0f, NAN};          /* [5]          */
static const float cmp_b[] = {1, 0, 4, 0.0f, NAN};
static const float eq_y[] = {1, 0, 0, 1, 0};
static const float gt_y[] = {0, 1, 0, 0, 0};
static const float lt_y[] = {0, 0, 1, 0, 0};
static const int64_t cmp_i64_a[] = {3};                       /* rank 0       */
static const int64_t cmp_i64_b[] = {1, 3, 5, INT64_MIN};      /* [4]          */
static const float lt_i64_y[] = {0, 0, 1, 0};
static const float gt_i64_y[] = {1, 0, 0, 1};
static const uint8_t cmp_bool_a[] = {0, 0, 1, 1};
static const uint8_t cmp_bool_b[] = {0, 1, 0, 1};
static const float eq_bool_y[] = {1, 0, 0, 1};

/* ---- where ---- */
static const uint8_t where_c[] = {1, 0, 1};
static const float where_x[] = {1, 2, 3};
static const float where_y[] = {10, 20, 30};
static const float where_out[] = {1, 20, 3};
static const uint8_t where_c2[] = {1, 0};                     /* [2,1]        */
static const int64_t where_x2[] = {7};                        /* rank 0       */
static const int64_t where_y2[] = {-1, -2, -3};               /* [3]          */
static const float where_out2[] = {7, 7, 7, -1, -2, -3};      /* [2,3]        */

/* ---- cast ---- */
static const float cast_f_x[] = {1.7f, -1.7f, 0.5f, -0.5f, 3e10f, 1e20f, -1e20f,
                                 9223372036854775808.0f, -9223372036854775808.0f,
                                 INFINITY, -INFINITY, NAN};
static const float cast_f_i64_y[] = {1, -1, 0, 0, 3.0000001e10f, 9223372036854775807.0f,
                                     -9223372036854775808.0f, 9223372036854775807.0f,
                                     -9223372036854775808.0f, 9223372036854775807.0f,
                                     -9223372036854775808.0f, 0};
static const float cast_fb_x[] = {0, -0.0f, 0.5f, -3, 1e-30f, NAN};
static const float cast_f_bool_y[] = {0, 0, 1, 1, 1, 1};
static const int64_t cast_i_x[] = {0, -1, 16777217, INT64_MAX, INT64_MIN, 5};
static const float cast_i_f32_y[] = {0, -1, 16777216, 9223372036854775807.0f,
                                     -9223372036854775808.0f, 5};
static const float cast_i_bool_y[] = {0, 1, 1, 1, 1, 1};
static const uint8_t cast_b_x[] = {0, 1, 1, 0};
static const float cast_b_y[] = {0, 1, 1, 0};

static const dy_op_case cases[] = {
    /* gelu */
    {.label = "gelu erf by hand", .kind = DY_OP_GELU, .n_in = 1, .in = {F32(1, 7)}, GELU(0),
     .data = {gelu_x}, EXPECT(gelu_erf_y)},
    {.label = "gelu erf [B,13] [-5,5]", .kind = DY_OP_GELU, .n_in = 1, .in = {F32(2, -1, 13)},
     GELU(0), .lo = -5, .hi = 5, .batch = 3},
    {.label = "gelu tanh by hand", .kind = DY_OP_GELU, .n_in = 1, .in = {F32(1, 7)}, GELU(1),
     .data = {gelu_x}, EXPECT(gelu_tanh_y)},
    {.label = "gelu tanh [7,1,13] [-20,20]", .kind = DY_OP_GELU, .n_in = 1,
     .in = {F32(3, 7, 1, 13)}, GELU(1), .lo = -20, .hi = 20},
    {.label = "gelu approximate=2 rejected", .kind = DY_OP_GELU, .n_in = 1, .in = {F32(1, 7)},
     GELU(2), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "gelu of i64 rejected", .kind = DY_OP_GELU, .n_in = 1, .in = {I64(1, 7)}, GELU(0),
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
    /* silu, hard_swish, hard_sigmoid */
    {.label = "silu by hand", .kind = DY_OP_SILU, .n_in = 1, .in = {F32(1, 4)},
     .data = {silu_x}, EXPECT(silu_y)},
    {.label = "silu [B,7] saturating [-100,100]", .kind = DY_OP_SILU, .n_in = 1,
     .in = {F32(2, -1, 7)}, .lo = -100, .hi = 100},
    {.label = "hard_swish by hand", .kind = DY_OP_HARD_SWISH, .n_in = 1, .in = {F32(1, 7)},
     .data = {hswish_x}, EXPECT(hswish_y)},
    {.label = "hard_swish [13,1] [-6,6]", .kind = DY_OP_HARD_SWISH, .n_in = 1,
     .in = {F32(2, 13, 1)}, .lo = -6, .hi = 6},
    {.label = "softsign by hand", .kind = DY_OP_SOFTSIGN, .n_in = 1, .in = {F32(1, 6)},
     .data = {softsign_x}, EXPECT(softsign_y)},
    {.label = "softsign [B,7] [-100,100]", .kind = DY_OP_SOFTSIGN, .n_in = 1,
     .in = {F32(2, -1, 7)}, .lo = -100, .hi = 100},
    {.label = "softsign [] rank 0", .kind = DY_OP_SOFTSIGN, .n_in = 1, .in = {F32(0, 0)}},
    {.label = "softsign of i64 rejected", .kind = DY_OP_SOFTSIGN, .n_in = 1, .in = {I64(1, 7)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "hard_sigmoid Paddle 1/6, 0.5 by hand (+NaN)", .kind = DY_OP_HARD_SIGMOID, .n_in = 1,
     .in = {F32(1, 7)}, ATTR2("slope", 1.0 / 6.0, "offset", 0.5), .data = {hsig_x},
     EXPECT(hsig_paddle_y)},
    {.label = "hard_sigmoid ONNX 0.2, 0.5 by hand", .kind = DY_OP_HARD_SIGMOID, .n_in = 1,
     .in = {F32(1, 6)}, ATTR2("slope", 0.2, "offset", 0.5), .data = {hsig_onnx_x},
     EXPECT(hsig_onnx_y)},
    {.label = "hard_sigmoid [B,13] [-5,5]", .kind = DY_OP_HARD_SIGMOID, .n_in = 1,
     .in = {F32(2, -1, 13)}, ATTR2("slope", 0.2, "offset", 0.5), .lo = -5, .hi = 5},
    {.label = "hard_sigmoid slope=inf rejected", .kind = DY_OP_HARD_SIGMOID, .n_in = 1,
     .in = {F32(1, 3)}, ATTR2("slope", INFINITY, "offset", 0.5),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    /* leaky_relu, elu */
    {.label = "leaky_relu 0.01 by hand", .kind = DY_OP_LEAKY_RELU, .n_in = 1, .in = {F32(1, 4)},
     ATTR1("alpha", 0.01), .data = {leaky_x}, EXPECT(leaky_y)},
    {.label = "leaky_relu 0.2 [B,7]", .kind = DY_OP_LEAKY_RELU, .n_in = 1, .in = {F32(2, -1, 7)},
     ATTR1("alpha", 0.2), .batch = 1},
    {.label = "elu 1 by hand", .kind = DY_OP_ELU, .n_in = 1, .in = {F32(1, 4)}, ATTR1("alpha", 1.0),
     .data = {elu_x}, EXPECT(elu_y)},
    {.label = "elu 0.5 by hand", .kind = DY_OP_ELU, .n_in = 1, .in = {F32(1, 4)},
     ATTR1("alpha", 0.5), .data = {elu_x}, EXPECT(elu_half_y)},
    {.label = "elu 0.5 [7,13] [-5,5]", .kind = DY_OP_ELU, .n_in = 1, .in = {F32(2, 7, 13)},
     ATTR1("alpha", 0.5), .lo = -5, .hi = 5},
    /* clip */
    {.label = "clip -1..2 by hand (+NaN)", .kind = DY_OP_CLIP, .n_in = 1, .in = {F32(1, 6)},
     CLIP(-1.0, 2.0), .data = {clip_x}, EXPECT(clip_y)},
    {.label = "clip 0..6 (relu6) [B,13] [-3,9]", .kind = DY_OP_CLIP, .n_in = 1,
     .in = {F32(2, -1, 13)}, CLIP(0.0, 6.0), .lo = -3, .hi = 9},
    {.label = "clip -inf..0.5 by hand", .kind = DY_OP_CLIP, .n_in = 1, .in = {F32(1, 4)},
     CLIP(-INFINITY, 0.5), .data = {clip_inf_x}, EXPECT(clip_inf_y)},
    {.label = "clip rank-0", .kind = DY_OP_CLIP, .n_in = 1, .in = {SCALAR_F32}, CLIP(-0.25, 0.25)},
    {.label = "clip min > max rejected", .kind = DY_OP_CLIP, .n_in = 1, .in = {F32(1, 3)},
     CLIP(2.0, 1.0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    /* softplus */
    {.label = "softplus 1, 20 by hand", .kind = DY_OP_SOFTPLUS, .n_in = 1, .in = {F32(1, 5)},
     ATTR2("beta", 1.0, "threshold", 20.0), .data = {softplus_x}, EXPECT(softplus_y)},
    {.label = "softplus 2, 10 by hand", .kind = DY_OP_SOFTPLUS, .n_in = 1, .in = {F32(1, 5)},
     ATTR2("beta", 2.0, "threshold", 10.0), .data = {softplus2_x}, EXPECT(softplus2_y)},
    {.label = "softplus 2, 10 [B,13] across the threshold", .kind = DY_OP_SOFTPLUS, .n_in = 1,
     .in = {F32(2, -1, 13)}, ATTR2("beta", 2.0, "threshold", 10.0), .lo = -10, .hi = 10},
    {.label = "softplus 1, 20 [7,1] [-50,50]", .kind = DY_OP_SOFTPLUS, .n_in = 1,
     .in = {F32(2, 7, 1)}, ATTR2("beta", 1.0, "threshold", 20.0), .lo = -50, .hi = 50},
    {.label = "softplus beta=0 rejected", .kind = DY_OP_SOFTPLUS, .n_in = 1, .in = {F32(1, 3)},
     ATTR2("beta", 0.0, "threshold", 20.0), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* exp, log, sqrt, rsqrt, erf, reciprocal */
    {.label = "exp by hand", .kind = DY_OP_EXP, .n_in = 1, .in = {F32(1, 4)}, .data = {exp_x},
     EXPECT(exp_y)},
    {.label = "exp [7,13] [-10,10]", .kind = DY_OP_EXP, .n_in = 1, .in = {F32(2, 7, 13)},
     .lo = -10, .hi = 10},
    {.label = "log by hand", .kind = DY_OP_LOG, .n_in = 1, .in = {F32(1, 4)}, .data = {log_x},
     EXPECT(log_y)},
    {.label = "log [B,13] (0.01,100)", .kind = DY_OP_LOG, .n_in = 1, .in = {F32(2, -1, 13)},
     .lo = 0.01f, .hi = 100},
    {.label = "log of i64 rejected", .kind = DY_OP_LOG, .n_in = 1, .in = {I64(1, 3)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "sqrt by hand", .kind = DY_OP_SQRT, .n_in = 1, .in = {F32(1, 4)}, .data = {sqrt_x},
     EXPECT(sqrt_y)},
    {.label = "sqrt [13] [0,100)", .kind = DY_OP_SQRT, .n_in = 1, .in = {F32(1, 13)}, .lo = 0,
     .hi = 100},
    {.label = "rsqrt by hand", .kind = DY_OP_RSQRT, .n_in = 1, .in = {F32(1, 4)},
     .data = {rsqrt_x}, EXPECT(rsqrt_y)},
    {.label = "rsqrt [B,1,7] (0.01,100)", .kind = DY_OP_RSQRT, .n_in = 1,
     .in = {F32(3, -1, 1, 7)}, .lo = 0.01f, .hi = 100},
    {.label = "erf by hand", .kind = DY_OP_ERF, .n_in = 1, .in = {F32(1, 5)}, .data = {erf_x},
     EXPECT(erf_y)},
    {.label = "erf [B,13] [-5,5]", .kind = DY_OP_ERF, .n_in = 1, .in = {F32(2, -1, 13)},
     .lo = -5, .hi = 5},
    {.label = "reciprocal by hand", .kind = DY_OP_RECIPROCAL, .n_in = 1, .in = {F32(1, 4)},
     .data = {recip_x}, EXPECT(recip_y)},
    {.label = "reciprocal [13,1] [0.1,10)", .kind = DY_OP_RECIPROCAL, .n_in = 1,
     .in = {F32(2, 13, 1)}, .lo = 0.1f, .hi = 10},
    /* abs, neg: f32 and i64 */
    {.label = "abs f32 by hand", .kind = DY_OP_ABS, .n_in = 1, .in = {F32(1, 4)},
     .data = {abs_x}, EXPECT(abs_y)},
    {.label = "abs f32 [B,7]", .kind = DY_OP_ABS, .n_in = 1, .in = {F32(2, -1, 7)}},
    {.label = "abs i64 by hand (INT64_MIN wraps)", .kind = DY_OP_ABS, .n_in = 1,
     .in = {I64(1, 6)}, .data = {abs_i64_x}, EXPECT(abs_i64_y)},
    {.label = "abs i64 [7,13] [-50,50)", .kind = DY_OP_ABS, .n_in = 1, .in = {I64(2, 7, 13)},
     .lo = -50, .hi = 50},
    {.label = "abs of bool rejected", .kind = DY_OP_ABS, .n_in = 1, .in = {BOOL(1, 3)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "neg f32 rank-0 by hand", .kind = DY_OP_NEG, .n_in = 1, .in = {SCALAR_F32},
     .data = {neg_x}, EXPECT(neg_y)},
    {.label = "neg f32 [B,13]", .kind = DY_OP_NEG, .n_in = 1, .in = {F32(2, -1, 13)}},
    {.label = "neg i64 by hand (INT64_MIN wraps)", .kind = DY_OP_NEG, .n_in = 1,
     .in = {I64(1, 5)}, .data = {neg_i64_x}, EXPECT(neg_i64_y)},
    {.label = "neg i64 [B,7] [-50,50)", .kind = DY_OP_NEG, .n_in = 1, .in = {I64(2, -1, 7)},
     .lo = -50, .hi = 50},
    /* scale */
    {.label = "scale 2x+1 by hand", .kind = DY_OP_SCALE, .n_in = 1, .in = {F32(1, 3)},
     SCALE(2.0, 1.0, 1), .data = {scale_x}, EXPECT(scale_after_y)},
    {.label = "scale 2(x+1) by hand", .kind = DY_OP_SCALE, .n_in = 1, .in = {F32(1, 3)},
     SCALE(2.0, 1.0, 0), .data = {scale_x}, EXPECT(scale_before_y)},
    {.label = "scale -0.3x+7 [B,13]", .kind = DY_OP_SCALE, .n_in = 1, .in = {F32(2, -1, 13)},
     SCALE(-0.3, 7.0, 1)},
    {.label = "scale bias_after_scale=3 rejected", .kind = DY_OP_SCALE, .n_in = 1,
     .in = {F32(1, 3)}, SCALE(2.0, 1.0, 3), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* pow */
    {.label = "pow [2,3]^[3] by hand", .kind = DY_OP_POW, .n_in = 2,
     .in = {F32(2, 2, 3), F32(1, 3)}, .data = {pow_base, pow_exp}, EXPECT(pow_y)},
    {.label = "pow zero and negative bases, integer exponents, by hand", .kind = DY_OP_POW,
     .n_in = 2, .in = {F32(1, 6), F32(1, 6)}, .data = {pow0_base, pow0_exp}, EXPECT(pow0_y)},
    {.label = "pow [B,7]^[1] positive base", .kind = DY_OP_POW, .n_in = 2,
     .in = {F32(2, -1, 7), F32(1, 1)}, .lo = 0.1f, .hi = 3},
    {.label = "pow [13]^[B,13] (left broadcast)", .kind = DY_OP_POW, .n_in = 2,
     .in = {F32(1, 13), F32(2, -1, 13)}, .lo = 0.1f, .hi = 3},
    {.label = "pow [7,13]^scalar weight", .kind = DY_OP_POW, .n_in = 2,
     .in = {F32(2, 7, 13), SCALAR_F32}, .consts = 2, .lo = 0.5f, .hi = 2},
    {.label = "pow of i64 rejected", .kind = DY_OP_POW, .n_in = 2, .in = {I64(1, 3), I64(1, 3)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},
    /* minimum, maximum: NaN propagates */
    {.label = "minimum f32 by hand (+NaN)", .kind = DY_OP_MINIMUM, .n_in = 2,
     .in = {F32(1, 7), F32(1, 7)}, .data = {mm_a, mm_b}, EXPECT(min_y)},
    {.label = "maximum f32 by hand (+NaN)", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {F32(1, 7), F32(1, 7)}, .data = {mm_a, mm_b}, EXPECT(max_y)},
    {.label = "minimum i8 [B,7] vs [7]", .kind = DY_OP_MINIMUM, .n_in = 2,
     .in = {I8(2, -1, 7), I8(1, 7)}},
    {.label = "maximum u8 [3,1] vs [5]", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {U8(2, 3, 1), U8(1, 5)}},
    {.label = "maximum i32 [13]", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {I32(1, 13), I32(1, 13)}},
    {.label = "minimum i64 by hand", .kind = DY_OP_MINIMUM, .n_in = 2, .in = {I64(1, 5), I64(1, 5)},
     .data = {mm_i64_a, mm_i64_b}, EXPECT(min_i64_y)},
    {.label = "maximum i64 by hand", .kind = DY_OP_MAXIMUM, .n_in = 2, .in = {I64(1, 5), I64(1, 5)},
     .data = {mm_i64_a, mm_i64_b}, EXPECT(max_i64_y)},
    {.label = "maximum [B,1,7] vs [13,1]", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {F32(3, -1, 1, 7), F32(2, 13, 1)}},
    {.label = "minimum [7,1] vs [B,7,13] weight left", .kind = DY_OP_MINIMUM, .n_in = 2,
     .in = {F32(2, 7, 1), F32(3, -1, 7, 13)}, .consts = 1},
    {.label = "minimum i64 [B,7] vs [7] [-20,20)", .kind = DY_OP_MINIMUM, .n_in = 2,
     .in = {I64(2, -1, 7), I64(1, 7)}, .lo = -20, .hi = 20, .batch = 3},
    {.label = "maximum i64 rank-0 vs [13]", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {I64(0, 0), I64(1, 13)}, .lo = -20, .hi = 20},
    {.label = "minimum [2,3] vs [4] rejected", .kind = DY_OP_MINIMUM, .n_in = 2,
     .in = {F32(2, 2, 3), F32(1, 4)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "maximum [B,7] vs [3,7] rejected", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {F32(2, -1, 7), F32(2, 3, 7)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "maximum f32 vs i64 rejected", .kind = DY_OP_MAXIMUM, .n_in = 2,
     .in = {F32(1, 3), I64(1, 3)}, .expect_error = DY_STATUS_DTYPE_MISMATCH},

    /* comparisons -> bool */
    {.label = "equal f32 by hand (-0 == 0, NaN != NaN)", .kind = DY_OP_EQUAL, .n_in = 2,
     .in = {F32(1, 5), F32(1, 5)}, .data = {cmp_a, cmp_b}, EXPECT(eq_y)},
    {.label = "greater f32 by hand", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {F32(1, 5), F32(1, 5)}, .data = {cmp_a, cmp_b}, EXPECT(gt_y)},
    {.label = "less f32 by hand", .kind = DY_OP_LESS, .n_in = 2, .in = {F32(1, 5), F32(1, 5)},
     .data = {cmp_a, cmp_b}, EXPECT(lt_y)},
    {.label = "less i64 rank-0 vs [4] by hand", .kind = DY_OP_LESS, .n_in = 2,
     .in = {I64(0, 0), I64(1, 4)}, .data = {cmp_i64_a, cmp_i64_b}, EXPECT(lt_i64_y)},
    {.label = "greater i64 rank-0 vs [4] by hand", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {I64(0, 0), I64(1, 4)}, .data = {cmp_i64_a, cmp_i64_b}, EXPECT(gt_i64_y)},
    {.label = "equal bool by hand", .kind = DY_OP_EQUAL, .n_in = 2, .in = {BOOL(1, 4), BOOL(1, 4)},
     .data = {cmp_bool_a, cmp_bool_b}, EXPECT(eq_bool_y)},
    {.label = "equal i64 [B,7] vs [1]", .kind = DY_OP_EQUAL, .n_in = 2,
     .in = {I64(2, -1, 7), I64(1, 1)}, .batch = 3},
    {.label = "greater f32 [7,1] vs [1,13]", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {F32(2, 7, 1), F32(2, 1, 13)}},
    {.label = "less f32 [13] vs [B,1,13]", .kind = DY_OP_LESS, .n_in = 2,
     .in = {F32(1, 13), F32(3, -1, 1, 13)}},
    {.label = "greater i64 [B,13] vs [B,1]", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {I64(2, -1, 13), I64(2, -1, 1)}},
    {.label = "less bool [7] vs [B,7]", .kind = DY_OP_LESS, .n_in = 2,
     .in = {BOOL(1, 7), BOOL(2, -1, 7)}},
    {.label = "greater i8 [B,13] vs [B,1]", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {I8(2, -1, 13), I8(2, -1, 1)}},
    {.label = "less u8 [7,1] vs [13]", .kind = DY_OP_LESS, .n_in = 2,
     .in = {U8(2, 7, 1), U8(1, 13)}},
    {.label = "equal i32 [13] vs [13] (one repeated operand)", .kind = DY_OP_EQUAL, .n_in = 2,
     .in = {I32(1, 13), I32(1, 13)}, .consts = 1u},
    {.label = "greater i32 [B,7] vs [1]", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {I32(2, -1, 7), I32(1, 1)}},
    {.label = "equal f32 vs i64 rejected", .kind = DY_OP_EQUAL, .n_in = 2,
     .in = {F32(1, 3), I64(1, 3)}, .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "greater [3] vs [4] rejected", .kind = DY_OP_GREATER, .n_in = 2,
     .in = {F32(1, 3), F32(1, 4)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* where: three-way broadcasting */
    {.label = "where by hand", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(1, 3), F32(1, 3), F32(1, 3)}, .data = {where_c, where_x, where_y},
     EXPECT(where_out)},
    {.label = "where i8 [B,7] ? [7] : [B,1]", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(2, -1, 7), I8(1, 7), I8(2, -1, 1)}},
    {.label = "where i32 [13] ? [13] : rank-0", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(1, 13), I32(1, 13), I32(0, 0)}},
    {.label = "where i64 [2,1] ? rank-0 : [3] by hand", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(2, 2, 1), I64(0, 0), I64(1, 3)}, .data = {where_c2, where_x2, where_y2},
     EXPECT(where_out2)},
    {.label = "where [B,7] ? [7] : scalar", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(2, -1, 7), F32(1, 7), SCALAR_F32}},
    {.label = "where [7,1] ? [1,13] : [B,7,13]", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(2, 7, 1), F32(2, 1, 13), F32(3, -1, 7, 13)}},
    {.label = "where weight cond [13] ? [B,13] : [B,1]", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(1, 13), F32(2, -1, 13), F32(2, -1, 1)}, .consts = 1, .batch = 1},
    {.label = "where i64 [B,1,7] ? [13,1] : [7]", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(3, -1, 1, 7), I64(2, 13, 1), I64(1, 7)}, .lo = -9, .hi = 9},
    {.label = "where bool values", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(1, 13), BOOL(1, 13), BOOL(0, 0)}},
    {.label = "where f32 condition rejected", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {F32(1, 3), F32(1, 3), F32(1, 3)}, .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "where f32 : i64 rejected", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(1, 3), F32(1, 3), I64(1, 3)}, .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "where [3] ? [3] : [4] rejected", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(1, 3), F32(1, 3), F32(1, 4)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* cast, in every direction */
    {.label = "cast f32->i64 by hand (trunc, saturate, NaN 0)", .kind = DY_OP_CAST, .n_in = 1,
     .in = {F32(1, 12)}, CAST(DY_I64), .data = {cast_f_x}, EXPECT(cast_f_i64_y)},
    {.label = "cast f32->i64 [7,13] [-100,100)", .kind = DY_OP_CAST, .n_in = 1,
     .in = {F32(2, 7, 13)}, CAST(DY_I64), .lo = -100, .hi = 100},
    {.label = "cast f32->bool by hand", .kind = DY_OP_CAST, .n_in = 1, .in = {F32(1, 6)},
     CAST(DY_BOOL), .data = {cast_fb_x}, EXPECT(cast_f_bool_y)},
    {.label = "cast f32->bool [B,7]", .kind = DY_OP_CAST, .n_in = 1, .in = {F32(2, -1, 7)},
     CAST(DY_BOOL)},
    {.label = "cast i64->f32 by hand", .kind = DY_OP_CAST, .n_in = 1, .in = {I64(1, 6)},
     CAST(DY_F32), .data = {cast_i_x}, EXPECT(cast_i_f32_y)},
    {.label = "cast i64->f32 [B,13] [-1000,1000)", .kind = DY_OP_CAST, .n_in = 1,
     .in = {I64(2, -1, 13)}, CAST(DY_F32), .lo = -1000, .hi = 1000},
    {.label = "cast i64->bool by hand", .kind = DY_OP_CAST, .n_in = 1, .in = {I64(1, 6)},
     CAST(DY_BOOL), .data = {cast_i_x}, EXPECT(cast_i_bool_y)},
    {.label = "cast bool->f32 by hand", .kind = DY_OP_CAST, .n_in = 1, .in = {BOOL(1, 4)},
     CAST(DY_F32), .data = {cast_b_x}, EXPECT(cast_b_y)},
    {.label = "cast bool->i64 by hand", .kind = DY_OP_CAST, .n_in = 1, .in = {BOOL(1, 4)},
     CAST(DY_I64), .data = {cast_b_x}, EXPECT(cast_b_y)},
    {.label = "cast bool->i64 [B,1,13]", .kind = DY_OP_CAST, .n_in = 1, .in = {BOOL(3, -1, 1, 13)},
     CAST(DY_I64)},
    {.label = "cast f32->f32 rank-0", .kind = DY_OP_CAST, .n_in = 1, .in = {SCALAR_F32},
     CAST(DY_F32)},
    {.label = "cast i64->i64 [7]", .kind = DY_OP_CAST, .n_in = 1, .in = {I64(1, 7)}, CAST(DY_I64)},
    {.label = "cast bool->bool [13]", .kind = DY_OP_CAST, .n_in = 1, .in = {BOOL(1, 13)},
     CAST(DY_BOOL)},
    /* the integer dtypes: f32 saturates, wider integers wrap */
    {.label = "cast f32->i8 [B,13] [-300,300) saturating", .kind = DY_OP_CAST, .n_in = 1,
     .in = {F32(2, -1, 13)}, CAST(DY_I8), .lo = -300, .hi = 300},
    {.label = "cast f32->u8 [2,7] [-300,300)", .kind = DY_OP_CAST, .n_in = 1,
     .in = {F32(2, 2, 7)}, CAST(DY_U8), .lo = -300, .hi = 300},
    {.label = "cast f32->i32 [9] [-1e4,1e4)", .kind = DY_OP_CAST, .n_in = 1, .in = {F32(1, 9)},
     CAST(DY_I32), .lo = -1e4f, .hi = 1e4f},
    {.label = "cast i64->i8 wrapping [13]", .kind = DY_OP_CAST, .n_in = 1, .in = {I64(1, 13)},
     CAST(DY_I8), .lo = -1000, .hi = 1000},
    {.label = "cast i8->f32 [B,7]", .kind = DY_OP_CAST, .n_in = 1, .in = {I8(2, -1, 7)},
     CAST(DY_F32)},
    {.label = "cast u8->i32 [13]", .kind = DY_OP_CAST, .n_in = 1, .in = {U8(1, 13)},
     CAST(DY_I32)},
    {.label = "cast i32->u8 wrapping [13]", .kind = DY_OP_CAST, .n_in = 1, .in = {I32(1, 13)},
     CAST(DY_U8)},
    {.label = "cast i32->i64 [7]", .kind = DY_OP_CAST, .n_in = 1, .in = {I32(1, 7)},
     CAST(DY_I64)},
    {.label = "cast i8->bool [13]", .kind = DY_OP_CAST, .n_in = 1, .in = {I8(1, 13)},
     CAST(DY_BOOL)},
    {.label = "cast bool->u8 [7]", .kind = DY_OP_CAST, .n_in = 1, .in = {BOOL(1, 7)},
     CAST(DY_U8)},
    {.label = "cast to dtype 7 rejected", .kind = DY_OP_CAST, .n_in = 1, .in = {F32(1, 3)},
     CAST(7), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* empty tensors (a 0 dim) */
    {.label = "exp [0,7] empty", .kind = DY_OP_EXP, .n_in = 1, .in = {F32(2, 0, 7)}},
    {.label = "where [0,1] ? [7] : [0,7] empty", .kind = DY_OP_WHERE, .n_in = 3,
     .in = {BOOL(2, 0, 1), F32(1, 7), F32(2, 0, 7)}},
    {.label = "less [7,0] vs [0] empty", .kind = DY_OP_LESS, .n_in = 2,
     .in = {I64(2, 7, 0), I64(1, 0)}},
};

const dy_op_case_list dy_op_cases_math = DY_CASE_LIST(cases);
