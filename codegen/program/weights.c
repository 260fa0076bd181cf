/* weights.c - floor 3: the weights of NAME.c. Each persistable var read as
 * it is becomes a static const array of literals (one holding an infinity
 * or a NaN: a union of its bit patterns, read as w_<name>.f), and each
 * packed copy a GEMM or conv kernel reads instead (w_<name>_p16, _p12, ...:
 * emit_gemm.c's layouts) one more; a weight only read packed is emitted only
 * packed. With separate_weights (the CLI's way) all of them, of every
 * dtype, are words of `extern const union NAME_weights_data NAME_weights`,
 * a type complete only in NAME_weights.c (weights_file.c), and each
 * w_<name> a macro naming its place there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"
/* Weight i as a static const array of literals (a union of bit patterns
 * for an f32 one holding an infinity or a NaN). */
static dy_status emit_inline_weight(cg_gen *g, int i, dy_buf *out) {
  const dy_var *v = g->p->vars[i];
  int64_t n = dy_type_numel(&v->type);
  char ts[256];
  dy_buf_puts(out, "/* ");
  dy_buf_put_comment(out, v->name);
  dy_buf_printf(out, "  %s%s */\n", dy_type_str(&v->type, ts, sizeof ts),
                g->state[i] ? ", the initial value of its state" : "");
  if (g->bits[i]) /* an infinity or a NaN has no literal without libm */
    dy_buf_printf(out, "static const union {\n  uint32_t u[%lld];\n  float f[%lld];\n} %s = {{",
                  (long long)n, (long long)n, g->weight[i]);
  else
    dy_buf_printf(out, "static const %s %s[%lld] = {", dy_ctype(v->type.dtype),
                  g->weight[i], (long long)(n > 0 ? n : 1));
  if (n == 0)
    dy_buf_puts(out, "0"); /* C has no empty arrays; never read */
  for (int64_t j = 0; j < n; j++) {
    char lit[64];
    if (g->bits[i]) {
      uint32_t u;
      memcpy(&u, (const char *)v->data + 4 * j, 4);
      snprintf(lit, sizeof lit, "0x%08lxu", (unsigned long)u);
    } else if (v->type.dtype == DY_F32) {
      float x;
      memcpy(&x, (const char *)v->data + 4 * j, 4);
      if (!dy_float_literal(x, lit, sizeof lit))
        return dy_error_set(g->err, DY_STATUS_INTERNAL,
                            "weight '%s' element %lld has no literal", v->name,
                            (long long)j);
    } else if (v->type.dtype == DY_I64) {
      int64_t x;
      memcpy(&x, (const char *)v->data + 8 * j, 8);
      dy_int64_literal(x, lit, sizeof lit);
    } else if (v->type.dtype == DY_I32) {
      int32_t x;
      memcpy(&x, (const char *)v->data + 4 * j, 4);
      if (x == INT32_MIN)
        snprintf(lit, sizeof lit, "INT32_MIN");
      else
        snprintf(lit, sizeof lit, "%ld", (long)x);
    } else if (v->type.dtype == DY_I8) {
      snprintf(lit, sizeof lit, "%d", ((const signed char *)v->data)[j]);
    } else {
      snprintf(lit, sizeof lit, "%u", ((const unsigned char *)v->data)[j]);
    }
    dy_buf_printf(out, "%s%s", j % 8 == 0 ? "\n  " : " ", lit);
    if (j + 1 < n)
      dy_buf_putc(out, ',');
  }
  dy_buf_puts(out, g->bits[i] ? "\n}};\n\n" : n > 0 ? "\n};\n\n" : "};\n\n");
  return DY_OK;
}

/* Append nbytes bytes to NAME_weights at the next boundary of align words
 * (the last word zero-filled); its word offset in *at. */
static bool blob_add(cg_gen *g, const void *d, int64_t nbytes, int64_t align, int64_t *at) {
  int64_t start = (g->n_blob + align - 1) / align * align, n = (nbytes + 3) / 4;
  if (start + n > g->cap_blob) {
    int64_t cap = (start + n) * 2 + 16;
    uint32_t *nb = realloc(g->blob, sizeof *nb * (size_t)cap);
    if (!nb)
      return false;
    g->blob = nb;
    g->cap_blob = cap;
  }
  if (start + n > g->n_blob) /* (g->blob is still NULL before the first bytes) */
    memset(g->blob + g->n_blob, 0, sizeof *g->blob * (size_t)(start + n - g->n_blob));
  if (nbytes > 0)
    memcpy(g->blob + start, d, (size_t)nbytes);
  g->n_blob = start + n;
  *at = start;
  return true;
}

/* Where a weight of nbytes starts in NAME_weights, in words: f32 ones
 * (the SIMD kernels' loads) and any of 64 bytes or more at a 64-byte
    * boundary; small integer ones (zero points, biases of a few channels) at
 * 8 bytes, so that they do not cost a cache line of flash each. */
static int64_t blob_align(dy_dtype t, int64_t nbytes) {
  return t == DY_F32 || nbytes >= 64 ? 16 : 2;
}

/* A weight of NAME_weights: the macro naming its elements (dtype t). */
static void put_blob_define(cg_gen *g, dy_buf *out, const char *name, dy_dtype t, int64_t at) {
  if (t == DY_F32)
    dy_buf_printf(out, "#define %s (%s_WEIGHTS + %lld)\n\n", name, g->upper, (long long)at);
  else
    dy_buf_printf(out, "#define %s ((const %s *)(const void *)(%s_WEIGHTS + %lld))\n\n", name,
                  dy_ctype(t), g->upper, (long long)at);
}

/* The weights: static const arrays in NAME.c, or with separate_weights
 * macros naming their place in NAME_weights (the bytes go to g->blob),
 * every dtype (an i64 one makes the blob an even number of words, as
 * NAME_weights.c's int64_t member needs). Packed copies are in the layout
 * of the GEMM micro-kernel (emit_gemm.c). */
dy_status cg_emit_weights(cg_gen *g, dy_buf *out) {
  const dy_program *p = g->p;
  const bool sep = g->opt->separate_weights;
  dy_buf body = {0};
  dy_status s = DY_OK;
  for (int i = 0; i < p->n_vars && !s; i++) {
    if (!g->weight[i])
      continue;
    const dy_var *v = p->vars[i];
    if (!sep) {
      s = emit_inline_weight(g, i, &body);
      continue;
    }
    char ts[256];
    int64_t at, end, nbytes = cg_var_bytes(g, v);
    if (!blob_add(g, v->data, nbytes, blob_align(v->type.dtype, nbytes), &at) ||
        (v->type.dtype == DY_I64 && !blob_add(g, NULL, 0, 2, &end))) { /* an even count */
      s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    dy_buf_puts(&body, "/* ");
    dy_buf_put_comment(&body, v->name);
    dy_buf_printf(&body, "  %s%s */\n", dy_type_str(&v->type, ts, sizeof ts),
                  g->state[i] ? ", the initial value of its state" : "");
    put_blob_define(g, &body, g->weight[i], v->type.dtype, at);
  }
  for (int k = 0; k < g->n_packs && !s; k++) {
    const cg_packed_weight *pw = &g->packs[k];
    const dy_var *v = p->vars[pw->var];
    int64_t n = dy_pack_numel(&pw->pack);
    float *d = malloc(sizeof *d * (size_t)(n > 0 ? n : 1));
    if (!d) {
      s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      break;
    }
    dy_gemm_pack_data(&pw->pack, v->data, d);
    char ts[256], how[256];
    dy_pack_describe(&pw->pack, how, sizeof how);
    dy_buf_puts(&body, "/* ");
    dy_buf_put_comment(&body, v->name);
    dy_buf_printf(&body, "  %s packed for the GEMM micro-kernel:\n * %s */\n",
                  dy_type_str(&v->type, ts, sizeof ts), how);
    if (sep) {
      int64_t at;
      if (!blob_add(g, d, n * 4, 16, &at))
        s = dy_error_set(g->err, DY_STATUS_OUT_OF_MEMORY, "out of memory");
      else
        put_blob_define(g, &body, pw->name, DY_F32, at);
      free(d);
      continue;
    }
    dy_buf_printf(&body, "static const float %s[%lld] = {", pw->name, (long long)n);
    for (int64_t j = 0; j < n && !s; j++) {
      char lit[64];
      if (!dy_float_literal(d[j], lit, sizeof lit)) {
        s = dy_error_set(g->err, DY_STATUS_UNSUPPORTED,
                         "weight '%s' holds %s; the generated C would not reproduce it",
                         v->name, d[j] != d[j] ? "NaN" : "an infinity");
        break;
      }
      dy_buf_printf(&body, "%s%s", j % 8 == 0 ? "\n  " : " ", lit);
      if (j + 1 < n)
        dy_buf_putc(&body, ',');
    }
    dy_buf_puts(&body, "\n};\n\n");
    free(d);
  }
  if (!s && (body.len > 0 || sep))
    dy_buf_puts(out, "/* ---- weights ---- */\n\n");
  if (!s && sep) {
    dy_buf_printf(out,
                  "/* The weights are %lld 32-bit words at %s_weights, defined in\n"
                  " * %s_weights.c (an executable links them as a binary blob) and\n"
                  " * complete only there; each array starts at a 64-byte boundary. */\n"
                  "union %s_weights_data;\n"
                  "extern const union %s_weights_data %s_weights;\n"
                  "#define %s_WEIGHTS ((const float *)(const void *)&%s_weights)\n\n",
                  (long long)g->n_blob, g->lower, g->lower, g->lower, g->lower, g->lower,
                  g->upper, g->lower);
  }
  if (!s && body.s)
    dy_buf_putn(out, body.s, body.len);
  dy_buf_free(&body);
  return s;
}

/* NAME_WEIGHT_BYTES: the weights' bytes, plain and packed; with
 * separate_weights each array of NAME_weights counted to the next
 * boundary of blob_align words, where the next one starts. */
int64_t cg_weight_bytes(const cg_gen *g) {
  const dy_program *p = g->p;
  const bool sep = g->opt->separate_weights;
  int64_t n = 0;
  for (int i = 0; i < p->n_vars; i++)
    if (g->weight[i]) {
      int64_t b = cg_var_bytes(g, p->vars[i]), a = 4 * blob_align(p->vars[i]->type.dtype, b);
      n += sep ? (b + a - 1) / a * a : b;
    }
  for (int i = 0; i < g->n_packs; i++)
    n += sep ? (dy_pack_numel(&g->packs[i].pack) * 4 + 63) / 64 * 64
             : dy_pack_numel(&g->packs[i].pack) * 4;
  return n;
}
