/* json.c - a strict RFC 8259 JSON reader (shared by the graph loader, the
 * conformance runner and the device-architecture reader) and the lossless
 * graph <-> JSON conversion (schema: docs/graph-json.md). */
#include "internal.h"

#include <errno.h>
#include <math.h>

/* ================================================================== */
/* The reader                                                          */
/* ================================================================== */

/* Nesting deeper than this is refused: the reader and oi__json_free
 * recurse once per level, so the limit bounds the C stack. */
#define OI__JSON_MAX_DEPTH 256

typedef struct oi__json_reader {
    const char *text;
    size_t len, pos;
    int depth;
    bool failed;
} oi__json_reader;

/* Records "line L, column C: why" for the byte at `at` (columns count
 * bytes from 1). Only the first failure of a parse is kept. */
static void oi__json_error_at(oi__json_reader *r, size_t at, const char *why) {
    if (r->failed)
        return;
    r->failed = true;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < r->len; i++) {
        if (r->text[i] == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    oi__fail(OI_ERROR_FORMAT, "line %zu, column %zu: %s", line, column, why);
}

static void oi__json_error(oi__json_reader *r, const char *why) { oi__json_error_at(r, r->pos, why); }

static int oi__json_peek(const oi__json_reader *r) {
    return r->pos < r->len ? (unsigned char)r->text[r->pos] : -1;
}

static void oi__json_skip_space(oi__json_reader *r) {
    while (r->pos < r->len) {
        char c = r->text[r->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        r->pos++;
    }
}

static bool oi__json_literal(oi__json_reader *r, const char *word) {
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->text + r->pos, word, n) != 0) {
        oi__json_error(r, "invalid literal (expected true, false or null)");
        return false;
    }
    r->pos += n;
    return true;
}

static bool oi__json_is_digit(int c) { return c >= '0' && c <= '9'; }

static bool oi__json_number(oi__json_reader *r, oi__json *out) {
    size_t start = r->pos;
    if (oi__json_peek(r) == '-')
        r->pos++;
    if (oi__json_peek(r) == '0') {
        r->pos++;
        if (oi__json_is_digit(oi__json_peek(r))) {
            oi__json_error(r, "leading zeros are not allowed in numbers");
            return false;
        }
    } else if (oi__json_is_digit(oi__json_peek(r))) {
        while (oi__json_is_digit(oi__json_peek(r)))
            r->pos++;
    } else {
        oi__json_error(r, "invalid number (expected a digit)");
        return false;
    }
    if (oi__json_peek(r) == '.') {
        r->pos++;
        if (!oi__json_is_digit(oi__json_peek(r))) {
            oi__json_error(r, "invalid number (expected a digit after '.')");
            return false;
        }
        while (oi__json_is_digit(oi__json_peek(r)))
            r->pos++;
    }
    if (oi__json_peek(r) == 'e' || oi__json_peek(r) == 'E') {
        r->pos++;
        if (oi__json_peek(r) == '+' || oi__json_peek(r) == '-')
            r->pos++;
        if (!oi__json_is_digit(oi__json_peek(r))) {
            oi__json_error(r, "invalid number (expected a digit in the exponent)");
            return false;
        }
        while (oi__json_is_digit(oi__json_peek(r)))
            r->pos++;
    }
    out->type = OI__JSON_NUMBER;
    out->text = oi__strndup(r->text + start, r->pos - start);
    if (!out->text) {
        r->failed = true;
        return false;
    }
    /* The literal was checked above, so strtod sees only valid syntax. */
    out->number = strtod(out->text, NULL);
    return true;
}

static int oi__json_hex_digit(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits after "\u". */
static bool oi__json_hex4(oi__json_reader *r, unsigned *out) {
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        int d = oi__json_hex_digit(oi__json_peek(r));
        if (d < 0) {
            oi__json_error(r, "invalid \\u escape (expected 4 hex digits)");
            return false;
        }
        value = value * 16u + (unsigned)d;
        r->pos++;
    }
    *out = value;
    return true;
}

static void oi__json_put_utf8(oi__buf *b, unsigned cp) {
    char bytes[4];
    size_t n;
    if (cp < 0x80) {
        bytes[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        bytes[0] = (char)(0xC0 | (cp >> 6));
        bytes[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        bytes[0] = (char)(0xE0 | (cp >> 12));
        bytes[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        bytes[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        bytes[0] = (char)(0xF0 | (cp >> 18));
        bytes[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        bytes[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        bytes[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    oi__buf_append(b, bytes, n);
}

/* "\uXXXX", with a surrogate pair joined into one code point. The
 * reader stands just after the 'u'. */
static bool oi__json_unicode_escape(oi__json_reader *r, oi__buf *b) {
    size_t escape_start = r->pos - 2;
    unsigned cp;
    if (!oi__json_hex4(r, &cp))
        return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        oi__json_error_at(r, escape_start, "invalid \\u escape (lone low surrogate)");
        return false;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned low;
        if (r->len - r->pos < 2 || r->text[r->pos] != '\\' || r->text[r->pos + 1] != 'u') {
            oi__json_error_at(r, escape_start, "invalid \\u escape (high surrogate without a low surrogate)");
            return false;
        }
        r->pos += 2;
        if (!oi__json_hex4(r, &low))
            return false;
        if (low < 0xDC00 || low > 0xDFFF) {
            oi__json_error_at(r, escape_start, "invalid \\u escape (high surrogate without a low surrogate)");
            return false;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp == 0) {
        /* Our strings are NUL-terminated: an embedded NUL would truncate. */
        oi__json_error_at(r, escape_start, "\\u0000 is not supported in strings");
        return false;
    }
    oi__json_put_utf8(b, cp);
    return true;
}

/* Length of the valid UTF-8 sequence at p (0 if invalid): no overlongs,
 * no surrogates, nothing above U+10FFFF. */
static size_t oi__json_utf8_length(const unsigned char *p, size_t avail) {
    unsigned c = p[0];
    size_t n;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static bool oi__json_escape(oi__json_reader *r, oi__buf *b) {
    int c = oi__json_peek(r);
    r->pos++;
    switch (c) {
    case '"': oi__buf_puts(b, "\""); return true;
    case '\\': oi__buf_puts(b, "\\"); return true;
    case '/': oi__buf_puts(b, "/"); return true;
    case 'b': oi__buf_puts(b, "\b"); return true;
    case 'f': oi__buf_puts(b, "\f"); return true;
    case 'n': oi__buf_puts(b, "\n"); return true;
    case 'r': oi__buf_puts(b, "\r"); return true;
    case 't': oi__buf_puts(b, "\t"); return true;
    case 'u': return oi__json_unicode_escape(r, b);
    default:
        oi__json_error_at(r, r->pos - 2, "invalid escape in string");
        return false;
    }
}

/* Reads a string (the reader stands on the opening quote) into *out. */
static bool oi__json_string_text(oi__json_reader *r, char **out) {
    size_t start = r->pos;
    oi__buf b;
    memset(&b, 0, sizeof b);
    r->pos++;
    for (;;) {
        if (r->pos >= r->len) {
            oi__buf_free(&b);
            oi__json_error_at(r, start, "unterminated string");
            return false;
        }
        unsigned char c = (unsigned char)r->text[r->pos];
        if (c == '"') {
            r->pos++;
            break;
        }
        if (c == '\\') {
            r->pos++;
            if (!oi__json_escape(r, &b)) {
                oi__buf_free(&b);
                return false;
            }
            continue;
        }
        if (c < 0x20) {
            oi__buf_free(&b);
            oi__json_error(r, "control character in string (escape it)");
            return false;
        }
        size_t n = oi__json_utf8_length((const unsigned char *)r->text + r->pos, r->len - r->pos);
        if (n == 0) {
            oi__buf_free(&b);
            oi__json_error(r, "invalid UTF-8 in string");
            return false;
        }
        oi__buf_append(&b, r->text + r->pos, n);
        r->pos += n;
    }
    *out = oi__buf_take(&b);
    if (!*out) {
        r->failed = true;
        return false;
    }
    return true;
}

static bool oi__json_value(oi__json_reader *r, oi__json *out);

static void oi__json_free_contents(oi__json *json);

static bool oi__json_array(oi__json_reader *r, oi__json *out) {
    out->type = OI__JSON_ARRAY;
    r->pos++; /* '[' */
    oi__json_skip_space(r);
    if (oi__json_peek(r) == ']') {
        r->pos++;
        return true;
    }
    for (;;) {
        oi__json item;
        memset(&item, 0, sizeof item);
        bool ok = oi__json_value(r, &item);
        if (!arrput(out->items, item)) { /* kept even when partial, so it is freed */
            oi__json_free_contents(&item);
            r->failed = true; /* out of memory: oi__realloc said so */
            return false;
        }
        if (!ok)
            return false;
        oi__json_skip_space(r);
        int c = oi__json_peek(r);
        if (c == ',') {
            r->pos++;
            oi__json_skip_space(r);
            if (oi__json_peek(r) == ']') {
                oi__json_error(r, "trailing comma in array");
                return false;
            }
            continue;
        }
        if (c == ']') {
            r->pos++;
            return true;
        }
        oi__json_error(r, c < 0 ? "unterminated array (expected ',' or ']')" : "expected ',' or ']' in array");
        return false;
    }
}

/* Duplicate keys are refused: they make a document ambiguous. */
static bool oi__json_has_key(const oi__json *object, const char *key) {
    for (ptrdiff_t i = 0; i < arrlen(object->keys); i++)
        if (strcmp(object->keys[i], key) == 0)
            return true;
    return false;
}

/* Large objects check duplicates through a hash set instead of a scan. */
typedef struct oi__json_key_set { char *key; int value; } oi__json_key_set;

static bool oi__json_object(oi__json_reader *r, oi__json *out) {
    oi__json_key_set *seen = NULL;
    bool ok = false;
    out->type = OI__JSON_OBJECT;
    r->pos++; /* '{' */
    oi__json_skip_space(r);
    if (oi__json_peek(r) == '}') {
        r->pos++;
        return true;
    }
    for (;;) {
        oi__json_skip_space(r);
        if (oi__json_peek(r) != '"') {
            oi__json_error(r, oi__json_peek(r) < 0 ? "unterminated object (expected a key)"
                                                   : "expected a string key in object");
            break;
        }
        size_t key_pos = r->pos;
        char *key = NULL;
        if (!oi__json_string_text(r, &key))
            break;
        bool duplicate;
        if (arrlen(out->keys) < 16) {
            duplicate = oi__json_has_key(out, key);
        } else {
            bool room = true;
            if (!seen) {
                room = sh_new_strdup(seen);
                for (ptrdiff_t i = 0; room && i < arrlen(out->keys); i++)
                    room = shput(seen, out->keys[i], 1);
            }
            duplicate = room && shgeti(seen, key) >= 0;
            if (!room || !shput(seen, key, 1)) {
                oi__free(key);
                r->failed = true; /* out of memory */
                break;
            }
        }
        if (duplicate) {
            oi__free(key);
            oi__json_error_at(r, key_pos, "duplicate key in object");
            break;
        }
        oi__json item;
        memset(&item, 0, sizeof item);
        if (!arrput(out->keys, key)) {
            oi__free(key);
            r->failed = true; /* out of memory */
            break;
        }
        oi__json_skip_space(r);
        if (oi__json_peek(r) != ':') {
            arrput(out->items, item);
            oi__json_error(r, "expected ':' after object key");
            break;
        }
        r->pos++;
        bool value_ok = oi__json_value(r, &item);
        if (!arrput(out->items, item)) {
            oi__json_free_contents(&item);
            r->failed = true; /* out of memory */
            break;
        }
        if (!value_ok)
            break;
        oi__json_skip_space(r);
        int c = oi__json_peek(r);
        if (c == ',') {
            r->pos++;
            oi__json_skip_space(r);
            if (oi__json_peek(r) == '}') {
                oi__json_error(r, "trailing comma in object");
                break;
            }
            continue;
        }
        if (c == '}') {
            r->pos++;
            ok = true;
            break;
        }
        oi__json_error(r, c < 0 ? "unterminated object (expected ',' or '}')" : "expected ',' or '}' in object");
        break;
    }
    if (seen)
        shfree(seen);
    return ok;
}

static bool oi__json_value(oi__json_reader *r, oi__json *out) {
    oi__json_skip_space(r);
    int c = oi__json_peek(r);
    switch (c) {
    case -1: oi__json_error(r, "unexpected end of input (expected a value)"); return false;
    case 'n': out->type = OI__JSON_NULL; return oi__json_literal(r, "null");
    case 't': out->type = OI__JSON_BOOL; out->boolean = true; return oi__json_literal(r, "true");
    case 'f': out->type = OI__JSON_BOOL; out->boolean = false; return oi__json_literal(r, "false");
    case '"': out->type = OI__JSON_STRING; return oi__json_string_text(r, &out->text);
    case '[':
    case '{': {
        if (r->depth >= OI__JSON_MAX_DEPTH) {
            oi__json_error(r, "nesting too deep (more than 256 levels)");
            return false;
        }
        r->depth++;
        bool ok = c == '[' ? oi__json_array(r, out) : oi__json_object(r, out);
        r->depth--;
        return ok;
    }
    default:
        if (c == '-' || oi__json_is_digit(c))
            return oi__json_number(r, out);
        oi__json_error(r, "unexpected character (expected a value)");
        return false;
    }
}

oi__json *oi__json_parse(const char *text, size_t len) {
    if (!text) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi__json_parse: text is NULL");
        return NULL;
    }
    oi__json *root = (oi__json *)oi__calloc(1, sizeof *root);
    if (!root)
        return NULL;
    oi__json_reader r;
    memset(&r, 0, sizeof r);
    r.text = text;
    r.len = len;
    if (oi__json_value(&r, root)) {
        oi__json_skip_space(&r);
        if (r.pos < r.len)
            oi__json_error(&r, "unexpected text after the JSON value");
    }
    if (r.failed) {
        oi__json_free(root);
        return NULL;
    }
    return root;
}

static void oi__json_free_contents(oi__json *json) {
    for (ptrdiff_t i = 0; i < arrlen(json->items); i++)
        oi__json_free_contents(&json->items[i]);
    for (ptrdiff_t i = 0; i < arrlen(json->keys); i++)
        oi__free(json->keys[i]);
    arrfree(json->items);
    arrfree(json->keys);
    oi__free(json->text);
}

void oi__json_free(oi__json *json) {
    if (!json)
        return;
    oi__json_free_contents(json);
    oi__free(json);
}

const oi__json *oi__json_get(const oi__json *object, const char *key) {
    if (!object || object->type != OI__JSON_OBJECT || !key)
        return NULL;
    for (ptrdiff_t i = 0; i < arrlen(object->keys); i++)
        if (strcmp(object->keys[i], key) == 0)
            return &object->items[i];
    return NULL;
}

/* ================================================================== */
/* Graph -> JSON (schema: docs/graph-json.md)                          */
/* ================================================================== */

static const char *const oi__jg_mem_names[] = {"dynamic", "volatile", "constant", "persistent"};

static const char *const oi__jg_node_names[] = {
#define OI__JG_NODE_NAME(kind, event, dsl, json, trace, keys) json,
    OI__NODE_LIST(OI__JG_NODE_NAME)
#undef OI__JG_NODE_NAME
};

/* The shortest text that reads back as the same double, always with a
 * '.' or an exponent so it reads as a float; inf and nan as strings. */
static void oi__jg_put_double(oi__buf *b, double value) {
    if (isnan(value)) {
        oi__buf_puts(b, "\"nan\"");
        return;
    }
    if (isinf(value)) {
        oi__buf_puts(b, value > 0 ? "\"inf\"" : "\"-inf\"");
        return;
    }
    oi__buf_finite_double(b, value);
}

static void oi__jg_put_key(oi__buf *b, const char *key) {
    oi__buf_puts(b, ", ");
    oi__buf_json_string(b, key);
    oi__buf_puts(b, ": ");
}

static void oi__jg_put_string_field(oi__buf *b, const char *key, const char *value) {
    oi__jg_put_key(b, key);
    oi__buf_json_string(b, value);
}

static void oi__jg_put_strings(oi__buf *b, char **strings) {
    oi__buf_puts(b, "[");
    for (ptrdiff_t i = 0; i < arrlen(strings); i++) {
        if (i)
            oi__buf_puts(b, ", ");
        oi__buf_json_string(b, strings[i]);
    }
    oi__buf_puts(b, "]");
}

static void oi__jg_put_src(oi__buf *b, const oi__src *src) {
    oi__jg_put_key(b, "src");
    oi__buf_puts(b, "{\"file\": ");
    oi__buf_json_string(b, src->file ? src->file : "");
    oi__buf_printf(b, ", \"line\": %d, \"text\": ", src->line);
    oi__buf_json_string(b, src->text ? src->text : "");
    if (src->scope) {
        oi__buf_puts(b, ", \"scope\": ");
        oi__buf_json_string(b, src->scope);
    }
    oi__buf_puts(b, "}");
}

static void oi__jg_put_expr(oi__buf *b, const oi__expr *e) {
    if (e->ident)
        oi__buf_json_string(b, e->ident);
    else
        oi__buf_printf(b, "%lld", (long long)e->lit);
}

static void oi__jg_put_varref(oi__buf *b, const oi__varref *r) {
    oi__buf_puts(b, "{\"name\": ");
    oi__buf_json_string(b, r->name);
    if (r->literal)
        oi__buf_puts(b, ", \"literal\": true");
    if (arrlen(r->indices)) {
        oi__jg_put_key(b, "indices");
        oi__jg_put_strings(b, r->indices);
    }
    oi__buf_puts(b, "}");
}

static void oi__jg_put_access(oi__buf *b, const oi__cache_access *a) {
    oi__buf_puts(b, "{\"base\": ");
    oi__buf_json_string(b, a->base);
    oi__buf_printf(b, ", \"bracketed\": %s, \"indices\": [", a->bracketed ? "true" : "false");
    for (ptrdiff_t i = 0; i < arrlen(a->indices); i++) {
        const oi__cache_index *ix = &a->indices[i];
        oi__buf_puts(b, i ? ", " : "");
        if (!ix->is_slice) {
            oi__buf_puts(b, "{\"kind\": \"index\", \"value\": ");
            oi__jg_put_expr(b, &ix->single);
        } else {
            oi__buf_puts(b, "{\"kind\": \"slice\"");
            if (ix->has_start) {
                oi__buf_puts(b, ", \"start\": ");
                oi__jg_put_expr(b, &ix->start);
            }
            if (ix->has_end) {
                oi__buf_puts(b, ", \"end\": ");
                oi__jg_put_expr(b, &ix->end);
            }
        }
        oi__buf_puts(b, "}");
    }
    oi__buf_puts(b, "]}");
}

static const char *oi__jg_attr_type(oi__attr_kind kind) {
    switch (kind) {
    case OI__ATTR_FLOAT: return "float";
    case OI__ATTR_INT: return "int";
    case OI__ATTR_BOOL: return "bool";
    case OI__ATTR_STRING: return "string";
    case OI__ATTR_IDENT: return "ident";
    case OI__ATTR_INT_LIST: return "int_list";
    case OI__ATTR_DTYPE: return "dtype";
    case OI__ATTR_DTYPE_LIST: return "dtype_list";
    case OI__ATTR_SIZE: return "size";
    }
    return "?";
}

static void oi__jg_put_attr(oi__buf *b, const oi__attr *a) {
    oi__buf_puts(b, "{\"name\": ");
    oi__buf_json_string(b, a->name);
    oi__jg_put_string_field(b, "type", oi__jg_attr_type(a->kind));
    oi__jg_put_key(b, "value");
    switch (a->kind) {
    case OI__ATTR_FLOAT: oi__jg_put_double(b, a->f); break;
    case OI__ATTR_INT: oi__buf_printf(b, "%lld", (long long)a->i); break;
    case OI__ATTR_BOOL: oi__buf_puts(b, a->i ? "true" : "false"); break;
    case OI__ATTR_STRING:
    case OI__ATTR_IDENT:
    case OI__ATTR_SIZE: oi__buf_json_string(b, a->s); break;
    case OI__ATTR_DTYPE: oi__buf_json_string(b, oi_dtype_name(a->dtype)); break;
    case OI__ATTR_INT_LIST: /* numbers, and the size expressions as strings: [-1, "S", "H*Dh"] */
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < arrlen(a->ints); i++) {
            oi__buf_puts(b, i ? ", " : "");
            if (a->exprs && a->exprs[i])
                oi__buf_json_string(b, a->exprs[i]);
            else
                oi__buf_printf(b, "%lld", (long long)a->ints[i]);
        }
        oi__buf_puts(b, "]");
        break;
    case OI__ATTR_DTYPE_LIST:
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < arrlen(a->dtypes); i++) {
            oi__buf_puts(b, i ? ", " : "");
            oi__buf_json_string(b, oi_dtype_name(a->dtypes[i]));
        }
        oi__buf_puts(b, "]");
        break;
    }
    oi__buf_puts(b, "}");
}

static void oi__jg_put_var(oi__buf *b, const oi__var *v) {
    oi__buf_puts(b, "{\"name\": ");
    oi__buf_json_string(b, v->name);
    oi__jg_put_string_field(b, "kind", (unsigned)v->kind < 4 ? oi__jg_mem_names[v->kind] : "?");
    oi__jg_put_string_field(b, "dtype", oi_dtype_name(v->dtype));
    oi__jg_put_key(b, "dims");
    oi__jg_put_strings(b, v->dims);
    if (arrlen(v->table_indices)) {
        oi__jg_put_key(b, "table_indices");
        oi__jg_put_strings(b, v->table_indices);
    }
    if (v->init_kind != OI__INIT_NONE) {
        oi__jg_put_key(b, "init");
        if (v->init_kind == OI__INIT_FLOAT) {
            oi__buf_puts(b, "{\"type\": \"float\", \"value\": ");
            oi__jg_put_double(b, v->init_float);
        } else if (v->init_kind == OI__INIT_INT) {
            oi__buf_printf(b, "{\"type\": \"int\", \"value\": %lld", (long long)v->init_int);
        } else {
            oi__buf_printf(b, "{\"type\": \"bool\", \"value\": %s", v->init_int ? "true" : "false");
        }
        oi__buf_puts(b, "}");
    }
    if (v->ref_name)
        oi__jg_put_string_field(b, "ref", v->ref_name);
    if (v->pattern)
        oi__jg_put_string_field(b, "pattern", v->pattern);
    if (v->table)
        oi__buf_puts(b, ", \"table\": true");
    if (arrlen(v->auto_dim)) {
        oi__jg_put_key(b, "auto_dim");
        oi__jg_put_strings(b, v->auto_dim);
    }
    if (arrlen(v->fixed)) {
        oi__jg_put_key(b, "fixed");
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < arrlen(v->fixed); i++) {
            oi__buf_puts(b, i ? ", {\"index\": " : "{\"index\": ");
            oi__buf_json_string(b, v->fixed[i].index);
            oi__buf_printf(b, ", \"max\": %lld}", (long long)v->fixed[i].max);
        }
        oi__buf_puts(b, "]");
    }
    if (arrlen(v->extra_attrs)) {
        oi__jg_put_key(b, "extra_attrs");
        oi__jg_put_strings(b, v->extra_attrs);
    }
    oi__jg_put_src(b, &v->src);
    oi__buf_puts(b, "}");
}

static void oi__jg_put_nodes(oi__buf *b, const oi__node *nodes, int indent);

static void oi__jg_put_node_fields(oi__buf *b, const oi__node *n, int indent) {
    switch (n->kind) {
    case OI__NODE_ASSIGN:
        oi__jg_put_string_field(b, "name", n->name);
        if (n->typed_by_op) {
            oi__jg_put_key(b, "typed_by_op");
            oi__buf_puts(b, "true");
            if (!oi_dtype_name(n->dtype))
                break; /* typed at validation; a typed copy (oi_graph_to_json_typed) shows the type */
        }
        oi__jg_put_string_field(b, "dtype", oi_dtype_name(n->dtype));
        oi__jg_put_key(b, "dims");
        oi__jg_put_strings(b, n->dims);
        break;
    case OI__NODE_OP:
        oi__jg_put_string_field(b, "op", oi_op_name(n->op));
        oi__jg_put_key(b, "inputs");
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < arrlen(n->inputs); i++) {
            oi__buf_puts(b, i ? ", " : "");
            oi__jg_put_varref(b, &n->inputs[i]);
        }
        oi__buf_puts(b, "]");
        oi__jg_put_key(b, "attrs");
        oi__buf_puts(b, "[");
        for (ptrdiff_t i = 0; i < arrlen(n->attrs); i++) {
            oi__buf_puts(b, i ? ", " : "");
            oi__jg_put_attr(b, &n->attrs[i]);
        }
        oi__buf_puts(b, "]");
        if (arrlen(n->hints)) {
            oi__jg_put_key(b, "hints");
            oi__buf_puts(b, "[");
            for (ptrdiff_t i = 0; i < arrlen(n->hints); i++) {
                oi__buf_puts(b, i ? ", " : "");
                oi__jg_put_attr(b, &n->hints[i]);
            }
            oi__buf_puts(b, "]");
        }
        oi__jg_put_string_field(b, "output", n->output);
        break;
    case OI__NODE_BRANCH:
        if (n->cond)
            oi__jg_put_string_field(b, "cond", n->cond);
        oi__jg_put_string_field(b, "then", n->then_block);
        if (n->else_block)
            oi__jg_put_string_field(b, "else", n->else_block);
        break;
    case OI__NODE_DEP:
        oi__jg_put_string_field(b, "after", n->after);
        oi__jg_put_string_field(b, "before", n->before);
        break;
    case OI__NODE_CACHE_READ:
    case OI__NODE_CACHE_WRITE:
        oi__jg_put_key(b, "cache");
        oi__jg_put_access(b, &n->access);
        oi__jg_put_key(b, "var");
        oi__jg_put_varref(b, &n->var);
        break;
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
        oi__jg_put_key(b, "cache");
        oi__jg_put_access(b, &n->access);
        oi__buf_printf(b, ", \"amount\": %lld", (long long)n->amount);
        break;
    case OI__NODE_CACHE_RESET:
        oi__jg_put_key(b, "cache");
        oi__jg_put_access(b, &n->access);
        break;
    case OI__NODE_TRANSFER:
        oi__jg_put_key(b, "from");
        oi__jg_put_varref(b, &n->src_var);
        oi__jg_put_key(b, "to");
        oi__jg_put_varref(b, &n->dst_var);
        break;
    case OI__NODE_YIELD:
    case OI__NODE_AWAIT:
        oi__jg_put_key(b, "vars");
        oi__jg_put_strings(b, n->vars);
        break;
    case OI__NODE_LOOP:
        oi__jg_put_string_field(b, "name", n->loop_name);
        oi__jg_put_string_field(b, "var", n->loop_index);
        oi__jg_put_key(b, "start");
        oi__jg_put_expr(b, &n->loop_start);
        oi__jg_put_key(b, "end");
        oi__jg_put_expr(b, &n->loop_end);
        oi__jg_put_src(b, &n->src);
        oi__jg_put_key(b, "body");
        oi__jg_put_nodes(b, n->body, indent + 2);
        return;
    case OI__NODE_BARRIER:
    case OI__NODE_RETURN: break;
    }
    oi__jg_put_src(b, &n->src);
}

/* One node per line; a loop's body nests, indented. */
static void oi__jg_put_nodes(oi__buf *b, const oi__node *nodes, int indent) {
    if (arrlen(nodes) == 0) {
        oi__buf_puts(b, "[]");
        return;
    }
    oi__buf_puts(b, "[\n");
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        oi__buf_printf(b, "%*s{\"index\": %u, \"uuid\": \"%s\", \"kind\": \"%s\"", indent + 2, "", (unsigned)n->index, n->uuid,
                       oi__jg_node_names[n->kind]);
        oi__jg_put_node_fields(b, n, indent + 2);
        oi__buf_puts(b, i + 1 < arrlen(nodes) ? "},\n" : "}\n");
    }
    oi__buf_printf(b, "%*s]", indent, "");
}

char *oi_graph_to_json(const oi_graph *graph) {
    if (!graph) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_to_json: graph is NULL");
        return NULL;
    }
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_puts(&b, "{\n  \"format\": \"openinfer-graph\",\n  \"version\": 1,\n  \"name\": ");
    oi__buf_json_string(&b, graph->name);
    oi__buf_printf(&b, ",\n  \"next_index\": %u,\n  ", (unsigned)graph->next_index);
    if (graph->strict)
        oi__buf_puts(&b, "\"strict\": true,\n  ");
    oi__buf_puts(&b, "\"vars\": [");
    for (ptrdiff_t i = 0; i < arrlen(graph->vars); i++) {
        oi__buf_puts(&b, i ? ",\n    " : "\n    ");
        oi__jg_put_var(&b, &graph->vars[i]);
    }
    oi__buf_puts(&b, arrlen(graph->vars) ? "\n  ],\n  \"blocks\": [" : "],\n  \"blocks\": [");
    for (ptrdiff_t i = 0; i < arrlen(graph->blocks); i++) {
        const oi__block *block = &graph->blocks[i];
        oi__buf_puts(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        oi__buf_json_string(&b, block->name);
        oi__jg_put_src(&b, &block->src);
        oi__buf_puts(&b, ",\n     \"nodes\": ");
        oi__jg_put_nodes(&b, block->nodes, 5);
        oi__buf_puts(&b, "}");
    }
    oi__buf_puts(&b, arrlen(graph->blocks) ? "\n  ]\n}\n" : "]\n}\n");
    return oi__buf_take(&b);
}

/* ================================================================== */
/* JSON -> graph                                                       */
/* ================================================================== */

/* Errors name the place in the document as a path: "$.blocks[0].nodes[2].kind". */
typedef struct oi__jg_reader {
    char path[512];
    size_t path_len;
} oi__jg_reader;

static oi_status oi__jg_fail(oi__jg_reader *r, const char *fmt, ...) OI__PRINTF(2, 3);
static oi_status oi__jg_fail(oi__jg_reader *r, const char *fmt, ...) {
    char reason[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    return oi__fail(OI_ERROR_FORMAT, "graph JSON: %s: %s", r->path, reason);
}

static size_t oi__jg_push_key(oi__jg_reader *r, const char *key) {
    size_t old = r->path_len;
    int n = snprintf(r->path + old, sizeof r->path - old, ".%s", key);
    r->path_len = n > 0 && old + (size_t)n < sizeof r->path ? old + (size_t)n : old;
    r->path[r->path_len] = '\0';
    return old;
}

static size_t oi__jg_push_index(oi__jg_reader *r, ptrdiff_t index) {
    size_t old = r->path_len;
    int n = snprintf(r->path + old, sizeof r->path - old, "[%td]", index);
    r->path_len = n > 0 && old + (size_t)n < sizeof r->path ? old + (size_t)n : old;
    r->path[r->path_len] = '\0';
    return old;
}

static void oi__jg_pop(oi__jg_reader *r, size_t old) {
    r->path_len = old;
    r->path[old] = '\0';
}

static const char *oi__jg_type_name(oi__json_type t) {
    static const char *const names[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
    return names[t];
}

static oi_status oi__jg_expect_type(oi__jg_reader *r, const oi__json *j, oi__json_type want) {
    if (j->type != want)
        return oi__jg_fail(r, "expected %s, found %s", oi__jg_type_name(want), oi__jg_type_name(j->type));
    return OI_OK;
}

/* Refuses keys the schema does not know (a typo must not pass silently). */
static oi_status oi__jg_only_keys(oi__jg_reader *r, const oi__json *obj, const char *const *allowed) {
    for (ptrdiff_t i = 0; i < arrlen(obj->keys); i++) {
        bool known = false;
        for (const char *const *a = allowed; *a; a++)
            known = known || strcmp(*a, obj->keys[i]) == 0;
        if (!known) {
            size_t old = oi__jg_push_key(r, obj->keys[i]);
            oi_status status = oi__jg_fail(r, "unknown key");
            oi__jg_pop(r, old);
            return status;
        }
    }
    return OI_OK;
}

/* The member `key`, or NULL (+ error when required). A JSON null counts
 * as absent. */
static const oi__json *oi__jg_member(oi__jg_reader *r, const oi__json *obj, const char *key, bool required, oi_status *status) {
    const oi__json *j = oi__json_get(obj, key);
    if (j && j->type == OI__JSON_NULL)
        j = NULL;
    if (!j && required) {
        size_t old = oi__jg_push_key(r, key);
        *status = oi__jg_fail(r, "missing");
        oi__jg_pop(r, old);
    }
    return j;
}

static bool oi__jg_is_identifier(const char *s) {
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* "2", "-1", "0.5", "1e-6": a number as the DSL writes it. */
static bool oi__jg_is_number_text(const char *s) {
    if (!s || !*s)
        return false;
    char *end = NULL;
    (void)strtod(s, &end);
    return end && *end == '\0' && (s[0] == '-' ? s[1] >= '0' && s[1] <= '9' : s[0] >= '0' && s[0] <= '9');
}

/* "S", "S*H", "2*D": names and numbers joined by '*'. */
/* "E(n)" / "E(2)": a size per prefix-table entry. */
static bool oi__jg_is_entry_size(const char *s) {
    const char *open = s ? strchr(s, '(') : NULL;
    size_t len = s ? strlen(s) : 0;
    if (!open || open == s || len < 4 || s[len - 1] != ')')
        return false;
    for (const char *c = s; c < s + len - 1; c++)
        if (c != open && !((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return false;
    return open + 1 < s + len - 1;
}

static bool oi__jg_is_size_expr(const char *s) {
    if (oi__jg_is_entry_size(s))
        return true;
    if (!s || !*s)
        return false;
    for (bool atom = false; *s; s++) {
        bool word = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_';
        if (!word && (*s != '*' || !atom || !s[1]))
            return false;
        atom = word;
    }
    return true;
}

/* Reads a string member; `identifier` also requires [A-Za-z_][A-Za-z0-9_]*. */
static oi_status oi__jg_string(oi__jg_reader *r, const oi__json *obj, const char *key, bool required, bool identifier, char **out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, required, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_expect_type(r, j, OI__JSON_STRING);
    if (status == OI_OK && identifier && !oi__jg_is_identifier(j->text))
        status = oi__jg_fail(r, "\"%s\" is not an identifier", j->text);
    oi__jg_pop(r, old);
    if (status != OI_OK)
        return status;
    *out = oi__strdup(j->text);
    return *out ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

/* An integer literal (no fraction or exponent) within [lo, hi]. */
static oi_status oi__jg_int_value(oi__jg_reader *r, const oi__json *j, int64_t lo, int64_t hi, int64_t *out) {
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_NUMBER);
    if (status != OI_OK)
        return status;
    if (strpbrk(j->text, ".eE"))
        return oi__jg_fail(r, "expected an integer, found %s", j->text);
    errno = 0;
    long long value = strtoll(j->text, NULL, 10);
    if (errno == ERANGE || value < lo || value > hi)
        return oi__jg_fail(r, "%s is out of range", j->text);
    *out = (int64_t)value;
    return OI_OK;
}

static oi_status oi__jg_int(oi__jg_reader *r, const oi__json *obj, const char *key, int64_t lo, int64_t hi, int64_t *out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, true, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_int_value(r, j, lo, hi, out);
    oi__jg_pop(r, old);
    return status;
}

static oi_status oi__jg_bool(oi__jg_reader *r, const oi__json *obj, const char *key, bool *out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, false, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_expect_type(r, j, OI__JSON_BOOL);
    oi__jg_pop(r, old);
    if (status == OI_OK)
        *out = j->boolean;
    return status;
}

static oi_status oi__jg_double_value(oi__jg_reader *r, const oi__json *j, double *out) {
    if (j->type == OI__JSON_STRING) {
        if (strcmp(j->text, "inf") == 0 || strcmp(j->text, "-inf") == 0 || strcmp(j->text, "nan") == 0) {
            *out = j->text[0] == 'n' ? (double)NAN : j->text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
            return OI_OK;
        }
        return oi__jg_fail(r, "expected a number, \"inf\", \"-inf\" or \"nan\"");
    }
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_NUMBER);
    if (status == OI_OK && isinf(j->number))
        status = oi__jg_fail(r, "%s is out of range", j->text);
    if (status == OI_OK)
        *out = j->number;
    return status;
}

/* An array of strings (absent: empty). */
static oi_status oi__jg_strings(oi__jg_reader *r, const oi__json *obj, const char *key, bool required, bool identifiers, char ***out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, required, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_expect_type(r, j, OI__JSON_ARRAY);
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(j->items); i++) {
        size_t item_old = oi__jg_push_index(r, i);
        const oi__json *item = &j->items[i];
        status = oi__jg_expect_type(r, item, OI__JSON_STRING);
        if (status == OI_OK && identifiers && !oi__jg_is_identifier(item->text))
            status = oi__jg_fail(r, "\"%s\" is not an identifier", item->text);
        oi__jg_pop(r, item_old);
        char *copy = status == OI_OK ? oi__strdup(item->text) : NULL;
        if (status == OI_OK && !copy)
            status = OI_ERROR_OUT_OF_MEMORY;
        if (copy && !arrput(*out, copy)) {
            oi__free(copy);
            status = OI_ERROR_OUT_OF_MEMORY;
        }
    }
    oi__jg_pop(r, old);
    return status;
}

static oi_status oi__jg_dtype_value(oi__jg_reader *r, const oi__json *j, oi_dtype *out) {
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_STRING);
    if (status != OI_OK)
        return status;
    oi_dtype t = oi_dtype_from_name(j->text);
    if (t == OI_DTYPE_INVALID || !oi__dtype_is_tensor_type(t) || strcmp(oi_dtype_name(t), j->text) != 0)
        return oi__jg_fail(r, "unknown dtype \"%s\"", j->text);
    *out = t;
    return OI_OK;
}

static oi_status oi__jg_dtype(oi__jg_reader *r, const oi__json *obj, const char *key, oi_dtype *out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, true, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_dtype_value(r, j, out);
    oi__jg_pop(r, old);
    return status;
}

/* A dim is "16", "B" or a product "3*D". */
static bool oi__jg_dim_atom_ok(const char *s, size_t len) {
    if (len == 0)
        return false;
    bool digits = true;
    for (size_t i = 0; i < len; i++)
        digits = digits && s[i] >= '0' && s[i] <= '9';
    if (digits)
        return true;
    char name[128];
    if (len >= sizeof name)
        return false;
    memcpy(name, s, len);
    name[len] = '\0';
    return oi__jg_is_identifier(name);
}

static oi_status oi__jg_dims(oi__jg_reader *r, const oi__json *obj, char ***out) {
    oi_status status = oi__jg_strings(r, obj, "dims", true, false, out);
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(*out); i++) {
        const char *dim = (*out)[i], *star = strchr(dim, '*');
        bool ok = star ? oi__jg_dim_atom_ok(dim, (size_t)(star - dim)) && oi__jg_dim_atom_ok(star + 1, strlen(star + 1))
                       : strcmp(dim, "?") == 0 || oi__jg_is_entry_size(dim) || /* '?': set at run time; E(n): per entry */
                             oi__jg_dim_atom_ok(dim, strlen(dim));
        if (!ok) {
            size_t old = oi__jg_push_key(r, "dims");
            size_t old2 = oi__jg_push_index(r, i);
            status = oi__jg_fail(r, "malformed dim \"%s\"", dim);
            oi__jg_pop(r, old2);
            oi__jg_pop(r, old);
        }
    }
    return status;
}

/* "encoder/layer0": identifiers joined by '/'. */
static bool oi__jg_is_scope_path(const char *s) {
    for (;;) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        char part[256];
        if (len == 0 || len >= sizeof part)
            return false;
        memcpy(part, s, len);
        part[len] = '\0';
        if (!oi__jg_is_identifier(part))
            return false;
        if (!slash)
            return true;
        s = slash + 1;
    }
}

static oi_status oi__jg_src(oi__jg_reader *r, const oi__json *obj, oi__src *out) {
    static const char *const keys[] = {"file", "line", "text", "scope", NULL};
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, "src", true, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, "src");
    int64_t line = 0;
    status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "file", true, false, &out->file);
    if (status == OI_OK)
        status = oi__jg_int(r, j, "line", 0, INT32_MAX, &line);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "text", true, false, &out->text);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "scope", false, false, &out->scope);
    if (status == OI_OK && out->scope && !oi__jg_is_scope_path(out->scope))
        status = oi__jg_fail(r, "\"%s\" is not a scope path (names joined by '/')", out->scope);
    out->line = (int)line;
    oi__jg_pop(r, old);
    return status;
}

/* A number (a literal), an identifier string or an index expression ("step+1"). */
static oi_status oi__jg_expr_value(oi__jg_reader *r, const oi__json *j, oi__expr *out) {
    if (j->type == OI__JSON_STRING) {
        oi__expr probe = {j->text, 0};
        int64_t unused;
        if (!oi__jg_is_identifier(j->text) &&
            (!oi__expr_is_compound(&probe) || oi__expr_eval(j->text, NULL, NULL, NULL, &unused) != OI_OK))
            return oi__jg_fail(r, "\"%s\" is not an identifier or an index expression (step+1)", j->text);
        out->ident = oi__strdup(j->text);
        return out->ident ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    }
    if (j->type != OI__JSON_NUMBER)
        return oi__jg_fail(r, "expected an integer or an identifier string");
    return oi__jg_int_value(r, j, INT64_MIN, INT64_MAX, &out->lit);
}

static oi_status oi__jg_expr(oi__jg_reader *r, const oi__json *obj, const char *key, bool required, bool *present, oi__expr *out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, required, &status);
    if (present)
        *present = j != NULL;
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_expr_value(r, j, out);
    oi__jg_pop(r, old);
    return status;
}

static oi_status oi__jg_varref_value(oi__jg_reader *r, const oi__json *j, oi__varref *out) {
    static const char *const keys[] = {"name", "literal", "indices", NULL};
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, keys);
    if (status == OI_OK)
        status = oi__jg_bool(r, j, "literal", &out->literal);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "name", true, !out->literal, &out->name);
    if (status == OI_OK && out->literal && !oi__jg_is_number_text(out->name))
        status = oi__jg_fail(r, "literal \"%s\" is not a number", out->name);
    if (status == OI_OK && out->literal && oi__jg_member(r, j, "indices", false, &status))
        status = oi__jg_fail(r, "a literal takes no indices");
    if (status == OI_OK)
        status = oi__jg_strings(r, j, "indices", false, false, &out->indices);
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(out->indices); i++) {
        const char *ix = out->indices[i];
        if (!oi__jg_is_identifier(ix) && !oi__jg_dim_atom_ok(ix, strlen(ix)))
            status = oi__jg_fail(r, "index \"%s\" is neither a name nor a non-negative integer", ix);
    }
    return status;
}

static oi_status oi__jg_varref(oi__jg_reader *r, const oi__json *obj, const char *key, oi__varref *out) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, true, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_varref_value(r, j, out);
    oi__jg_pop(r, old);
    return status;
}

static oi_status oi__jg_cache_index(oi__jg_reader *r, const oi__json *j, oi__cache_index *ix) {
    static const char *const keys[] = {"kind", "value", "start", "end", NULL};
    char *kind = NULL;
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "kind", true, false, &kind);
    if (status == OI_OK && strcmp(kind, "index") == 0) {
        status = oi__jg_expr(r, j, "value", true, NULL, &ix->single);
        if (status == OI_OK && (oi__json_get(j, "start") || oi__json_get(j, "end")))
            status = oi__jg_fail(r, "an index has no start or end");
    } else if (status == OI_OK && strcmp(kind, "slice") == 0) {
        ix->is_slice = true;
        status = oi__json_get(j, "value") ? oi__jg_fail(r, "a slice has start and end, not value") : OI_OK;
        if (status == OI_OK)
            status = oi__jg_expr(r, j, "start", false, &ix->has_start, &ix->start);
        if (status == OI_OK)
            status = oi__jg_expr(r, j, "end", false, &ix->has_end, &ix->end);
    } else if (status == OI_OK) {
        size_t old = oi__jg_push_key(r, "kind");
        status = oi__jg_fail(r, "expected \"index\" or \"slice\"");
        oi__jg_pop(r, old);
    }
    oi__free(kind);
    return status;
}

static oi_status oi__jg_access(oi__jg_reader *r, const oi__json *obj, oi__cache_access *out) {
    static const char *const keys[] = {"base", "bracketed", "indices", NULL};
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, "cache", true, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, "cache");
    status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "base", true, true, &out->base);
    if (status == OI_OK)
        status = oi__jg_bool(r, j, "bracketed", &out->bracketed);
    const oi__json *indices = status == OI_OK ? oi__jg_member(r, j, "indices", true, &status) : NULL;
    if (indices) {
        size_t list_old = oi__jg_push_key(r, "indices");
        status = oi__jg_expect_type(r, indices, OI__JSON_ARRAY);
        if (status == OI_OK && arrlen(indices->items) && !out->bracketed)
            status = oi__jg_fail(r, "indices need \"bracketed\": true");
        for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(indices->items); i++) {
            oi__cache_index ix;
            memset(&ix, 0, sizeof ix);
            size_t item_old = oi__jg_push_index(r, i);
            status = oi__jg_cache_index(r, &indices->items[i], &ix);
            oi__jg_pop(r, item_old);
            if (!arrput(out->indices, ix)) {
                oi__free(ix.single.ident);
                oi__free(ix.start.ident);
                oi__free(ix.end.ident);
                status = OI_ERROR_OUT_OF_MEMORY;
            }
        }
        oi__jg_pop(r, list_old);
    }
    oi__jg_pop(r, old);
    return status;
}

/* One entry of an int list: a number, or a size expression as a string. */
static oi_status oi__jg_int_entry(oi__jg_reader *r, const oi__json *item, oi__attr *a) {
    int64_t value = 0;
    char *expr = NULL;
    oi_status status = OI_OK;
    if (item->type == OI__JSON_STRING) {
        if (!oi__jg_is_size_expr(item->text))
            return oi__jg_fail(r, "\"%s\" is not a size expression (S, S*H)", item->text);
        if (!(expr = oi__strdup(item->text)))
            return OI_ERROR_OUT_OF_MEMORY;
        if (!a->exprs) /* NULL for the literals before it */
            for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(a->ints); i++)
                if (!arrput(a->exprs, NULL))
                    status = OI_ERROR_OUT_OF_MEMORY;
    } else {
        status = oi__jg_int_value(r, item, INT64_MIN, INT64_MAX, &value);
    }
    if (status == OI_OK && !arrput(a->ints, value))
        status = OI_ERROR_OUT_OF_MEMORY;
    if (status == OI_OK && (a->exprs || expr) && !arrput(a->exprs, expr))
        status = OI_ERROR_OUT_OF_MEMORY;
    if (status != OI_OK)
        oi__free(expr);
    return status;
}

static oi_status oi__jg_attr_value(oi__jg_reader *r, const oi__json *v, oi__attr *a) {
    switch (a->kind) {
    case OI__ATTR_FLOAT: return oi__jg_double_value(r, v, &a->f);
    case OI__ATTR_INT: return oi__jg_int_value(r, v, INT64_MIN, INT64_MAX, &a->i);
    case OI__ATTR_BOOL: {
        oi_status status = oi__jg_expect_type(r, v, OI__JSON_BOOL);
        a->i = v->boolean;
        return status;
    }
    case OI__ATTR_STRING:
    case OI__ATTR_IDENT:
    case OI__ATTR_SIZE: {
        oi_status status = oi__jg_expect_type(r, v, OI__JSON_STRING);
        if (status == OI_OK && a->kind == OI__ATTR_IDENT && !oi__jg_is_identifier(v->text))
            status = oi__jg_fail(r, "\"%s\" is not an identifier", v->text);
        if (status == OI_OK && a->kind == OI__ATTR_SIZE && !oi__jg_is_size_expr(v->text))
            status = oi__jg_fail(r, "\"%s\" is not a size expression (S, S*H)", v->text);
        if (status == OI_OK && !(a->s = oi__strdup(v->text)))
            status = OI_ERROR_OUT_OF_MEMORY;
        return status;
    }
    case OI__ATTR_DTYPE: return oi__jg_dtype_value(r, v, &a->dtype);
    case OI__ATTR_INT_LIST:
    case OI__ATTR_DTYPE_LIST: {
        oi_status status = oi__jg_expect_type(r, v, OI__JSON_ARRAY);
        for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(v->items); i++) {
            size_t old = oi__jg_push_index(r, i);
            if (a->kind == OI__ATTR_INT_LIST) {
                status = oi__jg_int_entry(r, &v->items[i], a);
            } else {
                oi_dtype t = OI_DTYPE_INVALID;
                status = oi__jg_dtype_value(r, &v->items[i], &t);
                if (!arrput(a->dtypes, t))
                    status = OI_ERROR_OUT_OF_MEMORY;
            }
            oi__jg_pop(r, old);
        }
        return status;
    }
    }
    return OI_OK;
}

static oi_status oi__jg_attr(oi__jg_reader *r, const oi__json *j, oi__attr *a) {
    static const char *const keys[] = {"name", "type", "value", NULL};
    char *type = NULL;
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "name", true, true, &a->name);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "type", true, false, &type);
    if (status == OI_OK) {
        int kind = -1;
        for (int k = 0; k <= (int)OI__ATTR_SIZE; k++)
            if (strcmp(type, oi__jg_attr_type((oi__attr_kind)k)) == 0)
                kind = k;
        if (kind < 0) {
            size_t old = oi__jg_push_key(r, "type");
            status = oi__jg_fail(r, "unknown setting type \"%s\"", type);
            oi__jg_pop(r, old);
        }
        a->kind = (oi__attr_kind)(kind < 0 ? 0 : kind);
    }
    const oi__json *v = status == OI_OK ? oi__jg_member(r, j, "value", true, &status) : NULL;
    if (v) {
        size_t old = oi__jg_push_key(r, "value");
        status = oi__jg_attr_value(r, v, a);
        oi__jg_pop(r, old);
    }
    oi__free(type);
    return status;
}

/* Reads an array member element by element with `each`, which appends. */
typedef oi_status (*oi__jg_each_fn)(oi__jg_reader *r, const oi__json *item, void *ctx);

static oi_status oi__jg_array(oi__jg_reader *r, const oi__json *obj, const char *key, bool required, oi__jg_each_fn each, void *ctx) {
    oi_status status = OI_OK;
    const oi__json *j = oi__jg_member(r, obj, key, required, &status);
    if (!j)
        return status;
    size_t old = oi__jg_push_key(r, key);
    status = oi__jg_expect_type(r, j, OI__JSON_ARRAY);
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(j->items); i++) {
        size_t item_old = oi__jg_push_index(r, i);
        status = each(r, &j->items[i], ctx);
        oi__jg_pop(r, item_old);
    }
    oi__jg_pop(r, old);
    return status;
}

static oi_status oi__jg_each_input(oi__jg_reader *r, const oi__json *item, void *ctx) {
    oi__node *n = (oi__node *)ctx;
    oi__varref ref;
    memset(&ref, 0, sizeof ref);
    oi_status status = oi__jg_varref_value(r, item, &ref);
    if (!arrput(n->inputs, ref)) {
        oi__free(ref.name);
        for (ptrdiff_t i = 0; i < arrlen(ref.indices); i++)
            oi__free(ref.indices[i]);
        arrfree(ref.indices);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return status;
}

/* An attribute read into *list, kept even when partial, so it is freed. */
static oi_status oi__jg_push_attr(oi__jg_reader *r, const oi__json *item, oi__attr **list) {
    oi__attr a;
    memset(&a, 0, sizeof a);
    oi_status status = oi__jg_attr(r, item, &a);
    if (!arrput(*list, a)) {
        oi__attr_free(&a);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return status;
}

static oi_status oi__jg_each_hint(oi__jg_reader *r, const oi__json *item, void *ctx) {
    oi__node *n = (oi__node *)ctx;
    oi_status status = oi__jg_push_attr(r, item, &n->hints);
    const char *name = status == OI_OK ? n->hints[arrlen(n->hints) - 1].name : NULL;
    for (ptrdiff_t i = 0; status == OI_OK && i + 1 < arrlen(n->hints); i++)
        if (strcmp(n->hints[i].name, name) == 0)
            status = oi__jg_fail(r, "duplicate hint \"%s\"", name);
    return status;
}

static oi_status oi__jg_each_attr(oi__jg_reader *r, const oi__json *item, void *ctx) {
    return oi__jg_push_attr(r, item, &((oi__node *)ctx)->attrs);
}

/* The keys each node kind may carry (node_list.h's keys column). */
static const char *const *oi__jg_node_keys(oi__node_kind kind) {
    static const char *const keys[][10] = {
#define OI__JG_NODE_KEYS(k, event, dsl, json, trace, keys) {"index", "uuid", "kind", "src", OI__NODE_ARGS keys NULL},
        OI__NODE_LIST(OI__JG_NODE_KEYS)
#undef OI__JG_NODE_KEYS
    };
    return keys[kind];
}

static bool oi__jg_uuid_ok(const char *s) {
    if (strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F');
        if (dash ? s[i] != '-' : !hex)
            return false;
    }
    return true;
}

typedef struct oi__jg_nodes_ctx {
    oi__node **nodes;
    oi__jg_reader *r;
} oi__jg_nodes_ctx;

static oi_status oi__jg_each_node(oi__jg_reader *r, const oi__json *item, void *ctx);

static oi_status oi__jg_op_fields(oi__jg_reader *r, const oi__json *j, oi__node *n) {
    char *op_name = NULL;
    oi_status status = oi__jg_string(r, j, "op", true, false, &op_name);
    if (status == OI_OK) {
        n->op = oi_op_from_name(op_name);
        if (n->op == OI_OP_COUNT) {
            size_t old = oi__jg_push_key(r, "op");
            status = oi__jg_fail(r, "unknown op \"%s\"", op_name);
            oi__jg_pop(r, old);
        }
    }
    oi__free(op_name);
    if (status == OI_OK)
        status = oi__jg_array(r, j, "inputs", true, oi__jg_each_input, n);
    if (status == OI_OK)
        status = oi__jg_array(r, j, "attrs", true, oi__jg_each_attr, n);
    if (status == OI_OK)
        status = oi__jg_array(r, j, "hints", false, oi__jg_each_hint, n);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "output", true, true, &n->output);
    return status;
}

static oi_status oi__jg_loop_fields(oi__jg_reader *r, const oi__json *j, oi__node *n) {
    oi_status status = oi__jg_string(r, j, "name", true, true, &n->loop_name);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "var", true, true, &n->loop_index);
    if (status == OI_OK)
        status = oi__jg_expr(r, j, "start", true, NULL, &n->loop_start);
    if (status == OI_OK)
        status = oi__jg_expr(r, j, "end", true, NULL, &n->loop_end);
    if (status == OI_OK)
        status = oi__jg_array(r, j, "body", true, oi__jg_each_node, &n->body);
    return status;
}

static oi_status oi__jg_node_fields(oi__jg_reader *r, const oi__json *j, oi__node *n) {
    oi_status status = OI_OK;
    switch (n->kind) {
    case OI__NODE_ASSIGN:
        status = oi__jg_string(r, j, "name", true, true, &n->name);
        if (status == OI_OK)
            status = oi__jg_bool(r, j, "typed_by_op", &n->typed_by_op);
        if (status == OI_OK && n->typed_by_op && !oi__json_get(j, "dtype"))
            return OI_OK;
        if (status == OI_OK)
            status = oi__jg_dtype(r, j, "dtype", &n->dtype);
        return status == OI_OK ? oi__jg_dims(r, j, &n->dims) : status;
    case OI__NODE_OP: return oi__jg_op_fields(r, j, n);
    case OI__NODE_BRANCH:
        status = oi__jg_string(r, j, "cond", false, true, &n->cond);
        if (status == OI_OK)
            status = oi__jg_string(r, j, "then", true, true, &n->then_block);
        if (status == OI_OK)
            status = oi__jg_string(r, j, "else", false, true, &n->else_block);
        if (status == OI_OK && !n->cond != !n->else_block)
            status = oi__jg_fail(r, "a branch has both \"cond\" and \"else\", or neither");
        return status;
    case OI__NODE_DEP:
        status = oi__jg_string(r, j, "after", true, false, &n->after);
        return status == OI_OK ? oi__jg_string(r, j, "before", true, false, &n->before) : status;
    case OI__NODE_CACHE_READ:
    case OI__NODE_CACHE_WRITE:
        status = oi__jg_access(r, j, &n->access);
        return status == OI_OK ? oi__jg_varref(r, j, "var", &n->var) : status;
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
        status = oi__jg_access(r, j, &n->access);
        return status == OI_OK ? oi__jg_int(r, j, "amount", 0, INT64_MAX, &n->amount) : status;
    case OI__NODE_CACHE_RESET: return oi__jg_access(r, j, &n->access);
    case OI__NODE_TRANSFER:
        status = oi__jg_varref(r, j, "from", &n->src_var);
        return status == OI_OK ? oi__jg_varref(r, j, "to", &n->dst_var) : status;
    case OI__NODE_YIELD:
    case OI__NODE_AWAIT: return oi__jg_strings(r, j, "vars", true, true, &n->vars);
    case OI__NODE_LOOP: return oi__jg_loop_fields(r, j, n);
    case OI__NODE_BARRIER:
    case OI__NODE_RETURN: return OI_OK;
    }
    return OI_OK;
}

static oi_status oi__jg_node(oi__jg_reader *r, const oi__json *j, oi__node *n) {
    char *kind = NULL, *uuid = NULL;
    int64_t index = 0;
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "kind", true, false, &kind);
    if (status == OI_OK) {
        int found = -1;
        for (int k = 0; k < OI__NODE_COUNT; k++)
            if (strcmp(kind, oi__jg_node_names[k]) == 0)
                found = k;
        if (found < 0) {
            size_t old = oi__jg_push_key(r, "kind");
            status = oi__jg_fail(r, "unknown node kind \"%s\"", kind);
            oi__jg_pop(r, old);
        }
        n->kind = (oi__node_kind)(found < 0 ? 0 : found);
    }
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, oi__jg_node_keys(n->kind));
    if (status == OI_OK)
        status = oi__jg_int(r, j, "index", 0, UINT32_MAX - 1, &index);
    n->index = (uint32_t)index;
    if (status == OI_OK)
        status = oi__jg_string(r, j, "uuid", true, false, &uuid);
    if (status == OI_OK && !oi__jg_uuid_ok(uuid)) {
        size_t old = oi__jg_push_key(r, "uuid");
        status = oi__jg_fail(r, "\"%s\" is not a UUID", uuid);
        oi__jg_pop(r, old);
    }
    if (status == OI_OK)
        memcpy(n->uuid, uuid, 37);
    if (status == OI_OK)
        status = oi__jg_src(r, j, &n->src);
    if (status == OI_OK)
        status = oi__jg_node_fields(r, j, n);
    oi__free(kind);
    oi__free(uuid);
    return status;
}

static oi_status oi__jg_each_node(oi__jg_reader *r, const oi__json *item, void *ctx) {
    oi__node **nodes = (oi__node **)ctx;
    oi__node n;
    memset(&n, 0, sizeof n);
    oi_status status = oi__jg_node(r, item, &n);
    if (!arrput(*nodes, n)) { /* kept even when partial, so it is freed */
        oi__node_free(&n);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return status;
}

static oi_status oi__jg_mem_kind(oi__jg_reader *r, const oi__json *j, oi__mem_kind *out) {
    char *kind = NULL;
    oi_status status = oi__jg_string(r, j, "kind", true, false, &kind);
    if (status != OI_OK)
        return status;
    int found = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(kind, oi__jg_mem_names[k]) == 0)
            found = k;
    if (found < 0) {
        size_t old = oi__jg_push_key(r, "kind");
        status = oi__jg_fail(r, "expected \"dynamic\", \"volatile\", \"constant\" or \"persistent\"");
        oi__jg_pop(r, old);
    }
    *out = (oi__mem_kind)(found < 0 ? 0 : found);
    oi__free(kind);
    return status;
}

static oi_status oi__jg_init(oi__jg_reader *r, const oi__json *j, oi__var *v) {
    static const char *const keys[] = {"type", "value", NULL};
    oi_status status = OI_OK;
    const oi__json *init = oi__jg_member(r, j, "init", false, &status);
    if (!init)
        return status;
    size_t old = oi__jg_push_key(r, "init");
    char *type = NULL;
    status = oi__jg_expect_type(r, init, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, init, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, init, "type", true, false, &type);
    const oi__json *value = status == OI_OK ? oi__jg_member(r, init, "value", true, &status) : NULL;
    if (value) {
        size_t value_old = oi__jg_push_key(r, "value");
        if (strcmp(type, "float") == 0) {
            v->init_kind = OI__INIT_FLOAT;
            status = oi__jg_double_value(r, value, &v->init_float);
        } else if (strcmp(type, "int") == 0) {
            v->init_kind = OI__INIT_INT;
            status = oi__jg_int_value(r, value, INT64_MIN, INT64_MAX, &v->init_int);
        } else if (strcmp(type, "bool") == 0) {
            v->init_kind = OI__INIT_BOOL;
            status = oi__jg_expect_type(r, value, OI__JSON_BOOL);
            v->init_int = value->boolean;
        } else {
            status = oi__jg_fail(r, "init type must be \"float\", \"int\" or \"bool\"");
        }
        oi__jg_pop(r, value_old);
    }
    oi__free(type);
    oi__jg_pop(r, old);
    return status;
}

static oi_status oi__jg_each_fixed(oi__jg_reader *r, const oi__json *item, void *ctx) {
    static const char *const keys[] = {"index", "max", NULL};
    oi__var *v = (oi__var *)ctx;
    oi__fixed f;
    memset(&f, 0, sizeof f);
    oi_status status = oi__jg_expect_type(r, item, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, item, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, item, "index", true, true, &f.index);
    if (status == OI_OK)
        status = oi__jg_int(r, item, "max", 1, INT64_MAX, &f.max);
    if (!arrput(v->fixed, f)) {
        oi__free(f.index);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return status;
}

static oi_status oi__jg_var(oi__jg_reader *r, const oi__json *j, oi__var *v) {
    static const char *const keys[] = {"name", "kind", "dtype", "dims", "table_indices", "init", "ref",
                                       "pattern", "table", "auto_dim", "fixed", "extra_attrs", "src", NULL};
    oi_status status = oi__jg_expect_type(r, j, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, j, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "name", true, true, &v->name);
    if (status == OI_OK)
        status = oi__jg_mem_kind(r, j, &v->kind);
    if (status == OI_OK)
        status = oi__jg_dtype(r, j, "dtype", &v->dtype);
    if (status == OI_OK)
        status = oi__jg_dims(r, j, &v->dims);
    if (status == OI_OK)
        status = oi__jg_strings(r, j, "table_indices", false, true, &v->table_indices);
    if (status == OI_OK)
        status = oi__jg_init(r, j, v);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "ref", false, false, &v->ref_name);
    if (status == OI_OK)
        status = oi__jg_string(r, j, "pattern", false, false, &v->pattern);
    if (status == OI_OK)
        status = oi__jg_bool(r, j, "table", &v->table);
    if (status == OI_OK)
        status = oi__jg_strings(r, j, "auto_dim", false, true, &v->auto_dim);
    if (status == OI_OK)
        status = oi__jg_array(r, j, "fixed", false, oi__jg_each_fixed, v);
    if (status == OI_OK)
        status = oi__jg_strings(r, j, "extra_attrs", false, false, &v->extra_attrs);
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(v->extra_attrs); i++)
        if (v->extra_attrs[i][0] != '@' || !v->extra_attrs[i][1])
            status = oi__jg_fail(r, "extra_attrs: \"%s\" is not an attribute (@name...)", v->extra_attrs[i]);
    if (status == OI_OK)
        status = oi__jg_src(r, j, &v->src);
    return status;
}

static oi_status oi__jg_each_var(oi__jg_reader *r, const oi__json *item, void *ctx) {
    oi_graph *g = (oi_graph *)ctx;
    oi__var v;
    memset(&v, 0, sizeof v);
    oi_status status = oi__jg_var(r, item, &v);
    if (!arrput(g->vars, v)) {
        oi__var_free(&v);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return status;
}

static oi_status oi__jg_each_block(oi__jg_reader *r, const oi__json *item, void *ctx) {
    static const char *const keys[] = {"name", "src", "nodes", NULL};
    oi_graph *g = (oi_graph *)ctx;
    oi__block block;
    memset(&block, 0, sizeof block);
    oi_status status = oi__jg_expect_type(r, item, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, item, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, item, "name", true, true, &block.name);
    if (status == OI_OK)
        status = oi__jg_src(r, item, &block.src);
    if (status == OI_OK)
        status = oi__jg_array(r, item, "nodes", true, oi__jg_each_node, &block.nodes);
    oi_status added = oi__graph_add_block(g, &block);
    if (added != OI_OK) {
        oi__block_free(&block);
        return added;
    }
    return status;
}

/* Node indices are unique and below next_index. */
static oi_status oi__jg_collect_indices(const oi_graph *g, const oi__node *nodes, uint32_t **seen, int depth) {
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        if (n->index >= g->next_index)
            return oi__fail_at(OI_ERROR_FORMAT, &n->src, "node index %u is not below next_index %u", (unsigned)n->index,
                               (unsigned)g->next_index);
        if (!arrput(*seen, n->index))
            return OI_ERROR_OUT_OF_MEMORY;
        if (n->kind == OI__NODE_LOOP && depth < OI__MAX_LOOP_DEPTH) {
            oi_status status = oi__jg_collect_indices(g, n->body, seen, depth + 1);
            if (status != OI_OK)
                return status;
        }
    }
    return OI_OK;
}

static int oi__jg_compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static oi_status oi__jg_check_indices(const oi_graph *g) {
    uint32_t *seen = NULL;
    oi_status status = OI_OK;
    for (ptrdiff_t i = 0; status == OI_OK && i < arrlen(g->blocks); i++)
        status = oi__jg_collect_indices(g, g->blocks[i].nodes, &seen, 0);
    if (status == OI_OK && arrlen(seen) > 1) {
        qsort(seen, (size_t)arrlen(seen), sizeof *seen, oi__jg_compare_u32);
        for (ptrdiff_t i = 1; status == OI_OK && i < arrlen(seen); i++)
            if (seen[i] == seen[i - 1])
                status = oi__fail(OI_ERROR_FORMAT, "graph JSON: node index %u is used twice", (unsigned)seen[i]);
    }
    arrfree(seen);
    return status;
}

static oi_status oi__jg_graph(oi__jg_reader *r, const oi__json *root, oi_graph *g) {
    static const char *const keys[] = {"format", "version", "name", "next_index", "strict", "vars", "blocks", NULL};
    char *format = NULL;
    int64_t version = 0, next_index = 0;
    oi_status status = oi__jg_expect_type(r, root, OI__JSON_OBJECT);
    if (status == OI_OK)
        status = oi__jg_only_keys(r, root, keys);
    if (status == OI_OK)
        status = oi__jg_string(r, root, "format", true, false, &format);
    if (status == OI_OK && strcmp(format, "openinfer-graph") != 0)
        status = oi__jg_fail(r, "format must be \"openinfer-graph\"");
    oi__free(format);
    if (status == OI_OK)
        status = oi__jg_int(r, root, "version", 1, 1, &version);
    if (status == OI_OK) {
        oi__free(g->name);
        g->name = NULL;
        status = oi__jg_string(r, root, "name", true, false, &g->name);
    }
    if (status == OI_OK)
        status = oi__jg_int(r, root, "next_index", 0, UINT32_MAX, &next_index);
    g->next_index = (uint32_t)next_index;
    if (status == OI_OK)
        status = oi__jg_bool(r, root, "strict", &g->strict);
    if (status == OI_OK)
        status = oi__jg_array(r, root, "vars", true, oi__jg_each_var, g);
    if (status == OI_OK)
        status = oi__jg_array(r, root, "blocks", true, oi__jg_each_block, g);
    return status;
}

oi_graph *oi_graph_from_json(const char *json) {
    if (!json) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_graph_from_json: json is NULL");
        return NULL;
    }
    oi__json *root = oi__json_parse(json, strlen(json));
    if (!root) {
        oi__error_prefix("graph JSON");
        return NULL;
    }
    oi_graph *g = oi__graph_new("");
    oi__jg_reader r;
    memset(&r, 0, sizeof r);
    r.path[0] = '$';
    r.path_len = 1;
    oi_status status = g ? oi__jg_graph(&r, root, g) : OI_ERROR_OUT_OF_MEMORY;
    oi__json_free(root);
    if (status == OI_OK)
        status = oi__jg_check_indices(g);
    if (status == OI_OK)
        status = oi__graph_check(g);
    if (status == OI_OK)
        status = oi__graph_check_extras(g);
    if (status != OI_OK) {
        oi_graph_free(g);
        return NULL;
    }
    return g;
}
