/* emit_act.c - floor 1: the C expression of a fused activation, shared
 * by the fused emitters, the matmul and conv epilogues and the GEMM
 * micro-kernel's callers. */
#include <stdio.h>
#include <string.h>

#include "floor1_kernels.h"

bool dy_cg_act_expr(const char *act, double alpha, const char *x, char *buf,
                      size_t n) {
  if (!act || !*act)
    snprintf(buf, n, "%s", x);
  else if (strcmp(act, "relu") == 0)
    snprintf(buf, n, "%s > 0.0f ? %s : 0.0f", x, x);
  else if (strcmp(act, "relu6") == 0)
    snprintf(buf, n, "%s < 0.0f ? 0.0f : %s > 6.0f ? 6.0f : %s", x, x, x);
  else if (strcmp(act, "sigmoid") == 0)
    snprintf(buf, n, "1.0f / (1.0f + dy_expf(-%s))", x);
  else if (strcmp(act, "tanh") == 0)
    snprintf(buf, n, "dy_tanhf(%s)", x);
  else if (strcmp(act, "leaky_relu") == 0) {
    char a[64];
    if (!dy_float_literal((float)alpha, a, sizeof a))
      return false;
    snprintf(buf, n, "%s > 0.0f ? %s : %s * %s", x, x, a, x);
  } else if (strcmp(act, "gelu") == 0)
    snprintf(buf, n, "0.5f * %s * (1.0f + dy_erff(%s * 0.707106781f))", x, x);
  else if (strcmp(act, "silu") == 0)
    snprintf(buf, n, "%s / (1.0f + dy_expf(-%s))", x, x);
  else
    return false;
  return true;
}
