/* decode.c - greedy decoding with a GRU cell built from ops, written with a
 * plain C `while` and `break` on tensors, for `dy2stc compile decode.c`
 * (the loop becomes a while op whose trip count is the data's; the break a
 * bool flag carried through it; compiler/cfront/cconvert.c).
 *
 *   dy2stc compile decode.c -o dec_exe
 *   ./dec_exe --input h0=h0.npy --input max_len=max_len.npy --output-dir out
 *
 * From the state h0 (f32[1,16]) and the begin token 0, each step embeds the
 * last token, runs the GRU cell, and emits the most probable of VOCAB
 * tokens; decoding stops at END_TOKEN or after max_len (f32[]) steps. The
 * result, f32[1,18], is the final state, the number of steps and a running
 * code of the tokens emitted (code = code / 2 + token).
 * As the program `static_decode --out DIR` it builds the model after
 * dy_seed(0) and writes, for max_len 0, 1, 3 and 40, DIR/in<c>_h0.npy,
 * DIR/in<c>_max_len.npy and the eager result DIR/eager<c>.npy.
 */
#include <stdio.h>
#include <string.h>

#include "dy_runtime.h"

#define HIDDEN 16
#define VOCAB 6
#define END_TOKEN 5
#define N_CASES 4

typedef struct {
  dy_layer base;
  dy_layer *emb;                 /* Embedding VOCAB -> HIDDEN */
  dy_layer *wz, *wr, *wn;        /* Linear HIDDEN -> HIDDEN, on the input */
  dy_layer *uz, *ur, *un;        /* Linear HIDDEN -> HIDDEN, on the state */
  dy_layer *out;                 /* Linear HIDDEN -> VOCAB */
} decoder;

/* h' = (1 - z) n + z h,  z = s(Wz e + Uz h),  r = s(Wr e + Ur h),
 * n = tanh(Wn e + r (Un h)) */
static dy_tensor *gru_cell(decoder *m, dy_tensor *e, dy_tensor *h) {
  dy_tensor *z = dy_sigmoid(dy_add(dy_call1(m->wz, e), dy_call1(m->uz, h)));
  dy_tensor *r = dy_sigmoid(dy_add(dy_call1(m->wr, e), dy_call1(m->ur, h)));
  dy_tensor *n = dy_tanh(dy_add(dy_call1(m->wn, e), dy_mul(r, dy_call1(m->un, h))));
  dy_tensor *keep = dy_sub(dy_full(DY_F32, 0, NULL, 1.0), z);
  return dy_add(dy_mul(keep, n), dy_mul(z, h));
}

DY_TO_STATIC("h0: f32[1,16]", "max_len: f32[]")
static dy_tensor *decode_forward(dy_layer *self, dy_tensor *h0, dy_tensor *max_len) {
  decoder *m = (decoder *)self;
  dy_tensor *one = dy_full(DY_F32, 0, NULL, 1.0);
  dy_tensor *end = dy_full(DY_I64, 1, DY_SHAPE(1), END_TOKEN);
  dy_tensor *h = h0;
  dy_tensor *token = dy_full(DY_I64, 1, DY_SHAPE(1), 0);
  dy_tensor *step = dy_full(DY_F32, 0, NULL, 0.0);
  dy_tensor *code = dy_full(DY_F32, 0, NULL, 0.0);
  while (dy_bool(dy_less(step, max_len))) {
    dy_tensor *e = dy_reshape(dy_call1(m->emb, token), 2, DY_SHAPE(1, HIDDEN));
    h = gru_cell(m, dy_add(e, h0), h);
    token = dy_argmax(dy_call1(m->out, h), -1, false);
    step = dy_add(step, one);
    if (dy_bool(dy_equal(token, end)))
      break;
    code = dy_add(dy_mul(code, dy_full(DY_F32, 0, NULL, 0.5)),
                  dy_reshape(dy_cast(token, DY_F32), 0, NULL));
  }
  dy_tensor *tail[] = {h, dy_reshape(step, 2, DY_SHAPE(1, 1)), dy_reshape(code, 2, DY_SHAPE(1, 1))};
  return dy_concat(tail, 3, 1);
}

static dy_tensor *decode_vforward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  return decode_forward(self, in[0], in[1]);
}

static const dy_layer_vtable decoder_vtable = {.type_name = "Decoder",
                                               .forward = decode_vforward};

DY_MODEL
dy_layer *make_decoder(void) {
  decoder *m = (decoder *)dy_layer_new(sizeof(decoder), &decoder_vtable, "dec");
  if (!m)
    return NULL;
  dy_layer **parts[] = {&m->wz, &m->wr, &m->wn, &m->uz, &m->ur, &m->un};
  m->emb = dy_layer_add_child(&m->base, dy_embedding_new(VOCAB, HIDDEN, -1));
  bool ok = m->emb != NULL;
  for (int i = 0; i < 6; i++)
    ok &= (*parts[i] = dy_layer_add_child(&m->base, dy_linear_new(HIDDEN, HIDDEN))) != NULL;
  m->out = dy_layer_add_child(&m->base, dy_linear_new(HIDDEN, VOCAB));
  if (!ok || !m->out) {
    dy_layer_free(&m->base);
    return NULL;
  }
  return &m->base;
}

int main(int argc, char **argv) {
  const char *dir = argc == 3 && strcmp(argv[1], "--out") == 0 ? argv[2] : NULL;
  if (!dir) {
    fprintf(stderr, "usage: static_decode --out DIR\n");
    return 2;
  }
  static const double max_lens[N_CASES] = {0, 1, 3, 40};
  dy_seed(0);
  dy_layer *model = make_decoder();
  if (!model)
    return 1;
  int rc = 0;
  for (int c = 0; c < N_CASES && !rc; c++) {
    dy_scope_begin();
    dy_tensor *h0 = dy_mul(dy_randn(2, DY_SHAPE(1, HIDDEN)), dy_full(DY_F32, 0, NULL, 3.0));
    dy_tensor *len = dy_full(DY_F32, 0, NULL, max_lens[c]);
    dy_tensor *y = dy_call2(model, h0, len);
    char p0[4096], p1[4096], py[4096];
    snprintf(p0, sizeof p0, "%s/in%d_h0.npy", dir, c);
    snprintf(p1, sizeof p1, "%s/in%d_max_len.npy", dir, c);
    snprintf(py, sizeof py, "%s/eager%d.npy", dir, c);
    dy_error err = {0};
    if (!y || dy_npy_write(p0, h0, &err) || dy_npy_write(p1, len, &err) ||
        dy_npy_write(py, y, &err)) {
      fprintf(stderr, "static_decode: case %d: %s\n", c, y ? err.msg : dy_last_error()->msg);
      rc = 1;
    } else {
      const float *v = dy_tensor_f32(y);
      printf("case %d: max_len %g: %g steps, code %g\n", c, max_lens[c], v[HIDDEN],
             v[HIDDEN + 1]);
    }
    dy_scope_end();
  }
  dy_layer_free(model);
  return rc;
}
