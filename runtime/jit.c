/* jit.c - to_static, jit_save and jit_load.
 *
 * dy_to_static wraps a layer (Paddle's "方式一"): the wrapper's forward
 * looks up a Program by input signature (each input's dtype and shape, and
 * the wrapped layer's train/eval mode), builds it in static mode on a miss,
 * and runs it on the static executor. dy_jit_save is Paddle's jit.save:
 * static-mode build from InputSpecs, verify, write .dymodel + .dyparams.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

enum { MAX_SIGS = 16 };

typedef struct {
  int n;
  bool training;
  dy_type in[DY_MAX_FEEDS];
  dy_program *prog;
} signature;

typedef struct {
  dy_layer base;
  dy_layer *inner;     /* borrowed */
  int n_sigs;
  signature sigs[MAX_SIGS];
} to_static_layer;

static bool same_sig(const signature *s, dy_tensor *const *in, int n, bool training) {
  if (s->n != n || s->training != training)
    return false;
  for (int i = 0; i < n; i++)
    if (!dy_type_equal(&s->in[i], &in[i]->type))
      return false;
  return true;
}

static dy_tensor *to_static_forward(dy_layer *self, dy_tensor *const *in, int n) {
  to_static_layer *w = (to_static_layer *)self;
  if (n < 1 || n > DY_MAX_FEEDS)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
                   "to_static: bad input count %d", n);
  bool training = w->inner->training;
  signature *sig = NULL;
  for (int i = 0; i < w->n_sigs && !sig; i++)
    if (same_sig(&w->sigs[i], in, n, training))
      sig = &w->sigs[i];
  dy_error err = {0};
  if (!sig) {
    if (w->n_sigs == MAX_SIGS)
      return dy_fail(DY_STATUS_LIMIT, (dy_srcloc){0},
                     "to_static: more than %d input signatures", MAX_SIGS);
    sig = &w->sigs[w->n_sigs];
    dy_input_spec specs[DY_MAX_FEEDS];
    for (int i = 0; i < n; i++) {
      specs[i] = (dy_input_spec){.name = NULL, .dtype = in[i]->type.dtype,
                                 .rank = in[i]->type.rank};
      memcpy(specs[i].shape, in[i]->type.shape, sizeof specs[i].shape);
      sig->in[i] = in[i]->type;
    }
    if (dy_program_from_layer_at(w->inner, specs, n, &sig->prog, &err, DY_INHERIT) != DY_OK)
      return dy_fail_with(&err);
    sig->n = n;
    sig->training = training;
    w->n_sigs++;
  }
  dy_tensor *out = NULL;
  if (dy_executor_run(sig->prog, in, n, &out, 1, &err) != DY_OK)
    return dy_fail_with(&err);
  return dy_tensor_adopt(out);
}

static void to_static_destroy(dy_layer *self) {
  to_static_layer *w = (to_static_layer *)self;
  for (int i = 0; i < w->n_sigs; i++)
    dy_program_free(w->sigs[i].prog);
}

static const dy_layer_vtable to_static_vt = {"ToStatic", to_static_forward,
                                             to_static_destroy, false};

dy_layer *dy_to_static(dy_layer *layer) {
  if (!layer)
    return NULL;
  to_static_layer *w = (to_static_layer *)dy_layer_new(sizeof *w, &to_static_vt,
                                                       layer->name);
  if (w) {
    w->inner = layer;
    w->base.training = layer->training;
  }
  return &w->base;
}

int dy_to_static_cache_size(const dy_layer *wrapper) {
  return wrapper && wrapper->vt == &to_static_vt
             ? ((const to_static_layer *)wrapper)->n_sigs
             : 0;
}

/* Warn about every mode-dependent layer still in train mode. */
static void warn_train_mode(const dy_layer *l, const char *path) {
  if (l->vt->mode_dependent && l->training) {
    char where[256] = "";
    const dy_layer *chain[64];
    int k = 0;
    for (const dy_layer *x = l; x && k < 64; x = x->parent)
      chain[k++] = x;
    size_t n = 0;
    for (int i = k - 1; i >= 0 && n < sizeof where; i--)
      n += (size_t)snprintf(where + n, sizeof where - n, "%s%s", i < k - 1 ? "." : "",
                            chain[i]->name);
    dy_warn("%s: layer '%s' (%s) is saved in train mode, and its train and eval "
            "behaviour differ; call dy_layer_eval() first, or save with DY_SAVE_EVAL",
            path, where, l->vt->type_name);
  }
  for (int i = 0; i < l->n_children; i++)
    warn_train_mode(l->children[i], path);
}

/* Record / restore every layer's training flag (depth-first order). */
static int save_modes(const dy_layer *l, bool *modes, int n, int cap) {
  if (n < cap)
    modes[n] = l->training;
  n++;
  for (int i = 0; i < l->n_children; i++)
    n = save_modes(l->children[i], modes, n, cap);
  return n;
}

static int restore_modes(dy_layer *l, const bool *modes, int n, int cap) {
  if (n < cap)
    l->training = modes[n];
  n++;
  for (int i = 0; i < l->n_children; i++)
    n = restore_modes(l->children[i], modes, n, cap);
  return n;
}

dy_status dy_jit_save_ex_at(dy_layer *layer, const dy_input_spec *specs,
                            int n_specs, const char *path, dy_save_mode mode,
                            dy_error *err, dy_srcloc loc) {
  enum { MAX_LAYERS = 4096 };
  static _Thread_local bool modes[MAX_LAYERS];
  if (!layer)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "dy_jit_save: NULL layer");
  if (mode == DY_SAVE_EVAL) {
    save_modes(layer, modes, 0, MAX_LAYERS);
    dy_layer_eval(layer);
  } else {
    warn_train_mode(layer, path);
  }
  dy_program *p = NULL;
  dy_status s = dy_program_from_layer_at(layer, specs, n_specs, &p, err, loc);
  if (mode == DY_SAVE_EVAL)
    restore_modes(layer, modes, 0, MAX_LAYERS);
  if (!s)
    s = dy_model_save(p, path, err);
  dy_program_free(p);
  return s;
}

dy_status dy_jit_save_at(dy_layer *layer, const dy_input_spec *specs,
                         int n_specs, const char *path, dy_error *err,
                         dy_srcloc loc) {
  return dy_jit_save_ex_at(layer, specs, n_specs, path, DY_SAVE_AS_IS, err, loc);
}

dy_status dy_jit_load(const char *path, dy_program **prog, dy_error *err) {
  dy_program *p = NULL;
  dy_status s = dy_model_load(path, &p, err);
  if (!s && (s = dy_verify(p, err)))
    dy_error_prefix(err, "%s", path);
  if (s) {
    dy_program_free(p);
    return s;
  }
  *prog = p;
  return DY_OK;
}
