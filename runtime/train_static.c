/* train_static.c - to_static training, one step of a training Program,
 * and the data order (dy_train_api.h).
 *
 * A dy_static_trainer caches one training Program per input signature
 * (the dtypes and the shapes past the batch dim, and the model's mode), as
 * dy_to_static caches inference Programs. Each cached Program keeps the
 * pairs (model tensor, persistable var) of the parameters and buffers its
 * trace captured (found by the dotted name the tracer gave each tensor),
 * through which a step copies the model into the Program before running it
 * and the results back afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "dy_runtime_internal.h"

/* ---- the data order ---- */

void dy_train_shuffle(int64_t *order, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    order[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(dy_rand_u64() % (uint64_t)(i + 1));
    int64_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

dy_tensor *dy_train_batch(const dy_tensor *data, const int64_t *order, int64_t begin,
                          int64_t count) {
  if (!data || !data->data || data->type.rank < 1)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
                   "dy_train_batch: the data needs a sample dim");
  int64_t n = data->type.shape[0];
  if (begin < 0 || count < 1 || begin + count > n)
    return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
                   "dy_train_batch: samples [%lld, %lld) of %lld", (long long)begin,
                   (long long)(begin + count), (long long)n);
  for (int64_t i = 0; order && i < count; i++)
    if (order[begin + i] < 0 || order[begin + i] >= n)
      return dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
                     "dy_train_batch: sample %lld of %lld", (long long)order[begin + i],
                     (long long)n);
  dy_type t = data->type;
  t.shape[0] = count;
  dy_tensor *b = dy_tensor_new(t.dtype, t.rank, t.shape);
  if (!b)
    return NULL;
  size_t row = data->nbytes / (size_t)n;
  for (int64_t i = 0; i < count; i++) {
    int64_t k = order ? order[begin + i] : begin + i;
    memcpy((char *)b->data + (size_t)i * row, (const char *)data->data + (size_t)k * row,
           row);
  }
  return b;
}

/* ---- one step of a training Program ---- */

static int feed_slot(const dy_program *p, const char *name) {
  for (int i = 0; i < p->n_feeds; i++)
    if (strcmp(p->vars[p->feeds[i]]->name, name) == 0)
      return i;
  return -1;
}

dy_status dy_program_train_step(dy_program *p, dy_tensor *const *inputs, int n,
                                dy_tensor *labels, double lr, double *loss,
                                dy_error *err) {
  int ls = feed_slot(p, "label"), rs = feed_slot(p, "learning_rate");
  if (ls < 0 || rs < 0 || p->n_fetches != 1)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "train step: not a training Program (no 'label' or "
                        "'learning_rate' feed, or not one fetch)");
  if (n != p->n_feeds - 2)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "train step: the model takes %d input%s, %d given", p->n_feeds - 2,
                        p->n_feeds == 3 ? "" : "s", n);
  if (!labels)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "train step: no labels");
  dy_status s = dy_program_reseed_dropout(p, dy_rand_u64, err);
  if (s)
    return s;
  float r = (float)lr;
  dy_scope_begin(); /* owns rate */
  dy_tensor *rate = dy_tensor_from_data(DY_F32, 0, NULL, &r);
  dy_tensor *feeds[DY_MAX_FEEDS], *out = NULL;
  for (int i = 0, k = 0; i < p->n_feeds; i++)
    feeds[i] = i == ls ? labels : i == rs ? rate : inputs[k++];
  s = rate ? dy_executor_run(p, feeds, p->n_feeds, &out, 1, err)
           : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_scope_end();
  if (!s && loss)
    *loss = *dy_tensor_f32(out);
  dy_tensor_free(out);
  return s;
}

/* ---- to_static training ---- */

enum { MAX_SIGS = 8, MAX_BOUND = 1024 };

typedef struct {
  int n;
  bool training;
  dy_type in[DY_MAX_FEEDS];   /* the batch dim as -1 */
  dy_program *prog;
  int n_bound;
  dy_tensor *tensor[MAX_BOUND];  /* the model's parameters and buffers */
  int var[MAX_BOUND];            /* ... and their vars in prog */
} signature;

struct dy_static_trainer {
  dy_layer *model;             /* borrowed */
  dy_loss_spec loss;
  dy_optimizer_spec opt;
  int n_sigs;
  signature sigs[MAX_SIGS];
  signature *last;             /* the Program that ran last */
};

static void batch_dynamic(dy_type *t) {
  if (t->rank > 0)
    t->shape[0] = -1;
}

static bool same_sig(const signature *s, dy_tensor *const *in, int n, bool training) {
  if (s->n != n || s->training != training)
    return false;
  for (int i = 0; i < n; i++) {
    dy_type t = in[i]->type;
    batch_dynamic(&t);
    if (!dy_type_equal(&s->in[i], &t))
      return false;
  }
  return true;
}

/* Pair every parameter and buffer of l's tree with its var in s->prog. */
static dy_status bind_tensors(signature *s, const dy_layer *l, dy_error *err) {
  for (int i = 0; i < l->n_params; i++) {
    dy_tensor *t = l->params[i];
    int v = t->name ? dy_program_find_var(s->prog, t->name) : -1;
    if (v < 0 || !s->prog->vars[v]->persistable)
      continue;   /* not used by the forward */
    if (s->prog->vars[v]->type.dtype != t->type.dtype ||
        dy_type_numel(&s->prog->vars[v]->type) != dy_tensor_numel(t))
      return dy_error_set(err, DY_STATUS_INTERNAL,
                          "to_static_train: var '%s' does not match its parameter", t->name);
    if (s->n_bound == MAX_BOUND)
      return dy_error_set(err, DY_STATUS_LIMIT,
                          "to_static_train: more than %d parameters", MAX_BOUND);
    s->tensor[s->n_bound] = t;
    s->var[s->n_bound++] = v;
  }
  for (int i = 0; i < l->n_children; i++) {
    dy_status st = bind_tensors(s, l->children[i], err);
    if (st)
      return st;
  }
  return DY_OK;
}

/* Copy every persistable var of `from` into the var of the same name, type
 * and size in `to` (parameters, statistics, optimizer state). */
static void copy_state(dy_program *to, const dy_program *from) {
  for (int i = 0; i < from->n_vars; i++) {
    const dy_var *a = from->vars[i];
    if (!a->persistable || !a->data)
      continue;
    int k = dy_program_find_var(to, a->name);
    dy_var *b = k >= 0 ? to->vars[k] : NULL;
    if (b && b->persistable && b->data && b->type.dtype == a->type.dtype &&
        dy_type_numel(&b->type) == dy_type_numel(&a->type))
      memcpy(b->data, a->data, (size_t)dy_type_numel(&a->type) * dy_dtype_size(a->type.dtype));
  }
}

static dy_status build(dy_static_trainer *t, signature *s, dy_tensor *const *in, int n,
                       dy_error *err) {
  dy_input_spec specs[DY_MAX_FEEDS];
  for (int i = 0; i < n; i++) {
    s->in[i] = in[i]->type;
    batch_dynamic(&s->in[i]);
    specs[i] = (dy_input_spec){.name = NULL, .dtype = s->in[i].dtype, .rank = s->in[i].rank};
    memcpy(specs[i].shape, s->in[i].shape, sizeof specs[i].shape);
  }
  s->n = n;
  s->training = t->model->training;
  dy_status st = dy_program_from_layer_at(t->model, specs, n, &s->prog, err, DY_INHERIT);
  if (st)
    return st;
  if (s->prog->n_fetches != 1)
    st = dy_error_set(err, DY_STATUS_UNSUPPORTED,
                      "to_static_train: the model has %d outputs; training needs one",
                      s->prog->n_fetches);
  if (!st)
    st = dy_program_make_training(s->prog, s->prog->fetches[0], &t->loss, &t->opt, err);
  if (!st)
    st = bind_tensors(s, t->model, err);
  if (!st && t->last)
    copy_state(s->prog, t->last->prog);
  if (st) {
    dy_program_free(s->prog);
    s->prog = NULL;
    s->n_bound = 0;
  }
  return st;
}

dy_static_trainer *dy_to_static_train(dy_layer *model, const dy_loss_spec *loss,
                                      const dy_optimizer_spec *opt) {
  if (!model || !loss || !opt) {
    dy_fail(DY_STATUS_INVALID_ARGUMENT, (dy_srcloc){0},
            "dy_to_static_train: NULL model, loss or optimizer");
    return NULL;
  }
  dy_static_trainer *t = calloc(1, sizeof *t);
  if (!t) {
    dy_fail(DY_STATUS_OUT_OF_MEMORY, (dy_srcloc){0}, "dy_to_static_train: out of memory");
    return NULL;
  }
  t->model = model;
  t->loss = *loss;
  t->opt = *opt;
  return t;
}

dy_status dy_static_train_step(dy_static_trainer *t, dy_tensor *const *inputs, int n,
                               dy_tensor *labels, double lr, double *loss_out,
                               dy_error *err) {
  if (!t)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "train step: NULL trainer");
  if (n < 1 || n > DY_MAX_FEEDS - 2)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "train step: bad input count %d", n);
  for (int i = 0; i < n; i++)
    if (!inputs[i] || !inputs[i]->data)
      return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                          "train step: input %d is missing or has no data", i);
  bool training = t->model->training;
  signature *s = NULL;
  for (int i = 0; i < t->n_sigs && !s; i++)
    if (same_sig(&t->sigs[i], inputs, n, training))
      s = &t->sigs[i];
  if (!s) {
    if (t->n_sigs == MAX_SIGS)
      return dy_error_set(err, DY_STATUS_LIMIT,
                          "to_static_train: more than %d input signatures", MAX_SIGS);
    s = &t->sigs[t->n_sigs];
    dy_status st = build(t, s, inputs, n, err);
    if (st)
      return st;
    t->n_sigs++;
  } else if (t->last && t->last != s) {
    copy_state(s->prog, t->last->prog);
  }
  t->last = s;
  for (int i = 0; i < s->n_bound; i++)
    memcpy(s->prog->vars[s->var[i]]->data, s->tensor[i]->data, s->tensor[i]->nbytes);
  dy_status st = dy_program_train_step(s->prog, inputs, n, labels, lr, loss_out, err);
  for (int i = 0; i < s->n_bound; i++)
    memcpy(s->tensor[i]->data, s->prog->vars[s->var[i]]->data, s->tensor[i]->nbytes);
  return st;
}

const dy_program *dy_static_trainer_program(const dy_static_trainer *t) {
  return t && t->last ? t->last->prog : NULL;
}

void dy_static_trainer_free(dy_static_trainer *t) {
  if (!t)
    return;
  for (int i = 0; i < t->n_sigs; i++)
    dy_program_free(t->sigs[i].prog);
  free(t);
}
