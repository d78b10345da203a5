/* test_gemm.c - the thread pool and the f32/f64 matrix multiply, checked
 * against a naive triple loop accumulating in double, for every code path
 * (portable, AVX2, AVX-512 where the CPU has them), every transpose, edge
 * sizes, alpha/beta, padded leading dimensions and 1..3 threads; then
 * oi__gemm_f32_ex: operands of arbitrary strides, the bias row and the
 * packed copy of a model-weight B (reuse, layout mismatch, release). */
#include "../openinfer_impl/internal.h"
#include "../openinfer_impl/usable_cpus.h"
#include "alloc_hooks.h"
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* ---- thread pool ---- */
#define TASKS 1000

typedef struct {
    int runs[TASKS];
    int max_thread;
    int n_threads;
    bool bad_thread;
} count_ctx;

/* Each task writes only its own slot; the thread index must be in range. */
static void count_task(void *ctx_ptr, int task, int thread) {
    count_ctx *ctx = (count_ctx *)ctx_ptr;
    ctx->runs[task]++;
    if (thread < 0 || thread >= ctx->n_threads)
        ctx->bad_thread = true;
}

/* The first task of the caller's home block takes a while: the rest of the
 * job is taken over by the other threads, and still runs once per task. */
static void slow_first_task(void *ctx_ptr, int task, int thread) {
    if (task == 0)
        usleep(20000);
    count_task(ctx_ptr, task, thread);
}

/* Runs n_tasks calls of fn (count_task, or a task that calls it) on the pool:
 * each task must run exactly once, on a thread of the pool. */
static void check_tasks_once(oi__threadpool *pool, int n_tasks, void (*fn)(void *, int, int)) {
    static count_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.n_threads = oi__threadpool_size(pool);
    oi__threadpool_run(pool, n_tasks, fn, &ctx);
    int wrong = 0;
    for (int t = 0; t < TASKS; t++)
        wrong += ctx.runs[t] != (t < n_tasks ? 1 : 0);
    CHECK_MSG(wrong == 0, "%d of %d tasks did not run exactly once (pool of %d)", wrong, n_tasks, ctx.n_threads);
    CHECK(!ctx.bad_thread);
}

static void check_each_task_once(oi__threadpool *pool, int n_tasks) { check_tasks_once(pool, n_tasks, count_task); }

typedef struct {
    oi__threadpool *pool;
    int inner_runs[8];
} nested_ctx;

static void inner_task(void *ctx_ptr, int task, int thread) {
    (void)thread;
    int *slot = (int *)ctx_ptr;
    *slot += task + 1;
}

/* A task that runs a job on its own pool: must run inline, not deadlock. */
static void nested_task(void *ctx_ptr, int task, int thread) {
    nested_ctx *ctx = (nested_ctx *)ctx_ptr;
    (void)thread;
    oi__threadpool_run(ctx->pool, 3, inner_task, &ctx->inner_runs[task]);
}

typedef struct {
    oi__threadpool *pool;
    bool ok;
} caller_ctx;

/* Two user threads share one pool: the jobs take turns. */
static void *concurrent_caller(void *arg) {
    caller_ctx *ctx = (caller_ctx *)arg;
    count_ctx *counts = (count_ctx *)calloc(1, sizeof *counts);
    counts->n_threads = oi__threadpool_size(ctx->pool);
    ctx->ok = true;
    for (int round = 0; round < 50; round++) {
        memset(counts->runs, 0, sizeof counts->runs);
        oi__threadpool_run(ctx->pool, 64, count_task, counts);
        for (int t = 0; t < 64; t++)
            if (counts->runs[t] != 1)
                ctx->ok = false;
    }
    free(counts);
    return NULL;
}

/* usable_cpus.h: a CPU list's count, and a pool asked for every core
 * starts no more threads than the affinity mask allows (as under taskset
 * or a container's cpuset). */
static void test_usable_cpus(void) {
    CHECK_EQ_INT(oi__cpu_list_count("0-3,8,10-11"), 7);
    CHECK_EQ_INT(oi__cpu_list_count("5"), 1);
    CHECK_EQ_INT(oi__cpu_list_count("0-1\n"), 2);
    CHECK_EQ_INT(oi__cpu_list_count(""), 0);
    CHECK_EQ_INT(oi__cpu_list_count("3-1"), 0);
    CHECK_EQ_INT(oi__cpu_list_count("x"), 0);
    CHECK_EQ_INT(oi__cpu_max_cpus("150000 100000"), 2); /* docker --cpus=1.5 */
    CHECK_EQ_INT(oi__cpu_max_cpus("200000 100000"), 2);
    CHECK_EQ_INT(oi__cpu_max_cpus("max 100000"), 0);
    CHECK_EQ_INT(oi__cpu_max_cpus(""), 0);
    int usable = oi__usable_cpus();
    CHECK(usable >= 1 && usable <= sysconf(_SC_NPROCESSORS_ONLN));
#if defined(__linux__)
    cpu_set_t saved, one;
    CHECK(sched_getaffinity(0, sizeof saved, &saved) == 0);
    CHECK_EQ_INT(oi__affinity_cpus(), CPU_COUNT(&saved)); /* what /proc says is the kernel's mask */
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &saved)) {
            CPU_SET(cpu, &one);
            break;
        }
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK_EQ_INT(oi__usable_cpus(), 1);
    oi__threadpool *pool = oi__threadpool_new(0);
    CHECK_EQ_INT(oi__threadpool_size(pool), 1);
    oi__threadpool_free(pool);
    CHECK(sched_setaffinity(0, sizeof saved, &saved) == 0);
    CHECK_EQ_INT(oi__usable_cpus(), usable);
#endif
}

static void test_threadpool(void) {
    CHECK(oi__threadpool_new(-1) == NULL);
    CHECK_EQ_INT(oi__threadpool_size(NULL), 1);
    check_each_task_once(NULL, 10);

    for (int n_threads = 1; n_threads <= 4; n_threads++) {
        oi__threadpool *pool = oi__threadpool_new(n_threads);
        CHECK(pool != NULL);
        CHECK_EQ_INT(oi__threadpool_size(pool), n_threads);
        check_each_task_once(pool, 0);
        check_each_task_once(pool, 1);
        check_each_task_once(pool, 7);
        for (int round = 0; round < 200; round++)
            check_each_task_once(pool, 1 + round % 5);
        /* Gaps longer than the workers' spin: they sleep and are woken. */
        for (int round = 0; round < 5; round++) {
            usleep(1000);
            check_each_task_once(pool, 9);
        }
        check_each_task_once(pool, TASKS);
        check_tasks_once(pool, 2 * n_threads + 1, slow_first_task);

        nested_ctx nested;
        memset(&nested, 0, sizeof nested);
        nested.pool = pool;
        oi__threadpool_run(pool, 8, nested_task, &nested);
        for (int t = 0; t < 8; t++)
            CHECK_EQ_INT(nested.inner_runs[t], 1 + 2 + 3);
        oi__threadpool_free(pool);
    }

    oi__threadpool *shared = oi__threadpool_new(2);
    caller_ctx callers[2] = {{shared, false}, {shared, false}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, concurrent_caller, &callers[i]);
    for (int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
        CHECK(callers[i].ok);
    }
    oi__threadpool_free(shared);

    oi__threadpool *def = oi__threadpool_default();
    CHECK(def != NULL);
    CHECK(def == oi__threadpool_default());
    CHECK(oi__threadpool_size(def) >= 1);
    check_each_task_once(def, 100);
}

/* ---- gemm ---- */
static unsigned rng_state = 12345u;
static float rand_uniform(void) { /* [-1, 1) */
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

#define GUARD 777.0f

typedef struct {
    int64_t m, n, k;
} shape;

/* Fills a rows x cols matrix with leading dimension ld; the padding holds GUARD. */
static float *random_matrix(int64_t rows, int64_t cols, int64_t ld) {
    size_t count = (size_t)(rows * ld) + 1;
    float *x = (float *)malloc(count * sizeof *x);
    for (size_t i = 0; i < count; i++)
        x[i] = GUARD;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            x[i * ld + j] = rand_uniform();
    return x;
}

/* The expected C and a bound on its rounding error, accumulated in double. */
static void reference_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const float *a,
                           int64_t lda, const float *b, int64_t ldb, double beta, const float *c0, int64_t ldc,
                           double *want, double *scale) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, abs_sum = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = ta ? a[p * lda + i] : a[i * lda + p];
                double y = tb ? b[j * ldb + p] : b[p * ldb + j];
                sum += x * y;
                abs_sum += fabs(x * y);
            }
            double old = beta == 0 ? 0 : beta * c0[i * ldc + j];
            want[i * n + j] = alpha * sum + old;
            scale[i * n + j] = fabs(alpha) * abs_sum + fabs(old) + 1e-30;
        }
}

typedef struct {
    const char *name;
    oi__threadpool *pool;
} pool_case;

static int gemm_failures_reported;

/* Runs oi__gemm_f32 on a copy of c0 and compares every element (and the
 * untouched padding) with the reference. */
static void check_gemm_f32(const char *isa, const pool_case *pc, bool ta, bool tb, shape s, float alpha,
                           float beta, const float *a, int64_t lda, const float *b, int64_t ldb, const float *c0,
                           int64_t ldc, const double *want, const double *scale) {
    size_t c_count = (size_t)(s.m * ldc) + 1;
    float *c = (float *)malloc(c_count * sizeof *c);
    memcpy(c, c0, c_count * sizeof *c);
    CHECK_OK(oi__gemm_f32(pc->pool, ta, tb, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, c, ldc));
    int64_t bad = 0, first_i = 0, first_j = 0;
    for (int64_t i = 0; i < s.m; i++)
        for (int64_t j = 0; j < s.n; j++) {
            double err = fabs((double)c[i * ldc + j] - want[i * s.n + j]);
            /* f32 rounding grows ~sqrt(k); a lost or doubled term is ~1/k of scale. */
            if (!(err <= 1e-5 * scale[i * s.n + j]) && bad++ == 0) {
                first_i = i;
                first_j = j;
            }
        }
    int64_t guards_changed = 0;
    for (int64_t i = 0; i < s.m; i++)
        for (int64_t j = s.n; j < ldc && i * ldc + j < (int64_t)c_count; j++)
            guards_changed += c[i * ldc + j] != GUARD;
    guards_changed += c[c_count - 1] != GUARD;
    CHECK_MSG(bad == 0 && guards_changed == 0,
              "%s %s ta=%d tb=%d m=%lld n=%lld k=%lld alpha=%g beta=%g: %lld wrong (first C[%lld,%lld] = %.9g, "
              "want %.9g), %lld guard values overwritten", isa, pc->name, ta, tb, (long long)s.m, (long long)s.n,
              (long long)s.k, (double)alpha, (double)beta, (long long)bad, (long long)first_i, (long long)first_j,
              bad ? (double)c[first_i * ldc + first_j] : 0.0, bad ? want[first_i * s.n + first_j] : 0.0,
              (long long)guards_changed);
    if (bad)
        gemm_failures_reported++;
    free(c);
}

static void test_gemm_f32(void) {
    static const shape shapes[] = {
        {1, 1, 1}, {1, 1, 7}, {2, 3, 4}, {5, 1, 300}, {17, 33, 65}, {12, 32, 256}, {13, 33, 257},
        {24, 64, 512}, {128, 128, 128}, {300, 7, 513}, {7, 300, 5}, {1, 700, 300}, {250, 97, 33},
        {64, 64, 0}, {0, 5, 5}, {5, 0, 5}, {203, 211, 190},
        /* skinny: m or n <= 4 (matrix-vector-like), incl. several task chunks */
        {1, 1, 5000}, {3, 600, 200}, {4, 4, 1000}, {2, 1000, 3}, {1000, 1, 17}, {700, 4, 300}, {5, 700, 40},
        /* the SIMD skinny loops: every row count, lane tails along k and the big side */
        {1, 77, 130}, {2, 129, 31}, {3, 130, 129}, {258, 4, 256}, {129, 3, 15}, {1, 512, 128},
        /* several big rows at once (4 in AVX-512, 2 in AVX2): a streaming conv's shapes, odd row counts */
        {67, 2, 387}, {65, 1, 192}, {131, 3, 23},
        /* ... and large enough (2^20 multiply-adds) to be split over the pool */
        {2, 3000, 200}, {3000, 3, 150},
        /* several row tiles on 2-3 threads: op(B) packed once for the call and shared by the tiles, three k
         * blocks; with A transposed (packed per tile) the tiles span all columns */
        {400, 200, 600},
    };
    static const float alphas[] = {1.0f, 0.5f, -1.5f, 0.0f};
    static const float betas[] = {0.0f, 2.0f, 1.0f, 0.5f};
    oi__threadpool *pool1 = oi__threadpool_new(1), *pool2 = oi__threadpool_new(2), *pool3 = oi__threadpool_new(3);
    pool_case pools[] = {{"no pool", NULL}, {"1 thread", pool1}, {"2 threads", pool2}, {"3 threads", pool3}};
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};

    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        shape s = shapes[si];
        for (int t = 0; t < 4; t++) {
            bool ta = t & 1, tb = (t >> 1) & 1;
            /* Leading dimensions with padding, so strides are exercised. */
            int64_t a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
            int64_t b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
            int64_t lda = a_cols + 3, ldb = b_cols + 1, ldc = s.n + 5;
            float *a = random_matrix(a_rows, a_cols, lda);
            float *b = random_matrix(b_rows, b_cols, ldb);
            float *c0 = random_matrix(s.m, s.n, ldc);
            size_t n_out = (size_t)(s.m * s.n) + 1;
            double *want = (double *)malloc(n_out * sizeof *want);
            double *scale = (double *)malloc(n_out * sizeof *scale);
            size_t ab = (si + (size_t)t) % 4; /* cycle alpha/beta pairs across cases */
            float alpha = alphas[ab], beta = betas[ab];
            reference_gemm(ta, tb, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, c0, ldc, want, scale);
            for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
                if (!oi__gemm_force_isa(isas[ii]))
                    continue;
                for (size_t pi = 0; pi < sizeof pools / sizeof pools[0]; pi++)
                    check_gemm_f32(oi__gemm_isa_name(isas[ii]), &pools[pi], ta, tb, s, alpha, beta, a, lda, b, ldb,
                                   c0, ldc, want, scale);
            }
            free(a);
            free(b);
            free(c0);
            free(want);
            free(scale);
        }
    }
    bool has_avx2 = oi__gemm_force_isa(OI__GEMM_ISA_AVX2), has_avx512 = oi__gemm_force_isa(OI__GEMM_ISA_AVX512);
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    printf("gemm f32: auto path is %s; avx2 %s, avx512 %s on this CPU\n", oi__gemm_isa_name(oi__gemm_active_isa()),
           has_avx2 ? "tested" : "not available", has_avx512 ? "tested" : "not available");
    oi__threadpool_free(pool1);
    oi__threadpool_free(pool2);
    oi__threadpool_free(pool3);
}

/* beta == 0 must not read C: NaN there must not leak into the result. */
static void test_gemm_beta_zero_ignores_c(void) {
    float a[40 * 40], b[40 * 40], c[40 * 40];
    for (int i = 0; i < 40 * 40; i++) {
        a[i] = 1.0f;
        b[i] = 2.0f;
        c[i] = NAN;
    }
    CHECK_OK(oi__gemm_f32(NULL, false, false, 40, 40, 40, 1.0f, a, 40, b, 40, 0.0f, c, 40));
    int wrong = 0;
    for (int i = 0; i < 40 * 40; i++)
        wrong += c[i] != 80.0f;
    CHECK_EQ_INT(wrong, 0);
}

static void test_gemm_errors(void) {
    float x[16] = {0};
    CHECK_STATUS(oi__gemm_f32(NULL, false, false, -1, 2, 2, 1.0f, x, 2, x, 2, 0.0f, x, 2), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi__gemm_f32(NULL, false, false, 2, 2, 3, 1.0f, x, 2, x, 2, 0.0f, x, 2), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "lda=2 needs >= 3");
    CHECK_STATUS(oi__gemm_f32(NULL, true, false, 3, 2, 2, 1.0f, x, 2, x, 2, 0.0f, x, 2), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi__gemm_f32(NULL, false, false, 2, 2, 2, 1.0f, NULL, 2, x, 2, 0.0f, x, 2),
                 OI_ERROR_INVALID_ARGUMENT);
    double y[16] = {0};
    CHECK_STATUS(oi__gemm_f64(NULL, false, true, 2, 2, 3, 1.0, y, 3, y, 2, 0.0, y, 2), OI_ERROR_INVALID_ARGUMENT);
}

static void test_gemm_f64(void) {
    static const shape shapes[] = {{1, 1, 1}, {17, 33, 65}, {130, 70, 129}, {3, 200, 0}};
    oi__threadpool *pool = oi__threadpool_new(2);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        shape s = shapes[si];
        for (int t = 0; t < 4; t++) {
            bool ta = t & 1, tb = (t >> 1) & 1;
            int64_t a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
            int64_t b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
            int64_t lda = a_cols + 2, ldb = b_cols + 3, ldc = s.n + 1;
            double *a = (double *)calloc((size_t)(a_rows * lda) + 1, sizeof *a);
            double *b = (double *)calloc((size_t)(b_rows * ldb) + 1, sizeof *b);
            double *c = (double *)calloc((size_t)(s.m * ldc) + 1, sizeof *c);
            double *c0 = (double *)calloc((size_t)(s.m * ldc) + 1, sizeof *c0);
            for (int64_t i = 0; i < a_rows * lda; i++)
                a[i] = rand_uniform();
            for (int64_t i = 0; i < b_rows * ldb; i++)
                b[i] = rand_uniform();
            for (int64_t i = 0; i < s.m * ldc; i++)
                c[i] = c0[i] = rand_uniform();
            double alpha = t == 3 ? -0.5 : 1.0, beta = t == 1 ? 0.0 : 1.5;
            CHECK_OK(oi__gemm_f64(pool, ta, tb, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, c, ldc));
            int64_t bad = 0;
            for (int64_t i = 0; i < s.m; i++)
                for (int64_t j = 0; j < s.n; j++) {
                    long double sum = 0;
                    for (int64_t p = 0; p < s.k; p++)
                        sum += (long double)(ta ? a[p * lda + i] : a[i * lda + p]) *
                               (tb ? b[j * ldb + p] : b[p * ldb + j]);
                    double want = (double)(alpha * sum + (beta == 0 ? 0 : beta * c0[i * ldc + j]));
                    bad += !(fabs(c[i * ldc + j] - want) <= 1e-12 * (1 + (double)s.k));
                }
            CHECK_MSG(bad == 0, "gemm f64 ta=%d tb=%d m=%lld n=%lld k=%lld: %lld wrong", ta, tb, (long long)s.m,
                      (long long)s.n, (long long)s.k, (long long)bad);
            free(a);
            free(b);
            free(c);
            free(c0);
        }
    }
    oi__threadpool_free(pool);
}

/* ---- oi__gemm_f32_ex: operands of any strides, a bias row, packed B ---- */
/* A rows x cols operand at (*base)[i * rs + j * cs] (strides may be zero or
 * negative) inside a fresh buffer of random values; returns the buffer. */
static float *strided_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, const float **base) {
    int64_t lo = 0, hi = 0;
    int64_t ends[2] = {rows > 0 ? (rows - 1) * rs : 0, cols > 0 ? (cols - 1) * cs : 0};
    for (int d = 0; d < 2; d++) {
        lo += ends[d] < 0 ? ends[d] : 0;
        hi += ends[d] > 0 ? ends[d] : 0;
    }
    size_t count = (size_t)(hi - lo + 1);
    float *x = (float *)malloc(count * sizeof *x);
    for (size_t i = 0; i < count; i++)
        x[i] = rand_uniform();
    *base = x - lo;
    return x;
}

/* C = alpha * op(A) op(B) + beta * C0 + bias from the strides alone, in
 * double; *scale bounds each element's rounding error. */
static void reference_strided(const oi__gemm_f32_args *g, const float *c0, double *want, double *scale) {
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            double sum = 0, abs_sum = 0;
            for (int64_t p = 0; p < g->k; p++) {
                double x = g->a[i * g->a_rs + p * g->a_cs], y = g->b[p * g->b_rs + j * g->b_cs];
                sum += x * y;
                abs_sum += fabs(x * y);
            }
            double old = g->beta == 0 ? 0 : (double)g->beta * c0[i * g->ldc + j];
            double bias = g->bias ? g->bias[j] : 0.0;
            want[i * g->n + j] = g->alpha * sum + old + bias;
            scale[i * g->n + j] = fabs(g->alpha) * abs_sum + fabs(old) + fabs(bias) + 1e-30;
        }
}

/* Runs the gemm on a copy of c0; the number of elements off the reference. */
static int64_t run_strided(oi__threadpool *pool, oi__gemm_f32_args g, const float *c0, const double *want,
                           const double *scale) {
    size_t count = (size_t)(g.m * g.ldc);
    float *c = (float *)malloc((count ? count : 1) * sizeof *c);
    memcpy(c, c0, count * sizeof *c);
    g.c = c;
    CHECK_OK(oi__gemm_f32_ex(pool, &g));
    int64_t bad = 0;
    for (int64_t i = 0; i < g.m; i++)
        for (int64_t j = 0; j < g.n; j++)
            bad += !(fabs((double)c[i * g.ldc + j] - want[i * g.n + j]) <= 1e-5 * scale[i * g.n + j]);
    free(c);
    return bad;
}

/* Strides of a rows x cols operand: row-major, transposed, stepped in both
 * dims (no unit stride), rows or steps walked backwards, one row repeated. */
static void operand_strides(int which, int64_t rows, int64_t cols, int64_t *rs, int64_t *cs) {
    switch (which) {
    case 0: *rs = cols + 1, *cs = 1; break;
    case 1: *rs = 1, *cs = rows + 2; break;
    case 2: *rs = 3 * cols, *cs = 3; break;
    case 3: *rs = 2, *cs = 2 * rows + 1; break;
    case 4: *rs = -cols, *cs = 1; break;
    case 5: *rs = 1, *cs = -rows; break;
    default: *rs = 0, *cs = 1; break;
    }
}
#define N_OPERAND_STRIDES 7

static void test_gemm_strided(void) {
    static const shape shapes[] = {
        {7, 9, 11},    /* small: the plain loop           */
        {22, 1, 88},   /* small and narrow: rows by four  */
        {3, 50, 40},   /* skinny m                        */
        {60, 2, 33},   /* skinny n                        */
        {37, 45, 70},  /* packed, edge tiles              */
        {50, 70, 600}, /* packed, two k blocks (kc 512)   */
    };
    oi__threadpool *pool2 = oi__threadpool_new(2);
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    int64_t cases = 0, failed = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        shape s = shapes[si];
        for (int ai = 0; ai < N_OPERAND_STRIDES; ai++)
            for (int bi = 0; bi < N_OPERAND_STRIDES; bi++) {
                oi__gemm_f32_args g;
                memset(&g, 0, sizeof g);
                g.m = s.m, g.n = s.n, g.k = s.k, g.ldc = s.n + 3;
                g.alpha = (ai + bi) % 2 ? -0.75f : 1.0f;
                g.beta = (ai + bi) % 3 == 0 ? 0.0f : 0.5f;
                operand_strides(ai, s.m, s.k, &g.a_rs, &g.a_cs);
                operand_strides(bi, s.k, s.n, &g.b_rs, &g.b_cs);
                float *a = strided_matrix(s.m, s.k, g.a_rs, g.a_cs, &g.a);
                float *b = strided_matrix(s.k, s.n, g.b_rs, g.b_cs, &g.b);
                float *bias = (ai + bi) % 2 == 0 ? random_matrix(1, s.n, s.n) : NULL;
                g.bias = bias;
                float *c0 = random_matrix(s.m, s.n, g.ldc);
                double *want = (double *)malloc((size_t)(s.m * s.n) * sizeof *want);
                double *scale = (double *)malloc((size_t)(s.m * s.n) * sizeof *scale);
                reference_strided(&g, c0, want, scale);
                for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
                    if (!oi__gemm_force_isa(isas[ii]))
                        continue;
                    for (int pi = 0; pi < 2; pi++) {
                        int64_t bad = run_strided(pi ? pool2 : NULL, g, c0, want, scale);
                        cases++;
                        failed += bad != 0;
                        CHECK_MSG(bad == 0 || failed > 5,
                                  "strided gemm %s m=%lld n=%lld k=%lld a strides (%lld, %lld) b strides (%lld, %lld) "
                                  "bias %d: %lld wrong", oi__gemm_isa_name(isas[ii]), (long long)s.m, (long long)s.n,
                                  (long long)s.k, (long long)g.a_rs, (long long)g.a_cs, (long long)g.b_rs,
                                  (long long)g.b_cs, bias != NULL, (long long)bad);
                    }
                }
                free(a), free(b), free(bias), free(c0), free(want), free(scale);
            }
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    CHECK_MSG(failed == 0, "%lld of %lld strided gemm cases wrong", (long long)failed, (long long)cases);
    oi__threadpool_free(pool2);
}

/* A small product with at most four columns (a squeeze-excite conv's
 * matrix-vector shape) takes four rows at a time with its sums in
 * registers: the bits must stay the plain loop's (beta * C, then each
 * product alpha * a * b added in k's order, then the bias), which the
 * synthesizer's emitted plain loop reproduces exactly. */
static void test_gemm_small_narrow_exact(void) {
    static const shape shapes[] = {{22, 1, 88}, {9, 3, 40}, {4, 4, 64}, {6, 2, 5}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        shape s = shapes[si];
        float *a = random_matrix(s.m, s.k, s.k), *b = random_matrix(s.k, s.n, s.n);
        float *bias = random_matrix(1, s.n, s.n), *c = random_matrix(s.m, s.n, s.n);
        float *want = (float *)malloc((size_t)(s.m * s.n) * sizeof *want);
        const float alpha = -0.75f, beta = 0.5f;
        for (int64_t i = 0; i < s.m; i++)
            for (int64_t j = 0; j < s.n; j++) {
                float sum = beta * c[i * s.n + j];
                for (int64_t p = 0; p < s.k; p++) {
                    float aip = alpha * a[i * s.k + p];
                    sum = sum + aip * b[p * s.n + j];
                }
                want[i * s.n + j] = sum + bias[j];
            }
        oi__gemm_f32_args g;
        memset(&g, 0, sizeof g);
        g.m = s.m, g.n = s.n, g.k = s.k, g.alpha = alpha, g.beta = beta;
        g.a = a, g.a_rs = s.k, g.a_cs = 1, g.b = b, g.b_rs = s.n, g.b_cs = 1, g.bias = bias, g.c = c, g.ldc = s.n;
        CHECK(oi__gemm_f32_ex(NULL, &g) == OI_OK);
        int64_t differ = 0;
        for (int64_t i = 0; i < s.m * s.n; i++)
            differ += memcmp(&c[i], &want[i], sizeof(float)) != 0;
        CHECK_MSG(differ == 0, "small narrow gemm m=%lld n=%lld k=%lld: %lld of %lld results differ from the plain loop's",
                  (long long)s.m, (long long)s.n, (long long)s.k, (long long)differ, (long long)(s.m * s.n));
        free(a), free(b), free(bias), free(c), free(want);
    }
}

/* Two tasks that wait for each other: returns once the pool's worker has
 * started (it frees its start-up block then, which would upset counts of
 * live blocks taken later). */
static void meet_task(void *ctx, int task, int thread) {
    (void)task, (void)thread;
    int *arrived = (int *)ctx;
    __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(arrived, __ATOMIC_SEQ_CST) < 2) {
    }
}

/* op(B) from a model tensor is packed once and kept on its storage: a later
 * call with the same layout reuses the copy (seen here by changing the
 * bytes behind its back, which the owner promises never happens), another
 * layout or ISA is not served the copy, the copy goes with the storage, and
 * a storage made later over the same bytes packs them afresh. */
static void test_gemm_packed_b(void) {
    const int64_t m = 40, n = 70, k = 600; /* two k blocks (kc 512), an edge panel */
    oi__threadpool *pool2 = oi__threadpool_new(2);
    int arrived = 0;
    oi__threadpool_run(pool2, 2, meet_task, &arrived);
    float *a = random_matrix(m, k, k), *b = random_matrix(k, n, n), *c0 = random_matrix(m, n, n);
    double *want = (double *)malloc((size_t)(m * n) * sizeof *want), *scale = (double *)malloc((size_t)(m * n) * sizeof *scale);
    double *want_old = (double *)malloc((size_t)(m * n) * sizeof *want_old);
    int64_t shape[2] = {k, n};
    long blocks_before = hooks_live_blocks();
    oi__tensor *t = oi__tensor_wrap(OI_DTYPE_F32, 2, shape, b);
    CHECK(t && t->storage->borrowed && t->storage->gemm_packed == NULL);
    oi__gemm_f32_args g = {m, n, k, 1.0f, 0.0f, a, k, 1, b, n, 1, NULL, NULL, n, t->storage, NULL, NULL};

    reference_strided(&g, c0, want, scale);
    CHECK_EQ_INT(run_strided(pool2, g, c0, want, scale), 0);
    void *packed = t->storage->gemm_packed;
    CHECK(packed != NULL);
    memcpy(want_old, want, (size_t)(m * n) * sizeof *want);
    for (int64_t i = 0; i < k * n; i++) /* behind the cache's back */
        b[i] = rand_uniform();
    CHECK_EQ_INT(run_strided(NULL, g, c0, want_old, scale), 0); /* a hit: the old bytes, packed */
    CHECK(t->storage->gemm_packed == packed);

    oi__gemm_f32_args other = g; /* the first 35 columns: another layout */
    other.n = 35;
    reference_strided(&other, c0, want, scale);
    CHECK_EQ_INT(run_strided(pool2, other, c0, want, scale), 0);
    CHECK(t->storage->gemm_packed == packed); /* kept, not replaced */
    if (oi__gemm_force_isa(oi__gemm_active_isa() == OI__GEMM_ISA_PORTABLE ? OI__GEMM_ISA_AUTO : OI__GEMM_ISA_PORTABLE)) {
        reference_strided(&g, c0, want, scale); /* another panel layout: packed per call */
        CHECK_EQ_INT(run_strided(pool2, g, c0, want, scale), 0);
        oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    }

    oi__tensor_free(t); /* frees the copy */
    CHECK_EQ_INT(hooks_live_blocks(), blocks_before);
    t = oi__tensor_wrap(OI_DTYPE_F32, 2, shape, b);
    g.b_owner = t->storage;
    reference_strided(&g, c0, want, scale);
    CHECK_EQ_INT(run_strided(pool2, g, c0, want, scale), 0); /* the new bytes */
    CHECK(t->storage->gemm_packed != NULL);
    oi__tensor_free(t);

    /* No memory for the copy: not an error, the tasks pack B themselves. */
    t = oi__tensor_wrap(OI_DTYPE_F32, 2, shape, b);
    g.b_owner = t->storage;
    hooks_arm(1);
    CHECK_EQ_INT(run_strided(NULL, g, c0, want, scale), 0);
    CHECK(hooks_hit() && t->storage->gemm_packed == NULL);
    hooks_disarm();
    oi__tensor_free(t);
    CHECK_EQ_INT(hooks_live_blocks(), blocks_before);

    /* 5 columns: mostly padding in nr-wide panels, so no copy is kept. */
    t = oi__tensor_wrap(OI_DTYPE_F32, 2, shape, b);
    oi__gemm_f32_args narrow = g;
    narrow.n = 5, narrow.b_owner = t->storage;
    reference_strided(&narrow, c0, want, scale);
    CHECK_EQ_INT(run_strided(pool2, narrow, c0, want, scale), 0);
    CHECK(t->storage->gemm_packed == NULL);
    oi__tensor_free(t);

    free(a), free(b), free(c0), free(want), free(scale), free(want_old);
    oi__threadpool_free(pool2);
}

/* With B packed once and a C of few rows (an encoder's activations times a
 * weight), the tiles split n only; a row-major A is read in place (AVX-512)
 * and otherwise packed once per call, its row panels dealt out over the
 * pool: row counts that leave an edge panel or split unevenly, three k
 * blocks (the last partial), with and without a bias, on every code path. */
static void test_gemm_shared_a(void) {
    static const shape shapes[] = {{128, 384, 600}, {13, 256, 70}, {61, 96, 257}};
    oi__threadpool *pool2 = oi__threadpool_new(2);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        shape s = shapes[si];
        float *b = random_matrix(s.k, s.n, s.n);
        int64_t b_shape[2] = {s.k, s.n};
        oi__tensor *t = oi__tensor_wrap(OI_DTYPE_F32, 2, b_shape, b);
        float *bias = random_matrix(1, s.n, s.n);
        for (int layout = 0; layout < 2; layout++) {
            oi__gemm_f32_args g;
            memset(&g, 0, sizeof g);
            g.m = s.m, g.n = s.n, g.k = s.k, g.alpha = 1.0f, g.ldc = s.n;
            operand_strides(layout, s.m, s.k, &g.a_rs, &g.a_cs);
            float *a = strided_matrix(s.m, s.k, g.a_rs, g.a_cs, &g.a);
            g.b = b, g.b_rs = s.n, g.b_cs = 1, g.b_owner = t->storage;
            g.bias = layout ? bias : NULL;
            float *c0 = random_matrix(s.m, s.n, s.n);
            double *want = (double *)malloc((size_t)(s.m * s.n) * sizeof *want);
            double *scale = (double *)malloc((size_t)(s.m * s.n) * sizeof *scale);
            reference_strided(&g, c0, want, scale);
            oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
            for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
                if (!oi__gemm_force_isa(isas[ii]))
                    continue;
                CHECK_MSG(run_strided(pool2, g, c0, want, scale) == 0,
                          "shared-A gemm %s m=%lld n=%lld k=%lld layout %d", oi__gemm_isa_name(isas[ii]),
                          (long long)s.m, (long long)s.n, (long long)s.k, layout);
            }
            oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
            CHECK(t->storage->gemm_packed != NULL);
            free(a), free(c0), free(want), free(scale);
        }
        oi__tensor_free(t);
        free(b), free(bias);
    }
    oi__threadpool_free(pool2);
}

/* OPENINFER_ISA caps the kernels' ISA (meson runs this test once with
 * OPENINFER_ISA=avx2): the active ISA is the one asked for where the CPU
 * has it, and the automatic one otherwise. */
static void test_env_isa(void) {
    const char *env = getenv("OPENINFER_ISA");
    if (!env)
        return;
    oi__gemm_isa want = strcmp(env, "portable") == 0 ? OI__GEMM_ISA_PORTABLE
                        : strcmp(env, "avx2") == 0     ? OI__GEMM_ISA_AVX2
                        : strcmp(env, "avx512") == 0   ? OI__GEMM_ISA_AVX512
                                                       : OI__GEMM_ISA_AUTO;
    oi__gemm_isa active = oi__gemm_active_isa();
    if (want != OI__GEMM_ISA_AUTO && oi__gemm_force_isa(want)) {
        oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
        CHECK_MSG(active == want, "OPENINFER_ISA=%s: active ISA %d, want %d", env, (int)active, (int)want);
    }
    printf("test_gemm: OPENINFER_ISA=%s, active ISA %d\n", env, (int)active);
}

/* ---- oi__threadpool_run_parts: every part once, each thread its own part when it is in time ---- */
typedef struct parts_ctx {
    int runs[8];
    int thread_of[8];
} parts_ctx;

static void parts_task(void *ctx, int part, int thread) {
    parts_ctx *c = (parts_ctx *)ctx;
    __atomic_add_fetch(&c->runs[part], 1, __ATOMIC_RELAXED);
    c->thread_of[part] = thread;
}

static void test_threadpool_parts(void) {
    for (int n_threads = 1; n_threads <= 4; n_threads++) {
        oi__threadpool *pool = oi__threadpool_new(n_threads);
        int own = 0;
        for (int round = 0; round < 200; round++) {
            parts_ctx c;
            memset(&c, 0, sizeof c);
            oi__threadpool_run_parts(pool, n_threads, parts_task, &c);
            for (int p = 0; p < n_threads; p++) {
                CHECK_EQ_INT(c.runs[p], 1);
                own += c.thread_of[p] == p;
            }
        }
        CHECK(own > 0); /* part 0 at least, which the caller (thread 0) takes first unless a worker is quicker */
        parts_ctx more; /* more parts than threads: still each once */
        memset(&more, 0, sizeof more);
        oi__threadpool_run_parts(pool, 8, parts_task, &more);
        for (int p = 0; p < 8; p++)
            CHECK_EQ_INT(more.runs[p], 1);
        oi__threadpool_free(pool);
    }
    parts_ctx none;
    memset(&none, 0, sizeof none);
    oi__threadpool_run_parts(NULL, 3, parts_task, &none);
    for (int p = 0; p < 3; p++)
        CHECK_EQ_INT(none.runs[p], 1);
}

/* Skinny products split once per core (dot products over big rows, row
 * updates over columns): bit for bit the single-threaded result, with
 * sizes that leave partial row groups and column blocks, beta and a bias. */
static void test_gemm_skinny_split(void) {
    oi__threadpool *pool2 = oi__threadpool_new(2), *pool3 = oi__threadpool_new(3);
    const oi__gemm_isa isas[2] = {OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    /* m x n x k, trans_b: a conv's [out, k] weight times 1-4 patches (dots), a [k, n] LSTM weight (updates) */
    const int64_t shapes[6][4] = {{4, 258, 256, 1}, {4, 130, 387, 1}, {1, 67, 384, 1},
                                  {1, 512, 128, 0}, {2, 200, 130, 0}, {3, 1000, 40, 0}};
    for (int ii = 0; ii < 2; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        for (int sh = 0; sh < 6; sh++) {
            int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
            bool tb = shapes[sh][3] != 0;
            float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
            float *bias = malloc(sizeof(float) * (size_t)n), *c[3];
            for (int64_t i = 0; i < m * k; i++)
                a[i] = (float)sin(0.3 * (double)i);
            for (int64_t i = 0; i < k * n; i++)
                b[i] = (float)cos(0.17 * (double)i) * 0.5f;
            for (int64_t j = 0; j < n; j++)
                bias[j] = (float)j * 0.01f;
            oi__threadpool *pools[3] = {NULL, pool2, pool3};
            for (int p = 0; p < 3; p++) {
                c[p] = malloc(sizeof(float) * (size_t)(m * n));
                for (int64_t i = 0; i < m * n; i++)
                    c[p][i] = (float)i * 0.001f;
                oi__gemm_f32_args g;
                memset(&g, 0, sizeof g);
                g.m = m, g.n = n, g.k = k, g.alpha = 1.0f, g.beta = 0.5f;
                g.a = a, g.a_rs = k, g.a_cs = 1;
                g.b = b, g.b_rs = tb ? 1 : n, g.b_cs = tb ? k : 1;
                g.c = c[p], g.ldc = n, g.bias = bias;
                CHECK_OK(oi__gemm_f32_ex(pools[p], &g));
            }
            for (int p = 1; p < 3; p++)
                CHECK_MSG(memcmp(c[0], c[p], sizeof(float) * (size_t)(m * n)) == 0,
                          "skinny %lld x %lld x %lld (%s) on %d threads differs from one thread (%s)", (long long)m,
                          (long long)n, (long long)k, tb ? "dots" : "row updates", p + 1, oi__gemm_isa_name(isas[ii]));
            free(a), free(b), free(bias), free(c[0]), free(c[1]), free(c[2]);
        }
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__threadpool_free(pool2);
    oi__threadpool_free(pool3);
}

int main(void) {
    hooks_install(); /* counts live blocks for test_gemm_packed_b */
    test_env_isa();
    test_usable_cpus();
    test_threadpool();
    test_gemm_errors();
    test_gemm_beta_zero_ignores_c();
    test_gemm_f32();
    test_gemm_f64();
    test_gemm_strided();
    test_gemm_small_narrow_exact();
    test_gemm_packed_b();
    test_gemm_shared_a();
    test_threadpool_parts();
    test_gemm_skinny_split();
    return check_result("test_gemm");
}
