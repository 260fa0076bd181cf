/* test_train_codegen.c - the compiled training step against the static
 * executor.
 *
 * A training Program (forward, loss, dy_program_gradients, one in-place
 * optimizer op per parameter, the learning rate a rank-0 feed named
 * "learning_rate", the loss the only fetch) is built twice from the same
 * text and seed: one copy runs STEPS steps on the static executor (which
 * updates its persistable vars in place), the other goes through
 * dy_compile_program (passes, memory plan, codegen) and is compiled with
 * -std=c99 -Wall -Wextra -Werror -pedantic by gcc and clang and linked
 * with a driver that calls NAME_state_init once and NAME_train_step STEPS
 * times on the same batches (of varying size: the batch is dynamic) and
 * rates, then writes the losses and every state tensor
 * (NAME_state_tensor). Losses and final state must agree to ~1e-4
 * relative, for an MLP (sgd, momentum, adam, adamw), a small CNN (sgd,
 * adam) and an MLP with two training-mode dropouts whose seeds the
 * executor redraws before each step (dy_program_reseed_dropout) and the
 * driver sets alike (NAME_dropout_seeds). Also: the state lives in RAM (no const parameter in NAME.c),
 * the arena meets the plan's lower bound within a stated factor; the
 * compiled trainer (--emit exe) prints dy2stc train's epoch losses and
 * ends with its parameters, with and without dropout (redrawn each
 * step), and a label out of range stops it
 * (NAME_ERR_INDEX) with a message; the inference main.c refuses a
 * Program with state.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define WORK DY_BUILD_DIR "/train_codegen"
#define sh(...) dy_test_sh(NULL, __VA_ARGS__)

enum { STEPS = 20 };

static uint64_t rng;
static float frand(void) { /* uniform in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((rng >> 40) * 0x1.0p-24 * 2.0 - 1.0);
}

/* ---- building a training Program ---- */

/* A text var line with random data (scaled) or a constant fill. */
static void var_line(dy_buf *b, const char *name, const char *shape, int64_t n, double scale,
                     const char *flags) {
  dy_buf_printf(b, "  var %s : f32[%s] persistable %s = [", name, shape, flags);
  for (int64_t i = 0; i < n; i++)
    dy_buf_printf(b, "%s%.8g", i ? ", " : "", scale * frand());
  dy_buf_printf(b, "]\n");
}

typedef enum { OPT_SGD, OPT_ADAM, OPT_MOMENTUM, OPT_ADAMW } opt_kind;

/* Append one update op per parameter (opt) and the optimizer state. */
static void append_optimizer(dy_program *p, opt_kind opt, const int *params, const int *grads,
                             int n) {
  dy_error err = {0};
  int lr = dy_program_find_var(p, "learning_rate");
  dy_srcloc loc = {"train.c", 1};
  for (int i = 0; i < n; i++) {
    CU_ASSERT_FATAL(grads[i] >= 0);
    const dy_var *w = p->vars[params[i]];
    dy_type t = w->type;
    if (opt == OPT_SGD) {
      dy_attr a = DY_ATTR_F("weight_decay", 0.01);
      dy_program_append_op(p, 0, DY_OP_SGD, (int[]){params[i], grads[i], lr}, 3,
                           (int[]){params[i]}, 1, &a, 1, loc);
      continue;
    }
    if (opt == OPT_MOMENTUM) {
      char nm[128];
      snprintf(nm, sizeof nm, "%s@velocity", w->name);
      int v = dy_program_add_var(p, nm, &t);
      float *z = calloc((size_t)dy_type_numel(&t), sizeof *z);
      dy_program_set_data(p, v, z, sizeof *z * (size_t)dy_type_numel(&t), &err);
      free(z);
      dy_attr a[] = {DY_ATTR_F("mu", 0.9), DY_ATTR_I("use_nesterov", i % 2),
                     DY_ATTR_F("weight_decay", 0.0)};
      dy_program_append_op(p, 0, DY_OP_MOMENTUM, (int[]){params[i], v, grads[i], lr}, 4,
                           (int[]){params[i], v}, 2, a, 3, loc);
      continue;
    }
    int st[4];
    const char *sfx[4] = {"moment1", "moment2", "beta1_pow", "beta2_pow"};
    for (int k = 0; k < 4; k++) {
      char nm[128];
      snprintf(nm, sizeof nm, "%s@%s", w->name, sfx[k]);
      dy_type tk = k < 2 ? t : (dy_type){.dtype = DY_F32, .rank = 0};
      st[k] = dy_program_add_var(p, nm, &tk);
      int64_t m = dy_type_numel(&tk);
      float *z = calloc((size_t)m, sizeof *z);
      for (int64_t j = 0; j < m && k >= 2; j++)
        z[j] = 1.0f;
      dy_program_set_data(p, st[k], z, sizeof *z * (size_t)m, &err);
      free(z);
    }
    int in[7] = {params[i], st[0], st[1], st[2], st[3], grads[i], lr};
    int out[5] = {params[i], st[0], st[1], st[2], st[3]};
    dy_attr a[] = {DY_ATTR_F("beta1", 0.9), DY_ATTR_F("beta2", 0.999),
                   DY_ATTR_F("epsilon", 1e-8),
                   opt == OPT_ADAM ? DY_ATTR_F("weight_decay", 0.001) : DY_ATTR_F("coeff", 0.01)};
    dy_program_append_op(p, 0, opt == OPT_ADAM ? DY_OP_ADAM : DY_OP_ADAMW, in, 7, out, 5, a, 4,
                         loc);
  }
}

/* The training Program of a forward text (which defines the feeds x,
 * label, learning_rate, the trainable vars and the fetched scalar loss). */
static dy_program *training_program(const char *text, opt_kind opt) {
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  int params[16], grads[16], n = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->trainable)
      params[n++] = i;
  DY_ASSERT_OK(dy_program_gradients(p, p->fetches[0], params, n, grads, &err), &err);
  append_optimizer(p, opt, params, grads, n);
  DY_ASSERT_OK(dy_verify(p, &err), &err);
  return p;
}

/* The MLP's parameters (seeded) and forward, x [B,6] -> linear 16 ->
 * relu -> linear 3 = ob; the text's var lines, then (ops) its op lines. */
static void mlp_vars(dy_buf *b, uint64_t seed, bool dropout) {
  rng = seed;
  var_line(b, "fc1.weight", "6,16", 96, 0.5, "trainable");
  var_line(b, "fc1.bias", "16", 16, 0.1, "trainable");
  var_line(b, "fc2.weight", "16,3", 48, 0.5, "trainable");
  var_line(b, "fc2.bias", "3", 3, 0.1, "trainable");
  dy_buf_printf(b, "  var h : f32[-1,16]\n  var hb : f32[-1,16]\n  var a : f32[-1,16]\n"
                   "  var o : f32[-1,3]\n  var ob : f32[-1,3]\n");
  if (dropout)
    dy_buf_printf(b, "  var xd : f32[-1,6]\n  var hd : f32[-1,16]\n  var ad : f32[-1,16]\n");
}
/* With dropout (is_test as given): x -> dropout 0.2 -> linear 16 ->
 * dropout 0 -> relu -> dropout 0.3 -> linear 3, their seeds 11, 5 and 3
 * (a seed's index is its op order, not its value). The passes remove the
 * dropout with p = 0, yet it draws its seed in dy2stc train as in the
 * executor, and so in the compiled step. */
static void mlp_ops(dy_buf *b, bool dropout, int is_test) {
  dy_buf_printf(b, "  block 0 parent -1 {\n");
  if (dropout)
    dy_buf_printf(b, "    xd = dropout(x) {p = 0.2, is_test = %d, seed = 11}  @mlp.c:1\n",
                  is_test);
  dy_buf_printf(b,
                "    h = matmul(%s, fc1.weight) {transpose_x = 0, transpose_y = 0}  @mlp.c:1\n"
                "    hb = add(h, fc1.bias)  @mlp.c:1\n",
                dropout ? "xd" : "x");
  if (dropout)
    dy_buf_printf(b, "    hd = dropout(hb) {p = 0, is_test = %d, seed = 5}  @mlp.c:1\n",
                  is_test);
  dy_buf_printf(b, "    a = relu(%s)  @mlp.c:2\n", dropout ? "hd" : "hb");
  if (dropout)
    dy_buf_printf(b, "    ad = dropout(a) {p = 0.3, is_test = %d, seed = 3}  @mlp.c:2\n",
                  is_test);
  dy_buf_printf(b,
                "    o = matmul(%s, fc2.weight) {transpose_x = 0, transpose_y = 0}  @mlp.c:3\n"
                "    ob = add(o, fc2.bias)  @mlp.c:3\n",
                dropout ? "ad" : "a");
}

/* The MLP's training text: mse of ob against label (dropout: with the
 * two training-mode dropouts of mlp_ops). */
static char *mlp_text_of(uint64_t seed, bool dropout) {
  dy_buf b = {0};
  dy_buf_printf(&b, "program {\n"
                    "  var x : f32[-1,6] feed 0\n"
                    "  var label : f32[-1,3] feed 1\n"
                    "  var learning_rate : f32[] feed 2\n");
  mlp_vars(&b, seed, dropout);
  dy_buf_printf(&b, "  var d : f32[-1,3]\n  var sq : f32[-1,3]\n  var loss : f32[]\n");
  mlp_ops(&b, dropout, 0);
  dy_buf_printf(&b, "    d = sub(ob, label)  @mlp.c:4\n"
                    "    sq = mul(d, d)  @mlp.c:4\n"
                    "    loss = reduce_mean(sq) {axes = [], keepdim = 0}  @mlp.c:4\n"
                    "  }\n"
                    "  fetch 0 loss\n}\n");
  return b.s;
}
static char *mlp_text(uint64_t seed) { return mlp_text_of(seed, false); }
static char *mlp_dropout_text(uint64_t seed) { return mlp_text_of(seed, true); }

/* A small CNN: x [B,1,6,6] -> conv 3x3 (4 channels, padding 1) + bias ->
 * relu -> max pool 2x2 -> flatten [B,36] -> linear 3, mse against label. */
static char *cnn_text(uint64_t seed) {
  rng = seed;
  dy_buf b = {0};
  dy_buf_printf(&b, "program {\n"
                    "  var x : f32[-1,1,6,6] feed 0\n"
                    "  var label : f32[-1,3] feed 1\n"
                    "  var learning_rate : f32[] feed 2\n");
  var_line(&b, "conv.weight", "4,1,3,3", 36, 0.5, "trainable");
  var_line(&b, "conv.bias", "4,1,1", 4, 0.1, "trainable");
  var_line(&b, "fc.weight", "36,3", 108, 0.3, "trainable");
  var_line(&b, "fc.bias", "3", 3, 0.1, "trainable");
  dy_buf_printf(&b,
                "  var c : f32[-1,4,6,6]\n  var cb : f32[-1,4,6,6]\n  var r : f32[-1,4,6,6]\n"
                "  var pl : f32[-1,4,3,3]\n  var fl : f32[-1,36]\n"
                "  var o : f32[-1,3]\n  var ob : f32[-1,3]\n  var d : f32[-1,3]\n"
                "  var sq : f32[-1,3]\n  var loss : f32[]\n"
                "  block 0 parent -1 {\n"
                "    c = conv2d(x, conv.weight) {strides = [1, 1], paddings = [1, 1, 1, 1], "
                "dilations = [1, 1], groups = 1}  @cnn.c:1\n"
                "    cb = add(c, conv.bias)  @cnn.c:1\n"
                "    r = relu(cb)  @cnn.c:2\n"
                "    pl = pool2d(r) {pooling_type = \"max\", ksize = [2, 2], strides = [2, 2], "
                "paddings = [0, 0], ceil_mode = 0, exclusive = 1, global_pooling = 0, "
                "adaptive = 0}  @cnn.c:3\n"
                "    fl = flatten(pl) {start_axis = 1, stop_axis = -1}  @cnn.c:4\n"
                "    o = matmul(fl, fc.weight) {transpose_x = 0, transpose_y = 0}  @cnn.c:5\n"
                "    ob = add(o, fc.bias)  @cnn.c:5\n"
                "    d = sub(ob, label)  @cnn.c:6\n"
                "    sq = mul(d, d)  @cnn.c:6\n"
                "    loss = reduce_mean(sq) {axes = [], keepdim = 0}  @cnn.c:6\n"
                "  }\n"
                "  fetch 0 loss\n}\n");
  return b.s;
}

/* ---- the data of STEPS steps ---- */

enum { MAX_SEEDS = 4 };

typedef struct {
  int64_t batch[STEPS];
  float lr[STEPS];
  float *x, *label;   /* STEPS * max batch rows each */
  int64_t x_row, label_row, max_batch;
  /* the dropout seeds executor_run drew before each step (the driver sets
   * them in NAME_dropout_seeds); n_seeds per step, 0: no dropout */
  uint64_t seeds[STEPS][MAX_SEEDS];
  int n_seeds;
} run_data;

static void make_data(run_data *d, int64_t x_row, int64_t label_row, int64_t max_batch) {
  d->x_row = x_row;
  d->label_row = label_row;
  d->max_batch = max_batch;
  d->n_seeds = 0;
  d->x = malloc(sizeof(float) * (size_t)(STEPS * max_batch * x_row));
  d->label = malloc(sizeof(float) * (size_t)(STEPS * max_batch * label_row));
  rng = 0x5EED;
  for (int s = 0; s < STEPS; s++) {
    d->batch[s] = s % 3 == 2 ? max_batch - 3 : max_batch; /* some short batches */
    d->lr[s] = s < 10 ? 0.05f : 0.02f;
  }
  for (int64_t i = 0; i < STEPS * max_batch * x_row; i++)
    d->x[i] = frand();
  for (int64_t i = 0; i < STEPS * max_batch * label_row; i++)
    d->label[i] = frand();
}

/* ---- the executor's run ---- */

/* The seeds dy_program_reseed_dropout draws: a splitmix64 stream, each
 * value recorded in draw_to (at most MAX_SEEDS a step). */
static uint64_t draw_state;
static uint64_t *draw_to;
static int draw_n;
static uint64_t draw_seed(void) {
  uint64_t z = (draw_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  if (draw_n < MAX_SEEDS)
    draw_to[draw_n] = z;
  draw_n++;
  return z;
}

/* STEPS steps of p on the executor; with reseed, each step first reseeds
 * p's dropouts as dy_program_train_step does, the draws going to d. */
static void executor_run(dy_program *p, run_data *d, double *loss, bool reseed) {
  dy_error err = {0};
  const dy_var *xv = p->vars[p->feeds[0]], *lv = p->vars[p->feeds[1]];
  draw_state = 0xD40F;
  for (int s = 0; s < STEPS; s++) {
    if (reseed) {
      draw_to = d->seeds[s];
      draw_n = 0;
      DY_ASSERT_OK(dy_program_reseed_dropout(p, draw_seed, &err), &err);
      CU_ASSERT_FATAL(draw_n <= MAX_SEEDS);
      CU_ASSERT(s == 0 || draw_n == d->n_seeds); /* the same draws every step */
      d->n_seeds = draw_n;
    }
    int64_t xs[8], ls[8];
    memcpy(xs, xv->type.shape, sizeof xs);
    memcpy(ls, lv->type.shape, sizeof ls);
    xs[0] = ls[0] = d->batch[s];
    dy_tensor *in[3] = {
        dy_tensor_from_data(DY_F32, xv->type.rank, xs, d->x + s * d->max_batch * d->x_row),
        dy_tensor_from_data(DY_F32, lv->type.rank, ls,
                            d->label + s * d->max_batch * d->label_row),
        dy_tensor_from_data(DY_F32, 0, NULL, &d->lr[s])};
    dy_tensor *out = NULL;
    DY_ASSERT_OK(dy_executor_run(p, in, 3, &out, 1, &err), &err);
    loss[s] = ((const float *)out->data)[0];
    dy_tensor_free(out);
    for (int k = 0; k < 3; k++)
      dy_tensor_free(in[k]);
  }
}

/* ---- the compiled run ---- */

static bool write_floats(const char *path, const float *v, size_t n) {
  dy_error err = {0};
  return dy_write_file_atomic(path, v, n * sizeof *v, &err) == DY_OK;
}

/* The driver: NAME_state_init, STEPS x NAME_train_step, then losses.bin
 * and state_<i>.bin. */
static char *driver_text(const char *name, const run_data *d) {
  char up[64];
  size_t n = strlen(name);
  for (size_t i = 0; i <= n; i++)
    up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
  dy_buf b = {0};
  dy_buf_printf(&b,
                "#include <stdio.h>\n#include <stdlib.h>\n#include \"%s.h\"\n"
                "static float *load(const char *p, size_t n) {\n"
                "  float *b = malloc(n * sizeof *b); FILE *f = fopen(p, \"rb\");\n"
                "  if (!f || fread(b, sizeof *b, n, f) != n) exit(3);\n"
                "  fclose(f); return b;\n}\n"
                "int main(void) {\n"
                "  static const long long batch[%d] = {",
                name, STEPS);
  for (int s = 0; s < STEPS; s++)
    dy_buf_printf(&b, "%s%lld", s ? ", " : "", (long long)d->batch[s]);
  dy_buf_printf(&b, "};\n  static const float lr[%d] = {", STEPS);
  for (int s = 0; s < STEPS; s++)
    dy_buf_printf(&b, "%s%.9g", s ? ", " : "", (double)d->lr[s]);
  dy_buf_printf(&b, "};\n");
  /* set_seeds: the executor's dropout draws of step s, or nothing */
  if (d->n_seeds > 0) {
    dy_buf_printf(&b,
                  "#if %s_N_DROPOUT_SEEDS != %d\n#error \"not the executor's draws a step\"\n"
                  "#endif\n"
                  "  static const uint64_t seeds[%d][%d] = {",
                  up, d->n_seeds, STEPS, d->n_seeds);
    for (int s = 0; s < STEPS; s++)
      for (int k = 0; k < d->n_seeds; k++)
        dy_buf_printf(&b, "%s%s0x%016llxull%s", k ? ", " : s ? ", {" : "{", "",
                      (unsigned long long)d->seeds[s][k], k == d->n_seeds - 1 ? "}" : "");
    dy_buf_printf(&b, "};\n"
                      "#define set_seeds(state, s) \\\n"
                      "  for (int k = 0; k < %d; k++) %s_dropout_seeds(state)[k] = seeds[s][k]\n",
                  d->n_seeds, name);
  } else {
    dy_buf_printf(&b, "#define set_seeds(state, s) (void)0\n");
  }
  dy_buf_printf(&b,
                "  float *x = load(\"x.bin\", %lld), *label = load(\"label.bin\", %lld);\n"
                "  void *state = aligned_alloc(%s_STATE_ALIGN, (%s_STATE_BYTES + 63) / 64 * 64);\n"
                "  void *arena = aligned_alloc(%s_ARENA_ALIGN, (%s_ARENA_BYTES + 63) / 64 * 64 + 64);\n"
                "  float losses[%d];\n"
                "  if (%s_state_init(state) != %s_OK) return 4;\n"
                "  for (int s = 0; s < %d; s++) {\n"
                "    set_seeds(state, s);\n"
                "    int rc = %s_train_step(state, arena, batch[s], x + s * %lld, label + s * %lld,\n"
                "                          lr[s], &losses[s]);\n"
                "    if (rc != %s_OK) { fprintf(stderr, \"step %%d: %%d\\n\", s, rc); return 5; }\n"
                "  }\n"
                "  FILE *f = fopen(\"losses.bin\", \"wb\");\n"
                "  fwrite(losses, sizeof *losses, %d, f); fclose(f);\n"
                "  for (int i = 0; i < %s_NUM_STATE; i++) {\n"
                "    char p[64]; long long m = 1;\n"
                "    for (int k = 0; k < %s_state[i].rank; k++) m *= %s_state[i].shape[k];\n"
                "    snprintf(p, sizeof p, \"state_%%d.bin\", i);\n"
                "    f = fopen(p, \"wb\"); fwrite(%s_state_tensor(state, i), 4, (size_t)m, f); fclose(f);\n"
                "  }\n"
                "  return 0;\n}\n",
                (long long)(STEPS * d->max_batch * d->x_row),
                (long long)(STEPS * d->max_batch * d->label_row), up, up, up, up, STEPS, name, up,
                STEPS, name, (long long)(d->max_batch * d->x_row),
                (long long)(d->max_batch * d->label_row), up, STEPS, up, name, name, name);
  return b.s;
}

static bool close_rel(double got, double want, double tol) {
  return fabs(got - want) <= tol * (fabs(want) + 1e-3);
}

/* Compile p (a fresh copy) as NAME, run the driver, compare with the
 * executor's losses and the state vars of ref (the executor's Program). */
static void compiled_vs_executor(const char *name, dy_program *p, const dy_program *ref,
                                 const run_data *d, const double *loss) {
  char dir[512];
  snprintf(dir, sizeof dir, WORK "/%s", name);
  sh("rm -rf %s && mkdir -p %s", dir, dir);
  dy_error err = {0};
  dy_compile_options o = dy_compile_options_default();
  o.name = name;
  dy_codegen_output co = {0};
  dy_compile_report rep;
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", d->max_batch, &err), &err);
  DY_ASSERT_OK(dy_compile_program(p, &o, &co, &rep, &err), &err);
  /* the report: the arena holds forward, kept activations and backward; the
   * plan meets the lower bound within a quarter */
  CU_ASSERT(rep.mem.lower_bound > 0);
  CU_ASSERT(rep.mem.arena_bytes >= rep.mem.lower_bound);
  CU_ASSERT(rep.mem.arena_bytes <= rep.mem.lower_bound + rep.mem.lower_bound / 4 + 64);
  /* parameters live in the state, not in const arrays NAME_run reads */
  CU_ASSERT_PTR_NOT_NULL(strstr(co.header, "_train_step("));
  CU_ASSERT_PTR_NOT_NULL(strstr(co.source, "(st + "));
  char path[700];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  DY_ASSERT_OK(dy_write_sources(&co, path, &err), &err);
  dy_codegen_output_free(&co);
  char *drv = driver_text(name, d);
  snprintf(path, sizeof path, "%s/driver.c", dir);
  DY_ASSERT_OK(dy_write_file_atomic(path, drv, strlen(drv), &err), &err);
  free(drv);
  snprintf(path, sizeof path, "%s/x.bin", dir);
  CU_ASSERT(write_floats(path, d->x, (size_t)(STEPS * d->max_batch * d->x_row)));
  snprintf(path, sizeof path, "%s/label.bin", dir);
  CU_ASSERT(write_floats(path, d->label, (size_t)(STEPS * d->max_batch * d->label_row)));
  const char *ccs[2] = {"gcc", "clang"};
  for (int c = 0; c < 2; c++) {
    if (c == 1 && !dy_test_have("clang"))
      continue;
    int rc = sh("cd %s && %s -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c %s.c %s_weights.c "
                "> cc.log 2>&1",
                dir, ccs[c], name, name);
    if (rc)
      sh("head -30 %s/cc.log >&2", dir);
    CU_ASSERT_EQUAL(rc, 0);
  }
  int rc = sh("cd %s && gcc -std=c11 -O2 -c %s.c %s_weights.c && gcc -std=c11 -O1 driver.c %s.o "
              "%s_weights.o -o driver > ld.log 2>&1 && ./driver > run.log 2>&1",
              dir, name, name, name, name);
  if (rc)
    sh("tail -20 %s/ld.log %s/run.log >&2", dir, dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* the losses */
  uint8_t *buf = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/losses.bin", dir);
  DY_ASSERT_OK(dy_read_file(path, &buf, &len, &err), &err);
  CU_ASSERT_EQUAL_FATAL(len, sizeof(float) * STEPS);
  int bad = 0;
  for (int s = 0; s < STEPS; s++) {
    float got;
    memcpy(&got, buf + 4 * s, 4);
    if (!close_rel(got, loss[s], 1e-4) && bad++ < 3)
      fprintf(stderr, "\n  [%s] step %d: compiled loss %.9g, executor %.9g", name, s, got,
              loss[s]);
  }
  free(buf);
  CU_ASSERT_EQUAL(bad, 0);
  /* training moved: the last loss differs from the first */
  CU_ASSERT(fabs(loss[STEPS - 1] - loss[0]) > 1e-3 * fabs(loss[0]));
  /* every state tensor, by name, against the executor's var */
  int n_state = 0;
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!v->persistable || !dy_program_in_place_writer(p, i))
      continue;
    int r = dy_program_find_var(ref, v->name);
    CU_ASSERT_FATAL(r >= 0);
    snprintf(path, sizeof path, "%s/state_%d.bin", dir, n_state++);
    buf = NULL;
    DY_ASSERT_OK(dy_read_file(path, &buf, &len, &err), &err);
    int64_t m = dy_type_numel(&v->type);
    CU_ASSERT_EQUAL_FATAL(len, (size_t)m * 4);
    const float *want = ref->vars[r]->data;
    const float *init = v->data; /* the compiled copy's initial value */
    bool moved = false;
    bad = 0;
    for (int64_t k = 0; k < m; k++) {
      float got;
      memcpy(&got, buf + 4 * k, 4);
      moved |= got != init[k];
      if (!close_rel(got, want[k], 1e-4) && bad++ < 3)
        fprintf(stderr, "\n  [%s] %s[%lld]: compiled %.9g, executor %.9g", name, v->name,
                (long long)k, got, want[k]);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(moved);
    free(buf);
  }
  CU_ASSERT(n_state >= 4);
}

/* The executor reseeds the dropouts before each step (reseed), the
 * driver sets the same seeds in NAME_dropout_seeds. */
static void train_equiv_seeded(const char *name, char *(*text_of)(uint64_t), opt_kind opt,
                               int64_t x_row, int64_t label_row, bool reseed) {
  mkdir(WORK, 0777);
  char *text = text_of(42);
  dy_program *ref = training_program(text, opt);
  dy_program *p = training_program(text, opt);
  free(text);
  run_data d;
  make_data(&d, x_row, label_row, 8);
  double loss[STEPS];
  executor_run(ref, &d, loss, reseed);
  if (reseed)
    CU_ASSERT(d.n_seeds > 0);
  compiled_vs_executor(name, p, ref, &d, loss);
  dy_program_free(p);
  dy_program_free(ref);
  free(d.x);
  free(d.label);
}

static void train_equiv(const char *name, char *(*text_of)(uint64_t), opt_kind opt,
                        int64_t x_row, int64_t label_row) {
  train_equiv_seeded(name, text_of, opt, x_row, label_row, false);
}

static void test_mlp_sgd(void) { train_equiv("mlp_sgd", mlp_text, OPT_SGD, 6, 3); }
static void test_mlp_adam(void) { train_equiv("mlp_adam", mlp_text, OPT_ADAM, 6, 3); }
static void test_mlp_momentum(void) { train_equiv("mlp_momentum", mlp_text, OPT_MOMENTUM, 6, 3); }
static void test_mlp_adamw(void) { train_equiv("mlp_adamw", mlp_text, OPT_ADAMW, 6, 3); }
static void test_cnn_sgd(void) { train_equiv("cnn_sgd", cnn_text, OPT_SGD, 36, 3); }
static void test_cnn_adam(void) { train_equiv("cnn_adam", cnn_text, OPT_ADAM, 36, 3); }

/* Two training-mode dropouts whose seeds the caller draws per step: the
 * compiled step equals the executor reseeded as dy_program_train_step
 * reseeds, over STEPS steps (fixed seeds would drop other elements from
 * step 2 on, and the losses would part). */
static void test_mlp_dropout_reseeded(void) {
  train_equiv_seeded("mlp_dropout", mlp_dropout_text, OPT_ADAM, 6, 3, true);
}

/* ---- end to end: dy2stc train against the compiled trainer ---- */

/* The inference MLP (x [B,6] -> logits ob [B,3]) as text; dropout: with
 * mlp_ops' dropouts at inference (training turns them on). */
static char *classifier_text(bool dropout) {
  dy_buf b = {0};
  dy_buf_printf(&b, "program {\n  var x : f32[-1,6] feed 0\n");
  mlp_vars(&b, 7, dropout);
  mlp_ops(&b, dropout, 1);
  dy_buf_printf(&b, "  }\n  fetch 0 ob\n}\n");
  return b.s;
}

/* The numbers after "loss " on each "epoch" line of a file; their count. */
static int epoch_losses(const char *path, double *loss, int cap) {
  char *text = dy_test_slurp(path);
  int n = 0;
  for (char *s = text; s && (s = strstr(s, "epoch ")) && n < cap; s++) {
    char *l = strstr(s, " loss ");
    if (l)
      loss[n++] = strtod(l + 6, NULL);
    s = l ? l : s;
  }
  free(text);
  return n;
}

/* dy2stc train and the compiled trainer (in WORK/sub) on the classifier
 * (dropout: with its dropouts, reseeded each step by both): the same
 * epoch losses, and parameters within 1e-3. */
#define LOG(file) (snprintf(lg, sizeof lg, "%s/" file, dir), lg)
static void trainer_vs_train(const char *sub, bool dropout) {
  char dir[300], lg[400];
  snprintf(dir, sizeof dir, WORK "/%s", sub);
  sh("rm -rf %s && mkdir -p %s", dir, dir);
  dy_error err = {0};
  char *text = classifier_text(dropout);
  dy_program *p = NULL;
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  free(text);
  char path[700];
  snprintf(path, sizeof path, "%s/mlp", dir);
  DY_ASSERT_OK(dy_model_save(p, path, &err), &err);
  dy_program_free(p);
  /* 45 samples: 6 features, a class from their signs */
  enum { N = 45 };
  float x[N * 6];
  int64_t y[N];
  rng = 99;
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < 6; k++)
      x[i * 6 + k] = frand();
    y[i] = x[i * 6] > 0 ? (x[i * 6 + 1] > 0 ? 2 : 1) : 0;
  }
  CU_ASSERT_FATAL(dy_test_write_samples(dir, x, N, 6, y));
  const char *opts = "--loss cross_entropy --optimizer adam --lr 0.01 --batch 8";
  int rc = dy_test_sh(LOG("train.log"),
                      "cd %s && %s train mlp.dymodel --input x=x.npy --labels y.npy %s "
                      "--epochs 4 --shuffle 5 -o trained",
                      dir, DY2STC_PATH, opts);
  if (rc)
    sh("cat %s/train.log >&2", dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = dy_test_sh(LOG("compile.log"),
                  "cd %s && %s compile mlp.dymodel --train %s --report -o trainer", dir,
                  DY2STC_PATH, opts);
  if (rc)
    sh("cat %s/compile.log >&2", dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  /* the report names the arena, its lower bound and the state */
  snprintf(path, sizeof path, "%s/compile.log", dir);
  char *log = dy_test_slurp(path);
  CU_ASSERT(log && strstr(log, "lower bound"));
  CU_ASSERT(log && strstr(log, "state: "));
  CU_ASSERT(log && !strstr(log, "warning")); /* the trainer's main.c builds cleanly */
  free(log);
  rc = dy_test_sh(LOG("run.log"),
                  "cd %s && ./trainer --input x=x.npy --labels y.npy --epochs 4 --shuffle 5 "
                  "-o state",
                  dir);
  if (rc)
    sh("cat %s/run.log >&2", dir);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double want[8], got[8];
  snprintf(path, sizeof path, "%s/train.log", dir);
  int nw = epoch_losses(path, want, 8);
  snprintf(path, sizeof path, "%s/run.log", dir);
  int ng = epoch_losses(path, got, 8);
  CU_ASSERT_EQUAL(nw, 4);
  CU_ASSERT_EQUAL(ng, 4);
  for (int e = 0; e < nw && e < ng; e++) {
    if (fabs(got[e] - want[e]) > 2e-4 + 1e-3 * fabs(want[e]))
      fprintf(stderr, "\n  epoch %d: trainer loss %.4f, dy2stc train %.4f", e + 1, got[e],
              want[e]);
    CU_ASSERT(fabs(got[e] - want[e]) <= 2e-4 + 1e-3 * fabs(want[e]));
  }
  CU_ASSERT(ng == 4 && got[3] < got[0]); /* it learns */
  /* a label out of range stops the compiled step (NAME_ERR_INDEX), never a
   * read out of bounds: the trainer says so and fails */
  y[N - 1] = 7;
  snprintf(path, sizeof path, "%s/bad", dir);
  sh("mkdir -p %s", path);
  CU_ASSERT_FATAL(dy_test_write_samples(path, x, N, 6, y));
  rc = dy_test_sh(LOG("bad.log"),
                  "cd %s && ./trainer --input x=bad/x.npy --labels bad/y.npy --epochs 1 "
                  "--no-shuffle -o bad/state",
                  dir);
  CU_ASSERT_EQUAL(rc, 1);
  log = dy_test_slurp(LOG("bad.log"));
  CU_ASSERT(log && strstr(log, "label is out of range"));
  free(log);
  /* the trained parameters into the model, against dy2stc train's */
  rc = dy_test_sh(LOG("params.log"),
                  "cd %s && %s params mlp.dymodel --from state -o merged", dir, DY2STC_PATH);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  dy_program *a = NULL, *b = NULL;
  snprintf(path, sizeof path, "%s/trained.dymodel", dir);
  DY_ASSERT_OK(dy_model_load(path, &a, &err), &err);
  snprintf(path, sizeof path, "%s/merged.dymodel", dir);
  DY_ASSERT_OK(dy_model_load(path, &b, &err), &err);
  int compared = 0;
  for (int i = 0; i < a->n_vars; i++) {
    const dy_var *va = a->vars[i];
    if (!va->persistable || va->type.dtype != DY_F32)
      continue;
    int j = dy_program_find_var(b, va->name);
    CU_ASSERT_FATAL(j >= 0);
    const float *fa = va->data, *fb = b->vars[j]->data;
    int bad = 0;
    for (int64_t k = 0; k < dy_type_numel(&va->type); k++)
      bad += !close_rel(fb[k], fa[k], 1e-3);
    if (bad)
      fprintf(stderr, "\n  %s: %d elements differ", va->name, bad);
    CU_ASSERT_EQUAL(bad, 0);
    compared++;
  }
  CU_ASSERT_EQUAL(compared, 4);
  dy_program_free(a);
  dy_program_free(b);
}

static void test_trainer_matches_dy2stc_train(void) { trainer_vs_train("e2e", false); }

/* With dropout the trainer draws each step's seeds where dy2stc train's
 * dy_program_train_step does, so the losses and the shuffles stay equal
 * over the epochs. */
static void test_trainer_dropout_matches_dy2stc_train(void) {
  trainer_vs_train("e2e_dropout", true);
  /* the firmware sources say how many seeds a step takes and where */
  int rc = dy_test_sh(WORK "/e2e_dropout/emit_c.log",
                      "cd %s/e2e_dropout && %s compile mlp.dymodel --train --loss cross_entropy "
                      "--optimizer sgd --emit c -o step",
                      WORK, DY2STC_PATH);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *h = dy_test_slurp(WORK "/e2e_dropout/step.h");
  CU_ASSERT(h && strstr(h, "#define STEP_N_DROPOUT_SEEDS 3\n"));
  CU_ASSERT(h && strstr(h, "uint64_t *step_dropout_seeds(void *state);"));
  free(h);
}

/* The inference main.c cannot drive a Program with state: a clear error
 * that points at --train, not C that does not compile. */
static void test_inference_main_refuses_state(void) {
  char *text = mlp_text(3);
  dy_program *p = training_program(text, OPT_SGD);
  free(text);
  dy_compile_options o = dy_compile_options_default();
  o.name = "refuse";
  o.emit_main = true;
  dy_codegen_output co = {0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 4, &err), &err);
  CU_ASSERT_EQUAL(dy_compile_program(p, &o, &co, NULL, &err), DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--train"));
  dy_codegen_output_free(&co);
  dy_program_free(p);
}

/* The dropout seeds are the ops' seed attributes (distinct, set when the
 * training step is built), kept through save and load and read by the
 * generated code, which is the same bytes on every compile; the dropout of
 * p = 0 stays in the step (its seed is drawn), so there are 3. */
static dy_program *reload(const char *path) {
  dy_program *q = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(path, &q, &err), &err);
  return q;
}

static char *compiled_step(dy_program *p, char **header) {
  dy_compile_options o = dy_compile_options_default();
  o.name = "seeds";
  dy_codegen_output co = {0};
  dy_error err = {0};
  DY_ASSERT_OK(dy_compile_program(p, &o, &co, NULL, &err), &err);
  char *c = co.source;
  *header = co.header;
  co.source = co.header = NULL;
  dy_codegen_output_free(&co);
  return c;
}

static void test_dropout_seed_attrs(void) {
  char *text = mlp_dropout_text(3);
  dy_program *p = training_program(text, OPT_SGD);
  free(text);
  dy_error err = {0};
  int n = 0, p0 = 0; /* the forward's seeds 11, 5 (p = 0) and 3, and the gradient's */
  for (int k = 0; k < p->blocks[0]->n_ops; k++) {
    const dy_op *op = p->blocks[0]->ops[k];
    if (op->kind != DY_OP_DROPOUT)
      continue;
    dy_dropout_attrs a = dy_dropout_attrs_get(op);
    CU_ASSERT(a.seed == 11 || a.seed == 5 || a.seed == 3);
    p0 += a.seed == 5;
    n++;
  }
  CU_ASSERT(n >= 3 && p0 >= 1);
  int64_t seeds[8];
  CU_ASSERT_EQUAL(dy_codegen_dropout_seeds(p, seeds, 8), 3);
  CU_ASSERT(seeds[0] == 11 && seeds[1] == 5 && seeds[2] == 3);
  mkdir(WORK, 0777);
  DY_ASSERT_OK(dy_model_save(p, WORK "/seeds.dymodel", &err), &err);
  dy_program *q = reload(WORK "/seeds.dymodel");
  CU_ASSERT_EQUAL_FATAL(q->blocks[0]->n_ops, p->blocks[0]->n_ops);
  for (int k = 0; k < p->blocks[0]->n_ops; k++) {
    if (p->blocks[0]->ops[k]->kind != DY_OP_DROPOUT)
      continue;
    dy_dropout_attrs a = dy_dropout_attrs_get(p->blocks[0]->ops[k]);
    dy_dropout_attrs b = dy_dropout_attrs_get(q->blocks[0]->ops[k]);
    CU_ASSERT(a.seed == b.seed && a.p == b.p && a.is_test == b.is_test);
  }
  dy_program_free(p);
  char *h1, *h2;
  char *c1 = compiled_step(q, &h1);
  dy_program_free(q);
  q = reload(WORK "/seeds.dymodel");
  char *c2 = compiled_step(q, &h2);
  dy_program_free(q);
  CU_ASSERT_FATAL(c1 && c2 && h1 && h2);
  CU_ASSERT_STRING_EQUAL(c1, c2);
  CU_ASSERT_STRING_EQUAL(h1, h2);
  CU_ASSERT(strstr(h1, "#define SEEDS_N_DROPOUT_SEEDS 3\n") != NULL);
  CU_ASSERT(strstr(c1, "[1] = 5ull;") != NULL); /* the p = 0 dropout's, in the state */
  free(c1);
  free(c2);
  free(h1);
  free(h2);
}

void dy_test_register(void) {
  DY_SUITE("train_codegen");
  DY_TEST(test_mlp_sgd);
  DY_TEST(test_mlp_adam);
  DY_TEST(test_mlp_momentum);
  DY_TEST(test_mlp_adamw);
  DY_TEST(test_cnn_sgd);
  DY_TEST(test_cnn_adam);
  DY_TEST(test_mlp_dropout_reseeded);
  DY_TEST(test_trainer_matches_dy2stc_train);
  DY_TEST(test_trainer_dropout_matches_dy2stc_train);
  DY_TEST(test_inference_main_refuses_state);
  DY_TEST(test_dropout_seed_attrs);
}
