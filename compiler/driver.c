/* driver.c - writing sources and invoking the C compiler.
 *
 * dy_build_executable writes NAME.c, NAME.h and main.c (and, when the
 * weights are separate, NAME_weights.s and the NAME_weights.bin it
 * includes: codegen/emit_weights.c) into a private directory from mkdtemp,
 * runs `$CC -std=c11 -O3 <target flags> <cflags> -o OUT.tmp.<pid> main.c
 * NAME.c [NAME_weights.s] -lm` beside the requested output, renames
 * the result into place and removes the directory: the executable appears
 * whole or not at all. The compiler's own diagnostics go to stderr as it
 * prints them.
 *
 * -O3 rather than -O2: the GEMM, convolution, pooling, softmax and
 * normalisation kernels are explicit SIMD and fast at -O2, but gcc
 * vectorises the plain elementwise loops (the branch-free math of
 * emit_mathlib.c) only from -O3; --cflags -O2 restores -O2.
 *
 * --target picks the instruction set, and with it the SIMD path of the
 * generated code (codegen/emit_simd.c reads the compiler's macros):
 *
 *   native      -march=native: whatever this machine has (the default)
 *   generic     no -march: the compiler's baseline (SSE2 on x86-64)
 *   x86-64-v2   -march=x86-64-v2 (SSE4.2: the SSE2 path)
 *   x86-64-v3   -march=x86-64-v3 (AVX2 + FMA)
 *   x86-64-v4   -march=x86-64-v4 (AVX-512)
 *   aarch64     -march=armv8-a (NEON); on another host the compiler is
 *               aarch64-linux-gnu-gcc, linking -static, and the executable
 *               runs under qemu-aarch64
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dy_driver.h"

extern char **environ;

void dy_safe_file_name(const char *name, char *buf, size_t n) {
  size_t k = 0;
  for (; name[k] && k + 1 < n; k++) {
    char c = name[k];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || (c == '.' && k > 0);
    buf[k] = ok ? c : '_';
  }
  buf[k] = 0;
  if (k == 0 && n > 1)
    snprintf(buf, n, "_");
}

void dy_c_identifier(const char *s, char *buf, size_t n) {
  size_t k = 0;
  if (n < 2)
    return;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    buf[k++] = '_';
  for (; *s && k + 1 < n; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    buf[k++] = ok ? c : '_';
  }
  buf[k] = 0;
}

/* Write n files whole or not at all: each to a temporary beside it, then,
 * when every one is written, renamed into place. */
static dy_status write_files(const char *const *paths, const char *const *texts,
                             const size_t *lens, int n, dy_error *err) {
  char tmp[8][4200];
  dy_status s = DY_OK;
  int made = 0;
  for (; made < n && !s; made++) {
    snprintf(tmp[made], sizeof tmp[made], "%s.tmp.%ld", paths[made], (long)getpid());
    FILE *f = fopen(tmp[made], "wb");
    if (!f) {
      s = dy_error_set(err, DY_STATUS_IO, "%s: cannot create: %s", paths[made],
                       strerror(errno));
      break;
    }
    bool bad = lens[made] && fwrite(texts[made], 1, lens[made], f) != lens[made];
    bad |= fflush(f) != 0;
    bad |= fclose(f) != 0;
    if (bad)
      s = dy_error_set(err, DY_STATUS_IO, "%s: cannot write: %s", paths[made],
                       strerror(errno));
  }
  for (int i = 0; i < made && !s; i++)
    if (rename(tmp[i], paths[i]) != 0)
      s = dy_error_set(err, DY_STATUS_IO, "%s: cannot write: %s", paths[i], strerror(errno));
  for (int i = 0; i < made; i++)
    remove(tmp[i]); /* those renamed are gone already */
  return s;
}

dy_status dy_write_sources(const dy_codegen_output *out, const char *out_base,
                           dy_error *err) {
  char c_path[4096], h_path[4096], w_path[4200];
  snprintf(c_path, sizeof c_path, "%s.c", out_base);
  snprintf(h_path, sizeof h_path, "%s.h", out_base);
  snprintf(w_path, sizeof w_path, "%s_weights.c", out_base);
  char *weights = out->weights ? dy_codegen_weights_c(out) : NULL;
  if (out->weights && !weights)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  const char *paths[] = {h_path, c_path, w_path};
  const char *texts[] = {out->header, out->source, weights};
  size_t lens[] = {strlen(out->header), strlen(out->source), weights ? strlen(weights) : 0};
  dy_status s = write_files(paths, texts, lens, weights ? 3 : 2, err);
  free(weights);
  return s;
}

dy_status dy_run_command(char *const argv[], dy_error *err) {
  return dy_run_command_to(argv, NULL, err);
}

dy_status dy_run_command_to(char *const argv[], const char *stdout_path, dy_error *err) {
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdout_path)
    posix_spawn_file_actions_addopen(&fa, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return dy_error_set(err, DY_STATUS_IO, "cannot run '%s': %s", argv[0],
                        strerror(rc));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return dy_error_set(err, DY_STATUS_IO, "waiting for '%s': %s", argv[0],
                          strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return dy_error_set(err, DY_STATUS_IO, "'%s' failed (%s %d)", argv[0],
                        WIFEXITED(status) ? "exit status" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  return DY_OK;
}

const char dy_target_names[] = "native|generic|x86-64-v2|x86-64-v3|x86-64-v4|aarch64";

dy_status dy_target_flags(const char *target, const char **flags, const char **cc_default,
                          const char **runner, dy_error *err) {
  static const struct {
    const char *name, *flags;
  } targets[] = {
      {"native", "-march=native"},       {"generic", ""},
      {"x86-64-v2", "-march=x86-64-v2"}, {"x86-64-v3", "-march=x86-64-v3"},
      {"x86-64-v4", "-march=x86-64-v4"}, {"aarch64", "-march=armv8-a"},
  };
#if defined(__aarch64__)
  const bool cross_arm = false;
#else
  const bool cross_arm = true;
#endif
  if (!target)
    target = "native";
  if (cc_default)
    *cc_default = NULL;
  if (runner)
    *runner = NULL;
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    if (strcmp(target, targets[i].name) != 0)
      continue;
    *flags = targets[i].flags;
    if (strcmp(target, "aarch64") == 0 && cross_arm) {
      *flags = "-march=armv8-a -static";
      if (cc_default)
        *cc_default = "aarch64-linux-gnu-gcc";
      if (runner)
        *runner = "qemu-aarch64";
    }
    return DY_OK;
  }
  return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "unknown target '%s' (one of %s)",
                      target, dy_target_names);
}

static void remove_dir(const char *dir, const char *const *files, int n) {
  char path[4200];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    remove(path);
  }
  rmdir(dir);
}

dy_status dy_build_executable(const dy_codegen_output *out,
                              const dy_compile_options *o, const char *exe_path,
                              dy_error *err) {
  if (!out->main_c)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "no main.c was generated (emit_main is off)");
  const char *tmpdir = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/dy2stc.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(dir))
    return dy_error_set(err, DY_STATUS_IO, "cannot create a temporary directory: %s",
                        strerror(errno));
  char hname[300], cname[300], sname[300], bname[300];
  snprintf(hname, sizeof hname, "%s.h", o->name);
  snprintf(cname, sizeof cname, "%s.c", o->name);
  snprintf(sname, sizeof sname, "%s_weights.s", o->name);
  snprintf(bname, sizeof bname, "%s_weights.bin", o->name);
  const char *files[] = {hname, cname, "main.c", sname, bname};
  int n_files = out->weights ? 5 : 3;
  char path[4400], model_c[4400], main_c[4400], weights_s[4400], tmp_exe[4200];
  snprintf(model_c, sizeof model_c, "%s/%s", dir, cname);
  snprintf(main_c, sizeof main_c, "%s/main.c", dir);
  snprintf(weights_s, sizeof weights_s, "%s/%s", dir, sname);
  /* the weights as a binary file the assembler includes (emit_weights.c) */
  snprintf(path, sizeof path, "%s/%s", dir, bname);
  char *asm_text = out->weights ? dy_codegen_weights_asm(o->name, path, out->n_weight_words) : NULL;
  const char *texts[] = {out->header, out->source, out->main_c, asm_text,
                         (const char *)out->weights};
  size_t lens[] = {strlen(out->header), strlen(out->source), strlen(out->main_c),
                   asm_text ? strlen(asm_text) : 0, (size_t)out->n_weight_words * 4};
  dy_status s = DY_OK;
  if (out->weights && !asm_text)
    s = dy_error_set(err, DY_STATUS_IO, "%s: the weights' path cannot go into an assembler file",
                     path);
  for (int i = 0; i < n_files && !s; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    s = dy_write_file_atomic(path, texts[i], lens[i], err);
  }
  free(asm_text);
  snprintf(tmp_exe, sizeof tmp_exe, "%s.tmp.%ld", exe_path, (long)getpid());

  /* argv: cc -std=c11 -O3 [target flags...] [cflags...] -o tmp main.c
   * model.c -lm */
  const char *tflags = "", *tcc = NULL;
  if (!s)
    s = dy_target_flags(o->target, &tflags, &tcc, NULL, err);
  const char *cc = o->cc ? o->cc : tcc ? tcc : getenv("CC");
  if (!cc || !*cc)
    cc = "cc";
  const char *tpf = o->threads > 1 ? " -pthread" : "";
  char *flags = malloc(strlen(tflags) + strlen(tpf) + strlen(o->cflags ? o->cflags : "") + 2);
  if (flags)
    sprintf(flags, "%s%s %s", tflags, tpf, o->cflags ? o->cflags : "");
  char *argv[64];
  int argc = 0;
  argv[argc++] = (char *)cc;
  argv[argc++] = "-std=c11";
  argv[argc++] = "-O3";
  for (char *t = flags ? strtok(flags, " \t") : NULL; t && argc < 52; t = strtok(NULL, " \t"))
    argv[argc++] = t;
  argv[argc++] = "-o";
  argv[argc++] = tmp_exe;
  argv[argc++] = main_c;
  argv[argc++] = model_c;
  if (out->weights)
    argv[argc++] = weights_s;
  argv[argc++] = "-lm";
  argv[argc] = NULL;
  if (!s && (s = dy_run_command(argv, err)))
    dy_error_prefix(err, "building %s", exe_path);
  if (!s && rename(tmp_exe, exe_path) != 0)
    s = dy_error_set(err, DY_STATUS_IO, "%s: cannot write: %s", exe_path,
                     strerror(errno));
  if (s)
    remove(tmp_exe);
  free(flags);
  remove_dir(dir, files, n_files);
  return s;
}
