/* sample.h - what every sample does besides its model: read
 * `--batch N --out DIR`, and save the model and its tensors so the
 * compiled executable can be compared with eager:
 *
 *   DIR/NAME.dymodel, DIR/NAME.dyparams   (dy_jit_save)
 *   DIR/<tensor>.npy                      (inputs and eager_out)
 */
#ifndef DY_SAMPLE_H
#define DY_SAMPLE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_runtime.h"

static int sample_die(const char *name, const char *what, const dy_error *err) {
  char line[1024];
  if (err)
    dy_error_format(err, line, sizeof line);
  fprintf(stderr, "%s: %s: %s\n", name, what, err ? line : "failed");
  return 1;
}

/* --out DIR: created when it does not exist (its parent must); 0, or 1
 * after a one-line message. */
static int sample_out_dir(const char *name, const char *dir) {
  struct stat st;
  if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
    return 0;
  fprintf(stderr, "%s: --out %s: %s\n", name, dir,
          errno == EEXIST ? "exists and is not a directory" : strerror(errno));
  return 1;
}

/* Parse --batch N --out DIR (DIR created); returns 0, or 2 after a usage
 * message, 1 when DIR cannot be made. */
static int sample_args(const char *name, int argc, char **argv, long *batch,
                       const char **dir) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
      *batch = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      *dir = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--batch N] [--out DIR]\n", name);
      return 2;
    }
  }
  if (*batch < 1) {
    fprintf(stderr, "%s: --batch must be at least 1\n", name);
    return 2;
  }
  return sample_out_dir(name, *dir);
}

/* jit_save net as DIR/NAME, then write each tensor as DIR/<names[i]>.npy. */
static int sample_save(const char *name, dy_layer *net, const dy_input_spec *specs,
                       int n_specs, const char *dir, int n, const char *const *names,
                       dy_tensor *const *tensors) {
  char path[4096], file[4200];
  dy_error err = {0};
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (dy_jit_save(net, specs, n_specs, path, &err))
    return sample_die(name, "jit_save", &err);
  printf("saved %s.dymodel and %s.dyparams\n", path, path);
  for (int i = 0; i < n; i++) {
    snprintf(file, sizeof file, "%s/%s.npy", dir, names[i]);
    if (dy_npy_write(file, tensors[i], &err))
      return sample_die(name, "writing", &err);
    printf("wrote %s\n", file);
  }
  return 0;
}

#endif
