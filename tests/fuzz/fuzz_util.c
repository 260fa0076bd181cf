/* fuzz_util.c - the helpers of fuzz.h: a private temporary directory
 * for the readers that take a path, the text parse, the notes. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[512];
static char tmp_paths[4][600];
static int n_tmp_paths;

static void remove_tmp(void) {
  for (int i = 0; i < n_tmp_paths; i++)
    unlink(tmp_paths[i]);
  if (tmp_dir[0])
    rmdir(tmp_dir);
}

const char *dy_fuzz_file(const char *leaf, const uint8_t *data, size_t size) {
  if (!tmp_dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/dy_fuzz.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp_dir)) {
      tmp_dir[0] = 0;
      return NULL;
    }
    atexit(remove_tmp);
  }
  char path[600];
  snprintf(path, sizeof path, "%s/%s", tmp_dir, leaf);
  int known = 0;
  for (int i = 0; i < n_tmp_paths; i++)
    known |= strcmp(tmp_paths[i], path) == 0;
  if (!known) {
    if (n_tmp_paths == 4)
      return NULL;
    memcpy(tmp_paths[n_tmp_paths++], path, sizeof path);
  }
  FILE *f = fopen(path, "wb");
  if (!f)
    return NULL;
  size_t put = size ? fwrite(data, 1, size, f) : 0;
  if (fclose(f) != 0 || put != size)
    return NULL;
  for (int i = 0; i < n_tmp_paths; i++)
    if (strcmp(tmp_paths[i], path) == 0)
      return tmp_paths[i];
  return NULL;
}

dy_program *dy_fuzz_parse(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return NULL;
  if (size)
    memcpy(text, data, size);
  text[size] = 0;
  dy_program *p = NULL;
  dy_error err = {0};
  dy_status s = dy_program_parse(text, &p, &err);
  free(text);
  dy_fuzz_note("parse", s ? err.msg : NULL);
  return s ? NULL : p;
}

void dy_fuzz_note(const char *stage, const char *msg) {
  static int verbose = -1;
  if (verbose < 0)
    verbose = getenv("DY_FUZZ_VERBOSE") != NULL;
  if (verbose)
    fprintf(stderr, "%s: %s\n", stage, msg ? msg : "ok");
}

void dy_fuzz_fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz: %s: %s\n", what, detail ? detail : "");
  abort();
}

bool dy_fuzz_pair(const uint8_t *data, size_t size, const uint8_t **a, size_t *a_len,
                  const uint8_t **b, size_t *b_len) {
  if (size < 4)
    return false;
  uint64_t n = (uint64_t)data[0] | (uint64_t)data[1] << 8 | (uint64_t)data[2] << 16 |
               (uint64_t)data[3] << 24;
  if (n > size - 4)
    return false;
  *a = data + 4;
  *a_len = (size_t)n;
  *b = data + 4 + n;
  *b_len = size - 4 - (size_t)n;
  return true;
}
