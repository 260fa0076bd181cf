/* analyse.c - floor 3: what the driver learns of a Program before it
 * writes anything, and the checks that make the generated C safe to
 * write: the ops in execution order (a control op, then its blocks' ops),
 * unique op ids, each op's arity and operands, who writes each var, the
 * feeds and fetches, every used var's type and storage (storage.c), the
 * size symbols in use, and for each op whether it has a kernel and that
 * its outputs do not share memory with its inputs (kernels take restrict
 * pointers). */
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
/* The symbols other than the batch that g's vars use, ordered by name. */
static void find_named(cg_gen *g) {
  g->n_named = 0;
  for (int s = 1; s < DY_MAX_SYMS; s++)
    if (g->sym_mask >> s & 1) {
      int k = g->n_named++;
      g->named[k] = s;
      for (; k > 0 && strcmp(dy_sym_name(g->named[k - 1]), dy_sym_name(s)) > 0; k--) {
        g->named[k] = g->named[k - 1];
        g->named[k - 1] = s;
      }
    }
}


/* cond and while: ops with sub-blocks, written as C if / while. */
static bool is_control(const dy_op *op) {
  int sub[2];
  return dy_op_sub_blocks(op, sub) > 0;
}

/* g->ops in execution order: block b's ops, each control op followed by its
 * blocks' ops. Every op of the Program must be reached once. */
dy_status cg_order_ops(cg_gen *g, int b, int depth) {
  const dy_program *p = g->p;
  if (depth > p->n_blocks)
    return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                        "block %d: the block tree has a cycle", b);
  const dy_block *blk = p->blocks[b];
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    int slot = dy_codegen_op_slot(p, b, k);
    if (g->oi_of_slot[slot] >= 0)
      return dy_error_at(g->err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d: its block %d is owned by two ops", op->id, b);
    g->oi_of_slot[slot] = g->n_ops;
    g->slot[g->n_ops] = slot;
    g->ops[g->n_ops++] = op;
    int sub[2], n_sub = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < n_sub; j++) {
      if (sub[j] <= 0 || sub[j] >= p->n_blocks || p->blocks[sub[j]]->parent != b)
        return dy_error_at(g->err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): block %d is not a sub-block of block %d",
                           op->id, dy_op_name(op->kind), sub[j], b);
      dy_status s = cg_order_ops(g, sub[j], depth + 1);
      if (s != DY_OK)
        return s;
    }
  }
  return DY_OK;
}

int dy_codegen_op_slot(const dy_program *p, int b, int index) {
  int slot = index;
  for (int i = 0; i < b && i < p->n_blocks; i++)
    slot += p->blocks[i]->n_ops;
  return slot;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Op ids name the kernels, so they must be unique (and not negative). */
static dy_status check_op_ids(cg_gen *g) {
  dy_error *err = g->err;
  int *ids = malloc(sizeof *ids * ((size_t)g->n_ops + 1));
  if (!ids)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int oi = 0; oi < g->n_ops; oi++) {
    ids[oi] = g->ops[oi]->id;
    if (ids[oi] < 0) {
      free(ids);
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "op %d has a negative id", oi);
    }
  }
  qsort(ids, (size_t)g->n_ops, sizeof *ids, cmp_int);
  for (int oi = 1; oi < g->n_ops; oi++)
    if (ids[oi] == ids[oi - 1]) {
      int dup = ids[oi];
      free(ids);
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "two ops have id %d", dup);
    }
  free(ids);

  return DY_OK;
}

/* Op oi's arity and operands; the vars it writes (def), and for a control
 * op its blocks' params (written by the op: copies in) and results (read
 * by it: copies out). */
static dy_status check_op(cg_gen *g, int oi) {
  const dy_program *p = g->p;
  dy_error *err = g->err;
  const dy_op *op = g->ops[oi];
  if ((unsigned)op->kind >= DY_OP_COUNT)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "op %d has unknown kind %d", op->id, (int)op->kind);
  const dy_op_info *info = dy_op_info_of(op->kind);
  if ((info->n_in >= 0 && op->n_inputs != info->n_in) ||
      (info->n_in < 0 && op->n_inputs < 1) ||
      (info->n_out >= 0 && op->n_outputs != info->n_out) ||
      (info->n_out < 0 && op->n_outputs < 1))
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "op %d (%s) has %d inputs and %d outputs, expected "
                       "%d and %d", op->id, info->name, op->n_inputs,
                       op->n_outputs, info->n_in, info->n_out);
  if (info->flags & DY_OPF_SETS_SIZE) {
    /* a count known only at run time: a symbol NAME_run declares and the
     * op's kernel sets (planned at its bound); one op sets it */
    int sym = dy_op_size_sym(op, NULL);
    if (sym <= 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "codegen: %s: its count has no size symbol", info->name);
    if (g->rt_mask >> sym & 1)
      return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                         "codegen: %s: the size symbol '%s' is set by two ops", info->name,
                         dy_sym_name(sym));
    g->rt_mask |= (uint64_t)1 << sym;
  }
  for (int k = 0; k < op->n_inputs + op->n_outputs; k++) {
    int v = k < op->n_inputs ? op->inputs[k] : op->outputs[k - op->n_inputs];
    if (v < 0 || v >= p->n_vars)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s): operand %d is not a var", op->id,
                         info->name, v);
    const dy_type *t = &p->vars[v]->type;
    if (t->rank < 0 || t->rank > DY_MAX_DIMS || (unsigned)t->dtype >= DY_DTYPE_COUNT)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s): var '%s' has a bad type", op->id,
                         info->name, p->vars[v]->name);
    g->used[v] = true;
  }
  bool inplace = dy_op_has(op, DY_OPF_INPLACE);
  for (int k = 0; k < op->n_outputs; k++) {
    const dy_var *v = p->vars[op->outputs[k]];
    if (inplace) {
      /* an update of state: output k is input k, a persistable var */
      if (op->outputs[k] != op->inputs[k] || !v->persistable)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): in-place output %d '%s' is not its input %d, "
                           "a persistable var", op->id, info->name, k, v->name, k);
      continue;
    }
    if (v->feed_index >= 0 || v->persistable)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s) writes %s '%s'", op->id, info->name,
                         v->feed_index >= 0 ? "the input" : "the weight",
                         v->name);
    if (g->def[v->id] >= 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "var '%s' is written by two ops", v->name);
    g->def[v->id] = oi;
  }
  /* a control op's blocks: their params are written by the op (copies
   * in), their results read by it (copies out) */
  int sub[2], n_sub = dy_op_sub_blocks(op, sub);
  for (int j = 0; j < n_sub; j++) {
    const dy_block *sb = p->blocks[sub[j]];
    for (int i = 0; i < sb->n_params + sb->n_results; i++) {
      bool param = i < sb->n_params;
      int v = param ? sb->params[i] : sb->results[i - sb->n_params];
      if (v < 0 || v >= p->n_vars)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): block %d's %s %d is not a var", op->id,
                           info->name, sub[j], param ? "param" : "result", v);
      g->used[v] = true;
      if (!param)
        continue;
      if (g->def[v] >= 0 && g->def[v] != oi)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "var '%s' is written by two ops", p->vars[v]->name);
      g->def[v] = oi;
    }
  }
  return DY_OK;
}

/* Feeds are not persistable; every fetch is computed (or an input or a
 * weight). */
static dy_status check_io(cg_gen *g) {
  const dy_program *p = g->p;
  dy_error *err = g->err;
  for (int i = 0; i < p->n_feeds; i++) {
    if (p->feeds[i] < 0 || p->feeds[i] >= p->n_vars)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "feed %d is not a var", i);
    const dy_var *v = p->vars[p->feeds[i]];
    if (v->persistable)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is persistable", v->name);
    uint64_t set = dy_type_sym_mask(&v->type) & g->rt_mask;
    for (int sy = 1; sy < DY_MAX_SYMS; sy++)
      if (set >> sy & 1)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "input '%s': a dim is the size symbol '%s', which an op sets",
                            v->name, dy_sym_name(sy));
    g->used[v->id] = true;
  }
  for (int i = 0; i < p->n_fetches; i++) {
    if (p->fetches[i] < 0 || p->fetches[i] >= p->n_vars)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "fetch %d is not a var", i);
    const dy_var *v = p->vars[p->fetches[i]];
    if (v->feed_index < 0 && !v->persistable && g->def[v->id] < 0)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "output '%s' is never computed", v->name);
    g->used[v->id] = true;
  }
  return DY_OK;
}

/* Used var i: a good type, a weight with data and a static shape, a var
 * that something writes; where it lives (cg_resolve). */
static dy_status check_var(cg_gen *g, int i) {
  const dy_program *p = g->p;
  dy_error *err = g->err;
  const dy_var *v = p->vars[i];
  if (v->type.rank < 0 || v->type.rank > DY_MAX_DIMS ||
      (unsigned)v->type.dtype >= DY_DTYPE_COUNT)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "var '%s' has a bad type", v->name);
  for (int d = 0; d < v->type.rank; d++) {
    dy_dim_expr e;
    if (v->type.shape[d] < -1 && !dy_dim_expr_of(v->type.shape[d], &e))
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "var '%s' has dim %lld", v->name,
                          (long long)v->type.shape[d]);
  }
  g->sym_mask |= dy_type_sym_mask(&v->type);
  if (g->sym_mask & 1)
    g->dynamic = true;
  if (v->persistable) {
    if (cg_type_dynamic(&v->type) || !v->data)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "weight '%s' has %s", v->name,
                          v->data ? "a dynamic shape" : "no data");
  } else if (g->def[i] < 0 && v->feed_index < 0) {
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "var '%s' is read but never written", v->name);
  }
  dy_status s = cg_resolve(g, i, &g->st[i]);
  if (s != DY_OK)
    return s;
  if (g->st[i].kind == ST_ARENA)
    g->uses_arena = true;
  return DY_OK;
}

/* Does op oi emit a kernel (not a control op, nor a view whose output
 * aliases its input)? Its storage: an in-place op writes only its state;
 * any other op's outputs share no memory with its inputs (kernels take
 * restrict pointers) unless an elementwise op writes over an input of its
 * output's type at its address, nor with each other. */
static dy_status check_kernel(cg_gen *g, int oi) {
  const dy_program *p = g->p;
  dy_error *err = g->err;
  const dy_op *op = g->ops[oi];
  g->kernel[oi] = true;
  g->has_loop |= op->kind == DY_OP_WHILE;
  if (is_control(op)) {
    /* no kernel: C if / while around its blocks' kernels (blocks.c) */
    g->kernel[oi] = false;
    for (int k = 0; k < op->n_outputs; k++)
      if (p->vars[op->outputs[k]]->alias_of >= 0 && p->vars[op->outputs[k]]->fetch_index < 0)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): output '%s' has alias_of set", op->id,
                           dy_op_name(op->kind), p->vars[op->outputs[k]]->name);
    return DY_OK;
  }
  if (dy_op_has(op, DY_OPF_VIEW)) {
    const dy_var *o = p->vars[op->outputs[0]];
    if (o->alias_of >= 0 && o->fetch_index < 0) {
      if (g->st[o->id].root != g->st[op->inputs[0]].root ||
          g->st[o->id].kind != g->st[op->inputs[0]].kind)
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): output '%s' aliases '%s', which does "
                           "not hold its input '%s'", op->id,
                           dy_op_name(op->kind), o->name,
                           p->vars[o->alias_of]->name,
                           p->vars[op->inputs[0]]->name);
      const dy_type *ti = &p->vars[op->inputs[0]]->type, *to = &o->type;
      if (dy_type_numel_at(ti, 1) != dy_type_numel_at(to, 1) ||
          dy_type_numel_at(ti, 2) != dy_type_numel_at(to, 2) ||
          ti->dtype != to->dtype)
        return dy_error_at(err, op, DY_STATUS_SHAPE_MISMATCH,
                           "op %d (%s): view output '%s' does not have the "
                           "size of its input '%s'", op->id,
                           dy_op_name(op->kind), o->name,
                           p->vars[op->inputs[0]]->name);
      g->kernel[oi] = false;
      return DY_OK;
    }
  }
  if (dy_op_has(op, DY_OPF_INPLACE)) {
    /* its outputs are its first inputs (checked above); any other
     * input must not be state it writes */
    g->in_place[oi] = true;
    for (int k = 0; k < op->n_outputs; k++)
      for (int j = op->n_outputs; j < op->n_inputs; j++)
        if (cg_overlap(g, op->outputs[k], op->inputs[j]))
          return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                             "op %d (%s): in-place output '%s' is also its input %d",
                             op->id, dy_op_name(op->kind), p->vars[op->outputs[k]]->name, j);
    return DY_OK;
  }
  for (int k = 0; k < op->n_outputs; k++) {
    int o = op->outputs[k];
    if (p->vars[o]->alias_of >= 0 && p->vars[o]->fetch_index < 0)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s): output '%s' has alias_of set but %s "
                         "is not a view", op->id, dy_op_name(op->kind),
                         p->vars[o]->name, dy_op_name(op->kind));
    for (int j = 0; j < op->n_inputs; j++) {
      if (!cg_overlap(g, o, op->inputs[j]))
        continue;
      /* in place: an elementwise op may write over an input of exactly
       * its output's type at exactly its address (the input itself, or
       * a view of what is there: flatten(x) + x over x); its kernel then
       * takes plain pointers instead of restrict ones */
      const dy_var *vi = p->vars[op->inputs[j]], *vo = p->vars[o];
      const dy_var *ri = p->vars[g->st[op->inputs[j]].root];
      if (dy_op_has(op, DY_OPF_ELEMENTWISE) && g->st[o].kind == ST_ARENA &&
          g->st[op->inputs[j]].kind == ST_ARENA && dy_type_equal(&vi->type, &vo->type) &&
          ri->alias_of < 0 && vo->alias_of < 0 && ri->mem_offset == vo->mem_offset) {
        g->in_place[oi] = true;
        continue;
      }
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "op %d (%s): output '%s' shares memory with "
                         "input '%s' (kernels take restrict pointers)",
                         op->id, dy_op_name(op->kind), p->vars[o]->name,
                         p->vars[op->inputs[j]]->name);
    }
    for (int j = 0; j < k; j++)
      if (cg_overlap(g, o, op->outputs[j]))
        return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                           "op %d (%s): outputs '%s' and '%s' share memory",
                           op->id, dy_op_name(op->kind), p->vars[o]->name,
                           p->vars[op->outputs[j]]->name);
  }
  return DY_OK;
}

/* Without size symbols besides the batch, NAME.h and the executable
 * describe a dynamic dim by the batch alone (-1 in NAME_outputs[].shape,
 * the .npy header's dim the batch): an output dim of another expression
 * of it (2*batch, batch + 2: a concat along the batch, a Range of a shape
 * value) is refused, not written at the wrong size. */
static dy_status check_batch_only_io(cg_gen *g) {
  const dy_program *p = g->p;
  for (int i = 0; i < p->n_fetches && !g->n_named; i++) {
    const dy_var *v = p->vars[p->fetches[i]];
    for (int d = 0; d < v->type.rank; d++) {
      char b[64];
      if (v->type.shape[d] < -1)
        return dy_error_set(g->err, DY_STATUS_UNSUPPORTED,
                            "output '%s': dim %d is %s, not the batch itself: the generated "
                            "API gives each dynamic dim of an output as the batch (give that "
                            "dim a size symbol of its own: a dim_param other than the batch's)",
                            v->name, d, dy_dim_name(v->type.shape[d], b, sizeof b));
    }
  }
  return DY_OK;
}

dy_status cg_analyse(cg_gen *g) {
  dy_program_sym_bounds(g->p, g->bounds);
  const dy_program *p = g->p;
  for (int i = 0; i < p->n_vars; i++)
    g->def[i] = -1;
  dy_status s = check_op_ids(g);
  for (int oi = 0; oi < g->n_ops && s == DY_OK; oi++)
    s = check_op(g, oi);
  if (s == DY_OK)
    s = check_io(g);
  for (int i = 0; i < p->n_vars && s == DY_OK; i++)
    if (g->used[i])
      s = check_var(g, i);
  if (s != DY_OK)
    return s;
  find_named(g);
  s = check_batch_only_io(g);
  for (int oi = 0; oi < g->n_ops && s == DY_OK; oi++)
    s = check_kernel(g, oi);
  return s;
}
