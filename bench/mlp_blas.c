/* mlp_blas.c - the compiled MLP against the same three layers on OpenBLAS.
 *
 * The emitted MLP (dy2stc compile mlp.dymodel --emit c --name mlp, linked
 * in) and a hand-written chain doing the same work with OpenBLAS: per
 * layer, C = bias broadcast, cblas_sgemm(C += X W), then relu (not after
 * the last), with the weights read from the same mlp.dymodel. Runs are
 * interleaved (dy2stc, OpenBLAS, ...) at one batch, OpenBLAS on one
 * thread; printed are the medians, the ratio OpenBLAS time / dy2stc time
 * (above 1: the emitted code is faster) and the outputs' largest
 * difference relative to the largest |output|.
 *
 *   mlp_blas MLP.dymodel BATCH RUNS
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench_util.h"
#include "dy_ir.h"
#include "mlp.h"

enum { LAYERS = 3 };

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: mlp_blas MLP.dymodel BATCH RUNS\n");
    return 2;
  }
  openblas_set_num_threads(1);
  int batch = atoi(argv[2]), runs = atoi(argv[3]);
  dy_error err = {0};
  dy_program *p = NULL;
  if (dy_model_load(argv[1], &p, &err)) {
    fprintf(stderr, "mlp_blas: %s\n", err.msg);
    return 1;
  }
  /* the weights and biases, in op order: matmul(h, W) then add(., b) */
  const float *w[LAYERS] = {0}, *b[LAYERS] = {0};
  int k[LAYERS] = {0}, n[LAYERS] = {0}, nl = 0, nb = 0;
  for (int i = 0; i < p->blocks[0]->n_ops; i++) {
    const dy_op *op = p->blocks[0]->ops[i];
    const dy_var *v = p->vars[op->inputs[op->n_inputs > 1 ? 1 : 0]];
    if (op->kind == DY_OP_MATMUL && v->persistable && nl < LAYERS) {
      w[nl] = v->data;
      k[nl] = (int)v->type.shape[0];
      n[nl++] = (int)v->type.shape[1];
    } else if (op->kind == DY_OP_ADD && v->persistable && nb < LAYERS) {
      b[nb++] = v->data;
    }
  }
  if (nl != LAYERS || nb != LAYERS) {
    fprintf(stderr, "mlp_blas: expected %d linear layers\n", LAYERS);
    return 1;
  }
  float *x = malloc(sizeof *x * (size_t)(batch * k[0]));
  for (int i = 0; i < batch * k[0]; i++)
    x[i] = bench_value(3, i / k[0], i % k[0]);
  float *h[LAYERS + 1];
  h[0] = x;
  for (int l = 0; l < LAYERS; l++)
    h[l + 1] = malloc(sizeof(float) * (size_t)(batch * n[l]));
  float *out = malloc(sizeof *out * (size_t)(batch * n[LAYERS - 1]));
  void *raw = malloc(MLP_ARENA_BYTES + 64);
  void *arena = (char *)raw + (64 - (uintptr_t)raw % 64) % 64;

  double *td = malloc(sizeof *td * (size_t)runs), *tb = malloc(sizeof *tb * (size_t)runs);
  for (int r = -1; r < runs; r++) {
    double t0 = bench_now_ms();
    if (mlp_run(arena, batch, x, out) != 0) {
      fprintf(stderr, "mlp_blas: mlp_run failed\n");
      return 1;
    }
    double t1 = bench_now_ms();
    for (int l = 0; l < LAYERS; l++) {
      float *c = h[l + 1];
      for (int i = 0; i < batch; i++)
        memcpy(c + (size_t)i * n[l], b[l], sizeof(float) * (size_t)n[l]);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, n[l], k[l], 1.0f, h[l], k[l],
                  w[l], n[l], 1.0f, c, n[l]);
      if (l + 1 < LAYERS)
        for (int i = 0; i < batch * n[l]; i++)
          c[i] = c[i] > 0.0f ? c[i] : 0.0f;
    }
    double t2 = bench_now_ms();
    if (r >= 0) {
      td[r] = t1 - t0;
      tb[r] = t2 - t1;
    }
  }
  double diff = 0, big = 0;
  for (int i = 0; i < batch * n[LAYERS - 1]; i++) {
    diff = fmax(diff, fabs((double)out[i] - (double)h[LAYERS][i]));
    big = fmax(big, fabs((double)h[LAYERS][i]));
  }
  double md = bench_median(td, runs), mb = bench_median(tb, runs);
  double flops = 0;
  for (int l = 0; l < LAYERS; l++)
    flops += 2.0 * batch * k[l] * n[l];
  printf("mlp batch %d: dy2stc %.4f ms %.1f GFLOP/s   OpenBLAS chain %.4f ms %.1f GFLOP/s   "
         "ratio %.2f   (rel diff %.1e, %d runs)\n",
         batch, md, flops / md * 1e-6, mb, flops / mb * 1e-6, mb / md, diff / (big > 0 ? big : 1),
         runs);
  dy_program_free(p);
  return 0;
}
