/* eager.c - the eager runtime's time for a model, as the baseline.
 *
 * Loads NAME.dymodel (the Program exactly as dy_jit_save wrote it, before
 * any dy2stc pass) and runs it on the static executor: the runtime's eager
 * kernels op by op, as the eager calls of the model's C source would run
 * them (matmul and conv on OpenBLAS sgemm, batch norm, relu, pooling each
 * their own pass), on random inputs at the given batch. OpenBLAS on one
 * thread. Prints the median and minimum of RUNS runs after one warm-up.
 *
 *   eager MODEL.dymodel BATCH RUNS
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench_util.h"
#include "dy_runtime.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: eager MODEL.dymodel BATCH RUNS\n");
    return 2;
  }
  openblas_set_num_threads(1);
  int64_t batch = atoll(argv[2]);
  int runs = atoi(argv[3]);
  dy_error err = {0};
  dy_program *p = NULL;
  if (dy_jit_load(argv[1], &p, &err)) {
    fprintf(stderr, "eager: %s\n", err.msg);
    return 1;
  }
  dy_tensor *in[DY_MAX_FEEDS] = {0}, *out[DY_MAX_FEEDS] = {0};
  for (int i = 0; i < p->n_feeds; i++) {
    dy_type t = p->vars[p->feeds[i]]->type;
    for (int d = 0; d < t.rank; d++)
      if (t.shape[d] < 0)
        t.shape[d] = batch;
    in[i] = dy_tensor_new(t.dtype, t.rank, t.shape);
    int64_t n = dy_tensor_numel(in[i]);
    if (t.dtype == DY_F32)
      for (int64_t k = 0; k < n; k++)
        ((float *)in[i]->data)[k] = bench_value(7, i, k);
    else
      memset(in[i]->data, 0, (size_t)in[i]->nbytes);
  }
  double *t = malloc(sizeof *t * (size_t)(runs > 0 ? runs : 1));
  for (int r = -1; r < runs; r++) {
    double t0 = bench_now_ms();
    if (dy_executor_run(p, in, p->n_feeds, out, p->n_fetches, &err)) {
      fprintf(stderr, "eager: %s\n", err.msg);
      return 1;
    }
    if (r >= 0)
      t[r] = bench_now_ms() - t0;
    for (int i = 0; i < p->n_fetches; i++) {
      dy_tensor_free(out[i]);
      out[i] = NULL;
    }
  }
  double med = bench_median(t, runs);
  printf("median %.4g ms\nmin %.4g ms\n", med, t[0]);
  for (int i = 0; i < p->n_feeds; i++)
    dy_tensor_free(in[i]);
  free(t);
  dy_program_free(p);
  return 0;
}
