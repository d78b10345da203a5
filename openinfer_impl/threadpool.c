/* threadpool.c - a small persistent pool of worker threads.
 *
 * The executor creates one pool and keeps it for its lifetime, so an op
 * never pays for thread creation. oi__threadpool_run hands out tasks
 * 0..n_tasks-1 to the workers *and* the calling thread (which counts as
 * thread 0), and returns when every task has finished.
 *
 * All shared state is guarded by one mutex: tasks are coarse (a tile of a
 * matmul, a slice of a tensor), so claiming one under the lock costs
 * nothing measurable and the pool stays simple and race-free.
 *
 * Between jobs a worker first spins for OI__THREADPOOL_SPIN_NS, watching
 * the job counter, then sleeps on a condition variable. Ops of a graph come
 * back to back, and waking a sleeping thread costs tens of microseconds
 * (milliseconds when its core is busy with another process), as much as a
 * whole small matmul. The caller spins the same way for the last task.
 * Past a first stretch of plain polling (OI__THREADPOOL_IDLE_PAUSE_NS for
 * an idle worker, OI__THREADPOOL_WAIT_PAUSE_NS for the caller), each poll
 * yields the core (sched_yield). When other processes keep the machine's
 * cores busy, the caller and a worker can end up on one core, and a thread
 * that only polls holds it from the one it waits for: on the 2-core dev
 * machine a job of two 4 us tasks then took 10 us (5 us on the caller
 * alone), and Silero VAD's split products (oi__threadpool_run_parts) lost
 * 0.2-1.3 ms a stall, several a clip. (Spinning needs the GCC/clang atomic
 * builtins; elsewhere threads sleep.)
 *
 * The caller waits for the job's tasks, not for the workers: on a machine
 * whose other cores are busy, a worker may wake long after the caller has
 * run every task itself, and then simply finds nothing left to do.
 *
 * Each thread has a home block of every job's tasks: thread t of n the
 * t-th of n equal runs, taken in order before any other. The kernels
 * number their tasks along their output's rows (row blocks, tiles row by
 * row, (batch, head) pairs), so a thread mostly reads the rows it wrote
 * itself in the op before, from its own core's cache rather than the other
 * core's (all-MiniLM-L6-v2's 8 x 64 step: 3-6 % faster on 2 threads than
 * with one shared queue). A thread done with its block takes what is left
 * in the others'. */
#include "internal.h"
#include "usable_cpus.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#define OI__THREADPOOL_SPIN_NS 200000      /* 0.2 ms */
#define OI__THREADPOOL_IDLE_PAUSE_NS 4000  /* an idle worker: then polls with sched_yield */
#define OI__THREADPOOL_WAIT_PAUSE_NS 20000 /* the caller, for the workers' tasks: then the same */

/* Fields read while spinning, outside the lock, go through these; writes
 * to them also happen under the lock, so the sleeping path stays exact. */
#if defined(__GNUC__) || defined(__clang__)
#define OI__THREADPOOL_CAN_SPIN 1
#define OI__LOAD(field) __atomic_load_n(&(field), __ATOMIC_ACQUIRE)
#define OI__STORE(field, value) __atomic_store_n(&(field), (value), __ATOMIC_RELEASE)
#else
#define OI__THREADPOOL_CAN_SPIN 0
#define OI__LOAD(field) (field)
#define OI__STORE(field, value) ((field) = (value))
#endif

struct oi__threadpool {
    int n_threads;        /* workers + the calling thread */
    pthread_t *workers;   /* n_threads - 1 */
    int n_started;        /* workers actually created */
    pthread_mutex_t lock;
    pthread_cond_t wake;  /* workers: a new job or shutdown */
    pthread_cond_t done;  /* caller: the last task of the job finished */
    pthread_mutex_t run_lock; /* one job at a time per pool */
    /* The current job; fn and ctx are only read after claiming a task. */
    void (*fn)(void *ctx, int task, int thread);
    void *ctx;
    int n_tasks;
    int *next_task;       /* n_threads: thread t's next home task */
    unsigned finished_tasks;
    unsigned generation;  /* bumped per job: wakes the workers */
    bool shutdown;
    int parts_inline;     /* oi__threadpool_run_parts: calls left to run on the caller alone */
};

/* The pool whose job this thread is running, so a task that calls
 * oi__threadpool_run on the same pool runs inline instead of deadlocking. */
static OI__THREAD_LOCAL const oi__threadpool *oi__threadpool_current;

/* The first task of thread t's home block (t = n_threads: the job's end). */
static int oi__threadpool_home_start(const oi__threadpool *pool, int t) {
    return (int)((int64_t)pool->n_tasks * t / pool->n_threads);
}

/* Claims thread's next task: from its home block, else from the first
 * block after it with tasks left; -1 when all are handed out. Called with
 * pool->lock held. */
static int oi__threadpool_claim(oi__threadpool *pool, int thread) {
    for (int k = 0; k < pool->n_threads; k++) {
        int t = (thread + k) % pool->n_threads;
        if (pool->next_task[t] < oi__threadpool_home_start(pool, t + 1))
            return pool->next_task[t]++;
    }
    return -1;
}

/* Runs tasks until none are left; called with pool->lock held, returns
 * with it held. */
static void oi__threadpool_work(oi__threadpool *pool, int thread) {
    for (;;) {
        int task = oi__threadpool_claim(pool, thread);
        if (task < 0)
            return;
        void (*fn)(void *, int, int) = pool->fn;
        void *ctx = pool->ctx;
        pthread_mutex_unlock(&pool->lock);
        fn(ctx, task, thread);
        pthread_mutex_lock(&pool->lock);
        OI__STORE(pool->finished_tasks, pool->finished_tasks + 1);
        if ((int)pool->finished_tasks == pool->n_tasks)
            pthread_cond_signal(&pool->done);
    }
}

/* C11's clock (wall time): clock_gettime would need POSIX feature macros
 * that a program including openinfer.h need not define. */
static int64_t oi__threadpool_now_ns(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void oi__threadpool_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spins (without the lock) until `*value != unchanged`, shutdown, or the
 * spin time is up; past pause_ns each poll yields the core. The caller
 * re-checks under the lock either way. */
static void oi__threadpool_spin_while(const oi__threadpool *pool, const unsigned *value, unsigned unchanged,
                                      int64_t pause_ns) {
#if OI__THREADPOOL_CAN_SPIN
    int64_t start = oi__threadpool_now_ns();
    bool yielding = false;
    for (unsigned i = 1;; i++) {
        if (OI__LOAD(*value) != unchanged || OI__LOAD(pool->shutdown))
            return;
        if (yielding)
            sched_yield();
        else
            oi__threadpool_cpu_relax();
        if (yielding || i % 64 == 0) {
            int64_t spun = oi__threadpool_now_ns() - start;
            if (spun > OI__THREADPOOL_SPIN_NS || spun < 0) /* < 0: the clock was set back */
                return;
            yielding = spun > pause_ns;
        }
    }
#else
    (void)pool;
    (void)value;
    (void)unchanged;
    (void)pause_ns;
#endif
}

typedef struct oi__threadpool_worker_arg {
    oi__threadpool *pool;
    int thread;
} oi__threadpool_worker_arg;

static void *oi__threadpool_worker(void *arg_ptr) {
    oi__threadpool_worker_arg *arg = (oi__threadpool_worker_arg *)arg_ptr;
    oi__threadpool *pool = arg->pool;
    int thread = arg->thread;
    oi__free(arg);
    oi__threadpool_current = pool;

    unsigned seen = 0; /* jobs start at generation 1 */
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        if (!pool->shutdown && pool->generation == seen) {
            pthread_mutex_unlock(&pool->lock);
            oi__threadpool_spin_while(pool, &pool->generation, seen, OI__THREADPOOL_IDLE_PAUSE_NS);
            pthread_mutex_lock(&pool->lock);
        }
        while (!pool->shutdown && pool->generation == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->shutdown)
            break;
        seen = pool->generation;
        oi__threadpool_work(pool, thread);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Stops and joins the workers that were started, then frees the pool. */
static void oi__threadpool_destroy(oi__threadpool *pool) {
    pthread_mutex_lock(&pool->lock);
    OI__STORE(pool->shutdown, true);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n_started; i++)
        pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->lock);
    pthread_mutex_destroy(&pool->run_lock);
    oi__free(pool->workers);
    oi__free(pool->next_task);
    oi__free(pool);
}

oi__threadpool *oi__threadpool_new(int n_threads) {
    if (n_threads < 0) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "thread pool: n_threads is %d; use 0 for all cores or a positive count", n_threads);
        return NULL;
    }
    if (n_threads == 0)
        n_threads = oi__usable_cpus();
    oi__threadpool *pool = (oi__threadpool *)oi__calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->n_threads = n_threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_mutex_init(&pool->run_lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->next_task = (int *)oi__calloc((size_t)n_threads, sizeof *pool->next_task);
    if (!pool->next_task) {
        oi__threadpool_destroy(pool);
        return NULL;
    }
    if (n_threads > 1) {
        pool->workers = (pthread_t *)oi__malloc((size_t)(n_threads - 1) * sizeof *pool->workers);
        if (!pool->workers) {
            oi__threadpool_destroy(pool);
            return NULL;
        }
    }
    for (int i = 0; i + 1 < n_threads; i++) {
        oi__threadpool_worker_arg *arg = (oi__threadpool_worker_arg *)oi__malloc(sizeof *arg);
        if (!arg) {
            oi__threadpool_destroy(pool);
            return NULL;
        }
        arg->pool = pool;
        arg->thread = i + 1;
        int err = pthread_create(&pool->workers[i], NULL, oi__threadpool_worker, arg);
        if (err != 0) {
            oi__free(arg);
            oi__threadpool_destroy(pool);
            oi__fail(OI_ERROR_RUNTIME, "thread pool: cannot start thread %d of %d (%s)", i + 2, n_threads, strerror(err));
            return NULL;
        }
        pool->n_started++;
    }
    return pool;
}

void oi__threadpool_free(oi__threadpool *pool) {
    if (pool)
        oi__threadpool_destroy(pool);
}

int oi__threadpool_size(const oi__threadpool *pool) { return pool ? pool->n_threads : 1; }

static void oi__threadpool_run_inline(int n_tasks, void (*fn)(void *, int, int), void *ctx) {
    for (int task = 0; task < n_tasks; task++)
        fn(ctx, task, 0);
}

void oi__threadpool_run(oi__threadpool *pool, int n_tasks, void (*fn)(void *ctx, int task, int thread), void *ctx) {
    if (n_tasks <= 0)
        return;
    if (!pool || pool->n_threads <= 1 || n_tasks == 1 || oi__threadpool_current == pool) {
        oi__threadpool_run_inline(n_tasks, fn, ctx);
        return;
    }
    pthread_mutex_lock(&pool->run_lock);
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->ctx = ctx;
    pool->n_tasks = n_tasks;
    for (int t = 0; t < pool->n_threads; t++)
        pool->next_task[t] = oi__threadpool_home_start(pool, t);
    OI__STORE(pool->finished_tasks, 0u);
    OI__STORE(pool->generation, pool->generation + 1);
    pthread_cond_broadcast(&pool->wake);

    const oi__threadpool *outer = oi__threadpool_current;
    oi__threadpool_current = pool;
    oi__threadpool_work(pool, 0);
    oi__threadpool_current = outer;

    unsigned all = (unsigned)n_tasks;
    if (pool->finished_tasks < all) {
        unsigned finished = pool->finished_tasks;
        pthread_mutex_unlock(&pool->lock);
        /* Spin while tasks keep finishing (the workers are running). */
        while (finished < all) {
            oi__threadpool_spin_while(pool, &pool->finished_tasks, finished, OI__THREADPOOL_WAIT_PAUSE_NS);
            unsigned now = OI__LOAD(pool->finished_tasks);
            if (now == finished)
                break; /* nothing finished for a while: sleep */
            finished = now;
        }
        pthread_mutex_lock(&pool->lock);
    }
    while (pool->finished_tasks < all)
        pthread_cond_wait(&pool->done, &pool->lock);
    pool->fn = NULL;
    pool->ctx = NULL;
    pthread_mutex_unlock(&pool->lock);
    pthread_mutex_unlock(&pool->run_lock);
}

/* ---- parts pinned to threads ----
 * A part waits for its thread only while that thread keeps up. When the
 * caller waited long for the others after its own part (a worker
 * descheduled mid-part: its core is busy with another process), the next
 * OI__THREADPOOL_PARTS_BACKOFF calls run every part on the caller, which
 * then never waits for a core it does not get; after them, parts are
 * pinned again. A part that another thread had to take (its own took its
 * task late, which costs the caller nothing but the locality) turns the
 * pinning off for a few calls only. */
#define OI__THREADPOOL_PARTS_BACKOFF 1024
#define OI__THREADPOOL_PARTS_SHORT_BACKOFF 16
#define OI__THREADPOOL_PARTS_WAIT_NS 50000 /* 50 us: more than a whole part of the ops this serves */

typedef struct oi__threadpool_parts {
    void (*fn)(void *ctx, int part, int thread);
    void *ctx;
    int n_parts;
    int claimed[OI__THREADPOOL_MAX_PARTS];
    bool moved;             /* a part ran on a thread other than its own */
    int64_t caller_done_ns; /* when the caller finished its last part */
} oi__threadpool_parts;

/* Claims part p; false if another call has it. */
static bool oi__threadpool_claim_part(oi__threadpool_parts *parts, int p) {
#if OI__THREADPOOL_CAN_SPIN
    return __atomic_exchange_n(&parts->claimed[p], 1, __ATOMIC_ACQ_REL) == 0;
#else
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    bool mine = parts->claimed[p] == 0;
    parts->claimed[p] = 1;
    pthread_mutex_unlock(&lock);
    return mine;
#endif
}

/* One task per part: its own part when the thread's is free, else the
 * first free one (there is always one: as many tasks as parts). */
static void oi__threadpool_part_task(void *ctx, int task, int thread) {
    oi__threadpool_parts *parts = (oi__threadpool_parts *)ctx;
    (void)task;
    int p = thread < parts->n_parts && oi__threadpool_claim_part(parts, thread) ? thread : -1;
    for (int q = 0; p < 0 && q < parts->n_parts; q++)
        if (oi__threadpool_claim_part(parts, q))
            p = q;
    if (p < 0)
        return;
    parts->fn(parts->ctx, p, thread);
    if (p != thread)
        OI__STORE(parts->moved, true);
    if (thread == 0)
        parts->caller_done_ns = oi__threadpool_now_ns();
}

typedef struct oi__threadpool_ranges {
    void (*fn)(void *ctx, int64_t first, int64_t end);
    void *ctx;
    int64_t count, per_task;
} oi__threadpool_ranges;

static void oi__threadpool_range_task(void *ctx, int task, int thread) {
    const oi__threadpool_ranges *r = (const oi__threadpool_ranges *)ctx;
    (void)thread;
    int64_t first = (int64_t)task * r->per_task, end = first + r->per_task;
    r->fn(r->ctx, first, end < r->count ? end : r->count);
}

void oi__threadpool_run_ranges(oi__threadpool *pool, int64_t count, int per_thread,
                               void (*fn)(void *ctx, int64_t first, int64_t end), void *ctx) {
    if (count <= 0)
        return;
    int64_t tasks = pool ? (int64_t)oi__threadpool_size(pool) * (per_thread > 0 ? per_thread : 1) : 1;
    tasks = tasks > count ? count : tasks;
    oi__threadpool_ranges r = {fn, ctx, count, (count + tasks - 1) / tasks};
    oi__threadpool_run(pool, (int)((count + r.per_task - 1) / r.per_task), oi__threadpool_range_task, &r);
}

void oi__threadpool_run_parts(oi__threadpool *pool, int n_parts, void (*fn)(void *ctx, int part, int thread),
                              void *ctx) {
    if (n_parts > OI__THREADPOOL_MAX_PARTS || n_parts > oi__threadpool_size(pool)) {
        oi__threadpool_run(pool, n_parts, fn, ctx); /* not pinned, still every part */
        return;
    }
    if (!pool || pool->n_threads <= 1 || oi__threadpool_current == pool || OI__LOAD(pool->parts_inline) > 0) {
        if (pool && pool->n_threads > 1 && oi__threadpool_current != pool)
            OI__STORE(pool->parts_inline, OI__LOAD(pool->parts_inline) - 1);
        oi__threadpool_run_inline(n_parts, fn, ctx);
        return;
    }
    oi__threadpool_parts parts;
    memset(&parts, 0, sizeof parts); /* (no designated initializers: the drop-in header compiles as C++17) */
    parts.fn = fn;
    parts.ctx = ctx;
    parts.n_parts = n_parts;
    oi__threadpool_run(pool, n_parts, oi__threadpool_part_task, &parts);
    int64_t waited = parts.caller_done_ns ? oi__threadpool_now_ns() - parts.caller_done_ns : 0;
    if (waited > OI__THREADPOOL_PARTS_WAIT_NS)
        OI__STORE(pool->parts_inline, OI__THREADPOOL_PARTS_BACKOFF);
    else if (OI__LOAD(parts.moved))
        OI__STORE(pool->parts_inline, OI__THREADPOOL_PARTS_SHORT_BACKOFF);
}

/* ---- the process-wide pool, for callers without an executor ---- */
static pthread_once_t oi__default_pool_once = PTHREAD_ONCE_INIT;
static oi__threadpool *oi__default_pool;

static void oi__default_pool_create(void) { oi__default_pool = oi__threadpool_new(0); }

/* The pool an executor lends to the kernels it runs on this thread. */
static OI__THREAD_LOCAL oi__threadpool *oi__threadpool_lent;

oi__threadpool *oi__threadpool_lend(oi__threadpool *pool) {
    oi__threadpool *previous = oi__threadpool_lent;
    oi__threadpool_lent = pool;
    return previous;
}

oi__threadpool *oi__threadpool_default(void) {
    if (oi__threadpool_lent)
        return oi__threadpool_lent;
    pthread_once(&oi__default_pool_once, oi__default_pool_create);
    return oi__default_pool;
}
