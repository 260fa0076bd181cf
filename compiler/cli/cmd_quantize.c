/* cmd_quantize.c - `dy2stc quantize`: post-training int8 quantization of a
 * saved float model with a directory of calibration inputs
 * (dy_quantize_program, compiler/quantize/, does the work).
 *
 *   dy2stc quantize MODEL --calibrate DIR [--per-channel]
 *                   [--method minmax|percentile|mse] [--percentile P]
 *                   [--keep-float first,last,NAME...] -o OUT
 *
 * DIR holds .npy files, each one batch of the model's one input, read in
 * name order. Prints the per-layer report; writes OUT.dymodel +
 * OUT.dyparams (whole or not at all).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char quantize_help[] =
    "usage: dy2stc quantize MODEL --calibrate DIR -o OUT [options]\n"
    "Quantize a float model to int8 (post-training): calibrate the activations'\n"
    "ranges by running MODEL on the static executor over every DIR/*.npy (each\n"
    "one batch of the model's input, in name order), fold batch norms, quantize\n"
    "weights symmetrically to int8 (one scale per output channel with\n"
    "--per-channel, else per tensor), activations asymmetrically to int8 and\n"
    "biases to int32, and write OUT.dymodel + OUT.dyparams. Inputs and outputs\n"
    "stay f32. Prints, per layer, the largest absolute difference and the\n"
    "cosine similarity of its output against the float model's on DIR.\n"
    "  --per-channel          weight scales per output channel\n"
    "  --method M             activation ranges: minmax (default), percentile\n"
    "                         (--percentile P, default 99.99) or mse\n"
    "  --keep-float LIST      layers kept float: first, last (conv / matmul\n"
    "                         layers) or names (the weight's name without\n"
    "                         .weight), comma-separated\n"
    "  --report               also print the time of each phase (read, calibrate, ...)\n"
    "  --quiet, -q            no progress line (one is shown when stderr is a terminal)\n";

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .npy files of dir, sorted; *n of them. NULL (err set) on failure. */
static char **list_npy(const char *dir, int *n, dy_error *err) {
  DIR *d = opendir(dir);
  *n = 0;
  if (!d) {
    dy_error_set(err, DY_STATUS_IO, "--calibrate %s: cannot open the directory", dir);
    return NULL;
  }
  char **names = NULL;
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".npy") != 0)
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      char **grown = realloc(names, sizeof *names * (size_t)cap);
      if (!grown)
        break;
      names = grown;
    }
    size_t need = strlen(dir) + len + 2;
    if (!(names[*n] = malloc(need)))
      break;
    snprintf(names[*n], need, "%s/%s", dir, e->d_name);
    (*n)++;
  }
  closedir(d);
  if (*n == 0) {
    dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "--calibrate %s: no .npy file in it", dir);
    free(names);
    return NULL;
  }
  qsort(names, (size_t)*n, sizeof *names, cmp_str);
  return names;
}

int dy_cli_quantize(int argc, char **argv) {
  const char *model = NULL, *dir = NULL, *out = NULL;
  dy_quant_options o = {.method = DY_CALIB_MINMAX};
  bool quiet = false, report = false;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(quantize_help, stdout);
      return 0;
    } else if (strcmp(a, "--calibrate") == 0 && has) {
      dir = argv[++i];
    } else if (strcmp(a, "-o") == 0 && has) {
      out = argv[++i];
    } else if (strcmp(a, "--per-channel") == 0) {
      o.per_channel = true;
    } else if (strcmp(a, "--method") == 0 && has) {
      const char *m = argv[++i];
      if (strcmp(m, "minmax") == 0)
        o.method = DY_CALIB_MINMAX;
      else if (strcmp(m, "percentile") == 0)
        o.method = DY_CALIB_PERCENTILE;
      else if (strcmp(m, "mse") == 0)
        o.method = DY_CALIB_MSE;
      else
        return dy_cli_usage("quantize", "--method takes minmax, percentile or mse, not '%s'",
                            m);
    } else if (strcmp(a, "--percentile") == 0 && has) {
      if (!dy_cli_double(argv[++i], &o.percentile) || o.percentile < 50 ||
          o.percentile > 100)
        return dy_cli_usage("quantize", "--percentile takes a number from 50 to 100, not '%s'",
                            argv[i]);
    } else if (strcmp(a, "--keep-float") == 0 && has) {
      o.keep_float = argv[++i];
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      quiet = true;
    } else if (strcmp(a, "--report") == 0) {
      report = true;
    } else if (a[0] == '-') {
      return dy_cli_usage("quantize", "unknown or incomplete option '%s'", a);
    } else if (!model) {
      model = a;
    } else {
      return dy_cli_usage("quantize", "unexpected argument '%s'", a);
    }
  }
  if (!model || !dir || !out)
    return dy_cli_usage("quantize", "%s", "MODEL, --calibrate DIR and -o OUT are required");
  dy_error err = {0};
  dy_program *p = NULL, *q = NULL;
  dy_quant_report rep = {0};
  int n = 0;
  char **files = NULL;
  dy_tensor **calib = NULL;
  dy_cli_progress pr;
  dy_cli_progress_init(&pr, "quantize", quiet);
  o.progress = dy_cli_progress_step;
  o.progress_ctx = &pr;
  dy_cli_progress_step(&pr, "import", 0, 0);
  dy_status s = dy_model_load_any(model, &p, &err);
  if (!s && p->n_feeds != 1)
    s = dy_error_set(&err, DY_STATUS_UNSUPPORTED,
                     "%s has %d inputs; quantize calibrates models with one", model,
                     p->n_feeds);
  if (!s && !(files = list_npy(dir, &n, &err)))
    s = err.status;
  if (!s && !(calib = calloc((size_t)n, sizeof *calib)))
    s = dy_error_set(&err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n && !s; i++) {
    dy_cli_progress_step(&pr, "read", i, n);
    if ((s = dy_npy_read(files[i], &calib[i], &err)))
      break;
    const dy_type *want = &p->vars[p->feeds[0]]->type, *got = &calib[i]->type;
    bool ok = got->dtype == want->dtype && got->rank == want->rank;
    for (int d = 0; ok && d < want->rank; d++)
      ok = want->shape[d] < 0 || want->shape[d] == got->shape[d];
    char a[128], b[128];
    if (!ok)
      s = dy_error_set(&err, DY_STATUS_SHAPE_MISMATCH, "%s is %s, but input '%s' is %s",
                       files[i], dy_type_str(got, a, sizeof a), p->vars[p->feeds[0]]->name,
                       dy_type_str(want, b, sizeof b));
  }
  if (!s)
    s = dy_quantize_program(p, calib, n, &o, &q, &rep, &err);
  char stem[4096];
  dy_cli_model_stem(out, stem, sizeof stem);
  if (!s) {
    dy_cli_progress_step(&pr, "save", 0, 0);
    s = dy_model_save(q, stem, &err);
  }
  dy_cli_progress_done(&pr);
  if (!s) {
    dy_quant_report_print(&rep, stdout);
    if (report)
      dy_cli_progress_times(&pr, stdout);
    printf("wrote %s.dymodel and %s.dyparams (%d calibration files, %s, weights per %s)\n",
           stem, stem, n,
           o.method == DY_CALIB_MINMAX ? "minmax" : o.method == DY_CALIB_MSE ? "mse" : "percentile",
           o.per_channel ? "channel" : "tensor");
  }
  for (int i = 0; i < n; i++) {
    if (calib)
      dy_tensor_free(calib[i]);
    free(files[i]);
  }
  free(calib);
  free(files);
  dy_quant_report_free(&rep);
  dy_program_free(p);
  dy_program_free(q);
  return s ? dy_cli_fail(&err) : 0;
}
