/* test_device_json.c - the device architecture JSON (openinfer_impl/
 * device_arch.h): the seeds' ada_mock.json field by field (values typed in
 * from the seed), the committed device files, every kind of mistake with
 * the JSON path and the reason it must name, unknown keys kept and warned
 * about (refused when strict), the writer's round trip, and the live
 * devices' JSON (whatever this machine has) read back strictly. */
#include "../openinfer.h"
#include "../openinfer_impl/device_arch.h"

#include "alloc_hooks.h"
#include "check.h"

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = (char *)malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) == (size_t)n)
        text[n] = '\0';
    fclose(f);
    return text;
}

/* `text` with the first `from` replaced by `to` (static buffer). */
static const char *edit(const char *text, const char *from, const char *to) {
    static char out[8192];
    const char *at = strstr(text, from);
    if (!at) {
        fprintf(stderr, "edit: \"%s\" not in the document\n", from);
        return "";
    }
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static void test_seed_mock(const char *mock) {
    oi__device_arch a;
    CHECK_OK(oi__device_arch_parse_mode(mock, true, &a));
    CHECK_EQ_INT(a.device.type, OI__ARCH_TYPE_GPU);
    CHECK_EQ_INT(a.device.api, OI__ARCH_API_VULKAN);
    CHECK(a.device.vendor && strcmp(a.device.vendor, "nvidia") == 0);
    CHECK(a.device.name && strcmp(a.device.name, "Mock RTX") == 0);
    CHECK(a.device.architecture && strcmp(a.device.architecture, "ada_lovelace") == 0);
    CHECK(a.device.driver && strcmp(a.device.driver, "555.xx") == 0);
    CHECK(a.limits.max_workgroup_size[0] == 1024 && a.limits.max_workgroup_size[1] == 1024 &&
          a.limits.max_workgroup_size[2] == 64);
    CHECK_EQ_INT(a.limits.max_shared_memory_bytes, 65536);
    CHECK_EQ_INT(a.limits.max_push_constants_bytes, 256);
    CHECK_EQ_INT(a.limits.max_storage_buffer_range_bytes, 2147483647);
    CHECK(a.features.fp16 && a.features.int8 && a.features.subgroup_ops && !a.features.cooperative_matrix);
    CHECK(a.memory.global_bytes == UINT64_C(17179869184));
    CHECK_EQ_INT(a.memory.shared_bytes_per_sm, 65536);
    CHECK_EQ_INT(a.memory.l2_bytes, 67108864);
    CHECK_EQ_INT(a.preferences.default_precision, OI__ARCH_FP16);
    CHECK(a.preferences.prefer_fusion && a.preferences.prefer_persistent_kv);
    CHECK_EQ_INT(a.preferences.max_kernel_ops, 12);
    CHECK_EQ_INT(arrlen(a.warnings), 0);
    CHECK_EQ_INT(arrlen(a.unknown), 0);
    /* written back and read again: the same architecture, the same text */
    char *once = oi__device_arch_to_json(&a);
    oi__device_arch b;
    CHECK_OK(oi__device_arch_parse_mode(once, true, &b));
    char *twice = oi__device_arch_to_json(&b);
    CHECK(once && twice && strcmp(once, twice) == 0);
    CHECK(b.memory.global_bytes == a.memory.global_bytes && b.preferences.max_kernel_ops == 12 &&
          b.limits.max_workgroup_size[2] == 64);
    oi_free(once);
    oi_free(twice);
    oi__device_arch_free(&b);
    oi__device_arch_free(&a);
}

/* The committed files were written by `openinfer devices --json N`: the
 * writer must reproduce them byte for byte. */
static void test_committed_file(const char *path) {
    char *text = read_file(path);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    oi__device_arch a;
    CHECK_OK(oi__device_arch_parse_mode(text, true, &a));
    char *again = oi__device_arch_to_json(&a);
    CHECK_MSG(again && strcmp(again, text) == 0, "%s does not round-trip:\n%s", path, again ? again : "(null)");
    oi_free(again);
    oi__device_arch_free(&a);
    free(text);
}

static void expect_error(const char *json, const char *message) {
    oi__device_arch a;
    oi_status s = oi__device_arch_parse(json, &a);
    CHECK_MSG(s == OI_ERROR_FORMAT, "accepted or wrong status %s for the case \"%s\"", oi_status_name(s), message);
    CHECK_STR_CONTAINS(oi_last_error(), message);
    oi__device_arch_free(&a);
}

static void test_mistakes(const char *mock) {
    static const struct { const char *from, *to, *message; } cases[] = {
        {"\"type\": \"gpu\"", "\"type\": \"tpu\"",
         "device JSON: $.device.type: \"tpu\" is not one of \"gpu\", \"integrated_gpu\", \"virtual_gpu\", \"cpu\" or \"other\""},
        {"\"api\": \"vulkan\"", "\"api\": \"cuda\"", "$.device.api: \"cuda\" is not one of \"vulkan\" or \"c\""},
        {"\"name\": \"Mock RTX\",", "", "$.device.name: missing (required)"},
        {"\"vendor\": \"nvidia\"", "\"vendor\": 7", "$.device.vendor: expected a string, found a number"},
        {"\"driver\": \"555.xx\"", "\"driver\": \"555\\u0001\"", "$.device.driver: control character at byte 3"},
        {"[1024, 1024, 64]", "[1024, 1024, -4]",
         "$.limits.max_workgroup_size[2]: expected an integer in [1, 2147483647], found -4"},
        {"[1024, 1024, 64]", "[1024, 1024]", "$.limits.max_workgroup_size: expected 3 integers [x, y, z], found 2"},
        {"[1024, 1024, 64]", "[1024, 1024, 6.5]", "$.limits.max_workgroup_size[2]: expected an integer"},
        {"[1024, 1024, 64]", "1024", "$.limits.max_workgroup_size: expected an array, found a number"},
        {"\"max_shared_memory_bytes\": 65536", "\"max_shared_memory_bytes\": \"64K\"",
         "$.limits.max_shared_memory_bytes: expected an integer in [0, 4294967295], found a string"},
        {"\"max_storage_buffer_range_bytes\": 2147483647", "\"max_storage_buffer_range_bytes\": 4294967296",
         "$.limits.max_storage_buffer_range_bytes: expected an integer in [1, 4294967295], found 4294967296"},
        {"\"max_push_constants_bytes\": 256,", "", "$.limits.max_push_constants_bytes: missing (required when "
                                                  "device.api is \"vulkan\")"},
        {"\"fp16\": true", "\"fp16\": 1", "$.features.fp16: expected a boolean, found a number"},
        {"\"subgroup_ops\": true,\n    \"cooperative_matrix\": false", "\"subgroup_ops\": true",
         "$.features.cooperative_matrix: missing (required when device.api is \"vulkan\")"},
        {"\"global_bytes\": 17179869184", "\"global_bytes\": 0",
         "$.memory.global_bytes: expected an integer in [1, 18446744073709551615], found 0"},
        {"\"global_bytes\": 17179869184", "\"global_bytes\": 18446744073709551616", "found 18446744073709551616"},
        {"\"global_bytes\": 17179869184", "\"global_bytes\": 1.7e10", "found 1.7e10"},
        {"\"default_precision\": \"fp16\"", "\"default_precision\": \"int4\"",
         "$.preferences.default_precision: \"int4\" is not one of \"fp32\", \"fp16\" or \"bf16\""},
        {"\"max_kernel_ops\": 12", "\"max_kernel_ops\": 0",
         "$.preferences.max_kernel_ops: expected an integer in [1, 1024], found 0"},
        {"\"prefer_fusion\": true", "\"prefer_fusion\": \"yes\"",
         "$.preferences.prefer_fusion: expected a boolean, found a string"},
        {"\"memory\": {", "\"memory\": [], \"x\": {", "$.memory: expected an object, found an array"},
        {"\"limits\": {", "\"limits\": {\n    \"max_workgroup_invocations\": 512,",
         "$.limits.max_workgroup_size: [0] = 1024 is more than limits.max_workgroup_invocations (512)"},
        {"\"subgroup_ops\": true", "\"subgroup_ops\": true, \"subgroup_ops\": false", "duplicate key"},
        {"{", "[{", "device JSON: line"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error(edit(mock, cases[i].from, cases[i].to), cases[i].message);

    /* a CPU target: what "c" needs, and the CPU fields' own rules */
    const char *cpu = "{\"device\": {\"type\": \"cpu\", \"api\": \"c\", \"name\": \"x\"}, "
                      "\"limits\": {\"cores\": 4}, \"memory\": {\"global_bytes\": 1024}}";
    oi__device_arch a;
    CHECK_OK(oi__device_arch_parse_mode(cpu, true, &a));
    CHECK_EQ_INT(a.preferences.default_precision, OI__ARCH_FP32); /* the defaults */
    CHECK(a.preferences.prefer_fusion && a.preferences.prefer_persistent_kv);
    CHECK_EQ_INT(a.preferences.max_kernel_ops, OI__ARCH_DEFAULT_MAX_KERNEL_OPS);
    CHECK(a.device.vendor && a.device.vendor[0] == '\0');
    oi__device_arch_free(&a);
    expect_error(edit(cpu, "\"type\": \"cpu\"", "\"type\": \"gpu\""),
                 "$.device.api: \"c\" targets a CPU, but device.type is \"gpu\"");
    expect_error(edit(cpu, "\"cores\": 4", "\"cores\": 4, \"threads\": 2"),
                 "$.limits.threads: 2 is fewer than limits.cores (4)");
    expect_error(edit(cpu, "\"cores\": 4", "\"cores\": 4, \"vector_bytes\": 24"),
                 "$.limits.vector_bytes: 24 is not a power of two");
    expect_error(edit(cpu, "\"cores\": 4", "\"threads\": 4"),
                 "$.limits.cores: missing (required when device.api is \"c\")");
    expect_error(edit(cpu, "\"limits\": {\"cores\": 4}", "\"limits\": 5"), "$.limits: expected an object, found a number");
    expect_error(edit(cpu, "\"global_bytes\": 1024", "\"global_bytes\": 1024, \"cache_line_bytes\": 4"),
                 "$.memory.cache_line_bytes: expected an integer in [8, 4096], found 4");
    expect_error(edit(cpu, "\"cores\": 4}", "\"cores\": 4}, \"features\": {\"isa\": [\"AVX2\"]}"),
                 "$.features.isa[0]: \"AVX2\" is not an ISA name");
    expect_error(edit(cpu, "\"cores\": 4}", "\"cores\": 4}, \"features\": {\"isa\": [\"avx2\", \"fma\", \"avx2\"]}"),
                 "$.features.isa[2]: \"avx2\" is listed twice");
    expect_error(edit(cpu, "\"cores\": 4}", "\"cores\": 4}, \"features\": {\"isa\": [2]}"),
                 "$.features.isa[0]: expected a string, found a number");
    expect_error("[]", "device JSON: $: expected an object, found an array");
    expect_error("{}", "$.device.type: missing (required)");
}

static void test_unknown_keys(const char *mock) {
    char doc[8192];
    snprintf(doc, sizeof doc, "%s", edit(mock, "\"max_push_constants_bytes\": 256,",
                                         "\"max_push_constants_bytes\": 256,\n    \"max_threads\": 7,"));
    snprintf(doc, sizeof doc, "%s", edit(doc, "\"device\": {", "\"notes\": {\"by\": [\"ci\", 2, null]},\n  \"device\": {"));
    oi__device_arch a;
    CHECK_OK(oi__device_arch_parse(doc, &a));
    CHECK_EQ_INT(arrlen(a.warnings), 2);
    if (arrlen(a.warnings) == 2) {
        CHECK(strcmp(a.warnings[0], "$.notes: unknown key (kept, not used)") == 0);
        CHECK(strcmp(a.warnings[1], "$.limits.max_threads: unknown key (kept, not used)") == 0);
    }
    CHECK_EQ_INT(arrlen(a.unknown), 2);
    char *json = oi__device_arch_to_json(&a);
    CHECK_STR_CONTAINS(json, "\"max_threads\": 7");
    CHECK_STR_CONTAINS(json, "\"notes\": {\"by\": [\"ci\", 2, null]}");
    oi__device_arch b; /* kept through a round trip */
    CHECK_OK(oi__device_arch_parse(json, &b));
    char *again = oi__device_arch_to_json(&b);
    CHECK(json && again && strcmp(json, again) == 0);
    oi_free(again);
    oi_free(json);
    oi__device_arch_free(&b);
    oi__device_arch_free(&a);
    CHECK_STATUS(oi__device_arch_parse_mode(doc, true, &a), OI_ERROR_FORMAT);
    CHECK_STR_CONTAINS(oi_last_error(), "device JSON: $.notes: unknown key (refused in strict mode)");
    oi__device_arch_free(&a);

    /* fp16 storage asked of a device without fp16 arithmetic: a warning */
    CHECK_OK(oi__device_arch_parse(edit(mock, "\"fp16\": true", "\"fp16\": false"), &a));
    CHECK_EQ_INT(arrlen(a.warnings), 1);
    if (arrlen(a.warnings) == 1)
        CHECK_STR_CONTAINS(a.warnings[0], "$.preferences.default_precision: \"fp16\" but features.fp16 is false");
    oi__device_arch_free(&a);
}

/* Every device this machine has: its JSON reads back strictly to the same text. */
static void test_live_devices(void) {
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    for (size_t i = 0; i < n && i < 16; i++) {
        oi__device_arch a;
        oi_status s = oi__device_arch_query(i, &a);
        if (!infos[i].available) {
            CHECK_STATUS(s, OI_ERROR_UNAVAILABLE);
            oi__device_arch_free(&a);
            continue;
        }
        CHECK_OK(s);
        char *json = oi__device_arch_to_json(&a);
        oi__device_arch b;
        CHECK_OK(oi__device_arch_parse_mode(json, true, &b));
        char *again = oi__device_arch_to_json(&b);
        CHECK(json && again && strcmp(json, again) == 0);
        CHECK_EQ_INT(b.device.api, strcmp(infos[i].name, "vulkan") == 0 ? OI__ARCH_API_VULKAN : OI__ARCH_API_C);
        CHECK(b.memory.global_bytes > 0);
        CHECK(b.device.api != OI__ARCH_API_C || (b.limits.cores >= 1 && b.limits.threads >= b.limits.cores));
        oi_free(again);
        oi_free(json);
        oi__device_arch_free(&b);
        oi__device_arch_free(&a);
    }
    oi__device_arch a;
    CHECK_STATUS(oi__device_arch_query(99, &a), OI_ERROR_NOT_FOUND);
    CHECK_STR_CONTAINS(oi_last_error(), "no device 99");
    oi__device_arch_free(&a);
}

/* The N-th allocation fails, for every N, while parsing (with unknown keys,
 * an ISA list, the writer): OUT_OF_MEMORY, and nothing leaks. */
static void test_out_of_memory(const char *mock) {
    char doc[8192];
    snprintf(doc, sizeof doc, "%s", edit(mock, "\"fp16\": true,", "\"fp16\": true, \"isa\": [\"x\", \"y\"], \"z\": [1],"));
    hooks_install();
    long baseline = hooks_live_blocks();
    int rounds = 0;
    for (long n = 1; n < 10000; n++, rounds++) {
        hooks_arm(n);
        oi__device_arch a;
        oi_status s = oi__device_arch_parse(doc, &a);
        char *json = s == OI_OK ? oi__device_arch_to_json(&a) : NULL;
        bool hit = hooks_hit();
        hooks_disarm();
        CHECK_MSG(!hit || s == OI_ERROR_OUT_OF_MEMORY || (s == OI_OK && !json), "allocation %ld failed: status %s", n,
                  oi_status_name(s));
        CHECK_MSG(hit || (s == OI_OK && json), "allocation %ld: %s", n, oi_last_error());
        oi_free(json);
        oi__device_arch_free(&a);
        CHECK_MSG(hooks_live_blocks() == baseline, "allocation %ld failed: %ld blocks leaked", n,
                  hooks_live_blocks() - baseline);
        if (!hit)
            break;
    }
    CHECK(rounds > 10);
    oi_set_allocator(NULL);
}

int main(void) {
    char *mock = read_file("examples/devices/ada_mock.json");
    CHECK_MSG(mock != NULL, "run from the source root: examples/devices/ada_mock.json");
    if (mock) {
        test_seed_mock(mock);
        test_mistakes(mock);
        test_unknown_keys(mock);
        test_out_of_memory(mock);
    }
    free(mock);
    test_committed_file("examples/devices/amd_epyc_cpu.json");
    test_committed_file("examples/devices/lavapipe.json");
    test_live_devices();
    return check_result("test_device_json");
}
