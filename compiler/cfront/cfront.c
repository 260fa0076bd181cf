/* cfront.c - reading a C model file with libclang for `dy2stc compile
 * net.c`.
 *
 * The file is parsed as the C compiler would (the dy2stc headers' folder
 * first, then the user's flags after `--`, linker inputs left out). Every
 * diagnostic of severity error is printed like clang's own:
 *
 *   net.c:12:5: error: use of undeclared identifier 'y'
 *       y = dy_relu(x);
 *       ^
 *
 * and nothing is compiled. Then the top-level functions of the file itself
 * (not of its headers) are searched for the annotate attributes DY_MODEL
 * and DY_TO_STATIC expand to (runtime/dy_static.h): exactly one of each,
 * with an accepted signature, else an error pointing at the function or
 * the marker. The input specs of DY_TO_STATIC are parsed here too, so a
 * malformed one points at its marker.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "cfront.h"

#define ANNOTATE_MODEL "dy2stc:model"
#define ANNOTATE_TO_STATIC "dy2stc:to_static:"

/* Print `file:line:col: error: msg`, the source line and a caret under
 * col (tabs kept so the caret lines up). */
void dy_cfront_print_source_error(const char *file, unsigned line, unsigned col,
                                  const char *msg) {
  fprintf(stderr, "%s:%u:%u: error: %s\n", file, line, col, msg);
  FILE *f = fopen(file, "r");
  if (!f)
    return;
  char buf[4096];
  unsigned n = 0;
  while (fgets(buf, sizeof buf, f)) {
    size_t len = strlen(buf);
    bool whole = len && buf[len - 1] == '\n';
    if (++n == line) {
      if (whole)
        buf[len - 1] = 0;
      fprintf(stderr, "%s\n", buf);
      for (unsigned i = 0; i + 1 < col && buf[i]; i++)
        fputc(buf[i] == '\t' ? '\t' : ' ', stderr);
      fputs("^\n", stderr);
      break;
    }
    /* a line longer than the buffer: skip the rest of it */
    while (!whole && fgets(buf, sizeof buf, f)) {
      len = strlen(buf);
      whole = len && buf[len - 1] == '\n';
    }
  }
  fclose(f);
}

dy_status dy_cfront_source_error(const char *file, unsigned line, unsigned col,
                                 bool *shown, dy_error *err, const char *msg) {
  dy_cfront_print_source_error(file, line, col, msg);
  *shown = true;
  return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "%s:%u:%u: %s", file, line, col,
                      msg);
}

/* The file, line and column a location was written at (for a location
 * inside a macro, where the macro was used). */
static void location_of(CXSourceLocation loc, char *file, size_t n, unsigned *line,
                        unsigned *col) {
  CXFile f;
  clang_getExpansionLocation(loc, &f, line, col, NULL);
  CXString s = clang_getFileName(f);
  const char *c = clang_getCString(s);
  snprintf(file, n, "%s", c ? c : "?");
  clang_disposeString(s);
}

/* A source error at a cursor: printed with its caret; *shown set. */
static dy_status cursor_error(CXCursor c, bool *shown, dy_error *err, const char *fmt,
                              ...) __attribute__((format(printf, 4, 5)));
static dy_status cursor_error(CXCursor c, bool *shown, dy_error *err, const char *fmt,
                              ...) {
  char msg[1024], file[4096];
  unsigned line, col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  location_of(clang_getCursorLocation(c), file, sizeof file, &line, &col);
  return dy_cfront_source_error(file, line, col, shown, err, msg);
}

/* ---- input specs: NAME: DTYPE[DIMS] ---- */

static const char *skip_spaces(const char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  return s;
}

dy_status dy_cfront_parse_spec(const char *s, dy_input_spec *spec, char *name_buf,
                               size_t name_n, dy_error *err) {
  const char *p = skip_spaces(s), *start = p;
  while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
         *p == '_' || *p == '.' || *p == '-')
    p++;
  size_t len = (size_t)(p - start);
  if (len == 0 || len >= name_n)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "input spec '%s': %s (the form is NAME: DTYPE[DIMS], e.g. "
                        "\"x: f32[-1,10]\")", s, len ? "the name is too long"
                                                    : "expected a name first");
  memcpy(name_buf, start, len);
  name_buf[len] = 0;
  p = skip_spaces(p);
  if (*p != ':')
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "input spec '%s': expected ':' after the name '%s'", s, name_buf);
  p = skip_spaces(p + 1);
  char dt[16];
  size_t k = 0;
  while (((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) && k + 1 < sizeof dt)
    dt[k++] = *p++;
  dt[k] = 0;
  *spec = (dy_input_spec){.name = name_buf};
  if (!dy_dtype_from_name(dt, &spec->dtype))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "input spec '%s': unknown dtype '%s' (f32, i64, bool, i8, u8 or i32)", s, dt);
  p = skip_spaces(p);
  if (*p != '[')
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "input spec '%s': expected '[' and the dims after '%s'", s, dt);
  p = skip_spaces(p + 1);
  while (*p != ']') {
    if (spec->rank >= DY_MAX_DIMS)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input spec '%s': more than %d dims", s, DY_MAX_DIMS);
    char *end;
    long long d;
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
      /* a named dynamic dim: a size symbol (DY_DIM) */
      char sym[DY_SYM_NAME_MAX];
      size_t n = 0;
      for (end = (char *)p; ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') ||
                             (*end >= '0' && *end <= '9') || *end == '_');
           end++)
        if (n + 1 < sizeof sym)
          sym[n++] = *end;
      sym[n] = 0;
      d = (size_t)(end - p) < sizeof sym ? dy_dim_sym(sym) : DY_DIM_NONE;
      if (d == DY_DIM_NONE)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "input spec '%s': dim %d is not a size symbol's name", s, spec->rank);
    } else {
      errno = 0;
      d = strtoll(p, &end, 10);
      if (end != p && errno == ERANGE)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "input spec '%s': dim %d is too large", s, spec->rank);
      if (end == p || (d < 1 && d != -1))
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "input spec '%s': dim %d must be a positive integer, -1 "
                            "(the batch) or a name (a dynamic size, e.g. seq)", s, spec->rank);
    }
    spec->shape[spec->rank++] = d;
    p = skip_spaces(end);
    if (*p == ',')
      p = skip_spaces(p + 1);
    else if (*p != ']')
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input spec '%s': expected ',' or ']' after dim %d", s,
                          spec->rank - 1);
  }
  if (*skip_spaces(p + 1))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "input spec '%s': unexpected text after ']'", s);
  return DY_OK;
}

/* ---- the markers ---- */

typedef struct {
  CXCursor fn;          /* the marked function (its first marked declaration) */
  CXCursor attr;        /* the marker */
  char name[256];
  char annotation[1024];
  int count;            /* distinct functions carrying the marker */
  CXCursor second;      /* the second one, for the error */
  char second_name[256];
} marker;

typedef struct {
  marker model, to_static;
} markers;

static void cursor_name(CXCursor c, char *buf, size_t n) {
  CXString s = clang_getCursorSpelling(c);
  snprintf(buf, n, "%s", clang_getCString(s));
  clang_disposeString(s);
}

static enum CXChildVisitResult find_annotation(CXCursor c, CXCursor parent,
                                               CXClientData data) {
  CXCursor *out = data;
  if (clang_getCursorKind(c) == CXCursor_AnnotateAttr) {
    CXString s = clang_getCursorSpelling(c);
    bool ours = strncmp(clang_getCString(s), "dy2stc:", 7) == 0;
    clang_disposeString(s);
    if (ours) {
      *out = c;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Continue;
}

static void note_marker(marker *mk, CXCursor fn, CXCursor attr, const char *annotation) {
  char name[256];
  cursor_name(fn, name, sizeof name);
  if (mk->count && strcmp(mk->name, name) == 0) {
    /* a prototype and the definition: keep the definition */
    if (clang_isCursorDefinition(fn))
      mk->fn = fn;
    return;
  }
  if (mk->count++ == 0) {
    mk->fn = fn;
    mk->attr = attr;
    snprintf(mk->name, sizeof mk->name, "%s", name);
    snprintf(mk->annotation, sizeof mk->annotation, "%s", annotation);
  } else if (mk->count == 2) {
    mk->second = fn;
    snprintf(mk->second_name, sizeof mk->second_name, "%s", name);
  }
}

static enum CXChildVisitResult find_markers(CXCursor c, CXCursor parent,
                                            CXClientData data) {
  markers *ms = data;
  if (clang_getCursorKind(c) != CXCursor_FunctionDecl ||
      !clang_Location_isFromMainFile(clang_getCursorLocation(c)))
    return CXChildVisit_Continue;
  CXCursor attr = clang_getNullCursor();
  clang_visitChildren(c, find_annotation, &attr);
  if (clang_Cursor_isNull(attr))
    return CXChildVisit_Continue;
  CXString s = clang_getCursorSpelling(attr);
  const char *a = clang_getCString(s);
  if (strcmp(a, ANNOTATE_MODEL) == 0)
    note_marker(&ms->model, c, attr, a);
  else if (strncmp(a, ANNOTATE_TO_STATIC, strlen(ANNOTATE_TO_STATIC)) == 0)
    note_marker(&ms->to_static, c, attr, a);
  clang_disposeString(s);
  return CXChildVisit_Continue;
}

/* The canonical spelling of a type, without a top-level const. */
static void type_spelling(CXType t, char *buf, size_t n) {
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  snprintf(buf, n, "%s", clang_getCString(s));
  clang_disposeString(s);
  size_t len = strlen(buf);
  if (len > 6 && strcmp(buf + len - 6, " const") == 0)
    buf[len - 6] = 0;
}

static bool type_is(CXType t, const char *want) {
  char buf[256];
  type_spelling(t, buf, sizeof buf);
  return strcmp(buf, want) == 0;
}

#define TENSOR_PTR "struct dy_tensor *"
#define LAYER_PTR "struct dy_layer *"

static dy_status check_model(const marker *mk, dy_cf_model *m, bool *shown, dy_error *err) {
  CXType ft = clang_getCursorType(mk->fn);
  if (!type_is(clang_getResultType(ft), LAYER_PTR) || clang_Cursor_getNumArguments(mk->fn) > 0)
    return cursor_error(mk->fn, shown, err,
                        "the DY_MODEL function '%s' must be 'dy_layer *%s(void)'", mk->name,
                        mk->name);
  snprintf(m->model_fn, sizeof m->model_fn, "%s", mk->name);
  return DY_OK;
}

static dy_status check_forward(const marker *mk, dy_cf_model *m, bool *shown,
                               dy_error *err) {
  /* the specs, split at ';' */
  const char *specs = mk->annotation + strlen(ANNOTATE_TO_STATIC);
  m->n_specs = 0;
  for (const char *p = specs; *p;) {
    const char *semi = strchr(p, ';');
    size_t len = semi ? (size_t)(semi - p) : strlen(p);
    char one[512];
    snprintf(one, sizeof one, "%.*s", (int)len, p);
    if (m->n_specs >= DY_CF_MAX_SPECS)
      return cursor_error(mk->attr, shown, err, "DY_TO_STATIC takes at most %d input specs",
                          DY_CF_MAX_SPECS);
    int i = m->n_specs++;
    dy_error e = {0};
    if (dy_cfront_parse_spec(one, &m->specs[i], m->spec_names[i], sizeof m->spec_names[i], &e))
      return cursor_error(mk->attr, shown, err, "%s", e.msg);
    for (int j = 0; j < i; j++)
      if (strcmp(m->spec_names[j], m->spec_names[i]) == 0)
        return cursor_error(mk->attr, shown, err, "two inputs are named '%s'",
                            m->spec_names[i]);
    p = semi ? semi + 1 : p + len;
  }
  if (m->n_specs == 0)
    return cursor_error(mk->attr, shown, err,
                        "DY_TO_STATIC needs an input spec per input, e.g. "
                        "DY_TO_STATIC(\"x: f32[-1,10]\")");

  /* the signature: one of the three forms of dy_static.h */
  CXType ft = clang_getCursorType(mk->fn);
  int n = clang_Cursor_getNumArguments(mk->fn);
  bool ok = type_is(clang_getResultType(ft), TENSOR_PTR) && !clang_isFunctionTypeVariadic(ft) &&
            n >= 1;
  int first = 0;
  if (ok && type_is(clang_getArgType(ft, 0), LAYER_PTR))
    first = 1;
  if (ok && first == 1 && n == 3 && type_is(clang_getArgType(ft, 1), "struct dy_tensor *const *") &&
      type_is(clang_getArgType(ft, 2), "int")) {
    m->form = DY_CF_FORWARD_VTABLE;
  } else {
    for (int i = first; ok && i < n; i++)
      ok = type_is(clang_getArgType(ft, (unsigned)i), TENSOR_PTR);
    if (ok && n - first != m->n_specs)
      return cursor_error(mk->fn, shown, err,
                          "'%s' takes %d tensor%s but DY_TO_STATIC gives %d input spec%s",
                          mk->name, n - first, n - first == 1 ? "" : "s", m->n_specs,
                          m->n_specs == 1 ? "" : "s");
    m->form = first ? DY_CF_FORWARD_SELF_TENSORS : DY_CF_FORWARD_TENSORS;
  }
  if (!ok)
    return cursor_error(mk->fn, shown, err,
                        "the DY_TO_STATIC function '%s' must be 'dy_tensor *%s(dy_layer *self, "
                        "dy_tensor *x, ...)' (one tensor per spec, self optional) or "
                        "'dy_tensor *%s(dy_layer *self, dy_tensor *const *in, int n_in)'",
                        mk->name, mk->name, mk->name);
  snprintf(m->forward_fn, sizeof m->forward_fn, "%s", mk->name);
  unsigned line;
  clang_getExpansionLocation(clang_getCursorLocation(mk->fn), NULL, &line, NULL, NULL);
  m->forward_line = (int)line;
  return DY_OK;
}

/* A missing marker: an error at the file (no line to point at). */
static dy_status missing(const char *file, const char *what, const char *example,
                         dy_error *err) {
  return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                      "%s: no function is marked %s (put it before %s)", file, what, example);
}

static dy_status check_markers(const char *file, const markers *ms, dy_cf_model *m,
                               bool *shown, dy_error *err) {
  if (ms->model.count == 0)
    return missing(file, "DY_MODEL", "the model's constructor, dy_layer *make_net(void)",
                   err);
  if (ms->to_static.count == 0)
    return missing(file, "DY_TO_STATIC",
                   "the forward function, with its input specs: "
                   "DY_TO_STATIC(\"x: f32[-1,10]\")", err);
  const marker *twice = ms->model.count > 1 ? &ms->model
                        : ms->to_static.count > 1 ? &ms->to_static : NULL;
  if (twice) {
    char f[4096];
    unsigned line, col;
    location_of(clang_getCursorLocation(twice->fn), f, sizeof f, &line, &col);
    return cursor_error(twice->second, shown, err,
                        "'%s' is a second %s function (the first is '%s' at %s:%u); mark "
                        "exactly one", twice->second_name,
                        twice == &ms->model ? "DY_MODEL" : "DY_TO_STATIC", twice->name, f, line);
  }
  dy_status s = check_model(&ms->model, m, shown, err);
  return s ? s : check_forward(&ms->to_static, m, shown, err);
}

/* ---- parsing ---- */

/* Print clang's errors; returns how many there were. */
static int report_diagnostics(CXTranslationUnit tu) {
  int n_errors = 0;
  unsigned n = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < n; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      char file[4096];
      unsigned line, col;
      CXFile f;
      clang_getSpellingLocation(clang_getDiagnosticLocation(d), &f, &line, &col, NULL);
      CXString fs = clang_getFileName(f);
      snprintf(file, sizeof file, "%s", f ? clang_getCString(fs) : "<command line>");
      clang_disposeString(fs);
      CXString msg = clang_getDiagnosticSpelling(d);
      dy_cfront_print_source_error(file, line, col, clang_getCString(msg));
      clang_disposeString(msg);
      n_errors++;
    }
    clang_disposeDiagnostic(d);
  }
  return n_errors;
}

/* Linker inputs (-l, -L, -Wl, objects and archives) are for the build of
 * the driver only; everything else also goes to the parser. */
static bool is_parser_flag(const char *a) {
  if (a[0] != '-')
    return false;
  return strncmp(a, "-l", 2) != 0 && strncmp(a, "-L", 2) != 0 && strncmp(a, "-Wl,", 4) != 0;
}

/* The flags whose value may be the next argument (-include F, -I DIR). */
static bool takes_value(const char *a) {
  static const char *const two[] = {"-include", "-imacros", "-isystem", "-iquote", "-idirafter",
                                    "-I", "-D", "-U", "-L", "-l"};
  for (size_t i = 0; i < sizeof two / sizeof *two; i++)
    if (strcmp(a, two[i]) == 0)
      return true;
  return false;
}

dy_status dy_cfront_check_flags(const dy_cfront_options *o, dy_error *err) {
  /* what the compiler produces is dy2stc's: an output name, a language
   * or a mode that is not "compile and link" would break the driver */
  static const char *const refused[] = {"-o", "-c", "-E", "-S", "-M", "-MM", "-MD", "-MMD",
                                        "-MF", "-MT", "-MQ", "-fsyntax-only", "-shared",
                                        "-save-temps", "-###"};
  for (int i = 0; i < o->n_cflags; i++) {
    const char *a = o->cflags[i];
    bool bad = strncmp(a, "-x", 2) == 0 || (strncmp(a, "-o", 2) == 0 && a[2]) ||
               strncmp(a, "--output", 8) == 0 || strncmp(a, "-save-temps", 11) == 0;
    for (size_t k = 0; k < sizeof refused / sizeof *refused && !bad; k++)
      bad = strcmp(a, refused[k]) == 0;
    if (bad)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "%s: '%s' after --: dy2stc decides what the compiler produces "
                          "(no -o, -c, -E, -S, -x, -M...); the arguments after -- are for "
                          "building the file (-I, -D, -include F, sources, -l)", o->file, a);
    if (takes_value(a) && i + 1 == o->n_cflags)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "%s: '%s' after -- needs a value",
                          o->file, a);
    if (takes_value(a))
      i++;
  }
  return DY_OK;
}

const char **dy_cfront_parser_args(const dy_cfront_options *o, const dy_cf_paths *paths,
                                   int *n_args) {
  /* the headers' folders, then the user's flags */
  const char **args = malloc(sizeof *args * (size_t)(2 * paths->n_inc + o->n_cflags + 2));
  if (!args)
    return NULL;
  int n = 0;
  args[n++] = "-xc";
  for (int i = 0; i < paths->n_inc; i++) {
    args[n++] = "-I";
    args[n++] = paths->inc[i];
  }
  for (int i = 0; i < o->n_cflags; i++) {
    const char *a = o->cflags[i];
    bool pair = takes_value(a) && i + 1 < o->n_cflags; /* -include F: both or neither */
    if (is_parser_flag(a)) {
      args[n++] = a;
      if (pair)
        args[n++] = o->cflags[i + 1];
    }
    if (pair)
      i++;
  }
  *n_args = n;
  return args;
}

dy_status dy_cfront_read(const dy_cfront_options *o, const dy_cf_paths *paths,
                         dy_cf_model *m, bool *shown, dy_error *err) {
  *shown = false;
  memset(m, 0, sizeof *m);
  dy_status fs = dy_cfront_check_flags(o, err);
  if (fs)
    return fs;
  FILE *probe = fopen(o->file, "r");
  if (!probe)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot open: %s", o->file, strerror(errno));
  fclose(probe);

  int n;
  const char **args = dy_cfront_parser_args(o, paths, &n);
  if (!args)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode ec = clang_parseTranslationUnit2(index, o->file, args, n, NULL, 0,
                                                    CXTranslationUnit_None, &tu);
  free(args);
  dy_status s = DY_OK;
  if (ec != CXError_Success) {
    s = dy_error_set(err, DY_STATUS_INTERNAL, "%s: libclang could not parse it (error %d)",
                     o->file, (int)ec);
  } else {
    int n_errors = report_diagnostics(tu);
    if (n_errors) {
      *shown = true;
      s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "%s: %d error%s", o->file, n_errors,
                       n_errors == 1 ? "" : "s");
    } else {
      markers ms;
      memset(&ms, 0, sizeof ms);
      clang_visitChildren(clang_getTranslationUnitCursor(tu), find_markers, &ms);
      s = check_markers(o->file, &ms, m, shown, err);
    }
  }
  if (tu)
    clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return s;
}
