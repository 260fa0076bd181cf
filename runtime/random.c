/* random.c - the seeded random generator (paddle.seed) and random tensors.
 *
 * One generator per thread: xoshiro256** (Blackman and Vigna), its 256-bit
 * state filled from the seed by splitmix64 as the authors recommend, so
 * nearby seeds give unrelated streams. A thread that never calls dy_seed
 * behaves as if it called dy_seed(0), so every run is reproducible.
 *
 *   dy_rand_u64      64 random bits
 *   dy_rand_uniform  the top 24 bits as a float in [0, 1) (every value is
 *                    exactly representable, and 1.0f can never come out)
 *   dy_rand_normal   N(0, 1) by the Box-Muller transform: each pair of
 *                    uniforms gives two normals; the second is cached for
 *                    the next call, and dy_seed drops the cache so a seed
 *                    always starts the same sequence.
 */
#include <math.h>

#include "dy_runtime.h"

typedef struct {
  uint64_t s[4];
  bool seeded;         /* false until the first use or dy_seed */
  bool have_spare;     /* Box-Muller's second value is waiting */
  float spare;
} rng_state;

static _Thread_local rng_state rng;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void dy_seed(uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    rng.s[i] = splitmix64(&x);
  rng.seeded = true;
  rng.have_spare = false;
  rng.spare = 0.0f;
}

uint64_t dy_rand_u64(void) {
  if (!rng.seeded)
    dy_seed(0);
  uint64_t *s = rng.s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

void dy_rand_state_get(uint64_t s[4]) {
  if (!rng.seeded)
    dy_seed(0);
  for (int i = 0; i < 4; i++)
    s[i] = rng.s[i];
}

void dy_rand_state_set(const uint64_t s[4]) {
  for (int i = 0; i < 4; i++)
    rng.s[i] = s[i];
  rng.seeded = true;
  rng.have_spare = false;
  rng.spare = 0.0f;
}

float dy_rand_uniform(void) {
  return (float)(dy_rand_u64() >> 40) * 0x1.0p-24f;
}

float dy_rand_normal(void) {
  if (rng.seeded && rng.have_spare) {
    rng.have_spare = false;
    return rng.spare;
  }
  /* Two uniforms with 53 bits each (doubles, for the log's sake); u1 is in
   * (0, 1] so log(u1) is finite. */
  double u1 = ((double)(dy_rand_u64() >> 11) + 1.0) * 0x1.0p-53;
  double u2 = (double)(dy_rand_u64() >> 11) * 0x1.0p-53;
  double r = sqrt(-2.0 * log(u1));
  double theta = 6.283185307179586476925286766559 * u2;
  rng.spare = (float)(r * sin(theta));
  rng.have_spare = true;
  return (float)(r * cos(theta));
}

/* A new f32 tensor filled by draw(). dy_tensor_new records the error (bad
 * shape, out of memory) and returns NULL; that NULL is passed through. */
static dy_tensor *random_tensor(int rank, const int64_t *shape,
                                float (*draw)(void)) {
  dy_tensor *t = dy_tensor_new(DY_F32, rank, shape);
  if (!t)
    return NULL;
  float *p = dy_tensor_f32(t);
  int64_t n = dy_tensor_numel(t);
  for (int64_t i = 0; i < n; i++)
    p[i] = draw();
  return t;
}

dy_tensor *dy_rand(int rank, const int64_t *shape) {
  return random_tensor(rank, shape, dy_rand_uniform);
}

dy_tensor *dy_randn(int rank, const int64_t *shape) {
  return random_tensor(rank, shape, dy_rand_normal);
}
