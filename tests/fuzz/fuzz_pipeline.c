/* fuzz_pipeline.c - a Program that verifies must never crash a pass: the
 * verifier, the whole pass pipeline (verified after each pass), the
 * memory plan and the emitter to strings (compiler/driver/compile.c:
 * dy_compile_program), on Programs read from text (ir/program/parse.c).
 *
 * The input is text in dy_program_print's form; what does not parse or
 * verify is skipped (a Program that fails only on its types is first
 * retyped by inference, so mutations of attributes and shapes go on). Errors from the passes, the plan or the emitter are
 * fine (a one-line message), but a pass leaving the Program invalid is a
 * bug. An odd-sized input compiles with --threads 2 (the split kernels
 * and their scratch), an even-sized one single-threaded.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "fuzz.h"

/* Give every op output (not a feed or persistable var) the type inference
 * computes, block by block in schedule order, a control op's blocks
 * before it: a mutated attribute or input shape then makes a Program that
 * may verify instead of one that fails invariant 7. Only called once
 * every structural invariant holds (the verifier stopped at 7 or 13). */
static void retype_block(dy_program *p, int b, int depth) {
  if (depth > 16)
    return;
  dy_block *blk = p->blocks[b];
  for (int i = 0; i < blk->n_ops; i++) {
    dy_op *op = blk->ops[i];
    int sub[2], n_sub = dy_op_sub_blocks(op, sub);
    for (int k = 0; k < n_sub; k++)
      if (sub[k] > b && sub[k] < p->n_blocks)
        retype_block(p, sub[k], depth + 1);
    dy_type in[64], out[16];
    if (op->n_inputs > 64 || op->n_outputs > 16)
      continue;
    for (int k = 0; k < op->n_inputs; k++)
      in[k] = p->vars[op->inputs[k]]->type;
    dy_error e = {0};
    if (dy_infer_in(p, op, in, op->n_inputs, out, &e) != DY_OK)
      continue;
    for (int k = 0; k < op->n_outputs; k++) {
      dy_var *v = p->vars[op->outputs[k]];
      if (!v->persistable && v->feed_index < 0)
        v->type = out[k];
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dy_program *p = dy_fuzz_parse(data, size);
  if (!p)
    return 0;
  dy_error err = {0};
  dy_status v = dy_verify(p, &err);
  for (int round = 0; v != DY_OK && round < 3 &&
                      (strncmp(err.msg, "invariant 7 ", 12) == 0 ||
                       strncmp(err.msg, "invariant 13 ", 13) == 0);
       round++) {
    retype_block(p, 0, 0);
    v = dy_verify(p, &err);
  }
  dy_fuzz_note("verify", v ? err.msg : NULL);
  if (v != DY_OK) {
    dy_program_free(p);
    return 0;
  }
  dy_compile_options o = dy_compile_options_default();
  o.emit_main = !dy_program_is_training(p); /* a training step: no inference main */
  o.threads = size % 2 ? 2 : 1;
  o.passes.verify_each = 1;
  dy_codegen_output out = {0};
  dy_compile_report rep;
  dy_status s = dy_program_bound_sym(p, "batch", 3, &err);
  if (!s)
    s = dy_compile_program(p, &o, &out, &rep, &err);
  dy_fuzz_note("compile", s ? err.msg : NULL);
  if (s != DY_OK) {
    if (strstr(err.msg, "IR invalid after pass"))
      dy_fuzz_fail("a pass broke a verified Program", err.msg);
  } else if (!out.header || !out.source || (o.emit_main && !out.main_c)) {
    dy_fuzz_fail("dy_compile_program succeeded without its sources", "");
  }
  dy_codegen_output_free(&out);
  dy_program_free(p);
  return 0;
}
