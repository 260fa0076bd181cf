/* test_e2e.c - the whole path for every sample: eager run and jit_save
 * (the sample binary), `dy2stc run` (static executor) and `dy2stc compile`
 * at -O0 and -O2 (generated C built with $CC), all compared: SimpleNet and
 * the MLP at batch 1, 3 and 64 within 1e-5, LeNet-5, the CNN and the
 * transformer at batch 1 and 4 within 1e-4.
 * Plus: the emitted C is strict C99, freestanding, references no library
 * but memcpy and memset (no libm: its math is its own), is byte-identical
 * across runs; a batch over --max-batch and malformed inputs are refused
 * with one clear line. The faster kernels and fuse-residual against
 * --plain-kernels --disable-pass fuse-residual and the static executor on
 * a depthwise / max pool / residual block.
 *
 * Tolerance: the compiled and executor outputs must satisfy
 * max|got - eager| <= tol * max|eager| (relative to the output's scale:
 * the compiled GEMM sums in another order than OpenBLAS).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define SAMPLES DY_BUILD_DIR "/../samples"
#define WORK DY_BUILD_DIR "/e2e"

/* a shell command; stdout and stderr in WORK/last.log */
#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static char *last_log(void) { return dy_test_slurp(WORK "/last.log"); }

static void show_log_on_failure(int rc, int want) {
  if (rc != want) {
    char *log = last_log();
    fprintf(stderr, "\n  exit %d (wanted %d); output:\n%s\n", rc, want, log ? log : "");
    free(log);
  }
}

/* max|a-b| / max|b| */
static double rel_err(const char *got_path, const char *ref_path) {
  dy_tensor *a = NULL, *b = NULL;
  dy_error err = {0};
  if (dy_npy_read(got_path, &a, &err) || dy_npy_read(ref_path, &b, &err)) {
    fprintf(stderr, "\n  %s\n", err.msg);
    dy_tensor_free(a);
    return INFINITY;
  }
  double r = INFINITY;
  if (dy_type_equal(&a->type, &b->type)) {
    double md = 0, mb = 0;
    for (int64_t i = 0; i < dy_tensor_numel(a); i++) {
      double d = fabs(dy_tensor_f32(a)[i] - dy_tensor_f32(b)[i]);
      md = d > md ? d : md;
      mb = fabs(dy_tensor_f32(b)[i]) > mb ? fabs(dy_tensor_f32(b)[i]) : mb;
    }
    r = md / (mb > 0 ? mb : 1);
  }
  dy_tensor_free(a);
  dy_tensor_free(b);
  return r;
}

static void setup_work(void) { mkdir(WORK, 0777); }

/* eager = executor = compiled (at -O0 and at the default -O2) for one
 * sample at several batches, within tol (relative to the output's scale). */
static void three_ways(const char *sample, const char *inputs_fmt, const int *batches,
                       int n_batches, double tol) {
  setup_work();
  int rc;
  char dir[512];
  snprintf(dir, sizeof dir, WORK "/%s", sample);
  rc = sh("rm -rf %s && mkdir -p %s && %s/%s --batch 2 --out %s", dir, dir, SAMPLES,
          sample, dir);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  const char *levels[] = {"-O0", "-O2"};
  for (int l = 0; l < 2; l++) {
    rc = sh("%s compile %s/%s.dymodel -o %s/%s_bin%s --max-batch 64 --verify-each %s", DY2STC,
            dir, sample, dir, sample, levels[l], levels[l]);
    show_log_on_failure(rc, 0);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
  }
  for (int k = 0; k < n_batches; k++) {
    char bdir[600], inputs[1200];
    snprintf(bdir, sizeof bdir, "%s/b%d", dir, batches[k]);
    /* the sample re-runs eagerly at this batch; its model is the same
     * (seeded), so the compiled binaries from above apply */
    rc = sh("mkdir -p %s && %s/%s --batch %d --out %s", bdir, SAMPLES, sample,
            batches[k], bdir);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sh("cmp %s/%s.dyparams %s/%s.dyparams", dir, sample, bdir, sample), 0);
    snprintf(inputs, sizeof inputs, inputs_fmt, bdir, bdir);
    rc = sh("%s run %s/%s.dymodel %s --output-dir %s/exec", DY2STC, dir, sample, inputs, bdir);
    show_log_on_failure(rc, 0);
    CU_ASSERT_EQUAL(rc, 0);
    char got[700], ref[700];
    snprintf(ref, sizeof ref, "%s/eager_out.npy", bdir);
    snprintf(got, sizeof got, "%s/exec/out.npy", bdir);
    double e = rel_err(got, ref);
    if (!(e <= tol))
      fprintf(stderr, "\n  %s batch %d: executor rel err %g\n", sample, batches[k], e);
    CU_ASSERT(e <= tol);
    for (int l = 0; l < 2; l++) {
      rc = sh("%s/%s_bin%s %s --output-dir %s/compiled%s", dir, sample, levels[l], inputs,
              bdir, levels[l]);
      show_log_on_failure(rc, 0);
      CU_ASSERT_EQUAL(rc, 0);
      snprintf(got, sizeof got, "%s/compiled%s/out.npy", bdir, levels[l]);
      e = rel_err(got, ref);
      if (!(e <= tol))
        fprintf(stderr, "\n  %s batch %d %s: compiled rel err %g\n", sample, batches[k],
                levels[l], e);
      CU_ASSERT(e <= tol);
    }
  }
}

static const int batches_2[] = {1, 3, 64};
static const int batches_3[] = {1, 4};

static void test_simple_net_three_ways(void) {
  three_ways("simple_net", "--input x=%s/x.npy --input y=%s/y.npy", batches_2, 3, 1e-5);
}

static void test_mlp_three_ways(void) {
  three_ways("mlp", "--input x=%s/x.npy%.0s", batches_2, 3, 1e-5);
}

static void test_lenet5_three_ways(void) {
  three_ways("lenet5", "--input x=%s/x.npy%.0s", batches_3, 2, 1e-4);
}

static void test_cnn_three_ways(void) {
  three_ways("cnn", "--input x=%s/x.npy%.0s", batches_3, 2, 1e-4);
}

static void test_transformer_three_ways(void) {
  three_ways("transformer", "--input x=%s/x.npy%.0s", batches_3, 2, 1e-4);
}

static void test_simple_net_batch_5_and_bound(void) {
  setup_work();
  const char *d = WORK "/bound";
  int rc = sh("rm -rf %s && mkdir -p %s && %s/simple_net --batch 5 --out %s", d, d,
              SAMPLES, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("%s compile %s/simple_net.dymodel -o %s/sn4 --max-batch 4", DY2STC, d, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("%s/sn4 --input x=%s/x.npy --input y=%s/y.npy --output-dir %s/o", d, d, d, d);
  CU_ASSERT_NOT_EQUAL(rc, 0);
  char *log = last_log();
  CU_ASSERT(log && strstr(log, "batch"));
  CU_ASSERT(log && strstr(log, "4"));
  CU_ASSERT(log && !strchr(strchr(log, '\n') ? strchr(log, '\n') + 1 : "", '\n'));
  free(log);
  /* within the bound: batch 5 at --max-batch 5 equals eager */
  rc = sh("%s compile %s/simple_net.dymodel -o %s/sn5 --max-batch 5", DY2STC, d, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("%s/sn5 --input x=%s/x.npy --input y=%s/y.npy --output-dir %s/o", d, d, d, d);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT(rel_err(WORK "/bound/o/out.npy", WORK "/bound/eager_out.npy") <= 1e-5);
  /* dy2stc check agrees */
  rc = sh("%s check %s/simple_net.dymodel --input x=%s/x.npy --input y=%s/y.npy", DY2STC,
          d, d, d);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL(rc, 0);
}

/* the emitted C: strict C99, freestanding, no dependencies (the object of
 * every sample references nothing but memcpy and memset), deterministic */
static void test_emitted_c_is_strict_and_standalone(void) {
  setup_work();
  const char *d = WORK "/emit";
  const char *samples[] = {"simple_net", "mlp", "lenet5", "cnn", "transformer"};
  for (int i = 0; i < 5; i++) {
    const char *s = samples[i];
    int rc = sh("rm -rf %s/%s && mkdir -p %s/%s && %s/%s --out %s/%s", d, s, d, s, SAMPLES,
                s, d, s);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    rc = sh("cd %s/%s && %s compile %s.dymodel --emit c -o %s && "
            "%s compile %s.dymodel --emit c -o again --name %s",
            d, s, DY2STC, s, s, DY2STC, s, s);
    show_log_on_failure(rc, 0);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    /* same input, same bytes (only the quoted command line and the
     * #include of the header, named after -o, differ) */
    rc = sh("cd %s/%s && grep -v -e 'dy2stc compile' -e '^#include \"' %s.c > a.txt && "
            "grep -v -e 'dy2stc compile' -e '^#include \"' again.c > b.txt && cmp a.txt b.txt && "
            "cmp %s_weights.c again_weights.c", d, s, s, s);
    CU_ASSERT_EQUAL(rc, 0);
    const char *ccs[] = {"gcc", "clang"};
    for (int c = 0; c < 2; c++) {
      rc = sh("cd %s/%s && %s -std=c99 -Wall -Wextra -Werror -pedantic -O2 -ffreestanding "
              "-c %s.c -o %s.o && %s -std=c99 -Wall -Wextra -Werror -pedantic -O2 "
              "-ffreestanding -c %s_weights.c -o %s_weights.o",
              d, s, ccs[c], s, s, ccs[c], s, s);
      show_log_on_failure(rc, 0);
      CU_ASSERT_EQUAL(rc, 0);
      /* undefined symbols: only memcpy and memset (no libm), and the
       * weights NAME_weights.o defines (which references nothing) */
      rc = sh("cd %s/%s && nm -u %s.o %s_weights.o | awk 'NF > 1 {print $2}' | "
              "grep -v -E '^(memcpy|memset|%s_weights)$' "
              "| tee undefined.txt | wc -l | grep -qx 0 && nm %s_weights.o | grep -q ' R %s_weights$'",
              d, s, s, s, s, s, s);
      if (rc) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s/undefined.txt", d, s);
        char *u = dy_test_slurp(path);
        fprintf(stderr, "\n  %s.o references: %s\n", s, u ? u : "?");
        free(u);
      }
      CU_ASSERT_EQUAL(rc, 0);
    }
    /* the header alone is valid C too, with the arena size macro */
    char hpath[600];
    snprintf(hpath, sizeof hpath, "%s/%s/%s.h", d, s, s);
    char *h = dy_test_slurp(hpath);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "_ARENA_BYTES"));
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "_MAX_BATCH"));
    free(h);
  }
}

/* The pass pipeline and the memory plan on every sample: fewer ops after
 * the passes, and an arena within 1.10x of its lower bound. The figures
 * go to stderr for the record. */
static void test_passes_and_memory_plan(void) {
  setup_work();
  const char *samples[] = {"mlp", "lenet5", "cnn", "transformer"};
  for (int i = 0; i < 4; i++) {
    const char *s = samples[i];
    char dir[600];
    snprintf(dir, sizeof dir, WORK "/plan_%s", s);
    int rc = sh("rm -rf %s && mkdir -p %s && %s/%s --batch 1 --out %s && "
                "%s compile %s/%s.dymodel -o %s/bin --report --verify-each --max-batch 8",
                dir, dir, SAMPLES, s, dir, DY2STC, dir, s, dir);
    show_log_on_failure(rc, 0);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char *log = last_log();
    int before = 0, after = 0;
    long long arena = 0, batch = 0, bound = 0;
    const char *o = log ? strstr(log, "ops: ") : NULL;
    const char *a = log ? strstr(log, "arena: ") : NULL;
    CU_ASSERT_FATAL(o && a && sscanf(o, "ops: %d before passes, %d after", &before, &after) == 2 &&
                    sscanf(a, "arena: %lld bytes at batch %lld (lower bound %lld", &arena,
                           &batch, &bound) == 3);
    fprintf(stderr, "\n  %-12s ops %3d -> %3d, arena %lld bytes at batch 8, lower bound %lld (%.3fx)",
            s, before, after, arena, bound, bound ? (double)arena / (double)bound : 0.0);
    CU_ASSERT(after < before);
    CU_ASSERT(bound > 0 && arena * 100 <= bound * 110);
    free(log);
  }
  fprintf(stderr, "\n");
}

/* ---- source lines: LeNet-5 (a Sequential) points at lenet5.c ---- */

static const char *base_of(const char *path) {
  const char *s = path ? strrchr(path, '/') : NULL;
  return s ? s + 1 : path ? path : "";
}

/* The text of line n (1-based) of src, into buf. */
static const char *line_of(const char *src, int n, char *buf, size_t cap) {
  buf[0] = 0;
  for (int k = 1; src && *src && k < n; k++) {
    src = strchr(src, '\n');
    src = src ? src + 1 : NULL;
  }
  if (src && n >= 1) {
    size_t len = strcspn(src, "\n");
    snprintf(buf, cap, "%.*s", (int)(len < cap ? len : cap - 1), src);
  }
  return buf;
}

/* An op of kind k comes from the layer appended on its line. */
static bool line_fits(dy_op_kind k, const char *text) {
  if (!strstr(text, "dy_sequential_append("))
    return false;
  switch (k) {
  case DY_OP_CONV2D: return strstr(text, "conv2d_layer_new") != NULL;
  case DY_OP_MATMUL: return strstr(text, "linear_new") != NULL;
  case DY_OP_ADD:
    return strstr(text, "conv2d_layer_new") || strstr(text, "linear_new");
  case DY_OP_RELU: return strstr(text, "relu_layer_new") != NULL;
  case DY_OP_FLATTEN: return strstr(text, "flatten_layer_new") != NULL;
  default: return strstr(text, "max_pool2d_layer_new") != NULL;
  }
}

static void check_src(const char *src, dy_op_kind k, dy_srcloc loc) {
  char text[512];
  bool ok = strcmp(base_of(loc.file), "lenet5.c") == 0 &&
            line_fits(k, line_of(src, loc.line, text, sizeof text));
  if (!ok)
    fprintf(stderr, "\n  %s at %s:%d: \"%s\"\n", dy_op_name(k), loc.file ? loc.file : "?",
            loc.line, text);
  CU_ASSERT(ok);
}

static void same_srcs(const dy_program *a, const dy_program *b) {
  CU_ASSERT_EQUAL_FATAL(a->blocks[0]->n_ops, b->blocks[0]->n_ops);
  for (int k = 0; k < a->blocks[0]->n_ops; k++) {
    const dy_op *x = a->blocks[0]->ops[k], *y = b->blocks[0]->ops[k];
    CU_ASSERT_EQUAL_FATAL(x->n_srcs, y->n_srcs);
    for (int i = 0; i < x->n_srcs; i++) {
      CU_ASSERT_EQUAL(x->srcs[i].kind, y->srcs[i].kind);
      CU_ASSERT_EQUAL(x->srcs[i].loc.line, y->srcs[i].loc.line);
      CU_ASSERT_STRING_EQUAL(base_of(x->srcs[i].loc.file), base_of(y->srcs[i].loc.file));
    }
  }
}

static void test_lenet5_source_lines(void) {
  setup_work();
  const char *d = WORK "/srclines";
  int rc = sh("rm -rf %s && mkdir -p %s && %s/lenet5 --batch 2 --out %s", d, d, SAMPLES, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *src = dy_test_slurp(DY_SOURCE_DIR "/samples/lenet5.c");
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  dy_program *p = NULL, *q = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(WORK "/srclines/lenet5", &p, &err), &err);
  /* traced: every op at the line of its own layer in lenet5.c */
  const dy_block *b = p->blocks[0];
  CU_ASSERT(b->n_ops >= 15);
  int conv_lines[2] = {0, 0}, n_conv = 0;
  for (int k = 0; k < b->n_ops; k++) {
    check_src(src, b->ops[k]->kind, b->ops[k]->loc);
    if (b->ops[k]->kind == DY_OP_CONV2D && n_conv < 2)
      conv_lines[n_conv++] = b->ops[k]->loc.line;
  }
  CU_ASSERT_EQUAL(n_conv, 2);
  CU_ASSERT(conv_lines[0] > 0 && conv_lines[1] > conv_lines[0]);

  /* after the passes: each fused op lists all its sources, in order */
  dy_pass_options o = {.opt_level = 2, .verify_each = 1};
  DY_ASSERT_OK(dy_run_pipeline(p, &o, &err), &err);
  int fused = 0;
  for (int k = 0; k < b->n_ops; k++) {
    const dy_op *op = b->ops[k];
    if (op->kind != DY_OP_FUSED_CONV2D && op->kind != DY_OP_FUSED_MATMUL &&
        op->kind != DY_OP_FUSED_CONV2D_POOL) {
      if (op->n_srcs == 0)
        check_src(src, op->kind, op->loc);
      continue;
    }
    fused++;
    CU_ASSERT_FATAL(op->n_srcs >= 2);
    CU_ASSERT_EQUAL(op->srcs[0].kind,
                    op->kind == DY_OP_FUSED_MATMUL ? DY_OP_MATMUL : DY_OP_CONV2D);
    CU_ASSERT_EQUAL(op->srcs[1].kind, DY_OP_ADD);
    for (int i = 0; i < op->n_srcs; i++) {
      check_src(src, op->srcs[i].kind, op->srcs[i].loc);
      if (i)
        CU_ASSERT(op->srcs[i].loc.line >= op->srcs[i - 1].loc.line);
    }
  }
  CU_ASSERT_EQUAL(fused, 5); /* 2 conv + bias + relu + max pool, 3 linear (+ relu) */

  /* they survive .dymodel and the text form */
  DY_ASSERT_OK(dy_model_save(p, WORK "/srclines/opt", &err), &err);
  DY_ASSERT_OK(dy_model_load(WORK "/srclines/opt", &q, &err), &err);
  same_srcs(p, q);
  dy_program_free(q);
  char *text = dy_program_to_text(p);
  DY_ASSERT_OK(dy_program_parse(text, &q, &err), &err);
  same_srcs(p, q);
  dy_program_free(q);
  free(text);
  dy_program_free(p);

  /* the generated C's kernel comment lists them; nothing names the runtime */
  rc = sh("cd %s && %s compile lenet5.dymodel --emit c -o lenet5", d, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *c = dy_test_slurp(WORK "/srclines/lenet5.c");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  char want[256];
  for (int i = 0; i < 2; i++) {
    snprintf(want, sizeof want, ": fused_conv2d_pool   lenet5.c:%d conv2d, lenet5.c:%d add, "
             "lenet5.c:%d relu, lenet5.c:%d pool2d   f32[", conv_lines[i], conv_lines[i],
             conv_lines[i] + 1, conv_lines[i] + 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(c, want));
    if (!strstr(c, want))
      fprintf(stderr, "\n  no comment \"%s\"\n", want);
  }
  CU_ASSERT_PTR_NULL(strstr(c, "layers.c"));
  CU_ASSERT_PTR_NULL(strstr(c, "layers_nn.c"));
  CU_ASSERT_PTR_NULL(strstr(c, "trace.c"));
  free(c);
  free(src);
}

/* bad input is one line and a non-zero exit, never a crash */
static void expect_one_line_error(int rc, const char *needle) {
  CU_ASSERT(rc == 1 || rc == 2);
  char *log = last_log();
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  size_t lines = 0;
  for (char *c = log; *c; c++)
    lines += *c == '\n';
  if (lines != 1 || !strstr(log, needle))
    fprintf(stderr, "\n  expected one line with '%s', got:\n%s", needle, log);
  CU_ASSERT_EQUAL(lines, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, needle));
  free(log);
}

static void test_cli_errors(void) {
  setup_work();
  const char *d = WORK "/errors";
  int rc = sh("rm -rf %s && mkdir -p %s && %s/simple_net --batch 2 --out %s", d, d, SAMPLES, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  expect_one_line_error(sh("%s compile %s/missing.dymodel -o %s/x", DY2STC, d, d), "missing");
  sh("head -c 20 %s/simple_net.dymodel > %s/trunc.dymodel && cp %s/simple_net.dyparams "
     "%s/trunc.dyparams", d, d, d, d);
  expect_one_line_error(sh("%s compile %s/trunc.dymodel -o %s/x", DY2STC, d, d), "trunc");
  sh("echo 'not a model' > %s/text.dymodel", d);
  expect_one_line_error(sh("%s show %s/text.dymodel", DY2STC, d), "text");
  expect_one_line_error(sh("%s run %s/simple_net.dymodel --input x=%s/y.npy --input y=%s/y.npy",
                           DY2STC, d, d, d), "input 'x'");
  expect_one_line_error(sh("%s run %s/simple_net.dymodel --input x=%s/x.npy", DY2STC, d, d),
                        "missing input 'y'");
  expect_one_line_error(sh("%s run %s/simple_net.dymodel --input z=%s/x.npy", DY2STC, d, d),
                        "no input named 'z'");
  expect_one_line_error(sh("%s compile %s/simple_net.dymodel --max-batch 0", DY2STC, d),
                        "max-batch");
  expect_one_line_error(sh("%s frobnicate", DY2STC), "unknown command");
  /* the compiled executable's own errors */
  rc = sh("%s compile %s/simple_net.dymodel -o %s/sn", DY2STC, d, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  expect_one_line_error(sh("%s/sn --input x=%s/y.npy --input y=%s/y.npy --output-dir %s", d, d,
                           d, d), "x");
  expect_one_line_error(sh("%s/sn --input x=%s/nope.npy --input y=%s/y.npy", d, d, d), "nope");
  sh("head -c 30 %s/x.npy > %s/bad.npy", d, d);
  expect_one_line_error(sh("%s/sn --input x=%s/bad.npy --input y=%s/y.npy", d, d, d), "bad.npy");
  /* every subcommand has --help */
  const char *cmds[] = {"compile", "run", "show", "check", "compare"};
  for (int i = 0; i < 5; i++) {
    rc = sh("%s %s --help | grep -q usage", DY2STC, cmds[i]);
    CU_ASSERT_EQUAL(rc, 0);
  }
}

static void test_show(void) {
  setup_work();
  const char *d = WORK "/show";
  int rc = sh("rm -rf %s && mkdir -p %s && %s/simple_net --out %s", d, d, SAMPLES, d);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("%s show %s/simple_net.dymodel", DY2STC, d);
  CU_ASSERT_EQUAL(rc, 0);
  char *log = last_log();
  CU_ASSERT_PTR_NOT_NULL_FATAL(log);
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "var x : f32[-1,10] feed 0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "matmul(x, linear.weight)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(log, "@simple_net.c:"));
  free(log);
  rc = sh("%s show --dot %s/simple_net.dymodel", DY2STC, d);
  CU_ASSERT_EQUAL(rc, 0);
  log = last_log();
  CU_ASSERT(log && strstr(log, "digraph"));
  free(log);
}

/* d/blk.dymodel from the Program text, and d/x.npy: f32 of shape, the
 * values (i * 37 % 101) / 50 - 1. */
static void save_blk_and_x(const char *d, const char *text, const int64_t shape[4]) {
  char path[600];
  snprintf(path, sizeof path, "%s/x.npy", d);
  CU_ASSERT_FATAL(dy_test_save_blk(d, text));
  CU_ASSERT_FATAL(dy_test_write_pattern(path, shape, 37));
}

/* The faster kernels and passes against what they replaced: a MobileNet/
 * ResNet-like block (depthwise 3x3, relu, max pool 3x3/2 pad 1, 1x1 conv,
 * residual add, relu) on rows wide enough for their vector loops, compiled
 * by default (padded-plane depthwise, the padded max pool's vector
 * loop, fuse-residual; conv-small off) and with --plain-kernels
 * --disable-pass fuse-residual; the emitted C shows which kernels each has, and the two
 * executables and the static executor agree. */
static void test_fast_kernels_match_plain(void) {
  setup_work();
  const char *d = WORK "/fast";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
  enum { C = 4 };
  char text[8192];
  size_t n = 0;
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "program {\n  var x : f32[-1,%d,9,40] feed 0\n"
                        "  var dw : f32[%d,1,3,3] persistable = [", C, C);
  for (int i = 0; i < C * 9; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "%s%.3f", i ? ", " : "",
                          0.1 * ((i * 7) % 11) - 0.45);
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "]\n  var pw : f32[%d,%d,1,1] persistable = [", C, C);
  for (int i = 0; i < C * C; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "%s%.3f", i ? ", " : "",
                          0.2 * ((i * 5) % 7) - 0.6);
  snprintf(text + n, sizeof text - n,
           "]\n  var a : f32[-1,%d,9,40]\n  var r : f32[-1,%d,9,40]\n"
           "  var m : f32[-1,%d,5,20]\n  var c : f32[-1,%d,5,20]\n"
           "  var s : f32[-1,%d,5,20]\n  var y : f32[-1,%d,5,20]\n"
           "  block 0 parent -1 {\n"
           "    a = conv2d(x, dw) {strides = [1, 1], paddings = [1, 1, 1, 1], dilations = [1, 1], "
           "groups = %d}  @m.c:1\n"
           "    r = relu(a)  @m.c:2\n"
           "    m = pool2d(r) {pooling_type = \"max\", ksize = [3, 3], strides = [2, 2], "
           "paddings = [1, 1, 1, 1], ceil_mode = 0, exclusive = 1, global_pooling = 0, "
           "adaptive = 0}  @m.c:3\n"
           "    c = conv2d(m, pw) {strides = [1, 1], paddings = [0, 0, 0, 0], dilations = [1, 1], "
           "groups = 1}  @m.c:4\n"
           "    s = add(c, m)  @m.c:5\n"
           "    y = relu(s)  @m.c:6\n"
           "  }\n  fetch 0 y\n}\n",
           C, C, C, C, C, C, C);
  save_blk_and_x(d, text, (int64_t[]){2, C, 9, 40});
  const char *plain = "--plain-kernels --disable-pass fuse-residual";
  /* the 1x1 conv with its residual on the GEMM (conv-small would take
   * it: test_small_conv_matches_gemm and the op cases check that one) */
  int rc = sh("cd %s && %s compile blk.dymodel --emit c -o fast --disable-pass conv-small && "
              "%s compile blk.dymodel --emit c -o plain %s && "
              "%s compile blk.dymodel -o fast_exe --disable-pass conv-small && "
              "%s compile blk.dymodel -o plain_exe %s && "
              "./fast_exe --input x=x.npy --output-dir of && "
              "./plain_exe --input x=x.npy --output-dir op && "
              "%s run blk.dymodel --input x=x.npy --output-dir ex",
              d, DY2STC, DY2STC, plain, DY2STC, DY2STC, plain, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* which kernels: the fast ones, or the plain ones and no residual input */
  CU_ASSERT_EQUAL(sh("grep -q 'depthwise, padded planes' %s/fast.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'max pooling 3x3, stride 2x2, padding 1/1: columns' %s/fast.c", d),
                  0);
  CU_ASSERT_EQUAL(sh("grep -q 'the residual, added by the GEMM' %s/fast.c", d), 0);
  CU_ASSERT_NOT_EQUAL(sh("grep -v ' command: ' %s/plain.c | "
                         "grep -q 'register-blocked\\|DY_VW at a time\\|residual'", d),
                      0);
  char a[700], b[700], e[700];
  snprintf(a, sizeof a, "%s/of/y.npy", d);
  snprintf(b, sizeof b, "%s/op/y.npy", d);
  snprintf(e, sizeof e, "%s/ex/y.npy", d);
  double fp = rel_err(a, b), fe = rel_err(a, e), pe = rel_err(b, e);
  fprintf(stderr, "\n  fast vs plain %.2g, fast vs executor %.2g, plain vs executor %.2g", fp, fe,
          pe);
  CU_ASSERT(fp <= 1e-6);
  CU_ASSERT(fe <= 1e-6);
  CU_ASSERT(pe <= 1e-6);
}

/* Appends " = [v, ...]" of n pseudo-random weights in [-a, a) to t. */
static size_t put_weights(char *t, size_t n, size_t cap, int count, int seed, double a) {
  n += (size_t)snprintf(t + n, cap - n, " = [");
  uint32_t s = 2463534242u + (uint32_t)seed * 7919u;
  for (int i = 0; i < count; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    n += (size_t)snprintf(t + n, cap - n, "%s%.4f", i ? ", " : "", a * ((s % 2000) / 1000.0 - 1));
  }
  return n + (size_t)snprintf(t + n, cap - n, "]\n");
}

/* Winograd F(4x4, 3x3) (the pass winograd's pick here), F(2x2) and F(6x6)
 * (--winograd 2, 6) against the direct GEMM conv
 * (--disable-pass winograd) and the static executor: a ResNet basic block
 * on 32 channels with odd sizes (tiles cut at the edges) -- conv 3x3 pad 1
 * + bias + relu, conv 3x3 pad 1 + bias + residual + relu (fuse-residual),
 * then a conv 3x3 pad 0 without bias -- at batch 3 of a dynamic batch,
 * and built with --threads 2 (each phase split; the same result).
 * Bound: 1e-5 of the output's scale (F(4x4)'s transforms lose about two
 * digits against the direct sum; measured 3e-6 here). */
static void test_winograd_matches_direct(void) {
  setup_work();
  const char *d = WORK "/wino";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
  enum { C = 32, H = 21, W = 19, CAP = 1 << 20 };
  char *t = malloc(CAP);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  size_t n = (size_t)snprintf(t, CAP, "program {\n  var x : f32[-1,%d,%d,%d] feed 0\n", C, H, W);
  const char *w[3] = {"w1", "w2", "w3"};
  for (int k = 0; k < 3; k++) {
    n += (size_t)snprintf(t + n, CAP - n, "  var %s : f32[%d,%d,3,3] persistable", w[k], C, C);
    n = put_weights(t, n, CAP, C * C * 9, k, 0.06);
  }
  n += (size_t)snprintf(t + n, CAP - n, "  var b1 : f32[%d,1,1] persistable", C);
  n = put_weights(t, n, CAP, C, 5, 0.5);
  n += (size_t)snprintf(t + n, CAP - n, "  var b2 : f32[%d,1,1] persistable", C);
  n = put_weights(t, n, CAP, C, 6, 0.5);
  const char *pad1 = "{strides = [1, 1], paddings = [1, 1, 1, 1], dilations = [1, 1], groups = 1}";
  snprintf(t + n, CAP - n,
           "  var c1 : f32[-1,%d,%d,%d]\n  var a1 : f32[-1,%d,%d,%d]\n  var r1 : f32[-1,%d,%d,%d]\n"
           "  var c2 : f32[-1,%d,%d,%d]\n  var a2 : f32[-1,%d,%d,%d]\n  var s2 : f32[-1,%d,%d,%d]\n"
           "  var r2 : f32[-1,%d,%d,%d]\n  var y : f32[-1,%d,%d,%d]\n"
           "  block 0 parent -1 {\n"
           "    c1 = conv2d(x, w1) %s  @m.c:1\n    a1 = add(c1, b1)  @m.c:1\n"
           "    r1 = relu(a1)  @m.c:2\n"
           "    c2 = conv2d(r1, w2) %s  @m.c:3\n    a2 = add(c2, b2)  @m.c:3\n"
           "    s2 = add(a2, x)  @m.c:4\n    r2 = relu(s2)  @m.c:5\n"
           "    y = conv2d(r2, w3) {strides = [1, 1], paddings = [0, 0, 0, 0], dilations = [1, 1], "
           "groups = 1}  @m.c:6\n"
           "  }\n  fetch 0 y\n}\n",
           C, H, W, C, H, W, C, H, W, C, H, W, C, H, W, C, H, W, C, H, W, C, H - 2, W - 2, pad1,
           pad1);
  save_blk_and_x(d, t, (int64_t[]){3, C, H, W});
  free(t);
  const char *off = "--disable-pass winograd";
  int rc = sh("cd %s && %s compile blk.dymodel --emit c -o wino --report > report.txt && "
              "%s compile blk.dymodel --emit c -o direct %s && "
              "%s compile blk.dymodel -o wino_exe && %s compile blk.dymodel -o direct_exe %s && "
              "./wino_exe --input x=x.npy --output-dir ow && "
              "./direct_exe --input x=x.npy --output-dir od && "
              "%s compile blk.dymodel -o wino_t2 --threads 2 --cflags -DDY_THREAD_MIN_WORK=1 && "
              "./wino_t2 --input x=x.npy --output-dir ot && "
              "%s compile blk.dymodel -o f2_exe --winograd 2 && "
              "./f2_exe --input x=x.npy --output-dir o2 && "
              "%s compile blk.dymodel -o f6_exe --winograd 6 && "
              "./f6_exe --input x=x.npy --output-dir o6 && "
              "%s run blk.dymodel --input x=x.npy --output-dir ex",
              d, DY2STC, DY2STC, off, DY2STC, DY2STC, off, DY2STC, DY2STC, DY2STC, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* three Winograd kernels, none with the pass off; the report says so */
  CU_ASSERT_EQUAL(sh("test $(grep -c 'as Winograd F(4x4, 3x3)' %s/wino.c) -eq 3", d), 0);
  CU_ASSERT_NOT_EQUAL(sh("grep -q 'Winograd' %s/direct.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'winograd' %s/report.txt", d), 0);
  char a[700], b[700], e[700], t2[700];
  snprintf(a, sizeof a, "%s/ow/y.npy", d);
  snprintf(b, sizeof b, "%s/od/y.npy", d);
  snprintf(e, sizeof e, "%s/ex/y.npy", d);
  snprintf(t2, sizeof t2, "%s/ot/y.npy", d);
  /* the --threads build (every call split: DY_THREAD_MIN_WORK=1): the
   * same sums in the same order */
  CU_ASSERT(rel_err(t2, a) == 0.0);
  double wd = rel_err(a, b), we = rel_err(a, e), de = rel_err(b, e);
  fprintf(stderr, "\n  winograd vs direct %.2g, winograd vs executor %.2g, direct vs executor %.2g",
          wd, we, de);
  CU_ASSERT(wd <= 1e-5);
  /* F(2x2) and F(6x6) forced (--winograd 2, 6): F(2x2) is about as exact
   * as the direct sum (measured 5e-7 here), F(6x6)'s points +-2, +-1/2
   * lose a little more than F(4x4) (measured 4.4e-6 here; up to 1.9e-5 on
   * 512 channels, bench/RESULTS.md) */
  snprintf(a, sizeof a, "%s/o2/y.npy", d);
  double d2 = rel_err(a, b);
  snprintf(a, sizeof a, "%s/o6/y.npy", d);
  double d6 = rel_err(a, b);
  fprintf(stderr, "\n  F(2x2) vs direct %.2g, F(6x6) vs direct %.2g", d2, d6);
  CU_ASSERT(d2 <= 3e-6);
  CU_ASSERT(d6 <= 3e-5);
  CU_ASSERT(we <= 1e-5);
  CU_ASSERT(de <= 1e-6);
}

/* Each build (name, extra compile flags) of d/blk.dymodel run on d/x.npy
 * into d/o_<name>, within tol of the static executor's d/ex/y.npy. */
static void check_builds(const char *d, const char *const (*builds)[2], size_t n, double tol) {
  char ref[700], got[700];
  snprintf(ref, sizeof ref, "%s/ex/y.npy", d);
  for (size_t b = 0; b < n; b++) {
    int rc = sh("cd %s && %s compile blk.dymodel -o %s %s && ./%s --input x=x.npy --output-dir o_%s",
                d, DY2STC, builds[b][0], builds[b][1], builds[b][0], builds[b][0]);
    show_log_on_failure(rc, 0);
    CU_ASSERT_EQUAL(rc, 0);
    snprintf(got, sizeof got, "%s/o_%s/y.npy", d, builds[b][0]);
    double e = rc ? 1.0 : rel_err(got, ref);
    fprintf(stderr, "\n  %s vs executor %.2g", builds[b][0], e);
    CU_ASSERT(e <= tol);
  }
}

/* Two MobileNetV2 inverted residual blocks -- 1x1 expand (16 -> E) +
 * bias + relu6, depthwise 3x3 pad 1 + bias + relu6, 1x1 project + bias
 * (+ the residual in the first, stride 2 in the second) -- on H x H maps,
 * and x at batch 3 of a dynamic batch, into d. */
static void save_mbv2_blocks(const char *d, int E, int H) {
  enum { C = 16, O = 24, CAP = 1 << 20 };
  char *t = malloc(CAP);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  size_t n = (size_t)snprintf(t, CAP, "program {\n  var x : f32[-1,%d,%d,%d] feed 0\n", C, H, H);
  struct {
    const char *name;
    int o, c, k;
  } ws[] = {{"we1", E, C, 1}, {"wd1", E, 1, 3}, {"wp1", C, E, 1},
            {"we2", E, C, 1}, {"wd2", E, 1, 3}, {"wp2", O, E, 1}};
  for (int k = 0; k < 6; k++) {
    n += (size_t)snprintf(t + n, CAP - n, "  var %s : f32[%d,%d,%d,%d] persistable", ws[k].name,
                          ws[k].o, ws[k].c, ws[k].k, ws[k].k);
    n = put_weights(t, n, CAP, ws[k].o * ws[k].c * ws[k].k * ws[k].k, k,
                    ws[k].k == 3 ? 0.3 : 0.15);
    n += (size_t)snprintf(t + n, CAP - n, "  var b%s : f32[%d,1,1] persistable", ws[k].name,
                          ws[k].o);
    n = put_weights(t, n, CAP, ws[k].o, k + 10, 0.5);
  }
  const char *c1 = "{strides = [1, 1], paddings = [0, 0, 0, 0], dilations = [1, 1], groups = 1}";
  char dw1[160], dw2[160];
  snprintf(dw1, sizeof dw1,
           "{strides = [1, 1], paddings = [1, 1, 1, 1], dilations = [1, 1], groups = %d}", E);
  snprintf(dw2, sizeof dw2,
           "{strides = [2, 2], paddings = [1, 1, 1, 1], dilations = [1, 1], groups = %d}", E);
  const char *r6 = "{min = 0.0, max = 6.0}";
  n += (size_t)snprintf(t + n, CAP - n,
                        "  var e1 : f32[-1,%d,%d,%d]\n  var f1 : f32[-1,%d,%d,%d]\n"
                        "  var g1 : f32[-1,%d,%d,%d]\n  var h1 : f32[-1,%d,%d,%d]\n"
                        "  var i1 : f32[-1,%d,%d,%d]\n  var k1 : f32[-1,%d,%d,%d]\n"
                        "  var j1 : f32[-1,%d,%d,%d]\n  var l1 : f32[-1,%d,%d,%d]\n"
                        "  var s1 : f32[-1,%d,%d,%d]\n",
                        E, H, H, E, H, H, E, H, H, E, H, H, E, H, H, E, H, H, C, H, H, C, H, H, C,
                        H, H);
  n += (size_t)snprintf(t + n, CAP - n,
                        "  var e2 : f32[-1,%d,%d,%d]\n  var f2 : f32[-1,%d,%d,%d]\n"
                        "  var g2 : f32[-1,%d,%d,%d]\n  var h2 : f32[-1,%d,%d,%d]\n"
                        "  var i2 : f32[-1,%d,%d,%d]\n  var j2 : f32[-1,%d,%d,%d]\n"
                        "  var m2 : f32[-1,%d,%d,%d]\n  var y : f32[-1,%d,%d,%d]\n",
                        E, H, H, E, H, H, E, H, H, E, H / 2, H / 2, E, H / 2, H / 2, E, H / 2,
                        H / 2, O, H / 2, H / 2, O, H / 2, H / 2);
  snprintf(t + n, CAP - n,
           "  block 0 parent -1 {\n"
           "    e1 = conv2d(x, we1) %s  @m.c:1\n    f1 = add(e1, bwe1)  @m.c:1\n"
           "    g1 = clip(f1) %s  @m.c:1\n"
           "    h1 = conv2d(g1, wd1) %s  @m.c:2\n    i1 = add(h1, bwd1)  @m.c:2\n"
           "    k1 = clip(i1) %s  @m.c:2\n"
           "    j1 = conv2d(k1, wp1) %s  @m.c:3\n    l1 = add(j1, bwp1)  @m.c:3\n"
           "    s1 = add(l1, x)  @m.c:4\n"
           "    e2 = conv2d(s1, we2) %s  @m.c:5\n    f2 = add(e2, bwe2)  @m.c:5\n"
           "    g2 = clip(f2) %s  @m.c:5\n"
           "    h2 = conv2d(g2, wd2) %s  @m.c:6\n    i2 = add(h2, bwd2)  @m.c:6\n"
           "    j2 = clip(i2) %s  @m.c:6\n"
           "    m2 = conv2d(j2, wp2) %s  @m.c:7\n    y = add(m2, bwp2)  @m.c:7\n"
           "  }\n  fetch 0 y\n}\n",
           c1, r6, dw1, r6, c1, c1, r6, dw2, r6, c1);
  save_blk_and_x(d, t, (int64_t[]){3, C, H, H});
  free(t);
}

/* fuse-dwpw against the separate depthwise and 1x1 kernels (--disable-pass
 * fuse-dwpw) and the static executor on save_mbv2_blocks' model, also
 * built with --threads 2 (its fused kernel's work is above the threshold:
 * the same result). */
static void test_dwpw_matches_separate(void) {
  setup_work();
  const char *d = WORK "/dwpw";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
  save_mbv2_blocks(d, 144, 30); /* 30 wide: the panels straddle rows */
  /* fuse-irb off: it would take the expand convs into fused_irb */
  const char *off = "--disable-pass fuse-dwpw", *on = "--disable-pass fuse-irb";
  int rc = sh("cd %s && %s compile blk.dymodel --emit c -o fused --report %s > report.txt && "
              "%s compile blk.dymodel --emit c -o apart %s && "
              "%s compile blk.dymodel -o fused_exe %s && "
              "%s compile blk.dymodel -o apart_exe %s && "
              "./fused_exe --input x=x.npy --output-dir of && "
              "./apart_exe --input x=x.npy --output-dir oa && "
              "%s compile blk.dymodel -o fused_t2 --threads 2 %s && "
              "./fused_t2 --input x=x.npy --output-dir ot && "
              "%s run blk.dymodel --input x=x.npy --output-dir ex",
              d, DY2STC, on, DY2STC, off, DY2STC, on, DY2STC, off, DY2STC, on, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* two fused kernels, none with the pass off; the report says so */
  CU_ASSERT_EQUAL(sh("test $(grep -c '1x1 conv .*, fused: per band' %s/fused.c) -eq 2", d), 0);
  CU_ASSERT_NOT_EQUAL(sh("grep -q 'fused: per band' %s/apart.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'depthwise, padded planes' %s/apart.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'fuse-dwpw: 2 ' %s/report.txt", d), 0);
  char a[700], b[700], e[700], t2[700];
  snprintf(a, sizeof a, "%s/of/y.npy", d);
  snprintf(b, sizeof b, "%s/oa/y.npy", d);
  snprintf(e, sizeof e, "%s/ex/y.npy", d);
  snprintf(t2, sizeof t2, "%s/ot/y.npy", d);
  CU_ASSERT(rel_err(t2, a) == 0.0); /* the --threads build: the same sums */
  double fa = rel_err(a, b), fe = rel_err(a, e), ae = rel_err(b, e);
  fprintf(stderr, "\n  fused vs apart %.2g, fused vs executor %.2g, apart vs executor %.2g", fa,
          fe, ae);
  CU_ASSERT(fa <= 1e-6);
  CU_ASSERT(fe <= 1e-6);
  CU_ASSERT(ae <= 1e-6);
}

/* fuse-irb against the expand conv apart (--disable-pass fuse-irb: the
 * fused_dwpw after it) and the static executor, on the two MobileNetV2
 * blocks of test_dwpw_matches_separate expanded to 300 channels on 30 x
 * 30 maps (1.08 MB an image: above the pass's threshold; the first in 4
 * bands of 8 rows, its halo kept from band to band; the second at stride
 * 2; linear mode) and to 256 channels on 32 x 32 (plane mode, bands of 7
 * rows), at batch 3 of a dynamic batch, on every SIMD path the generated
 * C has: AVX-512 where the host has it (--target native), AVX2
 * (x86-64-v3), plain C (-DDY_NO_SIMD), and --threads 2 (the bands split
 * over the threads: the same sums). */
static void test_irb_matches_separate(void) {
  setup_work();
  const char *d = WORK "/irb", *dp = WORK "/irb_plane";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s %s && mkdir -p %s %s", d, dp, d, dp), 0);
  save_mbv2_blocks(d, 300, 30);
  save_mbv2_blocks(dp, 256, 32);
  static const char *const builds[][2] = {
      {"native", ""},
      {"avx2", "--target x86-64-v3"},
      {"plain", "--cflags -DDY_NO_SIMD"},
      {"threads", "--threads 2"},
      {"apart", "--disable-pass fuse-irb"},
  };
  for (int m = 0; m < 2; m++) {
    const char *w = m ? dp : d;
    int rc = sh("cd %s && %s compile blk.dymodel --emit c -o fused --report > report.txt && "
                "%s compile blk.dymodel --emit c -o apart --disable-pass fuse-irb && "
                "%s run blk.dymodel --input x=x.npy --output-dir ex",
                w, DY2STC, DY2STC, DY2STC);
    show_log_on_failure(rc, 0);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    /* two fused blocks, the first in bands; none with the pass off */
    CU_ASSERT_EQUAL(sh("test $(grep -c 'fused: per band of .* the expanded rows' %s/fused.c) -eq 2",
                       w), 0);
    CU_ASSERT_EQUAL(sh("grep -q 'per band of %d output rows the expanded rows' %s/fused.c",
                       m ? 7 : 8, w), 0);
    /* plane mode: the padded rows written in place (both blocks at 32 wide) */
    CU_ASSERT_EQUAL(sh("test $(grep -c 'ex.s borders stay zero' %s/fused.c) -eq %d", w, m ? 2 : 0),
                    0);
    CU_ASSERT_NOT_EQUAL(sh("grep -q 'the expanded rows' %s/apart.c", w), 0);
    CU_ASSERT_EQUAL(sh("grep -q 'fuse-irb: 2 ' %s/report.txt", w), 0);
    char ref[700], got[700];
    check_builds(w, builds, sizeof builds / sizeof builds[0], 1e-6);
    snprintf(ref, sizeof ref, "%s/o_native/y.npy", w);
    snprintf(got, sizeof got, "%s/o_threads/y.npy", w);
    CU_ASSERT(rel_err(got, ref) == 0.0);
    snprintf(got, sizeof got, "%s/o_apart/y.npy", w);
    double fa = rel_err(got, ref);
    fprintf(stderr, "\n  fused vs apart %.2g", fa);
    CU_ASSERT(fa <= 1e-6);
  }
}

/* The small-depth direct kernel (the pass conv-small) and its max pool
 * (fuse-pool) against the im2col GEMM (--disable-pass conv-small) and the
 * static executor, on every SIMD path the generated C has: AVX-512 where
 * the host has it (--target native), AVX2 (x86-64-v3), plain C
 * (-DDY_NO_SIMD), and --threads 2. A LeNet-like net at odd sizes and
 * batch 3 of a dynamic batch: conv 5x5 pad 2 (3 -> 6) + bias + relu + max
 * pool 2 (the 15 x 13 output's last row dropped), conv 3x3 pad 1 (6 -> 13:
 * tiles of 8 or 4 and a rest) + bias + relu + max pool 2, and a conv 2x2
 * (13 -> 5) without a pool after it. Bound: 1e-5 of the output's scale
 * (the sums differ in order only; measured ~1e-7). */
static void test_small_conv_matches_gemm(void) {
  setup_work();
  const char *d = WORK "/small";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
  enum { CAP = 1 << 18 };
  char *t = malloc(CAP);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  size_t n = (size_t)snprintf(t, CAP, "program {\n  var x : f32[-1,3,15,13] feed 0\n");
  n += (size_t)snprintf(t + n, CAP - n, "  var w1 : f32[6,3,5,5] persistable");
  n = put_weights(t, n, CAP, 6 * 3 * 25, 1, 0.2);
  n += (size_t)snprintf(t + n, CAP - n, "  var b1 : f32[6,1,1] persistable");
  n = put_weights(t, n, CAP, 6, 2, 0.5);
  n += (size_t)snprintf(t + n, CAP - n, "  var w2 : f32[13,6,3,3] persistable");
  n = put_weights(t, n, CAP, 13 * 6 * 9, 3, 0.2);
  n += (size_t)snprintf(t + n, CAP - n, "  var b2 : f32[13,1,1] persistable");
  n = put_weights(t, n, CAP, 13, 4, 0.5);
  n += (size_t)snprintf(t + n, CAP - n, "  var w3 : f32[5,13,2,2] persistable");
  n = put_weights(t, n, CAP, 5 * 13 * 4, 5, 0.2);
  const char *conv = "{strides = [1, 1], paddings = [%d, %d, %d, %d], dilations = [1, 1], groups = 1}";
  char c1[160], c2[160], c3[160];
  snprintf(c1, sizeof c1, conv, 2, 2, 2, 2);
  snprintf(c2, sizeof c2, conv, 1, 1, 1, 1);
  snprintf(c3, sizeof c3, conv, 0, 0, 0, 0);
  const char *pool = "{pooling_type = \"max\", ksize = [2, 2], strides = [2, 2], paddings = [0, 0], "
                     "ceil_mode = 0, exclusive = 1, global_pooling = 0, adaptive = 0}";
  snprintf(t + n, CAP - n,
           "  var c1 : f32[-1,6,15,13]\n  var a1 : f32[-1,6,15,13]\n  var r1 : f32[-1,6,15,13]\n"
           "  var p1 : f32[-1,6,7,6]\n  var c2 : f32[-1,13,7,6]\n  var a2 : f32[-1,13,7,6]\n"
           "  var r2 : f32[-1,13,7,6]\n  var p2 : f32[-1,13,3,3]\n  var y : f32[-1,5,2,2]\n"
           "  block 0 parent -1 {\n"
           "    c1 = conv2d(x, w1) %s  @m.c:1\n    a1 = add(c1, b1)  @m.c:1\n"
           "    r1 = relu(a1)  @m.c:2\n    p1 = pool2d(r1) %s  @m.c:3\n"
           "    c2 = conv2d(p1, w2) %s  @m.c:4\n    a2 = add(c2, b2)  @m.c:4\n"
           "    r2 = relu(a2)  @m.c:5\n    p2 = pool2d(r2) %s  @m.c:6\n"
           "    y = conv2d(p2, w3) %s  @m.c:7\n"
           "  }\n  fetch 0 y\n}\n",
           c1, pool, c2, pool, c3);
  save_blk_and_x(d, t, (int64_t[]){3, 3, 15, 13});
  free(t);
  /* name, extra compile flags */
  static const char *const builds[][2] = {
      {"native", ""},
      {"avx2", "--target x86-64-v3"},
      {"plain", "--cflags -DDY_NO_SIMD"},
      {"threads", "--threads 2"},
      {"gemm", "--disable-pass conv-small"},
      {"nopool", "--disable-pass fuse-pool"},
  };
  int rc = sh("cd %s && %s compile blk.dymodel --emit c -o small --report > report.txt && "
              "%s run blk.dymodel --input x=x.npy --output-dir ex",
              d, DY2STC, DY2STC);
  show_log_on_failure(rc, 0);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* three convs on the direct kernel, two of them with their pool */
  CU_ASSERT_EQUAL(sh("test $(grep -c 'direct (few channels)' %s/small.c) -eq 3", d), 0);
  CU_ASSERT_EQUAL(sh("test $(grep -c 'then max pooled' %s/small.c) -eq 2", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'conv-small: 3 convolutions on the direct kernel, 2 with' "
                     "%s/report.txt", d), 0);
  char ref[700], got[700];
  check_builds(d, builds, sizeof builds / sizeof builds[0], 1e-5);
  /* --threads 2: the same sums (split or not, each band is computed alike) */
  snprintf(ref, sizeof ref, "%s/o_native/y.npy", d);
  snprintf(got, sizeof got, "%s/o_threads/y.npy", d);
  CU_ASSERT(rel_err(got, ref) == 0.0);
}

void dy_test_register(void) {
  DY_SUITE("e2e");
  DY_TEST(test_simple_net_three_ways);
  DY_TEST(test_mlp_three_ways);
  DY_TEST(test_lenet5_three_ways);
  DY_TEST(test_lenet5_source_lines);
  DY_TEST(test_cnn_three_ways);
  DY_TEST(test_transformer_three_ways);
  DY_TEST(test_simple_net_batch_5_and_bound);
  DY_TEST(test_passes_and_memory_plan);
  DY_TEST(test_emitted_c_is_strict_and_standalone);
  DY_TEST(test_cli_errors);
  DY_TEST(test_show);
  DY_TEST(test_fast_kernels_match_plain);
  DY_TEST(test_dwpw_matches_separate);
  DY_TEST(test_irb_matches_separate);
  DY_TEST(test_winograd_matches_direct);
  DY_TEST(test_small_conv_matches_gemm);
}
