/* dy_static.h - the markers `dy2stc compile net.c` looks for in a model
 * file (included by dy_runtime.h). They change nothing when the file is
 * compiled normally; dy2stc reads them with libclang.
 *
 *   #include "dy_runtime.h"
 *
 *   DY_TO_STATIC("x: f32[-1,16]")
 *   static dy_tensor *net_forward(dy_layer *self, dy_tensor *x) { ... }
 *
 *   DY_MODEL
 *   dy_layer *make_net(void) { ... }
 *
 *   $ dy2stc compile net.c -o net        # trace, compile, build ./net
 *
 * DY_MODEL marks the model's constructor, `dy_layer *NAME(void)`: dy2stc
 * calls it after dy_seed(0) (or --seed N) to get the layer whose
 * parameters the Program holds; with --params P.dyparams (a file
 * dy_jit_save of the same model wrote) the weights are then P's, matched
 * by parameter name, dtype and shape.
 *
 * DY_TO_STATIC(SPEC, ...) marks the forward function to capture, and gives
 * one input spec per input, in order: "NAME: DTYPE[DIMS]" with DTYPE f32,
 * i64 or bool and DIMS a comma-separated list where -1 is the dynamic batch
 * and a name (seq) a named dynamic dim, DY_DIM("seq") (Paddle's InputSpec;
 * "f32[]" is a scalar). Up to 8 specs. Accepted
 * signatures (the layer argument, when present, is the DY_MODEL layer):
 *
 *   dy_tensor *f(dy_layer *self, dy_tensor *x, dy_tensor *y, ...)  one
 *                                              dy_tensor * per spec
 *   dy_tensor *f(dy_tensor *x, ...)            the same without the layer
 *   dy_tensor *f(dy_layer *self, dy_tensor *const *in, int n_in)
 *                                              a dy_layer_vtable forward
 *
 * Exactly one function of the file carries each marker. While tracing,
 * dy2stc #includes the file into a generated driver with DY2STC_DRIVER
 * defined and the file's own main() renamed (it is never called), so a
 * model file can also be an ordinary program that runs the model eagerly.
 *
 * Inside the DY_TO_STATIC function, an if, while or for whose condition
 * is dy_bool(t) or !dy_bool(t) (t a bool tensor of one element) keeps its
 * control flow in the Program: dy2stc rewrites it into dy_cond / dy_while
 * before tracing (`dy2stc convert net.c` prints the result; what it
 * refuses is listed in compiler/cfront/cconvert.c). Conditions on plain C values
 * are evaluated once, while tracing.
 *
 * Both expand to clang's annotate attribute ("dy2stc:model",
 * "dy2stc:to_static:SPEC;SPEC..."), which libclang reports on the
 * function; other compilers see nothing.
 */
#ifndef DY_STATIC_H
#define DY_STATIC_H

#if defined(__clang__)
#define DY__ANNOTATE(s) __attribute__((annotate(s)))
#else
#define DY__ANNOTATE(s)
#endif

#define DY_MODEL DY__ANNOTATE("dy2stc:model")

/* The specs joined with ';' (which no spec contains), one macro per count. */
#define DY__SPECS1(a) a
#define DY__SPECS2(a, ...) a ";" DY__SPECS1(__VA_ARGS__)
#define DY__SPECS3(a, ...) a ";" DY__SPECS2(__VA_ARGS__)
#define DY__SPECS4(a, ...) a ";" DY__SPECS3(__VA_ARGS__)
#define DY__SPECS5(a, ...) a ";" DY__SPECS4(__VA_ARGS__)
#define DY__SPECS6(a, ...) a ";" DY__SPECS5(__VA_ARGS__)
#define DY__SPECS7(a, ...) a ";" DY__SPECS6(__VA_ARGS__)
#define DY__SPECS8(a, ...) a ";" DY__SPECS7(__VA_ARGS__)
#define DY__SPECS_PICK(_1, _2, _3, _4, _5, _6, _7, _8, m, ...) m
#define DY__SPECS(...)                                                        \
  DY__SPECS_PICK(__VA_ARGS__, DY__SPECS8, DY__SPECS7, DY__SPECS6, DY__SPECS5, \
                 DY__SPECS4, DY__SPECS3, DY__SPECS2, DY__SPECS1, -)(__VA_ARGS__)

#define DY_TO_STATIC(...) DY__ANNOTATE("dy2stc:to_static:" DY__SPECS(__VA_ARGS__))

#endif /* DY_STATIC_H */
