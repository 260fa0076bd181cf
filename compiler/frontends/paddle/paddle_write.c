/* paddle_write.c - building a ProgramDesc to export (paddle_internal.h):
 * ops, their input/output slots and attributes of each Paddle kind,
 * VarDescs and TensorDescs, the XShape outputs of the *2 shape ops, and
 * errors naming the op that cannot be written. Every allocation is listed
 * in the pdx_ctx and freed at once (pdx_free); after the first one that
 * fails, the builders do nothing and the exporter reports out of memory.
 *
 * The floor of the Paddle exporter: it calls no other paddle_*.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "paddle_internal.h"

void *pdx_alloc(pdx_ctx *x, size_t n) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 256;
    void **np = realloc(x->ptrs, cap * sizeof *np);
    if (!np) {
      x->oom = true;
      return NULL;
    }
    x->ptrs = np;
    x->cap = cap;
  }
  void *m = calloc(1, n ? n : 1);
  if (!m) {
    x->oom = true;
    return NULL;
  }
  x->ptrs[x->n++] = m;
  return m;
}

char *pdx_str(pdx_ctx *x, const char *s) {
  char *d = pdx_alloc(x, strlen(s) + 1);
  if (d)
    strcpy(d, s);
  return d;
}

/* Append v to a protobuf-c repeated field (n, array). */
void pdx_push(pdx_ctx *x, size_t *n, void ***arr, void *v) {
  void **na = pdx_alloc(x, (*n + 1) * sizeof *na);
  if (!na)
    return;
  if (*n)
    memcpy(na, *arr, *n * sizeof *na);
  na[(*n)++] = v;
  *arr = na;
}

/* ---- ops ---- */

PdOp *pdx_op(pdx_ctx *x, PdBlock *b, const char *type) {
  PdOp *op = pdx_alloc(x, sizeof *op);
  if (!op)
    return NULL;
  paddle__framework__proto__op_desc__init(op);
  op->type = pdx_str(x, type);
  pdx_push(x, &b->n_ops, (void ***)&b->ops, op);
  return op;
}

void pdx_arg(pdx_ctx *x, PdOp *op, bool output, const char *slot, const char *name) {
  if (!op)
    return;
  size_t *n = output ? &op->n_outputs : &op->n_inputs;
  Paddle__Framework__Proto__OpDesc__Var ***arr = output ? &op->outputs : &op->inputs;
  Paddle__Framework__Proto__OpDesc__Var *v = NULL;
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*arr)[i]->parameter, slot) == 0)
      v = (*arr)[i];
  if (!v) {
    v = pdx_alloc(x, sizeof *v);
    if (!v)
      return;
    paddle__framework__proto__op_desc__var__init(v);
    v->parameter = pdx_str(x, slot);
    pdx_push(x, n, (void ***)arr, v);
  }
  if (name)
    pdx_push(x, &v->n_arguments, (void ***)&v->arguments, pdx_str(x, name));
}

static PdAttr *pdx_attr(pdx_ctx *x, PdOp *op, const char *name, int type) {
  if (!op)
    return NULL;
  PdAttr *a = pdx_alloc(x, sizeof *a);
  if (!a)
    return NULL;
  paddle__framework__proto__op_desc__attr__init(a);
  a->name = pdx_str(x, name);
  a->has_type = true;
  a->type = (Paddle__Framework__Proto__AttrType)type;
  pdx_push(x, &op->n_attrs, (void ***)&op->attrs, a);
  return a;
}

void pdx_at_i(pdx_ctx *x, PdOp *op, const char *name, int64_t v) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_INT);
  if (a)
    a->has_i = true, a->i = (int32_t)v;
}

void pdx_at_f(pdx_ctx *x, PdOp *op, const char *name, double v) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_FLOAT);
  if (a)
    a->has_f = true, a->f = (float)v;
}

void pdx_at_b(pdx_ctx *x, PdOp *op, const char *name, bool v) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_BOOLEAN);
  if (a)
    a->has_b = true, a->b = v;
}

void pdx_at_s(pdx_ctx *x, PdOp *op, const char *name, const char *v) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_STRING);
  if (a)
    a->s = pdx_str(x, v);
}

void pdx_at_ints(pdx_ctx *x, PdOp *op, const char *name, const int64_t *v, int n) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_INTS);
  int32_t *d = a ? pdx_alloc(x, (size_t)n * sizeof *d) : NULL;
  if (!d)
    return;
  for (int i = 0; i < n; i++)
    d[i] = (int32_t)v[i];
  a->ints = d;
  a->n_ints = (size_t)n;
}

void pdx_at_l(pdx_ctx *x, PdOp *op, const char *name, int64_t v) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_LONG);
  if (a)
    a->has_l = true, a->l = v;
}

void pdx_at_floats(pdx_ctx *x, PdOp *op, const char *name, const float *v, int n) {
  PdAttr *a = pdx_attr(x, op, name, PD_A_FLOATS);
  float *d = a ? pdx_alloc(x, (size_t)n * sizeof *d) : NULL;
  if (!d)
    return;
  memcpy(d, v, (size_t)n * sizeof *d);
  a->floats = d;
  a->n_floats = (size_t)n;
}

/* ---- vars ---- */

int pdx_dtype(dy_dtype t) { return t == DY_F32 ? PD_FP32 : t == DY_I64 ? PD_INT64 : PD_BOOL; }

PdTensorDesc *pdx_tdesc_pd(pdx_ctx *x, int pd_dtype, int rank, const int64_t *dims) {
  PdTensorDesc *td = pdx_alloc(x, sizeof *td);
  int64_t *d = pdx_alloc(x, (size_t)(rank + 1) * sizeof *d);
  if (!td || !d)
    return NULL;
  paddle__framework__proto__var_type__tensor_desc__init(td);
  td->has_data_type = true;
  td->data_type = (Paddle__Framework__Proto__VarType__Type)pd_dtype;
  for (int i = 0; i < rank; i++)
    d[i] = dims[i] < 0 ? -1 : dims[i];
  td->dims = d;
  td->n_dims = (size_t)rank;
  return td;
}

PdTensorDesc *pdx_tdesc(pdx_ctx *x, const dy_type *t) {
  return pdx_tdesc_pd(x, pdx_dtype(t->dtype), t->rank, t->shape);
}

PdVar *pdx_var_td(pdx_ctx *x, PdBlock *b, const char *name, int vtype, PdTensorDesc *td) {
  PdVar *v = pdx_alloc(x, sizeof *v);
  Paddle__Framework__Proto__VarType *vt = pdx_alloc(x, sizeof *vt);
  if (!v || !vt)
    return NULL;
  paddle__framework__proto__var_desc__init(v);
  paddle__framework__proto__var_type__init(vt);
  v->name = pdx_str(x, name);
  v->type = vt;
  vt->has_type = true;
  vt->type = (Paddle__Framework__Proto__VarType__Type)vtype;
  if (td) {
    Paddle__Framework__Proto__VarType__LoDTensorDesc *ld = pdx_alloc(x, sizeof *ld);
    if (!ld)
      return NULL;
    paddle__framework__proto__var_type__lo_dtensor_desc__init(ld);
    ld->tensor = td;
    vt->lod_tensor = ld;
  }
  pdx_push(x, &b->n_vars, (void ***)&b->vars, v);
  return v;
}

PdVar *pdx_var(pdx_ctx *x, PdBlock *b, const char *name, int vtype, const dy_type *t) {
  PdTensorDesc *td = t ? pdx_tdesc(x, t) : NULL;
  if (t && !td)
    return NULL;
  return pdx_var_td(x, b, name, vtype, td);
}

/* An op reading X and writing Out. */
PdOp *pdx_xo(pdx_ctx *x, PdBlock *b, const char *type, const char *in, const char *out) {
  PdOp *op = pdx_op(x, b, type);
  pdx_arg(x, op, false, "X", in);
  pdx_arg(x, op, true, "Out", out);
  return op;
}

/* dy's paddings ([h, w], or [top, left, bottom, right]) as Paddle's ([h,
 * w], or [top, bottom, left, right]): the count. */
int pdx_pads(const int64_t *p, int n, int64_t out[4]) {
  out[0] = out[1] = out[2] = out[3] = 0;
  if (n == 4) {
    out[0] = p[0], out[1] = p[2], out[2] = p[1], out[3] = p[3];
    return 4;
  }
  if (n == 2)
    out[0] = p[0], out[1] = p[1];
  return 2;
}

const char *pdx_vname(pdx_ctx *x, int id) { return x->p->vars[id]->name; }

/* An XShape output (what Paddle's *2 shape ops carry): [0, dims...]. */
void pdx_xshape(pdx_ctx *x, PdBlock *b, PdOp *op, int in) {
  char nm[400];
  snprintf(nm, sizeof nm, "%.380s@xshape%d", pdx_vname(x, in), (int)b->n_ops);
  dy_type t = x->p->vars[in]->type;
  if (t.rank >= DY_MAX_DIMS)
    return;
  memmove(t.shape + 1, t.shape, sizeof(int64_t) * (size_t)t.rank);
  t.shape[0] = 0;
  t.rank++;
  pdx_var(x, b, nm, PD_LOD_TENSOR, &t);
  pdx_arg(x, op, true, "XShape", nm);
}

void pdx_free(pdx_ctx *x) {
  for (size_t i = 0; i < x->n; i++)
    free(x->ptrs[i]);
  free(x->ptrs);
  x->ptrs = NULL;
  x->n = x->cap = 0;
}

dy_status pdx_unsupported(pdx_ctx *x, const dy_op *o, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dy_error_at(x->err, o, DY_STATUS_UNSUPPORTED, "export to Paddle: %s", msg);
}
