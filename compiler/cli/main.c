/* main.c - the dy2stc command line: the dispatcher of its subcommands.
 *
 *   dy2stc compile  MODEL|NET.c [-o OUT] [--emit exe|c] ...      (cmd_compile.c)
 *   dy2stc run      MODEL --input NAME=FILE.npy ... [--output-dir DIR]  (cmd_run.c)
 *   dy2stc show     MODEL [--dot]                                (cmd_show.c)
 *   dy2stc check    MODEL --input NAME=FILE.npy ... [--localize] (cmd_check.c)
 *   dy2stc compare  A.npy B.npy [--rtol R] [--atol A] [--limit N] (cmd_compare.c)
 *   dy2stc bench    MODEL [--batch N] [--runs N] [--per-op] ...  (cmd_bench.c)
 *   dy2stc train    MODEL --input ... --labels L --loss L --optimizer O -o OUT
 *                                                                (cmd_train.c)
 *   dy2stc params   MODEL --from DIR -o OUT                      (cmd_params.c)
 *   dy2stc quantize MODEL --calibrate DIR [--per-channel] ... -o OUT
 *                                                                (cmd_quantize.c)
 *   dy2stc export   MODEL --to paddle -o OUT                     (cmd_export.c)
 *   dy2stc convert  NET.c [--line-directives] [-- CFLAGS...]     (cmd_convert.c)
 *
 * Each subcommand's file holds its --help and its full synopsis. MODEL is
 * NAME.dymodel (with NAME.dyparams beside it), an ONNX model or a
 * PaddlePaddle one (compiler/frontends/load.c); compile also takes a C
 * model file, NAME.c, with the markers of runtime/dy_static.h (the C
 * frontend, compiler/cfront/, traces it first). Every subcommand has
 * --help. Any error prints one line "dy2stc: <reason>" (with the model's
 * source line when the error has one) and exits 1; usage errors exit 2.
 * The command line (this folder) is the only part of dy2stc that decides
 * to exit: the subcommands return the status, main returns it.
 */
#include <signal.h>
#include <string.h>

#include "cfront.h"
#include "cli.h"

/* The subcommands, in the order --help lists them. */
static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *what; /* its lines of --help */
} commands[] = {
    {"compile", dy_cli_compile, "build a .dymodel, .onnx or C model file (NET.c) into an\n"
                                "            executable, or C sources (--emit c)"},
    {"run", dy_cli_run, "run a .dymodel on the static executor"},
    {"show", dy_cli_show, "print a .dymodel as text or Graphviz"},
    {"check", dy_cli_check, "compare the static executor with the compiled executable"},
    {"compare", dy_cli_compare, "compare two .npy files"},
    {"bench", dy_cli_bench, "compile a model and time it (median, min, GFLOP/s)"},
    {"train", dy_cli_train, "train a model on .npy data; writes the trained model"},
    {"params", dy_cli_params, "put tensors (.npy, a compiled trainer's output) into a model"},
    {"quantize", dy_cli_quantize, "post-training int8 quantization with a calibration set"},
    {"export", dy_cli_export, "write a model as a PaddlePaddle .pdmodel + .pdiparams"},
    {"convert", dy_cli_convert, "print a C model file with its tensor-dependent if/while/for\n"
                                "            rewritten into dy_cond / dy_while (what compile "
                                "NET.c traces)"},
};
enum { N_COMMANDS = sizeof commands / sizeof *commands };

static void print_help(FILE *f) {
  fputs("usage: dy2stc COMMAND [options]   (dy2stc COMMAND --help for each)\n", f);
  for (int i = 0; i < N_COMMANDS; i++)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].what);
  fputs("  --version print the version\n"
        "MODEL is NAME.dymodel (with NAME.dyparams), an ONNX model, NAME.onnx, or a\n"
        "PaddlePaddle model, NAME.pdmodel (with NAME.pdiparams) or __model__\n", f);
}

/* --version: the version and where `compile NET.c` finds the headers and
 * libraries. */
static int print_version(void) {
  printf("dy2stc %s (.dymodel format %d)\n", DY_VERSION_STRING, DY_DYMODEL_VERSION);
  dy_cf_paths paths;
  dy_error err = {0};
  if (dy_cfront_find_paths(&paths, &err))
    printf("headers: none found (%s)\n", err.msg);
  else
    printf("headers: %s (%s)\n", paths.inc[paths.installed ? 0 : 1],
           paths.installed ? "installed" : "build tree");
  return 0;
}

/* SIGINT/SIGTERM: remove the private temporary directories of a build
 * in progress, then die of the signal as before. */
static void on_signal(int sig) {
  dy_temp_dirs_remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char **argv) {
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  if (argc < 2) {
    print_help(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (dy_cli_is_help(cmd)) {
    print_help(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0)
    return print_version();
  for (int i = 0; i < N_COMMANDS; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return commands[i].run(argc, argv);
  fprintf(stderr, "%s: unknown command '%s' (see '%s --help')\n", dy_cli_prog, cmd,
          dy_cli_prog);
  return 2;
}
