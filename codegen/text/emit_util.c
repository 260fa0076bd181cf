/* emit_util.c - floor 0: the emitter context's helpers every floor above
 * uses: the operands' types and parameter names (dy_cg_in_type,
 * dy_cg_in: the names the kernel assembler passes in, else in<i> /
 * out<i>), dims and sizes as C text (dy_cg_dim, sizes as B^p * k:
 * dy_ext), index expressions, C types, type errors naming the op, nests of
 * loops over extents, and the n-ary broadcast loop every elementwise op
 * uses. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cg_text.h"

/* ------------------------------------------------------------------ */
/* Emission helpers declared in dy_codegen.h                           */
/* ------------------------------------------------------------------ */

/* The rotating buffer behind dy_cg_dim / dy_cg_extent. Thread-local so
 * that two threads may generate code at once. */
enum { RING = 16, RING_LEN = 128 };
static _Thread_local char ring[RING][RING_LEN];
static _Thread_local int ring_next;

static char *ring_slot(void) {
  char *s = ring[ring_next];
  ring_next = (ring_next + 1) % RING;
  return s;
}

const char *dy_cg_sym_cname(int sym, char *buf, size_t n) {
  if (sym == 0)
    snprintf(buf, n, "batch");
  else
    snprintf(buf, n, "dim_%s", dy_sym_name(sym));
  return buf;
}

const char *dy_cg_dim_expr(int64_t d, char *buf, size_t n) {
  dy_dim_expr e;
  size_t k = 0;
  buf[0] = '\0';
  if (d >= 0 || !dy_dim_expr_of(d, &e)) {
    snprintf(buf, n, "%lld", (long long)d);
    return buf;
  }
  bool paren = e.n_terms > 1 || e.c != 0;
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, __VA_ARGS__))
  if (paren)
    PUT("(");
  for (int i = 0; i < e.n_terms; i++) {
    char nm[DY_SYM_NAME_MAX + 8];
    if (i)
      PUT(" + ");
    for (int j = 0; j < e.t[i].n; j++)
      PUT("%s%s", j ? "*" : "", dy_cg_sym_cname(e.t[i].sym[j], nm, sizeof nm));
    if (e.t[i].coef != 1)
      PUT("*%lld", (long long)e.t[i].coef);
  }
  if (e.c)
    PUT(" %c %lld", e.c < 0 ? '-' : '+', (long long)(e.c < 0 ? -e.c : e.c));
  if (paren)
    PUT(")");
#undef PUT
  return buf;
}

/* k * E as C: "30", "batch", "batch*10", "batch*dim_seq*8". */
static const char *ext_text(dy_ext e, char *s, size_t n) {
  if (e.k == 0 || e.p == 0 || e.e >= 0) {
    snprintf(s, n, "%lld", (long long)(e.p == 0 || e.e >= 0 ? e.k : 0));
    return s;
  }
  dy_cg_dim_expr(e.e, s, n);
  if (e.k != 1) {
    size_t m = strlen(s);
    if (m < n)
      snprintf(s + m, n - m, "*%lld", (long long)e.k);
  }
  return s;
}

const char *dy_cg_dim(dy_cg_ctx *ctx, const dy_type *t, int axis) {
  (void)ctx;
  return ext_text(dy_ext_dim(t->shape[axis]), ring_slot(), RING_LEN);
}

const char *dy_cg_extent(dy_cg_ctx *ctx, const dy_type *t, int from,
                           int to) {
  (void)ctx;
  return ext_text(dy_ext_range(t, from, to), ring_slot(), RING_LEN);
}

const dy_type *dy_cg_in_type(dy_cg_ctx *ctx, int i) {
  return &ctx->p->vars[ctx->op->inputs[i]]->type;
}

const dy_type *dy_cg_out_type(dy_cg_ctx *ctx, int i) {
  return &ctx->p->vars[ctx->op->outputs[i]]->type;
}

/* The parameters' names without the driver's: in0, in1, ..., out0, ... */
#define DY_TEN(p, d) p #d "0", p #d "1", p #d "2", p #d "3", p #d "4", \
                     p #d "5", p #d "6", p #d "7", p #d "8", p #d "9"
static const char *const generic_in[] = {
    "in0", "in1", "in2", "in3", "in4", "in5", "in6", "in7", "in8", "in9",
    DY_TEN("in", 1), DY_TEN("in", 2), DY_TEN("in", 3), DY_TEN("in", 4),
    DY_TEN("in", 5), DY_TEN("in", 6)};
static const char *const generic_out[] = {"out0", "out1", "out2", "out3", "out4",
                                          "out5", "out6", "out7", "out8", "out9"};
#undef DY_TEN

/* (An operand the op does not have keeps its generic name: a kernel
 * builder may name a residual the op lacks in a struct it always writes.) */
const char *dy_cg_in(const dy_cg_ctx *ctx, int i) {
  if (ctx->param && i >= 0 && i < ctx->op->n_inputs)
    return ctx->param[i];
  return i >= 0 && i < (int)(sizeof generic_in / sizeof *generic_in) ? generic_in[i] : "in_";
}

const char *dy_cg_out(const dy_cg_ctx *ctx, int i) {
  if (ctx->param && i >= 0 && i < ctx->op->n_outputs)
    return ctx->param[ctx->op->n_inputs + i];
  return i >= 0 && i < (int)(sizeof generic_out / sizeof *generic_out) ? generic_out[i] : "out_";
}


#define OPNAME(ctx) dy_op_name((ctx)->op->kind)
#define L(...) dy_cg_line(ctx, __VA_ARGS__)

typedef long long ll;

/* ---- sizes: B^p * k ---- */

/* A monomial's coefficient moves into k, so that k * E has one form. */
static dy_ext ext_norm(dy_ext a) {
  dy_dim_expr x;
  if (a.e >= 0 || a.p == 0) {
    a.e = 1;
    a.p = 0;
    return a;
  }
  if (dy_dim_expr_of(a.e, &x) && x.n_terms == 1 && x.c == 0 && x.t[0].coef > 1) {
    a.k *= x.t[0].coef;
    x.t[0].coef = 1;
    if (!dy_dim_from_expr(&x, &a.e))
      a.e = DY_DIM_NONE;
  }
  return a;
}

dy_ext dy_ext_one(void) { return (dy_ext){1, 0, 1}; }
dy_ext dy_ext_dim(int64_t d) {
  return d < 0 ? ext_norm((dy_ext){1, 1, d}) : (dy_ext){d, 0, 1};
}
dy_ext dy_ext_mul(dy_ext a, dy_ext b) {
  dy_ext r = {a.k * b.k, a.p + b.p, 1};
  if (a.p && b.p) {
    if (!dy_dim_mul(a.e, b.e, &r.e))
      r.e = DY_DIM_NONE; /* not expressible: inference refused such types */
  } else {
    r.e = a.p ? a.e : b.p ? b.e : 1;
  }
  return ext_norm(r);
}
bool dy_ext_eq(dy_ext a, dy_ext b) {
  return a.k == b.k && ((a.p == 0 && b.p == 0) || (a.p && b.p && a.e == b.e) || a.k == 0);
}
bool dy_ext_is_one(dy_ext a) { return a.k == 1 && a.p == 0; }

dy_ext dy_ext_range(const dy_type *t, int from, int to) {
  dy_ext e = dy_ext_one();
  for (int i = from; i < to; i++)
    e = dy_ext_mul(e, dy_ext_dim(t->shape[i]));
  return e;
}

/* Copy the expression of e into buf (the ring buffer is short-lived). */
const char *dy_ext_str(dy_cg_ctx *ctx, dy_ext e, char *buf, size_t n) {
  (void)ctx;
  return ext_text(e, buf, n);
}

void dy_idx_cat(dy_idxbuf *b, const char *t) {
  size_t m = strlen(t);
  if (b->n + m >= sizeof b->s)
    m = sizeof b->s - 1 - b->n;
  memcpy(b->s + b->n, t, m);
  b->n += m;
  b->s[b->n] = '\0';
}

void dy_idx_add(dy_cg_ctx *ctx, dy_idxbuf *b, const char *var, dy_ext stride) {
  if (b->n)
    dy_idx_cat(b, " + ");
  dy_idx_cat(b, var);
  if (!dy_ext_is_one(stride)) {
    char s[RING_LEN];
    dy_idx_cat(b, " * ");
    dy_idx_cat(b, dy_ext_str(ctx, stride, s, sizeof s));
  }
}

const char *dy_idx_str(const dy_idxbuf *b) { return b->n ? b->s : "0"; }

/* "x + idx" or "x" */
void dy_ptr_plus(dy_idxbuf *out, const char *base, const dy_idxbuf *idx) {
  out->n = 0;
  out->s[0] = '\0';
  dy_idx_cat(out, base);
  if (idx->n) {
    dy_idx_cat(out, " + ");
    dy_idx_cat(out, idx->s);
  }
}

const char *dy_ctype(dy_dtype t) {
  switch (t) {
  case DY_F32: return "float";
  case DY_I64: return "int64_t";
  case DY_BOOL: return "uint8_t";
  case DY_I8: return "int8_t";
  case DY_U8: return "uint8_t";
  case DY_I32: return "int32_t";
  default: return "void";
  }
}

const char *dy_zero_of(dy_dtype t) { return t == DY_F32 ? "0.0f" : "0"; }

dy_status dy_cg_type_error(dy_cg_ctx *ctx, dy_error *err, dy_status s,
                            const char *what) {
  char a[160] = "", b[160] = "", o[160] = "";
  if (ctx->op->n_inputs > 0)
    dy_type_str(dy_cg_in_type(ctx, 0), a, sizeof a);
  if (ctx->op->n_inputs > 1)
    dy_type_str(dy_cg_in_type(ctx, 1), b, sizeof b);
  if (ctx->op->n_outputs > 0)
    dy_type_str(dy_cg_out_type(ctx, 0), o, sizeof o);
  return dy_error_at(err, ctx->op, s, "codegen: %s: %s (%s%s%s -> %s)",
                     OPNAME(ctx), what, a, b[0] ? ", " : "", b, o);
}

char dy_loop_var[DY_MAX_DIMS][4] = {"i0", "i1", "i2", "i3",
                                        "i4", "i5", "i6", "i7"};
char dy_bvars[DY_MAX_DIMS][4] = {"b0", "b1", "b2", "b3",
                                     "b4", "b5", "b6", "b7"};

/* Open n nested loops "for (int64_t <var[d]> = 0; var < dy_ext[d]; ...)"
 * (dy_cg_for: each raises the indent). */
void dy_cg_open_loops(dy_cg_ctx *ctx, int n, const dy_ext *e, char (*vars)[4]) {
  char s[128];
  for (int d = 0; d < n; d++)
    dy_cg_for(ctx, "for (int64_t %s = 0; %s < %s; %s++)", vars[d], vars[d],
              dy_ext_str(ctx, e[d], s, sizeof s), vars[d]);
}

void dy_cg_close_loops(dy_cg_ctx *ctx, int n) {
  for (int d = 0; d < n; d++)
    dy_cg_end(ctx);
}

/* "<out> = <fmt with the inputs' element expressions>;" (fmt takes up to
 * three %s, one per input in order). */
static void emit_assign(dy_cg_ctx *ctx, const char *fmt, const char *out,
                        char (*e)[4200], bool let) {
  if (let) {
    /* { const float v0 = a[..]; ...; out = fmt; } with fmt over v0..v2 */
    dy_cg_line(ctx, "{");
    for (int x = 0; x < ctx->op->n_inputs && x < 3; x++) {
      char v[4] = {'v', (char)('0' + x), 0};
      if (strstr(fmt, v))
        dy_cg_line(ctx, "  const float %s = %s;", v, e[x]);
    }
    dy_cg_line(ctx, "  %s = %s;", out, fmt);
    dy_cg_line(ctx, "}");
    return;
  }
  char rhs[16384];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  snprintf(rhs, sizeof rhs, fmt, e[0], e[1], e[2]);
#pragma GCC diagnostic pop
  dy_cg_line(ctx, "%s = %s;", out, rhs);
}

/* ------------------------------------------------------------------ */
/* Elementwise n-ary ops: numpy broadcasting                           */
/* ------------------------------------------------------------------ */

/* the n-ary broadcast takes 1 to MAXN inputs (slot n of its tables: the output) */
enum { MAXN = 3 };

/* The index of operand x (0..n-1; slot n is the output) over the loop
 * variables of the first n_loops groups, into idx[0..n]. A group's stride is
 * the product of the later groups' extents, skipping the groups the operand
 * broadcasts over (gbc[group][x]); the terms go outer loop first. */
static void group_index(dy_cg_ctx *ctx, int n, int ng, int n_loops, const dy_ext *gext,
                        bool (*gbc)[MAXN + 1], dy_idxbuf *idx) {
  dy_ext stride[DY_MAX_DIMS][MAXN + 1], acc[MAXN + 1];
  for (int x = 0; x <= n; x++)
    acc[x] = dy_ext_one();
  for (int gi = ng - 1; gi >= 0; gi--)
    for (int x = 0; x <= n; x++) {
      stride[gi][x] = acc[x];
      if (x == n || !gbc[gi][x])
        acc[x] = dy_ext_mul(acc[x], gext[gi]);
    }
  memset(idx, 0, (size_t)(n + 1) * sizeof *idx);
  for (int gi = 0; gi < n_loops; gi++)
    for (int x = 0; x <= n; x++)
      if (x == n || !gbc[gi][x])
        dy_idx_add(ctx, &idx[x], dy_loop_var[gi], stride[gi][x]);
}

/* A binary f32 op over groups gext (gbc: which input broadcasts over which
 * group): loops over the outer groups, and over the innermost, where the
 * output and every input that does not broadcast are contiguous, DY_VW
 * elements at a time with vop (dy_vadd, ...), then the tail one by one. */
static dy_status broadcast_vector(dy_cg_ctx *ctx, const char *vop, const char *fmt, int ng,
                                  const dy_ext *gext, bool (*gbc)[MAXN + 1]) {
  enum { N = 2 };
  /* base pointers: the outer groups' index terms */
  dy_idxbuf idx[N + 1];
  group_index(ctx, N, ng, ng - 1, gext, gbc, idx);
  *ctx->uses |= DY_USES_SIMD;
  dy_cg_open_loops(ctx, ng - 1, gext, dy_loop_var);
  dy_cg_line(ctx, "{");
  ctx->indent++;
  dy_idxbuf ptr;
  for (int x = 0; x <= N; x++) {
    dy_ptr_plus(&ptr, x == N ? dy_cg_out(ctx, 0) : dy_cg_in(ctx, x), &idx[x]);
    dy_cg_line(ctx, "%s *%c = %s;", x == N ? "float" : "const float", x == N ? 'y' : 'a' + x,
                 ptr.s);
  }
  char ext[128], ld[N][64], el[N][32];
  dy_ext_str(ctx, gext[ng - 1], ext, sizeof ext);
  for (int x = 0; x < N; x++) {
    bool bc = gbc[ng - 1][x];
    snprintf(ld[x], sizeof ld[x], bc ? "dy_vset(%c[0])" : "dy_vload(%c + i)", 'a' + x);
    snprintf(el[x], sizeof el[x], bc ? "%c[0]" : "%c[i]", 'a' + x);
  }
  dy_cg_line(ctx, "int64_t i = 0;");
  dy_cg_line(ctx, "for (; i + DY_VW <= %s; i += DY_VW)", ext);
  dy_cg_line(ctx, "  dy_vstore(y + i, %s(%s, %s));", vop, ld[0], ld[1]);
  /* the tail counted in int: fewer than DY_VW (a 64-bit count there makes
   * gcc imagine 2^62 iterations and warn) */
  dy_cg_line(ctx, "for (int t = (int)(%s - i); t > 0; t--, i++)", ext);
  char rhs[128];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  snprintf(rhs, sizeof rhs, fmt, el[0], el[1]);
#pragma GCC diagnostic pop
  dy_cg_line(ctx, "  y[i] = %s;", rhs);
  ctx->indent--;
  dy_cg_line(ctx, "}");
  dy_cg_close_loops(ctx, ng - 1);
  return DY_OK;
}

static dy_status broadcast(dy_cg_ctx *ctx, dy_error *err, const char *fmt, bool let) {
  int n = ctx->op->n_inputs;
  if (n < 1 || n > MAXN)
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "1 to 3 inputs");
  const dy_type *o = dy_cg_out_type(ctx, 0);
  const dy_type *in[MAXN];
  int r = o->rank;
  for (int x = 0; x < n; x++) {
    in[x] = dy_cg_in_type(ctx, x);
    if (in[x]->rank > r)
      return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                                "an input has a higher rank than the output");
  }

  /* Groups of adjacent output dims whose inputs broadcast alike. */
  dy_ext gext[DY_MAX_DIMS];
  bool gbc[DY_MAX_DIMS][MAXN + 1];
  int ng = 0;
  for (int d = 0; d < r; d++) {
    int64_t od = o->shape[d];
    bool bc[MAXN] = {false};
    int n_bc = 0;
    for (int x = 0; x < n; x++) {
      int xi = d - (r - in[x]->rank);
      int64_t xd = xi >= 0 ? in[x]->shape[xi] : 1;
      if (xd == od)
        bc[x] = false;
      else if (xd == 1)
        bc[x] = true, n_bc++;
      else
        return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                          "inputs do not broadcast to the output");
    }
    if (od == 1)
      continue;
    if (n_bc == n)
      return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                                "output dim larger than every input's");
    bool same = ng > 0;
    for (int x = 0; x < n && same; x++)
      same = gbc[ng - 1][x] == bc[x];
    if (same) {
      gext[ng - 1] = dy_ext_mul(gext[ng - 1], dy_ext_dim(od));
    } else {
      gext[ng] = dy_ext_dim(od);
      for (int x = 0; x < n; x++)
        gbc[ng][x] = bc[x];
      ng++;
    }
  }

  /* f32 + - * /: the innermost group in vector lanes (an operand that
   * broadcasts over it is one value in every lane), the rest one by one */
  const char *vop = NULL;
  static const char *const vops[][2] = {
      {"%s + %s", "dy_vadd"}, {"%s - %s", "dy_vsub"}, {"%s * %s", "dy_vmul"}, {"%s / %s", "dy_vdiv"}};
  bool all_f32 = o->dtype == DY_F32;
  for (int x = 0; x < n; x++)
    all_f32 = all_f32 && in[x]->dtype == DY_F32;
  for (size_t v = 0; v < sizeof vops / sizeof *vops && !let && n == 2 && all_f32 && ng > 0; v++)
    if (strcmp(fmt, vops[v][0]) == 0 && (gext[ng - 1].p > 0 || gext[ng - 1].k >= 16))
      vop = vops[v][1];
  if (vop)
    return broadcast_vector(ctx, vop, fmt, ng, gext, gbc);

  char e[MAXN][4200], o_e[4200];
  const char *in_name[MAXN];
  for (int x = 0; x < MAXN; x++)
    in_name[x] = x < n ? dy_cg_in(ctx, x) : "0";
  if (ng == 0) {
    for (int x = 0; x < MAXN; x++)
      snprintf(e[x], sizeof e[x], "%s[0]", in_name[x]);
    snprintf(o_e, sizeof o_e, "%s[0]", dy_cg_out(ctx, 0));
    emit_assign(ctx, fmt, o_e, e, let);
    return DY_OK;
  }
  if (ng == 1) {
    char s[128];
    dy_cg_for(ctx, "for (int64_t i = 0; i < %s; i++)", dy_ext_str(ctx, gext[0], s, sizeof s));
    for (int x = 0; x < MAXN; x++)
      snprintf(e[x], sizeof e[x], "%s[%s]", in_name[x], x < n && gbc[0][x] ? "0" : "i");
    snprintf(o_e, sizeof o_e, "%s[i]", dy_cg_out(ctx, 0));
    emit_assign(ctx, fmt, o_e, e, let);
    dy_cg_end(ctx);
    return DY_OK;
  }
  /* slot n is the output */
  dy_idxbuf idx[MAXN + 1];
  group_index(ctx, n, ng, ng, gext, gbc, idx);
  dy_cg_open_loops(ctx, ng, gext, dy_loop_var);
  for (int x = 0; x < MAXN; x++)
    snprintf(e[x], sizeof e[x], "%s[%s]", in_name[x], x < n ? dy_idx_str(&idx[x]) : "0");
  snprintf(o_e, sizeof o_e, "%s[%s]", dy_cg_out(ctx, 0), dy_idx_str(&idx[n]));
  emit_assign(ctx, fmt, o_e, e, let);
  dy_cg_close_loops(ctx, ng);
  return DY_OK;
}



dy_status dy_cg_broadcast(dy_cg_ctx *ctx, dy_error *err, const char *fmt) {
  return broadcast(ctx, err, fmt, false);
}

dy_status dy_cg_broadcast_let(dy_cg_ctx *ctx, dy_error *err, const char *expr) {
  return broadcast(ctx, err, expr, true);
}

dy_status dy_cg_flat_copy(dy_cg_ctx *ctx, dy_error *err) {
  const dy_type *a = dy_cg_in_type(ctx, 0), *o = dy_cg_out_type(ctx, 0);
  if (a->dtype != o->dtype)
    return dy_cg_type_error(ctx, err, DY_STATUS_DTYPE_MISMATCH, "dtypes differ");
  dy_ext n = dy_ext_range(o, 0, o->rank);
  if (!dy_ext_eq(dy_ext_range(a, 0, a->rank), n))
    return dy_cg_type_error(ctx, err, DY_STATUS_SHAPE_MISMATCH,
                            "input and output sizes differ");
  if (n.k == 0)
    return DY_OK;
  char sz[128];
  dy_cg_for(ctx, "for (int64_t i = 0; i < %s; i++)", dy_ext_str(ctx, n, sz, sizeof sz));
  L("%s[i] = %s[i];", dy_cg_out(ctx, 0), dy_cg_in(ctx, 0));
  dy_cg_end(ctx);
  return DY_OK;
}

/* "v * m + a" for an index, simplified: "oy", "oy * 2 - 1", "i * 2". */
const char *dy_cg_affine(char *buf, size_t n, const char *v, ll m, ll a) {
  int k = m == 1 ? snprintf(buf, n, "%s", v) : snprintf(buf, n, "%s * %lld", v, m);
  if (a && k >= 0 && (size_t)k < n)
    snprintf(buf + k, n - (size_t)k, " %c %lld", a < 0 ? '-' : '+', a < 0 ? -a : a);
  return buf;
}

/* The sum of two affine terms "t1 + t2" where t2 may vanish. */
const char *dy_cg_sum2(char *buf, size_t n, const char *t1, const char *v, ll m) {
  if (m == 0)
    snprintf(buf, n, "%s", t1);
  else if (m == 1)
    snprintf(buf, n, "%s + %s", t1, v);
  else
    snprintf(buf, n, "%s + %s * %lld", t1, v, m);
  return buf;
}

/* "if (v < 0 || v >= n) continue;" with only the halves that can happen. */
void dy_cg_bounds(dy_cg_ctx *ctx, const char *v, bool lo, bool hi, ll n) {
  if (lo && hi)
    L("if (%s < 0 || %s >= %lld) continue;", v, v, n);
  else if (lo)
    L("if (%s < 0) continue;", v);
  else if (hi)
    L("if (%s >= %lld) continue;", v, n);
}
