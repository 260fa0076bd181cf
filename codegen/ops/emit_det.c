/* emit_det.c - floor 2: the emitters of the detection heads
 * (ir/ops_det.def): multiclass_nms, a count known only at run time
 * (DY_OPF_SETS_SIZE).
 *
 * The code is runtime/kernels/kernels_det.c's word for word (the same heap
 * sort by (score descending, id ascending), Paddle's JaccardOverlap and
 * BBoxArea in float, the same adaptive threshold), so both paths keep the
 * same rows; change one, change the other. Before the kernel: the sort,
 * the area, the overlap and one batch's selection as static functions
 * k<id>_*, the op's attributes written in. The selection's arrays are in
 * scratch. A count above the symbol's bound (--max-dim) is counted to the
 * end, rows past the bound not written, and the kernel returns 1 with the
 * count in *count, as the executor reports it.
 */
#include <stdio.h>

#include "cg_ops.h"
#include "dy_det.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* classes * min(nms_top_k, M) of scores [B, C, M]: the selection's room */
static int64_t sel_room(const dy_op *op, const dy_type *sc) {
  int64_t m = sc->shape[2], k = dy_multiclass_nms_attrs_get(op).nms_top_k;
  return sc->shape[1] * (k > -1 && k < m ? k : m);
}

static int64_t mcnms_scratch(const dy_program *p, const dy_op *op, int threads) {
  (void)threads;
  const dy_type *sc = &p->vars[op->inputs[1]]->type;
  if (sc->shape[1] < 0 || sc->shape[2] < 0)
    return 0; /* the emitter refuses it */
  return (sc->shape[2] + 4 * sel_room(op, sc) + 1) * (int64_t)sizeof(int64_t);
}

/* kernels_det.c's det_sort, det_area and det_iou */
static void put_helpers(dy_cg_ctx *ctx, float norm) {
  dy_buf *b = ctx->before;
  int id = ctx->op->id;
  char nl[48];
  dy_float_literal(norm, nl, sizeof nl);
  dy_buf_printf(b, "/* op %d: multiclass_nms's sort: ids a[0..n) by v[id] descending, then "
                "id ascending (a heap sort) */\n", id);
  dy_buf_printf(b, "static void k%d_sort(int64_t *a, int64_t n, const float *v) {\n", id);
  dy_buf_puts(b,
              "#define LATER(x, y) (v[x] < v[y] || (v[x] == v[y] && (x) > (y)))\n"
              "  int64_t start = n / 2 - 1, end = n;\n"
              "  for (;;) {\n"
              "    int64_t root;\n"
              "    if (start >= 0) {\n"
              "      root = start--;\n"
              "    } else {\n"
              "      if (--end <= 0)\n        break;\n"
              "      int64_t t = a[0];\n"
              "      a[0] = a[end], a[end] = t, root = 0;\n"
              "    }\n"
              "    for (int64_t ch; (ch = 2 * root + 1) < end; root = ch) {\n"
              "      if (ch + 1 < end && LATER(a[ch + 1], a[ch]))\n        ch++;\n"
              "      if (!LATER(a[ch], a[root]))\n        break;\n"
              "      int64_t t = a[root];\n"
              "      a[root] = a[ch], a[ch] = t;\n"
              "    }\n"
              "  }\n"
              "#undef LATER\n}\n\n");
  dy_buf_printf(b, "/* op %d: Paddle's BBoxArea (0 for an inverted box) */\n", id);
  dy_buf_printf(b, "static float k%d_area(const float *b) {\n"
                "  if (b[2] < b[0] || b[3] < b[1])\n    return 0;\n"
                "  const float w = b[2] - b[0], h = b[3] - b[1];\n"
                "  return %s;\n}\n\n", id,
                norm == 0 ? "w * h" : "(w + 1) * (h + 1)");
  dy_buf_printf(b, "/* op %d: Paddle's JaccardOverlap of boxes a and b (xmin ymin xmax ymax) "
                "*/\n", id);
  dy_buf_printf(b, "static float k%d_iou(const float *a, const float *b) {\n"
                "  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1])\n"
                "    return 0;\n"
                "  const float ix0 = a[0] < b[0] ? b[0] : a[0], iy0 = a[1] < b[1] ? b[1] : a[1];\n"
                "  const float ix1 = b[2] < a[2] ? b[2] : a[2], iy1 = b[3] < a[3] ? b[3] : a[3];\n"
                "  const float inter = (ix1 - ix0 + %s) * (iy1 - iy0 + %s);\n"
                "  return inter / (k%d_area(a) + k%d_area(b) - inter);\n}\n\n",
                id, nl, nl, id, id);
}

/* kernels_det.c's nms_batch, its attributes written in */
static void put_batch(dy_cg_ctx *ctx, const dy_multiclass_nms_attrs *a, long long nc,
                      long long m) {
  dy_buf *b = ctx->before;
  int id = ctx->op->id;
  char thr[48], eta[48], nt[48];
  dy_float_literal((float)a->score_threshold, thr, sizeof thr);
  dy_float_literal((float)a->nms_eta, eta, sizeof eta);
  dy_float_literal((float)a->nms_threshold, nt, sizeof nt);
  dy_buf_printf(b, "/* op %d: multiclass_nms of one batch: the kept (class, box) pairs into "
                "cls[], box[] (class by class, in the order kept); returns their count */\n",
                id);
  dy_buf_printf(b, "static int64_t k%d_batch(const float *sc, const float *bx, int64_t *cand,\n"
                "                          int64_t *cls, int64_t *box, int64_t *order, "
                "float *sv) {\n", id);
  dy_buf_printf(b, "  int64_t n_sel = 0;\n"
                "  for (int64_t c = 0; c < %lld; c++) {\n", nc);
  if (a->background_label >= 0 && a->background_label < nc)
    dy_buf_printf(b, "    if (c == %lld)\n      continue;\n", (long long)a->background_label);
  dy_buf_printf(b, "    const float *s = sc + c * %lld;\n"
                "    int64_t n = 0;\n"
                "    for (int64_t i = 0; i < %lld; i++)\n"
                "      if (s[i] > %s)\n        cand[n++] = i;\n"
                "    k%d_sort(cand, n, s);\n", m, m, thr, id);
  if (a->nms_top_k > -1)
    dy_buf_printf(b, "    if (%lld < n)\n      n = %lld;\n", (long long)a->nms_top_k,
                  (long long)a->nms_top_k);
  dy_buf_printf(b, "    float adapt = %s;\n"
                "    int64_t first = n_sel;\n"
                "    for (int64_t t = 0; t < n; t++) {\n"
                "      int64_t i = cand[t];\n"
                "      int keep = 1;\n"
                "      for (int64_t r = first; r < n_sel && keep; r++)\n"
                "        keep = k%d_iou(bx + i * 4, bx + box[r] * 4) <= adapt;\n"
                "      if (!keep)\n        continue;\n"
                "      cls[n_sel] = c, box[n_sel] = i, sv[n_sel] = s[i], n_sel++;\n", nt, id);
  if (a->nms_eta < 1)
    dy_buf_printf(b, "      if (adapt > 0.5)\n        adapt *= %s;\n", eta);
  dy_buf_puts(b, "    }\n  }\n");
  if (a->keep_top_k < 0) {
    dy_buf_puts(b, "  (void)order;\n  return n_sel;\n}\n\n");
    return;
  }
  long long k = (long long)a->keep_top_k;
  dy_buf_printf(b, "  if (n_sel <= %lld)\n    return n_sel;\n"
                "  /* the %lld best stay (score, then label and kept order: the id) */\n"
                "  for (int64_t k = 0; k < n_sel; k++)\n    order[k] = k;\n"
                "  k%d_sort(order, n_sel, sv);\n"
                "  for (int64_t k = %lld; k < n_sel; k++)\n    cls[order[k]] = -1;\n"
                "  int64_t n = 0;\n"
                "  for (int64_t k = 0; k < n_sel; k++)\n"
                "    if (cls[k] >= 0)\n      cls[n] = cls[k], box[n] = box[k], n++;\n"
                "  return n;\n}\n\n", k, k, id, k);
}

dy_status dy_emit_multiclass_nms(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_multiclass_nms_attrs a = dy_multiclass_nms_attrs_get(op);
  const dy_type *sc = dy_cg_in_type(ctx, 1);
  if (sc->shape[1] < 0 || sc->shape[2] < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "codegen: multiclass_nms: the classes and boxes of scores must be static");
  int sym = dy_op_size_sym(op, NULL);
  long long bound = (long long)dy_program_sym_bound(ctx->p, sym);
  long long nc = (long long)sc->shape[1], m = (long long)sc->shape[2];
  long long sel = (long long)sel_room(op, sc);
  char nb[128];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, sc, 0));
  put_helpers(ctx, a.normalized ? 0.0f : 1.0f);
  put_batch(ctx, &a, nc, m);
  L("int64_t *restrict ids = (int64_t *)(void *)scratch;");
  L("int64_t *cls = ids + %lld, *bi = cls + %lld, *order = bi + %lld;", m, sel, sel);
  L("float *sv = (float *)(void *)(order + %lld);", sel);
  L("int64_t rows = 0;");
  FOR("for (int64_t b = 0; b < %s; b++) {", nb);
  L("const float *sc = %s + b * %lld, *bx = %s + b * %lld;", IN(1), nc * m, IN(0), 4 * m);
  L("const int64_t n = k%d_batch(sc, bx, ids, cls, bi, order, sv);", op->id);
  FOR("for (int64_t k = 0; k < n; k++, rows++) {");
  L("if (rows >= %lld) /* past the bound: counted, not written */", bound);
  L("  continue;");
  L("float *row = %s + rows * 6;", OUT(0));
  L("const float *src = bx + bi[k] * 4;");
  L("row[0] = (float)cls[k], row[1] = sc[cls[k] * %lld + bi[k]];", m);
  L("row[2] = src[0], row[3] = src[1], row[4] = src[2], row[5] = src[3];");
  L("%s[rows] = (int32_t)(b * %lld + bi[k]);", OUT(1), m);
  END();
  L("%s[b] = (int32_t)n;", OUT(2));
  END();
  if (a.empty_row) {
    L("if (rows == 0) { /* Paddle's multiclass_nms: [[-1]] */");
    L("  for (int k = 0; k < 6; k++)");
    L("    %s[k] = -1;", OUT(0));
    L("  %s[0] = -1, rows = 1;", OUT(1));
    L("}");
  }
  L("*count = rows;");
  L("if (rows > %lld) /* above the bound of size symbol %s (--max-dim %s=N) */", bound,
    dy_sym_name(sym), dy_sym_name(sym));
  L("  return 1;");
  return DY_OK;
}

const dy_cg_op dy_cg_op_multiclass_nms = {.emit = dy_emit_multiclass_nms,
                                          .scratch = mcnms_scratch,
                                          .roles = {"bboxes", "scores"}};
