/* dy_driver.h - the compile pipeline, the build driver, the FLOP count and
 * the first diverging op (compiler/driver/: compile.c, driver.c, flops.c,
 * localize.c; library dy_driver). The dy2stc CLI (compiler/cli/) is built
 * on it, on the frontends and on the C frontend; a program other than the
 * CLI can link it alone: it links no frontend, no C frontend and no
 * libclang, and never exits.
 *
 *   dy_program *p;  dy_model_load_any("net.onnx", &p, &err);  // dy_frontends.h
 *   dy_program_bound_sym(p, "batch", 8, &err);       // bounds live in p (default 64)
 *   dy_compile_options o = dy_compile_options_default();
 *   dy_codegen_output out;  dy_compile_report rep;
 *   dy_compile_program(p, &o, &out, &rep, &err);   // verify, passes, plan, emit
 *   dy_build_executable(&out, &o, "net", &err);     // $CC -> ./net
 *
 * The driver uses ir, runtime, codegen and the passes; it does not read
 * models (that is the frontends' job), so it does not link them.
 */
#ifndef DY_DRIVER_H
#define DY_DRIVER_H

#include "dy_passes.h"

/* ---- compile.c ---- */

typedef struct {
  const char *name;         /* symbol prefix / file stem ("model")       */
  const char *cc;           /* C compiler (NULL: $CC or "cc")             */
  const char *cflags;       /* extra flags, space separated (may be NULL) */
  const char *target;       /* instruction set: "native" (NULL), "generic",
                               "x86-64-v2".."x86-64-v4", "aarch64"; see
                               dy_target_flags */
  int threads;              /* split GEMM/conv kernels over this many
                               pthreads (0 or 1: single-threaded code) */
  const char *command_line; /* quoted in the generated header            */
  const char *source;       /* the model's path                           */
  const char *header;       /* the header's file name NAME.c includes
                               (--emit c: OUT's, "OUT.h"); NULL: NAME.h  */
  bool emit_main;           /* produce main.c (executables)               */
  const dy_codegen_trainer *trainer; /* a training step's main.c is the
                               trainer with these defaults (emit_main)   */
  dy_pass_options passes;   /* -O level, verify/print/dump options        */
  int64_t max_ram;          /* fail when the arena exceeds it (0: no bound) */
  int64_t max_flash;        /* fail when the weights (NAME_WEIGHT_BYTES)
                               exceed it (0: no bound) */
  bool plain_kernels;       /* --plain-kernels: dy_codegen_options'       */
  bool no_pack_a;           /* --no-pack-a: dy_codegen_options'           */
  int64_t max_iterations;   /* --max-iterations: NAME_MAX_ITERATIONS, the
                               trips a while op without its own bound may
                               run before NAME_run returns NAME_ERR_LOOP
                               (0: DY_WHILE_MAX_ITERATIONS, 1000000) */
  dy_progress_fn progress;  /* hears each phase: the passes (unless
                               passes.progress is set), "plan", "codegen",
                               "cc" (or NULL) */
  void *progress_ctx;
  bool debug_dump;          /* the --localize build: NAME_run hands each
                               op's result to NAME_debug_dump
                               (dy_codegen_options.debug_dump) */
} dy_compile_options;

dy_compile_options dy_compile_options_default(void);

typedef struct {
  int ops_before, ops_after;
  dy_memplan_result mem;
  int64_t state_bytes;      /* a training step's state in RAM (0: none) */
} dy_compile_report;

/* Verify, run the pass pipeline, plan memory and emit C. out is filled
 * (free with dy_codegen_output_free). p is modified. The plan and the code
 * are sized for p's size bounds (the batch's and the other symbols':
 * dy_program_bound_sym before the call, dy_program_sym_bound). */
dy_status dy_compile_program(dy_program *p, const dy_compile_options *o,
                             dy_codegen_output *out, dy_compile_report *rep,
                             dy_error *err);

/* ---- driver.c ---- */

/* Write OUT.c, OUT.h and, when the weights are separate (out->weights),
 * OUT_weights.c (out_base without extension): all whole, or none. */
dy_status dy_write_sources(const dy_codegen_output *out, const char *out_base,
                           dy_error *err);
/* Build an executable at exe_path from model + main sources with the C
 * compiler, in a private temporary directory; the file appears whole or
 * not at all. */
dy_status dy_build_executable(const dy_codegen_output *out,
                              const dy_compile_options *o, const char *exe_path,
                              dy_error *err);
/* The same as a shared library (cc -shared -fPIC, no main.c) at so_path,
 * for a caller that loads the model into its own process (the Python
 * package: dlopen, then NAME_run_v); a target that cannot run here
 * (aarch64 on another host) is DY_STATUS_INVALID_ARGUMENT. */
dy_status dy_build_shared_library(const dy_codegen_output *out, const dy_compile_options *o,
                                  const char *so_path, dy_error *err);
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

/* Private temporary directories (mode 0700, mkdtemp under $TMPDIR or
 * /tmp, named PREFIX.XXXXXX): dy_temp_dir_make fills dir (n bytes) and
 * registers it; dy_temp_dir_remove deletes it with everything in it and
 * unregisters it. dy_temp_dirs_remove_all removes every one still
 * registered: the CLI calls it from its SIGINT/SIGTERM handler, so an
 * interrupted build leaves nothing behind. At most 16 at a time. */
dy_status dy_temp_dir_make(const char *prefix, char *dir, size_t n, dy_error *err);
void dy_temp_dir_remove(const char *dir);
void dy_temp_dirs_remove_all(void);
/* The same with its standard output written to stdout_path (NULL: ours). */
dy_status dy_run_command_to(char *const argv[], const char *stdout_path, dy_error *err);
/* The same with its stdout and stderr to /dev/null (a probe). */
dy_status dy_run_command_quiet(char *const argv[], dy_error *err);

/* ---- measure.c ---- */

/* A library call's stack (memcpy, memset, libgcc's helpers: leaves
 * pushing a few registers), added for each call out of NAME.c. */
#define DY_EXTERN_STACK 32

typedef struct {
  char name[128];
  int64_t bytes;
} dy_code_fn;

typedef struct {
  int64_t code_bytes;    /* text of all functions of NAME.o */
  dy_code_fn *fns;       /* each function's bytes, largest first */
  int n_fns;
  int64_t stack_bytes;   /* worst-case stack of NAME_run and its callees;
                            -1: unknown (stack_why says why) */
  char stack_why[200];   /* how the bound was derived, or why it is unknown */
  char cc_line[600];     /* the compiler and flags measured with */
} dy_code_measure;

/* Compile out's NAME.c with o's compiler (-c, -fstack-usage,
 * -fcallgraph-info; measure.c's header has the flags) in a private
 * directory and read the code bytes per function and the stack bound of
 * NAME_run. Fails only when the compiler cannot build the file; free m
 * with dy_code_measure_free. */
dy_status dy_measure_code(const dy_codegen_output *out, const dy_compile_options *o,
                          dy_code_measure *m, dy_error *err);
void dy_code_measure_free(dy_code_measure *m);
/* Map an input/output name to a file name: every character outside
 * [A-Za-z0-9._-] becomes '_', and a leading '.' too. */
void dy_safe_file_name(const char *name, char *buf, size_t n);
/* DIR/<file>.npy for fetch i of p, as the generated main.c names it:
 * dy_safe_file_name, and "_<i>" appended when that equals an earlier
 * fetch's file ("probs:0", "probs_0" -> probs_0.npy, probs_0_1.npy). A
 * path over n bytes (or 4096) is an error, never cut short. */
dy_status dy_output_path(const dy_program *p, int i, const char *dir, char *buf, size_t n,
                         dy_error *err);
/* Turn a path stem into a C identifier (for --name defaults). */
void dy_c_identifier(const char *s, char *buf, size_t n);

/* ---- localize.c ---- */

#define DY_LOCALIZE_SHOWN 4

/* Where the compiled code first departs from the static executor. */
typedef struct {
  int n_compared;              /* op results compared, in execution order */
  bool found;                  /* one was outside tolerance: */
  int op_id;                   /* its op (of the compiled Program) */
  dy_op_kind kind;
  int block;                   /* the op's block (0, or a branch's or loop's) */
  int loop_op;                 /* the innermost while around it, or -1 */
  int64_t trip;                /* that loop's trip (from 0), or -1 */
  char file[256];              /* the op's user source line */
  int line;
  char srcs[512];              /* a fused or merged op's parts:
                                  "f.c:3 conv2d, f.c:4 relu" (else "") */
  char var[256];               /* the result that differs */
  int64_t n_bad, n_elements;   /* its elements outside tolerance, of all */
  int n_shown;                 /* the first differing elements: */
  int64_t index[DY_LOCALIZE_SHOWN];
  double expected[DY_LOCALIZE_SHOWN]; /* the static executor's value */
  double got[DY_LOCALIZE_SHOWN];      /* the compiled code's */
} dy_localize_result;

/* Compile p with o (plus the debug_dump build), run it on inputs (one per
 * feed) and compare every op result of every block (each run: a loop
 * body's once a trip), in execution order, with
 * the static executor's - the user's Program where the var is still its
 * own, else the optimised one - within |got - expected| <= atol + rtol *
 * max(|expected|, the result's largest magnitude) (GEMM and reductions
 * round in proportion to their terms); r describes the first result with
 * an element outside it (r->found). p is compiled
 * (modified) as by dy_compile_program. plant_op is a test hook: >= 0 adds
 * 1 to element 0 of that op's f32 result in the compiled run, as a wrong
 * kernel would; -1 for none. Temporary files go to $TMPDIR (or /tmp) and
 * are removed. */
dy_status dy_localize(dy_program *p, const dy_compile_options *o, dy_tensor *const *inputs,
                      double rtol, double atol, int plant_op, dy_localize_result *r,
                      dy_error *err);
/* dy_localize with the plant on one trip of its loop (plant_trip >= 0; -1:
 * every run), as a kernel wrong only on some data would be. */
dy_status dy_localize_planted(dy_program *p, const dy_compile_options *o,
                              dy_tensor *const *inputs, double rtol, double atol, int plant_op,
                              int64_t plant_trip, dy_localize_result *r, dy_error *err);

/* ---- flops.c ---- */

/* Floating-point operations of op, and of the whole Program, at a batch
 * (the rules are at the top of flops.c); for `dy2stc bench`. */
int64_t dy_op_flops(const dy_program *p, const dy_op *op, int64_t batch);
int64_t dy_program_flops(const dy_program *p, int64_t batch);
/* How many times each op ran on inputs (one per feed), by the static
 * executor, into runs[dy_codegen_op_slot(p, b, k)] (dy_program_count_ops
 * of them): 1 for an op of block 0, one per trip inside a loop body (the
 * condition's: one more), one per taken branch inside a cond; 0 for the
 * control ops themselves and ops never reached. */
dy_status dy_program_op_runs(const dy_program *p, dy_tensor *const *inputs, int64_t *runs,
                             dy_error *err);

#endif
