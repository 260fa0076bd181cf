/* fuzz_pdmodel.c - the PaddlePaddle frontend (compiler/frontends/:
 * dy_paddle_load_mem): the ProgramDesc protobuf, the combined params
 * stream, the import of every op into a Program and its verification.
 *
 * The input is a pair: a u32 (little-endian) length n, n bytes of
 * .pdmodel, then the .pdiparams bytes (empty for a model without
 * persistable vars); tests/fuzz/make_corpus.c writes the seeds so from
 * ../shared/testdata-paddle. A Program the importer returns must verify
 * and print.
 */
#include <stdlib.h>

#include "dy_frontends.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *model, *params;
  size_t n, params_len;
  if (!dy_fuzz_pair(data, size, &model, &n, &params, &params_len))
    return 0;
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_paddle_load_mem(model, n, params_len ? params : NULL, params_len,
                                   "fuzz.pdmodel", NULL, &p, &err);
  dy_fuzz_note("pdmodel", s ? err.msg : NULL);
  if (s != DY_OK)
    return 0;
  dy_error verr = {0};
  if (dy_verify(p, &verr) != DY_OK)
    dy_fuzz_fail("the Paddle importer returned a Program that does not verify", verr.msg);
  free(dy_program_to_text(p));
  dy_program_free(p);
  return 0;
}
