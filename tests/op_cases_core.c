/* op_cases_core.c - op table cases for the core ops (ops.def itself):
 * elementwise arithmetic, activations, matmul, softmax, reshape, flatten,
 * transpose, full. Shapes are chosen to break naive code: odd sizes,
 * size-1 dims, broadcasting from either side, the dynamic batch. */
#include "op_table.h"

#define MM(tx, ty) .n_attrs = 2, .attrs = {DY_ATTR_I("transpose_x", tx), DY_ATTR_I("transpose_y", ty)}

static const float add_a[] = {1, 2, 3, 4, 5, 6};
static const float add_b[] = {10, 20, 30};
static const float add_expect[] = {11, 22, 33, 14, 25, 36};
static const float mm_a[] = {1, 2, 3, 4, 5, 6};           /* [2,3] */
static const float mm_b[] = {1, 0, 0, 1, 2, -1};          /* [3,2] */
static const float mm_expect[] = {7, -1, 16, -1};         /* [2,2] */
static const float sm_x[] = {1, 2, 3};
static const float sm_expect[] = {0.0900305733f, 0.244728476f, 0.665240943f};

static const int8_t div_i8_a[] = {-128, 7, -7, 100}, div_i8_b[] = {-1, 2, 2, -3};
static const int32_t div_i32_a[] = {-2147483647 - 1, 9, -9, 0, 123456}, div_i32_b[] = {-7};

static const dy_op_case cases[] = {
    /* add/sub/mul/div, broadcasting */
    {.label = "add [2,3]+[3] by hand", .kind = DY_OP_ADD, .n_in = 2,
     .in = {F32(2, 2, 3), F32(1, 3)}, .data = {add_a, add_b}, .expect = add_expect, .n_expect = 6},
    {.label = "add [B,7]+[7]", .kind = DY_OP_ADD, .n_in = 2, .in = {F32(2, -1, 7), F32(1, 7)}},
    {.label = "add [13]+[B,13] (left)", .kind = DY_OP_ADD, .n_in = 2, .in = {F32(1, 13), F32(2, -1, 13)}},
    {.label = "sub [7,1]-[1,13]", .kind = DY_OP_SUB, .n_in = 2, .in = {F32(2, 7, 1), F32(2, 1, 13)}},
    {.label = "mul [2,1,3]*[4,1]", .kind = DY_OP_MUL, .n_in = 2, .in = {F32(3, 2, 1, 3), F32(2, 4, 1)}},
    {.label = "mul scalar*[B,5]", .kind = DY_OP_MUL, .n_in = 2, .in = {SCALAR_F32, F32(2, -1, 5)}},
    /* the narrow integers wrap (i8 -128 / -1 too) */
    {.label = "add i8 [B,7] + [7] (wraps)", .kind = DY_OP_ADD, .n_in = 2,
     .in = {I8(2, -1, 7), I8(1, 7)}},
    {.label = "sub u8 [3,1] - [5] (wraps)", .kind = DY_OP_SUB, .n_in = 2,
     .in = {U8(2, 3, 1), U8(1, 5)}},
    {.label = "mul i32 [B,13] * [B,1]", .kind = DY_OP_MUL, .n_in = 2,
     .in = {I32(2, -1, 13), I32(2, -1, 1)}},
    {.label = "div i8 by hand (truncates, -128 / -1 wraps)", .kind = DY_OP_DIV, .n_in = 2,
     .in = {I8(1, 4), I8(1, 4)}, .data = {div_i8_a, div_i8_b}},
    {.label = "div i32 [5] / [1]", .kind = DY_OP_DIV, .n_in = 2, .in = {I32(1, 5), I32(1, 1)},
     .data = {div_i32_a, div_i32_b}},
    {.label = "div [B,3,1,5]/[3,7,1]", .kind = DY_OP_DIV, .n_in = 2,
     .in = {F32(4, -1, 3, 1, 5), F32(3, 3, 7, 1)}, .lo = 0.5f, .hi = 2.0f},
    {.label = "add i64 [3,4]+[4]", .kind = DY_OP_ADD, .n_in = 2, .in = {I64(2, 3, 4), I64(1, 4)}},
    {.label = "sub [1]-[1]", .kind = DY_OP_SUB, .n_in = 2, .in = {F32(1, 1), F32(1, 1)}},
    {.label = "add [2,3]+[4] rejected", .kind = DY_OP_ADD, .n_in = 2, .in = {F32(2, 2, 3), F32(1, 4)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    /* activations */
    {.label = "relu [B,13]", .kind = DY_OP_RELU, .n_in = 1, .in = {F32(2, -1, 13)}},
    {.label = "sigmoid [7,3] wide range", .kind = DY_OP_SIGMOID, .n_in = 1, .in = {F32(2, 7, 3)},
     .lo = -30, .hi = 30},
    {.label = "tanh [1,1,7]", .kind = DY_OP_TANH, .n_in = 1, .in = {F32(3, 1, 1, 7)}, .lo = -5, .hi = 5},
    /* matmul */
    {.label = "matmul [2,3]@[3,2] by hand", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(2, 2, 3), F32(2, 3, 2)}, MM(0, 0), .data = {mm_a, mm_b}, .expect = mm_expect, .n_expect = 4},
    {.label = "matmul [B,13]@[13,7] weight", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(2, -1, 13), F32(2, 13, 7)}, .consts = 2, MM(0, 0)},
    {.label = "matmul transpose_x [13,B]", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(2, 7, 5), F32(2, 7, 3)}, MM(1, 0)},
    {.label = "matmul transpose_y", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(2, 5, 7), F32(2, 3, 7)}, MM(0, 1)},
    {.label = "matmul both transposed", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(2, 7, 5), F32(2, 3, 7)}, MM(1, 1)},
    {.label = "matmul batched broadcast [2,1,5,6]@[3,6,7]", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(4, 2, 1, 5, 6), F32(3, 3, 6, 7)}, MM(0, 0)},
    {.label = "matmul batched [B,4,5]@[B,5,3] tx ty", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(3, -1, 5, 4), F32(3, -1, 3, 5)}, MM(1, 1)},
    {.label = "matmul [B,4,13]@[13,1] (M folded)", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(3, -1, 4, 13), F32(2, 13, 1)}, MM(0, 0)},
    {.label = "matmul 1-D @ [7,3]", .kind = DY_OP_MATMUL, .n_in = 2, .in = {F32(1, 7), F32(2, 7, 3)}, MM(0, 0)},
    {.label = "matmul [3,7] @ 1-D", .kind = DY_OP_MATMUL, .n_in = 2, .in = {F32(2, 3, 7), F32(1, 7)}, MM(0, 0)},
    {.label = "matmul inner mismatch rejected", .kind = DY_OP_MATMUL, .n_in = 2,
     .in = {F32(2, 3, 4), F32(2, 5, 6)}, MM(0, 0), .expect_error = DY_STATUS_SHAPE_MISMATCH},
    /* softmax */
    {.label = "softmax [1,2,3] by hand", .kind = DY_OP_SOFTMAX, .n_in = 1, .in = {F32(1, 3)},
     .n_attrs = 1, .attrs = {DY_ATTR_I("axis", -1)}, .data = {sm_x}, .expect = sm_expect, .n_expect = 3},
    {.label = "softmax axis 0 [B,7]", .kind = DY_OP_SOFTMAX, .n_in = 1, .in = {F32(2, -1, 7)},
     .n_attrs = 1, .attrs = {DY_ATTR_I("axis", 0)}, .batch = 3},
    {.label = "softmax axis 1 [2,13,3] large", .kind = DY_OP_SOFTMAX, .n_in = 1, .in = {F32(3, 2, 13, 3)},
     .n_attrs = 1, .attrs = {DY_ATTR_I("axis", 1)}, .lo = 50, .hi = 90},
    {.label = "softmax axis 3 out of range", .kind = DY_OP_SOFTMAX, .n_in = 1, .in = {F32(2, 2, 3)},
     .n_attrs = 1, .attrs = {DY_ATTR_I("axis", 3)}, .expect_error = DY_STATUS_INVALID_ARGUMENT},
    /* movement */
    {.label = "reshape [B,4,3] to [0,-1]", .kind = DY_OP_RESHAPE, .n_in = 1, .in = {F32(3, -1, 4, 3)},
     .n_attrs = 1, .attrs = {DY_ATTR_IS("shape", DY_SHAPE(0, -1), 2)}},
    {.label = "reshape [6,5] to [7,-1] rejected", .kind = DY_OP_RESHAPE, .n_in = 1, .in = {F32(2, 6, 5)},
     .n_attrs = 1, .attrs = {DY_ATTR_IS("shape", DY_SHAPE(7, -1), 2)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "flatten [B,3,4,5] 1..3", .kind = DY_OP_FLATTEN, .n_in = 1, .in = {F32(4, -1, 3, 4, 5)},
     .n_attrs = 2, .attrs = {DY_ATTR_I("start_axis", 1), DY_ATTR_I("stop_axis", -1)}},
    {.label = "transpose [B,3,7] perm 2,0,1", .kind = DY_OP_TRANSPOSE, .n_in = 1, .in = {F32(3, -1, 3, 7)},
     .n_attrs = 1, .attrs = {DY_ATTR_IS("perm", DY_SHAPE(2, 0, 1), 3)}},
    {.label = "transpose [2,1,3,5] perm 3,1,0,2", .kind = DY_OP_TRANSPOSE, .n_in = 1,
     .in = {F32(4, 2, 1, 3, 5)}, .n_attrs = 1, .attrs = {DY_ATTR_IS("perm", DY_SHAPE(3, 1, 0, 2), 4)}},
    /* quantized tensors go through the dtype-generic ops as they are */
    {.label = "reshape i8 [B,4,3] to [0,-1]", .kind = DY_OP_RESHAPE, .n_in = 1,
     .in = {I8(3, -1, 4, 3)}, .n_attrs = 1, .attrs = {DY_ATTR_IS("shape", DY_SHAPE(0, -1), 2)}},
    {.label = "transpose u8 [2,3,5] perm 2,0,1", .kind = DY_OP_TRANSPOSE, .n_in = 1,
     .in = {U8(3, 2, 3, 5)}, .n_attrs = 1, .attrs = {DY_ATTR_IS("perm", DY_SHAPE(2, 0, 1), 3)}},
    {.label = "transpose i32 [B,7] perm 1,0", .kind = DY_OP_TRANSPOSE, .n_in = 1,
     .in = {I32(2, -1, 7)}, .n_attrs = 1, .attrs = {DY_ATTR_IS("perm", DY_SHAPE(1, 0), 2)}},
    {.label = "full f32 [3,5]", .kind = DY_OP_FULL, .n_in = 0, .n_attrs = 3,
     .attrs = {DY_ATTR_IS("shape", DY_SHAPE(3, 5), 2), DY_ATTR_F("value", 2.5), DY_ATTR_I("dtype", DY_F32)}},
    {.label = "full i64 [4]", .kind = DY_OP_FULL, .n_in = 0, .n_attrs = 3,
     .attrs = {DY_ATTR_IS("shape", DY_SHAPE(4), 1), DY_ATTR_F("value", -3), DY_ATTR_I("dtype", DY_I64)}},
    /* fused ops (made by compiler/passes/fuse.c) */
    {.label = "fused_matmul bias relu [B,13]@[13,7]", .kind = DY_OP_FUSED_MATMUL, .n_in = 3,
     .in = {F32(2, -1, 13), F32(2, 13, 7), F32(1, 7)}, .consts = 6, .n_attrs = 4,
     .attrs = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0), DY_ATTR_S("act", "relu"),
               DY_ATTR_F("alpha", 0)}},
    {.label = "fused_matmul tx ty gelu, bias [1,3]", .kind = DY_OP_FUSED_MATMUL, .n_in = 3,
     .in = {F32(2, 5, 4), F32(2, 3, 5), F32(2, 1, 3)}, .consts = 6, .n_attrs = 4,
     .attrs = {DY_ATTR_I("transpose_x", 1), DY_ATTR_I("transpose_y", 1), DY_ATTR_S("act", "gelu"),
               DY_ATTR_F("alpha", 0)}},
    {.label = "fused_matmul no bias leaky_relu batched", .kind = DY_OP_FUSED_MATMUL, .n_in = 2,
     .in = {F32(3, -1, 4, 6), F32(2, 6, 5)}, .n_attrs = 4,
     .attrs = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0),
               DY_ATTR_S("act", "leaky_relu"), DY_ATTR_F("alpha", 0.1)}},
    {.label = "fused_matmul sigmoid, silu, tanh, relu6", .kind = DY_OP_FUSED_MATMUL, .n_in = 3,
     .in = {F32(2, 3, 7), F32(2, 7, 2), F32(1, 2)}, .n_attrs = 4, .lo = -3, .hi = 3,
     .attrs = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0), DY_ATTR_S("act", "relu6"),
               DY_ATTR_F("alpha", 0)}},
    {.label = "fused_conv2d 3x3 pad 1 bias relu [B,3,7,7]", .kind = DY_OP_FUSED_CONV2D, .n_in = 3,
     .in = {F32(4, -1, 3, 7, 7), F32(4, 5, 3, 3, 3), F32(3, 5, 1, 1)}, .consts = 6, .n_attrs = 6,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(1, 1, 1, 1), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "relu"), DY_ATTR_F("alpha", 0)}},
    {.label = "fused_conv2d depthwise stride 2 no bias relu6", .kind = DY_OP_FUSED_CONV2D, .n_in = 2,
     .in = {F32(4, 2, 4, 9, 8), F32(4, 4, 1, 3, 3)}, .consts = 2, .n_attrs = 6, .lo = -8, .hi = 8,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 1, 2, 1), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 4),
               DY_ATTR_S("act", "relu6"), DY_ATTR_F("alpha", 0)}},
    {.label = "fused_conv2d bias [1,O,1,1] sigmoid", .kind = DY_OP_FUSED_CONV2D, .n_in = 3,
     .in = {F32(4, 1, 2, 5, 5), F32(4, 3, 2, 1, 3), F32(4, 1, 3, 1, 1)}, .n_attrs = 6,
     .attrs = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2), DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
               DY_ATTR_IS("dilations", DY_SHAPE(1, 2), 2), DY_ATTR_I("groups", 1),
               DY_ATTR_S("act", "sigmoid"), DY_ATTR_F("alpha", 0)}},
    {.label = "fused_elementwise relu(x*0.5+y) broadcast", .kind = DY_OP_FUSED_ELEMENTWISE,
     .n_in = 2, .in = {F32(2, -1, 7), F32(1, 7)}, .n_attrs = 1,
     .attrs = {DY_ATTR_S("expr", "$0 #0.5 mul $1 add relu")}},
    {.label = "fused_elementwise 3 inputs every token", .kind = DY_OP_FUSED_ELEMENTWISE,
     .n_in = 3, .in = {F32(3, 2, 1, 5), F32(2, 3, 1), F32(3, 2, 3, 5)}, .n_attrs = 1, .lo = 0.5f, .hi = 2,
     .attrs = {DY_ATTR_S("expr", "$0 $1 sub abs sqrt $2 max $0 min exp neg sigmoid $2 div tanh $1 mul")}},
    {.label = "fused_elementwise bad token rejected", .kind = DY_OP_FUSED_ELEMENTWISE,
     .n_in = 1, .in = {F32(1, 3)}, .n_attrs = 1, .attrs = {DY_ATTR_S("expr", "$0 frob")},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
};

const dy_op_case_list dy_op_cases_core = DY_CASE_LIST(cases);
