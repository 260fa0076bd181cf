/* cfront_driver.c - the tracing driver of `dy2stc compile net.c`.
 *
 * After cfront.c has found the DY_MODEL constructor and the DY_TO_STATIC
 * function, a small C file is generated in a private directory (mkdtemp):
 *
 *   #define DY2STC_DRIVER 1
 *   #define main dy2stc_user_main      // the file's own main is not called
 *   #include "/abs/path/of/net.c"
 *   #undef main
 *   static dy_tensor *dy2stc_forward(dy_layer *self, dy_tensor *const *in,
 *                                    int n_in) { return forward(self, in[0]); }
 *   int main(int argc, char **argv) {
 *     dy_seed(SEED);  net = make_net();
 *     net->vt = a copy of its vtable with dy2stc_forward as forward;
 *     dy_jit_save_ex(net, specs, N, argv[1], DY_SAVE_EVAL, ...);
 *   }
 *
 * Before that, the tensor-dependent if/while/for statements of the marked
 * function are converted into dy_cond / dy_while (cconvert.c); when there
 * are any, the driver includes the converted file (written beside it, its
 * #line directives naming the user's file and lines, the user's folder
 * on the quote include path) instead of the user's.
 *
 * The model itself is traced (its vtable's forward swapped for one that
 * calls the marked function), so its parameters keep the names a
 * dy_jit_save of the same model gives them, and --params files written
 * that way load by name. The driver is built with $CC (else the compiler
 * dy2stc was built with) against the runtime and IR libraries, run, and
 * the Program it saved is read back; with --params, the weights come from
 * that file instead of the seeded init (dy_dyparams_read checks every
 * name, dtype and shape). The directory is removed afterwards. (A
 * sanitizer build of dy2stc builds the driver with its own compiler and
 * -fsanitize flags, whatever $CC says.)
 *
 * The headers and libraries are found relative to the executable
 * (/proc/self/exe): <prefix>/bin/dy2stc uses <prefix>/include/dy2stc and
 * <prefix>/lib; failing that, the build tree dy2stc was built in
 * (DY_CF_* below, set by compiler/CMakeLists.txt).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfront.h"
#include "dy_driver.h"

/* The enumerator of each dtype, as the driver's C spells it (every dtype
 * of the spec, not only f32 / i64 / bool). */
static const char *const dtype_enum[DY_DTYPE_COUNT] = {
#define DY_DTYPE(NAME, name, ctype, kind, npy, lo, hi) "DY_" #NAME,
#include "dtypes.def"
#undef DY_DTYPE
};

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

dy_status dy_cfront_find_paths(dy_cf_paths *paths, dy_error *err) {
  *paths = (dy_cf_paths){0};
  char exe[3800], probe[4200];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = 0;
    /* <prefix>/bin/dy2stc -> <prefix> */
    for (int up = 0; up < 2; up++) {
      char *slash = strrchr(exe, '/');
      if (slash)
        *slash = 0;
    }
    snprintf(probe, sizeof probe, "%s/include/dy2stc/dy_runtime.h", exe);
    if (is_file(probe)) {
      paths->installed = true;
      paths->n_inc = 1;
      snprintf(paths->inc[0], sizeof paths->inc[0], "%s/include/dy2stc", exe);
      snprintf(paths->runtime_lib, sizeof paths->runtime_lib, "%s/lib/libdy_runtime.a", exe);
      snprintf(paths->ir_lib, sizeof paths->ir_lib, "%s/lib/libdy_ir.a", exe);
      if (!is_file(paths->runtime_lib) || !is_file(paths->ir_lib))
        return dy_error_set(err, DY_STATUS_IO,
                            "the installed dy2stc at %s lacks lib/libdy_runtime.a or "
                            "lib/libdy_ir.a", exe);
      return DY_OK;
    }
  }
  /* the build tree */
  paths->n_inc = 3;
  snprintf(paths->inc[0], sizeof paths->inc[0], "%s/ir", DY_CF_SOURCE_DIR);
  snprintf(paths->inc[1], sizeof paths->inc[1], "%s/runtime", DY_CF_SOURCE_DIR);
  snprintf(paths->inc[2], sizeof paths->inc[2], "%s", DY_CF_GEN_INCLUDE_DIR);
  snprintf(paths->runtime_lib, sizeof paths->runtime_lib, "%s", DY_CF_RUNTIME_LIB);
  snprintf(paths->ir_lib, sizeof paths->ir_lib, "%s", DY_CF_IR_LIB);
  snprintf(probe, sizeof probe, "%s/dy_runtime.h", paths->inc[1]);
  if (!is_file(probe) || !is_file(paths->runtime_lib) || !is_file(paths->ir_lib))
    return dy_error_set(err, DY_STATUS_IO,
                        "cannot find the dy2stc headers and libraries: neither "
                        "<prefix>/include/dy2stc beside the executable nor the build tree "
                        "%s", DY_CF_SOURCE_DIR);
  return DY_OK;
}

/* ---- the driver's source ---- */

/* s as the body of a C string literal (also of a #line directive's name). */
static void c_string(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', f);
    if (*s == '\n')
      fputs("\\n", f);
    else
      fputc(*s, f);
  }
}

/* Can `#include "path"` name path? A header-name has no escapes: a '"',
 * a backslash or a newline in it cannot be spelt. */
static bool header_name_ok(const char *path) {
  return !strpbrk(path, "\"\\\n");
}

/* The driver's source. The user's file is included by its absolute path
 * (abs_file); the build maps the current directory away again so that its
 * __FILE__, and so every op's source line, reads as the user wrote it. */
static void write_driver(FILE *f, const dy_cfront_options *o, const char *abs_file,
                         const dy_cf_model *m) {
  fputs("/* generated by dy2stc compile: traces the DY_TO_STATIC function and saves\n"
        " * the Program (argv[1].dymodel/.dyparams); errors go to argv[2]. */\n"
        "#define DY2STC_DRIVER 1\n"
        "#define main dy2stc_user_main\n"
        "#include \"", f);
  c_string(f, abs_file);
  fputs("\"\n#undef main\n#include <stdio.h>\n#include <stdlib.h>\n\n", f);

  /* the user's code may end the process (exit()) before the model is
   * saved: an atexit handler says so in the message file */
  fprintf(f, "static int dy2stc_phase; /* 0 before the constructor, 1 tracing, 2 done */\n"
             "static const char *dy2stc_msg_path;\n"
             "static void dy2stc_at_exit(void) {\n"
             "  if (dy2stc_phase == 2 || !dy2stc_msg_path)\n"
             "    return;\n"
             "  FILE *f = fopen(dy2stc_msg_path, \"w\");\n"
             "  if (f) {\n"
             "    fputs(dy2stc_phase ? \"the process ended (exit()) while tracing %s(), before "
             "the model was saved\"\n"
             "                       : \"the process ended (exit()) while running %s(), before "
             "the model was traced\", f);\n"
             "    fclose(f);\n"
             "  }\n"
             "}\n\n", m->forward_fn, m->model_fn);

  fputs("static dy_tensor *dy2stc_forward(dy_layer *self, dy_tensor *const *in, int n_in) {\n"
        "  (void)self;\n  (void)in;\n  (void)n_in;\n", f);
  if (m->form == DY_CF_FORWARD_VTABLE) {
    fprintf(f, "  return %s(self, in, n_in);\n", m->forward_fn);
  } else {
    fprintf(f, "  return %s(%s", m->forward_fn, m->form == DY_CF_FORWARD_SELF_TENSORS ? "self" : "");
    for (int i = 0; i < m->n_specs; i++)
      fprintf(f, "%sin[%d]", i || m->form == DY_CF_FORWARD_SELF_TENSORS ? ", " : "", i);
    fputs(");\n", f);
  }
  fputs("}\n\n", f);

  fputs("static int dy2stc_fail(const char *path, const char *what, const dy_error *err) {\n"
        "  char line[1024];\n"
        "  dy2stc_phase = 2;\n"
        "  dy_error_format(err, line, sizeof line);\n"
        "  FILE *f = fopen(path, \"w\");\n"
        "  if (f) {\n"
        "    fprintf(f, \"%s: %s\", what, line);\n"
        "    fclose(f);\n"
        "  }\n"
        "  return 1;\n"
        "}\n\n", f);

  fprintf(f, "int main(int argc, char **argv) {\n"
             "  if (argc != 3)\n"
             "    return 2;\n"
             "  dy2stc_msg_path = argv[2];\n"
             "  atexit(dy2stc_at_exit);\n"
             "  dy_seed(%lluu);\n"
             "  dy_layer *net = %s();\n",
          (unsigned long long)o->seed, m->model_fn);
  fprintf(f, "  if (!net) {\n"
             "    const dy_error *e = dy_last_error();\n"
             "    dy_error none = {.msg = \"it returned NULL\"};\n"
             "    return dy2stc_fail(argv[2], \"the DY_MODEL function %s\", e ? e : &none);\n"
             "  }\n", m->model_fn);
  fputs("  /* trace the model itself, its forward being the marked function */\n"
        "  dy2stc_phase = 1;\n"
        "  const dy_layer_vtable *user_vt = net->vt;\n"
        "  dy_layer_vtable vt = *user_vt;\n"
        "  vt.forward = dy2stc_forward;\n"
        "  net->vt = &vt;\n", f);
  fprintf(f, "  dy_input_spec specs[%d] = {\n", m->n_specs);
  for (int i = 0; i < m->n_specs; i++) {
    const dy_input_spec *s = &m->specs[i];
    fputs("      {.name = \"", f);
    c_string(f, s->name);
    fprintf(f, "\", .dtype = %s, .rank = %d, .shape = {",
            dtype_enum[s->dtype], s->rank);
    for (int d = 0; d < s->rank; d++) {
      int sym = dy_dim_single_sym(s->shape[d]);
      if (sym > 0)
        fprintf(f, "%sDY_DIM(\"%s\")", d ? ", " : "", dy_sym_name(sym));
      else
        fprintf(f, "%s%lld", d ? ", " : "", (long long)s->shape[d]);
    }
    fputs("}},\n", f);
  }
  fputs("  };\n  dy_error err = {0};\n"
        "  dy_status s = dy_jit_save_ex_at(net, specs, (int)(sizeof specs / sizeof *specs),\n"
        "                                  argv[1], DY_SAVE_EVAL, &err, (dy_srcloc){\"", f);
  c_string(f, o->file);
  fprintf(f, "\", %d});\n", m->forward_line);
  fprintf(f, "  if (s)\n"
             "    dy2stc_fail(argv[2], \"tracing %s\", &err);\n"
             "  net->vt = user_vt;\n"
             "  dy_layer_free(net);\n"
             "  dy2stc_phase = 2;\n"
             "  return s ? 1 : 0;\n"
             "}\n", m->forward_fn);
}

/* ---- build and run ---- */

/* Split a space-separated list into argv slots; returns the new count. */
static int split_into(char *list, char **argv, int argc, int max) {
  for (char *t = strtok(list, " \t"); t && argc < max; t = strtok(NULL, " \t"))
    argv[argc++] = t;
  return argc;
}

static dy_status build_driver(const dy_cfront_options *o, const dy_cf_paths *paths,
                              const char *cwd, const char *iquote, const char *src,
                              const char *exe, dy_error *err) {
  /* $CC, else the compiler that built the runtime; always that one when
   * the runtime has sanitizers, whose runtime libraries must match */
  const char *cc = DY_CF_SANITIZE ? NULL : getenv("CC");
  if (!cc || !*cc)
    cc = DY_CF_CC;
  char link[] = DY_CF_LINK_FLAGS;
  /* CC may hold flags ("clang -fsanitize=thread"): words, as make splits it */
  char cc_words[1024];
  if (strlen(cc) >= sizeof cc_words)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "$CC is too long (%zu bytes)",
                        strlen(cc));
  snprintf(cc_words, sizeof cc_words, "%s", cc);
  int max = 21 + 16 + o->n_cflags + 2 * paths->n_inc;
  char **argv = malloc(sizeof *argv * (size_t)max);
  if (!argv)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* cc -fmacro-prefix-map=CWD/= -I... -o EXE driver.c USER-FLAGS
   * runtime.a ir.a LIBS */
  char prefix_map[4200];
  snprintf(prefix_map, sizeof prefix_map, "-fmacro-prefix-map=%s/=", cwd);
  int n = split_into(cc_words, argv, 0, 16);
  if (n == 0)
    argv[n++] = (char *)DY_CF_CC;
  argv[n++] = prefix_map;
  argv[n++] = (char *)iquote;
  for (int i = 0; i < paths->n_inc; i++) {
    argv[n++] = "-I";
    argv[n++] = (char *)paths->inc[i];
  }
  argv[n++] = "-o";
  argv[n++] = (char *)exe;
  argv[n++] = (char *)src;
  for (int i = 0; i < o->n_cflags; i++)
    argv[n++] = o->cflags[i];
  argv[n++] = (char *)paths->runtime_lib;
  argv[n++] = (char *)paths->ir_lib;
  n = split_into(link, argv, n, max - 1);
  argv[n] = NULL;
  dy_error run_err = {0};
  dy_status s = dy_run_command(argv, &run_err);
  if (s)
    s = dy_error_set(err, s, "building the tracing driver of %s: %s (the compiler's messages "
                     "are above; sources or libraries the file needs go after --)",
                     o->file, run_err.msg);
  free(argv);
  return s;
}

/* Read the driver's one-line error message, if it wrote one. */
static bool read_message(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  size_t k = fread(buf, 1, n - 1, f);
  fclose(f);
  buf[k] = 0;
  return k > 0;
}

static dy_status run_driver(const dy_cfront_options *o, const dy_cf_model *m,
                            const char *exe, const char *stem, const char *msg_path,
                            dy_error *err) {
  char *argv[] = {(char *)exe, (char *)stem, (char *)msg_path, NULL};
  dy_error run_err = {0};
  bool ran = !dy_run_command(argv, &run_err);
  char msg[1024], saved[4300];
  /* a message even after exit status 0: the user's code called exit()
   * (the at-exit handler's message gets the status) */
  const char *how = ran ? NULL : strstr(run_err.msg, "' failed (");
  if (read_message(msg_path, msg, sizeof msg))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "%s: %s%s%s", o->file, msg,
                        how && strncmp(msg, "the process ended", 17) == 0 ? " " : "",
                        how && strncmp(msg, "the process ended", 17) == 0 ? how + 9 : "");
  snprintf(saved, sizeof saved, "%s.dymodel", stem);
  if (ran && !is_file(saved)) /* exit() before main: a file-level constructor */
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "%s: the tracing driver ended without saving the model (exit() "
                        "called before %s() ran, in a file-level constructor?)",
                        o->file, m->model_fn);
  if (ran)
    return DY_OK;
  /* no message: it crashed (or _exit); say how, not where */
  return dy_error_set(err, DY_STATUS_INTERNAL, "%s: running %s() and tracing %s() failed %s",
                      o->file, m->model_fn, m->forward_fn, how ? how + 9 : run_err.msg);
}

/* path: `#line 1 "FILE"` (the user's file, escaped), then text. */
static dy_status write_copy(const char *path, const char *file, const char *text,
                            dy_error *err) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  fputs("#line 1 \"", f);
  c_string(f, file);
  fputs("\"\n", f);
  fputs(text, f);
  dy_status s = fclose(f) != 0 ? dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory",
                                              path)
                               : dy_write_file_atomic(path, buf, n, err);
  free(buf);
  return s;
}

/* The saved Program, with the weights of --params if given, verified. */
static dy_status read_program(const dy_cfront_options *o, const char *stem, dy_program **p,
                              dy_error *err) {
  char path[4300];
  snprintf(path, sizeof path, "%s.dymodel", stem);
  dy_status s = dy_dymodel_read(path, p, err);
  if (s)
    return s;
  if (o->params) {
    if ((s = dy_dyparams_read(*p, o->params, err)))
      dy_error_prefix(err, "--params %s does not fit the model of %s", o->params, o->file);
  } else {
    snprintf(path, sizeof path, "%s.dyparams", stem);
    s = dy_dyparams_read(*p, path, err);
  }
  if (!s && (s = dy_verify(*p, err)))
    dy_error_prefix(err, "the Program traced from %s is invalid", o->file);
  if (s) {
    dy_program_free(*p);
    *p = NULL;
  }
  return s;
}

dy_status dy_cfront_load(const dy_cfront_options *o, dy_program **p, bool *shown,
                         dy_error *err) {
  *p = NULL;
  *shown = false;
  dy_cf_paths paths;
  dy_cf_model m;
  dy_status s = dy_cfront_find_paths(&paths, err);
  if (!s)
    s = dy_cfront_read(o, &paths, &m, shown, err);
  if (s)
    return s;
  char cwd[3000], abs_file[8192];
  if (!getcwd(cwd, sizeof cwd))
    return dy_error_set(err, DY_STATUS_IO, "cannot read the current directory: %s",
                        strerror(errno));
  snprintf(abs_file, sizeof abs_file, "%s%s%s", o->file[0] == '/' ? "" : cwd,
           o->file[0] == '/' ? "" : "/", o->file);

  char dir[4096];
  if ((s = dy_temp_dir_make("dy2stc-cfront", dir, sizeof dir, err)))
    return s;
  static const char *const files[] = {"dy2stc_driver.c", "dy2stc_driver", "model.dymodel",
                                      "model.dyparams", "error.txt", "converted.c"};
  char src[4200], exe[4200], stem[4200], msg[4200];
  snprintf(src, sizeof src, "%s/%s", dir, files[0]);
  snprintf(exe, sizeof exe, "%s/%s", dir, files[1]);
  snprintf(stem, sizeof stem, "%s/model", dir);
  snprintf(msg, sizeof msg, "%s/%s", dir, files[4]);

  /* the tensor-dependent if/while/for of the forward, converted
   * (cconvert.c); #line directives keep the user's file and lines */
  char conv_path[4200], user_dir[8192], iquote[8300];
  char *converted = NULL;
  int n_conv = 0;
  snprintf(conv_path, sizeof conv_path, "%s/%s", dir, files[5]);
  s = dy_cconvert(o, &paths, true, &converted, &n_conv, shown, err);
  /* the driver includes a copy when a statement was converted or when
   * `#include "..."` cannot spell the file's name (a '"', '\\' or newline
   * in it); its first line names the user's file for __FILE__ */
  bool copy = n_conv > 0 || !header_name_ok(abs_file);
  if (!s && copy)
    s = write_copy(conv_path, o->file, converted, err);
  free(converted);
  /* the user's own "..." includes still resolve from the file's folder */
  snprintf(user_dir, sizeof user_dir, "%s", abs_file);
  char *slash = strrchr(user_dir, '/');
  if (slash)
    *slash = 0;
  snprintf(iquote, sizeof iquote, "-iquote%s", user_dir);

  /* the driver's text in memory, then written as every file is */
  char *text = NULL;
  size_t text_len = 0;
  FILE *f = s ? NULL : open_memstream(&text, &text_len);
  if (!s && !f) {
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", src);
  } else if (!s) {
    write_driver(f, o, copy ? conv_path : abs_file, &m);
    if (fclose(f) != 0)
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", src);
    else
      s = dy_write_file_atomic(src, text, text_len, err);
  }
  free(text);
  if (!s)
    s = build_driver(o, &paths, cwd, iquote, src, exe, err);
  if (!s)
    s = run_driver(o, &m, exe, stem, msg, err);
  if (!s)
    s = read_program(o, stem, p, err);

  dy_temp_dir_remove(dir);
  return s;
}
