/* fuzz_onnx.c - the ONNX frontend (compiler/frontends/: dy_onnx_load):
 * the protobuf, the import of every node into a Program and the
 * verification the loader ends with.
 *
 * The input is a .onnx file, written to a private temporary directory
 * (the loader takes a path; external data is looked up beside it, where
 * there is none). A Program the loader returns must verify and print.
 */
#include <stdlib.h>

#include "dy_frontends.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = dy_fuzz_file("model.onnx", data, size);
  if (!path)
    return 0;
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_onnx_load(path, &p, &err);
  dy_fuzz_note("onnx", s ? err.msg : NULL);
  if (s != DY_OK)
    return 0;
  dy_error verr = {0};
  if (dy_verify(p, &verr) != DY_OK)
    dy_fuzz_fail("the ONNX loader returned a Program that does not verify", verr.msg);
  free(dy_program_to_text(p));
  dy_program_free(p);
  return 0;
}
