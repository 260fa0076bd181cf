/* dy_math.h - eager entry points (and layers) of the math op family.
 * Included by dy_runtime.h; see ir/ops_math.def for the ops and
 * runtime/kernels/kernels_math.c for their exact semantics.
 *
 *   dy_tensor *h = dy_gelu(dy_scale(x, 2.0f, 1.0f), false);
 *   dy_tensor *m = dy_where(dy_greater(x, y), x, dy_neg(y));
 *   dy_tensor *i = dy_cast(m, DY_I64);
 *
 * Like every op, each returns a new tensor owned by the innermost open
 * scope (else by the caller), or NULL on error (dy_last_error names the
 * call's source line); a NULL input gives NULL. Each dy_<op>(...) macro is
 * dy_<op>_at(..., DY_HERE); the functions carry the _at suffix so that
 * names such as exp, log or sqrt never clash with <math.h>.
 *
 * Attributes are explicit: Paddle's and ONNX's defaults differ for some
 * (hard_sigmoid: Paddle slope 1/6, offset 0.5; ONNX alpha 0.2, beta 0.5).
 * Paddle's defaults: leaky_relu alpha 0.01, elu alpha 1, softplus beta 1
 * threshold 20, gelu approximate false.
 */
#ifndef DY_MATH_H
#define DY_MATH_H

#include "dy_runtime.h"

/* ---- the plain elementwise ops ----
 *
 * Declared in dy_runtime.h (macros in the generated dy_ew_api.h) from the
 * DY_UNARY / DY_BINARY lines of ir/ops_math.def, whose last column says
 * what each computes:
 *
 *   dy_silu(x) dy_hard_swish(x)                             f32
 *   dy_exp dy_log dy_sqrt dy_rsqrt dy_erf dy_reciprocal (x)  f32
 *   dy_abs dy_neg (x)                                       f32 or i64
 *   dy_pow(x, y)                                            f32
 *   dy_minimum dy_maximum (x, y)   f32 or i64; NaN propagates as in numpy
 *                                  (not C's fminf/fmaxf)
 *   dy_equal dy_greater dy_less (x, y)   f32, i64 or bool (both alike),
 *                                        DY_BOOL result
 *
 * Binary ones broadcast numpy-style. The .def is the truth: a new line
 * there adds its function and macro without an edit here.
 */

/* ---- activations with attributes (f32) ---- */

/* approximate: false = exact erf form, true = tanh form. */
dy_tensor *dy_gelu_at(dy_tensor *x, bool approximate, dy_srcloc loc);
/* max(0, min(1, slope * x + offset)) */
dy_tensor *dy_hard_sigmoid_at(dy_tensor *x, float slope, float offset,
                              dy_srcloc loc);
dy_tensor *dy_leaky_relu_at(dy_tensor *x, float alpha, dy_srcloc loc);
dy_tensor *dy_elu_at(dy_tensor *x, float alpha, dy_srcloc loc);
/* min <= max; either may be +-INFINITY. NaN stays NaN. */
dy_tensor *dy_clip_at(dy_tensor *x, float min, float max, dy_srcloc loc);
/* clip(x, 0, 6): one clip op in the Program. */
dy_tensor *dy_relu6_at(dy_tensor *x, dy_srcloc loc);
/* beta * x > threshold ? x : log(1 + e^(beta x)) / beta; beta != 0. */
dy_tensor *dy_softplus_at(dy_tensor *x, float beta, float threshold,
                          dy_srcloc loc);

#define dy_gelu(x, approximate) dy_gelu_at((x), (approximate), DY_HERE)
#define dy_hard_sigmoid(x, slope, offset) \
  dy_hard_sigmoid_at((x), (slope), (offset), DY_HERE)
#define dy_leaky_relu(x, alpha) dy_leaky_relu_at((x), (alpha), DY_HERE)
#define dy_elu(x, alpha) dy_elu_at((x), (alpha), DY_HERE)
#define dy_clip(x, min, max) dy_clip_at((x), (min), (max), DY_HERE)
#define dy_relu6(x) dy_relu6_at((x), DY_HERE)
#define dy_softplus(x, beta, threshold) \
  dy_softplus_at((x), (beta), (threshold), DY_HERE)

/* ---- scale ---- */

/* Paddle's scale: bias_after_scale ? scale * x + bias : scale * (x + bias) */
dy_tensor *dy_scale_at(dy_tensor *x, float scale, float bias,
                       bool bias_after_scale, dy_srcloc loc);

/* scale * x + bias (Paddle's default bias_after_scale=True) */
#define dy_scale(x, scale, bias) dy_scale_at((x), (scale), (bias), true, DY_HERE)

/* ---- pow with a number ---- */

/* x ** y for a number y (Paddle's pow(x, 2.0)): y becomes a rank-0
 * constant (a full op in a Program). */
dy_tensor *dy_pow_scalar_at(dy_tensor *x, float y, dy_srcloc loc);
#define dy_pow_scalar(x, y) dy_pow_scalar_at((x), (y), DY_HERE)

/* ---- where, cast ---- */

/* cond ? x : y elementwise; cond is bool, x and y of one dtype; all three
 * broadcast together. */
dy_tensor *dy_where_at(dy_tensor *cond, dy_tensor *x, dy_tensor *y,
                       dy_srcloc loc);
/* To f32, i64 or bool. f32 -> i64 truncates toward zero, NaN -> 0, and
 * saturates beyond the i64 range; -> bool is x != 0. */
dy_tensor *dy_cast_at(dy_tensor *x, dy_dtype dtype, dy_srcloc loc);

#define dy_where(cond, x, y) dy_where_at((cond), (x), (y), DY_HERE)
#define dy_cast(x, dtype) dy_cast_at((x), (dtype), DY_HERE)

/* ---- activation layers, for Sequential ---- */

/* A layer applying one single-input op of the family with the given
 * attributes (int and float only; copied). Returns NULL (error recorded)
 * for an op that is not elementwise unary or attributes that do not fit.
 * Free with dy_layer_free (or let a parent own it). */
dy_layer *dy_activation_layer_new(dy_op_kind kind, const dy_attr *attrs,
                                  int n_attrs);
dy_layer *dy_gelu_layer_new(bool approximate);    /* Paddle's GELU      */
dy_layer *dy_silu_layer_new(void);                /* SiLU               */
dy_layer *dy_hard_swish_layer_new(void);          /* Hardswish          */
dy_layer *dy_leaky_relu_layer_new(float alpha);   /* LeakyReLU          */

#endif
