/* driver.c - writing sources and invoking the C compiler.
 *
 * dy_build_executable writes NAME.c, NAME.h and main.c (and, when the
 * weights are separate, NAME_weights.s and the NAME_weights.bin it
 * includes: codegen/program/weights_file.c) into a private directory
 * (dy_temp_dir_make), runs `$CC -std=c11 -O3 <target flags> <cflags>
 * -o DIR/a.out main.c NAME.c [NAME_weights.s] -lm` there, writes the result beside
 * the requested output through an exclusive temporary, renames it into
 * place and removes the directory on every path (and, through the CLI's
 * handler, on SIGINT/SIGTERM): the executable appears whole or not at all. The compiler's own diagnostics go to stderr as it
 * prints them. dy_build_shared_library does the same without main.c and
 * with -shared -fPIC (the model loaded in-process: the Python package).
 *
 * -O3 rather than -O2: the GEMM, convolution, pooling, softmax and
 * normalisation kernels are explicit SIMD and fast at -O2, but gcc
 * vectorises the plain elementwise loops (the branch-free math of
 * emit_mathlib.c) only from -O3; --cflags -O2 restores -O2.
 *
 * --target picks the instruction set, and with it the SIMD path of the
 * generated code (codegen/kernels/emit_simd.c reads the compiler's macros):
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

dy_status dy_output_path(const dy_program *p, int i, const char *dir, char *buf, size_t n,
                         dy_error *err) {
  enum { MAX = 1024 };
  char(*base)[MAX + 16] = malloc(sizeof *base * (size_t)(i + 1));
  if (!base)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_status s = DY_OK;
  /* the generated main.c's output_file_name, step for step */
  for (int j = 0; j <= i && !s; j++) {
    const char *name = p->vars[p->fetches[j]]->name;
    if (strlen(name) >= MAX) {
      s = dy_error_set(err, DY_STATUS_IO, "output %d: its name (%zu bytes) is too long for a "
                       "file name", j, strlen(name));
      break;
    }
    dy_safe_file_name(name, base[j], MAX);
    for (int k = 0; k < j; k++)
      if (strcmp(base[k], base[j]) == 0) {
        snprintf(base[j] + strlen(base[j]), 16, "_%d", j);
        break;
      }
  }
  if (!s) {
    int w = snprintf(buf, n, "%s/%s.npy", dir, base[i]);
    if (w < 0 || (size_t)w >= n || w > 4096)
      s = dy_error_set(err, DY_STATUS_IO, "output '%s': the path %.200s/... is too long",
                       base[i], dir);
  }
  free(base);
  return s;
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

dy_status dy_write_sources(const dy_codegen_output *out, const char *out_base,
                           dy_error *err) {
  char c_path[4096], h_path[4096], w_path[4096];
  if (snprintf(c_path, sizeof c_path, "%s.c", out_base) >= (int)sizeof c_path ||
      snprintf(h_path, sizeof h_path, "%s.h", out_base) >= (int)sizeof h_path ||
      snprintf(w_path, sizeof w_path, "%s_weights.c", out_base) >= (int)sizeof w_path)
    return dy_error_set(err, DY_STATUS_IO, "%.200s...: the output path is too long", out_base);
  char *weights = out->weights ? dy_codegen_weights_c(out) : NULL;
  if (out->weights && !weights)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* every temporary first, then the renames: a failure leaves the old
   * files */
  const char *paths[3] = {h_path, c_path, w_path};
  const void *bufs[3] = {out->header, out->source, weights};
  size_t lens[3] = {strlen(out->header), strlen(out->source), weights ? strlen(weights) : 0};
  dy_status s = dy_write_files_atomic(weights ? 3 : 2, paths, bufs, lens, err);
  free(weights);
  return s;
}

dy_status dy_run_command(char *const argv[], dy_error *err) {
  return dy_run_command_to(argv, NULL, err);
}

static dy_status run_command(char *const argv[], const char *stdout_path, bool quiet,
                             dy_error *err) {
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdout_path)
    posix_spawn_file_actions_addopen(&fa, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (quiet) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
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

dy_status dy_run_command_to(char *const argv[], const char *stdout_path, dy_error *err) {
  return run_command(argv, stdout_path, false, err);
}

dy_status dy_run_command_quiet(char *const argv[], dy_error *err) {
  return run_command(argv, NULL, true, err);
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

/* ---- private temporary directories ---- */

enum { MAX_TEMP_DIRS = 16 };
static char temp_dirs[MAX_TEMP_DIRS][4096];
static volatile sig_atomic_t temp_used[MAX_TEMP_DIRS];

dy_status dy_temp_dir_make(const char *prefix, char *dir, size_t n, dy_error *err) {
  const char *tmpdir = getenv("TMPDIR");
  int k = snprintf(dir, n, "%s/%s.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp", prefix);
  if (k < 0 || (size_t)k >= n || (size_t)k >= sizeof temp_dirs[0])
    return dy_error_set(err, DY_STATUS_IO, "$TMPDIR is too long for a temporary directory");
  int slot = 0;
  while (slot < MAX_TEMP_DIRS && temp_used[slot])
    slot++;
  if (slot == MAX_TEMP_DIRS)
    return dy_error_set(err, DY_STATUS_LIMIT, "too many temporary directories at once");
  if (!mkdtemp(dir))
    return dy_error_set(err, DY_STATUS_IO, "cannot create a temporary directory: %s",
                        strerror(errno));
  memcpy(temp_dirs[slot], dir, (size_t)k + 1);
  temp_used[slot] = 1;
  return DY_OK;
}

/* Delete dir and everything in it (one level of subdirectories is all the
 * temporaries hold; deeper ones are walked too). */
static void remove_tree(const char *dir, int depth) {
  DIR *d = depth < 8 ? opendir(dir) : NULL;
  if (d) {
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
        continue;
      struct stat st;
      if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
        remove_tree(path, depth + 1);
      else
        unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

void dy_temp_dir_remove(const char *dir) {
  remove_tree(dir, 0);
  for (int i = 0; i < MAX_TEMP_DIRS; i++)
    if (temp_used[i] && strcmp(temp_dirs[i], dir) == 0)
      temp_used[i] = 0;
}

void dy_temp_dirs_remove_all(void) {
  for (int i = 0; i < MAX_TEMP_DIRS; i++)
    if (temp_used[i]) {
      temp_used[i] = 0;
      remove_tree(temp_dirs[i], 0);
    }
}

/* The build of dy_build_executable (shared false: main.c and the model)
 * and dy_build_shared_library (shared true: the model alone, -shared
 * -fPIC, no main.c). */
static dy_status build_impl(const dy_codegen_output *out, const dy_compile_options *o,
                            const char *exe_path, bool shared, dy_error *err) {
  char dir[4096];
  dy_status s = dy_temp_dir_make("dy2stc", dir, sizeof dir, err);
  if (s)
    return s;
  char hname[300], cname[300], sname[300], bname[300];
  snprintf(hname, sizeof hname, "%s.h", o->name);
  snprintf(cname, sizeof cname, "%s.c", o->name);
  snprintf(sname, sizeof sname, "%s_weights.s", o->name);
  snprintf(bname, sizeof bname, "%s_weights.bin", o->name);
  const char *files[] = {hname, cname, "main.c", sname, bname};
  int n_files = out->weights ? 5 : 3;
  bool has_main = !shared; /* files[2]: main.c, written for an executable only */
  char path[4400], model_c[4400], main_c[4400], weights_s[4400], tmp_exe[4400];
  snprintf(model_c, sizeof model_c, "%s/%s", dir, cname);
  snprintf(main_c, sizeof main_c, "%s/main.c", dir);
  snprintf(weights_s, sizeof weights_s, "%s/%s", dir, sname);
  /* the weights as a binary file the assembler includes (emit_weights.c) */
  snprintf(path, sizeof path, "%s/%s", dir, bname);
  char *asm_text = out->weights ? dy_codegen_weights_asm(o->name, path, out->n_weight_words) : NULL;
  const char *texts[] = {out->header, out->source, out->main_c, asm_text,
                         (const char *)out->weights};
  size_t lens[] = {strlen(out->header), strlen(out->source), out->main_c ? strlen(out->main_c) : 0,
                   asm_text ? strlen(asm_text) : 0, (size_t)out->n_weight_words * 4};
  if (out->weights && !asm_text)
    s = dy_error_set(err, DY_STATUS_IO, "%s: the weights' path cannot go into an assembler file",
                     path);
  for (int i = 0; i < n_files && !s; i++) {
    if (i == 2 && !has_main)
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    s = dy_write_file_atomic(path, texts[i], lens[i], err);
  }
  free(asm_text);
  /* the compiler writes inside the private directory; the result is then
   * copied beside exe_path through an exclusive temporary (never through
   * a link planted there) and renamed */
  snprintf(tmp_exe, sizeof tmp_exe, "%s/a.out", dir);

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
  char *argv[80];
  int argc = 0;
  /* CC may hold flags ("clang -fsanitize=thread"): its words, as make
   * splits $(CC) */
  char *cc_words = strdup(cc);
  for (char *t = cc_words ? strtok(cc_words, " \t") : NULL; t && argc < 16; t = strtok(NULL, " \t"))
    argv[argc++] = t;
  if (argc == 0)
    argv[argc++] = "cc";
  argv[argc++] = "-std=c11";
  argv[argc++] = "-O3";
  for (char *t = flags ? strtok(flags, " \t") : NULL; t && argc < 68; t = strtok(NULL, " \t"))
    argv[argc++] = t;
  if (shared) {
    argv[argc++] = "-shared";
    argv[argc++] = "-fPIC";
  }
  argv[argc++] = "-o";
  argv[argc++] = tmp_exe;
  if (has_main)
    argv[argc++] = main_c;
  argv[argc++] = model_c;
  if (out->weights)
    argv[argc++] = weights_s;
  argv[argc++] = "-lm";
  argv[argc] = NULL;
  if (!s && o->progress)
    o->progress(o->progress_ctx, "cc", 0, 0);
  if (!s && (s = dy_run_command(argv, err)))
    dy_error_prefix(err, "building %s", exe_path);
  uint8_t *bin = NULL;
  size_t bin_len = 0;
  if (!s && !(s = dy_read_file(tmp_exe, &bin, &bin_len, err)))
    s = dy_write_file_atomic_mode(exe_path, bin, bin_len, 0777, err);
  free(bin);
  free(flags);
  free(cc_words);
  dy_temp_dir_remove(dir);
  return s;
}

dy_status dy_build_executable(const dy_codegen_output *out,
                              const dy_compile_options *o, const char *exe_path,
                              dy_error *err) {
  if (!out->main_c)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "no main.c was generated (emit_main is off)");
  return build_impl(out, o, exe_path, false, err);
}

dy_status dy_build_shared_library(const dy_codegen_output *out, const dy_compile_options *o,
                                  const char *so_path, dy_error *err) {
  const char *tflags, *runner = NULL;
  dy_status s = dy_target_flags(o->target, &tflags, NULL, &runner, err);
  if (s)
    return s;
  if (runner)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "target '%s' cannot be loaded on this machine (a shared library "
                        "runs in the calling process)", o->target);
  return build_impl(out, o, so_path, true, err);
}
