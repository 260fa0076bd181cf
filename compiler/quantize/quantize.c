/* quantize.c - post-training quantization (dy_quant.h): calibration on the
 * static executor, the rewrite of a float Program into the int8 ops of
 * ir/ops_quant.def, and the per-layer error report.
 *
 * Three steps, in dy_quantize_program:
 *
 *  1. Layers. The ops of block 0 are grouped, in order, into units: a
 *     conv2d or matmul with a constant weight together with the bias add,
 *     batch_norm (inference form) and relu / relu6 that follow it, each
 *     the sole reader of the one before (find_units); an add of two
 *     activations with a relu; a softmax; a reshape, flatten or pool
 *     (int8 in, int8 out, same scale, as TFLite's; only where the op's
 *     inference takes int8); an inference dropout, which is no op at
 *     all; anything else is a float unit of one op.
 *  2. Calibration (quantize_calib.c): p runs on the executor over every
 *     batch, an observer recording each f32 value's range (and, for
 *     percentile and mse, a second run fills a histogram of each value
 *     over that range), so every var gets the [lo, hi] it is quantized
 *     with.
 *  3. Rewrite (build). A new Program: feeds copied; each unit emitted in
 *     order, int8 when it can be, reading its inputs through int8_of /
 *     float_of, which insert quantize_linear / dequantize_linear once per
 *     var as a border needs it; fetches read float_of, so outputs keep
 *     their names and f32.
 *
 * Finally p and the int8 Program both run over the calibration set again
 * and each unit's output is compared (report).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant_internal.h"

enum { MAX_UNIT_OPS = 4 };

typedef enum { U_FLOAT, U_CONV, U_MATMUL, U_ADD, U_SOFTMAX, U_PASS, U_IDENTITY } unit_kind;

typedef struct {
  unit_kind kind;
  const dy_op *ops[MAX_UNIT_OPS]; /* the main op first, then bias add, batch_norm, act */
  int n_ops;
  const dy_op *bias_add, *bn, *act;
  int bias;                       /* bias var (conv: [O,1,1]; matmul: [N]) or -1 */
  int out;                        /* the unit's output var in p */
  bool relu6;                     /* act is relu6 (else relu) */
  bool keep_float;
  bool done_int8;                 /* emitted as int8 */
  char name[96];
  float scale;                    /* its output's qparams, when int8 */
  int zero_point;
  double max_abs, dot, n_f, n_q;  /* report accumulators */
} unit;

typedef struct {
  const dy_program *p;
  const dy_quant_options *o;
  unit *units;
  int n_units;
  int *unit_of;                   /* var of p -> the unit whose output it is, or -1 */
  dy_quant_stats *st;             /* var of p -> its calibration (quantize_calib.c) */
  dy_program *q;
  int *fvar, *qvar;               /* var of p -> its f32 / int8 var in q, or -1 */
  int *qscale, *qzp;              /* var of p -> q's scale / zero point consts (int8) */
  float *qs;                      /* var of p -> its int8 scale */
  int *qz;                        /*             and zero point */
  /* report */
  dy_tensor **ref;                /* var of p -> p's value in this batch (units' outputs) */
  int *q_to_unit;                 /* var of q -> unit whose value it is, or -1 */
} qctx;

/* ------------------------------------------------------------------ */
/* small helpers                                                      */
/* ------------------------------------------------------------------ */

static bool is_const(const dy_program *p, int v) {
  return p->vars[v]->persistable && p->vars[v]->type.dtype == DY_F32 && p->vars[v]->data;
}

static bool is_act(const dy_program *p, int v) {
  return !p->vars[v]->persistable && p->vars[v]->type.dtype == DY_F32;
}

/* The sole reader of var when it is op kind k reading var (the only
 * non-constant input for an add with a constant), else NULL. */
static const dy_op *next_op(const dy_program *p, int var, dy_op_kind k) {
  const dy_op *u = dy_program_sole_user(p, var);
  return u && u->kind == k && u->block == 0 ? u : NULL;
}

static bool is_relu6(const dy_op *op) {
  if (op->kind != DY_OP_CLIP)
    return false;
  dy_clip_attrs a = dy_clip_attrs_get(op);
  return a.min == 0 && a.max == 6;
}

static int32_t sat_i32(double v) {
  if (!(v == v))
    return 0;
  return v >= 2147483647.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)lround(v);
}

/* ------------------------------------------------------------------ */
/* 1. units                                                           */
/* ------------------------------------------------------------------ */

/* A bias of conv2d's [N, O, H, W] output: [O, 1, 1] or [1, O, 1, 1]; of
 * matmul's [..., N]: [N] or [1, N]. */
static bool is_bias(const dy_program *p, int b, int64_t channels, bool conv) {
  if (!is_const(p, b))
    return false;
  const dy_type *t = &p->vars[b]->type;
  if (dy_type_numel(t) != channels)
    return false;
  if (conv)
    return (t->rank == 3 && t->shape[0] == channels) ||
           (t->rank == 4 && t->shape[1] == channels);
  return (t->rank == 1) || (t->rank == 2 && t->shape[1] == channels);
}

static void unit_add(unit *u, const dy_op *op) {
  u->ops[u->n_ops++] = op;
  u->out = op->outputs[0];
}

/* conv2d / matmul at op: take the bias add, batch_norm and activation that
 * follow it. */
static void grow_layer(const dy_program *p, unit *u, int64_t channels, bool conv) {
  const dy_op *n = next_op(p, u->out, DY_OP_ADD);
  if (n) {
    int other = n->inputs[0] == u->out ? n->inputs[1] : n->inputs[0];
    if (is_bias(p, other, channels, conv)) {
      u->bias_add = n;
      u->bias = other;
      unit_add(u, n);
    }
  }
  n = next_op(p, u->out, DY_OP_BATCH_NORM);
  if (n && n->inputs[0] == u->out && dy_batch_norm_attrs_get(n).is_test) {
    bool ok = p->vars[u->out]->type.rank >= 2;
    for (int i = 1; i < 5 && ok; i++)
      ok = is_const(p, n->inputs[i]) && dy_type_numel(&p->vars[n->inputs[i]]->type) == channels;
    if (ok && (conv || p->vars[u->out]->type.rank == 2)) {
      u->bn = n;
      unit_add(u, n);
    }
  }
  const dy_op *r = dy_program_sole_user(p, u->out);
  if (r && r->block == 0 && (r->kind == DY_OP_RELU || is_relu6(r))) {
    u->act = r;
    u->relu6 = r->kind != DY_OP_RELU;
    unit_add(u, r);
  }
}

/* The layer name of a weight var: its name without ".weight". */
static void weight_name(const char *w, char *buf, size_t n) {
  snprintf(buf, n, "%s", w);
  size_t len = strlen(buf);
  if (len > 7 && strcmp(buf + len - 7, ".weight") == 0)
    buf[len - 7] = '\0';
}

static dy_status find_units(qctx *c, dy_error *err) {
  const dy_program *p = c->p;
  const dy_block *b = p->blocks[0];
  bool *used = calloc((size_t)b->n_ops + 1, sizeof *used);
  c->units = calloc((size_t)b->n_ops + 1, sizeof *c->units);
  if (!used || !c->units) {
    free(used);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  }
  for (int k = 0; k < b->n_ops; k++) {
    const dy_op *op = b->ops[k];
    if (used[k])
      continue;
    unit *u = &c->units[c->n_units++];
    memset(u, 0, sizeof *u);
    u->bias = -1;
    u->kind = U_FLOAT;
    unit_add(u, op);
    snprintf(u->name, sizeof u->name, "%s", p->vars[op->outputs[0]]->name);
    bool one_out = op->n_outputs == 1;
    if (op->kind == DY_OP_CONV2D && is_const(p, op->inputs[1]) && is_act(p, op->inputs[0]) &&
        one_out) {
      u->kind = U_CONV;
      grow_layer(p, u, p->vars[op->inputs[1]]->type.shape[0], true);
      weight_name(p->vars[op->inputs[1]]->name, u->name, sizeof u->name);
    } else if (op->kind == DY_OP_MATMUL && is_const(p, op->inputs[1]) &&
               is_act(p, op->inputs[0]) && p->vars[op->inputs[1]]->type.rank == 2 &&
               !dy_matmul_attrs_get(op).transpose_x) {
      const dy_type *w = &p->vars[op->inputs[1]]->type;
      u->kind = U_MATMUL;
      grow_layer(p, u, dy_matmul_attrs_get(op).transpose_y ? w->shape[0] : w->shape[1], false);
      weight_name(p->vars[op->inputs[1]]->name, u->name, sizeof u->name);
    } else if (op->kind == DY_OP_ADD && is_act(p, op->inputs[0]) && is_act(p, op->inputs[1])) {
      u->kind = U_ADD;
      const dy_op *r = dy_program_sole_user(p, u->out);
      if (r && r->block == 0 && r->kind == DY_OP_RELU) {
        u->act = r;
        unit_add(u, r);
      }
    } else if (op->kind == DY_OP_SOFTMAX && is_act(p, op->inputs[0])) {
      u->kind = U_SOFTMAX;
    } else if ((op->kind == DY_OP_RESHAPE || op->kind == DY_OP_FLATTEN ||
                op->kind == DY_OP_POOL2D) &&
               is_act(p, op->inputs[0])) {
      u->kind = U_PASS;
    } else if (op->kind == DY_OP_DROPOUT && p->vars[u->out]->fetch_index < 0 &&
               (dy_dropout_attrs_get(op).is_test || dy_dropout_attrs_get(op).p == 0)) {
      u->kind = U_IDENTITY; /* inference dropout: its output is its input */
    }
    /* mark the unit's ops (they follow op in the block) as used */
    for (int i = 1; i < u->n_ops; i++)
      for (int j = k + 1; j < b->n_ops; j++)
        if (b->ops[j] == u->ops[i])
          used[j] = true;
  }
  free(used);
  for (int i = 0; i < p->n_vars; i++)
    c->unit_of[i] = -1;
  for (int i = 0; i < c->n_units; i++)
    c->unit_of[c->units[i].out] = i;
  return DY_OK;
}

/* Mark the layers o->keep_float names; an unknown name is an error. */
static dy_status mark_keep_float(qctx *c, dy_error *err) {
  const char *s = c->o->keep_float;
  if (!s)
    return DY_OK;
  int first = -1, last = -1;
  for (int i = 0; i < c->n_units; i++)
    if (c->units[i].kind == U_CONV || c->units[i].kind == U_MATMUL) {
      if (first < 0)
        first = i;
      last = i;
    }
  while (*s) {
    char name[96];
    size_t n = strcspn(s, ",");
    if (n == 0 || n >= sizeof name)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "quantize: keep-float: an empty or too long name in '%s'",
                          c->o->keep_float);
    memcpy(name, s, n);
    name[n] = '\0';
    s += n + (s[n] == ',');
    int hit = -1;
    if (strcmp(name, "first") == 0)
      hit = first;
    else if (strcmp(name, "last") == 0)
      hit = last;
    else
      for (int i = 0; i < c->n_units && hit < 0; i++)
        if (strcmp(c->units[i].name, name) == 0 ||
            strcmp(c->p->vars[c->units[i].out]->name, name) == 0)
          hit = i;
    if (hit < 0)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "quantize: keep-float: no layer '%s' in the model (layers are named "
                          "by their weight without .weight, e.g. '%s')",
                          name, first >= 0 ? c->units[first].name : "conv2d");
    c->units[hit].keep_float = true;
  }
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* 3. the int8 Program                                                */
/* ------------------------------------------------------------------ */

/* A new var of q named name (or a fresh "name_N" when taken). */
static int new_var(qctx *c, const char *name, dy_dtype dt, const dy_type *like) {
  dy_type t = *like;
  t.dtype = dt;
  int v = dy_program_add_var(c->q, name, &t);
  if (v < 0)
    v = dy_program_add_var(c->q, dy_program_fresh_name(c->q, name), &t);
  return v;
}

/* A constant of q: rank 0 or 1 (n elements), or the given type. */
static int new_const(qctx *c, const char *name, const dy_type *t, const void *data,
                     dy_error *err) {
  int v = new_var(c, name, t->dtype, t);
  if (v < 0)
    return -1;
  size_t nb = (size_t)dy_type_numel(t) * dy_dtype_size(t->dtype);
  return dy_program_set_data(c->q, v, data, nb, err) ? -1 : v;
}

static int const_vec(qctx *c, const char *name, dy_dtype dt, int64_t n, const void *data,
                     dy_error *err) {
  dy_type t = {.dtype = dt, .rank = 1, .shape = {n}};
  return new_const(c, name, &t, data, err);
}

/* q's scale and zero point constants for p's var v quantized with s, z. */
static bool make_qparams(qctx *c, int v, float s, int z, dy_error *err) {
  char name[256];
  int8_t zi = (int8_t)z;
  snprintf(name, sizeof name, "%s.q.scale", c->p->vars[v]->name);
  c->qscale[v] = const_vec(c, name, DY_F32, 1, &s, err);
  snprintf(name, sizeof name, "%s.q.zero_point", c->p->vars[v]->name);
  c->qzp[v] = const_vec(c, name, DY_I8, 1, &zi, err);
  c->qs[v] = s;
  c->qz[v] = z;
  return c->qscale[v] >= 0 && c->qzp[v] >= 0;
}

/* Append op k to q with the attributes a, every other attribute of its
 * schema spelled out with its default (the verifier wants them all). */
static dy_op *emit(qctx *c, dy_op_kind k, const int *in, int n_in, int out, const dy_attr *a,
                   int n_a, const dy_op *like) {
  const dy_op_info *info = dy_op_info_of(k);
  dy_attr all[16];
  int n = 0;
  for (int i = 0; i < info->n_attrs && n < 16; i++) {
    const dy_attr_schema *sc = &info->attrs[i];
    all[n] = sc->dflt;
    all[n].name = sc->name;
    for (int j = 0; j < n_a; j++)
      if (strcmp(a[j].name, sc->name) == 0)
        all[n] = a[j];
    n++;
  }
  return dy_program_append_op(c->q, 0, k, in, n_in, &out, 1, all, n, like->loc);
}

/* v's f32 value in q: a copy of a constant, or a dequantize_linear of its
 * int8 value. -1 on error. */
static int float_of(qctx *c, int v, const dy_op *at, dy_error *err) {
  const dy_program *p = c->p;
  if (c->fvar[v] >= 0)
    return c->fvar[v];
  const dy_var *pv = p->vars[v];
  if (pv->persistable) {
    c->fvar[v] = new_const(c, pv->name, &pv->type, pv->data, err);
    return c->fvar[v];
  }
  if (c->qvar[v] < 0) {
    dy_error_at(err, at, DY_STATUS_INVALID_IR, "quantize: '%s' has no value", pv->name);
    return -1;
  }
  int f = new_var(c, pv->name, DY_F32, &pv->type);
  int in[3] = {c->qvar[v], c->qscale[v], c->qzp[v]};
  dy_attr ax[DY_DEQUANTIZE_LINEAR_NATTRS];
  int n_ax = dy_dequantize_linear_attrs_put(&(dy_dequantize_linear_attrs){
      .given = DY_GIVEN_ALL, .axis = 1}, ax);
  if (f < 0 || !emit(c, DY_OP_DEQUANTIZE_LINEAR, in, 3, f, ax, n_ax, at))
    return -1;
  return c->fvar[v] = f;
}

/* v's int8 value in q: a quantize_linear of its f32 value with its
 * calibrated range, unless it has one. -1 on error. */
static int int8_of(qctx *c, int v, const dy_op *at, dy_error *err) {
  if (c->qvar[v] >= 0)
    return c->qvar[v];
  const dy_var *pv = c->p->vars[v];
  const dy_quant_stats *s = &c->st[v];
  if (!s->seen) {
    dy_error_at(err, at, DY_STATUS_INVALID_ARGUMENT,
                "quantize: '%s' took no finite value on the calibration set", pv->name);
    return -1;
  }
  float scale;
  int zp;
  dy_quant_choose_qparams(s->qlo, s->qhi, &scale, &zp);
  int f = float_of(c, v, at, err);
  if (f < 0 || !make_qparams(c, v, scale, zp, err))
    return -1;
  char name[256];
  snprintf(name, sizeof name, "%s.q", pv->name);
  int q8 = new_var(c, name, DY_I8, &pv->type);
  int in[3] = {f, c->qscale[v], c->qzp[v]};
  dy_attr ax[DY_QUANTIZE_LINEAR_NATTRS];
  int n_ax = dy_quantize_linear_attrs_put(&(dy_quantize_linear_attrs){
      .given = DY_GIVEN_ALL, .axis = 1}, ax);
  if (q8 < 0 || !emit(c, DY_OP_QUANTIZE_LINEAR, in, 3, q8, ax, n_ax, at))
    return -1;
  return c->qvar[v] = q8;
}

/* The int8 output var of unit u, with qparams (s, z). */
static int unit_int8_out(qctx *c, unit *u, float s, int z, dy_error *err) {
  char name[256];
  const dy_var *pv = c->p->vars[u->out];
  snprintf(name, sizeof name, "%s.q", pv->name);
  int q8 = new_var(c, name, DY_I8, &pv->type);
  if (q8 < 0 || !make_qparams(c, u->out, s, z, err))
    return -1;
  u->scale = s;
  u->zero_point = z;
  u->done_int8 = true;
  return c->qvar[u->out] = q8;
}

/* The activation bounds of u's output in the int8 domain. */
static void act_bounds(const unit *u, float s, int z, int64_t *lo, int64_t *hi) {
  *lo = -128;
  *hi = 127;
  if (u->act) {
    *lo = z;
    if (u->relu6) {
      double top = z + nearbyint(6.0 / s);
      *hi = top > 127 ? 127 : (int64_t)top;
    }
  }
}

/* conv2d or matmul unit u as qconv2d / qmatmul: fold batch_norm into the
 * weight and bias, quantize the weight (per channel or tensor) and bias. */
static dy_status emit_layer(qctx *c, unit *u, dy_error *err) {
  const dy_program *p = c->p;
  const dy_op *op = u->ops[0];
  bool conv = u->kind == U_CONV;
  const dy_var *wv = p->vars[op->inputs[1]];
  const float *w = wv->data;
  bool ty = !conv && dy_matmul_attrs_get(op).transpose_y;
  /* channels O, each `per` weights */
  int64_t O = conv ? wv->type.shape[0] : (ty ? wv->type.shape[0] : wv->type.shape[1]);
  int64_t per = dy_type_numel(&wv->type) / O, K = per;
  double *wf = malloc(sizeof *wf * (size_t)(O * per));
  double *bf = calloc((size_t)O, sizeof *bf);
  float *ws = malloc(sizeof *ws * (size_t)O);
  int8_t *wq = malloc((size_t)(O * per));
  int8_t *wz = calloc((size_t)O, 1);
  int32_t *bq = malloc(sizeof *bq * (size_t)O);
  dy_status s = DY_OK;
  if (!wf || !bf || !ws || !wq || !wz || !bq) {
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
    goto done;
  }
  /* wf[o * per + i]: channel o's i-th weight (conv: [O, ...] as stored;
   * matmul: row o of [N, K], the weight [K, N] transposed) */
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < per; i++)
      wf[o * per + i] = conv || ty ? w[o * per + i] : w[i * O + o];
  if (u->bias >= 0)
    for (int64_t o = 0; o < O; o++)
      bf[o] = ((const float *)p->vars[u->bias]->data)[o];
  if (u->bn) {
    const float *g = p->vars[u->bn->inputs[1]]->data, *be = p->vars[u->bn->inputs[2]]->data;
    const float *mu = p->vars[u->bn->inputs[3]]->data, *va = p->vars[u->bn->inputs[4]]->data;
    double eps = dy_batch_norm_attrs_get(u->bn).epsilon;
    for (int64_t o = 0; o < O; o++) {
      double f = g[o] / sqrt((double)va[o] + eps);
      for (int64_t i = 0; i < per; i++)
        wf[o * per + i] *= f;
      bf[o] = (bf[o] - mu[o]) * f + be[o];
    }
  }
  /* weights: symmetric, [-127, 127] */
  double all = 0;
  for (int64_t k = 0; k < O * per; k++)
    all = fmax(all, fabs(wf[k]));
  for (int64_t o = 0; o < O; o++) {
    double m = 0;
    for (int64_t i = 0; i < per && c->o->per_channel; i++)
      m = fmax(m, fabs(wf[o * per + i]));
    m = c->o->per_channel ? m : all;
    ws[o] = m > 0 ? (float)(m / 127.0) : 1.0f;
    for (int64_t i = 0; i < per; i++) {
      double r = round(wf[o * per + i] / ws[o]);
      wq[o * per + i] = (int8_t)(r < -127 ? -127 : r > 127 ? 127 : r);
    }
  }
  int x8 = int8_of(c, op->inputs[0], op, err);
  if (x8 < 0) {
    s = err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
    goto done;
  }
  float xs = c->qs[op->inputs[0]];
  for (int64_t o = 0; o < O; o++)
    bq[o] = sat_i32(bf[o] / ((double)xs * (double)ws[o]));
  const dy_quant_stats *st = &c->st[u->out];
  float ys;
  int yz;
  dy_quant_choose_qparams(st->qlo, st->qhi, &ys, &yz);
  char name[256];
  int64_t n_ws = c->o->per_channel ? O : 1;
  dy_type wt = wv->type;
  if (!conv) /* [N, K] with transpose_y: the layout the int8 kernels read */
    wt = (dy_type){.dtype = DY_I8, .rank = 2, .shape = {O, K}};
  wt.dtype = DY_I8;
  snprintf(name, sizeof name, "%s.q", wv->name);
  int wq_v = new_const(c, name, &wt, wq, err);
  snprintf(name, sizeof name, "%s.q.scale", wv->name);
  int ws_v = const_vec(c, name, DY_F32, n_ws, ws, err);
  snprintf(name, sizeof name, "%s.q.zero_point", wv->name);
  int wz_v = const_vec(c, name, DY_I8, n_ws, wz, err);
  snprintf(name, sizeof name, "%s.bias.q", u->name);
  int b_v = const_vec(c, name, DY_I32, O, bq, err);
  int y8 = unit_int8_out(c, u, ys, yz, err);
  if (wq_v < 0 || ws_v < 0 || wz_v < 0 || b_v < 0 || y8 < 0) {
    s = err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
    goto done;
  }
  int in[9] = {x8, c->qscale[op->inputs[0]], c->qzp[op->inputs[0]], wq_v, ws_v, wz_v,
               c->qscale[u->out], c->qzp[u->out], b_v};
  int64_t lo, hi;
  act_bounds(u, ys, yz, &lo, &hi);
  dy_attr a[DY_QCONV2D_NATTRS + DY_QMATMUL_NATTRS];
  int n_a;
  if (conv) {
    dy_conv2d_attrs ca = dy_conv2d_attrs_get(op);
    n_a = dy_qconv2d_attrs_put(&(dy_qconv2d_attrs){
        .given = DY_GIVEN_ALL, .strides = ca.strides, .n_strides = ca.n_strides,
        .paddings = ca.paddings, .n_paddings = ca.n_paddings, .dilations = ca.dilations,
        .n_dilations = ca.n_dilations, .groups = ca.groups, .act_min = lo, .act_max = hi}, a);
  } else {
    n_a = dy_qmatmul_attrs_put(&(dy_qmatmul_attrs){
        .given = DY_GIVEN_ALL, .transpose_y = 1, .act_min = lo, .act_max = hi}, a);
  }
  dy_op *qop = emit(c, conv ? DY_OP_QCONV2D : DY_OP_QMATMUL, in, 9, y8, a, n_a, op);
  if (!qop || !dy_op_set_srcs(c->q, qop, u->ops, u->n_ops))
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
done:
  free(wf);
  free(bf);
  free(ws);
  free(wq);
  free(wz);
  free(bq);
  return s;
}

/* u as the float ops it was. */
static dy_status emit_float(qctx *c, unit *u, dy_error *err) {
  for (int k = 0; k < u->n_ops; k++) {
    const dy_op *op = u->ops[k];
    int in[DY_MAX_OP_INPUTS], out[8];
    if (op->n_inputs > DY_MAX_OP_INPUTS || op->n_outputs > 8)
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "quantize: %s: too many operands",
                         dy_op_name(op->kind));
    for (int i = 0; i < op->n_inputs; i++)
      if ((in[i] = float_of(c, op->inputs[i], op, err)) < 0)
        return err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
    for (int i = 0; i < op->n_outputs; i++) {
      const dy_var *pv = c->p->vars[op->outputs[i]];
      if ((out[i] = new_var(c, pv->name, pv->type.dtype, &pv->type)) < 0)
        return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
      c->fvar[op->outputs[i]] = out[i];
    }
    dy_op *n = dy_program_append_op(c->q, 0, op->kind, in, op->n_inputs, out, op->n_outputs,
                                    op->attrs, op->n_attrs, op->loc);
    if (!n || (op->n_srcs && !dy_op_set_srcs(c->q, n, (const dy_op *const[]){op}, 1)))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  }
  return DY_OK;
}

/* An elementwise unit (add, softmax, reshape, ...) as int8, when an input
 * already is int8; returns false (and emits nothing) otherwise. */
static dy_status emit_elementwise(qctx *c, unit *u, bool *done, dy_error *err) {
  const dy_op *op = u->ops[0];
  *done = false;
  bool any = false;
  for (int i = 0; i < op->n_inputs; i++)
    any |= !c->p->vars[op->inputs[i]]->persistable && c->qvar[op->inputs[i]] >= 0;
  if (!any)
    return DY_OK;
  if (u->kind == U_PASS) {
    /* moved as int8 only where the op takes int8 (inference says) */
    dy_type t = c->p->vars[op->inputs[0]]->type, o_t[1];
    dy_error ignored = {0};
    t.dtype = DY_I8;
    if (t.shape[0] < 0)
      t.shape[0] = 1;
    if (dy_infer(op, &t, 1, o_t, &ignored))
      return DY_OK;
  }
  int a8 = int8_of(c, op->inputs[0], op, err);
  int b8 = u->kind == U_ADD ? int8_of(c, op->inputs[1], op, err) : 0;
  if (a8 < 0 || b8 < 0)
    return err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
  int x = op->inputs[0], y8;
  dy_op *qop = NULL;
  if (u->kind == U_PASS) {
    /* same scale and zero point: the int8 values move as they are */
    char name[256];
    snprintf(name, sizeof name, "%s.q", c->p->vars[u->out]->name);
    y8 = new_var(c, name, DY_I8, &c->p->vars[u->out]->type);
    if (y8 < 0)
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
    c->qvar[u->out] = y8;
    c->qscale[u->out] = c->qscale[x];
    c->qzp[u->out] = c->qzp[x];
    c->qs[u->out] = u->scale = c->qs[x];
    c->qz[u->out] = u->zero_point = c->qz[x];
    u->done_int8 = true;
    qop = emit(c, op->kind, &a8, 1, y8, op->attrs, op->n_attrs, op);
  } else if (u->kind == U_SOFTMAX) {
    /* TFLite's int8 softmax output: scale 1/256, zero point -128 */
    if ((y8 = unit_int8_out(c, u, 1.0f / 256.0f, -128, err)) < 0)
      return err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
    int in[5] = {a8, c->qscale[x], c->qzp[x], c->qscale[u->out], c->qzp[u->out]};
    dy_attr ax[DY_QSOFTMAX_NATTRS];
    int n_ax = dy_qsoftmax_attrs_put(&(dy_qsoftmax_attrs){
        .given = DY_GIVEN_ALL, .axis = dy_softmax_attrs_get(op).axis}, ax);
    qop = emit(c, DY_OP_QSOFTMAX, in, 5, y8, ax, n_ax, op);
  } else { /* U_ADD */
    const dy_quant_stats *st = &c->st[u->out];
    float ys;
    int yz;
    dy_quant_choose_qparams(st->qlo, st->qhi, &ys, &yz);
    if ((y8 = unit_int8_out(c, u, ys, yz, err)) < 0)
      return err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
    int b = op->inputs[1];
    int in[8] = {a8, c->qscale[x], c->qzp[x], b8, c->qscale[b], c->qzp[b],
                 c->qscale[u->out], c->qzp[u->out]};
    int64_t lo, hi;
    act_bounds(u, ys, yz, &lo, &hi);
    dy_attr a[DY_QADD_NATTRS];
    int n_a = dy_qadd_attrs_put(&(dy_qadd_attrs){
        .given = DY_GIVEN_ALL, .act_min = lo, .act_max = hi}, a);
    qop = emit(c, DY_OP_QADD, in, 8, y8, a, n_a, op);
  }
  if (!qop || !dy_op_set_srcs(c->q, qop, u->ops, u->n_ops))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  *done = true;
  return DY_OK;
}

/* An inference dropout: no op; its output is its input's values (int8
 * with the input's qparams when the input has them). */
static dy_status emit_identity(qctx *c, unit *u, dy_error *err) {
  int x = u->ops[0]->inputs[0], y = u->out;
  if (c->qvar[x] >= 0) {
    c->qvar[y] = c->qvar[x];
    c->qscale[y] = c->qscale[x];
    c->qzp[y] = c->qzp[x];
    c->qs[y] = c->qs[x];
    c->qz[y] = c->qz[x];
  } else if ((c->fvar[y] = float_of(c, x, u->ops[0], err)) < 0) {
    return err->status ? err->status : DY_STATUS_OUT_OF_MEMORY;
  }
  return DY_OK;
}

static dy_status build(qctx *c, dy_error *err) {
  const dy_program *p = c->p;
  if (!(c->q = dy_program_new()))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  dy_status s = DY_OK;
  for (int i = 0; i < p->n_feeds && !s; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    int f = new_var(c, v->name, v->type.dtype, &v->type);
    c->fvar[p->feeds[i]] = f;
    s = f < 0 ? dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory")
              : dy_program_add_feed(c->q, f, err);
  }
  for (int k = 0; k < c->n_units && !s; k++) {
    unit *u = &c->units[k];
    bool done = false;
    if (u->kind == U_IDENTITY) {
      s = emit_identity(c, u, err);
      done = !s;
    } else if (!u->keep_float && (u->kind == U_CONV || u->kind == U_MATMUL)) {
      s = emit_layer(c, u, err);
      done = !s;
    } else if (!u->keep_float && u->kind != U_FLOAT) {
      s = emit_elementwise(c, u, &done, err);
    }
    if (!s && !done)
      s = emit_float(c, u, err);
  }
  for (int i = 0; i < p->n_fetches && !s; i++) {
    int v = p->fetches[i];
    const dy_op *def = dy_program_def(p, v, NULL, NULL);
    int f = def ? float_of(c, v, def, err) : c->fvar[v];
    s = f < 0 ? (err->status ? err->status : DY_STATUS_INVALID_IR)
              : dy_program_add_fetch(c->q, f, err);
  }
  if (!s)
    s = dy_verify(c->q, err);
  if (s && err->status == DY_STATUS_INVALID_IR)
    dy_error_prefix(err, "quantize: the int8 Program");
  return s;
}

/* ------------------------------------------------------------------ */
/* report                                                             */
/* ------------------------------------------------------------------ */

static dy_status observe_ref(void *ctx, int var, const dy_tensor *t, dy_error *err) {
  qctx *c = ctx;
  (void)err;
  if (c->unit_of[var] >= 0 && t->type.dtype == DY_F32 && !c->ref[var])
    c->ref[var] = dy_keep((dy_tensor *)t);
  return DY_OK;
}

static dy_status observe_quant(void *ctx, int var, const dy_tensor *t, dy_error *err) {
  qctx *c = ctx;
  (void)err;
  int u_i = c->q_to_unit[var];
  if (u_i < 0)
    return DY_OK;
  unit *u = &c->units[u_i];
  const dy_tensor *r = c->ref[u->out];
  int64_t n = dy_type_numel(&t->type);
  if (!r || dy_type_numel(&r->type) != n)
    return DY_OK;
  const float *f = r->data;
  bool i8 = t->type.dtype == DY_I8;
  for (int64_t i = 0; i < n; i++) {
    double q = i8 ? ((double)((const int8_t *)t->data)[i] - u->zero_point) * u->scale
                  : ((const float *)t->data)[i];
    u->max_abs = fmax(u->max_abs, fabs(q - f[i]));
    u->dot += q * f[i];
    u->n_f += (double)f[i] * f[i];
    u->n_q += q * q;
  }
  return DY_OK;
}

static double cosine(double dot, double a, double b) {
  return a > 0 && b > 0 ? dot / sqrt(a * b) : (a == 0 && b == 0 ? 1.0 : 0.0);
}

static dy_status report(qctx *c, dy_tensor *const *calib, int n_batches, dy_quant_report *r,
                        dy_error *err) {
  const dy_program *p = c->p;
  const dy_program *q = c->q;
  c->q_to_unit = malloc(sizeof(int) * (size_t)(q->n_vars + 1));
  if (!c->q_to_unit)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  for (int v = 0; v < q->n_vars; v++)
    c->q_to_unit[v] = -1;
  for (int k = 0; k < c->n_units; k++) {
    const unit *u = &c->units[k];
    int v = u->done_int8 ? c->qvar[u->out] : c->fvar[u->out];
    if (v >= 0 && u->kind != U_IDENTITY) /* an identity's var is its input's */
      c->q_to_unit[v] = k;
  }
  double o_max = 0, o_dot = 0, o_f = 0, o_q = 0, o_abs = 0;
  dy_status s = DY_OK;
  for (int b = 0; b < n_batches && !s; b++) {
    if (c->o->progress)
      c->o->progress(c->o->progress_ctx, "measure", b, n_batches);
    dy_tensor *const *in = calib + (size_t)b * p->n_feeds;
    dy_tensor *fo[DY_MAX_FEEDS] = {0}, *qo[DY_MAX_FEEDS] = {0};
    s = dy_executor_run_observed(p, in, p->n_feeds, fo, p->n_fetches, observe_ref, c, err);
    if (!s)
      s = dy_executor_run_observed(q, in, q->n_feeds, qo, q->n_fetches, observe_quant, c, err);
    for (int i = 0; i < p->n_fetches && !s; i++) {
      int64_t n = dy_type_numel(&fo[i]->type);
      if (fo[i]->type.dtype != DY_F32 || qo[i]->type.dtype != DY_F32)
        continue;
      const float *f = fo[i]->data, *g = qo[i]->data;
      for (int64_t j = 0; j < n; j++) {
        o_max = fmax(o_max, fabs((double)g[j] - f[j]));
        o_abs = fmax(o_abs, fabs((double)f[j]));
        o_dot += (double)g[j] * f[j];
        o_f += (double)f[j] * f[j];
        o_q += (double)g[j] * g[j];
      }
    }
    if (!s)
      r->n_samples += p->n_feeds ? in[0]->type.shape[0] : 0;
    for (int i = 0; i < p->n_fetches; i++) {
      dy_tensor_free(fo[i]);
      dy_tensor_free(qo[i]);
    }
    for (int v = 0; v < p->n_vars; v++) {
      dy_tensor_free(c->ref[v]);
      c->ref[v] = NULL;
    }
    if (s)
      dy_error_prefix(err, "quantize: report, batch %d", b);
  }
  if (s)
    return s;
  r->layers = calloc((size_t)c->n_units + 1, sizeof *r->layers);
  if (!r->layers)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  static const char *const kinds[] = {"float", "conv2d", "matmul", "add", "softmax", "move"};
  for (int k = 0; k < c->n_units; k++) {
    const unit *u = &c->units[k];
    if (u->kind == U_IDENTITY)
      continue;
    dy_quant_layer *l = &r->layers[r->n_layers++];
    snprintf(l->name, sizeof l->name, "%s", u->name);
    snprintf(l->out, sizeof l->out, "%s", p->vars[u->out]->name);
    const char *kind = kinds[u->kind];
    if (u->kind == U_CONV && dy_conv2d_attrs_get(u->ops[0]).groups > 1)
      kind = "depthwise";
    if (u->kind == U_FLOAT || u->kind == U_PASS)
      kind = dy_op_name(u->ops[0]->kind);
    snprintf(l->kind, sizeof l->kind, "%s%s%s", kind, u->bn ? "+bn" : "",
             u->act ? (u->relu6 ? "+relu6" : "+relu") : "");
    l->int8 = u->done_int8;
    l->scale = u->scale;
    l->zero_point = u->zero_point;
    l->max_abs_err = u->max_abs;
    l->cosine = cosine(u->dot, u->n_f, u->n_q);
    r->n_int8 += u->done_int8;
  }
  r->out_max_abs_err = o_max;
  r->out_max_abs = o_abs;
  r->out_cosine = cosine(o_dot, o_f, o_q);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* the entry points                                                   */
/* ------------------------------------------------------------------ */

static void qctx_free(qctx *c) {
  if (c->st)
    dy_quant_stats_free(c->st, c->p->n_vars);
  if (c->ref)
    for (int v = 0; v < c->p->n_vars; v++)
      dy_tensor_free(c->ref[v]);
  free(c->st);
  free(c->ref);
  free(c->units);
  free(c->unit_of);
  free(c->fvar);
  free(c->qvar);
  free(c->qscale);
  free(c->qzp);
  free(c->qs);
  free(c->qz);
  free(c->q_to_unit);
  dy_program_free(c->q);
}

dy_status dy_quantize_program(const dy_program *p, dy_tensor *const *calib, int n_batches,
                              const dy_quant_options *o, dy_program **out,
                              dy_quant_report *rep, dy_error *err) {
  *out = NULL;
  if (rep)
    memset(rep, 0, sizeof *rep);
  if (p->n_blocks > 1 || dy_program_is_training(p))
    return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                        "quantize: the model has %s; quantize takes an inference Program "
                        "without control flow",
                        p->n_blocks > 1 ? "control flow (sub-blocks)" : "in-place training ops");
  if (n_batches < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "quantize: the calibration set is empty");
  qctx c = {.p = p, .o = o};
  size_t n = (size_t)p->n_vars + 1;
  c.st = calloc(n, sizeof *c.st);
  c.ref = calloc(n, sizeof *c.ref);
  c.unit_of = malloc(n * sizeof(int));
  c.fvar = malloc(n * sizeof(int));
  c.qvar = malloc(n * sizeof(int));
  c.qscale = malloc(n * sizeof(int));
  c.qzp = malloc(n * sizeof(int));
  c.qs = calloc(n, sizeof(float));
  c.qz = calloc(n, sizeof(int));
  dy_status s = DY_OK;
  if (!c.st || !c.ref || !c.unit_of || !c.fvar || !c.qvar || !c.qscale || !c.qzp || !c.qs ||
      !c.qz)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "quantize: out of memory");
  for (size_t v = 0; v < n && !s; v++)
    c.fvar[v] = c.qvar[v] = c.qscale[v] = c.qzp[v] = -1;
  if (!s)
    s = find_units(&c, err);
  if (!s)
    s = mark_keep_float(&c, err);
  if (!s)
    s = dy_quant_calibrate(p, calib, n_batches, o, c.st, err);
  if (!s)
    s = build(&c, err);
  dy_quant_report tmp = {0};
  if (!s)
    s = report(&c, calib, n_batches, rep ? rep : &tmp, err);
  dy_quant_report_free(&tmp);
  if (!s) {
    *out = c.q;
    c.q = NULL;
  } else if (rep) {
    dy_quant_report_free(rep);
  }
  qctx_free(&c);
  return s;
}

void dy_quant_report_free(dy_quant_report *r) {
  if (!r)
    return;
  free(r->layers);
  memset(r, 0, sizeof *r);
}

void dy_quant_report_print(const dy_quant_report *r, FILE *f) {
  fprintf(f, "%-28s %-22s %-5s %10s %5s %11s %9s\n", "layer", "kind", "int8", "scale", "zp",
          "max |err|", "cosine");
  for (int i = 0; i < r->n_layers; i++) {
    const dy_quant_layer *l = &r->layers[i];
    if (l->int8)
      fprintf(f, "%-28s %-22s %-5s %10.4g %5d %11.4g %9.6f\n", l->name, l->kind, "yes",
              (double)l->scale, l->zero_point, l->max_abs_err, l->cosine);
    else
      fprintf(f, "%-28s %-22s %-5s %10s %5s %11.4g %9.6f\n", l->name, l->kind, "no", "-", "-",
              l->max_abs_err, l->cosine);
  }
  fprintf(f, "outputs: max |err| %.4g (largest |output| %.4g), cosine %.6f; %d of %d layers "
             "int8, %lld calibration samples\n",
          r->out_max_abs_err, r->out_max_abs, r->out_cosine, r->n_int8, r->n_layers,
          (long long)r->n_samples);
}
