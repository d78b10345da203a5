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
 *   openinfer convert IN OUT [--version 1|2]   rewrite in the canonical layout */
#include "../openinfer.h"

#include <errno.h>
#include "../openinfer_impl/internal.h" /* element loaders, status-keeping open */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* devices: every backend and device, usable or not, and why not. */
static int cli_devices(int argc, char **argv) {
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

static int cli_help(int argc, char **argv);

static const cli_command cli_commands[] = {
    {"inspect", "FILE.oinf", "show size variables, metadata, tensor previews and where each payload lies", cli_inspect},
    {"verify", "FILE.oinf", "validate every rule of the format and print values, statistics and histograms; "
                            "exit 1 with the reason if the file is invalid", cli_verify},
    {"convert", "IN.oinf OUT.oinf [--version 1|2]", "rewrite a model in the canonical layout (default version 2)",
     cli_convert},
    {"graph", "FILE.json [--dot]", "load a graph saved as JSON and print it again (lossless) or as Graphviz DOT",
     cli_graph},
    {"devices", "", "list every backend and device with memory and features, or why it is unavailable",
     cli_devices},
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
