/* test_optim.c - optimizers: the update ops over several steps against a
 * double-precision reference (sgd, weight decay, momentum, Nesterov,
 * Adam's bias correction, AdamW's decoupled decay), clipping by global
 * norm, the learning-rate schedules, the eager optimizer against the same
 * optimizer appended to a Program and run on the static executor (bit for
 * bit over 5 steps), BatchNorm2D's running statistics through
 * batch_norm_stats against the arithmetic it replaced, and the
 * verifier's in-place invariant.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_test.h"
#include "dy_compiler.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float urand(void) { /* [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* A zero tensor of type t, owned by the caller. */
static dy_tensor *zeros(const dy_type *t) { return dy_tensor_new(t->dtype, t->rank, t->shape); }

static void fill(dy_tensor *t) {
  for (int64_t i = 0; i < dy_tensor_numel(t); i++)
    ((float *)t->data)[i] = urand();
}

/* ------------------------------------------------------------------ */
/* the double reference                                                */
/* ------------------------------------------------------------------ */

typedef struct {
  double p, v, m; /* parameter, velocity or second moment, first moment */
} ref_elem;

/* One step of spec on one element with gradient g at step t (1-based). */
static void ref_step(const dy_optimizer_spec *o, ref_elem *e, double g, double lr, int t) {
  double b1 = o->beta1 ? o->beta1 : 0.9, b2 = o->beta2 ? o->beta2 : 0.999;
  double eps = o->epsilon ? o->epsilon : 1e-8;
  switch (o->kind) {
  case DY_OPT_SGD:
    g += o->weight_decay * e->p;
    if (o->momentum > 0) {
      e->v = o->momentum * e->v + g;
      e->p -= lr * (o->nesterov ? g + o->momentum * e->v : e->v);
    } else {
      e->p -= lr * g;
    }
    break;
  case DY_OPT_ADAM:
  case DY_OPT_ADAMW:
    if (o->kind == DY_OPT_ADAMW)
      e->p *= 1 - lr * o->weight_decay;
    else
      g += o->weight_decay * e->p;
    e->m = b1 * e->m + (1 - b1) * g;
    e->v = b2 * e->v + (1 - b2) * g * g;
    e->p -= lr * (e->m / (1 - pow(b1, t))) / (sqrt(e->v / (1 - pow(b2, t))) + eps);
    break;
  }
}

/* A model of two parameters: a Linear(3, 4) (weight [3,4], bias [4]). */
static dy_layer *model(void) {
  dy_seed(7);
  return dy_linear_new(3, 4);
}

/* Run `steps` eager steps of spec on a fresh model with random gradients
 * (and lr decaying as 1/(1+t)); compare each parameter element with the
 * double reference. Returns the largest relative error. */
static double against_reference(const dy_optimizer_spec *spec, int steps) {
  dy_layer *m = model();
  dy_optimizer *o = dy_optimizer_new(spec, m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  CU_ASSERT_EQUAL(dy_optimizer_n_params(o), 2);
  ref_elem ref[2][12];
  for (int k = 0; k < 2; k++) {
    dy_tensor *p = dy_optimizer_param(o, k);
    for (int64_t i = 0; i < dy_tensor_numel(p); i++)
      ref[k][i] = (ref_elem){.p = ((float *)p->data)[i]};
    p->grad = zeros(&p->type);
  }
  double worst = 0;
  dy_error err = {0};
  for (int t = 1; t <= steps; t++) {
    double lr = spec->lr / t;
    dy_optimizer_set_lr(o, lr);
    CU_ASSERT_EQUAL(dy_optimizer_get_lr(o), (float)lr);
    for (int k = 0; k < 2; k++) {
      dy_tensor *p = dy_optimizer_param(o, k);
      fill(p->grad);
      for (int64_t i = 0; i < dy_tensor_numel(p); i++)
        ref_step(spec, &ref[k][i], ((float *)p->grad->data)[i], (float)lr, t);
    }
    DY_ASSERT_OK(dy_optimizer_step(o, &err), &err);
    for (int k = 0; k < 2; k++) {
      dy_tensor *p = dy_optimizer_param(o, k);
      for (int64_t i = 0; i < dy_tensor_numel(p); i++) {
        double got = ((float *)p->data)[i], want = ref[k][i].p;
        double e = fabs(got - want) / (1 + fabs(want));
        worst = e > worst ? e : worst;
      }
    }
  }
  for (int k = 0; k < 2; k++) {
    dy_tensor *p = dy_optimizer_param(o, k);
    dy_tensor_free(p->grad);
    p->grad = NULL;
  }
  dy_optimizer_free(o);
  dy_layer_free(m);
  return worst;
}

#define CHECK_AGAINST_REFERENCE(...)                                           \
  do {                                                                         \
    dy_optimizer_spec s_ = {__VA_ARGS__};                                      \
    double e_ = against_reference(&s_, 6);                                     \
    if (e_ > 2e-6)                                                             \
      fprintf(stderr, "\n  %s: worst relative error %g\n", #__VA_ARGS__, e_);  \
    CU_ASSERT(e_ <= 2e-6);                                                     \
  } while (0)

static void test_sgd_and_momentum(void) {
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_SGD, .lr = 0.1);
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_SGD, .lr = 0.1, .weight_decay = 0.05);
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9);
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_SGD, .lr = 0.05, .momentum = 0.8, .nesterov = true,
                          .weight_decay = 0.01);
}

static void test_adam_and_adamw(void) {
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_ADAM, .lr = 0.01);
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_ADAM, .lr = 0.01, .weight_decay = 0.1,
                          .beta1 = 0.8, .beta2 = 0.99, .epsilon = 1e-6);
  CHECK_AGAINST_REFERENCE(.kind = DY_OPT_ADAMW, .lr = 0.01, .weight_decay = 0.1);
}

/* Bias correction: Adam's first step moves every element by lr * g/(|g| +
 * eps), i.e. lr against the gradient's sign, however small g is. AdamW's
 * decay is decoupled: with a zero gradient p shrinks by (1 - lr*coeff)
 * (the moments stay 0), while Adam's coupled L2 feeds weight_decay * p
 * through the bias-corrected moments and moves p by lr towards 0. */
static void test_bias_correction_and_decoupling(void) {
  dy_error err = {0};
  dy_optimizer_spec adam = {.kind = DY_OPT_ADAM, .lr = 0.01};
  dy_layer *m = model();
  dy_optimizer *o = dy_optimizer_new(&adam, m);
  dy_tensor *w = dy_optimizer_param(o, 0);
  float before[12];
  memcpy(before, w->data, w->nbytes);
  w->grad = zeros(&w->type);
  for (int i = 0; i < 12; i++)
    ((float *)w->grad->data)[i] = (i % 2 ? 1e-3f : -5.0f) * (float)(i + 1);
  DY_ASSERT_OK(dy_optimizer_step(o, &err), &err);
  for (int i = 0; i < 12; i++)
    DY_ASSERT_NEAR(((float *)w->data)[i] - before[i], i % 2 ? -0.01 : 0.01, 1e-6);
  /* the beta pows advanced once */
  CU_ASSERT_EQUAL(((float *)dy_optimizer_state(o, 0, 2)->data)[0], 0.9f);
  CU_ASSERT_EQUAL(((float *)dy_optimizer_state(o, 0, 3)->data)[0], 0.999f);
  /* the bias has no gradient: left alone, no state touched */
  CU_ASSERT_EQUAL(((float *)dy_optimizer_state(o, 1, 2)->data)[0], 1.0f);
  dy_tensor_free(w->grad);
  w->grad = NULL;
  dy_optimizer_free(o);
  dy_layer_free(m);

  for (int decoupled = 0; decoupled < 2; decoupled++) {
    dy_optimizer_spec s = {.kind = decoupled ? DY_OPT_ADAMW : DY_OPT_ADAM, .lr = 0.1,
                           .weight_decay = 0.5};
    m = model();
    o = dy_optimizer_new(&s, m);
    w = dy_optimizer_param(o, 0);
    memcpy(before, w->data, w->nbytes);
    w->grad = zeros(&w->type);
    DY_ASSERT_OK(dy_optimizer_step(o, &err), &err);
    int checked = 0;
    for (int i = 0; i < 12; i++) {
      double p0 = before[i], got = ((float *)w->data)[i];
      if (decoupled) { /* p * (1 - lr * coeff), the moments untouched */
        DY_ASSERT_NEAR(got, (float)p0 * (1.0f - 0.1f * 0.5f), 1e-7);
        checked++;
      } else if (fabs(p0) > 0.15) { /* g = 0.5 p through the moments: lr * sign(p) */
        DY_ASSERT_NEAR(fabs(p0) - fabs(got), 0.1, 1e-5);
        checked++;
      }
    }
    CU_ASSERT(checked >= 4);
      if (decoupled)
      for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(((float *)dy_optimizer_state(o, 0, 1)->data)[i], 0.0f);
    dy_tensor_free(w->grad);
    w->grad = NULL;
    dy_optimizer_free(o);
    dy_layer_free(m);
  }
}

/* Clipping by the global norm of all gradients: norm 13 (5, 12 over two
 * parameters) against clip 6.5 halves every gradient; against clip 20
 * nothing changes. SGD with lr 1 shows the gradient used. */
static void test_clip_by_global_norm(void) {
  dy_error err = {0};
  for (int big = 0; big < 2; big++) {
    dy_optimizer_spec s = {.kind = DY_OPT_SGD, .lr = 1.0, .clip_norm = big ? 20.0 : 6.5};
    dy_layer *m = model();
    dy_optimizer *o = dy_optimizer_new(&s, m);
    dy_tensor *w = dy_optimizer_param(o, 0), *b = dy_optimizer_param(o, 1);
    float w0[12], b0[4];
    memcpy(w0, w->data, sizeof w0);
    memcpy(b0, b->data, sizeof b0);
    w->grad = zeros(&w->type);
    b->grad = zeros(&b->type);
    ((float *)w->grad->data)[0] = 3; /* |g_w| = 5 */
    ((float *)w->grad->data)[5] = 4;
    ((float *)b->grad->data)[3] = -12; /* |g_b| = 12 */
    DY_ASSERT_OK(dy_optimizer_step(o, &err), &err);
    double f = big ? 1.0 : 0.5;
    DY_ASSERT_NEAR(((float *)w->data)[0], w0[0] - 3 * f, 1e-6);
    DY_ASSERT_NEAR(((float *)w->data)[5], w0[5] - 4 * f, 1e-6);
    DY_ASSERT_NEAR(((float *)w->data)[1], w0[1], 0);
    DY_ASSERT_NEAR(((float *)b->data)[3], b0[3] + 12 * f, 1e-6);
    dy_tensor_free(w->grad);
    dy_tensor_free(b->grad);
    w->grad = b->grad = NULL;
    dy_optimizer_free(o);
    dy_layer_free(m);
  }
}

static void test_lr_schedules(void) {
  DY_ASSERT_NEAR(dy_lr_at(NULL, 0.1, 7), 0.1, 0);
  dy_lr_schedule c = {.kind = DY_LR_CONSTANT};
  DY_ASSERT_NEAR(dy_lr_at(&c, 0.1, 1000), 0.1, 0);
  dy_lr_schedule st = {.kind = DY_LR_STEP, .step_size = 3, .gamma = 0.5};
  DY_ASSERT_NEAR(dy_lr_at(&st, 0.1, 0), 0.1, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&st, 0.1, 2), 0.1, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&st, 0.1, 3), 0.05, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&st, 0.1, 8), 0.025, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&st, 0.1, 9), 0.0125, 1e-15);
  /* warm-up over 10 steps, cosine to 0.01 at step 110 */
  dy_lr_schedule cos_ = {.kind = DY_LR_COSINE, .warmup_steps = 10, .total_steps = 110,
                         .min_lr = 0.01};
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 0), 0.0, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 5), 0.5, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 10), 1.0, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 60), 0.01 + 0.99 * 0.5, 1e-12); /* halfway */
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 35), 0.01 + 0.99 * (1 + cos(3.14159265358979323846 / 4)) / 2, 1e-12);
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 110), 0.01, 1e-15);
  DY_ASSERT_NEAR(dy_lr_at(&cos_, 1.0, 500), 0.01, 1e-15);
  /* names */
  dy_opt_kind k;
  CU_ASSERT(dy_opt_from_name("adamw", &k) && k == DY_OPT_ADAMW);
  CU_ASSERT(!dy_opt_from_name("lamb", &k));
  CU_ASSERT_STRING_EQUAL(dy_opt_name(DY_OPT_SGD), "sgd");
}

/* ------------------------------------------------------------------ */
/* eager == Program                                                    */
/* ------------------------------------------------------------------ */

/* The same model's parameters as persistable trainable vars p0, p1 of a
 * Program whose gradients are feeds g0, g1, with the optimizer appended
 * (its learning_rate feed comes last); the fetch is p0. */
static dy_program *optimizer_program(const dy_optimizer_spec *spec, dy_optimizer *o,
                                     dy_error *err) {
  dy_program *p = dy_program_new();
  int params[2], grads[2];
  for (int k = 0; k < 2; k++) {
    const dy_tensor *t = dy_optimizer_param(o, k);
    char name[8];
    snprintf(name, sizeof name, "p%d", k);
    params[k] = dy_program_add_var(p, name, &t->type);
    dy_program_set_data(p, params[k], t->data, t->nbytes, err);
    p->vars[params[k]]->trainable = true;
    snprintf(name, sizeof name, "g%d", k);
    grads[k] = dy_program_add_var(p, name, &t->type);
    dy_program_add_feed(p, grads[k], err);
  }
  dy_program_add_fetch(p, params[0], err);
  if (dy_program_append_optimizer(p, spec, params, grads, 2, err) || dy_verify(p, err)) {
    dy_program_free(p);
    return NULL;
  }
  return p;
}

static bool same_bits(const void *a, const void *b, size_t n, const char *what, int step) {
  if (memcmp(a, b, n) == 0)
    return true;
  fprintf(stderr, "\n  %s differs eager vs executor after step %d\n", what, step);
  return false;
}

static void eager_equals_program(const dy_optimizer_spec *spec) {
  dy_error err = {0};
  dy_layer *m = model();
  dy_optimizer *o = dy_optimizer_new(spec, m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  dy_program *p = optimizer_program(spec, o, &err);
  if (!p)
    fprintf(stderr, "\n  optimizer Program: %s\n", err.msg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT(dy_program_is_training(p));
  CU_ASSERT_EQUAL(p->n_feeds, 3);
  CU_ASSERT_STRING_EQUAL(p->vars[p->feeds[2]]->name, "learning_rate");
  int ns = dy_optimizer_state_count(spec);
  dy_lr_schedule sched = {.kind = DY_LR_COSINE, .warmup_steps = 2, .total_steps = 5,
                          .min_lr = spec->lr / 10};
  for (int k = 0; k < 2; k++) {
    dy_tensor *t = dy_optimizer_param(o, k);
    t->grad = zeros(&t->type);
  }
  dy_type scalar = {.dtype = DY_F32, .rank = 0};
  dy_tensor *lr = zeros(&scalar);
  bool ok = true;
  for (int step = 0; step < 5 && ok; step++) {
    double rate = dy_lr_at(&sched, spec->lr, step + 1);
    dy_optimizer_set_lr(o, rate);
    ((float *)lr->data)[0] = (float)rate;
    for (int k = 0; k < 2; k++)
      fill(dy_optimizer_param(o, k)->grad);
    DY_ASSERT_OK(dy_optimizer_step(o, &err), &err);
    dy_tensor *feeds[3] = {dy_optimizer_param(o, 0)->grad, dy_optimizer_param(o, 1)->grad, lr};
    dy_tensor *out = NULL;
    DY_ASSERT_OK(dy_executor_run(p, feeds, 3, &out, 1, &err), &err);
    ok &= same_bits(out->data, dy_optimizer_param(o, 0)->data, out->nbytes, "fetched p0", step);
    dy_tensor_free(out);
    for (int k = 0; k < 2; k++) {
      char name[64];
      snprintf(name, sizeof name, "p%d", k);
      const dy_tensor *t = dy_optimizer_param(o, k);
      const dy_var *v = p->vars[dy_program_find_var(p, name)];
      ok &= same_bits(v->data, t->data, t->nbytes, name, step);
      for (int i = 0; i < ns; i++) {
        snprintf(name, sizeof name, "p%d@%s", k, dy_optimizer_state_name(spec, i));
        int id = dy_program_find_var(p, name);
        CU_ASSERT_FATAL(id >= 0);
        const dy_tensor *s = dy_optimizer_state(o, k, i);
        ok &= same_bits(p->vars[id]->data, s->data, s->nbytes, name, step);
      }
    }
  }
  CU_ASSERT(ok);
  /* the parameters did move */
  const dy_tensor *w = dy_optimizer_param(o, 0);
  dy_seed(7);
  dy_layer *fresh = dy_linear_new(3, 4);
  CU_ASSERT(memcmp(fresh->params[0]->data, w->data, w->nbytes) != 0);
  dy_layer_free(fresh);
  for (int k = 0; k < 2; k++) {
    dy_tensor_free(dy_optimizer_param(o, k)->grad);
    dy_optimizer_param(o, k)->grad = NULL;
  }
  dy_tensor_free(lr);
  dy_program_free(p);
  dy_optimizer_free(o);
  dy_layer_free(m);
}

static void test_eager_equals_program(void) {
  eager_equals_program(&(dy_optimizer_spec){.kind = DY_OPT_SGD, .lr = 0.1, .weight_decay = 0.01});
  eager_equals_program(&(dy_optimizer_spec){.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9,
                                            .nesterov = true, .clip_norm = 0.5});
  eager_equals_program(&(dy_optimizer_spec){.kind = DY_OPT_ADAM, .lr = 0.01, .weight_decay = 0.1});
  eager_equals_program(&(dy_optimizer_spec){.kind = DY_OPT_ADAMW, .lr = 0.01, .weight_decay = 0.1,
                                            .clip_norm = 1.0});
}

/* A copy of p through .dymodel + .dyparams (NULL on failure, printed). */
static dy_program *copy_program(const dy_program *p) {
  uint8_t *buf = NULL;
  size_t len = 0;
  dy_program *q = NULL;
  dy_error err = {0};
  dy_status s = dy_dymodel_encode(p, &buf, &len, &err);
  if (!s)
    s = dy_dymodel_decode(buf, len, &q, &err);
  free(buf);
  buf = NULL;
  if (!s)
    s = dy_dyparams_encode(p, &buf, &len, &err);
  if (!s)
    s = dy_dyparams_decode(q, buf, len, &err);
  free(buf);
  if (s) {
    fprintf(stderr, "\n  copy_program: %s\n", err.msg);
    dy_program_free(q);
    return NULL;
  }
  return q;
}

/* The Program's optimizer ops and state: names, flags, initial values. */
static void test_program_optimizer_state(void) {
  dy_error err = {0};
  dy_optimizer_spec spec = {.kind = DY_OPT_ADAM, .lr = 0.01, .clip_norm = 1.0};
  dy_layer *m = model();
  dy_optimizer *o = dy_optimizer_new(&spec, m);
  dy_program *p = optimizer_program(&spec, o, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  const char *names[] = {"p1@moment1", "p1@moment2", "p1@beta1_pow", "p1@beta2_pow"};
  for (int i = 0; i < 4; i++) {
    int id = dy_program_find_var(p, names[i]);
    CU_ASSERT_FATAL(id >= 0);
    const dy_var *v = p->vars[id];
    CU_ASSERT(v->persistable && !v->trainable);
    CU_ASSERT_EQUAL(((float *)v->data)[0], i < 2 ? 0.0f : 1.0f);
    CU_ASSERT_EQUAL(v->type.rank, i < 2 ? 1 : 1);
    CU_ASSERT_EQUAL(v->type.shape[0], i < 2 ? 4 : 1);
  }
  int n_adam = 0;
  for (int k = 0; k < p->blocks[0]->n_ops; k++)
    n_adam += p->blocks[0]->ops[k]->kind == DY_OP_ADAM;
  CU_ASSERT_EQUAL(n_adam, 2);
  /* appending twice names the state var that exists */
  int params[] = {dy_program_find_var(p, "p0")}, grads[] = {dy_program_find_var(p, "g0")};
  CU_ASSERT_EQUAL(dy_program_append_optimizer(p, &spec, params, grads, 1, &err),
                  DY_STATUS_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "p0@moment1"));
  /* the memory plan places the clipping's intermediates, never the
   * parameters or the state the updates write */
  dy_memplan_result mr;
  DY_ASSERT_OK(dy_program_bound_sym(p, "batch", 1, &err), &err);
  DY_ASSERT_OK(dy_memplan(p, &mr, &err), &err);
  CU_ASSERT(mr.n_planned > 0);
  int planned = 0;
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (v->persistable || v->feed_index >= 0)
      CU_ASSERT_EQUAL(v->mem_offset, -1);
    planned += v->mem_offset >= 0;
  }
  CU_ASSERT(planned > 0);
  /* a training Program round-trips through .dymodel + .dyparams */
  dy_program *q = copy_program(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(q);
  DY_ASSERT_OK(dy_verify(q, &err), &err);
  CU_ASSERT(dy_program_is_training(q));
  char *a = dy_program_to_text(p), *b = dy_program_to_text(q);
  CU_ASSERT_STRING_EQUAL(a, b);
  free(a);
  free(b);
  dy_program_free(q);
  dy_program_free(p);
  dy_optimizer_free(o);
  dy_layer_free(m);
}

/* ------------------------------------------------------------------ */
/* a whole training Program, optimised and not                         */
/* ------------------------------------------------------------------ */

/* The -O2 pipeline must not change what a training Program computes: run
 * optimised and unoptimised side by side for 25 steps (this caught
 * simplify dropping x + b for a bias that starts at zero). */
/* Linear regression pred = x @ w + b with an mse loss, its backward
 * (dy_program_append_backward) and Adam with clipping appended. */
static dy_program *regression_program(dy_error *err) {
  dy_program *p = dy_program_new();
  dy_type tx = {.dtype = DY_F32, .rank = 2, .shape = {-1, 3}};
  dy_type ty = {.dtype = DY_F32, .rank = 2, .shape = {-1, 1}};
  dy_type tw = {.dtype = DY_F32, .rank = 2, .shape = {3, 1}};
  dy_type tb = {.dtype = DY_F32, .rank = 1, .shape = {1}};
  dy_type ts = {.dtype = DY_F32, .rank = 0};
  int x = dy_program_add_var(p, "x", &tx), y = dy_program_add_var(p, "y", &ty);
  dy_program_add_feed(p, x, err);
  dy_program_add_feed(p, y, err);
  int w = dy_program_add_var(p, "fc.w", &tw), b = dy_program_add_var(p, "fc.b", &tb);
  float w0[3] = {0.1f, -0.2f, 0.05f}, b0[1] = {0};
  dy_program_set_data(p, w, w0, sizeof w0, err);
  dy_program_set_data(p, b, b0, sizeof b0, err);
  p->vars[w]->trainable = p->vars[b]->trainable = true;
  int h = dy_program_add_var(p, "h", &ty), pred = dy_program_add_var(p, "pred", &ty);
  int d = dy_program_add_var(p, "d", &ty), sq = dy_program_add_var(p, "sq", &ty);
  int loss = dy_program_add_var(p, "loss", &ts);
  dy_srcloc loc = {"model.c", 1};
  dy_attr mm[] = {DY_ATTR_I("transpose_x", 0), DY_ATTR_I("transpose_y", 0)};
  dy_attr rm[] = {DY_ATTR_IS("axes", NULL, 0), DY_ATTR_I("keepdim", 0)};
  dy_program_append_op(p, 0, DY_OP_MATMUL, (int[]){x, w}, 2, &h, 1, mm, 2, loc);
  dy_program_append_op(p, 0, DY_OP_ADD, (int[]){h, b}, 2, &pred, 1, NULL, 0, loc);
  dy_program_append_op(p, 0, DY_OP_SUB, (int[]){pred, y}, 2, &d, 1, NULL, 0, loc);
  dy_program_append_op(p, 0, DY_OP_MUL, (int[]){d, d}, 2, &sq, 1, NULL, 0, loc);
  dy_program_append_op(p, 0, DY_OP_REDUCE_MEAN, &sq, 1, &loss, 1, rm, 2, loc);
  dy_program_add_fetch(p, loss, err);
  int *params = NULL, *grads = NULL, n = 0;
  dy_optimizer_spec spec = {.kind = DY_OPT_ADAM, .lr = 0.05, .clip_norm = 5.0};
  dy_status s = dy_program_append_backward(p, loss, &params, &grads, &n, err);
  if (!s)
    s = dy_program_append_optimizer(p, &spec, params, grads, n, err);
  if (!s)
    s = dy_verify(p, err);
  free(params);
  free(grads);
  if (s) {
    dy_program_free(p);
    return NULL;
  }
  return p;
}

static void test_training_program_through_the_pipeline(void) {
  dy_error err = {0};
  dy_program *p = regression_program(&err);
  if (!p)
    fprintf(stderr, "\n  regression Program: %s\n", err.msg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  /* an optimised copy (through .dymodel + .dyparams) */
  dy_program *q = copy_program(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(q);
  dy_pass_options po = {.opt_level = 2, .verify_each = 1};
  DY_ASSERT_OK(dy_run_pipeline(q, &po, &err), &err);
  int n_adam = 0;
  for (int k = 0; k < q->blocks[0]->n_ops; k++)
    n_adam += q->blocks[0]->ops[k]->kind == DY_OP_ADAM;
  CU_ASSERT_EQUAL(n_adam, 2);
  int qw = dy_program_find_var(q, "fc.w");
  CU_ASSERT_FATAL(qw >= 0);
  CU_ASSERT(q->vars[qw]->trainable && q->vars[qw]->persistable);

  /* y = x . [1, -2, 0.5] + 0.3 over 25 steps of 8 samples */
  dy_tensor *x = dy_tensor_new(DY_F32, 2, DY_SHAPE(8, 3));
  dy_tensor *y = dy_tensor_new(DY_F32, 2, DY_SHAPE(8, 1));
  dy_tensor *lr = dy_tensor_new(DY_F32, 0, NULL);
  double first = 0, last = 0;
  bool same = true;
  for (int step = 0; step < 25; step++) {
    fill(x);
    for (int i = 0; i < 8; i++) {
      const float *xi = (const float *)x->data + 3 * i;
      ((float *)y->data)[i] = xi[0] - 2 * xi[1] + 0.5f * xi[2] + 0.3f;
    }
    ((float *)lr->data)[0] = (float)dy_lr_at(NULL, 0.05, step);
    dy_tensor *feeds[] = {x, y, lr}, *l1 = NULL, *l2 = NULL;
    DY_ASSERT_OK(dy_executor_run(p, feeds, 3, &l1, 1, &err), &err);
    DY_ASSERT_OK(dy_executor_run(q, feeds, 3, &l2, 1, &err), &err);
    double a = ((float *)l1->data)[0], b = ((float *)l2->data)[0];
    same &= fabs(a - b) <= 1e-5 * (1 + fabs(a));
    if (step == 0)
      first = a;
    last = a;
    dy_tensor_free(l1);
    dy_tensor_free(l2);
  }
  CU_ASSERT(same);
  if (!(last < 0.25 * first))
    fprintf(stderr, "\n  loss %g -> %g\n", first, last);
  CU_ASSERT(last < 0.25 * first);
  const float *pw = p->vars[dy_program_find_var(p, "fc.w")]->data, *ow = q->vars[qw]->data;
  for (int i = 0; i < 3; i++)
    DY_ASSERT_NEAR(ow[i], pw[i], 1e-5);
  dy_tensor_free(x);
  dy_tensor_free(y);
  dy_tensor_free(lr);
  dy_program_free(q);
  dy_program_free(p);
}

/* A gradient var of another shape than its parameter: the update op's
 * inference names the op and both types. */
static void test_program_optimizer_bad_grad(void) {
  dy_program *p = dy_program_new();
  dy_type tw = {.dtype = DY_F32, .rank = 2, .shape = {3, 4}};
  dy_type tg = {.dtype = DY_F32, .rank = 2, .shape = {4, 3}};
  dy_error err = {0};
  int w = dy_program_add_var(p, "fc.w", &tw);
  float zero[12] = {0};
  dy_program_set_data(p, w, zero, sizeof zero, &err);
  int g = dy_program_add_var(p, "fc.w@GRAD", &tg);
  dy_program_add_feed(p, g, &err);
  dy_optimizer_spec spec = {.kind = DY_OPT_SGD, .lr = 0.1, .momentum = 0.9};
  CU_ASSERT_EQUAL(dy_program_append_optimizer(p, &spec, &w, &g, 1, &err),
                  DY_STATUS_SHAPE_MISMATCH);
  bool clear = strstr(err.msg, "momentum: grad f32[4,3] does not match param f32[3,4]") != NULL;
  if (!clear)
    fprintf(stderr, "\n  message: %s\n", err.msg);
  CU_ASSERT(clear);
  dy_program_free(p);
}

/* A bad spec or a gradient of the wrong shape is a clear error. */
static void test_optimizer_errors(void) {
  dy_layer *m = model();
  dy_clear_error();
  dy_optimizer_spec bad = {.kind = DY_OPT_ADAM, .lr = 0.1, .beta1 = 1.5};
  CU_ASSERT_PTR_NULL(dy_optimizer_new(&bad, m));
  CU_ASSERT_PTR_NOT_NULL_FATAL(dy_last_error());
  CU_ASSERT_PTR_NOT_NULL(strstr(dy_last_error()->msg, "beta1"));
  dy_clear_error();
  dy_optimizer_spec nest = {.kind = DY_OPT_SGD, .lr = 0.1, .nesterov = true};
  CU_ASSERT_PTR_NULL(dy_optimizer_new(&nest, m));
  dy_clear_error();
  dy_optimizer_spec ok = {.kind = DY_OPT_SGD, .lr = 0.1};
  dy_optimizer *o = dy_optimizer_new(&ok, m);
  dy_tensor *w = dy_optimizer_param(o, 0);
  dy_type t = {.dtype = DY_F32, .rank = 1, .shape = {12}};
  w->grad = zeros(&t);
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_optimizer_step(o, &err), DY_STATUS_SHAPE_MISMATCH);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "grad of"));
  dy_tensor_free(w->grad);
  w->grad = NULL;
  dy_optimizer_free(o);
  dy_layer_free(m);
}

/* ------------------------------------------------------------------ */
/* BatchNorm2D's running statistics                                    */
/* ------------------------------------------------------------------ */

/* The arithmetic BatchNorm2D used before batch_norm_stats (the layer's
 * former update_running), kept here as the reference. */
static void old_update_running(float *rm, float *rv, double m, const dy_tensor *x) {
  const dy_type *t = &x->type;
  int64_t n = t->shape[0], c = t->shape[1], sp = 1;
  for (int i = 2; i < t->rank; i++)
    sp *= t->shape[i];
  const float *xd = x->data;
  double cnt = (double)(n * sp);
  for (int64_t ch = 0; ch < c; ch++) {
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < sp; j++)
        sum += xd[(i * c + ch) * sp + j];
    double mu = sum / cnt;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < sp; j++) {
        double d = xd[(i * c + ch) * sp + j] - mu;
        sq += d * d;
      }
    rm[ch] = (float)(m * rm[ch] + (1.0 - m) * mu);
    rv[ch] = (float)(m * rv[ch] + (1.0 - m) * (sq / cnt));
  }
}

static void test_batch_norm_running_statistics(void) {
  dy_layer *bn = dy_batch_norm2d_new(4, 0.8, 1e-5);
  dy_tensor *mean = bn->params[2], *var = bn->params[3];
  float rm[4], rv[4];
  memcpy(rm, mean->data, sizeof rm);
  memcpy(rv, var->data, sizeof rv);
  for (int it = 0; it < 3; it++) {
    dy_tensor *x = dy_tensor_new(DY_F32, 4, DY_SHAPE(3, 4, 5, 6));
    fill(x);
    ((float *)x->data)[7] += 3.0f * (float)it; /* shift one channel */
    dy_tensor *y = dy_call1(bn, x);
    CU_ASSERT_PTR_NOT_NULL(y);
    old_update_running(rm, rv, 0.8, x);
    CU_ASSERT(memcmp(rm, mean->data, sizeof rm) == 0);
    CU_ASSERT(memcmp(rv, var->data, sizeof rv) == 0);
    dy_tensor_free(y);
    dy_tensor_free(x);
  }
  /* eval mode leaves them alone */
  dy_layer_eval(bn);
  dy_tensor *x = dy_tensor_new(DY_F32, 4, DY_SHAPE(2, 4, 3, 3));
  fill(x);
  dy_tensor_free(dy_call1(bn, x));
  CU_ASSERT(memcmp(rm, mean->data, sizeof rm) == 0);

  /* a Program built in train mode records the update; run on the
   * executor it updates the Program's copy exactly as eager does */
  dy_layer_train(bn);
  dy_error err = {0};
  dy_program *p = NULL;
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 4, .shape = {-1, 4, 3, 3}};
  DY_ASSERT_OK(dy_program_from_layer(bn, &spec, 1, &p, &err), &err);
  CU_ASSERT(dy_program_is_training(p));
  const dy_op *st = NULL;
  for (int k = 0; k < p->blocks[0]->n_ops; k++)
    if (p->blocks[0]->ops[k]->kind == DY_OP_BATCH_NORM_STATS)
      st = p->blocks[0]->ops[k];
  CU_ASSERT_PTR_NOT_NULL_FATAL(st);
  CU_ASSERT_EQUAL(st->outputs[0], st->inputs[0]);
  const dy_var *pm = p->vars[st->outputs[0]];
  CU_ASSERT(pm->persistable && !pm->trainable);
  dy_tensor *out = NULL;
  DY_ASSERT_OK(dy_executor_run(p, &x, 1, &out, 1, &err), &err);
  dy_tensor_free(out);
  dy_tensor_free(dy_call1(bn, x)); /* eager, from the same state */
  CU_ASSERT(memcmp(pm->data, mean->data, sizeof rm) == 0);
  CU_ASSERT(memcmp(p->vars[st->outputs[1]]->data, var->data, sizeof rv) == 0);
  dy_program_free(p);
  dy_tensor_free(x);
  dy_layer_free(bn);
}

/* ------------------------------------------------------------------ */
/* the verifier's in-place invariant                                   */
/* ------------------------------------------------------------------ */

static void expect_invalid(const char *ops, const char *detail) {
  char text[2048];
  snprintf(text, sizeof text,
           "program {\n"
           "  var x : f32[-1,2] feed 0\n"
           "  var g : f32[2] feed 1\n"
           "  var lr : f32[] feed 2\n"
           "  var w : f32[2] persistable trainable = [1.0, 2.0]\n"
           "  var q : f32[2] persistable = [0.0, 0.0]\n"
           "  var h : f32[2]\n"
           "  var y : f32[-1,2]\n"
           "  block 0 parent -1 {\n"
           "    y = add(x, w)  @m.c:1\n"
           "%s"
           "  }\n"
           "  fetch 0 y\n"
           "}\n",
           ops);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_program_parse(text, &p, &err), &err);
  dy_status s = dy_verify(p, &err);
  if (!detail) {
    if (s)
      fprintf(stderr, "\n  unexpected: %s\n", err.msg);
    CU_ASSERT_EQUAL(s, DY_OK);
  } else {
    CU_ASSERT_EQUAL(s, DY_STATUS_INVALID_IR);
    bool named = strstr(err.msg, detail) != NULL;
    if (!named)
      fprintf(stderr, "\n  '%s' does not say '%s'\n", err.msg, detail);
    CU_ASSERT(named);
  }
  dy_program_free(p);
}

static void test_verifier_in_place(void) {
  expect_invalid("    w = sgd(w, g, lr) {weight_decay = 0.0}  @m.c:2\n", NULL);
  /* the output is not the input */
  expect_invalid("    q = sgd(w, g, lr) {weight_decay = 0.0}  @m.c:2\n",
                 "invariant 10 (in-place): op 1 (sgd): output 0 'q' is not input 0");
  /* a temporary is not state */
  expect_invalid("    h = relu(g)  @m.c:2\n"
                 "    h = sgd(h, g, lr) {weight_decay = 0.0}  @m.c:3\n",
                 "invariant 10 (in-place): op 2 (sgd): writes 'h' in place, which is not a persistable");
  /* read after the update */
  expect_invalid("    w = sgd(w, g, lr) {weight_decay = 0.0}  @m.c:2\n"
                 "    h = relu(w)  @m.c:3\n",
                 "op 2 (relu) reads 'w' after op 1 updated it in place");
  /* updated twice */
  expect_invalid("    w = sgd(w, g, lr) {weight_decay = 0.0}  @m.c:2\n"
                 "    w = sgd(w, g, lr) {weight_decay = 0.0}  @m.c:3\n",
                 "invariant 10 (in-place)");
  /* an ordinary op still may not write a persistable var */
  expect_invalid("    w = relu(g)  @m.c:2\n", "invariant 5 (ssa)");
}

/* ------------------------------------------------------------------ */
/* the emitted kernels                                                 */
/* ------------------------------------------------------------------ */

/* The inference code generator keeps weights in flash, so test_ops cannot
 * run in-place ops compiled; here each emitter's kernel body (the op
 * cases of op_cases_train.c) is wrapped in a function with in<i> and
 * out<i> the SAME buffers, as the training code generator passes them,
 * compiled with -std=c99 -Wall -Wextra -Werror -pedantic against the
 * generated code's math library, run, and compared with the eager
 * kernel's update of every state (dy_sqrtf is within 0.75 ulp of sqrtf,
 * hence a tolerance rather than bits). */
#include "op_table.h"

#define SCRATCH DY_BUILD_DIR "/optim_scratch"

static void print_floats(FILE *f, const char *name, const dy_tensor *t) {
  fprintf(f, "static float %s[%lld] = {", name, (long long)(dy_tensor_numel(t) + 1));
  for (int64_t i = 0; i < dy_tensor_numel(t); i++)
    fprintf(f, "%s%a", i ? ", " : "", (double)((const float *)t->data)[i]);
  fprintf(f, "%s0};\n", dy_tensor_numel(t) ? ", " : "");
}

static void test_emitted_updates(void) {
  dy_test_sh(NULL, "rm -rf %s && mkdir -p %s", SCRATCH, SCRATCH);
  int checked = 0;
  for (int ci = 0; ci < dy_op_cases_train.n; ci++) {
    const dy_op_case *c = &dy_op_cases_train.cases[ci];
    if (c->expect_error)
      continue;
    int n_out = dy_op_info_of(c->kind)->n_out;
    int64_t batch = c->batch ? c->batch : 2;
    /* inputs: given, else uniform in [lo, hi) (or [-1, 1)) */
    dy_tensor *in[8], *ref[8];
    dy_program *p = dy_program_new();
    int ids[8];
    for (int i = 0; i < c->n_in; i++) {
      dy_type t = c->in[i];
      for (int d = 0; d < t.rank; d++)
        t.shape[d] = t.shape[d] < 0 ? batch : t.shape[d];
      in[i] = zeros(&t);
      for (int64_t k = 0; k < dy_tensor_numel(in[i]); k++)
        ((float *)in[i]->data)[k] =
            c->data[i] ? ((const float *)c->data[i])[k]
                       : (c->lo == c->hi ? urand()
                                         : c->lo + (c->hi - c->lo) * (urand() + 1) / 2);
      ref[i] = dy_tensor_from_data(DY_F32, t.rank, t.shape, in[i]->data);
      char name[8];
      snprintf(name, sizeof name, "in%d", i);
      ids[i] = dy_program_add_var(p, name, &c->in[i]);
    }
    /* the eager update (of the copies) */
    dy_tensor *r = dy_apply(c->kind, ref, c->n_in, c->attrs, c->n_attrs, (dy_srcloc){0});
    CU_ASSERT_PTR_NOT_NULL(r);
    dy_tensor_free(r);
    /* the emitted body */
    dy_op *op = dy_program_append_op(p, 0, c->kind, ids, c->n_in, ids, n_out, c->attrs,
                                     c->n_attrs, (dy_srcloc){0});
    dy_buf body = {0};
    unsigned uses = 0;
    dy_cg_ctx ctx = {.p = p, .op = op, .body = &body, .uses = &uses, .indent = 1};
    dy_error err = {0};
    DY_ASSERT_OK(dy_cg_table[c->kind]->emit(&ctx, &err), &err);
    char path[600];
    snprintf(path, sizeof path, SCRATCH "/case%d.c", ci);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#include <stdint.h>\n#include <stdio.h>\n#include \"%s/codegen/rt/dy_mathlib.h\"\n",
            DY_SOURCE_DIR);
    for (int i = 0; i < c->n_in; i++) {
      char name[8];
      snprintf(name, sizeof name, "d%d", i);
      print_floats(f, name, in[i]);
    }
    fprintf(f, "static void kernel(int64_t batch");
    for (int i = 0; i < c->n_in; i++)
      fprintf(f, ", const float *in%d", i);
    for (int i = 0; i < n_out; i++)
      fprintf(f, ", float *out%d", i);
    fprintf(f, ") {\n  (void)batch;\n%s}\nint main(void) {\n  kernel(%lld", body.s,
            (long long)batch);
    for (int i = 0; i < c->n_in; i++)
      fprintf(f, ", d%d", i);
    for (int i = 0; i < n_out; i++)
      fprintf(f, ", d%d", i); /* in place: out<i> is in<i>'s buffer */
    fprintf(f, ");\n");
    for (int i = 0; i < n_out; i++)
      fprintf(f, "  for (int k = 0; k < %lld; k++)\n    printf(\"%%a\\n\", (double)d%d[k]);\n",
              (long long)dy_tensor_numel(in[i]), i);
    fprintf(f, "  return 0;\n}\n");
    fclose(f);
    dy_buf_free(&body);
    const char *cc_env = getenv("CC");
    int rc = dy_test_sh(NULL, "cd %s && %s -std=c99 -Wall -Wextra -Werror -pedantic -O2 "
                        "-o case%d case%d.c > case%d.log 2>&1 && ./case%d > case%d.out",
                        SCRATCH, cc_env && *cc_env ? cc_env : "cc", ci, ci, ci, ci, ci);
    if (rc)
      dy_test_sh(NULL, "head -20 %s/case%d.log >&2", SCRATCH, ci);
    CU_ASSERT_EQUAL(rc, 0);
    snprintf(path, sizeof path, SCRATCH "/case%d.out", ci);
    FILE *o = rc ? NULL : fopen(path, "r");
    for (int i = 0; o && i < n_out; i++)
      for (int64_t k = 0; k < dy_tensor_numel(ref[i]); k++) {
        double got = NAN, want = ((float *)ref[i]->data)[k];
        if (fscanf(o, "%la", &got) != 1 || !(fabs(got - want) <= 1e-6 * (1 + fabs(want)))) {
          fprintf(stderr, "\n  [%s] emitted state %d element %lld is %.9g, eager %.9g\n",
                  c->label, i, (long long)k, got, want);
          CU_FAIL("emitted update differs");
          i = n_out;
          break;
        }
      }
    if (o) {
      fclose(o);
      checked++;
    }
    for (int i = 0; i < c->n_in; i++) {
      dy_tensor_free(in[i]);
      dy_tensor_free(ref[i]);
    }
    dy_program_free(p);
  }
  CU_ASSERT(checked >= 10);
}

void dy_test_register(void) {
  DY_SUITE("optim");
  DY_TEST(test_sgd_and_momentum);
  DY_TEST(test_adam_and_adamw);
  DY_TEST(test_bias_correction_and_decoupling);
  DY_TEST(test_clip_by_global_norm);
  DY_TEST(test_lr_schedules);
  DY_TEST(test_eager_equals_program);
  DY_TEST(test_program_optimizer_state);
  DY_TEST(test_program_optimizer_bad_grad);
  DY_TEST(test_training_program_through_the_pipeline);
  DY_TEST(test_optimizer_errors);
  DY_TEST(test_batch_norm_running_statistics);
  DY_TEST(test_verifier_in_place);
  DY_TEST(test_emitted_updates);
}
