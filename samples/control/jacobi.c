/* jacobi.c - an iterative solver: Jacobi iteration on A x = b, refined
 * until the update's norm falls below a tolerance (dy_while).
 *
 *   x_0 = 0;  while (|x_k+1 - x_k| >= tol && k < 200)
 *             x_k+1 = (b - x_k R^T) / d     (A = diag(d) + R)
 *
 * A is a fixed diagonally dominant 6x6 matrix (a parameter), b the input
 * [B, 6] (each row one right-hand side). The number of trips depends on
 * b: a zero b converges after one trip, others take many. The loop's
 * carried values are x, the last update's norm and the trip count (each
 * keeps its type from one trip to the next); b and the matrix are read
 * from the enclosing code through ctx, which makes them the loop's
 * captures.
 */
#include "control_sample.h"

enum { N = 6 };

typedef struct {
  dy_layer base;
  dy_tensor *r_t, *inv_d, *tol, *max_trips, *one, *big;
} jacobi;

typedef struct {
  jacobi *j;
  dy_tensor *b;
} solve_ctx;

static dy_tensor *not_done(void *c, dy_tensor *const *v) {
  jacobi *j = ((solve_ctx *)c)->j;
  /* (norm >= tol) and (trips < max): both as 0/1 and multiplied */
  dy_tensor *far = dy_cast(dy_greater(v[1], j->tol), DY_F32);
  dy_tensor *left = dy_cast(dy_less(v[2], j->max_trips), DY_F32);
  return dy_greater(dy_mul(far, left), dy_scale(j->one, 0.5f, 0.0f));
}

static bool refine(void *c, dy_tensor *const *v, dy_tensor **next) {
  jacobi *j = ((solve_ctx *)c)->j;
  dy_tensor *b = ((solve_ctx *)c)->b;
  dy_tensor *x = dy_mul(dy_sub(b, dy_matmul(v[0], j->r_t, false, false)), j->inv_d);
  dy_tensor *step = dy_sub(x, v[0]);
  next[0] = x;
  next[1] = dy_reshape(dy_sqrt(dy_reduce_sum(dy_mul(step, step), 0, NULL, false)), 1,
                       DY_SHAPE(1));
  next[2] = dy_add(v[2], j->one);
  return next[0] && next[1] && next[2];
}

static dy_tensor *jacobi_forward(dy_layer *self, dy_tensor *const *in, int n) {
  (void)n;
  jacobi *j = (jacobi *)self;
  dy_tensor *b = in[0];
  dy_tensor *v[3] = {dy_scale(b, 0.0f, 0.0f), j->big, dy_scale(j->one, 0.0f, 0.0f)};
  solve_ctx c = {j, b};
  if (!dy_while(not_done, refine, &c, 3, v))
    return NULL;
  /* the solution, and the trip count in a last column */
  dy_tensor *trips = dy_expand_as(dy_reshape(v[2], 2, DY_SHAPE(1, 1)),
                                  dy_slice(v[0], 1, DY_SHAPE(1), DY_SHAPE(0), DY_SHAPE(1), NULL));
  return dy_concat((dy_tensor *const[]){v[0], trips}, 2, 1);
}

static const dy_layer_vtable jacobi_vt = {"Jacobi", jacobi_forward, NULL, false};

int main(int argc, char **argv) {
  float a[N][N], r_t[N][N], inv_d[N];
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      a[i][k] = i == k ? 4.0f + (float)i : 1.0f / (float)(1 + (i + 2 * k) % 5);
  for (int i = 0; i < N; i++) {
    inv_d[i] = 1.0f / a[i][i];
    for (int k = 0; k < N; k++)
      r_t[k][i] = i == k ? 0.0f : a[i][k];
  }
  jacobi *j = (jacobi *)dy_layer_new(sizeof *j, &jacobi_vt, "jacobi");
  j->r_t = dy_tensor_from_data(DY_F32, 2, DY_SHAPE(N, N), r_t);
  j->inv_d = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(N), inv_d);
  j->tol = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){1e-5f});
  j->max_trips = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){200.0f});
  j->one = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){1.0f});
  j->big = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){1e30f});

  /* case 0: b = 0 (no trip); case 1: one right-hand side; case 2: three */
  float b1[N] = {1, 2, 3, 4, 5, 6}, b3[3 * N];
  for (int i = 0; i < 3 * N; i++)
    b3[i] = (float)((i * 7) % 11) - 5.0f;
  dy_tensor *x[3] = {dy_tensor_new(DY_F32, 2, DY_SHAPE(2, N)),
                     dy_tensor_from_data(DY_F32, 2, DY_SHAPE(1, N), b1),
                     dy_tensor_from_data(DY_F32, 2, DY_SHAPE(3, N), b3)};
  dy_input_spec spec = {.name = "b", .dtype = DY_F32, .rank = 2, .shape = {-1, N}};
  int rc = ctl_run("jacobi", &j->base, &spec, x, 3, 1e-4f, argc, argv);
  for (int i = 0; i < 3; i++)
    dy_tensor_free(x[i]);
  dy_tensor *own[] = {j->r_t, j->inv_d, j->tol, j->max_trips, j->one, j->big};
  for (int i = 0; i < 6; i++)
    dy_tensor_free(own[i]);
  dy_layer_free(&j->base);
  return rc;
}
