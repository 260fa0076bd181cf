/* test_paddle_det.c - the Paddle detection ops imported from a ProgramDesc
 * built here (paddle_write.c's builders), run on the executor and a
 * compiled executable against values computed independently: Paddle's
 * formulas (box_coder_op.h's EncodeCenterSize / DecodeCenterSize) in
 * float32 by a numpy script at test-writing time, their numbers below.
 *   - box_coder encode_center_size: normalized with the variance
 *     attribute; not normalized with PriorBoxVar [M, 4]
 *   - box_coder decode_center_size: axis 1 (the prior per row) not
 *     normalized with the attribute; axis 0 with PriorBoxVar
 *   - an unknown code type: its one-line error naming the op;
 *   - prior_box: flip, clip and max_sizes; min_max_aspect_ratios_order
 *     with two min sizes, an offset and explicit steps (Paddle's
 *     prior_box_kernel.cc in float32 by numpy; on the executor);
 *   - yolo_box: scale_x_y, clip_bbox, the cells below conf_thresh zero
 *     (executor and compiled). */
#include <stdlib.h>
#include <string.h>

#include "dy_compiler.h"
#include "dy_test.h"
#include "paddle_internal.h"

static const float target[8] = {0.1f, 0.2f, 0.5f, 0.6f, 0.3f, 0.1f, 0.9f, 0.4f};
static const float prior[12] = {0.0f, 0.0f, 0.4f, 0.4f, 0.2f, 0.3f, 0.8f, 0.7f,
                                0.1f, 0.1f, 0.3f, 0.5f};
static const float prior_var[12] = {0.1f, 0.1f, 0.2f, 0.2f, 0.2f, 0.2f, 0.1f, 0.1f,
                                    0.5f, 0.5f, 0.5f, 0.5f};
static const float deltas[24] = {0.1f, -0.2f, 0.3f, 0.1f,  0.0f, 0.5f, -0.4f, 0.2f,
                                 -0.3f, 0.1f, 0.2f, -0.1f, 0.2f, 0.2f, -0.1f, 0.3f,
                                 0.4f, -0.1f, 0.1f, 0.0f,  0.1f, 0.3f, 0.0f, -0.2f};

/* numpy, Paddle's formulas in float32 (see the header) */
static const float enc_norm_attr[24] = {2.50000024f, 5.0f, 0.0f, 5.96046391e-07f, -3.33333302f, -2.5f, -2.02732587f, 5.96046391e-07f, 4.99999952f, 2.49999976f, 3.46573567f, 5.96046391e-07f, 10.000001f, 1.24999988f, 2.02732515f, -1.4384104f, 1.66666698f, -6.25000048f, -5.96046505e-07f, -1.43841016f, 19.9999981f, -1.25000024f, 5.49306011f, -1.4384104f};
static const float enc_unnorm_var[24] = {-2.85714269f, -2.14285707f, 0.0f, 5.96046391e-07f, -2.1875f, -2.14285731f, -1.33531392f, 1.19209278e-06f, -0.666666687f, -0.571428597f, 0.30830127f, 2.38418551e-07f, -0.714285433f, -3.21428561f, 0.66765666f, -0.370540023f, -1.24999988f, -2.67857122f, -5.96046505e-07f, -0.741080046f, -0.166666701f, -0.785714328f, 0.575363994f, -0.148216009f};
static const float dec_axis1_unnorm_attr[24] = {-0.0292856097f, -0.0421409011f, 0.457285643f, 0.386140823f, 0.0538185239f, 0.0414324999f, 0.346181393f, 0.498567462f, -0.0705674887f, 0.0278609395f, 0.386567473f, 0.400139093f, 0.247841001f, 0.284714401f, 0.816158891f, 0.771285534f, 0.247838914f, 0.286000013f, 0.880161047f, 0.68599999f, 0.216000021f, 0.36944741f, 0.815999985f, 0.714552641f};
static const float dec_axis0_var[24] = {-0.00836732984f, -0.0120402724f, 0.416367322f, 0.396040261f, 0.211763144f, 0.335959762f, 0.788236856f, 0.744040251f, 0.0594829097f, 0.129754141f, 0.280517131f, 0.510245919f, 0.011960268f, -0.00436732173f, 0.404039741f, 0.42036733f, 0.244984865f, 0.292000026f, 0.851015091f, 0.692000031f, 0.110000014f, 0.179032519f, 0.310000032f, 0.540967524f};

/* A ProgramDesc of one block holding the feed and fetch vars. */
static PdBlock *new_program(pdx_ctx *x, PdProgram *prog) {
  paddle__framework__proto__program_desc__init(prog);
  PdBlock *b = pdx_alloc(x, sizeof *b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  paddle__framework__proto__block_desc__init(b);
  b->has_idx = b->has_parent_idx = true;
  b->parent_idx = -1;
  pdx_push(x, &prog->n_blocks, (void ***)&prog->blocks, b);
  pdx_var(x, b, "feed", PD_FEED_MINIBATCH, NULL)->persistable = true;
  pdx_var(x, b, "fetch", PD_FETCH_LIST, NULL)->persistable = true;
  return b;
}

/* feed ops writing names[0..n) (columns 0..n-1), or fetch ops reading them */
static void io_ops(pdx_ctx *x, PdBlock *b, const char *kind, const char *const *names, int n) {
  bool feed = strcmp(kind, "feed") == 0;
  for (int i = 0; i < n; i++) {
    PdOp *op = pdx_op(x, b, kind);
    pdx_arg(x, op, false, "X", feed ? "feed" : names[i]);
    pdx_arg(x, op, true, "Out", feed ? names[i] : "fetch");
    pdx_at_i(x, op, "col", i);
  }
}

/* The packed bytes into *buf (malloc'd); frees what x holds. */
static size_t pack(pdx_ctx *x, PdProgram *prog, uint8_t **buf) {
  CU_ASSERT_FALSE_FATAL(x->oom);
  size_t n = paddle__framework__proto__program_desc__get_packed_size(prog);
  *buf = malloc(n);
  paddle__framework__proto__program_desc__pack(prog, *buf);
  pdx_free(x);
  return n;
}

typedef struct {
  const char *code;
  int64_t axis;
  bool normalized, var_input, var_attr;
  int64_t target_shape[3], prior_rows;
  const float *target, *want;
} coder_case;

/* A ProgramDesc: feeds TargetBox, PriorBox (and PriorBoxVar), one
 * box_coder, the fetch OutputBox; its packed bytes into *buf. */
static size_t coder_program(const coder_case *k, uint8_t **buf) {
  dy_error err = {0};
  pdx_ctx x = {.err = &err};
  PdProgram prog;
  PdBlock *b = new_program(&x, &prog);
  int tr = strcmp(k->code, "encode_center_size") == 0 ? 2 : 3;
  const char *names[3] = {"target", "prior", "prior_var"};
  int64_t m = k->prior_rows, out_shape[3] = {k->target_shape[0],
                                             tr == 2 ? m : k->target_shape[1], 4};
  pdx_var_td(&x, b, names[0], PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, tr, k->target_shape));
  for (int i = 1; i < 3; i++)
    pdx_var_td(&x, b, names[i], PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 2, (int64_t[]){m, 4}));
  pdx_var_td(&x, b, "out", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 3, out_shape));
  io_ops(&x, b, "feed", names, k->var_input ? 3 : 2);
  PdOp *op = pdx_op(&x, b, "box_coder");
  pdx_arg(&x, op, false, "TargetBox", "target");
  pdx_arg(&x, op, false, "PriorBox", "prior");
  if (k->var_input)
    pdx_arg(&x, op, false, "PriorBoxVar", "prior_var");
  pdx_arg(&x, op, true, "OutputBox", "out");
  pdx_at_s(&x, op, "code_type", k->code);
  pdx_at_b(&x, op, "box_normalized", k->normalized);
  pdx_at_i(&x, op, "axis", k->axis);
  pdx_at_floats(&x, op, "variance", (const float[]){0.1f, 0.1f, 0.2f, 0.2f}, k->var_attr ? 4 : 0);
  io_ops(&x, b, "fetch", (const char *[]){"out"}, 1);
  return pack(&x, &prog, buf);
}

/* The case imported, on the executor and compiled, against k->want. */
static void check_coder(const coder_case *k, const char *tag) {
  uint8_t *buf = NULL;
  size_t n = coder_program(k, &buf);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load_mem(buf, n, NULL, 0, tag, NULL, &p, &err), &err);
  free(buf);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  int tr = strcmp(k->code, "encode_center_size") == 0 ? 2 : 3;
  int64_t m = k->prior_rows, rows = tr == 2 ? m : k->target_shape[1];
  dy_tensor *in[3] = {dy_tensor_from_data(DY_F32, tr, k->target_shape, k->target),
                      dy_tensor_from_data(DY_F32, 2, (int64_t[]){m, 4}, prior),
                      dy_tensor_from_data(DY_F32, 2, (int64_t[]){m, 4}, prior_var)};
  dy_tensor *want = dy_tensor_from_data(DY_F32, 3, (int64_t[]){k->target_shape[0], rows, 4},
                                        k->want);
  int n_in = k->var_input ? 3 : 2;
  dy_tensor *got = NULL;
  DY_ASSERT_OK(dy_executor_run(p, in, n_in, &got, 1, &err), &err);
  CU_ASSERT_TRUE_FATAL(dy_type_equal(&got->type, &want->type));
  double e = dy_test_scaled_err(got, want);
  fprintf(stderr, "\n    %-28s executor scaled err %.3g", tag, e);
  CU_ASSERT(e <= 1e-6);
  /* compiled: the same values */
  char model[4096], exe[4096], dir[2048], cmd[16384], path[4096];
  snprintf(model, sizeof model, "%s/pdet_%s.dymodel", DY_BUILD_DIR, tag);
  snprintf(exe, sizeof exe, "%s/pdet_%s_exe", DY_BUILD_DIR, tag);
  snprintf(dir, sizeof dir, "%s/pdet_%s_out", DY_BUILD_DIR, tag);
  DY_ASSERT_OK(dy_model_save(p, model, &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' >/dev/null", DY2STC_PATH,
                                   model, exe), 0);
  int c = snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && '%s'", dir, dir, exe);
  for (int i = 0; i < n_in; i++) {
    snprintf(path, sizeof path, "%s_in%d.npy", dir, i);
    DY_ASSERT_OK(dy_npy_write(path, in[i], &err), &err);
    c += snprintf(cmd + c, sizeof cmd - (size_t)c, " '%s'", path);
  }
  snprintf(cmd + c, sizeof cmd - (size_t)c, " --output-dir '%s' >/dev/null", dir);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "%s", cmd), 0);
  dy_tensor *cg = NULL;
  snprintf(path, sizeof path, "%s/out.npy", dir);
  DY_ASSERT_OK(dy_npy_read(path, &cg, &err), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
  e = dy_test_scaled_err(cg, want);
  fprintf(stderr, "\n    %-28s compiled scaled err %.3g", tag, e);
  CU_ASSERT(e <= 1e-6);
  dy_tensor_free(cg);
  dy_tensor_free(got);
  dy_tensor_free(want);
  for (int i = 0; i < 3; i++)
    dy_tensor_free(in[i]);
  dy_program_free(p);
}

static void test_box_coder_encode(void) {
  check_coder(&(coder_case){"encode_center_size", 0, true, false, true, {2, 4}, 3, target,
                            enc_norm_attr}, "encode_norm_attr");
  check_coder(&(coder_case){"encode_center_size", 0, false, true, false, {2, 4}, 3, target,
                            enc_unnorm_var}, "encode_unnorm_var");
}

static void test_box_coder_decode(void) {
  check_coder(&(coder_case){"decode_center_size", 1, false, false, true, {2, 3, 4}, 2, deltas,
                            dec_axis1_unnorm_attr}, "decode_axis1_attr");
  check_coder(&(coder_case){"decode_center_size", 0, true, true, false, {2, 3, 4}, 3, deltas,
                            dec_axis0_var}, "decode_axis0_var");
}

static void test_box_coder_refused(void) {
  uint8_t *buf = NULL;
  size_t n = coder_program(&(coder_case){"decode_corner", 0, true, false, true, {2, 3, 4}, 3,
                                         deltas, dec_axis0_var}, &buf);
  dy_program *p = NULL;
  dy_error err = {0};
  CU_ASSERT_EQUAL(dy_paddle_load_mem(buf, n, NULL, 0, "bad", NULL, &p, &err),
                  DY_STATUS_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(box_coder -> out): box_coder decode_corner"));
  CU_ASSERT_PTR_NULL(p);
  free(buf);
}

/* numpy: min 8, max 16, aspect 2 with flip (1, 2, 1/2), clip: 4 priors per cell */
static const float pb_flip_clip[96] = {0.0333333351f, 0.0500000007f, 0.300000012f, 0.449999988f, 0.0f, 0.108578645f, 0.355228484f, 0.391421378f, 0.0723857656f, 0.0f, 0.260947585f, 0.532842755f, 0.0f, 0.0f, 0.355228484f, 0.532842755f, 0.366666675f, 0.0500000007f, 0.633333325f, 0.449999988f, 0.311438173f, 0.108578645f, 0.688561797f, 0.391421378f, 0.405719101f, 0.0f, 0.594280899f, 0.532842755f, 0.311438173f, 0.0f, 0.688561797f, 0.532842755f, 0.699999988f, 0.0500000007f, 0.966666639f, 0.449999988f, 0.644771516f, 0.108578645f, 1.0f, 0.391421378f, 0.739052474f, 0.0f, 0.927614212f, 0.532842755f, 0.644771516f, 0.0f, 1.0f, 0.532842755f, 0.0333333351f, 0.550000012f, 0.300000012f, 0.949999988f, 0.0f, 0.608578622f, 0.355228484f, 0.891421318f, 0.0723857656f, 0.467157274f, 0.260947585f, 1.0f, 0.0f, 0.467157274f, 0.355228484f, 1.0f, 0.366666675f, 0.550000012f, 0.633333325f, 0.949999988f, 0.311438173f, 0.608578622f, 0.688561797f, 0.891421318f, 0.405719101f, 0.467157274f, 0.594280899f, 1.0f, 0.311438173f, 0.467157274f, 0.688561797f, 1.0f, 0.699999988f, 0.550000012f, 0.966666639f, 0.949999988f, 0.644771516f, 0.608578622f, 1.0f, 0.891421318f, 0.739052474f, 0.467157274f, 0.927614212f, 1.0f, 0.644771516f, 0.467157274f, 1.0f, 1.0f};
/* numpy: min 8, 12, max 10, 20, aspect 2, 0.5 without flip,
 * min_max_aspect_ratios_order, offset 0.25, steps 9 x 11: 8 priors per cell */
static const float pb_order_step[192] = {-0.0583333336f, -0.0625f, 0.208333328f, 0.337500006f, -0.0740711987f, -0.0861067995f, 0.224071205f, 0.361106813f, -0.113561802f, -0.00392135372f, 0.263561815f, 0.278921366f, -0.019280903f, -0.145342708f, 0.169280916f, 0.420342743f, -0.125f, -0.162499994f, 0.275000006f, 0.4375f, -0.183198899f, -0.249798343f, 0.333198905f, 0.524798334f, -0.207842693f, -0.0746320486f, 0.357842714f, 0.349632055f, -0.0664213523f, -0.286764085f, 0.216421351f, 0.561764121f, 0.24166666f, -0.0625f, 0.508333325f, 0.337500006f, 0.225928798f, -0.0861067995f, 0.524071157f, 0.361106813f, 0.186438188f, -0.00392135372f, 0.563561797f, 0.278921366f, 0.280719101f, -0.145342708f, 0.469280899f, 0.420342743f, 0.174999997f, -0.162499994f, 0.574999988f, 0.4375f, 0.116801105f, -0.249798343f, 0.633198917f, 0.524798334f, 0.0921572968f, -0.0746320486f, 0.657842696f, 0.349632055f, 0.233578652f, -0.286764085f, 0.516421378f, 0.561764121f, 0.541666687f, -0.0625f, 0.808333337f, 0.337500006f, 0.525928795f, -0.0861067995f, 0.824071169f, 0.361106813f, 0.486438185f, -0.00392135372f, 0.863561809f, 0.278921366f, 0.580719113f, -0.145342708f, 0.769280851f, 0.420342743f, 0.474999994f, -0.162499994f, 0.875f, 0.4375f, 0.416801095f, -0.249798343f, 0.933198929f, 0.524798334f, 0.392157286f, -0.0746320486f, 0.957842708f, 0.349632055f, 0.533578634f, -0.286764085f, 0.81642139f, 0.561764121f, -0.0583333336f, 0.487500012f, 0.208333328f, 0.887499988f, -0.0740711987f, 0.463893235f, 0.224071205f, 0.911106765f, -0.113561802f, 0.546078622f, 0.263561815f, 0.828921318f, -0.019280903f, 0.404657274f, 0.169280916f, 0.970342755f, -0.125f, 0.387499988f, 0.275000006f, 0.987500012f, -0.183198899f, 0.300201654f, 0.333198905f, 1.07479835f, -0.207842693f, 0.475367934f, 0.357842714f, 0.899632096f, -0.0664213523f, 0.263235897f, 0.216421351f, 1.11176419f, 0.24166666f, 0.487500012f, 0.508333325f, 0.887499988f, 0.225928798f, 0.463893235f, 0.524071157f, 0.911106765f, 0.186438188f, 0.546078622f, 0.563561797f, 0.828921318f, 0.280719101f, 0.404657274f, 0.469280899f, 0.970342755f, 0.174999997f, 0.387499988f, 0.574999988f, 0.987500012f, 0.116801105f, 0.300201654f, 0.633198917f, 1.07479835f, 0.0921572968f, 0.475367934f, 0.657842696f, 0.899632096f, 0.233578652f, 0.263235897f, 0.516421378f, 1.11176419f, 0.541666687f, 0.487500012f, 0.808333337f, 0.887499988f, 0.525928795f, 0.463893235f, 0.824071169f, 0.911106765f, 0.486438185f, 0.546078622f, 0.863561809f, 0.828921318f, 0.580719113f, 0.404657274f, 0.769280851f, 0.970342755f, 0.474999994f, 0.387499988f, 0.875f, 0.987500012f, 0.416801095f, 0.300201654f, 0.933198929f, 1.07479835f, 0.392157286f, 0.475367934f, 0.957842708f, 0.899632096f, 0.533578634f, 0.263235897f, 0.81642139f, 1.11176419f};

/* One prior_box on Input [1, 8, 2, 3] and Image [1, 3, 20, 30] (both
 * fed), Boxes and Variances fetched; attrs set by set_attrs. */
static size_t prior_program(void (*set_attrs)(pdx_ctx *, PdOp *), uint8_t **buf) {
  dy_error err = {0};
  pdx_ctx x = {.err = &err};
  PdProgram prog;
  PdBlock *b = new_program(&x, &prog);
  pdx_var_td(&x, b, "feat", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 4, (int64_t[]){1, 8, 2, 3}));
  pdx_var_td(&x, b, "img", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 4, (int64_t[]){1, 3, 20, 30}));
  pdx_var_td(&x, b, "boxes", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 4, (int64_t[]){2, 3, -1, 4}));
  pdx_var_td(&x, b, "vars", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 4, (int64_t[]){2, 3, -1, 4}));
  const char *feeds[2] = {"feat", "img"}, *fetches[2] = {"boxes", "vars"};
  io_ops(&x, b, "feed", feeds, 2);
  PdOp *op = pdx_op(&x, b, "prior_box");
  pdx_arg(&x, op, false, "Input", "feat");
  pdx_arg(&x, op, false, "Image", "img");
  pdx_arg(&x, op, true, "Boxes", "boxes");
  pdx_arg(&x, op, true, "Variances", "vars");
  pdx_at_floats(&x, op, "variances", (const float[]){0.1f, 0.1f, 0.2f, 0.2f}, 4);
  set_attrs(&x, op);
  io_ops(&x, b, "fetch", fetches, 2);
  return pack(&x, &prog, buf);
}

static void flip_clip(pdx_ctx *x, PdOp *op) {
  pdx_at_floats(x, op, "min_sizes", (const float[]){8}, 1);
  pdx_at_floats(x, op, "max_sizes", (const float[]){16}, 1);
  pdx_at_floats(x, op, "aspect_ratios", (const float[]){2}, 1);
  pdx_at_b(x, op, "flip", true);
  pdx_at_b(x, op, "clip", true);
}

static void order_step(pdx_ctx *x, PdOp *op) {
  pdx_at_floats(x, op, "min_sizes", (const float[]){8, 12}, 2);
  pdx_at_floats(x, op, "max_sizes", (const float[]){10, 20}, 2);
  pdx_at_floats(x, op, "aspect_ratios", (const float[]){2, 0.5f}, 2);
  pdx_at_b(x, op, "min_max_aspect_ratios_order", true);
  pdx_at_f(x, op, "offset", 0.25);
  pdx_at_f(x, op, "step_w", 9);
  pdx_at_f(x, op, "step_h", 11);
}

/* Boxes [2, 3, priors, 4] equal to want (to 1e-6 of their range) and
 * Variances the four variances at every prior, on the executor. */
static void check_prior(void (*set_attrs)(pdx_ctx *, PdOp *), int64_t priors, const float *want) {
  uint8_t *buf = NULL;
  size_t n = prior_program(set_attrs, &buf);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load_mem(buf, n, NULL, 0, "prior", NULL, &p, &err), &err);
  free(buf);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *in[2] = {dy_tensor_new(DY_F32, 4, (int64_t[]){1, 8, 2, 3}),
                      dy_tensor_new(DY_F32, 4, (int64_t[]){1, 3, 20, 30})};
  dy_tensor *got[2] = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 2, got, 2, &err), &err);
  dy_tensor *w = dy_tensor_from_data(DY_F32, 4, (int64_t[]){2, 3, priors, 4}, want);
  CU_ASSERT_TRUE_FATAL(dy_type_equal(&got[0]->type, &w->type));
  CU_ASSERT(dy_test_scaled_err(got[0], w) <= 1e-6);
  CU_ASSERT_TRUE_FATAL(dy_type_equal(&got[1]->type, &w->type));
  const float var[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  for (int64_t i = 0; i < 2 * 3 * priors * 4; i++)
    CU_ASSERT_EQUAL(((const float *)got[1]->data)[i], var[i % 4]);
  for (int i = 0; i < 2; i++) {
    dy_tensor_free(got[i]);
    dy_tensor_free(in[i]);
  }
  dy_tensor_free(w);
  dy_program_free(p);
}

static void test_prior_box(void) {
  check_prior(flip_clip, 4, pb_flip_clip);
  check_prior(order_step, 8, pb_order_step);
}

/* yolo_box: numpy (Paddle's yolo_box_kernel.cc in float32, seeded X in
 * [-2, 2)): N 2, anchors (10, 13), (16, 30), class_num 2, H 2, W 3,
 * downsample_ratio 8, conf_thresh 0.5, scale_x_y 1.05, clip_bbox;
 * ImgSize (16, 24) and (20, 30). */
static const float yb_x[168] = {-1.69476688f, 1.11967516f, -0.246363074f, 0.893860698f, 1.9119581f, 0.153983489f, 0.00448185485f, -1.71179545f, -0.92624408f, -0.00046999671f, 0.716919959f, 1.21495616f, -0.476235479f, -1.73625457f, -0.847417593f, 1.63837409f, -1.14645863f, -0.191504151f, 1.72482407f, -1.90040314f, 0.402195662f, 1.80051804f, -1.07878852f, 0.193959683f, 1.63651347f, -1.46732223f, 0.0936503261f, 1.00163949f, 0.676052988f, -0.128988564f, -1.18060362f, -0.0369364433f, -0.510461271f, -0.0903953835f, -0.536438465f, 1.35167193f, 1.07458997f, -0.744021297f, 0.290501326f, -0.895803809f, -0.188628271f, -0.588086545f, 0.629597843f, -0.518595695f, -0.163628086f, 0.877296507f, -0.348032683f, 1.62569308f, -1.27819347f, 0.964475513f, -0.310503811f, -0.294185698f, 0.537519455f, 0.0916248038f, -0.340456098f, -1.9942925f, -1.63095057f, 0.837577581f, 0.097382389f, 0.784641862f, 1.82187331f, 0.731655419f, -1.78748524f, -0.76458925f, 0.370378762f, -1.05951834f, 1.85988402f, 1.78019285f, 1.39360356f, -0.110704012f, 1.36590683f, -1.47555745f, -0.765065372f, -0.148014426f, 0.967388809f, -0.056699086f, -1.45249557f, -0.625853896f, -0.702295303f, -0.798324406f, -1.33799446f, -0.340392917f, -0.207517371f, 1.09960151f, 1.18556285f, 0.0895605087f, -0.157478809f, 1.11285436f, 1.54915583f, 0.699675083f, 1.20191622f, 1.75644541f, -1.83737671f, 1.50268686f, -0.893747687f, -0.0969420001f, 1.18704379f, 0.868968904f, -1.41140974f, 0.634993017f, -1.7229917f, -0.571717501f, 1.25131822f, -0.289180666f, 0.399417758f, 0.912645161f, 1.28491044f, 1.04206049f, -1.97142684f, -0.318972677f, -0.147455126f, -1.77800202f, 0.165768534f, 0.431082994f, 1.31381273f, 1.76723707f, -1.48740864f, -1.07827735f, 0.636633575f, -1.4701041f, -1.1036855f, 0.299450338f, -1.32190514f, 1.12892056f, 1.42790246f, -1.86530316f, 0.130579218f, 1.18780541f, 1.90055871f, -0.902965605f, -1.32359576f, 1.50680375f, 1.63672984f, -1.20986843f, -0.233881027f, 0.876928568f, 1.38138068f, -1.32689881f, 0.65987587f, 1.23134184f, 0.198856488f, -1.34113336f, -1.85788476f, -0.87386471f, 1.23148334f, -1.82093501f, -1.967134f, -0.553533435f, -1.74551082f, -1.40205479f, -1.90723848f, 0.0988793448f, 0.786783636f, -0.291786015f, -1.4617182f, -0.674571157f, 0.361383408f, 1.7626456f, 1.97023082f, -1.03358829f, -1.95768034f, 1.32256126f, 1.70645177f, -0.165586084f, 1.08576941f, 1.46479619f, 0.438459188f, 1.49050868f};
static const float yb_boxes[96] = {0.0f, 0.0f, 4.20884609f, 15.0f, 0.0f, 0.0f, 0.0f, 0.0f, 17.3426361f, 0.0f, 21.6278381f, 11.9011488f, 0.0f, 0.0f, 23.0f, 15.0f, 13.5296068f, 11.2341518f, 16.7072067f, 15.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 10.9717102f, 15.0f, 9.84583855f, 0.0f, 12.0235977f, 15.0f, 18.0911999f, 0.842422724f, 21.223093f, 5.86383915f, 0.0f, 0.0f, 0.0f, 0.0f, 2.45816612f, 0.0f, 20.0946751f, 15.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 17.2944946f, 0.0f, 19.5261345f, 19.0f, 23.2367439f, 0.0f, 29.0f, 19.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 29.0f, 5.19724941f, 16.6844597f, 1.76652479f, 29.0f, 7.0111661f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
static const float yb_scores[48] = {0.196661964f, 0.624002099f, 0.0f, 0.0f, 0.196318015f, 0.299444437f, 0.349173278f, 0.212037221f, 0.244605213f, 0.300262541f, 0.0f, 0.0f, 0.274768621f, 0.28667146f, 0.396253288f, 0.265602082f, 0.580524504f, 0.16651459f, 0.0f, 0.0f, 0.151071921f, 0.357173502f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.354036957f, 0.436636984f, 0.113302365f, 0.0812739208f, 0.0f, 0.0f, 0.447852552f, 0.240678594f, 0.603058994f, 0.51369524f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
/* 12 of 24 cells kept */

/* One yolo_box on X [2, 14, 2, 3] and ImgSize int32 [2, 2] (both fed),
 * Boxes and Scores fetched. */
static size_t yolo_program(uint8_t **buf) {
  dy_error err = {0};
  pdx_ctx x = {.err = &err};
  PdProgram prog;
  PdBlock *b = new_program(&x, &prog);
  pdx_var_td(&x, b, "x", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 4, (int64_t[]){-1, 14, 2, 3}));
  pdx_var_td(&x, b, "im", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_INT32, 2, (int64_t[]){-1, 2}));
  pdx_var_td(&x, b, "boxes", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 3, (int64_t[]){-1, 12, 4}));
  pdx_var_td(&x, b, "scores", PD_LOD_TENSOR, pdx_tdesc_pd(&x, PD_FP32, 3, (int64_t[]){-1, 12, 2}));
  const char *feeds[2] = {"x", "im"}, *fetches[2] = {"boxes", "scores"};
  io_ops(&x, b, "feed", feeds, 2);
  PdOp *op = pdx_op(&x, b, "yolo_box");
  pdx_arg(&x, op, false, "X", "x");
  pdx_arg(&x, op, false, "ImgSize", "im");
  pdx_arg(&x, op, true, "Boxes", "boxes");
  pdx_arg(&x, op, true, "Scores", "scores");
  pdx_at_ints(&x, op, "anchors", (const int64_t[]){10, 13, 16, 30}, 4);
  pdx_at_i(&x, op, "class_num", 2);
  pdx_at_f(&x, op, "conf_thresh", 0.5);
  pdx_at_i(&x, op, "downsample_ratio", 8);
  pdx_at_b(&x, op, "clip_bbox", true);
  pdx_at_f(&x, op, "scale_x_y", 1.05);
  io_ops(&x, b, "fetch", fetches, 2);
  return pack(&x, &prog, buf);
}

/* yolo_box on the executor and compiled against the numpy values; the
 * cells below conf_thresh all zero on both */
static void test_yolo_box(void) {
  uint8_t *buf = NULL;
  size_t n = yolo_program(&buf);
  dy_program *p = NULL;
  dy_error err = {0};
  DY_ASSERT_OK(dy_paddle_load_mem(buf, n, NULL, 0, "yolo", NULL, &p, &err), &err);
  free(buf);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  dy_tensor *in[2] = {dy_tensor_from_data(DY_F32, 4, (int64_t[]){2, 14, 2, 3}, yb_x),
                      dy_tensor_from_data(DY_I64, 2, (int64_t[]){2, 2},
                                          (const int64_t[]){16, 24, 20, 30})};
  dy_tensor *want[2] = {dy_tensor_from_data(DY_F32, 3, (int64_t[]){2, 12, 4}, yb_boxes),
                        dy_tensor_from_data(DY_F32, 3, (int64_t[]){2, 12, 2}, yb_scores)};
  dy_tensor *got[2] = {0};
  DY_ASSERT_OK(dy_executor_run(p, in, 2, got, 2, &err), &err);
  char model[4096], exe[4096], dir[2048], path[4096], f0[4096], f1[4096];
  snprintf(model, sizeof model, "%s/pdet_yolo.dymodel", DY_BUILD_DIR);
  snprintf(exe, sizeof exe, "%s/pdet_yolo_exe", DY_BUILD_DIR);
  snprintf(dir, sizeof dir, "%s/pdet_yolo_out", DY_BUILD_DIR);
  snprintf(f0, sizeof f0, "%s_x.npy", dir);
  snprintf(f1, sizeof f1, "%s_im.npy", dir);
  DY_ASSERT_OK(dy_model_save(p, model, &err), &err);
  DY_ASSERT_OK(dy_npy_write(f0, in[0], &err), &err);
  DY_ASSERT_OK(dy_npy_write(f1, in[1], &err), &err);
  CU_ASSERT_EQUAL_FATAL(dy_test_sh(NULL, "'%s' compile '%s' -o '%s' >/dev/null && rm -rf '%s' "
                                   "&& mkdir -p '%s' && '%s' '%s' '%s' --output-dir '%s' "
                                   ">/dev/null", DY2STC_PATH, model, exe, dir, dir, exe, f0, f1,
                                   dir), 0);
  for (int i = 0; i < 2; i++) {
    dy_tensor *cg = NULL;
    snprintf(path, sizeof path, "%s/%s.npy", dir, i ? "scores" : "boxes");
    DY_ASSERT_OK(dy_npy_read(path, &cg, &err), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cg);
    CU_ASSERT_TRUE_FATAL(dy_type_equal(&got[i]->type, &want[i]->type));
    CU_ASSERT_TRUE_FATAL(dy_type_equal(&cg->type, &want[i]->type));
    double e = dy_test_scaled_err(got[i], want[i]), ec = dy_test_scaled_err(cg, want[i]);
    fprintf(stderr, "\n    yolo_box %-8s executor %.3g compiled %.3g", i ? "scores" : "boxes", e,
            ec);
    CU_ASSERT(e <= 1e-6 && ec <= 1e-6);
    int64_t k = dy_tensor_numel(cg);
    for (int64_t j = 0; j < k; j++) /* the masked cells: exactly 0 */
      if (((const float *)want[i]->data)[j] == 0)
        CU_ASSERT(((const float *)cg->data)[j] == 0 && ((const float *)got[i]->data)[j] == 0);
    dy_tensor_free(cg);
  }
  for (int i = 0; i < 2; i++) {
    dy_tensor_free(got[i]);
    dy_tensor_free(want[i]);
    dy_tensor_free(in[i]);
  }
  dy_program_free(p);
}

void dy_test_register(void) {
  DY_SUITE("paddle_det");
  DY_TEST(test_box_coder_encode);
  DY_TEST(test_box_coder_decode);
  DY_TEST(test_box_coder_refused);
  DY_TEST(test_prior_box);
  DY_TEST(test_yolo_box);
}
