/* encoder_peer.c - the 2-layer transformer encoder of bench/bench_encoder.c
 * (d 384, 12 heads, seq 128, post-norm, exact GELU; the same DSL graph) on a
 * GPU through our Vulkan backend, against PyTorch eager on the same GPU
 * (bench/gpu/encoder_torch.py, run as a subprocess), in one run: ours, torch
 * and ours / torch in latency per step.
 *
 * A step on both sides: the input from the host, the block, the output back
 * to the host. Ours must match ONNX Runtime's output stored in the model
 * (1e-3) first. Ops without a Vulkan shader run on the CPU inside the
 * backend (vulkan: stats.cpu_fallbacks), as the executor sends them.
 *
 * Usage: encoder_peer [--dir DIR] [--runs N] [--python PY] [--no-torch] [--trace FILE]
 *   DIR holds encoder.oinf from bench/encoder/gen_encoder.py (needs onnx and
 *   onnxruntime, so write it on the dev machine and copy it to the GPU machine); the
 *   device is OI_DEVICE_AUTO, so OPENINFER_BACKEND=vulkan (or cpu) picks it.
 *   --trace FILE: after the timed runs, one more step with the trace and the
 *   per-op timer on, its trace JSON written to FILE (GPU time per node in
 *   "gpu_micros"; bench/gpu/trace_summary.py adds them up per op).
 * Not built by meson (a GPU-machine benchmark), like vk_peer:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/encoder_peer.c \
 *      build-gpu/libopeninfer.a -o build-gpu/encoder_peer -lm -lpthread -ldl */
#define main bench_encoder_main /* its graph and helpers, not its main */
#include "../bench_encoder.c"
#undef main
#include "encoder_model.h"

/* One round of encoder_torch.py: its best and median ms. */
static bool time_torch(const char *python, int runs, double *best, double *med) {
    char cmd[4096], line[512];
    snprintf(cmd, sizeof cmd, "\"%s\" \"%s/bench/gpu/encoder_torch.py\" --runs %d", python, OI_SOURCE_ROOT, runs);
    FILE *p = popen(cmd, "r");
    bool found = false;
    if (!p)
        return false;
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        if (sscanf(line, "torch_ms best=%lf median=%lf", best, med) == 2)
            found = true;
    }
    return pclose(p) == 0 && found;
}

/* One more step with the trace on, its JSON written to path. */
static bool write_trace(oi_executor *e, const float *x, size_t n, const char *path) {
    oi_tensor_view y;
    oi_executor_set_trace(e, true);
    char *json = step(e, x, n, &y) == OI_OK ? oi_executor_trace_json(e) : NULL;
    oi_executor_set_trace(e, false);
    if (!json) {
        fprintf(stderr, "encoder_peer: trace: %s\n", oi_last_error());
        return false;
    }
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(json, f) >= 0;
    if (f && fclose(f) != 0)
        ok = false;
    oi_free(json);
    if (!ok)
        fprintf(stderr, "encoder_peer: cannot write %s\n", path);
    return ok;
}

int main(int argc, char **argv) {
    const char *dir = "bench/encoder_data", *python = "python3", *trace = NULL;
    int runs = 50;
    bool torch = true;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (next && strcmp(argv[i], "--dir") == 0)
            dir = argv[++i];
        else if (next && strcmp(argv[i], "--python") == 0)
            python = argv[++i];
        else if (next && strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[++i]);
        else if (next && strcmp(argv[i], "--trace") == 0)
            trace = argv[++i];
        else if (strcmp(argv[i], "--no-torch") == 0)
            torch = false;
        else
            runs = 0;
    }
    if (runs <= 0) {
        fprintf(stderr, "usage: encoder_peer [--dir DIR] [--runs N] [--python PY] [--no-torch]\n");
        return 2;
    }
    uint64_t b = 0, s = 0, d = 0;
    oi_model *m = open_encoder_in("encoder_peer", dir, &b, &s, &d);
    if (!m)
        return 77;
    size_t n = (size_t)(b * s * d);
    const float *x = model_f32(m, "input.x", n);
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_AUTO; /* OPENINFER_BACKEND decides */
    desc.timer = trace != NULL;
    oi_simulator *sim = oi_simulator_new_desc(m, &desc);
    oi_executor *e = sim && x ? oi_simulator_make_executor(sim, encoder()) : NULL;
    double *ours = (double *)malloc((size_t)runs * sizeof *ours);
    int rc = 1;
    if (!e || !ours) {
        fprintf(stderr, "encoder_peer: %s\n", oi_last_error());
        goto done;
    }
    const char *backend = getenv("OPENINFER_BACKEND");
    printf("encoder_peer: OPENINFER_BACKEND=%s; 2 layers, d %llu, seq %llu\n", backend ? backend : "(auto)",
           (unsigned long long)d, (unsigned long long)s);
    if (!check_output(m, e, x, n))
        goto done;
    oi_tensor_view y;
    for (int w = 0; w < 5; w++) /* warm-up */
        step(e, x, n, &y);
    for (int i = 0; i < runs; i++) {
        double t0 = now_ms();
        if (step(e, x, n, &y) != OI_OK) { /* the fetch waits for the device */
            fprintf(stderr, "encoder_peer: %s\n", oi_last_error());
            goto done;
        }
        ours[i] = now_ms() - t0;
    }
    double our_med = bench_sort_median(ours, runs), our_best = ours[0];
    printf("ours: best %.3f ms, median %.3f ms (%d runs)\n", our_best, our_med, runs);
    if (trace && !write_trace(e, x, n, trace))
        goto done;
    double t_best = 0, t_med = 0;
    if (torch && time_torch(python, runs, &t_best, &t_med))
        printf("torch: best %.3f ms, median %.3f ms\nours / torch: best %.2f, median %.2f\n", t_best, t_med,
               our_best / t_best, our_med / t_med);
    else if (torch)
        printf("encoder_peer: PyTorch timing failed (%s with torch and CUDA?); ours only\n", python);
    rc = 0;
done:
    free(ours);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    return rc;
}
