/* dy_lod.h - the LoD sequence ops' helpers (ir/ops_lod.def), defined in
 * ir/infer/infer_lod.c and shared by the kernels (runtime/kernels/
 * kernels_lod.c), the emitters (codegen/ops/emit_lod.c) and the binding
 * of size symbols from input shapes (runtime/executor.c,
 * codegen/program/bind.c).
 */
#ifndef DY_LOD_H
#define DY_LOD_H

#include "dy_ir.h"

/* sequence_pool's pooltype attribute, or DY_POOL_BAD. */
typedef enum {
  DY_POOL_BAD = -1, DY_POOL_SUM, DY_POOL_AVERAGE, DY_POOL_SQRT, DY_POOL_MAX, DY_POOL_LAST,
  DY_POOL_FIRST
} dy_seq_pool_kind;
dy_seq_pool_kind dy_seq_pool_kind_of(const char *pooltype);

/* lstm's (and gru's) activation attributes, or DY_LOD_ACT_BAD. */
typedef enum {
  DY_LOD_ACT_BAD = -1, DY_LOD_ACT_SIGMOID, DY_LOD_ACT_TANH, DY_LOD_ACT_RELU,
  DY_LOD_ACT_IDENTITY
} dy_lod_act;
dy_lod_act dy_lod_act_of(const char *name);

/* A dim that is one symbol plus a constant c >= 0 (coefficient 1: "batch+1",
 * the offsets of N sequences): true with the symbol in *sym and c in *c. A
 * dim that is the symbol alone gives c = 0. */
bool dy_dim_sym_plus(int64_t d, int *sym, int64_t *c);

/* The first bad entry of offsets off[0..n) for a values tensor of t rows
 * (off[0] = 0, non-decreasing, off[n-1] = t), or -1 when they are good. */
int64_t dy_lod_bad_offset(const int64_t *off, int64_t n, int64_t t);

#endif /* DY_LOD_H */
