/* localize.c - the first op whose compiled result differs from the static
 * executor's (`dy2stc check --localize`, dy_localize).
 *
 * How: the Program is compiled as usual, but with
 * dy_compile_options.debug_dump on, so NAME_run calls NAME_debug_dump after
 * every op of every block with each result and the innermost while's trip
 * (codegen/program/blocks.c; off, the generated code is byte for byte the
 * normal one). The definition appended to main.c writes each result, in
 * execution order, as DIR/d<k>.bin and a line
 * "<k> <op id> <trip> <elements> <dtype> <var>" of DIR/dumps.txt. The
 * executable runs on the inputs; the static executor runs on the Program
 * as given (the user's ops: the reference wherever a compiled var keeps
 * its name and type) and on the compiled, optimised Program (for vars the
 * passes made: a fused op's result keeps the name of its last part;
 * temporaries), each twice: with every result of block 0 fetched (64 at
 * a time, the fetch limit), and observed (dy_executor_run_observed) for
 * every run of an op inside a branch or a loop body, in order. The j-th
 * dump of a var is compared with the j-th value the executor computed for
 * it (once in block 0, once a trip inside a loop, at most
 * LOCALIZE_MAX_RUNS runs of one op kept, the first LOCALIZE_MAX_DUMPS
 * results dumped). The first
 * dumped result with an element outside |got - expected| <= atol + rtol *
 * max(|expected|, the result's largest magnitude) (a NaN or an infinity
 * equal only to itself) is the answer: the op (id, kind,
 * user source line and, for a fused op, the lines it was made of), the var
 * and the first differing elements.
 *
 * The test hook plant_op (>= 0) adds 1 to element 0 of that op's f32 result
 * inside the dump function, before any later op reads it, as a wrong kernel
 * would (tests/test_localize.c plants one and expects it named); with
 * dy_localize_planted's plant_trip >= 0 on that trip of its loop only.
 * A result inside a loop is reported with its block, the innermost while
 * around it and the trip (from 0).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dy_driver.h"

/* ---- the executor's values of a list of vars ---- */

/* Run p on in with vars[0..n) as its fetches (in chunks of DY_MAX_FEEDS),
 * out[i] the value of vars[i] (new tensors); p's own fetches are restored. */
static dy_status run_fetching(dy_program *p, dy_tensor *const *in, const int *vars, int n,
                              dy_tensor **out, dy_error *err) {
  int saved_n = p->n_fetches, saved[DY_MAX_FEEDS];
  memcpy(saved, p->fetches, sizeof saved);
  int *saved_idx = malloc(sizeof *saved_idx * ((size_t)p->n_vars + 1));
  if (!saved_idx)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int v = 0; v < p->n_vars; v++)
    saved_idx[v] = p->vars[v]->fetch_index;
  dy_status s = DY_OK;
  for (int at = 0; at < n && !s; at += DY_MAX_FEEDS) {
    int m = n - at < DY_MAX_FEEDS ? n - at : DY_MAX_FEEDS;
    for (int v = 0; v < p->n_vars; v++)
      p->vars[v]->fetch_index = -1;
    for (int j = 0; j < m; j++) {
      p->fetches[j] = vars[at + j];
      p->vars[vars[at + j]]->fetch_index = j;
    }
    p->n_fetches = m;
    s = dy_executor_run(p, in, p->n_feeds, out + at, m, err);
  }
  p->n_fetches = saved_n;
  memcpy(p->fetches, saved, sizeof saved);
  for (int v = 0; v < p->n_vars; v++)
    p->vars[v]->fetch_index = saved_idx[v];
  free(saved_idx);
  return s;
}

/* The executor's op results by var name, each var's in the order its op
 * ran: once for an op of block 0 (fetched), once a trip for an op inside a
 * loop body, once a taken branch for one inside a cond (observed). Names
 * are copied: the passes renumber and drop vars afterwards. At most
 * LOCALIZE_MAX_RUNS runs of one op are kept (a longer loop is compared on
 * its first trips). */
enum { LOCALIZE_MAX_RUNS = 4096 };
/* The debug build writes at most this many results (the first ones, in
 * execution order, so the runs of each var stay numbered alike). */
enum { LOCALIZE_MAX_DUMPS = 100000 };

typedef struct {
  char *name;
  int n, cap;
  dy_tensor **runs;
} var_values;

typedef struct {
  int n;                /* vars */
  var_values *v;
  const dy_program *p;  /* while observing */
  int *decl;            /* the block declaring each var of p */
  int *group;           /* p's var -> its entry, or -1 */
} values;

static void values_free(values *v) {
  for (int i = 0; i < v->n; i++) {
    for (int j = 0; j < v->v[i].n; j++)
      dy_tensor_free(v->v[i].runs[j]);
    free(v->v[i].runs);
    free(v->v[i].name);
  }
  free(v->v);
  free(v->decl);
  free(v->group);
  *v = (values){0};
}

/* Append a run of p's var id (t is taken over; NULL on OOM). */
static bool values_add(values *v, int id, dy_tensor *t) {
  if (!t)
    return false;
  int g = v->group[id];
  if (g < 0) {
    g = v->group[id] = v->n++;
    v->v[g] = (var_values){.name = strdup(v->p->vars[id]->name)};
    if (!v->v[g].name) {
      dy_tensor_free(t);
      return false;
    }
  }
  var_values *e = &v->v[g];
  if (e->n == LOCALIZE_MAX_RUNS) {
    dy_tensor_free(t);
    return true;
  }
  if (e->n == e->cap) {
    int cap = e->cap ? 2 * e->cap : 4;
    dy_tensor **r = realloc(e->runs, sizeof *r * (size_t)cap);
    if (!r) {
      dy_tensor_free(t);
      return false;
    }
    e->runs = r;
    e->cap = cap;
  }
  e->runs[e->n++] = t;
  return true;
}

static dy_tensor *tensor_copy(const dy_tensor *t) {
  dy_tensor *c = dy_tensor_new(t->type.dtype, t->type.rank, t->type.shape);
  if (c)
    memcpy(c->data, t->data, (size_t)t->nbytes);
  return c;
}

/* The observer: every run of an op inside a sub-block. */
static dy_status observe(void *ctx, int var, const dy_tensor *t, dy_error *err) {
  values *v = ctx;
  if (v->decl[var] > 0 && !values_add(v, var, tensor_copy(t)))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return DY_OK;
}

static dy_status values_of(dy_program *p, dy_tensor *const *in, values *v, dy_error *err) {
  const dy_block *b = p->blocks[0];
  int n0 = 0;
  for (int k = 0; k < b->n_ops; k++)
    n0 += b->ops[k]->n_outputs;
  int *vars = malloc(sizeof *vars * ((size_t)n0 + 1));
  dy_tensor **vals = calloc((size_t)n0 + 1, sizeof *vals);
  v->v = calloc((size_t)p->n_vars + 1, sizeof *v->v);
  v->decl = malloc(sizeof *v->decl * ((size_t)p->n_vars + 1));
  v->group = malloc(sizeof *v->group * ((size_t)p->n_vars + 1));
  v->p = p;
  dy_status s = DY_OK;
  if (!vars || !vals || !v->v || !v->decl || !v->group)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int n = 0;
  for (int k = 0; k < b->n_ops && !s; k++)
    for (int i = 0; i < b->ops[k]->n_outputs; i++)
      vars[n++] = b->ops[k]->outputs[i];
  if (!s) {
    for (int i = 0; i < p->n_vars; i++)
      v->group[i] = -1;
    dy_program_declaring_blocks(p, v->decl, 0);
    s = run_fetching(p, in, vars, n, vals, err);
  }
  for (int i = 0; i < n && !s; i++) {
    if (!values_add(v, vars[i], vals[i]))
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    vals[i] = NULL;
  }
  /* the ops inside branches and loop bodies, each run */
  if (!s && p->n_blocks > 1) {
    dy_tensor *outs[DY_MAX_FEEDS] = {0};
    s = dy_executor_run_observed(p, in, p->n_feeds, outs, p->n_fetches, observe, v, err);
    for (int i = 0; i < p->n_fetches; i++)
      dy_tensor_free(outs[i]);
  }
  for (int i = 0; i < n; i++)
    dy_tensor_free(vals[i]);
  free(vals);
  free(vars);
  if (s)
    dy_error_prefix(err, "the static executor");
  return s;
}

/* Run `run` (from 0) of the var called name, with n elements of dtype, or
 * NULL. */
static const dy_tensor *value_named(const values *v, const char *name, int run, int64_t n,
                                    int dtype) {
  for (int i = 0; i < v->n; i++) {
    if (strcmp(v->v[i].name, name) != 0)
      continue;
    const dy_tensor *t = run < v->v[i].n ? v->v[i].runs[run] : NULL;
    if (t && (int)t->type.dtype == dtype && dy_tensor_numel(t) == n)
      return t;
    return NULL;
  }
  return NULL;
}

/* ---- the debug build ---- */

/* s as a C string literal's contents (no quotes): \ and " escaped, other
 * bytes outside printable ASCII as octal. */
static void c_escape(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (; *s && k + 5 < n; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\\' || c == '"')
      k += (size_t)snprintf(out + k, n - k, "\\%c", c);
    else if (c < 32 || c > 126)
      k += (size_t)snprintf(out + k, n - k, "\\%03o", c);
    else
      out[k++] = (char)c;
  }
  out[k] = '\0';
}

/* NAME_debug_dump for main.c: every result to dir, the plant applied. */
static char *dump_source(const char *name, const char *dir, int plant_op, int64_t plant_trip) {
  char esc[8192];
  c_escape(dir, esc, sizeof esc);
  const char *fmt =
      "\n/* dy2stc check --localize: each op's result, in order, as raw bytes */\n"
      "void %s_debug_dump(int op, const char *var, const void *data, int64_t n,\n"
      "                   int dtype, int64_t trip) {\n"
      "  static int count;\n"
      "  static const size_t size[6] = {4, 8, 1, 1, 1, 4}; /* f32 i64 bool i8 u8 i32 */\n"
      "  char path[8400];\n"
      "  if (op == %d && (%lld < 0 || trip == %lld) && dtype == 0 && n > 0) /* the planted wrong kernel */\n"
      "    ((float *)(uintptr_t)data)[0] += 1.0f;\n"
      "  if (count >= %d) /* enough: a long loop is compared on its first trips */\n"
      "    return;\n"
      "  snprintf(path, sizeof path, \"%%s/d%%d.bin\", \"%s\", count);\n"
      "  FILE *f = fopen(path, \"wb\");\n"
      "  if (!f || fwrite(data, size[dtype], (size_t)n, f) != (size_t)n) exit(3);\n"
      "  if (fclose(f)) exit(3);\n"
      "  f = fopen(\"%s/dumps.txt\", \"a\");\n"
      "  if (!f) exit(3);\n"
      "  fprintf(f, \"%%d %%d %%lld %%lld %%d %%s\\n\", count, op, (long long)trip, (long long)n,\n"
      "          dtype, var);\n"
      "  if (fclose(f)) exit(3);\n"
      "  count++;\n"
      "}\n";
  size_t len = strlen(fmt) + strlen(name) + 2 * strlen(esc) + 80;
  char *s = malloc(len);
  if (s)
    snprintf(s, len, fmt, name, plant_op, (long long)plant_trip, (long long)plant_trip,
             (int)LOCALIZE_MAX_DUMPS, esc, esc);
  return s;
}

/* Remove dir and the files in it (no subdirectories are made). */
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char path[8400];
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
      }
    closedir(d);
  }
  rmdir(dir);
}

/* Build the debug executable of the compiled Program and run it on in:
 * the dumps land in dir. */
static dy_status build_and_run(dy_codegen_output *co, const dy_compile_options *o,
                               const dy_program *p, dy_tensor *const *in, const char *dir,
                               dy_error *err) {
  char exe[4200], specs[DY_MAX_FEEDS][4400];
  char *argv[2 * DY_MAX_FEEDS + 6];
  int n = 0;
  snprintf(exe, sizeof exe, "%s/model", dir);
  dy_status s = dy_build_executable(co, o, exe, err);
  const char *tf, *runner = NULL;
  if (!s)
    s = dy_target_flags(o->target, &tf, NULL, &runner, err);
  if (runner)
    argv[n++] = (char *)runner;
  argv[n++] = exe;
  for (int i = 0; i < p->n_feeds && !s; i++) {
    char path[4300], file[300];
    dy_safe_file_name(p->vars[p->feeds[i]]->name, file, sizeof file);
    snprintf(path, sizeof path, "%s/in%d_%s.npy", dir, i, file);
    s = dy_npy_write(path, in[i], err);
    snprintf(specs[i], sizeof specs[i], "%s=%s", p->vars[p->feeds[i]]->name, path);
    argv[n++] = "--input";
    argv[n++] = specs[i];
  }
  argv[n++] = "--output-dir";
  argv[n++] = (char *)dir;
  argv[n] = NULL;
  if (!s && (s = dy_run_command_to(argv, "/dev/null", err)))
    dy_error_prefix(err, "the --localize build of the model");
  return s;
}

/* ---- comparing ---- */

/* Within atol + rtol * max(|want|, scale), scale the largest finite
 * magnitude of the result: a matmul's or a reduction's rounding follows
 * the size of its terms, not of each element, and an element near zero in
 * a large result is no more exact than the rest. */
static bool close_enough(double got, double want, double scale, double rtol, double atol) {
  if (!isfinite(got) || !isfinite(want))
    return (isnan(got) && isnan(want)) || got == want;
  return fabs(got - want) <= atol + rtol * fmax(fabs(want), scale);
}

/* The op with id op_id (of any block), or NULL. */
static const dy_op *op_by_id(const dy_program *p, int op_id) {
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++)
      if (p->blocks[b]->ops[k]->id == op_id)
        return p->blocks[b]->ops[k];
  return NULL;
}

static void describe_op(const dy_program *p, const dy_op *op, dy_localize_result *r) {
  r->op_id = op->id;
  r->block = op->block;
  /* the innermost while around it (the trip the dump named is its) */
  for (int b = op->block, ob; b > 0 && r->loop_op < 0; b = ob) {
    const dy_op *owner = dy_block_owner(p, b, &ob, NULL);
    if (!owner)
      break;
    if (owner->kind == DY_OP_WHILE)
      r->loop_op = owner->id;
  }
  r->kind = op->kind;
  snprintf(r->file, sizeof r->file, "%s", op->loc.file ? op->loc.file : "");
  r->line = op->loc.line;
  size_t k = 0;
  r->srcs[0] = '\0';
  for (int i = 0; i < op->n_srcs && k < sizeof r->srcs; i++)
    k += (size_t)snprintf(r->srcs + k, sizeof r->srcs - k, "%s%s:%d %s", i ? ", " : "",
                          op->srcs[i].loc.file ? op->srcs[i].loc.file : "?",
                          op->srcs[i].loc.line, dy_op_name(op->srcs[i].kind));
}

/* Compare dump k (op op_id, var, n elements of dtype) with want. */
static dy_status compare_dump(const char *dir, int k, const dy_program *cp, int op_id,
                              const char *var, int64_t n, int dtype, const dy_tensor *want,
                              double rtol, double atol, dy_localize_result *r,
                              dy_error *err) {
  char path[8400];
  snprintf(path, sizeof path, "%s/d%d.bin", dir, k);
  uint8_t *buf = NULL;
  size_t len = 0;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s)
    return s;
  if (dtype < 0 || dtype >= DY_DTYPE_COUNT || len != (size_t)n * dy_dtype_size((dy_dtype)dtype)) {
    free(buf);
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: %zu bytes, expected %lld elements", path,
                        len, (long long)n);
  }
  int64_t bad = 0;
  double scale = 0;
  for (int64_t i = 0; i < n; i++) {
    double w = fabs(dy_dtype_get_f64((dy_dtype)dtype, want->data, i));
    if (isfinite(w) && w > scale)
      scale = w;
  }
  for (int64_t i = 0; i < n; i++) {
    double g = dy_dtype_get_f64((dy_dtype)dtype, buf, i);
    double w = dy_dtype_get_f64((dy_dtype)dtype, want->data, i);
    if (close_enough(g, w, scale, rtol, atol))
      continue;
    if (bad < DY_LOCALIZE_SHOWN) {
      r->index[bad] = i;
      r->expected[bad] = w;
      r->got[bad] = g;
    }
    bad++;
  }
  free(buf);
  if (bad) {
    r->found = true;
    r->n_bad = bad;
    r->n_elements = n;
    r->n_shown = bad < DY_LOCALIZE_SHOWN ? (int)bad : DY_LOCALIZE_SHOWN;
    snprintf(r->var, sizeof r->var, "%s", var);
    const dy_op *op = op_by_id(cp, op_id);
    if (op)
      describe_op(cp, op, r);
    else
      r->op_id = op_id;
  }
  return DY_OK;
}

dy_status dy_localize(dy_program *p, const dy_compile_options *o, dy_tensor *const *inputs,
                      double rtol, double atol, int plant_op, dy_localize_result *r,
                      dy_error *err) {
  return dy_localize_planted(p, o, inputs, rtol, atol, plant_op, -1, r, err);
}

dy_status dy_localize_planted(dy_program *p, const dy_compile_options *o,
                              dy_tensor *const *inputs, double rtol, double atol, int plant_op,
                              int64_t plant_trip, dy_localize_result *r, dy_error *err) {
  *r = (dy_localize_result){.op_id = -1, .line = 0, .block = -1, .loop_op = -1, .trip = -1};
  if (dy_program_is_training(p)) /* each executor run would be a step */
    return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                        "--localize: a training step (in-place updates) is not supported");
  values orig = {0}, opt = {0};
  dy_codegen_output co = {0};
  char dir[4096] = "";
  char *dump = NULL;
  dy_status s = values_of(p, inputs, &orig, err);
  dy_compile_options d = *o;
  d.name = o->name ? o->name : "model";
  d.debug_dump = true;
  d.emit_main = true;
  d.trainer = NULL;
  if (!s)
    s = dy_compile_program(p, &d, &co, NULL, err);
  if (!s)
    s = values_of(p, inputs, &opt, err);
  if (!s) {
    const char *tmpdir = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/dy2stc-localize.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir)) {
      s = dy_error_set(err, DY_STATUS_IO, "cannot create a temporary directory: %s",
                       strerror(errno));
      dir[0] = '\0';
    }
  }
  if (!s) {
    dump = dump_source(d.name, dir, plant_op, plant_trip);
    size_t a = strlen(co.main_c), b = dump ? strlen(dump) : 0;
    char *m = dump ? realloc(co.main_c, a + b + 1) : NULL;
    if (!m)
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    else {
      memcpy(m + a, dump, b + 1);
      co.main_c = m;
    }
  }
  if (!s)
    s = build_and_run(&co, &d, p, inputs, dir, err);
  /* walk the dumps in order */
  FILE *f = NULL;
  if (!s) {
    char path[4200];
    snprintf(path, sizeof path, "%s/dumps.txt", dir);
    f = fopen(path, "r");
    if (!f)
      s = dy_error_set(err, DY_STATUS_IO, "the --localize build wrote no results (%s)", path);
  }
  /* each var's runs so far (a result inside a loop is dumped every trip) */
  int *runs = s ? NULL : calloc((size_t)p->n_vars + 1, sizeof *runs);
  if (!s && !runs)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  char line[1024];
  while (!s && !r->found && f && fgets(line, sizeof line, f)) {
    int k, op_id, dtype, used = 0;
    long long n, trip;
    if (sscanf(line, "%d %d %lld %lld %d %n", &k, &op_id, &trip, &n, &dtype, &used) != 5 ||
        !used) {
      s = dy_error_set(err, DY_STATUS_FORMAT, "the --localize build: bad line '%.60s'", line);
      break;
    }
    char *var = line + used;
    var[strcspn(var, "\n")] = '\0';
    int id = dy_program_find_var(p, var), run = id >= 0 ? runs[id]++ : 0;
    /* the user's Program is the reference where the var is still its own */
    const dy_tensor *want = value_named(&orig, var, run, n, dtype);
    if (!want)
      want = value_named(&opt, var, run, n, dtype);
    if (!want)
      continue; /* neither executor computed it */
    r->n_compared++;
    s = compare_dump(dir, k, p, op_id, var, n, dtype, want, rtol, atol, r, err);
    if (r->found)
      r->trip = trip;
  }
  free(runs);
  if (f)
    fclose(f);
  if (dir[0])
    remove_tree(dir);
  free(dump);
  dy_codegen_output_free(&co);
  values_free(&orig);
  values_free(&opt);
  return s;
}
