/* fuse_swish.c - the pass "fuse-swish": the exporters' spellings of SiLU
 * and hard-swish become the one op each, so that fuse-conv and
 * fuse-matmul can take them into the epilogue of the conv or GEMM before
 * (ir/acts.def: silu, hard_swish), where they run in vector registers on
 * the stored tile instead of as passes over memory of their own:
 *
 *   mul(x, sigmoid(x))                         -> silu(x)
 *   mul(x, hard_sigmoid(x)) {slope 1/6, offset 0.5}
 *                                              -> hard_swish(x)
 *   div(mul(x, clip(add(x, 3), 0, 6)), 6)      -> hard_swish(x)
 *   (PyTorch's nn.Hardswish exported at opset 13, which has no HardSwish;
 *   the last is the formula written out, also with mul by 1/6)
 *
 * Every operand is f32 of x's type (no broadcast), the inner ops are read
 * by the group only; the mul's operands in either order. The replacement
 * computes the same function up to rounding (hard_swish's formula is
 * x * relu6(x + 3) / 6, the hard sigmoid's x * (x / 6 + 0.5) clamped;
 * they differ by an ulp). `--disable-pass fuse-swish` keeps the spelling
 * as it came. */
#include <math.h>
#include <string.h>

#include "dy_passes.h"

/* Is var's producer of kind k, read by its user only, of type t? */
static dy_op *inner(const dy_program *p, int var, dy_op_kind k, const dy_type *t) {
  dy_op *d = dy_program_def(p, var, NULL, NULL);
  if (!d || d->kind != k || d->n_outputs != 1 || !dy_program_sole_user(p, var) ||
      !dy_type_equal(&p->vars[var]->type, t))
    return NULL;
  return d;
}

/* A binary op of kind k over var x and a scalar constant c (the scalar on
 * either side when commutative)? */
static bool with_scalar(const dy_program *p, const dy_op *op, int x, float c, bool commutes) {
  float v;
  if (op->n_inputs != 2)
    return false;
  if (op->inputs[0] == x && dy_pass_scalar_f32(p, op->inputs[1], dy_program_is_training(p), &v))
    return fabsf(v - c) <= 1e-6f * fabsf(c);
  if (commutes && op->inputs[1] == x &&
      dy_pass_scalar_f32(p, op->inputs[0], dy_program_is_training(p), &v))
    return fabsf(v - c) <= 1e-6f * fabsf(c);
  return false;
}

/* mul(x, g) with g = sigmoid(x) or a hard sigmoid of slope 1/6, offset
 * 1/2: the op kind the pair is, g's op in *g. */
static dy_op_kind gated(const dy_program *p, const dy_op *mul, int x, int gv, dy_op **g) {
  const dy_type *t = &p->vars[mul->outputs[0]]->type;
  dy_op *d = inner(p, gv, DY_OP_SIGMOID, t);
  if (d && d->inputs[0] == x) {
    *g = d;
    return DY_OP_SILU;
  }
  d = inner(p, gv, DY_OP_HARD_SIGMOID, t);
  if (d && d->inputs[0] == x) {
    dy_hard_sigmoid_attrs a = dy_hard_sigmoid_attrs_get(d);
    if (fabs(a.slope - 1.0 / 6.0) < 1e-7 && a.offset == 0.5) {
      *g = d;
      return DY_OP_HARD_SWISH;
    }
  }
  return DY_OP_COUNT;
}

/* mul(x, clip(add(x, 3), 0, 6)): the clip and the add in c[0], c[1]. */
static bool relu6_form(const dy_program *p, const dy_op *mul, int x, int cv, dy_op **c) {
  const dy_type *t = &p->vars[mul->outputs[0]]->type;
  dy_op *clip = inner(p, cv, DY_OP_CLIP, t);
  if (!clip)
    return false;
  dy_clip_attrs ca = dy_clip_attrs_get(clip);
  dy_op *add = ca.min == 0 && ca.max == 6 ? inner(p, clip->inputs[0], DY_OP_ADD, t) : NULL;
  if (!add || !with_scalar(p, add, x, 3.0f, true))
    return false;
  c[0] = clip;
  c[1] = add;
  return true;
}

/* The group rooted at op (a mul or div), its members (root first) in
 * ops, their count in *n, x in *x: the op kind it computes, or
 * DY_OP_COUNT. */
static dy_op_kind match(const dy_program *p, dy_op *op, dy_op **ops, int *n, int *x) {
  const dy_type *t = &p->vars[op->outputs[0]]->type;
  if (t->dtype != DY_F32 || op->n_inputs != 2 || op->inputs[0] == op->inputs[1])
    return DY_OP_COUNT;
  ops[0] = op;
  if (op->kind == DY_OP_MUL)
    for (int side = 0; side < 2; side++) {
      int a = op->inputs[side], b = op->inputs[1 - side];
      if (!dy_type_equal(&p->vars[a]->type, t))
        continue;
      dy_op_kind k = gated(p, op, a, b, &ops[1]);
      if (k != DY_OP_COUNT) {
        *n = 2;
        *x = a;
        return k;
      }
    }
  /* (x * relu6(x + 3)) / 6, or * (1/6) */
  dy_op *m = inner(p, op->inputs[0], DY_OP_MUL, t);
  if (!m || !(op->kind == DY_OP_DIV ? with_scalar(p, op, op->inputs[0], 6.0f, false)
                                    : op->kind == DY_OP_MUL &&
                                          with_scalar(p, op, op->inputs[0], 1.0f / 6.0f, true)))
    return DY_OP_COUNT;
  ops[1] = m;
  for (int side = 0; side < 2; side++) {
    int a = m->inputs[side];
    if (dy_type_equal(&p->vars[a]->type, t) && relu6_form(p, m, a, m->inputs[1 - side], ops + 2)) {
      *n = 4;
      *x = a;
      return DY_OP_HARD_SWISH;
    }
  }
  return DY_OP_COUNT;
}

static dy_status fuse_swish_in(dy_program *p, int bi, bool *changed, const void *ctx,
                               dy_error *err) {
  (void)ctx;
  dy_block *b = p->blocks[bi];
  for (int k = 0; k < b->n_ops; k++) {
    dy_op *op = b->ops[k];
    if (op->kind != DY_OP_MUL && op->kind != DY_OP_DIV)
      continue;
    dy_op *ops[4];
    int n = 0, x = -1;
    dy_op_kind kind = match(p, op, ops, &n, &x);
    if (kind == DY_OP_COUNT)
      continue;
    int out = op->outputs[0];
    dy_op *f = dy_program_append_op(p, bi, kind, &x, 1, &out, 1, NULL, 0, op->loc);
    if (!f || !dy_op_set_srcs(p, f, (const dy_op *const *)ops, n))
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "fuse-swish: out of memory");
    /* the new op takes the root's place (x is defined before every
     * member, so before it too); the inner ops go */
    dy_block_remove_op(b, k);
    dy_block_move_last_to(b, k);
    for (int i = 1; i < n; i++)
      for (int j = 0; j < b->n_ops; j++)
        if (b->ops[j] == ops[i]) {
          dy_block_remove_op(b, j);
          break;
        }
    *changed = true;
    k = -1; /* indices moved; start over */
  }
  return DY_OK;
}

dy_status dy_pass_fuse_swish(dy_program *p, bool *changed, dy_error *err) {
  return dy_pass_each_block(p, fuse_swish_in, NULL, changed, err);
}
