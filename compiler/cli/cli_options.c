/* cli_options.c - the options several subcommands share (cli.h): the
 * pass options (-O, --verify-each, --print-*, --dump-dir, --disable-pass,
 * --winograd) and the C compiler's (--cc, --cflags, --target,
 * --plain-kernels, --no-pack-a).
 */
#include <string.h>

#include "cli.h"

void dy_cli_print_passes(FILE *f) {
  for (int i = 0; i < dy_n_passes; i++)
    fprintf(f, "  %-10s %s\n", dy_passes[i].name, dy_passes[i].what);
}

/* Parse the pass options shared by compile and check; returns 1 if arg i
 * (and maybe i+1) was consumed, 0 if not a pass option, -1 on error. */
int dy_cli_pass_option(const char *cmd, int argc, char **argv, int *i,
                       dy_pass_options *po) {
  const char *a = argv[*i];
  const char *val = NULL;
  if (strcmp(a, "-O0") == 0 || strcmp(a, "-O1") == 0 || strcmp(a, "-O2") == 0) {
    po->opt_level = a[2] - '0';
    return 1;
  }
  if (strcmp(a, "--verify-each") == 0) {
    po->verify_each = 1;
    return 1;
  }
  if (strcmp(a, "--print-after-all") == 0) {
    po->print_after = "all";
    return 1;
  }
  if (strcmp(a, "--print-after-change") == 0) {
    po->print_after_change = true;
    if (!po->print_after)
      po->print_after = "all";
    return 1;
  }
  if (strcmp(a, "--dump-dir") == 0) {
    if (*i + 1 >= argc)
      return dy_cli_usage(cmd, "%s needs a directory", a), -1;
    po->dump_dir = argv[++*i];
    return 1;
  }
  if (strcmp(a, "--winograd") == 0) {
    const char *m = *i + 1 < argc ? argv[++*i] : "";
    if (strcmp(m, "auto") != 0 && strcmp(m, "2") != 0 && strcmp(m, "4") != 0 &&
        strcmp(m, "6") != 0)
      return dy_cli_usage(cmd, "--winograd takes auto, 2, 4 or 6, not '%s'", m), -1;
    po->winograd = *m == 'a' ? 0 : *m - '0';
    return 1;
  }
  if (strcmp(a, "--disable-pass") == 0 || strncmp(a, "--disable-pass=", 15) == 0) {
    const char *list = a[14] == '=' ? a + 15 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!list)
      return dy_cli_usage(cmd, "%s needs pass names", a), -1;
    for (const char *s = list; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)strcspn(s, ","), s);
      if (!dy_pass_find(name)) {
        fprintf(stderr, "%s %s: unknown pass '%s'; the passes are:\n", dy_cli_prog, cmd, name);
        dy_cli_print_passes(stderr);
        return -1;
      }
    }
    po->disable = list;
    return 1;
  }
  const char **slot = NULL;
  if (strncmp(a, "--print-before", 14) == 0) {
    slot = &po->print_before;
    val = a + 14;
  } else if (strncmp(a, "--print-after", 13) == 0) {
    slot = &po->print_after;
    val = a + 13;
  }
  if (!slot)
    return 0;
  if (*val == '=') {
    val++;
  } else if (*val == 0 && *i + 1 < argc) {
    val = argv[++*i];
  } else {
    return dy_cli_usage(cmd, "unknown option '%s'", a), -1;
  }
  if (strcmp(val, "all") != 0 && !dy_pass_find(val)) {
    fprintf(stderr, "%s %s: unknown pass '%s'; the passes are:\n", dy_cli_prog, cmd, val);
    dy_cli_print_passes(stderr);
    return -1;
  }
  *slot = val;
  return 1;
}

/* Parse the C compiler options shared by compile and check (--cc,
 * --cflags, --target, --plain-kernels); returns as pass_option does. */
int dy_cli_cc_option(const char *cmd, int argc, char **argv, int *i,
                     dy_compile_options *o) {
  const char *a = argv[*i];
  if (strcmp(a, "--plain-kernels") == 0) {
    o->plain_kernels = true;
    return 1;
  }
  if (strcmp(a, "--no-pack-a") == 0) {
    o->no_pack_a = true;
    return 1;
  }
  if (*i + 1 >= argc)
    return 0;
  if (strcmp(a, "--cc") == 0) {
    o->cc = argv[++*i];
  } else if (strcmp(a, "--cflags") == 0) {
    o->cflags = dy_cli_custom_sources(argv[++*i]); /* and the --custom-op files */
  } else if (strcmp(a, "--target") == 0) {
    o->target = argv[++*i];
    const char *f;
    if (dy_target_flags(o->target, &f, NULL, NULL, NULL))
      return dy_cli_usage(cmd, "--target takes native, generic, x86-64-v2, x86-64-v3, "
                              "x86-64-v4 or aarch64, not '%s'", o->target), -1;
  } else {
    return 0;
  }
  return 1;
}
