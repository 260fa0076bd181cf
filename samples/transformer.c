/* transformer.c - a 2-layer transformer encoder (x: f32[None, 64, 128]):
 * d_model 128, 4 heads, feed-forward 256 with GELU, post-norm as Paddle's
 * nn.TransformerEncoderLayer (normalize_before=False):
 *
 *   x = layer_norm(x + dropout(self_attention(x)))
 *   x = layer_norm(x + dropout(linear2(dropout(gelu(linear1(x))))))
 *
 * Exported in eval mode, so dropout is the identity.
 *
 *   ./transformer [--batch N] [--out DIR] [--dynamic-seq: x f32[None,seq,128]]
 */
#include "sample.h"

enum { SEQ = 64, D_MODEL = 128, HEADS = 4, D_FF = 256 };

typedef struct {
  dy_layer base;
  dy_layer *attn, *norm1, *norm2, *ff1, *ff2, *drop1, *drop2, *drop3;
} encoder_layer;

static dy_tensor *encoder_forward(dy_layer *self, dy_tensor *const *in, int n) {
  encoder_layer *e = (encoder_layer *)self;
  (void)n;
  dy_tensor *x = in[0];
  dy_tensor *a = dy_call1(e->drop1, dy_call1(e->attn, x));
  x = dy_call1(e->norm1, dy_add(x, a));
  dy_tensor *h = dy_call1(e->drop2, dy_gelu(dy_call1(e->ff1, x), false));
  h = dy_call1(e->drop3, dy_call1(e->ff2, h));
  return dy_call1(e->norm2, dy_add(x, h));
}

static const dy_layer_vtable encoder_vt = {"TransformerEncoderLayer", encoder_forward, NULL, false};

static dy_layer *encoder_layer_new(void) {
  encoder_layer *e = (encoder_layer *)dy_layer_new(sizeof *e, &encoder_vt, "encoder");
  dy_layer *b = &e->base;
  e->attn = dy_layer_add_child(b, dy_multihead_attention_new(D_MODEL, HEADS));
  e->ff1 = dy_layer_add_child(b, dy_linear_new(D_MODEL, D_FF));
  e->ff2 = dy_layer_add_child(b, dy_linear_new(D_FF, D_MODEL));
  e->norm1 = dy_layer_add_child(b, dy_layer_norm_layer_new(1, DY_SHAPE(D_MODEL), 1e-5));
  e->norm2 = dy_layer_add_child(b, dy_layer_norm_layer_new(1, DY_SHAPE(D_MODEL), 1e-5));
  e->drop1 = dy_layer_add_child(b, dy_dropout_layer_new(0.1));
  e->drop2 = dy_layer_add_child(b, dy_dropout_layer_new(0.1));
  e->drop3 = dy_layer_add_child(b, dy_dropout_layer_new(0.1));
  return b;
}

int main(int argc, char **argv) {
  long batch = 2;
  const char *dir = ".";
  /* --dynamic-seq: save with the sequence length a named dynamic dim too
   * (DY_DIM("seq"): x is f32[None, seq, 128]) */
  bool dynamic_seq = argc > 1 && strcmp(argv[argc - 1], "--dynamic-seq") == 0;
  if (dynamic_seq)
    argc--;
  int rc = sample_args("transformer", argc, argv, &batch, &dir);
  if (rc)
    return rc;
  dy_seed(13);
  dy_layer *net = dy_sequential_new();
  dy_sequential_append(net, encoder_layer_new());
  dy_sequential_append(net, encoder_layer_new());
  if (dy_last_error())
    return sample_die("transformer", "building", dy_last_error());
  dy_layer_eval(net);
  dy_scope_begin();
  dy_tensor *x = dy_randn(3, DY_SHAPE(batch, SEQ, D_MODEL));
  dy_tensor *out = dy_call1(net, x);
  if (!out)
    return sample_die("transformer", "eager run", dy_last_error());
  dy_tensor_print(out, "eager out", 8, stdout);
  dy_input_spec spec = {.name = "x", .dtype = DY_F32, .rank = 3,
                        .shape = {-1, dynamic_seq ? DY_DIM("seq") : SEQ, D_MODEL}};
  rc = sample_save("transformer", net, &spec, 1, dir, 2, (const char *[]){"x", "eager_out"},
                   (dy_tensor *[]){x, out});
  dy_scope_end();
  dy_layer_free(net);
  return rc;
}
