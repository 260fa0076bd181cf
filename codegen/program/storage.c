/* storage.c - floor 3: where each var lives, decided once per var, and
 * the C expression that names its buffer:
 *   feed         the const input pointer argument of NAME_run
 *   persistable  its w_<name> array (one holding an infinity or a NaN: a
 *                union of its bit patterns, read as w_<name>.f)
 *   state        a persistable var an in-place op (DY_OPF_INPLACE: an
 *                optimizer's update) writes: (T *)(st + NAME_SOFF_<name>),
 *                st being the caller's state block; w_<name> then holds
 *                only its initial value, which NAME_state_init copies
 *   fetch        the output pointer argument (a fetch that is also a feed or
 *                a weight is copied into it at the end of NAME_run)
 *   alias_of     the storage of the var it aliases (followed to the end)
 *   otherwise    (T *)(mem + NAME_OFF_<root>), mem being the caller's arena
 * An arena buffer must fit the arena and be aligned for its dtype, and an
 * alias no larger than what it aliases. */
#include <stdio.h>

#include "cg_program.h"
/* Decide where var v lives. */
dy_status cg_resolve(cg_gen *g, int v, cg_storage *out) {
  const dy_program *p = g->p;
  int cur = v;
  for (int steps = 0; steps <= p->n_vars; steps++) {
    const dy_var *x = p->vars[cur];
    if (x->feed_index >= 0) {
      *out = (cg_storage){ST_FEED, cur};
    } else if (x->persistable) {
      *out = (cg_storage){g->state[cur] ? ST_STATE : ST_WEIGHT, cur};
    } else if (x->fetch_index >= 0) {
      *out = (cg_storage){ST_FETCH, cur};
    } else if (x->alias_of >= 0) {
      if (x->alias_of >= p->n_vars)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s': alias_of %d is not a var", x->name,
                            x->alias_of);
      if (p->vars[x->alias_of]->type.dtype != x->type.dtype)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' (%s) aliases '%s' of dtype %s", x->name,
                            dy_dtype_name(x->type.dtype),
                            p->vars[x->alias_of]->name,
                            dy_dtype_name(p->vars[x->alias_of]->type.dtype));
      cur = x->alias_of;
      continue;
    } else if (x->mem_offset >= 0) {
      *out = (cg_storage){ST_ARENA, cur};
    } else {
      return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                          "var '%s' has no storage: the memory plan set "
                          "neither mem_offset nor alias_of%s%s",
                          p->vars[v]->name, cur != v ? " for its alias '" : "",
                          cur != v ? p->vars[cur]->name : "");
    }
    if (out->kind == ST_ARENA) {
      /* x is the root; the alias chain shares its bytes. */
      int64_t need = cg_var_bytes(g, p->vars[v]), have = cg_var_bytes(g, x);
      size_t align = dy_dtype_size(x->type.dtype);
      if (need > have)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' needs %lld bytes but aliases '%s' of "
                            "%lld bytes", p->vars[v]->name, (long long)need,
                            x->name, (long long)have);
      if (x->mem_offset + have > g->opt->arena_bytes)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' at arena offset %lld (%lld bytes) "
                            "overruns the arena of %lld bytes",
                            x->name, (long long)x->mem_offset, (long long)have,
                            (long long)g->opt->arena_bytes);
      if (align && x->mem_offset % (int64_t)align != 0)
        return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                            "var '%s' at arena offset %lld is not aligned "
                            "for %s", x->name, (long long)x->mem_offset,
                            dy_dtype_name(x->type.dtype));
    }
    return DY_OK;
  }
  return dy_error_set(g->err, DY_STATUS_INVALID_ARGUMENT,
                      "var '%s': alias_of chain has a cycle", p->vars[v]->name);
}

/* C expression for var v's buffer: "x", "w_fc_w", "(float *)(mem + 64)". */
void cg_buffer_expr(cg_gen *g, int v, bool as_const, char *buf, size_t n) {
  const cg_storage *s = &g->st[v];
  const dy_var *x = g->p->vars[v];
  switch (s->kind) {
  case ST_FEED:
  case ST_FETCH:
    snprintf(buf, n, "%s", g->param[s->root]);
    break;
  case ST_WEIGHT:
    snprintf(buf, n, "%s%s", g->weight[s->root], g->bits[s->root] ? ".f" : "");
    break;
  case ST_STATE:
    snprintf(buf, n, "(%s%s *)(st + %s)", as_const ? "const " : "",
             dy_ctype(x->type.dtype), g->soff[s->root]);
    break;
  case ST_ARENA:
    snprintf(buf, n, "(%s%s *)(mem + %s)", as_const ? "const " : "",
             dy_ctype(x->type.dtype), g->off[s->root]);
    break;
  case ST_NONE:
    snprintf(buf, n, "0");
    break;
  }
}

/* Do the storages of vars a and b share bytes? */
bool cg_overlap(const cg_gen *g, int a, int b) {
  const cg_storage *sa = &g->st[a], *sb = &g->st[b];
  if (sa->root == sb->root)
    return true;
  if (sa->kind != ST_ARENA || sb->kind != ST_ARENA)
    return false; /* distinct state vars never share bytes */
  const dy_var *ra = g->p->vars[sa->root], *rb = g->p->vars[sb->root];
  /* an empty buffer counts as one byte: two at one address are the same
   * pointer to the compiler (restrict), whatever they hold */
  int64_t na = cg_var_bytes(g, ra), nb = cg_var_bytes(g, rb);
  int64_t a0 = ra->mem_offset, a1 = a0 + (na > 0 ? na : 1);
  int64_t b0 = rb->mem_offset, b1 = b0 + (nb > 0 ? nb : 1);
  return a0 < b1 && b0 < a1;
}
