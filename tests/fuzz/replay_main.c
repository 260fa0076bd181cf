/* replay_main.c - main() of the replay_NAME executables: runs the fuzz
 * target once on every file named on the command line and on every
 * regular file of every directory named (not recursive; hidden files
 * skipped), in name order, so a run is the same every time. Prints
 * "replay_NAME: N inputs" and exits 0; a bug in the code under test
 * crashes or aborts as it would under libFuzzer. This is how the
 * committed regression inputs (tests/fuzz/regress/NAME/) and the seed
 * corpora run in builds without libFuzzer (gcc). */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_ir.h"

static int run_file(const char *path, long *n) {
  uint8_t *buf;
  size_t len;
  dy_error err = {0};
  if (dy_read_file(path, &buf, &len, &err)) {
    fprintf(stderr, "replay: %s\n", err.msg);
    return 1;
  }
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  (*n)++;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, long *n) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "replay: cannot open directory %s\n", dir);
    return 1;
  }
  char **names = NULL;
  size_t n_names = 0, cap = 0;
  struct dirent *e;
  int bad = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (n_names == cap) {
      cap = cap ? 2 * cap : 64;
      char **grown = realloc(names, cap * sizeof *names);
      if (!grown) {
        bad = 1;
        break;
      }
      names = grown;
    }
    size_t m = strlen(dir) + strlen(e->d_name) + 2;
    if (!(names[n_names] = malloc(m))) {
      bad = 1;
      break;
    }
    snprintf(names[n_names++], m, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (n_names)
    qsort(names, n_names, sizeof *names, by_name);
  for (size_t i = 0; i < n_names; i++) {
    struct stat st;
    if (!bad && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
      bad |= run_file(names[i], n);
    free(names[i]);
  }
  free(names);
  if (bad)
    fprintf(stderr, "replay: out of memory listing %s\n", dir);
  return bad;
}

int main(int argc, char **argv) {
  long n = 0;
  int bad = 0;
  const char *me = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|DIR...\n", me);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "%s: no such file or directory: %s\n", me, argv[i]);
      bad = 1;
    } else {
      bad |= S_ISDIR(st.st_mode) ? run_dir(argv[i], &n) : run_file(argv[i], &n);
    }
  }
  printf("%s: %ld inputs\n", me, n);
  return bad;
}
