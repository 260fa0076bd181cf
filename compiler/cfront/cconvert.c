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
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "cfront.h"

#define MAX_PASSES 200
#define MAX_VARS 64
#define MAX_EDITS 256

/* ---- a growable text ---- */

typedef struct {
  char *s;
  size_t n, cap;
  bool oom;
} text;

static void put_n(text *t, const char *s, size_t n) {
  if (t->oom)
    return;
  if (t->n + n + 1 > t->cap) {
    size_t cap = (t->n + n + 1) * 2;
    char *p = realloc(t->s, cap);
    if (!p) {
      t->oom = true;
      return;
    }
    t->s = p;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = 0;
}

static void put(text *t, const char *s) { put_n(t, s, strlen(s)); }

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(text *t, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof buf) {
    t->oom = true;   /* no generated line is that long */
    return;
  }
  put_n(t, buf, (size_t)n);
}

/* ---- one pass: the current text, parsed ---- */

typedef struct {
  const char *file;        /* the user's file: #line and errors name it */
  const char *src;         /* the current text */
  size_t len;
  CXTranslationUnit tu;
  CXFile cxfile;
  CXToken *toks;           /* the tokens of the whole text */
  unsigned n_toks;
  unsigned *tok_off;       /* each token's start offset */
  bool *shown;
  dy_error *err;
} pass;

static unsigned offset_of(CXSourceLocation l) {
  unsigned off;
  clang_getFileLocation(l, NULL, NULL, NULL, &off);
  return off;
}

static bool in_main_file(CXSourceLocation l) {
  return clang_Location_isFromMainFile(l) != 0;
}

/* Where offset `off` of the current text is in the user's file: read off
 * the text and its #line directives (libclang's location for an offset
 * inside a macro's argument would be the macro's). */
static void user_pos(const pass *p, unsigned off, char *file, size_t n, unsigned *line,
                     unsigned *col) {
  snprintf(file, n, "%s", p->file);
  unsigned ln = 1, bol = 0;
  for (unsigned i = 0; i < off && i < p->len; i++) {
    if (p->src[i] != '\n')
      continue;
    ln++;
    bol = i + 1;
    unsigned long directive;
    int used = 0;
    if (sscanf(p->src + bol, "#line %lu \"%n", &directive, &used) == 1 && used > 0) {
      /* the line after it is line `directive` of the file it names */
      const char *q = p->src + bol + used;
      size_t k = 0;
      while (q[k] && q[k] != '"' && q[k] != '\n')
        k++;
      snprintf(file, n, "%.*s", (int)k, q);
      ln = (unsigned)directive - 1;
    }
  }
  *line = ln;
  *col = off - bol + 1;
}

/* A refusal at offset off: printed with its caret, *shown set. */
static dy_status refuse(const pass *p, unsigned off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dy_status refuse(const pass *p, unsigned off, const char *fmt, ...) {
  char msg[1024], file[4096];
  unsigned line, col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  user_pos(p, off, file, sizeof file, &line, &col);
  return dy_cfront_source_error(file, line, col, p->shown, p->err, msg);
}

/* The index of the first token starting at or after off (n_toks if none). */
static unsigned tok_at(const pass *p, unsigned off) {
  unsigned lo = 0, hi = p->n_toks;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (p->tok_off[mid] < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static bool tok_is(const pass *p, unsigned i, const char *s) {
  if (i >= p->n_toks)
    return false;
  CXString t = clang_getTokenSpelling(p->tu, p->toks[i]);
  bool eq = strcmp(clang_getCString(t), s) == 0;
  clang_disposeString(t);
  return eq;
}

static unsigned tok_end(const pass *p, unsigned i) {
  return offset_of(clang_getRangeEnd(clang_getTokenExtent(p->tu, p->toks[i])));
}

/* The token closing the bracket at token i (n_toks if unbalanced). */
static unsigned matching(const pass *p, unsigned i) {
  int depth = 0;
  for (unsigned k = i; k < p->n_toks; k++) {
    if (tok_is(p, k, "(") || tok_is(p, k, "{") || tok_is(p, k, "["))
      depth++;
    else if (tok_is(p, k, ")") || tok_is(p, k, "}") || tok_is(p, k, "]"))
      if (--depth == 0)
        return k;
  }
  return p->n_toks;
}

/* A cursor's source range as offsets of the current text: [*b, *e), the
 * statement's own `;` included when one follows it. */
static void stmt_range(const pass *p, CXCursor c, unsigned *b, unsigned *e) {
  CXSourceRange r = clang_getCursorExtent(c);
  *b = offset_of(clang_getRangeStart(r));
  unsigned end = offset_of(clang_getRangeEnd(r));
  unsigned last = tok_at(p, end);   /* the first token at/after the end */
  if (last > 0 && (last == p->n_toks || p->tok_off[last] >= end))
    last--;
  if (last < p->n_toks && p->tok_off[last] < *b)
    last = tok_at(p, *b);
  *e = last < p->n_toks ? tok_end(p, last) : (unsigned)p->len;
  if (last + 1 < p->n_toks && tok_is(p, last + 1, ";") && clang_getCursorKind(c) != CXCursor_CompoundStmt &&
      !tok_is(p, last, ";") && !tok_is(p, last, "}"))
    *e = tok_end(p, last + 1);
}

static void put_src(text *t, const pass *p, unsigned b, unsigned e) {
  put_n(t, p->src + b, e - b);
}

/* `#line` for offset off, then spaces up to its column, so that what
 * follows is where the user wrote it (without directives: a newline and
 * the indentation). */
typedef struct {
  bool lines;
} style;

static void put_line_at(text *t, const pass *p, const style *st, unsigned off, bool pad) {
  char file[4096];
  unsigned line, col;
  user_pos(p, off, file, sizeof file, &line, &col);
  if (t->n && t->s[t->n - 1] != '\n')
    put(t, "\n");
  putf(t, "#line %u \"", line);
  for (const char *c = file; *c; c++) {
    if (*c == '"' || *c == '\\')
      put(t, "\\");
    put_n(t, c, 1);
  }
  put(t, "\"");
  (void)st;
  if (pad) {
    /* the indentation of the line it was on, for strip_lines */
    unsigned bol = off, ind = 0;
    while (bol > 0 && p->src[bol - 1] != '\n')
      bol--;
    while (bol + ind < off && (p->src[bol + ind] == ' ' || p->src[bol + ind] == '\t'))
      ind++;
    putf(t, " /* column %u, indent %u */", col, ind);
  }
  put(t, "\n");
  for (unsigned i = 1; pad && i < col; i++)
    put(t, " ");
}

/* ---- what a statement reads and assigns ---- */

typedef struct {
  CXCursor decl;
  char name[128];
  char type[256];          /* as written (typedef names kept) */
  bool tensor;             /* dy_tensor * */
  bool bad_type;           /* an array or a function pointer */
  bool assigned;
  unsigned first_ref, first_assign;
} var;

typedef struct {
  unsigned off;            /* the `return` token */
  unsigned end;            /* after its `;` */
  bool error_path;         /* return NULL / 0 / false */
} ret;

typedef struct {
  const pass *p;
  unsigned fb, fe;         /* the enclosing function */
  unsigned sb, se;         /* the statement */
  var vars[MAX_VARS];
  int n_vars;
  bool too_many;
  unsigned addr_of;        /* first &v of an outer variable, or ~0u */
  char addr_name[128];
  unsigned jump;           /* first goto or label, or ~0u */
  ret rets[MAX_EDITS];
  int n_rets;
  unsigned brk[MAX_EDITS]; /* break / continue at the loop's level */
  bool brk_is_continue[MAX_EDITS];
  int n_brk;
  unsigned nested_brk;     /* a break/continue of this loop under a plain statement */
  int loop_depth;          /* inner loops/switches being visited */
  int plain_depth;         /* non-loop statements between the loop and here */
} scan;

static bool is_outer_decl(const scan *s, CXCursor decl) {
  enum CXCursorKind k = clang_getCursorKind(decl);
  if (k != CXCursor_VarDecl && k != CXCursor_ParmDecl)
    return false;
  CXSourceLocation l = clang_getCursorLocation(decl);
  if (!in_main_file(l))
    return false;
  unsigned off = offset_of(l);
  return off >= s->fb && off < s->fe && !(off >= s->sb && off < s->se);
}

/* The token of a reference to `name` at offset off: for one in a macro's
 * argument (dy_add(y, x)) libclang gives the macro's name; the first token
 * spelled `name` within the macro's parentheses is taken instead. */
static unsigned ref_token(const pass *p, unsigned off, const char *name) {
  unsigned i = tok_at(p, off);
  if (tok_is(p, i, name) || !tok_is(p, i + 1, "("))
    return i;
  unsigned close = matching(p, i + 1);
  for (unsigned k = i + 2; k < close; k++)
    if (tok_is(p, k, name))
      return k;
  return i;
}

static const char *const assign_ops[] = {"=",  "+=", "-=",  "*=",  "/=", "%=", "&=",
                                         "|=", "^=", "<<=", ">>=", "++", "--"};

static bool is_assigned_at(const pass *p, unsigned i) {
  for (size_t k = 0; k < sizeof assign_ops / sizeof *assign_ops; k++)
    if (tok_is(p, i + 1, assign_ops[k]))
      return true;
  return i > 0 && (tok_is(p, i - 1, "++") || tok_is(p, i - 1, "--"));
}

static void note_ref(scan *s, CXCursor ref, CXCursor parent) {
  CXCursor decl = clang_getCursorReferenced(ref);
  if (!is_outer_decl(s, decl))
    return;
  const pass *p = s->p;
  CXString rs = clang_getCursorSpelling(ref);
  unsigned i = ref_token(p, offset_of(clang_getCursorLocation(ref)), clang_getCString(rs));
  clang_disposeString(rs);
  unsigned off = i < p->n_toks ? p->tok_off[i] : 0;
  int v = 0;
  while (v < s->n_vars && !clang_equalCursors(s->vars[v].decl, decl))
    v++;
  if (v == s->n_vars) {
    if (v == MAX_VARS) {
      s->too_many = true;
      return;
    }
    var *nv = &s->vars[s->n_vars++];
    memset(nv, 0, sizeof *nv);
    nv->decl = decl;
    nv->first_ref = off;
    nv->first_assign = ~0u;
    CXString name = clang_getCursorSpelling(decl);
    snprintf(nv->name, sizeof nv->name, "%s", clang_getCString(name));
    clang_disposeString(name);
    CXType ty = clang_getCursorType(decl);
    CXString ts = clang_getTypeSpelling(ty);
    snprintf(nv->type, sizeof nv->type, "%s", clang_getCString(ts));
    clang_disposeString(ts);
    CXString cs = clang_getTypeSpelling(clang_getCanonicalType(ty));
    const char *canon = clang_getCString(cs);
    nv->tensor = strcmp(canon, "struct dy_tensor *") == 0;
    nv->bad_type = strchr(canon, '[') || strchr(canon, '(');
    clang_disposeString(cs);
  }
  var *x = &s->vars[v];
  if (is_assigned_at(p, i) && !x->assigned) {
    x->assigned = true;
    x->first_assign = off;
  }
  if (clang_getCursorKind(parent) == CXCursor_UnaryOperator && i > 0 && tok_is(p, i - 1, "&") &&
      s->addr_of == ~0u) {
    s->addr_of = off;
    snprintf(s->addr_name, sizeof s->addr_name, "%s", x->name);
  }
}

static bool is_loop(enum CXCursorKind k) {
  return k == CXCursor_WhileStmt || k == CXCursor_ForStmt || k == CXCursor_DoStmt;
}

static enum CXChildVisitResult scan_visit(CXCursor c, CXCursor parent, CXClientData data) {
  scan *s = data;
  const pass *p = s->p;
  enum CXCursorKind k = clang_getCursorKind(c);
  unsigned off = offset_of(clang_getCursorLocation(c));
  switch (k) {
  case CXCursor_DeclRefExpr:
    note_ref(s, c, parent);
    break;
  case CXCursor_GotoStmt:
  case CXCursor_IndirectGotoStmt:
  case CXCursor_LabelStmt:
    if (s->jump == ~0u)
      s->jump = off;
    break;
  case CXCursor_ReturnStmt:
    if (s->n_rets < MAX_EDITS) {
      ret *r = &s->rets[s->n_rets++];
      r->off = off;
      unsigned i = tok_at(p, off), j = i + 1;
      int depth = 0;
      while (j < p->n_toks && !(depth == 0 && tok_is(p, j, ";"))) {
        if (tok_is(p, j, "(") || tok_is(p, j, "{"))
          depth++;
        if (tok_is(p, j, ")") || tok_is(p, j, "}"))
          depth--;
        j++;
      }
      r->end = j < p->n_toks ? tok_end(p, j) : (unsigned)p->len;
      r->error_path = j == i + 1 || (j == i + 2 && (tok_is(p, i + 1, "NULL") ||
                                                     tok_is(p, i + 1, "0") ||
                                                     tok_is(p, i + 1, "false")));
    }
    break;
  case CXCursor_BreakStmt:
  case CXCursor_ContinueStmt:
    if (s->loop_depth == 0 && !(k == CXCursor_BreakStmt && s->plain_depth < 0)) {
      if (s->plain_depth > 0) {
        if (s->nested_brk == ~0u)
          s->nested_brk = off;
      } else if (s->n_brk < MAX_EDITS) {
        s->brk_is_continue[s->n_brk] = k == CXCursor_ContinueStmt;
        s->brk[s->n_brk++] = off;
      }
    }
    break;
  default:
    break;
  }
  if (is_loop(k) || k == CXCursor_SwitchStmt) {
    /* a break inside belongs to it (a continue too, unless a switch) */
    s->loop_depth++;
    clang_visitChildren(c, scan_visit, s);
    s->loop_depth--;
    return CXChildVisit_Continue;
  }
  if (k == CXCursor_IfStmt || k == CXCursor_CompoundStmt) {
    /* a break under a plain if is convertible only when that if is */
    bool counts = k == CXCursor_IfStmt;
    s->plain_depth += counts;
    clang_visitChildren(c, scan_visit, s);
    s->plain_depth -= counts;
    return CXChildVisit_Continue;
  }
  return CXChildVisit_Recurse;
}

static void scan_stmt(scan *s, const pass *p, unsigned fb, unsigned fe, CXCursor stmt) {
  memset(s, 0, sizeof *s);
  s->p = p;
  s->fb = fb;
  s->fe = fe;
  stmt_range(p, stmt, &s->sb, &s->se);
  s->addr_of = s->jump = s->nested_brk = ~0u;
  clang_visitChildren(stmt, scan_visit, s);
}

/* Is variable decl referenced in [from, to) of the function? */
typedef struct {
  CXCursor decl;
  unsigned from, to;
  bool found;
} ref_after;

static enum CXChildVisitResult find_ref(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  ref_after *r = data;
  if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
      clang_equalCursors(clang_getCursorReferenced(c), r->decl)) {
    unsigned off = offset_of(clang_getCursorLocation(c));
    if (off >= r->from && off < r->to) {
      r->found = true;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/* ---- finding the statements to convert ---- */

typedef struct {
  const pass *p;
  CXCursor fn;             /* the function being searched */
  CXCursor stmt;           /* the first tensor-dependent statement found */
  bool found;
} finder;

static bool names_tensor_read(const pass *p, unsigned b, unsigned e) {
  for (unsigned i = tok_at(p, b); i < p->n_toks && p->tok_off[i] < e; i++)
    if (tok_is(p, i, "dy_bool") || tok_is(p, i, "dy_item") || tok_is(p, i, "dy_bool_at") ||
        tok_is(p, i, "dy_item_at"))
      return true;
  return false;
}

/* The condition's tokens (the parentheses after if/while, the middle part
 * of a for's header; for do/while the last parentheses): [*cb, *ce). */
static bool cond_tokens(const pass *p, CXCursor c, unsigned *cb, unsigned *ce) {
  unsigned b, e;
  stmt_range(p, c, &b, &e);
  unsigned i = tok_at(p, b);
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_DoStmt) {
    unsigned last = tok_at(p, e);   /* past the end */
    while (last > i && !tok_is(p, last - 1, ")"))
      last--;
    if (last == i)
      return false;
    unsigned close = last - 1;
    int depth = 0;
    unsigned open = close;
    for (;; open--) {
      if (tok_is(p, open, ")"))
        depth++;
      else if (tok_is(p, open, "(") && --depth == 0)
        break;
      if (open == i)
        return false;
    }
    *cb = open + 1;
    *ce = close;
    return true;
  }
  if (!tok_is(p, i + 1, "("))
    return false;
  unsigned close = matching(p, i + 1);
  if (close >= p->n_toks)
    return false;
  if (k != CXCursor_ForStmt) {
    *cb = i + 2;
    *ce = close;
    return true;
  }
  unsigned semi[2], n = 0;
  int depth = 0;
  for (unsigned j = i + 2; j < close && n < 2; j++) {
    if (tok_is(p, j, "(") || tok_is(p, j, "{") || tok_is(p, j, "["))
      depth++;
    else if (tok_is(p, j, ")") || tok_is(p, j, "}") || tok_is(p, j, "]"))
      depth--;
    else if (depth == 0 && tok_is(p, j, ";"))
      semi[n++] = j;
  }
  if (n < 2)
    return false;
  *cb = semi[0] + 1;
  *ce = semi[1];
  return true;
}

static enum CXChildVisitResult find_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  finder *f = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_IfStmt || is_loop(k)) {
    unsigned cb, ce;
    if (cond_tokens(f->p, c, &cb, &ce) && cb < ce &&
        names_tensor_read(f->p, f->p->tok_off[cb], f->p->tok_off[ce])) {
      f->stmt = c;
      f->found = true;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/* ---- the functions to search: DY_TO_STATIC and the outlined ones ---- */

typedef struct {
  CXCursor fns[256];
  int n;
} fn_list;

static enum CXChildVisitResult find_to_static(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  bool *yes = data;
  if (clang_getCursorKind(c) == CXCursor_AnnotateAttr) {
    CXString s = clang_getCursorSpelling(c);
    *yes = strncmp(clang_getCString(s), "dy2stc:to_static:", 17) == 0;
    clang_disposeString(s);
    if (*yes)
      return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult find_fns(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  fn_list *l = data;
  if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) ||
      !in_main_file(clang_getCursorLocation(c)) || l->n == 256)
    return CXChildVisit_Continue;
  bool yes = false;
  CXString name = clang_getCursorSpelling(c);
  yes = strncmp(clang_getCString(name), "dy_cv_", 6) == 0;
  clang_disposeString(name);
  if (!yes)
    clang_visitChildren(c, find_to_static, &yes);
  if (yes)
    l->fns[l->n++] = c;
  return CXChildVisit_Continue;
}

/* ---- rewriting ---- */

/* The next free number for dy_cv_N names in the text. */
static int next_id(const char *src) {
  int max = 0;
  for (const char *q = strstr(src, "dy_cv_"); q; q = strstr(q + 1, "dy_cv_")) {
    int n = atoi(q + 6);
    if (n > max)
      max = n;
  }
  return max + 1;
}

/* Where outlined code goes: the start of the line the function begins on,
 * moved above the lines of its markers (DY_TO_STATIC(...) before it). */
static unsigned insertion_point(const pass *p, CXCursor fn) {
  unsigned b, e;
  stmt_range(p, fn, &b, &e);
  unsigned at = b;
  while (at > 0 && p->src[at - 1] != '\n')
    at--;
  for (;;) {
    if (at == 0)
      break;
    unsigned prev = at - 1;
    while (prev > 0 && p->src[prev - 1] != '\n')
      prev--;
    const char *q = p->src + prev;
    while (*q == ' ' || *q == '\t')
      q++;
    if (strncmp(q, "DY_TO_STATIC", 12) != 0)
      break;
    at = prev;
  }
  return at;
}

/* A copy of [b, e) with edits: each ret of the scan inside the range is
 * rewritten (error paths to `return false;`). */
static void put_body(text *t, const pass *p, const scan *s, unsigned b, unsigned e) {
  unsigned at = b;
  for (int i = 0; i < s->n_rets; i++) {
    const ret *r = &s->rets[i];
    if (r->off < at || r->end > e || !r->error_path)
      continue;
    put_src(t, p, at, r->off);
    put(t, "return false;");
    at = r->end;
  }
  put_src(t, p, at, e);
}

/* What a failed dy_cond / dy_while makes the enclosing function return. */
static dy_status failure_value(const pass *p, CXCursor fn, unsigned at, const char **v) {
  CXType rt = clang_getCanonicalType(clang_getResultType(clang_getCursorType(fn)));
  if (rt.kind == CXType_Pointer)
    *v = "NULL";
  else if (rt.kind == CXType_Bool)
    *v = "false";
  else
    return refuse(p, at, "a tensor-dependent statement is converted only in a function "
                  "returning a pointer (NULL on error) or bool");
  return DY_OK;
}

/* The struct and the copies at the top of each outlined function. */
static void put_ctx_struct(text *t, int id, const scan *s) {
  if (!s->n_vars)
    return;
  putf(t, "struct dy_cv_%d {\n", id);
  for (int i = 0; i < s->n_vars; i++)
    putf(t, "  %s%s*%s;\n", s->vars[i].type,
         s->vars[i].type[strlen(s->vars[i].type) - 1] == '*' ? "" : " ", s->vars[i].name);
  put(t, "};\n");
}

/* carried: variables taken from dy_cv_in (the loop's carried values). */
static void put_prologue(text *t, int id, const scan *s, const int *carried_slot) {
  if (!s->n_vars) {
    put(t, "  (void)dy_cv_ctx;\n");
    return;
  }
  putf(t, "  struct dy_cv_%d *dy_cv_c = dy_cv_ctx;\n", id);
  for (int i = 0; i < s->n_vars; i++) {
    const var *v = &s->vars[i];
    const char *sp = v->type[strlen(v->type) - 1] == '*' ? "" : " ";
    if (carried_slot && carried_slot[i] >= 0)
      putf(t, "  %s%s%s = dy_cv_in[%d];\n", v->type, sp, v->name, carried_slot[i]);
    else
      putf(t, "  %s%s%s = *dy_cv_c->%s;\n", v->type, sp, v->name, v->name);
    putf(t, "  (void)%s;\n", v->name);
  }
  if (carried_slot)
    put(t, "  (void)dy_cv_c;\n");
}

static void put_ctx_init(text *t, int id, const scan *s) {
  if (!s->n_vars)
    return;
  putf(t, "  struct dy_cv_%d dy_cv_%d_ctx = {", id, id);
  for (int i = 0; i < s->n_vars; i++)
    putf(t, "%s&%s", i ? ", " : "", s->vars[i].name);
  put(t, "};\n");
}

/* The predicate expression for condition tokens [cb, ce): dy_bool(T) -> T,
 * !dy_bool(T) -> dy_equal(T, false). */
static dy_status predicate(const pass *p, unsigned cb, unsigned ce, text *pred) {
  bool neg = tok_is(p, cb, "!");
  unsigned i = cb + neg;
  if (tok_is(p, i, "dy_bool") && tok_is(p, i + 1, "(") && matching(p, i + 1) + 1 == ce) {
    unsigned close = matching(p, i + 1);
    unsigned b = tok_end(p, i + 1), e = p->tok_off[close];
    if (neg)
      put(pred, "dy_equal(");
    put_src(pred, p, b, e);
    if (neg)
      put(pred, ", dy_full(DY_BOOL, 0, NULL, 0))");
    return DY_OK;
  }
  bool item = false;
  for (unsigned j = cb; j < ce; j++)
    item = item || tok_is(p, j, "dy_item") || tok_is(p, j, "dy_item_at");
  if (item)
    return refuse(p, p->tok_off[cb],
                  "a condition on dy_item cannot be converted: write it as a bool tensor, "
                  "e.g. dy_bool(dy_greater(t, c)) for dy_item(t, &ok) > c");
  return refuse(p, p->tok_off[cb],
                "a tensor condition must be dy_bool(T) or !dy_bool(T) with T a bool tensor of "
                "one element (combine conditions with tensor ops, not && / ||)");
}

/* The checks common to if and loops. */
static dy_status check_common(const pass *p, const scan *s, const char *what) {
  if (s->too_many)
    return refuse(p, s->sb, "a tensor-dependent %s reads more than %d variables of the "
                  "function", what, MAX_VARS);
  if (s->jump != ~0u)
    return refuse(p, s->jump, "a goto or label inside a tensor-dependent %s cannot be "
                  "converted (the branches become separate functions)", what);
  if (s->addr_of != ~0u)
    return refuse(p, s->addr_of, "the address of '%s' is taken inside a tensor-dependent %s: "
                  "a pointer to a variable of the function would escape the outlined code",
                  s->addr_name, what);
  for (int i = 0; i < s->n_vars; i++)
    if (s->vars[i].bad_type)
      return refuse(p, s->vars[i].first_ref, "'%s' (%s) is read inside a tensor-dependent %s: "
                    "arrays and function pointers cannot be passed to the outlined code; use "
                    "a pointer variable", s->vars[i].name, s->vars[i].type, what);
  return DY_OK;
}

/* ---- if ---- */

typedef struct {
  const pass *p;
  style st;
  text out;
  CXCursor fn;
  unsigned fb, fe;
  text pred;               /* the predicate's expression */
} job;

static void collect_children(CXCursor c, CXCursor *kids, int *n, int max);
static dy_status rewrite_early_return(job *j, CXCursor stmt, const scan *s, int id,
                                      bool *done);
static dy_status rewrite_break(job *j, CXCursor stmt, const scan *s, int id, bool *done);

static enum CXChildVisitResult kid_visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  struct {
    CXCursor *kids;
    int n, max;
  } *k = data;
  if (k->n < k->max)
    k->kids[k->n++] = c;
  return CXChildVisit_Continue;
}

static void collect_children(CXCursor c, CXCursor *kids, int *n, int max) {
  struct {
    CXCursor *kids;
    int n, max;
  } k = {kids, 0, max};
  clang_visitChildren(c, kid_visit, &k);
  *n = k.n;
}

/* One outlined branch function. */
static void put_branch_fn(text *t, const job *j, const scan *s, int id, const char *which,
                          bool has_body, unsigned bb, unsigned be, const int *out_vars,
                          int n_out) {
  putf(t, "static bool dy_cv_%d_%s(void *dy_cv_ctx, dy_tensor **dy_cv_out) {\n", id, which);
  put_prologue(t, id, s, NULL);
  if (has_body) {
    if (j->st.lines)
      put_line_at(t, j->p, &j->st, bb, true);
    else
      put(t, "  ");
    put_body(t, j->p, s, bb, be);
    put(t, "\n");
  }
  for (int i = 0; i < n_out; i++)
    putf(t, "  dy_cv_out[%d] = %s;\n", i, s->vars[out_vars[i]].name);
  if (!n_out)
    put(t, "  (void)dy_cv_out;\n");
  put(t, "  return true;\n}\n");
}

/* call, its lines after the first indented as the statement at sb was. */
static void put_indented(text *t, const pass *p, const text *call, unsigned sb) {
  unsigned ls = sb;
  while (ls > 0 && (p->src[ls - 1] == ' ' || p->src[ls - 1] == '\t'))
    ls--;
  bool at_bol = ls == 0 || p->src[ls - 1] == '\n';
  bool after_line = false;   /* a line after #line is padded already */
  for (size_t i = 0; i < call->n; i++) {
    put_n(t, call->s + i, 1);
    if (call->s[i] != '\n')
      continue;
    const char *next = call->s + i + 1, *eol = strchr(next, '\n');
    bool directive = *next == '#';
    if (at_bol && *next && !directive && !after_line)
      put_src(t, p, ls, sb);
    const char *col = directive ? strstr(next, "/* column") : NULL;
    after_line = col && eol && col < eol;
  }
}

/* The text of the whole file with [sb, se) replaced by `call` and the
 * outlined code inserted at `at`. */
static void splice(job *j, unsigned at, const text *outlined, unsigned sb, unsigned se,
                   const text *call) {
  const pass *p = j->p;
  put_src(&j->out, p, 0, at);
  put_n(&j->out, outlined->s, outlined->n);
  if (j->st.lines)
    put_line_at(&j->out, p, &j->st, at, false);
  put_src(&j->out, p, at, sb);
  put_indented(&j->out, p, call, sb);
  if (j->st.lines)
    put_line_at(&j->out, p, &j->st, se, true);
  put_src(&j->out, p, se, (unsigned)p->len);
}

/* The end of a call site, `call` holding `  if (!dy_X(..., ` so far: the
 * context, `n, ARRAY)) return FAIL;`, the results copied back to their
 * variables; then the outlined code and the call are spliced in. */
static dy_status finish_call(job *j, const scan *s, int id, text *outl, text *call,
                             const int *vars, int n, const char *array, const char *fail) {
  if (s->n_vars)
    putf(call, "&dy_cv_%d_ctx", id);
  else
    put(call, "NULL");
  putf(call, ", %d, dy_cv_%d_%s))\n    return %s;\n", n, id, array, fail);
  for (int i = 0; i < n; i++)
    putf(call, "  %s = dy_cv_%d_%s[%d];\n", s->vars[vars[i]].name, id, array, i);
  put(call, "}");
  splice(j, insertion_point(j->p, j->fn), outl, s->sb, s->se, call);
  bool oom = j->pred.oom || outl->oom || call->oom;
  free(outl->s);
  free(call->s);
  return oom ? dy_error_set(j->p->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

static dy_status convert_if(job *j, CXCursor stmt, unsigned cb, unsigned ce, int id) {
  const pass *p = j->p;
  scan s;
  scan_stmt(&s, p, j->fb, j->fe, stmt);
  dy_status st = predicate(p, cb, ce, &j->pred);
  if (!st)
    st = check_common(p, &s, "if");
  if (st)
    return st;
  for (int i = 0; i < s.n_rets; i++)
    if (!s.rets[i].error_path) {
      bool done;
      if ((st = rewrite_early_return(j, stmt, &s, id, &done)) || done)
        return st;
      return refuse(p, s.rets[i].off, "a return of a value inside a tensor-dependent if is "
                    "converted only as the last statement of a branch of an if at the top "
                    "level of the function, the function ending with a return");
    }
  /* a C variable assigned inside and read after: its value would depend
   * on the branch the trace did not take */
  for (int i = 0; i < s.n_vars; i++) {
    const var *v = &s.vars[i];
    if (v->tensor || !v->assigned)
      continue;
    ref_after r = {v->decl, s.se, j->fe, false};
    clang_visitChildren(j->fn, find_ref, &r);
    if (r.found)
      return refuse(p, v->first_assign, "'%s' (%s) is assigned inside a tensor-dependent if "
                    "and read after it: only dy_tensor * variables can flow out of a "
                    "converted branch", v->name, v->type);
  }
  const char *fail = NULL;
  if ((st = failure_value(p, j->fn, s.sb, &fail)))
    return st;
  int out_vars[MAX_VARS], n_out = 0;
  for (int i = 0; i < s.n_vars; i++)
    if (s.vars[i].tensor && s.vars[i].assigned)
      out_vars[n_out++] = i;

  CXCursor kids[3];
  int n_kids;
  collect_children(stmt, kids, &n_kids, 3);
  unsigned tb, te, eb = 0, ee = 0;
  stmt_range(p, kids[1], &tb, &te);
  if (n_kids > 2)
    stmt_range(p, kids[2], &eb, &ee);

  char file[4096];
  unsigned line, col;
  user_pos(p, s.sb, file, sizeof file, &line, &col);
  text outl = {0}, call = {0};
  putf(&outl, "/* dy2stc convert: the if of %s:%u as dy_cond */\n", file, line);
  put_ctx_struct(&outl, id, &s);
  put_branch_fn(&outl, j, &s, id, "then", true, tb, te, out_vars, n_out);
  put_branch_fn(&outl, j, &s, id, "else", n_kids > 2, eb, ee, out_vars, n_out);
  put(&outl, "\n");

  put(&call, "{\n");
  put_ctx_init(&call, id, &s);
  putf(&call, "  dy_tensor *dy_cv_%d_out[%d];\n", id, n_out ? n_out : 1);
  if (j->st.lines)
    put_line_at(&call, p, &j->st, s.sb, false);
  putf(&call, "  if (!dy_cond(%s, dy_cv_%d_then, dy_cv_%d_else, ", j->pred.s, id, id);
  return finish_call(j, &s, id, &outl, &call, out_vars, n_out, "out", fail);
}


/* ---- early return and break/continue: rewritten into plain ifs first ---- */

/* A branch's last statement: itself, or a compound's last child. */
static CXCursor last_stmt(CXCursor branch) {
  if (clang_getCursorKind(branch) != CXCursor_CompoundStmt)
    return branch;
  CXCursor kids[512];
  int n;
  collect_children(branch, kids, &n, 512);
  return n ? kids[n - 1] : clang_getNullCursor();
}

static bool is_value_return(const scan *s, unsigned off) {
  for (int i = 0; i < s->n_rets; i++)
    if (s->rets[i].off == off)
      return !s->rets[i].error_path;
  return false;
}

/* Is stmt a direct child of compound? */
static bool child_of(const pass *p, CXCursor compound, CXCursor stmt) {
  CXCursor kids[1024];
  int n;
  collect_children(compound, kids, &n, 1024);
  unsigned b, e, kb, ke;
  stmt_range(p, stmt, &b, &e);
  for (int i = 0; i < n; i++) {
    stmt_range(p, kids[i], &kb, &ke);
    if (kb == b && ke == e)
      return true;
  }
  return false;
}

/* `return E;` at [r.off, r.end) as `NAME = E;`. */
static void put_assign_return(text *t, const pass *p, const ret *r, const char *name) {
  unsigned i = tok_at(p, r->off);
  unsigned semi = tok_at(p, r->end) - 1;
  putf(t, "%s = ", name);
  put_src(t, p, tok_end(p, i), p->tok_off[semi]);
  put(t, ";");
}

static const ret *find_ret(const scan *s, unsigned off) {
  for (int i = 0; i < s->n_rets; i++)
    if (s->rets[i].off == off)
      return &s->rets[i];
  return NULL;
}

/* if (C) { A; return E; } REST; return F;   (at the top of the function)
 *   -> dy_tensor *dy_cv_K_ret = NULL;
 *      if (C) { A; dy_cv_K_ret = E; } else { REST; dy_cv_K_ret = F; }
 *      return dy_cv_K_ret;
 * (or the mirror image when the else branch returns); the if is converted
 * by the next pass. *done false: not this shape (the caller refuses). */
static dy_status rewrite_early_return(job *j, CXCursor stmt, const scan *s, int id,
                                      bool *done) {
  const pass *p = j->p;
  *done = false;
  CXCursor fkids[64], body = clang_getNullCursor();
  int nf;
  collect_children(j->fn, fkids, &nf, 64);
  for (int i = 0; i < nf; i++)
    if (clang_getCursorKind(fkids[i]) == CXCursor_CompoundStmt)
      body = fkids[i];
  CXType rt = clang_getCanonicalType(clang_getResultType(clang_getCursorType(j->fn)));
  CXString rts = clang_getTypeSpelling(rt);
  bool tensor_fn = strcmp(clang_getCString(rts), "struct dy_tensor *") == 0;
  clang_disposeString(rts);
  if (clang_Cursor_isNull(body) || !tensor_fn || !child_of(p, body, stmt))
    return DY_OK;
  CXCursor kids[3];
  int n_kids;
  collect_children(stmt, kids, &n_kids, 3);
  CXCursor then_last = last_stmt(kids[1]);
  CXCursor else_last = n_kids > 2 ? last_stmt(kids[2]) : clang_getNullCursor();
  unsigned tl = offset_of(clang_getCursorLocation(then_last));
  unsigned el = clang_Cursor_isNull(else_last) ? ~0u
                                                : offset_of(clang_getCursorLocation(else_last));
  bool then_ret = clang_getCursorKind(then_last) == CXCursor_ReturnStmt && is_value_return(s, tl);
  bool else_ret = el != ~0u && clang_getCursorKind(else_last) == CXCursor_ReturnStmt &&
                  is_value_return(s, el);
  if (then_ret == else_ret)   /* neither, or both (then nothing follows) */
    return DY_OK;
  for (int i = 0; i < s->n_rets; i++)
    if (!s->rets[i].error_path && s->rets[i].off != (then_ret ? tl : el))
      return DY_OK;
  /* the rest of the function: it must end with its own return of a value */
  CXCursor bkids[1024];
  int nb;
  collect_children(body, bkids, &nb, 1024);
  if (nb == 0 || clang_getCursorKind(bkids[nb - 1]) != CXCursor_ReturnStmt)
    return DY_OK;
  unsigned bb, be, tb, te, eb = 0, ee = 0;
  stmt_range(p, body, &bb, &be);
  stmt_range(p, kids[1], &tb, &te);
  if (n_kids > 2)
    stmt_range(p, kids[2], &eb, &ee);
  unsigned close = be - 1;    /* the body's `}` */
  scan rest;
  memset(&rest, 0, sizeof rest);
  /* the returns of the rest: only its last statement returns a value */
  scan_stmt(&rest, p, j->fb, j->fe, body);
  unsigned final_off = offset_of(clang_getCursorLocation(bkids[nb - 1]));
  const ret *final_ret = find_ret(&rest, final_off);
  for (int i = 0; i < rest.n_rets; i++)
    if (!rest.rets[i].error_path && rest.rets[i].off >= s->se && rest.rets[i].off != final_off)
      return DY_OK;
  if (!final_ret || final_ret->error_path)
    return DY_OK;
  const ret *branch_ret = find_ret(s, then_ret ? tl : el);
  char name[64];
  snprintf(name, sizeof name, "dy_cv_%d_ret", id);
  bool l = j->st.lines;
  text *o = &j->out;
  put_src(o, p, 0, s->sb);
  putf(o, "dy_tensor *%s = NULL;\n", name);
  if (l)
    put_line_at(o, p, &j->st, s->sb, true);
  /* the branch that continues gets the rest */
  unsigned cont_b = then_ret ? eb : tb, cont_e = then_ret ? ee : te;
  unsigned at = s->sb;
  /* text up to the returning branch's return (or the continuing branch) */
  if (then_ret) {
    put_src(o, p, at, branch_ret->off);
    put_assign_return(o, p, branch_ret, name);
    put_src(o, p, branch_ret->end, te);
    at = te;
    if (n_kids > 2) {
      put_src(o, p, at, eb);
      put(o, "{\n");
      if (l)
        put_line_at(o, p, &j->st, eb, true);
      put_src(o, p, eb, ee);
      put(o, "\n");
      at = ee;
    } else {
      put(o, " else {\n");
    }
  } else {
    put_src(o, p, at, tb);
    put(o, "{\n");
    if (l)
      put_line_at(o, p, &j->st, tb, true);
    put_src(o, p, tb, te);
    put(o, "\n");
  }
  if (l)
    put_line_at(o, p, &j->st, s->se, true);
  put_src(o, p, s->se, final_ret->off);
  put_assign_return(o, p, final_ret, name);
  put_src(o, p, final_ret->end, close);
  put(o, "\n}");
  if (!then_ret) {
    /* then `else { ...; return E; }` */
    if (l)
      put_line_at(o, p, &j->st, te, true);
    put_src(o, p, te, branch_ret->off);
    put_assign_return(o, p, branch_ret, name);
    put_src(o, p, branch_ret->end, ee);
  }
  (void)cont_b;
  (void)cont_e;
  putf(o, "\n  return %s;\n", name);
  if (l)
    put_line_at(o, p, &j->st, close, true);
  put_src(o, p, close, (unsigned)p->len);
  *done = true;
  return DY_OK;
}

/* while (P) { A; if (Q) { B; break; } C }
 *   -> dy_tensor *dy_cv_K_brk = dy_full(DY_BOOL, 0, NULL, 0);
 *      while (dy_bool(dy_less(dy_cv_K_brk, P'))) {     (!brk && P on bools)
 *        A; if (Q) { B; dy_cv_K_brk = dy_full(DY_BOOL, 0, NULL, 1); } else { C }
 *      }
 * continue: the same without the flag. The break's if must be a tensor
 * if directly in the body (it is converted by a later pass). */
static dy_status rewrite_break(job *j, CXCursor stmt, const scan *s, int id, bool *done) {
  const pass *p = j->p;
  *done = false;
  CXCursor kids[2];
  int n_kids;
  collect_children(stmt, kids, &n_kids, 2);
  CXCursor body = kids[n_kids - 1];
  if (clang_getCursorKind(body) != CXCursor_CompoundStmt || s->n_brk != 0)
    return DY_OK;
  CXCursor bkids[1024];
  int nb;
  collect_children(body, bkids, &nb, 1024);
  for (int k = 0; k < nb; k++) {
    if (clang_getCursorKind(bkids[k]) != CXCursor_IfStmt)
      continue;
    unsigned cb, ce;
    if (!cond_tokens(p, bkids[k], &cb, &ce) || cb >= ce ||
        !names_tensor_read(p, p->tok_off[cb], p->tok_off[ce]))
      continue;
    CXCursor ik[3];
    int ni;
    collect_children(bkids[k], ik, &ni, 3);
    CXCursor last = last_stmt(ik[1]);
    enum CXCursorKind lk = clang_getCursorKind(last);
    if (lk != CXCursor_BreakStmt && lk != CXCursor_ContinueStmt)
      continue;
    /* every break/continue of the loop must be this one */
    unsigned loff = offset_of(clang_getCursorLocation(last));
    if (s->nested_brk != loff)
      return DY_OK;
    scan again = *s;
    (void)again;
    bool is_break = lk == CXCursor_BreakStmt;
    unsigned lb, le, ib, ie, bb, be, tb, te;
    stmt_range(p, last, &lb, &le);
    stmt_range(p, bkids[k], &ib, &ie);
    stmt_range(p, body, &bb, &be);
    stmt_range(p, ik[1], &tb, &te);
    char flag[64];
    snprintf(flag, sizeof flag, "dy_cv_%d_brk", id);
    bool l = j->st.lines;
    text *o = &j->out;
    put_src(o, p, 0, s->sb);
    unsigned wcb, wce;
    cond_tokens(p, stmt, &wcb, &wce);
    if (is_break) {
      putf(o, "dy_tensor *%s = dy_full(DY_BOOL, 0, NULL, 0);\n", flag);
      if (l)
        put_line_at(o, p, &j->st, s->sb, true);
      put_src(o, p, s->sb, p->tok_off[wcb]);
      putf(o, "dy_bool(dy_less(%s, ", flag);
      put(o, j->pred.s);
      put(o, "))");
      put_src(o, p, p->tok_off[wce], ib);
    } else {
      put_src(o, p, s->sb, ib);
    }
    put_src(o, p, ib, lb);
    if (is_break)
      putf(o, "%s = dy_full(DY_BOOL, 0, NULL, 1);", flag);
    put_src(o, p, le, te);
    if (ni > 2) {
      /* if (Q) {..} else E C  ->  else { E C } */
      unsigned eb, ee;
      stmt_range(p, ik[2], &eb, &ee);
      put_src(o, p, te, eb);
      put(o, "{\n");
      if (l)
        put_line_at(o, p, &j->st, eb, true);
      put_src(o, p, eb, ee);
    } else {
      put(o, " else {");
    }
    if (l)
      put_line_at(o, p, &j->st, ie, true);
    put_src(o, p, ie, be - 1);
    put(o, "\n}\n");
    if (l)
      put_line_at(o, p, &j->st, be - 1, true);
    put_src(o, p, be - 1, (unsigned)p->len);
    *done = true;
    return DY_OK;
  }
  return DY_OK;
}

/* ---- while (and for, rewritten to a while first) ---- */

static dy_status convert_while(job *j, CXCursor stmt, unsigned cb, unsigned ce, int id) {
  const pass *p = j->p;
  scan s;
  scan_stmt(&s, p, j->fb, j->fe, stmt);
  dy_status st = predicate(p, cb, ce, &j->pred);
  if (!st)
    st = check_common(p, &s, "loop");
  if (st)
    return st;
  for (int i = 0; i < s.n_rets; i++)
    if (!s.rets[i].error_path)
      return refuse(p, s.rets[i].off, "a return of a value inside a tensor-dependent loop "
                    "cannot be converted (break out of the loop and return after it)");
  if (s.nested_brk != ~0u) {
    bool done;
    if ((st = rewrite_break(j, stmt, &s, id, &done)) || done)
      return st;
  }
  if (s.nested_brk != ~0u)
    return refuse(p, s.nested_brk, "a break or continue of a tensor-dependent loop is "
                  "converted only directly in its body or in a tensor-dependent if of it");
  if (s.n_brk)
    return refuse(p, s.brk[0], "a %s directly in the body of a tensor-dependent loop cannot "
                  "be converted: put it in a tensor-dependent if (if (dy_bool(t)) %s;)",
                  s.brk_is_continue[0] ? "continue" : "break",
                  s.brk_is_continue[0] ? "continue" : "break");
  for (int i = 0; i < s.n_vars; i++) {
    const var *v = &s.vars[i];
    if (!v->tensor && v->assigned)
      return refuse(p, v->first_assign, "'%s' (%s) is assigned inside a tensor-dependent "
                    "loop: the loop is traced once, so only dy_tensor * variables can change "
                    "from one iteration to the next (make it a tensor)", v->name, v->type);
  }
  const char *fail = NULL;
  if ((st = failure_value(p, j->fn, s.sb, &fail)))
    return st;
  int slot[MAX_VARS], carried[MAX_VARS], n_carried = 0;
  for (int i = 0; i < s.n_vars; i++) {
    slot[i] = -1;
    if (s.vars[i].tensor && s.vars[i].assigned) {
      slot[i] = n_carried;
      carried[n_carried++] = i;
    }
  }
  if (!n_carried)
    return refuse(p, s.sb, "this tensor-dependent loop assigns no dy_tensor * variable of the "
                  "function: its condition could never change");
  CXCursor kids[2];
  int n_kids;
  collect_children(stmt, kids, &n_kids, 2);
  unsigned bb, be;
  stmt_range(p, kids[n_kids - 1], &bb, &be);

  char file[4096];
  unsigned line, col;
  user_pos(p, s.sb, file, sizeof file, &line, &col);
  text outl = {0}, call = {0};
  putf(&outl, "/* dy2stc convert: the loop of %s:%u as dy_while */\n", file, line);
  put_ctx_struct(&outl, id, &s);
  putf(&outl, "static dy_tensor *dy_cv_%d_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {\n",
       id);
  put_prologue(&outl, id, &s, slot);
  if (j->st.lines)
    put_line_at(&outl, p, &j->st, p->tok_off[cb], false);
  putf(&outl, "  return %s;\n}\n", j->pred.s);
  putf(&outl, "static bool dy_cv_%d_body(void *dy_cv_ctx, dy_tensor *const *dy_cv_in,\n"
              "                          dy_tensor **dy_cv_out) {\n", id);
  put_prologue(&outl, id, &s, slot);
  if (j->st.lines)
    put_line_at(&outl, p, &j->st, bb, true);
  else
    put(&outl, "  ");
  put_body(&outl, p, &s, bb, be);
  put(&outl, "\n");
  for (int i = 0; i < n_carried; i++)
    putf(&outl, "  dy_cv_out[%d] = %s;\n", i, s.vars[carried[i]].name);
  put(&outl, "  return true;\n}\n\n");

  put(&call, "{\n");
  put_ctx_init(&call, id, &s);
  putf(&call, "  dy_tensor *dy_cv_%d_carried[%d] = {", id, n_carried);
  for (int i = 0; i < n_carried; i++)
    putf(&call, "%s%s", i ? ", " : "", s.vars[carried[i]].name);
  put(&call, "};\n");
  if (j->st.lines)
    put_line_at(&call, p, &j->st, s.sb, false);
  putf(&call, "  if (!dy_while(dy_cv_%d_cond, dy_cv_%d_body, ", id, id);
  return finish_call(j, &s, id, &outl, &call, carried, n_carried, "carried", fail);
}

/* for (I; C; N) B  ->  { I; while (C) { B N; } } (the while converted by
 * the next pass). */
static dy_status rewrite_for(job *j, CXCursor stmt) {
  const pass *p = j->p;
  unsigned sb, se;
  stmt_range(p, stmt, &sb, &se);
  unsigned open = tok_at(p, sb) + 1, close = matching(p, open);
  unsigned semi[2], n = 0;
  int depth = 0;
  for (unsigned k = open + 1; k < close && n < 2; k++) {
    if (tok_is(p, k, "(") || tok_is(p, k, "{") || tok_is(p, k, "["))
      depth++;
    else if (tok_is(p, k, ")") || tok_is(p, k, "}") || tok_is(p, k, "]"))
      depth--;
    else if (depth == 0 && tok_is(p, k, ";"))
      semi[n++] = k;
  }
  CXCursor kids[4];
  int n_kids;
  collect_children(stmt, kids, &n_kids, 4);
  unsigned bb, be;
  stmt_range(p, kids[n_kids - 1], &bb, &be);
  scan s;
  scan_stmt(&s, p, j->fb, j->fe, stmt);
  for (int i = 0; i < s.n_brk; i++)
    if (s.brk_is_continue[i] && semi[1] + 1 < close)
      return refuse(p, s.brk[i], "continue in a tensor-dependent for loop with an increment "
                    "is not converted (it would skip the increment); use a while");
  text call = {0}, none = {0};
  bool l = j->st.lines;
  put(&call, "{\n");
  if (semi[0] > open + 1) {   /* the init */
    if (l)
      put_line_at(&call, p, &j->st, p->tok_off[open + 1], true);
    put_src(&call, p, p->tok_off[open + 1], tok_end(p, semi[0]));
    put(&call, "\n");
  }
  if (l)
    put_line_at(&call, p, &j->st, sb, true);
  put(&call, "while (");
  put_src(&call, p, tok_end(p, semi[0]), p->tok_off[semi[1]]);
  put(&call, ") {\n");
  if (l)
    put_line_at(&call, p, &j->st, bb, true);
  put_src(&call, p, bb, be);
  put(&call, "\n");
  if (semi[1] + 1 < close) {  /* the increment */
    if (l)
      put_line_at(&call, p, &j->st, p->tok_off[semi[1] + 1], true);
    put_src(&call, p, p->tok_off[semi[1] + 1], p->tok_off[close]);
    put(&call, ";\n");
  }
  put(&call, "}\n}");
  put_src(&j->out, p, 0, sb);
  put_indented(&j->out, p, &call, sb);
  if (l)
    put_line_at(&j->out, p, &j->st, se, true);
  put_src(&j->out, p, se, (unsigned)p->len);
  bool oom = call.oom;
  free(call.s);
  free(none.s);
  return oom ? dy_error_set(p->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

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
      p.tok_off[i] = offset_of(clang_getTokenLocation(p.tu, p.toks[i]));
    fn_list fl = {.n = 0};
    clang_visitChildren(clang_getTranslationUnitCursor(p.tu), find_fns, &fl);
    for (int i = 0; i < fl.n && !s && !*out; i++) {
      finder f = {.p = &p, .fn = fl.fns[i]};
      clang_visitChildren(fl.fns[i], find_stmt, &f);
      if (!f.found)
        continue;
      job j = {.p = &p, .st = *st, .fn = fl.fns[i]};
      stmt_range(&p, j.fn, &j.fb, &j.fe);
      unsigned cb, ce;
      cond_tokens(&p, f.stmt, &cb, &ce);
      int id = next_id(src);
      switch (clang_getCursorKind(f.stmt)) {
      case CXCursor_IfStmt:
        s = convert_if(&j, f.stmt, cb, ce, id);
        break;
      case CXCursor_WhileStmt:
        s = convert_while(&j, f.stmt, cb, ce, id);
        break;
      case CXCursor_ForStmt:
        s = rewrite_for(&j, f.stmt);
        break;
      default:
        s = refuse(&p, offset_of(clang_getCursorLocation(f.stmt)),
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
    put_n(&t, buf, n);
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
