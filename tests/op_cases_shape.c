/* op_cases_shape.c - op table cases for the shape family (ops_shape.def):
 * concat, slice, squeeze, unsqueeze, expand, tile, pad, gather, the
 * reductions, argmax and log_softmax.
 *
 * Shapes are chosen to break naive code: odd sizes (7, 13), size-1 dims,
 * negative axes, negative slice steps, the dynamic batch in every position
 * (and a batch of 1 and 3), rank 0, empty results; i64 and bool where the
 * op takes them. One case per op at least has values computed by hand.
 * The bad-input cases are rejected by eager inference (or, for an index
 * out of range, by the gather kernel). Rules that only concern the
 * dynamic batch (concat along it, ...) need -1 types and are tested in
 * test_shape.c.
 *
 * Tolerance: the default 1e-5. The reductions sum in f32 in the input's C
 * order in the kernel and in the generated C alike, so even the long ones
 * agree to rounding.
 */
#include <math.h>
#include <stdint.h>

#include "op_table.h"

#define AXIS(a) .n_attrs = 1, .attrs = {DY_ATTR_I("axis", a)}
#define AXES(n, ...) DY_ATTR_IS("axes", ((const int64_t[]){__VA_ARGS__}), n)
#define NO_AXES DY_ATTR_IS("axes", NULL, 0)
#define IS(name, n, ...) DY_ATTR_IS(name, ((const int64_t[]){__VA_ARGS__}), n)
#define REDUCE(n_axes_attr, keep) .n_attrs = 2, .attrs = {n_axes_attr, DY_ATTR_I("keepdim", keep)}
#define SLICE4(st, en, ax, sp) .n_attrs = 4, .attrs = {st, en, ax, sp}
#define PAD(mode, value, n, ...) \
  .n_attrs = 3, .attrs = {IS("paddings", n, __VA_ARGS__), DY_ATTR_S("mode", mode), DY_ATTR_F("value", value)}
#define BIG INT64_MAX

/* ---- hand-computed data ---- */

static const float cat_a[] = {1, 2, 3, 4};              /* [2,2] */
static const float cat_b[] = {5, 6, 7, 8, 9, 10};       /* [2,3] */
static const float cat_expect[] = {1, 2, 5, 6, 7, 3, 4, 8, 9, 10};

static const float iota12[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  /* [3,4] */
static const float slice_expect[] = {11, 9, 3, 1};

static const float sq_x[] = {1, 2, 3};
static const float sq_expect[] = {1, 2, 3};

static const float exp_x[] = {1, 2};                    /* [2,1] */
static const float exp_expect[] = {1, 1, 1, 2, 2, 2};   /* [2,3] */

static const float tile_expect[] = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}; /* [2,6] */

static const float pad_c_expect[] = {9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9};
static const float pad_r_x[] = {1, 2, 3, 4, 5};
static const float pad_r_expect[] = {3, 2, 1, 2, 3, 4, 5, 4, 3, 2};
static const float pad_e_expect[] = {1, 1, 1, 2, 3, 3};
static const float iota9[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
static const float pad_crop_expect[] = {2, 3, 4, 5, 6, 7, 8, 7, 6, 5};

static const float g_x[] = {1, 2, 3, 4, 5, 6};          /* [3,2] */
static const int64_t g_idx[] = {2, -3};
static const float g_expect[] = {5, 6, 1, 2};
static const int64_t g_bad[] = {0, 3};

static const float r_x[] = {1, 2, 3, 4, 5, 6};          /* [2,3] */
static const float rsum_expect[] = {6, 15};
static const float rmean_expect[] = {2.5f, 3.5f, 4.5f};
static const float rmax_expect[] = {6};
static const float rmin_expect[] = {1, 4};
static const int64_t ri_x[] = {3, -7, 2, 9, -1, 4};     /* [2,3] */
static const float rimax_expect[] = {9, -1, 4};

static const float am_x[] = {1, 5, 5, -1, -2, -3};
static const float am_expect[] = {1, 0};
static const float am_nan_x[] = {1, NAN, 3, NAN};
static const float am_nan_expect[] = {1};

static const float ls_x[] = {1, 2, 3};
static const float ls_expect[] = {-2.40760596f, -1.40760596f, -0.407605964f};

static const dy_op_case cases[] = {
    /* ---- concat ---- */
    {.label = "concat [2,2]+[2,3] axis 1 by hand", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 2, 2), F32(2, 2, 3)}, AXIS(1), .data = {cat_a, cat_b},
     .expect = cat_expect, .n_expect = 10},
    {.label = "concat [B,3,7]+[B,3,1]+[B,3,5] axis -1", .kind = DY_OP_CONCAT, .n_in = 3,
     .in = {F32(3, -1, 3, 7), F32(3, -1, 3, 1), F32(3, -1, 3, 5)}, AXIS(-1)},
    {.label = "concat i8 [B,3,7]+[B,2,7] axis 1", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {I8(3, -1, 3, 7), I8(3, -1, 2, 7)}, AXIS(1)},
    {.label = "concat u8 [3]+[5] axis 0", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {U8(1, 3), U8(1, 5)}, AXIS(0)},
    {.label = "concat [7,B]+[6,B] axis 0", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 7, -1), F32(2, 6, -1)}, AXIS(0), .batch = 3},
    {.label = "concat [B,2,13]+[B,1,13] axis -2 batch 1", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(3, -1, 2, 13), F32(3, -1, 1, 13)}, AXIS(-2), .batch = 1},
    {.label = "concat [1,7] weight + [1,7] axis 0", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 1, 7), F32(2, 1, 7)}, .consts = 1, AXIS(0)},
    {.label = "concat i64 [3]+[4]+[1]", .kind = DY_OP_CONCAT, .n_in = 3,
     .in = {I64(1, 3), I64(1, 4), I64(1, 1)}, AXIS(0), .lo = -50, .hi = 50},
    {.label = "concat bool [2,1]+[2,2]", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {BOOL(2, 2, 1), BOOL(2, 2, 2)}, AXIS(1)},
    {.label = "concat one input [B,5] axis 0", .kind = DY_OP_CONCAT, .n_in = 1,
     .in = {F32(2, -1, 5)}, AXIS(0)},
    {.label = "concat [2,0]+[2,3] (an empty input)", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 2, 0), F32(2, 2, 3)}, AXIS(1)},
    {.label = "concat [2,3]+[3,3] axis 1 rejected", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 2, 3), F32(2, 3, 3)}, AXIS(1), .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "concat [2,3]+[2,3,1] rank rejected", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 2, 3), F32(3, 2, 3, 1)}, AXIS(0), .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "concat axis 2 out of range", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(2, 2, 3), F32(2, 2, 3)}, AXIS(2), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "concat f32+i64 rejected", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {F32(1, 3), I64(1, 3)}, AXIS(0), .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "concat scalars rejected", .kind = DY_OP_CONCAT, .n_in = 2,
     .in = {SCALAR_F32, SCALAR_F32}, AXIS(0), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- slice ---- */
    {.label = "slice [3,4] [-1:-4:-2, 3:0:-2] by hand", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(2, 3, 4)}, .data = {iota12}, .expect = slice_expect, .n_expect = 4,
     SLICE4(IS("starts", 2, -1, 3), IS("ends", 2, -4, 0), AXES(2, 0, 1), IS("steps", 2, -2, -2))},
    {.label = "slice [B,13] axis 1 [2:11:3]", .kind = DY_OP_SLICE, .n_in = 1, .in = {F32(2, -1, 13)},
     SLICE4(IS("starts", 1, 2), IS("ends", 1, 11), AXES(1, 1), IS("steps", 1, 3))},
    {.label = "slice u8 [B,13] axis 1 [2:11:3]", .kind = DY_OP_SLICE, .n_in = 1, .in = {U8(2, -1, 13)},
     SLICE4(IS("starts", 1, 2), IS("ends", 1, 11), AXES(1, 1), IS("steps", 1, 3))},
    {.label = "slice [B,7,5] batch whole, axis 2 [1:-1]", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(3, -1, 7, 5)}, .batch = 3,
     SLICE4(IS("starts", 2, 0, 1), IS("ends", 2, BIG, -1), AXES(2, 0, 2), IS("steps", 2, 1, 1))},
    {.label = "slice [7,B] axis 0 [2:6] (stride has the batch)", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(2, 7, -1)}, .batch = 3,
     SLICE4(IS("starts", 1, 2), IS("ends", 1, 6), AXES(1, 0), IS("steps", 1, 1))},
    {.label = "slice [7,3] clamped [-100:INT64_MAX] no axes/steps", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(2, 7, 3)},
     SLICE4(IS("starts", 1, -100), IS("ends", 1, BIG), NO_AXES, DY_ATTR_IS("steps", NULL, 0))},
    {.label = "slice [13] reversed [-1:INT64_MIN:-1]", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(1, 13)},
     SLICE4(IS("starts", 1, -1), IS("ends", 1, INT64_MIN), AXES(1, 0), IS("steps", 1, -1))},
    {.label = "slice [2,9,B] axis 1 [8:0:-3]", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(3, 2, 9, -1)},
     SLICE4(IS("starts", 1, 8), IS("ends", 1, 0), AXES(1, -2), IS("steps", 1, -3))},
    {.label = "slice i64 [4,6] axis 1 [1:5:2]", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {I64(2, 4, 6)}, .lo = -100, .hi = 100,
     SLICE4(IS("starts", 1, 1), IS("ends", 1, 5), AXES(1, -1), IS("steps", 1, 2))},
    {.label = "slice bool [5,3] axis 0 [4:0:-1]", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {BOOL(2, 5, 3)},
     SLICE4(IS("starts", 1, 4), IS("ends", 1, 0), AXES(1, 0), IS("steps", 1, -1))},
    {.label = "slice [1,7] size-1 dims", .kind = DY_OP_SLICE, .n_in = 1, .in = {F32(2, 1, 7)},
     SLICE4(IS("starts", 2, 0, 6), IS("ends", 2, 1, 7), AXES(2, 0, 1), IS("steps", 2, 1, 1))},
    {.label = "slice [5] empty [3:1]", .kind = DY_OP_SLICE, .n_in = 1, .in = {F32(1, 5)},
     SLICE4(IS("starts", 1, 3), IS("ends", 1, 1), AXES(1, 0), IS("steps", 1, 1))},
    {.label = "slice step 0 rejected", .kind = DY_OP_SLICE, .n_in = 1, .in = {F32(1, 5)},
     SLICE4(IS("starts", 1, 0), IS("ends", 1, 5), AXES(1, 0), IS("steps", 1, 0)),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "slice axis 2 of rank 2 rejected", .kind = DY_OP_SLICE, .n_in = 1, .in = {F32(2, 5, 5)},
     SLICE4(IS("starts", 1, 0), IS("ends", 1, 5), AXES(1, 2), IS("steps", 1, 1)),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "slice repeated axis rejected", .kind = DY_OP_SLICE, .n_in = 1, .in = {F32(2, 5, 5)},
     SLICE4(IS("starts", 2, 0, 1), IS("ends", 2, 5, 5), AXES(2, 1, -1), IS("steps", 2, 1, 1)),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "slice starts/ends lengths differ rejected", .kind = DY_OP_SLICE, .n_in = 1,
     .in = {F32(2, 5, 5)},
     SLICE4(IS("starts", 2, 0, 1), IS("ends", 1, 5), NO_AXES, DY_ATTR_IS("steps", NULL, 0)),
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- reshape_dims (sizes as dim expressions; symbolic ones are the
     * executor's and the compiled code's: tests/test_dims.c) ---- */
    {.label = "reshape_dims [3,4] to 2,6 by hand", .kind = DY_OP_RESHAPE_DIMS, .n_in = 1,
     .in = {F32(2, 3, 4)}, .n_attrs = 1, .attrs = {DY_ATTR_S("dims", "2,6")},
     .data = {iota12}, .expect = iota12, .n_expect = 12},
    {.label = "reshape_dims [2,3,5] to 6,5", .kind = DY_OP_RESHAPE_DIMS, .n_in = 1,
     .in = {F32(3, 2, 3, 5)}, .n_attrs = 1, .attrs = {DY_ATTR_S("dims", "6,5")}},
    {.label = "reshape_dims [12] to 5,2 rejected", .kind = DY_OP_RESHAPE_DIMS, .n_in = 1,
     .in = {F32(1, 12)}, .n_attrs = 1, .attrs = {DY_ATTR_S("dims", "5,2")},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "reshape_dims bad text rejected", .kind = DY_OP_RESHAPE_DIMS, .n_in = 1,
     .in = {F32(1, 12)}, .n_attrs = 1, .attrs = {DY_ATTR_S("dims", "3,,4")},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- squeeze, unsqueeze ---- */
    {.label = "squeeze [1,3] by hand", .kind = DY_OP_SQUEEZE, .n_in = 1, .in = {F32(2, 1, 3)},
     .n_attrs = 1, .attrs = {AXES(1, 0)}, .data = {sq_x}, .expect = sq_expect, .n_expect = 3},
    {.label = "squeeze [B,1,7,1] axes 1,-1", .kind = DY_OP_SQUEEZE, .n_in = 1,
     .in = {F32(4, -1, 1, 7, 1)}, .n_attrs = 1, .attrs = {AXES(2, 1, -1)}},
    {.label = "squeeze [1,13,1] all", .kind = DY_OP_SQUEEZE, .n_in = 1, .in = {F32(3, 1, 13, 1)},
     .n_attrs = 1, .attrs = {NO_AXES}},
    {.label = "squeeze [1,1] all to a scalar", .kind = DY_OP_SQUEEZE, .n_in = 1,
     .in = {F32(2, 1, 1)}, .n_attrs = 1, .attrs = {NO_AXES}},
    {.label = "squeeze i64 weight [7,1]", .kind = DY_OP_SQUEEZE, .n_in = 1, .in = {I64(2, 7, 1)},
     .consts = 1, .n_attrs = 1, .attrs = {AXES(1, 1)}},
    {.label = "squeeze axis of size 3 rejected", .kind = DY_OP_SQUEEZE, .n_in = 1,
     .in = {F32(2, 1, 3)}, .n_attrs = 1, .attrs = {AXES(1, 1)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "squeeze axis 2 out of range", .kind = DY_OP_SQUEEZE, .n_in = 1,
     .in = {F32(2, 1, 3)}, .n_attrs = 1, .attrs = {AXES(1, 2)},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "unsqueeze [B,7] axis 1", .kind = DY_OP_UNSQUEEZE, .n_in = 1, .in = {F32(2, -1, 7)},
     .n_attrs = 1, .attrs = {AXES(1, 1)}},
    {.label = "unsqueeze [13] axes 0,-1", .kind = DY_OP_UNSQUEEZE, .n_in = 1, .in = {F32(1, 13)},
     .n_attrs = 1, .attrs = {AXES(2, 0, -1)}},
    {.label = "unsqueeze scalar axis 0", .kind = DY_OP_UNSQUEEZE, .n_in = 1, .in = {SCALAR_F32},
     .n_attrs = 1, .attrs = {AXES(1, 0)}},
    {.label = "unsqueeze bool [3,B] axis -1", .kind = DY_OP_UNSQUEEZE, .n_in = 1,
     .in = {BOOL(2, 3, -1)}, .n_attrs = 1, .attrs = {AXES(1, -1)}},
    {.label = "unsqueeze repeated axis rejected", .kind = DY_OP_UNSQUEEZE, .n_in = 1,
     .in = {F32(1, 3)}, .n_attrs = 1, .attrs = {AXES(2, 0, -3)},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "unsqueeze axis 3 of output rank 2 rejected", .kind = DY_OP_UNSQUEEZE, .n_in = 1,
     .in = {F32(1, 3)}, .n_attrs = 1, .attrs = {AXES(1, 3)},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- expand, tile ---- */
    {.label = "expand_as [2,1] like [2,3] by hand", .kind = DY_OP_EXPAND_AS, .n_in = 2,
     .in = {F32(2, 2, 1), F32(2, 2, 3)}, .data = {exp_x}, .expect = exp_expect, .n_expect = 6},
    {.label = "expand_as [1,7] like [B,5,7]", .kind = DY_OP_EXPAND_AS, .n_in = 2,
     .in = {F32(2, 1, 7), F32(3, -1, 5, 7)}},
    {.label = "expand_as scalar like [B,3]", .kind = DY_OP_EXPAND_AS, .n_in = 2,
     .in = {SCALAR_F32, F32(2, -1, 3)}},
    {.label = "expand_as [B,1] like [B,4]", .kind = DY_OP_EXPAND_AS, .n_in = 2,
     .in = {F32(2, -1, 1), F32(2, -1, 4)}},
    {.label = "expand_as [3] like [2,4] is rejected", .kind = DY_OP_EXPAND_AS, .n_in = 2,
     .in = {F32(1, 3), F32(2, 2, 4)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "expand [2,1] to [2,3] by hand", .kind = DY_OP_EXPAND, .n_in = 1, .in = {F32(2, 2, 1)},
     .n_attrs = 1, .attrs = {IS("shape", 2, 2, 3)}, .data = {exp_x}, .expect = exp_expect,
     .n_expect = 6},
    {.label = "expand [B,1,7] to [-1,5,7]", .kind = DY_OP_EXPAND, .n_in = 1, .in = {F32(3, -1, 1, 7)},
     .n_attrs = 1, .attrs = {IS("shape", 3, -1, 5, 7)}},
    {.label = "expand [7] to [3,1,7]", .kind = DY_OP_EXPAND, .n_in = 1, .in = {F32(1, 7)},
     .n_attrs = 1, .attrs = {IS("shape", 3, 3, 1, 7)}},
    {.label = "expand [1,13] to [5,1] (both ways)", .kind = DY_OP_EXPAND, .n_in = 1,
     .in = {F32(2, 1, 13)}, .n_attrs = 1, .attrs = {IS("shape", 2, 5, 1)}},
    {.label = "expand i64 [3,1,B] to [2,3,4,-1]", .kind = DY_OP_EXPAND, .n_in = 1,
     .in = {I64(3, 3, 1, -1)}, .n_attrs = 1, .attrs = {IS("shape", 4, 2, 3, 4, -1)}},
    {.label = "expand bool scalar to [2,3]", .kind = DY_OP_EXPAND, .n_in = 1,
     .in = {{.dtype = DY_BOOL, .rank = 0}}, .n_attrs = 1, .attrs = {IS("shape", 2, 2, 3)}},
    {.label = "expand [2,3] to [4,3] rejected", .kind = DY_OP_EXPAND, .n_in = 1,
     .in = {F32(2, 2, 3)}, .n_attrs = 1, .attrs = {IS("shape", 2, 4, 3)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "expand -1 where x has no dim rejected", .kind = DY_OP_EXPAND, .n_in = 1,
     .in = {F32(1, 3)}, .n_attrs = 1, .attrs = {IS("shape", 2, -1, 3)},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "tile [2] by [2,3] by hand", .kind = DY_OP_TILE, .n_in = 1, .in = {F32(1, 2)},
     .n_attrs = 1, .attrs = {IS("repeat_times", 2, 2, 3)}, .data = {exp_x},
     .expect = tile_expect, .n_expect = 12},
    {.label = "tile [B,3,1] by [1,2,5]", .kind = DY_OP_TILE, .n_in = 1, .in = {F32(3, -1, 3, 1)},
     .n_attrs = 1, .attrs = {IS("repeat_times", 3, 1, 2, 5)}},
    {.label = "tile [7] by [3]", .kind = DY_OP_TILE, .n_in = 1, .in = {F32(1, 7)},
     .n_attrs = 1, .attrs = {IS("repeat_times", 1, 3)}},
    {.label = "tile i64 [B,3,2] by [2] (short list)", .kind = DY_OP_TILE, .n_in = 1,
     .in = {I64(3, -1, 3, 2)}, .n_attrs = 1, .attrs = {IS("repeat_times", 1, 2)}},
    {.label = "tile [2,B] by [3,1,1] (long list)", .kind = DY_OP_TILE, .n_in = 1,
     .in = {F32(2, 2, -1)}, .n_attrs = 1, .attrs = {IS("repeat_times", 3, 3, 1, 1)}},
    {.label = "tile [3,5] by [1,1] (copy)", .kind = DY_OP_TILE, .n_in = 1, .in = {F32(2, 3, 5)},
     .n_attrs = 1, .attrs = {IS("repeat_times", 2, 1, 1)}},
    {.label = "tile bool scalar by [3]", .kind = DY_OP_TILE, .n_in = 1,
     .in = {{.dtype = DY_BOOL, .rank = 0}}, .n_attrs = 1, .attrs = {IS("repeat_times", 1, 3)}},
    {.label = "tile repeat 0 rejected", .kind = DY_OP_TILE, .n_in = 1, .in = {F32(1, 3)},
     .n_attrs = 1, .attrs = {IS("repeat_times", 1, 0)}, .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- pad ---- */
    {.label = "pad constant [2,2] (1,0)(0,2) by hand", .kind = DY_OP_PAD, .n_in = 1,
     .in = {F32(2, 2, 2)}, PAD("constant", 9, 4, 1, 0, 0, 2), .data = {cat_a},
     .expect = pad_c_expect, .n_expect = 12},
    {.label = "pad reflect [5] (2,3) by hand", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(1, 5)},
     PAD("reflect", 0, 2, 2, 3), .data = {pad_r_x}, .expect = pad_r_expect, .n_expect = 10},
    {.label = "pad edge [3] (2,1) by hand", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(1, 3)},
     PAD("edge", 0, 2, 2, 1), .data = {pad_r_x}, .expect = pad_e_expect, .n_expect = 6},
    {.label = "pad reflect [9] (-2,3) crops first, by hand", .kind = DY_OP_PAD, .n_in = 1,
     .in = {F32(1, 9)}, PAD("reflect", 0, 2, -2, 3), .data = {iota9},
     .expect = pad_crop_expect, .n_expect = 10},
    {.label = "pad constant [B,7,5] dims 1,2", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(3, -1, 7, 5)},
     PAD("constant", -1.5, 6, 0, 1, 2, 0, 3, 0)},
    {.label = "pad reflect [B,13] (4,5)", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(2, -1, 13)},
     PAD("reflect", 0, 4, 0, 4, 0, 5), .batch = 3},
    {.label = "pad edge [3,1,7] (1,0,6)(2,3,0)", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(3, 3, 1, 7)},
     PAD("edge", 0, 6, 1, 0, 6, 2, 3, 0)},
    {.label = "pad constant crop [7,9] (-2,1)(-1,3)", .kind = DY_OP_PAD, .n_in = 1,
     .in = {F32(2, 7, 9)}, PAD("constant", 0.25, 4, -2, 1, -1, 3)},
    {.label = "pad reflect [2,B,7] dim 2 (6,6)", .kind = DY_OP_PAD, .n_in = 1,
     .in = {F32(3, 2, -1, 7)}, PAD("reflect", 0, 6, 0, 0, 6, 0, 0, 6), .batch = 1},
    {.label = "pad i64 constant [3,4] value -3", .kind = DY_OP_PAD, .n_in = 1, .in = {I64(2, 3, 4)},
     PAD("constant", -3, 4, 1, 2, 1, 0), .lo = -9, .hi = 9},
    {.label = "pad bool edge [2,3]", .kind = DY_OP_PAD, .n_in = 1, .in = {BOOL(2, 2, 3)},
     PAD("edge", 0, 4, 0, 2, 1, 1)},
    {.label = "pad scalar (no paddings)", .kind = DY_OP_PAD, .n_in = 1, .in = {SCALAR_F32},
     .n_attrs = 3, .attrs = {DY_ATTR_IS("paddings", NULL, 0), DY_ATTR_S("mode", "constant"),
                             DY_ATTR_F("value", 0)}},
    {.label = "pad reflect too large rejected", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(1, 3)},
     PAD("reflect", 0, 2, 3, 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "pad unknown mode rejected", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(1, 3)},
     PAD("wrap", 0, 2, 1, 1), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "pad wrong paddings count rejected", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(2, 3, 3)},
     PAD("constant", 0, 2, 1, 1), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "pad crop below 0 rejected", .kind = DY_OP_PAD, .n_in = 1, .in = {F32(1, 3)},
     PAD("constant", 0, 2, -2, -2), .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- gather ---- */
    {.label = "gather [3,2] rows {2,-3} by hand", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 3, 2), I64(1, 2)}, AXIS(0), .data = {g_x, g_idx}, .expect = g_expect,
     .n_expect = 4},
    {.label = "gather [B,7,3] axis 1 index [2,2] (negatives)", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(3, -1, 7, 3), I64(2, 2, 2)}, AXIS(1), .lo = -7, .hi = 7},
    {.label = "gather i8 [7,3] axis 0 index [4]", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {I8(2, 7, 3), I64(1, 4)}, AXIS(0), .lo = -7, .hi = 7},
    {.label = "gather [B,5] axis 0 (the batch) index [3]", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, -1, 5), I64(1, 3)}, AXIS(0), .lo = -2, .hi = 2},
    {.label = "gather [7,4] axis -1 scalar index", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 7, 4), {.dtype = DY_I64, .rank = 0}}, AXIS(-1), .lo = -4, .hi = 4},
    {.label = "gather weight [13,5] by ids [B,3] (embedding)", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 13, 5), I64(2, -1, 3)}, .consts = 1, AXIS(0), .lo = 0, .hi = 13, .batch = 3},
    {.label = "gather [B,4] axis 1 by [B] -> [B,B]", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, -1, 4), I64(1, -1)}, AXIS(1), .lo = 0, .hi = 4, .batch = 3},
    {.label = "gather i64 [5,1,3] axis 2 index [1]", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {I64(3, 5, 1, 3), I64(1, 1)}, AXIS(2), .lo = 0, .hi = 3},
    {.label = "gather bool [6,2] axis 0 index [4]", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {BOOL(2, 6, 2), I64(1, 4)}, AXIS(0), .lo = 0, .hi = 2},
    {.label = "gather [3,2] by an empty index", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 3, 2), I64(1, 0)}, AXIS(0)},
    {.label = "gather index 3 out of range refused", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 3, 2), I64(1, 2)}, AXIS(0), .data = {g_x, g_bad},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "gather f32 index rejected", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 3, 2), F32(1, 2)}, AXIS(0), .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "gather axis 2 out of range", .kind = DY_OP_GATHER, .n_in = 2,
     .in = {F32(2, 3, 2), I64(1, 2)}, AXIS(2), .lo = 0, .hi = 1,
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- reductions ---- */
    {.label = "reduce_sum [2,3] axis 1 by hand", .kind = DY_OP_REDUCE_SUM, .n_in = 1,
     .in = {F32(2, 2, 3)}, REDUCE(AXES(1, 1), 0), .data = {r_x}, .expect = rsum_expect, .n_expect = 2},
    {.label = "reduce_mean [2,3] axis 0 keepdim by hand", .kind = DY_OP_REDUCE_MEAN, .n_in = 1,
     .in = {F32(2, 2, 3)}, REDUCE(AXES(1, 0), 1), .data = {r_x}, .expect = rmean_expect,
     .n_expect = 3},
    {.label = "reduce_max [2,3] all by hand", .kind = DY_OP_REDUCE_MAX, .n_in = 1,
     .in = {F32(2, 2, 3)}, REDUCE(NO_AXES, 0), .data = {r_x}, .expect = rmax_expect, .n_expect = 1},
    {.label = "reduce_min [2,3] axis -1 by hand", .kind = DY_OP_REDUCE_MIN, .n_in = 1,
     .in = {F32(2, 2, 3)}, REDUCE(AXES(1, -1), 0), .data = {r_x}, .expect = rmin_expect,
     .n_expect = 2},
    {.label = "reduce_max i64 [2,3] axis 0 by hand", .kind = DY_OP_REDUCE_MAX, .n_in = 1,
     .in = {I64(2, 2, 3)}, REDUCE(AXES(1, 0), 0), .data = {ri_x}, .expect = rimax_expect,
     .n_expect = 3},
    {.label = "reduce_sum [B,7,13] over the batch", .kind = DY_OP_REDUCE_SUM, .n_in = 1,
     .in = {F32(3, -1, 7, 13)}, REDUCE(AXES(1, 0), 0), .batch = 3},
    {.label = "reduce_mean [B,7,13] axes -1,1 keepdim", .kind = DY_OP_REDUCE_MEAN, .n_in = 1,
     .in = {F32(3, -1, 7, 13)}, REDUCE(AXES(2, -1, 1), 1)},
    {.label = "reduce_max [3,1,5,7] axes 0,2", .kind = DY_OP_REDUCE_MAX, .n_in = 1,
     .in = {F32(4, 3, 1, 5, 7)}, REDUCE(AXES(2, 0, 2), 0)},
    {.label = "reduce_min [B,13] all keepdim", .kind = DY_OP_REDUCE_MIN, .n_in = 1,
     .in = {F32(2, -1, 13)}, REDUCE(NO_AXES, 1), .batch = 1},
    {.label = "reduce_mean [B,509] all (long)", .kind = DY_OP_REDUCE_MEAN, .n_in = 1,
     .in = {F32(2, -1, 509)}, REDUCE(NO_AXES, 0), .batch = 3},
    {.label = "reduce_sum [7,B,3] axis 1 keepdim", .kind = DY_OP_REDUCE_SUM, .n_in = 1,
     .in = {F32(3, 7, -1, 3)}, REDUCE(AXES(1, 1), 1)},
    {.label = "reduce_sum i64 [4,5] axis 1", .kind = DY_OP_REDUCE_SUM, .n_in = 1,
     .in = {I64(2, 4, 5)}, REDUCE(AXES(1, 1), 0), .lo = -1000, .hi = 1000},
    {.label = "reduce_min i64 [B,3] axis 0", .kind = DY_OP_REDUCE_MIN, .n_in = 1,
     .in = {I64(2, -1, 3)}, REDUCE(AXES(1, 0), 0), .lo = -1000, .hi = 1000},
    {.label = "reduce_sum scalar", .kind = DY_OP_REDUCE_SUM, .n_in = 1, .in = {SCALAR_F32},
     REDUCE(NO_AXES, 0)},
    {.label = "reduce_max [1,1,7] axis 1 (size-1)", .kind = DY_OP_REDUCE_MAX, .n_in = 1,
     .in = {F32(3, 1, 1, 7)}, REDUCE(AXES(1, 1), 1)},
    {.label = "reduce_sum [3,0] axis 1 (empty: zeros)", .kind = DY_OP_REDUCE_SUM, .n_in = 1,
     .in = {F32(2, 3, 0)}, REDUCE(AXES(1, 1), 0)},
    {.label = "reduce_max [3,0] axis 1 rejected (empty)", .kind = DY_OP_REDUCE_MAX, .n_in = 1,
     .in = {F32(2, 3, 0)}, REDUCE(AXES(1, 1), 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "reduce_sum repeated axis rejected", .kind = DY_OP_REDUCE_SUM, .n_in = 1,
     .in = {F32(2, 2, 3)}, REDUCE(AXES(2, 1, -1), 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "reduce_mean axis 2 out of range", .kind = DY_OP_REDUCE_MEAN, .n_in = 1,
     .in = {F32(2, 2, 3)}, REDUCE(AXES(1, 2), 0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "reduce_mean i64 rejected", .kind = DY_OP_REDUCE_MEAN, .n_in = 1,
     .in = {I64(1, 3)}, REDUCE(NO_AXES, 0), .expect_error = DY_STATUS_DTYPE_MISMATCH},
    {.label = "reduce_max bool rejected", .kind = DY_OP_REDUCE_MAX, .n_in = 1,
     .in = {BOOL(1, 3)}, REDUCE(NO_AXES, 0), .expect_error = DY_STATUS_DTYPE_MISMATCH},

    /* ---- argmax ---- */
    {.label = "argmax [2,3] axis 1 first max wins, by hand", .kind = DY_OP_ARGMAX, .n_in = 1,
     .in = {F32(2, 2, 3)}, .n_attrs = 2, .attrs = {DY_ATTR_I("axis", 1), DY_ATTR_I("keepdim", 0)},
     .data = {am_x}, .expect = am_expect, .n_expect = 2},
    {.label = "argmax [4] with NaN: the first NaN, by hand", .kind = DY_OP_ARGMAX, .n_in = 1,
     .in = {F32(1, 4)}, .n_attrs = 2, .attrs = {DY_ATTR_I("axis", 0), DY_ATTR_I("keepdim", 0)},
     .data = {am_nan_x}, .expect = am_nan_expect, .n_expect = 1},
    {.label = "argmax [B,13] axis -1 keepdim", .kind = DY_OP_ARGMAX, .n_in = 1,
     .in = {F32(2, -1, 13)}, .n_attrs = 2, .attrs = {DY_ATTR_I("axis", -1), DY_ATTR_I("keepdim", 1)}},
    {.label = "argmax [B,7] over the batch", .kind = DY_OP_ARGMAX, .n_in = 1,
     .in = {F32(2, -1, 7)}, .n_attrs = 2, .attrs = {DY_ATTR_I("axis", 0), DY_ATTR_I("keepdim", 0)},
     .batch = 3},
    {.label = "argmax i64 [3,4,5] axis 1", .kind = DY_OP_ARGMAX, .n_in = 1,
     .in = {I64(3, 3, 4, 5)}, .n_attrs = 2, .attrs = {DY_ATTR_I("axis", 1), DY_ATTR_I("keepdim", 0)},
     .lo = -3, .hi = 3},
    {.label = "argmax scalar", .kind = DY_OP_ARGMAX, .n_in = 1, .in = {SCALAR_F32},
     .n_attrs = 2, .attrs = {DY_ATTR_I("axis", 0), DY_ATTR_I("keepdim", 0)}},
    {.label = "argmax axis 2 out of range", .kind = DY_OP_ARGMAX, .n_in = 1,
     .in = {F32(2, 2, 3)}, .n_attrs = 2, .attrs = {DY_ATTR_I("axis", 2), DY_ATTR_I("keepdim", 0)},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},

    /* ---- log_softmax ---- */
    {.label = "log_softmax [1,2,3] by hand", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {F32(1, 3)}, AXIS(-1), .data = {ls_x}, .expect = ls_expect, .n_expect = 3},
    {.label = "log_softmax [B,13] large values", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {F32(2, -1, 13)}, AXIS(-1), .lo = 50, .hi = 90},
    {.label = "log_softmax [2,13,3] axis 1", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {F32(3, 2, 13, 3)}, AXIS(1), .lo = -5, .hi = 5},
    {.label = "log_softmax [B,7] over the batch", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {F32(2, -1, 7)}, AXIS(0), .batch = 3},
    {.label = "log_softmax [7,1] axis 1 (size 1)", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {F32(2, 7, 1)}, AXIS(1)},
    {.label = "log_softmax scalar rejected", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {SCALAR_F32}, AXIS(0), .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "log_softmax i64 rejected", .kind = DY_OP_LOG_SOFTMAX, .n_in = 1,
     .in = {I64(1, 3)}, AXIS(0), .expect_error = DY_STATUS_DTYPE_MISMATCH},
};

const dy_op_case_list dy_op_cases_shape = DY_CASE_LIST(cases);
