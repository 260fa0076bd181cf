/* parse.c - read the text form of print.c back into a Program.
 *
 * Used by pass tests (a before-Program and an expected-Program in one text
 * file, TVM style) and by anyone who wants to write a Program by hand:
 *
 *   program {
 *     var x : f32[-1,4] feed 0
 *     var w : f32[2] persistable = [0.5, 2.0]
 *     var y : f32[-1,4]
 *     block 0 parent -1 {
 *       y = relu(x)  @model.c:3
 *     }
 *     fetch 0 y
 *   }
 *
 * Size symbols come first ("sym seq max 128 [value 16]"); a dim is an
 * integer or a dim expression ("2*batch*seq+1", dims.c; -1 is the batch).
 * Sub-blocks carry their params and results ("block 1 parent 0 (i) {
 * ... yield c }", see print.c).
 *
 * A persistable var printed without data (more than 16 elements) is
 * filled with zeros. Attribute kinds come from the op's schema in
 * ops.def, so "[]" is read as the kind the op expects. The parser is a
 * hand-written scanner over the whole text; errors name the line.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

typedef struct {
  const char *s;   /* the whole text */
  size_t pos;
  int line;
  dy_program *p;
  dy_error *err;
} parser;

static dy_status fail(parser *ps, const char *fmt, const char *what) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, what);
  return dy_error_set(ps->err, DY_STATUS_FORMAT, "line %d: %s", ps->line, msg);
}

/* Skip blanks and comments (# to end of line); newlines count lines. */
static void skip_ws(parser *ps) {
  for (;;) {
    char c = ps->s[ps->pos];
    if (c == '\n')
      ps->line++;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
      ps->pos++;
    else if (c == '#')
      while (ps->s[ps->pos] && ps->s[ps->pos] != '\n')
        ps->pos++;
    else
      return;
  }
}

static bool accept(parser *ps, const char *tok) {
  skip_ws(ps);
  size_t n = strlen(tok);
  if (strncmp(ps->s + ps->pos, tok, n) != 0)
    return false;
  /* a keyword must not run into a name */
  if (isalpha((unsigned char)tok[n - 1]) &&
      (isalnum((unsigned char)ps->s[ps->pos + n]) || ps->s[ps->pos + n] == '_'))
    return false;
  ps->pos += n;
  return true;
}

static dy_status expect(parser *ps, const char *tok) {
  return accept(ps, tok) ? DY_OK : fail(ps, "expected '%s'", tok);
}

static bool is_name_char(char c) {
  return c && !strchr(" \t\r\n,(){}[]=\"#@", c);
}

/* A name: anything up to a delimiter (var names may hold '.', ':', '/',
 * and '@' after their first character: "fc.w@GRAD", "fc.w@moment1"; a
 * location "@file:line" starts with it). */
static dy_status name(parser *ps, char *buf, size_t n) {
  skip_ws(ps);
  size_t k = 0;
  while ((is_name_char(ps->s[ps->pos]) || (k > 0 && ps->s[ps->pos] == '@')) && k + 1 < n)
    buf[k++] = ps->s[ps->pos++];
  buf[k] = 0;
  return k ? DY_OK : fail(ps, "expected a name%s", "");
}

static dy_status integer(parser *ps, int64_t *out) {
  skip_ws(ps);
  char *end;
  long long v = strtoll(ps->s + ps->pos, &end, 10);
  if (end == ps->s + ps->pos)
    return fail(ps, "expected an integer%s", "");
  ps->pos = (size_t)(end - ps->s);
  *out = v;
  return DY_OK;
}


/* A number token, as an exact int64 when it has no '.', 'e', "inf" or
 * "nan" (INT64_MAX would not survive a trip through double), else as a
 * double. */
static dy_status scalar(parser *ps, int64_t *i, double *d, bool *is_float) {
  skip_ws(ps);
  const char *at = ps->s + ps->pos;
  char *end;
  double v = strtod(at, &end);
  if (end == at)
    return fail(ps, "expected a number%s", "");
  *is_float = strcspn(at, ".eEnNiI") < (size_t)(end - at);
  if (!*is_float) {
    char *iend;
    *i = strtoll(at, &iend, 10);
    end = iend;
  } else {
    /* an integer field written as a float: truncated, NaN as 0 and
     * anything beyond int64 (inf included) as its end */
    *i = v != v ? 0 : v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : (int64_t)v;
  }
  *d = *is_float ? v : (double)*i;
  ps->pos = (size_t)(end - ps->s);
  return DY_OK;
}

/* A dim: an integer or a dim expression ("2*batch*seq+1", dims.c). */
static dy_status dim(parser *ps, int64_t *out) {
  skip_ws(ps);
  size_t n = strcspn(ps->s + ps->pos, ",] \t\n");
  if (n == 0 || !dy_dim_parse(ps->s + ps->pos, n, out))
    return fail(ps, "expected a dim (an integer or a size expression)%s", "");
  ps->pos += n;
  return DY_OK;
}

/* dtype[d,d,...] */
static dy_status type(parser *ps, dy_type *t) {
  char dt[16];
  skip_ws(ps);
  size_t k = 0;
  while (isalnum((unsigned char)ps->s[ps->pos]) && k + 1 < sizeof dt)
    dt[k++] = ps->s[ps->pos++];
  dt[k] = 0;
  if (!dy_dtype_from_name(dt, &t->dtype))
    return fail(ps, "unknown dtype '%s'", dt);
  dy_status s = expect(ps, "[");
  t->rank = 0;
  while (!s && !accept(ps, "]")) {
    if (t->rank && (s = expect(ps, ",")))
      break;
    if (t->rank == DY_MAX_DIMS)
      return fail(ps, "rank above %s", "8");
    s = dim(ps, &t->shape[t->rank++]);
  }
  return s;
}

/* sym NAME [max N] [value V]: a size symbol (dims.c) */
static dy_status sym_decl(parser *ps) {
  char nm[DY_SYM_NAME_MAX + 8];
  int64_t max = 0, value = -1;
  dy_status s = name(ps, nm, sizeof nm);
  if (!s && accept(ps, "max"))
    s = integer(ps, &max);
  if (!s && accept(ps, "value"))
    s = integer(ps, &value);
  if (!s)
    s = dy_program_load_sym(ps->p, nm, max, value, ps->err);
  return s;
}

/* var NAME : TYPE [feed N] [persistable [trainable] [= [v, ...]]] */
static dy_status var_decl(parser *ps) {
  char nm[256];
  dy_type t;
  dy_status s;
  if ((s = name(ps, nm, sizeof nm)) || (s = expect(ps, ":")) || (s = type(ps, &t)))
    return s;
  char what[300];
  snprintf(what, sizeof what, "var '%s'", nm);
  if ((s = dy_type_check(&t, NULL, what, ps->err)))
    return dy_error_prefix(ps->err, "line %d", ps->line);
  int v = dy_program_add_var(ps->p, nm, &t);
  if (v < 0)
    return fail(ps, "var '%s' declared twice", nm);
  if (accept(ps, "feed")) {
    int64_t idx;
    if ((s = integer(ps, &idx)))
      return s;
    if (idx != ps->p->n_feeds)
      return fail(ps, "feeds must be declared in order (%s)", nm);
    if ((s = dy_program_add_feed(ps->p, v, ps->err)))
      return s;
  }
  if (accept(ps, "persistable")) {
    ps->p->vars[v]->trainable = accept(ps, "trainable") && t.dtype == DY_F32;
    int64_t n = dy_type_numel(&t);
    if (n < 0)
      return fail(ps, "persistable var '%s' has a dynamic dim", nm);
    size_t es = dy_dtype_size(t.dtype), bytes = (size_t)n * es;
    unsigned char *data = calloc(bytes ? bytes : 1, 1);
    if (!data)
      return dy_error_set(ps->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    if (accept(ps, "=")) {
      s = expect(ps, "[");
      for (int64_t i = 0; !s && !accept(ps, "]"); i++) {
        double x;
        int64_t xi;
        bool fl;
        if (i >= n) {
          s = fail(ps, "too many values for '%s'", nm);
          break;
        }
        if ((i && (s = expect(ps, ","))) || (s = scalar(ps, &xi, &x, &fl)))
          break;
        /* an integer dtype takes the integer written, in its range; f32
         * the number, bool whether it is not 0 (dtypes.c) */
        int64_t lo, hi;
        if (!dy_dtype_int_range(t.dtype, &lo, &hi)) {
          dy_dtype_set_f64(t.dtype, data, i, x);
        } else if (xi < lo || xi > hi) {
          char msg[160];
          snprintf(msg, sizeof msg, "value %lld is out of range for %s (%lld..%lld)",
                   (long long)xi, dy_dtype_name(t.dtype), (long long)lo, (long long)hi);
          s = fail(ps, "%s", msg);
          break;
        } else {
          dy_dtype_set_i64(t.dtype, data, i, xi);
        }
      }
    }
    if (!s)
      s = dy_program_set_data(ps->p, v, data, bytes, ps->err);
    free(data);
  }
  return s;
}

/* A value of form `got` where op kind's schema says `want`. */
static dy_status wrong_kind(parser *ps, dy_op_kind kind, const dy_attr *a,
                            const char *got, dy_attr_kind want) {
  char msg[300];
  snprintf(msg, sizeof msg, "%s: attribute '%s' is %s, should be %s", dy_op_name(kind),
           a->name, got, dy_attr_kind_name(want));
  return fail(ps, "%s", msg);
}

/* One attribute value into a (arrays allocated in the program's arena). */
static dy_status attr_value(parser *ps, dy_op_kind kind, dy_attr *a) {
  /* the schema (ops.def) gives a known attribute's kind; an unknown one
   * is read as it looks, and the verifier rejects it (invariant 4) */
  const dy_attr_schema *e = dy_attr_schema_find(kind, a->name);
  bool known = e != NULL;
  dy_attr_kind k = known ? e->kind : DY_ATTR_INT;
  skip_ws(ps);
  char c = ps->s[ps->pos];
  dy_status s = DY_OK;
  if (c == '"') {
    if (known && k != DY_ATTR_STRING)
      return wrong_kind(ps, kind, a, "a string", k);
    size_t start = ++ps->pos;
    while (ps->s[ps->pos] && ps->s[ps->pos] != '"' && ps->s[ps->pos] != '\n')
      ps->pos++;
    if (ps->s[ps->pos] != '"')
      return fail(ps, "unterminated string in '%s'", a->name);
    char *str = dy_program_alloc(ps->p, ps->pos - start + 1);
    memcpy(str, ps->s + start, ps->pos - start);
    ps->pos++;
    a->kind = DY_ATTR_STRING;
    a->s = str;
    return DY_OK;
  }
  if (accept(ps, "[")) {
    if (known && k != DY_ATTR_INTS && k != DY_ATTR_FLOATS)
      return wrong_kind(ps, kind, a, "a list", k);
    double vals[256];
    int64_t ivals[256];
    bool any_float = false;
    int n = 0;
    while (!s && !accept(ps, "]")) {
      if (n && (s = expect(ps, ",")))
        break;
      if (n == 256)
        return fail(ps, "too many values in '%s'", a->name);
      bool fl;
      if ((s = scalar(ps, &ivals[n], &vals[n], &fl)))
        break;
      any_float |= fl;
      n++;
    }
    if (s)
      return s;
    if (known && k == DY_ATTR_INTS && any_float)
      return wrong_kind(ps, kind, a, "a list of floats", k);
    a->kind = known ? k : any_float ? DY_ATTR_FLOATS : DY_ATTR_INTS;
    a->n = n;
    if (a->kind == DY_ATTR_INTS) {
      int64_t *v = dy_program_alloc(ps->p, sizeof *v * (size_t)(n + 1));
      for (int i = 0; i < n; i++)
        v[i] = ivals[i];
      a->ints = v;
    } else {
      float *v = dy_program_alloc(ps->p, sizeof *v * (size_t)(n + 1));
      for (int i = 0; i < n; i++)
        v[i] = (float)vals[i];
      a->floats = v;
    }
    return DY_OK;
  }
  double v;
  int64_t iv;
  bool looks_float;
  if ((s = scalar(ps, &iv, &v, &looks_float)))
    return s;
  if (known && (k == DY_ATTR_INTS || k == DY_ATTR_FLOATS || k == DY_ATTR_STRING))
    return wrong_kind(ps, kind, a, "a scalar", k);
  if (known && k == DY_ATTR_INT && looks_float)
    return wrong_kind(ps, kind, a, "a float", k);
  a->kind = known ? k : looks_float ? DY_ATTR_FLOAT : DY_ATTR_INT;
  if (a->kind == DY_ATTR_FLOAT)
    a->f = v;
  else
    a->i = iv;
  return DY_OK;
}

/* file:line ('?' for no file); loc.file points into buf. */
static dy_status srcloc(parser *ps, char *buf, size_t n, dy_srcloc *loc) {
  size_t k = 0;
  skip_ws(ps);
  while (ps->s[ps->pos] && ps->s[ps->pos] != ':' && !isspace((unsigned char)ps->s[ps->pos]) &&
         k + 1 < n)
    buf[k++] = ps->s[ps->pos++];
  buf[k] = 0;
  int64_t line;
  dy_status s;
  if ((s = expect(ps, ":")) || (s = integer(ps, &line)))
    return s;
  if (line < 0 || line > INT32_MAX)
    return fail(ps, "bad source line in '%s'", buf);
  loc->file = strcmp(buf, "?") == 0 ? NULL : buf;
  loc->line = (int)line;
  return DY_OK;
}

/* A fused op's sources, after its "[": "file:line kind, ...]". */
static dy_status op_srcs(parser *ps, dy_op *op) {
  dy_op_src srcs[64];
  int n = 0;
  dy_status s;
  while (!accept(ps, "]")) {
    char file[256], nm[64];
    dy_srcloc loc;
    if ((n && (s = expect(ps, ","))) || (s = srcloc(ps, file, sizeof file, &loc)) ||
        (s = name(ps, nm, sizeof nm)))
      return s;
    if (n == 64)
      return fail(ps, "too many source locations%s", "");
    if (!dy_op_kind_from_name(nm, &srcs[n].kind))
      return fail(ps, "unknown op '%s' in source locations", nm);
    srcs[n].loc.line = loc.line;
    srcs[n].loc.file = loc.file ? dy_program_strdup(ps->p, loc.file) : NULL;
    if (loc.file && !srcs[n].loc.file)
      return dy_error_set(ps->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    n++;
  }
  op->srcs = n ? dy_program_alloc(ps->p, sizeof *srcs * (size_t)n) : NULL;
  if (n && !op->srcs)
    return dy_error_set(ps->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (n)
    memcpy(op->srcs, srcs, sizeof *srcs * (size_t)n);
  op->n_srcs = n;
  return DY_OK;
}

/* OUT[, OUT] = op(IN, ...) [{a = v, ...}] [@file:line] [[file:line op, ...]] */
/* One var name (after a ',' when it is not the first), appended to ids. */
static dy_status list_item(parser *ps, int *ids, int cap, int *n) {
  char nm[256];
  dy_status s;
  if ((*n && (s = expect(ps, ","))) || (s = name(ps, nm, sizeof nm)))
    return s;
  int v = dy_program_find_var(ps->p, nm);
  if (v < 0)
    return fail(ps, "unknown var '%s'", nm);
  if (*n == cap)
    return fail(ps, "too many names in a list%s", "");
  ids[(*n)++] = v;
  return DY_OK;
}

/* A list of var names up to `close` (the opening token already read). */
static dy_status name_list(parser *ps, const char *close, int *ids, int cap,
                           int *n) {
  dy_status s;
  *n = 0;
  while (!accept(ps, close))
    if ((s = list_item(ps, ids, cap, n)))
      return s;
  return DY_OK;
}

static dy_status op_line(parser *ps, int block) {
  int outs[64], ins[64], n_out = 0, n_in = 0;
  dy_attr attrs[32];
  int n_attrs = 0;
  char nm[256];
  dy_status s;
  do {
    int n = 0;
    if ((s = list_item(ps, outs + n_out, 64 - n_out, &n)))
      return s;
    n_out += n;
  } while (accept(ps, ","));
  if ((s = expect(ps, "=")) || (s = name(ps, nm, sizeof nm)))
    return s;
  dy_op_kind kind;
  if (!dy_op_kind_from_name(nm, &kind))
    return fail(ps, "unknown op '%s'", nm);
  if ((s = expect(ps, "(")))
    return s;
  if ((s = name_list(ps, ")", ins, 64, &n_in)))
    return s;
  if (accept(ps, "{")) {
    while (!accept(ps, "}")) {
      if (n_attrs && (s = expect(ps, ",")))
        return s;
      if (n_attrs == 32)
        return fail(ps, "too many attributes%s", "");
      dy_attr *a = &attrs[n_attrs++];
      memset(a, 0, sizeof *a);
      if ((s = name(ps, nm, sizeof nm)) || (s = expect(ps, "=")))
        return s;
      a->name = dy_program_strdup(ps->p, nm);
      if ((s = attr_value(ps, kind, a)))
        return s;
    }
  }
  dy_srcloc loc = {NULL, 0};
  char file[256];
  if (accept(ps, "@") && (s = srcloc(ps, file, sizeof file, &loc)))
    return s;
  dy_op *op = dy_program_append_op(ps->p, block, kind, ins, n_in, outs, n_out,
                                   attrs, n_attrs, loc);
  if (!op)
    return dy_error_set(ps->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return accept(ps, "[") ? op_srcs(ps, op) : DY_OK;
}

/* The keyword kw as a whole word (not the start of a name like yield_0). */
static bool keyword(parser *ps, const char *kw) {
  skip_ws(ps);
  size_t n = strlen(kw);
  if (strncmp(ps->s + ps->pos, kw, n) != 0 || is_name_char(ps->s[ps->pos + n]))
    return false;
  ps->pos += n;
  return true;
}

/* "block N parent P [(params)] { ops [yield results] }" (print.c). */
static dy_status block_decl(parser *ps) {
  int64_t idx, parent;
  dy_status s;
  if ((s = integer(ps, &idx)) || (s = expect(ps, "parent")) ||
      (s = integer(ps, &parent)))
    return s;
  /* block 0 exists already; sub-blocks come in order, under a lower block */
  if (idx == 0 ? ps->p->n_blocks != 1 || parent != -1
               : idx != ps->p->n_blocks || parent < 0 || parent >= idx ||
                     dy_program_add_block(ps->p, (int)parent) != idx)
    return fail(ps, "blocks must be declared in order, each under a lower "
                "block%s", "");
  int ids[256], n;
  if (accept(ps, "(")) {
    if ((s = name_list(ps, ")", ids, 256, &n)))
      return s;
    if (idx == 0 && n)
      return fail(ps, "block 0 takes no params%s", "");
    if (!dy_block_set_params(ps->p, (int)idx, ids, n))
      return dy_error_set(ps->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  if ((s = expect(ps, "{")))
    return s;
  while (!accept(ps, "}")) {
    if (keyword(ps, "yield")) {
      /* the results run to the end of the line */
      n = 0;
      for (;;) {
        size_t save = ps->pos;
        int line = ps->line;
        skip_ws(ps);
        if (ps->line != line || ps->s[ps->pos] == '}') {
          ps->pos = save, ps->line = line;
          break;
        }
        ps->pos = save;
        if ((s = list_item(ps, ids, 256, &n)))
          return s;
      }
      if (idx == 0)
        return fail(ps, "block 0 yields nothing%s", "");
      if (!dy_block_set_results(ps->p, (int)idx, ids, n))
        return dy_error_set(ps->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      if ((s = expect(ps, "}")))
        return s;
      break;
    }
    if ((s = op_line(ps, (int)idx)))
      return s;
  }
  return DY_OK;
}

dy_status dy_program_parse(const char *text, dy_program **out, dy_error *err) {
  parser ps = {.s = text, .line = 1, .p = dy_program_new(), .err = err};
  if (!ps.p)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_status s = expect(&ps, "program");
  if (!s)
    s = expect(&ps, "{");
  while (!s && !accept(&ps, "}")) {
    char nm[256];
    if (accept(&ps, "sym")) {
      s = sym_decl(&ps);
    } else if (accept(&ps, "var")) {
      s = var_decl(&ps);
    } else if (accept(&ps, "block")) {
      s = block_decl(&ps);
    } else if (accept(&ps, "fetch")) {
      int64_t idx;
      if (!(s = integer(&ps, &idx)) && !(s = name(&ps, nm, sizeof nm))) {
        int v = dy_program_find_var(ps.p, nm);
        if (v < 0)
          s = fail(&ps, "unknown var '%s'", nm);
        else if (idx != ps.p->n_fetches)
          s = fail(&ps, "fetches must be declared in order (%s)", nm);
        else
          s = dy_program_add_fetch(ps.p, v, err);
      }
    } else {
      s = fail(&ps, "expected sym, var, block, fetch or '}'%s", "");
    }
  }
  if (s) {
    dy_program_free(ps.p);
    return s;
  }
  *out = ps.p;
  return DY_OK;
}
