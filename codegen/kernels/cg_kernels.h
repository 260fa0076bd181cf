/* cg_kernels.h - codegen floor 1 (codegen/kernels/): kernel builders
 * more than one emitter uses, and the text pieces NAME.c carries:
 *
 *   emit_act.c        the activation expression, fused_elementwise tokens
 *   emit_simd.c       the SIMD and fixed-point preludes
 *   emit_mathlib.c    the libm-free math functions a kernel names
 *   emit_gemm.c       the GEMM micro-kernel's loop nest, weight packing,
 *                     run-time packing of A; its prelude, the thread prelude
 *   conv_geom.c       the geometry of a convolution
 *   emit_conv_small.c the direct conv for few channels (and its max pool)
 *   emit_winograd.c   the Winograd conv kernel
 *   emit_depthwise.c  the padded-plane depthwise kernel and its rows
 *   dwpw_band.c       a depthwise + 1x1 conv per band of rows (fused_dwpw,
 *                     fused_irb)
 *   emit_matmul.c     the matmul kernel with its bias-and-activation epilogue
 *   emit_conv.c       the conv2d kernel (GEMM, depthwise, Winograd, small,
 *                     direct) with its epilogue
 *   emit_qconv.c      the int8 conv's patch gather, its 16-pixel panel
 *                     form and the exact-f32 depthwise form (AVX-512)
 *
 * A file here includes this header (and floor 0's, cg_text.h, through it),
 * never one of a floor above; the op families (floor 2, codegen/ops/) and
 * the driver (floor 3, codegen/program/) build on it. See
 * codegen/README.md. */
#ifndef DY_CODEGEN_CG_KERNELS_H
#define DY_CODEGEN_CG_KERNELS_H

#include "cg_text.h"

/* emit_mathlib.c: the math functions of the generated C (no libm):
 * dy_expf, dy_logf, dy_log1pf, dy_expm1f, dy_sqrtf, dy_tanhf, dy_sigmoidf,
 * dy_erff, dy_powf, dy_fabsf, dy_copysignf, dy_fminf, dy_fmaxf, dy_truncf,
 * dy_floorf, dy_ceilf, dy_roundf, dy_isnanf (int), dy_select(c, a, b), and
 * the macros DY_INFINITY and DY_NAN. Emitters write these names in kernel
 * text; dy_mathlib_emit appends to out the definitions of every one that
 * code names (as a whole identifier) and of those they call, in
 * dependency order, or nothing when it names none. Errors: see the file. */
void dy_mathlib_emit(dy_buf *out, const char *code);
/* The table's names, 0 <= i < dy_mathlib_count() (for tests). */
int dy_mathlib_count(void);
const char *dy_mathlib_name(int i);

/* ---- emit_simd.c: the SIMD helpers (dy_vf, dy_f16) every vector kernel
 * uses; written once per file, before the kernels, when one uses them ---- */
void dy_cg_simd_prelude(dy_buf *out);
/* The fixed-point helpers of the quantized kernels (ir/dy_qfixed.h's
 * template text: dy_q_*), written once per file when a kernel uses them. */
void dy_cg_qfixed_prelude(dy_buf *out);

/* emit_act.c: the C expression of activation act ("" or a name of
 * ir/acts.def) applied to expression x (which may appear several times:
 * pass a variable). alpha is the act's parameter (leaky_relu's slope).
 * False if act is unknown or alpha is needed and not finite. */
bool dy_cg_act_expr(const char *act, double alpha, const char *x, char *buf,
                      size_t n);
/* Does act's formula read alpha? Has act no vector form (acts.def's AT
 * NONE: the GEMM kernels apply its formula in a loop afterwards)? */
bool dy_cg_act_uses_alpha(const char *act);
bool dy_cg_act_scalar_only(const char *act);
/* The DY_ACT_<code> (dy_simd.h) of an act applied by dy_act / dy_vact
 * (AT TILE in acts.def): "SILU", ...; NULL for the others. */
const char *dy_cg_act_tile_code(const char *act);
/* fused_elementwise token's C expression over x (and y), parenthesised
 * unless it is a name or a call; false if the token is unknown. */
bool dy_cg_ew_expr(const char *token, const char *x, const char *y, char *buf, size_t n);
/* Formula expr (acts.def's EXPR text) with the names x, y and alpha
 * replaced by the given expressions (parenthesised unless primary);
 * false if one is used but NULL or buf is too small. */
bool dy_cg_formula(const char *expr, const char *x, const char *y, const char *alpha,
                   char *buf, size_t n);

/* ---- emit_gemm.c: the GEMM micro-kernel, weight packing, loop nest ---- */

/* Rows of the GEMM tile dy_gemm_tile computes and of the micro-panels of
 * a packed A (DY_PACK_A12, DY_PACK_WINO): A(i, k) of micro-panel q at
 * a[q * DY_GEMM_MR * K + k * DY_GEMM_MR + i], read with rsa 1, csa
 * DY_GEMM_MR. One layout for every ISA: AVX-512 runs 12-row kernels, the
 * others two 6-row ones over each micro-panel. A matrix of at most 6 rows
 * is packed in one micro-panel of 6 (no flash spent on 6 zero rows). */
#define DY_GEMM_MR 12
/* The rows of the micro-panels of a packed A of `rows` rows (6 or 12). */
int dy_gemm_pack_mr(int64_t rows);

/* How a constant operand reaches its kernel: as is, or packed at compile
 * time into the layout the micro-kernel reads. */
typedef enum {
  DY_PACK_NONE,
  DY_PACK_B16,   /* matmul's B [.., K, N] (or [.., N, K] with trans): per
                  * matrix, ceil(N/16) panels of K x 16, zero-padded */
  DY_PACK_A12,   /* conv's weight [O, C/g, kh, kw]: per group, ceil(O/g/12)
                  * micro-panels of (C/g*kh*kw) x 12 (x 6 if O/g <= 6),
                  * zero-padded */
  DY_PACK_WINO,  /* a Winograd F(m x m, 3x3) conv's weight [O, C, 3, 3]
                  * (algo "winograd2/4/6", emit_winograd.c): U = G w G^T
                  * (a x a per o, c; a = m + 2), per tile position
                  * (mats = a * a) ceil(O/12) micro-panels of C x 12
                  * (x 6 if O <= 6; dy_gemm_pack_mr) */
} dy_pack_kind;

typedef struct {
  dy_pack_kind kind;
  int64_t mats;          /* matrices (B16) or groups (A12), one after another */
  int64_t rows, cols;    /* per matrix: K x N (B16), O/g x C/g*kh*kw (A12), O x C (WINO) */
  bool trans;            /* B16 from a [N, K] weight (transpose_y) */
} dy_pack;

/* How input i of op is passed (the kernel and NAME_run agree through this). */
dy_pack dy_gemm_pack_of(const dy_program *p, const dy_op *op, int i);
int64_t dy_pack_numel(const dy_pack *k);
/* The packed copy of src (rows x cols per matrix, f32) into dst. */
void dy_gemm_pack_data(const dy_pack *k, const float *src, float *dst);
const char *dy_pack_suffix(const dy_pack *k);          /* "_p16", "_p12", "_w16/36/64" */
void dy_pack_describe(const dy_pack *k, char *buf, size_t n);

/* The preludes NAME.c carries when its kernels use them (the driver
 * writes them, after the kernels: dy_cg_ctx.uses). */
/* The flag constants, dy_gemm_out, the micro-kernels of the tile heights
 * the file's kernels recorded (uses: DY_USES_GEMM_ROW bits, dy_cg_gemm_rows;
 * none recorded: every height): dy_gemm_ukr1..6 for the 6-row path, on
 * AVX-512 (DY_VW 16) the wide ones unless narrow (--plain-kernels), and
 * dy_gemm_tile, which runs tiles of up to DY_GEMM_MR rows (two of 6
 * without the wide kernels) with a case per recorded height; the
 * dy_act_tile call only with DY_USES_GEMM_TILE_ACT; with pack_a (a kernel
 * packs A at run time) dy_gemm_pack_a. */
void dy_cg_gemm_prelude(dy_buf *out, bool narrow, bool pack_a, unsigned uses);
/* A kernel's dy_gemm_tile calls over m rows in steps of DY_GEMM_MR (the
 * heights DY_GEMM_MR and m % DY_GEMM_MR), m_static < 0 when m is known only
 * at run time, at most m_max (<= 0: unknown; every height). Every caller
 * of dy_gemm_tile records its heights so (DY_USES_GEMM_ROW). */
void dy_cg_gemm_rows(dy_cg_ctx *ctx, int64_t m_static, int64_t m_max);
/* <pthread.h> and dy_parallel(n, fn, arg), which runs fn over [0, n) in
 * `threads` slices (only in files of kernels compiled with --threads). */
void dy_cg_thread_prelude(dy_buf *out, int threads);
/* Kernels split work over threads when the work (multiply-adds) of one
 * call reaches this; smaller calls stay on the caller's thread. 2^20
 * (~10-20 us of work) since the per-run pool (rt/dy_thread.h) made a
 * fork/join a few us; per-call threads needed 2^23 (bench/RESULTS.md,
 * "Threads (branch pool)"). */
#define DY_THREAD_MIN_WORK (1 << 20)
/* The rows of the micro-panels of a packed A (A12, WINO) of `rows` rows:
 * the micro-kernel's MR, and the csa such an operand is read with. */
int dy_gemm_pack_mr(int64_t rows);
/* Arena scratch of a matmul (0 if none; a dy_cg_scratch_fn of matmul and
 * fused_matmul): its run-time B packed a block of columns at a time, then,
 * when A is packed (dy_gemm_a_plan_of), one MC x KC block of A per thread. */
int64_t dy_gemm_matmul_scratch(const dy_program *p, const dy_op *op, int threads);
/* The most rows of matmul op's GEMM at the Program's batch bound (-1:
 * unbounded here). */
int64_t dy_gemm_matmul_rows(const dy_program *p, const dy_op *op);
/* How a GEMM of m x k times k x n reads A (the matmul's activations):
 * packed at run time into micro-panels of DY_GEMM_MR rows, one block of mc
 * rows x kc columns at a time (in the arena's scratch), or in place through
 * its strides. m < 0: not known until run time (the batch), then the
 * emitted code packs when m >= min_m. off: --no-pack-a. */
typedef struct {
  bool packed;           /* packed (for m >= min_m), else in place      */
  int64_t mc, kc;        /* rows and depth of a block of A              */
  int64_t min_m;         /* the least m packed (checked at run time)    */
  char why[40];          /* in place: the reason ("k < 32")             */
} dy_gemm_a_plan;
dy_gemm_a_plan dy_gemm_a_plan_of(int64_t m, int64_t k, int64_t n, bool off);
/* Panels of a run-time B of depth k and n columns packed at a time. */
int64_t dy_gemm_runtime_panels(int64_t k, int64_t n);
/* The DY_GEMM_* flag of activation act ("" for none or an act without a
 * vector form, NULL if unknown; acts.def's VEC and AT), and
 * the epilogue flags of the last block of k ("DY_GEMM_BIAS_COL |
 * DY_GEMM_RELU", "0"); bias_flag may be NULL. */
const char *dy_gemm_act_flag(const char *act);
void dy_gemm_epilogue_flags(char *buf, size_t n, const char *bias_flag, const char *act);

/* One GEMM, C = act(A B + bias): C expressions for the operands, literal
 * n and k. A(i, kk) = a[i*rsa + kk*csa], B in panels at b (panel p at
 * b + p*k*16), C(i, j) = c[i*ldc + j], bias[j] (NULL: none). */
typedef struct {
  const char *m;
  int64_t n, k;
  const char *a, *rsa, *csa;
  const char *b;
  const char *c, *ldc;
  const char *bias;
  const char *act;
  double alpha;
  /* A packed at run time: ap is the scratch of one block per thread
   * (floats, dy_gemm_a_plan_of's mc x kc rounded up to DY_GEMM_MR rows);
   * NULL or a plan in place: A read through rsa, csa. m_static: m as a
   * literal, or -1 when m is an expression; m_max: the most m can be at
   * the largest batch (-1: not known) */
  const char *ap;
  int64_t m_static, m_max;
} dy_gemm_call;
dy_status dy_cg_gemm_loops(dy_cg_ctx *ctx, dy_error *err, const dy_gemm_call *g);
/* Code packing columns [j0, j0+w) of a run-time B (k x n row-major, or
 * n x k when trans) into panels at dst. */
void dy_cg_gemm_pack_b(dy_cg_ctx *ctx, const char *src, const char *dst, int64_t k,
                         int64_t n, bool trans, const char *j0, int64_t w);

/* emit_matmul.c: matmul (matmul, fused_matmul) with an optional epilogue c = act(c +
 * bias[j]) (the bias, input 2, along the last dim). act is NULL/"" or a name
 * dy_cg_act_expr knows. */
dy_status dy_cg_matmul_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias,
                                  const char *act, double alpha);

/* conv_geom.c: the geometry of a conv2d / conv2d_transpose op. */
typedef struct {
  long long c, h, w;            /* input [N, c, h, w]      */
  long long o, oh, ow;          /* output [N, o, oh, ow]   */
  long long kh, kw;
  long long sh, sw, dh, dw;     /* strides, dilations      */
  long long pt, pl;             /* top and left padding    */
  long long groups;
} dy_cg_conv_geom;
dy_cg_conv_geom dy_cg_conv_geom_of(const dy_program *p, const dy_op *op);

/* emit_conv.c: conv2d (conv2d, fused_conv2d) with an optional epilogue
 * act(conv + bias[channel] + res[element]) (inputs 2 and 3); act as for
 * dy_cg_act_expr. The scratch it needs (a dy_cg_scratch_fn of conv2d,
 * fused_conv2d and fused_conv2d_pool). */
dy_status dy_cg_conv2d_epilogue(dy_cg_ctx *ctx, dy_error *err, bool bias, bool residual,
                                const char *act, double alpha);
int64_t dy_cg_conv_scratch(const dy_program *p, const dy_op *op, int threads);
/* The GEMM's depth in nkb blocks of kc (a k0 loop opened when nkb > 1) and
 * each block's flags: DY_GEMM_ADD_C after the first (always with add_c:
 * C holds a residual), epi on the last. */
void dy_cg_gemm_kblocks_open(dy_cg_ctx *ctx, long long depth, long long nkb, long long kc,
                             bool add_c, const char *epi);
/* emit_depthwise.c: the padded-plane depthwise kernel (one channel a
 * group, stride 1 or 2 along rows, <= 49 taps: _fits), its scratch in
 * bytes, and the kernel with bias and act (as for dy_cg_act_expr). */
bool dy_cg_depthwise_padded_fits(const dy_cg_conv_geom *g);
/* Its pieces, shared with dwpw_band.c: the padded plane (hp x wp floats,
 * the input at (pt, pl), slack up to `size` floats for the lanes past the
 * last row, DY_VW <= 16); the vector form of act on `acc` ("" none, NULL:
 * no vector form); b0 and the taps' broadcasts w<i>_<j> from w[], b; one
 * output row oy (in scope, with xp, b0 and the taps) into dst[0..ow), its
 * lanes past ow stored too when `slack` (dst has 16 floats of room). */
typedef struct {
  long long hp, wp, size;
} dy_cg_dw_plane;
dy_cg_dw_plane dy_cg_dw_plane_of(const dy_cg_conv_geom *g);
const char *dy_cg_dw_vec_act(const char *act, const char *alit, char *buf, size_t n);
void dy_cg_dw_weights(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, const char *w, const char *b);
void dy_cg_dw_row(dy_cg_ctx *ctx, const dy_cg_conv_geom *g, long long wp, const char *dst,
                  const char *vact, bool slack);
int64_t dy_cg_depthwise_scratch(const dy_cg_conv_geom *g, int threads);
dy_status dy_cg_conv_depthwise_padded(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                                      bool bias, const char *act, double alpha);

/* dwpw_band.c: the pieces of fused_dwpw and fused_irb. The geometry of a
 * band: the depthwise conv g (g->c its
 * channels), o pointwise outputs; rows per band so that the panels (and
 * row_bytes more a row) fill about band_bytes; one thread's scratch: the
 * padded plane xp, the row rt, the panels pan, then `extra` floats at
 * offset `more`. */
typedef struct {
  dy_cg_conv_geom g;   /* the depthwise conv */
  long long o;         /* pointwise outputs */
  long long rows;      /* R: output rows a band (R * ow a multiple of 16) */
  long long bands, panels; /* bands an image, panels a band (at most) */
  long long ps;        /* floats a panel: C x 16 and 16 of slack */
  long long rt;        /* floats of the row buffer */
  dy_cg_dw_plane d;
  long long more;      /* offset of the caller's floats in a slice */
  long long slice;     /* floats of one thread's scratch */
  bool split;          /* items (image, band, part): part it % sp of the sp parts of
                          the 1x1 weight's micro-panels (sp a variable in scope) */
} dy_cg_dwpw_geom;
dy_cg_dwpw_geom dy_cg_dwpw_geom_of(const dy_cg_conv_geom *g, long long o, long long band_bytes,
                                   long long row_bytes, long long extra);
/* In the loop over items `it` (image, band): n, oy0, oy1 (the band's
 * output rows), and when in_rows iy0, iy1 (the input rows it reads,
 * inside the image); with k->split also q0, q1 (the part's micro-panels
 * of the 1x1 weight). */
void dy_cg_dwpw_band_head(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, bool in_rows);
/* The band's depthwise conv (weight wd, bias bd, vact as for
 * dy_cg_dw_vec_act) into the panels; src: a pointer to input row iy of
 * channel c, copied into the padded plane xp; or, src NULL, plane: a
 * pointer to channel c's padded rows of the band (its first at plane row
 * oy0 * sh, rows of k->d.wp floats, read in place). */
void dy_cg_dwpw_band_dw(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, const char *vact,
                        const char *wd, const char *bd, const char *src, const char *plane);
/* The band's 1x1 conv: packed weight wp times the panels into the output, bias
 * bp, residual res (NULL: none), epilogue flags epi. */
void dy_cg_dwpw_band_pw(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, const char *epi,
                        const char *alit, const char *wp, const char *bp, const char *res);
/* C (rows [0, m), or with parts those of micro-panels [q0, q1) in scope;
 * at c: an expression in o, ldc) = act(a b + bias),
 * a packed DY_PACK_A12 weight m x depth, b a panel of depth x 16 (nr
 * columns, in scope), bias by row; the depth in blocks of 512 (the last
 * with epi; add_c: C holds what the first adds to). */
void dy_cg_gemm_packed_tiles(dy_cg_ctx *ctx, long long m, long long depth, const char *a,
                             const char *b, const char *c, long long ldc, const char *bias,
                             const char *alit, bool add_c, const char *epi, bool parts);
/* The kernel: the items `it` over the images' bands, items() emitting
 * one's body (xp zeroed and the lines pre, when not NULL, before the loop;
 * one thread, or a worker per --threads given the n_in inputs, the output,
 * and its slice of the scratch); work: the multiply-adds an image, for
 * the threads' threshold. With k->split (and --threads), when an image's
 * bands are fewer than the threads (a 7x7 map at batch 1 is one band),
 * each item is split in DY_THREADS parts of the 1x1 weight, each part
 * computing the band's depthwise output again. */
void dy_cg_dwpw_kernel(dy_cg_ctx *ctx, const dy_cg_dwpw_geom *k, int n_in, long long work,
                       const char *pre, void (*items)(dy_cg_ctx *ctx, const void *arg),
                       const void *arg);

/* emit_winograd.c: a fused_conv2d with a Winograd algo ("winograd2/4/6"),
 * the weight packed as DY_PACK_WINO: F(m x m, 3x3) on the micro-kernel,
 * bias, residual and act in the output transform; its scratch (bytes) for
 * m and nimg images a call (the static batch, else -1). */
dy_status dy_cg_conv_winograd(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g,
                              bool bias, bool residual, const char *act, double alpha);
int64_t dy_cg_winograd_scratch(const dy_cg_conv_geom *g, int m, int64_t nimg);
/* emit_conv_small.c: the direct kernel for few channels (algo "small";
 * stride 1, dilation 1, groups 1, the weight unpacked), with the bias, a
 * residual (not with pool) and act, or a max pool after act (pool not
 * NULL: window kh x kw, strides sh, sw, no padding, output oh x ow). Its
 * geometry from the weight and attributes (the output of
 * fused_conv2d_pool is the pooled one), and its scratch in bytes. */
typedef struct {
  long long kh, kw, sh, sw, oh, ow;
} dy_cg_pool_geom;
dy_status dy_cg_conv_small(dy_cg_ctx *ctx, dy_error *err, const dy_cg_conv_geom *g, bool bias,
                           bool residual, const char *act, double alpha,
                           const dy_cg_pool_geom *pool);
dy_cg_conv_geom dy_cg_conv_small_geom(const dy_program *p, const dy_op *op);
int64_t dy_cg_conv_small_scratch(const dy_program *p, const dy_op *op, int threads);
/* The pool of a fused_conv2d_pool into *pg; false for other ops. */
bool dy_cg_conv_small_pool(const dy_program *p, const dy_op *op, dy_cg_pool_geom *pg);

/* emit_qconv.c: the int8 convolution's pieces (emit_quant.c's qconv2d and
 * conv_integer). interior: the outputs whose every tap is inside the input,
 * [lo, hi) per dim (0 rows, 1 columns), false when none; index_type: the
 * loops' index type inside one sample (int_fast32_t when a sample's x and
 * y fit in 31 bits, else int64_t); open_sample: the batch loop (closed
 * by dy_cg_end), xb = sample n of x; gather: output pixel (oy, ox)'s taps
 * (ci, ky, kx) into dst[0, k) in a local t (padding = the local xz);
 * panel16: qconv2d's 16-pixel panel form (the file's header), for
 * constant i8 weights a->w with zero zero points, requantized through
 * the right-shift tables. */
typedef struct {
  const char *w, *bias, *y; /* the weight, bias and output names */
  bool per_channel;         /* mult / rshift per output channel */
  bool x_s8, y_u8;          /* the activations' and the output's dtypes */
} dy_qconv_panel_args;
bool dy_qconv_interior(const dy_conv_geom *g, long long lo[2], long long hi[2]);
const char *dy_qconv_index_type(const dy_conv_geom *g);
void dy_qconv_open_sample(dy_cg_ctx *ctx, const dy_conv_geom *g);
void dy_qconv_gather(dy_cg_ctx *ctx, const dy_conv_geom *g, const char *dst);
void dy_qconv_panel16(dy_cg_ctx *ctx, const dy_conv_geom *g, const dy_qconv_panel_args *a);
/* The depthwise form beside them (the file's comment): whether g takes it,
 * and its kernel text (the same names as panel16's). */
bool dy_qconv_dw16_fits(const dy_conv_geom *g);
void dy_qconv_dw16(dy_cg_ctx *ctx, const dy_conv_geom *g, const dy_qconv_panel_args *a);

#endif /* DY_CODEGEN_CG_KERNELS_H */
