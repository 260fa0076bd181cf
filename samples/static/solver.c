/* solver.c - an iterative solver written with a plain C `while` on a
 * tensor, for `dy2stc compile solver.c` (the loop becomes a while op that
 * refines until the update is small; compiler/cfront/cconvert.c).
 *
 *   dy2stc compile solver.c -o solve_exe
 *   ./solve_exe --input b=b.npy --input tol=tol.npy --output-dir out
 *
 * Jacobi iteration for A x = b with a fixed diagonally dominant 4x4 A:
 * x' = D^-1 (b - R x) (D the diagonal of A, R the rest) from x = 0, until
 * the update's norm is at most tol (f32[]), or after MAX_ITERATIONS (a
 * break). The result, f32[5], is x and the number of iterations.
 * As the program `static_solver --out DIR` it writes, for tolerances that
 * give 0, 1 and many iterations, DIR/in<c>_b.npy, DIR/in<c>_tol.npy and
 * the eager result DIR/eager<c>.npy.
 */
#include <stdio.h>
#include <string.h>

#include "dy_runtime.h"

#define MAX_ITERATIONS 50
#define N_CASES 4

static const float a_matrix[4][4] = {
    {10, -1, 2, 0}, {-1, 11, -1, 3}, {2, -1, 10, -1}, {0, 3, -1, 8}};

DY_TO_STATIC("b: f32[4]", "tol: f32[]")
static dy_tensor *solver_forward(dy_layer *self, dy_tensor *b, dy_tensor *tol) {
  (void)self;
  float d_inv[4][1], rest[4][4];
  for (int i = 0; i < 4; i++) {
    d_inv[i][0] = 1.0f / a_matrix[i][i];
    for (int k = 0; k < 4; k++)
      rest[i][k] = i == k ? 0.0f : a_matrix[i][k];
  }
  dy_tensor *dinv = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(4, 1), d_inv);
  dy_tensor *r = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(4, 4), rest);
  dy_tensor *one = dy_full(DY_F32, 0, NULL, 1.0);
  dy_tensor *limit = dy_full(DY_F32, 0, NULL, MAX_ITERATIONS);
  dy_tensor *rhs = dy_reshape(b, 2, DY_SHAPE(4, 1));
  dy_tensor *x = dy_mul(rhs, dy_full(DY_F32, 0, NULL, 0.0));
  dy_tensor *delta = dy_full(DY_F32, 0, NULL, 1e30);
  dy_tensor *iters = dy_full(DY_F32, 0, NULL, 0.0);
  while (dy_bool(dy_greater(delta, tol))) {
    dy_tensor *next = dy_mul(dinv, dy_sub(rhs, dy_matmul(r, x, false, false)));
    dy_tensor *update = dy_sub(next, x);
    delta = dy_sqrt(dy_reduce_sum(dy_mul(update, update), 0, NULL, false));
    x = next;
    iters = dy_add(iters, one);
    if (dy_bool(dy_less(limit, dy_add(iters, one))))
      break;
  }
  dy_tensor *parts[] = {dy_reshape(x, 1, DY_SHAPE(4)), dy_reshape(iters, 1, DY_SHAPE(1))};
  return dy_concat(parts, 2, 0);
}

static dy_tensor *solver_vforward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  return solver_forward(self, in[0], in[1]);
}

static const dy_layer_vtable solver_vtable = {.type_name = "Jacobi",
                                              .forward = solver_vforward};

DY_MODEL
dy_layer *make_solver(void) {
  return dy_layer_new(sizeof(dy_layer), &solver_vtable, "solver");
}

int main(int argc, char **argv) {
  const char *dir = argc == 3 && strcmp(argv[1], "--out") == 0 ? argv[2] : NULL;
  if (!dir) {
    fprintf(stderr, "usage: static_solver --out DIR\n");
    return 2;
  }
  /* 1e31: never entered; 1e5: one step; 1e-5: until converged; 0: the cap */
  static const double tols[N_CASES] = {1e31, 1e5, 1e-5, 0};
  dy_layer *model = make_solver();
  if (!model)
    return 1;
  dy_seed(0);
  int rc = 0;
  for (int c = 0; c < N_CASES && !rc; c++) {
    dy_scope_begin();
    dy_tensor *b = dy_mul(dy_randn(1, DY_SHAPE(4)), dy_full(DY_F32, 0, NULL, 10.0));
    dy_tensor *tol = dy_full(DY_F32, 0, NULL, tols[c]);
    dy_tensor *y = dy_call2(model, b, tol);
    char p0[4096], p1[4096], py[4096];
    snprintf(p0, sizeof p0, "%s/in%d_b.npy", dir, c);
    snprintf(p1, sizeof p1, "%s/in%d_tol.npy", dir, c);
    snprintf(py, sizeof py, "%s/eager%d.npy", dir, c);
    dy_error err = {0};
    if (!y || dy_npy_write(p0, b, &err) || dy_npy_write(p1, tol, &err) ||
        dy_npy_write(py, y, &err)) {
      fprintf(stderr, "static_solver: case %d: %s\n", c, y ? err.msg : dy_last_error()->msg);
      rc = 1;
    } else {
      const float *v = dy_tensor_f32(y);
      printf("case %d: tol %g: %g iterations, x = %g %g %g %g\n", c, tols[c], v[4], v[0], v[1],
             v[2], v[3]);
    }
    dy_scope_end();
  }
  dy_layer_free(model);
  return rc;
}
