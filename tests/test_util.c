/* test_util.c - what the suites that run commands share (dy_test.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

bool dy_test_have_data(const char *path, const char *missing) {
  struct stat st;
  if (stat(path, &st) == 0)
    return true;
  fprintf(stderr, "\n  SKIPPED: %s ... ", missing);
  return false;
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

/* ------------------------------------------------------------------ */
/* comparing trained parameters (the trainers' tests)                  */
/* ------------------------------------------------------------------ */

/* max |a - b| over every parameter of the two nets (same structure) */
double dy_test_max_param_diff(const dy_layer *a, const dy_layer *b) {
  double md = 0;
  for (int i = 0; i < a->n_params; i++)
    for (int64_t k = 0; k < dy_tensor_numel(a->params[i]); k++)
      md = fmax(md, fabs((double)dy_tensor_f32(a->params[i])[k] -
                         dy_tensor_f32(b->params[i])[k]));
  for (int i = 0; i < a->n_children; i++)
    md = fmax(md, dy_test_max_param_diff(a->children[i], b->children[i]));
  return md;
}

/* The saved name of net's parameter i: its layer's name and its own
 * ("linear_1.weight"; the layers here sit right under the root). */
static const char *full_name(const dy_layer *net, int i, char *buf, size_t cap) {
  snprintf(buf, cap, "%s.%s", net->name, net->params[i]->name);
  return buf;
}

/* max |param - DIR/<name>.npy| over net's parameters */
double dy_test_max_state_diff(const dy_layer *net, const char *dir) {
  double md = 0;
  for (int i = 0; i < net->n_params; i++) {
    char path[700];
    char name[200];
    snprintf(path, sizeof path, "%s/%s.npy", dir, full_name(net, i, name, sizeof name));
    dy_tensor *t = NULL;
    dy_error err = {0};
    DY_ASSERT_OK(dy_npy_read(path, &t, &err), &err);
    if (!t)
      return INFINITY;
    for (int64_t k = 0; k < dy_tensor_numel(t); k++)
      md = fmax(md, fabs((double)dy_tensor_f32(t)[k] - dy_tensor_f32(net->params[i])[k]));
    dy_tensor_free(t);
  }
  for (int i = 0; i < net->n_children; i++)
    md = fmax(md, dy_test_max_state_diff(net->children[i], dir));
  return md;
}

/* max |param - the var of its name in p| over net's parameters */
double dy_test_max_program_diff(const dy_layer *net, const dy_program *p) {
  double md = 0;
  for (int i = 0; i < net->n_params; i++) {
    char name[200];
    int v = dy_program_find_var(p, full_name(net, i, name, sizeof name));
    CU_ASSERT_FATAL(v >= 0);
    const float *d = p->vars[v]->data;
    for (int64_t k = 0; k < dy_tensor_numel(net->params[i]); k++)
      md = fmax(md, fabs((double)d[k] - dy_tensor_f32(net->params[i])[k]));
  }
  for (int i = 0; i < net->n_children; i++)
    md = fmax(md, dy_test_max_program_diff(net->children[i], p));
  return md;
}


void dy_test_train(dy_layer *net, bool static_, const dy_optimizer_spec *opt, const dy_tensor *x,
                   const dy_tensor *y, int64_t batch, int epochs, uint64_t shuffle,
                   void (*on_batch)(void *ctx, dy_tensor *xb), void *ctx) {
  dy_loss_spec loss = {.kind = DY_LOSS_MSE};
  dy_static_trainer *st = static_ ? dy_to_static_train(net, &loss, opt) : NULL;
  dy_optimizer *eo = static_ ? NULL : dy_optimizer_new(opt, net);
  int64_t n = x->type.shape[0], *order = malloc(sizeof *order * (size_t)n);
  CU_ASSERT_FATAL((st || eo) && order);
  dy_error err = {0};
  dy_seed(shuffle);
  for (int e = 0; e < epochs; e++) {
    dy_train_shuffle(order, n);
    for (int64_t b = 0; b < n; b += batch) {
      dy_scope_begin();
      dy_tensor *xb = dy_train_batch(x, order, b, batch);
      dy_tensor *yb = dy_train_batch(y, order, b, batch);
      if (on_batch)
        on_batch(ctx, xb);
      if (static_) {
        DY_ASSERT_OK(dy_static_train_step(st, &xb, 1, yb, opt->lr, NULL, &err), &err);
      } else {
        dy_tensor *lt = dy_loss(dy_call1(net, xb), yb, &loss);
        CU_ASSERT_PTR_NOT_NULL_FATAL(lt);
        DY_ASSERT_OK(dy_backward(lt, &err), &err);
        DY_ASSERT_OK(dy_optimizer_step(eo, &err), &err);
        dy_clear_grad(net);
      }
      dy_scope_end();
    }
  }
  free(order);
  dy_static_trainer_free(st);
  dy_optimizer_free(eo);
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
