/* util.c - CRC-32 and whole-file reading / atomic writing.
 *
 * Every file dy2stc writes goes through dy_write_files_atomic: each target
 * is written to a temporary created exclusively beside it
 * (open(O_CREAT | O_EXCL | O_NOFOLLOW), mode 0600 while written, a random
 * suffix, another on EEXIST: a planted file or symlink is never followed),
 * and only when every temporary is whole are they renamed over their
 * targets, so a failure leaves the old files in place. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dy_ir.h"

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib computes
 * it: dy_crc32(0, "123456789", 9) == 0xCBF43926. */
uint32_t dy_crc32(uint32_t crc, const void *data, size_t n) {
  static uint32_t table[256];
  static int ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < n; i++)
    crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

dy_status dy_open_regular(const char *path, int *fd, size_t *size, dy_error *err) {
  *fd = -1;
  *size = 0;
  /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
  int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f < 0)
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot open: %s", path,
                        strerror(errno));
  struct stat st;
  const char *kind = NULL;
  if (fstat(f, &st) != 0)
    kind = "cannot be examined";
  else if (S_ISDIR(st.st_mode))
    kind = "is a directory";
  else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
    kind = "is a pipe or socket";
  else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    kind = "is a device";
  else if (!S_ISREG(st.st_mode))
    kind = "is not a regular file";
  else if ((uintmax_t)st.st_size > (uintmax_t)(SIZE_MAX / 2))
    kind = "is too large";
  if (kind) {
    close(f);
    return dy_error_set(err, DY_STATUS_IO, "%s: %s, expected a regular file", path, kind);
  }
  int flags = fcntl(f, F_GETFL);
  if (flags >= 0)
    (void)fcntl(f, F_SETFL, flags & ~O_NONBLOCK);
  *fd = f;
  *size = (size_t)st.st_size;
  return DY_OK;
}

dy_status dy_read_file(const char *path, uint8_t **buf, size_t *len,
                       dy_error *err) {
  int fd;
  size_t size;
  dy_status s = dy_open_regular(path, &fd, &size, err);
  if (s)
    return s;
  /* Exactly the size fstat gave, plus one byte to see that it did not
   * grow meanwhile: the read is bounded whatever the file does. */
  uint8_t *b = malloc(size + 1);
  if (!b) {
    close(fd);
    return dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  size_t n = 0;
  int bad = 0;
  while (n < size + 1) {
    ssize_t r = read(fd, b + n, size + 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      bad = errno;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  if (bad || n != size) {
    free(b);
    if (bad)
      return dy_error_set(err, DY_STATUS_IO, "%s: read error: %s", path, strerror(bad));
    return dy_error_set(err, DY_STATUS_IO, "%s: changed size while read (%zu bytes, "
                        "then %zu)", path, size, n);
  }
  *buf = b;
  *len = n;
  return DY_OK;
}

/* A random 64-bit number for temporary names: the kernel's, else a mix
 * of the clock, the pid and a counter (names are also created O_EXCL, so
 * this only has to make a collision unlikely). */
static uint64_t temp_random(void) {
  static uint64_t counter;
  uint64_t r = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, &r, sizeof r) != (ssize_t)sizeof r)
      r = 0;
    close(fd);
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  r ^= (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15u ^ (uint64_t)ts.tv_sec << 20 ^
       (uint64_t)getpid() << 40 ^ ++counter * 0xBF58476D1CE4E5B9u;
  return r;
}

dy_status dy_temp_create(const char *path, char *tmp, size_t tmp_n, int *fd,
                         dy_error *err) {
  *fd = -1;
  for (int attempt = 0; attempt < 100; attempt++) {
    int n = snprintf(tmp, tmp_n, "%s.tmp.%016llx", path, (unsigned long long)temp_random());
    if (n < 0 || (size_t)n >= tmp_n)
      return dy_error_set(err, DY_STATUS_IO, "%.200s...: the path is too long", path);
    *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (*fd >= 0)
      return DY_OK;
    if (errno != EEXIST)
      break;
  }
  int e = errno;
  const char *slash = strrchr(path, '/');
  if (e == ENOENT && slash) /* the folder is missing: name it */
    return dy_error_set(err, DY_STATUS_IO, "%s: the directory %.*s does not exist", path,
                        (int)(slash - path), path);
  return dy_error_set(err, DY_STATUS_IO, "%s: cannot create a temporary file beside it: %s",
                      path, strerror(e));
}

/* Write buf to a new exclusive temporary beside path; *tmp names it. The
 * file gets the mode a plain create would (0666 less the umask). */
static dy_status write_temp(const char *path, const void *buf, size_t len, int mode,
                            char *tmp, size_t tmp_n, dy_error *err) {
  int fd;
  dy_status s = dy_temp_create(path, tmp, tmp_n, &fd, err);
  if (s)
    return s;
  mode_t mask = umask(0);
  umask(mask);
  bool bad = fchmod(fd, (mode_t)mode & ~mask) != 0;
  const uint8_t *p = buf;
  for (size_t done = 0; !bad && done < len;) {
    ssize_t w = write(fd, p + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    bad = w <= 0;
    if (!bad)
      done += (size_t)w;
  }
  int e = errno;
  bad |= close(fd) != 0;
  if (bad) {
    e = e ? e : errno;
    unlink(tmp);
    return dy_error_set(err, DY_STATUS_IO, "%s: cannot write: %s", path, strerror(e));
  }
  return DY_OK;
}

static dy_status write_files(int n, const char *const *paths, const void *const *bufs,
                             const size_t *lens, int mode, dy_error *err) {
  enum { MAX = 8 };
  char tmp[MAX][4096];
  if (n < 0 || n > MAX)
    return dy_error_set(err, DY_STATUS_INVALID_ARGUMENT, "writing %d files at once", n);
  dy_status s = DY_OK;
  int made = 0;
  /* a target that is a directory would fail its rename after the others
   * succeeded: refuse before anything is written */
  for (int i = 0; i < n; i++) {
    struct stat st;
    if (lstat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
      return dy_error_set(err, DY_STATUS_IO, "%s: cannot write: it is a directory", paths[i]);
  }
  for (; made < n && !s; made++)
    if ((s = write_temp(paths[made], bufs[made], lens[made], mode, tmp[made], sizeof tmp[made],
                        err)))
      break;
  /* every temporary is whole: only now replace the targets */
  for (int i = 0; i < n && !s; i++)
    if (rename(tmp[i], paths[i]) != 0) {
      s = dy_error_set(err, DY_STATUS_IO, "%s: cannot write: %s", paths[i], strerror(errno));
      for (int j = i; j < made; j++)
        unlink(tmp[j]);
      return s;
    }
  if (s)
    for (int j = 0; j < made; j++)
      unlink(tmp[j]);
  return s;
}

dy_status dy_write_files_atomic(int n, const char *const *paths, const void *const *bufs,
                                const size_t *lens, dy_error *err) {
  return write_files(n, paths, bufs, lens, 0666, err);
}

dy_status dy_write_file_atomic(const char *path, const void *buf, size_t len,
                               dy_error *err) {
  return write_files(1, &path, &buf, &len, 0666, err);
}

dy_status dy_write_file_atomic_mode(const char *path, const void *buf, size_t len, int mode,
                                    dy_error *err) {
  return write_files(1, &path, &buf, &len, mode, err);
}
