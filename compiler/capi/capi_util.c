/* capi_util.c - the bottom floor of the flat C API (capi_internal.h):
 * errors into the caller's buffer, loading a model, the caller's inputs
 * mapped to the feeds (with `dy2stc run`'s messages) and the compile
 * options: the one function that maps an option's key onto the driver.
 */
#include <stdlib.h>
#include <string.h>

#include "capi_internal.h"

const char *dy2stc_version(void) { return DY_VERSION_STRING; }

const char *dy2stc_dtype_name(int dtype) {
  return dtype >= 0 && dtype < DY_DTYPE_COUNT ? dy_dtype_name((dy_dtype)dtype) : NULL;
}

int dy2stc_dtype_size(int dtype) {
  return dtype >= 0 && dtype < DY_DTYPE_COUNT ? (int)dy_dtype_size((dy_dtype)dtype) : 0;
}

int capi_fail(dy_status s, const dy_error *err, char *msg, size_t n) {
  if (msg && n) {
    if (err->msg[0])
      dy_error_format(err, msg, n);
    else
      snprintf(msg, n, "%s", dy_status_name(s));
  }
  return s ? (int)s : (int)DY_STATUS_INVALID_ARGUMENT;
}

dy_status capi_load_program(const char *path, const char *params, dy_program **p,
                            dy_error *err) {
  if (!path)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "no model path given");
  if (params && !dy_paddle_is_model_path(path))
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "params are for a Paddle model (.pdmodel, __model__), not '%s'", path);
  if (params)
    return dy_paddle_load(path, params, NULL, p, err);
  return dy_model_load_any(path, p, err);
}

/* The feed slot of input k: by name, else its position. */
static dy_status feed_slot(const dy_program *p, const capi_inputs *in, int k, int *slot,
                           dy_error *err) {
  const char *name = in->names ? in->names[k] : NULL;
  if (!name) {
    if (k >= p->n_feeds)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "the model takes %d inputs; input %d is one too many", p->n_feeds, k);
    *slot = k;
    return DY_OK;
  }
  for (int i = 0; i < p->n_feeds; i++)
    if (strcmp(p->vars[p->feeds[i]]->name, name) == 0) {
      *slot = i;
      return DY_OK;
    }
  return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "the model has no input named '%s'",
                      name);
}

dy_status capi_feed_types(const dy_program *p, const capi_inputs *in, int *order,
                          dy_type *types, dy_error *err) {
  bool given[DY_MAX_FEEDS] = {0};
  if (in->n < 0 || in->n > DY_MAX_FEEDS)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "%d inputs: at most %d", in->n,
                        DY_MAX_FEEDS);
  for (int k = 0; k < in->n; k++) {
    int slot = 0;
    dy_status s = feed_slot(p, in, k, &slot, err);
    if (s)
      return s;
    const char *fname = p->vars[p->feeds[slot]]->name;
    if (given[slot])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "input '%s' is given twice", fname);
    if (in->dtypes[k] < 0 || in->dtypes[k] >= DY_DTYPE_COUNT)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "input '%s': unknown dtype code %d",
                          fname, in->dtypes[k]);
    if (in->ranks[k] < 0 || in->ranks[k] > DY_MAX_DIMS)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "input '%s': rank %d (at most %d dims)", fname, in->ranks[k],
                          DY_MAX_DIMS);
    dy_type t = {.dtype = (dy_dtype)in->dtypes[k], .rank = in->ranks[k]};
    for (int d = 0; d < t.rank; d++) {
      t.shape[d] = in->shapes[k * DY2STC_MAX_DIMS + d];
      if (t.shape[d] < 0)
        return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "input '%s': dim %d is %lld",
                            fname, d, (long long)t.shape[d]);
    }
    given[slot] = true;
    order[k] = slot;
    types[slot] = t;
  }
  for (int i = 0; i < p->n_feeds; i++)
    if (!given[i])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "missing input '%s'",
                          p->vars[p->feeds[i]]->name);
  return DY_OK;
}

dy_status capi_feed_tensors(const dy_program *p, const capi_inputs *in, dy_tensor **t,
                            dy_error *err) {
  int order[DY_MAX_FEEDS];
  dy_type types[DY_MAX_FEEDS];
  dy_status s = capi_feed_types(p, in, order, types, err);
  for (int k = 0; k < in->n && !s; k++) {
    const dy_type *ty = &types[order[k]];
    if (!in->data || !in->data[k])
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "input '%s' has no data",
                          p->vars[p->feeds[order[k]]]->name);
    t[order[k]] = dy_tensor_from_data(ty->dtype, ty->rank, ty->shape, in->data[k]);
    if (!t[order[k]])
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  return s;
}

/* value as an integer in [lo, hi], else an error naming the option. */
static dy_status int_value(const char *key, const char *value, int64_t lo, int64_t hi,
                           int64_t *out, dy_error *err) {
  char *end;
  long long v = value ? strtoll(value, &end, 10) : 0;
  if (!value || !*value || *end || v < lo || v > hi)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "compile option '%s' needs an integer from %lld to %lld, not '%s'", key,
                        (long long)lo, (long long)hi, value ? value : "");
  *out = v;
  return DY_OK;
}

/* A pin: dim:NAME N, or shape:INPUT d0,d1,... */
static dy_status pin_option(dy_program *p, const char *key, const char *value, dy_error *err) {
  int64_t v[DY_MAX_DIMS];
  if (strncmp(key, "dim:", 4) == 0) {
    dy_status s = int_value(key, value, 1, DY_MAX_BATCH, &v[0], err);
    return s ? s : dy_program_pin_sym(p, key + 4, v[0], err);
  }
  int nd = 0;
  const char *q = value ? value : "";
  for (;;) {
    char num[32];
    size_t k = strcspn(q, ",");
    if (k == 0 || k >= sizeof num || nd == DY_MAX_DIMS)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "compile option '%s' needs dims d0,d1,..., not '%s'", key, value);
    memcpy(num, q, k);
    num[k] = '\0';
    dy_status s = int_value(key, num, 1, DY_MAX_BATCH, &v[nd++], err);
    if (s)
      return s;
    if (!q[k])
      break;
    q += k + 1;
  }
  return dy_program_pin_input(p, key + 6, v, nd, err);
}

/* A bound on size symbol name ("batch" the batch's), in the Program as the
 * CLI's --max-batch / --max-dim set it (dy_program_bound_sym: an unknown
 * symbol or a pin above the bound is refused). */
static dy_status bound_option(dy_program *p, const char *option, const char *name, int64_t v,
                              dy_error *err) {
  dy_status s = dy_program_bound_sym(p, name, v, err);
  return s ? dy_error_prefix(err, "%s", option) : DY_OK;
}

/* One option other than a pin onto o (or p's symbol bounds). */
static dy_status other_option(dy_program *p, const char *key, const char *value,
                              dy_compile_options *o, dy_error *err) {
  int64_t v = 0;
  dy_status s = DY_OK;
  if (strcmp(key, "max_batch") == 0) {
    if (!(s = int_value(key, value, 1, DY_MAX_BATCH, &v, err)))
      s = bound_option(p, "max_batch", "batch", v, err);
  } else if (strncmp(key, "max_dim:", 8) == 0) {
    if (!(s = int_value(key, value, 1, DY_MAX_BATCH, &v, err)))
      s = bound_option(p, "max_dims", key + 8, v, err);
  } else if (strcmp(key, "threads") == 0) {
    if (!(s = int_value(key, value, 1, 64, &v, err)))
      o->threads = (int)v;
  } else if (strcmp(key, "opt_level") == 0) {
    if (!(s = int_value(key, value, 0, 2, &v, err)))
      o->passes.opt_level = (int)v;
  } else if (strcmp(key, "max_iterations") == 0)
    s = int_value(key, value, 1, INT64_MAX, &o->max_iterations, err);
  else if (strcmp(key, "plain_kernels") == 0 || strcmp(key, "no_pack_a") == 0) {
    if (!(s = int_value(key, value, 0, 1, &v, err)))
      *(key[0] == 'p' ? &o->plain_kernels : &o->no_pack_a) = v != 0;
  } else if (strcmp(key, "cc") == 0)
    o->cc = value;
  else if (strcmp(key, "cflags") == 0)
    o->cflags = value;
  else if (strcmp(key, "target") == 0) {
    const char *flags;
    if (!(s = dy_target_flags(value, &flags, NULL, NULL, err)))
      o->target = value;
  } else
    s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "unknown compile option '%s'", key);
  return s;
}

dy_status capi_compile_options(dy_program *p, int n, const char *const *keys,
                               const char *const *values, dy_compile_options *o,
                               dy_error *err) {
  dy_status s = DY_OK;
  for (int pass = 0; pass < 2 && !s; pass++)
    for (int i = 0; i < n && !s; i++) {
      const char *key = keys[i] ? keys[i] : "";
      bool pin = strncmp(key, "dim:", 4) == 0 || strncmp(key, "shape:", 6) == 0;
      if (pass == 0 && pin)
        s = pin_option(p, key, values[i], err);
      else if (pass == 1 && !pin)
        s = other_option(p, key, values[i], o, err);
    }
  return s;
}
