/* verify.c - the verifier. It checks these invariants, in this order, and
 * reports the first one broken as "invariant N (name): detail":
 *
 *   1 (names)       every var has a non-empty name, unique in the program
 *   2 (op-kind)     every op has a known kind and the arity of ops.def
 *   3 (operands)    every op input and output is the id of an existing var
 *   4 (attributes)  every op carries exactly the attributes of its ops.def
 *                   schema, each of the declared kind
 *   5 (ssa)         every var is written by at most one op; feeds and
 *                   persistable vars are written by none
 *   6 (def-use)     every op input is a feed, a persistable var, or the
 *                   output of an op that comes earlier in the schedule
 *   7 (types)       every op's output types equal what inference computes
 *                   from its input types
 *   8 (params)      persistable vars have a static shape and carry data of
 *                   exactly numel * dtype-size bytes; other vars carry none
 *   9 (io)          feeds and fetches are valid, distinct, non-persistable
 *                   for feeds, defined in block 0 for fetches; there is >= 1
 *                   fetch
 *  10 (in-place)    an in-place op (DY_OPF_INPLACE: optimizer updates,
 *                   running statistics) writes its first n_out inputs:
 *                   outputs[i] == inputs[i], each a persistable var (rule
 *                   5's exemption: these are the only writes of persistable
 *                   vars); and the write is the var's last use in its
 *                   block: no later op reads or writes it, so every read
 *                   sees the value from before the step, and passes may
 *                   reorder ops freely above it. A fetch of the var gives
 *                   the updated value.
 *  11 (blocks)      the block tree: each sub-block's parent is a lower
 *                   index (no cycles); each is owned by exactly one control
 *                   op (cond, while), through valid, distinct block
 *                   attributes, and lies in that op's block; every op sits
 *                   in the block it records; params and results are
 *                   existing vars, params non-persistable, no feed, declared
 *                   by one block only; block 0 and cond branches have none
 *  12 (scope)       a block reads (as op inputs or results) only vars
 *                   visible from its parent chain at that point, and every
 *                   var from outside a sub-block is among its owner's inputs
 *                   (a capture); a var of a closed sub-block is not visible
 *                   after it
 *  13 (block-types) cond: both branches yield one value per output, of the
 *                   output's type; while: n_carried outputs, the condition
 *                   yields one bool element, both blocks take the carried
 *                   values and the body yields them again, types kept
 *
 * Each rule has one check function. They run in the order 1-4, 11, 5, 6
 * with 12, 7 with 13, then the rest: the walks after 11 rely on the block
 * tree.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

static dy_status broken(dy_error *err, const dy_op *op, int rule,
                        const char *name, const char *detail) {
  if (op)
    return dy_error_at(err, op, DY_STATUS_INVALID_IR,
                       "invariant %d (%s): op %d (%s): %s", rule, name, op->id,
                       dy_op_name(op->kind), detail);
  return dy_error_set(err, DY_STATUS_INVALID_IR, "invariant %d (%s): %s", rule,
                      name, detail);
}

#define FOR_EACH_OP(p, op)                                          \
  for (int b_ = 0; b_ < (p)->n_blocks; b_++)                        \
    for (int o_ = 0; o_ < (p)->blocks[b_]->n_ops; o_++)             \
      for (const dy_op *op = (p)->blocks[b_]->ops[o_]; op; op = NULL)

static dy_status check_names(const dy_program *p, dy_error *err) {
  char d[512];
  for (int i = 0; i < p->n_vars; i++) {
    if (!p->vars[i]->name || !p->vars[i]->name[0]) {
      snprintf(d, sizeof d, "var %d has no name", i);
      return broken(err, NULL, 1, "names", d);
    }
    for (int j = 0; j < i; j++)
      if (strcmp(p->vars[i]->name, p->vars[j]->name) == 0) {
        snprintf(d, sizeof d, "vars %d and %d are both named '%s'", j, i,
                 p->vars[i]->name);
        return broken(err, NULL, 1, "names", d);
      }
  }
  return DY_OK;
}

static dy_status check_op_kind(const dy_program *p, dy_error *err) {
  char d[256];
  FOR_EACH_OP(p, op) {
    if ((unsigned)op->kind >= DY_OP_COUNT) {
      snprintf(d, sizeof d, "op %d has unknown kind %d", op->id, (int)op->kind);
      return broken(err, NULL, 2, "op-kind", d);
    }
    const dy_op_info *info = dy_op_info_of(op->kind);
    if ((info->n_in >= 0 && op->n_inputs != info->n_in) ||
        (info->n_in < 0 && op->n_inputs < 1) ||
        (info->n_out >= 0 ? op->n_outputs != info->n_out : op->n_outputs < 1)) {
      snprintf(d, sizeof d, "has %d inputs and %d outputs, expected %d and %d",
               op->n_inputs, op->n_outputs, info->n_in, info->n_out);
      return broken(err, op, 2, "op-kind", d);
    }
  }
  return DY_OK;
}

static dy_status check_operands(const dy_program *p, dy_error *err) {
  char d[256];
  FOR_EACH_OP(p, op) {
    for (int i = 0; i < op->n_inputs + op->n_outputs; i++) {
      int v = i < op->n_inputs ? op->inputs[i] : op->outputs[i - op->n_inputs];
      if (v < 0 || v >= p->n_vars) {
        snprintf(d, sizeof d, "%s %d refers to var id %d of %d",
                 i < op->n_inputs ? "input" : "output",
                 i < op->n_inputs ? i : i - op->n_inputs, v, p->n_vars);
        return broken(err, op, 3, "operands", d);
      }
    }
  }
  return DY_OK;
}

/* The schema is dy_op_info_of(kind)->attrs (from ops.def): every entry
 * present with its kind, nothing else. Defaults are for eager and
 * frontend-built ops; a Program spells every attribute out. */
static dy_status check_attributes(const dy_program *p, dy_error *err) {
  char d[256];
  FOR_EACH_OP(p, op) {
    const dy_op_info *info = dy_op_info_of(op->kind);
    for (int i = 0; i < info->n_attrs; i++) {
      const dy_attr_schema *e = &info->attrs[i];
      const dy_attr *a = dy_op_find_attr(op, e->name);
      if (!a) {
        snprintf(d, sizeof d, "missing attribute '%s'", e->name);
        return broken(err, op, 4, "attributes", d);
      }
      if (a->kind != e->kind) {
        snprintf(d, sizeof d, "attribute '%s' is %s, should be %s", e->name,
                 dy_attr_kind_name(a->kind), dy_attr_kind_name(e->kind));
        return broken(err, op, 4, "attributes", d);
      }
    }
    if (op->n_attrs != info->n_attrs) {
      /* find the one not in the schema */
      for (int i = 0; i < op->n_attrs; i++)
        if (!dy_attr_schema_find(op->kind, op->attrs[i].name)) {
          snprintf(d, sizeof d, "unknown attribute '%s'", op->attrs[i].name);
          return broken(err, op, 4, "attributes", d);
        }
      snprintf(d, sizeof d, "an attribute is repeated");
      return broken(err, op, 4, "attributes", d);
    }
  }
  return DY_OK;
}

static dy_status check_ssa(const dy_program *p, int *writer, dy_error *err) {
  char d[256];
  for (int i = 0; i < p->n_vars; i++)
    writer[i] = -1;
  FOR_EACH_OP(p, op) {
    if (dy_op_has(op, DY_OPF_INPLACE))
      continue; /* its writes are rule 10's */
    for (int i = 0; i < op->n_outputs; i++) {
      const dy_var *v = p->vars[op->outputs[i]];
      if (writer[v->id] >= 0) {
        snprintf(d, sizeof d, "var '%s' is written by op %d and op %d", v->name,
                 writer[v->id], op->id);
        return broken(err, op, 5, "ssa", d);
      }
      if (v->persistable || v->feed_index >= 0) {
        snprintf(d, sizeof d, "writes %s var '%s'",
                 v->persistable ? "persistable" : "feed", v->name);
        return broken(err, op, 5, "ssa", d);
      }
      writer[v->id] = op->id;
    }
  }
  /* a sub-block's params are written on entry to it */
  for (int b = 1; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_params; i++) {
      const dy_var *v = p->vars[p->blocks[b]->params[i]];
      if (writer[v->id] != -1) {
        snprintf(d, sizeof d, "param '%s' of block %d is also written by %s", v->name,
                 b, writer[v->id] >= 0 ? "an op" : "another block's entry");
        return broken(err, NULL, 5, "ssa", d);
      }
      writer[v->id] = -2;
    }
  return DY_OK;
}

/* Invariants 6 and 12 in one walk over the block tree: `defined` holds
 * what is visible at the current point, `home` the block declaring it. On
 * leaving a sub-block its vars go out of scope again. */
typedef struct {
  const dy_program *p;
  bool *defined;
  int *home;
  int *decl;        /* the block declaring each var, -1 for none */
  dy_error *err;
} scope_walk;

static bool is_input_of(const dy_op *op, int v) {
  for (int i = 0; i < op->n_inputs; i++)
    if (op->inputs[i] == v)
      return true;
  return false;
}

/* v read in block b (owner: b's owning op, NULL in block 0) by op (NULL:
 * as a result). */
static dy_status check_read(scope_walk *w, int b, const dy_op *owner,
                            const dy_op *op, int v) {
  char d[384];
  const char *name = w->p->vars[v]->name;
  if (!w->defined[v]) {
    if (op)
      snprintf(d, sizeof d, "reads var '%s' before any op defines it", name);
    else
      snprintf(d, sizeof d, "block %d yields var '%s' before any op defines it", b, name);
    int at = w->decl[v];
    if (at < 0 || dy_block_within(w->p, b, at))
      return broken(w->err, op, op ? 6 : 12, op ? "def-use" : "scope", d);
    snprintf(d, sizeof d, "%s var '%s' of block %d, which is not visible in block %d",
             op ? "reads" : "yields", name, at, b);
    return broken(w->err, op, 12, "scope", d);
  }
  if (owner && !dy_block_within(w->p, w->home[v], b) && !is_input_of(owner, v)) {
    snprintf(d, sizeof d, "block %d reads '%s' from outside it, but op %d (%s) does "
             "not list it among its inputs (captures)", b, name, owner->id,
             dy_op_name(owner->kind));
    return broken(w->err, op, 12, "scope", d);
  }
  return DY_OK;
}

static dy_status walk_block(scope_walk *w, int b, const dy_op *owner) {
  const dy_block *blk = w->p->blocks[b];
  dy_status s;
  for (int i = 0; i < blk->n_params; i++) {
    w->defined[blk->params[i]] = true;
    w->home[blk->params[i]] = b;
  }
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    for (int i = 0; i < op->n_inputs; i++)
      if ((s = check_read(w, b, owner, op, op->inputs[i])))
        return s;
    int sub[2], n = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < n; j++) {
      if ((s = walk_block(w, sub[j], op)))
        return s;
      /* its vars go out of scope */
      for (int v = 0; v < w->p->n_vars; v++)
        if (w->defined[v] && w->home[v] > 0 && dy_block_within(w->p, w->home[v], sub[j]))
          w->defined[v] = false;
    }
    for (int i = 0; i < op->n_outputs; i++) {
      w->defined[op->outputs[i]] = true;
      w->home[op->outputs[i]] = b;
    }
  }
  for (int i = 0; i < blk->n_results; i++)
    if ((s = check_read(w, b, owner, NULL, blk->results[i])))
      return s;
  return DY_OK;
}

static dy_status check_def_use(const dy_program *p, dy_error *err) {
  bool *defined = calloc((size_t)p->n_vars + 1, 1);
  int *home = malloc(sizeof(int) * ((size_t)p->n_vars + 1));
  if (!defined || !home) {
    free(defined);
    free(home);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "verify: out of memory");
  }
  int *decl = malloc(sizeof(int) * ((size_t)p->n_vars + 1));
  if (!decl) {
    free(defined);
    free(home);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "verify: out of memory");
  }
  dy_program_declaring_blocks(p, decl, -1);
  for (int i = 0; i < p->n_vars; i++) {
    defined[i] = p->vars[i]->persistable || p->vars[i]->feed_index >= 0;
    home[i] = defined[i] ? 0 : -1;
    if (defined[i])
      decl[i] = 0;
  }
  scope_walk w = {p, defined, home, decl, err};
  dy_status s = walk_block(&w, 0, NULL);
  free(defined);
  free(home);
  free(decl);
  return s;
}

/* Invariant 11: the block tree (see the header). */
static dy_status check_blocks(const dy_program *p, dy_error *err) {
  char d[256];
  int nb = p->n_blocks;
  int *owner = malloc(sizeof(int) * ((size_t)nb + 1));
  int *decl = calloc((size_t)p->n_vars + 1, sizeof(int));
  if (!owner || !decl) {
    free(owner);
    free(decl);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "verify: out of memory");
  }
  dy_status s = DY_OK;
  for (int b = 0; b < nb; b++)
    owner[b] = -1;
  if (nb < 1 || p->blocks[0]->parent != -1)
    s = broken(err, NULL, 11, "blocks", "block 0 must exist and have parent -1");
  for (int b = 1; b < nb && !s; b++)
    if (p->blocks[b]->parent < 0 || p->blocks[b]->parent >= b) {
      snprintf(d, sizeof d, "block %d has parent %d (a sub-block's parent has a "
               "lower index, so the tree has no cycles)", b, p->blocks[b]->parent);
      s = broken(err, NULL, 11, "blocks", d);
    }
  for (int b = 0; b < nb && !s; b++)
    for (int k = 0; k < p->blocks[b]->n_ops && !s; k++) {
      const dy_op *op = p->blocks[b]->ops[k];
      int sub[2], n = dy_op_sub_blocks(op, sub);
      if (op->block != b) {
        snprintf(d, sizeof d, "sits in block %d but records block %d", b, op->block);
        s = broken(err, op, 11, "blocks", d);
      }
      for (int j = 0; j < n && !s; j++) {
        int sb = sub[j];
        if (sb <= 0 || sb >= nb || (j == 1 && sb == sub[0])) {
          snprintf(d, sizeof d, "names block %d, not a distinct sub-block of the "
                   "Program's %d blocks", sb, nb);
          s = broken(err, op, 11, "blocks", d);
        } else if (owner[sb] >= 0) {
          snprintf(d, sizeof d, "block %d is owned by op %d and op %d", sb, owner[sb],
                   op->id);
          s = broken(err, op, 11, "blocks", d);
        } else if (p->blocks[sb]->parent != b) {
          snprintf(d, sizeof d, "its sub-block %d has parent %d, not the op's block %d",
                   sb, p->blocks[sb]->parent, b);
          s = broken(err, op, 11, "blocks", d);
        } else if (op->kind == DY_OP_COND && p->blocks[sb]->n_params) {
          snprintf(d, sizeof d, "branch block %d has params (a branch reads outer "
                   "values as captures)", sb);
          s = broken(err, op, 11, "blocks", d);
        }
        if (!s)
          owner[sb] = op->id;
      }
    }
  for (int b = 0; b < nb && !s; b++) {
    const dy_block *blk = p->blocks[b];
    if (b > 0 && owner[b] < 0) {
      snprintf(d, sizeof d, "block %d has no owning op", b);
      s = broken(err, NULL, 11, "blocks", d);
    } else if (b == 0 && (blk->n_params || blk->n_results)) {
      s = broken(err, NULL, 11, "blocks", "block 0 has params or results");
    }
    for (int i = 0; i < blk->n_params + blk->n_results && !s; i++) {
      bool param = i < blk->n_params;
      int v = param ? blk->params[i] : blk->results[i - blk->n_params];
      if (v < 0 || v >= p->n_vars) {
        snprintf(d, sizeof d, "block %d: %s %d is var id %d of %d", b,
                 param ? "param" : "result", param ? i : i - blk->n_params, v, p->n_vars);
        s = broken(err, NULL, 11, "blocks", d);
      } else if (param && (p->vars[v]->persistable || p->vars[v]->feed_index >= 0 ||
                           decl[v])) {
        snprintf(d, sizeof d, "block %d: param '%s' is %s", b, p->vars[v]->name,
                 decl[v] ? "a param of another block too" : "a feed or persistable");
        s = broken(err, NULL, 11, "blocks", d);
      } else if (param) {
        decl[v] = 1;
      }
    }
  }
  free(owner);
  free(decl);
  return s;
}

static dy_status check_types(const dy_program *p, dy_error *err) {
  FOR_EACH_OP(p, op) {
    dy_type in[64], out[64];
    bool control = dy_op_sub_blocks(op, (int[2]){0}) > 0;
    if (op->n_inputs > 64 || op->n_outputs > 64)
      return broken(err, op, 7, "types", "too many operands");
    for (int i = 0; i < op->n_inputs; i++)
      in[i] = p->vars[op->inputs[i]]->type;
    dy_error e = {0};
    if (dy_infer_in(p, op, in, op->n_inputs, out, &e) != DY_OK)
      return broken(err, op, control ? 13 : 7, control ? "block-types" : "types", e.msg);
    for (int i = 0; i < op->n_outputs; i++) {
      const dy_var *v = p->vars[op->outputs[i]];
      if (!dy_type_equal(&v->type, &out[i])) {
        char d[512], a[128], b[128];
        snprintf(d, sizeof d, "output '%s' is %s, inference gives %s", v->name,
                 dy_type_str(&v->type, a, sizeof a), dy_type_str(&out[i], b, sizeof b));
        return broken(err, op, 7, "types", d);
      }
    }
  }
  return DY_OK;
}

static dy_status check_params(const dy_program *p, dy_error *err) {
  char d[256];
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!v->persistable) {
      if (v->data) {
        snprintf(d, sizeof d, "non-persistable var '%s' carries data", v->name);
        return broken(err, NULL, 8, "params", d);
      }
      continue;
    }
    if (!dy_type_is_static(&v->type)) {
      snprintf(d, sizeof d, "persistable var '%s' has a dynamic shape", v->name);
      return broken(err, NULL, 8, "params", d);
    }
    if (!v->data) {
      snprintf(d, sizeof d, "persistable var '%s' has no data", v->name);
      return broken(err, NULL, 8, "params", d);
    }
  }
  return DY_OK;
}

static dy_status check_io(const dy_program *p, const int *writer, dy_error *err) {
  char d[256];
  if (p->n_fetches < 1)
    return broken(err, NULL, 9, "io", "the program has no fetch");
  for (int k = 0; k < p->n_feeds + p->n_fetches; k++) {
    bool feed = k < p->n_feeds;
    int idx = feed ? k : k - p->n_feeds;
    int v = feed ? p->feeds[idx] : p->fetches[idx];
    if (v < 0 || v >= p->n_vars) {
      snprintf(d, sizeof d, "%s %d refers to var id %d", feed ? "feed" : "fetch",
               idx, v);
      return broken(err, NULL, 9, "io", d);
    }
    const dy_var *var = p->vars[v];
    if ((feed ? var->feed_index : var->fetch_index) != idx) {
      snprintf(d, sizeof d, "var '%s' is %s %d but records index %d", var->name,
               feed ? "feed" : "fetch", idx, feed ? var->feed_index : var->fetch_index);
      return broken(err, NULL, 9, "io", d);
    }
    if (feed && var->persistable) {
      snprintf(d, sizeof d, "feed '%s' is persistable", var->name);
      return broken(err, NULL, 9, "io", d);
    }
    if (!feed && !var->persistable && var->feed_index < 0 && writer[v] < 0) {
      snprintf(d, sizeof d, "fetch '%s' is never computed", var->name);
      return broken(err, NULL, 9, "io", d);
    }
    int home = 0;
    if (!feed && dy_program_def(p, v, &home, NULL) && home != 0) {
      snprintf(d, sizeof d, "fetch '%s' is computed inside block %d, not in block 0",
               var->name, home);
      return broken(err, NULL, 9, "io", d);
    }
  }
  return DY_OK;
}

static dy_status check_in_place(const dy_program *p, dy_error *err) {
  char d[512];
  for (int b = 0; b < p->n_blocks; b++) {
    const dy_block *blk = p->blocks[b];
    for (int k = 0; k < blk->n_ops; k++) {
      const dy_op *op = blk->ops[k];
      if (!dy_op_has(op, DY_OPF_INPLACE))
        continue;
      for (int i = 0; i < op->n_outputs; i++) {
        const dy_var *v = p->vars[op->outputs[i]];
        if (i >= op->n_inputs || op->inputs[i] != op->outputs[i]) {
          snprintf(d, sizeof d, "output %d '%s' is not input %d (an in-place op "
                   "writes the vars it reads)", i, v->name, i);
          return broken(err, op, 10, "in-place", d);
        }
        if (!v->persistable || v->feed_index >= 0) {
          snprintf(d, sizeof d, "writes '%s' in place, which is not a persistable "
                   "var (only state is updated in place)", v->name);
          return broken(err, op, 10, "in-place", d);
        }
        /* the in-place write is the var's last use in the block */
        for (int j = k + 1; j < blk->n_ops; j++) {
          const dy_op *later = blk->ops[j];
          for (int t = 0; t < later->n_inputs + later->n_outputs; t++) {
            bool reads = t < later->n_inputs;
            int u = reads ? later->inputs[t] : later->outputs[t - later->n_inputs];
            if (u != v->id)
              continue;
            snprintf(d, sizeof d, "op %d (%s) %s '%s' after op %d updated it in "
                     "place (the update must be its last use)", later->id,
                     dy_op_name(later->kind), reads ? "reads" : "writes", v->name,
                     op->id);
            return broken(err, op, 10, "in-place", d);
          }
        }
      }
    }
  }
  return DY_OK;
}

dy_status dy_verify(const dy_program *p, dy_error *err) {
  dy_status s;
  if ((s = check_names(p, err)) || (s = check_op_kind(p, err)) ||
      (s = check_operands(p, err)) || (s = check_attributes(p, err)) ||
      (s = check_blocks(p, err)))
    return s;
  int *writer = malloc(sizeof(int) * ((size_t)p->n_vars + 1));
  if (!writer)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "verify: out of memory");
  if (!(s = check_ssa(p, writer, err)) && !(s = check_def_use(p, err)) &&
      !(s = check_types(p, err)) && !(s = check_params(p, err)))
    if (!(s = check_io(p, writer, err)))
      s = check_in_place(p, err);
  free(writer);
  return s;
}
