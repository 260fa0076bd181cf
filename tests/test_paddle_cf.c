/* test_paddle_cf.c - Paddle control flow (compiler/frontends/paddle/
 * paddle_control.c) on the models of ../shared/testdata-paddle-next
 * (DY_PADDLE_NEXT_DATA; README.md there):
 *
 *   - slanet_en_mobile (synthetic params, references b1 [1,3,64,64] and
 *     b2 [2,3,64,96]): a while of 501 trips whose body writes the fetches
 *     with set_value and feeds arg_max back through one_hot_v2. Imported
 *     with the case's input shape (shape ops fold to constants), the
 *     Program holds one while (its cond block only reads the condition
 *     the body yields); the static executor, `dy2stc run --shape` and the
 *     executable of `dy2stc compile --shape` each match the references
 *     within 3x refs.json's f32_drift (the same interpreter in float32:
 *     what 501 float32 steps may drift);
 *   - without --shape: the one-line error naming the op that needs it;
 *   - slanet_v2_openatom (program only; while + conditional_block +
 *     select_input: it stops once every row has emitted token 29): up to
 *     the loop's buffers (fetch_names) it imports and verifies with
 *     stand-in params, and runs: zeros give token 0 every trip, so 501
 *     trips fill every row of the loc buffer with sigmoid(0); a bias
 *     making token 29 win stops it after the first trip (row 0 only).
 *     The whole program stops at its last slice, whose end is the trip
 *     count (a size known only at run time): `dy2stc show --shape` says
 *     so in one line; tablemaster stops at its decoder's growing sequence;
 *   - slanet_en_mobile's ProgramDesc truncated and bit-flipped: a status
 *     or a Program, never a crash.
 * Without the data folder the model cases say so loudly and return.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#ifndef DY_PADDLE_NEXT_DATA
#define DY_PADDLE_NEXT_DATA DY_SOURCE_DIR "/../shared/testdata-paddle-next"
#endif
#define SLANET DY_PADDLE_NEXT_DATA "/slanet_en_mobile"
#define SLANET_V2 DY_PADDLE_NEXT_DATA "/slanet_v2_openatom"
#define TABLEMASTER DY_PADDLE_NEXT_DATA "/tablemaster"

static bool have_data(void) {
  return dy_test_have_data(SLANET "/model.pdiparams", "no " DY_PADDLE_NEXT_DATA " (slanet_en_mobile): "
                           "the Paddle control-flow model tests need it beside the clone");
}

/* A case: its input's dims and, per fetch, refs.json's f32_drift.max_abs. */
typedef struct {
  const char *name;
  int64_t shape[4];
  double drift[2];
} slanet_case;

static const char *const fetches[2] = {"fill_constant_15.tmp_0", "softmax_1.tmp_0"};
static const slanet_case cases[2] = {
    {"b1", {1, 3, 64, 64}, {1.7881393432617188e-07, 1.519918441772461e-06}},
    {"b2", {2, 3, 64, 96}, {7.331371307373047e-06, 7.76052474975586e-05}},
};

static double max_abs_err(const dy_tensor *got, const dy_tensor *ref) {
  if (!got || !ref || !dy_type_equal(&got->type, &ref->type))
    return INFINITY;
  double e = 0;
  const float *g = got->data, *r = ref->data;
  for (int64_t i = 0; i < dy_type_numel(&ref->type); i++) {
    double d = fabs((double)g[i] - (double)r[i]);
    if (!(d <= e)) /* NaN too */
      e = isnan(d) ? INFINITY : d;
  }
  return e;
}

/* Ops of kind k in every block. */
static int count_all(const dy_program *p, dy_op_kind k) {
  int n = 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++)
      n += p->blocks[b]->ops[i]->kind == k;
  return n;
}

static dy_program *load(const slanet_case *k) {
  const char *names[1] = {"x"};
  dy_type t = {.dtype = DY_F32, .rank = 4};
  memcpy(t.shape, k->shape, sizeof k->shape);
  dy_paddle_options o = {.n_feed_types = 1, .feed_names = names, .feed_types = &t};
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load(SLANET "/model.pdmodel", NULL, &o, &p, &err), &err);
  return p;
}

/* The Program's shape: one while of the body's carried values; its cond
 * block yields one of its params (recomputes nothing). */
static void check_structure(const dy_program *p) {
  CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_WHILE), 1);
  CU_ASSERT_EQUAL(count_all(p, DY_OP_WHILE), 1);
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++) {
      const dy_op *o = p->blocks[b]->ops[i];
      if (o->kind != DY_OP_WHILE)
        continue;
      dy_while_attrs wa = dy_while_attrs_get(o);
      CU_ASSERT_EQUAL(wa.max_iterations, 0); /* the runner's bound */
      const dy_block *cb = p->blocks[wa.cond_block];
      CU_ASSERT_EQUAL(cb->n_ops, 0);
      CU_ASSERT_EQUAL_FATAL(cb->n_results, 1);
      bool is_param = false;
      for (int k = 0; k < cb->n_params; k++)
        is_param |= cb->params[k] == cb->results[0];
      CU_ASSERT_TRUE(is_param);
      CU_ASSERT(wa.n_carried >= 4); /* counter, token, hidden, the two buffers */
    }
}

static void test_slanet_executor(void) {
  if (!have_data())
    return;
  for (int c = 0; c < 2; c++) {
    const slanet_case *k = &cases[c];
    dy_program *p = load(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    check_structure(p);
    CU_ASSERT_EQUAL_FATAL(p->n_fetches, 2);
    char path[4096];
    dy_error err = {0};
    dy_tensor *x = NULL, *out[2] = {0};
    snprintf(path, sizeof path, SLANET "/in_x_%s.npy", k->name);
    DY_ASSERT_OK(dy_npy_read(path, &x, &err), &err);
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, out, 2, &err), &err);
    for (int f = 0; f < 2; f++) {
      CU_ASSERT_STRING_EQUAL(p->vars[p->fetches[f]]->name, fetches[f]);
      dy_tensor *ref = NULL;
      snprintf(path, sizeof path, SLANET "/out_%s_%s.npy", fetches[f], k->name);
      DY_ASSERT_OK(dy_npy_read(path, &ref, &err), &err);
      double e = max_abs_err(out[f], ref);
      fprintf(stderr, "\n    slanet_en_mobile %s %s executor max abs err %.3g (3x drift %.3g)",
              k->name, fetches[f], e, 3 * k->drift[f]);
      CU_ASSERT(e <= 3 * k->drift[f]);
      dy_tensor_free(ref);
      dy_tensor_free(out[f]);
    }
    dy_tensor_free(x);
    dy_program_free(p);
  }
}

/* `dy2stc run --shape` and the executable of `dy2stc compile --shape`. */
static void test_slanet_cli(void) {
  if (!have_data())
    return;
  for (int c = 0; c < 2; c++) {
    const slanet_case *k = &cases[c];
    char out[4096], exe[4096], shape[64], cmp[2][256];
    snprintf(out, sizeof out, "%s/slanet_cf_out", DY_BUILD_DIR);
    snprintf(exe, sizeof exe, "%s/slanet_cf_%s", DY_BUILD_DIR, k->name);
    snprintf(shape, sizeof shape, "x=%lld,%lld,%lld,%lld", (long long)k->shape[0],
             (long long)k->shape[1], (long long)k->shape[2], (long long)k->shape[3]);
    for (int f = 0; f < 2; f++)
      snprintf(cmp[f], sizeof cmp[f], "--rtol 0 --atol %.3g >/dev/null", 3 * k->drift[f]);
    for (int way = 0; way < 2; way++) {
      int rc;
      if (way == 0)
        rc = dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && '%s' run '%s/model.pdmodel' "
                        "--shape %s --input x='%s/in_x_%s.npy' --output-dir '%s' >/dev/null",
                        out, out, DY2STC_PATH, SLANET, shape, SLANET, k->name, out);
      else
        rc = dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s' && '%s' compile '%s/model.pdmodel' "
                        "--shape %s -o '%s' >/dev/null && '%s' --input x='%s/in_x_%s.npy' "
                        "--output-dir '%s' >/dev/null", out, out, DY2STC_PATH, SLANET, shape,
                        exe, exe, SLANET, k->name, out);
      CU_ASSERT_EQUAL(rc, 0);
      for (int f = 0; f < 2; f++) {
        int r = dy_test_sh(NULL, "'%s' compare '%s/%s.npy' '%s/out_%s_%s.npy' %s", DY2STC_PATH,
                           out, fetches[f], SLANET, fetches[f], k->name, cmp[f]);
        if (r)
          fprintf(stderr, "\n    %s %s %s: over 3x the f32 drift", k->name,
                  way ? "compiled" : "run", fetches[f]);
        CU_ASSERT_EQUAL(r, 0);
      }
    }
  }
}

/* Without --shape the spatial dims stay dynamic: one line naming the op
 * that needs them static, exit 1. */
static void test_slanet_needs_shape(void) {
  if (!have_data())
    return;
  char log[4096], cmd[8192];
  snprintf(log, sizeof log, "%s/slanet_cf_log.txt", DY_BUILD_DIR);
  snprintf(cmd, sizeof cmd, "'%s' run '%s/model.pdmodel' --input x='%s/in_x_b1.npy' "
           "--output-dir '%s'", DY2STC_PATH, SLANET, SLANET, DY_BUILD_DIR);
  dy_test_expect_cli(log, 1, "is dynamic", cmd);
}

/* slanet_v2 up to its loop's buffers, params stand-ins: zeros, and
 * linear_4.b_0[29] = bias29 (the classifier's bias of token 29). */
static dy_program *load_v2(float bias29) {
  const char *names[1] = {"x"}, *fetch[2] = {"fill_constant_15.tmp_0", "fill_constant_9.tmp_0"};
  dy_type t = {.dtype = DY_F32, .rank = 4, .shape = {1, 3, 64, 64}};
  dy_paddle_options o = {.n_feed_types = 1, .feed_names = names, .feed_types = &t,
                         .n_fetches = 2, .fetch_names = fetch, .params_optional = true};
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load(SLANET_V2 "/model.pdmodel", NULL, &o, &p, &err), &err);
  for (int i = 0; p && i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    if (!v->persistable || v->data)
      continue;
    size_t n = (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype);
    float *z = calloc(n ? n : 1, 1);
    if (strcmp(v->name, "linear_4.b_0") == 0 && dy_type_numel(&v->type) == 30)
      z[29] = bias29;
    DY_ASSERT_OK(dy_program_set_data(p, i, z, n, &err), &err);
    free(z);
  }
  if (p)
    DY_ASSERT_OK(dy_verify(p, &err), &err);
  return p;
}

/* Rows of the loc buffer [1, 501, 4] equal to 0.5 (sigmoid(0)) from the
 * start, the rest 0: the trips the loop ran; -1 for another pattern. */
static int loc_rows(const dy_tensor *t) {
  const float *v = t->data;
  int rows = 0;
  for (int r = 0; r < 501; r++) {
    bool half = true, zero = true;
    for (int k = 0; k < 4; k++)
      half &= v[r * 4 + k] == 0.5f, zero &= v[r * 4 + k] == 0.0f;
    if (half && rows == r)
      rows++;
    else if (!zero)
      return -1;
  }
  return rows;
}

static void test_slanet_v2(void) {
  struct stat st;
  if (stat(SLANET_V2 "/model.pdmodel", &st) != 0) {
    fprintf(stderr, "\n  SKIPPED: no %s ... ", SLANET_V2);
    return;
  }
  for (int stop = 0; stop < 2; stop++) {
    dy_program *p = load_v2(stop ? 1.0f : 0.0f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_WHILE), 1);
    CU_ASSERT_EQUAL(dy_test_count_kind(p, DY_OP_COND), 0);
    CU_ASSERT_EQUAL(count_all(p, DY_OP_COND), 1); /* in the body */
    dy_tensor *x = dy_tensor_new(DY_F32, 4, (int64_t[]){1, 3, 64, 64}), *out[2] = {0};
    memset(x->data, 0, x->nbytes);
    dy_error err = {0};
    DY_ASSERT_OK(dy_executor_run(p, &x, 1, out, 2, &err), &err);
    int rows = out[0] ? loc_rows(out[0]) : -2;
    fprintf(stderr, "\n    slanet_v2 %s: %d trips", stop ? "token 29 first" : "zeros", rows);
    CU_ASSERT_EQUAL(rows, stop ? 1 : 501);
    if (stop && out[1]) /* the logits of trip 0: token 29's bias */
      CU_ASSERT(((const float *)out[1]->data)[29] == 1.0f);
    for (int i = 0; i < 2; i++)
      dy_tensor_free(out[i]);
    dy_tensor_free(x);
    dy_program_free(p);
  }
  /* the whole program: one line naming the slice by the trip count */
  char log[4096], cmd[8192];
  snprintf(log, sizeof log, "%s/slanet_v2_log.txt", DY_BUILD_DIR);
  snprintf(cmd, sizeof cmd, "'%s' show '%s/model.pdmodel' --shape x=1,3,64,64", DY2STC_PATH,
           SLANET_V2);
  dy_test_expect_cli(log, 1, "op 392 (slice -> fill_constant_9.tmp_0_slice_0): "
                     "EndsTensorList is a value known only at run time ('tmp_43')", cmd);
  snprintf(cmd, sizeof cmd, "'%s' show '%s/model.pdmodel' --shape x=1,3,480,480", DY2STC_PATH,
           TABLEMASTER);
  dy_test_expect_cli(log, 1, "select_input of inputs of different types", cmd);
}

/* slanet_en_mobile's ProgramDesc truncated and with bytes flipped (the
 * while's sub-block index, its Out names, ... among them): a status with
 * one line, or a Program, never a crash (ASan in `make test`). */
static void test_slanet_corruption(void) {
  if (!have_data())
    return;
  uint8_t *m;
  size_t n;
  dy_error err = {0};
  DY_ASSERT_OK(dy_read_file(SLANET "/model.pdmodel", &m, &n, &err), &err);
  const char *names[1] = {"x"};
  dy_type t = {.dtype = DY_F32, .rank = 4, .shape = {1, 3, 64, 64}};
  dy_paddle_options o = {.n_feed_types = 1, .feed_names = names, .feed_types = &t,
                         .params_optional = true};
  int errors = 0, loads = 0;
  uint8_t *b = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  for (int k = 0; k < 240; k++) {
    memcpy(b, m, n);
    size_t at = (size_t)k * 2654435761u % n, len = n;
    if (k % 3 == 0)
      len = at; /* truncated */
    else
      b[at] ^= (uint8_t)(1u << (k % 8));
    dy_program *p = NULL;
    dy_error e = {0};
    if (dy_paddle_load_mem(b, len, NULL, 0, "slanet", &o, &p, &e)) {
      errors++;
      CU_ASSERT(e.msg[0] && strchr(e.msg, '\n') == NULL);
    } else {
      loads++;
    }
    dy_program_free(p);
  }
  fprintf(stderr, "\n    corruption: %d errors, %d loads", errors, loads);
  CU_ASSERT(errors > 0);
  free(b);
  free(m);
}

void dy_test_register(void) {
  DY_SUITE("paddle_cf");
  DY_TEST(test_slanet_executor);
  DY_TEST(test_slanet_cli);
  DY_TEST(test_slanet_needs_shape);
  DY_TEST(test_slanet_v2);
  DY_TEST(test_slanet_corruption);
}
