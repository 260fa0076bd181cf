/* fe_json.c - a small strict JSON reader (fe_internal.h) for the model
 * formats that are JSON (Paddle 3's PIR `inference.json`).
 *
 * RFC 8259 exactly: one value with optional white space around it; no
 * comments, trailing commas, single quotes, NaN/Infinity, leading zeros
 * or raw control characters in strings; \uXXXX escapes (surrogate pairs
 * joined) are decoded to UTF-8, a lone surrogate is an error. The whole
 * text is parsed into one array of nodes (children linked by index) and
 * one buffer of decoded strings, both freed by fe_json_free. Bounded: at
 * most FE_JSON_MAX_DEPTH nested arrays/objects (no recursion deeper than
 * that), FE_JSON_MAX_NODES values, FE_JSON_MAX_BYTES of text. Every error
 * is one line naming the byte offset and what was expected. Duplicate
 * object keys are kept; fe_json_get finds the first.
 *
 * Below both frontends; it calls nothing of ours but dy_error_set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fe_internal.h"

typedef struct {
  const uint8_t *b;
  size_t n, at;
  fe_json *j;
  char *sp;          /* next free byte of j->strs */
  const char *name;
  dy_error *err;
} jp;

static dy_status jfail(jp *p, const char *what) {
  if (p->at >= p->n)
    return dy_error_set(p->err, DY_STATUS_FORMAT, "%s: JSON: byte %zu (the end): %s", p->name,
                        p->at, what);
  unsigned c = p->b[p->at];
  if (c >= 0x20 && c < 0x7f)
    return dy_error_set(p->err, DY_STATUS_FORMAT, "%s: JSON: byte %zu ('%c'): %s", p->name,
                        p->at, (char)c, what);
  return dy_error_set(p->err, DY_STATUS_FORMAT, "%s: JSON: byte %zu (0x%02x): %s", p->name,
                      p->at, c, what);
}

static void skip_ws(jp *p) {
  while (p->at < p->n && (p->b[p->at] == ' ' || p->b[p->at] == '\t' || p->b[p->at] == '\n' ||
                          p->b[p->at] == '\r'))
    p->at++;
}

/* A new node of kind k at the current offset; -1 when over the bound. */
static int new_node(jp *p, fe_jkind k) {
  fe_json *j = p->j;
  if (j->n == FE_JSON_MAX_NODES)
    return -1;
  if (j->n == j->cap) {
    int cap = j->cap ? 2 * j->cap : 1024;
    fe_jnode *nn = realloc(j->nodes, (size_t)cap * sizeof *nn);
    if (!nn)
      return -1;
    j->nodes = nn;
    j->cap = cap;
  }
  j->nodes[j->n] = (fe_jnode){.kind = k, .first = -1, .next = -1, .off = p->at};
  return j->n++;
}

static int hex4(const uint8_t *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    int c = s[i], d = c >= '0' && c <= '9' ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

static void put_utf8(jp *p, unsigned cp) {
  if (cp < 0x80) {
    *p->sp++ = (char)cp;
  } else if (cp < 0x800) {
    *p->sp++ = (char)(0xc0 | cp >> 6);
    *p->sp++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *p->sp++ = (char)(0xe0 | cp >> 12);
    *p->sp++ = (char)(0x80 | (cp >> 6 & 0x3f));
    *p->sp++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *p->sp++ = (char)(0xf0 | cp >> 18);
    *p->sp++ = (char)(0x80 | (cp >> 12 & 0x3f));
    *p->sp++ = (char)(0x80 | (cp >> 6 & 0x3f));
    *p->sp++ = (char)(0x80 | (cp & 0x3f));
  }
}

/* A string at '"' into the string buffer (decoded, NUL-terminated; never
 * longer than its source text, so the buffer of the text's size holds
 * them all); *out the decoded text and *len its length. */
static dy_status parse_string(jp *p, const char **out, size_t *len) {
  p->at++; /* '"' */
  char *start = p->sp;
  for (;;) {
    if (p->at >= p->n)
      return jfail(p, "unterminated string");
    unsigned c = p->b[p->at];
    if (c == '"') {
      p->at++;
      break;
    }
    if (c < 0x20)
      return jfail(p, "a control character in a string (escape it)");
    if (c != '\\') {
      *p->sp++ = (char)c;
      p->at++;
      continue;
    }
    if (p->at + 1 >= p->n)
      return jfail(p, "unterminated escape");
    char e = (char)p->b[++p->at];
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      static const char to[] = "\"\\/\b\f\n\r\t";
      *p->sp++ = to[simple - "\"\\/bfnrt"];
      p->at++;
      continue;
    }
    if (e != 'u')
      return jfail(p, "an unknown escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    int cp = p->at + 5 <= p->n ? hex4(p->b + p->at + 1) : -1;
    if (cp < 0)
      return jfail(p, "\\u needs 4 hex digits");
    p->at += 5;
    if (cp >= 0xdc00 && cp <= 0xdfff)
      return jfail(p, "a lone low surrogate in \\u escapes");
    if (cp >= 0xd800 && cp <= 0xdbff) {
      int lo = p->at + 6 <= p->n && p->b[p->at] == '\\' && p->b[p->at + 1] == 'u'
                   ? hex4(p->b + p->at + 2) : -1;
      if (lo < 0xdc00 || lo > 0xdfff)
        return jfail(p, "a high surrogate without its low surrogate");
      p->at += 6;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0)
      return jfail(p, "\\u0000 in a string (names cannot hold NUL)");
    put_utf8(p, (unsigned)cp);
  }
  *len = (size_t)(p->sp - start);
  *p->sp++ = 0;
  *out = start;
  return DY_OK;
}

static dy_status parse_number(jp *p, fe_jnode *v) {
  size_t s = p->at;
  bool is_int = true;
  if (p->at < p->n && p->b[p->at] == '-')
    p->at++;
  if (p->at >= p->n || p->b[p->at] < '0' || p->b[p->at] > '9')
    return jfail(p, "a digit");
  if (p->b[p->at] == '0' && p->at + 1 < p->n && p->b[p->at + 1] >= '0' && p->b[p->at + 1] <= '9')
    return jfail(p, "a number with a leading zero");
  while (p->at < p->n && p->b[p->at] >= '0' && p->b[p->at] <= '9')
    p->at++;
  if (p->at < p->n && p->b[p->at] == '.') {
    is_int = false;
    p->at++;
    if (p->at >= p->n || p->b[p->at] < '0' || p->b[p->at] > '9')
      return jfail(p, "a digit after '.'");
    while (p->at < p->n && p->b[p->at] >= '0' && p->b[p->at] <= '9')
      p->at++;
  }
  if (p->at < p->n && (p->b[p->at] == 'e' || p->b[p->at] == 'E')) {
    is_int = false;
    p->at++;
    if (p->at < p->n && (p->b[p->at] == '+' || p->b[p->at] == '-'))
      p->at++;
    if (p->at >= p->n || p->b[p->at] < '0' || p->b[p->at] > '9')
      return jfail(p, "a digit in the exponent");
    while (p->at < p->n && p->b[p->at] >= '0' && p->b[p->at] <= '9')
      p->at++;
  }
  char tok[64];
  size_t k = p->at - s;
  if (k >= sizeof tok) {
    p->at = s;
    return jfail(p, "a number of more than 63 characters");
  }
  memcpy(tok, p->b + s, k);
  tok[k] = 0;
  v->num = strtod(tok, NULL);
  if (is_int) {
    errno = 0;
    long long i = strtoll(tok, NULL, 10);
    v->is_int = errno == 0;
    v->i = i;
  }
  return DY_OK;
}

static dy_status parse_value(jp *p, int depth, int *out);

/* An array or object at '[' / '{': its members linked from node id. */
static dy_status parse_container(jp *p, int depth, int id) {
  bool obj = p->j->nodes[id].kind == FE_JOBJECT;
  char close = obj ? '}' : ']';
  p->at++;
  skip_ws(p);
  if (p->at < p->n && p->b[p->at] == close) {
    p->at++;
    return DY_OK;
  }
  int last = -1;
  for (;;) {
    const char *key = NULL;
    size_t klen;
    if (obj) {
      skip_ws(p);
      if (p->at >= p->n || p->b[p->at] != '"')
        return jfail(p, "a key string in an object");
      dy_status s = parse_string(p, &key, &klen);
      if (s)
        return s;
      skip_ws(p);
      if (p->at >= p->n || p->b[p->at] != ':')
        return jfail(p, "':' after an object key");
      p->at++;
    }
    int child;
    dy_status s = parse_value(p, depth + 1, &child);
    if (s)
      return s;
    fe_jnode *nodes = p->j->nodes; /* parse_value may have moved them */
    nodes[child].key = key;
    if (last < 0)
      nodes[id].first = child;
    else
      nodes[last].next = child;
    last = child;
    nodes[id].n++;
    skip_ws(p);
    if (p->at < p->n && p->b[p->at] == ',') {
      p->at++;
      continue;
    }
    if (p->at < p->n && p->b[p->at] == close) {
      p->at++;
      return DY_OK;
    }
    return jfail(p, obj ? "',' or '}' in an object" : "',' or ']' in an array");
  }
}

static bool take_word(jp *p, const char *w) {
  size_t k = strlen(w);
  if (p->n - p->at < k || memcmp(p->b + p->at, w, k) != 0)
    return false;
  p->at += k;
  return true;
}

static dy_status parse_value(jp *p, int depth, int *out) {
  skip_ws(p);
  if (depth >= FE_JSON_MAX_DEPTH && p->at < p->n && (p->b[p->at] == '[' || p->b[p->at] == '{'))
    return jfail(p, "arrays/objects nested more than 64 levels deep");
  if (p->at >= p->n)
    return jfail(p, "a value");
  uint8_t c = p->b[p->at];
  fe_jkind k = c == '{' ? FE_JOBJECT : c == '[' ? FE_JARRAY : c == '"' ? FE_JSTRING
               : c == 't' || c == 'f' ? FE_JBOOL : c == 'n' ? FE_JNULL : FE_JNUMBER;
  int id = new_node(p, k);
  if (id < 0)
    return p->j->n == FE_JSON_MAX_NODES ? jfail(p, "more values than the reader takes")
                                        : dy_error_set(p->err, DY_STATUS_OUT_OF_MEMORY,
                                                       "%s: JSON: out of memory", p->name);
  *out = id;
  fe_jnode *v = &p->j->nodes[id];
  switch (k) {
  case FE_JOBJECT:
  case FE_JARRAY:
    return parse_container(p, depth, id);
  case FE_JSTRING:
    return parse_string(p, &v->str, &v->len);
  case FE_JBOOL:
    v->b = c == 't';
    return take_word(p, v->b ? "true" : "false") ? DY_OK : jfail(p, "true or false");
  case FE_JNULL:
    return take_word(p, "null") ? DY_OK : jfail(p, "null");
  case FE_JNUMBER:
    if (c != '-' && (c < '0' || c > '9'))
      return jfail(p, "a value (object, array, string, number, true, false or null)");
    return parse_number(p, v);
  }
  return jfail(p, "a value");
}

dy_status fe_json_parse(const uint8_t *text, size_t n, const char *name, fe_json *out,
                        dy_error *err) {
  memset(out, 0, sizeof *out);
  name = name ? name : "<json>";
  if (n > FE_JSON_MAX_BYTES)
    return dy_error_set(err, DY_STATUS_UNSUPPORTED, "%s: JSON: %zu bytes, more than the "
                        "reader takes (%d)", name, n, FE_JSON_MAX_BYTES);
  out->strs = malloc(n + 1);
  if (!out->strs)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: JSON: out of memory", name);
  jp p = {.b = text, .n = n, .j = out, .sp = out->strs, .name = name, .err = err};
  int root;
  dy_status s = parse_value(&p, 0, &root);
  if (!s) {
    skip_ws(&p);
    if (p.at != p.n)
      s = jfail(&p, "the end of the text after the value");
  }
  if (s)
    fe_json_free(out);
  return s;
}

void fe_json_free(fe_json *j) {
  free(j->nodes);
  free(j->strs);
  memset(j, 0, sizeof *j);
}

const fe_jnode *fe_json_root(const fe_json *j) { return j->n ? &j->nodes[0] : NULL; }

const fe_jnode *fe_json_first(const fe_json *j, const fe_jnode *v) {
  return v && v->first >= 0 ? &j->nodes[v->first] : NULL;
}

const fe_jnode *fe_json_next(const fe_json *j, const fe_jnode *v) {
  return v && v->next >= 0 ? &j->nodes[v->next] : NULL;
}

const fe_jnode *fe_json_get(const fe_json *j, const fe_jnode *obj, const char *key) {
  if (!obj || obj->kind != FE_JOBJECT)
    return NULL;
  for (const fe_jnode *m = fe_json_first(j, obj); m; m = fe_json_next(j, m))
    if (strcmp(m->key, key) == 0)
      return m;
  return NULL;
}

const fe_jnode *fe_json_at(const fe_json *j, const fe_jnode *arr, int i) {
  if (!arr || arr->kind != FE_JARRAY || i < 0 || i >= arr->n)
    return NULL;
  const fe_jnode *m = fe_json_first(j, arr);
  while (i-- > 0)
    m = fe_json_next(j, m);
  return m;
}
