/* device_json.c - the device architecture JSON: reader, checks, writer
 * (device_arch.h says what and why; docs/device-json.md lists the fields).
 * Everything below walks one table, oi__arch_fields. */
#include "device_arch.h"

#include <errno.h>
#include <stddef.h>

typedef enum oi__arch_kind {
    OI__AK_STRING, OI__AK_ENUM, OI__AK_BOOL, OI__AK_U64, OI__AK_U64X3, OI__AK_STRINGS
} oi__arch_kind;

/* Which targets must give a field (by device.api). */
typedef enum oi__arch_need { OI__NEED_NONE, OI__NEED_ALL, OI__NEED_VULKAN, OI__NEED_C } oi__arch_need;

/* Numbers that must be powers of two. */
#define OI__AF_POW2 1u

typedef struct oi__arch_field {
    const char *section, *key;
    oi__arch_kind kind;
    size_t offset;           /* of the member in oi__device_arch */
    uint64_t min, max;       /* U64, U64X3: the range; STRING: max bytes */
    const char *const *names;/* ENUM: the spellings, NULL-terminated, in enum order */
    oi__arch_need need;
    unsigned flags;
} oi__arch_field;

static const char *const oi__arch_type_names[] = {"gpu", "integrated_gpu", "virtual_gpu", "cpu", "other", NULL};
static const char *const oi__arch_api_names[] = {"vulkan", "c", NULL};
static const char *const oi__arch_precision_names[] = {"fp32", "fp16", "bf16", NULL};
static const char *const oi__arch_sections[] = {"device", "limits", "features", "memory", "preferences", NULL};

#define OI__AT(member) offsetof(oi__device_arch, member)
#define OI__U32_MAX UINT64_C(4294967295)
#define OI__I32_MAX UINT64_C(2147483647)
#define OI__TEXT_MAX 256

/* The schema. Sections in document order; device.api comes before every
 * field whose need depends on it. */
static const oi__arch_field oi__arch_fields[] = {
    {"device", "type", OI__AK_ENUM, OI__AT(device.type), 0, 0, oi__arch_type_names, OI__NEED_ALL, 0},
    {"device", "api", OI__AK_ENUM, OI__AT(device.api), 0, 0, oi__arch_api_names, OI__NEED_ALL, 0},
    {"device", "vendor", OI__AK_STRING, OI__AT(device.vendor), 0, OI__TEXT_MAX, NULL, OI__NEED_NONE, 0},
    {"device", "name", OI__AK_STRING, OI__AT(device.name), 0, OI__TEXT_MAX, NULL, OI__NEED_ALL, 0},
    {"device", "architecture", OI__AK_STRING, OI__AT(device.architecture), 0, OI__TEXT_MAX, NULL, OI__NEED_NONE, 0},
    {"device", "driver", OI__AK_STRING, OI__AT(device.driver), 0, OI__TEXT_MAX, NULL, OI__NEED_NONE, 0},
    {"limits", "max_workgroup_size", OI__AK_U64X3, OI__AT(limits.max_workgroup_size), 1, OI__I32_MAX, NULL,
     OI__NEED_VULKAN, 0},
    {"limits", "max_workgroup_invocations", OI__AK_U64, OI__AT(limits.max_workgroup_invocations), 1, OI__I32_MAX, NULL,
     OI__NEED_NONE, 0},
    {"limits", "max_shared_memory_bytes", OI__AK_U64, OI__AT(limits.max_shared_memory_bytes), 0, OI__U32_MAX, NULL,
     OI__NEED_VULKAN, 0},
    {"limits", "max_push_constants_bytes", OI__AK_U64, OI__AT(limits.max_push_constants_bytes), 0, OI__U32_MAX, NULL,
     OI__NEED_VULKAN, 0},
    {"limits", "max_storage_buffer_range_bytes", OI__AK_U64, OI__AT(limits.max_storage_buffer_range_bytes), 1,
     OI__U32_MAX, NULL, OI__NEED_VULKAN, 0},
    {"limits", "subgroup_size", OI__AK_U64, OI__AT(limits.subgroup_size), 1, 1024, NULL, OI__NEED_NONE, OI__AF_POW2},
    {"limits", "cores", OI__AK_U64, OI__AT(limits.cores), 1, 1u << 20, NULL, OI__NEED_C, 0},
    {"limits", "threads", OI__AK_U64, OI__AT(limits.threads), 1, 1u << 20, NULL, OI__NEED_NONE, 0},
    {"limits", "vector_bytes", OI__AK_U64, OI__AT(limits.vector_bytes), 1, 1024, NULL, OI__NEED_NONE, OI__AF_POW2},
    {"features", "fp16", OI__AK_BOOL, OI__AT(features.fp16), 0, 0, NULL, OI__NEED_VULKAN, 0},
    {"features", "int8", OI__AK_BOOL, OI__AT(features.int8), 0, 0, NULL, OI__NEED_VULKAN, 0},
    {"features", "subgroup_ops", OI__AK_BOOL, OI__AT(features.subgroup_ops), 0, 0, NULL, OI__NEED_VULKAN, 0},
    {"features", "cooperative_matrix", OI__AK_BOOL, OI__AT(features.cooperative_matrix), 0, 0, NULL,
     OI__NEED_VULKAN, 0},
    {"features", "int64", OI__AK_BOOL, OI__AT(features.int64), 0, 0, NULL, OI__NEED_NONE, 0},
    {"features", "fp64", OI__AK_BOOL, OI__AT(features.fp64), 0, 0, NULL, OI__NEED_NONE, 0},
    {"features", "isa", OI__AK_STRINGS, OI__AT(features.isa), 0, 64, NULL, OI__NEED_NONE, 0},
    {"memory", "global_bytes", OI__AK_U64, OI__AT(memory.global_bytes), 1, UINT64_MAX, NULL, OI__NEED_ALL, 0},
    {"memory", "shared_bytes_per_sm", OI__AK_U64, OI__AT(memory.shared_bytes_per_sm), 0, OI__U32_MAX, NULL,
     OI__NEED_NONE, 0},
    {"memory", "l1d_bytes", OI__AK_U64, OI__AT(memory.l1d_bytes), 0, UINT64_MAX, NULL, OI__NEED_NONE, 0},
    {"memory", "l2_bytes", OI__AK_U64, OI__AT(memory.l2_bytes), 0, UINT64_MAX, NULL, OI__NEED_NONE, 0},
    {"memory", "l3_bytes", OI__AK_U64, OI__AT(memory.l3_bytes), 0, UINT64_MAX, NULL, OI__NEED_NONE, 0},
    {"memory", "cache_line_bytes", OI__AK_U64, OI__AT(memory.cache_line_bytes), 8, 4096, NULL, OI__NEED_NONE,
     OI__AF_POW2},
    {"preferences", "default_precision", OI__AK_ENUM, OI__AT(preferences.default_precision), 0, 0,
     oi__arch_precision_names, OI__NEED_NONE, 0},
    {"preferences", "prefer_fusion", OI__AK_BOOL, OI__AT(preferences.prefer_fusion), 0, 0, NULL, OI__NEED_NONE, 0},
    {"preferences", "prefer_persistent_kv", OI__AK_BOOL, OI__AT(preferences.prefer_persistent_kv), 0, 0, NULL,
     OI__NEED_NONE, 0},
    {"preferences", "max_kernel_ops", OI__AK_U64, OI__AT(preferences.max_kernel_ops), 1, 1024, NULL, OI__NEED_NONE,
     0},
    {"preferences", "coopmat_block", OI__AK_U64X3, OI__AT(preferences.coopmat_block), 16, 1024, NULL, OI__NEED_NONE,
     0},
    {"preferences", "coopmat_subgroups", OI__AK_U64X3, OI__AT(preferences.coopmat_subgroups), 1, 64, NULL,
     OI__NEED_NONE, 0},
};
#define OI__ARCH_FIELD_COUNT (sizeof oi__arch_fields / sizeof oi__arch_fields[0])

/* ---- small helpers ---- */
static void *oi__arch_member(oi__device_arch *a, const oi__arch_field *f) { return (char *)a + f->offset; }
static const void *oi__arch_cmember(const oi__device_arch *a, const oi__arch_field *f) {
    return (const char *)a + f->offset;
}

static const oi__arch_field *oi__arch_find(const char *section, const char *key, size_t *index) {
    for (size_t i = 0; i < OI__ARCH_FIELD_COUNT; i++)
        if (strcmp(oi__arch_fields[i].section, section) == 0 && strcmp(oi__arch_fields[i].key, key) == 0) {
            if (index)
                *index = i;
            return &oi__arch_fields[i];
        }
    return NULL;
}

static bool oi__arch_is_section(const char *key) {
    for (const char *const *s = oi__arch_sections; *s; s++)
        if (strcmp(*s, key) == 0)
            return true;
    return false;
}

static const char *oi__arch_type_word(oi__json_type t) {
    static const char *const words[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
    return words[t];
}

static oi_status oi__arch_fail(const char *section, const char *key, const char *fmt, ...) OI__PRINTF(3, 4);
static oi_status oi__arch_fail(const char *section, const char *key, const char *fmt, ...) {
    char reason[384];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    return oi__fail(OI_ERROR_FORMAT, "device JSON: $%s%s%s%s: %s", *section ? "." : "", section, key ? "." : "",
                    key ? key : "", reason);
}

static bool oi__arch_is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* An unsigned integer literal within [min, max]; `where` suffixes the path ("[2]"). */
static oi_status oi__arch_u64(const oi__arch_field *f, const oi__json *j, const char *where, uint64_t *out) {
    char key[96];
    snprintf(key, sizeof key, "%s%s", f->key, where);
    bool integer = j->type == OI__JSON_NUMBER && !strpbrk(j->text, ".eE") && j->text[0] != '-';
    unsigned long long v = 0;
    if (integer) {
        errno = 0;
        v = strtoull(j->text, NULL, 10);
        integer = errno != ERANGE;
    }
    if (!integer || v < f->min || v > f->max) {
        if (j->type == OI__JSON_NUMBER)
            return oi__arch_fail(f->section, key, "expected an integer in [%llu, %llu], found %s",
                                 (unsigned long long)f->min, (unsigned long long)f->max, j->text);
        return oi__arch_fail(f->section, key, "expected an integer in [%llu, %llu], found %s",
                             (unsigned long long)f->min, (unsigned long long)f->max, oi__arch_type_word(j->type));
    }
    if ((f->flags & OI__AF_POW2) && !oi__arch_is_pow2(v))
        return oi__arch_fail(f->section, key, "%s is not a power of two", j->text);
    *out = (uint64_t)v;
    return OI_OK;
}

static oi_status oi__arch_expect(const oi__arch_field *f, const oi__json *j, oi__json_type want) {
    if (j->type != want)
        return oi__arch_fail(f->section, f->key, "expected %s, found %s", oi__arch_type_word(want),
                             oi__arch_type_word(j->type));
    return OI_OK;
}

/* A printable string of at most `max` bytes (names, vendors...). */
static oi_status oi__arch_text(const oi__arch_field *f, const char *where, const char *s, uint64_t max) {
    char key[96];
    snprintf(key, sizeof key, "%s%s", f->key, where);
    size_t len = strlen(s);
    if (len > max)
        return oi__arch_fail(f->section, key, "longer than %llu bytes", (unsigned long long)max);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20)
            return oi__arch_fail(f->section, key, "control character at byte %zu", i);
    return OI_OK;
}

/* features.isa entries: lowercase names ("avx512f", "sse4_2"), each once. */
static oi_status oi__arch_isa(const oi__arch_field *f, const oi__json *j, char ***out) {
    oi_status s = oi__arch_expect(f, j, OI__JSON_ARRAY);
    if (s == OI_OK && (uint64_t)arrlen(j->items) > f->max)
        s = oi__arch_fail(f->section, f->key, "more than %llu entries", (unsigned long long)f->max);
    for (ptrdiff_t i = 0; s == OI_OK && i < arrlen(j->items); i++) {
        char key[96];
        snprintf(key, sizeof key, "%s[%td]", f->key, i);
        const oi__json *e = &j->items[i];
        if (e->type != OI__JSON_STRING)
            return oi__arch_fail(f->section, key, "expected a string, found %s", oi__arch_type_word(e->type));
        bool ok = e->text[0] != '\0' && strlen(e->text) <= 32;
        for (const char *c = e->text; ok && *c; c++)
            ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '.';
        if (!ok)
            return oi__arch_fail(f->section, key, "\"%s\" is not an ISA name ([a-z0-9_.], 1 to 32 bytes)", e->text);
        for (ptrdiff_t k = 0; k < i; k++)
            if (strcmp((*out)[k], e->text) == 0)
                return oi__arch_fail(f->section, key, "\"%s\" is listed twice", e->text);
        char *copy = oi__strdup(e->text);
        if (!copy || !arrput(*out, copy)) {
            oi__free(copy);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return s;
}

/* Reads one present field into the struct. */
static oi_status oi__arch_read_field(oi__device_arch *a, const oi__arch_field *f, const oi__json *j) {
    void *m = oi__arch_member(a, f);
    oi_status s = OI_OK;
    switch (f->kind) {
    case OI__AK_STRING:
        s = oi__arch_expect(f, j, OI__JSON_STRING);
        if (s == OI_OK)
            s = oi__arch_text(f, "", j->text, f->max);
        if (s == OI_OK) {
            oi__free(*(char **)m);
            *(char **)m = oi__strdup(j->text);
            s = *(char **)m ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
        }
        return s;
    case OI__AK_ENUM:
        s = oi__arch_expect(f, j, OI__JSON_STRING);
        for (int i = 0; s == OI_OK && f->names[i]; i++)
            if (strcmp(f->names[i], j->text) == 0) {
                *(int *)m = i;
                return OI_OK;
            }
        if (s == OI_OK) {
            char allowed[128] = "";
            for (int i = 0; f->names[i]; i++)
                snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s\"%s\"",
                         i == 0 ? "" : f->names[i + 1] ? ", " : " or ", f->names[i]);
            s = oi__arch_fail(f->section, f->key, "\"%s\" is not one of %s", j->text, allowed);
        }
        return s;
    case OI__AK_BOOL:
        s = oi__arch_expect(f, j, OI__JSON_BOOL);
        if (s == OI_OK)
            *(bool *)m = j->boolean;
        return s;
    case OI__AK_U64:
        return oi__arch_u64(f, j, "", (uint64_t *)m);
    case OI__AK_U64X3:
        s = oi__arch_expect(f, j, OI__JSON_ARRAY);
        if (s == OI_OK && arrlen(j->items) != 3)
            s = oi__arch_fail(f->section, f->key, "expected 3 integers [x, y, z], found %td", arrlen(j->items));
        for (int i = 0; s == OI_OK && i < 3; i++) {
            char where[8];
            snprintf(where, sizeof where, "[%d]", i);
            s = oi__arch_u64(f, &j->items[i], where, (uint64_t *)m + i);
        }
        return s;
    case OI__AK_STRINGS:
        return oi__arch_isa(f, j, (char ***)m);
    }
    return OI_OK;
}

static bool oi__arch_needed(const oi__device_arch *a, const oi__arch_field *f) {
    return f->need == OI__NEED_ALL || (f->need == OI__NEED_VULKAN && a->device.api == OI__ARCH_API_VULKAN) ||
           (f->need == OI__NEED_C && a->device.api == OI__ARCH_API_C);
}

/* The section object of the document, NULL if absent; an error if it is
 * there but not an object. */
static oi_status oi__arch_section(const oi__json *root, const char *name, const oi__json **out) {
    *out = oi__json_get(root, name);
    if (*out && (*out)->type != OI__JSON_OBJECT)
        return oi__fail(OI_ERROR_FORMAT, "device JSON: $.%s: expected an object, found %s", name,
                        oi__arch_type_word((*out)->type));
    return OI_OK;
}

/* ---- the defaults of absent optional fields: here and nowhere else ---- */
static void oi__arch_defaults(oi__device_arch *a) {
    a->preferences.default_precision = OI__ARCH_FP32;
    a->preferences.prefer_fusion = true;
    a->preferences.prefer_persistent_kv = true;
    a->preferences.max_kernel_ops = OI__ARCH_DEFAULT_MAX_KERNEL_OPS;
    char **texts[] = {&a->device.vendor, &a->device.name, &a->device.architecture, &a->device.driver};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!*texts[i])
            *texts[i] = oi__strdup("");
}

/* Every known field, in table order. */
static oi_status oi__arch_read_fields(oi__device_arch *a, const oi__json *root) {
    for (size_t i = 0; i < OI__ARCH_FIELD_COUNT; i++) {
        const oi__arch_field *f = &oi__arch_fields[i];
        const oi__json *section = NULL, *j = NULL;
        oi_status s = oi__arch_section(root, f->section, &section);
        if (s != OI_OK)
            return s;
        j = section ? oi__json_get(section, f->key) : NULL;
        if (!j && oi__arch_needed(a, f))
            return oi__arch_fail(f->section, f->key, "missing (required%s)",
                                 f->need == OI__NEED_VULKAN ? " when device.api is \"vulkan\""
                                 : f->need == OI__NEED_C    ? " when device.api is \"c\""
                                                            : "");
        if (!j)
            continue;
        s = oi__arch_read_field(a, f, j);
        if (s != OI_OK)
            return s;
        a->present |= UINT64_C(1) << i;
    }
    return OI_OK;
}

/* ---- unknown keys: kept, re-serialized ---- */
static void oi__arch_put_json(oi__buf *b, const oi__json *j) {
    switch (j->type) {
    case OI__JSON_NULL: oi__buf_puts(b, "null"); break;
    case OI__JSON_BOOL: oi__buf_puts(b, j->boolean ? "true" : "false"); break;
    case OI__JSON_NUMBER: oi__buf_puts(b, j->text); break;
    case OI__JSON_STRING: oi__buf_json_string(b, j->text); break;
    case OI__JSON_ARRAY:
    case OI__JSON_OBJECT:
        oi__buf_puts(b, j->type == OI__JSON_ARRAY ? "[" : "{");
        for (ptrdiff_t i = 0; i < arrlen(j->items); i++) {
            if (i)
                oi__buf_puts(b, ", ");
            if (j->type == OI__JSON_OBJECT) {
                oi__buf_json_string(b, j->keys[i]);
                oi__buf_puts(b, ": ");
            }
            oi__arch_put_json(b, &j->items[i]);
        }
        oi__buf_puts(b, j->type == OI__JSON_ARRAY ? "]" : "}");
        break;
    }
}

static oi_status oi__arch_keep(oi__device_arch *a, const char *section, const char *key, const oi__json *value,
                               bool strict) {
    if (strict)
        return oi__arch_fail(section, key, "unknown key (refused in strict mode)");
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__arch_put_json(&b, value);
    oi__arch_extra e;
    e.section = oi__strdup(section);
    e.key = oi__strdup(key);
    e.json = oi__buf_take(&b);
    char *warning = oi__sprintf("$%s%s.%s: unknown key (kept, not used)", *section ? "." : "", section, key);
    if (!e.section || !e.key || !e.json || !warning || !arrput(a->unknown, e)) {
        oi__free(e.section);
        oi__free(e.key);
        oi__free(e.json);
        oi__free(warning);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!arrput(a->warnings, warning)) {
        oi__free(warning);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static oi_status oi__arch_unknown_keys(oi__device_arch *a, const oi__json *root, bool strict) {
    oi_status s = OI_OK;
    for (ptrdiff_t i = 0; s == OI_OK && i < arrlen(root->keys); i++) {
        const char *name = root->keys[i];
        const oi__json *section = &root->items[i];
        if (!oi__arch_is_section(name)) {
            s = oi__arch_keep(a, "", name, section, strict);
            continue;
        }
        for (ptrdiff_t k = 0; s == OI_OK && k < arrlen(section->keys); k++)
            if (!oi__arch_find(name, section->keys[k], NULL))
                s = oi__arch_keep(a, name, section->keys[k], &section->items[k], strict);
    }
    return s;
}

/* ---- checks across fields ---- */
static bool oi__arch_has(const oi__device_arch *a, const char *section, const char *key) {
    size_t i = 0;
    return oi__arch_find(section, key, &i) && (a->present >> i & 1u);
}

static oi_status oi__arch_cross_checks(oi__device_arch *a) {
    if (a->device.api == OI__ARCH_API_C && a->device.type != OI__ARCH_TYPE_CPU)
        return oi__arch_fail("device", "api", "\"c\" targets a CPU, but device.type is \"%s\"",
                             oi__arch_type_names[a->device.type]);
    if (oi__arch_has(a, "limits", "threads") && oi__arch_has(a, "limits", "cores") &&
        a->limits.threads < a->limits.cores)
        return oi__arch_fail("limits", "threads", "%llu is fewer than limits.cores (%llu)",
                             (unsigned long long)a->limits.threads, (unsigned long long)a->limits.cores);
    if (oi__arch_has(a, "limits", "max_workgroup_invocations") && oi__arch_has(a, "limits", "max_workgroup_size"))
        for (int i = 0; i < 3; i++)
            if (a->limits.max_workgroup_size[i] > a->limits.max_workgroup_invocations)
                return oi__arch_fail("limits", "max_workgroup_size",
                                     "[%d] = %llu is more than limits.max_workgroup_invocations (%llu)", i,
                                     (unsigned long long)a->limits.max_workgroup_size[i],
                                     (unsigned long long)a->limits.max_workgroup_invocations);
    if (a->preferences.default_precision == OI__ARCH_FP16 && oi__arch_has(a, "features", "fp16") &&
        !a->features.fp16) {
        char *w = oi__strdup("$.preferences.default_precision: \"fp16\" but features.fp16 is false: f16 storage, "
                             "f32 arithmetic");
        if (!w || !arrput(a->warnings, w)) {
            oi__free(w);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return OI_OK;
}

oi_status oi__device_arch_parse_mode(const char *json, bool strict, oi__device_arch *out) {
    if (!out)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi__device_arch_parse: no output");
    memset(out, 0, sizeof *out);
    if (!json)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "device JSON: no text");
    oi__json *root = oi__json_parse(json, strlen(json));
    if (!root) {
        oi__error_prefix("device JSON");
        return oi__last_status(OI_ERROR_FORMAT);
    }
    oi_status s = root->type == OI__JSON_OBJECT
                      ? OI_OK
                      : oi__fail(OI_ERROR_FORMAT, "device JSON: $: expected an object, found %s",
                                 oi__arch_type_word(root->type));
    if (s == OI_OK) {
        oi__arch_defaults(out);
        s = out->device.vendor && out->device.name && out->device.architecture && out->device.driver
                ? OI_OK
                : OI_ERROR_OUT_OF_MEMORY;
    }
    if (s == OI_OK)
        s = oi__arch_read_fields(out, root);
    if (s == OI_OK)
        s = oi__arch_unknown_keys(out, root, strict);
    if (s == OI_OK)
        s = oi__arch_cross_checks(out);
    oi__json_free(root);
    return s;
}

oi_status oi__device_arch_parse(const char *json, oi__device_arch *out) {
    return oi__device_arch_parse_mode(json, false, out);
}

void oi__device_arch_free(oi__device_arch *a) {
    if (!a)
        return;
    oi__free(a->device.vendor);
    oi__free(a->device.name);
    oi__free(a->device.architecture);
    oi__free(a->device.driver);
    for (ptrdiff_t i = 0; i < arrlen(a->features.isa); i++)
        oi__free(a->features.isa[i]);
    arrfree(a->features.isa);
    for (ptrdiff_t i = 0; i < arrlen(a->unknown); i++) {
        oi__free(a->unknown[i].section);
        oi__free(a->unknown[i].key);
        oi__free(a->unknown[i].json);
    }
    arrfree(a->unknown);
    for (ptrdiff_t i = 0; i < arrlen(a->warnings); i++)
        oi__free(a->warnings[i]);
    arrfree(a->warnings);
    memset(a, 0, sizeof *a);
}

void oi__device_arch_mark(oi__device_arch *a, const char *section, const char *key) {
    size_t i = 0;
    if (oi__arch_find(section, key, &i))
        a->present |= UINT64_C(1) << i;
}

/* ---- the writer ---- */
static void oi__arch_put_value(oi__buf *b, const oi__device_arch *a, const oi__arch_field *f) {
    const void *m = oi__arch_cmember(a, f);
    switch (f->kind) {
    case OI__AK_STRING: oi__buf_json_string(b, *(char *const *)m ? *(char *const *)m : ""); break;
    case OI__AK_ENUM: oi__buf_json_string(b, f->names[*(const int *)m]); break;
    case OI__AK_BOOL: oi__buf_puts(b, *(const bool *)m ? "true" : "false"); break;
    case OI__AK_U64: oi__buf_printf(b, "%llu", (unsigned long long)*(const uint64_t *)m); break;
    case OI__AK_U64X3: {
        const uint64_t *v = (const uint64_t *)m;
        oi__buf_printf(b, "[%llu, %llu, %llu]", (unsigned long long)v[0], (unsigned long long)v[1],
                       (unsigned long long)v[2]);
        break;
    }
    case OI__AK_STRINGS: {
        char *const *list = *(char **const *)m;
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < arrlen(list); i++) {
            oi__buf_puts(b, i ? ", " : "");
            oi__buf_json_string(b, list[i]);
        }
        oi__buf_puts(b, "]");
        break;
    }
    }
}

/* "key": value lines of one section (known fields, then kept keys). */
static void oi__arch_put_section(oi__buf *b, const oi__device_arch *a, const char *section, bool *first) {
    bool opened = false;
    for (size_t i = 0; i <= OI__ARCH_FIELD_COUNT + (size_t)arrlen(a->unknown); i++) {
        const char *key = NULL;
        const oi__arch_field *f = NULL;
        const oi__arch_extra *e = NULL;
        if (i < OI__ARCH_FIELD_COUNT) {
            f = &oi__arch_fields[i];
            if (strcmp(f->section, section) != 0 || !(a->present >> i & 1u))
                continue;
            key = f->key;
        } else if (i < OI__ARCH_FIELD_COUNT + (size_t)arrlen(a->unknown)) {
            e = &a->unknown[i - OI__ARCH_FIELD_COUNT];
            if (strcmp(e->section, section) != 0)
                continue;
            key = e->key;
        } else {
            break;
        }
        if (!opened) {
            oi__buf_puts(b, *first ? "{\n  " : ",\n  ");
            oi__buf_json_string(b, section);
            oi__buf_puts(b, ": {\n");
            *first = false;
            opened = true;
        } else {
            oi__buf_puts(b, ",\n");
        }
        oi__buf_puts(b, "    ");
        oi__buf_json_string(b, key);
        oi__buf_puts(b, ": ");
        if (f)
            oi__arch_put_value(b, a, f);
        else
            oi__buf_puts(b, e->json);
    }
    if (opened)
        oi__buf_puts(b, "\n  }");
}

char *oi__device_arch_to_json(const oi__device_arch *a) {
    if (!a) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi__device_arch_to_json: no architecture");
        return NULL;
    }
    oi__buf b;
    memset(&b, 0, sizeof b);
    bool first = true;
    for (const char *const *s = oi__arch_sections; *s; s++)
        oi__arch_put_section(&b, a, *s, &first);
    for (ptrdiff_t i = 0; i < arrlen(a->unknown); i++) { /* unknown top-level keys */
        if (a->unknown[i].section[0])
            continue;
        oi__buf_puts(&b, first ? "{\n  " : ",\n  ");
        first = false;
        oi__buf_json_string(&b, a->unknown[i].key);
        oi__buf_puts(&b, ": ");
        oi__buf_puts(&b, a->unknown[i].json);
    }
    oi__buf_puts(&b, first ? "{}\n" : "\n}\n");
    return oi__buf_take(&b);
}
