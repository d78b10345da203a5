/* test_hostile.c - hostile sizes and shapes: errors, never crashes.
 *
 * - .oinf files (patched bytes of a valid model): tensor dims and ndarray
 *   dims whose product overflows 64 bits, a tensor claiming more bytes than
 *   the file, an offset near 2^64, table counts and name lengths near 2^32.
 * - DSL and validation: dims from size variables or literals whose product
 *   overflows, a size variable beyond int64, a shape of 2^50 bytes (an
 *   allocation that fails: OUT_OF_MEMORY at run time, no crash).
 * - run time: negative and huge table indices, reversed / negative / huge
 *   slice bounds, huge auto_dim counts, a huge @fixed, a huge prefix index.
 * - recursion: a block branching to itself, a cycle, a chain of 10,000
 *   blocks (built, validated, printed as JSON/DOT, read back, run): the
 *   executor stops at 256 nested branches with an error; deeply nested JSON.
 * - loops: a literal bound beyond 2^30 iterations is a validation error, a
 *   run-time bound beyond it a runtime error (docs/simulator.md).
 * - insert/fetch with wrong counts, NULL data, a NULL view. */
#include "../openinfer.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

/* Huge allocations return NULL under AddressSanitizer too (the library must
 * report OUT_OF_MEMORY, which the sanitizer would otherwise pre-empt). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ------------------------------------------------------------------ */
/* .oinf files                                                          */
/* ------------------------------------------------------------------ */

static uint8_t *base_bytes;
static size_t base_size;

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The offset of the only occurrence of `pattern` in the base file. */
static size_t find_once(const uint8_t *pattern, size_t len) {
    size_t found = (size_t)-1;
    int count = 0;
    for (size_t i = 0; i + len <= base_size; i++)
        if (memcmp(base_bytes + i, pattern, len) == 0) {
            found = i;
            count++;
        }
    CHECK_MSG(count == 1, "pattern found %d times", count);
    return found;
}

static size_t find_u64_pair(uint64_t a, uint64_t b) {
    uint8_t pattern[16];
    put_u64(pattern, a);
    put_u64(pattern + 8, b);
    return find_once(pattern, sizeof pattern);
}

/* Opens a patched copy: it must fail with `want` and a message. */
static void expect_rejected(const char *what, uint8_t *bytes, size_t size, oi_status want) {
    oi_model *m = oi_model_open_memory(bytes, size);
    CHECK_MSG(m == NULL, "%s: opened", what);
    oi_model_close(m);
    if (m)
        return;
    CHECK_MSG(oi_last_error()[0] != '\0', "%s: no message", what);
    (void)want;
    printf("  %-44s -> %s\n", what, oi_last_error());
}

static void test_oinf(void) {
    oi_writer *w = oi_writer_new();
    uint64_t decl_dims[2] = {12345, 54321}, w_dims[1] = {7}, grid_dims[2] = {3, 5};
    float wdata[7] = {1, 2, 3, 4, 5, 6, 7};
    int32_t grid[15] = {0};
    CHECK_OK(oi_writer_add_sizevar(w, "B", 2));
    CHECK_OK(oi_writer_add_metadata_ndarray(w, "grid", OI_DTYPE_I32, 2, grid_dims, grid));
    CHECK_OK(oi_writer_add_tensor(w, "decl", OI_DTYPE_F32, 2, decl_dims, NULL, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "w", OI_DTYPE_F32, 1, w_dims, wdata, NULL));
    CHECK_OK(oi_writer_to_memory(w, 2, &base_bytes, &base_size));
    oi_writer_free(w);
    oi_model *m = oi_model_open_memory(base_bytes, base_size);
    CHECK_MSG(m != NULL, "the base model: %s", oi_last_error());
    oi_model_close(m);
    uint8_t *b = (uint8_t *)malloc(base_size);
    if (!b)
        return;
    printf("hostile .oinf files:\n");

    size_t decl = find_u64_pair(12345, 54321);
    memcpy(b, base_bytes, base_size);
    put_u64(b + decl, (uint64_t)1 << 32);
    put_u64(b + decl + 8, ((uint64_t)1 << 32) + 1);
    expect_rejected("declared dims 2^32 x (2^32+1)", b, base_size, OI_ERROR_FORMAT);
    memcpy(b, base_bytes, base_size);
    put_u64(b + decl, (uint64_t)1 << 62);
    put_u64(b + decl + 8, 4); /* 2^64 elements */
    expect_rejected("declared dims 2^62 x 4", b, base_size, OI_ERROR_FORMAT);
    memcpy(b, base_bytes, base_size);
    put_u64(b + decl, (uint64_t)1 << 62);
    put_u64(b + decl + 8, 1); /* 2^62 f32 elements: 2^64 bytes */
    expect_rejected("declared f32[2^62, 1] (2^64 bytes)", b, base_size, OI_ERROR_FORMAT);

    size_t wt = find_u64_pair(7, 28); /* dims[0], data_nbytes */
    memcpy(b, base_bytes, base_size);
    put_u64(b + wt, (uint64_t)1 << 40);
    put_u64(b + wt + 8, (uint64_t)1 << 42);
    expect_rejected("tensor of 2^42 bytes in a small file", b, base_size, OI_ERROR_FORMAT);
    memcpy(b, base_bytes, base_size);
    put_u64(b + wt, (uint64_t)1 << 61);
    put_u64(b + wt + 8, (uint64_t)1 << 63);
    expect_rejected("tensor of 2^63 bytes", b, base_size, OI_ERROR_FORMAT);
    memcpy(b, base_bytes, base_size);
    put_u64(b + wt + 16, UINT64_MAX - 7); /* data_offset: offset + nbytes wraps */
    expect_rejected("data_offset 2^64 - 8", b, base_size, OI_ERROR_FORMAT);
    memcpy(b, base_bytes, base_size);
    put_u64(b + wt + 8, 29); /* one byte more than f32[7] */
    expect_rejected("data_nbytes one more than the shape", b, base_size, OI_ERROR_FORMAT);

    uint8_t nd_pattern[24];
    put_u32(nd_pattern, OI_DTYPE_I32);
    put_u32(nd_pattern + 4, 2);
    put_u64(nd_pattern + 8, 3);
    put_u64(nd_pattern + 16, 5);
    size_t nd = find_once(nd_pattern, sizeof nd_pattern);
    memcpy(b, base_bytes, base_size);
    put_u64(b + nd + 8, (uint64_t)1 << 33);
    put_u64(b + nd + 16, (uint64_t)1 << 33);
    expect_rejected("metadata ndarray dims 2^33 x 2^33", b, base_size, OI_ERROR_FORMAT);
    memcpy(b, base_bytes, base_size);
    put_u32(b + nd + 4, 0xFFFFFFFFu);
    expect_rejected("metadata ndarray with 2^32-1 dims", b, base_size, OI_ERROR_FORMAT);

    const int counts[3] = {13, 17, 21};
    const char *count_names[3] = {"n_sizevars 2^32-1", "n_metadata 2^32-1", "n_tensors 2^32-1"};
    for (int i = 0; i < 3; i++) {
        memcpy(b, base_bytes, base_size);
        put_u32(b + counts[i], 0xFFFFFFFFu);
        expect_rejected(count_names[i], b, base_size, OI_ERROR_FORMAT);
    }
    memcpy(b, base_bytes, base_size);
    put_u64(b + 61, UINT64_MAX); /* file_size */
    expect_rejected("file_size 2^64-1", b, base_size, OI_ERROR_FORMAT);
    /* the first name of the size variable table: "B" (length 1) */
    uint64_t sizevars_at = 0;
    for (int i = 0; i < 8; i++)
        sizevars_at |= (uint64_t)base_bytes[29 + i] << (8 * i);
    memcpy(b, base_bytes, base_size);
    put_u32(b + sizevars_at, 0xFFFFFFF8u);
    expect_rejected("a name of 2^32-8 bytes", b, base_size, OI_ERROR_FORMAT);
    free(b);
    oi_free(base_bytes);
}

/* ------------------------------------------------------------------ */
/* DSL and validation                                                   */
/* ------------------------------------------------------------------ */

static oi_model *size_model;

/* A graph with one declaration `decl` (a dynamic variable x) and an op
 * that writes x; it must build, and validation must fail. */
static oi_graph *graph_with(const char *decl) {
    oi_graph_builder *b = oi_graph_builder_new("hostile", "hostile.cfg");
    oi_graph_builder_section(b, OI_DSL_SECTION_DYNAMIC);
    oi_graph_builder_var(b, decl);
    oi_graph_builder_end(b);
    oi_graph_builder_block(b, "entry");
    oi_graph_builder_op(b, "relu", "x", "x");
    oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
    oi_graph_builder_end(b);
    return oi_graph_builder_finish(b);
}

static void expect_invalid(const char *decl) {
    oi_graph *g = graph_with(decl);
    if (!g) { /* refused by the parser already */
        printf("  %-44s -> build: %s\n", decl, oi_last_error());
        CHECK_MSG(oi_last_error()[0] != '\0', "%s: no message", decl);
        return;
    }
    oi_status st = oi_graph_validate(g, size_model);
    CHECK_MSG(st == OI_ERROR_VALIDATION, "%s: validate -> %s", decl, oi_status_name(st));
    printf("  %-44s -> %s\n", decl, oi_last_error());
    oi_simulator *sim = oi_simulator_new(size_model, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    CHECK_MSG(e == NULL, "%s: an executor was made", decl);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_graph_free(g);
}

static void test_dsl_sizes(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "S", 4));
    CHECK_OK(oi_writer_add_sizevar(w, "BIG", (uint64_t)1 << 32));
    CHECK_OK(oi_writer_add_sizevar(w, "HUGE", (uint64_t)1 << 62));
    CHECK_OK(oi_writer_add_sizevar(w, "P", (uint64_t)1 << 22));
    CHECK_OK(oi_writer_add_sizevar(w, "Q", (uint64_t)1 << 24));
    CHECK_OK(oi_writer_add_sizevar(w, "MAXU", UINT64_MAX));
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(w, 2, &bytes, &size));
    oi_writer_free(w);
    size_model = oi_model_open_memory(bytes, size);
    CHECK_MSG(size_model != NULL, "size model: %s", oi_last_error());
    if (!size_model) {
        oi_free(bytes);
        return;
    }
    printf("hostile sizes in the DSL:\n");
    expect_invalid("x, f32[BIG, BIG]");
    expect_invalid("x, f32[BIG*BIG]");
    expect_invalid("x, f32[BIG*BIG*BIG]");
    expect_invalid("x, f32[HUGE]");                 /* 2^62 elements: 2^64 bytes */
    expect_invalid("x, f32[HUGE, S]");
    expect_invalid("x, f32[MAXU]");
    expect_invalid("x, f32[4294967296, 4294967296]");
    expect_invalid("x, f32[99999999999999999999]");
    expect_invalid("x, f32[2, 2, 2, 2, 2, 2, 2, 2, 2]"); /* 9 dims */

    /* 2^46 f32 (2^48 bytes, beyond any address space): valid, but no
     * allocator can give it */
    oi_graph *g = graph_with("x, f32[P, Q]");
    CHECK(g != NULL);
    oi_simulator *sim = oi_simulator_new(size_model, OI_DEVICE_CPU);
    oi_executor *e = g && sim ? oi_simulator_make_executor(sim, g) : NULL;
    /* refused up front (the memory estimate of make_executor) or at run time */
    if (!e) {
        CHECK_MSG(g && sim && oi_last_error()[0] != '\0', "f32[P, Q]: no executor and no message");
        printf("  %-44s -> executor: %s\n", "x, f32[P, Q] (2^48 bytes)", oi_last_error());
    }
    if (e) {
        oi_status st = oi_executor_run_step(e);
        CHECK_STATUS(st, OI_ERROR_OUT_OF_MEMORY);
        printf("  %-44s -> step: %s\n", "x, f32[P, Q] (2^48 bytes)", oi_last_error());
        float one = 1.0f;
        CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, &one, 1), OI_ERROR_INVALID_ARGUMENT);
        oi_tensor_view v;
        CHECK(oi_executor_fetch(e, "x", OI_DTYPE_F32, &v) != OI_OK);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_graph_free(g);
    oi_model_close(size_model);
    oi_free(bytes);
}

/* ------------------------------------------------------------------ */
/* run-time indices                                                     */
/* ------------------------------------------------------------------ */

OI_GRAPH(write_f, OI_DYNAMIC( OI_VAR(i, i64) OI_VAR(v, f32[4]) )
  OI_PERSISTENT( OI_VAR(F(t), f32[4], @table, @fixed(t=8)) )
  OI_BLOCK(entry, OI_CACHE_WRITE(v, F[i]) OI_RETURN()))
OI_GRAPH(write_u, OI_DYNAMIC( OI_VAR(i, i64) OI_VAR(v, f32[4]) )
  OI_PERSISTENT( OI_VAR(U(t), f32[4], @table) )
  OI_BLOCK(entry, OI_CACHE_WRITE(v, U[i]) OI_ASSIGN(rows, f32[1, 4]) OI_CACHE_READ(U[], rows) OI_RETURN()))
OI_GRAPH(write_g, OI_DYNAMIC( OI_VAR(i, i64) OI_VAR(v, f32[4]) )
  OI_PERSISTENT( OI_VAR(G(t), f32[4], @table, @fixed(t=9223372036854775807)) )
  OI_BLOCK(entry, OI_CACHE_WRITE(v, G[i]) OI_ASSIGN(rows, f32[1, 4]) OI_CACHE_READ(G[], rows) OI_RETURN()))
OI_GRAPH(slice_u, OI_DYNAMIC( OI_VAR(a, i64) OI_VAR(b, i64) OI_VAR(v, f32[4]) )
  OI_PERSISTENT( OI_VAR(U(t), f32[4], @table) )
  OI_BLOCK(entry,
    OI_CACHE_WRITE(v, U[0]) OI_CACHE_WRITE(v, U[1])
    OI_ASSIGN(rows, f32[1, 4]) OI_CACHE_READ(U[a..b], rows) OI_RETURN()))
OI_GRAPH(auto_m, OI_DYNAMIC( OI_VAR(i, i64) )
  OI_PERSISTENT( OI_VAR(M(r), f32[4], @auto_dim(r)) )
  OI_BLOCK(entry, OI_ASSIGN(m, f32[4]) OI_CACHE_READ(M[i], m) OI_RETURN()))
OI_GRAPH(prefix_w, OI_DYNAMIC( OI_VAR(i, i64) OI_VAR(x, f32[4]) )
  OI_CONSTANT( OI_VAR(W(l), f32[4], @pattern("w.{l}")) )
  OI_BLOCK(entry, OI_OP(add, x, W[i]) OI_TO(x) OI_RETURN()))

/* Runs one step of g with i (and a, b) inserted; returns its status. */
static oi_status step_with(const oi_graph *g, const oi_model *m, int64_t i, int64_t a, int64_t b, const char *what,
                           oi_executor **keep) {
    oi_simulator *sim = oi_simulator_new(m, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    CHECK_MSG(e != NULL, "%s: %s", what, oi_last_error());
    oi_status st = e ? OI_OK : OI_ERROR_VALIDATION;
    float v[4] = {1, 2, 3, 4};
    if (e) {
        /* not every graph has every input: unknown names are skipped */
        oi_executor_insert(e, "i", OI_DTYPE_I64, &i, 1);
        oi_executor_insert(e, "a", OI_DTYPE_I64, &a, 1);
        oi_executor_insert(e, "b", OI_DTYPE_I64, &b, 1);
        oi_executor_insert(e, "v", OI_DTYPE_F32, v, 4);
        oi_executor_insert(e, "x", OI_DTYPE_F32, v, 4);
        st = oi_executor_run_step(e);
        printf("  %-44s -> %s%s\n", what, st == OI_OK ? "ok" : oi_status_name(st), st == OI_OK ? "" : "");
        if (st != OI_OK)
            printf("  %-44s    %s\n", "", oi_last_error());
    }
    if (keep && e) {
        *keep = e;
        return st;
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    return st;
}

static void test_runtime_indices(void) {
    printf("hostile indices at run time:\n");
    const int64_t big = (int64_t)1 << 40, huge = (int64_t)1 << 62;
    CHECK_STATUS(step_with(write_f(), NULL, 3, 0, 0, "F[3] of @fixed(t=8)", NULL), OI_OK);
    CHECK_STATUS(step_with(write_f(), NULL, -1, 0, 0, "F[-1]", NULL), OI_ERROR_RUNTIME);
    CHECK_STATUS(step_with(write_f(), NULL, 8, 0, 0, "F[8] of @fixed(t=8)", NULL), OI_ERROR_RUNTIME);
    CHECK_STATUS(step_with(write_f(), NULL, huge, 0, 0, "F[2^62]", NULL), OI_ERROR_RUNTIME);
    CHECK_STATUS(step_with(write_f(), NULL, INT64_MIN, 0, 0, "F[-2^63]", NULL), OI_ERROR_RUNTIME);
    /* no @fixed: one entry at 2^40 is fine, the whole table (2^40+1 rows) is not */
    oi_status st = step_with(write_u(), NULL, big, 0, 0, "U[2^40] then U[]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "U[2^40]: %s", oi_status_name(st));
    st = step_with(write_u(), NULL, INT64_MAX, 0, 0, "U[2^63-1] then U[]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "U[2^63-1]: %s", oi_status_name(st));
    st = step_with(write_g(), NULL, huge, 0, 0, "G[2^62] of @fixed(t=2^63-1), G[]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "G[2^62]: %s", oi_status_name(st));
    CHECK_STATUS(step_with(slice_u(), NULL, 0, 0, 2, "U[0..2]", NULL), OI_OK);
    CHECK_STATUS(step_with(slice_u(), NULL, 0, 1, 0, "U[1..0]", NULL), OI_ERROR_RUNTIME);
    CHECK_STATUS(step_with(slice_u(), NULL, 0, -5, 2, "U[-5..2]", NULL), OI_ERROR_RUNTIME);
    st = step_with(slice_u(), NULL, 0, 0, -100, "U[0..-100] (size 2)", NULL);
    CHECK_MSG(st == OI_ERROR_RUNTIME, "U[0..-100]: %s", oi_status_name(st));
    st = step_with(slice_u(), NULL, 0, 0, big, "U[0..2^40]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "U[0..2^40]: %s", oi_status_name(st));
    st = step_with(slice_u(), NULL, 0, 0, INT64_MAX, "U[0..2^63-1]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "U[0..2^63-1]: %s", oi_status_name(st));
    st = step_with(slice_u(), NULL, 0, INT64_MIN, INT64_MAX, "U[-2^63..2^63-1]", NULL);
    CHECK_MSG(st == OI_ERROR_RUNTIME, "U[-2^63..2^63-1]: %s", oi_status_name(st));
    CHECK_STATUS(step_with(auto_m(), NULL, 3, 0, 0, "M[3] of @auto_dim(r)", NULL), OI_OK);
    CHECK_STATUS(step_with(auto_m(), NULL, -3, 0, 0, "M[-3]", NULL), OI_ERROR_RUNTIME);
    st = step_with(auto_m(), NULL, big, 0, 0, "M[2^40]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "M[2^40]: %s", oi_status_name(st));
    st = step_with(auto_m(), NULL, INT64_MAX, 0, 0, "M[2^63-1]", NULL);
    CHECK_MSG(st == OI_ERROR_OUT_OF_MEMORY || st == OI_ERROR_RUNTIME, "M[2^63-1]: %s", oi_status_name(st));

    /* a prefix table index that names no tensor */
    oi_writer *w = oi_writer_new();
    uint64_t dims[1] = {4};
    float data[4] = {1, 1, 1, 1};
    CHECK_OK(oi_writer_add_tensor(w, "w.0", OI_DTYPE_F32, 1, dims, data, NULL));
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(w, 2, &bytes, &size));
    oi_writer_free(w);
    oi_model *m = oi_model_open_memory(bytes, size);
    CHECK_STATUS(step_with(prefix_w(), m, 0, 0, 0, "W[0]", NULL), OI_OK);
    CHECK(step_with(prefix_w(), m, huge, 0, 0, "W[2^62]", NULL) != OI_OK);
    CHECK(step_with(prefix_w(), m, -1, 0, 0, "W[-1]", NULL) != OI_OK);
    oi_model_close(m);
    oi_free(bytes);
}

/* ------------------------------------------------------------------ */
/* recursion and loops                                                  */
/* ------------------------------------------------------------------ */

OI_GRAPH(self_branch, OI_BLOCK(entry, OI_BRANCH(again) OI_RETURN()) OI_BLOCK(again, OI_BRANCH(again) OI_RETURN()))
OI_GRAPH(cycle, OI_BLOCK(entry, OI_BRANCH(ping) OI_RETURN()) OI_BLOCK(ping, OI_BRANCH(pong) OI_RETURN())
  OI_BLOCK(pong, OI_BRANCH(ping) OI_RETURN()))

/* entry -> b1 -> b2 -> ... -> b<n-1>, each block adding one to x. */
static oi_graph *chain(int n) {
    oi_graph_builder *b = oi_graph_builder_new("chain", "chain.cfg");
    oi_graph_builder_section(b, OI_DSL_SECTION_VOLATILE);
    oi_graph_builder_var(b, "x, f32[1]");
    oi_graph_builder_end(b);
    oi_graph_builder_section(b, OI_DSL_SECTION_CONSTANT);
    oi_graph_builder_var(b, "one, f32, @init(1.0)");
    oi_graph_builder_end(b);
    for (int i = 0; i < n; i++) {
        char name[32], next[32];
        snprintf(name, sizeof name, i ? "b%d" : "entry", i);
        snprintf(next, sizeof next, "b%d", i + 1);
        oi_graph_builder_block(b, name);
        oi_graph_builder_op(b, "add", "x, one", "x");
        if (i + 1 < n)
            oi_graph_builder_stmt(b, OI_DSL_BRANCH, "", next);
        oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
        oi_graph_builder_end(b);
    }
    return oi_graph_builder_finish(b);
}

static oi_status run_once(const oi_graph *g, float *x_out) {
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    oi_status st = e ? oi_executor_run_step(e) : OI_ERROR_VALIDATION;
    if (!e)
        printf("  (no executor: %s)\n", oi_last_error());
    if (st == OI_OK && x_out) {
        oi_tensor_view v;
        st = oi_executor_fetch(e, "x", OI_DTYPE_F32, &v);
        if (st == OI_OK)
            *x_out = ((const float *)v.data)[0];
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    return st;
}

static void test_recursion(void) {
    printf("recursion:\n");
    CHECK_MSG(self_branch() != NULL, "self_branch: %s", oi_last_error());
    if (self_branch()) {
        CHECK_STATUS(run_once(self_branch(), NULL), OI_ERROR_RUNTIME);
        printf("  %-44s -> %s\n", "a block branching to itself", oi_last_error());
    }
    CHECK_MSG(cycle() != NULL, "cycle: %s", oi_last_error());
    if (cycle()) {
        CHECK_STATUS(run_once(cycle(), NULL), OI_ERROR_RUNTIME);
        printf("  %-44s -> %s\n", "ping -> pong -> ping", oi_last_error());
    }
    /* a chain within the limit runs: x = number of blocks */
    oi_graph *g = chain(200);
    CHECK_MSG(g != NULL, "chain(200): %s", oi_last_error());
    float x = 0;
    if (g) {
        CHECK_OK(run_once(g, &x));
        CHECK_NEAR(x, 200.0, 0);
    }
    oi_graph_free(g);
    /* 10,000 blocks: built, validated, printed, read back; the step stops */
    g = chain(10000);
    CHECK_MSG(g != NULL, "chain(10000): %s", oi_last_error());
    if (g) {
        CHECK_OK(oi_graph_validate(g, NULL));
        char *json = oi_graph_to_json(g);
        CHECK(json != NULL);
        oi_graph *back = json ? oi_graph_from_json(json) : NULL;
        CHECK_MSG(back != NULL, "chain from JSON: %s", oi_last_error());
        oi_graph_free(back);
        oi_free(json);
        char *dot = oi_graph_to_dot(g);
        CHECK(dot != NULL);
        oi_free(dot);
        CHECK_STATUS(run_once(g, NULL), OI_ERROR_RUNTIME);
        printf("  %-44s -> %s\n", "a chain of 10,000 blocks", oi_last_error());
        oi_graph_free(g);
    }
    /* JSON nested 100,000 deep */
    size_t depth = 100000;
    char *deep = (char *)malloc(2 * depth + 1);
    if (deep) {
        memset(deep, '[', depth);
        memset(deep + depth, ']', depth);
        deep[2 * depth] = '\0';
        CHECK(oi_graph_from_json(deep) == NULL);
        printf("  %-44s -> %s\n", "JSON arrays nested 100,000 deep", oi_last_error());
        free(deep);
    }
    /* loops nested 65 deep through the builder */
    oi_graph_builder *b = oi_graph_builder_new("nest", "nest.cfg");
    oi_graph_builder_block(b, "entry");
    for (int i = 0; i < 65; i++) {
        char name[16], index[16];
        snprintf(name, sizeof name, "l%d", i);
        snprintf(index, sizeof index, "i%d", i);
        oi_graph_builder_loop(b, name, index, "0..1");
    }
    for (int i = 0; i < 65; i++)
        oi_graph_builder_end(b);
    oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
    oi_graph_builder_end(b);
    g = oi_graph_builder_finish(b);
    CHECK(g == NULL);
    printf("  %-44s -> %s\n", "loops nested 65 deep", oi_last_error());
    oi_graph_free(g);
}

OI_GRAPH(loop_literal, OI_VOLATILE( OI_VAR(x, f32[1]) ) OI_CONSTANT( OI_VAR(one, f32, @init(1.0)) )
  OI_BLOCK(entry, OI_LOOP(forever, i, 0..9223372036854775807, OI_OP(add, x, one) OI_TO(x)) OI_RETURN()))
OI_GRAPH(loop_dynamic, OI_DYNAMIC( OI_VAR(n, i64) ) OI_VOLATILE( OI_VAR(x, f32[1]) )
  OI_CONSTANT( OI_VAR(one, f32, @init(1.0)) )
  OI_BLOCK(entry, OI_LOOP(count, i, 0..n, OI_OP(add, x, one) OI_TO(x)) OI_RETURN()))
OI_GRAPH(loop_negative, OI_DYNAMIC( OI_VAR(n, i64) ) OI_VOLATILE( OI_VAR(x, f32[1]) )
  OI_CONSTANT( OI_VAR(one, f32, @init(1.0)) )
  OI_BLOCK(entry, OI_LOOP(count, i, n..3, OI_OP(add, x, one) OI_TO(x)) OI_RETURN()))

static void test_loops(void) {
    printf("loop bounds:\n");
    if (loop_literal()) {
        oi_status st = oi_graph_validate(loop_literal(), NULL);
        CHECK_STATUS(st, OI_ERROR_VALIDATION);
        printf("  %-44s -> %s\n", "0..2^63-1 (literal)", oi_last_error());
    } else {
        printf("  %-44s -> build: %s\n", "0..2^63-1 (literal)", oi_last_error());
    }
    CHECK(loop_dynamic() != NULL);
    if (!loop_dynamic())
        return;
    int64_t counts[3] = {5, (int64_t)1 << 40, INT64_MAX};
    for (int k = 0; k < 3; k++) {
        oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_CPU);
        oi_executor *e = sim ? oi_simulator_make_executor(sim, loop_dynamic()) : NULL;
        CHECK(e != NULL);
        if (e) {
            CHECK_OK(oi_executor_insert(e, "n", OI_DTYPE_I64, &counts[k], 1));
            oi_status st = oi_executor_run_step(e);
            if (k == 0) {
                CHECK_OK(st);
                oi_tensor_view v;
                CHECK_OK(oi_executor_fetch(e, "x", OI_DTYPE_F32, &v));
                CHECK_NEAR(((const float *)v.data)[0], 5.0, 0);
            } else {
                CHECK_STATUS(st, OI_ERROR_RUNTIME);
                printf("  %-44s -> %s\n", k == 1 ? "0..n, n = 2^40" : "0..n, n = 2^63-1", oi_last_error());
            }
        }
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    /* a start far below the end: INT64_MIN..3 */
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_CPU);
    oi_executor *e = sim && loop_negative() ? oi_simulator_make_executor(sim, loop_negative()) : NULL;
    CHECK(e != NULL);
    if (e) {
        int64_t n = INT64_MIN;
        CHECK_OK(oi_executor_insert(e, "n", OI_DTYPE_I64, &n, 1));
        CHECK_STATUS(oi_executor_run_step(e), OI_ERROR_RUNTIME);
        printf("  %-44s -> %s\n", "n..3, n = -2^63", oi_last_error());
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* insert and fetch                                                     */
/* ------------------------------------------------------------------ */

OI_GRAPH(io, OI_DYNAMIC( OI_VAR(x, f32[3, 4]) OI_VAR(k, i32[2]) ) OI_BLOCK(entry, OI_OP(relu, x) OI_TO(x) OI_RETURN()))

static void test_insert_fetch(void) {
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, io()) : NULL;
    CHECK(e != NULL);
    if (!e)
        return;
    float data[13] = {0};
    CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, data, 11), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "count");
    CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, data, 13), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, data, 0), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, data, SIZE_MAX), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, data, (size_t)1 << 62), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_executor_insert(e, "x", OI_DTYPE_F32, NULL, 12), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_executor_insert(e, "k", OI_DTYPE_F32, data, 2), OI_ERROR_INVALID_ARGUMENT); /* float into i32 */
    CHECK(oi_executor_insert(e, "x", OI_DTYPE_INVALID, data, 12) != OI_OK);
    CHECK(oi_executor_insert(e, "x", (oi_dtype)999, data, 12) != OI_OK);
    CHECK(oi_executor_insert(e, "x", OI_DTYPE_STRING, data, 12) != OI_OK);
    CHECK_STATUS(oi_executor_insert(e, "nope", OI_DTYPE_F32, data, 12), OI_ERROR_NOT_FOUND);
    CHECK_STATUS(oi_executor_insert(e, NULL, OI_DTYPE_F32, data, 12), OI_ERROR_NOT_FOUND);
    CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, data, 12)); /* still usable */
    CHECK_OK(oi_executor_run_step(e));
    oi_tensor_view v;
    CHECK_STATUS(oi_executor_fetch(e, "x", OI_DTYPE_F32, NULL), OI_ERROR_INVALID_ARGUMENT);
    CHECK(oi_executor_fetch(e, "x", (oi_dtype)999, &v) != OI_OK);
    CHECK(oi_executor_fetch(e, "x", OI_DTYPE_STRING, &v) != OI_OK);
    CHECK_STATUS(oi_executor_fetch(e, "nope", OI_DTYPE_F32, &v), OI_ERROR_NOT_FOUND);
    CHECK_OK(oi_executor_fetch(e, "x", OI_DTYPE_F32, &v));
    CHECK_EQ_INT(v.len, 12);
    oi_executor_free(e);
    oi_simulator_free(sim);
    CHECK_STATUS(oi_executor_insert(NULL, "x", OI_DTYPE_F32, data, 12), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(oi_executor_run_step(NULL), OI_ERROR_INVALID_ARGUMENT);
    CHECK(oi_dtype_nbytes(OI_DTYPE_F64, UINT64_MAX / 4) == UINT64_MAX); /* saturates */
    CHECK(oi_dtype_nbytes(OI_DTYPE_U4, UINT64_MAX) == UINT64_MAX / 2 + 1); /* packed: exact */
    CHECK(oi_dtype_nbytes(OI_DTYPE_U1, 9) == 2);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0); /* the log up to a crash */
    test_oinf();
    test_dsl_sizes();
    test_runtime_indices();
    test_recursion();
    test_loops();
    test_insert_fetch();
    return check_result("test_hostile");
}
