/* cmd_params.c - `dy2stc params`: a model with its persistable vars taken
 * from DIR/<name>.npy (a compiled trainer's output), written as
 * OUT.dymodel + OUT.dyparams.
 *
 *   dy2stc params MODEL --from DIR -o OUT
 */
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char params_help[] =
    "usage: dy2stc params MODEL --from DIR -o OUT\n"
    "Write MODEL with the persistable vars found in DIR as OUT.dymodel +\n"
    "OUT.dyparams: var NAME takes DIR/<NAME>.npy (characters outside\n"
    "[A-Za-z0-9._-] become '_') when that file exists; its dtype and shape must\n"
    "be the var's, and an f32 file must hold no NaN. This is how a compiled\n"
    "trainer's output (dy2stc compile --train --emit exe; it writes its state as\n"
    "DIR/<name>.npy) becomes a model.\n";

int dy_cli_params(int argc, char **argv) {
  const char *model = NULL, *dir = NULL, *out = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(params_help, stdout);
      return 0;
    } else if (strcmp(a, "--from") == 0 && has) {
      dir = argv[++i];
    } else if (strcmp(a, "-o") == 0 && has) {
      out = argv[++i];
    } else if (a[0] == '-') {
      return dy_cli_usage("params", "unknown or incomplete option '%s'", a);
    } else if (!model) {
      model = a;
    } else {
      return dy_cli_usage("params", "unexpected argument '%s'", a);
    }
  }
  if (!model || !dir || !out)
    return dy_cli_usage("params", "%s", "MODEL, --from DIR and -o OUT are required");
  dy_error err = {0};
  dy_program *p = NULL;
  dy_status s = dy_model_load_any(model, &p, &err);
  int n = 0;
  for (int i = 0; !s && i < p->n_vars; i++) {
    dy_var *v = p->vars[i];
    if (!v->persistable)
      continue;
    char base[512], path[4096];
    dy_safe_file_name(v->name, base, sizeof base);
    if (strlen(v->name) >= sizeof base ||
        snprintf(path, sizeof path, "%s/%s.npy", dir, base) >= (int)sizeof path) {
      s = dy_error_set(&err, DY_STATUS_IO, "var %d: the path of its .npy under %.200s is too "
                       "long", i, dir);
      break;
    }
    struct stat st;
    if (stat(path, &st) != 0)
      continue;
    dy_tensor *t = NULL;
    if ((s = dy_npy_read(path, &t, &err)))
      break;
    char want[128], got[128];
    if (!dy_type_equal(&t->type, &v->type))
      s = dy_error_set(&err, DY_STATUS_SHAPE_MISMATCH, "%s is %s, but var '%s' is %s", path,
                       dy_type_str(&t->type, got, sizeof got), v->name,
                       dy_type_str(&v->type, want, sizeof want));
    for (int64_t k = 0; !s && t->type.dtype == DY_F32 && k < dy_tensor_numel(t); k++)
      if (isnan(((const float *)t->data)[k]))
        s = dy_error_set(&err, DY_STATUS_INVALID_ARGUMENT,
                         "%s holds nan (element %lld): not a trained value of '%s'", path,
                         (long long)k, v->name);
    if (!s)
      s = dy_program_set_data(p, i, t->data, t->nbytes, &err);
    dy_tensor_free(t);
    n++;
  }
  if (!s && n == 0)
    s = dy_error_set(&err, DY_STATUS_INVALID_ARGUMENT,
                     "%s holds no <var>.npy of a persistable var of %s", dir, model);
  char stem[4096];
  dy_cli_model_stem(out, stem, sizeof stem);
  if (!s)
    s = dy_model_save(p, stem, &err);
  dy_program_free(p);
  if (s)
    return dy_cli_fail(&err);
  printf("wrote %s.dymodel and %s.dyparams (%d tensors from %s)\n", stem, stem, n, dir);
  return 0;
}
