/* oinf.c - the .oinf model container: a reader that validates the header
 * and every table on open and hands out tensor payloads lazily, and a
 * writer that produces the canonical layout (docs/oinf.md).
 *
 * Layout: [header 69 B, padded to 72][size vars][metadata][tensor index]
 * [data: metadata payloads, then per tensor its data and its quant blob].
 * Everything is little-endian; section starts and payloads are 8-aligned.
 * The reader never trusts a count, length or offset before checking it
 * against the bytes that are really there. */
#include "internal.h"

#if defined(__unix__) || defined(__APPLE__)
#define OI__OINF_HAVE_MMAP 1
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#define OI__OINF_MAGIC_BYTES 5       /* "OINF\0"                         */
#define OI__OINF_HEADER_BYTES 69u    /* the packed header                */
#define OI__OINF_HEADER_PADDED 72u   /* where the first table may start  */
#define OI__OINF_QUANT_HEADER 48u    /* fixed part of a quant payload    */
#define OI__OINF_HAS_DATA 1u
#define OI__OINF_HAS_QUANT 2u

static const uint8_t oi__oinf_magic[OI__OINF_MAGIC_BYTES] = {'O', 'I', 'N', 'F', 0};

/* ------------------------------------------------------------------ */
/* Small helpers shared by reader and writer                           */
/* ------------------------------------------------------------------ */
static uint32_t oi__oinf_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t oi__oinf_get_u64(const uint8_t *p) {
    return (uint64_t)oi__oinf_get_u32(p) | (uint64_t)oi__oinf_get_u32(p + 4) << 32;
}

static void oi__oinf_put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void oi__oinf_put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Callers keep v far below UINT64_MAX (sizes already bounded). */
static uint64_t oi__oinf_align8(uint64_t v) { return (v + 7u) & ~(uint64_t)7u; }

/* ^[A-Za-z0-9._-]+$ over len bytes. */
static bool oi__oinf_name_ok(const char *text, size_t len) {
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

/* Product of dims; false when it does not fit 64 bits. */
static bool oi__oinf_numel(uint32_t ndim, const uint64_t *dims, uint64_t *out) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndim; i++) {
        if (dims[i] != 0 && n > UINT64_MAX / dims[i]) {
            /* a later zero dim would still make it 0 */
            for (uint32_t j = i + 1; j < ndim; j++)
                if (dims[j] == 0) {
                    *out = 0;
                    return true;
                }
            return false;
        }
        n *= dims[i];
    }
    *out = n;
    return true;
}

/* oi_dtype_nbytes with the overflow check the format needs. */
static bool oi__oinf_nbytes(oi_dtype t, uint64_t numel, uint64_t *out) {
    unsigned bits = oi_dtype_bits(t);
    if (bits == 0)
        return false;
    if (bits >= 8 && numel > UINT64_MAX / (bits / 8u))
        return false;
    if (bits < 8 && numel > (UINT64_MAX - 7u) / bits)
        return false;
    *out = oi_dtype_nbytes(t, numel);
    return true;
}

/* A dtype number read from a file, or OI_DTYPE_INVALID when unknown. */
static oi_dtype oi__oinf_dtype_from_code(uint32_t code) {
    return code > 0 && code < (uint32_t)OI_DTYPE_COUNT ? (oi_dtype)code : OI_DTYPE_INVALID;
}

/* Scalars and NDARRAY elements: numbers, bool, bf16, f8, packed. */
static bool oi__oinf_is_element_type(oi_dtype t) {
    return oi__dtype_is_tensor_type(t) && t != OI_DTYPE_BITSET;
}

/* "f32[2, 3]" into buf, for messages. */
static const char *oi__oinf_describe_shape(char *buf, size_t size, oi_dtype t, uint32_t ndim, const uint64_t *dims) {
    const char *name = oi_dtype_name(t);
    int n = snprintf(buf, size, "%s[", name ? name : "?");
    for (uint32_t i = 0; i < ndim && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
    return buf;
}

/* The quantization rules of the format (docs/oinf.md); NULL if q fits a
 * tensor with these dims, else why not. */
static const char *oi__oinf_quant_problem(const oi_quant *q, uint32_t ndim, const uint64_t *dims) {
    if (q->scheme != OI_QUANT_SYMMETRIC && q->scheme != OI_QUANT_ASYMMETRIC)
        return "scheme must be 1 (symmetric) or 2 (asymmetric)";
    if (q->scale_mode == OI_QUANT_PER_TENSOR) {
        if (q->scale_axis != 0 || q->scale_count != 1)
            return "a per-tensor scale needs scale_axis 0 and scale_count 1";
    } else if (q->scale_mode == OI_QUANT_PER_CHANNEL) {
        if (q->scale_axis >= ndim)
            return "per-channel scale_axis is not below ndim";
        if (q->scale_count != dims[q->scale_axis])
            return "per-channel scale_count differs from the size of scale_axis";
    } else {
        return "scale_mode must be 1 (per_tensor) or 2 (per_channel)";
    }
    if (q->zp_mode == OI_QUANT_NONE) {
        if (q->zp_count != 0)
            return "zero-point mode none needs zp_count 0";
    } else if (q->zp_mode == OI_QUANT_PER_TENSOR) {
        if (q->scale_mode != OI_QUANT_PER_TENSOR)
            return "a per-tensor zero point needs a per-tensor scale";
        if (q->zp_axis != 0 || q->zp_count != 1)
            return "a per-tensor zero point needs zp_axis 0 and zp_count 1";
    } else if (q->zp_mode == OI_QUANT_PER_CHANNEL) {
        if (q->scale_mode != OI_QUANT_PER_CHANNEL)
            return "a per-channel zero point needs a per-channel scale";
        if (q->zp_axis != q->scale_axis)
            return "per-channel zp_axis differs from scale_axis";
        if (q->zp_count != dims[q->zp_axis])
            return "per-channel zp_count differs from the size of zp_axis";
    } else {
        return "zp_mode must be 0 (none), 1 (per_tensor) or 2 (per_channel)";
    }
    if (q->scheme == OI_QUANT_SYMMETRIC && q->zp_mode != OI_QUANT_NONE)
        return "symmetric quantization cannot have a zero point";
    return NULL;
}

/* A string -> index map (stb_ds, keys copied). */
typedef struct oi__oinf_name_index {
    char *key;
    size_t value;
} oi__oinf_name_index;

/* The entry index of `name`, or -1. (stb_ds lookups write a scratch slot
 * through the map pointer, so they take a copy of it, not a const field.) */
static ptrdiff_t oi__oinf_lookup(oi__oinf_name_index *index, const char *name) { return shgeti(index, name); }

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */
typedef struct oi__oinf_sizevar {
    char *name;
    uint64_t value;
} oi__oinf_sizevar;

/* Lazy-loading bookkeeping: mutable behind a const oi_model. */
typedef struct oi__oinf_lazy {
    bool *loaded; /* per tensor: payload handed out */
    size_t count;
} oi__oinf_lazy;

struct oi_model {
    const uint8_t *bytes;
    uint64_t size;
    void *mapping; /* owned mmap (munmap on close), or NULL */
    size_t mapping_size;
    uint8_t *owned_bytes; /* the file read into memory where mmap is missing */
    char *origin;         /* file name for messages */
    uint32_t version;
    uint64_t offset_data;
    oi__oinf_sizevar *sizevars;  /* stb array */
    oi_metadata_info *metadata;  /* stb array; keys owned */
    oi_tensor_info *tensors;     /* stb array; names, dims, quant values owned */
    oi__oinf_name_index *sizevar_index, *metadata_index, *tensor_index;
    oi__oinf_lazy *lazy;
};

/* A bounded walk over one table: every read is checked against `end`. */
typedef struct oi__oinf_cursor {
    const oi_model *model;
    uint64_t pos, end;
    const char *table; /* "size variable table" */
} oi__oinf_cursor;

/* Records "origin: message" as an OI_ERROR_FORMAT (or other) failure. */
static oi_status oi__oinf_fail(const oi_model *m, oi_status status, const char *fmt, ...) OI__PRINTF(3, 4);
static oi_status oi__oinf_fail(const oi_model *m, oi_status status, const char *fmt, ...) {
    char text[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    return oi__fail(status, "%s: %s", m->origin ? m->origin : "<memory>", text);
}

/* Points *out at the next n bytes of the table, or fails naming `what`. */
static oi_status oi__oinf_take(oi__oinf_cursor *c, uint64_t n, const uint8_t **out, const char *entry,
                               const char *what) {
    if (n > c->end - c->pos)
        return oi__oinf_fail(c->model, OI_ERROR_FORMAT,
                             "%s: %s (%llu bytes at byte %llu) runs past the end of the %s (byte %llu)", entry, what,
                             (unsigned long long)n, (unsigned long long)c->pos, c->table,
                             (unsigned long long)c->end);
    *out = c->model->bytes + c->pos;
    c->pos += n;
    return OI_OK;
}

static oi_status oi__oinf_read_u32(oi__oinf_cursor *c, uint32_t *out, const char *entry, const char *what) {
    const uint8_t *p = NULL;
    oi_status s = oi__oinf_take(c, 4, &p, entry, what);
    if (s == OI_OK)
        *out = oi__oinf_get_u32(p);
    return s;
}

static oi_status oi__oinf_read_u64(oi__oinf_cursor *c, uint64_t *out, const char *entry, const char *what) {
    const uint8_t *p = NULL;
    oi_status s = oi__oinf_take(c, 8, &p, entry, what);
    if (s == OI_OK)
        *out = oi__oinf_get_u64(p);
    return s;
}

/* A name: u32 length, bytes, zero padding to a multiple of 8 (counted
 * from the length field). Checked, unique in `index`, copied to *out. */
static oi_status oi__oinf_read_name(oi__oinf_cursor *c, oi__oinf_name_index *index, const char *entry, char **out) {
    uint64_t at = c->pos;
    uint32_t len;
    const uint8_t *text = NULL;
    oi_status s = oi__oinf_read_u32(c, &len, entry, "name length");
    if (s != OI_OK)
        return s;
    if (len == 0)
        return oi__oinf_fail(c->model, OI_ERROR_FORMAT, "%s: empty name (length 0 at byte %llu)", entry,
                             (unsigned long long)at);
    c->pos = at;
    s = oi__oinf_take(c, oi__oinf_align8(4u + (uint64_t)len), &text, entry, "name");
    if (s != OI_OK)
        return s;
    text += 4;
    if (!oi__oinf_name_ok((const char *)text, len))
        return oi__oinf_fail(c->model, OI_ERROR_FORMAT,
                             "%s: name '%.*s' at byte %llu has characters outside [A-Za-z0-9._-]", entry,
                             len > 64u ? 64 : (int)len, (const char *)text, (unsigned long long)at);
    char *name = oi__strndup((const char *)text, len);
    if (!name)
        return OI_ERROR_OUT_OF_MEMORY;
    if (oi__oinf_lookup(index, name) >= 0) {
        s = oi__oinf_fail(c->model, OI_ERROR_FORMAT, "%s: duplicate name '%s' at byte %llu", entry, name,
                          (unsigned long long)at);
        oi__free(name);
        return s;
    }
    *out = name;
    return OI_OK;
}

/* An offset/size pair of a payload: aligned, in the data section, inside
 * the file. `field` names the offset field, `field_at` where it is. */
static oi_status oi__oinf_check_span(const oi_model *m, const char *entry, const char *field, uint64_t field_at,
                                     uint64_t offset, uint64_t nbytes) {
    if (offset % 8 != 0)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: %s %llu (field at byte %llu) is not a multiple of 8", entry,
                             field, (unsigned long long)offset, (unsigned long long)field_at);
    if (offset < m->offset_data)
        return oi__oinf_fail(m, OI_ERROR_FORMAT,
                             "%s: %s %llu (field at byte %llu) lies before the data section (offset_data %llu)",
                             entry, field, (unsigned long long)offset, (unsigned long long)field_at,
                             (unsigned long long)m->offset_data);
    if (offset > m->size || nbytes > m->size - offset)
        return oi__oinf_fail(m, OI_ERROR_FORMAT,
                             "%s: %s %llu + %llu bytes (field at byte %llu) runs past the end of the file (%llu bytes)",
                             entry, field, (unsigned long long)offset, (unsigned long long)nbytes,
                             (unsigned long long)field_at, (unsigned long long)m->size);
    return OI_OK;
}

/* ---- header ---- */
static oi_status oi__oinf_parse_header(oi_model *m, uint32_t counts[3], uint64_t offsets[5]) {
    static const char *const offset_names[5] = {"offset_sizevars", "offset_metadata", "offset_tensors",
                                                "offset_data", "file_size"};
    const uint8_t *h = m->bytes;
    if (m->size < OI__OINF_HEADER_BYTES)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: file is %llu bytes, shorter than the %u-byte header (truncated)",
                             (unsigned long long)m->size, OI__OINF_HEADER_BYTES);
    if (memcmp(h, oi__oinf_magic, OI__OINF_MAGIC_BYTES) != 0)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: bad magic at byte 0 (want \"OINF\\0\"): not an .oinf file");
    m->version = oi__oinf_get_u32(h + 5);
    if (m->version != 1 && m->version != 2)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: version %u at byte 5 is not supported (we read 1 and 2)",
                             m->version);
    uint32_t flags = oi__oinf_get_u32(h + 9);
    if (flags != 0)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: flags 0x%x at byte 9 must be 0", flags);
    for (int i = 0; i < 3; i++)
        counts[i] = oi__oinf_get_u32(h + 13 + 4 * i);
    uint32_t reserved = oi__oinf_get_u32(h + 25);
    if (reserved != 0)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: reserved field at byte 25 is %u, must be 0", reserved);
    for (int i = 0; i < 5; i++)
        offsets[i] = oi__oinf_get_u64(h + 29 + 8 * i);
    if (offsets[4] != m->size)
        return oi__oinf_fail(m, OI_ERROR_FORMAT,
                             "header: file_size %llu (byte 61) differs from the real length %llu (truncated or padded)",
                             (unsigned long long)offsets[4], (unsigned long long)m->size);
    if (offsets[0] < OI__OINF_HEADER_PADDED)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: offset_sizevars %llu (byte 29) overlaps the header (< %u)",
                             (unsigned long long)offsets[0], OI__OINF_HEADER_PADDED);
    for (int i = 0; i < 4; i++) {
        if (offsets[i] > offsets[i + 1])
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: %s %llu (byte %d) is greater than %s %llu: offsets out of order",
                                 offset_names[i], (unsigned long long)offsets[i], 29 + 8 * i, offset_names[i + 1],
                                 (unsigned long long)offsets[i + 1]);
        if (offsets[i] % 8 != 0)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "header: %s %llu (byte %d) is not a multiple of 8", offset_names[i],
                                 (unsigned long long)offsets[i], 29 + 8 * i);
    }
    m->offset_data = offsets[3];
    return OI_OK;
}

/* ---- size variables ---- */
static oi_status oi__oinf_parse_sizevars(oi_model *m, uint32_t count, uint64_t start, uint64_t end) {
    oi__oinf_cursor c = {m, start, end, "size variable table"};
    for (uint32_t i = 0; i < count; i++) {
        char entry[64];
        snprintf(entry, sizeof entry, "size variable #%u", i);
        oi__oinf_sizevar sv = {NULL, 0};
        oi_status s = oi__oinf_read_name(&c, m->sizevar_index, entry, &sv.name);
        if (s != OI_OK)
            return s;
        if (!arrput(m->sizevars, sv)) {
            oi__free(sv.name);
            return oi__oinf_fail(m, OI_ERROR_OUT_OF_MEMORY, "%s: out of memory", entry);
        }
        if (!shput(m->sizevar_index, sv.name, (size_t)arrlen(m->sizevars) - 1))
            return oi__oinf_fail(m, OI_ERROR_OUT_OF_MEMORY, "%s: out of memory", entry);
        s = oi__oinf_read_u64(&c, &arrlast(m->sizevars).value, entry, "value");
        if (s != OI_OK)
            return s;
    }
    return OI_OK;
}

/* ---- metadata ---- */
/* Checks a metadata payload against its type: payload = nbytes bytes. */
static oi_status oi__oinf_check_metadata_payload(const oi_model *m, const char *entry, oi_dtype type,
                                                 const uint8_t *p, uint64_t nbytes) {
    const char *type_name = oi_dtype_name(type);
    if (type == OI_DTYPE_STRING) {
        if (nbytes < 4)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: string payload of %llu bytes has no length field", entry,
                                 (unsigned long long)nbytes);
        uint64_t want = oi__oinf_align8(4u + (uint64_t)oi__oinf_get_u32(p));
        if (nbytes != want)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: string of %u bytes needs value_nbytes %llu, not %llu", entry,
                                 oi__oinf_get_u32(p), (unsigned long long)want, (unsigned long long)nbytes);
        return OI_OK;
    }
    if (type == OI_DTYPE_BITSET) {
        if (nbytes < 8)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: bitset payload of %llu bytes has no counts", entry,
                                 (unsigned long long)nbytes);
        uint64_t bit_count = oi__oinf_get_u32(p), byte_count = oi__oinf_get_u32(p + 4);
        if (byte_count != (bit_count + 7u) / 8u)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: bitset of %llu bits needs byte_count %llu, not %llu", entry,
                                 (unsigned long long)bit_count, (unsigned long long)((bit_count + 7u) / 8u),
                                 (unsigned long long)byte_count);
        if (nbytes != oi__oinf_align8(8u + byte_count))
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: bitset of %llu bytes needs value_nbytes %llu, not %llu",
                                 entry, (unsigned long long)byte_count,
                                 (unsigned long long)oi__oinf_align8(8u + byte_count), (unsigned long long)nbytes);
        return OI_OK;
    }
    if (type == OI_DTYPE_NDARRAY) {
        if (nbytes < 8)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: ndarray payload of %llu bytes has no header", entry,
                                 (unsigned long long)nbytes);
        uint32_t code = oi__oinf_get_u32(p), ndim = oi__oinf_get_u32(p + 4);
        oi_dtype element = oi__oinf_dtype_from_code(code);
        if (!oi__oinf_is_element_type(element))
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: ndarray element type %u is not a numeric, bool or packed type",
                                 entry, code);
        if ((uint64_t)ndim > (nbytes - 8u) / 8u)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: ndarray dims (ndim %u) run past its %llu-byte payload",
                                 entry, ndim, (unsigned long long)nbytes);
        uint64_t numel = 1, data_nbytes = 0;
        for (uint32_t i = 0; i < ndim; i++) {
            uint64_t d = oi__oinf_get_u64(p + 8 + 8 * (uint64_t)i);
            if (d != 0 && numel > UINT64_MAX / d)
                return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: ndarray dims overflow 64 bits", entry);
            numel *= d;
        }
        uint64_t head = 8u + 8u * (uint64_t)ndim;
        if (!oi__oinf_nbytes(element, numel, &data_nbytes) || data_nbytes > nbytes - head)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: ndarray of %llu %s elements does not fit its %llu-byte payload",
                                 entry, (unsigned long long)numel, oi_dtype_name(element), (unsigned long long)nbytes);
        if (nbytes != oi__oinf_align8(head + data_nbytes))
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: ndarray needs value_nbytes %llu, not %llu", entry,
                                 (unsigned long long)oi__oinf_align8(head + data_nbytes), (unsigned long long)nbytes);
        return OI_OK;
    }
    uint64_t want = oi_dtype_nbytes(type, 1);
    if (nbytes != want)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: a %s scalar needs value_nbytes %llu, not %llu", entry, type_name,
                             (unsigned long long)want, (unsigned long long)nbytes);
    return OI_OK;
}

static oi_status oi__oinf_parse_metadata(oi_model *m, uint32_t count, uint64_t start, uint64_t end) {
    oi__oinf_cursor c = {m, start, end, "metadata table"};
    for (uint32_t i = 0; i < count; i++) {
        char entry[128];
        snprintf(entry, sizeof entry, "metadata #%u", i);
        oi_metadata_info info;
        memset(&info, 0, sizeof info);
        char *key = NULL;
        oi_status s = oi__oinf_read_name(&c, m->metadata_index, entry, &key);
        if (s != OI_OK)
            return s;
        info.key = key;
        if (!arrput(m->metadata, info)) {
            oi__free(key);
            return oi__oinf_fail(m, OI_ERROR_OUT_OF_MEMORY, "%s: out of memory", entry);
        }
        if (!shput(m->metadata_index, key, (size_t)arrlen(m->metadata) - 1))
            return oi__oinf_fail(m, OI_ERROR_OUT_OF_MEMORY, "%s: out of memory", entry);
        snprintf(entry, sizeof entry, "metadata '%s'", key);
        const uint8_t *fields = NULL;
        uint64_t fields_at = c.pos;
        s = oi__oinf_take(&c, 24, &fields, entry, "value_type, value_flags, value_nbytes, value_offset");
        if (s != OI_OK)
            return s;
        uint32_t code = oi__oinf_get_u32(fields), flags = oi__oinf_get_u32(fields + 4);
        uint64_t nbytes = oi__oinf_get_u64(fields + 8), offset = oi__oinf_get_u64(fields + 16);
        oi_dtype type = oi__oinf_dtype_from_code(code);
        if (type == OI_DTYPE_INVALID)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: unknown value_type %u (byte %llu)", entry, code,
                                 (unsigned long long)fields_at);
        if (flags != 0)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: value_flags 0x%x (byte %llu) must be 0", entry, flags,
                                 (unsigned long long)(fields_at + 4));
        s = oi__oinf_check_span(m, entry, "value_offset", fields_at + 16, offset, nbytes);
        if (s == OI_OK)
            s = oi__oinf_check_metadata_payload(m, entry, type, m->bytes + offset, nbytes);
        if (s != OI_OK)
            return s;
        arrlast(m->metadata).type = type;
        arrlast(m->metadata).nbytes = nbytes;
        arrlast(m->metadata).payload = m->bytes + offset;
    }
    return OI_OK;
}

/* ---- tensors ---- */
/* Reads and checks a v2 quant payload into t->quant (values copied so
 * they are aligned and host-endian). */
static oi_status oi__oinf_parse_quant(const oi_model *m, const char *entry, oi_tensor_info *t, uint64_t field_at,
                                      uint64_t offset, uint64_t nbytes) {
    oi_status s = oi__oinf_check_span(m, entry, "quant_offset", field_at, offset, nbytes);
    if (s != OI_OK)
        return s;
    if (nbytes < OI__OINF_QUANT_HEADER)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: quant_nbytes %llu is smaller than the %u-byte quant header", entry,
                             (unsigned long long)nbytes, OI__OINF_QUANT_HEADER);
    const uint8_t *p = m->bytes + offset;
    uint32_t scheme = oi__oinf_get_u32(p), scale_mode = oi__oinf_get_u32(p + 4), zp_mode = oi__oinf_get_u32(p + 8);
    uint32_t reserved = oi__oinf_get_u32(p + 12);
    if (scheme < 1 || scheme > 2)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: quant scheme %u (byte %llu) must be 1 or 2", entry, scheme,
                             (unsigned long long)offset);
    if (scale_mode < 1 || scale_mode > 2)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: quant scale_mode %u (byte %llu) must be 1 or 2", entry,
                             scale_mode, (unsigned long long)(offset + 4));
    if (zp_mode > 2)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: quant zp_mode %u (byte %llu) must be 0, 1 or 2", entry, zp_mode,
                             (unsigned long long)(offset + 8));
    if (reserved != 0)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: quant reserved field (byte %llu) is %u, must be 0", entry,
                             (unsigned long long)(offset + 12), reserved);
    oi_quant *q = &t->quant;
    q->scheme = (oi_quant_scheme)scheme;
    q->scale_mode = (oi_quant_mode)scale_mode;
    q->zp_mode = (oi_quant_mode)zp_mode;
    q->scale_axis = oi__oinf_get_u64(p + 16);
    q->scale_count = oi__oinf_get_u64(p + 24);
    q->zp_axis = oi__oinf_get_u64(p + 32);
    q->zp_count = oi__oinf_get_u64(p + 40);
    uint64_t room = (nbytes - OI__OINF_QUANT_HEADER) / 4u;
    if (q->scale_count > room || q->zp_count > room - q->scale_count ||
        nbytes != oi__oinf_align8(OI__OINF_QUANT_HEADER + 4u * (q->scale_count + q->zp_count)))
        return oi__oinf_fail(m, OI_ERROR_FORMAT,
                             "%s: quant_nbytes %llu does not match scale_count %llu and zp_count %llu", entry,
                             (unsigned long long)nbytes, (unsigned long long)q->scale_count,
                             (unsigned long long)q->zp_count);
    const char *why = oi__oinf_quant_problem(q, t->ndim, t->dims);
    if (why)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: quant payload at byte %llu: %s", entry,
                             (unsigned long long)offset, why);
    /* counts are bounded by the payload, so these allocations are too */
    float *scales = (float *)oi__calloc((size_t)q->scale_count, sizeof(float));
    int32_t *zps = q->zp_count ? (int32_t *)oi__calloc((size_t)q->zp_count, sizeof(int32_t)) : NULL;
    q->scales = scales;
    q->zero_points = zps;
    if (!scales || (q->zp_count && !zps))
        return OI_ERROR_OUT_OF_MEMORY;
    const uint8_t *values = p + OI__OINF_QUANT_HEADER;
    for (uint64_t i = 0; i < q->scale_count; i++) {
        uint32_t bits = oi__oinf_get_u32(values + 4 * i);
        memcpy(&scales[i], &bits, sizeof bits);
    }
    values += 4 * q->scale_count;
    for (uint64_t i = 0; i < q->zp_count; i++)
        zps[i] = (int32_t)oi__oinf_get_u32(values + 4 * i);
    return OI_OK;
}

/* dtype, ndim, flags, dims of one entry into t (dims allocated). */
static oi_status oi__oinf_parse_tensor_shape(oi__oinf_cursor *c, const char *entry, oi_tensor_info *t,
                                             uint32_t *flags) {
    const oi_model *m = c->model;
    uint64_t at = c->pos;
    const uint8_t *fields = NULL;
    oi_status s = oi__oinf_take(c, 12, &fields, entry, "dtype, ndim, flags");
    if (s != OI_OK)
        return s;
    uint32_t code = oi__oinf_get_u32(fields), ndim = oi__oinf_get_u32(fields + 4);
    *flags = oi__oinf_get_u32(fields + 8);
    oi_dtype dtype = oi__oinf_dtype_from_code(code);
    if (dtype == OI_DTYPE_INVALID)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: unknown dtype %u (byte %llu)", entry, code,
                             (unsigned long long)at);
    if (!oi__dtype_is_tensor_type(dtype))
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: dtype %u (%s, byte %llu) is not allowed for tensors", entry, code,
                             oi_dtype_name(dtype), (unsigned long long)at);
    uint32_t allowed = m->version == 1 ? OI__OINF_HAS_DATA : (OI__OINF_HAS_DATA | OI__OINF_HAS_QUANT);
    if (*flags & ~allowed)
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: flags 0x%x (byte %llu) has bits other than %s", entry, *flags,
                             (unsigned long long)(at + 8), m->version == 1 ? "HAS_DATA (version 1)" : "HAS_DATA|HAS_QUANT");
    const uint8_t *dims_bytes = NULL;
    s = oi__oinf_take(c, 8u * (uint64_t)ndim, &dims_bytes, entry, "dims");
    if (s != OI_OK)
        return s;
    if (ndim > OI_MAX_DIMS)
        return oi__oinf_fail(m, OI_ERROR_UNSUPPORTED, "%s: ndim %u (byte %llu) is more than OI_MAX_DIMS (%d)", entry,
                             ndim, (unsigned long long)(at + 4), OI_MAX_DIMS);
    uint64_t *dims = (uint64_t *)oi__calloc(ndim ? ndim : 1u, sizeof(uint64_t));
    if (!dims)
        return OI_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < ndim; i++)
        dims[i] = oi__oinf_get_u64(dims_bytes + 8 * i);
    t->dims = dims;
    t->dtype = dtype;
    t->ndim = ndim;
    if (!oi__oinf_numel(ndim, dims, &t->numel)) {
        char shape[256];
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: %s has more elements than fit 64 bits (dims at byte %llu)", entry,
                             oi__oinf_describe_shape(shape, sizeof shape, dtype, ndim, dims),
                             (unsigned long long)(at + 12));
    }
    return OI_OK;
}

static oi_status oi__oinf_parse_tensor(oi__oinf_cursor *c, oi_tensor_info *t, const char *entry) {
    const oi_model *m = c->model;
    uint32_t flags = 0;
    oi_status s = oi__oinf_parse_tensor_shape(c, entry, t, &flags);
    if (s != OI_OK)
        return s;
    uint64_t fields_at = c->pos;
    const uint8_t *fields = NULL;
    s = oi__oinf_take(c, m->version == 1 ? 16u : 32u, &fields, entry,
                      m->version == 1 ? "data_nbytes, data_offset" : "data_nbytes, data_offset, quant fields");
    if (s != OI_OK)
        return s;
    t->data_nbytes = oi__oinf_get_u64(fields);
    t->data_offset = oi__oinf_get_u64(fields + 8);
    t->has_data = (flags & OI__OINF_HAS_DATA) != 0;
    t->has_quant = (flags & OI__OINF_HAS_QUANT) != 0;
    if (!t->has_data && (t->data_nbytes != 0 || t->data_offset != 0))
        return oi__oinf_fail(m, OI_ERROR_FORMAT,
                             "%s: no HAS_DATA flag but data_nbytes %llu / data_offset %llu (byte %llu) are not 0", entry,
                             (unsigned long long)t->data_nbytes, (unsigned long long)t->data_offset,
                             (unsigned long long)fields_at);
    uint64_t want;
    char shape[256];
    if (!oi__oinf_nbytes(t->dtype, t->numel, &want)) /* declared tensors too: the runtime allocates them */
        return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: %s needs more bytes than fit 64 bits", entry,
                             oi__oinf_describe_shape(shape, sizeof shape, t->dtype, t->ndim, t->dims));
    if (t->has_data) {
        if (t->data_nbytes != want)
            return oi__oinf_fail(m, OI_ERROR_FORMAT, "%s: data_nbytes %llu (byte %llu) but %s needs %llu", entry,
                                 (unsigned long long)t->data_nbytes, (unsigned long long)fields_at,
                                 oi__oinf_describe_shape(shape, sizeof shape, t->dtype, t->ndim, t->dims),
                                 (unsigned long long)want);
        s = oi__oinf_check_span(m, entry, "data_offset", fields_at + 8, t->data_offset, t->data_nbytes);
        if (s != OI_OK)
            return s;
    }
    if (m->version == 1)
        return OI_OK;
    uint64_t quant_nbytes = oi__oinf_get_u64(fields + 16), quant_offset = oi__oinf_get_u64(fields + 24);
    if (!t->has_quant) {
        if (quant_nbytes != 0 || quant_offset != 0)
            return oi__oinf_fail(m, OI_ERROR_FORMAT,
                                 "%s: no HAS_QUANT flag but quant_nbytes %llu / quant_offset %llu (byte %llu) are not 0",
                                 entry, (unsigned long long)quant_nbytes, (unsigned long long)quant_offset,
                                 (unsigned long long)(fields_at + 16));
        return OI_OK;
    }
    return oi__oinf_parse_quant(m, entry, t, fields_at + 24, quant_offset, quant_nbytes);
}

static oi_status oi__oinf_parse_tensors(oi_model *m, uint32_t count, uint64_t start, uint64_t end) {
    oi__oinf_cursor c = {m, start, end, "tensor table"};
    for (uint32_t i = 0; i < count; i++) {
        char entry[128];
        snprintf(entry, sizeof entry, "tensor #%u", i);
        oi_tensor_info info;
        memset(&info, 0, sizeof info);
        char *name = NULL;
        oi_status s = oi__oinf_read_name(&c, m->tensor_index, entry, &name);
        if (s != OI_OK)
            return s;
        info.name = name;
        if (!arrput(m->tensors, info)) { /* owned from here on, freed on close */
            oi__free(name);
            return oi__oinf_fail(m, OI_ERROR_OUT_OF_MEMORY, "%s: out of memory", entry);
        }
        if (!shput(m->tensor_index, name, (size_t)arrlen(m->tensors) - 1))
            return oi__oinf_fail(m, OI_ERROR_OUT_OF_MEMORY, "%s: out of memory", entry);
        snprintf(entry, sizeof entry, "tensor '%s'", name);
        s = oi__oinf_parse_tensor(&c, &arrlast(m->tensors), entry);
        if (s != OI_OK)
            return s;
    }
    return OI_OK;
}

static oi_status oi__oinf_parse(oi_model *m) {
    uint32_t counts[3];
    uint64_t offsets[5];
    oi_status s = oi__oinf_parse_header(m, counts, offsets);
    if (s == OI_OK)
        s = oi__oinf_parse_sizevars(m, counts[0], offsets[0], offsets[1]);
    if (s == OI_OK)
        s = oi__oinf_parse_metadata(m, counts[1], offsets[1], offsets[2]);
    if (s == OI_OK)
        s = oi__oinf_parse_tensors(m, counts[2], offsets[2], offsets[3]);
    if (s != OI_OK)
        return s;
    m->lazy = (oi__oinf_lazy *)oi__calloc(1, sizeof *m->lazy);
    if (!m->lazy)
        return OI_ERROR_OUT_OF_MEMORY;
    m->lazy->loaded = (bool *)oi__calloc((size_t)arrlen(m->tensors) + 1u, sizeof(bool));
    return m->lazy->loaded ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

void oi_model_close(oi_model *model) {
    if (!model)
        return;
    for (ptrdiff_t i = 0; i < arrlen(model->sizevars); i++)
        oi__free(model->sizevars[i].name);
    for (ptrdiff_t i = 0; i < arrlen(model->metadata); i++)
        oi__free((void *)model->metadata[i].key);
    for (ptrdiff_t i = 0; i < arrlen(model->tensors); i++) {
        oi_tensor_info *t = &model->tensors[i];
        oi__free((void *)t->name);
        oi__free((void *)t->dims);
        oi__free((void *)t->quant.scales);
        oi__free((void *)t->quant.zero_points);
    }
    arrfree(model->sizevars);
    arrfree(model->metadata);
    arrfree(model->tensors);
    shfree(model->sizevar_index);
    shfree(model->metadata_index);
    shfree(model->tensor_index);
    if (model->lazy)
        oi__free(model->lazy->loaded);
    oi__free(model->lazy);
#ifdef OI__OINF_HAVE_MMAP
    if (model->mapping)
        munmap(model->mapping, model->mapping_size);
#endif
    oi__free(model->owned_bytes);
    oi__free(model->origin);
    oi__free(model);
}

static oi_model *oi__oinf_model_new(const char *origin) {
    oi_model *m = (oi_model *)oi__calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->origin = oi__strdup(origin);
    if (!m->origin || !sh_new_strdup(m->sizevar_index) || !sh_new_strdup(m->metadata_index) ||
        !sh_new_strdup(m->tensor_index)) {
        oi_model_close(m);
        return NULL;
    }
    return m;
}

/* Validates and indexes m->bytes; closes m on failure. */
static oi_status oi__oinf_finish_open(oi_model *m, oi_model **out) {
    oi_status s = oi__oinf_parse(m);
    if (s != OI_OK) {
        oi_model_close(m);
        *out = NULL;
        return s;
    }
    *out = m;
    return OI_OK;
}

oi_status oi__model_open_bytes(const void *bytes, size_t size, const char *origin, oi_model **out) {
    *out = NULL;
    if (!bytes && size)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_open_memory: bytes is NULL but size is %zu", size);
    oi_model *m = oi__oinf_model_new(origin ? origin : "<memory>");
    if (!m)
        return OI_ERROR_OUT_OF_MEMORY;
    m->bytes = (const uint8_t *)bytes;
    m->size = size;
    return oi__oinf_finish_open(m, out);
}

/* Maps (or, without mmap, reads) the whole file into m. */
static oi_status oi__oinf_load_file(oi_model *m, const char *path) {
#ifdef OI__OINF_HAVE_MMAP
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return oi__fail(OI_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return oi__fail(OI_ERROR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return oi__fail(OI_ERROR_IO, "%s: %llu bytes do not fit this machine's address space", path,
                        (unsigned long long)st.st_size);
    }
    m->size = (uint64_t)st.st_size;
    if (st.st_size > 0) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            close(fd);
            return oi__fail(OI_ERROR_IO, "%s: cannot map: %s", path, strerror(errno));
        }
        m->mapping = map;
        m->mapping_size = (size_t)st.st_size;
        m->bytes = (const uint8_t *)map;
    }
    close(fd);
    return OI_OK;
#else
    FILE *f = fopen(path, "rb");
    if (!f)
        return oi__fail(OI_ERROR_IO, "%s: cannot open", path);
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return oi__fail(OI_ERROR_IO, "%s: cannot determine the file size", path);
    }
    m->owned_bytes = (uint8_t *)oi__malloc((size_t)len);
    if (!m->owned_bytes || fread(m->owned_bytes, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        return m->owned_bytes ? oi__fail(OI_ERROR_IO, "%s: read failed", path) : OI_ERROR_OUT_OF_MEMORY;
    }
    fclose(f);
    m->bytes = m->owned_bytes;
    m->size = (uint64_t)len;
    return OI_OK;
#endif
}

oi_status oi__model_open_file(const char *path, oi_model **out) {
    *out = NULL;
    if (!path)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_open: path is NULL");
    oi_model *m = oi__oinf_model_new(path);
    if (!m)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status s = oi__oinf_load_file(m, path);
    if (s != OI_OK) {
        oi_model_close(m);
        return s;
    }
    return oi__oinf_finish_open(m, out);
}

oi_model *oi_model_open(const char *path) {
    oi_model *m = NULL;
    oi__model_open_file(path, &m);
    return m;
}

oi_model *oi_model_open_memory(const void *bytes, size_t size) {
    oi_model *m = NULL;
    oi__model_open_bytes(bytes, size, "<memory>", &m);
    return m;
}

/* ---- accessors ---- */
uint32_t oi_model_version(const oi_model *model) { return model ? model->version : 0; }

size_t oi_model_sizevar_count(const oi_model *model) { return model ? (size_t)arrlen(model->sizevars) : 0; }

oi_status oi_model_sizevar_at(const oi_model *model, size_t index, const char **name, uint64_t *value) {
    if (!model || index >= (size_t)arrlen(model->sizevars))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_sizevar_at: index %zu is out of range", index);
    if (name)
        *name = model->sizevars[index].name;
    if (value)
        *value = model->sizevars[index].value;
    return OI_OK;
}

oi_status oi_model_size_of(const oi_model *model, const char *name, uint64_t *out) {
    if (!model || !name || !out)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_size_of: model, name and out must not be NULL");
    ptrdiff_t i = oi__oinf_lookup(model->sizevar_index, name);
    if (i < 0)
        return oi__oinf_fail(model, OI_ERROR_NOT_FOUND, "no size variable '%s'", name);
    *out = model->sizevars[model->sizevar_index[i].value].value;
    return OI_OK;
}

size_t oi_model_metadata_count(const oi_model *model) { return model ? (size_t)arrlen(model->metadata) : 0; }

const oi_metadata_info *oi_model_metadata_at(const oi_model *model, size_t index) {
    if (!model || index >= (size_t)arrlen(model->metadata)) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_metadata_at: index %zu is out of range", index);
        return NULL;
    }
    return &model->metadata[index];
}

const oi_metadata_info *oi_model_find_metadata(const oi_model *model, const char *key) {
    if (!model || !key) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_find_metadata: model and key must not be NULL");
        return NULL;
    }
    ptrdiff_t i = oi__oinf_lookup(model->metadata_index, key);
    if (i < 0) {
        oi__oinf_fail(model, OI_ERROR_NOT_FOUND, "no metadata '%s'", key);
        return NULL;
    }
    return &model->metadata[model->metadata_index[i].value];
}

oi_status oi_model_metadata_string(const oi_model *model, const char *key, const char **text, size_t *len) {
    if (!text || !len)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_metadata_string: text and len must not be NULL");
    const oi_metadata_info *info = oi_model_find_metadata(model, key);
    if (!info)
        return model && key ? OI_ERROR_NOT_FOUND : OI_ERROR_INVALID_ARGUMENT;
    if (info->type != OI_DTYPE_STRING)
        return oi__oinf_fail(model, OI_ERROR_INVALID_ARGUMENT, "metadata '%s' is %s, not string", key,
                             oi_dtype_name(info->type));
    const uint8_t *p = (const uint8_t *)info->payload;
    *len = (size_t)oi__oinf_get_u32(p); /* checked against nbytes on open */
    *text = (const char *)p + 4;
    return OI_OK;
}

size_t oi_model_tensor_count(const oi_model *model) { return model ? (size_t)arrlen(model->tensors) : 0; }

const oi_tensor_info *oi_model_tensor_at(const oi_model *model, size_t index) {
    if (!model || index >= (size_t)arrlen(model->tensors)) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_tensor_at: index %zu is out of range", index);
        return NULL;
    }
    return &model->tensors[index];
}

const oi_tensor_info *oi_model_find_tensor(const oi_model *model, const char *name) {
    if (!model || !name) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_find_tensor: model and name must not be NULL");
        return NULL;
    }
    ptrdiff_t i = oi__oinf_lookup(model->tensor_index, name);
    if (i < 0) {
        oi__oinf_fail(model, OI_ERROR_NOT_FOUND, "no tensor '%s'", name);
        return NULL;
    }
    return &model->tensors[model->tensor_index[i].value];
}

oi_status oi_model_tensor_data(const oi_model *model, const oi_tensor_info *tensor, const void **data) {
    if (data)
        *data = NULL;
    if (!model || !tensor || !data)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_model_tensor_data: model, tensor and data must not be NULL");
    ptrdiff_t count = arrlen(model->tensors);
    if (count == 0 || tensor < model->tensors || tensor >= model->tensors + count)
        return oi__oinf_fail(model, OI_ERROR_INVALID_ARGUMENT, "oi_model_tensor_data: tensor '%s' is not from this model",
                             tensor->name ? tensor->name : "?");
    if (!tensor->has_data)
        return oi__oinf_fail(model, OI_ERROR_NOT_FOUND, "tensor '%s' is declared without data", tensor->name);
    size_t index = (size_t)(tensor - model->tensors);
    /* atomic: threads sharing the model read tensors at the same time */
    if (!__atomic_exchange_n(&model->lazy->loaded[index], true, __ATOMIC_ACQ_REL))
        __atomic_add_fetch(&model->lazy->count, 1, __ATOMIC_ACQ_REL);
    *data = model->bytes + tensor->data_offset;
    return OI_OK;
}

size_t oi_model_loaded_tensor_count(const oi_model *model) {
    return model && model->lazy ? __atomic_load_n(&model->lazy->count, __ATOMIC_ACQUIRE) : 0;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */
typedef struct oi__oinf_wsizevar {
    char *name; /* first member: the sort key */
    uint64_t value;
} oi__oinf_wsizevar;

typedef struct oi__oinf_wmeta {
    char *key;
    oi_dtype type;
    uint8_t *blob; /* the payload, exactly nbytes (zero padding added on write) */
    uint64_t nbytes;
} oi__oinf_wmeta;

typedef struct oi__oinf_wtensor {
    char *name;
    oi_dtype dtype;
    uint32_t ndim;
    uint64_t dims[OI_MAX_DIMS];
    bool has_data;
    uint8_t *data;
    uint64_t data_nbytes;
    uint8_t *quant; /* the encoded quant payload, or NULL */
    uint64_t quant_nbytes;
} oi__oinf_wtensor;

struct oi_writer {
    oi__oinf_wsizevar *sizevars; /* stb arrays, in insertion order */
    oi__oinf_wmeta *metadata;
    oi__oinf_wtensor *tensors;
    oi__oinf_name_index *sizevar_names, *metadata_keys, *tensor_names;
};

oi_writer *oi_writer_new(void) {
    oi_writer *w = (oi_writer *)oi__calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (!sh_new_strdup(w->sizevar_names) || !sh_new_strdup(w->metadata_keys) || !sh_new_strdup(w->tensor_names)) {
        oi_writer_free(w);
        return NULL;
    }
    return w;
}

void oi_writer_free(oi_writer *w) {
    if (!w)
        return;
    for (ptrdiff_t i = 0; i < arrlen(w->sizevars); i++)
        oi__free(w->sizevars[i].name);
    for (ptrdiff_t i = 0; i < arrlen(w->metadata); i++) {
        oi__free(w->metadata[i].key);
        oi__free(w->metadata[i].blob);
    }
    for (ptrdiff_t i = 0; i < arrlen(w->tensors); i++) {
        oi__free(w->tensors[i].name);
        oi__free(w->tensors[i].data);
        oi__free(w->tensors[i].quant);
    }
    arrfree(w->sizevars);
    arrfree(w->metadata);
    arrfree(w->tensors);
    shfree(w->sizevar_names);
    shfree(w->metadata_keys);
    shfree(w->tensor_names);
    oi__free(w);
}

/* A name that can go into table `names` (checked, not yet added). */
static oi_status oi__oinf_check_new_name(const char *fn, oi__oinf_name_index *names, const char *what,
                                         const char *name) {
    if (!name)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s name is NULL", fn, what);
    size_t len = strlen(name);
    if (len > UINT32_MAX - 8u || !oi__oinf_name_ok(name, len))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s name '%s' is empty or has characters outside [A-Za-z0-9._-]",
                        fn, what, name);
    if (oi__oinf_lookup(names, name) >= 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: %s '%s' was already added", fn, what, name);
    return OI_OK;
}

oi_status oi_writer_add_sizevar(oi_writer *w, const char *name, uint64_t value) {
    if (!w)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_writer_add_sizevar: writer is NULL");
    oi_status s = oi__oinf_check_new_name("oi_writer_add_sizevar", w->sizevar_names, "size variable", name);
    if (s != OI_OK)
        return s;
    oi__oinf_wsizevar sv;
    sv.name = oi__strdup(name);
    sv.value = value;
    if (!sv.name)
        return OI_ERROR_OUT_OF_MEMORY;
    if (!arrput(w->sizevars, sv)) {
        oi__free(sv.name);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!shput(w->sizevar_names, name, (size_t)arrlen(w->sizevars) - 1)) {
        oi__free(arrpop(w->sizevars).name);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

/* Takes ownership of blob (freed on failure). */
static oi_status oi__oinf_add_metadata(oi_writer *w, const char *key, oi_dtype type, uint8_t *blob,
                                       uint64_t nbytes) {
    oi__oinf_wmeta meta;
    meta.key = oi__strdup(key);
    meta.type = type;
    meta.blob = blob;
    meta.nbytes = nbytes;
    if (!meta.key) {
        oi__free(blob);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!arrput(w->metadata, meta)) {
        oi__free(meta.key);
        oi__free(blob);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!shput(w->metadata_keys, key, (size_t)arrlen(w->metadata) - 1)) {
        arrpop(w->metadata);
        oi__free(meta.key);
        oi__free(blob);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

static oi_status oi__oinf_check_metadata_args(oi_writer *w, const char *fn, const char *key) {
    if (!w)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: writer is NULL", fn);
    return oi__oinf_check_new_name(fn, w->metadata_keys, "metadata", key);
}

oi_status oi_writer_add_metadata_scalar(oi_writer *w, const char *key, oi_dtype type, const void *value) {
    const char *fn = "oi_writer_add_metadata_scalar";
    oi_status s = oi__oinf_check_metadata_args(w, fn, key);
    if (s != OI_OK)
        return s;
    if (!oi__oinf_is_element_type(type))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': type %d is not a numeric, bool or packed scalar type", fn,
                        key, (int)type);
    if (!value)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': value is NULL", fn, key);
    uint64_t nbytes = oi_dtype_nbytes(type, 1);
    uint8_t *blob = (uint8_t *)oi__malloc((size_t)nbytes);
    if (!blob)
        return OI_ERROR_OUT_OF_MEMORY;
    memcpy(blob, value, (size_t)nbytes);
    /* canonical bytes: bool is 0/1, a packed scalar keeps only its low bits */
    if (type == OI_DTYPE_BOOL)
        blob[0] = blob[0] != 0;
    else if (oi__dtype_is_packed(type))
        blob[0] &= (uint8_t)((1u << oi_dtype_bits(type)) - 1u);
    return oi__oinf_add_metadata(w, key, type, blob, nbytes);
}

oi_status oi_writer_add_metadata_string(oi_writer *w, const char *key, const char *text, size_t len) {
    const char *fn = "oi_writer_add_metadata_string";
    oi_status s = oi__oinf_check_metadata_args(w, fn, key);
    if (s != OI_OK)
        return s;
    if ((!text && len) || (uint64_t)len > UINT32_MAX - 8u)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': text is NULL or longer than 4 GiB", fn, key);
    uint64_t nbytes = oi__oinf_align8(4u + (uint64_t)len);
    uint8_t *blob = (uint8_t *)oi__calloc((size_t)nbytes, 1);
    if (!blob)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__oinf_put_u32(blob, (uint32_t)len);
    if (len)
        memcpy(blob + 4, text, len);
    return oi__oinf_add_metadata(w, key, OI_DTYPE_STRING, blob, nbytes);
}

oi_status oi_writer_add_metadata_bitset(oi_writer *w, const char *key, const uint8_t *bits, uint32_t bit_count) {
    const char *fn = "oi_writer_add_metadata_bitset";
    oi_status s = oi__oinf_check_metadata_args(w, fn, key);
    if (s != OI_OK)
        return s;
    if (!bits && bit_count)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': bits is NULL", fn, key);
    uint64_t byte_count = ((uint64_t)bit_count + 7u) / 8u;
    uint64_t nbytes = oi__oinf_align8(8u + byte_count);
    uint8_t *blob = (uint8_t *)oi__calloc((size_t)nbytes, 1);
    if (!blob)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__oinf_put_u32(blob, bit_count);
    oi__oinf_put_u32(blob + 4, (uint32_t)byte_count);
    if (byte_count) {
        memcpy(blob + 8, bits, (size_t)byte_count);
        if (bit_count % 8) /* bits past bit_count are zero in canonical files */
            blob[8 + byte_count - 1] &= (uint8_t)((1u << (bit_count % 8)) - 1u);
    }
    return oi__oinf_add_metadata(w, key, OI_DTYPE_BITSET, blob, nbytes);
}

oi_status oi_writer_add_metadata_ndarray(oi_writer *w, const char *key, oi_dtype element_type, uint32_t ndim,
                                         const uint64_t *dims, const void *data) {
    const char *fn = "oi_writer_add_metadata_ndarray";
    oi_status s = oi__oinf_check_metadata_args(w, fn, key);
    if (s != OI_OK)
        return s;
    if (!oi__oinf_is_element_type(element_type))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': element type %d is not a numeric, bool or packed type", fn,
                        key, (int)element_type);
    if (ndim && !dims)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': dims is NULL", fn, key);
    uint64_t numel, data_nbytes;
    if (!oi__oinf_numel(ndim, dims, &numel) || !oi__oinf_nbytes(element_type, numel, &data_nbytes) ||
        data_nbytes > (uint64_t)SIZE_MAX / 2u || ndim > (uint32_t)(SIZE_MAX / 64u))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': the array is too large", fn, key);
    if (data_nbytes && !data)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: '%s': data is NULL", fn, key);
    uint64_t head = 8u + 8u * (uint64_t)ndim;
    uint64_t nbytes = oi__oinf_align8(head + data_nbytes);
    uint8_t *blob = (uint8_t *)oi__calloc((size_t)nbytes, 1);
    if (!blob)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__oinf_put_u32(blob, (uint32_t)element_type);
    oi__oinf_put_u32(blob + 4, ndim);
    for (uint32_t i = 0; i < ndim; i++)
        oi__oinf_put_u64(blob + 8 + 8 * (size_t)i, dims[i]);
    if (data_nbytes)
        memcpy(blob + head, data, (size_t)data_nbytes);
    return oi__oinf_add_metadata(w, key, OI_DTYPE_NDARRAY, blob, nbytes);
}

/* Checks q against the tensor and encodes the §2.7 payload. */
static oi_status oi__oinf_encode_quant(const char *fn, const char *name, const oi_quant *q, uint32_t ndim,
                                       const uint64_t *dims, uint8_t **out, uint64_t *out_nbytes) {
    const char *why = oi__oinf_quant_problem(q, ndim, dims);
    if (why)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: tensor '%s': %s", fn, name, why);
    if ((q->scale_count && !q->scales) || (q->zp_count && !q->zero_points))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: tensor '%s': quant scales or zero_points is NULL", fn, name);
    /* counts equal 1 or a dim; a dim of a tensor whose data is in memory */
    if (q->scale_count > (uint64_t)SIZE_MAX / 16u || q->zp_count > (uint64_t)SIZE_MAX / 16u)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: tensor '%s': too many quant values", fn, name);
    uint64_t nbytes = oi__oinf_align8(OI__OINF_QUANT_HEADER + 4u * (q->scale_count + q->zp_count));
    uint8_t *blob = (uint8_t *)oi__calloc((size_t)nbytes, 1);
    if (!blob)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__oinf_put_u32(blob, (uint32_t)q->scheme);
    oi__oinf_put_u32(blob + 4, (uint32_t)q->scale_mode);
    oi__oinf_put_u32(blob + 8, (uint32_t)q->zp_mode);
    oi__oinf_put_u64(blob + 16, q->scale_axis);
    oi__oinf_put_u64(blob + 24, q->scale_count);
    oi__oinf_put_u64(blob + 32, q->zp_axis);
    oi__oinf_put_u64(blob + 40, q->zp_count);
    uint8_t *p = blob + OI__OINF_QUANT_HEADER;
    for (uint64_t i = 0; i < q->scale_count; i++, p += 4) {
        uint32_t bits;
        memcpy(&bits, &q->scales[i], sizeof bits);
        oi__oinf_put_u32(p, bits);
    }
    for (uint64_t i = 0; i < q->zp_count; i++, p += 4)
        oi__oinf_put_u32(p, (uint32_t)q->zero_points[i]);
    *out = blob;
    *out_nbytes = nbytes;
    return OI_OK;
}

oi_status oi_writer_add_tensor(oi_writer *w, const char *name, oi_dtype dtype, uint32_t ndim, const uint64_t *dims,
                               const void *data, const oi_quant *quant) {
    const char *fn = "oi_writer_add_tensor";
    if (!w)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: writer is NULL", fn);
    oi_status s = oi__oinf_check_new_name(fn, w->tensor_names, "tensor", name);
    if (s != OI_OK)
        return s;
    if (!oi__oinf_is_element_type(dtype))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: tensor '%s': dtype %d is not a tensor dtype (1-12, 16-25)", fn,
                        name, (int)dtype);
    if (ndim > OI_MAX_DIMS || (ndim && !dims))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: tensor '%s': ndim %u is above OI_MAX_DIMS or dims is NULL", fn,
                        name, ndim);
    oi__oinf_wtensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.ndim = ndim;
    for (uint32_t i = 0; i < ndim; i++)
        t.dims[i] = dims[i];
    uint64_t numel;
    if (!oi__oinf_numel(ndim, t.dims, &numel) || !oi__oinf_nbytes(dtype, numel, &t.data_nbytes) ||
        (data && t.data_nbytes > (uint64_t)SIZE_MAX / 2u))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: tensor '%s': the shape holds too many bytes", fn, name);
    t.has_data = data != NULL;
    if (!t.has_data)
        t.data_nbytes = 0;
    if (quant) {
        s = oi__oinf_encode_quant(fn, name, quant, ndim, t.dims, &t.quant, &t.quant_nbytes);
        if (s != OI_OK)
            return s;
    }
    t.name = oi__strdup(name);
    if (t.has_data) {
        t.data = (uint8_t *)oi__malloc((size_t)t.data_nbytes);
        if (t.data)
            memcpy(t.data, data, (size_t)t.data_nbytes);
    }
    if (!t.name || (t.has_data && !t.data)) {
        oi__free(t.name);
        oi__free(t.data);
        oi__free(t.quant);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    if (!arrput(w->tensors, t) || !shput(w->tensor_names, name, (size_t)arrlen(w->tensors) - 1)) {
        if (arrlen(w->tensors) && w->tensors[arrlen(w->tensors) - 1].name == t.name)
            arrpop(w->tensors);
        oi__free(t.name);
        oi__free(t.data);
        oi__free(t.quant);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

/* qsort over pointers to entries whose first member is their name. */
static int oi__oinf_compare_names(const void *a, const void *b) {
    const void *entry_a = *(const void *const *)a, *entry_b = *(const void *const *)b;
    return strcmp(*(const char *const *)entry_a, *(const char *const *)entry_b);
}

/* Pointers to `count` entries of `size` bytes, sorted by name (heap). */
static const void **oi__oinf_sorted(const void *entries, size_t count, size_t size) {
    const void **order = (const void **)oi__malloc((count ? count : 1u) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < count; i++)
        order[i] = (const uint8_t *)entries + i * size;
    if (count > 1)
        qsort(order, count, sizeof *order, oi__oinf_compare_names);
    return order;
}

static uint64_t oi__oinf_name_bytes(const char *name) { return oi__oinf_align8(4u + strlen(name)); }

static uint8_t *oi__oinf_put_name(uint8_t *p, const char *name) {
    size_t len = strlen(name);
    oi__oinf_put_u32(p, (uint32_t)len);
    memcpy(p + 4, name, len);
    return p + oi__oinf_name_bytes(name); /* the buffer is zeroed: padding done */
}

/* Where every section and payload goes (the layout policy of docs/oinf.md). */
typedef struct oi__oinf_layout {
    uint64_t offsets[5]; /* sizevars, metadata, tensors, data, file_size */
    uint64_t *meta_offset, *data_offset, *quant_offset; /* per sorted entry (heap) */
} oi__oinf_layout;

static void oi__oinf_layout_free(oi__oinf_layout *l) {
    oi__free(l->meta_offset);
    oi__free(l->data_offset);
    oi__free(l->quant_offset);
}

static oi_status oi__oinf_plan(const oi_writer *w, uint32_t version, const oi__oinf_wsizevar *const *sv,
                               const oi__oinf_wmeta *const *md, const oi__oinf_wtensor *const *ts,
                               oi__oinf_layout *l) {
    size_t n_sv = (size_t)arrlen(w->sizevars), n_md = (size_t)arrlen(w->metadata), n_t = (size_t)arrlen(w->tensors);
    l->meta_offset = (uint64_t *)oi__calloc(n_md + 1u, sizeof(uint64_t));
    l->data_offset = (uint64_t *)oi__calloc(n_t + 1u, sizeof(uint64_t));
    l->quant_offset = (uint64_t *)oi__calloc(n_t + 1u, sizeof(uint64_t));
    if (!l->meta_offset || !l->data_offset || !l->quant_offset)
        return OI_ERROR_OUT_OF_MEMORY;
    /* every size below is bounded by memory the writer holds, so the sums
     * stay far from 2^64; only the final size_t fit needs a check */
    uint64_t pos = OI__OINF_HEADER_PADDED;
    l->offsets[0] = pos;
    for (size_t i = 0; i < n_sv; i++)
        pos += oi__oinf_name_bytes(sv[i]->name) + 8u;
    l->offsets[1] = pos = oi__oinf_align8(pos);
    for (size_t i = 0; i < n_md; i++)
        pos += oi__oinf_name_bytes(md[i]->key) + 24u;
    l->offsets[2] = pos = oi__oinf_align8(pos);
    for (size_t i = 0; i < n_t; i++)
        pos += oi__oinf_name_bytes(ts[i]->name) + 12u + 8u * ts[i]->ndim + (version == 1 ? 16u : 32u);
    l->offsets[3] = pos = oi__oinf_align8(pos);
    for (size_t i = 0; i < n_md; i++) {
        l->meta_offset[i] = pos;
        pos += oi__oinf_align8(md[i]->nbytes);
    }
    /* each tensor's data, then its own quant blob: offsets follow the bytes */
    for (size_t i = 0; i < n_t; i++) {
        if (ts[i]->has_data) {
            l->data_offset[i] = pos;
            pos += oi__oinf_align8(ts[i]->data_nbytes);
        }
        if (ts[i]->quant) {
            l->quant_offset[i] = pos;
            pos += oi__oinf_align8(ts[i]->quant_nbytes);
        }
    }
    l->offsets[4] = pos;
    if (pos > (uint64_t)SIZE_MAX)
        return oi__fail(OI_ERROR_OUT_OF_MEMORY, "oi_writer_to_memory: a %llu-byte file does not fit in memory",
                        (unsigned long long)pos);
    return OI_OK;
}

static void oi__oinf_emit(uint8_t *out, uint32_t version, size_t n_sv, size_t n_md, size_t n_t,
                          const oi__oinf_wsizevar *const *sv, const oi__oinf_wmeta *const *md,
                          const oi__oinf_wtensor *const *ts, const oi__oinf_layout *l) {
    memcpy(out, oi__oinf_magic, OI__OINF_MAGIC_BYTES);
    oi__oinf_put_u32(out + 5, version);
    oi__oinf_put_u32(out + 13, (uint32_t)n_sv);
    oi__oinf_put_u32(out + 17, (uint32_t)n_md);
    oi__oinf_put_u32(out + 21, (uint32_t)n_t);
    for (int i = 0; i < 5; i++)
        oi__oinf_put_u64(out + 29 + 8 * i, l->offsets[i]);
    uint8_t *p = out + l->offsets[0];
    for (size_t i = 0; i < n_sv; i++) {
        p = oi__oinf_put_name(p, sv[i]->name);
        oi__oinf_put_u64(p, sv[i]->value);
        p += 8;
    }
    p = out + l->offsets[1];
    for (size_t i = 0; i < n_md; i++) {
        p = oi__oinf_put_name(p, md[i]->key);
        oi__oinf_put_u32(p, (uint32_t)md[i]->type);
        oi__oinf_put_u64(p + 8, md[i]->nbytes);
        oi__oinf_put_u64(p + 16, l->meta_offset[i]);
        p += 24;
        memcpy(out + l->meta_offset[i], md[i]->blob, (size_t)md[i]->nbytes);
    }
    p = out + l->offsets[2];
    for (size_t i = 0; i < n_t; i++) {
        const oi__oinf_wtensor *t = ts[i];
        uint32_t flags = (t->has_data ? OI__OINF_HAS_DATA : 0u) | (t->quant ? OI__OINF_HAS_QUANT : 0u);
        p = oi__oinf_put_name(p, t->name);
        oi__oinf_put_u32(p, (uint32_t)t->dtype);
        oi__oinf_put_u32(p + 4, t->ndim);
        oi__oinf_put_u32(p + 8, flags);
        p += 12;
        for (uint32_t d = 0; d < t->ndim; d++, p += 8)
            oi__oinf_put_u64(p, t->dims[d]);
        oi__oinf_put_u64(p, t->data_nbytes);
        oi__oinf_put_u64(p + 8, l->data_offset[i]);
        p += 16;
        if (version != 1) {
            oi__oinf_put_u64(p, t->quant_nbytes);
            oi__oinf_put_u64(p + 8, l->quant_offset[i]);
            p += 16;
        }
        if (t->has_data && t->data_nbytes)
            memcpy(out + l->data_offset[i], t->data, (size_t)t->data_nbytes);
        if (t->quant)
            memcpy(out + l->quant_offset[i], t->quant, (size_t)t->quant_nbytes);
    }
}

oi_status oi_writer_to_memory(const oi_writer *w, uint32_t version, uint8_t **bytes, size_t *size) {
    const char *fn = "oi_writer_to_memory";
    if (!w || !bytes || !size)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: writer, bytes and size must not be NULL", fn);
    *bytes = NULL;
    *size = 0;
    if (version != 1 && version != 2)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: version %u is not 1 or 2", fn, version);
    size_t n_sv = (size_t)arrlen(w->sizevars), n_md = (size_t)arrlen(w->metadata), n_t = (size_t)arrlen(w->tensors);
    if (version == 1)
        for (size_t i = 0; i < n_t; i++)
            if (w->tensors[i].quant)
                return oi__fail(OI_ERROR_UNSUPPORTED,
                                "%s: tensor '%s' has quantization, which version 1 cannot store; write version 2", fn,
                                w->tensors[i].name);
    const oi__oinf_wsizevar **sv = (const oi__oinf_wsizevar **)oi__oinf_sorted(w->sizevars, n_sv, sizeof *w->sizevars);
    const oi__oinf_wmeta **md = (const oi__oinf_wmeta **)oi__oinf_sorted(w->metadata, n_md, sizeof *w->metadata);
    const oi__oinf_wtensor **ts = (const oi__oinf_wtensor **)oi__oinf_sorted(w->tensors, n_t, sizeof *w->tensors);
    oi__oinf_layout layout;
    memset(&layout, 0, sizeof layout);
    oi_status s = (sv && md && ts) ? oi__oinf_plan(w, version, sv, md, ts, &layout) : OI_ERROR_OUT_OF_MEMORY;
    uint8_t *out = NULL;
    if (s == OI_OK) {
        out = (uint8_t *)oi__calloc((size_t)layout.offsets[4], 1);
        if (!out)
            s = OI_ERROR_OUT_OF_MEMORY;
    }
    if (s == OI_OK) {
        oi__oinf_emit(out, version, n_sv, n_md, n_t, sv, md, ts, &layout);
        *bytes = out;
        *size = (size_t)layout.offsets[4];
    }
    oi__oinf_layout_free(&layout);
    oi__free((void *)sv);
    oi__free((void *)md);
    oi__free((void *)ts);
    return s;
}

oi_status oi_writer_write_file(const oi_writer *w, uint32_t version, const char *path) {
    if (!path)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_writer_write_file: path is NULL");
    uint8_t *bytes = NULL;
    size_t size = 0;
    oi_status s = oi_writer_to_memory(w, version, &bytes, &size);
    if (s != OI_OK)
        return s;
    FILE *f = fopen(path, "wb");
    if (!f) {
        oi__free(bytes);
        return oi__fail(OI_ERROR_IO, "%s: cannot open for writing", path);
    }
    size_t written = fwrite(bytes, 1, size, f);
    int closed = fclose(f);
    oi__free(bytes);
    if (written != size || closed != 0)
        return oi__fail(OI_ERROR_IO, "%s: write failed", path);
    return OI_OK;
}

void oi__model_raw_bytes(const oi_model *m, const uint8_t **bytes, uint64_t *size, uint64_t *offset_data) {
    *bytes = m->bytes;
    *size = m->size;
    *offset_data = m->offset_data;
}
