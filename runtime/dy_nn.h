/* dy_nn.h - the nn op family: convolution, pooling, normalisation and
 * dropout, as eager ops and as layers. Included by dy_runtime.h; the ops
 * are in ir/ops_nn.def and their exact semantics in ir/infer/infer_nn.c.
 *
 * Layout is NCHW. Optional settings of conv and pool come in small structs
 * whose zero fields mean "the default", and the macros take the fields as
 * designated initialisers, so a call names only what it changes:
 *
 *   y = dy_conv2d(x, w, .stride = {2, 2}, .padding = {1, 1, 1, 1});
 *   y = dy_conv2d(x, w, 0);                               // all defaults
 *   y = dy_conv2d(x, w, .groups = 8);                     // depthwise, C = 8
 *   p = dy_max_pool2d(y, .kernel = {3, 3}, .stride = {2, 2}, .ceil_mode = true);
 *   g = dy_global_avg_pool2d(p);
 *
 * Like every op, each returns a new scope-owned tensor, or NULL after an
 * error (dy_last_error names the call's source line), and records itself
 * into an active trace.
 */
#ifndef DY_NN_H
#define DY_NN_H

#include "dy_runtime.h"

/* ------------------------------------------------------------------ */
/* ops_nn.c: eager entry points                                        */
/* ------------------------------------------------------------------ */

/* Convolution settings. Zero fields take the default. */
typedef struct {
  int64_t stride[2];    /* [h, w]; 0 means 1                              */
  int64_t padding[4];   /* [top, left, bottom, right] zeros around x      */
  int64_t dilation[2];  /* [h, w]; 0 means 1                              */
  int64_t groups;       /* 0 means 1; groups == channels is depthwise     */
} dy_conv2d_params;

/* conv2d: x [N, C, H, W], w [O, C/groups, kh, kw] -> [N, O, Ho, Wo] with
 * Ho = (H + top + bottom - dilation_h*(kh-1) - 1) / stride_h + 1. No bias
 * (add one shaped [O, 1, 1]). */
dy_tensor *dy_conv2d_at(dy_tensor *x, dy_tensor *w, dy_conv2d_params p,
                        dy_srcloc loc);
#define dy_conv2d(x, w, ...) \
  dy_conv2d_at((x), (w), (dy_conv2d_params){__VA_ARGS__}, DY_HERE)

typedef struct {
  int64_t stride[2];          /* 0 means 1                                */
  int64_t padding[4];         /* [top, left, bottom, right] cut from y    */
  int64_t output_padding[2];  /* extra rows/cols at the bottom/right, each
                                 smaller than the stride or the dilation  */
  int64_t dilation[2];        /* 0 means 1                                */
  int64_t groups;             /* 0 means 1                                */
} dy_conv2d_transpose_params;

/* conv2d_transpose (the gradient of conv2d with respect to its input):
 * x [N, C, H, W], w [C, O/groups, kh, kw] -> [N, O, Ho, Wo] with
 * Ho = (H-1)*stride_h - top - bottom + dilation_h*(kh-1) + output_padding_h + 1. */
dy_tensor *dy_conv2d_transpose_at(dy_tensor *x, dy_tensor *w,
                                  dy_conv2d_transpose_params p, dy_srcloc loc);
#define dy_conv2d_transpose(x, w, ...)                                         \
  dy_conv2d_transpose_at((x), (w), (dy_conv2d_transpose_params){__VA_ARGS__}, \
                         DY_HERE)

/* Pooling settings. kernel is required; zero fields otherwise default. */
typedef struct {
  int64_t kernel[2];        /* [h, w]                                      */
  int64_t stride[2];        /* 0 means the kernel size (Paddle's default)  */
  int64_t padding[4];       /* [top, left, bottom, right], each smaller
                               than the kernel; max ignores padding        */
  bool ceil_mode;           /* round the output size up; a last window must
                               still start inside the input or its top/left
                               padding                                     */
  bool count_include_pad;   /* avg: divide by the window including padding
                               (Paddle exclusive=False), else by the
                               in-bounds elements                          */
} dy_pool2d_params;

dy_tensor *dy_max_pool2d_at(dy_tensor *x, dy_pool2d_params p, dy_srcloc loc);
dy_tensor *dy_avg_pool2d_at(dy_tensor *x, dy_pool2d_params p, dy_srcloc loc);
#define dy_max_pool2d(x, ...) \
  dy_max_pool2d_at((x), (dy_pool2d_params){__VA_ARGS__}, DY_HERE)
#define dy_avg_pool2d(x, ...) \
  dy_avg_pool2d_at((x), (dy_pool2d_params){__VA_ARGS__}, DY_HERE)

/* Adaptive pooling to an [out_h, out_w] output: window i along an axis of
 * size n is [floor(i*n/out), ceil((i+1)*n/out)). */
dy_tensor *dy_adaptive_avg_pool2d_at(dy_tensor *x, int64_t out_h, int64_t out_w,
                                     dy_srcloc loc);
dy_tensor *dy_adaptive_max_pool2d_at(dy_tensor *x, int64_t out_h, int64_t out_w,
                                     dy_srcloc loc);
#define dy_adaptive_avg_pool2d(x, oh, ow) \
  dy_adaptive_avg_pool2d_at((x), (oh), (ow), DY_HERE)
#define dy_adaptive_max_pool2d(x, oh, ow) \
  dy_adaptive_max_pool2d_at((x), (oh), (ow), DY_HERE)

/* Pool the whole H x W plane: [N, C, H, W] -> [N, C, 1, 1]. */
dy_tensor *dy_global_avg_pool2d_at(dy_tensor *x, dy_srcloc loc);
dy_tensor *dy_global_max_pool2d_at(dy_tensor *x, dy_srcloc loc);
#define dy_global_avg_pool2d(x) dy_global_avg_pool2d_at((x), DY_HERE)
#define dy_global_max_pool2d(x) dy_global_max_pool2d_at((x), DY_HERE)

/* batch_norm: x [N, C, ...], the rest [C]. training: normalise with this
 * batch's mean and biased variance per channel (over N and the spatial
 * dims); else with mean/var. The running statistics are not updated here:
 * the BatchNorm2D layer does that. momentum is recorded for the Program. */
dy_tensor *dy_batch_norm_at(dy_tensor *x, dy_tensor *scale, dy_tensor *bias,
                            dy_tensor *mean, dy_tensor *var, double eps,
                            double momentum, bool training, dy_srcloc loc);
#define dy_batch_norm(x, scale, bias, mean, var, eps, momentum, training)      \
  dy_batch_norm_at((x), (scale), (bias), (mean), (var), (eps), (momentum), \
                   (training), DY_HERE)

/* layer_norm over dims [begin_norm_axis, rank) (negative counts from the
 * end); scale and bias are 1-D of those dims' product, or their shape. */
dy_tensor *dy_layer_norm_at(dy_tensor *x, dy_tensor *scale, dy_tensor *bias,
                            int begin_norm_axis, double eps, dy_srcloc loc);
#define dy_layer_norm(x, scale, bias, axis, eps) \
  dy_layer_norm_at((x), (scale), (bias), (axis), (eps), DY_HERE)

/* group_norm: x [N, C, ...] in `groups` groups of C/groups channels;
 * scale and bias [C]. */
dy_tensor *dy_group_norm_at(dy_tensor *x, dy_tensor *scale, dy_tensor *bias,
                            int64_t groups, double eps, dy_srcloc loc);
#define dy_group_norm(x, scale, bias, groups, eps) \
  dy_group_norm_at((x), (scale), (bias), (groups), (eps), DY_HERE)

/* dropout, Paddle's "upscale_in_train": in training each element is zeroed
 * with probability p and the rest scaled by 1/(1-p); otherwise the identity.
 * The mask is a hash of (seed, element index) (runtime/kernels/
 * kernels_nn.c); a training call draws the seed from the seeded generator
 * (dy_rand_u64) and records it as the op's attribute, so a traced Program
 * and the generated C replay the same mask. */
dy_tensor *dy_dropout_at(dy_tensor *x, double p, bool training, dy_srcloc loc);
#define dy_dropout(x, p, training) dy_dropout_at((x), (p), (training), DY_HERE)

/* ------------------------------------------------------------------ */
/* layers_nn.c: layers                                                 */
/* ------------------------------------------------------------------ */

/* Conv2D: weight [O, C/groups, kh, kw] and (if bias) bias [O, 1, 1], both
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = C/groups*kh*kw, drawn in
 * that order from the seeded generator. NULL (error recorded) when C or O
 * does not divide by groups. */
dy_layer *dy_conv2d_layer_new(int64_t in_channels, int64_t out_channels,
                              int64_t kernel_h, int64_t kernel_w,
                              dy_conv2d_params p, bool bias);
/* Conv2DTranspose: weight [C, O/groups, kh, kw], bias [O, 1, 1], bounds
 * from fan_in = O/groups*kh*kw. */
dy_layer *dy_conv2d_transpose_layer_new(int64_t in_channels, int64_t out_channels,
                                        int64_t kernel_h, int64_t kernel_w,
                                        dy_conv2d_transpose_params p, bool bias);
/* BatchNorm2D (also fine for [N, C] and [N, C, L]): weight 1, bias 0,
 * _mean 0, _variance 1, all [C]. Paddle's defaults: momentum 0.9,
 * epsilon 1e-5. In train mode a call normalises with the batch's statistics
 * and, when the input has data, updates the running ones in place:
 * running = momentum * running + (1 - momentum) * batch (biased variance).
 * In eval mode it uses the running statistics. */
dy_layer *dy_batch_norm2d_new(int64_t num_features, double momentum,
                              double epsilon);
/* LayerNorm over the trailing dims normalized_shape (rank of them): weight
 * 1 and bias 0, 1-D of their product (Paddle's layout). */
dy_layer *dy_layer_norm_layer_new(int rank, const int64_t *normalized_shape,
                                  double epsilon);
/* GroupNorm: weight 1 and bias 0, [channels]. */
dy_layer *dy_group_norm_layer_new(int64_t groups, int64_t channels,
                                  double epsilon);
/* Dropout: drops in train mode only. */
dy_layer *dy_dropout_layer_new(double p);
/* MaxPool2D, AvgPool2D, AdaptiveAvgPool2D. */
dy_layer *dy_max_pool2d_layer_new(dy_pool2d_params p);
dy_layer *dy_avg_pool2d_layer_new(dy_pool2d_params p);
dy_layer *dy_adaptive_avg_pool2d_layer_new(int64_t out_h, int64_t out_w);

#endif
