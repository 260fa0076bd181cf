/* test_ops.c - runs every op case of op_table.h three ways.
 *
 * For each case: random (or given) inputs; the eager result from dy_apply
 * (checked against hand-computed values where the case has them); a
 * one-op Program (feeds typed with the declared -1 dims, constants as
 * persistable vars) that must verify, run on the static executor and
 * agree with eager; and the same Program memory-planned and emitted as C
 * (symbol prefix c<i>). After all cases of a family, the emitted files
 * are compiled with `$CC -std=c99 -Wall -Wextra -Werror -pedantic` and
 * linked with a generated driver that reads each case's inputs from .bin
 * files and writes its output; each output must agree with eager.
 *
 * In-place ops (DY_OPF_INPLACE: the training family's updates) write
 * their first n_out inputs. Eager runs on copies of the inputs; the
 * one-op Program holds those inputs as persistable vars (the state) with
 * the original data, the op writing them, and fetches the first; after
 * the executor's run every updated state var of the Program must agree
 * with the eagerly updated tensor. Compiled, the state lives in the
 * caller's RAM (NAME_STATE_BYTES, NAME_state_init, NAME_run_v taking the
 * state first): the driver runs the step once and writes the fetch and
 * every state tensor, each of which must agree with eager.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dy_test.h"
#include "op_table.h"

#define SCRATCH DY_BUILD_DIR "/ops_scratch"

#define sh(...) dy_test_sh(NULL, __VA_ARGS__)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static dy_tensor *make_input(const dy_op_case *c, int i, int64_t batch) {
  return dy_case_input(c, i, batch, &rng);
}

static double value_at(const dy_tensor *t, int64_t k) {
  switch (t->type.dtype) {
  case DY_F32: return ((const float *)t->data)[k];
  case DY_I64: return (double)((const int64_t *)t->data)[k];
  case DY_I8: return ((const int8_t *)t->data)[k];
  case DY_I32: return ((const int32_t *)t->data)[k];
  default: return ((const uint8_t *)t->data)[k];
  }
}

/* Compare got with ref; prints the first few mismatches. */
static bool agree(const char *what, const dy_op_case *c, const dy_tensor *got,
                  const dy_tensor *ref) {
  char a[128], b[128];
  if (!dy_type_equal(&got->type, &ref->type)) {
    fprintf(stderr, "\n  [%s] %s: type %s, eager %s\n", c->label, what,
            dy_type_str(&got->type, a, sizeof a), dy_type_str(&ref->type, b, sizeof b));
    return false;
  }
  double tol = c->tol > 0 ? c->tol : 1e-5;
  int bad = 0;
  for (int64_t k = 0; k < dy_tensor_numel(ref); k++) {
    double x = value_at(got, k), y = value_at(ref, k);
    bool ok = (isnan(x) && isnan(y)) || fabs(x - y) <= tol * (1 + fabs(y)) ||
              (isinf(x) && x == y);
    if (!ok && bad++ < 3)
      fprintf(stderr, "\n  [%s] %s: element %lld is %.9g, eager %.9g", c->label, what,
              (long long)k, x, y);
  }
  if (bad)
    fprintf(stderr, "\n  [%s] %s: %d elements differ (tol %g)\n", c->label, what, bad, tol);
  return bad == 0;
}

static bool in_place(const dy_op_case *c) {
  return (dy_op_info_of(c->kind)->flags & DY_OPF_INPLACE) != 0;
}

/* Input i of case c is a persistable var of its Program: a constant, or
 * state an in-place op updates. */
static bool is_const(const dy_op_case *c, int i) {
  return (c->consts >> i & 1) || (in_place(c) && i < dy_op_info_of(c->kind)->n_out);
}

/* One-op Program for case c (an in-place op writes its state inputs and
 * the first is fetched). */
static dy_program *case_program(const dy_op_case *c, dy_tensor **in, dy_error *err) {
  dy_program *p = dy_program_new();
  int ids[DY_CASE_MAX_IN];
  for (int i = 0; i < c->n_in; i++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    ids[i] = dy_program_add_var(p, name, &c->in[i]);
    if (is_const(c, i))
      dy_program_set_data(p, ids[i], in[i]->data, in[i]->nbytes, err);
    else
      dy_program_add_feed(p, ids[i], err);
  }
  dy_op probe = {.id = 0, .kind = c->kind, .attrs = (dy_attr *)c->attrs,
                 .n_attrs = c->n_attrs, .loc = {c->label, 1}};
  dy_type out_t[8];
  if (dy_infer(&probe, c->in, c->n_in, out_t, err)) {
    dy_program_free(p);
    return NULL;
  }
  if (in_place(c)) {
    dy_program_append_op(p, 0, c->kind, ids, c->n_in, ids, dy_op_info_of(c->kind)->n_out,
                         c->attrs, c->n_attrs, (dy_srcloc){"op_cases.c", 1});
    dy_program_add_fetch(p, ids[0], err);
    return p;
  }
  int o = dy_program_add_var(p, "out", &out_t[0]);
  dy_program_append_op(p, 0, c->kind, ids, c->n_in, &o, 1, c->attrs, c->n_attrs,
                       (dy_srcloc){"op_cases.c", 1});
  dy_program_add_fetch(p, o, err);
  return p;
}

/* After the executor ran case c's in-place Program p: each state var's
 * data agrees with the eagerly updated tensor state[i]. */
static bool state_agrees(const dy_op_case *c, const dy_program *p, dy_tensor *const *state) {
  bool ok = true;
  for (int i = 0; i < dy_op_info_of(c->kind)->n_out; i++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    const dy_var *sv = p->vars[dy_program_find_var(p, name)];
    dy_tensor got = *state[i];
    got.data = sv->data;
    char what[32];
    snprintf(what, sizeof what, "executor state %d", i);
    ok &= agree(what, c, &got, state[i]);
  }
  return ok;
}

static bool write_bin(const char *path, const dy_tensor *t) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return false;
  bool ok = fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
  return fclose(f) == 0 && ok;
}

typedef struct {
  int idx;                 /* case index, symbol prefix c<idx> */
  int64_t batch;
  int n_feeds;
  dy_tensor *ref;          /* eager output */
  const dy_op_case *c;
  int n_state;             /* an in-place op's updated inputs ... */
  dy_tensor *state[8];     /* ... as eager left them */
} compiled_case;

static void run_family(const char *family, const dy_op_case_list *list) {
  if (list->n == 0) {
    fprintf(stderr, "\n  family %s has no cases\n", family);
    CU_FAIL("empty family");
    return;
  }
  char dir[512];
  snprintf(dir, sizeof dir, SCRATCH "/%s", family);
  sh("rm -rf %s && mkdir -p %s", dir, dir);
  compiled_case *cc = calloc((size_t)list->n, sizeof *cc);
  int n_cc = 0;
  dy_buf drv = {0}; /* the driver main()'s body, one block per case */
  for (int i = 0; i < list->n; i++) {
    const dy_op_case *c = &list->cases[i];
    int64_t batch = c->batch ? c->batch : 2;
    dy_tensor *in[DY_CASE_MAX_IN] = {0};
    dy_scope_begin();
    for (int k = 0; k < c->n_in; k++)
      in[k] = make_input(c, k, batch);
    /* an in-place op updates its inputs: eager runs on copies, so that
     * the Program starts from the same state */
    dy_tensor *state[DY_CASE_MAX_IN] = {0};
    for (int k = 0; k < c->n_in; k++)
      state[k] = in_place(c) && in[k]
                     ? dy_tensor_from_data(in[k]->type.dtype, in[k]->type.rank,
                                           in[k]->type.shape, in[k]->data)
                     : in[k];
    dy_clear_error();
    dy_tensor *ref = dy_apply(c->kind, state, c->n_in, c->attrs, c->n_attrs,
                              (dy_srcloc){c->label, 0});
    if (c->expect_error) {
      const dy_error *e = dy_last_error();
      bool ok = !ref && e && e->status == c->expect_error;
      if (!ok)
        fprintf(stderr, "\n  [%s] expected status %s, got %s%s%s\n", c->label,
                dy_status_name(c->expect_error), ref ? "success" : dy_status_name(e->status),
                e ? ": " : "", e ? e->msg : "");
      CU_ASSERT(ok);
      dy_clear_error();
      dy_scope_end();
      continue;
    }
    if (!ref) {
      fprintf(stderr, "\n  [%s] eager failed: %s\n", c->label,
              dy_last_error() ? dy_last_error()->msg : "?");
      CU_FAIL("eager failed");
      dy_clear_error();
      dy_scope_end();
      continue;
    }
    /* hand-computed values */
    for (int k = 0; k < c->n_expect; k++) {
      double v = value_at(ref, k);
      bool both_nan = isnan(v) && isnan(c->expect[k]);
      if (!both_nan && !(fabs(v - c->expect[k]) <= 1e-5 * (1 + fabs(c->expect[k])) ||
                         (isinf(v) && v == c->expect[k]))) {
        fprintf(stderr, "\n  [%s] eager element %d is %.9g, by hand %.9g\n", c->label, k, v,
                (double)c->expect[k]);
        CU_FAIL("eager differs from hand-computed value");
        break;
      }
    }
    /* the static executor */
    dy_error err = {0};
    dy_program *p = case_program(c, in, &err);
    if (!p || dy_verify(p, &err)) {
      fprintf(stderr, "\n  [%s] Program: %s\n", c->label, err.msg);
      CU_FAIL("program does not verify");
      dy_program_free(p);
      dy_scope_end();
      continue;
    }
    dy_tensor *feeds[DY_CASE_MAX_IN], *out = NULL;
    int nf = 0;
    for (int k = 0; k < c->n_in; k++)
      if (!is_const(c, k))
        feeds[nf++] = in[k];
    if (dy_executor_run(p, feeds, nf, &out, 1, &err)) {
      fprintf(stderr, "\n  [%s] executor: %s\n", c->label, err.msg);
      CU_FAIL("executor failed");
    } else {
      CU_ASSERT(agree("executor", c, out, ref));
      if (in_place(c))
        CU_ASSERT(state_agrees(c, p, state));
    }
    dy_tensor_free(out);
    if (in_place(c)) { /* the executor updated the state: start again */
      dy_program_free(p);
      p = case_program(c, in, &err);
    }
    /* the generated C */
    char name[32], path[700];
    snprintf(name, sizeof name, "c%d", i);
    dy_memplan_result mr;
    dy_codegen_output co = {0};
    dy_codegen_options o = {.name = name, .source = c->label};
    if (dy_program_bound_sym(p, "batch", batch, &err) || dy_memplan(p, &mr, &err) ||
        (o.arena_bytes = mr.arena_bytes, dy_codegen(p, &o, &co, &err))) {
      fprintf(stderr, "\n  [%s] codegen: %s\n", c->label, err.msg);
      CU_FAIL("codegen failed");
    } else {
      snprintf(path, sizeof path, "%s/%s.c", dir, name);
      dy_write_file_atomic(path, co.source, strlen(co.source), &err);
      snprintf(path, sizeof path, "%s/%s.h", dir, name);
      dy_write_file_atomic(path, co.header, strlen(co.header), &err);
      for (int k = 0; k < nf; k++) {
        snprintf(path, sizeof path, "%s/in_%d_%d.bin", dir, i, k);
        write_bin(path, feeds[k]);
      }
      dy_buf_printf(&drv, "  { /* %d */\n    const void *in[%d]; void *out[1];\n", i, nf + 1);
      for (int k = 0; k < nf; k++)
        dy_buf_printf(&drv,
                      "    snprintf(path, sizeof path, \"in_%d_%d.bin\"); in[%d] = load(path, %zu);\n",
                      i, k, k, feeds[k]->nbytes);
      int n_state = in_place(c) ? dy_op_info_of(c->kind)->n_out : 0;
      if (n_state)
        dy_buf_printf(&drv,
                      "    void *state = aligned_alloc(64, (C%d_STATE_BYTES + 63) / 64 * 64);\n"
                      "    if (c%d_state_init(state)) return 1;\n",
                      i, i);
      dy_buf_printf(&drv,
                    "    out[0] = malloc(%zu + 1); void *arena = malloc(C%d_ARENA_BYTES + 64);\n"
                    "    rc = c%d_run_v(%sarena, %lld, in, out);\n"
                    "    if (rc) { fprintf(stderr, \"case %d: status %%d\\n\", rc); return 1; }\n"
                    "    save(\"out_%d.bin\", out[0], %zu);\n"
                    "    free(arena); free(out[0]);\n",
                    ref->nbytes, i, i, n_state ? "state, " : "", (long long)batch, i, i,
                    ref->nbytes);
      for (int k = 0; k < n_state; k++)
        dy_buf_printf(&drv,
                      "    if (C%d_NUM_STATE != %d) return 1;\n"
                      "    save(\"state_%d_%d.bin\", c%d_state_tensor(state, %d), %zu);\n",
                      i, n_state, i, k, i, k, state[k]->nbytes);
      if (n_state)
        dy_buf_printf(&drv, "    free(state);\n");
      for (int k = 0; k < nf; k++)
        dy_buf_printf(&drv, "    free((void *)in[%d]);\n", k);
      dy_buf_printf(&drv, "  }\n");
      cc[n_cc] = (compiled_case){.idx = i, .batch = batch, .n_feeds = nf,
                                 .ref = dy_keep(ref), .c = c, .n_state = n_state};
      for (int k = 0; k < n_state; k++)
        cc[n_cc].state[k] = dy_keep(state[k]);
      n_cc++;
    }
    dy_codegen_output_free(&co);
    dy_program_free(p);
    dy_scope_end();
  }
  dy_buf full = {0};
  dy_buf_printf(&full, "%s", dy_test_driver_io);
  for (int k = 0; k < n_cc; k++)
    dy_buf_printf(&full, "#include \"c%d.h\"\n", cc[k].idx);
  dy_buf_printf(&full, "int main(void) {\n  char path[256]; int rc;\n%s  return 0;\n}\n",
                drv.s ? drv.s : "");
  char path[700];
  dy_error err = {0};
  snprintf(path, sizeof path, "%s/driver.c", dir);
  dy_write_file_atomic(path, full.s, full.len, &err);
  dy_buf_free(&drv);
  dy_buf_free(&full);

  /* compile every model strictly, two at a time, then link and run */
  const char *cc_env = getenv("CC");
  const char *compiler = cc_env && *cc_env ? cc_env : "cc";
  int rc = sh("cd %s && ls c*.c | xargs -P 2 -I{} sh -c '%s -std=c99 -Wall -Wextra -Werror "
              "-pedantic -O1 -c {} || { echo \"FAILED: {}\"; exit 1; }' > build.log 2>&1",
              dir, compiler);
  if (rc) {
    sh("cat %s/build.log | head -40 >&2", dir);
    CU_FAIL("emitted C does not compile cleanly");
  }
  if (!rc)
    rc = sh("cd %s && %s -std=c11 -O1 -w -c driver.c && %s -o driver *.o -lm >> build.log 2>&1 "
            "&& ./driver >> run.log 2>&1", dir, compiler, compiler);
  if (rc) {
    sh("tail -20 %s/build.log %s/run.log >&2 2>/dev/null", dir, dir);
    CU_FAIL("the compiled cases did not run");
  }
  for (int k = 0; k < n_cc; k++) {
    if (!rc) {
      snprintf(path, sizeof path, "%s/out_%d.bin", dir, cc[k].idx);
      uint8_t *buf = NULL;
      size_t len = 0;
      if (dy_read_file(path, &buf, &len, &err) || len != cc[k].ref->nbytes) {
        fprintf(stderr, "\n  [%s] compiled output missing or short\n", cc[k].c->label);
        CU_FAIL("compiled output");
      } else {
        dy_tensor got = *cc[k].ref;
        got.data = buf;
        CU_ASSERT(agree("compiled", cc[k].c, &got, cc[k].ref));
      }
      free(buf);
      /* an in-place op's updated state, read back through NAME_state_tensor */
      for (int j = 0; j < cc[k].n_state; j++) {
        snprintf(path, sizeof path, "%s/state_%d_%d.bin", dir, cc[k].idx, j);
        buf = NULL;
        if (dy_read_file(path, &buf, &len, &err) || len != cc[k].state[j]->nbytes) {
          fprintf(stderr, "\n  [%s] compiled state %d missing or short\n", cc[k].c->label, j);
          CU_FAIL("compiled state");
        } else {
          dy_tensor got = *cc[k].state[j];
          got.data = buf;
          CU_ASSERT(agree("compiled state", cc[k].c, &got, cc[k].state[j]));
        }
        free(buf);
      }
    }
    for (int j = 0; j < cc[k].n_state; j++)
      dy_tensor_free(cc[k].state[j]);
    dy_tensor_free(cc[k].ref);
  }
  free(cc);
}

static void test_ops_core(void) { run_family("core", &dy_op_cases_core); }
static void test_ops_nn(void) { run_family("nn", &dy_op_cases_nn); }
static void test_ops_math(void) { run_family("math", &dy_op_cases_math); }
static void test_ops_shape(void) { run_family("shape", &dy_op_cases_shape); }
static void test_ops_train(void) { run_family("train", &dy_op_cases_train); }
static void test_ops_quant(void) { run_family("quant", &dy_op_cases_quant); }
static void test_ops_lod(void) { run_family("lod", &dy_op_cases_lod); }
static void test_ops_extra(void) {
  if (dy_op_cases_extra.n) /* the family may be empty */
    run_family("extra", &dy_op_cases_extra);
}

/* every op kind has at least one case (so every emitter is compiled).
 * Exempt: cond and while (ops_control.def), whose operands are blocks of a
 * Program that a one-op case cannot express; tests/test_control.c runs them
 * eagerly and on the executor, and checks their inference and verifier
 * rules. Ops whose output size their kernel sets (DY_OPF_SETS_SIZE:
 * nonzero), whose output is not the size inference gives (the one-op
 * harness allocates outputs at inference's size): tests/test_dynsize.c
 * runs them on the executor and compiled. The custom op (ops_custom.def),
 * whose kernel is the user's C: tests/test_paddle.c test_custom_gap runs
 * it registered in process, through run's helper process and compiled. */
static void test_every_op_has_a_case(void) {
  const dy_op_case_list *lists[] = {&dy_op_cases_core, &dy_op_cases_nn, &dy_op_cases_math,
                                    &dy_op_cases_shape, &dy_op_cases_extra, &dy_op_cases_train,
                                    &dy_op_cases_quant, &dy_op_cases_lod};
  for (int k = 0; k < DY_OP_COUNT; k++) {
    if (k == DY_OP_COND || k == DY_OP_WHILE || k == DY_OP_CUSTOM ||
        dy_op_info_of((dy_op_kind)k)->flags & DY_OPF_SETS_SIZE)
      continue;
    bool found = false;
    for (int l = 0; l < (int)(sizeof lists / sizeof lists[0]) && !found; l++)
      for (int i = 0; i < lists[l]->n && !found; i++)
        found = lists[l]->cases[i].kind == (dy_op_kind)k && !lists[l]->cases[i].expect_error;
    if (!found)
      fprintf(stderr, "\n  op '%s' has no case in the op table\n", dy_op_name((dy_op_kind)k));
    CU_ASSERT(found);
  }
}

void dy_test_register(void) {
  mkdir(SCRATCH, 0777);
  DY_SUITE("ops");
  DY_TEST(test_every_op_has_a_case);
  DY_TEST(test_ops_core);
  DY_TEST(test_ops_nn);
  DY_TEST(test_ops_math);
  DY_TEST(test_ops_shape);
  DY_TEST(test_ops_extra);
  DY_TEST(test_ops_train);
  DY_TEST(test_ops_quant);
  DY_TEST(test_ops_lod);
}
