/* memplan.c - the static memory plan.
 *
 * Requires: a verified Program (SSA, defs before uses).
 * Gives every intermediate var (not persistable, feed or fetch) a byte
 * offset in one arena, sized for max_batch, such that two vars live at the
 * same time never overlap. A view op's output (reshape, flatten) shares its
 * input's storage (alias_of) unless it is fetched.
 *
 * Liveness is an interval of op indices [def, last use]; an alias extends
 * its root's interval. Placement is the classic greedy: vars by size,
 * largest first, each at the lowest 64-aligned offset that overlaps no
 * already placed var whose interval intersects its own. The lower bound
 * reported beside it is the largest sum of live bytes at any op, which no
 * plan can beat.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"

enum { ALIGN = 64 };

typedef struct {
  int var;
  int64_t size;
  int start, end;  /* op indices, inclusive */
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

dy_status dy_memplan(dy_program *p, int64_t max_batch, dy_memplan_result *r,
                     dy_error *err) {
  memset(r, 0, sizeof *r);
  const dy_block *blk = p->blocks[0];
  int nv = p->n_vars;
  int *root = malloc(sizeof(int) * (size_t)(nv + 1));
  interval *iv = calloc((size_t)nv + 1, sizeof *iv);
  if (!root || !iv) {
    free(root);
    free(iv);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "memplan: out of memory");
  }
  for (int i = 0; i < nv; i++) {
    dy_var *v = p->vars[i];
    v->mem_offset = -1;
    v->alias_of = -1;
    root[i] = i;
    iv[i] = (interval){.var = i, .start = -1, .end = -1};
    if (v->persistable)
      r->weight_bytes += dy_type_numel(&v->type) * (int64_t)dy_dtype_size(v->type.dtype);
  }
  /* aliases: a view's output shares its input's storage */
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    dy_var *out = p->vars[op->outputs[0]];
    if (dy_op_has(op, DY_OPF_VIEW) && in_arena(out)) {
      out->alias_of = op->inputs[0];
      root[out->id] = root[op->inputs[0]];
      r->n_aliased++;
    }
  }
  /* liveness intervals, accumulated on the storage root */
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    for (int i = 0; i < op->n_outputs; i++) {
      interval *x = &iv[root[op->outputs[i]]];
      if (x->start < 0)
        x->start = k;
      if (x->end < k)
        x->end = k;
    }
    for (int i = 0; i < op->n_inputs; i++) {
      interval *x = &iv[root[op->inputs[i]]];
      if (x->end < k)
        x->end = k;
    }
  }
  int n = 0;
  for (int i = 0; i < nv; i++) {
    dy_var *v = p->vars[i];
    if (root[i] != i || !in_arena(v) || iv[i].start < 0)
      continue;
    iv[i].size = align_up(dy_type_numel_at(&v->type, max_batch) *
                          (int64_t)dy_dtype_size(v->type.dtype));
    iv[n++] = iv[i];
  }
  /* lower bound: the most bytes live at any one op */
  for (int k = 0; k < blk->n_ops; k++) {
    int64_t live = 0;
    for (int i = 0; i < n; i++)
      if (iv[i].start <= k && k <= iv[i].end)
        live += iv[i].size;
    if (live > r->lower_bound)
      r->lower_bound = live;
  }
  qsort(iv, (size_t)n, sizeof *iv, by_size_desc);
  for (int i = 0; i < n; i++) {
    /* lowest offset clear of every placed, time-overlapping interval: try
     * 0 and the end of each such interval */
    int64_t best = -1;
    for (int c = -1; c < i; c++) {
      int64_t off = c < 0 ? 0 : p->vars[iv[c].var]->mem_offset + iv[c].size;
      if (c >= 0 && (iv[c].end < iv[i].start || iv[i].end < iv[c].start))
        continue;
      bool clear = true;
      for (int j = 0; j < i && clear; j++) {
        if (iv[j].end < iv[i].start || iv[i].end < iv[j].start)
          continue;
        int64_t o = p->vars[iv[j].var]->mem_offset;
        clear = off + iv[i].size <= o || o + iv[j].size <= off;
      }
      if (clear && (best < 0 || off < best))
        best = off;
    }
    p->vars[iv[i].var]->mem_offset = best;
    if (best + iv[i].size > r->arena_bytes)
      r->arena_bytes = best + iv[i].size;
    r->n_planned++;
  }
  free(root);
  free(iv);
  return DY_OK;
}
