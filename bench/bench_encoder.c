/* bench_encoder.c - a 2-layer transformer encoder block, ours vs ONNX Runtime.
 *
 * Usage: bench_encoder [--python PY] [--dir DIR] [--runs N] [--rounds R] [--threads T]
 *                      [--no-ort] [--profile]
 *
 * The block (d = 384, 12 heads, seq 128, FFN 1536, exact GELU, post-norm
 * LayerNorm, as BERT) is written below in the DSL. bench/encoder/gen_encoder.py
 * writes its weights to DIR/encoder.oinf and the same block to DIR/encoder.onnx
 * (run once, when DIR has no encoder.oinf; default DIR: <build>/bench/encoder_data).
 * Then, in this one invocation:
 *   1. our output must match ONNX Runtime's (stored by the generator) within 1e-3;
 *   2. R rounds, each timing N of our steps, then N ONNX Runtime runs through
 *      bench/encoder/time_ort.py in a subprocess, so machine noise hits both
 *      alike; both use T threads (default 2): our simulator's pool
 *      (desc.n_threads) and ORT's intra-op threads;
 *   3. it prints the best and median latency of each and the ratio ours / ORT
 *      (goal <= 1.0). --profile also prints our time per op kind (best of N steps).
 * Exit 77 (skipped) when Python, numpy, onnx or onnxruntime is missing. */
#include "../openinfer.h"
#include "bench_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef OI_SOURCE_ROOT
#define OI_SOURCE_ROOT "."
#endif
#ifndef OI_BUILD_ROOT
#define OI_BUILD_ROOT "build"
#endif

/* One post-norm encoder layer per loop step; h carries the tokens through
 * the layers. Tokens are rows ([B*S, D], B = 1), so every projection is one
 * gemm with its bias fused; reshape/transpose split the heads for attention
 * and join them back (the literal 12, 32 and 384 are H, Dh and D). */
OI_GRAPH(encoder,
  OI_DYNAMIC( OI_VAR(x, f32[B*S, D]) )
  OI_CONSTANT(
    OI_VAR(Wq(l), f32[D, D], @pattern("enc.{l}.wq"))   OI_VAR(bq(l), f32[D], @pattern("enc.{l}.bq"))
    OI_VAR(Wk(l), f32[D, D], @pattern("enc.{l}.wk"))   OI_VAR(bk(l), f32[D], @pattern("enc.{l}.bk"))
    OI_VAR(Wv(l), f32[D, D], @pattern("enc.{l}.wv"))   OI_VAR(bv(l), f32[D], @pattern("enc.{l}.bv"))
    OI_VAR(Wo(l), f32[D, D], @pattern("enc.{l}.wo"))   OI_VAR(bo(l), f32[D], @pattern("enc.{l}.bo"))
    OI_VAR(W1(l), f32[D, F], @pattern("enc.{l}.w1"))   OI_VAR(b1(l), f32[F], @pattern("enc.{l}.b1"))
    OI_VAR(W2(l), f32[F, D], @pattern("enc.{l}.w2"))   OI_VAR(b2(l), f32[D], @pattern("enc.{l}.b2"))
    OI_VAR(g1(l), f32[D], @pattern("enc.{l}.ln1_g"))   OI_VAR(be1(l), f32[D], @pattern("enc.{l}.ln1_b"))
    OI_VAR(g2(l), f32[D], @pattern("enc.{l}.ln2_g"))   OI_VAR(be2(l), f32[D], @pattern("enc.{l}.ln2_b"))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B*S, D])
    OI_ASSIGN(q, f32[B*S, D])        OI_ASSIGN(k, f32[B*S, D])        OI_ASSIGN(v, f32[B*S, D])
    OI_ASSIGN(qs, f32[B, S, H, Dh])  OI_ASSIGN(ks, f32[B, S, H, Dh])  OI_ASSIGN(vs, f32[B, S, H, Dh])
    OI_ASSIGN(qh, f32[B, H, S, Dh])  OI_ASSIGN(kh, f32[B, H, S, Dh])  OI_ASSIGN(vh, f32[B, H, S, Dh])
    OI_ASSIGN(ctx, f32[B, H, S, Dh]) OI_ASSIGN(ctx_s, f32[B, S, H, Dh])
    OI_ASSIGN(joined, f32[B*S, D])   OI_ASSIGN(proj, f32[B*S, D])     OI_ASSIGN(res, f32[B*S, D])
    OI_ASSIGN(ffn, f32[B*S, F])
    OI_TRANSFER(x, h)
    OI_LOOP(layers, l, 0..num_layers,
      OI_OP(gemm, h, Wq[l], bq[l]) OI_TO(q)
      OI_OP(gemm, h, Wk[l], bk[l]) OI_TO(k)
      OI_OP(gemm, h, Wv[l], bv[l]) OI_TO(v)
      OI_OP(reshape, q, shape=[1, -1, 12, 32]) OI_TO(qs)
      OI_OP(reshape, k, shape=[1, -1, 12, 32]) OI_TO(ks)
      OI_OP(reshape, v, shape=[1, -1, 12, 32]) OI_TO(vs)
      OI_OP(transpose, qs, perm=[0, 2, 1, 3]) OI_TO(qh)
      OI_OP(transpose, ks, perm=[0, 2, 1, 3]) OI_TO(kh)
      OI_OP(transpose, vs, perm=[0, 2, 1, 3]) OI_TO(vh)
      OI_OP(attention, qh, kh, vh) OI_TO(ctx)
      OI_OP(transpose, ctx, perm=[0, 2, 1, 3]) OI_TO(ctx_s)
      OI_OP(reshape, ctx_s, shape=[-1, 384]) OI_TO(joined)
      OI_OP(gemm, joined, Wo[l], bo[l]) OI_TO(proj)
      OI_OP(add, h, proj) OI_TO(res)
      OI_OP(layer_norm, res, g1[l], be1[l], epsilon=1e-5) OI_TO(h)
      OI_OP(gemm, h, W1[l], b1[l], activation="gelu") OI_TO(ffn)
      OI_OP(gemm, ffn, W2[l], b2[l]) OI_TO(proj)
      OI_OP(add, h, proj) OI_TO(res)
      OI_OP(layer_norm, res, g2[l], be2[l], epsilon=1e-5) OI_TO(h)
    )
    OI_RETURN()
  )
)

typedef struct {
    const char *python, *dir;
    int runs, rounds, threads;
    bool ort, profile;
} options;

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static bool parse_options(int argc, char **argv, options *o) {
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/bench/encoder_data", OI_BUILD_ROOT);
    *o = (options){"python3", dir, 20, 3, 2, true, false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-ort") == 0)
            o->ort = false;
        else if (strcmp(a, "--profile") == 0)
            o->profile = true;
        else if (next && strcmp(a, "--python") == 0)
            o->python = argv[++i];
        else if (next && strcmp(a, "--dir") == 0)
            o->dir = argv[++i];
        else if (next && strcmp(a, "--runs") == 0)
            o->runs = atoi(argv[++i]);
        else if (next && strcmp(a, "--rounds") == 0)
            o->rounds = atoi(argv[++i]);
        else if (next && strcmp(a, "--threads") == 0)
            o->threads = atoi(argv[++i]);
        else
            return false;
    }
    return o->runs > 0 && o->rounds > 0 && o->threads > 0;
}

/* Writes DIR/encoder.oinf (and .onnx) unless it is there and newer than
 * the generator; false if Python cannot. */
static bool ensure_model(const options *o, char *path, size_t size) {
    char script[2048], cmd[4096];
    struct stat model, gen;
    snprintf(path, size, "%s/encoder.oinf", o->dir);
    snprintf(script, sizeof script, "%s/bench/encoder/gen_encoder.py", OI_SOURCE_ROOT);
    if (stat(path, &model) == 0 && (stat(script, &gen) != 0 || gen.st_mtime <= model.st_mtime))
        return true;
    snprintf(cmd, sizeof cmd, "\"%s\" \"%s\" \"%s\"", o->python, script, o->dir);
    printf("bench_encoder: generating the model: %s\n", cmd);
    fflush(stdout);
    return system(cmd) == 0 && stat(path, &model) == 0;
}

/* One round of ONNX Runtime timing in a subprocess: its best and median ms. */
static bool time_ort(const options *o, double *best, double *med, char *version, size_t vsize) {
    char cmd[4096], line[512];
    snprintf(cmd, sizeof cmd, "\"%s\" \"%s/bench/encoder/time_ort.py\" \"%s\" --threads %d --runs %d", o->python,
             OI_SOURCE_ROOT, o->dir, o->threads, o->runs);
    FILE *p = popen(cmd, "r");
    bool found = false;
    if (!p)
        return false;
    while (fgets(line, sizeof line, p)) {
        char ver[64] = "";
        if (sscanf(line, "ort_ms best=%lf median=%lf runs=%*d threads=%*d version=%63s", best, med, ver) >= 2) {
            snprintf(version, vsize, "%s", ver);
            found = true;
        }
    }
    return pclose(p) == 0 && found;
}

static const float *model_f32(const oi_model *m, const char *name, size_t count) {
    const oi_tensor_info *t = oi_model_find_tensor(m, name);
    const void *data = NULL;
    if (!t || t->dtype != OI_DTYPE_F32 || t->numel != count || oi_model_tensor_data(m, t, &data) != OI_OK)
        return NULL;
    return (const float *)data;
}

/* The encoder model at path and its sizes B, S and D; NULL, with
 * oi_last_error saying why, when it cannot be opened or lacks a size. */
static oi_model *open_encoder(const char *path, uint64_t *b, uint64_t *s, uint64_t *d) {
    oi_model *m = oi_model_open(path);
    if (m && oi_model_size_of(m, "B", b) == OI_OK && oi_model_size_of(m, "S", s) == OI_OK &&
        oi_model_size_of(m, "D", d) == OI_OK)
        return m;
    oi_model_close(m); /* keeps the error */
    return NULL;
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst))
            worst = d;
    }
    return worst;
}

/* One step: insert the input, run, and (when out is given) fetch h. */
static oi_status step(oi_executor *e, const float *x, size_t n, oi_tensor_view *out) {
    oi_status s = oi_executor_insert(e, "x", OI_DTYPE_F32, x, n);
    if (s == OI_OK)
        s = oi_executor_run_step(e);
    if (s == OI_OK && out)
        s = oi_executor_fetch(e, "h", OI_DTYPE_F32, out);
    return s;
}

/* Our time per op kind, from an executor whose simulator times every op
 * (desc.timer), walked node by node; the best of `steps` steps per kind. */
typedef struct {
    const char *name;
    double step_us, best_us;
} op_time;

/* Each op of the step in order, the best of the steps (where a kind's time
 * goes), and the best step's wall time against the sum of its ops (the
 * rest is the executor's own work between ops, and the input's copy). */
enum { MAX_NODES = 128 };
static double node_best_us[MAX_NODES];
static const char *node_name[MAX_NODES];
static int node_count;
static double best_step_ms = INFINITY, best_step_ops_ms;

static int profile_step(oi_executor *e, const float *x, size_t n, op_time *t, int kinds) {
    oi_event ev;
    for (int i = 0; i < kinds; i++)
        t[i].step_us = 0.0;
    double t0 = now_ms(), ops_us = 0.0;
    if (oi_executor_insert(e, "x", OI_DTYPE_F32, x, n) != OI_OK || oi_executor_iterate(e) != OI_OK)
        return -1;
    int seq = 0;
    while (oi_executor_next(e, &ev) == OI_OK) {
        if (ev.kind != OI_EVENT_OP_EXECUTE)
            continue;
        if (seq < MAX_NODES) {
            if (seq >= node_count) {
                node_best_us[seq] = INFINITY;
                node_name[seq] = ev.op_name;
                node_count = seq + 1;
            }
            if ((double)ev.micros < node_best_us[seq])
                node_best_us[seq] = (double)ev.micros;
        }
        seq++;
        ops_us += (double)ev.micros;
        int i = 0;
        while (i < kinds && strcmp(t[i].name, ev.op_name) != 0)
            i++;
        if (i == kinds && kinds < 32)
            t[kinds++] = (op_time){ev.op_name, 0.0, INFINITY};
        if (i < kinds)
            t[i].step_us += (double)ev.micros;
    }
    double step = now_ms() - t0;
    if (step < best_step_ms)
        best_step_ms = step, best_step_ops_ms = ops_us * 1e-3;
    for (int i = 0; i < kinds; i++)
        t[i].best_us = t[i].step_us < t[i].best_us ? t[i].step_us : t[i].best_us;
    return kinds;
}

static oi_simulator *cpu_simulator(const oi_model *m, int threads, bool timer) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    desc.n_threads = threads;
    desc.timer = timer;
    return oi_simulator_new_desc(m, &desc);
}

static void print_profile(const oi_model *m, int threads, const float *x, size_t n, int steps) {
    oi_simulator *sim = cpu_simulator(m, threads, true);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, encoder()) : NULL;
    op_time t[32];
    int kinds = e ? 0 : -1;
    for (int s = 0; s < steps && kinds >= 0; s++)
        kinds = profile_step(e, x, n, t, kinds);
    if (kinds < 0) {
        fprintf(stderr, "bench_encoder: profile: %s\n", oi_last_error());
    } else {
        double total = 0.0;
        for (int i = 0; i < kinds; i++)
            total += t[i].best_us;
        printf("our time per op kind (best of %d steps each, %.2f ms in all):\n", steps, total * 1e-3);
        for (int i = 0; i < kinds; i++)
            printf("  %-12s %8.3f ms  %5.1f%%\n", t[i].name, t[i].best_us * 1e-3, 100.0 * t[i].best_us / total);
        printf("each op of a step in order (best us):");
        for (int i = 0; i < node_count; i++)
            printf("%s %s %.0f", i % 6 ? "," : "\n ", node_name[i], node_best_us[i]);
        printf("\nbest timed step %.3f ms: its ops %.3f ms, between them %.3f ms\n", best_step_ms, best_step_ops_ms,
               best_step_ms - best_step_ops_ms);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* Our output against ONNX Runtime's (goal) and numpy's float64 (for scale). */
static bool check_output(const oi_model *m, oi_executor *e, const float *x, size_t n) {
    const float *ort = model_f32(m, "ref.ort", n), *ref = model_f32(m, "ref.numpy", n);
    oi_tensor_view y;
    if (!ort || !ref || step(e, x, n, &y) != OI_OK || y.len != n) {
        fprintf(stderr, "bench_encoder: %s\n", oi_last_error());
        return false;
    }
    double vs_ort = max_abs_diff((const float *)y.data, ort, n), vs_numpy = max_abs_diff((const float *)y.data, ref, n);
    bool ok = vs_ort <= 1e-3;
    printf("output: max |ours - ORT| %.3g (limit 1e-3: %s), max |ours - numpy float64| %.3g, max |ORT - numpy| %.3g\n",
           vs_ort, ok ? "ok" : "FAILED", vs_numpy, max_abs_diff(ort, ref, n));
    return ok;
}

int main(int argc, char **argv) {
    options o;
    if (!parse_options(argc, argv, &o)) {
        fprintf(stderr, "usage: bench_encoder [--python PY] [--dir DIR] [--runs N] [--rounds R] [--threads T] "
                        "[--no-ort] [--profile]\n");
        return 2;
    }
    char path[1100];
    if (!ensure_model(&o, path, sizeof path)) {
        printf("bench_encoder: SKIPPED: could not write %s (needs %s with numpy, onnx and onnxruntime: "
               "python3 -m pip install onnx onnxruntime)\n", path, o.python);
        return 77;
    }
    uint64_t b = 0, s = 0, d = 0;
    oi_model *m = open_encoder(path, &b, &s, &d);
    if (!m) {
        fprintf(stderr, "bench_encoder: %s: %s\n", path, oi_last_error());
        return 1;
    }
    size_t n = (size_t)(b * s * d);
    const float *x = model_f32(m, "input.x", n);
    oi_simulator *sim = cpu_simulator(m, o.threads, false);
    oi_executor *e = sim && x ? oi_simulator_make_executor(sim, encoder()) : NULL;
    double *ours = (double *)malloc((size_t)(o.runs * o.rounds) * sizeof *ours);
    double ort_best = INFINITY, ort_medians[64];
    int ort_rounds = 0, rc = 1;
    char version[64] = "?";
    if (!e || !ours) {
        fprintf(stderr, "bench_encoder: %s\n", oi_last_error());
        goto done;
    }
    printf("encoder: 2 layers, d %llu, seq %llu, batch %llu, post-norm, exact GELU; %d threads each (our pool, "
           "ORT's intra-op)\n", (unsigned long long)d, (unsigned long long)s, (unsigned long long)b, o.threads);
    if (!check_output(m, e, x, n))
        goto done;
    for (int w = 0; w < 3; w++) /* warm-up */
        step(e, x, n, NULL);
    for (int r = 0; r < o.rounds; r++) {
        for (int i = 0; i < o.runs; i++) {
            double t0 = now_ms();
            if (step(e, x, n, NULL) != OI_OK) {
                fprintf(stderr, "bench_encoder: %s\n", oi_last_error());
                goto done;
            }
            ours[r * o.runs + i] = now_ms() - t0;
        }
        double best = 0, med = 0;
        if (o.ort && ort_rounds < 64 && time_ort(&o, &best, &med, version, sizeof version)) {
            ort_best = best < ort_best ? best : ort_best;
            ort_medians[ort_rounds++] = med;
        } else if (o.ort) {
            printf("bench_encoder: ONNX Runtime timing failed (%s with onnxruntime?); ours only\n", o.python);
            o.ort = false;
        }
    }
    int total = o.runs * o.rounds;
    double our_med = bench_sort_median(ours, total), our_best = ours[0];
    printf("ours: best %.2f ms, median %.2f ms (%d runs)\n", our_best, our_med, total);
    if (ort_rounds) {
        double ort_med = bench_sort_median(ort_medians, ort_rounds);
        printf("ONNX Runtime %s: best %.2f ms, median of round medians %.2f ms (%d x %d runs)\n", version, ort_best,
               ort_med, ort_rounds, o.runs);
        printf("ratio ours / ORT: best %.2f, median %.2f (goal <= 1.0)\n", our_best / ort_best, our_med / ort_med);
    }
    if (o.profile)
        print_profile(m, o.threads, x, n, o.runs);
    rc = 0;
done:
    free(ours);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    return rc;
}
