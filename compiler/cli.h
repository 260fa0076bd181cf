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

/* bench.c: `dy2stc bench` (returns the exit status). */
int dy_cli_bench(int argc, char **argv);

#endif
