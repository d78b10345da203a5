/* bench_skinny.c - the skinny products of one Silero VAD step (examples/models/silero_vad)
 * through gemm.c, in the step's order, each as the model's op calls it: a conv1d with 1-4
 * output positions as W [out, k] times its patches [positions, k] transposed (the bias
 * already in C, beta 1, as kernels/conv.c passes it; the STFT conv has no bias), the
 * LSTM's two products as x [1, 128] times W [128, 512], the output's dot product.
 *
 *   build/bench/bench_skinny [--threads N] [--steps S] [--hot]
 *
 * Prints the median and best time of each product and of the whole set over S steps
 * (microseconds), with the ISA the kernels picked (OPENINFER_ISA=avx2 forces the AVX2
 * path). Threads: 1 by default (the caller alone); N > 1 runs them on a pool of N, as the
 * simulator does (products of 2^14 multiply-adds or more split once per thread). The
 * weights are distinct buffers, 1.23 MB in all as the model's, so each step reads them from
 * wherever the previous step left them (one core's L2 holds 1 MB); --hot repeats the first
 * product only (its weights stay in the caches: the kernel's compute speed). */
#include "../openinfer_impl/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

typedef struct {
    const char *name;
    int64_t m, n, k;
    bool trans_b; /* a conv: patches [n, k] transposed */
    float beta;
} shape;

static const shape shapes[] = {
    {"stft conv (258 x 4 x 256)", 258, 4, 256, true, 0.0f},
    {"conv1 (128 x 4 x 387)", 128, 4, 387, true, 1.0f},
    {"conv2 (64 x 2 x 384)", 64, 2, 384, true, 1.0f},
    {"conv3 (64 x 1 x 192)", 64, 1, 192, true, 1.0f},
    {"conv4 (128 x 1 x 192)", 128, 1, 192, true, 1.0f},
    {"lstm x W_ih (1 x 512 x 128)", 1, 512, 128, false, 0.0f},
    {"lstm h W_hh (1 x 512 x 128)", 1, 512, 128, false, 0.0f},
    {"output (1 x 1 x 128)", 1, 1, 128, false, 0.0f},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *filled(int64_t count, int64_t seed) {
    float *p = (float *)malloc(sizeof(float) * (size_t)count);
    for (int64_t i = 0; p && i < count; i++)
        p[i] = (float)((i * 7919 + seed * 104729) % 2001) / 1000.0f - 1.0f;
    return p;
}

int main(int argc, char **argv) {
    int threads = 1, steps = 2000;
    bool hot = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hot"))
            hot = true;
        else {
            fprintf(stderr, "usage: bench_skinny [--threads N] [--steps S] [--hot]\n");
            return 2;
        }
    }
    if (threads < 1 || steps < 1) {
        fprintf(stderr, "bench_skinny: --threads and --steps need 1 or more\n");
        return 2;
    }
    oi__threadpool *pool = threads > 1 ? oi__threadpool_new(threads) : NULL;
    float *a[N_SHAPES], *b[N_SHAPES], *c[N_SHAPES];
    double *times = (double *)malloc(sizeof(double) * (size_t)steps * (N_SHAPES + 1));
    if (!times || (threads > 1 && !pool))
        return 1;
    for (int s = 0; s < N_SHAPES; s++) {
        a[s] = filled(shapes[s].m * shapes[s].k, s);
        b[s] = filled(shapes[s].k * shapes[s].n, s + 100);
        c[s] = filled(shapes[s].m * shapes[s].n, s + 200);
        if (!a[s] || !b[s] || !c[s])
            return 1;
    }
    int n_run = hot ? 1 : N_SHAPES;
    for (int step = 0; step < steps; step++) {
        double start = now_us();
        for (int s = 0; s < n_run; s++) {
            const shape *sh = &shapes[s];
            double t = now_us();
            oi_status st = oi__gemm_f32(pool, false, sh->trans_b, sh->m, sh->n, sh->k, 1.0f, a[s], sh->k, b[s],
                                        sh->trans_b ? sh->k : sh->n, sh->beta, c[s], sh->n);
            if (st != OI_OK) {
                fprintf(stderr, "bench_skinny: %s: %s\n", sh->name, oi_last_error());
                return 1;
            }
            times[(size_t)s * (size_t)steps + (size_t)step] = now_us() - t;
        }
        times[(size_t)N_SHAPES * (size_t)steps + (size_t)step] = now_us() - start;
    }
    printf("Silero VAD's skinny products, %s, %d thread%s, %d steps%s (us: median, best)\n",
           oi__gemm_isa_name(oi__gemm_active_isa()), threads, threads > 1 ? "s" : "", steps, hot ? ", --hot" : "");
    for (int s = 0; s <= N_SHAPES; s++) {
        if (hot && s > 0 && s < N_SHAPES)
            continue;
        double *row = times + (size_t)s * (size_t)steps;
        qsort(row, (size_t)steps, sizeof *row, compare);
        printf("  %-30s %8.2f %8.2f\n", s < N_SHAPES ? shapes[s].name : "all", row[steps / 2], row[0]);
    }
    for (int s = 0; s < N_SHAPES; s++)
        free(a[s]), free(b[s]), free(c[s]);
    free(times);
    oi__threadpool_free(pool);
    return 0;
}
