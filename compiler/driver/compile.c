/* compile.c - the compile pipeline: verify, the pass pipeline, the memory
 * plan (with each kernel's scratch) and the C emitter, checking the
 * --max-ram / --max-flash bounds on the way.
 */
#include <stdlib.h>

#include "dy_driver.h"

dy_compile_options dy_compile_options_default(void) {
  return (dy_compile_options){.name = "model",
                              .passes = {.opt_level = 2, .verify_each = -1}};
}

dy_status dy_compile_program(dy_program *p, const dy_compile_options *o,
                             dy_codegen_output *out, dy_compile_report *rep,
                             dy_error *err) {
  dy_status s;
  dy_compile_report local;
  if (!rep)
    rep = &local;
  if (o->max_iterations < 0)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--max-iterations must be positive, got %lld",
                        (long long)o->max_iterations);
  rep->ops_before = dy_program_count_ops(p);
  dy_pass_options po = o->passes;
  if (!po.progress) {
    po.progress = o->progress;
    po.progress_ctx = o->progress_ctx;
  }
  if ((s = dy_run_pipeline(p, &po, err)))
    return s;
  rep->ops_after = dy_program_count_ops(p);
  if (o->progress)
    o->progress(o->progress_ctx, "plan", 0, 0);
  /* each kernel's scratch, computed once per op (the emitter table's
   * fact), which the plan places (one offset per op) and codegen reads */
  size_t n_ops = (size_t)dy_program_count_ops(p) + 1;
  int64_t *scratch = malloc(sizeof *scratch * 2 * n_ops);
  if (!scratch)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int64_t *scratch_bytes = scratch + n_ops;
  dy_codegen_scratch_sizes(p, o->threads, scratch_bytes);
  if ((s = dy_memplan_scratch(p, scratch_bytes, scratch, &rep->mem, err))) {
    free(scratch);
    return s;
  }
  dy_codegen_options cg = {
      .name = o->name,
      .arena_bytes = rep->mem.arena_bytes,
      .emit_main = o->emit_main,
      .trainer = o->trainer,
      .command_line = o->command_line,
      .source = o->source,
      .header = o->header,
      .ops_before = rep->ops_before,
      .arena_lower_bound = rep->mem.lower_bound,
      .scratch_bytes = scratch_bytes,
      .scratch_offsets = scratch,
      .threads = o->threads,
      .max_iterations = o->max_iterations,
      .separate_weights = true, /* NAME_weights.c, or a blob: fast to build */
      .plain_kernels = o->plain_kernels,
      .no_pack_a = o->no_pack_a,
      .debug_dump = o->debug_dump,
  };
  if (o->max_ram > 0 && rep->mem.arena_bytes > o->max_ram) {
    free(scratch);
    return dy_error_set(err, DY_STATUS_LIMIT,
                        "the arena needs %lld bytes at batch %lld, over --max-ram %lld",
                        (long long)rep->mem.arena_bytes, (long long)dy_program_sym_bound(p, 0),
                        (long long)o->max_ram);
  }
  if (o->progress)
    o->progress(o->progress_ctx, "codegen", 0, 0);
  s = dy_codegen(p, &cg, out, err);
  free(scratch);
  if (s)
    return s;
  /* the header's figures: RAM is the arena (the plan's, or more when
   * kernels add scratch) plus a training step's state, flash the const
   * weight arrays (code and the small I/O tables come on top; only the
   * target's size tool knows) */
  int64_t ram = out->arena_bytes + out->state_bytes, flash = out->weight_bytes;
  rep->state_bytes = out->state_bytes;
  if (o->max_ram > 0 && ram > o->max_ram) {
    int64_t arena = out->arena_bytes, state = out->state_bytes;
    dy_codegen_output_free(out);
    if (state)
      return dy_error_set(err, DY_STATUS_LIMIT,
                          "the arena (%lld bytes at batch %lld) and the state (%lld bytes) "
                          "need %lld bytes, over --max-ram %lld",
                          (long long)arena, (long long)dy_program_sym_bound(p, 0), (long long)state,
                          (long long)ram, (long long)o->max_ram);
    return dy_error_set(err, DY_STATUS_LIMIT,
                        "the arena needs %lld bytes at batch %lld, over --max-ram %lld",
                        (long long)ram, (long long)dy_program_sym_bound(p, 0), (long long)o->max_ram);
  }
  if (o->max_flash > 0 && flash > o->max_flash) {
    dy_codegen_output_free(out);
    return dy_error_set(err, DY_STATUS_LIMIT,
                        "the weights need %lld bytes of flash, over --max-flash %lld",
                        (long long)flash, (long long)o->max_flash);
  }
  return DY_OK;
}
