/* synth_matmul_bench.c - times the synthesized Vulkan code of
 * tests/synth/matmul_graph.c (a = relu(Wa), b = relu(Wb), R times y = a b,
 * s = the row sums of y) step by step: the recorded command buffer replayed
 * and waited for (matmul_f16_step), then s back to the host.
 *
 * Prints:
 *   matmul_steps_ms best=<ms> median=<ms> runs=<n>   wall time per step
 *   matmul_gpu_ms best=<ms> median=<ms>              timestamps around the step
 *   matmul_dispatches=<n> barriers=<n>
 *   matmul_s[0..3] = ...
 *   emitted_kernel kK us=<us> dispatches=<n>         built with -DOI_VK_PROFILE=N: the
 *                                                    last step's GPU time per kernel
 * bench/gpu/synth_encoder.sh runs it for R = 1 and R = 9: a matmul alone
 * takes (gpu(9) - gpu(1)) / 8.
 *
 * Built against the emitted folder (bench/gpu/synth_stage.sh does it):
 *   cc -O2 -std=c11 -IDIR bench/gpu/synth_matmul_bench.c DIR/libmatmul_f16.a -ldl -lm -o BIN
 * Usage: BIN MODEL.oinf [--runs N] */
#define _POSIX_C_SOURCE 200809L
#include "matmul_f16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Built with -DOI_VK_PROFILE=N: the last step's GPU time per kernel (its
 * dispatches' times added up), one line each. */
static void per_kernel(const matmul_f16_ctx *ctx) {
    double ms[256], total[256] = {0};
    int kernel[256], count[256] = {0};
    int n = matmul_f16_dispatch_ms(ctx, ms, kernel, 256);
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
    int runs = 50;
    if (argc < 2) {
        fprintf(stderr, "usage: synth_matmul_bench MODEL.oinf [--runs N]\n");
        return 2;
    }
    if (argc >= 4 && strcmp(argv[2], "--runs") == 0)
        runs = atoi(argv[3]) > 0 ? atoi(argv[3]) : runs;
    matmul_f16_ctx *ctx = matmul_f16_open(argv[1]);
    double *wall = (double *)malloc((size_t)runs * sizeof *wall), *gpu = (double *)malloc((size_t)runs * sizeof *gpu);
    if (!ctx || !wall || !gpu) {
        fprintf(stderr, "synth_matmul_bench: %s\n", ctx ? "out of memory" : matmul_f16_last_error());
        return 1;
    }
    size_t count = 0;
    const float *s = NULL;
    for (int i = 0; i < runs + 5; i++) { /* 5 of warm-up: pipelines, caches, clocks */
        double t0 = now_ms();
        if (matmul_f16_step(ctx) != 0 || !(s = matmul_f16_get_s(ctx, &count)) || count < 4) {
            fprintf(stderr, "synth_matmul_bench: %s\n", matmul_f16_last_error());
            return 1;
        }
        if (i >= 5) {
            wall[i - 5] = now_ms() - t0;
            gpu[i - 5] = matmul_f16_gpu_ms(ctx);
        }
    }
    qsort(wall, (size_t)runs, sizeof *wall, by_value);
    qsort(gpu, (size_t)runs, sizeof *gpu, by_value);
    printf("matmul_steps_ms best=%.4f median=%.4f runs=%d\n", wall[0], wall[runs / 2], runs);
    printf("matmul_gpu_ms best=%.4f median=%.4f\n", gpu[0], gpu[runs / 2]);
    printf("matmul_dispatches=%d barriers=%d\n", matmul_f16_dispatches(ctx), matmul_f16_barriers(ctx));
    printf("matmul_s[0..3] = %.6f %.6f %.6f %.6f\n", s[0], s[1], s[2], s[3]);
    per_kernel(ctx);
    matmul_f16_close(ctx);
    free(wall);
    free(gpu);
    return 0;
}
