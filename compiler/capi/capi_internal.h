/* capi_internal.h - what the files of the flat C API (compiler/capi/)
 * share: the handles behind dy2stc_capi.h's opaque types and the helpers
 * of capi_util.c. Two floors over the bottom one:
 *
 *   capi.c          models, the static executor, its outputs
 *   capi_compile.c  compiled code (the cache, the inputs' check), localize
 *   capi_util.c     errors into msg, loading, inputs to feed slots and
 *                   tensors, the compile options (the key -> driver map)
 */
#ifndef DY_CAPI_INTERNAL_H
#define DY_CAPI_INTERNAL_H

#include "dy2stc_capi.h"
#include "dy_compiler.h"

struct dy2stc_model {
  dy_program *p;   /* owned */
  char *path;      /* the model's file, loaded again to compile (owned) */
  char *params;    /* a Paddle model's params, or NULL (owned) */
};

struct dy2stc_outputs {
  int n;
  dy_tensor *t[DY_MAX_FEEDS];  /* owned */
};

struct dy2stc_compiled {
  dy2stc_model m;          /* the compiled Program (its vars' final types) */
  char lib[4400];          /* cache_dir/<key>/libmodel.so */
  int64_t arena_bytes;
  int64_t max_batch;
  int cached;              /* 1: the library was there already */
};

/* The inputs as the API takes them (dy2stc_capi.h). */
typedef struct {
  int n;
  const char *const *names;  /* NULL: all in feed order */
  const int *dtypes, *ranks;
  const int64_t *shapes;     /* DY2STC_MAX_DIMS per input */
  const void *const *data;   /* NULL for a check of types alone */
} capi_inputs;

/* ---- capi_util.c ---- */

/* err's one line into msg (n bytes); returns err->status (never 0 when
 * s is not). */
int capi_fail(dy_status s, const dy_error *err, char *msg, size_t n);
/* The model at path (params: a Paddle model's, else it must be NULL). */
dy_status capi_load_program(const char *path, const char *params, dy_program **p,
                            dy_error *err);
/* Map each given input to its feed slot (order[i]) and type (types[slot]):
 * an unknown name, an input given twice, too many or a missing one is an
 * error naming it, as `dy2stc run` says it. */
dy_status capi_feed_types(const dy_program *p, const capi_inputs *in, int *order,
                          dy_type *types, dy_error *err);
/* One new tensor per feed (t[slot], copies of the data). */
dy_status capi_feed_tensors(const dy_program *p, const capi_inputs *in, dy_tensor **t,
                            dy_error *err);
/* The compile options keys[i] = values[i] (dy2stc_compile lists them)
 * applied to o and p: the pins first (dim:, shape:), then the rest. The
 * strings stay borrowed by o. */
dy_status capi_compile_options(dy_program *p, int n, const char *const *keys,
                               const char *const *values, dy_compile_options *o,
                               dy_error *err);

#endif
