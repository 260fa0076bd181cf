/* app.c - LeNet-5 on a Cortex-M: run the generated model once on an image
 * built into the program and print its ten outputs (through semihosting
 * under QEMU; on a board, wherever printf goes).
 *
 * lenet5.c and lenet5.h are what `dy2stc compile --emit c --name lenet5`
 * writes; input.h is x.npy as C (build.sh makes all three). Each output
 * is printed as a decimal and as its bit pattern, so a test can compare it
 * exactly with the host's.
 */
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include "lenet5.h"

/* The model's scratch memory, sized at compile time: LENET5_RAM_BYTES. It
 * may be shared with anything else that is not running at the same time. */
static uint8_t arena[LENET5_ARENA_BYTES] __attribute__((aligned(LENET5_ARENA_ALIGN)));
static float out[LENET5_OUTPUT_0_NUMEL(1)];

_Static_assert(INPUT_NUMEL == LENET5_INPUT_0_NUMEL(1), "input.h is one LeNet-5 image");

int main(void) {
  int rc = lenet5_run(arena, 1, input.f, out);
  printf("lenet5: status %d, RAM %ld bytes, flash %ld bytes\n", rc,
         (long)LENET5_RAM_BYTES, (long)LENET5_FLASH_BYTES);
  for (int i = 0; i < (int)LENET5_OUTPUT_0_NUMEL(1); i++) {
    union { float f; uint32_t u; } v = {out[i]};
    printf("out[%d] = %.9g 0x%08lx\n", i, (double)out[i], (unsigned long)v.u);
  }
  printf("done\n");
  return rc;
}
