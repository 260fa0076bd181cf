/* program.c - building and rewriting Programs: the arena, vars, feeds and
 * fetches, size symbols, blocks and the block tree (which ops own which
 * sub-blocks), ops and their sources, use/def queries, compaction.
 *
 * Everything a Program owns lives in its arena (a list of chunks, bump
 * allocated, released together by dy_program_free), as QBE's alloc() /
 * freeall() and ggml's context do. The var and block tables are arrays of
 * pointers grown by copying into a bigger arena allocation; the old copy is
 * left in the arena (tables are small next to parameter data).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

struct dy_arena {
  struct chunk *head;
};

struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

enum { CHUNK_SIZE = 64 * 1024 };

static void *arena_alloc(dy_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  struct chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;
    c = malloc(sizeof *c + cap);
    if (!c)
      return NULL;
    c->cap = cap;
    c->used = 0;
    /* A big allocation gets its own chunk behind the current one, so the
     * current chunk's free space is not wasted. */
    if (a->head && n > CHUNK_SIZE) {
      c->next = a->head->next;
      a->head->next = c;
    } else {
      c->next = a->head;
      a->head = c;
    }
  }
  void *p = c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

void *dy_program_alloc(dy_program *p, size_t n) {
  return arena_alloc(p->arena, n ? n : 1);
}

char *dy_program_strdup(dy_program *p, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = dy_program_alloc(p, n);
  if (d)
    memcpy(d, s, n);
  return d;
}

/* Grow an arena-held pointer table to hold at least `need` entries. */
static bool grow(dy_program *p, void ***tab, int *cap, int need) {
  if (need <= *cap)
    return true;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap < need)
    ncap *= 2;
  void **nt = dy_program_alloc(p, sizeof(void *) * (size_t)ncap);
  if (!nt)
    return false;
  if (*cap)
    memcpy(nt, *tab, sizeof(void *) * (size_t)*cap);
  *tab = nt;
  *cap = ncap;
  return true;
}

int dy_program_add_block(dy_program *p, int parent) {
  if (!grow(p, (void ***)&p->blocks, &p->cap_blocks, p->n_blocks + 1))
    return -1;
  dy_block *b = dy_program_alloc(p, sizeof *b);
  if (!b)
    return -1;
  b->idx = p->n_blocks;
  b->parent = parent;
  p->blocks[p->n_blocks++] = b;
  return b->idx;
}

dy_program *dy_program_new(void) {
  dy_program *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->arena = calloc(1, sizeof *p->arena);
  if (!p->arena || dy_program_add_block(p, -1) != 0) {
    dy_program_free(p);
    return NULL;
  }
  return p;
}

void dy_program_free(dy_program *p) {
  if (!p)
    return;
  if (p->arena) {
    for (struct chunk *c = p->arena->head, *next; c; c = next) {
      next = c->next;
      free(c);
    }
    free(p->arena);
  }
  free(p);
}

int dy_program_find_var(const dy_program *p, const char *name) {
  for (int i = 0; i < p->n_vars; i++)
    if (strcmp(p->vars[i]->name, name) == 0)
      return i;
  return -1;
}

int dy_program_add_var(dy_program *p, const char *name, const dy_type *type) {
  if (dy_program_find_var(p, name) >= 0)
    return -1;
  if (!grow(p, (void ***)&p->vars, &p->cap_vars, p->n_vars + 1))
    return -1;
  dy_var *v = dy_program_alloc(p, sizeof *v);
  if (!v || !(v->name = dy_program_strdup(p, name)))
    return -1;
  v->id = p->n_vars;
  v->type = *type;
  v->feed_index = v->fetch_index = -1;
  v->mem_offset = -1;
  v->alias_of = -1;
  p->vars[p->n_vars++] = v;
  return v->id;
}

/* One pass over the vars marks the suffixes "<stem>_<n>" in use (n below
 * the var count is all that can matter: the smallest free one is at most
 * n_vars), so a run of names from one stem costs a pass each, not a pass
 * per probe (an unrolled loop makes thousands). */
const char *dy_program_fresh_name(dy_program *p, const char *stem) {
  char buf[256];
  int cut = snprintf(buf, sizeof buf, "%s_", stem);
  size_t len = cut < 0 ? 0 : (size_t)cut < sizeof buf ? (size_t)cut : sizeof buf - 1;
  unsigned char *used = calloc((size_t)p->n_vars + 1, 1);
  if (!used)
    return NULL;
  for (int i = 0; i < p->n_vars; i++) {
    const char *nm = p->vars[i]->name;
    if (strncmp(nm, buf, len) != 0 || !nm[len] || (nm[len] == '0' && nm[len + 1]))
      continue;
    long long n = 0;
    const char *d = nm + len;
    for (; *d >= '0' && *d <= '9' && n <= p->n_vars; d++)
      n = n * 10 + (*d - '0');
    if (!*d && n <= p->n_vars)
      used[n] = 1;
  }
  int n = 0;
  while (used[n])
    n++;
  free(used);
  snprintf(buf + len, sizeof buf - len, "%d", n);
  return dy_program_strdup(p, buf);
}

dy_status dy_program_set_data(dy_program *p, int var, const void *data,
                              size_t nbytes, dy_error *err) {
  dy_var *v = p->vars[var];
  int64_t numel = dy_type_numel(&v->type);
  if (numel < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "var '%s': a persistable var needs a static shape",
                        v->name);
  if ((size_t)numel * dy_dtype_size(v->type.dtype) != nbytes)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "var '%s': %zu bytes of data for %lld elements",
                        v->name, nbytes, (long long)numel);
  v->data = dy_program_alloc(p, nbytes);
  if (!v->data)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "var '%s': out of memory",
                        v->name);
  memcpy(v->data, data, nbytes);
  v->persistable = true;
  return DY_OK;
}

dy_status dy_program_add_feed(dy_program *p, int var, dy_error *err) {
  if (p->n_feeds >= DY_MAX_FEEDS)
    return dy_error_set(err, DY_STATUS_LIMIT, "more than %d feeds", DY_MAX_FEEDS);
  if (p->vars[var]->feed_index >= 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "var '%s' is fed twice", p->vars[var]->name);
  p->vars[var]->feed_index = p->n_feeds;
  p->feeds[p->n_feeds++] = var;
  return DY_OK;
}

dy_status dy_program_add_fetch(dy_program *p, int var, dy_error *err) {
  if (p->n_fetches >= DY_MAX_FEEDS)
    return dy_error_set(err, DY_STATUS_LIMIT, "more than %d fetches",
                        DY_MAX_FEEDS);
  if (p->vars[var]->fetch_index >= 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "var '%s' is fetched twice", p->vars[var]->name);
  p->vars[var]->fetch_index = p->n_fetches;
  p->fetches[p->n_fetches++] = var;
  return DY_OK;
}

/* ---- size symbols ---- */

dy_status dy_program_declare_sym(dy_program *p, const char *name, int64_t max,
                                 dy_error *err) {
  int sym = dy_sym_id(name);
  if (sym < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': not a name ([A-Za-z_][A-Za-z0-9_]*, "
                        "under %d characters) or more than %d symbols",
                        name ? name : "(null)", DY_SYM_NAME_MAX, DY_MAX_SYMS);
  if (max < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': upper bound %lld is negative", name, (long long)max);
  for (int i = 0; i < p->n_syms; i++)
    if (p->syms[i].sym == sym) {
      if (max > 0)
        p->syms[i].max = max;
      return DY_OK;
    }
  if (p->n_syms == DY_MAX_SYMS)
    return dy_error_set(err, DY_STATUS_LIMIT, "more than %d size symbols", DY_MAX_SYMS);
  p->syms[p->n_syms++] = (dy_sym_decl){.sym = sym, .name = dy_sym_name(sym), .max = max, .value = -1};
  return DY_OK;
}

const dy_sym_decl *dy_program_sym(const dy_program *p, int sym) {
  for (int i = 0; i < p->n_syms; i++)
    if (p->syms[i].sym == sym)
      return &p->syms[i];
  return NULL;
}

dy_status dy_program_declare_used_syms(dy_program *p, dy_error *err) {
  for (int v = 0; v < p->n_vars; v++) {
    const dy_type *t = &p->vars[v]->type;
    for (int d = 0; d < t->rank; d++) {
      dy_dim_expr e;
      if (t->shape[d] >= 0)
        continue;
      if (!dy_dim_expr_of(t->shape[d], &e))
        return dy_error_set(err, DY_STATUS_INVALID_IR, "var '%s': unknown dim %lld",
                            p->vars[v]->name, (long long)t->shape[d]);
      for (int i = 0; i < e.n_terms; i++)
        for (int j = 0; j < e.t[i].n; j++) {
          if (e.t[i].sym[j] == 0)
            continue; /* the batch is implicit (bounded by --max-batch) */
          dy_status s = dy_program_declare_sym(p, dy_sym_name(e.t[i].sym[j]), 0, err);
          if (s)
            return s;
        }
    }
  }
  return DY_OK;
}

dy_status dy_program_pin_input(dy_program *p, const char *input, const int64_t *dims,
                               int rank, dy_error *err) {
  int v = dy_program_find_var(p, input);
  if (v < 0 || p->vars[v]->feed_index < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "--shape: the model has no input '%s'",
                        input);
  char ts[160], ds[96];
  if (rank != p->vars[v]->type.rank)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "--shape: input '%s' is %s, rank %d, not %d dims", input,
                        dy_type_str(&p->vars[v]->type, ts, sizeof ts), p->vars[v]->type.rank, rank);
  /* check every dim first, so that a refused shape changes nothing */
  for (int d = 0; d < rank; d++) {
    int64_t have = p->vars[v]->type.shape[d];
    if (dims[d] < 1)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "--shape: input '%s' dim %d is %lld, not a size >= 1", input, d,
                          (long long)dims[d]);
    if (dy_dim_single_sym(have) < 0 && have != dims[d])
      return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                          "--shape: input '%s' dim %d is %s in the model, not %lld", input, d,
                          dy_dim_name(have, ds, sizeof ds), (long long)dims[d]);
    for (int e = 0; e < d; e++)
      if (p->vars[v]->type.shape[e] == have && dims[e] != dims[d])
        return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                            "--shape: input '%s' dims %d and %d are both %s, not %lld and %lld",
                            input, e, d, dy_dim_name(have, ds, sizeof ds), (long long)dims[e],
                            (long long)dims[d]);
  }
  for (int d = 0; d < rank; d++) {
    int sym = dy_dim_single_sym(p->vars[v]->type.shape[d]); /* earlier pins applied */
    dy_status s;
    if (sym >= 0 && (s = dy_program_pin_sym(p, dy_sym_name(sym), dims[d], err)))
      return s;
  }
  return DY_OK;
}

int64_t dy_program_sym_bound(const dy_program *p, int sym) {
  const dy_sym_decl *d = dy_program_sym(p, sym);
  if (sym == 0) /* pinned or not, NAME_MAX_BATCH is its bound */
    return d && d->max > 0 ? d->max : DY_DEFAULT_MAX_BATCH;
  if (d && d->value > 0)
    return d->value;
  if (d && d->max > 0)
    return d->max;
  return dy_program_sym_bound(p, 0);
}

void dy_program_sym_bounds(const dy_program *p, int64_t *vals) {
  for (int s = 0; s < DY_MAX_SYMS; s++)
    vals[s] = dy_program_sym_bound(p, s);
}

int64_t dy_program_dim_bound(const dy_program *p, int64_t d) {
  if (d >= 0)
    return d;
  int64_t vals[DY_MAX_SYMS], v;
  dy_program_sym_bounds(p, vals);
  return dy_dim_eval(d, vals, &v) ? v : -1;
}

/* Whether a var's type of p uses symbol sym. */
static bool sym_used(const dy_program *p, int sym) {
  for (int v = 0; v < p->n_vars; v++)
    if (dy_type_sym_mask(&p->vars[v]->type) >> sym & 1)
      return true;
  return false;
}

dy_status dy_program_bound_sym(dy_program *p, const char *name, int64_t max, dy_error *err) {
  int sym = dy_sym_id(name);
  if (sym != 0 && (sym < 0 || (!sym_used(p, sym) && !dy_program_sym(p, sym))))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "the model has no size symbol '%s'",
                        name ? name : "(null)");
  if (max < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': bound %lld is less than 1", name, (long long)max);
  const dy_sym_decl *d = dy_program_sym(p, sym);
  if (d && d->value > max)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': pinned to %lld, above the bound %lld", name,
                        (long long)d->value, (long long)max);
  return dy_program_declare_sym(p, name, max, err);
}

dy_status dy_program_load_sym(dy_program *p, const char *name, int64_t max, int64_t value,
                              dy_error *err) {
  dy_status s = dy_program_declare_sym(p, name, max, err);
  if (s || value < 0)
    return s;
  if (value == 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': pinned value 0 is not a size", name);
  if (max > 0 && value > max)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': pinned to %lld, above the bound %lld", name,
                        (long long)value, (long long)max);
  int sym = dy_sym_id(name);
  for (int i = 0; i < p->n_syms; i++)
    if (p->syms[i].sym == sym)
      p->syms[i].value = value;
  return DY_OK;
}

/* reshape_dims spells its sizes out in the attribute "dims" (seq,-1,32):
 * a pinned symbol is substituted there too, as in the vars' types, so the
 * op's type stays the one its (now static) input gives. */
static dy_status pin_dims_attr(dy_program *p, dy_op *op, int sym, int64_t value,
                               dy_error *err) {
  if (op->kind != DY_OP_RESHAPE_DIMS)
    return DY_OK;
  for (int a = 0; a < op->n_attrs; a++) {
    dy_attr *at = &op->attrs[a];
    if (at->kind != DY_ATTR_STRING || strcmp(at->name, "dims") != 0 || !at->s)
      continue;
    char out[512], buf[160];
    size_t len = 0;
    for (const char *q = at->s; *q;) {
      size_t n = strcspn(q, ",");
      int64_t d;
      if (!dy_dim_parse(q, n, &d) || !dy_dim_substitute(d, sym, value, &d))
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "reshape_dims: dims '%.80s': an entry is not a size expression",
                           at->s);
      len += (size_t)snprintf(out + len, len < sizeof out ? sizeof out - len : 0, "%s%s",
                              len ? "," : "", dy_dim_str(d, buf, sizeof buf));
      if (len >= sizeof out)
        return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                           "reshape_dims: dims '%.80s' are too long to spell", at->s);
      q += n;
      q += *q == ',';
    }
    char *pinned = dy_program_strdup(p, out);
    if (!pinned)
      return dy_error_at(err, op, DY_STATUS_OUT_OF_MEMORY, "reshape_dims: out of memory");
    at->s = pinned;
  }
  return DY_OK;
}

dy_status dy_program_pin_sym(dy_program *p, const char *name, int64_t value,
                             dy_error *err) {
  int sym = dy_sym_id(name);
  if (sym > 0 && !sym_used(p, sym) && !dy_program_sym(p, sym))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "the model has no size symbol '%s'",
                        name);
  dy_status s = dy_program_declare_sym(p, name, 0, err);
  if (s)
    return s;
  if (value < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': pinned value %lld is less than 1", name,
                        (long long)value);
  const dy_sym_decl *dc = dy_program_sym(p, sym);
  if (dc->max > 0 && value > dc->max)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "size symbol '%s': pinned to %lld, above the bound %lld", name,
                        (long long)value, (long long)dc->max);
  for (int v = 0; v < p->n_vars; v++) {
    dy_type *t = &p->vars[v]->type;
    for (int d = 0; d < t->rank; d++)
      if (!dy_dim_substitute(t->shape[d], sym, value, &t->shape[d]))
        return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                            "var '%s': dim %d with %s = %lld is not a size", p->vars[v]->name,
                            d, name, (long long)value);
  }
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++)
      if ((s = pin_dims_attr(p, p->blocks[b]->ops[i], sym, value, err)))
        return s;
  for (int i = 0; i < p->n_syms; i++)
    if (p->syms[i].sym == sym)
      p->syms[i].value = value;
  return DY_OK;
}

static bool copy_attr(dy_program *p, dy_attr *dst, const dy_attr *src) {
  *dst = *src;
  if (!(dst->name = dy_program_strdup(p, src->name)))
    return false;
  if (src->kind == DY_ATTR_INTS && src->n) {
    int64_t *v = dy_program_alloc(p, sizeof *v * (size_t)src->n);
    if (!v)
      return false;
    memcpy(v, src->ints, sizeof *v * (size_t)src->n);
    dst->ints = v;
  }
  if (src->kind == DY_ATTR_FLOATS && src->n) {
    float *v = dy_program_alloc(p, sizeof *v * (size_t)src->n);
    if (!v)
      return false;
    memcpy(v, src->floats, sizeof *v * (size_t)src->n);
    dst->floats = v;
  }
  if (src->kind == DY_ATTR_STRING && !(dst->s = dy_program_strdup(p, src->s ? src->s : "")))
    return false;
  return true;
}

dy_op *dy_program_append_op(dy_program *p, int block, dy_op_kind kind,
                            const int *inputs, int n_inputs,
                            const int *outputs, int n_outputs,
                            const dy_attr *attrs, int n_attrs, dy_srcloc loc) {
  dy_block *b = p->blocks[block];
  if (!grow(p, (void ***)&b->ops, &b->cap_ops, b->n_ops + 1))
    return NULL;
  dy_op *op = dy_program_alloc(p, sizeof *op);
  if (!op)
    return NULL;
  op->id = p->next_op_id++;
  op->kind = kind;
  op->block = block;
  op->n_inputs = n_inputs;
  op->n_outputs = n_outputs;
  op->inputs = dy_program_alloc(p, sizeof(int) * (size_t)(n_inputs + 1));
  op->outputs = dy_program_alloc(p, sizeof(int) * (size_t)(n_outputs + 1));
  op->attrs = dy_program_alloc(p, sizeof(dy_attr) * (size_t)(n_attrs + 1));
  if (!op->inputs || !op->outputs || !op->attrs)
    return NULL;
  if (n_inputs)
    memcpy(op->inputs, inputs, sizeof(int) * (size_t)n_inputs);
  if (n_outputs)
    memcpy(op->outputs, outputs, sizeof(int) * (size_t)n_outputs);
  for (int i = 0; i < n_attrs; i++)
    if (!copy_attr(p, &op->attrs[i], &attrs[i]))
      return NULL;
  op->n_attrs = n_attrs;
  op->loc.line = loc.line;
  op->loc.file = loc.file ? dy_program_strdup(p, loc.file) : NULL;
  b->ops[b->n_ops++] = op;
  return op;
}

bool dy_op_set_attrs(dy_program *p, dy_op *op, const dy_attr *attrs, int n) {
  dy_attr *a = dy_program_alloc(p, sizeof *a * (size_t)(n + 1));
  if (!a)
    return false;
  for (int i = 0; i < n; i++)
    if (!copy_attr(p, &a[i], &attrs[i]))
      return false;
  op->attrs = a;
  op->n_attrs = n;
  return true;
}

static bool same_src(const dy_op_src *a, const dy_op_src *b) {
  return a->kind == b->kind && a->loc.line == b->loc.line &&
         (a->loc.file == b->loc.file ||
          (a->loc.file && b->loc.file && strcmp(a->loc.file, b->loc.file) == 0));
}

bool dy_op_set_srcs(dy_program *p, dy_op *to, const dy_op *const *from, int n) {
  /* the ops in id (creation = program) order; n is small */
  const dy_op *ops[64];
  int m = 0;
  for (int i = 0; i < n && m < 64; i++) {
    int k = m++;
    for (; k > 0 && ops[k - 1]->id > from[i]->id; k--)
      ops[k] = ops[k - 1];
    ops[k] = from[i];
  }
  int total = 0;
  for (int i = 0; i < m; i++)
    total += ops[i]->n_srcs ? ops[i]->n_srcs : 1;
  dy_op_src *list = dy_program_alloc(p, sizeof *list * (size_t)(total + 1));
  if (!list)
    return false;
  int k = 0;
  for (int i = 0; i < m; i++) {
    const dy_op *o = ops[i];
    for (int j = 0; j < (o->n_srcs ? o->n_srcs : 1); j++) {
      dy_op_src s = o->n_srcs ? o->srcs[j] : (dy_op_src){o->kind, o->loc};
      bool seen = false;
      for (int q = 0; q < k && !seen; q++)
        seen = same_src(&list[q], &s);
      if (!seen)
        list[k++] = s;  /* file strings are arena-owned already */
    }
  }
  /* one source that is the op itself says nothing more than loc */
  if (k == 1 && same_src(&list[0], &(dy_op_src){to->kind, to->loc}))
    k = 0;
  to->n_srcs = k;
  to->srcs = k ? list : NULL;
  return true;
}

void dy_block_remove_op(dy_block *b, int i) {
  memmove(&b->ops[i], &b->ops[i + 1], sizeof(dy_op *) * (size_t)(b->n_ops - i - 1));
  b->n_ops--;
}

void dy_block_move_last_to(dy_block *b, int i) {
  dy_op *op = b->ops[b->n_ops - 1];
  memmove(&b->ops[i + 1], &b->ops[i], sizeof(dy_op *) * (size_t)(b->n_ops - 1 - i));
  b->ops[i] = op;
}

dy_op *dy_program_def(const dy_program *p, int var, int *block, int *index) {
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      dy_op *op = p->blocks[b]->ops[k];
      for (int i = 0; i < op->n_outputs; i++)
        if (op->outputs[i] == var) {
          if (block)
            *block = b;
          if (index)
            *index = k;
          return op;
        }
    }
  return NULL;
}

dy_op *dy_program_sole_user(const dy_program *p, int var) {
  if (p->vars[var]->fetch_index >= 0)
    return NULL;
  for (int b = 1; b < p->n_blocks; b++)  /* a block's result is read too */
    for (int i = 0; i < p->blocks[b]->n_results; i++)
      if (p->blocks[b]->results[i] == var)
        return NULL;
  dy_op *user = NULL;
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      dy_op *op = p->blocks[b]->ops[k];
      for (int i = 0; i < op->n_inputs; i++)
        if (op->inputs[i] == var) {
          if (user)
            return NULL;
          user = op;
        }
    }
  return user;
}

void dy_program_replace_uses(dy_program *p, int from, int to) {
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      dy_op *op = p->blocks[b]->ops[k];
      for (int i = 0; i < op->n_inputs; i++)
        if (op->inputs[i] == from)
          op->inputs[i] = to;
    }
  for (int b = 0; b < p->n_blocks; b++)  /* a sub-block may yield it */
    for (int i = 0; i < p->blocks[b]->n_results; i++)
      if (p->blocks[b]->results[i] == from)
        p->blocks[b]->results[i] = to;
}

bool dy_program_forward_var(dy_program *p, int from, int to) {
  dy_var *f = p->vars[from], *t = p->vars[to];
  if (f->fetch_index >= 0) {
    if (t->feed_index >= 0 || t->persistable || t->fetch_index >= 0 ||
        !dy_program_def(p, to, NULL, NULL))
      return false;
    /* swap names: the output keeps its name */
    const char *name = f->name;
    f->name = t->name;
    t->name = name;
    t->fetch_index = f->fetch_index;
    p->fetches[f->fetch_index] = to;
    f->fetch_index = -1;
  }
  dy_program_replace_uses(p, from, to);
  return true;
}

/* Drop sub-blocks no op owns (a spliced branch, a removed loop's blocks,
 * and what they held) and renumber the rest in order, rewriting the
 * owners' block attributes and the parents. */
static void compact_blocks(dy_program *p) {
  int nb = p->n_blocks;
  int *map = calloc((size_t)nb, sizeof *map);
  if (!map)
    return;
  /* a block is kept when its parent is kept and an op there owns it; a
   * parent has a lower index, so one pass in order decides */
  map[0] = 0;
  for (int b = 1; b < nb; b++) {
    int parent = p->blocks[b]->parent, ob = -1;
    map[b] = -1;
    if (parent >= 0 && parent < b && map[parent] >= 0 &&
        dy_block_owner(p, b, &ob, NULL) && ob == parent)
      map[b] = 0;
  }
  int m = 0;
  for (int b = 0; b < nb; b++)
    if (map[b] >= 0) {
      map[b] = m;
      p->blocks[m] = p->blocks[b];
      p->blocks[m]->idx = m;
      m++;
    }
  for (int b = 0; b < m; b++) {
    dy_block *blk = p->blocks[b];
    if (blk->parent >= 0)
      blk->parent = map[blk->parent];
    for (int k = 0; k < blk->n_ops; k++) {
      dy_op *op = blk->ops[k];
      op->block = b;
      int sub[2];
      if (!dy_op_sub_blocks(op, sub))
        continue;
      for (int i = 0; i < op->n_attrs; i++) {
        dy_attr *a = &op->attrs[i];
        if (a->kind == DY_ATTR_INT && a->i > 0 && a->i < nb &&
            (a->i == sub[0] || a->i == sub[1]) && strstr(a->name, "_block"))
          a->i = map[a->i];
      }
    }
  }
  p->n_blocks = m;
  for (int i = 0; i < p->n_vars; i++) {
    int vb = p->vars[i]->block;
    p->vars[i]->block = vb >= 0 && vb < nb && map[vb] >= 0 ? map[vb] : 0;
  }
  free(map);
}

void dy_program_compact(dy_program *p) {
  compact_blocks(p);
  int n = p->n_vars;
  int *map = calloc((size_t)n + 1, sizeof *map);
  if (!map)
    return;  /* compaction is an optimisation; leave the program as is */
  for (int i = 0; i < n; i++)
    map[i] = p->vars[i]->feed_index >= 0 || p->vars[i]->fetch_index >= 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      const dy_op *op = p->blocks[b]->ops[k];
      for (int i = 0; i < op->n_inputs; i++)
        map[op->inputs[i]] = 1;
      for (int i = 0; i < op->n_outputs; i++)
        map[op->outputs[i]] = 1;
    }
  for (int b = 0; b < p->n_blocks; b++) {
    const dy_block *blk = p->blocks[b];
    for (int i = 0; i < blk->n_params; i++)
      map[blk->params[i]] = 1;
    for (int i = 0; i < blk->n_results; i++)
      map[blk->results[i]] = 1;
  }
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (!map[i]) {
      map[i] = -1;
      continue;
    }
    map[i] = m;
    p->vars[m] = p->vars[i];
    p->vars[m]->id = m;
    m++;
  }
  p->n_vars = m;
  for (int i = 0; i < m; i++)
    if (p->vars[i]->alias_of >= 0)
      p->vars[i]->alias_of = map[p->vars[i]->alias_of];
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      dy_op *op = p->blocks[b]->ops[k];
      for (int i = 0; i < op->n_inputs; i++)
        op->inputs[i] = map[op->inputs[i]];
      for (int i = 0; i < op->n_outputs; i++)
        op->outputs[i] = map[op->outputs[i]];
    }
  for (int b = 0; b < p->n_blocks; b++) {
    dy_block *blk = p->blocks[b];
    for (int i = 0; i < blk->n_params; i++)
      blk->params[i] = map[blk->params[i]];
    for (int i = 0; i < blk->n_results; i++)
      blk->results[i] = map[blk->results[i]];
  }
  for (int i = 0; i < p->n_feeds; i++)
    p->feeds[i] = map[p->feeds[i]];
  for (int i = 0; i < p->n_fetches; i++)
    p->fetches[i] = map[p->fetches[i]];
  free(map);
}

int dy_program_count_ops(const dy_program *p) {
  int n = 0;
  for (int i = 0; i < p->n_blocks; i++)
    n += p->blocks[i]->n_ops;
  return n;
}

bool dy_program_is_training(const dy_program *p) {
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++)
      if (dy_op_has(p->blocks[b]->ops[k], DY_OPF_INPLACE))
        return true;
  return false;
}

const dy_op *dy_program_in_place_writer(const dy_program *p, int var) {
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      const dy_op *op = p->blocks[b]->ops[k];
      if (dy_op_has(op, DY_OPF_INPLACE))
        for (int i = 0; i < op->n_outputs; i++)
          if (op->outputs[i] == var)
            return op;
    }
  return NULL;
}

/* ---- the block tree (blocks.c has the signatures, captures and splicing) ---- */

int dy_op_sub_blocks(const dy_op *op, int out[2]) {
  const char *names[2];
  if (op->kind == DY_OP_COND)
    names[0] = "then_block", names[1] = "else_block";
  else if (op->kind == DY_OP_WHILE)
    names[0] = "cond_block", names[1] = "body_block";
  else
    return 0;
  for (int i = 0; i < 2; i++) {
    const dy_attr *a = dy_op_find_attr(op, names[i]);
    out[i] = a && a->kind == DY_ATTR_INT ? (int)a->i : -1;
  }
  return 2;
}

dy_op *dy_block_owner(const dy_program *p, int b, int *block, int *index) {
  for (int k = 0; k < p->n_blocks; k++)
    for (int i = 0; i < p->blocks[k]->n_ops; i++) {
      dy_op *op = p->blocks[k]->ops[i];
      int sub[2], n = dy_op_sub_blocks(op, sub);
      for (int j = 0; j < n; j++)
        if (sub[j] == b && b > 0) {
          if (block)
            *block = k;
          if (index)
            *index = i;
          return op;
        }
    }
  return NULL;
}

bool dy_block_within(const dy_program *p, int b, int a) {
  for (int guard = 0; b >= 0 && b < p->n_blocks && guard <= p->n_blocks; guard++) {
    if (b == a)
      return true;
    b = p->blocks[b]->parent;
  }
  return false;
}
