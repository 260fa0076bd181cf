/* paddle_table.c - the Paddle op table: one row per Paddle op type, read
 * by the importer (paddle.c: the row of an OpDesc's type) and by the
 * exporter (paddle_export.c: the row that writes an op of the Program).
 * A row gives the Paddle type, the op of the op table (ops.def) it is, and
 * how it maps (paddle_internal.h, pd_op_def):
 *
 *   XO   X -> Out, one to one; the attributes by name: (Paddle's name,
 *        the op's, how Paddle stores it, Paddle's default) and the input
 *        slots that would give one as a tensor (paddle_family.c)
 *   EW   X, Y -> Out with Paddle's elementwise axis (paddle_family.c)
 *   OWN  its own importer and exporter in a family file (paddle_nn.c,
 *        paddle_shape.c, paddle_math.c, paddle_ext.c); without an
 *        exporter the row is import only (an older spelling, a fused or
 *        composite Paddle op)
 *
 * So a one-to-one Paddle op is one row here, both ways. Export writes an
 * op through the first row naming it that exports; the import-only rows
 * of the same op (reshape, depthwise_conv2d, relu6, ...) come after or
 * lack an exporter. Ops with a known reason not to import (LoD sequences,
 * NMS, custom and quantization ops) are named by pd_unsupported_reason,
 * checked before any op is imported.
 */
#include <string.h>

#include "paddle_internal.h"

/* The row forms: */
#define EW(t, op) {.type = t, .dy = op, .family = PD_FAM_EW}
#define XO(t, op) {.type = t, .dy = op, .family = PD_FAM_XO}
#define XOA(t, op, ...) {.type = t, .dy = op, .family = PD_FAM_XO, .attrs = {__VA_ARGS__}}
/* an XO row whose own importer checks the op first */
#define XOC(t, op, imp, ...) \
  {.type = t, .dy = op, .family = PD_FAM_XO, .import = imp, .attrs = {__VA_ARGS__}}
#define OWN(t, op, imp, exp) {.type = t, .dy = op, .family = PD_FAM_OWN, .import = imp, .export = exp}
/* a *2 shape op: its own importer (and exporter check, NULL: none), the
 * family's export with the XShape output; and its import-only v1 */
#define XS(t, op, imp, exp, ...)                                                              \
  {.type = t, .dy = op, .family = PD_FAM_XO, .import = imp, .export = exp, .xshape = true,   \
   .attrs = {__VA_ARGS__}}
#define XS1(t, op, imp, ...) \
  {.type = t, .dy = op, .family = PD_FAM_OWN, .import = imp, .attrs = {__VA_ARGS__}}
/* An attribute (Paddle's name, the op's, Paddle's kind, default), and one
 * with the input slots that would give it as a tensor. */
#define A(p, d, k, v) {.pd = p, .dy = d, .kind = k, .value = v}
#define AT(p, d, k, v, ...) {.pd = p, .dy = d, .kind = k, .value = v, .tensor = {__VA_ARGS__}}
#define I PD_A_INT
#define F PD_A_FLOAT
#define B PD_A_BOOLEAN
#define IS PD_A_INTS

static const pd_op_def table[] = {
    /* elementwise: Paddle's axis, numpy broadcasting */
    EW("elementwise_add", "add"),
    EW("elementwise_sub", "sub"),
    EW("elementwise_mul", "mul"),
    EW("elementwise_div", "div"),
    EW("elementwise_pow", "pow"),
    EW("elementwise_max", "maximum"),
    EW("elementwise_min", "minimum"),
    EW("equal", "equal"),
    EW("greater_than", "greater"),
    EW("less_than", "less"),
    /* activations and unary math of the same meaning */
    XO("relu", "relu"),
    XO("sigmoid", "sigmoid"),
    XO("tanh", "tanh"),
    XO("exp", "exp"),
    XO("sqrt", "sqrt"),
    XO("rsqrt", "rsqrt"),
    XO("reciprocal", "reciprocal"),
    XO("abs", "abs"),
    XO("log", "log"),
    XO("silu", "silu"),
    XO("erf", "erf"),
    XO("sin", "sin"),
    XO("cos", "cos"),
    XO("softsign", "softsign"),
    /* only with Paddle's constants (written by the exporter) */
    XOC("hard_swish", "hard_swish", pd_import_hard_swish,
        A("threshold", NULL, F, 6), A("scale", NULL, F, 6), A("offset", NULL, F, 3)),
    /* X -> Out with attributes */
    XOA("leaky_relu", "leaky_relu", A("alpha", "alpha", F, 0.02)),
    XOA("gelu", "gelu", A("approximate", "approximate", B, 0)),
    XOA("hard_sigmoid", "hard_sigmoid", A("slope", "slope", F, 0.2), A("offset", "offset", F, 0.5)),
    XOA("clip", "clip", AT("min", "min", F, 0, "Min"), AT("max", "max", F, 0, "Max")),
    XOC("scale", "scale", pd_import_scale, AT("scale", "scale", F, 1.0, "ScaleTensor"),
        A("bias", "bias", F, 0.0),
        A("bias_after_scale", "bias_after_scale", B, 1)),
    XOA("softmax", "softmax", A("axis", "axis", I, -1)),
    XOA("log_softmax", "log_softmax", A("axis", "axis", I, -1)),
    XOA("tile", "tile",
        AT("repeat_times", "repeat_times", IS, 0, "RepeatTimes", "repeat_times_tensor")),
    /* only without flatten; dtype is always int64 */
    XOC("arg_max", "argmax", pd_import_arg_max, A("axis", "axis", I, -1),
        A("keepdims", "keepdim", B, 0), A("flatten", NULL, B, 0), A("dtype", NULL, I, PD_INT64)),
    /* matrix products (paddle_math.c) */
    OWN("matmul_v2", "matmul", pd_import_matmul_v2, pd_export_matmul),
    OWN("matmul", "matmul", pd_import_matmul, NULL),
    OWN("mul", "matmul", pd_import_mul, NULL),
    /* convolution, pooling, normalisation (paddle_nn.c) */
    OWN("conv2d", "conv2d", pd_import_conv2d, pd_export_conv2d),
    OWN("depthwise_conv2d", "conv2d", pd_import_conv2d, NULL),
    OWN("conv2d_transpose", "conv2d_transpose", pd_import_conv2d_transpose, pd_export_conv2d),
    OWN("depthwise_conv2d_transpose", "conv2d_transpose", pd_import_conv2d_transpose, NULL),
    OWN("pool2d", "pool2d", pd_import_pool2d, pd_export_pool2d),
    OWN("batch_norm", "batch_norm", pd_import_batch_norm, pd_export_batch_norm),
    OWN("layer_norm", "layer_norm", pd_import_layer_norm, pd_export_norm),
    OWN("group_norm", "group_norm", pd_import_group_norm, pd_export_norm),
    OWN("dropout", "dropout", pd_import_dropout, pd_export_dropout),
    /* other ops with their own mapping (paddle_math.c) */
    OWN("relu6", "clip", pd_import_relu6, NULL),
    OWN("swish", "silu", pd_import_swish, NULL),
    OWN("pow", "pow", pd_import_pow, NULL),
    OWN("cast", "cast", pd_import_cast, pd_export_cast),
    OWN("where", "where", pd_import_where, pd_export_where),
    OWN("assign", NULL, pd_import_assign, NULL),
    OWN("fill_constant", "full", pd_import_fill_constant, pd_export_full),
    /* shapes (paddle_shape.c) */
    XS("reshape2", "reshape", pd_import_reshape, NULL, A("shape", "shape", IS, 0)),
    XS1("reshape", "reshape", pd_import_reshape, A("shape", "shape", IS, 0)),
    XS("transpose2", "transpose", pd_import_transpose, NULL, A("axis", "perm", IS, 0)),
    XS1("transpose", "transpose", pd_import_transpose, A("axis", "perm", IS, 0)),
    XS("flatten_contiguous_range", "flatten", pd_import_flatten_contiguous_range, NULL,
       A("start_axis", "start_axis", I, 1), A("stop_axis", "stop_axis", I, -1)),
    /* flatten(2): to 2-D at axis */
    OWN("flatten", "flatten", pd_import_flatten, NULL),
    OWN("flatten2", "flatten", pd_import_flatten, NULL),
    XS("squeeze2", "squeeze", pd_import_squeeze, NULL, A("axes", "axes", IS, 0)),
    XS1("squeeze", "squeeze", pd_import_squeeze, A("axes", "axes", IS, 0)),
    XS("unsqueeze2", "unsqueeze", pd_import_unsqueeze, pd_export_unsqueeze,
       AT("axes", "axes", IS, 0, "AxesTensor", "AxesTensorList")),
    XS1("unsqueeze", "unsqueeze", pd_import_unsqueeze,
        AT("axes", "axes", IS, 0, "AxesTensor", "AxesTensorList")),
    OWN("concat", "concat", pd_import_concat, pd_export_concat),
    OWN("stack", "concat", pd_import_stack, NULL),
    OWN("split", NULL, pd_import_split, NULL),
    OWN("slice", "slice", pd_import_slice, pd_export_slice),
    OWN("reduce_mean", "reduce_mean", pd_import_reduce, pd_export_reduce),
    OWN("reduce_sum", "reduce_sum", pd_import_reduce, pd_export_reduce),
    OWN("reduce_max", "reduce_max", pd_import_reduce, pd_export_reduce),
    OWN("reduce_min", "reduce_min", pd_import_reduce, pd_export_reduce),
    OWN("gather", "gather", pd_import_gather, pd_export_gather),
    OWN("lookup_table", "gather", pd_import_lookup_table, NULL),
    OWN("lookup_table_v2", "gather", pd_import_lookup_table_v2, NULL),
    /* composites, import only (paddle_ext.c) */
    OWN("fill_constant_batch_size_like", NULL, pd_import_fill_constant_batch_size_like, NULL),
    OWN("rnn", NULL, pd_import_rnn, NULL),
    OWN("prior_box", NULL, pd_import_prior_box, NULL),
    OWN("box_coder", NULL, pd_import_box_coder, NULL),
    /* detection heads, import only (paddle_det.c) */
    OWN("multiclass_nms", NULL, pd_import_multiclass_nms, NULL),
    OWN("multiclass_nms3", NULL, pd_import_multiclass_nms, NULL),
    OWN("yolo_box", NULL, pd_import_yolo_box, NULL),
    OWN("nearest_interp", NULL, pd_import_nearest_interp, NULL),
    OWN("nearest_interp_v2", NULL, pd_import_nearest_interp_v2, NULL),
    OWN("bilinear_interp", NULL, pd_import_bilinear_interp, NULL),
    OWN("bilinear_interp_v2", NULL, pd_import_bilinear_interp_v2, NULL),
    OWN("pixel_shuffle", NULL, pd_import_pixel_shuffle, NULL),
    /* LoD sequences, import only (paddle_lod.c) */
    OWN("sequence_pool", "sequence_pool", pd_import_sequence_pool, NULL),
    OWN("lstm", "lstm", pd_import_lstm, NULL),
    OWN("sequence_pad", "sequence_pad", pd_import_sequence_pad, NULL),
    OWN("sequence_mask", NULL, pd_import_sequence_mask, NULL),
    OWN("gru", "gru", pd_import_gru, NULL),
    OWN("crf_decoding", "crf_decoding", pd_import_crf_decoding, NULL),
    /* control flow and the ops around it, import only (paddle_control.c) */
    OWN("while", NULL, pd_import_while, NULL),
    OWN("conditional_block", NULL, pd_import_conditional_block, NULL),
    OWN("select_input", NULL, pd_import_select_input, NULL),
    OWN("logical_and", NULL, pd_import_logical, NULL),
    OWN("logical_or", NULL, pd_import_logical, NULL),
    OWN("logical_xor", NULL, pd_import_logical, NULL),
    OWN("logical_not", NULL, pd_import_logical, NULL),
    OWN("reduce_all", NULL, pd_import_reduce_bool, NULL),
    OWN("reduce_any", NULL, pd_import_reduce_bool, NULL),
    OWN("not_equal", NULL, pd_import_negated_compare, NULL),
    OWN("greater_equal", NULL, pd_import_negated_compare, NULL),
    OWN("less_equal", NULL, pd_import_negated_compare, NULL),
    OWN("tril_triu", NULL, pd_import_tril_triu, NULL),
    OWN("shape", NULL, pd_import_shape, NULL),
    OWN("one_hot_v2", NULL, pd_import_one_hot_v2, NULL),
    OWN("set_value", NULL, pd_import_set_value, NULL),
    OWN("assign_value", NULL, pd_import_assign_value, NULL),
};

const pd_op_def *pd_op_def_of(const char *type) {
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (strcmp(table[i].type, type) == 0)
      return &table[i];
  return NULL;
}

const pd_op_def *pd_op_def_for(const char *op) {
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    const pd_op_def *d = &table[i];
    if (d->dy && strcmp(d->dy, op) == 0 && (d->family != PD_FAM_OWN || d->export))
      return d;
  }
  return NULL;
}

dy_status pd_import_row(pd_ctx *c, const pd_op_def *d) {
  c->def = d;
  if (d->import)
    return d->import(c);
  return d->family == PD_FAM_EW ? pd_import_ew(c) : pd_import_xo(c);
}

dy_status pd_export_row(pdx_ctx *x, PdBlock *b, const dy_op *o, const pd_op_def *d) {
  if (d->export)
    return d->export(x, b, o, d);
  return d->family == PD_FAM_EW ? pd_export_ew(x, b, o, d) : pd_export_xo(x, b, o, d);
}

const char *pd_unsupported_reason(const char *type) {
  static const struct {
    const char *prefix;
    const char *why;
  } known[] = {
      {"sequence_", "LoD sequence ops are not supported (they read a LoD tensor's sequence "
                    "offsets; dy2stc's tensors are dense)"},
      {"lstm", "the LoD lstm op is not supported (it steps over a LoD tensor's sequences; "
               "dy2stc's tensors are dense)"},
      {"gru", "the LoD gru op is not supported (it steps over a LoD tensor's sequences; "
              "dy2stc's tensors are dense)"},
      {"crf_decoding", "crf_decoding is not supported (LoD sequences)"},
      {"gap", "the custom op 'gap' is not supported: it is a plugin (PD_BUILD_OP), not a "
              "Paddle op; give its kernel and shape rule with --custom-op gap=FILE.c"},
      {"fake_", "quantization ops (fake_quantize / fake_dequantize) are not supported"},
  };
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    size_t n = strlen(known[i].prefix);
    bool exact = strcmp(known[i].prefix, "gap") == 0; /* not "gather" */
    if (exact ? strcmp(type, known[i].prefix) == 0 : strncmp(type, known[i].prefix, n) == 0)
      return known[i].why;
  }
  return NULL;
}
