/* test_npy.c - openinfer_impl/npy.h as the library builds it: headers typed
 * in byte by byte (the cases numpy never writes, and the ones it does),
 * every refusal with its reason, write -> read round trips, and the
 * allocations going through the library's allocator hooks.
 * tests/python/test_npy.py checks the same code against numpy itself. */
#include "../openinfer.h"
#include "../openinfer_impl/npy.h"

#include "alloc_hooks.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A v1 file: magic, version, the header text padded with spaces to a
 * 64-byte boundary and a newline (as numpy pads), then `data`. */
static size_t make_file(unsigned char *out, int major, const char *header, const void *data, size_t nbytes) {
    size_t prefix = major == 1 ? 10 : 12, text = strlen(header);
    size_t hlen = text + 1;
    hlen += 64 - (prefix + hlen) % 64;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    if (major > 1)
        out[10] = out[11] = 0;
    memcpy(out + prefix, header, text);
    memset(out + prefix + text, ' ', hlen - text - 1);
    out[prefix + hlen - 1] = '\n';
    if (nbytes)
        memcpy(out + prefix + hlen, data, nbytes);
    return prefix + hlen + nbytes;
}

static unsigned char file[8192];

/* Loads a file made of `header` + nbytes zeros; returns the status and
 * leaves the message in *err. */
static oi_npy_status load_header(const char *header, size_t nbytes, oi_npy_array *a, oi_npy_error *err) {
    static const unsigned char zeros[256];
    size_t len = make_file(file, 1, header, zeros, nbytes);
    return oi_npy_load(file, len, a, err);
}

static void expect_refusal(const char *header, size_t nbytes, oi_npy_status want, const char *why) {
    oi_npy_array a;
    oi_npy_error err;
    oi_npy_status s = load_header(header, nbytes, &a, &err);
    CHECK_MSG(s == want, "%s: status %d, want %d (%s)", header, (int)s, (int)want, err.message);
    CHECK_EQ_INT(err.status, want);
    CHECK_STR_CONTAINS(err.message, why);
    CHECK(a.data == NULL);
}

static void test_headers_numpy_writes(void) {
    oi_npy_header h;
    oi_npy_error err;
    const uint8_t values[6] = {1, 0, 0, 2, 0, 0}; /* <i2: 1, 512, 0 */
    size_t len = make_file(file, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", values, 6);
    CHECK_EQ_INT(oi_npy_parse_header(file, len, &h, &err), OI_NPY_OK);
    CHECK_EQ_INT(h.dtype, OI_NPY_I16);
    CHECK_EQ_INT(h.ndim, 1);
    CHECK_EQ_INT(h.shape[0], 3);
    CHECK_EQ_INT(h.count, 3);
    CHECK_EQ_INT(h.data_offset, 128); /* 10 + 58 + newline, padded to 64 */
    CHECK_EQ_INT(h.data_nbytes, 6);
    CHECK_EQ_INT(h.major, 1);
    oi_npy_array a;
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    const int16_t *v = (const int16_t *)a.data;
    CHECK(v && v[0] == 1 && v[1] == 512 && v[2] == 0); /* little-endian bytes 01 00 | 00 02 | 00 00 */
    oi_npy_array_free(&a);
    CHECK(a.data == NULL);

    /* a scalar: shape () holds one element */
    const double pi = 3.25;
    len = make_file(file, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &pi, 8);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    CHECK_EQ_INT(a.ndim, 0);
    CHECK_EQ_INT(a.count, 1);
    CHECK(a.data && *(const double *)a.data == 3.25);
    oi_npy_array_free(&a);

    /* an empty array still gets a non-NULL data pointer */
    len = make_file(file, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4, 0), }", NULL, 0);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    CHECK(a.count == 0 && a.data != NULL && a.dtype == OI_NPY_BOOL);
    oi_npy_array_free(&a);
}

static void test_layouts(void) {
    oi_npy_array a;
    oi_npy_error err;
    /* big-endian u32: 0x01020304 and 0xA0B0C0D0 */
    const uint8_t be[8] = {1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0};
    size_t len = make_file(file, 1, "{'descr': '>u4', 'fortran_order': False, 'shape': (2,), }", be, 8);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    const uint32_t *u = (const uint32_t *)a.data;
    CHECK(u && u[0] == 0x01020304u && u[1] == 0xA0B0C0D0u);
    oi_npy_array_free(&a);

    /* Fortran order, shape (2, 3): the file holds columns [0 3] [1 4] [2 5]
     * of the C-order matrix 0 1 2 / 3 4 5 */
    const uint8_t cols[6] = {0, 3, 1, 4, 2, 5};
    len = make_file(file, 1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", cols, 6);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    const uint8_t *c = (const uint8_t *)a.data;
    for (int i = 0; c && i < 6; i++)
        CHECK_EQ_INT(c[i], i);
    oi_npy_array_free(&a);

    /* Fortran order in three dimensions (2, 2, 2): element (i, j, k) at i + 2j + 4k */
    uint8_t f3[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++)
                f3[i + 2 * j + 4 * k] = (uint8_t)(100 * i + 10 * j + k);
    len = make_file(file, 1, "{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2, 2), }", f3, 8);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    const int8_t *c3 = (const int8_t *)a.data;
    const int8_t want3[8] = {0, 1, 10, 11, 100, 101, 110, 111};
    for (int i = 0; c3 && i < 8; i++)
        CHECK_EQ_INT(c3[i], want3[i]);
    oi_npy_array_free(&a);

    /* bools other than 0/1 read as 1 */
    const uint8_t bools[3] = {0, 2, 255};
    len = make_file(file, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bools, 3);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    const uint8_t *b = (const uint8_t *)a.data;
    CHECK(b && b[0] == 0 && b[1] == 1 && b[2] == 1);
    oi_npy_array_free(&a);

    /* versions 2 and 3 carry a 4-byte header length; Python 2 longs in v2 */
    const uint8_t two[2] = {7, 9};
    len = make_file(file, 2, "{'descr': '|u1', 'fortran_order': False, 'shape': (2L,), }", two, 2);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    CHECK(a.count == 2 && ((const uint8_t *)a.data)[1] == 9);
    oi_npy_array_free(&a);
    len = make_file(file, 3, "{'descr': '|u1', 'fortran_order': False, 'shape': (2L,), }", two, 2);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_ERROR_FORMAT); /* no Python 2 in version 3 */
    CHECK_STR_CONTAINS(err.message, "expected ',' or ')'");
}

static void test_refusals(void) {
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, OI_NPY_ERROR_FORMAT,
                   "unknown key 'x'");
    expect_refusal("{'descr': '<f4', 'shape': (2,)}", 8, OI_NPY_ERROR_FORMAT, "missing key 'fortran_order'");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}", 8, OI_NPY_ERROR_FORMAT,
                   "'shape' appears twice");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8, OI_NPY_ERROR_FORMAT, "not a tuple");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 8, OI_NPY_ERROR_FORMAT,
                   "expected ',' or ')'");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", 8, OI_NPY_ERROR_FORMAT,
                   "leading zero");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 8, OI_NPY_ERROR_FORMAT, "negative");
    expect_refusal("{'descr': '<f4', 'fortran_order': 1, 'shape': (2,)}", 8, OI_NPY_ERROR_FORMAT, "True or False");
    expect_refusal("{'descr': <f4, 'fortran_order': False, 'shape': (2,)}", 8, OI_NPY_ERROR_FORMAT,
                   "quoted string");
    expect_refusal("{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}", 8, OI_NPY_ERROR_FORMAT,
                   "without escapes");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, OI_NPY_ERROR_FORMAT,
                   "expected ',' or '}' after 'shape'");
    expect_refusal("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8, OI_NPY_ERROR_FORMAT,
                   "expected ',' or '}'");
    expect_refusal("('descr', '<f4')", 8, OI_NPY_ERROR_FORMAT, "not a dict");
    expect_refusal("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8, OI_NPY_ERROR_UNSUPPORTED,
                   "structured");
    expect_refusal("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", 8, OI_NPY_ERROR_UNSUPPORTED, "complex");
    expect_refusal("{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}", 16, OI_NPY_ERROR_UNSUPPORTED,
                   "long double");
    expect_refusal("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", 8, OI_NPY_ERROR_UNSUPPORTED, "object");
    expect_refusal("{'descr': '<M8[s]', 'fortran_order': False, 'shape': (1,)}", 8, OI_NPY_ERROR_UNSUPPORTED,
                   "datetime");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 8, OI_NPY_ERROR_FORMAT, "truncated");
    expect_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 8, OI_NPY_ERROR_FORMAT,
                   "trailing bytes");
    expect_refusal("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2)}", 8,
                   OI_NPY_ERROR_FORMAT, "64 bits");
    char many[1024] = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
    for (int i = 0; i <= OI_NPY_MAX_DIMS; i++)
        strcat(many, "1,");
    strcat(many, ")}");
    expect_refusal(many, 1, OI_NPY_ERROR_UNSUPPORTED, "more than 64 dimensions");

    oi_npy_array a;
    oi_npy_error err;
    CHECK_EQ_INT(oi_npy_load("\x93NUMPY\x01", 7, &a, &err), OI_NPY_ERROR_FORMAT);
    CHECK_STR_CONTAINS(err.message, "not a .npy file");
    const unsigned char v4[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 4, 0, 0, 0};
    CHECK_EQ_INT(oi_npy_load(v4, sizeof v4, &a, &err), OI_NPY_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(err.message, "version 4.0");
    const unsigned char huge[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0, 0x40}; /* 1 GiB header */
    CHECK_EQ_INT(oi_npy_load(huge, sizeof huge, &a, &err), OI_NPY_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(err.message, "at most");
    CHECK_EQ_INT(oi_npy_load(NULL, 4, &a, &err), OI_NPY_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(oi_npy_load(file, 0, &a, NULL), OI_NPY_ERROR_FORMAT); /* no error struct: still a status */
}

static void test_write_read(void) {
    const char *path = "build_test_npy.npy";
    const uint64_t shape[3] = {2, 3, 4};
    float data[24];
    for (int i = 0; i < 24; i++)
        data[i] = (float)i * 0.5f - 3.0f;
    oi_npy_error err;
    CHECK_EQ_INT(oi_npy_write(path, OI_NPY_F32, 3, shape, data, &err), OI_NPY_OK);
    oi_npy_array a;
    CHECK_EQ_INT(oi_npy_read(path, &a, &err), OI_NPY_OK);
    CHECK(a.dtype == OI_NPY_F32 && a.ndim == 3 && a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 4);
    CHECK(a.data && memcmp(a.data, data, sizeof data) == 0);
    oi_npy_array_free(&a);

    /* the header np.save writes for f32 (2, 3, 4), typed in from numpy 2's output */
    char header[256];
    const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }";
    size_t hlen = oi_npy_format_header(header, sizeof header, OI_NPY_F32, 3, shape);
    CHECK_EQ_INT(hlen, 128);
    CHECK(memcmp(header, "\x93NUMPY\x01\x00\x76\x00", 10) == 0); /* 118 bytes of dict + padding */
    CHECK(memcmp(header + 10, want, strlen(want)) == 0);
    CHECK_EQ_INT(header[127], '\n');
    CHECK_EQ_INT(oi_npy_format_header(header, 10, OI_NPY_F32, 3, shape), 128); /* too small: the size, no write */
    CHECK_EQ_INT(oi_npy_format_header(header, sizeof header, OI_NPY_INVALID, 1, shape), 0);

    CHECK_EQ_INT(oi_npy_write(path, OI_NPY_INVALID, 1, shape, data, &err), OI_NPY_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err.message, "invalid dtype");
    CHECK_EQ_INT(oi_npy_write(path, OI_NPY_F32, 1, shape, NULL, &err), OI_NPY_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err.message, "no data");
    CHECK_EQ_INT(oi_npy_write("/nonexistent-dir/x.npy", OI_NPY_F32, 1, shape, data, &err), OI_NPY_ERROR_IO);
    CHECK_STR_CONTAINS(err.message, "/nonexistent-dir/x.npy: cannot create");
    CHECK_EQ_INT(oi_npy_read("/nonexistent-dir/x.npy", &a, &err), OI_NPY_ERROR_IO);
    CHECK_STR_CONTAINS(err.message, "/nonexistent-dir/x.npy: cannot open");

    /* text in the header's padding is refused; a changed data byte is data */
    FILE *f = fopen(path, "r+b");
    if (f) {
        fseek(f, 120, SEEK_SET);
        fputc('Z', f);
        fclose(f);
    }
    CHECK_EQ_INT(oi_npy_read(path, &a, &err), OI_NPY_ERROR_FORMAT);
    CHECK_STR_CONTAINS(err.message, "build_test_npy.npy: header: unexpected text after the dict");
    f = fopen(path, "r+b");
    if (f) {
        fseek(f, 120, SEEK_SET);
        fputc(' ', f);
        fseek(f, 130, SEEK_SET);
        fputc('Z', f);
        fclose(f);
    }
    CHECK_EQ_INT(oi_npy_read(path, &a, &err), OI_NPY_OK);
    oi_npy_array_free(&a);
    f = fopen(path, "ab");
    if (f) {
        fputc(0, f);
        fclose(f);
    }
    CHECK_EQ_INT(oi_npy_read(path, &a, &err), OI_NPY_ERROR_FORMAT);
    CHECK_STR_CONTAINS(err.message, "build_test_npy.npy: trailing bytes");
    remove(path);
}

/* The library's copy allocates through oi_set_allocator's hooks. */
static void test_allocator_hooks(void) {
    hooks_install();
    long before = hooks_allocations(), live = hooks_live_blocks();
    const uint8_t two[2] = {7, 9};
    size_t len = make_file(file, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", two, 2);
    oi_npy_array a;
    oi_npy_error err;
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_OK);
    CHECK(hooks_allocations() > before);
    CHECK_EQ_INT(hooks_live_blocks(), live + 1);
    oi_npy_array_free(&a);
    CHECK_EQ_INT(hooks_live_blocks(), live);
    hooks_arm(1);
    CHECK_EQ_INT(oi_npy_load(file, len, &a, &err), OI_NPY_ERROR_OUT_OF_MEMORY);
    CHECK_STR_CONTAINS(err.message, "out of memory");
    hooks_arm(0);
    oi_set_allocator(NULL);
}

int main(void) {
    test_headers_numpy_writes();
    test_layouts();
    test_refusals();
    test_write_read();
    test_allocator_hooks();
    return check_result("test_npy");
}
