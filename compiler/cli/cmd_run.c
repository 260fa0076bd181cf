/* cmd_run.c - `dy2stc run`: the model on the static executor, its outputs
 * written as DIR/<output name>.npy.
 *
 *   dy2stc run MODEL --input NAME=FILE.npy ... [--lod NAME=OFFSETS.npy ...]
 *              [--output-dir DIR] [--params FILE] [--custom-op NAME=FILE.c]
 *              [--shape INPUT=d0,...]
 */
#include <string.h>

#include "cli.h"

static const char run_help[] =
    "usage: dy2stc run MODEL.dymodel --input NAME=FILE.npy ... [--output-dir DIR]\n"
    "Run the Program on the static executor (no compilation).\n"
    "  --input NAME=FILE  an input as .npy, or raw little-endian data (any\n"
    "                     other name, e.g. .bin; every -1 dim is the batch,\n"
    "                     inferred from the size), as the compiled executable\n"
    "                     takes it (or FILE alone, in input order)\n"
    "  --lod NAME=FILE    the level-0 offsets (i64 [N+1], .npy) of LoD input\n"
    "                     NAME, whose --input gives the values [T, ...]: the\n"
    "                     input NAME@lod\n"
    "  --params FILE      a Paddle model's params (default: beside it)\n"
    "  --custom-op NAME=FILE.c  the kernel and shape rule of a custom op the\n"
    "                     model uses (dy_custom_NAME_run, dy_custom_NAME_shape:\n"
    "                     README.md, \"Custom ops\")\n"
    "  --shape INPUT=d0,...  an input's dims, as compile (a Paddle model\n"
    "                     whose ops need static sizes)\n"
    "  --output-dir DIR   where DIR/<output name>.npy go (default .); names\n"
    "                     map to file names by turning characters outside\n"
    "                     [A-Za-z0-9._-] into '_'\n";

int dy_cli_run(int argc, char **argv) {
  const char *model = NULL, *dir = ".", *params = NULL;
  dy_cli_inputs ia = {0};
  dy_cli_dim_option dims[32];
  int rc = 0, n_dims = 0;
  for (int i = 2; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(run_help, stdout);
      dy_cli_free_inputs(&ia);
      return 0;
    } else if (strcmp(a, "--input") == 0 && has) {
      if (!dy_cli_add_input(&ia, argv[++i]))
        rc = dy_cli_usage("run", "too many inputs (%s)", argv[i]);
    } else if (strcmp(a, "--lod") == 0 && has) {
      if (!dy_cli_add_lod(&ia, argv[++i]))
        rc = dy_cli_usage("run", "--lod expects NAME=OFFSETS.npy, got '%s'", argv[i]);
    } else if (strcmp(a, "--output-dir") == 0 && has) {
      dir = argv[++i];
    } else if (strcmp(a, "--params") == 0 && has) {
      params = argv[++i];
    } else if (strcmp(a, "--custom-op") == 0 && has) {
      dy_error e = {0};
      if (dy_cli_custom_op(argv[++i], &e))
        rc = dy_cli_fail(&e);
    } else if (strcmp(a, "--shape") == 0 && has) {
      if (n_dims == 32 || !dy_cli_parse_dim_option('s', argv[++i], &dims[n_dims++]))
        rc = dy_cli_usage("run", "bad --shape '%s'", argv[i]);
    } else {
      rc = dy_cli_model_or_input("run", a, &model, &ia);
    }
  }
  if ((rc = dy_cli_args_end("run", rc, model, &ia)))
    return rc;
  if ((rc = dy_cli_paddle_params_only("run", model, params))) {
    dy_cli_free_inputs(&ia);
    return rc;
  }
  dy_error err = {0};
  dy_program *p = NULL;
  dy_tensor *in[DY_MAX_FEEDS] = {0}, *out[DY_MAX_FEEDS] = {0};
  dy_status s = dy_cli_load_model(model, params, dims, n_dims, &p, &err);
  if (!s && n_dims)
    s = dy_cli_apply_dims(p, dims, n_dims, DY_MAX_BATCH, &err);
  if (!s)
    s = dy_cli_load_inputs(p, &ia, in, &err);
  if (!s)
    s = dy_executor_run(p, in, p->n_feeds, out, p->n_fetches, &err);
  if (!s)
    s = dy_cli_ensure_dir(dir, &err);
  for (int i = 0; !s && i < p->n_fetches; i++) {
    char path[4096], ty[128];
    if ((s = dy_output_path(p, i, dir, path, sizeof path, &err)))
      break;
    if (!(s = dy_npy_write(path, out[i], &err)))
      printf("%s: %s -> %s\n", p->vars[p->fetches[i]]->name,
             dy_type_str(&out[i]->type, ty, sizeof ty), path);
  }
  for (int i = 0; i < DY_MAX_FEEDS; i++) {
    dy_tensor_free(in[i]);
    dy_tensor_free(out[i]);
  }
  dy_program_free(p);
  dy_cli_free_inputs(&ia);
  return s ? dy_cli_fail(&err) : 0;
}
