/* tape.c - eager autograd's tape and grad mode.
 *
 * The contract (what is recorded, what backward adds where, how the tape
 * stays bounded) is in dy_autograd.h. Here:
 *
 *   - the tape is a thread-local array of records in the order the ops
 *     ran, so a record's inputs were made by earlier records (or are
 *     leaves); a record holds one reference to each input and to its
 *     output, counted in dy_tensor.tape_refs. dy_apply (ops.c) records an
 *     op with dy_tape_record when dy_tape_wants it;
 *   - pruning walks it from the newest record, keeping a record when its
 *     output is held outside the tape or read by a kept record;
 *   - the records, the pass numbers (dy_tensor.ag_pass: one counter for
 *     pruning and backward, so their per-tensor scratch never mixes) and
 *     the release of a walked graph are what backward (backward.c) reads
 *     and calls; the tape calls nothing above it.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

static _Thread_local struct {
  dy_tape_node **nodes;
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
static bool copy_attrs(dy_tape_node *nd, const dy_attr *attrs, int n, dy_srcloc loc) {
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

static void release(dy_tape_node *nd) {
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
    dy_tape_node *nd = tape.nodes[i];
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
    dy_tape_node *nd = tape.nodes[i];
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
  if (n_in > DY_MAX_OP_INPUTS) {
    dy_fail(DY_STATUS_UNSUPPORTED, loc, "%s: too many inputs to record", dy_op_name(kind));
    return false;
  }
  if (tape.n >= tape.prune_at && tape.n > 0)
    prune();
  if (tape.n == tape.cap) {
    int cap = tape.cap ? 2 * tape.cap : 256;
    dy_tape_node **v = realloc(tape.nodes, sizeof *v * (size_t)cap);
    if (!v) {
      dy_fail(DY_STATUS_OUT_OF_MEMORY, loc, "autograd tape: out of memory");
      return false;
    }
    tape.nodes = v;
    tape.cap = cap;
  }
  dy_tape_node *nd = calloc(1, sizeof *nd);
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

/* ---- what backward reads ---- */

dy_tape_node *const *dy_tape_nodes(void) { return tape.nodes; }

unsigned dy_tape_new_pass(void) { return ++tape.pass; }

void dy_tape_release_visited(void) { compact(true); }
