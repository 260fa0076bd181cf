/* op_table.h - the per-op table test, in the style of ggml's
 * test-backend-ops: every case names an op, its attributes and input
 * types, and test_ops.c runs it three ways — the eager kernel (dy_apply),
 * the static executor on a one-op Program, and the generated C compiled
 * with -std=c99 -Wall -Wextra -Werror -pedantic — and compares them.
 *
 * Each op family lists its cases in its own file (op_cases_<family>.c):
 *
 *   static const dy_op_case cases[] = {
 *     {.label = "add [2,3]+[3]", .kind = DY_OP_ADD, .n_in = 2,
 *      .in = {F32(2, 2, 3), F32(1, 3)}},
 *     {.label = "conv2d groups=C", .kind = DY_OP_CONV2D, .n_in = 2,
 *      .in = {F32(4, -1, 8, 7, 7), F32(4, 8, 1, 3, 3)}, .consts = 1u << 1,
 *      .n_attrs = 4, .attrs = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2), ...}},
 *   };
 *   const dy_op_case_list dy_op_cases_nn = DY_CASE_LIST(cases);
 */
#ifndef DY_OP_TABLE_H
#define DY_OP_TABLE_H

#include "dy_compiler.h"

/* Inputs a case may have (qconv2d and qmatmul take 9). */
#define DY_CASE_MAX_IN 10

typedef struct {
  const char *label;       /* shown on failure */
  dy_op_kind kind;
  int n_attrs;
  dy_attr attrs[10];
  int n_in;
  dy_type in[DY_CASE_MAX_IN]; /* declared types; -1 is the batch         */
  unsigned consts;         /* bit i: input i is a persistable constant
                              (a weight) instead of a feed; static shape */
  int64_t batch;           /* the batch when run (0: 2)                   */
  float lo, hi;            /* random f32 inputs in [lo, hi), i64 in
                              [lo, hi) as integers (lo == hi: [-1, 1),
                              i64 [0, 4)); bool inputs are random 0/1,
                              i8 and u8 over their range, i32 in
                              [-2000, 2000)                               */
  const void *data[DY_CASE_MAX_IN]; /* explicit input data (concrete shape), or
                              NULL for random                            */
  double tol;              /* |got - ref| <= tol * (1 + |ref|); 0: 1e-5  */
  const float *expect;     /* hand-computed values of the f32 output,
                              checked against the eager kernel (or NULL) */
  int n_expect;
  dy_status expect_error;  /* nonzero: inference must reject the case
                              with this status (bad input), nothing runs */
  bool no_grad;            /* forward edge values where a derivative means
                              nothing (test_grad skips the case)          */
} dy_op_case;

typedef struct {
  const dy_op_case *cases;
  int n;
} dy_op_case_list;

#define DY_CASE_LIST(arr) {(arr), (int)(sizeof(arr) / sizeof((arr)[0]))}

/* dy_type literals: F32(rank, dims...) */
#define F32(r, ...) {.dtype = DY_F32, .rank = (r), .shape = {__VA_ARGS__}}
#define I64(r, ...) {.dtype = DY_I64, .rank = (r), .shape = {__VA_ARGS__}}
#define BOOL(r, ...) {.dtype = DY_BOOL, .rank = (r), .shape = {__VA_ARGS__}}
#define SCALAR_F32 {.dtype = DY_F32, .rank = 0}
#define I8(r, ...) {.dtype = DY_I8, .rank = (r), .shape = {__VA_ARGS__}}
#define U8(r, ...) {.dtype = DY_U8, .rank = (r), .shape = {__VA_ARGS__}}
#define I32(r, ...) {.dtype = DY_I32, .rank = (r), .shape = {__VA_ARGS__}}

extern const dy_op_case_list dy_op_cases_core;
extern const dy_op_case_list dy_op_cases_nn;
extern const dy_op_case_list dy_op_cases_math;
extern const dy_op_case_list dy_op_cases_shape;
extern const dy_op_case_list dy_op_cases_extra;
extern const dy_op_case_list dy_op_cases_train;
extern const dy_op_case_list dy_op_cases_quant;
extern const dy_op_case_list dy_op_cases_lod;

/* op_inputs.c: input i of case c at the given batch (its -1 dims), a new
 * tensor owned like any op result: the case's data, or random values from
 * the caller's xorshift state *rng (f32 in [lo, hi), i64 in [lo, hi) as
 * integers; lo == hi: [-1, 1) and [0, 4); bool 0/1). */
uint64_t dy_case_u64(uint64_t *rng);
double dy_case_uniform(uint64_t *rng);   /* [0, 1) */
dy_tensor *dy_case_input(const dy_op_case *c, int i, int64_t batch, uint64_t *rng);

#endif
