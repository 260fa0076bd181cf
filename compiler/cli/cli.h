/* cli.h - what the dy2stc command line's files (main.c, bench.c) share.
 * Not part of any library: only the CLI prints and picks exit statuses. */
#ifndef DY_CLI_H
#define DY_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "dy_compiler.h"

/* main.c: print "dy2stc: <err>" on stderr; returns exit status 1. */
int dy_cli_fail(const dy_error *err);
/* main.c: print "dy2stc CMD: <fmt with arg> (see 'dy2stc CMD --help')" on
 * stderr; returns exit status 2. */
int dy_cli_usage(const char *cmd, const char *fmt, const char *arg);
/* main.c: parse a positive integer option value; false if s is not one. */
bool dy_cli_positive(const char *s, int64_t *out);
/* s is a whole decimal integer in [lo, hi]. */
bool dy_cli_range(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* main.c: parse a number >= 0; false if s is not one. */
bool dy_cli_double(const char *s, double *out);
/* main.c: a pass option (-O0..2, --verify-each, --print-before/after[=P],
 * --print-after-all/-change, --dump-dir D, --disable-pass P[,P...]) at
 * argv[*i]: 1 consumed (*i moved past a value), 0 not one, -1 an error
 * already printed. */
int dy_cli_pass_option(const char *cmd, int argc, char **argv, int *i, dy_pass_options *po);
/* main.c: an output model path without its ".dymodel" (OUT and
 * OUT.dymodel both name OUT.dymodel + OUT.dyparams). */
void dy_cli_model_stem(const char *out, char *stem, size_t n);
/* main.c: "--help" or "-h". */
bool dy_cli_is_help(const char *a);

/* Model inputs given on the command line as NAME=FILE or positionally. */
typedef struct {
  int n;
  const char *name[DY_MAX_FEEDS];   /* NULL when positional */
  const char *file[DY_MAX_FEEDS];
} dy_cli_inputs;

/* main.c: record one --input argument; false when there are too many. */
bool dy_cli_add_input(dy_cli_inputs *ia, const char *arg);
void dy_cli_free_inputs(dy_cli_inputs *ia);
/* main.c: *t read from an .npy of '<i4' (i32) made i64 in place (a new
 * tensor), as files of labels and indices often are; else unchanged. */
dy_status dy_cli_widen_i32(dy_tensor **t, dy_error *err);
/* main.c: read one tensor per feed of p (.npy), in feed order; an i32
 * file for an i64 feed is widened. */
dy_status dy_cli_load_inputs(const dy_program *p, const dy_cli_inputs *ia,
                             dy_tensor **t, dy_error *err);
/* main.c: a bare argument: the model, then inputs; an unknown option is a
 * usage error of cmd (returns the exit status, 0 to go on). */
int dy_cli_model_or_input(const char *cmd, const char *a, const char **model,
                          dy_cli_inputs *ia);
/* main.c: after the arguments: a usage error when no model was given, and
 * the inputs freed on any error. Returns the status (0: go on). */
int dy_cli_args_end(const char *cmd, int rc, const char *model, dy_cli_inputs *ia);

/* The training options `dy2stc train` and `dy2stc compile --train` share
 * (train.c): loss, optimizer, rate and schedule, batch, the output. */
typedef struct {
  dy_loss_spec loss;
  dy_optimizer_spec opt;
  dy_lr_schedule sched;
  int64_t batch;            /* 0 until given: 32 */
  const char *output;       /* --output NAME, or NULL: the only one */
  bool has_loss, has_opt, has_lr, has_wd;
} dy_cli_train_spec;
extern const char dy_cli_train_help[];  /* their lines of --help */
/* argv[*i] (and its value, advancing *i) when it is one of them: 1; 0 when
 * it is not; -1 after printing a usage error of subcommand cmd. */
int dy_cli_train_option(const char *cmd, int argc, char **argv, int *i,
                        dy_cli_train_spec *t);
/* After the arguments: a usage error (its exit status) when --loss or
 * --optimizer is missing or they conflict; else the defaults, 0. */
int dy_cli_train_finish(const char *cmd, dy_cli_train_spec *t);
/* The training Program of the model t, as dy2stc train makes it: train
 * semantics, then dy_program_make_training on the chosen output (soft
 * labels: f32 cross-entropy targets). */
dy_status dy_cli_make_training(dy_program *t, dy_cli_train_spec *ts, bool soft_labels,
                               dy_error *err);

/* train.c: `dy2stc train` (returns the exit status). */
int dy_cli_train(int argc, char **argv);
/* quantize_cli.c: `dy2stc quantize`. */
int dy_cli_quantize(int argc, char **argv);

/* bench.c: `dy2stc bench` (returns the exit status). */
int dy_cli_bench(int argc, char **argv);

#endif
