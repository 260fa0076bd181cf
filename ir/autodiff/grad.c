/* grad.c - the gradient table and dy_grad_op (the dispatcher), the
 * Program builder (dy_gb_program), Program autodiff
 * (dy_program_gradients, dy_program_append_backward) and cond's rule
 * (dy_grad_cond), which walks blocks as Program autodiff does and so sits
 * here: a cond on the same predicate whose branches recompute the forward
 * branch and run its backward from the output gradients.
 *
 * The files, top to bottom (a file calls only those below it):
 *
 *   grad.c            the table, the Program builder, the Program walk
 *   grad_fused.c      a fused op's rule runs its parts' rules
 *   grad_<family>.c   the rules, one file per ops_<family>.def
 *   gb.c              the dy_gb_* helpers every rule is written with
 *
 * See dy_grad.h for the contract. Program autodiff is
 * Paddle's append_backward: walk block 0 backwards from the loss (and a
 * cond's branches from its output gradients), call the
 * rule of every op whose output has a gradient and one of whose inputs
 * depends on a var we differentiate against, and sum the contributions
 * of a var used several times.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

/* ---- the table ---- */

/* A NODIFF op's entry is NULL; the conditional is folded at compile time,
 * so such an op needs no rule, and any other op without one is a link
 * error. */
const dy_grad_fn dy_grad_table[DY_OP_COUNT] = {
#define DY_OP(NAME, name, n_in, n_out, flags, attrs) \
  [DY_OP_##NAME] = ((flags) & DY_OPF_NODIFF) ? (dy_grad_fn)0 : dy_grad_##name,
#include "ops.def"
#undef DY_OP
};

bool dy_grad_input_is_differentiable(dy_op_kind k, int i, dy_dtype t) {
  /* sampling coordinates: only the feature map gets a gradient (as
   * Paddle's roi_align; grid_sample's grid gradient is not written) */
  if (i == 1 && (k == DY_OP_GRID_SAMPLE || k == DY_OP_ROI_ALIGN))
    return false;
  return t == DY_F32 && dy_grad_table[k] != NULL;
}

dy_status dy_grad_op(dy_gb *b, const dy_op *op, const int *x, const int *y,
                     const int *dy, const bool *need, int *dx) {
  const dy_op *saved = b->fwd;
  b->fwd = op;
  for (int i = 0; i < op->n_inputs; i++)
    dx[i] = -1;
  dy_status s;
  if (!dy_grad_table[op->kind])
    s = dy_error_at(b->err, op, DY_STATUS_UNSUPPORTED,
                    "%s has no gradient (its result is not differentiable), "
                    "but the loss depends on it through a differentiable input",
                    dy_op_name(op->kind));
  else if ((s = dy_grad_table[op->kind](b, op, x, y, dy, need, dx)) == DY_OK)
    s = b->err->status;
  if (s && !b->err->status)
    s = dy_error_at(b->err, op, s, "%s: gradient failed", dy_op_name(op->kind));
  b->fwd = saved;
  return s;
}

/* ------------------------------------------------------------------ */
/* the Program builder                                                 */
/* ------------------------------------------------------------------ */

typedef dy_gb_program_state prog_gb;

/* NULL when the name would not fit (a stem of hundreds of characters) */
static const char *fresh(prog_gb *s, const char *stem) {
  char buf[400];
  for (;;) {
    int n = snprintf(buf, sizeof buf, "%s%d", stem, s->next++);
    if (n < 0 || (size_t)n >= sizeof buf)
      return NULL;
    if (dy_program_find_var(s->p, buf) < 0)
      return dy_program_strdup(s->p, buf);
  }
}

static dy_type prog_type(dy_gb *b, int v) {
  prog_gb *s = b->user;
  return s->p->vars[v]->type;
}

static int prog_emit(dy_gb *b, dy_op_kind kind, const int *in, int n_in,
                     const dy_attr *attrs, int n_attrs) {
  prog_gb *s = b->user;
  dy_program *p = s->p;
  dy_type tin[DY_MAX_OP_INPUTS], tout[8];
  if (n_in > DY_MAX_OP_INPUTS)
    return dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "%s: too many inputs", dy_op_name(kind));
  for (int i = 0; i < n_in; i++)
    tin[i] = p->vars[in[i]]->type;
  dy_srcloc loc = b->fwd ? b->fwd->loc : (dy_srcloc){0};
  dy_op probe = {.id = -1, .kind = kind, .attrs = (dy_attr *)attrs,
                 .n_attrs = n_attrs, .loc = loc};
  dy_error e = {0};
  if (dy_infer(&probe, tin, n_in, tout, &e)) {
    char msg[600];
    dy_error_format(&e, msg, sizeof msg);
    return dy_gb_fail(b, e.status, "%s", msg);
  }
  if (dy_op_has(&probe, DY_OPF_INPLACE)) {
    /* an update writes its first n_out inputs; their first is the value */
    if (!dy_program_append_op(p, s->block, kind, in, n_in, in,
                              dy_op_info_of(kind)->n_out, attrs, n_attrs, loc))
      return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    return in[0];
  }
  const char *name = fresh(s, s->stem);
  int v = name ? dy_program_add_var(p, name, &tout[0]) : -1;
  if (v < 0)
    return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  p->vars[v]->block = s->block;
  dy_op *op = dy_program_append_op(p, s->block, kind, in, n_in, &v, 1, attrs,
                                   n_attrs, loc);
  if (!op)
    return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return v;
}

static int prog_constant(dy_gb *b, dy_dtype dtype, double value) {
  prog_gb *s = b->user;
  dy_type t = {.dtype = dtype, .rank = 0};
  char stem[128];
  int len = snprintf(stem, sizeof stem, "%sconst", s->stem);
  const char *name = len > 0 && (size_t)len < sizeof stem ? fresh(s, stem) : NULL;
  int v = name ? dy_program_add_var(s->p, name, &t) : -1;
  if (v < 0)
    return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "cannot add a constant var");
  int64_t d[1]; /* room for one element of any dtype */
  dy_dtype_set_f64(dtype, d, 0, value);
  dy_error e = {0};
  if (dy_program_set_data(s->p, v, d, dy_dtype_size(dtype), &e))
    return dy_gb_fail(b, e.status, "%s", e.msg);
  return v;
}

void dy_gb_program(dy_gb *b, dy_gb_program_state *st, dy_program *p, int block,
                   const char *stem, dy_error *err) {
  *st = (dy_gb_program_state){.p = p, .block = block, .stem = stem};
  *b = (dy_gb){.emit = prog_emit, .constant = prog_constant, .type = prog_type,
               .err = err, .user = st};
}

/* ------------------------------------------------------------------ */
/* Program autodiff                                                    */
/* ------------------------------------------------------------------ */

/* Name the gradient of var w "<w>@GRAD" (or a fresh variant): rename g
 * when it is a temporary of ours, else copy it into a new var. */
static int name_grad(dy_gb *b, prog_gb *s, int w, int g) {
  dy_program *p = s->p;
  char stem[300];
  int len = snprintf(stem, sizeof stem, "%s@GRAD", p->vars[w]->name);
  if (len < 0 || (size_t)len >= sizeof stem)
    return dy_gb_fail(b, DY_STATUS_LIMIT, "var name '%.40s...' is too long",
                      p->vars[w]->name);
  const char *nm = dy_program_find_var(p, stem) < 0 ? dy_program_strdup(p, stem)
                                                    : fresh(s, stem);
  if (!nm)
    return dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_var *gv = p->vars[g];
  if (!gv->persistable && gv->feed_index < 0 &&
      strncmp(gv->name, s->stem, strlen(s->stem)) == 0) {
    gv->name = nm;
    return g;
  }
  int c = dy_gb_scale(b, g, 1.0, 0.0);
  if (c >= 0)
    p->vars[c]->name = nm;
  return c;
}

/* Mark the vars of block blk that depend on a var already marked (op
 * outputs of f32 type, in order; a cond's outputs through its inputs,
 * which list its captures). */
static void mark_dep(const dy_program *p, int blk, bool *dep) {
  const dy_block *bl = p->blocks[blk];
  for (int k = 0; k < bl->n_ops; k++) {
    const dy_op *op = bl->ops[k];
    if (dy_op_has(op, DY_OPF_INPLACE))
      continue;
    bool any = false;
    for (int i = 0; i < op->n_inputs; i++)
      any |= dep[op->inputs[i]];
    for (int j = 0; j < op->n_outputs && any; j++)
      if (p->vars[op->outputs[j]]->type.dtype == DY_F32)
        dep[op->outputs[j]] = true;
  }
}

/* Walk the first n_fwd ops of block blk backwards from the gradients
 * already in g (g[v]: the gradient var of v, -1 for none): run the rule of
 * every op whose output has a gradient and one of whose inputs depends
 * (dep) on a var we differentiate against, summing the contributions of a
 * var used several times. b emits into blk. */
static dy_status walk_back(dy_gb *b, dy_program *p, int blk, int n_fwd,
                           const bool *dep, int *g, dy_error *err) {
  int max_in = 1, max_out = 1;
  for (int k = 0; k < n_fwd; k++) {
    const dy_op *op = p->blocks[blk]->ops[k];
    max_in = op->n_inputs > max_in ? op->n_inputs : max_in;
    max_out = op->n_outputs > max_out ? op->n_outputs : max_out;
  }
  int *dy = malloc(sizeof(int) * (size_t)max_out);
  int *dx = malloc(sizeof(int) * (size_t)max_in);
  bool *need = malloc(sizeof(bool) * (size_t)max_in);
  dy_status s = DY_OK;
  if (!dy || !dx || !need)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int k = n_fwd - 1; k >= 0 && !s; k--) {
    const dy_op *op = p->blocks[blk]->ops[k];  /* blocks may move: re-read */
    if (dy_op_has(op, DY_OPF_INPLACE))
      continue;
    bool has = false;
    for (int j = 0; j < op->n_outputs; j++) {
      dy[j] = g[op->outputs[j]];
      has |= dy[j] >= 0;
    }
    bool any = false;
    for (int i = 0; i < op->n_inputs; i++) {
      need[i] = dep[op->inputs[i]] &&
                dy_grad_input_is_differentiable(op->kind, i,
                                                p->vars[op->inputs[i]]->type.dtype);
      any |= need[i];
    }
    if (!has)
      continue;
    if (!any) {
      /* a NODIFF op on the path: the loss depends on its input only
       * through a non-differentiable result */
      bool dep_in = false;
      for (int i = 0; i < op->n_inputs; i++)
        dep_in |= dep[op->inputs[i]];
      if (dep_in && !dy_grad_table[op->kind]) {
        s = dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                        "cannot differentiate through %s: it has no gradient",
                        dy_op_name(op->kind));
      }
      continue;
    }
    /* while's rule rewrites the op (new inputs, kept apart): dx follows
     * the inputs it had */
    const int *in = op->inputs;
    int n_in = op->n_inputs;
    if ((s = dy_grad_op(b, op, in, op->outputs, dy, need, dx)))
      break;
    for (int i = 0; i < n_in; i++) {
      int v = in[i];
      if (!need[i] || dx[i] < 0)
        continue;
      b->fwd = op;
      g[v] = g[v] < 0 ? dx[i] : dy_gb_add(b, g[v], dx[i]);
      b->fwd = NULL;
      if ((s = err->status))
        break;
    }
  }
  free(dy);
  free(dx);
  free(need);
  return s;
}

/* ---- cond: a cond on the same predicate whose branches recompute the
 * forward's branch and run its backward ---- */

/* Record an out-of-memory error; the status recorded. */
static dy_status oom(dy_gb *b) {
  dy_gb_fail(b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return dy_gb_status(b);
}

static dy_status clone_block(dy_gb *b, prog_gb *s, int src, int dst, int *map,
                             int n_map, int depth);

/* A fresh var "<name>@re" of var v's type, or -1 (out of memory). */
static int re_var(prog_gb *s, int v) {
  dy_program *p = s->p;
  char stem[300];
  int len = snprintf(stem, sizeof stem, "%s@re", p->vars[v]->name);
  const char *nm = len > 0 && (size_t)len < sizeof stem ? fresh(s, stem) : NULL;
  return nm ? dy_program_add_var(p, nm, &p->vars[v]->type) : -1;
}

/* Clone src's ops into dst (src's vars given fresh "<name>@re" vars in
 * map, reads of outer vars kept: dst's owner captures them). A cond or
 * while among them gets clones of its sub-blocks under dst. */
static dy_status clone_op(dy_gb *b, prog_gb *s, const dy_op *op, int dst, int *map,
                          int n_map, int depth) {
  dy_program *p = s->p;
  int *io = malloc(sizeof(int) * (size_t)(op->n_inputs + op->n_outputs + 1));
  if (!io)
    return oom(b);
  int *out = io + op->n_inputs;
  for (int i = 0; i < op->n_inputs; i++) {
    int v = op->inputs[i];
    io[i] = v < n_map && map[v] >= 0 ? map[v] : v;
  }
  dy_status st = DY_OK;
  for (int j = 0; j < op->n_outputs && !st; j++) {
    int v = op->outputs[j];
    if ((out[j] = re_var(s, v)) < 0)
      st = oom(b);
    else {
      p->vars[out[j]]->block = dst;
      map[v] = out[j];
    }
  }
  dy_attr attrs[(int)DY_WHILE_NATTRS + (int)DY_COND_NATTRS];
  const dy_attr *at = op->attrs;
  int n_at = op->n_attrs;
  int sub[2], ns = dy_op_sub_blocks(op, sub), nsub[2] = {-1, -1};
  for (int j = 0; j < ns && !st; j++) {
    nsub[j] = dy_program_add_block(p, dst);
    if (nsub[j] < 0)
      st = oom(b);
    else
      st = clone_block(b, s, sub[j], nsub[j], map, n_map, depth + 1);
  }
  if (!st && op->kind == DY_OP_COND) {
    dy_cond_attrs a = dy_cond_attrs_get(op);
    a.then_block = nsub[0];
    a.else_block = nsub[1];
    n_at = dy_cond_attrs_put(&a, attrs);
    at = attrs;
  } else if (!st && op->kind == DY_OP_WHILE) {
    dy_while_attrs a = dy_while_attrs_get(op);
    a.cond_block = nsub[0];
    a.body_block = nsub[1];
    n_at = dy_while_attrs_put(&a, attrs);
    at = attrs;
  }
  if (!st && !dy_program_append_op(p, dst, op->kind, io, op->n_inputs, out,
                                   op->n_outputs, at, n_at, op->loc))
    st = oom(b);
  free(io);
  return st;
}

static dy_status clone_block(dy_gb *b, prog_gb *s, int src, int dst, int *map,
                             int n_map, int depth) {
  dy_program *p = s->p;
  if (depth > p->n_blocks) {
    dy_gb_fail(b, DY_STATUS_INVALID_ARGUMENT, "the blocks form a cycle");
    return dy_gb_status(b);
  }
  const dy_block *sb = p->blocks[src];
  int n = sb->n_params > sb->n_results ? sb->n_params : sb->n_results;
  int *v = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!v)
    return oom(b);
  dy_status st = DY_OK;
  for (int i = 0; i < sb->n_params && !st; i++) {
    int w = sb->params[i];
    if ((v[i] = re_var(s, w)) < 0)
      st = oom(b);
    else
      map[w] = v[i];
  }
  if (!st && !dy_block_set_params(p, dst, v, sb->n_params))
    st = oom(b);
  int n_ops = p->blocks[src]->n_ops;
  for (int k = 0; k < n_ops && !st; k++)
    st = clone_op(b, s, p->blocks[src]->ops[k], dst, map, n_map, depth);
  sb = p->blocks[src];
  for (int i = 0; i < sb->n_results && !st; i++) {
    int w = sb->results[i];
    v[i] = w < n_map && map[w] >= 0 ? map[w] : w;
  }
  if (!st && !dy_block_set_results(p, dst, v, sb->n_results))
    st = oom(b);
  free(v);
  return st;
}

/* One branch of cond's gradient: block nb (under the cond's block)
 * recomputes branch `src` and runs its backward from the output
 * gradients dy; res[i] is the gradient of input i (-1: none). */
static dy_status grad_branch(dy_gb *b, prog_gb *s, const dy_op *op, int src,
                             int nb, const int *dy, const bool *need, int *res) {
  dy_program *p = s->p;
  int n0 = p->n_vars;
  int *map = malloc(sizeof(int) * (size_t)n0);
  if (!map)
    return oom(b);
  for (int i = 0; i < n0; i++)
    map[i] = -1;
  prog_gb bs;
  dy_gb bb;
  dy_gb_program(&bb, &bs, p, nb, s->stem, b->err);
  bs.next = s->next;
  bb.fwd = op;
  dy_status st = clone_block(&bb, &bs, src, nb, map, n0, 0);
  int nv = p->n_vars, n_fwd = p->blocks[nb]->n_ops;
  bool *dep = st ? NULL : calloc((size_t)nv, sizeof *dep);
  int *g = st ? NULL : malloc(sizeof(int) * (size_t)nv);
  if (!st && (!dep || !g))
    st = oom(b);
  for (int i = 0; i < nv && !st; i++)
    g[i] = -1;
  for (int i = 0; i < op->n_inputs && !st; i++)
    dep[op->inputs[i]] |= need[i];
  if (!st)
    mark_dep(p, nb, dep);
  /* the seeds: the output gradients at the branch's results */
  for (int j = 0; j < op->n_outputs && !st; j++) {
    int r = p->blocks[nb]->results[j];
    if (dy[j] < 0 || !dep[r])
      continue;
    g[r] = g[r] < 0 ? dy[j] : dy_gb_add(&bb, g[r], dy[j]);
    st = dy_gb_status(&bb);
  }
  if (!st)
    st = walk_back(&bb, p, nb, n_fwd, dep, g, b->err);
  for (int i = 0; i < op->n_inputs; i++)
    res[i] = !st && need[i] ? g[op->inputs[i]] : -1;
  s->next = bs.next;
  free(map);
  free(dep);
  free(g);
  return st;
}

/* Drop the ops of block nb whose outputs nothing after them in nb reads
 * and nb does not yield: the recomputed forward values the backward did
 * not need (a nested op's captures are among its inputs). An op owning
 * blocks stays (its blocks would lose their owner). */
static dy_status prune_unread(dy_gb *b, dy_program *p, int nb) {
  bool *read = calloc((size_t)p->n_vars, sizeof *read);
  if (!read)
    return oom(b);
  dy_block *blk = p->blocks[nb];
  for (int i = 0; i < blk->n_results; i++)
    read[blk->results[i]] = true;
  for (int k = blk->n_ops - 1; k >= 0; k--) {
    const dy_op *op = blk->ops[k];
    int sub[2];
    bool used = dy_op_has(op, DY_OPF_INPLACE) || dy_op_sub_blocks(op, sub) > 0;
    for (int j = 0; j < op->n_outputs && !used; j++)
      used = read[op->outputs[j]];
    if (!used) {
      dy_block_remove_op(blk, k);
      continue;
    }
    for (int i = 0; i < op->n_inputs; i++)
      read[op->inputs[i]] = true;
  }
  free(read);
  return DY_OK;
}

/* The values a backward branch yields, one per gradient output of the
 * backward cond: the branch's gradient or a zero of the input's type. */
static dy_status yield_grads(prog_gb *s, int nb, const dy_op *op, const int *res,
                             const int *outs, int n_outs, dy_error *err) {
  prog_gb bs;
  dy_gb bb;
  dy_gb_program(&bb, &bs, s->p, nb, s->stem, err);
  bs.next = s->next;
  bb.fwd = op;
  int *v = malloc(sizeof(int) * (size_t)(n_outs ? n_outs : 1));
  if (!v)
    return oom(&bb);
  for (int k = 0; k < n_outs; k++) {
    int i = outs[k], x = op->inputs[i];
    if (res[i] >= 0) {
      v[k] = dy_gb_reshape_as(&bb, res[i], x);
    } else {
      int zero = dy_gb_const(&bb, 0.0);
      v[k] = dy_gb_expand_as(&bb, zero, x);
      if (v[k] == zero)  /* x is a scalar: yield a var of the block */
        v[k] = dy_gb_scale(&bb, zero, 1.0, 0.0);
    }
  }
  if (!err->status && !dy_block_set_results(s->p, nb, v, n_outs))
    (void)oom(&bb);
  s->next = bs.next;
  free(v);
  return err->status;
}

/* The gradient of cond(pred, captures...): a cond on pred whose then
 * block recomputes the then branch and runs its backward seeded with the
 * output gradients dy, the else block likewise; each yields the gradients
 * of the captures asked for (zeros where its branch does not use one).
 * The forward's values inside a branch are not visible outside it, hence
 * the recomputation; no stack is needed, pred stays live. Built in
 * Programs only: the eager tape records the branch it ran, never a cond. */
dy_status dy_grad_cond(dy_gb *b, const dy_op *op, const int *x, const int *y,
                       const int *dy, const bool *need, int *dx) {
  (void)x;
  (void)y;
  if (b->emit != prog_emit) {
    dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "only a Program's cond is "
               "differentiated (the eager tape records the branch run)");
    return dy_gb_status(b);
  }
  prog_gb *s = b->user;
  dy_program *p = s->p;
  int ni = op->n_inputs, src[2];
  dy_op_sub_blocks(op, src);
  int *res = malloc(sizeof(int) * (size_t)(3 * ni));
  if (!res)
    return oom(b);
  int *outs = res + 2 * ni, n_outs = 0, nb[2] = {-1, -1};
  dy_status st = DY_OK;
  for (int j = 0; j < 2 && !st; j++) {
    nb[j] = dy_program_add_block(p, s->block);
    if (nb[j] < 0)
      st = oom(b);
    else
      st = grad_branch(b, s, op, src[j], nb[j], dy, need, res + j * ni);
  }
  /* an output per input with a gradient in either branch (at least one:
   * a cond has an output) */
  for (int i = 0; i < ni && !st; i++)
    if (need[i] && (res[i] >= 0 || res[ni + i] >= 0))
      outs[n_outs++] = i;
  for (int i = 0; i < ni && !st && n_outs == 0; i++)
    if (need[i])
      outs[n_outs++] = i;
  for (int j = 0; j < 2 && !st; j++)
    if (!(st = yield_grads(s, nb[j], op, res + j * ni, outs, n_outs, b->err)))
      st = prune_unread(b, p, nb[j]);
  int *ov = res;  /* reused: the gradient outputs */
  for (int k = 0; k < n_outs && !st; k++) {
    const char *nm = fresh(s, s->stem);
    ov[k] = nm ? dy_program_add_var(p, nm, &p->vars[op->inputs[outs[k]]]->type) : -1;
    if (ov[k] < 0)
      st = oom(b);
    else
      p->vars[ov[k]]->block = s->block;
  }
  dy_attr attrs[DY_COND_NATTRS];
  int n_attrs = dy_cond_attrs_put(&(dy_cond_attrs){
      .given = DY_GIVEN_ALL, .then_block = nb[0], .else_block = nb[1]}, attrs);
  dy_op *g = st ? NULL : dy_program_append_op(p, s->block, DY_OP_COND, op->inputs, 1,
                                              ov, n_outs, attrs, n_attrs, op->loc);
  if (!st && (!g || !dy_op_sync_captures(p, g)))
    st = oom(b);
  for (int k = 0; k < n_outs && !st; k++)
    dx[outs[k]] = ov[k];
  free(res);
  return st;
}

/* ---- while: the forward pushes each trip's carried values onto a
 * bounded stack; the backward is a while running the trips in reverse ---- */

/* What both halves share: the forward op, its attributes and n carried
 * values, the stacks' m rows (max_iterations or DY_WHILE_GRAD_TRIPS), the
 * stacks after the loop (stk[n], [m, ...] each) and the trip count (i64). */
typedef struct {
  const dy_op *op;
  dy_while_attrs a;
  int n, *stk, trips;
  int64_t m;
} while_grad;

/* A fresh var of type t declared in block blk, or -1. */
static int new_var(prog_gb *s, const char *stem, const dy_type *t, int blk) {
  const char *nm = fresh(s, stem);
  int v = nm ? dy_program_add_var(s->p, nm, t) : -1;
  if (v >= 0)
    s->p->vars[v]->block = blk;
  return v;
}

/* The stack var of carried value j: [m] + its type. */
static dy_status stack_vars(dy_gb *b, prog_gb *s, while_grad *w) {
  dy_program *p = s->p;
  for (int j = 0; j < w->n; j++) {
    dy_type t = p->vars[w->op->inputs[j]]->type;
    if (t.rank >= DY_MAX_DIMS) {
      dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "while: carried value %d has rank %d: its "
                 "trip stack would exceed %d dims", j, t.rank, DY_MAX_DIMS);
      return dy_gb_status(b);
    }
    memmove(t.shape + 1, t.shape, sizeof(int64_t) * (size_t)t.rank);
    t.shape[0] = w->m;
    t.rank++;
    if ((w->stk[j] = new_var(s, "while@stack", &t, s->block)) < 0)
      return oom(b);
  }
  dy_type ti = {.dtype = DY_I64, .rank = 0};
  if ((w->trips = new_var(s, "while@trips", &ti, s->block)) < 0)
    return oom(b);
  return DY_OK;
}

/* Block blk's params extended by fresh vars of the types of vars[0..n). */
static dy_status add_params(dy_gb *b, prog_gb *s, int blk, const int *vars, int n,
                            int *out) {
  dy_program *p = s->p;
  const dy_block *bl = p->blocks[blk];
  int np = bl->n_params;
  int *v = malloc(sizeof(int) * (size_t)(np + n + 1));
  if (!v)
    return oom(b);
  memcpy(v, bl->params, sizeof(int) * (size_t)np);
  dy_status st = DY_OK;
  for (int i = 0; i < n && !st; i++)
    if ((v[np + i] = new_var(s, "while@p", &p->vars[vars[i]]->type, blk)) < 0)
      st = oom(b);
    else if (out)
      out[i] = v[np + i];
  if (!st && !dy_block_set_params(p, blk, v, np + n))
    st = oom(b);
  free(v);
  return st;
}

/* The forward keeps what the backward needs: the while becomes a while
 * over [carried..., stacks..., trip count] whose body first pushes the
 * carried values at its entry onto row t of the stacks; its first outputs
 * stay the forward's. The stacks start as m copies of the initial values
 * (every row read is written first), built just before the loop. */
static dy_status keep_trips(dy_gb *b, prog_gb *s, while_grad *w) {
  dy_program *p = s->p;
  dy_block *blk = p->blocks[s->block];
  int k = 0, n = w->n;
  while (k < blk->n_ops && blk->ops[k] != w->op)
    k++;
  if (k == blk->n_ops) {
    dy_gb_fail(b, DY_STATUS_INTERNAL, "while: the op is not in its block");
    return dy_gb_status(b);
  }
  dy_op *op = blk->ops[k];
  int n0 = blk->n_ops, ni = op->n_inputs;
  int *in = dy_program_alloc(p, sizeof(int) * (size_t)(ni + n + 1));
  int *out = dy_program_alloc(p, sizeof(int) * (size_t)(op->n_outputs + n + 1));
  int *pv = malloc(sizeof(int) * (size_t)(2 * n + 2));
  if (!in || !out || !pv) {
    free(pv);
    return oom(b);
  }
  memcpy(in, op->inputs, sizeof(int) * (size_t)n);
  memcpy(in + 2 * n + 1, op->inputs + n, sizeof(int) * (size_t)(ni - n));
  for (int j = 0; j < n; j++) {
    int64_t ax0 = 0, rep[DY_MAX_DIMS];
    dy_attr au[DY_UNSQUEEZE_NATTRS], at[DY_TILE_NATTRS];
    int r = p->vars[op->inputs[j]]->type.rank + 1;
    for (int d = 0; d < r; d++)
      rep[d] = d ? 1 : w->m;
    int nu = dy_unsqueeze_attrs_put(&(dy_unsqueeze_attrs){
        .given = DY_GIVEN_ALL, .axes = &ax0, .n_axes = 1}, au);
    int nt = dy_tile_attrs_put(&(dy_tile_attrs){
        .given = DY_GIVEN_ALL, .repeat_times = rep, .n_repeat_times = r}, at);
    int u = dy_gb_op1(b, DY_OP_UNSQUEEZE, op->inputs[j], au, nu);
    in[n + j] = dy_gb_op1(b, DY_OP_TILE, u, at, nt);
  }
  in[2 * n] = prog_constant(b, DY_I64, 0.0);
  dy_status st = dy_gb_status(b);
  /* the stacks' initial values go before the loop, in order */
  for (int i = n0; i < blk->n_ops && !st; i++)
    dy_block_move_last_to(blk, k);
  k += blk->n_ops - n0;
  /* the new carried values: params of both blocks, results of the body */
  memcpy(pv, w->stk, sizeof(int) * (size_t)n);
  pv[n] = w->trips;
  if (!st)
    st = add_params(b, s, (int)w->a.cond_block, pv, n + 1, NULL);
  if (!st)
    st = add_params(b, s, (int)w->a.body_block, pv, n + 1, pv + n + 1);
  if (!st) {
    prog_gb bs;
    dy_gb bb;
    int body = (int)w->a.body_block;
    dy_gb_program(&bb, &bs, p, body, s->stem, b->err);
    bs.next = s->next;
    bb.fwd = op;
    const dy_block *bd = p->blocks[body];
    int nr = bd->n_results, *res = malloc(sizeof(int) * (size_t)(nr + n + 1));
    if (!res)
      st = oom(b);
    int pt = pv[2 * n + 1], one = st ? -1 : prog_constant(&bb, DY_I64, 1.0);
    int idx = st ? -1 : dy_gb_reshape(&bb, pt, (const int64_t[]){1}, 1);
    dy_attr as[DY_SCATTER_ND_NATTRS];
    int ns = dy_scatter_nd_attrs_put(&(dy_scatter_nd_attrs){
        .given = DY_GIVEN_ALL, .reduction = "none"}, as);
    for (int j = 0; j < n && !st; j++)
      res[nr + j] = dy_gb_op(&bb, DY_OP_SCATTER_ND,
                             (const int[]){pv[n + 1 + j], idx, bd->params[j]}, 3, as, ns);
    if (!st) {
      res[nr + n] = dy_gb_add(&bb, pt, one);
      memcpy(res, p->blocks[body]->results, sizeof(int) * (size_t)nr);
      if (!(st = dy_gb_status(&bb)) && !dy_block_set_results(p, body, res, nr + n + 1))
        st = oom(b);
    }
    s->next = bs.next;
    free(res);
  }
  free(pv);
  if (st)
    return st;
  memcpy(out, op->outputs, sizeof(int) * (size_t)op->n_outputs);
  memcpy(out + op->n_outputs, w->stk, sizeof(int) * (size_t)n);
  out[op->n_outputs + n] = w->trips;
  dy_while_attrs a = w->a;
  a.given = DY_GIVEN_ALL;
  a.n_carried = 2 * n + 1;
  a.max_iterations = w->m;
  dy_attr attrs[DY_WHILE_NATTRS];
  int n_at = dy_while_attrs_put(&a, attrs);
  op->inputs = in;
  op->n_inputs = ni + n + 1;
  op->outputs = out;
  op->n_outputs += n + 1;
  if (!dy_op_set_attrs(p, op, attrs, n_at) || !dy_op_sync_captures(p, op))
    return oom(b);
  return DY_OK;
}

/* The backward's carried values: [t, gradients of the f32 carried values
 * (fj[f]), of the captures asked for (ci[c], input indices)]. */
typedef struct { int f, c; int *fj, *ci; } rev_layout;

/* A zero of v's type, a var of the builder's block. */
static int zero_like(dy_gb *b, int v) {
  int zero = dy_gb_const(b, 0.0);
  int z = dy_gb_expand_as(b, zero, v);
  return z == zero ? dy_gb_scale(b, zero, 1.0, 0.0) : z;
}

/* The backward body (block nb, params pr: [t, gx..., gc...]): t - 1, the
 * carried values of that trip restored from the stacks, the forward body
 * recomputed on them and its backward seeded with gx; it yields
 * [t - 1, the carried values' gradients, gc + the captures' gradients]. */
static dy_status rev_body(dy_gb *b, prog_gb *s, const while_grad *w,
                          const rev_layout *L, int nb, const int *pr, const bool *need) {
  dy_program *p = s->p;
  const dy_op *op = w->op;
  int n0 = p->n_vars, body = (int)w->a.body_block;
  int *map = malloc(sizeof(int) * (size_t)n0);
  int *res = malloc(sizeof(int) * (size_t)(1 + L->f + L->c));
  if (!map || !res) {
    free(map), free(res);
    return oom(b);
  }
  for (int i = 0; i < n0; i++)
    map[i] = -1;
  prog_gb bs;
  dy_gb bb;
  dy_gb_program(&bb, &bs, p, nb, s->stem, b->err);
  bs.next = s->next;
  bb.fwd = op;
  int mone = prog_constant(&bb, DY_I64, -1.0);
  int t = dy_gb_add(&bb, pr[0], mone);
  dy_attr ag[DY_GATHER_NATTRS];
  int na = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = 0}, ag);
  for (int j = 0; j < w->n; j++)
    map[p->blocks[body]->params[j]] =
        dy_gb_op(&bb, DY_OP_GATHER, (const int[]){w->stk[j], t}, 2, ag, na);
  dy_status st = dy_gb_status(&bb);
  int n_ops = p->blocks[body]->n_ops;
  for (int k = 0; k < n_ops && !st; k++)
    st = clone_op(&bb, &bs, p->blocks[body]->ops[k], nb, map, n0, 0);
  int nv = p->n_vars, n_fwd = p->blocks[nb]->n_ops;
  bool *dep = st ? NULL : calloc((size_t)nv, sizeof *dep);
  int *g = st ? NULL : malloc(sizeof(int) * (size_t)nv);
  if (!st && (!dep || !g))
    st = oom(b);
  for (int i = 0; i < nv && !st; i++)
    g[i] = -1;
  const int *bp = p->blocks[body]->params, *br = p->blocks[body]->results;
  for (int k = 0; k < L->f && !st; k++)
    dep[map[bp[L->fj[k]]]] = true;
  for (int k = 0; k < L->c && !st; k++)
    dep[op->inputs[L->ci[k]]] = true;
  if (!st)
    mark_dep(p, nb, dep);
  /* the seeds: the next values' gradients at the body's results */
  for (int k = 0; k < L->f && !st; k++) {
    int r = br[L->fj[k]];
    r = r < n0 && map[r] >= 0 ? map[r] : r;
    if (!dep[r])
      continue;
    g[r] = g[r] < 0 ? pr[1 + k] : dy_gb_add(&bb, g[r], pr[1 + k]);
    st = dy_gb_status(&bb);
  }
  if (!st)
    st = walk_back(&bb, p, nb, n_fwd, dep, g, b->err);
  res[0] = t;
  for (int k = 0; k < L->f && !st; k++) {
    int xj = map[bp[L->fj[k]]];
    res[1 + k] = g[xj] >= 0 ? dy_gb_reshape_as(&bb, g[xj], xj) : zero_like(&bb, xj);
  }
  for (int k = 0; k < L->c && !st; k++) {
    int x = op->inputs[L->ci[k]], gc = pr[1 + L->f + k];
    int gx = g[x] >= 0 ? dy_gb_reshape_as(&bb, g[x], x) : -1;
    res[1 + L->f + k] = gx >= 0 ? dy_gb_add(&bb, gc, gx) : gc;
  }
  if (!st && !(st = dy_gb_status(&bb)) &&
      !dy_block_set_results(p, nb, res, 1 + L->f + L->c))
    st = oom(b);
  if (!st)
    st = prune_unread(b, p, nb);
  s->next = bs.next;
  free(map), free(res), free(dep), free(g);
  return st;
}

/* The backward loop after the forward's (appended to the walked block):
 * carried [trip count, gradients at the loop's outputs (zeros where
 * none), zeros for the captures], while t > 0 it runs rev_body; its
 * outputs are the gradients of the initial values and of the captures. */
static dy_status rev_loop(dy_gb *b, prog_gb *s, const while_grad *w, const rev_layout *L,
                          const int *dy, const bool *need, int *dx) {
  dy_program *p = s->p;
  const dy_op *op = w->op;
  int nc = 1 + L->f + L->c;
  int *v = malloc(sizeof(int) * (size_t)(4 * nc));
  if (!v)
    return oom(b);
  int *init = v, *pc = v + nc, *pb = v + 2 * nc, *ov = v + 3 * nc;
  init[0] = w->trips;
  for (int k = 0; k < L->f; k++) {
    int j = L->fj[k];
    init[1 + k] = dy[j] >= 0 ? dy_gb_reshape_as(b, dy[j], op->outputs[j])
                             : zero_like(b, op->inputs[j]);
  }
  for (int k = 0; k < L->c; k++)
    init[1 + L->f + k] = zero_like(b, op->inputs[L->ci[k]]);
  dy_status st = dy_gb_status(b);
  int cb = st ? -1 : dy_program_add_block(p, s->block);
  int bb = cb < 0 ? -1 : dy_program_add_block(p, s->block);
  if (!st && bb < 0)
    st = oom(b);
  for (int i = 0; i < nc && !st; i++) {
    const dy_type *t = &p->vars[init[i]]->type;
    if ((pc[i] = new_var(s, "while@p", t, cb)) < 0 || (pb[i] = new_var(s, "while@p", t, bb)) < 0 ||
        (ov[i] = new_var(s, s->stem, t, s->block)) < 0)
      st = oom(b);
  }
  if (!st && (!dy_block_set_params(p, cb, pc, nc) || !dy_block_set_params(p, bb, pb, nc)))
    st = oom(b);
  if (!st) {  /* the condition: t > 0 */
    prog_gb cs;
    dy_gb cg;
    dy_gb_program(&cg, &cs, p, cb, s->stem, b->err);
    cs.next = s->next;
    cg.fwd = op;
    int zero = prog_constant(&cg, DY_I64, 0.0);
    int more = dy_gb_op(&cg, DY_OP_GREATER, (const int[]){pc[0], zero}, 2, NULL, 0);
    s->next = cs.next;
    if (!(st = dy_gb_status(&cg)) && !dy_block_set_results(p, cb, &more, 1))
      st = oom(b);
  }
  if (!st)
    st = rev_body(b, s, w, L, bb, pb, need);
  dy_attr attrs[DY_WHILE_NATTRS];
  int n_attrs = dy_while_attrs_put(&(dy_while_attrs){
      .given = DY_GIVEN_ALL, .n_carried = nc, .cond_block = cb, .body_block = bb,
      .max_iterations = w->m}, attrs);
  dy_op *g = st ? NULL : dy_program_append_op(p, s->block, DY_OP_WHILE, init, nc, ov, nc,
                                              attrs, n_attrs, op->loc);
  if (!st && (!g || !dy_op_sync_captures(p, g)))
    st = oom(b);
  for (int k = 0, i; k < L->f + L->c && !st; k++)  /* the ones asked for */
    if (need[i = k < L->f ? L->fj[k] : L->ci[k - L->f]])
      dx[i] = ov[1 + k];
  free(v);
  return st;
}

/* The gradient of while (Paddle's while_grad, which keeps a scope per
 * step): the forward loop keeps each trip's carried values on a stack of
 * max_iterations rows (DY_WHILE_GRAD_TRIPS when it is 0) and the trip
 * count (keep_trips); the backward is a loop running the trips in reverse
 * (rev_loop), each restoring its carried values, recomputing the body and
 * running its backward, the captures' gradients summed over the trips.
 * Built in Programs only: the eager tape records the trips run. */
dy_status dy_grad_while(dy_gb *b, const dy_op *op, const int *x, const int *y,
                        const int *dy, const bool *need, int *dx) {
  (void)x, (void)y;
  if (b->emit != prog_emit) {
    dy_gb_fail(b, DY_STATUS_UNSUPPORTED, "only a Program's while is "
               "differentiated (the eager tape records the trips run)");
    return dy_gb_status(b);
  }
  prog_gb *s = b->user;
  dy_program *p = s->p;
  while_grad w = {.op = op, .a = dy_while_attrs_get(op)};
  w.n = (int)w.a.n_carried;
  w.m = w.a.max_iterations > 0 ? w.a.max_iterations : DY_WHILE_GRAD_TRIPS;
  int ni = op->n_inputs;
  rev_layout L = {0};
  w.stk = malloc(sizeof(int) * (size_t)(w.n + 1));
  L.fj = malloc(sizeof(int) * (size_t)(ni + 1));
  L.ci = malloc(sizeof(int) * (size_t)(ni + 1));
  dy_status st = w.stk && L.fj && L.ci ? DY_OK : oom(b);
  for (int j = 0; j < w.n && !st; j++)
    if (p->vars[op->inputs[j]]->type.dtype == DY_F32)
      L.fj[L.f++] = j;
  for (int i = w.n; i < ni && !st; i++)
    if (need[i])
      L.ci[L.c++] = i;
  /* the backward first: it clones the body before keep_trips extends it */
  if (!st && !(st = stack_vars(b, s, &w)) && !(st = rev_loop(b, s, &w, &L, dy, need, dx)))
    st = keep_trips(b, s, &w);
  free(w.stk), free(L.fj), free(L.ci);
  return st;
}

dy_status dy_program_gradients(dy_program *p, int loss, const int *wrt,
                               int n_wrt, int *grads, dy_error *err) {
  for (int i = 0; i < n_wrt; i++)
    grads[i] = -1;
  if (loss < 0 || loss >= p->n_vars)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "gradients: no loss var");
  const dy_var *lv = p->vars[loss];
  char ty[128];
  if (lv->type.dtype != DY_F32 || dy_type_numel(&lv->type) != 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "the loss '%s' is %s: it must be an f32 scalar (one "
                        "element; reduce it with mean or sum)", lv->name,
                        dy_type_str(&lv->type, ty, sizeof ty));
  int nv = p->n_vars;
  bool *dep = calloc((size_t)nv, sizeof *dep);
  int *g = malloc(sizeof(int) * (size_t)nv);
  if (!dep || !g) {
    free(dep);
    free(g);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int i = 0; i < nv; i++)
    g[i] = -1;
  for (int i = 0; i < n_wrt; i++)
    if (wrt[i] >= 0 && wrt[i] < nv && p->vars[wrt[i]]->type.dtype == DY_F32)
      dep[wrt[i]] = true;

  /* forward: which vars depend on a var we differentiate against */
  mark_dep(p, 0, dep);
  int n_fwd = p->blocks[0]->n_ops;

  prog_gb st;
  dy_gb b;
  dy_gb_program(&b, &st, p, 0, "grad@", err);
  dy_status s = DY_OK;
  if (!dep[loss])
    goto done;  /* nothing depends: every gradient is -1 */
  /* the seed: d loss / d loss = 1, of the loss's type */
  {
    int one = prog_constant(&b, DY_F32, 1.0);
    g[loss] = dy_gb_reshape_as(&b, one, loss);
    if ((s = err->status))
      goto done;
  }
  s = walk_back(&b, p, 0, n_fwd, dep, g, err);
  for (int i = 0; i < n_wrt && !s; i++)
    if (wrt[i] >= 0 && wrt[i] < nv && g[wrt[i]] >= 0) {
      grads[i] = name_grad(&b, &st, wrt[i], g[wrt[i]]);
      s = err->status;
    }
done:
  free(dep);
  free(g);
  if (s)
    for (int i = 0; i < n_wrt; i++)
      grads[i] = -1;
  return s;
}

dy_status dy_program_append_backward(dy_program *p, int loss, int **params,
                                     int **grads, int *n_params,
                                     dy_error *err) {
  *params = *grads = NULL;
  *n_params = 0;
  int n = 0;
  for (int i = 0; i < p->n_vars; i++)
    n += p->vars[i]->trainable;
  int *w = malloc(sizeof(int) * (size_t)(n ? n : 1));
  int *gr = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!w || !gr) {
    free(w);
    free(gr);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  n = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->trainable)
      w[n++] = i;
  dy_status s = dy_program_gradients(p, loss, w, n, gr, err);
  if (s) {
    free(w);
    free(gr);
    return s;
  }
  *params = w;
  *grads = gr;
  *n_params = n;
  return DY_OK;
}
