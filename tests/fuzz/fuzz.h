/* fuzz.h - what the fuzz targets of tests/fuzz/ share.
 *
 * Each fuzz_NAME.c defines LLVMFuzzerTestOneInput (libFuzzer's entry
 * point) over one reader or stage of dy2stc. It is linked two ways:
 *   fuzz_NAME   with -fsanitize=fuzzer (libFuzzer's main; clang builds
 *               with DY_FUZZ on, see tests/fuzz/CMakeLists.txt)
 *   replay_NAME with replay_main.c: runs the function once per file of
 *               the directories and files on its command line (every
 *               build, gcc too: the regression corpus is a ctest)
 * A target returns 0 whatever the input; a bug shows as a crash, a
 * sanitizer report, a leak, or an abort() where the target checks a
 * property that must hold (a round trip, a verified Program staying
 * valid through the passes).
 */
#ifndef DY_FUZZ_H
#define DY_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "dy_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A path in this process's private temporary directory (made on first
 * use, removed at exit) holding exactly data[0..size), for the readers
 * that take a path (.onnx, .npy). The name is the same on every call
 * with the same leaf; NULL when the file cannot be written. */
const char *dy_fuzz_file(const char *leaf, const uint8_t *data, size_t size);
/* data as text (a NUL-terminated copy) through dy_program_parse: the
 * Program (caller frees), or NULL when it does not parse. */
dy_program *dy_fuzz_parse(const uint8_t *data, size_t size);
/* With DY_FUZZ_VERBOSE set in the environment, print "stage: message" on
 * stderr (what became of an input, when triaging a corpus with replay_*);
 * else nothing. msg NULL prints "ok". */
void dy_fuzz_note(const char *stage, const char *msg);
/* A pair input: a u32 (little-endian) length n, n bytes of *a, the rest
 * *b (fuzz_pdmodel.c, fuzz_pir.c); false when it is too short for that. */
bool dy_fuzz_pair(const uint8_t *data, size_t size, const uint8_t **a, size_t *a_len,
                  const uint8_t **b, size_t *b_len);
/* abort() with a one-line message on stderr: a property the target checks
 * does not hold (libFuzzer then saves the input as a crash). */
void dy_fuzz_fail(const char *what, const char *detail);

#endif
