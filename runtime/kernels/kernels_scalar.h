/* kernels_scalar.h - the dy_* scalar math names of ir/acts.def's formulas
 * (the names of the generated code's math library, codegen/rt/
 * dy_mathlib.h), mapped to libm for the reference kernels: kernels_fused.c
 * compiles each EXPR of acts.def with these. sigmoid is the one of
 * kernels_core.c's sigmoid kernel (exp only of non-positive numbers).
 * Include it last: the names are macros. */
#ifndef DY_RUNTIME_KERNELS_SCALAR_H
#define DY_RUNTIME_KERNELS_SCALAR_H
#include <math.h>

static inline float dy_rt_sigmoidf(float x) {
  if (x >= 0.0f)
    return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}

#define dy_isnanf isnan
#define dy_fabsf fabsf
#define dy_fmaxf fmaxf
#define dy_fminf fminf
#define dy_expf expf
#define dy_expm1f expm1f
#define dy_logf logf
#define dy_sqrtf sqrtf
#define dy_tanhf tanhf
#define dy_erff erff
#define dy_sigmoidf dy_rt_sigmoidf

#endif /* DY_RUNTIME_KERNELS_SCALAR_H */
