/* dy_thread.h - template: dy_parallel, with which the kernels of a file
 * compiled with --threads N split their work, and the per-run worker pool
 * it hands the slices to (emitted by dy_cg_thread_prelude in
 * codegen/kernels/emit_gemm.c; NAME_run brackets its body with dy_pool_begin /
 * dy_pool_end, codegen/program/run.c).
 *
 * Template mechanism (codegen/text/templates.h): the text between the "template
 * begin" and "template end" lines is turned into C strings at build time
 * by rt/embed.cmake. The emitter replaces every occurrence of
 *
 *   DY_TPL_THREADS   with N, the number of threads (--threads N)
 *   DY_TPL_MIN_WORK  with the default of DY_THREAD_MIN_WORK
 *                    (codegen/kernels/cg_kernels.h)
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
#define DY_TPL_MIN_WORK 1048576
/* dy2stc: template begin */
/* ---- threads (dy2stc --threads DY_TPL_THREADS) ----
 * dy_parallel(n, fn, arg) runs fn(arg, lo, hi, t) over [0, n) in
 * DY_THREADS slices t (slice t is [n*t/DY_THREADS, n*(t+1)/DY_THREADS)),
 * slice 0 on the calling thread, the others on the workers of the pool
 * of the NAME_run call in progress on this thread; it returns when all
 * are done. The pool (dy_pool, on NAME_run's stack) is made by
 * dy_pool_begin, which only records it for this thread: its workers
 * are started by the first dy_parallel of the run and joined by
 * dy_pool_end. Between kernels a worker spins for a while (DY_SPIN
 * polls) on the job counter and then sleeps on a condition variable, so
 * a worker does not burn a core through a long one-thread op; the
 * caller waits for the workers the same way. Nothing is kept between
 * NAME_run calls (but the pthread key naming the current pool, made
 * once), so two threads may run the model at once, each with its own
 * pool. A worker that cannot be started (or no pool: a kernel called
 * outside NAME_run) leaves its slices to the caller: the same slices,
 * the same results. -DDY_THREAD_MIN_WORK=N changes the threshold of
 * multiply-adds below which a kernel stays on one thread, -DDY_SPIN=N
 * the spin. */
#include <pthread.h>
#define DY_THREADS DY_TPL_THREADS
#ifndef DY_THREAD_MIN_WORK /* multiply-adds below which a kernel stays on one thread */
#define DY_THREAD_MIN_WORK DY_TPL_MIN_WORK
#endif
#if defined(__GNUC__) || defined(__clang__) /* the __atomic builtins: spin */
#define DY_LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define DY_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define DY_DEC(x) __atomic_sub_fetch(&(x), 1, __ATOMIC_ACQ_REL)
/* polls (a pause each, ~15-40 ns) before a wait sleeps: 20000 (~0.3-0.8
 * ms) bridges the gap between two kernels, which a sleep and wake-up does
 * not (idle machine, 2 threads: resnet18 batch 1 12.5 ms against 18.5 ms
 * with 100 polls, mobilenet_v2 3.9 against 5.7; bench/RESULTS.md). Where
 * the threads share their cores with other work, a short spin is better
 * (-DDY_SPIN=100), as libgomp also cuts its spin when oversubscribed. */
#ifndef DY_SPIN
#define DY_SPIN 20000
#endif
#if defined(__x86_64__) || defined(__i386__)
#define DY_RELAX() __builtin_ia32_pause()
#else
#define DY_RELAX() ((void)0)
#endif
#else /* no atomics: every access under the lock, no spin */
#define DY_LOAD(x) (x)
#define DY_STORE(x, v) ((x) = (v))
#define DY_DEC(x) (--(x))
#undef DY_SPIN
#define DY_SPIN 0
#define DY_RELAX() ((void)0)
#endif
typedef void (*dy_part_fn)(void *arg, int64_t lo, int64_t hi, int t);
typedef struct dy_pool dy_pool;
typedef struct {
  dy_pool *pool;
  int t; /* its slice */
} dy_worker;
struct dy_pool {
  pthread_mutex_t mu;
  pthread_cond_t go, done;   /* a new job (or quit); the job's end */
  unsigned gen;              /* job number: workers run job gen when it changes */
  int left;                  /* workers still on the job */
  int sleepers, waiting;     /* workers asleep on go; the caller on done */
  int quit, started, made;   /* workers 1..made run */
  int ok;                    /* mu, go and done made */
  dy_part_fn fn;             /* the job */
  void *arg;
  int64_t n;
  void *outer;               /* this thread's pool before dy_pool_begin */
  pthread_t th[DY_THREADS];
  dy_worker w[DY_THREADS];
};

static pthread_key_t dy_pool_key;
static int dy_pool_key_ok;
static pthread_once_t dy_pool_once = PTHREAD_ONCE_INIT;
static void dy_pool_make_key(void) {
  dy_pool_key_ok = pthread_key_create(&dy_pool_key, NULL) == 0;
}

static void dy_part_run(dy_part_fn fn, void *arg, int64_t n, int t) {
  int64_t lo = n * t / DY_THREADS, hi = n * (t + 1) / DY_THREADS;
  if (lo < hi)
    fn(arg, lo, hi, t);
}

static void *dy_worker_main(void *p) {
  const dy_worker *w = (const dy_worker *)p;
  dy_pool *q = w->pool;
  unsigned seen = 0;
  for (;;) {
    long i;
    for (i = 0; i < DY_SPIN && DY_LOAD(q->gen) == seen; i++)
      DY_RELAX();
    if (DY_SPIN == 0 || DY_LOAD(q->gen) == seen) { /* no job yet: sleep */
      pthread_mutex_lock(&q->mu);
      q->sleepers++;
      while (DY_LOAD(q->gen) == seen)
        pthread_cond_wait(&q->go, &q->mu);
      q->sleepers--;
      pthread_mutex_unlock(&q->mu);
    }
    seen = DY_LOAD(q->gen); /* the job's fields and quit were set before gen */
    if (q->quit)
      return NULL;
    dy_part_run(q->fn, q->arg, q->n, w->t);
#if DY_SPIN > 0
    if (DY_DEC(q->left) == 0) {
      pthread_mutex_lock(&q->mu);
      if (q->waiting)
        pthread_cond_signal(&q->done);
      pthread_mutex_unlock(&q->mu);
    }
#else
    pthread_mutex_lock(&q->mu);
    if (DY_DEC(q->left) == 0 && q->waiting)
      pthread_cond_signal(&q->done);
    pthread_mutex_unlock(&q->mu);
#endif
  }
}

/* The pool of a NAME_run call: made here, workers started on first use. */
static void dy_pool_begin(dy_pool *q) {
  q->gen = 0, q->left = 0, q->sleepers = 0, q->waiting = 0;
  q->quit = 0, q->started = 0, q->made = 0, q->outer = NULL;
  q->fn = NULL, q->arg = NULL, q->n = 0;
  q->ok = pthread_mutex_init(&q->mu, NULL) == 0;
  if (q->ok && pthread_cond_init(&q->go, NULL) != 0) {
    pthread_mutex_destroy(&q->mu);
    q->ok = 0;
  }
  if (q->ok && pthread_cond_init(&q->done, NULL) != 0) {
    pthread_cond_destroy(&q->go);
    pthread_mutex_destroy(&q->mu);
    q->ok = 0;
  }
  if (q->ok && pthread_once(&dy_pool_once, dy_pool_make_key) == 0 && dy_pool_key_ok) {
    q->outer = pthread_getspecific(dy_pool_key);
    if (pthread_setspecific(dy_pool_key, q) != 0)
      q->ok = 0;
  } else if (q->ok) {
    pthread_cond_destroy(&q->done);
    pthread_cond_destroy(&q->go);
    pthread_mutex_destroy(&q->mu);
    q->ok = 0;
  }
}

/* Its workers told to quit and joined; the thread's pool as before. */
static void dy_pool_end(dy_pool *q) {
  int t;
  if (!q->ok)
    return;
  if (q->made > 0) {
    pthread_mutex_lock(&q->mu);
    q->quit = 1;
    DY_STORE(q->gen, q->gen + 1);
    pthread_cond_broadcast(&q->go);
    pthread_mutex_unlock(&q->mu);
    for (t = 1; t <= q->made; t++)
      pthread_join(q->th[t], NULL);
  }
  pthread_setspecific(dy_pool_key, q->outer);
  pthread_cond_destroy(&q->done);
  pthread_cond_destroy(&q->go);
  pthread_mutex_destroy(&q->mu);
}

static void dy_parallel(int64_t n, dy_part_fn fn, void *arg) {
  dy_pool *q = NULL;
  int t;
  long i;
  if (pthread_once(&dy_pool_once, dy_pool_make_key) == 0 && dy_pool_key_ok)
    q = (dy_pool *)pthread_getspecific(dy_pool_key);
  if (q && !q->started) { /* the run's first split: start the workers */
    q->started = 1;
    for (t = 1; t < DY_THREADS; t++) {
      q->w[t].pool = q, q->w[t].t = t;
      if (pthread_create(&q->th[t], NULL, dy_worker_main, &q->w[t]) != 0)
        break;
      q->made = t;
    }
  }
  if (!q || q->made == 0) { /* no workers: every slice here */
    for (t = 0; t < DY_THREADS; t++)
      dy_part_run(fn, arg, n, t);
    return;
  }
  q->fn = fn, q->arg = arg, q->n = n;
  pthread_mutex_lock(&q->mu);
  DY_STORE(q->left, q->made);
  DY_STORE(q->gen, q->gen + 1);
  if (q->sleepers > 0)
    pthread_cond_broadcast(&q->go);
  pthread_mutex_unlock(&q->mu);
  dy_part_run(fn, arg, n, 0);
  for (t = q->made + 1; t < DY_THREADS; t++) /* workers that could not start */
    dy_part_run(fn, arg, n, t);
  for (i = 0; i < DY_SPIN && DY_LOAD(q->left) > 0; i++)
    DY_RELAX();
  pthread_mutex_lock(&q->mu);
  q->waiting = 1;
  while (DY_LOAD(q->left) > 0)
    pthread_cond_wait(&q->done, &q->mu);
  q->waiting = 0;
  pthread_mutex_unlock(&q->mu);
}

/* dy2stc: template end */
/* a use, so that a file of this template alone has no unused function */
static void dy_tpl_check_part(void *arg, int64_t lo, int64_t hi, int t) {
  (void)arg, (void)lo, (void)hi, (void)t;
}
void dy_tpl_check_threads(void);
void dy_tpl_check_threads(void) {
  dy_pool q;
  dy_pool_begin(&q);
  dy_parallel(16, dy_tpl_check_part, NULL);
  dy_pool_end(&q);
}
#endif /* DY_RT_THREAD_H */
