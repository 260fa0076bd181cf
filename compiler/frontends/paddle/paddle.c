/* paddle.c - the PaddlePaddle importer's dispatcher: a Paddle inference
 * model, a ProgramDesc (paddle_framework.proto) and its persistable vars,
 * to a verified Program. It sits on top of the other paddle_*.c
 * (paddle_internal.h lists them from the top down).
 *
 * Files: NAME.pdmodel with NAME.pdiparams, NAME.json (a Paddle 3 PIR
 * program, which paddle_pir.c translates into a ProgramDesc imported
 * here like any other) with NAME.pdiparams, or `__model__` with
 * `__params__` (the combined params stream, read by paddle_params.c), or,
 * in the 2018-2020 layout, one file per var beside `__model__`, each one
 * record of that stream, concatenated here in the stream's order.
 *
 * Import: feed ops give the Program's feeds (in `col` order) under the
 * feed var's name, typed from its VarDesc (a leading -1 is the dynamic
 * batch; another -1 a size symbol "<feed>_d<i>", or the size
 * dy_paddle_options gives; a LoD feed NAME is NAME with dim 0 the size
 * symbol NAME_len and its offsets NAME@lod: paddle_lod.c); fetch ops give
 * the fetches. Every other op is imported as its row of the op table
 * (paddle_table.c), then its outputs take its LoD (pd_lod_propagate).
 * Before any op is imported the program is scanned: an op with sub-blocks,
 * or an op type without a row fails at once with a one-line
 * error naming the op (and, for the known unsupported ones, what is
 * missing).
 */
#include <ctype.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* feeds, fetches, the import loop                                     */
/* ------------------------------------------------------------------ */

static dy_status add_feed(pd_ctx *c, const char *name) {
  const PdVar *vd = pd_var_desc(c, name);
  const PdTensorDesc *td = pd_tensor_desc(vd);
  if (!td)
    return pd_fail(c, DY_STATUS_FORMAT, "feed '%s' has no tensor VarDesc", name);
  dy_type t = {.rank = (int)td->n_dims};
  if (!pd_dtype_to_dy(td->data_type, &t.dtype) || (int)td->data_type == PD_FP64 ||
      td->n_dims > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s' is %s with %zu dims: feeds are "
                   "float32, int64 or bool", name, pd_dtype_name(td->data_type), td->n_dims);
  for (size_t i = 0; i < td->n_dims; i++) {
    if (td->dims[i] < -1) /* Paddle's unknown size is -1, no other negative */
      return pd_fail(c, DY_STATUS_FORMAT, "feed '%s': dim %zu is %lld (a size, or -1 for "
                     "unknown)", name, i, (long long)td->dims[i]);
    t.shape[i] = td->dims[i];
  }
  const dy_paddle_options *o = c->opts;
  for (int k = 0; o && k < o->n_feed_types; k++) {
    if (strcmp(o->feed_names[k], name))
      continue;
    dy_type uu = o->feed_types[k];
    const dy_type *u = &uu;
    uu.dtype = t.dtype; /* the VarDesc's: the option gives the dims */
    bool ok = u->rank == t.rank;
    for (int i = 0; ok && i < t.rank; i++)
      ok = t.shape[i] < 0 || t.shape[i] == u->shape[i];
    if (!ok) {
      char a[128], b[128];
      return pd_fail(c, DY_STATUS_SHAPE_MISMATCH, "feed '%s' is %s, the given type %s does "
                     "not fit", name, dy_type_str(&t, a, sizeof a), dy_type_str(u, b, sizeof b));
    }
    t = *u;
  }
  /* a -1 other than the leading one: a size symbol named after the feed
   * and the dim, "<feed>_d<i>" (characters outside [A-Za-z0-9_] as '_') */
  for (int i = 1; i < t.rank; i++) {
    if (t.shape[i] >= 0)
      continue;
    char sym[DY_SYM_NAME_MAX];
    int n = snprintf(sym, sizeof sym, "%s%.20s", isdigit((unsigned char)name[0]) ? "_" : "", name);
    for (int k = 0; k < n && sym[k]; k++)
      if (!isalnum((unsigned char)sym[k]))
        sym[k] = '_';
    snprintf(sym + strlen(sym), sizeof sym - strlen(sym), "_d%d", i);
    t.shape[i] = dy_dim_sym(sym);
    if (t.shape[i] == DY_DIM_NONE)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s': no size symbol '%s'", name, sym);
    PD_TRY(dy_program_declare_sym(c->p, sym, 0, c->err));
  }
  bool lod = pd_lod_level(vd) > 0;
  if (lod) /* dim 0: the total length, a size symbol; then the offsets */
    PD_TRY(pd_lod_feed_type(c, name, &t));
  dy_error e = {0};
  if (dy_type_check(&t, NULL, name, &e))
    return pd_fail(c, e.status, "feed %s", e.msg);
  int id = pd_define(c, name, &t);
  if (id < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "feed '%s' is defined twice", name);
  PD_TRY(dy_program_add_feed(c->p, id, c->err));
  return lod ? pd_lod_feed_offsets(c, name) : DY_OK;
}

typedef struct {
  const char *name;
  int64_t col;
  int order;
} pd_io;

static int cmp_io(const void *a, const void *b) {
  const pd_io *x = a, *y = b;
  return x->col != y->col ? (x->col < y->col ? -1 : 1) : x->order - y->order;
}

static bool is_io(const PdOp *op, const char *t) { return op->type && strcmp(op->type, t) == 0; }

/* The ops the fetches need: all of them, or with fetch_names given, those
 * whose outputs the named vars depend on (walked backwards). */
static dy_status mark_needed(pd_ctx *c) {
  size_t n_ops = c->blk->n_ops;
  c->needed = calloc(n_ops + 1, sizeof *c->needed);
  if (!c->needed)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  const dy_paddle_options *o = c->opts;
  if (!o || o->n_fetches <= 0) {
    for (size_t i = 0; i < n_ops; i++)
      c->needed[i] = true;
    return DY_OK;
  }
  size_t cap = (size_t)o->n_fetches + 16, n = 0;
  const char **want = malloc(cap * sizeof *want);
  if (!want)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < o->n_fetches; i++)
    want[n++] = o->fetch_names[i];
  for (size_t i = n_ops; i-- > 0;) {
    const PdOp *op = c->blk->ops[i];
    bool hit = false;
    for (size_t k = 0; k < op->n_outputs && !hit; k++)
      for (size_t j = 0; j < op->outputs[k]->n_arguments && !hit; j++)
        for (size_t w = 0; w < n && !hit; w++)
          hit = op->outputs[k]->arguments[j] && strcmp(op->outputs[k]->arguments[j], want[w]) == 0;
    if (!hit || is_io(op, "fetch"))
      continue;
    c->needed[i] = true;
    for (size_t k = 0; k < op->n_inputs; k++)
      for (size_t j = 0; j < op->inputs[k]->n_arguments; j++) {
        if (n == cap) {
          const char **nw = realloc(want, 2 * cap * sizeof *want);
          if (!nw) {
            free(want);
            return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
          }
          want = nw;
          cap *= 2;
        }
        if (op->inputs[k]->arguments[j])
          want[n++] = op->inputs[k]->arguments[j];
      }
  }
  free(want);
  return DY_OK;
}

/* Scan before importing: every op known, no sub-blocks. */
static dy_status prescan(pd_ctx *c) {
  for (size_t i = 0; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    if (!c->needed[i])
      continue;
    c->op = op;
    c->op_index = (int)i;
    if (!op->type)
      return pd_fail(c, DY_STATUS_FORMAT, "op without a type");
    if (is_io(op, "feed") || is_io(op, "fetch") || dy_custom_find(op->type))
      continue;
    const char *why = pd_unsupported_reason(op->type);
    if (why && !pd_op_def_of(op->type)) /* the supported LoD ops have rows */
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s", why);
  }
  for (size_t i = 0; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    c->op = op;
    c->op_index = (int)i;
    if (is_io(op, "feed") || is_io(op, "fetch") || !c->needed[i] || dy_custom_find(op->type))
      continue;
    for (size_t k = 0; k < op->n_attrs; k++)
      if (((int)op->attrs[k]->type == PD_A_BLOCK || (int)op->attrs[k]->type == PD_A_BLOCKS) &&
          !pd_op_def_of(op->type)) /* the control-flow rows import their blocks */
        return pd_fail(c, DY_STATUS_UNSUPPORTED, "ops with sub-blocks (attribute '%s') are "
                       "not supported", op->attrs[k]->name ? op->attrs[k]->name : "?");
    if (!pd_op_def_of(op->type))
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "the op type '%s' is not supported", op->type);
  }
  c->op = NULL;
  return DY_OK;
}

static dy_status import_io(pd_ctx *c, bool feeds) {
  const char *kind = feeds ? "feed" : "fetch";
  int n = 0;
  pd_io io[DY_MAX_FEEDS];
  const dy_paddle_options *o = c->opts;
  bool named = !feeds && o && o->n_fetches > 0;
  if (named) { /* the fetches the caller names */
    if (o->n_fetches > DY_MAX_FEEDS)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "more than %d fetches", DY_MAX_FEEDS);
    for (int i = 0; i < o->n_fetches; i++)
      io[n++] = (pd_io){o->fetch_names[i], i, i};
  }
  for (size_t i = 0; i < c->blk->n_ops && !named; i++) {
    const PdOp *op = c->blk->ops[i];
    if (!is_io(op, kind))
      continue;
    c->op = op;
    c->op_index = (int)i;
    const char *nm = pd_arg(c, feeds, feeds ? "Out" : "X", 0);
    if (!nm)
      return pd_fail(c, DY_STATUS_FORMAT, "%s op without its var", kind);
    if (n == DY_MAX_FEEDS)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "more than %d %ss", DY_MAX_FEEDS, kind);
    io[n] = (pd_io){nm, pd_attr_i(c, "col", n), n};
    n++;
  }
  qsort(io, (size_t)n, sizeof *io, cmp_io);
  for (int i = 0; i < n; i++) {
    if (feeds) {
      PD_TRY(add_feed(c, io[i].name));
      continue;
    }
    int id = dy_program_find_var(c->p, io[i].name);
    if (id < 0) {
      pd_param *pm = pd_find_param(c, io[i].name);
      if (!pm)
        return pd_fail(c, DY_STATUS_FORMAT, "fetch '%s' is computed by no op", io[i].name);
      PD_TRY(pd_materialize(c, pm, &id));
    }
    if (c->p->vars[id]->fetch_index >= 0 || c->p->vars[id]->feed_index >= 0 ||
        c->p->vars[id]->persistable) {
      /* fetched twice, or a feed or parameter fetched: a copy */
      c->op = NULL;
      char nm[300];
      snprintf(nm, sizeof nm, "%.280s@fetch%d", io[i].name, i);
      int64_t shape[DY_MAX_DIMS] = {0};
      dy_attr a[DY_RESHAPE_NATTRS];
      int n_a = dy_reshape_attrs_put(&(dy_reshape_attrs){
          .given = DY_GIVEN_ALL, .shape = shape, .n_shape = c->p->vars[id]->type.rank}, a);
      PD_TRY(pd_op(c, "reshape", &id, 1, a, n_a, nm, &id));
    }
    PD_TRY(dy_program_add_fetch(c->p, id, c->err));
  }
  if (n == 0)
    return pd_fail(c, DY_STATUS_FORMAT, "the program has no %s op", kind);
  c->op = NULL;
  return DY_OK;
}

/* c->op by its row (the ops of sub-blocks come here too: pd_ctx's
 * import_op). */
static dy_status import_op(pd_ctx *c) {
  const pd_op_def *d = c->op->type ? pd_op_def_of(c->op->type) : NULL;
  if (!d)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "the op type '%s' is not supported",
                   c->op->type ? c->op->type : "?");
  return pd_import_row(c, d);
}

static dy_status import_program(pd_ctx *c, const uint8_t *params, size_t params_n) {
  if (c->prog->n_blocks == 0 || !c->prog->blocks[0])
    return pd_fail(c, DY_STATUS_FORMAT, "the ProgramDesc has no blocks");
  c->blk = c->prog->blocks[0];
  if (c->prog->version && c->prog->version->version >= 3000000 && c->blk->n_ops == 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "an empty Paddle 3 program (a PIR .json model?)");
  PD_TRY(mark_needed(c));
  PD_TRY(prescan(c));
  PD_TRY(pd_read_params(c, params, params_n));
  PD_TRY(import_io(c, true));
  for (size_t i = 0; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    if (is_io(op, "feed") || is_io(op, "fetch") || !c->needed[i])
      continue;
    c->op = op;
    c->op_index = (int)i;
    int64_t pir = pd_attr_i(c, PIR_OP_ATTR, -1); /* a translated PIR op's number */
    c->loc = (dy_srcloc){c->path, pir >= 0 && pir < INT32_MAX ? (int)pir + 1 : (int)i + 1};
    const dy_custom_op *cu = dy_custom_find(op->type);
    PD_TRY(cu ? pd_import_custom(c, cu) : pd_import_row(c, pd_op_def_of(op->type)));
    PD_TRY(pd_lod_propagate(c));
  }
  c->op = NULL;
  PD_TRY(import_io(c, false));
  /* without params (params_optional) nothing can verify: the caller
   * (show) gives the parameters stand-ins first */
  return c->no_params ? DY_OK : dy_verify(c->p, c->err);
}

dy_status dy_paddle_load_mem(const uint8_t *model, size_t model_n, const uint8_t *params,
                             size_t params_n, const char *name,
                             const dy_paddle_options *opts, dy_program **out,
                             dy_error *err) {
  *out = NULL;
  pd_ctx c = {.err = err, .opts = opts, .path = name ? name : "<paddle model>",
             .import_op = import_op};
  PdProgram *prog = model && model_n
                        ? paddle__framework__proto__program_desc__unpack(NULL, model_n, model)
                        : NULL;
  if (!prog)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: not a PaddlePaddle ProgramDesc (the "
                        "protobuf does not parse: truncated or corrupted?)", c.path);
  c.prog = prog;
  c.p = dy_program_new();
  /* the file name in source locations must outlive this call */
  if (c.p)
    c.path = dy_program_strdup(c.p, c.path);
  dy_status s = c.p ? import_program(&c, params, params_n)
                    : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
  free(c.params);
  free(c.needed);
  if (s) {
    dy_program_free(c.p);
    return s;
  }
  *out = c.p;
  return DY_OK;
}

dy_status dy_paddle_load_pir_mem(const uint8_t *json, size_t json_n, const uint8_t *params,
                                 size_t params_n, const char *name,
                                 const dy_paddle_options *opts, dy_program **out,
                                 dy_error *err) {
  *out = NULL;
  uint8_t *desc;
  size_t desc_n;
  name = name ? name : "<PIR program>";
  PD_TRY(pd_pir_to_desc(json, json_n, name, &desc, &desc_n, err));
  dy_status s = dy_paddle_load_mem(desc, desc_n, params, params_n, name, opts, out, err);
  free(desc);
  return s;
}

/* ------------------------------------------------------------------ */
/* files                                                               */
/* ------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

bool dy_paddle_is_model_path(const char *path) {
  char buf[4096];
  if (ends_with(path, ".pdmodel") || ends_with(path, ".json") ||
      strcmp(base_name(path), "__model__") == 0)
    return true;
  snprintf(buf, sizeof buf, "%s/__model__", path);
  return is_dir(path) && is_file(buf);
}

/* The per-variable layout: the files named as the persistable vars,
 * concatenated in the stream's order (what load_combine would read). */
static dy_status read_separate(const char *dir, const uint8_t *model, size_t model_n,
                               uint8_t **buf, size_t *len, dy_error *err) {
  *buf = NULL;
  *len = 0;
  PdProgram *prog = paddle__framework__proto__program_desc__unpack(NULL, model_n, model);
  if (!prog || !prog->n_blocks) {
    if (prog)
      paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
    return DY_OK; /* dy_paddle_load_mem reports it */
  }
  const PdBlock *b = prog->blocks[0];
  const char **names = calloc(b->n_vars + 1, sizeof *names);
  size_t n = 0;
  dy_status s = names ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; !s && i < b->n_vars; i++)
    if (pd_in_params(b->vars[i]))
      names[n++] = b->vars[i]->name;
  /* strcmp order, as the stream's */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      const char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (size_t i = 0; !s && i < n; i++) {
    char path[8192];
    uint8_t *part;
    size_t plen;
    if (strchr(names[i], '/') || strcmp(names[i], "..") == 0) {
      s = dy_error_set(err, DY_STATUS_FORMAT, "%s: the var name '%s' is not a file name", dir,
                       names[i]);
      break;
    }
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if ((s = dy_read_file(path, &part, &plen, err))) {
      dy_error_prefix(err, "parameter '%s' (one file per var beside __model__)", names[i]);
      break;
    }
    uint8_t *nb = realloc(*buf, *len + plen + 1);
    if (!nb) {
      free(part);
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    memcpy(nb + *len, part, plen);
    *buf = nb;
    *len += plen;
    free(part);
  }
  free(names);
  paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
  if (s) {
    free(*buf);
    *buf = NULL;
  }
  return s;
}

dy_status dy_paddle_load(const char *path, const char *params_path,
                         const dy_paddle_options *opts, dy_program **out, dy_error *err) {
  *out = NULL;
  char model_path[4200], pp[4400], dir[4200];
  snprintf(model_path, sizeof model_path, "%s", path);
  if (is_dir(path))
    snprintf(model_path, sizeof model_path, "%s/__model__", path);
  snprintf(dir, sizeof dir, "%s", model_path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(dir, sizeof dir, ".");
  bool separate = false;
  if (params_path) {
    snprintf(pp, sizeof pp, "%s", params_path);
  } else if (ends_with(model_path, ".pdmodel")) {
    snprintf(pp, sizeof pp, "%.*s.pdiparams", (int)(strlen(model_path) - 8), model_path);
  } else if (ends_with(model_path, ".json")) {
    snprintf(pp, sizeof pp, "%.*s.pdiparams", (int)(strlen(model_path) - 5), model_path);
  } else if (strcmp(base_name(model_path), "__model__") == 0) {
    snprintf(pp, sizeof pp, "%s/__params__", dir);
    separate = !is_file(pp);
  } else {
    snprintf(pp, sizeof pp, "%s/params", dir);
  }
  uint8_t *model = NULL, *params = NULL;
  size_t model_n = 0, params_n = 0;
  dy_status s = dy_read_file(model_path, &model, &model_n, err);
  bool have_model = !s;
  if (!s && separate)
    s = read_separate(dir, model, model_n, &params, &params_n, err);
  else if (!s && is_file(pp))
    s = dy_read_file(pp, &params, &params_n, err);
  else if (!s && params_path)
    s = dy_error_set(err, DY_STATUS_IO, "%s: no such params file", pp);
  if (!s && ends_with(model_path, ".json"))
    s = dy_paddle_load_pir_mem(model, model_n, params, params_n, model_path, opts, out, err);
  else if (!s)
    s = dy_paddle_load_mem(model, model_n, params, params_n, model_path, opts, out, err);
  /* the params file is missing: say which one */
  if (s == DY_STATUS_IO && have_model && !separate && !params && !params_path)
    dy_error_prefix(err, "no params file %s", pp);
  free(model);
  free(params);
  return s;
}

