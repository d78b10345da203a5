/* npy.h - numpy's .npy files, read and written with the C standard library
 * alone. OpenInfer's own code: `openinfer run` reads its inputs and writes
 * its outputs with it, and the synthesizer copies this file verbatim into
 * every emitted folder for the standalone driver, so the two programs read
 * and write the same bytes.
 *
 * USAGE (stb style): in exactly one C or C++ file
 *     #define OI_NPY_IMPLEMENTATION
 *     #include "npy.h"
 * and plain #include "npy.h" elsewhere. Options, defined before the
 * implementation include:
 *     OI_NPY_STATIC             every function static (private to one file)
 *     OI_NPY_MALLOC(n) / OI_NPY_FREE(p)   both or neither; default malloc/free
 *
 *     oi_npy_array a;
 *     oi_npy_error err;
 *     if (oi_npy_read("x.npy", &a, &err) != OI_NPY_OK)
 *         fprintf(stderr, "%s\n", err.message);  // "x.npy: header: ..."
 *     ... a.dtype, a.ndim, a.shape[], a.count, a.data (C order, host byte order)
 *     oi_npy_array_free(&a);
 *     oi_npy_write("y.npy", OI_NPY_F32, 2, shape, data, &err);
 *
 * WHAT IS READ: format versions 1.0, 2.0 and 3.0; dtypes bool ('|b1'),
 * int8..int64, uint8..uint64, float16, float32, float64 in either byte order
 * (big-endian data is swapped to the host's); C order and Fortran order
 * (Fortran data is reordered into C order); Python 2 headers ("(3L, 4L)").
 * REFUSED, with a message naming what and why: structured dtypes (a list
 * descr), object, string, unicode, void, complex, datetime/timedelta and
 * long double arrays; a header that is not the dict numpy writes (exactly
 * the keys descr, fortran_order, shape; shape a tuple of non-negative ints);
 * more than OI_NPY_MAX_DIMS dimensions; data shorter or longer than the
 * shape says; headers over OI_NPY_MAX_HEADER bytes.
 * WHAT IS WRITTEN: exactly the bytes np.save writes for a C-order
 * little-endian array: version 1.0, the dict in numpy's key order, numpy's
 * spare room for a growing first axis, padding to a 64-byte boundary.
 *
 * Errors are a status and a message, never an abort, exit or print. */
#ifndef OI_NPY_H
#define OI_NPY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OI_NPY_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define OI_NPY_DEF static __attribute__((unused))
#elif defined(OI_NPY_STATIC)
#define OI_NPY_DEF static
#else
#define OI_NPY_DEF extern
#endif

#define OI_NPY_MAX_DIMS 64        /* numpy 2 allows 64 dimensions */
#define OI_NPY_MAX_HEADER 1048576 /* bytes of header dict read at most */

/* Element types. The numbers are OpenInfer's oi_dtype values (the .oinf
 * type tags), so a value converts to oi_dtype with a cast. */
typedef enum oi_npy_dtype {
    OI_NPY_INVALID = 0,
    OI_NPY_I8 = 1, OI_NPY_I16 = 2, OI_NPY_I32 = 3, OI_NPY_I64 = 4,
    OI_NPY_U8 = 5, OI_NPY_U16 = 6, OI_NPY_U32 = 7, OI_NPY_U64 = 8,
    OI_NPY_F16 = 9, OI_NPY_F32 = 10, OI_NPY_F64 = 11, /* f16 as IEEE half bits */
    OI_NPY_BOOL = 12                                  /* one byte, 0 or 1 */
} oi_npy_dtype;

typedef enum oi_npy_status {
    OI_NPY_OK = 0,
    OI_NPY_ERROR_INVALID_ARGUMENT, /* a NULL pointer, an unknown dtype...     */
    OI_NPY_ERROR_IO,               /* the file could not be opened/read/written */
    OI_NPY_ERROR_FORMAT,           /* not a valid .npy file                   */
    OI_NPY_ERROR_UNSUPPORTED,      /* a valid file this reader does not take  */
    OI_NPY_ERROR_OUT_OF_MEMORY
} oi_npy_status;

/* Filled by every function that fails (a NULL error pointer is allowed). */
typedef struct oi_npy_error {
    oi_npy_status status;
    char message[384]; /* "x.npy: header: 'shape' is not a tuple: ..." */
} oi_npy_error;

/* What the header says (oi_npy_parse_header). */
typedef struct oi_npy_header {
    int major, minor;      /* format version: 1.0, 2.0 or 3.0 */
    oi_npy_dtype dtype;
    int big_endian;        /* the data's byte order in the file */
    int fortran_order;     /* the data is in Fortran (column-major) order */
    int ndim;
    uint64_t shape[OI_NPY_MAX_DIMS];
    uint64_t count;        /* elements: the product of shape (1 when ndim is 0) */
    uint64_t data_offset;  /* bytes before the data */
    uint64_t data_nbytes;  /* count * element size */
} oi_npy_header;

/* An array in memory: C order, host byte order. */
typedef struct oi_npy_array {
    oi_npy_dtype dtype;
    int ndim;
    uint64_t shape[OI_NPY_MAX_DIMS];
    uint64_t count;
    void *data;            /* count elements (never NULL after a read) */
} oi_npy_array;

/* "f32", "i64", "bool"...; "invalid" for anything else. */
OI_NPY_DEF const char *oi_npy_dtype_name(oi_npy_dtype dtype);
/* Bytes per element; 0 for an invalid dtype. */
OI_NPY_DEF size_t oi_npy_dtype_size(oi_npy_dtype dtype);
/* Parses the magic, version and header dict at the start of `bytes` (at
 * least the header: data need not follow). */
OI_NPY_DEF oi_npy_status oi_npy_parse_header(const void *bytes, size_t len, oi_npy_header *out, oi_npy_error *err);
/* A whole .npy file held in memory, copied into a new array. */
OI_NPY_DEF oi_npy_status oi_npy_load(const void *bytes, size_t len, oi_npy_array *out, oi_npy_error *err);
/* Reads a .npy file into a new array; messages start with the path. */
OI_NPY_DEF oi_npy_status oi_npy_read(const char *path, oi_npy_array *out, oi_npy_error *err);
/* Releases an array's data (and zeroes it); harmless on a zeroed array. */
OI_NPY_DEF void oi_npy_array_free(oi_npy_array *array);
/* Writes the np.save header (magic, version 1.0, dict, padding) for an
 * array into buf[0..cap); returns the header's length, or 0 when the dtype
 * or ndim is invalid or cap is too small (nothing useful written). */
OI_NPY_DEF size_t oi_npy_format_header(char *buf, size_t cap, oi_npy_dtype dtype, int ndim, const uint64_t *shape);
/* Writes a C-order array (host byte order) as a little-endian .npy file;
 * on failure the partial file is removed. `shape` may be NULL when ndim is 0. */
OI_NPY_DEF oi_npy_status oi_npy_write(const char *path, oi_npy_dtype dtype, int ndim, const uint64_t *shape,
                                      const void *data, oi_npy_error *err);

#ifdef __cplusplus
}
#endif
#endif /* OI_NPY_H */

/* ================================================================== */
/* Implementation                                                      */
/* ================================================================== */
#if defined(OI_NPY_IMPLEMENTATION) && !defined(OI_NPY_IMPLEMENTATION_DONE)
#define OI_NPY_IMPLEMENTATION_DONE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OI_NPY_MALLOC) != defined(OI_NPY_FREE)
#error "npy.h: define both OI_NPY_MALLOC and OI_NPY_FREE, or neither"
#endif
#ifndef OI_NPY_MALLOC
#define OI_NPY_MALLOC(size) malloc(size)
#define OI_NPY_FREE(ptr) free(ptr)
#endif

#define OI_NPY__MAGIC "\x93NUMPY"
#define OI_NPY__MAGIC_LEN 6
#define OI_NPY__ALIGN 64          /* np.save pads the header to this */
#define OI_NPY__GROWTH_DIGITS 21  /* numpy's room for a growing first axis */

#ifdef __cplusplus
extern "C" {
#endif

static void oi_npy__fail(oi_npy_error *err, oi_npy_status status, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void oi_npy__fail(oi_npy_error *err, oi_npy_status status, const char *fmt, ...) {
    if (!err)
        return;
    va_list args;
    va_start(args, fmt);
    err->status = status;
    vsnprintf(err->message, sizeof err->message, fmt, args);
    va_end(args);
}

/* Prefixes the message with "prefix: " (a path), keeping what fits. */
static void oi_npy__prefix(oi_npy_error *err, const char *prefix) {
    if (!err)
        return;
    size_t cap = sizeof err->message, plen = strlen(prefix), keep = strlen(err->message);
    if (plen > cap / 2) /* keep room for the reason */
        plen = cap / 2;
    if (plen + 2 + keep > cap - 1)
        keep = cap - 1 - plen - 2;
    memmove(err->message + plen + 2, err->message, keep);
    memcpy(err->message, prefix, plen);
    memcpy(err->message + plen, ": ", 2);
    err->message[plen + 2 + keep] = '\0';
}

static int oi_npy__host_is_big_endian(void) {
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first == 0;
}

OI_NPY_DEF const char *oi_npy_dtype_name(oi_npy_dtype dtype) {
    switch (dtype) {
    case OI_NPY_I8: return "i8";
    case OI_NPY_I16: return "i16";
    case OI_NPY_I32: return "i32";
    case OI_NPY_I64: return "i64";
    case OI_NPY_U8: return "u8";
    case OI_NPY_U16: return "u16";
    case OI_NPY_U32: return "u32";
    case OI_NPY_U64: return "u64";
    case OI_NPY_F16: return "f16";
    case OI_NPY_F32: return "f32";
    case OI_NPY_F64: return "f64";
    case OI_NPY_BOOL: return "bool";
    default: return "invalid";
    }
}

OI_NPY_DEF size_t oi_npy_dtype_size(oi_npy_dtype dtype) {
    switch (dtype) {
    case OI_NPY_I8: case OI_NPY_U8: case OI_NPY_BOOL: return 1;
    case OI_NPY_I16: case OI_NPY_U16: case OI_NPY_F16: return 2;
    case OI_NPY_I32: case OI_NPY_U32: case OI_NPY_F32: return 4;
    case OI_NPY_I64: case OI_NPY_U64: case OI_NPY_F64: return 8;
    default: return 0;
    }
}

/* ---- the header dict: a Python literal, parsed as such ---- */
typedef struct oi_npy__cursor {
    const char *p, *end;
    oi_npy_error *err;
    int python2; /* versions 1 and 2 may hold Python 2 longs: "3L" */
} oi_npy__cursor;

static void oi_npy__skip_space(oi_npy__cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Consumes `ch` (after spaces) if it is next. */
static int oi_npy__accept(oi_npy__cursor *c, char ch) {
    oi_npy__skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string without escapes into out[0..cap). */
static int oi_npy__string(oi_npy__cursor *c, char *out, size_t cap, const char *what) {
    oi_npy__skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: expected a quoted string for %s", what);
        return 0;
    }
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n' || n + 1 >= cap) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: %s is not a short string without escapes", what);
            return 0;
        }
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: unterminated string in %s", what);
        return 0;
    }
    c->p++;
    out[n] = '\0';
    return 1;
}

/* A non-negative decimal integer below 2^63 (numpy's intp). */
static int oi_npy__dim(oi_npy__cursor *c, uint64_t *out) {
    oi_npy__skip_space(c);
    if (c->p < c->end && *c->p == '-') {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: 'shape' has a negative dimension");
        return 0;
    }
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: 'shape' must be a tuple of integers");
        return 0;
    }
    if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9') {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: 'shape' has an integer with a leading zero");
        return 0;
    }
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned digit = (unsigned)(*c->p++ - '0');
        if (v > (UINT64_C(0x7fffffffffffffff) - digit) / 10) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: a dimension of 'shape' does not fit 63 bits");
            return 0;
        }
        v = v * 10 + digit;
    }
    if (c->python2 && c->p < c->end && (*c->p == 'L' || *c->p == 'l'))
        c->p++;
    *out = v;
    return 1;
}

/* "(a, b, ...)" with an optional trailing comma; "(a)" is an int, refused. */
static int oi_npy__shape(oi_npy__cursor *c, oi_npy_header *h) {
    if (!oi_npy__accept(c, '(')) {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: 'shape' is not a tuple");
        return 0;
    }
    h->ndim = 0;
    int commas = 0;
    while (!oi_npy__accept(c, ')')) {
        if (h->ndim > commas) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: expected ',' or ')' in 'shape'");
            return 0;
        }
        if (h->ndim == OI_NPY_MAX_DIMS) {
            oi_npy__fail(c->err, OI_NPY_ERROR_UNSUPPORTED, "header: 'shape' has more than %d dimensions",
                         OI_NPY_MAX_DIMS);
            return 0;
        }
        if (!oi_npy__dim(c, &h->shape[h->ndim]))
            return 0;
        h->ndim++;
        commas += oi_npy__accept(c, ',');
    }
    if (h->ndim == 1 && commas == 0) {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: 'shape' is (n) - an int, not a tuple; numpy writes (n,)");
        return 0;
    }
    return 1;
}

static int oi_npy__bool(oi_npy__cursor *c, int *out) {
    oi_npy__skip_space(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = 1;
        return 1;
    }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = 0;
        return 1;
    }
    oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: 'fortran_order' must be True or False");
    return 0;
}

/* The dtype of a typestr such as '<f4' or '|b1'. */
static int oi_npy__descr(const char *descr, oi_npy_header *h, oi_npy_error *err) {
    static const struct { const char *code; oi_npy_dtype dtype; } codes[] = {
        {"b1", OI_NPY_BOOL}, {"?", OI_NPY_BOOL},
        {"i1", OI_NPY_I8},   {"i2", OI_NPY_I16}, {"i4", OI_NPY_I32}, {"i8", OI_NPY_I64},
        {"u1", OI_NPY_U8},   {"u2", OI_NPY_U16}, {"u4", OI_NPY_U32}, {"u8", OI_NPY_U64},
        {"f2", OI_NPY_F16},  {"f4", OI_NPY_F32}, {"f8", OI_NPY_F64},
    };
    const char *code = descr;
    int big = oi_npy__host_is_big_endian(); /* '=' or no order mark: native */
    if (*code == '<' || *code == '>' || *code == '|' || *code == '=') {
        if (*code == '<' || *code == '>')
            big = *code == '>';
        code++;
    }
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (strcmp(code, codes[i].code) == 0) {
            h->dtype = codes[i].dtype;
            h->big_endian = big;
            return 1;
        }
    }
    const char *kind = "an unknown dtype";
    switch (*code) {
    case 'c': kind = "a complex dtype"; break;
    case 'f': kind = "a float of a size other than 2, 4 or 8 bytes (long double?)"; break;
    case 'i': case 'u': kind = "an integer of a size other than 1, 2, 4 or 8 bytes"; break;
    case 'O': kind = "an object dtype (pickled Python objects)"; break;
    case 'S': case 'a': kind = "a byte-string dtype"; break;
    case 'U': kind = "a unicode dtype"; break;
    case 'V': kind = "a void (raw bytes) dtype"; break;
    case 'M': case 'm': kind = "a datetime/timedelta dtype"; break;
    default: break;
    }
    oi_npy__fail(err, OI_NPY_ERROR_UNSUPPORTED,
                 "header: descr '%s' is %s; readable: bool, int8..int64, uint8..uint64, float16/32/64", descr, kind);
    return 0;
}

/* The dict after "{": exactly the keys descr, fortran_order and shape. */
static int oi_npy__dict(oi_npy__cursor *c, oi_npy_header *h) {
    int seen_descr = 0, seen_order = 0, seen_shape = 0;
    char key[32], descr[64];
    while (!oi_npy__accept(c, '}')) {
        if (c->p >= c->end) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: the dict is not closed with '}'");
            return 0;
        }
        if (!oi_npy__string(c, key, sizeof key, "a key"))
            return 0;
        if (!oi_npy__accept(c, ':')) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: expected ':' after '%s'", key);
            return 0;
        }
        int *seen = strcmp(key, "descr") == 0 ? &seen_descr
                    : strcmp(key, "fortran_order") == 0 ? &seen_order
                    : strcmp(key, "shape") == 0 ? &seen_shape : NULL;
        if (!seen) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT,
                         "header: unknown key '%s' (a .npy header has exactly descr, fortran_order and shape)", key);
            return 0;
        }
        if (*seen) {
            oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: key '%s' appears twice", key);
            return 0;
        }
        *seen = 1;
        oi_npy__skip_space(c);
        if (seen == &seen_descr) {
            if (c->p < c->end && *c->p == '[') {
                oi_npy__fail(c->err, OI_NPY_ERROR_UNSUPPORTED,
                             "header: descr is a list: structured (record) dtypes are not read");
                return 0;
            }
            if (!oi_npy__string(c, descr, sizeof descr, "'descr'") || !oi_npy__descr(descr, h, c->err))
                return 0;
        } else if (seen == &seen_order) {
            if (!oi_npy__bool(c, &h->fortran_order))
                return 0;
        } else if (!oi_npy__shape(c, h)) {
            return 0;
        }
        if (!oi_npy__accept(c, ',')) {
            if (!oi_npy__accept(c, '}')) {
                oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: expected ',' or '}' after '%s'", key);
                return 0;
            }
            break;
        }
    }
    if (!seen_descr || !seen_order || !seen_shape) {
        oi_npy__fail(c->err, OI_NPY_ERROR_FORMAT, "header: missing key '%s'",
                     !seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape");
        return 0;
    }
    return 1;
}

/* count = product of shape and data_nbytes, refusing what does not fit. */
static int oi_npy__sizes(oi_npy_header *h, oi_npy_error *err) {
    uint64_t count = 1;
    int empty = 0;
    for (int i = 0; i < h->ndim; i++)
        empty |= h->shape[i] == 0;
    for (int i = 0; i < h->ndim && !empty; i++) {
        if (count > UINT64_MAX / h->shape[i]) {
            oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "header: the shape's element count does not fit 64 bits");
            return 0;
        }
        count *= h->shape[i];
    }
    h->count = empty ? 0 : count;
    size_t size = oi_npy_dtype_size(h->dtype);
    if (h->count > (uint64_t)SIZE_MAX / size) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "header: %llu elements of %zu bytes do not fit in memory",
                     (unsigned long long)h->count, size);
        return 0;
    }
    h->data_nbytes = h->count * size;
    return 1;
}

OI_NPY_DEF oi_npy_status oi_npy_parse_header(const void *bytes, size_t len, oi_npy_header *out, oi_npy_error *err) {
    const unsigned char *b = (const unsigned char *)bytes;
    oi_npy_error local; /* the status travels in the error, so have one */
    if (!err)
        err = &local;
    err->status = OI_NPY_OK;
    err->message[0] = '\0';
    if (!out || (!bytes && len)) {
        oi_npy__fail(err, OI_NPY_ERROR_INVALID_ARGUMENT, "oi_npy_parse_header: NULL argument");
        return OI_NPY_ERROR_INVALID_ARGUMENT;
    }
    memset(out, 0, sizeof *out);
    if (len < OI_NPY__MAGIC_LEN + 2 || memcmp(b, OI_NPY__MAGIC, OI_NPY__MAGIC_LEN) != 0) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "not a .npy file (no \\x93NUMPY magic)");
        return OI_NPY_ERROR_FORMAT;
    }
    out->major = b[6];
    out->minor = b[7];
    if (out->major < 1 || out->major > 3 || out->minor != 0) {
        oi_npy__fail(err, OI_NPY_ERROR_UNSUPPORTED, "format version %d.%d (readable: 1.0, 2.0, 3.0)", out->major,
                     out->minor);
        return OI_NPY_ERROR_UNSUPPORTED;
    }
    size_t prefix = out->major == 1 ? 10 : 12; /* a 2- or 4-byte little-endian length follows */
    if (len < prefix) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "truncated: the header length is cut off");
        return OI_NPY_ERROR_FORMAT;
    }
    uint64_t hlen = (uint64_t)b[8] | (uint64_t)b[9] << 8;
    if (out->major > 1)
        hlen |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
    if (hlen > OI_NPY_MAX_HEADER) {
        oi_npy__fail(err, OI_NPY_ERROR_UNSUPPORTED, "header of %llu bytes (this reader takes at most %d)",
                     (unsigned long long)hlen, OI_NPY_MAX_HEADER);
        return OI_NPY_ERROR_UNSUPPORTED;
    }
    if (len - prefix < hlen) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "truncated: the header says %llu bytes, %zu are there",
                     (unsigned long long)hlen, len - prefix);
        return OI_NPY_ERROR_FORMAT;
    }
    oi_npy__cursor c;
    c.p = (const char *)b + prefix;
    c.end = c.p + hlen;
    c.err = err;
    c.python2 = out->major < 3;
    if (!oi_npy__accept(&c, '{')) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "header: not a dict (expected '{')");
        return OI_NPY_ERROR_FORMAT;
    }
    if (!oi_npy__dict(&c, out) || !oi_npy__sizes(out, err))
        return err->status;
    oi_npy__skip_space(&c);
    if (c.p != c.end) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "header: unexpected text after the dict");
        return OI_NPY_ERROR_FORMAT;
    }
    out->data_offset = prefix + hlen;
    return OI_NPY_OK;
}

/* ---- data: byte order and Fortran order into host C order ---- */
static void oi_npy__swap(unsigned char *data, uint64_t count, size_t size) {
    for (uint64_t i = 0; i < count; i++, data += size)
        for (size_t a = 0, z = size - 1; a < z; a++, z--) {
            unsigned char t = data[a];
            data[a] = data[z];
            data[z] = t;
        }
}

/* dst[C index] = src[Fortran index]: walks the C order with an odometer,
 * the source offset moving by the column-major stride of each axis. */
static void oi_npy__from_fortran(unsigned char *dst, const unsigned char *src, const oi_npy_header *h, size_t size) {
    uint64_t stride[OI_NPY_MAX_DIMS], index[OI_NPY_MAX_DIMS] = {0}, at = 0;
    for (int k = 0; k < h->ndim; k++)
        stride[k] = k == 0 ? 1 : stride[k - 1] * h->shape[k - 1];
    for (uint64_t i = 0; i < h->count; i++) {
        memcpy(dst + i * size, src + at * size, size);
        for (int k = h->ndim - 1; k >= 0; k--) { /* the last axis moves fastest */
            at += stride[k];
            if (++index[k] < h->shape[k])
                break;
            at -= stride[k] * h->shape[k];
            index[k] = 0;
        }
    }
}

/* Turns `raw` (the file's data bytes, which it may reorder) into out->data. */
static oi_npy_status oi_npy__finish(const oi_npy_header *h, unsigned char *raw, oi_npy_array *out, oi_npy_error *err) {
    size_t size = oi_npy_dtype_size(h->dtype);
    if (h->big_endian != oi_npy__host_is_big_endian() && size > 1)
        oi_npy__swap(raw, h->count, size);
    if (h->dtype == OI_NPY_BOOL)
        for (uint64_t i = 0; i < h->count; i++)
            raw[i] = raw[i] != 0;
    if (h->fortran_order && h->ndim > 1 && h->count > 1) {
        unsigned char *c_order = (unsigned char *)OI_NPY_MALLOC((size_t)h->data_nbytes);
        if (!c_order) {
            oi_npy__fail(err, OI_NPY_ERROR_OUT_OF_MEMORY, "out of memory for %llu bytes",
                         (unsigned long long)h->data_nbytes);
            return OI_NPY_ERROR_OUT_OF_MEMORY;
        }
        oi_npy__from_fortran(c_order, raw, h, size);
        memcpy(raw, c_order, (size_t)h->data_nbytes);
        OI_NPY_FREE(c_order);
    }
    out->dtype = h->dtype;
    out->ndim = h->ndim;
    memcpy(out->shape, h->shape, sizeof out->shape);
    out->count = h->count;
    out->data = raw;
    return OI_NPY_OK;
}

/* Room for the data; at least one byte so that data is never NULL. */
static unsigned char *oi_npy__alloc_data(const oi_npy_header *h, oi_npy_error *err) {
    unsigned char *raw = (unsigned char *)OI_NPY_MALLOC(h->data_nbytes ? (size_t)h->data_nbytes : 1);
    if (!raw)
        oi_npy__fail(err, OI_NPY_ERROR_OUT_OF_MEMORY, "out of memory for %llu bytes of data",
                     (unsigned long long)h->data_nbytes);
    return raw;
}

OI_NPY_DEF oi_npy_status oi_npy_load(const void *bytes, size_t len, oi_npy_array *out, oi_npy_error *err) {
    if (out)
        memset(out, 0, sizeof *out);
    oi_npy_header h;
    oi_npy_status s = oi_npy_parse_header(bytes, len, &h, err);
    if (s == OI_NPY_OK && !out) {
        oi_npy__fail(err, OI_NPY_ERROR_INVALID_ARGUMENT, "oi_npy_load: NULL array");
        return OI_NPY_ERROR_INVALID_ARGUMENT;
    }
    if (s != OI_NPY_OK)
        return s;
    uint64_t have = (uint64_t)len - h.data_offset;
    if (have != h.data_nbytes) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "%s: the shape needs %llu bytes of data, the file holds %llu",
                     have < h.data_nbytes ? "truncated" : "trailing bytes", (unsigned long long)h.data_nbytes,
                     (unsigned long long)have);
        return OI_NPY_ERROR_FORMAT;
    }
    unsigned char *raw = oi_npy__alloc_data(&h, err);
    if (!raw)
        return OI_NPY_ERROR_OUT_OF_MEMORY;
    if (h.data_nbytes)
        memcpy(raw, (const unsigned char *)bytes + h.data_offset, (size_t)h.data_nbytes);
    s = oi_npy__finish(&h, raw, out, err);
    if (s != OI_NPY_OK)
        OI_NPY_FREE(raw);
    return s;
}

/* Reads the magic, version, length and dict of an open file, leaving the
 * file at the first data byte. The parse of whatever was there reports
 * a short or broken prefix. */
static oi_npy_status oi_npy__read_header(FILE *f, oi_npy_header *h, oi_npy_error *err) {
    unsigned char prefix[12];
    size_t got = fread(prefix, 1, 8, f), plen = 10;
    if (got == 8 && prefix[6] >= 2)
        plen = 12;
    if (got == 8)
        got += fread(prefix + 8, 1, plen - 8, f);
    if (got < plen || memcmp(prefix, OI_NPY__MAGIC, OI_NPY__MAGIC_LEN) != 0 || prefix[6] < 1 || prefix[6] > 3) {
        oi_npy_status s = oi_npy_parse_header(prefix, got, h, err);
        return s != OI_NPY_OK ? s : OI_NPY_ERROR_FORMAT;
    }
    uint64_t hlen = (uint64_t)prefix[8] | (uint64_t)prefix[9] << 8;
    if (plen == 12)
        hlen |= (uint64_t)prefix[10] << 16 | (uint64_t)prefix[11] << 24;
    if (hlen > OI_NPY_MAX_HEADER) /* the parse names the limit */
        return oi_npy_parse_header(prefix, got, h, err);
    unsigned char *head = (unsigned char *)OI_NPY_MALLOC(plen + (size_t)hlen);
    if (!head) {
        oi_npy__fail(err, OI_NPY_ERROR_OUT_OF_MEMORY, "out of memory for a header of %llu bytes",
                     (unsigned long long)hlen);
        return OI_NPY_ERROR_OUT_OF_MEMORY;
    }
    memcpy(head, prefix, plen);
    got = plen + fread(head + plen, 1, (size_t)hlen, f);
    oi_npy_status s = oi_npy_parse_header(head, got, h, err);
    OI_NPY_FREE(head);
    return s;
}

static oi_npy_status oi_npy__read_open(FILE *f, oi_npy_array *out, oi_npy_error *err) {
    oi_npy_header h;
    oi_npy_status s = oi_npy__read_header(f, &h, err);
    if (s != OI_NPY_OK)
        return s;
    long here = ftell(f), end = -1; /* a short regular file fails before the allocation */
    if (here >= 0 && fseek(f, 0, SEEK_END) == 0)
        end = ftell(f);
    if (here >= 0 && fseek(f, here, SEEK_SET) == 0 && end >= here && (uint64_t)(end - here) < h.data_nbytes) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "truncated: the shape needs %llu bytes of data, the file holds %ld",
                     (unsigned long long)h.data_nbytes, end - here);
        return OI_NPY_ERROR_FORMAT;
    }
    unsigned char *raw = oi_npy__alloc_data(&h, err);
    if (!raw)
        return OI_NPY_ERROR_OUT_OF_MEMORY;
    size_t got = fread(raw, 1, (size_t)h.data_nbytes, f);
    if (ferror(f)) {
        oi_npy__fail(err, OI_NPY_ERROR_IO, "read error in the data");
        s = OI_NPY_ERROR_IO;
    } else if (got < h.data_nbytes) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "truncated: the shape needs %llu bytes of data, the file holds %zu",
                     (unsigned long long)h.data_nbytes, got);
        s = OI_NPY_ERROR_FORMAT;
    } else if (fgetc(f) != EOF) {
        oi_npy__fail(err, OI_NPY_ERROR_FORMAT, "trailing bytes after the %llu bytes of data the shape needs",
                     (unsigned long long)h.data_nbytes);
        s = OI_NPY_ERROR_FORMAT;
    }
    if (s == OI_NPY_OK)
        s = oi_npy__finish(&h, raw, out, err);
    if (s != OI_NPY_OK)
        OI_NPY_FREE(raw);
    return s;
}

OI_NPY_DEF oi_npy_status oi_npy_read(const char *path, oi_npy_array *out, oi_npy_error *err) {
    if (out)
        memset(out, 0, sizeof *out);
    if (!path || !out) {
        oi_npy__fail(err, OI_NPY_ERROR_INVALID_ARGUMENT, "oi_npy_read: NULL argument");
        return OI_NPY_ERROR_INVALID_ARGUMENT;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        oi_npy__fail(err, OI_NPY_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
        return OI_NPY_ERROR_IO;
    }
    oi_npy_status s = oi_npy__read_open(f, out, err);
    fclose(f);
    if (s != OI_NPY_OK)
        oi_npy__prefix(err, path);
    return s;
}

OI_NPY_DEF void oi_npy_array_free(oi_npy_array *array) {
    if (!array)
        return;
    OI_NPY_FREE(array->data);
    memset(array, 0, sizeof *array);
}

/* ---- writing: the bytes np.save writes ---- */
static size_t oi_npy__digits(uint64_t v) {
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

OI_NPY_DEF size_t oi_npy_format_header(char *buf, size_t cap, oi_npy_dtype dtype, int ndim, const uint64_t *shape) {
    static const char kinds[] = {0, 'i', 'i', 'i', 'i', 'u', 'u', 'u', 'u', 'f', 'f', 'f', 'b'};
    size_t size = oi_npy_dtype_size(dtype);
    if (!size || ndim < 0 || ndim > OI_NPY_MAX_DIMS || (ndim > 0 && !shape))
        return 0;
    char dict[OI_NPY_MAX_DIMS * 22 + 128];
    int n = snprintf(dict, sizeof dict, "{'descr': '%c%c%zu', 'fortran_order': False, 'shape': (",
                     size == 1 ? '|' : '<', kinds[dtype], size);
    for (int i = 0; i < ndim; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%llu", i ? ", " : "", (unsigned long long)shape[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", ndim == 1 ? "," : "");
    size_t growth = ndim > 0 ? OI_NPY__GROWTH_DIGITS - oi_npy__digits(shape[0]) : 0;
    size_t hlen = (size_t)n + growth + 1; /* + the final newline */
    size_t pad = OI_NPY__ALIGN - (OI_NPY__MAGIC_LEN + 4 + hlen) % OI_NPY__ALIGN;
    size_t total = OI_NPY__MAGIC_LEN + 4 + hlen + pad;
    if (cap < total)
        return total;
    memcpy(buf, OI_NPY__MAGIC "\x01\x00", OI_NPY__MAGIC_LEN + 2);
    buf[8] = (char)((total - 10) & 0xff);
    buf[9] = (char)((total - 10) >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', growth + pad);
    buf[total - 1] = '\n';
    return total;
}

/* Writes count elements in little-endian order, in chunks when swapping. */
static int oi_npy__write_data(FILE *f, const unsigned char *data, uint64_t count, size_t size) {
    if (!oi_npy__host_is_big_endian() || size == 1)
        return fwrite(data, size, (size_t)count, f) == (size_t)count;
    unsigned char chunk[4096];
    size_t per = sizeof chunk / size;
    for (uint64_t at = 0; at < count; at += per) {
        size_t n = count - at < per ? (size_t)(count - at) : per;
        memcpy(chunk, data + at * size, n * size);
        oi_npy__swap(chunk, n, size);
        if (fwrite(chunk, size, n, f) != n)
            return 0;
    }
    return 1;
}

OI_NPY_DEF oi_npy_status oi_npy_write(const char *path, oi_npy_dtype dtype, int ndim, const uint64_t *shape,
                                      const void *data, oi_npy_error *err) {
    oi_npy_header h;
    memset(&h, 0, sizeof h);
    h.dtype = dtype;
    h.ndim = ndim;
    if (!path || !oi_npy_dtype_size(dtype) || ndim < 0 || ndim > OI_NPY_MAX_DIMS || (ndim > 0 && !shape)) {
        oi_npy__fail(err, OI_NPY_ERROR_INVALID_ARGUMENT, "%s: cannot write: %s", path ? path : "(null)",
                     !path ? "no path" : !oi_npy_dtype_size(dtype) ? "invalid dtype" : "invalid ndim or shape");
        return OI_NPY_ERROR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < ndim; i++)
        h.shape[i] = shape[i];
    if (!oi_npy__sizes(&h, NULL) || (h.count && !data)) {
        oi_npy__fail(err, OI_NPY_ERROR_INVALID_ARGUMENT, "%s: cannot write: %s", path,
                     h.count && !data ? "no data" : "the shape's byte count does not fit in memory");
        return OI_NPY_ERROR_INVALID_ARGUMENT;
    }
    char header[OI_NPY_MAX_DIMS * 22 + 256];
    size_t hlen = oi_npy_format_header(header, sizeof header, dtype, ndim, shape);
    FILE *f = fopen(path, "wb");
    if (!f) {
        oi_npy__fail(err, OI_NPY_ERROR_IO, "%s: cannot create: %s", path, strerror(errno));
        return OI_NPY_ERROR_IO;
    }
    int ok = fwrite(header, 1, hlen, f) == hlen &&
             oi_npy__write_data(f, (const unsigned char *)data, h.count, oi_npy_dtype_size(dtype));
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        oi_npy__fail(err, OI_NPY_ERROR_IO, "%s: write failed: %s", path, strerror(errno));
        remove(path);
        return OI_NPY_ERROR_IO;
    }
    return OI_NPY_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* OI_NPY_IMPLEMENTATION */
