/* cli_model.c - a model as the subcommands load it (cli.h): through
 * dy_model_load_any, a Paddle model with --params and the --shape options
 * as its feeds' dims; the size options (--max-dim, --dim, --shape) parsed
 * and applied to the loaded Program.
 */
#include <string.h>

#include "cfront.h"
#include "cli.h"

/* --params given for a model that is not a Paddle one: a usage error. */
int dy_cli_paddle_params_only(const char *cmd, const char *model, const char *params) {
  if (params && !dy_paddle_is_model_path(model))
    return dy_cli_usage(cmd, "--params is for a Paddle model (.pdmodel, __model__), not '%s'",
                        model);
  return 0;
}

/* "NAME=N" or "INPUT=d0,d1,..." into o; false on bad text. */
bool dy_cli_parse_dim_option(char kind, const char *a, dy_cli_dim_option *o) {
  const char *eq = strchr(a, '=');
  if (!eq || eq == a || (size_t)(eq - a) >= sizeof o->name)
    return false;
  o->kind = kind;
  memcpy(o->name, a, (size_t)(eq - a));
  o->name[eq - a] = '\0';
  o->n = 0;
  const char *q = eq + 1;
  for (;;) {
    char num[32];
    size_t k = strcspn(q, ",");
    if (k == 0 || k >= sizeof num || o->n == DY_MAX_DIMS)
      return false;
    memcpy(num, q, k);
    num[k] = '\0';
    if (!dy_cli_range(num, 1, DY_MAX_BATCH, &o->v[o->n++]))
      return false;
    if (!q[k])
      break;
    q += k + 1;
  }
  return kind == 's' || o->n == 1;
}

/* MODEL through dy_model_load_any; a Paddle model (.pdmodel, __model__)
 * takes its params from `params` when given, and the --shape options among
 * d[0..n) as its feeds' dims before its ops are imported (a conv needs its
 * plane static; dy_cli_apply_dims pins them again afterwards, a no-op); the
 * batch stays dynamic unless the import needs it (a shape op on it). A C
 * model file (NET.c) is traced as `dy2stc compile NET.c` traces it (seed
 * 0), so run, check, show and export take it too. */
static dy_status load_model(const char *model, const char *params, const dy_cli_dim_option *d,
                            int n, bool params_optional, dy_program **p, dy_error *err) {
  size_t len = strlen(model);
  if (len > 2 && strcmp(model + len - 2, ".c") == 0) {
    dy_cfront_options cf = {.file = model};
    bool shown = false;
    dy_status s = dy_cfront_load(&cf, p, &shown, err);
    if (s && shown) /* the file:line:col block is printed: say only what failed */
      dy_error_set(err, s, "%s: cannot be traced (the error is above)", model);
    return s;
  }
  if (!dy_paddle_is_model_path(model))
    return dy_model_load_any(model, p, err);
  const char *names[32];
  dy_type types[32];
  int k = 0;
  for (int i = 0; i < n && k < 32; i++)
    if (d[i].kind == 's') {
      names[k] = d[i].name;
      types[k] = (dy_type){.rank = d[i].n};
      memcpy(types[k].shape, d[i].v, sizeof(int64_t) * (size_t)d[i].n);
      types[k].shape[0] = -1; /* the batch stays dynamic */
      k++;
    }
  dy_paddle_options o = {.n_feed_types = k, .feed_names = names, .feed_types = types,
                         .params_optional = params_optional};
  dy_status s = dy_paddle_load(model, params, &o, p, err);
  if (s != DY_STATUS_UNSUPPORTED || k == 0)
    return s;
  /* a program computing on its batch size (Paddle's shape op feeding
   * fill_constant, reshape): again with the batch the --shape gives (its
   * error is the one to report: the inputs as the user gave them) */
  for (int i = 0, j = 0; i < n && j < k; i++)
    if (d[i].kind == 's')
      types[j++].shape[0] = d[i].v[0];
  return dy_paddle_load(model, params, &o, p, err);
}

dy_status dy_cli_load_model(const char *model, const char *params, const dy_cli_dim_option *d,
                            int n, dy_program **p, dy_error *err) {
  return load_model(model, params, d, n, false, p, err);
}

dy_status dy_cli_load_model_show(const char *model, const char *params,
                                 const dy_cli_dim_option *d, int n, dy_program **p,
                                 dy_error *err) {
  return load_model(model, params, d, n, true, p, err);
}

/* Pins first (--shape, --dim: the symbols become constants), then bounds
 * (--max-batch, then --max-dim), each through dy_program_bound_sym. */
dy_status dy_cli_apply_dims(dy_program *p, const dy_cli_dim_option *d, int n,
                            int64_t max_batch, dy_error *err) {
  dy_status s = DY_OK;
  for (int i = 0; i < n && !s; i++) {
    if (d[i].kind == 's')
      s = dy_program_pin_input(p, d[i].name, d[i].v, d[i].n, err); /* "--shape: ..." */
    else if (d[i].kind == 'd' && (s = dy_program_pin_sym(p, d[i].name, d[i].v[0], err)))
      return dy_error_prefix(err, "--dim");
  }
  if (s)
    return s;
  if (max_batch > 0 && (s = dy_program_bound_sym(p, "batch", max_batch, err)))
    return dy_error_prefix(err, "--max-batch");
  for (int i = 0; i < n && !s; i++)
    if (d[i].kind == 'm' && (s = dy_program_bound_sym(p, d[i].name, d[i].v[0], err)))
      return dy_error_prefix(err, "--max-dim");
  return s;
}
