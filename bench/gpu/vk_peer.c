/* vk_peer.c - our side of the real-GPU comparison with PyTorch
 * (bench/gpu/torch_peer.py runs the same shapes with cuBLAS / CUDA kernels).
 *
 * Times single ops on the Vulkan backend by its GPU timestamps (the time of
 * the dispatches alone, best of `reps` after one warm-up run) and prints one
 * line per figure, "vk_peer: <key> <value> <unit>", which torch_peer.py
 * reads to print the ratios ours / torch:
 *   matmul_f32, matmul_f16   n x n x n, GFLOP/s (f16: storage, f32 math)
 *   add, copy                f32 [n, 4n] (256 MiB at n = 4096), GB/s
 *                            (add counts 3 tensors, copy 2; copy is a cast f32 -> f32)
 *   softmax                  f32 rows of [n, n] (along the last axis), GB/s (2 tensors)
 *   sum_axis                 f32 [n, 4n] summed along the last axis, GB/s (the input)
 *
 * Usage: vk_peer [n] [reps] [warm_ms]   (n = 4096, reps = 10, warm_ms = 2000)
 * Before timing, an n x n f32 matmul runs back to back for warm_ms, so the GPU
 * has left its idle clocks (as PyTorch's warm-up runs do for it). 
 * Not built by meson (it is a device-tool helper): bench/gpu/run_on_device.sh
 * shows the build line, against build-gpu/libopeninfer.a. */
#include "../../openinfer_impl/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* openinfer_impl/plan.h: what OI_DEVICE_AUTO (and OPENINFER_BACKEND) resolve to */
oi_status oi__backend_select(oi_device device, const oi__backend **backend, void **ctx, int *device_index);

static const oi__backend *vk = &oi__vulkan_backend;
static void *ctx;

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static double rng_uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return -1.0 + 2.0 * (double)(rng_state >> 11) / 9007199254740992.0;
}

static oi__tensor *tensor(oi_dtype t, int ndim, int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    oi__tensor *x = oi__tensor_new(t, ndim, shape);
    int64_t n = oi__shape_numel(ndim, shape);
    for (int64_t i = 0; x && i < n; i++)
        oi__store_f64(t, oi__tensor_data(x), i, rng_uniform());
    return x;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static double last_wall_us; /* the best host wall time (run_op + flush) of the last best_micros */

/* GPU microseconds of one op: the best of `reps` runs after a warm-up. */
static double best_micros(oi_op op, const oi__attr *at, size_t n_at, const oi__tensor *const *in, size_t n_in,
                          oi__tensor *out, int reps) {
    double best = -1;
    oi__vulkan_op_time times[16];
    last_wall_us = -1;
    for (int r = 0; r <= reps; r++) {
        uint64_t seq = oi__vulkan_next_seq(ctx);
        double t0 = now_us();
        if (vk->run_op(ctx, op, at, n_at, in, n_in, out) != OI_OK || vk->flush(ctx) != OI_OK) {
            printf("vk_peer: %s failed: %s\n", oi_op_name(op), oi_last_error());
            return -1;
        }
        double wall = now_us() - t0;
        if (r > 0 && (last_wall_us < 0 || wall < last_wall_us))
            last_wall_us = wall;
        size_t n;
        while ((n = oi__vulkan_take_times(ctx, times, 16)) > 0)
            for (size_t i = 0; i < n; i++)
                if (r > 0 && times[i].seq == seq && (best < 0 || times[i].micros < best))
                    best = times[i].micros;
    }
    return best;
}

static void report(const char *key, double value, const char *unit, double us) {
    if (us > 0)
        printf("vk_peer: %s %.1f %s (%.1f us on the GPU; %.1f us host wall time of run + flush)\n", key, value, unit,
               us, last_wall_us);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    int warm_ms = argc > 3 ? atoi(argv[3]) : 2000;
    if (n <= 0 || reps <= 0) {
        fprintf(stderr, "usage: vk_peer [n] [reps]\n");
        return 2;
    }
    oi_backend_info infos[16];
    size_t nb = oi_backends_discover(infos, 16);
    const oi_backend_info *dev = NULL;
    for (size_t i = 0; i < nb && i < 16; i++)
        if (strcmp(infos[i].name, "vulkan") == 0 && infos[i].available && !dev)
            dev = &infos[i];
    const oi__backend *picked = NULL;
    void *picked_ctx = NULL;
    int picked_index = -1;
    if (oi__backend_select(OI_DEVICE_AUTO, &picked, &picked_ctx, &picked_index) == OI_OK) {
        const char *name = "?";
        for (size_t i = 0, k = 0; i < nb && i < 16; i++)
            if (strcmp(infos[i].name, picked->name) == 0 && (int)k++ == picked_index)
                name = infos[i].device_name;
        printf("vk_peer: OI_DEVICE_AUTO picks %s device %d: %s\n", picked->name, picked_index, name);
        picked->destroy(picked_ctx);
    }
    if (!dev || !(ctx = vk->create(0))) {
        printf("vk_peer: no Vulkan device: %s\n", oi_last_error());
        return 77;
    }
    printf("vk_peer: device %s (%s), features: %s\n", dev->device_name, dev->device_type, dev->features);

    if (warm_ms > 0) {
        oi__tensor *a = tensor(OI_DTYPE_F32, 2, n, n), *b = tensor(OI_DTYPE_F32, 2, n, n);
        oi__tensor *c = tensor(OI_DTYPE_F32, 2, n, n);
        const oi__tensor *in[2] = {a, b};
        double t0 = now_us();
        int runs = 0;
        while (now_us() - t0 < warm_ms * 1e3 && vk->run_op(ctx, OI_OP_matmul, NULL, 0, in, 2, c) == OI_OK &&
               vk->flush(ctx) == OI_OK)
            runs++;
        oi__vulkan_op_time times[16];
        while (oi__vulkan_take_times(ctx, times, 16) > 0) {
        }
        printf("vk_peer: warm-up: %d matmuls in %.0f ms\n", runs, (now_us() - t0) / 1e3);
        oi__tensor_free(a);
        oi__tensor_free(b);
        oi__tensor_free(c);
    }
    const oi_dtype mm[2] = {OI_DTYPE_F32, OI_DTYPE_F16};
    const char *mm_key[2] = {"matmul_f32", "matmul_f16"};
    for (int t = 0; t < 2; t++) {
        oi__tensor *a = tensor(mm[t], 2, n, n), *b = tensor(mm[t], 2, n, n), *c = tensor(mm[t], 2, n, n);
        const oi__tensor *in[2] = {a, b};
        double us = best_micros(OI_OP_matmul, NULL, 0, in, 2, c, reps);
        report(mm_key[t], 2.0 * n * (double)n * n / (us * 1e3), "GFLOP/s", us);
        oi__tensor_free(a);
        oi__tensor_free(b);
        oi__tensor_free(c);
    }

    int64_t rows = n, cols = 4 * (int64_t)n;
    oi__tensor *x = tensor(OI_DTYPE_F32, 2, rows, cols), *y = tensor(OI_DTYPE_F32, 2, rows, cols);
    oi__tensor *z = tensor(OI_DTYPE_F32, 2, rows, cols), *r = tensor(OI_DTYPE_F32, 1, rows, 1);
    double bytes = (double)rows * (double)cols * 4.0;
    const oi__tensor *xy[2] = {x, y}, *x1[1] = {x};
    double us = best_micros(OI_OP_add, NULL, 0, xy, 2, z, reps);
    report("add", 3 * bytes / (us * 1e3), "GB/s", us);

    oi__attr to;
    memset(&to, 0, sizeof to);
    to.name = (char *)"to";
    to.kind = OI__ATTR_DTYPE;
    to.dtype = OI_DTYPE_F32;
    us = best_micros(OI_OP_cast, &to, 1, x1, 1, z, reps);
    report("copy", 2 * bytes / (us * 1e3), "GB/s", us);

    oi__attr axes;
    memset(&axes, 0, sizeof axes);
    axes.name = (char *)"axes";
    axes.kind = OI__ATTR_INT_LIST;
    stbds_arrput(axes.ints, -1);
    us = best_micros(OI_OP_sum_axis, &axes, 1, x1, 1, r, reps);
    report("sum_axis", bytes / (us * 1e3), "GB/s", us);
    stbds_arrfree(axes.ints);
    oi__tensor_free(x);
    oi__tensor_free(y);
    oi__tensor_free(z);
    oi__tensor_free(r);

    oi__tensor *s = tensor(OI_DTYPE_F32, 2, n, n), *so = tensor(OI_DTYPE_F32, 2, n, n);
    const oi__tensor *s1[1] = {s};
    us = best_micros(OI_OP_softmax, NULL, 0, s1, 1, so, reps);
    report("softmax", 2.0 * n * (double)n * 4.0 / (us * 1e3), "GB/s", us);
    oi__tensor_free(s);
    oi__tensor_free(so);

    vk->destroy(ctx);
    return 0;
}
