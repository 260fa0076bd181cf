/* state.c - floor 3: a Program with state (ops that update persistable
 * vars in place: a training step's parameters and optimizer moments,
 * running statistics) keeps it in the caller's RAM. This file writes what
 * NAME.h declares of it (NAME_state, NAME_state_init, NAME_state_tensor,
 * and for a dy_train.h training step NAME_dropout_seeds and
 * NAME_train_step, the learning rate by value), their definitions in
 * NAME.c and the state's layout before NAME_run (NAME_SOFF_<var>). */
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
/* The feed index of a training Program's rank-0 f32 "learning_rate",
 * when its only fetch is a rank-0 f32 loss (dy_train.h); else -1. Such a
 * Program also gets NAME_train_step, the rate passed by value. */
int cg_train_lr_feed(const cg_gen *g) {
  const dy_program *p = g->p;
  if (g->state_bytes <= 0 || p->n_fetches != 1)
    return -1;
  const dy_var *loss = p->vars[p->fetches[0]];
  if (loss->type.rank != 0 || loss->type.dtype != DY_F32)
    return -1;
  for (int i = 0; i < p->n_feeds; i++) {
    const dy_var *v = p->vars[p->feeds[i]];
    if (strcmp(v->name, "learning_rate") == 0 && v->type.rank == 0 && v->type.dtype == DY_F32)
      return i;
  }
  return -1;
}

/* The parameters of NAME_train_step: NAME_run's, the rate by value. */
static int train_step_params(cg_gen *g, char **args, int lr) {
  int n = cg_run_params(g, args);
  int k = 3 + lr; /* state, arena, batch, then the feeds */
  free(args[k]);
  args[k] = cg_xprintf("float %s", g->param_in[lr]);
  return n;
}

int cg_num_state(const cg_gen *g) {
  int n = 0;
  for (int i = 0; i < g->p->n_vars; i++)
    n += g->soff[i] != NULL;
  return n;
}

void cg_emit_state_decls(cg_gen *g, dy_buf *out) {
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out,
                "/* The state: every var the Program updates in place (parameters,\n"
                " * optimizer moments, running statistics), %s_NUM_STATE tensors in\n"
                " * %s_STATE_BYTES bytes of the caller's RAM, aligned to %s_STATE_ALIGN;\n"
                " * kept between calls. %s_state[i] describes tensor i. */\n"
                "extern const %s_tensor_info %s_state[]; /* %s_NUM_STATE */\n\n",
                U, U, U, L, L, L, U);
  dy_buf_printf(out,
                "/* Copies the initial values (const data in %s.c) into state.\n"
                " * Returns %s_OK or %s_ERR_ARG (NULL). */\n"
                "int %s_state_init(void *state);\n\n",
                L, U, U, L);
  dy_buf_printf(out,
                "/* State tensor i (0..%s_NUM_STATE-1) inside state, C order; NULL for\n"
                " * another i. Its dtype is %s_state[i].dtype (0: float). */\n"
                "void *%s_state_tensor(void *state, int i);\n\n",
                U, L, L);
  int lr = cg_train_lr_feed(g);
  if (lr < 0)
    return;
  dy_buf_printf(out,
                "/* The training-mode dropout ops' seeds inside state (%s_N_DROPOUT_SEEDS\n"
                " * of them; NULL when there are none). %s_state_init sets the\n"
                " * compiled seeds, so every step drops the same elements until the\n"
                " * caller sets new ones: to train as `dy2stc train` does, set\n"
                " * seeds[k] = the next u64 of its generator (after the epoch's\n"
                " * shuffle), k = 0, 1, ..., before every step (the generated\n"
                " * trainer's main.c does). A forward dropout and its gradient\n"
                " * share a seed. */\n"
                "uint64_t *%s_dropout_seeds(void *state);\n\n",
                U, L, L);
  dy_buf_printf(out,
                "/* One training step: forward, loss, backward and the optimizer's\n"
                " * update of the state, as %s_run with the learning rate passed by\n"
                " * value; *%s gets the loss before the update. Returns %s_OK,\n"
                " * %s_ERR_BATCH, %s_ERR_ARG or %s_ERR_INDEX (a label out of range:\n"
                " * the state is then partly updated or not at all). */\n",
                L, g->param_out[0], U, U, U, U);
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = train_step_params(g, args, lr);
  char *head = cg_xprintf("int %s_train_step", L);
  if (!cg_args_ok(args, n) || !head)
    out->oom = true;
  else
    cg_put_wrapped(out, "", head, args, n, ";\n\n");
  free(head);
  cg_free_args(args, n);
}

/* state_init, the state table's accessor and NAME_train_step. */
void cg_emit_state_defs(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const char *L = g->lower, *U = g->upper;
  dy_buf_printf(out, "int %s_state_init(void *state) {\n", L);
  dy_buf_printf(out, "  unsigned char *st = (unsigned char *)state;\n"
                     "  if (!state)\n    return %s_ERR_ARG;\n", U);
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->soff[i])
      continue;
    const dy_var *v = p->vars[i];
    dy_buf_printf(out, "  for (int64_t i = 0; i < %lld; i++)\n    ((%s *)(st + %s))[i] = %s%s[i];\n",
                  (long long)dy_type_numel(&v->type), dy_ctype(v->type.dtype), g->soff[i],
                  g->weight[i], g->bits[i] ? ".f" : "");
  }
  for (int k = 0; k < g->n_seeds; k++)
    dy_buf_printf(out, "  ((uint64_t *)(st + %s_SEEDS_OFF))[%d] = %lluull;\n", U, k,
                  (unsigned long long)g->seed_init[k]);
  dy_buf_printf(out, "  return %s_OK;\n}\n\n", U);
  dy_buf_printf(out, "void *%s_state_tensor(void *state, int i) {\n", L);
  dy_buf_printf(out, "  static const int64_t offset[%s_NUM_STATE] = {", U);
  int k = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->soff[i])
      dy_buf_printf(out, "%s%s", k++ ? ", " : "", g->soff[i]);
  dy_buf_printf(out, "};\n"
                     "  if (!state || i < 0 || i >= %s_NUM_STATE)\n    return NULL;\n"
                     "  return (unsigned char *)state + offset[i];\n}\n\n", U);
  int lr = cg_train_lr_feed(g);
  if (lr < 0)
    return;
  if (g->n_seeds > 0)
    dy_buf_printf(out,
                  "uint64_t *%s_dropout_seeds(void *state) {\n"
                  "  return state ? (uint64_t *)((unsigned char *)state + %s_SEEDS_OFF) : NULL;\n"
                  "}\n\n", L, U);
  else
    dy_buf_printf(out,
                  "uint64_t *%s_dropout_seeds(void *state) {\n"
                  "  (void)state;\n  return NULL; /* no training-mode dropout */\n}\n\n", L);
  char *args[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS], *cargs[3 + 2 * DY_MAX_FEEDS + DY_MAX_SYMS];
  int n = train_step_params(g, args, lr), nc = 0;
  cargs[nc++] = cg_xstrdup("state");
  cargs[nc++] = cg_xstrdup("arena");
  cargs[nc++] = cg_xstrdup("batch");
  for (int i = 0; i < p->n_feeds; i++)
    cargs[nc++] = i == lr ? cg_xprintf("&%s", g->param_in[i]) : cg_xstrdup(g->param_in[i]);
  for (int i = 0; i < p->n_fetches; i++)
    cargs[nc++] = cg_xstrdup(g->param_out[i]);
  char *head = cg_xprintf("int %s_train_step", L), *call = cg_xprintf("return %s_run", L);
  if (!cg_args_ok(args, n) || !cg_args_ok(cargs, nc) || !head || !call) {
    out->oom = true;
  } else {
    cg_put_wrapped(out, "", head, args, n, " {\n");
    cg_put_wrapped(out, "  ", call, cargs, nc, ";\n}\n\n");
  }
  free(head);
  free(call);
  cg_free_args(args, n);
  cg_free_args(cargs, nc);
}

/* The state layout before NAME_run: NAME_SOFF_<var>, bytes into state. */
void cg_emit_state_layout(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  int w = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->soff[i] && (int)strlen(g->soff[i]) > w)
      w = (int)strlen(g->soff[i]);
  dy_buf_printf(out, "/* state layout: byte offset of each tensor (%lld bytes in all) */\n",
                (long long)g->state_bytes);
  char ts[256];
  for (int i = 0; i < p->n_vars; i++) {
    if (!g->soff[i])
      continue;
    dy_buf_printf(out, "#define %-*s %8lld /* %8lld  ", w, g->soff[i],
                  (long long)g->state_off[i], (long long)cg_var_bytes(g, p->vars[i]));
    dy_buf_put_comment(out, p->vars[i]->name);
    dy_buf_printf(out, " %s */\n", dy_type_str(&p->vars[i]->type, ts, sizeof ts));
  }
  if (g->n_seeds > 0)
    dy_buf_printf(out, "#define %s_SEEDS_OFF %lld /* the %d dropout seeds, u64 */\n", g->upper,
                  (long long)g->seeds_off, g->n_seeds);
  dy_buf_putc(out, '\n');
}
