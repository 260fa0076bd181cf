/* control_sample.h - what each control-flow sample does besides its model:
 * for every input case, run the model eagerly and through dy_to_static
 * (the static executor) and compare; save the model with dy_jit_save and
 * write each case's input and eager output, so `dy2stc run` can be
 * checked against them:
 *
 *   ./early_exit [--out DIR]
 *   dy2stc run DIR/early_exit.dymodel --input x=DIR/x_0.npy --output-dir OUT
 *   dy2stc compare OUT/out.npy DIR/eager_0.npy
 *
 * DIR/NAME.dymodel + .dyparams, DIR/x_<k>.npy, DIR/eager_<k>.npy.
 */
#ifndef DY_CONTROL_SAMPLE_H
#define DY_CONTROL_SAMPLE_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_runtime.h"

static int ctl_die(const char *name, const char *what) {
  char line[1024] = "failed";
  if (dy_last_error())
    dy_error_format(dy_last_error(), line, sizeof line);
  fprintf(stderr, "%s: %s: %s\n", name, what, line);
  return 1;
}

/* Run net on each of the n inputs eagerly and through dy_to_static (they
 * must agree within tol), save it with spec as DIR/NAME and write the
 * tensors. */
static int ctl_run(const char *name, dy_layer *net, const dy_input_spec *spec,
                   dy_tensor *const *inputs, int n, float tol, int argc, char **argv) {
  const char *dir = ".";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      dir = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--out DIR]\n", name);
      return 2;
    }
  }
  struct stat dst; /* DIR is created when its parent exists */
  if (mkdir(dir, 0777) != 0 && !(errno == EEXIST && stat(dir, &dst) == 0 && S_ISDIR(dst.st_mode))) {
    fprintf(stderr, "%s: --out %s: %s\n", name, dir,
            errno == EEXIST ? "exists and is not a directory" : strerror(errno));
    return 1;
  }
  dy_layer *st = dy_to_static(net);
  char path[4096];
  dy_error err = {0};
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    dy_scope_begin();
    dy_tensor *eager = dy_call1(net, inputs[k]);
    dy_tensor *stat = eager ? dy_call1(st, inputs[k]) : NULL;
    if (!eager || !stat) {
      rc = ctl_die(name, eager ? "to_static run" : "eager run");
    } else {
      double worst = 0;
      for (int64_t i = 0; i < dy_tensor_numel(eager); i++) {
        double d = fabs((double)((const float *)eager->data)[i] -
                        (double)((const float *)stat->data)[i]);
        worst = d > worst ? d : worst;
      }
      printf("case %d: eager and to_static differ by at most %g\n", k, worst);
      dy_tensor_print(eager, "  out", 12, stdout);
      if (worst > tol) {
        fprintf(stderr, "%s: case %d: eager and to_static disagree\n", name, k);
        rc = 1;
      }
      const char *what[2] = {"x", "eager"};
      dy_tensor *t[2] = {inputs[k], eager};
      for (int j = 0; j < 2 && !rc; j++) {
        snprintf(path, sizeof path, "%s/%s_%d.npy", dir, what[j], k);
        if (dy_npy_write(path, t[j], &err)) {
          fprintf(stderr, "%s: %s\n", name, err.msg);
          rc = 1;
        }
      }
    }
    dy_scope_end();
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!rc && dy_jit_save(net, spec, 1, path, &err)) {
    fprintf(stderr, "%s: jit_save: %s\n", name, err.msg);
    rc = 1;
  }
  if (!rc)
    printf("saved %s.dymodel and %s.dyparams\n", path, path);
  dy_layer_free(st);
  return rc;
}

#endif
