/* difftest.c - random valid Programs over the op table, run four ways
 * (the contract is in difftest.h). This file: the generator's common
 * pieces and the program; the recipes are in difftest_recipes.c and
 * difftest_quant.c, running and minimising in difftest_run.c (the map
 * and the shared helpers: difftest_gen.h).
 *
 * Generation. A program starts from one or two feeds (f32 [-1, F],
 * [-1, T, D] or [-1, C, H, W]) and grows by recipes, each picking its
 * input among the values made so far (mostly the newest, so chains form):
 *   - any unary elementwise op of the table (flags ELEMENTWISE | UNARY),
 *     its attributes drawn from the op's schema around their defaults;
 *   - any binary elementwise op (flag BINARY) against another value, a
 *     broadcast constant or itself;
 *   - linear (matmul [+ bias] [+ activation]) and conv2d [+ bias]
 *     [+ activation | batch_norm] - what fuse-matmul, fuse-conv and fuse-bn
 *     look for -, a matmul of two run-time values, conv2d_transpose;
 *   - pool2d, softmax / log_softmax, reductions, layer_norm, group_norm,
 *     transpose, reshape, flatten, squeeze / unsqueeze, slice, pad, tile,
 *     expand, concat, cumsum, gather, where over a comparison, cast there
 *     and back, argmax and top_k, dropout in eval mode;
 *   - integer and bool arithmetic: a scaled value cast to i64 (or bool),
 *     i64 ops with constants of both signs (division, both remainders),
 *     comparisons and where, a cast back;
 *   - the extra family: gather_elements / scatter_elements and gather_nd
 *     with i64 index feeds, scatter_nd, det and inverse of x W + 2 I,
 *     grid_sample on a tanh grid, roi_align, expand_as;
 *   - the gradient ops the training Programs use (conv2d_grad_filter,
 *     pool2d_grad, grid_sample_grad, roi_align_grad) after their forward
 *     op, on dy = tanh(its result);
 *   - reshape_dims to "-1,..." sizes (the batch entry first or second);
 *   - the quant family (ir/ops_quant.def) on i8 / u8 values made by
 *     quantize_linear (per tensor or per channel) of an f32 value, or
 *     feeds over the whole range: qconv2d (dot form, depthwise, grouped;
 *     i8 or u8 weights, per-channel scales, zero or non-zero weight zero
 *     points, a relu / relu6 clamp) and qmatmul against constants with
 *     i32 biases and a y scale that keeps most outputs in range, qadd /
 *     qmul, qsoftmax, matmul_integer / conv_integer (i32), pool2d,
 *     transpose, reshape_dims, a clamp and concat on quantized values;
 *     the result dequantized (i32 always) so that f32 chains go on.
 * Each candidate op goes through try_op (inference, the eager kernel, the
 * finiteness and conditioning checks of difftest.h) and is dropped when
 * any says no. Skipped on purpose: the training family (in place, state),
 * dropout in train mode (random), ops whose sizes depend on data, the
 * control-flow ops (test_control_codegen) and the fused ops (the passes
 * make those).
 *
 * Running (dt_check) and minimising (dt_minimise): difftest_run.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest_gen.h"

const char *dt_mode_name(int mode) {
  switch (mode) {
  case DT_EXEC: return "executor";
  case DT_O0: return "compiled -O0";
  case DT_O2: return "compiled -O2";
  case DT_T2: return "compiled --threads 2";
  default: return "?";
  }
}

/* ---- attributes ---- */

dt_attr *dt_attr_slot(dt_op *o, const char *name) {
  for (int i = 0; i < o->n_attrs; i++)
    if (strcmp(o->attrs[i].name, name) == 0)
      return &o->attrs[i];
  const dy_attr_schema *s = dy_attr_schema_find(o->kind, name);
  if (!s || o->n_attrs == 10)
    return NULL;
  dt_attr *a = &o->attrs[o->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = s->name;
  a->kind = s->kind;
  return a;
}
void dt_set_i(dt_op *o, const char *name, int64_t v) {
  dt_attr *a = dt_attr_slot(o, name);
  if (a)
    a->i = v;
}
void dt_set_f(dt_op *o, const char *name, double v) {
  dt_attr *a = dt_attr_slot(o, name);
  if (a)
    a->f = v;
}
void dt_set_is(dt_op *o, const char *name, const int64_t *v, int n) {
  dt_attr *a = dt_attr_slot(o, name);
  if (a) {
    a->n = n < 8 ? n : 8;
    memcpy(a->ints, v, sizeof *v * (size_t)a->n);
  }
}
void dt_set_s(dt_op *o, const char *name, const char *v) {
  dt_attr *a = dt_attr_slot(o, name);
  if (a)
    a->s = v;
}

/* Every attribute of o's schema: the ones set, else the default. out has
 * room for 16 (float lists are never set here: they keep the default). */
static int full_attrs(const dt_op *o, dy_attr *out) {
  const dy_op_info *info = dy_op_info_of(o->kind);
  int n = 0;
  for (int k = 0; k < info->n_attrs && n < 16; k++) {
    const dy_attr_schema *s = &info->attrs[k];
    dy_attr a = s->dflt;
    a.name = s->name;
    a.kind = s->kind;
    for (int i = 0; i < o->n_attrs; i++) {
      const dt_attr *d = &o->attrs[i];
      if (strcmp(d->name, s->name) != 0)
        continue;
      a.i = d->i;
      a.f = d->f;
      if (d->kind == DY_ATTR_INTS) {
        a.n = d->n;
        a.ints = d->ints;
      }
      if (d->kind == DY_ATTR_STRING)
        a.s = d->s ? d->s : d->sbuf;
    }
    out[n++] = a;
  }
  return n;
}

/* ---- values ---- */

static dy_type type_at(const dy_type *t, int64_t batch) {
  dy_type c = *t;
  for (int d = 0; d < c.rank; d++)
    if (c.shape[d] < 0)
      c.shape[d] = batch;
  return c;
}

/* Random data from the stream s: f32 in [lo, hi), i64 in [0, hi), i8 / u8
 * / i32 integers in [lo, hi), bool 0 or 1. */
dy_tensor *dt_random_tensor(const dy_type *t, int64_t batch, uint64_t s, double lo,
                            double hi) {
  dy_type c = type_at(t, batch);
  dy_tensor *x = dy_tensor_new(c.dtype, c.rank, c.shape);
  if (!x)
    return NULL;
  dt_prog tmp; /* only its rng */
  tmp.rng = s | 1;
  int64_t n = dy_tensor_numel(x);
  for (int64_t k = 0; k < n; k++) {
    if (c.dtype == DY_F32)
      ((float *)x->data)[k] = (float)(lo + (hi - lo) * unif(&tmp));
    else if (c.dtype == DY_I64)
      ((int64_t *)x->data)[k] = pick(&tmp, (int64_t)hi);
    else if (c.dtype == DY_I8)
      ((int8_t *)x->data)[k] = (int8_t)((int64_t)lo + pick(&tmp, (int64_t)(hi - lo)));
    else if (c.dtype == DY_U8)
      ((uint8_t *)x->data)[k] = (uint8_t)((int64_t)lo + pick(&tmp, (int64_t)(hi - lo)));
    else if (c.dtype == DY_I32)
      ((int32_t *)x->data)[k] = (int32_t)((int64_t)lo + pick(&tmp, (int64_t)(hi - lo)));
    else
      ((uint8_t *)x->data)[k] = (uint8_t)(rnd(&tmp) >> 63);
  }
  return x;
}

double dt_value_at(const dy_tensor *t, int64_t k) {
  switch (t->type.dtype) {
  case DY_F32: return ((const float *)t->data)[k];
  case DY_I64: return (double)((const int64_t *)t->data)[k];
  case DY_I32: return ((const int32_t *)t->data)[k];
  case DY_I8: return ((const int8_t *)t->data)[k];
  default: return ((const uint8_t *)t->data)[k];
  }
}

int dt_add_val(dt_prog *g, dt_val_kind kind, const dy_type *t, dy_tensor *x) {
  if (g->n_vals == DT_MAX_VALS || !x) {
    dy_tensor_free(x);
    return -1;
  }
  g->v[g->n_vals] = (dt_val){.kind = kind, .type = *t, .t = x};
  return g->n_vals++;
}

/* A feed of type t with random_tensor's data in [lo, hi). */
int dt_add_feed_in(dt_prog *g, const dy_type *t, double lo, double hi) {
  uint64_t s = rnd(g);
  int v = dt_add_val(g, DT_FEED, t, dt_random_tensor(t, g->batch, s, lo, hi));
  if (v >= 0) {
    g->v[v].seed = s;
    g->v[v].lo = lo;
    g->v[v].hi = hi;
  }
  return v;
}
int dt_add_feed(dt_prog *g, const dy_type *t) { return dt_add_feed_in(g, t, -2, 2); }

/* A constant of static type t, f32 in [lo, hi). */
int dt_add_const(dt_prog *g, const dy_type *t, double lo, double hi) {
  return dt_add_val(g, DT_CONST, t, dt_random_tensor(t, 1, rnd(g), lo, hi));
}
int dt_add_const_i64(dt_prog *g, int rank, const int64_t *shape, int64_t below) {
  dy_type t = {.dtype = DY_I64, .rank = rank};
  memcpy(t.shape, shape, sizeof *shape * (size_t)rank);
  return dt_add_val(g, DT_CONST, &t, dt_random_tensor(&t, 1, rnd(g), 0, (double)below));
}
dy_type dt_f32_type(int rank, const int64_t *shape) {
  dy_type t = {.dtype = DY_F32, .rank = rank};
  memcpy(t.shape, shape, sizeof *shape * (size_t)rank);
  return t;
}
int dt_add_const_f32(dt_prog *g, int rank, const int64_t *shape, double lo, double hi) {
  dy_type t = dt_f32_type(rank, shape);
  return dt_add_const(g, &t, lo, hi);
}

/* ---- the acceptance test of one op ---- */

/* reshape_dims' dims with the batch entry (-1) made the size it has in
 * x: inference on concrete shapes cannot split a symbolic count, so the
 * eager op gets the sizes the executor evaluates from the var's type. */
static void concrete_dims(const char *dims, const dy_tensor *x, char *buf, size_t n) {
  int64_t known = 1;
  for (const char *q = dims; *q; q += strcspn(q, ","), q += *q == ',')
    if (strncmp(q, "-1", 2) != 0 || (q[2] && q[2] != ','))
      known *= strtoll(q, NULL, 10);
  size_t k = 0;
  for (const char *q = dims; *q && k < n; q += strcspn(q, ","), q += *q == ',') {
    bool batch = strncmp(q, "-1", 2) == 0 && (!q[2] || q[2] == ',');
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", k ? "," : "",
                          batch ? (long long)(dy_tensor_numel(x) / (known ? known : 1))
                                : strtoll(q, NULL, 10));
  }
}

dy_tensor *dt_apply_op(const dt_op *o, dy_tensor *const *in) {
  dy_attr a[16];
  int n = full_attrs(o, a);
  char dims[64];
  if (o->kind == DY_OP_RESHAPE_DIMS) {
    concrete_dims(a[0].s, in[0], dims, sizeof dims);
    a[0].s = dims;
  }
  dy_clear_error();
  dy_tensor *t = dy_apply(o->kind, in, o->n_in, a, n, (dy_srcloc){"difftest", 0});
  dy_clear_error();
  return t;
}

double dt_max_abs(const dy_tensor *t) {
  double m = 0;
  if (t->type.dtype != DY_F32)
    return 0;
  for (int64_t k = 0; k < dy_tensor_numel(t); k++)
    m = fmax(m, fabs(((const float *)t->data)[k]));
  return m;
}

static bool all_finite(const dy_tensor *t, double bound) {
  if (t->type.dtype != DY_F32)
    return true;
  for (int64_t k = 0; k < dy_tensor_numel(t); k++) {
    float x = ((const float *)t->data)[k];
    if (!isfinite(x) || fabs(x) > bound)
      return false;
  }
  return true;
}

static bool quant_op(dy_op_kind k) {
  return k >= DY_OP_QUANTIZE_LINEAR && k <= DY_OP_CONV_INTEGER;
}

/* The op's result on inputs moved by a relative 1e-4 stays close: f32
 * within 2e-2 of its scale per element, integer and bool unchanged. A
 * quant op's scales are constants, and a feed is the same on every path:
 * only its f32 inputs computed by ops move (quantize_linear's x), as a
 * scale moved would move the requantization multipliers. */
static bool well_conditioned(dt_prog *g, const dt_op *o, dy_tensor *const *in,
                             const dy_tensor *y) {
  dy_tensor *pin[DT_MAX_IN] = {0};
  bool any = false;
  for (int i = 0; i < o->n_in; i++) {
    pin[i] = in[i];
    if (in[i]->type.dtype != DY_F32 || (quant_op(o->kind) && g->v[o->in[i]].kind != DT_OPV))
      continue;
    dy_tensor *c = dy_tensor_from_data(DY_F32, in[i]->type.rank, in[i]->type.shape,
                                       in[i]->data);
    if (!c)
      goto fail;
    for (int64_t k = 0; k < dy_tensor_numel(c); k++) {
      float *x = &((float *)c->data)[k];
      *x += (float)((2 * unif(g) - 1) * 1e-4 * (fabs(*x) + 1e-2));
    }
    pin[i] = c;
    any = true;
  }
  bool ok = true;
  if (any) {
    dy_tensor *y2 = dt_apply_op(o, pin);
    ok = y2 && dy_type_equal(&y2->type, &y->type);
    double scale = 1 + dt_max_abs(y);
    if (ok && y->type.dtype != DY_F32) /* integers and bools: the same bytes */
      ok = memcmp(y->data, y2->data, y->nbytes) == 0;
    for (int64_t k = 0; ok && y->type.dtype == DY_F32 && k < dy_tensor_numel(y); k++) {
      double a = ((const float *)y->data)[k], b = ((const float *)y2->data)[k];
      ok = fabs(a - b) <= 2e-2 * (fabs(a) + 1e-2 * scale) + 1e-6;
    }
    dy_tensor_free(y2);
  }
  for (int i = 0; i < o->n_in; i++)
    if (pin[i] != in[i])
      dy_tensor_free(pin[i]);
  return ok;
fail:
  for (int i = 0; i < o->n_in; i++)
    if (pin[i] && pin[i] != in[i])
      dy_tensor_free(pin[i]);
  return false;
}

/* The declared output type of o (inference on the declared, -1, types). */
bool dt_infer_decl(const dt_prog *g, const dt_op *o, dy_type *out) {
  dy_attr a[16];
  dy_op probe = {.kind = o->kind, .attrs = a, .n_attrs = full_attrs(o, a),
                 .loc = {"difftest", 0}};
  dy_type in[DT_MAX_IN], outs[4];
  for (int i = 0; i < o->n_in; i++)
    in[i] = g->v[o->in[i]].type;
  dy_error err = {0};
  if (dy_infer(&probe, in, o->n_in, outs, &err))
    return false;
  *out = outs[0];
  return true;
}

/* Relative tolerance of an op family: exact for data movement, a few ulps
 * for arithmetic, more for the math library and for sums. */
static double op_tol(dy_op_kind k) {
  const dy_op_info *info = dy_op_info_of(k);
  switch (k) {
  case DY_OP_ADD: case DY_OP_SUB: case DY_OP_MUL: case DY_OP_RELU: case DY_OP_NEG:
  case DY_OP_ABS: case DY_OP_MINIMUM: case DY_OP_MAXIMUM: case DY_OP_CLIP: case DY_OP_WHERE:
  case DY_OP_CAST: case DY_OP_SCALE: case DY_OP_LEAKY_RELU:
    return 2e-6;
  case DY_OP_DIV: case DY_OP_RECIPROCAL: case DY_OP_SQRT: case DY_OP_RSQRT:
    return 1e-5;
  default:
    break;
  }
  if (info->flags & DY_OPF_VIEW)
    return 0;
  if (info->flags & DY_OPF_ELEMENTWISE)
    return 3e-5; /* the generated math library: a few ulps */
  return 1e-4;   /* reductions, GEMM, conv, normalisation: summation order */
}

/* Append o (inputs and attributes set) when inference, the eager kernel
 * and the checks accept it; returns its value index or -1. */
int dt_try_op(dt_prog *g, dt_op o) {
  if (g->n_ops == DT_MAX_OPS || g->n_vals == DT_MAX_VALS)
    return -1;
  dy_type decl;
  if (!dt_infer_decl(g, &o, &decl))
    return -1;
  dy_tensor *in[DT_MAX_IN];
  for (int i = 0; i < o.n_in; i++)
    in[i] = g->v[o.in[i]].t;
  dy_tensor *y = dt_apply_op(&o, in);
  dy_type want = type_at(&decl, g->batch);
  if (!y || !dy_type_equal(&y->type, &want) || dy_tensor_numel(y) > 20000 ||
      dy_tensor_numel(y) < 1 || !all_finite(y, 1e4) || !well_conditioned(g, &o, in, y)) {
    dy_tensor_free(y);
    return -1;
  }
  int v = dt_add_val(g, DT_OPV, &decl, y);
  if (v < 0)
    return -1;
  o.out = v;
  o.tol = op_tol(o.kind);
  g->ops[g->n_ops++] = o;
  return v;
}


/* ---- choosing inputs ---- */

static bool usable(const dt_prog *g, int v, dy_dtype dt, int min_rank) {
  return g->v[v].kind != DT_CONST && g->v[v].type.dtype == dt && g->v[v].type.rank >= min_rank;
}

/* A value of dtype dt and rank >= min_rank: the newest such with
 * probability 0.6, else any; -1 if none. */
int dt_pick_val(dt_prog *g, dy_dtype dt, int min_rank) {
  int cand[DT_MAX_VALS], n = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (usable(g, v, dt, min_rank))
      cand[n++] = v;
  if (n == 0)
    return -1;
  return coin(g, 0.6) ? cand[n - 1] : cand[pick(g, n)];
}

int dt_pick_rank(dt_prog *g, int rank) {
  int cand[DT_MAX_VALS], n = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (usable(g, v, DY_F32, rank) && g->v[v].type.rank == rank)
      cand[n++] = v;
  if (n == 0)
    return -1;
  return coin(g, 0.6) ? cand[n - 1] : cand[pick(g, n)];
}

/* A static dim of x other than the batch, or -1. */
int dt_static_axis(dt_prog *g, int x) {
  const dy_type *t = &g->v[x].type;
  int ax[DY_MAX_DIMS], n = 0;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] > 0)
      ax[n++] = d;
  return n ? ax[pick(g, n)] : -1;
}

static const dy_op_kind acts[] = {DY_OP_RELU,  DY_OP_SIGMOID,    DY_OP_TANH,     DY_OP_GELU,
                                  DY_OP_SILU,  DY_OP_LEAKY_RELU, DY_OP_HARD_SWISH, DY_OP_ELU,
                                  DY_OP_SOFTPLUS, DY_OP_HARD_SIGMOID, DY_OP_CLIP};

/* An activation on x (attributes jittered), or x itself when refused. */
int dt_activation(dt_prog *g, int x) {
  dt_op o = op1(acts[pick(g, (int64_t)(sizeof acts / sizeof acts[0]))], x);
  if (o.kind == DY_OP_CLIP) {
    dt_set_f(&o, "min", -unif(g));
    dt_set_f(&o, "max", unif(g) * 2);
  }
  if (o.kind == DY_OP_GELU)
    dt_set_i(&o, "approximate", pick(g, 2));
  if (o.kind == DY_OP_LEAKY_RELU)
    dt_set_f(&o, "alpha", 0.01 + 0.3 * unif(g));
  int y = dt_try_op(g, o);
  return y >= 0 ? y : x;
}

/* The gradient op of forward op f (its result y): conv2d_grad_filter,
 * pool2d_grad, grid_sample_grad or roi_align_grad, on dy = tanh(y), with
 * f's attributes (those the gradient op has). */
void dt_grad_of(dt_prog *g, const dt_op *f, int y) {
  int dy = dt_try_op(g, op1(DY_OP_TANH, y));
  if (dy < 0)
    return;
  dt_op o = {.n_in = 0};
  switch (f->kind) {
  case DY_OP_CONV2D: {
    o = op2(DY_OP_CONV2D_GRAD_FILTER, f->in[0], dy);
    const dy_type *w = &g->v[f->in[1]].type;
    dt_set_is(&o, "ksize", &w->shape[2], 2);
    break;
  }
  case DY_OP_POOL2D:
    o = (dt_op){.kind = DY_OP_POOL2D_GRAD, .n_in = 3, .in = {f->in[0], y, dy}};
    break;
  case DY_OP_GRID_SAMPLE:
    o = (dt_op){.kind = DY_OP_GRID_SAMPLE_GRAD, .n_in = 3, .in = {dy, f->in[1], f->in[0]}};
    break;
  case DY_OP_ROI_ALIGN:
    o = (dt_op){.kind = DY_OP_ROI_ALIGN_GRAD, .n_in = 4,
                .in = {dy, f->in[1], f->in[2], f->in[0]}};
    break;
  default:
    return;
  }
  for (int i = 0; i < f->n_attrs; i++) {
    dt_attr *a = dy_attr_schema_find(o.kind, f->attrs[i].name) ? dt_attr_slot(&o, f->attrs[i].name)
                                                                : NULL;
    if (a)
      *a = f->attrs[i];
  }
  dt_try_op(g, o);
}


/* ---- the program ---- */

/* The recipes and how often each is drawn (out of 100). */
static const struct {
  int weight;
  void (*make)(dt_prog *g);
} recipes[] = {
    {18, dt_recipe_unary}, {16, dt_recipe_binary}, {10, dt_recipe_linear}, {10, dt_recipe_conv}, {4, dt_recipe_pool}, {4, dt_recipe_softmax},
    {5, dt_recipe_reduce}, {4, dt_recipe_norm},    {9, dt_recipe_shape},   {3, dt_recipe_select}, {3, dt_recipe_int}, {8, dt_recipe_extra},
    {6, dt_recipe_quant},
};

dt_prog *dt_generate(uint64_t seed, int max_ops) {
  dt_prog *g = calloc(1, sizeof *g);
  if (!g)
    return NULL;
  g->seed = seed;
  g->rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  if (!g->rng)
    g->rng = 1;
  for (int k = 0; k < 4; k++)
    rnd(g);
  g->batch = 1 + pick(g, 3);
  g->max_batch = coin(g, 0.15) ? 64 : g->batch + pick(g, 3); /* the arena at a far bound too */
  int n_feeds = 1 + (int)pick(g, 2);
  int kind = (int)pick(g, 3);
  for (int f = 0; f < n_feeds; f++) {
    dy_type t = {.dtype = DY_F32, .rank = 2 + kind};
    t.shape[0] = -1;
    if (kind == 0) {
      t.shape[1] = 2 + pick(g, 40);
    } else if (kind == 1) {
      t.shape[1] = 2 + pick(g, 6);
      t.shape[2] = 2 + pick(g, 16);
    } else {
      t.shape[1] = 1 + pick(g, 5);
      t.shape[2] = 3 + pick(g, 7);
      t.shape[3] = 3 + pick(g, 7);
    }
    if (dt_add_feed(g, &t) < 0) {
      dt_free(g);
      return NULL;
    }
    if (coin(g, 0.5))
      kind = (int)pick(g, 3);
  }
  int target = 3 + (int)pick(g, max_ops - 2 > 1 ? max_ops - 2 : 1);
  for (int tries = 0; tries < 12 * target && g->n_ops < target; tries++) {
    int r = (int)pick(g, 100), k = 0;
    while (r >= recipes[k].weight)
      r -= recipes[k++].weight;
    recipes[k].make(g);
  }
  /* fetch: the newest op result, and up to three results no op reads */
  if (g->n_ops == 0) {
    dt_free(g);
    return dt_generate(seed + 0x100000000ull, max_ops);
  }
  g->fetch[g->n_fetch++] = g->ops[g->n_ops - 1].out;
  for (int k = g->n_ops - 2; k >= 0 && g->n_fetch < DT_MAX_FETCH; k--) {
    int v = g->ops[k].out;
    bool read = false;
    for (int j = k + 1; j < g->n_ops && !read; j++)
      for (int i = 0; i < g->ops[j].n_in; i++)
        read |= g->ops[j].in[i] == v;
    if (!read && coin(g, 0.7))
      g->fetch[g->n_fetch++] = v;
  }
  /* sometimes an intermediate that later ops read (it lives in the
   * caller's buffer, and no in-place op may write over it) */
  if (g->n_fetch < DT_MAX_FETCH && g->n_ops > 2 && coin(g, 0.4)) {
    int v = g->ops[pick(g, g->n_ops - 1)].out;
    bool dup = false;
    for (int f = 0; f < g->n_fetch; f++)
      dup |= g->fetch[f] == v;
    if (!dup)
      g->fetch[g->n_fetch++] = v;
  }
  return g;
}

void dt_free(dt_prog *g) {
  if (!g)
    return;
  for (int v = 0; v < g->n_vals; v++)
    dy_tensor_free(g->v[v].t);
  free(g);
}

static void val_name(const dt_prog *g, int v, char *buf, size_t n) {
  snprintf(buf, n, "%s%d", g->v[v].kind == DT_FEED ? "x" : g->v[v].kind == DT_CONST ? "w" : "v",
           v);
}

dy_program *dt_program(const dt_prog *g, dy_error *err) {
  dy_program *p = dy_program_new();
  if (!p) {
    dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "difftest: out of memory");
    return NULL;
  }
  int id[DT_MAX_VALS];
  for (int v = 0; v < g->n_vals; v++) {
    char name[32];
    val_name(g, v, name, sizeof name);
    id[v] = dy_program_add_var(p, name, &g->v[v].type);
    if (g->v[v].kind == DT_FEED && dy_program_add_feed(p, id[v], err))
      goto fail;
    if (g->v[v].kind == DT_CONST &&
        dy_program_set_data(p, id[v], g->v[v].t->data, g->v[v].t->nbytes, err))
      goto fail;
  }
  for (int k = 0; k < g->n_ops; k++) {
    const dt_op *o = &g->ops[k];
    dy_attr a[16];
    int n = full_attrs(o, a), ins[DT_MAX_IN];
    for (int i = 0; i < o->n_in; i++)
      ins[i] = id[o->in[i]];
    if (!dy_program_append_op(p, 0, o->kind, ins, o->n_in, &id[o->out], 1, a, n,
                              (dy_srcloc){"difftest", k + 1})) {
      dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "difftest: out of memory");
      goto fail;
    }
  }
  for (int f = 0; f < g->n_fetch; f++)
    if (dy_program_add_fetch(p, id[g->fetch[f]], err))
      goto fail;
  if (dy_verify(p, err))
    goto fail;
  return p;
fail:
  dy_program_free(p);
  return NULL;
}

void dt_print(const dt_prog *g, FILE *f) {
  fprintf(f, "# difftest seed %llu, batch %lld, max batch %lld\n", (unsigned long long)g->seed,
          (long long)g->batch, (long long)g->max_batch);
  dy_error err = {0};
  dy_program *p = dt_program(g, &err);
  if (!p) {
    fprintf(f, "# (no Program: %s)\n", err.msg);
    return;
  }
  dy_program_print(p, f);
  dy_program_free(p);
}

double dt_tol(const dt_prog *g) {
  double t = 1e-6;
  for (int k = 0; k < g->n_ops; k++)
    t += g->ops[k].tol;
  return fmin(t, 5e-3);
}
