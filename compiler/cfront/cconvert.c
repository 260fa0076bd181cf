/* cconvert.c - source conversion of tensor-dependent control flow inside
 * the DY_TO_STATIC function (Paddle's convert_ifelse / convert_while), for
 * `dy2stc convert net.c` and, before tracing, `dy2stc compile net.c`.
 *
 * An `if`, `while` or `for` whose condition reads a tensor (names dy_bool
 * or dy_item) is rewritten, through libclang's AST and source ranges (text
 * edits by ranges, as clang's Rewriter does), into outlined functions plus
 * a dy_cond / dy_while call (runtime/dy_control.h):
 *
 *   if (dy_bool(dy_greater(s, t))) {       struct dy_cv_1 { dy_tensor **x; dy_tensor **y; };
 *     y = dy_relu(x);                      static bool dy_cv_1_then(void *dy_cv_ctx,
 *   } else {                        ==>                             dy_tensor **dy_cv_out) {
 *     y = dy_neg(x);                         ...x, y copied from the context...
 *   }                                        { y = dy_relu(x); }
 *                                            dy_cv_out[0] = y;  return true;
 *                                          }   (and dy_cv_1_else)
 *                                          ... in the function:
 *                                          { struct dy_cv_1 dy_cv_1_ctx = {&x, &y};
 *                                            dy_tensor *dy_cv_1_out[1];
 *                                            if (!dy_cond(dy_greater(s, t), dy_cv_1_then,
 *                                                         dy_cv_1_else, &dy_cv_1_ctx, 1,
 *                                                         dy_cv_1_out))
 *                                              return NULL;
 *                                            y = dy_cv_1_out[0]; }
 *
 * - The context struct points at every variable of the enclosing function
 *   the statement reads or assigns; each outlined function starts with a
 *   copy of them. The `dy_tensor *` variables assigned inside become the
 *   cond's outputs / the loop's carried values; a branch that does not
 *   assign one yields the value it had.
 * - The condition is `dy_bool(T)` or `!dy_bool(T)` (T a bool tensor of one
 *   element; the negation is dy_equal(T, false)).
 * - `for (I; C; N) B` becomes `{ I; while (C) { B N; } }` first.
 * - `return NULL;` (or 0 / false) inside is the error path and becomes
 *   `return false;` of the outlined function; a failed dy_cond / dy_while
 *   returns NULL (false in an outlined function) in turn.
 * - An early `return E;` as the last statement of a branch of a converted
 *   if at the top of the function: the rest of the function moves into the
 *   other branch, both branches assign a result variable, and the function
 *   returns it after the cond (Paddle's return transformer).
 * - `break` in a converted loop (directly in the body or in a converted if
 *   of it): a bool tensor flag is carried through the loop, set where the
 *   loop broke, the rest of the body runs only while it is false, and the
 *   condition becomes !flag && C. `continue` likewise with a flag reset at
 *   the top of each iteration.
 * Statements nested in converted ones are converted in later passes: after
 * each statement the text is parsed again, until none is left. `#line`
 * directives (and padding to the original column) keep every copied piece
 * at its place in the user's file, so later passes' errors, clang's
 * diagnostics and the ops' source lines point at what the user wrote.
 *
 * Refused, as `file:line:col: error: reason` with the line and a caret: a
 * goto or label inside; the address of a variable of the function taken
 * inside (it would escape the outlined function); a non-tensor variable
 * assigned in a converted if and read after it, or assigned in a converted
 * loop; an array or function-pointer variable read inside; a condition
 * that is not dy_bool(T) / !dy_bool(T) (dy_item comparisons); a do/while on
 * a tensor; a return of a value anywhere else than the end of a branch of
 * a top-level converted if; a return in a converted loop; a break or
 * continue in a nested non-converted statement of a converted loop. A
 * variable whose tensor type differs between the branches is dy_cond's
 * error at run time (with the if's line).
 *
 * This file holds the passes (one_pass: parse, find the first statement,
 * convert it) and dy_cconvert; the conversions are in cconvert_if.c and
 * cconvert_loop.c, what they share below them (cconvert_internal.h lists
 * the floors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cconvert_internal.h"

#define MAX_PASSES 200

/* ---- the passes ---- */

/* clang's errors, at the user's positions (#line-aware); the count. */
static int report_errors(const pass *p) {
  int n_errors = 0;
  unsigned n = clang_getNumDiagnostics(p->tu);
  for (unsigned i = 0; i < n; i++) {
    CXDiagnostic d = clang_getDiagnostic(p->tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXString f, msg = clang_getDiagnosticSpelling(d);
      unsigned line, col;
      clang_getPresumedLocation(clang_getDiagnosticLocation(d), &f, &line, &col);
      dy_cfront_print_source_error(clang_getCString(f), line, col, clang_getCString(msg));
      clang_disposeString(f);
      clang_disposeString(msg);
      n_errors++;
    }
    clang_disposeDiagnostic(d);
  }
  return n_errors;
}

/* One pass over src: *out is the text with one more statement rewritten,
 * or NULL when there was none left. */
static dy_status one_pass(CXIndex index, const char *file, const char *const *args,
                          int n_args, const char *src, const style *st, int pass_no,
                          char **out, bool *shown, dy_error *err) {
  *out = NULL;
  pass p = {.file = file, .src = src, .len = strlen(src), .shown = shown, .err = err};
  struct CXUnsavedFile uf = {file, src, (unsigned long)p.len};
  enum CXErrorCode ec = clang_parseTranslationUnit2(index, file, args, n_args, &uf, 1,
                                                    CXTranslationUnit_None, &p.tu);
  if (ec != CXError_Success)
    return dy_error_set(err, DY_STATUS_INTERNAL, "%s: libclang could not parse it (error %d)",
                        file, (int)ec);
  dy_status s = DY_OK;
  int n_errors = report_errors(&p);
  if (n_errors) {
    *shown = true;
    s = pass_no == 0
            ? dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "%s: %d error%s", file, n_errors,
                           n_errors == 1 ? "" : "s")
            : dy_error_set(err, DY_STATUS_INTERNAL, "%s: the converted source does not compile "
                           "(a bug of dy2stc convert; the errors are above)", file);
    clang_disposeTranslationUnit(p.tu);
    return s;
  }
  p.cxfile = clang_getFile(p.tu, file);
  CXSourceRange all = clang_getRange(clang_getLocationForOffset(p.tu, p.cxfile, 0),
                                     clang_getLocationForOffset(p.tu, p.cxfile, (unsigned)p.len));
  clang_tokenize(p.tu, all, &p.toks, &p.n_toks);
  p.tok_off = malloc(sizeof *p.tok_off * (p.n_toks + 1));
  if (!p.tok_off) {
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  } else {
    for (unsigned i = 0; i < p.n_toks; i++)
      p.tok_off[i] = cv_offset_of(clang_getTokenLocation(p.tu, p.toks[i]));
    fn_list fl = {.n = 0};
    clang_visitChildren(clang_getTranslationUnitCursor(p.tu), cv_find_fns, &fl);
    for (int i = 0; i < fl.n && !s && !*out; i++) {
      finder f = {.p = &p, .fn = fl.fns[i]};
      clang_visitChildren(fl.fns[i], cv_find_stmt, &f);
      if (!f.found)
        continue;
      job j = {.p = &p, .st = *st, .fn = fl.fns[i]};
      cv_stmt_range(&p, j.fn, &j.fb, &j.fe);
      unsigned cb, ce;
      cv_cond_tokens(&p, f.stmt, &cb, &ce);
      int id = cv_next_id(src);
      switch (clang_getCursorKind(f.stmt)) {
      case CXCursor_IfStmt:
        s = cv_convert_if(&j, f.stmt, cb, ce, id);
        break;
      case CXCursor_WhileStmt:
        s = cv_convert_while(&j, f.stmt, cb, ce, id);
        break;
      case CXCursor_ForStmt:
        s = cv_rewrite_for(&j, f.stmt);
        break;
      default:
        s = cv_refuse(&p, cv_offset_of(clang_getCursorLocation(f.stmt)),
                      "a do/while loop on a tensor cannot be converted: write it as a while");
        break;
      }
      if (!s && j.out.oom)
        s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      free(j.pred.s);
      if (s)
        free(j.out.s);
      else
        *out = j.out.s;
    }
  }
  free(p.tok_off);
  if (p.toks)
    clang_disposeTokens(p.tu, p.toks, p.n_toks);
  clang_disposeTranslationUnit(p.tu);
  return s;
}

/* Drop the #line directives of the conversion (for reading): each one's
 * next line loses the padding that aligned it. */
static char *strip_lines(char *src) {
  char *w = src;
  const char *r = src;
  bool realign = false;
  int indent = 0;
  while (*r) {
    const char *eol = strchr(r, '\n');
    size_t n = eol ? (size_t)(eol - r + 1) : strlen(r);
    if (strncmp(r, "#line ", 6) == 0) {
      const char *c = strstr(r, ", indent ");
      realign = c && c < r + n;
      indent = realign ? atoi(c + 9) : 0;
    } else {
      const char *q = r;
      if (realign) {
        while (q < r + n && (*q == ' ' || *q == '\t'))
          q++;
        if (q < r + n && *q != '\n') {
          for (int k = 0; k < indent && w < q; k++)
            *w++ = ' ';
        } else {
          q = r + n;   /* only the padding: the line goes */
        }
      }
      memmove(w, q, (size_t)(r + n - q));
      w += r + n - q;
      realign = false;
    }
    r += n;
  }
  *w = 0;
  return src;
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  text t = {0};
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    cv_put_n(&t, buf, n);
  fclose(f);
  if (t.oom || !t.s) {
    free(t.s);
    return t.oom ? NULL : calloc(1, 1);
  }
  return t.s;
}

dy_status dy_cconvert(const dy_cfront_options *o, const dy_cf_paths *paths,
                      bool line_directives, char **out, int *n_converted, bool *shown,
                      dy_error *err) {
  *out = NULL;
  *n_converted = 0;
  *shown = false;
  dy_status fs = dy_cfront_check_flags(o, err);
  if (fs)
    return fs;
  char *src = read_all(o->file);
  if (!src)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot read it", o->file);
  int n_args;
  const char **args = dy_cfront_parser_args(o, paths, &n_args);
  if (!args) {
    free(src);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  style st = {.lines = true};
  CXIndex index = clang_createIndex(0, 0);
  dy_status s = DY_OK;
  int pass_no = 0;
  for (;; pass_no++) {
    if (pass_no == MAX_PASSES) {
      s = dy_error_set(err, DY_STATUS_INTERNAL, "%s: more than %d statements to convert",
                       o->file, MAX_PASSES);
      break;
    }
    char *next;
    s = one_pass(index, o->file, args, n_args, src, &st, pass_no, &next, shown, err);
    if (s || !next)
      break;
    free(src);
    src = next;
    (*n_converted)++;
  }
  clang_disposeIndex(index);
  free(args);
  if (s) {
    free(src);
    return s;
  }
  *out = line_directives ? src : strip_lines(src);
  return DY_OK;
}
