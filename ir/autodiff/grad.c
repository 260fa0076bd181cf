/* grad.c - the gradient table and dy_grad_op (the dispatcher), the
 * Program builder (dy_gb_program) and Program autodiff
 * (dy_program_gradients, dy_program_append_backward).
 *
 * The files, top to bottom (a file calls only those below it):
 *
 *   grad.c            the table, the Program builder, the Program walk
 *   grad_fused.c      a fused op's rule runs its parts' rules
 *   grad_<family>.c   the rules, one file per ops_<family>.def
 *   gb.c              the dy_gb_* helpers every rule is written with
 *
 * See dy_grad.h for the contract. Program autodiff is
 * Paddle's append_backward: walk block 0 backwards from the loss, call the
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
  dy_block *blk = p->blocks[0];
  int n_fwd = blk->n_ops;
  for (int k = 0; k < n_fwd; k++) {
    const dy_op *op = blk->ops[k];
    if (dy_op_has(op, DY_OPF_INPLACE))
      continue;
    bool any = false;
    for (int i = 0; i < op->n_inputs; i++)
      any |= dep[op->inputs[i]];
    for (int j = 0; j < op->n_outputs && any; j++)
      if (p->vars[op->outputs[j]]->type.dtype == DY_F32)
        dep[op->outputs[j]] = true;
  }

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

  for (int k = n_fwd - 1; k >= 0 && !s; k--) {
    const dy_op *op = blk->ops[k];
    if (dy_op_has(op, DY_OPF_INPLACE) || op->n_outputs > 8 || op->n_inputs > DY_MAX_OP_INPUTS)
      continue;
    int dy[8];
    bool has = false;
    for (int j = 0; j < op->n_outputs; j++) {
      dy[j] = g[op->outputs[j]];
      has |= dy[j] >= 0;
    }
    bool need[DY_MAX_OP_INPUTS], any = false;
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
    int dx[DY_MAX_OP_INPUTS];
    if ((s = dy_grad_op(&b, op, op->inputs, op->outputs, dy, need, dx)))
      break;
    for (int i = 0; i < op->n_inputs; i++) {
      int v = op->inputs[i];
      if (!need[i] || dx[i] < 0)
        continue;
      b.fwd = op;
      g[v] = g[v] < 0 ? dx[i] : dy_gb_add(&b, g[v], dx[i]);
      b.fwd = NULL;
      if ((s = err->status))
        break;
    }
  }
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
