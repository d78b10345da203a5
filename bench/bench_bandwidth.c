/* bench_bandwidth.c - memory-bound kernels as a fraction of memcpy.
 *
 * Usage: bench_bandwidth [--threads T] [rows cols] [rounds]
 *        (defaults: all cores, 4096 4096, 10 rounds)
 *
 * Times the CPU op kernels directly (oi__op_run_cpu from internal.h, the
 * call the executor makes for every CPU node, without the graph around it)
 * on f32 tensors of rows x cols elements (64 MiB each by default), and
 * memcpy of the same size in the same process. Each round runs every entry
 * once, in turn, so machine noise hits all alike; the best time of each is
 * kept. Bandwidth counts the bytes an op must move at least (each input
 * read once, the output written once, as STREAM does): binary ops
 * 12 bytes per element, unary ops, softmax and the norms 8, memcpy 8,
 * sum over the last axis 4 (the [rows] output is negligible).
 *
 * memcpy is timed on one thread and split over the kernels' thread pool
 * (a pool of T threads lent to the kernels, as an executor lends its own;
 * default all cores); the fraction is against the faster
 * of the two, so a kernel that runs on one thread cannot look better than
 * it is. Goal (issue 6): >= 0.5 for every row. */
#include "../openinfer_impl/internal.h"

#include <math.h>
#include <time.h>

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Values in [-2, 2), so exp/softmax stay finite and relu has both signs. */
static void fill_random(float *x, int64_t count, uint32_t seed) {
    for (int64_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 4194304.0f - 2.0f;
    }
}

/* ---- memcpy, on one thread and over the pool ---- */
typedef struct {
    char *dst;
    const char *src;
    size_t bytes, chunk;
} copy_job;

static void copy_task(void *ctx, int task, int thread) {
    (void)thread;
    const copy_job *j = (const copy_job *)ctx;
    size_t lo = (size_t)task * j->chunk;
    size_t hi = lo + j->chunk < j->bytes ? lo + j->chunk : j->bytes;
    if (lo < hi)
        memcpy(j->dst + lo, j->src + lo, hi - lo);
}

static void parallel_memcpy(oi__threadpool *pool, void *dst, const void *src, size_t bytes) {
    int tasks = oi__threadpool_size(pool);
    copy_job j = {(char *)dst, (const char *)src, bytes, (bytes / (size_t)tasks + 4095) & ~(size_t)4095};
    oi__threadpool_run(pool, tasks, copy_task, &j);
}

/* ---- the entries ---- */
typedef enum { KIND_MEMCPY_1, KIND_MEMCPY_POOL, KIND_OP } entry_kind;

typedef struct {
    const char *label;
    entry_kind kind;
    oi_op op;
    int n_inputs;          /* the first inputs of the pool below   */
    const oi__attr *attrs; /* NULL: defaults                       */
    size_t n_attrs;
    bool row_output;       /* the output is [rows] (reductions)    */
    double bytes_per_elem; /* minimum traffic, see the top comment */
    double best;           /* seconds                              */
} entry;

typedef struct {
    int64_t rows, cols, count;
    oi__tensor *a, *b, *out;   /* [rows, cols]        */
    oi__tensor *row_out;       /* [rows] (sum_axis)   */
    oi__tensor *scale, *bias;  /* [cols] (layer_norm) */
    oi__threadpool *pool;
} workspace;

static oi_status run_entry(workspace *w, const entry *e) {
    size_t bytes = (size_t)w->count * sizeof(float);
    if (e->kind == KIND_MEMCPY_1) {
        memcpy(oi__tensor_data(w->out), oi__tensor_data(w->a), bytes);
        return OI_OK;
    }
    if (e->kind == KIND_MEMCPY_POOL) {
        parallel_memcpy(w->pool, oi__tensor_data(w->out), oi__tensor_data(w->a), bytes);
        return OI_OK;
    }
    const oi__tensor *inputs[3] = {w->a, w->b, w->b};
    if (e->op == OI_OP_layer_norm || e->op == OI_OP_rms_norm) { /* rms_norm: x, scale */
        inputs[1] = w->scale;
        inputs[2] = w->bias;
    }
    return oi__op_run_cpu(e->op, e->attrs, e->n_attrs, inputs, (size_t)e->n_inputs, e->row_output ? w->row_out : w->out);
}

/* A few outputs against plain C, so a fast wrong kernel cannot pass unseen. */
static bool spot_check(const workspace *w, const entry *e) {
    const float *a = (const float *)oi__tensor_data(w->a), *b = (const float *)oi__tensor_data(w->b);
    const float *y = (const float *)oi__tensor_data(e->row_output ? w->row_out : w->out);
    for (int64_t s = 0; s < 8; s++) {
        int64_t row = (s * 997) % w->rows, i = row * w->cols + (s * 131) % w->cols;
        double want = a[i];
        if (e->row_output) { /* sum over the row */
            want = 0.0;
            for (int64_t j = 0; j < w->cols; j++)
                want += a[row * w->cols + j];
            i = row;
        }
        if (e->kind == KIND_OP) {
            switch (e->op) {
            case OI_OP_add: want = (double)a[i] + b[i]; break;
            case OI_OP_mul: want = (double)a[i] * b[i]; break;
            case OI_OP_relu: want = a[i] > 0 ? a[i] : 0.0; break;
            case OI_OP_exp: want = exp(a[i]); break;
            case OI_OP_sigmoid: want = 1.0 / (1.0 + exp(-(double)a[i])); break;
            case OI_OP_silu: want = a[i] / (1.0 + exp(-(double)a[i])); break;
            case OI_OP_gelu:
                if (e->n_attrs) /* approximate="tanh", as x sigmoid(2u) */
                    want = a[i] / (1.0 + exp(-2.0 * 0.7978845608028654 * (a[i] + 0.044715 * a[i] * a[i] * a[i])));
                else
                    want = 0.5 * a[i] * erfc(-a[i] * 0.70710678118654752);
                break;
            case OI_OP_softmax:
            case OI_OP_log_softmax:
            case OI_OP_layer_norm:
            case OI_OP_rms_norm: {
                const float *x = a + row * w->cols;
                double mx = -INFINITY, sum = 0.0, mean = 0.0, var = 0.0, sq = 0.0;
                for (int64_t j = 0; j < w->cols; j++)
                    mx = x[j] > mx ? x[j] : mx, mean += x[j], sq += (double)x[j] * x[j];
                mean /= (double)w->cols;
                for (int64_t j = 0; j < w->cols; j++)
                    sum += exp(x[j] - mx), var += (x[j] - mean) * (x[j] - mean);
                var /= (double)w->cols;
                sq /= (double)w->cols;
                if (e->op == OI_OP_softmax)
                    want = exp(a[i] - mx) / sum;
                else if (e->op == OI_OP_log_softmax)
                    want = (a[i] - mx) - log(sum);
                else if (e->op == OI_OP_layer_norm)
                    want = (a[i] - mean) / sqrt(var + 1e-5);
                else
                    want = a[i] / sqrt(sq + 1e-5);
                break;
            }
            case OI_OP_sum_axis: break;
            default: return true;
            }
        }
        if (fabs(y[i] - want) > 1e-4 * (1.0 + fabs(want))) {
            fprintf(stderr, "bench_bandwidth: %s gives %g at %lld, expected %g\n", e->label, (double)y[i], (long long)i,
                    want);
            return false;
        }
    }
    return true;
}

static bool workspace_init(workspace *w, int64_t rows, int64_t cols) {
    memset(w, 0, sizeof *w);
    w->rows = rows;
    w->cols = cols;
    w->count = rows * cols;
    int64_t shape[2] = {rows, cols};
    w->a = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    w->b = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    w->out = oi__tensor_new(OI_DTYPE_F32, 2, shape); /* zero-filled: pages touched */
    w->row_out = oi__tensor_new(OI_DTYPE_F32, 1, &rows);
    w->scale = oi__tensor_new(OI_DTYPE_F32, 1, &cols);
    w->bias = oi__tensor_new(OI_DTYPE_F32, 1, &cols); /* zeros */
    w->pool = oi__threadpool_default(); /* the lent pool */
    if (!w->a || !w->b || !w->out || !w->row_out || !w->scale || !w->bias || !w->pool)
        return false;
    fill_random((float *)oi__tensor_data(w->a), w->count, 1);
    fill_random((float *)oi__tensor_data(w->b), w->count, 2);
    float *scale = (float *)oi__tensor_data(w->scale);
    for (int64_t j = 0; j < cols; j++)
        scale[j] = 1.0f;
    return true;
}

static void workspace_free(workspace *w) {
    oi__tensor_free(w->a);
    oi__tensor_free(w->b);
    oi__tensor_free(w->out);
    oi__tensor_free(w->row_out);
    oi__tensor_free(w->scale);
    oi__tensor_free(w->bias);
}

int main(int argc, char **argv) {
    int threads = 0;
    if (argc > 2 && strcmp(argv[1], "--threads") == 0) {
        threads = atoi(argv[2]);
        argc -= 2;
        argv += 2;
    }
    int64_t rows = argc > 2 ? atoll(argv[1]) : 4096, cols = argc > 2 ? atoll(argv[2]) : 4096;
    int rounds = argc > 3 ? atoi(argv[3]) : (argc == 2 ? atoi(argv[1]) : 10);
    if (rows < 1 || cols < 1 || rounds < 1 || threads < 0) {
        fprintf(stderr, "usage: bench_bandwidth [--threads T] [rows cols] [rounds]\n");
        return 2;
    }
    oi__threadpool *pool = oi__threadpool_new(threads);
    if (!pool) {
        fprintf(stderr, "bench_bandwidth: %s\n", oi_last_error());
        return 1;
    }
    oi__threadpool_lend(pool);
    workspace w;
    if (!workspace_init(&w, rows, cols)) {
        fprintf(stderr, "bench_bandwidth: %s\n", oi_last_error());
        workspace_free(&w);
        oi__threadpool_lend(NULL);
        oi__threadpool_free(pool);
        return 1;
    }
    oi__attr last_axis[1] = {{(char *)"axis", OI__ATTR_INT, 0, -1, NULL, NULL, OI_DTYPE_INVALID, NULL, NULL}};
    oi__attr last_axes[1] = {{(char *)"axes", OI__ATTR_INT_LIST, 0, 0, NULL, NULL, OI_DTYPE_INVALID, NULL, NULL}};
    oi__attr tanh_form[1] = {{(char *)"approximate", OI__ATTR_STRING, 0, 0, (char *)"tanh", NULL, OI_DTYPE_INVALID, NULL, NULL}};
    arrput(last_axes[0].ints, -1);
    entry entries[] = {
        {"memcpy (1 thread)", KIND_MEMCPY_1, OI_OP_add, 0, NULL, 0, false, 8, 1e30},
        {"memcpy (pool)", KIND_MEMCPY_POOL, OI_OP_add, 0, NULL, 0, false, 8, 1e30},
        {"add", KIND_OP, OI_OP_add, 2, NULL, 0, false, 12, 1e30},
        {"mul", KIND_OP, OI_OP_mul, 2, NULL, 0, false, 12, 1e30},
        {"relu", KIND_OP, OI_OP_relu, 1, NULL, 0, false, 8, 1e30},
        {"exp", KIND_OP, OI_OP_exp, 1, NULL, 0, false, 8, 1e30},
        {"sum_axis (last axis)", KIND_OP, OI_OP_sum_axis, 1, last_axes, 1, true, 4, 1e30},
        {"softmax (last axis)", KIND_OP, OI_OP_softmax, 1, last_axis, 1, false, 8, 1e30},
        {"layer_norm (last axis)", KIND_OP, OI_OP_layer_norm, 3, last_axis, 1, false, 8, 1e30},
        {"sigmoid", KIND_OP, OI_OP_sigmoid, 1, NULL, 0, false, 8, 1e30},
        {"silu", KIND_OP, OI_OP_silu, 1, NULL, 0, false, 8, 1e30},
        {"gelu (tanh)", KIND_OP, OI_OP_gelu, 1, tanh_form, 1, false, 8, 1e30},
        {"gelu (exact)", KIND_OP, OI_OP_gelu, 1, NULL, 0, false, 8, 1e30},
        {"log_softmax (last axis)", KIND_OP, OI_OP_log_softmax, 1, last_axis, 1, false, 8, 1e30},
        {"rms_norm (last axis)", KIND_OP, OI_OP_rms_norm, 2, last_axis, 1, false, 8, 1e30},
    };
    size_t n_entries = sizeof entries / sizeof entries[0];
    int rc = 0;
    for (size_t e = 0; e < n_entries; e++) { /* warm-up + correctness */
        if (run_entry(&w, &entries[e]) != OI_OK || !spot_check(&w, &entries[e])) {
            fprintf(stderr, "bench_bandwidth: %s: %s\n", entries[e].label, oi_last_error());
            rc = 1;
            entries[e].best = -1.0; /* skipped */
        }
    }
    for (int r = 0; r < rounds; r++)
        for (size_t e = 0; e < n_entries; e++) {
            if (entries[e].best < 0)
                continue;
            double t0 = now_seconds();
            run_entry(&w, &entries[e]);
            double dt = now_seconds() - t0;
            if (dt < entries[e].best)
                entries[e].best = dt;
        }

    double gbs[sizeof entries / sizeof entries[0]];
    for (size_t e = 0; e < n_entries; e++)
        gbs[e] = entries[e].best > 0 ? entries[e].bytes_per_elem * (double)w.count / entries[e].best * 1e-9 : 0.0;
    double copy_gbs = gbs[0] > gbs[1] ? gbs[0] : gbs[1];
    printf("f32 [%lld, %lld] (%.0f MiB per tensor), %d threads in the pool, best of %d rounds\n", (long long)rows,
           (long long)cols, (double)w.count * 4.0 / 1048576.0, oi__threadpool_size(w.pool), rounds);
    printf("%-24s %10s %10s %12s\n", "kernel", "ms", "GB/s", "/ memcpy");
    for (size_t e = 0; e < n_entries; e++) {
        if (entries[e].best < 0) {
            printf("%-24s %10s\n", entries[e].label, "failed");
            continue;
        }
        printf("%-24s %10.2f %10.2f %12.2f\n", entries[e].label, entries[e].best * 1e3, gbs[e], gbs[e] / copy_gbs);
    }
    printf("(/ memcpy: against the faster memcpy row, %.2f GB/s; goal >= 0.5)\n", copy_gbs);
    arrfree(last_axes[0].ints);
    workspace_free(&w);
    oi__threadpool_lend(NULL);
    oi__threadpool_free(pool);
    return rc;
}
