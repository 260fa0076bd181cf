/* dy_codegen.h - the C emitter.
 *
 * dy_codegen turns a verified, memory-planned Program into standalone C:
 *
 *   NAME.h   the API: NAME_run(), NAME_ARENA_BYTES (= NAME_RAM_BYTES),
 *            NAME_WEIGHT_BYTES (= NAME_FLASH_BYTES), input/output shape
 *            macros, status codes. Nothing else.
 *   NAME.c   the kernels (one static function per op, commented with the op,
 *            its shapes and its source line), the weights as const arrays
 *            (or, with separate_weights, named into NAME_weights, which
 *            NAME_weights.c or an assembler blob defines: program/weights_file.c),
 *            and NAME_run() which calls the kernels in order on buffers laid
 *            out in the caller's arena. No malloc, no globals written at run
 *            time, no headers but <stdint.h> and <stddef.h>, no libm: the
 *            math functions it calls are its own (emit_mathlib.c). Builds
 *            with -ffreestanding -nostdlib; links against nothing but
 *            memcpy/memset, which the compiler may call for copies.
 *   main.c   (optional) a command-line driver: --input NAME=FILE.npy,
 *            --output-dir DIR, --bench N, .npy/.bin reading and writing;
 *            or, for a training step, the trainer (rt/dy_train_main.c).
 *
 * A Program with ops that update persistable vars in place (DY_OPF_INPLACE:
 * a training step) keeps those vars, its "state", in the caller's RAM:
 * NAME_run then takes `void *state` first (NAME_STATE_BYTES, set up by
 * NAME_state_init from const initial values), and NAME.h declares
 * NAME_state (a table), NAME_state_tensor and, for a dy_train.h training
 * Program, NAME_train_step (the learning rate by value).
 *
 * Contract with the memory plan (compiler/passes/memplan.c): every var that
 * is neither persistable, a feed nor a fetch has mem_offset >= 0 (bytes into
 * the arena, sized for the size symbols' bounds: dy_program_sym_bound), or alias_of >= 0 for a view that shares
 * another var's storage. The arena size is the plan's result.
 *
 * Output is deterministic: the same Program and options give the same bytes.
 * Depends on ir/ only.
 */
#ifndef DY_CODEGEN_H
#define DY_CODEGEN_H

#include "dy_ir.h"

/* The defaults of a compiled trainer's main.c (rt/dy_train_main.c). */
typedef struct {
  double lr;                 /* the base learning rate (--lr overrides it)   */
  int64_t batch;             /* samples per step (--batch; <= the batch's
                                bound, dy_program_sym_bound)                */
  int64_t lr_step_size;      /* > 0: the rate is multiplied by lr_gamma every
                                lr_step_size steps; 0: constant              */
  double lr_gamma;
  int64_t lr_warmup;         /* >= 0: cosine decay to 0 over the run after a
                                linear warm-up of lr_warmup steps (dy_lr_at) */
} dy_codegen_trainer;

typedef struct {
  const char *name;          /* C identifier used as symbol prefix ("model") */
  int64_t arena_bytes;       /* from the memory plan                        */
  bool emit_main;            /* also produce main.c                         */
  const dy_codegen_trainer *trainer; /* non-NULL: main.c is a trainer (the
                                Program is a training step, dy_train.h)     */
  const char *command_line;  /* quoted in the header comment (may be NULL)  */
  const char *source;        /* the input model's path (may be NULL)        */
  const char *header;        /* the file name NAME.c includes its header by
                                ("out.h" when written as out.h); NULL: NAME.h */
  int ops_before;            /* ops before the passes (0: not stated)       */
  int64_t arena_lower_bound; /* the plan's lower bound (0: not stated)      */
  /* Bytes of each op's kernel scratch, one per op of every block by slot
   * (dy_codegen_op_slot), as computed once before the memory plan
   * (dy_codegen_scratch_sizes). NULL: asked of the emitter table here. */
  const int64_t *scratch_bytes;
  /* Arena offset of each op's kernel scratch, by slot as scratch_bytes, -1
   * for none: from dy_memplan_scratch. NULL: the scratch goes after
   * arena_bytes (the arena macro grows by the largest). */
  const int64_t *scratch_offsets;
  int threads;               /* > 1: GEMM and conv kernels split their work
                                over this many pthreads (NAME.c then
                                includes <pthread.h>; link with -pthread) */
  int64_t max_iterations;    /* NAME_MAX_ITERATIONS: trips a while may run
                                before NAME_run returns NAME_ERR_LOOP, for
                                loops whose max_iterations attribute is 0
                                (0 here: DY_WHILE_MAX_ITERATIONS) */
  /* true: the weights of every dtype (plain and packed) are not written
   * into NAME.c but laid out in dy_codegen_output.weights, which NAME.c
   * reads at `extern const union NAME_weights_data NAME_weights` (each
   * array at a 64-byte boundary, as floats or cast to its element type;
   * the type is incomplete there); dy_codegen_weights_c writes its
   * definition as NAME_weights.c (string literals: cheap to compile), and
   * dy_codegen_weights_asm an assembler file that includes them as a
   * binary blob. false: every weight is a static const array in NAME.c. */
  bool separate_weights;
  /* true: the kernels the faster ones replaced, to compare with
   * (--plain-kernels): depthwise convolution one tap at a time instead of
   * register-blocked, max pooling with padding as window loops, the GEMM
   * on 6-row kernels instead of AVX-512's 12-row ones, convolutions one
   * im2col panel at a time instead of weight-stationary, the activations
   * silu, hard_swish, gelu (ops, and on the conv kernels' rows) as scalar
   * loops of their formulas instead of dy_act's vector math, reduce sums
   * in C order instead of vector row sums */
  bool plain_kernels;
  /* true: the matmuls read their activations (A) in place through its
   * strides instead of packing them at run time into 12-row micro-panels
   * per cache block (--no-pack-a), to compare */
  bool no_pack_a;
  /* A debug build for `dy2stc check --localize` (compiler/driver/localize.c):
   * NAME.c declares NAME_debug_dump(int op, const char *var, const void
   * *data, int64_t n, int dtype, int64_t trip), which the caller defines,
   * and NAME_run calls it after every op of every block with each result
   * (id, var name, data, element count, dtype, and the trip of the
   * innermost while around the op, from 0; -1 outside every loop). Off
   * (false), the code is unchanged. */
  bool debug_dump;
} dy_codegen_options;

/* Ops are numbered block-major for per-op arrays such as scratch_offsets:
 * block 0's ops, then block 1's, ... The slot of op `index` of block b. */
int dy_codegen_op_slot(const dy_program *p, int b, int index);

typedef struct {
  char *header;              /* NAME.h text (malloc'd) */
  char *source;              /* NAME.c text (malloc'd) */
  char *main_c;              /* main.c text (malloc'd), or NULL */
  int64_t weight_bytes;      /* NAME_WEIGHT_BYTES: the const arrays' bytes */
  int64_t arena_bytes;       /* NAME_ARENA_BYTES (the plan's, or more)     */
  int64_t state_bytes;       /* NAME_STATE_BYTES (0: no state)             */
  uint32_t *weights;         /* separate_weights: the words of NAME_weights
                                (malloc'd; at least one), else NULL      */
  int64_t n_weight_words;
  char *name;                /* separate_weights: the options' name (malloc'd) */
} dy_codegen_output;

dy_status dy_codegen(const dy_program *p, const dy_codegen_options *opt,
                     dy_codegen_output *out, dy_error *err);
/* Bytes of arena scratch the kernel of op needs while it runs (im2col
 * panels, a run-time GEMM operand packed for the micro-kernel), at the
 * Program's size bounds and with `threads` threads (each has its own; 0
 * or 1: one); 0 for none. The memory plan reserves them for that op only. */
int64_t dy_codegen_scratch_bytes(const dy_program *p, const dy_op *op, int threads);
/* Every op's dy_codegen_scratch_bytes, computed once into bytes (one per op
 * of every block, dy_program_count_ops of them, by dy_codegen_op_slot):
 * the per-op fact the memory plan places and dy_codegen_options carries. */
void dy_codegen_scratch_sizes(const dy_program *p, int threads, int64_t *bytes);
/* Does op (conv2d / fused_conv2d) get the padded-plane depthwise kernel
 * (emit_depthwise.c) with these options? For --report. */
bool dy_codegen_depthwise_padded(const dy_program *p, const dy_op *op, bool plain_kernels);
/* Panels of im2col a GEMM convolution op gathers at once (its
 * weight-stationary form, for weights over 1 MB; 1: one at a time, or not
 * a GEMM convolution), with `threads` threads and plain_kernels as the
 * options give them. For --report. */
int64_t dy_codegen_conv_panels(const dy_program *p, const dy_op *op, int threads,
                               bool plain_kernels);
/* How op (matmul / fused_matmul on the GEMM kernel) reads A, for
 * --report: writes the GEMM's m x k x n (m at most its value at the
 * batch's bound) and "A packed, blocks of 96 x 128 (rows x k)" or "A in place
 * (k < 32)" into buf and returns true; false (buf untouched) for other
 * ops. no_pack_a: the option. */
bool dy_codegen_gemm_a(const dy_program *p, const dy_op *op, bool no_pack_a, char *buf,
                       size_t n);
/* The kernels of a generated NAME.c (text `source`) that call the scalar
 * math functions (dy_expf, dy_tanhf, dy_erff, dy_sigmoidf, dy_logf, ...)
 * in their own loops instead of the vector helpers (dy_vexp, dy_act): code
 * that is vector code only if the host C compiler inlines and vectorises
 * it (codegen/program/scan.c). Returns their number; their names, ", "
 * apart, into names (as many as fit in n; may be NULL). For --report. */
int dy_codegen_scalar_kernels(const char *source, char *names, size_t n);
void dy_codegen_output_free(dy_codegen_output *out);
/* State the stack bound of NAME_run in out's NAME.h: its line
 * "NAME_STACK_BYTES: not measured" becomes `#define NAME_STACK_BYTES
 * bytes` with `how` as its comment (the driver measures it with the C
 * compiler: compiler/driver/measure.c). */
dy_status dy_codegen_put_stack(dy_codegen_output *out, long long bytes, const char *how,
                               dy_error *err);
/* NAME_weights.c for out->weights (separate_weights): the union
 * NAME_weights_data (a float view and the bytes as chunks of 4032, each
 * initialised by a string literal of \xHH escapes, within C99's 4095
 * characters) and its definition. NULL on OOM (malloc'd). */
char *dy_codegen_weights_c(const dy_codegen_output *out);
/* An assembler file (GNU as syntax, ELF) defining NAME_weights, 64-byte
 * aligned in .rodata, as `.incbin "bin_path"`, bin_path holding the words as
 * the host stores them (every --target is little-endian, as the hosts
 * are). NULL on OOM, or when bin_path holds a newline. */
char *dy_codegen_weights_asm(const char *name, const char *bin_path, int64_t n_words);
/* The seed attributes of block 0's training-mode dropout ops, each value
 * once, in op order: the seeds dy_program_reseed_dropout draws, one each.
 * Writes at most cap into seeds (may be NULL) and returns their number. */
int dy_codegen_dropout_seeds(const dy_program *p, int64_t *seeds, int cap);

/* --- for emitters (emit_*.c) -------------------------------------- */

/* A growable text buffer. */
typedef struct {
  char *s;
  size_t len, cap;
  bool oom;
} dy_buf;

void dy_buf_printf(dy_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dy_buf_free(dy_buf *b);

/* A loop an emitter has open (dy_cg_for, codegen/text/lines.c). */
enum { DY_CG_MAX_LOOPS = 32 };
typedef struct {
  dy_buf *parent;            /* the text the loop goes into */
  dy_buf body;               /* of one trip: its body, written aside */
  bool one;                  /* of one trip: not printed as a loop */
  bool brace;                /* its body is a block */
  int indent;                /* its header's indent, in spaces */
  long long first;           /* of one trip: the index's value */
  char var[32];              /* the index */
  char head[192];            /* the header, as the emitter gave it */
} dy_cg_loop;

/* Emission context for one kernel. The emitter writes into `body` the C
 * statements of a function whose parameters are the op's inputs then
 * outputs, typed const T *restrict / T *restrict and named by the driver
 * by their operands' roles (x, w, bias, y, ...: dy_cg_in, dy_cg_out);
 * `batch` (int64_t) is in scope when the program has a dynamic dim.
 * Shapes are given as C expressions through dy_cg_dim; loops are opened
 * with dy_cg_for, which prints no loop of one trip. What the emitter
 * writes is the kernel's final text. */
typedef struct {
  const dy_program *p;
  const dy_op *op;
  dy_buf *body;
  int indent;
  unsigned *uses;            /* DY_USES_* bits (text/cg_text.h) the
                                kernel sets for the helpers it calls */
  bool scratch;              /* a `float *restrict scratch` parameter of
                                dy_codegen_scratch_bytes bytes is in scope */
  int threads;               /* dy_codegen_options.threads */
  dy_buf *before;            /* text put in front of the kernel (the worker
                                function of a threaded kernel) */
  int n_parts;               /* worker functions written so far */
  bool seed;                 /* dropout: its seed is a `uint64_t seed`
                                parameter (a training step's, drawn per
                                step), not its attribute */
  bool plain_kernels;        /* dy_codegen_options.plain_kernels */
  bool no_pack_a;            /* dy_codegen_options.no_pack_a */
  const char *const *param;  /* the parameters' names, inputs then outputs
                                (dy_cg_in, dy_cg_out); NULL: in0, in1, ...,
                                out0, ... */
  int n_loops;               /* loops open, innermost last */
  dy_cg_loop loop[DY_CG_MAX_LOOPS];
} dy_cg_ctx;

/* A dim as a C expression: "7" or "batch". Returns a pointer into a
 * per-context rotating buffer, valid for the next few calls. */
const char *dy_cg_dim(dy_cg_ctx *ctx, const dy_type *t, int axis);
/* Product of dims [from, to) of t as a C expression ("30", "batch*10"). */
const char *dy_cg_extent(dy_cg_ctx *ctx, const dy_type *t, int from,
                           int to);
/* The type of input / output i of the op being emitted, and the name of
 * its parameter in the kernel ("x", "w", ..., "y"). */
const dy_type *dy_cg_in_type(dy_cg_ctx *ctx, int i);
const dy_type *dy_cg_out_type(dy_cg_ctx *ctx, int i);
const char *dy_cg_in(const dy_cg_ctx *ctx, int i);
const char *dy_cg_out(const dy_cg_ctx *ctx, int i);
/* Append an indented line. */
void dy_cg_line(dy_cg_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Open a loop, its header as printed: "for (int64_t V = A; V < B; V++)" or
 * "... V += S)", and " {" for a block; dy_cg_end closes the innermost (its
 * "}"). A loop of one trip is printed as its body with the index fixed
 * (codegen/text/lines.c). */
void dy_cg_for(dy_cg_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dy_cg_end(dy_cg_ctx *ctx);

/* The emitter table: per op of ir/ops.def its family's entry (codegen/ops/,
 * dy_cg_op_<op> beside dy_emit_<op>), built from ops.def so that a missing
 * one is a link error:
 *   emit     the body of the op's kernel (dy_emit_<op>)
 *   scratch  the bytes of arena scratch the kernel needs while it runs, at
 *            the Program's size bounds and with `threads` threads (each has its own); NULL:
 *            none (dy_codegen_scratch_bytes reads it)
 *   roles    the names of the kernel's input parameters by role ("x", "w",
 *            "bias", ...), or role_prefix: inputs <prefix>0, <prefix>1, ...
 *            (concat). With neither, one input is x and the two of an
 *            elementwise op a and b; outputs are y. */
enum { DY_CG_MAX_ROLES = 9 };
typedef dy_status (*dy_cg_fn)(dy_cg_ctx *ctx, dy_error *err);
typedef int64_t (*dy_cg_scratch_fn)(const dy_program *p, const dy_op *op, int threads);
typedef struct {
  dy_cg_fn emit;
  dy_cg_scratch_fn scratch;
  const char *roles[DY_CG_MAX_ROLES];
  const char *role_prefix;
} dy_cg_op;
extern const dy_cg_op *const dy_cg_table[DY_OP_COUNT];

#endif /* DY_CODEGEN_H */
