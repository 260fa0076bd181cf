/* emit_extra.c - floor 2: emitters of the extra family (ir/ops_extra.def).
 *
 * Each prints the body of one kernel (its parameters x, y, ... by role, and
 * `batch` when a type has the dynamic dim) with literal extents, the batch
 * through dy_ext.
 * The formulas are runtime/kernels/kernels_extra.c's word for word (same libm
 * calls, same operation and iteration order), so the generated C agrees
 * with the eager kernels; change one, change the other.
 *
 *   sin .. atan       one flat loop; no libm (NAME.c has none): range
 *                     reduction and Cephes' polynomials on top of
 *                     emit_mathlib.c's dy_fabsf, dy_roundf, dy_sqrtf
 *   mod               the broadcast loop nest, an exact C fmod by scaled
 *                     subtraction (no libm)
 *   reduce_prod       the input's dims as nested loops in C order,
 *                     multiplying into the output element
 *   cumsum            [outer, n, inner] around the axis, a running sum
 *   gather_elements, scatter_elements, gather_nd, scatter_nd
 *                     kernels that can fail (DY_OPF_CAN_FAIL): every index
 *                     is checked first and the kernel returns 1 (the model's
 *                     NAME_ERR_INDEX) before anything is read or written
 *                     out of range
 *   top_k             k selection passes per row, ranked by DY_TOPK_BEFORE
 *   det               LU with partial pivoting on a double copy of each
 *                     matrix, kept on the stack (n <= 64)
 *   inverse           Gauss-Jordan with partial pivoting on double copies
 *                     of the matrix and the identity, on the stack
 *   grid_sample_grad, roi_align_grad
 *                     the forward's emitter with a flag: the output zeroed,
 *                     then dy added to the taps the forward reads
 */
#include <stdio.h>
#include <string.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

static bool is_empty(const dy_type *t) { return dy_ext_range(t, 0, t->rank).k == 0; }

static int norm_axis(int64_t axis, int rank) {
  return (int)(axis < 0 ? axis + rank : axis);
}

/* An extent as a C expression in a caller buffer. */
static const char *ext(dy_cg_ctx *ctx, dy_ext e, char *buf, size_t n) {
  return dy_ext_str(ctx, e, buf, n);
}

/* ------------------------------------------------------------------ */
/* trigonometry                                                        */
/* ------------------------------------------------------------------ */

/* The generated C has no libm (emit_mathlib.c): sin, cos and tan reduce
 * x = n pi/2 + r, |r| <= pi/4, with pi/2 in three parts (n r exact for |x|
 * up to about 1e5; beyond, the reduction loses accuracy), then use Cephes'
 * sinf / cosf polynomials by quadrant; asin, acos and atan are Cephes'
 * asinf, acosf, atanf. A few ulp from libm's, which the eager kernels
 * call. Each is a block of statements over x, ending in `y`. */
static const char *const reduce_pio2[] = {
    "const float n = dy_roundf(x * 0.636619772f);",
    "const float r = ((x - n * 1.5703125f) - n * 4.837512969970703125e-4f) - "
    "n * 7.54978995489188216e-8f;",
    "const float z = r * r;",
    "const float s = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + "
    "z * -1.9515295891e-4f));",
    "const float c = 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f + "
    "z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));",
    "const unsigned q = (unsigned)((uint64_t)(dy_fabsf(n) < 1e18f ? (int64_t)n : 0) & 3u);",
    NULL};
static const char *const sin_tail[] = {"const float y = q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;",
                                       NULL};
static const char *const cos_tail[] = {"const float y = q == 0 ? c : q == 1 ? -s : q == 2 ? -c : s;",
                                       NULL};
static const char *const tan_tail[] = {"const float y = q & 1u ? -c / s : s / c;", NULL};
static const char *const asin_body[] = {
    "const float a = dy_fabsf(x);",
    "const int big = a > 0.5f;",
    "const float z = big ? 0.5f * (1.0f - a) : a * a;",
    "const float v = big ? dy_sqrtf(z) : a;",
    "float p = ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z + "
    "7.4953002686e-2f) * z + 1.6666752422e-1f) * z * v + v;",
    "if (big)",
    "  p = 1.5707963268f - (p + p);",
    "const float y = a > 1.0f ? DY_NAN : x < 0.0f ? -p : p;",
    NULL};
static const char *const acos_body[] = {
    "const int out = x < -0.5f || x > 0.5f;",
    "const float v = out ? dy_sqrtf(0.5f * (1.0f - dy_fabsf(x))) : x;",
    "const float z = v * v;",
    "const float p = ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z + "
    "7.4953002686e-2f) * z + 1.6666752422e-1f) * z * v + v;",
    "const float y = x > 0.5f ? p + p : x < -0.5f ? 3.1415926536f - (p + p) : 1.5707963268f - p;",
    NULL};
static const char *const atan_body[] = {
    "const float a = dy_fabsf(x);",
    "const int hi = a > 2.414213562f, mid = a > 0.4142135624f;",
    "const float t = hi ? -1.0f / a : mid ? (a - 1.0f) / (a + 1.0f) : a;",
    "const float y0 = hi ? 1.5707963268f : mid ? 0.7853981634f : 0.0f;",
    "const float z = t * t;",
    "const float w = y0 + (((8.05374449538e-2f * z - 1.38776856032e-1f) * z + "
    "1.99777106478e-1f) * z - 3.33329491539e-1f) * z * t + t;",
    "const float y = x < 0.0f ? -w : w;",
    NULL};

static dy_status emit_map_f32(dy_cg_ctx *ctx, dy_error *err, const char *what,
                              const char *const *head, const char *const *body) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  char sz[128];
  L("/* %s (no libm; see codegen/emit_extra.c) */", what);
  FOR("for (int64_t i = 0; i < %s; i++) {", ext(ctx, dy_ext_range(o, 0, o->rank), sz, sizeof sz));
  L("const float x = %s[i];", IN(0));
  for (int k = 0; head && head[k]; k++)
    L("%s", head[k]);
  for (int k = 0; body[k]; k++)
    L("%s", body[k]);
  L("%s[i] = y;", OUT(0));
  END();
  return DY_OK;
}

dy_status dy_emit_sin(dy_cg_ctx *ctx, dy_error *err) {
  return emit_map_f32(ctx, err, "sin x, x = n pi/2 + r", reduce_pio2, sin_tail);
}
dy_status dy_emit_cos(dy_cg_ctx *ctx, dy_error *err) {
  return emit_map_f32(ctx, err, "cos x, x = n pi/2 + r", reduce_pio2, cos_tail);
}
dy_status dy_emit_tan(dy_cg_ctx *ctx, dy_error *err) {
  return emit_map_f32(ctx, err, "tan x, x = n pi/2 + r", reduce_pio2, tan_tail);
}
dy_status dy_emit_asin(dy_cg_ctx *ctx, dy_error *err) {
  return emit_map_f32(ctx, err, "asin x", NULL, asin_body);
}
dy_status dy_emit_acos(dy_cg_ctx *ctx, dy_error *err) {
  return emit_map_f32(ctx, err, "acos x", NULL, acos_body);
}
dy_status dy_emit_atan(dy_cg_ctx *ctx, dy_error *err) {
  return emit_map_f32(ctx, err, "atan x", NULL, atan_body);
}

/* ------------------------------------------------------------------ */
/* mod                                                                 */
/* ------------------------------------------------------------------ */

/* Loops over the output [.., n] with the index expressions of the output
 * and the two inputs (each broadcast numpy-style); opens them and returns
 * their number. */
static int open_bcast2(dy_cg_ctx *ctx, dy_idxbuf *oi, dy_idxbuf *ai, dy_idxbuf *bi) {
  const dy_type *o = dy_cg_out_type(ctx, 0);
  const dy_type *in[2] = {dy_cg_in_type(ctx, 0), dy_cg_in_type(ctx, 1)};
  dy_idxbuf *ix[2] = {ai, bi};
  int r = o->rank;
  dy_ext e[DY_MAX_DIMS], os = dy_ext_one(), is[2] = {dy_ext_one(), dy_ext_one()};
  dy_ext ostr[DY_MAX_DIMS], istr[2][DY_MAX_DIMS];
  for (int d = r - 1; d >= 0; d--) {
    e[d] = dy_ext_dim(o->shape[d]);
    ostr[d] = os;
    os = dy_ext_mul(os, e[d]);
    for (int k = 0; k < 2; k++) {
      int j = d - (r - in[k]->rank);
      bool bc = j < 0 || (in[k]->shape[j] == 1 && o->shape[d] != 1);
      istr[k][d] = bc ? (dy_ext){0, 0, 1} : is[k];
      if (j >= 0)
        is[k] = dy_ext_mul(is[k], dy_ext_dim(in[k]->shape[j]));
    }
  }
  for (int d = 0; d < r; d++) {
    dy_idx_add(ctx, oi, dy_loop_var[d], ostr[d]);
    for (int k = 0; k < 2; k++)
      if (istr[k][d].k != 0)
        dy_idx_add(ctx, ix[k], dy_loop_var[d], istr[k][d]);
  }
  dy_cg_open_loops(ctx, r, e, dy_loop_var);
  return r;
}

/* kernels_extra.c's loops: C's fmod (exact here by subtracting y scaled by
 * powers of two: each step is exact, Sterbenz), then for fmod 0 the
 * divisor added when the signs differ; i64 by 0 or -1 gives 0. */
dy_status dy_emit_mod(dy_cg_ctx *ctx, dy_error *err) {
  if (is_empty(dy_cg_out_type(ctx, 0)))
    return DY_OK;
  bool c = dy_mod_attrs_get(ctx->op).fmod != 0;
  bool f32 = dy_cg_in_type(ctx, 0)->dtype == DY_F32;
  const char *T = f32 ? "float" : "int64_t";
  L("/* %s remainder, %s */", f32 ? "float" : "int64", c ? "the dividend's sign (C fmod)"
                                                     : "the divisor's sign (Python %)");
  dy_idxbuf oi = {"", 0}, ai = {"", 0}, bi = {"", 0};
  int nl = open_bcast2(ctx, &oi, &ai, &bi);
  const char *Y = OUT(0);
  L("{");
  L("  const %s x = %s[%s], y = %s[%s];", T, IN(0), dy_idx_str(&ai), IN(1), dy_idx_str(&bi));
  if (f32) {
    L("  float m;");
    L("  if (x != x || y != y || y == 0.0f || !(dy_fabsf(x) < DY_INFINITY)) {");
    L("    m = DY_NAN;");
    L("  } else if (!(dy_fabsf(y) < DY_INFINITY)) {");
    L("    m = x;");
    L("  } else {");
    L("    float r = dy_fabsf(x);");
    L("    const float ay = dy_fabsf(y);");
    L("    while (r >= ay) {");
    L("      float t = ay;");
    L("      while (t + t <= r)");
    L("        t += t;");
    L("      r -= t;");
    L("    }");
    L("    m = dy_copysignf(r, x);");
    L("  }");
    if (!c)
      L("  %s[%s] = m != 0.0f && (m < 0.0f) != (y < 0.0f) ? m + y : m;", Y, dy_idx_str(&oi));
    else
      L("  %s[%s] = m;", Y, dy_idx_str(&oi));
  } else if (c) {
    L("  %s[%s] = y == 0 || y == -1 ? 0 : x %% y;", Y, dy_idx_str(&oi));
  } else {
    L("  %s[%s] = y == 0 || y == -1 ? 0 : x %% y != 0 && (x %% y < 0) != (y < 0) ? "
      "x %% y + y : x %% y;", Y, dy_idx_str(&oi));
  }
  L("}");
  dy_cg_close_loops(ctx, nl);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* reduce_prod, cumsum                                                 */
/* ------------------------------------------------------------------ */

dy_status dy_emit_reduce_prod(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  dy_reduce_prod_attrs ra = dy_reduce_prod_attrs_get(ctx->op);
  const int64_t *axes = ra.axes;
  int na = ra.n_axes;
  int r = a->rank;
  unsigned mask = na ? 0 : ~0u;
  for (int i = 0; i < na; i++)
    mask |= 1u << norm_axis(axes[i], r);
  bool f32 = a->dtype == DY_F32;
  char sz[128];
  FOR("for (int64_t i = 0; i < %s; i++)", ext(ctx, dy_ext_range(o, 0, o->rank), sz, sizeof sz));
  L("%s[i] = %s;", OUT(0), f32 ? "1.0f" : "1");
  END();
  if (is_empty(a))
    return DY_OK;
  /* the input in C order; the output index skips the reduced dims */
  dy_ext e[DY_MAX_DIMS];
  dy_idxbuf ii = {"", 0}, oi = {"", 0};
  dy_ext is = dy_ext_one(), os = dy_ext_one();
  for (int d = 0; d < r; d++)
    e[d] = dy_ext_dim(a->shape[d]);
  dy_ext istr[DY_MAX_DIMS], ostr[DY_MAX_DIMS];
  for (int d = r - 1; d >= 0; d--) {
    istr[d] = is;
    ostr[d] = os;
    is = dy_ext_mul(is, e[d]);
    if (!(mask >> d & 1u))
      os = dy_ext_mul(os, e[d]);
  }
  for (int d = 0; d < r; d++) {
    dy_idx_add(ctx, &ii, dy_loop_var[d], istr[d]);
    if (!(mask >> d & 1u))
      dy_idx_add(ctx, &oi, dy_loop_var[d], ostr[d]);
  }
  dy_cg_open_loops(ctx, r, e, dy_loop_var);
  const char *O = dy_idx_str(&oi), *I = dy_idx_str(&ii), *X = IN(0), *Y = OUT(0);
  if (f32)
    L("%s[%s] *= %s[%s];", Y, O, X, I);
  else /* wraps, as the eager kernel does */
    L("%s[%s] = (int64_t)((uint64_t)%s[%s] * (uint64_t)%s[%s]);", Y, O, Y, O, X, I);
  dy_cg_close_loops(ctx, r);
  return DY_OK;
}

/* [outer, n, inner] around axis ax of t, as C expressions. */
typedef struct {
  dy_ext outer, n, inner;
  char so[128], sn[128], si[128];
} around;

static void around_axis(dy_cg_ctx *ctx, const dy_type *t, int ax, around *v) {
  v->outer = dy_ext_range(t, 0, ax);
  v->n = dy_ext_dim(t->shape[ax]);
  v->inner = dy_ext_range(t, ax + 1, t->rank);
  ext(ctx, v->outer, v->so, sizeof v->so);
  ext(ctx, v->n, v->sn, sizeof v->sn);
  ext(ctx, v->inner, v->si, sizeof v->si);
}

dy_status dy_emit_cumsum(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *t = dy_cg_in_type(ctx, 0);
  if (is_empty(t))
    return DY_OK;
  around v;
  dy_cumsum_attrs ca = dy_cumsum_attrs_get(ctx->op);
  around_axis(ctx, t, norm_axis(ca.axis, t->rank), &v);
  bool ex = ca.exclusive;
  bool rev = ca.reverse;
  bool f32 = t->dtype == DY_F32;
  const char *T = dy_ctype(t->dtype);
  const char *add = f32 ? "acc += v;" : "acc = (int64_t)((uint64_t)acc + (uint64_t)v);";
  L("/* running sums along the axis%s%s */", ex ? ", exclusive" : "", rev ? ", from the end" : "");
  FOR("for (int64_t o = 0; o < %s; o++)", v.so);
  FOR("for (int64_t j = 0; j < %s; j++) {", v.si);
  L("%s acc = %s;", T, f32 ? "0.0f" : "0");
  FOR("for (int64_t q = 0; q < %s; q++) {", v.sn);
  if (rev)
    L("const int64_t at = (o * %s + (%s - 1 - q)) * %s + j;", v.sn, v.sn, v.si);
  else
    L("const int64_t at = (o * %s + q) * %s + j;", v.sn, v.si);
  L("const %s v = %s[at];", T, IN(0));
  if (ex) {
    L("%s[at] = acc;", OUT(0));
    L("%s", add);
  } else {
    L("%s", add);
    L("%s[at] = acc;", OUT(0));
  }
  END();
  END();
  END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* gather_elements, scatter_elements                                   */
/* ------------------------------------------------------------------ */

/* "if (index[j] < -n || index[j] >= n) return 1;" over count indices. */
static void check_all(dy_cg_ctx *ctx, const char *count, const char *n) {
  L("/* every index first: an out-of-range one fails the model */");
  FOR("for (int64_t j = 0; j < %s; j++)", count);
  L("if (%s[j] < -%s || %s[j] >= %s)", IN(1), n, IN(1), n);
  L("  return 1;");
  END();
}

/* The C statement combining element *d with update v for the reduction
 * (kernels_extra.c's combine()). */
static const char *combine_expr(const char *red, dy_dtype t) {
  bool none = strcmp(red, "none") == 0, add = strcmp(red, "add") == 0;
  bool mul = strcmp(red, "mul") == 0, max = strcmp(red, "max") == 0;
  if (none)
    return "*d = v;";
  if (t == DY_F32)
    return add ? "*d = *d + v;" : mul ? "*d = *d * v;"
           : max ? "*d = v > *d || v != v ? v : *d;" : "*d = v < *d || v != v ? v : *d;";
  if (t == DY_I64)
    return add ? "*d = (int64_t)((uint64_t)*d + (uint64_t)v);"
           : mul ? "*d = (int64_t)((uint64_t)*d * (uint64_t)v);"
           : max ? "*d = v > *d ? v : *d;" : "*d = v < *d ? v : *d;";
  return add || max ? "*d = *d || v;" : "*d = *d && v;";
}

static dy_status emit_elements(dy_cg_ctx *ctx, dy_error *err, bool scatter) {
  const dy_type *x = dy_cg_in_type(ctx, 0), *idx = dy_cg_in_type(ctx, 1);
  int r = x->rank, ax = norm_axis(dy_gather_elements_attrs_get(ctx->op).axis, r); /* scatter_elements too */
  char sn[128], sd[128], sx[128];
  ext(ctx, dy_ext_range(idx, 0, r), sn, sizeof sn);
  ext(ctx, dy_ext_dim(x->shape[ax]), sd, sizeof sd);
  if (scatter) {
    FOR("for (int64_t i = 0; i < %s; i++)", ext(ctx, dy_ext_range(x, 0, r), sx, sizeof sx));
    L("%s[i] = %s[i];", OUT(0), IN(0));
    END();
  }
  if (is_empty(idx))
    return DY_OK;
  check_all(ctx, sn, sd);
  /* x's strides; the axis term is the index's value */
  dy_ext e[DY_MAX_DIMS], st = dy_ext_one(), xstr[DY_MAX_DIMS];
  for (int d = r - 1; d >= 0; d--) {
    xstr[d] = st;
    st = dy_ext_mul(st, dy_ext_dim(x->shape[d]));
    e[d] = dy_ext_dim(idx->shape[d]);
  }
  dy_idxbuf xi = {"", 0};
  for (int d = 0; d < r; d++)
    dy_idx_add(ctx, &xi, d == ax ? "k" : dy_loop_var[d], xstr[d]);
  L("int64_t j = 0;");
  dy_cg_open_loops(ctx, r, e, dy_loop_var);
  L("{");
  L("  const int64_t k = %s[j] < 0 ? %s[j] + %s : %s[j];", IN(1), IN(1), sd, IN(1));
  if (scatter) {
    const char *red = dy_scatter_elements_attrs_get(ctx->op).reduction;
    L("  %s *d = &%s[%s];", dy_ctype(x->dtype), OUT(0), dy_idx_str(&xi));
    L("  const %s v = %s[j];", dy_ctype(x->dtype), IN(2));
    L("  %s", combine_expr(red, x->dtype));
  } else {
    L("  %s[j] = %s[%s];", OUT(0), IN(0), dy_idx_str(&xi));
  }
  L("  j++;");
  L("}");
  dy_cg_close_loops(ctx, r);
  return DY_OK;
}

dy_status dy_emit_gather_elements(dy_cg_ctx *ctx, dy_error *err) {
  return emit_elements(ctx, err, false);
}
dy_status dy_emit_scatter_elements(dy_cg_ctx *ctx, dy_error *err) {
  return emit_elements(ctx, err, true);
}

/* ------------------------------------------------------------------ */
/* gather_nd, scatter_nd                                               */
/* ------------------------------------------------------------------ */

static dy_status emit_nd(dy_cg_ctx *ctx, dy_error *err, bool scatter) {
  const dy_type *x = dy_cg_in_type(ctx, 0), *idx = dy_cg_in_type(ctx, 1);
  int b = scatter ? 0 : (int)dy_gather_nd_attrs_get(ctx->op).batch_dims;
  int q = idx->rank, k = (int)idx->shape[q - 1];
  dy_ext nb = dy_ext_range(idx, 0, b), m = dy_ext_range(idx, b, q - 1);
  dy_ext sl = dy_ext_range(x, b + k, x->rank), xb = dy_ext_range(x, b, x->rank);
  char snb[128], sm[128], ssl[128], sxb[128], sx[128];
  ext(ctx, nb, snb, sizeof snb);
  ext(ctx, m, sm, sizeof sm);
  ext(ctx, sl, ssl, sizeof ssl);
  ext(ctx, xb, sxb, sizeof sxb);
  const char *X = IN(0), *I = IN(1), *Y = OUT(0);
  if (scatter) {
    FOR("for (int64_t i = 0; i < %s; i++)", ext(ctx, dy_ext_range(x, 0, x->rank), sx, sizeof sx));
    L("%s[i] = %s[i];", Y, X);
    END();
  }
  if (is_empty(idx) || dy_ext_range(x, 0, x->rank).k == 0)
    return DY_OK;
  /* each tuple entry j indexes dim b + j, stride tstr[j] */
  char dims[DY_MAX_DIMS][128], strs[DY_MAX_DIMS][128];
  dy_ext st = sl;
  for (int j = k - 1; j >= 0; j--) {
    ext(ctx, dy_ext_dim(x->shape[b + j]), dims[j], sizeof dims[j]);
    ext(ctx, st, strs[j], sizeof strs[j]);
    st = dy_ext_mul(st, dy_ext_dim(x->shape[b + j]));
  }
  char count[160];
  ext(ctx, dy_ext_mul(nb, m), count, sizeof count);
  L("/* every index first: an out-of-range one fails the model */");
  FOR("for (int64_t t = 0; t < %s; t++) {", count);
  for (int j = 0; j < k; j++) {
    L("if (%s[t * %d + %d] < -%s || %s[t * %d + %d] >= %s)", I, k, j, dims[j], I, k, j, dims[j]);
    L("  return 1;");
  }
  END();
  FOR("for (int64_t bi = 0; bi < %s; bi++)", snb);
  FOR("for (int64_t mi = 0; mi < %s; mi++) {", sm);
  L("const int64_t t = bi * %s + mi;", sm);
  L("const int64_t *tp = %s + t * %d;", I, k);
  L("int64_t off = bi * %s;", sxb);
  for (int j = 0; j < k; j++)
    L("off += (tp[%d] < 0 ? tp[%d] + %s : tp[%d]) * %s;", j, j, dims[j], j, strs[j]);
  FOR("for (int64_t i = 0; i < %s; i++) {", ssl);
  if (scatter) {
    const char *red = dy_scatter_nd_attrs_get(ctx->op).reduction;
    L("%s *d = &%s[off + i];", dy_ctype(x->dtype), Y);
    L("const %s v = %s[t * %s + i];", dy_ctype(x->dtype), IN(2), ssl);
    L("%s", combine_expr(red, x->dtype));
  } else {
    L("%s[t * %s + i] = %s[off + i];", Y, ssl, X);
  }
  END();
  END();
  END();
  return DY_OK;
}

dy_status dy_emit_gather_nd(dy_cg_ctx *ctx, dy_error *err) {
  return emit_nd(ctx, err, false);
}
dy_status dy_emit_scatter_nd(dy_cg_ctx *ctx, dy_error *err) {
  return emit_nd(ctx, err, true);
}

/* ------------------------------------------------------------------ */
/* top_k                                                               */
/* ------------------------------------------------------------------ */

dy_status dy_emit_top_k(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *t = dy_cg_in_type(ctx, 0);
  if (is_empty(t))
    return DY_OK;
  around v;
  dy_top_k_attrs ta = dy_top_k_attrs_get(ctx->op);
  around_axis(ctx, t, norm_axis(ta.axis, t->rank), &v);
  long long k = (long long)ta.k;
  bool largest = ta.largest != 0;
  const char *before;
  if (t->dtype == DY_F32)
    before = largest ? "(a) != (a) || (b) != (b) ? ((a) != (a) && (b) != (b) ? (ia) < (ib) "
                       ": (a) != (a)) : (a) != (b) ? (a) > (b) : (ia) < (ib)"
                     : "(a) != (a) || (b) != (b) ? ((a) != (a) && (b) != (b) ? (ia) < (ib) "
                       ": (b) != (b)) : (a) != (b) ? (a) < (b) : (ia) < (ib)";
  else
    before = largest ? "(a) != (b) ? (a) > (b) : (ia) < (ib)"
                     : "(a) != (b) ? (a) < (b) : (ia) < (ib)";
  L("/* the %lld %s along the axis, best first (ties: the lower index%s) */", k,
    largest ? "largest" : "smallest", t->dtype == DY_F32 ? "; NaN above any number" : "");
  dy_buf_printf(ctx->body, "#define DY_TOPK_BEFORE(a, ia, b, ib) (%s)\n", before);
  FOR("for (int64_t o = 0; o < %s; o++)", v.so);
  FOR("for (int64_t j = 0; j < %s; j++) {", v.si);
  L("const %s *x = %s + o * %s * %s + j;", dy_ctype(t->dtype), IN(0), v.sn, v.si);
  L("int64_t prev = -1;");
  FOR("for (int64_t q = 0; q < %lld; q++) {", k);
  L("int64_t best = -1;");
  FOR("for (int64_t i = 0; i < %s; i++) {", v.sn);
  L("if (prev >= 0 && !DY_TOPK_BEFORE(x[prev * %s], prev, x[i * %s], i))", v.si, v.si);
  L("  continue;");
  L("if (best < 0 || DY_TOPK_BEFORE(x[i * %s], i, x[best * %s], best))", v.si, v.si);
  L("  best = i;");
  END();
  L("%s[(o * %lld + q) * %s + j] = best;", OUT(0), k, v.si);
  L("prev = best;");
  END();
  END();
  END();
  dy_buf_printf(ctx->body, "#undef DY_TOPK_BEFORE\n");
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* det                                                                 */
/* ------------------------------------------------------------------ */

/* p = the row at or below c with the largest |a[r][c]| (kernels_extra.c's
 * pivot_row, inline), for the n x n double matrix a */
static void emit_pivot_row(dy_cg_ctx *ctx, long long n) {
  L("int64_t p = c;");
  L("for (int64_t r = c + 1; r < %lld; r++)", n);
  L("  if ((a[r * %lld + c] < 0.0 ? -a[r * %lld + c] : a[r * %lld + c]) >", n, n, n);
  L("      (a[p * %lld + c] < 0.0 ? -a[p * %lld + c] : a[p * %lld + c]))", n, n, n);
  L("    p = r;");
}

dy_status dy_emit_det(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *t = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  long long n = (long long)t->shape[t->rank - 1];
  char sc[128];
  L("/* LU with partial pivoting, in double */");
  FOR("for (int64_t m = 0; m < %s; m++) {", ext(ctx, dy_ext_range(o, 0, o->rank), sc, sizeof sc));
  L("const float *x = %s + m * %lld;", IN(0), n * n);
  L("double a[%lld];", n * n);
  FOR("for (int64_t i = 0; i < %lld; i++)", n * n);
  L("a[i] = x[i];");
  END();
  L("double det = 1.0;");
  FOR("for (int64_t c = 0; c < %lld; c++) {", n);
  emit_pivot_row(ctx, n);
  L("if (a[p * %lld + c] == 0.0) {", n);
  L("  det = 0.0;");
  L("  break;");
  L("}");
  L("if (p != c) {");
  ctx->indent++;
  FOR("for (int64_t j = 0; j < %lld; j++) {", n);
  L("double v = a[c * %lld + j];", n);
  L("a[c * %lld + j] = a[p * %lld + j];", n, n);
  L("a[p * %lld + j] = v;", n);
  END();
  L("det = -det;");
  ctx->indent--;
  L("}");
  L("det *= a[c * %lld + c];", n);
  L("for (int64_t r = c + 1; r < %lld; r++) {", n);
  L("  double f = a[r * %lld + c] / a[c * %lld + c];", n, n);
  L("  for (int64_t j = c + 1; j < %lld; j++)", n);
  L("    a[r * %lld + j] -= f * a[c * %lld + j];", n, n);
  L("}");
  END();
  L("%s[m] = (float)det;", OUT(0));
  END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* inverse                                                             */
/* ------------------------------------------------------------------ */

dy_status dy_emit_inverse(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *o = dy_cg_out_type(ctx, 0);
  if (is_empty(o))
    return DY_OK;
  long long n = (long long)o->shape[o->rank - 1];
  char sc[128];
  L("/* Gauss-Jordan with partial pivoting, in double */");
  FOR("for (int64_t m = 0; m < %s; m++) {",
      ext(ctx, dy_ext_range(o, 0, o->rank - 2), sc, sizeof sc));
  L("const float *x = %s + m * %lld;", IN(0), n * n);
  L("float *y = %s + m * %lld;", OUT(0), n * n);
  L("double a[%lld], v[%lld];", n * n, n * n);
  FOR("for (int64_t i = 0; i < %lld; i++) {", n * n);
  L("a[i] = x[i];");
  L("v[i] = i / %lld == i %% %lld ? 1.0 : 0.0;", n, n);
  END();
  FOR("for (int64_t c = 0; c < %lld; c++) {", n);
  emit_pivot_row(ctx, n);
  FOR("for (int64_t j = 0; j < %lld; j++) {", n);
  L("double w = a[c * %lld + j];", n);
  L("a[c * %lld + j] = a[p * %lld + j];", n, n);
  L("a[p * %lld + j] = w;", n);
  L("w = v[c * %lld + j];", n);
  L("v[c * %lld + j] = v[p * %lld + j];", n, n);
  L("v[p * %lld + j] = w;", n);
  END();
  L("double d = a[c * %lld + c];", n);
  FOR("for (int64_t j = 0; j < %lld; j++) {", n);
  L("a[c * %lld + j] /= d;", n);
  L("v[c * %lld + j] /= d;", n);
  END();
  FOR("for (int64_t r = 0; r < %lld; r++) {", n);
  L("double f = a[r * %lld + c];", n);
  L("if (r == c || f == 0.0)");
  L("  continue;");
  FOR("for (int64_t j = 0; j < %lld; j++) {", n);
  L("a[r * %lld + j] -= f * a[c * %lld + j];", n, n);
  L("v[r * %lld + j] -= f * v[c * %lld + j];", n, n);
  END();
  END();
  END();
  FOR("for (int64_t i = 0; i < %lld; i++)", n * n);
  L("y[i] = (float)v[i];");
  END();
  END();
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* grid_sample                                                         */
/* ------------------------------------------------------------------ */

/* Statements setting float `dst` to coordinate `src` transformed by the
 * padding mode along an extent of n (kernels_extra.c's gs_pad; zeros and
 * no transform only make it safe to convert). */
static void gs_pad_lines(dy_cg_ctx *ctx, const char *dst, const char *src, long long n,
                         const char *pad, bool ac) {
  if (strcmp(pad, "reflection") == 0) {
    /* reflect into [lo2 / 2, hi2 / 2] */
    double lo2 = ac ? 0 : -1, hi2 = ac ? 2.0 * (double)(n - 1) : 2.0 * (double)n - 1;
    if (lo2 == hi2) {
      L("%s = 0.0f;", dst);
    } else {
      char mn[64], span[64];
      dy_float_literal((float)(lo2 * 0.5), mn, sizeof mn);
      dy_float_literal((float)((hi2 - lo2) * 0.5), span, sizeof span);
      L("{");
      L("  const float a = %s - %s < 0.0f ? %s - %s : %s - %s;", src, mn, mn, src, src, mn);
      L("  const float flips = dy_floorf(a / %s);", span);
      L("  const float extra = a - flips * %s;", span);
      L("  %s = flips - 2.0f * dy_floorf(flips * 0.5f) == 0.0f ? extra + %s : %s - extra + %s;",
        dst, mn, span, mn);
      L("}");
    }
    src = dst;
  }
  if (strcmp(pad, "zeros") != 0)
    L("%s = %s < 0.0f ? 0.0f : %s > %lld.0f ? %lld.0f : %s;", dst, src, src, n - 1, n - 1, src);
  else if (strcmp(dst, src) != 0)
    L("%s = %s;", dst, src);
  L("%s = %s > -1e7f ? (%s < 1e7f ? %s : 1e7f) : -1e7f;", dst, dst, dst, dst);
}

/* grid_sample; or (bwd) grid_sample_grad(dy, grid, x): the output zeroed, then
 * each output's gradient added to the taps the forward read */
static dy_status emit_grid_sample(dy_cg_ctx *ctx, dy_error *err, bool bwd) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, bwd ? 2 : 0), *g = dy_cg_in_type(ctx, 1);
  dy_grid_sample_attrs ga = dy_grid_sample_attrs_get(ctx->op);
  const char *mode = ga.mode;
  const char *pad = ga.padding_mode;
  bool ac = ga.align_corners != 0;
  long long C = x->shape[1], H = x->shape[2], W = x->shape[3], P = g->shape[1] * g->shape[2];
  bool cubic = strcmp(mode, "bicubic") == 0, nearest = strcmp(mode, "nearest") == 0;
  char nb[64];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, x, 0));
  if (bwd) {
    L("/* grid_sample_grad %s, %s padding, align_corners %d: dy added to the taps", mode, pad,
      ac);
    L(" * grid_sample read, times their weights (kernels_extra.c's formulas) */");
    FOR("for (int64_t i = 0; i < %s * %lld; i++)", nb, C * H * W);
    L("%s[i] = 0.0f;", OUT(0));
    END();
    L("#define DY_GS_ADD(yy, xx, v) \\");
    L("  do { \\");
    L("    if ((xx) >= 0 && (xx) < %lld && (yy) >= 0 && (yy) < %lld) \\", W, H);
    L("      x[(yy) * %lld + (xx)] += (v); \\", W);
    L("  } while (0)");
  } else {
    L("/* grid_sample %s, %s padding, align_corners %d: x[n][c] read at the grid's", mode,
      pad, ac);
    L(" * points, out-of-range taps 0 (kernels_extra.c has the same formulas) */");
    L("#define DY_GS_AT(yy, xx) ((xx) >= 0 && (xx) < %lld && (yy) >= 0 && (yy) < %lld ? "
      "x[(yy) * %lld + (xx)] : 0.0f)", W, H, W);
  }
  FOR("for (int64_t n = 0; n < %s; n++)", nb);
  FOR("for (int64_t p = 0; p < %lld; p++) {", P);
  L("const float gx = %s[(n * %lld + p) * 2], gy = %s[(n * %lld + p) * 2 + 1];", IN(1), P, IN(1),
    P);
  if (ac)
    L("const float ux = (gx + 1.0f) * 0.5f * %lld.0f, uy = (gy + 1.0f) * 0.5f * %lld.0f;",
      W - 1, H - 1);
  else
    L("const float ux = ((gx + 1.0f) * %lld.0f - 1.0f) * 0.5f, "
      "uy = ((gy + 1.0f) * %lld.0f - 1.0f) * 0.5f;", W, H);
  L("float ix, iy;");
  gs_pad_lines(ctx, "ix", "ux", W, cubic ? "zeros" : pad, ac);
  gs_pad_lines(ctx, "iy", "uy", H, cubic ? "zeros" : pad, ac);
  if (nearest) {
    L("float rx = dy_floorf(ix + 0.5f), ry = dy_floorf(iy + 0.5f);");
    L("rx = rx - ix == 0.5f ? 2.0f * dy_floorf(rx * 0.5f) : rx;");
    L("ry = ry - iy == 0.5f ? 2.0f * dy_floorf(ry * 0.5f) : ry;");
    L("const int64_t x0 = (int64_t)rx, y0 = (int64_t)ry;");
  } else {
    L("const float fx = dy_floorf(ix), fy = dy_floorf(iy);");
    if (cubic) {
      /* the 4 taps' weights (A = -0.75) and their padded positions */
      L("const float A = -0.75f;");
      L("float wx[4], wy[4];");
      L("int64_t tx[4], ty[4];");
      L("for (int k = 0; k < 4; k++) {");
      L("  const float dx = k == 0 ? ix - fx + 1.0f : k == 1 ? ix - fx : k == 2 ? 1.0f - (ix - fx) : 2.0f - (ix - fx);");
      L("  const float dy = k == 0 ? iy - fy + 1.0f : k == 1 ? iy - fy : k == 2 ? 1.0f - (iy - fy) : 2.0f - (iy - fy);");
      L("  wx[k] = k == 0 || k == 3 ? ((A * dx - 5.0f * A) * dx + 8.0f * A) * dx - 4.0f * A");
      L("                           : ((A + 2.0f) * dx - (A + 3.0f)) * dx * dx + 1.0f;");
      L("  wy[k] = k == 0 || k == 3 ? ((A * dy - 5.0f * A) * dy + 8.0f * A) * dy - 4.0f * A");
      L("                           : ((A + 2.0f) * dy - (A + 3.0f)) * dy * dy + 1.0f;");
      L("  float px = fx - 1.0f + (float)k, py = fy - 1.0f + (float)k;");
      ctx->indent++;
      gs_pad_lines(ctx, "px", "px", W, pad, ac);
      gs_pad_lines(ctx, "py", "py", H, pad, ac);
      ctx->indent--;
      L("  tx[k] = (int64_t)px;");
      L("  ty[k] = (int64_t)py;");
      L("}");
    } else {
      L("const int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;");
      L("const float tx = ix - fx, ty = iy - fy;");
    }
  }
  FOR("for (int64_t ch = 0; ch < %lld; ch++) {", C);
  if (bwd) {
    L("float *x = %s + (n * %lld + ch) * %lld;", OUT(0), C, H * W);
    L("const float d = %s[(n * %lld + ch) * %lld + p];", IN(0), C, P);
    if (nearest) {
      L("DY_GS_ADD(y0, x0, d);");
    } else if (cubic) {
      L("for (int j = 0; j < 4; j++)");
      L("  for (int k = 0; k < 4; k++)");
      L("    DY_GS_ADD(ty[j], tx[k], wy[j] * wx[k] * d);");
    } else {
      L("DY_GS_ADD(y0, x0, (1.0f - tx) * (1.0f - ty) * d);");
      L("DY_GS_ADD(y0, x0 + 1, tx * (1.0f - ty) * d);");
      L("DY_GS_ADD(y0 + 1, x0, (1.0f - tx) * ty * d);");
      L("DY_GS_ADD(y0 + 1, x0 + 1, tx * ty * d);");
    }
    END();
    END();
    END();
    L("#undef DY_GS_ADD");
    return DY_OK;
  }
  L("const float *x = %s + (n * %lld + ch) * %lld;", IN(0), C, H * W);
  if (nearest) {
    L("const float v = DY_GS_AT(y0, x0);");
  } else if (cubic) {
    L("float v = 0.0f;");
    L("for (int j = 0; j < 4; j++) {");
    L("  float row = 0.0f;");
    L("  for (int k = 0; k < 4; k++)");
    L("    row += wx[k] * DY_GS_AT(ty[j], tx[k]);");
    L("  v += wy[j] * row;");
    L("}");
  } else {
    L("const float v = DY_GS_AT(y0, x0) * (1.0f - tx) * (1.0f - ty) +");
    L("                DY_GS_AT(y0, x0 + 1) * tx * (1.0f - ty) +");
    L("                DY_GS_AT(y0 + 1, x0) * (1.0f - tx) * ty +");
    L("                DY_GS_AT(y0 + 1, x0 + 1) * tx * ty;");
  }
  L("%s[(n * %lld + ch) * %lld + p] = v;", OUT(0), C, P);
  END();
  END();
  END();
  L("#undef DY_GS_AT");
  return DY_OK;
}

dy_status dy_emit_grid_sample(dy_cg_ctx *ctx, dy_error *err) {
  return emit_grid_sample(ctx, err, false);
}

dy_status dy_emit_grid_sample_grad(dy_cg_ctx *ctx, dy_error *err) {
  return emit_grid_sample(ctx, err, true);
}

/* ------------------------------------------------------------------ */
/* roi_align                                                           */
/* ------------------------------------------------------------------ */

/* roi_align; or (bwd) roi_align_grad(dy, rois, batch_index, x): the output
 * zeroed, then each output's gradient added to its samples' taps times
 * their weights (avg: over the count; max: to the one weighted tap that
 * won, x read as the forward reads it) */
static dy_status emit_roi_align(dy_cg_ctx *ctx, dy_error *err, bool bwd) {
  const dy_type *x = dy_cg_in_type(ctx, bwd ? 3 : 0), *ro = dy_cg_in_type(ctx, 1);
  long long C = x->shape[1], H = x->shape[2], W = x->shape[3];
  dy_roi_align_attrs ra = dy_roi_align_attrs_get(ctx->op);
  long long oh = ra.output_height;
  long long ow = ra.output_width;
  long long sr = ra.sampling_ratio;
  bool half = ra.half_pixel != 0;
  bool avg = strcmp(ra.mode, "avg") == 0;
  double sd = ra.spatial_scale;
  char scale[64], nr[64], nn[64];
  if (!dy_float_literal((float)sd, scale, sizeof scale))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "spatial_scale");
  snprintf(nr, sizeof nr, "%s", dy_cg_dim(ctx, ro, 0));
  snprintf(nn, sizeof nn, "%s", dy_cg_dim(ctx, x, 0));
  const char *in_x = IN(bwd ? 3 : 0), *bi = IN(2);
  L("/* roi_align%s (%s, onnxruntime's sampling): every batch index first */",
    bwd ? "_grad" : "", avg ? "avg" : "max");
  FOR("for (int64_t r = 0; r < %s; r++)", nr);
  L("if (%s[r] < 0 || %s[r] >= %s)", bi, bi, nn);
  L("  return 1;");
  END();
  if (bwd) {
    FOR("for (int64_t i = 0; i < %s * %lld; i++)", nn, C * H * W);
    L("%s[i] = 0.0f;", OUT(0));
    END();
  }
  FOR("for (int64_t r = 0; r < %s; r++) {", nr);
  L("const float *q = %s + r * 4;", IN(1));
  L("const float sw = q[0] * %s - %s, sh = q[1] * %s - %s;", scale, half ? "0.5f" : "0.0f",
    scale, half ? "0.5f" : "0.0f");
  L("float rw = q[2] * %s - %s - sw, rh = q[3] * %s - %s - sh;", scale,
    half ? "0.5f" : "0.0f", scale, half ? "0.5f" : "0.0f");
  if (!half) {
    L("rw = rw > 1.0f ? rw : 1.0f;");
    L("rh = rh > 1.0f ? rh : 1.0f;");
  }
  L("const float bh = rh / %lld.0f, bw = rw / %lld.0f;", oh, ow);
  if (sr > 0) {
    L("const int64_t gh = %lld, gw = %lld;", sr, sr);
  } else {
    L("const int64_t gh = (int64_t)dy_ceilf(rh / %lld.0f);", oh);
    L("const int64_t gw = (int64_t)dy_ceilf(rw / %lld.0f);", ow);
  }
  if (avg)
    L("const float count = (float)(gh * gw > 1 ? gh * gw : 1);");
  FOR("for (int64_t ch = 0; ch < %lld; ch++) {", C);
  if (!(bwd && avg))
    L("const float *x = %s + (%s[r] * %lld + ch) * %lld;", in_x, bi, C, H * W);
  if (bwd)
    L("float *gx = %s + (%s[r] * %lld + ch) * %lld;", OUT(0), bi, C, H * W);
  FOR("for (int64_t ph = 0; ph < %lld; ph++)", oh);
  FOR("for (int64_t pw = 0; pw < %lld; pw++) {", ow);
  if (bwd)
    L("const float g = %s[((r * %lld + ch) * %lld + ph) * %lld + pw];", IN(0), C, oh, ow);
  if (!(bwd && avg))
    L("float acc = 0.0f;");
  if (!avg)
    L("int first = 1;");
  if (bwd && !avg) {
    L("int64_t win = -1;");
    L("float win_w = 0.0f;");
  }
  L("for (int64_t iy = 0; iy < gh; iy++) {");
  L("  const float yy0 = sh + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;");
  L("  for (int64_t ix = 0; ix < gw; ix++) {");
  L("    const float xx0 = sw + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw;");
  if (!(bwd && avg))
    L("    float t = 0.0f;");
  if (bwd && !avg) {
    L("    int64_t tk = -1;");
    L("    float tw = 0.0f;");
  }
  L("    if (!(yy0 < -1.0f || yy0 > %lld.0f || xx0 < -1.0f || xx0 > %lld.0f)) {", H, W);
  L("      float yy = yy0 <= 0.0f ? 0.0f : yy0, xx = xx0 <= 0.0f ? 0.0f : xx0;");
  L("      int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;");
  L("      if (yl >= %lld) {", H - 1);
  L("        yh = yl = %lld;", H - 1);
  L("        yy = (float)yl;");
  L("      } else {");
  L("        yh = yl + 1;");
  L("      }");
  L("      if (xl >= %lld) {", W - 1);
  L("        xh = xl = %lld;", W - 1);
  L("        xx = (float)xl;");
  L("      } else {");
  L("        xh = xl + 1;");
  L("      }");
  L("      const float ly = yy - (float)yl, lx = xx - (float)xl;");
  L("      const float hy = 1.0f - ly, hx = 1.0f - lx;");
  if (bwd) {
    L("      const int64_t k[4] = {yl * %lld + xl, yl * %lld + xh, yh * %lld + xl, "
      "yh * %lld + xh};", W, W, W, W);
    L("      const float w[4] = {hy * hx, hy * lx, ly * hx, ly * lx};");
    if (avg) {
      L("      for (int j = 0; j < 4; j++)");
      L("        gx[k[j]] += w[j] * g / count;");
    } else {
      L("      t = w[0] * x[k[0]], tk = k[0], tw = w[0];");
      L("      for (int j = 1; j < 4; j++)");
      L("        if (!(t > w[j] * x[k[j]]))");
      L("          t = w[j] * x[k[j]], tk = k[j], tw = w[j];");
    }
  } else {
    L("      const float v1 = hy * hx * x[yl * %lld + xl], v2 = hy * lx * x[yl * %lld + xh];", W,
      W);
    L("      const float v3 = ly * hx * x[yh * %lld + xl], v4 = ly * lx * x[yh * %lld + xh];", W,
      W);
    if (avg) {
      L("      t = v1 + v2 + v3 + v4;");
    } else {
      L("      t = v1 > v2 ? v1 : v2;");
      L("      t = t > v3 ? t : v3;");
      L("      t = t > v4 ? t : v4;");
    }
  }
  L("    }");
  if (avg) {
    if (!bwd)
      L("    acc += t;");
  } else {
    if (bwd) {
      L("    if (first || t > acc) {");
      L("      acc = t;");
      L("      win = tk;");
      L("      win_w = tw;");
      L("    }");
    } else {
      L("    if (first || t > acc)");
      L("      acc = t;");
    }
    L("    first = 0;");
  }
  L("  }");
  L("}");
  if (!bwd)
    L("%s[((r * %lld + ch) * %lld + ph) * %lld + pw] = %s;", OUT(0), C, oh, ow,
      avg ? "acc / count" : "acc");
  else if (!avg)
    L("if (win >= 0)");
  if (bwd && !avg)
    L("  gx[win] += win_w * g;");
  END();
  END();
  END();
  END();
  return DY_OK;
}

dy_status dy_emit_roi_align(dy_cg_ctx *ctx, dy_error *err) {
  return emit_roi_align(ctx, err, false);
}

dy_status dy_emit_roi_align_grad(dy_cg_ctx *ctx, dy_error *err) {
  return emit_roi_align(ctx, err, true);
}

/* ---- the family's entries of the emitter table (dy_cg_table, program/table.c):
 * each op's emitter, and where it has them its kernel's scratch and its
 * operands' role names ---- */

/* the gathers' and scatters' operands */
#define INDEX_ROLES {"x", "index", "updates"}

const dy_cg_op dy_cg_op_sin = {.emit = dy_emit_sin};
const dy_cg_op dy_cg_op_cos = {.emit = dy_emit_cos};
const dy_cg_op dy_cg_op_tan = {.emit = dy_emit_tan};
const dy_cg_op dy_cg_op_asin = {.emit = dy_emit_asin};
const dy_cg_op dy_cg_op_acos = {.emit = dy_emit_acos};
const dy_cg_op dy_cg_op_atan = {.emit = dy_emit_atan};
const dy_cg_op dy_cg_op_mod = {.emit = dy_emit_mod};
const dy_cg_op dy_cg_op_reduce_prod = {.emit = dy_emit_reduce_prod};
const dy_cg_op dy_cg_op_cumsum = {.emit = dy_emit_cumsum};
const dy_cg_op dy_cg_op_gather_elements = {.emit = dy_emit_gather_elements, .roles = INDEX_ROLES};
const dy_cg_op dy_cg_op_scatter_elements = {.emit = dy_emit_scatter_elements, .roles = INDEX_ROLES};
const dy_cg_op dy_cg_op_gather_nd = {.emit = dy_emit_gather_nd, .roles = INDEX_ROLES};
const dy_cg_op dy_cg_op_scatter_nd = {.emit = dy_emit_scatter_nd, .roles = INDEX_ROLES};
const dy_cg_op dy_cg_op_top_k = {.emit = dy_emit_top_k};
const dy_cg_op dy_cg_op_det = {.emit = dy_emit_det};
const dy_cg_op dy_cg_op_inverse = {.emit = dy_emit_inverse};
const dy_cg_op dy_cg_op_grid_sample = {.emit = dy_emit_grid_sample, .roles = {"x", "grid"}};
const dy_cg_op dy_cg_op_grid_sample_grad = {.emit = dy_emit_grid_sample_grad};
const dy_cg_op dy_cg_op_roi_align = {.emit = dy_emit_roi_align,
                                     .roles = {"x", "rois", "batch_index"}};
const dy_cg_op dy_cg_op_roi_align_grad = {.emit = dy_emit_roi_align_grad};
