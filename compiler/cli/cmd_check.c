/* cmd_check.c - `dy2stc check`: the static executor against the compiled
 * executable on the same inputs, the largest error of every output; with
 * --localize the first op whose result differs (dy_localize).
 *
 *   dy2stc check MODEL --input NAME=FILE.npy ... [--max-batch N] [--max-dim NAME=N]
 *                [--dim NAME=N] [--shape INPUT=d0,...] [--rtol R] [--atol A]
 *                [--localize] [--cc CC] [--cflags F] [--target T] [--threads N] [-O0..2]
 */
#include <string.h>

#include "cli.h"

static const char check_help[] =
    "usage: dy2stc check MODEL.dymodel --input NAME=FILE.npy ... [options]\n"
    "Run the static executor and the compiled executable on the same inputs\n"
    "and report the max abs / rel error of every output. An output is ok when\n"
    "every element is within atol + rtol * |expected| (judged per element, so\n"
    "the maxima may exceed the tolerances, from different elements).\n"
    "  --max-batch N   bound compiled in (default 64)\n"
    "  --max-dim NAME=N, --dim NAME=N, --shape INPUT=d0,...  size symbols, as compile\n"
    "  --rtol R        relative tolerance (default 1e-5)\n"
    "  --atol A        absolute tolerance (default 1e-6)\n"
    "  --params FILE   a Paddle model's params (default: beside it)\n"
    "  --custom-op NAME=FILE.c  a custom op's kernel and shape rule (as for run)\n"
    "  --cc CC, --cflags FLAGS, --target T, --threads N, -O0/-O1/-O2   as for compile\n"
    "                  (--target aarch64 runs the executable under qemu-aarch64)\n"
    "  --localize      compare every op's result instead of the outputs only, and\n"
    "                  report the first op outside tolerance: its source line, op,\n"
    "                  var and first differing elements (exit 1 when there is one)\n";

/* check --localize: the first op whose compiled result differs. */
static int check_localize(dy_program *p, const dy_compile_options *o, dy_tensor *const *in,
                          double rtol, double atol) {
  dy_error err = {0};
  dy_localize_result r;
  if (dy_localize(p, o, in, rtol, atol, -1, &r, &err))
    return dy_cli_fail(&err);
  if (!r.found) {
    printf("localize: the %d op results all agree with the static executor (rtol %g, atol %g)\n",
           r.n_compared, rtol, atol);
    return 0;
  }
  printf("%s:%d: first divergence: ", r.file[0] ? r.file : "?", r.line);
  if (r.loop_op >= 0)
    printf("while op %d (block %d) trip %lld: ", r.loop_op, r.block, (long long)r.trip);
  else if (r.block > 0)
    printf("block %d: ", r.block);
  printf("op %d (%s)", r.op_id, dy_op_name(r.kind));
  if (r.srcs[0])
    printf(" [%s]", r.srcs);
  printf(", var '%s': %lld of %lld elements outside tolerance (rtol %g, atol %g)\n", r.var,
         (long long)r.n_bad, (long long)r.n_elements, rtol, atol);
  for (int i = 0; i < r.n_shown; i++)
    printf("  [%lld] expected %.9g, got %.9g\n", (long long)r.index[i], r.expected[i],
           r.got[i]);
  printf("(the %d op results before it agree)\n", r.n_compared - 1);
  return 1;
}

/* Run the compiled executable exe (under the target's runner, if any) on
 * the inputs of ia, its outputs going to dir. */
static dy_status run_executable(const dy_program *p, const dy_compile_options *o,
                                char *exe, const dy_cli_inputs *ia, char *dir, dy_error *err) {
  /* argv: [runner] exe --input name=file ... --output-dir dir */
  char *args[2 * DY_MAX_FEEDS + 5];
  char spec[DY_MAX_FEEDS][4200];
  int n = 0;
  const char *tf, *runner = NULL;
  dy_target_flags(o->target, &tf, NULL, &runner, NULL);
  if (runner)
    args[n++] = (char *)runner;
  args[n++] = exe;
  for (int i = 0; i < ia->n; i++) {
    const char *nm = ia->name[i] ? ia->name[i] : p->vars[p->feeds[i]]->name;
    snprintf(spec[i], sizeof spec[i], "%s=%s", nm, ia->file[i]);
    args[n++] = "--input";
    args[n++] = spec[i];
  }
  args[n++] = "--output-dir";
  args[n++] = dir;
  args[n] = NULL;
  return dy_run_command(args, err);
}

int dy_cli_check(int argc, char **argv) {
  const char *model = NULL, *params = NULL;
  dy_cli_inputs ia = {0};
  dy_compile_options o = dy_compile_options_default();
  int64_t max_batch = 0; /* --max-batch (0: the Program's, default 64) */
  double rtol = 1e-5, atol = 1e-6;
  bool localize = false;
  int rc = 0, n_dims = 0;
  dy_cli_dim_option dims[32];
  for (int i = 2; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    int po = dy_cli_pass_option("check", argc, argv, &i, &o.passes);
    if (po == 0)
      po = dy_cli_cc_option("check", argc, argv, &i, &o);
    if (po < 0) {
      dy_cli_free_inputs(&ia);
      return 2;
    }
    if (po > 0)
      continue;
    if (dy_cli_is_help(a)) {
      fputs(check_help, stdout);
      dy_cli_free_inputs(&ia);
      return 0;
    } else if (strcmp(a, "--input") == 0 && has) {
      if (!dy_cli_add_input(&ia, argv[++i]))
        rc = dy_cli_usage("check", "too many inputs (%s)", argv[i]);
    } else if (strcmp(a, "--localize") == 0) {
      localize = true;
    } else if (strcmp(a, "--max-batch") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_BATCH, &max_batch))
        rc = dy_cli_usage("check", "--max-batch needs an integer from 1 to 2147483648, not '%s'",
                          argv[i]);
    } else if ((strcmp(a, "--max-dim") == 0 || strcmp(a, "--dim") == 0 ||
                strcmp(a, "--shape") == 0) && has) {
      char kind = a[2] == 'm' ? 'm' : a[2] == 'd' ? 'd' : 's';
      if (n_dims == 32 || !dy_cli_parse_dim_option(kind, argv[++i], &dims[n_dims++]))
        rc = dy_cli_usage("check", "bad --max-dim, --dim or --shape '%s'", argv[i]);
    } else if (strcmp(a, "--rtol") == 0 && has) {
      if (!dy_cli_double(argv[++i], &rtol))
        rc = dy_cli_usage("check", "bad --rtol '%s'", argv[i]);
    } else if (strcmp(a, "--atol") == 0 && has) {
      if (!dy_cli_double(argv[++i], &atol))
        rc = dy_cli_usage("check", "bad --atol '%s'", argv[i]);
    } else if (strcmp(a, "--threads") == 0 && has) {
      int64_t t;
      if (!dy_cli_positive(argv[++i], &t) || t > 64)
        rc = dy_cli_usage("check", "bad --threads '%s'", argv[i]);
      else
        o.threads = (int)t;
    } else if (strcmp(a, "--params") == 0 && has) {
      params = argv[++i];
    } else if (strcmp(a, "--custom-op") == 0 && has) {
      dy_error e = {0};
      if (dy_cli_custom_op(argv[++i], &e))
        rc = dy_cli_fail(&e);
    } else {
      rc = dy_cli_model_or_input("check", a, &model, &ia);
    }
  }
  o.cflags = dy_cli_custom_sources(o.cflags); /* the custom ops' files */
  if ((rc = dy_cli_args_end("check", rc, model, &ia)))
    return rc;
  if ((rc = dy_cli_paddle_params_only("check", model, params))) {
    dy_cli_free_inputs(&ia);
    return rc;
  }
  dy_error err = {0};
  dy_program *p = NULL;
  dy_tensor *in[DY_MAX_FEEDS] = {0}, *ref[DY_MAX_FEEDS] = {0}, *got[DY_MAX_FEEDS] = {0};
  dy_codegen_output co = {0};
  char dir[4096] = "", exe[4200] = "";
  o.name = "model";
  o.emit_main = true;
  o.source = model;
  bool mismatch = false;
  dy_status s = dy_cli_load_model(model, params, dims, n_dims, &p, &err);
  if (!s)
    s = dy_cli_apply_dims(p, dims, n_dims, max_batch, &err);
  if (!s)
    s = dy_cli_load_inputs(p, &ia, in, &err);
  if (!s && localize) {
    rc = check_localize(p, &o, in, rtol, atol);
    for (int i = 0; i < DY_MAX_FEEDS; i++)
      dy_tensor_free(in[i]);
    dy_program_free(p);
    dy_cli_free_inputs(&ia);
    return rc;
  }
  if (!s)
    s = dy_executor_run(p, in, p->n_feeds, ref, p->n_fetches, &err);
  if (!s)
    s = dy_compile_program(p, &o, &co, NULL, &err);
  if (!s) {
    if (!(s = dy_temp_dir_make("dy2stc-check", dir, sizeof dir, &err)))
      snprintf(exe, sizeof exe, "%s/model", dir);
  }
  if (!s)
    s = dy_build_executable(&co, &o, exe, &err);
  if (!s)
    s = run_executable(p, &o, exe, &ia, dir, &err);
  for (int i = 0; !s && i < p->n_fetches; i++) {
    char path[4400];
    const char *name = p->vars[p->fetches[i]]->name;
    dy_cli_diff_stats d;
    if ((s = dy_output_path(p, i, dir, path, sizeof path, &err)) ||
        (s = dy_npy_read(path, &got[i], &err)) ||
        (s = dy_cli_diff_tensors(got[i], ref[i], rtol, atol, &d, &err))) {
      dy_error_prefix(&err, "output '%s'", name);
      break;
    }
    /* each element is judged by itself: a max over the tolerances can
     * still be ok (a large abs error on a large value, a large rel error
     * on a value near 0) */
    bool over = d.max_abs > atol || d.max_rel > rtol;
    printf("%s: max abs err %.3g, max rel err %.3g: %s%s\n", name, d.max_abs, d.max_rel,
           d.n_bad ? "MISMATCH" : "ok",
           !d.n_bad && over ? " (judged per element: each within atol + rtol * "
                              "|expected|)" : "");
    mismatch |= d.n_bad > 0;
  }
  if (dir[0])
    dy_temp_dir_remove(dir);
  for (int i = 0; i < DY_MAX_FEEDS; i++) {
    dy_tensor_free(in[i]);
    dy_tensor_free(ref[i]);
    dy_tensor_free(got[i]);
  }
  dy_codegen_output_free(&co);
  dy_program_free(p);
  dy_cli_free_inputs(&ia);
  if (s)
    return dy_cli_fail(&err);
  return mismatch ? 1 : 0;
}
