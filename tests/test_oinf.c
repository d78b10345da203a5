/* test_oinf.c - the .oinf reader and writer.
 *
 * Expected values never come from the code under test: byte layouts are
 * worked out by hand from the format (docs/oinf.md), facts about the
 * conformance files come from their README and .json listings, and every
 * conformance file must come out of our writer byte for byte as the
 * original encoder wrote it. Corrupt files are made one defect at a time
 * and must fail with OI_ERROR_FORMAT and a message naming the defect. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- helpers ---- */
static const char *conformance_dir(void) {
    const char *env = getenv("OI_CONFORMANCE_DIR");
    return env ? env : "../shared/conformance/openinfer";
}

static uint8_t *read_whole_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = (uint8_t *)malloc(len > 0 ? (size_t)len : 1);
    if (bytes && fread(bytes, 1, (size_t)len, f) != (size_t)len) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *size = (size_t)len;
    return bytes;
}

static uint8_t *read_conformance(const char *rel, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", conformance_dir(), rel);
    uint8_t *bytes = read_whole_file(path, size);
    CHECK_MSG(bytes != NULL, "cannot read %s", path);
    return bytes;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static float f32_at(const void *data, size_t i) {
    float v;
    memcpy(&v, (const uint8_t *)data + 4 * i, 4);
    return v;
}

static bool bytes_equal(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* Writes w (version) to memory; the caller frees with oi_free. */
static uint8_t *write_to_memory(oi_writer *w, uint32_t version, size_t *size) {
    uint8_t *bytes = NULL;
    CHECK_OK(oi_writer_to_memory(w, version, &bytes, size));
    return bytes;
}

/* Opens a copy of bytes[0..size) patched by nothing, expecting a format
 * error whose message names "bad.oinf" and contains `part`. The copy has
 * exactly `size` bytes so a sanitizer sees any read past the end. */
static void expect_format_error_at(const uint8_t *bytes, size_t size, const char *part, int line) {
    uint8_t *copy = (uint8_t *)malloc(size ? size : 1);
    memcpy(copy, bytes, size);
    oi_model *m = (oi_model *)1;
    oi_status s = oi__model_open_bytes(copy, size, "bad.oinf", &m);
    CHECK_MSG(s == OI_ERROR_FORMAT && m == NULL, "line %d: got %s: %s", line, oi_status_name(s), oi_last_error());
    CHECK_MSG(strstr(oi_last_error(), "bad.oinf: ") == oi_last_error(), "line %d: message does not start with the file: %s",
              line, oi_last_error());
    CHECK_MSG(strstr(oi_last_error(), part) != NULL, "line %d: \"%s\" does not contain \"%s\"", line, oi_last_error(), part);
    if (s == OI_OK)
        oi_model_close(m);
    free(copy);
}
#define EXPECT_FORMAT_ERROR(bytes, size, part) expect_format_error_at((bytes), (size), (part), __LINE__)

/* ---- the worked example of the format description (216 bytes) ---- */
static void fill_worked_example(uint8_t want[216]) {
    static const uint8_t header[] = {
        'O', 'I', 'N', 'F', 0,   /* magic                     */
        2, 0, 0, 0,              /* 5: version 2              */
        0, 0, 0, 0,              /* 9: flags                  */
        1, 0, 0, 0,              /* 13: one size variable     */
        0, 0, 0, 0,              /* 17: no metadata           */
        1, 0, 0, 0,              /* 21: one tensor            */
        0, 0, 0, 0,              /* 25: reserved              */
        72, 0, 0, 0, 0, 0, 0, 0, /* 29: offset_sizevars       */
        88, 0, 0, 0, 0, 0, 0, 0, /* 37: offset_metadata       */
        88, 0, 0, 0, 0, 0, 0, 0, /* 45: offset_tensors        */
        152, 0, 0, 0, 0, 0, 0, 0, /* 53: offset_data         */
        216, 0, 0, 0, 0, 0, 0, 0, /* 61: file_size           */
        0, 0, 0,                  /* 69: pad to 72            */
    };
    static const uint8_t sizevars[] = {1, 0, 0, 0, 'D', 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t tensor[] = {
        4, 0, 0, 0, 'z', 'e', 'r', 'o', /* 88: name                */
        10, 0, 0, 0,                    /* 96: dtype f32           */
        1, 0, 0, 0,                     /* 100: ndim               */
        1, 0, 0, 0,                     /* 104: HAS_DATA           */
        16, 0, 0, 0, 0, 0, 0, 0,        /* 108: dims[0]            */
        64, 0, 0, 0, 0, 0, 0, 0,        /* 116: data_nbytes        */
        152, 0, 0, 0, 0, 0, 0, 0,       /* 124: data_offset        */
        0, 0, 0, 0, 0, 0, 0, 0,         /* 132: quant_nbytes       */
        0, 0, 0, 0, 0, 0, 0, 0,         /* 140: quant_offset       */
    };
    memset(want, 0, 216); /* including 16 x f32 0.0 at 152 */
    CHECK_EQ_INT(sizeof header, 72);
    memcpy(want, header, sizeof header);
    memcpy(want + 72, sizevars, sizeof sizevars);
    memcpy(want + 88, tensor, sizeof tensor);
}

static void test_worked_example(void) {
    uint8_t want[216];
    fill_worked_example(want);
    float zeros[16] = {0};
    uint64_t dims[1] = {16};
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "D", 16));
    CHECK_OK(oi_writer_add_tensor(w, "zero", OI_DTYPE_F32, 1, dims, zeros, NULL));
    size_t size = 0;
    uint8_t *bytes = write_to_memory(w, 2, &size);
    CHECK_EQ_INT(size, 216);
    CHECK(bytes && size == 216 && bytes_equal(bytes, want, 216));
    for (size_t i = 0; bytes && i < size && i < 216; i++)
        CHECK_MSG(bytes[i] == want[i], "byte %zu: 0x%02x, want 0x%02x", i, bytes[i], want[i]);

    /* the original encoder's file is the same bytes */
    size_t file_size = 0;
    uint8_t *file = read_conformance("v2-models/kv_cache_decode.oinf", &file_size);
    CHECK_EQ_INT(file_size, 216);
    CHECK(file && file_size == 216 && bytes_equal(file, want, 216));
    free(file);
    oi_free(bytes);
    oi_writer_free(w);
}

/* ---- conformance files ---- */
/* numpy dtype names of the .json listings -> ours */
static oi_dtype dtype_from_listing(const char *name) {
    static const char *const pairs[][2] = {
        {"float32", "f32"}, {"float16", "f16"}, {"float64", "f64"}, {"int8", "i8"},   {"int16", "i16"},
        {"int32", "i32"},   {"int64", "i64"},   {"uint8", "u8"},    {"uint16", "u16"}, {"uint32", "u32"},
        {"uint64", "u64"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (strcmp(name, pairs[i][0]) == 0)
            return oi_dtype_from_name(pairs[i][1]);
    return oi_dtype_from_name(name);
}

/* Every tensor of the .json listing is in the model with that dtype and shape. */
static void check_listing(const oi_model *m, const char *json_path) {
    size_t len = 0;
    uint8_t *text = read_whole_file(json_path, &len);
    if (!text)
        return; /* not every .oinf has a listing */
    oi__json *doc = oi__json_parse((const char *)text, len);
    CHECK_MSG(doc != NULL, "%s: %s", json_path, oi_last_error());
    const oi__json *tensors = doc ? oi__json_get(doc, "tensors") : NULL;
    CHECK_MSG(tensors && tensors->type == OI__JSON_ARRAY, "%s has no tensors array", json_path);
    if (tensors && tensors->type == OI__JSON_ARRAY) {
        CHECK_EQ_INT(arrlen(tensors->items), oi_model_tensor_count(m));
        for (ptrdiff_t i = 0; i < arrlen(tensors->items); i++) {
            const oi__json *entry = &tensors->items[i];
            const oi__json *name = oi__json_get(entry, "name");
            const oi__json *dtype = oi__json_get(entry, "dtype");
            const oi__json *shape = oi__json_get(entry, "shape");
            if (!name || !dtype || !shape)
                continue;
            const oi_tensor_info *t = oi_model_find_tensor(m, name->text);
            CHECK_MSG(t != NULL, "%s: tensor %s missing", json_path, name->text);
            if (!t)
                continue;
            CHECK_MSG(t->dtype == dtype_from_listing(dtype->text), "%s: %s is %s, listing says %s", json_path,
                      name->text, oi_dtype_name(t->dtype), dtype->text);
            CHECK_EQ_INT(t->ndim, arrlen(shape->items));
            for (ptrdiff_t d = 0; d < arrlen(shape->items) && (uint32_t)d < t->ndim; d++)
                CHECK_EQ_INT(t->dims[d], (long long)shape->items[d].number);
            CHECK(t->has_data);
        }
    }
    oi__json_free(doc);
    free(text);
}

/* Opens one conformance file from disk; checks its version, touches every
 * payload, rewrites it with our writer and compares the bytes. */
static int check_conformance_file(const char *path, uint32_t version) {
    oi_model *m = NULL;
    oi_status s = oi__model_open_file(path, &m);
    CHECK_MSG(s == OI_OK, "%s: %s", path, oi_last_error());
    if (s != OI_OK)
        return 0;
    CHECK_EQ_INT(oi_model_version(m), version);
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 0);
    oi_writer *w = oi_writer_new();
    size_t with_data = 0;
    for (size_t i = 0; i < oi_model_sizevar_count(m); i++) {
        const char *name = NULL;
        uint64_t value = 0;
        CHECK_OK(oi_model_sizevar_at(m, i, &name, &value));
        CHECK_OK(oi_writer_add_sizevar(w, name, value));
    }
    for (size_t i = 0; i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        const void *data = NULL;
        if (t->has_data) {
            CHECK_OK(oi_model_tensor_data(m, t, &data));
            with_data++;
        }
        CHECK_OK(oi_writer_add_tensor(w, t->name, t->dtype, t->ndim, t->dims, data, t->has_quant ? &t->quant : NULL));
    }
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), with_data);
    size_t size = 0, file_size = 0;
    uint8_t *bytes = write_to_memory(w, version, &size);
    uint8_t *file = read_whole_file(path, &file_size);
    CHECK_MSG(bytes && file && size == file_size && bytes_equal(bytes, file, size),
              "%s: our writer does not reproduce the file (%zu vs %zu bytes)", path, size, file_size);
    free(file);
    oi_free(bytes);
    oi_writer_free(w);

    char json_path[1024];
    size_t n = strlen(path);
    if (n > 5 && n < sizeof json_path) {
        snprintf(json_path, sizeof json_path, "%.*s.json", (int)(n - 5), path);
        check_listing(m, json_path);
    }
    oi_model_close(m);
    return 1;
}

static int check_conformance_dir(const char *rel, uint32_t version) {
    char dir_path[1024];
    snprintf(dir_path, sizeof dir_path, "%s/%s", conformance_dir(), rel);
    DIR *dir = opendir(dir_path);
    CHECK_MSG(dir != NULL, "cannot open %s", dir_path);
    if (!dir)
        return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".oinf") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        count += check_conformance_file(path, version);
    }
    closedir(dir);
    return count;
}

static void test_conformance_files(void) {
    CHECK_EQ_INT(check_conformance_dir("v1/ops", 1), 12);
    CHECK_EQ_INT(check_conformance_dir("v1/ops/full_matrix", 1), 47);
    CHECK_EQ_INT(check_conformance_dir("v1/graph", 1), 2);
    CHECK_EQ_INT(check_conformance_dir("v2-models", 2), 9);
}

static oi_model *open_conformance(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", conformance_dir(), rel);
    oi_model *m = oi_model_open(path);
    CHECK_MSG(m != NULL, "%s: %s", path, oi_last_error());
    return m;
}

static const void *tensor_bytes(const oi_model *m, const char *name, oi_dtype dtype, uint64_t numel) {
    const oi_tensor_info *t = oi_model_find_tensor(m, name);
    CHECK_MSG(t != NULL, "no tensor %s", name);
    if (!t)
        return NULL;
    CHECK_EQ_INT(t->dtype, dtype);
    CHECK_EQ_INT(t->numel, numel);
    const void *data = NULL;
    CHECK_OK(oi_model_tensor_data(m, t, &data));
    return data;
}

static void test_conformance_facts(void) {
    /* kv_cache_decode.oinf: 216 bytes, D = 16, zero f32[16] of zeros */
    oi_model *m = open_conformance("v2-models/kv_cache_decode.oinf");
    if (m) {
        uint64_t d = 0;
        CHECK_OK(oi_model_size_of(m, "D", &d));
        CHECK_EQ_INT(d, 16);
        CHECK_STATUS(oi_model_size_of(m, "B", &d), OI_ERROR_NOT_FOUND);
        CHECK_EQ_INT(oi_model_tensor_count(m), 1);
        CHECK_EQ_INT(oi_model_metadata_count(m), 0);
        const oi_tensor_info *t = oi_model_find_tensor(m, "zero");
        CHECK(t && t->ndim == 1 && t->dims[0] == 16 && t->data_nbytes == 64 && t->data_offset == 152 && !t->has_quant);
        const void *data = tensor_bytes(m, "zero", OI_DTYPE_F32, 16);
        for (size_t i = 0; data && i < 16; i++)
            CHECK(f32_at(data, i) == 0.0f);
        oi_model_close(m);
    }

    /* accumulation_demo.oinf: B=4 D=8 H=6, x f32[4,8], w f32[8,6], sum_axis_out */
    m = open_conformance("v2-models/accumulation_demo.oinf");
    if (m) {
        uint64_t v = 0;
        CHECK(oi_model_size_of(m, "B", &v) == OI_OK && v == 4);
        CHECK(oi_model_size_of(m, "D", &v) == OI_OK && v == 8);
        CHECK(oi_model_size_of(m, "H", &v) == OI_OK && v == 6);
        const oi_tensor_info *x = oi_model_find_tensor(m, "x"), *w = oi_model_find_tensor(m, "w");
        CHECK(x && x->dtype == OI_DTYPE_F32 && x->ndim == 2 && x->dims[0] == 4 && x->dims[1] == 8);
        CHECK(w && w->dtype == OI_DTYPE_F32 && w->ndim == 2 && w->dims[0] == 8 && w->dims[1] == 6);
        const void *sum = tensor_bytes(m, "sum_axis_out", OI_DTYPE_F32, 4);
        static const double want[4] = {-0.086446, -0.014933, -0.098967, -0.169149};
        for (size_t i = 0; sum && i < 4; i++)
            CHECK_NEAR(f32_at(sum, i), want[i], 1e-6);
        oi_model_close(m);
    }

    /* ops_cast.oinf (v1): inputs and the numpy-wrapped u8 expectation */
    m = open_conformance("v1/ops/ops_cast.oinf");
    if (m) {
        const void *f = tensor_bytes(m, "cast_f32", OI_DTYPE_F32, 6);
        static const float want_f[6] = {-5.0f, 0.0f, 3.2f, 127.0f, 200.0f, 250.0f};
        for (size_t i = 0; f && i < 6; i++)
            CHECK(f32_at(f, i) == want_f[i]);
        const uint8_t *u = (const uint8_t *)tensor_bytes(m, "cast_f32_to_u8", OI_DTYPE_U8, 6);
        static const uint8_t want_u[6] = {251, 0, 3, 127, 200, 250};
        CHECK(u && bytes_equal(u, want_u, 6));
        const uint8_t *i32 = (const uint8_t *)tensor_bytes(m, "cast_i32", OI_DTYPE_I32, 6);
        static const int32_t want_i[6] = {-3, 0, 5, 11, -8, 42};
        for (size_t i = 0; i32 && i < 6; i++)
            CHECK_EQ_INT((int32_t)get32(i32 + 4 * i), want_i[i]);
        oi_model_close(m);
    }

    /* ops_bitwise.oinf (v1, u8) */
    m = open_conformance("v1/ops/ops_bitwise.oinf");
    if (m) {
        static const uint8_t a[6] = {77, 38, 247, 184, 250, 30}, x[6] = {249, 14, 85, 88, 49, 69};
        const void *pa = tensor_bytes(m, "bit_a", OI_DTYPE_U8, 6), *px = tensor_bytes(m, "xor_out", OI_DTYPE_U8, 6);
        CHECK(pa && bytes_equal(pa, a, 6));
        CHECK(px && bytes_equal(px, x, 6));
        oi_model_close(m);
    }

    /* ops_packed.oinf (v1): i4 [[-8,-3,0,7],[6,-1,-7,3]], u2 [[0,1,2,3],[3,2,1,0]],
     * decoded here nibble by nibble (LSB first) */
    m = open_conformance("v1/ops/ops_packed.oinf");
    if (m) {
        const uint8_t *i4 = (const uint8_t *)tensor_bytes(m, "packed_i4_x", OI_DTYPE_I4, 8);
        static const int want_i4[8] = {-8, -3, 0, 7, 6, -1, -7, 3};
        for (int i = 0; i4 && i < 8; i++) {
            int nibble = (i4[i / 2] >> (4 * (i % 2))) & 0xF;
            CHECK_EQ_INT(nibble >= 8 ? nibble - 16 : nibble, want_i4[i]);
        }
        const uint8_t *u2 = (const uint8_t *)tensor_bytes(m, "packed_u2_x", OI_DTYPE_U2, 8);
        static const int want_u2[8] = {0, 1, 2, 3, 3, 2, 1, 0};
        for (int i = 0; u2 && i < 8; i++)
            CHECK_EQ_INT((u2[i / 4] >> (2 * (i % 4))) & 3, want_u2[i]);
        CHECK(oi_model_tensor_at(m, 0)->data_nbytes == 16); /* i64[2,1] argmax out */
        oi_model_close(m);
    }
}

/* ---- lazy loading ---- */
static void test_lazy_loading(void) {
    oi_model *m = open_conformance("v2-models/accumulation_demo.oinf");
    if (!m)
        return;
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 0);
    const oi_tensor_info *x = oi_model_find_tensor(m, "x");
    const void *a = NULL, *b = NULL;
    CHECK_OK(oi_model_tensor_data(m, x, &a));
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 1);
    CHECK_OK(oi_model_tensor_data(m, x, &b)); /* cached: same bytes, same count */
    CHECK(a == b && a != NULL);
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 1);
    CHECK_OK(oi_model_tensor_data(m, oi_model_find_tensor(m, "w"), &b));
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 2);
    /* a tensor of another model is refused */
    oi_model *other = open_conformance("v2-models/kv_cache_decode.oinf");
    if (other) {
        CHECK_STATUS(oi_model_tensor_data(m, oi_model_tensor_at(other, 0), &b), OI_ERROR_INVALID_ARGUMENT);
        oi_model_close(other);
    }
    CHECK(oi_model_find_tensor(m, "nope") == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "nope");
    CHECK(oi_model_tensor_at(m, 99) == NULL);
    oi_model_close(m);
}

/* ---- metadata of every kind, round trip ---- */
typedef struct scalar_case {
    const char *key;
    oi_dtype type;
    uint8_t in[8];      /* the value handed to the writer */
    uint8_t stored[8];  /* the payload we expect in the file */
    size_t nbytes;
} scalar_case;

static const scalar_case scalar_cases[] = {
    {"s.i8", OI_DTYPE_I8, {0xFB}, {0xFB}, 1}, /* -5 */
    {"s.i16", OI_DTYPE_I16, {0xFE, 0xFF}, {0xFE, 0xFF}, 2},
    {"s.i32", OI_DTYPE_I32, {4, 3, 2, 1}, {4, 3, 2, 1}, 4},
    {"s.i64", OI_DTYPE_I64, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 8},
    {"s.u8", OI_DTYPE_U8, {200}, {200}, 1},
    {"s.u16", OI_DTYPE_U16, {0xFF, 0xFF}, {0xFF, 0xFF}, 2},
    {"s.u32", OI_DTYPE_U32, {0x00, 0x28, 0x6B, 0xEE}, {0x00, 0x28, 0x6B, 0xEE}, 4}, /* 4e9 */
    {"s.u64", OI_DTYPE_U64, {8, 7, 6, 5, 4, 3, 2, 1}, {8, 7, 6, 5, 4, 3, 2, 1}, 8},
    {"s.f16", OI_DTYPE_F16, {0x00, 0x3C}, {0x00, 0x3C}, 2},                         /* 1.0 */
    {"s.f32", OI_DTYPE_F32, {0x00, 0x00, 0xC0, 0x3F}, {0x00, 0x00, 0xC0, 0x3F}, 4}, /* 1.5 */
    {"s.f64", OI_DTYPE_F64, {0, 0, 0, 0, 0, 0, 0x04, 0x40}, {0, 0, 0, 0, 0, 0, 0x04, 0x40}, 8}, /* 2.5 */
    {"s.bool", OI_DTYPE_BOOL, {7}, {1}, 1}, /* canonical 0/1 */
    {"s.bf16", OI_DTYPE_BF16, {0xC0, 0x3F}, {0xC0, 0x3F}, 2}, /* 1.5 */
    {"s.f8", OI_DTYPE_F8, {0x3E}, {0x3E}, 1},                 /* 1.5 in E5M2 */
    {"s.i4", OI_DTYPE_I4, {0xF9}, {0x09}, 1},                 /* -7: only the low nibble stays */
    {"s.i2", OI_DTYPE_I2, {0x02}, {0x02}, 1},
    {"s.i1", OI_DTYPE_I1, {0x01}, {0x01}, 1},
    {"s.u4", OI_DTYPE_U4, {0x0F}, {0x0F}, 1},
    {"s.u2", OI_DTYPE_U2, {0xFF}, {0x03}, 1},
    {"s.u1", OI_DTYPE_U1, {0x01}, {0x01}, 1},
    {"s.t2", OI_DTYPE_T2, {0x03}, {0x03}, 1}, /* -1 */
    {"s.t1", OI_DTYPE_T1, {0x01}, {0x01}, 1}, /* +1 */
};

static void test_metadata_round_trip(void) {
    oi_writer *w = oi_writer_new();
    size_t n_scalars = sizeof scalar_cases / sizeof scalar_cases[0];
    for (size_t i = n_scalars; i-- > 0;) /* reverse: the writer sorts */
        CHECK_OK(oi_writer_add_metadata_scalar(w, scalar_cases[i].key, scalar_cases[i].type, scalar_cases[i].in));
    CHECK_OK(oi_writer_add_metadata_string(w, "name", "tiny-model", 10));
    CHECK_OK(oi_writer_add_metadata_string(w, "empty", NULL, 0));
    const uint8_t mask_bits[2] = {0xA5, 0xFF};
    CHECK_OK(oi_writer_add_metadata_bitset(w, "mask", mask_bits, 10));
    const float arr[6] = {1, 2, 3, 4, 5, 6};
    const uint64_t arr_dims[2] = {2, 3};
    CHECK_OK(oi_writer_add_metadata_ndarray(w, "arr", OI_DTYPE_F32, 2, arr_dims, arr));
    const uint8_t packed[2] = {0xE1, 0x07}; /* i4 {1, -2, 7} */
    const uint64_t packed_dims[1] = {3};
    CHECK_OK(oi_writer_add_metadata_ndarray(w, "packed", OI_DTYPE_I4, 1, packed_dims, packed));
    const uint8_t scalar_u16[2] = {0x01, 0x02}; /* 513, ndim 0 */
    CHECK_OK(oi_writer_add_metadata_ndarray(w, "one", OI_DTYPE_U16, 0, NULL, scalar_u16));

    size_t size = 0;
    uint8_t *bytes = write_to_memory(w, 2, &size);
    oi_model *m = NULL;
    CHECK_OK(oi__model_open_bytes(bytes, size, "meta.oinf", &m));
    if (!m) {
        oi_free(bytes);
        oi_writer_free(w);
        return;
    }
    CHECK_EQ_INT(oi_model_metadata_count(m), n_scalars + 6);
    /* sorted by key: "arr" first, "s.u8" ... "s.u64" in strcmp order */
    CHECK(strcmp(oi_model_metadata_at(m, 0)->key, "arr") == 0);
    for (size_t i = 1; i < oi_model_metadata_count(m); i++)
        CHECK(strcmp(oi_model_metadata_at(m, i - 1)->key, oi_model_metadata_at(m, i)->key) < 0);
    for (size_t i = 0; i < n_scalars; i++) {
        const oi_metadata_info *info = oi_model_find_metadata(m, scalar_cases[i].key);
        CHECK_MSG(info != NULL, "%s missing", scalar_cases[i].key);
        if (!info)
            continue;
        CHECK_EQ_INT(info->type, scalar_cases[i].type);
        CHECK_EQ_INT(info->nbytes, scalar_cases[i].nbytes);
        CHECK_MSG(bytes_equal(info->payload, scalar_cases[i].stored, scalar_cases[i].nbytes), "%s payload",
                  scalar_cases[i].key);
        CHECK_EQ_INT(((uintptr_t)info->payload - (uintptr_t)bytes) % 8, 0);
    }

    const char *text = NULL;
    size_t len = 0;
    CHECK_OK(oi_model_metadata_string(m, "name", &text, &len));
    CHECK(len == 10 && text && memcmp(text, "tiny-model", 10) == 0);
    const oi_metadata_info *info = oi_model_find_metadata(m, "name");
    static const uint8_t name_blob[16] = {10, 0, 0, 0, 't', 'i', 'n', 'y', '-', 'm', 'o', 'd', 'e', 'l', 0, 0};
    CHECK(info && info->type == OI_DTYPE_STRING && info->nbytes == 16 && bytes_equal(info->payload, name_blob, 16));
    CHECK_OK(oi_model_metadata_string(m, "empty", &text, &len));
    CHECK_EQ_INT(len, 0);
    CHECK_EQ_INT(oi_model_find_metadata(m, "empty")->nbytes, 8);
    CHECK_STATUS(oi_model_metadata_string(m, "s.f32", &text, &len), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_model_metadata_string(m, "missing", &text, &len), OI_ERROR_NOT_FOUND);

    info = oi_model_find_metadata(m, "mask"); /* bits past bit_count cleared */
    static const uint8_t mask_blob[16] = {10, 0, 0, 0, 2, 0, 0, 0, 0xA5, 0x03, 0, 0, 0, 0, 0, 0};
    CHECK(info && info->type == OI_DTYPE_BITSET && info->nbytes == 16 && bytes_equal(info->payload, mask_blob, 16));

    info = oi_model_find_metadata(m, "arr");
    CHECK(info && info->type == OI_DTYPE_NDARRAY && info->nbytes == 48);
    if (info) {
        const uint8_t *p = (const uint8_t *)info->payload;
        CHECK(get32(p) == OI_DTYPE_F32 && get32(p + 4) == 2 && get64(p + 8) == 2 && get64(p + 16) == 3);
        CHECK(bytes_equal(p + 24, arr, 24));
    }
    info = oi_model_find_metadata(m, "packed");
    static const uint8_t packed_blob[24] = {18, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0xE1, 0x07};
    CHECK(info && info->nbytes == 24 && bytes_equal(info->payload, packed_blob, 24));
    info = oi_model_find_metadata(m, "one");
    static const uint8_t one_blob[16] = {6, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02};
    CHECK(info && info->nbytes == 16 && bytes_equal(info->payload, one_blob, 16));
    oi_model_close(m);
    oi_free(bytes);
    oi_writer_free(w);
}

/* ---- a hand-computed layout with metadata, quant and a declared tensor ----
 * header 72 | sizevars K, N: 72..104 | metadata a: 104..136 |
 * tensors q 136..196, r 196..256, u 256..324 -> offset_data 328 |
 * a @328 (1 B) | q data @336 (2 B), q quant @344 (56 B) | r data @400 (1 B),
 * r quant @408 (56 B) | file_size 464. Each tensor's quant blob sits right
 * after its data and the offsets say so (not the original's interleaving). */
static oi_writer *layout_writer(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "N", 3));
    CHECK_OK(oi_writer_add_sizevar(w, "K", 2));
    const uint8_t seven = 7;
    CHECK_OK(oi_writer_add_metadata_scalar(w, "a", OI_DTYPE_U8, &seven));
    const int8_t r_data[1] = {5}, q_data[2] = {1, -1};
    const uint64_t r_dims[1] = {1}, q_dims[1] = {2}, u_dims[2] = {2, 3};
    const float r_scale[1] = {2.0f}, q_scale[1] = {0.5f};
    const int32_t q_zp[1] = {3};
    oi_quant rq = {OI_QUANT_SYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_NONE, 0, 1, 0, 0, r_scale, NULL};
    oi_quant qq = {OI_QUANT_ASYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_PER_TENSOR, 0, 1, 0, 1, q_scale, q_zp};
    CHECK_OK(oi_writer_add_tensor(w, "r", OI_DTYPE_I8, 1, r_dims, r_data, &rq));
    CHECK_OK(oi_writer_add_tensor(w, "q", OI_DTYPE_I8, 1, q_dims, q_data, &qq));
    CHECK_OK(oi_writer_add_tensor(w, "u", OI_DTYPE_F32, 2, u_dims, NULL, NULL));
    return w;
}

static void test_layout_and_quant(void) {
    oi_writer *w = layout_writer();
    size_t size = 0;
    uint8_t *b = write_to_memory(w, 2, &size);
    CHECK_EQ_INT(size, 464);
    if (!b || size != 464) {
        oi_free(b);
        oi_writer_free(w);
        return;
    }
    CHECK(get32(b + 13) == 2 && get32(b + 17) == 1 && get32(b + 21) == 3);
    CHECK(get64(b + 29) == 72 && get64(b + 37) == 104 && get64(b + 45) == 136 && get64(b + 53) == 328 &&
          get64(b + 61) == 464);
    /* sizevars sorted: K then N */
    CHECK(get32(b + 72) == 1 && b[76] == 'K' && get64(b + 80) == 2 && b[92] == 'N' && get64(b + 96) == 3);
    /* metadata a: u8, flags 0, 1 byte at 328 */
    CHECK(b[108] == 'a' && get32(b + 112) == OI_DTYPE_U8 && get32(b + 116) == 0 && get64(b + 120) == 1 &&
          get64(b + 128) == 328 && b[328] == 7);
    /* q: i8[2], HAS_DATA|HAS_QUANT, data @336, quant 56 B @344 */
    CHECK(b[140] == 'q' && get32(b + 144) == OI_DTYPE_I8 && get32(b + 148) == 1 && get32(b + 152) == 3);
    CHECK(get64(b + 156) == 2 && get64(b + 164) == 2 && get64(b + 172) == 336 && get64(b + 180) == 56 &&
          get64(b + 188) == 344);
    CHECK(b[336] == 1 && b[337] == 0xFF);
    static const uint8_t q_quant[56] = {2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, /* asym, pt, pt  */
                                        0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, /* axis 0 count 1 */
                                        0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, /* zp axis 0 count 1 */
                                        0, 0, 0, 0x3F, 3, 0, 0, 0};                      /* 0.5f, 3 */
    CHECK(bytes_equal(b + 344, q_quant, 56));
    /* r: i8[1], data @400, quant @408 */
    CHECK(b[200] == 'r' && get32(b + 212) == 3 && get64(b + 224) == 1 && get64(b + 232) == 400 &&
          get64(b + 240) == 56 && get64(b + 248) == 408 && b[400] == 5);
    static const uint8_t r_quant[56] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0, 0, 0, 0x40, 0, 0, 0, 0}; /* 2.0f, pad */
    CHECK(bytes_equal(b + 408, r_quant, 56));
    /* u: f32[2,3], no data, no quant: all four fields 0 */
    CHECK(b[260] == 'u' && get32(b + 264) == OI_DTYPE_F32 && get32(b + 268) == 2 && get32(b + 272) == 0 &&
          get64(b + 276) == 2 && get64(b + 284) == 3);
    for (int i = 0; i < 4; i++)
        CHECK(get64(b + 292 + 8 * i) == 0);

    oi_model *m = oi_model_open_memory(b, size);
    CHECK_MSG(m != NULL, "%s", oi_last_error());
    if (m) {
        const oi_tensor_info *q = oi_model_find_tensor(m, "q"), *r = oi_model_find_tensor(m, "r"),
                             *u = oi_model_find_tensor(m, "u");
        CHECK(q && q->has_quant && q->quant.scheme == OI_QUANT_ASYMMETRIC && q->quant.scale_mode == OI_QUANT_PER_TENSOR &&
              q->quant.zp_mode == OI_QUANT_PER_TENSOR && q->quant.scale_count == 1 && q->quant.scales[0] == 0.5f &&
              q->quant.zp_count == 1 && q->quant.zero_points[0] == 3);
        CHECK(r && r->has_quant && r->quant.scheme == OI_QUANT_SYMMETRIC && r->quant.zp_mode == OI_QUANT_NONE &&
              r->quant.scales[0] == 2.0f && r->quant.zero_points == NULL);
        CHECK(u && !u->has_data && !u->has_quant && u->numel == 6 && u->data_nbytes == 0 && u->data_offset == 0);
        const void *data = NULL;
        CHECK_STATUS(oi_model_tensor_data(m, u, &data), OI_ERROR_NOT_FOUND);
        CHECK(data == NULL);
        CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 0);
        uint64_t k = 0;
        CHECK(oi_model_size_of(m, "K", &k) == OI_OK && k == 2);
        const char *name = NULL;
        CHECK(oi_model_sizevar_at(m, 1, &name, &k) == OI_OK && strcmp(name, "N") == 0 && k == 3);
        CHECK_STATUS(oi_model_sizevar_at(m, 2, &name, &k), OI_ERROR_INVALID_ARGUMENT);
        oi_model_close(m);
    }

    /* version 1 cannot carry quant */
    uint8_t *v1 = NULL;
    size_t v1_size = 0;
    CHECK_STATUS(oi_writer_to_memory(w, 1, &v1, &v1_size), OI_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(oi_last_error(), "version 1");
    CHECK_STATUS(oi_writer_to_memory(w, 3, &v1, &v1_size), OI_ERROR_INVALID_ARGUMENT);
    oi_free(b);
    oi_writer_free(w);
}

/* Per-channel quant round trip, and v1 writing without quant. */
static void test_per_channel_and_v1(void) {
    oi_writer *w = oi_writer_new();
    const int8_t data[6] = {1, 2, 3, -1, -2, -3};
    const uint64_t dims[2] = {2, 3};
    const float scales[3] = {0.1f, 0.2f, 0.3f};
    const int32_t zps[3] = {0, 1, -1};
    oi_quant pc = {OI_QUANT_ASYMMETRIC, OI_QUANT_PER_CHANNEL, OI_QUANT_PER_CHANNEL, 1, 3, 1, 3, scales, zps};
    CHECK_OK(oi_writer_add_tensor(w, "w", OI_DTYPE_I8, 2, dims, data, &pc));
    size_t size = 0;
    uint8_t *b = write_to_memory(w, 2, &size);
    /* entry: name 8 + 12 + dims 16 + 32 = 68 -> data @144 (6 B -> 8), quant @152: 48 + 12 + 12 = 72 */
    CHECK_EQ_INT(size, 224);
    oi_model *m = b ? oi_model_open_memory(b, size) : NULL;
    CHECK(m != NULL);
    if (m) {
        const oi_tensor_info *t = oi_model_find_tensor(m, "w");
        CHECK(t && t->has_quant && t->quant.scale_mode == OI_QUANT_PER_CHANNEL && t->quant.scale_axis == 1 &&
              t->quant.scale_count == 3 && t->quant.zp_axis == 1 && t->quant.zp_count == 3);
        for (int i = 0; t && i < 3; i++) {
            CHECK(t->quant.scales[i] == scales[i]);
            CHECK(t->quant.zero_points[i] == zps[i]);
        }
        CHECK(t && t->data_offset == 144);
        oi_model_close(m);
    }
    oi_free(b);
    oi_writer_free(w);

    /* v1: sizevar + f32[2] + declared i4[3]: entries have no quant fields */
    w = oi_writer_new();
    const float f[2] = {1.0f, -2.0f};
    const uint64_t two[1] = {2}, three[1] = {3};
    CHECK_OK(oi_writer_add_sizevar(w, "B", 2));
    CHECK_OK(oi_writer_add_tensor(w, "x", OI_DTYPE_F32, 1, two, f, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "p", OI_DTYPE_I4, 1, three, NULL, NULL));
    b = write_to_memory(w, 1, &size);
    /* 72 | B 72..88 | tensors 88: p 8+12+8+16 = 44 -> 132, x 44 -> 176 | data 176: x 8 B -> 184 */
    CHECK_EQ_INT(size, 184);
    if (b && size == 184) {
        CHECK(get32(b + 5) == 1 && get64(b + 53) == 176);
        CHECK(b[92] == 'p' && get32(b + 96) == OI_DTYPE_I4 && get32(b + 104) == 0 && get64(b + 116) == 0 &&
              get64(b + 124) == 0);
        CHECK(b[136] == 'x' && get64(b + 160) == 8 && get64(b + 168) == 176 && f32_at(b + 176, 1) == -2.0f);
        oi_model *v1 = oi_model_open_memory(b, size);
        CHECK(v1 && oi_model_version(v1) == 1 && oi_model_tensor_count(v1) == 2);
        oi_model_close(v1);
        /* HAS_QUANT is not a v1 flag */
        put32(b + 148, 3);
        EXPECT_FORMAT_ERROR(b, size, "tensor 'x': flags 0x3 (byte 148) has bits other than HAS_DATA (version 1)");
    }
    oi_free(b);
    oi_writer_free(w);
}

/* ---- writer argument checks ---- */
static void test_writer_rejects(void) {
    oi_writer *w = oi_writer_new();
    const uint64_t dims[2] = {2, 3};
    const float data[6] = {0};
    CHECK_STATUS(oi_writer_add_sizevar(w, "", 1), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_writer_add_sizevar(w, "bad name", 1), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "bad name");
    CHECK_STATUS(oi_writer_add_sizevar(w, NULL, 1), OI_ERROR_INVALID_ARGUMENT);
    CHECK_OK(oi_writer_add_sizevar(w, "B", 1));
    CHECK_STATUS(oi_writer_add_sizevar(w, "B", 2), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "already");
    CHECK_OK(oi_writer_add_tensor(w, "B", OI_DTYPE_F32, 2, dims, data, NULL)); /* tables are separate */
    CHECK_STATUS(oi_writer_add_tensor(w, "B", OI_DTYPE_F32, 2, dims, data, NULL), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_writer_add_tensor(w, "s", OI_DTYPE_STRING, 2, dims, data, NULL), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_writer_add_tensor(w, "bs", OI_DTYPE_BITSET, 2, dims, data, NULL), OI_ERROR_INVALID_ARGUMENT);
    const uint64_t huge[3] = {1ull << 32, 1ull << 32, 1ull << 32};
    CHECK_STATUS(oi_writer_add_tensor(w, "huge", OI_DTYPE_F32, 3, huge, NULL, NULL), OI_ERROR_INVALID_ARGUMENT);
    const uint64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_STATUS(oi_writer_add_tensor(w, "deep", OI_DTYPE_F32, 9, nine, NULL, NULL), OI_ERROR_INVALID_ARGUMENT);
    const uint8_t one = 1;
    CHECK_STATUS(oi_writer_add_metadata_scalar(w, "k", OI_DTYPE_NDARRAY, &one), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_writer_add_metadata_scalar(w, "k", OI_DTYPE_U8, NULL), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_writer_add_metadata_ndarray(w, "k", OI_DTYPE_STRING, 2, dims, data), OI_ERROR_INVALID_ARGUMENT);
    CHECK_OK(oi_writer_add_metadata_scalar(w, "k", OI_DTYPE_U8, &one));
    CHECK_STATUS(oi_writer_add_metadata_string(w, "k", "x", 1), OI_ERROR_INVALID_ARGUMENT);

    /* quant rules are checked on add */
    const float s3[3] = {1, 2, 3}, s1[1] = {1};
    const int32_t z1[1] = {0}, z3[3] = {0, 0, 0};
    struct { oi_quant q; const char *why; } bad[] = {
        {{OI_QUANT_SYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_NONE, 0, 2, 0, 0, s3, NULL}, "scale_count 1"},
        {{OI_QUANT_SYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_NONE, 1, 1, 0, 0, s1, NULL}, "scale_axis 0"},
        {{OI_QUANT_SYMMETRIC, OI_QUANT_PER_CHANNEL, OI_QUANT_NONE, 2, 3, 0, 0, s3, NULL}, "not below ndim"},
        {{OI_QUANT_SYMMETRIC, OI_QUANT_PER_CHANNEL, OI_QUANT_NONE, 0, 3, 0, 0, s3, NULL}, "size of scale_axis"},
        {{OI_QUANT_SYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_PER_TENSOR, 0, 1, 0, 1, s1, z1}, "symmetric"},
        {{OI_QUANT_ASYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_NONE, 0, 1, 0, 1, s1, z1}, "zp_count 0"},
        {{OI_QUANT_ASYMMETRIC, OI_QUANT_PER_CHANNEL, OI_QUANT_PER_TENSOR, 1, 3, 0, 1, s3, z1}, "per-tensor scale"},
        {{OI_QUANT_ASYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_PER_CHANNEL, 0, 1, 1, 3, s1, z3}, "per-channel scale"},
        {{OI_QUANT_ASYMMETRIC, OI_QUANT_PER_CHANNEL, OI_QUANT_PER_CHANNEL, 1, 3, 0, 2, s3, z3}, "zp_axis differs"},
        {{OI_QUANT_ASYMMETRIC, OI_QUANT_PER_CHANNEL, OI_QUANT_PER_CHANNEL, 1, 3, 1, 2, s3, z3}, "size of zp_axis"},
        {{OI_QUANT_ASYMMETRIC, OI_QUANT_PER_TENSOR, OI_QUANT_PER_TENSOR, 0, 1, 0, 1, NULL, z1}, "NULL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "q%zu", i);
        CHECK_STATUS(oi_writer_add_tensor(w, name, OI_DTYPE_I8, 2, dims, data, &bad[i].q), OI_ERROR_INVALID_ARGUMENT);
        CHECK_STR_CONTAINS(oi_last_error(), bad[i].why);
    }
    /* a rejected add leaves the writer as it was: B, k and tensor B only */
    size_t size = 0;
    uint8_t *b = write_to_memory(w, 2, &size);
    oi_model *m = b ? oi_model_open_memory(b, size) : NULL;
    CHECK(m && oi_model_sizevar_count(m) == 1 && oi_model_metadata_count(m) == 1 && oi_model_tensor_count(m) == 1);
    oi_model_close(m);
    oi_free(b);
    oi_writer_free(w);
}

/* ---- files on disk: write, mmap, missing ---- */
static void test_files(void) {
    char path[] = "/tmp/oi_test_oinf_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    oi_writer *w = layout_writer();
    CHECK_OK(oi_writer_write_file(w, 2, path));
    oi_model *m = NULL;
    CHECK_OK(oi__model_open_file(path, &m));
    CHECK(m && oi_model_tensor_count(m) == 3 && oi_model_loaded_tensor_count(m) == 0);
    const void *data = NULL;
    if (m) {
        CHECK_OK(oi_model_tensor_data(m, oi_model_find_tensor(m, "q"), &data));
        CHECK(data && ((const int8_t *)data)[1] == -1);
        CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 1);
    }
    oi_model_close(m);
    /* an empty file is a format error, not a crash */
    FILE *f = fopen(path, "wb");
    if (f)
        fclose(f);
    CHECK_STATUS(oi__model_open_file(path, &m), OI_ERROR_FORMAT);
    CHECK_STR_CONTAINS(oi_last_error(), path);
    remove(path);
    CHECK_STATUS(oi__model_open_file(path, &m), OI_ERROR_IO);
    CHECK(oi_model_open(path) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), path);
    CHECK_STATUS(oi_writer_write_file(w, 2, "/nonexistent-dir/x.oinf"), OI_ERROR_IO);
    oi_writer_free(w);
}

/* ---- corrupt files, one defect at a time ---- */
static void test_corrupt_header_and_tensor(void) {
    uint8_t good[216], b[232];
    fill_worked_example(good);
#define FRESH() memcpy(b, good, 216)

    FRESH(); b[0] = 'X';
    EXPECT_FORMAT_ERROR(b, 216, "bad magic");
    FRESH(); put32(b + 5, 3);
    EXPECT_FORMAT_ERROR(b, 216, "version 3");
    FRESH(); put32(b + 5, 0);
    EXPECT_FORMAT_ERROR(b, 216, "version 0");
    FRESH();
    EXPECT_FORMAT_ERROR(b, 100, "real length 100"); /* truncated */
    EXPECT_FORMAT_ERROR(b, 40, "shorter than the 69-byte header");
    EXPECT_FORMAT_ERROR(b, 0, "shorter than the 69-byte header");
    FRESH(); put64(b + 61, 224);
    EXPECT_FORMAT_ERROR(b, 216, "file_size 224");
    FRESH(); memset(b + 216, 0, 16);
    EXPECT_FORMAT_ERROR(b, 224, "real length 224"); /* trailing bytes */
    FRESH(); put32(b + 9, 1);
    EXPECT_FORMAT_ERROR(b, 216, "flags 0x1 at byte 9");
    FRESH(); put32(b + 25, 1);
    EXPECT_FORMAT_ERROR(b, 216, "reserved");
    FRESH(); put64(b + 37, 92); put64(b + 45, 92);
    EXPECT_FORMAT_ERROR(b, 216, "offset_metadata 92 (byte 37) is not a multiple of 8");
    FRESH(); put64(b + 37, 96);
    EXPECT_FORMAT_ERROR(b, 216, "out of order");
    FRESH(); put64(b + 53, 224);
    EXPECT_FORMAT_ERROR(b, 216, "offset_data 224 (byte 53) is greater than file_size 216");
    FRESH(); put64(b + 29, 64);
    EXPECT_FORMAT_ERROR(b, 216, "overlaps the header");

    /* tables */
    FRESH(); put32(b + 13, 2);
    EXPECT_FORMAT_ERROR(b, 216, "runs past the end of the size variable table");
    FRESH(); put32(b + 21, 2); /* the second entry would start in the padding */
    EXPECT_FORMAT_ERROR(b, 216, "tensor #1: empty name (length 0 at byte 148)");
    FRESH(); b[76] = ' ';
    EXPECT_FORMAT_ERROR(b, 216, "size variable #0: name ' ' at byte 72 has characters outside [A-Za-z0-9._-]");
    FRESH(); b[92] = '!';
    EXPECT_FORMAT_ERROR(b, 216, "outside [A-Za-z0-9._-]");
    FRESH(); put32(b + 88, 0);
    EXPECT_FORMAT_ERROR(b, 216, "empty name");
    FRESH(); put32(b + 88, 0xFFFFFFF0u);
    EXPECT_FORMAT_ERROR(b, 216, "runs past the end of the tensor table");

    /* tensor 'zero' */
    FRESH(); put32(b + 96, 99);
    EXPECT_FORMAT_ERROR(b, 216, "tensor 'zero': unknown dtype 99");
    FRESH(); put32(b + 96, 0);
    EXPECT_FORMAT_ERROR(b, 216, "unknown dtype 0");
    FRESH(); put32(b + 96, 14);
    EXPECT_FORMAT_ERROR(b, 216, "not allowed for tensors");
    FRESH(); put32(b + 96, 15);
    EXPECT_FORMAT_ERROR(b, 216, "not allowed for tensors");
    FRESH(); put32(b + 100, 0x10000000u);
    EXPECT_FORMAT_ERROR(b, 216, "dims");
    FRESH(); put32(b + 104, 4);
    EXPECT_FORMAT_ERROR(b, 216, "flags 0x4");
    FRESH(); put32(b + 104, 0);
    EXPECT_FORMAT_ERROR(b, 216, "no HAS_DATA flag");
    FRESH(); put64(b + 116, 60);
    EXPECT_FORMAT_ERROR(b, 216, "tensor 'zero': data_nbytes 60 (byte 116) but f32[16] needs 64");
    FRESH(); put64(b + 108, 1ull << 62); /* 2^62 f32 = 2^64 bytes */
    EXPECT_FORMAT_ERROR(b, 216, "more bytes than fit 64 bits");
    FRESH(); put64(b + 124, 156);
    EXPECT_FORMAT_ERROR(b, 216, "data_offset 156 (field at byte 124) is not a multiple of 8");
    FRESH(); put64(b + 124, 160);
    EXPECT_FORMAT_ERROR(b, 216, "runs past the end of the file");
    FRESH(); put64(b + 124, 0xFFFFFFFFFFFFFFF8ull); /* offset + size wraps */
    EXPECT_FORMAT_ERROR(b, 216, "runs past the end of the file");
    FRESH(); put64(b + 124, 144);
    EXPECT_FORMAT_ERROR(b, 216, "before the data section");
    FRESH(); put64(b + 132, 8);
    EXPECT_FORMAT_ERROR(b, 216, "no HAS_QUANT flag");
#undef FRESH
}

static void test_corrupt_metadata_and_quant(void) {
    oi_writer *w = layout_writer();
    size_t size = 0;
    uint8_t *good = write_to_memory(w, 2, &size);
    oi_writer_free(w);
    if (!good || size != 464) {
        oi_free(good);
        return;
    }
    uint8_t b[464];
#define FRESH() memcpy(b, good, 464)
    /* dims whose product overflows 64 bits (declared tensor u) */
    FRESH(); put64(b + 276, (1ull << 32) + 1); put64(b + 284, (1ull << 32) + 1);
    EXPECT_FORMAT_ERROR(b, 464, "tensor 'u': f32[4294967297, 4294967297] has more elements than fit 64 bits");
    FRESH(); put32(b + 268, OI_MAX_DIMS + 1); /* the dims run into the next entry... past the table end */
    EXPECT_FORMAT_ERROR(b, 464, "runs past the end of the tensor table");

    /* metadata 'a' (u8 at 328): entry fields at 112 */
    FRESH(); put32(b + 112, 99);
    EXPECT_FORMAT_ERROR(b, 464, "metadata 'a': unknown value_type 99");
    FRESH(); put32(b + 116, 1);
    EXPECT_FORMAT_ERROR(b, 464, "value_flags 0x1");
    FRESH(); put64(b + 120, 2);
    EXPECT_FORMAT_ERROR(b, 464, "a u8 scalar needs value_nbytes 1, not 2");
    FRESH(); put64(b + 128, 332);
    EXPECT_FORMAT_ERROR(b, 464, "value_offset 332 (field at byte 128) is not a multiple of 8");
    FRESH(); put64(b + 128, 0);
    EXPECT_FORMAT_ERROR(b, 464, "before the data section");
    FRESH(); put64(b + 128, 464);
    EXPECT_FORMAT_ERROR(b, 464, "runs past the end of the file");
    FRESH(); b[108] = 'a' + 128;
    EXPECT_FORMAT_ERROR(b, 464, "outside [A-Za-z0-9._-]");

    /* tensor q: quant fields at 180 (nbytes) / 188 (offset), payload at 344 */
    FRESH(); put64(b + 180, 64);
    EXPECT_FORMAT_ERROR(b, 464, "tensor 'q': quant_nbytes 64 does not match scale_count 1 and zp_count 1");
    FRESH(); put64(b + 180, 40);
    EXPECT_FORMAT_ERROR(b, 464, "smaller than the 48-byte quant header");
    FRESH(); put64(b + 188, 348);
    EXPECT_FORMAT_ERROR(b, 464, "quant_offset 348 (field at byte 188) is not a multiple of 8");
    FRESH(); put64(b + 188, 0);
    EXPECT_FORMAT_ERROR(b, 464, "quant_offset 0 (field at byte 188) lies before the data section");
    FRESH(); put64(b + 188, 416);
    EXPECT_FORMAT_ERROR(b, 464, "runs past the end of the file");
    FRESH(); put32(b + 152, 1); /* HAS_DATA only, quant fields still set */
    EXPECT_FORMAT_ERROR(b, 464, "no HAS_QUANT flag");
    FRESH(); put32(b + 344, 3);
    EXPECT_FORMAT_ERROR(b, 464, "quant scheme 3 (byte 344)");
    FRESH(); put32(b + 348, 0);
    EXPECT_FORMAT_ERROR(b, 464, "scale_mode 0");
    FRESH(); put32(b + 352, 5);
    EXPECT_FORMAT_ERROR(b, 464, "zp_mode 5");
    FRESH(); put32(b + 356, 1);
    EXPECT_FORMAT_ERROR(b, 464, "reserved");
    FRESH(); put32(b + 344, 1); /* symmetric with a zero point */
    EXPECT_FORMAT_ERROR(b, 464, "symmetric quantization cannot have a zero point");
    FRESH(); put64(b + 360, 1); /* per-tensor scale on axis 1 */
    EXPECT_FORMAT_ERROR(b, 464, "per-tensor scale needs scale_axis 0 and scale_count 1");
    FRESH(); put32(b + 352, 0); put64(b + 368, 2); put64(b + 384, 0); /* 2 scales, no zp: same size */
    EXPECT_FORMAT_ERROR(b, 464, "per-tensor scale needs scale_axis 0 and scale_count 1");
    FRESH(); put32(b + 348, 2); put64(b + 360, 1); /* per-channel axis 1 on a 1-D tensor */
    EXPECT_FORMAT_ERROR(b, 464, "scale_axis is not below ndim");
    FRESH(); put32(b + 348, 2); put32(b + 352, 0); put64(b + 384, 0); /* axis 0 has 2, count 1 */
    EXPECT_FORMAT_ERROR(b, 464, "scale_count differs from the size of scale_axis");
    FRESH(); put32(b + 348, 2); put32(b + 352, 0); put64(b + 384, 0); put64(b + 368, 0);
    EXPECT_FORMAT_ERROR(b, 464, "quant_nbytes 56 does not match");

    /* tensor r (i8[1]): quant payload at 408 (sym, 1 scale, 4 pad bytes) */
    FRESH(); put32(b + 408, 2); put32(b + 412, 2); put32(b + 416, 1); put64(b + 448, 1); /* pc scale + pt zp */
    EXPECT_FORMAT_ERROR(b, 464, "a per-tensor zero point needs a per-tensor scale");
    FRESH(); put32(b + 408, 2); put32(b + 416, 2); put64(b + 448, 1); /* pt scale + pc zp */
    EXPECT_FORMAT_ERROR(b, 464, "a per-channel zero point needs a per-channel scale");
    FRESH(); put64(b + 448, 1); /* zp none with a count */
    EXPECT_FORMAT_ERROR(b, 464, "zero-point mode none needs zp_count 0");
    FRESH(); put32(b + 408, 2); put32(b + 412, 2); put32(b + 416, 2); put64(b + 440, 1); put64(b + 448, 1);
    EXPECT_FORMAT_ERROR(b, 464, "zp_axis differs from scale_axis");
    FRESH(); put32(b + 408, 2); put32(b + 412, 2); put32(b + 416, 2); put64(b + 448, 1); /* valid: opens */
    oi_model *m = oi_model_open_memory(b, 464);
    CHECK_MSG(m != NULL, "%s", oi_last_error());
    CHECK(m && oi_model_find_tensor(m, "r")->quant.zp_mode == OI_QUANT_PER_CHANNEL);
    oi_model_close(m);
#undef FRESH
    oi_free(good);
}

static void test_corrupt_duplicates_and_payloads(void) {
    oi_writer *w = oi_writer_new();
    const uint8_t one = 1;
    const uint64_t dims[1] = {1};
    CHECK_OK(oi_writer_add_sizevar(w, "s1", 1));
    CHECK_OK(oi_writer_add_sizevar(w, "s2", 2));
    CHECK_OK(oi_writer_add_metadata_scalar(w, "m1", OI_DTYPE_U8, &one));
    CHECK_OK(oi_writer_add_metadata_string(w, "m2", "hello", 5));
    CHECK_OK(oi_writer_add_tensor(w, "t1", OI_DTYPE_U8, 1, dims, &one, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "t2", OI_DTYPE_U8, 1, dims, &one, NULL));
    const uint8_t bits[1] = {0x0F};
    CHECK_OK(oi_writer_add_metadata_bitset(w, "m3", bits, 4));
    const uint64_t adims[2] = {2, 2};
    const int16_t arr[4] = {1, 2, 3, 4};
    CHECK_OK(oi_writer_add_metadata_ndarray(w, "m4", OI_DTYPE_I16, 2, adims, arr));
    size_t size = 0;
    uint8_t *good = write_to_memory(w, 2, &size);
    oi_writer_free(w);
    /* 72 | s1 72..88, s2 88..104 | m1 104..136, m2 ..168, m3 ..200, m4 ..232 |
     * t1 232..292, t2 292..352 | data 352: m1 @352, m2 @360 (16 B), m3 @376 (16 B),
     * m4 @392 (8+16+8 = 32 B), t1 @424, t2 @432 | 440 */
    CHECK_EQ_INT(size, 440);
    if (!good || size != 440) {
        oi_free(good);
        return;
    }
    uint8_t b[440];
#define FRESH() memcpy(b, good, 440)
    FRESH();
    CHECK(b[93] == '2' && b[141] == '2' && b[296] == 't' && b[297] == '2');
    FRESH(); b[93] = '1';
    EXPECT_FORMAT_ERROR(b, 440, "size variable #1: duplicate name 's1' at byte 88");
    FRESH(); b[141] = '1';
    EXPECT_FORMAT_ERROR(b, 440, "metadata #1: duplicate name 'm1'");
    FRESH(); b[297] = '1';
    EXPECT_FORMAT_ERROR(b, 440, "tensor #1: duplicate name 't1'");
    /* string: length 5 in a 16-byte payload; length 13 needs 24 */
    FRESH(); CHECK(get32(b + 360) == 5); put32(b + 360, 13);
    EXPECT_FORMAT_ERROR(b, 440, "metadata 'm2': string of 13 bytes needs value_nbytes 24, not 16");
    FRESH(); put32(b + 360, 0xFFFFFFFFu);
    EXPECT_FORMAT_ERROR(b, 440, "metadata 'm2': string of 4294967295 bytes");
    /* bitset: 4 bits in 1 byte */
    FRESH(); CHECK(get32(b + 376) == 4 && get32(b + 380) == 1); put32(b + 380, 2);
    EXPECT_FORMAT_ERROR(b, 440, "bitset of 4 bits needs byte_count 1, not 2");
    FRESH(); put32(b + 376, 200); put32(b + 380, 25);
    EXPECT_FORMAT_ERROR(b, 440, "bitset of 25 bytes needs value_nbytes 40, not 16");
    /* ndarray i16[2,2] */
    FRESH(); CHECK(get32(b + 392) == OI_DTYPE_I16 && get32(b + 396) == 2); put32(b + 392, 14);
    EXPECT_FORMAT_ERROR(b, 440, "ndarray element type 14");
    FRESH(); put32(b + 392, 13);
    EXPECT_FORMAT_ERROR(b, 440, "ndarray element type 13");
    FRESH(); put32(b + 396, 1000);
    EXPECT_FORMAT_ERROR(b, 440, "ndarray dims (ndim 1000) run past");
    FRESH(); put64(b + 400, 1ull << 63); put64(b + 408, 4);
    EXPECT_FORMAT_ERROR(b, 440, "ndarray dims overflow");
    FRESH(); put64(b + 400, 3); /* 6 elements: 12 bytes do not fit */
    EXPECT_FORMAT_ERROR(b, 440, "ndarray of 6 i16 elements does not fit its 32-byte payload");
    FRESH(); put64(b + 400, 0); /* no elements: the payload would be 24 bytes */
    EXPECT_FORMAT_ERROR(b, 440, "ndarray needs value_nbytes 24, not 32");
    FRESH(); put32(b + 392, OI_DTYPE_I8); /* 4 bytes of data: 8+16+4 -> 32 still fits */
    oi_model *m = oi_model_open_memory(b, 440);
    CHECK_MSG(m != NULL, "%s", oi_last_error());
    oi_model_close(m);
#undef FRESH
    oi_free(good);
}

/* Every truncation and many single-byte changes of a rich file: the
 * reader either accepts or reports a format/unsupported error; with a
 * sanitizer build any out-of-bounds read would abort the test. */
static void test_no_crash_on_damage(void) {
    oi_writer *w = layout_writer();
    const uint64_t adims[1] = {3};
    const uint8_t packed[1] = {0x1B};
    CHECK_OK(oi_writer_add_metadata_ndarray(w, "nd", OI_DTYPE_U2, 1, adims, packed));
    CHECK_OK(oi_writer_add_metadata_string(w, "str", "abc", 3));
    CHECK_OK(oi_writer_add_metadata_bitset(w, "bits", packed, 7));
    size_t size = 0;
    uint8_t *good = write_to_memory(w, 2, &size);
    oi_writer_free(w);
    if (!good)
        return;
    int unexpected = 0, accepted = 0;
    for (size_t len = 0; len < size; len++) {
        uint8_t *copy = (uint8_t *)malloc(len ? len : 1);
        memcpy(copy, good, len);
        oi_model *m = NULL;
        if (oi__model_open_bytes(copy, len, "t.oinf", &m) != OI_ERROR_FORMAT)
            unexpected++;
        oi_model_close(m);
        free(copy);
    }
    static const uint8_t values[] = {0x00, 0x01, 0x07, 0x80, 0xFF};
    uint8_t *copy = (uint8_t *)malloc(size);
    for (size_t at = 0; at < size; at++) {
        for (size_t v = 0; v < sizeof values; v++) {
            memcpy(copy, good, size);
            copy[at] = values[v];
            oi_model *m = NULL;
            oi_status s = oi__model_open_bytes(copy, size, "t.oinf", &m);
            if (s == OI_OK) {
                accepted++;
                for (size_t i = 0; i < oi_model_tensor_count(m); i++) {
                    const oi_tensor_info *t = oi_model_tensor_at(m, i);
                    const void *data = NULL;
                    if (t->has_data && oi_model_tensor_data(m, t, &data) == OI_OK && t->data_nbytes)
                        unexpected += (const uint8_t *)data + t->data_nbytes > copy + size;
                }
                oi_model_close(m);
            } else if (s != OI_ERROR_FORMAT && s != OI_ERROR_UNSUPPORTED) {
                unexpected++;
            }
        }
    }
    free(copy);
    CHECK_EQ_INT(unexpected, 0);
    CHECK(accepted > 0); /* e.g. changed payload values stay valid */
    oi_free(good);
}

int main(void) {
    test_worked_example();
    test_conformance_files();
    test_conformance_facts();
    test_lazy_loading();
    test_metadata_round_trip();
    test_layout_and_quant();
    test_per_channel_and_v1();
    test_writer_rejects();
    test_files();
    test_corrupt_header_and_tensor();
    test_corrupt_metadata_and_quant();
    test_corrupt_duplicates_and_payloads();
    test_no_crash_on_damage();
    return check_result("test_oinf");
}
