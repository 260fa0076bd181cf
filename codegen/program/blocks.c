/* blocks.c - floor 3: the calls of a block's ops in NAME_run, and the
 * control ops around their blocks. Kernels of ops in sub-blocks are
 * ordinary kernels (kernel.c); here a cond becomes `if (pred[0]) { then
 * calls; outputs = results } else { ... }` and a while copies its initial
 * values into its outputs (the carried values), then loops: params =
 * carried, condition calls, `break` on false, `if (++kN_trips > bound)
 * return NAME_ERR_LOOP;` (the op's max_iterations, or NAME_MAX_ITERATIONS
 * from dy_codegen_options.max_iterations), params = carried, body calls,
 * carried = results. A copy between buffers the plan put on the same bytes
 * is left out (memplan.c shares them where safe). A block calls a control
 * op's blocks, so cg_emit_block, emit_cond and emit_while recurse into
 * each other: they stay in this one file. In a --localize build
 * (dy_codegen_options.debug_dump) NAME_debug_dump follows each op of every
 * block with each of its results and the innermost loop's trip. */
#include <stdio.h>
#include <string.h>

#include "cg_program.h"
/* The call of op oi's kernel: its operands' buffers (a packed copy where
 * the kernel reads one), scratch, seed, size arguments; a kernel that can
 * fail stops the run with NAME_ERR_INDEX. */
static void emit_call(cg_gen *g, int oi, const char *indent, dy_buf *out) {
  const dy_program *p = g->p;
  const dy_op *op = g->ops[oi];
  char *args[2 * DY_MAX_FEEDS + 2 + DY_MAX_SYMS];
  int n = 0;
  uint64_t syms = 0;
  char buf[300];
  for (int i = 0; i < op->n_inputs; i++) {
    dy_pack k = dy_gemm_pack_of(p, op, i);
    const cg_packed_weight *pw = k.kind != DY_PACK_NONE ? cg_find_pack(g, op->inputs[i], &k) : NULL;
    if (pw)
      snprintf(buf, sizeof buf, "%s", pw->name);
    else
      cg_buffer_expr(g, op->inputs[i], true, buf, sizeof buf);
    syms |= dy_type_sym_mask(&p->vars[op->inputs[i]]->type);
    args[n++] = cg_xstrdup(buf);
  }
  for (int i = 0; i < op->n_outputs; i++) {
    cg_buffer_expr(g, op->outputs[i], false, buf, sizeof buf);
    syms |= dy_type_sym_mask(&p->vars[op->outputs[i]]->type);
    args[n++] = cg_xstrdup(buf);
  }
  if (g->scratch[oi] > 0)
    args[n++] = cg_xprintf("(float *)(mem + %s)", g->scratch_name[oi]);
  if (g->seed_slot[oi] >= 0)
    args[n++] = cg_xprintf("((const uint64_t *)(st + %s_SEEDS_OFF))[%d]", g->upper,
                           g->seed_slot[oi]);
  int set = dy_op_size_sym(op, NULL); /* a count it finds: its dim_<name> */
  if (set > 0)
    syms &= ~((uint64_t)1 << set);
  n = cg_sym_args(g, syms, false, args, n);
  if (set > 0)
    args[n++] = cg_xprintf("&dim_%s", dy_sym_name(set));
  cg_kernel_name(p, op, buf, sizeof buf);
  /* a kernel that can fail stops the run; a count above its bound is
   * still written (the caller names it) */
  char head[320], tail[160 + 2 * DY_SYM_NAME_MAX];
  bool can_fail = dy_op_has(op, DY_OPF_CAN_FAIL) || set > 0;
  snprintf(head, sizeof head, "%s%s", can_fail ? "if (" : "", buf);
  if (set > 0)
    snprintf(tail, sizeof tail, ") {\n%s  *dim_%s_out = dim_%s;\n%s  return %s_ERR_SHAPE;\n%s}\n",
             indent, dy_sym_name(set), dy_sym_name(set), indent, g->upper, indent);
  else if (can_fail)
    snprintf(tail, sizeof tail, ")\n%s  return %s_ERR_INDEX;\n", indent, g->upper);
  else
    snprintf(tail, sizeof tail, ";\n");
  if (!cg_args_ok(args, n))
    out->oom = true;
  else if (n == 0)
    dy_buf_printf(out, "%s%s()%s", indent, head, tail);
  else
    cg_put_wrapped(out, indent, head, args, n, tail);
  cg_free_args(args, n);
}

/* ---- control flow: C if / while around the blocks' kernels ---- */

/* dst = src, element by element (nothing when both are the same bytes). */
static void emit_copy(cg_gen *g, int dst, int src, const char *indent, dy_buf *out) {
  const cg_storage *d0 = &g->st[dst], *s0 = &g->st[src];
  if (d0->kind == s0->kind &&
      (d0->root == s0->root ||
       (d0->kind == ST_ARENA &&
        g->p->vars[d0->root]->mem_offset == g->p->vars[s0->root]->mem_offset)))
    return; /* the plan put both on the same bytes */
  const dy_type *t = &g->p->vars[dst]->type;
  dy_cg_ctx ctx = {.p = g->p};
  char d[300], s[300];
  cg_buffer_expr(g, dst, false, d, sizeof d);
  cg_buffer_expr(g, src, true, s, sizeof s);
  dy_buf_printf(out, "%s/* ", indent);
  dy_buf_put_comment(out, g->p->vars[dst]->name);
  dy_buf_puts(out, " = ");
  dy_buf_put_comment(out, g->p->vars[src]->name);
  dy_buf_puts(out, " */\n");
  /* an arena buffer is a cast: index it in parentheses */
  const char *dl = d[0] == '(' ? "(" : "", *dr = d[0] == '(' ? ")" : "";
  const char *sl = s[0] == '(' ? "(" : "", *sr = s[0] == '(' ? ")" : "";
  if (dy_type_numel_at(t, 1) == 1 && !cg_type_dynamic(t))
    dy_buf_printf(out, "%s%s%s%s[0] = %s%s%s[0];\n", indent, dl, d, dr, sl, s, sr);
  else
    dy_buf_printf(out, "%sfor (int64_t i = 0; i < %s; i++)\n%s  %s%s%s[i] = %s%s%s[i];\n",
                  indent, dy_cg_extent(&ctx, t, 0, t->rank), indent, dl, d, dr, sl, s, sr);
}

/* Copy n values: dst[i] = src[i]. */
static void emit_copies(cg_gen *g, const int *dst, const int *src, int n, const char *indent,
                        dy_buf *out) {
  for (int i = 0; i < n; i++)
    emit_copy(g, dst[i], src[i], indent, out);
}


/* The op's comment line in NAME_run: "op 7: while   f.c:12". */
static void put_op_comment(cg_gen *g, const dy_op *op, const char *indent, const char *what,
                           dy_buf *out) {
  dy_buf_printf(out, "%s/* op %d: %s", indent, op->id, dy_op_name(op->kind));
  if (op->loc.file) {
    char loc[300];
    snprintf(loc, sizeof loc, "   %s:%d", cg_basename_of(op->loc.file), op->loc.line);
    dy_buf_put_comment(out, loc);
  }
  dy_buf_printf(out, "%s%s */\n", what[0] ? "   " : "", what);
  (void)g;
}

static void put_block_comment(cg_gen *g, int b, const char *indent, const char *what, dy_buf *out) {
  dy_buf_printf(out, "%s/* %s (block %d) */\n", indent, what, b);
  (void)g;
}

/* cond: if (pred) { then block; outputs = its results } else { ... } */
static void emit_cond(cg_gen *g, const dy_op *op, int depth, const char *ind, dy_buf *out) {
  dy_cond_attrs a = dy_cond_attrs_get(op);
  char pred[300];
  cg_buffer_expr(g, op->inputs[0], true, pred, sizeof pred);
  put_op_comment(g, op, ind, "", out);
  dy_buf_printf(out, pred[0] == '(' ? "%sif ((%s)[0]) {\n" : "%sif (%s[0]) {\n", ind, pred);
  for (int br = 0; br < 2; br++) {
    int b = (int)(br ? a.else_block : a.then_block);
    const dy_block *blk = g->p->blocks[b];
    if (br)
      dy_buf_printf(out, "%s} else {\n", ind);
    char in2[80];
    snprintf(in2, sizeof in2, "%s  ", ind);
    put_block_comment(g, b, in2, br ? "else" : "then", out);
    cg_emit_block(g, b, depth + 1, out);
    emit_copies(g, op->outputs, blk->results,
                blk->n_results < op->n_outputs ? blk->n_results : op->n_outputs, in2, out);
  }
  dy_buf_printf(out, "%s}\n", ind);
}

/* while: the outputs hold the carried values; each trip copies them into
 * the condition block's params, runs it, stops on false, counts the trip
 * against the bound, runs the body and copies its results back. */
static void emit_while(cg_gen *g, const dy_op *op, int depth, const char *ind, dy_buf *out) {
  dy_while_attrs a = dy_while_attrs_get(op);
  const dy_block *cb = g->p->blocks[a.cond_block], *bb = g->p->blocks[a.body_block];
  int n = (int)a.n_carried;
  if (n > op->n_outputs)
    n = op->n_outputs;
  char what[128], bound[128], in2[80], in3[80], cres[300];
  snprintf(what, sizeof what, "%d carried value%s", n, n == 1 ? "" : "s");
  if (a.max_iterations > 0)
    snprintf(bound, sizeof bound, "%lld", (long long)a.max_iterations);
  else
    snprintf(bound, sizeof bound, "%s_MAX_ITERATIONS", g->upper);
  snprintf(in2, sizeof in2, "%s  ", ind);
  snprintf(in3, sizeof in3, "%s    ", ind);
  put_op_comment(g, op, ind, what, out);
  emit_copies(g, op->outputs, op->inputs, n, ind, out);
  dy_buf_printf(out, "%s{\n%sint64_t k%d_trips = 0;\n%sfor (;;) {\n", ind, in2, op->id, in2);
  put_block_comment(g, (int)a.cond_block, in3, "condition", out);
  emit_copies(g, cb->params, op->outputs, cb->n_params < n ? cb->n_params : n, in3, out);
  cg_emit_block(g, (int)a.cond_block, depth + 2, out);
  if (cb->n_results > 0)
    cg_buffer_expr(g, cb->results[0], true, cres, sizeof cres);
  else
    snprintf(cres, sizeof cres, "0");
  dy_buf_printf(out, cres[0] == '(' ? "%sif (!(%s)[0])\n%s  break;\n"
                                     : "%sif (!%s[0])\n%s  break;\n", in3, cres, in3);
  dy_buf_printf(out, "%sif (++k%d_trips > %s)\n%s  return %s_ERR_LOOP;\n", in3, op->id,
                bound, in3, g->upper);
  put_block_comment(g, (int)a.body_block, in3, "body", out);
  emit_copies(g, bb->params, op->outputs, bb->n_params < n ? bb->n_params : n, in3, out);
  cg_emit_block(g, (int)a.body_block, depth + 2, out);
  emit_copies(g, op->outputs, bb->results, bb->n_results < n ? bb->n_results : n, in3, out);
  dy_buf_printf(out, "%s}\n%s}\n", in2, ind);
}

/* The trip of the innermost while around block b, as a C expression over
 * its counter (emit_while's kN_trips: 0 in the condition of the first
 * trip, 1 in its body), or "-1" outside every loop. */
static void trip_expr(const dy_program *p, int b, char *buf, size_t n) {
  snprintf(buf, n, "-1");
  for (int ob; b > 0; b = ob) {
    const dy_op *owner = dy_block_owner(p, b, &ob, NULL);
    if (!owner)
      return;
    if (owner->kind == DY_OP_WHILE) {
      bool body = dy_while_attrs_get(owner).body_block == b;
      snprintf(buf, n, "k%d_trips%s", owner->id, body ? " - 1" : "");
      return;
    }
  }
}

/* A --localize build (dy_codegen_options.debug_dump): after an op of any
 * block, each of its results goes to NAME_debug_dump, which the caller
 * defines (compiler/driver/localize.c) - the op's id, the var's name, its data
 * and element count, its dtype (dy_dtype: 0 f32, 1 i64, 2 bool, 3 i8, 4 u8,
 * 5 i32), the innermost loop's trip (trip_expr). */
static void emit_dump(cg_gen *g, int b, const dy_op *op, const char *ind, dy_buf *out) {
  char trip[64];
  trip_expr(g->p, b, trip, sizeof trip);
  for (int i = 0; i < op->n_outputs; i++) {
    int v = op->outputs[i];
    const dy_type *t = &g->p->vars[v]->type;
    dy_cg_ctx ctx = {.p = g->p};
    char buf[300];
    cg_buffer_expr(g, v, true, buf, sizeof buf);
    dy_buf_printf(out, "%s%s_debug_dump(%d, ", ind, g->lower, op->id);
    dy_buf_put_cstring(out, g->p->vars[v]->name);
    dy_buf_printf(out, ", (const void *)%s, %s, %d, %s);\n", buf,
                  dy_cg_extent(&ctx, t, 0, t->rank), (int)t->dtype, trip);
  }
}

/* The calls of block b's ops at nesting depth (indent 2 + 2 * depth). */
void cg_emit_block(cg_gen *g, int b, int depth, dy_buf *out) {
  const dy_program *p = g->p;
  const dy_block *blk = p->blocks[b];
  char ind[64];
  int w = 2 + 2 * depth < (int)sizeof ind - 1 ? 2 + 2 * depth : (int)sizeof ind - 1;
  memset(ind, ' ', (size_t)w);
  ind[w] = '\0';
  for (int k = 0; k < blk->n_ops; k++) {
    int oi = g->oi_of_slot[dy_codegen_op_slot(p, b, k)];
    const dy_op *op = g->ops[oi];
    if (op->kind == DY_OP_COND) {
      emit_cond(g, op, depth, ind, out);
    } else if (op->kind == DY_OP_WHILE) {
      emit_while(g, op, depth, ind, out);
    } else if (g->kernel[oi]) {
      emit_call(g, oi, ind, out);
    } else {
      dy_buf_printf(out, "%s/* op %d: %s ", ind, op->id, dy_op_name(op->kind));
      dy_buf_put_comment(out, p->vars[op->outputs[0]]->name);
      dy_buf_puts(out, " is a view of ");
      dy_buf_put_comment(out, p->vars[op->inputs[0]]->name);
      dy_buf_puts(out, ", no code */\n");
    }
    if (g->opt->debug_dump)
      emit_dump(g, b, op, ind, out);
  }
}
