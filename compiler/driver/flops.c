/* flops.c - floating-point operations of a Program, for `dy2stc bench`.
 *
 * Counted per op from its types at a given batch (a multiply-add is 2):
 *
 *   matmul, fused_matmul      2*M*N*K per matrix (+ M*N for a bias)
 *   conv2d, fused_conv2d      2*N*O*Ho*Wo*(C/g)*kh*kw (+ N*O*Ho*Wo each for
 *                             bias and residual)
 *   conv2d_transpose          2*N*C*H*W*(O/g)*kh*kw
 *   pool2d                    one per input element read: output * window
 *                             (global and adaptive: the input's size)
 *   fused_attention           per score (S = groups * Lq * Lk): 2*D for
 *                             q k^T, 1 scale (+1 mask), 4 softmax, 2*Dv
 *                             for the product with v
 *   batch_norm                2 per element, layer_norm / group_norm 7
 *                             (sum, square, scale, shift), softmax 4
 *   elementwise ops           1 per output element; fused_elementwise one
 *                             per operator of its expression
 *   the rest (copies, shapes, gathers)   0
 *
 * An activation fused into matmul or conv counts 1 per output element. The
 * count is what the model asks for, not what a kernel happens to execute
 * (zero padding of a panel or of the im2col matrix is not counted), so
 * GFLOP/s compare across implementations.
 *
 * dy_program_op_runs counts how many times each op runs on given inputs
 * (the static executor, observed): 1 for block 0's, once a trip inside a
 * loop body, once a taken branch inside a cond; `bench --per-op` sums an
 * op's time over its runs with it.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_driver.h"

static int64_t numel_at(const dy_program *p, int v, int64_t batch) {
  return dy_type_numel_at(&p->vars[v]->type, batch);
}

/* Operators in a fused_elementwise postfix expression. */
static int64_t expr_ops(const char *e) {
  int64_t n = 0;
  for (const char *s = e; s && *s;) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    if (*s != '$' && *s != '#')
      n++;
    while (*s && *s != ' ')
      s++;
  }
  return n;
}

static bool has_act(const dy_op *op) {
  const char *act = op->kind == DY_OP_FUSED_MATMUL   ? dy_fused_matmul_attrs_get(op).act
                    : op->kind == DY_OP_FUSED_CONV2D ? dy_fused_conv2d_attrs_get(op).act
                                                     : NULL;
  return act && act[0];
}

int64_t dy_op_flops(const dy_program *p, const dy_op *op, int64_t batch) {
  if (op->n_outputs < 1)
    return 0;
  int64_t out = numel_at(p, op->outputs[0], batch);
  switch (op->kind) {
  case DY_OP_MATMUL:
  case DY_OP_FUSED_MATMUL: {
    const dy_type *x = &p->vars[op->inputs[0]]->type;
    bool tx = dy_matmul_attrs_get(op).transpose_x != 0; /* fused_matmul too */
    int64_t k = x->rank == 1 ? x->shape[0] : x->shape[x->rank - (tx ? 2 : 1)];
    if (k < 0)
      k = batch;
    int64_t f = 2 * out * k;
    if (op->n_inputs > 2)
      f += out;
    return f + (has_act(op) ? out : 0);
  }
  case DY_OP_CONV2D:
  case DY_OP_FUSED_CONV2D: {
    const dy_type *w = &p->vars[op->inputs[1]]->type;
    int64_t f = 2 * out * w->shape[1] * w->shape[2] * w->shape[3];
    if (op->n_inputs > 2)
      f += out * (op->n_inputs - 2); /* bias, residual */
    return f + (has_act(op) ? out : 0);
  }
  case DY_OP_FUSED_DWPW:   /* the depthwise conv (+ bias, act_dw), then the 1x1 conv */
  case DY_OP_FUSED_IRB: { /* fused_irb: the 1x1 expand conv (+ bias, act_e) before */
    int d = op->kind == DY_OP_FUSED_IRB ? 2 : 0;
    const dy_type *wd = &p->vars[op->inputs[1 + d]]->type, *wp = &p->vars[op->inputs[3 + d]]->type;
    dy_fused_dwpw_attrs a = dy_fused_dwpw_attrs_get(op); /* fused_irb extends its schema */
    int64_t t = out / wp->shape[0] * wp->shape[1]; /* the depthwise output's size */
    int64_t f = 2 * t * wd->shape[2] * wd->shape[3] + t + (a.act_dw[0] ? t : 0);
    if (d) {
      const dy_type *we = &p->vars[op->inputs[1]]->type;
      int64_t e = numel_at(p, op->inputs[0], batch) / we->shape[1] * we->shape[0];
      f += 2 * e * we->shape[1] + e + (dy_fused_irb_attrs_get(op).act_e[0] ? e : 0);
    }
    return f + 2 * out * wp->shape[1] + out * (op->n_inputs - 4 - d) + (a.act[0] ? out : 0);
  }
  case DY_OP_FUSED_CONV2D_POOL: {
    /* the conv's work at the positions the windows read, and the max */
    dy_fused_conv2d_pool_attrs a = dy_fused_conv2d_pool_attrs_get(op);
    const dy_type *w = &p->vars[op->inputs[1]]->type;
    int64_t win = a.n_pool_ksize == 2 ? a.pool_ksize[0] * a.pool_ksize[1] : 1;
    int64_t per = 2 * w->shape[1] * w->shape[2] * w->shape[3] + (op->n_inputs > 2) +
                  (a.act[0] != 0);
    return out * win * (per + 1);
  }
  case DY_OP_CONV2D_TRANSPOSE: {
    const dy_type *w = &p->vars[op->inputs[1]]->type;
    return 2 * numel_at(p, op->inputs[0], batch) * w->shape[1] * w->shape[2] * w->shape[3];
  }
  case DY_OP_POOL2D: {
    dy_pool2d_attrs a = dy_pool2d_attrs_get(op);
    if (a.global_pooling || a.adaptive)
      return numel_at(p, op->inputs[0], batch);
    if (a.n_ksize == 2)
      return out * a.ksize[0] * a.ksize[1];
    return out;
  }
  case DY_OP_FUSED_ATTENTION: {
    const dy_type *q = &p->vars[op->inputs[0]]->type, *k = &p->vars[op->inputs[1]]->type;
    dy_fused_attention_attrs a = dy_fused_attention_attrs_get(op);
    int r = q->rank;
    bool packed = a.n_packed == 6, lhd = strcmp(a.layout, "lhd") == 0;
    int ls = packed || !lhd ? r - 2 : r - 3; /* the sequence's axis */
    int64_t d = packed ? a.packed[1] : q->shape[r - 1];
    int64_t dv = packed ? a.packed[2] : p->vars[op->inputs[2]]->type.shape[r - 1];
    /* the scores: the output's shape with the keys for its features */
    dy_type st = p->vars[op->outputs[0]]->type;
    st.shape[st.rank - 1] = k->shape[ls];
    int64_t scores = dy_type_numel_at(&st, batch);
    return scores * (2 * d + 2 * dv + 5 + (op->n_inputs > 3));
  }
  case DY_OP_BATCH_NORM: return 2 * out;
  case DY_OP_LAYER_NORM:
  case DY_OP_GROUP_NORM: return 7 * out;
  case DY_OP_SOFTMAX: return 4 * out;
  case DY_OP_FUSED_ELEMENTWISE: {
    const char *e = dy_fused_elementwise_attrs_get(op).expr;
    return out * (e ? expr_ops(e) : 1);
  }
  default:
    return dy_op_has(op, DY_OPF_ELEMENTWISE) ? out : 0;
  }
}

int64_t dy_program_flops(const dy_program *p, int64_t batch) {
  int64_t f = 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int i = 0; i < p->blocks[b]->n_ops; i++)
      f += dy_op_flops(p, p->blocks[b]->ops[i], batch);
  return f;
}

/* ---- runs per op ---- */

typedef struct {
  const int *slot_of; /* var -> the slot of the op whose first output it is, or -1 */
  int64_t *runs;
} run_count;

static dy_status count_run(void *ctx, int var, const dy_tensor *t, dy_error *err) {
  (void)t;
  (void)err;
  const run_count *c = ctx;
  if (c->slot_of[var] >= 0)
    c->runs[c->slot_of[var]]++;
  return DY_OK;
}

dy_status dy_program_op_runs(const dy_program *p, dy_tensor *const *inputs, int64_t *runs,
                             dy_error *err) {
  int n_ops = dy_program_count_ops(p);
  int *slot_of = malloc(sizeof *slot_of * ((size_t)p->n_vars + 1));
  dy_tensor **outs = calloc((size_t)p->n_fetches + 1, sizeof *outs);
  if (!slot_of || !outs) {
    free(slot_of);
    free(outs);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (int v = 0; v < p->n_vars; v++)
    slot_of[v] = -1;
  for (int i = 0; i < n_ops; i++)
    runs[i] = 0;
  for (int b = 0; b < p->n_blocks; b++)
    for (int k = 0; k < p->blocks[b]->n_ops; k++) {
      const dy_op *op = p->blocks[b]->ops[k];
      if (op->n_outputs > 0)
        slot_of[op->outputs[0]] = dy_codegen_op_slot(p, b, k);
    }
  run_count c = {slot_of, runs};
  dy_status s = dy_executor_run_observed(p, inputs, p->n_feeds, outs, p->n_fetches, count_run,
                                         &c, err);
  for (int i = 0; i < p->n_fetches; i++)
    dy_tensor_free(outs[i]);
  free(outs);
  free(slot_of);
  return s;
}
