/* cmd_bench.c - `dy2stc bench`: compile a model and time the compiled code.
 *
 *   dy2stc bench MODEL [--batch N] [--runs N] [--threads N] [--target T]
 *                      [--cc CC] [--cflags F] [--per-op]
 *
 * The model (.dymodel or .onnx) goes through the whole compile path and is
 * built into an executable; random inputs (uniform in [-1, 1), seeded; 0
 * for integer and bool inputs) at the given batch are written as .npy, and
 * the executable's own `--bench N` times N runs after one warm-up inside
 * its process, so start-up and file I/O are not in the figures. Printed:
 *
 *   median 0.812 ms
 *   min 0.790 ms
 *   GFLOP/s 25.37 (20.61 MFLOP per run, from the median)
 *
 * FLOPs are counted from the compiled Program's ops (../driver/flops.c). --per-op
 * also times every kernel alone: each op of the compiled Program becomes a
 * one-op model (its weights kept constant, its other inputs random) that
 * is built and timed the same way, printed one line per op with a sum per
 * op kind. The ops inside a cond's branches and a while's blocks are timed
 * too, under a line naming their block: each run alone, multiplied by how
 * often it ran on the bench's inputs (the static executor counts them,
 * dy_program_op_runs: once a trip in a loop, 0 or 1 in a branch), as
 * "runs N x T ms = N*T ms"; the kind sums add these totals. This file only returns exit statuses; main() returns them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char bench_help[] =
    "usage: dy2stc bench MODEL [options]\n"
    "Compile MODEL, run it on random inputs and print the median and min time\n"
    "of the compiled code (timed inside its process) and its GFLOP/s.\n"
    "  --batch N       the dynamic dim (default 1)\n"
    "  --runs N        timed runs after one warm-up (default 100)\n"
    "  --threads N     as for compile (default 1)\n"
    "  --target T      as for compile (default native)\n"
    "  --cc CC, --cflags FLAGS   as for compile\n"
    "  --per-op        also time each op alone, with a sum per op kind\n"
    "  -O0..-O2, --disable-pass P[,P...], --winograd M, --plain-kernels, --no-pack-a\n"
    "                    as for compile\n"
    "  --report        also print the time of each phase (import, passes, cc, run)\n"
    "  --quiet, -q     no progress line (one is shown when stderr is a terminal)\n";

typedef struct {
  double median, min;   /* ms */
} timing;

/* A fresh random tensor for feed v at the batch. */
static dy_tensor *random_input(const dy_var *v, int64_t batch, uint64_t *seed) {
  dy_type t = v->type;
  for (int d = 0; d < t.rank; d++)
    if (t.shape[d] < 0)
      t.shape[d] = batch;
  dy_tensor *x = dy_tensor_new(t.dtype, t.rank, t.shape);
  if (!x)
    return NULL;
  int64_t n = dy_tensor_numel(x);
  if (t.dtype == DY_F32)
    for (int64_t i = 0; i < n; i++) {
      *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
      ((float *)x->data)[i] = (float)((double)(*seed >> 11) / 4503599627370496.0 - 1.0);
    }
  else
    memset(x->data, 0, (size_t)x->nbytes);
  return x;
}

/* The bench's inputs of p at the batch, one per feed (seeded: every call
 * gives the same); false on OOM (the ones made are freed). */
static bool bench_inputs(const dy_program *p, int64_t batch, dy_tensor **in) {
  uint64_t seed = 0x5eed;
  for (int i = 0; i < p->n_feeds; i++)
    if (!(in[i] = random_input(p->vars[p->feeds[i]], batch, &seed))) {
      for (int j = 0; j < i; j++)
        dy_tensor_free(in[j]);
      return false;
    }
  return true;
}

/* Compile p (consumed: the passes change it), build it in dir, run it on
 * random inputs with --bench runs, and read the times. flops gets the
 * Program's count at the batch, after the passes. */
static dy_status time_program(dy_program *p, const dy_compile_options *base, const char *dir,
                              int64_t batch, int64_t runs, timing *t, int64_t *flops,
                              dy_error *err) {
  dy_compile_options o = *base;
  o.emit_main = true;
  o.name = "model";
  dy_codegen_output co = {0};
  char exe[4200], out_txt[4200], outdir[4200];
  snprintf(exe, sizeof exe, "%s/model", dir);
  snprintf(out_txt, sizeof out_txt, "%s/times.txt", dir);
  snprintf(outdir, sizeof outdir, "%s/out", dir);
  dy_status s = dy_program_bound_sym(p, "batch", batch, err);
  if (!s)
    s = dy_compile_program(p, &o, &co, NULL, err);
  if (!s)
    s = dy_build_executable(&co, &o, exe, err);
  dy_codegen_output_free(&co);
  if (s)
    return s;
  *flops = dy_program_flops(p, batch);

  /* argv: [runner] exe --input NAME=FILE ... --output-dir D --bench N */
  char *argv[2 * DY_MAX_FEEDS + 8];
  char spec[DY_MAX_FEEDS][4400], nbuf[32];
  int n = 0;
  const char *tf, *runner = NULL;
  dy_target_flags(o.target, &tf, NULL, &runner, NULL);
  if (runner)
    argv[n++] = (char *)runner;
  argv[n++] = exe;
  dy_tensor *in[DY_MAX_FEEDS];
  if (!bench_inputs(p, batch, in))
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->n_feeds; i++) {
    char path[4300];
    snprintf(path, sizeof path, "%s/in%d.npy", dir, i);
    if (!s)
      s = dy_npy_write(path, in[i], err);
    dy_tensor_free(in[i]);
    snprintf(spec[i], sizeof spec[i], "%s=%s", p->vars[p->feeds[i]]->name, path);
    argv[n++] = "--input";
    argv[n++] = spec[i];
  }
  snprintf(nbuf, sizeof nbuf, "%lld", (long long)runs);
  argv[n++] = "--output-dir";
  argv[n++] = outdir;
  argv[n++] = "--bench";
  argv[n++] = nbuf;
  argv[n] = NULL;
  if (!s && o.progress)
    o.progress(o.progress_ctx, "run", 0, 0);
  if (!s)
    s = dy_run_command_to(argv, out_txt, err);
  if (!s) {
    FILE *f = fopen(out_txt, "r");
    char line[256];
    bool med = false, mn = false;
    while (f && fgets(line, sizeof line, f)) {
      med |= sscanf(line, "median %lf ms", &t->median) == 1;
      mn |= sscanf(line, "min %lf ms", &t->min) == 1;
    }
    if (f)
      fclose(f);
    if (!med || !mn)
      s = dy_error_set(err, DY_STATUS_IO, "%s printed no times", exe);
  }
  /* tidy the directory for the next program */
  for (int i = 0; i < p->n_feeds; i++) {
    char path[4300];
    snprintf(path, sizeof path, "%s/in%d.npy", dir, i);
    remove(path);
  }
  for (int i = 0; i < p->n_fetches; i++) {
    char safe[512], path[4800];
    dy_safe_file_name(p->vars[p->fetches[i]]->name, safe, sizeof safe);
    snprintf(path, sizeof path, "%s/%s.npy", outdir, safe);
    remove(path);
  }
  rmdir(outdir);
  remove(out_txt);
  remove(exe);
  return s;
}

/* Op k of p alone: its non-constant inputs become feeds, its output the
 * fetch. Caller frees. */
static dy_program *one_op(const dy_program *p, const dy_op *op, dy_error *err) {
  dy_program *q = dy_program_new();
  if (!q)
    return NULL;
  int ids[DY_MAX_OP_INPUTS], out;
  if (op->n_inputs > DY_MAX_OP_INPUTS || op->n_outputs != 1) {
    dy_program_free(q);
    return NULL;
  }
  for (int i = 0; i < op->n_inputs; i++) {
    const dy_var *v = p->vars[op->inputs[i]];
    char name[32];
    snprintf(name, sizeof name, "in%d", i);
    ids[i] = dy_program_add_var(q, name, &v->type);
    dy_status s = v->persistable
                      ? dy_program_set_data(q, ids[i], v->data,
                                            (size_t)dy_type_numel(&v->type) *
                                                dy_dtype_size(v->type.dtype), err)
                      : dy_program_add_feed(q, ids[i], err);
    if (s) {
      dy_program_free(q);
      return NULL;
    }
  }
  out = dy_program_add_var(q, "out", &p->vars[op->outputs[0]]->type);
  dy_program_append_op(q, 0, op->kind, ids, op->n_inputs, &out, 1, op->attrs, op->n_attrs,
                       op->loc);
  if (dy_program_add_fetch(q, out, err)) {
    dy_program_free(q);
    return NULL;
  }
  return q;
}

static void print_rate(const char *what, double ms, int64_t flops) {
  printf("%s %.4g ms", what, ms);
  if (flops > 0 && ms > 0)
    printf("  %.2f GFLOP/s", (double)flops / (ms * 1e6));
  printf("\n");
}

/* bench --per-op: each op of the compiled Program p built and timed
 * alone, one line each (an op inside a branch or loop times how often it
 * ran), then the sums per op kind. */
static dy_status per_op_times(const dy_program *p, const dy_compile_options *o,
                              const char *dir, int64_t batch, int64_t runs, dy_cli_progress *pr,
                              dy_error *err) {
  dy_status s = DY_OK;
  enum { KINDS = DY_OP_COUNT };
  double kind_ms[KINDS] = {0};
  int64_t kind_flops[KINDS] = {0};
  int kind_n[KINDS] = {0};
  printf("\nper op (each built and timed alone, median of %lld runs):\n", (long long)runs);
  /* how often each op runs on the bench's inputs: an op inside a loop
   * body once a trip, one inside a branch once if it is taken */
  int n_slots = dy_program_count_ops(p);
  int64_t *op_runs = calloc((size_t)n_slots + 1, sizeof *op_runs);
  dy_tensor *in[DY_MAX_FEEDS];
  if (!op_runs || !bench_inputs(p, batch, in)) {
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  } else {
    s = dy_program_op_runs(p, in, op_runs, err);
    for (int i = 0; i < p->n_feeds; i++)
      dy_tensor_free(in[i]);
  }
  for (int bi = 0; bi < p->n_blocks && !s; bi++) {
    const dy_block *b = p->blocks[bi];
    if (bi > 0) {
      int ob = -1;
      const dy_op *owner = dy_block_owner(p, bi, &ob, NULL);
      printf(" block %d (of op %d, %s):\n", bi, owner ? owner->id : -1,
             owner ? dy_op_name(owner->kind) : "?");
    }
    for (int k = 0; k < b->n_ops && !s; k++) {
      const dy_op *op = b->ops[k];
      if (dy_op_has(op, DY_OPF_VIEW) || op->n_outputs != 1 || dy_op_sub_blocks(op, (int[2]){0}))
        continue; /* no kernel of its own; a control op's kernels are its blocks' */
      dy_program *q = one_op(p, op, err);
      if (!q) {
        if (!err->msg[0])
          dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "op %d: cannot copy it", op->id);
        s = DY_STATUS_INVALID_ARGUMENT;
        break;
      }
      dy_compile_options oo = *o;
      oo.passes.opt_level = 0;
      oo.progress = NULL; /* one line per op instead of its phases */
      dy_cli_progress_step(pr, "op", k, b->n_ops);
      timing u = {0};
      int64_t f = 0;
      s = time_program(q, &oo, dir, batch, runs, &u, &f, err);
      dy_program_free(q);
      if (s)
        break;
      /* an op inside a branch or a loop: its time summed over its runs */
      int64_t n_run = bi > 0 ? op_runs[dy_codegen_op_slot(p, bi, k)] : 1;
      char ts[160], label[360];
      dy_type_str(&p->vars[op->outputs[0]]->type, ts, sizeof ts);
      int len = snprintf(label, sizeof label, "  op %-4d %-18s -> %-22s", op->id,
                         dy_op_name(op->kind), ts);
      if (bi > 0 && len > 0 && (size_t)len < sizeof label)
        snprintf(label + len, sizeof label - (size_t)len, " runs %lld x %.4g ms =",
                 (long long)n_run, u.median);
      print_rate(label, u.median * (double)n_run, f * n_run);
      kind_ms[op->kind] += u.median * (double)n_run;
      kind_flops[op->kind] += f * n_run;
      kind_n[op->kind]++;
    }
  }
  free(op_runs);
  dy_cli_progress_done(pr);
  if (!s) {
    printf("per op kind (sums):\n");
    for (int k = 0; k < KINDS; k++)
      if (kind_n[k]) {
        char label[128];
        snprintf(label, sizeof label, "  %-18s x%-3d", dy_op_name((dy_op_kind)k), kind_n[k]);
        print_rate(label, kind_ms[k], kind_flops[k]);
      }
  }
  return s;
}

int dy_cli_bench(int argc, char **argv) {
  const char *model = NULL;
  int64_t batch = 1, runs = 100, threads = 1;
  bool per_op = false, quiet = false, report = false;
  dy_compile_options o = dy_compile_options_default();
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    int po;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(bench_help, stdout);
      return 0;
    } else if (strcmp(a, "--batch") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, DY_MAX_BATCH, &batch))
        return dy_cli_usage("bench", "--batch needs an integer from 1 to 2147483648, not '%s'",
                            argv[i]);
    } else if (strcmp(a, "--runs") == 0 && has) {
      if (!dy_cli_range(argv[++i], 1, 1000000, &runs))
        return dy_cli_usage("bench", "--runs needs a count from 1 to 1000000, not '%s'", argv[i]);
    } else if (strcmp(a, "--threads") == 0 && has) {
      if (!dy_cli_positive(argv[++i], &threads) || threads > 64)
        return dy_cli_usage("bench", "--threads needs a count from 1 to 64, not '%s'", argv[i]);
    } else if (strcmp(a, "--target") == 0 && has) {
      const char *f;
      o.target = argv[++i];
      if (dy_target_flags(o.target, &f, NULL, NULL, NULL))
        return dy_cli_usage("bench", "unknown --target '%s'", o.target);
    } else if (strcmp(a, "--cc") == 0 && has) {
      o.cc = argv[++i];
    } else if (strcmp(a, "--cflags") == 0 && has) {
      o.cflags = argv[++i];
    } else if ((po = dy_cli_pass_option("bench", argc, argv, &i, &o.passes)) != 0) {
      if (po < 0)
        return 2;
    } else if (strcmp(a, "--plain-kernels") == 0) {
      o.plain_kernels = true;
    } else if (strcmp(a, "--no-pack-a") == 0) {
      o.no_pack_a = true;
    } else if (strcmp(a, "--per-op") == 0) {
      per_op = true;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      quiet = true;
    } else if (strcmp(a, "--report") == 0) {
      report = true;
    } else if (a[0] == '-') {
      return dy_cli_usage("bench", "unknown or incomplete option '%s'", a);
    } else if (!model) {
      model = a;
    } else {
      return dy_cli_usage("bench", "unexpected argument '%s'", a);
    }
  }
  if (!model)
    return dy_cli_usage("bench", "%s", "no model given");
  o.threads = (int)threads;
  o.source = model;

  dy_error err = {0};
  dy_program *p = NULL;
  char dir[4096];
  if (dy_temp_dir_make("dy2stc-bench", dir, sizeof dir, &err))
    return dy_cli_fail(&err);
  timing t = {0};
  int64_t flops = 0;
  dy_cli_progress pr;
  dy_cli_progress_init(&pr, "bench", quiet);
  o.progress = dy_cli_progress_step;
  o.progress_ctx = &pr;
  dy_cli_progress_step(&pr, "import", 0, 0);
  dy_status s = dy_model_load_any(model, &p, &err);
  if (!s)
    s = time_program(p, &o, dir, batch, runs, &t, &flops, &err);
  dy_cli_progress_done(&pr);
  if (!s) {
    printf("model %s  batch %lld  runs %lld  target %s  threads %lld\n", model,
           (long long)batch, (long long)runs, o.target ? o.target : "native",
           (long long)threads);
    printf("median %.4g ms\nmin %.4g ms\n", t.median, t.min);
    printf("GFLOP/s %.2f (%.3f MFLOP per run, from the median)\n",
           t.median > 0 ? (double)flops / (t.median * 1e6) : 0.0, (double)flops / 1e6);
  }
  if (!s && per_op) /* p is the compiled Program now: time each of its kernels alone */
    s = per_op_times(p, &o, dir, batch, runs, &pr, &err);
  if (!s && report)
    dy_cli_progress_times(&pr, stdout);
  dy_program_free(p);
  dy_temp_dir_remove(dir);
  return s ? dy_cli_fail(&err) : 0;
}
