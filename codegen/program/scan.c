/* scan.c - floor 3: what the generated NAME.c holds, read back from its
 * text (for --report and the tests): the kernels whose code calls the
 * scalar math functions of emit_mathlib.c (dy_expf, dy_tanhf, dy_erff,
 * ...) itself instead of the vector helpers of emit_simd.c (dy_vexp,
 * dy_vact, dy_act: explicit SIMD). Such a loop is vector code only when
 * the C compiler inlines the function and vectorises the loop, which gcc
 * stops doing inside a large NAME_run (issue 26: SiLU ran at scalar speed
 * in efficientnet_b0); these are the kernels left to the host compiler. */
#include <string.h>

#include "cg_program.h"

static const char *const scalar_math[] = {"dy_expf",   "dy_tanhf", "dy_erff",  "dy_sigmoidf",
                                          "dy_logf",   "dy_log1pf", "dy_expm1f", "dy_powf",
                                          NULL};

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does [s, end) call function f (f as a whole name, then '(')? */
static bool calls(const char *s, const char *end, const char *f) {
  size_t n = strlen(f);
  for (const char *q = strstr(s, f); q && q < end; q = strstr(q + 1, f))
    if ((q == s || !ident_char(q[-1])) && q[n] == '(')
      return true;
  return false;
}

int dy_codegen_scalar_kernels(const char *source, char *names, size_t n) {
  int count = 0;
  size_t used = 0;
  if (names && n)
    names[0] = '\0';
  /* a kernel: "static void kN_..." or "static int kN_..." at the start of
   * a line, to the "}" that starts a line */
  for (const char *s = source ? strstr(source, "\nstatic ") : NULL; s;
       s = strstr(s + 1, "\nstatic ")) {
    const char *name = s + strlen("\nstatic ");
    name += strncmp(name, "void ", 5) == 0 ? 5 : strncmp(name, "int ", 4) == 0 ? 4 : 0;
    if (name[0] != 'k' || name[1] < '0' || name[1] > '9')
      continue;
    const char *end = strstr(name, "\n}");
    if (!end)
      break;
    bool scalar = false;
    for (int i = 0; scalar_math[i] && !scalar; i++)
      scalar = calls(name, end, scalar_math[i]);
    if (!scalar)
      continue;
    size_t len = strcspn(name, "(");
    if (names && used + len + 3 < n) {
      memcpy(names + used, count ? ", " : "", count ? 2 : 0);
      used += count ? 2 : 0;
      memcpy(names + used, name, len);
      used += len;
      names[used] = '\0';
    }
    count++;
    s = end;
  }
  return count;
}
