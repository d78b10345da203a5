/* bench_attention.c - the attention op of the CPU kernels alone, at encoder
 * shapes: MiniLM's (batch 8 x 64 tokens, 12 heads of 32, a bool padding
 * mask [B, 1, 1, S]), bench_encoder's (1 x 128, 12 heads of 32, no mask)
 * and a causal one (1 x 256, 8 heads of 64), and at SmolLM2's decode (one
 * token, 9 query heads over 3 kv heads of 64, 512 cached positions). q, k
 * and v are heads of [B*S, H*Dh] rows ([B, H, S, Dh] views with row stride
 * H*Dh, as the models' reshape + transpose give them); the output is a
 * dense [B, H, S, Dh]. Run straight through oi__op_run_cpu.
 *
 *   build/bench/bench_attention [--threads N] [--runs R] [--dtype f32|f16|bf16]
 *
 * --dtype stores q, k, v and the output in that type (the values rounded
 * from the f32 ones), as a graph with 16-bit K/V tables hands them over.
 *
 * Prints the best time per call of each shape (microseconds) and its
 * GFLOP/s (4 S T Dh flops a head: q K^T and p V), with the ISA the kernels
 * picked (OPENINFER_ISA=avx2 forces the AVX2 path), and the calling
 * thread's best CPU time per call (with --threads 1, the op's own time,
 * steadier than wall time on a busy machine). Only the time counts
 * here: tests/test_nn_ops.c checks the values. */
#include "../openinfer_impl/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *name;
    int64_t batch, heads, kv_heads, seq, kv_seq, dim;
    int mask; /* 0: none; 1: sentence b keeps 64 - 5b keys; 2: 9 + 2b keys (bench_models' short sentences) */
    bool causal;
} shape;

enum { N_SHAPES = 5 };
static const shape shapes[N_SHAPES] = {{"minilm 8x64 masked", 8, 12, 12, 64, 64, 32, 1, false},
                                       {"minilm 9-23 tokens", 8, 12, 12, 64, 64, 32, 2, false},
                                       {"encoder 1x128", 1, 12, 12, 128, 128, 32, 0, false},
                                       {"causal 1x256 d64", 1, 8, 8, 256, 256, 64, 0, true},
                                       {"decode 9/3 heads x512", 1, 9, 3, 1, 512, 64, 0, false}};

/* Small values, rounded to dtype (f32, f16 or bf16). */
static void fill(oi_dtype dtype, void *data, int64_t n, uint32_t seed) {
    for (int64_t i = 0; i < n; i++) {
        float x = (float)((int32_t)(((uint32_t)i + seed) * 2654435761u >> 20) % 201 - 100) * 0.01f;
        if (dtype == OI_DTYPE_F32)
            ((float *)data)[i] = x;
        else
            ((uint16_t *)data)[i] = dtype == OI_DTYPE_F16 ? oi_f32_to_f16(x) : oi_f32_to_bf16(x);
    }
}

/* [B, H, S, Dh] heads of a [B*S, H*Dh] tensor of small values. */
static oi__tensor *heads_of_rows(oi_dtype dtype, int64_t batch, int64_t heads, int64_t seq, int64_t dim, uint32_t seed) {
    int64_t d = heads * dim, n = batch * seq * d;
    oi__tensor *t = oi__tensor_new(dtype, 1, &n);
    if (!t)
        return NULL;
    fill(dtype, oi__tensor_data(t), n, seed);
    t->ndim = 4;
    int64_t shape4[4] = {batch, heads, seq, dim}, strides[4] = {seq * d, dim, d, 1};
    memcpy(t->shape, shape4, sizeof shape4);
    memcpy(t->strides, strides, sizeof strides);
    return t;
}

int main(int argc, char **argv) {
    int threads = 0, runs = 50;
    oi_dtype dtype = OI_DTYPE_F32;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc &&
                 ((dtype = oi_dtype_from_name(argv[i + 1])) == OI_DTYPE_F32 || dtype == OI_DTYPE_F16 ||
                  dtype == OI_DTYPE_BF16))
            i++;
        else {
            fprintf(stderr, "usage: bench_attention [--threads N] [--runs R] [--dtype f32|f16|bf16]\n");
            return 2;
        }
    }
    oi__threadpool *pool = oi__threadpool_new(threads);
    oi__threadpool_lend(pool);
    printf("isa %s, %d threads, %s:\n", oi__gemm_isa_name(oi__gemm_active_isa()), oi__threadpool_size(pool),
           oi_dtype_name(dtype));
    for (int si = 0; si < N_SHAPES; si++) {
        const shape *s = &shapes[si];
        oi__tensor *q = heads_of_rows(dtype, s->batch, s->heads, s->seq, s->dim, 1);
        oi__tensor *k = heads_of_rows(dtype, s->batch, s->kv_heads, s->kv_seq, s->dim, 2);
        oi__tensor *v = heads_of_rows(dtype, s->batch, s->kv_heads, s->kv_seq, s->dim, 3);
        oi__tensor *out = oi__tensor_new(dtype, 4, (int64_t[]){s->batch, s->heads, s->seq, s->dim});
        oi__tensor *mask = s->mask ? oi__tensor_new(OI_DTYPE_BOOL, 4, (int64_t[]){s->batch, 1, 1, s->seq}) : NULL;
        if (!q || !k || !v || !out || (s->mask && !mask)) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        for (int64_t b = 0; mask && b < s->batch; b++) /* sentence b's real tokens, then padding */
            for (int64_t t = 0; t < s->seq; t++)
                ((uint8_t *)oi__tensor_data(mask))[b * s->seq + t] = t < (s->mask == 1 ? s->seq - 5 * b : 9 + 2 * b);
        oi__attr causal = {.name = (char *)"causal", .kind = OI__ATTR_BOOL, .i = 1};
        const oi__tensor *in[4] = {q, k, v, mask};
        double best = 1e9, best_cpu = 1e9;
        for (int r = 0; r < runs; r++) {
            double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            oi_status st = oi__op_run_cpu(OI_OP_attention, s->causal ? &causal : NULL, s->causal ? 1 : 0, in,
                                          mask ? 4 : 3, out);
            double e = clock_s(CLOCK_MONOTONIC) - t0, c = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
            if (st != OI_OK) {
                fprintf(stderr, "attention %s: status %d\n", s->name, (int)st);
                return 1;
            }
            best = e < best ? e : best;
            best_cpu = c < best_cpu ? c : best_cpu;
        }
        double flops = 4.0 * (double)(s->batch * s->heads * s->seq * s->kv_seq * s->dim);
        printf("  %-20s %8.1f us  %6.1f GFLOP/s  (calling thread's CPU time %.1f us)\n", s->name, best * 1e6,
               flops / best * 1e-9, best_cpu * 1e6);
        oi__tensor_free(q), oi__tensor_free(k), oi__tensor_free(v), oi__tensor_free(out), oi__tensor_free(mask);
    }
    return 0;
}
