/* dy_compiler.h - passes, the compile pipeline and the build driver.
 *
 *   dy_program *p;  dy_model_load("net", &p, &err);
 *   dy_compile_options o = dy_compile_options_default();
 *   dy_codegen_output out;  dy_compile_report rep;
 *   dy_compile_program(p, &o, &out, &rep, &err);   // verify, passes, plan, emit
 *   dy_build_executable(&out, &o, "net", &err);     // $CC -> ./net
 *
 * compiler/ may use everything: ir, runtime (constant folding will run its
 * kernels), codegen.
 */
#ifndef DY_COMPILER_H
#define DY_COMPILER_H

#include "dy_codegen.h"
#include "dy_ir.h"
#include "dy_runtime.h"

/* ---- passes/memplan.c ---- */

typedef struct {
  int64_t arena_bytes;   /* the plan's arena size at max_batch            */
  int64_t lower_bound;   /* max over the schedule of live intermediate bytes */
  int64_t weight_bytes;  /* persistable data                              */
  int n_planned;         /* vars given an offset                          */
  int n_aliased;         /* view outputs sharing their input's storage    */
  int n_in_place;        /* elementwise outputs written over their input  */
  int n_scratch;         /* ops given kernel scratch (dy_memplan_scratch)  */
} dy_memplan_result;

/* Liveness-based placement of every intermediate in one arena (greedy,
 * largest first, lowest offset that does not overlap a var live at the same
 * time; 64-byte aligned). Sets mem_offset / alias_of on the vars. */
dy_status dy_memplan(dy_program *p, int64_t max_batch, dy_memplan_result *r,
                     dy_error *err);
/* The same, also placing the scratch each op's kernel needs
 * (dy_codegen_scratch_bytes, for kernels split over `threads` threads),
 * live during that op only: scratch_offsets
 * (caller-owned, one per op of block 0) gets its offset or -1. Pass it to
 * dy_codegen as dy_codegen_options.scratch_offsets. */
dy_status dy_memplan_scratch(dy_program *p, int64_t max_batch, int threads,
                             int64_t *scratch_offsets, dy_memplan_result *r, dy_error *err);

/* ---- passes/pipeline.c: passes and the pass manager ---- */

typedef struct {
  int64_t max_batch;        /* for passes that weigh memory */
} dy_pass_ctx;

/* A pass is a name and a run function (one file each, passes/NAME.c). run
 * sets *changed when it rewrote anything. */
typedef struct {
  const char *name;
  const char *what;         /* one line for --help */
  dy_status (*run)(dy_program *p, dy_pass_ctx *ctx, bool *changed,
                   dy_error *err);
} dy_pass;

/* The optimising pipeline, in order (n_passes entries). */
extern const dy_pass dy_passes[];
extern const int dy_n_passes;
const dy_pass *dy_pass_find(const char *name);

typedef struct {
  int opt_level;            /* 0: run no optimising pass                 */
  int verify_each;          /* 1 on, 0 off, -1 default: on in debug builds
                               (no NDEBUG) or with DY2STC_VERIFY_EACH=1   */
  const char *print_before; /* a pass name or "all": print the Program   */
  const char *print_after;
  bool print_after_change;  /* print after a pass only if it changed it  */
  const char *dump_dir;     /* write DIR/NNN_<pass>.ir after each pass   */
  FILE *print_to;           /* where --print-* go (NULL: stderr)         */
} dy_pass_options;

/* Run the pipeline on p (verifying after each pass when enabled; a broken
 * invariant reads "IR invalid after pass 'fuse': ..."). */
dy_status dy_run_pipeline(dy_program *p, const dy_pass_options *o,
                          int64_t max_batch, dy_error *err);

/* The passes (passes/<name>.c). */
dy_status dy_pass_simplify(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_fold(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_cse(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_dce(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_fuse_transpose(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_fuse_matmul(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_fuse_conv(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_fuse_bn(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);
dy_status dy_pass_fuse_elementwise(dy_program *p, dy_pass_ctx *ctx, bool *changed, dy_error *err);

typedef struct {
  const char *name;         /* symbol prefix / file stem ("model")       */
  int64_t max_batch;        /* bound on the dynamic dim                   */
  const char *cc;           /* C compiler (NULL: $CC or "cc")             */
  const char *cflags;       /* extra flags, space separated (may be NULL) */
  const char *target;       /* instruction set: "native" (NULL), "generic",
                               "x86-64-v2".."x86-64-v4", "aarch64"; see
                               dy_target_flags */
  int threads;              /* split GEMM/conv kernels over this many
                               pthreads (0 or 1: single-threaded code) */
  const char *command_line; /* quoted in the generated header            */
  const char *source;       /* the model's path                           */
  bool emit_main;           /* produce main.c (executables)               */
  dy_pass_options passes;   /* -O level, verify/print/dump options        */
  int64_t max_ram;          /* fail when the arena exceeds it (0: no bound) */
  int64_t max_flash;        /* fail when the weights (NAME_WEIGHT_BYTES)
                               exceed it (0: no bound) */
} dy_compile_options;

dy_compile_options dy_compile_options_default(void);

typedef struct {
  int ops_before, ops_after;
  dy_memplan_result mem;
} dy_compile_report;

/* Verify, run the pass pipeline, plan memory and emit C. out is filled
 * (free with dy_codegen_output_free). p is modified. */
dy_status dy_compile_program(dy_program *p, const dy_compile_options *o,
                             dy_codegen_output *out, dy_compile_report *rep,
                             dy_error *err);

/* ---- driver.c ---- */

/* Write OUT.c and OUT.h (out_base without extension), each whole or not at
 * all. */
dy_status dy_write_sources(const dy_codegen_output *out, const char *out_base,
                           dy_error *err);
/* Build an executable at exe_path from model + main sources with the C
 * compiler, in a private temporary directory; the file appears whole or
 * not at all. */
dy_status dy_build_executable(const dy_codegen_output *out,
                              const dy_compile_options *o, const char *exe_path,
                              dy_error *err);
/* The C compiler flags of a --target (the SIMD path the generated code
 * takes follows from them), and the compiler to use when none is given
 * (a cross compiler for aarch64 on another host). *cc_default and
 * *runner (qemu-aarch64 when the executable cannot run here, else NULL)
 * may be NULL. DY_STATUS_INVALID_ARGUMENT for an unknown target. */
dy_status dy_target_flags(const char *target, const char **flags, const char **cc_default,
                          const char **runner, dy_error *err);
extern const char dy_target_names[];  /* "native|generic|...", for --help */
/* Run argv (argv[0] looked up in PATH); DY_OK iff it exits 0. */
dy_status dy_run_command(char *const argv[], dy_error *err);
/* The same with its standard output written to stdout_path (NULL: ours). */
dy_status dy_run_command_to(char *const argv[], const char *stdout_path, dy_error *err);
/* Map an input/output name to a file name: every character outside
 * [A-Za-z0-9._-] becomes '_', and a leading '.' too. */
void dy_safe_file_name(const char *name, char *buf, size_t n);
/* Turn a path stem into a C identifier (for --name defaults). */
void dy_c_identifier(const char *s, char *buf, size_t n);

/* ---- flops.c ---- */

/* Floating-point operations of op, and of the whole Program, at a batch
 * (the rules are at the top of flops.c); for `dy2stc bench`. */
int64_t dy_op_flops(const dy_program *p, const dy_op *op, int64_t batch);
int64_t dy_program_flops(const dy_program *p, int64_t batch);

/* ---- frontends/onnx.c, frontends/load.c: the ONNX frontend ---------- */
/* (section owned by the ONNX frontend; see compiler/frontends/onnx.c)     */

/* Options for dy_onnx_load_ex. Bound graph inputs are taken as constants
 * with the given values (specialisation: what a shape-like input such as
 * Reshape's shape needs when the model leaves it a graph input). */
typedef struct {
  int n_bind;
  const char *const *bind_names;     /* graph input names              */
  dy_tensor *const *bind_values;     /* their values (borrowed)        */
} dy_onnx_options;

/* What the loader learnt, filled even on failure. */
typedef struct {
  int64_t opset;                     /* the default domain's opset      */
  int needs_const_input;             /* on failure: index of a graph input
                                        that had to be a constant (or that
                                        a value which had to be depends on),
                                        or -1 */
  char needs_const_name[256];
} dy_onnx_info;

/* Read an ONNX model (ModelProto, opsets 1..18) into a new verified
 * Program: initializers and Constant nodes become persistable vars, graph
 * inputs feeds (a dim_param is the dynamic batch, -1), graph outputs
 * fetches, both under their ONNX names. Caller frees *out with
 * dy_program_free. Errors: DY_STATUS_FORMAT (not ONNX, truncated),
 * DY_STATUS_UNSUPPORTED (an op, dtype, attribute or opset; the message
 * names the node and its op type), DY_STATUS_IO. */
dy_status dy_onnx_load(const char *path, dy_program **out, dy_error *err);
dy_status dy_onnx_load_ex(const char *path, const dy_onnx_options *opts,
                          dy_onnx_info *info, dy_program **out, dy_error *err);
/* Read a serialized TensorProto (the conformance suite's input_N.pb).
 * *out is a new tensor (caller frees); name (if non-NULL) gets the
 * tensor's name. */
dy_status dy_onnx_tensor_read(const char *path, dy_tensor **out, char *name,
                              size_t name_n, dy_error *err);
/* ONNX TensorProto.DataType -> dtype; false for one dy2stc lacks. */
bool dy_onnx_dtype(int onnx_type, dy_dtype *out);
/* Load any model dy2stc reads: ONNX when path ends in ".onnx" or the file
 * parses as an ONNX ModelProto, else NAME.dymodel + NAME.dyparams through
 * dy_jit_load. Caller frees *out. */
dy_status dy_model_load_any(const char *path, dy_program **out, dy_error *err);
/* ---- end of the ONNX frontend section ---- */

#endif
