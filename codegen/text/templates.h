/* templates.h - the runtime pieces of the generated C, as strings.
 *
 * The text that every generated file carries the same (up to a name or a
 * number) lives in real C files under codegen/rt/, which compile and lint
 * on their own (tests/test_templates.c builds each one with -Werror, on the
 * scalar and the SIMD paths):
 *
 *   rt/dy_main.c     main.c, the command-line driver    dy_tpl_main
 *   rt/dy_train_main.c  main.c of a compiled trainer    dy_tpl_train_main
 *   rt/dy_mathlib.h  the libm-free math functions       dy_tpl_mathlib
 *   rt/dy_simd.h     the SIMD helpers (dy_vf, dy_f16)   dy_tpl_simd
 *   rt/dy_gemm.h     the GEMM epilogue flags, dy_gemm_out  dy_tpl_gemm
 *   rt/dy_thread.h   dy_parallel (--threads)            dy_tpl_thread
 *   ../ir/dy_qfixed.h  the quantized ops' fixed-point    dy_tpl_qfixed
 *                    arithmetic (shared with the runtime's kernels)
 *
 * At build time rt/embed.cmake turns each into a generated .c in the build
 * tree that defines the arrays below: the lines between the file's
 * "template begin" and "template end" markers (what lies outside them only
 * serves compiling the file on its own), and its sections.
 *
 * Placeholders: a template stands for what differs per model by a few
 * names, spelt as C identifiers so that the file stays valid C. The
 * emitter replaces every occurrence of them (in code, strings and
 * comments alike) with dy_tpl_put(); each template lists its own at its
 * top, and its stand-in definitions, outside the markers, make it compile.
 */
#ifndef DY_TEMPLATES_H
#define DY_TEMPLATES_H

#include <stddef.h>

#include "dy_codegen.h"

/* A section of a template: its name and first line; the array ends with
 * {NULL, number of lines}. */
typedef struct {
  const char *name;
  int line;
} dy_tpl_section;

/* Lines (each ending in '\n', then NULL) and sections of each template. */
extern const char *const dy_tpl_main[];
extern const dy_tpl_section dy_tpl_main_sections[];
extern const char *const dy_tpl_train_main[];
extern const dy_tpl_section dy_tpl_train_main_sections[];
extern const char *const dy_tpl_mathlib[];
extern const dy_tpl_section dy_tpl_mathlib_sections[];
extern const char *const dy_tpl_simd[];
extern const dy_tpl_section dy_tpl_simd_sections[];
extern const char *const dy_tpl_qfixed[];
extern const dy_tpl_section dy_tpl_qfixed_sections[];
extern const char *const dy_tpl_gemm[];
extern const dy_tpl_section dy_tpl_gemm_sections[];
extern const char *const dy_tpl_thread[];
extern const dy_tpl_section dy_tpl_thread_sections[];

/* The first line of section name of a template (its line count for
 * NULL: the end), or -1 when it has none of that name. */
int dy_tpl_section_line(const dy_tpl_section *sections, const char *name);

/* A placeholder and what replaces it. */
typedef struct {
  const char *name;
  const char *value;
} dy_tpl_sub;

/* Append lines [from, to) of a template to out (to < 0: to its end), each
 * occurrence of a placeholder subs[0..n_subs) replaced by its value (the
 * first listed wins where two start at one place; a value is not
 * scanned again). */
void dy_tpl_put(dy_buf *out, const char *const *lines, int from, int to,
                const dy_tpl_sub *subs, int n_subs);

#endif /* DY_TEMPLATES_H */
