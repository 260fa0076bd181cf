/* kernel.c - floor 3: one kernel of NAME.c, a static function per op that
 * has one, under a comment naming the op (a fused one: every op it was made
 * from), its source line and types. The driver checks the op's output
 * types against inference once (so no emitter re-runs it), asks the op's
 * emitter (dy_cg_table) for the body, names the parameters by the
 * operands' roles and writes the signature: the inputs (const T
 * *restrict, plain pointers for an op that writes over an input), the
 * outputs, `float *restrict scratch` when the kernel needs scratch
 * (dy_codegen_scratch_bytes), `uint64_t seed` for a training step's
 * dropout, and the size symbols its types use. A kernel that can fail
 * (DY_OPF_CAN_FAIL: a gather on an index out of range) returns int: its
 * emitter may write `return 1;`, the final `return 0;` is added here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
static const char *op_symbol(dy_op_kind k) {
  switch (k) {
  case DY_OP_ADD: return " + ";
  case DY_OP_SUB: return " - ";
  case DY_OP_MUL: return " * ";
  case DY_OP_DIV: return " / ";
  case DY_OP_MATMUL: return " @ ";
  default: return ", ";
  }
}

/* The one type check of a kernel, done here so that no emitter re-runs
 * inference: the op's output types must be what inference gives for its
 * input types (so attributes are well formed and shapes agree by the rules
 * of ir/infer*.c). Emitters then check only what they add (the dtypes
 * their kernels are written for). */
static dy_status check_kernel_types(cg_gen *g, const dy_op *op) {
  const dy_program *p = g->p;
  enum { MAX_IN = DY_MAX_FEEDS, MAX_OUT = 8 };
  dy_type in[MAX_IN], want[MAX_OUT];
  if (op->n_inputs > MAX_IN || op->n_outputs > MAX_OUT)
    return dy_error_at(g->err, op, DY_STATUS_UNSUPPORTED,
                       "codegen: %s: %d inputs and %d outputs are too many",
                       dy_op_name(op->kind), op->n_inputs, op->n_outputs);
  for (int i = 0; i < op->n_inputs; i++)
    in[i] = p->vars[op->inputs[i]]->type;
  dy_status s = dy_infer(op, in, op->n_inputs, want, g->err);
  if (s != DY_OK)
    return dy_error_prefix(g->err, "codegen");
  for (int i = 0; i < op->n_outputs; i++)
    if (!dy_type_equal(&want[i], &p->vars[op->outputs[i]]->type)) {
      char a[160], b[160];
      return dy_error_at(g->err, op, DY_STATUS_SHAPE_MISMATCH,
                         "codegen: %s: output %d is %s, not %s as inference gives",
                         dy_op_name(op->kind), i,
                         dy_type_str(&p->vars[op->outputs[i]]->type, a, sizeof a),
                         dy_type_str(&want[i], b, sizeof b));
    }
  return DY_OK;
}

/* a b c into d (n bytes), cut to fit. */
static void join(char *d, size_t n, const char *a, const char *b, const char *c) {
  size_t k = 0;
  for (const char *p[] = {a, b, c}, **q = p; q < p + 3; q++)
    for (const char *t = *q; *t && k + 1 < n; t++)
      d[k++] = *t;
  d[k] = '\0';
}

/* The parameter names of op's kernel: inputs then outputs, by role
 * (cg_operand_role) where that name is free in the kernel's code (written
 * with the parameters named in0.., out0..), else the role with _in /
 * _out, else in<i> / out<i>. */
static void param_names(const dy_op *op, const char *code, char (*name)[32]) {
  int n = op->n_inputs + op->n_outputs;
  for (int k = 0; k < n; k++) {
    bool out = k >= op->n_inputs;
    int i = out ? k - op->n_inputs : k;
    char buf[32], cand[2][32];
    const char *role = cg_operand_role(op, out, i, buf, sizeof buf);
    snprintf(name[k], 32, "%s%d", out ? "out" : "in", i);
    if (!role)
      continue;
    join(cand[0], 32, role, "", "");
    join(cand[1], 32, role, "_", out ? "out" : "in");
    for (int c = 0; c < 2; c++) {
      bool taken = dy_cg_mentions_n(code, strlen(code), cand[c]) ||
                   strcmp(cand[c], "batch") == 0 || strcmp(cand[c], "scratch") == 0;
      for (int j = 0; j < k && !taken; j++)
        taken = strcmp(name[j], cand[c]) == 0;
      if (!taken) {
        join(name[k], 32, cand[c], "", "");
        break;
      }
    }
  }
}

/* Text with its comments blanked (the names a comment uses are free). */
static char *code_only(const char *a, const char *b) {
  char *t = cg_xprintf("%s\n%s", a ? a : "", b ? b : "");
  if (!t)
    return NULL;
  for (char *c = t; (c = strstr(c, "/*")) != NULL;) {
    char *e = strstr(c + 2, "*/");
    char *end = e ? e + 2 : c + strlen(c);
    memset(c, ' ', (size_t)(end - c));
    c = end;
  }
  return t;
}

/* The kernel's comment: op id, name, location (a fused op: every op it was
 * made from), types. */
static void put_comment(const cg_gen *g, const dy_op *op, bool in_place, dy_buf *out) {
  const dy_program *p = g->p;
  char ts[256];
  dy_buf_printf(out, "/* op %d: %s", op->id, dy_op_name(op->kind));
  if (op->n_srcs) {
    /* a fused op: every op it was made from */
    char loc[300];
    for (int i = 0; i < op->n_srcs; i++) {
      const dy_op_src *src = &op->srcs[i];
      snprintf(loc, sizeof loc, "%s%s:%d %s", i ? ", " : "   ",
               src->loc.file ? cg_basename_of(src->loc.file) : "?", src->loc.line,
               dy_op_name(src->kind));
      dy_buf_put_comment(out, loc);
    }
  } else if (op->loc.file) {
    char loc[300];
    snprintf(loc, sizeof loc, "   %s:%d", cg_basename_of(op->loc.file), op->loc.line);
    dy_buf_put_comment(out, loc);
  }
  dy_buf_puts(out, "   ");
  for (int i = 0; i < op->n_inputs; i++)
    dy_buf_printf(out, "%s%s", i ? op_symbol(op->kind) : "",
                  dy_type_str(&p->vars[op->inputs[i]]->type, ts, sizeof ts));
  dy_buf_puts(out, op->n_inputs ? " -> " : "-> ");
  for (int i = 0; i < op->n_outputs; i++)
    dy_buf_printf(out, "%s%s", i ? ", " : "",
                  dy_type_str(&p->vars[op->outputs[i]]->type, ts, sizeof ts));
  if (dy_op_has(op, DY_OPF_VIEW))
    dy_buf_puts(out, " (copy)");
  if (in_place)
    dy_buf_puts(out, " (in place)");
  dy_buf_puts(out, " */\n");
}

/* Does identifier id occur as a whole token in text? */
static bool mentions(const char *text, const char *id) {
  return dy_cg_mentions_n(text, strlen(text), id);
}

/* The kernel's definition: its signature (parameters named pname, then
 * scratch, seed and the size symbols its types use), a (void) for each
 * parameter the body does not read, the body. */
static dy_status put_definition(cg_gen *g, int oi, char (*pname)[32], const char *body,
                                dy_buf *out) {
  const dy_program *p = g->p;
  const dy_op *op = g->ops[oi];
  bool in_place = g->in_place[oi];
  /* signature */
  char *args[2 * DY_MAX_FEEDS + 2 + DY_MAX_SYMS];
  char *names[2 * DY_MAX_FEEDS + 2 + DY_MAX_SYMS];
  int n = 0;
  uint64_t syms = 0;
  for (int i = 0; i < op->n_inputs && n < 2 * DY_MAX_FEEDS; i++) {
    const dy_type *t = &p->vars[op->inputs[i]]->type;
    syms |= dy_type_sym_mask(t);
    names[n] = cg_xstrdup(pname[n]);
    args[n] = cg_xprintf("const %s *%s%s", dy_ctype(t->dtype), in_place ? "" : "restrict ",
                         pname[n]);
    n++;
  }
  for (int i = 0; i < op->n_outputs && n < 2 * DY_MAX_FEEDS; i++) {
    const dy_type *t = &p->vars[op->outputs[i]]->type;
    syms |= dy_type_sym_mask(t);
    names[n] = cg_xstrdup(pname[n]);
    args[n] = cg_xprintf("%s *%s%s", dy_ctype(t->dtype), in_place ? "" : "restrict ", pname[n]);
    n++;
  }
  if (g->scratch[oi] > 0) {
    names[n] = cg_xstrdup("scratch");
    args[n++] = cg_xstrdup("float *restrict scratch");
  }
  if (g->seed_slot[oi] >= 0) {
    names[n] = cg_xstrdup("seed");
    args[n++] = cg_xstrdup("uint64_t seed");
  }
  /* a count the kernel finds (DY_OPF_SETS_SIZE): written to *count, not
   * a size it takes; it fails on a count above the symbol's bound */
  int set = dy_op_size_sym(op, NULL);
  if (set > 0)
    syms &= ~((uint64_t)1 << set);
  {
    int n0 = n;
    n = cg_sym_args(g, syms, true, args, n);
    cg_sym_args(g, syms, false, names, n0);
  }
  if (set > 0) {
    names[n] = cg_xstrdup("count");
    args[n++] = cg_xstrdup("int64_t *restrict count");
  }
  char kname[256], head[300];
  cg_kernel_name(p, op, kname, sizeof kname);
  bool can_fail = dy_op_has(op, DY_OPF_CAN_FAIL) || set > 0;
  snprintf(head, sizeof head, "static %s %s", can_fail ? "int" : "void", kname);
  if (!cg_args_ok(args, n) || !cg_args_ok(names, n)) {
    cg_free_args(args, n);
    cg_free_args(names, n);
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  /* a qconv2d kernel stays a function of its own: gcc inlines a static
   * function called once, and inside NAME_run its loops share the
   * registers of every other kernel there and spill (on a Cortex-M4 that
   * cost the MLPerf Tiny int8 conv nets 5-13% of their instructions,
   * bench/RESULTS.md) */
  if (op->kind == DY_OP_QCONV2D)
    dy_buf_puts(out, "#if defined(__GNUC__)\n__attribute__((noinline))\n#endif\n");
  if (n == 0)
    dy_buf_printf(out, "%s(void) {\n", head);
  else
    cg_put_wrapped(out, "", head, args, n, " {\n");
  /* a parameter the body does not read (an extent of 0, say; a comment
   * naming it is no read) */
  char *read = code_only(body, NULL);
  if (!read)
    out->oom = true;
  for (int i = 0; i < n && read; i++)
    if (!mentions(read, names[i]))
      dy_buf_printf(out, "  (void)%s;\n", names[i]);
  free(read);
  if (body)
    dy_buf_puts(out, body);
  if (can_fail)
    dy_buf_puts(out, "  return 0;\n");
  dy_buf_puts(out, "}\n\n");
  cg_free_args(args, n);
  cg_free_args(names, n);
  return DY_OK;
}

/* The body of op oi's kernel by its emitter (dy_cg_table) into body and
 * before (the worker functions of a threaded kernel), the parameters named
 * param (inputs then outputs; NULL: in0.., out0..). */
static dy_status run_emitter(cg_gen *g, int oi, const char *const *param, dy_buf *body,
                             dy_buf *before) {
  const dy_op *op = g->ops[oi];
  dy_cg_ctx ctx = {.p = g->p, .op = op, .body = body, .indent = 1, .uses = &g->uses,
                   .scratch = g->scratch[oi] > 0, .threads = g->opt->threads,
                   .plain_kernels = g->opt->plain_kernels, .no_pack_a = g->opt->no_pack_a,
                   .before = before,
                   .seed = g->seed_slot[oi] >= 0, .param = param};
  dy_status s = dy_cg_table[op->kind]->emit(&ctx, g->err);
  if (!dy_cg_loops_close_all(&ctx) && s == DY_OK)
    s = dy_error_at(g->err, op, DY_STATUS_INTERNAL, "codegen: %s: the emitter left a loop open",
                    dy_op_name(op->kind));
  if (s == DY_OK && (body->oom || before->oom))
    s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  return s;
}

dy_status cg_emit_kernel(cg_gen *g, int oi, dy_buf *final_out) {
  const dy_op *op = g->ops[oi];
  /* the comment is written aside: a threaded kernel's worker function
   * (ctx.before) goes in front of it */
  dy_buf cmt = {0}, *out = &cmt;
  put_comment(g, op, g->in_place[oi], out);

  /* the parameters are named by their operands' roles (x, w, bias, y,
   * ...) where the name is free in the kernel: a first run of the emitter
   * with the generic names in0.., out0.. shows which names the kernel's own
   * code uses; the second writes it with the names chosen */
  dy_buf body = {0}, before = {0};
  enum { MAXP = 2 * DY_MAX_FEEDS + 2 };
  char pname[MAXP][32];
  const char *param[MAXP];
  dy_status s = check_kernel_types(g, op);
  if (s == DY_OK)
    s = run_emitter(g, oi, NULL, &body, &before);
  char *code = s == DY_OK ? code_only(body.s, before.s) : NULL;
  if (s == DY_OK && !code)
    s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (s == DY_OK) {
    param_names(op, code, pname);
    bool generic = true;
    for (int k = 0; k < op->n_inputs + op->n_outputs; k++) {
      bool o = k >= op->n_inputs;
      char gk[16];
      snprintf(gk, sizeof gk, "%s%d", o ? "out" : "in", o ? k - op->n_inputs : k);
      generic &= strcmp(gk, pname[k]) == 0;
      param[k] = pname[k];
    }
    if (!generic) {
      dy_buf_free(&body);
      dy_buf_free(&before);
      s = run_emitter(g, oi, param, &body, &before);
    }
  }
  free(code);
  if (s == DY_OK && cmt.oom)
    s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (s != DY_OK) {
    dy_buf_free(&body);
    dy_buf_free(&before);
    dy_buf_free(&cmt);
    if (g->err && g->err->op_id < 0)
      g->err->op_id = op->id;
    return s;
  }
  out = final_out;
  if (before.s)
    dy_buf_puts(out, before.s);
  if (cmt.s)
    dy_buf_puts(out, cmt.s);
  dy_buf_free(&before);
  dy_buf_free(&cmt);
  s = put_definition(g, oi, pname, body.s, out);
  dy_buf_free(&body);
  return s;
}
