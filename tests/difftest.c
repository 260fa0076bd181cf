/* difftest.c - random valid Programs over the op table, run four ways
 * (the contract is in difftest.h).
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
 * Running. dt_check writes each program's inputs as .bin files and its C
 * for each compiled mode (symbol prefix p<i>_<mode>), one driver main()
 * that runs them all and saves the fetches, compiles the translation units
 * two at a time, and compares everything with the eager values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difftest.h"
#include "dy_test.h"

/* ---- random numbers (xorshift64, as op_inputs.c) ---- */

static uint64_t rnd(dt_prog *g) {
  g->rng ^= g->rng << 13;
  g->rng ^= g->rng >> 7;
  g->rng ^= g->rng << 17;
  return g->rng;
}
static int64_t pick(dt_prog *g, int64_t n) { return n > 0 ? (int64_t)(rnd(g) % (uint64_t)n) : 0; }
static double unif(dt_prog *g) { return (double)(rnd(g) >> 11) / 9007199254740992.0; }
static bool coin(dt_prog *g, double p) { return unif(g) < p; }

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

static dt_attr *attr_slot(dt_op *o, const char *name) {
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
static void set_i(dt_op *o, const char *name, int64_t v) {
  dt_attr *a = attr_slot(o, name);
  if (a)
    a->i = v;
}
static void set_f(dt_op *o, const char *name, double v) {
  dt_attr *a = attr_slot(o, name);
  if (a)
    a->f = v;
}
static void set_is(dt_op *o, const char *name, const int64_t *v, int n) {
  dt_attr *a = attr_slot(o, name);
  if (a) {
    a->n = n < 8 ? n : 8;
    memcpy(a->ints, v, sizeof *v * (size_t)a->n);
  }
}
static void set_s(dt_op *o, const char *name, const char *v) {
  dt_attr *a = attr_slot(o, name);
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
static dy_tensor *random_tensor(const dy_type *t, int64_t batch, uint64_t s, double lo,
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

static double value_at(const dy_tensor *t, int64_t k) {
  switch (t->type.dtype) {
  case DY_F32: return ((const float *)t->data)[k];
  case DY_I64: return (double)((const int64_t *)t->data)[k];
  case DY_I32: return ((const int32_t *)t->data)[k];
  case DY_I8: return ((const int8_t *)t->data)[k];
  default: return ((const uint8_t *)t->data)[k];
  }
}

static int add_val(dt_prog *g, dt_val_kind kind, const dy_type *t, dy_tensor *x) {
  if (g->n_vals == DT_MAX_VALS || !x) {
    dy_tensor_free(x);
    return -1;
  }
  g->v[g->n_vals] = (dt_val){.kind = kind, .type = *t, .t = x};
  return g->n_vals++;
}

/* A feed of type t with random_tensor's data in [lo, hi). */
static int add_feed_in(dt_prog *g, const dy_type *t, double lo, double hi) {
  uint64_t s = rnd(g);
  int v = add_val(g, DT_FEED, t, random_tensor(t, g->batch, s, lo, hi));
  if (v >= 0) {
    g->v[v].seed = s;
    g->v[v].lo = lo;
    g->v[v].hi = hi;
  }
  return v;
}
static int add_feed(dt_prog *g, const dy_type *t) { return add_feed_in(g, t, -2, 2); }

/* A constant of static type t, f32 in [lo, hi). */
static int add_const(dt_prog *g, const dy_type *t, double lo, double hi) {
  return add_val(g, DT_CONST, t, random_tensor(t, 1, rnd(g), lo, hi));
}
static int add_const_i64(dt_prog *g, int rank, const int64_t *shape, int64_t below) {
  dy_type t = {.dtype = DY_I64, .rank = rank};
  memcpy(t.shape, shape, sizeof *shape * (size_t)rank);
  return add_val(g, DT_CONST, &t, random_tensor(&t, 1, rnd(g), 0, (double)below));
}
static dy_type f32_type(int rank, const int64_t *shape) {
  dy_type t = {.dtype = DY_F32, .rank = rank};
  memcpy(t.shape, shape, sizeof *shape * (size_t)rank);
  return t;
}
static int add_const_f32(dt_prog *g, int rank, const int64_t *shape, double lo, double hi) {
  dy_type t = f32_type(rank, shape);
  return add_const(g, &t, lo, hi);
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

static dy_tensor *apply_op(const dt_op *o, dy_tensor *const *in) {
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

static double max_abs(const dy_tensor *t) {
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
    dy_tensor *y2 = apply_op(o, pin);
    ok = y2 && dy_type_equal(&y2->type, &y->type);
    double scale = 1 + max_abs(y);
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
static bool infer_decl(const dt_prog *g, const dt_op *o, dy_type *out) {
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
static int try_op(dt_prog *g, dt_op o) {
  if (g->n_ops == DT_MAX_OPS || g->n_vals == DT_MAX_VALS)
    return -1;
  dy_type decl;
  if (!infer_decl(g, &o, &decl))
    return -1;
  dy_tensor *in[DT_MAX_IN];
  for (int i = 0; i < o.n_in; i++)
    in[i] = g->v[o.in[i]].t;
  dy_tensor *y = apply_op(&o, in);
  dy_type want = type_at(&decl, g->batch);
  if (!y || !dy_type_equal(&y->type, &want) || dy_tensor_numel(y) > 20000 ||
      dy_tensor_numel(y) < 1 || !all_finite(y, 1e4) || !well_conditioned(g, &o, in, y)) {
    dy_tensor_free(y);
    return -1;
  }
  int v = add_val(g, DT_OPV, &decl, y);
  if (v < 0)
    return -1;
  o.out = v;
  o.tol = op_tol(o.kind);
  g->ops[g->n_ops++] = o;
  return v;
}

static dt_op op1(dy_op_kind k, int a) { return (dt_op){.kind = k, .n_in = 1, .in = {a}}; }
static dt_op op2(dy_op_kind k, int a, int b) {
  return (dt_op){.kind = k, .n_in = 2, .in = {a, b}};
}

/* ---- choosing inputs ---- */

static bool usable(const dt_prog *g, int v, dy_dtype dt, int min_rank) {
  return g->v[v].kind != DT_CONST && g->v[v].type.dtype == dt && g->v[v].type.rank >= min_rank;
}

/* A value of dtype dt and rank >= min_rank: the newest such with
 * probability 0.6, else any; -1 if none. */
static int pick_val(dt_prog *g, dy_dtype dt, int min_rank) {
  int cand[DT_MAX_VALS], n = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (usable(g, v, dt, min_rank))
      cand[n++] = v;
  if (n == 0)
    return -1;
  return coin(g, 0.6) ? cand[n - 1] : cand[pick(g, n)];
}

static int pick_rank(dt_prog *g, int rank) {
  int cand[DT_MAX_VALS], n = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (usable(g, v, DY_F32, rank) && g->v[v].type.rank == rank)
      cand[n++] = v;
  if (n == 0)
    return -1;
  return coin(g, 0.6) ? cand[n - 1] : cand[pick(g, n)];
}

/* A static dim of x other than the batch, or -1. */
static int static_axis(dt_prog *g, int x) {
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
static int activation(dt_prog *g, int x) {
  dt_op o = op1(acts[pick(g, (int64_t)(sizeof acts / sizeof acts[0]))], x);
  if (o.kind == DY_OP_CLIP) {
    set_f(&o, "min", -unif(g));
    set_f(&o, "max", unif(g) * 2);
  }
  if (o.kind == DY_OP_GELU)
    set_i(&o, "approximate", pick(g, 2));
  if (o.kind == DY_OP_LEAKY_RELU)
    set_f(&o, "alpha", 0.01 + 0.3 * unif(g));
  int y = try_op(g, o);
  return y >= 0 ? y : x;
}

/* The gradient op of forward op f (its result y): conv2d_grad_filter,
 * pool2d_grad, grid_sample_grad or roi_align_grad, on dy = tanh(y), with
 * f's attributes (those the gradient op has). */
static void grad_of(dt_prog *g, const dt_op *f, int y) {
  int dy = try_op(g, op1(DY_OP_TANH, y));
  if (dy < 0)
    return;
  dt_op o = {.n_in = 0};
  switch (f->kind) {
  case DY_OP_CONV2D: {
    o = op2(DY_OP_CONV2D_GRAD_FILTER, f->in[0], dy);
    const dy_type *w = &g->v[f->in[1]].type;
    set_is(&o, "ksize", &w->shape[2], 2);
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
    dt_attr *a = dy_attr_schema_find(o.kind, f->attrs[i].name) ? attr_slot(&o, f->attrs[i].name)
                                                                : NULL;
    if (a)
      *a = f->attrs[i];
  }
  try_op(g, o);
}

/* ---- recipes ---- */

/* Any unary elementwise op of the table with attributes around their
 * defaults; a refused one is tried again on sigmoid(x) (domain). */
static void r_unary(dt_prog *g) {
  dy_op_kind kinds[DY_OP_COUNT];
  int n = 0;
  for (int k = 0; k < DY_OP_COUNT; k++) {
    unsigned f = dy_op_info_of((dy_op_kind)k)->flags;
    if ((f & DY_OPF_UNARY) && (f & DY_OPF_ELEMENTWISE) && !(f & DY_OPF_FUSED) &&
        k != DY_OP_CAST)
      kinds[n++] = (dy_op_kind)k;
  }
  int x = pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op o = op1(kinds[pick(g, n)], x);
  const dy_op_info *info = dy_op_info_of(o.kind);
  for (int k = 0; k < info->n_attrs; k++) {
    const dy_attr_schema *s = &info->attrs[k];
    if (s->kind == DY_ATTR_FLOAT) {
      double d = s->required ? 0 : s->dflt.f;
      if (s->required || coin(g, 0.5))
        set_f(&o, s->name, d != 0 ? d * (0.5 + unif(g)) : 2 * unif(g) - 1);
    } else if (s->kind == DY_ATTR_INT && coin(g, 0.5)) {
      set_i(&o, s->name, pick(g, 2));
    }
  }
  if (o.kind == DY_OP_CLIP) { /* min <= max */
    set_f(&o, "min", -unif(g));
    set_f(&o, "max", unif(g));
  }
  if (try_op(g, o) >= 0)
    return;
  int s = try_op(g, op1(DY_OP_SIGMOID, x));
  if (s >= 0) {
    o.in[0] = s;
    try_op(g, o);
  }
}

/* A broadcast partner of type t: some dims set to 1, leading dims
 * dropped, the batch always 1 (a constant). */
static int broadcast_const(dt_prog *g, const dy_type *t, double lo, double hi) {
  dy_type c = *t;
  for (int d = 0; d < c.rank; d++)
    if (c.shape[d] < 0 || coin(g, 0.3))
      c.shape[d] = 1;
  int drop = (int)pick(g, c.rank + 1);
  if (drop == c.rank && drop > 0 && coin(g, 0.7))
    drop--;
  memmove(c.shape, c.shape + drop, sizeof c.shape[0] * (size_t)(c.rank - drop));
  c.rank -= drop;
  return add_const(g, &c, lo, hi);
}

static void r_binary(dt_prog *g) {
  dy_op_kind kinds[DY_OP_COUNT];
  int n = 0;
  for (int k = 0; k < DY_OP_COUNT; k++) {
    unsigned f = dy_op_info_of((dy_op_kind)k)->flags;
    if ((f & DY_OPF_BINARY) && !(f & DY_OPF_FUSED))
      kinds[n++] = (dy_op_kind)k;
  }
  int x = pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op o = op2(kinds[pick(g, n)], x, x);
  bool positive = o.kind == DY_OP_DIV || o.kind == DY_OP_POW || o.kind == DY_OP_MOD;
  int r = (int)pick(g, 10);
  if (r == 9 && !positive && try_op(g, o) >= 0) /* x op x */
    return;
  if (r < 4) { /* another value that broadcasts */
    for (int tries = 0; tries < 6; tries++) {
      int y = pick_val(g, DY_F32, 0);
      o.in[1] = y;
      if (y != x && !positive && try_op(g, o) >= 0)
        return;
    }
  }
  if (r < 9 || positive) {
    o.in[1] = broadcast_const(g, &g->v[x].type, positive ? 0.5 : -1, positive ? 1.5 : 1);
    if (o.in[1] < 0)
      return;
    if (coin(g, 0.15)) { /* the same shape made by full */
      const dy_type *ct = &g->v[o.in[1]].type;
      dt_op f = {.kind = DY_OP_FULL};
      set_is(&f, "shape", ct->shape, ct->rank);
      set_f(&f, "value", positive ? 0.5 + unif(g) : 2 * unif(g) - 1);
      int fv = try_op(g, f);
      if (fv >= 0)
        o.in[1] = fv;
    }
    if (coin(g, 0.3) && !positive) /* constant first */
      o.in[1] = x, o.in[0] = g->n_vals - 1;
  }
  if (o.kind == DY_OP_POW) { /* a positive base */
    int s = try_op(g, op1(DY_OP_SIGMOID, x));
    if (s < 0)
      return;
    o.in[0] = s;
  }
  if (o.kind == DY_OP_MOD)
    set_i(&o, "fmod", pick(g, 2));
  try_op(g, o);
}

/* matmul [+ bias] [+ activation], or x @ y^T of two run-time values */
static void r_linear(dt_prog *g) {
  int x = pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  int64_t k = t->shape[t->rank - 1];
  if (k < 1 || k > 96)
    return;
  if (coin(g, 0.15)) { /* two run-time operands */
    dt_op o = op2(DY_OP_MATMUL, x, x);
    set_i(&o, "transpose_y", 1);
    try_op(g, o);
    return;
  }
  int64_t nout = 1 + pick(g, 24);
  bool ty = coin(g, 0.3);
  int w = add_const_f32(g, 2, ty ? (int64_t[]){nout, k} : (int64_t[]){k, nout}, -0.5, 0.5);
  dt_op o = op2(DY_OP_MATMUL, x, w);
  if (ty)
    set_i(&o, "transpose_y", 1);
  int y = try_op(g, o);
  if (y < 0)
    return;
  if (coin(g, 0.7)) {
    int b = add_const_f32(g, 1, (int64_t[]){nout}, -0.5, 0.5);
    int z = try_op(g, op2(DY_OP_ADD, y, b));
    y = z >= 0 ? z : y;
  }
  if (coin(g, 0.6))
    activation(g, y);
}

/* conv2d [+ bias] [+ activation | batch_norm], or conv2d_transpose */
static void r_conv(dt_prog *g) {
  int x = pick_rank(g, 4);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  int64_t c = t->shape[1];
  if (c < 1 || t->shape[2] < 1 || t->shape[3] < 1)
    return;
  int64_t groups = coin(g, 0.25) ? c : (c % 2 == 0 && coin(g, 0.3) ? 2 : 1);
  int64_t o_ch = groups * (1 + pick(g, 4)), kh = 1 + pick(g, 3), kw = 1 + pick(g, 3);
  bool tr = coin(g, 0.15);
  int w = add_const_f32(g, 4, tr ? (int64_t[]){c, o_ch / groups, kh, kw}
                                 : (int64_t[]){o_ch, c / groups, kh, kw},
                        -0.5, 0.5);
  dt_op o = op2(tr ? DY_OP_CONV2D_TRANSPOSE : DY_OP_CONV2D, x, w);
  int64_t st[2] = {1 + pick(g, 2), 1 + pick(g, 2)};
  int64_t dl[2] = {coin(g, 0.2) ? 2 : 1, 1};
  int64_t pd4[4] = {pick(g, 2), pick(g, 2), pick(g, 2), pick(g, 2)};
  set_is(&o, "strides", st, 2);
  set_is(&o, "dilations", dl, 2);
  if (tr || coin(g, 0.6))
    set_is(&o, "paddings", pd4, 2);
  else
    set_is(&o, "paddings", pd4, 4);
  set_i(&o, "groups", groups);
  int y = try_op(g, o);
  if (y < 0)
    return;
  if (!tr && coin(g, 0.12)) { /* the filter's gradient */
    grad_of(g, &g->ops[g->n_ops - 1], y);
    return;
  }
  if (!tr && coin(g, 0.3)) { /* batch norm (inference) */
    int64_t sh[1] = {o_ch};
    dy_type vt = f32_type(1, sh);
    dt_op bn = {.kind = DY_OP_BATCH_NORM, .n_in = 5,
                .in = {y, add_const(g, &vt, 0.5, 1.5), add_const(g, &vt, -0.5, 0.5),
                       add_const(g, &vt, -0.5, 0.5), add_const(g, &vt, 0.5, 2)}};
    set_i(&bn, "is_test", 1);
    int z = try_op(g, bn);
    y = z >= 0 ? z : y;
  } else if (coin(g, 0.7)) {
    bool r3 = coin(g, 0.5);
    int b = add_const_f32(g, r3 ? 3 : 4, r3 ? (int64_t[]){o_ch, 1, 1} : (int64_t[]){1, o_ch, 1, 1},
                          -0.5, 0.5);
    int z = try_op(g, op2(DY_OP_ADD, y, b));
    y = z >= 0 ? z : y;
  }
  if (coin(g, 0.6))
    activation(g, y);
}

static void r_pool(dt_prog *g) {
  int x = pick_rank(g, 4);
  if (x < 0)
    return;
  dt_op o = op1(DY_OP_POOL2D, x);
  set_s(&o, "pooling_type", coin(g, 0.5) ? "max" : "avg");
  int64_t ks[2] = {1 + pick(g, 3), 1 + pick(g, 3)};
  int64_t st[2] = {1 + pick(g, 2), 1 + pick(g, 2)};
  int64_t pd[2] = {pick(g, 2), pick(g, 2)};
  for (int d = 0; d < 2; d++)
    if (pd[d] >= ks[d])
      pd[d] = 0;
  set_is(&o, "ksize", ks, 2);
  int r = (int)pick(g, 6);
  if (r == 0) {
    set_i(&o, "global_pooling", 1);
  } else if (r == 1) {
    set_i(&o, "adaptive", 1);
  } else {
    set_is(&o, "strides", st, 2);
    set_is(&o, "paddings", pd, 2);
    set_i(&o, "ceil_mode", pick(g, 2));
    set_i(&o, "exclusive", pick(g, 2));
  }
  int y = try_op(g, o);
  if (y >= 0 && coin(g, 0.25))
    grad_of(g, &g->ops[g->n_ops - 1], y);
}

static void r_softmax(dt_prog *g) {
  int x = pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op o = op1(coin(g, 0.5) ? DY_OP_SOFTMAX : DY_OP_LOG_SOFTMAX, x);
  int r = g->v[x].type.rank;
  set_i(&o, "axis", pick(g, 2 * r) - r);
  try_op(g, o);
}

static void r_reduce(dt_prog *g) {
  static const dy_op_kind ks[] = {DY_OP_REDUCE_SUM, DY_OP_REDUCE_MEAN, DY_OP_REDUCE_MAX,
                                  DY_OP_REDUCE_MIN, DY_OP_REDUCE_PROD};
  int x = pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  dt_op o = op1(ks[pick(g, 5)], x);
  int r = g->v[x].type.rank, n = 0;
  int64_t axes[DY_MAX_DIMS];
  for (int d = 1; d < r; d++)
    if (coin(g, 0.5))
      axes[n++] = coin(g, 0.5) ? d : d - r;
  if (n == 0)
    axes[n++] = r - 1;
  set_is(&o, "axes", axes, n);
  set_i(&o, "keepdim", pick(g, 2));
  if (o.kind == DY_OP_REDUCE_PROD) { /* a bounded product */
    int s = try_op(g, op1(DY_OP_SIGMOID, x));
    if (s < 0)
      return;
    o.in[0] = s;
  }
  try_op(g, o);
}

static void r_norm(dt_prog *g) {
  int x = pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  if (t->rank == 4 && coin(g, 0.4)) {
    int64_t c = t->shape[1], groups = c % 2 == 0 && coin(g, 0.5) ? 2 : (coin(g, 0.5) ? c : 1);
    dy_type vt = f32_type(1, (int64_t[]){c});
    dt_op o = {.kind = DY_OP_GROUP_NORM, .n_in = 3,
               .in = {x, add_const(g, &vt, 0.5, 1.5), add_const(g, &vt, -0.5, 0.5)}};
    set_i(&o, "groups", groups);
    try_op(g, o);
    return;
  }
  int axis = 1 + (int)pick(g, t->rank - 1);
  int64_t cols = 1;
  for (int d = axis; d < t->rank; d++)
    cols *= t->shape[d];
  if (cols < 2)
    return;
  dy_type vt = f32_type(1, (int64_t[]){cols});
  dt_op o = {.kind = DY_OP_LAYER_NORM, .n_in = 3,
             .in = {x, add_const(g, &vt, 0.5, 1.5), add_const(g, &vt, -0.5, 0.5)}};
  set_i(&o, "begin_norm_axis", axis);
  try_op(g, o);
}

/* reshape_dims of x (one batch dim): the batch kept whole ("-1"), the
 * other sizes' product merged or split in two, the batch entry first or
 * second. */
static int reshape_dims(dt_prog *g, int x) {
  const dy_type *t = &g->v[x].type;
  int64_t prod = 1, n_batch = 0;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] < 0)
      n_batch++;
    else
      prod *= t->shape[d];
  if (n_batch != 1)
    return -1;
  int64_t f = 1 + pick(g, prod);
  while (prod % f)
    f--;
  if (prod > 1000000)
    return -1;
  char sizes[24];
  if (f > 1 && f < prod && coin(g, 0.6))
    snprintf(sizes, sizeof sizes, "%d,%d", (int)f, (int)(prod / f));
  else
    snprintf(sizes, sizeof sizes, "%d", (int)prod);
  dt_op o = op1(DY_OP_RESHAPE_DIMS, x);
  dt_attr *a = attr_slot(&o, "dims");
  if (!a)
    return -1;
  a->s = NULL;
  if (coin(g, 0.25) && strchr(sizes, ',')) { /* the batch second */
    *strchr(sizes, ',') = '\0';
    snprintf(a->sbuf, sizeof a->sbuf, "%s,-1,%d", sizes, (int)(prod / f));
  } else {
    snprintf(a->sbuf, sizeof a->sbuf, "-1,%s", sizes);
  }
  return try_op(g, o);
}

static void r_shape(dt_prog *g) {
  int x = pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  int r = t->rank;
  dt_op o = op1(DY_OP_TRANSPOSE, x);
  int64_t v[8];
  switch (pick(g, 11)) {
  case 0: /* transpose: the batch stays first, or moves */
    for (int d = 0; d < r; d++)
      v[d] = d;
    for (int d = r - 1; d > (coin(g, 0.8) ? 1 : 0); d--) {
      int e = (int)pick(g, d) + (v[0] == 0 && d > 1 ? 1 : 0);
      if (e > d)
        e = d;
      int64_t s = v[d];
      v[d] = v[e];
      v[e] = s;
    }
    set_is(&o, "perm", v, r);
    break;
  case 1: /* reshape: merge the dims after the batch, or split one */
    o.kind = DY_OP_RESHAPE;
    if (r >= 3 || coin(g, 0.5)) {
      v[0] = 0;
      v[1] = -1;
      set_is(&o, "shape", v, 2);
    } else {
      int64_t last = t->shape[r - 1];
      if (last % 2)
        return;
      for (int d = 0; d < r - 1; d++)
        v[d] = 0;
      v[r - 1] = 2;
      v[r] = last / 2;
      set_is(&o, "shape", v, r + 1);
    }
    break;
  case 2:
    if (coin(g, 0.4)) {
      reshape_dims(g, x);
      return;
    }
    o.kind = DY_OP_FLATTEN;
    set_i(&o, "start_axis", 1);
    break;
  case 3: /* squeeze a dim of 1, else unsqueeze one */
    o.kind = DY_OP_UNSQUEEZE;
    v[0] = 1 + pick(g, r);
    for (int d = 1; d < r; d++)
      if (t->shape[d] == 1 && coin(g, 0.8)) {
        o.kind = DY_OP_SQUEEZE;
        v[0] = d;
      }
    if (o.kind == DY_OP_UNSQUEEZE && coin(g, 0.5)) { /* and squeeze it again, later */
      set_is(&o, "axes", v, 1);
      int y = try_op(g, o);
      if (y < 0 || try_op(g, op1(DY_OP_RELU, y)) < 0)
        return;
      o = op1(DY_OP_SQUEEZE, g->n_vals - 1);
    }
    set_is(&o, "axes", v, 1);
    break;
  case 4: { /* slice a static axis */
    int a = static_axis(g, x);
    if (a < 0 || t->shape[a] < 2)
      return;
    o.kind = DY_OP_SLICE;
    int64_t n = t->shape[a], st = pick(g, n - 1), en = st + 1 + pick(g, n - st), step = 1;
    if (coin(g, 0.2)) { /* backwards */
      step = -1;
      int64_t s0 = en - 1;
      en = st - 1 < 0 ? -n - 1 : st - 1;
      st = s0;
    }
    set_is(&o, "starts", &st, 1);
    set_is(&o, "ends", &en, 1);
    set_is(&o, "axes", (int64_t[]){a}, 1);
    set_is(&o, "steps", &step, 1);
    break;
  }
  case 5: /* pad */
    o.kind = DY_OP_PAD;
    for (int d = 0; d < 2 * r; d++)
      v[d] = (d == 0 || d == r) ? 0 : pick(g, 2);
    set_is(&o, "paddings", v, 2 * r);
    set_s(&o, "mode", (const char *[]){"constant", "reflect", "edge"}[pick(g, 3)]);
    set_f(&o, "value", unif(g));
    break;
  case 6: /* tile */
    o.kind = DY_OP_TILE;
    for (int d = 0; d < r; d++)
      v[d] = d == 0 || t->shape[d] < 0 ? 1 : 1 + pick(g, 2);
    set_is(&o, "repeat_times", v, r);
    break;
  case 7: { /* concat with itself or a constant along a static axis */
    int a = static_axis(g, x);
    if (a < 0)
      return;
    o = op2(DY_OP_CONCAT, x, x);
    if (coin(g, 0.5) && t->shape[0] > 0)
      o.in[1] = add_const(g, t, -1, 1);
    set_i(&o, "axis", a);
    break;
  }
  case 8:
    o.kind = DY_OP_CUMSUM;
    set_i(&o, "axis", pick(g, r));
    set_i(&o, "exclusive", pick(g, 2));
    set_i(&o, "reverse", pick(g, 2));
    break;
  case 9: { /* gather along a static axis */
    int a = static_axis(g, x);
    if (a < 0)
      return;
    int64_t n = 1 + pick(g, 5);
    o = op2(DY_OP_GATHER, x, add_const_i64(g, 1, &n, t->shape[a]));
    set_i(&o, "axis", a);
    break;
  }
  default: { /* expand a size-1 dim, made by unsqueeze */
    dt_op u = op1(DY_OP_UNSQUEEZE, x);
    int64_t ax = r;
    set_is(&u, "axes", &ax, 1);
    int y = try_op(g, u);
    if (y < 0)
      return;
    for (int d = 0; d < r; d++)
      v[d] = t->shape[d] < 0 ? -1 : t->shape[d];
    v[r] = 2 + pick(g, 3);
    o = op1(DY_OP_EXPAND, y);
    set_is(&o, "shape", v, r + 1);
    break;
  }
  }
  try_op(g, o);
}

/* where(a > b, a, b), cast to i64 and back, argmax / top_k, eval dropout */
static void r_select(dt_prog *g) {
  int x = pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  switch (pick(g, 4)) {
  case 0: {
    static const dy_op_kind cmp[] = {DY_OP_GREATER, DY_OP_LESS, DY_OP_EQUAL};
    int b = broadcast_const(g, t, -1, 1);
    int c = try_op(g, op2(cmp[pick(g, 3)], x, b));
    if (c < 0)
      return;
    dt_op w = {.kind = DY_OP_WHERE, .n_in = 3, .in = {c, x, b}};
    if (coin(g, 0.5))
      w.in[1] = b, w.in[2] = x;
    try_op(g, w);
    break;
  }
  case 1: {
    dt_op c = op1(DY_OP_CAST, x);
    set_i(&c, "dtype", DY_I64);
    int y = try_op(g, c);
    if (y < 0)
      return;
    c = op1(DY_OP_CAST, y);
    set_i(&c, "dtype", DY_F32);
    try_op(g, c);
    break;
  }
  case 2: {
    dt_op o = op1(coin(g, 0.5) ? DY_OP_ARGMAX : DY_OP_TOP_K, x);
    int a = static_axis(g, x);
    if (a < 0)
      return;
    set_i(&o, "axis", a);
    if (o.kind == DY_OP_TOP_K) {
      set_i(&o, "k", 1 + pick(g, t->shape[a]));
      set_i(&o, "largest", pick(g, 2));
    } else {
      set_i(&o, "keepdim", pick(g, 2));
    }
    int y = try_op(g, o);
    if (y >= 0 && g->v[y].type.dtype == DY_I64) {
      dt_op c = op1(DY_OP_CAST, y);
      set_i(&c, "dtype", DY_F32);
      try_op(g, c);
    }
    break;
  }
  default: {
    dt_op o = op1(DY_OP_DROPOUT, x);
    set_f(&o, "p", unif(g) * 0.5);
    set_i(&o, "is_test", 1);
    try_op(g, o);
  }
  }
}

/* Integer and bool arithmetic: x * s cast to i64 (or to bool), then a few
 * ops on it with i64 constants of both signs (division and remainder by
 * nonzero ones, both remainder conventions), comparisons and where, and a
 * cast back to f32. */
static void r_int(dt_prog *g) {
  int x = pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op sc = op1(DY_OP_SCALE, x);
  set_f(&sc, "scale", 1 + 9 * unif(g));
  int xs = try_op(g, sc);
  if (xs < 0)
    return;
  dt_op c = op1(DY_OP_CAST, xs);
  bool to_bool = coin(g, 0.2);
  set_i(&c, "dtype", to_bool ? DY_BOOL : DY_I64);
  int y = try_op(g, c);
  if (y < 0)
    return;
  if (to_bool) { /* where(b, x, -x) */
    int nx = try_op(g, op1(DY_OP_NEG, x));
    if (nx >= 0)
      try_op(g, (dt_op){.kind = DY_OP_WHERE, .n_in = 3, .in = {y, x, nx}});
    return;
  }
  static const dy_op_kind ks[] = {DY_OP_ADD,     DY_OP_SUB,     DY_OP_MUL,   DY_OP_DIV,
                                  DY_OP_MOD,     DY_OP_MINIMUM, DY_OP_MAXIMUM, DY_OP_ABS,
                                  DY_OP_NEG,     DY_OP_GREATER, DY_OP_EQUAL};
  int n = 1 + (int)pick(g, 3);
  for (int k = 0; k < n; k++) {
    dt_op o = op1(ks[pick(g, (int64_t)(sizeof ks / sizeof ks[0]))], y);
    if (dy_op_info_of(o.kind)->flags & DY_OPF_BINARY) {
      dy_type ct = g->v[y].type;
      for (int d = 0; d < ct.rank; d++)
        if (ct.shape[d] < 0 || coin(g, 0.5))
          ct.shape[d] = 1;
      int b = add_const_i64(g, ct.rank, ct.shape, 9);
      if (b < 0)
        return;
      int64_t *bv = g->v[b].t->data; /* [-4, 4] without 0 */
      for (int64_t i = 0; i < dy_tensor_numel(g->v[b].t); i++)
        bv[i] = bv[i] - 4 == 0 ? 3 : bv[i] - 4;
      o = op2(o.kind, y, b);
      if (o.kind == DY_OP_MOD)
        set_i(&o, "fmod", pick(g, 2));
    }
    int z = try_op(g, o);
    if (z < 0)
      continue;
    if (g->v[z].type.dtype == DY_BOOL) { /* where(cmp, y, -y) */
      int ny = try_op(g, op1(DY_OP_NEG, y));
      z = ny < 0 ? -1 : try_op(g, (dt_op){.kind = DY_OP_WHERE, .n_in = 3, .in = {z, y, ny}});
      if (z < 0)
        return;
    }
    y = z;
  }
  c = op1(DY_OP_CAST, y);
  set_i(&c, "dtype", DY_F32);
  try_op(g, c);
}

/* A rank-4 value, a new feed [-1, C, H, W] when there is none. */
static int image(dt_prog *g) {
  int x = pick_rank(g, 4);
  if (x >= 0)
    return x;
  dy_type t = {.dtype = DY_F32, .rank = 4,
               .shape = {-1, 1 + pick(g, 3), 3 + pick(g, 5), 3 + pick(g, 5)}};
  return add_feed(g, &t);
}

/* The extra family: element and tuple indexing with index feeds, scatters,
 * det and inverse of well-conditioned matrices, grid_sample, roi_align,
 * expand_as. */
static void r_extra(dt_prog *g) {
  int x = pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  dy_type t = g->v[x].type;
  int r = t.rank;
  dt_op o = op1(DY_OP_GATHER_ELEMENTS, x);
  switch (pick(g, 7)) {
  case 0:
  case 1: { /* gather_elements / scatter_elements along a static axis */
    int a = static_axis(g, x);
    if (a < 0)
      return;
    dy_type it = t;
    it.dtype = DY_I64;
    it.shape[a] = 1 + pick(g, t.shape[a]);
    int idx = add_feed_in(g, &it, 0, (double)t.shape[a]);
    o.in[1] = idx;
    o.n_in = 2;
    if (coin(g, 0.5)) {
      o.kind = DY_OP_SCATTER_ELEMENTS;
      dy_type ut = it;
      ut.dtype = DY_F32;
      o.in[2] = add_feed(g, &ut);
      o.n_in = 3;
      set_s(&o, "reduction", (const char *[]){"none", "add", "mul", "max", "min"}[pick(g, 5)]);
    }
    set_i(&o, "axis", coin(g, 0.5) ? a : a - r);
    break;
  }
  case 2: { /* gather_nd over the batch (batch_dims 1), scatter_nd into row 0 */
    if (t.shape[0] >= 0 || t.shape[1] < 1)
      return;
    int64_t n = 1 + pick(g, 4);
    if (coin(g, 0.5)) {
      dy_type it = {.dtype = DY_I64, .rank = 3, .shape = {-1, n, 1}};
      o = op2(DY_OP_GATHER_ND, x, add_feed_in(g, &it, 0, (double)t.shape[1]));
      set_i(&o, "batch_dims", 1);
    } else {
      int64_t sh[2] = {n, 1};
      int idx = add_const_i64(g, 2, sh, 1); /* row 0 of the batch */
      dy_type ut = t;
      ut.shape[0] = n;
      o = (dt_op){.kind = DY_OP_SCATTER_ND, .n_in = 3, .in = {x, idx, add_const(g, &ut, -1, 1)}};
      set_s(&o, "reduction", (const char *[]){"none", "add", "max"}[pick(g, 3)]);
    }
    break;
  }
  case 3: { /* det / inverse of x W + 2 I, [.., T, T] */
    int64_t k = t.shape[r - 1], n = t.shape[r - 2];
    if (k < 1 || n < 1 || n > 8)
      return;
    int w = add_const_f32(g, 2, (int64_t[]){k, n}, -0.3, 0.3);
    int m = try_op(g, op2(DY_OP_MATMUL, x, w));
    if (m < 0)
      return;
    float eye[64] = {0};
    for (int i = 0; i < n; i++)
      eye[i * n + i] = 2;
    dy_type et = f32_type(2, (int64_t[]){n, n});
    int e = add_val(g, DT_CONST, &et, dy_tensor_from_data(DY_F32, 2, et.shape, eye));
    int s = try_op(g, op2(DY_OP_ADD, m, e));
    if (s < 0)
      return;
    o = op1(coin(g, 0.5) ? DY_OP_DET : DY_OP_INVERSE, s);
    break;
  }
  case 4: { /* grid_sample on a grid in (-1, 1) */
    x = image(g);
    if (x < 0 || g->v[x].type.shape[0] >= 0)
      return;
    t = g->v[x].type;
    dy_type gt = {.dtype = DY_F32, .rank = 4, .shape = {-1, 1 + pick(g, 5), 1 + pick(g, 5), 2}};
    int grid = try_op(g, op1(DY_OP_TANH, add_feed(g, &gt)));
    if (grid < 0)
      return;
    o = op2(DY_OP_GRID_SAMPLE, x, grid);
    set_s(&o, "mode", (const char *[]){"bilinear", "nearest", "bicubic"}[pick(g, 3)]);
    set_s(&o, "padding_mode", (const char *[]){"zeros", "border", "reflection"}[pick(g, 3)]);
    set_i(&o, "align_corners", pick(g, 2));
    break;
  }
  case 5: { /* roi_align: boxes inside the image, all of batch row 0 */
    x = image(g);
    if (x < 0)
      return;
    t = g->v[x].type;
    int64_t nr = 1 + pick(g, 3);
    float box[16];
    for (int i = 0; i < nr; i++) {
      float x1 = (float)(unif(g) * (double)(t.shape[3] - 1)), y1 = (float)(unif(g) * (double)(t.shape[2] - 1));
      box[4 * i] = x1;
      box[4 * i + 1] = y1;
      box[4 * i + 2] = x1 + (float)(unif(g) * (double)(t.shape[3] - 1 - x1)) + 0.5f;
      box[4 * i + 3] = y1 + (float)(unif(g) * (double)(t.shape[2] - 1 - y1)) + 0.5f;
    }
    dy_type bt = f32_type(2, (int64_t[]){nr, 4});
    int rois = add_val(g, DT_CONST, &bt, dy_tensor_from_data(DY_F32, 2, bt.shape, box));
    o = (dt_op){.kind = DY_OP_ROI_ALIGN, .n_in = 3,
                .in = {x, rois, add_const_i64(g, 1, &nr, 1)}};
    set_s(&o, "mode", coin(g, 0.5) ? "avg" : "max");
    set_i(&o, "output_height", 1 + pick(g, 3));
    set_i(&o, "output_width", 1 + pick(g, 3));
    set_i(&o, "sampling_ratio", pick(g, 3));
    set_i(&o, "half_pixel", pick(g, 2));
    break;
  }
  default: /* expand_as: a broadcast constant to x's shape */
    o = op2(DY_OP_EXPAND_AS, broadcast_const(g, &t, -1, 1), x);
  }
  int y = try_op(g, o);
  if (y >= 0 && (o.kind == DY_OP_GRID_SAMPLE || o.kind == DY_OP_ROI_ALIGN) && coin(g, 0.6))
    grad_of(g, &g->ops[g->n_ops - 1], y);
}

/* ---- the quant family (ir/ops_quant.def) ---- */

/* A constant [n] (rank 0 when n is 0) of dtype dt, random_tensor's data
 * in [lo, hi). */
static int const_vec(dt_prog *g, dy_dtype dt, int64_t n, double lo, double hi) {
  dy_type t = {.dtype = dt, .rank = n > 0, .shape = {n}};
  return add_val(g, DT_CONST, &t, random_tensor(&t, 1, rnd(g), lo, hi));
}

/* A per-tensor parameter: [1] or rank 0. */
static int64_t one(dt_prog *g) { return coin(g, 0.7) ? 1 : 0; }

/* A zero point of dtype dt ([n], or per tensor when n is 0): near the
 * middle of the range (i8 [-20, 20), u8 [108, 148), i32 [-50, 50)), or 0
 * when zero. */
static int zero_point(dt_prog *g, dy_dtype dt, int64_t n, bool zero) {
  if (n == 0)
    n = one(g);
  if (zero)
    return const_vec(g, dt, n, 0, 1);
  double lo = dt == DY_U8 ? 108 : dt == DY_I8 ? -20 : -50;
  return const_vec(g, dt, n, lo, lo + (dt == DY_I32 ? 100 : 40));
}

/* The whole range of dtype dt (a weight's or a feed's values). */
static double q_lo(dy_dtype dt) { return dt == DY_U8 ? 0 : -128; }
static double q_hi(dy_dtype dt) { return dt == DY_U8 ? 256 : 128; }

static float fval(const dt_prog *g, int v, int64_t k) {
  const dy_tensor *t = g->v[v].t;
  return ((const float *)t->data)[dy_tensor_numel(t) == 1 ? 0 : k];
}
static float fmean(const dt_prog *g, int v) {
  double s = 0;
  int64_t n = dy_tensor_numel(g->v[v].t);
  for (int64_t k = 0; k < n; k++)
    s += fval(g, v, k);
  return (float)(s / (double)n);
}

/* A quantized value of dtype dt (i8 / u8) and rank >= min_rank: one made
 * already, quantize_linear of an f32 value (per tensor or per channel), or
 * a new feed over the whole range. */
static int q_source(dt_prog *g, dy_dtype dt, int min_rank) {
  int x = pick_val(g, dt, min_rank);
  if (x >= 0 && coin(g, 0.5))
    return x;
  int f = pick_val(g, DY_F32, min_rank);
  if (f >= 0 && coin(g, 0.7)) {
    const dy_type *t = &g->v[f].type;
    double m = max_abs(g->v[f].t) + 1e-3;
    int a = static_axis(g, f);
    bool per_channel = a >= 0 && t->shape[a] <= 32 && coin(g, 0.3);
    int64_t n = per_channel ? t->shape[a] : 0;
    dt_op o = {.kind = DY_OP_QUANTIZE_LINEAR, .n_in = 3,
               .in = {f, const_vec(g, DY_F32, n ? n : one(g), m / 140, m / 40),
                      zero_point(g, dt, n, coin(g, 0.2))}};
    set_i(&o, "axis", per_channel ? a : t->rank > 1);
    int y = try_op(g, o);
    if (y >= 0)
      return y;
  }
  dy_type t = {.dtype = dt, .rank = min_rank > 2 ? 4 : 2 + (int)pick(g, 2), .shape = {-1}};
  if (t.rank == 4) {
    t.shape[1] = 1 + pick(g, 6);
    t.shape[2] = 3 + pick(g, 7);
    t.shape[3] = 3 + pick(g, 7);
  } else {
    for (int d = 1; d < t.rank; d++)
      t.shape[d] = 2 + pick(g, t.rank == 2 ? 40 : 8);
  }
  return add_feed_in(g, &t, q_lo(dt), q_hi(dt));
}

/* The activation clamp of qconv2d / qmatmul / qadd / qmul: none, relu
 * (act_min = the y zero point) or a relu6-like upper bound too. */
static void q_act(dt_prog *g, dt_op *o, int y_zp) {
  int64_t zp = (int64_t)value_at(g->v[y_zp].t, 0);
  double r = unif(g);
  if (r < 0.3)
    set_i(o, "act_min", zp);
  if (r < 0.1)
    set_i(o, "act_max", zp + 1 + pick(g, 100));
}

/* conv2d's attributes: strides, paddings (2 or 4), dilations, groups */
static void conv_attrs(dt_prog *g, dt_op *o, int64_t groups) {
  int64_t st[2] = {1 + pick(g, 2), 1 + pick(g, 2)};
  int64_t dl[2] = {coin(g, 0.2) ? 2 : 1, coin(g, 0.1) ? 2 : 1};
  int64_t pd[4] = {pick(g, 2), pick(g, 2), pick(g, 2), pick(g, 2)};
  set_is(o, "strides", st, 2);
  set_is(o, "dilations", dl, 2);
  set_is(o, "paddings", pd, coin(g, 0.5) ? 2 : 4);
  set_i(o, "groups", groups);
}

/* The inputs of a convolution [O, C/groups, kh, kw] of x (rank 4, C
 * channels): groups 1, 2 or C (depthwise, one or two outputs a channel);
 * *w gets a constant filter of dtype wdt over the whole range. */
static int64_t q_filter(dt_prog *g, int x, dy_dtype wdt, int *w, int64_t *groups, int64_t *taps) {
  int64_t c = g->v[x].type.shape[1];
  double r = unif(g);
  *groups = r < 0.35 ? c : (c % 2 == 0 && r < 0.5 ? 2 : 1);
  int64_t o = *groups == c && c > 1 ? c * (coin(g, 0.8) ? 1 : 2) : *groups * (1 + pick(g, 4));
  int64_t kh = 1 + pick(g, 3), kw = 1 + pick(g, 3);
  dy_type t = {.dtype = wdt, .rank = 4, .shape = {o, c / *groups, kh, kw}};
  *w = add_val(g, DT_CONST, &t, random_tensor(&t, 1, rnd(g), q_lo(wdt), q_hi(wdt)));
  *taps = c / *groups * kh * kw;
  return o;
}

/* qconv2d or qmatmul: x (i8 / u8), a constant weight (i8 mostly, with zero
 * zero points mostly: the dot-product forms), scales per channel or per
 * tensor, a y scale that keeps most outputs in range, an i32 bias. */
static int r_qlinear(dt_prog *g, dy_dtype dt, bool conv) {
  int x = q_source(g, dt, conv ? 4 : 2);
  if (x < 0)
    return -1;
  const dy_type *xt = &g->v[x].type;
  dy_dtype wdt = coin(g, 0.85) ? DY_I8 : DY_U8;
  int w;
  int64_t n, groups = 1, taps;
  bool ty = false;
  if (conv) {
    n = q_filter(g, x, wdt, &w, &groups, &taps);
  } else {
    taps = xt->shape[xt->rank - 1];
    if (taps < 1 || taps > 128)
      return -1;
    n = 1 + pick(g, 24);
    ty = coin(g, 0.6);
    dy_type t = {.dtype = wdt, .rank = 2, .shape = {ty ? n : taps, ty ? taps : n}};
    w = add_val(g, DT_CONST, &t, random_tensor(&t, 1, rnd(g), q_lo(wdt), q_hi(wdt)));
  }
  int64_t nw = coin(g, 0.6) ? n : 0;
  int xs = const_vec(g, DY_F32, one(g), 0.01, 0.1), ws = const_vec(g, DY_F32, nw ? nw : one(g), 0.002, 0.02);
  dy_dtype ydt = coin(g, 0.8) ? dt : (dt == DY_I8 ? DY_U8 : DY_I8);
  /* |acc| is about 60 * 70 * sqrt(taps): y in about +-60 */
  double ys = fval(g, xs, 0) * fmean(g, ws) * 70 * sqrt((double)taps) * (0.5 + 1.5 * unif(g));
  int yzp = zero_point(g, ydt, 0, coin(g, 0.2));
  dt_op o = {.kind = conv ? DY_OP_QCONV2D : DY_OP_QMATMUL, .n_in = 9,
             .in = {x, xs, zero_point(g, dt, 0, coin(g, 0.2)), w, ws,
                    zero_point(g, wdt, nw, wdt == DY_I8 && coin(g, 0.75)),
                    const_vec(g, DY_F32, one(g), ys, ys * 1.01), yzp,
                    const_vec(g, DY_I32, n, -2000, 2000)}};
  if (conv)
    conv_attrs(g, &o, groups);
  else
    set_i(&o, "transpose_y", ty);
  q_act(g, &o, yzp);
  return try_op(g, o);
}

/* qadd / qmul of x and another value, x itself or a broadcast constant,
 * all per tensor */
static int r_qbinary(dt_prog *g, dy_dtype dt) {
  int a = q_source(g, dt, 1);
  if (a < 0)
    return -1;
  bool mul = coin(g, 0.4);
  int b = a;
  double r = unif(g);
  if (r < 0.3)
    b = pick_val(g, dt, 0);
  else if (r < 0.8)
    b = broadcast_const(g, &g->v[a].type, q_lo(dt), q_hi(dt));
  if (b < 0)
    return -1;
  int as = const_vec(g, DY_F32, one(g), 0.01, 0.1), bs = const_vec(g, DY_F32, one(g), 0.01, 0.1);
  double ys = mul ? fval(g, as, 0) * fval(g, bs, 0) * 60 : (fval(g, as, 0) + fval(g, bs, 0)) * 0.8;
  ys *= 0.5 + unif(g);
  int yzp = zero_point(g, dt, 0, coin(g, 0.2));
  dt_op o = {.kind = mul ? DY_OP_QMUL : DY_OP_QADD, .n_in = 8,
             .in = {a, as, zero_point(g, dt, 0, false), b, bs, zero_point(g, dt, 0, false),
                    const_vec(g, DY_F32, one(g), ys, ys * 1.01), yzp}};
  if (coin(g, 0.3))
    o.in[0] = b, o.in[3] = a;
  q_act(g, &o, yzp);
  return try_op(g, o);
}

/* matmul_integer / conv_integer against a constant: i32 results */
static int r_qinteger(dt_prog *g, dy_dtype dt, bool conv) {
  int x = q_source(g, dt, conv ? 4 : 2);
  if (x < 0)
    return -1;
  dy_dtype wdt = coin(g, 0.5) ? DY_I8 : DY_U8;
  int w;
  int64_t n, groups, taps;
  if (conv) {
    n = q_filter(g, x, wdt, &w, &groups, &taps);
  } else {
    const dy_type *xt = &g->v[x].type;
    int64_t k = xt->shape[xt->rank - 1];
    if (k < 1 || k > 128)
      return -1;
    n = 1 + pick(g, 16);
    dy_type t = {.dtype = wdt, .rank = 2, .shape = {k, n}};
    w = add_val(g, DT_CONST, &t, random_tensor(&t, 1, rnd(g), q_lo(wdt), q_hi(wdt)));
  }
  dt_op o = {.kind = conv ? DY_OP_CONV_INTEGER : DY_OP_MATMUL_INTEGER, .n_in = 4,
             .in = {x, w, zero_point(g, dt, 0, coin(g, 0.2)),
                    zero_point(g, wdt, coin(g, 0.5) ? n : 0, coin(g, 0.3))}};
  if (conv)
    conv_attrs(g, &o, groups);
  return try_op(g, o);
}

/* qsoftmax: y in scale 1/256 with zero point -128 (i8) or 0 (u8) */
static int r_qsoftmax(dt_prog *g, dy_dtype dt) {
  int x = q_source(g, dt, 1);
  if (x < 0)
    return -1;
  dy_dtype ydt = dt; /* y's dtype is x's */
  int ys = const_vec(g, DY_F32, one(g), 1.0 / 256, 1.0 / 256);
  int yzp = const_vec(g, ydt, one(g), ydt == DY_I8 ? -128 : 0, ydt == DY_I8 ? -127 : 1);
  dt_op o = {.kind = DY_OP_QSOFTMAX, .n_in = 5,
             .in = {x, const_vec(g, DY_F32, one(g), 0.01, 0.3), zero_point(g, dt, 0, false), ys,
                    yzp}};
  int r = g->v[x].type.rank;
  set_i(&o, "axis", pick(g, 2 * r) - r);
  return try_op(g, o);
}

/* The dtype-generic ops on a quantized value: pool2d, transpose,
 * reshape_dims, a clamp (maximum / minimum with a constant), concat. */
static int r_qmove(dt_prog *g, dy_dtype dt) {
  int x = q_source(g, dt, 1);
  if (x < 0)
    return -1;
  const dy_type *t = &g->v[x].type;
  int r = t->rank;
  dt_op o = op1(DY_OP_TRANSPOSE, x);
  switch (pick(g, 5)) {
  case 0:
    if (r != 4)
      return -1;
    o.kind = DY_OP_POOL2D;
    set_s(&o, "pooling_type", coin(g, 0.5) ? "max" : "avg");
    set_is(&o, "ksize", (int64_t[]){1 + pick(g, 3), 1 + pick(g, 3)}, 2);
    set_is(&o, "strides", (int64_t[]){1 + pick(g, 2), 1 + pick(g, 2)}, 2);
    set_i(&o, "global_pooling", coin(g, 0.2));
    break;
  case 1: {
    int64_t perm[DY_MAX_DIMS];
    for (int d = 0; d < r; d++)
      perm[d] = d;
    if (r < 2)
      return -1;
    int64_t a = 1 + pick(g, r - 1), b = pick(g, r), s = perm[a];
    perm[a] = perm[b];
    perm[b] = s;
    set_is(&o, "perm", perm, r);
    break;
  }
  case 2:
    return reshape_dims(g, x);
  case 3:
    o = op2(coin(g, 0.5) ? DY_OP_MAXIMUM : DY_OP_MINIMUM, x,
            broadcast_const(g, t, q_lo(dt) / 2, q_hi(dt) / 2));
    break;
  default: {
    int a = static_axis(g, x);
    if (a < 0)
      return -1;
    o = op2(DY_OP_CONCAT, x, x);
    set_i(&o, "axis", a);
  }
  }
  return try_op(g, o);
}

/* dequantize_linear of x (i8 / u8 / i32), per tensor or per channel */
static int dequantize(dt_prog *g, int x) {
  const dy_type *t = &g->v[x].type;
  dy_dtype dt = t->dtype;
  int a = static_axis(g, x);
  bool per_channel = a >= 0 && t->shape[a] <= 32 && coin(g, 0.3);
  int64_t n = per_channel ? t->shape[a] : 0;
  double lo = dt == DY_I32 ? 1e-4 : 0.005;
  dt_op o = {.kind = DY_OP_DEQUANTIZE_LINEAR, .n_in = 3,
             .in = {x, const_vec(g, DY_F32, n ? n : one(g), lo, lo * 10),
                    zero_point(g, dt, n, coin(g, 0.2))}};
  set_i(&o, "axis", per_channel ? a : t->rank > 1);
  return try_op(g, o);
}

/* One quant op (i8 or u8 in), its result dequantized mostly (so that f32
 * chains go on; the quantized value stays for the next quant recipe). */
static void r_quant(dt_prog *g) {
  dy_dtype dt = coin(g, 0.6) ? DY_I8 : DY_U8;
  int y;
  switch (pick(g, 9)) {
  case 0: case 1: y = r_qlinear(g, dt, true); break;
  case 2: y = r_qlinear(g, dt, false); break;
  case 3: y = r_qbinary(g, dt); break;
  case 4: y = r_qsoftmax(g, dt); break;
  case 5: y = r_qinteger(g, dt, false); break;
  case 6: y = r_qinteger(g, dt, true); break;
  case 7: y = r_qmove(g, dt); break;
  default: y = q_source(g, dt, 1); /* quantize_linear, dequantized */
  }
  if (y >= 0 && g->v[y].type.dtype != DY_F32 && (g->v[y].type.dtype == DY_I32 || coin(g, 0.7)))
    dequantize(g, y);
}

/* ---- the program ---- */

/* The recipes and how often each is drawn (out of 100). */
static const struct {
  int weight;
  void (*make)(dt_prog *g);
} recipes[] = {
    {18, r_unary}, {16, r_binary}, {10, r_linear}, {10, r_conv}, {4, r_pool}, {4, r_softmax},
    {5, r_reduce}, {4, r_norm},    {9, r_shape},   {3, r_select}, {3, r_int}, {8, r_extra},
    {6, r_quant},
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
    if (add_feed(g, &t) < 0) {
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

/* ---- running ---- */

static bool write_bin(const char *path, const dy_tensor *t) {
  dy_error err = {0};
  return dy_write_file_atomic(path, t->data, t->nbytes, &err) == DY_OK;
}

/* got (data of ref's type) agrees with the eager ref: exact for integers
 * and bools, within tol otherwise; else prints the first difference. */
static bool agree(const dt_prog *g, int mode, int f, const void *got, const dy_tensor *ref,
                  FILE *log) {
  dy_tensor t = *ref;
  t.data = (void *)got;
  double tol = ref->type.dtype == DY_F32 ? dt_tol(g) : 0;
  for (int64_t k = 0; k < dy_tensor_numel(ref); k++) {
    double a = value_at(&t, k), b = value_at(ref, k);
    if (fabs(a - b) <= tol * (1 + fabs(b)) || (isnan(a) && isnan(b)))
      continue;
    if (log)
      fprintf(log, "seed %llu: %s: fetch %d element %lld is %.9g, eager %.9g (tol %g)\n",
              (unsigned long long)g->seed, dt_mode_name(mode), f, (long long)k, a, b, tol);
    return false;
  }
  return true;
}

static int run_executor(const dt_prog *g, FILE *log) {
  dy_error err = {0};
  dy_program *p = dt_program(g, &err);
  dy_tensor *in[DT_MAX_VALS], *out[DT_MAX_FETCH] = {0};
  int n = 0, bad = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (g->v[v].kind == DT_FEED)
      in[n++] = g->v[v].t;
  if (!p || dy_executor_run(p, in, n, out, g->n_fetch, &err)) {
    if (log)
      fprintf(log, "seed %llu: executor: %s\n", (unsigned long long)g->seed, err.msg);
    bad = DT_EXEC;
  }
  for (int f = 0; !bad && f < g->n_fetch; f++) {
    const dy_tensor *ref = g->v[g->fetch[f]].t;
    if (!dy_type_equal(&out[f]->type, &ref->type) || !agree(g, DT_EXEC, f, out[f]->data, ref, log))
      bad = DT_EXEC;
  }
  for (int f = 0; f < g->n_fetch; f++)
    dy_tensor_free(out[f]);
  dy_program_free(p);
  return bad;
}

static const int compiled_modes[3] = {DT_O0, DT_O2, DT_T2};
static const char *const mode_tag[3] = {"o0", "o2", "t2"};

/* The driver's block running compiled program `name` (g) as block k:
 * inputs from in_<i>_<feed>.bin, outputs to out_<name>_<fetch>.bin. */
static void driver_block(dy_buf *b, const dt_prog *g, int i, const char *name, int k) {
  char up[32];
  size_t len = strlen(name);
  for (size_t c = 0; c <= len; c++)
    up[c] = (char)(name[c] >= 'a' && name[c] <= 'z' ? name[c] - 32 : name[c]);
  dy_buf_printf(b, "  if (only < 0 || only == %d) { /* %s */\n    const void *in[%d]; void *out[%d];\n",
                k, name, DT_MAX_VALS, DT_MAX_FETCH);
  int nf = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (g->v[v].kind == DT_FEED) {
      dy_buf_printf(b, "    in[%d] = load(\"in_%d_%d.bin\", %zu);\n", nf, i, nf, g->v[v].t->nbytes);
      nf++;
    }
  for (int f = 0; f < g->n_fetch; f++)
    dy_buf_printf(b, "    out[%d] = malloc(%zu + 1);\n", f, g->v[g->fetch[f]].t->nbytes);
  dy_buf_printf(b,
                "    void *arena = malloc(%s_ARENA_BYTES + 64);\n"
                "    int rc = %s_run_v(arena, %lld, in, out);\n"
                "    if (rc) fprintf(stderr, \"%s: status %%d\\n\", rc);\n",
                up, name, (long long)g->batch, name);
  for (int f = 0; f < g->n_fetch; f++)
    dy_buf_printf(b, "    if (!rc) save(\"out_%s_%d.bin\", out[%d], %zu);\n", name, f, f,
                  g->v[g->fetch[f]].t->nbytes);
  dy_buf_printf(b, "    free(arena);\n");
  for (int f = 0; f < g->n_fetch; f++)
    dy_buf_printf(b, "    free(out[%d]);\n", f);
  for (int k2 = 0; k2 < nf; k2++)
    dy_buf_printf(b, "    free((void *)in[%d]);\n", k2);
  dy_buf_printf(b, "  }\n");
}

static bool file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f)
    fclose(f);
  return f != NULL;
}

bool dt_check(dt_prog *const *progs, int n, int modes, const char *dir, int *bad, FILE *log) {
  dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  dy_buf srcs = {0};
  char path[1024];
  dy_error err = {0};
  /* the executor, the inputs and the C of every compiled mode */
  for (int i = 0; i < n; i++) {
    const dt_prog *g = progs[i];
    bad[i] = (modes & DT_EXEC) ? run_executor(g, log) : 0;
    int nf = 0;
    for (int v = 0; v < g->n_vals; v++)
      if (g->v[v].kind == DT_FEED) {
        snprintf(path, sizeof path, "%s/in_%d_%d.bin", dir, i, nf++);
        write_bin(path, g->v[v].t);
      }
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]))
        continue;
      dy_program *p = dt_program(g, &err);
      char name[32];
      snprintf(name, sizeof name, "p%d_%s", i, mode_tag[m]);
      dy_compile_options o = dy_compile_options_default();
      o.name = name;
      o.max_batch = g->max_batch;
      o.passes.opt_level = m == 0 ? 0 : 2;
      o.threads = m == 2 ? 2 : 0;
      /* the threaded build also runs every 3x3 stride-1 conv with a
       * constant weight as Winograd, F(2x2), F(4x4) or F(6x6) by seed */
      o.passes.winograd = m == 2 ? 2 + 2 * (int)(g->seed % 3) : 0;
      o.source = "difftest";
      dy_codegen_output co = {0};
      if (!p || dy_compile_program(p, &o, &co, NULL, &err)) {
        if (log)
          fprintf(log, "seed %llu: %s: compile: %s\n", (unsigned long long)g->seed,
                  dt_mode_name(compiled_modes[m]), err.msg);
        bad[i] |= compiled_modes[m];
      } else {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        dy_write_sources(&co, path, &err);
        /* -O0 programs built at -O1 for the SSE2 path, the others as
         * dy2stc builds them (-O2 here, the native instruction set); the
         * threaded ones split every kernel they can, however small (the
         * threshold the generated code lets -D change) */
        dy_buf_printf(&srcs, "%s.c %s\n", name,
                      m == 0 ? "-O1" : m == 1 ? "-O2 NATIVE" : "-O2 NATIVE -DDY_THREAD_MIN_WORK=1");
        if (co.weights) /* the weights' own translation unit */
          dy_buf_printf(&srcs, "%s_weights.c -O0\n", name);
      }
      dy_codegen_output_free(&co);
      dy_program_free(p);
    }
  }
  if (!srcs.s)
    return true;
  const char *tf = NULL;
  dy_target_flags(NULL, &tf, NULL, NULL, NULL);
  const char *cc_env = getenv("CC");
  const char *cc = cc_env && *cc_env ? cc_env : "cc";
  snprintf(path, sizeof path, "%s/sources.txt", dir);
  dy_write_file_atomic(path, srcs.s, srcs.len, &err);
  dy_buf_free(&srcs);
  /* two translation units at a time; one that does not build is that
   * program's failure (no .o) */
  dy_test_sh(NULL,
             "cd '%s' && sed 's/NATIVE/%s/' sources.txt | xargs -P 2 -L 1 sh -c "
             "'%s -std=c99 -w -pthread \"$@\" -c $0 || echo FAILED $0' > build.log 2>&1",
             dir, tf ? tf : "", cc);
  dy_buf drv = {0};
  int n_blocks = 0;
  for (int i = 0; i < n; i++)
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]) || (bad[i] & compiled_modes[m]))
        continue;
      char name[32];
      snprintf(name, sizeof name, "p%d_%s", i, mode_tag[m]);
      snprintf(path, sizeof path, "%s/%s.o", dir, name);
      if (!file_exists(path)) {
        if (log)
          fprintf(log, "seed %llu: %s: the emitted C does not compile (%s/build.log)\n",
                  (unsigned long long)progs[i]->seed, dt_mode_name(compiled_modes[m]), dir);
        bad[i] |= compiled_modes[m];
        continue;
      }
      dy_buf_printf(&drv, "#include \"%s.h\"\n", name);
      n_blocks++;
    }
  dy_buf_printf(&drv, "%s#include <stdlib.h>\nint main(int argc, char **argv) {\n"
                      "  int only = argc > 1 ? atoi(argv[1]) : -1;\n", dy_test_driver_io);
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]) || (bad[i] & compiled_modes[m]))
        continue;
      char name[32];
      snprintf(name, sizeof name, "p%d_%s", i, mode_tag[m]);
      driver_block(&drv, progs[i], i, name, k++);
    }
  dy_buf_printf(&drv, "  return 0;\n}\n");
  snprintf(path, sizeof path, "%s/driver.c", dir);
  dy_write_file_atomic(path, drv.s, drv.len, &err);
  dy_buf_free(&drv);
  bool ok = true;
  if (n_blocks) {
    int rc = dy_test_sh(NULL, "cd '%s' && %s -std=c11 -O1 -w -c driver.c >> build.log 2>&1 && "
                              "%s -o driver *.o -pthread -lm >> build.log 2>&1",
                        dir, cc, cc);
    if (rc) {
      dy_test_sh(NULL, "tail -5 '%s/build.log' >&2", dir);
      ok = false;
    } else if (dy_test_sh(NULL, "cd '%s' && ./driver > run.log 2>&1", dir)) {
      /* a crash: each block alone, so that the others still count */
      for (int b = 0; b < n_blocks; b++)
        dy_test_sh(NULL, "cd '%s' && ./driver %d >> run.log 2>&1", dir, b);
    }
  }
  for (int i = 0; i < n; i++)
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]) || (bad[i] & compiled_modes[m]))
        continue;
      for (int f = 0; f < progs[i]->n_fetch; f++) {
        const dy_tensor *ref = progs[i]->v[progs[i]->fetch[f]].t;
        snprintf(path, sizeof path, "%s/out_p%d_%s_%d.bin", dir, i, mode_tag[m], f);
        uint8_t *buf = NULL;
        size_t len = 0;
        if (dy_read_file(path, &buf, &len, &err) || len != ref->nbytes) {
          if (log)
            fprintf(log, "seed %llu: %s: no output %d (a status or a crash: %s/run.log)\n",
                    (unsigned long long)progs[i]->seed, dt_mode_name(compiled_modes[m]), f, dir);
          bad[i] |= compiled_modes[m];
          free(buf);
          break;
        }
        bool same = agree(progs[i], compiled_modes[m], f, buf, ref, log);
        free(buf);
        if (!same) {
          bad[i] |= compiled_modes[m];
          break;
        }
      }
    }
  return ok;
}

/* ---- minimising ---- */

/* g rebuilt at (batch, max_batch) without the ops drop marks: a reader of
 * a dropped op's result reads the op's first input instead when its
 * declared type is the same, else goes too; a fetch of it fetches the
 * newest op result it reads. Feed shrink_val (or none: -1) has its dim shrink_dim halved. Only
 * the feeds and constants still read stay; feeds are regenerated from
 * their seeds, results recomputed eagerly. NULL when the rest is refused
 * (inference, the kernel) or nothing is left to fetch. */
static dt_prog *rebuild(const dt_prog *g, const bool *drop, int64_t batch, int64_t max_batch,
                        int shrink_val, int shrink_dim) {
  dt_prog *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->seed = g->seed;
  h->batch = batch;
  h->max_batch = max_batch;
  h->rng = g->rng;
  /* map: old value -> new; alt: what a fetch of a dropped op's result
   * becomes (the newest op result it reads, whatever its type) */
  int map[DT_MAX_VALS], alt[DT_MAX_VALS];
  for (int v = 0; v < g->n_vals; v++)
    map[v] = alt[v] = -1;
  for (int k = 0; k < g->n_ops; k++) {
    const dt_op *o = &g->ops[k];
    bool gone = drop[k];
    dt_op c = *o;
    for (int i = 0; i < o->n_in && !gone; i++) {
      int v = o->in[i];
      if (map[v] < 0 && g->v[v].kind == DT_FEED) { /* feeds and constants when used */
        dy_type ft = g->v[v].type;
        if (v == shrink_val)
          ft.shape[shrink_dim] = (ft.shape[shrink_dim] + 1) / 2;
        map[v] = add_val(h, DT_FEED, &ft,
                         batch == g->batch && v != shrink_val
                             ? dy_keep(g->v[v].t)
                             : random_tensor(&ft, batch, g->v[v].seed, g->v[v].lo, g->v[v].hi));
        if (map[v] < 0)
          goto fail;
        h->v[map[v]].seed = g->v[v].seed;
        h->v[map[v]].lo = g->v[v].lo;
        h->v[map[v]].hi = g->v[v].hi;
      } else if (map[v] < 0 && g->v[v].kind == DT_CONST) {
        map[v] = add_val(h, DT_CONST, &g->v[v].type, dy_keep(g->v[v].t));
        if (map[v] < 0)
          goto fail;
      }
      gone = map[v] < 0;
      c.in[i] = map[v];
    }
    if (gone) {
      int a = o->n_in ? o->in[0] : -1;
      map[o->out] = a >= 0 && map[a] >= 0 && dy_type_equal(&g->v[a].type, &g->v[o->out].type)
                        ? map[a]
                        : -1;
      for (int i = 0; i < o->n_in; i++) { /* the newest op result it reads */
        int b = map[o->in[i]] >= 0 ? map[o->in[i]] : alt[o->in[i]];
        if (b >= 0 && h->v[b].kind == DT_OPV && b > alt[o->out])
          alt[o->out] = b;
      }
      continue;
    }
    dy_type decl;
    dy_tensor *in[DT_MAX_IN];
    for (int i = 0; i < c.n_in; i++)
      in[i] = h->v[c.in[i]].t;
    if (!infer_decl(h, &c, &decl))
      goto fail;
    dy_tensor *y = apply_op(&c, in);
    if (!y)
      goto fail;
    c.out = add_val(h, DT_OPV, &decl, y);
    if (c.out < 0)
      goto fail;
    map[o->out] = c.out;
    h->ops[h->n_ops++] = c;
  }
  for (int f = 0; f < g->n_fetch; f++) {
    int v = map[g->fetch[f]];
    if (v < 0 || h->v[v].kind != DT_OPV)
      v = alt[g->fetch[f]];
    bool dup = false;
    for (int j = 0; j < h->n_fetch; j++)
      dup |= h->fetch[j] == v;
    if (v >= 0 && h->v[v].kind == DT_OPV && !dup)
      h->fetch[h->n_fetch++] = v;
  }
  if (h->n_fetch == 0)
    goto fail;
  return h;
fail:
  dt_free(h);
  return NULL;
}

static bool still_bad(dt_prog *h, int mode, const char *dir, int *budget) {
  int bad = 0;
  if (!h || *budget <= 0)
    return false;
  (*budget)--;
  return dt_check(&h, 1, mode, dir, &bad, NULL) && (bad & mode);
}

dt_prog *dt_minimise(const dt_prog *g, int mode, const char *dir) {
  bool none[DT_MAX_OPS] = {0};
  dt_prog *cur = rebuild(g, none, g->batch, g->max_batch, -1, 0);
  int budget = 120;
  bool shrunk = false, changed = true;
  while (cur && changed && budget > 0) {
    changed = false;
    for (int k = cur->n_ops - 1; k >= 0 && budget > 0; k--) {
      bool drop[DT_MAX_OPS] = {0};
      drop[k] = true;
      dt_prog *h = rebuild(cur, drop, cur->batch, cur->max_batch, -1, 0);
      if (still_bad(h, mode, dir, &budget)) {
        dt_free(cur);
        cur = h;
        changed = shrunk = true;
      } else {
        dt_free(h);
      }
    }
    if (cur->batch > 1 || cur->max_batch > 1) { /* the smallest batch */
      dt_prog *h = rebuild(cur, none, 1, 1, -1, 0);
      if (still_bad(h, mode, dir, &budget)) {
        dt_free(cur);
        cur = h;
        changed = shrunk = true;
      } else {
        dt_free(h);
      }
    }
    /* smaller feeds: each static dim halved (what their consts and
     * attributes still allow) */
    for (int v = 0; v < cur->n_vals && budget > 0; v++)
      for (int d = 0; cur->v[v].kind == DT_FEED && d < cur->v[v].type.rank; d++) {
        if (cur->v[v].type.shape[d] < 2)
          continue;
        dt_prog *h = rebuild(cur, none, cur->batch, cur->max_batch, v, d);
        if (still_bad(h, mode, dir, &budget)) {
          dt_free(cur);
          cur = h;
          changed = shrunk = true;
        } else {
          dt_free(h);
        }
      }
  }
  if (!shrunk) {
    dt_free(cur);
    return NULL;
  }
  return cur;
}
