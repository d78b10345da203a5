/* device_query.c - the device architecture of a live device, for
 * `openinfer devices --json`: the host CPU from Linux's /proc/cpuinfo and
 * /sys/devices/system/cpu (cores, caches, ISA), a Vulkan device from the
 * backend's queries (vulkan/vk_arch.c). What cannot be learned is left
 * out (absent in the JSON), never guessed. */
#include "device_arch.h"

#include <ctype.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/utsname.h>
#include <unistd.h>
#define OI__HAVE_UNAME 1
#endif

/* The ISA extensions the synthesizer can use, as /proc/cpuinfo spells them
 * (x86 "flags", Arm "Features"). */
static const char *const oi__cpu_isa_known[] = {
    "sse2", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512dq", "avx512bw",
    "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16",
    "asimd", "fphp", "asimdhp", "asimddp", "i8mm", "bf16", "sve", "sve2", NULL};

/* The first line of a small text file, without the newline; false if absent. */
static bool oi__read_line(const char *path, char *out, size_t cap) {
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(out, (int)cap, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\n")] = '\0';
    return ok;
}

/* "32K" / "1024K" / "8M" (sysfs cache sizes) in bytes. */
static uint64_t oi__parse_size(const char *text) {
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (end && (*end == 'K' || *end == 'k'))
        v <<= 10;
    else if (end && (*end == 'M' || *end == 'm'))
        v <<= 20;
    else if (end && (*end == 'G' || *end == 'g'))
        v <<= 30;
    return (uint64_t)v;
}

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static void oi__cpuinfo_value(const char *key, char *out, size_t cap) {
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ')
            colon++;
        snprintf(out, cap, "%s", colon);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static oi_status oi__cpu_isa(oi__device_arch *a) {
    char flags[8192];
    oi__cpuinfo_value("flags", flags, sizeof flags);
    if (!flags[0])
        oi__cpuinfo_value("Features", flags, sizeof flags);
    for (const char *const *k = oi__cpu_isa_known; *k; k++) {
        size_t n = strlen(*k);
        bool found = false;
        for (const char *p = flags; !found && (p = strstr(p, *k)) != NULL; p += n)
            found = (p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
        if (!found)
            continue;
        char *copy = oi__strdup(*k);
        if (!copy || !arrput(a->features.isa, copy)) {
            oi__free(copy);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return OI_OK;
}

static bool oi__cpu_has(const oi__device_arch *a, const char *isa) {
    for (ptrdiff_t i = 0; i < arrlen(a->features.isa); i++)
        if (strcmp(a->features.isa[i], isa) == 0)
            return true;
    return false;
}

/* Physical cores: distinct (package, core) pairs of the online CPUs. */
static uint64_t oi__cpu_cores(uint64_t threads) {
    uint64_t *seen = (uint64_t *)oi__calloc((size_t)threads + 1, sizeof *seen);
    uint64_t n = 0;
    for (uint64_t cpu = 0; seen && cpu < threads; cpu++) {
        char path[128], package[32], core[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%llu/topology/physical_package_id",
                 (unsigned long long)cpu);
        bool ok = oi__read_line(path, package, sizeof package);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%llu/topology/core_id", (unsigned long long)cpu);
        if (!ok || !oi__read_line(path, core, sizeof core)) {
            n = 0; /* no topology: say nothing */
            break;
        }
        uint64_t id = strtoull(package, NULL, 10) << 32 | strtoull(core, NULL, 10);
        bool dup = false;
        for (uint64_t k = 0; k < n && !dup; k++)
            dup = seen[k] == id;
        if (!dup)
            seen[n++] = id;
    }
    oi__free(seen);
    return n ? n : threads;
}

/* Caches of cpu0 from sysfs: L1 data, L2, L3, the line size. */
static void oi__cpu_caches(oi__device_arch *a) {
    for (int index = 0; index < 8; index++) {
        char base[96], path[160], level[16], type[32], size[32], line[32];
        snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu0/cache/index%d", index);
        snprintf(path, sizeof path, "%s/level", base);
        if (!oi__read_line(path, level, sizeof level))
            break;
        snprintf(path, sizeof path, "%s/type", base);
        bool ok = oi__read_line(path, type, sizeof type);
        snprintf(path, sizeof path, "%s/size", base);
        ok = ok && oi__read_line(path, size, sizeof size);
        if (!ok || strcmp(type, "Instruction") == 0)
            continue;
        uint64_t bytes = oi__parse_size(size);
        const char *key = strcmp(level, "1") == 0 ? "l1d_bytes" : strcmp(level, "2") == 0 ? "l2_bytes"
                          : strcmp(level, "3") == 0 ? "l3_bytes" : NULL;
        if (!key)
            continue;
        *(key[1] == '1' ? &a->memory.l1d_bytes : key[1] == '2' ? &a->memory.l2_bytes : &a->memory.l3_bytes) = bytes;
        oi__device_arch_mark(a, "memory", key);
        snprintf(path, sizeof path, "%s/coherency_line_size", base);
        uint64_t line_bytes = oi__read_line(path, line, sizeof line) ? strtoull(line, NULL, 10) : 0;
        if (line_bytes >= 8 && line_bytes <= 4096 && !(line_bytes & (line_bytes - 1))) {
            a->memory.cache_line_bytes = line_bytes;
            oi__device_arch_mark(a, "memory", "cache_line_bytes");
        }
    }
}

static char *oi__cpu_vendor(void) {
    char raw[128];
    oi__cpuinfo_value("vendor_id", raw, sizeof raw);
    if (strcmp(raw, "GenuineIntel") == 0)
        return oi__strdup("intel");
    if (strcmp(raw, "AuthenticAMD") == 0)
        return oi__strdup("amd");
    if (!raw[0])
        oi__cpuinfo_value("CPU implementer", raw, sizeof raw); /* Arm: a hex code */
    for (char *c = raw; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return oi__strdup(raw);
}

/* Writes `text` into a string field and marks it given when not empty. */
static oi_status oi__arch_set_text(oi__device_arch *a, char **field, char *text, const char *key) {
    if (!text)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__free(*field);
    *field = text;
    if (text[0])
        oi__device_arch_mark(a, "device", key);
    return OI_OK;
}

/* The preferences a live device reports: the defaults, written out so the
 * JSON shows what the synthesizer will use. */
static void oi__arch_mark_preferences(oi__device_arch *a) {
    a->preferences.default_precision = OI__ARCH_FP32;
    a->preferences.prefer_fusion = true;
    a->preferences.prefer_persistent_kv = true;
    a->preferences.max_kernel_ops = OI__ARCH_DEFAULT_MAX_KERNEL_OPS;
    static const char *const keys[] = {"default_precision", "prefer_fusion", "prefer_persistent_kv", "max_kernel_ops"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        oi__device_arch_mark(a, "preferences", keys[i]);
}

oi_status oi__device_arch_query_cpu(oi__device_arch *a) {
    memset(a, 0, sizeof *a);
    a->device.type = OI__ARCH_TYPE_CPU;
    a->device.api = OI__ARCH_API_C;
    oi__device_arch_mark(a, "device", "type");
    oi__device_arch_mark(a, "device", "api");
    char model[256];
    oi__cpuinfo_value("model name", model, sizeof model);
    if (!model[0])
        snprintf(model, sizeof model, "host CPU");
    const char *machine = "";
#ifdef OI__HAVE_UNAME
    struct utsname u;
    if (uname(&u) == 0)
        machine = u.machine;
#endif
    oi_status s = oi__arch_set_text(a, &a->device.vendor, oi__cpu_vendor(), "vendor");
    if (s == OI_OK)
        s = oi__arch_set_text(a, &a->device.name, oi__strdup(model), "name");
    if (s == OI_OK)
        s = oi__arch_set_text(a, &a->device.architecture, oi__strdup(machine), "architecture");
    if (s == OI_OK)
        s = oi__arch_set_text(a, &a->device.driver, oi__strdup(""), "driver");
    if (s == OI_OK)
        s = oi__cpu_isa(a);
    if (s != OI_OK)
        return s;
#ifdef OI__HAVE_UNAME
    long online = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
#else
    long online = 1, pages = 0, page = 0;
#endif
    a->limits.threads = online > 0 ? (uint64_t)online : 1;
    a->limits.cores = oi__cpu_cores(a->limits.threads);
    a->limits.vector_bytes = oi__cpu_has(a, "avx512f") ? 64 : oi__cpu_has(a, "avx") ? 32 : 16;
    oi__device_arch_mark(a, "limits", "cores");
    oi__device_arch_mark(a, "limits", "threads");
    oi__device_arch_mark(a, "limits", "vector_bytes");
    a->features.fp16 = oi__cpu_has(a, "f16c") || oi__cpu_has(a, "fphp");
    a->features.int8 = oi__cpu_has(a, "avx512_vnni") || oi__cpu_has(a, "avx_vnni") || oi__cpu_has(a, "asimddp");
    a->features.int64 = a->features.fp64 = true;
    static const char *const features[] = {"fp16", "int8", "subgroup_ops", "cooperative_matrix", "int64", "fp64", "isa"};
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
        oi__device_arch_mark(a, "features", features[i]);
    a->memory.global_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 1;
    oi__device_arch_mark(a, "memory", "global_bytes");
    oi__cpu_caches(a);
    oi__arch_mark_preferences(a);
    return OI_OK;
}

oi_status oi__device_arch_query(size_t index, oi__device_arch *out) {
    memset(out, 0, sizeof *out);
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    if (index >= n || index >= 16)
        return oi__fail(OI_ERROR_NOT_FOUND, "no device %zu (there are %zu: see `openinfer devices`)", index, n);
    const oi_backend_info *b = &infos[index];
    if (!b->available)
        return oi__fail(OI_ERROR_UNAVAILABLE, "device %zu (%s) is unavailable: %s", index, b->name,
                        b->unavailable_reason ? b->unavailable_reason : "unknown reason");
    if (strcmp(b->name, "vulkan") != 0)
        return oi__device_arch_query_cpu(out); /* cpu and blas: the host CPU */
    int vk_index = 0; /* the Vulkan devices are listed in the backend's order */
    for (size_t i = 0; i < index; i++)
        vk_index += strcmp(infos[i].name, "vulkan") == 0;
    oi_status s = oi__vk_device_arch(vk_index, out);
    if (s == OI_OK)
        oi__arch_mark_preferences(out);
    return s;
}
