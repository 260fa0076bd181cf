/* dy_control.h - data-dependent control flow in the eager API: dy_cond and
 * dy_while (runtime/control.c). Included by dy_runtime.h.
 *
 * Eagerly they run the path the data takes. While a trace is recording
 * (dy_trace, dy_program_from_layer, dy_jit_save, dy_to_static) they record
 * a `cond` / `while` op whose sub-blocks hold both branches, or the loop's
 * condition and body (ir/ops_control.def): the branch not taken and the
 * loop are traced symbolically, so the Program keeps the control flow and
 * dy_item is never needed. Tensors of the enclosing code that a branch or
 * body reads (through ctx) become the op's captures by themselves.
 *
 *   // y = sum(x) > 0 ? relu(x) : -x
 *   static bool pos(void *ctx, dy_tensor **out) {
 *     out[0] = dy_relu((dy_tensor *)ctx);
 *     return out[0] != NULL;
 *   }
 *   static bool neg(void *ctx, dy_tensor **out) {
 *     out[0] = dy_neg((dy_tensor *)ctx);
 *     return out[0] != NULL;
 *   }
 *   ...
 *   dy_tensor *y;
 *   dy_cond(dy_greater(dy_reduce_sum(x, 0, NULL, false), zero), pos, neg, x, 1, &y);
 *
 *   // while (i < n) { i = i + 1; acc = acc * 2; }
 *   static dy_tensor *more(void *ctx, dy_tensor *const *c) {
 *     return dy_less(c[0], (dy_tensor *)ctx);
 *   }
 *   static bool step(void *ctx, dy_tensor *const *c, dy_tensor **next) {
 *     next[0] = dy_add(c[0], one);  next[1] = dy_add(c[1], c[1]);
 *     return next[0] && next[1];
 *   }
 *   ...
 *   dy_tensor *carried[2] = {i0, acc0};
 *   dy_while(more, step, n, 2, carried);   // carried[] now holds the results
 *
 * Rules:
 *  - A predicate (dy_cond's, or what the condition function returns) is a
 *    bool tensor of one element; anything else is an error.
 *  - Both branches return n_out tensors of the same types (dtype and shape,
 *    -1 dims alike); a loop's body returns n_carried tensors of the carried
 *    values' types (a loop-carried value keeps its type).
 *  - A tensor made inside a branch or body and used after it without being
 *    returned is an error at the line that uses it (while tracing; it is
 *    freed with the branch's scope unless the branch kept it).
 *  - While tracing, the functions may run more than once (the taken path
 *    eagerly, then each branch symbolically): they should only compute
 *    tensors from their arguments and ctx.
 *  - A loop running more than DY_WHILE_MAX_ITERATIONS trips is an error.
 *
 * Both return true on success. On error they return false, record the first
 * error with the caller's line (dy_last_error) and leave outs / carried
 * NULL. Results are owned like any op result (the innermost scope, else the
 * caller); what a branch or body makes and does not return is freed.
 */
#ifndef DY_CONTROL_H
#define DY_CONTROL_H

/* A branch: writes its n_out results to out; false on error. */
typedef bool (*dy_branch_fn)(void *ctx, dy_tensor **out);
/* A loop's condition: a bool tensor of one element from the carried
 * values (NULL on error). */
typedef dy_tensor *(*dy_loop_cond_fn)(void *ctx, dy_tensor *const *carried);
/* A loop's body: writes the next n_carried values to next; false on error. */
typedef bool (*dy_loop_body_fn)(void *ctx, dy_tensor *const *carried,
                                dy_tensor **next);

bool dy_cond_at(dy_tensor *pred, dy_branch_fn then_fn, dy_branch_fn else_fn,
                void *ctx, int n_out, dy_tensor **outs, dy_srcloc loc);
#define dy_cond(pred, then_fn, else_fn, ctx, n_out, outs) \
  dy_cond_at((pred), (then_fn), (else_fn), (ctx), (n_out), (outs), DY_HERE)

/* carried: in, the initial values; out, the final ones. */
bool dy_while_at(dy_loop_cond_fn cond_fn, dy_loop_body_fn body_fn, void *ctx,
                 int n_carried, dy_tensor **carried, dy_srcloc loc);
#define dy_while(cond_fn, body_fn, ctx, n_carried, carried) \
  dy_while_at((cond_fn), (body_fn), (ctx), (n_carried), (carried), DY_HERE)

#endif /* DY_CONTROL_H */
