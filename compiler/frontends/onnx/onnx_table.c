/* onnx_table.c - the ONNX op types that are exactly one op of the op
 * table, one row each: the ONNX name, the op (ops.def), how many inputs
 * it reads (each required, in order), whether input 0 must be float32,
 * and its attributes as (ONNX name, the op's name, ONNX's default). An
 * attribute row without an ONNX name fixes the op's attribute to a value
 * ONNX does not let the model choose (Softplus's beta and threshold).
 *
 * ox_map_direct imports any of them the same way: it rejects attributes not
 * in the row (ox_check_attrs), reads the inputs, checks the dtype, reads
 * the attributes (absent: the default) and builds the op through ox_op,
 * which folds it when every input is a constant. A new one-to-one ONNX op
 * is one row here; an op that needs more than that (broadcast rules of
 * its own, a composition, shape values) has a mapper in its family file.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* ONNX type      the op                  inputs     input 0 float32   attributes */
static const ox_direct rows[] = {
    /* unary math */
    {"Relu",        .op = "relu",         .n_in = 1},
    {"Sigmoid",     .op = "sigmoid",      .n_in = 1},
    {"Tanh",        .op = "tanh",         .n_in = 1},
    {"Exp",         .op = "exp",          .n_in = 1},
    {"Log",         .op = "log",          .n_in = 1},
    {"Sqrt",        .op = "sqrt",         .n_in = 1},
    {"Abs",         .op = "abs",          .n_in = 1},
    {"Neg",         .op = "neg",          .n_in = 1},
    {"Erf",         .op = "erf",          .n_in = 1},
    {"Reciprocal",  .op = "reciprocal",   .n_in = 1},
    {"HardSwish",   .op = "hard_swish",   .n_in = 1},
    {"Softsign",    .op = "softsign",     .n_in = 1},
    /* trigonometry: float32 (the extra family's ops) */
    {"Sin",         .op = "sin",          .n_in = 1},
    {"Cos",         .op = "cos",          .n_in = 1},
    {"Tan",         .op = "tan",          .n_in = 1},
    {"Asin",        .op = "asin",         .n_in = 1},
    {"Acos",        .op = "acos",         .n_in = 1},
    {"Atan",        .op = "atan",         .n_in = 1},
    /* activations with attributes; Softplus is log(exp(x) + 1) */
    {"Softplus",    .op = "softplus",     .n_in = 1, .f32 = true,
     .attrs = {{NULL, "beta", 1.0f}, {NULL, "threshold", 20.0f}}},
    {"LeakyRelu",   .op = "leaky_relu",   .n_in = 1, .f32 = true,
     .attrs = {{"alpha", "alpha", 0.01f}}},
    {"Elu",         .op = "elu",          .n_in = 1, .f32 = true,
     .attrs = {{"alpha", "alpha", 1.0f}}},
    {"HardSigmoid", .op = "hard_sigmoid", .n_in = 1, .f32 = true,
     .attrs = {{"alpha", "slope", 0.2f}, {"beta", "offset", 0.5f}}},
    /* comparisons (numpy broadcasting) -> bool, and Where(condition, X, Y) */
    {"Equal",       .op = "equal",        .n_in = 2},
    {"Greater",     .op = "greater",      .n_in = 2},
    {"Less",        .op = "less",         .n_in = 2},
    {"Where",       .op = "where",        .n_in = 3},
};

const ox_direct *ox_find_direct(const char *op_type) {
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    if (strcmp(rows[i].op_type, op_type) == 0)
      return &rows[i];
  return NULL;
}

dy_status ox_map_direct(ox_ctx *c, const ox_direct *d) {
  int n_attrs = (int)(sizeof d->attrs / sizeof *d->attrs);
  /* the ONNX attributes the row knows, as ox_check_attrs reads them */
  char known[128] = "";
  for (int i = 0; i < n_attrs && d->attrs[i].name; i++)
    if (d->attrs[i].onnx)
      snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? " " : "",
               d->attrs[i].onnx);
  TRY(ox_check_attrs(c, known));
  ox_value *in[3];
  for (int i = 0; i < d->n_in; i++)
    TRY(ox_need_in(c, i, &in[i]));
  if (d->f32)
    TRY(ox_need_f32(c, in[0]));
  dy_attr a[2];
  int na = 0;
  for (; na < n_attrs && d->attrs[na].name; na++) {
    const ox_attr_map *e = &d->attrs[na];
    a[na] = DY_ATTR_F(e->name, e->onnx ? ox_attr_f(c, e->onnx, e->dflt) : e->dflt);
  }
  OUT(0, ox_op(c, d->op, in, d->n_in, a, na));
}

const ox_direct *ox_find_direct_op(const char *op) {
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    if (strcmp(rows[i].op, op) == 0)
      return &rows[i];
  return NULL;
}
