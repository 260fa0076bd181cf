/* capi_compile.c - the flat C API's compiled code (dy2stc_capi.h).
 *
 * dy2stc_compile loads the model again (the caller's stays as it was),
 * applies the options (capi_compile_options), compiles it
 * (dy_compile_program) and builds the C as a shared library
 * (dy_build_shared_library) at CACHE/<key>/libmodel.so, <key> a 64-bit
 * FNV-1a hash of the generated sources, the weights and the build options:
 * what would build the same library finds it there and skips the C
 * compiler (the slow part for a big model). The library is written whole
 * or not at all, so two processes building one key at once both succeed.
 * The caller dlopens it and calls model_run_v (and model_bind when the
 * model has size symbols besides the batch); dy2stc_compiled_prepare
 * checks its inputs first, as the executor would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capi_internal.h"

/* FNV-1a over len bytes of data, on top of h. */
static uint64_t fnv(uint64_t h, const void *data, size_t len) {
  const unsigned char *b = data;
  for (size_t i = 0; i < len; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
  return fnv(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* The cache key of a build: everything that reaches the library. */
static uint64_t build_key(const dy_codegen_output *out, const dy_compile_options *o) {
  uint64_t h = fnv_str(0xcbf29ce484222325ull, DY_VERSION_STRING);
  h = fnv_str(h, out->header);
  h = fnv_str(h, out->source);
  if (out->weights)
    h = fnv(h, out->weights, (size_t)out->n_weight_words * 4);
  h = fnv_str(h, o->cc ? o->cc : getenv("CC"));
  h = fnv_str(h, o->cflags);
  h = fnv_str(h, o->target);
  return fnv(h, &o->threads, sizeof o->threads);
}

/* mkdir -p dir (mode 0700 for what is made). */
static dy_status make_dirs(const char *dir, dy_error *err) {
  char buf[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof buf)
    return dy_error_set(err, DY_STATUS_IO, "bad cache directory '%s'", dir);
  memcpy(buf, dir, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] != '/' && buf[i] != '\0')
      continue;
    char c = buf[i];
    buf[i] = '\0';
    struct stat st;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
      return dy_error_set(err, DY_STATUS_IO, "%s: cannot create: %s", buf, strerror(errno));
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
      return dy_error_set(err, DY_STATUS_IO, "%s: not a directory", buf);
    buf[i] = c;
  }
  return DY_OK;
}

static void progress(dy2stc_progress_fn fn, void *ctx, const char *phase) {
  if (fn)
    fn(ctx, phase, 0, 0);
}

/* Compile c->m.p with o into c (the cache's library, built when missing). */
static dy_status compile_into(dy2stc_compiled *c, dy_compile_options *o, const char *cache_dir,
                              dy2stc_progress_fn fn, void *ctx, dy_error *err) {
  dy_codegen_output out = {0};
  dy_compile_report rep;
  o->progress = fn;
  o->progress_ctx = ctx;
  dy_status s = dy_compile_program(c->m.p, o, &out, &rep, err);
  if (s)
    return s;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%016llx", cache_dir, (unsigned long long)build_key(&out, o));
  snprintf(c->lib, sizeof c->lib, "%s/lib%s.so", dir, o->name);
  c->arena_bytes = out.arena_bytes;
  c->max_batch = dy_program_sym_bound(c->m.p, 0);
  c->cached = access(c->lib, R_OK) == 0;
  if (!c->cached && !(s = make_dirs(dir, err)))
    s = dy_build_shared_library(&out, o, c->lib, err);
  dy_codegen_output_free(&out);
  return s;
}

/* The model's file's last path component (the generated header's model:). */
static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* A fresh Program of m's model with the options applied, and o. */
static dy_status prepare_program(const dy2stc_model *m, int n_options, const char *const *keys,
                                 const char *const *values, dy_program **p,
                                 dy_compile_options *o, dy_error *err) {
  *o = dy_compile_options_default();
  o->name = "model";
  o->source = base_name(m->path);
  o->command_line = "dy2stc.compile (Python)";
  dy_status s = capi_load_program(m->path, m->params, p, err);
  if (!s)
    s = capi_compile_options(*p, n_options, keys, values, o, err);
  return s;
}

int dy2stc_compile(const dy2stc_model *m, int n_options, const char *const *keys,
                   const char *const *values, const char *cache_dir,
                   dy2stc_progress_fn fn, void *ctx, dy2stc_compiled **out, char *msg,
                   size_t n) {
  dy_error err = {0};
  dy_compile_options o;
  *out = calloc(1, sizeof **out);
  if (!*out) {
    dy_error_set(&err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    return capi_fail(DY_STATUS_OUT_OF_MEMORY, &err, msg, n);
  }
  progress(fn, ctx, "import");
  dy_status s = prepare_program(m, n_options, keys, values, &(*out)->m.p, &o, &err);
  if (!s && !cache_dir)
    s = dy_error_set(&err, DY_STATUS_INVALID_ARGUMENT, "no cache directory given");
  if (!s)
    s = compile_into(*out, &o, cache_dir, fn, ctx, &err);
  if (s) {
    dy2stc_compiled_free(*out);
    *out = NULL;
    return capi_fail(s, &err, msg, n);
  }
  return 0;
}

void dy2stc_compiled_free(dy2stc_compiled *c) {
  if (c)
    dy_program_free(c->m.p);
  free(c);
}

const char *dy2stc_compiled_library(const dy2stc_compiled *c) { return c->lib; }
const char *dy2stc_compiled_prefix(const dy2stc_compiled *c) { return "model"; }
int64_t dy2stc_compiled_arena_bytes(const dy2stc_compiled *c) { return c->arena_bytes; }
int dy2stc_compiled_cached(const dy2stc_compiled *c) { return c->cached; }
const dy2stc_model *dy2stc_compiled_model(const dy2stc_compiled *c) { return &c->m; }

int dy2stc_compiled_prepare(const dy2stc_compiled *c, int n_inputs, const char *const *names,
                            const int *dtypes, const int *ranks, const int64_t *shapes,
                            int *order, int64_t *batch, int64_t *out_shapes, char *msg,
                            size_t n) {
  dy_error err = {0};
  const dy_program *p = c->m.p;
  capi_inputs ci = {n_inputs, names, dtypes, ranks, shapes, NULL};
  dy_type types[DY_MAX_FEEDS];
  const dy_type *tp[DY_MAX_FEEDS];
  int64_t sym[DY_MAX_SYMS];
  dy_status s = capi_feed_types(p, &ci, order, types, &err);
  for (int i = 0; i < p->n_feeds; i++)
    tp[i] = &types[i];
  if (!s)
    s = dy_exec_bind_syms(p, tp, sym, &err);
  if (!s && sym[0] > c->max_batch)
    s = dy_error_set(&err, DY_STATUS_LIMIT, "batch %lld is above the compiled max_batch %lld",
                     (long long)sym[0], (long long)c->max_batch);
  *batch = sym[0] > 0 ? sym[0] : 1;
  for (int i = 0; !s && i < p->n_fetches; i++) {
    const dy_type *t = &p->vars[p->fetches[i]]->type;
    for (int d = 0; d < t->rank && !s; d++)
      if (!dy_dim_eval(t->shape[d], sym, &out_shapes[i * DY2STC_MAX_DIMS + d]))
        s = dy_error_set(&err, DY_STATUS_SHAPE_MISMATCH,
                         "output '%s' dim %d: its size is not known from the inputs",
                         p->vars[p->fetches[i]]->name, d);
  }
  return s ? capi_fail(s, &err, msg, n) : 0;
}

struct dy2stc_localized {
  dy_localize_result r;
};

int dy2stc_localize(const dy2stc_model *m, int n_options, const char *const *keys,
                    const char *const *values, int n_inputs, const char *const *names,
                    const int *dtypes, const int *ranks, const int64_t *shapes,
                    const void *const *data, double rtol, double atol, int plant_op,
                    dy2stc_localized **out, char *msg, size_t n) {
  dy_error err = {0};
  dy_compile_options o;
  dy_program *p = NULL;
  dy_tensor *in[DY_MAX_FEEDS] = {0};
  capi_inputs ci = {n_inputs, names, dtypes, ranks, shapes, data};
  *out = calloc(1, sizeof **out);
  dy_status s = *out ? DY_OK : dy_error_set(&err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s)
    s = prepare_program(m, n_options, keys, values, &p, &o, &err);
  if (!s)
    s = capi_feed_tensors(p, &ci, in, &err);
  if (!s)
    s = dy_localize(p, &o, in, rtol, atol, plant_op, &(*out)->r, &err);
  for (int i = 0; i < DY_MAX_FEEDS; i++)
    dy_tensor_free(in[i]);
  dy_program_free(p);
  if (s) {
    free(*out);
    *out = NULL;
    return capi_fail(s, &err, msg, n);
  }
  return 0;
}

void dy2stc_localized_free(dy2stc_localized *l) { free(l); }

int dy2stc_localized_int(const dy2stc_localized *l, const char *what) {
  const dy_localize_result *r = &l->r;
  return strcmp(what, "found") == 0        ? r->found
         : strcmp(what, "n_compared") == 0 ? r->n_compared
         : strcmp(what, "op_id") == 0      ? r->op_id
         : strcmp(what, "n_shown") == 0    ? r->n_shown
         : strcmp(what, "block") == 0      ? r->block
         : strcmp(what, "loop_op") == 0    ? r->loop_op
                                           : -1;
}

int64_t dy2stc_localized_i64(const dy2stc_localized *l, const char *what) {
  const dy_localize_result *r = &l->r;
  return strcmp(what, "n_bad") == 0        ? r->n_bad
         : strcmp(what, "n_elements") == 0 ? r->n_elements
         : strcmp(what, "line") == 0       ? r->line
         : strcmp(what, "trip") == 0       ? r->trip
                                           : -1;
}

const char *dy2stc_localized_str(const dy2stc_localized *l, const char *what) {
  const dy_localize_result *r = &l->r;
  return strcmp(what, "op") == 0     ? (r->found ? dy_op_name(r->kind) : "")
         : strcmp(what, "file") == 0 ? r->file
         : strcmp(what, "srcs") == 0 ? r->srcs
         : strcmp(what, "var") == 0  ? r->var
                                     : NULL;
}

void dy2stc_localized_shown(const dy2stc_localized *l, int k, int64_t *index, double *expected,
                            double *got) {
  bool ok = k >= 0 && k < l->r.n_shown;
  *index = ok ? l->r.index[k] : -1;
  *expected = ok ? l->r.expected[k] : 0;
  *got = ok ? l->r.got[k] : 0;
}
