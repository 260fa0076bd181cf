/* load.c - dy_model_load_any: one entry point for every model format the
 * CLI reads.
 *
 *   NAME.onnx                  the ONNX frontend (dy_onnx_load)
 *   NAME.pdmodel, __model__,   the Paddle frontend (dy_paddle_load; params
 *   a dir holding __model__    beside the model)
 *   NAME.dymodel / .dyparams   dy_jit_load (NAME.dymodel + NAME.dyparams)
 *   NAME (no extension)        dy_jit_load, as before
 *   any other existing file    ONNX if it parses as a ModelProto with a
 *                              graph, else dy_jit_load (which reports it)
 *
 * A NAME.dymodel that dy_jit_load refuses but that parses as ONNX gets
 * the hint to name it .onnx.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dy_frontends.h"
#include "onnx.pb-c.h"

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* True if the file parses as an ONNX ModelProto with a graph. */
static bool looks_like_onnx(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
    return false;
  uint8_t *buf;
  size_t len;
  dy_error e = {0};
  if (dy_read_file(path, &buf, &len, &e))
    return false;
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  bool ok = m && m->graph && m->has_ir_version;
  if (m)
    onnx__model_proto__free_unpacked(m, NULL);
  return ok;
}

dy_status dy_model_load_any(const char *path, dy_program **out, dy_error *err) {
  if (ends_with(path, ".onnx"))
    return dy_onnx_load(path, out, err);
  if (dy_paddle_is_model_path(path))
    return dy_paddle_load(path, NULL, NULL, out, err);
  if (!ends_with(path, ".dymodel") && !ends_with(path, ".dyparams") &&
      looks_like_onnx(path))
    return dy_onnx_load(path, out, err);
  dy_status s = dy_jit_load(path, out, err);
  if (s && ends_with(path, ".dymodel") && looks_like_onnx(path)) /* renamed? */
    return dy_error_set(err, s, "%s: not a .dymodel but an ONNX model (name it .onnx, or "
                        "load it as NAME.onnx)", path);
  return s;
}
