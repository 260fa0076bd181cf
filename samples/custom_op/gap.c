/* gap.c - the custom op `gap` of Paddle Inference's custom-operator demo
 * (Paddle-Inference-Demo, c++/advanced/custom-operator-generic-plugin: a
 * PD_BUILD_OP plugin with a GPU kernel) for dy2stc: global average
 * pooling, x f32 [N, C, H, W] -> [N, C, 1, 1], each plane's mean. The
 * op's attributes (test_attr1, test_attr2) do not change the result.
 *
 *   dy2stc run model.pdmodel --custom-op gap=gap.c --input x=x.npy
 *   dy2stc compile model.pdmodel --custom-op gap=gap.c -o net
 *
 * The two functions and their signatures are what dy2stc looks for
 * (runtime/dy_custom.h, README.md "Custom ops"); dtype codes: 0 f32,
 * 1 i64, 2 bool, 3 i8, 4 u8, 5 i32. Plain C11, no dy2stc header.
 */
#include <stdint.h>

int dy_custom_gap_shape(int n_in, const int *dtypes, const int *ranks,
                        const int64_t *const *shapes, int *out_dtype, int *out_rank,
                        int64_t *out_shape);
void dy_custom_gap_run(int n_in, const void *const *in, const int *ranks,
                       const int64_t *const *shapes, void *out, int out_rank,
                       const int64_t *out_shape);

/* one f32 input of rank 4: [N, C, 1, 1] f32 (a -1, the batch, stays) */
int dy_custom_gap_shape(int n_in, const int *dtypes, const int *ranks,
                        const int64_t *const *shapes, int *out_dtype, int *out_rank,
                        int64_t *out_shape) {
  if (n_in != 1 || dtypes[0] != 0 || ranks[0] != 4)
    return 1;
  *out_dtype = 0;
  *out_rank = 4;
  out_shape[0] = shapes[0][0];
  out_shape[1] = shapes[0][1];
  out_shape[2] = 1;
  out_shape[3] = 1;
  return 0;
}

void dy_custom_gap_run(int n_in, const void *const *in, const int *ranks,
                       const int64_t *const *shapes, void *out, int out_rank,
                       const int64_t *out_shape) {
  (void)n_in, (void)ranks, (void)out_rank, (void)out_shape;
  const float *x = in[0];
  float *y = out;
  int64_t planes = shapes[0][0] * shapes[0][1], hw = shapes[0][2] * shapes[0][3];
  for (int64_t p = 0; p < planes; p++) {
    double sum = 0; /* the mean in double, then rounded once */
    for (int64_t i = 0; i < hw; i++)
      sum += x[p * hw + i];
    y[p] = (float)(sum / (double)hw);
  }
}
