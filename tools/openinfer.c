/* openinfer.c - the command line tool.
 *
 * Every subcommand is one row of cli_commands (name, arguments, summary,
 * function); `openinfer help` lists them. Exit codes: 0 success, 1 the
 * command failed (an invalid model...), 2 the command line was wrong.
 *
 *   openinfer verify FILE.oinf    validate every rule of the format, then print
 *                                 exactly what python/verify_oinf.py prints
 *                                 (values, statistics, histograms, quant)
 *   openinfer inspect FILE.oinf   the same previews with the file layout
 *                                 (offsets and sizes) instead of statistics
 *   openinfer convert IN OUT [--version 1|2]   rewrite in the canonical layout
 *   openinfer run MODEL GRAPH.json [--steps N] [--input VAR=FILE.npy]...
 *       [--fetch VAR]... [--out DIR] [--trace FILE] [--device cpu|vulkan]
 *                                 run a graph on .npy inputs, write .npy outputs
 *                                 (the flags of a synthesized driver: docs/cli.md) */
#include "../openinfer.h"

#include <errno.h>
#include "../openinfer_impl/internal.h" /* element loaders, status-keeping open */
#include "../openinfer_impl/npy.h"      /* .npy in and out (compiled into the library) */
#include "../openinfer_impl/plan.h"     /* run: the variables' resolved dtypes and shapes */
#include "../openinfer_impl/device_arch.h" /* devices --json / --check */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h> /* mkdir for run --out */
#define CLI_HAVE_MKDIR 1
#endif

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1
#define CLI_EXIT_USAGE 2

typedef struct cli_command {
    const char *name;
    const char *args;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_command;

static int cli_usage(const char *command);

/* ------------------------------------------------------------------ */
/* Formatting values the way python/verify_oinf.py does               */
/* ------------------------------------------------------------------ */
/* Python's "{:.6g}": nan, inf, -inf spelled the same on every libc. */
static void cli_print_g(FILE *out, double v) {
    if (isnan(v))
        fputs("nan", out);
    else if (isinf(v))
        fputs(v < 0 ? "-inf" : "inf", out);
    else
        fprintf(out, "%.6g", v);
}

static bool cli_is_bool(oi_dtype t) { return t == OI_DTYPE_BOOL; }
/* Integers as Python ints: everything that is neither float nor bool. */
static bool cli_is_integer(oi_dtype t) { return !oi__dtype_is_float(t) && !cli_is_bool(t); }
static bool cli_is_unsigned(oi_dtype t) { return oi__dtype_is_unsigned(t) || t == OI_DTYPE_BITSET; }

static void cli_print_element(FILE *out, oi_dtype t, const void *data, uint64_t i) {
    int64_t index = (int64_t)i;
    if (cli_is_bool(t))
        fputs(oi__load_u64(t, data, index) ? "true" : "false", out);
    else if (oi__dtype_is_float(t))
        cli_print_g(out, oi__load_f64(t, data, index));
    else if (cli_is_unsigned(t))
        fprintf(out, "%" PRIu64, oi__load_u64(t, data, index));
    else
        fprintf(out, "%" PRId64, oi__load_i64(t, data, index));
}

/* "{ a, b, c }", or the first 5, "...", the last 5 when more than 10;
 * "{ }" when empty. */
static void cli_print_row(FILE *out, oi_dtype t, const void *data, uint64_t start, uint64_t count) {
    if (count == 0) {
        fputs("{ }", out);
        return;
    }
    fputs("{ ", out);
    for (uint64_t i = 0; i < count; i++) {
        if (count > 10 && i == 5) {
            fputs("..., ", out);
            i = count - 5;
        }
        cli_print_element(out, t, data, start + i);
        if (i + 1 < count)
            fputs(", ", out);
    }
    fputs(" }", out);
}

/* 0-D and 1-D on one line; more dims: one line per index of axis 0
 * (the rest flattened), at most 5 of them. */
static void cli_print_values(FILE *out, oi_dtype t, uint32_t ndim, const uint64_t *dims, const void *data,
                             uint64_t numel) {
    if (ndim <= 1 || dims[0] == 0) {
        cli_print_row(out, t, data, 0, numel);
        return;
    }
    uint64_t row = numel / dims[0];
    uint64_t rows = dims[0] < 5 ? dims[0] : 5;
    fputs("{\n", out);
    for (uint64_t r = 0; r < rows; r++) {
        fputs("  ", out);
        cli_print_row(out, t, data, r * row, row);
        fputs(",\n", out);
    }
    if (dims[0] > rows)
        fputs("  ...\n", out);
    fputs("}", out);
}

static void cli_print_dims(FILE *out, uint32_t ndim, const uint64_t *dims) {
    for (uint32_t i = 0; i < ndim; i++)
        fprintf(out, "%s%" PRIu64, i ? ", " : "", dims[i]);
}

/* ------------------------------------------------------------------ */
/* Statistics and histogram, computed the way numpy does: sums pairwise */
/* (numpy's add.reduce), population std, the median of an even count is */
/* the mean of the middle pair, NaN propagates.                         */
/* ------------------------------------------------------------------ */
static double cli_pairwise_sum(const double *a, uint64_t n) {
    if (n < 8) {
        double sum = 0.0;
        for (uint64_t i = 0; i < n; i++)
            sum += a[i];
        return sum;
    }
    if (n <= 128) {
        double r[8];
        uint64_t i;
        for (int k = 0; k < 8; k++)
            r[k] = a[k];
        for (i = 8; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += a[i + k];
        double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            sum += a[i];
        return sum;
    }
    uint64_t half = n / 2;
    half -= half % 8;
    return cli_pairwise_sum(a, half) + cli_pairwise_sum(a + half, n - half);
}

/* numpy reduces in buffers of 8192 elements, each summed pairwise. */
static double cli_sum(const double *a, uint64_t n) {
    double sum = 0.0;
    for (uint64_t at = 0; at < n; at += 8192)
        sum += cli_pairwise_sum(a + at, n - at < 8192 ? n - at : 8192);
    return sum;
}

static int cli_compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* The smallest and largest element of an integer-like tensor, exactly. */
typedef struct cli_int_range {
    bool is_unsigned;
    int64_t min_i, max_i;
    uint64_t min_u, max_u;
} cli_int_range;

static cli_int_range cli_integer_range(oi_dtype t, const void *data, uint64_t n) {
    cli_int_range r;
    memset(&r, 0, sizeof r);
    r.is_unsigned = cli_is_unsigned(t) || cli_is_bool(t);
    for (uint64_t i = 0; i < n; i++) {
        if (r.is_unsigned) {
            uint64_t v = oi__load_u64(t, data, (int64_t)i);
            r.min_u = i == 0 || v < r.min_u ? v : r.min_u;
            r.max_u = i == 0 || v > r.max_u ? v : r.max_u;
        } else {
            int64_t v = oi__load_i64(t, data, (int64_t)i);
            r.min_i = i == 0 || v < r.min_i ? v : r.min_i;
            r.max_i = i == 0 || v > r.max_i ? v : r.max_i;
        }
    }
    return r;
}

/* values: the elements as doubles; scratch: room for n more. */
/* Minimum and maximum of doubles. Among equal values (0.0 and -0.0) numpy
 * keeps the last one for f32/f64 arrays and the first for f16; do the same
 * so "-0" and "0" print as the Python tool prints them. */
static void cli_min_max(const double *v, uint64_t n, bool first_wins, double *min, double *max) {
    *min = *max = v[0];
    for (uint64_t i = 1; i < n; i++) {
        if (first_wins ? v[i] < *min : v[i] <= *min)
            *min = v[i];
        if (first_wins ? v[i] > *max : v[i] >= *max)
            *max = v[i];
    }
}

static void cli_print_stats(FILE *out, const oi_tensor_info *t, const void *data, const double *values,
                            double *scratch) {
    uint64_t n = t->numel;
    double min, max;
    bool any_nan = false;
    for (uint64_t i = 0; i < n; i++)
        any_nan |= isnan(values[i]) != 0;
    cli_min_max(values, n, t->dtype == OI_DTYPE_F16, &min, &max);
    double mean = cli_sum(values, n) / (double)n;
    for (uint64_t i = 0; i < n; i++)
        scratch[i] = (values[i] - mean) * (values[i] - mean);
    double std = sqrt(cli_sum(scratch, n) / (double)n);
    memcpy(scratch, values, (size_t)n * sizeof *scratch);
    qsort(scratch, (size_t)n, sizeof *scratch, cli_compare_doubles);
    /* numpy's median is the mean of the middle one or two (so never -0) */
    double median = n % 2 ? cli_sum(scratch + n / 2, 1) : cli_sum(scratch + n / 2 - 1, 2) / 2.0;
    if (any_nan)
        min = max = mean = median = std = NAN;

    fprintf(out, "- [nbytes: %" PRIu64 ", min: ", t->data_nbytes);
    if (oi__dtype_is_float(t->dtype)) {
        cli_print_g(out, min);
        fputs(", max: ", out);
        cli_print_g(out, max);
    } else { /* integers and bool print exactly */
        cli_int_range r = cli_integer_range(t->dtype, data, n);
        if (r.is_unsigned)
            fprintf(out, "%" PRIu64 ", max: %" PRIu64, r.min_u, r.max_u);
        else
            fprintf(out, "%" PRId64 ", max: %" PRId64, r.min_i, r.max_i);
    }
    fputs(", mean: ", out);
    cli_print_g(out, mean);
    fputs(", median: ", out);
    cli_print_g(out, median);
    fputs(", std: ", out);
    cli_print_g(out, std);
    fputs("]\n", out);
}

static void cli_print_bin(FILE *out, bool *first, double lo, double hi, uint64_t count) {
    fputs(*first ? "([" : ", ([", out);
    cli_print_g(out, lo);
    fputs(", ", out);
    cli_print_g(out, hi);
    fprintf(out, "], %" PRIu64 ")", count);
    *first = false;
}

/* Ten equal bins over the finite values (edges like numpy.linspace, the
 * last bin closed, empty bins left out), then counts of nan/inf/-inf. */
static void cli_print_float_hist(FILE *out, const double *v, uint64_t n, bool *first) {
    enum { BINS = 10 };
    double lo = INFINITY, hi = -INFINITY;
    uint64_t finite = 0, nans = 0, infs = 0, neg_infs = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (isfinite(v[i])) { /* the range of a float64 array: last of equals wins */
            lo = v[i] <= lo ? v[i] : lo;
            hi = v[i] >= hi ? v[i] : hi;
            finite++;
        } else {
            nans += isnan(v[i]) != 0;
            infs += v[i] == INFINITY;
            neg_infs += v[i] == -INFINITY;
        }
    }
    if (finite && lo == hi) {
        cli_print_bin(out, first, lo, hi, finite);
    } else if (finite) {
        double edges[BINS + 1], step = (hi - lo) / BINS;
        uint64_t counts[BINS] = {0};
        for (int i = 0; i < BINS; i++)
            edges[i] = i * step + lo;
        edges[BINS] = hi;
        for (uint64_t i = 0; i < n; i++) {
            if (!isfinite(v[i]))
                continue;
            int bin = (int)((v[i] - lo) / (hi - lo) * BINS);
            bin = bin < 0 ? 0 : bin >= BINS ? BINS - 1 : bin;
            if (v[i] < edges[bin] && bin > 0)
                bin--;
            else if (bin < BINS - 1 && v[i] >= edges[bin + 1])
                bin++;
            counts[bin]++;
        }
        for (int i = 0; i < BINS; i++)
            if (counts[i])
                cli_print_bin(out, first, edges[i], edges[i + 1], counts[i]);
    }
    const char *labels[3] = {"nan", "inf", "-inf"};
    uint64_t special[3] = {nans, infs, neg_infs};
    for (int k = 0; k < 3; k++)
        if (special[k]) {
            fprintf(out, "%s(%s, %" PRIu64 ")", *first ? "" : ", ", labels[k], special[k]);
            *first = false;
        }
}

static void cli_print_hist(FILE *out, const oi_tensor_info *t, const void *data, const double *values) {
    uint64_t n = t->numel;
    bool first = true;
    fputs("- hist: {", out);
    if (cli_is_bool(t->dtype)) {
        uint64_t ones = 0;
        for (uint64_t i = 0; i < n; i++)
            ones += values[i] != 0.0;
        fprintf(out, "([0, 0], %" PRIu64 "), ([1, 1], %" PRIu64 ")}\n", n - ones, ones);
        return;
    }
    if (cli_is_integer(t->dtype)) { /* one bin per value when they span at most 20 */
        cli_int_range r = cli_integer_range(t->dtype, data, n);
        uint64_t span = r.is_unsigned ? r.max_u - r.min_u : (uint64_t)r.max_i - (uint64_t)r.min_i;
        if (span <= 20) {
            uint64_t counts[21] = {0};
            for (uint64_t i = 0; i < n; i++)
                counts[r.is_unsigned ? oi__load_u64(t->dtype, data, (int64_t)i) - r.min_u
                                     : (uint64_t)oi__load_i64(t->dtype, data, (int64_t)i) - (uint64_t)r.min_i]++;
            for (uint64_t k = 0; k <= span; k++) {
                if (!counts[k])
                    continue;
                if (r.is_unsigned)
                    fprintf(out, "%s([%" PRIu64 ", %" PRIu64 "], %" PRIu64 ")", first ? "" : ", ", r.min_u + k,
                            r.min_u + k, counts[k]);
                else
                    fprintf(out, "%s([%" PRId64 ", %" PRId64 "], %" PRIu64 ")", first ? "" : ", ",
                            (int64_t)((uint64_t)r.min_i + k), (int64_t)((uint64_t)r.min_i + k), counts[k]);
                first = false;
            }
            fputs("}\n", out);
            return;
        }
    }
    cli_print_float_hist(out, values, n, &first);
    fputs("}\n", out);
}

/* Stats and histogram of one tensor; false if memory ran out. */
static bool cli_print_tensor_stats(FILE *out, const oi_tensor_info *t, const void *data) {
    if (t->numel > SIZE_MAX / (2 * sizeof(double)))
        return false;
    double *values = (double *)malloc((size_t)t->numel * 2 * sizeof(double));
    if (!values)
        return false;
    for (uint64_t i = 0; i < t->numel; i++)
        values[i] = oi__load_f64(t->dtype, data, (int64_t)i);
    cli_print_stats(out, t, data, values, values + t->numel);
    cli_print_hist(out, t, data, values);
    free(values);
    return true;
}

static void cli_print_quant(FILE *out, const oi_quant *q) {
    fprintf(out, "- quant: scheme=%s, scale=", q->scheme == OI_QUANT_SYMMETRIC ? "symmetric" : "asymmetric");
    if (q->scale_mode == OI_QUANT_PER_TENSOR) {
        fputs("per_tensor(", out);
        cli_print_g(out, q->scales[0]);
        fputs(")", out);
    } else {
        fprintf(out, "per_channel(axis=%" PRIu64 ", count=%" PRIu64 ")", q->scale_axis, q->scale_count);
    }
    fputs(", zero_point=", out);
    if (q->zp_mode == OI_QUANT_NONE)
        fputs("none", out);
    else if (q->zp_mode == OI_QUANT_PER_TENSOR)
        fprintf(out, "per_tensor(%" PRId32 ")", q->zero_points[0]);
    else
        fprintf(out, "per_channel(axis=%" PRIu64 ", count=%" PRIu64 ")", q->zp_axis, q->zp_count);
    fputs("\n", out);
}

/* ------------------------------------------------------------------ */
/* The model report                                                     */
/* ------------------------------------------------------------------ */
typedef enum cli_detail { CLI_DETAIL_STATS, CLI_DETAIL_LAYOUT } cli_detail;

static uint32_t cli_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t cli_get_u64(const uint8_t *p) { return cli_get_u32(p) | (uint64_t)cli_get_u32(p + 4) << 32; }

static void cli_print_metadata(FILE *out, const oi_metadata_info *md) {
    const uint8_t *p = (const uint8_t *)md->payload;
    fprintf(out, "%s: ", md->key);
    if (md->type == OI_DTYPE_STRING) {
        /* "str", as verify_oinf.py names the type */
        fprintf(out, "str = \"%.*s\"\n", (int)cli_get_u32(p), (const char *)p + 4);
    } else if (md->type == OI_DTYPE_BITSET) {
        uint32_t nbytes = cli_get_u32(p + 4);
        fprintf(out, "bitset[%" PRIu32 "] =", cli_get_u32(p));
        for (uint32_t i = 0; i < nbytes && i < 16; i++) /* the first 16 bytes */
            fprintf(out, " %02x", p[8 + i]);
        fputs(nbytes > 16 ? " ...\n" : "\n", out);
    } else if (md->type == OI_DTYPE_NDARRAY) {
        oi_dtype element = (oi_dtype)cli_get_u32(p); /* validated on open */
        uint32_t ndim = cli_get_u32(p + 4);
        uint64_t *dims = (uint64_t *)calloc(ndim ? ndim : 1, sizeof *dims);
        uint64_t numel = 1;
        for (uint32_t d = 0; dims && d < ndim; d++) {
            dims[d] = cli_get_u64(p + 8 + 8 * (size_t)d);
            numel *= dims[d];
        }
        fprintf(out, "%s[", oi_dtype_name(element));
        if (dims) {
            cli_print_dims(out, ndim, dims);
            fputs("] = ", out);
            cli_print_values(out, element, ndim, dims, p + 8 + 8 * (size_t)ndim, numel);
        }
        fputs("\n", out);
        free(dims);
    } else {
        fprintf(out, "%s = ", oi_dtype_name(md->type));
        cli_print_element(out, md->type, p, 0);
        fputs("\n", out);
    }
}

/* "name: f32[2, 3]", or "name: f32" for a scalar. */
static void cli_print_shape(FILE *out, const char *name, oi_dtype t, uint32_t ndim, const uint64_t *dims) {
    fprintf(out, "%s: %s", name, oi_dtype_name(t));
    if (ndim) {
        fputs("[", out);
        cli_print_dims(out, ndim, dims);
        fputs("]", out);
    }
}

/* Returns false (with a message on stderr) if a payload could not be shown. */
static bool cli_print_tensor(FILE *out, const oi_model *m, const oi_tensor_info *t, cli_detail detail) {
    const char *dtype = oi_dtype_name(t->dtype);
    const void *data = NULL;
    if (t->has_data && oi_model_tensor_data(m, t, &data) != OI_OK) {
        fprintf(stderr, "openinfer: %s\n", oi_last_error());
        return false;
    }
    if (!t->has_data) {
        cli_print_shape(out, t->name, t->dtype, t->ndim, t->dims);
        fputs(" -- uninitialized\n", out);
    } else if (t->ndim == 0) {
        fprintf(out, "%s: %s = ", t->name, dtype);
        cli_print_element(out, t->dtype, data, 0);
        fputs("\n", out);
    } else if (t->numel == 0) {
        cli_print_shape(out, t->name, t->dtype, t->ndim, t->dims);
        fputs(" = { }\n", out);
    } else {
        cli_print_shape(out, t->name, t->dtype, t->ndim, t->dims);
        fputs(" = ", out);
        cli_print_values(out, t->dtype, t->ndim, t->dims, data, t->numel);
        fputs("\n", out);
        if (detail == CLI_DETAIL_STATS && !cli_print_tensor_stats(out, t, data)) {
            fprintf(stderr, "openinfer: out of memory for the statistics of tensor '%s'\n", t->name);
            return false;
        }
    }
    if (detail == CLI_DETAIL_LAYOUT && t->has_data)
        fprintf(out, "- data: %" PRIu64 " bytes at byte %" PRIu64 "\n", t->data_nbytes, t->data_offset);
    if (t->has_quant)
        cli_print_quant(out, &t->quant);
    fputs("\n", out);
    return true;
}

static bool cli_print_model(FILE *out, const oi_model *m, cli_detail detail) {
    size_t n_sizevars = oi_model_sizevar_count(m), n_metadata = oi_model_metadata_count(m);
    for (size_t i = 0; i < n_sizevars; i++) {
        const char *name = NULL;
        uint64_t value = 0;
        oi_model_sizevar_at(m, i, &name, &value);
        fprintf(out, "%s := %" PRIu64 "\n", name, value);
    }
    if (n_sizevars)
        fputs("\n", out);
    for (size_t i = 0; i < n_metadata; i++)
        cli_print_metadata(out, oi_model_metadata_at(m, i));
    if (n_metadata)
        fputs("\n", out);
    for (size_t i = 0; i < oi_model_tensor_count(m); i++)
        if (!cli_print_tensor(out, m, oi_model_tensor_at(m, i), detail))
            return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* Commands                                                             */
/* ------------------------------------------------------------------ */
static oi_model *cli_open_model(const char *command, const char *path) {
    oi_model *m = NULL;
    if (oi__model_open_file(path, &m) != OI_OK)
        fprintf(stderr, "openinfer %s: %s\n", command, oi_last_error());
    return m;
}

static int cli_model_command(int argc, char **argv, cli_detail detail) {
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage(argv[0]);
    oi_model *m = cli_open_model(argv[0], argv[1]);
    if (!m)
        return CLI_EXIT_FAILED;
    if (detail == CLI_DETAIL_LAYOUT)
        printf("%s: oinf version %" PRIu32 ", %zu size variables, %zu metadata, %zu tensors\n\n", argv[1],
               oi_model_version(m), oi_model_sizevar_count(m), oi_model_metadata_count(m), oi_model_tensor_count(m));
    bool ok = cli_print_model(stdout, m, detail);
    oi_model_close(m);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

static int cli_verify(int argc, char **argv) { return cli_model_command(argc, argv, CLI_DETAIL_STATS); }
static int cli_inspect(int argc, char **argv) { return cli_model_command(argc, argv, CLI_DETAIL_LAYOUT); }
/* Copies one metadata entry of m into w (payloads were validated on open). */
static oi_status cli_copy_metadata(oi_writer *w, const oi_metadata_info *md) {
    const uint8_t *p = (const uint8_t *)md->payload;
    if (md->type == OI_DTYPE_STRING)
        return oi_writer_add_metadata_string(w, md->key, (const char *)p + 4, cli_get_u32(p));
    if (md->type == OI_DTYPE_BITSET)
        return oi_writer_add_metadata_bitset(w, md->key, p + 8, cli_get_u32(p));
    if (md->type != OI_DTYPE_NDARRAY)
        return oi_writer_add_metadata_scalar(w, md->key, md->type, p);
    uint32_t ndim = cli_get_u32(p + 4);
    uint64_t *dims = (uint64_t *)calloc(ndim ? ndim : 1, sizeof *dims);
    if (!dims)
        return OI_ERROR_OUT_OF_MEMORY;
    for (uint32_t d = 0; d < ndim; d++)
        dims[d] = cli_get_u64(p + 8 + 8 * (size_t)d);
    oi_status s = oi_writer_add_metadata_ndarray(w, md->key, (oi_dtype)cli_get_u32(p), ndim, dims,
                                                 p + 8 + 8 * (size_t)ndim);
    free(dims);
    return s;
}

/* Every size variable, metadata entry and tensor of m, into a new writer. */
static oi_status cli_copy_model(const oi_model *m, oi_writer *w) {
    oi_status s = OI_OK;
    for (size_t i = 0; s == OI_OK && i < oi_model_sizevar_count(m); i++) {
        const char *name = NULL;
        uint64_t value = 0;
        s = oi_model_sizevar_at(m, i, &name, &value);
        if (s == OI_OK)
            s = oi_writer_add_sizevar(w, name, value);
    }
    for (size_t i = 0; s == OI_OK && i < oi_model_metadata_count(m); i++)
        s = cli_copy_metadata(w, oi_model_metadata_at(m, i));
    for (size_t i = 0; s == OI_OK && i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        const void *data = NULL;
        if (t->has_data)
            s = oi_model_tensor_data(m, t, &data);
        if (s == OI_OK)
            s = oi_writer_add_tensor(w, t->name, t->dtype, t->ndim, t->dims, data, t->has_quant ? &t->quant : NULL);
    }
    return s;
}

/* convert IN OUT [--version N]: rewrite in the canonical layout (v1 -> v2...). */
static int cli_convert(int argc, char **argv) {
    uint32_t version = 2;
    if (argc == 5 && strcmp(argv[3], "--version") == 0 && (strcmp(argv[4], "1") == 0 || strcmp(argv[4], "2") == 0))
        version = (uint32_t)(argv[4][0] - '0');
    else if (argc != 3)
        return cli_usage(argv[0]);
    if (argv[1][0] == '-' || argv[2][0] == '-')
        return cli_usage(argv[0]);
    oi_model *m = cli_open_model(argv[0], argv[1]);
    if (!m)
        return CLI_EXIT_FAILED;
    oi_writer *w = oi_writer_new();
    oi_status s = w ? cli_copy_model(m, w) : OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK)
        s = oi_writer_write_file(w, version, argv[2]);
    if (s != OI_OK)
        fprintf(stderr, "openinfer %s: %s\n", argv[0], oi_last_error());
    oi_writer_free(w);
    oi_model_close(m);
    return s == OI_OK ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* The whole of a text file, NUL-terminated (free with free); NULL on error. */
static char *cli_read_text(const char *command, const char *path) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = (char *)malloc((size_t)size + 1)) != NULL && fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = '\0';
    } else {
        fprintf(stderr, "openinfer %s: %s: cannot read: %s\n", command, path, strerror(errno));
        free(text);
        text = NULL;
    }
    if (f)
        fclose(f);
    return text;
}

/* graph FILE.json [--dot]: load a graph, print it back as JSON or as DOT. */
static int cli_graph(int argc, char **argv) {
    bool dot = argc == 3 && strcmp(argv[2], "--dot") == 0;
    if (!(argc == 2 || dot) || argv[1][0] == '-')
        return cli_usage(argv[0]);
    char *json = cli_read_text(argv[0], argv[1]);
    if (!json)
        return CLI_EXIT_FAILED;
    oi_graph *g = oi_graph_from_json(json);
    free(json);
    for (size_t i = 0; i < oi_graph_warning_count(g); i++) /* kept but unused: say so */
        fprintf(stderr, "%s\n", oi_graph_warning(g, i));
    char *text = g ? (dot ? oi_graph_to_dot(g) : oi_graph_to_json(g)) : NULL;
    if (!text) {
        fprintf(stderr, "openinfer %s: %s: %s\n", argv[0], argv[1], oi_last_error());
        oi_graph_free(g);
        return CLI_EXIT_FAILED;
    }
    fputs(text, stdout);
    oi_free(text);
    oi_graph_free(g);
    return CLI_EXIT_OK;
}

/* devices --json [INDEX]: the architecture JSON of one device, or a JSON
 * array of every available one. */
static int cli_devices_json(int argc, char **argv) {
    size_t first = 0, last = 15;
    if (argc == 3) {
        char *end = NULL;
        errno = 0;
        unsigned long long index = argv[2][0] >= '0' && argv[2][0] <= '9' ? strtoull(argv[2], &end, 10) : 0;
        if (!end || *end || errno)
            return cli_usage(argv[0]);
        first = last = (size_t)index;
    }
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    bool all = argc == 2, ok = true, any = false;
    if (all)
        fputs("[\n", stdout);
    for (size_t i = first; ok && i <= last && (i < n || !all); i++) {
        if (all && !infos[i].available)
            continue;
        oi__device_arch arch;
        oi_status s = oi__device_arch_query(i, &arch);
        char *json = s == OI_OK ? oi__device_arch_to_json(&arch) : NULL;
        if (json) {
            if (all && any)
                fputs(",\n", stdout);
            fputs(json, stdout);
            any = true;
        } else {
            fprintf(stderr, "openinfer devices: %s\n", oi_last_error());
            ok = false;
        }
        oi_free(json);
        oi__device_arch_free(&arch);
    }
    if (all)
        fputs("]\n", stdout);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* devices --check FILE.json [--strict]: validate a device JSON. */
static int cli_devices_check(int argc, char **argv) {
    bool strict = argc == 4 && strcmp(argv[3], "--strict") == 0;
    if (!(argc == 3 || strict) || argv[2][0] == '-')
        return cli_usage(argv[0]);
    char *json = cli_read_text(argv[0], argv[2]);
    if (!json)
        return CLI_EXIT_FAILED;
    oi__device_arch arch;
    oi_status s = oi__device_arch_parse_mode(json, strict, &arch);
    free(json);
    for (ptrdiff_t i = 0; s == OI_OK && i < arrlen(arch.warnings); i++)
        fprintf(stderr, "openinfer devices: %s: warning: %s\n", argv[2], arch.warnings[i]);
    if (s == OI_OK)
        printf("%s: valid (%s, %s)\n", argv[2], arch.device.name,
               arch.device.api == OI__ARCH_API_VULKAN ? "vulkan" : "c");
    else
        fprintf(stderr, "openinfer devices: %s: %s\n", argv[2], oi_last_error());
    oi__device_arch_free(&arch);
    return s == OI_OK ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* devices: every backend and device, usable or not, and why not. */
static int cli_devices(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--json") == 0 && argc <= 3)
        return cli_devices_json(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "--check") == 0)
        return cli_devices_check(argc, argv);
    if (argc != 1)
        return cli_usage(argv[0]);
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    for (size_t i = 0; i < n && i < 16; i++) {
        const oi_backend_info *b = &infos[i];
        printf("%zu: %s - %s (%s)\n", i, b->name, b->device_name ? b->device_name : "?",
               b->device_type ? b->device_type : "?");
        if (!b->available) {
            printf("   unavailable: %s\n", b->unavailable_reason ? b->unavailable_reason : "unknown reason");
            continue;
        }
        if (b->total_memory)
            printf("   memory: %.1f GiB total, %.1f GiB free\n", (double)b->total_memory / (1u << 30),
                   (double)b->free_memory / (1u << 30));
        if (b->features && *b->features)
            printf("   features: %s\n", b->features);
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* run: a graph over .npy files, with the flags of a synthesized driver */
/* ------------------------------------------------------------------ */
#define CLI_MAX_STEPS 1000000000ull

typedef struct cli_input {
    const char *name, *path; /* --input NAME=PATH */
    oi_npy_array array;
} cli_input;

typedef struct cli_run_args {
    const char *model, *graph, *out, *trace;
    uint64_t steps;
    oi_device device;
    int n_threads; /* --threads: the simulator's pool (0: its default) */
    bool timed;    /* --time: each step's wall time, best and median on stderr */
    cli_input *inputs; /* room for argc of each */
    const char **fetches;
    size_t n_inputs, n_fetches;
} cli_run_args;

/* The dtype a variable travels as in a .npy file: its own where numpy has
 * one; bf16 and f8 as f32, packed integers as i8/u8 (exact on the way out;
 * on the way in the executor rounds floats and range-checks integers).
 * OI_DTYPE_INVALID: no .npy form. */
static oi_dtype cli_npy_form(oi_dtype t) {
    switch (t) {
    case OI_DTYPE_BF16: case OI_DTYPE_F8: return OI_DTYPE_F32;
    case OI_DTYPE_I4: case OI_DTYPE_I2: case OI_DTYPE_I1: case OI_DTYPE_T2: case OI_DTYPE_T1: return OI_DTYPE_I8;
    case OI_DTYPE_U4: case OI_DTYPE_U2: case OI_DTYPE_U1: return OI_DTYPE_U8;
    default: return t >= OI_DTYPE_I8 && t <= OI_DTYPE_BOOL ? t : OI_DTYPE_INVALID;
    }
}

/* numpy's name of a dtype that has a .npy form (for "save it with ..."). */
static const char *cli_numpy_name(oi_dtype t) {
    static const char *const names[] = {"", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                        "uint64", "float16", "float32", "float64", "bool_"};
    return t >= OI_DTYPE_I8 && t <= OI_DTYPE_BOOL ? names[t] : "?";
}

/* "(2, 3)", "(8,)", "()" as numpy prints a shape. */
static void cli_shape_text(char *out, size_t cap, int ndim, const uint64_t *dims) {
    size_t n = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%" PRIu64, i ? ", " : "", dims[i]);
    if (n < cap)
        snprintf(out + n, cap - n, "%s)", ndim == 1 ? "," : "");
}

static int cli_run_usage(const char *fmt, const char *what) {
    fprintf(stderr, "openinfer run: ");
    fprintf(stderr, fmt, what);
    fputs("\n", stderr);
    return cli_usage("run");
}

/* Parses the command line into *a; on a mistake prints it and returns the
 * usage exit code (out of memory: the failure code), else 0. */
static int cli_run_parse(int argc, char **argv, cli_run_args *a) {
    size_t positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool flag = strncmp(arg, "--", 2) == 0;
        if (!flag && arg[0] == '-')
            return cli_run_usage("unknown option '%s'", arg);
        if (!flag) {
            if (positional == 2)
                return cli_run_usage("unexpected argument '%s'", arg);
            *(positional++ ? &a->graph : &a->model) = arg;
            continue;
        }
        if (strcmp(arg, "--time") == 0) {
            a->timed = true;
            continue;
        }
        if (!value)
            return cli_run_usage("%s needs a value", arg);
        i++;
        if (strcmp(arg, "--threads") == 0) {
            char *end = NULL;
            long n = strtol(value, &end, 10);
            if (!end || *end || n < 1 || n > 1024)
                return cli_run_usage("--threads: expected a whole number from 1 to 1024, got '%s'", value);
            a->n_threads = (int)n;
        } else if (strcmp(arg, "--steps") == 0) {
            char *end = NULL;
            errno = 0;
            unsigned long long n = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
            if (!end || *end || errno || n < 1 || n > CLI_MAX_STEPS)
                return cli_run_usage("--steps: expected a whole number from 1 to 1000000000, got '%s'", value);
            a->steps = n;
        } else if (strcmp(arg, "--input") == 0) {
            const char *eq = strchr(value, '=');
            if (!eq || eq == value || !eq[1])
                return cli_run_usage("--input: expected VAR=FILE.npy, got '%s'", value);
            cli_input *in = &a->inputs[a->n_inputs++];
            in->name = oi__strndup(value, (size_t)(eq - value));
            in->path = eq + 1;
            if (!in->name) {
                fprintf(stderr, "openinfer run: %s\n", oi_last_error());
                return CLI_EXIT_FAILED;
            }
        } else if (strcmp(arg, "--fetch") == 0) {
            a->fetches[a->n_fetches++] = value;
        } else if (strcmp(arg, "--out") == 0) {
            a->out = value;
        } else if (strcmp(arg, "--trace") == 0) {
            a->trace = value;
        } else if (strcmp(arg, "--device") == 0) {
            if (strcmp(value, "cpu") == 0)
                a->device = OI_DEVICE_CPU;
            else if (strcmp(value, "vulkan") == 0)
                a->device = OI_DEVICE_VULKAN;
            else if (strcmp(value, "blas") == 0)
                a->device = OI_DEVICE_BLAS;
            else if (strcmp(value, "auto") == 0)
                a->device = OI_DEVICE_AUTO;
            else
                return cli_run_usage("--device: expected cpu, vulkan, blas or auto, got '%s'", value);
        } else {
            return cli_run_usage("unknown option '%s'", arg);
        }
    }
    if (positional < 2)
        return cli_run_usage("%s", positional ? "missing GRAPH.json" : "missing MODEL.oinf and GRAPH.json");
    for (size_t i = 0; i < a->n_inputs; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(a->inputs[i].name, a->inputs[j].name) == 0)
                return cli_run_usage("--input %s is given twice", a->inputs[i].name);
    return 0;
}

/* The graph's declared variables, "x, a, y", for "no variable" messages. */
static void cli_list_vars(const oi_graph *g, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (ptrdiff_t i = 0; i < arrlen(g->vars) && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", g->vars[i].name);
}

/* The variable `name` for `flag`, or NULL with a message: a declared one,
 * or with `temporaries` also an assign (--fetch: its value after the last
 * step, as the synthesized driver's --fetch gives it). */
static const oi__slot *cli_find_var(const oi__plan *p, const oi_graph *g, const char *flag, const char *name,
                                    bool temporaries) {
    int s = oi__plan_slot(p, name);
    if (s >= 0 && (p->slots[s].decl || temporaries))
        return &p->slots[s];
    char vars[512];
    cli_list_vars(g, vars, sizeof vars);
    if (s >= 0)
        fprintf(stderr, "openinfer run: %s %s: '%s' is a temporary (an assign), not a declared variable; "
                        "declared: %s\n", flag, name, name, vars);
    else
        fprintf(stderr, "openinfer run: %s %s: graph '%s' has no variable '%s'; declared: %s\n", flag, name,
                g->name, name, vars);
    return NULL;
}

static const char *cli_kind_name(oi__mem_kind k) {
    static const char *const names[] = {"dynamic", "volatile", "constant", "persistent", "temporary"};
    return names[k];
}

/* Reads one --input and checks it against its variable: dynamic memory,
 * the variable's .npy dtype and exactly its shape. */
static bool cli_load_input(const oi__plan *p, const oi_graph *g, cli_input *in) {
    const oi__slot *sl = cli_find_var(p, g, "--input", in->name, false);
    if (!sl)
        return false;
    if (sl->kind != OI__MEM_DYNAMIC || sl->n_indices > 0) {
        fprintf(stderr, "openinfer run: --input %s: %s is %s%s; --input takes dynamic variables (OI_DYNAMIC)\n",
                in->name, in->name, sl->n_indices ? "a table of " : "", cli_kind_name(sl->kind));
        return false;
    }
    oi_npy_error err;
    if (oi_npy_read(in->path, &in->array, &err) != OI_NPY_OK) {
        fprintf(stderr, "openinfer run: --input %s: %s\n", in->name, err.message);
        return false;
    }
    oi_dtype want = cli_npy_form(sl->dtype), got = (oi_dtype)in->array.dtype;
    if (got != want) {
        fprintf(stderr, "openinfer run: --input %s: %s holds %s, %s is %s: save it with .astype(np.%s)\n",
                in->name, in->path, oi_dtype_name(got), in->name, oi_dtype_name(sl->dtype), cli_numpy_name(want));
        return false;
    }
    bool same = in->array.ndim == sl->ndim;
    uint64_t shape[OI_MAX_DIMS];
    for (int d = 0; d < sl->ndim; d++) {
        shape[d] = (uint64_t)sl->shape[d];
        same = same && in->array.shape[d] == shape[d];
    }
    if (!same) {
        char have[256], need[256];
        cli_shape_text(have, sizeof have, in->array.ndim, in->array.shape);
        cli_shape_text(need, sizeof need, sl->ndim, shape);
        fprintf(stderr, "openinfer run: --input %s: %s has shape %s, %s needs %s\n", in->name, in->path, have,
                in->name, need);
        return false;
    }
    return true;
}

/* Checks one --fetch before anything runs. */
static bool cli_check_fetch(const oi__plan *p, const oi_graph *g, const char *name) {
    const oi__slot *sl = cli_find_var(p, g, "--fetch", name, true);
    if (!sl)
        return false;
    if (sl->is_prefix) {
        fprintf(stderr, "openinfer run: --fetch %s: %s is a prefix table (one model tensor per index), not one value\n",
                name, name);
        return false;
    }
    if (cli_npy_form(sl->dtype) == OI_DTYPE_INVALID) {
        fprintf(stderr, "openinfer run: --fetch %s: %s has no .npy form\n", name, oi_dtype_name(sl->dtype));
        return false;
    }
    return true;
}

/* mkdir -p. */
static bool cli_make_dirs(const char *path) {
#ifdef CLI_HAVE_MKDIR
    size_t len = strlen(path);
    char *p = (char *)malloc(len + 1);
    if (!p)
        return false;
    memcpy(p, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char keep = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "openinfer run: --out %s: cannot create %s: %s\n", path, p, strerror(errno));
            free(p);
            return false;
        }
        p[i] = keep;
    }
    free(p);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "openinfer run: --out %s: not a directory\n", path);
        return false;
    }
#else
    (void)path;
#endif
    return true;
}

/* Fetches `name` after the last step and writes OUT/name.npy. */
static bool cli_write_fetch(oi_executor *e, const oi__plan *p, const char *out_dir, const char *name) {
    const oi__slot *sl = &p->slots[oi__plan_slot(p, name)];
    oi_dtype form = cli_npy_form(sl->dtype);
    oi_tensor_view view;
    if (oi_executor_fetch(e, name, form, &view) != OI_OK) {
        fprintf(stderr, "openinfer run: --fetch %s: %s\n", name, oi_last_error());
        return false;
    }
    uint64_t shape[OI_MAX_DIMS];
    for (int d = 0; d < view.ndim; d++)
        shape[d] = (uint64_t)view.shape[d];
    char *path = oi__sprintf("%s/%s.npy", out_dir, name);
    oi_npy_error err;
    bool ok = path && oi_npy_write(path, (oi_npy_dtype)form, view.ndim, shape, view.data, &err) == OI_NPY_OK;
    if (!ok)
        fprintf(stderr, "openinfer run: --fetch %s: %s\n", name, path ? err.message : "out of memory");
    else {
        cli_print_shape(stdout, path, form, (uint32_t)view.ndim, shape); /* "DIR/y.npy: f32[8]" */
        fputs("\n", stdout);
    }
    oi_free(path);
    return ok;
}

static bool cli_write_trace(oi_executor *e, const char *path) {
    char *json = oi_executor_trace_json(e);
    FILE *f = json ? fopen(path, "wb") : NULL;
    bool ok = f && fputs(json, f) >= 0;
    ok = f && fclose(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "openinfer run: --trace %s: %s\n", path, json ? strerror(errno) : oi_last_error());
    oi_free(json);
    return ok;
}

static double cli_now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cli_compare_ms(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* --time: the best and the median step, as the synthesized driver prints them. */
static void cli_print_times(double *ms, size_t n) {
    qsort(ms, n, sizeof *ms, cli_compare_ms);
    fprintf(stderr, "step_ms best=%.4f median=%.4f steps=%zu\n", ms[0], n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]),
            n);
}

/* Inserts every input, runs the steps, writes the fetched variables. */
static bool cli_run_steps(const cli_run_args *a, const oi_model *m, const oi_graph *g, const oi__plan *p) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = a->device;
    desc.n_threads = a->n_threads;
    oi_simulator *sim = oi_simulator_new_desc(m, &desc);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    bool ok = e != NULL;
    if (!ok)
        fprintf(stderr, "openinfer run: %s\n", oi_last_error());
    if (ok && a->trace)
        oi_executor_set_trace(e, true);
    size_t n_times = a->timed ? (size_t)(a->steps < 100000 ? a->steps : 100000) : 0;
    double *times = n_times ? (double *)oi__malloc(n_times * sizeof *times) : NULL;
    if (n_times && !times) {
        fprintf(stderr, "openinfer run: --time: out of memory\n");
        ok = false;
    }
    for (uint64_t step = 0; ok && step < a->steps; step++) {
        for (size_t i = 0; ok && i < a->n_inputs; i++) {
            const cli_input *in = &a->inputs[i];
            ok = oi_executor_insert(e, in->name, (oi_dtype)in->array.dtype, in->array.data, (size_t)in->array.count) ==
                 OI_OK;
        }
        double t0 = times ? cli_now_ms() : 0.0;
        ok = ok && oi_executor_run_step(e) == OI_OK;
        if (times && step < n_times)
            times[step] = cli_now_ms() - t0;
        if (!ok)
            fprintf(stderr, "openinfer run: step %" PRIu64 " of %" PRIu64 ": %s\n", step + 1, a->steps,
                    oi_last_error());
    }
    if (ok && times)
        cli_print_times(times, n_times);
    oi__free(times);
    for (size_t i = 0; ok && i < oi_executor_warning_count(e); i++)
        fprintf(stderr, "openinfer run: note: %s\n", oi_executor_warning(e, i));
    ok = ok && (a->n_fetches == 0 || cli_make_dirs(a->out));
    for (size_t i = 0; ok && i < a->n_fetches; i++) {
        bool seen = false; /* a name fetched twice is written once */
        for (size_t j = 0; j < i; j++)
            seen = seen || strcmp(a->fetches[i], a->fetches[j]) == 0;
        ok = seen || cli_write_fetch(e, p, a->out, a->fetches[i]);
    }
    ok = ok && (!a->trace || cli_write_trace(e, a->trace));
    oi_executor_free(e);
    oi_simulator_free(sim);
    return ok;
}

static bool cli_has_input(const cli_run_args *a, const char *name) {
    for (size_t i = 0; i < a->n_inputs; i++)
        if (strcmp(a->inputs[i].name, name) == 0)
            return true;
    return false;
}

/* run MODEL.oinf GRAPH.json [--steps N] [--input VAR=FILE.npy]... [--fetch VAR]...
 *     [--out DIR] [--trace FILE] [--device cpu|vulkan|blas|auto] */
static int cli_run(int argc, char **argv) {
    cli_run_args a;
    memset(&a, 0, sizeof a);
    a.steps = 1;
    a.out = ".";
    a.device = OI_DEVICE_CPU;
    a.inputs = (cli_input *)calloc((size_t)argc, sizeof *a.inputs);
    a.fetches = (const char **)calloc((size_t)argc, sizeof *a.fetches);
    int rc = a.inputs && a.fetches ? cli_run_parse(argc, argv, &a) : CLI_EXIT_FAILED;
    oi_model *m = NULL;
    oi_graph *g = NULL;
    oi__plan *p = NULL;
    if (rc == 0) {
        rc = CLI_EXIT_FAILED;
        m = cli_open_model(argv[0], a.model);
        char *json = m ? cli_read_text(argv[0], a.graph) : NULL;
        g = json ? oi_graph_from_json(json) : NULL;
        if (json && !g)
            fprintf(stderr, "openinfer run: %s: %s\n", a.graph, oi_last_error());
        p = g ? oi__plan_build(g, m) : NULL; /* validates: the variables' dtypes and shapes */
        if (g && !p)
            fprintf(stderr, "openinfer run: %s: %s\n", a.graph, oi_last_error());
        free(json);
    }
    bool ok = p != NULL;
    for (size_t i = 0; ok && i < a.n_inputs; i++)
        ok = cli_load_input(p, g, &a.inputs[i]);
    for (ptrdiff_t v = 0; ok && v < arrlen(g->vars); v++)
        if (g->vars[v].kind == OI__MEM_DYNAMIC && !cli_has_input(&a, g->vars[v].name))
            fprintf(stderr, "openinfer run: note: dynamic variable %s has no --input: every step it holds its "
                            "initial value\n", g->vars[v].name);
    for (size_t i = 0; ok && i < a.n_fetches; i++)
        ok = cli_check_fetch(p, g, a.fetches[i]);
    if (ok && cli_run_steps(&a, m, g, p))
        rc = CLI_EXIT_OK;
    for (size_t i = 0; a.inputs && i < a.n_inputs; i++) {
        oi_free((char *)a.inputs[i].name);
        oi_npy_array_free(&a.inputs[i].array);
    }
    free(a.inputs);
    free(a.fetches);
    oi__plan_free(p);
    oi_graph_free(g);
    oi_model_close(m);
    return rc;
}

/* synth MODEL.oinf GRAPH.json --target cpu|vulkan|ARCH.json --out DIR [--report] [--embed-model]:
 * the graph as a standalone C folder (docs/synthesizer.md). */
static oi_synthesizer *cli_synth_target(const char *command, const char *target) {
    if (strcmp(target, "cpu") == 0)
        return oi_synthesizer_new(OI_DEVICE_CPU);
    if (strcmp(target, "vulkan") == 0)
        return oi_synthesizer_new(OI_DEVICE_VULKAN);
    char *json = cli_read_text(command, target);
    oi_synthesizer *s = json ? oi_synthesizer_from_arch_json(json) : NULL;
    free(json);
    return s;
}

static int cli_synth(int argc, char **argv) {
    const char *paths[2] = {NULL, NULL}, *target = NULL, *out = NULL;
    bool report = false, embed = false;
    int n_paths = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--report") == 0)
            report = true;
        else if (strcmp(argv[i], "--embed-model") == 0)
            embed = true;
        else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            target = argv[++i];
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (argv[i][0] != '-' && n_paths < 2)
            paths[n_paths++] = argv[i];
        else
            return cli_usage(argv[0]);
    }
    if (n_paths != 2 || !target || !out)
        return cli_usage(argv[0]);
    int rc = CLI_EXIT_FAILED;
    oi_model *model = oi_model_open(paths[0]);
    char *json = model ? cli_read_text(argv[0], paths[1]) : NULL;
    oi_graph *graph = json ? oi_graph_from_json(json) : NULL;
    oi_synthesizer *synth = graph ? cli_synth_target(argv[0], target) : NULL;
    if (synth && embed)
        oi_synthesizer_set_embed_model(synth, true);
    oi_plan *plan = synth ? oi_synthesize(synth, model, graph) : NULL;
    if (plan && oi_plan_emit(plan, out) == OI_OK)
        rc = CLI_EXIT_OK;
    else if (json || !model)
        fprintf(stderr, "openinfer %s: %s\n", argv[0], oi_last_error());
    oi_plan_summary sum;
    if (rc == CLI_EXIT_OK && report && oi_plan_get_summary(plan, &sum) == OI_OK) {
        printf("%s: %zu kernels run %zu DSL statements\n", sum.name, sum.kernels, sum.statements);
        printf("arena: %llu bytes (peak of live temporaries %llu); state: %llu bytes\n",
               (unsigned long long)sum.arena_bytes, (unsigned long long)sum.peak_live_bytes,
               (unsigned long long)sum.state_bytes);
        printf("per step (loops counted once): ~%llu bytes moved, ~%llu flops\n", (unsigned long long)sum.bytes_moved,
               (unsigned long long)sum.flops);
        char *files = oi_plan_files(plan);
        printf("wrote %s/: %s\n", out, files ? files : "(the list failed)");
        oi_free(files);
    }
    oi_plan_free(plan);
    oi_synthesizer_free(synth);
    oi_graph_free(graph);
    free(json);
    oi_model_close(model);
    return rc;
}

static int cli_help(int argc, char **argv);

static const cli_command cli_commands[] = {
    {"inspect", "FILE.oinf", "show size variables, metadata, tensor previews and where each payload lies", cli_inspect},
    {"verify", "FILE.oinf", "validate every rule of the format and print values, statistics and histograms; "
                            "exit 1 with the reason if the file is invalid", cli_verify},
    {"convert", "IN.oinf OUT.oinf [--version 1|2]", "rewrite a model in the canonical layout (default version 2)",
     cli_convert},
    {"graph", "FILE.json [--dot]", "load a graph saved as JSON and print it again (lossless) or as Graphviz DOT",
     cli_graph},
    {"run", "MODEL.oinf GRAPH.json [--steps N] [--input VAR=FILE.npy]... [--fetch VAR]... [--out DIR] "
            "[--trace FILE] [--device cpu|vulkan|blas|auto] [--threads N] [--time]",
     "run a graph N steps (default 1) on the simulator (default device cpu), inserting the inputs before "
     "every step; write each fetched variable after the last step to DIR/VAR.npy (default DIR: .); --threads: "
     "the CPU pool's threads (default: every core); --time: each step's best and median wall time on stderr",
     cli_run},
    {"devices", "[--json [INDEX] | --check FILE.json [--strict]]",
     "list every backend and device with memory and features, or why it is unavailable; --json: the device "
     "architecture JSON of device INDEX (or an array of every available one); --check: validate a device JSON",
     cli_devices},
    {"synth", "MODEL.oinf GRAPH.json --target cpu|vulkan|ARCH.json --out DIR [--report] [--embed-model]",
     "synthesize the graph into a standalone C folder (make -C DIR builds it); --embed-model: the C target "
     "builds the model file in (NAME_model.h, 16 MiB at most; the driver's MODEL argument may then be -)", cli_synth},
    {"help", "", "list the commands", cli_help},
};
#define CLI_COMMAND_COUNT (sizeof cli_commands / sizeof cli_commands[0])

static const cli_command *cli_find(const char *name) {
    for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
        if (strcmp(cli_commands[i].name, name) == 0)
            return &cli_commands[i];
    return NULL;
}

static void cli_print_commands(FILE *out) {
    fputs("usage: openinfer COMMAND [ARGS]\n\ncommands:\n", out);
    for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
        fprintf(out, "  %s %s\n      %s\n", cli_commands[i].name, cli_commands[i].args, cli_commands[i].summary);
}

static int cli_help(int argc, char **argv) {
    (void)argc;
    (void)argv;
    cli_print_commands(stdout);
    return CLI_EXIT_OK;
}

/* Wrong arguments for `command` (NULL: no or unknown command). */
static int cli_usage(const char *command) {
    const cli_command *c = command ? cli_find(command) : NULL;
    if (c)
        fprintf(stderr, "usage: openinfer %s %s\n", c->name, c->args);
    else
        cli_print_commands(stderr);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return cli_usage(NULL);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cli_help(argc - 1, argv + 1);
    if (strcmp(argv[1], "--version") == 0) {
        printf("openinfer %s\n", OI_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    const cli_command *c = cli_find(argv[1]);
    if (!c) {
        fprintf(stderr, "openinfer: unknown command '%s'\n", argv[1]);
        return cli_usage(NULL);
    }
    return c->run(argc - 1, argv + 1);
}
