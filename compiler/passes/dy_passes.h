/* dy_passes.h - the optimising passes, the pass manager and the memory
 * plan (compiler/passes/, library dy_passes). Inside the folder, calls go
 * one way: pipeline.c (the pass manager) on top, one file per pass below
 * it, pass_util.c (their shared helpers) at the bottom; memplan.c stands
 * alone.
 *
 *   dy_pass_options o = {.opt_level = 2, .verify_each = -1};
 *   dy_run_pipeline(p, &o, &err);                  // simplify .. dce, verified
 *   dy_memplan(p, &plan, &err);                    // arena offsets on the vars
 *
 * Passes may use ir, runtime (fold runs the runtime's kernels) and codegen
 * (the op slots of the plan's scratch, dy_codegen_op_slot); never a
 * frontend or the driver: their headers are not on this library's include
 * path, so such an #include fails the build.
 */
#ifndef DY_PASSES_H
#define DY_PASSES_H

#include <stdio.h>

#include "dy_codegen.h"
#include "dy_ir.h"
#include "dy_runtime.h"

/* ---- passes/memplan.c ---- */

typedef struct {
  int64_t arena_bytes;   /* the plan's arena size at the size bounds      */
  int64_t lower_bound;   /* max over the schedule of live intermediate bytes */
  int64_t weight_bytes;  /* persistable data                              */
  int n_planned;         /* vars given an offset                          */
  int n_aliased;         /* view outputs sharing their input's storage    */
  int n_in_place;        /* elementwise outputs written over their input  */
  int n_scratch;         /* ops given kernel scratch (dy_memplan_scratch)  */
} dy_memplan_result;

/* Liveness-based placement of every intermediate in one arena (greedy,
 * largest first, lowest offset that does not overlap a var live at the same
 * time; 64-byte aligned), sized for every size symbol at its bound in p
 * (dy_program_sym_bounds). Sets mem_offset / alias_of on the vars. */
dy_status dy_memplan(dy_program *p, dy_memplan_result *r, dy_error *err);
/* The same, also placing the scratch each op's kernel needs, live during
 * that op only: scratch_bytes and scratch_offsets (caller-owned, one per op
 * of every block, dy_program_count_ops of them, by dy_codegen_op_slot) are
 * each op's bytes as computed once beforehand (dy_codegen_scratch_sizes)
 * and gets its offset or -1. Pass both to dy_codegen as
 * dy_codegen_options.scratch_bytes / scratch_offsets. */
dy_status dy_memplan_scratch(dy_program *p, const int64_t *scratch_bytes,
                             int64_t *scratch_offsets, dy_memplan_result *r, dy_error *err);

/* ---- passes/pipeline.c: passes and the pass manager ---- */

/* A pass is a name and a run function (one file each, passes/NAME.c). run
 * sets *changed when it rewrote anything. */
typedef struct {
  const char *name;
  const char *what;         /* one line for --help */
  dy_status (*run)(dy_program *p, bool *changed, dy_error *err);
} dy_pass;

/* The optimising pipeline, in order (n_passes entries). */
extern const dy_pass dy_passes[];
extern const int dy_n_passes;
const dy_pass *dy_pass_find(const char *name);

typedef struct {
  int opt_level;            /* 0: run no optimising pass                 */
  dy_progress_fn progress;  /* hears "pass:NAME" before each pass (or NULL) */
  void *progress_ctx;
  int verify_each;          /* 1 on, 0 off, -1 default: on in debug builds
                               (no NDEBUG) or with DY2STC_VERIFY_EACH=1   */
  const char *print_before; /* a pass name or "all": print the Program   */
  const char *print_after;
  bool print_after_change;  /* print after a pass only if it changed it  */
  const char *dump_dir;     /* write DIR/NNN_<pass>.ir after each pass   */
  FILE *print_to;           /* where --print-* go (NULL: stderr)         */
  const char *disable;      /* pass names, comma-separated, not to run
                               (--disable-pass: compare with and without) */
  int winograd;             /* 2, 4, 6: the pass winograd runs every
                               3x3 stride-1 conv with a constant weight
                               (any size, any channel count) as F(m x m,
                               3x3) (--winograd M); 0: its cost model's
                               pick */
} dy_pass_options;

/* Run the pipeline on p (verifying after each pass when enabled; a broken
 * invariant reads "IR invalid after pass 'fuse': ..."). */
dy_status dy_run_pipeline(dy_program *p, const dy_pass_options *o, dy_error *err);

/* ---- passes/pass_util.c: what the pass files share ---- */

/* Training Programs (dy_program_is_training: they have in-place ops, the
 * optimizer's updates and running statistics) change their state from run
 * to run. Every pass keeps their meaning: an in-place op is never removed
 * (dce keeps it and what it reads) nor merged (cse); fold, fuse-bn,
 * simplify (neutral elements) and fuse-elementwise (inlined scalars) take
 * as constant only a persistable var that is not state, as this says:
 * persistable and, in a training Program (training =
 * dy_program_is_training(p), computed once by the caller), neither
 * trainable nor written by an in-place op. */
bool dy_pass_var_is_constant(const dy_program *p, int var, bool training);

/* The value of var when it is a one-element f32 constant (as
 * dy_pass_var_is_constant says; var may be -1: false). */
bool dy_pass_scalar_f32(const dy_program *p, int var, bool training, float *v);

/* Appends to attrs[0, na) the default of every attribute of kind k's
 * schema it lacks (a Program spells every attribute out), up to cap;
 * returns the new count. */
int dy_pass_attrs_complete(dy_op_kind k, dy_attr *attrs, int na, int cap);

/* A pass's rewrite of one block b (its ops only; nested blocks are
 * blocks of their own). */
typedef dy_status (*dy_pass_block_fn)(dy_program *p, int b, bool *changed, const void *ctx,
                                      dy_error *err);
/* fn on every block in index order (block 0, then the branches and loop
 * bodies, nested ones too); when any changed, each control op's captures
 * are re-synced (dy_program_sync_captures): a rewrite inside a sub-block
 * may read another var from outside, or stop reading one. */
dy_status dy_pass_each_block(dy_program *p, dy_pass_block_fn fn, const void *ctx,
                             bool *changed, dy_error *err);

/* Replace op k of block b (a conv2d or fused_conv2d) by a fused_conv2d of
 * the same inputs, output and attributes with algo set (a conv2d's act ""
 * and alpha 0 added): the kernel choice of conv-small and winograd. */
dy_status dy_pass_conv_with_algo(dy_program *p, int b, int k, const char *algo,
                                 dy_error *err);
/* Every op of every block that fits (a kernel-choice pass's rule) gets algo
 * (dy_pass_conv_with_algo); *changed when one did. */
dy_status dy_pass_conv_algo_where(dy_program *p, bool (*fits)(const dy_program *, const dy_op *,
                                                               bool training),
                                  const char *algo, bool *changed, dy_error *err);
/* Is op a conv2d or fused_conv2d without an algo yet, with a constant f32
 * weight [O, C, kh, kw] and an f32 rank-4 input (the common part of the
 * kernel-choice passes' rules)? */
bool dy_pass_conv_algo_open(const dy_program *p, const dy_op *op, bool training);
/* The same, with every dim of the input but the batch known; *g its
 * geometry (conv-gemv's and conv-small's common rule). */
bool dy_pass_conv_algo_open_geom(const dy_program *p, const dy_op *op, bool training,
                                 dy_conv_geom *g);

/* ---- the passes (passes/<name>.c) ---- */

dy_status dy_pass_simplify(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fold(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fold_control(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_cse(dy_program *p, bool *changed, dy_error *err);
/* loop-invariant ops out of a while's blocks, to before it (hoist.c) */
dy_status dy_pass_hoist(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_dce(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_transpose(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_matmul(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_conv(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_residual(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_bn(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_swish(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_layernorm(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_attention(dy_program *p, bool *changed, dy_error *err);
dy_status dy_pass_fuse_elementwise(dy_program *p, bool *changed, dy_error *err);
/* winograd.c: 3x3 stride-1 convs with at least this many input and output
 * channels may get algo = "winograd2/4/6" (codegen's F(m x m, 3x3)
 * kernel), chosen per layer by a cost model. */
#define DY_WINOGRAD_MIN_CHANNELS 32
dy_status dy_pass_winograd(dy_program *p, bool *changed, dy_error *err);
/* The same, m = 2, 4 or 6 forcing F(m x m, 3x3) on every candidate (0: the
 * cost model's pick). */
dy_status dy_pass_winograd_tile(dy_program *p, int m, bool *changed, dy_error *err);
/* fuse_dwpw.c: depthwise conv + 1x1 conv -> fused_dwpw */
dy_status dy_pass_fuse_dwpw(dy_program *p, bool *changed, dy_error *err);
/* fuse_dwpw.c: 1x1 expand conv + fused_dwpw -> fused_irb */
dy_status dy_pass_fuse_irb(dy_program *p, bool *changed, dy_error *err);
/* conv_gemv.c: convs whose one window is the whole input (1 x 1 output
 * pixels: squeeze-and-excitation) get algo = "gemv" (codegen's
 * matrix-vector product, the weight packed transposed). */
dy_status dy_pass_conv_gemv(dy_program *p, bool *changed, dy_error *err);
/* conv_small.c: stride-1 convs of depth C * kh * kw and output channels
 * up to these bounds (and a padded image up to the last, in bytes) get algo = "small" (codegen's
 * direct kernel, codegen/kernels/emit_conv_small.c). */
#define DY_CONV_SMALL_MAX_DEPTH 160
#define DY_CONV_SMALL_MAX_OUT 16
#define DY_CONV_SMALL_MAX_SCRATCH (512 * 1024)
dy_status dy_pass_conv_small(dy_program *p, bool *changed, dy_error *err);
/* fuse_pool.c: such a conv + max pool -> fused_conv2d_pool */
dy_status dy_pass_fuse_pool(dy_program *p, bool *changed, dy_error *err);

#endif
