/* synth_bench.c - times the synthesized Vulkan code of bench_encoder's block
 * (`openinfer synth ... --target vulkan|ARCH.json`), step by step, as
 * encoder_peer.c times the simulator's Vulkan backend: a step is the input
 * from the host (NAME_set_x), the recorded command buffer replayed and
 * waited for (NAME_step), the output back to the host (a copy of
 * NAME_get_h's values).
 *
 * Prints one line per figure:
 *   emitted_ms best=<ms> median=<ms> runs=<n>     wall time per step
 *   emitted_gpu_ms median=<ms>                    timestamps around the step
 *   emitted_host_cpu_ms per_step=<ms>             CPU time of this process
 *   emitted_dispatches=<n> barriers=<n>           of the recorded step
 *   emitted_kernel kK us=<us> dispatches=<n>      built with -DOI_VK_PROFILE=N (the
 *                                                 emitted code's per-dispatch timestamps):
 *                                                 the last step's GPU time per kernel
 *
 * Built against the emitted folder (bench/gpu/synth_stage.sh does it):
 *   cc -O2 -std=c11 -IDIR bench/gpu/synth_bench.c DIR/libencoder.a -ldl -lm -o synth_bench
 * Usage: synth_bench MODEL.oinf X.npy [--runs N] */
#define _POSIX_C_SOURCE 200809L
#include "encoder.h"
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One step as encoder_peer.c counts it: input up, step, output down. */
static int step(encoder_ctx *ctx, const float *x, size_t n, float *out) {
    size_t count = 0;
    if (encoder_set_x(ctx, x, n) != 0 || encoder_step(ctx) != 0)
        return 1;
    const float *h = encoder_get_h(ctx, &count);
    memcpy(out, h, count * sizeof *h);
    return 0;
}

/* Built with -DOI_VK_PROFILE=N: the last step's GPU time per kernel (its
 * dispatches' times added up), one line each. */
static void per_kernel(const encoder_ctx *ctx) {
    double ms[256], total[256] = {0};
    int kernel[256], count[256] = {0};
    int n = encoder_dispatch_ms(ctx, ms, kernel, 256);
    for (int i = 0; i < n; i++)
        if (kernel[i] >= 0 && kernel[i] < 256) {
            total[kernel[i]] += ms[i];
            count[kernel[i]]++;
        }
    for (int k = 0; k < 256; k++)
        if (count[k])
            printf("emitted_kernel k%d us=%.1f dispatches=%d\n", k, total[k] * 1e3, count[k]);
}

int main(int argc, char **argv) {
    int runs = 200;
    if (argc < 3) {
        fprintf(stderr, "usage: synth_bench MODEL.oinf X.npy [--runs N]\n");
        return 2;
    }
    if (argc >= 5 && strcmp(argv[3], "--runs") == 0)
        runs = atoi(argv[4]) > 0 ? atoi(argv[4]) : runs;
    oi_npy_array x;
    if (oi_npy_read(argv[2], &x, NULL) != 0 || x.dtype != OI_NPY_F32) {
        fprintf(stderr, "synth_bench: %s: not an f32 .npy\n", argv[2]);
        return 1;
    }
    size_t n = (size_t)x.count;
    encoder_ctx *ctx = encoder_open(argv[1]);
    float *out = (float *)malloc(n * sizeof *out);
    double *wall = (double *)malloc((size_t)runs * sizeof *wall), *gpu = (double *)malloc((size_t)runs * sizeof *gpu);
    if (!ctx || !out || !wall || !gpu) {
        fprintf(stderr, "synth_bench: %s\n", ctx ? "out of memory" : encoder_last_error());
        return 1;
    }
    for (int i = 0; i < 10; i++) /* warm-up: pipelines, caches, clocks */
        if (step(ctx, (const float *)x.data, n, out) != 0) {
            fprintf(stderr, "synth_bench: %s\n", encoder_last_error());
            return 1;
        }
    double cpu0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < runs; i++) {
        double t0 = now_ms(CLOCK_MONOTONIC);
        if (step(ctx, (const float *)x.data, n, out) != 0) {
            fprintf(stderr, "synth_bench: %s\n", encoder_last_error());
            return 1;
        }
        wall[i] = now_ms(CLOCK_MONOTONIC) - t0;
        gpu[i] = encoder_gpu_ms(ctx);
    }
    double cpu = (now_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / runs;
    qsort(wall, (size_t)runs, sizeof *wall, by_value);
    qsort(gpu, (size_t)runs, sizeof *gpu, by_value);
    printf("emitted_ms best=%.4f median=%.4f runs=%d\n", wall[0], wall[runs / 2], runs);
    printf("emitted_gpu_ms median=%.4f\n", gpu[runs / 2]);
    printf("emitted_host_cpu_ms per_step=%.4f\n", cpu);
    printf("emitted_dispatches=%d barriers=%d\n", encoder_dispatches(ctx), encoder_barriers(ctx));
    printf("emitted_h[0..3] = %.6f %.6f %.6f %.6f\n", out[0], out[1], out[2], out[3]);
    per_kernel(ctx);
    encoder_close(ctx);
    oi_npy_array_free(&x);
    free(out);
    free(wall);
    free(gpu);
    return 0;
}
