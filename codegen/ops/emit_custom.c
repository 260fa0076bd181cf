/* emit_custom.c - floor 2: the emitter of the custom op
 * (ir/ops_custom.def): a call of the user's dy_custom_<name>_run (its
 * signature: runtime/dy_custom.h), declared before the kernel; the
 * compiler builds the user's file into the executable (--custom-op
 * NAME=FILE.c), and a user of --emit c compiles it beside NAME.c. The
 * shapes are static (a dynamic dim: pin it with --shape).
 */
#include <stdio.h>

#include "cg_ops.h"

#define L(...) dy_cg_line(ctx, __VA_ARGS__)

/* "{d0, d1, ...}" of a static type into buf, false for a dynamic dim. */
static bool dims_text(const dy_type *t, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "{");
  for (int d = 0; d < t->rank && k < n; d++) {
    if (t->shape[d] < 0)
      return false;
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
  }
  if (t->rank == 0 && k < n)
    k += (size_t)snprintf(buf + k, n - k, "0"); /* a scalar: one unused entry */
  return k < n && (size_t)snprintf(buf + k, n - k, "}") < n - k;
}

dy_status dy_emit_custom(dy_cg_ctx *ctx, dy_error *err) {
  const dy_op *op = ctx->op;
  dy_custom_attrs a = dy_custom_attrs_get(op);
  for (const char *s = a.name; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "codegen: custom op '%s': its name is not a C identifier", a.name);
  char dims[DY_MAX_DIMS * 24 + 8];
  int n = op->n_inputs;
  dy_buf_printf(ctx->before,
                "/* op %d: custom op %s, the user's kernel (dy2stc compile --custom-op "
                "%s=FILE.c) */\nvoid dy_custom_%s_run(int n_in, const void *const *in, const int "
                "*ranks,\n    const int64_t *const *shapes, void *out, int out_rank, const "
                "int64_t *out_shape);\n\n",
                op->id, a.name, a.name, a.name);
  for (int i = 0; i <= n; i++) {
    const dy_type *t = i < n ? dy_cg_in_type(ctx, i) : dy_cg_out_type(ctx, 0);
    if (!dims_text(t, dims, sizeof dims))
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "codegen: custom op '%s': %s %d has a dynamic dim (pin it: --shape)",
                         a.name, i < n ? "input" : "output", i < n ? i : 0);
    if (i < n)
      L("static const int64_t shape%d[%d] = %s;", i, t->rank ? t->rank : 1, dims);
    else
      L("static const int64_t out_shape[%d] = %s;", t->rank ? t->rank : 1, dims);
  }
  char list[DY_MAX_OP_INPUTS * 16];
  size_t k = 0;
  for (int i = 0; i < n && k < sizeof list; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", dy_cg_in(ctx, i));
  L("const void *const args[%d] = {%s};", n, list);
  k = 0;
  for (int i = 0; i < n && k < sizeof list; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s%d", i ? ", " : "",
                          dy_cg_in_type(ctx, i)->rank);
  L("static const int ranks[%d] = {%s};", n, list);
  k = 0;
  for (int i = 0; i < n && k < sizeof list; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%sshape%d", i ? ", " : "", i);
  L("const int64_t *const shapes[%d] = {%s};", n, list);
  L("dy_custom_%s_run(%d, args, ranks, shapes, %s, %d, out_shape);", a.name, n, dy_cg_out(ctx, 0),
    dy_cg_out_type(ctx, 0)->rank);
  return DY_OK;
}

const dy_cg_op dy_cg_op_custom = {.emit = dy_emit_custom, .role_prefix = "x"};
