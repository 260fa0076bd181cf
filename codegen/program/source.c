/* source.c - floor 3, at its top: dy_codegen, a memory-planned Program to
 * NAME.h, NAME.c and main.c.
 *
 * The generated NAME.c reads top to bottom like the Program:
 *
 *   header comment      dy2stc version, command line, model, sizes
 *   includes            NAME.h, <stddef.h>, <stdint.h>: nothing else
 *                       (a --localize build, dy_codegen_options.debug_dump,
 *                       then declares NAME_debug_dump, which the caller
 *                       defines)
 *   math                the dy_expf, dy_tanhf, ... the kernels call, as
 *                       static inline functions (emit_mathlib.c; no libm)
 *   weights             static const arrays, one per persistable var read
 *                       as it is, and the packed copies GEMM and conv
 *                       kernels read instead (w_<name>_p16, _p12; the
 *                       layouts are emit_gemm.c's): a weight only read
 *                       packed is emitted only packed. With
 *                       separate_weights (the CLI's way) all of them, of
 *                       every dtype, are in `extern const union
 *                       NAME_weights_data NAME_weights`, a type complete
 *                       only in NAME_weights.c (weights_file.c), and each
 *                       w_<name> a macro naming its place there
 *   SIMD helpers        when a kernel uses them: emit_simd.c's dy_vf /
 *                       dy_f16 helpers, emit_gemm.c's micro-kernels, and
 *                       with --threads, dy_parallel
 *   kernels             one static function per op, in op order, each under
 *                       a comment naming the op, its source line and types;
 *                       bodies come from the emitters (emit_ops.c); a kernel
 *                       that needs scratch (dy_codegen_scratch_bytes) takes
 *                       `float *restrict scratch`, placed by the plan
 *                       (dy_codegen_options.scratch_offsets) or, without
 *                       one, after the plan's arena
 *   NAME_run            argument checks, the arena layout as a comment, one
 *                       call per kernel (a cond op as C if/else, a while as
 *                       a guarded for (;;) around its blocks' calls: see
 *                       "control flow" below), copies for odd outputs; in a
 *                       --localize build a NAME_debug_dump call after each
 *                       op of block 0 with each of its results
 *   NAME_run_v          the same behind arrays of pointers
 *   NAME_state_init ... with state: its initial values into the caller's
 *                       block, NAME_state_tensor, NAME_train_step and
 *                       NAME_dropout_seeds (a training step's dropout
 *                       seeds: u64s after the state tensors, at
 *                       NAME_SEEDS_OFF, which its dropout kernels take as
 *                       `uint64_t seed`; see seed_slots)
 *   NAME_inputs/outputs descriptor tables
 *
 * Where a var lives ("storage"), decided once per var:
 *   feed         the const input pointer argument of NAME_run
 *   persistable  its w_<name> array (one holding an infinity or a NaN: a
 *                union of its bit patterns, read as w_<name>.f)
 *   state        a persistable var an in-place op (DY_OPF_INPLACE: an
 *                optimizer's update) writes: (T *)(st + NAME_SOFF_<name>),
 *                st being the caller's state block; w_<name> then holds
 *                only its initial value, which NAME_state_init copies
 *   fetch        the output pointer argument (a fetch that is also a feed or
 *                a weight is copied into it at the end of NAME_run)
 *   alias_of     the storage of the var it aliases (followed to the end)
 *   otherwise    (T *)(mem + mem_offset), mem being the caller's arena
 * A view op (reshape, flatten) whose output aliases its input emits no
 * kernel; one whose output is a fetch always copies into the output pointer,
 * so a fetch never depends on how long the arena keeps its source.
 *
 * Kernels that can fail (ops flagged DY_OPF_CAN_FAIL, such as gather on an
 * index out of range) return int: 0, or nonzero to stop NAME_run, which
 * then returns NAME_ERR_INDEX (outputs undefined). Their emitters may write
 * `return 1;`; the final `return 0;` is added here.
 *
 * Control flow: kernels of ops in sub-blocks are ordinary kernels, emitted
 * in execution order (a control op's blocks follow it). In NAME_run a cond
 * is `if (pred[0]) { then calls; outputs = results } else { ... }`; a while
 * copies its initial values into its outputs (the carried values), then
 * loops: params = carried, condition calls, `break` on false, `if
 * (++kN_trips > bound) return NAME_ERR_LOOP;` (the op's max_iterations, or
 * NAME_MAX_ITERATIONS from dy_codegen_options.max_iterations), params =
 * carried, body calls, carried = results. A copy between buffers the plan
 * put on the same bytes is left out (memplan.c shares them where safe).
 *
 * Kernels take `restrict` pointers, so an op's output must not share memory
 * with its inputs: the plan is checked for that, and for offsets that fall
 * outside the arena or are misaligned for the dtype.
 *
 * Nothing printed depends on pointers, time or hash order, so the same
 * Program and options give the same bytes.
 *
 * The steps, each a file of program/: the ops in execution order and the
 * analysis (analyse.c, storage.c), the names (names.c), packed weights,
 * scratch, arena and state offsets (plan.c), then NAME.h (header.c, with
 * state.c), and NAME.c: its banner and includes (here), the math functions
 * its kernels name (emit_mathlib.c, put in front of the rest), the weights
 * (weights.c), the preludes the kernels use, the kernels (kernel.c), the
 * layouts and NAME_run (run.c, blocks.c), NAME_bind (bind.c), the state's
 * functions (state.c) and the tables (bind.c); main.c (main_c.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"

void dy_codegen_output_free(dy_codegen_output *out) {
  if (!out)
    return;
  free(out->header);
  free(out->source);
  free(out->main_c);
  free(out->weights);
  free(out->name);
  *out = (dy_codegen_output){0};
}

/* NAME.c after its includes: weights, kernels, entry points, tables. */
static dy_status emit_source_rest(cg_gen *g, dy_buf *out) {
  dy_status s = cg_emit_weights(g, out);
  if (s != DY_OK)
    return s;
  /* the kernels first, to learn which helpers they use */
  dy_buf kernels = {0};
  for (int oi = 0; oi < g->n_ops && s == DY_OK; oi++)
    if (g->kernel[oi])
      s = cg_emit_kernel(g, oi, &kernels);
  if (s != DY_OK || kernels.oom) {
    dy_buf_free(&kernels);
    return s != DY_OK ? s : dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  if (g->uses & (DY_USES_SIMD | DY_USES_GEMM))
    dy_cg_simd_prelude(out);
  /* an activation on a GEMM's stored tile: its flags name DY_GEMM_ACT */
  if (kernels.s && strstr(kernels.s, "DY_GEMM_ACT("))
    g->uses |= DY_USES_GEMM_TILE_ACT;
  if (g->uses & DY_USES_GEMM)
    dy_cg_gemm_prelude(out, g->opt->plain_kernels, (g->uses & DY_USES_PACK_A) != 0, g->uses);
  if (g->uses & DY_USES_THREADS)
    dy_cg_thread_prelude(out, g->opt->threads);
  if (g->uses & DY_USES_QFIXED)
    dy_cg_qfixed_prelude(out);
  if (g->n_ops)
    dy_buf_puts(out, "/* ---- kernels, in execution order ---- */\n\n");
  if (kernels.s)
    dy_buf_puts(out, kernels.s);
  dy_buf_free(&kernels);
  dy_buf_puts(out, "/* ---- entry points ---- */\n\n");
  cg_emit_run(g, out);
  if (g->n_named && (s = cg_emit_bind(g, out)))
    return s;
  if (g->state_bytes > 0)
    cg_emit_state_defs(g, out);
  cg_emit_tables(g, out);
  return DY_OK;
}

static dy_status emit_source(cg_gen *g, dy_buf *out) {
  cg_put_banner(g, out, "c");
  if (g->opt->ops_before > 0)
    dy_buf_printf(out, " * ops:     %d (%d before passes)\n", g->n_ops,
                  g->opt->ops_before);
  else
    dy_buf_printf(out, " * ops:     %d\n", g->n_ops);
  dy_buf_printf(out, " * arena:   %lld bytes at max batch %lld", (long long)g->arena_bytes,
                (long long)g->bounds[0]);
  cg_put_named_bounds(g, out, " ");
  if (g->opt->arena_lower_bound > 0)
    dy_buf_printf(out, " (lower bound %lld)", (long long)g->opt->arena_lower_bound);
  dy_buf_printf(out,
                "\n"
                " * weights: %lld bytes\n"
                " */\n",
                (long long)g->weight_bytes);
  if (g->opt->header)
    dy_buf_printf(out, "#include \"%s\"\n\n", g->opt->header);
  else
    dy_buf_printf(out, "#include \"%s.h\"\n\n", g->lower);
  dy_buf_puts(out, "#include <stddef.h>\n#include <stdint.h>\n\n");
  if (g->opt->debug_dump)
    dy_buf_printf(out,
                  "/* a --localize build: NAME_run hands every op's result to this */\n"
                  "void %s_debug_dump(int op, const char *var, const void *data, int64_t n,\n"
                  "%*sint dtype, int64_t trip);\n\n",
                  g->lower, (int)strlen(g->lower) + 16, "");
  /* The rest is written aside first: the math functions it names
   * (emit_mathlib.c) go in front of it. */
  dy_buf rest = {0};
  dy_status s = emit_source_rest(g, &rest);
  if (s == DY_OK && rest.oom)
    s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (s == DY_OK) {
    dy_mathlib_emit(out, rest.s);
    if (rest.s)
      dy_buf_putn(out, rest.s, rest.len);
  }
  dy_buf_free(&rest);
  return s;
}

static void gen_free(cg_gen *g) {
  free(g->blob);
  if (g->param_in)
    for (int i = 0; i < g->p->n_feeds; i++)
      free(g->param_in[i]);
  if (g->param_out)
    for (int i = 0; i < g->p->n_fetches; i++)
      free(g->param_out[i]);
  if (g->weight)
    for (int i = 0; i < g->p->n_vars; i++)
      free(g->weight[i]);
  free(g->param_in);
  free(g->param_out);
  free(g->param);
  free(g->weight);
  if (g->off)
    for (int i = 0; i < g->p->n_vars; i++)
      free(g->off[i]);
  if (g->scratch_name)
    for (int oi = 0; oi < g->n_ops; oi++)
      free(g->scratch_name[oi]);
  if (g->soff)
    for (int i = 0; i < g->p->n_vars; i++)
      free(g->soff[i]);
  free(g->soff);
  free(g->state_off);
  free(g->seed_slot);
  free(g->seed_init);
  free(g->state);
  free(g->bits);
  free(g->off);
  free(g->scratch_name);
  free(g->used);
  free(g->def);
  free(g->st);
  free(g->kernel);
  free(g->in_place);
  for (int i = 0; i < g->n_packs; i++)
    free(g->packs[i].name);
  free(g->packs);
  free(g->unpacked_use);
  free(g->scratch);
  free(g->scratch_off);
  free(g->lower);
  free(g->upper);
  free(g->ops);
  free(g->slot);
  free(g->oi_of_slot);
}

/* The generator's arrays for p (per var, per op of every block) and what
 * is known of each var before the analysis: state (a persistable var an
 * in-place op writes), bits (an f32 weight holding an infinity or a NaN). */
static dy_status gen_init(cg_gen *g, int total) {
  const dy_program *p = g->p;
  const dy_codegen_options *opt = g->opt;
  size_t nv = (size_t)p->n_vars + 1, no = (size_t)total + 1;
  g->ops = calloc(no, sizeof *g->ops);
  g->slot = calloc(no, sizeof *g->slot);
  g->oi_of_slot = calloc(no, sizeof *g->oi_of_slot);
  g->lower = cg_xstrdup(opt->name);
  char up[300];
  g->upper = cg_xstrdup(cg_macro_prefix(opt->name, up, sizeof up));
  g->param = calloc(nv, sizeof *g->param);
  g->param_in = calloc((size_t)p->n_feeds + 1, sizeof *g->param_in);
  g->param_out = calloc((size_t)p->n_fetches + 1, sizeof *g->param_out);
  g->weight = calloc(nv, sizeof *g->weight);
  g->off = calloc(nv, sizeof *g->off);
  g->soff = calloc(nv, sizeof *g->soff);
  g->state_off = calloc(nv, sizeof *g->state_off);
  g->seed_slot = calloc(no, sizeof *g->seed_slot);
  g->state = calloc(nv, sizeof *g->state);
  g->bits = calloc(nv, sizeof *g->bits);
  g->scratch_name = calloc(no, sizeof *g->scratch_name);
  g->used = calloc(nv, sizeof *g->used);
  g->def = calloc(nv, sizeof *g->def);
  g->st = calloc(nv, sizeof *g->st);
  g->kernel = calloc(no, sizeof *g->kernel);
  g->in_place = calloc(no, sizeof *g->in_place);
  g->unpacked_use = calloc(nv, sizeof *g->unpacked_use);
  g->scratch = calloc(no, sizeof *g->scratch);
  g->scratch_off = calloc(no, sizeof *g->scratch_off);
  if (!g->ops || !g->slot || !g->oi_of_slot || !g->lower || !g->upper || !g->param ||
      !g->param_in || !g->param_out || !g->weight || !g->off || !g->scratch_name || !g->used ||
      !g->def || !g->st || !g->kernel || !g->in_place || !g->unpacked_use || !g->scratch ||
      !g->scratch_off || !g->soff || !g->state_off || !g->seed_slot || !g->state || !g->bits)
    return dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->n_vars; i++) {
    const dy_var *v = p->vars[i];
    g->state[i] = v->persistable && dy_program_in_place_writer(p, i) != NULL;
    for (int64_t j = 0; !opt->separate_weights && v->persistable && v->data && v->type.dtype == DY_F32 &&
                        j < dy_type_numel(&v->type) && !g->bits[i]; j++) {
      float x;
      memcpy(&x, (const char *)v->data + 4 * j, 4);
      g->bits[i] = !(x - x == 0.0f); /* an infinity or a NaN */
    }
  }
  for (int i = 0; i < total; i++)
    g->oi_of_slot[i] = g->seed_slot[i] = -1;
  return DY_OK;
}

/* NAME.h, NAME.c and main.c of the analysed Program into out. */
static dy_status emit_files(cg_gen *g, dy_codegen_output *out) {
  const dy_program *p = g->p;
  const dy_codegen_options *opt = g->opt;
  dy_error *err = g->err;
  dy_status s;
  dy_buf h = {0}, c = {0}, m = {0};
  cg_emit_header(g, &h);
  s = emit_source(g, &c);
  if (s == DY_OK && opt->emit_main)
    s = dy_codegen_main_c(p, opt, &m, err);
  if (s == DY_OK) {
    bool want_main = opt->emit_main;
    out->header = dy_buf_take(&h);
    out->source = dy_buf_take(&c);
    out->main_c = want_main ? dy_buf_take(&m) : NULL;
    out->weight_bytes = g->weight_bytes;
    out->arena_bytes = g->arena_bytes;
    out->state_bytes = g->state_bytes;
    if (opt->separate_weights) {
      out->weights = g->blob ? g->blob : calloc(1, sizeof *out->weights);
      out->n_weight_words = g->n_blob > 0 ? g->n_blob : 1;
      out->name = cg_xstrdup(opt->name);
      g->blob = NULL;
    }
    if (!out->header || !out->source || (want_main && !out->main_c) ||
        (opt->separate_weights && (!out->weights || !out->name))) {
      dy_codegen_output_free(out);
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
  }
  dy_buf_free(&h);
  dy_buf_free(&c);
  dy_buf_free(&m);
  return s;
}

dy_status dy_codegen(const dy_program *p, const dy_codegen_options *opt,
                     dy_codegen_output *out, dy_error *err) {
  if (!p || !opt || !out)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "dy_codegen: NULL argument");
  *out = (dy_codegen_output){0};
  if (!cg_is_identifier(opt->name))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "model name '%s' is not a C identifier",
                        opt->name ? opt->name : "(null)");
  if (dy_program_sym_bound(p, 0) > DY_MAX_BATCH)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "max batch %lld is above %lld",
                        (long long)dy_program_sym_bound(p, 0), (long long)DY_MAX_BATCH);
  if (opt->header && strpbrk(opt->header, "\"\\\n"))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "header file name '%s' has a '\"', '\\' or newline, which an "
                        "#include cannot name; choose another output name", opt->header);
  if (strlen(opt->name) > 200)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "model name '%.40s...' is longer than 200 characters", opt->name);
  if (opt->arena_bytes < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "arena size %lld is negative", (long long)opt->arena_bytes);
  if (opt->max_iterations < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "max iterations %lld is negative", (long long)opt->max_iterations);
  if (p->n_blocks < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "program has no block");
  cg_gen g = {.p = p, .opt = opt, .err = err,
              .max_iterations = opt->max_iterations > 0 ? opt->max_iterations
                                                        : DY_WHILE_MAX_ITERATIONS};
  int total = dy_program_count_ops(p);
  dy_status s = gen_init(&g, total);
  if (s == DY_OK)
    s = cg_order_ops(&g, 0, 0);
  if (s == DY_OK && g.n_ops != total)
    s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                     "%d of the Program's %d ops are in blocks no control op owns",
                     total - g.n_ops, total);
  if (s == DY_OK && (s = cg_analyse(&g)) == DY_OK && (s = cg_make_names(&g)) == DY_OK &&
      (s = cg_plan_packs_and_scratch(&g)) == DY_OK && (s = cg_make_offset_names(&g)) == DY_OK) {
    g.weight_bytes = cg_weight_bytes(&g);
    s = emit_files(&g, out);
  }
  gen_free(&g);
  return s;
}
