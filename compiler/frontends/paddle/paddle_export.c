/* paddle_export.c - the Paddle exporter's dispatcher: a Program as a
 * PaddlePaddle inference model, the ProgramDesc (`.pdmodel`) and the
 * combined params stream (`.pdiparams`), the layout paddle.jit.save writes
 * and paddle.c reads. On top of the exporters it calls (paddle_internal.h
 * lists the files from the top down).
 *
 * Block 0 only: a VarDesc per var, feed ops (col = feed position), one
 * Paddle op per op of the Program, fetch ops. Each op is written through
 * its row of the op table (paddle_table.c: the first row naming the op
 * that exports), as the Paddle op that paddle.c imports back to the very
 * same op, so export then import gives the same Program, locations aside.
 * The rows' exporters refuse what Paddle cannot say the same way
 * (batch_norm and dropout in train mode, a matmul of a 1-D operand, a
 * slice with steps, unsqueeze axes out of order, a gather index not 1-D).
 *
 * Anything else (control flow, fused ops, training ops, ops without a
 * row) is an error naming the op. Persistable vars go to the params
 * stream in strcmp order of names; a trainable one has stop_gradient false.
 */
#include <stdio.h>
#include <string.h>

#include "paddle_internal.h"

/* ---- the params stream ---- */

typedef struct {
  uint8_t *b;
  size_t n, cap;
  bool oom;
} wbuf;

static void w_put(wbuf *w, const void *p, size_t n) {
  if (w->oom)
    return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->n + n)
      cap *= 2;
    uint8_t *nb = realloc(w->b, cap);
    if (!nb) {
      w->oom = true;
      return;
    }
    w->b = nb;
    w->cap = cap;
  }
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void w_u32(wbuf *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  w_put(w, b, 4);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp((*(const dy_var *const *)a)->name, (*(const dy_var *const *)b)->name);
}

static dy_status write_params(pdx_ctx *x, wbuf *w) {
  const dy_program *p = x->p;
  const dy_var **pv = malloc(sizeof *pv * (size_t)(p->n_vars + 1));
  if (!pv)
    return dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  int n = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->persistable)
      pv[n++] = p->vars[i];
  qsort(pv, (size_t)n, sizeof *pv, cmp_names);
  for (int i = 0; i < n; i++) {
    const dy_var *v = pv[i];
    PdTensorDesc *td = pdx_tdesc(x, &v->type);
    if (!td)
      break;
    size_t len = protobuf_c_message_get_packed_size(&td->base);
    uint8_t *tb = pdx_alloc(x, len);
    if (!tb)
      break;
    protobuf_c_message_pack(&td->base, tb);
    w_u32(w, 0);            /* version */
    w_u32(w, 0), w_u32(w, 0); /* u64 LoD level count: 0 */
    w_u32(w, 0);            /* tensor version */
    w_u32(w, (uint32_t)len);
    w_put(w, tb, len);
    w_put(w, v->data, (size_t)dy_type_numel(&v->type) * dy_dtype_size(v->type.dtype));
  }
  free(pv);
  return x->oom || w->oom ? dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

/* ---- the whole model ---- */

static dy_status build(pdx_ctx *x, PdProgram *prog, PdBlock *b) {
  const dy_program *p = x->p;
  if (p->n_blocks > 1)
    return dy_error_set(x->err, DY_STATUS_UNSUPPORTED, "export to Paddle: the Program has "
                        "control flow (sub-blocks), which the exporter does not write yet");
  for (int i = 0; i < p->n_vars; i++)
    if (p->vars[i]->type.dtype >= DY_DTYPE_COUNT)
      return dy_error_set(x->err, DY_STATUS_UNSUPPORTED, "export to Paddle: var '%s'",
                          p->vars[i]->name);
  pdx_var(x, b, "feed", PD_FEED_MINIBATCH, NULL)->persistable = true;
  pdx_var(x, b, "fetch", PD_FETCH_LIST, NULL)->persistable = true;
  for (int i = 0; i < p->n_vars && !x->oom; i++) {
    const dy_var *v = p->vars[i];
    PdVar *d = pdx_var(x, b, v->name, PD_LOD_TENSOR, &v->type);
    if (d && v->persistable) {
      d->has_persistable = d->persistable = true;
      d->has_stop_gradient = true;
      d->stop_gradient = !v->trainable;
    }
    if (d && v->feed_index >= 0)
      d->has_need_check_feed = d->need_check_feed = true;
  }
  for (int i = 0; i < p->n_feeds; i++) {
    PdOp *op = pdx_op(x, b, "feed");
    pdx_arg(x, op, false, "X", "feed");
    pdx_arg(x, op, true, "Out", p->vars[p->feeds[i]]->name);
    pdx_at_i(x, op, "col", i);
  }
  /* each op as the Paddle op of its row in the op table */
  const dy_block *blk = p->blocks[0];
  for (int i = 0; i < blk->n_ops; i++) {
    const dy_op *o = blk->ops[i];
    const pd_op_def *d = pd_op_def_for(dy_op_name(o->kind));
    if (o->n_outputs != 1 || dy_op_has(o, DY_OPF_FUSED | DY_OPF_INPLACE) || !d)
      return pdx_unsupported(x, o, "the op %s has no Paddle counterpart here",
                             dy_op_name(o->kind));
    PD_TRY(pd_export_row(x, b, o, d));
  }
  for (int i = 0; i < p->n_fetches; i++) {
    PdOp *op = pdx_op(x, b, "fetch");
    pdx_arg(x, op, false, "X", p->vars[p->fetches[i]]->name);
    pdx_arg(x, op, true, "Out", "fetch");
    pdx_at_i(x, op, "col", i);
  }
  Paddle__Framework__Proto__Version *ver = pdx_alloc(x, sizeof *ver);
  if (ver) {
    paddle__framework__proto__version__init(ver);
    ver->has_version = true;
    ver->version = 2004000; /* the ProgramDesc layout of Paddle 2.x */
    prog->version = ver;
  }
  return x->oom ? dy_error_set(x->err, DY_STATUS_OUT_OF_MEMORY, "out of memory") : DY_OK;
}

dy_status dy_paddle_save_mem(const dy_program *p, uint8_t **model, size_t *model_n,
                             uint8_t **params, size_t *params_n, dy_error *err) {
  *model = *params = NULL;
  *model_n = *params_n = 0;
  pdx_ctx x = {.err = err, .p = p};
  PdProgram prog;
  PdBlock *b = pdx_alloc(&x, sizeof *b);
  paddle__framework__proto__program_desc__init(&prog);
  dy_status s = b ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  if (!s) {
    paddle__framework__proto__block_desc__init(b);
    b->has_idx = b->has_parent_idx = true;
    b->idx = 0;
    b->parent_idx = -1;
    pdx_push(&x, &prog.n_blocks, (void ***)&prog.blocks, b);
    s = build(&x, &prog, b);
  }
  wbuf w = {0};
  if (!s)
    s = write_params(&x, &w);
  if (!s) {
    size_t n = paddle__framework__proto__program_desc__get_packed_size(&prog);
    *model = malloc(n ? n : 1);
    if (!*model)
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
    else
      *model_n = paddle__framework__proto__program_desc__pack(&prog, *model);
  }
  pdx_free(&x);
  if (s) {
    free(*model);
    free(w.b);
    *model = NULL;
    *model_n = 0;
    return s;
  }
  *params = w.b ? w.b : malloc(1);
  *params_n = w.n;
  return *params ? DY_OK : dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
}

dy_status dy_paddle_save(const dy_program *p, const char *prefix, dy_error *err) {
  uint8_t *m, *pa;
  size_t mn, pn;
  PD_TRY(dy_paddle_save_mem(p, &m, &mn, &pa, &pn, err));
  char mp[4200], pp[4200];
  snprintf(mp, sizeof mp, "%s.pdmodel", prefix);
  snprintf(pp, sizeof pp, "%s.pdiparams", prefix);
  /* params first: a model file never names params that are not there */
  dy_status s = dy_write_file_atomic(pp, pa, pn, err);
  if (!s && (s = dy_write_file_atomic(mp, m, mn, err)))
    remove(pp);
  free(m);
  free(pa);
  return s;
}

