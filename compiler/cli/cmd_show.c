/* cmd_show.c - `dy2stc show`: the Program as text or Graphviz, printed
 * even when it does not verify (then the verifier's error follows).
 * A Paddle model without its params file is shown too: its parameters
 * typed, without values (a note says so); the rest of the Program is
 * verified with zeros standing in for them.
 *
 *   dy2stc show MODEL [--dot] [--params FILE]
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char show_help[] =
    "usage: dy2stc show MODEL.dymodel [--dot] [--params FILE] [--shape INPUT=d0,...]\n"
    "Print the Program as text, or as Graphviz with --dot.\n"
    "  --params FILE  a Paddle model's params (default: NAME.pdiparams beside it)\n"
    "  --custom-op NAME=FILE.c  a custom op's shape rule and kernel (as for run)\n"
    "  --shape INPUT=d0,...  a Paddle model's input dims, as compile (ops that\n"
    "                 need static sizes)\n";

int dy_cli_show(int argc, char **argv) {
  const char *model = NULL, *params = NULL;
  bool dot = false;
  dy_cli_dim_option dims[32];
  int n_dims = 0;
  for (int i = 2; i < argc; i++) {
    if (dy_cli_is_help(argv[i])) {
      fputs(show_help, stdout);
      return 0;
    } else if (strcmp(argv[i], "--dot") == 0) {
      dot = true;
    } else if (strcmp(argv[i], "--params") == 0 && i + 1 < argc) {
      params = argv[++i];
    } else if (strcmp(argv[i], "--custom-op") == 0 && i + 1 < argc) {
      dy_error e = {0};
      if (dy_cli_custom_op(argv[++i], &e))
        return dy_cli_fail(&e);
    } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
      if (n_dims == 32 || !dy_cli_parse_dim_option('s', argv[++i], &dims[n_dims++]))
        return dy_cli_usage("show", "bad --shape '%s'", argv[i]);
    } else if (argv[i][0] == '-') {
      return dy_cli_usage("show", "unknown option '%s'", argv[i]);
    } else if (!model) {
      model = argv[i];
    } else {
      return dy_cli_usage("show", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!model)
    return dy_cli_usage("show", "%s", "no model given");
  int rc0 = dy_cli_paddle_params_only("show", model, params);
  if (rc0)
    return rc0;
  dy_error err = {0};
  dy_program *p = NULL;
  /* show a Program even when it does not verify: that is when one looks */
  if (dy_cli_load_model_show(model, params, dims, n_dims, &p, &err))
    return dy_cli_fail(&err);
  if (dot)
    dy_program_print_dot(p, stdout);
  else
    dy_program_print(p, stdout);
  dy_error verr = {0};
  int rc = 0, absent = 0;
  /* parameters without data (no params file): zeros stand in for them, so
   * the verifier checks the rest */
  for (int i = 0; i < p->n_vars && !verr.status; i++) {
    dy_var *v = p->vars[i];
    if (!dy_paddle_is_model_path(model) || !v->persistable || v->data ||
        !dy_type_is_static(&v->type))
      continue;
    size_t nb = (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype);
    void *z = calloc(1, nb ? nb : 1);
    if (!z || dy_program_set_data(p, i, z, nb, &verr))
      dy_error_set(&verr, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    free(z);
    absent++;
  }
  if (absent)
    fprintf(stderr, "dy2stc: note: %s: no params file: its %d parameters are shown by type, "
            "without values (run and compile need them)\n", model, absent);
  if (verr.status || dy_verify(p, &verr)) {
    dy_error_prefix(&verr, "%s does not verify", model);
    rc = dy_cli_fail(&verr);
  }
  dy_program_free(p);
  return rc;
}
