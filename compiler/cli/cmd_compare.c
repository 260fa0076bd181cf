/* cmd_compare.c - `dy2stc compare`: two .npy tensors side by side with
 * their difference; exit 1 when they differ beyond the tolerance.
 *
 *   dy2stc compare A.npy B.npy [--rtol R] [--atol A] [--limit N]
 */
#include <math.h>
#include <string.h>

#include "cli.h"

static const char compare_help[] =
    "usage: dy2stc compare A.npy B.npy [--rtol R] [--atol A] [--limit N]\n"
    "Print two tensors side by side with their difference; exit 1 when any\n"
    "element differs by more than atol + rtol*|B| (defaults 1e-5, 1e-6).\n";

int dy_cli_compare(int argc, char **argv) {
  const char *fa = NULL, *fb = NULL;
  double rtol = 1e-5, atol = 1e-6;
  int64_t limit = 10;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(compare_help, stdout);
      return 0;
    } else if (strcmp(a, "--rtol") == 0 && has) {
      if (!dy_cli_double(argv[++i], &rtol))
        return dy_cli_usage("compare", "bad --rtol '%s'", argv[i]);
    } else if (strcmp(a, "--atol") == 0 && has) {
      if (!dy_cli_double(argv[++i], &atol))
        return dy_cli_usage("compare", "bad --atol '%s'", argv[i]);
    } else if (strcmp(a, "--limit") == 0 && has) {
      if (!dy_cli_positive(argv[++i], &limit))
        return dy_cli_usage("compare", "bad --limit '%s'", argv[i]);
    } else if (a[0] == '-') {
      return dy_cli_usage("compare", "unknown or incomplete option '%s'", a);
    } else if (!fa) {
      fa = a;
    } else if (!fb) {
      fb = a;
    } else {
      return dy_cli_usage("compare", "unexpected argument '%s'", a);
    }
  }
  if (!fa || !fb)
    return dy_cli_usage("compare", "%s", "needs two .npy files");
  dy_error err = {0};
  dy_tensor *a = NULL, *b = NULL;
  dy_cli_diff_stats d;
  dy_status s = dy_npy_read(fa, &a, &err);
  if (!s)
    s = dy_npy_read(fb, &b, &err);
  if (!s)
    s = dy_cli_diff_tensors(a, b, rtol, atol, &d, &err);
  if (!s) {
    char ty[128];
    printf("%-6s %16s %16s %12s    (%s)\n", "index", fa, fb, "abs diff",
           dy_type_str(&a->type, ty, sizeof ty));
    int64_t n = dy_tensor_numel(a);
    for (int64_t i = 0; i < n && i < limit; i++) {
      double x = a->type.dtype == DY_F32 ? ((float *)a->data)[i] : 0;
      double y = a->type.dtype == DY_F32 ? ((float *)b->data)[i] : 0;
      printf("%-6lld %16.8g %16.8g %12.3g\n", (long long)i, x, y, fabs(x - y));
    }
    if (n > limit)
      printf("... %lld more\n", (long long)(n - limit));
    printf("max abs diff %.3g, max rel diff %.3g over %lld values: %s\n", d.max_abs,
           d.max_rel, (long long)n, d.n_bad ? "MISMATCH" : "match");
  }
  dy_tensor_free(a);
  dy_tensor_free(b);
  if (s)
    return dy_cli_fail(&err);
  return d.n_bad ? 1 : 0;
}
