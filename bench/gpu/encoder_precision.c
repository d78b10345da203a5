/* encoder_precision.c - the 2-layer transformer encoder of bench/bench_encoder.c
 * (d 384, 12 heads, seq 128, post-norm, exact GELU; the same DSL graph) at
 * each simulator precision (desc.precision: f32, f16, bf16), on one backend,
 * in one run: latency per step of each, the ratio to f32, and how far each
 * output is from f32's and from ONNX Runtime's (stored in the model).
 *
 * A step: the input from the host, the block, the output h back to the host
 * (as encoder_peer.c). Rounds alternate the precisions, so machine noise
 * hits them alike; best and median over all rounds.
 *
 * Usage: encoder_precision [--dir DIR] [--runs N] [--rounds R] [--threads T] [--precisions f32,f16,bf16]
 *   DIR holds encoder.oinf from bench/encoder/gen_encoder.py (default
 *   bench/encoder_data). The device is OI_DEVICE_AUTO: OPENINFER_BACKEND=vulkan
 *   (or cpu) picks it; T is the CPU kernels' threads (0: all cores).
 * Not built by meson (a GPU-machine benchmark), like encoder_peer; build:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -DOPENINFER_VULKAN bench/gpu/encoder_precision.c \
 *      build-gpu/libopeninfer.a -o build-gpu/encoder_precision -lm -lpthread -ldl
 * bench/gpu/precision_on_device.sh stages and runs it on a GPU machine. */
#define main bench_encoder_main /* its graph and helpers, not its main */
#include "../bench_encoder.c"
#undef main
#include "encoder_model.h"

#define MAX_PRECISIONS 3

typedef struct run_set {
    oi_dtype precision;
    oi_simulator *sim;
    oi_executor *exec;
    double *ms;  /* every timed step, all rounds */
    double *cpu; /* the process's CPU time of each (all threads; on a loaded
                  * machine less noisy than the wall clock, for the CPU backend) */
    int count;
    float *out; /* the output of the first step */
} run_set;

static int compare_ms(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_precisions(const char *list, oi_dtype *out) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok && n < MAX_PRECISIONS; tok = strtok(NULL, ",")) {
        oi_dtype t = oi_dtype_from_name(tok);
        if (t != OI_DTYPE_F32 && t != OI_DTYPE_F16 && t != OI_DTYPE_BF16)
            return 0;
        out[n++] = t;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *dir = "bench/encoder_data", *list = "f32,f16,bf16";
    int runs = 50, rounds = 3, threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (next && strcmp(argv[i], "--dir") == 0)
            dir = argv[++i];
        else if (next && strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[++i]);
        else if (next && strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[++i]);
        else if (next && strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[++i]);
        else if (next && strcmp(argv[i], "--precisions") == 0)
            list = argv[++i];
        else
            runs = 0;
    }
    oi_dtype precisions[MAX_PRECISIONS];
    int np = parse_precisions(list, precisions);
    if (runs <= 0 || rounds <= 0 || threads < 0 || np == 0) {
        fprintf(stderr, "usage: encoder_precision [--dir DIR] [--runs N] [--rounds R] [--threads T] "
                        "[--precisions f32,f16,bf16]\n");
        return 2;
    }
    uint64_t b = 0, s = 0, d = 0;
    oi_model *m = open_encoder_in("encoder_precision", dir, &b, &s, &d);
    if (!m)
        return 77;
    size_t n = (size_t)(b * s * d);
    const float *x = model_f32(m, "input.x", n), *ref = model_f32(m, "ref.numpy", n);
    run_set sets[MAX_PRECISIONS];
    memset(sets, 0, sizeof sets);
    int rc = 1;
    const char *backend = getenv("OPENINFER_BACKEND");
    for (int p = 0; p < np; p++) {
        run_set *r = &sets[p];
        oi_simulator_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.device = OI_DEVICE_AUTO; /* OPENINFER_BACKEND decides */
        desc.n_threads = threads;
        desc.precision = precisions[p];
        r->precision = precisions[p];
        r->sim = oi_simulator_new_desc(m, &desc);
        r->exec = r->sim && x ? oi_simulator_make_executor(r->sim, encoder()) : NULL;
        r->ms = (double *)malloc((size_t)(runs * rounds) * sizeof *r->ms);
        r->cpu = (double *)malloc((size_t)(runs * rounds) * sizeof *r->cpu);
        r->out = (float *)malloc(n * sizeof *r->out);
        oi_tensor_view y;
        if (!r->exec || !r->ms || !r->cpu || !r->out || step(r->exec, x, n, &y) != OI_OK || y.len != n) {
            fprintf(stderr, "encoder_precision: %s: %s\n", oi_dtype_name(precisions[p]), oi_last_error());
            goto done;
        }
        memcpy(r->out, y.data, n * sizeof *r->out);
        for (size_t w = 0; w < oi_executor_warning_count(r->exec); w++)
            printf("encoder_precision: %s: warning: %s\n", oi_dtype_name(r->precision), oi_executor_warning(r->exec, w));
    }
    printf("encoder_precision: OPENINFER_BACKEND=%s; 2 layers, d %llu, seq %llu; %d rounds of %d steps\n",
           backend ? backend : "(auto)", (unsigned long long)d, (unsigned long long)s, rounds, runs);
    for (int round = 0; round < rounds; round++) {
        for (int p = 0; p < np; p++) {
            run_set *r = &sets[p];
            oi_tensor_view y;
            for (int w = 0; w < 3; w++) /* warm-up */
                step(r->exec, x, n, &y);
            for (int i = 0; i < runs; i++) {
                double t0 = now_ms(), c0 = cpu_ms();
                if (step(r->exec, x, n, &y) != OI_OK) { /* the fetch waits for the device */
                    fprintf(stderr, "encoder_precision: %s\n", oi_last_error());
                    goto done;
                }
                r->cpu[r->count] = cpu_ms() - c0;
                r->ms[r->count++] = now_ms() - t0;
            }
        }
    }
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        scale = fabs((double)sets[0].out[i]) > scale ? fabs((double)sets[0].out[i]) : scale;
    printf("encoder_precision: max|y_%s| %.3g\n", oi_dtype_name(sets[0].precision), scale);
    double base_med = 0.0, base_best = 0.0, base_cpu = 0.0;
    for (int p = 0; p < np; p++) {
        run_set *r = &sets[p];
        qsort(r->ms, (size_t)r->count, sizeof *r->ms, compare_ms);
        qsort(r->cpu, (size_t)r->count, sizeof *r->cpu, compare_ms);
        double best = r->ms[0], med = r->ms[r->count / 2], cpu_med = r->cpu[r->count / 2];
        if (p == 0) {
            base_best = best;
            base_med = med;
            base_cpu = cpu_med;
        }
        printf("precision %-4s cpu time: median %8.3f ms  median/%s %.2f\n", oi_dtype_name(r->precision), cpu_med,
               oi_dtype_name(sets[0].precision), cpu_med / base_cpu);
        printf("precision %-4s best %8.3f ms  median %8.3f ms  best/%s %.2f  median/%s %.2f  max|y - y_%s| %.2e  "
               "max|y - f64| %.2e\n",
               oi_dtype_name(r->precision), best, med, oi_dtype_name(sets[0].precision), best / base_best,
               oi_dtype_name(sets[0].precision), med / base_med,
               oi_dtype_name(sets[0].precision), max_abs_diff(r->out, sets[0].out, n),
               ref ? max_abs_diff(r->out, ref, n) : -1.0);
    }
    rc = 0;
done:
    for (int p = 0; p < np; p++) {
        oi_executor_free(sets[p].exec);
        oi_simulator_free(sets[p].sim);
        free(sets[p].ms);
        free(sets[p].cpu);
        free(sets[p].out);
    }
    oi_model_close(m);
    return rc;
}
