/* cmd_convert.c - `dy2stc convert`: a C model file printed with the tensor
 * if/while/for of its DY_TO_STATIC function rewritten into dy_cond /
 * dy_while (dy_cconvert, the C frontend: what `compile NET.c` traces).
 *
 *   dy2stc convert NET.c [--line-directives] [-- CFLAGS...]
 */
#include <stdlib.h>
#include <string.h>

#include "cfront.h"
#include "cli.h"

static const char convert_help[] =
    "usage: dy2stc convert NET.c [--line-directives] [-- CFLAGS...]\n"
    "Print NET.c with the tensor-dependent if/while/for of its DY_TO_STATIC\n"
    "function rewritten into outlined functions and dy_cond / dy_while calls\n"
    "(what `dy2stc compile NET.c` traces). --line-directives keeps the #line\n"
    "directives that map the copied code back to NET.c.\n";

int dy_cli_convert(int argc, char **argv) {
  dy_cfront_options cf = {0};
  bool lines = false;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (dy_cli_is_help(a)) {
      fputs(convert_help, stdout);
      return 0;
    } else if (strcmp(a, "--") == 0) {
      cf.n_cflags = argc - i - 1;
      cf.cflags = argv + i + 1;
      break;
    } else if (strcmp(a, "--line-directives") == 0) {
      lines = true;
    } else if (a[0] == '-') {
      return dy_cli_usage("convert", "unknown option '%s'", a);
    } else if (cf.file) {
      return dy_cli_usage("convert", "unexpected argument '%s'", a);
    } else {
      cf.file = a;
    }
  }
  if (!cf.file)
    return dy_cli_usage("convert", "%s", "no C file given");
  dy_error err = {0};
  dy_cf_paths paths;
  char *out = NULL;
  int n = 0;
  bool shown = false;
  dy_status s = dy_cfront_find_paths(&paths, &err);
  if (!s)
    s = dy_cconvert(&cf, &paths, lines, &out, &n, &shown, &err);
  if (s)
    return shown ? 1 : dy_cli_fail(&err);
  fputs(out, stdout);
  free(out);
  return 0;
}
