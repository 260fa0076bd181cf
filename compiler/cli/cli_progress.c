/* cli_progress.c - the progress line of long work (cli.h): compile,
 * quantize, train and bench hand dy_cli_progress to the libraries as
 * their dy_progress_fn (the libraries never print) and call it for their
 * own steps. On a terminal (stderr) it keeps one line up to date with \r:
 *
 *   dy2stc compile: pass:fuse-conv 9/18  0.4 s
 *
 * at most ten times a second (and on every change of phase), cleared at
 * the end; nothing when stderr is not a terminal or with --quiet. Either
 * way it times each phase group (the phase up to its first ':' or ' ':
 * "pass", "cc", "epoch"), which --report prints (dy_cli_progress_times).
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void dy_cli_progress_init(dy_cli_progress *pr, const char *cmd, bool quiet) {
  memset(pr, 0, sizeof *pr);
  pr->on = !quiet && isatty(2);
  pr->cmd = cmd;
  pr->t_start = pr->t_phase = now_s();
  pr->current = -1;
}

/* The time since the current group began goes to its total. */
static void close_group(dy_cli_progress *pr, double t) {
  if (pr->current >= 0)
    pr->secs[pr->current] += t - pr->t_phase;
  pr->t_phase = t;
}

/* The group of phase (its text up to ':' or ' '), added when new. */
static int group_of(dy_cli_progress *pr, const char *phase) {
  char g[sizeof pr->names[0]];
  size_t k = strcspn(phase, ": ");
  if (k >= sizeof g)
    k = sizeof g - 1;
  memcpy(g, phase, k);
  g[k] = '\0';
  for (int i = 0; i < pr->n_groups; i++)
    if (strcmp(pr->names[i], g) == 0)
      return i;
  if (pr->n_groups == DY_CLI_PROGRESS_GROUPS)
    return DY_CLI_PROGRESS_GROUPS - 1; /* the last one takes the rest */
  memcpy(pr->names[pr->n_groups], g, k + 1);
  return pr->n_groups++;
}

void dy_cli_progress_step(void *ctx, const char *phase, int64_t done, int64_t total) {
  dy_cli_progress *pr = ctx;
  double t = now_s();
  int g = group_of(pr, phase);
  if (g != pr->current) {
    close_group(pr, t);
    pr->current = g;
  }
  bool changed = strncmp(pr->phase, phase, sizeof pr->phase - 1) != 0;
  if (!pr->on || (!changed && t - pr->t_printed < 0.1))
    return;
  snprintf(pr->phase, sizeof pr->phase, "%s", phase);
  pr->t_printed = t;
  if (total > 0)
    fprintf(stderr, "\r%s %s: %s %lld/%lld  %.1f s\033[K", dy_cli_prog, pr->cmd, phase,
            (long long)done, (long long)total, t - pr->t_start);
  else
    fprintf(stderr, "\r%s %s: %s  %.1f s\033[K", dy_cli_prog, pr->cmd, phase,
            t - pr->t_start);
  fflush(stderr);
  pr->shown = true;
}

void dy_cli_progress_done(dy_cli_progress *pr) {
  close_group(pr, now_s());
  pr->current = -1;
  if (pr->shown) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pr->shown = false;
  }
  pr->phase[0] = '\0';
}

void dy_cli_progress_times(const dy_cli_progress *pr, FILE *f) {
  double total = 0;
  fputs("time:", f);
  for (int i = 0; i < pr->n_groups; i++) {
    fprintf(f, "%s %s %.3f s", i ? "," : "", pr->names[i], pr->secs[i]);
    total += pr->secs[i];
  }
  fprintf(f, "%s total %.3f s\n", pr->n_groups ? "," : "", total);
}
