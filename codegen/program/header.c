/* header.c - floor 3: NAME.h, the API of the model and nothing else: the
 * size macros (arena, bounds, weights, RAM and flash, state), each input's
 * and output's name, rank, shape, dtype and element count, the status
 * codes, the tensor tables, NAME_run and NAME_run_v (and with size symbols
 * NAME_bind and NAME_output_shape), and with state what state.c declares. */
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"

/* "batch*10" as used in the header's NUMEL macros: "((int64_t)(batch) * 10)". */
static void put_numel_macro(dy_buf *out, const dy_type *t) {
  dy_ext n = dy_ext_range(t, 0, t->rank);
  int64_t k = n.k;
  int pw = n.p;
  if (pw == 0) {
    dy_buf_printf(out, "((int64_t)%lld)", (long long)k);
    return;
  }
  dy_buf_puts(out, "((int64_t)(batch)");
  for (int i = 1; i < pw; i++)
    dy_buf_puts(out, " * (int64_t)(batch)");
  if (k != 1)
    dy_buf_printf(out, " * %lld", (long long)k);
  dy_buf_putc(out, ')');
}

/* The macros of input or output i (kind "INPUT" or "OUTPUT"): its name,
 * rank, shape, dtype and element count. */
static void put_io_macros(cg_gen *g, dy_buf *out, const char *kind, int i,
                          const dy_var *v) {
  const char *U = g->upper;
  char ts[256];
  dy_buf_printf(out, "/* %s %d: ", kind[0] == 'I' ? "input" : "output", i);
  dy_buf_put_comment(out, v->name);
  dy_buf_printf(out, "  %s */\n", dy_type_str(&v->type, ts, sizeof ts));
  dy_buf_printf(out, "#define %s_%s_%d_NAME ", U, kind, i);
  dy_buf_put_cstring(out, v->name);
  dy_buf_printf(out, "\n#define %s_%s_%d_RANK %d\n", U, kind, i, v->type.rank);
  dy_buf_printf(out, "#define %s_%s_%d_SHAPE ", U, kind, i);
  cg_put_shape_list(out, &v->type);
  dy_buf_printf(out, "\n#define %s_%s_%d_DTYPE \"%s\"\n", U, kind, i,
                dy_dtype_name(v->type.dtype));
  if (g->n_named) {
    /* NUMEL(batch, dim_seq, ...): every size symbol a parameter */
    char nm[DY_SYM_NAME_MAX + 8];
    dy_cg_ctx ctx = {.p = g->p};
    dy_buf_printf(out, "#define %s_%s_%d_NUMEL(batch", U, kind, i);
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, ", %s", dy_cg_sym_cname(g->named[k], nm, sizeof nm));
    dy_buf_printf(out, ") ((int64_t)(%s))",
                  dy_cg_extent(&ctx, &v->type, 0, v->type.rank));
  } else {
    dy_buf_printf(out, "#define %s_%s_%d_NUMEL(batch) ", U, kind, i);
    put_numel_macro(out, &v->type);
  }
  dy_buf_puts(out, "\n");
}

/* The size macros: arena, bounds of the batch and the size symbols,
 * while loops' trips, weights, RAM and flash, state, inputs and outputs. */
static void put_sizes(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out, "#define %s_ARENA_BYTES %lld /* scratch bytes at max batch */\n",
                U, (long long)g->arena_bytes);
  dy_buf_printf(out, "#define %s_ARENA_ALIGN 64\n", U);
  dy_buf_printf(out, "#define %s_MAX_BATCH %lld\n", U, (long long)g->bounds[0]);
  if (g->n_named) {
    char up[DY_SYM_NAME_MAX + 8];
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, "#define %s_MAX_DIM_%s %lld /* bound of size symbol %s (--max-dim) */\n",
                    U, cg_sym_upper(g->named[k], up, sizeof up), (long long)g->bounds[g->named[k]],
                    dy_sym_name(g->named[k]));
    dy_buf_printf(out, "#define %s_NUM_DIMS %d /* batch and the size symbols */\n", U,
                  1 + g->n_named);
    dy_buf_printf(out, "#define %s_DIM_NAMES {\"batch\"", U);
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, ", \"%s\"", dy_sym_name(g->named[k]));
    dy_buf_printf(out, "}\n#define %s_DIM_MAXES {%s_MAX_BATCH", U, U);
    for (int k = 0; k < g->n_named; k++)
      dy_buf_printf(out, ", %s_MAX_DIM_%s", U, cg_sym_upper(g->named[k], up, sizeof up));
    dy_buf_puts(out, "}\n");
  }
  if (g->has_loop)
    dy_buf_printf(out, "#define %s_MAX_ITERATIONS %lld /* trips of a while loop "
                  "(--max-iterations) */\n", U, (long long)g->max_iterations);
  /* the file the data is in: OUT.c / OUT_weights.c of the header OUT.h */
  const char *hdr = g->opt->header;
  size_t hn = hdr ? strlen(hdr) : 0;
  bool use_hdr = hn > 2 && strcmp(hdr + hn - 2, ".h") == 0 && !strstr(hdr, "*/");
  dy_buf_printf(out, "#define %s_WEIGHT_BYTES %lld /* const data in %.*s%s */\n",
                U, (long long)g->weight_bytes, use_hdr ? (int)(hn - 2) : (int)strlen(L),
                use_hdr ? hdr : L, g->opt->separate_weights ? "_weights.c" : ".c");
  dy_buf_printf(out,
                "/* for a firmware budget: RAM is the arena the caller provides, plus\n"
                " * the stack %s_run needs (%s_STACK_BYTES, measured by dy2stc compile\n"
                " * with the C compiler; --max-ram checks both), flash the weights (code\n"
                " * and the small tables below come on top: see arm-none-eabi-size) */\n"
                "#define %s_RAM_BYTES %s_ARENA_BYTES\n"
                "#define %s_FLASH_BYTES %s_WEIGHT_BYTES\n"
                "/* %s_STACK_BYTES: not measured */\n",
                L, U, U, U, U, U, U);
  if (g->state_bytes > 0)
    dy_buf_printf(out,
                  "#define %s_STATE_BYTES %lld /* parameters and optimizer state, kept */\n"
                  "#define %s_STATE_ALIGN 64\n"
                  "#define %s_NUM_STATE %d\n",
                  U, (long long)g->state_bytes, U, U, cg_num_state(g));
  if (cg_train_lr_feed(g) >= 0)
    dy_buf_printf(out, "#define %s_N_DROPOUT_SEEDS %d\n", U, g->n_seeds);
  dy_buf_printf(out, "#define %s_NUM_INPUTS %d\n", U, p->n_feeds);
  dy_buf_printf(out, "#define %s_NUM_OUTPUTS %d\n\n", U, p->n_fetches);
}

/* NAME_status, NAME_tensor_info and the tables' declarations. */
static void put_types(cg_gen *g, dy_buf *out) {
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out,
                "typedef enum {\n"
                "  %s_OK = 0,\n"
                "  %s_ERR_BATCH = 1, /* batch < 1 or > %s_MAX_BATCH */\n"
                "  %s_ERR_ARG = 2,   /* a NULL buffer */\n"
                "  %s_ERR_INDEX = 3%s /* an index input out of range (gather) */\n",
                U, U, U, U, U, g->has_loop || g->n_named ? "," : " ");
  if (g->has_loop)
    dy_buf_printf(out, "  %s_ERR_LOOP = 4%s  /* a while loop would run more than its bound "
                  "of trips\n                     (%s_MAX_ITERATIONS unless the loop has "
                  "its own) */\n", U, g->n_named ? "," : " ", U);
  if (g->n_named)
    dy_buf_printf(out, "  %s_ERR_SHAPE = 5  /* a size symbol < 1 or above its bound, or an "
                  "input's\n                     dims not as the model's (%s_bind) */\n", U, U);
  dy_buf_printf(out, "} %s_status;\n\n", L);
  dy_buf_printf(out,
                "typedef struct {\n"
                "  const char *name;\n"
                "  int dtype; /* 0 f32, 1 i64, 2 bool, 3 i8, 4 u8, 5 i32 */\n"
                "  int rank;\n"
                "  int64_t shape[8]; /* -1 marks %s */\n"
                "} %s_tensor_info;\n\n",
                g->n_named ? "a dynamic dim, the batch or a size symbol (see _bind)"
                           : "the batch",
                L);
  dy_buf_printf(out, "extern const %s_tensor_info %s_inputs[];  /* %s_NUM_INPUTS */\n",
                L, L, U);
  dy_buf_printf(out, "extern const %s_tensor_info %s_outputs[]; /* %s_NUM_OUTPUTS */\n\n",
                L, L, U);
}

/* NAME_run (documented), NAME_run_v, and with size symbols NAME_bind and
 * NAME_output_shape. */
static void put_run_decls(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out, "/* Runs the model.\n");
  if (g->state_bytes > 0)
    dy_buf_printf(out,
                  " *   state  %s_STATE_BYTES bytes aligned to %s_STATE_ALIGN, set up by\n"
                  " *          %s_state_init; read and updated in place\n",
                  U, U, L);
  dy_buf_printf(out,
                " *   arena  %s_ARENA_BYTES bytes aligned to %s_ARENA_ALIGN; "
                "scratch only,\n"
                " *          nothing is kept in it between calls\n"
                " *   batch  ",
                U, U);
  if (g->dynamic)
    dy_buf_printf(out, "1..%s_MAX_BATCH, the size of every -1 dim\n", U);
  else
    dy_buf_puts(out, "ignored (no dim is dynamic)\n");
  for (int k = 0; k < g->n_named; k++) {
    char nm[DY_SYM_NAME_MAX + 8], up[DY_SYM_NAME_MAX + 8];
    if (cg_sym_rt(g, g->named[k]))
      dy_buf_printf(out, " *   %s_out  written: size symbol %s, a count found at run time\n"
                    " *          (0..%s_MAX_DIM_%s; above it %s_ERR_SHAPE, the count still\n"
                    " *          written); outputs of that size fill its first elements\n",
                    dy_cg_sym_cname(g->named[k], nm, sizeof nm), dy_sym_name(g->named[k]), U,
                    cg_sym_upper(g->named[k], up, sizeof up), U);
    else
      dy_buf_printf(out, " *   %-6s 1..%s_MAX_DIM_%s, size symbol %s (%s_ERR_SHAPE otherwise)\n",
                    dy_cg_sym_cname(g->named[k], nm, sizeof nm), U,
                    cg_sym_upper(g->named[k], up, sizeof up), dy_sym_name(g->named[k]), U);
  }
  dy_buf_puts(out, " * then one buffer per input (read) and per output "
                   "(written), C order,\n * not overlapping:\n");
  char ts[256];
  for (int i = 0; i < p->n_feeds + p->n_fetches; i++) {
    bool in = i < p->n_feeds;
    int v = in ? p->feeds[i] : p->fetches[i - p->n_feeds];
    dy_buf_printf(out, " *   %-12s %s %d  %s\n",
                  in ? g->param_in[i] : g->param_out[i - p->n_feeds],
                  in ? "input " : "output", in ? i : i - p->n_feeds,
                  dy_type_str(&p->vars[v]->type, ts, sizeof ts));
    const char *nm = p->vars[v]->name;
    size_t len = strlen(nm);
    if (in && len > 4 && strcmp(nm + len - 4, "@lod") == 0) /* a LoD input's offsets */
      dy_buf_printf(out, " *                the level-0 LoD offsets of input %.*s: sequence s is "
                    "its rows\n *                off[s] .. off[s+1]-1 (off[0] = 0, never "
                    "decreasing, the last\n *                = its rows; else the run fails)\n",
                    (int)(len - 4), nm);
  }
  if (g->n_named)
    dy_buf_printf(out, " * Returns %s_OK, %s_ERR_BATCH, %s_ERR_ARG, %s_ERR_INDEX, %s_ERR_SHAPE%s\n"
                  " * (outputs then undefined). */\n", U, U, U, U, U,
                  g->has_loop ? " or _ERR_LOOP" : "");
  else if (g->has_loop)
    dy_buf_printf(out, " * Returns %s_OK, %s_ERR_BATCH, %s_ERR_ARG, %s_ERR_INDEX or %s_ERR_LOOP\n"
                  " * (outputs then undefined). */\n", U, U, U, U, U);
  else
    dy_buf_printf(out, " * Returns %s_OK, %s_ERR_BATCH, %s_ERR_ARG or %s_ERR_INDEX (outputs\n"
                  " * then undefined). */\n", U, U, U, U);
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = cg_run_params(g, args);
  if (!cg_args_ok(args, n))
    out->oom = true;
  else {
    char *head = cg_xprintf("int %s_run", L);
    if (!head)
      out->oom = true;
    else
      cg_put_wrapped(out, "", head, args, n, ";\n\n");
    free(head);
  }
  cg_free_args(args, n);
  if (g->n_named) {
    dy_buf_printf(out,
                  "/* The same with dims[] = {batch, ...} (%s_NUM_DIMS, as %s_bind gives\n"
                  " * them) and inputs[i] / outputs[i] pointing at input / output i.",
                  U, L);
    if (g->rt_mask)
      dy_buf_printf(out, "\n * The run writes the dims of the size symbols a kernel sets: "
                    "%s_output_shape\n * at dims[] then gives the outputs' actual shapes.", L);
    dy_buf_printf(out,
                  " */\n"
                  "int %s_run_v(%svoid *arena, %sint64_t *dims, const void *const "
                  "*inputs,\n"
                  "%*svoid *const *outputs);\n\n",
                  L, g->state_bytes > 0 ? "void *state, " : "", g->rt_mask ? "" : "const ",
                  (int)(strlen(L) + 11), "");
    dy_buf_printf(out,
                  "/* The size symbols' values from the inputs' shapes: shapes[i] points at\n"
                  " * input i's dims (its RANK of them). dims[0] gets the batch, dims[1..] the\n"
                  " * symbols in the order of %s_DIM_NAMES. Each input dim must equal its\n"
                  " * size at those values and each symbol be within its bound: %s_OK,\n"
                  " * else %s_ERR_BATCH, %s_ERR_SHAPE or %s_ERR_ARG (a NULL pointer). */\n"
                  "int %s_bind(const int64_t *const shapes[], int64_t *dims);\n"
                  "/* Output i's shape at dims[] (%s_OUTPUT_<i>_RANK dims into shape). */\n"
                  "void %s_output_shape(int i, const int64_t *dims, int64_t *shape);\n\n",
                  U, U, U, U, U, L, U, L);
  } else {
    dy_buf_printf(out,
                  "/* The same with inputs[i] / outputs[i] pointing at input / "
                  "output i. */\n"
                  "int %s_run_v(%svoid *arena, int64_t batch, const void *const "
                  "*inputs,\n"
                  "%*svoid *const *outputs);\n\n",
                  L, g->state_bytes > 0 ? "void *state, " : "", (int)(strlen(L) + 11), "");
  }
}

void cg_emit_header(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *U = g->upper;
  cg_put_banner(g, out, "h");
  dy_buf_puts(out,
              " *\n"
              " * The API of the model: NAME_run() runs it on caller-provided "
              "buffers; the\n"
              " * macros give the arena size and each input's and output's "
              "shape (-1 marks\n"
              " * the batch, a run-time argument bounded by MAX_BATCH).\n"
              " */\n");
  dy_buf_printf(out, "#ifndef %s_H\n#define %s_H\n\n", U, U);
  dy_buf_puts(out, "#include <stddef.h>\n#include <stdint.h>\n\n");
  dy_buf_puts(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  put_sizes(g, out);
  for (int i = 0; i < p->n_feeds; i++) {
    put_io_macros(g, out, "INPUT", i, p->vars[p->feeds[i]]);
    dy_buf_putc(out, '\n');
  }
  for (int i = 0; i < p->n_fetches; i++) {
    put_io_macros(g, out, "OUTPUT", i, p->vars[p->fetches[i]]);
    dy_buf_putc(out, '\n');
  }
  put_types(g, out);
  put_run_decls(g, out);
  if (g->state_bytes > 0)
    cg_emit_state_decls(g, out);
  dy_buf_printf(out, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_H */\n", U);
}

dy_status dy_codegen_put_stack(dy_codegen_output *out, long long bytes, const char *how,
                               dy_error *err) {
  static const char mark[] = "_STACK_BYTES: not measured */\n";
  char *at = out->header ? strstr(out->header, mark) : NULL;
  char *line = at;
  while (line && line > out->header && line[-1] != '\n')
    line--;
  if (!at || strncmp(line, "/* ", 3) != 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "the header has no stack line");
  dy_buf b = {0};
  dy_buf_putn(&b, out->header, (size_t)(line - out->header));
  dy_buf_printf(&b, "#define %.*s_STACK_BYTES %lld /* worst case of the run, %s */\n",
                (int)(at - line - 3), line + 3, bytes, how);
  dy_buf_puts(&b, at + strlen(mark));
  if (b.oom) {
    dy_buf_free(&b);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  free(out->header);
  out->header = dy_buf_take(&b);
  return DY_OK;
}
