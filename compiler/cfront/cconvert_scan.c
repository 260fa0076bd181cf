/* cconvert_scan.c - what the source converter looks at
 * (cconvert_internal.h): the variables a statement reads and assigns, its
 * returns, jumps, breaks and continues (cv_scan_stmt); the tensor-dependent
 * statements and the functions to search; a cursor's children.
 */
#include <stdio.h>
#include <string.h>

#include "cconvert_internal.h"

/* ---- what a statement reads and assigns ---- */

static bool is_outer_decl(const scan *s, CXCursor decl) {
  enum CXCursorKind k = clang_getCursorKind(decl);
  if (k != CXCursor_VarDecl && k != CXCursor_ParmDecl)
    return false;
  CXSourceLocation l = clang_getCursorLocation(decl);
  if (!cv_in_main_file(l))
    return false;
  unsigned off = cv_offset_of(l);
  return off >= s->fb && off < s->fe && !(off >= s->sb && off < s->se);
}

/* The token of a reference to `name` at offset off: for one in a macro's
 * argument (dy_add(y, x)) libclang gives the macro's name; the first token
 * spelled `name` within the macro's parentheses is taken instead. */
static unsigned ref_token(const pass *p, unsigned off, const char *name) {
  unsigned i = cv_tok_at(p, off);
  if (cv_tok_is(p, i, name) || !cv_tok_is(p, i + 1, "("))
    return i;
  unsigned close = cv_matching(p, i + 1);
  for (unsigned k = i + 2; k < close; k++)
    if (cv_tok_is(p, k, name))
      return k;
  return i;
}

static const char *const assign_ops[] = {"=",  "+=", "-=",  "*=",  "/=", "%=", "&=",
                                         "|=", "^=", "<<=", ">>=", "++", "--"};

static bool is_assigned_at(const pass *p, unsigned i) {
  for (size_t k = 0; k < sizeof assign_ops / sizeof *assign_ops; k++)
    if (cv_tok_is(p, i + 1, assign_ops[k]))
      return true;
  return i > 0 && (cv_tok_is(p, i - 1, "++") || cv_tok_is(p, i - 1, "--"));
}

static void note_ref(scan *s, CXCursor ref, CXCursor parent) {
  CXCursor decl = clang_getCursorReferenced(ref);
  if (!is_outer_decl(s, decl))
    return;
  const pass *p = s->p;
  CXString rs = clang_getCursorSpelling(ref);
  unsigned i = ref_token(p, cv_offset_of(clang_getCursorLocation(ref)), clang_getCString(rs));
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
  if (clang_getCursorKind(parent) == CXCursor_UnaryOperator && i > 0 && cv_tok_is(p, i - 1, "&") &&
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
  unsigned off = cv_offset_of(clang_getCursorLocation(c));
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
      unsigned i = cv_tok_at(p, off), j = i + 1;
      int depth = 0;
      while (j < p->n_toks && !(depth == 0 && cv_tok_is(p, j, ";"))) {
        if (cv_tok_is(p, j, "(") || cv_tok_is(p, j, "{"))
          depth++;
        if (cv_tok_is(p, j, ")") || cv_tok_is(p, j, "}"))
          depth--;
        j++;
      }
      r->end = j < p->n_toks ? cv_tok_end(p, j) : (unsigned)p->len;
      r->error_path = j == i + 1 || (j == i + 2 && (cv_tok_is(p, i + 1, "NULL") ||
                                                     cv_tok_is(p, i + 1, "0") ||
                                                     cv_tok_is(p, i + 1, "false")));
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

void cv_scan_stmt(scan *s, const pass *p, unsigned fb, unsigned fe, CXCursor stmt) {
  memset(s, 0, sizeof *s);
  s->p = p;
  s->fb = fb;
  s->fe = fe;
  cv_stmt_range(p, stmt, &s->sb, &s->se);
  s->addr_of = s->jump = s->nested_brk = ~0u;
  clang_visitChildren(stmt, scan_visit, s);
}

enum CXChildVisitResult cv_find_ref(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  ref_after *r = data;
  if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
      clang_equalCursors(clang_getCursorReferenced(c), r->decl)) {
    unsigned off = cv_offset_of(clang_getCursorLocation(c));
    if (off >= r->from && off < r->to) {
      r->found = true;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/* ---- finding the statements to convert ---- */

bool cv_names_tensor_read(const pass *p, unsigned b, unsigned e) {
  for (unsigned i = cv_tok_at(p, b); i < p->n_toks && p->tok_off[i] < e; i++)
    if (cv_tok_is(p, i, "dy_bool") || cv_tok_is(p, i, "dy_item") || cv_tok_is(p, i, "dy_bool_at") ||
        cv_tok_is(p, i, "dy_item_at"))
      return true;
  return false;
}

unsigned cv_for_semicolons(const pass *p, unsigned open, unsigned close, unsigned semi[2]) {
  unsigned n = 0;
  int depth = 0;
  for (unsigned j = open + 1; j < close && n < 2; j++) {
    if (cv_tok_is(p, j, "(") || cv_tok_is(p, j, "{") || cv_tok_is(p, j, "["))
      depth++;
    else if (cv_tok_is(p, j, ")") || cv_tok_is(p, j, "}") || cv_tok_is(p, j, "]"))
      depth--;
    else if (depth == 0 && cv_tok_is(p, j, ";"))
      semi[n++] = j;
  }
  return n;
}

/* The condition's tokens (the parentheses after if/while, the middle part
 * of a for's header; for do/while the last parentheses): [*cb, *ce). */
bool cv_cond_tokens(const pass *p, CXCursor c, unsigned *cb, unsigned *ce) {
  unsigned b, e;
  cv_stmt_range(p, c, &b, &e);
  unsigned i = cv_tok_at(p, b);
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_DoStmt) {
    unsigned last = cv_tok_at(p, e);   /* past the end */
    while (last > i && !cv_tok_is(p, last - 1, ")"))
      last--;
    if (last == i)
      return false;
    unsigned close = last - 1;
    int depth = 0;
    unsigned open = close;
    for (;; open--) {
      if (cv_tok_is(p, open, ")"))
        depth++;
      else if (cv_tok_is(p, open, "(") && --depth == 0)
        break;
      if (open == i)
        return false;
    }
    *cb = open + 1;
    *ce = close;
    return true;
  }
  if (!cv_tok_is(p, i + 1, "("))
    return false;
  unsigned close = cv_matching(p, i + 1);
  if (close >= p->n_toks)
    return false;
  if (k != CXCursor_ForStmt) {
    *cb = i + 2;
    *ce = close;
    return true;
  }
  unsigned semi[2];
  if (cv_for_semicolons(p, i + 1, close, semi) < 2)
    return false;
  *cb = semi[0] + 1;
  *ce = semi[1];
  return true;
}

enum CXChildVisitResult cv_find_stmt(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  finder *f = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_IfStmt || is_loop(k)) {
    unsigned cb, ce;
    if (cv_cond_tokens(f->p, c, &cb, &ce) && cb < ce &&
        cv_names_tensor_read(f->p, f->p->tok_off[cb], f->p->tok_off[ce])) {
      f->stmt = c;
      f->found = true;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/* ---- the functions to search: DY_TO_STATIC and the outlined ones ---- */

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

enum CXChildVisitResult cv_find_fns(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  fn_list *l = data;
  if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) ||
      !cv_in_main_file(clang_getCursorLocation(c)) || l->n == 256)
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

/* ---- AST children ---- */

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

void cv_collect_children(CXCursor c, CXCursor *kids, int *n, int max) {
  struct {
    CXCursor *kids;
    int n, max;
  } k = {kids, 0, max};
  clang_visitChildren(c, kid_visit, &k);
  *n = k.n;
}

/* A branch's last statement: itself, or a compound's last child. */
CXCursor cv_last_stmt(CXCursor branch) {
  if (clang_getCursorKind(branch) != CXCursor_CompoundStmt)
    return branch;
  CXCursor kids[512];
  int n;
  cv_collect_children(branch, kids, &n, 512);
  return n ? kids[n - 1] : clang_getNullCursor();
}
