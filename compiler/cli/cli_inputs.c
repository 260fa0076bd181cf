/* cli_inputs.c - a model's inputs on the command line (cli.h): NAME=FILE
 * or positional .npy files, read in feed order by dy_npy_read_as (a file
 * of another dtype refused, as the compiled executable refuses it; for
 * train an int32 file widened for an i64 feed, as the compiled trainer
 * does), or as raw little-endian data (any name not ending in .npy, as the
 * executable takes it: every -1 dim is the batch, inferred from the size);
 * the bare arguments of run and check (the model, then the inputs); an
 * output directory made when missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

bool dy_cli_add_input(dy_cli_inputs *ia, const char *arg) {
  if (ia->n >= DY_MAX_FEEDS)
    return false;
  const char *eq = strchr(arg, '=');
  if (eq) {
    char *name = strndup(arg, (size_t)(eq - arg));
    ia->name[ia->n] = name;
    ia->file[ia->n] = eq + 1;
  } else {
    ia->name[ia->n] = NULL;
    ia->file[ia->n] = arg;
  }
  ia->n++;
  return true;
}

bool dy_cli_add_lod(dy_cli_inputs *ia, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (ia->n >= DY_MAX_FEEDS || !eq)
    return false;
  char *name = malloc((size_t)(eq - arg) + 5);
  if (!name)
    return false;
  memcpy(name, arg, (size_t)(eq - arg));
  memcpy(name + (eq - arg), "@lod", 5);
  ia->name[ia->n] = name;
  ia->file[ia->n++] = eq + 1;
  return true;
}

void dy_cli_free_inputs(dy_cli_inputs *ia) {
  for (int i = 0; i < ia->n; i++)
    free((char *)ia->name[i]);
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && strcmp(s + n - k, tail) == 0;
}

/* Raw little-endian data for feed v, read as the compiled executable reads
 * it (codegen/rt/dy_main.c, with the same messages): a static shape needs
 * exactly its bytes; with -1 dims, the one batch b (1..the batch bound)
 * with row * b^(number of -1 dims) elements; other size symbols need .npy. */
static dy_status read_raw(const dy_program *p, const dy_var *v, const char *path,
                          const char *what, dy_tensor **out, dy_error *err) {
  const dy_type *ty = &v->type;
  size_t es = dy_dtype_size(ty->dtype);
  int64_t row = 1;
  int ndyn = 0;
  for (int d = 0; d < ty->rank; d++) {
    if (ty->shape[d] == -1)
      ndyn++;
    else if (ty->shape[d] < 0)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "%s: %s: the model has size symbols besides the batch: give "
                          "its inputs as .npy files", what, path);
    else
      row *= ty->shape[d];
  }
  char want[160]; /* the shape as the executable prints it: [-1, 784] */
  size_t w = (size_t)snprintf(want, sizeof want, "[");
  for (int d = 0; d < ty->rank && w < sizeof want; d++)
    w += (size_t)snprintf(want + w, sizeof want - w, "%s%lld", d ? ", " : "",
                          (long long)ty->shape[d]);
  if (w < sizeof want)
    snprintf(want + w, sizeof want - w, "]");
  uint8_t *buf;
  size_t len;
  dy_status s = dy_read_file(path, &buf, &len, err);
  if (s)
    return s;
  int64_t b = 1, bmax = dy_program_sym_bound(p, 0);
  size_t per = (size_t)row * es;
  if (ndyn == 0 && len != per)
    s = dy_error_set(err, DY_STATUS_SHAPE_MISMATCH, "%s: %s: %zu bytes, expected %zu for %s %s",
                     what, path, len, per, dy_dtype_name(ty->dtype), want);
  else if (ndyn > 0 && per == 0)
    s = dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                     "%s: %s: cannot infer the batch of an empty shape %s", what, path,
                     want);
  else if (ndyn > 0) {
    for (b = 0;; b++) {
      /* per * b^ndyn, stopping once it passes len (never wrapping) */
      size_t need = per;
      for (int k = 0; k < ndyn && need <= len; k++)
        need = b == 0 ? 0 : need > len / (size_t)b ? len + 1 : need * (size_t)b;
      if (need == len)
        break;
      if (need > len || b > bmax) {
        s = dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                         "%s: %s: %zu bytes is not a whole number of batch rows of %s "
                         "%s (batch at most %lld)", what, path, len, dy_dtype_name(ty->dtype),
                         want, (long long)bmax);
        break;
      }
    }
    if (!s && (b < 1 || b > bmax))
      s = dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                       "%s: %s: batch %lld is outside 1..%lld", what, path, (long long)b,
                       (long long)bmax);
  }
  int64_t shape[DY_MAX_DIMS];
  for (int d = 0; d < ty->rank; d++)
    shape[d] = ty->shape[d] == -1 ? b : ty->shape[d];
  dy_tensor *t = s ? NULL : dy_tensor_new(ty->dtype, ty->rank, shape);
  if (!s && !t)
    s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  if (t) {
    /* little-endian bytes to host order, element by element */
    uint8_t *dst = t->data;
    for (size_t i = 0; i < len; i += es) {
      uint64_t x = 0;
      for (size_t k = 0; k < es; k++)
        x |= (uint64_t)buf[i + k] << (8 * k);
      if (es == 8) {
        memcpy(dst + i, &x, 8);
      } else if (es == 4) {
        uint32_t y = (uint32_t)x;
        memcpy(dst + i, &y, 4);
      } else if (es == 2) {
        uint16_t y = (uint16_t)x;
        memcpy(dst + i, &y, 2);
      } else {
        dst[i] = (uint8_t)x;
      }
    }
  }
  free(buf);
  *out = t;
  return s;
}

dy_status dy_cli_load_inputs(const dy_program *p, const dy_cli_inputs *ia, dy_tensor **t,
                             dy_error *err) {
  for (int i = 0; i < p->n_feeds; i++)
    t[i] = NULL;
  for (int k = 0; k < ia->n; k++) {
    int slot = k;
    if (ia->name[k]) {
      slot = -1;
      for (int i = 0; i < p->n_feeds; i++)
        if (strcmp(p->vars[p->feeds[i]]->name, ia->name[k]) == 0)
          slot = i;
      if (slot < 0)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                            "the model has no input named '%s'", ia->name[k]);
    } else if (k >= p->n_feeds) {
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "the model takes %d inputs; '%s' is one too many",
                          p->n_feeds, ia->file[k]);
    }
    if (t[slot])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s' is given twice", p->vars[p->feeds[slot]]->name);
    const dy_var *v = p->vars[p->feeds[slot]];
    char what[300];
    snprintf(what, sizeof what, "input '%s'", v->name);
    dy_status s = ends_with(ia->file[k], ".npy")
                      ? dy_npy_read_as(ia->file[k], what, v->type.dtype, &t[slot], err)
                      : read_raw(p, v, ia->file[k], what, &t[slot], err);
    if (s)
      return s;
  }
  for (int i = 0; i < p->n_feeds; i++)
    if (!t[i])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "missing input '%s' (--input %s=FILE.npy)",
                          p->vars[p->feeds[i]]->name, p->vars[p->feeds[i]]->name);
  return DY_OK;
}

/* dir exists (made when missing) and is a directory. */
dy_status dy_cli_ensure_dir(const char *dir, dy_error *err) {
  struct stat st;
  if (stat(dir, &st) == 0)
    return S_ISDIR(st.st_mode) ? DY_OK
                               : dy_error_set(err, DY_STATUS_IO,
                                              "%s: not a directory", dir);
  if (mkdir(dir, 0777) != 0)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot create: %s", dir,
                        strerror(errno));
  return DY_OK;
}

/* Any other argument of run and check: an unknown option, else the model,
 * then the inputs in order. Returns 0 or a usage error's exit status. */
int dy_cli_model_or_input(const char *cmd, const char *a, const char **model,
                          dy_cli_inputs *ia) {
  if (a[0] == '-')
    return dy_cli_usage(cmd, "unknown or incomplete option '%s'", a);
  if (!*model)
    *model = a;
  else if (!dy_cli_add_input(ia, a))
    return dy_cli_usage(cmd, "too many inputs (%s)", a);
  return 0;
}

/* After the arguments of run and check: a usage error when no model was
 * given, and the inputs freed on any error. Returns the status (0: go on). */
int dy_cli_args_end(const char *cmd, int rc, const char *model, dy_cli_inputs *ia) {
  if (!rc && !model)
    rc = dy_cli_usage(cmd, "%s", "no model given");
  if (rc)
    dy_cli_free_inputs(ia);
  return rc;
}
