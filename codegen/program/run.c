/* run.c - floor 3: NAME_run. Before it the state's and the arena's layout
 * (NAME_SOFF_<var>, NAME_OFF_<var> and each kernel's scratch, with sizes and
 * types); then the argument checks, the calls of block 0 (blocks.c), the
 * copies of outputs no kernel writes (a fetch that is a feed, a weight or
 * state), and NAME_run_v, the same behind arrays of pointers. With
 * threads the body is NAME_run_body and NAME_run runs it inside a pool of
 * workers for the call (rt/dy_thread.h). */
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
/* The arena layout before NAME_run: one #define per buffer the calls pass
 * (NAME_OFF_<var>, its byte offset) with its size at max batch and type,
 * the views that share a buffer, and each kernel's scratch. */
static void emit_layout(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  if (!g->uses_arena)
    return;
  int w = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->off[i] && (int)strlen(g->off[i]) > w)
      w = (int)strlen(g->off[i]);
  for (int oi = 0; oi < g->n_ops; oi++)
    if (g->scratch_name[oi] && (int)strlen(g->scratch_name[oi]) > w)
      w = (int)strlen(g->scratch_name[oi]);
  dy_buf_printf(out, "/* arena layout: byte offset of each buffer (bytes at batch = %lld",
                (long long)g->bounds[0]);
  cg_put_named_bounds(g, out, " = ");
  dy_buf_puts(out, ") */\n");
  char ts[256];
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    if (!g->used[i] || g->st[i].kind != ST_ARENA)
      continue;
    if (g->st[i].root == i) {
      dy_buf_printf(out, "#define %-*s %8lld /* %8lld  ", w, g->off[i],
                    (long long)v->mem_offset, (long long)cg_var_bytes(g, v));
      dy_buf_put_comment(out, v->name);
      dy_buf_printf(out, " %s */\n", dy_type_str(&v->type, ts, sizeof ts));
    } else {
      dy_buf_puts(out, "/* ");
      dy_buf_put_comment(out, v->name);
      dy_buf_printf(out, " %s is a view of ", dy_type_str(&v->type, ts, sizeof ts));
      dy_buf_put_comment(out, p->vars[g->st[i].root]->name);
      dy_buf_puts(out, " */\n");
    }
  }
  for (int oi = 0; oi < g->n_ops; oi++)
    if (g->scratch[oi] > 0)
      dy_buf_printf(out, "#define %-*s %8lld /* %8lld  scratch of op %d (%s), during that op only */\n",
                    w, g->scratch_name[oi], (long long)g->scratch_off[oi],
                    (long long)g->scratch[oi], g->ops[oi]->id,
                    dy_op_name(g->ops[oi]->kind));
  dy_buf_putc(out, '\n');
}

/* NAME_run of a file with threads, into g->run_pool (emit_run puts it
 * after NAME_run_body): a pool for the call around the body. */
static void emit_run_pool(cg_gen *g, dy_buf *out, char **params, int n) {
  dy_buf *b = &g->run_pool;
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  for (int i = 0; i < n; i++) { /* "const float *x" -> "x" */
    const char *s = params[i], *e = s + strlen(s);
    while (e > s && e[-1] != ' ' && e[-1] != '*')
      e--;
    args[i] = cg_xstrdup(e);
  }
  char *head = cg_xprintf("int %s_run", g->lower), *call = cg_xprintf("rc = %s_run_body", g->lower);
  if (!cg_args_ok(args, n) || !head || !call) {
    out->oom = true;
  } else {
    dy_buf_printf(b, "/* %s_run_body in a pool of %d threads for this call (workers\n"
                  " * started by its first split kernel, joined before it returns) */\n",
                  g->lower, g->opt->threads);
    cg_put_wrapped(b, "", head, params, n, " {\n");
    dy_buf_puts(b, "  dy_pool pool;\n  int rc;\n  dy_pool_begin(&pool);\n");
    cg_put_wrapped(b, "  ", call, args, n, ";\n");
    dy_buf_puts(b, "  dy_pool_end(&pool);\n  return rc;\n}\n\n");
    if (b->oom)
      out->oom = true;
  }
  free(head);
  free(call);
  cg_free_args(args, n);
}

/* NAME_run's argument checks (NULL buffers, the batch, the size symbols
 * given) and the locals of the sizes a kernel sets. */
static void emit_checks(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *U = g->upper;
  const char *checks[2 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  char rt_out[DY_MAX_SYMS][DY_SYM_NAME_MAX + 16];
  int nc = 0;
  if (g->state_bytes > 0)
    checks[nc++] = "state";
  if (g->arena_bytes > 0)
    checks[nc++] = "arena";
  for (int i = 0; i < p->n_feeds; i++)
    checks[nc++] = g->param_in[i];
  for (int i = 0; i < p->n_fetches; i++)
    checks[nc++] = g->param_out[i];
  for (int k = 0; k < g->n_named; k++)
    if (cg_sym_rt(g, g->named[k])) {
      snprintf(rt_out[k], sizeof rt_out[k], "dim_%s_out", dy_sym_name(g->named[k]));
      checks[nc++] = rt_out[k];
    }
  size_t col = 6;
  for (int i = 0; i < nc; i++) {
    size_t w = strlen(checks[i]) + 1;
    if (i == 0) {
      dy_buf_puts(out, "  if (");
    } else if (col + 4 + w > 78) {
      dy_buf_puts(out, " ||\n      ");
      col = 6;
    } else {
      dy_buf_puts(out, " || ");
      col += 4;
    }
    dy_buf_printf(out, "!%s", checks[i]);
    col += w;
  }
  if (nc)
    dy_buf_printf(out, ")\n    return %s_ERR_ARG;\n", U);
  if (g->dynamic)
    dy_buf_printf(out, "  if (batch < 1 || batch > %s_MAX_BATCH)\n    return %s_ERR_BATCH;\n",
                  U, U);
  else
    dy_buf_puts(out, "  (void)batch; /* no dynamic dim */\n");
  for (int k = 0; k < g->n_named; k++) {
    char nm[DY_SYM_NAME_MAX + 8], up[DY_SYM_NAME_MAX + 8];
    if (!cg_sym_rt(g, g->named[k]))
      dy_buf_printf(out, "  if (%s < 1 || %s > %s_MAX_DIM_%s)\n    return %s_ERR_SHAPE;\n",
                    dy_cg_sym_cname(g->named[k], nm, sizeof nm), nm, U,
                    cg_sym_upper(g->named[k], up, sizeof up), U);
  }
  /* the sizes a kernel sets, 0 until it runs */
  for (int k = 0; k < g->n_named; k++)
    if (cg_sym_rt(g, g->named[k]))
      dy_buf_printf(out, "  int64_t dim_%s = 0; /* size symbol %s: set by a kernel */\n",
                    dy_sym_name(g->named[k]), dy_sym_name(g->named[k]));
}

void cg_emit_run(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = cg_run_params(g, args);
  /* with threads the body is NAME_run_body, which NAME_run calls inside
   * a pool of workers for the call (rt/dy_thread.h) */
  bool pool = g->uses & DY_USES_THREADS;
  char *head = cg_xprintf(pool ? "static int %s_run_body" : "int %s_run", L);
  if (!cg_args_ok(args, n) || !head) {
    out->oom = true;
    free(head);
    cg_free_args(args, n);
    return;
  }
  if (g->state_bytes > 0)
    cg_emit_state_layout(g, out);
  emit_layout(g, out);
  cg_put_wrapped(out, "", head, args, n, " {\n");
  free(head);
  if (pool)
    emit_run_pool(g, out, args, n);
  cg_free_args(args, n);

  emit_checks(g, out);
  if (g->arena_bytes <= 0 && !g->uses_arena)
    dy_buf_puts(out, "  (void)arena;\n");

  if (g->uses_arena)
    dy_buf_puts(out, "  unsigned char *mem = (unsigned char *)arena;\n");
  if (g->state_bytes > 0)
    dy_buf_puts(out, "  unsigned char *st = (unsigned char *)state;\n");
  dy_buf_putc(out, '\n');

  cg_emit_block(g, 0, 0, out);
  /* outputs that no kernel writes: copy them from where they live */
  for (int i = 0; i < p->n_fetches; i++) {
    int v = p->fetches[i];
    const dy_var *x = p->vars[v];
    if (g->st[v].kind == ST_FETCH)
      continue;
    dy_cg_ctx ctx = {.p = p};
    char src[300];
    cg_buffer_expr(g, v, true, src, sizeof src);
    dy_buf_printf(out, "  /* output %d is %s %s */\n", i,
                  g->st[v].kind == ST_FEED    ? "input"
                  : g->st[v].kind == ST_STATE ? "state"
                                              : "weight",
                  src);
    bool cast = g->st[v].kind == ST_STATE; /* a cast expression: parenthesised */
    dy_buf_printf(out, "  for (int64_t i = 0; i < %s; i++)\n    %s[i] = %s%s%s[i];\n",
                  dy_cg_extent(&ctx, &x->type, 0, x->type.rank), g->param_out[i],
                  cast ? "(" : "", src, cast ? ")" : "");
  }
  for (int k = 0; k < g->n_named; k++)
    if (cg_sym_rt(g, g->named[k]))
      dy_buf_printf(out, "  *dim_%s_out = dim_%s;\n", dy_sym_name(g->named[k]),
                    dy_sym_name(g->named[k]));
  dy_buf_printf(out, "  return %s_OK;\n}\n\n", U);
  if (pool && g->run_pool.s)
    dy_buf_puts(out, g->run_pool.s);
  dy_buf_free(&g->run_pool);

  /* NAME_run_v */
  dy_buf_printf(out,
                "int %s_run_v(%svoid *arena, %s, const void *const "
                "*inputs,\n"
                "%*svoid *const *outputs) {\n",
                L, g->state_bytes > 0 ? "void *state, " : "",
                g->rt_mask ? "int64_t *dims" : g->n_named ? "const int64_t *dims" : "int64_t batch",
                (int)(strlen(L) + 11), "");
  if (g->n_named)
    dy_buf_printf(out, "  if (!dims)\n    return %s_ERR_ARG;\n", U);
  if (p->n_feeds && p->n_fetches)
    dy_buf_puts(out, "  if (!inputs || !outputs)\n");
  else if (p->n_feeds)
    dy_buf_puts(out, "  (void)outputs;\n  if (!inputs)\n");
  else if (p->n_fetches)
    dy_buf_puts(out, "  (void)inputs;\n  if (!outputs)\n");
  else
    dy_buf_puts(out, "  (void)inputs;\n  (void)outputs;\n");
  if (p->n_feeds || p->n_fetches)
    dy_buf_printf(out, "    return %s_ERR_ARG;\n", U);
  char *cargs[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  n = 0;
  if (g->state_bytes > 0)
    cargs[n++] = cg_xstrdup("state");
  cargs[n++] = cg_xstrdup("arena");
  cargs[n++] = cg_xstrdup(g->n_named ? "dims[0]" : "batch");
  for (int k = 0; k < g->n_named; k++)
    cargs[n++] = cg_xprintf("%sdims[%d]", cg_sym_rt(g, g->named[k]) ? "&" : "", k + 1);
  for (int i = 0; i < p->n_feeds; i++)
    cargs[n++] = cg_xprintf("(const %s *)inputs[%d]",
                            dy_ctype(p->vars[p->feeds[i]]->type.dtype), i);
  for (int i = 0; i < p->n_fetches; i++)
    cargs[n++] = cg_xprintf("(%s *)outputs[%d]",
                            dy_ctype(p->vars[p->fetches[i]]->type.dtype), i);
  head = cg_xprintf("return %s_run", L);
  if (!cg_args_ok(cargs, n) || !head)
    out->oom = true;
  else
    cg_put_wrapped(out, "  ", head, cargs, n, ";\n}\n\n");
  free(head);
  cg_free_args(cargs, n);
}
