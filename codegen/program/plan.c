/* plan.c - floor 3: the layout decisions after the analysis. Which
 * constant operands are packed at compile time for their kernels (the
 * layouts are emit_gemm.c's: w_<name>_p16, _p12, ...), which weights are
 * still read as they are (a weight only read packed is emitted only
 * packed), where each kernel's scratch lives (the plan's
 * dy_codegen_options.scratch_offsets, or after the plan's arena), the
 * names of the arena offsets (NAME_OFF_<var>, NAME_OFF_scratch_k<id>), the
 * state's layout (NAME_SOFF_<var>) and a training step's dropout seeds
 * (NAME_N_DROPOUT_SEEDS u64s after the state tensors, at NAME_SEEDS_OFF,
 * which its dropout kernels take as `uint64_t seed`). */
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
/* The packed copy of weight var in layout k, or NULL. */
cg_packed_weight *cg_find_pack(const cg_gen *g, int var, const dy_pack *k) {
  for (int i = 0; i < g->n_packs; i++) {
    const dy_pack *q = &g->packs[i].pack;
    if (g->packs[i].var == var && q->kind == k->kind && q->trans == k->trans &&
        q->mats == k->mats && q->rows == k->rows && q->cols == k->cols)
      return &g->packs[i];
  }
  return NULL;
}

/* Which constant operands are packed for their kernels (emit_gemm.c
 * decides), which weights are still read as they are, and where each
 * kernel's scratch lives. */
dy_status cg_plan_packs_and_scratch(cg_gen *g) {
  const dy_program *p = g->p;
  dy_error *err = g->err;
  /* packed operands; every other read of a weight is "as is" */
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    /* a control op reads as they are only its predicate (cond) or its
     * initial carried values (while); its captures are read by its blocks */
    int n_read = op->n_inputs;
    if (op->kind == DY_OP_COND)
      n_read = 1;
    else if (op->kind == DY_OP_WHILE)
      n_read = (int)dy_while_attrs_get(op).n_carried;
    for (int i = 0; i < op->n_inputs && i < n_read; i++) {
      int v = op->inputs[i];
      dy_pack k = g->kernel[oi] ? dy_gemm_pack_of(p, op, i) : (dy_pack){.kind = DY_PACK_NONE};
      if (k.kind == DY_PACK_NONE) {
        g->unpacked_use[g->st[v].root] = true;
        continue;
      }
      if (cg_find_pack(g, v, &k))
        continue;
      cg_packed_weight *np = realloc(g->packs, sizeof *np * (size_t)(g->n_packs + 1));
      if (!np)
        return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      g->packs = np;
      np[g->n_packs++] = (cg_packed_weight){.var = v, .pack = k};
    }
  }
  for (int i = 0; i < p->n_fetches; i++)
    g->unpacked_use[g->st[p->fetches[i]].root] = true;
  /* blocks' results are copied out as they are */
  for (int oi = 0; oi < g->n_ops; oi++) {
    int sub[2], n_sub = dy_op_sub_blocks(g->ops[oi], sub);
    for (int j = 0; j < n_sub; j++)
      for (int i = 0; i < p->blocks[sub[j]]->n_results; i++)
        g->unpacked_use[g->st[p->blocks[sub[j]]->results[i]].root] = true;
  }
  /* weights no kernel reads as they are: only their packed copies remain */
  for (int i = 0; i < p->n_vars; i++)
    if (g->weight[i] && !g->unpacked_use[i] && !g->state[i]) {
      free(g->weight[i]);
      g->weight[i] = NULL;
    }
  /* names w_<name><suffix>, unique among all weight arrays */
  int n = 0;
  char **taken = calloc((size_t)(p->n_vars + g->n_packs) + 1, sizeof *taken);
  if (!taken)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->n_vars; i++)
    if (g->weight[i])
      taken[n++] = g->weight[i];
  for (int i = 0; i < g->n_packs; i++) {
    const char *suffix = dy_pack_suffix(&g->packs[i].pack);
    char *s = cg_sanitize(p->vars[g->packs[i].var]->name, "w_");
    if (!s) {
      free(taken);
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    strcat(s, suffix); /* sanitize leaves room for 24 more */
    cg_dedup(s, taken, n);
    taken[n++] = g->packs[i].name = s;
  }
  free(taken);

  /* scratch: where the plan put it, or after the plan's arena */
  g->arena_bytes = g->opt->arena_bytes;
  int64_t base = (g->opt->arena_bytes + 63) / 64 * 64, most = 0;
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    int64_t bytes = g->opt->scratch_bytes ? g->opt->scratch_bytes[g->slot[oi]]
                                          : dy_codegen_scratch_bytes(p, op, g->opt->threads);
    g->scratch[oi] = g->kernel[oi] ? bytes : 0;
    if (g->scratch[oi] <= 0)
      continue;
    g->uses_arena = true;
    if (!g->opt->scratch_offsets) {
      g->scratch_off[oi] = base;
      most = g->scratch[oi] > most ? g->scratch[oi] : most;
      continue;
    }
    int64_t off = g->opt->scratch_offsets[g->slot[oi]];
    if (off < 0 || off % 64 != 0 || off + g->scratch[oi] > g->opt->arena_bytes)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s): its %lld bytes of scratch at arena offset %lld "
                         "do not fit the arena of %lld bytes (or are not 64-aligned)",
                         op->id, dy_op_name(op->kind), (long long)g->scratch[oi],
                         (long long)off, (long long)g->opt->arena_bytes);
    g->scratch_off[oi] = off;
  }
  if (most > 0)
    g->arena_bytes = base + most;
  return DY_OK;
}


static bool training_dropout(const dy_op *op) {
  return op->kind == DY_OP_DROPOUT && !dy_dropout_attrs_get(op).is_test;
}

int dy_codegen_dropout_seeds(const dy_program *p, int64_t *seeds, int cap) {
  const dy_block *b = p->blocks[0];
  int n = 0;
  for (int i = 0; i < b->n_ops; i++) {
    if (!training_dropout(b->ops[i]))
      continue;
    int64_t v = dy_dropout_attrs_get(b->ops[i]).seed;
    bool seen = false; /* an earlier training dropout with this seed */
    for (int j = 0; j < i && !seen; j++)
      seen = training_dropout(b->ops[j]) && dy_dropout_attrs_get(b->ops[j]).seed == v;
    if (seen)
      continue;
    if (seeds && n < cap)
      seeds[n] = v;
    n++;
  }
  return n;
}

/* A training step's dropout seeds (NAME_N_DROPOUT_SEEDS u64s after the
 * state tensors, at NAME_SEEDS_OFF): the seed attributes of its
 * training-mode dropout ops (dy_codegen_dropout_seeds), which
 * dy_program_reseed_dropout draws anew; block 0's training-mode dropout
 * ops (a forward one and its gradient share an attribute) take the seed
 * their attribute names. (simplify keeps a training step's dropouts of
 * p = 0, whose seeds the host draws too.) */
static dy_status seed_slots(cg_gen *g) {
  const dy_program *p = g->p;
  int n = dy_codegen_dropout_seeds(p, NULL, 0);
  g->seed_init = calloc((size_t)n + 1, sizeof *g->seed_init);
  if (!g->seed_init)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_codegen_dropout_seeds(p, g->seed_init, n);
  g->n_seeds = n;
  const dy_block *b = p->blocks[0];
  for (int oi = 0; oi < g->n_ops; oi++) {
    const dy_op *op = g->ops[oi];
    bool top = false;
    for (int i = 0; i < b->n_ops && !top; i++)
      top = b->ops[i] == op;
    if (!top || !training_dropout(op))
      continue;
    int64_t v = dy_dropout_attrs_get(op).seed;
    int k = 0;
    while (k < n && g->seed_init[k] != v)
      k++;
    if (k == n)
      return dy_error_at(g->err, op, DY_STATUS_INVALID_ARGUMENT,
                         "dropout: seed %lld is none of the training step's %d dropout "
                         "seeds", (long long)v, n);
    g->seed_slot[oi] = k;
  }
  if (n > 0) {
    g->seeds_off = g->state_bytes;
    g->state_bytes += (8 * (int64_t)n + 63) / 64 * 64;
  }
  return DY_OK;
}

/* The names of the arena offsets NAME_run passes (#defined before it):
 * NAME_OFF_<var> per buffer that owns arena bytes, NAME_OFF_scratch_k<id>
 * per kernel scratch; unique, in var then op order. Then the state's
 * layout (NAME_SOFF_<var>, 64-aligned, in var order) and a training
 * step's dropout seeds after it. */
dy_status cg_make_offset_names(cg_gen *g) {
  const dy_program *p = g->p;
  int n = 0;
  char **taken = calloc(2 * (size_t)p->n_vars + (size_t)g->n_ops + 1, sizeof *taken);
  if (!taken)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s_OFF_", g->upper);
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->used[i] || g->st[i].kind != ST_ARENA || g->st[i].root != i)
      continue;
    char *s = cg_sanitize(p->vars[i]->name, prefix);
    if (!s)
      break;
    cg_dedup(s, taken, n);
    taken[n++] = g->off[i] = s;
  }
  for (int oi = 0; oi < g->n_ops; oi++) {
    if (g->scratch[oi] <= 0)
      continue;
    char id[64];
    snprintf(id, sizeof id, "scratch_k%d", g->ops[oi]->id);
    char *s = cg_sanitize(id, prefix);
    if (!s)
      break;
    cg_dedup(s, taken, n);
    taken[n++] = g->scratch_name[oi] = s;
  }
  /* the state: NAME_SOFF_<var>, 64-aligned, in var order */
  snprintf(prefix, sizeof prefix, "%s_SOFF_", g->upper);
  int ns = n;
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->used[i] || g->st[i].kind != ST_STATE || g->st[i].root != i)
      continue;
    char *s = cg_sanitize(p->vars[i]->name, prefix);
    if (!s)
      break;
    cg_dedup(s, taken + ns, n - ns);
    taken[n++] = g->soff[i] = s;
    g->state_off[i] = g->state_bytes;
    g->state_bytes += (cg_var_bytes(g, p->vars[i]) + 63) / 64 * 64;
  }
  dy_status ss = cg_train_lr_feed(g) >= 0 ? seed_slots(g) : DY_OK;
  if (ss) {
    free(taken);
    return ss;
  }
  bool oom = false;
  for (int i = 0; i < p->n_vars; i++)
    oom |= g->used[i] && g->st[i].root == i &&
           ((g->st[i].kind == ST_ARENA && !g->off[i]) || (g->st[i].kind == ST_STATE && !g->soff[i]));
  for (int oi = 0; oi < g->n_ops; oi++)
    oom |= g->scratch[oi] > 0 && !g->scratch_name[oi];
  free(taken);
  return oom ? dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}
