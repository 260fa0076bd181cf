/* print.c - the Program as text (dy_program_print) and as Graphviz.
 *
 * The text form, one declaration or op per line:
 *
 *   program {
 *     var x : f32[-1,10] feed 0
 *     var linear.weight : f32[10,3] persistable trainable
 *     var scale : f32[2] persistable = [0.5, 2.0]
 *     var t_0 : f32[-1,3]
 *     block 0 parent -1 {
 *       t_0 = matmul(x, linear.weight) {transpose_x = 0, transpose_y = 0}  @simple_net.c:24
 *     }
 *     fetch 0 t_2
 *   }
 *
 * A sub-block (a cond branch, a while's condition or body; blocks.c) lists
 * its params after the parent and ends with the values it yields:
 *
 *     block 1 parent 0 (i_0, acc_0) {
 *       c_0 = less_than(i_0, n)
 *       yield c_0
 *     }
 *
 * Floats print in the shortest form that reads back exactly and always
 * carry a '.', 'e', "inf" or "nan", so they never read back as ints
 * (dy_float_str). The data of persistable vars of up to 16 elements is
 * printed too, each element as its dtype holds it (dy_dtype_format). parse.c
 * reads this form back (dy_program_parse).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"

/* A float in the form that reads back exactly (dy_float_str). */
static void print_float(double f, FILE *out) {
  char buf[32];
  fputs(dy_float_str(f, buf, sizeof buf), out);
}

enum { PRINT_DATA_MAX = 16 };

/* " = [v, v, ...]" for a small persistable var (the text form is for
 * reading, and for pass tests that need constant values). */
static void print_data(const dy_var *v, FILE *out) {
  int64_t n = dy_type_numel(&v->type);
  if (!v->data || n < 0 || n > PRINT_DATA_MAX)
    return;
  fputs(" = [", out);
  for (int64_t i = 0; i < n; i++) {
    if (i)
      fputs(", ", out);
    char buf[32];
    fputs(dy_dtype_format(buf, sizeof buf, v->type.dtype, v->data, i, 0), out);
  }
  fputc(']', out);
}

static void print_attr(const dy_attr *a, FILE *out) {
  fprintf(out, "%s = ", a->name);
  switch (a->kind) {
  case DY_ATTR_INT: fprintf(out, "%lld", (long long)a->i); break;
  case DY_ATTR_FLOAT: print_float(a->f, out); break;
  case DY_ATTR_INTS:
    fputc('[', out);
    for (int i = 0; i < a->n; i++)
      fprintf(out, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
    fputc(']', out);
    break;
  case DY_ATTR_FLOATS:
    fputc('[', out);
    for (int i = 0; i < a->n; i++) {
      if (i)
        fputs(", ", out);
      print_float(a->floats[i], out);
    }
    fputc(']', out);
    break;
  case DY_ATTR_STRING: fprintf(out, "\"%s\"", a->s ? a->s : ""); break;
  }
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

void dy_program_print(const dy_program *p, FILE *out) {
  char ty[128];
  fprintf(out, "program {\n");
  for (int i = 0; i < p->n_syms; i++) {
    const dy_sym_decl *d = &p->syms[i];
    fprintf(out, "  sym %s", d->name);
    if (d->max > 0)
      fprintf(out, " max %lld", (long long)d->max);
    if (d->value >= 0)
      fprintf(out, " value %lld", (long long)d->value);
    fputc('\n', out);
  }
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    fprintf(out, "  var %s : %s", v->name, dy_type_str(&v->type, ty, sizeof ty));
    if (v->feed_index >= 0)
      fprintf(out, " feed %d", v->feed_index);
    if (v->persistable) {
      fprintf(out, v->trainable ? " persistable trainable" : " persistable");
      print_data(v, out);
    }
    fputc('\n', out);
  }
  for (int b = 0; b < p->n_blocks; b++) {
    const dy_block *blk = p->blocks[b];
    fprintf(out, "  block %d parent %d", blk->idx, blk->parent);
    if (b > 0) {
      fputs(" (", out);
      for (int i = 0; i < blk->n_params; i++)
        fprintf(out, "%s%s", i ? ", " : "", p->vars[blk->params[i]]->name);
      fputc(')', out);
    }
    fputs(" {\n", out);
    for (int k = 0; k < blk->n_ops; k++) {
      const dy_op *op = blk->ops[k];
      fprintf(out, "    ");
      for (int i = 0; i < op->n_outputs; i++)
        fprintf(out, "%s%s", i ? ", " : "", p->vars[op->outputs[i]]->name);
      fprintf(out, " = %s(", dy_op_name(op->kind));
      for (int i = 0; i < op->n_inputs; i++)
        fprintf(out, "%s%s", i ? ", " : "", p->vars[op->inputs[i]]->name);
      fputc(')', out);
      if (op->n_attrs) {
        fputs(" {", out);
        for (int i = 0; i < op->n_attrs; i++) {
          if (i)
            fputs(", ", out);
          print_attr(&op->attrs[i], out);
        }
        fputc('}', out);
      }
      if (op->loc.file)
        fprintf(out, "  @%s:%d", base_name(op->loc.file), op->loc.line);
      /* a fused op's sources: "[a.c:3 conv2d, a.c:4 relu]" ('?' no file) */
      for (int i = 0; i < op->n_srcs; i++)
        fprintf(out, "%s%s:%d %s%s", i ? ", " : op->loc.file ? " [" : "  [",
                op->srcs[i].loc.file ? base_name(op->srcs[i].loc.file) : "?",
                op->srcs[i].loc.line, dy_op_name(op->srcs[i].kind),
                i + 1 == op->n_srcs ? "]" : "");
      fputc('\n', out);
    }
    if (b > 0) {
      fputs("    yield", out);
      for (int i = 0; i < blk->n_results; i++)
        fprintf(out, "%s%s", i ? ", " : " ", p->vars[blk->results[i]]->name);
      fputc('\n', out);
    }
    fprintf(out, "  }\n");
  }
  for (int i = 0; i < p->n_fetches; i++)
    fprintf(out, "  fetch %d %s\n", i, p->vars[p->fetches[i]]->name);
  fprintf(out, "}\n");
}

/* Graphviz: vars are ellipses (parameters grey, feeds/fetches bold), ops
 * are boxes labelled with the op name and source line. Each sub-block is a
 * cluster (nested in its parent's) holding its ops, with a dashed edge
 * from the owning op; its results have dotted edges to the block's label. */
static void dot_op(const dy_program *p, const dy_op *op, FILE *out) {
  fprintf(out, "  op%d [shape=box, label=\"%s", op->id, dy_op_name(op->kind));
  if (op->n_srcs)
    for (int i = 0; i < op->n_srcs; i++)
      fprintf(out, "\\n%s:%d %s",
              op->srcs[i].loc.file ? base_name(op->srcs[i].loc.file) : "?",
              op->srcs[i].loc.line, dy_op_name(op->srcs[i].kind));
  else if (op->loc.file)
    fprintf(out, "\\n%s:%d", base_name(op->loc.file), op->loc.line);
  fprintf(out, "\"];\n");
  for (int i = 0; i < op->n_inputs; i++)
    fprintf(out, "  v%d -> op%d;\n", op->inputs[i], op->id);
  for (int i = 0; i < op->n_outputs; i++)
    fprintf(out, "  op%d -> v%d;\n", op->id, op->outputs[i]);
  (void)p;
}

static void dot_block(const dy_program *p, int b, int depth, FILE *out) {
  const dy_block *blk = p->blocks[b];
  if (depth > p->n_blocks)
    return;
  if (b > 0)
    fprintf(out, "  subgraph cluster_b%d {\n  label=\"block %d\";\n"
            "  b%d [shape=point];\n", b, b, b);
  for (int k = 0; k < blk->n_ops; k++) {
    const dy_op *op = blk->ops[k];
    dot_op(p, op, out);
    int sub[2], n = dy_op_sub_blocks(op, sub);
    for (int j = 0; j < n; j++)
      if (sub[j] > 0 && sub[j] < p->n_blocks && p->blocks[sub[j]]->parent == b)
        dot_block(p, sub[j], depth + 1, out);
  }
  if (b > 0) {
    for (int i = 0; i < blk->n_params; i++)
      fprintf(out, "  b%d -> v%d [style=dashed];\n", b, blk->params[i]);
    for (int i = 0; i < blk->n_results; i++)
      fprintf(out, "  v%d -> b%d [style=dotted];\n", blk->results[i], b);
    fprintf(out, "  }\n");
  }
}

void dy_program_print_dot(const dy_program *p, FILE *out) {
  char ty[128];
  fprintf(out, "digraph program {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n");
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    fprintf(out, "  v%d [shape=ellipse, label=\"%s\\n%s\"%s%s];\n", i, v->name,
            dy_type_str(&v->type, ty, sizeof ty),
            v->persistable ? ", style=filled, fillcolor=lightgrey" : "",
            v->feed_index >= 0 || v->fetch_index >= 0 ? ", penwidth=2" : "");
  }
  dot_block(p, 0, 0, out);
  for (int b = 1; b < p->n_blocks; b++) {
    dy_op *owner = dy_block_owner(p, b, NULL, NULL);
    if (owner)
      fprintf(out, "  op%d -> b%d [style=dashed];\n", owner->id, b);
  }
  fprintf(out, "}\n");
}

char *dy_program_to_text(const dy_program *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  dy_program_print(p, f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
