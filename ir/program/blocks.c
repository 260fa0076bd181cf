/* blocks.c - sub-blocks: their signatures, captures, the inference of the
 * ops that own them (dy_infer_in, over dy_infer), and splicing a block
 * into another. Which op owns a block is program.c's (dy_block_owner).
 *
 * The block tree. Block 0 is the Program's global block. A control op
 * (cond, while: ops_control.def) owns its sub-blocks through int
 * attributes naming their indices; a sub-block's parent is the block of
 * its owner and has a lower index, so the tree has no cycles. A sub-block
 * has params (vars declared in it, bound on entry: a while's carried
 * values) and results (vars it yields: a branch's outputs, a loop's next
 * values or its condition). It reads vars of enclosing blocks only through
 * its owner's inputs (captures). The verifier checks all of this
 * (invariants 11-13 of verify.c).
 *
 * Moving ops between blocks: dy_block_splice (a whole branch, inlined) and
 * dy_block_move_op (one op, hoisted out of a loop).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

static bool set_list(dy_program *p, int **dst, int *n, const int *vars, int len) {
  int *a = dy_program_alloc(p, sizeof(int) * (size_t)(len ? len : 1));
  if (!a)
    return false;
  if (len)
    memcpy(a, vars, sizeof(int) * (size_t)len);
  *dst = a;
  *n = len;
  return true;
}

bool dy_block_set_params(dy_program *p, int block, const int *vars, int n) {
  dy_block *b = p->blocks[block];
  for (int i = 0; i < n; i++)
    p->vars[vars[i]]->block = block;
  return set_list(p, &b->params, &b->n_params, vars, n);
}

bool dy_block_set_results(dy_program *p, int block, const int *vars, int n) {
  dy_block *b = p->blocks[block];
  return set_list(p, &b->results, &b->n_results, vars, n);
}

/* Mark the vars block b and its sub-blocks define (params, op outputs). */
static void mark_defined(const dy_program *p, int b, bool *inside, int depth) {
  const dy_block *blk = p->blocks[b];
  if (depth > p->n_blocks)
    return;  /* a cycle: the verifier reports it */
  for (int i = 0; i < blk->n_params; i++)
    inside[blk->params[i]] = true;
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    for (int i = 0; i < op->n_outputs; i++)
      inside[op->outputs[i]] = true;
    int sub[2], n = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < n; j++)
      if (sub[j] > 0 && sub[j] < p->n_blocks)
        mark_defined(p, sub[j], inside, depth + 1);
  }
}

static void note(int v, const bool *inside, bool *seen, int *out, int cap, int *n) {
  if (inside[v] || seen[v])
    return;
  seen[v] = true;
  if (*n < cap)
    out[*n] = v;
  ++*n;
}

static void collect(const dy_program *p, int b, const bool *inside, bool *seen,
                    int *out, int cap, int *n, int depth) {
  const dy_block *blk = p->blocks[b];
  if (depth > p->n_blocks)
    return;
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    for (int i = 0; i < op->n_inputs; i++)
      note(op->inputs[i], inside, seen, out, cap, n);
    int sub[2], ns = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < ns; j++)
      if (sub[j] > 0 && sub[j] < p->n_blocks)
        collect(p, sub[j], inside, seen, out, cap, n, depth + 1);
  }
  for (int i = 0; i < blk->n_results; i++)
    note(blk->results[i], inside, seen, out, cap, n);
}

int dy_block_captures(const dy_program *p, int b, int *out, int cap) {
  bool *inside = calloc((size_t)p->n_vars + 1, 2);
  if (!inside)
    return -1;
  bool *seen = inside + p->n_vars + 1;
  int n = 0;
  mark_defined(p, b, inside, 0);
  collect(p, b, inside, seen, out, cap, &n, 0);
  free(inside);
  return n;
}

/* The types block b yields, checked against n expected results. */
static dy_status block_results(const dy_program *p, const dy_op *op, int b,
                               const char *role, int n, dy_type *out,
                               dy_error *err) {
  if (b <= 0 || b >= p->n_blocks)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: %s %d is not a sub-block of the Program",
                       dy_op_name(op->kind), role, b);
  const dy_block *blk = p->blocks[b];
  if (blk->n_results != n)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "%s: %s %d yields %d values, expected %d",
                       dy_op_name(op->kind), role, b, blk->n_results, n);
  for (int i = 0; i < n; i++)
    out[i] = p->vars[blk->results[i]]->type;
  return DY_OK;
}

static dy_status type_differs(const dy_op *op, const char *what, int i,
                              const dy_type *a, const char *wa, const dy_type *b,
                              const char *wb, dy_error *err) {
  char x[128], y[128];
  return dy_error_at(err, op, DY_STATUS_DTYPE_MISMATCH,
                     "%s: %s %d is %s in the %s and %s in the %s",
                     dy_op_name(op->kind), what, i, dy_type_str(a, x, sizeof x), wa,
                     dy_type_str(b, y, sizeof y), wb);
}

dy_status dy_infer_in(const dy_program *p, const dy_op *op, const dy_type *in,
                      int n_in, dy_type *out, dy_error *err) {
  if (op->kind != DY_OP_COND && op->kind != DY_OP_WHILE)
    return dy_infer(op, in, n_in, out, err);
  enum { MAX_OUT = 64 };
  dy_type alt[MAX_OUT];
  if (op->n_outputs > MAX_OUT)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED, "%s: more than %d outputs",
                       dy_op_name(op->kind), MAX_OUT);
  dy_status s;
  int sub[2];
  dy_op_sub_blocks(op, sub);
  if (op->kind == DY_OP_COND) {
    s = dy_infer(op, in, n_in, out, err);
    if (s != DY_STATUS_UNSUPPORTED)  /* the predicate or an attribute is wrong */
      return s;
    if ((s = block_results(p, op, sub[0], "then_block", op->n_outputs, out, err)) ||
        (s = block_results(p, op, sub[1], "else_block", op->n_outputs, alt, err)))
      return s;
    for (int i = 0; i < op->n_outputs; i++)
      if (!dy_type_equal(&out[i], &alt[i]))
        return type_differs(op, "result", i, &out[i], "then branch", &alt[i],
                            "else branch", err);
    return DY_OK;
  }
  if ((s = dy_infer(op, in, n_in, out, err)))
    return s;
  int nc = (int)dy_while_attrs_get(op).n_carried;
  if (nc != op->n_outputs)
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "while: %d carried values but %d outputs", nc, op->n_outputs);
  /* the condition yields one bool of one element */
  if ((s = block_results(p, op, sub[0], "cond_block", 1, alt, err)))
    return s;
  if (alt[0].dtype != DY_BOOL || dy_type_numel(&alt[0]) != 1) {
    char t[128];
    return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                       "while: the condition must yield a bool of one element, "
                       "it yields %s", dy_type_str(&alt[0], t, sizeof t));
  }
  /* both blocks take the carried values; the body yields them again */
  for (int j = 0; j < 2; j++) {
    const dy_block *blk = p->blocks[sub[j]];
    const char *role = j ? "body_block" : "cond_block";
    if (blk->n_params != nc)
      return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT,
                         "while: %s %d takes %d params, expected the %d carried "
                         "values", role, sub[j], blk->n_params, nc);
    for (int i = 0; i < nc; i++)
      if (!dy_type_equal(&p->vars[blk->params[i]]->type, &out[i]))
        return type_differs(op, "carried value", i, &out[i], "loop's input",
                            &p->vars[blk->params[i]]->type, role, err);
  }
  if ((s = block_results(p, op, sub[1], "body_block", nc, alt, err)))
    return s;
  for (int i = 0; i < nc; i++)
    if (!dy_type_equal(&out[i], &alt[i]))
      return type_differs(op, "carried value", i, &out[i], "loop's input", &alt[i],
                          "body's result (a loop-carried value keeps its type)", err);
  return DY_OK;
}

/* Re-home block b's ops, vars and sub-blocks under block dst. */
static void rehome(dy_program *p, int b, int dst) {
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->block == b)
      p->vars[i]->block = dst;
  for (int i = 0; i < p->n_blocks; i++)
    if (p->blocks[i]->parent == b)
      p->blocks[i]->parent = dst;
}

/* Put op at index at of block dst (growing it as dy_program_append_op
 * does). false on OOM. */
static bool insert_op(dy_program *p, dy_op *op, int dst, int at) {
  dy_block *d = p->blocks[dst];
  if (d->n_ops == d->cap_ops) {
    int ncap = d->cap_ops ? d->cap_ops * 2 : 16;
    dy_op **nt = dy_program_alloc(p, sizeof(dy_op *) * (size_t)ncap);
    if (!nt)
      return false;
    if (d->n_ops)
      memcpy(nt, d->ops, sizeof(dy_op *) * (size_t)d->n_ops);
    d->ops = nt;
    d->cap_ops = ncap;
  }
  op->block = dst;
  d->ops[d->n_ops++] = op;
  dy_block_move_last_to(d, at);
  return true;
}

bool dy_block_move_op(dy_program *p, int b, int k, int dst, int at) {
  dy_op *op = p->blocks[b]->ops[k];
  if (!insert_op(p, op, dst, at))
    return false;
  dy_block_remove_op(p->blocks[b], k);
  for (int i = 0; i < op->n_outputs; i++)
    p->vars[op->outputs[i]]->block = dst;
  return true;
}

bool dy_block_splice(dy_program *p, int b, int dst, int at) {
  dy_block *src = p->blocks[b];
  int n = src->n_ops;
  for (int k = 0; k < n; k++)
    if (!insert_op(p, src->ops[k], dst, at + k))
      return false;
  src->n_ops = 0;
  rehome(p, b, dst);
  return true;
}

/* The captures of op's blocks, merged: first-use order, no repeats. */
bool dy_op_sync_captures(dy_program *p, dy_op *op) {
  int sub[2];
  dy_op_sub_blocks(op, sub);
  int n_first = op->kind == DY_OP_COND ? 1 : (int)dy_while_attrs_get(op).n_carried;
  int cap = p->n_vars + n_first;
  int *in = malloc(sizeof(int) * (size_t)(cap + 1));
  if (!in)
    return false;
  memcpy(in, op->inputs, sizeof(int) * (size_t)n_first);
  int n = n_first;
  for (int j = 0; j < 2; j++) {
    int m = dy_block_captures(p, sub[j], in + n, cap - n);
    if (m < 0) {
      free(in);
      return false;
    }
    /* drop the ones the first block already listed */
    int w = n;
    for (int i = n; i < n + m; i++) {
      bool seen = false;
      for (int k = n_first; k < w && !seen; k++)
        seen = in[k] == in[i];
      if (!seen)
        in[w++] = in[i];
    }
    n = w;
  }
  bool same = n == op->n_inputs &&
              memcmp(in, op->inputs, sizeof(int) * (size_t)n) == 0;
  if (!same) {
    int *a = n <= op->n_inputs ? op->inputs : dy_program_alloc(p, sizeof(int) * (size_t)n);
    if (a) {
      memcpy(a, in, sizeof(int) * (size_t)n);
      op->inputs = a;
      op->n_inputs = n;
    }
    same = a != NULL;  /* false: out of memory */
    if (!same) {
      free(in);
      return false;
    }
  }
  free(in);
  return true;
}

bool dy_program_sync_captures(dy_program *p) {
  for (int b = p->n_blocks - 1; b >= 0; b--)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      dy_op *op = p->blocks[b]->ops[k];
      if (dy_op_sub_blocks(op, (int[2]){0}) && !dy_op_sync_captures(p, op))
        return false;
    }
  return true;
}

void dy_program_declaring_blocks(const dy_program *p, int *decl, int dflt) {
  for (int v = 0; v < p->n_vars; v++)
    decl[v] = dflt;
  for (int b = 0; b < p->n_blocks; b++) {
    const dy_block *blk = p->blocks[b];
    for (int i = 0; i < blk->n_params; i++)
      decl[blk->params[i]] = b;
    for (int k = 0; k < blk->n_ops; k++)
      for (int i = 0; i < blk->ops[k]->n_outputs; i++)
        decl[blk->ops[k]->outputs[i]] = b;
  }
}
