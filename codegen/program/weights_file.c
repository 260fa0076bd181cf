/* weights_file.c - floor 3: the files that hold NAME_weights
 * (separate_weights).
 *
 * With dy_codegen_options.separate_weights, NAME.c declares the weights
 * (every dtype: f32, i8, u8, i32, i64, bool) as one object,
 *
 *   union NAME_weights_data;
 *   extern const union NAME_weights_data NAME_weights;
 *   #define NAME_WEIGHTS ((const float *)(const void *)&NAME_weights)
 *
 * (a union type left incomplete, so it is compatible with the complete
 * one of the other translation unit) and reads each array as
 * NAME_WEIGHTS + offset (in words; each array at a 64-byte boundary),
 * cast to its element type when not f32. The words are defined in one of
 * two ways:
 *
 *   NAME_weights.c  (--emit c) the union completed, { struct { unsigned
 *                   char c0[4032]; c1[4032]; ... } bytes; float f[N];
 *                   int32_t i32[N]; int64_t i64[N / 2] (when N is even) },
 *                   its chunks initialised by string literals of \xHH
 *                   escapes (each within C99's 4095 characters, so
 *                   -pedantic is quiet): a `const` object firmware puts in
 *                   flash. Compilers keep a string as one block of bytes,
 *                   so ResNet-18's 47 MB build in seconds; the same words
 *                   as integer or float initialisers take minutes and
 *                   gigabytes (gcc: 90 s, 3.2 GB). Reading the floats of
 *                   bytes written through `bytes` is C99's type punning
 *                   through a union (the int members make i32 and i64
 *                   reads the union's own types; i8, u8 and bool are
 *                   character types). Little-endian (an #error elsewhere).
 *   NAME_weights.s  (executables) the assembler includes the words as a
 *                   binary file (.incbin), 64-byte aligned in .rodata: the
 *                   C compiler never sees the numbers, so a ResNet-18's
 *                   45 MB of weights cost the build no time.
 *
 * Both give the same bytes on a little-endian target (every --target is).
 * Floor 3 of codegen/ (README.md): it calls nothing of codegen/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dy_codegen.h"

enum { CHUNK = 4032, LINE = 32 }; /* bytes per string literal, per line */

char *dy_codegen_weights_c(const dy_codegen_output *out) {
  const char *name = out->name;
  const unsigned char *d = (const unsigned char *)out->weights;
  int64_t n = out->n_weight_words * 4, n_chunks = (n + CHUNK - 1) / CHUNK;
  size_t nl = strlen(name);
  /* 4 characters a byte, 6 more a line; a member and a comment a chunk */
  size_t cap = 2048 + 12 * nl + (size_t)n * 4 + (size_t)(n / LINE + 1) * 6 +
               (size_t)n_chunks * (96 + nl);
  char *t = malloc(cap);
  if (!t)
    return NULL;
  char *c = t, *end = t + cap;
  c += snprintf(c, (size_t)(end - c),
                "/* %s_weights.c - the weights of %s.c: %lld 32-bit words, as bytes\n"
                " * (written by dy2stc). The string literals fill the chunks of `bytes`;\n"
                " * %s.c reads the same memory as floats and integers. */\n"
                "#include <stdint.h>\n\n"
                "#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \\\n"
                "    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
                "#error \"%s_weights.c holds little-endian words\"\n"
                "#endif\n\n"
                "union %s_weights_data {\n  struct {\n",
                name, name, (long long)n / 4, name, name, name);
  for (int64_t k = 0; k < n_chunks; k++)
    c += snprintf(c, (size_t)(end - c), "    unsigned char c%lld[%lld];\n", (long long)k,
                  (long long)(n - k * CHUNK < CHUNK ? n - k * CHUNK : CHUNK));
  c += snprintf(c, (size_t)(end - c),
                "  } bytes;\n  float f[%lld];\n  int32_t i32[%lld];\n%s",
                (long long)n / 4, (long long)n / 4, n % 8 ? "" : "  int64_t i64[");
  if (n % 8 == 0)
    c += snprintf(c, (size_t)(end - c), "%lld];\n", (long long)n / 8);
  c += snprintf(c, (size_t)(end - c),
                "};\n\n"
                "/* the chunks have no padding between them */\n"
                "typedef char %s_weights_size_check[sizeof(union %s_weights_data) == %lld ? 1 : -1];\n\n"
                "const union %s_weights_data %s_weights = {{\n",
                name, name, (long long)n, name, name);
  static const char hex[] = "0123456789abcdef";
  for (int64_t i = 0; i < n; i++) {
    if (i % LINE == 0) {
      if (i % CHUNK == 0 && i > 0)
        *c++ = ',', *c++ = '\n';
      else if (i > 0)
        *c++ = '\n';
      *c++ = ' ', *c++ = ' ', *c++ = '"';
    }
    *c++ = '\\', *c++ = 'x', *c++ = hex[d[i] >> 4], *c++ = hex[d[i] & 15];
    if (i % LINE == LINE - 1 || i + 1 == n)
      *c++ = '"';
  }
  memcpy(c, "\n}};\n", 6);
  return t;
}

char *dy_codegen_weights_asm(const char *name, const char *bin_path, int64_t n_words) {
  if (strchr(bin_path, '\n'))
    return NULL;
  /* the path as an assembler string: \ and " escaped */
  size_t cap = 1024 + 3 * strlen(name) + 2 * strlen(bin_path);
  char *t = malloc(cap), *q = malloc(2 * strlen(bin_path) + 1);
  if (!t || !q) {
    free(t);
    free(q);
    return NULL;
  }
  char *e = q;
  for (const char *s = bin_path; *s; s++) {
    if (*s == '\\' || *s == '"')
      *e++ = '\\';
    *e++ = *s;
  }
  *e = 0;
  snprintf(t, cap,
           "/* %s_weights.s - the weights of %s.c, %lld 32-bit words, included\n"
           " * as a binary file (written by dy2stc). */\n"
           "  .section .rodata\n"
           "  .balign 64\n"
           "  .globl %s_weights\n"
           "  .type %s_weights, %%object\n"
           "  .size %s_weights, %lld\n"
           "%s_weights:\n"
           "  .incbin \"%s\"\n"
           "  .section .note.GNU-stack,\"\",%%progbits\n",
           name, name, (long long)n_words, name, name, name, (long long)n_words * 4, name, q);
  free(q);
  return t;
}
