/* difftest_recipes.c - the differential tester's recipes (difftest.c
 * draws them; difftest_gen.h): unary and binary elementwise ops of the
 * table, linear and conv2d with what the fusion passes look for, pooling,
 * softmax, reductions, normalisation, shape ops, selection, integer and
 * bool arithmetic, and the extra family with the gradient ops. Each
 * appends the ops dt_try_op accepts; nothing here reads anything but g's
 * generator, so a seed always makes the same program.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest_gen.h"

/* Any unary elementwise op of the table with attributes around their
 * defaults; a refused one is tried again on sigmoid(x) (domain). */
void dt_recipe_unary(dt_prog *g) {
  dy_op_kind kinds[DY_OP_COUNT];
  int n = 0;
  for (int k = 0; k < DY_OP_COUNT; k++) {
    unsigned f = dy_op_info_of((dy_op_kind)k)->flags;
    if ((f & DY_OPF_UNARY) && (f & DY_OPF_ELEMENTWISE) && !(f & DY_OPF_FUSED) &&
        k != DY_OP_CAST)
      kinds[n++] = (dy_op_kind)k;
  }
  int x = dt_pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op o = op1(kinds[pick(g, n)], x);
  const dy_op_info *info = dy_op_info_of(o.kind);
  for (int k = 0; k < info->n_attrs; k++) {
    const dy_attr_schema *s = &info->attrs[k];
    if (s->kind == DY_ATTR_FLOAT) {
      double d = s->required ? 0 : s->dflt.f;
      if (s->required || coin(g, 0.5))
        dt_set_f(&o, s->name, d != 0 ? d * (0.5 + unif(g)) : 2 * unif(g) - 1);
    } else if (s->kind == DY_ATTR_INT && coin(g, 0.5)) {
      dt_set_i(&o, s->name, pick(g, 2));
    }
  }
  if (o.kind == DY_OP_CLIP) { /* min <= max */
    dt_set_f(&o, "min", -unif(g));
    dt_set_f(&o, "max", unif(g));
  }
  if (dt_try_op(g, o) >= 0)
    return;
  int s = dt_try_op(g, op1(DY_OP_SIGMOID, x));
  if (s >= 0) {
    o.in[0] = s;
    dt_try_op(g, o);
  }
}

/* A broadcast partner of type t: some dims set to 1, leading dims
 * dropped, the batch always 1 (a constant). */
int dt_broadcast_const(dt_prog *g, const dy_type *t, double lo, double hi) {
  dy_type c = *t;
  for (int d = 0; d < c.rank; d++)
    if (c.shape[d] < 0 || coin(g, 0.3))
      c.shape[d] = 1;
  int drop = (int)pick(g, c.rank + 1);
  if (drop == c.rank && drop > 0 && coin(g, 0.7))
    drop--;
  memmove(c.shape, c.shape + drop, sizeof c.shape[0] * (size_t)(c.rank - drop));
  c.rank -= drop;
  return dt_add_const(g, &c, lo, hi);
}

void dt_recipe_binary(dt_prog *g) {
  dy_op_kind kinds[DY_OP_COUNT];
  int n = 0;
  for (int k = 0; k < DY_OP_COUNT; k++) {
    unsigned f = dy_op_info_of((dy_op_kind)k)->flags;
    if ((f & DY_OPF_BINARY) && !(f & DY_OPF_FUSED))
      kinds[n++] = (dy_op_kind)k;
  }
  int x = dt_pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op o = op2(kinds[pick(g, n)], x, x);
  bool positive = o.kind == DY_OP_DIV || o.kind == DY_OP_POW || o.kind == DY_OP_MOD;
  int r = (int)pick(g, 10);
  if (r == 9 && !positive && dt_try_op(g, o) >= 0) /* x op x */
    return;
  if (r < 4) { /* another value that broadcasts */
    for (int tries = 0; tries < 6; tries++) {
      int y = dt_pick_val(g, DY_F32, 0);
      o.in[1] = y;
      if (y != x && !positive && dt_try_op(g, o) >= 0)
        return;
    }
  }
  if (r < 9 || positive) {
    o.in[1] = dt_broadcast_const(g, &g->v[x].type, positive ? 0.5 : -1, positive ? 1.5 : 1);
    if (o.in[1] < 0)
      return;
    if (coin(g, 0.15)) { /* the same shape made by full */
      const dy_type *ct = &g->v[o.in[1]].type;
      dt_op f = {.kind = DY_OP_FULL};
      dt_set_is(&f, "shape", ct->shape, ct->rank);
      dt_set_f(&f, "value", positive ? 0.5 + unif(g) : 2 * unif(g) - 1);
      int fv = dt_try_op(g, f);
      if (fv >= 0)
        o.in[1] = fv;
    }
    if (coin(g, 0.3) && !positive) /* constant first */
      o.in[1] = x, o.in[0] = g->n_vals - 1;
  }
  if (o.kind == DY_OP_POW) { /* a positive base */
    int s = dt_try_op(g, op1(DY_OP_SIGMOID, x));
    if (s < 0)
      return;
    o.in[0] = s;
  }
  if (o.kind == DY_OP_MOD)
    dt_set_i(&o, "fmod", pick(g, 2));
  dt_try_op(g, o);
}

/* matmul [+ bias] [+ activation], or x @ y^T of two run-time values */
void dt_recipe_linear(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  int64_t k = t->shape[t->rank - 1];
  if (k < 1 || k > 96)
    return;
  if (coin(g, 0.15)) { /* two run-time operands */
    dt_op o = op2(DY_OP_MATMUL, x, x);
    dt_set_i(&o, "transpose_y", 1);
    dt_try_op(g, o);
    return;
  }
  int64_t nout = 1 + pick(g, 24);
  bool ty = coin(g, 0.3);
  int w = dt_add_const_f32(g, 2, ty ? (int64_t[]){nout, k} : (int64_t[]){k, nout}, -0.5, 0.5);
  dt_op o = op2(DY_OP_MATMUL, x, w);
  if (ty)
    dt_set_i(&o, "transpose_y", 1);
  int y = dt_try_op(g, o);
  if (y < 0)
    return;
  if (coin(g, 0.7)) {
    int b = dt_add_const_f32(g, 1, (int64_t[]){nout}, -0.5, 0.5);
    int z = dt_try_op(g, op2(DY_OP_ADD, y, b));
    y = z >= 0 ? z : y;
  }
  if (coin(g, 0.6))
    dt_activation(g, y);
}

/* conv2d [+ bias] [+ activation | batch_norm], or conv2d_transpose */
void dt_recipe_conv(dt_prog *g) {
  int x = dt_pick_rank(g, 4);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  int64_t c = t->shape[1];
  if (c < 1 || t->shape[2] < 1 || t->shape[3] < 1)
    return;
  int64_t groups = coin(g, 0.25) ? c : (c % 2 == 0 && coin(g, 0.3) ? 2 : 1);
  int64_t o_ch = groups * (1 + pick(g, 4)), kh = 1 + pick(g, 3), kw = 1 + pick(g, 3);
  bool tr = coin(g, 0.15);
  int w = dt_add_const_f32(g, 4, tr ? (int64_t[]){c, o_ch / groups, kh, kw}
                                 : (int64_t[]){o_ch, c / groups, kh, kw},
                        -0.5, 0.5);
  dt_op o = op2(tr ? DY_OP_CONV2D_TRANSPOSE : DY_OP_CONV2D, x, w);
  int64_t st[2] = {1 + pick(g, 2), 1 + pick(g, 2)};
  int64_t dl[2] = {coin(g, 0.2) ? 2 : 1, 1};
  int64_t pd4[4] = {pick(g, 2), pick(g, 2), pick(g, 2), pick(g, 2)};
  dt_set_is(&o, "strides", st, 2);
  dt_set_is(&o, "dilations", dl, 2);
  if (tr || coin(g, 0.6))
    dt_set_is(&o, "paddings", pd4, 2);
  else
    dt_set_is(&o, "paddings", pd4, 4);
  dt_set_i(&o, "groups", groups);
  int y = dt_try_op(g, o);
  if (y < 0)
    return;
  if (!tr && coin(g, 0.12)) { /* the filter's gradient */
    dt_grad_of(g, &g->ops[g->n_ops - 1], y);
    return;
  }
  if (!tr && coin(g, 0.3)) { /* batch norm (inference) */
    int64_t sh[1] = {o_ch};
    dy_type vt = dt_f32_type(1, sh);
    dt_op bn = {.kind = DY_OP_BATCH_NORM, .n_in = 5,
                .in = {y, dt_add_const(g, &vt, 0.5, 1.5), dt_add_const(g, &vt, -0.5, 0.5),
                       dt_add_const(g, &vt, -0.5, 0.5), dt_add_const(g, &vt, 0.5, 2)}};
    dt_set_i(&bn, "is_test", 1);
    int z = dt_try_op(g, bn);
    y = z >= 0 ? z : y;
  } else if (coin(g, 0.7)) {
    bool r3 = coin(g, 0.5);
    int b = dt_add_const_f32(g, r3 ? 3 : 4,
                             r3 ? (int64_t[]){o_ch, 1, 1} : (int64_t[]){1, o_ch, 1, 1}, -0.5, 0.5);
    int z = dt_try_op(g, op2(DY_OP_ADD, y, b));
    y = z >= 0 ? z : y;
  }
  if (coin(g, 0.6))
    dt_activation(g, y);
}

void dt_recipe_pool(dt_prog *g) {
  int x = dt_pick_rank(g, 4);
  if (x < 0)
    return;
  dt_op o = op1(DY_OP_POOL2D, x);
  dt_set_s(&o, "pooling_type", coin(g, 0.5) ? "max" : "avg");
  int64_t ks[2] = {1 + pick(g, 3), 1 + pick(g, 3)};
  int64_t st[2] = {1 + pick(g, 2), 1 + pick(g, 2)};
  int64_t pd[2] = {pick(g, 2), pick(g, 2)};
  for (int d = 0; d < 2; d++)
    if (pd[d] >= ks[d])
      pd[d] = 0;
  dt_set_is(&o, "ksize", ks, 2);
  int r = (int)pick(g, 6);
  if (r == 0) {
    dt_set_i(&o, "global_pooling", 1);
  } else if (r == 1) {
    dt_set_i(&o, "adaptive", 1);
  } else {
    dt_set_is(&o, "strides", st, 2);
    dt_set_is(&o, "paddings", pd, 2);
    dt_set_i(&o, "ceil_mode", pick(g, 2));
    dt_set_i(&o, "exclusive", pick(g, 2));
  }
  int y = dt_try_op(g, o);
  if (y >= 0 && coin(g, 0.25))
    dt_grad_of(g, &g->ops[g->n_ops - 1], y);
}

void dt_recipe_softmax(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op o = op1(coin(g, 0.5) ? DY_OP_SOFTMAX : DY_OP_LOG_SOFTMAX, x);
  int r = g->v[x].type.rank;
  dt_set_i(&o, "axis", pick(g, 2 * r) - r);
  dt_try_op(g, o);
}

void dt_recipe_reduce(dt_prog *g) {
  static const dy_op_kind ks[] = {DY_OP_REDUCE_SUM, DY_OP_REDUCE_MEAN, DY_OP_REDUCE_MAX,
                                  DY_OP_REDUCE_MIN, DY_OP_REDUCE_PROD};
  int x = dt_pick_val(g, DY_F32, 2);
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
  dt_set_is(&o, "axes", axes, n);
  dt_set_i(&o, "keepdim", pick(g, 2));
  if (o.kind == DY_OP_REDUCE_PROD) { /* a bounded product */
    int s = dt_try_op(g, op1(DY_OP_SIGMOID, x));
    if (s < 0)
      return;
    o.in[0] = s;
  }
  dt_try_op(g, o);
}

void dt_recipe_norm(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  if (t->rank == 4 && coin(g, 0.4)) {
    int64_t c = t->shape[1], groups = c % 2 == 0 && coin(g, 0.5) ? 2 : (coin(g, 0.5) ? c : 1);
    dy_type vt = dt_f32_type(1, (int64_t[]){c});
    dt_op o = {.kind = DY_OP_GROUP_NORM, .n_in = 3,
               .in = {x, dt_add_const(g, &vt, 0.5, 1.5), dt_add_const(g, &vt, -0.5, 0.5)}};
    dt_set_i(&o, "groups", groups);
    dt_try_op(g, o);
    return;
  }
  int axis = 1 + (int)pick(g, t->rank - 1);
  int64_t cols = 1;
  for (int d = axis; d < t->rank; d++)
    cols *= t->shape[d];
  if (cols < 2)
    return;
  dy_type vt = dt_f32_type(1, (int64_t[]){cols});
  dt_op o = {.kind = DY_OP_LAYER_NORM, .n_in = 3,
             .in = {x, dt_add_const(g, &vt, 0.5, 1.5), dt_add_const(g, &vt, -0.5, 0.5)}};
  dt_set_i(&o, "begin_norm_axis", axis);
  dt_try_op(g, o);
}

/* reshape_dims of x (one batch dim): the batch kept whole ("-1"), the
 * other sizes' product merged or split in two, the batch entry first or
 * second. */
int dt_reshape_dims(dt_prog *g, int x) {
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
  dt_attr *a = dt_attr_slot(&o, "dims");
  if (!a)
    return -1;
  a->s = NULL;
  if (coin(g, 0.25) && strchr(sizes, ',')) { /* the batch second */
    *strchr(sizes, ',') = '\0';
    snprintf(a->sbuf, sizeof a->sbuf, "%s,-1,%d", sizes, (int)(prod / f));
  } else {
    snprintf(a->sbuf, sizeof a->sbuf, "-1,%s", sizes);
  }
  return dt_try_op(g, o);
}

void dt_recipe_shape(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 1);
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
    dt_set_is(&o, "perm", v, r);
    break;
  case 1: /* reshape: merge the dims after the batch, or split one */
    o.kind = DY_OP_RESHAPE;
    if (r >= 3 || coin(g, 0.5)) {
      v[0] = 0;
      v[1] = -1;
      dt_set_is(&o, "shape", v, 2);
    } else {
      int64_t last = t->shape[r - 1];
      if (last % 2)
        return;
      for (int d = 0; d < r - 1; d++)
        v[d] = 0;
      v[r - 1] = 2;
      v[r] = last / 2;
      dt_set_is(&o, "shape", v, r + 1);
    }
    break;
  case 2:
    if (coin(g, 0.4)) {
      dt_reshape_dims(g, x);
      return;
    }
    o.kind = DY_OP_FLATTEN;
    dt_set_i(&o, "start_axis", 1);
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
      dt_set_is(&o, "axes", v, 1);
      int y = dt_try_op(g, o);
      if (y < 0 || dt_try_op(g, op1(DY_OP_RELU, y)) < 0)
        return;
      o = op1(DY_OP_SQUEEZE, g->n_vals - 1);
    }
    dt_set_is(&o, "axes", v, 1);
    break;
  case 4: { /* slice a static axis */
    int a = dt_static_axis(g, x);
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
    dt_set_is(&o, "starts", &st, 1);
    dt_set_is(&o, "ends", &en, 1);
    dt_set_is(&o, "axes", (int64_t[]){a}, 1);
    dt_set_is(&o, "steps", &step, 1);
    break;
  }
  case 5: /* pad */
    o.kind = DY_OP_PAD;
    for (int d = 0; d < 2 * r; d++)
      v[d] = (d == 0 || d == r) ? 0 : pick(g, 2);
    dt_set_is(&o, "paddings", v, 2 * r);
    dt_set_s(&o, "mode", (const char *[]){"constant", "reflect", "edge"}[pick(g, 3)]);
    dt_set_f(&o, "value", unif(g));
    break;
  case 6: /* tile */
    o.kind = DY_OP_TILE;
    for (int d = 0; d < r; d++)
      v[d] = d == 0 || t->shape[d] < 0 ? 1 : 1 + pick(g, 2);
    dt_set_is(&o, "repeat_times", v, r);
    break;
  case 7: { /* concat with itself or a constant along a static axis */
    int a = dt_static_axis(g, x);
    if (a < 0)
      return;
    o = op2(DY_OP_CONCAT, x, x);
    if (coin(g, 0.5) && t->shape[0] > 0)
      o.in[1] = dt_add_const(g, t, -1, 1);
    dt_set_i(&o, "axis", a);
    break;
  }
  case 8:
    o.kind = DY_OP_CUMSUM;
    dt_set_i(&o, "axis", pick(g, r));
    dt_set_i(&o, "exclusive", pick(g, 2));
    dt_set_i(&o, "reverse", pick(g, 2));
    break;
  case 9: { /* gather along a static axis */
    int a = dt_static_axis(g, x);
    if (a < 0)
      return;
    int64_t n = 1 + pick(g, 5);
    o = op2(DY_OP_GATHER, x, dt_add_const_i64(g, 1, &n, t->shape[a]));
    dt_set_i(&o, "axis", a);
    break;
  }
  default: { /* expand a size-1 dim, made by unsqueeze */
    dt_op u = op1(DY_OP_UNSQUEEZE, x);
    int64_t ax = r;
    dt_set_is(&u, "axes", &ax, 1);
    int y = dt_try_op(g, u);
    if (y < 0)
      return;
    for (int d = 0; d < r; d++)
      v[d] = t->shape[d] < 0 ? -1 : t->shape[d];
    v[r] = 2 + pick(g, 3);
    o = op1(DY_OP_EXPAND, y);
    dt_set_is(&o, "shape", v, r + 1);
    break;
  }
  }
  dt_try_op(g, o);
}

/* where(a > b, a, b), cast to i64 and back, argmax / top_k, eval dropout */
void dt_recipe_select(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  const dy_type *t = &g->v[x].type;
  switch (pick(g, 4)) {
  case 0: {
    static const dy_op_kind cmp[] = {DY_OP_GREATER, DY_OP_LESS, DY_OP_EQUAL};
    int b = dt_broadcast_const(g, t, -1, 1);
    int c = dt_try_op(g, op2(cmp[pick(g, 3)], x, b));
    if (c < 0)
      return;
    dt_op w = {.kind = DY_OP_WHERE, .n_in = 3, .in = {c, x, b}};
    if (coin(g, 0.5))
      w.in[1] = b, w.in[2] = x;
    dt_try_op(g, w);
    break;
  }
  case 1: {
    dt_op c = op1(DY_OP_CAST, x);
    dt_set_i(&c, "dtype", DY_I64);
    int y = dt_try_op(g, c);
    if (y < 0)
      return;
    c = op1(DY_OP_CAST, y);
    dt_set_i(&c, "dtype", DY_F32);
    dt_try_op(g, c);
    break;
  }
  case 2: {
    dt_op o = op1(coin(g, 0.5) ? DY_OP_ARGMAX : DY_OP_TOP_K, x);
    int a = dt_static_axis(g, x);
    if (a < 0)
      return;
    dt_set_i(&o, "axis", a);
    if (o.kind == DY_OP_TOP_K) {
      dt_set_i(&o, "k", 1 + pick(g, t->shape[a]));
      dt_set_i(&o, "largest", pick(g, 2));
    } else {
      dt_set_i(&o, "keepdim", pick(g, 2));
    }
    int y = dt_try_op(g, o);
    if (y >= 0 && g->v[y].type.dtype == DY_I64) {
      dt_op c = op1(DY_OP_CAST, y);
      dt_set_i(&c, "dtype", DY_F32);
      dt_try_op(g, c);
    }
    break;
  }
  default: {
    dt_op o = op1(DY_OP_DROPOUT, x);
    dt_set_f(&o, "p", unif(g) * 0.5);
    dt_set_i(&o, "is_test", 1);
    dt_try_op(g, o);
  }
  }
}

/* Integer and bool arithmetic: x * s cast to i64 (or to bool), then a few
 * ops on it with i64 constants of both signs (division and remainder by
 * nonzero ones, both remainder conventions), comparisons and where, and a
 * cast back to f32. */
void dt_recipe_int(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 1);
  if (x < 0)
    return;
  dt_op sc = op1(DY_OP_SCALE, x);
  dt_set_f(&sc, "scale", 1 + 9 * unif(g));
  int xs = dt_try_op(g, sc);
  if (xs < 0)
    return;
  dt_op c = op1(DY_OP_CAST, xs);
  bool to_bool = coin(g, 0.2);
  dt_set_i(&c, "dtype", to_bool ? DY_BOOL : DY_I64);
  int y = dt_try_op(g, c);
  if (y < 0)
    return;
  if (to_bool) { /* where(b, x, -x) */
    int nx = dt_try_op(g, op1(DY_OP_NEG, x));
    if (nx >= 0)
      dt_try_op(g, (dt_op){.kind = DY_OP_WHERE, .n_in = 3, .in = {y, x, nx}});
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
      int b = dt_add_const_i64(g, ct.rank, ct.shape, 9);
      if (b < 0)
        return;
      int64_t *bv = g->v[b].t->data; /* [-4, 4] without 0 */
      for (int64_t i = 0; i < dy_tensor_numel(g->v[b].t); i++)
        bv[i] = bv[i] - 4 == 0 ? 3 : bv[i] - 4;
      o = op2(o.kind, y, b);
      if (o.kind == DY_OP_MOD)
        dt_set_i(&o, "fmod", pick(g, 2));
    }
    int z = dt_try_op(g, o);
    if (z < 0)
      continue;
    if (g->v[z].type.dtype == DY_BOOL) { /* where(cmp, y, -y) */
      int ny = dt_try_op(g, op1(DY_OP_NEG, y));
      z = ny < 0 ? -1 : dt_try_op(g, (dt_op){.kind = DY_OP_WHERE, .n_in = 3, .in = {z, y, ny}});
      if (z < 0)
        return;
    }
    y = z;
  }
  c = op1(DY_OP_CAST, y);
  dt_set_i(&c, "dtype", DY_F32);
  dt_try_op(g, c);
}

/* A rank-4 value, a new feed [-1, C, H, W] when there is none. */
static int image(dt_prog *g) {
  int x = dt_pick_rank(g, 4);
  if (x >= 0)
    return x;
  dy_type t = {.dtype = DY_F32, .rank = 4,
               .shape = {-1, 1 + pick(g, 3), 3 + pick(g, 5), 3 + pick(g, 5)}};
  return dt_add_feed(g, &t);
}

/* The extra family: element and tuple indexing with index feeds, scatters,
 * det and inverse of well-conditioned matrices, grid_sample, roi_align,
 * expand_as. */
void dt_recipe_extra(dt_prog *g) {
  int x = dt_pick_val(g, DY_F32, 2);
  if (x < 0)
    return;
  dy_type t = g->v[x].type;
  int r = t.rank;
  dt_op o = op1(DY_OP_GATHER_ELEMENTS, x);
  switch (pick(g, 7)) {
  case 0:
  case 1: { /* gather_elements / scatter_elements along a static axis */
    int a = dt_static_axis(g, x);
    if (a < 0)
      return;
    dy_type it = t;
    it.dtype = DY_I64;
    it.shape[a] = 1 + pick(g, t.shape[a]);
    int idx = dt_add_feed_in(g, &it, 0, (double)t.shape[a]);
    o.in[1] = idx;
    o.n_in = 2;
    if (coin(g, 0.5)) {
      o.kind = DY_OP_SCATTER_ELEMENTS;
      dy_type ut = it;
      ut.dtype = DY_F32;
      o.in[2] = dt_add_feed(g, &ut);
      o.n_in = 3;
      dt_set_s(&o, "reduction", (const char *[]){"none", "add", "mul", "max", "min"}[pick(g, 5)]);
    }
    dt_set_i(&o, "axis", coin(g, 0.5) ? a : a - r);
    break;
  }
  case 2: { /* gather_nd over the batch (batch_dims 1), scatter_nd into row 0 */
    if (t.shape[0] >= 0 || t.shape[1] < 1)
      return;
    int64_t n = 1 + pick(g, 4);
    if (coin(g, 0.5)) {
      dy_type it = {.dtype = DY_I64, .rank = 3, .shape = {-1, n, 1}};
      o = op2(DY_OP_GATHER_ND, x, dt_add_feed_in(g, &it, 0, (double)t.shape[1]));
      dt_set_i(&o, "batch_dims", 1);
    } else {
      int64_t sh[2] = {n, 1};
      int idx = dt_add_const_i64(g, 2, sh, 1); /* row 0 of the batch */
      dy_type ut = t;
      ut.shape[0] = n;
      o = (dt_op){.kind = DY_OP_SCATTER_ND, .n_in = 3, .in = {x, idx, dt_add_const(g, &ut, -1, 1)}};
      dt_set_s(&o, "reduction", (const char *[]){"none", "add", "max"}[pick(g, 3)]);
    }
    break;
  }
  case 3: { /* det / inverse of x W + 2 I, [.., T, T] */
    int64_t k = t.shape[r - 1], n = t.shape[r - 2];
    if (k < 1 || n < 1 || n > 8)
      return;
    int w = dt_add_const_f32(g, 2, (int64_t[]){k, n}, -0.3, 0.3);
    int m = dt_try_op(g, op2(DY_OP_MATMUL, x, w));
    if (m < 0)
      return;
    float eye[64] = {0};
    for (int i = 0; i < n; i++)
      eye[i * n + i] = 2;
    dy_type et = dt_f32_type(2, (int64_t[]){n, n});
    int e = dt_add_val(g, DT_CONST, &et, dy_tensor_from_data(DY_F32, 2, et.shape, eye));
    int s = dt_try_op(g, op2(DY_OP_ADD, m, e));
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
    int grid = dt_try_op(g, op1(DY_OP_TANH, dt_add_feed(g, &gt)));
    if (grid < 0)
      return;
    o = op2(DY_OP_GRID_SAMPLE, x, grid);
    dt_set_s(&o, "mode", (const char *[]){"bilinear", "nearest", "bicubic"}[pick(g, 3)]);
    dt_set_s(&o, "padding_mode", (const char *[]){"zeros", "border", "reflection"}[pick(g, 3)]);
    dt_set_i(&o, "align_corners", pick(g, 2));
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
    dy_type bt = dt_f32_type(2, (int64_t[]){nr, 4});
    int rois = dt_add_val(g, DT_CONST, &bt, dy_tensor_from_data(DY_F32, 2, bt.shape, box));
    o = (dt_op){.kind = DY_OP_ROI_ALIGN, .n_in = 3,
                .in = {x, rois, dt_add_const_i64(g, 1, &nr, 1)}};
    dt_set_s(&o, "mode", coin(g, 0.5) ? "avg" : "max");
    dt_set_i(&o, "output_height", 1 + pick(g, 3));
    dt_set_i(&o, "output_width", 1 + pick(g, 3));
    dt_set_i(&o, "sampling_ratio", pick(g, 3));
    dt_set_i(&o, "half_pixel", pick(g, 2));
    break;
  }
  default: /* expand_as: a broadcast constant to x's shape */
    o = op2(DY_OP_EXPAND_AS, dt_broadcast_const(g, &t, -1, 1), x);
  }
  int y = dt_try_op(g, o);
  if (y >= 0 && (o.kind == DY_OP_GRID_SAMPLE || o.kind == DY_OP_ROI_ALIGN) && coin(g, 0.6))
    dt_grad_of(g, &g->ops[g->n_ops - 1], y);
}
