/* autograd.c - eager autograd: the tape, dy_backward, grad mode.
 *
 * The contract (what is recorded, what backward adds where, how the tape
 * stays bounded) is in dy_autograd.h. Here:
 *
 *   - the tape is a thread-local array of records in the order the ops
 *     ran, so a record's inputs were made by earlier records (or are
 *     leaves); a record holds one reference to each input and to its
 *     output, counted in dy_tensor.tape_refs;
 *   - dy_backward walks the array from the loss's record down to 0, once
 *     to mark the records the loss reaches (its graph), once more running
 *     the rule of each marked record whose output received a gradient; it
 *     keeps per tensor the builder value of its gradient so far (ag_val,
 *     valid for the pass numbered ag_pass);
 *   - pruning walks it the same way from the newest record, keeping a
 *     record when its output is held outside the tape or read by a kept
 *     record.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

typedef struct dy_tape_node {
  dy_op op;                 /* kind, attributes (copied), loc; id -1   */
  dy_tensor *in[16];        /* referenced                              */
  dy_tensor *out;           /* referenced; out->grad_fn is this record */
  int pos;                  /* index in the tape                        */
  bool visit;               /* scratch of one backward / pruning pass   */
} tape_node;

static _Thread_local struct {
  tape_node **nodes;
  int n, cap;
  int prune_at;             /* prune when n reaches it                  */
  int no_grad;              /* open dy_no_grad_begin calls              */
  unsigned pass;            /* numbers backward and pruning passes      */
} tape;

enum { PRUNE_MIN = 4096 };

/* ---- grad mode ---- */

void dy_no_grad_begin(void) { tape.no_grad++; }
void dy_no_grad_end(void) {
  if (tape.no_grad > 0)
    tape.no_grad--;
}
bool dy_grad_enabled(void) { return tape.no_grad == 0; }

int dy_tape_size(void) { return tape.n; }

/* ---- records ---- */

/* A copy of the attributes (lists and strings included) and of the
 * location's file name, in one block owned by the record. */
static bool copy_attrs(tape_node *nd, const dy_attr *attrs, int n, dy_srcloc loc) {
  size_t bytes = sizeof(dy_attr) * (size_t)n + (loc.file ? strlen(loc.file) + 1 : 0);
  for (int i = 0; i < n; i++) {
    bytes += strlen(attrs[i].name) + 1;
    if (attrs[i].kind == DY_ATTR_INTS)
      bytes += sizeof(int64_t) * (size_t)attrs[i].n;
    else if (attrs[i].kind == DY_ATTR_FLOATS)
      bytes += sizeof(float) * (size_t)attrs[i].n;
    else if (attrs[i].kind == DY_ATTR_STRING && attrs[i].s)
      bytes += strlen(attrs[i].s) + 1;
  }
  /* attrs first (aligned by malloc), then the int64 lists, the float
   * lists, the strings: each part stays aligned for its type */
  char *blk = malloc(bytes ? bytes : 1);
  if (!blk)
    return false;
  dy_attr *a = (dy_attr *)(void *)blk;
  char *p = blk + sizeof(dy_attr) * (size_t)n;
  for (int i = 0; i < n; i++) {
    a[i] = attrs[i];
    if (attrs[i].kind == DY_ATTR_INTS && attrs[i].n) {
      a[i].ints = memcpy(p, attrs[i].ints, sizeof(int64_t) * (size_t)attrs[i].n);
      p += sizeof(int64_t) * (size_t)attrs[i].n;
    }
  }
  for (int i = 0; i < n; i++) {
    if (attrs[i].kind == DY_ATTR_FLOATS && attrs[i].n) {
      a[i].floats = memcpy(p, attrs[i].floats, sizeof(float) * (size_t)attrs[i].n);
      p += sizeof(float) * (size_t)attrs[i].n;
    }
  }
  for (int i = 0; i < n; i++) {
    a[i].name = strcpy(p, attrs[i].name);
    p += strlen(p) + 1;
    if (attrs[i].kind == DY_ATTR_STRING && attrs[i].s) {
      a[i].s = strcpy(p, attrs[i].s);
      p += strlen(p) + 1;
    }
  }
  nd->op.attrs = a;
  nd->op.n_attrs = n;
  nd->op.loc = loc;
  if (loc.file)
    nd->op.loc.file = strcpy(p, loc.file);
  return true;
}

static void release(tape_node *nd) {
  nd->out->grad_fn = NULL;
  nd->out->tape_refs--;
  dy_tensor_free(nd->out);
  for (int i = 0; i < nd->op.n_inputs; i++) {
    nd->in[i]->tape_refs--;
    dy_tensor_free(nd->in[i]);
  }
  free(nd->op.attrs);
  free(nd);
}

/* Release the records whose visit flag equals drop and close the gaps. */
static void compact(bool drop) {
  int k = 0;
  for (int i = 0; i < tape.n; i++) {
    tape_node *nd = tape.nodes[i];
    if (nd->visit == drop) {
      release(nd);
    } else {
      nd->pos = k;
      tape.nodes[k++] = nd;
    }
  }
  tape.n = k;
}

void dy_tape_clear(void) {
  for (int i = 0; i < tape.n; i++)
    release(tape.nodes[i]);
  free(tape.nodes);
  tape.nodes = NULL;
  tape.n = tape.cap = tape.prune_at = 0;
}

/* Mark the records a gradient can still reach (visit = true) and release
 * the others. A tensor is held outside the tape when it has references
 * beyond the tape's and beyond the bases of views being released
 * (ag_aux counts those). */
static void prune(void) {
  unsigned pass = ++tape.pass;
  for (int i = tape.n - 1; i >= 0; i--) {
    tape_node *nd = tape.nodes[i];
    dy_tensor *o = nd->out;
    int dead_views = o->ag_pass == pass ? o->ag_aux : 0;
    bool read = o->ag_pass == pass && o->ag_val;
    nd->visit = read || o->refcount > o->tape_refs + dead_views;
    for (int k = 0; k < nd->op.n_inputs && nd->visit; k++) {
      dy_tensor *t = nd->in[k];
      if (t->ag_pass != pass)
        t->ag_pass = pass, t->ag_val = 0, t->ag_aux = 0;
      t->ag_val = 1;
    }
    if (!nd->visit && o->base) {
      dy_tensor *b = o->base;
      if (b->ag_pass != pass)
        b->ag_pass = pass, b->ag_val = 0, b->ag_aux = 0;
      b->ag_aux++;
    }
  }
  compact(false);
  tape.prune_at = 2 * tape.n > PRUNE_MIN ? 2 * tape.n : PRUNE_MIN;
}

bool dy_tape_wants(dy_tensor *const *in, int n_in, const dy_tensor *out) {
  if (tape.no_grad || !out->data || out->type.dtype != DY_F32)
    return false;
  bool any = false;
  for (int i = 0; i < n_in; i++) {
    if (in[i] == out)
      return false;  /* an in-place write (an optimizer's update) */
    any |= in[i]->requires_grad || in[i]->grad_fn;
  }
  return any;
}

bool dy_tape_record(dy_op_kind kind, dy_tensor *const *in, int n_in,
                    const dy_attr *attrs, int n_attrs, dy_srcloc loc, dy_tensor *out) {
  if (n_in > 16) {
    dy_fail(DY_STATUS_UNSUPPORTED, loc, "%s: too many inputs to record", dy_op_name(kind));
    return false;
  }
  if (tape.n >= tape.prune_at && tape.n > 0)
    prune();
  if (tape.n == tape.cap) {
    int cap = tape.cap ? 2 * tape.cap : 256;
    tape_node **v = realloc(tape.nodes, sizeof *v * (size_t)cap);
    if (!v) {
      dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "autograd tape: out of memory");
      return false;
    }
    tape.nodes = v;
    tape.cap = cap;
  }
  tape_node *nd = calloc(1, sizeof *nd);
  if (!nd || !copy_attrs(nd, attrs, n_attrs, loc)) {
    free(nd);
    dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "autograd tape: out of memory");
    return false;
  }
  if (tape.prune_at < PRUNE_MIN)
    tape.prune_at = PRUNE_MIN;
  nd->op.id = -1;
  nd->op.kind = kind;
  nd->op.n_inputs = n_in;
  nd->op.n_outputs = 1;
  for (int i = 0; i < n_in; i++) {
    nd->in[i] = dy_keep(in[i]);
    in[i]->tape_refs++;
  }
  nd->out = dy_keep(out);
  out->tape_refs++;
  out->grad_fn = nd;
  nd->pos = tape.n;
  tape.nodes[tape.n++] = nd;
  return true;
}

/* ---- backward ---- */

typedef struct {
  dy_gb b;
  dy_gb_eager_state st;
  unsigned pass;
  dy_tensor **leaves;       /* leaves that received a gradient (borrowed) */
  int n_leaves, cap_leaves;
} bwd;

/* Start t's bookkeeping for this pass: no gradient yet. */
static void touch(bwd *w, dy_tensor *t) {
  if (t->ag_pass != w->pass) {
    t->ag_pass = w->pass;
    t->ag_val = -1;
    t->ag_aux = -1;  /* t's own builder value, made on first use */
  }
}

static int value_of(bwd *w, dy_tensor *t) {
  touch(w, t);
  if (t->ag_aux < 0)
    t->ag_aux = dy_gb_eager_value(&w->b, t);
  return t->ag_aux;
}

static bool is_leaf(const dy_tensor *t) { return t->requires_grad && !t->grad_fn; }

/* Add gradient value g into t's gradient of this pass. */
static void accumulate(bwd *w, dy_tensor *t, int g) {
  touch(w, t);
  if (t->ag_val < 0) {
    t->ag_val = g;
    if (is_leaf(t)) {
      if (w->n_leaves == w->cap_leaves) {
        int cap = w->cap_leaves ? 2 * w->cap_leaves : 16;
        dy_tensor **v = realloc(w->leaves, sizeof *v * (size_t)cap);
        if (!v) {
          dy_gb_fail(&w->b, DY_STATUS_OUT_OF_MEMORY, "out of memory");
          return;
        }
        w->leaves = v;
        w->cap_leaves = cap;
      }
      w->leaves[w->n_leaves++] = t;
    }
  } else {
    t->ag_val = dy_gb_add(&w->b, t->ag_val, g);
  }
}

/* Run the rule of one record whose output has a gradient. */
static dy_status step(bwd *w, tape_node *nd) {
  const dy_op *op = &nd->op;
  int n = op->n_inputs;
  int x[16], dx[16], dy = nd->out->ag_val;
  bool need[16], any = false;
  for (int i = 0; i < n; i++) {
    dy_tensor *t = nd->in[i];
    need[i] = (t->requires_grad || t->grad_fn) &&
              dy_grad_input_is_differentiable(op->kind, i, t->type.dtype);
    any |= need[i];
    x[i] = value_of(w, t);
  }
  if (!any)
    return DY_OK;
  int y = value_of(w, nd->out);
  dy_status s = dy_grad_op(&w->b, op, x, &y, &dy, need, dx);
  for (int i = 0; i < n && !s; i++) {
    if (!need[i] || dx[i] < 0)
      continue;
    w->b.fwd = op;
    accumulate(w, nd->in[i], dx[i]);
    w->b.fwd = NULL;
    s = dy_gb_status(&w->b);
  }
  return s;
}

/* Add the gradient tensor g into leaf t's .grad. */
static dy_status add_into_grad(dy_tensor *t, const dy_tensor *g, dy_error *err) {
  char a[128], c[128];
  if (!dy_type_equal(&t->type, &g->type))
    return dy_error_set(err, DY_STATUS_INTERNAL,
                        "backward: the gradient of '%s' is %s, not its %s",
                        t->name ? t->name : "a tensor", dy_type_str(&g->type, c, sizeof c),
                        dy_type_str(&t->type, a, sizeof a));
  if (!t->grad) {
    t->grad = dy_tensor_alloc(&t->type, true);
    if (!t->grad)
      return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "backward: out of memory");
    memcpy(t->grad->data, g->data, t->grad->nbytes);
    return DY_OK;
  }
  float *d = t->grad->data;
  const float *s = g->data;
  for (int64_t i = 0, n = dy_tensor_numel(t); i < n; i++)
    d[i] += s[i];
  return DY_OK;
}

dy_status dy_backward_seed(dy_tensor *t, dy_tensor *seed, dy_error *err) {
  char a[128], c[128];
  if (!t || !seed)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "backward: a NULL %s (an earlier op failed?)", t ? "seed" : "tensor");
  if (!t->data)
    return dy_error_set(err, DY_STATUS_SYMBOLIC,
                        "backward: the tensor is symbolic (static mode); use "
                        "dy_program_append_backward on the Program instead");
  if (t->type.dtype != DY_F32 || !dy_type_equal(&t->type, &seed->type) || !seed->data)
    return dy_error_set(err, DY_STATUS_SHAPE_MISMATCH,
                        "backward: the seed is %s, the tensor %s: they must be the "
                        "same f32 type", dy_type_str(&seed->type, c, sizeof c),
                        dy_type_str(&t->type, a, sizeof a));
  if (!t->grad_fn && !t->requires_grad)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "the loss does not require grad: no parameter on its path "
                        "(or it was computed under dy_no_grad, or its graph was "
                        "freed by an earlier dy_backward)");
  if (!t->grad_fn)  /* a leaf itself */
    return add_into_grad(t, seed, err);

  *err = (dy_error){0};
  bwd w = {.pass = ++tape.pass};
  dy_gb_eager(&w.b, &w.st, t->grad_fn->op.loc, err);
  dy_no_grad_begin();
  touch(&w, t);
  t->ag_val = dy_gb_eager_value(&w.b, seed);
  /* the loss's graph: the records it reaches (visit) and whether a leaf
   * is among their inputs */
  int start = t->grad_fn->pos;
  for (int i = 0; i <= start; i++)
    tape.nodes[i]->visit = false;
  t->grad_fn->visit = true;
  bool leaf = false;
  for (int i = start; i >= 0; i--) {
    tape_node *nd = tape.nodes[i];
    for (int k = 0; k < nd->op.n_inputs && nd->visit; k++) {
      if (nd->in[k]->grad_fn)
        nd->in[k]->grad_fn->visit = true;
      leaf |= is_leaf(nd->in[k]);
    }
  }
  dy_status s = DY_OK;
  if (!leaf)
    s = dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                     "the loss does not require grad: no parameter on its path "
                     "(its graph was freed by an earlier dy_backward?)");
  /* newest first, every record whose output received a gradient */
  for (int i = start; i >= 0 && !s; i--) {
    tape_node *nd = tape.nodes[i];
    if (nd->visit && nd->out->ag_pass == w.pass && nd->out->ag_val >= 0)
      s = step(&w, nd);
  }
  dy_no_grad_end();
  for (int i = 0; i < w.n_leaves && !s; i++)
    s = add_into_grad(w.leaves[i], dy_gb_eager_tensor(&w.b, w.leaves[i]->ag_val), err);
  dy_gb_eager_free(&w.b);
  free(w.leaves);
  /* free the loss's graph (PyTorch's default, retain_graph=False) */
  for (int i = start + 1; i < tape.n; i++)
    tape.nodes[i]->visit = false;
  if (!s)
    compact(true);
  return s;
}

dy_status dy_backward(dy_tensor *loss, dy_error *err) {
  char a[128];
  if (!loss)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "backward: the loss is NULL (an earlier op failed?)");
  if (loss->type.dtype != DY_F32 || dy_type_numel(&loss->type) != 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "backward: the loss is %s: it must be an f32 scalar (one "
                        "element; reduce it with mean or sum, or use "
                        "dy_backward_seed)", dy_type_str(&loss->type, a, sizeof a));
  dy_tensor *one = dy_tensor_alloc(&loss->type, loss->data != NULL);
  if (!one)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "backward: out of memory");
  if (one->data)
    ((float *)one->data)[0] = 1.0f;
  dy_status s = dy_backward_seed(loss, one, err);
  dy_tensor_free(one);
  return s;
}

/* ---- layers ---- */

void dy_clear_grad(dy_layer *l) {
  if (!l)
    return;
  for (int i = 0; i < l->n_params; i++) {
    dy_tensor_free(l->params[i]->grad);
    l->params[i]->grad = NULL;
  }
  for (int i = 0; i < l->n_children; i++)
    dy_clear_grad(l->children[i]);
}
