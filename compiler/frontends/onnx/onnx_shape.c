/* onnx_shape.c - ONNX's data movement, indexing and reductions onto the
 * op table: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split,
 * Slice, Expand, Tile, Pad, Gather, GatherElements, Trilu, the Reduce*
 * family, ArgMax and ArgMin.
 *
 * Operands that decide a shape (Reshape's shape, Slice's starts, a
 * reduction's axes) must be constants: ox_get_ints names the operand when
 * one is a run-time value. A shape value holding symbolic sizes (the
 * batch, seq, ...: onnx_internal.h) may flow through the movement ops and
 * decide Reshape's, Expand's and Slice's sizes. Conventions as in
 * onnx_ops.c.
 */
#include <limits.h>
#include <string.h>

#include "onnx_internal.h"

/* ------------------------------------------------------------------ */
/* shapes and data movement                                            */
/* ------------------------------------------------------------------ */

/* Reshape(data, shape) attributes: allowzero (0, opset 14). opset < 5:
 * shape attribute. The target is worked out as size expressions (a shape
 * value's symbolic entries as they are, 0 copying the input's dim, -1 the
 * exact quotient), then written for the reshape op: a static size as
 * itself, a symbolic one as 0 where the input has that very dim at the
 * same position, else -1 (at most one such). */
static dy_status map_reshape(ox_ctx *c) {
  ox_value *x, *sv;
  TRY(ox_check_attrs(c, "allowzero"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &sv));
  const int64_t *shape;
  int64_t n;
  TRY(ox_get_ints(c, sv, "Reshape's shape", true, &shape, &n));
  if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "target rank %lld", (long long)n);
  bool allowzero = ox_attr_i(c, "allowzero", 0) != 0;
  if (!sv->sym && dy_type_is_static(&x->type)) {
    /* static: the reshape op's own rules (and errors) as they are */
    for (int i = 0; i < n; i++)
      if (shape[i] == 0 && allowzero)
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "allowzero with a 0 in the shape (an empty tensor)");
    OUT(0, ox_reshape(c, x, (int)n, shape));
  }
  int64_t want[DY_MAX_DIMS], t[DY_MAX_DIMS], total, known = 1;
  int infer_at = -1;
  char b1[96], b2[96];
  if (!dy_type_numel_dim(&x->type, &total))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "the size of %s is not a size expression",
                   x->name);
  for (int i = 0; i < n; i++) {
    int64_t e = ox_entry(sv, i);
    if (e == 0 && !ox_sym_dim(sv, i)) {
      if (allowzero)
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "allowzero with a 0 in the shape (an empty tensor)");
      if (i >= x->type.rank)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "0 at position %d of the shape but "
                       "the input has rank %d", i, x->type.rank);
      e = x->type.shape[i]; /* copy the input's dim */
    } else if (e == -1 && !ox_sym_dim(sv, i)) {
      if (infer_at >= 0)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "more than one -1 in the shape");
      infer_at = i;
      continue;
    } else if (e < -1 && !ox_sym_dim(sv, i)) {
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "size %lld in the shape", (long long)e);
    }
    want[i] = e;
    bool plain = known >= 0 && e >= 0;
    if (!dy_dim_mul(known, e, &known) || (known >= 0 && known > DY_MAX_NUMEL)) {
      if (plain || known >= 0)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "the target shape is larger than the "
                       "maximum tensor size (%lld elements)", (long long)DY_MAX_NUMEL);
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the target shape's size is not a size "
                     "expression");
    }
  }
  if (infer_at >= 0 && (known == 0 || !dy_dim_div(total, known, &want[infer_at])))
    return ox_fail(c, DY_STATUS_SHAPE_MISMATCH, "cannot infer the -1: %s elements over %s",
                   dy_dim_name(total, b1, sizeof b1), dy_dim_name(known, b2, sizeof b2));
  if (infer_at < 0 && known != total)
    return ox_fail(c, DY_STATUS_SHAPE_MISMATCH, "%s elements cannot be reshaped to %s",
                   dy_dim_name(total, b1, sizeof b1), dy_dim_name(known, b2, sizeof b2));
  int n_infer = 0;
  for (int i = 0; i < n; i++) {
    if (want[i] >= 0)
      t[i] = want[i];
    else if (i < x->type.rank && x->type.shape[i] == want[i])
      t[i] = 0; /* copy the input's dim */
    else
      t[i] = n_infer++ ? -2 : -1;
  }
  ox_value *y;
  if (n_infer <= 1) {
    y = ox_reshape(c, x, (int)n, t);
  } else {
    /* several new symbolic sizes ([seq*batch, 32] -> [seq, batch, 32]):
     * reshape_dims spells them out */
    char dims[512];
    size_t at = 0;
    for (int i = 0; i < n; i++) {
      at += (size_t)snprintf(dims + at, at < sizeof dims ? sizeof dims - at : 0, "%s%s",
                             i ? "," : "", dy_dim_str(want[i], b1, sizeof b1));
    }
    if (at >= sizeof dims)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "the target shape's sizes are too long to spell");
    dy_attr a[DY_RESHAPE_DIMS_NATTRS];
    int n_a = dy_reshape_dims_attrs_put(&(dy_reshape_dims_attrs){
        .given = DY_GIVEN_ALL, .dims = dims}, a);
    y = ox_op(c, "reshape_dims", &x, 1, a, n_a);
  }
  if (!y)
    return c->err->status;
  for (int i = 0; i < n; i++)
    if (y->type.shape[i] != want[i])
      return ox_fail(c, DY_STATUS_INTERNAL, "reshape: dim %d is %s, not %s", i,
                     dy_dim_name(y->type.shape[i], b1, sizeof b1),
                     dy_dim_name(want[i], b2, sizeof b2));
  OUT(0, y);
}

/* Flatten attributes: axis (1): [prod(d[:axis]), prod(d[axis:])]. */
static dy_status map_flatten(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis"));
  TRY(ox_need_in(c, 0, &x));
  int r = x->type.rank, axis;
  int64_t a = ox_attr_i(c, "axis", 1);
  if (a == r) {
    axis = r;
  } else {
    TRY(ox_axis(c, a, r, &axis));
  }
  int64_t head = 1, tail = 1;
  bool head_dyn = false, tail_dyn = false;
  for (int i = 0; i < r; i++) {
    int64_t d = x->type.shape[i];
    if (d < 0)
      *(i < axis ? &head_dyn : &tail_dyn) = true;
    else
      *(i < axis ? &head : &tail) *= d;
  }
  int64_t t[2] = {head, tail};
  if (head_dyn && head == 1)
    t[0] = -1;
  else if (tail_dyn && tail == 1)
    t[1] = -1;
  else if (head_dyn || tail_dyn)
    return ox_fail(c, DY_STATUS_UNSUPPORTED,
                   "flattening merges the dynamic batch dim with other dims");
  OUT(0, ox_reshape(c, x, 2, t));
}

/* o, or when the op folded away to its input x (of rank r), a no-op
 * reshape of x, so that the node's output is a value of its own. */
static ox_value *own_value(ox_ctx *c, ox_value *x, int r, ox_value *o) {
  if (o != x)
    return o;
  int64_t zeros[DY_MAX_DIMS] = {0}; /* 0: keep the input's dim */
  return ox_reshape(c, x, r, zeros);
}

/* Transpose attributes: perm (reversed dims). */
static dy_status map_transpose(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, "perm"));
  TRY(ox_need_in(c, 0, &x));
  int n;
  const int64_t *perm = ox_attr_ints(c, "perm", &n);
  int64_t p[DY_MAX_DIMS];
  int r = x->type.rank;
  if (n >= 0 && n != r)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "perm has %d entries for rank %d", n, r);
  for (int i = 0; i < r; i++)
    p[i] = perm ? perm[i] : r - 1 - i;
  OUT(0, own_value(c, x, r, ox_transpose(c, x, r, p)));
}

/* Axes from an attribute (before `since`) or from input 1. *n = -1: none. */
static dy_status axes_operand(ox_ctx *c, int since, int input, int64_t *axes,
                              int *n) {
  *n = -1;
  if (c->opset < since) {
    int k;
    const int64_t *a = ox_attr_ints(c, "axes", &k);
    if (k > DY_MAX_DIMS)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%d axes", k);
    for (int i = 0; i < k; i++)
      axes[i] = a[i];
    *n = k;
    return DY_OK;
  }
  ox_value *v = ox_in(c, input);
  if (!v)
    return DY_OK;
  const int64_t *a;
  int64_t k;
  TRY(ox_get_ints(c, v, "axes", false, &a, &k));
  if (k > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%lld axes", (long long)k);
  for (int i = 0; i < k; i++)
    axes[i] = a[i];
  *n = (int)k;
  return DY_OK;
}

/* The operands of Squeeze and Unsqueeze: data, and axes (an attribute
 * before opset 13, else input 1; *n = -1: none). */
static dy_status squeeze_operands(ox_ctx *c, ox_value **x, int64_t *axes, int *n) {
  TRY(ox_check_attrs(c, c->opset < 13 ? "axes" : ""));
  TRY(ox_need_in(c, 0, x));
  return axes_operand(c, 13, 1, axes, n);
}

/* Squeeze(data, axes) (axes attribute before opset 13). */
static dy_status map_squeeze(ox_ctx *c) {
  ox_value *x;
  int64_t axes[DY_MAX_DIMS];
  int n;
  TRY(squeeze_operands(c, &x, axes, &n));
  OUT(0, ox_squeeze(c, x, n < 0 ? 0 : n, axes));
}

/* Unsqueeze(data, axes) (axes attribute before opset 13). */
static dy_status map_unsqueeze(ox_ctx *c) {
  ox_value *x;
  int64_t axes[DY_MAX_DIMS];
  int n;
  TRY(squeeze_operands(c, &x, axes, &n));
  if (n <= 0)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "Unsqueeze needs axes");
  OUT(0, ox_unsqueeze(c, x, n, axes));
}

/* Concat attributes: axis (required). Any number of inputs: beyond
 * DY_MAX_OP_INPUTS a tree of concats (ox_concat_many). */
static dy_status map_concat(ox_ctx *c) {
  TRY(ox_check_attrs(c, "axis"));
  int n = ox_n_in(c);
  if (!ox_attr(c, "axis"))
    return ox_fail(c, DY_STATUS_FORMAT, "Concat needs an axis");
  ox_value **in = malloc(sizeof *in * (size_t)(n > 0 ? n : 1));
  if (!in)
    return ox_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int k = 0;
  dy_status s = DY_OK;
  for (int i = 0; i < n && !s; i++)
    if (!(s = ox_need_in(c, i, &in[k])) && (dy_type_numel(&in[k]->type) != 0 || n == 1))
      k++; /* empty inputs add nothing */
  if (!s && k == 0)
    s = ox_fail(c, DY_STATUS_UNSUPPORTED, "every input is empty");
  ox_value *o = s ? NULL : ox_concat_many(c, in, k, ox_attr_i(c, "axis", 0));
  if (o && o == in[0] && k == 1) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    o = ox_reshape(c, o, o->type.rank, zeros);
  }
  free(in);
  if (s)
    return s;
  OUT(0, o);
}

/* Split(input, split) attributes: axis (0), split (before 13),
 * num_outputs (18). Each output is a slice. */
static dy_status map_split(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 13 ? "axis split" : "axis num_outputs"));
  TRY(ox_need_in(c, 0, &x));
  int axis, n_out = ox_n_out(c);
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), x->type.rank, &axis));
  int64_t dim = x->type.shape[axis];
  if (dim < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "splitting the dynamic batch dim");
  int64_t sizes[64];
  if (n_out > 64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "more than 64 outputs");
  const int64_t *sp = NULL;
  int64_t ns = -1;
  if (c->opset < 13) {
    int k;
    sp = ox_attr_ints(c, "split", &k);
    ns = k;
  } else if (ox_in(c, 1)) {
    TRY(ox_get_ints(c, ox_in(c, 1), "Split's split", false, &sp, &ns));
  }
  if (sp && ns >= 0) {
    if (ns != n_out)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "split has %lld entries for %d outputs",
                     (long long)ns, n_out);
    int64_t sum = 0;
    for (int i = 0; i < n_out; i++) {
      if (sp[i] < 0 || sp[i] > dim)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "split entry %d is %lld, outside [0, %lld]",
                       i, (long long)sp[i], (long long)dim);
      sum += sizes[i] = sp[i]; /* at most 64 entries of at most dim each */
    }
    if (sum != dim)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "split sums to %lld, the axis is %lld",
                     (long long)sum, (long long)dim);
  } else {
    int64_t parts = ox_attr_i(c, "num_outputs", n_out);
    if (parts != n_out || n_out < 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "num_outputs %lld for %d outputs",
                     (long long)parts, n_out);
    int64_t each = (dim + n_out - 1) / n_out;
    if (c->opset < 18 && dim % n_out)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "%lld does not split in %d equal parts",
                     (long long)dim, n_out);
    for (int i = 0; i < n_out; i++) {
      int64_t left = dim - each * i;
      sizes[i] = left < each ? (left > 0 ? left : 0) : each;
    }
  }
  int64_t start = 0, ax = axis;
  for (int i = 0; i < n_out; i++) {
    int64_t end = start + sizes[i];
    if (sizes[i] == 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "an empty split (output %d)", i);
    TRY(ox_set_or_fail(c, i, ox_slice(c, x, 1, &start, &end, &ax, NULL)));
    start = end;
  }
  return DY_OK;
}

/* Slice(data, starts, ends, axes, steps); before opset 10 starts, ends,
 * axes are attributes. A batch entry in ends means "to the end"; any
 * value a file holds is taken as written (INT64_MIN with a negative step:
 * to the start, so x[::-1]). */
static dy_status map_slice(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 10 ? "starts ends axes" : ""));
  TRY(ox_need_in(c, 0, &x));
  int64_t st[DY_MAX_DIMS], en[DY_MAX_DIMS], ax[DY_MAX_DIMS], sp[DY_MAX_DIMS];
  int64_t n = 0;
  const int64_t *p[4] = {0};
  int64_t len[4] = {-1, -1, -1, -1};
  if (c->opset < 10) {
    for (int k = 0; k < 3; k++) {
      int m;
      p[k] = ox_attr_ints(c, k == 0 ? "starts" : k == 1 ? "ends" : "axes", &m);
      len[k] = m;
    }
  } else {
    static const char *const what[] = {"Slice's starts", "Slice's ends", "Slice's axes",
                                       "Slice's steps"};
    for (int k = 0; k < 4; k++)
      if (ox_in(c, k + 1))
        TRY(ox_get_ints(c, ox_in(c, k + 1), what[k], k == 1, &p[k], &len[k]));
  }
  if (!p[0] || !p[1] || len[0] != len[1])
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "starts and ends must be given, of one length");
  n = len[0];
  if (n > DY_MAX_DIMS || (p[2] && len[2] != n) || (p[3] && len[3] != n))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "bad starts/ends/axes/steps lengths");
  for (int i = 0; i < n; i++) {
    st[i] = p[0][i];
    en[i] = p[1][i];
    ax[i] = p[2] ? p[2][i] : i;
    sp[i] = p[3] ? p[3][i] : 1;
    int64_t d = c->opset >= 10 ? ox_sym_dim(ox_in(c, 2), i) : 0;
    if (d) { /* a symbolic end: the whole axis when it is the axis' size */
      int a;
      TRY(ox_axis(c, ax[i], x->type.rank, &a));
      if (x->type.shape[a] != d || sp[i] < 0)
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "a slice of axis %d ending at a dynamic size other than the axis' "
                       "own", a);
      en[i] = INT64_MAX;
    }
  }
  OUT(0, ox_slice(c, x, (int)n, st, en, ax, sp));
}

/* Expand(input, shape): bidirectional broadcast. A symbolic entry keeps
 * the input's dim (-1) where that is the same size. */
static dy_status map_expand(ox_ctx *c) {
  ox_value *x, *sv;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &sv));
  const int64_t *shape;
  int64_t n;
  TRY(ox_get_ints(c, sv, "Expand's shape", true, &shape, &n));
  if (n > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "rank %lld", (long long)n);
  int64_t t[DY_MAX_DIMS], want[DY_MAX_DIMS];
  bool grow = false; /* a dim of 1 grows to a dynamic size */
  for (int i = 0; i < n; i++) {
    t[i] = shape[i];
    want[i] = ox_entry(sv, i);
    int64_t d = ox_sym_dim(sv, i);
    if (d) {
      int j = i - (int)(n - x->type.rank);
      if (j >= 0 && x->type.shape[j] == d) {
        t[i] = -1;
        continue;
      }
      if (j >= 0 && x->type.shape[j] != 1)
        return ox_fail(c, DY_STATUS_UNSUPPORTED,
                       "expanding a dim to a dynamic size other than its own");
      grow = true;
    }
  }
  if (grow) {
    /* to a run-time tensor of the target's sizes: expand_as */
    int r = x->type.rank > n ? x->type.rank : (int)n;
    int64_t full[DY_MAX_DIMS];
    for (int i = 0; i < r; i++) {
      int xi = i - (r - x->type.rank), si = i - (r - (int)n);
      int64_t xd = xi >= 0 ? x->type.shape[xi] : 1, sd = si >= 0 ? want[si] : 1;
      full[i] = sd == 1 ? xd : sd;
    }
    ox_value *like = ox_like_make(c, r, full);
    if (!like)
      return ox_fail(c, DY_STATUS_UNSUPPORTED,
                     "expanding to dynamic sizes that no run-time tensor has (dy2stc "
                     "expands to such a tensor)");
    OUT(0, ox_op(c, "expand_as", (ox_value *[]){x, like}, 2, NULL, 0));
  }
  dy_attr a[DY_EXPAND_NATTRS];
  int n_a = dy_expand_attrs_put(&(dy_expand_attrs){
      .given = DY_GIVEN_ALL, .shape = t, .n_shape = (int)n}, a);
  OUT(0, ox_op(c, "expand", &x, 1, a, n_a));
}

/* Tile(input, repeats). */
static dy_status map_tile(ox_ctx *c) {
  ox_value *x, *rv;
  TRY(ox_check_attrs(c, ""));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &rv));
  const int64_t *r;
  int64_t n;
  TRY(ox_get_ints(c, rv, "Tile's repeats", false, &r, &n));
  if (n != x->type.rank)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "repeats has %lld entries for rank %d",
                   (long long)n, x->type.rank);
  dy_attr a[DY_TILE_NATTRS];
  int n_a = dy_tile_attrs_put(&(dy_tile_attrs){
      .given = DY_GIVEN_ALL, .repeat_times = r, .n_repeat_times = (int)n}, a);
  OUT(0, ox_op(c, "tile", &x, 1, a, n_a));
}

/* Pad(data, pads, constant_value, axes) attributes: mode ("constant").
 * Before opset 11: attributes pads, value (0). axes input from 18. */
static dy_status map_pad(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 11 ? "mode pads value" : "mode"));
  TRY(ox_need_in(c, 0, &x));
  char mode[32];
  ox_attr_s(c, "mode", "constant", mode, sizeof mode);
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "mode '%s'", mode);
  int r = x->type.rank;
  const int64_t *pads;
  int64_t np;
  float value = 0;
  int64_t axes[DY_MAX_DIMS];
  int n_axes = r;
  for (int i = 0; i < r; i++)
    axes[i] = i;
  if (c->opset < 11) {
    int k;
    pads = ox_attr_ints(c, "pads", &k);
    np = k;
    value = ox_attr_f(c, "value", 0.0f);
  } else {
    ox_value *pv, *cv = ox_in(c, 2);
    TRY(ox_need_in(c, 1, &pv));
    TRY(ox_get_ints(c, pv, "Pad's pads", false, &pads, &np));
    if (cv) {
      if (!cv->c) {
        ox_get_ints(c, cv, "Pad's constant_value", false, &pads, &np);
        return c->err->status;
      }
      if (dy_type_numel(&cv->type) != 1)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "constant_value must be a scalar");
      value = cv->type.dtype == DY_F32    ? ((float *)cv->c->data)[0]
              : cv->type.dtype == DY_I64  ? (float)((int64_t *)cv->c->data)[0]
              : cv->type.dtype == DY_BOOL ? ((unsigned char *)cv->c->data)[0]
                                          : (float)dy_quant_value(cv->type.dtype, cv->c->data, 0);
    }
    if (ox_in(c, 3)) {
      const int64_t *a;
      int64_t na;
      TRY(ox_get_ints(c, ox_in(c, 3), "Pad's axes", false, &a, &na));
      if (na > r)
        return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "too many axes");
      n_axes = (int)na;
      for (int i = 0; i < n_axes; i++) {
        int ax;
        TRY(ox_axis(c, a[i], r, &ax));
        axes[i] = ax;
      }
    }
  }
  if (!pads || np != 2 * n_axes)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "pads has %lld entries for %d axes",
                   (long long)np, n_axes);
  int64_t full[2 * DY_MAX_DIMS] = {0};
  for (int i = 0; i < n_axes; i++) {
    full[axes[i]] = pads[i];
    full[r + axes[i]] = pads[n_axes + i];
  }
  OUT(0, own_value(c, x, r, ox_pad(c, x, full, mode, value)));
}

/* Indices of int32 (or int8, uint8) as the int64 dy2stc's index ops
 * take (a constant folds). */
static ox_value *as_i64_index(ox_ctx *c, ox_value *idx) {
  dy_dtype t = idx->type.dtype;
  return t == DY_I32 || t == DY_I8 || t == DY_U8 ? ox_cast(c, idx, DY_I64) : idx;
}

/* An op of (data, indices) with one integer attribute attr (default 0),
 * mapped to dy2stc's op op, whose one (integer) attribute it is. */
static dy_status map_indexed(ox_ctx *c, const char *attr, const char *op) {
  ox_value *x, *idx;
  TRY(ox_check_attrs(c, attr));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &idx));
  if (!(idx = as_i64_index(c, idx)))
    return c->err->status;
  dy_op_kind k;
  if (!dy_op_kind_from_name(op, &k) || dy_op_info_of(k)->n_attrs != 1)
    return ox_fail(c, DY_STATUS_INTERNAL, "%s: not an op of one attribute", op);
  dy_attr a = dy_op_info_of(k)->attrs[0].dflt; /* by the schema: its name and kind */
  a.i = ox_attr_i(c, attr, 0);
  ox_value *in[2] = {x, idx};
  OUT(0, ox_op(c, op, in, 2, &a, 1));
}

/* Gather(data, indices) attributes: axis (0). */
static dy_status map_gather(ox_ctx *c) { return map_indexed(c, "axis", "gather"); }

/* GatherElements(data, indices) attributes: axis (0). */
static dy_status map_gather_elements(ox_ctx *c) {
  return map_indexed(c, "axis", "gather_elements");
}

/* Trilu(input, k) attributes: upper (1). Element (i, j) of each matrix is
 * kept where j - i >= k (upper) or j - i <= k (lower); the j - i table is
 * a constant, k may be a run-time scalar (then the mask is computed, else
 * it folds to a constant). */
static dy_status map_trilu(ox_ctx *c) {
  ox_value *x, *k = ox_in(c, 1);
  TRY(ox_check_attrs(c, "upper"));
  TRY(ox_need_in(c, 0, &x));
  if (k && (k->type.dtype != DY_I64 || dy_type_numel(&k->type) != 1 || k->type.rank > 1))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "k must be an int64 scalar");
  int r = x->type.rank;
  if (r < 2)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "rank %d < 2", r);
  int64_t rows = x->type.shape[r - 2], cols = x->type.shape[r - 1];
  if (rows < 0 || cols < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "a dynamic matrix dim");
  bool upper = ox_attr_i(c, "upper", 1) != 0;
  int64_t shape[2] = {rows, cols};
  ox_value *d = ox_new_const(c, DY_I64, 2, shape, NULL);
  if (!d)
    return c->err->status;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      ((int64_t *)d->c->data)[i * cols + j] = j - i;
  if (!k)
    k = ox_const_i64(c, 0);
  else if (k->type.rank == 1)
    k = ox_reshape(c, k, 0, NULL);
  /* the elements to zero: j - i < k (upper) or j - i > k (lower) */
  ox_value *drop = ox_binary(c, upper ? "less" : "greater", d, k);
  OUT(0, ox_where(c, drop, ox_zero_like(c, x->type.dtype), x));
}

/* OneHot(indices, depth, values) attributes: axis (-1). depth must be a
 * constant (it is the new axis' extent); indices (any number type, cast to
 * int64, negatives counting from the end) and values [off, on] may be
 * run-time. An index outside [-depth, depth) gives an all-off row. */
static dy_status map_one_hot(ox_ctx *c) {
  ox_value *idx, *dv, *vals;
  TRY(ox_check_attrs(c, "axis"));
  TRY(ox_need_in(c, 0, &idx));
  TRY(ox_need_in(c, 1, &dv));
  TRY(ox_need_in(c, 2, &vals));
  if (!ox_is_const(dv))
    return ox_get_ints(c, dv, "OneHot's depth", false, NULL, NULL);
  if (dy_type_numel(&dv->type) != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "depth must be a scalar");
  double dd = dv->type.dtype == DY_F32   ? ((float *)dv->c->data)[0]
              : dv->type.dtype == DY_I64 ? (double)((int64_t *)dv->c->data)[0]
              : dv->type.dtype == DY_BOOL ? -1
                                          : (double)dy_quant_value(dv->type.dtype, dv->c->data, 0);
  int64_t depth = (int64_t)dd;
  if (depth < 1 || depth > (1 << 24))
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "depth %g", dd);
  if (dy_type_numel(&vals->type) != 2 || vals->type.rank != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "values must be [off, on]");
  int r = idx->type.rank, axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", -1), r + 1, &axis));
  if (r + 1 > DY_MAX_DIMS)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "rank %d", r + 1);
  ox_value *i = ox_cast(c, idx, DY_I64);
  ox_value *neg = ox_binary(c, "less", i, ox_const_i64(c, 0));
  i = ox_where(c, neg, ox_binary(c, "add", i, ox_const_i64(c, depth)), i);
  ox_value *hot = ox_binary(c, "equal", ox_unsqueeze(c, i, 1, (int64_t[]){axis}),
                            ox_iota(c, depth, r + 1, axis));
  int64_t z = 0, o = 1, e = 2, ax0 = 0;
  ox_value *off = ox_slice(c, vals, 1, &z, &o, &ax0, NULL);
  ox_value *on = ox_slice(c, vals, 1, &o, &e, &ax0, NULL);
  OUT(0, ox_where(c, hot, on, off));
}

/* GatherND(data, indices) attributes: batch_dims (0). */
static dy_status map_gather_nd(ox_ctx *c) { return map_indexed(c, "batch_dims", "gather_nd"); }

/* ScatterElements(data, indices, updates) attributes: axis (0), reduction
 * ("none"; add, mul from opset 16, max, min from 18). Scatter (opset 9, 10)
 * is the same without reduction. ScatterND: reduction only. */
static dy_status map_scatter(ox_ctx *c, const char *op, bool with_axis) {
  ox_value *x, *idx, *upd;
  TRY(ox_check_attrs(c, with_axis ? "axis reduction" : "reduction"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &idx));
  TRY(ox_need_in(c, 2, &upd));
  if (!(idx = as_i64_index(c, idx)))
    return c->err->status;
  char red[16];
  ox_attr_s(c, "reduction", "none", red, sizeof red);
  ox_value *in[3] = {x, idx, upd};
  dy_attr a[DY_SCATTER_ELEMENTS_NATTRS + DY_SCATTER_ND_NATTRS];
  int na = with_axis ? dy_scatter_elements_attrs_put(&(dy_scatter_elements_attrs){
                           .given = DY_GIVEN_ALL, .axis = ox_attr_i(c, "axis", 0),
                           .reduction = red}, a)
                     : dy_scatter_nd_attrs_put(&(dy_scatter_nd_attrs){
                           .given = DY_GIVEN_ALL, .reduction = red}, a);
  OUT(0, ox_op(c, op, in, 3, a, na));
}

static dy_status map_scatter_elements(ox_ctx *c) {
  return map_scatter(c, "scatter_elements", true);
}

static dy_status map_scatter_nd(ox_ctx *c) { return map_scatter(c, "scatter_nd", false); }

/* ReverseSequence(input, sequence_lens) attributes: batch_axis (1),
 * time_axis (0). Element t < len[b] of sequence b comes from len[b] - 1 - t,
 * the rest stay: the source indices are computed (lens may be run-time)
 * and gathered along the time axis. */
static dy_status map_reverse_sequence(ox_ctx *c) {
  ox_value *x, *lens;
  TRY(ox_check_attrs(c, "batch_axis time_axis"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &lens));
  int r = x->type.rank, ba, ta;
  if (r < 2)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "rank %d < 2", r);
  TRY(ox_axis(c, ox_attr_i(c, "batch_axis", 1), r, &ba));
  TRY(ox_axis(c, ox_attr_i(c, "time_axis", 0), r, &ta));
  int64_t T = x->type.shape[ta];
  if (ba == ta || T < 0 || lens->type.rank != 1 || lens->type.dtype != DY_I64)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "needs distinct axes, a static time axis and "
                   "int64 lengths [batch]");
  int64_t lshape[DY_MAX_DIMS];
  for (int i = 0; i < r; i++)
    lshape[i] = i == ba ? x->type.shape[ba] : 1;
  ox_value *len = ox_reshape(c, lens, r, lshape);
  ox_value *t = ox_iota(c, T, r, ta);
  ox_value *rev = ox_binary(c, "sub", ox_binary(c, "sub", len, ox_const_i64(c, 1)), t);
  ox_value *idx = ox_where(c, ox_binary(c, "less", t, len), rev, t);
  dy_attr a[DY_EXPAND_NATTRS];
  int n_a = dy_expand_attrs_put(&(dy_expand_attrs){
      .given = DY_GIVEN_ALL, .shape = x->type.shape, .n_shape = r}, a);
  idx = idx ? ox_op(c, "expand", &idx, 1, a, n_a) : NULL;
  ox_value *in[2] = {x, idx};
  dy_attr g[DY_GATHER_ELEMENTS_NATTRS];
  int n_g = dy_gather_elements_attrs_put(&(dy_gather_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = ta}, g);
  OUT(0, idx ? ox_op(c, "gather_elements", in, 2, g, n_g) : NULL);
}

/* Compress(input, condition) attributes: axis (none: the flattened input).
 * The selected indices, gathered: a constant condition's at import time; a
 * run-time one's by nonzero (its count a size set at run time; a condition
 * longer than the axis with a true beyond it is gather's index error). */
static dy_status map_compress(ox_ctx *c) {
  ox_value *x, *cv;
  TRY(ox_check_attrs(c, "axis"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &cv));
  if (cv->type.dtype != DY_BOOL || cv->type.rank != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "condition must be a 1-D bool");
  int axis = 0;
  ox_value *v = x;
  if (ox_attr(c, "axis")) {
    TRY(ox_axis(c, ox_attr_i(c, "axis", 0), x->type.rank, &axis));
  } else {
    int64_t n = dy_type_numel(&x->type);
    if (n < 0)
      return ox_fail(c, DY_STATUS_UNSUPPORTED, "flattening a dynamic tensor");
    v = ox_reshape(c, x, 1, &n);
  }
  dy_attr a[DY_GATHER_NATTRS];
  int n_a = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = axis}, a);
  if (!ox_is_const(cv)) {
    ox_value *sel = ox_squeeze(c, ox_nonzero(c, cv), 1, (int64_t[]){0}); /* [count] */
    OUT(0, v && sel ? ox_op(c, "gather", (ox_value *[]){v, sel}, 2, a, n_a) : NULL);
  }
  int64_t dim = v ? v->type.shape[axis] : 0, n = dy_type_numel(&cv->type), k = 0;
  const unsigned char *cond = cv->c->data;
  for (int64_t i = 0; i < n && i < dim; i++)
    k += cond[i] != 0;
  if (k == 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "an empty result");
  ox_value *sel = ox_new_const(c, DY_I64, 1, &k, NULL);
  if (!sel)
    return c->err->status;
  k = 0;
  for (int64_t i = 0; i < n && i < dim; i++)
    if (cond[i])
      ((int64_t *)sel->c->data)[k++] = i;
  ox_value *in[2] = {v, sel};
  OUT(0, v ? ox_op(c, "gather", in, 2, a, n_a) : NULL);
}

/* ------------------------------------------------------------------ */
/* reductions, arg max/min                                             */
/* ------------------------------------------------------------------ */

/* Reduce*(data, axes) attributes: keepdims (1), axes (attribute before
 * opset 13 for ReduceSum, 18 for the others), noop_with_empty_axes (0). */
static dy_status reduce_common(ox_ctx *c, ox_value **x, int64_t *axes, int *n,
                               bool *keep, bool *noop) {
  bool sum = strcmp(c->node->op_type, "ReduceSum") == 0;
  int since = sum ? 13 : 18;
  TRY(ox_check_attrs(c, c->opset < since ? "keepdims axes" : "keepdims noop_with_empty_axes"));
  TRY(ox_need_in(c, 0, x));
  TRY(axes_operand(c, since, 1, axes, n));
  *keep = ox_attr_i(c, "keepdims", 1) != 0;
  *noop = *n <= 0 && ox_attr_i(c, "noop_with_empty_axes", 0) != 0;
  if (*n < 0)
    *n = 0;
  return DY_OK;
}

static dy_status map_reduce(ox_ctx *c) {
  ox_value *x;
  int64_t axes[DY_MAX_DIMS];
  int n;
  bool keep, noop;
  TRY(reduce_common(c, &x, axes, &n, &keep, &noop));
  const char *t = c->node->op_type + 6; /* after "Reduce" */
  if (noop) {
    int64_t zeros[DY_MAX_DIMS] = {0};
    OUT(0, ox_reshape(c, x, x->type.rank, zeros));
  }
  ox_value *r;
  if (strcmp(t, "Sum") == 0)
    r = ox_reduce(c, "reduce_sum", x, n, axes, keep);
  else if (strcmp(t, "Mean") == 0)
    r = ox_reduce(c, "reduce_mean", x, n, axes, keep);
  else if (strcmp(t, "Max") == 0)
    r = ox_reduce(c, "reduce_max", x, n, axes, keep);
  else if (strcmp(t, "Min") == 0)
    r = ox_reduce(c, "reduce_min", x, n, axes, keep);
  else if (strcmp(t, "Prod") == 0)
    r = ox_reduce(c, "reduce_prod", x, n, axes, keep);
  else if (strcmp(t, "L1") == 0)
    r = ox_reduce(c, "reduce_sum", ox_unary(c, "abs", x), n, axes, keep);
  else if (strcmp(t, "L2") == 0)
    r = ox_unary(c, "sqrt", ox_reduce(c, "reduce_sum", ox_binary(c, "mul", x, x), n, axes, keep));
  else if (strcmp(t, "SumSquare") == 0)
    r = ox_reduce(c, "reduce_sum", ox_binary(c, "mul", x, x), n, axes, keep);
  else if (strcmp(t, "LogSum") == 0)
    r = ox_unary(c, "log", ox_reduce(c, "reduce_sum", x, n, axes, keep));
  else if (strcmp(t, "LogSumExp") == 0) {
    /* m + log(sum(exp(x - m))) with m the max, kept for broadcasting */
    ox_value *m = ox_reduce(c, "reduce_max", x, n, axes, true);
    ox_value *s = ox_reduce(c, "reduce_sum", ox_unary(c, "exp", ox_binary(c, "sub", x, m)),
                            n, axes, keep);
    if (!keep)
      m = ox_reduce(c, "reduce_max", x, n, axes, false);
    r = ox_binary(c, "add", ox_unary(c, "log", s), m);
  } else
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "op type %s is not supported", c->node->op_type);
  OUT(0, r);
}

/* ArgMax / ArgMin attributes: axis (0), keepdims (1), select_last_index
 * (0). ArgMin is argmax of -x; the last index is found on the reversed
 * axis. */
static dy_status arg_common(ox_ctx *c, bool min) {
  ox_value *x;
  TRY(ox_check_attrs(c, "axis keepdims select_last_index"));
  TRY(ox_need_in(c, 0, &x));
  int axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", 0), x->type.rank, &axis));
  bool keep = ox_attr_i(c, "keepdims", 1) != 0, last = ox_attr_i(c, "select_last_index", 0);
  int64_t dim = x->type.shape[axis];
  if (last && dim < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "select_last_index along the batch dim");
  ox_value *v = min ? ox_unary(c, "neg", x) : x;
  if (last) {
    int64_t st = -1, en = INT64_MIN, ax = axis, sp = -1;
    v = ox_slice(c, v, 1, &st, &en, &ax, &sp);
  }
  dy_attr a[DY_ARGMAX_NATTRS];
  int n_a = dy_argmax_attrs_put(&(dy_argmax_attrs){
      .given = DY_GIVEN_ALL, .axis = axis, .keepdim = keep}, a);
  ox_value *r = v ? ox_op(c, "argmax", &v, 1, a, n_a) : NULL;
  if (last && r) /* index on the reversed axis -> dim - 1 - i */
    r = ox_binary(c, "sub", ox_const_i64(c, dim - 1), r);
  OUT(0, r);
}
static dy_status map_argmax(ox_ctx *c) { return arg_common(c, false); }
static dy_status map_argmin(ox_ctx *c) { return arg_common(c, true); }

/* CumSum(x, axis) attributes: exclusive (0), reverse (0). axis must be a
 * constant. */
static dy_status map_cumsum(ox_ctx *c) {
  ox_value *x, *av;
  TRY(ox_check_attrs(c, "exclusive reverse"));
  TRY(ox_need_in(c, 0, &x));
  TRY(ox_need_in(c, 1, &av));
  const int64_t *a;
  int64_t n;
  TRY(ox_get_ints(c, av, "CumSum's axis", false, &a, &n));
  if (n != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "axis must be a scalar");
  dy_attr at[DY_CUMSUM_NATTRS];
  int n_at = dy_cumsum_attrs_put(&(dy_cumsum_attrs){
      .given = DY_GIVEN_ALL, .axis = a[0], .exclusive = ox_attr_i(c, "exclusive", 0) != 0,
      .reverse = ox_attr_i(c, "reverse", 0) != 0}, at);
  OUT(0, ox_op(c, "cumsum", &x, 1, at, n_at));
}

/* The indices of x's k best along axis (top_k: best first, ties to the
 * lower index). */
static ox_value *top_k_indices(ox_ctx *c, ox_value *x, int64_t k, int axis) {
  dy_attr a[DY_TOP_K_NATTRS];
  int n_a = dy_top_k_attrs_put(&(dy_top_k_attrs){
      .given = DY_GIVEN_ALL, .k = k, .axis = axis, .largest = ox_attr_i(c, "largest", 1) != 0}, a);
  return ox_op(c, "top_k", &x, 1, a, n_a);
}

/* TopK with K a run-time tensor (one element): every index of the axis
 * (dim, static) ranked, the first K kept by a gather of nonzero(iota <
 * K) over an iota of dim + 1 entries, so the count is a size set at run
 * time and a K above dim selects index dim: gather's index error, not a
 * silently shorter result (a negative K keeps none). */
static dy_status top_k_of_tensor(ox_ctx *c, ox_value *x, ox_value *kv) {
  int axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", -1), x->type.rank, &axis));
  int64_t dim = x->type.shape[axis];
  if (dim < 0)
    return ox_fail(c, DY_STATUS_UNSUPPORTED, "TopK with a run-time K along a dynamic axis");
  if (kv->type.dtype != DY_I64 || dy_type_numel(&kv->type) != 1)
    return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "K must be one int64");
  ox_value *keep = ox_binary(c, "less", ox_iota(c, dim + 1, 1, 0),
                             ox_reshape(c, kv, 1, (int64_t[]){1}));
  ox_value *sel = ox_squeeze(c, ox_nonzero(c, keep), 1, (int64_t[]){0}); /* [K] */
  dy_attr g[DY_GATHER_NATTRS];
  int n_g = dy_gather_attrs_put(&(dy_gather_attrs){.given = DY_GIVEN_ALL, .axis = axis}, g);
  ox_value *all = top_k_indices(c, x, dim, axis);
  ox_value *idx = all && sel ? ox_op(c, "gather", (ox_value *[]){all, sel}, 2, g, n_g) : NULL;
  dy_attr e[DY_GATHER_ELEMENTS_NATTRS];
  int n_e = dy_gather_elements_attrs_put(&(dy_gather_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = axis}, e);
  ox_value *in[2] = {x, idx};
  TRY(ox_set_or_fail(c, 0, idx ? ox_op(c, "gather_elements", in, 2, e, n_e) : NULL));
  return ox_set_out(c, 1, idx);
}

/* TopK(X, K) -> Values, Indices; attributes: axis (-1), largest (1),
 * sorted (1); before opset 10 k is an attribute. K a constant (the
 * output's extent), or a run-time tensor (top_k_of_tensor). The indices come from top_k (best first, ties
 * to the lower index, which also satisfies sorted=0), the values from a
 * gather_elements of them. */
static dy_status map_top_k(ox_ctx *c) {
  ox_value *x;
  TRY(ox_check_attrs(c, c->opset < 10 ? "axis k" : "axis largest sorted"));
  TRY(ox_need_in(c, 0, &x));
  int64_t k = ox_attr_i(c, "k", -1);
  if (c->opset >= 10) {
    ox_value *kv;
    const int64_t *kp;
    int64_t n;
    TRY(ox_need_in(c, 1, &kv));
    if (!ox_is_const(kv))
      return top_k_of_tensor(c, x, kv);
    TRY(ox_get_ints(c, kv, "TopK's K", false, &kp, &n));
    if (n != 1)
      return ox_fail(c, DY_STATUS_INVALID_ARGUMENT, "K must have one element");
    k = kp[0];
  }
  int axis;
  TRY(ox_axis(c, ox_attr_i(c, "axis", -1), x->type.rank, &axis));
  ox_value *idx = top_k_indices(c, x, k, axis);
  ox_value *in[2] = {x, idx};
  dy_attr g[DY_GATHER_ELEMENTS_NATTRS];
  int n_g = dy_gather_elements_attrs_put(&(dy_gather_elements_attrs){
      .given = DY_GIVEN_ALL, .axis = axis}, g);
  TRY(ox_set_or_fail(c, 0, idx ? ox_op(c, "gather_elements", in, 2, g, n_g) : NULL));
  return ox_set_out(c, 1, idx);
}


/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

const ox_mapper ox_mappers_shape[] = {
    {"Reshape", map_reshape},
    {"Flatten", map_flatten},
    {"Transpose", map_transpose},
    {"Squeeze", map_squeeze},
    {"Unsqueeze", map_unsqueeze},
    {"Concat", map_concat},
    {"Split", map_split},
    {"Slice", map_slice},
    {"Expand", map_expand},
    {"Tile", map_tile},
    {"Pad", map_pad},
    {"Gather", map_gather},
    {"GatherElements", map_gather_elements},
    {"Trilu", map_trilu},
    {"ReduceSum", map_reduce},
    {"ReduceMean", map_reduce},
    {"ReduceMax", map_reduce},
    {"ReduceMin", map_reduce},
    {"ReduceSumSquare", map_reduce},
    {"ReduceLogSum", map_reduce},
    {"ReduceLogSumExp", map_reduce},
    {"ReduceL1", map_reduce},
    {"ReduceL2", map_reduce},
    {"ReduceProd", map_reduce},
    {"CumSum", map_cumsum},
    {"TopK", map_top_k},
    {"OneHot", map_one_hot},
    {"GatherND", map_gather_nd},
    {"ScatterElements", map_scatter_elements},
    {"Scatter", map_scatter_elements},
    {"ScatterND", map_scatter_nd},
    {"ReverseSequence", map_reverse_sequence},
    {"Compress", map_compress},
    {"ArgMax", map_argmax},
    {"ArgMin", map_argmin},
    {NULL, NULL},
};
