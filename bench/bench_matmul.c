/* bench_matmul.c - our f32 gemm vs OpenBLAS cblas_sgemm, in one process.
 *
 * Usage: bench_matmul [--isa portable|avx2|avx512] [--openblas-env] [--quick] [--executor] [n ...]
 * Default sizes: 256 512 1024 2048 (--quick: 256 512 1024). For each size
 * and 1 and 2 threads it times C = A * B (row-major, square) with both
 * libraries, in alternating batches so machine noise hits both alike,
 * keeps the best run of each, and prints GFLOP/s and the ratio
 * ours / OpenBLAS; then a few shapes taken from models.
 * --executor (built with the blas backend) prints instead one table of a
 * graph's matmul node run by the executor on the blas backend and on the
 * cpu backend (our kernels), each as a fraction of raw cblas_sgemm. */
#include "../openinfer_impl/internal.h"

#include <cblas.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

/* OpenBLAS (0.3.21, Debian 12) runs its AVX2 "Haswell" kernels on AMD CPUs
 * even when they have AVX-512, and some environments pin OPENBLAS_CORETYPE.
 * The bar is OpenBLAS's strongest kernel, so on an AVX-512 CPU we re-run
 * ourselves with OPENBLAS_CORETYPE=SkylakeX (OpenBLAS reads it when it
 * loads). --openblas-env keeps the environment's choice instead. */
static void prefer_openblas_avx512(int argc, char **argv) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--openblas-env") == 0)
            return;
    __builtin_cpu_init();
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512cd");
    const char *core = getenv("OPENBLAS_CORETYPE");
    if (avx512 && !getenv("OI_BENCH_REEXEC") && !(core && strcmp(core, "SkylakeX") == 0)) {
        fprintf(stderr, "bench_matmul: running OpenBLAS with OPENBLAS_CORETYPE=SkylakeX (was %s)\n",
                core ? core : "unset");
        setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
        setenv("OI_BENCH_REEXEC", "1", 1);
        execv("/proc/self/exe", argv);
        perror("bench_matmul: re-running failed; OpenBLAS keeps its default kernel");
    }
#else
    (void)argc;
    (void)argv;
#endif
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *random_matrix(int64_t count, unsigned seed) {
    float *x = (float *)malloc((size_t)count * sizeof *x);
    for (int64_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return x;
}

/* The naive i-p-j loop, to show what the blocking buys (one thread). */
static void naive_gemm(int64_t n, const float *a, const float *b, float *c) {
    memset(c, 0, (size_t)(n * n) * sizeof *c);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = 0; p < n; p++)
            for (int64_t j = 0; j < n; j++)
                c[i * n + j] += a[i * n + p] * b[p * n + j];
}

/* C[m,n] = A[m,k] * op(B); op(B) = B^T (B stored n x k) as in a linear layer. */
typedef struct {
    int64_t m, n, k;
    bool trans_b;
} problem;

typedef struct {
    double ours, openblas; /* best seconds per run */
    double max_diff;       /* between the two results, relative to max |C| */
} timing;

static timing time_problem(problem pr, int threads, oi__threadpool *pool) {
    int64_t ldb = pr.trans_b ? pr.k : pr.n;
    float *a = random_matrix(pr.m * pr.k, 1), *b = random_matrix(pr.k * pr.n, 2);
    float *c_ours = (float *)calloc((size_t)(pr.m * pr.n), sizeof(float));
    float *c_blas = (float *)calloc((size_t)(pr.m * pr.n), sizeof(float));
    openblas_set_num_threads(threads);
    timing t = {1e30, 1e30, 0};
    double flops = 2.0 * (double)pr.m * (double)pr.n * (double)pr.k;
    /* Rounds of a few runs each, ours then OpenBLAS; ~0.4 s per library.
     * Not run by run alternately: OpenBLAS's threads spin for a while after
     * each call and would take the second core from our worker. A pause
     * after each OpenBLAS batch lets them go back to sleep. */
    int runs = (int)fmin(200.0, fmax(6.0, 0.4 / (flops / 150e9)));
    int rounds = 3, per_round = (runs + rounds - 1) / rounds;
    for (int round = 0; round < rounds; round++) {
        for (int r = -1; r < per_round; r++) { /* run -1 warms caches and pools */
            double t0 = now_seconds();
            if (oi__gemm_f32(pool, false, pr.trans_b, pr.m, pr.n, pr.k, 1.0f, a, pr.k, b, ldb, 0.0f, c_ours,
                             pr.n) != OI_OK) {
                fprintf(stderr, "bench_matmul: %s\n", oi_last_error());
                exit(1);
            }
            if (r >= 0)
                t.ours = fmin(t.ours, now_seconds() - t0);
        }
        for (int r = -1; r < per_round; r++) {
            double t0 = now_seconds();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, pr.trans_b ? CblasTrans : CblasNoTrans, (int)pr.m, (int)pr.n,
                        (int)pr.k, 1.0f, a, (int)pr.k, b, (int)ldb, 0.0f, c_blas, (int)pr.n);
            if (r >= 0)
                t.openblas = fmin(t.openblas, now_seconds() - t0);
        }
        usleep(200 * 1000);
    }
    double max_abs = 0, max_diff = 0;
    for (int64_t i = 0; i < pr.m * pr.n; i++) {
        max_abs = fmax(max_abs, fabs(c_blas[i]));
        max_diff = fmax(max_diff, fabs((double)c_ours[i] - c_blas[i]));
    }
    t.max_diff = max_diff / (max_abs > 0 ? max_abs : 1);
    free(a);
    free(b);
    free(c_ours);
    free(c_blas);
    return t;
}

static void print_row(problem pr, int threads, timing t) {
    double flops = 2.0 * (double)pr.m * (double)pr.n * (double)pr.k;
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld%s", (long long)pr.m, (long long)pr.n, (long long)pr.k,
             pr.trans_b ? " B^T" : "");
    printf("%-20s %7d %13.1f %13.1f %7.2f %9.1e\n", shape, threads, flops / t.ours * 1e-9,
           flops / t.openblas * 1e-9, t.openblas / t.ours, t.max_diff);
    fflush(stdout);
}

static double naive_gflops(int64_t n) {
    float *a = random_matrix(n * n, 1), *b = random_matrix(n * n, 2);
    float *c = (float *)malloc((size_t)(n * n) * sizeof *c);
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now_seconds();
        naive_gemm(n, a, b, c);
        best = fmin(best, now_seconds() - t0);
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * (double)n * (double)n * (double)n / best * 1e-9;
}

#ifdef OPENINFER_BLAS
#include "../openinfer_impl/plan.h"

/* ---- --executor: a matmul node through the executor vs raw cblas_sgemm ---- */
typedef struct {
    int64_t batch, m, k, n; /* a [batch, m, k] (no batch dim when 1) x b [k, n] */
} exec_shape;

/* A graph running matmul(a, b) `reps` times per step (a loop), so that the
 * per-step insert of a is small next to the products; b is a model
 * tensor, as weights are. */
static oi_graph *exec_graph(exec_shape sh, int reps) {
    char a[96], b[96], c[96], range[32], lead[32] = "";
    if (sh.batch > 1)
        snprintf(lead, sizeof lead, "%lld, ", (long long)sh.batch);
    snprintf(a, sizeof a, "a, f32[%s%lld, %lld]", lead, (long long)sh.m, (long long)sh.k);
    snprintf(b, sizeof b, "b, f32[%lld, %lld]", (long long)sh.k, (long long)sh.n);
    snprintf(c, sizeof c, "c, f32[%s%lld, %lld]", lead, (long long)sh.m, (long long)sh.n);
    snprintf(range, sizeof range, "0..%d", reps);
    oi_graph_builder *g = oi_graph_builder_new("bench_matmul_node", "bench_matmul.c");
    oi_graph_builder_section(g, OI_DSL_SECTION_DYNAMIC);
    oi_graph_builder_var(g, a);
    oi_graph_builder_end(g);
    oi_graph_builder_section(g, OI_DSL_SECTION_CONSTANT);
    oi_graph_builder_var(g, b);
    oi_graph_builder_end(g);
    oi_graph_builder_section(g, OI_DSL_SECTION_VOLATILE);
    oi_graph_builder_var(g, c);
    oi_graph_builder_end(g);
    oi_graph_builder_block(g, "entry");
    oi_graph_builder_loop(g, "reps", "i", range);
    oi_graph_builder_op(g, "matmul", "a, b", "c");
    oi_graph_builder_end(g);
    oi_graph_builder_stmt(g, OI_DSL_RETURN, "", "");
    oi_graph_builder_end(g);
    return oi_graph_builder_finish(g);
}

/* A model holding b (k x n); *bytes stays alive until oi_model_close. */
static oi_model *exec_model(exec_shape sh, const float *b, uint8_t **bytes) {
    uint64_t dims[2] = {(uint64_t)sh.k, (uint64_t)sh.n};
    size_t size = 0;
    oi_writer *w = oi_writer_new();
    oi_model *m = NULL;
    if (w && oi_writer_add_tensor(w, "b", OI_DTYPE_F32, 2, dims, b, NULL) == OI_OK &&
        oi_writer_to_memory(w, 2, bytes, &size) == OI_OK)
        m = oi_model_open_memory(*bytes, size);
    oi_writer_free(w);
    if (!m) {
        fprintf(stderr, "bench_matmul: %s\n", oi_last_error());
        exit(1);
    }
    return m;
}

/* An executor for `g` on `device` with `threads` threads (exits on error). */
static oi_executor *exec_new(oi_device device, int threads, const oi_model *model, const oi_graph *g,
                             oi_simulator **sim) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = device;
    desc.n_threads = threads;
    *sim = oi_simulator_new_desc(model, &desc);
    oi_executor *e = *sim ? oi_simulator_make_executor(*sim, g) : NULL;
    if (!e) {
        fprintf(stderr, "bench_matmul: %s\n", oi_last_error());
        exit(1);
    }
    return e;
}

/* Best seconds per matmul node over `runs` steps of `reps` nodes each. */
static double exec_time(oi_executor *e, const float *a, size_t na, int reps, int runs) {
    double best = 1e30;
    for (int r = -1; r < runs; r++) { /* run -1 warms caches and pools */
        double t0 = now_seconds();
        if (oi_executor_insert(e, "a", OI_DTYPE_F32, a, na) != OI_OK || oi_executor_run_step(e) != OI_OK) {
            fprintf(stderr, "bench_matmul: %s\n", oi_last_error());
            exit(1);
        }
        if (r >= 0)
            best = fmin(best, (now_seconds() - t0) / reps);
    }
    return best;
}

/* Raw cblas_sgemm on the same operands, batches stacked as rows (what the
 * blas backend does with a shared b): best seconds per call over `runs`
 * runs of `reps` calls, timed like a step so that noise hits both alike. */
static double raw_time(exec_shape sh, const float *a, const float *b, float *c, int reps, int runs) {
    double best = 1e30;
    for (int r = -1; r < runs; r++) {
        double t0 = now_seconds();
        for (int i = 0; i < reps; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(sh.batch * sh.m), (int)sh.n, (int)sh.k, 1.0f,
                        a, (int)sh.k, b, (int)sh.n, 0.0f, c, (int)sh.n);
        if (r >= 0)
            best = fmin(best, (now_seconds() - t0) / reps);
    }
    return best;
}

/* 64-byte aligned floats, as the model's tensors are: the raw calls get the
 * same alignment as the executor's weights (OpenBLAS's m = 1 path is
 * much slower on malloc's 16-byte alignment). */
static float *aligned_floats(int64_t count, const float *init) {
    size_t bytes = ((size_t)count * sizeof(float) + 63) / 64 * 64;
    float *y = (float *)aligned_alloc(64, bytes ? bytes : 64);
    if (y && init)
        memcpy(y, init, (size_t)count * sizeof(float));
    return y;
}

static void exec_row(exec_shape sh, int threads) {
    size_t na = (size_t)(sh.batch * sh.m * sh.k);
    float *a0 = random_matrix((int64_t)na, 1), *b0 = random_matrix(sh.k * sh.n, 2);
    float *a = aligned_floats((int64_t)na, a0), *b = aligned_floats(sh.k * sh.n, b0);
    float *c = aligned_floats(sh.batch * sh.m * sh.n, NULL);
    free(a0), free(b0);
    openblas_set_num_threads(threads);
    double flops = 2.0 * (double)(sh.batch * sh.m) * (double)sh.n * (double)sh.k;
    double t_raw = raw_time(sh, a, b, c, 1, 2);
    int reps = (int)fmin(1000.0, fmax(3.0, 0.05 / t_raw)); /* ~50 ms of products per step */
    oi_graph *g = exec_graph(sh, reps);
    uint8_t *bytes = NULL;
    oi_model *model = exec_model(sh, b, &bytes);
    oi_simulator *sim_blas = NULL, *sim_cpu = NULL;
    oi_executor *e_blas = exec_new(OI_DEVICE_BLAS, threads, model, g, &sim_blas);
    oi_executor *e_cpu = exec_new(OI_DEVICE_CPU, threads, model, g, &sim_cpu);
    double best_raw = 1e30, best_blas = 1e30, best_cpu = 1e30;
    for (int round = 0; round < 3; round++) { /* our kernels first: OpenBLAS's threads spin after its calls */
        best_cpu = fmin(best_cpu, exec_time(e_cpu, a, na, reps, 2));
        best_raw = fmin(best_raw, raw_time(sh, a, b, c, reps, 2));
        best_blas = fmin(best_blas, exec_time(e_blas, a, na, reps, 2));
        usleep(200 * 1000);
    }
    char shape[64];
    int len = sh.batch > 1 ? snprintf(shape, sizeof shape, "%lld x ", (long long)sh.batch) : 0;
    snprintf(shape + len, sizeof shape - (size_t)len, "%lldx%lldx%lld", (long long)sh.m, (long long)sh.n,
             (long long)sh.k);
    printf("%-20s %7d %11.1f %12.2f %12.2f\n", shape, threads, flops / best_raw * 1e-9, best_raw / best_blas,
           best_raw / best_cpu);
    fflush(stdout);
    oi_executor_free(e_blas), oi_executor_free(e_cpu);
    oi_simulator_free(sim_blas), oi_simulator_free(sim_cpu);
    oi_model_close(model);
    oi_free(bytes);
    oi_graph_free(g);
    free(a), free(b), free(c);
}

static void exec_table(const int64_t *sizes, int n_sizes) {
    /* square sizes, then a linear layer over 4 sequences (b shared: one
     * call of 512 rows) and a decoder step (m = 1) */
    exec_shape shapes[20];
    int n = 0;
    for (int s = 0; s < n_sizes && n < 18; s++)
        shapes[n++] = (exec_shape){1, sizes[s], sizes[s], sizes[s]};
    shapes[n++] = (exec_shape){4, 128, 384, 1536};
    shapes[n++] = (exec_shape){1, 1, 4096, 4096};
    printf("matmul node (f32) run by the executor; ratio = raw cblas_sgemm time / executor time per node\n");
    printf("%-20s %7s %11s %12s %12s\n", "m x n x k", "threads", "raw GFLOP/s", "blas backend", "cpu backend");
    for (int threads = 1; threads <= 2; threads++)
        for (int i = 0; i < n; i++)
            exec_row(shapes[i], threads);
}
#endif

static bool parse_isa(const char *name, oi__gemm_isa *isa) {
    static const oi__gemm_isa all[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, oi__gemm_isa_name(all[i])) == 0) {
            *isa = all[i];
            return true;
        }
    return false;
}

int main(int argc, char **argv) {
    prefer_openblas_avx512(argc, argv);
    int64_t sizes[16] = {256, 512, 1024, 2048};
    int n_sizes = 4, n_given = 0;
    bool quick_models = false, executor = false;
    for (int i = 1; i < argc; i++) {
        oi__gemm_isa isa;
        if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc && parse_isa(argv[i + 1], &isa)) {
            if (!oi__gemm_force_isa(isa)) {
                fprintf(stderr, "bench_matmul: this CPU cannot run the %s path\n", argv[i + 1]);
                return 1;
            }
            i++;
        } else if (strcmp(argv[i], "--openblas-env") == 0) {
            /* handled by prefer_openblas_avx512 */
        } else if (strcmp(argv[i], "--executor") == 0) {
            executor = true;
        } else if (strcmp(argv[i], "--quick") == 0) {
            n_sizes = 3;
            quick_models = true;
        } else if (atoll(argv[i]) > 0 && n_given < 16) {
            sizes[n_given++] = atoll(argv[i]);
        } else {
            fprintf(stderr, "usage: %s [--isa portable|avx2|avx512] [--openblas-env] [--quick] [--executor] [n ...]\n",
                    argv[0]);
            return 2;
        }
    }
    if (n_given) {
        n_sizes = n_given;
        quick_models = true;
    }
    if (executor) {
#ifdef OPENINFER_BLAS
        printf("OpenBLAS core %s; our path %s\n", openblas_get_corename(), oi__gemm_isa_name(oi__gemm_active_isa()));
        exec_table(sizes, n_sizes);
        return 0;
#else
        fprintf(stderr, "bench_matmul: --executor needs the library built with the blas backend (-Dblas=enabled)\n");
        return 1;
#endif
    }

    printf("f32 gemm, row-major C = A * B (n x n), best of several runs; OpenBLAS core %s; our path %s\n",
           openblas_get_corename(), oi__gemm_isa_name(oi__gemm_active_isa()));
    printf("naive i-p-j loop, 1 thread: n=256 %.1f GFLOP/s\n", naive_gflops(256));
    /* Shapes from models: a decoder step (m = 1) and a transformer layer's
     * projections (seq 128, d 384, ffn 1536), weights stored out x in. */
    static const problem model_shapes[] = {
        {1, 4096, 4096, true}, {1, 4096, 4096, false}, {128, 1536, 384, true}, {128, 384, 1536, true}};
    int n_model = quick_models ? 2 : 4;
    printf("%-20s %7s %13s %13s %7s %9s\n", "m x n x k", "threads", "ours GFLOP/s", "OpenBLAS", "ratio",
           "max diff");
    for (int threads = 1; threads <= 2; threads++) {
        oi__threadpool *pool = threads > 1 ? oi__threadpool_new(threads) : NULL;
        for (int s = 0; s < n_sizes; s++) {
            problem pr = {sizes[s], sizes[s], sizes[s], false};
            print_row(pr, threads, time_problem(pr, threads, pool));
        }
        for (int s = 0; s < n_model; s++)
            print_row(model_shapes[s], threads, time_problem(model_shapes[s], threads, pool));
        oi__threadpool_free(pool);
    }
    return 0;
}
