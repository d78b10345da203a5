/* core.c - errors, the allocator hooks and small string helpers. */
#include "internal.h"

/* ---- errors: one message per thread ---- */
static OI__THREAD_LOCAL char oi__error_text[2048];
static OI__THREAD_LOCAL oi_status oi__error_status; /* of the last oi__fail */

const char *oi_last_error(void) { return oi__error_text; }
void oi_clear_error(void) {
    oi__error_text[0] = '\0';
    oi__error_status = OI_OK;
}

oi_status oi__last_status(oi_status fallback) { return oi__error_status != OI_OK ? oi__error_status : fallback; }

const char *oi_status_name(oi_status status) {
    switch (status) {
    case OI_OK: return "OI_OK";
    case OI_ERROR_INVALID_ARGUMENT: return "OI_ERROR_INVALID_ARGUMENT";
    case OI_ERROR_OUT_OF_MEMORY: return "OI_ERROR_OUT_OF_MEMORY";
    case OI_ERROR_IO: return "OI_ERROR_IO";
    case OI_ERROR_FORMAT: return "OI_ERROR_FORMAT";
    case OI_ERROR_NOT_FOUND: return "OI_ERROR_NOT_FOUND";
    case OI_ERROR_VALIDATION: return "OI_ERROR_VALIDATION";
    case OI_ERROR_RUNTIME: return "OI_ERROR_RUNTIME";
    case OI_ERROR_UNSUPPORTED: return "OI_ERROR_UNSUPPORTED";
    case OI_ERROR_UNAVAILABLE: return "OI_ERROR_UNAVAILABLE";
    }
    return "OI_ERROR_UNKNOWN";
}

oi_status oi__failv(oi_status status, const char *fmt, va_list args) {
    vsnprintf(oi__error_text, sizeof oi__error_text, fmt, args);
    oi__error_status = status;
    return status;
}

oi_status oi__fail(oi_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    oi__failv(status, fmt, args);
    va_end(args);
    return status;
}

void oi__error_prefix(const char *fmt, ...) {
    char prefix[512], old[sizeof oi__error_text];
    va_list args;
    va_start(args, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, args);
    va_end(args);
    memcpy(old, oi__error_text, sizeof old);
    size_t n = strlen(prefix);
    memcpy(oi__error_text, prefix, n);
    memcpy(oi__error_text + n, ": ", 2);
    size_t room = sizeof oi__error_text - n - 3;
    size_t old_len = 0;
    while (old_len < room && old[old_len])
        old_len++;
    memcpy(oi__error_text + n + 2, old, old_len);
    oi__error_text[n + 2 + old_len] = '\0';
}

void oi__panic(oi_status status, const char *file, int line, const char *what) {
    fprintf(stderr, "%s:%d: %s failed (%s): %s\n", file, line, what, oi_status_name(status), oi_last_error());
    abort();
}

/* ---- allocator hooks ---- */
static oi_allocator oi__allocator; /* zero: libc */

oi_status oi_set_allocator(const oi_allocator *allocator) {
    if (allocator && (!allocator->realloc_fn) != (!allocator->free_fn))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_set_allocator: set both realloc_fn and free_fn, or neither");
    if (allocator)
        oi__allocator = *allocator;
    else
        memset(&oi__allocator, 0, sizeof oi__allocator);
    return OI_OK;
}

void *oi__realloc(void *ptr, size_t size) {
    void *out = oi__allocator.realloc_fn ? oi__allocator.realloc_fn(ptr, size, oi__allocator.user_data)
                                         : realloc(ptr, size);
    if (!out && size)
        oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory (%zu bytes)", size);
    return out;
}

void oi__free(void *ptr) {
    if (!ptr)
        return;
    if (oi__allocator.free_fn)
        oi__allocator.free_fn(ptr, oi__allocator.user_data);
    else
        free(ptr);
}

void oi_free(void *ptr) { oi__free(ptr); }

/* ---- stb_ds with allocation failures (see internal.h) ----
 * Arrays grow here, with a checked realloc. A hash-map put in stb_ds may
 * allocate a new hash index and a copy of the key without checking: those
 * blocks are allocated here first, kept in `oi__ds_stash`, and handed out by
 * oi__ds_realloc (STBDS_REALLOC) when stb_ds asks for exactly that size. */
typedef struct oi__ds_block { void *ptr; size_t size; } oi__ds_block;
static OI__THREAD_LOCAL oi__ds_block oi__ds_stash[3];

/* stb_ds seeds every new hash table from one global it updates without a
 * lock (stbds_hash_seed): making a table is serialized by this spin lock,
 * taken by oi__ds_hm_room/oi__ds_sh_new and dropped by oi__ds_release. */
static int oi__ds_seed_lock;
static OI__THREAD_LOCAL bool oi__ds_seed_held;

static void oi__ds_seed_take(void) {
    while (__atomic_exchange_n(&oi__ds_seed_lock, 1, __ATOMIC_ACQUIRE))
        ;
    oi__ds_seed_held = true;
}

void *oi__ds_realloc(void *ptr, size_t size) {
    if (!ptr)
        for (int i = 0; i < 3; i++)
            if (oi__ds_stash[i].ptr && oi__ds_stash[i].size == size) {
                void *out = oi__ds_stash[i].ptr;
                oi__ds_stash[i].ptr = NULL;
                return out;
            }
    return oi__realloc(ptr, size);
}

void oi__ds_release(void) {
    for (int i = 0; i < 3; i++) {
        oi__free(oi__ds_stash[i].ptr);
        oi__ds_stash[i].ptr = NULL;
    }
    if (oi__ds_seed_held) {
        oi__ds_seed_held = false;
        __atomic_store_n(&oi__ds_seed_lock, 0, __ATOMIC_RELEASE);
    }
}

static bool oi__ds_stash_block(size_t size) {
    for (int i = 0; i < 3; i++)
        if (!oi__ds_stash[i].ptr) {
            oi__ds_stash[i].ptr = oi__realloc(NULL, size);
            oi__ds_stash[i].size = size;
            if (!oi__ds_stash[i].ptr) {
                oi__ds_release();
                return false;
            }
            return true;
        }
    oi__ds_release();
    return oi__fail(OI_ERROR_OUT_OF_MEMORY, "internal: stb_ds stash is full") == OI_OK;
}

/* Pointers travel through memcpy: array_slot is the address of a T*. */
static void *oi__ds_get(const void *slot) {
    void *p;
    memcpy(&p, slot, sizeof p);
    return p;
}
static void oi__ds_set(void *slot, void *p) { memcpy(slot, &p, sizeof p); }

bool oi__ds_room(void *array_slot, size_t elem_size, size_t more) {
    void *a = oi__ds_get(array_slot);
    size_t len = a ? stbds_header(a)->length : 0, cap = a ? stbds_header(a)->capacity : 0;
    if (more == 0 || (a && more <= cap - len))
        return true;
    if (more > SIZE_MAX / 2 - len) {
        oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory (an array of %zu + %zu elements)", len, more);
        return false;
    }
    size_t want = len + more;
    size_t new_cap = cap * 2 > want ? cap * 2 : want;
    if (new_cap < 4)
        new_cap = 4;
    if (new_cap > (SIZE_MAX - sizeof(stbds_array_header)) / elem_size) {
        oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory (an array of %zu elements of %zu bytes)", want, elem_size);
        return false;
    }
    stbds_array_header *h =
        (stbds_array_header *)oi__realloc(a ? stbds_header(a) : NULL, sizeof *h + new_cap * elem_size);
    if (!h)
        return false; /* the old array is untouched */
    if (!a) {
        h->length = 0;
        h->hash_table = NULL;
        h->temp = 0;
    }
    h->capacity = new_cap;
    oi__ds_set(array_slot, h + 1);
    return true;
}

bool oi__ds_fit(void *array_slot, size_t elem_size, size_t total) {
    void *a = oi__ds_get(array_slot);
    size_t len = a ? stbds_header(a)->length : 0;
    return oi__ds_room(array_slot, elem_size, total > len ? total - len : 0);
}

/* The size stb_ds's hash index of `slots` slots takes (stbds_make_hash_index). */
static size_t oi__ds_index_bytes(size_t slots) {
    return (slots >> STBDS_BUCKET_SHIFT) * sizeof(stbds_hash_bucket) + sizeof(stbds_hash_index) +
           STBDS_CACHE_LINE_SIZE - 1;
}

bool oi__ds_hm_room(void *map_slot, size_t elem_size, const char *key) {
    void *t = oi__ds_get(map_slot);
    void *raw = t ? (char *)t - elem_size : NULL;
    if (!raw) { /* the map's default entry, as stb_ds makes it */
        if (!oi__ds_room(&raw, elem_size, 1))
            return false;
        memset(raw, 0, elem_size);
        stbds_header(raw)->length = 1;
    }
    bool ok = oi__ds_room(&raw, elem_size, 1); /* the new entry */
    oi__ds_set(map_slot, (char *)raw + elem_size);
    if (!ok)
        return false;
    stbds_hash_index *index = (stbds_hash_index *)stbds_header(raw)->hash_table;
    if ((!index || index->used_count >= index->used_count_threshold) &&
        !oi__ds_stash_block(oi__ds_index_bytes(index ? index->slot_count * 2 : STBDS_BUCKET_LENGTH)))
        return false;
    if (key && index && index->string.mode == STBDS_SH_STRDUP && !oi__ds_stash_block(strlen(key) + 1))
        return false;
    if (!index) /* stb_ds makes a new table: it takes a seed */
        oi__ds_seed_take();
    return true;
}

bool oi__ds_sh_new(void *map_slot, size_t elem_size) {
    /* stbds_shmode_func: an array of capacity 4 and an index of 8 slots */
    if (!oi__ds_stash_block(sizeof(stbds_array_header) + 4 * elem_size) ||
        !oi__ds_stash_block(oi__ds_index_bytes(STBDS_BUCKET_LENGTH)))
        return false;
    oi__ds_seed_take();
    oi__ds_set(map_slot, stbds_shmode_func(elem_size, STBDS_SH_STRDUP));
    oi__ds_release();
    return true;
}

ptrdiff_t oi__ds_find(const void *map, size_t elem_size, size_t key_size, const char *key) {
    ptrdiff_t index = -1;
    if (map && key)
        stbds_hmget_key_ts((void *)map, elem_size, (void *)key, key_size, &index, STBDS_HM_STRING);
    return index;
}

void *oi__malloc(size_t size) { return oi__realloc(NULL, size ? size : 1); }

void *oi__calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) {
        oi__fail(OI_ERROR_OUT_OF_MEMORY, "allocation of %zu x %zu bytes overflows", count, size);
        return NULL;
    }
    size_t total = count * size;
    void *out = oi__malloc(total);
    if (out)
        memset(out, 0, total > 0 ? total : 1);
    return out;
}

char *oi__strndup(const char *text, size_t len) {
    char *out = (char *)oi__malloc(len + 1);
    if (out) {
        memcpy(out, text, len);
        out[len] = '\0';
    }
    return out;
}

char *oi__strdup(const char *text) { return text ? oi__strndup(text, strlen(text)) : NULL; }

char *oi__sprintf(const char *fmt, ...) {
    va_list args, copy;
    va_start(args, fmt);
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    char *out = n < 0 ? NULL : (char *)oi__malloc((size_t)n + 1);
    if (out)
        vsnprintf(out, (size_t)n + 1, fmt, copy);
    va_end(copy);
    return out;
}

/* ---- growable string ---- */
void oi__buf_append(oi__buf *b, const char *text, size_t len) {
    if (b->failed)
        return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *grown = (char *)oi__realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void oi__buf_puts(oi__buf *b, const char *text) { oi__buf_append(b, text, strlen(text)); }

void oi__buf_printf(oi__buf *b, const char *fmt, ...) {
    char small[256];
    va_list args, copy;
    va_start(args, fmt);
    va_copy(copy, args);
    int n = vsnprintf(small, sizeof small, fmt, args);
    va_end(args);
    if (n >= 0 && (size_t)n < sizeof small) {
        oi__buf_append(b, small, (size_t)n);
    } else if (n >= 0) {
        char *big = (char *)oi__malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, copy);
            oi__buf_append(b, big, (size_t)n);
            oi__free(big);
        } else {
            b->failed = true;
        }
    }
    va_end(copy);
}

void oi__buf_json_string(oi__buf *b, const char *text) {
    oi__buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)text; p && *p; p++) {
        switch (*p) {
        case '"': oi__buf_puts(b, "\\\""); break;
        case '\\': oi__buf_puts(b, "\\\\"); break;
        case '\n': oi__buf_puts(b, "\\n"); break;
        case '\r': oi__buf_puts(b, "\\r"); break;
        case '\t': oi__buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20)
                oi__buf_printf(b, "\\u%04x", *p);
            else
                oi__buf_append(b, (const char *)p, 1);
        }
    }
    oi__buf_puts(b, "\"");
}

/* The shortest text that reads back as the same finite double, with ".0"
 * on whole numbers so it reads back as a float: 0.01, 6.0, -1e-06. */
void oi__buf_finite_double(oi__buf *b, double value) {
    char text[40];
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, value);
        if (strtod(text, NULL) == value)
            break;
    }
    oi__buf_puts(b, text);
    if (!strpbrk(text, ".eE"))
        oi__buf_puts(b, ".0");
}

char *oi__buf_take(oi__buf *b) {
    if (!b->data)
        oi__buf_append(b, "", 0);
    if (b->failed) {
        oi__buf_free(b);
        oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory while building text");
        return NULL;
    }
    char *out = b->data;
    memset(b, 0, sizeof *b);
    return out;
}

void oi__buf_free(oi__buf *b) {
    oi__free(b->data);
    memset(b, 0, sizeof *b);
}
