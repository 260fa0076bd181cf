/* cconvert_if.c - a tensor-dependent if as dy_cond (cconvert_internal.h):
 * each branch an outlined function yielding the dy_tensor * variables
 * either assigns; an early return at the end of a branch of a top-level if
 * first rewritten so that the rest of the function is the other branch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cconvert_internal.h"

/* One outlined branch function. */
static void put_branch_fn(text *t, const job *j, const scan *s, int id, const char *which,
                          bool has_body, unsigned bb, unsigned be, const int *out_vars,
                          int n_out) {
  cv_putf(t, "static bool dy_cv_%d_%s(void *dy_cv_ctx, dy_tensor **dy_cv_out) {\n", id, which);
  cv_put_prologue(t, id, s, NULL);
  if (has_body) {
    if (j->st.lines)
      cv_put_line_at(t, j->p, &j->st, bb, true);
    else
      cv_put(t, "  ");
    cv_put_body(t, j->p, s, bb, be);
    cv_put(t, "\n");
  }
  for (int i = 0; i < n_out; i++)
    cv_putf(t, "  dy_cv_out[%d] = %s;\n", i, s->vars[out_vars[i]].name);
  if (!n_out)
    cv_put(t, "  (void)dy_cv_out;\n");
  cv_put(t, "  return true;\n}\n");
}

/* ---- early return: rewritten into plain ifs first ---- */

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
  cv_collect_children(compound, kids, &n, 1024);
  unsigned b, e, kb, ke;
  cv_stmt_range(p, stmt, &b, &e);
  for (int i = 0; i < n; i++) {
    cv_stmt_range(p, kids[i], &kb, &ke);
    if (kb == b && ke == e)
      return true;
  }
  return false;
}

/* `return E;` at [r.off, r.end) as `NAME = E;`. */
static void put_assign_return(text *t, const pass *p, const ret *r, const char *name) {
  unsigned i = cv_tok_at(p, r->off);
  unsigned semi = cv_tok_at(p, r->end) - 1;
  cv_putf(t, "%s = ", name);
  cv_put_src(t, p, cv_tok_end(p, i), p->tok_off[semi]);
  cv_put(t, ";");
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
  cv_collect_children(j->fn, fkids, &nf, 64);
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
  cv_collect_children(stmt, kids, &n_kids, 3);
  CXCursor then_last = cv_last_stmt(kids[1]);
  CXCursor else_last = n_kids > 2 ? cv_last_stmt(kids[2]) : clang_getNullCursor();
  unsigned tl = cv_offset_of(clang_getCursorLocation(then_last));
  unsigned el = clang_Cursor_isNull(else_last) ? ~0u
                                                : cv_offset_of(clang_getCursorLocation(else_last));
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
  cv_collect_children(body, bkids, &nb, 1024);
  if (nb == 0 || clang_getCursorKind(bkids[nb - 1]) != CXCursor_ReturnStmt)
    return DY_OK;
  unsigned bb, be, tb, te, eb = 0, ee = 0;
  cv_stmt_range(p, body, &bb, &be);
  cv_stmt_range(p, kids[1], &tb, &te);
  if (n_kids > 2)
    cv_stmt_range(p, kids[2], &eb, &ee);
  unsigned close = be - 1;    /* the body's `}` */
  scan rest;
  memset(&rest, 0, sizeof rest);
  /* the returns of the rest: only its last statement returns a value */
  cv_scan_stmt(&rest, p, j->fb, j->fe, body);
  unsigned final_off = cv_offset_of(clang_getCursorLocation(bkids[nb - 1]));
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
  cv_put_src(o, p, 0, s->sb);
  cv_putf(o, "dy_tensor *%s = NULL;\n", name);
  if (l)
    cv_put_line_at(o, p, &j->st, s->sb, true);
  /* the branch that continues gets the rest */
  unsigned cont_b = then_ret ? eb : tb, cont_e = then_ret ? ee : te;
  unsigned at = s->sb;
  /* text up to the returning branch's return (or the continuing branch) */
  if (then_ret) {
    cv_put_src(o, p, at, branch_ret->off);
    put_assign_return(o, p, branch_ret, name);
    cv_put_src(o, p, branch_ret->end, te);
    at = te;
    if (n_kids > 2) {
      cv_put_src(o, p, at, eb);
      cv_put(o, "{\n");
      if (l)
        cv_put_line_at(o, p, &j->st, eb, true);
      cv_put_src(o, p, eb, ee);
      cv_put(o, "\n");
      at = ee;
    } else {
      cv_put(o, " else {\n");
    }
  } else {
    cv_put_src(o, p, at, tb);
    cv_put(o, "{\n");
    if (l)
      cv_put_line_at(o, p, &j->st, tb, true);
    cv_put_src(o, p, tb, te);
    cv_put(o, "\n");
  }
  if (l)
    cv_put_line_at(o, p, &j->st, s->se, true);
  cv_put_src(o, p, s->se, final_ret->off);
  put_assign_return(o, p, final_ret, name);
  cv_put_src(o, p, final_ret->end, close);
  cv_put(o, "\n}");
  if (!then_ret) {
    /* then `else { ...; return E; }` */
    if (l)
      cv_put_line_at(o, p, &j->st, te, true);
    cv_put_src(o, p, te, branch_ret->off);
    put_assign_return(o, p, branch_ret, name);
    cv_put_src(o, p, branch_ret->end, ee);
  }
  (void)cont_b;
  (void)cont_e;
  cv_putf(o, "\n  return %s;\n", name);
  if (l)
    cv_put_line_at(o, p, &j->st, close, true);
  cv_put_src(o, p, close, (unsigned)p->len);
  *done = true;
  return DY_OK;
}

/* ---- the if ---- */

dy_status cv_convert_if(job *j, CXCursor stmt, unsigned cb, unsigned ce, int id) {
  const pass *p = j->p;
  scan s;
  cv_scan_stmt(&s, p, j->fb, j->fe, stmt);
  dy_status st = cv_predicate(p, cb, ce, &j->pred);
  if (!st)
    st = cv_check_common(p, &s, "if");
  if (st)
    return st;
  for (int i = 0; i < s.n_rets; i++)
    if (!s.rets[i].error_path) {
      bool done;
      if ((st = rewrite_early_return(j, stmt, &s, id, &done)) || done)
        return st;
      return cv_refuse(p, s.rets[i].off, "a return of a value inside a tensor-dependent if is "
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
    clang_visitChildren(j->fn, cv_find_ref, &r);
    if (r.found)
      return cv_refuse(p, v->first_assign, "'%s' (%s) is assigned inside a tensor-dependent if "
                       "and read after it: only dy_tensor * variables can flow out of a "
                       "converted branch", v->name, v->type);
  }
  const char *fail = NULL;
  if ((st = cv_failure_value(p, j->fn, s.sb, &fail)))
    return st;
  int out_vars[MAX_VARS], n_out = 0;
  for (int i = 0; i < s.n_vars; i++)
    if (s.vars[i].tensor && s.vars[i].assigned)
      out_vars[n_out++] = i;
  if (!n_out)
    return cv_refuse(p, s.sb, "this tensor-dependent if assigns no dy_tensor * variable of the "
                     "function in either branch: a traced if only chooses a value (assign the "
                     "tensors it computes to variables used after it)");

  CXCursor kids[3];
  int n_kids;
  cv_collect_children(stmt, kids, &n_kids, 3);
  unsigned tb, te, eb = 0, ee = 0;
  cv_stmt_range(p, kids[1], &tb, &te);
  if (n_kids > 2)
    cv_stmt_range(p, kids[2], &eb, &ee);

  char file[4096];
  unsigned line, col;
  cv_user_pos(p, s.sb, file, sizeof file, &line, &col);
  text outl = {0}, call = {0};
  cv_put(&outl, "/* dy2stc convert: the if of ");
  cv_put_comment_text(&outl, file);
  cv_putf(&outl, ":%u as dy_cond */\n", line);
  cv_put_ctx_struct(&outl, id, &s);
  put_branch_fn(&outl, j, &s, id, "then", true, tb, te, out_vars, n_out);
  put_branch_fn(&outl, j, &s, id, "else", n_kids > 2, eb, ee, out_vars, n_out);
  cv_put(&outl, "\n");

  cv_put(&call, "{\n");
  cv_put_ctx_init(&call, id, &s);
  cv_putf(&call, "  dy_tensor *dy_cv_%d_out[%d];\n", id, n_out ? n_out : 1);
  if (j->st.lines)
    cv_put_line_at(&call, p, &j->st, s.sb, false);
  cv_putf(&call, "  if (!dy_cond(%s, dy_cv_%d_then, dy_cv_%d_else, ", j->pred.s, id, id);
  return cv_finish_call(j, &s, id, &outl, &call, out_vars, n_out, "out", fail);
}
