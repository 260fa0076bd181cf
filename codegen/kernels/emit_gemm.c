/* emit_gemm.c - floor 1: the GEMM micro-kernel, weight packing and the
 * blocked loop nest that matmul, linear (fused_matmul) and convolution
 * share.
 *
 * C[m x n] = A[m x k] * B[k x n] is computed as in BLIS/GotoBLAS, with B
 * in *panels* of 16 columns: panel p holds B[0..k)[16p..16p+16) row after
 * row, 16 floats per k, zero-padded past n. A micro-kernel keeps a tile of
 * up to 12 rows x 16 columns of C in registers, and for each k broadcasts
 * one A value per row and multiplies it into one row of the panel:
 *
 *   for k < kc:  b = panel[k][0..16);  c[i][0..16) += a[i][k] * b  (i < 12)
 *
 * On AVX-512 a row is one zmm register, and the 12 accumulators (of 32
 * registers) keep both FMA ports busy through their 4-cycle latency (6
 * could not: ~86% of peak against ~97% measured for 12, in L1). The other
 * ISAs (AVX2: a row is 2 of 16 ymm registers) run a 12-row tile as two
 * 6-row kernels, and so does --plain-kernels (dy_cg_gemm_prelude's
 * narrow), to compare. A scalar FPU (DY_VW == 1: the Cortex-M4F/M7 with 32
 * single registers) cannot hold a row of 16: its kernels (put_ukr_scalar)
 * take the tile a group of 4, 8 or 16 columns at a time, at most 24
 * accumulators with the rows' A values beside them, one fused
 * multiply-add an element (dy_vfma is fmaf there). On the simulated M4
 * that took ResNet-8's float convs from ~4.5 to ~2.2 instructions per
 * multiply-add (bench/RESULTS.md, "Float on the Cortex-M4").
 *
 * then adds C itself (a later block of k), the bias and the activation
 * while the tile is still in registers, and stores it (the first nr <= 16
 * columns). A is read in place through two strides, A(i, k) = a[i*rsa +
 * k*csa], so a row-major, a transposed or a packed A all work.
 *
 *   constant B (matmul, linear)  packed at compile time (DY_PACK_B16) into
 *                                a static const array the kernel reads
 *   run-time B (attention)       packed by the kernel into arena scratch
 *   convolution                  the weight is A, packed at compile time
 *                                into micro-panels of 12 rows (DY_PACK_A12:
 *                                a[k*12 + i]); each 16-pixel panel of the
 *                                im2col matrix is gathered into scratch
 *
 * Loop nest around the micro-kernel (per matrix; shapes are literals, only
 * the rows m may be the run-time batch): blocks of k of at most 512 (a
 * panel's block stays in L1), blocks of 96 rows (A's block stays in L2),
 * the panels, then tiles of 12 rows; the last tile takes 1..11 rows, the
 * last panel 1..16 columns. A matmul's A (its activations) is packed at
 * run time, when that pays (dy_gemm_a_plan_of: m >= 96, k >= 32, n >=
 * 177), one block of rows x k at a time into micro-panels of 12 rows in
 * the op's scratch (dy_gemm_pack_a, one block per thread), so every panel
 * reads one stream instead of 12 rows DY_GEMM_MR apart in memory (at 1024
 * columns those rows also stride L2 sets); --no-pack-a keeps A in place
 * with the same blocks. The 1- and 2-row kernels unroll k into 4 and 2
 * sets of accumulators, so a GEMV (batch 1) is not bound by FMA latency.
 *
 * The micro-kernels are written once per file (dy_cg_gemm_prelude) over
 * the dy_f16 helpers of emit_simd.c, so the same text uses AVX-512, AVX2,
 * SSE2, NEON or plain C. relu, relu6 and leaky_relu are applied in the
 * registers; sigmoid, tanh, gelu and silu on the stored tile, still in L1,
 * by the vector math of emit_simd.c.
 *
 * With --threads N (dy_codegen_options.threads > 1) a GEMM's panels, or a
 * convolution's (image, 16-pixel panel) pairs of the whole batch, are split
 * over N threads in one dy_parallel call per kernel (dy_cg_thread_prelude):
 * the loop nest goes into a worker function written in front of the
 * kernel, over a range of items, and each thread gathers im2col panels
 * (and pads images) in its own slice of the scratch. The threads are a
 * pool per NAME_run call (rt/dy_thread.h: started by the run's first split,
 * joined at its end; the generated code keeps no state between calls), a
 * fork/join costs a few us, so a call with less than DY_THREAD_MIN_WORK
 * multiply-adds stays on one thread. Without --threads no thread code is
 * written at all.
 */
#include <stdio.h>
#include <string.h>

#include "cg_kernels.h"
#include "templates.h"

enum {
  MR = DY_GEMM_MR, /* rows of the register tile (AVX-512) and of packed A */
  MR6 = 6,     /* rows of the other ISAs' tile (and --plain-kernels') */
  NR = 16,     /* columns: the panel width                          */
  KC = 512,    /* the longest block of k                            */
  MC = 96,     /* rows per block of A                               */
  MIN_PACK = 256,          /* pack constant B of at least this many floats */
  SCRATCH_B = 256 * 1024,  /* run-time packed B: at most this many bytes   */
  /* A packed at run time (matmul's activations; measured against OpenBLAS
   * at 64..1024 and the transformer's shapes, bench/RESULTS.md "Matmul
   * with packed activations": MC 48..384 x KC 256..512 tried, these won): */
  KC_A = 512,    /* the longest block of k                            */
  MC_A = 96,     /* rows per packed block (a multiple of MR)          */
  A_MIN_M = 96,  /* pack when A has at least this many rows (a whole  */
                 /* block: A of 64 rows x 128 is in L1, where read in */
                 /* place it ran as fast as packed, the transformer)  */
  A_MIN_K = 32,  /* ... this depth                                    */
  A_MIN_NP = 12, /* ... and B this many panels: the block is packed   */
                 /* once and read by every panel, so packing pays off */
                 /* only when there are enough (n 128: none gained)   */
};

#define L(...) dy_cg_line(ctx, __VA_ARGS__)
#define OPEN(...) (dy_cg_line(ctx, __VA_ARGS__), ctx->indent++)
#define CLOSE() (ctx->indent--, dy_cg_line(ctx, "}"))
#define FOR(...) dy_cg_for(ctx, __VA_ARGS__)
#define END() dy_cg_end(ctx)

typedef long long ll;

/* ------------------------------------------------------------------ */
/* The micro-kernels, once per file                                    */
/* ------------------------------------------------------------------ */

/* The flags and dy_gemm_out come from the template rt/dy_gemm.h; the
 * micro-kernels are unrolled here. */

/* The k loops of a micro-kernel: k unrolled u times (accumulators c<i>
 * and c<i>_<s>), then one k at a time; A(i, k) read as a<i>[k * csa], or
 * packed as a[k * csa + i] under csa == MR (the rows side by side: one
 * pointer, offsets the compiler knows, and the next block prefetched). */
static void put_k_loops(dy_buf *o, int mr, int u, bool packed, const char *ind) {
  for (int pass = u > 1 ? 0 : 1; pass < 2; pass++) {
    int w = pass == 0 ? u : 1;
    if (w > 1)
      dy_buf_printf(o, "%sfor (; k + %d <= kc; k += %d, b += %d) {\n", ind, w, w, 16 * w);
    else
      dy_buf_printf(o, "%sfor (; k < kc; k++, b += 16) {\n", ind);
    for (int s = 0; s < w; s++)
      dy_buf_printf(o, "%s  const dy_f16 b%d = dy_f16_load(b%s);\n", ind, s,
                    s == 0 ? "" : s == 1 ? " + 16" : s == 2 ? " + 32" : " + 48");
    for (int s = 0; s < w && packed; s++)
      dy_buf_printf(o, "%s  DY_GEMM_PREFETCH(a, ((uintptr_t)kc + k%s) * %d);\n", ind,
                    s == 0 ? "" : s == 1 ? " + 1" : s == 2 ? " + 2" : " + 3", 4 * MR);
    for (int s = 0; s < w; s++)
      for (int i = 0; i < mr; i++) {
        char acc[16], kk[16];
        snprintf(acc, sizeof acc, s ? "c%d_%d" : "c%d", i, s);
        snprintf(kk, sizeof kk, s ? "(k + %d)" : "k", s);
        if (packed)
          dy_buf_printf(o, "%s  %s = dy_f16_fma(%s, a[%s * csa + %d], b%d);\n", ind, acc, acc, kk,
                        i, s);
        else
          dy_buf_printf(o, "%s  %s = dy_f16_fma(%s, a%d[%s * csa], b%d);\n", ind, acc, acc, i,
                        kk, s);
      }
    dy_buf_printf(o, "%s}\n", ind);
  }
}

/* One micro-kernel of mr rows, k unrolled u times (u sets of accumulators,
 * summed at the end), named dy_gemm_ukr<mr> or, when unrolled on AVX-512
 * only, dy_gemm_ukr<mr>x<u>. The AVX-512 ones (avx512) also have k loops
 * for A packed in micro-panels of MR rows (rsa 1, csa MR), the weights of
 * convolutions. tile_act: some kernel of the file asks for an activation
 * on the stored tile (DY_GEMM_ACT), so the kernel calls dy_act_tile. */
static void put_ukr(dy_buf *o, int mr, int u, bool avx512, bool tile_act) {
  char name[32];
  snprintf(name, sizeof name, avx512 && mr <= MR6 ? "%dx%d" : "%d", mr, u);
  dy_buf_printf(o,
                "DY_GEMM_KERNEL void dy_gemm_ukr%s(int kc, const float *restrict a, int64_t rsa,\n"
                "                         int64_t csa, const float *restrict b, float *restrict c,\n"
                "                         int64_t ldc, int nr, int flags,\n"
                "                         const float *restrict bias, float alpha) {\n",
                name);
  for (int i = 0; i < mr; i++) {
    if (i == 0)
      dy_buf_puts(o, "  const float *a0 = a");
    else
      dy_buf_printf(o, ", *a%d = a + %d * rsa", i, i);
  }
  dy_buf_puts(o, ";\n");
  for (int s = 0; s < u; s++) {
    dy_buf_puts(o, "  dy_f16 ");
    for (int i = 0; i < mr; i++) {
      if (s == 0 && i == 0)
        dy_buf_puts(o, "c0 = dy_f16_set(0.0f)");
      else if (s == 0)
        dy_buf_printf(o, ", c%d = c0", i);
      else
        dy_buf_printf(o, "%sc%d_%d = c0", i ? ", " : "", i, s);
    }
    dy_buf_puts(o, ";\n");
  }
  dy_buf_puts(o, "  int k = 0;\n");
  if (mr == 1)
    dy_buf_puts(o, "  (void)rsa;\n  (void)ldc;\n");
  if (avx512) {
    dy_buf_printf(o, "  if (rsa == 1 && csa == %d) { /* A packed in micro-panels */\n", MR);
    put_k_loops(o, mr, u, true, "    ");
    dy_buf_puts(o, "  } else {\n");
    put_k_loops(o, mr, u, false, "    ");
    dy_buf_puts(o, "  }\n");
  } else {
    put_k_loops(o, mr, u, false, "  ");
  }
  for (int s = 1; s < u; s++)
    for (int i = 0; i < mr; i++)
      dy_buf_printf(o, "  c%d = dy_f16_add(c%d, c%d_%d);\n", i, i, i, s);
  for (int i = 0; i < mr; i++) {
    char row[32];
    if (i < 2)
      snprintf(row, sizeof row, "%s", i == 0 ? "c" : "c + ldc");
    else
      snprintf(row, sizeof row, "c + %d * ldc", i);
    dy_buf_printf(o, "  dy_gemm_out(%s, c%d, nr, flags, bias, %d, alpha);\n", row, i, i);
  }
  if (tile_act)
    dy_buf_printf(o, "  if (flags >> 6) /* sigmoid, tanh, gelu, silu: on the stored tile */\n"
                     "    dy_act_tile(c, ldc, %d, nr, flags >> 6);\n", mr);
  dy_buf_puts(o, "}\n\n");
}

/* The columns a scalar kernel of mr rows keeps in registers at once: at
 * most 24 accumulators, so that with the mr values of A and one of B they
 * fit the 32 single registers of a Cortex-M4F/M7 FPU (a 16-wide row each
 * would be 16 x mr, which spills every accumulator at every k). */
static int scalar_cols(int mr) { return mr == 1 ? 16 : mr <= 3 ? 8 : 4; }

/* dy_gemm_ukr<mr> for one float per register (DY_VW == 1: a scalar FPU,
 * the Cortex-M class): the tile in groups of scalar_cols(mr) columns, each
 * group's accumulators in registers over all of k, then the epilogue
 * (dy_gemm_outs) and, as put_ukr's kernels, an activation on the stored
 * tile. A packed (rsa 1: a convolution's weight, rows side by side at each
 * k) is read through one pointer with the rows at fixed offsets, which the
 * FPU's loads take as immediates; any other A through a pointer per row.
 * Each c[i][j] sums over k in order. */
static void put_ukr_scalar(dy_buf *o, int mr, bool tile_act) {
  const int cw = scalar_cols(mr);
  dy_buf_printf(o,
                "DY_GEMM_KERNEL void dy_gemm_ukr%d(int kc, const float *restrict a, int64_t rsa,\n"
                "                         int64_t csa, const float *restrict b, float *restrict c,\n"
                "                         int64_t ldc, int nr, int flags,\n"
                "                         const float *restrict bias, float alpha) {\n"
                "  for (int j0 = 0; j0 < nr; j0 += %d) { /* %d columns of the tile at a time */\n",
                mr, cw, cw);
  for (int i = 0; i < mr; i++)
    for (int j = 0; j < cw; j++)
      dy_buf_printf(o, "%sc%d_%d = 0.0f%s", j == 0 ? "    float " : j % 8 ? ", " : ",\n          ",
                    i, j, j == cw - 1 ? ";\n" : "");
  dy_buf_puts(o, "    const float *bk = b + j0;\n");
  for (int packed = 1; packed >= 0; packed--) {
    if (packed) {
      dy_buf_puts(o, "    if (rsa == 1) { /* A packed */\n"
                     "      const float *ap = a;\n");
    } else {
      dy_buf_puts(o, "    } else {\n");
      dy_buf_puts(o, "      const float *p0 = a");
      for (int i = 1; i < mr; i++)
        dy_buf_printf(o, ", *p%d = a + %d * rsa", i, i);
      dy_buf_puts(o, ";\n");
    }
    dy_buf_printf(o, "      for (int k = 0; k < kc; k++, bk += 16%s) {\n",
                  packed ? ", ap += csa" : "");
    dy_buf_puts(o, "        const float");
    for (int i = 0; i < mr; i++)
      dy_buf_printf(o, packed ? "%s x%d = ap[%d]" : "%s x%d = *p%d", i ? "," : "", i, i);
    dy_buf_puts(o, ";\n");
    if (!packed) {
      dy_buf_puts(o, "       ");
      for (int i = 0; i < mr; i++)
        dy_buf_printf(o, " p%d += csa;", i);
      dy_buf_puts(o, "\n");
    }
    for (int j = 0; j < cw; j++) { /* column j: one value of B, mr multiply-adds */
      dy_buf_printf(o, "        %sy = bk[%d];", j == 0 ? "float " : "", j);
      for (int i = 0; i < mr; i++)
        dy_buf_printf(o, "%sc%d_%d = dy_vfma(x%d, y, c%d_%d);",
                      i % 2 == 0 ? "\n        " : " ", i, j, i, i, j);
      dy_buf_puts(o, "\n");
    }
    dy_buf_puts(o, "      }\n");
  }
  dy_buf_printf(o, "    }\n"
                   "    const int n = nr - j0 < %d ? nr - j0 : %d;\n", cw, cw);
  for (int i = 0; i < mr; i++) {
    dy_buf_printf(o, "    const float r%d[%d] = {", i, cw);
    for (int j = 0; j < cw; j++)
      dy_buf_printf(o, "%sc%d_%d", j ? ", " : "", i, j);
    dy_buf_printf(o, "};\n    dy_gemm_outs(c + %d * ldc + j0, r%d, n, flags, bias, %d, j0, alpha);\n",
                  i, i, i);
  }
  dy_buf_puts(o, "  }\n");
  if (tile_act)
    dy_buf_printf(o, "  if (flags >> 6) /* sigmoid, tanh, gelu, silu: on the stored tile */\n"
                     "    dy_act_tile(c, ldc, %d, nr, flags >> 6);\n", mr);
  dy_buf_puts(o, "}\n\n");
}

/* k unrolled on AVX-512 for a tile of mr rows: at least 8 accumulators
 * (2 FMA ports x 4 cycles of latency) for 2..7 rows. */
static int avx512_unroll(int mr) { return mr >= 8 ? 1 : (8 + mr - 1) / mr; }

/* The name of the kernel of mr rows (avx512: of the wide set). */
static void ukr_name(char *buf, size_t n, int mr, bool avx512) {
  if (avx512 && mr > 1 && mr <= MR6)
    snprintf(buf, n, "%dx%d", mr, avx512_unroll(mr));
  else
    snprintf(buf, n, "%d", mr);
}

/* dy_gemm_tile's switch over the kernels of `need` (bit mr: a tile of mr
 * rows reaches it; avx512: the AVX-512 ones, unrolled for 2..6 rows). A
 * height no kernel of the file passes has no case. */
static void put_switch(dy_buf *out, unsigned need, bool avx512, const char *ind) {
  dy_buf_printf(out, "%sswitch (mr) {\n", ind);
  int top = 0;
  for (int mr = 1; mr <= MR; mr++)
    if (need & (1u << mr))
      top = mr;
  for (int mr = 1; mr <= top; mr++) {
    if (!(need & (1u << mr)))
      continue;
    char name[32];
    ukr_name(name, sizeof name, mr, avx512);
    if (mr == top)
      dy_buf_printf(out, "%sdefault:\n", ind);
    else
      dy_buf_printf(out, "%scase %d:\n", ind, mr);
    dy_buf_printf(out,
                  "%s  dy_gemm_ukr%s((int)kc, a, rsa, csa, b, c, ldc, nr, flags, bias, alpha);\n",
                  ind, name);
    if (mr != top)
      dy_buf_printf(out, "%s  break;\n", ind);
  }
  dy_buf_printf(out, "%s}\n", ind);
}

void dy_cg_gemm_rows(dy_cg_ctx *ctx, int64_t m_static, int64_t m_max) {
  unsigned u = 0;
  if (m_static > 0) {
    if (m_static >= MR)
      u |= DY_USES_GEMM_ROW(MR);
    if (m_static % MR)
      u |= DY_USES_GEMM_ROW(m_static % MR);
  } else if (m_static < 0) {
    int64_t top = m_max > 0 && m_max < MR ? m_max : MR;
    for (int64_t r = 1; r <= top; r++)
      u |= DY_USES_GEMM_ROW(r);
  }
  *ctx->uses |= u;
}

/* The 6-row path for the tile heights of rows (bit mr): a height h above
 * 6 runs as 6 rows, then min(h, 12) - 6 (the heights its switch gets);
 * the kernels it calls are those and the 6-row one. */
static unsigned narrow_switch(unsigned rows) {
  unsigned k = 0;
  for (int mr = 1; mr <= MR; mr++)
    if (rows & (1u << mr))
      k |= mr > MR6 ? 1u << (mr - MR6) : 1u << mr;
  return k;
}
static bool narrow_splits(unsigned rows) { return (rows & ~((2u << MR6) - 1u)) != 0; }

void dy_cg_gemm_prelude(dy_buf *out, bool narrow, bool pack_a, unsigned uses) {
  /* bit mr of rows: some kernel passes dy_gemm_tile a tile of mr rows */
  unsigned rows = ((uses & DY_USES_GEMM_ROWS) >> 7) & ~1u;
  if (!rows)
    rows = 0x1FFEu; /* not recorded: every height */
  bool tile_act = (uses & DY_USES_GEMM_TILE_ACT) != 0;
  unsigned nk = narrow_switch(rows) | (narrow_splits(rows) ? 1u << MR6 : 0u), wk = rows;
  char list[64] = "";
  for (int mr = 1, n = 0; mr <= MR; mr++)
    if (rows & (1u << mr))
      n += snprintf(list + n, sizeof list - (size_t)n, "%s%d", n ? ", " : "", mr);
  dy_tpl_put(out, dy_tpl_gemm, 0, -1, NULL, 0);
  dy_buf_printf(out, "/* the tiles this file's kernels pass dy_gemm_tile: %s row%s; only\n"
                     " * their micro-kernels are written */\n", list,
                strcmp(list, "1") ? "s" : "");
  if (!narrow) {
    dy_buf_printf(out, "#if DY_VW == 16 /* AVX-512: a row of the tile is one of 32 registers */\n"
                       "#define DY_GEMM_WIDE 1\n"
                       "/* A packed is read as one stream: the kernels fetch the next block (at\n"
                       " * byte offset off of p) into L2 while this one is in L1 */\n"
                       "#if defined(__GNUC__)\n"
                       "#define DY_GEMM_PREFETCH(p, off) \\\n"
                       "  __builtin_prefetch((const void *)((uintptr_t)(p) + (uintptr_t)(off)), 0, 2)\n"
                       "#else\n"
                       "#define DY_GEMM_PREFETCH(p, off) ((void)0)\n"
                       "#endif\n\n");
    if (wk & 2u) /* a GEMV: bound by reading B, on every ISA */
      put_ukr(out, 1, 4, false, tile_act);
    for (int mr = 2; mr <= MR; mr++)
      if (wk & (1u << mr))
        put_ukr(out, mr, avx512_unroll(mr), true, tile_act);
    dy_buf_puts(out, "#else /* the other ISAs: up to 6 rows */\n\n");
  }
  if (!narrow) {
    dy_buf_puts(out, "#if DY_VW == 1 /* a scalar FPU (Cortex-M): a few columns at a time */\n\n");
    for (int mr = 1; mr <= MR6; mr++)
      if (nk & (1u << mr))
        put_ukr_scalar(out, mr, tile_act);
    dy_buf_puts(out, "#else /* SSE2, AVX2, NEON: rows of 16 floats in 2 or 4 registers */\n\n");
  }
  for (int mr = 1; mr <= MR6; mr++)
    if (nk & (1u << mr))
      put_ukr(out, mr, mr == 1 ? 4 : mr == 2 ? 2 : 1, false, tile_act);
  if (!narrow)
    dy_buf_puts(out, "#endif\n#endif\n\n");
  dy_buf_printf(out,
                "/* The micro-kernel for mr rows (more than %d: the first %d)%s. */\n"
                "DY_HELPER void dy_gemm_tile(int64_t mr, int64_t kc, const float *a,\n"
                "                            int64_t rsa, int64_t csa, const float *b,\n"
                "                            float *c, int64_t ldc, int nr, int flags,\n"
                "                            const float *bias, float alpha) {\n",
                MR, MR, narrow ? ": 6-row kernels" : "; without the wide kernels two of 6 rows");
  if (!narrow) {
    dy_buf_puts(out, "#if defined(DY_GEMM_WIDE)\n");
    put_switch(out, wk, true, "  ");
    dy_buf_puts(out, "#else\n");
  }
  if (narrow_splits(rows))
    dy_buf_printf(out,
                  "  if (mr > %d) { /* the first %d rows, then the rest */\n"
                  "    dy_gemm_ukr%d((int)kc, a, rsa, csa, b, c, ldc, nr, flags, bias, alpha);\n"
                  "    a += %d * rsa, c += %d * ldc, mr = mr > %d ? %d : mr - %d;\n"
                  "    if (flags & DY_GEMM_BIAS_ROW)\n"
                  "      bias += %d;\n"
                  "  }\n",
                  MR6, MR6, MR6, MR6, MR6, MR, MR6, MR6, MR6);
  put_switch(out, narrow_switch(rows), false, "  ");
  if (!narrow)
    dy_buf_puts(out, "#endif\n");
  dy_buf_puts(out, "}\n\n");
  if (!pack_a)
    return;
  /* (the text assumes DY_GEMM_MR 12: three groups of 4 rows) */
  dy_buf_puts(
      out,
      "/* A's rows [0, mr) x columns [0, kc), A(i, k) = a[i*rsa + k*csa], packed\n"
      " * into micro-panels of 12 rows at ap: A(i, k) at ap[(i / 12) * 12 * kc +\n"
      " * k * 12 + i % 12], which dy_gemm_tile reads with rsa 1, csa 12 (a\n"
      " * matmul's activations, a block at a time). The last panel's rows past\n"
      " * mr are not read by any kernel (written as zero only by the strided\n"
      " * form). On AVX-512 a whole panel of\n"
      " * rows of A is transposed 16 columns at a time in registers: per 4 rows,\n"
      " * two rounds of unpacks make each 128-bit lane one column's 4 rows. */\n"
      "DY_HELPER void dy_gemm_pack_a(float *restrict ap, const float *restrict a,\n"
      "                              int64_t rsa, int64_t csa, int64_t mr, int64_t kc) {\n"
      "  for (int64_t q = 0; q < mr; q += 12, ap += 12 * kc) {\n"
      "    const int64_t h = mr - q < 12 ? mr - q : 12;\n"
      "    const float *s = a + q * rsa;\n"
      "    int64_t k = 0;\n"
      "    if (csa != 1) { /* e.g. transposed: the panel's rows at each k (zero\n"
      "                     * past mr, which also keeps gcc from a memmove) */\n"
      "      for (; k < kc; k++)\n"
      "        for (int64_t i = 0; i < 12; i++)\n"
      "          ap[k * 12 + i] = i < h ? s[i * rsa + k * csa] : 0.0f;\n"
      "      continue;\n"
      "    }\n"
      "#if defined(DY_GEMM_WIDE)\n"
      "    for (; h == 12 && k + 16 <= kc; k += 16)\n"
      "      for (int g = 0; g < 3; g++) {\n"
      "        const float *r = s + 4 * g * rsa + k;\n"
      "        const __m512 r0 = _mm512_loadu_ps(r), r1 = _mm512_loadu_ps(r + rsa);\n"
      "        const __m512 r2 = _mm512_loadu_ps(r + 2 * rsa), r3 = _mm512_loadu_ps(r + 3 * rsa);\n"
      "        const __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(r0, r1));\n"
      "        const __m512d t1 = _mm512_castps_pd(_mm512_unpackhi_ps(r0, r1));\n"
      "        const __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(r2, r3));\n"
      "        const __m512d t3 = _mm512_castps_pd(_mm512_unpackhi_ps(r2, r3));\n"
      "        __m512 u[4]; /* u[c], lane j: rows 4g..4g+3 of column k + 4j + c */\n"
      "        u[0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));\n"
      "        u[1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));\n"
      "        u[2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));\n"
      "        u[3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));\n"
      "        float *d = ap + k * 12 + 4 * g;\n"
      "        for (int c = 0; c < 4; c++) {\n"
      "          _mm_storeu_ps(d + c * 12, _mm512_castps512_ps128(u[c]));\n"
      "          _mm_storeu_ps(d + (4 + c) * 12, _mm512_extractf32x4_ps(u[c], 1));\n"
      "          _mm_storeu_ps(d + (8 + c) * 12, _mm512_extractf32x4_ps(u[c], 2));\n"
      "          _mm_storeu_ps(d + (12 + c) * 12, _mm512_extractf32x4_ps(u[c], 3));\n"
      "        }\n"
      "      }\n"
      "#endif\n"
      "    for (int64_t i = 0; i < h; i++) /* rows of A: each row's run scattered */\n"
      "      for (int64_t kk = k; kk < kc; kk++)\n"
      "        ap[kk * 12 + i] = s[i * rsa + kk];\n"
      "  }\n"
      "}\n\n");
}

/* ------------------------------------------------------------------ */
/* Packing constant operands at compile time                           */
/* ------------------------------------------------------------------ */

/* matmul's B: K, N, matrices, transposed; false if not a 2-D+ f32 weight. */
static bool matmul_b_geom(const dy_program *p, const dy_op *op, int64_t *k, int64_t *n,
                          int64_t *mats, bool *trans) {
  if (op->n_inputs < 2)
    return false;
  const dy_type *x = &p->vars[op->inputs[0]]->type, *y = &p->vars[op->inputs[1]]->type;
  if (x->dtype != DY_F32 || y->dtype != DY_F32 || y->rank < 2 || x->rank < 1)
    return false;
  *trans = dy_matmul_attrs_get(op).transpose_y != 0; /* fused_matmul too */
  int r = y->rank;
  *k = y->shape[r - (*trans ? 1 : 2)];
  *n = y->shape[r - (*trans ? 2 : 1)];
  *mats = 1;
  for (int d = 0; d < r - 2; d++)
    *mats *= y->shape[d];
  return *k > 0 && *n > 0; /* mats < 0 with a batch dim: not a weight */
}

dy_pack dy_gemm_pack_of(const dy_program *p, const dy_op *op, int i) {
  dy_pack none = {.kind = DY_PACK_NONE};
  /* fused_dwpw's pointwise weight; fused_irb's expand and project weights */
  int wi = op->kind == DY_OP_FUSED_DWPW ? 3 : op->kind == DY_OP_FUSED_IRB && i == 5 ? 5 : 1;
  if (i != wi || op->n_inputs < wi + 1)
    return none;
  const dy_var *w = p->vars[op->inputs[wi]];
  if (!w->persistable || dy_program_in_place_writer(p, w->id) || !w->data ||
      w->type.dtype != DY_F32)
    return none; /* state (a parameter training updates) is read as it is */
  if (op->kind == DY_OP_FUSED_DWPW || op->kind == DY_OP_FUSED_IRB) /* [O, C, 1, 1]: one group */
    return w->type.rank == 4 ? (dy_pack){.kind = DY_PACK_A12, .mats = 1, .rows = w->type.shape[0],
                                         .cols = w->type.shape[1]}
                             : none;
  if (op->kind == DY_OP_MATMUL || op->kind == DY_OP_FUSED_MATMUL) {
    int64_t k, n, mats;
    bool trans;
    if (!matmul_b_geom(p, op, &k, &n, &mats, &trans) || mats < 1 || k * n < MIN_PACK || n < 4)
      return none;
    return (dy_pack){.kind = DY_PACK_B16, .mats = mats, .rows = k, .cols = n, .trans = trans};
  }
  if (op->kind == DY_OP_CONV2D || op->kind == DY_OP_FUSED_CONV2D) {
    const dy_type *x = &p->vars[op->inputs[0]]->type, *wt = &w->type;
    int64_t groups = dy_conv2d_attrs_get(op).groups; /* fused_conv2d too */
    if (x->dtype != DY_F32 || x->rank != 4 || wt->rank != 4 || groups < 1 ||
        wt->shape[0] % groups != 0)
      return none;
    int64_t og = wt->shape[0] / groups, cg = wt->shape[1];
    int wm = op->kind == DY_OP_FUSED_CONV2D ? dy_winograd_tile(dy_fused_conv2d_attrs_get(op).algo)
                                            : 0;
    if (wm && groups == 1 && wt->shape[2] == 3 && wt->shape[3] == 3) /* infer checked the rest */
      return (dy_pack){.kind = DY_PACK_WINO, .mats = (wm + 2) * (wm + 2), .rows = og, .cols = cg};
    if (op->kind == DY_OP_FUSED_CONV2D && strcmp(dy_fused_conv2d_attrs_get(op).algo, "small") == 0)
      return none; /* emit_conv_small.c reads w as it is */
    if (op->kind == DY_OP_FUSED_CONV2D && strcmp(dy_fused_conv2d_attrs_get(op).algo, "gemv") == 0)
      /* one window (the pass conv-gemv): w [O, K] is B^T of y = x w^T */
      return (dy_pack){.kind = DY_PACK_B16, .mats = 1, .rows = cg * wt->shape[2] * wt->shape[3],
                       .cols = wt->shape[0], .trans = true};
    if (cg == 1 && og == 1)
      return none; /* depthwise: a direct kernel */
    return (dy_pack){.kind = DY_PACK_A12, .mats = groups, .rows = og,
                     .cols = cg * wt->shape[2] * wt->shape[3]};
  }
  return none;
}

int dy_gemm_pack_mr(int64_t rows) { return rows <= MR6 ? MR6 : MR; }

int64_t dy_pack_numel(const dy_pack *k) {
  switch (k->kind) {
  case DY_PACK_B16: return k->mats * ((k->cols + NR - 1) / NR) * NR * k->rows;
  case DY_PACK_A12:
  case DY_PACK_WINO: {
    int64_t mr = dy_gemm_pack_mr(k->rows);
    return k->mats * ((k->rows + mr - 1) / mr) * mr * k->cols;
  }
  default: return 0;
  }
}

/* Winograd F(m x m, 3x3)'s weight transform G (a x 3, a = m + 2; Lavin
 * and Gray, points 0, +-1 (m = 2), +-2 (4), +-1/2 (6), inf; B^T and A^T
 * are emit_winograd.c's). */
static const double wino_g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
static const double wino_g4[6][3] = {
    {1.0 / 4, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
static const double wino_g6[8][3] = {
    {1, 0, 0},                      {-2.0 / 9, -2.0 / 9, -2.0 / 9},
    {-2.0 / 9, 2.0 / 9, -2.0 / 9},  {1.0 / 90, 1.0 / 45, 2.0 / 45},
    {1.0 / 90, -1.0 / 45, 2.0 / 45}, {32.0 / 45, 16.0 / 45, 8.0 / 45},
    {32.0 / 45, -16.0 / 45, 8.0 / 45}, {0, 0, 1}};

/* WINO: U = G w G^T for each (o, c), in double; then per tile position q
 * = a*i + j the O x C matrix U[.][.][i][j] packed in mr-row micro-panels
 * (mr = dy_gemm_pack_mr(O)): dst[q * per + (o / mr) * mr * C + c * mr + o % mr]. */
static void pack_winograd(const dy_pack *k, const float *src, float *dst) {
  int a = k->mats == 16 ? 4 : k->mats == 36 ? 6 : 8;
  const double(*g)[3] = a == 4 ? wino_g2 : a == 6 ? wino_g4 : wino_g6;
  int64_t o_n = k->rows, c_n = k->cols, mr = dy_gemm_pack_mr(o_n), nq = (o_n + mr - 1) / mr;
  int64_t per = nq * mr * c_n;
  for (int64_t o = 0; o < nq * mr; o++)
    for (int64_t c = 0; c < c_n; c++) {
      double u[8][8] = {{0}}, t[8][3];
      if (o < o_n) {
        const float *w = src + (o * c_n + c) * 9;
        for (int i = 0; i < a; i++)
          for (int j = 0; j < 3; j++)
            t[i][j] = g[i][0] * w[j] + g[i][1] * w[3 + j] + g[i][2] * w[6 + j];
        for (int i = 0; i < a; i++)
          for (int j = 0; j < a; j++)
            u[i][j] = t[i][0] * g[j][0] + t[i][1] * g[j][1] + t[i][2] * g[j][2];
      }
      for (int q = 0; q < a * a; q++)
        dst[q * per + (o / mr) * mr * c_n + c * mr + o % mr] = (float)u[q / a][q % a];
    }
}

void dy_gemm_pack_data(const dy_pack *k, const float *src, float *dst) {
  int64_t r = k->rows, c = k->cols;
  if (k->kind == DY_PACK_WINO) {
    pack_winograd(k, src, dst);
    return;
  }
  if (k->kind == DY_PACK_B16) {
    /* B16: per matrix, panel p, row kk, column j: B[kk][16p + j] */
    int64_t np = (c + NR - 1) / NR;
    for (int64_t m = 0; m < k->mats; m++, src += r * c)
      for (int64_t pn = 0; pn < np; pn++)
        for (int64_t kk = 0; kk < r; kk++)
          for (int64_t j = 0; j < NR; j++) {
            int64_t col = pn * NR + j;
            *dst++ = col >= c ? 0.0f : k->trans ? src[col * r + kk] : src[kk * c + col];
          }
  } else if (k->kind == DY_PACK_A12) {
    /* A12: per matrix, micro-panel q, column kk, row i: A[12q + i][kk] */
    int64_t mr = dy_gemm_pack_mr(r), nq = (r + mr - 1) / mr;
    for (int64_t m = 0; m < k->mats; m++, src += r * c)
      for (int64_t q = 0; q < nq; q++)
        for (int64_t kk = 0; kk < c; kk++)
          for (int64_t i = 0; i < mr; i++) {
            int64_t row = q * mr + i;
            *dst++ = row >= r ? 0.0f : src[row * c + kk];
          }
  }
}

const char *dy_pack_suffix(const dy_pack *k) {
  switch (k->kind) {
  case DY_PACK_B16: return k->trans ? "_p16t" : "_p16";
  case DY_PACK_A12: return "_p12";
  case DY_PACK_WINO: return k->mats == 16 ? "_w16" : k->mats == 36 ? "_w36" : "_w64";
  default: return "";
  }
}

void dy_pack_describe(const dy_pack *k, char *buf, size_t n) {
  int64_t np = (k->cols + NR - 1) / NR, mr = dy_gemm_pack_mr(k->rows), nq = (k->rows + mr - 1) / mr;
  if (k->kind == DY_PACK_B16)
    snprintf(buf, n, "%s%lld panel%s of %lld x 16 (k x columns%s), zero-padded",
             k->mats > 1 ? "per matrix, " : "", (ll)np, np == 1 ? "" : "s", (ll)k->rows,
             k->trans ? ", from the transposed weight" : "");
  else if (k->kind == DY_PACK_WINO)
    snprintf(buf, n, "Winograd F(%dx%d, 3x3): G w G^T, per tile position (%lld) %lld micro-panel%s "
             "of %lld x %d (input x output channels), zero-padded",
             k->mats == 16 ? 2 : k->mats == 36 ? 4 : 6, k->mats == 16 ? 2 : k->mats == 36 ? 4 : 6,
             (ll)k->mats, (ll)nq, nq == 1 ? "" : "s", (ll)k->cols, (int)mr);
  else
    snprintf(buf, n, "%s%lld micro-panel%s of %lld x %d (k x output channels), zero-padded",
             k->mats > 1 ? "per group, " : "", (ll)nq, nq == 1 ? "" : "s", (ll)k->cols,
             (int)mr);
}

/* ------------------------------------------------------------------ */
/* Scratch                                                             */
/* ------------------------------------------------------------------ */

/* Panels of run-time B packed at once, for depth k and n columns. */
static int64_t runtime_panels(int64_t k, int64_t n) {
  int64_t np = (n + NR - 1) / NR, per = SCRATCH_B / (k * NR * 4);
  if (per < 1)
    per = 1;
  return np < per ? np : per;
}

/* The most rows matmul op's GEMM has (x's rows, with its leading dims
 * when they fold into one GEMM against a 2-D B) with the batch at most
 * batch, or -1 when another symbolic dim is among them. */
static int64_t matmul_rows(const dy_program *p, const dy_op *op, int64_t batch) {
  const dy_type *x = &p->vars[op->inputs[0]]->type, *y = &p->vars[op->inputs[1]]->type;
  bool tx = dy_matmul_attrs_get(op).transpose_x != 0 && x->rank > 1;
  int last = x->rank == 1 ? 0 : x->rank - (tx ? 1 : 2), first = last;
  if (!tx && y->rank <= 2) /* emit_matmul.c folds x's leading dims into m */
    first = 0;
  int64_t m = 1;
  for (int d = first; d <= last && x->rank > 1; d++) {
    int64_t v = x->shape[d] == -1 ? batch : x->shape[d];
    if (v < 0 || m < 0)
      return -1;
    m *= v;
  }
  return m;
}

int64_t dy_gemm_matmul_rows(const dy_program *p, const dy_op *op) {
  return matmul_rows(p, op, dy_program_sym_bound(p, 0));
}

/* The rows of a packed block of A: mc, or m rounded up to micro-panels. */
static int64_t a_block_rows(const dy_gemm_a_plan *a, int64_t m) {
  int64_t r = m >= 0 && m < a->mc ? (m + MR - 1) / MR * MR : a->mc;
  return r;
}

int64_t dy_gemm_matmul_scratch(const dy_program *p, const dy_op *op, int threads) {
  int64_t k, n, mats;
  bool trans;
  if (op->n_inputs < 2 || p->vars[op->inputs[0]]->type.dtype != DY_F32 ||
      p->vars[op->inputs[1]]->type.dtype != DY_F32)
    return 0;
  if (p->vars[op->inputs[1]]->type.rank == 1) { /* 1-D B: k x 1 */
    k = p->vars[op->inputs[1]]->type.shape[0];
    n = 1;
  } else if (!matmul_b_geom(p, op, &k, &n, &mats, &trans)) {
    return 0;
  }
  if (k <= 0)
    return 0;
  int64_t bytes = dy_gemm_pack_of(p, op, 1).kind != DY_PACK_NONE ? 0
                                                                  : runtime_panels(k, n) * NR * k * 4;
  /* A's blocks: the option is not known here, so reserved either way */
  int64_t m = dy_gemm_matmul_rows(p, op);
  dy_gemm_a_plan a = dy_gemm_a_plan_of(m, k, n, false);
  if (a.packed)
    bytes += (threads > 1 ? threads : 1) * a_block_rows(&a, m) * a.kc * 4;
  return bytes;
}

/* The depth of the blocks of k for depth k and blocks of at most most:
 * as even as the count of blocks allows. */
static int64_t k_block(int64_t k, int64_t most) {
  int64_t nkb = (k + most - 1) / most;
  return (k + nkb - 1) / nkb;
}

dy_gemm_a_plan dy_gemm_a_plan_of(int64_t m, int64_t k, int64_t n, bool off) {
  dy_gemm_a_plan a = {.packed = false, .mc = MC, .kc = k_block(k, KC), .min_m = A_MIN_M};
  if (m >= 0 && m < A_MIN_M)
    snprintf(a.why, sizeof a.why, "m < %d", (int)A_MIN_M);
  else if (k < A_MIN_K)
    snprintf(a.why, sizeof a.why, "k < %d", (int)A_MIN_K);
  else if ((n + NR - 1) / NR < A_MIN_NP)
    snprintf(a.why, sizeof a.why, "n < %d", (int)((A_MIN_NP - 1) * NR + 1));
  else /* packing pays; --no-pack-a keeps its blocks, so only A's reading differs */
    a = (dy_gemm_a_plan){.packed = !off, .mc = MC_A, .kc = k_block(k, KC_A), .min_m = A_MIN_M,
                         .why = "--no-pack-a"};
  return a;
}

bool dy_codegen_gemm_a(const dy_program *p, const dy_op *op, bool no_pack_a, char *buf,
                       size_t n) {
  int64_t k, nn, mats;
  bool trans;
  if ((op->kind != DY_OP_MATMUL && op->kind != DY_OP_FUSED_MATMUL) || op->n_inputs < 2 ||
      p->vars[op->inputs[0]]->type.dtype != DY_F32 || p->vars[op->inputs[1]]->type.rank < 2 ||
      !matmul_b_geom(p, op, &k, &nn, &mats, &trans))
    return false;
  int64_t m = dy_gemm_matmul_rows(p, op), m0 = matmul_rows(p, op, 1);
  dy_gemm_a_plan a = dy_gemm_a_plan_of(m, k, nn, no_pack_a);
  char ms[48];
  if (m >= 0 && m == m0)
    snprintf(ms, sizeof ms, "%lld", (ll)m);
  else if (m >= 0)
    snprintf(ms, sizeof ms, "m (<= %lld)", (ll)m);
  else
    snprintf(ms, sizeof ms, "m");
  if (a.packed && m != m0)
    snprintf(buf, n, "%s x %lld x %lld: A packed when m >= %lld (at run time), blocks of %lld x "
             "%lld (rows x k); --no-pack-a: in place", ms, (ll)k, (ll)nn, (ll)a.min_m, (ll)a.mc,
             (ll)a.kc);
  else if (a.packed)
    snprintf(buf, n, "%s x %lld x %lld: A packed, blocks of %lld x %lld (rows x k); --no-pack-a: "
             "in place", ms, (ll)k, (ll)nn, (ll)a_block_rows(&a, m), (ll)a.kc);
  else
    snprintf(buf, n, "%s x %lld x %lld: A in place (%s), blocks of %lld x %lld (rows x k)", ms,
             (ll)k, (ll)nn, a.why, (ll)a.mc, (ll)a.kc);
  return true;
}

/* ------------------------------------------------------------------ */
/* The loop nest                                                       */
/* ------------------------------------------------------------------ */

/* The epilogue flag of each activation (acts.def's VEC and AT): in
 * registers, on the stored tile, or none (the callers apply the formula
 * after the GEMM). */
#define FLAG_REG(VEC) "DY_GEMM_" #VEC
#define FLAG_TILE(VEC) "DY_GEMM_ACT(DY_ACT_" #VEC ")"
#define FLAG_NONE(VEC) ""
static const char *const act_flags[DY_ACTIVATION_COUNT] = {
    "",
#define DY_ACT(NAME, name, FROM, WHEN, ALPHA, EXPR, VEC, AT) FLAG_##AT(VEC),
#include "acts.def"
#undef DY_ACT
};

const char *dy_gemm_act_flag(const char *act) {
  int a = dy_act_find(act);
  return a < 0 ? NULL : act_flags[a];
}

/* "DY_GEMM_BIAS_COL | DY_GEMM_RELU" for the last block of k. */
void dy_gemm_epilogue_flags(char *buf, size_t n, const char *bias_flag, const char *act) {
  const char *a = dy_gemm_act_flag(act);
  if (!a)
    a = "";
  if (bias_flag && *a)
    snprintf(buf, n, "%s | %s", bias_flag, a);
  else if (bias_flag)
    snprintf(buf, n, "%s", bias_flag);
  else if (*a)
    snprintf(buf, n, "%s", a);
  else
    snprintf(buf, n, "0");
}

/* The loop nest of one GEMM over the panels [jp_lo, jp_hi): blocks of k,
 * blocks of rows, panels, tiles. With A packed (ap: this thread's block of
 * scratch), each block of rows x k is packed into micro-panels once, then
 * read by every panel; pk says whether it is ("1", or "m >= 12" when m is
 * only known at run time). */
static void emit_nest(dy_cg_ctx *ctx, const dy_gemm_call *g, const char *epi,
                      const char *alpha, const char *jp_lo, const char *jp_hi,
                      const dy_gemm_a_plan *pa, const char *ap) {
  ll n = g->n, k = g->k, np = (n + NR - 1) / NR, tail = n - (np - 1) * NR;
  bool packed = ap && pa->packed;
  ll kc = pa->kc, nkb = (k + kc - 1) / kc, mc = pa->mc;
  OPEN("{");
  L("const int64_t m = %s;", g->m);
  if (packed && g->m_static < 0)
    L("const int pk = m >= %lld; /* pack A's blocks (fewer rows: read in place) */",
      (ll)pa->min_m);
  if (nkb > 1) {
    FOR("for (int64_t k0 = 0; k0 < %lld; k0 += %lld) {", k, kc);
    L("const int64_t kc = %lld - k0 < %lld ? %lld - k0 : %lld;", k, kc, k, kc);
    L("const int flags = (k0 > 0 ? DY_GEMM_ADD_C : 0) | (k0 + kc == %lld ? %s : 0);", k, epi);
  } else {
    L("const int64_t kc = %lld;", k);
    L("const int flags = %s;", epi);
  }
  /* the depth offset of the block: no term when there is one block */
  const char *k0b = nkb > 1 ? " + k0 * 16" : "";
  char k0a[96] = "";
  if (nkb > 1)
    snprintf(k0a, sizeof k0a, " + k0 * %s", g->csa);
  OPEN("for (int64_t i0 = 0; i0 < m; i0 += %lld) {", mc);
  L("const int64_t i1 = m - i0 < %lld ? m : i0 + %lld;", mc, mc);
  if (packed && g->m_static < 0) {
    /* the block's A: packed, or (m < min_m at run time) in place */
    L("const float *ab = %s + i0 * %s%s;", g->a, g->rsa, k0a);
    L("const int64_t ar = pk ? kc : %s, rs = pk ? 1 : %s, cs = pk ? %d : %s;", g->rsa,
      g->rsa, MR, g->csa);
    OPEN("if (pk) {");
    L("dy_gemm_pack_a(%s, ab, %s, %s, i1 - i0, kc);", ap, g->rsa, g->csa);
    L("ab = %s;", ap);
    CLOSE();
  } else if (packed) {
    L("dy_gemm_pack_a(%s, %s + i0 * %s%s, %s, %s, i1 - i0, kc); /* the block's A */", ap, g->a,
      g->rsa, k0a, g->rsa, g->csa);
  }
  FOR("for (int64_t jp = %s; jp < %s; jp++) {", jp_lo, jp_hi);
  if (tail == NR)
    L("const int nr = 16;");
  else if (np == 1)
    L("const int nr = %lld;", tail);
  else
    L("const int nr = jp < %lld ? 16 : %lld;", np - 1, tail);
  L("const float *bp = %s + jp * %lld%s;", g->b, k * NR, k0b);
  OPEN("for (int64_t i = i0; i < i1; i += %d) {", MR);
  if (packed && g->m_static < 0)
    L("dy_gemm_tile(i1 - i, kc, ab + (i - i0) * ar, rs, cs, bp,");
  else if (packed)
    L("dy_gemm_tile(i1 - i, kc, %s + (i - i0) * kc, 1, %d, bp,", ap, MR);
  else
    L("dy_gemm_tile(i1 - i, kc, %s + i * %s%s, %s, %s, bp,", g->a, g->rsa, k0a, g->rsa, g->csa);
  if (g->bias)
    L("             %s + i * %s + jp * 16, %s, nr, flags, %s + jp * 16, %s);", g->c, g->ldc,
      g->ldc, g->bias, alpha);
  else
    L("             %s + i * %s + jp * 16, %s, nr, flags, 0, %s);", g->c, g->ldc, g->ldc,
      alpha);
  CLOSE();
  END();
  CLOSE();
  if (nkb > 1)
    END();
  CLOSE();
}

dy_status dy_cg_gemm_loops(dy_cg_ctx *ctx, dy_error *err, const dy_gemm_call *g) {
  char alpha[64] = "0.0f", epi[128], np[32];
  if (!dy_gemm_act_flag(g->act))
    return dy_cg_type_error(ctx, err, DY_STATUS_UNSUPPORTED, "unknown activation");
  if (dy_cg_act_uses_alpha(g->act) && !dy_cg_act_scalar_only(g->act) &&
      !dy_float_literal((float)g->alpha, alpha, sizeof alpha))
    return dy_cg_type_error(ctx, err, DY_STATUS_INVALID_ARGUMENT, "alpha is not finite");
  dy_gemm_epilogue_flags(epi, sizeof epi, g->bias ? "DY_GEMM_BIAS_COL" : NULL, g->act);
  snprintf(np, sizeof np, "%lld", (ll)((g->n + NR - 1) / NR));
  *ctx->uses |= DY_USES_SIMD | DY_USES_GEMM;
  dy_cg_gemm_rows(ctx, g->m_static, g->m_max);
  dy_gemm_a_plan pa = dy_gemm_a_plan_of(g->m_max, g->k, g->n, ctx->no_pack_a || !g->ap);
  int64_t a_floats = a_block_rows(&pa, g->m_max) * pa.kc; /* a thread's block of A */
  if (pa.packed)
    *ctx->uses |= DY_USES_PACK_A;
  if (pa.packed && g->m_static < 0)
    L("/* A: packed at run time, blocks of %lld x %lld (rows x k) when it has %lld rows or "
      "more */", (ll)a_block_rows(&pa, g->m_max), (ll)pa.kc, (ll)pa.min_m);
  else if (pa.packed)
    L("/* A: packed at run time, blocks of %lld x %lld (rows x k) */",
      (ll)a_block_rows(&pa, g->m_max), (ll)pa.kc);
  if (ctx->threads <= 1) {
    emit_nest(ctx, g, epi, alpha, "0", np, &pa, g->ap);
    return DY_OK;
  }

  /* threaded: a worker function over a range of panels, before the
   * kernel; the kernel hands each thread its share (dy_parallel) */
  char fn[64];
  snprintf(fn, sizeof fn, "k%d_part%d", ctx->op->id, ctx->n_parts++);
  dy_buf *w = ctx->before;
  dy_buf_printf(w,
                "/* op %d: the panels [lo, hi) of a GEMM, one thread's share */\n"
                "typedef struct {\n"
                "  const float *a, *b, *bias;\n"
                "  float *c%s;\n"
                "  int64_t m, rsa, csa;\n"
                "} %s_args;\n\n"
                "static void %s(void *arg, int64_t lo, int64_t hi, int t) {\n"
                "  const %s_args *g_ = (const %s_args *)arg;\n"
                "  const float *A = g_->a, *B = g_->b%s;\n"
                "  float *C = g_->c;\n"
                "  const int64_t rsa = g_->rsa, csa = g_->csa;\n",
                ctx->op->id, pa.packed ? ", *ap" : "", fn, fn, fn, fn,
                g->bias ? ", *BIAS = g_->bias" : "");
  if (pa.packed)
    dy_buf_printf(w, "  float *AP = g_->ap + t * %lld; /* this thread's block of A */\n",
                  (ll)a_floats);
  else
    dy_buf_puts(w, "  (void)t;\n");
  dy_cg_ctx sub = *ctx;
  sub.body = w;
  sub.indent = 1;
  dy_gemm_call wg = *g;
  wg.a = "A", wg.b = "B", wg.c = "C", wg.bias = g->bias ? "BIAS" : NULL;
  wg.m = "g_->m", wg.rsa = "rsa", wg.csa = "csa";
  emit_nest(&sub, &wg, epi, alpha, "lo", "hi", &pa, "AP");
  dy_buf_puts(w, "}\n\n");
  *ctx->uses |= DY_USES_THREADS;
  OPEN("{");
  L("%s_args args;", fn);
  L("args.a = %s, args.b = %s, args.bias = %s, args.c = %s;", g->a, g->b,
    g->bias ? g->bias : "0", g->c);
  L("args.m = %s, args.rsa = %s, args.csa = %s;", g->m, g->rsa, g->csa);
  if (pa.packed)
    L("args.ap = %s;", g->ap);
  L("if (args.m * %lld >= DY_THREAD_MIN_WORK) /* worth the threads */", (ll)(g->n * g->k));
  L("  dy_parallel(%s, %s, &args);", np, fn);
  L("else");
  L("  %s(&args, 0, %s, 0);", fn, np);
  CLOSE();
  return DY_OK;
}

/* The template rt/dy_thread.h, for `threads` threads. */
void dy_cg_thread_prelude(dy_buf *out, int threads) {
  char n[16], min_work[16];
  snprintf(n, sizeof n, "%d", threads);
  snprintf(min_work, sizeof min_work, "%d", (int)DY_THREAD_MIN_WORK);
  const dy_tpl_sub subs[] = {{"DY_TPL_THREADS", n}, {"DY_TPL_MIN_WORK", min_work}};
  dy_tpl_put(out, dy_tpl_thread, 0, -1, subs, 2);
}

/* Pack columns [j0, j0 + w) of a run-time B (row-major k x n, or n x k when
 * trans) into zero-padded panels at dst. */
void dy_cg_gemm_pack_b(dy_cg_ctx *ctx, const char *src, const char *dst, int64_t k,
                         int64_t n, bool trans, const char *j0, int64_t w) {
  ll np = (w + NR - 1) / NR;
  L("/* B's columns [%s, +%lld) into %lld panel%s of %lld x 16 */", j0, (ll)w, np,
    np == 1 ? "" : "s", (ll)k);
  FOR("for (int64_t jp = 0; jp < %lld; jp++) {", np);
  L("const int64_t jb = %s + jp * 16;", j0);
  L("const int64_t nj = %lld - jb < 16 ? %lld - jb : 16;", (ll)n, (ll)n);
  L("float *d = %s + jp * %lld;", dst, (ll)(k * NR));
  FOR("for (int64_t kk = 0; kk < %lld; kk++) {", (ll)k);
  if (trans) {
    L("int64_t j = 0;");
    L("for (; j < nj; j++) d[kk * 16 + j] = %s[(jb + j) * %lld + kk];", src, (ll)k);
    L("for (; j < 16; j++) d[kk * 16 + j] = 0.0f;");
  } else {
    L("dy_f16_store(d + kk * 16, dy_f16_loadn(%s + kk * %lld + jb, (int)nj));", src, (ll)n);
  }
  END();
  END();
}

int64_t dy_gemm_runtime_panels(int64_t k, int64_t n) { return runtime_panels(k, n); }
