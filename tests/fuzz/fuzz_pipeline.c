/* fuzz_pipeline.c - a Program that verifies must never crash a pass: the
 * verifier, the whole pass pipeline (verified after each pass), the
 * memory plan and the emitter to strings (compiler/compile.c:
 * dy_compile_program), on Programs read from text (ir/parse.c).
 *
 * The input is text in dy_program_print's form; what does not parse or
 * verify is skipped. Errors from the passes, the plan or the emitter are
 * fine (a one-line message), but a pass leaving the Program invalid is a
 * bug. An odd-sized input compiles with --threads 2 (the split kernels
 * and their scratch), an even-sized one single-threaded.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = dy_fuzz_text(data, size);
  if (!src)
    return 0;
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_program_parse(src, &p, &err);
  free(src);
  if (s != DY_OK)
    return 0;
  if (dy_verify(p, &err) != DY_OK) {
    dy_program_free(p);
    return 0;
  }
  dy_compile_options o = dy_compile_options_default();
  o.max_batch = 3;
  o.emit_main = !dy_program_is_training(p); /* a training step: no inference main */
  o.threads = size % 2 ? 2 : 1;
  o.passes.verify_each = 1;
  dy_codegen_output out = {0};
  dy_compile_report rep;
  if (dy_compile_program(p, &o, &out, &rep, &err) != DY_OK) {
    if (strstr(err.msg, "IR invalid after pass"))
      dy_fuzz_fail("a pass broke a verified Program", err.msg);
  } else if (!out.header || !out.source || (o.emit_main && !out.main_c)) {
    dy_fuzz_fail("dy_compile_program succeeded without its sources", "");
  }
  dy_codegen_output_free(&out);
  dy_program_free(p);
  return 0;
}
