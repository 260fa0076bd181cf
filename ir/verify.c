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
 *                   for feeds, defined for fetches; there is >= 1 fetch
 *  10 (in-place)    an in-place op (DY_OPF_INPLACE: optimizer updates,
 *                   running statistics) writes its first n_out inputs:
 *                   outputs[i] == inputs[i], each a persistable var (rule
 *                   5's exemption: these are the only writes of persistable
 *                   vars); and the write is the var's last use in its
 *                   block: no later op reads or writes it, so every read
 *                   sees the value from before the step, and passes may
 *                   reorder ops freely above it. A fetch of the var gives
 *                   the updated value.
 *
 * Each rule has one check function. Block structure is flat for now
 * (block 0); sub-blocks will add a rule when cond/while arrive.
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
        (info->n_in < 0 && op->n_inputs < 1) || op->n_outputs != info->n_out) {
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
  return DY_OK;
}

static dy_status check_def_use(const dy_program *p, dy_error *err) {
  char d[256];
  bool *defined = calloc((size_t)p->n_vars + 1, 1);
  if (!defined)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "verify: out of memory");
  for (int i = 0; i < p->n_vars; i++)
    defined[i] = p->vars[i]->persistable || p->vars[i]->feed_index >= 0;
  dy_status s = DY_OK;
  FOR_EACH_OP(p, op) {
    for (int i = 0; i < op->n_inputs && !s; i++)
      if (!defined[op->inputs[i]]) {
        snprintf(d, sizeof d, "reads var '%s' before any op defines it",
                 p->vars[op->inputs[i]]->name);
        s = broken(err, op, 6, "def-use", d);
      }
    for (int i = 0; i < op->n_outputs; i++)
      defined[op->outputs[i]] = true;
    if (s)
      break;
  }
  free(defined);
  return s;
}

static dy_status check_types(const dy_program *p, dy_error *err) {
  FOR_EACH_OP(p, op) {
    dy_type in[16], out[8];
    if (op->n_inputs > 16 || op->n_outputs > 8)
      return broken(err, op, 7, "types", "too many operands");
    for (int i = 0; i < op->n_inputs; i++)
      in[i] = p->vars[op->inputs[i]]->type;
    dy_error e = {0};
    if (dy_infer(op, in, op->n_inputs, out, &e) != DY_OK)
      return broken(err, op, 7, "types", e.msg);
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
      (s = check_operands(p, err)) || (s = check_attributes(p, err)))
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
