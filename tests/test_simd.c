/* test_simd.c - the SIMD paths of the generated code agree with each other.
 *
 * Every case is a one-op Program (weights constant, so GEMM and conv take
 * their packed, micro-kernel form): GEMM shapes with M not a multiple of
 * the 12-row tile (every row count 1..13, and its two 6-row halves), K
 * tails of the unrolled 1- and 2-row kernels, K past a block of 512, N
 * tails of the 16-column panel, M = 1, transposed operands, a run-time B, batched
 * matrices, every fused activation; convolutions with padding, strides,
 * dilation, groups, depthwise, 1x1, odd widths; pooling; softmax along the
 * last and a strided axis; layer_norm; broadcast arithmetic.
 *
 * All cases are emitted once into one directory and built, with one driver,
 * once per path: plain C (-DDY_NO_SIMD), SSE2 (the x86-64 baseline), AVX2 +
 * FMA, AVX-512 (run only where the CPU has it; always compiled), clang with
 * -march=native, and NEON with aarch64-linux-gnu-gcc run under
 * qemu-aarch64 (skipped, saying so, when those tools are absent: Debian
 * gcc-aarch64-linux-gnu and qemu-user). Every build is
 * `-std=c99 -Wall -Wextra -Werror -pedantic -O2`. Each path's outputs must
 * equal the plain-C path's within the case's tolerance (relative to the
 * output's largest magnitude: the paths differ only in rounding, FMA or
 * not, and the vector math's few ulp), and the plain-C outputs must equal
 * the eager kernels' (the static executor).
 *
 * Also: the cases emitted with --threads 2, and with --plain-kernels (the
 * 6-row GEMM kernels on AVX-512), give the same results; with --no-pack-a
 * (matmul's A read in place, not packed at run time) exactly the same; an
 * object built without --threads references no pthread symbol (nor
 * anything else but memcpy and memset).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define SCRATCH DY_BUILD_DIR "/simd_scratch"
#define THREADED SCRATCH "/threads" /* the same cases emitted with --threads 2 */
#define NARROW SCRATCH "/narrow"    /* and with --plain-kernels (6-row GEMM tiles) */
#define INPLACE SCRATCH "/in_place" /* and with --no-pack-a (matmul's A read in place) */
#define STRICT "-std=c99 -Wall -Wextra -Werror -pedantic -O2"

#define sh(...) dy_test_sh(NULL, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* The cases                                                           */
/* ------------------------------------------------------------------ */

enum { MAX_IN = 8, MAX_ATTR = 10, BATCH = 3 };

typedef struct {
  const char *label;
  dy_op_kind kind;
  int n_in;
  dy_type in[MAX_IN];
  unsigned consts;          /* bit i: input i is a weight */
  dy_attr attrs[MAX_ATTR];
  int n_attrs;
  double tol;               /* relative to 1 + max |output| */
} simd_case;

#define T2(a, b) {DY_F32, 2, {a, b}}
#define T3(a, b, c) {DY_F32, 3, {a, b, c}}
#define T1(a) {DY_F32, 1, {a}}
#define T4(a, b, c, d) {DY_F32, 4, {a, b, c, d}}
#define MM(tx, ty) DY_ATTR_I("transpose_x", tx), DY_ATTR_I("transpose_y", ty)
#define ACT(a, al) DY_ATTR_S("act", a), DY_ATTR_F("alpha", al)

static const int64_t one2[] = {1, 1}, two2[] = {2, 2}, three2[] = {3, 3}, zero4[] = {0, 0, 0, 0},
                     one4[] = {1, 1, 1, 1}, two4[] = {2, 2, 2, 2}, pad_tl[] = {1, 2, 0, 1},
                     two_one[] = {2, 1};
#define CONV(st, pd, dl, g) DY_ATTR_IS("strides", st, 2), DY_ATTR_IS("paddings", pd, 4), \
                            DY_ATTR_IS("dilations", dl, 2), DY_ATTR_I("groups", g)
#define POOL(type, k, st, pd, glob, adapt)                                           \
  DY_ATTR_S("pooling_type", type), DY_ATTR_IS("ksize", k, 2), DY_ATTR_IS("strides", st, 2), \
      DY_ATTR_IS("paddings", pd, 4), DY_ATTR_I("ceil_mode", 0), DY_ATTR_I("exclusive", 1),   \
      DY_ATTR_I("global_pooling", glob), DY_ATTR_I("adaptive", adapt)

static const simd_case cases[] = {
    /* GEMM: constant B, packed at compile time */
    {"mm 1x17x33", DY_OP_MATMUL, 2, {T2(1, 17), T2(17, 33)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm 7x31x17", DY_OP_MATMUL, 2, {T2(7, 31), T2(31, 17)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm 13x64x48", DY_OP_MATMUL, 2, {T2(13, 64), T2(64, 48)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm Bx100x40", DY_OP_MATMUL, 2, {T2(-1, 100), T2(100, 40)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm 1x1000x20 (2 k-blocks)", DY_OP_MATMUL, 2, {T2(1, 1000), T2(1000, 20)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm 11x530x19 (k-blocks)", DY_OP_MATMUL, 2, {T2(11, 530), T2(530, 19)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm 100x30x20 (row blocks)", DY_OP_MATMUL, 2, {T2(100, 30), T2(30, 20)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm trans_y 5x40x24", DY_OP_MATMUL, 2, {T2(5, 40), T2(24, 40)}, 2, {MM(0, 1)}, 2, 1e-5},
    {"mm trans_x 9x20x30", DY_OP_MATMUL, 2, {T2(20, 9), T2(20, 30)}, 2, {MM(1, 0)}, 2, 1e-5},
    {"mm batched B [2,24,20]", DY_OP_MATMUL, 2, {T3(2, 5, 24), T3(2, 24, 20)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm fold Bx7x24 @ 24x32", DY_OP_MATMUL, 2, {T3(-1, 7, 24), T2(24, 32)}, 2, {MM(0, 0)}, 2, 1e-5},
    /* every row count of the 12-row tile (and of the two 6-row halves of
     * the other ISAs and --plain-kernels), panel tails, k odd past KC */
    {"mm tile 1x517x33", DY_OP_MATMUL, 2, {T2(1, 517), T2(517, 33)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 2x37x1", DY_OP_MATMUL, 2, {T2(2, 37), T2(37, 1)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 3x517x17", DY_OP_MATMUL, 2, {T2(3, 517), T2(517, 17)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 4x37x16", DY_OP_MATMUL, 2, {T2(4, 37), T2(37, 16)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 5x517x31", DY_OP_MATMUL, 2, {T2(5, 517), T2(517, 31)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 6x37x2", DY_OP_MATMUL, 2, {T2(6, 37), T2(37, 2)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 7x517x15", DY_OP_MATMUL, 2, {T2(7, 517), T2(517, 15)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 8x37x32", DY_OP_MATMUL, 2, {T2(8, 37), T2(37, 32)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 9x517x3", DY_OP_MATMUL, 2, {T2(9, 517), T2(517, 3)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 10x37x47", DY_OP_MATMUL, 2, {T2(10, 37), T2(37, 47)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 11x517x9", DY_OP_MATMUL, 2, {T2(11, 517), T2(517, 9)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 12x37x24", DY_OP_MATMUL, 2, {T2(12, 37), T2(37, 24)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm tile 13x517x65", DY_OP_MATMUL, 2, {T2(13, 517), T2(517, 65)}, 2, {MM(0, 0)}, 2, 1e-5},
    /* the same through the packed weight (DY_PACK_A12) of convolutions */
    {"conv tile o=1", DY_OP_CONV2D, 2, {T4(1, 3, 5, 4), T4(1, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=2", DY_OP_CONV2D, 2, {T4(1, 3, 5, 5), T4(2, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=3", DY_OP_CONV2D, 2, {T4(1, 3, 5, 6), T4(3, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=4", DY_OP_CONV2D, 2, {T4(1, 3, 5, 7), T4(4, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=5", DY_OP_CONV2D, 2, {T4(1, 3, 5, 8), T4(5, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=6", DY_OP_CONV2D, 2, {T4(1, 3, 5, 9), T4(6, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=7", DY_OP_CONV2D, 2, {T4(1, 3, 5, 10), T4(7, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=8", DY_OP_CONV2D, 2, {T4(1, 3, 5, 11), T4(8, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=9", DY_OP_CONV2D, 2, {T4(1, 3, 5, 12), T4(9, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=10", DY_OP_CONV2D, 2, {T4(1, 3, 5, 13), T4(10, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=11", DY_OP_CONV2D, 2, {T4(1, 3, 5, 14), T4(11, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=12", DY_OP_CONV2D, 2, {T4(1, 3, 5, 15), T4(12, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=13 k-blocks", DY_OP_FUSED_CONV2D, 3, {T4(1, 59, 5, 6), T4(13, 59, 3, 3), T1(13)}, 6, {CONV(one2, one4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"conv tile o=25 k-blocks", DY_OP_CONV2D, 2, {T4(-1, 59, 4, 5), T4(25, 59, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv tile o=22 groups 2", DY_OP_CONV2D, 2, {T4(1, 4, 6, 6), T4(44, 2, 3, 3)}, 2, {CONV(one2, one4, one2, 2)}, 4, 1e-5},
    /* weights over 1 MB: the weight-stationary form, several panels at once */
    {"conv weight-stationary 1 MB", DY_OP_FUSED_CONV2D, 4, {T4(1, 1200, 5, 7), T4(25, 1200, 3, 3), T1(25), T4(1, 25, 5, 7)}, 6, {CONV(one2, one4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"conv weight-stationary 2 blocks", DY_OP_CONV2D, 2, {T4(-1, 1200, 8, 8), T4(25, 1200, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv winograd tile o=19", DY_OP_FUSED_CONV2D, 3, {T4(1, 40, 9, 10), T4(19, 40, 3, 3), T1(19)}, 6, {CONV(one2, one4, one2, 1), ACT("", 0), DY_ATTR_S("algo", "winograd")}, 7, 1e-5},
    /* GEMM: run-time B, packed into scratch */
    {"mm runtime 6x10x3", DY_OP_MATMUL, 2, {T2(6, 10), T2(10, 3)}, 0, {MM(0, 0)}, 2, 1e-5},
    {"mm runtime Bx4x17x33", DY_OP_MATMUL, 2, {T3(-1, 17, 33), T3(-1, 33, 21)}, 0, {MM(0, 0)}, 2, 1e-5},
    {"mm runtime q@k^T", DY_OP_MATMUL, 2, {T4(-1, 2, 9, 8), T4(-1, 2, 9, 8)}, 0, {MM(0, 1)}, 2, 1e-5},
    {"mm vector x [50]", DY_OP_MATMUL, 2, {T1(50), T2(50, 20)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"mm vector y [40]", DY_OP_MATMUL, 2, {T2(7, 40), T1(40)}, 0, {MM(0, 0)}, 2, 1e-5},
    /* fused epilogues */
    {"linear relu", DY_OP_FUSED_MATMUL, 3, {T2(-1, 70), T2(70, 37), T1(37)}, 6, {MM(0, 0), ACT("relu", 0)}, 4, 1e-5},
    {"linear relu6", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("relu6", 0)}, 4, 1e-5},
    {"linear leaky", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("leaky_relu", 0.1)}, 4, 1e-5},
    {"linear sigmoid", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("sigmoid", 0)}, 4, 1e-5},
    {"linear tanh", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("tanh", 0)}, 4, 1e-5},
    {"linear gelu", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("gelu", 0)}, 4, 1e-5},
    {"linear silu", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("silu", 0)}, 4, 1e-5},
    {"linear 1x784x512", DY_OP_FUSED_MATMUL, 3, {T2(1, 784), T2(784, 512), T1(512)}, 6, {MM(0, 0), ACT("relu", 0)}, 4, 1e-5},
    /* A (the activations) packed at run time per block of rows x k (m >=
     * 96, n >= 177: B has 12 panels or more): a partial last block of rows
     * (96 + 96 + 13, the last tile 1 row), k in two blocks with a tail
     * past 16-column chunks (265 = 16 x 16 + 9), a panel tail; transposed
     * A; batched matrices; m known only at run time (batch x 40 rows:
     * packed when m >= 96, checked at run time; batch x 1 rows, at most 3:
     * in place); an epilogue; a run-time B as well */
    {"pack A 205x530x200", DY_OP_MATMUL, 2, {T2(205, 530), T2(530, 200)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"pack A trans_x 100x40x190", DY_OP_MATMUL, 2, {T2(40, 100), T2(40, 190)}, 2, {MM(1, 0)}, 2, 1e-5},
    {"pack A batched [2,100,40]", DY_OP_MATMUL, 2, {T3(2, 100, 40), T3(2, 40, 180)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"pack A fold Bx40x48", DY_OP_MATMUL, 2, {T3(-1, 40, 48), T2(48, 200)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"pack A Bx48 (m 3: in place)", DY_OP_MATMUL, 2, {T2(-1, 48), T2(48, 200)}, 2, {MM(0, 0)}, 2, 1e-5},
    {"pack A linear gelu 100x64x190", DY_OP_FUSED_MATMUL, 3, {T2(100, 64), T2(64, 190), T1(190)}, 6, {MM(0, 0), ACT("gelu", 0)}, 4, 1e-5},
    {"pack A runtime B 110x33x180", DY_OP_MATMUL, 2, {T2(110, 33), T2(33, 180)}, 0, {MM(0, 0)}, 2, 1e-5},
    {"pack A runtime B^T 100x40x185", DY_OP_MATMUL, 2, {T3(-1, 100, 40), T3(-1, 185, 40)}, 0, {MM(0, 1)}, 2, 1e-5},
    /* convolution: the packed weight times im2col panels */
    {"conv 3x3 pad 1", DY_OP_CONV2D, 2, {T4(-1, 3, 10, 10), T4(8, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv 3x3 pad 1 16x16", DY_OP_CONV2D, 2, {T4(1, 5, 16, 16), T4(13, 5, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"conv 5x5 pad 0 odd", DY_OP_CONV2D, 2, {T4(2, 2, 13, 11), T4(7, 2, 5, 5)}, 2, {CONV(one2, zero4, one2, 1)}, 4, 1e-5},
    {"conv stride 2", DY_OP_CONV2D, 2, {T4(1, 4, 15, 17), T4(6, 4, 3, 3)}, 2, {CONV(two2, one4, one2, 1)}, 4, 1e-5},
    {"conv dilation 2", DY_OP_CONV2D, 2, {T4(1, 3, 12, 12), T4(5, 3, 3, 3)}, 2, {CONV(one2, two4, two2, 1)}, 4, 1e-5},
    {"conv asym pad", DY_OP_CONV2D, 2, {T4(1, 3, 9, 20), T4(4, 3, 3, 3)}, 2, {CONV(one2, pad_tl, one2, 1)}, 4, 1e-5},
    {"conv groups 2", DY_OP_CONV2D, 2, {T4(2, 6, 9, 9), T4(10, 3, 3, 3)}, 2, {CONV(one2, one4, one2, 2)}, 4, 1e-5},
    {"conv 1x1", DY_OP_CONV2D, 2, {T4(1, 32, 7, 7), T4(20, 32, 1, 1)}, 2, {CONV(one2, zero4, one2, 1)}, 4, 1e-5},
    {"conv deep k (k-blocks)", DY_OP_CONV2D, 2, {T4(1, 64, 6, 6), T4(9, 64, 3, 3)}, 2, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    {"depthwise 3x3", DY_OP_CONV2D, 2, {T4(-1, 8, 11, 19), T4(8, 1, 3, 3)}, 2, {CONV(one2, one4, one2, 8)}, 4, 1e-5},
    {"depthwise stride 2", DY_OP_CONV2D, 2, {T4(1, 4, 10, 10), T4(4, 1, 3, 3)}, 2, {CONV(two2, one4, one2, 4)}, 4, 1e-5},
    /* the padded-plane depthwise kernel (emit_depthwise.c): rows shorter
     * than, a multiple of and longer than DY_VW, stride 1, 2 and (2, 1),
     * odd sizes, asymmetric padding, 5x5, dilation 2, a 1x1 kernel, 1 and
     * 33 channels, activations in registers and over the row */
    {"dw s1 7x7 33 ch relu6", DY_OP_FUSED_CONV2D, 3, {T4(-1, 33, 7, 7), T4(33, 1, 3, 3), T1(33)}, 6, {CONV(one2, one4, one2, 33), ACT("relu6", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw s2 14x14 leaky", DY_OP_FUSED_CONV2D, 3, {T4(1, 5, 14, 14), T4(5, 1, 3, 3), T1(5)}, 6, {CONV(two2, one4, one2, 5), ACT("leaky_relu", 0.1), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw s2 odd asym pad", DY_OP_CONV2D, 2, {T4(2, 3, 15, 17), T4(3, 1, 3, 3)}, 2, {CONV(two2, pad_tl, one2, 3)}, 4, 1e-5},
    {"dw 5x5 s2 pad 2", DY_OP_CONV2D, 2, {T4(1, 2, 19, 23), T4(2, 1, 5, 5)}, 2, {CONV(two2, two4, one2, 2)}, 4, 1e-5},
    {"dw s2 dilation 2", DY_OP_CONV2D, 2, {T4(1, 2, 13, 21), T4(2, 1, 3, 3)}, 2, {CONV(two2, two4, two2, 2)}, 4, 1e-5},
    {"dw s1 9x37 sigmoid", DY_OP_FUSED_CONV2D, 3, {T4(1, 3, 9, 37), T4(3, 1, 3, 3), T1(3)}, 6, {CONV(one2, one4, one2, 3), ACT("sigmoid", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw 1 ch pad 0 5x40", DY_OP_CONV2D, 2, {T4(1, 1, 5, 40), T4(1, 1, 3, 3)}, 2, {CONV(one2, zero4, one2, 1)}, 4, 1e-5},
    {"dw s1 32 wide", DY_OP_FUSED_CONV2D, 3, {T4(1, 4, 6, 32), T4(4, 1, 3, 3), T1(4)}, 6, {CONV(one2, one4, one2, 4), ACT("relu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw stride (2, 1)", DY_OP_CONV2D, 2, {T4(1, 2, 9, 20), T4(2, 1, 3, 3)}, 2, {CONV(two_one, one4, one2, 2)}, 4, 1e-5},
    /* rows computed 2 (5x5) or 4 (3x3) at a time, a tail of single rows:
     * efficientnet_b0's 5x5 on 7x7 with silu, a 5x5 stride 2 with
     * hard_swish, 3x3 on 14x14 (no tail) */
    {"dw 5x5 7x7 silu rows", DY_OP_FUSED_CONV2D, 3, {T4(-1, 5, 7, 7), T4(5, 1, 5, 5), T1(5)}, 6, {CONV(one2, two4, one2, 5), ACT("silu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw 5x5 s2 15x15 hard_swish rows", DY_OP_FUSED_CONV2D, 3, {T4(1, 3, 15, 15), T4(3, 1, 5, 5), T1(3)}, 6, {CONV(two2, two4, one2, 3), ACT("hard_swish", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw 3x3 14x14 rows no tail", DY_OP_FUSED_CONV2D, 3, {T4(1, 4, 16, 14), T4(4, 1, 3, 3), T1(4)}, 6, {CONV(one2, one4, one2, 4), ACT("relu6", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw 1x1 kernel s2", DY_OP_CONV2D, 2, {T4(1, 3, 8, 9), T4(3, 1, 1, 1)}, 2, {CONV(two2, zero4, one2, 3)}, 4, 1e-5},
    /* fused_dwpw (codegen/ops/emit_dwpw.c): several rows a panel (7 wide),
     * 56 wide (bands of two rows), stride 2, a residual, 520 channels */
#define DWPW(adw, act) DY_ATTR_S("act_dw", adw), DY_ATTR_F("alpha_dw", 0.1), DY_ATTR_S("act", act), DY_ATTR_F("alpha", 0.2)
    {"dwpw 7x7 relu6", DY_OP_FUSED_DWPW, 5, {T4(-1, 12, 7, 7), T4(12, 1, 3, 3), T1(12), T4(20, 12, 1, 1), T1(20)}, 30, {CONV(one2, one4, one2, 12), DWPW("relu6", "relu6")}, 8, 1e-5},
    {"dwpw 56 wide s2 leaky", DY_OP_FUSED_DWPW, 5, {T4(1, 8, 9, 111), T4(8, 1, 3, 3), T1(8), T4(13, 8, 1, 1), T1(13)}, 30, {CONV(two2, one4, one2, 8), DWPW("leaky_relu", "leaky_relu")}, 8, 1e-5},
    {"dwpw 56 wide residual", DY_OP_FUSED_DWPW, 6, {T4(2, 6, 5, 56), T4(6, 1, 3, 3), T1(6), T4(7, 6, 1, 1), T1(7), T4(2, 7, 5, 56)}, 30, {CONV(one2, one4, one2, 6), DWPW("relu6", "")}, 8, 1e-5},
    /* fused_irb (codegen/ops/emit_irb.c): one band (7x7, a residual), several
     * bands an image at stride 2 (the halo kept; --threads splits them),
     * 40 -> 240 channels in bands of 8 rows with a residual */
#define IRB(adw, act, ae) DWPW(adw, act), DY_ATTR_S("act_e", ae), DY_ATTR_F("alpha_e", 0.3)
    {"irb 7x7 ratio 6 residual", DY_OP_FUSED_IRB, 8, {T4(-1, 8, 7, 7), T4(48, 8, 1, 1), T1(48), T4(48, 1, 3, 3), T1(48), T4(8, 48, 1, 1), T1(8), T4(-1, 8, 7, 7)}, 126, {CONV(one2, one4, one2, 48), IRB("relu6", "", "relu6")}, 10, 1e-5},
    {"irb 71x56 s2 bands leaky", DY_OP_FUSED_IRB, 7, {T4(1, 8, 71, 56), T4(48, 8, 1, 1), T1(48), T4(48, 1, 3, 3), T1(48), T4(13, 48, 1, 1), T1(13)}, 126, {CONV(two2, one4, one2, 48), IRB("leaky_relu", "relu", "leaky_relu")}, 10, 1e-5},
    {"irb 40 -> 240 30x28 bands residual", DY_OP_FUSED_IRB, 8, {T4(1, 40, 30, 28), T4(240, 40, 1, 1), T1(240), T4(240, 1, 3, 3), T1(240), T4(40, 240, 1, 1), T1(40), T4(1, 40, 30, 28)}, 126, {CONV(one2, one4, one2, 240), IRB("relu6", "relu", "relu")}, 10, 1e-5},
    {"dwpw 520 ch s2 odd", DY_OP_FUSED_DWPW, 5, {T4(1, 520, 9, 7), T4(520, 1, 3, 3), T1(520), T4(5, 520, 1, 1), T1(5)}, 30, {CONV(two2, pad_tl, one2, 520), DWPW("", "relu")}, 8, 1e-5},
    /* algo gemv (the pass conv-gemv): one window, the whole input, as a
     * GEMV on the transposed packed weight: squeeze-and-excitation's 1x1
     * convs on [N, C, 1, 1] (37 outputs: a panel tail; 600 deep: two
     * blocks of k), a 3x3 kernel on a 3x3 image, activations in the
     * epilogue and on the tile */
    {"conv gemv SE 50 -> 37 silu", DY_OP_FUSED_CONV2D, 3, {T4(-1, 50, 1, 1), T4(37, 50, 1, 1), T1(37)}, 6, {CONV(one2, zero4, one2, 1), ACT("silu", 0), DY_ATTR_S("algo", "gemv")}, 7, 1e-5},
    {"conv gemv SE 600 -> 20 relu", DY_OP_FUSED_CONV2D, 3, {T4(1, 600, 1, 1), T4(20, 600, 1, 1), T1(20)}, 6, {CONV(one2, zero4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "gemv")}, 7, 1e-5},
    {"conv gemv 3x3 image hard_swish", DY_OP_FUSED_CONV2D, 3, {T4(-1, 6, 3, 3), T4(17, 6, 3, 3), T1(17)}, 6, {CONV(two2, zero4, one2, 1), ACT("hard_swish", 0), DY_ATTR_S("algo", "gemv")}, 7, 1e-5},
    {"conv gemv no bias", DY_OP_FUSED_CONV2D, 2, {T4(-1, 40, 1, 1), T4(16, 40, 1, 1)}, 2, {CONV(one2, zero4, one2, 1), ACT("", 0), DY_ATTR_S("algo", "gemv")}, 7, 1e-5},
    {"conv bias relu", DY_OP_FUSED_CONV2D, 3, {T4(-1, 3, 12, 12), T4(10, 3, 3, 3), T1(10)}, 6, {CONV(one2, one4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"conv bias silu", DY_OP_FUSED_CONV2D, 3, {T4(1, 3, 8, 8), T4(7, 3, 3, 3), T1(7)}, 6, {CONV(one2, one4, one2, 1), ACT("silu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"depthwise bias relu6", DY_OP_FUSED_CONV2D, 3, {T4(1, 6, 9, 9), T4(6, 1, 3, 3), T1(6)}, 6, {CONV(one2, one4, one2, 6), ACT("relu6", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"conv winograd bias relu", DY_OP_FUSED_CONV2D, 3, {T4(-1, 8, 13, 11), T4(12, 8, 3, 3), T1(12)}, 6, {CONV(one2, one4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "winograd")}, 7, 1e-5},
    {"conv winograd2 bias relu 7x7", DY_OP_FUSED_CONV2D, 3, {T4(-1, 9, 7, 7), T4(13, 9, 3, 3), T1(13)}, 6, {CONV(one2, one4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "winograd2")}, 7, 1e-5},
    {"conv winograd6 bias relu 13x9", DY_OP_FUSED_CONV2D, 3, {T4(-1, 8, 13, 9), T4(12, 8, 3, 3), T1(12)}, 6, {CONV(one2, one4, one2, 1), ACT("relu", 0), DY_ATTR_S("algo", "winograd6")}, 7, 1e-4},
    {"conv run-time weight", DY_OP_CONV2D, 2, {T4(1, 2, 6, 6), T4(3, 2, 3, 3)}, 0, {CONV(one2, one4, one2, 1)}, 4, 1e-5},
    /* pooling */
    {"maxpool 2x2 s2", DY_OP_POOL2D, 1, {T4(-1, 3, 32, 20)}, 0, {POOL("max", two2, two2, zero4, 0, 0)}, 8, 0},
    {"avgpool 2x2 s2", DY_OP_POOL2D, 1, {T4(1, 3, 18, 34)}, 0, {POOL("avg", two2, two2, zero4, 0, 0)}, 8, 1e-6},
    {"maxpool 3x3 s1", DY_OP_POOL2D, 1, {T4(1, 2, 13, 21)}, 0, {POOL("max", three2, one2, zero4, 0, 0)}, 8, 0},
    {"maxpool 3x3 s2 pad", DY_OP_POOL2D, 1, {T4(1, 2, 13, 21)}, 0, {POOL("max", three2, two2, one4, 0, 0)}, 8, 0},
    {"global avgpool", DY_OP_POOL2D, 1, {T4(-1, 5, 7, 9)}, 0, {POOL("avg", one2, one2, zero4, 1, 0)}, 8, 1e-6},
    /* softmax, layer_norm, arithmetic */
    {"softmax last axis", DY_OP_SOFTMAX, 1, {T3(-1, 4, 37)}, 0, {DY_ATTR_I("axis", -1)}, 1, 1e-6},
    {"softmax axis 1", DY_OP_SOFTMAX, 1, {T3(2, 9, 21)}, 0, {DY_ATTR_I("axis", 1)}, 1, 1e-6},
    {"attention [B,2,13,8] dv 20", DY_OP_FUSED_ATTENTION, 3, {T4(-1, 2, 13, 8), T4(-1, 2, 13, 8), T4(-1, 2, 13, 20)}, 0, {DY_ATTR_F("scale", 0.35), DY_ATTR_S("layout", ""), DY_ATTR_IS("packed", NULL, 0)}, 3, 1e-5},
    {"attention lhd [19,4,32]", DY_OP_FUSED_ATTENTION, 3, {T3(19, 4, 32), T3(19, 4, 32), T3(19, 4, 32)}, 0, {DY_ATTR_F("scale", 0.17677669), DY_ATTR_S("layout", "lhd"), DY_ATTR_IS("packed", NULL, 0)}, 3, 1e-5},
    {"attention lhd [B,9,2,16]", DY_OP_FUSED_ATTENTION, 3, {T4(-1, 9, 2, 16), T4(-1, 9, 2, 16), T4(-1, 9, 2, 16)}, 0, {DY_ATTR_F("scale", 0.25), DY_ATTR_S("layout", "lhd"), DY_ATTR_IS("packed", NULL, 0)}, 3, 1e-5},
    {"attention packed [B,9,96] 3 heads of 20", DY_OP_FUSED_ATTENTION, 3, {T3(-1, 9, 96), T3(-1, 17, 96), T3(-1, 17, 96)}, 0, {DY_ATTR_F("scale", 0.2236068), DY_ATTR_S("layout", "lhd"), DY_ATTR_IS("packed", DY_SHAPE(3, 20, 20, 0, 30, 36), 6)}, 3, 1e-5},
    {"attention packed [70,192] 8 heads of 8", DY_OP_FUSED_ATTENTION, 3, {T2(70, 192), T2(70, 192), T2(70, 192)}, 0, {DY_ATTR_F("scale", 0.35355339), DY_ATTR_S("layout", "lhd"), DY_ATTR_IS("packed", DY_SHAPE(8, 8, 8, 0, 64, 128), 6)}, 3, 1e-5},
    {"attention packed [5,40] 2 heads of 8, dv 9", DY_OP_FUSED_ATTENTION, 3, {T2(5, 40), T2(7, 40), T2(7, 30)}, 0, {DY_ATTR_F("scale", 0.35), DY_ATTR_S("layout", "lhd"), DY_ATTR_IS("packed", DY_SHAPE(2, 8, 9, 3, 20, 5), 6)}, 3, 1e-5},
    {"attention lhd [B,3,8] dv 5", DY_OP_FUSED_ATTENTION, 3, {T3(-1, 3, 8), T3(-1, 3, 8), T3(-1, 3, 5)}, 0, {DY_ATTR_F("scale", 0.5), DY_ATTR_S("layout", "lhd"), DY_ATTR_IS("packed", NULL, 0)}, 3, 1e-5},
    {"layer_norm", DY_OP_LAYER_NORM, 3, {T3(-1, 5, 45), T1(45), T1(45)}, 6, {DY_ATTR_I("begin_norm_axis", 2), DY_ATTR_F("epsilon", 1e-5)}, 2, 1e-5},
    {"add bias broadcast", DY_OP_ADD, 2, {T3(-1, 7, 37), T1(37)}, 2, {{0}}, 0, 0},
    {"mul column broadcast", DY_OP_MUL, 2, {T3(2, 7, 37), T3(2, 7, 1)}, 0, {{0}}, 0, 0},
    {"relu", DY_OP_RELU, 1, {T2(-1, 45)}, 0, {{0}}, 0, 0},
    {"sigmoid", DY_OP_SIGMOID, 1, {T2(-1, 45)}, 0, {{0}}, 0, 1e-6},
    {"tanh", DY_OP_TANH, 1, {T2(-1, 45)}, 0, {{0}}, 0, 1e-6},
    /* the activations through dy_act (out of line, vector math), their
     * fused forms on the GEMM tile and the depthwise row; row sums of
     * reduce_mean / reduce_sum in vector registers */
    {"silu", DY_OP_SILU, 1, {T2(-1, 45)}, 0, {{0}}, 0, 1e-6},
    {"hard_swish", DY_OP_HARD_SWISH, 1, {T2(-1, 45)}, 0, {{0}}, 0, 1e-6},
    {"gelu", DY_OP_GELU, 1, {T2(-1, 45)}, 0, {DY_ATTR_I("approximate", 0)}, 1, 1e-6},
    {"linear hard_swish", DY_OP_FUSED_MATMUL, 3, {T2(5, 20), T2(20, 40), T1(40)}, 6, {MM(0, 0), ACT("hard_swish", 0)}, 4, 1e-5},
    {"conv bias hard_swish", DY_OP_FUSED_CONV2D, 3, {T4(1, 3, 8, 8), T4(7, 3, 3, 3), T1(7)}, 6, {CONV(one2, one4, one2, 1), ACT("hard_swish", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw s1 9x37 silu", DY_OP_FUSED_CONV2D, 3, {T4(1, 3, 9, 37), T4(3, 1, 3, 3), T1(3)}, 6, {CONV(one2, one4, one2, 3), ACT("silu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw s2 14x14 hard_swish", DY_OP_FUSED_CONV2D, 3, {T4(1, 5, 14, 14), T4(5, 1, 3, 3), T1(5)}, 6, {CONV(two2, one4, one2, 5), ACT("hard_swish", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"dw 5x5 s2 silu", DY_OP_FUSED_CONV2D, 3, {T4(1, 4, 19, 23), T4(4, 1, 5, 5), T1(4)}, 6, {CONV(two2, two4, one2, 4), ACT("silu", 0), DY_ATTR_S("algo", "")}, 7, 1e-5},
    {"conv small silu", DY_OP_FUSED_CONV2D, 3, {T4(1, 3, 10, 9), T4(6, 3, 3, 3), T1(6)}, 6, {CONV(one2, one4, one2, 1), ACT("silu", 0), DY_ATTR_S("algo", "small")}, 7, 1e-5},
    {"reduce_mean HW", DY_OP_REDUCE_MEAN, 1, {T4(-1, 5, 13, 11)}, 0, {DY_ATTR_IS("axes", DY_SHAPE(2, 3), 2), DY_ATTR_I("keepdim", 1)}, 2, 1e-6},
    {"reduce_sum last 67", DY_OP_REDUCE_SUM, 1, {T3(2, 3, 67)}, 0, {DY_ATTR_IS("axes", DY_SHAPE(2), 1), DY_ATTR_I("keepdim", 0)}, 2, 1e-6},
    {"reduce_mean all", DY_OP_REDUCE_MEAN, 1, {T2(9, 70)}, 0, {DY_ATTR_IS("axes", NULL, 0), DY_ATTR_I("keepdim", 0)}, 2, 1e-6},
};
enum { N_CASES = (int)(sizeof cases / sizeof *cases) };

/* ------------------------------------------------------------------ */
/* Emitting the cases, and their inputs                                */
/* ------------------------------------------------------------------ */

static uint64_t rng = 0x0123456789ABCDEFull;
static float uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 4503599627370496.0 - 1.0); /* [-1, 1) */
}

typedef struct {
  int group;                   /* the program (and emitted file) it is in */
  int n_feeds;
  int feed_slot[MAX_IN];       /* its feeds' positions in the group's inputs */
  int64_t feed_numel[MAX_IN];
  int out_slot;                /* its output's position in the group's outputs */
  int64_t out_numel;
  float *ref;                  /* eager (static executor) output */
  bool ok;
} emitted;

/* Cases go into programs of up to GROUP ops each, one emitted file per
 * program: a few translation units per path instead of one per case. */
enum { GROUP = 12, N_GROUPS = (N_CASES + GROUP - 1) / GROUP };

static emitted em[N_CASES];
static int group_feeds[N_GROUPS], group_outs[N_GROUPS];

static dy_type at_batch(const dy_type *t) {
  dy_type c = *t;
  for (int d = 0; d < c.rank; d++)
    if (c.shape[d] < 0)
      c.shape[d] = BATCH;
  return c;
}

static bool write_bin(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  if (f)
    fclose(f);
  return ok;
}

/* Append case i to program p (its vars named c<i>_...); its feeds' data go
 * to feeds[*nf..]. */
static bool add_case(dy_program *p, int i, dy_tensor **feeds, int *nf, int *nout, dy_error *err) {
  const simd_case *c = &cases[i];
  emitted *e = &em[i];
  int ids[MAX_IN];
  bool ok = true;
  for (int k = 0; k < c->n_in && ok; k++) {
    char name[32];
    snprintf(name, sizeof name, "c%d_in%d", i, k);
    ids[k] = dy_program_add_var(p, name, &c->in[k]);
    dy_type ct = at_batch(&c->in[k]);
    dy_tensor *t = dy_tensor_new(DY_F32, ct.rank, ct.shape);
    for (int64_t j = 0; j < dy_tensor_numel(t); j++)
      dy_tensor_f32(t)[j] = c->kind == DY_OP_LAYER_NORM && k == 0 ? 50.0f + uniform() : uniform();
    if (c->consts >> k & 1) {
      ok = dy_program_set_data(p, ids[k], t->data, (size_t)t->nbytes, err) == DY_OK;
      dy_tensor_free(t);
    } else {
      ok = dy_program_add_feed(p, ids[k], err) == DY_OK;
      e->feed_slot[e->n_feeds] = *nf;
      e->feed_numel[e->n_feeds++] = dy_tensor_numel(t);
      feeds[(*nf)++] = t;
    }
  }
  dy_op probe = {.kind = c->kind, .attrs = (dy_attr *)c->attrs, .n_attrs = c->n_attrs};
  dy_type out_t;
  ok = ok && dy_infer(&probe, c->in, c->n_in, &out_t, err) == DY_OK;
  if (ok) {
    char name[32];
    snprintf(name, sizeof name, "c%d_out", i);
    int o = dy_program_add_var(p, name, &out_t);
    dy_program_append_op(p, 0, c->kind, ids, c->n_in, &o, 1, c->attrs, c->n_attrs,
                         (dy_srcloc){"test_simd.c", 1});
    ok = dy_program_add_fetch(p, o, err) == DY_OK;
    dy_type ot = at_batch(&out_t);
    e->out_numel = dy_type_numel(&ot);
    e->out_slot = (*nout)++;
  }
  if (!ok)
    fprintf(stderr, "\n  [%s] %s\n", c->label, err->msg);
  return ok;
}

/* Build group g, run it eagerly, emit g<g>.c/.h and its inputs' .bin. */
static bool emit_group(int g) {
  dy_error err = {0};
  dy_program *p = dy_program_new();
  dy_tensor *feeds[GROUP * MAX_IN] = {0}, *outs[GROUP] = {0};
  int nf = 0, nout = 0, first = g * GROUP, last = first + GROUP < N_CASES ? first + GROUP : N_CASES;
  bool ok = true;
  for (int i = first; i < last && ok; i++) {
    em[i].group = g;
    ok = add_case(p, i, feeds, &nf, &nout, &err);
  }
  group_feeds[g] = nf;
  group_outs[g] = nout;
  ok = ok && dy_verify(p, &err) == DY_OK &&
       dy_executor_run(p, feeds, nf, outs, nout, &err) == DY_OK;
  for (int i = first; i < last && ok; i++) {
    em[i].ref = malloc(sizeof(float) * (size_t)em[i].out_numel);
    memcpy(em[i].ref, outs[em[i].out_slot]->data, sizeof(float) * (size_t)em[i].out_numel);
  }
  /* plan with the kernels' scratch, emit: one thread, two, one with the
   * plain kernels and one with A in place */
  char name[32], path[600];
  snprintf(name, sizeof name, "g%d", g);
  for (int v = 0; v < 4 && ok; v++) {
    int threads = v == 1 ? 2 : 1;
    const char *dir = v == 0 ? SCRATCH : v == 1 ? THREADED : v == 2 ? NARROW : INPLACE;
    int64_t scratch[GROUP], bytes[GROUP];
    dy_memplan_result mr;
    dy_codegen_output co = {0};
    dy_codegen_options o = {.name = name, .source = "test_simd.c",
                            .scratch_bytes = bytes, .scratch_offsets = scratch,
                            .threads = threads, .plain_kernels = v == 2, .no_pack_a = v == 3};
    dy_codegen_scratch_sizes(p, threads, bytes);
    ok = dy_program_bound_sym(p, "batch", BATCH, &err) == DY_OK &&
         dy_memplan_scratch(p, bytes, scratch, &mr, &err) == DY_OK &&
         (o.arena_bytes = mr.arena_bytes, dy_codegen(p, &o, &co, &err) == DY_OK);
    if (ok) {
      snprintf(path, sizeof path, "%s/g%d.c", dir, g);
      ok = write_bin(path, co.source, strlen(co.source));
      snprintf(path, sizeof path, "%s/g%d.h", dir, g);
      ok = ok && write_bin(path, co.header, strlen(co.header));
    }
    for (int k = 0; k < nf && ok; k++) {
      snprintf(path, sizeof path, "%s/in_%d_%d.bin", dir, g, k);
      ok = write_bin(path, feeds[k]->data, (size_t)feeds[k]->nbytes);
    }
    dy_codegen_output_free(&co);
  }
  if (!ok)
    fprintf(stderr, "\n  group %d: %s\n", g, err.msg);
  for (int k = 0; k < nf; k++)
    dy_tensor_free(feeds[k]);
  for (int k = 0; k < nout; k++)
    dy_tensor_free(outs[k]);
  dy_program_free(p);
  for (int i = first; i < last; i++)
    em[i].ok = ok;
  return ok;
}

/* driver.c: runs every group on its inputs and writes each case's output;
 * argv[1] the directory, argv[2] the path's tag for the file names. C99,
 * nothing beyond libc. */
static bool write_driver(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f)
    return false;
  fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n");
  for (int g = 0; g < N_GROUPS; g++)
    fprintf(f, "#include \"g%d.h\"\n", g);
  fprintf(f,
          "static float *rd(const char *dir, int g, int k, long n) {\n"
          "  char p[600]; FILE *f; float *x = malloc(sizeof *x * (size_t)(n ? n : 1));\n"
          "  sprintf(p, \"%%s/in_%%d_%%d.bin\", dir, g, k);\n"
          "  f = fopen(p, \"rb\");\n"
          "  if (!f || fread(x, 4, (size_t)n, f) != (size_t)n) { fprintf(stderr, \"%%s\\n\", p); exit(1); }\n"
          "  fclose(f);\n  return x;\n}\n"
          "static void wr(const char *dir, const char *tag, int i, const float *y, long n) {\n"
          "  char p[600]; FILE *f;\n"
          "  sprintf(p, \"%%s/out_%%d_%%s.bin\", dir, i, tag);\n"
          "  f = fopen(p, \"wb\");\n"
          "  if (!f || fwrite(y, 4, (size_t)n, f) != (size_t)n) { fprintf(stderr, \"%%s\\n\", p); exit(1); }\n"
          "  fclose(f);\n}\n"
          "/* the arena, 64-aligned by hand (C99 has no aligned_alloc) */\n"
          "static void *arena_of(long bytes, void **raw) {\n"
          "  *raw = malloc((size_t)bytes + 64);\n"
          "  return (char *)*raw + (64 - (uintptr_t)*raw %% 64) %% 64;\n}\n"
          "int main(int argc, char **argv) {\n"
          "  const char *dir = argc > 2 ? argv[1] : \".\", *tag = argc > 2 ? argv[2] : \"x\";\n");
  for (int g = 0; g < N_GROUPS; g++) {
    int first = g * GROUP, last = first + GROUP < N_CASES ? first + GROUP : N_CASES;
    fprintf(f, "  {\n    void *raw, *a = arena_of(G%d_ARENA_BYTES, &raw);\n", g);
    fprintf(f, "    float *x[%d], *y[%d];\n", group_feeds[g] ? group_feeds[g] : 1, group_outs[g]);
    for (int i = first; i < last; i++) {
      for (int k = 0; k < em[i].n_feeds; k++)
        fprintf(f, "    x[%d] = rd(dir, %d, %d, %lld);\n", em[i].feed_slot[k], g,
                em[i].feed_slot[k], (long long)em[i].feed_numel[k]);
      fprintf(f, "    y[%d] = calloc(%lld, 4); /* %s */\n", em[i].out_slot,
              (long long)(em[i].out_numel ? em[i].out_numel : 1), cases[i].label);
    }
    fprintf(f, "    if (g%d_run(a, %d", g, BATCH);
    for (int k = 0; k < group_feeds[g]; k++)
      fprintf(f, ", x[%d]", k);
    for (int k = 0; k < group_outs[g]; k++)
      fprintf(f, ", y[%d]", k);
    fprintf(f, ") != 0) { fprintf(stderr, \"group %d failed\\n\"); return 1; }\n", g);
    for (int i = first; i < last; i++)
      fprintf(f, "    wr(dir, tag, %d, y[%d], %lld);\n", i, em[i].out_slot,
              (long long)em[i].out_numel);
    fprintf(f, "    free(raw);\n  }\n");
  }
  fprintf(f, "  return 0;\n}\n");
  fclose(f);
  return true;
}

static float *read_out_in(const char *dir, int i, const char *tag) {
  char path[600];
  snprintf(path, sizeof path, "%s/out_%d_%s.bin", dir, i, tag);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t n = (size_t)(em[i].out_numel ? em[i].out_numel : 1);
  float *y = malloc(sizeof *y * n);
  if (y && fread(y, sizeof *y, (size_t)em[i].out_numel, f) != (size_t)em[i].out_numel) {
    free(y);
    y = NULL;
  }
  fclose(f);
  return y;
}

static float *read_out(int i, const char *tag) { return read_out_in(SCRATCH, i, tag); }

/* got within the case's tolerance of want (NaN matching NaN)? */
static bool close_enough(int i, const char *what, const float *got, const float *want) {
  double tol = cases[i].tol, big = 0, worst = 0;
  int64_t n = em[i].out_numel, at = -1;
  for (int64_t k = 0; k < n; k++)
    big = fmax(big, fabs((double)want[k]));
  for (int64_t k = 0; k < n; k++) {
    double d = fabs((double)got[k] - (double)want[k]);
    if (isnan(got[k]) != isnan(want[k]))
      d = INFINITY;
    else if (isnan(got[k]))
      d = 0;
    if (d > worst)
      worst = d, at = k;
  }
  bool ok = worst <= tol * (1 + big);
  if (!ok)
    fprintf(stderr, "\n  [%s] %s: element %lld is %.9g, want %.9g (tol %g x %g)", cases[i].label,
            what, (long long)at, (double)got[at], (double)want[at], tol, 1 + big);
  return ok;
}

/* ------------------------------------------------------------------ */
/* The paths                                                           */
/* ------------------------------------------------------------------ */

static bool emitted_all;

static void setup(void) {
  static bool done;
  if (done)
    return;
  done = true;
  sh("rm -rf " SCRATCH " && mkdir -p " THREADED " " NARROW " " INPLACE);
  emitted_all = true;
  for (int g = 0; g < N_GROUPS; g++)
    emitted_all &= emit_group(g);
  emitted_all &= write_driver(SCRATCH "/driver.c") && write_driver(THREADED "/driver.c") &&
                 write_driver(NARROW "/driver.c") && write_driver(INPLACE "/driver.c");
}

/* Build every case and the driver with cc + flags into exe SCRATCH/<tag>;
 * run it (through runner, if any) when run is set. */
static bool build_and_run(const char *tag, const char *cc, const char *flags, const char *runner,
                          bool run) {
  int rc = sh("cd " SCRATCH " && %s " STRICT " %s -I. -o %s driver.c g*.c 2> cc_%s.log", cc,
              flags, tag, tag);
  if (rc != 0) {
    fprintf(stderr, "\n  path %s: building failed:\n", tag);
    sh("head -30 " SCRATCH "/cc_%s.log >&2", tag);
    return false;
  }
  if (!run)
    return true;
  rc = sh("cd " SCRATCH " && %s ./%s . %s", runner ? runner : "", tag, tag);
  if (rc != 0)
    fprintf(stderr, "\n  path %s: the driver failed (status %d)\n", tag, rc);
  return rc == 0;
}

/* Compare path tag with the plain-C path, case by case. */
static int compare_path(const char *tag) {
  int bad = 0;
  for (int i = 0; i < N_CASES; i++) {
    if (!em[i].ok)
      continue;
    float *a = read_out(i, tag), *b = read_out(i, "scalar");
    if (!a || !b || !close_enough(i, tag, a, b))
      bad++;
    free(a);
    free(b);
  }
  return bad;
}

static void test_scalar_path_matches_eager(void) {
  setup();
  CU_ASSERT_FATAL(emitted_all);
  CU_ASSERT_FATAL(build_and_run("scalar", "gcc", "-DDY_NO_SIMD", NULL, true));
  int bad = 0;
  for (int i = 0; i < N_CASES; i++) {
    float *a = read_out(i, "scalar");
    if (!a || !close_enough(i, "plain C vs eager", a, em[i].ref))
      bad++;
    free(a);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

static void test_sse2_path(void) {
  setup();
  CU_ASSERT_FATAL(build_and_run("sse2", "gcc", "-mno-avx", NULL, true));
  CU_ASSERT_EQUAL(compare_path("sse2"), 0);
}

static void test_avx2_path(void) {
  setup();
  __builtin_cpu_init();
  bool run = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  CU_ASSERT_FATAL(build_and_run("avx2", "gcc", "-mavx2 -mfma", NULL, run));
  if (!run) {
    fprintf(stderr, "\n  AVX2 path built, not run: this CPU lacks AVX2/FMA\n");
    return;
  }
  CU_ASSERT_EQUAL(compare_path("avx2"), 0);
}

static void test_avx512_path(void) {
  setup();
  __builtin_cpu_init();
  bool run = __builtin_cpu_supports("avx512f");
  CU_ASSERT_FATAL(build_and_run("avx512", "gcc", "-mavx512f -mfma", NULL, run));
  if (!run) {
    fprintf(stderr, "\n  AVX-512 path built warning-free, not run: this CPU lacks AVX-512F\n");
    return;
  }
  CU_ASSERT_EQUAL(compare_path("avx512"), 0);
  /* it took the 12-row kernels */
  CU_ASSERT_EQUAL(sh("cd " SCRATCH " && printf '#include <stdint.h>\\n#include \"g0.c\"\\n"
                     "#ifndef DY_GEMM_WIDE\\n#error not the 12-row kernels\\n#endif\\n' > "
                     "wide_check.c && gcc -std=c99 -mavx512f -mfma -I. -c wide_check.c -o /dev/null"),
                  0);
}

/* --plain-kernels on AVX-512: two 6-row kernels per 12-row tile (the
 * kernels the 12-row ones replaced) give the plain-C path's results */
static void test_narrow_gemm(void) {
  setup();
  __builtin_cpu_init();
  bool run = __builtin_cpu_supports("avx512f");
  int rc = sh("cd " NARROW " && gcc " STRICT " %s -I. -o narrow driver.c g*.c 2> cc.log%s",
              run ? "-march=native" : "-mavx512f -mfma", run ? " && ./narrow . narrow" : "");
  if (rc)
    sh("head -30 " NARROW "/cc.log >&2");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* no 12-row kernel in it */
  CU_ASSERT_NOT_EQUAL(sh("grep -q dy_gemm_ukr12 " NARROW "/g0.c"), 0);
  if (!run)
    return;
  int bad = 0;
  for (int i = 0; i < N_CASES; i++) {
    float *a = read_out_in(NARROW, i, "narrow"), *b = read_out(i, "scalar");
    if (!a || !b || !close_enough(i, "narrow", a, b))
      bad++;
    free(a);
    free(b);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* --no-pack-a on AVX-512 (or the machine's best path): the matmuls that
 * pack A at run time (dy_gemm_pack_a) give exactly the results of A read
 * in place, bit for bit (the same kernels, k order and blocks: only where
 * A is read from differs); and the default build did pack */
static void test_packed_a_vs_in_place(void) {
  setup();
  const char *flags = "-march=native";
  int rc = sh("cd " SCRATCH " && gcc " STRICT " %s -I. -o packed driver.c g*.c 2> cc_packed.log && "
              "./packed . packed && cd " INPLACE " && gcc " STRICT " %s -I. -o in_place driver.c "
              "g*.c 2> cc.log && ./in_place . in_place",
              flags, flags);
  if (rc)
    sh("head -30 " SCRATCH "/cc_packed.log " INPLACE "/cc.log >&2");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* the default build calls the packing, the --no-pack-a one does not */
  CU_ASSERT_EQUAL(sh("cat " SCRATCH "/g*.c | grep -q '^ *dy_gemm_pack_a('"), 0);
  CU_ASSERT_NOT_EQUAL(sh("cat " INPLACE "/g*.c | grep -q '^ *dy_gemm_pack_a('"), 0);
  int bad = 0, packed = 0;
  for (int i = 0; i < N_CASES; i++) {
    if (!em[i].ok)
      continue;
    float *a = read_out_in(SCRATCH, i, "packed"), *b = read_out_in(INPLACE, i, "in_place");
    bool same = a && b && memcmp(a, b, sizeof *a * (size_t)em[i].out_numel) == 0;
    if (!same) {
      fprintf(stderr, "\n  [%s] packed A differs from A in place", cases[i].label);
      bad++;
    }
    packed += strncmp(cases[i].label, "pack A", 6) == 0;
    free(a);
    free(b);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(packed >= 8);
}

static void test_clang_native(void) {
  setup();
  if (!dy_test_have("clang")) {
    fprintf(stderr, "\n  skipped: no clang\n");
    return;
  }
  CU_ASSERT_FATAL(build_and_run("clang_native", "clang", "-march=native", NULL, true));
  CU_ASSERT_EQUAL(compare_path("clang_native"), 0);
}

static void test_neon_under_qemu(void) {
  setup();
  if (!dy_test_have_aarch64())
    return;
  CU_ASSERT_FATAL(build_and_run("neon", "aarch64-linux-gnu-gcc", "-static", "qemu-aarch64", true));
  /* it really took the NEON path */
  CU_ASSERT_EQUAL(sh("cd " SCRATCH " && printf '#include <stdint.h>\\n#include \"g0.c\"\\n"
                     "#if DY_VW != 4\\n#error not the NEON path\\n#endif\\n' > neon_check.c && "
                     "aarch64-linux-gnu-gcc -std=c99 -I. -c neon_check.c -o /dev/null"),
                  0);
  CU_ASSERT_EQUAL(compare_path("neon"), 0);
}

/* --threads 2: the GEMM and conv kernels split over two threads give the
 * plain-C path's results, and the object references pthread_create */
static void test_threads(void) {
  setup();
  /* every call splits, however small (else these cases would stay on one
   * thread) */
  int rc = sh("cd " THREADED " && gcc " STRICT " -march=native -pthread -DDY_THREAD_MIN_WORK=1 "
              "-I. -o threads driver.c g*.c 2> cc.log && ./threads . threads");
  if (rc)
    sh("head -30 " THREADED "/cc.log >&2");
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  int bad = 0;
  for (int i = 0; i < N_CASES; i++) {
    float *a = read_out_in(THREADED, i, "threads"), *b = read_out(i, "scalar");
    if (!a || !b || !close_enough(i, "threads", a, b))
      bad++;
    free(a);
    free(b);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(sh("cd " THREADED " && gcc " STRICT " -c g0.c -o g0.o && "
                     "nm -u g0.o | grep -q pthread_create"),
                  0);
}

/* one-thread objects reference no pthread symbol, and only memcpy and
 * memset from the C library */
static void test_single_thread_object(void) {
  setup();
  int rc = sh("cd " SCRATCH " && rm -f undefined.txt && for f in g*.c; do "
              "gcc " STRICT " -march=native -c $f -o obj.o && nm -u obj.o >> undefined.txt; "
              "done && ! grep -q pthread undefined.txt && "
              "! awk '{print $2}' undefined.txt | grep -v -E '^(memcpy|memset)$' | grep -q .");
  if (rc)
    sh("cat " SCRATCH "/undefined.txt >&2");
  CU_ASSERT_EQUAL(rc, 0);
}

void dy_test_register(void) {
  DY_SUITE("simd");
  DY_TEST(test_scalar_path_matches_eager);
  DY_TEST(test_sse2_path);
  DY_TEST(test_avx2_path);
  DY_TEST(test_avx512_path);
  DY_TEST(test_narrow_gemm);
  DY_TEST(test_packed_a_vs_in_place);
  DY_TEST(test_clang_native);
  DY_TEST(test_neon_under_qemu);
  DY_TEST(test_threads);
  DY_TEST(test_single_thread_object);
}
