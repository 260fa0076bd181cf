/* pipeline.c - the compile pipeline.
 *
 * The pass list is short and explicit, one line per pass, and the verifier
 * runs on entry and after every step:
 *
 *   verify      the Program as loaded
 *   memplan     arena offsets for every intermediate (passes/memplan.c)
 *   codegen     C text (codegen/)
 *
 * Optimising passes (fold, fuse, DCE) slot in before memplan.
 */
#include <stdlib.h>

#include "dy_compiler.h"

dy_compile_options dy_compile_options_default(void) {
  return (dy_compile_options){.name = "model", .max_batch = 64};
}

dy_status dy_compile_program(dy_program *p, const dy_compile_options *o,
                             dy_codegen_output *out, dy_compile_report *rep,
                             dy_error *err) {
  dy_status s;
  dy_compile_report local;
  if (!rep)
    rep = &local;
  if (o->max_batch < 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "--max-batch must be at least 1, got %lld",
                        (long long)o->max_batch);
  if ((s = dy_verify(p, err)))
    return dy_error_prefix(err, "IR invalid on input");
  rep->ops_before = dy_program_count_ops(p);
  rep->ops_after = dy_program_count_ops(p);
  if ((s = dy_memplan(p, o->max_batch, &rep->mem, err)))
    return s;
  dy_codegen_options cg = {
      .name = o->name,
      .max_batch = o->max_batch,
      .arena_bytes = rep->mem.arena_bytes,
      .emit_main = o->emit_main,
      .command_line = o->command_line,
      .source = o->source,
  };
  return dy_codegen(p, &cg, out, err);
}
