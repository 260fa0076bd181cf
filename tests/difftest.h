/* difftest.h - the differential tester's generator and runner
 * (tests/difftest.c and the files difftest_gen.h lists), used by the
 * suite tests/test_difftest.c.
 *
 * A dt_prog is a random valid Program kept as a description: its values
 * (feeds with a per-feed seed, constants, op results) and its ops with
 * their attributes. The eager result of every value is computed while the
 * Program is generated (dy_apply on the ops, at the run batch), and each op
 * is kept only when inference accepts it, its eager result is finite and
 * bounded, and it is well conditioned there: its result moves little when
 * its f32 inputs move by a relative 1e-4 (integer and bool results not at
 * all), so a comparison near a tie, a cast near an integer, an argmax near
 * a tie or a mod near a multiple is never generated, and rounding
 * differences between the four paths cannot decide the answer.
 *
 * dt_check runs programs four ways against the eager values: the static
 * executor, and the C compiled at -O0 (no passes), at the default level,
 * and with --threads 2 (every program's files in one directory, one driver
 * executable for all of them, the translation units compiled two at a
 * time; the threaded code with -DDY_THREAD_MIN_WORK=1, so that every
 * kernel that can split does, however small). A mismatch is minimised
 * (dt_minimise: ops deleted, the batch and the feeds' dims shrunk, while
 * the same path still mismatches) and printed as text IR with
 * its seed.
 */
#ifndef DY_DIFFTEST_H
#define DY_DIFFTEST_H

#include "dy_compiler.h"

#define DT_MAX_VALS 128
#define DT_MAX_OPS 64
#define DT_MAX_FETCH 4
#define DT_MAX_IN 9      /* qconv2d's and qmatmul's inputs             */

typedef struct {
  const char *name;        /* a string literal (the schema's name)      */
  dy_attr_kind kind;
  int64_t i;
  double f;
  int n;
  int64_t ints[8];
  const char *s;           /* a string literal, or NULL: then sbuf       */
  char sbuf[48];           /* a string made here (reshape_dims' dims)    */
} dt_attr;

typedef struct {
  dy_op_kind kind;
  int n_in, in[DT_MAX_IN]; /* value indices                              */
  int n_attrs;
  dt_attr attrs[10];       /* the ones set; the rest take the schema's
                              defaults when the Program is built         */
  int out;                 /* value index of the result                  */
  double tol;              /* the op family's relative tolerance         */
} dt_op;

typedef enum { DT_FEED, DT_CONST, DT_OPV } dt_val_kind;

typedef struct {
  dt_val_kind kind;
  dy_type type;            /* declared: -1 is the batch                  */
  uint64_t seed;           /* a feed's data: regenerated at any batch    */
  double lo, hi;           /* ... f32, i8, u8 in [lo, hi), i64 in [0, hi) */
  dy_tensor *t;            /* eager value at the run batch (owned)       */
} dt_val;

typedef struct {
  uint64_t seed;
  int64_t batch, max_batch;
  int n_vals;
  dt_val v[DT_MAX_VALS];
  int n_ops;
  dt_op ops[DT_MAX_OPS];
  int n_fetch;
  int fetch[DT_MAX_FETCH]; /* value indices                              */
  uint64_t rng;            /* generator state                            */
} dt_prog;

/* The four ways a program runs besides eager (bits of a mask). */
enum { DT_EXEC = 1, DT_O0 = 2, DT_O2 = 4, DT_T2 = 8, DT_ALL = 15 };
const char *dt_mode_name(int mode);

/* A new random program from seed (3 to max_ops ops); NULL only when out
 * of memory. Free with dt_free. */
dt_prog *dt_generate(uint64_t seed, int max_ops);
void dt_free(dt_prog *g);
/* The Program of g (feeds typed with -1, constants persistable, every
 * attribute spelt out, op k at source line difftest:k+1); NULL on error,
 * with err filled. Caller frees. */
dy_program *dt_program(const dt_prog *g, dy_error *err);
/* Print g as text IR with its seed and batch. */
void dt_print(const dt_prog *g, FILE *f);
/* The program's tolerance: |got - ref| <= tol * (1 + |ref|). */
double dt_tol(const dt_prog *g);

/* Run progs[0..n) the ways in modes, in scratch directory dir (made
 * afresh). bad[i] gets the mask of modes where program i differs from
 * eager (or failed); a line per failing (program, mode) goes to log (may
 * be NULL). Returns false when the harness itself failed (a driver that
 * does not build), with the reason on stderr. */
bool dt_check(dt_prog *const *progs, int n, int modes, const char *dir, int *bad,
              FILE *log);
/* Minimise g while it still mismatches in mode (one bit): returns a new
 * program (dt_free) or NULL when nothing could be removed. */
dt_prog *dt_minimise(const dt_prog *g, int mode, const char *dir);

#endif
