/* cmd_export.c - `dy2stc export`: a model written as a PaddlePaddle
 * inference model (dy_paddle_save: OUT.pdmodel + OUT.pdiparams).
 *
 *   dy2stc export MODEL --to paddle -o OUT [--params FILE]
 */
#include <string.h>

#include "cli.h"

static const char export_help[] =
    "usage: dy2stc export MODEL --to paddle -o OUT [--params FILE]\n"
    "Write MODEL as a PaddlePaddle inference model: OUT.pdmodel (the\n"
    "ProgramDesc) and OUT.pdiparams (the combined params), which dy2stc, and\n"
    "Paddle Inference, read back. Control flow and ops without a Paddle\n"
    "counterpart are an error naming the op.\n";

int dy_cli_export(int argc, char **argv) {
  const char *model = NULL, *to = NULL, *out = NULL, *params = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(export_help, stdout);
      return 0;
    } else if (strcmp(a, "--to") == 0 && has) {
      to = argv[++i];
    } else if (strcmp(a, "-o") == 0 && has) {
      out = argv[++i];
    } else if (strcmp(a, "--params") == 0 && has) {
      params = argv[++i];
    } else if (a[0] == '-') {
      return dy_cli_usage("export", "unknown or incomplete option '%s'", a);
    } else if (!model) {
      model = a;
    } else {
      return dy_cli_usage("export", "unexpected argument '%s'", a);
    }
  }
  if (!model)
    return dy_cli_usage("export", "%s", "no model given");
  if (!to || strcmp(to, "paddle"))
    return dy_cli_usage("export", "--to names the format: paddle, not '%s'", to ? to : "");
  if (!out)
    return dy_cli_usage("export", "%s", "no -o OUT given");
  int rc = dy_cli_paddle_params_only("export", model, params);
  if (rc)
    return rc;
  dy_error err = {0};
  dy_program *p = NULL;
  dy_status s = dy_cli_load_model(model, params, NULL, 0, &p, &err);
  if (!s)
    s = dy_paddle_save(p, out, &err);
  dy_program_free(p);
  if (s)
    return dy_cli_fail(&err);
  printf("%s -> %s.pdmodel + %s.pdiparams\n", model, out, out);
  return 0;
}
