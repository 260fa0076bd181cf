/* test_codegen.c - the C generator, end to end.
 *
 * Each test builds a small Program by hand, lays its vars out in the arena
 * (a trivial sequential plan), generates NAME.h / NAME.c, compiles them with
 * ${CC:-cc} -std=c99 -Wall -Wextra -Werror -pedantic, links a small driver
 * written here that runs NAME_run_v on fixed inputs and prints every output,
 * and compares the numbers with a reference computed in this file (double
 * precision, relative tolerance 1e-5). Scratch files go under
 * DY_BUILD_DIR/codegen_scratch/<test>.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cg_program.h"
#include "dy_codegen.h"
#include "dy_ir.h"
#include "dy_test.h"

#define SCRATCH DY_BUILD_DIR "/codegen_scratch"
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define IDS(...) ((const int[]){__VA_ARGS__})
#define MAXV 4096

/* ------------------------------------------------------------------ */
/* Building programs                                                   */
/* ------------------------------------------------------------------ */

static int var(dy_program *p, const char *name, dy_dtype dt, int rank,
               const int64_t *dims) {
  dy_type t = {.dtype = dt, .rank = rank};
  for (int i = 0; i < rank; i++)
    t.shape[i] = dims[i];
  int id = dy_program_add_var(p, name, &t);
  CU_ASSERT_FATAL(id >= 0);
  return id;
}

static int feed(dy_program *p, const char *name, dy_dtype dt, int rank,
                const int64_t *dims) {
  int id = var(p, name, dt, rank, dims);
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_add_feed(p, id, &err), &err);
  return id;
}

static void fetch(dy_program *p, int id) {
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_add_fetch(p, id, &err), &err);
}

static int weight(dy_program *p, const char *name, dy_dtype dt, int rank,
                  const int64_t *dims, const void *data) {
  int id = var(p, name, dt, rank, dims);
  dy_error err = {0};
  size_t n = (size_t)dy_type_numel(&p->vars[id]->type) * dy_dtype_size(dt);
  DY_ASSERT_OK(dy_program_set_data(p, id, data, n, &err), &err);
  return id;
}

static void op(dy_program *p, dy_op_kind k, const int *in, int nin, int out,
               const dy_attr *attrs, int nattrs) {
  dy_op *o = dy_program_append_op(p, 0, k, in, nin, (int[]){out}, 1, attrs,
                                  nattrs, (dy_srcloc){"models/net.c", 10 + k});
  CU_ASSERT_FATAL(o != NULL);
}

/* Sequential memory plan: every var that needs arena space gets its own
 * 64-aligned slot sized at max_batch. Returns the arena size. */
static int64_t plan(dy_program *p, int64_t max_batch) {
  int64_t off = 0;
  for (int i = 0; i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    if (v->persistable || v->feed_index >= 0 || v->fetch_index >= 0 ||
        v->alias_of >= 0)
      continue;
    v->mem_offset = off;
    int64_t bytes = dy_type_numel_at(&v->type, max_batch) *
                    (int64_t)dy_dtype_size(v->type.dtype);
    off += (bytes + 63) / 64 * 64;
  }
  return off;
}

/* ------------------------------------------------------------------ */
/* Files and commands                                                  */
/* ------------------------------------------------------------------ */

static const char *cc(void) {
  const char *c = getenv("CC");
  return c && *c ? c : "cc";
}

static void make_dir(const char *path) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    CU_FAIL_FATAL("cannot create scratch dir");
}

static const char *scratch(const char *test) {
  static char buf[512];
  make_dir(DY_BUILD_DIR);
  make_dir(SCRATCH);
  snprintf(buf, sizeof buf, SCRATCH "/%s", test);
  make_dir(buf);
  return buf;
}

static void write_text(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs(s, f);
  fclose(f);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

#define sh(...) dy_test_sh(NULL, __VA_ARGS__)

static void show_file(const char *path) {
  char *s = read_text(path);
  if (s && *s)
    fprintf(stderr, "\n---- %s ----\n%s\n", path, s);
  free(s);
}

#define STRICT "-std=c99 -Wall -Wextra -Werror -pedantic -O2"

/* Generate NAME.{h,c} (and main.c) into dir and compile NAME.c. */
static bool emit_and_compile(dy_program *p, const char *dir, const char *name,
                             int64_t max_batch, bool with_main,
                             dy_codegen_output *out) {
  dy_error err0 = {0};
  if (dy_program_bound_sym(p, "batch", max_batch, &err0)) {
    fprintf(stderr, "\n  --max-batch: %s\n", err0.msg);
    return false;
  }
  dy_codegen_options opt = {.name = name,
                            .arena_bytes = plan(p, max_batch),
                            .emit_main = with_main,
                            .command_line = "dy2stc build net.dymodel -o out",
                            .source = "net.dymodel"};
  dy_error err = {0};
  dy_status s = dy_codegen(p, &opt, out, &err);
  if (s != DY_OK)
    fprintf(stderr, "\n  dy_codegen: %s\n", err.msg);
  CU_ASSERT_EQUAL(s, DY_OK);
  if (s != DY_OK)
    return false;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.h", dir, name);
  write_text(path, out->header);
  snprintf(path, sizeof path, "%s/%s.c", dir, name);
  write_text(path, out->source);
  if (with_main) {
    snprintf(path, sizeof path, "%s/main.c", dir);
    write_text(path, out->main_c);
  }
  int rc = sh("%s " STRICT " -c %s/%s.c -o %s/%s.o 2> %s/cc.log", cc(), dir,
              name, dir, name, dir);
  if (rc != 0) {
    snprintf(path, sizeof path, "%s/cc.log", dir);
    show_file(path);
  }
  CU_ASSERT_EQUAL(rc, 0);
  return rc == 0;
}

/* The driver: runs NAME_run_v at `batch` on the given inputs, prints every
 * output value on its own line, and checks the status codes for a bad
 * batch and a NULL arena. */
static void write_driver(const dy_program *p, const char *dir, const char *name,
                         int64_t batch, const void *const *ins) {
  char path[1024], upper[64];
  size_t n = strlen(name);
  for (size_t i = 0; i <= n; i++)
    upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
  snprintf(path, sizeof path, "%s/driver.c", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "#include <stdio.h>\n#include <stdint.h>\n#include \"%s.h\"\n\n", name);
  bool dynamic = false;
  for (int i = 0; i < p->n_vars; i++)
    for (int d = 0; d < p->vars[i]->type.rank; d++)
      dynamic |= p->vars[i]->type.shape[d] < 0;
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_type *t = &p->vars[p->feeds[i]]->type;
    int64_t ne = dy_type_numel_at(t, batch);
    fprintf(f, "static const %s in_%d[] = {",
            t->dtype == DY_F32 ? "float" : t->dtype == DY_I64 ? "int64_t" : "uint8_t", i);
    for (int64_t k = 0; k < ne; k++) {
      if (t->dtype == DY_F32)
        fprintf(f, "%s%.9g", k ? ", " : "", (double)((const float *)ins[i])[k]);
      else if (t->dtype == DY_I64)
        fprintf(f, "%s%lld", k ? ", " : "", (long long)((const int64_t *)ins[i])[k]);
      else
        fprintf(f, "%s%u", k ? ", " : "", ((const uint8_t *)ins[i])[k]);
    }
    fprintf(f, "%s};\n", ne ? "" : "0");
  }
  for (int i = 0; i < p->n_fetches; i++) {
    const dy_type *t = &p->vars[p->fetches[i]]->type;
    int64_t ne = dy_type_numel_at(t, batch);
    fprintf(f, "static %s out_%d[%lld];\n",
            t->dtype == DY_F32 ? "float" : t->dtype == DY_I64 ? "int64_t" : "uint8_t",
            i, (long long)(ne ? ne : 1));
  }
  fprintf(f, "static double arena[%s_ARENA_BYTES / 8 + 1];\n\n", upper);
  fprintf(f, "int main(void) {\n  const void *ins[] = {");
  for (int i = 0; i < p->n_feeds; i++)
    fprintf(f, "%sin_%d", i ? ", " : "", i);
  fprintf(f, "%s};\n  void *outs[] = {", p->n_feeds ? "" : "0");
  for (int i = 0; i < p->n_fetches; i++)
    fprintf(f, "%sout_%d", i ? ", " : "", i);
  fprintf(f, "%s};\n", p->n_fetches ? "" : "0");
  if (dynamic)
    fprintf(f,
            "  if (%s_run_v(arena, 0, ins, outs) != %s_ERR_BATCH) return 4;\n"
            "  if (%s_run_v(arena, %s_MAX_BATCH + 1, ins, outs) != %s_ERR_BATCH)"
            " return 5;\n",
            name, upper, name, upper, upper);
  fprintf(f, "  if (%s_ARENA_BYTES > 0 && %s_run_v(0, %lld, ins, outs) != "
             "%s_ERR_ARG) return 6;\n", upper, name, (long long)batch, upper);
  fprintf(f, "  if (%s_run_v(arena, %lld, ins, 0) != %s_ERR_ARG) return 7;\n",
          name, (long long)batch, upper);
  fprintf(f, "  int rc = %s_run_v(arena, %lld, ins, outs);\n"
             "  if (rc != %s_OK) {\n    printf(\"rc %%d\\n\", rc);\n    return 3;\n  }\n",
          name, (long long)batch, upper);
  for (int i = 0; i < p->n_fetches; i++) {
    const dy_type *t = &p->vars[p->fetches[i]]->type;
    int64_t ne = dy_type_numel_at(t, batch);
    fprintf(f, "  for (int i = 0; i < %lld; i++)\n", (long long)ne);
    if (t->dtype == DY_F32)
      fprintf(f, "    printf(\"%%.9g\\n\", (double)out_%d[i]);\n", i);
    else if (t->dtype == DY_I64)
      fprintf(f, "    printf(\"%%lld\\n\", (long long)out_%d[i]);\n", i);
    else
      fprintf(f, "    printf(\"%%u\\n\", (unsigned)out_%d[i]);\n", i);
  }
  fprintf(f, "  return 0;\n}\n");
  fclose(f);
}

/* Generate, build and run; the printed values into got. Returns their
 * count, or -1. */
static int run_program(dy_program *p, const char *test, const char *name,
                       int64_t max_batch, int64_t batch,
                       const void *const *ins, double *got, int cap) {
  const char *dir = scratch(test);
  dy_codegen_output out = {0};
  bool ok = emit_and_compile(p, dir, name, max_batch, false, &out);
  dy_codegen_output_free(&out);
  if (!ok)
    return -1;
  write_driver(p, dir, name, batch, ins);
  int rc = sh("%s -std=c99 -Wall -Wextra -Werror -pedantic -I%s -c %s/driver.c "
              "-o %s/driver.o 2> %s/cc.log && %s %s/driver.o %s/%s.o -lm -o %s/run "
              "2>> %s/cc.log",
              cc(), dir, dir, dir, dir, cc(), dir, dir, name, dir, dir);
  if (rc != 0) {
    char path[1024];
    snprintf(path, sizeof path, "%s/cc.log", dir);
    show_file(path);
  }
  CU_ASSERT_EQUAL(rc, 0);
  if (rc != 0)
    return -1;
  rc = sh("%s/run > %s/out.txt", dir, dir);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc != 0) {
    fprintf(stderr, "\n  %s/run exited with %d\n", dir, rc);
    return -1;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  FILE *f = fopen(path, "r");
  CU_ASSERT_FATAL(f != NULL);
  int n = 0;
  char line[256];
  while (n < cap && fgets(line, sizeof line, f))
    got[n++] = strtod(line, NULL);
  fclose(f);
  return n;
}

/* s with each newline and the indentation after it turned into one space,
 * so that tests need not know where long lines wrap. Malloc'd. */
static char *squash(const char *s) {
  char *d = malloc(strlen(s) + 1), *o = d;
  for (; *s; s++) {
    if (*s == '\n') {
      while (s[1] == ' ')
        s++;
      *o++ = ' ';
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
  return d;
}

static void check_close(const double *got, int n, const double *want, int m) {
  CU_ASSERT_EQUAL(n, m);
  int bad = 0;
  for (int i = 0; i < n && i < m; i++) {
    double tol = 1e-5 * fabs(want[i]) + 1e-6;
    if (!(fabs(got[i] - want[i]) <= tol) &&
        !(isinf(got[i]) && isinf(want[i]) && (got[i] > 0) == (want[i] > 0))) {
      if (bad++ < 5)
        fprintf(stderr, "\n  value %d: got %.9g, want %.9g", i, got[i], want[i]);
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* ------------------------------------------------------------------ */
/* Reference implementations (double precision, numpy semantics)       */
/* ------------------------------------------------------------------ */

static int64_t numel(const int64_t *s, int r) {
  int64_t n = 1;
  for (int i = 0; i < r; i++)
    n *= s[i];
  return n;
}

static void unravel(int64_t i, const int64_t *s, int r, int64_t *c) {
  for (int d = r - 1; d >= 0; d--) {
    c[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
}

/* Offset into an operand of shape s (rank r) broadcast to coordinate c of
 * rank cr (numpy: align right, size-1 dims repeat). */
static int64_t bcast_off(const int64_t *c, int cr, const int64_t *s, int r) {
  int64_t off = 0;
  for (int d = 0; d < r; d++) {
    int64_t x = s[d] == 1 ? 0 : c[d + cr - r];
    off = off * s[d] + x;
  }
  return off;
}

static void bcast_shape(const int64_t *a, int ar, const int64_t *b, int br,
                        int64_t *o, int *orank) {
  int r = ar > br ? ar : br;
  for (int d = 0; d < r; d++) {
    int ia = d - (r - ar), ib = d - (r - br);
    int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
    o[d] = x == 1 ? y : x;
  }
  *orank = r;
}

static double apply(char opc, double x, double y) {
  switch (opc) {
  case '+': return x + y;
  case '-': return x - y;
  case '*': return x * y;
  default: return x / y;
  }
}

/* out = a OP b; returns numel of out */
static int64_t ref_binary(char opc, const double *a, const int64_t *as, int ar,
                          const double *b, const int64_t *bs, int br,
                          double *out) {
  int64_t os[8], c[8];
  int orank;
  bcast_shape(as, ar, bs, br, os, &orank);
  int64_t n = numel(os, orank);
  for (int64_t i = 0; i < n; i++) {
    unravel(i, os, orank, c);
    out[i] = apply(opc, a[bcast_off(c, orank, as, ar)], b[bcast_off(c, orank, bs, br)]);
  }
  return n;
}

static int64_t ref_matmul(const double *x, const int64_t *xs, int xr, bool tx,
                          const double *y, const int64_t *ys, int yr, bool ty,
                          double *out) {
  int64_t m, k, n;
  int xb = xr > 2 ? xr - 2 : 0, yb = yr > 2 ? yr - 2 : 0;
  if (xr == 1) {
    m = 1;
    k = xs[0];
    tx = false;
  } else {
    m = xs[xr - (tx ? 1 : 2)];
    k = xs[xr - (tx ? 2 : 1)];
  }
  if (yr == 1) {
    n = 1;
    ty = false;
  } else {
    n = ys[yr - (ty ? 2 : 1)];
  }
  int64_t bs[8] = {0}, c[8] = {0}; /* br may be 0 */
  int br;
  bcast_shape(xs, xb, ys, yb, bs, &br);
  int64_t nb = numel(bs, br), idx = 0;
  for (int64_t bi = 0; bi < nb; bi++) {
    unravel(bi, bs, br, c);
    const double *xm = x + bcast_off(c, br, xs, xb) * m * k;
    const double *ym = y + bcast_off(c, br, ys, yb) * k * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t q = 0; q < k; q++)
          s += xm[tx ? q * m + i : i * k + q] * ym[ty ? j * k + q : q * n + j];
        out[idx++] = s;
      }
  }
  return idx;
}

static void ref_softmax(const double *x, const int64_t *s, int r, int axis,
                        double *out) {
  if (axis < 0)
    axis += r;
  int64_t outer = numel(s, axis), n = s[axis], inner = numel(s + axis + 1, r - axis - 1);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const double *a = x + o * n * inner + j;
      double *y = out + o * n * inner + j, mx = a[0], sum = 0;
      for (int64_t q = 0; q < n; q++)
        mx = a[q * inner] > mx ? a[q * inner] : mx;
      for (int64_t q = 0; q < n; q++)
        sum += y[q * inner] = exp(a[q * inner] - mx);
      for (int64_t q = 0; q < n; q++)
        y[q * inner] /= sum;
    }
}

static void ref_transpose(const double *x, const int64_t *s, int r,
                          const int64_t *perm, double *out) {
  int64_t os[8], c[8], ic[8];
  for (int d = 0; d < r; d++)
    os[d] = s[perm[d]];
  int64_t n = numel(s, r);
  for (int64_t i = 0; i < n; i++) {
    unravel(i, os, r, c);
    for (int d = 0; d < r; d++)
      ic[perm[d]] = c[d];
    int64_t off = 0;
    for (int d = 0; d < r; d++)
      off = off * s[d] + ic[d];
    out[i] = x[off];
  }
}

/* Deterministic test data. */
static void fill(float *f, double *d, int64_t n, int seed) {
  for (int64_t i = 0; i < n; i++) {
    float v = (float)(((i * 37 + seed * 11) % 41) - 20) / 8.0f;
    f[i] = v;
    if (d)
      d[i] = v;
  }
}

static void to_double(const float *f, double *d, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    d[i] = f[i];
}

/* ------------------------------------------------------------------ */
/* Tests: ops                                                          */
/* ------------------------------------------------------------------ */

static double got[MAXV], want[MAXV];

/* A fused op's kernel comment lists every op it was made from, in order,
 * with its file (basename, '?' when unknown) and line. */
static void test_fused_comment_lists_sources(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(2, 3));
  int w = weight(p, "w", DY_F32, 2, DIMS(2, 3), (const float[]){1, -2, 3, -4, 5, -6});
  int y = var(p, "y", DY_F32, 2, DIMS(2, 3));
  dy_attr expr = DY_ATTR_S("expr", "$0 $1 mul #1 add relu");
  op(p, DY_OP_FUSED_ELEMENTWISE, IDS(x, w), 2, y, &expr, 1);
  fetch(p, y);
  dy_op *f = p->blocks[0]->ops[0];
  f->srcs = dy_program_alloc(p, 3 * sizeof(dy_op_src));
  CU_ASSERT_PTR_NOT_NULL_FATAL(f->srcs);
  f->srcs[0] = (dy_op_src){DY_OP_MUL, {"models/cnn.c", 41}};
  f->srcs[1] = (dy_op_src){DY_OP_ADD, {NULL, 0}};
  f->srcs[2] = (dy_op_src){DY_OP_RELU, {"models/cnn.c", 43}};
  f->n_srcs = 3;
  dy_codegen_output out = {0};
  dy_error err = {0};
  dy_codegen_options opt = {.name = "m", .arena_bytes = 0};
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  const char *want = "/* op 0: fused_elementwise   cnn.c:41 mul, ?:0 add, cnn.c:43 relu   f32[2,3]";
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, want));
  if (!strstr(out.source, want)) {
    const char *c = strstr(out.source, "/* op 0:");
    fprintf(stderr, "\n  comment: %.160s\n", c ? c : "(none)");
  }
  /* the primary location alone is not printed beside the list */
  CU_ASSERT_PTR_NULL(strstr(out.source, "net.c:"));
  dy_codegen_output_free(&out);
  /* and it still computes relu(x * w + 1) */
  float xs[6] = {1, 2, 3, 4, 5, 6};
  int n = run_program(p, "fused_comment", "m", 1, 1, (const void *[]){xs}, got, MAXV);
  double e[6] = {2, 0, 10, 0, 26, 0};
  check_close(got, n, e, 6);
  dy_program_free(p);
}

static void test_add_same_shape(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(2, 3));
  int w = weight(p, "w", DY_F32, 2, DIMS(2, 3),
                 (const float[]){0.5f, -1, 2, 3, 4.25f, -0.125f});
  int y = var(p, "y", DY_F32, 2, DIMS(2, 3));
  op(p, DY_OP_ADD, IDS(x, w), 2, y, NULL, 0);
  fetch(p, y);
  float xs[6] = {1, 2, 3, 4, 5, 6};
  int n = run_program(p, "add_same", "m", 1, 1, (const void *[]){xs}, got, MAXV);
  double e[6] = {1.5, 1, 5, 7, 9.25, 5.875};
  check_close(got, n, e, 6);
  /* same shape: one flat loop */
  dy_codegen_output out = {0};
  dy_error err = {0};
  dy_codegen_options opt = {.name = "m", .arena_bytes = 0};
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  /* parameters named by role: a + b -> y */
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "y[i] = a[i] + b[i];"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "(const float *restrict a, const float *restrict b,"));
  CU_ASSERT_PTR_NULL(strstr(out.source, "in0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "/* op 0: add   net.c:10   f32[2,3] + f32[2,3] -> f32[2,3] */"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "static void k0_add_2x3("));
  CU_ASSERT_PTR_NULL(strstr(out.source, "batch)"));
  dy_codegen_output_free(&out);
  dy_program_free(p);
}

/* f32, dynamic batch, broadcasting in both directions and across ranks. */
static void test_broadcast_f32(void) {
  const int64_t B = 2;
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 3, DIMS(-1, 3, 4));
  int x2 = feed(p, "x2", DY_F32, 3, DIMS(-1, 1, 4));
  float bd[4], cd[3], ed[3], sd[1] = {0.75f};
  double bdd[4], cdd[3], edd[3], sdd[1] = {0.75};
  fill(bd, bdd, 4, 1);
  fill(cd, cdd, 3, 2);
  for (int i = 0; i < 3; i++)
    edd[i] = ed[i] = 1.5f + (float)i;
  int b = weight(p, "b", DY_F32, 1, DIMS(4), bd);
  int c = weight(p, "c", DY_F32, 2, DIMS(3, 1), cd);
  int e = weight(p, "e", DY_F32, 3, DIMS(1, 3, 1), ed);
  int s = weight(p, "s", DY_F32, 0, DIMS(0), sd);
  int t1 = var(p, "t1", DY_F32, 3, DIMS(-1, 3, 4));
  int t2 = var(p, "t2", DY_F32, 3, DIMS(-1, 3, 4));
  int t3 = var(p, "t3", DY_F32, 3, DIMS(-1, 3, 4));
  int t4 = var(p, "t4", DY_F32, 3, DIMS(-1, 3, 4));
  int t5 = var(p, "t5", DY_F32, 3, DIMS(-1, 3, 4));
  int t6 = var(p, "t6", DY_F32, 2, DIMS(3, 4));
  op(p, DY_OP_ADD, IDS(x, b), 2, t1, NULL, 0);   /* [B,3,4] + [4]      */
  op(p, DY_OP_SUB, IDS(c, t1), 2, t2, NULL, 0);  /* [3,1] - [B,3,4]    */
  op(p, DY_OP_MUL, IDS(t2, x2), 2, t3, NULL, 0); /* [B,3,4] * [B,1,4]  */
  op(p, DY_OP_DIV, IDS(t3, e), 2, t4, NULL, 0);  /* [B,3,4] / [1,3,1]  */
  op(p, DY_OP_ADD, IDS(s, t4), 2, t5, NULL, 0);  /* [] + [B,3,4]       */
  op(p, DY_OP_SUB, IDS(c, b), 2, t6, NULL, 0);   /* [3,1] - [4] = [3,4] */
  fetch(p, t5);
  fetch(p, t1);
  fetch(p, t6);

  float xs[24], x2s[8];
  double xd[24], x2d[8], r1[24], r2[24], r3[24], r4[24], r5[24], r6[12];
  fill(xs, xd, 24, 3);
  fill(x2s, x2d, 8, 4);
  int n = run_program(p, "broadcast_f32", "bc", 4, B, (const void *[]){xs, x2s},
                      got, MAXV);
  ref_binary('+', xd, DIMS(B, 3, 4), 3, bdd, DIMS(4), 1, r1);
  ref_binary('-', cdd, DIMS(3, 1), 2, r1, DIMS(B, 3, 4), 3, r2);
  ref_binary('*', r2, DIMS(B, 3, 4), 3, x2d, DIMS(B, 1, 4), 3, r3);
  ref_binary('/', r3, DIMS(B, 3, 4), 3, edd, DIMS(1, 3, 1), 3, r4);
  ref_binary('+', sdd, DIMS(0), 0, r4, DIMS(B, 3, 4), 3, r5);
  ref_binary('-', cdd, DIMS(3, 1), 2, bdd, DIMS(4), 1, r6);
  memcpy(want, r5, sizeof r5);
  memcpy(want + 24, r1, sizeof r1);
  memcpy(want + 48, r6, sizeof r6);
  check_close(got, n, want, 60);
  dy_program_free(p);
}

static void test_broadcast_i64(void) {
  dy_program *p = dy_program_new();
  int a = feed(p, "a", DY_I64, 2, DIMS(2, 3));
  int w = weight(p, "w", DY_I64, 1, DIMS(3), (const int64_t[]){3, 5, 7});
  int col = weight(p, "col", DY_I64, 2, DIMS(2, 1),
                   (const int64_t[]){INT64_C(10000000000), -4});
  int t1 = var(p, "t1", DY_I64, 2, DIMS(2, 3));
  int t2 = var(p, "t2", DY_I64, 2, DIMS(2, 3));
  int t3 = var(p, "t3", DY_I64, 2, DIMS(2, 3));
  int t4 = var(p, "t4", DY_I64, 2, DIMS(2, 3));
  op(p, DY_OP_MUL, IDS(a, w), 2, t1, NULL, 0);
  op(p, DY_OP_ADD, IDS(t1, col), 2, t2, NULL, 0);
  op(p, DY_OP_DIV, IDS(t2, w), 2, t3, NULL, 0);
  op(p, DY_OP_SUB, IDS(t3, a), 2, t4, NULL, 0);
  fetch(p, t2);
  fetch(p, t4);
  int64_t as[6] = {1, 2, 3, 4, 5, 6};
  int n = run_program(p, "broadcast_i64", "bi", 1, 1, (const void *[]){as}, got, MAXV);
  int64_t wv[3] = {3, 5, 7}, cv[2] = {INT64_C(10000000000), -4};
  double e[12];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      int64_t t2v = as[i * 3 + j] * wv[j] + cv[i];
      e[i * 3 + j] = (double)t2v;
      e[6 + i * 3 + j] = (double)(t2v / wv[j] - as[i * 3 + j]);
    }
  check_close(got, n, e, 12);
  dy_program_free(p);
}

static void test_unary(void) {
  const int64_t B = 3;
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 5));
  int r = var(p, "r", DY_F32, 2, DIMS(-1, 5));
  int s = var(p, "s", DY_F32, 2, DIMS(-1, 5));
  int t = var(p, "t", DY_F32, 2, DIMS(-1, 5));
  op(p, DY_OP_RELU, IDS(x), 1, r, NULL, 0);
  op(p, DY_OP_SIGMOID, IDS(x), 1, s, NULL, 0);
  op(p, DY_OP_TANH, IDS(x), 1, t, NULL, 0);
  fetch(p, r);
  fetch(p, s);
  fetch(p, t);
  float xs[15];
  double xd[15];
  fill(xs, xd, 15, 5);
  int n = run_program(p, "unary", "un", 4, B, (const void *[]){xs}, got, MAXV);
  for (int i = 0; i < 15; i++) {
    want[i] = xd[i] > 0 ? xd[i] : 0;
    want[15 + i] = 1 / (1 + exp(-xd[i]));
    want[30 + i] = tanh(xd[i]);
  }
  check_close(got, n, want, 45);
  dy_program_free(p);
}

/* The activations with a vector form reach it in every kernel they are
 * emitted into: no kernel calls dy_expf & co. in a scalar loop of its own
 * (dy_codegen_scalar_kernels, --report's "scalar math" line), and an op
 * left in scalar math (exp) is named. */
static void test_no_scalar_math(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(2, 37));
  const dy_op_kind acts[] = {DY_OP_SILU, DY_OP_HARD_SWISH, DY_OP_GELU, DY_OP_SIGMOID,
                             DY_OP_TANH};
  for (int i = 0; i < 5; i++) {
    char name[16];
    snprintf(name, sizeof name, "a%d", i);
    int y = var(p, name, DY_F32, 2, DIMS(2, 37));
    dy_attr ap = DY_ATTR_I("approximate", 0);
    op(p, acts[i], IDS(x), 1, y, &ap, acts[i] == DY_OP_GELU);
    fetch(p, y);
  }
  float wd[27], bd[3] = {0.1f, -0.2f, 0.3f};
  for (int i = 0; i < 27; i++)
    wd[i] = (float)(i % 5) * 0.25f - 0.5f;
  int xc = feed(p, "xc", DY_F32, 4, DIMS(1, 3, 9, 37));
  int w = weight(p, "w", DY_F32, 4, DIMS(3, 1, 3, 3), wd);
  int b = weight(p, "b", DY_F32, 1, DIMS(3), bd);
  const int64_t one2[] = {1, 1}, one4[] = {1, 1, 1, 1};
  const char *cacts[] = {"silu", "hard_swish", "sigmoid"};
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "c%d", i);
    int y = var(p, name, DY_F32, 4, DIMS(1, 3, 9, 37));
    dy_attr ca[] = {DY_ATTR_IS("strides", one2, 2), DY_ATTR_IS("paddings", one4, 4),
                    DY_ATTR_IS("dilations", one2, 2), DY_ATTR_I("groups", 3),
                    DY_ATTR_S("act", cacts[i]), DY_ATTR_F("alpha", 0), DY_ATTR_S("algo", "")};
    op(p, DY_OP_FUSED_CONV2D, IDS(xc, w, b), 3, y, ca, 7);
    fetch(p, y);
  }
  dy_codegen_output out = {0};
  dy_error err = {0};
  dy_codegen_options opt = {.name = "m", .arena_bytes = plan(p, 1)};
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  char names[256];
  CU_ASSERT_EQUAL(dy_codegen_scalar_kernels(out.source, names, sizeof names), 0);
  if (names[0])
    fprintf(stderr, "\n  scalar math in: %s\n", names);
  dy_codegen_output_free(&out);
  dy_program_free(p);
  /* exp has no vector form yet: flagged */
  p = dy_program_new();
  x = feed(p, "x", DY_F32, 2, DIMS(2, 37));
  int y = var(p, "y", DY_F32, 2, DIMS(2, 37));
  op(p, DY_OP_EXP, IDS(x), 1, y, NULL, 0);
  fetch(p, y);
  opt.arena_bytes = plan(p, 1);
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  CU_ASSERT_EQUAL(dy_codegen_scalar_kernels(out.source, names, sizeof names), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(names, "_exp_"));
  dy_codegen_output_free(&out);
  dy_program_free(p);
}

static dy_attr mm_attrs[2];
static const dy_attr *mm(int tx, int ty) {
  mm_attrs[0] = DY_ATTR_I("transpose_x", tx);
  mm_attrs[1] = DY_ATTR_I("transpose_y", ty);
  return mm_attrs;
}

static void test_matmul_2d_dynamic(void) {
  const int64_t B = 3;
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 4));
  float wd[12];
  double wdd[12], xd[12];
  fill(wd, wdd, 12, 7);
  int w = weight(p, "fc.weight", DY_F32, 2, DIMS(4, 3), wd);
  int y = var(p, "y", DY_F32, 2, DIMS(-1, 3));
  op(p, DY_OP_MATMUL, IDS(x, w), 2, y, mm(0, 0), 2);
  fetch(p, y);
  float xs[12];
  fill(xs, xd, 12, 8);
  int n = run_program(p, "matmul_2d", "mm2", 5, B, (const void *[]){xs}, got, MAXV);
  int64_t m = ref_matmul(xd, DIMS(B, 4), 2, false, wdd, DIMS(4, 3), 2, false, want);
  check_close(got, n, want, (int)m);
  dy_program_free(p);
}

/* Leading dims broadcast both ways: [2,1,3,4] @ [5,4,2] -> [2,5,3,2]. */
static void test_matmul_batched(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 4, DIMS(2, 1, 3, 4));
  int y = feed(p, "y", DY_F32, 3, DIMS(5, 4, 2));
  int z = var(p, "z", DY_F32, 4, DIMS(2, 5, 3, 2));
  int x3 = feed(p, "x3", DY_F32, 3, DIMS(-1, 3, 4));
  int w = weight(p, "w", DY_F32, 2, DIMS(4, 2),
                 (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
  int z3 = var(p, "z3", DY_F32, 3, DIMS(-1, 3, 2));
  op(p, DY_OP_MATMUL, IDS(x, y), 2, z, mm(0, 0), 2);
  op(p, DY_OP_MATMUL, IDS(x3, w), 2, z3, mm(0, 0), 2);
  fetch(p, z);
  fetch(p, z3);
  float xs[24], ys[40], x3s[24];
  double xd[24], yd[40], x3d[24], wdd[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  fill(xs, xd, 24, 1);
  fill(ys, yd, 40, 2);
  fill(x3s, x3d, 24, 3);
  int n = run_program(p, "matmul_batched", "mmb", 2, 2,
                      (const void *[]){xs, ys, x3s}, got, MAXV);
  int64_t m = ref_matmul(xd, DIMS(2, 1, 3, 4), 4, false, yd, DIMS(5, 4, 2), 3,
                         false, want);
  m += ref_matmul(x3d, DIMS(2, 3, 4), 3, false, wdd, DIMS(4, 2), 2, false, want + m);
  check_close(got, n, want, (int)m);
  dy_program_free(p);
}

static void test_matmul_transpose(void) {
  dy_program *p = dy_program_new();
  /* x [2,4,3] with transpose_x is [2,3,4]; y [2,5,4] with transpose_y is
   * [2,4,5] */
  int x = feed(p, "x", DY_F32, 3, DIMS(2, 4, 3));
  int y = feed(p, "y", DY_F32, 3, DIMS(2, 5, 4));
  int yn = feed(p, "yn", DY_F32, 3, DIMS(2, 4, 5));
  int xn = feed(p, "xn", DY_F32, 3, DIMS(2, 3, 4));
  int o_tt = var(p, "o_tt", DY_F32, 3, DIMS(2, 3, 5));
  int o_tn = var(p, "o_tn", DY_F32, 3, DIMS(2, 3, 5));
  int o_nt = var(p, "o_nt", DY_F32, 3, DIMS(2, 3, 5));
  op(p, DY_OP_MATMUL, IDS(x, y), 2, o_tt, mm(1, 1), 2);
  op(p, DY_OP_MATMUL, IDS(x, yn), 2, o_tn, mm(1, 0), 2);
  op(p, DY_OP_MATMUL, IDS(xn, y), 2, o_nt, mm(0, 1), 2);
  fetch(p, o_tt);
  fetch(p, o_tn);
  fetch(p, o_nt);
  const int64_t B = 2;
  float xs[24], ys[40], yns[40], xns[24];
  double xd[24], yd[40], ynd[40], xnd[24];
  fill(xs, xd, 24, 1);
  fill(ys, yd, 40, 2);
  fill(yns, ynd, 40, 3);
  fill(xns, xnd, 24, 4);
  int n = run_program(p, "matmul_transpose", "mmt", 4, B,
                      (const void *[]){xs, ys, yns, xns}, got, MAXV);
  int64_t m = ref_matmul(xd, DIMS(2, 4, 3), 3, true, yd, DIMS(2, 5, 4), 3, true, want);
  m += ref_matmul(xd, DIMS(2, 4, 3), 3, true, ynd, DIMS(2, 4, 5), 3, false, want + m);
  m += ref_matmul(xnd, DIMS(2, 3, 4), 3, false, yd, DIMS(2, 5, 4), 3, true, want + m);
  check_close(got, n, want, (int)m);
  dy_program_free(p);

  /* x^T y with K = batch (a weight gradient: the inner dim is the
   * dynamic batch on both sides), at batch 3 */
  p = dy_program_new();
  int xk = feed(p, "xk", DY_F32, 2, DIMS(-1, 3));
  int yk = feed(p, "yk", DY_F32, 2, DIMS(-1, 5));
  int o_k = var(p, "o_k", DY_F32, 2, DIMS(3, 5));
  op(p, DY_OP_MATMUL, IDS(xk, yk), 2, o_k, mm(1, 0), 2); /* x^T y */
  fetch(p, o_k);
  float xks[9], yks[15];
  double xkd[9], ykd[15], wantk[15], gotk[15];
  fill(xks, xkd, 9, 5);
  fill(yks, ykd, 15, 6);
  n = run_program(p, "matmul_k_batch", "mmk", 4, 3, (const void *[]){xks, yks}, gotk, 15);
  m = ref_matmul(xkd, DIMS(3, 3), 2, true, ykd, DIMS(3, 5), 2, false, wantk);
  CU_ASSERT_EQUAL(m, 15);
  check_close(gotk, n, wantk, (int)m);
  dy_program_free(p);
}

static void test_matmul_1d(void) {
  dy_program *p = dy_program_new();
  int v = feed(p, "v", DY_F32, 1, DIMS(4));
  int m34 = feed(p, "m34", DY_F32, 2, DIMS(3, 4));
  int m43 = feed(p, "m43", DY_F32, 2, DIMS(4, 3));
  int b43 = feed(p, "b43", DY_F32, 3, DIMS(2, 4, 3));
  int o1 = var(p, "o1", DY_F32, 1, DIMS(3));    /* v @ m43     */
  int o2 = var(p, "o2", DY_F32, 1, DIMS(3));    /* m34 @ v     */
  int o3 = var(p, "o3", DY_F32, 0, DIMS(0));    /* v @ v       */
  int o4 = var(p, "o4", DY_F32, 2, DIMS(2, 3)); /* v @ b43     */
  int o5 = var(p, "o5", DY_F32, 1, DIMS(3));    /* v @ m34^T   */
  int o6 = var(p, "o6", DY_F32, 2, DIMS(2, 3)); /* b43^T @ v   */
  op(p, DY_OP_MATMUL, IDS(v, m43), 2, o1, mm(0, 0), 2);
  op(p, DY_OP_MATMUL, IDS(m34, v), 2, o2, mm(0, 0), 2);
  op(p, DY_OP_MATMUL, IDS(v, v), 2, o3, mm(0, 0), 2);
  op(p, DY_OP_MATMUL, IDS(v, b43), 2, o4, mm(0, 0), 2);
  op(p, DY_OP_MATMUL, IDS(v, m34), 2, o5, mm(0, 1), 2);
  int v3 = feed(p, "v3", DY_F32, 1, DIMS(3));
  int o7 = var(p, "o7", DY_F32, 2, DIMS(2, 4)); /* b43 [2,4,3] @ v3 */
  op(p, DY_OP_MATMUL, IDS(b43, v3), 2, o7, mm(0, 0), 2);
  op(p, DY_OP_MATMUL, IDS(b43, v), 2, o6, mm(1, 0), 2);
  fetch(p, o1);
  fetch(p, o2);
  fetch(p, o3);
  fetch(p, o4);
  fetch(p, o5);
  fetch(p, o7);
  fetch(p, o6);
  float vs[4], a[12], b[12], c[24], v3s[3] = {1, -2, 0.5f};
  double vd[4], ad[12], bd[12], cd[24], v3d[3] = {1, -2, 0.5};
  fill(vs, vd, 4, 1);
  fill(a, ad, 12, 2);
  fill(b, bd, 12, 3);
  fill(c, cd, 24, 4);
  int n = run_program(p, "matmul_1d", "mm1", 1, 1,
                      (const void *[]){vs, a, b, c, v3s}, got, MAXV);
  int64_t m = ref_matmul(vd, DIMS(4), 1, false, bd, DIMS(4, 3), 2, false, want);
  m += ref_matmul(ad, DIMS(3, 4), 2, false, vd, DIMS(4), 1, false, want + m);
  m += ref_matmul(vd, DIMS(4), 1, false, vd, DIMS(4), 1, false, want + m);
  m += ref_matmul(vd, DIMS(4), 1, false, cd, DIMS(2, 4, 3), 3, false, want + m);
  m += ref_matmul(vd, DIMS(4), 1, false, ad, DIMS(3, 4), 2, true, want + m);
  m += ref_matmul(cd, DIMS(2, 4, 3), 3, false, v3d, DIMS(3), 1, false, want + m);
  m += ref_matmul(cd, DIMS(2, 4, 3), 3, true, vd, DIMS(4), 1, false, want + m);
  check_close(got, n, want, (int)m);
  dy_program_free(p);
}

static void test_softmax(void) {
  const int64_t B = 2;
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 5));
  int y = feed(p, "y", DY_F32, 2, DIMS(3, 4));
  int z = feed(p, "z", DY_F32, 3, DIMS(2, 3, 4));
  int ox = var(p, "ox", DY_F32, 2, DIMS(-1, 5));
  int oy = var(p, "oy", DY_F32, 2, DIMS(3, 4));
  int oz = var(p, "oz", DY_F32, 3, DIMS(2, 3, 4));
  int ob = var(p, "ob", DY_F32, 2, DIMS(-1, 5));
  op(p, DY_OP_SOFTMAX, IDS(x), 1, ox, (dy_attr[]){DY_ATTR_I("axis", -1)}, 1);
  op(p, DY_OP_SOFTMAX, IDS(y), 1, oy, (dy_attr[]){DY_ATTR_I("axis", 0)}, 1);
  op(p, DY_OP_SOFTMAX, IDS(z), 1, oz, (dy_attr[]){DY_ATTR_I("axis", 1)}, 1);
  op(p, DY_OP_SOFTMAX, IDS(x), 1, ob, (dy_attr[]){DY_ATTR_I("axis", 0)}, 1);
  fetch(p, ox);
  fetch(p, oy);
  fetch(p, oz);
  fetch(p, ob);
  float xs[10], ys[12], zs[24];
  double xd[10], yd[12], zd[24];
  fill(xs, xd, 10, 1);
  fill(ys, yd, 12, 2);
  fill(zs, zd, 24, 3);
  xs[3] = 80.0f; /* large: needs the max subtracted */
  xd[3] = 80.0;
  int n = run_program(p, "softmax", "sm", 3, B, (const void *[]){xs, ys, zs}, got, MAXV);
  ref_softmax(xd, DIMS(B, 5), 2, -1, want);
  ref_softmax(yd, DIMS(3, 4), 2, 0, want + 10);
  ref_softmax(zd, DIMS(2, 3, 4), 3, 1, want + 22);
  ref_softmax(xd, DIMS(B, 5), 2, 0, want + 46);
  check_close(got, n, want, 56);
  dy_program_free(p);
}

static void test_transpose(void) {
  const int64_t B = 2;
  static const int64_t p201[] = {2, 0, 1}, p021[] = {0, 2, 1}, p102[] = {1, 0, 2},
                       p012[] = {0, 1, 2}, pneg[] = {-1, 0, -2};
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 3, DIMS(2, 3, 4));
  int d = feed(p, "d", DY_F32, 3, DIMS(-1, 3, 4));
  int u = feed(p, "u", DY_F32, 4, DIMS(2, 1, 3, 4));
  int o1 = var(p, "o1", DY_F32, 3, DIMS(4, 2, 3));
  int o2 = var(p, "o2", DY_F32, 3, DIMS(2, 4, 3));
  int o3 = var(p, "o3", DY_F32, 3, DIMS(3, -1, 4));
  int o4 = var(p, "o4", DY_F32, 3, DIMS(2, 3, 4));
  int o5 = var(p, "o5", DY_F32, 3, DIMS(4, 2, 3));
  int o6 = var(p, "o6", DY_F32, 4, DIMS(1, 3, 2, 4));
  op(p, DY_OP_TRANSPOSE, IDS(x), 1, o1, (dy_attr[]){DY_ATTR_IS("perm", p201, 3)}, 1);
  op(p, DY_OP_TRANSPOSE, IDS(x), 1, o2, (dy_attr[]){DY_ATTR_IS("perm", p021, 3)}, 1);
  op(p, DY_OP_TRANSPOSE, IDS(d), 1, o3, (dy_attr[]){DY_ATTR_IS("perm", p102, 3)}, 1);
  op(p, DY_OP_TRANSPOSE, IDS(x), 1, o4, (dy_attr[]){DY_ATTR_IS("perm", p012, 3)}, 1);
  op(p, DY_OP_TRANSPOSE, IDS(x), 1, o5, (dy_attr[]){DY_ATTR_IS("perm", pneg, 3)}, 1);
  op(p, DY_OP_TRANSPOSE, IDS(u), 1, o6,
     (dy_attr[]){DY_ATTR_IS("perm", ((const int64_t[]){1, 2, 0, 3}), 4)}, 1);
  fetch(p, o1);
  fetch(p, o2);
  fetch(p, o3);
  fetch(p, o4);
  fetch(p, o5);
  fetch(p, o6);
  float xs[24], ds[24], us[24];
  double xd[24], dd[24], ud[24];
  fill(xs, xd, 24, 1);
  fill(ds, dd, 24, 2);
  fill(us, ud, 24, 3);
  int n = run_program(p, "transpose", "tr", 2, B, (const void *[]){xs, ds, us}, got, MAXV);
  ref_transpose(xd, DIMS(2, 3, 4), 3, p201, want);
  ref_transpose(xd, DIMS(2, 3, 4), 3, p021, want + 24);
  ref_transpose(dd, DIMS(B, 3, 4), 3, p102, want + 48);
  ref_transpose(xd, DIMS(2, 3, 4), 3, p012, want + 72);
  ref_transpose(xd, DIMS(2, 3, 4), 3, DIMS(2, 0, 1), want + 96);
  ref_transpose(ud, DIMS(2, 1, 3, 4), 4, DIMS(1, 2, 0, 3), want + 120);
  check_close(got, n, want, 144);
  dy_program_free(p);
}

/* reshape whose output aliases its input (no kernel) feeding an op, and a
 * flatten straight into an output (a copy kernel). */
static void test_views(void) {
  const int64_t B = 2;
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 3, DIMS(-1, 2, 3));
  int h = var(p, "h", DY_F32, 3, DIMS(-1, 2, 3));
  int r = var(p, "r", DY_F32, 2, DIMS(-1, 6));
  int rr = var(p, "rr", DY_F32, 2, DIMS(-1, 6));
  int xr = var(p, "xr", DY_F32, 2, DIMS(-1, 6));
  int f = var(p, "f", DY_F32, 2, DIMS(-1, 6));
  int s = var(p, "s", DY_F32, 2, DIMS(-1, 6));
  op(p, DY_OP_RELU, IDS(x), 1, h, NULL, 0);
  op(p, DY_OP_RESHAPE, IDS(h), 1, r,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){0, 6}), 2)}, 1);
  op(p, DY_OP_TANH, IDS(r), 1, rr, NULL, 0);
  op(p, DY_OP_FLATTEN, IDS(x), 1, f,
     (dy_attr[]){DY_ATTR_I("start_axis", 1), DY_ATTR_I("stop_axis", 2)}, 2);
  /* view of a feed, aliased, read by a kernel */
  op(p, DY_OP_RESHAPE, IDS(x), 1, xr,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){-1, 6}), 2)}, 1);
  op(p, DY_OP_SIGMOID, IDS(r), 1, s, NULL, 0);
  p->vars[r]->alias_of = h;
  p->vars[xr]->alias_of = x;
  int xo = var(p, "xo", DY_F32, 2, DIMS(-1, 6));
  op(p, DY_OP_RELU, IDS(xr), 1, xo, NULL, 0);
  fetch(p, rr);
  fetch(p, f);
  fetch(p, s);
  p->vars[f]->alias_of = x; /* a fetched view: still copied */
  fetch(p, xo);
  float xs[12];
  double xd[12];
  fill(xs, xd, 12, 1);
  int n = run_program(p, "views", "vw", 2, B, (const void *[]){xs}, got, MAXV);
  for (int i = 0; i < 12; i++) {
    double hv = xd[i] > 0 ? xd[i] : 0;
    want[i] = tanh(hv);
    want[12 + i] = xd[i];
    want[24 + i] = 1 / (1 + exp(-hv));
    want[36 + i] = hv;
  }
  check_close(got, n, want, 48);
  /* the aliased reshape has no kernel; flatten into an output has one */
  char *src = read_text(SCRATCH "/views/vw.c");
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  CU_ASSERT_PTR_NULL(strstr(src, "k1_reshape"));
  CU_ASSERT_PTR_NOT_NULL(strstr(src, "k3_flatten_Bx6("));
  CU_ASSERT_PTR_NOT_NULL(strstr(src, "op 1: reshape r is a view of h, no code"));
  free(src);
  dy_program_free(p);
}

static void test_full(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 3));
  int c = var(p, "c", DY_F32, 2, DIMS(1, 3));
  int y = var(p, "y", DY_F32, 2, DIMS(-1, 3));
  int ci = var(p, "ci", DY_I64, 1, DIMS(4));
  int cb = var(p, "cb", DY_BOOL, 1, DIMS(2));
  int cm = var(p, "cm", DY_F32, 1, DIMS(2));
  op(p, DY_OP_FULL, NULL, 0, c,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){1, 3}), 2),
                 DY_ATTR_F("value", 2.5), DY_ATTR_I("dtype", DY_F32)}, 3);
  op(p, DY_OP_ADD, IDS(x, c), 2, y, NULL, 0);
  op(p, DY_OP_FULL, NULL, 0, ci,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){4}), 1),
                 DY_ATTR_F("value", -7), DY_ATTR_I("dtype", DY_I64)}, 3);
  op(p, DY_OP_FULL, NULL, 0, cb,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){2}), 1),
                 DY_ATTR_F("value", 1), DY_ATTR_I("dtype", DY_BOOL)}, 3);
  op(p, DY_OP_FULL, NULL, 0, cm,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){2}), 1),
                 DY_ATTR_F("value", -INFINITY), DY_ATTR_I("dtype", DY_F32)}, 3);
  fetch(p, y);
  fetch(p, ci);
  fetch(p, cb);
  fetch(p, cm);
  float xs[6] = {1, 2, 3, 4, 5, 6};
  int n = run_program(p, "full", "fu", 2, 2, (const void *[]){xs}, got, MAXV);
  double e[14] = {3.5, 4.5, 5.5, 6.5, 7.5, 8.5, -7, -7, -7, -7, 1, 1,
                  -INFINITY, -INFINITY};
  check_close(got, n, e, 14);
  dy_program_free(p);
}

/* Outputs that are an input or a weight are copied; weights print so that
 * they read back exactly. */
static void test_io_copies(void) {
  static const float tricky[] = {1.0f, -0.0f, 1e-5f, 0.1f, 1.0f / 3.0f,
                                 FLT_MAX, -FLT_MIN, 1.40129846e-45f,
                                 123456789.0f, -2.5e-38f};
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 2));
  int w = weight(p, "w", DY_F32, 1, DIMS(10), tricky);
  int wi = weight(p, "wi", DY_I64, 1, DIMS(3),
                  (const int64_t[]){INT64_MIN, INT64_MAX, -1});
  int unused = weight(p, "unused.w", DY_F32, 1, DIMS(2), (const float[]){1, 2});
  (void)unused;
  fetch(p, x);
  fetch(p, w);
  fetch(p, wi);
  float xs[4] = {1, -2, 3, -4};
  const char *dir = scratch("io_copies");
  int n = run_program(p, "io_copies", "ioc", 3, 2, (const void *[]){xs}, got, MAXV);
  CU_ASSERT_EQUAL(n, 17);
  /* exact: parse the printed text as float */
  char path[1024];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  FILE *f = fopen(path, "r");
  CU_ASSERT_FATAL(f != NULL);
  char line[128];
  for (int i = 0; i < 4 && fgets(line, sizeof line, f); i++)
    CU_ASSERT_EQUAL(strtof(line, NULL), xs[i]);
  for (int i = 0; i < 10 && fgets(line, sizeof line, f); i++) {
    float v = strtof(line, NULL);
    CU_ASSERT(memcmp(&v, &tricky[i], 4) == 0);
  }
  for (int i = 0; i < 3 && fgets(line, sizeof line, f); i++) {
    long long v = strtoll(line, NULL, 10);
    CU_ASSERT_EQUAL(v, i == 0 ? INT64_MIN : i == 1 ? INT64_MAX : -1);
  }
  fclose(f);
  char *src = read_text(SCRATCH "/io_copies/ioc.c");
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  CU_ASSERT_PTR_NULL(strstr(src, "unused"));
  CU_ASSERT_PTR_NOT_NULL(strstr(src, "1.0f, -0.0f, 9.99999975e-06f"));
  CU_ASSERT_PTR_NOT_NULL(strstr(src, "INT64_MIN"));
  free(src);
  dy_program_free(p);
}

/* ------------------------------------------------------------------ */
/* Tests: properties of the output                                     */
/* ------------------------------------------------------------------ */

/* A small MLP with a dynamic batch, used by several tests. */
static dy_program *mlp(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 4));
  float w1[4 * 8], b1[8], w2[8 * 3];
  fill(w1, NULL, 32, 1);
  fill(b1, NULL, 8, 2);
  fill(w2, NULL, 24, 3);
  int W1 = weight(p, "fc1.weight", DY_F32, 2, DIMS(4, 8), w1);
  int B1 = weight(p, "fc1.bias", DY_F32, 1, DIMS(8), b1);
  int W2 = weight(p, "fc2.weight", DY_F32, 2, DIMS(8, 3), w2);
  int h = var(p, "h", DY_F32, 2, DIMS(-1, 8));
  int hb = var(p, "hb", DY_F32, 2, DIMS(-1, 8));
  int hr = var(p, "hr", DY_F32, 2, DIMS(-1, 8));
  int lo = var(p, "logits", DY_F32, 2, DIMS(-1, 3));
  int pr = var(p, "probs/out:0", DY_F32, 2, DIMS(-1, 3));
  op(p, DY_OP_MATMUL, IDS(x, W1), 2, h, mm(0, 0), 2);
  op(p, DY_OP_ADD, IDS(h, B1), 2, hb, NULL, 0);
  op(p, DY_OP_RELU, IDS(hb), 1, hr, NULL, 0);
  op(p, DY_OP_MATMUL, IDS(hr, W2), 2, lo, mm(0, 0), 2);
  op(p, DY_OP_SOFTMAX, IDS(lo), 1, pr, (dy_attr[]){DY_ATTR_I("axis", -1)}, 1);
  fetch(p, pr);
  return p;
}

static void mlp_ref(const float *x, int64_t batch, double *out) {
  float w1[32], b1[8], w2[24];
  double xd[64], w1d[32], b1d[8], w2d[24], h[128], hb[128], lo[64];
  fill(w1, w1d, 32, 1);
  fill(b1, b1d, 8, 2);
  fill(w2, w2d, 24, 3);
  to_double(x, xd, batch * 4);
  ref_matmul(xd, DIMS(batch, 4), 2, false, w1d, DIMS(4, 8), 2, false, h);
  ref_binary('+', h, DIMS(batch, 8), 2, b1d, DIMS(8), 1, hb);
  for (int i = 0; i < batch * 8; i++)
    hb[i] = hb[i] > 0 ? hb[i] : 0;
  ref_matmul(hb, DIMS(batch, 8), 2, false, w2d, DIMS(8, 3), 2, false, lo);
  ref_softmax(lo, DIMS(batch, 3), 2, -1, out);
}

static void test_batch_bounds(void) {
  /* batch 1 and batch = max both run; the driver also checks that 0 and
   * max + 1 give ERR_BATCH and NULL buffers ERR_ARG */
  float xs[16];
  fill(xs, NULL, 16, 9);
  for (int64_t batch = 1; batch <= 4; batch += 3) {
    dy_program *p = mlp();
    int n = run_program(p, batch == 1 ? "bounds1" : "bounds4", "mlp", 4, batch,
                        (const void *[]){xs}, got, MAXV);
    mlp_ref(xs, batch, want);
    check_close(got, n, want, (int)(3 * batch));
    dy_program_free(p);
  }
}

/* The loops of kernel text (dy_cg_for): a loop of one trip is written as
 * its body with the index fixed, unless a continue or break in it would
 * then leave an outer loop. */
static void test_one_trip_loops(void) {
  dy_buf body = {0};
  dy_op op = {.kind = DY_OP_RELU};
  dy_cg_ctx c = {.op = &op, .body = &body, .indent = 1}, *ctx = &c;
  dy_cg_for(ctx, "for (int64_t jp = 0; jp < 1; jp++) {");
  dy_cg_line(ctx, "y[jp] = x[jp];");
  dy_cg_end(ctx);
  dy_cg_for(ctx, "for (int64_t c = 0; c < 1; c++)");
  dy_cg_for(ctx, "for (int64_t i = 0; i < 4; i++)");
  dy_cg_line(ctx, "y[i] = 0.0f;");
  dy_cg_end(ctx);
  dy_cg_end(ctx);
  dy_cg_for(ctx, "for (int64_t p0 = 16; p0 < 30; p0 += 16) {");
  dy_cg_for(ctx, "for (int64_t j = 0; j < 3; j++) {");
  dy_cg_line(ctx, "if (j == 1) continue;");
  dy_cg_line(ctx, "y[p0 + j] = 1.0f;");
  dy_cg_end(ctx);
  dy_cg_end(ctx);
  dy_cg_for(ctx, "for (int64_t k = 0; k < 1; k++) {");
  dy_cg_line(ctx, "if (x[k] < 0.0f) continue;");
  dy_cg_line(ctx, "y[k] = x[k];");
  dy_cg_end(ctx);
  dy_cg_for(ctx, "for (int64_t i = 0; i < 2; i++)");
  dy_cg_line(ctx, "y[i] = 2.0f;");
  dy_cg_end(ctx);
  const char *want =
      "  {\n"
      "    const int64_t jp = 0;\n"
      "    y[jp] = x[jp];\n"
      "  }\n"
      "  for (int64_t i = 0; i < 4; i++)\n"
      "    y[i] = 0.0f;\n"
      "  {\n"
      "    const int64_t p0 = 16;\n"
      "    for (int64_t j = 0; j < 3; j++) {\n"
      "      if (j == 1) continue;\n"
      "      y[p0 + j] = 1.0f;\n"
      "    }\n"
      "  }\n"
      "  for (int64_t k = 0; k < 1; k++) {\n"
      "    if (x[k] < 0.0f) continue;\n"
      "    y[k] = x[k];\n"
      "  }\n"
      "  for (int64_t i = 0; i < 2; i++)\n"
      "    y[i] = 2.0f;\n";
  CU_ASSERT_EQUAL(ctx->n_loops, 0);
  CU_ASSERT_FALSE(body.oom);
  CU_ASSERT_PTR_NOT_NULL_FATAL(body.s);
  CU_ASSERT_STRING_EQUAL(body.s, want);
  /* a loop left open is closed (its text dropped) and reported */
  dy_cg_for(ctx, "for (int64_t i = 0; i < 1; i++) {");
  CU_ASSERT_FALSE(dy_cg_loops_close_all(ctx));
  CU_ASSERT_PTR_EQUAL(ctx->body, &body);
  CU_ASSERT_STRING_EQUAL(body.s, want);
  dy_buf_free(&body);
}

static void test_deterministic(void) {
  dy_program *p = mlp();
  int64_t arena = plan(p, 8);
  dy_error err0 = {0};
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 8, &err0), &err0);
  dy_codegen_options opt = {.name = "net", .arena_bytes = arena,
                            .emit_main = true, .command_line = "dy2stc x",
                            .source = "a.dymodel"};
  dy_codegen_output a = {0}, b = {0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_codegen(p, &opt, &a, &err), &err);
  DY_ASSERT_OK(dy_codegen(p, &opt, &b, &err), &err);
  CU_ASSERT_STRING_EQUAL(a.header, b.header);
  CU_ASSERT_STRING_EQUAL(a.source, b.source);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a.main_c);
  CU_ASSERT_STRING_EQUAL(a.main_c, b.main_c);
  /* the header carries the API as promised */
  CU_ASSERT_PTR_NOT_NULL(strstr(a.header, "#define NET_ARENA_BYTES "));
  CU_ASSERT_PTR_NOT_NULL(strstr(a.header, "#define NET_MAX_BATCH 8\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(a.header, "#define NET_WEIGHT_BYTES 256 "));
  CU_ASSERT_PTR_NOT_NULL(strstr(a.header, "#define NET_INPUT_0_SHAPE {-1, 4}\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(a.header, "#define NET_OUTPUT_0_NAME \"probs/out:0\"\n"));
  char *hs = squash(a.header);
  CU_ASSERT_PTR_NOT_NULL(strstr(hs, "int net_run(void *arena, int64_t batch, "
                                    "const float *x, float *probs_out_0);"));
  free(hs);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.source, "static const float w_fc1_weight[32] = {"));
  /* calls name the arena buffers they pass: NET_OFF_<var>, #defined once */
  const char *def_hb = strstr(a.source, "#define NET_OFF_hb ");
  const char *def_lo = strstr(a.source, "#define NET_OFF_logits ");
  long long off_hb = -1, off_lo = -1;
  CU_ASSERT_PTR_NOT_NULL_FATAL(def_hb);
  CU_ASSERT_PTR_NOT_NULL_FATAL(def_lo);
  CU_ASSERT_EQUAL(sscanf(def_hb + 19, "%lld", &off_hb), 1);
  CU_ASSERT_EQUAL(sscanf(def_lo + 23, "%lld", &off_lo), 1);
  CU_ASSERT_EQUAL(off_hb, 256);
  CU_ASSERT_EQUAL(off_lo, 768);
  CU_ASSERT_PTR_NOT_NULL(strstr(a.source, "(const float *)(mem + NET_OFF_hb)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(a.source, "(float *)(mem + NET_OFF_hr)"));
  for (const char *m = strstr(a.source, "mem + "); m; m = strstr(m + 1, "mem + "))
    CU_ASSERT_FALSE(m[6] >= '0' && m[6] <= '9');
  dy_codegen_output_free(&a);
  dy_codegen_output_free(&b);
  dy_program_free(p);
}

static void test_nm_symbols(void) {
  dy_program *p = mlp();
  const char *dir = scratch("nm");
  dy_codegen_output out = {0};
  bool ok = emit_and_compile(p, dir, "mlp", 8, false, &out);
  dy_codegen_output_free(&out);
  dy_program_free(p);
  if (!ok)
    return;
  int rc = sh("nm -u %s/mlp.o > %s/nm.txt", dir, dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  static const char *const allowed[] = {
      "memcpy", "memset", "expf", "tanhf", "exp", "tanh", "sqrtf", "sqrt",
      "logf", "fmaxf", "fminf", "powf", "erff", "floorf", "ceilf", "fabsf"};
  char path[1024], line[256];
  snprintf(path, sizeof path, "%s/nm.txt", dir);
  FILE *f = fopen(path, "r");
  CU_ASSERT_FATAL(f != NULL);
  int bad = 0;
  while (fgets(line, sizeof line, f)) {
    char sym[200] = "";
    if (sscanf(line, " U %199s", sym) != 1)
      continue;
    char *at = strchr(sym, '@'); /* expf@GLIBC_2.27 */
    if (at)
      *at = '\0';
    bool ok_sym = false;
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
      ok_sym |= strcmp(sym, allowed[i]) == 0;
    if (!ok_sym) {
      fprintf(stderr, "\n  unexpected undefined symbol %s", sym);
      bad++;
    }
  }
  fclose(f);
  CU_ASSERT_EQUAL(bad, 0);
}

/* ------------------------------------------------------------------ */
/* The generated main.c                                                */
/* ------------------------------------------------------------------ */

static void write_npy(const char *path, const char *descr, const int64_t *shape,
                      int rank, const void *data, size_t bytes, int major) {
  char h[256];
  int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   descr);
  for (int d = 0; d < rank; d++)
    n += snprintf(h + n, sizeof h - (size_t)n, "%lld,%s", (long long)shape[d],
                  d + 1 < rank ? " " : "");
  n += snprintf(h + n, sizeof h - (size_t)n, "), }");
  size_t pre = major == 1 ? 10 : 12;
  while ((pre + (size_t)n + 1) % 16)
    h[n++] = ' ';
  h[n++] = '\n';
  FILE *f = fopen(path, "wb");
  CU_ASSERT_FATAL(f != NULL);
  fwrite("\x93NUMPY", 1, 6, f);
  fputc(major, f);
  fputc(0, f);
  fputc(n & 0xff, f);
  fputc(n >> 8, f);
  if (major != 1) {
    fputc(0, f);
    fputc(0, f);
  }
  fwrite(h, 1, (size_t)n, f);
  fwrite(data, 1, bytes, f);
  fclose(f);
}

/* Read a float32 .npy written by the driver: header checks, values. */
static int read_npy_f32(const char *path, int64_t *shape, int *rank, float *vals,
                        int cap) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01\x00", 8) != 0) {
    fclose(f);
    return -1;
  }
  int hl = pre[8] | pre[9] << 8;
  CU_ASSERT_EQUAL((10 + hl) % 64, 0);
  char h[1024] = "";
  if (hl >= (int)sizeof h || fread(h, 1, (size_t)hl, f) != (size_t)hl) {
    fclose(f);
    return -1;
  }
  h[hl] = '\0';
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "'descr': '<f4'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "'fortran_order': False"));
  CU_ASSERT_EQUAL(h[hl - 1], '\n');
  const char *s = strstr(h, "'shape': (");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  s += 10;
  *rank = 0;
  while (*s != ')') {
    char *e;
    shape[(*rank)++] = strtoll(s, &e, 10);
    s = e;
    while (*s == ',' || *s == ' ')
      s++;
  }
  int n = (int)fread(vals, 4, (size_t)cap, f);
  fclose(f);
  return n;
}

static void test_main_driver(void) {
  dy_program *p = mlp();
  const char *dir = scratch("main");
  dy_codegen_output out = {0};
  bool ok = emit_and_compile(p, dir, "mlp", 4, true, &out);
  dy_codegen_output_free(&out);
  dy_program_free(p);
  if (!ok)
    return;
  int rc = sh("%s -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 "
              "-I%s -c %s/main.c -o %s/main.o 2> %s/cc.log && "
              "%s %s/main.o %s/mlp.o -lm -o %s/mlp 2>> %s/cc.log",
              cc(), dir, dir, dir, dir, cc(), dir, dir, dir, dir);
  if (rc != 0) {
    char path[1024];
    snprintf(path, sizeof path, "%s/cc.log", dir);
    show_file(path);
  }
  CU_ASSERT_EQUAL_FATAL(rc, 0);

  float xs[5 * 4];
  fill(xs, NULL, 20, 4);
  char path[1024], outp[1024];
  snprintf(path, sizeof path, "%s/x.npy", dir);
  write_npy(path, "<f4", DIMS(3, 4), 2, xs, 3 * 4 * 4, 1);
  sh("rm -rf %s/out", dir);
  rc = sh("cd %s && ./mlp --input x=x.npy --output-dir out > run.log 2>&1", dir);
  CU_ASSERT_EQUAL(rc, 0);
  snprintf(outp, sizeof outp, "%s/out/probs_out_0.npy", dir);
  int64_t shape[8];
  int rank = 0;
  float vals[64];
  int n = read_npy_f32(outp, shape, &rank, vals, 64);
  CU_ASSERT_EQUAL(n, 9);
  CU_ASSERT_EQUAL(rank, 2);
  CU_ASSERT_EQUAL(shape[0], 3);
  CU_ASSERT_EQUAL(shape[1], 3);
  mlp_ref(xs, 3, want);
  for (int i = 0; i < n; i++)
    got[i] = vals[i];
  check_close(got, n, want, 9);
  snprintf(outp, sizeof outp, "%s/out/probs_out_0.npy.tmp", dir);
  CU_ASSERT_EQUAL(fopen(outp, "rb"), NULL);

  /* positional, .npy version 2.0, default output dir, --bench */
  snprintf(path, sizeof path, "%s/x2.npy", dir);
  write_npy(path, "<f4", DIMS(2, 4), 2, xs, 2 * 4 * 4, 2);
  rc = sh("cd %s && ./mlp x2.npy --bench 3 > bench.log 2>&1", dir);
  CU_ASSERT_EQUAL(rc, 0);
  snprintf(path, sizeof path, "%s/bench.log", dir);
  char *log = read_text(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "median "));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "min "));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, " ms\n"));
  free(log);
  snprintf(outp, sizeof outp, "%s/probs_out_0.npy", dir);
  n = read_npy_f32(outp, shape, &rank, vals, 64);
  CU_ASSERT_EQUAL(n, 6);
  mlp_ref(xs, 2, want);
  for (int i = 0; i < n; i++)
    got[i] = vals[i];
  check_close(got, n, want, 6);

  /* raw .bin: the batch comes from the size */
  snprintf(path, sizeof path, "%s/x.bin", dir);
  FILE *f = fopen(path, "wb");
  CU_ASSERT_FATAL(f != NULL);
  fwrite(xs, 4, 4 * 4, f);
  fclose(f);
  rc = sh("cd %s && ./mlp --input=x=x.bin --output-dir=outbin > run.log 2>&1", dir);
  CU_ASSERT_EQUAL(rc, 0);
  snprintf(outp, sizeof outp, "%s/outbin/probs_out_0.npy", dir);
  n = read_npy_f32(outp, shape, &rank, vals, 64);
  CU_ASSERT_EQUAL(n, 12);
  CU_ASSERT_EQUAL(shape[0], 4);

  /* refusals: batch above max, wrong shape, wrong dtype, unknown input,
   * missing input, bad option */
  struct {
    const char *file, *descr, *args, *needle;
    int64_t shape[2];
    int exit;
  } bad[] = {
      {"big.npy", "<f4", "--input x=big.npy", "batch", {5, 4}, 1},
      {"wide.npy", "<f4", "--input x=wide.npy", "dim 1", {2, 5}, 1},
      {"f8.npy", "<f8", "--input x=f8.npy", "dtype", {2, 2}, 1},
      {NULL, NULL, "--input nope=x.npy", "nope", {0, 0}, 1},
      {NULL, NULL, "--output-dir o", "missing", {0, 0}, 1},
      {NULL, NULL, "--frobnicate", "unknown option", {0, 0}, 2},
      {NULL, NULL, "x.npy x.npy", "too many", {0, 0}, 2},
      {"bad.bin", NULL, "bad.bin", "bytes", {0, 0}, 1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    if (bad[i].file && bad[i].descr) {
      float big[40] = {0};
      snprintf(path, sizeof path, "%s/%s", dir, bad[i].file);
      write_npy(path, bad[i].descr, bad[i].shape, 2, big,
                (size_t)(bad[i].shape[0] * bad[i].shape[1]) *
                    (bad[i].descr[2] == '8' ? 8 : 4),
                1);
    } else if (bad[i].file) {
      snprintf(path, sizeof path, "%s/%s", dir, bad[i].file);
      f = fopen(path, "wb");
      CU_ASSERT_FATAL(f != NULL);
      fwrite(xs, 1, 10, f);
      fclose(f);
    }
    rc = sh("cd %s && ./mlp %s > err.log 2>&1", dir, bad[i].args);
    snprintf(path, sizeof path, "%s/err.log", dir);
    char *msg = read_text(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
    if (rc != bad[i].exit || !strstr(msg, bad[i].needle) ||
        strncmp(msg, "mlp: ", 5) != 0)
      fprintf(stderr, "\n  ./mlp %s: exit %d, stderr: %s", bad[i].args, rc, msg);
    CU_ASSERT_EQUAL(rc, bad[i].exit);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, bad[i].needle));
    CU_ASSERT_EQUAL(strncmp(msg, "mlp: ", 5), 0);
    free(msg);
  }
  rc = sh("cd %s && ./mlp --help > help.log 2>&1", dir);
  CU_ASSERT_EQUAL(rc, 0);
}

/* ------------------------------------------------------------------ */
/* Errors and names                                                    */
/* ------------------------------------------------------------------ */

/* A weight holding a NaN or an infinity has no C literal without libm: it
 * is emitted as a union of its bit patterns and read as floats (test_grad's
 * compiled way runs such Programs: clip's infinite bounds). */
static void test_nan_weight(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 1, DIMS(3));
  int w = weight(p, "bad.w", DY_F32, 1, DIMS(3), (const float[]){1, NAN, 2});
  int y = var(p, "y", DY_F32, 1, DIMS(3));
  op(p, DY_OP_ADD, IDS(x, w), 2, y, NULL, 0);
  fetch(p, y);
  dy_codegen_options opt = {.name = "m"};
  dy_codegen_output out = {0};
  dy_error err = {0};
  uint32_t nan_bits;
  memcpy(&nan_bits, &((const float *)p->vars[w]->data)[1], 4);
  char lit[32];
  snprintf(lit, sizeof lit, "0x%08lxu", (unsigned long)nan_bits);
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "static const union {"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, lit));
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "w_bad_w.f"));
  dy_codegen_output_free(&out);
  float inf[3] = {0, 0, INFINITY};
  memcpy(p->vars[w]->data, inf, sizeof inf);
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  CU_ASSERT_PTR_NOT_NULL(strstr(out.source, "0x7f800000u"));
  dy_codegen_output_free(&out);
  dy_program_free(p);
}

static void test_plan_errors(void) {
  dy_program *p = dy_program_new();
  int x = feed(p, "x", DY_F32, 2, DIMS(-1, 3));
  int h = var(p, "hidden", DY_F32, 2, DIMS(-1, 3));
  int y = var(p, "y", DY_F32, 2, DIMS(-1, 3));
  op(p, DY_OP_RELU, IDS(x), 1, h, NULL, 0);
  op(p, DY_OP_TANH, IDS(h), 1, y, NULL, 0);
  fetch(p, y);
  dy_codegen_options opt = {.name = "m", .arena_bytes = 64};
  dy_codegen_output out = {0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 2, &err), &err);
  /* no plan */
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "hidden"));
  /* outside the arena */
  p->vars[h]->mem_offset = 48;
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "overruns"));
  /* fine */
  p->vars[h]->mem_offset = 0;
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  dy_codegen_output_free(&out);
  /* bad name, bad max batch */
  opt.name = "9lives";
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  opt.name = "m";
  DY_ASSERT_OK(dy_program_declare_sym(p, "batch", DY_MAX_BATCH + 1, &err), &err);
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "max batch 2147483649 is above"));
  dy_program_free(p);

  /* an output sharing memory with its input breaks restrict */
  p = dy_program_new();
  x = feed(p, "x", DY_F32, 1, DIMS(16));
  h = var(p, "a", DY_F32, 1, DIMS(16));
  int h2 = var(p, "b", DY_F32, 1, DIMS(16));
  y = var(p, "y", DY_F32, 1, DIMS(16));
  op(p, DY_OP_RELU, IDS(x), 1, h, NULL, 0);
  op(p, DY_OP_TANH, IDS(h), 1, h2, NULL, 0);
  op(p, DY_OP_SIGMOID, IDS(h2), 1, y, NULL, 0);
  fetch(p, y);
  p->vars[h]->mem_offset = 0;
  p->vars[h2]->mem_offset = 32;
  opt.arena_bytes = 128;
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "shares memory"));
  CU_ASSERT_EQUAL(err.op_id, 1);
  dy_program_free(p);

  /* types the op cannot have: an error naming the op, not wrong code */
  p = dy_program_new();
  x = feed(p, "x", DY_F32, 2, DIMS(2, 3));
  int w = feed(p, "w", DY_F32, 1, DIMS(4));
  int xi = feed(p, "xi", DY_I64, 1, DIMS(3));
  y = var(p, "y", DY_F32, 2, DIMS(2, 3));
  int yi = var(p, "yi", DY_I64, 1, DIMS(3));
  op(p, DY_OP_ADD, IDS(x, w), 2, y, NULL, 0);
  fetch(p, y);
  opt.arena_bytes = 0;
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_EQUAL(err.op_id, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "add"));
  p->blocks[0]->ops[0]->inputs[1] = x;
  DY_ASSERT_OK(dy_codegen(p, &opt, &out, &err), &err);
  dy_codegen_output_free(&out);
  op(p, DY_OP_SIGMOID, IDS(xi), 1, yi, NULL, 0);
  fetch(p, yi);
  CU_ASSERT_EQUAL(dy_codegen(p, &opt, &out, &err), DY_STATUS_DTYPE_MISMATCH);
  CU_ASSERT_EQUAL(err.op_id, 1);
  dy_program_free(p);
}

/* Var names that are not C identifiers, or clash with keywords, locals,
 * macros and each other, still give a typed entry point that compiles. */
static void test_names(void) {
  dy_program *p = dy_program_new();
  int a = feed(p, "input.1", DY_F32, 1, DIMS(2));
  int b = feed(p, "input_1", DY_F32, 1, DIMS(2));
  int c = feed(p, "1x", DY_F32, 1, DIMS(2));
  int d = feed(p, "int", DY_F32, 1, DIMS(2));
  int e = feed(p, "batch", DY_F32, 1, DIMS(2));
  int f = feed(p, "w_a", DY_F32, 1, DIMS(2));
  int g = feed(p, "NAN", DY_F32, 1, DIMS(2));
  int wa = weight(p, "a", DY_F32, 1, DIMS(2), (const float[]){1, 2});
  int wb = weight(p, "a*/?" "?/", DY_F32, 1, DIMS(2), (const float[]){3, 4});
  int ids[] = {a, b, c, d, e, f, g, wa, wb};
  int acc = a;
  for (int i = 1; i < 9; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "s%d", i);
    int s = var(p, nm, DY_F32, 1, DIMS(2));
    op(p, DY_OP_ADD, IDS(acc, ids[i]), 2, s, NULL, 0);
    acc = s;
  }
  int o = var(p, "out\"put\\", DY_F32, 1, DIMS(2));
  op(p, DY_OP_RELU, IDS(acc), 1, o, NULL, 0);
  fetch(p, o);
  fetch(p, b); /* an input that is also an output */
  float in[7][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {13, 14}};
  int n = run_program(p, "names", "odd", 1, 1,
                      (const void *[]){in[0], in[1], in[2], in[3], in[4], in[5], in[6]},
                      got, MAXV);
  double e0 = 1 + 3 + 5 + 7 + 9 + 11 + 13 + 1 + 3, e1 = 2 + 4 + 6 + 8 + 10 + 12 + 14 + 2 + 4;
  check_close(got, n, (double[]){e0, e1, 3, 4}, 4);
  char *h0 = read_text(SCRATCH "/names/odd.h");
  CU_ASSERT_PTR_NOT_NULL_FATAL(h0);
  char *h = squash(h0);
  free(h0);
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "const float *input_1, const float *input_1_2"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "const float *_1x"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "const float *v_int"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "const float *v_batch"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "const float *v_w_a"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "const float *v_NAN"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h, "#define ODD_OUTPUT_0_NAME \"out\\\"put\\\\\" "));
  free(h);
  dy_program_free(p);
}

/* Many broadcasts and transposes of random small shapes (fixed seed) in
 * one program, against the reference: exercises the dim collapsing. */
static void test_random_shapes(void) {
  enum { NB = 16, NT = 10 };
  static float data[NB * 2 + NT][64];
  static double dd[NB * 2 + NT][64];
  const void *ins[NB * 2 + NT];
  unsigned seed = 12345;
#define RND(n) ((int)((seed = seed * 1103515245u + 12345u) >> 16) % (n))
  dy_program *p = dy_program_new();
  int64_t shapes[NB * 2 + NT][8], osh[NB + NT][8], perms[NT][8];
  int ranks[NB * 2 + NT], oranks[NB + NT];
  char nm[32];
  int nin = 0;
  for (int t = 0; t < NB; t++) {
    int r = 1 + RND(4);
    int64_t full[4];
    for (int d = 0; d < r; d++)
      full[d] = 1 + RND(3);
    int ids[2];
    for (int q = 0; q < 2; q++) {
      int rq = r - RND(r + 1);
      for (int d = 0; d < rq; d++)
        shapes[nin][d] = RND(3) ? full[r - rq + d] : 1;
      ranks[nin] = rq;
      snprintf(nm, sizeof nm, "b%d_%d", t, q);
      ids[q] = feed(p, nm, DY_F32, rq, shapes[nin]);
      fill(data[nin], dd[nin], numel(shapes[nin], rq), nin);
      for (int64_t k = 0; k < numel(shapes[nin], rq); k++)
        if (data[nin][k] == 0) /* a divisor */
          dd[nin][k] = data[nin][k] = 0.5f;
      ins[nin] = data[nin];
      nin++;
    }
    bcast_shape(shapes[nin - 2], ranks[nin - 2], shapes[nin - 1], ranks[nin - 1],
                osh[t], &oranks[t]);
    snprintf(nm, sizeof nm, "o%d", t);
    int o = var(p, nm, DY_F32, oranks[t], osh[t]);
    op(p, (dy_op_kind)(DY_OP_ADD + t % 4), IDS(ids[0], ids[1]), 2, o, NULL, 0);
    fetch(p, o);
  }
  for (int t = 0; t < NT; t++) {
    int r = 1 + RND(4);
    for (int d = 0; d < r; d++) {
      shapes[nin][d] = 1 + RND(4);
      perms[t][d] = d;
    }
    for (int d = r - 1; d > 0; d--) {
      int j = RND(d + 1);
      int64_t tmp = perms[t][d];
      perms[t][d] = perms[t][j];
      perms[t][j] = tmp;
    }
    ranks[nin] = r;
    oranks[NB + t] = r;
    for (int d = 0; d < r; d++)
      osh[NB + t][d] = shapes[nin][perms[t][d]];
    snprintf(nm, sizeof nm, "t%d", t);
    int x = feed(p, nm, DY_F32, r, shapes[nin]);
    fill(data[nin], dd[nin], numel(shapes[nin], r), nin);
    ins[nin] = data[nin];
    nin++;
    snprintf(nm, sizeof nm, "to%d", t);
    int o = var(p, nm, DY_F32, r, osh[NB + t]);
    op(p, DY_OP_TRANSPOSE, IDS(x), 1, o,
       (dy_attr[]){DY_ATTR_IS("perm", perms[t], r)}, 1);
    fetch(p, o);
  }
#undef RND
  int n = run_program(p, "random_shapes", "rs", 1, 1, ins, got, MAXV);
  int64_t m = 0;
  static const char ops[4] = {'+', '-', '*', '/'};
  for (int t = 0; t < NB; t++)
    m += ref_binary(ops[t % 4], dd[2 * t], shapes[2 * t], ranks[2 * t],
                    dd[2 * t + 1], shapes[2 * t + 1], ranks[2 * t + 1], want + m);
  for (int t = 0; t < NT; t++) {
    int i = 2 * NB + t;
    ref_transpose(dd[i], shapes[i], ranks[i], perms[t], want + m);
    m += numel(shapes[i], ranks[i]);
  }
  check_close(got, n, want, (int)m);
  dy_program_free(p);
}

/* No inputs at all, a rank-0 input, an empty tensor: the odd corners of
 * the API (C has no empty arrays) still compile, model and main.c. */
static void test_corners(void) {
  dy_program *p = dy_program_new();
  int s = feed(p, "scalar", DY_F32, 0, DIMS(0));
  int e = feed(p, "empty", DY_F32, 2, DIMS(0, 3));
  int c = var(p, "c", DY_F32, 1, DIMS(2));
  int y = var(p, "y", DY_F32, 1, DIMS(2));
  int ey = var(p, "ey", DY_F32, 2, DIMS(0, 3));
  op(p, DY_OP_FULL, NULL, 0, c,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){2}), 1),
                 DY_ATTR_F("value", 0.5), DY_ATTR_I("dtype", DY_F32)}, 3);
  op(p, DY_OP_MUL, IDS(c, s), 2, y, NULL, 0);
  op(p, DY_OP_RELU, IDS(e), 1, ey, NULL, 0);
  fetch(p, y);
  fetch(p, ey);
  float sv = 6;
  int n = run_program(p, "corners", "cor", 1, 1, (const void *[]){&sv, &sv}, got, MAXV);
  check_close(got, n, (double[]){3, 3}, 2);
  dy_program_free(p);

  p = dy_program_new();
  c = var(p, "c", DY_I64, 1, DIMS(3));
  op(p, DY_OP_FULL, NULL, 0, c,
     (dy_attr[]){DY_ATTR_IS("shape", ((const int64_t[]){3}), 1),
                 DY_ATTR_F("value", 42), DY_ATTR_I("dtype", DY_I64)}, 3);
  fetch(p, c);
  n = run_program(p, "no_inputs", "noin", 1, 1, NULL, got, MAXV);
  check_close(got, n, (double[]){42, 42, 42}, 3);
  const char *dir = scratch("no_inputs");
  dy_codegen_output out = {0};
  bool ok = emit_and_compile(p, dir, "noin", 1, true, &out);
  dy_codegen_output_free(&out);
  dy_program_free(p);
  if (!ok)
    return;
  int rc = sh("%s -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 "
              "-I%s -c %s/main.c -o %s/main.o 2> %s/cc.log && "
              "%s %s/main.o %s/noin.o -lm -o %s/noin 2>> %s/cc.log && "
              "cd %s && ./noin --output-dir o > run.log 2>&1",
              cc(), dir, dir, dir, dir, cc(), dir, dir, dir, dir, dir);
  CU_ASSERT_EQUAL(rc, 0);
}

void dy_test_register(void) {
  DY_SUITE("codegen");
  DY_TEST(test_add_same_shape);
  DY_TEST(test_fused_comment_lists_sources);
  DY_TEST(test_broadcast_f32);
  DY_TEST(test_broadcast_i64);
  DY_TEST(test_unary);
  DY_TEST(test_matmul_2d_dynamic);
  DY_TEST(test_matmul_batched);
  DY_TEST(test_matmul_transpose);
  DY_TEST(test_matmul_1d);
  DY_TEST(test_softmax);
  DY_TEST(test_transpose);
  DY_TEST(test_views);
  DY_TEST(test_full);
  DY_TEST(test_io_copies);
  DY_TEST(test_batch_bounds);
  DY_TEST(test_deterministic);
  DY_TEST(test_one_trip_loops);
  DY_TEST(test_nm_symbols);
  DY_TEST(test_main_driver);
  DY_TEST(test_no_scalar_math);
  DY_TEST(test_nan_weight);
  DY_TEST(test_plan_errors);
  DY_TEST(test_names);
  DY_TEST(test_corners);
  DY_TEST(test_random_shapes);
}
