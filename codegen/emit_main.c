/* emit_main.c - main.c: a hosted command-line driver around NAME_run.
 *
 * The driver is the same for every model: it learns the inputs' and
 * outputs' names, dtypes and shapes from the NAME_inputs / NAME_outputs
 * tables and the NAME_* macros of NAME.h, and calls NAME_run_v. So it is
 * one template, the C file rt/dy_main.c, in which dy_model stands for the
 * model name, DY_MODEL for its upper case and DY_TPL_VERSION for the dy2stc
 * version; the template's own text documents what the program does (usage,
 * .npy and raw input, output file names, --bench, exit status).
 */
#include <string.h>

#include "codegen_internal.h"
#include "dy_codegen.h"
#include "templates.h"

dy_status dy_codegen_main_c(const dy_program *p, const dy_codegen_options *opt,
                            dy_buf *out, dy_error *err) {
  (void)p;
  char upper[256];
  size_t n = strlen(opt->name);
  if (n >= sizeof upper)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "model name '%s' is too long", opt->name);
  for (size_t i = 0; i <= n; i++) {
    char c = opt->name[i];
    upper[i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
  }
  const dy_tpl_sub subs[] = {
      {"dy_model", opt->name},
      {"DY_MODEL", upper},
      {"DY_TPL_VERSION", DY_VERSION_STRING},
  };
  dy_tpl_put(out, dy_tpl_main, 0, -1, subs, (int)(sizeof subs / sizeof *subs));
  return DY_OK;
}
