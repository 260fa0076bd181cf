/* cfront.h - `dy2stc compile net.c`: the C model front end of the CLI
 * (compiler/cfront/, library dy_cfront: cfront.c reads the file with
 * libclang, cconvert.c converts its tensor control flow, cfront_driver.c
 * generates, builds and runs the tracing driver). Only the dy2stc CLI
 * links it, and it is the one library that links libclang.
 *
 *   dy_cfront_options co = {.file = "net.c", .seed = 0};
 *   dy_program *p;  bool shown;
 *   if (dy_cfront_load(&co, &p, &shown, &err))   // shown: the caret block
 *     ...                                         // was printed already
 *   dy_compile_program(p, ...);                  // the usual path
 *
 * The markers (DY_MODEL, DY_TO_STATIC) are documented in
 * runtime/dy_static.h.
 */
#ifndef DY_CFRONT_H
#define DY_CFRONT_H

#include "dy_runtime.h"

#define DY_CF_MAX_SPECS 8

typedef struct {
  const char *file;         /* the user's model file, as given */
  const char *params;       /* --params P.dyparams, or NULL: seeded init */
  uint64_t seed;            /* dy_seed before the constructor (--seed) */
  int n_cflags;             /* the arguments after `--` */
  char *const *cflags;
} dy_cfront_options;

/* What cfront.c found in the file. */
typedef enum {
  DY_CF_FORWARD_TENSORS,      /* f(dy_tensor *x, ...)                   */
  DY_CF_FORWARD_SELF_TENSORS, /* f(dy_layer *self, dy_tensor *x, ...)   */
  DY_CF_FORWARD_VTABLE,       /* f(dy_layer *self, dy_tensor *const *in, int n) */
} dy_cf_forward_form;

typedef struct {
  char model_fn[256];             /* the DY_MODEL constructor */
  char forward_fn[256];           /* the DY_TO_STATIC function */
  int forward_line;               /* its line in the file */
  dy_cf_forward_form form;
  int n_specs;
  dy_input_spec specs[DY_CF_MAX_SPECS];
  char spec_names[DY_CF_MAX_SPECS][64];   /* specs[i].name points here */
} dy_cf_model;

/* Where the headers and libraries are: an installed tree found from the
 * executable's own path (<prefix>/bin/dy2stc -> <prefix>/include/dy2stc,
 * <prefix>/lib), else the build tree dy2stc was built in. */
typedef struct {
  int n_inc;
  char inc[3][4096];       /* -I directories */
  char runtime_lib[4096];  /* libdy_runtime.a */
  char ir_lib[4096];       /* libdy_ir.a */
  bool installed;
} dy_cf_paths;

/* ---- cfront.c ---- */

/* Parse o->file with libclang and fill *m. Source errors (clang's, and
 * missing, duplicate or malformed markers) are printed as
 * `file:line:col: error: message` with the line and a caret, and *shown is
 * set; other failures only fill err. */
dy_status dy_cfront_read(const dy_cfront_options *o, const dy_cf_paths *paths,
                         dy_cf_model *m, bool *shown, dy_error *err);
/* Parse one input spec "NAME: DTYPE[DIMS]" into *spec (its name copied
 * into name_buf). */
dy_status dy_cfront_parse_spec(const char *s, dy_input_spec *spec, char *name_buf,
                               size_t name_n, dy_error *err);

/* The arguments after `--` checked: none may change what the compiler
 * produces (-o, -c, -E, -S, -x, -M..., refused with one line naming the
 * flag), and a flag that takes a value (-include F, -I DIR) has it. */
dy_status dy_cfront_check_flags(const dy_cfront_options *o, dy_error *err);
/* The arguments libclang parses o->file with (-xc, the headers' folders,
 * the user's flags but the linker's); malloc'd (free it), NULL when out of
 * memory. */
const char **dy_cfront_parser_args(const dy_cfront_options *o, const dy_cf_paths *paths,
                                   int *n_args);
/* `file:line:col: error: msg`, the source line of file and a caret, on
 * stderr (the format of clang's own diagnostics). */
void dy_cfront_print_source_error(const char *file, unsigned line, unsigned col,
                                  const char *msg);
/* The same, *shown set, and err filled (INVALID_ARGUMENT, "file:line:col:
 * msg"); returns that status. */
dy_status dy_cfront_source_error(const char *file, unsigned line, unsigned col,
                                 bool *shown, dy_error *err, const char *msg);

/* ---- cconvert.c (and cconvert_*.c, cconvert_internal.h) ---- */

/* Source conversion of the DY_TO_STATIC function (Paddle's convert_ifelse /
 * convert_while): its if/while/for statements on dy_bool(t) become
 * outlined functions plus dy_cond / dy_while calls. *out is the whole
 * rewritten file (malloc'd), *n_converted how many statements were
 * rewritten. With line_directives, `#line` directives map every copied
 * piece back to the user's file (what the tracing driver compiles);
 * without, the output is for reading (`dy2stc convert`). A statement that
 * cannot be converted is printed as `file:line:col: error: reason` with the
 * line and a caret (*shown set) and fails. */
dy_status dy_cconvert(const dy_cfront_options *o, const dy_cf_paths *paths,
                      bool line_directives, char **out, int *n_converted, bool *shown,
                      dy_error *err);

/* ---- cfront_driver.c ---- */

dy_status dy_cfront_find_paths(dy_cf_paths *paths, dy_error *err);
/* The whole of `dy2stc compile net.c` up to the Program: read the file,
 * generate the driver in a private temporary directory, build and run it,
 * read the saved Program back (with --params' weights if given) and
 * verify it. *p is new (dy_program_free). */
dy_status dy_cfront_load(const dy_cfront_options *o, dy_program **p, bool *shown,
                         dy_error *err);

#endif
