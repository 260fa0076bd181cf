/* test_threads.c - --threads N on whole models: the per-run worker pool of
 * the generated code (codegen/rt/dy_thread.h, NAME_run around
 * NAME_run_body in codegen/program/run.c) and the kernels that split over it.
 *
 *   - the samples (mlp, lenet5 on conv-small, cnn, transformer), a
 *     MobileNet-like block (GEMM conv, depthwise + 1x1 fused, depthwise on
 *     a small map, global pool, classifier matmul) and a weight-stationary
 *     conv (emit_conv.c: gathers and output channels split) built with
 *     --threads 2 and 3, every kernel split (-DDY_THREAD_MIN_WORK=1) and at
 *     the default threshold, give the same bytes as --threads 1;
 *   - two threads of the caller running one model at once (each its own
 *     arena), many times, give the one-thread results, also built with
 *     -fsanitize=thread (the pool's waits and wake-ups race-free);
 *   - a pthread_create that fails (-Wl,--wrap) leaves every slice to the
 *     calling thread: the same results;
 *   - a build without --threads has no pthread in it.
 * Nothing here is timed (bench/RESULTS.md "Threads (branch pool)" has the
 * speed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define SAMPLES DY_BUILD_DIR "/../samples"
#define WORK DY_BUILD_DIR "/threads"

#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static void show_log_on_failure(int rc) {
  if (rc == 0)
    return;
  char *log = dy_test_slurp(WORK "/last.log");
  fprintf(stderr, "\n  command failed (%d):\n%s\n", rc, log ? log : "(no output)");
  free(log);
}

static void setup_work(void) { mkdir(WORK, 0777); }

/* A sample's model built with --threads 1, 2 and 3 (each kernel split,
 * and at the default threshold): the outputs are the same bytes. */
static void sample_same_bytes(const char *sample) {
  setup_work();
  char d[512];
  snprintf(d, sizeof d, WORK "/%s", sample);
  int rc = sh("rm -rf %s && mkdir -p %s && %s/%s --batch 3 --out %s", d, d, SAMPLES, sample, d);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("cd %s && %s compile %s.dymodel -o t1 && ./t1 --input x=x.npy --output-dir o1", d,
          DY2STC, sample);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  static const char *const how[] = {"--threads 2 --cflags -DDY_THREAD_MIN_WORK=1",
                                    "--threads 3 --cflags -DDY_THREAD_MIN_WORK=1",
                                    "--threads 2"};
  for (int k = 0; k < 3; k++) {
    rc = sh("cd %s && %s compile %s.dymodel -o tk %s && ./tk --input x=x.npy --output-dir ok && "
            "cmp o1/out.npy ok/out.npy",
            d, DY2STC, sample, how[k]);
    if (rc)
      fprintf(stderr, "\n  %s, %s: not the --threads 1 bytes", sample, how[k]);
    show_log_on_failure(rc);
    CU_ASSERT_EQUAL(rc, 0);
  }
}

static void test_mlp(void) { sample_same_bytes("mlp"); }
/* LeNet-5's convs run on conv-small (emit_conv_small.c), split by band */
static void test_lenet5(void) {
  sample_same_bytes("lenet5");
  CU_ASSERT_EQUAL(sh("cd %s/lenet5 && %s compile lenet5.dymodel --emit c -o l2 --threads 2 && "
                     "test $(grep -c 'band of conv rows), one thread' l2.c) -eq 2",
                     WORK, DY2STC),
                  0);
}
static void test_cnn(void) { sample_same_bytes("cnn"); }
static void test_transformer(void) { sample_same_bytes("transformer"); }

/* count values of a from a small xorshift, scaled to [-a, a) */
static size_t put_weights(char *t, size_t n, size_t cap, int count, int seed, double a) {
  n += (size_t)snprintf(t + n, cap - n, " = [");
  uint32_t s = 2463534242u + (uint32_t)seed * 7919u;
  for (int i = 0; i < count; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    n += (size_t)snprintf(t + n, cap - n, "%s%.4f", i ? ", " : "", a * ((s % 2000) / 1000.0 - 1));
  }
  return n + (size_t)snprintf(t + n, cap - n, "]\n");
}

enum { C = 48, E = 64, H = 20, K = 10 };

/* WORK/mob/blk.dymodel: x [-1, 48, 20, 20] -> conv 3x3 pad 1 (48 -> 64) +
 * bias + relu6 -> depthwise 3x3 pad 1 + bias + relu6 -> 1x1 (64 -> 48) +
 * bias + x (fused with the depthwise: one band, four micro-panels of
 * the 1x1 weight, so split at batch 1) -> 1x1 (48 -> 64) + relu ->
 * depthwise 3x3 stride 2 (a 10x10 map) + relu -> global average pool ->
 * flatten -> matmul 64 x 10 + bias: y [-1, 10]. */
static void save_mobile_block(const char *d) {
  enum { CAP = 1 << 20 };
  char *t = malloc(CAP);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  size_t n = (size_t)snprintf(t, CAP, "program {\n  var x : f32[-1,%d,%d,%d] feed 0\n", C, H, H);
  static const struct {
    const char *name;
    int o, c, k;
  } ws[] = {{"w0", E, C, 3}, {"wd1", E, 1, 3}, {"wp1", C, E, 1}, {"we2", E, C, 1},
            {"wd2", E, 1, 3}};
  for (int k = 0; k < 5; k++) {
    n += (size_t)snprintf(t + n, CAP - n, "  var %s : f32[%d,%d,%d,%d] persistable", ws[k].name,
                          ws[k].o, ws[k].c, ws[k].k, ws[k].k);
    n = put_weights(t, n, CAP, ws[k].o * ws[k].c * ws[k].k * ws[k].k, k, 0.2);
    n += (size_t)snprintf(t + n, CAP - n, "  var b%s : f32[%d,1,1] persistable", ws[k].name,
                          ws[k].o);
    n = put_weights(t, n, CAP, ws[k].o, k + 10, 0.3);
  }
  n += (size_t)snprintf(t + n, CAP - n, "  var fc : f32[%d,%d] persistable", E, K);
  n = put_weights(t, n, CAP, E * K, 20, 0.2);
  n += (size_t)snprintf(t + n, CAP - n, "  var bfc : f32[%d] persistable", K);
  n = put_weights(t, n, CAP, K, 21, 0.3);
  static const char *const big[] = {"c0", "a0", "r0", "h1", "i1", "k1", "e2", "r2"};
  for (int k = 0; k < 8; k++)
    n += (size_t)snprintf(t + n, CAP - n, "  var %s : f32[-1,%d,%d,%d]\n", big[k], E, H, H);
  static const char *const mid[] = {"j1", "l1", "s1"};
  for (int k = 0; k < 3; k++)
    n += (size_t)snprintf(t + n, CAP - n, "  var %s : f32[-1,%d,%d,%d]\n", mid[k], C, H, H);
  n += (size_t)snprintf(t + n, CAP - n,
                        "  var h2 : f32[-1,%d,%d,%d]\n  var i2 : f32[-1,%d,%d,%d]\n"
                        "  var k2 : f32[-1,%d,%d,%d]\n  var g : f32[-1,%d,1,1]\n"
                        "  var f : f32[-1,%d]\n  var m : f32[-1,%d]\n  var y : f32[-1,%d]\n",
                        E, H / 2, H / 2, E, H / 2, H / 2, E, H / 2, H / 2, E, E, K, K);
  const char *p1 = "{strides = [1, 1], paddings = [1, 1, 1, 1], dilations = [1, 1], groups = 1}";
  const char *c1 = "{strides = [1, 1], paddings = [0, 0, 0, 0], dilations = [1, 1], groups = 1}";
  char dw1[160], dw2[160];
  snprintf(dw1, sizeof dw1,
           "{strides = [1, 1], paddings = [1, 1, 1, 1], dilations = [1, 1], groups = %d}", E);
  snprintf(dw2, sizeof dw2,
           "{strides = [2, 2], paddings = [1, 1, 1, 1], dilations = [1, 1], groups = %d}", E);
  const char *r6 = "{min = 0.0, max = 6.0}";
  snprintf(t + n, CAP - n,
           "  block 0 parent -1 {\n"
           "    c0 = conv2d(x, w0) %s  @m.c:1\n    a0 = add(c0, bw0)  @m.c:1\n"
           "    r0 = clip(a0) %s  @m.c:1\n"
           "    h1 = conv2d(r0, wd1) %s  @m.c:2\n    i1 = add(h1, bwd1)  @m.c:2\n"
           "    k1 = clip(i1) %s  @m.c:2\n"
           "    j1 = conv2d(k1, wp1) %s  @m.c:3\n    l1 = add(j1, bwp1)  @m.c:3\n"
           "    s1 = add(l1, x)  @m.c:4\n"
           "    e2 = conv2d(s1, we2) %s  @m.c:5\n    r2 = relu(e2)  @m.c:5\n"
           "    h2 = conv2d(r2, wd2) %s  @m.c:6\n    i2 = add(h2, bwd2)  @m.c:6\n"
           "    k2 = relu(i2)  @m.c:6\n"
           "    g = pool2d(k2) {pooling_type = \"avg\", ksize = [1, 1], strides = [1, 1], "
           "paddings = [0, 0, 0, 0], ceil_mode = 0, exclusive = 1, global_pooling = 1, "
           "adaptive = 0}  @m.c:7\n"
           "    f = flatten(g) {start_axis = 1, stop_axis = -1}  @m.c:8\n"
           "    m = matmul(f, fc) {transpose_x = 0, transpose_y = 0}  @m.c:9\n"
           "    y = add(m, bfc)  @m.c:9\n"
           "  }\n  fetch 0 y\n}\n",
           p1, r6, dw1, r6, c1, c1, dw2);
  bool saved = dy_test_save_blk(d, t);
  free(t);
  CU_ASSERT_FATAL(saved);
  char path[600];
  for (int k = 0; k < 2; k++) { /* x.npy: batch 3, x1.npy: batch 1 */
    snprintf(path, sizeof path, "%s/x%s.npy", d, k ? "1" : "");
    CU_ASSERT_FATAL(dy_test_write_pattern(path, (int64_t[]){k ? 1 : 3, C, H, H}, 37));
  }
}

/* The MobileNet-like block: --threads 2 and 3 = --threads 1, bytewise, at
 * batch 3 and 1. */
static void test_mobile_block(void) {
  setup_work();
  const char *d = WORK "/mob";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
  save_mobile_block(d);
  int rc = sh("cd %s && %s compile blk.dymodel -o t1 && ./t1 --input x=x.npy --output-dir o1 && "
              "./t1 --input x=x1.npy --output-dir o1b && "
              "%s compile blk.dymodel --emit c -o mob2 --threads 2 --report > report.txt",
              d, DY2STC, DY2STC);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* the kinds of kernel this block is for are there */
  CU_ASSERT_EQUAL(sh("grep -q 'fused: per band' %s/mob2.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'depthwise, padded planes' %s/mob2.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'dy_pool_begin(&pool);' %s/mob2.c", d), 0);
  CU_ASSERT_EQUAL(sh("grep -q 'args.sp = DY_THREADS;' %s/mob2.c", d), 0); /* dwpw's split */
  static const char *const how[] = {"--threads 2 --cflags -DDY_THREAD_MIN_WORK=1",
                                    "--threads 3 --cflags -DDY_THREAD_MIN_WORK=1",
                                    "--threads 3", "--threads 2 --cflags -DDY_SPIN=0"};
  for (int k = 0; k < 4; k++) {
    rc = sh("cd %s && %s compile blk.dymodel -o tk %s && ./tk --input x=x.npy --output-dir ok && "
            "cmp o1/y.npy ok/y.npy && ./tk --input x=x1.npy --output-dir okb && "
            "cmp o1b/y.npy okb/y.npy",
            d, DY2STC, how[k]);
    if (rc)
      fprintf(stderr, "\n  block, %s: not the --threads 1 bytes", how[k]);
    show_log_on_failure(rc);
    CU_ASSERT_EQUAL(rc, 0);
  }
  /* without --threads: no pthread anywhere */
  rc = sh("cd %s && %s compile blk.dymodel --emit c -o mob1 && ! grep -q pthread mob1.c", d,
          DY2STC);
  CU_ASSERT_EQUAL(rc, 0);
}

/* x [-1, 128, 9, 9] feed 0 -> conv 3x3 stride 2 pad 1 (128 -> 256: a
 * 1.2 MB weight, so weight-stationary, emit_conv.c) + bias + x2 [-1, 256,
 * 5, 5] feed 1 (the residual) + relu: --threads 2 and 3 (the gathers and
 * the output channels split) = --threads 1, bytewise. */
static void test_weight_stationary(void) {
  setup_work();
  const char *d = WORK "/ws";
  CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
  enum { CI = 128, CO = 256, HI = 9, HO = 5, CAP = 4 << 20 };
  char *t = malloc(CAP);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  size_t n = (size_t)snprintf(t, CAP,
                              "program {\n  var x : f32[-1,%d,%d,%d] feed 0\n"
                              "  var x2 : f32[-1,%d,%d,%d] feed 1\n"
                              "  var w : f32[%d,%d,3,3] persistable",
                              CI, HI, HI, CO, HO, HO, CO, CI);
  n = put_weights(t, n, CAP, CO * CI * 9, 1, 0.05);
  n += (size_t)snprintf(t + n, CAP - n, "  var b : f32[%d,1,1] persistable", CO);
  n = put_weights(t, n, CAP, CO, 2, 0.3);
  snprintf(t + n, CAP - n,
           "  var c : f32[-1,%d,%d,%d]\n  var a : f32[-1,%d,%d,%d]\n"
           "  var s : f32[-1,%d,%d,%d]\n  var y : f32[-1,%d,%d,%d]\n"
           "  block 0 parent -1 {\n"
           "    c = conv2d(x, w) {strides = [2, 2], paddings = [1, 1, 1, 1], "
           "dilations = [1, 1], groups = 1}  @m.c:1\n"
           "    a = add(c, b)  @m.c:1\n    s = add(a, x2)  @m.c:2\n    y = relu(s)  @m.c:3\n"
           "  }\n  fetch 0 y\n}\n",
           CO, HO, HO, CO, HO, HO, CO, HO, HO, CO, HO, HO);
  bool saved = dy_test_save_blk(d, t);
  free(t);
  CU_ASSERT_FATAL(saved);
  char path[600];
  for (int k = 0; k < 2; k++) {
    snprintf(path, sizeof path, "%s/x%s.npy", d, k ? "2" : "");
    CU_ASSERT_FATAL(dy_test_write_pattern(
        path, (int64_t[]){3, k ? CO : CI, k ? HO : HI, k ? HO : HI}, 37 + k));
  }
  const char *in = "--input x=x.npy --input x2=x2.npy";
  int rc = sh("cd %s && %s compile blk.dymodel --emit c -o ws2 --threads 2", d, DY2STC);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(sh("grep -q 'weight-stationary' %s/ws2.c && grep -q 'dy_parallel(ns' %s/ws2.c",
                     d, d), 0);
  /* with SIMD (native), and plain C (-DDY_NO_SIMD) against its own
   * one-thread build */
  static const char *const how[][2] = {
      {"", "--threads 2"},
      {"", "--threads 3"},
      {"--cflags -DDY_NO_SIMD", "--threads 2 --cflags -DDY_NO_SIMD"}};
  for (int k = 0; k < 3; k++) {
    rc = sh("cd %s && %s compile blk.dymodel -o ta %s && ./ta %s --output-dir oa && "
            "%s compile blk.dymodel -o tb %s && ./tb %s --output-dir ob && cmp oa/y.npy ob/y.npy",
            d, DY2STC, how[k][0], in, DY2STC, how[k][1], in);
    if (rc)
      fprintf(stderr, "\n  weight-stationary, %s: not the one-thread bytes", how[k][1]);
    show_log_on_failure(rc);
    CU_ASSERT_EQUAL(rc, 0);
  }
}

/* driver.c for the block emitted as mob2 (--threads 2, every kernel
 * split): the batch-1 results of NAMES inputs computed one after the
 * other, then two threads each run the model ROUNDS times on them (each
 * its own arena, in opposite orders) and compare each result with the
 * first bytes; with WRAP, pthread_create always fails (linked with
 * -Wl,--wrap=pthread_create) and the number of tries is printed. Prints
 * "ok" and exits 0 when all agree. */
static const char driver_c[] =
    "#include <pthread.h>\n"
    "#include <errno.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include \"mob2.h\"\n"
    "enum { NX = 4, ROUNDS = 6 };\n"
    "static float *xs[NX], *ref[NX];\n"
    "static int bad;\n"
    "#ifdef WRAP\n"
    "static int tries;\n"
    "int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *),\n"
    "                          void *arg);\n"
    "int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *),\n"
    "                          void *arg) {\n"
    "  (void)t, (void)a, (void)f, (void)arg;\n"
    "  __atomic_add_fetch(&tries, 1, __ATOMIC_RELAXED);\n"
    "  return EAGAIN;\n"
    "}\n"
    "#endif\n"
    "static void *caller(void *p) {\n"
    "  int who = *(int *)p;\n"
    "  void *arena = aligned_alloc(MOB2_ARENA_ALIGN, MOB2_ARENA_BYTES);\n"
    "  float y[MOB2_OUTPUT_0_NUMEL(1)];\n"
    "  for (int r = 0; arena && r < ROUNDS * NX; r++) {\n"
    "    int i = who ? NX - 1 - r % NX : r % NX;\n"
    "    if (mob2_run(arena, 1, xs[i], y) != MOB2_OK || memcmp(y, ref[i], sizeof y))\n"
    "      __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);\n"
    "  }\n"
    "  if (!arena)\n"
    "    __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);\n"
    "  free(arena);\n"
    "  return NULL;\n"
    "}\n"
    "int main(void) {\n"
    "  void *arena = aligned_alloc(MOB2_ARENA_ALIGN, MOB2_ARENA_BYTES);\n"
    "  if (!arena)\n"
    "    return 2;\n"
    "  for (int i = 0; i < NX; i++) {\n"
    "    xs[i] = malloc(MOB2_INPUT_0_NUMEL(1) * sizeof(float));\n"
    "    ref[i] = malloc(MOB2_OUTPUT_0_NUMEL(1) * sizeof(float));\n"
    "    if (!xs[i] || !ref[i])\n"
    "      return 2;\n"
    "    for (int64_t j = 0; j < MOB2_INPUT_0_NUMEL(1); j++)\n"
    "      xs[i][j] = (float)((j * (37 + 2 * i)) % 101) / 50.0f - 1.0f;\n"
    "    if (mob2_run(arena, 1, xs[i], ref[i]) != MOB2_OK)\n"
    "      return 3;\n"
    "  }\n"
    "  free(arena);\n"
    "  if (!memcmp(ref[0], ref[1], MOB2_OUTPUT_0_NUMEL(1) * sizeof(float)))\n"
    "    return 4; /* the inputs must give different outputs */\n"
    "  pthread_t th[2];\n"
    "  int who[2] = {0, 1};\n"
    "  for (int k = 0; k < 2; k++)\n"
    "    if (pthread_create(&th[k], NULL, caller, &who[k]) != 0)\n"
    "      caller(&who[k]), th[k] = pthread_self();\n"
    "  for (int k = 0; k < 2; k++)\n"
    "    if (!pthread_equal(th[k], pthread_self()))\n"
    "      pthread_join(th[k], NULL);\n"
    "#ifdef WRAP\n"
    "  printf(\"tries %d\\n\", tries);\n"
    "#endif\n"
    "  for (int i = 0; i < NX; i++) {\n"
    "    FILE *f;\n"
    "    char name[32];\n"
    "    snprintf(name, sizeof name, \"y%d.bin\", i);\n"
    "    f = fopen(name, \"wb\");\n"
    "    if (!f || fwrite(ref[i], sizeof(float), MOB2_OUTPUT_0_NUMEL(1), f) !=\n"
    "                  (size_t)MOB2_OUTPUT_0_NUMEL(1) || fclose(f))\n"
    "      return 5;\n"
    "  }\n"
    "  printf(\"%s\\n\", bad ? \"bad\" : \"ok\");\n"
    "  return bad != 0;\n"
    "}\n";

/* Two callers at once (plain and under TSan), and a failing
 * pthread_create, against the one-thread build's results. */
static void test_two_callers_and_no_threads(void) {
  setup_work();
  const char *d = WORK "/mob";
  int rc = sh("cd %s && test -f blk.dymodel", d);
  if (rc) { /* test_mobile_block did not run first */
    CU_ASSERT_EQUAL_FATAL(sh("rm -rf %s && mkdir -p %s", d, d), 0);
    save_mobile_block(d);
  }
  FILE *f = fopen(WORK "/mob/driver.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(driver_c, f);
  CU_ASSERT_EQUAL(fclose(f), 0);
  /* the one-thread build's results (--threads 1 emits no pool: the same
   * driver then only checks two callers of plain code) */
  const char *cc = "cc -std=c11 -O2 -march=native -pthread -I.";
  rc = sh("cd %s && rm -rf ref && mkdir ref && "
          "%s compile blk.dymodel --emit c -o ref/mob2 && cp driver.c ref/ && "
          "cd ref && %s -o drv driver.c mob2.c mob2_weights.c && ./drv > out.txt && "
          "grep -qx ok out.txt",
          d, DY2STC, cc);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = sh("cd %s && %s compile blk.dymodel --emit c -o mob2 --threads 2 && "
          "%s -DDY_THREAD_MIN_WORK=1 -o drv driver.c mob2.c mob2_weights.c && "
          "./drv > out.txt && grep -qx ok out.txt && "
          "for i in 0 1 2 3; do cmp y$i.bin ref/y$i.bin || exit 1; done",
          d, DY2STC, cc);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL(rc, 0);
  /* pthread_create fails: tried (once per run, the first split) and the
   * slices run on the caller, the same bytes */
  rc = sh("cd %s && %s -DWRAP -DDY_THREAD_MIN_WORK=1 -Wl,--wrap=pthread_create -o drv_wrap "
          "driver.c mob2.c mob2_weights.c && ./drv_wrap > out_wrap.txt && "
          "grep -qx ok out_wrap.txt && ! grep -qx 'tries 0' out_wrap.txt && "
          "for i in 0 1 2 3; do cmp y$i.bin ref/y$i.bin || exit 1; done",
          d, cc);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL(rc, 0);
  /* under ThreadSanitizer (two callers, each with a pool of 2): no race
   * report (TSan exits non-zero on one) */
  rc = sh("cd %s && cc -std=c11 -O1 -g -march=native -pthread -fsanitize=thread -I. "
          "-DDY_THREAD_MIN_WORK=1 -o drv_tsan driver.c mob2.c mob2_weights.c && "
          "TSAN_OPTIONS=halt_on_error=1 ./drv_tsan > out_tsan.txt && grep -qx ok out_tsan.txt",
          d);
  show_log_on_failure(rc);
  CU_ASSERT_EQUAL(rc, 0);
}

void dy_test_register(void) {
  DY_SUITE("threads");
  DY_TEST(test_mlp);
  DY_TEST(test_lenet5);
  DY_TEST(test_cnn);
  DY_TEST(test_transformer);
  DY_TEST(test_mobile_block);
  DY_TEST(test_weight_stationary);
  DY_TEST(test_two_callers_and_no_threads);
}
