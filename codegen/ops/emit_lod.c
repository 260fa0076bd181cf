/* emit_lod.c - floor 2: the emitters of the LoD sequence ops
 * (ir/ops_lod.def): sequence_pool.
 *
 * Each kernel is runtime/kernels/kernels_lod.c's word for word (the same
 * sums in the same order), so both paths give the same answer; change one,
 * change the other. The offsets are an input like any other (NAME@lod of
 * the generated API); the kernel checks them first and returns 1 on bad
 * ones (offsets[0] != 0, a decrease, offsets[N] != T), which the
 * generated run reports as a failed op.
 */
#include <stdio.h>

#include "cg_ops.h"
#include "dy_lod.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)
#define IN(i) dy_cg_in(ctx, i)
#define OUT(i) dy_cg_out(ctx, i)

/* The check of offsets `off` (n + 1 entries) against t rows. */
static void check_offsets(dy_cg_ctx *ctx, const char *off, const char *n, const char *t) {
  L("/* the LoD offsets first: bad ones fail the model */");
  L("if (%s[0] != 0 || %s[%s] != %s)", off, off, n, t);
  L("  return 1;");
  FOR("for (int64_t q = 0; q < %s; q++)", n);
  L("if (%s[q + 1] < %s[q])", off, off);
  L("  return 1;");
  END();
}

dy_status dy_emit_sequence_pool(dy_cg_ctx *ctx, dy_error *err) {
  (void)err;
  const dy_type *x = dy_cg_in_type(ctx, 0), *y = dy_cg_out_type(ctx, 0);
  dy_sequence_pool_attrs a = dy_sequence_pool_attrs_get(ctx->op);
  dy_seq_pool_kind k = dy_seq_pool_kind_of(a.pooltype);
  char n[128], t[128], d[128], pad[48];
  snprintf(n, sizeof n, "%s", dy_cg_dim(ctx, y, 0));
  snprintf(t, sizeof t, "%s", dy_cg_dim(ctx, x, 0));
  snprintf(d, sizeof d, "%s", dy_cg_extent(ctx, y, 1, y->rank));
  dy_float_literal(a.pad_value, pad, sizeof pad);
  check_offsets(ctx, IN(1), n, t);
  FOR("for (int64_t q = 0; q < %s; q++) {", n);
  L("const int64_t b = %s[q], e = %s[q + 1];", IN(1), IN(1));
  L("float *yr = %s + q * %s;", OUT(0), d);
  FOR("for (int64_t j = 0; j < %s; j++) {", d);
  L("if (e == b) { /* an empty sequence */");
  L("  yr[j] = %s;", pad);
  L("  continue;");
  L("}");
  if (k == DY_POOL_LAST || k == DY_POOL_FIRST) {
    L("yr[j] = %s[%s * %s + j];", IN(0), k == DY_POOL_LAST ? "(e - 1)" : "b", d);
  } else {
    L("float acc = %s[b * %s + j];", IN(0), d);
    FOR("for (int64_t r = b + 1; r < e; r++) {");
    L("const float v = %s[r * %s + j];", IN(0), d);
    L("%s", k == DY_POOL_MAX ? "acc = v > acc ? v : acc;" : "acc = acc + v;");
    END();
    if (k == DY_POOL_AVERAGE)
      L("acc = acc / (float)(e - b);");
    else if (k == DY_POOL_SQRT)
      L("acc = acc / dy_sqrtf((float)(e - b));");
    L("yr[j] = acc;");
  }
  END();
  END();
  return DY_OK;
}

const dy_cg_op dy_cg_op_sequence_pool = {.emit = dy_emit_sequence_pool,
                                         .roles = {"x", "offsets"}};
