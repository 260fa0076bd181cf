/* cli.h - what the files of the dy2stc command line (compiler/cli/) share.
 * Not part of any library: only the CLI prints an error as its last word
 * and picks exit statuses (0 ok, 1 an error or a mismatch, 2 a usage
 * error); main() returns them.
 *
 * Three floors, each calling only the ones below it:
 *
 *   main.c        the dispatcher: `dy2stc COMMAND ...` -> dy_cli_COMMAND
 *   cmd_*.c       one subcommand each, its --help text and its arguments
 *   cli_*.c       what several subcommands share: option parsing, inputs,
 *                 model loading, tensor comparison, training options, the
 *                 progress line (cli_progress.c), and at the bottom the
 *                 error printing (cli_util.c)
 *
 * A new subcommand is a cmd_NAME.c with dy_cli_NAME, its line in main.c's
 * table and in compiler/cli/CMakeLists.txt.
 */
#ifndef DY_CLI_H
#define DY_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "dy_compiler.h"

/* ---- the subcommands (cmd_NAME.c): each returns the exit status ---- */

int dy_cli_compile(int argc, char **argv);   /* cmd_compile.c */
int dy_cli_run(int argc, char **argv);       /* cmd_run.c */
int dy_cli_show(int argc, char **argv);      /* cmd_show.c */
int dy_cli_check(int argc, char **argv);     /* cmd_check.c */
int dy_cli_compare(int argc, char **argv);   /* cmd_compare.c */
int dy_cli_bench(int argc, char **argv);     /* cmd_bench.c */
int dy_cli_train(int argc, char **argv);     /* cmd_train.c */
int dy_cli_params(int argc, char **argv);    /* cmd_params.c */
int dy_cli_quantize(int argc, char **argv);  /* cmd_quantize.c */
int dy_cli_export(int argc, char **argv);    /* cmd_export.c */
int dy_cli_convert(int argc, char **argv);   /* cmd_convert.c */

/* ---- cli_train.c: the training options train and compile --train share ---- */

/* Loss, optimizer, rate and schedule, batch, the output. */
typedef struct {
  dy_loss_spec loss;
  dy_optimizer_spec opt;
  dy_lr_schedule sched;
  int64_t batch;            /* 0 until given: 32 */
  const char *output;       /* --output NAME, or NULL: the only one */
  int64_t max_iterations;   /* --max-iterations N: the bound (and the rows of
                               the gradient's trip stack) of every while
                               without its own; 0: DY_WHILE_GRAD_TRIPS */
  bool has_loss, has_opt, has_lr, has_wd;
  bool has_batch;           /* --batch given: above the samples is an error
                               (the default is cut to them) */
} dy_cli_train_spec;
extern const char dy_cli_train_help[];  /* their lines of --help */
/* argv[*i] (and its value, advancing *i) when it is one of them: 1; 0 when
 * it is not; -1 after printing a usage error of subcommand cmd. */
int dy_cli_train_option(const char *cmd, int argc, char **argv, int *i,
                        dy_cli_train_spec *t);
/* After the arguments: a usage error (its exit status) when --loss or
 * --optimizer is missing or they conflict; else the defaults, 0. */
int dy_cli_train_finish(const char *cmd, dy_cli_train_spec *t);
/* The loop's numbers for n samples over epochs, checked: the batch (an
 * explicit --batch above n is an error, the default is cut to n), the steps
 * per epoch (the step count over the run must stay below 2^53), the
 * schedule (cosine: over epochs * steps; a step schedule's largest rate
 * must be a finite float). Errors name the option. */
typedef struct {
  int64_t batch, steps;
  dy_lr_schedule sched;
} dy_cli_train_loop;
dy_status dy_cli_train_plan(const dy_cli_train_spec *t, int64_t n, int64_t epochs,
                           dy_cli_train_loop *plan, dy_error *err);
/* The fetch to train: the var of output `name`, else of the only one. */
dy_status dy_cli_pick_output(const dy_program *p, const char *name, int *out,
                             dy_error *err);
/* The training Program of the model t, as dy2stc train makes it: the
 * --max-iterations bound on every while without one, train semantics, then
 * dy_program_make_training on the chosen output (soft labels: f32
 * cross-entropy targets). */
dy_status dy_cli_make_training(dy_program *t, dy_cli_train_spec *ts, bool soft_labels,
                               dy_error *err);
/* A training step's error, with the remedy appended when it is a while
 * that ran past its trip bound (DY_STATUS_LIMIT): --max-iterations. */
void dy_cli_train_step_hint(dy_error *err);

/* ---- cli_train_state.c: dy2stc train's checks, checkpoints, validation ---- */

/* An f32 tensor of training data holds only finite values; else an error
 * "WHAT: element K of sample I is nan: training data must be finite". */
dy_status dy_cli_finite_data(const dy_tensor *t, const char *what, dy_error *err);
/* The state of a training Program: every persistable var an in-place op
 * writes (parameters, optimizer moments, running statistics), in var
 * order, as the compiled step's NAME_state lists them. */
typedef struct {
  int n, *vars;
} dy_cli_state;
dy_status dy_cli_state_init(dy_cli_state *st, const dy_program *t, dy_error *err);
void dy_cli_state_free(dy_cli_state *st);
/* Every f32 state tensor is finite; else an error "WHERE: 'NAME' is nan
 * (element K) after the step: ...". */
dy_status dy_cli_finite_state(const dy_program *t, const dy_cli_state *st, const char *where,
                              dy_error *err);
/* The loop's position in a checkpoint (cli_train_state.c's header). */
typedef struct {
  int64_t epochs_done, epochs, samples, batch, steps;
  double lr;
  char schedule[96];  /* dy_cli_schedule_text */
  int shuffle;
  uint64_t seed, rng[4];
} dy_cli_checkpoint;
/* "constant", "step:SIZE:GAMMA" or "cosine:WARMUP", as a checkpoint says it. */
void dy_cli_schedule_text(const dy_lr_schedule *s, char *buf, size_t n);
/* The state tensors to DIR/<name>.npy, then DIR/checkpoint.txt; DIR is made
 * when missing. */
dy_status dy_cli_checkpoint_write(const char *dir, const dy_program *t, const dy_cli_state *st,
                                  const dy_cli_checkpoint *c, dy_error *err);
/* The position from DIR/checkpoint.txt and every state tensor from its
 * file (dtype and shape checked) into t. */
dy_status dy_cli_checkpoint_read(const char *dir, dy_program *t, const dy_cli_state *st,
                                 dy_cli_checkpoint *c, dy_error *err);

/* The model p (eval semantics, the trained values) on a validation set,
 * in batches: the loss of output `fetch` (the index among p's fetches)
 * as training computes it (the mean over every term) and the accuracy in
 * percent (cross entropy: the argmax is the label's class; bce: the sign
 * agrees; -1 for mse and l1). */
dy_status dy_cli_validate(const dy_program *p, int fetch, dy_tensor *const *in, int n_in,
                          const dy_tensor *labels, dy_loss_kind loss, int64_t batch,
                          double *loss_out, double *acc_out, dy_error *err);

/* ---- cli_diff.c: two tensors compared (compare, check) ---- */

typedef struct {
  double max_abs, max_rel;
  int64_t worst;     /* index of the largest error beyond tolerance, or -1 */
  int64_t n_bad;
} dy_cli_diff_stats;
/* Element by element, beyond atol + rtol * |b| counting as bad; NaN and
 * +-inf equal only the same non-finite value. A shape mismatch is an
 * error. */
dy_status dy_cli_diff_tensors(const dy_tensor *a, const dy_tensor *b, double rtol,
                              double atol, dy_cli_diff_stats *d, dy_error *err);

/* ---- cli_custom.c: --custom-op NAME=FILE.c ---- */

/* Build FILE.c's helper process and register NAME's shape function and
 * kernel through it (runtime/dy_custom.h); remember FILE.c for compile. */
dy_status dy_cli_custom_op(const char *spec, dy_error *err);
/* cflags with every --custom-op file appended (a static buffer; cflags
 * itself when there is none). */
const char *dy_cli_custom_sources(const char *cflags);

/* ---- cli_model.c: loading a model, the size options ---- */

/* --max-dim NAME=N, --dim NAME=N, --shape INPUT=d0,d1,...: kept in
 * command-line order and applied to the loaded Program (dy_cli_apply_dims). */
typedef struct {
  char kind;               /* 'm' max-dim, 'd' dim, 's' shape */
  char name[128];
  int64_t v[DY_MAX_DIMS];  /* N, or the shape's dims */
  int n;
} dy_cli_dim_option;
/* "NAME=N" or "INPUT=d0,d1,..." (kind 's') into *o; false on bad text. */
bool dy_cli_parse_dim_option(char kind, const char *a, dy_cli_dim_option *o);
/* MODEL through dy_model_load_any; a Paddle model takes its params from
 * `params` when given and the --shape options among d[0..n) as its feeds'
 * dims. */
dy_status dy_cli_load_model(const char *model, const char *params, const dy_cli_dim_option *d,
                            int n, dy_program **p, dy_error *err);
/* The same for `show`: a Paddle model whose params file is absent loads
 * with its parameters typed but without data (params_optional). */
dy_status dy_cli_load_model_show(const char *model, const char *params,
                                 const dy_cli_dim_option *d, int n, dy_program **p,
                                 dy_error *err);
/* The pins (--shape, --dim) of d[0..n), then the bounds in the Program
 * (dy_program_bound_sym): the batch's max_batch (--max-batch; 0: not
 * given), then the --max-dim ones. */
dy_status dy_cli_apply_dims(dy_program *p, const dy_cli_dim_option *d, int n,
                            int64_t max_batch, dy_error *err);
/* --params given for a model that is not a Paddle one: a usage error of
 * cmd (its exit status), else 0. */
int dy_cli_paddle_params_only(const char *cmd, const char *model, const char *params);

/* ---- cli_options.c: pass and C compiler options ---- */

/* A pass option (-O0..2, --verify-each, --print-before/after[=P],
 * --print-after-all/-change, --dump-dir D, --disable-pass P[,P...],
 * --winograd M) at argv[*i]: 1 consumed (*i moved past a value), 0 not
 * one, -1 an error already printed. */
int dy_cli_pass_option(const char *cmd, int argc, char **argv, int *i, dy_pass_options *po);
/* A C compiler option (--cc, --cflags, --target, --plain-kernels,
 * --no-pack-a) at argv[*i], returning as dy_cli_pass_option does. */
int dy_cli_cc_option(const char *cmd, int argc, char **argv, int *i, dy_compile_options *o);
/* The passes in pipeline order, one line each. */
void dy_cli_print_passes(FILE *f);

/* ---- cli_inputs.c: model inputs given as NAME=FILE or positionally ---- */

typedef struct {
  int n;
  const char *name[DY_MAX_FEEDS];   /* NULL when positional */
  const char *file[DY_MAX_FEEDS];
} dy_cli_inputs;

/* Record one --input argument; false when there are too many. */
bool dy_cli_add_input(dy_cli_inputs *ia, const char *arg);
/* --lod NAME=FILE: the offsets of LoD input NAME, i.e. the input NAME@lod
 * (false when there are too many inputs or arg has no '='). */
bool dy_cli_add_lod(dy_cli_inputs *ia, const char *arg);
void dy_cli_free_inputs(dy_cli_inputs *ia);
/* Read one tensor per feed of p (.npy), in feed order. A file whose dtype
 * is not its feed's is refused naming the input, the file, its dtype and
 * the expected one, as the compiled executable does ("input 'x': x.npy:
 * dtype '<f8', expected '<f4' (f32)"); a narrower integer is widened
 * (dy_dtype_widens_to: an i32 file for an i64 feed). */
dy_status dy_cli_load_inputs(const dy_program *p, const dy_cli_inputs *ia, dy_tensor **t,
                             dy_error *err);
/* A bare argument: the model, then inputs; an unknown option is a usage
 * error of cmd (returns the exit status, 0 to go on). */
int dy_cli_model_or_input(const char *cmd, const char *a, const char **model,
                          dy_cli_inputs *ia);
/* After the arguments: a usage error when no model was given, and the
 * inputs freed on any error. Returns the status (0: go on). */
int dy_cli_args_end(const char *cmd, int rc, const char *model, dy_cli_inputs *ia);
/* dir exists (made when missing) and is a directory. */
dy_status dy_cli_ensure_dir(const char *dir, dy_error *err);

/* ---- cli_progress.c: the progress line of long work ---- */

#define DY_CLI_PROGRESS_GROUPS 16
typedef struct {
  bool on;                 /* printing: stderr is a terminal, no --quiet */
  bool shown;              /* a line is on the terminal now */
  const char *cmd;         /* the subcommand, in the line */
  double t_start, t_phase, t_printed;  /* seconds (monotonic) */
  char phase[96];          /* the phase last printed */
  int current;             /* the group being timed, or -1 */
  int n_groups;
  char names[DY_CLI_PROGRESS_GROUPS][32];  /* "import", "pass", "cc", ... */
  double secs[DY_CLI_PROGRESS_GROUPS];     /* seconds in each */
} dy_cli_progress;
/* Start timing; print only when stderr is a terminal and not quiet. */
void dy_cli_progress_init(dy_cli_progress *pr, const char *cmd, bool quiet);
/* A dy_progress_fn (ctx: the dy_cli_progress): phase starts or moves on. */
void dy_cli_progress_step(void *ctx, const char *phase, int64_t done, int64_t total);
/* The work is over: the last phase timed, the line cleared. */
void dy_cli_progress_done(dy_cli_progress *pr);
/* One line: "time: import 0.004 s, pass 0.120 s, ..., total 1.234 s". */
void dy_cli_progress_times(const dy_cli_progress *pr, FILE *f);

/* ---- cli_util.c: errors and option values (the bottom) ---- */

extern const char dy_cli_prog[];  /* "dy2stc", the first word of every message */
/* Print "dy2stc: <err>" on stderr; returns exit status 1. */
int dy_cli_fail(const dy_error *err);
/* Print "dy2stc CMD: <fmt with arg> (see 'dy2stc CMD --help')" on stderr;
 * returns exit status 2. */
int dy_cli_usage(const char *cmd, const char *fmt, const char *arg);
/* s is a whole decimal integer in [lo, hi] (positive: in [1, INT64_MAX]). */
bool dy_cli_range(const char *s, int64_t lo, int64_t hi, int64_t *out);
bool dy_cli_positive(const char *s, int64_t *out);
/* Parse a number >= 0; false if s is not one. */
bool dy_cli_double(const char *s, double *out);
/* A finite number >= 0 that a float holds (at most FLT_MAX, 3.4e38: a
 * compiled step takes it as a float); false for inf, nan, 1e39, ... */
bool dy_cli_f32_number(const char *s, double *out);
/* "--help" or "-h". */
bool dy_cli_is_help(const char *a);
/* An output model path without its ".dymodel" (OUT and OUT.dymodel both
 * name OUT.dymodel + OUT.dyparams). */
void dy_cli_model_stem(const char *out, char *stem, size_t n);

#endif
