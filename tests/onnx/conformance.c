/* conformance.c - the ONNX backend conformance runner.
 *
 * For every test under the ONNX backend test data (Debian libonnx-testdata,
 * data/node/test_*): load model.onnx with the ONNX frontend, read every
 * test_data_set_K/input_N.pb and output_N.pb, and check the model two ways:
 *
 *   1. the static executor, on the imported Program;
 *   2. the generated C: the Program is compiled (dy_compile_program, the
 *      full pass pipeline) to tN.c/tN.h; all of them are built with $CC
 *      into ONE driver executable (in parallel batches), which is then run
 *      once per test and data set on the inputs written as raw files.
 *
 * Outputs are compared with rtol 1e-3, atol 1e-4 (float32; NaN equals NaN)
 * or exactly (int64, int32, int8, uint8, bool). Each test is classified
 *
 *   pass         both ways match on every data set
 *   unsupported  a clean DY_STATUS_UNSUPPORTED error (op, dtype, attribute)
 *   fail         wrong numbers, a wrong shape, any other error, C that does
 *                not compile, a time-out
 *   crash        a child process died on a signal
 *
 * Every model runs in a child process (fork), so a crash is caught and
 * counted. A graph input that the loader needs as a constant (Reshape's
 * shape given as a graph input, as many node tests do, or an input that
 * such a value is computed from) is bound to data set 0's value and the
 * load retried: such a pass is a "pass (bound)" in the summary, counted
 * apart from the run-time passes: a specialisation that inputs supplied at
 * run time would not get.
 *
 *   onnx_conformance [--data DIR] [--work DIR] [--expected FILE]
 *                    [--write-expected FILE] [--summary FILE] [--filter S]
 *                    [--jobs N] [--no-compile] [--cc CC] [-v]
 *
 * Exit status 1 when a test listed in --expected does not pass or any test
 * crashed.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>

#include "dy_compiler.h"
#include "onnx.pb-c.h"

/* The driver's main(): driver ID BATCH NIN IN... NOUT (SIZE OUT)...; SIZE
 * is an output buffer's bytes, at least the bytes expected. A model with
 * size symbols (tN_NUM_DIMS: node tests have them only from an op that
 * sets a count at run time, nonzero) runs through tN_run_d, which runs it
 * with each symbol at its bound (no input has one) and leaves each
 * output's actual bytes in run_bytes: those are written. */
#define DRIVER_DIMS \
  "static size_t run_bytes[64]; static int run_sized;\n" \
  "static const size_t elem_bytes[] = {4, 8, 1, 1, 1, 4};\n"
/* tN_run_d: each %d of the format is N. */
#define DRIVER_RUN_D \
  "#ifdef T%d_NUM_DIMS\n" \
  "static int t%d_run_d(void *arena, int64_t batch, const void *const *in, void *const *out) {\n" \
  "  int64_t dims[T%d_NUM_DIMS] = T%d_DIM_MAXES; dims[0] = batch;\n" \
  "  int rc = t%d_run_v(arena, dims, in, out);\n" \
  "  for (int i = 0; i < T%d_NUM_OUTPUTS && i < 64; i++) {\n" \
  "    int64_t sh[8]; t%d_output_shape(i, dims, sh);\n" \
  "    size_t n = elem_bytes[t%d_outputs[i].dtype];\n" \
  "    for (int d = 0; d < t%d_outputs[i].rank; d++) n *= (size_t)sh[d];\n" \
  "    run_bytes[i] = n; }\n" \
  "  run_sized = 1; return rc; }\n" \
  "#define T%d_RUN t%d_run_d\n" \
  "#else\n" \
  "#define T%d_RUN t%d_run_v\n" \
  "#endif\n"

/* The driver's main(): driver ID BATCH NIN IN... NOUT (SIZE OUT)... */
#define DRIVER_MAIN \
  "static void *slurp(const char *p, size_t *n) {\n" \
  "  FILE *f = fopen(p, \"rb\"); if (!f) return NULL;\n" \
  "  fseek(f, 0, SEEK_END); long k = ftell(f); fseek(f, 0, SEEK_SET);\n" \
  "  void *b = malloc(k > 0 ? (size_t)k : 1);\n" \
  "  if (fread(b, 1, (size_t)k, f) != (size_t)k) { fclose(f); return NULL; }\n" \
  "  fclose(f); *n = (size_t)k; return b; }\n" \
  "int main(int argc, char **argv) {\n" \
  "  if (argc < 4) return 2;\n" \
  "  int id = atoi(argv[1]); int64_t batch = atoll(argv[2]); int a = 3;\n" \
  "  int k = 0; while (models[k].id >= 0 && models[k].id != id) k++;\n" \
  "  if (models[k].id < 0) return 3;\n" \
  "  int nin = atoi(argv[a++]); const void *in[64]; void *out[64];\n" \
  "  for (int i = 0; i < nin; i++) { size_t n; in[i] = slurp(argv[a++], &n); if (!in[i]) return 4; }\n" \
  "  int nout = atoi(argv[a++]); const char *path[64]; size_t size[64];\n" \
  "  for (int i = 0; i < nout; i++) { size[i] = (size_t)atoll(argv[a++]);\n" \
  "    out[i] = calloc(size[i] ? size[i] : 1, 1); path[i] = argv[a++]; }\n" \
  "  size_t ab = (models[k].arena + 63) / 64 * 64;\n" \
  "  void *arena = aligned_alloc(64, ab ? ab : 64);\n" \
  "  int rc = models[k].run(arena, batch, in, out);\n" \
  "  if (rc) { fprintf(stderr, \"run returned %d\\n\", rc); return 5; }\n" \
  "  for (int i = 0; i < nout; i++) {\n" \
  "    if (run_sized && run_bytes[i] < size[i]) size[i] = run_bytes[i];\n" \
  "    FILE *f = fopen(path[i], \"wb\");\n" \
  "    if (!f || fwrite(out[i], 1, size[i], f) != size[i]) return 6; fclose(f); }\n" \
  "  return 0; }\n"


enum { R_NONE, R_PASS, R_UNSUPPORTED, R_FAIL, R_CRASH };
static const char *const result_name[] = {"-", "pass", "unsupported", "fail", "crash"};

#define MAX_SETS 8
#define MAX_IO 16

typedef struct {
  char name[160];
  char dir[4096];
  char op[96];
  int result;
  bool bound;          /* passed with shape-like inputs bound             */
  bool compiled;       /* produced C                                      */
  bool exec_ok;        /* the static executor matched                     */
  int n_sets;
  char msg[600];
} test_case;

static const char *data_dir = "/usr/share/libonnx-testdata/data/node";
static const char *work_dir = "onnx-work";
static const char *cc = NULL;
static int jobs = 2;
static bool verbose = false;

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Write the child's verdict: "<result> <exec_ok> <compiled> <bound> <n_sets>\n<msg>". */
static void write_result(const char *path, int result, bool exec_ok, bool compiled,
                         bool bound, int n_sets, const char *fmt, ...) {
  FILE *f = fopen(path, "w");
  if (!f)
    return;
  fprintf(f, "%d %d %d %d %d\n", result, exec_ok, compiled, bound, n_sets);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

static void one_line(char *s) {
  for (; *s; s++)
    if (*s == '\n' || *s == '|')
      *s = ' ';
}

/* Compare got with want: same dtype and shape; f32 within tolerance. */
static bool tensors_match(const dy_tensor *got, const dy_tensor *want, char *why,
                          size_t n) {
  char a[128], b[128];
  if (!dy_type_equal(&got->type, &want->type)) {
    snprintf(why, n, "got %s, expected %s", dy_type_str(&got->type, a, sizeof a),
             dy_type_str(&want->type, b, sizeof b));
    return false;
  }
  int64_t m = dy_tensor_numel(got);
  for (int64_t i = 0; i < m; i++) {
    bool ok;
    double x, y;
    if (got->type.dtype == DY_F32) {
      x = ((float *)got->data)[i];
      y = ((float *)want->data)[i];
      ok = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= 1e-4 + 1e-3 * fabs(y);
    } else if (got->type.dtype == DY_I64) {
      x = (double)((int64_t *)got->data)[i];
      y = (double)((int64_t *)want->data)[i];
      ok = ((int64_t *)got->data)[i] == ((int64_t *)want->data)[i];
    } else { /* i32, i8, u8, bool: exactly */
      x = dy_quant_value(got->type.dtype, got->data, i);
      y = dy_quant_value(want->type.dtype, want->data, i);
      if (got->type.dtype == DY_BOOL)
        x = ((unsigned char *)got->data)[i], y = ((unsigned char *)want->data)[i];
      ok = x == y;
    }
    if (!ok) {
      snprintf(why, n, "element %lld: got %.8g, expected %.8g", (long long)i, x, y);
      return false;
    }
  }
  return true;
}

/* ------------------------------------------------------------------ */
/* a test's data sets                                                  */
/* ------------------------------------------------------------------ */

typedef struct {
  int n_in, n_out;
  dy_tensor *in[MAX_IO], *out[MAX_IO];
  char in_name[MAX_IO][128], out_name[MAX_IO][128];
} data_set;

static void free_set(data_set *d) {
  for (int i = 0; i < d->n_in; i++)
    dy_tensor_free(d->in[i]);
  for (int i = 0; i < d->n_out; i++)
    dy_tensor_free(d->out[i]);
  memset(d, 0, sizeof *d);
}

/* Read dir/test_data_set_k/{input,output}_N.pb. */
static dy_status read_set(const char *dir, int k, data_set *d, dy_error *err) {
  memset(d, 0, sizeof *d);
  for (int io = 0; io < 2; io++)
    for (int i = 0; i < MAX_IO; i++) {
      char p[4400];
      snprintf(p, sizeof p, "%s/test_data_set_%d/%s_%d.pb", dir, k, io ? "output" : "input", i);
      if (!exists(p))
        break;
      dy_tensor **t = io ? &d->out[i] : &d->in[i];
      char *nm = io ? d->out_name[i] : d->in_name[i];
      dy_status s = dy_onnx_tensor_read(p, t, nm, 128, err);
      if (s)
        return s;
      ++*(io ? &d->n_out : &d->n_in);
    }
  return DY_OK;
}

/* The data set input for feed `name` (by the tensor's name, else the
 * position among the model's non-initializer graph inputs). */
static dy_tensor *input_for(const data_set *d, const char *name, int pos) {
  for (int i = 0; i < d->n_in; i++)
    if (d->in_name[i][0] && strcmp(d->in_name[i], name) == 0)
      return d->in[i];
  return pos < d->n_in ? d->in[pos] : NULL;
}

/* Names of the graph inputs that are not initializers, in order. */
static int graph_inputs(const char *model, char names[][128], int cap) {
  uint8_t *buf;
  size_t len;
  dy_error e = {0};
  if (dy_read_file(model, &buf, &len, &e))
    return 0;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  int n = 0;
  if (m && m->graph) {
    for (size_t i = 0; i < m->graph->n_input && n < cap; i++) {
      bool init = false;
      for (size_t j = 0; j < m->graph->n_initializer; j++)
        init |= m->graph->initializer[j]->name &&
                strcmp(m->graph->initializer[j]->name, m->graph->input[i]->name) == 0;
      if (!init)
        snprintf(names[n++], 128, "%s", m->graph->input[i]->name);
    }
  }
  if (m)
    onnx__model_proto__free_unpacked(m, NULL);
  return n;
}

/* The op a test is about: the single node's op type, else "<op of the
 * un-expanded test> (expanded)", else the first non-Constant node. */
static void test_op(const char *dir, const char *name, char *op, size_t n) {
  char model[4400];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  snprintf(op, n, "?");
  uint8_t *buf;
  size_t len;
  dy_error e = {0};
  const char *suffix = "_expanded";
  size_t nl = strlen(name), sl = strlen(suffix);
  if (nl > sl && strcmp(name + nl - sl, suffix) == 0) {
    char base[4400], bname[200];
    snprintf(bname, sizeof bname, "%.*s", (int)(nl - sl), name);
    snprintf(base, sizeof base, "%s/%s", data_dir, bname);
    if (exists(base)) {
      char bop[64];
      test_op(base, bname, bop, sizeof bop);
      snprintf(op, n, "%.64s (expanded)", bop);
      return;
    }
  }
  if (dy_read_file(model, &buf, &len, &e))
    return;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  if (m && m->graph && m->graph->n_node) {
    const char *pick = m->graph->node[0]->op_type;
    for (size_t i = 0; i < m->graph->n_node; i++)
      if (strcmp(m->graph->node[i]->op_type, "Constant") != 0) {
        pick = m->graph->node[i]->op_type;
        break;
      }
    snprintf(op, n, "%s", pick);
  }
  if (m)
    onnx__model_proto__free_unpacked(m, NULL);
}

/* ------------------------------------------------------------------ */
/* phase 1 (child): load, executor, emit C                              */
/* ------------------------------------------------------------------ */

static int classify(dy_status s) {
  return s == DY_STATUS_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL;
}

static void child_phase1(const test_case *t, int idx, bool compile) {
  char res[4400], model[4400];
  snprintf(res, sizeof res, "%s/t%d.res", work_dir, idx);
  snprintf(model, sizeof model, "%s/model.onnx", t->dir);
  alarm(120);
  data_set sets[MAX_SETS];
  int n_sets = 0;
  dy_error err = {0};
  for (int k = 0; k < MAX_SETS; k++) {
    char p[4400];
    snprintf(p, sizeof p, "%s/test_data_set_%d", t->dir, k);
    if (!exists(p))
      break;
    dy_status s = read_set(t->dir, k, &sets[n_sets], &err);
    if (s) {
      /* the loader's reason (an op, a dtype) says more than the data's */
      dy_program *q = NULL;
      dy_error lerr = {0};
      if (dy_onnx_load(model, &q, &lerr) && lerr.status == DY_STATUS_UNSUPPORTED)
        write_result(res, R_UNSUPPORTED, 0, 0, 0, 0, "load: %s", lerr.msg);
      else
        write_result(res, classify(s), 0, 0, 0, 0, "test data: %s", err.msg);
      _exit(0);
    }
    n_sets++;
  }
  if (!n_sets) {
    write_result(res, R_FAIL, 0, 0, 0, 0, "no test data sets");
    _exit(0);
  }
  char gin[MAX_IO][128];
  int n_gin = graph_inputs(model, gin, MAX_IO);

  /* load, binding graph inputs the loader needs as constants */
  const char *bind_names[MAX_IO];
  dy_tensor *bind_values[MAX_IO];
  dy_onnx_options opts = {.bind_names = bind_names, .bind_values = bind_values};
  dy_onnx_info info;
  dy_program *p = NULL;
  dy_status s;
  for (;;) {
    s = dy_onnx_load_ex(model, &opts, &info, &p, &err);
    if (!s || info.needs_const_input < 0 || opts.n_bind >= MAX_IO)
      break;
    int pos = -1;
    for (int i = 0; i < n_gin; i++)
      if (strcmp(gin[i], info.needs_const_name) == 0)
        pos = i;
    dy_tensor *v = input_for(&sets[0], info.needs_const_name, pos);
    bool dup = false;
    for (int i = 0; i < opts.n_bind; i++)
      dup |= strcmp(bind_names[i], info.needs_const_name) == 0;
    if (!v || dup)
      break;
    /* every data set must agree on a bound value */
    for (int k = 1; k < n_sets; k++) {
      dy_tensor *w = input_for(&sets[k], info.needs_const_name, pos);
      if (!w || !dy_type_equal(&w->type, &v->type) ||
          memcmp(w->data, v->data, w->nbytes < v->nbytes ? w->nbytes : v->nbytes)) {
        write_result(res, R_UNSUPPORTED, 0, 0, 1, n_sets,
                     "input '%s' must be a constant and differs between data sets",
                     info.needs_const_name);
        _exit(0);
      }
    }
    bind_names[opts.n_bind] = strdup(info.needs_const_name);
    bind_values[opts.n_bind++] = v;
  }
  bool bound = opts.n_bind > 0;
  if (s) {
    write_result(res, classify(s), 0, 0, bound, n_sets, "load: %s", err.msg);
    _exit(0);
  }

  /* the static executor on every data set */
  dy_tensor *in[DY_MAX_FEEDS], *out[DY_MAX_FEEDS];
  for (int k = 0; k < n_sets; k++) {
    for (int i = 0; i < p->n_feeds; i++) {
      const char *nm = p->vars[p->feeds[i]]->name;
      int pos = -1;
      for (int j = 0; j < n_gin; j++)
        if (strcmp(gin[j], nm) == 0)
          pos = j;
      in[i] = input_for(&sets[k], nm, pos);
      if (!in[i]) {
        write_result(res, R_FAIL, 0, 0, bound, n_sets, "no data for input '%s'", nm);
        _exit(0);
      }
    }
    if (p->n_fetches != sets[k].n_out) {
      write_result(res, R_FAIL, 0, 0, bound, n_sets, "%d outputs, the data set has %d",
                   p->n_fetches, sets[k].n_out);
      _exit(0);
    }
    if ((s = dy_executor_run(p, in, p->n_feeds, out, p->n_fetches, &err))) {
      write_result(res, classify(s), 0, 0, bound, n_sets, "executor: %s", err.msg);
      _exit(0);
    }
    for (int i = 0; i < p->n_fetches; i++) {
      char why[300];
      if (!tensors_match(out[i], sets[k].out[i], why, sizeof why)) {
        write_result(res, R_FAIL, 0, 0, bound, n_sets, "executor, data set %d, output '%s': %s",
                     k, p->vars[p->fetches[i]]->name, why);
        _exit(0);
      }
      dy_tensor_free(out[i]);
    }
  }
  if (!compile) {
    write_result(res, R_PASS, 1, 0, bound, n_sets, "executor only");
    _exit(0);
  }

  /* emit C, and the inputs as raw files */
  dy_compile_options o = dy_compile_options_default();
  char name[32];
  snprintf(name, sizeof name, "t%d", idx);
  o.name = name;
  o.emit_main = false;
  o.source = model;
  dy_codegen_output co = {0};
  if ((s = dy_compile_program(p, &o, &co, NULL, &err))) {
    write_result(res, classify(s), 1, 0, bound, n_sets, "compile: %s", err.msg);
    _exit(0);
  }
  char base[4400];
  snprintf(base, sizeof base, "%s/t%d", work_dir, idx);
  if ((s = dy_write_sources(&co, base, &err))) {
    write_result(res, R_FAIL, 1, 0, bound, n_sets, "writing C: %s", err.msg);
    _exit(0);
  }
  for (int k = 0; k < n_sets; k++)
    for (int i = 0; i < p->n_feeds; i++) {
      const char *nm = p->vars[p->feeds[i]]->name;
      int pos = -1;
      for (int j = 0; j < n_gin; j++)
        if (strcmp(gin[j], nm) == 0)
          pos = j;
      dy_tensor *x = input_for(&sets[k], nm, pos);
      char path[4500];
      snprintf(path, sizeof path, "%s_%d_in%d.bin", base, k, i);
      if ((s = dy_write_file_atomic(path, x->data, x->nbytes, &err))) {
        write_result(res, R_FAIL, 1, 0, bound, n_sets, "%s", err.msg);
        _exit(0);
      }
    }
  /* the driver's argument list per data set: batch, inputs, outputs */
  char spec[4500];
  snprintf(spec, sizeof spec, "%s.spec", base);
  FILE *f = fopen(spec, "w");
  if (!f) {
    write_result(res, R_FAIL, 1, 0, bound, n_sets, "cannot write %s", spec);
    _exit(0);
  }
  fprintf(f, "%d %d %d\n", n_sets, p->n_feeds, p->n_fetches);
  for (int k = 0; k < n_sets; k++) {
    int64_t batch = 1;
    for (int i = 0; i < p->n_feeds; i++) {
      const dy_var *v = p->vars[p->feeds[i]];
      for (int d = 0; d < v->type.rank; d++)
        if (v->type.shape[d] < 0)
          batch = input_for(&sets[k], v->name, i)->type.shape[d];
    }
    fprintf(f, "%lld", (long long)batch);
    for (int i = 0; i < p->n_fetches; i++) {
      /* the buffer: the bytes expected, or more at a size symbol's bound */
      const dy_type *t = &p->vars[p->fetches[i]]->type;
      size_t at_bound = dy_dtype_size(t->dtype);
      for (int d = 0; d < t->rank; d++)
        at_bound *= (size_t)(t->shape[d] >= 0 ? t->shape[d]
                                              : t->shape[d] == -1 ? batch
                                                                  : dy_program_dim_bound(p, t->shape[d]));
      fprintf(f, " %zu", at_bound > sets[k].out[i]->nbytes ? at_bound : sets[k].out[i]->nbytes);
    }
    fprintf(f, "\n");
  }
  fclose(f);
  write_result(res, R_PASS, 1, 1, bound, n_sets, "executor ok, C emitted");
  _exit(0);
}

/* ------------------------------------------------------------------ */
/* a tiny process pool                                                 */
/* ------------------------------------------------------------------ */

typedef void (*job_fn)(test_case *t, int idx, void *ctx);
typedef void (*done_fn)(test_case *t, int idx, int status, void *ctx);

static void run_pool(test_case *tests, int n, bool (*want)(const test_case *),
                     job_fn job, done_fn done, void *ctx) {
  pid_t *pids = calloc((size_t)jobs, sizeof *pids);
  int *who = calloc((size_t)jobs, sizeof *who);
  int next = 0, running = 0;
  for (;;) {
    while (running < jobs && next < n) {
      if (!want(&tests[next])) {
        next++;
        continue;
      }
      int slot = 0;
      while (pids[slot])
        slot++;
      fflush(NULL);
      pid_t pid = fork();
      if (pid == 0) {
        job(&tests[next], next, ctx);
        _exit(0);
      }
      pids[slot] = pid;
      who[slot] = next++;
      running++;
    }
    if (!running)
      break;
    int status;
    pid_t pid = wait(&status);
    if (pid < 0)
      break;
    for (int s = 0; s < jobs; s++)
      if (pids[s] == pid) {
        pids[s] = 0;
        running--;
        done(&tests[who[s]], who[s], status, ctx);
      }
  }
  free(pids);
  free(who);
}

static bool want_all(const test_case *t) { return true; }

static void phase1_job(test_case *t, int idx, void *ctx) {
  child_phase1(t, idx, *(bool *)ctx);
}

static void phase1_done(test_case *t, int idx, int status, void *ctx) {
  char res[4400];
  snprintf(res, sizeof res, "%s/t%d.res", work_dir, idx);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    t->result = sig == SIGALRM ? R_FAIL : R_CRASH;
    snprintf(t->msg, sizeof t->msg, "%s (signal %d) while loading / running the executor / "
             "emitting C", sig == SIGALRM ? "time-out" : "crash", sig);
    return;
  }
  FILE *f = fopen(res, "r");
  int r = R_FAIL, e = 0, comp = 0, b = 0, ns = 0;
  if (!f || fscanf(f, "%d %d %d %d %d\n", &r, &e, &comp, &b, &ns) != 5) {
    t->result = R_FAIL;
    snprintf(t->msg, sizeof t->msg, "no result from the child");
  } else {
    t->result = r;
    t->exec_ok = e;
    t->compiled = comp;
    t->bound = b;
    t->n_sets = ns;
    size_t k = fread(t->msg, 1, sizeof t->msg - 1, f);
    t->msg[k] = 0;
    one_line(t->msg);
  }
  if (f)
    fclose(f);
  remove(res);
}

/* ------------------------------------------------------------------ */
/* phase 2: build the driver                                           */
/* ------------------------------------------------------------------ */

static int run_cc(char **argv) {
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Compile tI.c and tI_weights.c into tI.o and tI_weights.o for each I of
 * idx, in work_dir (one cc process; each model is its own translation
 * unit: their static names overlap). */
static int compile_objects(const int *idx, int n) {
  char **argv = calloc(2 * (size_t)n + 16, sizeof *argv);
  char (*files)[32] = calloc(2 * (size_t)n, sizeof *files);
  int a = 0;
  argv[a++] = (char *)cc;
  argv[a++] = "-std=c11";
  argv[a++] = "-O1";
  argv[a++] = "-w";
  argv[a++] = "-c";
  for (int i = 0; i < n; i++) {
    snprintf(files[2 * i], sizeof files[0], "t%d.c", idx[i]);
    snprintf(files[2 * i + 1], sizeof files[0], "t%d_weights.c", idx[i]);
    argv[a++] = files[2 * i];
    argv[a++] = files[2 * i + 1];
  }
  argv[a] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(work_dir) != 0)
      _exit(126);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0 && !verbose)
      dup2(null, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  free(argv);
  free(files);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static bool build_driver(test_case *tests, int n) {
  int *idx = malloc(sizeof(int) * (size_t)n), m = 0;
  for (int i = 0; i < n; i++)
    if (tests[i].compiled)
      idx[m++] = i;
  if (!m) {
    free(idx);
    return false;
  }
  /* batches of models per cc process, `jobs` processes at a time; a batch
   * that fails is retried model by model to find the culprit */
  int per = 25, n_b = (m + per - 1) / per;
  for (int b0 = 0; b0 < n_b; b0 += jobs) {
    pid_t pids[64];
    int nb = 0;
    for (int b = b0; b < n_b && b < b0 + jobs; b++, nb++) {
      int from = b * per, cnt = m - from < per ? m - from : per;
      fflush(NULL);
      pids[nb] = fork();
      if (pids[nb] == 0)
        _exit(compile_objects(idx + from, cnt) ? 1 : 0);
    }
    for (int k = 0; k < nb; k++) {
      int status;
      waitpid(pids[k], &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        continue;
      int b = b0 + k, from = b * per, cnt = m - from < per ? m - from : per;
      for (int j = from; j < from + cnt; j++)
        if (compile_objects(idx + j, 1) != 0) {
          test_case *t = &tests[idx[j]];
          t->compiled = false;
          t->result = R_FAIL;
          snprintf(t->msg, sizeof t->msg, "the generated C does not compile (%s/t%d.c)",
                   work_dir, idx[j]);
        }
    }
  }
  /* driver.c: a table of the models, run one by index */
  char drv[4400];
  snprintf(drv, sizeof drv, "%s/driver.c", work_dir);
  FILE *f = fopen(drv, "w");
  if (!f)
    return false;
  fprintf(f, "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n");
  for (int i = 0; i < m; i++)
    if (tests[idx[i]].compiled)
      fprintf(f, "#include \"t%d.h\"\n", idx[i]);
  fputs(DRIVER_DIMS, f);
  for (int i = 0; i < m; i++)
    if (tests[idx[i]].compiled) {
      int t = idx[i];
      fprintf(f, DRIVER_RUN_D, t, t, t, t, t, t, t, t, t, t, t, t, t);
    }
  fprintf(f, "typedef int (*run_fn)(void *, int64_t, const void *const *, void *const *);\n"
             "static const struct { int id; run_fn run; size_t arena; } models[] = {\n");
  for (int i = 0; i < m; i++)
    if (tests[idx[i]].compiled)
      fprintf(f, "  {%d, T%d_RUN, T%d_ARENA_BYTES},\n", idx[i], idx[i], idx[i]);
  fprintf(f, "  {-1, 0, 0}};\n");
  fputs(DRIVER_MAIN, f);
  fclose(f);
  char **argv = calloc(2 * (size_t)m + 16, sizeof *argv);
  char (*objs)[4400] = calloc(2 * (size_t)m, sizeof *objs);
  int a = 0;
  char exe[4400];
  snprintf(exe, sizeof exe, "%s/driver", work_dir);
  argv[a++] = (char *)cc;
  argv[a++] = "-std=c11";
  argv[a++] = "-O1";
  argv[a++] = "-w";
  argv[a++] = "-o";
  argv[a++] = exe;
  argv[a++] = drv;
  for (int i = 0; i < m; i++)
    if (tests[idx[i]].compiled) {
      snprintf(objs[2 * i], sizeof objs[0], "%s/t%d.o", work_dir, idx[i]);
      snprintf(objs[2 * i + 1], sizeof objs[0], "%s/t%d_weights.o", work_dir, idx[i]);
      argv[a++] = objs[2 * i];
      argv[a++] = objs[2 * i + 1];
    }
  argv[a++] = "-lm";
  argv[a] = NULL;
  int rc = run_cc(argv);
  free(argv);
  free(objs);
  free(idx);
  return rc == 0;
}

/* ------------------------------------------------------------------ */
/* phase 3: run the compiled models                                    */
/* ------------------------------------------------------------------ */

static bool want_compiled(const test_case *t) { return t->compiled; }

/* Child: run the driver on each data set and compare. */
static void phase3_job(test_case *t, int idx, void *ctx) {
  char res[4400], spec[4400];
  snprintf(res, sizeof res, "%s/t%d.res", work_dir, idx);
  snprintf(spec, sizeof spec, "%s/t%d.spec", work_dir, idx);
  alarm(120);
  FILE *f = fopen(spec, "r");
  int n_sets, n_in, n_out;
  if (!f || fscanf(f, "%d %d %d", &n_sets, &n_in, &n_out) != 3) {
    write_result(res, R_FAIL, 1, 1, t->bound, 0, "no spec");
    _exit(0);
  }
  dy_error err = {0};
  for (int k = 0; k < n_sets; k++) {
    long long batch;
    size_t sizes[MAX_IO];
    if (fscanf(f, "%lld", &batch) != 1)
      _exit(1);
    for (int i = 0; i < n_out; i++)
      if (fscanf(f, "%zu", &sizes[i]) != 1)
        _exit(1);
    char *argv[4 + 2 * MAX_IO + 2 * MAX_IO + 4];
    char buf[2 * MAX_IO + 8][4400];
    int a = 0, b = 0;
    argv[a++] = (char *)"driver";
    snprintf(buf[b], sizeof buf[b], "%d", idx);
    argv[a++] = buf[b++];
    snprintf(buf[b], sizeof buf[b], "%lld", batch);
    argv[a++] = buf[b++];
    snprintf(buf[b], sizeof buf[b], "%d", n_in);
    argv[a++] = buf[b++];
    for (int i = 0; i < n_in; i++) {
      snprintf(buf[b], sizeof buf[b], "%s/t%d_%d_in%d.bin", work_dir, idx, k, i);
      argv[a++] = buf[b++];
    }
    snprintf(buf[b], sizeof buf[b], "%d", n_out);
    argv[a++] = buf[b++];
    char outp[MAX_IO][4400], sz[MAX_IO][32];
    for (int i = 0; i < n_out; i++) {
      snprintf(sz[i], sizeof sz[i], "%zu", sizes[i]);
      snprintf(outp[i], sizeof outp[i], "%s/t%d_%d_out%d.bin", work_dir, idx, k, i);
      argv[a++] = sz[i];
      argv[a++] = outp[i];
    }
    argv[a] = NULL;
    char exe[4400];
    snprintf(exe, sizeof exe, "%s/driver", work_dir);
    pid_t pid = fork();
    if (pid == 0) {
      execv(exe, argv);
      _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      write_result(res, WTERMSIG(status) == SIGALRM ? R_FAIL : R_CRASH, 1, 1, t->bound,
                   n_sets, "the compiled model died on signal %d (data set %d)",
                   WTERMSIG(status), k);
      _exit(0);
    }
    if (WEXITSTATUS(status)) {
      write_result(res, R_FAIL, 1, 1, t->bound, n_sets,
                   "the compiled model exited %d (data set %d)", WEXITSTATUS(status), k);
      _exit(0);
    }
    data_set d;
    if (read_set(t->dir, k, &d, &err)) {
      write_result(res, R_FAIL, 1, 1, t->bound, n_sets, "%s", err.msg);
      _exit(0);
    }
    for (int i = 0; i < n_out && i < d.n_out; i++) {
      uint8_t *got;
      size_t len;
      if (dy_read_file(outp[i], &got, &len, &err) || len != d.out[i]->nbytes) {
        write_result(res, R_FAIL, 1, 1, t->bound, n_sets, "output %d: wrong size", i);
        _exit(0);
      }
      dy_tensor g = *d.out[i];
      g.data = got;
      char why[300];
      if (!tensors_match(&g, d.out[i], why, sizeof why)) {
        write_result(res, R_FAIL, 1, 1, t->bound, n_sets,
                     "compiled C, data set %d, output %d: %s", k, i, why);
        _exit(0);
      }
      free(got);
      remove(outp[i]);
    }
    free_set(&d);
  }
  fclose(f);
  write_result(res, R_PASS, 1, 1, t->bound, n_sets, "");
  _exit(0);
}

static void phase3_done(test_case *t, int idx, int status, void *ctx) {
  test_case keep = *t;
  phase1_done(t, idx, status, ctx);
  if (t->result == R_CRASH || (WIFSIGNALED(status)))
    snprintf(t->msg, sizeof t->msg, "crash (signal %d) comparing the compiled model",
             WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  t->bound = keep.bound;
}

/* ------------------------------------------------------------------ */
/* reports                                                             */
/* ------------------------------------------------------------------ */

typedef struct {
  char op[96];
  int n, by[5], bound;
} op_row;

static int cmp_row(const void *a, const void *b) {
  return strcmp(((const op_row *)a)->op, ((const op_row *)b)->op);
}

static void write_summary(const char *path, test_case *t, int n, double secs) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path);
    return;
  }
  op_row *rows = calloc((size_t)n, sizeof *rows);
  int nr = 0, tot[5] = {0}, bound = 0;
  for (int i = 0; i < n; i++) {
    int k = 0;
    while (k < nr && strcmp(rows[k].op, t[i].op) != 0)
      k++;
    if (k == nr)
      snprintf(rows[nr++].op, sizeof rows[0].op, "%s", t[i].op);
    rows[k].n++;
    rows[k].by[t[i].result]++;
    tot[t[i].result]++;
    if (t[i].result == R_PASS && t[i].bound) {
      rows[k].bound++;
      bound++;
    }
  }
  qsort(rows, (size_t)nr, sizeof *rows, cmp_row);
  fprintf(f, "# ONNX backend conformance (node tests)\n\n"
             "Generated by `onnx_conformance --summary` (tests/onnx/README.md); do not\n"
             "edit. Data: Debian libonnx-testdata, `%s`.\n\n", data_dir);
  fprintf(f, "**%d tests: %d pass (%d with every input supplied at run time, %d only with "
             "shape-deciding graph inputs bound at compile time), %d unsupported, %d fail, "
             "%d crash.**\n\n", n, tot[R_PASS], tot[R_PASS] - bound, bound, tot[R_UNSUPPORTED],
          tot[R_FAIL], tot[R_CRASH]);
  fprintf(f, "A pass means the static executor and the compiled C both match every data set "
             "(rtol 1e-3, atol 1e-4; exact for the integer dtypes and bool). \"bound\" passes needed graph "
             "inputs that decide a shape (Reshape's shape, Resize's scales, ...) bound to "
             "their test values at compile time, a specialisation, and are counted apart. "
             "Run time %.0f s.\n\n", secs);
  fprintf(f, "| op | tests | pass (run time) | pass (bound) | unsupported | fail | crash |\n"
             "|---|---:|---:|---:|---:|---:|---:|\n");
  for (int k = 0; k < nr; k++)
    fprintf(f, "| %s | %d | %d | %d | %d | %d | %d |\n", rows[k].op, rows[k].n,
            rows[k].by[R_PASS] - rows[k].bound, rows[k].bound, rows[k].by[R_UNSUPPORTED],
            rows[k].by[R_FAIL],
            rows[k].by[R_CRASH]);
  fprintf(f, "| **total** | %d | %d | %d | %d | %d | %d |\n\n", n, tot[R_PASS] - bound, bound,
          tot[R_UNSUPPORTED], tot[R_FAIL], tot[R_CRASH]);
  fprintf(f, "## Every test\n\n| test | result | reason |\n|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    char msg[400];
    const char *m = t[i].msg;
    const char *cut = strstr(m, "model.onnx: ");
    snprintf(msg, sizeof msg, "%.390s", cut ? cut + 12 : m);
    fprintf(f, "| %s | %s%s | %s |\n", t[i].name, result_name[t[i].result],
            t[i].result == R_PASS && t[i].bound ? " (bound)" : "",
            t[i].result == R_PASS ? "" : msg);
  }
  fclose(f);
  free(rows);
}

/* ------------------------------------------------------------------ */
/* main                                                                */
/* ------------------------------------------------------------------ */

int main(int argc, char **argv) {
  const char *expected = NULL, *write_expected = NULL, *summary = NULL, *filter = NULL;
  bool compile = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (strcmp(a, "--data") == 0 && has)
      data_dir = argv[++i];
    else if (strcmp(a, "--work") == 0 && has)
      work_dir = argv[++i];
    else if (strcmp(a, "--expected") == 0 && has)
      expected = argv[++i];
    else if (strcmp(a, "--write-expected") == 0 && has)
      write_expected = argv[++i];
    else if (strcmp(a, "--summary") == 0 && has)
      summary = argv[++i];
    else if (strcmp(a, "--filter") == 0 && has)
      filter = argv[++i];
    else if (strcmp(a, "--jobs") == 0 && has)
      jobs = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
    else if (strcmp(a, "--cc") == 0 && has)
      cc = argv[++i];
    else if (strcmp(a, "--no-compile") == 0)
      compile = false;
    else if (strcmp(a, "-v") == 0)
      verbose = true;
    else {
      fprintf(stderr, "usage: %s [--data DIR] [--work DIR] [--expected FILE] "
                      "[--write-expected FILE] [--summary FILE] [--filter S] [--jobs N] "
                      "[--no-compile] [--cc CC] [-v]\n", argv[0]);
      return 2;
    }
  }
  if (!cc)
    cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
  if (jobs > 64)
    jobs = 64;
  double t0 = now();
  mkdir(work_dir, 0777);
  DIR *d = opendir(data_dir);
  if (!d) {
    fprintf(stderr, "onnx_conformance: cannot open %s: %s (install libonnx-testdata)\n",
            data_dir, strerror(errno));
    return 1;
  }
  char **names = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "test_", 5) != 0 || (filter && !strstr(e->d_name, filter)))
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 1024;
      names = realloc(names, sizeof *names * (size_t)cap);
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  test_case *tests = calloc((size_t)n + 1, sizeof *tests);
  for (int i = 0; i < n; i++) {
    snprintf(tests[i].name, sizeof tests[i].name, "%s", names[i]);
    snprintf(tests[i].dir, sizeof tests[i].dir, "%s/%s", data_dir, names[i]);
    test_op(tests[i].dir, names[i], tests[i].op, sizeof tests[i].op);
    free(names[i]);
  }
  free(names);

  run_pool(tests, n, want_all, phase1_job, phase1_done, &compile);
  double t1 = now();
  int n_c = 0;
  for (int i = 0; i < n; i++)
    n_c += tests[i].compiled;
  fprintf(stderr, "onnx_conformance: %d tests loaded and run on the executor in %.1f s; "
                  "%d emitted C\n", n, t1 - t0, n_c);
  if (compile && n_c) {
    if (!build_driver(tests, n)) {
      fprintf(stderr, "onnx_conformance: building the driver failed\n");
      for (int i = 0; i < n; i++)
        if (tests[i].compiled) {
          tests[i].compiled = false;
          tests[i].result = R_FAIL;
          snprintf(tests[i].msg, sizeof tests[i].msg, "the driver did not link");
        }
    }
    double t2 = now();
    fprintf(stderr, "onnx_conformance: C built in %.1f s\n", t2 - t1);
    run_pool(tests, n, want_compiled, phase3_job, phase3_done, NULL);
    fprintf(stderr, "onnx_conformance: compiled models run in %.1f s\n", now() - t2);
  }
  double secs = now() - t0;

  int tot[5] = {0}, bound = 0;
  for (int i = 0; i < n; i++) {
    tot[tests[i].result]++;
    bound += tests[i].result == R_PASS && tests[i].bound;
    if (verbose || tests[i].result == R_CRASH)
      printf("%-60s %-11s %s\n", tests[i].name, result_name[tests[i].result],
             tests[i].result == R_PASS ? (tests[i].bound ? "(bound)" : "") : tests[i].msg);
  }
  if (summary)
    write_summary(summary, tests, n, secs);
  if (write_expected) {
    FILE *f = fopen(write_expected, "w");
    if (f) {
      fprintf(f, "# ONNX node tests that must pass (onnx_conformance --write-expected);\n"
                 "# see tests/onnx/README.md\n");
      for (int i = 0; i < n; i++)
        if (tests[i].result == R_PASS)
          fprintf(f, "%s\n", tests[i].name);
      fclose(f);
    }
  }
  int regressions = 0;
  if (expected) {
    FILE *f = fopen(expected, "r");
    if (!f) {
      fprintf(stderr, "onnx_conformance: cannot read %s\n", expected);
      return 1;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = 0;
      if (!line[0] || line[0] == '#')
        continue;
      int k = 0;
      while (k < n && strcmp(tests[k].name, line) != 0)
        k++;
      if (k == n) {
        if (!filter) {
          printf("REGRESSION %s: listed as passing but not found\n", line);
          regressions++;
        }
      } else if (tests[k].result != R_PASS) {
        printf("REGRESSION %s: %s: %s\n", line, result_name[tests[k].result], tests[k].msg);
        regressions++;
      }
    }
    fclose(f);
  }
  printf("onnx conformance: %d tests: %d pass (%d run time, %d with bound shape inputs), "
         "%d unsupported, %d fail, %d crash; %.0f s\n", n, tot[R_PASS], tot[R_PASS] - bound,
         bound, tot[R_UNSUPPORTED], tot[R_FAIL], tot[R_CRASH], secs);
  if (expected)
    printf("%d passed, %d failed\n", tot[R_PASS], regressions + tot[R_CRASH]);
  free(tests);
  return regressions || tot[R_CRASH] ? 1 : 0;
}
