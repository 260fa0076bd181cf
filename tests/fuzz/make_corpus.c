/* make_corpus.c - writes the fuzz targets' seed corpora and the text IR
 * dictionary from files the project already has, at build time (nothing
 * generated is committed):
 *
 *   make_corpus SRC_DIR OUT_DIR [ONNX_NODE_DIR [PADDLE_DIR [PADDLE_NEXT_DIR]]]
 *
 *   OUT/ir, OUT/pipeline  every Program of tests/passes/NAME.ir (each
 *                         before/expected) and tests/golden/grad_programs.txt
 *                         (one per op case), one file each
 *   OUT/dymodel           tests/data/NAME.dymodel, and each Program of ir/
 *                         that verifies, encoded (dy_dymodel_encode)
 *   OUT/dyparams          the same pairs as fuzz_dyparams.c reads them:
 *                         u32 length, .dymodel, .dyparams
 *   OUT/onnx              samples/onnx/cnn.onnx and every
 *                         ONNX_NODE_DIR/TEST/model.onnx (Debian
 *                         libonnx-testdata) of at most 64 KiB
 *   OUT/npy               samples/onnx/NAME.npy, and small arrays of every
 *                         dtype the reader takes (f4, i8, b1, f8, i4), ranks
 *                         0 to 3, an empty one, a version 2.0 header
 *   OUT/pdmodel           with PADDLE_DIR (../shared/testdata-paddle): each
 *                         model.pdmodel with its model.pdiparams, as
 *                         fuzz_pdmodel.c reads them
 *                         (when PADDLE_DIR has none, a line on stderr says
 *                         so: the pdmodel corpus is empty)
 *   OUT/pir               with PADDLE_NEXT_DIR (../shared/testdata-paddle-next):
 *                         each NAME/inference.json alone and, when its
 *                         inference.pdiparams is there, with it, as
 *                         fuzz_pir.c reads them (none: a line on stderr)
 *   OUT/cconvert          samples/static/NAME.c and tests/convert/NAME.c,
 *                         for fuzz_cconvert.c
 *   OUT/ir.dict           libFuzzer dictionary: the op names and attribute
 *                         names of the op table, the text form's keywords
 *   OUT/onnx.dict         libFuzzer dictionary: the ONNX op types and
 *                         attribute names the importer knows, as protobuf
 *                         fields (read from compiler/frontends/onnx/NAME.c)
 *
 * Writes OUT/stamp last. Exits non-zero with a one-line message when a
 * file cannot be read or written.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_ir.h"
#include "dy_runtime.h"

static const char *out_dir;
static int n_written;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "make_corpus: %s: %s\n", what, detail);
  exit(1);
}

static void make_dir(const char *sub) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", out_dir, sub);
  mkdir(path, 0777);
}

static void put(const char *sub, const char *leaf, const void *data, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s", out_dir, sub, leaf);
  dy_error err = {0};
  if (dy_write_file_atomic(path, data, n, &err))
    die("cannot write", err.msg);
  n_written++;
}

static uint8_t *slurp(const char *path, size_t *len) {
  uint8_t *buf;
  dy_error err = {0};
  if (dy_read_file(path, &buf, len, &err))
    die("cannot read", err.msg);
  return buf;
}

static void put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

/* A seed of a pair reader (dyparams, pdmodel): u32 length of the model,
 * the model, the params. */
static void put_pair(const char *sub, const char *leaf, const uint8_t *model, size_t model_len,
                     const uint8_t *params, size_t params_len) {
  uint8_t *pair = malloc(4 + model_len + params_len);
  if (!pair)
    die("out of memory", leaf);
  put_le32(pair, (uint32_t)model_len);
  memcpy(pair + 4, model, model_len);
  if (params_len)
    memcpy(pair + 4 + model_len, params, params_len);
  put(sub, leaf, pair, 4 + model_len + params_len);
  free(pair);
}

/* A Program's text: as a seed of ir and pipeline, and when it parses and
 * verifies, encoded as seeds of dymodel and dyparams. */
static void put_program(const char *stem, int k, const char *text, size_t n) {
  char leaf[300];
  snprintf(leaf, sizeof leaf, "%s_%03d.ir", stem, k);
  put("ir", leaf, text, n);
  put("pipeline", leaf, text, n);
  char *src = malloc(n + 1);
  if (!src)
    die("out of memory", stem);
  memcpy(src, text, n);
  src[n] = 0;
  dy_program *p = NULL;
  dy_error err = {0};
  if (dy_program_parse(src, &p, &err) == DY_OK && dy_verify(p, &err) == DY_OK) {
    uint8_t *model = NULL, *params = NULL;
    size_t model_len = 0, params_len = 0;
    if (dy_dymodel_encode(p, &model, &model_len, &err) == DY_OK) {
      snprintf(leaf, sizeof leaf, "%s_%03d.dymodel", stem, k);
      put("dymodel", leaf, model, model_len);
      if (dy_dyparams_encode(p, &params, &params_len, &err) == DY_OK) {
        snprintf(leaf, sizeof leaf, "%s_%03d.pair", stem, k);
        put_pair("dyparams", leaf, model, model_len, params, params_len);
      }
    }
    free(model);
    free(params);
  }
  dy_program_free(p);
  free(src);
}

/* Every "program {" ... "}" (at the start of a line) of a file. */
static void split_programs(const char *path, const char *stem) {
  size_t len;
  uint8_t *raw = slurp(path, &len);
  char *text = malloc(len + 1);
  if (!text)
    die("out of memory", path);
  memcpy(text, raw, len);
  text[len] = 0;
  free(raw);
  int k = 0;
  const char *at = text, *end = text + len;
  while (at < end) {
    const char *start = strstr(at, "program {");
    if (!start || (start != text && start[-1] != '\n'))
      break;
    const char *close = strstr(start, "\n}");
    if (!close)
      break;
    close += 2;
    put_program(stem, k++, start, (size_t)(close - start));
    at = close;
  }
  free(text);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir ending in suffix (or every entry when suffix is ""),
 * sorted; *n of them, each malloc'd. */
static char **list_dir(const char *dir, const char *suffix, int *n) {
  DIR *d = opendir(dir);
  *n = 0;
  if (!d)
    return NULL;
  char **names = NULL;
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), sl = strlen(suffix);
    if (e->d_name[0] == '.' || l < sl || strcmp(e->d_name + l - sl, suffix) != 0)
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      names = realloc(names, (size_t)cap * sizeof *names);
      if (!names)
        die("out of memory", dir);
    }
    if (!(names[(*n)++] = strdup(e->d_name)))
      die("out of memory", dir);
  }
  closedir(d);
  if (*n)
    qsort(names, (size_t)*n, sizeof *names, by_name);
  return names;
}

static void free_list(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

static void copy_file(const char *from, const char *sub, const char *leaf) {
  size_t len;
  uint8_t *buf = slurp(from, &len);
  put(sub, leaf, buf, len);
  free(buf);
}

/* A version 1.0 .npy with a hand-written header (the dtypes dy_npy_write
 * does not produce). */
static void put_npy_raw(const char *leaf, const char *descr, const char *shape,
                        const void *data, size_t n, int major) {
  char header[256];
  int hl = snprintf(header, sizeof header,
                    "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  int pre = major == 1 ? 10 : 12;
  int total = (pre + hl + 1 + 63) / 64 * 64;
  uint8_t buf[512];
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)major;
  buf[7] = 0;
  int hlen = total - pre;
  if (major == 1) {
    buf[8] = (uint8_t)hlen;
    buf[9] = (uint8_t)(hlen >> 8);
  } else {
    put_le32(buf + 8, (uint32_t)hlen);
  }
  memset(buf + pre, ' ', (size_t)hlen);
  memcpy(buf + pre, header, (size_t)hl);
  buf[total - 1] = '\n';
  memcpy(buf + total, data, n);
  put("npy", leaf, buf, (size_t)total + n);
}

static void put_npy(const char *leaf, dy_dtype dtype, int rank, const int64_t *shape) {
  dy_tensor *t = dy_tensor_new(dtype, rank, shape);
  if (!t)
    die("out of memory", leaf);
  size_t size = dy_dtype_size(dtype);
  for (int64_t i = 0; i < dy_tensor_numel(t); i++) {
    if (dtype == DY_F32)
      ((float *)t->data)[i] = (float)i * 0.5f - 1.0f;
    else if (dtype == DY_I64)
      ((int64_t *)t->data)[i] = i * 7 - 3;
    else
      ((uint8_t *)t->data)[i * (int64_t)size] = (uint8_t)(i % 2);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/npy/%s", out_dir, leaf);
  dy_error err = {0};
  if (dy_npy_write(path, t, &err))
    die("cannot write", err.msg);
  n_written++;
  dy_tensor_free(t);
}

static void npy_seeds(const char *src) {
  char from[1024];
  const char *samples[] = {"input.npy", "expected.npy"};
  for (int i = 0; i < 2; i++) {
    snprintf(from, sizeof from, "%s/samples/onnx/%s", src, samples[i]);
    copy_file(from, "npy", samples[i]);
  }
  const int64_t s23[] = {2, 3}, s4[] = {4}, s22[] = {2, 2}, s213[] = {2, 1, 3}, s03[] = {0, 3};
  put_npy("f32_2x3.npy", DY_F32, 2, s23);
  put_npy("f32_scalar.npy", DY_F32, 0, NULL);
  put_npy("f32_empty.npy", DY_F32, 2, s03);
  put_npy("i64_4.npy", DY_I64, 1, s4);
  put_npy("bool_2x2.npy", DY_BOOL, 2, s22);
  put_npy("f32_2x1x3.npy", DY_F32, 3, s213);
  const double f8[3] = {1.5, -2.25, 1e300};
  const int32_t i4[3] = {7, -8, 2147483647};
  put_npy_raw("f8_3.npy", "<f8", "(3,)", f8, sizeof f8, 1);
  put_npy_raw("i4_3.npy", "<i4", "(3,)", i4, sizeof i4, 1);
  put_npy_raw("f8_v2.npy", "<f8", "(1, 3)", f8, sizeof f8, 2);
}

static void onnx_seeds(const char *src, const char *node_dir) {
  char from[1024];
  snprintf(from, sizeof from, "%s/samples/onnx/cnn.onnx", src);
  copy_file(from, "onnx", "cnn.onnx");
  int n = 0;
  char **tests = node_dir ? list_dir(node_dir, "", &n) : NULL;
  for (int i = 0; tests && i < n; i++) {
    struct stat st;
    snprintf(from, sizeof from, "%s/%s/model.onnx", node_dir, tests[i]);
    if (stat(from, &st) == 0 && st.st_size <= 64 * 1024) {
      char leaf[300];
      snprintf(leaf, sizeof leaf, "%s.onnx", tests[i]);
      copy_file(from, "onnx", leaf);
    }
  }
  free_list(tests, n);
}

/* The committed .dymodel/.dyparams pairs of tests/data. */
static void model_seeds(const char *src) {
  char dir[1024], from[1100];
  snprintf(dir, sizeof dir, "%s/tests/data", src);
  int n;
  char **models = list_dir(dir, ".dymodel", &n);
  for (int i = 0; i < n; i++) {
    snprintf(from, sizeof from, "%s/%s", dir, models[i]);
    size_t model_len, params_len;
    uint8_t *model = slurp(from, &model_len);
    put("dymodel", models[i], model, model_len);
    size_t l = strlen(from);
    snprintf(from + l - strlen(".dymodel"), sizeof from - l + strlen(".dymodel"), ".dyparams");
    uint8_t *params = slurp(from, &params_len);
    char leaf[300];
    snprintf(leaf, sizeof leaf, "%s.pair", models[i]);
    put_pair("dyparams", leaf, model, model_len, params, params_len);
    free(model);
    free(params);
  }
  free_list(models, n);
}

static void ir_seeds(const char *src) {
  char dir[1024], from[1100];
  snprintf(dir, sizeof dir, "%s/tests/passes", src);
  int n;
  char **files = list_dir(dir, ".ir", &n);
  for (int i = 0; i < n; i++) {
    snprintf(from, sizeof from, "%s/%s", dir, files[i]);
    files[i][strlen(files[i]) - 3] = 0;
    split_programs(from, files[i]);
  }
  free_list(files, n);
  snprintf(from, sizeof from, "%s/tests/golden/grad_programs.txt", src);
  split_programs(from, "grad");
}

/* Paddle models (PADDLE_DIR/NAME/model.pdmodel, pdmodel-only/NAME/ too)
 * as fuzz_pdmodel.c reads them: u32 length, .pdmodel, .pdiparams. A pair
 * when both fit in 256 KiB, else the model alone up to 512 KiB (its
 * params left empty). */
static void paddle_seeds(const char *paddle_dir) {
  const char *subs[] = {"", "/pdmodel-only"};
  make_dir("pdmodel");
  for (int k = 0; k < 2; k++) {
    char dir[1024], model_path[1200], params_path[1200];
    snprintf(dir, sizeof dir, "%s%s", paddle_dir, subs[k]);
    int n;
    char **names = list_dir(dir, "", &n);
    for (int i = 0; i < n; i++) {
      struct stat ms, ps;
      snprintf(model_path, sizeof model_path, "%s/%s/model.pdmodel", dir, names[i]);
      snprintf(params_path, sizeof params_path, "%s/%s/model.pdiparams", dir, names[i]);
      if (stat(model_path, &ms) != 0 || ms.st_size > 512 * 1024)
        continue;
      bool with_params = stat(params_path, &ps) == 0 && ms.st_size + ps.st_size <= 256 * 1024;
      size_t model_len, params_len = 0;
      uint8_t *model = slurp(model_path, &model_len);
      uint8_t *params = with_params ? slurp(params_path, &params_len) : NULL;
      char leaf[300];
      snprintf(leaf, sizeof leaf, "%s.pair", names[i]);
      put_pair("pdmodel", leaf, model, model_len, params, params_len);
      free(model);
      free(params);
    }
    free_list(names, n);
  }
}

/* PIR programs (PADDLE_NEXT_DIR/NAME/inference.json) as fuzz_pir.c reads
 * them: u32 length, the JSON, the params (empty for the JSON alone). */
static void pir_seeds(const char *dir) {
  make_dir("pir");
  int n, n_seeds = 0;
  char **names = list_dir(dir, "", &n);
  for (int i = 0; i < n; i++) {
    char json_path[1200], params_path[1200], leaf[300];
    struct stat js, ps;
    snprintf(json_path, sizeof json_path, "%s/%s/inference.json", dir, names[i]);
    snprintf(params_path, sizeof params_path, "%s/%s/inference.pdiparams", dir, names[i]);
    if (stat(json_path, &js) != 0 || js.st_size > 512 * 1024)
      continue;
    size_t json_len, params_len = 0;
    uint8_t *json = slurp(json_path, &json_len);
    snprintf(leaf, sizeof leaf, "%s.json", names[i]);
    put_pair("pir", leaf, json, json_len, NULL, 0);
    n_seeds++;
    if (stat(params_path, &ps) == 0 && ps.st_size <= 512 * 1024) {
      uint8_t *params = slurp(params_path, &params_len);
      snprintf(leaf, sizeof leaf, "%s.pair", names[i]);
      put_pair("pir", leaf, json, json_len, params, params_len);
      free(params);
    }
    free(json);
  }
  free_list(names, n);
  if (!n_seeds) /* said, not silent: fuzz_pir then starts from nothing */
    fprintf(stderr, "make_corpus: no PIR programs at %s: the pir corpus is empty "
                    "(set DY_PADDLE_NEXT_DATA)\n", dir);
}

/* C model files for fuzz_cconvert.c: samples/static/NAME.c and
 * tests/convert/NAME.c (the converter's before / after pairs). */
static void cconvert_seeds(const char *src) {
  const char *dirs[] = {"samples/static", "tests/convert"};
  make_dir("cconvert");
  for (int k = 0; k < 2; k++) {
    char dir[1024], path[1400], leaf[400];
    snprintf(dir, sizeof dir, "%s/%s", src, dirs[k]);
    int n;
    char **names = list_dir(dir, ".c", &n);
    if (!n)
      die("no C files in", dir);
    for (int i = 0; i < n; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      snprintf(leaf, sizeof leaf, "%d_%s", k, names[i]);
      copy_file(path, "cconvert", leaf);
    }
    free_list(names, n);
  }
}

/* libFuzzer dictionary for the text form: op names, attribute names,
 * keywords and punctuation of print.c. */
static void ir_dict(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ir.dict", out_dir);
  FILE *f = fopen(path, "w");
  if (!f)
    die("cannot write", path);
  const char *words[] = {"program {", "var ", " : ", "f32", "i64", "bool", " feed ",
                         " persistable", " trainable", " = [", "block ", " parent ",
                         "fetch ", "yield ", "  @", ".c:", " {", "}", "(", ")",
                         "[-1,", "-1", "1e38", "nan", "inf", "9223372036854775807"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    fprintf(f, "\"%s\"\n", words[i]);
  for (int k = 0; k < DY_OP_COUNT; k++) {
    const dy_op_info *info = dy_op_info_of((dy_op_kind)k);
    fprintf(f, "\"%s(\"\n", info->name);
    for (int a = 0; a < info->n_attrs; a++)
      fprintf(f, "\"%s = \"\n", info->attrs[a].name);
  }
  if (fclose(f) != 0)
    die("cannot write", path);
}

/* One dictionary entry: a protobuf string field (tag byte, then the
 * length as one varint byte, then the bytes). */
static void dict_field(FILE *f, unsigned tag, const char *word, size_t n) {
  if (n == 0 || n > 127)
    return;
  fprintf(f, "\"\\x%02X\\x%02X", tag, (unsigned)n);
  fwrite(word, 1, n, f);
  fputs("\"\n", f);
}

/* libFuzzer dictionary for ONNX: every op type the importer maps (the
 * `{"Name", map_...}` entries of the mapper families and the
 * `{"Name", .op = ...}` rows of onnx_table.c) as a
 * NodeProto.op_type field, and every attribute name it accepts (its
 * ox_check_attrs lists) as an AttributeProto.name field, read from the
 * sources so the dictionary follows the importer. */
static void onnx_dict(const char *src) {
  char dir[1024], from[1100], path[1024];
  snprintf(dir, sizeof dir, "%s/compiler/frontends/onnx", src);
  snprintf(path, sizeof path, "%s/onnx.dict", out_dir);
  FILE *f = fopen(path, "w");
  if (!f)
    die("cannot write", path);
  int n;
  char **files = list_dir(dir, ".c", &n);
  for (int i = 0; i < n; i++) {
    snprintf(from, sizeof from, "%s/%s", dir, files[i]);
    size_t len;
    uint8_t *raw = slurp(from, &len);
    char *text = malloc(len + 1);
    if (!text)
      die("out of memory", from);
    memcpy(text, raw, len);
    text[len] = 0;
    free(raw);
    for (const char *at = text; (at = strstr(at, "{\"")) != NULL; at++) {
      const char *name = at + 2, *end = strchr(name, '"');
      const char *next = end ? end + 1 + strspn(end + 1, ", ") : NULL;
      if (end && end[1] == ',' &&
          (strncmp(next, "map_", 4) == 0 || strncmp(next, ".op = ", 6) == 0))
        dict_field(f, 0x22, name, (size_t)(end - name)); /* NodeProto.op_type = 4 */
    }
    for (const char *at = text; (at = strstr(at, "ox_check_attrs(c, \"")) != NULL; at++) {
      const char *w = at + strlen("ox_check_attrs(c, \"");
      for (;;) {   /* space-separated, possibly over several string literals */
        while (*w == ' ' || *w == '"' || *w == '\n')
          w++;
        if (*w == ')' || *w == 0)
          break;
        size_t k = strcspn(w, " \")");
        dict_field(f, 0x0A, w, k); /* AttributeProto.name = 1 */
        w += k;
      }
    }
    free(text);
  }
  free_list(files, n);
  if (fclose(f) != 0)
    die("cannot write", path);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: make_corpus SRC_DIR OUT_DIR [ONNX_NODE_DIR [PADDLE_DIR "
                    "[PADDLE_NEXT_DIR]]]\n");
    return 2;
  }
  const char *src = argv[1];
  out_dir = argv[2];
  mkdir(out_dir, 0777);
  const char *subs[] = {"ir", "pipeline", "dymodel", "dyparams", "onnx", "npy"};
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
    make_dir(subs[i]);
  ir_seeds(src);
  model_seeds(src);
  npy_seeds(src);
  onnx_seeds(src, argc > 3 ? argv[3] : NULL);
  cconvert_seeds(src);
  if (argc > 4)
    paddle_seeds(argv[4]);
  else
    make_dir("pdmodel");
  int n_paddle = 0;
  char pd_dir[1024];
  snprintf(pd_dir, sizeof pd_dir, "%s/pdmodel", out_dir);
  free_list(list_dir(pd_dir, "", &n_paddle), n_paddle);
  if (!n_paddle) /* said, not silent: fuzz_pdmodel then starts from nothing */
    fprintf(stderr, "make_corpus: no Paddle models at %s: the pdmodel corpus is empty "
                    "(set DY_PADDLE_DATA)\n", argc > 4 ? argv[4] : "(none given)");
  if (argc > 5)
    pir_seeds(argv[5]);
  else
    make_dir("pir");
  ir_dict();
  onnx_dict(src);
  char stamp[1024];
  snprintf(stamp, sizeof stamp, "%s/stamp", out_dir);
  FILE *f = fopen(stamp, "w");
  if (!f || fprintf(f, "%d seeds\n", n_written) < 0 || fclose(f) != 0)
    die("cannot write", stamp);
  printf("make_corpus: %d seeds in %s\n", n_written, out_dir);
  return 0;
}
