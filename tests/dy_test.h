/* dy_test.h - helpers shared by the CUnit suites. */
#ifndef DY_TEST_H
#define DY_TEST_H

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dy_ir.h"

/* Assert a float within tol of an expected value, printing both. */
#define DY_ASSERT_NEAR(actual, expected, tol)                                  \
  do {                                                                         \
    double a_ = (actual), e_ = (expected);                                     \
    if (!(fabs(a_ - e_) <= (tol))) {                                           \
      fprintf(stderr, "\n  %s:%d: %s = %.9g, expected %.9g (tol %g)\n",        \
              __FILE__, __LINE__, #actual, a_, e_, (double)(tol));             \
    }                                                                          \
    CU_ASSERT(fabs(a_ - e_) <= (tol));                                         \
  } while (0)

/* Assert a dy_status is DY_OK, printing the error message otherwise. */
#define DY_ASSERT_OK(expr, errp)                                               \
  do {                                                                         \
    dy_status s_ = (expr);                                                     \
    if (s_ != DY_OK)                                                           \
      fprintf(stderr, "\n  %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
              (errp)->msg);                                                    \
    CU_ASSERT_EQUAL_FATAL(s_, DY_OK);                                          \
  } while (0)

/* test_util.c. Run a shell command made like printf; with log set, its
 * stdout and stderr go to that file. Its exit status, 128 if it did not
 * exit. */
int dy_test_sh(const char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A file's bytes with a NUL after them (caller frees), NULL if unreadable. */
char *dy_test_slurp(const char *path);
/* tool is on the PATH. */
bool dy_test_have(const char *tool);
/* aarch64-linux-gnu-gcc and qemu-aarch64 are there; else says SKIPPED. */
/* Test data at path (a file of a folder beside the clone): true, or
 * false after printing "SKIPPED: <missing> ..." (the line a data test's
 * ctest SKIP_REGULAR_EXPRESSION looks for). */
bool dy_test_have_data(const char *path, const char *missing);
bool dy_test_have_aarch64(void);

/* The head of a generated driver that runs emitted models on .bin files:
 * the includes, load(path, bytes) (malloc'd; exits on a short file) and
 * save(path, data, bytes) (test_ops, test_grad). */
extern const char dy_test_driver_io[];

/* Write samples as dir/x.npy (f32 [n, row]) and their class labels as
 * dir/y.npy (i64 [n]); false on error (test_train_codegen,
 * test_firmware). */
bool dy_test_write_samples(const char *dir, const float *x, int64_t n, int64_t row,
                           const int64_t *y);

/* A Program parsed from its text form and verified, or NULL (the reason
 * printed); caller frees with dy_program_free. */
dy_program *dy_test_parse_ok(const char *text);
/* dir/blk.dymodel from a Program's text (parsed and verified); false on
 * error (the reason printed). */
bool dy_test_save_blk(const char *dir, const char *text);
/* path: an f32 .npy of the rank-4 shape, values (i * mul % 101) / 50 - 1;
 * false on error. */
bool dy_test_write_pattern(const char *path, const int64_t shape[4], int mul);
/* The ops of kind k in block 0. */
int dy_test_count_kind(const dy_program *p, dy_op_kind k);
/* Load the ONNX model at path and run it on the executor with n_in
 * inputs; *out gets the first output (caller frees) and *keep the Program
 * (NULL: freed). */
struct dy_tensor; /* dy_runtime.h, which not every suite includes */
void dy_test_onnx_run(const char *path, struct dy_tensor **in, int n_in,
                      struct dy_tensor **out, dy_program **keep);
/* Load the ONNX model at path expecting failure with status: no Program,
 * a one-line message containing each of the (up to two) fragments. */
void dy_test_onnx_error(const char *path, dy_status status, const char *frag1,
                        const char *frag2);

/* Run a shell command (its stdout and stderr to log): its exit status must
 * be want and its first line hold frag; a failure (want 1) is that one
 * line only. */
void dy_test_expect_cli(const char *log, int want, const char *frag, const char *cmd);
/* max|got - ref| / max|ref| over a whole f32 tensor (a NaN: infinity). */
double dy_test_scaled_err(const struct dy_tensor *got, const struct dy_tensor *ref);
/* path: an f32 .npy of the shape and values (asserts it was written). */
void dy_test_write_f32(const char *path, int rank, const int64_t *shape, const float *v);

/* Trained parameters compared (max |a - b| over every element):
 * two nets of the same structure; a net against DIR/<layer>.<param>.npy
 * (the compiled trainer's state; the layers right under the root); a net
 * against the vars of those names in a Program (dy2stc train's output). */
struct dy_layer;
double dy_test_max_param_diff(const struct dy_layer *a, const struct dy_layer *b);
double dy_test_max_state_diff(const struct dy_layer *net, const char *dir);
double dy_test_max_program_diff(const struct dy_layer *net, const dy_program *p);
/* Train net with MSE over x, y (first dim the samples) for epochs in
 * batches of `batch`, the order dy_train_shuffle's after dy_seed(shuffle)
 * (the loop of cmd_train.c): eagerly (the tape, dy_optimizer) or through
 * to_static; each batch's input goes to on_batch(ctx, xb) first (NULL:
 * none). */
void dy_test_train(struct dy_layer *net, bool static_, const dy_optimizer_spec *opt,
                   const struct dy_tensor *x, const struct dy_tensor *y, int64_t batch,
                   int epochs, uint64_t shuffle, void (*on_batch)(void *ctx, struct dy_tensor *xb),
                   void *ctx);

#define DY_SUITE(name) CU_pSuite suite_ = CU_add_suite(name, NULL, NULL)
#define DY_TEST(fn) CU_add_test(suite_, #fn, fn)

#endif
