/* difftest_run.c - running the differential tester's programs (dt_check)
 * and minimising a mismatch (dt_minimise); difftest.h has the contract.
 *
 * dt_check writes each program's inputs as .bin files and its C for each
 * compiled mode (symbol prefix p<i>_<mode>), one driver main() that runs
 * them all and saves the fetches, compiles the translation units two at a
 * time, and compares everything with the eager values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest_gen.h"
#include "dy_test.h"

/* ---- running ---- */

static bool write_bin(const char *path, const dy_tensor *t) {
  dy_error err = {0};
  return dy_write_file_atomic(path, t->data, t->nbytes, &err) == DY_OK;
}

/* got (data of ref's type) agrees with the eager ref: exact for integers
 * and bools, within tol otherwise; else prints the first difference. */
static bool agree(const dt_prog *g, int mode, int f, const void *got, const dy_tensor *ref,
                  FILE *log) {
  dy_tensor t = *ref;
  t.data = (void *)got;
  double tol = ref->type.dtype == DY_F32 ? dt_tol(g) : 0;
  for (int64_t k = 0; k < dy_tensor_numel(ref); k++) {
    double a = dt_value_at(&t, k), b = dt_value_at(ref, k);
    if (fabs(a - b) <= tol * (1 + fabs(b)) || (isnan(a) && isnan(b)))
      continue;
    if (log)
      fprintf(log, "seed %llu: %s: fetch %d element %lld is %.9g, eager %.9g (tol %g)\n",
              (unsigned long long)g->seed, dt_mode_name(mode), f, (long long)k, a, b, tol);
    return false;
  }
  return true;
}

static int run_executor(const dt_prog *g, FILE *log) {
  dy_error err = {0};
  dy_program *p = dt_program(g, &err);
  dy_tensor *in[DT_MAX_VALS], *out[DT_MAX_FETCH] = {0};
  int n = 0, bad = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (g->v[v].kind == DT_FEED)
      in[n++] = g->v[v].t;
  if (!p || dy_executor_run(p, in, n, out, g->n_fetch, &err)) {
    if (log)
      fprintf(log, "seed %llu: executor: %s\n", (unsigned long long)g->seed, err.msg);
    bad = DT_EXEC;
  }
  for (int f = 0; !bad && f < g->n_fetch; f++) {
    const dy_tensor *ref = g->v[g->fetch[f]].t;
    if (!dy_type_equal(&out[f]->type, &ref->type) || !agree(g, DT_EXEC, f, out[f]->data, ref, log))
      bad = DT_EXEC;
  }
  for (int f = 0; f < g->n_fetch; f++)
    dy_tensor_free(out[f]);
  dy_program_free(p);
  return bad;
}

static const int compiled_modes[3] = {DT_O0, DT_O2, DT_T2};
static const char *const mode_tag[3] = {"o0", "o2", "t2"};

/* The driver's block running compiled program `name` (g) as block k:
 * inputs from in_<i>_<feed>.bin, outputs to out_<name>_<fetch>.bin. */
static void driver_block(dy_buf *b, const dt_prog *g, int i, const char *name, int k) {
  char up[32];
  size_t len = strlen(name);
  for (size_t c = 0; c <= len; c++)
    up[c] = (char)(name[c] >= 'a' && name[c] <= 'z' ? name[c] - 32 : name[c]);
  dy_buf_printf(b, "  if (only < 0 || only == %d) { /* %s */\n    const void *in[%d]; void *out[%d];\n",
                k, name, DT_MAX_VALS, DT_MAX_FETCH);
  int nf = 0;
  for (int v = 0; v < g->n_vals; v++)
    if (g->v[v].kind == DT_FEED) {
      dy_buf_printf(b, "    in[%d] = load(\"in_%d_%d.bin\", %zu);\n", nf, i, nf, g->v[v].t->nbytes);
      nf++;
    }
  for (int f = 0; f < g->n_fetch; f++)
    dy_buf_printf(b, "    out[%d] = malloc(%zu + 1);\n", f, g->v[g->fetch[f]].t->nbytes);
  dy_buf_printf(b,
                "    void *arena = malloc(%s_ARENA_BYTES + 64);\n"
                "    int rc = %s_run_v(arena, %lld, in, out);\n"
                "    if (rc) fprintf(stderr, \"%s: status %%d\\n\", rc);\n",
                up, name, (long long)g->batch, name);
  for (int f = 0; f < g->n_fetch; f++)
    dy_buf_printf(b, "    if (!rc) save(\"out_%s_%d.bin\", out[%d], %zu);\n", name, f, f,
                  g->v[g->fetch[f]].t->nbytes);
  dy_buf_printf(b, "    free(arena);\n");
  for (int f = 0; f < g->n_fetch; f++)
    dy_buf_printf(b, "    free(out[%d]);\n", f);
  for (int k2 = 0; k2 < nf; k2++)
    dy_buf_printf(b, "    free((void *)in[%d]);\n", k2);
  dy_buf_printf(b, "  }\n");
}

static bool file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f)
    fclose(f);
  return f != NULL;
}

bool dt_check(dt_prog *const *progs, int n, int modes, const char *dir, int *bad, FILE *log) {
  dy_test_sh(NULL, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  dy_buf srcs = {0};
  char path[1024];
  dy_error err = {0};
  /* the executor, the inputs and the C of every compiled mode */
  for (int i = 0; i < n; i++) {
    const dt_prog *g = progs[i];
    bad[i] = (modes & DT_EXEC) ? run_executor(g, log) : 0;
    int nf = 0;
    for (int v = 0; v < g->n_vals; v++)
      if (g->v[v].kind == DT_FEED) {
        snprintf(path, sizeof path, "%s/in_%d_%d.bin", dir, i, nf++);
        write_bin(path, g->v[v].t);
      }
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]))
        continue;
      dy_program *p = dt_program(g, &err);
      char name[32];
      snprintf(name, sizeof name, "p%d_%s", i, mode_tag[m]);
      dy_compile_options o = dy_compile_options_default();
      o.name = name;
      if (p && dy_program_bound_sym(p, "batch", g->max_batch, &err) != DY_OK) {
        dy_program_free(p);
        p = NULL;
      }
      o.passes.opt_level = m == 0 ? 0 : 2;
      o.threads = m == 2 ? 2 : 0;
      /* the threaded build also runs every 3x3 stride-1 conv with a
       * constant weight as Winograd, F(2x2), F(4x4) or F(6x6) by seed */
      o.passes.winograd = m == 2 ? 2 + 2 * (int)(g->seed % 3) : 0;
      o.source = "difftest";
      dy_codegen_output co = {0};
      if (!p || dy_compile_program(p, &o, &co, NULL, &err)) {
        if (log)
          fprintf(log, "seed %llu: %s: compile: %s\n", (unsigned long long)g->seed,
                  dt_mode_name(compiled_modes[m]), err.msg);
        bad[i] |= compiled_modes[m];
      } else {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        dy_write_sources(&co, path, &err);
        /* -O0 programs built at -O1 for the SSE2 path, the others as
         * dy2stc builds them (-O2 here, the native instruction set); the
         * threaded ones split every kernel they can, however small (the
         * threshold the generated code lets -D change) */
        dy_buf_printf(&srcs, "%s.c %s\n", name,
                      m == 0 ? "-O1" : m == 1 ? "-O2 NATIVE" : "-O2 NATIVE -DDY_THREAD_MIN_WORK=1");
        if (co.weights) /* the weights' own translation unit */
          dy_buf_printf(&srcs, "%s_weights.c -O0\n", name);
      }
      dy_codegen_output_free(&co);
      dy_program_free(p);
    }
  }
  if (!srcs.s)
    return true;
  const char *tf = NULL;
  dy_target_flags(NULL, &tf, NULL, NULL, NULL);
  const char *cc_env = getenv("CC");
  const char *cc = cc_env && *cc_env ? cc_env : "cc";
  snprintf(path, sizeof path, "%s/sources.txt", dir);
  dy_write_file_atomic(path, srcs.s, srcs.len, &err);
  dy_buf_free(&srcs);
  /* two translation units at a time; one that does not build is that
   * program's failure (no .o) */
  dy_test_sh(NULL,
             "cd '%s' && sed 's/NATIVE/%s/' sources.txt | xargs -P 2 -L 1 sh -c "
             "'%s -std=c99 -w -pthread \"$@\" -c $0 || echo FAILED $0' > build.log 2>&1",
             dir, tf ? tf : "", cc);
  dy_buf drv = {0};
  int n_blocks = 0;
  for (int i = 0; i < n; i++)
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]) || (bad[i] & compiled_modes[m]))
        continue;
      char name[32];
      snprintf(name, sizeof name, "p%d_%s", i, mode_tag[m]);
      snprintf(path, sizeof path, "%s/%s.o", dir, name);
      if (!file_exists(path)) {
        if (log)
          fprintf(log, "seed %llu: %s: the emitted C does not compile (%s/build.log)\n",
                  (unsigned long long)progs[i]->seed, dt_mode_name(compiled_modes[m]), dir);
        bad[i] |= compiled_modes[m];
        continue;
      }
      dy_buf_printf(&drv, "#include \"%s.h\"\n", name);
      n_blocks++;
    }
  dy_buf_printf(&drv, "%s#include <stdlib.h>\nint main(int argc, char **argv) {\n"
                      "  int only = argc > 1 ? atoi(argv[1]) : -1;\n", dy_test_driver_io);
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]) || (bad[i] & compiled_modes[m]))
        continue;
      char name[32];
      snprintf(name, sizeof name, "p%d_%s", i, mode_tag[m]);
      driver_block(&drv, progs[i], i, name, k++);
    }
  dy_buf_printf(&drv, "  return 0;\n}\n");
  snprintf(path, sizeof path, "%s/driver.c", dir);
  dy_write_file_atomic(path, drv.s, drv.len, &err);
  dy_buf_free(&drv);
  bool ok = true;
  if (n_blocks) {
    int rc = dy_test_sh(NULL, "cd '%s' && %s -std=c11 -O1 -w -c driver.c >> build.log 2>&1 && "
                              "%s -o driver *.o -pthread -lm >> build.log 2>&1",
                        dir, cc, cc);
    if (rc) {
      dy_test_sh(NULL, "tail -5 '%s/build.log' >&2", dir);
      ok = false;
    } else if (dy_test_sh(NULL, "cd '%s' && ./driver > run.log 2>&1", dir)) {
      /* a crash: each block alone, so that the others still count */
      for (int b = 0; b < n_blocks; b++)
        dy_test_sh(NULL, "cd '%s' && ./driver %d >> run.log 2>&1", dir, b);
    }
  }
  for (int i = 0; i < n; i++)
    for (int m = 0; m < 3; m++) {
      if (!(modes & compiled_modes[m]) || (bad[i] & compiled_modes[m]))
        continue;
      for (int f = 0; f < progs[i]->n_fetch; f++) {
        const dy_tensor *ref = progs[i]->v[progs[i]->fetch[f]].t;
        snprintf(path, sizeof path, "%s/out_p%d_%s_%d.bin", dir, i, mode_tag[m], f);
        uint8_t *buf = NULL;
        size_t len = 0;
        if (dy_read_file(path, &buf, &len, &err) || len != ref->nbytes) {
          if (log)
            fprintf(log, "seed %llu: %s: no output %d (a status or a crash: %s/run.log)\n",
                    (unsigned long long)progs[i]->seed, dt_mode_name(compiled_modes[m]), f, dir);
          bad[i] |= compiled_modes[m];
          free(buf);
          break;
        }
        bool same = agree(progs[i], compiled_modes[m], f, buf, ref, log);
        free(buf);
        if (!same) {
          bad[i] |= compiled_modes[m];
          break;
        }
      }
    }
  return ok;
}

/* ---- minimising ---- */

/* g rebuilt at (batch, max_batch) without the ops drop marks: a reader of
 * a dropped op's result reads the op's first input instead when its
 * declared type is the same, else goes too; a fetch of it fetches the
 * newest op result it reads. Feed shrink_val (or none: -1) has its dim shrink_dim halved. Only
 * the feeds and constants still read stay; feeds are regenerated from
 * their seeds, results recomputed eagerly. NULL when the rest is refused
 * (inference, the kernel) or nothing is left to fetch. */
static dt_prog *rebuild(const dt_prog *g, const bool *drop, int64_t batch, int64_t max_batch,
                        int shrink_val, int shrink_dim) {
  dt_prog *h = calloc(1, sizeof *h);
  if (!h)
    return NULL;
  h->seed = g->seed;
  h->batch = batch;
  h->max_batch = max_batch;
  h->rng = g->rng;
  /* map: old value -> new; alt: what a fetch of a dropped op's result
   * becomes (the newest op result it reads, whatever its type) */
  int map[DT_MAX_VALS], alt[DT_MAX_VALS];
  for (int v = 0; v < g->n_vals; v++)
    map[v] = alt[v] = -1;
  for (int k = 0; k < g->n_ops; k++) {
    const dt_op *o = &g->ops[k];
    bool gone = drop[k];
    dt_op c = *o;
    for (int i = 0; i < o->n_in && !gone; i++) {
      int v = o->in[i];
      if (map[v] < 0 && g->v[v].kind == DT_FEED) { /* feeds and constants when used */
        dy_type ft = g->v[v].type;
        if (v == shrink_val)
          ft.shape[shrink_dim] = (ft.shape[shrink_dim] + 1) / 2;
        map[v] = dt_add_val(h, DT_FEED, &ft,
                         batch == g->batch && v != shrink_val
                             ? dy_keep(g->v[v].t)
                             : dt_random_tensor(&ft, batch, g->v[v].seed, g->v[v].lo, g->v[v].hi));
        if (map[v] < 0)
          goto fail;
        h->v[map[v]].seed = g->v[v].seed;
        h->v[map[v]].lo = g->v[v].lo;
        h->v[map[v]].hi = g->v[v].hi;
      } else if (map[v] < 0 && g->v[v].kind == DT_CONST) {
        map[v] = dt_add_val(h, DT_CONST, &g->v[v].type, dy_keep(g->v[v].t));
        if (map[v] < 0)
          goto fail;
      }
      gone = map[v] < 0;
      c.in[i] = map[v];
    }
    if (gone) {
      int a = o->n_in ? o->in[0] : -1;
      map[o->out] = a >= 0 && map[a] >= 0 && dy_type_equal(&g->v[a].type, &g->v[o->out].type)
                        ? map[a]
                        : -1;
      for (int i = 0; i < o->n_in; i++) { /* the newest op result it reads */
        int b = map[o->in[i]] >= 0 ? map[o->in[i]] : alt[o->in[i]];
        if (b >= 0 && h->v[b].kind == DT_OPV && b > alt[o->out])
          alt[o->out] = b;
      }
      continue;
    }
    dy_type decl;
    dy_tensor *in[DT_MAX_IN];
    for (int i = 0; i < c.n_in; i++)
      in[i] = h->v[c.in[i]].t;
    if (!dt_infer_decl(h, &c, &decl))
      goto fail;
    dy_tensor *y = dt_apply_op(&c, in);
    if (!y)
      goto fail;
    c.out = dt_add_val(h, DT_OPV, &decl, y);
    if (c.out < 0)
      goto fail;
    map[o->out] = c.out;
    h->ops[h->n_ops++] = c;
  }
  for (int f = 0; f < g->n_fetch; f++) {
    int v = map[g->fetch[f]];
    if (v < 0 || h->v[v].kind != DT_OPV)
      v = alt[g->fetch[f]];
    bool dup = false;
    for (int j = 0; j < h->n_fetch; j++)
      dup |= h->fetch[j] == v;
    if (v >= 0 && h->v[v].kind == DT_OPV && !dup)
      h->fetch[h->n_fetch++] = v;
  }
  if (h->n_fetch == 0)
    goto fail;
  return h;
fail:
  dt_free(h);
  return NULL;
}

static bool still_bad(dt_prog *h, int mode, const char *dir, int *budget) {
  int bad = 0;
  if (!h || *budget <= 0)
    return false;
  (*budget)--;
  return dt_check(&h, 1, mode, dir, &bad, NULL) && (bad & mode);
}

dt_prog *dt_minimise(const dt_prog *g, int mode, const char *dir) {
  bool none[DT_MAX_OPS] = {0};
  dt_prog *cur = rebuild(g, none, g->batch, g->max_batch, -1, 0);
  int budget = 120;
  bool shrunk = false, changed = true;
  while (cur && changed && budget > 0) {
    changed = false;
    for (int k = cur->n_ops - 1; k >= 0 && budget > 0; k--) {
      bool drop[DT_MAX_OPS] = {0};
      drop[k] = true;
      dt_prog *h = rebuild(cur, drop, cur->batch, cur->max_batch, -1, 0);
      if (still_bad(h, mode, dir, &budget)) {
        dt_free(cur);
        cur = h;
        changed = shrunk = true;
      } else {
        dt_free(h);
      }
    }
    if (cur->batch > 1 || cur->max_batch > 1) { /* the smallest batch */
      dt_prog *h = rebuild(cur, none, 1, 1, -1, 0);
      if (still_bad(h, mode, dir, &budget)) {
        dt_free(cur);
        cur = h;
        changed = shrunk = true;
      } else {
        dt_free(h);
      }
    }
    /* smaller feeds: each static dim halved (what their consts and
     * attributes still allow) */
    for (int v = 0; v < cur->n_vals && budget > 0; v++)
      for (int d = 0; cur->v[v].kind == DT_FEED && d < cur->v[v].type.rank; d++) {
        if (cur->v[v].type.shape[d] < 2)
          continue;
        dt_prog *h = rebuild(cur, none, cur->batch, cur->max_batch, v, d);
        if (still_bad(h, mode, dir, &budget)) {
          dt_free(cur);
          cur = h;
          changed = shrunk = true;
        } else {
          dt_free(h);
        }
      }
  }
  if (!shrunk) {
    dt_free(cur);
    return NULL;
  }
  return cur;
}
