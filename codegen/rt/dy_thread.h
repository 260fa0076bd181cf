/* dy_thread.h - template: dy_parallel, with which the kernels of a file
 * compiled with --threads N split their work (emitted by
 * dy_cg_thread_prelude in codegen/emit_gemm.c, which documents its use).
 *
 * Template mechanism (codegen/templates.h): the text between the "template
 * begin" and "template end" lines is turned into C strings at build time
 * by rt/embed.cmake. The emitter replaces every occurrence of
 *
 *   DY_TPL_THREADS   with N, the number of threads (--threads N)
 *   DY_TPL_MIN_WORK  with the default of DY_THREAD_MIN_WORK
 *                    (codegen_internal.h)
 *
 * which the stand-ins below define so that the file compiles on its own
 * (tests/test_templates.c), with <stdint.h> and <stddef.h>, which NAME.c
 * includes before it.
 */
#ifndef DY_RT_THREAD_H
#define DY_RT_THREAD_H
#include <stddef.h>
#include <stdint.h>
#define DY_TPL_THREADS 4
#define DY_TPL_MIN_WORK 8388608
/* dy2stc: template begin */
/* ---- threads (dy2stc --threads DY_TPL_THREADS) ----
 * dy_parallel(n, fn, arg) runs fn(arg, lo, hi, t) over [0, n) in
 * DY_THREADS slices t, slice 0 on the calling thread, the others on
 * threads made for the call and joined before it returns (a thread
 * that cannot be made runs its slice on the caller). Nothing is kept
 * between calls. -DDY_THREAD_MIN_WORK=N changes the threshold. */
#include <pthread.h>
#define DY_THREADS DY_TPL_THREADS
#ifndef DY_THREAD_MIN_WORK /* multiply-adds below which a kernel stays on one thread */
#define DY_THREAD_MIN_WORK DY_TPL_MIN_WORK
#endif
typedef void (*dy_part_fn)(void *arg, int64_t lo, int64_t hi, int t);
typedef struct {
  dy_part_fn fn;
  void *arg;
  int64_t lo, hi;
  int t;
} dy_part;

static void *dy_part_main(void *p) {
  const dy_part *q = (const dy_part *)p;
  q->fn(q->arg, q->lo, q->hi, q->t);
  return NULL;
}

static void dy_parallel(int64_t n, dy_part_fn fn, void *arg) {
  pthread_t th[DY_THREADS];
  dy_part part[DY_THREADS];
  int made[DY_THREADS], t;
  for (t = 0; t < DY_THREADS; t++) {
    part[t].fn = fn, part[t].arg = arg, part[t].t = t;
    part[t].lo = n * t / DY_THREADS, part[t].hi = n * (t + 1) / DY_THREADS;
    made[t] = t > 0 && part[t].lo < part[t].hi &&
              pthread_create(&th[t], NULL, dy_part_main, &part[t]) == 0;
  }
  fn(arg, part[0].lo, part[0].hi, 0);
  for (t = 1; t < DY_THREADS; t++) {
    if (made[t])
      pthread_join(th[t], NULL);
    else if (part[t].lo < part[t].hi)
      fn(arg, part[t].lo, part[t].hi, t);
  }
}

/* dy2stc: template end */
/* a use, so that a file of this template alone has no unused function */
static void dy_tpl_check_part(void *arg, int64_t lo, int64_t hi, int t) {
  (void)arg, (void)lo, (void)hi, (void)t;
}
void dy_tpl_check_threads(void);
void dy_tpl_check_threads(void) { dy_parallel(16, dy_tpl_check_part, NULL); }
#endif /* DY_RT_THREAD_H */
