/* op_cases_extra.c - op table cases for the extra family
 * (ir/ops_extra.def): trigonometry, mod, reduce_prod, cumsum, the element-
 * and tuple-indexed gathers and scatters, top_k and det.
 *
 * Shapes break naive code: odd sizes, size-1 dims, the -1 batch (run at 2,
 * 3 and 1) on either side of the axis, negative indices, duplicate scatter
 * indices (the last write wins, or they combine), ties in top_k. Each op
 * has hand-computed values on a small input; bad inputs (an index out of
 * range, a wrong dtype or shape) must be refused with the right status.
 */
#include <math.h>

#include "op_table.h"

#define AXIS(a) DY_ATTR_I("axis", (a))
#define AXES(n, ...) DY_ATTR_IS("axes", ((const int64_t[]){__VA_ARGS__}), n)
#define NO_AXES DY_ATTR_IS("axes", NULL, 0)
#define EXPECT(arr) .expect = (arr), .n_expect = (int)(sizeof(arr) / sizeof((arr)[0]))
#define FMOD(f) .n_attrs = 1, .attrs = {DY_ATTR_I("fmod", (f))}
#define PROD(axes_attr, keep) .n_attrs = 2, .attrs = {axes_attr, DY_ATTR_I("keepdim", keep)}
#define CUMSUM(a, ex, rev)                                                      \
  .n_attrs = 3, .attrs = {AXIS(a), DY_ATTR_I("exclusive", ex), DY_ATTR_I("reverse", rev)}
#define SCAT(a, red) .n_attrs = 2, .attrs = {AXIS(a), DY_ATTR_S("reduction", red)}
#define SCATND(red) .n_attrs = 1, .attrs = {DY_ATTR_S("reduction", red)}
#define TOPK(k, a, l) \
  .n_attrs = 3, .attrs = {DY_ATTR_I("k", k), AXIS(a), DY_ATTR_I("largest", l)}

/* ---- hand-computed data ---- */

static const float trig_x[] = {0, 0.5f, -1, 2};
static const float sin_y[] = {0, 0.479425539f, -0.841470985f, 0.909297427f};
static const float cos_y[] = {1, 0.877582562f, 0.540302306f, -0.416146837f};
static const float tan_y[] = {0, 0.546302490f, -1.557407725f, -2.185039863f};
static const float atan_y[] = {0, 0.463647609f, -0.785398163f, 1.107148718f};
static const float inv_x[] = {0, 0.5f, -1, 1, 2};                  /* 2: NaN */
static const float asin_y[] = {0, 0.523598776f, -1.570796327f, 1.570796327f};
static const float acos_y[] = {1.570796327f, 1.047197551f, 3.141592654f, 0};

static const float mod_a[] = {-4.3f, 7, 5, 4.5f, -7, 8};
static const float mod_b[] = {2.1f, -3, 8, -2, 3, 5};
static const float fmod_y[] = {-0.1f, 1, 5, 0.5f, -1, 3};         /* C fmod */
static const float pymod_y[] = {2, -2, 5, -1.5f, 2, 3};           /* Python % */
static const int64_t imod_a[] = {-4, 7, 5, 4, -7, 8, 9, INT64_MIN};
static const int64_t imod_b[] = {2, -3, 8, -2, 3, 5, 0, -1};
static const float ifmod_y[] = {0, 1, 5, 0, -1, 3, 0, 0};
static const float ipymod_y[] = {0, -2, 5, 0, 2, 3, 0, 0};

static const float mod_big_a[] = {1e6f, -123456.7f, 3e7f, 1e-30f, -0.0f, 5, INFINITY, 7};
static const float mod_big_b[] = {0.3f, 7.1f, -0.7f, 3, 2, INFINITY, 2, 0};

static const float p_x[] = {1, 2, 3, 4, 5, 6};                    /* [2,3] */
static const float prod_rows[] = {6, 120};
static const float prod_cols[] = {4, 10, 18};
static const float prod_all[] = {720};
/* zeros: one in a row (its gradient is the others' product), two, none */
static const float p0_x[] = {0, 2, 3, 0, 0, 5, 1, 2, 4};          /* [3,3] */
static const float prod0_rows[] = {0, 0, 8};

static const float cs_x[] = {1, 2, 3, 4, 5, 6};                   /* [2,3] */
static const float cs_y[] = {1, 3, 6, 4, 9, 15};                  /* axis 1 */
static const float cs_ex_rev_y[] = {5, 3, 0, 11, 6, 0};           /* exclusive, reverse */
static const float cs_col_y[] = {1, 2, 3, 5, 7, 9};               /* axis 0 */

static const float ge_x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};          /* [3,3] */
static const int64_t ge_idx[] = {1, -1, 0, 2, 0, 0};              /* [2,3], axis 0 */
static const float ge_y[] = {4, 8, 3, 7, 2, 3};
static const int64_t ge_bad[] = {1, 3, 0, 0, 0, 0};

static const float se_x[] = {1, 2, 3, 4, 5};                      /* [1,5] */
static const int64_t se_idx[] = {1, 3, 1};                        /* [1,3], axis 1 */
static const float se_upd[] = {1.1f, 2.1f, 3.5f};
static const float se_none_y[] = {1, 3.5f, 3, 2.1f, 5};           /* the last write wins */
static const float se_add_y[] = {1, 6.6f, 3, 6.1f, 5};
static const float se_max_y[] = {1, 3.5f, 3, 4, 5};
static const float se_upd0[] = {0, 2, 3};                         /* a zero update */
static const float se_mul0_y[] = {1, 0, 3, 8, 5};
static const float se_upd_min[] = {1.5f, 4, 0.5f};                /* a tie with x at 3 */
static const float se_min_y[] = {1, 0.5f, 3, 4, 5};

static const float gn_x[] = {0, 1, 2, 3, 4, 5, 6, 7};             /* [2,2,2] */
static const int64_t gn_idx[] = {0, 1, 1, 0};                     /* [2,1,2] */
static const float gn_y[] = {2, 3, 4, 5};                         /* [2,1,2] */
static const int64_t gn_bidx[] = {1, 0};                          /* [2,1], batch_dims 1 */
static const float gn_by[] = {2, 3, 4, 5};                        /* [2,2] */

static const float sn_x[] = {1, 2, 3, 4, 5, 6, 7, 8};             /* [8] */
static const int64_t sn_idx[] = {4, 3, 1, -1};                   /* [4,1] */
static const float sn_upd[] = {9, 10, 11, 12};
static const float sn_y[] = {1, 11, 3, 10, 9, 6, 7, 12};
static const float sn_mul_y[] = {1, 22, 3, 40, 45, 6, 7, 96};

static const float tk_x[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}; /* [2,6] */
static const float tk_largest[] = {5, 4, 2, 5, 1, 2};             /* k 3 per row */
static const float tk_smallest[] = {1, 3, 0, 0, 3, 2};
static const float tk_nan_x[] = {1, NAN, 3, 3};
static const float tk_nan_y[] = {1, 2, 3};

static const float det_x[] = {1, 2, 3, 4, 2, 0, 0, 2, 0, 1, 1, 0};/* [3,2,2] */
static const float det_y[] = {-2, 4, -1};
static const float det3_x[] = {2, -1, 0, -1, 2, -1, 0, -1, 2};    /* [3,3] */
static const float det3_y[] = {4};
static const float det_sing_x[] = {1, 2, 2, 4};
static const float det_sing_y[] = {0};
static const float inv2_x[] = {4, 7, 2, 6, 2, 0, 0, 0.5f};         /* [2,2,2] */
static const float inv2_y[] = {0.6f, -0.7f, -0.2f, 0.4f, 0.5f, 0, 0, 2};
static const float inv3_x[] = {0, 1, 2, 1, 0, 3, 4, -3, 8};       /* [3,3], pivots */
static const float inv3_y[] = {-4.5f, 7, -1.5f, -2, 4, -1, 1.5f, -2, 0.5f};

/* ONNX's GridSample node tests: X 0..5 as [1,1,3,2], one grid */
static const float gs_x[] = {0, 1, 2, 3, 4, 5};
static const float gs_grid[] = {-1, -1, -0.5f, -0.5f, -0.2f, -0.2f, 0, 0,
                                0, 0, -0.2f, -0.2f, 0.5f, 0.5f, 1, 1};
static const float gs_far[] = {-10, -10, -5, -5, -0.2f, -0.2f, 10, 10,
                               10, 10, -0.2f, -0.2f, 5, 5, 10, 10};
static const float gs_bilinear_y[] = {0, 0.5f, 1.7f, 2.5f, 2.5f, 1.7f, 4.5f, 1.25f};
static const float gs_corners_y[] = {0, 1.25f, 2, 2.5f, 2.5f, 2, 3.75f, 5};
static const float gs_nearest_y[] = {0, 0, 2, 2, 2, 2, 5, 0};
/* (the node test lists these to 4 digits) */
static const float gs_bicubic_y[] = {-0.140625f, 0.3828125f, 1.75555325f, 2.96875f,
                                     2.96875f, 1.75555325f, 5.14453125f, 1.390625f};
static const float gs_border_y[] = {0, 0, 1.7f, 5, 5, 1.7f, 5, 5};
static const float gs_reflect_y[] = {2.5f, 0, 1.7f, 2.5f, 2.5f, 1.7f, 5, 2.5f};

/* roi_align on a 4x4 ramp: x[i][j] = 4 i + j */
static const float ra_x[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const float ra_rois[] = {0, 0, 3, 3, 1, 1, 2, 2};
static const int64_t ra_b[] = {0, 0};
static const int64_t ra_bad[] = {0, 1};
/* output_half_pixel, 1x1 bins, sampling 1: one sample at the bin centre
 * (x, y) = (0.75, 0.75) + 1.5 (i, j) -> 4 y + x for roi 0; roi 1 is 1 x 1
 * at (1, 1): samples at 1.25 and 1.75 */
/* grid_sample_grad: one point at the centre of a 2 x 2 plane, bilinear
 * with align_corners: a quarter of dy to each pixel */
static const float gsg_dy[] = {4};
static const float gsg_grid[] = {0, 0};
static const float gsg_y[] = {1, 1, 1, 1};
static const float ra_y[] = {3.75f, 5.25f, 9.75f, 11.25f, 6.25f, 6.75f, 8.25f, 8.75f};

#define GS(m, p, ac)                                                          \
  .n_attrs = 3, .attrs = {DY_ATTR_S("mode", m), DY_ATTR_S("padding_mode", p), \
                          DY_ATTR_I("align_corners", ac)}
#define RA(m, oh, ow, sr, scale, half)                                           \
  .n_attrs = 6, .attrs = {DY_ATTR_S("mode", m), DY_ATTR_I("output_height", oh),  \
                          DY_ATTR_I("output_width", ow), DY_ATTR_I("sampling_ratio", sr), \
                          DY_ATTR_F("spatial_scale", scale), DY_ATTR_I("half_pixel", half)}

static const dy_op_case cases[] = {
    /* ---- trigonometry ---- */
    {.label = "sin by hand", .kind = DY_OP_SIN, .n_in = 1, .in = {F32(1, 4)}, .data = {trig_x},
     EXPECT(sin_y)},
    {.label = "sin [B,13,7]", .kind = DY_OP_SIN, .n_in = 1, .in = {F32(3, -1, 13, 7)},
     .lo = -10, .hi = 10},
    {.label = "sin [64] over [-1000, 1000)", .kind = DY_OP_SIN, .n_in = 1, .in = {F32(1, 64)},
     .lo = -1000, .hi = 1000, .tol = 1e-5},
    {.label = "cos by hand", .kind = DY_OP_COS, .n_in = 1, .in = {F32(1, 4)}, .data = {trig_x},
     EXPECT(cos_y)},
    {.label = "cos [B,5] batch 3", .kind = DY_OP_COS, .n_in = 1, .in = {F32(2, -1, 5)},
     .lo = -10, .hi = 10, .batch = 3},
    {.label = "tan by hand", .kind = DY_OP_TAN, .n_in = 1, .in = {F32(1, 4)}, .data = {trig_x},
     EXPECT(tan_y), .tol = 1e-4},
    {.label = "tan [B,33] over [-50, 50)", .kind = DY_OP_TAN, .n_in = 1, .in = {F32(2, -1, 33)},
     .lo = -50, .hi = 50, .tol = 1e-4},
    {.label = "tan scalar", .kind = DY_OP_TAN, .n_in = 1, .in = {SCALAR_F32}, .lo = -1, .hi = 1},
    {.label = "asin by hand (2: NaN)", .kind = DY_OP_ASIN, .n_in = 1, .in = {F32(1, 5)},
     .data = {inv_x}, EXPECT(asin_y)},
    {.label = "asin [B,9] batch 1", .kind = DY_OP_ASIN, .n_in = 1, .in = {F32(2, -1, 9)},
     .batch = 1},
    {.label = "acos by hand (2: NaN)", .kind = DY_OP_ACOS, .n_in = 1, .in = {F32(1, 5)},
     .data = {inv_x}, EXPECT(acos_y)},
    {.label = "acos [4,3]", .kind = DY_OP_ACOS, .n_in = 1, .in = {F32(2, 4, 3)}},
    {.label = "atan by hand", .kind = DY_OP_ATAN, .n_in = 1, .in = {F32(1, 4)}, .data = {trig_x},
     EXPECT(atan_y)},
    {.label = "atan [B,3,1]", .kind = DY_OP_ATAN, .n_in = 1, .in = {F32(3, -1, 3, 1)},
     .lo = -100, .hi = 100},
    {.label = "sin i64 rejected", .kind = DY_OP_SIN, .n_in = 1, .in = {I64(1, 3)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},

    /* ---- mod ---- */
    {.label = "mod fmod f32 by hand", .kind = DY_OP_MOD, .n_in = 2, .in = {F32(1, 6), F32(1, 6)},
     FMOD(1), .data = {mod_a, mod_b}, EXPECT(fmod_y), .tol = 1e-5},
    {.label = "mod python f32 by hand", .kind = DY_OP_MOD, .n_in = 2,
     .in = {F32(1, 6), F32(1, 6)}, FMOD(0), .data = {mod_a, mod_b}, EXPECT(pymod_y), .tol = 1e-5},
    {.label = "mod fmod i64 by hand (by 0 and INT64_MIN % -1: 0)", .kind = DY_OP_MOD, .n_in = 2,
     .in = {I64(1, 8), I64(1, 8)}, FMOD(1), .data = {imod_a, imod_b}, EXPECT(ifmod_y)},
    {.label = "mod python i64 by hand", .kind = DY_OP_MOD, .n_in = 2,
     .in = {I64(1, 8), I64(1, 8)}, FMOD(0), .data = {imod_a, imod_b}, EXPECT(ipymod_y)},
    {.label = "mod f32 [B,7] % [7] python", .kind = DY_OP_MOD, .n_in = 2,
     .in = {F32(2, -1, 7), F32(1, 7)}, FMOD(0), .lo = 0.5f, .hi = 9},
    {.label = "mod i64 [3,1] % [4] weight", .kind = DY_OP_MOD, .n_in = 2,
     .in = {I64(2, 3, 1), I64(1, 4)}, .consts = 2, FMOD(1), .lo = -20, .hi = 20},
    {.label = "mod fmod f32 large quotients, zero, infinities (exact)", .kind = DY_OP_MOD,
     .n_in = 2, .in = {F32(1, 8), F32(1, 8)}, FMOD(1), .data = {mod_big_a, mod_big_b},
     .no_grad = true},
    {.label = "mod python f32 large quotients, zero, infinities", .kind = DY_OP_MOD, .n_in = 2,
     .in = {F32(1, 8), F32(1, 8)}, FMOD(0), .data = {mod_big_a, mod_big_b},
     .no_grad = true},
    {.label = "mod f32 % i64 rejected", .kind = DY_OP_MOD, .n_in = 2,
     .in = {F32(1, 3), I64(1, 3)}, FMOD(1), .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "mod fmod 2 rejected", .kind = DY_OP_MOD, .n_in = 2, .in = {F32(1, 3), F32(1, 3)},
     FMOD(2), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- reduce_prod ---- */
    {.label = "reduce_prod [2,3] axis 1 by hand", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(2, 2, 3)}, PROD(AXES(1, 1), 0), .data = {p_x}, EXPECT(prod_rows)},
    {.label = "reduce_prod [2,3] axis 0 keepdim by hand", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(2, 2, 3)}, PROD(AXES(1, 0), 1), .data = {p_x}, EXPECT(prod_cols)},
    {.label = "reduce_prod all by hand", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(2, 2, 3)}, PROD(NO_AXES, 0), .data = {p_x}, EXPECT(prod_all)},
    {.label = "reduce_prod rows with one, two and no zeros by hand", .kind = DY_OP_REDUCE_PROD,
     .n_in = 1, .in = {F32(2, 3, 3)}, PROD(AXES(1, 1), 0), .data = {p0_x}, EXPECT(prod0_rows)},
    {.label = "reduce_prod [B,3,5] axes -1,1", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(3, -1, 3, 5)}, PROD(AXES(2, -1, 1), 1), .lo = 0.5f, .hi = 1.5f},
    {.label = "reduce_prod [B,4] over the batch", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(2, -1, 4)}, PROD(AXES(1, 0), 0), .batch = 3},
    {.label = "reduce_prod i64 [4,3] axis 0", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {I64(2, 4, 3)}, PROD(AXES(1, 0), 0), .lo = -9, .hi = 9},
    {.label = "reduce_prod [2,0] axis 1 (empty: 1)", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(2, 2, 0)}, PROD(AXES(1, 1), 0)},
    {.label = "reduce_prod repeated axis rejected", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {F32(2, 2, 3)}, PROD(AXES(2, 1, -1), 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "reduce_prod bool rejected", .kind = DY_OP_REDUCE_PROD, .n_in = 1,
     .in = {BOOL(1, 3)}, PROD(NO_AXES, 0), .expect_error = DY_STATUS_DTYPE_MISMATCH},

    /* ---- cumsum ---- */
    {.label = "cumsum [2,3] axis 1 by hand", .kind = DY_OP_CUMSUM, .n_in = 1,
     .in = {F32(2, 2, 3)}, CUMSUM(1, 0, 0), .data = {cs_x}, EXPECT(cs_y)},
    {.label = "cumsum exclusive reverse by hand", .kind = DY_OP_CUMSUM, .n_in = 1,
     .in = {F32(2, 2, 3)}, CUMSUM(-1, 1, 1), .data = {cs_x}, EXPECT(cs_ex_rev_y)},
    {.label = "cumsum axis 0 by hand", .kind = DY_OP_CUMSUM, .n_in = 1, .in = {F32(2, 2, 3)},
     CUMSUM(0, 0, 0), .data = {cs_x}, EXPECT(cs_col_y)},
    {.label = "cumsum [B,5,3] axis 1 exclusive", .kind = DY_OP_CUMSUM, .n_in = 1,
     .in = {F32(3, -1, 5, 3)}, CUMSUM(1, 1, 0)},
    {.label = "cumsum [B,4] along the batch, reverse", .kind = DY_OP_CUMSUM, .n_in = 1,
     .in = {F32(2, -1, 4)}, CUMSUM(0, 0, 1), .batch = 3},
    {.label = "cumsum i64 [7]", .kind = DY_OP_CUMSUM, .n_in = 1, .in = {I64(1, 7)},
     CUMSUM(0, 0, 0), .lo = -100, .hi = 100},
    {.label = "cumsum scalar rejected", .kind = DY_OP_CUMSUM, .n_in = 1, .in = {SCALAR_F32},
     CUMSUM(0, 0, 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- gather_elements ---- */
    {.label = "gather_elements [3,3] axis 0 by hand", .kind = DY_OP_GATHER_ELEMENTS, .n_in = 2,
     .in = {F32(2, 3, 3), I64(2, 2, 3)}, .n_attrs = 1, .attrs = {AXIS(0)},
     .data = {ge_x, ge_idx}, EXPECT(ge_y)},
    {.label = "gather_elements [B,7,4] axis -1 index [B,5,6]", .kind = DY_OP_GATHER_ELEMENTS,
     .n_in = 2, .in = {F32(3, -1, 7, 4), I64(3, -1, 5, 6)}, .n_attrs = 1, .attrs = {AXIS(-1)},
     .lo = -4, .hi = 4},
    {.label = "gather_elements [B,3] along the batch", .kind = DY_OP_GATHER_ELEMENTS, .n_in = 2,
     .in = {F32(2, -1, 3), I64(2, 4, 3)}, .n_attrs = 1, .attrs = {AXIS(0)}, .lo = 0, .hi = 3,
     .batch = 3},
    {.label = "gather_elements i64 [5,2] axis 1", .kind = DY_OP_GATHER_ELEMENTS, .n_in = 2,
     .in = {I64(2, 5, 2), I64(2, 5, 3)}, .n_attrs = 1, .attrs = {AXIS(1)}, .lo = 0, .hi = 2},
    {.label = "gather_elements index 3 out of range refused", .kind = DY_OP_GATHER_ELEMENTS,
     .n_in = 2, .in = {F32(2, 3, 3), I64(2, 2, 3)}, .n_attrs = 1, .attrs = {AXIS(0)},
     .data = {ge_x, ge_bad}, .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "gather_elements index wider off the axis rejected",
     .kind = DY_OP_GATHER_ELEMENTS, .n_in = 2, .in = {F32(2, 3, 3), I64(2, 2, 4)},
     .n_attrs = 1, .attrs = {AXIS(0)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- scatter_elements ---- */
    {.label = "scatter_elements none, duplicates by hand", .kind = DY_OP_SCATTER_ELEMENTS,
     .n_in = 3, .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 3)}, SCAT(1, "none"),
     .data = {se_x, se_idx, se_upd}, EXPECT(se_none_y)},
    {.label = "scatter_elements add by hand", .kind = DY_OP_SCATTER_ELEMENTS, .n_in = 3,
     .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 3)}, SCAT(-1, "add"),
     .data = {se_x, se_idx, se_upd}, EXPECT(se_add_y)},
    {.label = "scatter_elements max by hand", .kind = DY_OP_SCATTER_ELEMENTS, .n_in = 3,
     .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 3)}, SCAT(1, "max"),
     .data = {se_x, se_idx, se_upd}, EXPECT(se_max_y)},
    {.label = "scatter_elements mul with a zero update by hand", .kind = DY_OP_SCATTER_ELEMENTS,
     .n_in = 3, .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 3)}, SCAT(1, "mul"),
     .data = {se_x, se_idx, se_upd0}, EXPECT(se_mul0_y)},
    {.label = "scatter_elements min with a tie by hand", .kind = DY_OP_SCATTER_ELEMENTS,
     .n_in = 3, .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 3)}, SCAT(1, "min"),
     .data = {se_x, se_idx, se_upd_min}, EXPECT(se_min_y)},
    {.label = "scatter_elements [B,6,3] axis 1 mul", .kind = DY_OP_SCATTER_ELEMENTS, .n_in = 3,
     .in = {F32(3, -1, 6, 3), I64(3, -1, 4, 2), F32(3, -1, 4, 2)}, SCAT(1, "mul"),
     .lo = -6, .hi = 6},
    {.label = "scatter_elements i64 [4,4] axis 0 min", .kind = DY_OP_SCATTER_ELEMENTS,
     .n_in = 3, .in = {I64(2, 4, 4), I64(2, 3, 4), I64(2, 3, 4)}, SCAT(0, "min"), .lo = 0,
     .hi = 4},
    {.label = "scatter_elements bool [3,2] add (or)", .kind = DY_OP_SCATTER_ELEMENTS, .n_in = 3,
     .in = {BOOL(2, 3, 2), I64(2, 3, 2), BOOL(2, 3, 2)}, SCAT(1, "add"), .lo = 0, .hi = 2},
    {.label = "scatter_elements unknown reduction rejected", .kind = DY_OP_SCATTER_ELEMENTS,
     .n_in = 3, .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 3)}, SCAT(1, "mean"),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "scatter_elements updates of another shape rejected",
     .kind = DY_OP_SCATTER_ELEMENTS, .n_in = 3,
     .in = {F32(2, 1, 5), I64(2, 1, 3), F32(2, 1, 2)}, SCAT(1, "none"),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- gather_nd ---- */
    {.label = "gather_nd [2,2,2] by [2,1,2] by hand", .kind = DY_OP_GATHER_ND, .n_in = 2,
     .in = {F32(3, 2, 2, 2), I64(3, 2, 1, 2)}, .n_attrs = 1,
     .attrs = {DY_ATTR_I("batch_dims", 0)}, .data = {gn_x, gn_idx}, EXPECT(gn_y)},
    {.label = "gather_nd batch_dims 1 by hand", .kind = DY_OP_GATHER_ND, .n_in = 2,
     .in = {F32(3, 2, 2, 2), I64(2, 2, 1)}, .n_attrs = 1, .attrs = {DY_ATTR_I("batch_dims", 1)},
     .data = {gn_x, gn_bidx}, EXPECT(gn_by)},
    {.label = "gather_nd [B,5,4,3] batch_dims 1 by [B,6,2]", .kind = DY_OP_GATHER_ND, .n_in = 2,
     .in = {F32(4, -1, 5, 4, 3), I64(3, -1, 6, 2)}, .n_attrs = 1,
     .attrs = {DY_ATTR_I("batch_dims", 1)}, .lo = -4, .hi = 4},
    {.label = "gather_nd i64 [6,5] by [3,2]", .kind = DY_OP_GATHER_ND, .n_in = 2,
     .in = {I64(2, 6, 5), I64(2, 3, 2)}, .n_attrs = 1, .attrs = {DY_ATTR_I("batch_dims", 0)},
     .lo = 0, .hi = 5},
    {.label = "gather_nd tuple too long rejected", .kind = DY_OP_GATHER_ND, .n_in = 2,
     .in = {F32(2, 3, 3), I64(2, 2, 3)}, .n_attrs = 1, .attrs = {DY_ATTR_I("batch_dims", 0)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "gather_nd index out of range refused", .kind = DY_OP_GATHER_ND, .n_in = 2,
     .in = {F32(3, 2, 2, 2), I64(3, 2, 1, 2)}, .n_attrs = 1,
     .attrs = {DY_ATTR_I("batch_dims", 0)}, .data = {gn_x, ge_bad},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- scatter_nd ---- */
    {.label = "scatter_nd [8] by [4,1] by hand", .kind = DY_OP_SCATTER_ND, .n_in = 3,
     .in = {F32(1, 8), I64(2, 4, 1), F32(1, 4)}, SCATND("none"),
     .data = {sn_x, sn_idx, sn_upd}, EXPECT(sn_y)},
    {.label = "scatter_nd mul by hand", .kind = DY_OP_SCATTER_ND, .n_in = 3,
     .in = {F32(1, 8), I64(2, 4, 1), F32(1, 4)}, SCATND("mul"),
     .data = {sn_x, sn_idx, sn_upd}, EXPECT(sn_mul_y)},
    {.label = "scatter_nd [4,5,3] slices by [2,1] add", .kind = DY_OP_SCATTER_ND, .n_in = 3,
     .in = {F32(3, 4, 5, 3), I64(2, 2, 1), F32(3, 2, 5, 3)}, SCATND("add"), .lo = -4, .hi = 4},
    {.label = "scatter_nd [4,4] elements by [B,2] max", .kind = DY_OP_SCATTER_ND, .n_in = 3,
     .in = {F32(2, 4, 4), I64(2, -1, 2), F32(1, -1)}, SCATND("max"), .lo = 0, .hi = 4,
     .batch = 3},
    {.label = "scatter_nd updates of another shape rejected", .kind = DY_OP_SCATTER_ND,
     .n_in = 3, .in = {F32(1, 8), I64(2, 4, 1), F32(1, 3)}, SCATND("none"),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- top_k ---- */
    {.label = "top_k 3 largest, ties by hand", .kind = DY_OP_TOP_K, .n_in = 1,
     .in = {F32(2, 2, 6)}, TOPK(3, -1, 1), .data = {tk_x}, EXPECT(tk_largest)},
    {.label = "top_k 3 smallest by hand", .kind = DY_OP_TOP_K, .n_in = 1, .in = {F32(2, 2, 6)},
     TOPK(3, 1, 0), .data = {tk_x}, EXPECT(tk_smallest)},
    {.label = "top_k NaN counts as largest by hand", .kind = DY_OP_TOP_K, .n_in = 1,
     .in = {F32(1, 4)}, TOPK(3, 0, 1), .data = {tk_nan_x}, EXPECT(tk_nan_y)},
    {.label = "top_k [B,9,4] axis 1 k 9", .kind = DY_OP_TOP_K, .n_in = 1,
     .in = {F32(3, -1, 9, 4)}, TOPK(9, 1, 1)},
    {.label = "top_k i64 [5,7] axis 0 k 2 smallest", .kind = DY_OP_TOP_K, .n_in = 1,
     .in = {I64(2, 5, 7)}, TOPK(2, 0, 0), .lo = -3, .hi = 3},
    {.label = "top_k k larger than the axis rejected", .kind = DY_OP_TOP_K, .n_in = 1,
     .in = {F32(1, 4)}, TOPK(5, 0, 1), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "top_k k 0 rejected", .kind = DY_OP_TOP_K, .n_in = 1, .in = {F32(2, 3, 4)},
     TOPK(0, 1, 1), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- det ---- */
    {.label = "det [3,2,2] by hand", .kind = DY_OP_DET, .n_in = 1, .in = {F32(3, 3, 2, 2)},
     .data = {det_x}, EXPECT(det_y)},
    {.label = "det [3,3] by hand (pivoting)", .kind = DY_OP_DET, .n_in = 1, .in = {F32(2, 3, 3)},
     .data = {det3_x}, EXPECT(det3_y), .tol = 1e-5},
    {.label = "det singular by hand", .kind = DY_OP_DET, .n_in = 1, .in = {F32(2, 2, 2)},
     .data = {det_sing_x}, EXPECT(det_sing_y),
     .no_grad = true /* its gradient goes through the inverse: NaN here */},
    {.label = "det [B,5,5]", .kind = DY_OP_DET, .n_in = 1, .in = {F32(3, -1, 5, 5)},
     .tol = 1e-4},
    {.label = "det [1,1]", .kind = DY_OP_DET, .n_in = 1, .in = {F32(2, 1, 1)}},
    {.label = "det not square rejected", .kind = DY_OP_DET, .n_in = 1, .in = {F32(2, 2, 3)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- inverse ---- */
    {.label = "inverse [2,2,2] by hand", .kind = DY_OP_INVERSE, .n_in = 1,
     .in = {F32(3, 2, 2, 2)}, .data = {inv2_x}, EXPECT(inv2_y)},
    {.label = "inverse [3,3] by hand (a zero first pivot)", .kind = DY_OP_INVERSE, .n_in = 1,
     .in = {F32(2, 3, 3)}, .data = {inv3_x}, EXPECT(inv3_y)},
    {.label = "inverse [B,4,4]", .kind = DY_OP_INVERSE, .n_in = 1, .in = {F32(3, -1, 4, 4)},
     .tol = 1e-4},
    {.label = "inverse [1,1]", .kind = DY_OP_INVERSE, .n_in = 1, .in = {F32(2, 1, 1)},
     .lo = 0.5f, .hi = 2},
    {.label = "inverse not square rejected", .kind = DY_OP_INVERSE, .n_in = 1,
     .in = {F32(3, 2, 3, 2)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "inverse of i64 rejected", .kind = DY_OP_INVERSE, .n_in = 1, .in = {I64(2, 2, 2)},
     .expect_error = DY_STATUS_DTYPE_MISMATCH},

    /* ---- grid_sample (ONNX's node tests, their 4-digit values) ---- */
    {.label = "grid_sample bilinear zeros by hand", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("bilinear", "zeros", 0),
     .data = {gs_x, gs_grid}, EXPECT(gs_bilinear_y), .tol = 1e-4},
    {.label = "grid_sample bilinear align_corners by hand", .kind = DY_OP_GRID_SAMPLE,
     .n_in = 2, .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("bilinear", "zeros", 1),
     .data = {gs_x, gs_grid}, EXPECT(gs_corners_y), .tol = 1e-4},
    {.label = "grid_sample nearest by hand (half to even)", .kind = DY_OP_GRID_SAMPLE,
     .n_in = 2, .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("nearest", "zeros", 0),
     .data = {gs_x, gs_grid}, EXPECT(gs_nearest_y)},
    {.label = "grid_sample bicubic by hand", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("bicubic", "zeros", 0),
     .data = {gs_x, gs_grid}, EXPECT(gs_bicubic_y), .tol = 1e-4},
    {.label = "grid_sample border far out by hand", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("bilinear", "border", 0),
     .data = {gs_x, gs_far}, EXPECT(gs_border_y), .tol = 1e-4},
    {.label = "grid_sample reflection far out by hand", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("bilinear", "reflection", 0),
     .data = {gs_x, gs_far}, EXPECT(gs_reflect_y), .tol = 1e-4},
    {.label = "grid_sample [B,3,5,7] bicubic reflection align_corners", .kind = DY_OP_GRID_SAMPLE,
     .n_in = 2, .in = {F32(4, -1, 3, 5, 7), F32(4, -1, 4, 6, 2)},
     GS("bicubic", "reflection", 1), .lo = -1.5f, .hi = 1.5f},
    {.label = "grid_sample [2,2,4,4] nearest border", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 2, 2, 4, 4), F32(4, 2, 3, 3, 2)}, GS("nearest", "border", 0), .lo = -1.3f,
     .hi = 1.3f},
    {.label = "grid_sample [1,1,6,5] bicubic border", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 1, 1, 6, 5), F32(4, 1, 5, 2, 2)}, GS("bicubic", "border", 0), .lo = -2,
     .hi = 2},
    {.label = "grid_sample unknown mode rejected", .kind = DY_OP_GRID_SAMPLE, .n_in = 2,
     .in = {F32(4, 1, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("area", "zeros", 0),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "grid_sample grid of another batch rejected", .kind = DY_OP_GRID_SAMPLE,
     .n_in = 2, .in = {F32(4, 2, 1, 3, 2), F32(4, 1, 2, 4, 2)}, GS("bilinear", "zeros", 0),
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- roi_align ---- */
    {.label = "roi_align avg by hand", .kind = DY_OP_ROI_ALIGN, .n_in = 3,
     .in = {F32(4, 1, 1, 4, 4), F32(2, 2, 4), I64(1, 2)}, RA("avg", 2, 2, 1, 1.0, 0),
     .data = {ra_x, ra_rois, ra_b}, EXPECT(ra_y)},
    {.label = "roi_align [2,3,9,8] avg adaptive half_pixel", .kind = DY_OP_ROI_ALIGN,
     .n_in = 3, .in = {F32(4, 2, 3, 9, 8), F32(2, 5, 4), I64(1, 5)},
     RA("avg", 3, 2, 0, 1.0, 1), .lo = 0, .hi = 2},
    {.label = "roi_align [1,2,8,8] max sampling 2 scale 0.5", .kind = DY_OP_ROI_ALIGN,
     .n_in = 3, .in = {F32(4, 1, 2, 8, 8), F32(2, 4, 4), I64(1, 4)},
     RA("max", 2, 3, 2, 0.5, 0), .lo = 0, .hi = 1},
    {.label = "roi_align batch index out of range refused", .kind = DY_OP_ROI_ALIGN, .n_in = 3,
     .in = {F32(4, 1, 1, 4, 4), F32(2, 2, 4), I64(1, 2)}, RA("avg", 2, 2, 1, 1.0, 0),
     .data = {ra_x, ra_rois, ra_bad}, .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- grid_sample_grad(dy, grid, x), roi_align_grad(dy, rois, bi, x) ---- */
    {.label = "grid_sample_grad bilinear align_corners by hand", .kind = DY_OP_GRID_SAMPLE_GRAD,
     .n_in = 3, .in = {F32(4, 1, 1, 1, 1), F32(4, 1, 1, 1, 2), F32(4, 1, 1, 2, 2)},
     GS("bilinear", "zeros", 1), .data = {gsg_dy, gsg_grid}, EXPECT(gsg_y)},
    {.label = "grid_sample_grad [B,3,5,7] bicubic reflection align_corners",
     .kind = DY_OP_GRID_SAMPLE_GRAD, .n_in = 3,
     .in = {F32(4, -1, 3, 4, 6), F32(4, -1, 4, 6, 2), F32(4, -1, 3, 5, 7)},
     GS("bicubic", "reflection", 1), .lo = -1.5f, .hi = 1.5f, .tol = 1e-4},
    {.label = "grid_sample_grad [2,2,4,4] nearest border", .kind = DY_OP_GRID_SAMPLE_GRAD,
     .n_in = 3, .in = {F32(4, 2, 2, 3, 3), F32(4, 2, 3, 3, 2), F32(4, 2, 2, 4, 4)},
     GS("nearest", "border", 0), .lo = -1.3f, .hi = 1.3f},
    {.label = "grid_sample_grad [1,2,6,5] bilinear zeros", .kind = DY_OP_GRID_SAMPLE_GRAD,
     .n_in = 3, .in = {F32(4, 1, 2, 5, 2), F32(4, 1, 5, 2, 2), F32(4, 1, 2, 6, 5)},
     GS("bilinear", "zeros", 0), .lo = -1.2f, .hi = 1.2f, .tol = 1e-4},
    {.label = "grid_sample_grad dy of another shape rejected", .kind = DY_OP_GRID_SAMPLE_GRAD,
     .n_in = 3, .in = {F32(4, 1, 1, 2, 2), F32(4, 1, 1, 1, 2), F32(4, 1, 1, 2, 2)},
     GS("bilinear", "zeros", 1), .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "roi_align_grad avg on the ramp's rois", .kind = DY_OP_ROI_ALIGN_GRAD, .n_in = 4,
     .in = {F32(4, 2, 1, 2, 2), F32(2, 2, 4), I64(1, 2), F32(4, 1, 1, 4, 4)},
     RA("avg", 2, 2, 1, 1.0, 0), .data = {NULL, ra_rois, ra_b, ra_x}},
    {.label = "roi_align_grad [2,3,9,8] avg adaptive half_pixel", .kind = DY_OP_ROI_ALIGN_GRAD,
     .n_in = 4, .in = {F32(4, 5, 3, 3, 2), F32(2, 5, 4), I64(1, 5), F32(4, 2, 3, 9, 8)},
     RA("avg", 3, 2, 0, 1.0, 1), .lo = 0, .hi = 2, .tol = 1e-4},
    {.label = "roi_align_grad [1,2,8,8] max sampling 2 scale 0.5", .kind = DY_OP_ROI_ALIGN_GRAD,
     .n_in = 4, .in = {F32(4, 4, 2, 2, 3), F32(2, 4, 4), I64(1, 4), F32(4, 1, 2, 8, 8)},
     RA("max", 2, 3, 2, 0.5, 0), .lo = 0, .hi = 1},
    {.label = "roi_align_grad batch index out of range refused", .kind = DY_OP_ROI_ALIGN_GRAD,
     .n_in = 4, .in = {F32(4, 2, 1, 2, 2), F32(2, 2, 4), I64(1, 2), F32(4, 1, 1, 4, 4)},
     RA("avg", 2, 2, 1, 1.0, 0), .data = {NULL, ra_rois, ra_bad, ra_x},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    /* ---- fused_conv2d with algo "small" and fused_conv2d_pool (ops_fused.def;
     * here at the end, not in op_cases_core.c, so that the cases before
     * keep their random inputs: test_grad draws from one stream, and its
     * finite differences of "tan over [-50, 50)" fail near a pole) ---- */
    /* algo "small" (the pass conv-small's mark): codegen's direct kernel
     * (emit_conv_small.c), compared with the eager direct conv: odd sizes
     * (rows of the flat layout cut at the edges), 1 to 17 channels (17:
     * two full tiles of 8 or four of 4 and a tile of 1), padding on any
     * side, residual, act in the store loop */
    {.label = "fused_conv2d small 1->6 5x5 pad 2 bias relu [B,1,13,11]", .kind = DY_OP_FUSED_CONV2D,
     .n_in = 3, .in = {F32(4, -1, 1, 13, 11), F32(4, 6, 1, 5, 5), F32(1, 6)}, .consts = 6,
     .n_attrs = 7,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(2, 2, 2, 2), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "relu"), DY_ATTR_F("alpha", 0), DY_ATTR_S("algo", "small")}},
    {.label = "fused_conv2d small 6->17 5x5 no bias [2,6,14,9]", .kind = DY_OP_FUSED_CONV2D,
     .n_in = 2, .in = {F32(4, 2, 6, 14, 9), F32(4, 17, 6, 5, 5)}, .consts = 2, .n_attrs = 7,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", ""), DY_ATTR_F("alpha", 0), DY_ATTR_S("algo", "small")}},
    {.label = "fused_conv2d small 3->9 3x2 pads 1,0,2,1 residual tanh [B,3,7,12]",
     .kind = DY_OP_FUSED_CONV2D, .n_in = 4,
     .in = {F32(4, -1, 3, 7, 12), F32(4, 9, 3, 3, 2), F32(3, 9, 1, 1), F32(4, -1, 9, 8, 12)},
     .consts = 6, .n_attrs = 7,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(1, 0, 2, 1), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "tanh"), DY_ATTR_F("alpha", 0), DY_ATTR_S("algo", "small")}},
    {.label = "fused_conv2d small 16->8 1x1 bias sigmoid [1,16,5,3]", .kind = DY_OP_FUSED_CONV2D,
     .n_in = 3, .in = {F32(4, 1, 16, 5, 3), F32(4, 8, 16, 1, 1), F32(1, 8)}, .consts = 6,
     .n_attrs = 7,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "sigmoid"), DY_ATTR_F("alpha", 0), DY_ATTR_S("algo", "small")}},
    {.label = "fused_conv2d small with stride 2: rejected", .kind = DY_OP_FUSED_CONV2D,
     .n_in = 2, .in = {F32(4, 1, 2, 6, 6), F32(4, 3, 2, 3, 3)}, .consts = 2, .n_attrs = 7,
     .expect_error = DY_STATUS_INVALID_ARGUMENT,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", ""), DY_ATTR_F("alpha", 0), DY_ATTR_S("algo", "small")}},
    /* fused_conv2d_pool (the pass fuse-pool): the small kernel pooling
     * in its store loop, against eager conv then pool2d; odd conv outputs
     * (the floor drops a row and a column), windows 2x2, 3x3 stride 2 and
     * 2x1 stride 1x2 */
    {.label = "fused_conv2d_pool 1->6 5x5 pad 2 bias relu pool 2 [B,1,13,11]",
     .kind = DY_OP_FUSED_CONV2D_POOL, .n_in = 3,
     .in = {F32(4, -1, 1, 13, 11), F32(4, 6, 1, 5, 5), F32(1, 6)}, .consts = 6, .n_attrs = 8,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(2, 2, 2, 2), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "relu"), DY_ATTR_F("alpha", 0),
               DY_ATTR_IS("pool_ksize", DY_SHAPE(2, 2), 2), DY_ATTR_IS("pool_strides", DY_SHAPE(2, 2), 2)}},
    {.label = "fused_conv2d_pool 6->17 3x3 pad 1 tanh pool 3 stride 2 [2,6,9,10]",
     .kind = DY_OP_FUSED_CONV2D_POOL, .n_in = 2,
     .in = {F32(4, 2, 6, 9, 10), F32(4, 17, 6, 3, 3)}, .consts = 2, .n_attrs = 8,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(1, 1, 1, 1), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "tanh"), DY_ATTR_F("alpha", 0),
               DY_ATTR_IS("pool_ksize", DY_SHAPE(3, 3), 2), DY_ATTR_IS("pool_strides", DY_SHAPE(2, 2), 2)}},
    {.label = "fused_conv2d_pool 2->3 1x1 bias pool 2x1 stride 1x2 [1,2,5,4]",
     .kind = DY_OP_FUSED_CONV2D_POOL, .n_in = 3,
     .in = {F32(4, 1, 2, 5, 4), F32(4, 3, 2, 1, 1), F32(3, 3, 1, 1)}, .consts = 6, .n_attrs = 8,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", ""), DY_ATTR_F("alpha", 0),
               DY_ATTR_IS("pool_ksize", DY_SHAPE(2, 1), 2), DY_ATTR_IS("pool_strides", DY_SHAPE(1, 2), 2)}},
    {.label = "fused_conv2d_pool with conv stride 2: rejected", .kind = DY_OP_FUSED_CONV2D_POOL,
     .n_in = 2, .in = {F32(4, 1, 2, 6, 6), F32(4, 3, 2, 3, 3)}, .consts = 2, .n_attrs = 8,
     .expect_error = DY_STATUS_INVALID_ARGUMENT,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", ""), DY_ATTR_F("alpha", 0),
               DY_ATTR_IS("pool_ksize", DY_SHAPE(2, 2), 2), DY_ATTR_IS("pool_strides", DY_SHAPE(2, 2), 2)}},
};

const dy_op_case_list dy_op_cases_extra = DY_CASE_LIST(cases);
