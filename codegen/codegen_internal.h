/* codegen_internal.h - codegen floor 3, the driver's header (emit.c,
 * emit_main.c): everything of floors 0 and 1, plus the pieces of NAME.c
 * and main.c that only the driver writes (math library, SIMD, GEMM and
 * thread preludes, main.c). Family emitters (floor 2) must not include it:
 * they include floor1_kernels.h. See codegen/README.md.
 * Not part of the public API (dy_codegen.h). */
#ifndef DY_CODEGEN_INTERNAL_H
#define DY_CODEGEN_INTERNAL_H

#include "floor1_kernels.h"

/* emit_main.c: the command-line driver main.c for model opt->name. */
dy_status dy_codegen_main_c(const dy_program *p, const dy_codegen_options *opt,
                            dy_buf *out, dy_error *err);

/* emit_mathlib.c: the math functions of the generated C (no libm):
 * dy_expf, dy_logf, dy_log1pf, dy_expm1f, dy_sqrtf, dy_tanhf, dy_sigmoidf,
 * dy_erff, dy_powf, dy_fabsf, dy_copysignf, dy_fminf, dy_fmaxf, dy_truncf,
 * dy_floorf, dy_ceilf, dy_roundf, dy_isnanf (int), dy_select(c, a, b), and
 * the macros DY_INFINITY and DY_NAN. Emitters write these names in kernel
 * text; dy_mathlib_emit appends to out the definitions of every one that
 * code names (as a whole identifier) and of those they call, in
 * dependency order, or nothing when it names none. Errors: see the file. */
void dy_mathlib_emit(dy_buf *out, const char *code);
/* The table's names, 0 <= i < dy_mathlib_count() (for tests). */
int dy_mathlib_count(void);
const char *dy_mathlib_name(int i);

/* ---- emit_simd.c: the SIMD helpers (dy_vf, dy_f16) every vector kernel
 * uses; written once per file, before the kernels, when one uses them ---- */
void dy_cg_simd_prelude(dy_buf *out);
/* The fixed-point helpers of the quantized kernels (ir/dy_qfixed.h's
 * template text: dy_q_*), written once per file when a kernel uses them. */
void dy_cg_qfixed_prelude(dy_buf *out);

/* ---- emit_tidy.c: text passes over a kernel (the driver's) ---- */

/* Does identifier id occur as a whole token in text[0, len)? */
bool dy_cg_mentions_n(const char *text, size_t len, const char *id);
/* text with every loop of one trip turned into its body with the index
 * fixed (kept when the body has continue or break). Malloc'd; NULL if out
 * of memory. */
char *dy_cg_tidy_loops(const char *text);
/* text with each whole identifier from[k] replaced by to[k]. Malloc'd;
 * NULL if out of memory. */
char *dy_cg_rename(const char *text, const char *const *from, const char *const *to, int n);

#endif /* DY_CODEGEN_INTERNAL_H */
