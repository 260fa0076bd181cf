/* gemm.c - emitted GEMM against OpenBLAS cblas_sgemm, side by side.
 *
 * Each shape of gemm_list.h (bench/make_gemm.c) is a matmul model compiled
 * by dy2stc (`--emit c --name gemm_<shape>`, weights packed at compile
 * time) and linked into this program. For each, C = A W is computed by the
 * emitted code and by cblas_sgemm (row-major, the same A and W), the runs
 * interleaved (dy2stc, OpenBLAS, dy2stc, ...) so both see the same machine;
 * printed are the medians, GFLOP/s and the ratio OpenBLAS time / dy2stc
 * time (above 1: the emitted code is faster), and the largest difference
 * of the two results relative to the largest |C|. OpenBLAS runs on one
 * thread (openblas_set_num_threads(1)); OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE are reported as this process sees them (bench/run.sh
 * runs this twice: as set, and with both unset).
 *
 *   gemm [SECONDS_PER_SHAPE]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench_util.h"
#include "gemm_list.h"

typedef int (*run_fn)(void *arena, int64_t batch, const float *x, float *out);

static const struct {
  const char *name;
  int64_t m, k, n;
  run_fn run;
  int64_t arena;
} shapes[] = {
#define X(nm, NM, M, K, N) {#nm, M, K, N, gemm_##nm##_run, GEMM_##NM##_ARENA_BYTES},
    GEMM_SHAPES(X)
#undef X
};

int main(int argc, char **argv) {
  double budget_ms = argc > 1 ? atof(argv[1]) * 1e3 : 1500;
  openblas_set_num_threads(1);
  const char *ct = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
  printf("OpenBLAS %s; OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s; 1 thread\n",
         openblas_get_config(), ct ? ct : "(unset)", l2 ? l2 : "(unset)");
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int64_t m = shapes[s].m, k = shapes[s].k, n = shapes[s].n;
    float *a = malloc(sizeof *a * (size_t)(m * k)), *w = malloc(sizeof *w * (size_t)(k * n));
    float *c1 = calloc((size_t)(m * n), sizeof *c1), *c2 = calloc((size_t)(m * n), sizeof *c2);
    void *arena = aligned_alloc(64, (size_t)((shapes[s].arena + 64) / 64 * 64));
    for (int64_t i = 0; i < m * k; i++)
      a[i] = bench_value(0, i / k, i % k);
    for (int64_t i = 0; i < k * n; i++)
      w[i] = bench_value(1, i / n, i % n);
    double flops = 2.0 * (double)m * (double)n * (double)k;
    /* warm up both, and size the run count to the budget */
    double t0 = bench_now_ms();
    shapes[s].run(arena, 1, a, c1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                (int)k, w, (int)n, 0.0f, c2, (int)n);
    double once = bench_now_ms() - t0;
    int reps = (int)(budget_ms / (once > 1e-3 ? once : 1e-3));
    reps = reps < 11 ? 11 : reps > 20001 ? 20001 : reps;
    double *td = malloc(sizeof *td * (size_t)reps), *tb = malloc(sizeof *tb * (size_t)reps);
    for (int r = 0; r < reps; r++) {
      t0 = bench_now_ms();
      shapes[s].run(arena, 1, a, c1);
      td[r] = bench_now_ms() - t0;
      t0 = bench_now_ms();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                  (int)k, w, (int)n, 0.0f, c2, (int)n);
      tb[r] = bench_now_ms() - t0;
    }
    double md = bench_median(td, reps), mb = bench_median(tb, reps);
    double diff = 0, big = 0;
    for (int64_t i = 0; i < m * n; i++) {
      diff = fmax(diff, fabs((double)c1[i] - (double)c2[i]));
      big = fmax(big, fabs((double)c2[i]));
    }
    printf("gemm %-14s M=%-5lld N=%-5lld K=%-5lld dy2stc %9.4f ms %6.1f GFLOP/s   "
           "OpenBLAS %9.4f ms %6.1f GFLOP/s   ratio %.2f   (rel diff %.1e, %d runs)\n",
           shapes[s].name, (long long)m, (long long)n, (long long)k, md, flops / md * 1e-6, mb,
           flops / mb * 1e-6, mb / md, diff / (big > 0 ? big : 1), reps);
    fflush(stdout);
    free(a), free(w), free(c1), free(c2), free(arena), free(td), free(tb);
  }
  return 0;
}
