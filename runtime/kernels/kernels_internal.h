/* kernels_internal.h - the helpers of kernels_util.c, shared by the
 * kernel files of runtime/kernels/ (the families' kernels_<family>.c and
 * the table, kernels.c). Private to this folder: not on any include path,
 * not installed. */
#ifndef DY_KERNELS_INTERNAL_H
#define DY_KERNELS_INTERNAL_H

#include "dy_runtime_internal.h"

/* ---- checks shared by every kernel ---- */

/* t must be a concrete tensor whose buffer holds its type's bytes. */
dy_status dy_kcheck_tensor(const dy_op *op, const dy_tensor *t,
                           const char *what, int i, dy_error *err);
/* Arity (want_in inputs) and the health of every input and out[0]. */
dy_status dy_kcheck_io(const dy_op *op, dy_tensor *const *in, int n_in,
                       int want_in, dy_tensor *const *out, dy_error *err);
/* One f32 input, one output of the same type. */
dy_status dy_kunary_check(const dy_op *op, dy_tensor *const *in, int n_in,
                          dy_tensor *const *out, dy_error *err);
dy_status dy_kunsupported_dtype(const dy_op *op, dy_dtype t, dy_error *err);
dy_status dy_kshape_error(const dy_op *op, const char *what,
                          const dy_type *got, const dy_type *want,
                          dy_error *err);
/* Contiguous (C order) element strides of a shape. */
void dy_contiguous_strides(int rank, const int64_t *shape, int64_t *strides);
/* Steps the C-order index idx[0..rank) over shape by one, keeping *off
 * (the sum of idx[d] * stride[d]) in step. */
void dy_odometer_next(int rank, const int64_t *shape, const int64_t *stride,
                      int64_t *idx, int64_t *off);
/* Checks a unary f32 op and writes y[i] = f(x[i]) for every element. */
dy_status dy_kmap_f32(const dy_op *op, dy_tensor *const *in, int n_in,
                      dy_tensor *const *out, float (*f)(float), dy_error *err);
/* Checks out[0] against inference on the inputs' types; unless alias_ok,
 * also that out[0] shares no memory with a (non-empty) input. */
dy_status dy_kcheck_inferred(const dy_op *op, dy_tensor *const *in, int n_in,
                             dy_tensor *const *out, bool alias_ok,
                             dy_error *err);

/* dy_kcheck_io and dy_kcheck_inferred without aliasing: arity, tensor
 * health, and out[0]'s type against inference. */
dy_status dy_kcheck(const dy_op *op, dy_tensor *const *in, int n_in, int want_in,
                    dy_tensor *const *out, dy_error *err);

/* ---- reductions ---- */

/* The output offset stride of each dim of t under a reduction over axes
 * (every axis when na is 0): 0 on a reduced dim, else the C-order stride
 * of the output made of the kept dims. */
void dy_reduce_strides(const dy_type *t, const int64_t *axes, int na,
                       int64_t *ostr);

/* ---- the broadcast iterator ---- */

/* How to walk a contiguous output with two broadcast inputs. The output's
 * strides are implied (contiguous); sa/sb are the inputs' element strides
 * per output dim, 0 where the input is broadcast. */
typedef struct {
  int rank;                    /* >= 1 after collapsing */
  int64_t shape[DY_MAX_DIMS];
  int64_t sa[DY_MAX_DIMS];
  int64_t sb[DY_MAX_DIMS];
} dy_bcast_plan;

/* Build the plan for a op b -> out, checking out has the broadcast type. */
dy_status dy_bcast_plan_make(const dy_op *op, const dy_type *a,
                             const dy_type *b, const dy_type *out,
                             dy_bcast_plan *pl, dy_error *err);

/* An inner loop: o[i] = a[i*sa] OP b[i*sb] for i < n. Returns 0, or
 * nonzero when an element is undefined (integer division by zero). */
typedef int (*dy_binary_loop)(const void *a, int64_t sa, const void *b,
                           int64_t sb, void *o, int64_t n);

/* Walk the plan, calling loop once per innermost row. es is the element
 * size in bytes. Returns the first nonzero result of loop. */
int dy_bcast_run(const dy_bcast_plan *pl, dy_binary_loop loop, size_t es,
                 const char *a, const char *b, char *o);

/* One inner loop per (op, dtype): EXPR combines x and y. The common stride
 * patterns (both contiguous, one side a scalar) get their own loops so the
 * compiler can vectorise them. */
#define DEFINE_BINARY_LOOP(fname, T, EXPR)                                   \
  static int fname(const void *pa, int64_t sa, const void *pb, int64_t sb,  \
                   void *po, int64_t n) {                                   \
    const T *a = pa, *b = pb;                                               \
    T *o = po;                                                              \
    if (sa == 1 && sb == 1) {                                               \
      for (int64_t i = 0; i < n; i++) {                                     \
        T x = a[i], y = b[i];                                               \
        o[i] = (EXPR);                                                      \
      }                                                                     \
    } else if (sa == 1 && sb == 0) {                                        \
      T y = b[0];                                                           \
      for (int64_t i = 0; i < n; i++) {                                     \
        T x = a[i];                                                         \
        o[i] = (EXPR);                                                      \
      }                                                                     \
    } else if (sa == 0 && sb == 1) {                                        \
      T x = a[0];                                                           \
      for (int64_t i = 0; i < n; i++) {                                     \
        T y = b[i];                                                         \
        o[i] = (EXPR);                                                      \
      }                                                                     \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++) {                                     \
        T x = a[i * sa], y = b[i * sb];                                     \
        o[i] = (EXPR);                                                      \
      }                                                                     \
    }                                                                       \
    return 0;                                                               \
  }

/* A whole binary op: checks, plan, in-place rules, loop by dtype (f32,
 * i64; NULL when the dtype is unsupported). */
dy_status dy_kbinary(const dy_op *op, dy_tensor *const *in, int n_in,
                     dy_tensor *const *out, dy_binary_loop f32,
                     dy_binary_loop i64, dy_error *err);

#endif
