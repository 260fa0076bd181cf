/* layer.c - the layer base: children, parameters, train/eval, calls.
 *
 * A layer is a struct whose first member is dy_layer, with a vtable giving
 * its forward. Layers form a tree (parent owns children); parameters are
 * tensors owned by their layer, named by their dotted path from the root
 * ("linear.weight") when a Program is built, as Paddle's state_dict keys.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

dy_layer *dy_layer_new(size_t size, const dy_layer_vtable *vt,
                       const char *name) {
  if (size < sizeof(dy_layer))
    size = sizeof(dy_layer);
  dy_layer *l = calloc(1, size);
  if (!l)
    return NULL;
  l->vt = vt;
  l->training = true;
  snprintf(l->name, sizeof l->name, "%s", name ? name : "layer");
  return l;
}

void dy_layer_free(dy_layer *l) {
  if (!l)
    return;
  if (l->vt && l->vt->destroy)
    l->vt->destroy(l);
  for (int i = 0; i < l->n_children; i++)
    dy_layer_free(l->children[i]);
  for (int i = 0; i < l->n_params; i++)
    dy_tensor_free(l->params[i]);
  free(l);
}

static bool sibling_named(const dy_layer *parent, const char *name) {
  for (int i = 0; i < parent->n_children; i++)
    if (strcmp(parent->children[i]->name, name) == 0)
      return true;
  return false;
}

dy_layer *dy_layer_add_child_at(dy_layer *parent, dy_layer *child, dy_srcloc loc) {
  if (!parent || !child)
    return NULL;
  if (parent->n_children >= (int)(sizeof parent->children / sizeof parent->children[0])) {
    dy_layer_free(child);
    dy_fail(DY_STATUS_LIMIT, (dy_srcloc){0}, "layer '%s': too many children",
            parent->name);
    return NULL;
  }
  if (sibling_named(parent, child->name)) {
    char stem[64];
    snprintf(stem, sizeof stem, "%s", child->name);
    for (int n = 1; sibling_named(parent, child->name); n++)
      snprintf(child->name, sizeof child->name, "%.50s_%d", stem, n);
  }
  child->parent = parent;
  child->loc = loc;
  parent->children[parent->n_children++] = child;
  return child;
}

dy_tensor *dy_layer_add_param(dy_layer *l, const char *name, dy_tensor *t) {
  if (!l || !t)
    return NULL;
  if (l->n_params >= (int)(sizeof l->params / sizeof l->params[0])) {
    dy_tensor_free(t);
    dy_fail(DY_STATUS_LIMIT, (dy_srcloc){0}, "layer '%s': too many parameters",
            l->name);
    return NULL;
  }
  t->name = malloc(strlen(name) + 1);
  if (t->name)
    strcpy(t->name, name);
  /* a parameter is trainable; a buffer (batch norm's running statistics)
   * clears the flag after adding itself */
  t->requires_grad = t->type.dtype == DY_F32;
  l->params[l->n_params++] = t;
  return t;
}

/* User locations of the layer calls in progress on this thread: the user's
 * call site, or for a call made by the library (DY_INHERIT) the line where
 * the user added the layer, else the enclosing call's location. */
enum { MAX_CALL_DEPTH = 64 };
static _Thread_local dy_srcloc call_sites[MAX_CALL_DEPTH];
static _Thread_local int call_depth;

dy_srcloc dy_layer_caller(void) {
  return call_depth ? call_sites[call_depth - 1] : (dy_srcloc){0};
}

dy_tensor *dy_layer_call_at(dy_layer *l, dy_tensor *const *in, int n_in,
                            dy_srcloc loc) {
  if (!loc.file)
    loc = l && l->loc.file ? l->loc : dy_layer_caller();
  if (!l)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, loc, "call of a NULL layer");
  for (int i = 0; i < n_in; i++)
    if (!in[i])
      return NULL;
  if (call_depth == MAX_CALL_DEPTH)
    return dy_fail(DY_STATUS_LIMIT, loc, "layers nested more than %d deep",
                   MAX_CALL_DEPTH);
  call_sites[call_depth++] = loc;
  /* Each call is a scope: the forward's intermediates die when it returns,
   * and its output goes to the caller like any op result. */
  dy_scope_begin();
  dy_tensor *out = dy_keep(l->vt->forward(l, in, n_in));
  dy_scope_end();
  call_depth--;
  return dy_tensor_adopt(out);
}

static void set_mode(dy_layer *l, bool training) {
  l->training = training;
  for (int i = 0; i < l->n_children; i++)
    set_mode(l->children[i], training);
}

void dy_layer_train(dy_layer *l) { set_mode(l, true); }
void dy_layer_eval(dy_layer *l) { set_mode(l, false); }

void dy_layer_param_path(const dy_layer *l, const char *param, char *buf,
                         size_t n) {
  /* collect ancestors below the root, outermost first */
  const dy_layer *chain[64];
  int k = 0;
  for (const dy_layer *x = l; x && x->parent && k < 64; x = x->parent)
    chain[k++] = x;
  size_t len = 0;
  buf[0] = 0;
  for (int i = k - 1; i >= 0 && len < n; i--)
    len += (size_t)snprintf(buf + len, n - len, "%s.", chain[i]->name);
  if (len < n)
    snprintf(buf + len, n - len, "%s", param);
}
