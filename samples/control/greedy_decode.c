/* greedy_decode.c - greedy decoding with a small GRU built from ops: from
 * an encoder state h0, emit the most likely token at each step until every
 * sequence of the batch has emitted the end token or the maximum length is
 * reached (dy_while: the trip count depends on the data).
 *
 *   z = sigmoid(e Wz + h Uz)   r = sigmoid(e Wr + h Ur)
 *   n = tanh(e Wn + r * (h Un))   h' = (1 - z) * n + z * h
 *   token' = done ? END : argmax(h' Wo)     e = Emb[token]
 *
 * The carried values are h [B, H], the last token [B] (i64), the step [1]
 * and the output buffer [B, MAXLEN], where step t writes its token into
 * column t through a one-hot mask (a carried value keeps its type, so the
 * buffer is allocated at full length and filled in; unused columns stay
 * -1). The output is the buffer with the trip count in a last column.
 */
#include "control_sample.h"

enum { V = 6, H = 8, MAXLEN = 10, BOS = 1, END = 0 };

typedef struct {
  dy_layer base;
  dy_layer *emb, *wz, *uz, *wr, *ur, *wn, *un, *wo;
  dy_tensor *positions, *end_tok, *maxlen, *one, *half;
} decoder;

static dy_tensor *more(void *c, dy_tensor *const *v) {
  decoder *d = c;
  /* some sequence has not ended, and there is room left */
  dy_tensor *ended = dy_cast(dy_equal(v[1], d->end_tok), DY_F32);
  dy_tensor *alive = dy_sub(d->one, dy_reduce_min(ended, 0, NULL, true));
  dy_tensor *room = dy_cast(dy_less(v[2], d->maxlen), DY_F32);
  return dy_greater(dy_mul(alive, room), d->half);
}

static dy_tensor *lin(dy_layer *l, dy_tensor *x) { return dy_call1(l, x); }

static bool step(void *c, dy_tensor *const *v, dy_tensor **next) {
  decoder *d = c;
  dy_tensor *h = v[0], *tok = v[1];
  dy_tensor *e = dy_gather(d->emb->params[0], tok, 0);  /* the rows of Emb [V, H] */
  dy_tensor *z = dy_sigmoid(dy_add(lin(d->wz, e), lin(d->uz, h)));
  dy_tensor *r = dy_sigmoid(dy_add(lin(d->wr, e), lin(d->ur, h)));
  dy_tensor *n = dy_tanh(dy_add(lin(d->wn, e), dy_mul(r, lin(d->un, h))));
  dy_tensor *h2 = dy_add(dy_mul(dy_sub(d->one, z), n), dy_mul(z, h));
  dy_tensor *best = dy_argmax(lin(d->wo, h2), 1, false);
  dy_tensor *tok2 = dy_where(dy_equal(tok, d->end_tok), tok, best);
  /* buffer[:, step] = token: a one-hot column mask */
  dy_tensor *mask = dy_cast(dy_equal(d->positions, v[2]), DY_F32);
  dy_tensor *col = dy_reshape(dy_cast(tok2, DY_F32), 2, DY_SHAPE(-1, 1));
  dy_tensor *keep = dy_mul(v[3], dy_sub(d->one, mask));
  next[0] = h2;
  next[1] = tok2;
  next[2] = dy_add(v[2], d->one);
  next[3] = dy_add(keep, dy_mul(col, mask));
  return next[0] && next[1] && next[2] && next[3];
}

static dy_tensor *decoder_forward(dy_layer *self, dy_tensor *const *in, int n_in) {
  (void)n_in;
  decoder *d = (decoder *)self;
  dy_tensor *h0 = in[0];
  /* per-row starts from h0's batch: token BOS, buffer of -1 */
  dy_tensor *zero_col = dy_scale(dy_reduce_sum(h0, 1, DY_SHAPE(1), false), 0.0f, 0.0f);
  dy_tensor *tok = dy_cast(dy_scale(zero_col, 1.0f, (float)BOS), DY_I64);
  dy_tensor *buf = dy_scale(dy_add(dy_reshape(zero_col, 2, DY_SHAPE(-1, 1)),
                                   dy_scale(d->positions, 0.0f, 0.0f)), 1.0f, -1.0f);
  dy_tensor *v[4] = {h0, tok, dy_scale(d->one, 0.0f, 0.0f), buf};
  if (!dy_while(more, step, d, 4, v))
    return NULL;
  dy_tensor *trips = dy_add(zero_col, dy_reshape(v[2], 1, DY_SHAPE(1)));
  return dy_concat((dy_tensor *const[]){v[3], dy_reshape(trips, 2, DY_SHAPE(-1, 1))}, 2, 1);
}

static const dy_layer_vtable decoder_vt = {"GreedyDecoder", decoder_forward, NULL, false};

int main(int argc, char **argv) {
  dy_seed(11);
  decoder *d = (decoder *)dy_layer_new(sizeof *d, &decoder_vt, "decoder");
  dy_layer **lins[] = {&d->wz, &d->uz, &d->wr, &d->ur, &d->wn, &d->un};
  d->emb = dy_layer_add_child(&d->base, dy_linear_new(V, H));  /* weight: Emb [V, H] */
  for (int i = 0; i < 6; i++)
    *lins[i] = dy_layer_add_child(&d->base, dy_linear_new(H, H));
  d->wo = dy_layer_add_child(&d->base, dy_linear_new(H, V));
  float pos[MAXLEN];
  for (int i = 0; i < MAXLEN; i++)
    pos[i] = (float)i;
  d->positions = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(MAXLEN), pos);
  d->end_tok = dy_tensor_from_data(DY_I64, 1, DY_SHAPE(1), (const int64_t[]){END});
  d->maxlen = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){MAXLEN});
  d->one = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){1.0f});
  d->half = dy_tensor_from_data(DY_F32, 1, DY_SHAPE(1), (const float[]){0.5f});

  /* three encoder states: each decodes to a different length */
  dy_tensor *x[3];
  dy_scope_begin();  /* the rand tensors go with it; the inputs are kept */
  for (int k = 0; k < 3; k++)
    x[k] = dy_keep(dy_scale(dy_rand(2, DY_SHAPE(k + 1, H)), 6.0f, -3.0f));
  dy_scope_end();
  dy_input_spec spec = {.name = "h0", .dtype = DY_F32, .rank = 2, .shape = {-1, H}};
  int rc = ctl_run("greedy_decode", &d->base, &spec, x, 3, 1e-4f, argc, argv);
  for (int k = 0; k < 3; k++)
    dy_tensor_free(x[k]);
  dy_tensor *own[] = {d->positions, d->end_tok, d->maxlen, d->one, d->half};
  for (int i = 0; i < 5; i++)
    dy_tensor_free(own[i]);
  dy_layer_free(&d->base);
  return rc;
}
