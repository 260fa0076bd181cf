/* cli_util.c - the bottom of the dy2stc command line (cli.h): the one-line
 * error and the usage error every subcommand ends with, and the parsing of
 * plain option values. Calls nothing of the CLI's own.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char dy_cli_prog[] = "dy2stc";

/* Print the error as one line; exit status 1. */
int dy_cli_fail(const dy_error *err) {
  char line[1024];
  dy_error_format(err, line, sizeof line);
  fprintf(stderr, "%s: %s\n", dy_cli_prog, line);
  return 1;
}

/* Print a usage error of subcommand cmd; exit status 2. */
int dy_cli_usage(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "%s %s: ", dy_cli_prog, cmd);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see '%s %s --help')\n", dy_cli_prog, cmd);
  return 2;
}

/* Parse an integer option value in [lo, hi]. */
bool dy_cli_range(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || !*s || *end || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

bool dy_cli_positive(const char *s, int64_t *out) {
  return dy_cli_range(s, 1, INT64_MAX, out);
}

bool dy_cli_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || !*s || *end || !(v >= 0))
    return false;
  *out = v;
  return true;
}

bool dy_cli_f32_number(const char *s, double *out) {
  double v;
  if (!dy_cli_double(s, &v) || !isfinite(v) || v > FLT_MAX)
    return false;
  *out = v;
  return true;
}

bool dy_cli_is_help(const char *a) {
  return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

void dy_cli_model_stem(const char *out, char *stem, size_t n) {
  snprintf(stem, n, "%s", out);
  size_t len = strlen(stem);
  if (len > 8 && strcmp(stem + len - 8, ".dymodel") == 0)
    stem[len - 8] = '\0';
}
