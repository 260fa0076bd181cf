/* startup.c - what a Cortex-M needs before main(), for the MPS2 boards
 * (mps2.ld gives the symbols):
 *
 *   the vector table    initial stack pointer, reset and fault handlers,
 *                       placed at address 0 (section .isr_vector)
 *   Reset_Handler       copy .data from flash to RAM, clear .bss, enable
 *                       the FPU when the code is built for one (CPACR,
 *                       before any floating-point instruction runs), open
 *                       the semihosting console, run main(), exit with its
 *                       status (semihosting ends the QEMU run)
 *   faults              print which one through semihosting and exit with
 *                       status 1, so a crash ends the run instead of
 *                       hanging it
 *
 * The C library (newlib) and its semihosting system calls (librdimon)
 * come from --specs=rdimon.specs; -nostartfiles leaves their crt0 out.
 * In a firmware project the vendor's start-up code does all of this.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];
extern void initialise_monitor_handles(void); /* librdimon */
int main(void);
void _init(void);
void _fini(void);

void Reset_Handler(void);
static void fault(const char *what);
static void NMI_Handler(void) { fault("NMI"); }
static void HardFault_Handler(void) { fault("HardFault"); }
static void MemManage_Handler(void) { fault("MemManage"); }
static void BusFault_Handler(void) { fault("BusFault"); }
static void UsageFault_Handler(void) { fault("UsageFault"); }
static void Other_Handler(void) { fault("unexpected exception"); }

typedef void (*handler)(void);

/* The first 16 entries (the core's own exceptions); this sample enables
 * no device interrupt. */
__attribute__((section(".isr_vector"), used))
static const handler vector_table[16] = {
    (handler)(uintptr_t)_estack, /* initial SP */
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    0, 0, 0, 0,                  /* reserved */
    Other_Handler,               /* SVCall */
    Other_Handler,               /* debug monitor */
    0,                           /* reserved */
    Other_Handler,               /* PendSV */
    Other_Handler,               /* SysTick */
};

void Reset_Handler(void) {
  for (uint32_t *src = _sidata, *dst = _sdata; dst < _edata;)
    *dst++ = *src++;
  for (uint32_t *dst = _sbss; dst < _ebss;)
    *dst++ = 0;
#if defined(__ARM_FP)
  /* CPACR (0xE000ED88): full access to coprocessors 10 and 11, the FPU */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm volatile("dsb\n\tisb" ::: "memory");
#endif
  initialise_monitor_handles();
  exit(main());
}

/* newlib's exit() runs the .fini_array through __libc_fini_array, which
 * also calls _fini; crti.o would bring an empty one, -nostartfiles drops it */
void _init(void) {}
void _fini(void) {}

static void fault(const char *what) {
  printf("fault: %s\n", what);
  exit(1);
}
