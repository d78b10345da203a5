/* bench_fma_peak.c - the machine's f32 FMA peak: what no f32 gemm can beat.
 *
 *   build/bench/bench_fma_peak [--seconds S]
 *
 * Each thread runs 12 independent chains of vector FMAs (enough to hide the FMA latency
 * on both FMA ports of current x86 cores) for S seconds (default 1); it prints GFLOP/s
 * (an FMA counts 2 flops per lane) for AVX2 (8 lanes) and, where the CPU has it, AVX-512
 * (16 lanes), on one thread and on one thread per core. A gemm's time can be compared
 * with its FLOPs at this rate: bench/README.md uses it to tell how far a model's step is
 * from the floor the ISA sets. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86 1
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#ifdef HAVE_X86
/* 12 accumulators, each its own dependency chain: a0 = a0 * b + c, ... The empty asm keeps
 * them in registers and the loop from being folded away. */
#define CHAINS(T, SET1, FMA, LANES)                                                              \
    T a0 = SET1(0), a1 = SET1(1), a2 = SET1(2), a3 = SET1(3), a4 = SET1(4), a5 = SET1(5);        \
    T a6 = SET1(6), a7 = SET1(7), a8 = SET1(8), a9 = SET1(9), a10 = SET1(10), a11 = SET1(11);    \
    const T b = SET1(0.9999999f), c = SET1(1e-7f);                                               \
    long rounds = 0;                                                                             \
    double end = now() + seconds, start = now();                                                 \
    while (now() < end) {                                                                        \
        for (int k = 0; k < 100000; k++) {                                                       \
            a0 = FMA(a0, b, c); a1 = FMA(a1, b, c); a2 = FMA(a2, b, c); a3 = FMA(a3, b, c);       \
            a4 = FMA(a4, b, c); a5 = FMA(a5, b, c); a6 = FMA(a6, b, c); a7 = FMA(a7, b, c);       \
            a8 = FMA(a8, b, c); a9 = FMA(a9, b, c); a10 = FMA(a10, b, c); a11 = FMA(a11, b, c);   \
            __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5));    \
            __asm__ volatile("" : "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));  \
        }                                                                                        \
        rounds++;                                                                                \
    }                                                                                            \
    return (double)rounds * 100000.0 * 12 * LANES * 2 / (now() - start) / 1e9;

__attribute__((target("avx2,fma"))) static double avx2_gflops(double seconds) {
    CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 8)
}

__attribute__((target("avx512f"))) static double avx512_gflops(double seconds) {
    CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16)
}
#endif

typedef struct {
    double (*kernel)(double);
    double seconds, gflops;
} Job;

static void *run_job(void *arg) {
    Job *job = (Job *)arg;
    job->gflops = job->kernel(job->seconds);
    return NULL;
}

/* GFLOP/s of kernel summed over n threads running at once. */
static double all_threads(double (*kernel)(double), int n, double seconds) {
    Job jobs[256];
    pthread_t threads[256];
    double sum = 0;
    for (int i = 0; i < n; i++) {
        jobs[i].kernel = kernel;
        jobs[i].seconds = seconds;
        jobs[i].gflops = 0;
        if (pthread_create(&threads[i], NULL, run_job, &jobs[i]) != 0) {
            fprintf(stderr, "bench_fma_peak: cannot start thread %d\n", i);
            n = i;
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        pthread_join(threads[i], NULL);
        sum += jobs[i].gflops;
    }
    return sum;
}

int main(int argc, char **argv) {
    double seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
            return 2;
        }
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores < 1 ? 1 : cores > 256 ? 256 : (int)cores;
#ifdef HAVE_X86
    struct { const char *name, *feature; double (*kernel)(double); } isas[] = {
        {"AVX2 (8 lanes)", "fma", avx2_gflops}, {"AVX-512 (16 lanes)", "avx512f", avx512_gflops}};
    printf("f32 FMA peak, 12 chains a thread, %.1f s a run; %d threads = one per core\n", seconds, n);
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        int has = !strcmp(isas[i].feature, "fma") ? __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                                                  : __builtin_cpu_supports("avx512f");
        if (!has) {
            printf("%-20s not on this CPU\n", isas[i].name);
            continue;
        }
        double one = all_threads(isas[i].kernel, 1, seconds), all = all_threads(isas[i].kernel, n, seconds);
        printf("%-20s 1 thread %8.1f GFLOP/s   %d threads %8.1f GFLOP/s\n", isas[i].name, one, n, all);
    }
    return 0;
#else
    (void)seconds;
    (void)n;
    printf("bench_fma_peak: x86-64 only\n");
    return 0;
#endif
}
