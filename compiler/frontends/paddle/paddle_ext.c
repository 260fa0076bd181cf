/* paddle_ext.c - the Paddle ops whose lowering takes more than a few ops
 * (import only; their rows are OWN rows of paddle_table.c without an
 * exporter, and the builders used here are paddle_build.c's):
 *
 *   fill_constant_batch_size_like  the batch taken from Input without
 *                      reading its data (expand_as of a zero, sliced)
 *   rnn (GRU)          a while loop over the steps carrying (t, h), the
 *                      input projection of every step one matmul before it
 *   prior_box          constants (they depend on shapes only)
 *   box_coder          encode / decode_center_size (decode at axis 0 or 1)
 *                      as elementwise ops on columns
 *   *_interp(_v2)      nearest / bilinear as gathers of constant source
 *                      indices with constant weights per axis (Paddle's
 *                      ratio, align_corners, align_mode); static H, W
 *   pixel_shuffle      reshape, transpose, reshape
 */
#include <math.h>
#include <string.h>

#include "paddle_internal.h"

/* fill_constant_batch_size_like: shape with shape[output_dim_idx] taken
 * from Input's dim input_dim_idx. The batch: the value expanded to Input's
 * shape (expand_as: no data read), sliced to [B, 1, ...], placed at
 * output_dim_idx and broadcast against a constant of the other dims. */
dy_status pd_import_fill_constant_batch_size_like(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "Input", 0, &x));
  int64_t shape[DY_MAX_DIMS];
  int n = pd_attr_ints(c, "shape", shape, DY_MAX_DIMS);
  int64_t in_idx = pd_attr_i(c, "input_dim_idx", 0), out_idx = pd_attr_i(c, "output_dim_idx", 0);
  int pdt = (int)pd_attr_i(c, "dtype", PD_FP32);
  const dy_type *xt = pd_type(c, x);
  if (n < 1 || in_idx < 0 || in_idx >= xt->rank || out_idx < 0 || out_idx >= n)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "shape, input_dim_idx or output_dim_idx "
                   "out of range");
  if (pdt != PD_FP32)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "dtype %s (only float32)", pd_dtype_name(pdt));
  double v = pd_fill_value(c);
  int64_t b = xt->shape[in_idx], numel = 0, all = 0;
  shape[out_idx] = 1;
  PD_TRY(pd_checked_numel(c, shape, n, "shape", &numel));
  if (b >= 0 && (!dy_ck_mul(numel, b, &all) || all > DY_MAX_NUMEL))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "more than %lld elements", (long long)DY_MAX_NUMEL);
  v = pd_as_f32(v);
  float *buf = malloc((size_t)(numel ? numel : 1) * sizeof *buf);
  if (!buf)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < numel; i++)
    buf[i] = (float)v;
  int k;
  if (b >= 0) { /* a static dim: a plain constant */
    shape[out_idx] = b;
    float *big = realloc(buf, (size_t)(all > 0 ? all : 1) * sizeof *buf);
    if (!big) {
      free(buf);
      return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < all; i++)
      big[i] = (float)v;
    dy_status s = pd_const(c, DY_F32, n, shape, big, pd_out_name(c, "Out"), &k);
    free(big);
    return s;
  }
  if (in_idx != 0) {
    free(buf);
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic input_dim_idx other than the batch");
  }
  dy_status s = pd_const(c, DY_F32, n, shape, buf, NULL, &k);
  free(buf);
  PD_TRY(s);
  /* the batch as a [B] vector of zeros: expand_as a zero to Input, slice */
  int64_t ones[DY_MAX_DIMS], st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], sp[DY_MAX_DIMS];
  for (int i = 0; i < xt->rank; i++)
    ones[i] = 1;
  float zero = 0;
  int z, e;
  PD_TRY(pd_const(c, DY_F32, xt->rank, ones, &zero, NULL, &z));
  PD_TRY(pd_binary(c, "expand_as", z, x, NULL, &e));
  int na = 0;
  for (int i = 1; i < xt->rank; i++, na++)
    st[na] = 0, en[na] = 1, ax[na] = i, sp[na] = 1;
  if (na) {
    dy_attr a[DY_SLICE_NATTRS];
    int n_a = dy_slice_attrs_put(&(dy_slice_attrs){
        .given = DY_GIVEN_ALL, .starts = st, .n_starts = na, .ends = en, .n_ends = na,
        .axes = ax, .n_axes = na, .steps = sp, .n_steps = na}, a);
    PD_TRY(pd_op(c, "slice", &e, 1, a, n_a, NULL, &e));
    PD_TRY(pd_squeeze(c, e, na, ax, NULL, &e));
  }
  /* [B] -> rank n with B at out_idx */
  int64_t axes[DY_MAX_DIMS];
  int nu = 0;
  for (int i = 0; i < n; i++)
    if (i != out_idx)
      axes[nu++] = i;
  if (nu)
    PD_TRY(pd_unsqueeze(c, e, nu, axes, NULL, &e));
  return pd_binary(c, "add", e, k, pd_out_name(c, "Out"), &o);
}

/* ------------------------------------------------------------------ */
/* the rnn op (GRU) as a while loop                                    */
/* ------------------------------------------------------------------ */

/* Gate g (0..2) of a [N, 3H] tensor. */
static dy_status gate(pd_ctx *c, int v, int g, int64_t h, int *out) {
  return pd_slice1(c, v, 1, g * h, (g + 1) * h, NULL, out);
}

/* rnn, mode GRU, one layer, one direction, time-major Input [T, N, I],
 * PreState [1, N, H], WeightList (w_ih [3H, I], w_hh [3H, H], b_ih, b_hh),
 * gates in the order r, z, n as cuDNN:
 *   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
 *   z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
 *   n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
 *   h' = n + z * (h - n)
 * The input projection of every step is one matmul before the loop; the
 * loop (a while op over t < T) carries t and h. State = the last h; Out
 * (every step's h) is not built: an op reading it is an error. */
dy_status pd_import_rnn(pd_ctx *c) {
  char mode[16];
  pd_attr_s(c, "mode", "LSTM", mode, sizeof mode);
  if (strcmp(mode, "GRU"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn mode %s (only GRU)", mode);
  if (pd_attr_i(c, "num_layers", 1) != 1 || pd_attr_b(c, "is_bidirec", false))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn with several layers or both directions");
  if (pd_arg(c, false, "SequenceLength", 0))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn with SequenceLength (variable lengths)");
  const char *outn = pd_arg(c, true, "Out", 0);
  if (outn && pd_read_later(c, outn))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn: the per-step output '%s' is read; only "
                   "the final State is supported", outn);
  int x, h0, w[4];
  PD_TRY(pd_in(c, "Input", 0, &x));
  PD_TRY(pd_in(c, "PreState", 0, &h0));
  if (pd_n_args(c, false, "WeightList") != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn WeightList of %d tensors (want 4)",
                   pd_n_args(c, false, "WeightList"));
  for (int i = 0; i < 4; i++)
    PD_TRY(pd_in(c, "WeightList", i, &w[i]));
  const dy_type *xt = pd_type(c, x);
  int64_t T = xt->shape[0], H = pd_attr_i(c, "hidden_size", 0);
  if (xt->rank != 3 || T < 1 || H < 1 || pd_type(c, h0)->rank != 3)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "rnn needs Input [T, N, I] with a static T and "
                   "PreState [1, N, H]");
  /* before the loop: x W_ih^T + b_ih for every step, h0, the constants */
  int xp, h, t0, tn, one;
  dy_attr ty[DY_MATMUL_NATTRS];
  int n_ty = dy_matmul_attrs_put(&(dy_matmul_attrs){
      .given = DY_GIVEN(matmul, transpose_y), .transpose_y = 1}, ty);
  PD_TRY(pd_op(c, "matmul", (int[]){x, w[0]}, 2, ty, n_ty, NULL, &xp));
  PD_TRY(pd_binary(c, "add", xp, w[2], NULL, &xp));
  PD_TRY(pd_squeeze(c, h0, 1, (int64_t[]){0}, NULL, &h));
  int64_t zero = 0, one_v = 1;
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &zero, NULL, &t0));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &T, NULL, &tn));
  PD_TRY(pd_const(c, DY_I64, 1, (int64_t[]){1}, &one_v, NULL, &one));
  dy_type types[2] = {*pd_type(c, t0), *pd_type(c, h)};
  int saved = c->block, blocks[2], par[2], res[2];
  /* condition: t < T */
  blocks[0] = dy_program_add_block(c->p, saved);
  for (int i = 0; i < 2; i++)
    par[i] = pd_new_var(c, "rnn_param", &types[i]);
  if (blocks[0] < 0 || par[0] < 0 || par[1] < 0 || !dy_block_set_params(c->p, blocks[0], par, 2))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  c->block = blocks[0];
  dy_status s = pd_binary(c, "less", par[0], tn, NULL, &res[0]);
  c->block = saved;
  PD_TRY(s);
  if (!dy_block_set_results(c->p, blocks[0], res, 1))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* body: one step */
  blocks[1] = dy_program_add_block(c->p, saved);
  for (int i = 0; i < 2; i++)
    par[i] = pd_new_var(c, "rnn_param", &types[i]);
  if (blocks[1] < 0 || par[0] < 0 || par[1] < 0 || !dy_block_set_params(c->p, blocks[1], par, 2))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  c->block = blocks[1];
  int xs, hs, xg[3], hg[3], r, z, n, d;
  dy_attr ga[DY_GATHER_NATTRS];
  int n_ga = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = 0}, ga);
  s = pd_op(c, "gather", (int[]){xp, par[0]}, 2, ga, n_ga, NULL, &xs);
  if (!s)
    s = pd_squeeze(c, xs, 1, (int64_t[]){0}, NULL, &xs);
  if (!s)
    s = pd_op(c, "matmul", (int[]){par[1], w[1]}, 2, ty, n_ty, NULL, &hs);
  if (!s)
    s = pd_binary(c, "add", hs, w[3], NULL, &hs);
  for (int g = 0; g < 3 && !s; g++)
    if (!(s = gate(c, xs, g, H, &xg[g])))
      s = gate(c, hs, g, H, &hg[g]);
  if (!s && !(s = pd_binary(c, "add", xg[0], hg[0], NULL, &r)))
    s = pd_unary(c, "sigmoid", r, NULL, &r);
  if (!s && !(s = pd_binary(c, "add", xg[1], hg[1], NULL, &z)))
    s = pd_unary(c, "sigmoid", z, NULL, &z);
  if (!s && !(s = pd_binary(c, "mul", r, hg[2], NULL, &n)) && !(s = pd_binary(c, "add", xg[2], n, NULL, &n)))
    s = pd_unary(c, "tanh", n, NULL, &n);
  if (!s && !(s = pd_binary(c, "sub", par[1], n, NULL, &d)) && !(s = pd_binary(c, "mul", z, d, NULL, &d)))
    s = pd_binary(c, "add", n, d, NULL, &res[1]);
  if (!s)
    s = pd_binary(c, "add", par[0], one, NULL, &res[0]);
  c->block = saved;
  PD_TRY(s);
  if (!dy_block_set_results(c->p, blocks[1], res, 2))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  /* the while op: carried (t, h), then the blocks' captures */
  int cap = c->p->n_vars + 3, n_in = 2, k;
  int *in = malloc(sizeof *in * (size_t)cap), *caps = malloc(sizeof *caps * (size_t)cap);
  int outs[2];
  s = in && caps ? DY_OK : pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s) {
    in[0] = t0;
    in[1] = h;
  }
  for (int j = 0; j < 2 && !s; j++) {
    k = dy_block_captures(c->p, blocks[j], caps, cap);
    for (int i = 0; i < k && n_in < cap; i++) {
      bool seen = false;
      for (int q = 2; q < n_in && !seen; q++)
        seen = in[q] == caps[i];
      if (!seen)
        in[n_in++] = caps[i];
    }
  }
  for (int i = 0; i < 2 && !s; i++)
    if ((outs[i] = pd_new_var(c, i ? "rnn_h" : "rnn_t", &types[i])) < 0)
      s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_attr wa[DY_WHILE_NATTRS];
  int n_wa = dy_while_attrs_put(&(dy_while_attrs){
      .given = DY_GIVEN_ALL, .n_carried = 2, .cond_block = blocks[0], .body_block = blocks[1],
      .max_iterations = 0}, wa);
  if (!s && !dy_program_append_op(c->p, c->block, DY_OP_WHILE, in, n_in, outs, 2, wa, n_wa, c->loc))
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  free(in);
  free(caps);
  PD_TRY(s);
  int o;
  return pd_unsqueeze(c, outs[1], 1, (int64_t[]){0}, pd_arg(c, true, "State", 0), &o);
}

/* ------------------------------------------------------------------ */
/* detection: prior_box, box_coder                                     */
/* ------------------------------------------------------------------ */

/* prior_box: Boxes and Variances [H, W, P, 4] depend only on the shapes of
 * Input (the feature map, [N, C, H, W]) and Image: constants, computed
 * here as Paddle does (in float). Priors per cell: for each min size, one
 * box per aspect ratio (1 first, then the others, with 1/ar when flip;
 * min_max_aspect_ratios_order puts the min and max squares first), then
 * the sqrt(min * max) square when max_sizes are given; clip clamps to
 * [0, 1]. */
dy_status pd_import_prior_box(pd_ctx *c) {
  int in, img;
  PD_TRY(pd_in(c, "Input", 0, &in));
  PD_TRY(pd_in(c, "Image", 0, &img));
  const dy_type *ft = pd_type(c, in), *it = pd_type(c, img);
  if (ft->rank != 4 || it->rank != 4 || ft->shape[2] < 0 || ft->shape[3] < 0 ||
      it->shape[2] < 0 || it->shape[3] < 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "prior_box needs the static planes of Input and "
                   "Image (give the image's size)");
  float mins[64], maxs[64], ars_in[32], var[4] = {0.1f, 0.1f, 0.2f, 0.2f}, ars[64];
  int n_min = pd_attr_floats(c, "min_sizes", mins, 64), n_max = pd_attr_floats(c, "max_sizes", maxs, 64);
  int n_ar_in = pd_attr_floats(c, "aspect_ratios", ars_in, 32);
  pd_attr_floats(c, "variances", var, 4);
  bool flip = pd_attr_b(c, "flip", false), clip = pd_attr_b(c, "clip", false);
  bool mm_order = pd_attr_b(c, "min_max_aspect_ratios_order", false);
  float offset = (float)pd_attr_f(c, "offset", 0.5);
  if (n_min < 1 || (n_max > 0 && n_max != n_min))
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "min_sizes / max_sizes");
  if (n_max < 0)
    n_max = 0;
  int n_ar = 0;
  ars[n_ar++] = 1.0f;
  for (int i = 0; i < n_ar_in; i++) {
    bool seen = false;
    for (int j = 0; j < n_ar; j++)
      seen |= fabsf(ars_in[i] - ars[j]) < 1e-6f;
    if (seen)
      continue;
    ars[n_ar++] = ars_in[i];
    if (flip && n_ar < 64)
      ars[n_ar++] = 1.0f / ars_in[i];
  }
  int64_t H = ft->shape[2], W = ft->shape[3], P = (int64_t)n_ar * n_min + n_max;
  float img_h = (float)it->shape[2], img_w = (float)it->shape[3];
  float sw = (float)pd_attr_f(c, "step_w", 0), sh = (float)pd_attr_f(c, "step_h", 0);
  if (sw == 0 || sh == 0)
    sw = img_w / (float)W, sh = img_h / (float)H;
  int64_t n = 0;
  PD_TRY(pd_checked_numel(c, (int64_t[]){H, W, P, 4}, 4, "prior_box's output", &n));
  float *box = malloc((size_t)n * sizeof *box), *vb = malloc((size_t)n * sizeof *vb);
  if (!box || !vb) {
    free(box);
    free(vb);
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  float *b = box;
#define PUT(bw, bh)                                                   \
  do {                                                                \
    b[0] = (cx - (bw)) / img_w, b[1] = (cy - (bh)) / img_h;           \
    b[2] = (cx + (bw)) / img_w, b[3] = (cy + (bh)) / img_h;           \
    b += 4;                                                           \
  } while (0)
  for (int64_t h = 0; h < H; h++)
    for (int64_t w = 0; w < W; w++) {
      float cx = ((float)w + offset) * sw, cy = ((float)h + offset) * sh;
      for (int s = 0; s < n_min; s++) {
        float m = mins[s];
        if (mm_order) {
          PUT(m / 2.0f, m / 2.0f);
          if (n_max) {
            float sk = sqrtf(m * maxs[s]) / 2.0f;
            PUT(sk, sk);
          }
          for (int r = 0; r < n_ar; r++)
            if (fabsf(ars[r] - 1.0f) >= 1e-6f)
              PUT(m * sqrtf(ars[r]) / 2.0f, m / sqrtf(ars[r]) / 2.0f);
        } else {
          for (int r = 0; r < n_ar; r++)
            PUT(m * sqrtf(ars[r]) / 2.0f, m / sqrtf(ars[r]) / 2.0f);
          if (n_max) {
            float sk = sqrtf(m * maxs[s]) / 2.0f;
            PUT(sk, sk);
          }
        }
      }
    }
#undef PUT
  for (int64_t i = 0; i < n; i++) {
    if (clip)
      box[i] = box[i] < 0 ? 0 : box[i] > 1 ? 1 : box[i];
    vb[i] = var[i % 4];
  }
  int64_t shape[4] = {H, W, P, 4};
  int k;
  dy_status s = pd_const(c, DY_F32, 4, shape, box, pd_arg(c, true, "Boxes", 0), &k);
  if (!s && pd_arg(c, true, "Variances", 0))
    s = pd_const(c, DY_F32, 4, shape, vb, pd_arg(c, true, "Variances", 0), &k);
  free(box);
  free(vb);
  return s;
}

/* Column k of a [..., 4] tensor, keeping the dim. */
static dy_status column(pd_ctx *c, int v, int k, int *out) {
  return pd_slice1(c, v, pd_type(c, v)->rank - 1, k, k + 1, NULL, out);
}

/* box_coder's variance: PriorBoxVar [M, 4] (or [N, 4] at axis 1, as
 * PriorBox), else the variance attribute's 4 values, else 1s. */
static dy_status coder_variance(pd_ctx *c, int *pv) {
  PD_TRY(pd_in_opt(c, "PriorBoxVar", 0, pv));
  if (*pv >= 0)
    return DY_OK;
  float var[4] = {1, 1, 1, 1};
  int n = pd_attr_floats(c, "variance", var, 4);
  if (n != 4 && n > 0)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "variance of %d values", n);
  return pd_const(c, DY_F32, 2, (int64_t[]){1, 4}, var, NULL, pv);
}

/* box_coder encode_center_size: TargetBox [N, 4] (boxes) against PriorBox
 * [M, 4] -> [N, M, 4], as Paddle's EncodeCenterSize (one = 1 unless
 * box_normalized):
 *   pw = px2 - px1 + one, pcx = px1 + pw / 2, tw = tx2 - tx1 + one,
 *   tcx = (tx2 + tx1) / 2 (same for y)
 *   out = [(tcx - pcx) / pw, (tcy - pcy) / ph, log|tw / pw|, log|th / ph|]
 *   each divided by its variance. t[k] are [N, 1, 1], p[k] and v[k] [M, 1]. */
static dy_status encode_center_size(pd_ctx *c, const int *p, const int *v, const int *t,
                                    int one, int half, int *res) {
  for (int d = 0; d < 2; d++) { /* d = 0: x, 1: y */
    int pw, pc, tw, tc, tmp;
    PD_TRY(pd_binary(c, "sub", p[2 + d], p[d], NULL, &pw));
    PD_TRY(pd_binary(c, "add", pw, one, NULL, &pw));
    PD_TRY(pd_binary(c, "mul", pw, half, NULL, &tmp));
    PD_TRY(pd_binary(c, "add", p[d], tmp, NULL, &pc));
    PD_TRY(pd_binary(c, "add", t[2 + d], t[d], NULL, &tc));
    PD_TRY(pd_binary(c, "mul", tc, half, NULL, &tc));
    PD_TRY(pd_binary(c, "sub", t[2 + d], t[d], NULL, &tw));
    PD_TRY(pd_binary(c, "add", tw, one, NULL, &tw));
    PD_TRY(pd_binary(c, "sub", tc, pc, NULL, &tmp));
    PD_TRY(pd_binary(c, "div", tmp, pw, NULL, &res[d]));
    PD_TRY(pd_binary(c, "div", tw, pw, NULL, &tmp));
    PD_TRY(pd_unary(c, "abs", tmp, NULL, &tmp));
    PD_TRY(pd_unary(c, "log", tmp, NULL, &res[2 + d]));
  }
  for (int k = 0; k < 4; k++)
    PD_TRY(pd_binary(c, "div", res[k], v[k], NULL, &res[k]));
  return DY_OK;
}

/* box_coder decode_center_size: TargetBox [N, M, 4] (deltas) against
 * PriorBox (xmin, ymin, xmax, ymax) [M, 4] at axis 0 (prior j for column
 * j), [N, 4] at axis 1 (prior i for row i), as Paddle's DecodeCenterSize:
 *   pw = x2 - x1 + one, pcx = x1 + pw / 2 (same for y)
 *   cx = v0 t0 pw + pcx, w = exp(v2 t2) pw   (same for y)
 *   out = [cx - w/2, cy - h/2, cx + w/2 - one, cy + h/2 - one]. */
static dy_status decode_center_size(pd_ctx *c, const int *p, const int *v, const int *t,
                                    int one, int half, int *res) {
  for (int d = 0; d < 2; d++) { /* d = 0: x, 1: y */
    int pw, pc, cc, sz, hs, tmp;
    PD_TRY(pd_binary(c, "sub", p[2 + d], p[d], NULL, &pw));
    PD_TRY(pd_binary(c, "add", pw, one, NULL, &pw));
    PD_TRY(pd_binary(c, "mul", pw, half, NULL, &tmp));
    PD_TRY(pd_binary(c, "add", p[d], tmp, NULL, &pc));
    PD_TRY(pd_binary(c, "mul", v[d], t[d], NULL, &cc));
    PD_TRY(pd_binary(c, "mul", cc, pw, NULL, &cc));
    PD_TRY(pd_binary(c, "add", cc, pc, NULL, &cc));
    PD_TRY(pd_binary(c, "mul", v[2 + d], t[2 + d], NULL, &sz));
    PD_TRY(pd_unary(c, "exp", sz, NULL, &sz));
    PD_TRY(pd_binary(c, "mul", sz, pw, NULL, &sz));
    PD_TRY(pd_binary(c, "mul", sz, half, NULL, &hs));
    PD_TRY(pd_binary(c, "sub", cc, hs, NULL, &res[d]));
    PD_TRY(pd_binary(c, "add", cc, hs, NULL, &tmp));
    PD_TRY(pd_binary(c, "sub", tmp, one, NULL, &res[2 + d]));
  }
  return DY_OK;
}

/* box_coder: both code types (above), the variance as PriorBoxVar or
 * attribute, decode's axis 0 or 1; elementwise ops on the [.., 1] columns,
 * broadcast to [N, M, 1], concatenated on the last axis. */
dy_status pd_import_box_coder(pd_ctx *c) {
  char code[32];
  pd_attr_s(c, "code_type", "encode_center_size", code, sizeof code);
  bool encode = strcmp(code, "encode_center_size") == 0;
  int64_t axis = pd_attr_i(c, "axis", 0);
  if ((!encode && strcmp(code, "decode_center_size")) || (!encode && axis != 0 && axis != 1))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "box_coder %s with axis %lld (only "
                   "encode_center_size, or decode_center_size at axis 0 or 1)", code,
                   (long long)axis);
  int pb, pv, tb;
  PD_TRY(pd_in(c, "PriorBox", 0, &pb));
  PD_TRY(pd_in(c, "TargetBox", 0, &tb));
  PD_TRY(coder_variance(c, &pv));
  bool norm = pd_attr_b(c, "box_normalized", true);
  const dy_type *tt = pd_type(c, tb), *pt = pd_type(c, pb), *vt = pd_type(c, pv);
  if (tt->rank != (encode ? 2 : 3) || tt->shape[tt->rank - 1] != 4 || pt->rank != 2 ||
      pt->shape[1] != 4 || vt->shape[vt->rank - 1] != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "box_coder %s needs TargetBox [N, %s4], PriorBox "
                   "[%s, 4] and a variance of 4 per box", code, encode ? "" : "M, ",
                   axis ? "N" : "M");
  if (encode) /* the target boxes along the rows: [N, 1, 4] */
    PD_TRY(pd_unsqueeze(c, tb, 1, (int64_t[]){1}, NULL, &tb));
  else if (axis == 1) { /* the priors along the rows: [N, 1, 4] */
    PD_TRY(pd_unsqueeze(c, pb, 1, (int64_t[]){1}, NULL, &pb));
    if (vt->rank == 2 && vt->shape[0] != 1)
      PD_TRY(pd_unsqueeze(c, pv, 1, (int64_t[]){1}, NULL, &pv));
  }
  int p[4], v[4], t[4], one, half, res[4];
  for (int k = 0; k < 4; k++) {
    PD_TRY(column(c, pb, k, &p[k]));
    PD_TRY(column(c, pv, k, &v[k]));
    PD_TRY(column(c, tb, k, &t[k]));
  }
  PD_TRY(pd_const_f32(c, norm ? 0.0f : 1.0f, &one));
  PD_TRY(pd_const_f32(c, 0.5f, &half));
  PD_TRY(encode ? encode_center_size(c, p, v, t, one, half, res)
                : decode_center_size(c, p, v, t, one, half, res));
  int o;
  dy_attr a[DY_CONCAT_NATTRS];
  int n_a = dy_concat_attrs_put(&(dy_concat_attrs){.given = DY_GIVEN_ALL, .axis = 2}, a);
  return pd_op(c, "concat", res, 4, a, n_a, pd_out_name(c, "OutputBox"), &o);
}

/* ------------------------------------------------------------------ */
/* interpolation, pixel_shuffle                                        */
/* ------------------------------------------------------------------ */

/* Resample axis `ax` of x (size in) to size out: nearest, or linear with
 * Paddle's source coordinates. */
static dy_status resample(pd_ctx *c, int x, int ax, int64_t in, int64_t out, float scale_attr,
                          bool linear, bool align_corners, int align_mode, const char *name,
                          int *res) {
  float ratio;
  if (out > 1 && align_corners)
    ratio = (float)(in - 1) / (float)(out - 1);
  else if (scale_attr > 0 && !align_corners)
    ratio = 1.0f / scale_attr;
  else
    ratio = out > 0 ? (float)in / (float)out : 0.0f;
  int64_t *i0 = malloc((size_t)out * sizeof *i0), *i1 = malloc((size_t)out * sizeof *i1);
  float *w0 = malloc((size_t)out * sizeof *w0), *w1 = malloc((size_t)out * sizeof *w1);
  dy_status s = DY_OK;
  if (!i0 || !i1 || !w0 || !w1) {
    s = pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (int64_t k = 0; k < out; k++) {
    if (!linear) {
      int64_t src = align_corners ? (int64_t)(ratio * (float)k + 0.5f) : (int64_t)(ratio * (float)k);
      i0[k] = src < in ? src : in - 1;
      continue;
    }
    bool half = align_mode == 0 && !align_corners;
    float src = half ? ratio * ((float)k + 0.5f) - 0.5f : ratio * (float)k;
    if (src < 0)
      src = 0;
    int64_t lo = (int64_t)src;
    if (lo > in - 1)
      lo = in - 1;
    i0[k] = lo;
    i1[k] = lo + (lo < in - 1 ? 1 : 0);
    w1[k] = src - (float)lo;
    w0[k] = 1.0f - w1[k];
  }
  int r = pd_type(c, x)->rank, k0, g0;
  dy_attr ga[DY_GATHER_NATTRS];
  int n_ga = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = ax}, ga);
  if ((s = pd_const(c, DY_I64, 1, &out, i0, NULL, &k0)) ||
      (s = pd_op(c, "gather", (int[]){x, k0}, 2, ga, n_ga, linear ? NULL : name, &g0)))
    goto done;
  *res = g0;
  if (linear) {
    int64_t wshape[DY_MAX_DIMS];
    int wr = r - ax;
    wshape[0] = out;
    for (int i = 1; i < wr; i++)
      wshape[i] = 1;
    int k1, g1, c0, c1, m0, m1;
    if ((s = pd_const(c, DY_I64, 1, &out, i1, NULL, &k1)) ||
        (s = pd_op(c, "gather", (int[]){x, k1}, 2, ga, n_ga, NULL, &g1)) ||
        (s = pd_const(c, DY_F32, wr, wshape, w0, NULL, &c0)) ||
        (s = pd_const(c, DY_F32, wr, wshape, w1, NULL, &c1)) ||
        (s = pd_binary(c, "mul", g0, c0, NULL, &m0)) || (s = pd_binary(c, "mul", g1, c1, NULL, &m1)) ||
        (s = pd_binary(c, "add", m0, m1, name, res)))
      goto done;
  }
done:
  free(i0);
  free(i1);
  free(w0);
  free(w1);
  return s;
}

static dy_status map_interp(pd_ctx *c, bool linear, bool v2) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  static const char *const tensors[] = {"SizeTensor", "Scale"};
  for (int i = 0; i < 2; i++)
    PD_TRY(pd_no_input(c, tensors[i], "the output size"));
  int os;
  int64_t osz[2];
  PD_TRY(pd_in_opt(c, "OutSize", 0, &os));
  if (os >= 0 && pd_const_ints(c, os, osz, 2) != 2)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "OutSize is not two integers known at import "
                   "time (give the inputs static shapes: --shape)");
  bool nhwc = pd_is_nhwc(c, "data_layout");
  const char *on = pd_out_name(c, "Out");
  if (pd_type(c, x)->rank != 4)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "only 2-D interpolation (rank-4 input)");
  if (nhwc)
    PD_TRY(pd_transpose(c, x, 4, (int64_t[]){0, 3, 1, 2}, NULL, &x));
  PD_TRY(pd_need_static_dim(c, x, 2, "interpolation"));
  PD_TRY(pd_need_static_dim(c, x, 3, "interpolation"));
  int64_t in[2] = {pd_type(c, x)->shape[2], pd_type(c, x)->shape[3]};
  int64_t out[2] = {pd_attr_i(c, "out_h", -1), pd_attr_i(c, "out_w", -1)};
  if (os >= 0) /* OutSize wins over out_h / out_w */
    out[0] = osz[0], out[1] = osz[1];
  float sc[2] = {0, 0};
  if (v2) {
    float s[2];
    int n = pd_attr_floats(c, "scale", s, 2);
    if (n == 1)
      sc[0] = sc[1] = s[0];
    else if (n == 2)
      sc[0] = s[0], sc[1] = s[1];
  } else {
    sc[0] = sc[1] = (float)pd_attr_f(c, "scale", 0.0);
  }
  bool by_scale = !(out[0] > 0 && out[1] > 0);
  for (int d = 0; d < 2; d++) {
    if (by_scale) {
      if (!(sc[d] > 0))
        return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "neither out_h/out_w nor scale given");
      double o = (double)((float)in[d] * sc[d]);
      if (!(o >= 1 && o <= 1 << 24))
        return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "scale %g gives an output size %g", sc[d], o);
      out[d] = (int64_t)o;
    } else {
      sc[d] = 0; /* the ratio comes from the sizes */
    }
  }
  for (int d = 0; d < 2; d++)
    if (out[d] < 1 || out[d] > 1 << 24)
      return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "output size %lld", (long long)out[d]);
  bool ac = pd_attr_b(c, "align_corners", true);
  int mode = (int)pd_attr_i(c, "align_mode", 1);
  PD_TRY(resample(c, x, 2, in[0], out[0], sc[0], linear, ac, mode, NULL, &x));
  PD_TRY(resample(c, x, 3, in[1], out[1], sc[1], linear, ac, mode, nhwc ? NULL : on, &o));
  if (nhwc)
    PD_TRY(pd_transpose(c, o, 4, (int64_t[]){0, 2, 3, 1}, on, &o));
  return DY_OK;
}

dy_status pd_import_nearest_interp(pd_ctx *c) { return map_interp(c, false, false); }
dy_status pd_import_nearest_interp_v2(pd_ctx *c) { return map_interp(c, false, true); }
dy_status pd_import_bilinear_interp(pd_ctx *c) { return map_interp(c, true, false); }
dy_status pd_import_bilinear_interp_v2(pd_ctx *c) { return map_interp(c, true, true); }

dy_status pd_import_pixel_shuffle(pd_ctx *c) {
  int x, o;
  PD_TRY(pd_in(c, "X", 0, &x));
  if (pd_is_nhwc(c, "data_format"))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "data_format NHWC");
  int64_t r = pd_attr_i(c, "upscale_factor", 1);
  const dy_type *t = pd_type(c, x);
  if (t->rank != 4 || r < 1 || t->shape[1] < 0 || t->shape[1] % (r * r) || t->shape[2] < 0 ||
      t->shape[3] < 0)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "needs a static [N, C*r*r, H, W] input");
  int64_t C = t->shape[1] / (r * r), H = t->shape[2], W = t->shape[3];
  int64_t n0 = t->shape[0] < 0 ? 0 : t->shape[0];
  PD_TRY(pd_reshape(c, x, 6, (int64_t[]){n0, C, r, r, H, W}, NULL, &x));
  PD_TRY(pd_transpose(c, x, 6, (int64_t[]){0, 1, 4, 2, 5, 3}, NULL, &x));
  return pd_reshape(c, x, 4, (int64_t[]){n0, C, H * r, W * r}, pd_out_name(c, "Out"), &o);
}
