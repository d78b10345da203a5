/* vk_peer.c - our side of the real-GPU comparison with PyTorch
 * (bench/gpu/torch_peer.py runs the same shapes with cuBLAS / CUDA kernels).
 *
 * Times single ops on the Vulkan backend by its GPU timestamps (the time of
 * the dispatches alone, best of `reps` after one warm-up run) and prints one
 * line per figure, "vk_peer: <key> <value> <unit>", which torch_peer.py
 * reads to print the ratios ours / torch:
 *   matmul_f32, matmul_f16   n x n x n, GFLOP/s (f16: f16 in and out, f32 accumulation)
 *   add, copy                f32 [n, 4n] (256 MiB at n = 4096), GB/s
 *                            (add counts 3 tensors, copy 2; copy is a cast f32 -> f32)
 *   softmax                  f32 rows of [n, n] (along the last axis), GB/s (2 tensors)
 *   sum_axis                 f32 [n, 4n] summed along the last axis, GB/s (the input)
 *
 * Each figure is the best of `reps` dispatches recorded back to back into one
 * submission ("vk_peer: ..."), then again with one op per submission and the
 * host waiting in between ("vk_peer(one op per submission): ...", which
 * torch_peer.py does not read); best_micros says why both.
 *
 * Usage: vk_peer [n] [reps] [warm_ms] [matmul]   (n = 4096, reps = 10, warm_ms = 2000)
 * "matmul" times the two matmuls alone, back to back only, and checks 64
 * entries of the f16 product against a double-precision dot product (a
 * quick A/B of matmul shader builds: bench/gpu/coopmat_sweep.sh); with
 * VK_PEER_B_T set in the environment, B is a transposed view ([N, K]).
 * All inputs are made and uploaded first; then an n x n f32 matmul runs back
 * to back for warm_ms, so the GPU has left its idle clocks (as PyTorch's
 * warm-up runs do for it), and the timed ops follow at once (make_data says
 * why in that order).
 * Not built by meson (it is a GPU-machine benchmark): bench/gpu/run_on_device.sh
 * shows the build line, against build-gpu/libopeninfer.a. */
#include "../../openinfer_impl/internal.h"

#include <math.h>
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
static double last_wall_us; /* host wall time per op (run_op + flush) of the last best_micros */

/* GPU microseconds of one op, the best of `reps` dispatches after one
 * warm-up run. batched: the reps are recorded back to back into one
 * submission (as the ops of a model step are) and the best dispatch is
 * taken from the GPU timestamps around each; otherwise each rep is its own
 * submission and the host waits for it. Measured that way the GPU idles
 * between the ops and NVIDIA's Vulkan driver lowers the SM clock (345 MHz
 * was seen on an H200 between 300 us ops) where a CUDA process keeps it up
 * for as long as it holds a context; both figures are printed. */
static double best_micros(oi_op op, const oi__attr *at, size_t n_at, const oi__tensor *const *in, size_t n_in,
                          oi__tensor *out, int reps, bool batched) {
    oi__vulkan_op_time times[64];
    if (vk->run_op(ctx, op, at, n_at, in, n_in, out) != OI_OK || vk->flush(ctx) != OI_OK) {
        printf("vk_peer: %s failed: %s\n", oi_op_name(op), oi_last_error());
        return -1;
    }
    while (oi__vulkan_take_times(ctx, times, 64) > 0) {
    }
    uint64_t first = oi__vulkan_next_seq(ctx);
    double t0 = now_us();
    for (int r = 0; r < reps; r++)
        if (vk->run_op(ctx, op, at, n_at, in, n_in, out) != OI_OK || (!batched && vk->flush(ctx) != OI_OK)) {
            printf("vk_peer: %s failed: %s\n", oi_op_name(op), oi_last_error());
            return -1;
        }
    if (vk->flush(ctx) != OI_OK) {
        printf("vk_peer: %s failed: %s\n", oi_op_name(op), oi_last_error());
        return -1;
    }
    last_wall_us = (now_us() - t0) / reps;
    double best = -1;
    size_t n;
    while ((n = oi__vulkan_take_times(ctx, times, 64)) > 0)
        for (size_t i = 0; i < n; i++)
            if (times[i].seq >= first && times[i].seq < first + (uint64_t)reps && (best < 0 || times[i].micros < best))
                best = times[i].micros;
    return best;
}

static bool batched = true; /* the mode of the current pass (see best_micros) */
static bool matmul_only;    /* the fourth argument is "matmul" */

static void report(const char *key, double value, const char *unit, double us) {
    if (us > 0)
        printf("vk_peer%s: %s %.1f %s (%.1f us on the GPU; %.1f us host wall time per op)\n",
               batched ? "" : "(one op per submission)", key, value, unit, us, last_wall_us);
}

/* Every input and output, made once: filling them on the host takes
 * seconds, long enough for the idle GPU to drop its SM clock (1980 -> 345
 * MHz was seen on an H200 within 2 s), so it all happens before the
 * warm-up, never between the warm-up and the timed ops. */
typedef struct peer_data {
    oi__tensor *mm[2][3]; /* f32, f16: a, b, c (n x n) */
    oi__tensor *x, *y, *z, *r; /* [n, 4n] x3, [n] */
    oi__tensor *s, *so;        /* [n, n] */
    oi__attr to, axes;
} peer_data;

static void make_data(peer_data *d, int n) {
    const oi_dtype mm[2] = {OI_DTYPE_F32, OI_DTYPE_F16};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 3; i++)
            d->mm[t][i] = tensor(mm[t], 2, n, n);
    if (getenv("VK_PEER_B_T")) /* B as a transposed view: stored [N, K] */
        for (int t = 0; t < 2; t++) {
            d->mm[t][1]->strides[0] = 1;
            d->mm[t][1]->strides[1] = n;
        }
    d->x = tensor(OI_DTYPE_F32, 2, n, 4 * (int64_t)n);
    d->y = tensor(OI_DTYPE_F32, 2, n, 4 * (int64_t)n);
    d->z = tensor(OI_DTYPE_F32, 2, n, 4 * (int64_t)n);
    d->r = tensor(OI_DTYPE_F32, 1, n, 1);
    d->s = tensor(OI_DTYPE_F32, 2, n, n);
    d->so = tensor(OI_DTYPE_F32, 2, n, n);
    memset(&d->to, 0, sizeof d->to);
    d->to.name = (char *)"to";
    d->to.kind = OI__ATTR_DTYPE;
    d->to.dtype = OI_DTYPE_F32;
    memset(&d->axes, 0, sizeof d->axes);
    d->axes.name = (char *)"axes";
    d->axes.kind = OI__ATTR_INT_LIST;
    stbds_arrput(d->axes.ints, -1);
}

static void free_data(peer_data *d) {
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 3; i++)
            oi__tensor_free(d->mm[t][i]);
    oi__tensor_free(d->x);
    oi__tensor_free(d->y);
    oi__tensor_free(d->z);
    oi__tensor_free(d->r);
    oi__tensor_free(d->s);
    oi__tensor_free(d->so);
    stbds_arrfree(d->axes.ints);
}

/* Every figure, in the current mode (reps = 0: each op once, which uploads
 * the inputs and builds the pipelines; nothing printed). */
static void measure(const peer_data *d, int n, int reps) {
    bool quiet = reps == 0;
    reps = quiet ? 1 : reps;
    const char *mm_key[2] = {"matmul_f32", "matmul_f16"};
    double us;
    for (int t = 0; t < 2; t++) {
        const oi__tensor *in[2] = {d->mm[t][0], d->mm[t][1]};
        us = best_micros(OI_OP_matmul, NULL, 0, in, 2, d->mm[t][2], reps, batched);
        if (!quiet)
            report(mm_key[t], 2.0 * n * (double)n * n / (us * 1e3), "GFLOP/s", us);
    }
    if (matmul_only)
        return;
    double bytes = (double)n * 4.0 * (double)n * 4.0;
    const oi__tensor *xy[2] = {d->x, d->y}, *x1[1] = {d->x}, *s1[1] = {d->s};
    us = best_micros(OI_OP_add, NULL, 0, xy, 2, d->z, reps, batched);
    if (!quiet)
        report("add", 3 * bytes / (us * 1e3), "GB/s", us);
    us = best_micros(OI_OP_cast, &d->to, 1, x1, 1, d->z, reps, batched);
    if (!quiet)
        report("copy", 2 * bytes / (us * 1e3), "GB/s", us);
    us = best_micros(OI_OP_sum_axis, &d->axes, 1, x1, 1, d->r, reps, batched);
    if (!quiet)
        report("sum_axis", bytes / (us * 1e3), "GB/s", us);
    us = best_micros(OI_OP_softmax, NULL, 0, s1, 1, d->so, reps, batched);
    if (!quiet)
        report("softmax", 2.0 * n * (double)n * 4.0 / (us * 1e3), "GB/s", us);
}

/* n x n f32 matmuls back to back for ms milliseconds: the GPU leaves its
 * idle clocks (as PyTorch's warm-up runs do for it). */
static void warm_up(const peer_data *d, int ms) {
    const oi__tensor *in[2] = {d->mm[0][0], d->mm[0][1]};
    double t0 = now_us();
    int runs = 0;
    while (now_us() - t0 < ms * 1e3 && vk->run_op(ctx, OI_OP_matmul, NULL, 0, in, 2, d->mm[0][2]) == OI_OK &&
           vk->flush(ctx) == OI_OK)
        runs++;
    oi__vulkan_op_time times[16];
    while (oi__vulkan_take_times(ctx, times, 16) > 0) {
    }
    printf("vk_peer: warm-up: %d matmuls in %.0f ms\n", runs, (now_us() - t0) / 1e3);
}

/* The f16 product's largest error over 64 sampled entries, against a dot
 * product in double of the same f16 inputs, relative to the sum of the
 * magnitudes of the terms (f32 accumulation and the f16 output rounding
 * keep it under ~1e-3; a wrong tile or offset gives ~1). */
static double check_f16_product(const peer_data *d, int n) {
    const oi__tensor *a = d->mm[1][0], *b = d->mm[1][1], *c = d->mm[1][2];
    if (vk->to_host(ctx, c->storage) != OI_OK)
        return -1;
    double worst = 0;
    for (int s = 0; s < 64; s++) {
        int64_t i = (int64_t)(s * 2654435761u % (unsigned)n), j = (int64_t)(s * 40503u % (unsigned)n);
        double dot = 0, mag = 1e-30;
        for (int64_t k = 0; k < n; k++) {
            double t = oi__load_f64(a->dtype, oi__tensor_data(a), i * n + k) *
                       oi__load_f64(b->dtype, oi__tensor_data(b), k * b->strides[0] + j * b->strides[1]);
            dot += t;
            mag += fabs(t);
        }
        double err = fabs(oi__load_f64(c->dtype, oi__tensor_data(c), i * n + j) - dot) / mag;
        worst = err > worst ? err : worst;
    }
    return worst;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    int warm_ms = argc > 3 ? atoi(argv[3]) : 2000;
    matmul_only = argc > 4 && strcmp(argv[4], "matmul") == 0;
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

    peer_data d;
    make_data(&d, n);
    measure(&d, n, 0); /* uploads, pipelines */
    warm_up(&d, warm_ms);
    measure(&d, n, reps); /* back to back: the figures torch_peer.py compares */
    if (matmul_only) {
        printf("vk_peer: matmul_f16 worst relative error of 64 sampled entries: %.2e\n", check_f16_product(&d, n));
        free_data(&d);
        vk->destroy(ctx);
        return 0;
    }
    batched = false;
    warm_up(&d, warm_ms / 4);
    measure(&d, n, reps);
    free_data(&d);
    vk->destroy(ctx);
    return 0;
}
