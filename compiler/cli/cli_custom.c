/* cli_custom.c - `--custom-op NAME=FILE.c` (run, check, show, compile):
 * the user's kernel and shape rule of a custom op (runtime/dy_custom.h
 * states the two functions FILE.c defines).
 *
 * In process (import, `run`) the two run in a helper process: FILE.c
 * compiled with a small main (host_main below) by $CC into a temporary
 * directory, started once with pipes, and registered (dy_custom_register)
 * with functions that send it each call: the inputs' dtypes, ranks,
 * shapes (and data, for a run) and read back the answer. Why not dlopen:
 * a shared object needs -fPIC and the host's dlopen support (static
 * builds, musl, sanitizers differ), its symbols meet libdy2stc's, and a
 * crash or an exit in the user's code would take dy2stc down; a helper
 * process needs only the C compiler `compile` already runs, and a kernel
 * that crashes is an error naming the op. `compile` also adds FILE.c to
 * the executable's sources, where the generated kernel calls
 * dy_custom_NAME_run directly.
 */
#define _DEFAULT_SOURCE /* realpath, fdopen */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dy_custom.h"

/* The helper's main: requests on stdin, answers on stdout. A request is
 * int32 kind (1 shape, 2 run), int32 n_in, then per input int32 dtype,
 * int32 rank, int64 shape[8] (and for a run int64 bytes, the bytes); a
 * run adds int32 out_rank, int64 out_shape[8], int64 out_bytes. The answer
 * to a shape is int32 status, dtype, rank, int64 shape[8]; to a run the
 * output's bytes. */
static const char host_main[] =
    "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "#include DY_CUSTOM_FILE\n"
    "static int rd(void *p, size_t n) { return n == 0 || fread(p, 1, n, stdin) == n; }\n"
    "int main(void) {\n"
    "  int32_t h[2];\n"
    "  while (rd(h, sizeof h)) {\n"
    "    int n = h[1], dt[64], rk[64];\n"
    "    int64_t sh[64][8];\n"
    "    const int64_t *sp[64];\n"
    "    void *data[64] = {0};\n"
    "    if (n < 1 || n > 64)\n      return 2;\n"
    "    for (int i = 0; i < n; i++) {\n"
    "      int32_t a[2];\n"
    "      int64_t nb = 0;\n"
    "      if (!rd(a, sizeof a) || !rd(sh[i], sizeof sh[i]))\n        return 2;\n"
    "      dt[i] = a[0], rk[i] = a[1], sp[i] = sh[i];\n"
    "      if (h[0] == 2 && (!rd(&nb, 8) || !(data[i] = malloc(nb ? (size_t)nb : 1)) ||\n"
    "                        !rd(data[i], (size_t)nb)))\n        return 2;\n"
    "    }\n"
    "    if (h[0] == 1) {\n"
    "      int od = -1, orank = -1;\n"
    "      int64_t os[8] = {0};\n"
    "      int32_t r[3];\n"
    "      r[0] = DY_CUSTOM_SHAPE(n, dt, rk, sp, &od, &orank, os);\n"
    "      r[1] = od, r[2] = orank;\n"
    "      fwrite(r, sizeof r, 1, stdout);\n      fwrite(os, sizeof os, 1, stdout);\n"
    "    } else {\n"
    "      int32_t orank;\n      int64_t os[8], onb;\n"
    "      if (!rd(&orank, 4) || !rd(os, sizeof os) || !rd(&onb, 8))\n        return 2;\n"
    "      void *out = calloc(onb ? (size_t)onb : 1, 1);\n"
    "      if (!out)\n        return 2;\n"
    "      DY_CUSTOM_RUN(n, (const void *const *)data, rk, sp, out, orank, os);\n"
    "      fwrite(out, 1, (size_t)onb, stdout);\n      free(out);\n"
    "    }\n"
    "    for (int i = 0; i < n; i++)\n      free(data[i]);\n"
    "    fflush(stdout);\n"
    "  }\n"
    "  return 0;\n"
    "}\n";

typedef struct {
  char name[64];
  char file[4096];
  FILE *to, *from; /* the helper's stdin and stdout */
} host;

static host hosts[DY_CUSTOM_MAX];
static int n_hosts;
static char sources[DY_CUSTOM_MAX * 4100 + 1]; /* " FILE.c ..." for compile */

static bool send_inputs(host *h, int kind, int n_in, const int *dtypes, const int *ranks,
                        const int64_t *const *shapes, const void *const *data) {
  int32_t head[2] = {kind, n_in};
  bool ok = fwrite(head, sizeof head, 1, h->to) == 1;
  for (int i = 0; i < n_in && ok; i++) {
    int32_t a[2] = {dtypes[i], ranks[i]};
    int64_t sh[8] = {0}, nb = 1;
    for (int d = 0; d < ranks[i] && d < 8; d++)
      nb *= (sh[d] = shapes[i][d]);
    nb *= (int64_t)dy_dtype_size((dy_dtype)dtypes[i]);
    ok = fwrite(a, sizeof a, 1, h->to) == 1 && fwrite(sh, sizeof sh, 1, h->to) == 1;
    if (ok && data)
      ok = fwrite(&nb, 8, 1, h->to) == 1 && (nb == 0 || fwrite(data[i], (size_t)nb, 1, h->to) == 1);
  }
  return ok;
}

static int lost(host *h, char *msg, size_t n) {
  snprintf(msg, n, "its helper process (built from %s) stopped answering (a crash in the "
           "user's code?)", h->file);
  return 1;
}

static int host_shape(void *ctx, int n_in, const int *dtypes, const int *ranks,
                      const int64_t *const *shapes, int *out_dtype, int *out_rank,
                      int64_t *out_shape, char *msg, size_t n) {
  host *h = ctx;
  int32_t r[3];
  int64_t os[8];
  if (!send_inputs(h, 1, n_in, dtypes, ranks, shapes, NULL) || fflush(h->to) ||
      fread(r, sizeof r, 1, h->from) != 1 || fread(os, sizeof os, 1, h->from) != 1)
    return lost(h, msg, n);
  if (r[0]) {
    snprintf(msg, n, "dy_custom_%s_shape returned %d", h->name, (int)r[0]);
    return 1;
  }
  *out_dtype = r[1];
  *out_rank = r[2];
  for (int d = 0; d < 8 && d < DY_MAX_DIMS; d++)
    out_shape[d] = os[d];
  return 0;
}

static int host_run(void *ctx, int n_in, const void *const *in, const int *dtypes,
                    const int *ranks, const int64_t *const *shapes, void *out, int out_dtype,
                    int out_rank, const int64_t *out_shape, char *msg, size_t n) {
  host *h = ctx;
  int32_t orank = out_rank;
  int64_t os[8] = {0}, nb = (int64_t)dy_dtype_size((dy_dtype)out_dtype);
  for (int d = 0; d < out_rank && d < 8; d++)
    nb *= (os[d] = out_shape[d]);
  if (!send_inputs(h, 2, n_in, dtypes, ranks, shapes, in) || fwrite(&orank, 4, 1, h->to) != 1 ||
      fwrite(os, sizeof os, 1, h->to) != 1 || fwrite(&nb, 8, 1, h->to) != 1 || fflush(h->to) ||
      (nb > 0 && fread(out, (size_t)nb, 1, h->from) != 1))
    return lost(h, msg, n);
  return 0;
}

/* Build FILE.c's helper and start it. */
static dy_status start_host(host *h, dy_error *err) {
  char dir[4096], src[4200], exe[4200], def[4300], shp[128], run[128];
  dy_status s = dy_temp_dir_make("dy2stc-custom", dir, sizeof dir, err);
  if (s)
    return s;
  snprintf(src, sizeof src, "%s/host.c", dir);
  snprintf(exe, sizeof exe, "%s/host", dir);
  if ((s = dy_write_file_atomic(src, (const uint8_t *)host_main, sizeof host_main - 1, err)))
    return s;
  snprintf(def, sizeof def, "-DDY_CUSTOM_FILE=\"%s\"", h->file);
  snprintf(shp, sizeof shp, "-DDY_CUSTOM_SHAPE=dy_custom_%s_shape", h->name);
  snprintf(run, sizeof run, "-DDY_CUSTOM_RUN=dy_custom_%s_run", h->name);
  const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
  char *argv[] = {(char *)cc, "-std=c11", "-O2", def, shp, run, "-o", exe, src, "-lm", NULL};
  if ((s = dy_run_command(argv, err)))
    return dy_error_prefix(err, "--custom-op %s=%s: building its helper", h->name, h->file);
  int in[2], out[2];
  if (pipe(in) || pipe(out))
    return dy_error_set(err, DY_STATUS_IO, "--custom-op %s: pipe: %s", h->name, strerror(errno));
  pid_t pid = fork();
  if (pid < 0)
    return dy_error_set(err, DY_STATUS_IO, "--custom-op %s: fork: %s", h->name, strerror(errno));
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execl(exe, exe, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  signal(SIGPIPE, SIG_IGN); /* a helper that died: a write error, then lost() */
  h->to = fdopen(in[1], "wb");
  h->from = fdopen(out[0], "rb");
  if (!h->to || !h->from)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

dy_status dy_cli_custom_op(const char *spec, dy_error *err) {
  const char *eq = strchr(spec, '=');
  size_t nl = eq ? (size_t)(eq - spec) : 0;
  if (!eq || nl == 0 || nl >= sizeof hosts[0].name || !eq[1])
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--custom-op needs NAME=FILE.c, not '%s'", spec);
  for (size_t i = 0; i < nl; i++)
    if (!(spec[i] == '_' || (spec[i] >= 'a' && spec[i] <= 'z') ||
          (spec[i] >= 'A' && spec[i] <= 'Z') || (spec[i] >= '0' && spec[i] <= '9')))
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "--custom-op %s: the name must be a C identifier", spec);
  if (n_hosts == DY_CUSTOM_MAX)
    return dy_error_set(err, DY_STATUS_LIMIT, "at most %d --custom-op", DY_CUSTOM_MAX);
  host *h = &hosts[n_hosts];
  memcpy(h->name, spec, nl);
  h->name[nl] = '\0';
  char *abs = realpath(eq + 1, NULL);
  if (!abs)
    return dy_error_set(err, DY_STATUS_IO, "--custom-op %s: %s: %s", h->name, eq + 1,
                        strerror(errno));
  bool fits = strlen(abs) < sizeof h->file && !strpbrk(abs, " \t\"\\");
  snprintf(h->file, sizeof h->file, "%s", abs);
  free(abs);
  if (!fits)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--custom-op %s: the path may not hold spaces, quotes or backslashes",
                        h->name);
  dy_status s = start_host(h, err);
  if (s)
    return s;
  n_hosts++;
  size_t k = strlen(sources);
  snprintf(sources + k, sizeof sources - k, " %s", h->file);
  return dy_custom_register(&(dy_custom_op){.name = h->name, .shape = host_shape,
                                            .run = host_run, .ctx = h}, err);
}

const char *dy_cli_custom_sources(const char *cflags) {
  static char buf[sizeof sources + 4096];
  static const char *base; /* the user's --cflags under buf */
  if (!sources[0])
    return cflags;
  if (cflags != buf)
    base = cflags;
  snprintf(buf, sizeof buf, "%s%s", base ? base : "", sources);
  return buf;
}
