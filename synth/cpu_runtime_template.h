/* oi_runtime.h - the thread pool of a synthesized folder (OpenInfer's
 * synth/cpu_runtime_template.h, with openinfer_impl/usable_cpus.h pasted in
 * at its #include).
 *
 * NAME_open starts it once; NAME_step hands it jobs and creates nothing,
 * allocates nothing. A job is `n_tasks` calls fn(arg, task), each task
 * writing its own part of a kernel's output, so the result does not depend
 * on which thread ran which task or how many threads there are. The
 * calling thread takes tasks too, and the caller waits for the tasks, not
 * for the workers, so a thread that the OS delays costs no more than the
 * task it holds.
 *
 * Each thread has a home block of every job's tasks: thread w of T the
 * w-th of T equal runs. The kernels number their tasks along C's rows
 * (a row block, or a tile, or a (batch, head) pair, in order), so a thread
 * reads mostly the rows it wrote itself in the kernel before, from its own
 * cache rather than the other core's. A thread done with its block takes
 * the tasks left in the others' blocks, so a slow thread is still helped.
 *
 * Between jobs a worker polls the job counter for a while (the kernels of
 * a step follow each other closely), then sleeps on a condition variable.
 * As the simulator's pool (openinfer_impl/threadpool.c), only the first
 * microseconds of polling are plain: past them each poll yields the core,
 * so on a machine whose cores other processes keep busy a waiting thread
 * does not hold the core from the one it waits for.
 * Threads need POSIX threads and the GCC/Clang __atomic builtins; elsewhere,
 * or with -DOI_RT_SERIAL, every job runs on the calling thread. */
#ifndef OI_RUNTIME_H
#define OI_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#if (defined(__unix__) || defined(__APPLE__)) && (defined(__GNUC__) || defined(__clang__)) && !defined(OI_RT_SERIAL)
#define OI_RT_THREADS 1
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#else
#define OI_RT_THREADS 0
#endif

#define OI_RT_MAX_THREADS 64
#define OI_RT_STACK_BYTES (4u << 20) /* per worker thread */
#define OI_RT_SPIN_NS 200000      /* polling before a worker sleeps */
#define OI_RT_IDLE_PAUSE_NS 4000  /* a worker's plain polling, then each poll yields */
#define OI_RT_WAIT_PAUSE_NS 20000 /* the caller's, waiting for the workers' tasks */

typedef void (*oi_rt_task_fn)(void *arg, int task);

/* One job. The pool keeps two, used in turn: a worker that falls behind
 * may still read the previous job's while the caller fills the next. */
typedef struct oi_rt_job {
    oi_rt_task_fn fn; /* __atomic: written by the caller, read by workers */
    void *arg;
    int n_tasks;
} oi_rt_job;

/* A thread's home block of the current job's tasks: the next one to take,
 * tagged with the job's number (generation << 32 | task); the block ends
 * where the next thread's begins. One cache line each: the threads take
 * from their own without contention. */
typedef struct oi_rt_block {
    uint64_t next; /* __atomic */
    char pad[64 - sizeof(uint64_t)];
} oi_rt_block;

struct oi_rt_pool;
typedef struct oi_rt_worker_arg {
    struct oi_rt_pool *pool;
    int index; /* 1 .. n_threads - 1: the caller is 0 */
} oi_rt_worker_arg;

typedef struct oi_rt_pool {
    int n_threads; /* the caller included; 1: no workers */
#if OI_RT_THREADS
    int started;   /* workers running */
    pthread_t threads[OI_RT_MAX_THREADS];
    oi_rt_worker_arg worker_args[OI_RT_MAX_THREADS];
    pthread_mutex_t lock;
    pthread_cond_t wake;
    oi_rt_job jobs[2]; /* job g in jobs[g & 1] */
    oi_rt_block blocks[OI_RT_MAX_THREADS]; /* thread w's home tasks */
    /* __atomic */
    unsigned generation; /* the current job's number, bumped per job */
    int done;            /* tasks of the current job finished */
    int sleepers;        /* workers on `wake` (or about to be) */
    int stop;
#endif
} oi_rt_pool;

#if OI_RT_THREADS
#include "usable_cpus.h"
#endif

/* OPENINFER_THREADS if set (> 0), else the processors this process may use
 * (usable_cpus.h: fewer than those online under an affinity mask or a
 * cgroup CPU quota). */
static int oi_rt_default_threads(void) {
    const char *env = getenv("OPENINFER_THREADS");
    long n = env ? strtol(env, NULL, 10) : 0;
#if OI_RT_THREADS
    if (n <= 0)
        n = oi__usable_cpus();
#endif
    if (n <= 0)
        n = 1;
    return n > OI_RT_MAX_THREADS ? OI_RT_MAX_THREADS : (int)n;
}

#if OI_RT_THREADS
static inline void oi_rt_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline int64_t oi_rt_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One poll of a wait that began at `start` (poll i): plain for pause_ns,
 * then yielding; 0 once limit_ns have passed (limit_ns < 0: never). The
 * clock is read every 64 plain polls. */
static inline int oi_rt_poll(int64_t start, long i, int64_t pause_ns, int64_t limit_ns, int *yielding) {
    if (*yielding)
        sched_yield();
    else
        oi_rt_relax();
    if (*yielding || i % 64 == 0) {
        int64_t spun = oi_rt_now_ns() - start;
        if (limit_ns >= 0 && (spun > limit_ns || spun < 0))
            return 0;
        *yielding = spun > pause_ns;
    }
    return 1;
}

/* The first task of thread w's home block (w = n: the end of the last). */
static inline int oi_rt_block_start(int n_tasks, int w, int n) { return (int)((int64_t)n_tasks * w / n); }

/* Takes tasks of job `gen` from block b until it reaches `end`; a task is
 * taken by moving the block's `next` from (gen, i) to (gen, i + 1), so a
 * worker that wakes after its job ended takes nothing from the next one.
 * 0 once the job is over (a newer one began). */
static int oi_rt_take_block(oi_rt_pool *pool, unsigned gen, oi_rt_task_fn fn, void *arg, oi_rt_block *b, int end) {
    uint64_t v = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE);
    for (;;) {
        if ((unsigned)(v >> 32) != gen)
            return 0;
        if ((int)(uint32_t)v >= end)
            return 1;
        if (!__atomic_compare_exchange_n(&b->next, &v, v + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue; /* v now holds what is there */
        fn(arg, (int)(uint32_t)v);
        __atomic_add_fetch(&pool->done, 1, __ATOMIC_RELEASE);
        v = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE);
    }
}

/* Thread `self` takes the tasks of job `gen`: its own block first, then
 * what is left in the others'. The caller returns once `done` reaches the
 * job's tasks, not when the workers are back: a worker the OS delays holds
 * nobody up. */
static void oi_rt_take(oi_rt_pool *pool, unsigned gen, int self) {
    const oi_rt_job *job = &pool->jobs[gen & 1];
    oi_rt_task_fn fn = __atomic_load_n(&job->fn, __ATOMIC_ACQUIRE);
    void *arg = __atomic_load_n(&job->arg, __ATOMIC_ACQUIRE);
    int n_tasks = __atomic_load_n(&job->n_tasks, __ATOMIC_ACQUIRE), n = pool->n_threads;
    for (int k = 0; k < n; k++) {
        int w = (self + k) % n;
        if (!oi_rt_take_block(pool, gen, fn, arg, &pool->blocks[w], oi_rt_block_start(n_tasks, w + 1, n)))
            return;
    }
}

/* Waits until the generation moves past `seen` (or the pool stops). */
static unsigned oi_rt_wait(oi_rt_pool *pool, unsigned seen) {
    int64_t start = oi_rt_now_ns();
    int yielding = 0;
    for (long i = 1;; i++) {
        unsigned gen = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
        if (gen != seen || __atomic_load_n(&pool->stop, __ATOMIC_ACQUIRE))
            return gen;
        if (!oi_rt_poll(start, i, OI_RT_IDLE_PAUSE_NS, OI_RT_SPIN_NS, &yielding))
            break;
    }
    pthread_mutex_lock(&pool->lock);
    __atomic_add_fetch(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
    unsigned gen;
    while ((gen = __atomic_load_n(&pool->generation, __ATOMIC_SEQ_CST)) == seen &&
           !__atomic_load_n(&pool->stop, __ATOMIC_SEQ_CST))
        pthread_cond_wait(&pool->wake, &pool->lock);
    __atomic_sub_fetch(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pool->lock);
    return gen;
}

static void *oi_rt_worker(void *arg) {
    const oi_rt_worker_arg *me = (const oi_rt_worker_arg *)arg;
    oi_rt_pool *pool = me->pool;
    unsigned seen = 0;
    for (;;) {
        seen = oi_rt_wait(pool, seen);
        if (__atomic_load_n(&pool->stop, __ATOMIC_ACQUIRE))
            return NULL;
        oi_rt_take(pool, seen, me->index);
    }
}

static void oi_rt_wake_all(oi_rt_pool *pool) {
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
}
#endif

/* Starts n_threads - 1 workers (n_threads <= 0: oi_rt_default_threads()).
 * 0, or -1 when the system refuses a thread (the pool then runs serially
 * on what started; oi_rt_pool_stop still cleans up). */
static int oi_rt_pool_start(oi_rt_pool *pool, int n_threads) {
    if (n_threads <= 0)
        n_threads = oi_rt_default_threads();
    if (n_threads > OI_RT_MAX_THREADS)
        n_threads = OI_RT_MAX_THREADS;
    pool->n_threads = 1;
#if OI_RT_THREADS
    if (n_threads == 1)
        return 0;
    if (pthread_mutex_init(&pool->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&pool->wake, NULL) != 0) {
        pthread_mutex_destroy(&pool->lock);
        return -1;
    }
    pool->started = 1;
    /* the kernels keep their tiles and packed blocks on the stack (a few
     * hundred KiB): more than some C libraries give a thread (musl: 128 KiB) */
    pthread_attr_t attr;
    int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr)
        pthread_attr_setstacksize(&attr, (size_t)OI_RT_STACK_BYTES);
    for (int i = 1; i < n_threads; i++) {
        pool->worker_args[i].pool = pool;
        pool->worker_args[i].index = i;
        if (pthread_create(&pool->threads[i], have_attr ? &attr : NULL, oi_rt_worker, &pool->worker_args[i]) != 0)
            break;
        pool->n_threads = i + 1;
    }
    if (have_attr)
        pthread_attr_destroy(&attr);
    if (pool->n_threads < n_threads)
        return -1;
#endif
    return 0;
}

static void oi_rt_pool_stop(oi_rt_pool *pool) {
#if OI_RT_THREADS
    if (!pool->started)
        return;
    __atomic_store_n(&pool->stop, 1, __ATOMIC_SEQ_CST);
    oi_rt_wake_all(pool);
    for (int i = 1; i < pool->n_threads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    pool->started = 0;
#endif
    pool->n_threads = 1;
}

#if OI_RT_THREADS
/* Starts job gen's home blocks. The job before is done, so every block is
 * at its end: a worker still in that job finds nothing to take, and once a
 * block carries the new tag it takes nothing from it. */
static void oi_rt_deal(oi_rt_pool *pool, unsigned gen, int n_tasks) {
    for (int w = 0; w < pool->n_threads; w++) {
        uint32_t first = (uint32_t)oi_rt_block_start(n_tasks, w, pool->n_threads);
        __atomic_store_n(&pool->blocks[w].next, (uint64_t)gen << 32 | first, __ATOMIC_RELEASE);
    }
}
#endif

/* fn(arg, task) for every task in [0, n_tasks), on every thread of the
 * pool; returns when all are done. */
static void oi_rt_run(oi_rt_pool *pool, oi_rt_task_fn fn, void *arg, int n_tasks) {
#if OI_RT_THREADS
    if (pool->n_threads > 1 && n_tasks > 1) {
        unsigned gen = __atomic_load_n(&pool->generation, __ATOMIC_RELAXED) + 1;
        oi_rt_job *job = &pool->jobs[gen & 1];
        __atomic_store_n(&job->fn, fn, __ATOMIC_RELEASE);
        __atomic_store_n(&job->arg, arg, __ATOMIC_RELEASE);
        __atomic_store_n(&job->n_tasks, n_tasks, __ATOMIC_RELEASE);
        __atomic_store_n(&pool->done, 0, __ATOMIC_RELAXED);
        oi_rt_deal(pool, gen, n_tasks);
        __atomic_store_n(&pool->generation, gen, __ATOMIC_SEQ_CST); /* publishes the job */
        if (__atomic_load_n(&pool->sleepers, __ATOMIC_SEQ_CST) > 0)
            oi_rt_wake_all(pool);
        oi_rt_take(pool, gen, 0);
        /* a worker with a task that waits for a core gets ours, after a while */
        int64_t start = oi_rt_now_ns();
        int yielding = 0;
        for (long i = 1; __atomic_load_n(&pool->done, __ATOMIC_ACQUIRE) < n_tasks; i++)
            oi_rt_poll(start, i, OI_RT_WAIT_PAUSE_NS, -1, &yielding);
        return;
    }
#endif
    (void)pool;
    for (int task = 0; task < n_tasks; task++)
        fn(arg, task);
}

/* Several independent kernels as one job: part i's tasks follow part
 * i - 1's, so the threads wait once, at the end of the last. */
typedef struct oi_rt_part {
    oi_rt_task_fn fn;
    void *arg;
    int n_tasks;
} oi_rt_part;
typedef struct oi_rt_parts {
    const oi_rt_part *parts;
    int n_parts;
} oi_rt_parts;

static inline void oi_rt_parts_task(void *arg, int task) {
    const oi_rt_parts *all = (const oi_rt_parts *)arg;
    for (int i = 0; i < all->n_parts; task -= all->parts[i].n_tasks, i++)
        if (task < all->parts[i].n_tasks) {
            all->parts[i].fn(all->parts[i].arg, task);
            return;
        }
}

static inline void oi_rt_run_parts(oi_rt_pool *pool, const oi_rt_part *parts, int n_parts) {
    oi_rt_parts all = {parts, n_parts};
    int n_tasks = 0;
    for (int i = 0; i < n_parts; i++)
        n_tasks += parts[i].n_tasks;
    oi_rt_run(pool, oi_rt_parts_task, &all, n_tasks);
}

#endif /* OI_RUNTIME_H */
