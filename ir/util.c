/* util.c - CRC-32 and whole-file reading / atomic writing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dy_ir.h"

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib computes
 * it: dy_crc32(0, "123456789", 9) == 0xCBF43926. */
uint32_t dy_crc32(uint32_t crc, const void *data, size_t n) {
  static uint32_t table[256];
  static int ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < n; i++)
    crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

dy_status dy_read_file(const char *path, uint8_t **buf, size_t *len,
                       dy_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot open: %s", path,
                        strerror(errno));
  size_t cap = 1 << 16, n = 0;
  uint8_t *b = malloc(cap);
  while (b) {
    n += fread(b + n, 1, cap - n, f);
    if (n < cap)
      break;
    uint8_t *nb = realloc(b, cap * 2);
    if (!nb) {
      free(b);
      b = NULL;
      break;
    }
    b = nb;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (!b)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  if (bad) {
    free(b);
    return dy_error_set(err, DY_STATUS_IO, "%s: read error", path);
  }
  *buf = b;
  *len = n;
  return DY_OK;
}

dy_status dy_write_file_atomic(const char *path, const void *buf, size_t len,
                               dy_error *err) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot create: %s", path,
                        strerror(errno));
  size_t w = len ? fwrite(buf, 1, len, f) : 0;
  int bad = w != len;
  bad |= fflush(f) != 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot write: %s", path,
                        strerror(e));
  }
  return DY_OK;
}
