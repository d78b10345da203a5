/* npy_tool.c - a small program over openinfer_impl/npy.h alone, for the
 * tests in tests/python/test_npy.py (compiled there in an empty folder
 * beside a copy of npy.h: the header needs nothing but the C library).
 *
 *   npy_tool copy IN OUT              read IN, write it again as OUT
 *   npy_tool dump IN                  "dtype ndim d0 d1 ...", then the data bytes in hex
 *   npy_tool make DTYPE OUT [DIM]...  write element i = a formula of i (see make_value)
 *
 * Exit 0 on success, 1 with the error message on stderr. */
#define OI_NPY_IMPLEMENTATION
#define OI_NPY_STATIC
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const oi_npy_error *err) {
    fprintf(stderr, "npy_tool: %s (status %d)\n", err->message, (int)err->status);
    return 1;
}

static int copy(const char *in, const char *out) {
    oi_npy_array a;
    oi_npy_error err;
    if (oi_npy_read(in, &a, &err) != OI_NPY_OK)
        return fail(&err);
    oi_npy_status s = oi_npy_write(out, a.dtype, a.ndim, a.shape, a.data, &err);
    oi_npy_array_free(&a);
    return s == OI_NPY_OK ? 0 : fail(&err);
}

static int dump(const char *in) {
    oi_npy_array a;
    oi_npy_error err;
    if (oi_npy_read(in, &a, &err) != OI_NPY_OK)
        return fail(&err);
    printf("%s %d", oi_npy_dtype_name(a.dtype), a.ndim);
    for (int i = 0; i < a.ndim; i++)
        printf(" %llu", (unsigned long long)a.shape[i]);
    printf("\n");
    const unsigned char *bytes = (const unsigned char *)a.data;
    for (uint64_t i = 0; i < a.count * oi_npy_dtype_size(a.dtype); i++)
        printf("%02x", bytes[i]);
    printf("\n");
    oi_npy_array_free(&a);
    return 0;
}

/* Element i: integers (i * 37 + 5) wrapped to the type, floats i / 4 - 1,
 * f16 the half bits 0x3c00 + i, bool i % 3 == 0. */
static void make_value(oi_npy_dtype t, uint64_t i, unsigned char *out) {
    uint64_t wrapped = i * 37 + 5;
    double real = (double)i / 4.0 - 1.0;
    switch (t) {
    case OI_NPY_BOOL: out[0] = i % 3 == 0; break;
    case OI_NPY_F16: { uint16_t h = (uint16_t)(0x3c00 + i); memcpy(out, &h, 2); break; }
    case OI_NPY_F32: { float f = (float)real; memcpy(out, &f, 4); break; }
    case OI_NPY_F64: memcpy(out, &real, 8); break;
    default: { /* little-endian host: the low bytes of the wrapped value */
        size_t size = oi_npy_dtype_size(t);
        for (size_t b = 0; b < size; b++)
            out[b] = (unsigned char)(wrapped >> (8 * b));
    }
    }
}

static int make(const char *dtype, const char *out, int ndim, char **dims) {
    oi_npy_dtype t = OI_NPY_INVALID;
    for (int d = 1; d <= OI_NPY_BOOL; d++)
        if (strcmp(oi_npy_dtype_name((oi_npy_dtype)d), dtype) == 0)
            t = (oi_npy_dtype)d;
    uint64_t shape[OI_NPY_MAX_DIMS], count = 1;
    for (int i = 0; i < ndim && i < OI_NPY_MAX_DIMS; i++) {
        shape[i] = strtoull(dims[i], NULL, 10);
        count *= shape[i];
    }
    size_t size = oi_npy_dtype_size(t);
    unsigned char *data = (unsigned char *)malloc(count * (size ? size : 1) + 1);
    for (uint64_t i = 0; data && size && i < count; i++)
        make_value(t, i, data + i * size);
    oi_npy_error err;
    oi_npy_status s = oi_npy_write(out, t, ndim, shape, data, &err);
    free(data);
    return s == OI_NPY_OK ? 0 : fail(&err);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "copy") == 0)
        return copy(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "dump") == 0)
        return dump(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "make") == 0)
        return make(argv[2], argv[3], argc - 4, argv + 4);
    fprintf(stderr, "usage: npy_tool copy IN OUT | dump IN | make DTYPE OUT [DIM]...\n");
    return 2;
}
