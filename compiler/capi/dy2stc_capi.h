/* dy2stc_capi.h - the flat C API of libdy2stc.so (compiler/capi/: capi.c,
 * capi_compile.c, capi_util.c), for callers in other languages: the
 * Python package (python/dy2stc/_lib.py) calls it through ctypes. It is
 * the driver, the frontends and the static executor behind opaque
 * handles; no struct crosses the boundary, only plain arrays, strings and
 * numbers. Every fallible call returns 0 or a dy_status (non-zero) and
 * writes the library's one-line message into msg (n bytes) - the message
 * `dy2stc run`, `compile` and `check` print after "dy2stc: ".
 *
 *   dy2stc_model *m;  char msg[512];
 *   if (dy2stc_load("cnn.onnx", NULL, &m, msg, sizeof msg)) puts(msg);
 *   const void *data[] = {x};  int dt[] = {0};  int rk[] = {4};
 *   int64_t sh[] = {2, 3, 8, 8, 0, 0, 0, 0};    // DY_MAX_DIMS per input
 *   dy2stc_outputs *y;
 *   dy2stc_model_run(m, 1, NULL, dt, rk, sh, data, &y, msg, sizeof msg);
 *   ... dy2stc_outputs_data(y, 0) ...; dy2stc_outputs_free(y);
 *   dy2stc_model_free(m);
 *
 * Inputs are given as n arrays: names (NULL, or NULL entries: in feed
 * order), dtype codes (dy2stc_dtype_name), ranks, shapes (DY2STC_MAX_DIMS
 * int64s per input) and data (C order). Compile options are key/value
 * strings (dy2stc_compile lists the keys). The library never prints and
 * never exits; the progress of a compile reaches the caller's callback.
 */
#ifndef DY2STC_CAPI_H
#define DY2STC_CAPI_H

#include <stddef.h>
#include <stdint.h>

#define DY2STC_MAX_DIMS 8 /* int64s per shape in every shapes[] array */

typedef struct dy2stc_model dy2stc_model;         /* a loaded model */
typedef struct dy2stc_outputs dy2stc_outputs;     /* one run's outputs */
typedef struct dy2stc_compiled dy2stc_compiled;   /* a model built as a .so */
typedef struct dy2stc_localized dy2stc_localized; /* dy2stc_localize's answer */

/* A phase of long work (dy_progress_fn): phase names it ("import",
 * "pass:fold", "cc"), done of total steps (total 0: one step, starting). */
typedef void (*dy2stc_progress_fn)(void *ctx, const char *phase, int64_t done, int64_t total);

/* ---- capi_util.c: versions, dtypes ---- */

const char *dy2stc_version(void);  /* "0.1.0" */
/* A dtype code's name ("f32", "i64", "bool", "i8", "u8", "i32"), NULL past
 * the last; its element size in bytes. */
const char *dy2stc_dtype_name(int dtype);
int dy2stc_dtype_size(int dtype);

/* ---- capi.c: models and the static executor ---- */

/* Load a .dymodel (or NAME of NAME.dymodel), .onnx, .pdmodel / __model__
 * (params: its weights, NULL for the ones beside it) or .json model. */
int dy2stc_load(const char *path, const char *params, dy2stc_model **out, char *msg, size_t n);
void dy2stc_model_free(dy2stc_model *m);
/* Its inputs (output 0) or outputs (output 1): how many, and each one's
 * name (borrowed, valid until the model is freed), dtype code and rank. */
int dy2stc_model_count(const dy2stc_model *m, int output);
const char *dy2stc_model_name(const dy2stc_model *m, int output, int i);
int dy2stc_model_dtype(const dy2stc_model *m, int output, int i);
int dy2stc_model_rank(const dy2stc_model *m, int output, int i);
/* Dim d: >= 0 a static size; < 0 a symbolic one, whose text ("batch",
 * "seq", "2*batch") goes to buf (a static one's digits too). */
int64_t dy2stc_model_dim(const dy2stc_model *m, int output, int i, int d, char *buf, size_t n);
/* Run the model on the static executor (the reference `dy2stc run` is);
 * *out holds one tensor per output. Inputs as the header says; an input
 * whose dtype or shape is not the feed's is refused with the executor's
 * message. */
int dy2stc_model_run(const dy2stc_model *m, int n_inputs, const char *const *names,
                     const int *dtypes, const int *ranks, const int64_t *shapes,
                     const void *const *data, dy2stc_outputs **out, char *msg, size_t n);
int dy2stc_outputs_count(const dy2stc_outputs *o);
int dy2stc_outputs_dtype(const dy2stc_outputs *o, int i);
int dy2stc_outputs_rank(const dy2stc_outputs *o, int i);
int64_t dy2stc_outputs_dim(const dy2stc_outputs *o, int i, int d);
const void *dy2stc_outputs_data(const dy2stc_outputs *o, int i); /* borrowed */
int64_t dy2stc_outputs_nbytes(const dy2stc_outputs *o, int i);
void dy2stc_outputs_free(dy2stc_outputs *o);

/* ---- capi_compile.c: compiled code, check, localize ---- */

/* Compile m's model (loaded again from its file: m is not changed) with
 * the options keys[i] = values[i] and build it as cache_dir/<key>/
 * libmodel.so, where <key> hashes the generated C and the build options:
 * the same model and options reuse the library built before
 * (dy2stc_compiled_cached). Keys:
 *   max_batch N            bound on the batch (default 64)
 *   max_dim:NAME N         bound on size symbol NAME ("batch": max_batch)
 *   dim:NAME N             pin symbol NAME to N
 *   shape:INPUT d0,d1,...  pin input INPUT's shape
 *   threads N              split GEMM/conv kernels over N threads (1..64)
 *   opt_level 0|1|2        the pass pipeline's -O level (default 2)
 *   cc, cflags, target     the C compiler, its extra flags, --target
 *   plain_kernels, no_pack_a  0|1, as the CLI's flags
 *   max_iterations N       a while op's trip bound
 * progress (may be NULL) hears "import", each pass ("pass:NAME"), "plan",
 * "codegen" and, when the library is built, "cc". */
int dy2stc_compile(const dy2stc_model *m, int n_options, const char *const *keys,
                   const char *const *values, const char *cache_dir,
                   dy2stc_progress_fn progress, void *ctx, dy2stc_compiled **out, char *msg,
                   size_t n);
void dy2stc_compiled_free(dy2stc_compiled *c);
/* The built library's path and symbol prefix (borrowed), its arena bytes
 * (aligned to 64), whether it was reused from the cache, and the compiled
 * Program (borrowed: its inputs and outputs through dy2stc_model_*). */
const char *dy2stc_compiled_library(const dy2stc_compiled *c);
const char *dy2stc_compiled_prefix(const dy2stc_compiled *c);
int64_t dy2stc_compiled_arena_bytes(const dy2stc_compiled *c);
int dy2stc_compiled_cached(const dy2stc_compiled *c);
const dy2stc_model *dy2stc_compiled_model(const dy2stc_compiled *c);
/* Check inputs for the compiled code as the executor checks them (same
 * messages; plus the batch against max_batch) and give, for each input
 * given, its feed slot (order[i]), the batch and each output's shape
 * (out_shapes: DY2STC_MAX_DIMS per output) at the symbols' values. */
int dy2stc_compiled_prepare(const dy2stc_compiled *c, int n_inputs, const char *const *names,
                            const int *dtypes, const int *ranks, const int64_t *shapes,
                            int *order, int64_t *batch, int64_t *out_shapes, char *msg,
                            size_t n);

/* The first op whose compiled result departs from the static executor's
 * (dy_localize, `dy2stc check --localize`): compile options as for
 * dy2stc_compile, inputs as for dy2stc_model_run. plant_op >= 0 is the
 * test hook of dy_localize (-1: none). */
int dy2stc_localize(const dy2stc_model *m, int n_options, const char *const *keys,
                    const char *const *values, int n_inputs, const char *const *names,
                    const int *dtypes, const int *ranks, const int64_t *shapes,
                    const void *const *data, double rtol, double atol, int plant_op,
                    dy2stc_localized **out, char *msg, size_t n);
void dy2stc_localized_free(dy2stc_localized *l);
/* found (0 or 1), n_compared, op_id, n_shown, block, loop_op (-1: not in
 * a loop): by name */
int dy2stc_localized_int(const dy2stc_localized *l, const char *what);
/* n_bad, n_elements, line, trip (-1: not in a loop): by name */
int64_t dy2stc_localized_i64(const dy2stc_localized *l, const char *what);
/* op (its name), file, srcs, var: by name (borrowed) */
const char *dy2stc_localized_str(const dy2stc_localized *l, const char *what);
/* The k-th differing element shown: its index, expected and got values. */
void dy2stc_localized_shown(const dy2stc_localized *l, int k, int64_t *index, double *expected,
                            double *got);

#endif
