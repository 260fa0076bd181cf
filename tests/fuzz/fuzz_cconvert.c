/* fuzz_cconvert.c - the C frontend's source converter (compiler/cfront/
 * cconvert*.c: dy_cconvert, what `dy2stc convert NET.c` prints and
 * `dy2stc compile NET.c` traces): libclang parses the input as C, the
 * tensor if/while/for of its DY_TO_STATIC function are rewritten pass by
 * pass.
 *
 * The input is a C source file (the seeds: samples/static/NAME.c and
 * tests/convert/NAME.c, copied by make_corpus). A conversion that succeeds
 * must give text; a failure must be a clean error. Source errors are printed
 * by the converter as `file:line:col: error:` lines; that is its normal
 * output, not a finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfront.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024 || memchr(data, 0, size)) /* a C file has no NUL byte */
    return 0;
  static dy_cf_paths paths;
  static int have_paths = -1;
  dy_error err = {0};
  if (have_paths < 0)
    have_paths = dy_cfront_find_paths(&paths, &err) == DY_OK;
  if (!have_paths)
    return 0;
  const char *file = dy_fuzz_file("net.c", data, size);
  if (!file)
    return 0;
  dy_cfront_options o = {.file = file};
  char *out = NULL;
  int n = 0;
  bool shown = false;
  dy_status s = dy_cconvert(&o, &paths, false, &out, &n, &shown, &err);
  dy_fuzz_note("cconvert", s ? err.msg : NULL);
  if (s != DY_OK)
    return 0;
  if (!out)
    dy_fuzz_fail("dy_cconvert succeeded without text", NULL);
  free(out);
  return 0;
}
