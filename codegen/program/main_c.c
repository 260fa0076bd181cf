/* main_c.c - floor 3: main.c, a hosted command-line driver around NAME_run.
 *
 * The driver is the same for every model: it learns the inputs' and
 * outputs' names, dtypes and shapes from the NAME_inputs / NAME_outputs
 * tables and the NAME_* macros of NAME.h, and calls NAME_run_v. So it is
 * one template, the C file rt/dy_main.c, in which dy_model stands for the
 * model name, DY_MODEL for its upper case and DY_TPL_VERSION for the dy2stc
 * version; the template's own text documents what the program does (usage,
 * .npy and raw input, output file names, --bench, exit status).
 *
 * For a training step (dy_codegen_options.trainer) main.c is the trainer
 * instead: rt/dy_train_main.c's documentation, rt/dy_main.c's "common"
 * section (errors, .npy files, options) and rt/dy_train_main.c's "code".
 */
#include <stdio.h>
#include <string.h>

#include "cg_program.h"
#include "dy_codegen.h"
#include "templates.h"

dy_status dy_codegen_main_c(const dy_program *p, const dy_codegen_options *opt,
                            dy_buf *out, dy_error *err) {
  char upper[300];
  if (strlen(opt->name) >= 250)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "model name '%s' is too long", opt->name);
  cg_macro_prefix(opt->name, upper, sizeof upper);
  if (!opt->trainer && p && dy_program_is_training(p))
    return dy_error_set(err, DY_STATUS_UNSUPPORTED,
                        "the Program updates state in place (a training step: an "
                        "optimizer or batch_norm_stats op), which the inference main.c "
                        "cannot drive; emit C (--emit c) or compile the inference model "
                        "with --train for a trainer");
  if (!opt->trainer) {
    const dy_tpl_sub subs[] = {
        {"dy_model", opt->name},
        {"DY_MODEL", upper},
        {"DY_TPL_VERSION", DY_VERSION_STRING},
    };
    dy_tpl_put(out, dy_tpl_main, 0, -1, subs, (int)(sizeof subs / sizeof *subs));
    return DY_OK;
  }
  /* the trainer: its documentation, dy_main.c's common section, its code */
  const dy_codegen_trainer *t = opt->trainer;
  char lr[64], gamma[64], batch[32], step[32], warm[32];
  if (!(t->lr >= 0 && t->lr <= 1e30) || !(t->lr_gamma > 0 && t->lr_gamma <= 1e30))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "trainer: learning rate %g or schedule factor %g out of range", t->lr,
                        t->lr_gamma);
  snprintf(lr, sizeof lr, "%.17g", t->lr);
  snprintf(gamma, sizeof gamma, "%.17g", t->lr_gamma);
  if (t->batch < 1 || t->batch > dy_program_sym_bound(p, 0))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "trainer: batch %lld is not in 1..%lld (the max batch)",
                        (long long)t->batch, (long long)dy_program_sym_bound(p, 0));
  snprintf(batch, sizeof batch, "%lld", (long long)t->batch);
  snprintf(step, sizeof step, "%lld", (long long)(t->lr_step_size > 0 ? t->lr_step_size : 0));
  snprintf(warm, sizeof warm, "%lld", (long long)(t->lr_warmup >= 0 ? t->lr_warmup : -1));
  const dy_tpl_sub subs[] = {
      {"dy_train_main", "main"},
      {"dy_train_usage", "usage"},
      {"dy_model_step_v", NULL}, /* set below */
      {"dy_model", opt->name},
      {"DY_MODEL", upper},
      {"DY_TPL_VERSION", DY_VERSION_STRING},
      {"DY_TPL_LR_STEP", step},
      {"DY_TPL_LR_GAMMA", gamma},
      {"DY_TPL_LR_WARMUP", warm},
      {"DY_TPL_LR", lr},
      {"DY_TPL_BATCH", batch},
  };
  char run_v[300];
  snprintf(run_v, sizeof run_v, "%s_run_v", opt->name);
  dy_tpl_sub s2[sizeof subs / sizeof *subs];
  memcpy(s2, subs, sizeof subs);
  s2[2].value = run_v;
  int n_subs = (int)(sizeof subs / sizeof *subs);
  int code = dy_tpl_section_line(dy_tpl_train_main_sections, "code");
  int common = dy_tpl_section_line(dy_tpl_main_sections, "common");
  int run = dy_tpl_section_line(dy_tpl_main_sections, "run");
  if (code < 0 || common < 0 || run < 0)
    return dy_error_set(err, DY_STATUS_INTERNAL, "the main.c templates lack their sections");
  dy_tpl_put(out, dy_tpl_train_main, 0, code, s2, n_subs);
  dy_tpl_put(out, dy_tpl_main, common, run, s2, n_subs);
  dy_tpl_put(out, dy_tpl_train_main, code, -1, s2, n_subs);
  return DY_OK;
}
