/* memplan.c - the static memory plan.
 *
 * Requires: a verified Program (SSA, defs before uses).
 * Gives every intermediate var (not persistable, feed or fetch) a byte
 * offset in one arena, sized for every size symbol, the batch included, at
 * its bound in the Program (dy_program_sym_bounds), such that two vars live at the
 * same time never overlap. The outputs of an in-place op (a training
 * Program's updates) are persistable state, never arena vars: the op
 * writes where the var lives. The rules:
 *
 *   views      a view op's output (reshape, flatten, squeeze, unsqueeze)
 *              shares its input's storage (alias_of) unless it is fetched
 *   in place   an elementwise op whose input of the output's exact type
 *              dies at that op writes its output over it (same offset; the
 *              kernel then takes non-restrict pointers)
 *   the rest   liveness intervals [def, last use] of the storage groups
 *              are placed greedily, largest first, at the lowest 64-aligned
 *              offset that overlaps no group live at the same time
 *   scratch    (dy_memplan_scratch) the bytes an op's kernel asks for,
 *              computed once per op before the plan (dy_codegen_scratch_sizes:
 *              im2col panels, a packed GEMM operand) and handed in, are one
 *              more interval, live during that op only
 *
 * Sub-blocks (cond branches, while condition and body) are placed on one
 * schedule of positions, walked depth first: a plain op is one position; a
 * control op opens a position (its outputs are defined there), then for
 * each of its blocks an entry position (the block's params are defined
 * there: the generated code copies the values in), the block's ops and an
 * exit position (its results are read there: copied out), and closes with
 * a position where its inputs are read (captures stay live while any of its
 * blocks runs). So:
 *   - the two branches of a cond follow each other on the schedule and
 *     share arena space: no var of one is live during the other;
 *   - a loop body's temporaries live within the body's positions, so the
 *     next iteration reuses the same bytes (only the carried values, the
 *     while's outputs, and its captures live across iterations: they span
 *     the whole op);
 *   - the condition block's vars die before the body starts, and the body's
 *     before the condition runs again, so they may share bytes too;
 *   - a control op's outputs live to its closing position even when nothing
 *     reads them afterwards (the code writes them at each block's exit: a
 *     while's gradient stack that its backward never reads is still copied
 *     into on every trip).
 * Block signatures are shared rather than copied where that is safe
 * (share_signature): a while's condition and body params alias its outputs
 * (the carried values), a cond branch's local results are placed on the
 * op's outputs; the generated code then copies nothing for them.
 * A program without sub-blocks gets the schedule it always had (one
 * position per op of block 0). Ops are numbered block-major
 * (dy_codegen_op_slot) for the scratch offsets.
 *
 * The lower bound reported beside the arena is the largest sum of live
 * group bytes at any position: no placement of these groups can do better.
 *
 * dy_memplan_scratch runs the rules as steps, one function each, in this
 * order: check_sizes, plan_init, join_views, liveness (walk),
 * share_signature, join_in_place, collect_groups, add_scratch,
 * lower_bound, place.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_passes.h"

enum { ALIGN = 64 };

typedef struct {
  int var;         /* the group's root var, or -1 - k for op k's scratch */
  int64_t size;
  int start, end;  /* op indices, inclusive */
  int64_t off;     /* the placement */
} interval;

static int64_t align_up(int64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static int by_size_desc(const void *a, const void *b) {
  const interval *x = a, *y = b;
  if (x->size != y->size)
    return x->size < y->size ? 1 : -1;
  return x->var - y->var;  /* deterministic */
}

static bool in_arena(const dy_var *v) {
  return !v->persistable && v->feed_index < 0 && v->fetch_index < 0;
}

/* Move every var of group `from` into group `to`. */
static void merge(int *root, int n, int from, int to) {
  for (int i = 0; i < n; i++)
    if (root[i] == from)
      root[i] = to;
}

/* The schedule (see the top of the file): per op slot its first and last
 * position; per var the position defining it and its last read. */
typedef struct {
  const dy_program *p;
  int *start, *end;  /* per op slot */
  int *def, *last;   /* per var, -1: none */
  int t;             /* positions used */
} schedule;

static void touch_def(schedule *s, int v, int t) {
  s->def[v] = t;
  if (s->last[v] < t)
    s->last[v] = t;
}

static void walk(schedule *s, int b, int depth) {
  const dy_program *p = s->p;
  const dy_block *blk = p->blocks[b];
  if (depth > p->n_blocks) /* a cycle: the verifier refuses those */
    return;
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    int slot = dy_codegen_op_slot(p, b, k), sub[2];
    int n_sub = dy_op_sub_blocks(op, sub);
    s->start[slot] = s->t;
    for (int i = 0; i < op->n_outputs; i++)
      touch_def(s, op->outputs[i], s->t);
    if (n_sub > 0)
      s->t++;
    for (int j = 0; j < n_sub; j++) {
      if (sub[j] <= 0 || sub[j] >= p->n_blocks)
        continue;
      const dy_block *sb = p->blocks[sub[j]];
      for (int i = 0; i < sb->n_params; i++)
        touch_def(s, sb->params[i], s->t);
      s->t++;
      walk(s, sub[j], depth + 1);
      for (int i = 0; i < sb->n_results; i++)
        s->last[sb->results[i]] = s->t;
      s->t++;
    }
    for (int i = 0; i < op->n_inputs; i++)
      s->last[op->inputs[i]] = s->t;
    /* a control op's outputs are written at every block's exit (a loop's
     * carried values at each trip's end, in order): live to the op's end
     * even when nothing reads them later, so that no block temporary, such
     * as the next value of another slot, shares their bytes */
    for (int i = 0; n_sub > 0 && i < op->n_outputs; i++)
      if (s->last[op->outputs[i]] < s->t)
        s->last[op->outputs[i]] = s->t;
    s->end[slot] = s->t++;
  }
}

/* Group `from` joins group `to`, with the union of their intervals. */
static void join_groups(dy_program *p, int *root, interval *iv, int from, int to) {
  int a = root[from], b = root[to];
  if (a == b)
    return;
  if (iv[a].start >= 0 && (iv[b].start < 0 || iv[a].start < iv[b].start))
    iv[b].start = iv[a].start;
  if (iv[a].end > iv[b].end)
    iv[b].end = iv[a].end;
  iv[a].start = iv[a].end = -1;
  merge(root, p->n_vars, a, b);
}

/* Is var v declared inside block b (or a block within it)? */
static bool declared_in(const dy_program *p, int v, int b) {
  int db = -1, k = -1;
  if (!dy_program_def(p, v, &db, &k))
    db = p->vars[v]->block;
  return db >= 0 && dy_block_within(p, db, b);
}

/* Let block params and results share storage with the control op's
 * outputs instead of being copied:
 *   while  the condition block's params are views of the carried values
 *          (the outputs, which hold them during the loop); so are the
 *          body's, unless a result the body yields for another slot is in
 *          a param's group (copying the results back in order would then
 *          read a value already overwritten);
 *   cond   a branch-local result is placed on its output (the output holds
 *          nothing until the branch ends), unless that branch yields its
 *          group twice.
 * Aliased params take alias_of, so nothing writes over them in place. */
static void share_signature(dy_program *p, const dy_op *op, int *root, interval *iv,
                            dy_memplan_result *r) {
  int sub[2], n_sub = dy_op_sub_blocks(op, sub);
  if (n_sub != 2)
    return;
  if (op->kind == DY_OP_WHILE) {
    for (int j = 0; j < 2; j++) {
      const dy_block *blk = p->blocks[sub[j]];
      int n = blk->n_params < op->n_outputs ? blk->n_params : op->n_outputs;
      for (int i = 0; i < n; i++) {
        dy_var *par = p->vars[blk->params[i]];
        int out = op->outputs[i];
        if (par->alias_of >= 0 || !in_arena(par) ||
            !dy_type_equal(&par->type, &p->vars[out]->type))
          continue;
        bool hazard = false;
        for (int q = 0; j == 1 && q < blk->n_results && q < n; q++)
          hazard |= q != i && root[blk->results[q]] == root[par->id];
        if (hazard)
          continue;
        par->alias_of = out;
        join_groups(p, root, iv, par->id, out);
        r->n_aliased++;
      }
    }
    return;
  }
  for (int j = 0; j < 2; j++) {
    const dy_block *blk = p->blocks[sub[j]];
    int n = blk->n_results < op->n_outputs ? blk->n_results : op->n_outputs;
    for (int i = 0; i < n; i++) {
      int res = blk->results[i], g = root[res], out = op->outputs[i];
      bool twice = false;
      for (int q = 0; q < n; q++)
        twice |= q != i && root[blk->results[q]] == g;
      if (twice || !in_arena(p->vars[out]) || !in_arena(p->vars[g]) ||
          p->vars[res]->alias_of >= 0 || !declared_in(p, g, sub[j]) ||
          !dy_type_equal(&p->vars[res]->type, &p->vars[out]->type))
        continue;
      join_groups(p, root, iv, res, out);
      r->n_in_place++;
    }
  }
}

dy_status dy_memplan(dy_program *p, dy_memplan_result *r, dy_error *err) {
  return dy_memplan_scratch(p, NULL, NULL, r, err);
}

/* A var's bytes with every size symbol at its bound (bounds: per symbol,
 * dy_program_sym_bounds); -1 when that overflows. */
static int64_t bytes_at(const dy_type *t, const int64_t *bounds) {
  int64_t n, b;
  if (!dy_type_numel_eval(t, bounds, &n) || !dy_ck_mul(n, (int64_t)dy_dtype_size(t->dtype), &b))
    return -1;
  return b;
}

/* Every var's bytes within the limits at the size bounds and at the batch's
 * (dy_checked.h): each is then at most DY_MAX_TENSOR_BYTES, so sums of a
 * few of them cannot wrap; the arena is checked against
 * DY_MAX_ARENA_BYTES at the end. */
static dy_status check_sizes(const dy_program *p, const int64_t *bounds, dy_error *err) {
  int64_t max_batch = bounds[0];
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    int64_t bytes = in_arena(v) ? bytes_at(&v->type, bounds) : 0;
    if (bytes < 0 || bytes > DY_MAX_ARENA_BYTES) {
      char ts[160];
      return dy_error_set(err, DY_STATUS_LIMIT,
                          "memplan: var '%s' %s is larger than the arena limit at the "
                          "size bounds", v->name, dy_type_str(&v->type, ts, sizeof ts));
    }
  }
  if (max_batch < 1 || max_batch > DY_MAX_BATCH)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "memplan: --max-batch %lld is outside [1, %lld]", (long long)max_batch,
                        (long long)DY_MAX_BATCH);
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    int64_t bytes;
    char ts[160];
    if (!dy_type_bytes_at(&v->type, max_batch, &bytes))
      return dy_error_set(err, DY_STATUS_LIMIT,
                          "memplan: var '%s' %s is larger than the maximum tensor size "
                          "(%lld bytes) at --max-batch %lld", v->name,
                          dy_type_str(&v->type, ts, sizeof ts), (long long)DY_MAX_TENSOR_BYTES,
                          (long long)max_batch);
  }
  return DY_OK;
}

/* One plan in the making: the storage groups (root: each var's group),
 * their intervals, the schedule, and every op of every block by slot. */
typedef struct {
  dy_program *p;
  int nv, n_ops;
  int64_t bounds[DY_MAX_SYMS];
  int *root;
  interval *iv;        /* per group root var, then (compacted) the placed ones */
  int n;               /* intervals to place */
  schedule sc;
  const dy_op **ops;   /* per op slot */
  dy_memplan_result *r;
} plan;

static void plan_free(plan *pl) {
  free(pl->root);
  free(pl->iv);
  free(pl->sc.start);
  free(pl->sc.end);
  free(pl->sc.def);
  free(pl->sc.last);
  free(pl->ops);
}

/* The arrays, every var its own group with no interval yet, the ops by
 * slot, the weight bytes. */
static dy_status plan_init(plan *pl, dy_error *err) {
  dy_program *p = pl->p;
  int nv = pl->nv, n_ops = pl->n_ops;
  pl->root = malloc(sizeof(int) * (size_t)(nv + 1));
  pl->iv = calloc((size_t)nv + (size_t)n_ops + 1, sizeof *pl->iv);
  pl->sc = (schedule){.p = p,
                      .start = malloc(sizeof(int) * (size_t)(n_ops + 1)),
                      .end = malloc(sizeof(int) * (size_t)(n_ops + 1)),
                      .def = malloc(sizeof(int) * (size_t)(nv + 1)),
                      .last = malloc(sizeof(int) * (size_t)(nv + 1))};
  pl->ops = malloc(sizeof *pl->ops * (size_t)(n_ops + 1));
  if (!pl->root || !pl->iv || !pl->sc.start || !pl->sc.end || !pl->sc.def || !pl->sc.last ||
      !pl->ops) {
    plan_free(pl);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "memplan: out of memory");
  }
  for (int b = 0, slot = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++)
      pl->ops[slot++] = p->blocks[b]->ops[k];
  for (int i = 0; i < nv; i++) {
    dy_var *v = p->vars[i];
    v->mem_offset = -1;
    v->alias_of = -1;
    pl->root[i] = i;
    pl->iv[i] = (interval){.var = i, .start = -1, .end = -1};
    if (v->persistable)
      pl->r->weight_bytes += dy_type_numel(&v->type) * (int64_t)dy_dtype_size(v->type.dtype);
  }
  return DY_OK;
}

/* Views share their input's group. */
static void join_views(plan *pl) {
  for (int k = 0; k < pl->n_ops; k++) {
    const dy_op *op = pl->ops[k];
    if (!dy_op_has(op, DY_OPF_VIEW) || op->n_outputs < 1)
      continue;
    dy_var *out = pl->p->vars[op->outputs[0]];
    if (in_arena(out)) {
      out->alias_of = op->inputs[0];
      merge(pl->root, pl->nv, out->id, pl->root[op->inputs[0]]);
      pl->r->n_aliased++;
    }
  }
}

/* The liveness of each var on its own, [def, last use] on the schedule,
 * and a group's interval: the union of its members'. */
static void liveness(plan *pl) {
  schedule *sc = &pl->sc;
  for (int i = 0; i < pl->nv; i++)
    sc->def[i] = sc->last[i] = -1;
  walk(sc, 0, 0);
  for (int i = 0; i < pl->nv; i++) {
    interval *x = &pl->iv[pl->root[i]];
    if (sc->def[i] < 0)
      continue;
    if (x->start < 0 || sc->def[i] < x->start)
      x->start = sc->def[i];
    if (sc->last[i] > x->end)
      x->end = sc->last[i];
  }
}

/* In place: an elementwise op's output joins the group of an input that
 * dies there. */
static void join_in_place(plan *pl) {
  dy_program *p = pl->p;
  int *root = pl->root;
  interval *iv = pl->iv;
  for (int k = 0; k < pl->n_ops; k++) {
    const dy_op *op = pl->ops[k];
    int at = pl->sc.end[k];
    if (!dy_op_has(op, DY_OPF_ELEMENTWISE) || op->n_outputs != 1)
      continue;
    dy_var *o = p->vars[op->outputs[0]];
    if (!in_arena(o) || o->alias_of >= 0 || root[o->id] != o->id)
      continue;
    for (int j = 0; j < op->n_inputs; j++) {
      const dy_var *in = p->vars[op->inputs[j]];
      int g = root[in->id];
      if (!in_arena(in) || in->alias_of >= 0 || !in_arena(p->vars[g]) ||
          iv[g].end != at || !dy_type_equal(&in->type, &o->type) ||
          bytes_at(&p->vars[g]->type, pl->bounds) < bytes_at(&o->type, pl->bounds))
        continue;
      iv[g].end = iv[o->id].end > iv[g].end ? iv[o->id].end : iv[g].end;
      iv[o->id].start = -1;
      merge(root, pl->nv, o->id, g);
      pl->r->n_in_place++;
      break;
    }
  }
}

/* The groups to place, compacted to the front of iv (pl->n of them). */
static void collect_groups(plan *pl) {
  pl->n = 0;
  for (int i = 0; i < pl->nv; i++) {
    dy_var *v = pl->p->vars[i];
    if (pl->root[i] != i || !in_arena(v) || pl->iv[i].start < 0)
      continue;
    /* an empty tensor still gets its own (64) bytes: at the offset of
     * another buffer it would make the kernels' restrict pointers equal,
     * which compilers reject (-Wrestrict) even with nothing to access */
    int64_t bytes = bytes_at(&v->type, pl->bounds); /* checked above */
    pl->iv[i].size = align_up(bytes > 0 ? bytes : 1);
    pl->iv[pl->n++] = pl->iv[i];
  }
}

/* Kernel scratch (scratch_bytes[k], op slot k's): one more interval, live
 * during its op only; scratch_offsets[k] starts at -1. */
static dy_status add_scratch(plan *pl, const int64_t *scratch_bytes, int64_t *scratch_offsets,
                             dy_error *err) {
  for (int k = 0; k < pl->n_ops; k++) {
    const dy_op *op = pl->ops[k];
    int64_t bytes = scratch_bytes[k];
    scratch_offsets[k] = -1;
    if (bytes > DY_MAX_ARENA_BYTES)
      return dy_error_at(err, op, DY_STATUS_LIMIT,
                         "memplan: %s needs %lld bytes of scratch at --max-batch %lld",
                         dy_op_name(op->kind), (long long)bytes, (long long)pl->bounds[0]);
    if (bytes > 0)
      pl->iv[pl->n++] = (interval){.var = -1 - k, .size = align_up(bytes),
                                   .start = pl->sc.start[k], .end = pl->sc.end[k]};
  }
  return DY_OK;
}

/* The lower bound: the most bytes live at any one position. */
static void lower_bound(plan *pl) {
  for (int k = 0; k < pl->sc.t; k++) {
    int64_t live = 0;
    for (int i = 0; i < pl->n; i++)
      if (pl->iv[i].start <= k && k <= pl->iv[i].end)
        live += pl->iv[i].size;
    if (live > pl->r->lower_bound)
      pl->r->lower_bound = live;
  }
}

/* Greedy, largest first: each interval at the lowest offset clear of
 * every placed, time-overlapping interval (0 or the end of such an
 * interval is tried). */
static void place(plan *pl, int64_t *scratch_offsets) {
  interval *iv = pl->iv;
  int n = pl->n;
  dy_memplan_result *r = pl->r;
  qsort(iv, (size_t)n, sizeof *iv, by_size_desc);
  for (int i = 0; i < n; i++) {
    int64_t best = -1;
    for (int c = -1; c < i; c++) {
      int64_t off = c < 0 ? 0 : iv[c].off + iv[c].size;
      if (c >= 0 && (iv[c].end < iv[i].start || iv[i].end < iv[c].start))
        continue;
      bool clear = true;
      for (int j = 0; j < i && clear; j++) {
        if (iv[j].end < iv[i].start || iv[i].end < iv[j].start)
          continue;
        int64_t o = iv[j].off;
        clear = off + iv[i].size <= o || o + iv[j].size <= off;
      }
      if (clear && (best < 0 || off < best))
        best = off;
    }
    iv[i].off = best;
    if (iv[i].var >= 0) {
      pl->p->vars[iv[i].var]->mem_offset = best;
      r->n_planned++;
    } else {
      scratch_offsets[-1 - iv[i].var] = best;
      r->n_scratch++;
    }
    if (best + iv[i].size > r->arena_bytes)
      r->arena_bytes = best + iv[i].size;
  }
}

dy_status dy_memplan_scratch(dy_program *p, const int64_t *scratch_bytes,
                             int64_t *scratch_offsets, dy_memplan_result *r, dy_error *err) {
  memset(r, 0, sizeof *r);
  plan pl = {.p = p, .nv = p->n_vars, .n_ops = dy_program_count_ops(p), .r = r};
  dy_program_sym_bounds(p, pl.bounds);
  dy_status s = check_sizes(p, pl.bounds, err);
  if (s || (s = plan_init(&pl, err)))
    return s;
  join_views(&pl);
  liveness(&pl);
  /* block signatures without copies (see the top of the file) */
  for (int k = 0; k < pl.n_ops; k++)
    share_signature(p, pl.ops[k], pl.root, pl.iv, r);
  join_in_place(&pl);
  collect_groups(&pl);
  if (scratch_offsets && scratch_bytes &&
      (s = add_scratch(&pl, scratch_bytes, scratch_offsets, err)))
    pl.n = 0; /* nothing is placed; the error stands */
  lower_bound(&pl);
  place(&pl, scratch_offsets);
  if (!s && r->arena_bytes > DY_MAX_ARENA_BYTES)
    s = dy_error_set(err, DY_STATUS_LIMIT,
                     "memplan: the arena needs %lld bytes at --max-batch %lld, more than "
                     "the limit of %lld", (long long)r->arena_bytes, (long long)pl.bounds[0],
                     (long long)DY_MAX_ARENA_BYTES);
  /* in-place members take their group's offset (views keep alias_of) */
  for (int i = 0; i < pl.nv; i++) {
    dy_var *v = p->vars[i];
    if (pl.root[i] != i && in_arena(v) && v->alias_of < 0)
      v->mem_offset = p->vars[pl.root[i]]->mem_offset;
  }
  plan_free(&pl);
  return s;
}
