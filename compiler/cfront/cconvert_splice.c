/* cconvert_splice.c - the rewriting the if and the loop conversions share
 * (cconvert_internal.h): the context struct and the prologue of the
 * outlined functions, the predicate, the common refusals, and the call
 * site spliced into the text with the outlined code above the function.
 */
#include <stdlib.h>
#include <string.h>

#include "cconvert_internal.h"

/* ---- rewriting ---- */

/* The next free number for dy_cv_N names in the text. */
int cv_next_id(const char *src) {
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
  cv_stmt_range(p, fn, &b, &e);
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
void cv_put_body(text *t, const pass *p, const scan *s, unsigned b, unsigned e) {
  unsigned at = b;
  for (int i = 0; i < s->n_rets; i++) {
    const ret *r = &s->rets[i];
    if (r->off < at || r->end > e || !r->error_path)
      continue;
    cv_put_src(t, p, at, r->off);
    cv_put(t, "return false;");
    at = r->end;
  }
  cv_put_src(t, p, at, e);
}

/* What a failed dy_cond / dy_while makes the enclosing function return. */
dy_status cv_failure_value(const pass *p, CXCursor fn, unsigned at, const char **v) {
  CXType rt = clang_getCanonicalType(clang_getResultType(clang_getCursorType(fn)));
  if (rt.kind == CXType_Pointer)
    *v = "NULL";
  else if (rt.kind == CXType_Bool)
    *v = "false";
  else
    return cv_refuse(p, at, "a tensor-dependent statement is converted only in a function "
                     "returning a pointer (NULL on error) or bool");
  return DY_OK;
}

/* The struct and the copies at the top of each outlined function. */
void cv_put_ctx_struct(text *t, int id, const scan *s) {
  if (!s->n_vars)
    return;
  cv_putf(t, "struct dy_cv_%d {\n", id);
  for (int i = 0; i < s->n_vars; i++)
    cv_putf(t, "  %s%s*%s;\n", s->vars[i].type,
            s->vars[i].type[strlen(s->vars[i].type) - 1] == '*' ? "" : " ", s->vars[i].name);
  cv_put(t, "};\n");
}

/* carried: variables taken from dy_cv_in (the loop's carried values). */
void cv_put_prologue(text *t, int id, const scan *s, const int *carried_slot) {
  if (!s->n_vars) {
    cv_put(t, "  (void)dy_cv_ctx;\n");
    return;
  }
  cv_putf(t, "  struct dy_cv_%d *dy_cv_c = dy_cv_ctx;\n", id);
  for (int i = 0; i < s->n_vars; i++) {
    const var *v = &s->vars[i];
    const char *sp = v->type[strlen(v->type) - 1] == '*' ? "" : " ";
    if (carried_slot && carried_slot[i] >= 0)
      cv_putf(t, "  %s%s%s = dy_cv_in[%d];\n", v->type, sp, v->name, carried_slot[i]);
    else
      cv_putf(t, "  %s%s%s = *dy_cv_c->%s;\n", v->type, sp, v->name, v->name);
    cv_putf(t, "  (void)%s;\n", v->name);
  }
  if (carried_slot)
    cv_put(t, "  (void)dy_cv_c;\n");
}

void cv_put_ctx_init(text *t, int id, const scan *s) {
  if (!s->n_vars)
    return;
  cv_putf(t, "  struct dy_cv_%d dy_cv_%d_ctx = {", id, id);
  for (int i = 0; i < s->n_vars; i++)
    cv_putf(t, "%s&%s", i ? ", " : "", s->vars[i].name);
  cv_put(t, "};\n");
}

/* The predicate expression for condition tokens [cb, ce): dy_bool(T) -> T,
 * !dy_bool(T) -> dy_equal(T, false). */
dy_status cv_predicate(const pass *p, unsigned cb, unsigned ce, text *pred) {
  bool neg = cv_tok_is(p, cb, "!");
  unsigned i = cb + neg;
  if (cv_tok_is(p, i, "dy_bool") && cv_tok_is(p, i + 1, "(") && cv_matching(p, i + 1) + 1 == ce) {
    unsigned close = cv_matching(p, i + 1);
    unsigned b = cv_tok_end(p, i + 1), e = p->tok_off[close];
    if (neg)
      cv_put(pred, "dy_equal(");
    cv_put_src(pred, p, b, e);
    if (neg)
      cv_put(pred, ", dy_full(DY_BOOL, 0, NULL, 0))");
    return DY_OK;
  }
  bool item = false;
  for (unsigned j = cb; j < ce; j++)
    item = item || cv_tok_is(p, j, "dy_item") || cv_tok_is(p, j, "dy_item_at");
  if (item)
    return cv_refuse(p, p->tok_off[cb],
                     "a condition on dy_item cannot be converted: write it as a bool tensor, "
                     "e.g. dy_bool(dy_greater(t, c)) for dy_item(t, &ok) > c");
  return cv_refuse(p, p->tok_off[cb],
                   "a tensor condition must be dy_bool(T) or !dy_bool(T) with T a bool tensor of "
                   "one element (combine conditions with tensor ops, not && / ||)");
}

/* The checks common to if and loops. */
dy_status cv_check_common(const pass *p, const scan *s, const char *what) {
  if (s->too_many)
    return cv_refuse(p, s->sb, "a tensor-dependent %s reads more than %d variables of the "
                     "function", what, MAX_VARS);
  if (s->jump != ~0u)
    return cv_refuse(p, s->jump, "a goto or label inside a tensor-dependent %s cannot be "
                     "converted (the branches become separate functions)", what);
  if (s->addr_of != ~0u)
    return cv_refuse(p, s->addr_of, "the address of '%s' is taken inside a tensor-dependent %s: "
                     "a pointer to a variable of the function would escape the outlined code",
                     s->addr_name, what);
  for (int i = 0; i < s->n_vars; i++)
    if (s->vars[i].bad_type)
      return cv_refuse(p, s->vars[i].first_ref, "'%s' (%s) is read inside a tensor-dependent %s: "
                       "arrays and function pointers cannot be passed to the outlined code; use "
                       "a pointer variable", s->vars[i].name, s->vars[i].type, what);
  return DY_OK;
}

/* call, its lines after the first indented as the statement at sb was. */
void cv_put_indented(text *t, const pass *p, const text *call, unsigned sb) {
  unsigned ls = sb;
  while (ls > 0 && (p->src[ls - 1] == ' ' || p->src[ls - 1] == '\t'))
    ls--;
  bool at_bol = ls == 0 || p->src[ls - 1] == '\n';
  bool after_line = false;   /* a line after #line is padded already */
  for (size_t i = 0; i < call->n; i++) {
    cv_put_n(t, call->s + i, 1);
    if (call->s[i] != '\n')
      continue;
    const char *next = call->s + i + 1, *eol = strchr(next, '\n');
    bool directive = *next == '#';
    if (at_bol && *next && !directive && !after_line)
      cv_put_src(t, p, ls, sb);
    const char *col = directive ? strstr(next, "/* column") : NULL;
    after_line = col && eol && col < eol;
  }
}

/* The text of the whole file with [sb, se) replaced by `call` and the
 * outlined code inserted at `at`. */
static void splice(job *j, unsigned at, const text *outlined, unsigned sb, unsigned se,
                   const text *call) {
  const pass *p = j->p;
  cv_put_src(&j->out, p, 0, at);
  cv_put_n(&j->out, outlined->s, outlined->n);
  if (j->st.lines)
    cv_put_line_at(&j->out, p, &j->st, at, false);
  cv_put_src(&j->out, p, at, sb);
  cv_put_indented(&j->out, p, call, sb);
  if (j->st.lines)
    cv_put_line_at(&j->out, p, &j->st, se, true);
  cv_put_src(&j->out, p, se, (unsigned)p->len);
}

/* The end of a call site, `call` holding `  if (!dy_X(..., ` so far: the
 * context, `n, ARRAY)) return FAIL;`, the results copied back to their
 * variables; then the outlined code and the call are spliced in. */
dy_status cv_finish_call(job *j, const scan *s, int id, text *outl, text *call,
                         const int *vars, int n, const char *array, const char *fail) {
  if (s->n_vars)
    cv_putf(call, "&dy_cv_%d_ctx", id);
  else
    cv_put(call, "NULL");
  cv_putf(call, ", %d, dy_cv_%d_%s))\n    return %s;\n", n, id, array, fail);
  for (int i = 0; i < n; i++)
    cv_putf(call, "  %s = dy_cv_%d_%s[%d];\n", s->vars[vars[i]].name, id, array, i);
  cv_put(call, "}");
  splice(j, insertion_point(j->p, j->fn), outl, s->sb, s->se, call);
  bool oom = j->pred.oom || outl->oom || call->oom;
  free(outl->s);
  free(call->s);
  return oom ? dy_error_set(j->p->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}
