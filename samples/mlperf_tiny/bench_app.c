/* bench_app.c - one generated model on a Cortex-M: run it once on an input
 * built into the program, print its outputs (as decimals and as bits, for
 * an exact comparison with the host), the instructions the run executed
 * and the stack it used.
 *
 * Built by samples/mlperf_tiny/build.sh with
 *   -DMODEL_HEADER='"NAME.h"' -DMODEL_RUN=NAME_run -DMODEL_PREFIX(x)=NAME_##x
 * around NAME.c/NAME.h (dy2stc compile --emit c --name NAME) and input.h
 * (the model's input .npy as C).
 *
 * Instructions: under `qemu-system-arm -icount shift=0` the virtual clock
 * advances exactly 1 ns per executed instruction, and the MPS2 FPGA's
 * COUNTER register counts that clock at 25 MHz, i.e. one tick every 40
 * instructions. The count is instructions, not cycles (QEMU models no
 * pipeline, wait states or memory timing), to within 40 per run. On a
 * real board (or QEMU without -icount) the same figure is 40 x the
 * 25 MHz ticks and means nothing.
 *
 * Stack: the app paints STACK_PAINT bytes below its own frame with a
 * pattern before the run, then finds the deepest word the run changed;
 * the figure is the bytes from the stack pointer at the call of NAME_run
 * down to that word (what NAME_run and its callees used, the figure
 * NAME_STACK_BYTES bounds).
 */
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include MODEL_HEADER

#define FPGAIO_COUNTER (*(volatile uint32_t *)0x40028018u) /* MPS2 AN385/AN386 */
#define INSNS_PER_TICK 40u                                  /* 1 GHz / 25 MHz */
#define STACK_PAINT 65536u
#define PAINT 0xC5A5C5A5u

static uint8_t arena[MODEL_PREFIX(ARENA_BYTES) + 1] __attribute__((aligned(MODEL_PREFIX(ARENA_ALIGN))));
static float out[MODEL_PREFIX(OUTPUT_0_NUMEL)(1)];

_Static_assert(INPUT_NUMEL == MODEL_PREFIX(INPUT_0_NUMEL)(1), "input.h holds one input of the model");

/* Fill the STACK_PAINT bytes below the caller's frame with PAINT. */
__attribute__((noinline)) static void paint_stack(volatile uint32_t *top) {
  for (uint32_t i = 16; i < STACK_PAINT / 4; i++)
    top[-(int32_t)i] = PAINT;
}

/* Bytes below top that the run wrote: the deepest changed word. */
static uint32_t stack_used(volatile uint32_t *top) {
  uint32_t i = STACK_PAINT / 4 - 1;
  while (i >= 16 && top[-(int32_t)i] == PAINT)
    i--;
  return i < 16 ? 0 : 4 * i;
}

static uintptr_t sp_at_call; /* the stack pointer as run() calls NAME_run */

__attribute__((noinline)) static int run(uint32_t *ticks) {
  uintptr_t sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  sp_at_call = sp;
  uint32_t t0 = FPGAIO_COUNTER;
  int rc = MODEL_RUN(arena, 1, input.v, out);
  *ticks = FPGAIO_COUNTER - t0;
  return rc;
}

int main(void) {
  uintptr_t sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  volatile uint32_t *top = (volatile uint32_t *)sp;
  uint32_t ticks;
  paint_stack(top);
  int rc = run(&ticks);
  /* the deepest word written, counted from the stack pointer at the call */
  uint32_t stack = stack_used(top) - (uint32_t)(sp - sp_at_call);
  printf("model: status %d, arena %ld bytes, weights %ld bytes, stack %lu bytes\n", rc,
         (long)MODEL_PREFIX(ARENA_BYTES), (long)MODEL_PREFIX(WEIGHT_BYTES), (unsigned long)stack);
  printf("instructions: %lu (+- %u; %lu FPGA ticks)\n", (unsigned long)ticks * INSNS_PER_TICK,
         INSNS_PER_TICK, (unsigned long)ticks);
  for (int i = 0; i < (int)MODEL_PREFIX(OUTPUT_0_NUMEL)(1); i++) {
    union { float v; uint32_t u; } b = {.u = 0};
    b.v = out[i];
    printf("out[%d] = %.9g 0x%08lx\n", i, (double)out[i], (unsigned long)b.u);
  }
  printf("done\n");
  return rc;
}
