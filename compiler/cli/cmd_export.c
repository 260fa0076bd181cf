/* cmd_export.c - `dy2stc export`: a model written as a PaddlePaddle
 * inference model (dy_paddle_save: OUT.pdmodel + OUT.pdiparams) or as an
 * ONNX model (dy_onnx_save: OUT.onnx, and OUT.onnx.data for external data).
 * The model is written as loaded, before any pass (no fused ops).
 *
 *   dy2stc export MODEL --to paddle -o OUT [--params FILE]
 *   dy2stc export MODEL --to onnx -o OUT.onnx [--external-data on|off|auto]
 */
#include <string.h>

#include "cli.h"

static const char export_help[] =
    "usage: dy2stc export MODEL --to paddle -o OUT [--params FILE]\n"
    "       dy2stc export MODEL --to onnx -o OUT.onnx [--params FILE]\n"
    "                     [--external-data on|off|auto]\n"
    "--to paddle: write MODEL as a PaddlePaddle inference model: OUT.pdmodel\n"
    "(the ProgramDesc) and OUT.pdiparams (the combined params), which dy2stc,\n"
    "and Paddle Inference, read back. Control flow and ops without a Paddle\n"
    "counterpart are an error naming the op.\n"
    "--to onnx: write MODEL as an ONNX model (opset 17): control flow as If\n"
    "and Loop, size symbols as dim_params, int8 ops as QLinearConv or\n"
    "QuantizeLinear/DequantizeLinear around float ops. --external-data puts\n"
    "the weights of 1 KiB or more in OUT.onnx.data (auto: when the weights\n"
    "hold over 1 MiB). Ops without an ONNX counterpart are an error naming\n"
    "the op and its line.\n";

int dy_cli_export(int argc, char **argv) {
  const char *model = NULL, *to = NULL, *out = NULL, *params = NULL, *ext = NULL;
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
    } else if (strcmp(a, "--external-data") == 0 && has) {
      ext = argv[++i];
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
  bool onnx = to && strcmp(to, "onnx") == 0;
  if (!to || (strcmp(to, "paddle") && !onnx))
    return dy_cli_usage("export", "--to names the format: paddle or onnx, not '%s'",
                        to ? to : "");
  dy_onnx_save_options oo = {0};
  if (ext && (!onnx || (strcmp(ext, "on") && strcmp(ext, "off") && strcmp(ext, "auto"))))
    return dy_cli_usage("export", "--external-data is on, off or auto, with --to onnx, not "
                        "'%s'", ext);
  if (ext)
    oo.external_data = strcmp(ext, "on") == 0 ? 1 : strcmp(ext, "off") == 0 ? -1 : 0;
  if (!out)
    return dy_cli_usage("export", "%s", "no -o OUT given");
  int rc = dy_cli_paddle_params_only("export", model, params);
  if (rc)
    return rc;
  dy_error err = {0};
  dy_program *p = NULL;
  dy_status s = dy_cli_load_model(model, params, NULL, 0, &p, &err);
  if (!s)
    s = onnx ? dy_onnx_save(p, out, &oo, &err) : dy_paddle_save(p, out, &err);
  dy_program_free(p);
  if (s)
    return dy_cli_fail(&err);
  if (onnx)
    printf("%s -> %s\n", model, out);
  else
    printf("%s -> %s.pdmodel + %s.pdiparams\n", model, out, out);
  return 0;
}
