/* kernels_custom.c - the custom op's registry and kernel (dy_custom.h). The
 * kernel hands the inputs to the registered op of the op's name; without
 * one it is an error naming the op and how to give it. */
#include <stdlib.h>
#include <string.h>

#include "dy_custom.h"

static dy_custom_op registry[DY_CUSTOM_MAX];
static char names[DY_CUSTOM_MAX][64];
static int n_registered;

const dy_custom_op *dy_custom_find(const char *name) {
  for (int i = 0; name && i < n_registered; i++)
    if (strcmp(registry[i].name, name) == 0)
      return &registry[i];
  return NULL;
}

dy_status dy_custom_register(const dy_custom_op *op, dy_error *err) {
  if (!op || !op->name || !op->name[0] || strlen(op->name) >= sizeof names[0] || !op->shape ||
      !op->run)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT,
                        "custom op: a name (under 64 bytes), a shape function and a kernel");
  int i = 0;
  while (i < n_registered && strcmp(registry[i].name, op->name) != 0)
    i++;
  if (i == DY_CUSTOM_MAX)
    return dy_error_set(err, DY_STATUS_LIMIT, "custom op '%s': at most %d custom ops", op->name,
                        DY_CUSTOM_MAX);
  snprintf(names[i], sizeof names[i], "%s", op->name);
  registry[i] = *op;
  registry[i].name = names[i];
  if (i == n_registered)
    n_registered++;
  return DY_OK;
}

void dy_custom_clear(void) { n_registered = 0; }

dy_status dy_kernel_custom(const dy_op *op, dy_tensor *const *in, int n_in,
                           dy_tensor *const *out, dy_error *err) {
  dy_custom_attrs a;
  dy_status s = dy_custom_attrs_of(op, &a, err);
  if (s)
    return s;
  const dy_custom_op *c = dy_custom_find(a.name);
  if (!c)
    return dy_error_at(err, op, DY_STATUS_UNSUPPORTED,
                       "custom op '%s' has no kernel here (dy2stc run --custom-op %s=FILE.c)",
                       a.name, a.name);
  if (n_in > DY_MAX_OP_INPUTS)
    return dy_error_at(err, op, DY_STATUS_LIMIT, "custom op '%s': %d inputs", a.name, n_in);
  const void *data[DY_MAX_OP_INPUTS];
  int dtypes[DY_MAX_OP_INPUTS], ranks[DY_MAX_OP_INPUTS];
  const int64_t *shapes[DY_MAX_OP_INPUTS];
  for (int i = 0; i < n_in; i++) {
    data[i] = in[i]->data;
    dtypes[i] = (int)in[i]->type.dtype;
    ranks[i] = in[i]->type.rank;
    shapes[i] = in[i]->type.shape;
  }
  char msg[256] = "";
  const dy_type *t = &out[0]->type;
  if (c->run(c->ctx, n_in, data, dtypes, ranks, shapes, out[0]->data, (int)t->dtype, t->rank,
             t->shape, msg, sizeof msg))
    return dy_error_at(err, op, DY_STATUS_INTERNAL, "custom op '%s': %s", a.name,
                       msg[0] ? msg : "its kernel failed");
  return DY_OK;
}
