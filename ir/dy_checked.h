/* dy_checked.h - the checked-size API: overflow-checked arithmetic for
 * element counts, byte sizes, strides and offsets.
 *
 * Every size dy2stc computes from a file, an attribute, a shape or a
 * command-line number goes through these helpers, so a product or a sum
 * that would wrap is an error instead of a small (or negative) number that
 * later sizes a buffer. Each helper returns true when the result is exact
 * and, for the size helpers, within the limits below; false otherwise (out
 * is then unspecified). Callers turn false into a dy_status naming the op,
 * var or file (see dy_type_check in ir/core/types.c).
 *
 *   int64_t n;
 *   if (!dy_ck_numel(t->shape, t->rank, &n))
 *     return dy_error_at(err, op, DY_STATUS_INVALID_ARGUMENT, "...");
 *
 * Limits. One tensor holds at most DY_MAX_TENSOR_BYTES bytes (2^31 - 1),
 * so every element count, byte size, stride and offset inside one tensor
 * fits in int32_t, in int64_t and in size_t and ptrdiff_t on 32-bit
 * targets too (firmware). The arena of a compiled model (all live
 * intermediates at --max-batch) and the batch itself have their own bounds
 * (DY_MAX_ARENA_BYTES, DY_MAX_BATCH), so arena offsets fit in int64_t with
 * room to add an alignment; an arena over 4 GiB only builds for a 64-bit
 * target. The dynamic batch is always at least 1 where a size is taken.
 *
 * Header-only (static inline), built on __builtin_*_overflow where the
 * compiler has it and on portable comparisons elsewhere.
 */
#ifndef DY_CHECKED_H
#define DY_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest tensor, in bytes (and so in elements): 2^31 - 1. */
#define DY_MAX_TENSOR_BYTES ((int64_t)INT32_MAX)
#define DY_MAX_NUMEL DY_MAX_TENSOR_BYTES
/* The largest arena a compiled model may ask for: 2^46 bytes (64 TiB). */
#define DY_MAX_ARENA_BYTES ((int64_t)1 << 46)
/* The largest dynamic batch (--max-batch, a batch read from input data). */
#define DY_MAX_BATCH ((int64_t)1 << 31)

#if defined(__has_builtin)
#if __has_builtin(__builtin_mul_overflow) && __has_builtin(__builtin_add_overflow)
#define DY_CK_BUILTINS 1
#endif
#elif defined(__GNUC__) && __GNUC__ >= 5
#define DY_CK_BUILTINS 1
#endif

/* *out = a * b; false when it overflows int64_t. */
static inline bool dy_ck_mul(int64_t a, int64_t b, int64_t *out) {
#ifdef DY_CK_BUILTINS
  return !__builtin_mul_overflow(a, b, out);
#else
  if (a == 0 || b == 0) {
    *out = 0;
    return true;
  }
  if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN))
    return false;
  if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
            : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
    return false;
  *out = a * b;
  return true;
#endif
}

/* *out = a + b; false when it overflows int64_t. */
static inline bool dy_ck_add(int64_t a, int64_t b, int64_t *out) {
#ifdef DY_CK_BUILTINS
  return !__builtin_add_overflow(a, b, out);
#else
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
    return false;
  *out = a + b;
  return true;
#endif
}

/* *out = a - b; false when it overflows int64_t. */
static inline bool dy_ck_sub(int64_t a, int64_t b, int64_t *out) {
#ifdef DY_CK_BUILTINS
  return !__builtin_sub_overflow(a, b, out);
#else
  if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
    return false;
  *out = a - b;
  return true;
#endif
}

/* *out = a * b + c (an offset: index * stride + base). */
static inline bool dy_ck_muladd(int64_t a, int64_t b, int64_t c, int64_t *out) {
  int64_t p;
  return dy_ck_mul(a, b, &p) && dy_ck_add(p, c, out);
}

/* Element count of a static shape: false when a dim is negative, the rank
 * is outside [0, 64] or the product of the non-zero dims exceeds
 * DY_MAX_NUMEL. Rank 0 is 1. */
static inline bool dy_ck_numel(const int64_t *shape, int rank, int64_t *out) {
  int64_t n = 1;
  bool zero = false;
  if (rank < 0 || rank > 64)
    return false;
  /* a 0 dim makes the count 0, but the other dims still bound the strides
   * code computes from them: their product must fit the limit too */
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0)
      return false;
    if (shape[i] == 0)
      zero = true;
    else if (!dy_ck_mul(n, shape[i], &n) || n > DY_MAX_NUMEL)
      return false;
  }
  *out = zero ? 0 : n;
  return true;
}

/* Byte size of numel elements of elem_size bytes: false when numel is
 * negative or the product exceeds DY_MAX_TENSOR_BYTES. */
static inline bool dy_ck_bytes(int64_t numel, size_t elem_size, int64_t *out) {
  return numel >= 0 && elem_size <= 64 &&
         dy_ck_mul(numel, (int64_t)elem_size, out) && *out <= DY_MAX_TENSOR_BYTES;
}

/* Round n up to a multiple of align (a power of two, n >= 0). */
static inline bool dy_ck_align(int64_t n, int64_t align, int64_t *out) {
  int64_t t;
  if (n < 0 || align < 1 || (align & (align - 1)))
    return false;
  if (!dy_ck_add(n, align - 1, &t))
    return false;
  *out = t & ~(align - 1);
  return true;
}

/* int64_t -> size_t, false when negative or too big for size_t. */
static inline bool dy_ck_size(int64_t n, size_t *out) {
  if (n < 0 || (uint64_t)n > (uint64_t)SIZE_MAX)
    return false;
  *out = (size_t)n;
  return true;
}

#endif /* DY_CHECKED_H */
