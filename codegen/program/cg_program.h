/* cg_program.h - codegen floor 3 (codegen/program/), the driver's header:
 * everything below (floors 0-2), plus what only the driver writes (main.c,
 * the text passes over a kernel). Not part of the public API
 * (dy_codegen.h). See codegen/README.md. */
#ifndef DY_CODEGEN_CG_PROGRAM_H
#define DY_CODEGEN_CG_PROGRAM_H

#include "cg_ops.h"

/* emit_main.c: the command-line driver main.c for model opt->name. */
dy_status dy_codegen_main_c(const dy_program *p, const dy_codegen_options *opt,
                            dy_buf *out, dy_error *err);

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

#endif /* DY_CODEGEN_CG_PROGRAM_H */
