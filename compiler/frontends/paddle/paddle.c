/* paddle.c - the PaddlePaddle frontend: files, the params stream and the
 * import loop (the op mappers are paddle_ops.c).
 *
 * A Paddle inference model is a ProgramDesc (paddle_framework.proto) and
 * its persistable vars. Those are one combined stream (`.pdiparams`,
 * `__params__`; what save_combine writes) or, in the 2018-2020 layout, one
 * file per var beside `__model__`, each the same record; both are read by
 * one parser, every byte accounted for:
 *
 *   per persistable var of block 0 (not feed/fetch), in strcmp order of names:
 *     u32  version (0)
 *     u64  LoD level count L, then per level: u64 byte size + that many bytes
 *     u32  tensor version (0)
 *     i32  TensorDesc byte length, then the TensorDesc (data_type, dims)
 *     raw  numel * dtype size bytes, little-endian
 *
 * The dtype and dims must be the VarDesc's; any mismatch, a short record
 * or bytes left over is an error naming the var.
 *
 * Import: feed ops give the Program's feeds (in `col` order) under the
 * feed var's name, typed from its VarDesc (a leading -1 is the dynamic
 * batch; another -1 a size symbol "<feed>_d<i>", or the size
 * dy_paddle_options gives); fetch ops give the fetches.
 * Every other op goes to its mapper. Before any op is mapped the program
 * is scanned: an op with sub-blocks, an op type no mapper knows, or a LoD
 * feed fails at once with a one-line error naming the op (and, for the
 * known unsupported ones, what is missing).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

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
    return dy_error_set(c->err, status, "%s: op %d (%s%s%.100s): %s", c->path, c->op_index,
                        c->op->type ? c->op->type : "?", *out ? " -> " : "", out, msg);
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

static const PdTensorDesc *tensor_desc(const PdVar *v) {
  if (!v || !v->type)
    return NULL;
  if (v->type->lod_tensor)
    return v->type->lod_tensor->tensor;
  if (v->type->selected_rows)
    return v->type->selected_rows;
  return NULL;
}

static int lod_level(const PdVar *v) {
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

static pd_param *find_param(pd_ctx *c, const char *name) {
  int lo = 0, hi = c->n_params - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, k = strcmp(c->params[mid].name, name);
    if (k == 0)
      return &c->params[mid];
    if (k < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

/* Widen a param's data to its dy dtype (int32 and smaller ints to i64,
 * float64 to f32) into a new buffer. */
static void *param_data(const pd_param *pm, dy_dtype dt, int64_t numel) {
  void *buf = malloc(numel ? (size_t)numel * dy_dtype_size(dt) : 1);
  if (!buf)
    return NULL;
  const uint8_t *s = pm->data;
  for (int64_t i = 0; i < numel; i++) {
    switch (pm->pd_dtype) {
    case PD_FP32: memcpy((float *)buf + i, s + 4 * i, 4); break;
    case PD_FP64: { double d; memcpy(&d, s + 8 * i, 8); ((float *)buf)[i] = (float)d; break; }
    case PD_INT64: memcpy((int64_t *)buf + i, s + 8 * i, 8); break;
    case PD_INT32: { int32_t v; memcpy(&v, s + 4 * i, 4); ((int64_t *)buf)[i] = v; break; }
    case PD_INT16: { int16_t v; memcpy(&v, s + 2 * i, 2); ((int64_t *)buf)[i] = v; break; }
    case PD_INT8: ((int64_t *)buf)[i] = (int8_t)s[i]; break;
    case PD_UINT8: ((int64_t *)buf)[i] = s[i]; break;
    case PD_BOOL: ((uint8_t *)buf)[i] = s[i] != 0; break;
    default: break;
    }
  }
  return buf;
}

static dy_status materialize(pd_ctx *c, pd_param *pm, int *var) {
  if (pm->var >= 0) {
    *var = pm->var;
    return DY_OK;
  }
  dy_type t = {.rank = pm->rank};
  if (!pd_dtype_to_dy(pm->pd_dtype, &t.dtype))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "parameter '%s' is %s, which dy2stc lacks",
                   pm->name, pd_dtype_name(pm->pd_dtype));
  memcpy(t.shape, pm->dims, sizeof pm->dims);
  int64_t numel = dy_type_numel(&t);
  void *buf = param_data(pm, t.dtype, numel);
  int id = buf ? dy_program_add_var(c->p, pm->name, &t) : -1;
  if (id < 0) {
    free(buf);
    return pd_fail(c, DY_STATUS_INTERNAL, "cannot add parameter '%s'", pm->name);
  }
  dy_status s = dy_program_set_data(c->p, id, buf, (size_t)numel * dy_dtype_size(t.dtype), c->err);
  free(buf);
  if (s)
    return s;
  /* a parameter is trainable unless its VarDesc says stop_gradient */
  const PdVar *vd = pd_var_desc(c, pm->name);
  c->p->vars[id]->trainable = t.dtype == DY_F32 && !(vd && vd->has_stop_gradient && vd->stop_gradient);
  pm->var = *var = id;
  return DY_OK;
}

dy_status pd_in_opt(pd_ctx *c, const char *slot, int i, int *var) {
  *var = -1;
  const char *name = pd_arg(c, false, slot, i);
  if (!name)
    return DY_OK;
  int id = dy_program_find_var(c->p, name);
  if (id >= 0) {
    *var = id;
    return DY_OK;
  }
  pd_param *pm = find_param(c, name);
  if (pm)
    return materialize(c, pm, var);
  return pd_fail(c, DY_STATUS_FORMAT, "input %s '%s' is neither a feed, a parameter nor "
                 "the output of an earlier op", slot, name);
}

dy_status pd_in(pd_ctx *c, const char *slot, int i, int *var) {
  PD_TRY(pd_in_opt(c, slot, i, var));
  if (*var < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "input %s[%d] is missing", slot, i);
  return DY_OK;
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

/* ------------------------------------------------------------------ */
/* building ops                                                        */
/* ------------------------------------------------------------------ */

/* A var for the Paddle name `name`: when the name is taken (an in-place
 * op, a redefinition), the older holder becomes "<name>@<k>" (SSA;
 * free_name). */
static void free_name(pd_ctx *c, const char *name) {
  int old = dy_program_find_var(c->p, name);
  if (old < 0)
    return;
  char buf[300];
  do
    snprintf(buf, sizeof buf, "%.250s@%d", name, ++c->n_renamed);
  while (dy_program_find_var(c->p, buf) >= 0);
  c->p->vars[old]->name = dy_program_strdup(c->p, buf);
}

static int define(pd_ctx *c, const char *name, const dy_type *t) {
  free_name(c, name);
  return dy_program_add_var(c->p, name, t);
}

dy_status pd_op(pd_ctx *c, const char *name, const int *in, int n_in, const dy_attr *attrs,
                int n_attrs, const char *out_name, int *out) {
  dy_op_kind k;
  if (!dy_op_kind_from_name(name, &k))
    return pd_fail(c, DY_STATUS_INTERNAL, "no op '%s' in the op table", name);
  dy_type in_t[16], out_t[1];
  dy_attr full[16];
  char why[160];
  if (n_in > 16)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s: %d inputs", name, n_in);
  if (dy_op_info_of(k)->n_attrs > 16 || !dy_fe_complete_attrs(k, attrs, n_attrs, full, why, sizeof why))
    return pd_fail(c, DY_STATUS_INTERNAL, "%s: the mapping does not fit the op's schema: %s",
                   name, why);
  attrs = full;
  n_attrs = dy_op_info_of(k)->n_attrs;
  for (int i = 0; i < n_in; i++)
    in_t[i] = c->p->vars[in[i]]->type;
  dy_op op = {.id = -1, .kind = k, .n_inputs = n_in, .n_outputs = 1, .n_attrs = n_attrs,
              .attrs = (dy_attr *)attrs, .loc = c->loc};
  dy_error e = {0};
  dy_status s = dy_infer(&op, in_t, n_in, out_t, &e);
  if (s)
    return pd_fail(c, s == DY_STATUS_DTYPE_MISMATCH ? DY_STATUS_UNSUPPORTED : s, "%s", e.msg);
  int id;
  if (out_name) {
    id = define(c, out_name, &out_t[0]);
  } else {
    char stem[300];
    const char *base = "tmp";
    for (size_t i = 0; i < c->op->n_outputs && !strcmp(base, "tmp"); i++)
      if (c->op->outputs[i]->n_arguments && c->op->outputs[i]->arguments[0])
        base = c->op->outputs[i]->arguments[0];
    snprintf(stem, sizeof stem, "%.200s@%s", base, name);
    const char *nm = dy_program_fresh_name(c->p, stem);
    id = nm ? dy_program_add_var(c->p, nm, &out_t[0]) : -1;
  }
  if (id < 0)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!dy_program_append_op(c->p, c->block, k, in, n_in, &id, 1, attrs, n_attrs, c->loc))
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (k == DY_OP_BATCH_NORM) /* the running mean and variance are buffers */
    for (int i = 3; i < n_in; i++)
      c->p->vars[in[i]]->trainable = false;
  *out = id;
  return DY_OK;
}

bool pd_read_later(pd_ctx *c, const char *name) {
  for (size_t i = (size_t)c->op_index + 1; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    for (size_t k = 0; k < op->n_inputs; k++)
      for (size_t j = 0; j < op->inputs[k]->n_arguments; j++)
        if (op->inputs[k]->arguments[j] && strcmp(op->inputs[k]->arguments[j], name) == 0)
          return true;
  }
  return false;
}

int pd_new_var(pd_ctx *c, const char *stem, const dy_type *t) {
  const char *nm = dy_program_fresh_name(c->p, stem);
  return nm ? dy_program_add_var(c->p, nm, t) : -1;
}

dy_status pd_set_out(pd_ctx *c, const char *slot, int var) {
  const char *name = pd_arg(c, true, slot, 0);
  if (!name)
    return pd_fail(c, DY_STATUS_FORMAT, "output %s is missing", slot);
  dy_var *v = c->p->vars[var];
  if (strcmp(v->name, name) == 0)
    return DY_OK;
  if (v->persistable || v->feed_index >= 0 || strchr(v->name, '@') == NULL) {
    /* the value already has a Paddle name (an op that passes its input
     * through): an assign under the new name */
    int64_t shape[DY_MAX_DIMS];
    for (int i = 0; i < v->type.rank; i++)
      shape[i] = 0;
    dy_attr a = DY_ATTR_IS("shape", shape, v->type.rank);
    int out;
    return pd_op(c, "reshape", &var, 1, &a, 1, name, &out);
  }
  free_name(c, name);
  v->name = dy_program_strdup(c->p, name);
  return DY_OK;
}

dy_status pd_const(pd_ctx *c, dy_dtype dt, int rank, const int64_t *shape, const void *data,
                   const char *name, int *out) {
  dy_type t = {.dtype = dt, .rank = rank};
  memcpy(t.shape, shape, sizeof(int64_t) * (size_t)rank);
  char stem[300];
  const char *base = "const";
  if (c->op && c->op->n_outputs && c->op->outputs[0]->n_arguments)
    base = c->op->outputs[0]->arguments[0];
  snprintf(stem, sizeof stem, "%.200s@const", base);
  const char *nm = name ? name : dy_program_fresh_name(c->p, stem);
  int id = !nm ? -1 : name ? define(c, name, &t) : dy_program_add_var(c->p, nm, &t);
  if (id < 0)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  PD_TRY(dy_program_set_data(c->p, id, data, (size_t)dy_type_numel(&t) * dy_dtype_size(dt),
                             c->err));
  *out = id;
  return DY_OK;
}

dy_status pd_const_f32(pd_ctx *c, float v, int *out) {
  return pd_const(c, DY_F32, 1, (int64_t[]){1}, &v, NULL, out);
}

/* ------------------------------------------------------------------ */
/* the params stream                                                   */
/* ------------------------------------------------------------------ */

static int cmp_param(const void *a, const void *b) {
  return strcmp(((const pd_param *)a)->name, ((const pd_param *)b)->name);
}

/* Persistable vars of block 0 that the params stream holds. */
static bool in_params(const PdVar *v) {
  if (!v->persistable || !v->name || !v->type)
    return false;
  int t = v->type->type;
  return t != PD_FEED_MINIBATCH && t != PD_FETCH_LIST && t != PD_READER && t != PD_RAW;
}

typedef struct {
  const uint8_t *b;
  size_t n, at;
} rd;

static bool rd_take(rd *r, size_t k, const uint8_t **p) {
  if (r->n - r->at < k)
    return false;
  *p = r->b + r->at;
  r->at += k;
  return true;
}

static bool rd_u32(rd *r, uint32_t *v) {
  const uint8_t *p;
  if (!rd_take(r, 4, &p))
    return false;
  *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return true;
}

static bool rd_u64(rd *r, uint64_t *v) {
  uint32_t lo, hi;
  if (!rd_u32(r, &lo) || !rd_u32(r, &hi))
    return false;
  *v = (uint64_t)hi << 32 | lo;
  return true;
}

/* One record of the stream for param pm (offsets in errors are the
 * stream's). */
static dy_status read_record(pd_ctx *c, rd *r, pd_param *pm, const PdVar *vd) {
  size_t start = r->at;
  uint32_t ver, tver, dlen;
  uint64_t levels;
  const uint8_t *p;
#define SHORT(what)                                                                        \
  pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' (record at byte %zu): truncated in its %s",  \
          pm->name, start, what)
  if (!rd_u32(r, &ver))
    return SHORT("version");
  if (ver != 0)
    return pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' (record at byte %zu): version %u, "
                   "expected 0", pm->name, start, ver);
  if (!rd_u64(r, &levels))
    return SHORT("LoD level count");
  if (levels > 8)
    return pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' (record at byte %zu): %llu LoD "
                   "levels", pm->name, start, (unsigned long long)levels);
  for (uint64_t l = 0; l < levels; l++) {
    uint64_t sz;
    if (!rd_u64(r, &sz))
      return SHORT("LoD level size");
    if (sz > r->n - r->at || !rd_take(r, (size_t)sz, &p))
      return SHORT("LoD data");
  }
  if (!rd_u32(r, &tver))
    return SHORT("tensor version");
  if (tver != 0)
    return pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' (record at byte %zu): tensor "
                   "version %u, expected 0", pm->name, start, tver);
  if (!rd_u32(r, &dlen))
    return SHORT("TensorDesc length");
  if ((int32_t)dlen < 0 || !rd_take(r, dlen, &p))
    return SHORT("TensorDesc");
  PdTensorDesc *td = (PdTensorDesc *)protobuf_c_message_unpack(
      &paddle__framework__proto__var_type__tensor_desc__descriptor, NULL, dlen, p);
  if (!td || !td->has_data_type) {
    if (td)
      protobuf_c_message_free_unpacked(&td->base, NULL);
    return pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' (record at byte %zu): its "
                   "TensorDesc does not parse", pm->name, start);
  }
  dy_status s = DY_OK;
  int64_t numel = 1;
  pm->pd_dtype = td->data_type;
  pm->rank = (int)td->n_dims;
  size_t esz = pd_dtype_size(td->data_type);
  if (td->n_dims > DY_MAX_DIMS || esz == 0) {
    s = pd_fail(c, DY_STATUS_UNSUPPORTED, "params: var '%s': %zu dims of %s", pm->name,
                td->n_dims, pd_dtype_name(td->data_type));
    goto done;
  }
  for (size_t i = 0; i < td->n_dims; i++) {
    pm->dims[i] = td->dims[i];
    if (td->dims[i] < 0 || (td->dims[i] > 0 && numel > INT64_MAX / 16 / td->dims[i])) {
      s = pd_fail(c, DY_STATUS_FORMAT, "params: var '%s': bad dim %lld", pm->name,
                  (long long)td->dims[i]);
      goto done;
    }
    numel *= td->dims[i];
  }
  /* the VarDesc must agree (a -1 there matches any size) */
  const PdTensorDesc *vt = tensor_desc(vd);
  if (vt) {
    bool ok = vt->data_type == td->data_type && vt->n_dims == td->n_dims;
    for (size_t i = 0; ok && i < td->n_dims; i++)
      ok = vt->dims[i] < 0 || vt->dims[i] == td->dims[i];
    if (!ok) {
      char a[200] = "", b[200] = "";
      size_t la = 0, lb = 0;
      for (size_t i = 0; i < td->n_dims && la < 180; i++)
        la += (size_t)snprintf(a + la, sizeof a - la, "%s%lld", i ? "," : "", (long long)td->dims[i]);
      for (size_t i = 0; i < vt->n_dims && lb < 180; i++)
        lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", i ? "," : "", (long long)vt->dims[i]);
      s = pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' is %s[%s] in the params but %s[%s] "
                  "in the model", pm->name, pd_dtype_name(td->data_type), a,
                  pd_dtype_name(vt->data_type), b);
      goto done;
    }
  }
  pm->nbytes = (size_t)numel * esz;
  if (pm->nbytes > r->n - r->at || !rd_take(r, pm->nbytes, &pm->data))
    s = pd_fail(c, DY_STATUS_FORMAT, "params: var '%s' (record at byte %zu): truncated in "
                "its data (%zu bytes, %zu left)", pm->name, start, pm->nbytes, r->n - r->at);
done:
  protobuf_c_message_free_unpacked(&td->base, NULL);
  return s;
#undef SHORT
}

static dy_status read_params(pd_ctx *c, const uint8_t *buf, size_t n) {
  int cap = 0;
  for (size_t i = 0; i < c->blk->n_vars; i++)
    cap += in_params(c->blk->vars[i]);
  c->params = calloc((size_t)cap + 1, sizeof *c->params);
  if (!c->params)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < c->blk->n_vars; i++)
    if (in_params(c->blk->vars[i]))
      c->params[c->n_params++] = (pd_param){.name = c->blk->vars[i]->name, .var = -1};
  qsort(c->params, (size_t)c->n_params, sizeof *c->params, cmp_param);
  for (int i = 1; i < c->n_params; i++)
    if (strcmp(c->params[i - 1].name, c->params[i].name) == 0)
      return pd_fail(c, DY_STATUS_FORMAT, "var '%s' is declared twice", c->params[i].name);
  if (c->n_params && !buf)
    return pd_fail(c, DY_STATUS_IO, "the model has %d persistable vars ('%s', ...) but no "
                   "params were given", c->n_params, c->params[0].name);
  rd r = {buf, n, 0};
  for (int i = 0; i < c->n_params; i++)
    PD_TRY(read_record(c, &r, &c->params[i], pd_var_desc(c, c->params[i].name)));
  if (r.at != r.n)
    return pd_fail(c, DY_STATUS_FORMAT, "params: %zu bytes left after the last var ('%s'), "
                   "the model declares %d persistable vars", r.n - r.at,
                   c->n_params ? c->params[c->n_params - 1].name : "none", c->n_params);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* feeds, fetches, the import loop                                     */
/* ------------------------------------------------------------------ */

static dy_status add_feed(pd_ctx *c, const char *name) {
  const PdVar *vd = pd_var_desc(c, name);
  const PdTensorDesc *td = tensor_desc(vd);
  if (!td)
    return pd_fail(c, DY_STATUS_FORMAT, "feed '%s' has no tensor VarDesc", name);
  if (lod_level(vd) > 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s' is a LoD tensor (lod_level %d): "
                   "variable-length sequence inputs are not supported", name, lod_level(vd));
  dy_type t = {.rank = (int)td->n_dims};
  if (!pd_dtype_to_dy(td->data_type, &t.dtype) || (int)td->data_type == PD_FP64 ||
      td->n_dims > DY_MAX_DIMS)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s' is %s with %zu dims: feeds are "
                   "float32, int64 or bool", name, pd_dtype_name(td->data_type), td->n_dims);
  for (size_t i = 0; i < td->n_dims; i++)
    t.shape[i] = td->dims[i];
  const dy_paddle_options *o = c->opts;
  for (int k = 0; o && k < o->n_feed_types; k++) {
    if (strcmp(o->feed_names[k], name))
      continue;
    dy_type uu = o->feed_types[k];
    const dy_type *u = &uu;
    uu.dtype = t.dtype; /* the VarDesc's: the option gives the dims */
    bool ok = u->rank == t.rank;
    for (int i = 0; ok && i < t.rank; i++)
      ok = t.shape[i] < 0 || t.shape[i] == u->shape[i];
    if (!ok) {
      char a[128], b[128];
      return pd_fail(c, DY_STATUS_SHAPE_MISMATCH, "feed '%s' is %s, the given type %s does "
                     "not fit", name, dy_type_str(&t, a, sizeof a), dy_type_str(u, b, sizeof b));
    }
    t = *u;
  }
  /* a -1 other than the leading one: a size symbol named after the feed
   * and the dim, "<feed>_d<i>" (characters outside [A-Za-z0-9_] as '_') */
  for (int i = 1; i < t.rank; i++) {
    if (t.shape[i] >= 0)
      continue;
    char sym[DY_SYM_NAME_MAX];
    int n = snprintf(sym, sizeof sym, "%s%.20s", isdigit((unsigned char)name[0]) ? "_" : "", name);
    for (int k = 0; k < n && sym[k]; k++)
      if (!isalnum((unsigned char)sym[k]))
        sym[k] = '_';
    snprintf(sym + strlen(sym), sizeof sym - strlen(sym), "_d%d", i);
    t.shape[i] = dy_dim_sym(sym);
    if (t.shape[i] == DY_DIM_NONE)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "feed '%s': no size symbol '%s'", name, sym);
    PD_TRY(dy_program_declare_sym(c->p, sym, 0, c->err));
  }
  dy_error e = {0};
  if (dy_type_check(&t, NULL, name, &e))
    return pd_fail(c, e.status, "feed %s", e.msg);
  int id = define(c, name, &t);
  if (id < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "feed '%s' is defined twice", name);
  return dy_program_add_feed(c->p, id, c->err);
}

typedef struct {
  const char *name;
  int64_t col;
  int order;
} pd_io;

static int cmp_io(const void *a, const void *b) {
  const pd_io *x = a, *y = b;
  return x->col != y->col ? (x->col < y->col ? -1 : 1) : x->order - y->order;
}

static bool is_io(const PdOp *op, const char *t) { return op->type && strcmp(op->type, t) == 0; }

/* The ops the fetches need: all of them, or with fetch_names given, those
 * whose outputs the named vars depend on (walked backwards). */
static dy_status mark_needed(pd_ctx *c) {
  size_t n_ops = c->blk->n_ops;
  c->needed = calloc(n_ops + 1, sizeof *c->needed);
  if (!c->needed)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  const dy_paddle_options *o = c->opts;
  if (!o || o->n_fetches <= 0) {
    for (size_t i = 0; i < n_ops; i++)
      c->needed[i] = true;
    return DY_OK;
  }
  size_t cap = (size_t)o->n_fetches + 16, n = 0;
  const char **want = malloc(cap * sizeof *want);
  if (!want)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < o->n_fetches; i++)
    want[n++] = o->fetch_names[i];
  for (size_t i = n_ops; i-- > 0;) {
    const PdOp *op = c->blk->ops[i];
    bool hit = false;
    for (size_t k = 0; k < op->n_outputs && !hit; k++)
      for (size_t j = 0; j < op->outputs[k]->n_arguments && !hit; j++)
        for (size_t w = 0; w < n && !hit; w++)
          hit = op->outputs[k]->arguments[j] && strcmp(op->outputs[k]->arguments[j], want[w]) == 0;
    if (!hit || is_io(op, "fetch"))
      continue;
    c->needed[i] = true;
    for (size_t k = 0; k < op->n_inputs; k++)
      for (size_t j = 0; j < op->inputs[k]->n_arguments; j++) {
        if (n == cap) {
          const char **nw = realloc(want, 2 * cap * sizeof *want);
          if (!nw) {
            free(want);
            return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
          }
          want = nw;
          cap *= 2;
        }
        if (op->inputs[k]->arguments[j])
          want[n++] = op->inputs[k]->arguments[j];
      }
  }
  free(want);
  return DY_OK;
}

/* Scan before importing: every op known, no sub-blocks. */
static dy_status prescan(pd_ctx *c) {
  for (size_t i = 0; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    if (!c->needed[i])
      continue;
    c->op = op;
    c->op_index = (int)i;
    if (!op->type)
      return pd_fail(c, DY_STATUS_FORMAT, "op without a type");
    if (is_io(op, "feed") || is_io(op, "fetch"))
      continue;
    const char *why = pd_unsupported_reason(op->type);
    if (why)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "%s", why);
  }
  for (size_t i = 0; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    c->op = op;
    c->op_index = (int)i;
    if (is_io(op, "feed") || is_io(op, "fetch") || !c->needed[i])
      continue;
    for (size_t k = 0; k < op->n_attrs; k++)
      if ((int)op->attrs[k]->type == PD_A_BLOCK || (int)op->attrs[k]->type == PD_A_BLOCKS)
        return pd_fail(c, DY_STATUS_UNSUPPORTED, "ops with sub-blocks (attribute '%s') are "
                       "not supported", op->attrs[k]->name ? op->attrs[k]->name : "?");
    if (!pd_find_mapper(op->type))
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "the op type '%s' is not supported", op->type);
  }
  c->op = NULL;
  return DY_OK;
}

static dy_status import_io(pd_ctx *c, bool feeds) {
  const char *kind = feeds ? "feed" : "fetch";
  int n = 0;
  pd_io io[DY_MAX_FEEDS];
  const dy_paddle_options *o = c->opts;
  bool named = !feeds && o && o->n_fetches > 0;
  if (named) { /* the fetches the caller names */
    if (o->n_fetches > DY_MAX_FEEDS)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "more than %d fetches", DY_MAX_FEEDS);
    for (int i = 0; i < o->n_fetches; i++)
      io[n++] = (pd_io){o->fetch_names[i], i, i};
  }
  for (size_t i = 0; i < c->blk->n_ops && !named; i++) {
    const PdOp *op = c->blk->ops[i];
    if (!is_io(op, kind))
      continue;
    c->op = op;
    c->op_index = (int)i;
    const char *nm = pd_arg(c, feeds, feeds ? "Out" : "X", 0);
    if (!nm)
      return pd_fail(c, DY_STATUS_FORMAT, "%s op without its var", kind);
    if (n == DY_MAX_FEEDS)
      return pd_fail(c, DY_STATUS_UNSUPPORTED, "more than %d %ss", DY_MAX_FEEDS, kind);
    io[n] = (pd_io){nm, pd_attr_i(c, "col", n), n};
    n++;
  }
  qsort(io, (size_t)n, sizeof *io, cmp_io);
  for (int i = 0; i < n; i++) {
    if (feeds) {
      PD_TRY(add_feed(c, io[i].name));
      continue;
    }
    int id = dy_program_find_var(c->p, io[i].name);
    if (id < 0) {
      pd_param *pm = find_param(c, io[i].name);
      if (!pm)
        return pd_fail(c, DY_STATUS_FORMAT, "fetch '%s' is computed by no op", io[i].name);
      PD_TRY(materialize(c, pm, &id));
    }
    if (c->p->vars[id]->fetch_index >= 0 || c->p->vars[id]->feed_index >= 0 ||
        c->p->vars[id]->persistable) {
      /* fetched twice, or a feed or parameter fetched: a copy */
      c->op = NULL;
      char nm[300];
      snprintf(nm, sizeof nm, "%.280s@fetch%d", io[i].name, i);
      int64_t shape[DY_MAX_DIMS] = {0};
      dy_attr a = DY_ATTR_IS("shape", shape, c->p->vars[id]->type.rank);
      PD_TRY(pd_op(c, "reshape", &id, 1, &a, 1, nm, &id));
    }
    PD_TRY(dy_program_add_fetch(c->p, id, c->err));
  }
  if (n == 0)
    return pd_fail(c, DY_STATUS_FORMAT, "the program has no %s op", kind);
  c->op = NULL;
  return DY_OK;
}

static dy_status import_program(pd_ctx *c, const uint8_t *params, size_t params_n) {
  if (c->prog->n_blocks == 0 || !c->prog->blocks[0])
    return pd_fail(c, DY_STATUS_FORMAT, "the ProgramDesc has no blocks");
  c->blk = c->prog->blocks[0];
  if (c->prog->version && c->prog->version->version >= 3000000 && c->blk->n_ops == 0)
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "an empty Paddle 3 program (a PIR .json model?)");
  PD_TRY(mark_needed(c));
  PD_TRY(prescan(c));
  PD_TRY(read_params(c, params, params_n));
  PD_TRY(import_io(c, true));
  for (size_t i = 0; i < c->blk->n_ops; i++) {
    const PdOp *op = c->blk->ops[i];
    if (is_io(op, "feed") || is_io(op, "fetch") || !c->needed[i])
      continue;
    c->op = op;
    c->op_index = (int)i;
    c->loc = (dy_srcloc){c->path, (int)i + 1};
    PD_TRY(pd_find_mapper(op->type)(c));
  }
  c->op = NULL;
  PD_TRY(import_io(c, false));
  return dy_verify(c->p, c->err);
}

dy_status dy_paddle_load_mem(const uint8_t *model, size_t model_n, const uint8_t *params,
                             size_t params_n, const char *name,
                             const dy_paddle_options *opts, dy_program **out,
                             dy_error *err) {
  *out = NULL;
  pd_ctx c = {.err = err, .opts = opts, .path = name ? name : "<paddle model>"};
  PdProgram *prog = model && model_n
                        ? paddle__framework__proto__program_desc__unpack(NULL, model_n, model)
                        : NULL;
  if (!prog)
    return dy_error_set(err, DY_STATUS_FORMAT, "%s: not a PaddlePaddle ProgramDesc (the "
                        "protobuf does not parse: truncated or corrupted?)", c.path);
  c.prog = prog;
  c.p = dy_program_new();
  /* the file name in source locations must outlive this call */
  if (c.p)
    c.path = dy_program_strdup(c.p, c.path);
  dy_status s = c.p ? import_program(&c, params, params_n)
                    : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
  free(c.params);
  free(c.needed);
  if (s) {
    dy_program_free(c.p);
    return s;
  }
  *out = c.p;
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* files                                                               */
/* ------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

bool dy_paddle_is_model_path(const char *path) {
  char buf[4096];
  if (ends_with(path, ".pdmodel") || strcmp(base_name(path), "__model__") == 0)
    return true;
  snprintf(buf, sizeof buf, "%s/__model__", path);
  return is_dir(path) && is_file(buf);
}

/* The per-variable layout: the files named as the persistable vars,
 * concatenated in the stream's order (what load_combine would read). */
static dy_status read_separate(const char *dir, const uint8_t *model, size_t model_n,
                               uint8_t **buf, size_t *len, dy_error *err) {
  *buf = NULL;
  *len = 0;
  PdProgram *prog = paddle__framework__proto__program_desc__unpack(NULL, model_n, model);
  if (!prog || !prog->n_blocks) {
    if (prog)
      paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
    return DY_OK; /* dy_paddle_load_mem reports it */
  }
  const PdBlock *b = prog->blocks[0];
  const char **names = calloc(b->n_vars + 1, sizeof *names);
  size_t n = 0;
  dy_status s = names ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; !s && i < b->n_vars; i++)
    if (in_params(b->vars[i]))
      names[n++] = b->vars[i]->name;
  /* strcmp order, as the stream's */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      const char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (size_t i = 0; !s && i < n; i++) {
    char path[8192];
    uint8_t *part;
    size_t plen;
    if (strchr(names[i], '/') || strcmp(names[i], "..") == 0) {
      s = dy_error_set(err, DY_STATUS_FORMAT, "%s: the var name '%s' is not a file name", dir,
                       names[i]);
      break;
    }
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if ((s = dy_read_file(path, &part, &plen, err))) {
      dy_error_prefix(err, "parameter '%s' (one file per var beside __model__)", names[i]);
      break;
    }
    uint8_t *nb = realloc(*buf, *len + plen + 1);
    if (!nb) {
      free(part);
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    memcpy(nb + *len, part, plen);
    *buf = nb;
    *len += plen;
    free(part);
  }
  free(names);
  paddle__framework__proto__program_desc__free_unpacked(prog, NULL);
  if (s) {
    free(*buf);
    *buf = NULL;
  }
  return s;
}

dy_status dy_paddle_load(const char *path, const char *params_path,
                         const dy_paddle_options *opts, dy_program **out, dy_error *err) {
  *out = NULL;
  char model_path[4200], pp[4400], dir[4200];
  snprintf(model_path, sizeof model_path, "%s", path);
  if (is_dir(path))
    snprintf(model_path, sizeof model_path, "%s/__model__", path);
  snprintf(dir, sizeof dir, "%s", model_path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    snprintf(dir, sizeof dir, ".");
  bool separate = false;
  if (params_path) {
    snprintf(pp, sizeof pp, "%s", params_path);
  } else if (ends_with(model_path, ".pdmodel")) {
    snprintf(pp, sizeof pp, "%.*s.pdiparams", (int)(strlen(model_path) - 8), model_path);
  } else if (strcmp(base_name(model_path), "__model__") == 0) {
    snprintf(pp, sizeof pp, "%s/__params__", dir);
    separate = !is_file(pp);
  } else {
    snprintf(pp, sizeof pp, "%s/params", dir);
  }
  uint8_t *model = NULL, *params = NULL;
  size_t model_n = 0, params_n = 0;
  dy_status s = dy_read_file(model_path, &model, &model_n, err);
  if (!s && separate)
    s = read_separate(dir, model, model_n, &params, &params_n, err);
  else if (!s && is_file(pp))
    s = dy_read_file(pp, &params, &params_n, err);
  else if (!s && params_path)
    s = dy_error_set(err, DY_STATUS_IO, "%s: no such params file", pp);
  if (!s)
    s = dy_paddle_load_mem(model, model_n, params, params_n, model_path, opts, out, err);
  free(model);
  free(params);
  return s;
}
