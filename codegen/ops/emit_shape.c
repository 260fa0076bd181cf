/* emit_shape.c - floor 2: emitters of the shape op family (ir/ops_shape.def).
 *
 * Each writes the body of one kernel (parameters x, y, ... by role, and
 * `int64_t batch` when a type has the dynamic dim) as plain nested loops
 * with literal extents and strides; only the batch is a run-time value,
 * through dy_ext / dy_ext_str ("batch*7", "dim_seq*8"). The driver (program/kernel.c) has
 * checked the op's types against inference (the rules of
 * ir/infer/infer_shape.c) before an emitter runs. An empty output gives an empty
 * body.
 *
 *   slice, expand, tile   one "walk": loop over the output, read the input
 *                         at start + step * i (0 on broadcast dims, i % n
 *                         for tile); dims that are a plain copy and
 *                         contiguous in both merge into one loop
 *   concat                per outer index, one copy loop per input
 *   pad                   per padded dim j = i - begin, then mirrored,
 *                         clamped, or tested against the value
 *   gather                a kernel that can fail (DY_OPF_CAN_FAIL): it
 *                         checks every index first and returns 1 (the
 *                         model's NAME_ERR_INDEX) if one is out of range,
 *                         so the generated C never reads out of bounds
 *   reduce_*              the input in C order, accumulated into the
 *                         output element (the eager kernel's order)
 *   argmax, log_softmax   [outer, n, inner] around the axis, as softmax
 *   squeeze, unsqueeze,   views: no kernel when aliased, else a copy
 *   reshape_dims
 *   nonzero               a count known at run time: count, check the
 *                         bound, write the coordinates (the kernel sets
 *                         the size symbol through *count)
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static bool is_empty(const dy_type *t) {
  return dy_ext_range(t, 0, t->rank).k == 0;
}


/* Append "var * c*stride" to an index expression, c a signed coefficient
 * (var NULL: the constant c*stride). Zero terms vanish. */
static void idx_term(dy_cg_ctx *ctx, dy_idxbuf *b, const char *var, int64_t c,
                     dy_ext stride) {
  int64_t k = c * stride.k;
  if (k == 0)
    return;
  int64_t mag = k < 0 ? -k : k;
  dy_idx_cat(b, b->n ? (k < 0 ? " - " : " + ") : (k < 0 ? "-" : ""));
  char ms[160];
  dy_ext_str(ctx, (dy_ext){mag, stride.p, stride.e}, ms, sizeof ms);
  if (!var) {
    dy_idx_cat(b, ms);
    return;
  }
  dy_idx_cat(b, var);
  if (mag != 1 || stride.p > 0) {
    dy_idx_cat(b, " * ");
    dy_idx_cat(b, ms);
  }
}

/* Append expression src to dst with a "+" or "-" between. */
static void idx_join(dy_idxbuf *dst, const dy_idxbuf *src) {
  if (!src->n)
    return;
  if (!dst->n) {
    dy_idx_cat(dst, src->s);
    return;
  }
  bool neg = src->s[0] == '-';
  dy_idx_cat(dst, neg ? " - " : " + ");
  dy_idx_cat(dst, src->s + (neg ? 1 : 0));
}

/* A value of dtype t as a C literal (NaN and infinities by name). */
static void value_literal(dy_dtype t, double v, char *buf, size_t n) {
  if (t == DY_I64) {
    dy_int64_literal((int64_t)v, buf, n);
  } else if (t == DY_BOOL) {
    snprintf(buf, n, "%d", v != 0.0);
  } else {
    /* beyond the float range: infinity, as the eager kernel */
    float f = isfinite(v) && fabs(v) > FLT_MAX ? (v > 0 ? INFINITY : -INFINITY) : (float)v;
    if (isnan(f))
      snprintf(buf, n, "DY_NAN");
    else if (isinf(f))
      snprintf(buf, n, "%sDY_INFINITY", f < 0 ? "-" : "");
    else
      dy_float_literal(f, buf, n);
  }
}

/* ------------------------------------------------------------------ */
/* The walk: slice, expand, tile                                       */
/* ------------------------------------------------------------------ */

typedef struct {
  dy_ext n;               /* output extent                              */
  dy_ext istr;            /* input stride of the coordinate             */
  int64_t start, step;    /* coordinate start + step * i, ...           */
  int64_t mod;            /* ... or i % mod (mod > 0), ...              */
  bool bcast;             /* ... or always 0                            */
} wdim;

static bool w_plain(const wdim *w) {
  return !w->bcast && w->mod == 0 && w->start == 0 && w->step == 1;
}

/* y[..] = x[..] over the output dims w[0..r). */
static void emit_walk(dy_cg_ctx *ctx, const wdim *w, int r) {
  wdim g[DY_MAX_DIMS];
  int ng = 0;
  int64_t cst = 0;           /* the static part of the constant offset */
  dy_idxbuf dyn_cst = {"", 0};  /* its parts that scale with the batch  */
  for (int d = 0; d < r; d++) {
    wdim x = w[d];
    if (!x.bcast && x.mod == 0) {
      /* fold the start into the constant offset */
      if (x.istr.p == 0)
        cst += x.start * x.istr.k;
      else
        idx_term(ctx, &dyn_cst, NULL, x.start, x.istr);
      x.start = 0;
    }
    if (dy_ext_is_one(x.n))
      continue; /* coordinate fixed */
    if (ng > 0) {
      wdim *p = &g[ng - 1];
      if (w_plain(p) && w_plain(&x) && dy_ext_eq(p->istr, dy_ext_mul(x.n, x.istr))) {
        p->n = dy_ext_mul(p->n, x.n);
        p->istr = x.istr;
        continue;
      }
      if (p->bcast && x.bcast) {
        p->n = dy_ext_mul(p->n, x.n);
        continue;
      }
    }
    g[ng++] = x;
  }

  dy_idxbuf oi = {"", 0}, ii = {"", 0};
  dy_ext ostr = dy_ext_one();
  dy_ext gext[DY_MAX_DIMS], os[DY_MAX_DIMS];
  for (int k = ng - 1; k >= 0; k--) {
    os[k] = ostr;
    ostr = dy_ext_mul(ostr, g[k].n);
  }
  char term[64];
  for (int k = 0; k < ng; k++) {
    gext[k] = g[k].n;
    dy_idx_add(ctx, &oi, dy_loop_var[k], os[k]);
    if (g[k].bcast)
      continue;
    if (g[k].mod > 0) {
      snprintf(term, sizeof term, dy_ext_is_one(g[k].istr) ? "%s %% %lld" : "(%s %% %lld)",
               dy_loop_var[k], (long long)g[k].mod);
      idx_term(ctx, &ii, term, 1, g[k].istr);
    } else {
      idx_term(ctx, &ii, dy_loop_var[k], g[k].step, g[k].istr);
    }
  }
  /* the constant offset first, then the loop terms */
  dy_idxbuf full = {"", 0};
  idx_term(ctx, &full, NULL, cst, dy_ext_one());
  idx_join(&full, &dyn_cst);
  idx_join(&full, &ii);
  dy_cg_open_loops(ctx, ng, gext, dy_loop_var);
  L("%s[%s] = %s[%s];", OUT(0), dy_idx_str(&oi), IN(0), dy_idx_str(&full));
  dy_cg_close_loops(ctx, ng);
}


dy_status dy_emit_slice(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  dy_slice_attrs sa;
  if ((s = dy_slice_attrs_of(ctx->op, &sa, err)))
    return s;
  const int64_t *starts = sa.starts, *ends = sa.ends, *axes = sa.axes, *steps = sa.steps;
  int ns = sa.n_starts, na = sa.n_axes, nst = sa.n_steps;
  int r = a->rank;
  wdim w[DY_MAX_DIMS];
  for (int d = 0; d < r; d++)
    w[d] = (wdim){.n = dy_ext_dim(o->shape[d]), .istr = dy_ext_range(a, d + 1, r),
                  .step = 1};
  for (int i = 0; i < ns; i++) {
    int64_t ax = na ? axes[i] : i;
    if (ax < 0)
      ax += r;
    if (a->shape[ax] < 0)
      continue; /* the batch: its whole range */
    int64_t len;
    w[ax].step = nst ? steps[i] : 1;
    dy_slice_axis(a->shape[ax], starts[i], ends[i], w[ax].step, &w[ax].start, &len);
  }
  emit_walk(ctx, w, r);
  return DY_OK;
}

/* x aligned on the right of the output: dims x lacks or has as 1 are
 * broadcast; tile reads i % dim where it repeats. */
static dy_status emit_expand_or_tile(dy_cg_ctx *ctx, dy_error *err, bool tile) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  int r = o->rank;
  wdim w[DY_MAX_DIMS];
  for (int d = 0; d < r; d++) {
    int xi = d - (r - a->rank);
    w[d] = (wdim){.n = dy_ext_dim(o->shape[d]), .step = 1};
    if (xi < 0 || a->shape[xi] == 1) {
      w[d].bcast = true;
      continue;
    }
    w[d].istr = dy_ext_range(a, xi + 1, a->rank);
    if (tile && a->shape[xi] != o->shape[d])
      w[d].mod = a->shape[xi];
  }
  emit_walk(ctx, w, r);
  return DY_OK;
}

dy_status dy_emit_expand(dy_cg_ctx *ctx, dy_error *err) {
  return emit_expand_or_tile(ctx, err, false);
}

/* like (in1) gives the output's shape only */
dy_status dy_emit_expand_as(dy_cg_ctx *ctx, dy_error *err) {
  return emit_expand_or_tile(ctx, err, false);
}

dy_status dy_emit_tile(dy_cg_ctx *ctx, dy_error *err) {
  return emit_expand_or_tile(ctx, err, true);
}

/* ------------------------------------------------------------------ */
/* squeeze, unsqueeze: views; a copy when not aliased                  */
/* ------------------------------------------------------------------ */

dy_status dy_emit_squeeze(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_flat_copy(ctx, err);
}

dy_status dy_emit_unsqueeze(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_flat_copy(ctx, err);
}

dy_status dy_emit_reshape_dims(dy_cg_ctx *ctx, dy_error *err) {
  return dy_cg_flat_copy(ctx, err);
}

/* ------------------------------------------------------------------ */
/* concat                                                              */
/* ------------------------------------------------------------------ */

dy_status dy_emit_concat(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  int64_t axis = dy_concat_attrs_get(ctx->op).axis;
  int r = o->rank, ax = (int)(axis < 0 ? axis + r : axis);
  /* rows of the output: [outer, dim * inner]; input k fills dim_k * inner
   * of each, after the rows of the inputs before it */
  dy_ext outer = dy_ext_range(o, 0, ax), inner = dy_ext_range(o, ax + 1, r);
  dy_ext orow = dy_ext_range(o, ax, r);
  bool loop_o = !dy_ext_is_one(outer);
  char so[128], sr[128];
  if (loop_o)
    FOR("for (int64_t o = 0; o < %s; o++) {", dy_ext_str(ctx, outer, so, sizeof so));
  int64_t before = 0; /* the inputs' sizes so far along the axis (a dim) */
  for (int k = 0; k < ctx->op->n_inputs; k++) {
    const dy_type *t = dy_cg_in_type(ctx, k);
    dy_ext row = dy_ext_mul(dy_ext_dim(t->shape[ax]), inner);
    dy_ext off = dy_ext_mul(dy_ext_dim(before), inner);
    if (!dy_dim_add(before, t->shape[ax], &before))
      return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED,
                              "the sizes along the axis are no size expression");
    if (row.k == 0)
      continue;
    dy_idxbuf oi = {"", 0}, ii = {"", 0};
    if (loop_o) {
      dy_idx_add(ctx, &oi, "o", orow);
      dy_idx_add(ctx, &ii, "o", row);
    }
    idx_term(ctx, &oi, NULL, 1, off);
    if (dy_ext_is_one(row)) {
      L("%s[%s] = %s[%s];", OUT(0), dy_idx_str(&oi), IN(k), dy_idx_str(&ii));
      continue;
    }
    dy_idx_add(ctx, &oi, "i", dy_ext_one());
    dy_idx_add(ctx, &ii, "i", dy_ext_one());
    FOR("for (int64_t i = 0; i < %s; i++)", dy_ext_str(ctx, row, sr, sizeof sr));
    L("%s[%s] = %s[%s];", OUT(0), oi.s, IN(k), ii.s);
    END();
  }
  if (loop_o)
    END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* pad                                                                 */
/* ------------------------------------------------------------------ */

dy_status dy_emit_pad(dy_cg_ctx *ctx, dy_error *err) {
  dy_status s = DY_OK;
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  dy_pad_attrs pa;
  if ((s = dy_pad_attrs_of(ctx->op, &pa, err)))
    return s;
  const int64_t *pads = pa.paddings;
  double value = pa.value;
  const char *mode = pa.mode; /* checked */
  int m = strcmp(mode, "reflect") == 0 ? 1 : strcmp(mode, "edge") == 0 ? 2 : 0;
  int r = a->rank;

  /* groups of output dims: a padded dim alone, runs of unpadded ones
   * (equal in input and output, so contiguous in both) merged */
  typedef struct {
    dy_ext n, istr;
    bool padded;
    int64_t begin, dim, end;
  } pgroup;
  pgroup g[DY_MAX_DIMS];
  int ng = 0;
  for (int d = 0; d < r; d++) {
    bool padded = pads[d] != 0 || pads[r + d] != 0;
    dy_ext n = dy_ext_dim(o->shape[d]), istr = dy_ext_range(a, d + 1, r);
    if (!padded && dy_ext_is_one(n))
      continue;
    if (!padded && ng > 0 && !g[ng - 1].padded) {
      g[ng - 1].n = dy_ext_mul(g[ng - 1].n, n);
      g[ng - 1].istr = istr;
      continue;
    }
    g[ng++] = (pgroup){n, istr, padded, pads[d], a->shape[d], pads[r + d]};
  }

  char vlit[64], cond[1024] = "", sz[128];
  value_literal(o->dtype, value, vlit, sizeof vlit);
  dy_idxbuf oi = {"", 0}, ii = {"", 0};
  dy_ext ostr = dy_ext_one(), os[DY_MAX_DIMS];
  for (int k = ng - 1; k >= 0; k--) {
    os[k] = ostr;
    ostr = dy_ext_mul(ostr, g[k].n);
  }
  static const char jv[DY_MAX_DIMS][4] = {"j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7"};
  for (int k = 0; k < ng; k++) {
    const char *i = dy_loop_var[k];
    dy_idx_add(ctx, &oi, i, os[k]);
    if (!g[k].padded) {
      dy_idx_add(ctx, &ii, i, g[k].istr);
      FOR("for (int64_t %s = 0; %s < %s; %s++)", i, i, dy_ext_str(ctx, g[k].n, sz, sizeof sz), i);
      continue;
    }
    /* j = i - begin, then brought back into [0, dim) by the mode */
    int64_t b = g[k].begin, dim = g[k].dim;
    dy_idx_add(ctx, &ii, jv[k], g[k].istr);
    FOR("for (int64_t %s = 0; %s < %lld; %s++) {", i, i, (long long)g[k].n.k, i);
    if (b == 0)
      dy_cg_line(ctx, "%sint64_t %s = %s;", m == 0 ? "const " : "", jv[k], i);
    else
      dy_cg_line(ctx, "%sint64_t %s = %s %s %lld;", m == 0 ? "const " : "", jv[k], i,
                   b > 0 ? "-" : "+", (long long)(b > 0 ? b : -b));
    if (m == 1) { /* reflect: mirror without repeating the edge */
      if (b > 0) {
        dy_cg_line(ctx, "if (%s < 0)", jv[k]);
        dy_cg_line(ctx, "  %s = -%s;", jv[k], jv[k]);
      }
      if (g[k].end > 0) {
        dy_cg_line(ctx, "if (%s >= %lld)", jv[k], (long long)dim);
        dy_cg_line(ctx, "  %s = %lld - %s;", jv[k], (long long)(2 * (dim - 1)), jv[k]);
      }
    } else if (m == 2) { /* edge: clamp */
      if (b > 0) {
        dy_cg_line(ctx, "if (%s < 0)", jv[k]);
        dy_cg_line(ctx, "  %s = 0;", jv[k]);
      }
      if (g[k].end > 0) {
        dy_cg_line(ctx, "if (%s >= %lld)", jv[k], (long long)dim);
        dy_cg_line(ctx, "  %s = %lld;", jv[k], (long long)(dim - 1));
      }
    } else {
      size_t c = strlen(cond);
      if (b > 0)
        c += (size_t)snprintf(cond + c, sizeof cond - c, "%s%s >= 0", c ? " && " : "", jv[k]);
      if (g[k].end > 0 && c < sizeof cond)
        snprintf(cond + c, sizeof cond - c, "%s%s < %lld", c ? " && " : "", jv[k],
                 (long long)dim);
    }
  }
  if (cond[0])
    L("%s[%s] = %s ? %s[%s] : %s;", OUT(0), dy_idx_str(&oi), cond, IN(0), dy_idx_str(&ii), vlit);
  else
    L("%s[%s] = %s[%s];", OUT(0), dy_idx_str(&oi), IN(0), dy_idx_str(&ii));
  /* the padded loops close their braces (the others have none) */
  dy_cg_close_loops(ctx, ng);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gather: a kernel that can fail                                     */
/* ------------------------------------------------------------------ */

dy_status dy_emit_gather(dy_cg_ctx *ctx, dy_error *err) {
  if (!dy_op_has(ctx->op, DY_OPF_CAN_FAIL))
    return dy_cg_type_error(ctx, err, DY_STATUS_INTERNAL,
                              "gather must be a kernel that can fail");
  const dy_type *x = dy_cg_in_type(ctx, 0), *idx = dy_cg_in_type(ctx, 1);
  const dy_type *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  int64_t axis = dy_gather_attrs_get(ctx->op).axis;
  int ax = (int)(axis < 0 ? axis + x->rank : axis);
  dy_ext outer = dy_ext_range(x, 0, ax), inner = dy_ext_range(x, ax + 1, x->rank);
  dy_ext dim = dy_ext_dim(x->shape[ax]), n = dy_ext_range(idx, 0, idx->rank);
  char sd[128], sn[128], so[128], si[128];
  dy_ext_str(ctx, dim, sd, sizeof sd);
  dy_ext_str(ctx, n, sn, sizeof sn);
  dy_ext_str(ctx, outer, so, sizeof so);
  dy_ext_str(ctx, inner, si, sizeof si);
  bool loop_o = !dy_ext_is_one(outer), loop_i = !dy_ext_is_one(inner);

  dy_cg_line(ctx, "/* every index first: an out-of-range one fails the model */");
  const char *X = IN(0), *I = IN(1), *Y = OUT(0);
  FOR("for (int64_t j = 0; j < %s; j++)", sn);
  L("if (%s[j] < -%s || %s[j] >= %s)", I, sd, I, sd);
  L("  return 1;");
  END();
  /* y[o][j][i] = x[o][k][i], k = index[j] (+ dim if negative) */
  dy_idxbuf oi = {"", 0}, ii = {"", 0};
  if (loop_o) {
    dy_idx_add(ctx, &oi, "o", dy_ext_mul(n, inner));
    dy_idx_add(ctx, &ii, "o", dy_ext_mul(dim, inner));
  }
  dy_idx_add(ctx, &oi, "j", inner);
  dy_idx_add(ctx, &ii, "k", inner);
  if (loop_i) {
    dy_idx_add(ctx, &oi, "i", dy_ext_one());
    dy_idx_add(ctx, &ii, "i", dy_ext_one());
  }
  if (loop_o)
    FOR("for (int64_t o = 0; o < %s; o++)", so);
  FOR("for (int64_t j = 0; j < %s; j++) {", sn);
  L("const int64_t k = %s[j] < 0 ? %s[j] + %s : %s[j];", I, I, sd, I);
  if (loop_i)
    FOR("for (int64_t i = 0; i < %s; i++)", si);
  L("%s[%s] = %s[%s];", Y, oi.s, X, ii.s);
  if (loop_i)
    END();
  END();
  if (loop_o)
    END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reductions                                                          */
/* ------------------------------------------------------------------ */

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN } reduce_kind;

/* y[o] = sum of the row x[o * n .. o * n + n) for o < outer (the global
 * average pool's sum over H x W): four vector accumulators, their lanes
 * added at the end, the row's tail one by one. The order of the additions
 * is not C order: the sum differs from the eager kernel's by rounding. */
static void emit_row_sums(dy_cg_ctx *ctx, dy_ext outer, dy_ext n) {
  char so[128], sn[128];
  const char *X = IN(0), *Y = OUT(0);
  dy_ext_str(ctx, outer, so, sizeof so);
  dy_ext_str(ctx, n, sn, sizeof sn);
  *ctx->uses |= DY_USES_SIMD;
  L("/* row sums in vector registers */");
  FOR("for (int64_t o = 0; o < %s; o++) {", so);
  L("const float *r = %s + o * %s;", X, dy_ext_is_one(n) ? "1" : sn);
  L("dy_vf s0 = dy_vset(0.0f), s1 = s0, s2 = s0, s3 = s0;");
  L("int64_t i = 0;");
  OPEN("for (; i + 4 * DY_VW <= %s; i += 4 * DY_VW) {", sn);
  L("s0 = dy_vadd(s0, dy_vload(r + i));");
  L("s1 = dy_vadd(s1, dy_vload(r + i + DY_VW));");
  L("s2 = dy_vadd(s2, dy_vload(r + i + 2 * DY_VW));");
  L("s3 = dy_vadd(s3, dy_vload(r + i + 3 * DY_VW));");
  CLOSE();
  L("for (; i + DY_VW <= %s; i += DY_VW)", sn);
  L("  s0 = dy_vadd(s0, dy_vload(r + i));");
  L("float t = dy_vsum(dy_vadd(dy_vadd(s0, s1), dy_vadd(s2, s3)));");
  L("for (; i < %s; i++)", sn);
  L("  t += r[i];");
  L("%s[o] = t;", Y);
  END();
}

static dy_status emit_reduce(dy_cg_ctx *ctx, dy_error *err, reduce_kind rk) {
  dy_status s = DY_OK;
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  dy_reduce_sum_attrs ra; /* the four reductions share reduce_sum's schema */
  if ((s = dy_reduce_sum_attrs_of(ctx->op, &ra, err)))
    return s;
  const int64_t *axes = ra.axes;
  int na = ra.n_axes;
  int r = a->rank;
  unsigned mask = na ? 0 : ~0u;
  for (int i = 0; i < na; i++)
    mask |= 1u << (axes[i] < 0 ? axes[i] + r : axes[i]);
  /* groups of input dims reduced alike (size-1 dims dropped) */
  dy_ext gext[DY_MAX_DIMS];
  bool gred[DY_MAX_DIMS];
  int ng = 0;
  dy_ext count = dy_ext_one();
  for (int d = 0; d < r; d++) {
    bool red = mask >> d & 1u;
    dy_ext n = dy_ext_dim(a->shape[d]);
    if (red)
      count = dy_ext_mul(count, n);
    if (dy_ext_is_one(n))
      continue;
    if (ng > 0 && gred[ng - 1] == red) {
      gext[ng - 1] = dy_ext_mul(gext[ng - 1], n);
    } else {
      gext[ng] = n;
      gred[ng++] = red;
    }
  }
  /* input strides over all groups, output strides over the kept ones */
  dy_idxbuf oi = {"", 0}, ii = {"", 0};
  dy_ext is = dy_ext_one(), os = dy_ext_one(), istr[DY_MAX_DIMS], ostr[DY_MAX_DIMS];
  for (int k = ng - 1; k >= 0; k--) {
    istr[k] = is;
    ostr[k] = os;
    is = dy_ext_mul(is, gext[k]);
    if (!gred[k])
      os = dy_ext_mul(os, gext[k]);
  }
  for (int k = 0; k < ng; k++) {
    dy_idx_add(ctx, &ii, dy_loop_var[k], istr[k]);
    if (!gred[k])
      dy_idx_add(ctx, &oi, dy_loop_var[k], ostr[k]);
  }
  bool f32 = o->dtype == DY_F32;
  const char *init = rk == R_MAX ? (f32 ? "-DY_INFINITY" : "INT64_MIN")
                     : rk == R_MIN ? (f32 ? "DY_INFINITY" : "INT64_MAX")
                                   : (f32 ? "0.0f" : "0");
  const char *T = dy_ctype(o->dtype), *O = dy_idx_str(&oi), *I = dy_idx_str(&ii);
  char sz[128], sc[128];
  dy_ext no = dy_ext_range(o, 0, o->rank);
  const char *X = IN(0), *Y = OUT(0);
  /* f32 sums over the innermost dims (contiguous rows): vector code */
  bool rows = f32 && (rk == R_SUM || rk == R_MEAN) && !ctx->plain_kernels && !is_empty(a) &&
              ng >= 1 && gred[ng - 1] && (ng == 1 || (ng == 2 && !gred[0]));
  if (rows)
    emit_row_sums(ctx, ng == 2 ? gext[0] : dy_ext_one(), gext[ng - 1]);
  else if (dy_ext_is_one(no)) {
    L("%s[0] = %s;", Y, init);
  } else {
    FOR("for (int64_t i = 0; i < %s; i++)", dy_ext_str(ctx, no, sz, sizeof sz));
    L("%s[i] = %s;", Y, init);
    END();
  }
  /* accumulate, in the input's C order (an empty input adds nothing: a
   * sum of 0, a mean of 0/0) */
  bool block = rk == R_MAX || rk == R_MIN; /* the innermost loop has a body */
  int nl = is_empty(a) || rows ? 0 : ng;
  for (int k = 0; k < nl; k++) {
    const char *i = dy_loop_var[k];
    FOR("for (int64_t %s = 0; %s < %s; %s++)%s", i, i, dy_ext_str(ctx, gext[k], sz, sizeof sz),
        i, block && k == ng - 1 ? " {" : "");
  }
  if (is_empty(a) || rows) {
    /* no loop, or done */
  } else if (rk == R_SUM || rk == R_MEAN) {
    if (f32)
      L("%s[%s] += %s[%s];", Y, O, X, I);
    else /* wraps, as the eager kernel does, instead of overflowing */
      L("%s[%s] = (int64_t)((uint64_t)%s[%s] + (uint64_t)%s[%s]);", Y, O, Y, O, X, I);
  } else {
    /* f32: NaN propagates, as numpy's max */
    L("const %s v = %s[%s];", T, X, I);
    L("if (v %s %s[%s]%s)", rk == R_MAX ? ">" : "<", Y, O, f32 ? " || v != v" : "");
    L("  %s[%s] = v;", Y, O);
  }
  dy_cg_close_loops(ctx, nl);
  if (rk == R_MEAN) {
    /* "(float)13" or "(float)(batch*13)" */
    char cnt[160];
    dy_ext_str(ctx, count, sc, sizeof sc);
    snprintf(cnt, sizeof cnt, count.p ? "(float)(%s)" : "(float)%s", sc);
    if (dy_ext_is_one(no)) {
      L("%s[0] /= %s;", Y, cnt);
    } else {
      FOR("for (int64_t i = 0; i < %s; i++)", dy_ext_str(ctx, no, sz, sizeof sz));
      L("%s[i] /= %s;", Y, cnt);
      END();
    }
  }
  return DY_OK;
}

dy_status dy_emit_reduce_sum(dy_cg_ctx *ctx, dy_error *err) {
  return emit_reduce(ctx, err, R_SUM);
}
dy_status dy_emit_reduce_mean(dy_cg_ctx *ctx, dy_error *err) {
  return emit_reduce(ctx, err, R_MEAN);
}
dy_status dy_emit_reduce_max(dy_cg_ctx *ctx, dy_error *err) {
  return emit_reduce(ctx, err, R_MAX);
}
dy_status dy_emit_reduce_min(dy_cg_ctx *ctx, dy_error *err) {
  return emit_reduce(ctx, err, R_MIN);
}

/* ------------------------------------------------------------------ */
/* argmax, log_softmax: [outer, n, inner] around the axis              */
/* ------------------------------------------------------------------ */

typedef struct {
  dy_ext outer, n, inner;
  char so[128], sn[128], si[128];
  char xk[160];            /* "x[k]" or "x[k * inner]" */
  bool inner1, outer1;
} axis_view;

static void around_axis(dy_cg_ctx *ctx, const dy_type *t, int64_t axis,
                        axis_view *v) {
  int r = t->rank, ax = r ? (int)(axis < 0 ? axis + r : axis) : 0;
  v->outer = dy_ext_range(t, 0, ax);
  v->n = r ? dy_ext_dim(t->shape[ax]) : dy_ext_one();
  v->inner = r ? dy_ext_range(t, ax + 1, r) : dy_ext_one();
  v->inner1 = dy_ext_is_one(v->inner);
  v->outer1 = dy_ext_is_one(v->outer);
  dy_ext_str(ctx, v->outer, v->so, sizeof v->so);
  dy_ext_str(ctx, v->n, v->sn, sizeof v->sn);
  dy_ext_str(ctx, v->inner, v->si, sizeof v->si);
  if (v->inner1)
    snprintf(v->xk, sizeof v->xk, "x[k]");
  else
    snprintf(v->xk, sizeof v->xk, "x[k * %s]", v->si);
}

/* Open "for o" (unless outer is 1) and "for j" (unless inner is 1) and point x
 * (and y) at the row; returns the loops to close. */
static int open_rows(dy_cg_ctx *ctx, const axis_view *v, const char *T,
                     bool with_y) {
  int n = 0;
  if (!v->outer1) {
    FOR("for (int64_t o = 0; o < %s; o++) {", v->so);
    n++;
  }
  if (!v->inner1) {
    FOR("for (int64_t j = 0; j < %s; j++) {", v->si);
    n++;
  }
  /* the row starts at o * n * inner (+ j) */
  dy_idxbuf row = {"", 0};
  if (!v->outer1)
    dy_idx_add(ctx, &row, "o", dy_ext_mul(v->n, v->inner));
  if (!v->inner1)
    dy_idx_add(ctx, &row, "j", dy_ext_one());
  if (row.n) {
    L("const %s *x = %s + %s;", T, IN(0), row.s);
    if (with_y)
      L("%s *y = %s + %s;", T, OUT(0), row.s);
  } else {
    L("const %s *x = %s;", T, IN(0));
    if (with_y)
      L("%s *y = %s;", T, OUT(0));
  }
  return n;
}

dy_status dy_emit_argmax(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0);
  axis_view v;
  around_axis(ctx, a, dy_argmax_attrs_get(ctx->op).axis, &v);
  const char *T = dy_ctype(a->dtype);
  int nl = open_rows(ctx, &v, T, false);
  dy_cg_line(ctx, "int64_t best = 0;");
  dy_cg_line(ctx, "%s m = x[0];", T);
  FOR("for (int64_t k = 1; k < %s; k++) {", v.sn);
  L("const %s e = %s;", T, v.xk);
  if (a->dtype == DY_F32) /* the first NaN wins, as numpy */
    L("if (e > m || (e != e && m == m)) {");
  else
    L("if (e > m) {");
  L("  m = e;");
  L("  best = k;");
  L("}");
  END();
  dy_idxbuf oi = {"", 0};
  if (!v.outer1)
    dy_idx_add(ctx, &oi, "o", v.inner);
  if (!v.inner1)
    dy_idx_add(ctx, &oi, "j", dy_ext_one());
  L("%s[%s] = best;", OUT(0), dy_idx_str(&oi));
  dy_cg_close_loops(ctx, nl);
  return DY_OK;
}

dy_status dy_emit_log_softmax(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0);
  if (is_empty(a))
    return DY_OK;
  axis_view v;
  around_axis(ctx, a, dy_log_softmax_attrs_get(ctx->op).axis, &v);
  char yk[200];
  snprintf(yk, sizeof yk, "y%s", v.xk + 1);
  int nl = open_rows(ctx, &v, "float", true);
  L("float mx = x[0];");
  FOR("for (int64_t k = 1; k < %s; k++)", v.sn);
  L("if (%s > mx)", v.xk);
  L("  mx = %s;", v.xk);
  END();
  L("float sum = 0.0f;");
  FOR("for (int64_t k = 0; k < %s; k++)", v.sn);
  L("sum += dy_expf(%s - mx);", v.xk);
  END();
  L("const float lse = dy_logf(sum);");
  FOR("for (int64_t k = 0; k < %s; k++)", v.sn);
  L("%s = %s - mx - lse;", yk, v.xk);
  END();
  dy_cg_close_loops(ctx, nl);
  return DY_OK;
}

/* nonzero: a size known only at run time (DY_OPF_SETS_SIZE). One pass
 * counts x's nonzero elements (x != 0: a NaN counts, -0.0 does not, as the
 * executor's kernel); a count above the symbol's bound (the buffers' size)
 * returns 1 with the count written (NAME_run: NAME_ERR_SHAPE); else a
 * second pass writes each element's coordinates, C order, into the [rank, n]
 * output (row d at d * n) and the count goes to *count (the driver's
 * parameter for the symbol, program/kernel.c). */
dy_status dy_emit_nonzero(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *a = dy_cg_in_type(ctx, 0);
  int sym = dy_op_size_sym(ctx->op, NULL);
  int64_t bound = dy_program_sym_bound(ctx->p, sym);
  const char *numel = dy_cg_extent(ctx, a, 0, a->rank);
  char all[200];
  snprintf(all, sizeof all, "%s", numel);
  L("int64_t n = 0;");
  FOR("for (int64_t i = 0; i < %s; i++)", all);
  L("n += %s[i] != 0;", IN(0));
  END();
  L("*count = n;");
  L("if (n > %lld) /* above the bound of size symbol %s (--max-dim %s=N) */", (long long)bound,
    dy_sym_name(sym), dy_sym_name(sym));
  L("  return 1;");
  if (a->rank == 1) {
    L("int64_t k = 0;");
    FOR("for (int64_t i = 0; i < %s; i++)", all);
    L("if (%s[i] != 0)", IN(0));
    L("  %s[k++] = i;", OUT(0));
    END();
    return DY_OK;
  }
  /* the coordinates of element i: idx[], counted up in C order */
  char ext[DY_MAX_DIMS * 48] = "";
  size_t at = 0;
  for (int d = 0; d < a->rank && at < sizeof ext; d++)
    at += (size_t)snprintf(ext + at, sizeof ext - at, "%s%s", d ? ", " : "",
                           dy_cg_extent(ctx, a, d, d + 1));
  L("const int64_t ext[%d] = {%s};", a->rank, ext);
  L("int64_t idx[%d] = {0}, k = 0;", a->rank);
  FOR("for (int64_t i = 0; i < %s; i++) {", all);
  OPEN("if (%s[i] != 0) {", IN(0));
  L("for (int d = 0; d < %d; d++)", a->rank);
  L("  %s[d * n + k] = idx[d];", OUT(0));
  L("k++;");
  CLOSE();
  L("for (int d = %d; d >= 0 && ++idx[d] == ext[d]; d--)", a->rank - 1);
  L("  idx[d] = 0;");
  END();
  return DY_OK;
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

/* the gathers' and scatters' operands */
#define INDEX_ROLES {"x", "index", "updates"}

const dy_cg_op dy_cg_op_slice = {.emit = dy_emit_slice};
const dy_cg_op dy_cg_op_expand = {.emit = dy_emit_expand};
const dy_cg_op dy_cg_op_expand_as = {.emit = dy_emit_expand_as};
const dy_cg_op dy_cg_op_tile = {.emit = dy_emit_tile};
const dy_cg_op dy_cg_op_squeeze = {.emit = dy_emit_squeeze};
const dy_cg_op dy_cg_op_unsqueeze = {.emit = dy_emit_unsqueeze};
const dy_cg_op dy_cg_op_reshape_dims = {.emit = dy_emit_reshape_dims};
const dy_cg_op dy_cg_op_concat = {.emit = dy_emit_concat, .role_prefix = "x"};
const dy_cg_op dy_cg_op_pad = {.emit = dy_emit_pad};
const dy_cg_op dy_cg_op_gather = {.emit = dy_emit_gather, .roles = INDEX_ROLES};
const dy_cg_op dy_cg_op_reduce_sum = {.emit = dy_emit_reduce_sum};
const dy_cg_op dy_cg_op_reduce_mean = {.emit = dy_emit_reduce_mean};
const dy_cg_op dy_cg_op_reduce_max = {.emit = dy_emit_reduce_max};
const dy_cg_op dy_cg_op_reduce_min = {.emit = dy_emit_reduce_min};
const dy_cg_op dy_cg_op_argmax = {.emit = dy_emit_argmax};
const dy_cg_op dy_cg_op_log_softmax = {.emit = dy_emit_log_softmax};
const dy_cg_op dy_cg_op_nonzero = {.emit = dy_emit_nonzero};
