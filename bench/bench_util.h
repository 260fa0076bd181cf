/* bench_util.h - what the bench programs share: a clock, medians, and the
 * deterministic matrices both the emitted code and OpenBLAS are given. */
#ifndef DY_BENCH_UTIL_H
#define DY_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double bench_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* median of t[0..n) (sorts t) */
static double bench_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, bench_cmp);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* element (i, j) of the deterministic test matrix number `which`, in
 * [-1, 1): a hash, so every program computes the same values */
static float bench_value(int which, int64_t i, int64_t j) {
  uint64_t z = (uint64_t)which * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^
               (uint64_t)j * 0x94D049BB133111EBull;
  z ^= z >> 31;
  z *= 0xD6E8FEB86659FD93ull;
  z ^= z >> 32;
  return (float)((double)(z >> 40) / 8388608.0 - 1.0);
}

#endif
