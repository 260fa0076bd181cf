/* paddle_params.c - a model's persistable vars (paddle_internal.h). They
 * are one combined stream (`.pdiparams`, `__params__`; what save_combine
 * writes), read by one parser, every byte accounted for:
 *
 *   per persistable var of block 0 (not feed/fetch), in strcmp order of names:
 *     u32  version (0)
 *     u64  LoD level count L, then per level: u64 byte size + that many bytes
 *     u32  tensor version (0)
 *     i32  TensorDesc byte length, then the TensorDesc (data_type, dims)
 *     raw  numel * dtype size bytes, little-endian
 *
 * The dtype and dims must be the VarDesc's; any mismatch, a short record
 * or bytes left over is an error naming the var. A parameter becomes a
 * Program var (widened to its dy dtype) when an op first reads it, which
 * is what pd_in does for an op's input slot.
 */
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* parameters and inputs                                               */
/* ------------------------------------------------------------------ */

pd_param *pd_find_param(pd_ctx *c, const char *name) {
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

dy_status pd_materialize(pd_ctx *c, pd_param *pm, int *var) {
  if (pm->var >= 0) {
    *var = pm->var;
    return DY_OK;
  }
  dy_type t = {.rank = pm->rank};
  if (!pd_dtype_to_dy(pm->pd_dtype, &t.dtype))
    return pd_fail(c, DY_STATUS_UNSUPPORTED, "parameter '%s' is %s, which dy2stc lacks",
                   pm->name, pd_dtype_name(pm->pd_dtype));
  memcpy(t.shape, pm->dims, sizeof pm->dims);
  if (c->no_params) { /* typed, without data: for show */
    int id = dy_program_add_var(c->p, pm->name, &t);
    if (id < 0)
      return pd_fail(c, DY_STATUS_INTERNAL, "cannot add parameter '%s'", pm->name);
    c->p->vars[id]->persistable = true;
    pm->var = *var = id;
    return DY_OK;
  }
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
  pd_param *pm = pd_find_param(c, name);
  if (pm)
    return pd_materialize(c, pm, var);
  return pd_fail(c, DY_STATUS_FORMAT, "input %s '%s' is neither a feed, a parameter nor "
                 "the output of an earlier op", slot, name);
}

dy_status pd_in(pd_ctx *c, const char *slot, int i, int *var) {
  PD_TRY(pd_in_opt(c, slot, i, var));
  if (*var < 0)
    return pd_fail(c, DY_STATUS_FORMAT, "input %s[%d] is missing", slot, i);
  return DY_OK;
}


/* ------------------------------------------------------------------ */
/* the params stream                                                   */
/* ------------------------------------------------------------------ */

static int cmp_param(const void *a, const void *b) {
  return strcmp(((const pd_param *)a)->name, ((const pd_param *)b)->name);
}

bool pd_in_params(const PdVar *v) {
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
  /* the VarDesc must agree (a -1 there, and only -1, matches any size) */
  const PdTensorDesc *vt = pd_tensor_desc(vd);
  if (vt) {
    bool ok = vt->data_type == td->data_type && vt->n_dims == td->n_dims;
    for (size_t i = 0; ok && i < td->n_dims; i++)
      ok = vt->dims[i] == -1 || vt->dims[i] == td->dims[i];
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

dy_status pd_read_params(pd_ctx *c, const uint8_t *buf, size_t n) {
  int cap = 0;
  for (size_t i = 0; i < c->blk->n_vars; i++)
    cap += pd_in_params(c->blk->vars[i]);
  c->params = calloc((size_t)cap + 1, sizeof *c->params);
  if (!c->params)
    return pd_fail(c, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < c->blk->n_vars; i++)
    if (pd_in_params(c->blk->vars[i]))
      c->params[c->n_params++] = (pd_param){.name = c->blk->vars[i]->name, .var = -1};
  qsort(c->params, (size_t)c->n_params, sizeof *c->params, cmp_param);
  for (int i = 1; i < c->n_params; i++)
    if (strcmp(c->params[i - 1].name, c->params[i].name) == 0)
      return pd_fail(c, DY_STATUS_FORMAT, "var '%s' is declared twice", c->params[i].name);
  if (c->n_params && !buf && c->opts && c->opts->params_optional) {
    c->no_params = true; /* typed from the VarDescs, no data */
    for (int i = 0; i < c->n_params; i++) {
      pd_param *pm = &c->params[i];
      const PdTensorDesc *td = pd_tensor_desc(pd_var_desc(c, pm->name));
      if (!td || td->n_dims > DY_MAX_DIMS)
        return pd_fail(c, DY_STATUS_FORMAT, "var '%s' has no tensor VarDesc", pm->name);
      pm->pd_dtype = td->data_type;
      pm->rank = (int)td->n_dims;
      for (size_t k = 0; k < td->n_dims; k++)
        pm->dims[k] = td->dims[k];
    }
    return DY_OK;
  }
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
