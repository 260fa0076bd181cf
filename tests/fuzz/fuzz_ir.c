/* fuzz_ir.c - the text IR parser (ir/program/parse.c: dy_program_parse), then the
 * verifier and the printer.
 *
 * The input is text in dy_program_print's form. A Program that parses
 * must print as text that parses again and prints the same (print and
 * parse are each other's inverse on what the parser accepts).
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dy_program *p = dy_fuzz_parse(data, size);
  if (!p)
    return 0;
  dy_error err = {0};
  dy_error verr = {0};
  (void)dy_verify(p, &verr);
  char *text = dy_program_to_text(p);
  dy_program *q = NULL;
  if (text && dy_program_parse(text, &q, &err) != DY_OK)
    dy_fuzz_fail("the printed form of a parsed Program does not parse", err.msg);
  char *text2 = q ? dy_program_to_text(q) : NULL;
  if (text && text2 && strcmp(text, text2) != 0)
    dy_fuzz_fail("parse(print(p)) prints differently from p", "");
  free(text);
  free(text2);
  dy_program_free(q);
  dy_program_free(p);
  return 0;
}
