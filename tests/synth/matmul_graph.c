/* matmul_graph.c - one large matmul between two elementwise producers and a
 * row sum: the graph the Vulkan target runs on cooperative matrices where
 * the device JSON allows (features.cooperative_matrix, default_precision
 * fp16), for check_vulkan_devices.py and bench/gpu's f16 matmul figure.
 *
 *   a = relu(Wa), b = relu(Wb)   f16 temporaries under fp16 (the weights are
 *                                positive: relu keeps them)
 *   y = a b                      [N, N] x [N, N], R times over (the same
 *                                product: bench/gpu times R = 1 and R = 9 and
 *                                takes the difference for the matmul alone)
 *   s = sum of each row of y     [N], the only value the step gives back
 *
 * N is 256 and R 1 unless OI_MATMUL_N and OI_MATMUL_REPS say otherwise
 * (bench/gpu: N = 4096). */
#include "../../openinfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

OI_GRAPH(matmul_f16,
  OI_VOLATILE(
    OI_VAR(Wa, f32[N, N])
    OI_VAR(Wb, f32[N, N])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[N, N])
    OI_ASSIGN(b, f32[N, N])
    OI_ASSIGN(y, f32[N, N])
    OI_ASSIGN(s, f32[N])
    OI_OP(relu, Wa) OI_TO(a)
    OI_OP(relu, Wb) OI_TO(b)
    OI_LOOP(reps, r, 0..R,
      OI_OP(matmul, a, b) OI_TO(y)
    )
    OI_OP(sum_axis, y, axes=[1]) OI_TO(s)
    OI_RETURN()
  )
)

/* Wa, Wb uniform in [0, 2 / sqrt(N)): each entry of y is about 1. */
static oi_model *matmul_model(uint8_t **bytes) {
    const char *env = getenv("OI_MATMUL_N");
    uint64_t n = env && atoi(env) > 0 ? (uint64_t)atoi(env) : 256;
    const char *reps = getenv("OI_MATMUL_REPS");
    uint64_t r = reps && atoi(reps) > 0 ? (uint64_t)atoi(reps) : 1;
    float *v = (float *)malloc((size_t)(n * n) * sizeof *v);
    oi_writer *w = oi_writer_new();
    int bad = !v || !w || oi_writer_add_sizevar(w, "N", n) != OI_OK || oi_writer_add_sizevar(w, "R", r) != OI_OK;
    uint32_t state = 4096;
    const char *names[2] = {"Wa", "Wb"};
    uint64_t dims[2] = {n, n};
    float scale = 2.0f / sqrtf((float)n);
    for (int t = 0; t < 2 && !bad; t++) {
        for (uint64_t i = 0; i < n * n; i++) {
            state = state * 1664525u + 1013904223u;
            v[i] = scale * (float)(state >> 8) / 16777216.0f;
        }
        bad |= oi_writer_add_tensor(w, names[t], OI_DTYPE_F32, 2, dims, v, NULL) != OI_OK;
    }
    size_t size = 0;
    bad |= bad || oi_writer_to_memory(w, 2, bytes, &size) != OI_OK;
    oi_writer_free(w);
    free(v);
    return bad ? NULL : oi_model_open_memory(*bytes, size);
}

/* export_example.c renames this main: the graph has no program of its own. */
int main(void) { return 0; }
