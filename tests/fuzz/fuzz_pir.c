/* fuzz_pir.c - Paddle 3 PIR programs (compiler/frontends/:
 * dy_paddle_load_pir_mem): the JSON reader (common/fe_json.c), the
 * translation into a ProgramDesc (paddle/paddle_pir.c), its import with the
 * params stream, and the Program's verification.
 *
 * The input is a pair as fuzz_pdmodel.c's: a u32 (little-endian) length
 * n, n bytes of inference.json, then the .pdiparams bytes (empty: the
 * program alone, imported with params_optional); tests/fuzz/make_corpus.c
 * writes the seeds from ../shared/testdata-paddle-next. A Program the
 * importer returns with its params must verify and print.
 */
#include <stdlib.h>

#include "dy_frontends.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *json, *params;
  size_t n, params_len;
  if (!dy_fuzz_pair(data, size, &json, &n, &params, &params_len))
    return 0;
  dy_paddle_options o = {.params_optional = params_len == 0};
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_paddle_load_pir_mem(json, n, params_len ? params : NULL, params_len,
                                       "fuzz.json", &o, &p, &err);
  dy_fuzz_note("pir", s ? err.msg : NULL);
  if (s != DY_OK)
    return 0;
  dy_error verr = {0};
  if (params_len && dy_verify(p, &verr) != DY_OK)
    dy_fuzz_fail("the PIR importer returned a Program that does not verify", verr.msg);
  free(dy_program_to_text(p));
  dy_program_free(p);
  return 0;
}
