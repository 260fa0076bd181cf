/* difftest_gen.h - the differential tester's generator pieces, shared by
 * its files (not part of difftest.h's contract):
 *
 *   difftest_gen.h      (this header) the random numbers, op1 / op2
 *   difftest.c          attributes, values, the acceptance test of one op
 *                       (dt_try_op), choosing inputs, activations and
 *                       gradient ops; the program (dt_generate draws the
 *                       recipes below), dt_print
 *   difftest_recipes.c  the f32, integer and extra-family recipes
 *   difftest_quant.c    the quant family's recipe
 *   difftest_run.c      running the four ways (dt_check), minimising
 *
 * A recipe appends zero or more ops to g, drawing everything from g's
 * generator, so a seed always makes the same program.
 */
#ifndef DY_DIFFTEST_GEN_H
#define DY_DIFFTEST_GEN_H

#include "difftest.h"

/* ---- random numbers (xorshift64, as op_inputs.c) ---- */

static inline uint64_t rnd(dt_prog *g) {
  g->rng ^= g->rng << 13;
  g->rng ^= g->rng >> 7;
  g->rng ^= g->rng << 17;
  return g->rng;
}
static inline int64_t pick(dt_prog *g, int64_t n) {
  return n > 0 ? (int64_t)(rnd(g) % (uint64_t)n) : 0;
}
static inline double unif(dt_prog *g) { return (double)(rnd(g) >> 11) / 9007199254740992.0; }
static inline bool coin(dt_prog *g, double p) { return unif(g) < p; }

static inline dt_op op1(dy_op_kind k, int a) {
  return (dt_op){.kind = k, .n_in = 1, .in = {a}};
}
static inline dt_op op2(dy_op_kind k, int a, int b) {
  return (dt_op){.kind = k, .n_in = 2, .in = {a, b}};
}

/* ---- difftest.c ---- */

/* Attribute name of o's schema set to a value (added when not set yet;
 * ignored when o's op has no such attribute). */
dt_attr *dt_attr_slot(dt_op *o, const char *name);
void dt_set_i(dt_op *o, const char *name, int64_t v);
void dt_set_f(dt_op *o, const char *name, double v);
void dt_set_is(dt_op *o, const char *name, const int64_t *v, int n);
void dt_set_s(dt_op *o, const char *name, const char *v);

/* Random data of type t at batch from the stream s: f32 in [lo, hi), i64
 * in [0, hi), i8 / u8 / i32 integers in [lo, hi), bool 0 or 1. NULL when
 * out of memory. */
dy_tensor *dt_random_tensor(const dy_type *t, int64_t batch, uint64_t s, double lo,
                            double hi);
/* Element k of t as a double. */
double dt_value_at(const dy_tensor *t, int64_t k);
/* The largest magnitude of an f32 t (0 for other dtypes). */
double dt_max_abs(const dy_tensor *t);

/* Values: each returns the new value's index, or -1 (the table full, or x
 * NULL). dt_add_val takes x. */
int dt_add_val(dt_prog *g, dt_val_kind kind, const dy_type *t, dy_tensor *x);
int dt_add_feed_in(dt_prog *g, const dy_type *t, double lo, double hi);
int dt_add_feed(dt_prog *g, const dy_type *t); /* f32 in [-2, 2) */
int dt_add_const(dt_prog *g, const dy_type *t, double lo, double hi);
int dt_add_const_i64(dt_prog *g, int rank, const int64_t *shape, int64_t below);
int dt_add_const_f32(dt_prog *g, int rank, const int64_t *shape, double lo, double hi);
dy_type dt_f32_type(int rank, const int64_t *shape);

/* o's eager result on in (a new tensor, or NULL when the kernel refuses). */
dy_tensor *dt_apply_op(const dt_op *o, dy_tensor *const *in);
/* The declared output type of o (inference on the declared, -1, types). */
bool dt_infer_decl(const dt_prog *g, const dt_op *o, dy_type *out);
/* Append o (inputs and attributes set) when inference, the eager kernel
 * and the checks accept it; returns its value index or -1. */
int dt_try_op(dt_prog *g, dt_op o);

/* Inputs: a computed value of dtype dt and rank >= min_rank (the newest
 * with probability 0.6), an f32 one of exactly rank, a static dim of x
 * other than the batch; -1 if none. */
int dt_pick_val(dt_prog *g, dy_dtype dt, int min_rank);
int dt_pick_rank(dt_prog *g, int rank);
int dt_static_axis(dt_prog *g, int x);
/* An activation on x (attributes jittered), or x itself when refused. */
int dt_activation(dt_prog *g, int x);
/* The gradient op of forward op f (its result y) on dy = tanh(y). */
void dt_grad_of(dt_prog *g, const dt_op *f, int y);

/* ---- difftest_recipes.c ---- */

void dt_recipe_unary(dt_prog *g);
void dt_recipe_binary(dt_prog *g);
void dt_recipe_linear(dt_prog *g);
void dt_recipe_conv(dt_prog *g);
void dt_recipe_pool(dt_prog *g);
void dt_recipe_softmax(dt_prog *g);
void dt_recipe_reduce(dt_prog *g);
void dt_recipe_norm(dt_prog *g);
void dt_recipe_shape(dt_prog *g);
void dt_recipe_select(dt_prog *g);
void dt_recipe_int(dt_prog *g);
void dt_recipe_extra(dt_prog *g);
/* A broadcast partner of type t: some dims set to 1, leading dims
 * dropped, the batch always 1 (a constant in [lo, hi)), or -1. */
int dt_broadcast_const(dt_prog *g, const dy_type *t, double lo, double hi);
/* reshape_dims of x to "-1,..." sizes (the batch entry first or second);
 * its value index or -1. */
int dt_reshape_dims(dt_prog *g, int x);

/* ---- difftest_quant.c ---- */

void dt_recipe_quant(dt_prog *g);

#endif
