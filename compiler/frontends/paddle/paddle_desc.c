/* paddle_desc.c - reading a ProgramDesc (paddle_internal.h): Paddle's
 * dtypes and their dy counterparts, errors naming the op being imported,
 * VarDescs, an op's input/output slots and its attributes (read whatever
 * way a Paddle version stored them: INT or LONG, FLOAT or FLOAT64 or
 * SCALAR, a single int where a list is expected).
 *
 * The floor of the Paddle importer: it calls no other paddle_*.c.
 */
#include <stdarg.h>
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* dtypes, errors                                                      */
/* ------------------------------------------------------------------ */

size_t pd_dtype_size(int t) {
  switch (t) {
  case PD_BOOL: case PD_UINT8: case PD_INT8: return 1;
  case PD_INT16: case PD_FP16: case PD_BF16: return 2;
  case PD_INT32: case PD_FP32: return 4;
  case PD_INT64: case PD_FP64: return 8;
  default: return 0;
  }
}

const char *pd_dtype_name(int t) {
  switch (t) {
  case PD_BOOL: return "bool";
  case PD_INT16: return "int16";
  case PD_INT32: return "int32";
  case PD_INT64: return "int64";
  case PD_FP16: return "float16";
  case PD_FP32: return "float32";
  case PD_FP64: return "float64";
  case PD_UINT8: return "uint8";
  case PD_INT8: return "int8";
  case PD_BF16: return "bfloat16";
  default: return "non-tensor";
  }
}

bool pd_dtype_to_dy(int t, dy_dtype *out) {
  switch (t) {
  case PD_FP32: case PD_FP64: *out = DY_F32; return true;
  case PD_INT64: case PD_INT32: case PD_INT16: case PD_INT8: case PD_UINT8:
    *out = DY_I64; return true;
  case PD_BOOL: *out = DY_BOOL; return true;
  default: return false;
  }
}

dy_status pd_fail(pd_ctx *c, dy_status status, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->op) {
    const char *out = "";
    for (size_t i = 0; i < c->op->n_outputs && !*out; i++)
      if (c->op->outputs[i]->n_arguments && c->op->outputs[i]->arguments[0])
        out = c->op->outputs[i]->arguments[0];
    char blk[32] = "";
    if (c->blk && c->blk->idx > 0) /* an op of a sub-block (a while's body) */
      snprintf(blk, sizeof blk, "block %d ", c->blk->idx);
    return dy_error_set(c->err, status, "%s: %sop %d (%s%s%.100s): %s", c->path, blk,
                        c->op_index, c->op->type ? c->op->type : "?", *out ? " -> " : "", out,
                        msg);
  }
  return dy_error_set(c->err, status, "%s: %s", c->path, msg);
}

/* ------------------------------------------------------------------ */
/* VarDescs, op arguments and attributes                               */
/* ------------------------------------------------------------------ */

const PdVar *pd_var_desc(const pd_ctx *c, const char *name) {
  for (size_t i = 0; i < c->blk->n_vars; i++)
    if (c->blk->vars[i]->name && strcmp(c->blk->vars[i]->name, name) == 0)
      return c->blk->vars[i];
  return NULL;
}

const PdTensorDesc *pd_tensor_desc(const PdVar *v) {
  if (!v || !v->type)
    return NULL;
  if (v->type->lod_tensor)
    return v->type->lod_tensor->tensor;
  if (v->type->selected_rows)
    return v->type->selected_rows;
  return NULL;
}

int pd_lod_level(const PdVar *v) {
  return v && v->type && v->type->lod_tensor ? v->type->lod_tensor->lod_level : 0;
}

static const Paddle__Framework__Proto__OpDesc__Var *slot_of(const PdOp *op, bool output,
                                                           const char *slot) {
  size_t n = output ? op->n_outputs : op->n_inputs;
  Paddle__Framework__Proto__OpDesc__Var **v = output ? op->outputs : op->inputs;
  for (size_t i = 0; i < n; i++)
    if (v[i]->parameter && strcmp(v[i]->parameter, slot) == 0)
      return v[i];
  return NULL;
}

int pd_n_args(pd_ctx *c, bool output, const char *slot) {
  const Paddle__Framework__Proto__OpDesc__Var *v = slot_of(c->op, output, slot);
  return v ? (int)v->n_arguments : 0;
}

const char *pd_arg(pd_ctx *c, bool output, const char *slot, int i) {
  const Paddle__Framework__Proto__OpDesc__Var *v = slot_of(c->op, output, slot);
  if (!v || i < 0 || i >= (int)v->n_arguments || !v->arguments[i] || !*v->arguments[i])
    return NULL;
  return v->arguments[i];
}


const dy_type *pd_type(pd_ctx *c, int var) { return &c->p->vars[var]->type; }

const PdAttr *pd_attr(pd_ctx *c, const char *name) {
  for (size_t i = 0; i < c->op->n_attrs; i++)
    if (c->op->attrs[i]->name && strcmp(c->op->attrs[i]->name, name) == 0)
      return c->op->attrs[i];
  return NULL;
}

int64_t pd_attr_i(pd_ctx *c, const char *name, int64_t dflt) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return dflt;
  if (a->has_l && (int)a->type == PD_A_LONG)
    return a->l;
  if ((int)a->type == PD_A_BOOLEAN)
    return a->b;
  return a->has_i ? a->i : a->has_l ? a->l : dflt;
}

double pd_attr_f(pd_ctx *c, const char *name, double dflt) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return dflt;
  if ((int)a->type == PD_A_FLOAT64 && a->has_float64)
    return a->float64;
  if ((int)a->type == PD_A_INT)
    return a->i;
  if ((int)a->type == PD_A_LONG)
    return (double)a->l;
  if ((int)a->type == PD_A_SCALAR && a->scalar)
    return a->scalar->has_r ? a->scalar->r : a->scalar->has_i ? (double)a->scalar->i : dflt;
  return a->has_f ? a->f : dflt;
}

bool pd_attr_b(pd_ctx *c, const char *name, bool dflt) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return dflt;
  if (a->has_b)
    return a->b;
  if (a->has_i)
    return a->i != 0;
  return dflt;
}

const char *pd_attr_s(pd_ctx *c, const char *name, const char *dflt, char *buf, size_t n) {
  const PdAttr *a = pd_attr(c, name);
  snprintf(buf, n, "%s", a && a->s ? a->s : dflt);
  return buf;
}

int pd_attr_ints(pd_ctx *c, const char *name, int64_t *out, int cap) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return -1;
  int n = 0;
  if (((int)a->type == PD_A_INT || (int)a->type == PD_A_LONG) && cap > 0) {
    /* an old program's single int where newer ones have a list (reduce's dim) */
    out[0] = (int)a->type == PD_A_LONG ? a->l : a->i;
    return 1;
  }
  if ((int)a->type == PD_A_LONGS)
    for (size_t i = 0; i < a->n_longs && n < cap; i++)
      out[n++] = a->longs[i];
  else
    for (size_t i = 0; i < a->n_ints && n < cap; i++)
      out[n++] = a->ints[i];
  return n;
}

int pd_attr_len(pd_ctx *c, const char *name) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return -1;
  if ((int)a->type == PD_A_INT || (int)a->type == PD_A_LONG)
    return 1;
  size_t n = (int)a->type == PD_A_LONGS ? a->n_longs : a->n_ints;
  return n > 1000 ? 1000 : (int)n;
}

dy_status pd_attr_pair(pd_ctx *c, const char *name, int64_t out[2]) {
  int n = pd_attr_len(c, name);
  if (n < 0)
    return DY_OK;
  if (n != 2)
    return pd_fail(c, DY_STATUS_INVALID_ARGUMENT, "%s of length %d, expected 2", name, n);
  pd_attr_ints(c, name, out, 2);
  return DY_OK;
}

int pd_attr_floats(pd_ctx *c, const char *name, float *out, int cap) {
  const PdAttr *a = pd_attr(c, name);
  if (!a)
    return -1;
  int n = 0;
  if ((int)a->type == PD_A_FLOAT64S)
    for (size_t i = 0; i < a->n_float64s && n < cap; i++)
      out[n++] = (float)a->float64s[i];
  else
    for (size_t i = 0; i < a->n_floats && n < cap; i++)
      out[n++] = a->floats[i];
  return n;
}
