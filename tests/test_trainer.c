/* test_trainer.c - the trainers as tools a user can leave running (issue 28
 * item 4), `dy2stc train` and the compiled trainer (`dy2stc compile
 * --train`) side by side on one MLP (6-16-3, Adam, batch 8, 45 samples):
 *
 *   - range checks: --batch, --epochs, --lr (1e39, inf, nan) and a step
 *     schedule that overflows are refused with one line naming the option;
 *   - a NaN in the data and a gradient that overflows stop both the same
 *     way (the same message after "PROG: "), exit 1;
 *   - after every failed run the output (OUT.dymodel/.dyparams, the state
 *     directory, the checkpoint) is byte for byte what it was;
 *   - checkpoint and resume: 2 epochs + 2 resumed equal 4 straight bit for
 *     bit in each trainer; each trainer resumes the other's checkpoint
 *     (within rounding); a resume with other options is refused;
 *   - dy2stc params refuses a state file holding a NaN;
 *   - a validation set (--val-split, --val-input/--val-labels): the same
 *     numbers either way, and those of the trained model scored here;
 *     the compiled trainer's validation loss within rounding of them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_test.h"

#define DY2STC DY2STC_PATH
#define WORK DY_BUILD_DIR "/trainer"
#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)
#define OPTS "--loss cross_entropy --optimizer adam --lr 0.01 --batch 8"

enum { N = 45, F = 6 };
static float xs[N * F];
static int64_t ys[N];

static uint64_t rng = 99;
static float frand(void) { /* uniform in [-1, 1) */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

/* WORK/mlp.dymodel, the data WORK/x.npy + y.npy and the compiled trainer
 * WORK/trainer; a good run of each (WORK/out, WORK/state) to compare the
 * failed runs' leftovers with. */
static bool ready;
static void setup(void) {
  if (ready)
    return;
  dy_test_sh(NULL, "rm -rf " WORK " && mkdir -p " WORK);
  dy_seed(11);
  dy_layer *net = dy_sequential_new();
  dy_sequential_append(net, dy_linear_new(F, 16));
  dy_sequential_append(net, dy_relu_layer_new());
  dy_sequential_append(net, dy_linear_new(16, 3));
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 2, .shape = {-1, F}};
  dy_error err = {0};
  DY_ASSERT_OK(dy_jit_save_ex(net, &spec, 1, WORK "/mlp", DY_SAVE_EVAL, &err), &err);
  dy_layer_free(net);
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < F; k++)
      xs[i * F + k] = frand();
    ys[i] = xs[i * F] > 0 ? (xs[i * F + 1] > 0 ? 2 : 1) : 0;
  }
  CU_ASSERT_FATAL(dy_test_write_samples(WORK, xs, N, F, ys));
  CU_ASSERT_EQUAL_FATAL(sh("cd " WORK " && %s compile mlp.dymodel --train " OPTS " -o trainer",
                           DY2STC), 0);
  CU_ASSERT_EQUAL_FATAL(sh("cd " WORK " && %s train mlp.dymodel --input x=x.npy --labels y.npy "
                           OPTS " --epochs 2 --shuffle 5 -o out --checkpoint ck && "
                           "./trainer --input x=x.npy --labels y.npy --epochs 2 --shuffle 5 "
                           "-o state && cp -r state state.ref && cp -r ck ck.ref && "
                           "cp out.dyparams out.ref",
                           DY2STC), 0);
  ready = true;
}

/* The outputs of the good runs are as they were. */
static bool untouched(void) {
  return sh("cd " WORK " && diff -r state state.ref && diff -r ck ck.ref && "
            "cmp out.dyparams out.ref") == 0;
}

/* stderr's first line after "PROG: " (static buffer) and its line count. */
static const char *message(const char *path, int *lines) {
  static char buf[2048];
  char *e = dy_test_slurp(path);
  buf[0] = '\0';
  *lines = 0;
  for (const char *s = e; s && *s; s++)
    *lines += *s == '\n';
  const char *colon = e ? strstr(e, ": ") : NULL;
  if (colon)
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
  free(e);
  return buf;
}

/* Run cmd (in WORK, stderr to WORK/err.txt); expect exit status want, one
 * line (usage errors of the compiled trainer add its usage line) holding
 * n1 and n2, and the good runs' outputs untouched. The message is copied
 * into msg when given. */
static void expect(int want, bool one_line, const char *n1, const char *n2, char *msg,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void expect(int want, bool one_line, const char *n1, const char *n2, char *msg,
                   const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int rc = dy_test_sh(NULL, "cd " WORK " && %s >/dev/null 2>err.txt", cmd);
  int lines;
  const char *m = message(WORK "/err.txt", &lines);
  bool ok = rc == want && (!one_line || lines == 1) && strstr(m, n1) && (!n2 || strstr(m, n2));
  if (!ok)
    fprintf(stderr, "\n  %s: exit %d (want %d), %d lines: %s", cmd, rc, want, lines, m);
  CU_ASSERT(ok);
  CU_ASSERT(untouched());
  if (msg)
    strcpy(msg, m);
}

#define TRAIN DY2STC " train mlp.dymodel --input x=x.npy --labels y.npy " OPTS \
                     " -o out --checkpoint ck"
#define TRAINER "./trainer --input x=x.npy --labels y.npy -o state"

static void test_option_ranges(void) {
  setup();
  CU_ASSERT_FATAL(ready);
  expect(1, true, "--batch 9223372036854775807", "above the 45 training samples", NULL,
         TRAIN " --batch 9223372036854775807");
  expect(1, true, "--epochs 4611686018427387904", "2^53", NULL,
         TRAIN " --epochs 4611686018427387904");
  expect(2, true, "--lr", "'1e39'", NULL, TRAIN " --lr 1e39");
  expect(2, true, "--lr", "'inf'", NULL, TRAIN " --lr inf");
  expect(2, true, "--lr", "'nan'", NULL, TRAIN " --lr nan");
  expect(2, true, "--weight-decay", "'1e39'", NULL, TRAIN " --weight-decay 1e39");
  expect(1, true, "--lr-schedule step:1:", "beyond a float", NULL,
         TRAIN " --lr-schedule step:1:1e30 --epochs 3");
  /* the compiled trainer: its maximum batch is 8 */
  expect(2, false, "--batch 9223372036854775807", "maximum batch", NULL,
         TRAINER " --epochs 1 --batch 9223372036854775807");
  expect(1, true, "--epochs 4611686018427387904", "2^53", NULL,
         TRAINER " --epochs 4611686018427387904");
  expect(2, false, "--lr", "'1e39'", NULL, TRAINER " --epochs 1 --lr 1e39");
  expect(2, false, "--lr", "'inf'", NULL, TRAINER " --epochs 1 --lr inf");
  expect(2, false, "--lr", "'nan'", NULL, TRAINER " --epochs 1 --lr nan");
  /* a step schedule compiled into a trainer overflows at run time, when
   * the epochs are known */
  CU_ASSERT_EQUAL_FATAL(sh("cd " WORK " && %s compile mlp.dymodel --train " OPTS
                           " --lr-schedule step:1:1e30 -o trainer_step", DY2STC), 0);
  expect(1, true, "--lr-schedule step:1:", "beyond a float", NULL,
         "./trainer_step --input x=x.npy --labels y.npy --epochs 3 -o state");
  /* a batch above the samples: 5 of them */
  CU_ASSERT_FATAL(sh("mkdir -p " WORK "/five") == 0);
  CU_ASSERT_FATAL(dy_test_write_samples(WORK "/five", xs, 5, F, ys));
  expect(1, true, "--batch 8: above the 5 training samples", NULL, NULL,
         "./trainer --input x=five/x.npy --labels five/y.npy --epochs 1 --batch 8 -o state");
  expect(1, true, "--batch 8: above the 5 training samples", NULL, NULL,
         DY2STC " train mlp.dymodel --input x=five/x.npy --labels five/y.npy " OPTS
                " -o out --checkpoint ck");
}

/* Data files WORK/sub/x.npy, y.npy: the samples with x scaled and one
 * element set to bad (unless it is 0). */
static void write_bad(const char *sub, float scale, float bad) {
  float x[N * F];
  for (int i = 0; i < N * F; i++)
    x[i] = xs[i] * scale;
  if (bad != 0)
    x[44 * F + 3] = bad;
  char dir[512];
  snprintf(dir, sizeof dir, WORK "/%s", sub);
  CU_ASSERT_FATAL(sh("mkdir -p %s", dir) == 0);
  CU_ASSERT_FATAL(dy_test_write_samples(dir, x, N, F, ys));
}

/* Both trainers on WORK/sub's data: exit 1, the same message holding
 * needle. */
static void both_stop(const char *sub, const char *needle) {
  char a[2048], b[2048];
  expect(1, true, needle, NULL, a,
         DY2STC " train mlp.dymodel --input x=%s/x.npy --labels %s/y.npy " OPTS
                " --epochs 2 --shuffle 5 -o out --checkpoint ck", sub, sub);
  expect(1, true, needle, NULL, b,
         "./trainer --input x=%s/x.npy --labels %s/y.npy --epochs 2 --shuffle 5 -o state", sub,
         sub);
  if (strcmp(a, b) != 0)
    fprintf(stderr, "\n  dy2stc train: %s\n  the trainer:  %s", a, b);
  CU_ASSERT_STRING_EQUAL(a, b);
}

static void test_non_finite(void) {
  setup();
  CU_ASSERT_FATAL(ready);
  write_bad("nan", 1, NAN);
  both_stop("nan", "input 'x' (nan/x.npy): element 3 of sample 44 is nan: training data "
                   "must be finite");
  write_bad("inf", 1, INFINITY);
  both_stop("inf", "element 3 of sample 44 is inf");
  /* finite data of 1e36: the loss stays finite, but the gradient's square
   * in Adam's second moment overflows in the first step */
  write_bad("huge", 1e36f, 0);
  both_stop("huge", "epoch 1 step 0: ");
}

/* Every state file and the checkpoint of two directories are the same
 * bytes. */
static bool same_dirs(const char *a, const char *b) {
  return sh("cd " WORK " && diff -r %s %s", a, b) == 0;
}

/* dy2stc params refuses a state file with a NaN (what a trainer without
 * the checks wrote), and takes the good state. */
static void test_params_refuses_nan(void) {
  setup();
  CU_ASSERT_FATAL(ready);
  CU_ASSERT_EQUAL(sh("cd " WORK " && rm -rf nanstate && cp -r state.ref nanstate && "
                     "%s params mlp.dymodel --from nanstate -o merged", DY2STC), 0);
  float w[16 * F];
  for (int i = 0; i < 16 * F; i++)
    w[i] = 0.5f;
  w[7] = NAN;
  dy_tensor *t = dy_tensor_from_data(DY_F32, 2, (int64_t[]){F, 16}, w);
  dy_error err = {0};
  DY_ASSERT_OK(dy_npy_write(WORK "/nanstate/linear.weight.npy", t, &err), &err);
  dy_tensor_free(t);
  expect(1, true, "nanstate/linear.weight.npy holds nan (element 7)", "'linear.weight'", NULL,
         DY2STC " params mlp.dymodel --from nanstate -o out");
}

static void test_resume(void) {
  setup();
  CU_ASSERT_FATAL(ready);
  /* the compiled trainer: 4 straight = 2 (state, from setup) + 2 resumed */
  CU_ASSERT_EQUAL(sh("cd " WORK " && ./trainer --input x=x.npy --labels y.npy --epochs 4 "
                     "--shuffle 5 -o state4 > straight.log"), 0);
  CU_ASSERT_EQUAL(sh("cd " WORK " && ./trainer --input x=x.npy --labels y.npy --epochs 4 "
                     "--shuffle 5 --resume state -o resumed > resumed.log"), 0);
  CU_ASSERT(same_dirs("state4", "resumed"));
  CU_ASSERT(sh("cd " WORK " && grep '^epoch [34] ' straight.log | cut -d' ' -f1-4 > a.txt && "
               "grep '^epoch ' resumed.log | cut -d' ' -f1-4 > b.txt && cmp a.txt b.txt && "
               "test $(wc -l < b.txt) = 2") == 0);
  /* dy2stc train: the same with its --checkpoint (ck, 2 epochs, from setup) */
  CU_ASSERT_EQUAL(sh("cd " WORK " && %s train mlp.dymodel --input x=x.npy --labels y.npy " OPTS
                     " --epochs 4 --shuffle 5 -o full4 --checkpoint ck4 > train4.log && "
                     "%s train mlp.dymodel --input x=x.npy --labels y.npy " OPTS
                     " --epochs 4 --shuffle 5 -o res4 --resume ck --checkpoint ckr > res4.log",
                     DY2STC, DY2STC), 0);
  CU_ASSERT(sh("cd " WORK " && cmp full4.dyparams res4.dyparams && diff -r ck4 ckr") == 0);
  /* either reads the other's checkpoint: the trainer goes on from dy2stc
   * train's 2 epochs to epoch 4, the losses those of dy2stc train's run
   * within 2e-4 + 1e-3 relative (the two trainers round apart) */
  CU_ASSERT_EQUAL(sh("cd " WORK " && ./trainer --input x=x.npy --labels y.npy --epochs 4 "
                     "--shuffle 5 --resume ck -o cross > cross.log"), 0);
  CU_ASSERT(sh("cd " WORK " && grep '^epoch [34] ' train4.log > a.txt && "
               "grep '^epoch ' cross.log > b.txt && paste a.txt b.txt | awk '"
               "{ d = $4 - $11; if (d < 0) d = -d; if ($2 != $9 || d > 2e-4 + 1e-3 * $4) bad++ }"
               " END { exit bad > 0 || NR != 2 }'") == 0);
  /* and dy2stc train goes on from the compiled trainer's 2 epochs */
  CU_ASSERT_EQUAL(sh("cd " WORK " && %s train mlp.dymodel --input x=x.npy --labels y.npy " OPTS
                     " --epochs 4 --shuffle 5 -o back --resume state.ref > back.log", DY2STC),
                  0);
  CU_ASSERT(sh("cd " WORK " && grep '^epoch [34] ' straight.log > a.txt && "
               "grep '^epoch ' back.log > b.txt && paste a.txt b.txt | awk '"
               "{ d = $4 - $11; if (d < 0) d = -d; if ($2 != $9 || d > 2e-4 + 1e-3 * $4) bad++ }"
               " END { exit bad > 0 || NR != 2 }'") == 0);
  /* a cosine schedule spans the planned epochs: a resume with others is
   * refused, by both */
  CU_ASSERT_EQUAL_FATAL(sh("cd " WORK " && %s compile mlp.dymodel --train " OPTS
                           " --lr-schedule cosine:2 -o trainer_cos && ./trainer_cos --input "
                           "x=x.npy --labels y.npy --epochs 2 --shuffle 5 -o cos", DY2STC), 0);
  expect(1, true, "--epochs 4: the checkpoint's cosine schedule spans 2 epochs", NULL, NULL,
         "./trainer_cos --input x=x.npy --labels y.npy --epochs 4 --shuffle 5 --resume cos "
         "-o state");
  expect(1, true, "--epochs 4: the checkpoint's cosine schedule spans 2 epochs", NULL, NULL,
         TRAIN " --epochs 4 --shuffle 5 --lr-schedule cosine:2 --resume cos");
  /* a resume with other options, or nothing left to do, is refused */
  expect(1, true, "--batch 4: the checkpoint in state.ref was trained with --batch 8", NULL,
         NULL, TRAINER " --epochs 4 --shuffle 5 --batch 4 --resume state.ref");
  expect(1, true, "--epochs 2: the checkpoint in state.ref has trained 2 epochs already", NULL,
         NULL, TRAINER " --epochs 2 --shuffle 5 --resume state.ref");
  expect(1, true, "--shuffle: the checkpoint in ck.ref was trained with --shuffle 5", NULL,
         NULL, TRAIN " --epochs 4 --shuffle 6 --resume ck.ref");
  expect(1, true, "--lr 0.02", "--lr 0.01", NULL,
         TRAIN " --epochs 4 --shuffle 5 --lr 0.02 --resume ck.ref");
}

/* The loss and accuracy lines of a log: "val loss V accuracy A%" of its
 * last epoch. */
static bool last_val(const char *log, double *loss, double *acc) {
  char *t = dy_test_slurp(log);
  char *v = NULL;
  for (char *s = t; s && (s = strstr(s, " val loss ")) != NULL; s++)
    v = s;
  bool ok = v && sscanf(v, " val loss %lf accuracy %lf%%", loss, acc) == 2;
  free(t);
  return ok;
}

static void test_validation(void) {
  setup();
  CU_ASSERT_FATAL(ready);
  /* --val-split 0.2 holds out the last 9 samples: the same as training on
   * the first 36 with the 9 as --val-input/--val-labels */
  CU_ASSERT_FATAL(sh("mkdir -p " WORK "/head " WORK "/tail") == 0);
  CU_ASSERT_FATAL(dy_test_write_samples(WORK "/head", xs, 36, F, ys));
  CU_ASSERT_FATAL(dy_test_write_samples(WORK "/tail", xs + 36 * F, 9, F, ys + 36));
  CU_ASSERT_EQUAL_FATAL(sh("cd " WORK " && %s train mlp.dymodel --input x=x.npy --labels y.npy "
                           OPTS " --epochs 3 --shuffle 5 --val-split 0.2 -o split > split.log "
                           "&& %s train mlp.dymodel --input x=head/x.npy --labels head/y.npy "
                           OPTS " --epochs 3 --shuffle 5 --val-input x=tail/x.npy --val-labels "
                           "tail/y.npy -o given > given.log",
                           DY2STC, DY2STC), 0);
  CU_ASSERT(sh("cd " WORK " && grep '^epoch' split.log | cut -d' ' -f1-4,8- > a.txt && "
               "grep '^epoch' given.log | cut -d' ' -f1-4,8- > b.txt && cmp a.txt b.txt && "
               "grep -c 'val loss' a.txt | grep -qx 3") == 0);
  /* the compiled trainer: the same split either way, and its validation
   * loss (the step at rate 0, the state put back: training semantics,
   * which for this MLP are eval's) and training loss within rounding of
   * dy2stc train's */
  CU_ASSERT_EQUAL(sh("cd " WORK " && ./trainer --input x=x.npy --labels y.npy --epochs 3 "
                     "--shuffle 5 --val-split 0.2 -o vsplit > tsplit.log && ./trainer "
                     "--input x=head/x.npy --labels head/y.npy --epochs 3 --shuffle 5 "
                     "--val-input x=tail/x.npy --val-labels tail/y.npy -o vgiven > tgiven.log"),
                  0);
  CU_ASSERT(sh("cd " WORK " && grep '^epoch' tsplit.log | cut -d' ' -f1-4,8- > a.txt && "
               "grep '^epoch' tgiven.log | cut -d' ' -f1-4,8- > b.txt && cmp a.txt b.txt && "
               "grep '^epoch' split.log | paste - a.txt | awk '"
               "function off(a, b) { d = a - b; if (d < 0) d = -d; return d > 2e-4 + 1e-3 * a }"
               "{ if ($2 != $14 || off($4, $16) || off($10, $19)) bad++ }"
               " END { exit bad > 0 || NR != 3 }'") == 0);
  /* the last epoch's numbers are the trained model's on the 9 samples */
  double loss = 0, acc = 0;
  CU_ASSERT_FATAL(last_val(WORK "/split.log", &loss, &acc));
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_model_load(WORK "/split.dymodel", &p, &err), &err);
  dy_tensor *x = dy_tensor_from_data(DY_F32, 2, (int64_t[]){9, F}, xs + 36 * F), *out = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &out, 1, &err), &err);
  double want = 0;
  int hits = 0;
  const float *o = out->data;
  for (int i = 0; i < 9; i++) {
    const float *r = o + i * 3;
    int best = r[1] > r[0] ? 1 : 0;
    best = r[2] > r[best] ? 2 : best;
    double mx = r[best], lse = mx + log(exp(r[0] - mx) + exp(r[1] - mx) + exp(r[2] - mx));
    want += (lse - r[ys[36 + i]]) / 9;
    hits += best == ys[36 + i];
  }
  if (fabs(loss - want) > 6e-5 || fabs(acc - 100.0 * hits / 9) > 6e-3)
    fprintf(stderr, "\n  val loss %.4f accuracy %.2f%%, want %.4f %.2f%%", loss, acc, want,
            100.0 * hits / 9);
  CU_ASSERT(fabs(loss - want) <= 6e-5);
  CU_ASSERT(fabs(acc - 100.0 * hits / 9) <= 6e-3);
  dy_tensor_free(x);
  dy_tensor_free(out);
  dy_program_free(p);
  /* usage errors */
  expect(2, true, "--val-split needs a fraction", "'1.5'", NULL, TRAIN " --val-split 1.5");
  expect(2, true, "--val-input and --val-labels go together", NULL, NULL,
         TRAIN " --val-labels y.npy");
}

void dy_test_register(void) {
  DY_SUITE("trainer");
  DY_TEST(test_option_ranges);
  DY_TEST(test_non_finite);
  DY_TEST(test_params_refuses_nan);
  DY_TEST(test_resume);
  DY_TEST(test_validation);
}
