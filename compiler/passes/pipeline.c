/* pipeline.c - the pass manager (the compile pipeline is
 * ../driver/compile.c): the top of compiler/passes/, calling every pass;
 * the helpers the passes share are below them, in pass_util.c.
 *
 * The optimising pipeline is this list, one pass per line, run in order
 * and repeated while any pass still changes the Program (at most four
 * rounds; a rewrite usually exposes the next one, as folding after
 * simplification does):
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_passes.h"

const dy_pass dy_passes[] = {
    /* identities away: x*1, x+0, view chains, transpose pairs, eval dropout */
    {"simplify", "remove identities, merge view and transpose chains", dy_pass_simplify},
    /* evaluate ops whose inputs are all constant, with the runtime's kernels */
    {"fold", "evaluate ops whose inputs are all constant", dy_pass_fold},
    /* a cond on a constant becomes its branch; a while never entered goes */
    {"fold-control", "inline a cond with a constant predicate, drop a while "
     "whose condition is constant false", dy_pass_fold_control},
    /* one op per (kind, inputs, attributes) */
    {"cse", "merge ops that compute the same value", dy_pass_cse},
    /* a while's loop-invariant ops (pure, cannot fail) run once, before it */
    {"hoist", "move loop-invariant ops out of a while, to before it", dy_pass_hoist},
    /* inference batch norms folded into the conv / linear weights before */
    {"fuse-bn", "fold batch norms into the preceding conv or matmul weights",
     dy_pass_fuse_bn},
    /* x * sigmoid(x) -> silu, x * hardsigmoid(x), x * relu6(x + 3) / 6 ->
     * hard_swish (fuse_swish.c), before fuse-conv takes them as acts */
    {"fuse-swish", "recognise x*sigmoid(x) as silu and x*hardsigmoid(x), x*relu6(x+3)/6 "
     "as hard_swish", dy_pass_fuse_swish},
    /* a transpose of the last two dims feeding a matmul becomes its flag */
    {"fuse-transpose", "fold transposes into matmul flags", dy_pass_fuse_transpose},
    /* matmul, scale, softmax, matmul of attention heads: one kernel */
    {"fuse-attention", "fuse attention (matmul, scale, softmax, matmul, the head "
     "transposes) into one kernel", dy_pass_fuse_attention},
    /* matmul + bias + activation: one kernel with an epilogue */
    {"fuse-matmul", "fuse matmul, bias add and activation", dy_pass_fuse_matmul},
    /* conv2d + bias + activation: one kernel with an epilogue */
    {"fuse-conv", "fuse conv2d, bias add and activation", dy_pass_fuse_conv},
    /* conv + residual add (+ activation): the add in the GEMM's epilogue */
    {"fuse-residual", "fuse a residual add and activation into the conv before",
     dy_pass_fuse_residual},
    /* a layer norm spelled out op by op (ONNX before opset 17): one op */
    {"fuse-layernorm", "fuse a layer norm written as reduce_mean, sub, pow, sqrt, div "
     "into one layer_norm", dy_pass_fuse_layernorm},
    /* chains of elementwise ops: one loop */
    {"fuse-elementwise", "fuse chains of elementwise ops into one loop",
     dy_pass_fuse_elementwise},
    /* depthwise conv + 1x1 conv: the depthwise output straight into the GEMM's panels
     * (before the kernel choices below, which would take the 1x1 conv) */
    {"fuse-dwpw", "fuse a depthwise conv with the 1x1 conv after it (MobileNet)",
     dy_pass_fuse_dwpw},
    /* the 1x1 expand conv before it too: MobileNetV2's inverted residual block */
    {"fuse-irb", "fuse the 1x1 expand conv into the fused_dwpw after it (MobileNetV2)",
     dy_pass_fuse_irb},
    /* convs of one output pixel (squeeze-and-excitation's): a GEMV, not 16-pixel panels
     * (before conv-small, which would take the small ones) */
    {"conv-gemv", "run convolutions of one output pixel (the whole input one window) as a "
     "matrix-vector product", dy_pass_conv_gemv},
    /* stride-1 convs of small depth: the direct kernel, no im2col */
    {"conv-small", "run stride-1 convolutions of small depth (C*kh*kw) on the direct kernel",
     dy_pass_conv_small},
    /* their max pool in the kernel's store loop: fused_conv2d_pool */
    {"fuse-pool", "fuse a max pool into the small-depth conv before it", dy_pass_fuse_pool},
    /* 3x3 stride-1 convs with enough channels: Winograd F(m x m, 3x3) */
    {"winograd", "run 3x3 stride-1 convolutions as Winograd F(2x2/4x4/6x6, 3x3), chosen per layer", dy_pass_winograd},
    /* drop ops whose results nobody reads, then unused vars */
    {"dce", "remove ops whose outputs are never used", dy_pass_dce},
};
const int dy_n_passes = (int)(sizeof dy_passes / sizeof dy_passes[0]);

enum { MAX_ROUNDS = 4 };

const dy_pass *dy_pass_find(const char *name) {
  for (int i = 0; i < dy_n_passes; i++)
    if (strcmp(dy_passes[i].name, name) == 0)
      return &dy_passes[i];
  return NULL;
}

static bool selects(const char *sel, const char *name) {
  return sel && (strcmp(sel, "all") == 0 || strcmp(sel, name) == 0);
}

/* Is name one of the comma-separated names of list? */
static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *s = list; s && *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
    if (strcspn(s, ",") == n && strncmp(s, name, n) == 0)
      return true;
  }
  return false;
}

static bool default_verify_each(void) {
  const char *e = getenv("DY2STC_VERIFY_EACH");
  if (e && *e)
    return strcmp(e, "0") != 0;
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

static dy_status dump(const dy_pass_options *o, int seq, const char *name,
                      const dy_program *p, dy_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%03d_%s.ir", o->dump_dir, seq, name);
  char *text = dy_program_to_text(p);
  if (!text)
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
  dy_status s = dy_write_file_atomic(path, text, strlen(text), err);
  free(text);
  return s;
}

static void print_program(const dy_pass_options *o, const char *when,
                          const char *name, const dy_program *p) {
  FILE *f = o->print_to ? o->print_to : stderr;
  fprintf(f, "// -----// IR %s %s //----- //\n", when, name);
  dy_program_print(p, f);
}

dy_status dy_run_pipeline(dy_program *p, const dy_pass_options *o, dy_error *err) {
  dy_pass_options none = {.verify_each = -1};
  if (!o)
    o = &none;
  bool verify = o->verify_each < 0 ? default_verify_each() : o->verify_each != 0;
  dy_status s;
  if ((s = dy_verify(p, err)))
    return dy_error_prefix(err, "IR invalid on input");
  if (o->dump_dir) {
    if (mkdir(o->dump_dir, 0777) != 0 && errno != EEXIST)
      return dy_error_set(err, DY_STATUS_IO, "%s: cannot create: %s", o->dump_dir,
                          strerror(errno));
    if ((s = dump(o, 0, "input", p, err)))
      return s;
  }
  if (o->opt_level <= 0)
    return DY_OK;
  int seq = 1;
  for (int round = 0; round < MAX_ROUNDS; round++) {
    bool any = false;
    for (int i = 0; i < dy_n_passes; i++) {
      const dy_pass *pass = &dy_passes[i];
      if (listed(o->disable, pass->name))
        continue;
      if (selects(o->print_before, pass->name))
        print_program(o, "before", pass->name, p);
      if (o->progress) {
        char phase[96];
        snprintf(phase, sizeof phase, "pass:%s", pass->name);
        o->progress(o->progress_ctx, phase, i, dy_n_passes);
      }
      bool changed = false;
      if (pass->run == dy_pass_winograd && o->winograd)
        s = dy_pass_winograd_tile(p, o->winograd, &changed, err);
      else
        s = pass->run(p, &changed, err);
      if (s)
        return dy_error_prefix(err, "pass '%s'", pass->name);
      if (verify && (s = dy_verify(p, err)))
        return dy_error_prefix(err, "IR invalid after pass '%s'", pass->name);
      if (selects(o->print_after, pass->name) && (changed || !o->print_after_change))
        print_program(o, "after", pass->name, p);
      if (o->dump_dir && (s = dump(o, seq++, pass->name, p, err)))
        return s;
      any |= changed;
    }
    if (!any)
      break;
  }
  return DY_OK;
}
