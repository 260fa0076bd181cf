/* dy_gemm.h - template: the head of the GEMM micro-kernels (emitted by
 * dy_cg_gemm_prelude in codegen/kernels/emit_gemm.c, which documents them): the
 * epilogue flags and dy_gemm_out, a tile row's epilogue. The micro-kernels
 * dy_gemm_ukr* and dy_gemm_tile that follow it in NAME.c are written
 * by emit_gemm.c itself (they are unrolled per row count).
 *
 * Template mechanism (codegen/text/templates.h): the text between the "template
 * begin" and "template end" lines is turned into C strings at build time
 * by rt/embed.cmake and emitted as it is. No placeholders.
 *
 * On its own (tests/test_templates.c) it needs what NAME.c has in front of
 * it: <stdint.h> and the SIMD helpers of dy_simd.h.
 */
#ifndef DY_RT_GEMM_H
#define DY_RT_GEMM_H
#include <stdint.h>

#include "dy_simd.h"
/* dy2stc: template begin */
/* ---- GEMM micro-kernels (codegen/emit_gemm.c) ----
 * dy_gemm_tile(mr, kc, a, rsa, csa, b, c, ldc, nr, flags, bias, alpha):
 *   c[i][j] (+)= sum over k < kc of a[i*rsa + k*csa] * b[k*16 + j]
 * for i < mr (1..12) and j < nr (1..16), b being a panel of 16 columns,
 * then in registers: DY_GEMM_ADD_C adds what c holds, DY_GEMM_BIAS_COL
 * adds bias[j], DY_GEMM_BIAS_ROW bias[i], then relu, relu6 or leaky_relu
 * (slope alpha), or DY_GEMM_ACT(DY_ACT_*) on the stored row (still in L1).
 * (ir/acts.def's VEC and AT name these per activation.) */
#define DY_GEMM_ADD_C 1
#define DY_GEMM_BIAS_COL 2
#define DY_GEMM_BIAS_ROW 4
#define DY_GEMM_RELU 8
#define DY_GEMM_RELU6 16
#define DY_GEMM_LEAKY 32
#define DY_GEMM_ACT(a) ((a) << 6)

/* The micro-kernels are functions of their own, never inlined into the
 * loop nests nor cloned per call site: one copy of each, and no analysis
 * of a call site's weight bounds (gcc's -Waggressive-loop-optimizations
 * would flag the k tail loops of the unrolled kernels, which cannot run
 * past the weight). */
#if defined(__GNUC__) && !defined(__clang__)
#define DY_GEMM_KERNEL static __attribute__((noipa))
#elif defined(__GNUC__)
#define DY_GEMM_KERNEL static __attribute__((noinline))
#else
#define DY_GEMM_KERNEL static
#endif

/* Row i of a tile: the epilogue, then store its first nr floats at c. */
DY_HELPER void dy_gemm_out(float *c, dy_f16 x, int nr, int flags,
                           const float *bias, int i, float alpha) {
  if (flags & DY_GEMM_ADD_C)
    x = dy_f16_add(x, dy_f16_loadn(c, nr));
  if (flags & DY_GEMM_BIAS_COL)
    x = dy_f16_add(x, dy_f16_loadn(bias, nr));
  if (flags & DY_GEMM_BIAS_ROW)
    x = dy_f16_add(x, dy_f16_set(bias[i]));
  if (flags & DY_GEMM_RELU)
    x = dy_f16_relu(x);
  if (flags & DY_GEMM_RELU6)
    x = dy_f16_relu6(x);
  if (flags & DY_GEMM_LEAKY)
    x = dy_f16_leaky(x, alpha);
  dy_f16_storen(c, x, nr);
}

#if DY_VW == 1
/* The scalar kernels' epilogue: n results r of row i, whose first column
 * is column j0 of the tile, as dy_gemm_out does it, stored at c. */
DY_HELPER void dy_gemm_outs(float *c, const float *r, int n, int flags, const float *bias,
                            int i, int j0, float alpha) {
  for (int j = 0; j < n; j++) {
    float x = r[j];
    if (flags & DY_GEMM_ADD_C)
      x = dy_vadd(x, c[j]);
    if (flags & DY_GEMM_BIAS_COL)
      x = dy_vadd(x, bias[j0 + j]);
    if (flags & DY_GEMM_BIAS_ROW)
      x = dy_vadd(x, bias[i]);
    if (flags & DY_GEMM_RELU)
      x = dy_vrelu(x);
    if (flags & DY_GEMM_RELU6)
      x = dy_vrelu6(x);
    if (flags & DY_GEMM_LEAKY)
      x = dy_vleaky(x, alpha);
    c[j] = x;
  }
}
#endif

/* dy2stc: template end */
#endif /* DY_RT_GEMM_H */
