/* train_app.c - a few training steps on a Cortex-M: the training step that
 * `dy2stc compile --train --emit c --name net` writes (net.c, net.h) runs
 * TRAIN_STEPS times on one batch built into the program (train_data.h,
 * from x.npy and y.npy: build_train.sh makes all three), and each step's
 * loss is printed as a decimal and as its bit pattern, so that a test can
 * compare them with the host's. The parameters and the optimizer state
 * live in RAM (`state`, NET_STATE_BYTES), initialised from flash by
 * net_state_init; the arena holds activations and gradients during a step.
 */
#include <stdint.h>
#include <stdio.h>

#include "net.h"
#include "train_data.h"

static uint8_t state[NET_STATE_BYTES] __attribute__((aligned(NET_STATE_ALIGN)));
static uint8_t arena[NET_ARENA_BYTES] __attribute__((aligned(NET_ARENA_ALIGN)));

_Static_assert(TRAIN_X_NUMEL == NET_INPUT_0_NUMEL(TRAIN_BATCH), "train_data.h fits input 0");
_Static_assert(TRAIN_BATCH <= NET_MAX_BATCH, "the batch is within the compiled bound");

int main(void) {
  int rc = net_state_init(state);
  printf("net: state %ld bytes, arena %ld bytes, flash %ld bytes\n", (long)NET_STATE_BYTES,
         (long)NET_ARENA_BYTES, (long)NET_FLASH_BYTES);
  for (int step = 0; step < TRAIN_STEPS && rc == NET_OK; step++) {
    float loss = 0;
    rc = net_train_step(state, arena, TRAIN_BATCH, train_x.f, train_y, (float)TRAIN_LR, &loss);
    union { float f; uint32_t u; } v = {loss};
    printf("step %d loss %.9g 0x%08lx\n", step, (double)loss, (unsigned long)v.u);
  }
  printf("status %d\ndone\n", rc);
  return rc;
}
