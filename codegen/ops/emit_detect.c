/* emit_detect.c - floor 2: the emitter of nms (ir/ops_extra.def), the
 * detection heads' non-max suppression, a size known only at run time
 * (DY_OPF_SETS_SIZE).
 *
 * The kernel is runtime/kernels/kernels_extra.c's dy_kernel_nms word for
 * word (the same selection order, the same f32 IoU test with a < b ? a : b
 * for min and max: NAME.c has no libm), so both paths keep the same boxes;
 * change one, change the other. The IoU test is a static function before
 * the kernel (k<id>_suppress), its format and threshold written in. The
 * boxes kept in the current class are in scratch (min(max_per_class, N)
 * int64 indices), so a count above the symbol's bound is still counted to
 * the end (rows past the bound are not written) and reported as the
 * executor reports it: the kernel returns 1 with the count in *count.
 */
#include <stdio.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* min(max_per_class, N) of the op's scores [B, C, N] (N at its bound). */
static int64_t per_class(const dy_program *p, const dy_op *op) {
  const dy_type *t = &p->vars[op->inputs[1]]->type;
  int64_t n = t->shape[2] >= 0 ? t->shape[2] : dy_program_dim_bound(p, t->shape[2]);
  int64_t k = dy_nms_attrs_get(op).max_per_class;
  return k < n ? k : n;
}

static int64_t nms_scratch(const dy_program *p, const dy_op *op, int threads) {
  (void)threads;
  int64_t k = per_class(p, op);
  return (k > 0 ? k : 1) * (int64_t)sizeof(int64_t);
}

/* The IoU test before the kernel: is the IoU of boxes a and b above the
 * threshold? (dy_kernel_nms's nms_suppress with its arguments fixed) */
static void put_suppress(dy_cg_ctx *ctx, const dy_nms_attrs *a) {
  dy_buf *b = ctx->before;
  char thr[48];
  dy_float_literal(a->iou_threshold, thr, sizeof thr);
  dy_buf_printf(b, "/* op %d: nms's test: the IoU of boxes a and b (%s) above %s */\n",
                ctx->op->id, a->center_point_box ? "xc yc w h" : "y1 x1 y2 x2", thr);
  dy_buf_printf(b, "static int k%d_suppress(const float *a, const float *b) {\n", ctx->op->id);
  if (a->center_point_box)
    dy_buf_puts(b,
                "  const float ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2;\n"
                "  const float ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;\n"
                "  const float bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2;\n"
                "  const float by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;\n");
  else /* either corner order */
    dy_buf_puts(b,
        "  const float ax0 = a[1] < a[3] ? a[1] : a[3], ax1 = a[1] > a[3] ? a[1] : a[3];\n"
        "  const float ay0 = a[0] < a[2] ? a[0] : a[2], ay1 = a[0] > a[2] ? a[0] : a[2];\n"
        "  const float bx0 = b[1] < b[3] ? b[1] : b[3], bx1 = b[1] > b[3] ? b[1] : b[3];\n"
        "  const float by0 = b[0] < b[2] ? b[0] : b[2], by1 = b[0] > b[2] ? b[0] : b[2];\n");
  dy_buf_printf(b,
                "  const float ix0 = ax0 > bx0 ? ax0 : bx0, ix1 = ax1 < bx1 ? ax1 : bx1;\n"
                "  const float iy0 = ay0 > by0 ? ay0 : by0, iy1 = ay1 < by1 ? ay1 : by1;\n"
                "  if (ix1 <= ix0 || iy1 <= iy0)\n    return 0;\n"
                "  const float inter = (ix1 - ix0) * (iy1 - iy0);\n"
                "  const float area_a = (ax1 - ax0) * (ay1 - ay0);\n"
                "  const float area_b = (bx1 - bx0) * (by1 - by0);\n"
                "  const float uni = area_a + area_b - inter;\n"
                "  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0)\n    return 0;\n"
                "  return inter / uni > %s;\n}\n\n",
                thr);
}

dy_status dy_emit_nms(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_nms_attrs a = dy_nms_attrs_get(op);
  const dy_type *sc = dy_cg_in_type(ctx, 1);
  if (sc->shape[1] < 0 || sc->shape[2] < 0)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "codegen: nms: the classes and boxes of scores must be static");
  int sym = dy_op_size_sym(op, NULL);
  int64_t bound = dy_program_sym_bound(ctx->p, sym), per = per_class(ctx->p, op);
  long long nc = (long long)sc->shape[1], n = (long long)sc->shape[2];
  char nb[128];
  snprintf(nb, sizeof nb, "%s", dy_cg_dim(ctx, sc, 0));
  put_suppress(ctx, &a);
  L("int64_t *restrict kept = (int64_t *)(void *)scratch; /* this class's boxes */");
  L("int64_t rows = 0;");
  FOR("for (int64_t b = 0; b < %s; b++)", nb);
  FOR("for (int64_t c = 0; c < %lld; c++) {", nc);
  L("const float *sc = %s + (b * %lld + c) * %lld, *bx = %s + b * %lld;", IN(1), nc, n, IN(0),
    4 * n);
  L("int64_t n_kept = 0, last = -1;");
  FOR("for (int64_t t = 0; t < %lld && n_kept < %lld; t++) {", n, (long long)per);
  L("/* the best box below the last one taken (score, then lower index) */");
  L("int64_t best = -1;");
  FOR("for (int64_t i = 0; i < %lld; i++) {", n);
  L("const float v = sc[i];");
  char st[48];
  dy_float_literal(a.score_threshold, st, sizeof st);
  if (a.has_score_threshold)
    L("if (v != v || !(v > %s))", st);
  else
    L("if (v != v)");
  L("  continue;");
  L("if ((last < 0 || v < sc[last] || (v == sc[last] && i > last)) &&");
  L("    (best < 0 || v > sc[best]))");
  L("  best = i;");
  END();
  L("if (best < 0)");
  L("  break;");
  L("last = best;");
  L("int keep = 1;");
  FOR("for (int64_t r = 0; r < n_kept && keep; r++)");
  L("keep = !k%d_suppress(bx + best * 4, bx + kept[r] * 4);", op->id);
  END();
  L("if (!keep)");
  L("  continue;");
  L("kept[n_kept++] = best;");
  L("if (rows < %lld) {", (long long)bound);
  L("  %s[rows * 3] = b;", OUT(0));
  L("  %s[rows * 3 + 1] = c;", OUT(0));
  L("  %s[rows * 3 + 2] = best;", OUT(0));
  L("}");
  L("rows++;");
  END();
  END();
  END();
  L("*count = rows;");
  L("if (rows > %lld) /* above the bound of size symbol %s (--max-dim %s=N) */", (long long)bound,
    dy_sym_name(sym), dy_sym_name(sym));
  L("  return 1;");
  return DY_OK;
}

const dy_cg_op dy_cg_op_nms = {.emit = dy_emit_nms, .scratch = nms_scratch,
                               .roles = {"boxes", "scores"}};
