/* bench_gemm_layer.c - a transformer layer's six products as a model runs
 * them: B is a weight, packed once and kept (b_owner), A read in place.
 *
 * Usage: bench_gemm_layer [--isa avx2|avx512] [--rows M] [--d D] [--ffn F] [--evict MIB]
 * Default: MiniLM at 8 x 64 tokens (M 512, d 384, ffn 1536): q, k, v, o
 * (M x d x d), up (M x ffn x d), down (M x d x ffn). For 1 and 2 threads it
 * prints each product's GFLOP/s, the best and the median of 30 runs, with
 * its operands hot in the caches and cold (MIB, default 64 MiB, read
 * between runs, as a model's step meets its weights; a last-level cache
 * larger than that keeps them: pass more), and the layer's total.
 * bench_fma_peak gives the ceiling; no peer runs here (OpenBLAS packs B on
 * every call: bench_matmul). */
#define _POSIX_C_SOURCE 200809L
#include "../openinfer_impl/internal.h"
#include "bench_stats.h"

#include <time.h>

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct product {
    const char *name;
    int64_t m, n, k;
    int count; /* how many of it a layer has */
} product;

/* Reads `bytes` of scratch so the next product finds its operands in memory. */
static float evict_caches(const float *scratch, size_t floats) {
    float sum = 0.0f;
    for (size_t i = 0; i < floats; i += 16)
        sum += scratch[i];
    return sum;
}

/* The best and the median of RUNS timed calls, in seconds. */
#define RUNS 30
static void time_product(oi__threadpool *pool, const product *p, bool cold, const float *scratch, size_t scratch_floats,
                         float *sink, double *best, double *median) {
    float *a = (float *)malloc(sizeof(float) * (size_t)(p->m * p->k));
    float *b = (float *)malloc(sizeof(float) * (size_t)(p->k * p->n));
    float *c = (float *)malloc(sizeof(float) * (size_t)(p->m * p->n));
    for (int64_t i = 0; i < p->m * p->k; i++)
        a[i] = (float)(i % 7) * 0.1f;
    for (int64_t i = 0; i < p->k * p->n; i++)
        b[i] = (float)(i % 5) * 0.1f;
    oi__storage weight;
    memset(&weight, 0, sizeof weight);
    weight.data = b;
    weight.nbytes = sizeof(float) * (size_t)(p->k * p->n);
    oi__gemm_f32_args g;
    memset(&g, 0, sizeof g);
    g.m = p->m, g.n = p->n, g.k = p->k, g.alpha = 1.0f;
    g.a = a, g.a_rs = p->k, g.a_cs = 1;
    g.b = b, g.b_rs = p->n, g.b_cs = 1, g.b_owner = &weight;
    g.c = c, g.ldc = p->n;
    oi__gemm_f32_ex(pool, &g); /* packs the weight once */
    double times[RUNS];
    for (int run = 0; run < RUNS; run++) {
        if (cold)
            *sink += evict_caches(scratch, scratch_floats);
        double start = now_seconds();
        oi__gemm_f32_ex(pool, &g);
        times[run] = now_seconds() - start;
    }
    *median = bench_sort_median(times, RUNS);
    *best = times[0];
    oi__gemm_packed_free(weight.gemm_packed);
    free(a), free(b), free(c);
}

int main(int argc, char **argv) {
    int64_t m = 512, d = 384, ffn = 1536, evict_mib = 64;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
            const char *isa = argv[++i];
            if (!oi__gemm_force_isa(strcmp(isa, "avx2") == 0 ? OI__GEMM_ISA_AVX2 : OI__GEMM_ISA_AVX512)) {
                fprintf(stderr, "bench_gemm_layer: this CPU has no %s path\n", isa);
                return 1;
            }
        } else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            m = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--d") == 0 && i + 1 < argc) {
            d = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--ffn") == 0 && i + 1 < argc) {
            ffn = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--evict") == 0 && i + 1 < argc && atoll(argv[i + 1]) > 0) {
            evict_mib = atoll(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_gemm_layer [--isa avx2|avx512] [--rows M] [--d D] [--ffn F] [--evict MIB]\n");
            return 2;
        }
    }
    product layer[] = {{"q, k, v, o", m, d, d, 4}, {"up", m, ffn, d, 1}, {"down", m, d, ffn, 1}};
    size_t scratch_floats = (size_t)evict_mib << 18; /* MiB of floats */
    float *scratch = (float *)malloc(scratch_floats * sizeof(float)), sink = 0.0f;
    if (!scratch) {
        fprintf(stderr, "bench_gemm_layer: cannot allocate %lld MiB to evict the caches\n", (long long)evict_mib);
        return 1;
    }
    for (size_t i = 0; i < scratch_floats; i++) /* written: untouched pages would all read one zero page */
        scratch[i] = 1.0f;
    printf("a layer's products, B a packed weight, path %s, GFLOP/s of the best and the median of %d runs\n",
           oi__gemm_isa_name(oi__gemm_active_isa()), RUNS);
    printf("%-12s %-16s %7s %15s %15s\n", "product", "m x n x k", "threads", "hot best, med", "cold best, med");
    for (int threads = 1; threads <= 2; threads++) {
        oi__threadpool *pool = threads > 1 ? oi__threadpool_new(threads) : NULL;
        double flops = 0.0, hot[2] = {0.0, 0.0}, cold[2] = {0.0, 0.0}; /* a layer's seconds: best, median */
        for (size_t p = 0; p < sizeof layer / sizeof layer[0]; p++) {
            const product *pr = &layer[p];
            double f = 2.0 * (double)pr->m * (double)pr->n * (double)pr->k, h[2], c[2];
            time_product(pool, pr, false, scratch, scratch_floats, &sink, &h[0], &h[1]);
            time_product(pool, pr, true, scratch, scratch_floats, &sink, &c[0], &c[1]);
            char dims[48];
            snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)pr->m, (long long)pr->n, (long long)pr->k);
            printf("%-12s %-16s %7d %7.1f %7.1f %7.1f %7.1f\n", pr->name, dims, threads, f / h[0] * 1e-9,
                   f / h[1] * 1e-9, f / c[0] * 1e-9, f / c[1] * 1e-9);
            flops += f * pr->count;
            for (int i = 0; i < 2; i++)
                hot[i] += h[i] * pr->count, cold[i] += c[i] * pr->count;
        }
        printf("%-12s %-16s %7d %7.1f %7.1f %7.1f %7.1f   (best %.0f / %.0f us a layer, hot / cold)\n", "layer", "",
               threads, flops / hot[0] * 1e-9, flops / hot[1] * 1e-9, flops / cold[0] * 1e-9, flops / cold[1] * 1e-9,
               hot[0] * 1e6, cold[0] * 1e6);
        oi__threadpool_free(pool);
    }
    free(scratch);
    return sink == 12345.0f; /* keeps the eviction reads */
}
