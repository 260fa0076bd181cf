/* harness.c - runs the forward `fwd(dy_tensor *x)` of a converter case
 * (tests/convert/CASE.c, or its conversion; -DCASE="path") on five inputs
 * x: f32[4] whose sums make every branch and loop count 0, 1 and many
 * (5, -2.5, 0.7, 0, 12), and prints each result. With an argument, fwd runs
 * through dy_to_static (traced once, then the static executor with each
 * input). Built and compared by tests/test_convert.c.
 */
#include CASE
#include <stdio.h>

static dy_tensor *case_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)self;
  (void)n_in;
  return fwd(in[0]);
}

static const dy_layer_vtable case_vtable = {.type_name = "Case", .forward = case_forward};

int main(int argc, char **argv) {
  (void)argv;
  static const float xs[][4] = {{1, 2, 3, -1}, {-1, -2, 0.5f, 0}, {0.2f, 0.3f, 0.1f, 0.1f},
                                {0, 0, 0, 0},  {3, 3, 3, 3}};
  dy_layer *layer = dy_layer_new(sizeof(dy_layer), &case_vtable, "case");
  dy_layer *st = argc > 1 ? dy_to_static(layer) : NULL;
  if (!layer || (argc > 1 && !st))
    return 1;
  for (size_t c = 0; c < sizeof xs / sizeof *xs; c++) {
    dy_scope_begin();
    dy_tensor *x = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(4), xs[c]);
    dy_tensor *y = st ? dy_call1(st, x) : fwd(x);
    if (!y) {
      char line[1024];
      dy_error_format(dy_last_error(), line, sizeof line);
      printf("input %zu: error: %s\n", c, line);
    } else {
      printf("input %zu: ", c);
      dy_tensor_print(y, "y", 16, stdout);
    }
    dy_scope_end();
  }
  dy_layer_free(st);
  dy_layer_free(layer);
  return 0;
}
