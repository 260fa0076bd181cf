/* status.c - status codes and the caller-owned dy_error.
 *
 * An error carries a one-line message, the id of the op at fault and the
 * source location the tracer recorded for it, so the CLI can print
 * "model.c:42: reshape: ..." the way chibicc's error_tok points at a token.
 */
#include <stdarg.h>
#include <string.h>

#include "dy_ir.h"

const char *dy_status_name(dy_status s) {
  switch (s) {
  case DY_OK: return "ok";
  case DY_STATUS_INVALID_ARGUMENT: return "invalid argument";
  case DY_STATUS_SHAPE_MISMATCH: return "shape mismatch";
  case DY_STATUS_DTYPE_MISMATCH: return "dtype mismatch";
  case DY_STATUS_UNSUPPORTED: return "unsupported";
  case DY_STATUS_INVALID_IR: return "invalid IR";
  case DY_STATUS_IO: return "I/O error";
  case DY_STATUS_FORMAT: return "malformed file";
  case DY_STATUS_VERSION: return "unsupported version";
  case DY_STATUS_OUT_OF_MEMORY: return "out of memory";
  case DY_STATUS_SYMBOLIC: return "symbolic value";
  case DY_STATUS_LIMIT: return "limit exceeded";
  case DY_STATUS_INTERNAL: return "internal error";
  }
  return "unknown status";
}

static void set_loc(dy_error *err, dy_srcloc loc) {
  if (!loc.file) {
    err->loc.file = NULL;
    err->loc.line = 0;
    return;
  }
  snprintf(err->file_buf, sizeof err->file_buf, "%s", loc.file);
  for (char *c = err->file_buf; *c; c++) /* a file name from a model file */
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '?';
  err->loc.file = err->file_buf;
  err->loc.line = loc.line;
}

/* A message is one line whatever a model file's names hold: every control
 * byte (a newline, an escape sequence's ESC, DEL) is written as \xNN,
 * here, once, for every error of the project. */
static void escape_controls(char *msg, size_t cap) {
  char out[sizeof ((dy_error *)0)->msg];
  size_t k = 0;
  bool any = false;
  for (const char *s = msg; *s && k + 1 < sizeof out; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f) {
      any = true;
      if (k + 5 >= sizeof out)
        break;
      k += (size_t)snprintf(out + k, sizeof out - k, "\\x%02x", c);
    } else {
      out[k++] = (char)c;
    }
  }
  out[k] = '\0';
  if (any)
    snprintf(msg, cap, "%s", out);
}

/* Fill err (if any) with status, the op's id and source line (none when op
 * is NULL) and the formatted message; returns status. */
static dy_status error_setv(dy_error *err, const dy_op *op, dy_status status,
                            const char *fmt, va_list ap) {
  if (!err)
    return status;
  err->status = status;
  err->op_id = op ? op->id : -1;
  set_loc(err, op ? op->loc : (dy_srcloc){NULL, 0});
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  escape_controls(err->msg, sizeof err->msg);
  return status;
}

dy_status dy_error_set(dy_error *err, dy_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_setv(err, NULL, status, fmt, ap);
  va_end(ap);
  return status;
}

dy_status dy_error_at(dy_error *err, const dy_op *op, dy_status status,
                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_setv(err, op, status, fmt, ap);
  va_end(ap);
  return status;
}

dy_status dy_error_prefix(dy_error *err, const char *fmt, ...) {
  if (!err)
    return DY_STATUS_INTERNAL;  /* no error to prefix: a caller bug */
  char head[256], old[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  /* head, ": ", then as much of the old message as fits */
  size_t k = strlen(head), cap = sizeof err->msg;
  if (k > cap - 3)
    k = cap - 3;
  memcpy(err->msg, head, k);
  memcpy(err->msg + k, ": ", 2);
  k += 2;
  size_t rest = strlen(old);
  if (rest > cap - 1 - k)
    rest = cap - 1 - k;
  memcpy(err->msg + k, old, rest);
  err->msg[k + rest] = '\0';
  escape_controls(err->msg, sizeof err->msg);
  return err->status;
}

void dy_error_format(const dy_error *err, char *buf, size_t n) {
  if (err->loc.file)
    snprintf(buf, n, "%s:%d: %s", err->loc.file, err->loc.line, err->msg);
  else
    snprintf(buf, n, "%s", err->msg);
}
