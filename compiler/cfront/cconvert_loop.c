/* cconvert_loop.c - a tensor-dependent while as dy_while
 * (cconvert_internal.h): a condition and a body function over the carried
 * dy_tensor * variables; a for first rewritten as a while; a break or
 * continue in a tensor if of the body first rewritten into a carried flag
 * and the rest of the body in the else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cconvert_internal.h"

/* ---- break and continue: rewritten into plain ifs first ---- */

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
  cv_collect_children(stmt, kids, &n_kids, 2);
  CXCursor body = kids[n_kids - 1];
  if (clang_getCursorKind(body) != CXCursor_CompoundStmt || s->n_brk != 0)
    return DY_OK;
  CXCursor bkids[1024];
  int nb;
  cv_collect_children(body, bkids, &nb, 1024);
  for (int k = 0; k < nb; k++) {
    if (clang_getCursorKind(bkids[k]) != CXCursor_IfStmt)
      continue;
    unsigned cb, ce;
    if (!cv_cond_tokens(p, bkids[k], &cb, &ce) || cb >= ce ||
        !cv_names_tensor_read(p, p->tok_off[cb], p->tok_off[ce]))
      continue;
    CXCursor ik[3];
    int ni;
    cv_collect_children(bkids[k], ik, &ni, 3);
    CXCursor last = cv_last_stmt(ik[1]);
    enum CXCursorKind lk = clang_getCursorKind(last);
    if (lk != CXCursor_BreakStmt && lk != CXCursor_ContinueStmt)
      continue;
    /* every break/continue of the loop must be this one */
    unsigned loff = cv_offset_of(clang_getCursorLocation(last));
    if (s->nested_brk != loff)
      return DY_OK;
    scan again = *s;
    (void)again;
    bool is_break = lk == CXCursor_BreakStmt;
    unsigned lb, le, ib, ie, bb, be, tb, te;
    cv_stmt_range(p, last, &lb, &le);
    cv_stmt_range(p, bkids[k], &ib, &ie);
    cv_stmt_range(p, body, &bb, &be);
    cv_stmt_range(p, ik[1], &tb, &te);
    char flag[64];
    snprintf(flag, sizeof flag, "dy_cv_%d_brk", id);
    bool l = j->st.lines;
    text *o = &j->out;
    cv_put_src(o, p, 0, s->sb);
    unsigned wcb, wce;
    cv_cond_tokens(p, stmt, &wcb, &wce);
    if (is_break) {
      cv_putf(o, "dy_tensor *%s = dy_full(DY_BOOL, 0, NULL, 0);\n", flag);
      if (l)
        cv_put_line_at(o, p, &j->st, s->sb, true);
      cv_put_src(o, p, s->sb, p->tok_off[wcb]);
      cv_putf(o, "dy_bool(dy_less(%s, ", flag);
      cv_put(o, j->pred.s);
      cv_put(o, "))");
      cv_put_src(o, p, p->tok_off[wce], ib);
    } else {
      cv_put_src(o, p, s->sb, ib);
    }
    cv_put_src(o, p, ib, lb);
    if (is_break)
      cv_putf(o, "%s = dy_full(DY_BOOL, 0, NULL, 1);", flag);
    else if (clang_getCursorKind(ik[1]) != CXCursor_CompoundStmt)
      cv_put(o, "{ }"); /* an unbraced `if (Q) continue;`: `if (Q) { } else {...}` */
    cv_put_src(o, p, le, te);
    if (ni > 2) {
      /* if (Q) {..} else E C  ->  else { E C } */
      unsigned eb, ee;
      cv_stmt_range(p, ik[2], &eb, &ee);
      cv_put_src(o, p, te, eb);
      cv_put(o, "{\n");
      if (l)
        cv_put_line_at(o, p, &j->st, eb, true);
      cv_put_src(o, p, eb, ee);
    } else {
      cv_put(o, " else {");
    }
    if (l)
      cv_put_line_at(o, p, &j->st, ie, true);
    cv_put_src(o, p, ie, be - 1);
    cv_put(o, "\n}\n");
    if (l)
      cv_put_line_at(o, p, &j->st, be - 1, true);
    cv_put_src(o, p, be - 1, (unsigned)p->len);
    *done = true;
    return DY_OK;
  }
  return DY_OK;
}

/* ---- while (and for, rewritten to a while first) ---- */

dy_status cv_convert_while(job *j, CXCursor stmt, unsigned cb, unsigned ce, int id) {
  const pass *p = j->p;
  scan s;
  cv_scan_stmt(&s, p, j->fb, j->fe, stmt);
  dy_status st = cv_predicate(p, cb, ce, &j->pred);
  if (!st)
    st = cv_check_common(p, &s, "loop");
  if (st)
    return st;
  for (int i = 0; i < s.n_rets; i++)
    if (!s.rets[i].error_path)
      return cv_refuse(p, s.rets[i].off, "a return of a value inside a tensor-dependent loop "
                       "cannot be converted (break out of the loop and return after it)");
  if (s.nested_brk != ~0u) {
    bool done;
    if ((st = rewrite_break(j, stmt, &s, id, &done)) || done)
      return st;
  }
  if (s.nested_brk != ~0u)
    return cv_refuse(p, s.nested_brk, "a break or continue of a tensor-dependent loop is "
                     "converted only directly in its body or in a tensor-dependent if of it");
  if (s.n_brk)
    return cv_refuse(p, s.brk[0], "a %s directly in the body of a tensor-dependent loop cannot "
                     "be converted: put it in a tensor-dependent if (if (dy_bool(t)) %s;)",
                     s.brk_is_continue[0] ? "continue" : "break",
                     s.brk_is_continue[0] ? "continue" : "break");
  for (int i = 0; i < s.n_vars; i++) {
    const var *v = &s.vars[i];
    if (!v->tensor && v->assigned)
      return cv_refuse(p, v->first_assign, "'%s' (%s) is assigned inside a tensor-dependent "
                       "loop: the loop is traced once, so only dy_tensor * variables can change "
                       "from one iteration to the next (make it a tensor)", v->name, v->type);
  }
  const char *fail = NULL;
  if ((st = cv_failure_value(p, j->fn, s.sb, &fail)))
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
    return cv_refuse(p, s.sb, "this tensor-dependent loop assigns no dy_tensor * variable of the "
                     "function: its condition could never change");
  CXCursor kids[2];
  int n_kids;
  cv_collect_children(stmt, kids, &n_kids, 2);
  unsigned bb, be;
  cv_stmt_range(p, kids[n_kids - 1], &bb, &be);

  char file[4096];
  unsigned line, col;
  cv_user_pos(p, s.sb, file, sizeof file, &line, &col);
  text outl = {0}, call = {0};
  cv_put(&outl, "/* dy2stc convert: the loop of ");
  cv_put_comment_text(&outl, file);
  cv_putf(&outl, ":%u as dy_while */\n", line);
  cv_put_ctx_struct(&outl, id, &s);
  cv_putf(&outl, "static dy_tensor *dy_cv_%d_cond(void *dy_cv_ctx, dy_tensor *const *dy_cv_in) {\n",
          id);
  cv_put_prologue(&outl, id, &s, slot);
  if (j->st.lines)
    cv_put_line_at(&outl, p, &j->st, p->tok_off[cb], false);
  cv_putf(&outl, "  return %s;\n}\n", j->pred.s);
  cv_putf(&outl, "static bool dy_cv_%d_body(void *dy_cv_ctx, dy_tensor *const *dy_cv_in,\n"
              "                          dy_tensor **dy_cv_out) {\n", id);
  cv_put_prologue(&outl, id, &s, slot);
  if (j->st.lines)
    cv_put_line_at(&outl, p, &j->st, bb, true);
  else
    cv_put(&outl, "  ");
  cv_put_body(&outl, p, &s, bb, be);
  cv_put(&outl, "\n");
  for (int i = 0; i < n_carried; i++)
    cv_putf(&outl, "  dy_cv_out[%d] = %s;\n", i, s.vars[carried[i]].name);
  cv_put(&outl, "  return true;\n}\n\n");

  cv_put(&call, "{\n");
  cv_put_ctx_init(&call, id, &s);
  cv_putf(&call, "  dy_tensor *dy_cv_%d_carried[%d] = {", id, n_carried);
  for (int i = 0; i < n_carried; i++)
    cv_putf(&call, "%s%s", i ? ", " : "", s.vars[carried[i]].name);
  cv_put(&call, "};\n");
  if (j->st.lines)
    cv_put_line_at(&call, p, &j->st, s.sb, false);
  cv_putf(&call, "  if (!dy_while(dy_cv_%d_cond, dy_cv_%d_body, ", id, id);
  return cv_finish_call(j, &s, id, &outl, &call, carried, n_carried, "carried", fail);
}

/* for (I; C; N) B  ->  { I; while (C) { B N; } } (the while converted by
 * the next pass). */
dy_status cv_rewrite_for(job *j, CXCursor stmt) {
  const pass *p = j->p;
  unsigned sb, se;
  cv_stmt_range(p, stmt, &sb, &se);
  unsigned open = cv_tok_at(p, sb) + 1, close = cv_matching(p, open);
  unsigned semi[2];
  cv_for_semicolons(p, open, close, semi);
  CXCursor kids[4];
  int n_kids;
  cv_collect_children(stmt, kids, &n_kids, 4);
  unsigned bb, be;
  cv_stmt_range(p, kids[n_kids - 1], &bb, &be);
  scan s;
  cv_scan_stmt(&s, p, j->fb, j->fe, stmt);
  for (int i = 0; i < s.n_brk; i++)
    if (s.brk_is_continue[i] && semi[1] + 1 < close)
      return cv_refuse(p, s.brk[i], "continue in a tensor-dependent for loop with an increment "
                       "is not converted (it would skip the increment); use a while");
  text call = {0}, none = {0};
  bool l = j->st.lines;
  cv_put(&call, "{\n");
  if (semi[0] > open + 1) {   /* the init */
    if (l)
      cv_put_line_at(&call, p, &j->st, p->tok_off[open + 1], true);
    cv_put_src(&call, p, p->tok_off[open + 1], cv_tok_end(p, semi[0]));
    cv_put(&call, "\n");
  }
  if (l)
    cv_put_line_at(&call, p, &j->st, sb, true);
  cv_put(&call, "while (");
  cv_put_src(&call, p, cv_tok_end(p, semi[0]), p->tok_off[semi[1]]);
  cv_put(&call, ") {\n");
  if (l)
    cv_put_line_at(&call, p, &j->st, bb, true);
  cv_put_src(&call, p, bb, be);
  cv_put(&call, "\n");
  if (semi[1] + 1 < close) {  /* the increment */
    if (l)
      cv_put_line_at(&call, p, &j->st, p->tok_off[semi[1] + 1], true);
    cv_put_src(&call, p, p->tok_off[semi[1] + 1], p->tok_off[close]);
    cv_put(&call, ";\n");
  }
  cv_put(&call, "}\n}");
  cv_put_src(&j->out, p, 0, sb);
  cv_put_indented(&j->out, p, &call, sb);
  if (l)
    cv_put_line_at(&j->out, p, &j->st, se, true);
  cv_put_src(&j->out, p, se, (unsigned)p->len);
  bool oom = call.oom;
  free(call.s);
  free(none.s);
  return oom ? dy_error_set(p->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}
