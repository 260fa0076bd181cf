/* fuzz_dyparams.c - the .dyparams reader (ir/program/params.c:
 * dy_dyparams_decode) against a Program.
 *
 * The input is a pair: a u32 (little-endian) length n, n bytes of
 * .dymodel, then the .dyparams bytes (tests/fuzz/make_corpus.c writes the
 * seeds so). When the .dymodel part decodes, the .dyparams part is read
 * into it as it is and, when a record's or the file's CRC does not match,
 * once more with every CRC made right (the layout is in params.c), so
 * mutations reach the checks behind the checksums. A Program whose data
 * was read must still verify if it verified before.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_ir.h"
#include "fuzz.h"

static uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static void put_crc(uint8_t *at, uint32_t crc) {
  for (int i = 0; i < 4; i++)
    at[i] = (uint8_t)(crc >> (8 * i));
}

/* Make every record CRC and the file CRC of buf right, as far as the
 * records can be walked. */
static void fix_crcs(uint8_t *buf, size_t len) {
  if (len < 16)
    return;
  uint64_t count = get_le(buf + 12, 4);
  size_t pos = 16;
  for (uint64_t r = 0; r < count; r++) {
    size_t start = pos;
    if (len - pos < 4)
      break;
    uint64_t name_len = get_le(buf + pos, 4);
    if (name_len > len - pos - 4)
      break;
    pos += 4 + (size_t)name_len;
    if (len - pos < 8)
      break;
    uint64_t rank = get_le(buf + pos + 4, 4);
    pos += 8;
    if (rank > 8 || len - pos < 8 * rank + 8)
      break;
    pos += 8 * (size_t)rank;
    uint64_t data_len = get_le(buf + pos, 8);
    pos += 8;
    if (data_len > len - pos || len - pos - data_len < 4)
      break;
    pos += (size_t)data_len;
    put_crc(buf + pos, dy_crc32(0, buf + start, pos - start));
    pos += 4;
  }
  if (len >= 20)
    put_crc(buf + len - 4, dy_crc32(0, buf, len - 4));
}

static void read_params(const uint8_t *model, size_t model_len, const uint8_t *params,
                        size_t params_len) {
  dy_program *p = NULL;
  dy_error err = {0};
  if (dy_dymodel_decode(model, model_len, &p, &err) != DY_OK)
    return;
  dy_error verr = {0};
  bool verified = dy_verify(p, &verr) == DY_OK;
  dy_status s = dy_dyparams_decode(p, params, params_len, &err);
  dy_fuzz_note("dyparams", s ? err.msg : NULL);
  if (s == DY_OK && verified && dy_verify(p, &verr) != DY_OK)
    dy_fuzz_fail("a verified Program does not verify after reading its .dyparams", verr.msg);
  dy_program_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4)
    return 0;
  uint64_t n = get_le(data, 4);
  if (n > size - 4)
    return 0;
  const uint8_t *model = data + 4, *params = model + n;
  size_t params_len = size - 4 - (size_t)n;
  read_params(model, (size_t)n, params, params_len);
  uint8_t *fixed = malloc(params_len ? params_len : 1);
  if (!fixed)
    return 0;
  if (params_len)
    memcpy(fixed, params, params_len);
  fix_crcs(fixed, params_len);
  if (params_len && memcmp(fixed, params, params_len) != 0)
    read_params(model, (size_t)n, fixed, params_len);
  free(fixed);
  return 0;
}
