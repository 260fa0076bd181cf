/* fuzz_dymodel.c - the .dymodel reader (ir/program/serialize.c:
 * dy_dymodel_decode), then the verifier and the printer on what it
 * returns.
 *
 * The input is a .dymodel file. It is decoded as it is (the checksum
 * check included) and, when it ends with a checksum field whose CRC does
 * not match, once more with the CRC made right, so mutations reach the
 * checks behind the checksum. A Program that decodes must encode again,
 * and that encoding must decode to the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"
#include "fuzz.h"

static void decode_one(const uint8_t *data, size_t size) {
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_dymodel_decode(data, size, &p, &err);
  dy_fuzz_note("dymodel", s ? err.msg : NULL);
  if (s != DY_OK)
    return;
  dy_error verr = {0};
  (void)dy_verify(p, &verr);
  char *text = dy_program_to_text(p);
  uint8_t *buf = NULL;
  size_t len = 0;
  dy_error eerr = {0};
  if (dy_dymodel_encode(p, &buf, &len, &eerr) != DY_OK)
    dy_fuzz_fail("a decoded Program does not encode", eerr.msg);
  dy_program *q = NULL;
  dy_error derr = {0};
  if (dy_dymodel_decode(buf, len, &q, &derr) != DY_OK)
    dy_fuzz_fail("a re-encoded Program does not decode", derr.msg);
  char *text2 = dy_program_to_text(q);
  if (text && text2 && strcmp(text, text2) != 0)
    dy_fuzz_fail("decode(encode(p)) differs from p", "");
  free(text);
  free(text2);
  free(buf);
  dy_program_free(q);
  dy_program_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  decode_one(data, size);
  /* the checksum field: tag 0xFD 0x7F, then the CRC-32 of the bytes
   * before the tag as fixed32 (serialize.c) */
  if (size >= 6 && data[size - 6] == 0xFD && data[size - 5] == 0x7F) {
    uint32_t crc = dy_crc32(0, data, size - 6);
    uint8_t want[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
                       (uint8_t)(crc >> 24)};
    if (memcmp(data + size - 4, want, 4) != 0) {
      uint8_t *fixed = malloc(size);
      if (!fixed)
        return 0;
      memcpy(fixed, data, size - 4);
      memcpy(fixed + size - 4, want, 4);
      decode_one(fixed, size);
      free(fixed);
    }
  }
  return 0;
}
