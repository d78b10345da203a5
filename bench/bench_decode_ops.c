/* bench_decode_ops.c - the matmul_q4 products of one SmolLM2-135M decode step
 * (30 layers of q, k, v, o, gate, up, down in q4_1 with activations "q8",
 * then the 49152 x 576 q8_0 logits), run straight through the CPU kernels
 * (oi__op_run_cpu) on weights too big for the caches, as a decode streams them.
 *
 *   build/bench/bench_decode_ops [--threads N] [--steps S] [--hot]
 *
 * Prints the best time per step over S steps and the best per product shape
 * (microseconds), with the ISA the kernels picked (OPENINFER_ISA=avx2 forces
 * the AVX2 path). The weights are arbitrary bytes with small f16 scales: only
 * the time counts here (tests/test_nn_ops.c checks the values). --hot: every
 * layer reads layer 0's weights, which then stay in the caches (the kernel's
 * compute speed without the memory stream). */
#include "../openinfer_impl/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *name;
    int64_t n, k, block_bytes;
} shape;

static const shape shapes[8] = {{"q", 576, 576, 20},    {"k", 192, 576, 20},  {"v", 192, 576, 20},
                                {"o", 576, 576, 20},    {"gate", 1536, 576, 20}, {"up", 1536, 576, 20},
                                {"down", 576, 1536, 20}, {"logits", 49152, 576, 34}};

static oi__tensor *weights(const shape *s, uint32_t seed) {
    int64_t row = s->k / 32 * s->block_bytes;
    oi__tensor *w = oi__tensor_new(OI_DTYPE_U8, 2, (int64_t[]){s->n, row});
    if (!w)
        return NULL;
    uint8_t *p = (uint8_t *)oi__tensor_data(w);
    for (int64_t i = 0; i < s->n * row; i++)
        p[i] = (uint8_t)((seed + (uint32_t)i) * 2654435761u >> 13);
    for (int64_t b = 0; b < s->n * (s->k / 32); b++) { /* d, m = small normal halves */
        p[b * s->block_bytes] = 0, p[b * s->block_bytes + 1] = 0x1C;
        if (s->block_bytes == 20)
            p[b * s->block_bytes + 2] = 0, p[b * s->block_bytes + 3] = 0xA0;
    }
    return w;
}

int main(int argc, char **argv) {
    int threads = 0, steps = 20, layers = 30, hot = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hot")) /* one layer's weights, again and again: cached */
            hot = 1;
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_decode_ops [--threads N] [--steps S] [--hot]\n");
            return 2;
        }
    }
    oi__threadpool *pool = oi__threadpool_new(threads);
    oi__threadpool_lend(pool);
    oi__tensor *w[30][8], *x[2], *y[8];
    x[0] = oi__tensor_new(OI_DTYPE_F32, 2, (int64_t[]){1, 576});
    x[1] = oi__tensor_new(OI_DTYPE_F32, 2, (int64_t[]){1, 1536});
    for (int i = 0; i < 1536; i++)
        ((float *)oi__tensor_data(x[1]))[i] = (float)((i * 37) % 101 - 50) * 0.01f;
    memcpy(oi__tensor_data(x[0]), oi__tensor_data(x[1]), 576 * sizeof(float));
    for (int s = 0; s < 8; s++) {
        y[s] = oi__tensor_new(OI_DTYPE_F32, 2, (int64_t[]){1, shapes[s].n});
        for (int l = 0; l < layers; l++)
            w[l][s] = (s == 7 || hot) && l ? w[0][s] : weights(&shapes[s], (uint32_t)(l * 8 + s));
    }
    oi__attr q41[2] = {{.name = (char *)"format", .kind = OI__ATTR_STRING, .s = (char *)"q4_1"},
                       {.name = (char *)"activations", .kind = OI__ATTR_STRING, .s = (char *)"q8"}};
    oi__attr q80[2] = {{.name = (char *)"format", .kind = OI__ATTR_STRING, .s = (char *)"q8_0"},
                       {.name = (char *)"activations", .kind = OI__ATTR_STRING, .s = (char *)"q8"}};
    double best_step = 1e9, best[8];
    for (int s = 0; s < 8; s++)
        best[s] = 1e9;
    for (int t = 0; t < steps; t++) {
        double t0 = now();
        for (int l = 0; l <= layers; l++)
            for (int s = l == layers ? 7 : 0; s < (l == layers ? 8 : 7); s++) {
                const oi__tensor *in[2] = {x[s == 6], w[l == layers ? 0 : l][s]};
                double a = now();
                oi_status st = oi__op_run_cpu(OI_OP_matmul_q4, s == 7 ? q80 : q41, 2, in, 2, y[s]);
                double e = now() - a;
                if (st != OI_OK) {
                    fprintf(stderr, "matmul_q4 %s: status %d\n", shapes[s].name, (int)st);
                    return 1;
                }
                best[s] = e < best[s] ? e : best[s];
            }
        double e = now() - t0;
        best_step = e < best_step ? e : best_step;
    }
    printf("isa %s, %d threads: step %.0f us;", oi__gemm_isa_name(oi__gemm_active_isa()), oi__threadpool_size(pool),
           best_step * 1e6);
    for (int s = 0; s < 8; s++)
        printf(" %s %.1f", shapes[s].name, best[s] * 1e6);
    printf("\n");
    return 0;
}
