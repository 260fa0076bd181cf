/* test_util.c - what the suites that run commands share (dy_test.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "dy_compiler.h"
#include "dy_test.h"

int dy_test_sh(const char *log, const char *fmt, ...) {
  char cmd[16384], full[16640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (log)
    snprintf(full, sizeof full, "(%s) >%s 2>&1", cmd, log);
  int rc = system(log ? full : cmd);
  return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

char *dy_test_slurp(const char *path) {
  uint8_t *buf;
  size_t len;
  dy_error err = {0};
  if (dy_read_file(path, &buf, &len, &err))
    return NULL;
  char *s = realloc(buf, len + 1);
  if (!s) {
    free(buf);
    return NULL;
  }
  s[len] = 0;
  return s;
}

bool dy_test_have(const char *tool) {
  return dy_test_sh(NULL, "command -v %s > /dev/null 2>&1", tool) == 0;
}

bool dy_test_have_aarch64(void) {
  if (dy_test_have("aarch64-linux-gnu-gcc") && dy_test_have("qemu-aarch64"))
    return true;
  fprintf(stderr, "\n  SKIPPED: needs aarch64-linux-gnu-gcc and qemu-aarch64 "
                  "(scripts/setup.sh installs gcc-aarch64-linux-gnu, qemu-user)\n");
  return false;
}

const char dy_test_driver_io[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n"
    "static void *load(const char *p, size_t n) {\n"
    "  void *b = malloc(n ? n : 1); FILE *f = fopen(p, \"rb\");\n"
    "  if (!f || fread(b, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", p); exit(1); }\n"
    "  fclose(f); return b;\n}\n"
    "static void save(const char *p, const void *b, size_t n) {\n"
    "  FILE *f = fopen(p, \"wb\"); if (!f || fwrite(b, 1, n, f) != n) exit(1); fclose(f);\n}\n";

bool dy_test_write_samples(const char *dir, const float *x, int64_t n, int64_t row,
                           const int64_t *y) {
  dy_error err = {0};
  char path[1024];
  dy_tensor *tx = dy_tensor_from_data(DY_F32, 2, (int64_t[]){n, row}, x);
  dy_tensor *ty = dy_tensor_from_data(DY_I64, 1, (int64_t[]){n}, y);
  snprintf(path, sizeof path, "%s/x.npy", dir);
  bool ok = tx && ty && dy_npy_write(path, tx, &err) == DY_OK;
  snprintf(path, sizeof path, "%s/y.npy", dir);
  ok = ok && dy_npy_write(path, ty, &err) == DY_OK;
  dy_tensor_free(tx);
  dy_tensor_free(ty);
  return ok;
}

dy_program *dy_test_parse_ok(const char *text) {
  dy_program *p = NULL;
  dy_error err = {0};
  if (dy_program_parse(text, &p, &err) || dy_verify(p, &err)) {
    fprintf(stderr, "\n  program rejected: %s\n", err.msg);
    dy_program_free(p);
    return NULL;
  }
  return p;
}

bool dy_test_save_blk(const char *dir, const char *text) {
  dy_program *p = dy_test_parse_ok(text);
  dy_error err = {0};
  char path[1024];
  snprintf(path, sizeof path, "%s/blk", dir);
  bool ok = p && dy_model_save(p, path, &err) == DY_OK;
  if (p && !ok)
    fprintf(stderr, "\n  %s: %s\n", path, err.msg);
  dy_program_free(p);
  return ok;
}

bool dy_test_write_pattern(const char *path, const int64_t shape[4], int mul) {
  dy_error err = {0};
  dy_tensor *x = dy_tensor_new(DY_F32, 4, shape);
  if (!x)
    return false;
  for (int64_t i = 0; i < dy_tensor_numel(x); i++)
    dy_tensor_f32(x)[i] = (float)((i * mul) % 101) / 50.0f - 1.0f;
  bool ok = dy_npy_write(path, x, &err) == DY_OK;
  if (!ok)
    fprintf(stderr, "\n  %s: %s\n", path, err.msg);
  dy_tensor_free(x);
  return ok;
}

int dy_test_count_kind(const dy_program *p, dy_op_kind k) {
  int n = 0;
  for (int i = 0; i < p->blocks[0]->n_ops; i++)
    n += p->blocks[0]->ops[i]->kind == k;
  return n;
}

void dy_test_onnx_run(const char *path, dy_tensor **in, int n_in, dy_tensor **out,
                      dy_program **keep) {
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_onnx_load(path, &p, &err), &err);
  dy_tensor *outs[4] = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, n_in, outs, p->n_fetches, &err), &err);
  *out = outs[0];
  for (int i = 1; i < p->n_fetches; i++)
    dy_tensor_free(outs[i]);
  if (keep)
    *keep = p;
  else
    dy_program_free(p);
}

void dy_test_onnx_error(const char *path, dy_status status, const char *frag1,
                        const char *frag2) {
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_onnx_load(path, &p, &err);
  if (s != status || (frag1 && !strstr(err.msg, frag1)) || (frag2 && !strstr(err.msg, frag2)))
    fprintf(stderr, "\n  %s: status %s, message: %s\n", path, dy_status_name(s), err.msg);
  CU_ASSERT_EQUAL(s, status);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  if (frag1)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag1));
  if (frag2)
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag2));
  dy_program_free(p);
}

void dy_test_expect_cli(const char *log, int want, const char *frag, const char *cmd) {
  int rc = dy_test_sh(log, "%s", cmd);
  char *text = dy_test_slurp(log);
  if (rc != want || !text || !strstr(text, frag))
    fprintf(stderr, "\n  %s\n  exit %d (want %d): %s\n", cmd, rc, want, text ? text : "");
  CU_ASSERT_EQUAL(rc, want);
  CU_ASSERT(text && strstr(text, frag));
  /* a failure is one line (the only newline is the last byte); a usage
   * error's line comes first (an executable adds its usage line) */
  if (want == 1)
    CU_ASSERT(text && strchr(text, '\n') == text + strlen(text) - 1);
  CU_ASSERT(text && strstr(text, frag) < strchr(text, '\n'));
  free(text);
}

void dy_test_write_f32(const char *path, int rank, const int64_t *shape, const float *v) {
  dy_tensor *t = dy_tensor_from_data(DY_F32, rank, shape, v);
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(path, t, &err), &err);
  dy_tensor_free(t);
}

double dy_test_scaled_err(const dy_tensor *got, const dy_tensor *ref) {
  int64_t n = dy_tensor_numel(ref);
  double m = 0, d = 0;
  for (int64_t i = 0; i < n; i++) {
    double r = dy_tensor_f32(ref)[i], g = dy_tensor_f32(got)[i];
    if (fabs(r) > m)
      m = fabs(r);
    if (!(fabs(g - r) <= d))
      d = isnan(g - r) ? INFINITY : fabs(g - r);
  }
  return m > 0 ? d / m : d;
}
