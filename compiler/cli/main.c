/* main.c - the dy2stc command line.
 *
 *   dy2stc compile MODEL [-o OUT] [--emit exe|c] [--name NAME] [--max-batch N]
 *                        [--max-dim NAME=N] [--dim NAME=N] [--shape INPUT=d0,d1,...]
 *                        [--cc CC] [--cflags FLAGS] [--report] [--max-ram B]
 *                        [--max-flash B] [--target T] [--threads N] [--max-iterations N]
 *                        [-O0|-O1|-O2] [--verify-each] [--print-after=P|all]
 *                        [--print-before=P] [--dump-dir DIR]
 *                        [--train --loss L --optimizer O [--lr R] ...]
 *                        [--params P.dyparams] [--seed N] [-- CFLAGS...]
 *   dy2stc run     MODEL --input NAME=FILE.npy ... [--output-dir DIR]
 *   dy2stc show    MODEL [--dot]
 *   dy2stc check   MODEL --input NAME=FILE.npy ... [--max-batch N] [--max-dim NAME=N]
 *                  [--dim NAME=N] [--shape INPUT=d0,...] [--rtol R] [--atol A]
 *                  [--localize]
 *   dy2stc compare A.npy B.npy [--rtol R] [--atol A] [--limit N]
 *   dy2stc params  MODEL --from DIR -o OUT   (a compiled trainer's tensors)
 *   dy2stc bench   MODEL [--batch N] [--runs N] [--threads N] [--per-op]
 *                  (bench.c)
 *   dy2stc train   MODEL --input NAME=FILE.npy ... --labels FILE.npy --loss L
 *                  --optimizer O -o OUT [...]   (train.c)
 *   dy2stc convert NET.c [--line-directives] [-- CFLAGS...]   (cconvert.c)
 *   dy2stc quantize MODEL --calibrate DIR [--per-channel] [--method M]
 *                   [--keep-float LIST] -o OUT   (quantize_cli.c)
 *
 * MODEL is NAME.dymodel (with NAME.dyparams beside it) or an ONNX model
 * (NAME.onnx; see compiler/frontends/load.c); compile also takes a C model
 * file, NAME.c, with the markers of runtime/dy_static.h (cfront.c,
 * cfront_driver.c trace it first). Every subcommand
 * has --help. Any error prints one line "dy2stc: <reason>" (with the
 * model's source line when the error has one) and exits 1; usage errors
 * exit 2. This file is the only place in dy2stc that decides to exit.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfront.h"
#include "cli.h"
#include "dy_compiler.h"

static const char *prog = "dy2stc";

/* Print the error as one line; exit status 1. */
int dy_cli_fail(const dy_error *err) {
  char line[1024];
  dy_error_format(err, line, sizeof line);
  fprintf(stderr, "%s: %s\n", prog, line);
  return 1;
}

/* Print a usage error of subcommand cmd; exit status 2. */
int dy_cli_usage(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "%s %s: ", prog, cmd);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see '%s %s --help')\n", prog, cmd);
  return 2;
}

/* Parse a positive integer option value. */
bool dy_cli_range(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || !*s || *end || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

bool dy_cli_positive(const char *s, int64_t *out) {
  return dy_cli_range(s, 1, INT64_MAX, out);
}

bool dy_cli_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || !*s || *end || !(v >= 0))
    return false;
  *out = v;
  return true;
}

bool dy_cli_is_help(const char *a) {
  return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* ---- shared: inputs given as NAME=FILE or positionally ---- */

bool dy_cli_add_input(dy_cli_inputs *ia, const char *arg) {
  if (ia->n >= DY_MAX_FEEDS)
    return false;
  const char *eq = strchr(arg, '=');
  if (eq) {
    char *name = strndup(arg, (size_t)(eq - arg));
    ia->name[ia->n] = name;
    ia->file[ia->n] = eq + 1;
  } else {
    ia->name[ia->n] = NULL;
    ia->file[ia->n] = arg;
  }
  ia->n++;
  return true;
}

void dy_cli_free_inputs(dy_cli_inputs *ia) {
  for (int i = 0; i < ia->n; i++)
    free((char *)ia->name[i]);
}

dy_status dy_cli_widen_i32(dy_tensor **t, dy_error *err) {
  if (!*t || (*t)->type.dtype != DY_I32)
    return DY_OK;
  dy_tensor *w = dy_tensor_new(DY_I64, (*t)->type.rank, (*t)->type.shape);
  if (!w)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  const int32_t *src = (*t)->data;
  int64_t *dst = w->data;
  for (int64_t i = 0; i < dy_tensor_numel(w); i++)
    dst[i] = src[i];
  dy_tensor_free(*t);
  *t = w;
  return DY_OK;
}

dy_status dy_cli_load_inputs(const dy_program *p, const dy_cli_inputs *ia,
                             dy_tensor **t, dy_error *err) {
  for (int i = 0; i < p->n_feeds; i++)
    t[i] = NULL;
  for (int k = 0; k < ia->n; k++) {
    int slot = k;
    if (ia->name[k]) {
      slot = -1;
      for (int i = 0; i < p->n_feeds; i++)
        if (strcmp(p->vars[p->feeds[i]]->name, ia->name[k]) == 0)
          slot = i;
      if (slot < 0)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "the model has no input named '%s'", ia->name[k]);
    } else if (k >= p->n_feeds) {
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "the model takes %d inputs; '%s' is one too many",
                          p->n_feeds, ia->file[k]);
    }
    if (t[slot])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is given twice", p->vars[p->feeds[slot]]->name);
    dy_status s = dy_npy_read(ia->file[k], &t[slot], err);
    if (!s && p->vars[p->feeds[slot]]->type.dtype == DY_I64)
      s = dy_cli_widen_i32(&t[slot], err);
    if (s)
      return s;
  }
  for (int i = 0; i < p->n_feeds; i++)
    if (!t[i])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "missing input '%s' (--input %s=FILE.npy)",
                          p->vars[p->feeds[i]]->name, p->vars[p->feeds[i]]->name);
  return DY_OK;
}

static dy_status ensure_dir(const char *dir, dy_error *err) {
  struct stat st;
  if (stat(dir, &st) == 0)
    return S_ISDIR(st.st_mode) ? DY_OK
                               : dy_error_set(err, DY_STATUS_IO,
                                              "%s: not a directory", dir);
  if (mkdir(dir, 0777) != 0)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot create: %s", dir,
                        strerror(errno));
  return DY_OK;
}

/* ---- loading ---- */

/* --params given for a model that is not a Paddle one: a usage error. */
static int paddle_params_only(const char *cmd, const char *model, const char *params) {
  if (params && !dy_paddle_is_model_path(model))
    return dy_cli_usage(cmd, "--params is for a Paddle model (.pdmodel, __model__), not '%s'",
                        model);
  return 0;
}

/* ---- compile ---- */

static const char compile_help[] =
    "usage: dy2stc compile MODEL.dymodel [options]\n"
    "       dy2stc compile NET.c [--params P.dyparams] [--seed N] [options] [-- CFLAGS...]\n"
    "Verify and optimise the Program, emit C and build it. A C model file\n"
    "(markers DY_MODEL and DY_TO_STATIC, see dy_static.h) is read with libclang,\n"
    "traced by a generated driver built with $CC and CFLAGS, then compiled.\n"
    "  --params P        (NET.c) the weights, by parameter name (default: the\n"
    "                    constructor's init after dy_seed(N)); (MODEL.pdmodel)\n"
    "                    its params file (default: MODEL.pdiparams beside it)\n"
    "  --seed N          (NET.c) the seed before the constructor (default 0)\n"
    "  -- CFLAGS...      (NET.c) flags for parsing and building the model file\n"
    "  -o OUT            output executable (default: the model's name), or with\n"
    "                    --emit c the stem of OUT.c, OUT.h and OUT_weights.c\n"
    "  --emit exe|c      build an executable (default) or write OUT.c, OUT.h and\n"
    "                    OUT_weights.c only\n"
    "  --name NAME       C symbol prefix (default: from OUT)\n"
    "  --max-batch N     bound on the dynamic batch dim (default 64)\n"
    "  --max-dim NAME=N  bound on size symbol NAME (a named dynamic dim, an ONNX\n"
    "                    dim_param; default: the --max-batch value)\n"
    "  --dim NAME=N      pin size symbol NAME to N (compiled as a static size)\n"
    "  --shape INPUT=d0,d1,...  pin input INPUT's shape (each dim that is a\n"
    "                    symbol pins it); a fully pinned model is a static one\n"
    "  --max-iterations N  trips a while loop may run before NAME_run returns\n"
    "                    NAME_ERR_LOOP (default 1000000; a loop's own bound wins)\n"
    "  --cc CC           C compiler (default: $CC, else cc)\n"
    "  --cflags FLAGS    extra compiler flags\n"
    "  --target T        instruction set, and so the SIMD path of the kernels:\n"
    "                    native (default: this machine), generic, x86-64-v2,\n"
    "                    x86-64-v3 (AVX2+FMA), x86-64-v4 (AVX-512), aarch64\n"
    "  --threads N       split the GEMM and convolution kernels over N threads\n"
    "                    (pthreads; default 1: no thread code at all)\n"
    "  --report          print ops, arena bytes, its lower bound, weight bytes\n"
    "  --max-ram BYTES   fail when the arena would exceed BYTES\n"
    "  --max-flash BYTES fail when the weights would exceed BYTES\n"
    "  -O0, -O1, -O2     optimisation level (default -O2; -O0 runs no pass)\n"
    "  --verify-each     verify the Program after every pass (on in debug builds)\n"
    "  --print-before=P, --print-after=P   print the Program around pass P (or all)\n"
    "  --print-after-all, --print-after-change\n"
    "  --dump-dir DIR    write DIR/NNN_<pass>.ir after every pass\n"
    "  --disable-pass P[,P...]  do not run these passes (to compare)\n"
    "  --winograd M      auto (default: the pass winograd picks F(2x2), F(4x4),\n"
    "                    F(6x6, 3x3) or none per conv by its cost model), or 2, 4,\n"
    "                    6: every 3x3 stride-1 conv with a constant weight (any\n"
    "                    size and channel count) as F(MxM, 3x3), to compare\n"
    "  --plain-kernels   the kernels the faster ones replaced (depthwise\n"
    "                    convolution one tap at a time, max pooling with\n"
    "                    padding as window loops, 6-row GEMM tiles, one conv\n"
    "                    panel at a time), to compare\n"
    "  --no-pack-a       matmuls read their activations (A) in place instead of\n"
    "                    packing them into 12-row micro-panels per cache block\n"
    "                    at run time, to compare\n"
    "  --train           compile one training step instead (the Program of\n"
    "                    dy2stc train: loss, backward, optimizer; parameters and\n"
    "                    optimizer state in the caller's RAM): NAME_train_step;\n"
    "                    with --emit exe the trainer (OUT --help). Its options,\n"
    "                    as dy2stc train's (--batch is also the max batch;\n"
    "                    cross_entropy takes class indices):\n"
    "%s"
    "passes, in pipeline order:\n";

static void print_pass_list(FILE *f) {
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
        fprintf(stderr, "%s %s: unknown pass '%s'; the passes are:\n", prog, cmd, name);
        print_pass_list(stderr);
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
    fprintf(stderr, "%s %s: unknown pass '%s'; the passes are:\n", prog, cmd, val);
    print_pass_list(stderr);
    return -1;
  }
  *slot = val;
  return 1;
}

/* Parse the C compiler options shared by compile and check (--cc,
 * --cflags, --target, --plain-kernels); returns as pass_option does. */
static int cc_option(const char *cmd, int argc, char **argv, int *i,
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
    o->cflags = argv[++*i];
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

static void model_stem(const char *path, char *buf, size_t n) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(buf, n, "%s", base);
  char *dot = strrchr(buf, '.');
  if (dot && (strcmp(dot, ".dymodel") == 0 || strcmp(dot, ".dyparams") == 0 ||
              strcmp(dot, ".onnx") == 0 || strcmp(dot, ".c") == 0))
    *dot = 0;
}

/* The last component of a path ("a/b/net.onnx" -> "net.onnx"). */
static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The command line for the generated files' banner, reproducible: every
 * path is shown by its last component (a NAME=PATH argument keeps NAME=),
 * so the same model compiled from another directory gives the same bytes. */
static void join_args(int argc, char **argv, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "dy2stc");
  for (int i = 1; i < argc && k < n; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    int keep = eq && eq < base_name(a) ? (int)(eq - a + 1) : 0;
    k += (size_t)snprintf(buf + k, n - k, " %.*s%s", keep, a, base_name(a));
  }
}

/* "batch 64" or "batch 8, seq 32": the size bounds the plan is for. */
static void sym_bounds_text(const dy_program *p, int64_t max_batch, char *buf, size_t n) {
  int64_t b[DY_MAX_SYMS];
  uint64_t used = 0;
  dy_program_sym_bounds(p, max_batch, max_batch, b);
  for (int v = 0; v < p->n_vars; v++)
    used |= dy_type_sym_mask(&p->vars[v]->type);
  size_t k = (size_t)snprintf(buf, n, "batch %lld", (long long)max_batch);
  for (int s = 1; s < DY_MAX_SYMS && k < n; s++)
    if (used >> s & 1)
      k += (size_t)snprintf(buf + k, n - k, ", %s %lld", dy_sym_name(s), (long long)b[s]);
}

/* With size symbols other than the batch: the arena as a function of the
 * symbols. Each buffer keeps the offset the plan gave it at the bounds, so
 * at smaller sizes the arena in use is max(offset + bytes) over the
 * buffers; the largest ones, with their sizes as expressions. */
static void print_arena_formula(const dy_program *p, const dy_compile_options *o) {
  uint64_t used = 0;
  for (int v = 0; v < p->n_vars; v++)
    used |= dy_type_sym_mask(&p->vars[v]->type);
  if (!(used >> 1))
    return;
  printf("arena(symbols) = max over its buffers of offset + bytes; the largest:\n");
  int64_t bounds[DY_MAX_SYMS];
  dy_program_sym_bounds(p, o->max_batch, o->max_batch, bounds);
  bool shown[4096] = {0};
  for (int r = 0; r < 5; r++) {
    int best = -1;
    int64_t best_bytes = -1;
    for (int v = 0; v < p->n_vars && v < 4096; v++) {
      const dy_var *x = p->vars[v];
      int64_t n;
      if (shown[v] || x->mem_offset < 0 || x->alias_of >= 0 ||
          !dy_type_numel_eval(&x->type, bounds, &n))
        continue;
      if (n * (int64_t)dy_dtype_size(x->type.dtype) > best_bytes) {
        best = v;
        best_bytes = n * (int64_t)dy_dtype_size(x->type.dtype);
      }
    }
    if (best < 0)
      break;
    shown[best] = true;
    const dy_var *x = p->vars[best];
    int64_t numel, bytes;
    char e[160];
    if (!dy_type_numel_dim(&x->type, &numel) ||
        !dy_dim_mul(numel, (int64_t)dy_dtype_size(x->type.dtype), &bytes))
      continue;
    printf("  %-28s at %10lld: %s bytes (%lld at the bounds)\n", x->name,
           (long long)x->mem_offset, dy_dim_name(bytes, e, sizeof e), (long long)best_bytes);
  }
}

/* --max-dim NAME=N, --dim NAME=N, --shape INPUT=d0,d1,...: kept in
 * command-line order and applied to the loaded Program (apply_dims). */
typedef struct {
  char kind;               /* 'm' max-dim, 'd' dim, 's' shape */
  char name[128];
  int64_t v[DY_MAX_DIMS];  /* N, or the shape's dims */
  int n;
} dim_option;

/* "NAME=N" or "INPUT=d0,d1,..." into o; false on bad text. */
static bool parse_dim_option(char kind, const char *a, dim_option *o) {
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
 * plane static; apply_dims pins them again afterwards, a no-op). */
static dy_status load_model(const char *model, const char *params, const dim_option *d, int n,
                            dy_program **p, dy_error *err) {
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
  dy_paddle_options o = {.n_feed_types = k, .feed_names = names, .feed_types = types};
  return dy_paddle_load(model, params, &o, p, err);
}

/* Pins first (--shape, --dim: the symbols become constants), then bounds
 * (--max-dim; batch's is --max-batch). */
static dy_status apply_dims(dy_program *p, const dim_option *d, int n, dy_compile_options *o,
                            dy_error *err) {
  dy_status s = DY_OK;
  for (int i = 0; i < n && !s; i++) {
    if (d[i].kind == 's')
      s = dy_program_pin_input(p, d[i].name, d[i].v, d[i].n, err);
    else if (d[i].kind == 'd')
      s = dy_program_pin_sym(p, d[i].name, d[i].v[0], err);
  }
  for (int i = 0; i < n && !s; i++) {
    if (d[i].kind != 'm')
      continue;
    int sym = dy_sym_id(d[i].name);
    if (sym == 0) {
      o->max_batch = d[i].v[0];
      continue;
    }
    bool used = false;
    for (int v = 0; v < p->n_vars; v++)
      used |= sym > 0 && (dy_type_sym_mask(&p->vars[v]->type) >> sym & 1);
    if (!used && !dy_program_sym(p, sym))
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "--max-dim: the model has no size symbol '%s'", d[i].name);
    s = dy_program_declare_sym(p, d[i].name, d[i].v[0], err);
  }
  return s;
}

static int cmd_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *emit = "exe", *name = NULL;
  dy_compile_options o = dy_compile_options_default();
  bool report = false, train = false, max_batch_given = false, c_only = false;
  bool c_flags = false; /* --seed or -- CFLAGS: for a C model alone */
  dim_option dims[32];
  int n_dims = 0;
  dy_cli_train_spec ts = {0};
  dy_cfront_options cf = {0};
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (strcmp(a, "--") == 0) {   /* the rest: CFLAGS of a C model */
      cf.cflags = argv + i + 1;
      cf.n_cflags = argc - i - 1;
      argc = i;
      c_only = c_flags = true;
      break;
    }
    int po = dy_cli_pass_option("compile", argc, argv, &i, &o.passes);
    if (po == 0)
      po = cc_option("compile", argc, argv, &i, &o);
    if (po == 0)
      po = dy_cli_train_option("compile", argc, argv, &i, &ts);
    if (po < 0)
      return 2;
    if (po > 0)
      continue;
    if (dy_cli_is_help(a)) {
      printf(compile_help, dy_cli_train_help);
      print_pass_list(stdout);
      return 0;
    } else if (strcmp(a, "--train") == 0) {
      train = true;
    } else if (strcmp(a, "--max-ram") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_ARENA_BYTES, &o.max_ram))
        return dy_cli_usage("compile", "--max-ram needs a byte count from 1 to 2^46 "
                            "(DY_MAX_ARENA_BYTES), not '%s'", argv[i]);
    } else if (strcmp(a, "--max-flash") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_ARENA_BYTES, &o.max_flash))
        return dy_cli_usage("compile", "--max-flash needs a byte count from 1 to 2^46 "
                            "(DY_MAX_ARENA_BYTES), not '%s'", argv[i]);
    } else if (strcmp(a, "-o") == 0 && has) {
      out = argv[++i];
    } else if (strcmp(a, "--emit") == 0 && has) {
      emit = argv[++i];
      if (strcmp(emit, "exe") && strcmp(emit, "c"))
        return dy_cli_usage("compile", "--emit takes exe or c, not '%s'", emit);
    } else if (strcmp(a, "--name") == 0 && has) {
      name = argv[++i];
    } else if (strcmp(a, "--max-batch") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_BATCH, &o.max_batch))
        return dy_cli_usage("compile", "--max-batch needs an integer from 1 to 2147483648, "
                            "not '%s'", argv[i]);
      max_batch_given = true;
    } else if ((strcmp(a, "--max-dim") == 0 || strcmp(a, "--dim") == 0 ||
                strcmp(a, "--shape") == 0) && has) {
      char kind = a[2] == 'm' ? 'm' : a[2] == 'd' ? 'd' : 's';
      if (n_dims == 32)
        return dy_cli_usage("compile", "more than 32 %s options (--max-dim, --dim, --shape)", a);
      if (!parse_dim_option(kind, argv[++i], &dims[n_dims++]))
        return dy_cli_usage("compile",
                            kind == 's' ? "--shape needs INPUT=d0,d1,... (positive sizes), not '%s'"
                            : kind == 'd' ? "--dim needs NAME=N (a positive size), not '%s'"
                                          : "--max-dim needs NAME=N (a positive size), not '%s'",
                            argv[i]);
    } else if (strcmp(a, "--max-iterations") == 0 && has) {
      if (!dy_cli_positive(argv[++i], &o.max_iterations))
        return dy_cli_usage("compile", "--max-iterations needs a positive integer, not '%s'",
                            argv[i]);
    } else if (strcmp(a, "--threads") == 0 && has) {
      int64_t t;
      if (!dy_cli_positive(argv[++i], &t) || t > 64)
        return dy_cli_usage("compile", "--threads needs a count from 1 to 64, not '%s'", argv[i]);
      o.threads = (int)t;
    } else if (strcmp(a, "--report") == 0) {
      report = true;
    } else if (strcmp(a, "--params") == 0 && has) {
      cf.params = argv[++i];
      c_only = true;
    } else if (strcmp(a, "--seed") == 0 && has) {
      char *end;
      errno = 0;
      cf.seed = strtoull(argv[++i], &end, 10);
      if (errno || !*argv[i] || *end || argv[i][0] == '-')
        return dy_cli_usage("compile", "--seed needs a non-negative integer, not '%s'", argv[i]);
      c_only = c_flags = true;
    } else if (a[0] == '-') {
      return dy_cli_usage("compile", "unknown or incomplete option '%s'", a);
    } else if (!model) {
      model = a;
    } else {
      return dy_cli_usage("compile", "unexpected argument '%s'", a);
    }
  }
  if (!model)
    return dy_cli_usage("compile", "%s", "no model given");
  if (!train && (ts.has_loss || ts.has_opt || ts.has_lr || ts.batch || ts.output))
    return dy_cli_usage("compile", "%s", "training options need --train");
  dy_codegen_trainer trainer = {0};
  if (train) {
    int rc = dy_cli_train_finish("compile", &ts);
    if (rc)
      return rc;
    if (!max_batch_given)
      o.max_batch = ts.batch;
    else if (ts.batch > o.max_batch)
      return dy_cli_usage("compile", "%s", "--batch is above --max-batch");
    trainer = (dy_codegen_trainer){.lr = ts.opt.lr, .batch = ts.batch, .lr_gamma = 1,
                                   .lr_warmup = -1};
    if (ts.sched.kind == DY_LR_STEP) {
      trainer.lr_step_size = ts.sched.step_size;
      trainer.lr_gamma = ts.sched.gamma;
    }
    if (ts.sched.kind == DY_LR_COSINE)
      trainer.lr_warmup = ts.sched.warmup_steps;
    o.trainer = &trainer;
  }
  size_t mlen = strlen(model);
  bool c_model = mlen > 2 && strcmp(model + mlen - 2, ".c") == 0;
  bool paddle_model = !c_model && dy_paddle_is_model_path(model);
  if (c_only && !c_model && !(paddle_model && !c_flags))
    return dy_cli_usage("compile", "--params, --seed and -- CFLAGS are for a C model "
                        "file (NET.c) (--params also for a Paddle model), not '%s'", model);
  char stem[512], ident[512], cmdline[2048];
  model_stem(model, stem, sizeof stem);
  if (!out)
    out = stem;
  const char *ob = strrchr(out, '/');
  dy_c_identifier(name ? name : (ob ? ob + 1 : out), ident, sizeof ident);
  if (name && strcmp(ident, name) != 0)
    return dy_cli_usage("compile", "--name '%s' is not a C identifier", name);
  join_args(argc, argv, cmdline, sizeof cmdline);
  o.name = ident;
  o.command_line = cmdline;
  o.source = base_name(model); /* the file's name, not its path: reproducible */
  o.emit_main = strcmp(emit, "exe") == 0;

  dy_error err = {0};
  dy_program *p = NULL;
  dy_codegen_output co = {0};
  dy_compile_report rep;
  dy_status s;
  if (c_model) {
    bool shown;
    cf.file = model;
    s = dy_cfront_load(&cf, &p, &shown, &err);
    if (s && shown)   /* the file:line:col and caret block said it all */
      return 1;
  } else {
    s = load_model(model, paddle_model ? cf.params : NULL, dims, n_dims, &p, &err);
  }
  if (!s)
    s = apply_dims(p, dims, n_dims, &o, &err);
  if (!s && train)
    s = dy_cli_make_training(p, &ts, false, &err);
  if (!s)
    s = dy_compile_program(p, &o, &co, &rep, &err);
  if (!s)
    s = o.emit_main ? dy_build_executable(&co, &o, out, &err)
                    : dy_write_sources(&co, out, &err);
  if (!s && report) {
    printf("ops: %d before passes, %d after\n", rep.ops_before, rep.ops_after);
    char at[512];
    sym_bounds_text(p, o.max_batch, at, sizeof at);
    printf("arena: %lld bytes at %s (lower bound %lld, ratio %.3f)\n",
           (long long)rep.mem.arena_bytes, at, (long long)rep.mem.lower_bound,
           rep.mem.lower_bound ? (double)rep.mem.arena_bytes / (double)rep.mem.lower_bound : 1.0);
    print_arena_formula(p, &o);
    printf("weights: %lld bytes\n", (long long)rep.mem.weight_bytes);
    int wino = 0, wm[7] = {0}, small = 0, pooled = 0; /* the kernel choices of winograd, conv-small */
    for (int k = 0; k < p->blocks[0]->n_ops; k++) {
      const dy_op *op = p->blocks[0]->ops[k];
      const char *algo = op->kind == DY_OP_FUSED_CONV2D ? dy_fused_conv2d_attrs_get(op).algo : "";
      int m = dy_winograd_tile(algo);
      wino += m > 0;
      wm[m]++;
      small += strcmp(algo, "small") == 0 || op->kind == DY_OP_FUSED_CONV2D_POOL;
      pooled += op->kind == DY_OP_FUSED_CONV2D_POOL;
    }
    if (small)
      printf("conv-small: %d convolution%s on the direct kernel, %d with its max pool "
             "(fuse-pool) (--disable-pass conv-small: none)\n", small, small == 1 ? "" : "s",
             pooled);
    if (wino)
      printf("winograd: %d convolution%s (F2: %d, F4: %d, F6: %d; --disable-pass winograd: "
             "none)\n", wino, wino == 1 ? "" : "s", wm[2], wm[4], wm[6]);
    int dw = 0, dwpw = 0, irb = 0; /* emit_depthwise.c's choice, fuse-dwpw, fuse-irb */
    for (int k = 0; k < p->blocks[0]->n_ops; k++) {
      dw += dy_codegen_depthwise_padded(p, p->blocks[0]->ops[k], o.plain_kernels);
      dwpw += p->blocks[0]->ops[k]->kind == DY_OP_FUSED_DWPW;
      irb += p->blocks[0]->ops[k]->kind == DY_OP_FUSED_IRB;
    }
    if (irb)
      printf("fuse-irb: %d 1x1 expand + depthwise + 1x1 conv block%s in one kernel "
             "(--disable-pass fuse-irb: none)\n",
             irb, irb == 1 ? "" : "s");
    if (dwpw)
      printf("fuse-dwpw: %d depthwise + 1x1 conv pair%s in one kernel (--disable-pass fuse-dwpw: "
             "none)\n",
             dwpw, dwpw == 1 ? "" : "s");
    if (dw)
      printf("depthwise: %d convolution%s on padded planes (--plain-kernels: plain loops)\n", dw,
             dw == 1 ? "" : "s");
    int ws = 0; /* GEMM convolutions in the weight-stationary form */
    for (int k = 0; k < p->blocks[0]->n_ops; k++)
      ws += dy_codegen_conv_panels(p, p->blocks[0]->ops[k], o.threads, o.plain_kernels) > 1;
    printf("gemm: %s\n", o.plain_kernels ? "6 x 16 tiles (--plain-kernels)"
                                          : "12 x 16 tiles on AVX-512, 2 x 6 x 16 elsewhere "
                                            "(--plain-kernels: 6 x 16)");
    for (int k = 0; k < p->blocks[0]->n_ops; k++) { /* matmul's A: packed or in place */
      char a[160];
      if (dy_codegen_gemm_a(p, p->blocks[0]->ops[k], o.max_batch, o.no_pack_a, a, sizeof a))
        printf("gemm %s (op %d, %s)\n", a, p->blocks[0]->ops[k]->id,
               dy_op_name(p->blocks[0]->ops[k]->kind));
    }
    if (ws)
      printf("weight-stationary: %d convolution%s (weight over 1 MB: several im2col panels "
             "at once; --plain-kernels: none)\n", ws, ws == 1 ? "" : "s");
    if (rep.state_bytes)
      printf("state: %lld bytes (parameters and optimizer state, in RAM; with the arena "
             "%lld bytes)\n", (long long)rep.state_bytes,
             (long long)(rep.state_bytes + rep.mem.arena_bytes));
  }
  dy_codegen_output_free(&co);
  dy_program_free(p);
  if (s)
    return dy_cli_fail(&err);
  if (o.emit_main)
    printf("wrote %s\n", out);
  else
    printf("wrote %s.c %s.h\n", out, out);
  return 0;
}

/* ---- run ---- */

/* Any other argument of run and check: an unknown option, else the model,
 * then the inputs in order. Returns 0 or a usage error's exit status. */
int dy_cli_model_or_input(const char *cmd, const char *a, const char **model,
                          dy_cli_inputs *ia) {
  if (a[0] == '-')
    return dy_cli_usage(cmd, "unknown or incomplete option '%s'", a);
  if (!*model)
    *model = a;
  else if (!dy_cli_add_input(ia, a))
    return dy_cli_usage(cmd, "too many inputs (%s)", a);
  return 0;
}

/* After the arguments of run and check: a usage error when no model was
 * given, and the inputs freed on any error. Returns the status (0: go on). */
int dy_cli_args_end(const char *cmd, int rc, const char *model, dy_cli_inputs *ia) {
  if (!rc && !model)
    rc = dy_cli_usage(cmd, "%s", "no model given");
  if (rc)
    dy_cli_free_inputs(ia);
  return rc;
}

static const char run_help[] =
    "usage: dy2stc run MODEL.dymodel --input NAME=FILE.npy ... [--output-dir DIR]\n"
    "Run the Program on the static executor (no compilation).\n"
    "  --input NAME=FILE  an input as .npy (or FILE alone, in input order)\n"
    "  --params FILE      a Paddle model's params (default: beside it)\n"
    "  --output-dir DIR   where DIR/<output name>.npy go (default .); names\n"
    "                     map to file names by turning characters outside\n"
    "                     [A-Za-z0-9._-] into '_'\n";

static int cmd_run(int argc, char **argv) {
  const char *model = NULL, *dir = ".", *params = NULL;
  dy_cli_inputs ia = {0};
  int rc = 0;
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
    } else if (strcmp(a, "--output-dir") == 0 && has) {
      dir = argv[++i];
    } else if (strcmp(a, "--params") == 0 && has) {
      params = argv[++i];
    } else {
      rc = dy_cli_model_or_input("run", a, &model, &ia);
    }
  }
  if ((rc = dy_cli_args_end("run", rc, model, &ia)))
    return rc;
  if ((rc = paddle_params_only("run", model, params))) {
    dy_cli_free_inputs(&ia);
    return rc;
  }
  dy_error err = {0};
  dy_program *p = NULL;
  dy_tensor *in[DY_MAX_FEEDS] = {0}, *out[DY_MAX_FEEDS] = {0};
  dy_status s = load_model(model, params, NULL, 0, &p, &err);
  if (!s)
    s = dy_cli_load_inputs(p, &ia, in, &err);
  if (!s)
    s = dy_executor_run(p, in, p->n_feeds, out, p->n_fetches, &err);
  if (!s)
    s = ensure_dir(dir, &err);
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

/* ---- show ---- */

static const char show_help[] =
    "usage: dy2stc show MODEL.dymodel [--dot] [--params FILE]\n"
    "Print the Program as text, or as Graphviz with --dot.\n"
    "  --params FILE  a Paddle model's params (default: NAME.pdiparams beside it)\n";

static int cmd_show(int argc, char **argv) {
  const char *model = NULL, *params = NULL;
  bool dot = false;
  for (int i = 2; i < argc; i++) {
    if (dy_cli_is_help(argv[i])) {
      fputs(show_help, stdout);
      return 0;
    } else if (strcmp(argv[i], "--dot") == 0) {
      dot = true;
    } else if (strcmp(argv[i], "--params") == 0 && i + 1 < argc) {
      params = argv[++i];
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
  int rc0 = paddle_params_only("show", model, params);
  if (rc0)
    return rc0;
  dy_error err = {0};
  dy_program *p = NULL;
  /* show a Program even when it does not verify: that is when one looks */
  if (load_model(model, params, NULL, 0, &p, &err))
    return dy_cli_fail(&err);
  if (dot)
    dy_program_print_dot(p, stdout);
  else
    dy_program_print(p, stdout);
  dy_error verr = {0};
  int rc = 0;
  if (dy_verify(p, &verr)) {
    dy_error_prefix(&verr, "%s does not verify", model);
    rc = dy_cli_fail(&verr);
  }
  dy_program_free(p);
  return rc;
}

/* ---- compare ---- */

typedef struct {
  double max_abs, max_rel;
  int64_t worst;     /* index of the largest error beyond tolerance, or -1 */
  int64_t n_bad;
} diff_stats;

static dy_status diff_tensors(const dy_tensor *a, const dy_tensor *b,
                              double rtol, double atol, diff_stats *d,
                              dy_error *err) {
  char ta[128], tb[128];
  if (!dy_type_equal(&a->type, &b->type))
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH, "shapes differ: %s vs %s",
                        dy_type_str(&a->type, ta, sizeof ta),
                        dy_type_str(&b->type, tb, sizeof tb));
  *d = (diff_stats){.worst = -1};
  double worst_excess = 0;
  int64_t n = dy_tensor_numel(a);
  for (int64_t i = 0; i < n; i++) {
    double x, y;
    if (a->type.dtype == DY_F32) {
      x = ((const float *)a->data)[i];
      y = ((const float *)b->data)[i];
    } else if (a->type.dtype == DY_I64) {
      x = (double)((const int64_t *)a->data)[i];
      y = (double)((const int64_t *)b->data)[i];
    } else {
      x = ((const unsigned char *)a->data)[i];
      y = ((const unsigned char *)b->data)[i];
    }
    /* NaN and +-inf are exact: equal only to the same non-finite value
     * (NaN to NaN, inf to inf of its sign), never within a tolerance */
    double ad, rd, excess;
    if (!isfinite(x) || !isfinite(y)) {
      bool same = (isnan(x) && isnan(y)) || (isinf(x) && isinf(y) && (x > 0) == (y > 0));
      ad = rd = same ? 0 : INFINITY;
      excess = same ? 0 : INFINITY;
    } else {
      ad = fabs(x - y);
      rd = ad / (fabs(y) > 1e-30 ? fabs(y) : 1e-30);
      excess = ad - (atol + rtol * fabs(y));
    }
    if (ad > d->max_abs)
      d->max_abs = ad;
    if (ad > 0 && rd > d->max_rel)
      d->max_rel = rd;
    if (excess > 0) {
      d->n_bad++;
      if (excess > worst_excess) {
        worst_excess = excess;
        d->worst = i;
      }
    }
  }
  return DY_OK;
}

static const char compare_help[] =
    "usage: dy2stc compare A.npy B.npy [--rtol R] [--atol A] [--limit N]\n"
    "Print two tensors side by side with their difference; exit 1 when any\n"
    "element differs by more than atol + rtol*|B| (defaults 1e-5, 1e-6).\n";

static int cmd_compare(int argc, char **argv) {
  const char *fa = NULL, *fb = NULL;
  double rtol = 1e-5, atol = 1e-6;
  int64_t limit = 10;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(compare_help, stdout);
      return 0;
    } else if (strcmp(a, "--rtol") == 0 && has) {
      if (!dy_cli_double(argv[++i], &rtol))
        return dy_cli_usage("compare", "bad --rtol '%s'", argv[i]);
    } else if (strcmp(a, "--atol") == 0 && has) {
      if (!dy_cli_double(argv[++i], &atol))
        return dy_cli_usage("compare", "bad --atol '%s'", argv[i]);
    } else if (strcmp(a, "--limit") == 0 && has) {
      if (!dy_cli_positive(argv[++i], &limit))
        return dy_cli_usage("compare", "bad --limit '%s'", argv[i]);
    } else if (a[0] == '-') {
      return dy_cli_usage("compare", "unknown or incomplete option '%s'", a);
    } else if (!fa) {
      fa = a;
    } else if (!fb) {
      fb = a;
    } else {
      return dy_cli_usage("compare", "unexpected argument '%s'", a);
    }
  }
  if (!fa || !fb)
    return dy_cli_usage("compare", "%s", "needs two .npy files");
  dy_error err = {0};
  dy_tensor *a = NULL, *b = NULL;
  diff_stats d;
  dy_status s = dy_npy_read(fa, &a, &err);
  if (!s)
    s = dy_npy_read(fb, &b, &err);
  if (!s)
    s = diff_tensors(a, b, rtol, atol, &d, &err);
  if (!s) {
    char ty[128];
    printf("%-6s %16s %16s %12s    (%s)\n", "index", fa, fb, "abs diff",
           dy_type_str(&a->type, ty, sizeof ty));
    int64_t n = dy_tensor_numel(a);
    for (int64_t i = 0; i < n && i < limit; i++) {
      double x = a->type.dtype == DY_F32 ? ((float *)a->data)[i] : 0;
      double y = a->type.dtype == DY_F32 ? ((float *)b->data)[i] : 0;
      printf("%-6lld %16.8g %16.8g %12.3g\n", (long long)i, x, y, fabs(x - y));
    }
    if (n > limit)
      printf("... %lld more\n", (long long)(n - limit));
    printf("max abs diff %.3g, max rel diff %.3g over %lld values: %s\n", d.max_abs,
           d.max_rel, (long long)n, d.n_bad ? "MISMATCH" : "match");
  }
  dy_tensor_free(a);
  dy_tensor_free(b);
  if (s)
    return dy_cli_fail(&err);
  return d.n_bad ? 1 : 0;
}

/* ---- check: static executor vs compiled executable ---- */

static const char check_help[] =
    "usage: dy2stc check MODEL.dymodel --input NAME=FILE.npy ... [options]\n"
    "Run the static executor and the compiled executable on the same inputs\n"
    "and report the max abs / rel error of every output.\n"
    "  --max-batch N   bound compiled in (default 64)\n"
    "  --max-dim NAME=N, --dim NAME=N, --shape INPUT=d0,...  size symbols, as compile\n"
    "  --rtol R        relative tolerance (default 1e-5)\n"
    "  --atol A        absolute tolerance (default 1e-6)\n"
    "  --params FILE   a Paddle model's params (default: beside it)\n"
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
  printf("%s:%d: first divergence: op %d (%s)", r.file[0] ? r.file : "?", r.line, r.op_id,
         dy_op_name(r.kind));
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

static int cmd_check(int argc, char **argv) {
  const char *model = NULL, *params = NULL;
  dy_cli_inputs ia = {0};
  dy_compile_options o = dy_compile_options_default();
  double rtol = 1e-5, atol = 1e-6;
  bool localize = false;
  int rc = 0, n_dims = 0;
  dim_option dims[32];
  for (int i = 2; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    int po = dy_cli_pass_option("check", argc, argv, &i, &o.passes);
    if (po == 0)
      po = cc_option("check", argc, argv, &i, &o);
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
      if (!dy_cli_range(argv[++i], 1, DY_MAX_BATCH, &o.max_batch))
        rc = dy_cli_usage("check", "--max-batch needs an integer from 1 to 2147483648, not '%s'",
                          argv[i]);
    } else if ((strcmp(a, "--max-dim") == 0 || strcmp(a, "--dim") == 0 ||
                strcmp(a, "--shape") == 0) && has) {
      char kind = a[2] == 'm' ? 'm' : a[2] == 'd' ? 'd' : 's';
      if (n_dims == 32 || !parse_dim_option(kind, argv[++i], &dims[n_dims++]))
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
    } else {
      rc = dy_cli_model_or_input("check", a, &model, &ia);
    }
  }
  if ((rc = dy_cli_args_end("check", rc, model, &ia)))
    return rc;
  if ((rc = paddle_params_only("check", model, params))) {
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
  dy_status s = load_model(model, params, NULL, 0, &p, &err);
  if (!s)
    s = apply_dims(p, dims, n_dims, &o, &err);
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
  if (!s) {
    /* argv: [runner] exe --input name=file ... --output-dir dir */
    char *args[2 * DY_MAX_FEEDS + 5];
    char spec[DY_MAX_FEEDS][4200];
    int n = 0;
    const char *tf, *runner = NULL;
    dy_target_flags(o.target, &tf, NULL, &runner, NULL);
    if (runner)
      args[n++] = (char *)runner;
    args[n++] = exe;
    for (int i = 0; i < ia.n; i++) {
      const char *nm = ia.name[i] ? ia.name[i] : p->vars[p->feeds[i]]->name;
      snprintf(spec[i], sizeof spec[i], "%s=%s", nm, ia.file[i]);
      args[n++] = "--input";
      args[n++] = spec[i];
    }
    args[n++] = "--output-dir";
    args[n++] = dir;
    args[n] = NULL;
    s = dy_run_command(args, &err);
  }
  for (int i = 0; !s && i < p->n_fetches; i++) {
    char path[4400];
    const char *name = p->vars[p->fetches[i]]->name;
    diff_stats d;
    if ((s = dy_output_path(p, i, dir, path, sizeof path, &err)) ||
        (s = dy_npy_read(path, &got[i], &err)) ||
        (s = diff_tensors(got[i], ref[i], rtol, atol, &d, &err))) {
      dy_error_prefix(&err, "output '%s'", name);
      break;
    }
    printf("%s: max abs err %.3g, max rel err %.3g: %s\n", name, d.max_abs,
           d.max_rel, d.n_bad ? "MISMATCH" : "ok");
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

void dy_cli_model_stem(const char *out, char *stem, size_t n) {
  snprintf(stem, n, "%s", out);
  size_t len = strlen(stem);
  if (len > 8 && strcmp(stem + len - 8, ".dymodel") == 0)
    stem[len - 8] = '\0';
}

/* ---- export ---- */

static const char export_help[] =
    "usage: dy2stc export MODEL --to paddle -o OUT [--params FILE]\n"
    "Write MODEL as a PaddlePaddle inference model: OUT.pdmodel (the\n"
    "ProgramDesc) and OUT.pdiparams (the combined params), which dy2stc, and\n"
    "Paddle Inference, read back. Control flow and ops without a Paddle\n"
    "counterpart are an error naming the op.\n";

static int cmd_export(int argc, char **argv) {
  const char *model = NULL, *to = NULL, *out = NULL, *params = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (dy_cli_is_help(a)) {
      fputs(export_help, stdout);
      return 0;
    } else if (strcmp(a, "--to") == 0 && has) {
      to = argv[++i];
    } else if (strcmp(a, "-o") == 0 && has) {
      out = argv[++i];
    } else if (strcmp(a, "--params") == 0 && has) {
      params = argv[++i];
    } else if (a[0] == '-') {
      return dy_cli_usage("export", "unknown or incomplete option '%s'", a);
    } else if (!model) {
      model = a;
    } else {
      return dy_cli_usage("export", "unexpected argument '%s'", a);
    }
  }
  if (!model)
    return dy_cli_usage("export", "%s", "no model given");
  if (!to || strcmp(to, "paddle"))
    return dy_cli_usage("export", "--to names the format: paddle, not '%s'", to ? to : "");
  if (!out)
    return dy_cli_usage("export", "%s", "no -o OUT given");
  int rc = paddle_params_only("export", model, params);
  if (rc)
    return rc;
  dy_error err = {0};
  dy_program *p = NULL;
  dy_status s = load_model(model, params, NULL, 0, &p, &err);
  if (!s)
    s = dy_paddle_save(p, out, &err);
  dy_program_free(p);
  if (s)
    return dy_cli_fail(&err);
  printf("%s -> %s.pdmodel + %s.pdiparams\n", model, out, out);
  return 0;
}

/* ---- params ---- */

static const char params_help[] =
    "usage: dy2stc params MODEL --from DIR -o OUT\n"
    "Write MODEL with the persistable vars found in DIR as OUT.dymodel +\n"
    "OUT.dyparams: var NAME takes DIR/<NAME>.npy (characters outside\n"
    "[A-Za-z0-9._-] become '_') when that file exists; its dtype and shape must\n"
    "be the var's. This is how a compiled trainer's output (dy2stc compile\n"
    "--train --emit exe; it writes its state as DIR/<name>.npy) becomes a model.\n";

static int cmd_params(int argc, char **argv) {
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
    else
      s = dy_program_set_data(p, i, t->data, t->nbytes, &err);
    dy_tensor_free(t);
    n++;
  }
  if (!s && n == 0)
    s = dy_error_set(&err, DY_STATUS_INVALID_ARGUMENT,
                     "%s holds no <var>.npy of a persistable var of %s", dir, model);
  char stem[4096];
  snprintf(stem, sizeof stem, "%s", out);
  size_t len = strlen(stem);
  if (len > 8 && strcmp(stem + len - 8, ".dymodel") == 0)
    stem[len - 8] = '\0';
  if (!s)
    s = dy_model_save(p, stem, &err);
  dy_program_free(p);
  if (s)
    return dy_cli_fail(&err);
  printf("wrote %s.dymodel and %s.dyparams (%d tensors from %s)\n", stem, stem, n, dir);
  return 0;
}

/* ---- convert ---- */

static const char convert_help[] =
    "usage: dy2stc convert NET.c [--line-directives] [-- CFLAGS...]\n"
    "Print NET.c with the tensor-dependent if/while/for of its DY_TO_STATIC\n"
    "function rewritten into outlined functions and dy_cond / dy_while calls\n"
    "(what `dy2stc compile NET.c` traces). --line-directives keeps the #line\n"
    "directives that map the copied code back to NET.c.\n";

static int cmd_convert(int argc, char **argv) {
  dy_cfront_options cf = {0};
  bool lines = false;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (dy_cli_is_help(a)) {
      fputs(convert_help, stdout);
      return 0;
    } else if (strcmp(a, "--") == 0) {
      cf.n_cflags = argc - i - 1;
      cf.cflags = argv + i + 1;
      break;
    } else if (strcmp(a, "--line-directives") == 0) {
      lines = true;
    } else if (a[0] == '-') {
      return dy_cli_usage("convert", "unknown option '%s'", a);
    } else if (cf.file) {
      return dy_cli_usage("convert", "unexpected argument '%s'", a);
    } else {
      cf.file = a;
    }
  }
  if (!cf.file)
    return dy_cli_usage("convert", "%s", "no C file given");
  dy_error err = {0};
  dy_cf_paths paths;
  char *out = NULL;
  int n = 0;
  bool shown = false;
  dy_status s = dy_cfront_find_paths(&paths, &err);
  if (!s)
    s = dy_cconvert(&cf, &paths, lines, &out, &n, &shown, &err);
  if (s)
    return shown ? 1 : dy_cli_fail(&err);
  fputs(out, stdout);
  free(out);
  return 0;
}

/* ---- main ---- */

static const char main_help[] =
    "usage: dy2stc COMMAND [options]   (dy2stc COMMAND --help for each)\n"
    "  compile   build a .dymodel, .onnx or C model file (NET.c) into an\n"
    "            executable, or C sources (--emit c)\n"
    "  run       run a .dymodel on the static executor\n"
    "  show      print a .dymodel as text or Graphviz\n"
    "  check     compare the static executor with the compiled executable\n"
    "  compare   compare two .npy files\n"
    "  bench     compile a model and time it (median, min, GFLOP/s)\n"
    "  train     train a model on .npy data; writes the trained model\n"
    "  params    put tensors (.npy, a compiled trainer's output) into a model\n"
    "  quantize  post-training int8 quantization with a calibration set\n"
    "  export    write a model as a PaddlePaddle .pdmodel + .pdiparams\n"
    "  convert   print a C model file with its tensor-dependent if/while/for\n"
    "            rewritten into dy_cond / dy_while (what compile NET.c traces)\n"
    "  --version print the version\n"
    "MODEL is NAME.dymodel (with NAME.dyparams), an ONNX model, NAME.onnx, or a\n"
    "PaddlePaddle model, NAME.pdmodel (with NAME.pdiparams) or __model__\n";

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
    fputs(main_help, stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (dy_cli_is_help(cmd)) {
    fputs(main_help, stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("dy2stc %s (.dymodel format %d)\n", DY_VERSION_STRING, DY_DYMODEL_VERSION);
    /* where `compile NET.c` finds the headers and libraries */
    dy_cf_paths paths;
    dy_error err = {0};
    if (dy_cfront_find_paths(&paths, &err))
      printf("headers: none found (%s)\n", err.msg);
    else
      printf("headers: %s (%s)\n", paths.inc[paths.installed ? 0 : 1],
             paths.installed ? "installed" : "build tree");
    return 0;
  }
  if (strcmp(cmd, "compile") == 0)
    return cmd_compile(argc, argv);
  if (strcmp(cmd, "run") == 0)
    return cmd_run(argc, argv);
  if (strcmp(cmd, "show") == 0)
    return cmd_show(argc, argv);
  if (strcmp(cmd, "check") == 0)
    return cmd_check(argc, argv);
  if (strcmp(cmd, "compare") == 0)
    return cmd_compare(argc, argv);
  if (strcmp(cmd, "bench") == 0)
    return dy_cli_bench(argc, argv);
  if (strcmp(cmd, "train") == 0)
    return dy_cli_train(argc, argv);
  if (strcmp(cmd, "params") == 0)
    return cmd_params(argc, argv);
  if (strcmp(cmd, "quantize") == 0)
    return dy_cli_quantize(argc, argv);
  if (strcmp(cmd, "export") == 0)
    return cmd_export(argc, argv);
  if (strcmp(cmd, "convert") == 0)
    return cmd_convert(argc, argv);
  fprintf(stderr, "%s: unknown command '%s' (see '%s --help')\n", prog, cmd, prog);
  return 2;
}
