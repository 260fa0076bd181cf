/* test_acts.c - every activation of ir/acts.def, end to end.
 *
 * For each act of the table and each base (matmul with a per-column bias,
 * conv2d with a per-channel bias): the Program x -> base -> add bias ->
 * the act's source op (FROM, with attributes that satisfy WHEN) runs on the
 * static executor, unfused, as the reference. fuse-matmul / fuse-conv then
 * dce must leave one fused op carrying the act (and its alpha), and that
 * op must agree with the reference three ways: its reference kernel
 * (eager dy_apply), the static executor on the fused Program, and the
 * fused Program emitted as C, compiled strictly and run.
 *
 * Also: the template side names each act's vector form (acts.def's VEC:
 * DY_GEMM_<VEC> in dy_gemm.h for AT REG, DY_ACT_<VEC> with a case in each
 * switch of dy_simd.h for AT TILE), and every fused_elementwise token's
 * source op fuses into a fused_elementwise that agrees with the unfused
 * Program.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define SCRATCH DY_BUILD_DIR "/acts_scratch"
#define sh(...) dy_test_sh(NULL, __VA_ARGS__)

typedef struct {
  const char *name;
  dy_op_kind from;
  const char *vec, *at;
} act_row;

static const act_row acts[] = {
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) {#name, DY_OP_##FROM, #VEC, #AT},
#include "acts.def"
#undef DY_ACT
};
enum { N_ACTS = (int)(sizeof acts / sizeof *acts) };

typedef struct {
  const char *token;
  dy_op_kind from;
  int arity;
} ew_row;

static const ew_row tokens[] = {
#define DY_EW(NAME, token, FROM, ARITY, EXPR) {#token, DY_OP_##FROM, ARITY},
#include "acts.def"
#undef DY_EW
};
enum { N_TOKENS = (int)(sizeof tokens / sizeof *tokens) };

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float uniform(float lo, float hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (float)((double)(rng >> 11) / 9007199254740992.0);
}

static dy_tensor *random_tensor(int rank, const int64_t *shape, float lo, float hi) {
  dy_tensor *t = dy_tensor_new(DY_F32, rank, shape);
  float *d = t->data;
  for (int64_t i = 0; i < dy_tensor_numel(t); i++)
    d[i] = uniform(lo, hi);
  return t;
}

/* The attributes of act's source op that make it fuse (the table's WHEN);
 * the op's defaults for the others. */
static int source_attrs(const char *act, dy_attr *a, double *alpha) {
  *alpha = 0;
  if (strcmp(act, "relu6") == 0) {
    a[0] = DY_ATTR_F("min", 0.0);
    a[1] = DY_ATTR_F("max", 6.0);
    return 2;
  }
  if (strcmp(act, "leaky_relu") == 0) {
    *alpha = 0.25;
    a[0] = DY_ATTR_F("alpha", 0.25);
    return 1;
  }
  return 0;
}

/* Append op kind(ins) with a new output var; its id, or -1. Attributes
 * not in given take the schema's default (the verifier wants them all). */
static int add_op(dy_program *p, dy_op_kind kind, const int *ins, int n, const dy_attr *given,
                  int n_given, dy_error *err) {
  const dy_op_info *info = dy_op_info_of(kind);
  dy_attr attrs[16];
  int na = 0;
  for (int i = 0; i < info->n_attrs && na < 16; i++) {
    attrs[na] = info->attrs[i].dflt;
    for (int k = 0; k < n_given; k++)
      if (strcmp(given[k].name, info->attrs[i].name) == 0)
        attrs[na] = given[k];
    na++;
  }
  dy_type in_t[3], out_t;
  for (int i = 0; i < n; i++)
    in_t[i] = p->vars[ins[i]]->type;
  dy_op probe = {.kind = kind, .attrs = (dy_attr *)attrs, .n_attrs = na};
  if (dy_infer(&probe, in_t, n, &out_t, err))
    return -1;
  char name[16];
  snprintf(name, sizeof name, "v%d", p->n_vars);
  int o = dy_program_add_var(p, name, &out_t);
  if (!dy_program_append_op(p, 0, kind, ins, n, &o, 1, attrs, na, (dy_srcloc){"acts", 1}))
    return -1;
  return o;
}

static int add_const(dy_program *p, const char *name, const dy_tensor *t, dy_error *err) {
  int id = dy_program_add_var(p, name, &t->type);
  dy_program_set_data(p, id, t->data, t->nbytes, err);
  return id;
}

static bool agree(const char *what, const char *label, const float *got, const dy_tensor *ref,
                  double tol) {
  const float *r = ref->data;
  for (int64_t i = 0; i < dy_tensor_numel(ref); i++)
    if (!(fabs((double)got[i] - r[i]) <= tol * (1 + fabs(r[i])))) {
      fprintf(stderr, "\n  [%s] %s: element %lld is %.9g, unfused %.9g\n", label, what,
              (long long)i, (double)got[i], (double)r[i]);
      return false;
    }
  return true;
}

static bool write_bin(const char *path, const dy_tensor *t) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return false;
  bool ok = fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
  return fclose(f) == 0 && ok;
}

enum { BATCH = 2, MAX_CASES = 64 };

typedef struct {
  char label[64];
  dy_tensor *ref;
} compiled_case;

static compiled_case compiled[MAX_CASES];
static int n_compiled;
static dy_buf driver;

/* Emit fused Program p (feed x) as c<k>.c and a block of the driver. */
static void emit_case(const char *label, dy_program *p, const dy_tensor *x, const dy_tensor *ref) {
  dy_error err = {0};
  int k = n_compiled;
  char name[16], path[600];
  snprintf(name, sizeof name, "c%d", k);
  dy_memplan_result mr;
  dy_codegen_output co = {0};
  dy_codegen_options o = {.name = name, .source = label};
  if (k >= MAX_CASES || dy_program_bound_sym(p, "batch", BATCH, &err) ||
      dy_memplan(p, &mr, &err) ||
      (o.arena_bytes = mr.arena_bytes, dy_codegen(p, &o, &co, &err))) {
    fprintf(stderr, "\n  [%s] codegen: %s\n", label, err.msg);
    CU_FAIL("codegen failed");
    dy_codegen_output_free(&co);
    return;
  }
  snprintf(path, sizeof path, SCRATCH "/%s.c", name);
  dy_write_file_atomic(path, co.source, strlen(co.source), &err);
  snprintf(path, sizeof path, SCRATCH "/%s.h", name);
  dy_write_file_atomic(path, co.header, strlen(co.header), &err);
  snprintf(path, sizeof path, SCRATCH "/in_%d.bin", k);
  write_bin(path, x);
  dy_buf_printf(&driver,
                "  { const void *in[1]; void *out[1]; void *arena = malloc(C%d_ARENA_BYTES + 64);\n"
                "    in[0] = load(\"in_%d.bin\", %zu); out[0] = malloc(%zu);\n"
                "    if (c%d_run_v(arena, %d, in, out)) return 1;\n"
                "    save(\"out_%d.bin\", out[0], %zu);\n"
                "    free(arena); free(out[0]); free((void *)in[0]); }\n",
                k, k, x->nbytes, ref->nbytes, k, BATCH, k, ref->nbytes);
  snprintf(compiled[k].label, sizeof compiled[k].label, "%s", label);
  compiled[k].ref = dy_keep((dy_tensor *)ref);
  n_compiled++;
  dy_codegen_output_free(&co);
}

/* Run pass names[0..n) on p, verifying after each. */
static bool run_passes(dy_program *p, const char *const *names, int n, dy_error *err) {
  for (int i = 0; i < n; i++) {
    const dy_pass *pass = dy_pass_find(names[i]);
    bool changed = false;
    if (!pass || pass->run(p, &changed, err) || dy_verify(p, err))
      return false;
  }
  return true;
}

/* act over base (matmul or conv2d) plus bias: fuses, and agrees three ways. */
static void check_act(const act_row *a, bool conv) {
  char label[64];
  snprintf(label, sizeof label, "%s %s", conv ? "conv2d" : "matmul", a->name);
  dy_scope_begin();
  dy_error err = {0};
  static const int64_t xs_mm[] = {BATCH, 19}, ws_mm[] = {19, 23}, bs_mm[] = {23};
  static const int64_t xs_cv[] = {BATCH, 3, 9, 8}, ws_cv[] = {7, 3, 3, 3}, bs_cv[] = {7, 1, 1};
  dy_tensor *x = conv ? random_tensor(4, xs_cv, -2, 2) : random_tensor(2, xs_mm, -2, 2);
  dy_tensor *w = conv ? random_tensor(4, ws_cv, -0.6f, 0.6f) : random_tensor(2, ws_mm, -0.6f, 0.6f);
  dy_tensor *b = conv ? random_tensor(3, bs_cv, -1, 1) : random_tensor(1, bs_mm, -1, 1);

  dy_program *p = dy_program_new();
  dy_type xt = x->type;
  xt.shape[0] = -1;
  int xv = dy_program_add_var(p, "x", &xt);
  dy_program_add_feed(p, xv, &err);
  int ins[2] = {xv, add_const(p, "w", w, &err)};
  int v = add_op(p, conv ? DY_OP_CONV2D : DY_OP_MATMUL, ins, 2, NULL, 0, &err);
  int bias[2] = {v, add_const(p, "b", b, &err)};
  v = v < 0 ? -1 : add_op(p, DY_OP_ADD, bias, 2, NULL, 0, &err);
  dy_attr attrs[4];
  double alpha;
  int na = source_attrs(a->name, attrs, &alpha);
  v = v < 0 ? -1 : add_op(p, a->from, &v, 1, attrs, na, &err);
  if (v < 0 || dy_program_add_fetch(p, v, &err) || dy_verify(p, &err)) {
    fprintf(stderr, "\n  [%s] Program: %s\n", label, err.msg);
    CU_FAIL("the unfused Program does not verify");
    dy_program_free(p);
    dy_scope_end();
    return;
  }
  dy_tensor *ref = NULL, *got = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &ref, 1, &err), &err);

  /* the fusion pass: one fused op with the act and its parameter */
  const char *pass[2] = {conv ? "fuse-conv" : "fuse-matmul", "dce"};
  CU_ASSERT_FATAL(run_passes(p, pass, 2, &err));
  const dy_block *blk = p->blocks[0];
  dy_op_kind fk = conv ? DY_OP_FUSED_CONV2D : DY_OP_FUSED_MATMUL;
  bool fused = blk->n_ops == 1 && blk->ops[0]->kind == fk;
  const dy_op *f = fused ? blk->ops[0] : NULL;
  const char *act = !f ? "?" : conv ? dy_fused_conv2d_attrs_get(f).act
                                    : dy_fused_matmul_attrs_get(f).act;
  double falpha = !f ? -1 : conv ? dy_fused_conv2d_attrs_get(f).alpha
                                 : dy_fused_matmul_attrs_get(f).alpha;
  if (!fused || strcmp(act, a->name) != 0 || falpha != alpha)
    fprintf(stderr, "\n  [%s] not fused into one op with act %s (%d ops, act '%s')\n", label,
            a->name, blk->n_ops, act);
  CU_ASSERT_FATAL(fused && strcmp(act, a->name) == 0 && falpha == alpha);

  /* 1: the fused op's reference kernel, eagerly */
  dy_tensor *args[3] = {x, w, b};
  dy_clear_error();
  dy_tensor *eager = dy_apply(fk, args, 3, f->attrs, f->n_attrs, (dy_srcloc){label, 0});
  CU_ASSERT(eager && agree("reference kernel", label, eager->data, ref, 1e-5));
  dy_clear_error();
  /* 2: the static executor on the fused Program */
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &got, 1, &err), &err);
  CU_ASSERT(agree("executor", label, got->data, ref, 1e-5));
  dy_tensor_free(got);
  /* 3: the generated C (compared after all cases are built) */
  emit_case(label, p, x, ref);
  dy_tensor_free(ref);
  dy_program_free(p);
  dy_scope_end();
}

/* Each fused_elementwise token's source op, between two others, fuses
 * into one fused_elementwise that agrees with the unfused Program. */
static void check_token(const ew_row *t) {
  char label[64];
  snprintf(label, sizeof label, "fused_elementwise %s", t->token);
  dy_scope_begin();
  dy_error err = {0};
  static const int64_t shape[] = {BATCH, 37};
  dy_tensor *x = random_tensor(2, shape, 0.25f, 2); /* positive: sqrt, div */
  dy_tensor *c = random_tensor(1, shape + 1, 0.5f, 1.5f); /* one per column */
  dy_program *p = dy_program_new();
  dy_type xt = x->type;
  xt.shape[0] = -1;
  int xv = dy_program_add_var(p, "x", &xt);
  dy_program_add_feed(p, xv, &err);
  int cv = add_const(p, "c", c, &err);
  /* mul(x, c) -> token -> add(., x): three ops, one loop */
  int in2[2] = {xv, cv};
  int v = add_op(p, DY_OP_MUL, in2, 2, NULL, 0, &err);
  int tin[2] = {v, cv};
  v = v < 0 ? -1 : add_op(p, t->from, tin, t->arity, NULL, 0, &err);
  int out[2] = {v, xv};
  v = v < 0 ? -1 : add_op(p, DY_OP_ADD, out, 2, NULL, 0, &err);
  if (v < 0 || dy_program_add_fetch(p, v, &err) || dy_verify(p, &err)) {
    fprintf(stderr, "\n  [%s] Program: %s\n", label, err.msg);
    CU_FAIL("the unfused Program does not verify");
    dy_program_free(p);
    dy_scope_end();
    return;
  }
  dy_tensor *ref = NULL, *got = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &ref, 1, &err), &err);
  const char *pass[2] = {"fuse-elementwise", "dce"};
  CU_ASSERT_FATAL(run_passes(p, pass, 2, &err));
  const dy_block *blk = p->blocks[0];
  bool fused = blk->n_ops == 1 && blk->ops[0]->kind == DY_OP_FUSED_ELEMENTWISE;
  const char *e = fused ? dy_fused_elementwise_attrs_get(blk->ops[0]).expr : "";
  char want[32];
  snprintf(want, sizeof want, " %s ", t->token);
  if (!fused || !strstr(e, want))
    fprintf(stderr, "\n  [%s] not fused (%d ops, expr \"%s\")\n", label, blk->n_ops, e);
  CU_ASSERT_FATAL(fused && strstr(e, want));
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &got, 1, &err), &err);
  CU_ASSERT(agree("executor", label, got->data, ref, 1e-5));
  dy_tensor_free(got);
  emit_case(label, p, x, ref);
  dy_tensor_free(ref);
  dy_program_free(p);
  dy_scope_end();
}

static void test_every_act_fuses_and_agrees(void) {
  sh("rm -rf " SCRATCH " && mkdir -p " SCRATCH);
  n_compiled = 0;
  driver = (dy_buf){0};
  for (int i = 0; i < N_ACTS; i++)
    for (int conv = 0; conv < 2; conv++)
      check_act(&acts[i], conv);
  for (int i = 0; i < N_TOKENS; i++)
    check_token(&tokens[i]);
  CU_ASSERT(n_compiled == 2 * N_ACTS + N_TOKENS);

  /* compile every case strictly, link with one driver, run, compare */
  dy_buf full = {0};
  dy_buf_printf(&full, "#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n");
  for (int k = 0; k < n_compiled; k++)
    dy_buf_printf(&full, "#include \"c%d.h\"\n", k);
  dy_buf_printf(&full,
                "static void *load(const char *p, size_t n) {\n"
                "  void *b = malloc(n); FILE *f = fopen(p, \"rb\");\n"
                "  if (!f || fread(b, 1, n, f) != n) exit(1);\n"
                "  fclose(f); return b;\n}\n"
                "static void save(const char *p, const void *b, size_t n) {\n"
                "  FILE *f = fopen(p, \"wb\"); if (!f || fwrite(b, 1, n, f) != n) exit(1); fclose(f);\n}\n"
                "int main(void) {\n%s  return 0;\n}\n",
                driver.s ? driver.s : "");
  dy_error err = {0};
  dy_write_file_atomic(SCRATCH "/driver.c", full.s, full.len, &err);
  dy_buf_free(&full);
  dy_buf_free(&driver);
  const char *cc_env = getenv("CC");
  const char *cc = cc_env && *cc_env ? cc_env : "cc";
  int rc = sh("cd " SCRATCH " && ls c*.c | xargs -P 2 -I{} sh -c '%s -std=c99 -Wall -Wextra "
              "-Werror -pedantic -O1 -c {} || { echo \"FAILED: {}\"; exit 1; }' > build.log 2>&1",
              cc);
  if (rc) {
    sh("head -40 " SCRATCH "/build.log >&2");
    CU_FAIL("emitted C does not compile cleanly");
  }
  if (!rc)
    rc = sh("cd " SCRATCH " && %s -std=c11 -O1 -w -c driver.c && %s -o driver *.o -lm "
            ">> build.log 2>&1 && ./driver > run.log 2>&1", cc, cc);
  CU_ASSERT(rc == 0);
  for (int k = 0; k < n_compiled; k++) {
    char path[256];
    snprintf(path, sizeof path, SCRATCH "/out_%d.bin", k);
    uint8_t *buf = NULL;
    size_t len = 0;
    if (!rc && (dy_read_file(path, &buf, &len, &err) || len != compiled[k].ref->nbytes)) {
      fprintf(stderr, "\n  [%s] compiled output missing\n", compiled[k].label);
      CU_FAIL("compiled output");
    } else if (!rc) {
      /* the generated math library and vector forms: a few ulp */
      CU_ASSERT(agree("compiled", compiled[k].label, (const float *)buf, compiled[k].ref, 1e-4));
    }
    free(buf);
    dy_tensor_free(compiled[k].ref);
  }
}

/* count of needle in hay */
static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *s = hay; (s = strstr(s, needle)) != NULL; s += strlen(needle))
    n++;
  return n;
}

static void test_templates_know_every_vector_form(void) {
  char *simd = dy_test_slurp(DY_SOURCE_DIR "/codegen/rt/dy_simd.h");
  char *gemm = dy_test_slurp(DY_SOURCE_DIR "/codegen/rt/dy_gemm.h");
  CU_ASSERT_FATAL(simd && gemm);
  for (int i = 0; i < N_ACTS; i++) {
    char want[96];
    bool ok = true;
    if (strcmp(acts[i].at, "REG") == 0) {
      snprintf(want, sizeof want, "#define DY_GEMM_%s ", acts[i].vec);
      ok = count(gemm, want) == 1;
      /* in both epilogues: dy_gemm_out (vector rows) and dy_gemm_outs
       * (the scalar FPU's kernels) */
      snprintf(want, sizeof want, "flags & DY_GEMM_%s)", acts[i].vec);
      ok = ok && count(gemm, want) == 2;
    } else if (strcmp(acts[i].at, "TILE") == 0) {
      snprintf(want, sizeof want, "#define DY_ACT_%s ", acts[i].vec);
      ok = count(simd, want) == 1;
      /* dy_sact, dy_vact and DY_ACT_SWITCH each have its case */
      snprintf(want, sizeof want, "case DY_ACT_%s:", acts[i].vec);
      ok = ok && count(simd, want) == 3;
    } else {
      ok = strcmp(acts[i].at, "NONE") == 0 && strcmp(acts[i].vec, "NONE") == 0;
    }
    if (!ok)
      fprintf(stderr, "\n  act %s: %s %s is not in the templates as acts.def says\n",
              acts[i].name, acts[i].at, acts[i].vec);
    CU_ASSERT(ok);
  }
  free(simd);
  free(gemm);
}

/* Names the table does not have are rejected at inference. */
static void test_unknown_act_rejected(void) {
  dy_type in[2] = {{DY_F32, 2, {2, 3}}, {DY_F32, 2, {3, 4}}}, out;
  dy_attr attrs[1] = {DY_ATTR_S("act", "swish9")};
  dy_op op = {.kind = DY_OP_FUSED_MATMUL, .attrs = attrs, .n_attrs = 1};
  dy_error err = {0};
  CU_ASSERT(dy_infer(&op, in, 2, &out, &err) == DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT(strstr(err.msg, "unknown activation 'swish9'") != NULL);
  for (int i = 0; i < N_ACTS; i++) {
    attrs[0] = DY_ATTR_S("act", acts[i].name);
    CU_ASSERT(dy_infer(&op, in, 2, &out, &err) == DY_OK);
    CU_ASSERT(dy_act_find(acts[i].name) == i + 1);
  }
  CU_ASSERT(dy_act_find("") == DY_ACTIVATION_NONE && dy_act_find(NULL) == DY_ACTIVATION_NONE);
}

/* An op whose WHEN does not hold stays: gelu with approximate = 1 (the
 * tanh form) and clip(0, 5) are not fused activations; the bias still is. */
static void test_when_not_met_stays(void) {
  static const int64_t xs[] = {BATCH, 5}, ws[] = {5, 4}, bs[] = {4};
  const struct {
    dy_op_kind kind;
    dy_attr attr[2];
    int n;
  } ops[] = {{DY_OP_GELU, {DY_ATTR_I("approximate", 1)}, 1},
             {DY_OP_CLIP, {DY_ATTR_F("min", 0.0), DY_ATTR_F("max", 5.0)}, 2}};
  for (int i = 0; i < 2; i++) {
    dy_scope_begin();
    dy_error err = {0};
    dy_tensor *w = random_tensor(2, ws, -1, 1), *b = random_tensor(1, bs, -1, 1);
    dy_program *p = dy_program_new();
    dy_type xt = {DY_F32, 2, {-1, xs[1]}};
    int xv = dy_program_add_var(p, "x", &xt);
    dy_program_add_feed(p, xv, &err);
    int ins[2] = {xv, add_const(p, "w", w, &err)};
    int v = add_op(p, DY_OP_MATMUL, ins, 2, NULL, 0, &err);
    int bias[2] = {v, add_const(p, "b", b, &err)};
    v = add_op(p, DY_OP_ADD, bias, 2, NULL, 0, &err);
    v = add_op(p, ops[i].kind, &v, 1, ops[i].attr, ops[i].n, &err);
    DY_ASSERT_OK(dy_program_add_fetch(p, v, &err), &err);
    const char *pass[2] = {"fuse-matmul", "dce"};
    CU_ASSERT_FATAL(run_passes(p, pass, 2, &err));
    const dy_block *blk = p->blocks[0];
    CU_ASSERT(blk->n_ops == 2 && blk->ops[0]->kind == DY_OP_FUSED_MATMUL &&
              strcmp(dy_fused_matmul_attrs_get(blk->ops[0]).act, "") == 0 &&
              blk->ops[1]->kind == ops[i].kind);
    dy_program_free(p);
    dy_scope_end();
  }
}

void dy_test_register(void) {
  DY_SUITE("acts");
  DY_TEST(test_templates_know_every_vector_form);
  DY_TEST(test_unknown_act_rejected);
  DY_TEST(test_when_not_met_stays);
  DY_TEST(test_every_act_fuses_and_agrees);
}
