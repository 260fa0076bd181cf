/* tensor.c - eager tensors, scopes and the thread-local error slot.
 *
 * A tensor is reference counted. New tensors are handed to the innermost
 * open scope (a stack of growable arrays of references): dy_scope_end drops
 * those references, so a forward written as nested calls frees all its
 * intermediates at once; dy_keep takes an extra reference for the caller.
 * With no scope open the caller holds the only reference.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

/* ---- scopes ---- */

typedef struct scope {
  struct scope *prev;
  int n, cap;
  dy_tensor **held;
} scope;

static _Thread_local scope *top_scope;

void dy_scope_begin(void) {
  scope *s = calloc(1, sizeof *s);
  if (!s) {
    dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "scope: out of memory");
    return;
  }
  s->prev = top_scope;
  top_scope = s;
}

void dy_scope_end(void) {
  scope *s = top_scope;
  if (!s)
    return;
  top_scope = s->prev;
  for (int i = 0; i < s->n; i++)
    dy_tensor_free(s->held[i]);
  free(s->held);
  free(s);
}

/* Hand a fresh tensor (refcount 1) to the current scope, if any. If the
 * scope cannot grow, the tensor is freed and NULL returned. */
dy_tensor *dy_tensor_adopt(dy_tensor *t) {
  scope *s = top_scope;
  if (!t || !s)
    return t;
  if (s->n == s->cap) {
    int ncap = s->cap ? s->cap * 2 : 64;
    dy_tensor **h = realloc(s->held, sizeof *h * (size_t)ncap);
    if (!h) {
      dy_tensor_free(t);
      return dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "scope: out of memory");
    }
    s->held = h;
    s->cap = ncap;
  }
  s->held[s->n++] = t;
  return t;
}

/* ---- tensors ---- */

dy_tensor *dy_tensor_alloc(const dy_type *type, bool with_data) {
  dy_tensor *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->type = *type;
  t->refcount = 1;
  t->var = -1;
  if (with_data) {
    /* a concrete shape: its size checked (dy_checked.h), never wrapped */
    int64_t bytes;
    if (!dy_type_is_static(type) || !dy_type_bytes_at(type, 1, &bytes)) {
      free(t);
      return NULL;
    }
    t->nbytes = (size_t)bytes;
    t->data = calloc(1, t->nbytes ? t->nbytes : 1);
    if (!t->data) {
      free(t);
      return NULL;
    }
  }
  return t;
}

static bool check_shape(dy_dtype dtype, int rank, const int64_t *shape) {
  if (rank < 0 || rank > DY_MAX_DIMS || (unsigned)dtype >= DY_DTYPE_COUNT ||
      (rank > 0 && !shape))
    return false;
  int64_t n, bytes;
  return dy_ck_numel(shape, rank, &n) && dy_ck_bytes(n, dy_dtype_size(dtype), &bytes);
}

dy_tensor *dy_tensor_new(dy_dtype dtype, int rank, const int64_t *shape) {
  if (!check_shape(dtype, rank, shape))
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
                   "dy_tensor_new: bad dtype, rank or negative dim, or larger than the "
                   "maximum tensor size");
  dy_type t = {.dtype = dtype, .rank = rank};
  if (rank)
    memcpy(t.shape, shape, sizeof(int64_t) * (size_t)rank);
  dy_tensor *x = dy_tensor_alloc(&t, true);
  if (!x)
    return dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "tensor: out of memory");
  return dy_tensor_adopt(x);
}

dy_tensor *dy_tensor_from_data(dy_dtype dtype, int rank, const int64_t *shape,
                               const void *data) {
  dy_tensor *t = dy_tensor_new(dtype, rank, shape);
  if (t && t->nbytes)
    memcpy(t->data, data, t->nbytes);
  return t;
}

dy_tensor *dy_tensor_symbolic(const dy_type *type) {
  dy_tensor *t = dy_tensor_alloc(type, false);
  if (!t)
    return dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "tensor: out of memory");
  return dy_tensor_adopt(t);
}

/* Internal: a view of base with another type (same data, same numel). */
dy_tensor *dy_tensor_view(dy_tensor *base, const dy_type *type) {
  dy_tensor *t = dy_tensor_alloc(type, false);
  if (!t)
    return dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "tensor: out of memory");
  base->refcount++;
  t->base = base;
  t->data = base->data;
  t->nbytes = base->nbytes;
  return dy_tensor_adopt(t);
}

void dy_tensor_free(dy_tensor *t) {
  if (!t || --t->refcount > 0)
    return;
  if (t->base)
    dy_tensor_free(t->base);
  else if (!t->borrowed)
    free(t->data);
  dy_tensor_free(t->grad);
  free(t->name);
  free(t);
}

dy_tensor *dy_keep(dy_tensor *t) {
  if (t)
    t->refcount++;
  return t;
}

/* ---- the thread-local error slot ---- */

static _Thread_local dy_error last_error;
static _Thread_local bool have_error;

const dy_error *dy_last_error(void) { return have_error ? &last_error : NULL; }

void dy_clear_error(void) {
  have_error = false;
  memset(&last_error, 0, sizeof last_error);
}

dy_tensor *dy_fail(dy_status s, dy_srcloc loc, const char *fmt, ...) {
  if (have_error)
    return NULL;
  char msg[sizeof last_error.msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dy_op where = {.id = -1, .loc = loc};
  dy_error_at(&last_error, loc.file ? &where : NULL, s, "%s", msg);
  have_error = true;
  return NULL;
}

/* Internal: record a dy_error produced by ir/ or a kernel. */
dy_tensor *dy_fail_with(const dy_error *err) {
  if (!have_error) {
    last_error = *err;
    if (err->loc.file)
      last_error.loc.file = last_error.file_buf;
    have_error = true;
  }
  return NULL;
}

void dy_tensor_print(const dy_tensor *t, const char *label, int limit,
                     FILE *out) {
  char ty[128];
  fprintf(out, "%s: %s", label ? label : "tensor",
          dy_type_str(&t->type, ty, sizeof ty));
  if (!t->data) {
    fprintf(out, " (symbolic)\n");
    return;
  }
  int64_t n = dy_tensor_numel(t);
  fprintf(out, " =");
  for (int64_t i = 0; i < n && i < limit; i++) {
    char v[32];
    fprintf(out, " %s", dy_dtype_format(v, sizeof v, t->type.dtype, t->data, i, 6));
  }
  fprintf(out, "%s\n", n > limit ? " ..." : "");
}

/* ---- warnings ---- */

static dy_warning_fn warning_fn;
static void *warning_user;

void dy_set_warning_handler(dy_warning_fn fn, void *user) {
  warning_fn = fn;
  warning_user = user;
}

void dy_warn(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (warning_fn)
    warning_fn(msg, warning_user);
  else
    fprintf(stderr, "dy2stc: warning: %s\n", msg);
}
