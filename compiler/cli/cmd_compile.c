/* cmd_compile.c - `dy2stc compile`: a model (.dymodel, ONNX, Paddle, or a
 * C model file through the C frontend) verified, optimised, planned and
 * emitted (dy_compile_program), then built into an executable or written
 * as C sources; --train compiles one training step instead; --report
 * prints the plan and the kernel choices.
 *
 *   dy2stc compile MODEL [-o OUT] [--emit exe|c] [--name NAME] [--max-batch N]
 *                        [--max-dim NAME=N] [--dim NAME=N] [--shape INPUT=d0,d1,...]
 *                        [--cc CC] [--cflags FLAGS] [--report] [--max-ram B]
 *                        [--max-flash B] [--target T] [--threads N] [--max-iterations N]
 *                        [-O0|-O1|-O2] [--verify-each] [--print-after=P|all]
 *                        [--print-before=P] [--dump-dir DIR]
 *                        [--train --loss L --optimizer O [--lr R] ...]
 *                        [--params P.dyparams] [--seed N] [-- CFLAGS...]
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfront.h"
#include "cli.h"

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
    "  --save-model STEM keep the imported Program (NET.c: the traced one) as\n"
    "                    STEM.dymodel + STEM.dyparams, written once the\n"
    "                    compile has succeeded; run, check and show take it\n"
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
    "                    NAME_ERR_LOOP (default 1000000; a loop's own bound wins;\n"
    "                    with --train also the rows of its gradient's trip stack)\n"
    "  --cc CC           C compiler (default: $CC, else cc)\n"
    "  --cflags FLAGS    extra compiler flags\n"
    "  --custom-op NAME=FILE.c  a custom op's kernel and shape rule (README.md,\n"
    "                    \"Custom ops\"): its shape function runs at import, FILE.c\n"
    "                    is built into the executable (--emit c: compile it beside)\n"
    "  --target T        instruction set, and so the SIMD path of the kernels:\n"
    "                    native (default: this machine), generic, x86-64-v2,\n"
    "                    x86-64-v3 (AVX2+FMA), x86-64-v4 (AVX-512), aarch64\n"
    "  --threads N       split the GEMM and convolution kernels over N threads\n"
    "                    (pthreads; default 1: no thread code at all)\n"
    "  --report          print ops, arena bytes, its lower bound, weight bytes,\n"
    "                    the code bytes of each function, the stack bound, and the\n"
    "                    time of each phase (import, passes, cc, ...)\n"
    "  --quiet, -q       no progress line (one is shown when stderr is a terminal)\n"
    "  --max-ram BYTES   fail when the arena (and the stack, when measured) would\n"
    "                    exceed BYTES. --emit c (and --report, --max-ram) compile\n"
    "                    OUT.c once with --cc/--cflags (-O2; --target's flags when\n"
    "                    given) for the stack bound NAME_STACK_BYTES and the code\n"
    "                    bytes per function: --cc arm-none-eabi-gcc --cflags\n"
    "                    '-mcpu=cortex-m4 ...' states the firmware's figures\n"
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
    "                    panel at a time, silu/hard_swish/gelu and the conv\n"
    "                    activations as scalar loops, reduce sums one by\n"
    "                    one), to compare\n"
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
static void sym_bounds_text(const dy_program *p, char *buf, size_t n) {
  int64_t b[DY_MAX_SYMS];
  uint64_t used = 0;
  dy_program_sym_bounds(p, b);
  for (int v = 0; v < p->n_vars; v++)
    used |= dy_type_sym_mask(&p->vars[v]->type);
  size_t k = (size_t)snprintf(buf, n, "batch %lld", (long long)b[0]);
  for (int s = 1; s < DY_MAX_SYMS && k < n; s++)
    if (used >> s & 1)
      k += (size_t)snprintf(buf + k, n - k, ", %s %lld", dy_sym_name(s), (long long)b[s]);
}

/* With size symbols other than the batch: the arena as a function of the
 * symbols. Each buffer keeps the offset the plan gave it at the bounds, so
 * at smaller sizes the arena in use is max(offset + bytes) over the
 * buffers; the largest ones, with their sizes as expressions. */
static void print_arena_formula(const dy_program *p) {
  uint64_t used = 0;
  for (int v = 0; v < p->n_vars; v++)
    used |= dy_type_sym_mask(&p->vars[v]->type);
  if (!(used >> 1))
    return;
  printf("arena(symbols) = max over its buffers of offset + bytes; the largest:\n");
  int64_t bounds[DY_MAX_SYMS];
  dy_program_sym_bounds(p, bounds);
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

/* The arguments of compile. */
typedef struct {
  const char *model, *out, *emit, *name;
  const char *save_model; /* --save-model STEM: the imported Program kept */
  dy_compile_options o;
  bool report, train, quiet;
  int64_t max_batch;  /* --max-batch (0: not given; --train: --batch's) */
  bool c_only;  /* --params, --seed or -- CFLAGS: for a C (or Paddle) model */
  bool c_flags; /* --seed or -- CFLAGS: for a C model alone */
  dy_cli_dim_option dims[32];
  int n_dims;
  dy_cli_train_spec ts;
  dy_cfront_options cf;
} compile_args;

/* Parse argv into *a; *argc is cut at `--` (the rest: the CFLAGS of a C
 * model, not in the banner's command line). Returns 0 to go on (*help:
 * --help was printed, stop with 0), else the exit status of a usage error. */
static int parse_args(int *argc, char **argv, compile_args *a, bool *help) {
  dy_compile_options *o = &a->o;
  for (int i = 2; i < *argc; i++) {
    const char *s = argv[i];
    bool has = i + 1 < *argc;
    if (strcmp(s, "--") == 0) {   /* the rest: CFLAGS of a C model */
      a->cf.cflags = argv + i + 1;
      a->cf.n_cflags = *argc - i - 1;
      *argc = i;
      a->c_only = a->c_flags = true;
      break;
    }
    int po = dy_cli_pass_option("compile", *argc, argv, &i, &o->passes);
    if (po == 0)
      po = dy_cli_cc_option("compile", *argc, argv, &i, o);
    if (po == 0)
      po = dy_cli_train_option("compile", *argc, argv, &i, &a->ts);
    if (po < 0)
      return 2;
    if (po > 0)
      continue;
    if (dy_cli_is_help(s)) {
      printf(compile_help, dy_cli_train_help);
      dy_cli_print_passes(stdout);
      *help = true;
      return 0;
    } else if (strcmp(s, "--train") == 0) {
      a->train = true;
    } else if (strcmp(s, "--max-ram") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_ARENA_BYTES, &o->max_ram))
        return dy_cli_usage("compile", "--max-ram needs a byte count from 1 to 2^46 "
                            "(DY_MAX_ARENA_BYTES), not '%s'", argv[i]);
    } else if (strcmp(s, "--max-flash") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_ARENA_BYTES, &o->max_flash))
        return dy_cli_usage("compile", "--max-flash needs a byte count from 1 to 2^46 "
                            "(DY_MAX_ARENA_BYTES), not '%s'", argv[i]);
    } else if (strcmp(s, "-o") == 0 && has) {
      a->out = argv[++i];
    } else if (strcmp(s, "--emit") == 0 && has) {
      a->emit = argv[++i];
      if (strcmp(a->emit, "exe") && strcmp(a->emit, "c"))
        return dy_cli_usage("compile", "--emit takes exe or c, not '%s'", a->emit);
    } else if (strcmp(s, "--name") == 0 && has) {
      a->name = argv[++i];
    } else if (strcmp(s, "--max-batch") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_BATCH, &a->max_batch))
        return dy_cli_usage("compile", "--max-batch needs an integer from 1 to 2147483648, "
                            "not '%s'", argv[i]);
    } else if ((strcmp(s, "--max-dim") == 0 || strcmp(s, "--dim") == 0 ||
                strcmp(s, "--shape") == 0) && has) {
      char kind = s[2] == 'm' ? 'm' : s[2] == 'd' ? 'd' : 's';
      if (a->n_dims == 32)
        return dy_cli_usage("compile", "more than 32 %s options (--max-dim, --dim, --shape)", s);
      if (!dy_cli_parse_dim_option(kind, argv[++i], &a->dims[a->n_dims++]))
        return dy_cli_usage("compile",
                            kind == 's' ? "--shape needs INPUT=d0,d1,... (positive sizes), not '%s'"
                            : kind == 'd' ? "--dim needs NAME=N (a positive size), not '%s'"
                                          : "--max-dim needs NAME=N (a positive size), not '%s'",
                            argv[i]);
    } else if (strcmp(s, "--threads") == 0 && has) {
      int64_t t;
      if (!dy_cli_positive(argv[++i], &t) || t > 64)
        return dy_cli_usage("compile", "--threads needs a count from 1 to 64, not '%s'", argv[i]);
      o->threads = (int)t;
    } else if (strcmp(s, "--report") == 0) {
      a->report = true;
    } else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
      a->quiet = true;
    } else if (strcmp(s, "--save-model") == 0 && has) {
      a->save_model = argv[++i];
    } else if (strcmp(s, "--custom-op") == 0 && has) {
      dy_error e = {0};
      if (dy_cli_custom_op(argv[++i], &e))
        return dy_cli_fail(&e);
      o->cflags = dy_cli_custom_sources(o->cflags); /* built into the executable */
    } else if (strcmp(s, "--params") == 0 && has) {
      a->cf.params = argv[++i];
      a->c_only = true;
    } else if (strcmp(s, "--seed") == 0 && has) {
      char *end;
      errno = 0;
      a->cf.seed = strtoull(argv[++i], &end, 10);
      if (errno || !*argv[i] || *end || argv[i][0] == '-')
        return dy_cli_usage("compile", "--seed needs a non-negative integer, not '%s'", argv[i]);
      a->c_only = a->c_flags = true;
    } else if (s[0] == '-') {
      return dy_cli_usage("compile", "unknown or incomplete option '%s'", s);
    } else if (!a->model) {
      a->model = s;
    } else {
      return dy_cli_usage("compile", "unexpected argument '%s'", s);
    }
  }
  if (!a->model)
    return dy_cli_usage("compile", "%s", "no model given");
  /* --max-iterations is one of the training options (it also sizes the
   * gradient's trip stacks); without --train it is the loops' bound only */
  if (a->ts.max_iterations > 0)
    o->max_iterations = a->ts.max_iterations;
  return 0;
}

/* --save-model STEM: the imported Program, encoded at once (the passes
 * change it) and written as STEM.dymodel + STEM.dyparams only when the
 * compile has succeeded, both files or neither (a failed compile leaves
 * an older pair in place). STEM may carry either extension. */
static dy_status save_model_encode(const dy_program *p, const char *stem, dy_model_pair *m,
                                   dy_error *err) {
  /* the directory checked now, so that a compile that would end unable
   * to keep the pair stops before it writes anything */
  char dir[600];
  const char *slash = strrchr(stem, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - stem) + 1 : 1, slash ? stem : ".");
  if (access(dir, W_OK | X_OK) != 0)
    return dy_error_set(err, DY_STATUS_IO, "--save-model %s: cannot write in '%s' (%s)", stem,
                        dir, strerror(errno));
  dy_status s = dy_model_pair_encode(p, stem, m, err);
  if (s != DY_OK)
    dy_error_prefix(err, "--save-model");
  return s;
}

/* --train: the training options checked, the max batch from --batch, and
 * the compiled trainer's defaults (*trainer, which a->o then points at).
 * Returns 0 or a usage error's exit status. */
static int training_options(compile_args *a, dy_codegen_trainer *trainer) {
  dy_cli_train_spec *ts = &a->ts;
  if (!a->train && (ts->has_loss || ts->has_opt || ts->has_lr || ts->batch || ts->output))
    return dy_cli_usage("compile", "%s", "training options need --train");
  if (!a->train)
    return 0;
  int rc = dy_cli_train_finish("compile", ts);
  if (rc)
    return rc;
  if (!a->max_batch)
    a->max_batch = ts->batch;
  else if (ts->batch > a->max_batch)
    return dy_cli_usage("compile", "%s", "--batch is above --max-batch");
  *trainer = (dy_codegen_trainer){.lr = ts->opt.lr, .batch = ts->batch, .lr_gamma = 1,
                                  .lr_warmup = -1};
  if (ts->sched.kind == DY_LR_STEP) {
    trainer->lr_step_size = ts->sched.step_size;
    trainer->lr_gamma = ts->sched.gamma;
  }
  if (ts->sched.kind == DY_LR_COSINE)
    trainer->lr_warmup = ts->sched.warmup_steps;
  a->o.trainer = trainer;
  return 0;
}

/* --report's kernel choices: winograd, conv-small and fuse-pool. */
static void report_conv_algos(const dy_program *p) {
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
}

/* --report's kernel choices: fuse-irb, fuse-dwpw, the depthwise kernel,
 * the GEMM's tiles, each matmul's A and the weight-stationary convs. */
static void report_kernels(const dy_program *p, const dy_compile_options *o) {
  int dw = 0, dwpw = 0, irb = 0; /* emit_depthwise.c's choice, fuse-dwpw, fuse-irb */
  for (int k = 0; k < p->blocks[0]->n_ops; k++) {
    dw += dy_codegen_depthwise_padded(p, p->blocks[0]->ops[k], o->plain_kernels);
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
    ws += dy_codegen_conv_panels(p, p->blocks[0]->ops[k], o->threads, o->plain_kernels) > 1;
  printf("gemm: %s\n", o->plain_kernels ? "6 x 16 tiles (--plain-kernels)"
                                        : "12 x 16 tiles on AVX-512, 2 x 6 x 16 elsewhere "
                                          "(--plain-kernels: 6 x 16)");
  for (int k = 0; k < p->blocks[0]->n_ops; k++) { /* matmul's A: packed or in place */
    char a[160];
    if (dy_codegen_gemm_a(p, p->blocks[0]->ops[k], o->no_pack_a, a, sizeof a))
      printf("gemm %s (op %d, %s)\n", a, p->blocks[0]->ops[k]->id,
             dy_op_name(p->blocks[0]->ops[k]->kind));
  }
  if (ws)
    printf("weight-stationary: %d convolution%s (weight over 1 MB: several im2col panels "
           "at once; --plain-kernels: none)\n", ws, ws == 1 ? "" : "s");
}

/* --report's check of the generated code: kernels whose loops call the
 * scalar math functions themselves (dy_codegen_scalar_kernels). */
static void report_scalar(const char *source) {
  char names[400];
  int n = dy_codegen_scalar_kernels(source, names, sizeof names);
  if (n == 0)
    printf("scalar math: none (exp, tanh, erf, sigmoid, log in vector code)\n");
  else
    printf("scalar math: %d kernel%s call%s dy_expf & co. in scalar loops, vector code only "
           "if the C compiler makes it: %s%s\n", n, n == 1 ? "" : "s", n == 1 ? "s" : "",
           names, strlen(names) + 40 > sizeof names ? ", ..." : "");
}

/* --report's code and stack (measure.c): each function's bytes, the
 * stack bound and RAM with it. */
static void report_code(const dy_code_measure *m, const dy_compile_report *rep) {
  if (!m->cc_line[0]) {
    printf("code: not measured (%s)\n", m->stack_why);
    return;
  }
  printf("code: %lld bytes of text in %d functions (%s -c; each function's symbol size in "
         "the object, a kernel inlined into its caller counting there):\n",
         (long long)m->code_bytes, m->n_fns, m->cc_line);
  for (int i = 0; i < m->n_fns; i++)
    printf("  %8lld  %s\n", (long long)m->fns[i].bytes, m->fns[i].name);
  if (m->stack_bytes < 0) {
    printf("stack: unknown (%s)\n", m->stack_why);
    return;
  }
  printf("stack: %lld bytes, worst case of the run (%s)\n", (long long)m->stack_bytes,
         m->stack_why);
  printf("RAM: %lld bytes (arena %lld%s + stack %lld)\n",
         (long long)(rep->mem.arena_bytes + rep->state_bytes + m->stack_bytes),
         (long long)rep->mem.arena_bytes, rep->state_bytes ? " + state" : "",
         (long long)m->stack_bytes);
}

/* Measure the code and stack of co with o's compiler (--emit c always;
 * an executable for --report or --max-ram), state the stack in NAME.h
 * and check --max-ram against arena, state and stack. A compiler that
 * cannot build the file leaves them unmeasured (m->stack_why). */
static dy_status measure(dy_codegen_output *co, const dy_compile_options *o,
                         const dy_program *p, dy_code_measure *m, dy_error *err) {
  dy_error me = {0};
  if (o->progress)
    o->progress(o->progress_ctx, "measure", 0, 0);
  if (dy_measure_code(co, o, m, &me) != DY_OK) {
    snprintf(m->stack_why, sizeof m->stack_why, "%.190s", me.msg);
    m->cc_line[0] = 0;
    return DY_OK;
  }
  if (m->stack_bytes < 0)
    return DY_OK;
  char how[900];
  snprintf(how, sizeof how, "measured with %s", m->cc_line);
  for (char *c = how; (c = strstr(c, "*/")) != NULL;)
    *c = '_'; /* the comment stays a comment */
  dy_status s = dy_codegen_put_stack(co, (long long)m->stack_bytes, how, err);
  int64_t ram = co->arena_bytes + co->state_bytes + m->stack_bytes;
  if (!s && o->max_ram > 0 && ram > o->max_ram)
    s = dy_error_set(err, DY_STATUS_LIMIT,
                     "the arena%s (%lld bytes at batch %lld) and the stack (%lld bytes) need "
                     "%lld bytes, over --max-ram %lld",
                     co->state_bytes ? " and the state" : "",
                     (long long)(co->arena_bytes + co->state_bytes),
                     (long long)dy_program_sym_bound(p, 0), (long long)m->stack_bytes,
                     (long long)ram, (long long)o->max_ram);
  return s;
}

/* --report: ops, the arena and its lower bound, weights, kernel choices,
 * the kernels left in scalar math, a training step's state, code and
 * stack. */
static void print_report(const dy_program *p, const dy_compile_options *o,
                         const dy_compile_report *rep, const dy_codegen_output *co,
                         const dy_code_measure *m) {
  printf("ops: %d before passes, %d after\n", rep->ops_before, rep->ops_after);
  char at[512];
  sym_bounds_text(p, at, sizeof at);
  printf("arena: %lld bytes at %s (lower bound %lld, ratio %.3f)\n",
         (long long)rep->mem.arena_bytes, at, (long long)rep->mem.lower_bound,
         rep->mem.lower_bound ? (double)rep->mem.arena_bytes / (double)rep->mem.lower_bound
                              : 1.0);
  print_arena_formula(p);
  /* what the header's NAME_WEIGHT_BYTES says: the const data written,
   * packed copies and alignment included */
  if (co->weight_bytes != rep->mem.weight_bytes)
    printf("weights: %lld bytes (NAME_WEIGHT_BYTES; the parameters' %lld, plus packed copies "
           "and alignment)\n", (long long)co->weight_bytes, (long long)rep->mem.weight_bytes);
  else
    printf("weights: %lld bytes\n", (long long)co->weight_bytes);
  report_conv_algos(p);
  report_kernels(p, o);
  report_scalar(co->source);
  if (rep->state_bytes)
    printf("state: %lld bytes (parameters and optimizer state, in RAM; with the arena "
           "%lld bytes)\n", (long long)rep->state_bytes,
           (long long)(rep->state_bytes + rep->mem.arena_bytes));
  report_code(m, rep);
}

int dy_cli_compile(int argc, char **argv) {
  compile_args a = {.emit = "exe", .o = dy_compile_options_default()};
  dy_compile_options *o = &a.o;
  bool help = false;
  int rc = parse_args(&argc, argv, &a, &help);
  if (rc || help)
    return rc;
  dy_codegen_trainer trainer = {0};
  if ((rc = training_options(&a, &trainer)))
    return rc;
  const char *model = a.model, *out = a.out;
  size_t mlen = strlen(model);
  bool c_model = mlen > 2 && strcmp(model + mlen - 2, ".c") == 0;
  bool paddle_model = !c_model && dy_paddle_is_model_path(model);
  if (a.c_only && !c_model && !(paddle_model && !a.c_flags))
    return dy_cli_usage("compile", "--params, --seed and -- CFLAGS are for a C model "
                        "file (NET.c) (--params also for a Paddle model), not '%s'", model);
  char stem[512], ident[512], cmdline[2048];
  model_stem(model, stem, sizeof stem);
  if (!out)
    out = stem;
  const char *ob = strrchr(out, '/');
  dy_c_identifier(a.name ? a.name : (ob ? ob + 1 : out), ident, sizeof ident);
  if (a.name && strcmp(ident, a.name) != 0)
    return dy_cli_usage("compile", "--name '%s' is not a C identifier", a.name);
  join_args(argc, argv, cmdline, sizeof cmdline);
  o->name = ident;
  o->command_line = cmdline;
  o->source = base_name(model); /* the file's name, not its path: reproducible */
  o->emit_main = strcmp(a.emit, "exe") == 0;
  char header[600];
  if (!o->emit_main) { /* OUT.c includes OUT.h, whatever --name says */
    snprintf(header, sizeof header, "%s.h", ob ? ob + 1 : out);
    o->header = header;
  }

  dy_error err = {0};
  dy_program *p = NULL;
  dy_codegen_output co = {0};
  dy_compile_report rep;
  dy_status s;
  dy_cli_progress pr;
  dy_cli_progress_init(&pr, "compile", a.quiet);
  o->progress = dy_cli_progress_step;
  o->progress_ctx = &pr;
  dy_cli_progress_step(&pr, "import", 0, 0);
  if (c_model) {
    bool shown;
    a.cf.file = model;
    s = dy_cfront_load(&a.cf, &p, &shown, &err);
    if (s && shown) { /* the file:line:col and caret block said it all */
      dy_cli_progress_done(&pr);
      return 1;
    }
  } else {
    s = dy_cli_load_model(model, paddle_model ? a.cf.params : NULL, a.dims, a.n_dims, &p, &err);
  }
  dy_model_pair saved = {0};
  if (!s && a.save_model)
    s = save_model_encode(p, a.save_model, &saved, &err);
  if (!s)
    s = dy_cli_apply_dims(p, a.dims, a.n_dims, a.max_batch, &err);
  if (!s && a.train)
    s = dy_cli_make_training(p, &a.ts, false, &err);
  if (!s)
    s = dy_compile_program(p, o, &co, &rep, &err);
  dy_code_measure cm = {.stack_bytes = -1, .stack_why = "not asked for"};
  if (!s && (!o->emit_main || a.report || o->max_ram > 0))
    s = measure(&co, o, p, &cm, &err);
  if (!s)
    s = o->emit_main ? dy_build_executable(&co, o, out, &err)
                     : dy_write_sources(&co, out, &err);
  if (!s && a.save_model)
    s = dy_model_pair_write(&saved, &err);
  dy_cli_progress_done(&pr);
  if (!s && a.report) {
    print_report(p, o, &rep, &co, &cm);
    dy_cli_progress_times(&pr, stdout);
  }
  bool weights_file = co.weights != NULL;
  dy_code_measure_free(&cm);
  dy_codegen_output_free(&co);
  dy_program_free(p);
  if (!s && a.save_model)
    printf("wrote %s %s\n", saved.path[1], saved.path[0]);
  dy_model_pair_free(&saved);
  if (s)
    return dy_cli_fail(&err);
  if (o->emit_main)
    printf("wrote %s\n", out);
  else /* every file written, the weights' too */
    printf("wrote %s.c %s.h%s%s%s\n", out, out, weights_file ? " " : "",
           weights_file ? out : "", weights_file ? "_weights.c" : "");
  return 0;
}
