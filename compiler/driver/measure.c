/* measure.c - what the generated NAME.c costs on the target: the code
 * bytes of each function and a worst-case stack bound of NAME_run, both
 * from one compile of NAME.c with the C compiler the code is meant for.
 *
 * dy_measure_code writes NAME.h and NAME.c into a private directory
 * (dy_temp_dir_make) and runs
 *
 *   CC -std=c11 -O2 [--target flags] [cflags] -c NAME.c -o NAME.o
 *      -fstack-usage -fcallgraph-info=su
 *
 * (-O3 and the target's flags for an executable, as dy_build_executable
 * builds it; for --emit c -O2, the firmware build's level, the target's
 * flags only when --target is given, and --cflags after them, so a
 * cross compiler and its -mcpu take over: `--cc arm-none-eabi-gcc
 * --cflags "-mcpu=cortex-m4 ..."`). Then:
 *
 *   code   the size of every FUNC symbol in NAME.o's ELF symbol table
 *          (ELF32 or ELF64, little-endian): the bytes of text each
 *          emitted function has. A kernel the compiler inlined into
 *          NAME_run has no symbol: its code counts in NAME_run's.
 *   stack  gcc's call graph after inlining (NAME.ci, gcc 10 or later),
 *          whose nodes carry each function's frame (-fstack-usage: the
 *          bytes its prologue allocates, pushed registers included): the
 *          largest sum of frames on a path from NAME_run, plus
 *          DY_EXTERN_STACK bytes for each call of a function outside
 *          NAME.c (memcpy, memset, libgcc's __aeabi_* helpers: leaves
 *          that push a few registers). The generated code has no
 *          recursion and, single-threaded, no indirect calls, so the
 *          graph is a DAG and the sum is a bound. A frame gcc reports as
 *          dynamic (a VLA) without a bound, a call through a pointer
 *          (--threads) or a cycle leaves the stack unknown (-1), with
 *          the reason.
 *
 * On the host the compiler is the host's: the bound is that target's,
 * needs no ARM toolchain, and a compiler without -fcallgraph-info (clang)
 * leaves it unknown with that reason. A build's own figure is measured
 * with the build's compiler and flags.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_driver.h"

enum { MAX_FNS = 4096, MAX_EDGES = 65536, NAME_MAX_LEN = 127 };

/* ---- the ELF symbol table: each function's size ---- */

static uint64_t rd(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static int fn_cmp(const void *a, const void *b) {
  const dy_code_fn *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The FUNC symbols of the object bytes o[0, n) into m (sorted, largest
 * first); false if it is no little-endian ELF object. */
static bool elf_functions(const uint8_t *o, size_t n, dy_code_measure *m) {
  if (n < 64 || memcmp(o, "\177ELF", 4) != 0 || o[5] != 1)
    return false;
  bool e64 = o[4] == 2;
  uint64_t shoff = e64 ? rd(o + 40, 8) : rd(o + 32, 4);
  unsigned shentsize = (unsigned)rd(o + (e64 ? 58 : 46), 2);
  unsigned shnum = (unsigned)rd(o + (e64 ? 60 : 48), 2);
  if (shoff >= n || shentsize < (e64 ? 64u : 40u) || shoff + (uint64_t)shnum * shentsize > n)
    return false;
  m->fns = calloc(MAX_FNS, sizeof *m->fns);
  if (!m->fns)
    return false;
  for (unsigned i = 0; i < shnum; i++) {
    const uint8_t *sh = o + shoff + (uint64_t)i * shentsize;
    if (rd(sh + 4, 4) != 2) /* SHT_SYMTAB */
      continue;
    uint64_t off = e64 ? rd(sh + 24, 8) : rd(sh + 16, 4);
    uint64_t size = e64 ? rd(sh + 32, 8) : rd(sh + 20, 4);
    unsigned link = (unsigned)rd(sh + (e64 ? 40 : 24), 4);
    uint64_t ent = e64 ? 24 : 16;
    if (link >= shnum || off + size > n)
      return false;
    const uint8_t *st = o + shoff + (uint64_t)link * shentsize;
    uint64_t stroff = e64 ? rd(st + 24, 8) : rd(st + 16, 4);
    uint64_t strsize = e64 ? rd(st + 32, 8) : rd(st + 20, 4);
    if (stroff + strsize > n)
      return false;
    for (uint64_t k = 0; k + ent <= size && m->n_fns < MAX_FNS; k += ent) {
      const uint8_t *s = o + off + k;
      unsigned info = e64 ? s[4] : s[12];
      uint64_t name = rd(s, 4), bytes = e64 ? rd(s + 16, 8) : rd(s + 8, 4);
      if ((info & 15) != 2 || bytes == 0 || name >= strsize) /* STT_FUNC */
        continue;
      dy_code_fn *f = &m->fns[m->n_fns++];
      snprintf(f->name, sizeof f->name, "%.*s", (int)strnlen((const char *)o + stroff + name,
                                                            strsize - name),
               (const char *)o + stroff + name);
      f->bytes = (int64_t)bytes;
      m->code_bytes += (int64_t)bytes;
    }
  }
  qsort(m->fns, (size_t)m->n_fns, sizeof *m->fns, fn_cmp);
  return true;
}

/* ---- gcc's call graph (-fcallgraph-info=su): the deepest stack ---- */

typedef struct {
  char name[NAME_MAX_LEN + 1];
  int64_t frame; /* bytes; -1: outside NAME.c (no frame given) */
  bool dynamic;  /* a frame gcc could not bound */
  int64_t depth; /* the deepest stack from here (-2: being visited) */
} cg_node;

typedef struct {
  cg_node *nodes;
  int n;
  int (*edges)[2];
  int n_edges;
  char why[200];
} call_graph;

/* The text of `"key: "VALUE"` in line, into buf. */
static bool quoted(const char *line, const char *key, char *buf, size_t n) {
  const char *s = strstr(line, key);
  if (!s || !(s = strchr(s + strlen(key), '"')))
    return false;
  const char *e = strchr(++s, '"');
  if (!e || (size_t)(e - s) >= n)
    return false;
  memcpy(buf, s, (size_t)(e - s));
  buf[e - s] = 0;
  return true;
}

static int node_of(call_graph *g, const char *name) {
  for (int i = 0; i < g->n; i++)
    if (strcmp(g->nodes[i].name, name) == 0)
      return i;
  if (g->n == MAX_FNS)
    return -1;
  cg_node *v = &g->nodes[g->n];
  snprintf(v->name, sizeof v->name, "%s", name);
  v->frame = -1;
  v->depth = -1;
  return g->n++;
}

/* Read NAME.ci's nodes (their frames) and edges. */
static bool read_graph(const char *text, call_graph *g) {
  char line[1024], a[NAME_MAX_LEN + 1], b[NAME_MAX_LEN + 1], label[600];
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
    p += n + (p[n] == '\n');
    if (strncmp(line, "node:", 5) == 0 && quoted(line, "title:", a, sizeof a)) {
      int v = node_of(g, a);
      if (v < 0)
        return false;
      const char *by = quoted(line, "label:", label, sizeof label) ? strstr(label, " bytes (")
                                                                   : NULL;
      if (by) { /* "...\n48 bytes (static)" */
        const char *d = by;
        while (d > label && d[-1] >= '0' && d[-1] <= '9')
          d--;
        g->nodes[v].frame = strtoll(d, NULL, 10);
        g->nodes[v].dynamic = strncmp(by, " bytes (dynamic", 15) == 0 &&
                              !strstr(by, "bounded");
      }
    } else if (strncmp(line, "edge:", 5) == 0 && quoted(line, "sourcename:", a, sizeof a) &&
               quoted(line, "targetname:", b, sizeof b)) {
      int u = node_of(g, a), v = node_of(g, b);
      if (u < 0 || v < 0 || g->n_edges == MAX_EDGES)
        return false;
      g->edges[g->n_edges][0] = u;
      g->edges[g->n_edges++][1] = v;
    }
  }
  return true;
}

/* The deepest stack from node v (its frame and its deepest callee's), or
 * -1 with g->why. */
static int64_t deepest(call_graph *g, int v) {
  cg_node *x = &g->nodes[v];
  if (x->depth == -2) {
    snprintf(g->why, sizeof g->why, "a call cycle through %s", x->name);
    return -1;
  }
  if (x->depth >= 0)
    return x->depth;
  if (x->frame < 0) { /* outside NAME.c */
    if (strstr(x->name, "indirect")) {
      snprintf(g->why, sizeof g->why, "a call through a function pointer (--threads)");
      return -1;
    }
    return x->depth = DY_EXTERN_STACK;
  }
  if (x->dynamic) {
    snprintf(g->why, sizeof g->why, "%s has a frame of run-time size", x->name);
    return -1;
  }
  x->depth = -2;
  int64_t most = 0;
  for (int e = 0; e < g->n_edges; e++)
    if (g->edges[e][0] == v) {
      int64_t d = deepest(g, g->edges[e][1]);
      if (d < 0)
        return -1;
      most = d > most ? d : most;
    }
  return x->depth = x->frame + most;
}

static void stack_bound(const char *ci, const char *run, dy_code_measure *m) {
  call_graph g = {.nodes = calloc(MAX_FNS, sizeof(cg_node)),
                  .edges = calloc(MAX_EDGES, sizeof(int[2]))};
  m->stack_bytes = -1;
  if (!g.nodes || !g.edges || !read_graph(ci, &g)) {
    snprintf(m->stack_why, sizeof m->stack_why, "the call graph could not be read");
  } else {
    int r = -1;
    for (int i = 0; i < g.n; i++)
      if (strcmp(g.nodes[i].name, run) == 0)
        r = i;
    if (r < 0 || g.nodes[r].frame < 0)
      snprintf(m->stack_why, sizeof m->stack_why, "%.120s is not in the call graph", run);
    else if ((m->stack_bytes = deepest(&g, r)) < 0)
      snprintf(m->stack_why, sizeof m->stack_why, "%s", g.why);
    else
      snprintf(m->stack_why, sizeof m->stack_why,
               "deepest path of -fstack-usage frames in gcc's call graph "
               "(-fcallgraph-info), +%d per library call",
               DY_EXTERN_STACK);
  }
  free(g.nodes);
  free(g.edges);
}

/* ---- the compile ---- */

void dy_code_measure_free(dy_code_measure *m) {
  free(m->fns);
  *m = (dy_code_measure){0};
}

dy_status dy_measure_code(const dy_codegen_output *out, const dy_compile_options *o,
                          dy_code_measure *m, dy_error *err) {
  *m = (dy_code_measure){.stack_bytes = -1};
  char dir[4096];
  dy_status s = dy_temp_dir_make("dy2stc-measure", dir, sizeof dir, err);
  if (s)
    return s;
  char h[4400], c[4400], obj[4400], ci[4400];
  snprintf(h, sizeof h, "%s/%s", dir, o->header ? o->header : "");
  if (!o->header)
    snprintf(h, sizeof h, "%s/%s.h", dir, o->name);
  snprintf(c, sizeof c, "%s/%s.c", dir, o->name);
  snprintf(obj, sizeof obj, "%s/%s.o", dir, o->name);
  snprintf(ci, sizeof ci, "%s/%s.ci", dir, o->name);
  if (!(s = dy_write_file_atomic(h, out->header, strlen(out->header), err)))
    s = dy_write_file_atomic(c, out->source, strlen(out->source), err);
  const char *tflags = "", *tcc = NULL;
  if (!s && (o->emit_main || o->target))
    s = dy_target_flags(o->target, &tflags, &tcc, NULL, err);
  const char *cc = o->cc ? o->cc : tcc ? tcc : getenv("CC");
  if (!cc || !*cc)
    cc = "cc";
  const char *level = o->emit_main ? "-O3" : "-O2";
  size_t fl = strlen(tflags) + (o->cflags ? strlen(o->cflags) : 0) + 2;
  char *flags = malloc(fl);
  if (!s && !flags)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s) {
    snprintf(flags, fl, "%s %s", tflags, o->cflags ? o->cflags : "");
    snprintf(m->cc_line, sizeof m->cc_line, "%s -std=c11 %s%s%s", cc, level, *tflags ? " " : "",
             tflags);
    if (o->cflags && *o->cflags)
      snprintf(m->cc_line + strlen(m->cc_line), sizeof m->cc_line - strlen(m->cc_line), " %s",
               o->cflags);
  }
  char *argv[64];
  int argc = 0;
  argv[argc++] = (char *)cc;
  argv[argc++] = "-std=c11";
  argv[argc++] = (char *)level;
  for (char *t = flags && !s ? strtok(flags, " \t") : NULL; t && argc < 54; t = strtok(NULL, " \t"))
    argv[argc++] = t;
  argv[argc++] = "-c";
  argv[argc++] = c;
  argv[argc++] = "-o";
  argv[argc++] = obj;
  argv[argc++] = "-fstack-usage";
  argv[argc++] = "-fcallgraph-info=su";
  argv[argc] = NULL;
  bool graph = true;
  if (!s && dy_run_command_quiet(argv, err) != DY_OK) {
    /* a compiler without -fcallgraph-info (clang): the code sizes alone */
    argv[argc - 1] = NULL;
    graph = false;
    if ((s = dy_run_command_quiet(argv, err)))
      dy_error_prefix(err, "measuring %s.c with %s", o->name, cc);
  }
  uint8_t *bin = NULL, *text = NULL;
  size_t bin_len = 0, text_len = 0;
  if (!s && !(s = dy_read_file(obj, &bin, &bin_len, err)) && !elf_functions(bin, bin_len, m))
    s = dy_error_set(err, DY_STATUS_IO, "%s.o (from %s) is no little-endian ELF object",
                     o->name, cc);
  if (!s) {
    dy_error e2 = {0};
    char run[300];
    snprintf(run, sizeof run, "%s_run", o->name);
    if (graph && dy_read_file(ci, &text, &text_len, &e2) == DY_OK) {
      char *t = realloc(text, text_len + 1);
      if (t) {
        text = (uint8_t *)t;
        text[text_len] = 0;
        stack_bound((const char *)text, run, m);
      }
    } else {
      snprintf(m->stack_why, sizeof m->stack_why,
               "%s wrote no call graph (-fcallgraph-info needs gcc 10 or later)", cc);
    }
  }
  free(bin);
  free(text);
  free(flags);
  dy_temp_dir_remove(dir);
  if (s)
    dy_code_measure_free(m);
  return s;
}
