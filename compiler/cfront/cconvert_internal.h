/* cconvert_internal.h - what the files of the source converter share
 * (dy_cconvert, cfront.h; private to compiler/cfront/). Their floors, each
 * calling only the ones below it:
 *
 *   cconvert.c         the passes: parse, find a statement, convert it, again
 *   cconvert_if.c      a tensor if as dy_cond (and an early return first)
 *   cconvert_loop.c    a tensor while as dy_while, a for as a while, break
 *                      and continue as a carried flag first
 *   cconvert_splice.c  the rewriting both use: context struct, prologue,
 *                      predicate, the call site spliced into the text
 *   cconvert_scan.c    what a statement reads and assigns, the statements
 *                      and functions to convert, a cursor's children
 *   cconvert_text.c    a growable text; one pass's text, tokens and
 *                      positions in the user's file; refusals
 *
 * The scheme, what is converted and what is refused, is at the top of
 * cconvert.c.
 */
#ifndef DY_CCONVERT_INTERNAL_H
#define DY_CCONVERT_INTERNAL_H

#include <clang-c/Index.h>

#include "cfront.h"

#define MAX_VARS 64
#define MAX_EDITS 256

/* ---- cconvert_text.c ---- */

typedef struct {
  char *s;
  size_t n, cap;
  bool oom;
} text;

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

/* How the rewritten text is written: with `#line` directives (the
 * tracing driver's input) or without (dy2stc convert's output). */
typedef struct {
  bool lines;
} style;

/* A growable text; on a failed allocation oom is set and it stays as it
 * was (the caller reports out of memory). */
void cv_put_n(text *t, const char *s, size_t n);
void cv_put(text *t, const char *s);
void cv_putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s inside a block comment: a newline as \n, and no "*" "/" to end it. */
void cv_put_comment_text(text *t, const char *s);
/* A location's offset in its file; is it in the main file? */
unsigned cv_offset_of(CXSourceLocation l);
bool cv_in_main_file(CXSourceLocation l);
/* Where offset `off` of the current text is in the user's file: read off
 * the text and its #line directives. */
void cv_user_pos(const pass *p, unsigned off, char *file, size_t n, unsigned *line,
                 unsigned *col);
/* A refusal at offset off: printed with its caret, *shown set. */
dy_status cv_refuse(const pass *p, unsigned off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The index of the first token starting at or after off (n_toks if none);
 * is token i spelled s; the offset after token i. */
unsigned cv_tok_at(const pass *p, unsigned off);
bool cv_tok_is(const pass *p, unsigned i, const char *s);
unsigned cv_tok_end(const pass *p, unsigned i);
/* The token closing the bracket at token i (n_toks if unbalanced). */
unsigned cv_matching(const pass *p, unsigned i);
/* A cursor's source range as offsets of the current text: [*b, *e), the
 * statement's own `;` included when one follows it. */
void cv_stmt_range(const pass *p, CXCursor c, unsigned *b, unsigned *e);
/* The current text's [b, e) appended to t. */
void cv_put_src(text *t, const pass *p, unsigned b, unsigned e);
/* `#line` for offset off, then spaces up to its column, so that what
 * follows is where the user wrote it (without directives: a newline and
 * the indentation). */
void cv_put_line_at(text *t, const pass *p, const style *st, unsigned off, bool pad);

/* ---- cconvert_scan.c ---- */

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

/* Is variable decl referenced in [from, to) of the function? */
typedef struct {
  CXCursor decl;
  unsigned from, to;
  bool found;
} ref_after;

typedef struct {
  const pass *p;
  CXCursor fn;             /* the function being searched */
  CXCursor stmt;           /* the first tensor-dependent statement found */
  bool found;
} finder;

typedef struct {
  CXCursor fns[256];
  int n;
} fn_list;

/* What the statement stmt of the function [fb, fe) reads, assigns,
 * returns and jumps with (a clang_visitChildren over it). */
void cv_scan_stmt(scan *s, const pass *p, unsigned fb, unsigned fe, CXCursor stmt);
/* Visitor: is ref_after's decl referenced in [from, to)? */
enum CXChildVisitResult cv_find_ref(CXCursor c, CXCursor parent, CXClientData data);
/* Does [b, e) name dy_bool / dy_item (a condition reading a tensor)? */
bool cv_names_tensor_read(const pass *p, unsigned b, unsigned e);
/* The (at most two) `;` at depth 0 of a for header whose parentheses are
 * tokens open and close, into semi; how many there are. */
unsigned cv_for_semicolons(const pass *p, unsigned open, unsigned close, unsigned semi[2]);
/* The condition's tokens (the parentheses after if/while, the middle part
 * of a for's header; for do/while the last parentheses): [*cb, *ce). */
bool cv_cond_tokens(const pass *p, CXCursor c, unsigned *cb, unsigned *ce);
/* Visitor: the first tensor-dependent if or loop (a finder). */
enum CXChildVisitResult cv_find_stmt(CXCursor c, CXCursor parent, CXClientData data);
/* Visitor: the DY_TO_STATIC function and the outlined dy_cv_ ones (a fn_list). */
enum CXChildVisitResult cv_find_fns(CXCursor c, CXCursor parent, CXClientData data);
/* The first max children of c. */
void cv_collect_children(CXCursor c, CXCursor *kids, int *n, int max);
/* A branch's last statement: itself, or a compound's last child. */
CXCursor cv_last_stmt(CXCursor branch);

/* ---- cconvert_splice.c ---- */

typedef struct {
  const pass *p;
  style st;
  text out;
  CXCursor fn;
  unsigned fb, fe;
  text pred;               /* the predicate's expression */
} job;

/* The next free number for dy_cv_N names in the text. */
int cv_next_id(const char *src);
/* A copy of [b, e) with its error-path returns as `return false;`. */
void cv_put_body(text *t, const pass *p, const scan *s, unsigned b, unsigned e);
/* What a failed dy_cond / dy_while makes the enclosing function return. */
dy_status cv_failure_value(const pass *p, CXCursor fn, unsigned at, const char **v);
/* The context struct of statement id, and the copies out of it at the top
 * of each outlined function (carried_slot: variables taken from dy_cv_in,
 * a loop's carried values); the context's initialiser at the call. */
void cv_put_ctx_struct(text *t, int id, const scan *s);
void cv_put_prologue(text *t, int id, const scan *s, const int *carried_slot);
void cv_put_ctx_init(text *t, int id, const scan *s);
/* The predicate for condition tokens [cb, ce): dy_bool(T) -> T,
 * !dy_bool(T) -> dy_equal(T, false); anything else is refused. */
dy_status cv_predicate(const pass *p, unsigned cb, unsigned ce, text *pred);
/* The refusals common to if and loops (what is `if` or `loop`). */
dy_status cv_check_common(const pass *p, const scan *s, const char *what);
/* call, its lines after the first indented as the statement at sb was. */
void cv_put_indented(text *t, const pass *p, const text *call, unsigned sb);
/* The end of a call site, `call` holding `  if (!dy_X(..., ` so far: the
 * context, `n, ARRAY)) return FAIL;`, the results copied back to their
 * variables; then the outlined code and the call are spliced in. */
dy_status cv_finish_call(job *j, const scan *s, int id, text *outl, text *call,
                         const int *vars, int n, const char *array, const char *fail);

/* ---- cconvert_if.c ---- */

/* The tensor if stmt (condition tokens [cb, ce)) as statement id. */
dy_status cv_convert_if(job *j, CXCursor stmt, unsigned cb, unsigned ce, int id);

/* ---- cconvert_loop.c ---- */

/* The tensor while stmt as statement id. */
dy_status cv_convert_while(job *j, CXCursor stmt, unsigned cb, unsigned ce, int id);
/* for (I; C; N) B  ->  { I; while (C) { B N; } } (the while converted by
 * the next pass). */
dy_status cv_rewrite_for(job *j, CXCursor stmt);

#endif
