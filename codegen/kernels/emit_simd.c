/* emit_simd.c - floor 1: the SIMD helpers at the top of every generated NAME.c.
 *
 * Kernels never name an intrinsic: they use a dozen static inline helpers
 * (dy_vload, dy_vfma, dy_vsum, ... on a vector of DY_VW floats, and dy_f16_*
 * on the 16 floats of a packed weight panel's row), defined here once per
 * instruction set. Which definitions the C compiler sees is decided by its
 * own predefined macros, so one emitted file builds anywhere and uses what
 * the target has:
 *
 *   __AVX512F__              AVX-512, 16 lanes
 *   __AVX2__ and __FMA__     AVX2 with FMA, 8 lanes
 *   __SSE2__                 SSE2, 4 lanes (every x86-64)
 *   __ARM_NEON, __aarch64__  NEON, 4 lanes
 *   otherwise                plain C, 1 lane (or with -DDY_NO_SIMD)
 *
 * The paths compute the same values up to rounding (FMA rounds once, the
 * SSE2 and plain-C forms twice) and agree on NaN where the scalar
 * activations define it; tests/test_simd.c builds one file every way and
 * compares. Intrinsics headers appear only inside their path's branch, so
 * the plain-C path needs no header at all (firmware).
 *
 * The text is the template rt/dy_simd.h, a C header that compiles on its
 * own, emitted as it is.
 */
#include "cg_kernels.h"
#include "templates.h"

void dy_cg_simd_prelude(dy_buf *out) {
  dy_tpl_put(out, dy_tpl_simd, 0, -1, NULL, 0);
  dy_buf_putc(out, '\n');
}

void dy_cg_qfixed_prelude(dy_buf *out) {
  dy_tpl_put(out, dy_tpl_qfixed, 0, -1, NULL, 0);
  dy_buf_putc(out, '\n');
}
