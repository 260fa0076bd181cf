/* capi.c - the flat C API's models (dy2stc_capi.h): load one through the
 * frontends (dy_model_load_any, or the Paddle loader with its params),
 * describe its inputs and outputs, and run it on the static executor with
 * the caller's arrays, the outputs held until the caller frees them.
 */
#include <stdlib.h>
#include <string.h>

#include "capi_internal.h"

int dy2stc_load(const char *path, const char *params, dy2stc_model **out, char *msg,
                size_t n) {
  dy_error err = {0};
  dy_program *p = NULL;
  *out = NULL;
  dy_status s = capi_load_program(path, params, &p, &err);
  if (s)
    return capi_fail(s, &err, msg, n);
  dy2stc_model *m = calloc(1, sizeof *m);
  if (m) {
    m->p = p;
    m->path = strdup(path);
    m->params = params ? strdup(params) : NULL;
  }
  if (!m || !m->path || (params && !m->params)) {
    dy2stc_model_free(m);
    dy_program_free(p);
    dy_error_set(&err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    return capi_fail(DY_STATUS_OUT_OF_MEMORY, &err, msg, n);
  }
  *out = m;
  return 0;
}

void dy2stc_model_free(dy2stc_model *m) {
  if (!m)
    return;
  dy_program_free(m->p);
  free(m->path);
  free(m->params);
  free(m);
}

/* Input or output i's var, or NULL. */
static const dy_var *io_var(const dy2stc_model *m, int output, int i) {
  int count = output ? m->p->n_fetches : m->p->n_feeds;
  if (i < 0 || i >= count)
    return NULL;
  return m->p->vars[output ? m->p->fetches[i] : m->p->feeds[i]];
}

int dy2stc_model_count(const dy2stc_model *m, int output) {
  return output ? m->p->n_fetches : m->p->n_feeds;
}

const char *dy2stc_model_name(const dy2stc_model *m, int output, int i) {
  const dy_var *v = io_var(m, output, i);
  return v ? v->name : NULL;
}

int dy2stc_model_dtype(const dy2stc_model *m, int output, int i) {
  const dy_var *v = io_var(m, output, i);
  return v ? (int)v->type.dtype : -1;
}

int dy2stc_model_rank(const dy2stc_model *m, int output, int i) {
  const dy_var *v = io_var(m, output, i);
  return v ? v->type.rank : -1;
}

int64_t dy2stc_model_dim(const dy2stc_model *m, int output, int i, int d, char *buf,
                         size_t n) {
  const dy_var *v = io_var(m, output, i);
  if (buf && n)
    buf[0] = '\0';
  if (!v || d < 0 || d >= v->type.rank)
    return 0;
  if (buf && n)
    dy_dim_name(v->type.shape[d], buf, n);
  return v->type.shape[d];
}

int dy2stc_model_run(const dy2stc_model *m, int n_inputs, const char *const *names,
                     const int *dtypes, const int *ranks, const int64_t *shapes,
                     const void *const *data, dy2stc_outputs **out, char *msg, size_t n) {
  dy_error err = {0};
  dy_tensor *in[DY_MAX_FEEDS] = {0};
  capi_inputs ci = {n_inputs, names, dtypes, ranks, shapes, data};
  *out = calloc(1, sizeof **out);
  dy_status s = *out ? DY_OK : dy_error_set(&err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s)
    s = capi_feed_tensors(m->p, &ci, in, &err);
  if (!s)
    s = dy_executor_run(m->p, in, m->p->n_feeds, (*out)->t, m->p->n_fetches, &err);
  for (int i = 0; i < DY_MAX_FEEDS; i++)
    dy_tensor_free(in[i]);
  if (s) {
    dy2stc_outputs_free(*out);
    *out = NULL;
    return capi_fail(s, &err, msg, n);
  }
  (*out)->n = m->p->n_fetches;
  return 0;
}

int dy2stc_outputs_count(const dy2stc_outputs *o) { return o->n; }

int dy2stc_outputs_dtype(const dy2stc_outputs *o, int i) {
  return i >= 0 && i < o->n ? (int)o->t[i]->type.dtype : -1;
}

int dy2stc_outputs_rank(const dy2stc_outputs *o, int i) {
  return i >= 0 && i < o->n ? o->t[i]->type.rank : -1;
}

int64_t dy2stc_outputs_dim(const dy2stc_outputs *o, int i, int d) {
  if (i < 0 || i >= o->n || d < 0 || d >= o->t[i]->type.rank)
    return 0;
  return o->t[i]->type.shape[d];
}

const void *dy2stc_outputs_data(const dy2stc_outputs *o, int i) {
  return i >= 0 && i < o->n ? o->t[i]->data : NULL;
}

int64_t dy2stc_outputs_nbytes(const dy2stc_outputs *o, int i) {
  return i >= 0 && i < o->n ? (int64_t)o->t[i]->nbytes : 0;
}

void dy2stc_outputs_free(dy2stc_outputs *o) {
  if (!o)
    return;
  for (int i = 0; i < DY_MAX_FEEDS; i++)
    dy_tensor_free(o->t[i]);
  free(o);
}
