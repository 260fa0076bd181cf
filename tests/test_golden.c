/* test_golden.c - the emitted C of every sample, held against a golden copy.
 *
 * tinygrad's "process replay" idea: a change to a pass, an emitter or a
 * template shows up as a diff of the generated code, reviewed with the
 * change. Each sample (and the ONNX sample) is saved, compiled with
 * `--emit c`, and its NAME.c, NAME.h and NAME_weights.c are compared with
 * tests/golden/NAME.c.txt, NAME.h.txt and NAME_weights.c.txt. Weight
 * arrays are large and say nothing a reader checks by eye, so their
 * numbers are replaced by one line with their count and CRC-32 (any
 * change of a value still changes the golden); so are NAME_weights.c's
 * bytes, and its list of chunk members becomes one line with their
 * number. The cnn sample's weights are the exception: its
 * batch norms' running statistics come from eager train-mode batches,
 * whose convolutions run on OpenBLAS, whose kernels (and so roundings)
 * depend on the CPU; its weights fold to their count only. The command line quoted in the banner is
 * replaced as well, since the test's paths are its own, and so is NAME.h's
 * stack bound, measured with this machine's C compiler.
 *
 * After a deliberate change, rewrite the goldens and review the diff:
 *   DY_UPDATE_GOLDENS=1 build/tests/test_golden && git diff tests/golden
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define SAMPLES DY_BUILD_DIR "/../samples"
#define WORK DY_BUILD_DIR "/golden"
#define GOLDEN DY_SOURCE_DIR "/tests/golden"

typedef struct {
  char *s;
  size_t n, cap;
} text;

static bool text_put(text *t, const char *s, size_t n) {
  if (t->n + n + 1 > t->cap) {
    size_t cap = (t->cap ? t->cap * 2 : 4096) + n;
    char *p = realloc(t->s, cap);
    if (!p)
      return false;
    t->s = p;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = 0;
  return true;
}

/* A weight array opens with "static const <type> w_<name>[N] = {" (or
 * "const", for exported tables, never weights) and closes with "};". */
static bool opens_weights(const char *line, size_t n) {
  const char *brace = memchr(line, '{', n);
  return n > 15 && strncmp(line, "static const ", 13) == 0 && brace &&
         brace == line + n - 1 && memchr(line, '=', n) != NULL && strstr(line, " w_") &&
         (size_t)(strstr(line, " w_") - line) < n;
}

/* NAME_weights.c's definition opens with "const union NAME_weights_data
 * NAME_weights = {{" and closes with "}};"; its values are \xHH bytes. */
static bool opens_blob(const char *line, size_t n) {
  return n > 16 && strncmp(line, "const union ", 12) == 0 && line[n - 2] == '{' &&
         line[n - 1] == '{' && memchr(line, '=', n) != NULL;
}

/* The chunk members of NAME_weights_data ("    unsigned char cK[N];"),
 * as many as the weights are large, fold to one line. */
static bool is_chunk(const char *line, size_t n) {
  return n > 20 && strncmp(line, "    unsigned char c", 19) == 0;
}

/* The generated text with each weight array's numbers folded into one
 * line and the quoted command line elided. NULL on OOM. */
static char *normalise(const char *src, bool crc_weights) {
  text t = {0};
  const char *p = src;
  bool ok = true;
  while (*p && ok) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n >= 12 && strncmp(p, " * command: ", 12) == 0) {
      ok = text_put(&t, " * command: (elided by test_golden)\n", 36);
    } else if (n > 3 && (p[0] == '#' || p[0] == '/') && strstr(p, "_STACK_BYTES") &&
               (size_t)(strstr(p, "_STACK_BYTES") - p) < n) {
      /* measured with this machine's C compiler (or not, without gcc) */
      static const char stack[] = "NAME_STACK_BYTES (elided by test_golden)\n";
      ok = text_put(&t, stack, sizeof stack - 1);
    } else if (is_chunk(p, n)) {
      long chunks = 0;
      const char *q = p;
      while (*q && is_chunk(q, strcspn(q, "\n"))) {
        chunks++;
        q += strcspn(q, "\n");
        q += *q == '\n';
      }
      char line[96];
      int len = snprintf(line, sizeof line, "    /* %ld chunks */\n", chunks);
      ok = text_put(&t, line, (size_t)len);
      nl = q > p ? q - 1 : NULL;
    } else if (opens_weights(p, n) || opens_blob(p, n)) {
      bool blob = opens_blob(p, n);
      const char *close = blob ? "}};" : "};";
      ok = text_put(&t, p, n) && text_put(&t, "\n", 1);
      /* the body runs to a line that is exactly "};" ("}};") */
      const char *q = nl ? nl + 1 : p + n;
      uint32_t crc = 0;
      long values = 0;
      bool any = false;
      while (*q && strncmp(q, close, strlen(close)) != 0) {
        const char *e = strchr(q, '\n');
        size_t m = e ? (size_t)(e - q) : strlen(q);
        crc = dy_crc32(crc, q, m);
        for (size_t i = 0; i < m; i++) {
          values += blob ? q[i] == '\\' : q[i] == ',';
          any = any || (q[i] != ' ' && q[i] != ',');
        }
        q = e ? e + 1 : q + m;
      }
      if (!blob)
        values += any ? 1 : 0;
      char line[96];
      const char *what = blob ? "bytes" : "values";
      int len = crc_weights
                    ? snprintf(line, sizeof line, "  /* %ld %s, text crc32 %08x */\n",
                               values, what, (unsigned)crc)
                    : snprintf(line, sizeof line, "  /* %ld %s */\n", values, what);
      ok = text_put(&t, line, (size_t)len);
      const char *e = strchr(q, '\n');
      n = e ? (size_t)(e - p) : strlen(p);
      if (*q)
        ok = ok && text_put(&t, close, strlen(close)) && text_put(&t, "\n", 1);
      nl = e;
    } else {
      ok = text_put(&t, p, n) && text_put(&t, "\n", 1);
    }
    p = nl ? nl + 1 : p + n;
  }
  if (!ok) {
    free(t.s);
    return NULL;
  }
  return t.s ? t.s : calloc(1, 1);
}

static bool write_text(const char *path, const char *s) {
  dy_error err = {0};
  if (dy_write_file_atomic(path, s, strlen(s), &err)) {
    fprintf(stderr, "\n  %s\n", err.msg);
    return false;
  }
  return true;
}

/* Compare (or, with DY_UPDATE_GOLDENS set, rewrite) one generated file. */
static void check_file(const char *dir, const char *file, bool crc_weights) {
  char path[700], gpath[700], npath[760];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  snprintf(gpath, sizeof gpath, "%s/%s.txt", GOLDEN, file);
  snprintf(npath, sizeof npath, "%s/%s.norm.txt", dir, file);
  char *got = dy_test_slurp(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  char *norm = normalise(got, crc_weights);
  free(got);
  CU_ASSERT_PTR_NOT_NULL_FATAL(norm);
  CU_ASSERT_FATAL(write_text(npath, norm));
  if (getenv("DY_UPDATE_GOLDENS")) {
    CU_ASSERT(write_text(gpath, norm));
    fprintf(stderr, "\n  wrote %s\n", gpath);
    free(norm);
    return;
  }
  char *want = dy_test_slurp(gpath);
  if (!want)
    fprintf(stderr, "\n  no golden %s (DY_UPDATE_GOLDENS=1 writes it)\n", gpath);
  bool same = want && strcmp(want, norm) == 0;
  if (want && !same) {
    fprintf(stderr, "\n  %s differs from its golden; the first lines of the diff:\n", file);
    dy_test_sh(NULL, "diff -u '%s' '%s' | head -60 >&2", gpath, npath);
    fprintf(stderr, "  if the change is deliberate: DY_UPDATE_GOLDENS=1 %s/test_golden\n",
            DY_BUILD_DIR);
  }
  CU_ASSERT(same);
  free(want);
  free(norm);
}

/* Save sample s and emit it as s.c/s.h in WORK/s. */
static void emit_sample(const char *s, const char *model_cmd, const char *model) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/%s", WORK, s);
  int rc = dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  if (model_cmd) {
    rc = dy_test_sh(WORK "/sample.log", "cd '%s' && %s", dir, model_cmd);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
  }
  rc = dy_test_sh(WORK "/compile.log", "cd '%s' && %s compile %s --emit c --name %s -o %s",
                  dir, DY2STC, model, s, s);
  if (rc) {
    char *log = dy_test_slurp(WORK "/compile.log");
    fprintf(stderr, "\n  %s\n", log ? log : "");
    free(log);
  }
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char file[128];
  snprintf(file, sizeof file, "%s.c", s);
  bool crc_weights = strcmp(s, "cnn") != 0; /* see the top of this file */
  check_file(dir, file, crc_weights);
  snprintf(file, sizeof file, "%s.h", s);
  check_file(dir, file, crc_weights);
  snprintf(file, sizeof file, "%s_weights.c", s);
  check_file(dir, file, crc_weights);
}

static void test_samples_match_goldens(void) {
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "mkdir -p '%s'", WORK), 0);
  const char *samples[] = {"simple_net", "mlp", "lenet5", "cnn", "transformer"};
  for (int i = 0; i < 5; i++) {
    char cmd[700], model[160];
    snprintf(cmd, sizeof cmd, "%s/%s --out .", SAMPLES, samples[i]);
    snprintf(model, sizeof model, "%s.dymodel", samples[i]);
    emit_sample(samples[i], cmd, model);
  }
  emit_sample("onnx_cnn", "cp " DY_SOURCE_DIR "/samples/onnx/cnn.onnx .", "cnn.onnx");
}

/* The normaliser itself: weights fold to a count and a CRC that changes
 * with any value, and everything else passes through. */
static void test_normalise(void) {
  const char *a = "x\nstatic const float w_a[3] = {\n  1.0f, 2.0f,\n  3.0f\n};\ny\n";
  const char *b = "x\nstatic const float w_a[3] = {\n  1.0f, 2.5f,\n  3.0f\n};\ny\n";
  char *na = normalise(a, true), *nb = normalise(b, true);
  CU_ASSERT_PTR_NOT_NULL_FATAL(na);
  CU_ASSERT_PTR_NOT_NULL_FATAL(nb);
  CU_ASSERT_PTR_NOT_NULL(strstr(na, "/* 3 values, text crc32 "));
  CU_ASSERT_PTR_NULL(strstr(na, "2.0f"));
  CU_ASSERT(strncmp(na, "x\nstatic const float w_a[3] = {\n", 32) == 0);
  CU_ASSERT(strcmp(na + strlen(na) - 5, "};\ny\n") == 0);
  CU_ASSERT(strcmp(na, nb) != 0);
  free(na);
  free(nb);
  /* NAME_weights.c: the chunk list to its number, the bytes to a count */
  const char *w = "union m_weights_data {\n  struct {\n    unsigned char c0[4032];\n"
                  "    unsigned char c1[8];\n  } bytes;\n"
                  "const union m_weights_data m_weights = {{\n  \"\\x01\\x02\"\n  \"\\x03\"\n}};\n";
  char *nw = normalise(w, true);
  CU_ASSERT_PTR_NOT_NULL_FATAL(nw);
  CU_ASSERT_PTR_NOT_NULL(strstr(nw, "  struct {\n    /* 2 chunks */\n  } bytes;\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(nw, "= {{\n  /* 3 bytes, text crc32 "));
  CU_ASSERT(strcmp(nw + strlen(nw) - 8, " */\n}};\n") == 0);
  free(nw);
  char *c = normalise("static int f(void) {\n  return 1;\n}\n", true);
  CU_ASSERT_STRING_EQUAL(c, "static int f(void) {\n  return 1;\n}\n");
  free(c);
}

void dy_test_register(void) {
  DY_SUITE("golden");
  DY_TEST(test_normalise);
  DY_TEST(test_samples_match_goldens);
}
