/* dy_files.h - a Program in files: .dymodel and .dyparams, the pair, and
 * the whole-or-nothing file writers everything that writes output uses.
 * Included by dy_ir.h (split out of it to keep each header readable).
 */
#ifndef DY_FILES_H
#define DY_FILES_H

/* ------------------------------------------------------------------ */
/* program/serialize.c: .dymodel (protobuf-c, ir/dymodel.proto)       */
/* ------------------------------------------------------------------ */

#define DY_DYMODEL_VERSION 3  /* 2: blocks' params and results; 3: size symbols */

/* Reads a Program. *out is a new program; caller frees with
 * dy_program_free. Persistable vars have no data until dy_dyparams_read.
 * Structure is validated (names resolve, dtypes known) but the Program is
 * not verified: call dy_verify before running it (dy_jit_load does). */
dy_status dy_dymodel_read(const char *path, dy_program **out, dy_error *err);
/* In-memory forms (tests, embedding; dy_model_save writes a Program's
 * .dymodel + .dyparams pair, whole or not at all). *buf is malloc'd. */
dy_status dy_dymodel_encode(const dy_program *p, uint8_t **buf, size_t *len,
                            dy_error *err);
dy_status dy_dymodel_decode(const uint8_t *buf, size_t len, dy_program **out,
                            dy_error *err);

/* ------------------------------------------------------------------ */
/* program/params.c: .dyparams (layout documented in params.c)        */
/* ------------------------------------------------------------------ */

#define DY_DYPARAMS_VERSION 1

/* Fills every persistable var of p from path. Each tensor's name, dtype,
 * shape and CRC-32 must match; a missing or extra tensor is an error. */
dy_status dy_dyparams_read(dy_program *p, const char *path, dy_error *err);
dy_status dy_dyparams_encode(const dy_program *p, uint8_t **buf, size_t *len,
                             dy_error *err);
dy_status dy_dyparams_decode(dy_program *p, const uint8_t *buf, size_t len,
                             dy_error *err);

/* Loads path.dymodel + path.dyparams (path without extension, or with
 * either extension). Caller frees *out with dy_program_free. */
dy_status dy_model_load(const char *path, dy_program **out, dy_error *err);
/* Writes path.dymodel + path.dyparams, both or neither. */
dy_status dy_model_save(const dy_program *p, const char *path, dy_error *err);
/* dy_model_save in two steps, for a caller that must encode a Program
 * now and write it later or not at all (compile --save-model keeps the
 * imported Program, written only once the build has succeeded):
 * encode fills *m (paths from path as dy_model_save names them; an empty
 * stem is an error), write writes both files as one, free releases *m
 * (also after a failed encode). */
typedef struct {
  char *path[2];  /* .dyparams, .dymodel */
  uint8_t *buf[2];
  size_t len[2];
} dy_model_pair;
dy_status dy_model_pair_encode(const dy_program *p, const char *path, dy_model_pair *m,
                               dy_error *err);
dy_status dy_model_pair_write(const dy_model_pair *m, dy_error *err);
void dy_model_pair_free(dy_model_pair *m);

/* ------------------------------------------------------------------ */
/* core/util.c: small shared helpers                                  */
/* ------------------------------------------------------------------ */

uint32_t dy_crc32(uint32_t crc, const void *data, size_t n);
/* Open path read-only if it is a regular file (else a one-line error
 * naming it: a directory, device, FIFO or socket; a FIFO does not block
 * the open); *fd is open (caller closes), *size is its size. */
dy_status dy_open_regular(const char *path, int *fd, size_t *size, dy_error *err);
/* Read a whole regular file (dy_open_regular), exactly its size: a device
 * or FIFO is refused, never read without end; *buf is malloc'd (caller
 * frees). */
dy_status dy_read_file(const char *path, uint8_t **buf, size_t *len,
                       dy_error *err);
/* Write a whole file atomically: a temporary beside it, created
 * exclusively (O_CREAT | O_EXCL | O_NOFOLLOW, random suffix), then renamed
 * over path. A path too long for a temporary name is an error. */
dy_status dy_write_file_atomic(const char *path, const void *buf, size_t len,
                               dy_error *err);
/* The same for n (<= 8) files as one: all temporaries are written first,
 * then renamed, so a failure while writing leaves every old file in place. */
dy_status dy_write_files_atomic(int n, const char *const *paths, const void *const *bufs,
                                const size_t *lens, dy_error *err);
/* dy_write_file_atomic with the file's mode (less the umask): 0777 for an
 * executable (dy_write_file_atomic's is 0666). */
dy_status dy_write_file_atomic_mode(const char *path, const void *buf, size_t len, int mode,
                                    dy_error *err);
/* Create path.tmp.<random> exclusively, mode 0600, never through a link;
 * *fd is open for writing, tmp (tmp_n bytes) gets its name. Retries on
 * EEXIST. For writers that stream (dy_write_file_atomic is the usual one). */
dy_status dy_temp_create(const char *path, char *tmp, size_t tmp_n, int *fd,
                         dy_error *err);

#endif /* DY_FILES_H */
