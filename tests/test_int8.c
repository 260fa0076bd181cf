/* test_int8.c - the quantized kernels against a reference of the
 * fixed-point rules written here independently of ir/dy_qfixed.h, bit
 * for bit, and the generated int8 code on every instruction set.
 *
 *   - the primitives: SaturatingRoundingDoublingHighMul as round-half-up of
 *     a*b / 2^31 (floor division) with INT32_MIN^2 saturating,
 *     RoundingDivideByPOT as round-half-away-from-zero, on edge values,
 *     exact ties and random pairs; QuantizeMultiplier's range and error;
 *     quantize's rounding (ties to even) against rint(); dy_q_dot_s8 on
 *     every SIMD path the host compiler can build (plain C, AVX2, AVX-512
 *     VNNI) with runs of -128 and 127, and dy_q_dot_u8s8 likewise
 *   - a kernel test Program (qconv2d in its dot form and depthwise with a
 *     relu clamp, qmatmul dot form with K = 100 (and u8 x s8, K = 70), qadd and qmul
 *     broadcasting, qsoftmax, quantize / dequantize per channel) on random
 *     data a quarter of which is -128 or 127: the eager kernels and the
 *     static executor equal the reference (qsoftmax: the eager kernel, and
 *     within 1 of round(256 softmax) - 128 in float); the emitted C built
 *     for the host (native = AVX-512 VNNI here, AVX2, generic x86-64,
 *     DY_NO_SIMD), AArch64 (NEON with and without sdot, under
 *     qemu-aarch64) and the Cortex-M4 (DSP __smlad, under qemu-system-arm
 *     -M mps2-an386) prints exactly the reference's bytes.
 * Cross tools missing: those parts say SKIPPED (scripts/setup.sh installs
 * them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_compiler.h"
#include "dy_qfixed.h"
#include "dy_test.h"
#include "../samples/onnx/onnx_build.h"

#define WORK DY_BUILD_DIR "/int8"
#define FIRMWARE DY_SOURCE_DIR "/samples/firmware"
#define QEMU_ARM "timeout 300 qemu-system-arm -nographic -semihosting-config enable=on,target=native"
#define M4_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard"

#define sh(...) dy_test_sh(WORK "/last.log", __VA_ARGS__)

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static int32_t rand_i32(void) { return (int32_t)(uint32_t)next(); }
/* int8 values, a quarter of them -128 or 127 */
static int8_t rand_i8(void) {
  uint64_t r = next();
  return (r & 3) == 0 ? ((r >> 2 & 1) ? 127 : -128) : (int8_t)(uint8_t)(r >> 8);
}

/* ---- the reference rules ---- */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
/* round(a * b / 2^31), ties toward +infinity; -1 * -1 saturates */
static int32_t ref_srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN)
    return INT32_MAX;
  return (int32_t)floor_div((int64_t)a * b + ((int64_t)1 << 30), (int64_t)1 << 31);
}
/* round(x / 2^e), ties away from zero */
static int32_t ref_rdivpot(int32_t x, int e) {
  if (e == 0)
    return x;
  int64_t half = (int64_t)1 << (e - 1), d = (int64_t)1 << e, v = x;
  return (int32_t)(v >= 0 ? (v + half) / d : -((-v + half) / d));
}
/* x * 2^s saturated to int32 (s <= 31), then as TFLite multiplies */
static int32_t ref_mul_by_qm(int32_t x, int32_t m, int32_t s) {
  int64_t wide = s > 0 ? (int64_t)x * ((int64_t)1 << s) : x;
  int32_t xs = wide > INT32_MAX ? INT32_MAX : wide < INT32_MIN ? INT32_MIN : (int32_t)wide;
  return ref_rdivpot(ref_srdhm(xs, m), s > 0 ? 0 : -s);
}
static int32_t clampi(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static void test_primitives(void) {
  static const int32_t edge[] = {INT32_MIN, INT32_MIN + 1, -(1 << 30) - 1, -(1 << 30), -65536,
                                 -32768, -3, -1, 0, 1, 2, 3, 32768, 65535, 1 << 30,
                                 (1 << 30) + 1, INT32_MAX - 1, INT32_MAX};
  int n_edge = (int)(sizeof edge / sizeof edge[0]), bad = 0;
  for (int i = 0; i < n_edge; i++)
    for (int j = 0; j < n_edge; j++)
      bad += dy_q_srdhm(edge[i], edge[j]) != ref_srdhm(edge[i], edge[j]);
  /* exact ties: a * b = (2k + 1) * 2^30 */
  for (int k = -20; k <= 20; k++) {
    int32_t a = 2 * k + 1, b = 1 << 30;
    bad += dy_q_srdhm(a, b) != ref_srdhm(a, b);
    CU_ASSERT_EQUAL(dy_q_srdhm(a, b), (int32_t)floor_div(2 * k + 2, 2)); /* half up */
  }
  CU_ASSERT_EQUAL(dy_q_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
  for (int i = 0; i < 200000; i++) {
    int32_t a = rand_i32(), b = rand_i32();
    if (i & 1)
      a >>= next() % 31; /* small magnitudes too */
    bad += dy_q_srdhm(a, b) != ref_srdhm(a, b);
  }
  CU_ASSERT_EQUAL(bad, 0);
  bad = 0;
  for (int e = 0; e <= 31; e++) {
    for (int i = 0; i < n_edge; i++)
      bad += dy_q_rdivpot(edge[i], e) != ref_rdivpot(edge[i], e);
    for (int k = -9; k <= 9 && e > 0 && e < 27; k++) { /* ties: (2k + 1) * 2^(e-1) */
      int32_t x = (2 * k + 1) * (1 << (e - 1));
      bad += dy_q_rdivpot(x, e) != ref_rdivpot(x, e);
      CU_ASSERT_EQUAL(dy_q_rdivpot(x, e), k >= 0 ? k + 1 : k); /* away from zero */
    }
    for (int i = 0; i < 5000; i++) {
      int32_t x = rand_i32();
      bad += dy_q_rdivpot(x, e) != ref_rdivpot(x, e);
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
  bad = 0;
  for (int i = 0; i < 200000; i++) {
    int32_t x = rand_i32() >> (next() % 24), m = (int32_t)((1u << 30) | ((uint32_t)(next() >> 34) & 0x3fffffffu));
    int32_t s = (int32_t)(next() % 40) - 31;
    if (s > 0)
      x >>= s + 1; /* a left shift that keeps x in range, as requantization's do */
    bad += dy_q_mul_by_qm(x, m, s) != ref_mul_by_qm(x, m, s);
  }
  CU_ASSERT_EQUAL(bad, 0);
  /* at the extremes: a left shift past int32 saturates (issue 31: a
   * wrapping one gave the zero point for a tiny output scale) */
  bad = 0;
  for (int i = 0; i < n_edge; i++)
    for (int32_t s = -31; s <= 30; s++)
      for (int j = 0; j < n_edge; j++)
        bad += dy_q_mul_by_qm(edge[i], edge[j], s) != ref_mul_by_qm(edge[i], edge[j], s);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(dy_q_mul_by_qm(3, 1 << 30, 30), 1 << 30); /* 3 << 30 saturates */
  CU_ASSERT_EQUAL(dy_q_mul_by_qm(-3, 1 << 30, 30), -(1 << 30));
  CU_ASSERT_EQUAL(dy_q_mul_by_qm(INT32_MAX, INT32_MAX, 30), INT32_MAX - 1);
  CU_ASSERT_EQUAL(dy_q_mul_by_qm(INT32_MIN, INT32_MAX, 30), INT32_MIN + 1);
  CU_ASSERT_EQUAL(dy_q_mul_by_qm(INT32_MAX, INT32_MAX, -31), 1);
  CU_ASSERT_EQUAL(dy_q_add_sat(INT32_MAX - 1, 255), INT32_MAX);
  CU_ASSERT_EQUAL(dy_q_add_sat(INT32_MIN + 1, -128), INT32_MIN);
  CU_ASSERT_EQUAL(dy_q_add_sat(-5, 7), 2);
}

static void test_multiplier(void) {
  int32_t m, s;
  dy_quant_multiplier(0.5, &m, &s);
  CU_ASSERT(m == (1 << 30) && s == 0);
  dy_quant_multiplier(1.0, &m, &s);
  CU_ASSERT(m == (1 << 30) && s == 1);
  dy_quant_multiplier(0.75, &m, &s);
  CU_ASSERT(m == 1610612736 && s == 0);
  dy_quant_multiplier(0.0, &m, &s);
  CU_ASSERT(m == 0 && s == 0);
  dy_quant_multiplier(1e-12, &m, &s); /* below 2^-32: TFLite makes it 0 */
  CU_ASSERT(m == 0 && s == 0);
  /* just below 1: the rounded fraction reaches 2^31 and the shift moves */
  dy_quant_multiplier(1.0 - 1e-12, &m, &s);
  CU_ASSERT(m == (1 << 30) && s == 1);
  int bad = 0;
  for (int i = 0; i < 100000; i++) {
    double r = exp((double)(next() % 20000) / 1000.0 - 14.0); /* 8e-7 .. 4.4e2 */
    dy_quant_multiplier(r, &m, &s);
    double back = ldexp((double)m, s - 31);
    bad += m < (1 << 30) || fabs(back - r) > ldexp(1.0, s - 32) * 1.0000001;
  }
  CU_ASSERT_EQUAL(bad, 0);
}

static void test_round(void) {
  int bad = 0;
  for (int k = -300; k <= 300; k++) { /* every tie k + 0.5 */
    float r = (float)k + 0.5f;
    bad += dy_q_round_f32(r) != (int32_t)rintf(r);
  }
  for (int i = 0; i < 200000; i++) {
    float r = (float)((double)rand_i32() / (double)(1u << (next() % 31)));
    float c = r < -4194304.0f ? -4194304.0f : r > 4194304.0f ? 4194304.0f : r;
    bad += dy_q_round_f32(r) != (int32_t)rintf(c);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(dy_q_round_f32(NAN), 0);
  CU_ASSERT_EQUAL(dy_q_round_f32(INFINITY), 4194304);
  CU_ASSERT_EQUAL(dy_q_round_f32(-2.5f), -2);
  CU_ASSERT_EQUAL(dy_q_round_f32(3.5f), 4);
}

/* The run's output (in WORK/last.log) holds the expected lines. */
static void expect_output(const char *what, int rc, const char *want) {
  char *log = dy_test_slurp(WORK "/last.log");
  bool ok = rc == 0 && log && strstr(log, want);
  if (!ok)
    fprintf(stderr, "\n  %s: exit %d, output:\n%s\n  expected:\n%s", what, rc, log ? log : "",
            want);
  CU_ASSERT(ok);
  free(log);
}

/* dy_q_dot_s8 and dy_q_dot2_s8 (and the u8 forms) of every SIMD path the
 * host builds, against a plain sum: a
 * program that includes ir/dy_qfixed.h prints its sums. */
static const char dot_main[] =
    "#include <stdio.h>\n#include \"dy_qfixed.h\"\n"
    "int main(void) {\n"
    "  static int8_t a[300], b[300];\n"
    "  static uint8_t u[300];\n"
    "  unsigned s = 12345u;\n"
    "  for (int n = 0; n <= 300; n += (n < 70 ? 1 : 23)) {\n"
    "    long want = 0, uwant = 0, awant = 0, uawant = 0;\n"
    "    int32_t d[2];\n"
    "    for (int i = 0; i < n; i++) {\n"
    "      s = s * 1103515245u + 12345u;\n"
    "      a[i] = (s >> 16) % 5 == 0 ? -128 : (s >> 16) % 5 == 1 ? 127 : (int8_t)(s >> 20);\n"
    "      s = s * 1103515245u + 12345u;\n"
    "      b[i] = (s >> 16) % 5 == 0 ? -128 : (s >> 16) % 5 == 1 ? 127 : (int8_t)(s >> 20);\n"
    "      want += (long)a[i] * b[i];\n"
    "      u[i] = (uint8_t)(a[i] + 128);\n"
    "      uwant += (long)u[i] * b[i];\n"
    "      awant += (long)a[i] * a[i];\n"
    "      uawant += (long)u[i] * a[i];\n"
    "    }\n"
    "    dy_q_dot2_s8(a, b, a, n, d);\n"
    "    if (d[0] != want || d[1] != awant) { printf(\"dot2 n=%d\\n\", n); return 1; }\n"
    "    dy_q_dot2_u8s8(u, b, a, n, d);\n"
    "    if (d[0] != uwant || d[1] != uawant) { printf(\"u8 dot2 n=%d\\n\", n); return 1; }\n"
    "    if (dy_q_dot_u8s8(u, b, n) != uwant) { printf(\"u8 n=%d\\n\", n); return 1; }\n"
    "    if (dy_q_dot_s8(a, b, n) != want) { printf(\"n=%d: %ld, want %ld\\n\", n, (long)dy_q_dot_s8(a, b, n), want); return 1; }\n"
    "    if (n > 0 && n <= 150) { /* the 2 x 2 block: pixels a[0, n), a[n, 2n) (u: u[0, n), u[n, 2n)), rows b[0, n), b[n, 2n) */\n"
    "      static uint32_t pw[150];\n"
    "      long w4[4] = {0, 0, 0, 0}, u4[4] = {0, 0, 0, 0};\n"
    "      int32_t d4[4];\n"
    "      for (int i = 0; i < n; i++)\n"
    "        for (int j = 0; j < 4; j++) {\n"
    "          w4[j] += (long)a[(j >> 1) * n + i] * b[(j & 1) * n + i];\n"
    "          u4[j] += (long)u[(j >> 1) * n + i] * b[(j & 1) * n + i];\n"
    "        }\n"
    "      dy_q_pack2_s8(a, n, pw);\n"
    "      dy_q_dot2x2(pw, b, n, d4);\n"
    "      for (int j = 0; j < 4; j++) if (d4[j] != w4[j]) { printf(\"dot2x2 n=%d j=%d\\n\", n, j); return 1; }\n"
    "      dy_q_dot1x2(pw, b + n, n, d4);\n"
    "      if (d4[0] != w4[1] || d4[2] != w4[3]) { printf(\"dot1x2 n=%d\\n\", n); return 1; }\n"
    "      dy_q_pack2_u8(u, n, pw);\n"
    "      dy_q_dot2x2(pw, b, n, d4);\n"
    "      for (int j = 0; j < 4; j++) if (d4[j] != u4[j]) { printf(\"u8 dot2x2 n=%d j=%d\\n\", n, j); return 1; }\n"
    "    }\n"
    "  }\n"
    "  printf(\"ok\\n\");\n  return 0;\n}\n";

static void test_dot_paths(void) {
  mkdir(WORK, 0777);
  FILE *f = fopen(WORK "/dot.c", "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(dot_main, f);
  fclose(f);
  static const char *const flags[] = {"-DDY_NO_SIMD", "", "-mavx2", "-march=native"};
  for (int i = 0; i < 4; i++) {
    int rc = sh("cd %s && cc -std=c99 -O2 -Wall -Wextra -pedantic -Werror %s -I%s/ir dot.c -o dot "
                "&& ./dot",
                WORK, flags[i], DY_SOURCE_DIR);
    if (rc)
      fprintf(stderr, "\n  dot with '%s' failed:\n%s", flags[i], dy_test_slurp(WORK "/last.log"));
    CU_ASSERT_EQUAL(rc, 0);
  }
  /* the Cortex-M DSP's dot forms and 2 x 2 block (SMLAD) under qemu */
  if (dy_test_have("arm-none-eabi-gcc") && dy_test_have("qemu-system-arm")) {
    int rc = sh("cd %s && arm-none-eabi-gcc " M4_FLAGS " -std=c99 -O2 -Wall -Wextra -pedantic "
                "-Werror -I%s/ir -c dot.c -o dot-m4.o && "
                "arm-none-eabi-gcc " M4_FLAGS " -std=c11 -O2 -c %s/startup.c -o startup-m4.o && "
                "arm-none-eabi-gcc " M4_FLAGS " --specs=rdimon.specs -nostartfiles -T %s/mps2.ld "
                "startup-m4.o dot-m4.o -o dot-m4.elf && "
                "arm-none-eabi-objdump -d dot-m4.o | grep -q smlad && "
                QEMU_ARM " -M mps2-an386 -kernel dot-m4.elf",
                WORK, DY_SOURCE_DIR, FIRMWARE, FIRMWARE);
    expect_output("dot on the Cortex-M4 (qemu-system-arm)", rc, "ok\n");
  } else {
    fprintf(stderr, "\n  SKIPPED the Cortex-M4 dot: no arm-none-eabi-gcc or qemu-system-arm ");
  }
  if (sh("cc -march=native -dM -E - </dev/null | grep -q __AVX512VNNI__") == 0)
    fprintf(stderr, "\n  (the native build took the AVX-512 VNNI path) ");
  if (dy_test_have_aarch64()) {
    static const char *const a64[] = {"-march=armv8-a", "-march=armv8.2-a+dotprod"};
    for (int i = 0; i < 2; i++) {
      int rc = sh("cd %s && aarch64-linux-gnu-gcc -std=c99 -O2 -Wall -Wextra -pedantic -Werror %s "
                  "-static -I%s/ir dot.c -o dot64 && qemu-aarch64 -L /usr/aarch64-linux-gnu ./dot64",
                  WORK, a64[i], DY_SOURCE_DIR);
      CU_ASSERT_EQUAL(rc, 0);
    }
  }
}

/* ---- the kernel test Program ---- */

typedef struct {
  dy_program *p;
  dy_tensor *feed[12];
  int n_feeds;
  const dy_tensor *ref[12]; /* reference outputs, fetch order */
  int n_out;
} qprog;

static dy_tensor *rand_q8(dy_dtype t, int rank, const int64_t *shape) {
  dy_tensor *x = dy_tensor_new(t, rank, shape);
  for (int64_t i = 0; i < dy_tensor_numel(x); i++)
    ((int8_t *)x->data)[i] = rand_i8();
  return x;
}

static int add_const(dy_program *p, const char *name, dy_dtype t, int rank, const int64_t *shape,
                     const void *data) {
  dy_type ty = {.dtype = t, .rank = rank};
  memcpy(ty.shape, shape, sizeof(int64_t) * (size_t)rank);
  int v = dy_program_add_var(p, name, &ty);
  dy_error err;
  dy_program_set_data(p, v, data, (size_t)dy_type_numel(&ty) * dy_dtype_size(t), &err);
  return v;
}

static int add_feed(qprog *q, const char *name, dy_tensor *t) {
  int v = dy_program_add_var(q->p, name, &t->type);
  dy_error err;
  dy_program_add_feed(q->p, v, &err);
  q->feed[q->n_feeds++] = t;
  return v;
}

static int add_op(qprog *q, dy_op_kind k, const int *in, int n_in, const dy_type *out_t,
                  const char *out_name, const dy_attr *attrs, int n_attrs) {
  int o = dy_program_add_var(q->p, out_name, out_t);
  dy_program_append_op(q->p, 0, k, in, n_in, &o, 1, attrs, n_attrs, (dy_srcloc){"test_int8.c", 1});
  dy_error err;
  dy_program_add_fetch(q->p, o, &err);
  return o;
}

static int32_t m_of(double r, int32_t *shift) {
  int32_t m;
  dy_quant_multiplier(r, &m, shift);
  return m;
}

/* reference qconv2d: the loop straight from the rule */
static dy_tensor *ref_qconv(const int8_t *x, const int64_t *xs, const int8_t *w,
                            const int64_t *ws, const int32_t *bias, float x_s, int32_t x_zp,
                            const float *w_s, float y_s, int32_t y_zp, int64_t stride,
                            const int64_t *pad, int64_t groups, int32_t lo, int32_t hi) {
  /* pad: top, left, bottom, right */
  int64_t c = xs[1], h = xs[2], wd = xs[3], o = ws[0], kh = ws[2], kw = ws[3];
  int64_t oh = (h + pad[0] + pad[2] - kh) / stride + 1, ow = (wd + pad[1] + pad[3] - kw) / stride + 1;
  int64_t cg = c / groups, og = o / groups;
  dy_tensor *y = dy_tensor_new(DY_I8, 4, (int64_t[]){1, o, oh, ow});
  int8_t *yd = y->data;
  for (int64_t oc = 0; oc < o; oc++) {
    int32_t sh_;
    int32_t m = m_of((double)x_s * (double)w_s[oc] / (double)y_s, &sh_);
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++) {
        int32_t acc = bias[oc];
        for (int64_t ci = 0; ci < cg; ci++)
          for (int64_t ky = 0; ky < kh; ky++)
            for (int64_t kx = 0; kx < kw; kx++) {
              int64_t iy = oy * stride - pad[0] + ky, ix = ox * stride - pad[1] + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                continue;
              acc += (x[((oc / og * cg + ci) * h + iy) * wd + ix] - x_zp) *
                     w[((oc * cg + ci) * kh + ky) * kw + kx];
            }
        yd[(oc * oh + oy) * ow + ox] = (int8_t)clampi(ref_mul_by_qm(acc, m, sh_) + y_zp, lo, hi);
      }
  }
  return y;
}

static void build_program(qprog *q) {
  memset(q, 0, sizeof *q);
  q->p = dy_program_new();
  dy_program *p = q->p;
  /* conv input x [1, 8, 9, 9] */
  static const int64_t xs[4] = {1, 8, 9, 9}, w1s[4] = {16, 8, 3, 3}, w2s[4] = {8, 1, 3, 3};
  dy_tensor *x = rand_q8(DY_I8, 4, xs);
  int vx = add_feed(q, "x", x);
  static int8_t w1[16 * 8 * 9], w2[8 * 9], bm[10 * 100];
  static int32_t b1[16], b2[8], bb[10];
  static float w1_s[16], w2_s[8], bm_s[10];
  for (size_t i = 0; i < sizeof w1; i++)
    w1[i] = rand_i8();
  for (size_t i = 0; i < sizeof w2; i++)
    w2[i] = rand_i8();
  for (size_t i = 0; i < sizeof bm; i++)
    bm[i] = rand_i8();
  for (int i = 0; i < 16; i++)
    b1[i] = (int32_t)(next() % 40001) - 20000, w1_s[i] = 0.002f + 0.0005f * (float)i;
  for (int i = 0; i < 8; i++)
    b2[i] = (int32_t)(next() % 4001) - 2000, w2_s[i] = 0.01f + 0.003f * (float)i;
  for (int i = 0; i < 10; i++)
    bb[i] = (int32_t)(next() % 40001) - 20000, bm_s[i] = 0.001f * (float)(i + 1);
  static const float x_s = 0.05f, y1_s = 0.6f, y2_s = 0.3f, a_s = 0.02f, y3_s = 0.25f;
  static const int8_t x_zp = 5, y1_zp = -3, y2_zp = 0, a_zp = -9, y3_zp = 4;
  static const int8_t zero16[16] = {0};
  int vxs = add_const(p, "x_scale", DY_F32, 1, (int64_t[]){1}, &x_s);
  int vxz = add_const(p, "x_zp", DY_I8, 1, (int64_t[]){1}, &x_zp);
  int vw1 = add_const(p, "w1", DY_I8, 4, w1s, w1);
  int vw1s = add_const(p, "w1_scale", DY_F32, 1, (int64_t[]){16}, w1_s);
  int vw1z = add_const(p, "w1_zp", DY_I8, 1, (int64_t[]){16}, zero16);
  int vy1s = add_const(p, "y1_scale", DY_F32, 1, (int64_t[]){1}, &y1_s);
  int vy1z = add_const(p, "y1_zp", DY_I8, 1, (int64_t[]){1}, &y1_zp);
  int vb1 = add_const(p, "b1", DY_I32, 1, (int64_t[]){16}, b1);
  dy_attr conv1[6] = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2),
                      DY_ATTR_IS("paddings", DY_SHAPE(1, 1, 1, 1), 4),
                      DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
                      DY_ATTR_I("act_min", INT32_MIN), DY_ATTR_I("act_max", INT32_MAX)};
  dy_type t1 = {.dtype = DY_I8, .rank = 4, .shape = {1, 16, 9, 9}};
  add_op(q, DY_OP_QCONV2D, (int[]){vx, vxs, vxz, vw1, vw1s, vw1z, vy1s, vy1z, vb1}, 9, &t1,
         "y_conv", conv1, 6);
  q->ref[q->n_out++] = ref_qconv(x->data, xs, w1, w1s, b1, x_s, x_zp, w1_s, y1_s, y1_zp, 1,
                                 (int64_t[]){1, 1, 1, 1}, 1, -128, 127);
  /* depthwise, stride 2, relu6-style clamp [y2_zp, 40] */
  int vw2 = add_const(p, "w2", DY_I8, 4, w2s, w2);
  int vw2s = add_const(p, "w2_scale", DY_F32, 1, (int64_t[]){8}, w2_s);
  int vw2z = add_const(p, "w2_zp", DY_I8, 1, (int64_t[]){8}, zero16);
  int vy2s = add_const(p, "y2_scale", DY_F32, 1, (int64_t[]){1}, &y2_s);
  int vy2z = add_const(p, "y2_zp", DY_I8, 1, (int64_t[]){1}, &y2_zp);
  int vb2 = add_const(p, "b2", DY_I32, 1, (int64_t[]){8}, b2);
  dy_attr conv2[6] = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2),
                      DY_ATTR_IS("paddings", DY_SHAPE(1, 1, 1, 1), 4),
                      DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 8),
                      DY_ATTR_I("act_min", 0), DY_ATTR_I("act_max", 40)};
  dy_type t2 = {.dtype = DY_I8, .rank = 4, .shape = {1, 8, 5, 5}};
  add_op(q, DY_OP_QCONV2D, (int[]){vx, vxs, vxz, vw2, vw2s, vw2z, vy2s, vy2z, vb2}, 9, &t2,
         "y_dw", conv2, 6);
  q->ref[q->n_out++] = ref_qconv(x->data, xs, w2, w2s, b2, x_s, x_zp, w2_s, y2_s, y2_zp, 2,
                                 (int64_t[]){1, 1, 1, 1}, 8, 0, 40);
  /* the dot form's odd corners (the 2 x 2 block of the Cortex-M DSP: an
   * odd last pixel and an odd last channel alone, a tail of k % 4 = 3
   * taps): x [1, 3, 8, 5], w [5, 3, 3, 3] (k = 27), stride 2, padding on
   * every side (top 1, left 2, bottom 2, right 1): y [1, 5, 5, 3], 15
   * pixels, a relu-style clamp */
  static const int64_t x3s[4] = {1, 3, 8, 5}, w3s[4] = {5, 3, 3, 3};
  static int8_t w3[5 * 27];
  static int32_t b3[5];
  static float w3_s[5];
  for (size_t i = 0; i < sizeof w3; i++)
    w3[i] = rand_i8();
  for (int i = 0; i < 5; i++)
    b3[i] = (int32_t)(next() % 20001) - 10000, w3_s[i] = 0.004f + 0.001f * (float)i;
  static const float x3_s = 0.04f, y4_s = 0.3f;
  static const int8_t x3_zp = -7, y4_zp = -100;
  dy_tensor *x3 = rand_q8(DY_I8, 4, x3s);
  int vx3 = add_feed(q, "x3", x3);
  int vx3s = add_const(p, "x3_scale", DY_F32, 1, (int64_t[]){1}, &x3_s);
  int vx3z = add_const(p, "x3_zp", DY_I8, 1, (int64_t[]){1}, &x3_zp);
  int vw3 = add_const(p, "w3", DY_I8, 4, w3s, w3);
  int vw3s = add_const(p, "w3_scale", DY_F32, 1, (int64_t[]){5}, w3_s);
  int vw3z = add_const(p, "w3_zp", DY_I8, 1, (int64_t[]){5}, zero16);
  int vy4s = add_const(p, "y4_scale", DY_F32, 1, (int64_t[]){1}, &y4_s);
  int vy4z = add_const(p, "y4_zp", DY_I8, 1, (int64_t[]){1}, &y4_zp);
  int vb3 = add_const(p, "b3", DY_I32, 1, (int64_t[]){5}, b3);
  dy_attr conv3[6] = {DY_ATTR_IS("strides", DY_SHAPE(2, 2), 2),
                      DY_ATTR_IS("paddings", DY_SHAPE(1, 2, 2, 1), 4),
                      DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
                      DY_ATTR_I("act_min", -100), DY_ATTR_I("act_max", INT32_MAX)};
  dy_type t4 = {.dtype = DY_I8, .rank = 4, .shape = {1, 5, 5, 3}};
  add_op(q, DY_OP_QCONV2D, (int[]){vx3, vx3s, vx3z, vw3, vw3s, vw3z, vy4s, vy4z, vb3}, 9, &t4,
         "y_odd", conv3, 6);
  q->ref[q->n_out++] = ref_qconv(x3->data, x3s, w3, w3s, b3, x3_s, x3_zp, w3_s, y4_s, y4_zp, 2,
                                 (int64_t[]){1, 2, 2, 1}, 1, -100, 127);
  /* a 1 x 1 filter of 8 taps (below the host's dot form; the block on
   * the Cortex-M DSP): x [1, 8, 9, 9], w [7, 8, 1, 1], 81 pixels, 7
   * channels */
  static const int64_t w5s[4] = {7, 8, 1, 1};
  static int8_t w5[7 * 8];
  static int32_t b5[7];
  for (size_t i = 0; i < sizeof w5; i++)
    w5[i] = rand_i8();
  for (int i = 0; i < 7; i++)
    b5[i] = (int32_t)(next() % 20001) - 10000;
  static const float y5_s = 0.2f;
  static const int8_t y5_zp = 3;
  int vw5 = add_const(p, "w5", DY_I8, 4, w5s, w5);
  static float w5_s[7];
  for (int i = 0; i < 7; i++)
    w5_s[i] = 0.003f + 0.0007f * (float)i;
  int vw5s = add_const(p, "w5_scale", DY_F32, 1, (int64_t[]){7}, w5_s);
  int vw5z = add_const(p, "w5_zp", DY_I8, 1, (int64_t[]){7}, zero16);
  int vy5s = add_const(p, "y5_scale", DY_F32, 1, (int64_t[]){1}, &y5_s);
  int vy5z = add_const(p, "y5_zp", DY_I8, 1, (int64_t[]){1}, &y5_zp);
  int vb5 = add_const(p, "b5", DY_I32, 1, (int64_t[]){7}, b5);
  dy_attr conv5[6] = {DY_ATTR_IS("strides", DY_SHAPE(1, 1), 2),
                      DY_ATTR_IS("paddings", DY_SHAPE(0, 0, 0, 0), 4),
                      DY_ATTR_IS("dilations", DY_SHAPE(1, 1), 2), DY_ATTR_I("groups", 1),
                      DY_ATTR_I("act_min", INT32_MIN), DY_ATTR_I("act_max", INT32_MAX)};
  dy_type t5 = {.dtype = DY_I8, .rank = 4, .shape = {1, 7, 9, 9}};
  add_op(q, DY_OP_QCONV2D, (int[]){vx, vxs, vxz, vw5, vw5s, vw5z, vy5s, vy5z, vb5}, 9, &t5,
         "y_1x1", conv5, 6);
  q->ref[q->n_out++] = ref_qconv(x->data, xs, w5, w5s, b5, x_s, x_zp, w5_s, y5_s, y5_zp, 1,
                                 (int64_t[]){0, 0, 0, 0}, 1, -128, 127);
  /* qmatmul a [3, 100] x b [10, 100]^T, K = 100 (SIMD chunks and a tail) */
  dy_tensor *a = rand_q8(DY_I8, 2, (int64_t[]){3, 100});
  int va = add_feed(q, "a", a);
  int vas = add_const(p, "a_scale", DY_F32, 1, (int64_t[]){1}, &a_s);
  int vaz = add_const(p, "a_zp", DY_I8, 1, (int64_t[]){1}, &a_zp);
  int vbm = add_const(p, "b", DY_I8, 2, (int64_t[]){10, 100}, bm);
  int vbs = add_const(p, "b_scale", DY_F32, 1, (int64_t[]){10}, bm_s);
  int vbz = add_const(p, "b_zp", DY_I8, 1, (int64_t[]){10}, zero16);
  int vy3s = add_const(p, "y3_scale", DY_F32, 1, (int64_t[]){1}, &y3_s);
  int vy3z = add_const(p, "y3_zp", DY_I8, 1, (int64_t[]){1}, &y3_zp);
  int vbb = add_const(p, "bb", DY_I32, 1, (int64_t[]){10}, bb);
  dy_attr mm[3] = {DY_ATTR_I("transpose_y", 1), DY_ATTR_I("act_min", INT32_MIN),
                   DY_ATTR_I("act_max", INT32_MAX)};
  dy_type t3 = {.dtype = DY_I8, .rank = 2, .shape = {3, 10}};
  int vy3 = add_op(q, DY_OP_QMATMUL, (int[]){va, vas, vaz, vbm, vbs, vbz, vy3s, vy3z, vbb}, 9,
                   &t3, "y_fc", mm, 3);
  dy_tensor *y3 = dy_tensor_new(DY_I8, 2, (int64_t[]){3, 10});
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 10; j++) {
      int32_t acc = bb[j], sh_;
      for (int k = 0; k < 100; k++)
        acc += (((int8_t *)a->data)[i * 100 + k] - a_zp) * bm[j * 100 + k];
      int32_t m = m_of((double)a_s * (double)bm_s[j] / (double)y3_s, &sh_);
      ((int8_t *)y3->data)[i * 10 + j] = (int8_t)clampi(ref_mul_by_qm(acc, m, sh_) + y3_zp, -128, 127);
    }
  q->ref[q->n_out++] = y3;
  /* the same with u8 activations (an ONNX QDQ model's): dy_q_dot_u8s8,
   * K = 70 */
  dy_tensor *au = rand_q8(DY_U8, 2, (int64_t[]){2, 70});
  int vau = add_feed(q, "a_u8", au);
  static int8_t bu[6 * 70];
  static int32_t bbu[6];
  for (size_t i = 0; i < sizeof bu; i++)
    bu[i] = rand_i8();
  for (int i = 0; i < 6; i++)
    bbu[i] = (int32_t)(next() % 20001) - 10000;
  static const uint8_t au_zp = 131, yu_zp = 120;
  static const float yu_s = 0.4f;
  int vauz = add_const(p, "a_u8_zp", DY_U8, 1, (int64_t[]){1}, &au_zp);
  int vbu = add_const(p, "b_u", DY_I8, 2, (int64_t[]){6, 70}, bu);
  int vbus = add_const(p, "b_u_scale", DY_F32, 1, (int64_t[]){6}, bm_s);
  int vbuz = add_const(p, "b_u_zp", DY_I8, 1, (int64_t[]){6}, zero16);
  int vyus = add_const(p, "yu_scale", DY_F32, 1, (int64_t[]){1}, &yu_s);
  int vyuz = add_const(p, "yu_zp", DY_U8, 1, (int64_t[]){1}, &yu_zp);
  int vbbu = add_const(p, "bbu", DY_I32, 1, (int64_t[]){6}, bbu);
  dy_type tu = {.dtype = DY_U8, .rank = 2, .shape = {2, 6}};
  add_op(q, DY_OP_QMATMUL, (int[]){vau, vas, vauz, vbu, vbus, vbuz, vyus, vyuz, vbbu}, 9, &tu,
         "y_fc_u8", mm, 3);
  dy_tensor *yu = dy_tensor_new(DY_U8, 2, (int64_t[]){2, 6});
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 6; j++) {
      int32_t acc = bbu[j], sh_;
      for (int k = 0; k < 70; k++)
        acc += (((uint8_t *)au->data)[i * 70 + k] - au_zp) * bu[j * 70 + k];
      int32_t m = m_of((double)a_s * (double)bm_s[j] / (double)yu_s, &sh_);
      ((uint8_t *)yu->data)[i * 6 + j] = (uint8_t)clampi(ref_mul_by_qm(acc, m, sh_) + yu_zp, 0, 255);
    }
  q->ref[q->n_out++] = yu;
  /* qsoftmax of the matmul's output (reference: the eager kernel, checked
   * against float below) */
  static const float sm_s = 1.0f / 256.0f;
  static const int8_t sm_zp = -128;
  int vsms = add_const(p, "sm_scale", DY_F32, 1, (int64_t[]){1}, &sm_s);
  int vsmz = add_const(p, "sm_zp", DY_I8, 1, (int64_t[]){1}, &sm_zp);
  dy_attr ax[1] = {DY_ATTR_I("axis", -1)};
  add_op(q, DY_OP_QSOFTMAX, (int[]){vy3, vy3s, vy3z, vsms, vsmz}, 5, &t3, "y_softmax", ax, 1);
  q->ref[q->n_out++] = NULL; /* filled in by check_softmax */
  /* qadd / qmul: [2, 16, 5] with [16, 1] */
  dy_tensor *u = rand_q8(DY_I8, 3, (int64_t[]){2, 16, 5}), *v = rand_q8(DY_I8, 2, (int64_t[]){16, 1});
  int vu = add_feed(q, "u", u), vv = add_feed(q, "v", v);
  static const float u_s = 0.07f, v_s = 0.02f, ya_s = 0.09f, ym_s = 0.011f;
  static const int8_t u_zp = -20, v_zp = 11, ya_zp = 2, ym_zp = -1;
  int vus = add_const(p, "u_scale", DY_F32, 1, (int64_t[]){1}, &u_s);
  int vuz = add_const(p, "u_zp", DY_I8, 1, (int64_t[]){1}, &u_zp);
  int vvs = add_const(p, "v_scale", DY_F32, 1, (int64_t[]){1}, &v_s);
  int vvz = add_const(p, "v_zp", DY_I8, 1, (int64_t[]){1}, &v_zp);
  int vyas = add_const(p, "ya_scale", DY_F32, 1, (int64_t[]){1}, &ya_s);
  int vyaz = add_const(p, "ya_zp", DY_I8, 1, (int64_t[]){1}, &ya_zp);
  int vyms = add_const(p, "ym_scale", DY_F32, 1, (int64_t[]){1}, &ym_s);
  int vymz = add_const(p, "ym_zp", DY_I8, 1, (int64_t[]){1}, &ym_zp);
  dy_attr act[2] = {DY_ATTR_I("act_min", INT32_MIN), DY_ATTR_I("act_max", INT32_MAX)};
  dy_type tb = {.dtype = DY_I8, .rank = 3, .shape = {2, 16, 5}};
  add_op(q, DY_OP_QADD, (int[]){vu, vus, vuz, vv, vvs, vvz, vyas, vyaz}, 8, &tb, "y_add", act, 2);
  add_op(q, DY_OP_QMUL, (int[]){vu, vus, vuz, vv, vvs, vvz, vyms, vymz}, 8, &tb, "y_mul", act, 2);
  dy_tensor *ya = dy_tensor_new(DY_I8, 3, tb.shape), *ym = dy_tensor_new(DY_I8, 3, tb.shape);
  /* TFLite ADD's parameters, as add.cc makes them */
  double twice = (double)(2 * (u_s > v_s ? u_s : v_s));
  int32_t s1, s2, so, s3;
  int32_t m1 = m_of((double)u_s / twice, &s1), m2 = m_of((double)v_s / twice, &s2);
  int32_t mo = m_of(twice / ((double)(1 << 20) * (double)ya_s), &so);
  int32_t mm3 = m_of((double)u_s * (double)v_s / (double)ym_s, &s3);
  for (int i = 0; i < 160; i++) {
    int32_t du = ((int8_t *)u->data)[i] - u_zp, dv = ((int8_t *)v->data)[(i / 5) % 16] - v_zp;
    int32_t sum = ref_mul_by_qm(du * (1 << 20), m1, s1) + ref_mul_by_qm(dv * (1 << 20), m2, s2);
    ((int8_t *)ya->data)[i] = (int8_t)clampi(ref_mul_by_qm(sum, mo, so) + ya_zp, -128, 127);
    ((int8_t *)ym->data)[i] = (int8_t)clampi(ref_mul_by_qm(du * dv, mm3, s3) + ym_zp, -128, 127);
  }
  q->ref[q->n_out++] = ya;
  q->ref[q->n_out++] = ym;
  /* quantize (u8, per channel of 3, ties) and dequantize */
  static const float f[12] = {0.25f, -0.25f, 0.75f, -0.75f, 100.0f, -100.0f,
                              0.3f,  1.25f,  -1.25f, 2.5f,   0.0f,    -0.0f};
  static const float qs[3] = {0.5f, 0.5f, 0.01f};
  static const uint8_t qz[3] = {128, 0, 250};
  dy_tensor *ft = dy_tensor_from_data(DY_F32, 2, (int64_t[]){4, 3}, f);
  int vf = add_feed(q, "f", ft);
  int vqs = add_const(p, "q_scale", DY_F32, 1, (int64_t[]){3}, qs);
  int vqz = add_const(p, "q_zp", DY_U8, 1, (int64_t[]){3}, qz);
  dy_attr ax1[1] = {DY_ATTR_I("axis", 1)};
  dy_type tq = {.dtype = DY_U8, .rank = 2, .shape = {4, 3}};
  int vq = add_op(q, DY_OP_QUANTIZE_LINEAR, (int[]){vf, vqs, vqz}, 3, &tq, "y_q", ax1, 1);
  dy_tensor *yq = dy_tensor_new(DY_U8, 2, tq.shape);
  for (int i = 0; i < 12; i++)
    ((uint8_t *)yq->data)[i] = (uint8_t)clampi((int32_t)rintf(f[i] / qs[i % 3]) + qz[i % 3], 0, 255);
  q->ref[q->n_out++] = yq;
  dy_type tf = {.dtype = DY_F32, .rank = 2, .shape = {4, 3}};
  add_op(q, DY_OP_DEQUANTIZE_LINEAR, (int[]){vq, vqs, vqz}, 3, &tf, "y_dq", ax1, 1);
  dy_tensor *yd = dy_tensor_new(DY_F32, 2, tq.shape);
  for (int i = 0; i < 12; i++)
    ((float *)yd->data)[i] = (float)(((uint8_t *)yq->data)[i] - qz[i % 3]) * qs[i % 3];
  q->ref[q->n_out++] = yd;
}

static void qprog_free(qprog *q) {
  for (int i = 0; i < q->n_feeds; i++)
    dy_tensor_free(q->feed[i]);
  for (int i = 0; i < q->n_out; i++)
    dy_tensor_free((dy_tensor *)q->ref[i]);
  dy_program_free(q->p);
}

static bool same(const dy_tensor *a, const dy_tensor *b) {
  return a && b && dy_type_equal(&a->type, &b->type) && memcmp(a->data, b->data, a->nbytes) == 0;
}

/* qsoftmax's output: within 1 of round(256 softmax(x)) - 128 in float */
static void check_softmax(const dy_tensor *x, float x_s, const dy_tensor *y) {
  const int8_t *xd = x->data, *yd = y->data;
  int bad = 0;
  for (int r = 0; r < 3; r++) {
    double mx = -1e9, sum = 0;
    for (int j = 0; j < 10; j++)
      mx = fmax(mx, xd[r * 10 + j] * (double)x_s);
    for (int j = 0; j < 10; j++)
      sum += exp(xd[r * 10 + j] * (double)x_s - mx);
    for (int j = 0; j < 10; j++) {
      double want = fmin(127, floor(256 * exp(xd[r * 10 + j] * (double)x_s - mx) / sum + 0.5) - 128);
      bad += fabs(yd[r * 10 + j] - want) > 1;
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
}

static void test_kernels_and_executor(void) {
  qprog q;
  build_program(&q);
  dy_error err;
  DY_ASSERT_OK(dy_verify(q.p, &err), &err);
  dy_tensor *out[12] = {0};
  DY_ASSERT_OK(dy_executor_run(q.p, q.feed, q.n_feeds, out, q.n_out, &err), &err);
  check_softmax(out[4], 0.25f, out[6]);
  /* the executor (the eager kernels, op by op) equals the reference */
  for (int i = 0; i < q.n_out; i++) {
    if (!q.ref[i])
      continue;
    bool ok = same(out[i], q.ref[i]);
    if (!ok)
      fprintf(stderr, "\n  output %d (%s) differs from the reference\n", i,
              q.p->vars[q.p->fetches[i]]->name);
    CU_ASSERT(ok);
  }
  for (int i = 0; i < q.n_out; i++)
    dy_tensor_free(out[i]);
  qprog_free(&q);
}

/* ---- the generated code on every target ---- */

/* The test program's main: inputs baked in, every output printed as hex
 * bytes, one line each. */
static bool write_main(const qprog *q, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f)
    return false;
  fprintf(f, "#include <stdio.h>\n#include <stdint.h>\n#include \"qk.h\"\n\n");
  for (int i = 0; i < q->n_feeds; i++) {
    const dy_tensor *t = q->feed[i];
    fprintf(f, "static const unsigned char in%d[%zu] = {", i, t->nbytes);
    for (size_t k = 0; k < t->nbytes; k++)
      fprintf(f, "%s%u", k ? "," : "", ((const unsigned char *)t->data)[k]);
    fprintf(f, "};\n");
  }
  fprintf(f, "static unsigned char arena[QK_ARENA_BYTES + 1] __attribute__((aligned(64)));\n");
  for (int i = 0; i < q->n_out; i++)
    fprintf(f, "static unsigned char out%d[%zu] __attribute__((aligned(8)));\n", i,
            (size_t)dy_type_numel(&q->p->vars[q->p->fetches[i]]->type) *
                dy_dtype_size(q->p->vars[q->p->fetches[i]]->type.dtype));
  fprintf(f, "int main(void) {\n  const void *in[%d] = {", q->n_feeds);
  for (int i = 0; i < q->n_feeds; i++)
    fprintf(f, "%sin%d", i ? ", " : "", i);
  fprintf(f, "};\n  void *out[%d] = {", q->n_out);
  for (int i = 0; i < q->n_out; i++)
    fprintf(f, "%sout%d", i ? ", " : "", i);
  fprintf(f, "};\n  int rc = qk_run_v(arena, 1, in, out);\n  printf(\"status %%d\\n\", rc);\n");
  for (int i = 0; i < q->n_out; i++)
    fprintf(f,
            "  for (unsigned k = 0; k < sizeof out%d; k++) printf(\"%%02x\", out%d[k]);\n"
            "  printf(\"\\n\");\n",
            i, i);
  fprintf(f, "  return rc;\n}\n");
  return fclose(f) == 0;
}

static char *expected_text(const qprog *q, dy_tensor *const *out) {
  size_t n = 32;
  for (int i = 0; i < q->n_out; i++)
    n += 2 * out[i]->nbytes + 2;
  char *s = malloc(n), *p = s;
  p += sprintf(p, "status 0\n");
  for (int i = 0; i < q->n_out; i++) {
    for (size_t k = 0; k < out[i]->nbytes; k++)
      p += sprintf(p, "%02x", ((const unsigned char *)out[i]->data)[k]);
    p += sprintf(p, "\n");
  }
  return s;
}

static void test_generated_everywhere(void) {
  qprog q;
  build_program(&q);
  dy_error err;
  dy_tensor *out[12] = {0};
  DY_ASSERT_OK(dy_executor_run(q.p, q.feed, q.n_feeds, out, q.n_out, &err), &err);
  char *want = expected_text(&q, out);
  mkdir(WORK, 0777);
  CU_ASSERT_FATAL(write_main(&q, WORK "/main.c"));
  dy_compile_options o = dy_compile_options_default();
  o.name = "qk";
  dy_codegen_output co;
  dy_compile_report rep;
  DY_ASSERT_OK(dy_program_bound_sym(q.p, "batch", 1, &err), &err);
  DY_ASSERT_OK(dy_compile_program(q.p, &o, &co, &rep, &err), &err);
  DY_ASSERT_OK(dy_write_sources(&co, WORK "/qk", &err), &err);
  dy_codegen_output_free(&co);
  /* the integer weights are in qk_weights.c with the f32 ones, none an
   * array of decimals in qk.c */
  CU_ASSERT(sh("grep -q '(const int8_t \\*)(const void \\*)(QK_WEIGHTS + ' %s/qk.c && "
               "grep -q '(const int32_t \\*)(const void \\*)(QK_WEIGHTS + ' %s/qk.c && "
               "! grep -Eq '^static const (u?int(8|32|64)_t|float) w_' %s/qk.c",
               WORK, WORK, WORK) == 0);
  /* the kernels took their dot forms */
  CU_ASSERT(sh("grep -q 'dy_q_dot2_s8(patch' %s/qk.c && grep -q 'dy_q_dot_s8(a + r' %s/qk.c && "
               "grep -q 'dy_q_dot_u8s8(a + r' %s/qk.c", WORK, WORK, WORK) == 0);
  /* the constant zero points are literals (none read from the weights),
   * and each qconv2d kernel is marked out of line (the Cortex-M4 object
   * below keeps it a function of its own) */
  CU_ASSERT(sh("! grep -q 'zero_point\\[0\\]' %s/qk.c && grep -q 'const int32_t xz = -\\?[0-9]' %s/qk.c && "
               "test \"$(grep -c '^__attribute__((noinline))$' %s/qk.c)\" = "
               "\"$(grep -c '^static void k[0-9]*_qconv2d' %s/qk.c)\" && "
               "grep -q '^static void k[0-9]*_qconv2d' %s/qk.c",
               WORK, WORK, WORK, WORK, WORK) == 0);
  /* the Cortex-M DSP's 2 x 2 block is there, with its odd channel
   * (dy_q_dot1x2), and the host builds it too when asked (the plain-C
   * dy_q_pack2 / dy_q_dot2x2: the same integers) */
  CU_ASSERT(sh("grep -q '#if DY_Q_BLOCK2X2' %s/qk.c && grep -q 'dy_q_dot2x2(pw' %s/qk.c && "
               "grep -q 'dy_q_dot1x2(pw' %s/qk.c && grep -q 'dy_q_pack2_s8(patch' %s/qk.c",
               WORK, WORK, WORK, WORK) == 0);
  /* and the 16-pixel panels (AVX-512 VNNI: -march=native where the host
   * has it; the plain-C form forced) */
  CU_ASSERT(sh("grep -q '#if DY_Q_PANEL16' %s/qk.c && grep -q 'dy_q_panel16_dot(panel' %s/qk.c && "
               "grep -q 'dy_q_requant16_r(acc16' %s/qk.c", WORK, WORK, WORK) == 0);
  static const char *const host[] = {"-march=native", "-mavx2 -mfma", "", "-DDY_NO_SIMD",
                                     "-DDY_Q_BLOCK2X2=1", "-DDY_Q_PANEL16=1",
                                     "-DDY_Q_PANEL16=1 -DDY_NO_SIMD"};
  for (int i = 0; i < 7; i++) {
    int rc = sh("cd %s && cc -std=c99 -O2 -Wall -Wextra -pedantic -Werror %s main.c qk.c qk_weights.c "
                "-o host && ./host",
                WORK, host[i]);
    char what[64];
    snprintf(what, sizeof what, "host %s", host[i]);
    expect_output(what, rc, want);
  }
  /* clang too: it warns of an unused static inline function in a .c
   * file, and a model calls only some of the fixed-point helpers */
  if (dy_test_have("clang")) {
    static const char *const cl[] = {"-march=native", "-DDY_NO_SIMD"};
    for (int i = 0; i < 2; i++) {
      int rc = sh("cd %s && clang -std=c99 -O2 -Wall -Wextra -pedantic -Werror %s main.c qk.c "
                  "qk_weights.c -o host-clang && ./host-clang",
                  WORK, cl[i]);
      char what[64];
      snprintf(what, sizeof what, "clang %s", cl[i]);
      expect_output(what, rc, want);
    }
  }
  if (dy_test_have_aarch64()) {
    static const char *const a64[] = {"-march=armv8-a", "-march=armv8.2-a+dotprod"};
    for (int i = 0; i < 2; i++) {
      int rc = sh("cd %s && aarch64-linux-gnu-gcc -std=c99 -O2 -Wall -Wextra -pedantic -Werror %s "
                  "-static main.c qk.c qk_weights.c -o a64 && qemu-aarch64 -L /usr/aarch64-linux-gnu ./a64",
                  WORK, a64[i]);
      expect_output(a64[i], rc, want);
    }
  }
  if (dy_test_have("arm-none-eabi-gcc") && dy_test_have("qemu-system-arm")) {
    int rc = sh("cd %s && arm-none-eabi-gcc " M4_FLAGS " -std=c99 -O2 -Wall -Wextra -pedantic "
                "-Werror -ffreestanding -c qk.c -o qk-m4.o && "
                "arm-none-eabi-gcc " M4_FLAGS " -std=c99 -O2 -c qk_weights.c -o qkw-m4.o && "
                "arm-none-eabi-gcc " M4_FLAGS " -std=c11 -O2 -c main.c -o main-m4.o && "
                "arm-none-eabi-gcc " M4_FLAGS " -std=c11 -O2 -c %s/startup.c -o startup-m4.o && "
                "arm-none-eabi-gcc " M4_FLAGS " --specs=rdimon.specs -nostartfiles -T %s/mps2.ld "
                "startup-m4.o main-m4.o qk-m4.o qkw-m4.o -o qk-m4.elf && "
                "arm-none-eabi-objdump -d qk-m4.o | grep -q smlad && "
                "arm-none-eabi-nm qk-m4.o | grep -q ' k[0-9]*_qconv2d' && "
                QEMU_ARM " -M mps2-an386 -kernel qk-m4.elf",
                WORK, FIRMWARE, FIRMWARE);
    expect_output("Cortex-M4 (qemu-system-arm)", rc, want);
  } else {
    fprintf(stderr, "\n  SKIPPED the Cortex-M4: no arm-none-eabi-gcc or qemu-system-arm ");
  }
  free(want);
  for (int i = 0; i < q.n_out; i++)
    dy_tensor_free(out[i]);
  qprog_free(&q);
}

/* ---- the 16-pixel panel form's corners (DY_Q_PANEL16) ----
 * QuantizeLinear -> QLinearConv -> DequantizeLinear models with the
 * corners the test Program above does not reach: u8 activations and
 * output, a filter of 27 taps (not a multiple of 4), 5 and 12 output
 * channels a group (blocks of 8 with a remainder), two groups, per-tensor
 * and per-channel weight scales, 63 and 25 output pixels (a last panel
 * partly filled); and the exact-f32 depthwise form: stride 2, a 5 x 5
 * filter, a plane made in bands. `dy2stc check` compares the compiled C with the
 * executor: native (AVX-512 VNNI here), the plain-C panel form forced,
 * and the form before (-DDY_Q_PANEL16=0). */
static void write_qlinear_conv(const char *path, int c, int o, int k, int groups, int h, int w,
                               bool per_channel, int stride) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_F32, 4, (int64_t[]){1, c, h, w}, NULL);
  int cg = c / groups, nw = o * cg * k * k;
  int8_t *wv = malloc((size_t)nw);
  uint32_t r = 12345;
  for (int i = 0; i < nw; i++) {
    r = r * 1664525u + 1013904223u;
    wv[i] = (int8_t)((int)(r >> 24) - 128);
  }
  float ws[64];
  for (int i = 0; i < o; i++)
    ws[i] = 0.01f + 0.002f * (float)i;
  int32_t bias[64];
  for (int i = 0; i < o; i++)
    bias[i] = (i * 37) % 200 - 100;
  float xs = 0.05f, ys = 0.9f;
  uint8_t xz = 120, yz = 110;
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "w", 3, 4, (int64_t[]){o, cg, k, k}, wv,
                                                 (size_t)nw);
  ob_init_f32(m, "ws", 1, (int64_t[]){per_channel ? o : 1}, ws);
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "wz", 3, 1, (int64_t[]){per_channel ? o : 1},
                                                 (int8_t[64]){0}, per_channel ? (size_t)o : 1);
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "b", OB_I32, 1, (int64_t[]){o}, bias,
                                                 sizeof(int32_t) * (size_t)o);
  ob_init_f32(m, "xs", 0, NULL, &xs);
  ob_init_f32(m, "ys", 0, NULL, &ys);
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "xz", OB_U8, 0, NULL, &xz, 1);
  m->inits[m->graph.n_initializer++] = ob_tensor(m, "yz", OB_U8, 0, NULL, &yz, 1);
  ob_node(m, "QuantizeLinear", "q", 3, (const char *[]){"x", "xs", "xz"}, 1,
          (const char *[]){"xq"});
  Onnx__NodeProto *cv = ob_node(
      m, "QLinearConv", "conv", 9,
      (const char *[]){"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"}, 1,
      (const char *[]){"yq"});
  ob_attr_i(m, cv, "group", groups);
  int p = k / 2;
  ob_attr_ints(m, cv, "pads", 4, (int64_t[]){p, p, p, p});
  ob_attr_ints(m, cv, "strides", 2, (int64_t[]){stride, stride});
  ob_node(m, "DequantizeLinear", "dq", 3, (const char *[]){"yq", "ys", "yz"}, 1,
          (const char *[]){"y"});
  ob_output(m, "y", OB_F32);
  CU_ASSERT_EQUAL(ob_save(m, path), 0);
  ob_free(m);
  free(wv);
}

static void test_panel_corners(void) {
  static const struct {
    int c, o, k, groups, h, w;
    bool per_channel;
    int stride;
    const char *form; /* the kernel text the case must take */
  } cases[] = {{6, 10, 3, 2, 7, 9, false, 1, "dy_q_panel16_dot(panel"},
               {20, 12, 1, 1, 5, 5, true, 1, "dy_q_panel16_dot(panel"},
               /* depthwise: stride 2 (two phases), odd sizes; 5 x 5 on a
                * plane beyond one band, per-tensor */
               {8, 8, 3, 8, 23, 21, true, 2, "dy_q_dw16_sum(plane"},
               {4, 4, 5, 4, 200, 37, false, 1, "dy_q_dw16_sum(plane"}};
  mkdir(WORK, 0777);
  for (int i = 0; i < 4; i++) {
    char path[512], x[512];
    snprintf(path, sizeof path, WORK "/panel%d.onnx", i);
    snprintf(x, sizeof x, WORK "/panel%d_x.npy", i);
    write_qlinear_conv(path, cases[i].c, cases[i].o, cases[i].k, cases[i].groups, cases[i].h,
                       cases[i].w, cases[i].per_channel, cases[i].stride);
    int n = cases[i].c * cases[i].h * cases[i].w;
    float *xv = malloc(sizeof(float) * (size_t)n);
    for (int j = 0; j < n; j++)
      xv[j] = (float)((j * 7919) % 257) / 20.0f - 6.0f; /* beyond the u8 range at both ends */
    dy_test_write_f32(x, 4, (int64_t[]){1, cases[i].c, cases[i].h, cases[i].w}, xv);
    free(xv);
    CU_ASSERT(sh("%s compile %s --emit c -o %s/panel%d && grep -qF '%s' %s/panel%d.c",
                 DY2STC_PATH, path, WORK, i, cases[i].form, WORK, i) == 0);
    static const char *const flags[] = {"-march=native", "-DDY_Q_PANEL16=1 -DDY_NO_SIMD",
                                        "-march=native -DDY_Q_PANEL16=0"};
    for (int f = 0; f < 3; f++) {
      int rc = sh("%s check %s --input x=%s --rtol 0 --atol 0 --cflags '-O2 %s'", DY2STC_PATH,
                  path, x, flags[f]);
      if (rc)
        fprintf(stderr, "\n  panel case %d, %s: see %s/last.log\n", i, flags[f], WORK);
      CU_ASSERT_EQUAL(rc, 0);
    }
  }
}

void dy_test_register(void) {
  DY_SUITE("int8");
  DY_TEST(test_primitives);
  DY_TEST(test_multiplier);
  DY_TEST(test_round);
  DY_TEST(test_dot_paths);
  DY_TEST(test_kernels_and_executor);
  DY_TEST(test_generated_everywhere);
  DY_TEST(test_panel_corners);
}
