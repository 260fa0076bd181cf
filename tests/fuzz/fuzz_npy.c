/* fuzz_npy.c - the .npy reader (runtime/npy.c: dy_npy_read).
 *
 * The input is a .npy file, written to a private temporary directory (the
 * reader takes a path). A tensor that reads must write and read back as
 * the same dtype, shape and bytes.
 */
#include <string.h>

#include "dy_runtime.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = dy_fuzz_file("a.npy", data, size);
  if (!path)
    return 0;
  dy_tensor *t = NULL;
  dy_error err = {0};
  dy_status s = dy_npy_read(path, &t, &err);
  dy_fuzz_note("npy", s ? err.msg : NULL);
  if (s != DY_OK)
    return 0;
  const char *again = dy_fuzz_file("b.npy", NULL, 0);
  dy_tensor *u = NULL;
  if (!again || dy_npy_write(again, t, &err) != DY_OK || dy_npy_read(again, &u, &err) != DY_OK)
    dy_fuzz_fail("a .npy that reads does not write and read back", err.msg);
  size_t bytes = (size_t)dy_tensor_numel(t) * dy_dtype_size(t->type.dtype);
  if (!dy_type_equal(&t->type, &u->type) || (bytes && memcmp(t->data, u->data, bytes) != 0))
    dy_fuzz_fail("a .npy read back differs", "");
  dy_tensor_free(u);
  dy_tensor_free(t);
  return 0;
}
