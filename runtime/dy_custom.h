/* dy_custom.h - custom ops (ir/ops_custom.def; docs/design.md "Custom
 * ops"): the process-wide registry of the user's kernels and shape rules
 * that the frontends (an op type no frontend knows, registered here) and
 * the static executor (the custom op's kernel) read.
 *
 * The user's C file defines, for an op NAME, two functions of plain C
 * types (no dy2stc header needed; dtype codes are ir/dtypes.def's order:
 * 0 f32, 1 i64, 2 bool, 3 i8, 4 u8, 5 i32; shapes have at most 8 dims, -1
 * a batch not yet known):
 *
 *   int dy_custom_NAME_shape(int n_in, const int *dtypes, const int *ranks,
 *                            const int64_t *const *shapes, int *out_dtype,
 *                            int *out_rank, int64_t *out_shape);
 *       the output's dtype, rank and shape from the inputs'; 0, or
 *       non-zero to refuse them (the import fails naming the op)
 *   void dy_custom_NAME_run(int n_in, const void *const *in,
 *                           const int *ranks, const int64_t *const *shapes,
 *                           void *out, int out_rank, const int64_t *out_shape);
 *       the output from the inputs (C order, each its own dtype)
 *
 * The generated C calls dy_custom_NAME_run directly (the compiler builds
 * the file into the executable). In process, a dy_custom_op registers the
 * two behind function pointers: compiler/cli/custom_host.c's run them in a
 * helper process built from the file (no dlopen; a crash in the user's
 * code is an error, not dy2stc's crash); a C program embedding dy2stc can
 * register its own functions directly.
 */
#ifndef DY_CUSTOM_H
#define DY_CUSTOM_H

#include "dy_runtime.h"

typedef struct {
  const char *name; /* the op type: "gap" (copied by dy_custom_register) */
  /* the user's shape function; msg (n bytes) says why on failure */
  int (*shape)(void *ctx, int n_in, const int *dtypes, const int *ranks,
               const int64_t *const *shapes, int *out_dtype, int *out_rank, int64_t *out_shape,
               char *msg, size_t n);
  /* the user's kernel; non-zero (msg filled) when it could not run */
  int (*run)(void *ctx, int n_in, const void *const *in, const int *dtypes, const int *ranks,
             const int64_t *const *shapes, void *out, int out_dtype, int out_rank,
             const int64_t *out_shape, char *msg, size_t n);
  void *ctx;
} dy_custom_op;

#define DY_CUSTOM_MAX 16
/* Register op (a name registered again is replaced); at most
 * DY_CUSTOM_MAX names. Not thread-safe: register before running. */
dy_status dy_custom_register(const dy_custom_op *op, dy_error *err);
/* The registered op of a name, or NULL. */
const dy_custom_op *dy_custom_find(const char *name);
/* Forget every registered op. */
void dy_custom_clear(void);

#endif
